// Shared-library backends (load_backend): the declared ABI version, registration through the
// exported function, refusals recorded in load_failures() with the backend unloaded again,
// all-or-nothing publication, and TILEOPS_BACKENDS at construction.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "toy_ops.hpp"

namespace tileops::optest {
namespace {

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

// Whether the library at `path` is loaded in the process (RTLD_NOLOAD opens only a loaded one).
bool is_loaded(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (handle) dlclose(handle);
  return handle != nullptr;
}

// A backend that fails to load registers nothing, is recorded with its reason and is unloaded.
void expect_refused(const char* path, const std::string& why) {
  const auto targets = registered_targets();
  const auto failures = load_failures().size();
  EXPECT_EQ(error_of<BackendError>([&] { load_backend(path); }),
            std::string("load_backend: ") + path + ": " + why);
  EXPECT_EQ(registered_targets(), targets);
  ASSERT_EQ(load_failures().size(), failures + 1);
  EXPECT_EQ(load_failures().back(), std::string(path) + ": " + why);
  EXPECT_FALSE(is_loaded(path));
}

TEST(BackendPlugin, LoadsItsTargetAndBuilder) {
  load_backend(TILEOPS_TEST_BACKEND_PATH);
  EXPECT_TRUE(is_loaded(TILEOPS_TEST_BACKEND_PATH));
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

  // Loading it again collides with itself: recorded, nothing changes, and the first load (whose
  // code backs the registered target) stays.
  EXPECT_EQ(error_of<BackendError>([] { load_backend(TILEOPS_TEST_BACKEND_PATH); }),
            std::string("load_backend: ") + TILEOPS_TEST_BACKEND_PATH +
                ": a detector for target 'plugin_target' is already registered");
  EXPECT_TRUE(failure_mentions(TILEOPS_TEST_BACKEND_PATH, "already registered"));
  EXPECT_TRUE(is_loaded(TILEOPS_TEST_BACKEND_PATH));
  EXPECT_EQ(op(cpu({4}, DType::kFloat32)).data<float>()[0], 42.0f);
}

// See Note [Backend ABI version]: the library reads the version the backend declares and does not
// call a backend built for another one, whatever that backend would do.
TEST(BackendPlugin, AnotherAbiVersionIsRefusedBeforeTheBackendRuns) {
  expect_refused(TILEOPS_TEST_BACKEND_OTHER_ABI_PATH,
                 "built for backend ABI version " + std::to_string(kBackendAbiVersion + 1) +
                     "; this library loads version " + std::to_string(kBackendAbiVersion));
  EXPECT_FALSE(has(registered_targets(), "other_abi_target"));
}

TEST(BackendPlugin, ABackendThatDeclaresNoVersionIsRefused) {
  expect_refused(TILEOPS_TEST_BACKEND_UNVERSIONED_PATH, "exports no tileops_backend_abi_version");
  EXPECT_FALSE(has(registered_targets(), "unversioned_target"));
}

TEST(BackendPlugin, ARefusingRegistrationRegistersNothing) {
  expect_refused(TILEOPS_TEST_BACKEND_REFUSING_PATH, "registration refused (code 1)");
  EXPECT_FALSE(has(registered_targets(), "refusing_target"));
}

TEST(BackendPlugin, AnExceptionOutsideStdExceptionIsCaught) {
  expect_refused(TILEOPS_TEST_BACKEND_THROWS_PATH,
                 "registration raised a (anonymous namespace)::PluginFailure, which is not a "
                 "std::exception");
  EXPECT_FALSE(has(registered_targets(), "throwing_target"));
}

TEST(BackendPlugin, MissingSymbolIsRecorded) {
  expect_refused(TILEOPS_TEST_BACKEND_NO_SYMBOL_PATH, "exports no tileops_backend_register");
  const auto before = registered_targets();
  EXPECT_THROW(load_backend("/nonexistent/libtileops_backend.so"), BackendError);
  EXPECT_TRUE(failure_mentions("/nonexistent/libtileops_backend.so", "cannot load"));
  EXPECT_EQ(registered_targets(), before);
}

TEST(BackendPlugin, RegistrationIsAllOrNothing) {
  register_detector("collide_existing_target", [](const Device&) { return false; });
  expect_refused(TILEOPS_TEST_BACKEND_COLLIDING_PATH,
                 "a detector for target 'collide_existing_target' is already registered");
  EXPECT_FALSE(has(registered_targets(), "collide_new_target"));
  EXPECT_FALSE(has(registered_targets("PluginToyFwdOp"), "collide_new_target"));
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
