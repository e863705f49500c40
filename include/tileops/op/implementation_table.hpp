// ImplementationTable: how a family lists its implementations (docs/framework.md). Each family has
// one function, `kernels::<family>_implementations(ImplementationTable&)` in
// kernels/<family>/impls.cpp, that adds one row per implementation:
//
//   table.add<RMSNormFwdOp, cpu::RMSNormRowwiseKernel>("rms_norm_rowwise_cpu");
//
// The op is named by its class and the interface by the implementation's `Interface`, whose
// `kName` names it; the implementation's class name is read from its type. Precedence is declared
// by each implementation (general, preferred_over), never by the order of the rows. An op class
// built from the table (op_class_from_table) takes the rows of its own op.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/op/kernel.hpp"
#include "tileops/op/op_class.hpp"

namespace tileops {

// A kernel interface names itself for messages, logs and `tileops explain`.
template <class I>
concept NamedInterface = std::derived_from<I, KernelInterface> && requires {
  { I::kName } -> std::convertible_to<std::string_view>;
};

class ImplementationTable {
 public:
  // A table that keeps the rows of `op` and passes over the others.
  explicit ImplementationTable(std::string_view op) : op_(op) {}

  template <class OpClassT, KernelImplementation Impl>
  requires NamedInterface<typename Impl::Interface> ImplementationTable& add(std::string key) {
    if (OpClassT::kName != op_) return *this;
    using I = typename Impl::Interface;
    const bool known =
        std::any_of(interfaces_.begin(), interfaces_.end(),
                    [](const InterfaceDecl& d) { return d.interface_type == typeid(I); });
    if (!known) interfaces_.push_back(InterfaceDecl::of<I>(std::string(I::kName)));
    kernel_types_.push_back(KernelType::of<Impl>(std::move(key)));
    return *this;
  }

  const std::vector<InterfaceDecl>& interfaces() const noexcept { return interfaces_; }
  const std::vector<KernelType>& kernel_types() const noexcept { return kernel_types_; }

 private:
  std::string_view op_;
  std::vector<InterfaceDecl> interfaces_;
  std::vector<KernelType> kernel_types_;
};

using FamilyTable = void (*)(ImplementationTable&);

// The OpClass of `op` (bound to `manifest`, the builtin one when null) with the interfaces and
// implementations `table` lists for it.
OpClass op_class_from_table(std::string_view op, FamilyTable table,
                            const manifest::Manifest* manifest = nullptr);

}  // namespace tileops
