// The manifest's family files, compiled into the library at build time (cmake/EmbedFiles.cmake).
#pragma once

#include <span>

namespace tileops::detail {

struct EmbeddedFile {
  const char* name;     // file name, e.g. "norm.yaml"
  const char* content;  // the file's text
};

std::span<const EmbeddedFile> embedded_manifest_files();

}  // namespace tileops::detail
