// Numerics of the CPU norm kernels against the float64 references (references/norm.hpp;
// tolerances: Note [CPU kernel tolerances] in cpu_numerics.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/test_helpers.hpp"
#include "cpu_numerics.hpp"
#include "kernels/norm/cpu/norm_cpu.hpp"
#include "norm.hpp"
#include "tileops/core/error.hpp"
#include "tileops/ops/defaults.hpp"

namespace tileops::test_cpu {
namespace {

namespace k = kernels::cpu;

// Normalized sizes: 1 (the row is its own RMS), odd small sizes, and long odd rows that leave a
// tail after the blocked kernel's lanes.
const std::int64_t kSizes[] = {1, 3, 7, 33, 1000, 4097};

using RmsNormKernel =
    std::function<void(const Tensor&, const Tensor*, double, std::int64_t, Tensor&)>;

void check_rms_norm(const RmsNormKernel& kernel, const Shape& shape, std::int64_t n, DType dtype,
                    bool with_weight, double eps, std::uint32_t seed) {
  SCOPED_TRACE(case_name(dtype, shape) + (with_weight ? " weight" : " no weight"));
  const Tensor x = random_tensor(shape, dtype, seed);
  const Tensor w = random_tensor({n}, dtype, seed + 1);
  Tensor out = poisoned_tensor(shape, dtype);
  kernel(x, with_weight ? &w : nullptr, eps, n, out);
  const std::vector<double> wd = to_doubles(w);
  EXPECT_TRUE(all_close(to_doubles(out),
                        references::rms_norm(to_doubles(x), with_weight ? &wd : nullptr, n, eps),
                        tolerance_for(dtype)));
}

void check_rms_norm_all_shapes(const RmsNormKernel& kernel) {
  std::uint32_t seed = 100;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t n : kSizes) {
      for (bool with_weight : {true, false}) {
        check_rms_norm(kernel, {5, n}, n, dtype, with_weight, 1e-5, seed++);
      }
    }
    // Several batch axes, and eps = None resolved by the op layer.
    check_rms_norm(kernel, {2, 3, 33}, 33, dtype, true, kDefaultNormEps, seed++);
    check_rms_norm(kernel, {1, 4096}, 4096, dtype, false, kDefaultNormEps, seed++);
  }
}

TEST(NormCpu, RmsNormRowwiseMatchesOracle) { check_rms_norm_all_shapes(k::rms_norm_rowwise); }

TEST(NormCpu, RmsNormBlockedMatchesOracle) { check_rms_norm_all_shapes(k::rms_norm_blocked); }

TEST(NormCpu, RmsNormEpsDominatesTinyRows) {
  // With mean(x^2) ~ 1e-8 the eps term decides the scale: a kernel that drops or misreads eps
  // is off by orders of magnitude.
  for (const RmsNormKernel& kernel :
       {RmsNormKernel(k::rms_norm_rowwise), RmsNormKernel(k::rms_norm_blocked)}) {
    const Tensor x = random_tensor({3, 1000}, DType::kFloat32, 7, 1e-4);
    Tensor out = poisoned_tensor({3, 1000}, DType::kFloat32);
    kernel(x, nullptr, 1e-6, 1000, out);
    EXPECT_TRUE(all_close(to_doubles(out), references::rms_norm(to_doubles(x), nullptr, 1000, 1e-6),
                          tolerance_for(DType::kFloat32)));
  }
}

TEST(NormCpu, RmsNormEmpty) {
  for (const RmsNormKernel& kernel :
       {RmsNormKernel(k::rms_norm_rowwise), RmsNormKernel(k::rms_norm_blocked)}) {
    for (DType dtype : kFloatDTypes) {
      // No rows, and rows of zero elements: nothing to read or write.
      const Tensor guard = poisoned_tensor({64}, dtype);
      Tensor x0 = Tensor::empty({0, 33}, dtype);
      Tensor out0 = empty_view(guard, {0, 33});
      const Tensor w = random_tensor({33}, dtype, 1);
      EXPECT_NO_THROW(kernel(x0, &w, 1e-5, 33, out0));
      Tensor x1 = Tensor::empty({4, 0}, dtype);
      Tensor out1 = empty_view(guard, {4, 0});
      EXPECT_NO_THROW(kernel(x1, nullptr, 1e-5, 0, out1));
      EXPECT_TRUE(still_poisoned(guard)) << dtype_name(dtype);
    }
  }
}

TEST(NormCpu, LayerNormMatchesOracle) {
  std::uint32_t seed = 200;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t n : kSizes) {
      for (int affine = 0; affine < 4; ++affine) {
        const bool with_weight = (affine & 1) != 0;
        const bool with_bias = (affine & 2) != 0;
        const Shape shape{3, n};
        SCOPED_TRACE(case_name(dtype, shape) + " affine " + std::to_string(affine));
        // An offset mean checks that the variance is centred (E[x^2] - E[x]^2 would cancel).
        const Tensor x = random_tensor(shape, dtype, seed++, 2.0, 3.0);
        const Tensor w = random_tensor({n}, dtype, seed++);
        const Tensor b = random_tensor({n}, dtype, seed++);
        Tensor out = poisoned_tensor(shape, dtype);
        k::layer_norm(x, with_weight ? &w : nullptr, with_bias ? &b : nullptr, 1e-5, n, out);
        const std::vector<double> wd = to_doubles(w);
        const std::vector<double> bd = to_doubles(b);
        // n == 1: x - mean is exactly 0, so the output is the bias (or 0).
        EXPECT_TRUE(all_close(to_doubles(out),
                              references::layer_norm(to_doubles(x), with_weight ? &wd : nullptr,
                                                     with_bias ? &bd : nullptr, n, 1e-5),
                              tolerance_for(dtype)));
      }
    }
  }
}

TEST(NormCpu, LayerNormEmpty) {
  for (DType dtype : kFloatDTypes) {
    const Tensor guard = poisoned_tensor({64}, dtype);
    Tensor x = Tensor::empty({0, 7}, dtype);
    Tensor out = empty_view(guard, {0, 7});
    EXPECT_NO_THROW(k::layer_norm(x, nullptr, nullptr, 1e-5, 7, out));
    EXPECT_TRUE(still_poisoned(guard)) << dtype_name(dtype);
  }
}

TEST(NormCpu, FusedAddRmsNormWritesResidualAndNormalizesIt) {
  std::uint32_t seed = 300;
  for (DType dtype : kFloatDTypes) {
    for (std::int64_t n : kSizes) {
      const Shape shape{2, 3, n};
      SCOPED_TRACE(case_name(dtype, shape));
      const Tensor x = random_tensor(shape, dtype, seed++);
      Tensor residual = random_tensor(shape, dtype, seed++);
      const Tensor w = random_tensor({n}, dtype, seed++);
      const std::vector<double> xd = to_doubles(x);
      const std::vector<double> rd = to_doubles(residual);
      Tensor out = poisoned_tensor(shape, dtype);
      k::fused_add_rms_norm(x, residual, w, kDefaultNormEps, n, out);

      // The stored residual is x + residual rounded to T. The double sum of two T values is
      // exact, so rounding it to T (via float32, as any float-computing kernel does) is the only
      // rounding: the residual must match bit for bit.
      std::vector<double> want_residual(xd.size());
      for (std::size_t i = 0; i < xd.size(); ++i)
        want_residual[i] = references::round_to(dtype, xd[i] + rd[i]);
      EXPECT_TRUE(all_close(to_doubles(residual), want_residual, {0.0, 0.0}));

      const std::vector<double> wd = to_doubles(w);
      EXPECT_TRUE(all_close(to_doubles(out),
                            references::rms_norm(want_residual, &wd, n, kDefaultNormEps),
                            tolerance_for(dtype)));
    }
  }
}

TEST(NormCpu, FusedAddRmsNormEmpty) {
  for (DType dtype : kFloatDTypes) {
    // Neither the residual (written in place) nor the output may be written.
    const Tensor residual_guard = poisoned_tensor({64}, dtype);
    const Tensor out_guard = poisoned_tensor({64}, dtype);
    Tensor x = Tensor::empty({0, 5}, dtype);
    Tensor residual = empty_view(residual_guard, {0, 5});
    const Tensor w = random_tensor({5}, dtype, 1);
    Tensor out = empty_view(out_guard, {0, 5});
    EXPECT_NO_THROW(k::fused_add_rms_norm(x, residual, w, 1e-5, 5, out));
    EXPECT_TRUE(still_poisoned(residual_guard)) << dtype_name(dtype);
    EXPECT_TRUE(still_poisoned(out_guard)) << dtype_name(dtype);
  }
}

TEST(NormCpu, RejectsIntegerInput) {
  const Tensor x = Tensor::empty({2, 3}, DType::kInt32);
  Tensor out = Tensor::empty({2, 3}, DType::kInt32);
  EXPECT_EQ(
      test_common::error_of<CheckError>([&] { k::rms_norm_rowwise(x, nullptr, 1e-5, 3, out); }),
      "rms_norm_rowwise(cpu): x has dtype int32; expected float16, bfloat16 or float32");
}

}  // namespace
}  // namespace tileops::test_cpu
