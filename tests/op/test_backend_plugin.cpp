// Shared-library backends (load_backend): registration through the exported symbol, refusals
// recorded in load_failures(), all-or-nothing publication, and TILEOPS_BACKENDS at construction.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

using ::testing::HasSubstr;

// TILEOPS_BACKENDS names the "env" plugin before any op is constructed in this process; the
// first construction loads it (ConstructionTable1.Row1_LoadsTheBackendRegistry).
class BackendsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { setenv("TILEOPS_BACKENDS", TILEOPS_TEST_BACKEND_ENV_PATH, 1); }
};
[[maybe_unused]] ::testing::Environment* const kBackendsEnvironment =
    ::testing::AddGlobalTestEnvironment(new BackendsEnvironment);

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

bool failure_mentions(const std::string& path, const std::string& what) {
  for (const std::string& f : load_failures())
    if (f.find(path) != std::string::npos && f.find(what) != std::string::npos) return true;
  return false;
}

const OpClass& plugin_op_class() {
  static const OpClass& cls = with_selection_table(toy_class("PluginToyFwdOp"));
  return cls;
}

TEST(BackendPlugin, LoadsItsTargetAndBuilder) {
  load_backend(TILEOPS_TEST_BACKEND_PATH);
  EXPECT_TRUE(has(registered_targets(), "plugin_target"));
  EXPECT_TRUE(has(registered_targets("PluginToyFwdOp"), "plugin_target"));
  ToyOp op(plugin_op_class(), {}, Target::named("plugin_target"));
  Tensor y = op(cpu({4}, DType::kFloat32));
  EXPECT_EQ(op.serving_target(), Target::named("plugin_target"));
  EXPECT_EQ(op.forward_calls(), 0);
  EXPECT_EQ(y.data<float>()[3], 42.0f);
  // Its detector claims the device it was written for.
  FakeAccelerator accel;
  ToyOp detected(plugin_op_class());
  detected(on_cuda({4}, 21, DType::kFloat32));
  EXPECT_EQ(detected.serving_target(), Target::named("plugin_target"));

  // Loading it again collides with itself: recorded, and nothing changes.
  EXPECT_THAT(error_of<BackendError>([] { load_backend(TILEOPS_TEST_BACKEND_PATH); }),
              HasSubstr("a detector for target 'plugin_target' is already registered"));
  EXPECT_TRUE(failure_mentions(TILEOPS_TEST_BACKEND_PATH, "already registered"));
}

TEST(BackendPlugin, WrongAbiVersionIsRefusedAndRegistersNothing) {
  const auto before = registered_targets();
  EXPECT_THAT(error_of<BackendError>([] { load_backend(TILEOPS_TEST_BACKEND_WRONG_ABI_PATH); }),
              HasSubstr("registration refused (code 1; the library expects ABI version " +
                        std::to_string(kBackendAbiVersion) + ")"));
  EXPECT_TRUE(failure_mentions(TILEOPS_TEST_BACKEND_WRONG_ABI_PATH, "refused"));
  EXPECT_FALSE(has(registered_targets(), "wrong_abi_target"));
  EXPECT_EQ(registered_targets(), before);
}

TEST(BackendPlugin, MissingSymbolIsRecorded) {
  const auto before = registered_targets();
  EXPECT_THAT(error_of<BackendError>([] { load_backend(TILEOPS_TEST_BACKEND_NO_SYMBOL_PATH); }),
              HasSubstr("exports no tileops_backend_register"));
  EXPECT_TRUE(
      failure_mentions(TILEOPS_TEST_BACKEND_NO_SYMBOL_PATH, "exports no tileops_backend_register"));
  EXPECT_EQ(registered_targets(), before);
  EXPECT_THROW(load_backend("/nonexistent/libtileops_backend.so"), BackendError);
  EXPECT_TRUE(failure_mentions("/nonexistent/libtileops_backend.so", "cannot load"));
}

TEST(BackendPlugin, RegistrationIsAllOrNothing) {
  register_detector("collide_existing_target", [](const Device&) { return false; });
  const auto before = registered_targets();
  EXPECT_THAT(error_of<BackendError>([] { load_backend(TILEOPS_TEST_BACKEND_COLLIDING_PATH); }),
              HasSubstr("a detector for target 'collide_existing_target' is already registered"));
  EXPECT_FALSE(has(registered_targets(), "collide_new_target"));
  EXPECT_FALSE(has(registered_targets("PluginToyFwdOp"), "collide_new_target"));
  EXPECT_EQ(registered_targets(), before);
  EXPECT_TRUE(failure_mentions(TILEOPS_TEST_BACKEND_COLLIDING_PATH, "collide_existing_target"));
}

TEST(BackendPlugin, TileopsBackendsIsLoadedAtTheFirstConstruction) {
  ToyOp op(with_selection_table(toy_class("EnvPluginFwdOp")), {},
           Target::named("env_plugin_target"));
  Tensor y = op(cpu({2}, DType::kFloat32));
  EXPECT_EQ(y.data<float>()[0], 7.0f);
  EXPECT_EQ(op.serving_target(), Target::named("env_plugin_target"));
}

}  // namespace
}  // namespace tileops::optest
