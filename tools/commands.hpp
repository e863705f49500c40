// The `tileops` subcommands; each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace tileops::cli {

// Validates the embedded manifest, or the given family files; prints every diagnostic.
int run_validate(const std::vector<std::string>& files);
// Lists the ops of the manifest: name, family, status.
int run_list();

}  // namespace tileops::cli
