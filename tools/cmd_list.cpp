#include <fmt/format.h>

#include "commands.hpp"
#include "tileops/manifest/manifest.hpp"

namespace tileops::cli {

int run_list() {
  const auto& m = manifest::Manifest::builtin();
  std::size_t width = 2;
  for (const auto& e : m.entries()) width = std::max(width, e->name.size());
  fmt::print("{:<{}}  {:<12}  {}\n", "op", width, "family", "status");
  for (const auto& e : m.entries()) fmt::print("{:<{}}  {:<12}  {}\n", e->name, width, e->family, e->status);
  return 0;
}

}  // namespace tileops::cli
