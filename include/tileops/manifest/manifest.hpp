// Manifest: the op entries of one or more family files. The library's own manifest is embedded at
// build time and loaded once (Manifest::builtin()); out-of-tree ops load their files into a
// Manifest of their own, so toy and test ops never leak into the library's registry.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/manifest/model.hpp"

namespace tileops::manifest {

class Manifest {
 public:
  Manifest() = default;

  // The embedded family files, parsed strictly on first use (thread-safe, once per process).
  static const Manifest& builtin();

  // Strict loading: every problem is collected; if any, throws ManifestError whose message lists
  // them one per line as "<file>:<line>:<column>: <entry>: <field>: <what>".
  static Manifest load_file(const std::string& path);
  static Manifest load_string(std::string_view file_name, std::string_view text);

  // Strict loading that reports instead of throwing (the validator's entry point).
  static Manifest parse(std::string_view file_name, std::string_view text,
                        std::vector<std::string>& diagnostics);

  // Adds the other manifest's entries; an op name present in both is a ManifestError.
  void merge(const Manifest& other);
  // merge() reporting into diagnostics instead of throwing.
  void merge(const Manifest& other, std::vector<std::string>& diagnostics);

  const Entry* find(std::string_view op) const noexcept;
  // Throws ManifestError("<op>: no manifest entry") when absent.
  const Entry& at(std::string_view op) const;
  const std::vector<std::shared_ptr<const Entry>>& entries() const noexcept { return entries_; }

 private:
  std::vector<std::shared_ptr<const Entry>> entries_;
};

}  // namespace tileops::manifest
