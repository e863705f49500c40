// EnvGuard: sets an environment variable for the lifetime of the guard, then restores it. The
// tool sets TILEOPS_LOG around the call it explains; the op framework tests use it as well.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace tileops::cli {

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
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

}  // namespace tileops::cli
