// The kernels' side of programmatic dependent launch (Note [Dependent launch] in
// src/cuda/dependent_launch.hpp). Framework-free, like vec.cuh; sm_90 and later.
#pragma once

#include <cstdint>

namespace tileops::kernels::cuda {

// Every thread of a kernel launched by launch_dependent calls this before its first read or
// write of global memory: it waits until the previous kernel of the stream has completed and its
// writes are visible (nothing when the launch did not overlap), then lets the next kernel of the
// stream be placed on the device, whose blocks wait the same way before touching memory.
__device__ __forceinline__ void begin_dependent_kernel() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// Note [Prefetch before the wait]
// What a dependent kernel's blocks can do while the previous kernel still runs, before
// begin_dependent_kernel(): ask for their operands in L2. A prefetch writes nothing and L2 is
// where every kernel's stores land, so it is correct even for lines the previous kernel is still
// writing (those are then fetched again or hit its fresh copy); what it buys is the DRAM latency
// of the cold operands, taken while the previous kernel runs instead of after it. A decode-sized
// call is that latency: measured on the H200 (bench/experiments/dependent_launch.cu,
// bench/results/2026-12-02-h200-decode-prefetch.md, rows of 4096 bfloat16 rotated beyond the L2),
// a kernel that reads a row and a weight and writes the product takes 1.14 us, 0.91 us with both
// prefetched; RMSNorm 1.62 -> 1.30 us. Prefetching only the weights (which a real previous
// kernel does not write, while it usually has just written the row into L2) saves 0.05-0.1 us of
// that: the rest is the benchmark's cold rows, which in a model would be warm already.
// Bandwidth-bound calls gain too, at their first wave: the blocks placed while the previous
// kernel's last wave drains ask for their rows then, so DRAM stays busy through that tail. The row
// kernels of the norms (register and staged), softmax (register and staged), RoPE and the
// elementwise and activation kernels do it. Measured on the H200 (tileops bench, bf16, % of the
// 4.25 TB/s copy; bench/results/2026-12-02-h200-row-prefetch.md): FusedAddRMSNorm [16384, 8192]
// 90.6 -> 94.6%, [4096, 16384] 89.2 -> 92.6%; RoPE on query [16384, 32, 128] and key
// [16384, 8, 128] 93.5 -> 97.9%, its Llama-3-8B prefill (2048 tokens) 81.2 -> 86.1%, 70B
// 82.9 -> 89.8%; softmax over [32, 32, 4096] (8 MiB) 53.8 -> 64.0%. RMSNorm's register kernel
// and LayerNorm's staged one moved within noise.
// Those gains were measured together with the dependent launch itself. Measured apart from it
// (dependent launches both, with and without the prefetch, in one call;
// bench/results/2026-12-03-h200-prefetch-before-wait.md), the prefetch is not a gain everywhere:
//   - the reductions' held rows lost 4-14 points to it (Sum [2048, 14336] 85.5 -> 95.6% without
//     it) and no longer prefetch (Note [Held rows] in reduce_axes.cuh);
//   - the norms' fixed-length kernels gain from it in `tileops bench` (RMSNorm [2048, 16384]
//     89.0 -> 86.5% without it, LayerNorm 86.5 -> 82.8%; bandwidth rows within 1-2 points either
//     way), though bench/experiments/norm_ring.cu (`prefetch` mode), timing its own copy of the
//     kernel, measured the opposite (RMSNorm [2048, 8192] 85.7 -> 87.8% without it). They keep
//     it. Timed in the bench's own batches the experiment still finds it slower, and the library
//     without it measured slower again in `tileops bench` (RMSNorm [2048, 16384] 89.6 -> 86.7%;
//     bench/results/2026-12-04-h200-fixed-rows-prefetch-ab.md): the batching does not separate
//     the two harnesses; what does is open.

// Asks for `bytes` from `p` (16-byte aligned, a multiple of 16, above 0) to be brought into L2,
// without waiting for them (cp.async.bulk.prefetch, sm_90).
__device__ __forceinline__ void prefetch_l2(const void* p, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
}

// prefetch_l2 of the 16-byte vectors [first, first + count) of `vectors` (all of them when fewer
// remain): what one thread of a block asks for before the wait, for the block's first chunk of an
// elementwise kernel. Nothing when the range is empty.
__device__ __forceinline__ void prefetch_vectors_l2(const void* vectors, std::int64_t first,
                                                    std::int64_t count, std::int64_t total) {
  if (first >= total) return;
  const std::int64_t n = count < total - first ? count : total - first;
  prefetch_l2(static_cast<const char*>(vectors) + first * 16, static_cast<std::uint32_t>(n * 16));
}

// prefetch_l2 of the rows [first, first + count) of `rows` contiguous rows of `row_bytes` each
// (16-byte aligned, a multiple of 16), those past the last row left out: what one thread asks for
// before the wait, for its block's first rows of a row kernel (norm, softmax). The rows a block
// then reads are in L2 when the previous kernel ends, rather than requested after it: for the
// last wave of the previous kernel this is the tail a bandwidth-bound kernel otherwise leaves
// idle. Nothing when the range is empty; at most 4 GB less 16 bytes is asked for.
__device__ __forceinline__ void prefetch_rows_l2(const void* base, std::int64_t first,
                                                 std::int64_t count, std::int64_t rows,
                                                 std::int64_t row_bytes) {
  if (first >= rows || row_bytes <= 0) return;
  const std::int64_t n = count < rows - first ? count : rows - first;
  const std::int64_t bytes = n * row_bytes;
  constexpr std::int64_t kMost = 0xfffffff0;
  prefetch_l2(static_cast<const char*>(base) + first * row_bytes,
              static_cast<std::uint32_t>(bytes < kMost ? bytes : kMost));
}

}  // namespace tileops::kernels::cuda
