// sum over any set of axes.
//
// Note [Sum layout]
// Axes of length 1 are dropped and neighbouring axes that are both kept or both reduced are
// merged, which leaves alternating groups such as [kept, reduced, kept]. Two shapes remain:
//  - the innermost group is reduced: each output adds contiguous runs of x (a row sum, cascaded:
//    detail::cascade_sum);
//  - the innermost group is kept: a task owns a strip of adjacent outputs and adds whole
//    contiguous slices of x into a float accumulator per output (a column sum), so x is still
//    read sequentially.
// The other groups are walked with an odometer over their offsets.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/cpu/cascade.hpp"
#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

struct Group {
  std::int64_t size;
  std::int64_t stride;  // in elements of x
};

inline constexpr std::int64_t kStrip = 256;

// Calls f(offset) for every combination of indices of `groups` (outermost first); once, with 0,
// when there are no groups.
template <class F>
void for_each_offset(std::span<const Group> groups, const F& f) {
  Shape index = Shape::filled(groups.size(), 0);
  std::int64_t offset = 0;
  for (;;) {
    f(offset);
    std::size_t g = groups.size();
    for (;;) {
      if (g == 0) return;
      --g;
      if (++index[g] < groups[g].size) {
        offset += groups[g].stride;
        break;
      }
      offset -= (groups[g].size - 1) * groups[g].stride;
      index[g] = 0;
    }
  }
}

// Offset in x of the kept-group multi-index whose row-major rank is `flat`.
std::int64_t offset_of(std::int64_t flat, std::span<const Group> groups) {
  std::int64_t offset = 0;
  for (std::size_t g = groups.size(); g-- > 0;) {
    offset += (flat % groups[g].size) * groups[g].stride;
    flat /= groups[g].size;
  }
  return offset;
}

std::int64_t product(std::span<const Group> groups) {
  std::int64_t n = 1;
  for (const Group& g : groups) n *= g.size;
  return n;
}

template <class T>
void sum_typed(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  T* os = out.data<T>();
  if (x.numel() == 0) {
    std::fill(os, os + out.numel(), from_float<T>(0.0f));
    return;
  }
  // Coalesce (Note [Sum layout]); strides are those of the contiguous x.
  std::vector<Group> kept;
  std::vector<Group> summed;
  bool innermost_reduced = false;
  bool previous_reduced = false;
  bool have_previous = false;
  std::int64_t stride = 1;
  for (std::size_t a = x.dim(); a-- > 0;) {
    const std::int64_t size = x.shape()[a];
    if (size == 1) continue;
    const bool is_reduced = reduced[a];
    std::vector<Group>& groups = is_reduced ? summed : kept;
    if (have_previous && previous_reduced == is_reduced) {
      groups.back().size *= size;
    } else {
      if (!have_previous) innermost_reduced = is_reduced;
      groups.push_back({size, stride});
    }
    have_previous = true;
    previous_reduced = is_reduced;
    stride *= size;
  }
  // Built innermost first; the odometer and offset_of want outermost first.
  std::reverse(kept.begin(), kept.end());
  std::reverse(summed.begin(), summed.end());
  const T* xs = x.data<const T>();

  if (innermost_reduced) {
    const std::int64_t run = summed.back().size;
    const std::span<const Group> outer_summed(summed.data(), summed.size() - 1);
    const std::int64_t outputs = product(kept);
    detail::parallel_for(outputs, x.numel() / outputs, [&](std::int64_t o) {
      const T* base = xs + offset_of(o, kept);
      float total = 0.0f;
      for_each_offset(outer_summed, [&](std::int64_t offset) {
        const T* slice = base + offset;
        total += detail::cascade_sum(run, [slice](std::int64_t i) { return to_float(slice[i]); });
      });
      os[o] = from_float<T>(total);
    });
    return;
  }
  // Innermost kept (or nothing left at all: a single element, kept as a group of one).
  if (kept.empty()) kept.push_back({1, 1});
  const std::int64_t width = kept.back().size;
  const std::span<const Group> outer_kept(kept.data(), kept.size() - 1);
  const std::int64_t strips = (width + kStrip - 1) / kStrip;
  const std::int64_t per_output = product(summed);
  detail::parallel_for(product(outer_kept) * strips, per_output * kStrip, [&](std::int64_t t) {
    const std::int64_t o = t / strips;
    const std::int64_t c0 = (t % strips) * kStrip;
    const std::int64_t columns = std::min(kStrip, width - c0);
    const T* base = xs + offset_of(o, outer_kept) + c0;
    std::array<float, kStrip> acc{};
    for_each_offset(std::span<const Group>(summed), [&](std::int64_t offset) {
      const T* slice = base + offset;
      for (std::int64_t c = 0; c < columns; ++c) acc[c] += to_float(slice[c]);
    });
    T* out_strip = os + o * width + c0;
    for (std::int64_t c = 0; c < columns; ++c) out_strip[c] = from_float<T>(acc[c]);
  });
}

}  // namespace

void sum(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  detail::dispatch_float(x.dtype(), "sum(cpu)", "x",
                         [&]<class T>(std::type_identity<T>) { sum_typed<T>(x, reduced, out); });
}

}  // namespace tileops::kernels::cpu
