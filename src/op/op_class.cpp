#include "tileops/op/op_class.hpp"

#include "tileops/op/implementation_table.hpp"

namespace tileops {

OpClass::OpClass(std::string name, const manifest::Manifest* manifest)
    : name_(std::move(name)), manifest_(manifest) {}

const manifest::Manifest& OpClass::manifest() const {
  return manifest_ ? *manifest_ : manifest::Manifest::builtin();
}

const manifest::Entry& OpClass::entry() const { return manifest().at(name_); }

const std::shared_ptr<const manifest::SignaturePlan>& OpClass::plan() const {
  std::call_once(plan_cache_->once, [this] {
    for (const auto& e : manifest().entries())
      if (e->name == name_) plan_cache_->plan = manifest::SignaturePlan::build(e);
    if (!plan_cache_->plan) manifest().at(name_);  // throws ManifestError naming the op
  });
  return plan_cache_->plan;
}

}  // namespace tileops

namespace tileops {

OpClass op_class_from_table(std::string_view op, FamilyTable table,
                            const manifest::Manifest* manifest) {
  ImplementationTable rows(op);
  table(rows);
  OpClass cls{std::string(op), manifest};
  for (const InterfaceDecl& i : rows.interfaces()) cls.interface_decl(i);
  for (const KernelType& t : rows.kernel_types()) cls.kernel_type(t);
  return cls;
}

}  // namespace tileops
