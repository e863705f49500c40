// sum, mean and amax over any set of axes: one skeleton, three accumulator policies.
//
// Note [Reduction layout]
// Axes of length 1 are dropped and neighbouring axes that are both kept or both reduced are
// merged, which leaves alternating groups such as [kept, reduced, kept]. Two shapes remain:
//  - the innermost group is reduced (a row reduction): each output reduces contiguous runs of x,
//    a block of kCascadeBlock elements at a time, in independent lanes;
//  - the innermost group is kept (a column reduction): a task owns a strip of up to kStrip
//    adjacent outputs and reduces whole contiguous slices of the strip into one accumulator per
//    output, kSlicesPerBlock slices per block, so x is still read sequentially.
// The other reduced groups are walked with an odometer. Either way the blocks of an output are
// combined pairwise (Note [Cascade summation] in kernels/common/cpu/cascade.hpp). They are also
// cut into chunks of a power of two of blocks, reduced as separate tasks and combined in order,
// so that a full reduction or a few long rows keep every thread busy; since the chunks are
// complete subtrees of the pairwise combination, the bits are those of one sequential pass
// whatever the chunk size and the number of threads.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "kernels/common/cpu/cascade.hpp"
#include "kernels/common/cpu/cpu_kernel_support.hpp"
#include "kernels/reduction/cpu/reduction_cpu.hpp"

namespace tileops::kernels::cpu {
namespace {

using detail::from_float;
using detail::to_float;

// An accumulator policy: the Monoid that combines, `load` (an element of T to the accumulator)
// and `finish` (the total of `count` elements to T, the one rounding).
template <class T>
struct SumOf {
  using Element = T;
  using Monoid = detail::FloatSum;
  static float load(T v) noexcept { return to_float(v); }
  static T finish(float total, std::int64_t) noexcept { return from_float<T>(total); }
};

template <class T>
struct MeanOf : SumOf<T> {
  // Zero elements: 0 / 0 is NaN, as torch.mean gives.
  static T finish(float total, std::int64_t count) noexcept {
    return from_float<T>(total / static_cast<float>(count));
  }
};

// Integers compare exactly in their own type; float16/bfloat16 widen to float exactly.
template <class T>
struct AmaxOf {
  static constexpr bool kInteger = std::is_integral_v<T>;
  using Element = T;
  using Monoid = detail::Max<std::conditional_t<kInteger, T, float>>;
  using Acc = typename Monoid::Acc;
  static Acc load(T v) noexcept {
    if constexpr (kInteger) {
      return v;
    } else {
      return to_float(v);
    }
  }
  static T finish(Acc max, std::int64_t) noexcept {
    if constexpr (kInteger) {
      return max;
    } else {
      return from_float<T>(max);
    }
  }
};

struct Group {
  std::int64_t size;
  std::int64_t stride;  // in elements of x
};

// The groups of Note [Reduction layout], outermost first.
struct Layout {
  std::vector<Group> kept;
  std::vector<Group> reduced;
  bool innermost_reduced = false;
};

// Columns per strip and reduced slices per block of a column reduction.
inline constexpr std::int64_t kStrip = 256;
inline constexpr std::int64_t kSlicesPerBlock = 32;
// About the elements of one chunk task: enough to amortise a task, small enough that a single
// output of 2^20 elements still splits across threads.
inline constexpr std::int64_t kChunkElements = std::int64_t{1} << 16;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t product(std::span<const Group> groups) {
  std::int64_t n = 1;
  for (const Group& g : groups) n *= g.size;
  return n;
}

// Offset in x of the multi-index of `groups` whose row-major rank is `flat`.
std::int64_t offset_of(std::int64_t flat, std::span<const Group> groups) {
  std::int64_t offset = 0;
  for (std::size_t g = groups.size(); g-- > 0;) {
    offset += (flat % groups[g].size) * groups[g].stride;
    flat /= groups[g].size;
  }
  return offset;
}

// The offsets of `groups` in row-major order, from the multi-index of rank `flat`.
class Odometer {
 public:
  Odometer(std::span<const Group> groups, std::int64_t flat)
      : groups_(groups), index_(Shape::filled(groups.size(), 0)) {
    for (std::size_t g = groups.size(); g-- > 0;) {
      index_[g] = flat % groups[g].size;
      offset_ += index_[g] * groups[g].stride;
      flat /= groups[g].size;
    }
  }
  std::int64_t offset() const noexcept { return offset_; }
  void next() noexcept {
    for (std::size_t g = groups_.size(); g-- > 0;) {
      if (++index_[g] < groups_[g].size) {
        offset_ += groups_[g].stride;
        return;
      }
      offset_ -= (groups_[g].size - 1) * groups_[g].stride;
      index_[g] = 0;
    }
  }

 private:
  std::span<const Group> groups_;
  Shape index_;
  std::int64_t offset_ = 0;
};

Layout coalesce(const Tensor& x, const std::vector<bool>& reduced) {
  Layout layout;
  bool previous_reduced = false;
  bool have_previous = false;
  std::int64_t stride = 1;
  for (std::size_t a = x.dim(); a-- > 0;) {
    const std::int64_t size = x.shape()[a];
    if (size == 1) continue;
    const bool is_reduced = reduced[a];
    std::vector<Group>& groups = is_reduced ? layout.reduced : layout.kept;
    if (have_previous && previous_reduced == is_reduced) {
      groups.back().size *= size;
    } else {
      if (!have_previous) layout.innermost_reduced = is_reduced;
      groups.push_back({size, stride});
    }
    have_previous = true;
    previous_reduced = is_reduced;
    stride *= size;
  }
  // Built innermost first.
  std::reverse(layout.kept.begin(), layout.kept.end());
  std::reverse(layout.reduced.begin(), layout.reduced.end());
  return layout;
}

// Blocks per chunk: a power of two (Note [Reduction layout]) near kChunkElements elements.
std::int64_t chunk_blocks(std::int64_t elements_per_block) {
  return static_cast<std::int64_t>(std::bit_floor(
      static_cast<std::uint64_t>(std::max<std::int64_t>(1, kChunkElements / elements_per_block))));
}

// The chunk partials of one output (or column) in order, combined; the last chunk is incomplete
// when the blocks do not fill it.
template <class M>
typename M::Acc combine_chunks(const typename M::Acc* partials, std::int64_t chunks,
                               bool last_incomplete) {
  detail::PairwiseCombiner<M> combiner;
  const std::int64_t complete = last_incomplete ? chunks - 1 : chunks;
  for (std::int64_t c = 0; c < complete; ++c) combiner.push(partials[c]);
  return last_incomplete ? combiner.total_after(partials[complete]) : combiner.total();
}

// The innermost group is reduced: outputs in row-major order of the kept groups.
template <class P>
void reduce_rows(const typename P::Element* xs, const Layout& layout, std::int64_t count,
                 typename P::Element* os) {
  using M = typename P::Monoid;
  using Acc = typename M::Acc;
  const std::span<const Group> kept(layout.kept);
  const std::int64_t run = layout.reduced.back().size;  // contiguous
  const std::span<const Group> outer(layout.reduced.data(), layout.reduced.size() - 1);
  const std::int64_t outputs = product(kept);
  const std::int64_t blocks_per_run = ceil_div(run, detail::kCascadeBlock);
  const std::int64_t blocks = product(outer) * blocks_per_run;
  const std::int64_t per_chunk = chunk_blocks(detail::kCascadeBlock);
  const std::int64_t chunks = ceil_div(blocks, per_chunk);

  // The partial of blocks [first, end) of output o.
  auto chunk_partial = [&](std::int64_t o, std::int64_t first, std::int64_t end) {
    const auto* base = xs + offset_of(o, kept);
    detail::PairwiseCombiner<M> combiner;
    for (std::int64_t b = first; b < end; ++b) {
      const auto* slice = base + offset_of(b / blocks_per_run, outer);
      const std::int64_t begin = (b % blocks_per_run) * detail::kCascadeBlock;
      combiner.push(
          detail::block_partial<M>(begin, std::min(run, begin + detail::kCascadeBlock),
                                   [slice](std::int64_t i) { return P::load(slice[i]); }));
    }
    return combiner.total();
  };

  if (chunks == 1) {
    detail::parallel_for(outputs, count, [&](std::int64_t o) {
      os[o] = P::finish(chunk_partial(o, 0, blocks), count);
    });
    return;
  }
  std::vector<Acc> partials(static_cast<std::size_t>(outputs * chunks));
  detail::parallel_for(outputs * chunks, per_chunk * detail::kCascadeBlock, [&](std::int64_t t) {
    const std::int64_t first = (t % chunks) * per_chunk;
    partials[t] = chunk_partial(t / chunks, first, std::min(blocks, first + per_chunk));
  });
  for (std::int64_t o = 0; o < outputs; ++o) {
    os[o] =
        P::finish(combine_chunks<M>(&partials[o * chunks], chunks, blocks % per_chunk != 0), count);
  }
}

// acc[c] combined with row[c] for the `columns` (<= kStrip) columns of a strip. A full strip has a
// trip count known at compile time and the arrays are declared not to alias, so g++ -O2 (whose
// cheap cost model adds no epilogue and no run-time alias check) vectorises it: 4x faster on
// bfloat16 columns.
template <class P>
void add_row(typename P::Monoid::Acc* __restrict acc, const typename P::Element* __restrict row,
             std::int64_t columns) {
  using M = typename P::Monoid;
  if (columns == kStrip) {
    for (std::int64_t c = 0; c < kStrip; ++c) acc[c] = M::combine(acc[c], P::load(row[c]));
  } else {
    for (std::int64_t c = 0; c < columns; ++c) acc[c] = M::combine(acc[c], P::load(row[c]));
  }
}

// The innermost group is kept: strips of adjacent outputs, each reduced over every slice.
template <class P>
void reduce_columns(const typename P::Element* xs, const Layout& layout, std::int64_t count,
                    typename P::Element* os) {
  using M = typename P::Monoid;
  using Acc = typename M::Acc;
  // No group at all (a scalar, or only axes of length 1): one output, kept as a group of one.
  std::vector<Group> kept = layout.kept;
  if (kept.empty()) kept.push_back({1, 1});
  const std::int64_t width = kept.back().size;  // contiguous
  const std::span<const Group> outer(kept.data(), kept.size() - 1);
  const std::span<const Group> slices(layout.reduced);
  const std::int64_t strips = ceil_div(width, kStrip);
  const std::int64_t tiles = product(outer) * strips;
  const std::int64_t blocks = ceil_div(count, kSlicesPerBlock);
  const std::int64_t per_chunk = chunk_blocks(kSlicesPerBlock * std::min(width, kStrip));
  const std::int64_t chunks = ceil_div(blocks, per_chunk);

  auto columns_of = [&](std::int64_t tile) {
    return std::min(kStrip, width - (tile % strips) * kStrip);
  };
  auto output_of = [&](std::int64_t tile) {
    return os + (tile / strips) * width + (tile % strips) * kStrip;
  };
  // Writes the partials of blocks [first, end) of `tile` to `partial` (one per column).
  auto chunk_partial = [&](std::int64_t tile, std::int64_t first, std::int64_t end, Acc* partial) {
    const std::int64_t columns = columns_of(tile);
    const auto* base = xs + offset_of(tile / strips, outer) + (tile % strips) * kStrip;
    detail::ColumnCombiner<M> combiner(columns, static_cast<std::uint64_t>(end - first));
    Odometer slice(slices, first * kSlicesPerBlock);
    Acc acc[kStrip];
    for (std::int64_t b = first; b < end; ++b) {
      std::fill(acc, acc + columns, M::identity());
      const std::int64_t in_block = std::min(kSlicesPerBlock, count - b * kSlicesPerBlock);
      for (std::int64_t s = 0; s < in_block; ++s, slice.next()) {
        add_row<P>(acc, base + slice.offset(), columns);
      }
      combiner.push(acc);
    }
    combiner.total(partial);
  };

  if (chunks == 1) {
    detail::parallel_for(tiles, count * kStrip, [&](std::int64_t tile) {
      Acc partial[kStrip];
      chunk_partial(tile, 0, blocks, partial);
      auto* out = output_of(tile);
      for (std::int64_t c = 0; c < columns_of(tile); ++c) out[c] = P::finish(partial[c], count);
    });
    return;
  }
  std::vector<Acc> partials(static_cast<std::size_t>(tiles * chunks * kStrip));
  detail::parallel_for(tiles * chunks, kChunkElements, [&](std::int64_t t) {
    const std::int64_t first = (t % chunks) * per_chunk;
    chunk_partial(t / chunks, first, std::min(blocks, first + per_chunk), &partials[t * kStrip]);
  });
  const bool last_incomplete = blocks % per_chunk != 0;
  detail::parallel_for(tiles, chunks * kStrip, [&](std::int64_t tile) {
    const std::int64_t columns = columns_of(tile);
    detail::ColumnCombiner<M> combiner(columns, static_cast<std::uint64_t>(chunks));
    Acc* chunk = &partials[tile * chunks * kStrip];
    const std::int64_t complete = last_incomplete ? chunks - 1 : chunks;
    for (std::int64_t c = 0; c < complete; ++c) combiner.push(chunk + c * kStrip);
    Acc total[kStrip];
    combiner.total(total, last_incomplete ? chunk + complete * kStrip : nullptr);
    auto* out = output_of(tile);
    for (std::int64_t c = 0; c < columns; ++c) out[c] = P::finish(total[c], count);
  });
}

template <class P>
void reduce(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  using T = typename P::Element;
  T* os = out.data<T>();
  std::int64_t count = 1;  // elements reduced into each output
  for (std::size_t a = 0; a < x.dim(); ++a) {
    if (reduced[a]) count *= x.shape()[a];
  }
  if (x.numel() == 0) {
    std::fill(os, os + out.numel(), P::finish(P::Monoid::identity(), count));
    return;
  }
  const Layout layout = coalesce(x, reduced);
  if (layout.innermost_reduced) {
    reduce_rows<P>(x.data<const T>(), layout, count, os);
  } else {
    reduce_columns<P>(x.data<const T>(), layout, count, os);
  }
}

}  // namespace

void sum(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  detail::dispatch_float(x.dtype(), "sum(cpu)", "x", [&]<class T>(std::type_identity<T>) {
    reduce<SumOf<T>>(x, reduced, out);
  });
}

void mean(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  detail::dispatch_float(x.dtype(), "mean(cpu)", "x", [&]<class T>(std::type_identity<T>) {
    reduce<MeanOf<T>>(x, reduced, out);
  });
}

void amax(const Tensor& x, const std::vector<bool>& reduced, Tensor& out) {
  detail::dispatch_float_or_int(x.dtype(), "amax(cpu)", "x", [&]<class T>(std::type_identity<T>) {
    reduce<AmaxOf<T>>(x, reduced, out);
  });
}

}  // namespace tileops::kernels::cpu
