#include <fmt/format.h>

#include "commands.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/manifest/validator.hpp"

namespace tileops::cli {

int run_validate(const std::vector<std::string>& files) {
  std::vector<std::string> diags =
      files.empty() ? manifest::validate_builtin() : manifest::validate_files(files);
  for (const auto& d : diags) fmt::print(stderr, "{}\n", d);
  if (!diags.empty()) {
    fmt::print(stderr, "manifest invalid: {} problem(s)\n", diags.size());
    return 1;
  }
  std::size_t ops = files.empty() ? manifest::Manifest::builtin().entries().size() : 0;
  if (files.empty())
    fmt::print("manifest valid: {} ops\n", ops);
  else
    fmt::print("manifest valid: {} file(s)\n", files.size());
  return 0;
}

}  // namespace tileops::cli
