#include "tileops/op/op_class.hpp"

#include <fmt/format.h>

#include "tileops/core/error.hpp"
#include "tileops/op/implementation_table.hpp"

namespace tileops {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return "[" + s + "]";
}

}  // namespace

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

// Note [Stages and the composition]: a composite's stages are declared twice, as the manifest
// entry's `composition` (what tools, docs and the compile boundary read) and as the C++ class's
// stage<Sub>("name") calls (what delegate_for holds). They must be one list: the same stage names
// in the same order, each holding the op class the entry names, and a class with stages needs a
// composition as much as a composition needs stages. Registration checks the library's classes
// once; construction checks every class, so an op class bound to a manifest of its own (the
// tests' toy classes) is held to its entry too.
void OpClass::check_composition() const {
  const manifest::Entry& e = entry();
  std::vector<std::string> declared;
  for (const StageDecl& s : stages_) declared.push_back(s.name);
  if (!e.composition) {
    if (!stages_.empty())
      throw ContractError(fmt::format(
          "{}: the class declares stages {} but its manifest entry {} has no composition", name_,
          quoted_list(declared), e.name));
    return;
  }
  const std::vector<manifest::Stage>& composed = *e.composition;
  std::vector<std::string> listed;
  for (const manifest::Stage& s : composed) listed.push_back(s.name);
  if (declared != listed)
    throw ContractError(fmt::format(
        "{}: the class declares stages {}, but composition.stages of its manifest entry {} are {} "
        "(same names, same order)",
        name_, quoted_list(declared), e.name, quoted_list(listed)));
  for (std::size_t i = 0; i < composed.size(); ++i)
    if (stages_[i].op_name != composed[i].op)
      throw ContractError(fmt::format(
          "{}: stage '{}' holds {} ops, but composition.stages[{}] of its manifest entry {} "
          "names {}",
          name_, stages_[i].name, stages_[i].op_name, i, e.name, composed[i].op));
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
