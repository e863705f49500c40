// Target: the execution policy of an op instance (docs/seeds.md, construction-and-calls §4). A
// target is a backend's name for one set of kernels that serve whole ops; BUILTIN names the in-tree
// kernels and is never a registered name. "No target" (std::nullopt) lets the process default or
// device detection decide at the first call.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tileops {

class Target {
 public:
  static Target builtin() { return Target(std::string(), true); }
  static Target named(std::string name) { return Target(std::move(name), false); }

  bool is_builtin() const noexcept { return builtin_; }
  // The backend's name; empty for BUILTIN.
  const std::string& name() const noexcept { return name_; }
  std::string str() const { return builtin_ ? "BUILTIN" : name_; }

  friend bool operator==(const Target&, const Target&) = default;

 private:
  Target(std::string name, bool builtin) : name_(std::move(name)), builtin_(builtin) {}
  std::string name_;
  bool builtin_;
};

inline const Target kBuiltin = Target::builtin();

}  // namespace tileops
