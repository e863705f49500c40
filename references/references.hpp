// Float64 references of the library's ops, written from the manifest's semantics
// (docs/manifest.md §4), never from the library's kernels: the tests and `tileops run` check the
// kernels against them, so a wrong kernel and a wrong reference would have to agree by accident.
// This library links the core types only; the build refuses to let it include or link the op
// classes or kernels/ (references/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/core/value.hpp"

namespace tileops::references {

// A tensor's values as doubles, row-major.
struct HostTensor {
  Shape shape;
  DType dtype = DType::kFloat32;
  std::vector<double> values;
};
// Reads a CPU tensor of any strides; OpNotAvailableError for another device.
HostTensor to_host(const Tensor& t);
// `value` rounded to `dtype` as PyTorch casts it, back as a double.
double round_to(DType dtype, double value);

// The expected values of one tensor a call produces: an output, or an input the call writes.
struct Expected {
  std::string name;
  std::vector<double> values;
  // Per element, the magnitude the tolerance scales with: |value| for a well-conditioned result,
  // larger where the exact result cancels (a sum's sum of |terms|, a centered value's |x| +
  // |mean|).
  std::vector<double> scale;
};

// Inputs in signature order; nullopt for an omitted optional input.
using Inputs = std::vector<std::optional<HostTensor>>;
using Reference = std::vector<Expected> (*)(const ParamMap& params, const Inputs& inputs);

// The reference of `op`, or nullptr when there is none.
Reference find_reference(std::string_view op);
// Every op that has a reference, sorted.
std::vector<std::string> ops_with_references();

// Note [Tolerances]
// A kernel computes in float32 and rounds once to T; the reference computes in float64 from the
// same (T-rounded) inputs. Allowed |got - want| <= rtol * max(|want|, scale) + atol, with
//   float32   rtol 1e-5      float32 arithmetic and accumulation error (a few ulp, 2^-23 each)
//   float16   rtol 2^-10     one ulp of T: the float32 result may sit on the other side of a
//   bfloat16  rtol 2^-7      rounding boundary than the exact value, so one T ulp, not half
//   float64   rtol 1e-12
//   atol      1e-6 (float32), 1e-5 (float16, bfloat16: float16 subnormals are 6e-8 apart, and
//             values that cancel to near 0 keep the float32 error of their inputs' size);
//   integers  exact.
// A NaN or infinite expected value is matched only by the same value.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};
Tolerance tolerance(DType dtype);

// How `got` compares with `want` under `tol`.
struct Comparison {
  std::size_t checked = 0;
  std::size_t bad = 0;  // elements out of tolerance (NaN where a number is expected included)
  std::size_t worst = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool ok() const noexcept { return bad == 0; }
  // "3 of 4096 elements out of tolerance; worst at 17: got 1.5, want 1.25 (rtol .., atol ..)".
  std::string str(const std::vector<double>& got, const std::vector<double>& want,
                  Tolerance tol) const;
};
Comparison compare(const std::vector<double>& got, const Expected& want, Tolerance tol);

}  // namespace tileops::references
