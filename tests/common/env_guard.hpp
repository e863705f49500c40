// EnvGuard: sets an environment variable for the lifetime of the guard, then restores it (the op
// framework tests set TILEOPS_FORCE and TILEOPS_LOG with it).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace tileops::test_common {

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  EnvGuard(const char* name, const std::string& value) : EnvGuard(name, value.c_str()) {}
  ~EnvGuard() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace tileops::test_common
