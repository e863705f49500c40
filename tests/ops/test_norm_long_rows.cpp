// Norms over rows of the Llama-3 vocabulary (128256 entries) against the float64 oracles of
// references/norm.hpp, with PyTorch's tolerances (Note [Long-row tolerances] in long_rows.hpp):
// normal(1, 1) inputs in every float dtype.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/norm/cpu/norm_cpu.hpp"
#include "long_rows.hpp"
#include "norm.hpp"
#include "tileops/ops/defaults.hpp"

namespace tileops::test_cpu {
namespace {

namespace k = kernels::cpu;

using RmsNormKernel =
    std::function<void(const Tensor&, const Tensor*, double, std::int64_t, Tensor&)>;

void check_long_rms_norm(const RmsNormKernel& kernel) {
  const Shape shape{kVocabRows, kVocabRow};
  std::uint32_t seed = 1;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++);
    const Tensor w = normal_one_one({kVocabRow}, dtype, seed++);
    Tensor out = poisoned_tensor(shape, dtype);
    kernel(x, &w, kDefaultNormEps, kVocabRow, out);
    const std::vector<double> wd = to_doubles(w);
    EXPECT_TRUE(
        torch_close(out, references::rms_norm(to_doubles(x), &wd, kVocabRow, kDefaultNormEps)));
  }
}

TEST(NormLongRows, RmsNormRowwise) { check_long_rms_norm(k::rms_norm_rowwise); }

TEST(NormLongRows, RmsNormBlocked) { check_long_rms_norm(k::rms_norm_blocked); }

TEST(NormLongRows, LayerNorm) {
  const Shape shape{kVocabRows, kVocabRow};
  std::uint32_t seed = 10;
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(case_name(dtype, shape));
    const Tensor x = normal_one_one(shape, dtype, seed++);
    const Tensor w = normal_one_one({kVocabRow}, dtype, seed++);
    const Tensor b = normal_one_one({kVocabRow}, dtype, seed++);
    Tensor out = poisoned_tensor(shape, dtype);
    k::layer_norm(x, &w, &b, 1e-5, kVocabRow, out);
    const std::vector<double> wd = to_doubles(w);
    const std::vector<double> bd = to_doubles(b);
    EXPECT_TRUE(torch_close(out, references::layer_norm(to_doubles(x), &wd, &bd, kVocabRow, 1e-5)));
  }
}

}  // namespace
}  // namespace tileops::test_cpu
