// Rows staged in shared memory by the copy engine (TMA's one-dimensional bulk copy,
// cp.async.bulk), completed on an mbarrier: the primitives the row kernels of the norm and softmax
// families share. Framework-free, like vec.cuh; sm_90 and later.
//
// Note [Staged rows]
// A block that holds its row in registers keeps 2-4 rows in flight per multiprocessor (the
// register file is the limit) and leaves DRAM idle while its reductions run. A row staged in
// shared memory costs no registers: thread 0 starts one bulk copy per row, every thread waits on
// the barrier, and the passes over the row read shared memory. An SM then keeps as many rows in
// flight as its 227 KB hold (13 rows of 16 KB), and the copies of later blocks overlap the
// reductions and stores of earlier ones. Measured on the H200 (bfloat16, % of the 4.25 TB/s copy;
// bench/results/2026-12-02-h200-staged-rows.md, the experiment bench/experiments/norm_bulk.cu),
// in registers -> staged, in the library:
//   - softmax [4096, 16384] 78.8% -> 89.3%, [16384, 8192] 84.1% -> 91.5% (log_softmax alike);
//   - LayerNorm [16384, 8192] 82.3% -> 86.4%, [4096, 16384] 75.3% -> 80.7%;
//   - FusedAddRMSNorm [4096, 16384] 86.9% -> 89.0%;
//   - a single row of 4096 (decode), the weight staged with it: RMSNorm 3.02 -> 2.52 us,
//     LayerNorm 4.70 -> 3.05 us (0.50 us for an empty kernel); softmax 3.8 -> 2.4 us in the
//     experiment;
//   - RMSNorm with many rows is 1-2 points faster in registers (one reduction, a short chain), and
//     rows of 8 KB or less are as fast or faster in registers for every op: those keep the
//     register kernels. Measured again once both prefetch their rows before the dependent wait
//     (bench/results/2026-12-02-h200-row-prefetch.md; staged / registers): RMSNorm [2048, 8192]
//     76.4 / 80.8%, [16384, 8192] 92.5 / 93.0%, [4096, 16384] 90.2 / 89.5%, [2048, 16384]
//     85.2 / 84.7%: RMSNorm stays in registers.
// A block serves one row and exits: a block that walked rows, one barrier phase each, took 46
// registers where one row takes 40, and LayerNorm fell back to 82% / 70%.
// The copy needs 16-byte aligned addresses and sizes (the vector paths' refusal already demands
// them) and a barrier transaction count below 2^20 bytes (the staged rows are at most 192 KB).
#pragma once

#include <cstdint>

namespace tileops::kernels::cuda {

// A shared-memory barrier a bulk copy completes on.
struct alignas(8) StageBarrier {
  std::uint64_t word;
};

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// One thread: the barrier expects one arrival per phase, made visible to the copy engine.
__device__ __forceinline__ void stage_barrier_init(StageBarrier& bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&bar)));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One thread: arrives on the barrier, expecting `bytes` from the copies of this phase.
__device__ __forceinline__ void stage_barrier_expect(StageBarrier& bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(&bar)),
               "r"(bytes)
               : "memory");
}

// One thread: copies [src, src + bytes) to dst in shared memory, completing on `bar`. With
// `evict_first` the source lines are marked first to leave L2 (data read once).
__device__ __forceinline__ void stage_copy(void* dst, const void* src, unsigned bytes,
                                           StageBarrier& bar, bool evict_first = false) {
  if (evict_first) {
    std::uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1], %2, [%3], %4;" ::"r"(shared_address(dst)),
        "l"(src), "r"(bytes), "r"(shared_address(&bar)), "l"(policy)
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1], %2, [%3];" ::"r"(shared_address(dst)),
        "l"(src), "r"(bytes), "r"(shared_address(&bar))
        : "memory");
  }
}

// Every thread: waits until the phase of parity `phase` has completed (its copies landed).
__device__ __forceinline__ void stage_barrier_wait(StageBarrier& bar, unsigned phase) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}" ::"r"(shared_address(&bar)),
      "r"(phase)
      : "memory");
}

}  // namespace tileops::kernels::cuda
