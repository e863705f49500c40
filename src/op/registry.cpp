#include "tileops/op/registry.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "ops/registration.hpp"

namespace tileops {
namespace {

struct OpRegistry {
  std::mutex mutex;
  std::map<std::string, RegisteredOp, std::less<>> classes;
};

OpRegistry& op_registry() {
  static OpRegistry r;
  return r;
}

}  // namespace

void register_op_class(const OpClass& cls, OpFactory make) {
  cls.check_composition();
  OpRegistry& r = op_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.classes.emplace(cls.name(), RegisteredOp{&cls, std::move(make)}).second)
    throw BackendError(fmt::format("an op class named {} is already registered", cls.name()));
}

void register_builtin_ops() {
  static std::once_flag once;
  std::call_once(once, [] { ops::register_generated_op_classes(); });
}

const RegisteredOp* find_op_class(std::string_view name) {
  OpRegistry& r = op_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.classes.find(name);
  return it == r.classes.end() ? nullptr : &it->second;
}

std::vector<RegisteredOp> registered_op_classes() {
  OpRegistry& r = op_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<RegisteredOp> out;
  for (const auto& [name, reg] : r.classes) out.push_back(reg);
  return out;
}

std::shared_ptr<Op> make_op(std::string_view name, const ParamMap& params,
                            const std::optional<Target>& target) {
  register_builtin_ops();
  const RegisteredOp* reg = find_op_class(name);
  if (!reg) throw CheckError(fmt::format("{}: no op class of this name is registered", name));
  return reg->make(params, target);
}

}  // namespace tileops
