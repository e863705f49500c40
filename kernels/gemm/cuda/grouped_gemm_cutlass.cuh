// GroupedGemmFwdOp on CUTLASS's sm90 grouped GEMM (Note [CUTLASS grouped GEMM]): the kernel type
// for an element type, a weight layout and a schedule, the kernel of ours that arranges its
// per-group arguments from the device offsets, and the host side that launches both. Included by
// the grouped_gemm_cutlass_*.cu files, one per element type and weight layout, and by
// bench/experiments/grouped_gemm_cutlass.cu, which times other schedules.
//
// Note [CUTLASS grouped GEMM]
// CUTLASS's grouped kernel (TMA loads, WGMMA, warp-specialised and persistent: one CTA per SM that
// walks the tiles of every group) reads each group's problem shape, operand pointers and strides
// from arrays in device memory. Our offsets live on the device too, so one small kernel of ours,
// launched first on the same stream, writes those arrays; the host never reads an offset:
//
//   - Block 0 computes the clamped ends end_g = min(M, max(0, offsets[0..g])) with a block-wide
//     prefix maximum (CUB's BlockScan), as the wmma kernel does (Note [Grouped GEMM kernel] in
//     grouped_gemm.cuh): whatever offsets holds, every row CUTLASS reads or writes lies in [0, M).
//     Group g is rows [end_{g-1}, end_g): its shape (rows, N, K), its pointers x + begin * K,
//     w + g * expert stride, out + begin * N, and the strides. A group of no rows has no tile.
//     In the checking mode it reports the first negative, decreasing or past-M offset.
//   - Every block zeroes its share of the rows past end_{E-1}, which the manifest defines as 0
//     (none in a well-formed call, where the blocks only read the offsets and exit).
//
// The arrays and CUTLASS's own workspace (a TMA descriptor per operand per SM, which the kernel
// rewrites for each group) are one stream-ordered allocation per call, so that calls on different
// streams never share them. TMA needs 16-byte aligned global addresses and strides: x, w and out
// 16-byte aligned, K and N multiples of 8 elements, and the weight's expert stride too; the
// implementation refuses other calls (grouped_gemm_kernels.hpp) and the wmma kernel serves them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>

#include <cstddef>
#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/group_array_problem_shape.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <string>
#include <type_traits>

#include "cuda/check.hpp"
#include "kernels/common/cuda/kernel_check.cuh"
#include "kernels/gemm/cuda/grouped_gemm_cutlass_launch.hpp"
#include "kernels/gemm/cuda/grouped_gemm_launch.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda::cutlass_grouped {

// Schedules: the tile one CTA computes (M x N x K-step), the cluster of CTAs that share operand
// loads through TMA multicast, and CUTLASS's warp-specialised kernel and epilogue schedules.
// Cooperative: two consumer warpgroups split one tile; ping-pong: each consumer warpgroup owns a
// tile and their main loops and epilogues alternate.
template <class Kernel, class Epilogue, int kM, int kN, int kK, int kClusterM, int kClusterN>
struct TileSchedule {
  using Tile = cute::Shape<cute::Int<kM>, cute::Int<kN>, cute::Int<kK>>;
  using Cluster = cute::Shape<cute::Int<kClusterM>, cute::Int<kClusterN>, cute::_1>;
  using KernelSchedule = Kernel;
  using EpilogueSchedule = Epilogue;
};
template <int kM, int kN, int kK, int kClusterM, int kClusterN>
using Cooperative = TileSchedule<cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative,
                                 cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative, kM, kN,
                                 kK, kClusterM, kClusterN>;
template <int kM, int kN, int kK, int kClusterM, int kClusterN>
using Pingpong = TileSchedule<cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong,
                              cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong, kM, kN, kK,
                              kClusterM, kClusterN>;

// Note [Grouped GEMM schedules]
// The library's two schedules, chosen per call from the rows per group, M / E (known on the host
// without reading offsets). Both are cooperative 128 x 256 x 64 tiles; they differ in the cluster.
// Measured on the H200 against 11 others (bench/experiments/grouped_gemm_sweep.sh; results in
// bench/results/2026-12-02-h200-grouped-gemm-cutlass.md):
//   - groups of about one tile of rows (DeepSeek-V3's 256 experts, 128 rows each on average):
//     one CTA per cluster; pairs of CTAs sharing x's tile were 20% slower on the up projection
//     (1.80 ms against 2.2-2.5) and even on the down projection;
//   - groups of hundreds of rows (Mixtral's 8 experts, 512 rows each): a 1 x 2 cluster, the two
//     CTAs of a pair reading one x tile once through TMA multicast, 5% faster (1.41 ms
//     against 1.48).
// A 128-row tile height suits groups of ~128 rows; 64-row ping-pong tiles, 256-row tiles and
// 2 x 1 clusters lost on every workload.
using SmallGroupsSchedule = Cooperative<128, 256, 64, 1, 1>;
using LargeGroupsSchedule = Cooperative<128, 256, 64, 1, 2>;
inline bool large_groups(std::int64_t rows, std::int64_t groups) { return rows >= 256 * groups; }

// CUTLASS's names for the library's 16-bit types (the same bits).
template <class T>
struct CutlassElement;
template <>
struct CutlassElement<__half> {
  using type = cutlass::half_t;
};
template <>
struct CutlassElement<__nv_bfloat16> {
  using type = cutlass::bfloat16_t;
};

// In CUTLASS's terms a GEMM is D [M, N] = A [M, K] B^T with B [N, K]: x is A, row-major (K-major);
// w[g] [K, N] is B, N-major when w is row-major (CUTLASS's RowMajor B) and K-major when it is the
// transposed view of [N, K] (ColumnMajor); out is D, row-major. No source operand C (void): out is
// written, not accumulated into.
template <class T, bool kWColumnMajor, class Schedule>
struct GroupedGemm {
  using Element = typename CutlassElement<T>::type;
  using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB =
      std::conditional_t<kWColumnMajor, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
  using LayoutD = cutlass::layout::RowMajor;
  static constexpr int kAlignment = 16 / sizeof(Element);

  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, typename Schedule::Tile,
      typename Schedule::Cluster, cutlass::epilogue::collective::EpilogueTileAuto, float, float,
      void, LayoutD*, kAlignment, Element, LayoutD*, kAlignment,
      typename Schedule::EpilogueSchedule,
      cutlass::epilogue::fusion::LinearCombination<Element, float, void, float>>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA*, kAlignment, Element,
      LayoutB*, kAlignment, float, typename Schedule::Tile, typename Schedule::Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      typename Schedule::KernelSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using Arguments = typename Adapter::Arguments;

  using Shape = typename ProblemShape::UnderlyingProblemShape;
  using StrideA = typename Kernel::InternalStrideA;
  using StrideB = typename Kernel::InternalStrideB;
  using StrideD = typename Kernel::InternalStrideD;

  // The per-group arrays CUTLASS reads, in the call's workspace.
  struct Groups {
    Shape* shapes = nullptr;
    const Element** a = nullptr;
    const Element** b = nullptr;
    Element** d = nullptr;
    StrideA* stride_a = nullptr;
    StrideB* stride_b = nullptr;
    StrideD* stride_d = nullptr;
  };
};

constexpr int kArrangeThreads = 256;

// Block 0 writes the per-group arrays, and every block zeroes its share of the rows past the last
// group (Note [CUTLASS grouped GEMM]).
template <class G>
__global__ void __launch_bounds__(kArrangeThreads)
    arrange_groups(const GroupedGemmTensors t, const typename G::Groups groups,
                   KernelCheckRecord* const check) {
  using Element = typename G::Element;
  using Scan = cub::BlockScan<std::int64_t, kArrangeThreads>;
  using Reduce = cub::BlockReduce<std::int64_t, kArrangeThreads>;
  __shared__ union {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
  } temp;
  __shared__ std::int64_t carried_end;
  const auto* const offsets = static_cast<const std::int32_t*>(t.offsets);
  const auto max_op = [](std::int64_t a, std::int64_t b) { return a > b ? a : b; };

  if (blockIdx.x == 0) {
    const auto* const x = static_cast<const Element*>(t.x);
    const auto* const w = static_cast<const Element*>(t.w);
    auto* const out = static_cast<Element*>(t.out);
    std::int64_t carry = 0;  // end of the previous chunk's last group
    for (std::int64_t base = 0; base < t.groups; base += kArrangeThreads) {
      const std::int64_t g = base + threadIdx.x;
      const bool in = g < t.groups;
      const std::int64_t offset = in ? offsets[g] : 0;
      if (check != nullptr && in &&
          (offset < 0 || offset > t.m || (g > 0 && offset < offsets[g - 1])))
        report_kernel_check(check, g, offset);
      std::int64_t reached = 0;
      Scan(temp.scan).InclusiveScan(offset, reached, max_op);
      reached = max_op(reached, carry);
      const std::int64_t end = reached < t.m ? reached : t.m;
      __syncthreads();         // the scan's storage is reused
      std::int64_t begin = 0;  // the end of group g - 1
      Scan(temp.scan).ExclusiveScan(end, begin, max_op);
      if (threadIdx.x == 0) begin = carry;
      if (in) {
        groups.shapes[g] = typename G::Shape(static_cast<int>(end - begin), static_cast<int>(t.n),
                                             static_cast<int>(t.k));
        groups.a[g] = x + begin * t.k;
        groups.b[g] = w + g * t.w_expert;
        groups.d[g] = out + begin * t.n;
        groups.stride_a[g] = cute::make_stride(t.k, cute::Int<1>{}, cute::Int<0>{});
        if constexpr (std::is_same_v<typename G::LayoutB, cutlass::layout::RowMajor>)
          groups.stride_b[g] = cute::make_stride(cute::Int<1>{}, t.w_ld, cute::Int<0>{});
        else
          groups.stride_b[g] = cute::make_stride(t.w_ld, cute::Int<1>{}, cute::Int<0>{});
        groups.stride_d[g] = cute::make_stride(t.n, cute::Int<1>{}, cute::Int<0>{});
      }
      if (threadIdx.x == kArrangeThreads - 1) carried_end = end;
      __syncthreads();
      carry = carried_end;
      __syncthreads();
    }
  }

  // The rows past the last end: [min(M, max(0, max offsets)), M).
  std::int64_t most = 0;
  for (std::int64_t g = threadIdx.x; g < t.groups; g += kArrangeThreads)
    most = max_op(most, offsets[g]);
  most = Reduce(temp.reduce).Reduce(most, max_op);
  if (threadIdx.x == 0) carried_end = most < t.m ? most : t.m;
  __syncthreads();
  const std::int64_t tail = carried_end;
  // N is a multiple of 8 and out 16-byte aligned (the refusal): whole 16-byte chunks.
  const std::int64_t chunks = (t.m - tail) * t.n / 8;
  auto* const zeros = reinterpret_cast<uint4*>(static_cast<Element*>(t.out) + tail * t.n);
  for (std::int64_t c = blockIdx.x * std::int64_t{kArrangeThreads} + threadIdx.x; c < chunks;
       c += std::int64_t{gridDim.x} * kArrangeThreads)
    zeros[c] = make_uint4(0, 0, 0, 0);
}

// The call's workspace: CUTLASS's at the start (its TMA descriptors want 128-byte alignment; the
// allocation gives 256), the per-group arrays after it.
template <class G>
struct WorkspaceLayout {
  static constexpr std::size_t kAlign = 128;
  static std::size_t up(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

  std::size_t cutlass_bytes = 0;
  std::size_t shapes = 0, a = 0, b = 0, d = 0, stride_a = 0, stride_b = 0, stride_d = 0;
  std::size_t total = 0;

  WorkspaceLayout(std::size_t cutlass, std::int64_t groups_count) {
    const auto e = static_cast<std::size_t>(groups_count);
    cutlass_bytes = up(cutlass);
    std::size_t at = cutlass_bytes;
    const auto place = [&](std::size_t bytes) {
      const std::size_t here = at;
      at += up(bytes);
      return here;
    };
    shapes = place(e * sizeof(typename G::Shape));
    a = place(e * sizeof(void*));
    b = place(e * sizeof(void*));
    d = place(e * sizeof(void*));
    stride_a = place(e * sizeof(typename G::StrideA));
    stride_b = place(e * sizeof(typename G::StrideB));
    stride_d = place(e * sizeof(typename G::StrideD));
    total = at;
  }

  typename G::Groups groups(void* workspace) const {
    auto* base = static_cast<unsigned char*>(workspace);
    typename G::Groups g;
    g.shapes = reinterpret_cast<typename G::Shape*>(base + shapes);
    g.a = reinterpret_cast<const typename G::Element**>(base + a);
    g.b = reinterpret_cast<const typename G::Element**>(base + b);
    g.d = reinterpret_cast<typename G::Element**>(base + d);
    g.stride_a = reinterpret_cast<typename G::StrideA*>(base + stride_a);
    g.stride_b = reinterpret_cast<typename G::StrideB*>(base + stride_b);
    g.stride_d = reinterpret_cast<typename G::StrideD*>(base + stride_d);
    return g;
  }
};

// CUTLASS's arguments for `groups` groups whose arrays are `g`, on `sm_count` SMs.
template <class G>
typename G::Arguments arguments(std::int64_t groups_count, const typename G::Groups& g, int device,
                                int sm_count) {
  cutlass::KernelHardwareInfo hw;
  hw.device_id = device;
  hw.sm_count = sm_count;
  typename G::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGrouped,
      {static_cast<int>(groups_count), g.shapes, nullptr},  // shapes on the device only
      {g.a, g.stride_a, g.b, g.stride_b},
      {{}, nullptr, g.stride_d, g.d, g.stride_d},  // alpha 1, beta 0, no C
      hw};
  return args;
}

inline void check_status(cutlass::Status status, const char* what) {
  if (status != cutlass::Status::kSuccess)
    throw CheckError(std::string("grouped_gemm_cutlass (cuda): ") + what + ": " +
                     cutlassGetStatusString(status));
}

template <class G>
std::size_t workspace_bytes(std::int64_t groups_count, int device, int sm_count) {
  const auto args = arguments<G>(groups_count, typename G::Groups{}, device, sm_count);
  return WorkspaceLayout<G>(G::Adapter::get_workspace_size(args), groups_count).total;
}

// Once per entry, on its device: the kernel's shared memory exceeds the default 48 KiB.
template <class G>
void prepare() {
  TILEOPS_CUDA_CHECK(cudaFuncSetAttribute(cutlass::device_kernel<typename G::Kernel>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(G::Kernel::SharedStorageSize)));
}

template <class G>
void launch(const GroupedGemmTensors& t, void* workspace, int device, int sm_count,
            KernelCheckRecord* check, cudaStream_t stream) {
  const auto empty_args = arguments<G>(t.groups, typename G::Groups{}, device, sm_count);
  const WorkspaceLayout<G> layout(G::Adapter::get_workspace_size(empty_args), t.groups);
  const typename G::Groups groups = layout.groups(workspace);

  // Enough blocks to zero a whole output at full bandwidth, one when there is nothing to zero.
  const std::int64_t chunks = t.m * t.n / 8;
  const std::int64_t wanted = (chunks + kArrangeThreads - 1) / kArrangeThreads;
  const std::int64_t most = std::int64_t{sm_count} * 4;
  const auto blocks = static_cast<unsigned>(wanted < 1 ? 1 : (wanted < most ? wanted : most));
  arrange_groups<G><<<blocks, kArrangeThreads, 0, stream>>>(t, groups, check);
  TILEOPS_CUDA_CHECK_LAUNCH();
  if (t.m == 0 || t.n == 0) return;

  const auto args = arguments<G>(t.groups, groups, device, sm_count);
  check_status(G::Kernel::initialize_workspace(args, workspace, stream), "initialize_workspace");
  auto params = G::Kernel::to_underlying_arguments(args, workspace);
  check_status(G::Adapter::run(params, stream), "launch");
  TILEOPS_CUDA_CHECK_LAUNCH();
}

}  // namespace tileops::kernels::cuda::cutlass_grouped

namespace tileops::kernels::cuda {

// The library's kernels (grouped_gemm_cutlass_launch.hpp), instantiated by the
// grouped_gemm_cutlass_<type>_<layout>.cu files: both schedules of Note [Grouped GEMM schedules].
template <DType kDType>
using DeviceElement = std::conditional_t<kDType == DType::kFloat16, __half, __nv_bfloat16>;
template <DType kDType, bool kWColumnMajor, class Schedule>
using LibraryGroupedGemm =
    cutlass_grouped::GroupedGemm<DeviceElement<kDType>, kWColumnMajor, Schedule>;

template <DType kDType, bool kWColumnMajor>
std::size_t CutlassGroupedGemm<kDType, kWColumnMajor>::workspace_bytes(std::int64_t groups,
                                                                       int device, int sm_count) {
  using namespace cutlass_grouped;
  const std::size_t small = cutlass_grouped::workspace_bytes<
      LibraryGroupedGemm<kDType, kWColumnMajor, SmallGroupsSchedule>>(groups, device, sm_count);
  const std::size_t large = cutlass_grouped::workspace_bytes<
      LibraryGroupedGemm<kDType, kWColumnMajor, LargeGroupsSchedule>>(groups, device, sm_count);
  return small > large ? small : large;
}

template <DType kDType, bool kWColumnMajor>
void CutlassGroupedGemm<kDType, kWColumnMajor>::prepare() {
  using namespace cutlass_grouped;
  cutlass_grouped::prepare<LibraryGroupedGemm<kDType, kWColumnMajor, SmallGroupsSchedule>>();
  cutlass_grouped::prepare<LibraryGroupedGemm<kDType, kWColumnMajor, LargeGroupsSchedule>>();
}

template <DType kDType, bool kWColumnMajor>
void CutlassGroupedGemm<kDType, kWColumnMajor>::launch(const GroupedGemmTensors& tensors,
                                                       void* workspace, int device, int sm_count,
                                                       KernelCheckRecord* check, void* stream) {
  using namespace cutlass_grouped;
  const auto s = static_cast<cudaStream_t>(stream);
  if (large_groups(tensors.m, tensors.groups))
    return cutlass_grouped::launch<LibraryGroupedGemm<kDType, kWColumnMajor, LargeGroupsSchedule>>(
        tensors, workspace, device, sm_count, check, s);
  cutlass_grouped::launch<LibraryGroupedGemm<kDType, kWColumnMajor, SmallGroupsSchedule>>(
      tensors, workspace, device, sm_count, check, s);
}

}  // namespace tileops::kernels::cuda
