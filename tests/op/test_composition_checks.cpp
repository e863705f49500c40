// A composite class's C++ stages against its manifest entry's composition (Note [Stages and the
// composition] in src/op/op_class.cpp), at registration and at construction.
#include <gtest/gtest.h>

#include "tileops/op/registry.hpp"
#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

// A sub-op class the toy composition does not name.
class OtherSubOp : public ToyOp {
 public:
  static const OpClass& op_class() {
    static const OpClass& cls = with_selection_table(toy_class("ToyOtherSubFwdOp"));
    return cls;
  }
  OtherSubOp(ParamMap params, std::optional<Target> target)
      : ToyOp(op_class(), std::move(params), std::move(target)) {}
};

std::string construction_error(const OpClass& cls) {
  return error_of<ContractError>([&] { ToyOp op(cls); });
}

TEST(CompositionCheck, StagesThatMatchTheCompositionConstructAndRegister) {
  const OpClass& cls = composite_class(unique_op("Matching"));
  EXPECT_NO_THROW(ToyOp op(cls));
  register_op_class(cls, [&cls](const ParamMap& p, const std::optional<Target>& t) {
    return std::make_shared<ToyOp>(cls, p, t);
  });
  EXPECT_NE(find_op_class(cls.name()), nullptr);
}

TEST(CompositionCheck, StagesWithoutACompositionInTheEntry) {
  const std::string name = unique_op("NoComposition");
  EXPECT_EQ(construction_error(toy_class(name).stage<ToySubOp>("first")),
            name + ": the class declares stages ['first'] but its manifest entry " + name +
                " has no composition");
}

TEST(CompositionCheck, ACompositionWithoutStagesInTheClass) {
  const std::string name = unique_op("NoStages");
  EXPECT_EQ(construction_error(toy_class(name, kCompositeEntry)),
            name + ": the class declares stages [], but composition.stages of its manifest entry " +
                name + " are ['first', 'second'] (same names, same order)");
}

TEST(CompositionCheck, StagesInAnotherOrderOrMissingOne) {
  const std::string swapped = unique_op("Swapped");
  EXPECT_EQ(
      construction_error(
          toy_class(swapped, kCompositeEntry).stage<ToySubOp>("second").stage<ToySubOp>("first")),
      swapped +
          ": the class declares stages ['second', 'first'], but composition.stages "
          "of its manifest entry " +
          swapped + " are ['first', 'second'] (same names, same order)");
  const std::string missing = unique_op("MissingStage");
  EXPECT_EQ(construction_error(toy_class(missing, kCompositeEntry).stage<ToySubOp>("first")),
            missing +
                ": the class declares stages ['first'], but composition.stages of its "
                "manifest entry " +
                missing + " are ['first', 'second'] (same names, same order)");
}

TEST(CompositionCheck, AStageHoldingAnotherOpClass) {
  const std::string name = unique_op("OtherSub");
  EXPECT_EQ(
      construction_error(
          toy_class(name, kCompositeEntry).stage<ToySubOp>("first").stage<OtherSubOp>("second")),
      name +
          ": stage 'second' holds ToyOtherSubFwdOp ops, but composition.stages[1] of "
          "its manifest entry " +
          name + " names ToySubFwdOp");
}

TEST(CompositionCheck, RegistrationRefusesAMismatchAndRegistersNothing) {
  const std::string name = unique_op("Unregistered");
  const OpClass& cls = toy_class(name, kCompositeEntry).stage<ToySubOp>("first");
  EXPECT_EQ(error_of<ContractError>([&] {
              register_op_class(cls, [&cls](const ParamMap& p, const std::optional<Target>& t) {
                return std::make_shared<ToyOp>(cls, p, t);
              });
            }),
            name +
                ": the class declares stages ['first'], but composition.stages of its manifest "
                "entry " +
                name + " are ['first', 'second'] (same names, same order)");
  EXPECT_EQ(find_op_class(name), nullptr);
}

// Every class the library registers passes (register_builtin_ops would throw otherwise).
TEST(CompositionCheck, TheLibrarysClassesPass) {
  register_builtin_ops();
  const RegisteredOp* residual = find_op_class("ResidualRMSNormFwdOp");
  ASSERT_NE(residual, nullptr);
  EXPECT_NO_THROW(residual->cls->check_composition());
}

}  // namespace
}  // namespace tileops::optest
