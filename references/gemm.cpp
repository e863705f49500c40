// The gemm family's references (manifest/gemm.yaml): the products in float64 from the T-rounded
// inputs. A product's exact value may cancel far below the size of its terms, and a kernel's
// float32 error follows the terms, so each element's tolerance scales with sum_k |a||b| (+ |bias|)
// (Note [Tolerances]).
#include <algorithm>
#include <cmath>

#include "families.hpp"

namespace tileops::references {
namespace {

// out[m, n] (+)= sum_k a[m, k] b[k, n] for row-major a [M, K] at `a`, b [K, N] at `b`, into `e`'s
// values and scale from element `at` on.
void accumulate(const double* a, const double* b, std::int64_t m, std::int64_t k, std::int64_t n,
                Expected& e, std::size_t at) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (std::int64_t t = 0; t < k; ++t) {
        const double product = a[i * k + t] * b[t * n + j];
        sum += product;
        magnitude += std::abs(product);
      }
      const auto index = at + static_cast<std::size_t>(i * n + j);
      e.values[index] += sum;
      e.scale[index] += magnitude;
    }
}

Expected zeros(std::size_t size) {
  return Expected{"output", std::vector<double>(size, 0.0), std::vector<double>(size, 0.0)};
}

std::vector<Expected> gemm_ref(const ParamMap&, const Inputs& in) {
  const std::int64_t m = in[0]->shape[0], k = in[0]->shape[1], n = in[1]->shape[1];
  Expected e = zeros(static_cast<std::size_t>(m * n));
  accumulate(in[0]->values.data(), in[1]->values.data(), m, k, n, e, 0);
  if (in[2])
    for (std::size_t i = 0; i < e.values.size(); ++i) {
      const double bias = in[2]->values[i % static_cast<std::size_t>(n)];
      e.values[i] += bias;
      e.scale[i] += std::abs(bias);
    }
  return {std::move(e)};
}

// The leading (batch) axes of `shape`, aligned to `rank` axes from the right with 1s.
Shape batch_axes(const Shape& shape, std::size_t rank) {
  Shape batch = Shape::filled(rank, 1);
  for (std::size_t i = 0; i + 2 < shape.size(); ++i)
    batch[rank - (shape.size() - 2) + i] = shape[i];
  return batch;
}

// The flat matrix index in `batch` of the broadcast batch position `index` (PyTorch broadcasting:
// an axis of length 1 repeats).
std::int64_t matrix_of(const Shape& batch, const std::vector<std::int64_t>& index) {
  std::int64_t flat = 0;
  for (std::size_t axis = 0; axis < batch.size(); ++axis)
    flat = flat * batch[axis] + (batch[axis] == 1 ? 0 : index[axis]);
  return flat;
}

std::vector<Expected> bmm_ref(const ParamMap&, const Inputs& in) {
  const Shape& sa = in[0]->shape;
  const Shape& sb = in[1]->shape;
  const std::int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const std::size_t rank = std::max(sa.size(), sb.size()) - 2;
  const Shape batch_a = batch_axes(sa, rank), batch_b = batch_axes(sb, rank);
  Shape batch = Shape::filled(rank, 1);
  for (std::size_t axis = 0; axis < rank; ++axis)
    batch[axis] = batch_a[axis] == 1 ? batch_b[axis] : batch_a[axis];
  const std::int64_t count = batch.numel();
  Expected e = zeros(static_cast<std::size_t>(count * m * n));
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t l = 0; l < count; ++l) {
    accumulate(in[0]->values.data() + matrix_of(batch_a, index) * m * k,
               in[1]->values.data() + matrix_of(batch_b, index) * k * n, m, k, n, e,
               static_cast<std::size_t>(l * m * n));
    for (std::size_t axis = rank; axis-- > 0;) {
      if (++index[axis] < batch[axis]) break;
      index[axis] = 0;
    }
  }
  return {std::move(e)};
}

// Group g holds rows [offsets[g - 1], offsets[g]); rows past the last end stay 0. Ends outside the
// contract are clamped into [previous end, M], as the CUDA kernels read them.
std::vector<Expected> grouped_gemm_ref(const ParamMap&, const Inputs& in) {
  const std::int64_t m = in[0]->shape[0], k = in[0]->shape[1];
  const std::int64_t groups = in[1]->shape[0], n = in[1]->shape[2];
  Expected e = zeros(static_cast<std::size_t>(m * n));
  std::int64_t begin = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    const auto end =
        std::clamp(static_cast<std::int64_t>(in[2]->values[static_cast<std::size_t>(g)]), begin, m);
    accumulate(in[0]->values.data() + begin * k, in[1]->values.data() + g * k * n, end - begin, k,
               n, e, static_cast<std::size_t>(begin * n));
    begin = end;
  }
  return {std::move(e)};
}

}  // namespace

void add_gemm_references(ReferenceTable& table) {
  table.emplace("GemmFwdOp", gemm_ref);
  table.emplace("BmmFwdOp", bmm_ref);
  table.emplace("GroupedGemmFwdOp", grouped_gemm_ref);
}

}  // namespace tileops::references
