// The op registry: op classes by name, for make_op and the CLI.
//
// Note [Explicit registration]
// Nothing registers itself from a static initialiser: a static library's object file that nothing
// references is dropped by the linker, and its initialiser with it, so an op would silently be
// missing. Each family registers its classes through an explicit function (generated from the
// manifest), register_builtin_ops() calls them all, once, and each op class builds its OpClass in
// a function-local static on first use.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tileops/core/value.hpp"
#include "tileops/op/op.hpp"

namespace tileops {

using OpFactory = std::function<std::shared_ptr<Op>(const ParamMap&, const std::optional<Target>&)>;

struct RegisteredOp {
  const OpClass* cls;
  OpFactory make;
};

// Adds an op class; a second class under one name is a BackendError, stages that are not the
// class's manifest composition a ContractError (OpClass::check_composition).
void register_op_class(const OpClass& cls, OpFactory make);

template <class T>
void register_op_class() {
  register_op_class(T::op_class(),
                    [](const ParamMap& p, const std::optional<Target>& t) -> std::shared_ptr<Op> {
                      return std::make_shared<T>(p, t);
                    });
}

// Registers the library's own op families (idempotent, thread-safe).
void register_builtin_ops();

// The registered class named `name`, or nullptr.
const RegisteredOp* find_op_class(std::string_view name);
std::vector<RegisteredOp> registered_op_classes();

// Constructs the op `name` with `params` (registering the builtin ops first). Throws
// CheckError("<name>: no op class of this name is registered") for an unknown name.
std::shared_ptr<Op> make_op(std::string_view name, const ParamMap& params = {},
                            const std::optional<Target>& target = std::nullopt);

}  // namespace tileops
