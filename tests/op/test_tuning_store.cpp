// The tuning store (include/tileops/op/tuning.hpp): record and find, the file's round trip and
// format (Note [Tuning file format]), TILEOPS_TUNING_FILE, and the errors a malformed file raises.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/env_guard.hpp"
#include "common/test_helpers.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/tuning.hpp"

namespace tileops {
namespace {

using test_common::error_of;
using ::testing::HasSubstr;

// A file path in the test's temporary folder, removed (with its temporary) when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               (name + "." + std::to_string(::getpid()) + ".tuning"))
                  .string()) {}
  ~TempFile() {
    std::remove(path_.c_str());
    std::remove((path_ + ".tmp").c_str());
  }
  const std::string& path() const { return path_; }
  void write(const std::string& text) const { std::ofstream(path_) << text; }

 private:
  std::string path_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const char* kSpec = "GemmCall{dtype=bfloat16, n=4096, k=4096, m_class=128}";

TEST(TuningStore, FindsWhatWasRecordedUnderTheSameKeyOnly) {
  TuningStore store;
  EXPECT_EQ(store.find("gemm_cublaslt_sm90", kSpec, "sm_90 H200"), std::nullopt);
  store.record("gemm_cublaslt_sm90", kSpec, "sm_90 H200", "cublaslt 1 00 1.5");
  EXPECT_EQ(store.find("gemm_cublaslt_sm90", kSpec, "sm_90 H200"), "cublaslt 1 00 1.5");
  EXPECT_EQ(store.find("gemm_cublaslt_sm90", kSpec, "sm_90 H100"), std::nullopt);
  EXPECT_EQ(store.find("bmm_cublaslt_sm90", kSpec, "sm_90 H200"), std::nullopt);
  store.record("gemm_cublaslt_sm90", kSpec, "sm_90 H200", "second");
  EXPECT_EQ(store.find("gemm_cublaslt_sm90", kSpec, "sm_90 H200"), "second");
  EXPECT_EQ(store.size(), 1u);
}

TEST(TuningStore, RefusesAFieldThatTheFileCannotHold) {
  TuningStore store;
  EXPECT_THROW(store.record("key", "a\tb", "sm_90", "choice"), CheckError);
  EXPECT_THROW(store.record("key", "spec", "sm_90", ""), CheckError);
  EXPECT_EQ(store.size(), 0u);
}

TEST(TuningStore, SavedFileLoadsIntoAFreshStore) {
  const TempFile file("round_trip");
  TuningStore store;
  store.record("gemm_cublaslt_sm90", kSpec, "sm_90 H200", "cublaslt 130100 ab 12.30");
  store.record("bmm_cublaslt_sm90", "spec two", "sm_90 H200", "cublaslt 130100 cd 1.00");
  store.save(file.path());
  EXPECT_THAT(read_all(file.path()), ::testing::StartsWith("tileops-tuning 1\n"));
  TuningStore fresh;
  fresh.load(file.path());
  EXPECT_EQ(fresh.size(), 2u);
  EXPECT_EQ(fresh.find("gemm_cublaslt_sm90", kSpec, "sm_90 H200"), "cublaslt 130100 ab 12.30");
  EXPECT_EQ(fresh.find("bmm_cublaslt_sm90", "spec two", "sm_90 H200"), "cublaslt 130100 cd 1.00");
}

TEST(TuningStore, RecordRewritesTheStoresFile) {
  const TempFile file("rewrite");
  TuningStore store;
  store.set_file(file.path());
  store.record("key", "spec", "sm_90", "choice");
  EXPECT_FALSE(std::filesystem::exists(file.path() + ".tmp"));
  TuningStore fresh;
  fresh.load(file.path());
  EXPECT_EQ(fresh.find("key", "spec", "sm_90"), "choice");
}

TEST(TuningStore, MalformedFilesNameTheFileAndTheLine) {
  const TempFile file("malformed");
  TuningStore store;
  file.write("# a comment\ntileops-tuning 2\n");
  EXPECT_THAT(error_of<TuningFileError>([&] { store.load(file.path()); }),
              HasSubstr(file.path() + ":2: expected the version line 'tileops-tuning 1'"));
  file.write("tileops-tuning 1\nkey\tsm_90\tspec\tchoice\n\nkey\tsm_90\tspec only\n");
  EXPECT_THAT(error_of<TuningFileError>([&] { store.load(file.path()); }),
              HasSubstr(file.path() + ":4: expected four non-empty tab-separated fields"));
  EXPECT_EQ(store.size(), 0u);  // a malformed file adds nothing
  EXPECT_THAT(error_of<TuningFileError>([&] { store.load(file.path() + ".absent"); }),
              HasSubstr("cannot be read"));
}

// The process's store reads TILEOPS_TUNING_FILE at its first use and rewrites it on a record; ctest
// runs each test in its own process, so this one is that first use.
TEST(TuningStore, TheProcessStoreLoadsAndRewritesTheEnvironmentsFile) {
  const TempFile file("environment");
  file.write("tileops-tuning 1\nkey\tsm_90\tspec\tfrom the file\n");
  const test_common::EnvGuard env("TILEOPS_TUNING_FILE", file.path());
  TuningStore& store = tuning_store();
  EXPECT_EQ(store.find("key", "spec", "sm_90"), "from the file");
  store.record("key", "spec two", "sm_90", "recorded");
  TuningStore fresh;
  fresh.load(file.path());
  EXPECT_EQ(fresh.find("key", "spec", "sm_90"), "from the file");
  EXPECT_EQ(fresh.find("key", "spec two", "sm_90"), "recorded");
  store.clear();
  store.set_file("");
}

}  // namespace
}  // namespace tileops
