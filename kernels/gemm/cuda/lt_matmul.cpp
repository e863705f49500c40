// LtMatmul (lt_matmul.hpp): descriptors, candidates, the per-shape plan cache and tuning of one
// cuBLASLt product, with the classic cuBLAS API and our CUTLASS and decode kernels as more tuning
// candidates.
#include "kernels/gemm/cuda/lt_matmul.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/runtime.hpp"
#include "kernels/gemm/cuda/cublas_library.hpp"
#include "kernels/gemm/cuda/decode_gemm_launch.hpp"
#include "kernels/gemm/cuda/empty_product.hpp"
#include "kernels/gemm/cuda/gemm_cutlass_launch.hpp"
#include "kernels/gemm/cuda/lt_algo.hpp"
#include "kernels/gemm/cuda/tuning_bursts.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/tuning.hpp"

namespace tileops::kernels::cuda {
namespace {

// Note [cuBLASLt operand order]
// cuBLASLt reads column-major matrices. A row-major out [M, N] is, byte for byte, the column-major
// out^T [N, M], and out^T = b^T a^T; so cuBLASLt's A is our b and its B our a, with no copy and
// no CUBLASLT_ORDER_ROW (whose support across algorithms and epilogues is narrower). A row-major b
// [K, N] is the column-major b^T [N, K] as it stands (no transpose); a column-major b (W.t() of a
// Linear weight W [N, K]) is read transposed; likewise for a. The bias epilogue adds a vector
// along D's rows, which are our columns n: bias [N] as the manifest states it.
//
// Note [cuBLASLt workspace]
// An algorithm may ask for workspace (split-K partials, stream-K fix-ups). The heuristic is
// offered at most kMaxWorkspace, 32 MiB: the size torch gives cuBLAS and cuBLASLt on Hopper by
// default. Each call takes what its algorithm reports from the library's stream-ordered allocator
// on the call's stream (a capture records the allocation), so an entry holds no memory between
// calls.
constexpr std::size_t kMaxWorkspace = std::size_t{32} << 20;
// Candidates the heuristic is asked for: enough to tune over (the first 8 missed the best one of
// some decode shapes on the H200), few enough to time in milliseconds.
constexpr int kCandidates = 16;
// Note [The classic cuBLAS candidate]
// cuBLAS's own dispatch (cublasGemmEx) holds kernels that cuBLASLt's heuristic does not return:
// for one row (a [1, 4096] @ [4096, 6144] bf16 decode product on the H200) torch.mm's
// cublasGemmEx takes 15.8 us and the best of our 16 cuBLASLt candidates 17.8 us. So tuning times
// it too, as one more candidate, and keeps it only when it is faster; an untuned call never uses
// it. It takes the operands in cuBLASLt's order (Note [cuBLASLt operand order]) with
// CUBLAS_COMPUTE_32F, on a handle whose math mode disallows reduced-precision split-K reductions
// (Note [Split-K in float32]) and TF32. It serves calls whose sizes fit its int arguments; the
// classic API has no bias epilogue, so a bias is first written to every row of out (the K = 0
// kernel, empty_product.cu) and the product added to it with beta = 1. cublasSetStream resets the
// handle's workspace, and both are handle state, so each call sets the stream, then a workspace of
// kClassicWorkspace from the library's allocator on the call's stream, then runs, under the
// device's lock: cuBLAS never allocates on its own, which a graph capture could not record. 32 MiB,
// as kMaxWorkspace: what torch gives cuBLAS on Hopper, so that cuBLAS dispatches as it does under
// torch.mm, where it was measured.
constexpr std::size_t kClassicWorkspace = kMaxWorkspace;
// Exact shapes (M, batch and the operands' strides) whose plans an entry keeps; cleared when full.
constexpr std::size_t kPlanCacheCapacity = 64;
// The split-K reductions that keep the float32 sum (Note [Split-K in float32]).
constexpr std::uint32_t kFloat32Reductions =
    CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;

bool reduces_in_float32(const cublasLtMatmulAlgo_t& algo) {
  std::uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
  std::size_t written = 0;
  if (cublas().cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                                    &scheme, sizeof(scheme),
                                                    &written) != CUBLAS_STATUS_SUCCESS)
    return false;
  return (scheme & ~kFloat32Reductions) == 0;
}

struct LayoutDeleter {
  void operator()(cublasLtMatrixLayout_t layout) const noexcept {
    cublas().cublasLtMatrixLayoutDestroy(layout);
  }
};
using LayoutPtr = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;

cudaDataType_t lt_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return CUDA_R_16F;
    case DType::kBFloat16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

LayoutPtr make_layout(DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                      std::int64_t batch, std::int64_t batch_stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatrixLayoutCreate(&layout, lt_type(dtype),
                                                             static_cast<std::uint64_t>(rows),
                                                             static_cast<std::uint64_t>(cols), ld));
  LayoutPtr owned(layout);
  if (batch > kMaxLtBatch)  // the caller's pieces (BmmCublasLtSm90::forward) keep it within
    throw CheckError(
        fmt::format("an LtProblem holds at most {} matrices, not {}", kMaxLtBatch, batch));
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride, sizeof(batch_stride)));
  }
  return owned;
}

// The three layouts of one exact shape, in cuBLASLt's order (Note [cuBLASLt operand order]).
struct Layouts {
  LayoutPtr lt_a;    // our b
  LayoutPtr lt_b;    // our a
  LayoutPtr lt_out;  // C and D
};

Layouts make_layouts(const GemmCall& call, const LtProblem& p) {
  const std::int64_t m = p.m, n = call.n, k = call.k;
  Layouts l;
  l.lt_a = p.b.column_major ? make_layout(call.dtype, k, n, p.b.ld, p.batch, p.b.batch_stride)
                            : make_layout(call.dtype, n, k, p.b.ld, p.batch, p.b.batch_stride);
  l.lt_b = p.a.column_major ? make_layout(call.dtype, m, k, p.a.ld, p.batch, p.a.batch_stride)
                            : make_layout(call.dtype, k, m, p.a.ld, p.batch, p.a.batch_stride);
  l.lt_out = make_layout(call.dtype, n, m, n, p.batch, m * n);
  return l;
}

// The problem the entry's candidates are asked for: the top of the call spec's M and batch
// classes, operands packed (the leading dimensions and strides the call spec's alignment allows).
LtProblem representative_problem(const GemmCall& call) {
  LtProblem p;
  p.m = std::max<std::int64_t>(call.m_class, 1);
  p.batch = std::max<std::int64_t>(call.batch_class, 1);
  p.a = {nullptr, call.a_column_major, call.a_column_major ? p.m : call.k,
         call.a_batch_broadcast ? 0 : p.m * call.k};
  p.b = {nullptr, call.b_column_major, call.b_column_major ? call.k : call.n,
         call.b_batch_broadcast ? 0 : call.k * call.n};
  return p;
}

// What an entry reads of its device, once per device for the process's life: the cuBLASLt and
// cuBLAS handles (one per device, as both libraries ask; destroying them at exit would race the
// driver's own teardown) and the device's name in the tuning store — its architecture and model,
// since two parts of one architecture (H100, H200) tune differently.
struct DeviceLt {
  cublasLtHandle_t handle = nullptr;
  cublasHandle_t classic = nullptr;
  // Guards the classic handle's stream and workspace from setting them to the gemm that reads them
  // (Note [The classic cuBLAS candidate]).
  mutable std::mutex classic_mutex;
  std::string arch_name;
};

const DeviceLt& device_lt(int device) {
  static std::mutex mutex;
  static std::map<int, DeviceLt> devices;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = devices.find(device);
  if (it != devices.end()) return it->second;
  cudaDeviceProp prop{};
  TILEOPS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  cublasLtHandle_t handle = nullptr;
  TILEOPS_CUBLASLT_CHECK(cublas().cublasLtCreate(&handle));
  cublasHandle_t classic = nullptr;
  TILEOPS_CUBLAS_CHECK(cublas().cublasCreate(&classic));
  TILEOPS_CUBLAS_CHECK(cublas().cublasSetMathMode(
      classic, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                         CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  DeviceLt& lt = devices[device];
  lt.handle = handle;
  lt.classic = classic;
  lt.arch_name = fmt::format("sm_{}{} {}", prop.major, prop.minor, prop.name);
  return lt;
}

// The candidates that are not cuBLASLt algorithms, each stored and shown by its name: the classic
// API (Note [The classic cuBLAS candidate]), the CUTLASS kernel (Note [CUTLASS GEMM candidate] in
// gemm_cutlass.cuh), the decode kernel's two shapes (Note [Decode GEMM] in decode_gemm.cuh) and
// the streamed decode kernel (Note [Streamed decode GEMM] in decode_stream.cuh).
enum class Named { kNone, kClassic, kCutlass, kDecodeNarrow, kDecodeWide, kStreamedDecode };
constexpr Named kNamedCandidates[] = {Named::kClassic, Named::kCutlass, Named::kDecodeNarrow,
                                      Named::kDecodeWide, Named::kStreamedDecode};

DecodeGemmShape decode_shape(Named named) {
  return named == Named::kDecodeNarrow ? DecodeGemmShape::kNarrow : DecodeGemmShape::kWide;
}

const char* name_of(Named named) {
  switch (named) {
    case Named::kClassic:
      return kClassicGemmName;
    case Named::kCutlass:
      return kCutlassGemmName;
    case Named::kDecodeNarrow:
    case Named::kDecodeWide:
      return decode_gemm_name(decode_shape(named));
    case Named::kStreamedDecode:
      return kStreamedDecodeGemmName;
    case Named::kNone:
      break;
  }
  return "";
}

bool is_stored(const std::string& text, Named named) {
  return named == Named::kClassic ? is_stored_classic(text) : is_stored_named(text, name_of(named));
}

void warn_once(std::atomic<bool>& warned, const std::string& text) {
  if (!warned.exchange(true)) std::fprintf(stderr, "tileops: warning: %s\n", text.c_str());
}

std::atomic<bool> g_stale_store_warned{false};
std::atomic<bool> g_failing_store_warned{false};
std::atomic<bool> g_unwritable_store_warned{false};

}  // namespace

struct LtMatmul::State {
  GemmCall call;
  std::string key;
  std::string device_arch;
  int device_index = 0;
  int sm_count = 0;
  cublasLtHandle_t handle = nullptr;
  const DeviceLt* device = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  std::vector<cublasLtMatmulAlgo_t> candidates;  // the heuristic's, for the representative problem

  std::mutex mutex;  // guards what follows, and the bias pointer in `desc`
  std::optional<cublasLtMatmulAlgo_t> tuned;
  Named tuned_named = Named::kNone;  // a named candidate won; `tuned` is empty
  std::string tuned_note;            // "tuned 12.3 us" or "tuned, from the tuning store"
  bool tuning_done = false;
  bool from_store = false;  // `tuned` came from the tuning store, not from timing here

  struct Plan {
    Layouts layouts;
    Named named = Named::kNone;  // a named candidate (workspace: its bytes), not `algo`
    cublasLtMatmulAlgo_t algo{};
    std::size_t workspace = 0;
    std::string detail;
  };
  using ShapeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                              std::int64_t>;
  std::map<ShapeKey, Plan> plans;
  std::string last_detail;

  ~State() {
    if (preference) cublas().cublasLtMatmulPreferenceDestroy(preference);
    if (desc) cublas().cublasLtMatmulDescDestroy(desc);
  }

  // The workspace `algo` needs for `l`, or nullopt when it cannot serve them.
  std::optional<std::size_t> check(const Layouts& l, const cublasLtMatmulAlgo_t& algo) const {
    cublasLtMatmulHeuristicResult_t result{};
    if (cublas().cublasLtMatmulAlgoCheck(handle, desc, l.lt_a.get(), l.lt_b.get(), l.lt_out.get(),
                                         l.lt_out.get(), &algo, &result) != CUBLAS_STATUS_SUCCESS ||
        result.workspaceSize > kMaxWorkspace)
      return std::nullopt;
    return result.workspaceSize;
  }

  std::vector<cublasLtMatmulAlgo_t> heuristic(const Layouts& l) const {
    std::vector<cublasLtMatmulHeuristicResult_t> results(kCandidates);
    int returned = 0;
    const cublasStatus_t status = cublas().cublasLtMatmulAlgoGetHeuristic(
        handle, desc, l.lt_a.get(), l.lt_b.get(), l.lt_out.get(), l.lt_out.get(), preference,
        kCandidates, results.data(), &returned);
    std::vector<cublasLtMatmulAlgo_t> algos;
    if (status == CUBLAS_STATUS_NOT_SUPPORTED) return algos;
    TILEOPS_CUBLASLT_CHECK(status);
    for (int i = 0; i < returned; ++i)
      if (results[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS)
        algos.push_back(results[static_cast<std::size_t>(i)].algo);
    return algos;
  }

  // Every candidate for `l`: the entry's, then the heuristic's for the exact shape, each once.
  std::vector<cublasLtMatmulAlgo_t> candidates_for(const Layouts& l) const {
    std::vector<cublasLtMatmulAlgo_t> all = candidates;
    for (const cublasLtMatmulAlgo_t& algo : heuristic(l)) {
      bool seen = false;
      for (const cublasLtMatmulAlgo_t& c : all) seen = seen || same_algo(c, algo);
      if (!seen) all.push_back(algo);
    }
    return all;
  }

  // The plan of the exact shape of `p`: the tuned algorithm when it serves it, else the first
  // candidate that passes cublasLtMatmulAlgoCheck (Note [Tuning a cuBLASLt entry]).
  Plan& plan_for(const LtProblem& p) {
    const ShapeKey shape{p.m, p.batch, p.a.ld, p.a.batch_stride, p.b.ld, p.b.batch_stride};
    if (auto it = plans.find(shape); it != plans.end()) return it->second;
    if (plans.size() >= kPlanCacheCapacity) plans.clear();
    Plan plan;
    plan.layouts = make_layouts(call, p);
    bool found = false;
    if (tuned_named != Named::kNone) {
      if (const auto workspace = named_workspace(tuned_named, p)) {
        plan.named = tuned_named;
        plan.workspace = *workspace;
        plan.detail = fmt::format("{} ({})", name_of(tuned_named), tuned_note);
        found = true;
      }
    } else if (tuned) {
      if (auto workspace = check(plan.layouts, *tuned)) {
        plan.algo = *tuned;
        plan.workspace = *workspace;
        plan.detail = fmt::format("{} ({})", describe_algo(*tuned), tuned_note);
        found = true;
      } else if (from_store) {
        warn_once(g_failing_store_warned,
                  fmt::format("{}: the tuning store's choice for {} fails cublasLtMatmulAlgoCheck "
                              "at M = {}, batch = {}; using the heuristic there",
                              key, call.str(), p.m, p.batch));
      }
    }
    for (const cublasLtMatmulAlgo_t& algo :
         found ? std::vector<cublasLtMatmulAlgo_t>{} : candidates_for(plan.layouts)) {
      if (auto workspace = check(plan.layouts, algo)) {
        plan.algo = algo;
        plan.workspace = *workspace;
        plan.detail = fmt::format("{} (heuristic)", describe_algo(algo));
        found = true;
        break;
      }
    }
    if (!found)
      throw CudaError(fmt::format("{}: cuBLASLt has no algorithm for {} with M = {}, batch = {}",
                                  key, call.str(), p.m, p.batch));
    return plans.emplace(shape, std::move(plan)).first->second;
  }

  void set_bias(const void* bias) {
    TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }

  cublasStatus_t matmul(const LtProblem& p, const Layouts& l, const cublasLtMatmulAlgo_t& algo,
                        void* workspace, std::size_t workspace_bytes, cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    return cublas().cublasLtMatmul(handle, desc, &alpha, p.b.data, l.lt_a.get(), p.a.data,
                                   l.lt_b.get(), &beta, p.out, l.lt_out.get(), p.out,
                                   l.lt_out.get(), &algo, workspace, workspace_bytes, stream);
  }

  // The CUTLASS candidate's problem for `p` (Note [CUTLASS GEMM candidate] in gemm_cutlass.cuh),
  // or nullopt when the candidate does not take it.
  std::optional<CutlassGemmProblem> cutlass_problem(const LtProblem& p) const {
    if (call.dtype != DType::kBFloat16 || call.has_bias || p.batch != 1 || p.a.column_major ||
        call.access.alignment < 16 || call.n % 8 != 0 || call.k % 8 != 0 || p.a.ld % 8 != 0 ||
        p.b.ld % 8 != 0 || !fits_int(p.m) || !fits_int(call.n) || !fits_int(call.k))
      return std::nullopt;
    CutlassGemmProblem c;
    c.m = static_cast<int>(p.m);
    c.n = static_cast<int>(call.n);
    c.k = static_cast<int>(call.k);
    c.a = p.a.data;
    c.lda = p.a.ld;
    c.b = p.b.data;
    c.ldb = p.b.ld;
    c.out = p.out;
    return c;
  }

  std::size_t cutlass_workspace(const CutlassGemmProblem& c) const {
    return dispatch_cutlass_gemm(call.b_column_major, [&](auto gemm) {
      return decltype(gemm)::workspace_bytes(c, sm_count);
    });
  }

  // CUBLAS_STATUS_NOT_SUPPORTED when CUTLASS cannot implement `c` (nothing launched).
  cublasStatus_t cutlass_gemm(const CutlassGemmProblem& c, void* workspace,
                              cudaStream_t stream) const {
    const bool launched = dispatch_cutlass_gemm(call.b_column_major, [&](auto gemm) {
      return decltype(gemm)::launch(c, workspace, device_index, sm_count, stream);
    });
    return launched ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
  }

  // The decode kernel's problem for `p` (Note [Decode GEMM] in decode_gemm.cuh), or nullopt when
  // it does not take it.
  std::optional<DecodeGemmProblem> decode_problem(const LtProblem& p) const {
    if ((call.dtype != DType::kBFloat16 && call.dtype != DType::kFloat16) || p.batch != 1 ||
        p.m < 1 || p.m > kDecodeGemmMaxRows || p.a.column_major || !p.b.column_major ||
        call.access.alignment < 16 || call.k % 8 != 0 || p.a.ld % 8 != 0 || p.b.ld % 8 != 0 ||
        !fits_int(call.n / 8))
      return std::nullopt;
    DecodeGemmProblem d;
    d.a = p.a.data;
    d.b = p.b.data;
    d.bias = p.bias;
    d.out = p.out;
    d.lda = p.a.ld;
    d.ldb = p.b.ld;
    d.m = static_cast<int>(p.m);
    d.n = call.n;
    d.k = call.k;
    return d;
  }

  // The streamed decode kernel's problem for `p`: the decode kernel's with one row, when its
  // shared memory fits (decode_gemm_launch.hpp).
  std::optional<DecodeGemmProblem> streamed_decode_problem(const LtProblem& p) const {
    std::optional<DecodeGemmProblem> d = decode_problem(p);
    if (!d || d->m != 1 ||
        streamed_decode_shared_bytes(d->n, d->k, sm_count) > kStreamedDecodeMostShared)
      return std::nullopt;
    return d;
  }

  // The workspace the named candidate needs for `p`, or nullopt when it does not take `p`.
  std::optional<std::size_t> named_workspace(Named named, const LtProblem& p) const {
    switch (named) {
      case Named::kClassic:
        if (classic_serves(p)) return kClassicWorkspace;
        break;
      case Named::kCutlass:
        if (const auto c = cutlass_problem(p)) return cutlass_workspace(*c);
        break;
      case Named::kDecodeNarrow:
      case Named::kDecodeWide:
        if (decode_problem(p)) return std::size_t{0};
        break;
      case Named::kStreamedDecode:
        if (streamed_decode_problem(p)) return std::size_t{0};
        break;
      case Named::kNone:
        break;
    }
    return std::nullopt;
  }

  // Runs the named candidate on a `p` it takes (named_workspace's bytes at `workspace`);
  // CUBLAS_STATUS_NOT_SUPPORTED, launching nothing, when it cannot implement `p` after all.
  cublasStatus_t run_named(Named named, const LtProblem& p, void* workspace,
                           cudaStream_t stream) const {
    switch (named) {
      case Named::kClassic:
        return classic_gemm(p, workspace, stream);
      case Named::kCutlass:
        return cutlass_gemm(*cutlass_problem(p), workspace, stream);
      case Named::kDecodeNarrow:
      case Named::kDecodeWide:
        launch_decode_gemm(call.dtype, decode_shape(named), *decode_problem(p), stream);
        return CUBLAS_STATUS_SUCCESS;
      case Named::kStreamedDecode:
        launch_streamed_decode_gemm(call.dtype, *streamed_decode_problem(p), device_index, sm_count,
                                    stream);
        return CUBLAS_STATUS_SUCCESS;
      case Named::kNone:
        break;
    }
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }

  bool classic_serves(const LtProblem& p) const {
    return fits_int(p.m) && fits_int(call.n) && fits_int(call.k) && fits_int(p.a.ld) &&
           fits_int(p.b.ld) && fits_int(p.batch);
  }

  // The classic cuBLAS candidate (Note [The classic cuBLAS candidate]); `workspace` holds
  // kClassicWorkspace bytes.
  cublasStatus_t classic_gemm(const LtProblem& p, void* workspace, cudaStream_t stream) const {
    // A bias is written to every row of out first and added with beta = 1: the float32 product and
    // the bias are summed before the one rounding (the Lt epilogue rounds twice).
    if (p.bias)
      launch_empty_product(p.out, p.bias, call.n, p.batch * p.m * call.n, dtype_size(call.dtype),
                           stream);
    const float alpha = 1.0f, beta = p.bias ? 1.0f : 0.0f;
    const cublasOperation_t trans_a = call.b_column_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t trans_b = call.a_column_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cudaDataType_t type = lt_type(call.dtype);
    const auto m = static_cast<int>(call.n), n = static_cast<int>(p.m),
               k = static_cast<int>(call.k);
    const auto lda = static_cast<int>(p.b.ld), ldb = static_cast<int>(p.a.ld);
    const std::lock_guard<std::mutex> lock(device->classic_mutex);
    if (const cublasStatus_t status = cublas().cublasSetStream(device->classic, stream);
        status != CUBLAS_STATUS_SUCCESS)
      return status;
    if (const cublasStatus_t status =
            cublas().cublasSetWorkspace(device->classic, workspace, kClassicWorkspace);
        status != CUBLAS_STATUS_SUCCESS)
      return status;
    if (p.batch == 1)
      return cublas().cublasGemmEx(device->classic, trans_a, trans_b, m, n, k, &alpha, p.b.data,
                                   type, lda, p.a.data, type, ldb, &beta, p.out, type, m,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    return cublas().cublasGemmStridedBatchedEx(
        device->classic, trans_a, trans_b, m, n, k, &alpha, p.b.data, type, lda, p.b.batch_stride,
        p.a.data, type, ldb, p.a.batch_stride, &beta, p.out, type, m, p.m * call.n,
        static_cast<int>(p.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  }

  std::vector<LtProblem> tuning_sets(const KernelContext& ctx, const LtProblem& p,
                                     cudaStream_t stream, std::vector<Tensor>& copies) const;
  void tune(const KernelContext& ctx, const LtProblem& p, cudaStream_t stream);
};

LtMatmul::LtMatmul(const GemmCall& call, std::string implementation_key)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.call = call;
  s.key = std::move(implementation_key);
  const int device = tileops::cuda::current_device();
  s.device_index = device;
  s.sm_count = tileops::cuda::facts(device).sm_count;
  s.device = &device_lt(device);
  s.handle = s.device->handle;
  s.device_arch = device_lt(device).arch_name;
  TILEOPS_CUBLASLT_CHECK(
      cublas().cublasLtMatmulDescCreate(&s.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans_a = call.b_column_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_b = call.a_column_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulDescSetAttribute(
      s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
  TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulDescSetAttribute(
      s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
  if (call.has_bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType_t bias_type = lt_type(call.dtype);
    TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulDescSetAttribute(
        s.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulDescSetAttribute(
        s.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
  }
  TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulPreferenceCreate(&s.preference));
  const std::uint64_t max_workspace = kMaxWorkspace;
  TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulPreferenceSetAttribute(
      s.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
      sizeof(max_workspace)));
  const std::uint32_t alignment = call.access.alignment;
  for (cublasLtMatmulPreferenceAttributes_t attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulPreferenceSetAttribute(
        s.preference, attribute, &alignment, sizeof(alignment)));
  // Note [Split-K in float32]: the manifest accumulates in float32 and rounds once. A split-K
  // algorithm that adds its partial sums in the output type (CUBLASLT_REDUCTION_SCHEME_INPLACE or
  // _OUTPUT_TYPE) rounds each partial to bfloat16 or float16 first, a few ulps off (seen on the
  // H200: a bf16 bmm of K = 16 off by 4 ulps); only reductions in the compute type, or none, are
  // offered, as torch asks when reduced-precision reductions are disallowed.
  const std::uint32_t reductions = kFloat32Reductions;
  TILEOPS_CUBLASLT_CHECK(cublas().cublasLtMatmulPreferenceSetAttribute(
      s.preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions, sizeof(reductions)));
  if (call.n == 0 || call.k == 0 || call.m_class == 0) return;  // cuBLASLt never runs
  s.candidates = s.heuristic(make_layouts(call, representative_problem(call)));
  if (auto stored = tuning_store().find(s.key, call.str(), s.device_arch)) {
    std::string why;
    std::optional<cublasLtMatmulAlgo_t> algo;
    for (Named named : kNamedCandidates)
      if (is_stored(*stored, named)) {
        s.tuned_named = named;
        s.tuned_note = "tuned, from the tuning store";
        s.tuning_done = true;
        s.from_store = true;
        return;
      }
    algo = decode_algo(*stored, &why);
    if (algo && !reduces_in_float32(*algo)) {
      why = "its split-K reduction rounds partial sums to the output type";
      algo.reset();
    }
    if (algo) {
      s.tuned = algo;
      s.tuned_note = "tuned, from the tuning store";
      s.tuning_done = true;
      s.from_store = true;
    } else {
      warn_once(
          g_stale_store_warned,
          fmt::format("{}: ignoring the tuning store's choice for {}: {}", s.key, call.str(), why));
    }
  }
}

LtMatmul::~LtMatmul() = default;

std::optional<std::string> LtMatmul::refusal(const GemmCall& call) {
  if (call.dtype != DType::kFloat16 && call.dtype != DType::kBFloat16 &&
      call.dtype != DType::kFloat32)
    return fmt::format("cuBLASLt serves float16, bfloat16 and float32, not {}",
                       dtype_name(call.dtype));
  if (call.access.alignment < dtype_size(call.dtype))
    return fmt::format("pointers aligned to {} bytes, less than one {} element",
                       call.access.alignment, dtype_name(call.dtype));
  // The heuristic is asked only on a device this process sees: `tileops explain` states calls for
  // an H200 it does not have, and there the answer is the static one.
  if (call.n == 0 || call.k == 0 || call.m_class == 0 || !call.device || !call.device->is_cuda() ||
      call.device->index >= tileops::cuda::device_count())
    return std::nullopt;
  // Whether the heuristic offers anything is a fact of the call spec: asked once per spec.
  static std::mutex mutex;
  static std::map<std::string, std::optional<std::string>> verdicts;
  const std::string spec = call.str();
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = verdicts.find(spec); it != verdicts.end()) return it->second;
  }
  const tileops::cuda::DeviceGuard on_device(call.device->index);
  const LtMatmul probe(call, "probe");
  std::optional<std::string> verdict;
  if (probe.state_->candidates.empty())
    verdict = fmt::format(
        "cuBLASLt's heuristic offers no algorithm for this call (alignment {} bytes, N = {}, K = "
        "{})",
        call.access.alignment, call.n, call.k);
  const std::lock_guard<std::mutex> lock(mutex);
  verdicts.emplace(spec, verdict);
  return verdict;
}

// Note [Tuning a cuBLASLt entry]
// Once tuning is requested (Kernel::request_tune), the next call the entry serves times every
// candidate that passes cublasLtMatmulAlgoCheck for that call's exact shape — the heuristic's for
// the call spec and for the shape — and the named candidates that take the call (cublasGemmEx,
// Note [The classic cuBLAS candidate]; our CUTLASS and decode kernels), with events on a stream
// forked from the call's (Note [Tuning as served]), keeps the fastest for every shape it serves and
// records it in the tuning store, so that an entry built later for the same call spec and device
// starts tuned. Tuning alone synchronises the host (on its stop events). A call made while its
// stream captures a graph cannot time or synchronise: it runs the current choice, and the next
// uncaptured call tunes. The candidates write `out` (and scratch outputs), which the chosen
// algorithm then writes again, so the call's result is the chosen algorithm's. TILEOPS_LOG=tune
// prints every candidate's median to stderr.
//
// Note [Tuning as served]
// A candidate is timed as a model runs it: back to back with other products, its weights read
// from HBM, not from the L2 (an algorithm that rereads a tile wins when the tile stays in L2). So
// each timing is a burst of three runs or more between two events, the runs cycling through
// copies of the operands made for the tuning, as many as take the working set past twice the L2
// (none where the call's own operands do, as a weight-streaming decode product's do; at most
// kMaxSets). Evicting the L2 before each single run instead, as this did first, measured another
// regime: on the H200, cuBLAS's non-split-K decode kernel ran 10% slower right after an evicting
// read (228 us against 208 us back to back) while its split-K rivals did not, so tuning chose a
// split-K kernel that then ran 5% behind torch's choice. A burst is captured once per candidate as
// a CUDA graph and replayed, as a serving engine replays its decode step: timed as host-launched
// bursts of three runs, cublasGemmEx's one-row product read 18.5 us against the 15.8 us torch's
// graph replays of the same kernel take, and the decode kernel's dependent launches overlapped
// only within each burst, so that tuning chose kernels that then served up to 2% behind torch
// (bench/results/2026-12-03-h200-decode-gemm.md). A burst lasts about 200 us (from one timed
// burst of the first candidate), so that a replay's own start weighs little. The bursts run on a
// stream of tuning's own (ForkedStream in tuning_bursts.hpp), after the call's work and before
// what follows it, since the call's stream may be one that cannot capture (torch's legacy default
// stream); where a capture fails all the same, that candidate's bursts are launched from the host.
// The runs go in rounds, each timing every candidate once, so that the clock the card holds, which
// drifts over the tuning (power, temperature), weighs on every candidate alike. After kRounds, the
// candidates within kRunOffMargin of the best median — those the rounds could not tell apart — are
// timed in kRunOffRounds more among themselves, and the best median over all their rounds wins.
namespace {

constexpr int kWarmups = 3;
constexpr int kRounds = 10;
constexpr int kRunOffRounds = 20;
constexpr double kRunOffMargin = 0.03;
constexpr std::int64_t kMaxSets = 8;

bool log_tuning() {
  const char* v = std::getenv("TILEOPS_LOG");
  return v && std::strstr(v, "tune") != nullptr;
}

float median_of(std::vector<float> runs) {
  const auto middle = runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2);
  std::nth_element(runs.begin(), middle, runs.end());
  return *middle;
}

// Elements from an operand's first to its last: `lines` lines of `length` elements, `ld` apart,
// in `batch` matrices `batch_stride` apart.
std::int64_t span_elements(std::int64_t lines, std::int64_t length, std::int64_t ld,
                           std::int64_t batch, std::int64_t batch_stride) {
  if (lines == 0 || length == 0 || batch == 0) return 0;
  return (batch - 1) * batch_stride + (lines - 1) * ld + length;
}

}  // namespace

// The call's operands, then copies of them (a, b and a scratch out) until the sets together pass
// twice the L2 (Note [Tuning as served]); `copies` holds the copies' memory.
std::vector<LtProblem> LtMatmul::State::tuning_sets(const KernelContext& ctx, const LtProblem& p,
                                                    cudaStream_t stream,
                                                    std::vector<Tensor>& copies) const {
  const std::int64_t itemsize = static_cast<std::int64_t>(dtype_size(call.dtype));
  const std::int64_t a_bytes =
      itemsize * (p.a.column_major ? span_elements(call.k, p.m, p.a.ld, p.batch, p.a.batch_stride)
                                   : span_elements(p.m, call.k, p.a.ld, p.batch, p.a.batch_stride));
  const std::int64_t b_bytes =
      itemsize * (p.b.column_major
                      ? span_elements(call.n, call.k, p.b.ld, p.batch, p.b.batch_stride)
                      : span_elements(call.k, call.n, p.b.ld, p.batch, p.b.batch_stride));
  const std::int64_t out_bytes = itemsize * p.batch * p.m * call.n;
  const std::int64_t set_bytes = std::max<std::int64_t>(a_bytes + b_bytes + out_bytes, 1);
  const std::int64_t l2 = tileops::cuda::facts(ctx.device.index).l2_bytes;
  const std::int64_t count =
      std::clamp<std::int64_t>((2 * l2 + set_bytes - 1) / set_bytes, 1, kMaxSets);
  std::vector<LtProblem> sets{p};
  const auto copy_of = [&](const void* data, std::int64_t bytes) -> void* {
    copies.push_back(Tensor::empty(Shape{bytes}, DType::kUInt8, ctx.device, &ctx.stream));
    TILEOPS_CUDA_CHECK(cudaMemcpyAsync(copies.back().data_ptr(), data,
                                       static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice,
                                       stream));
    return copies.back().data_ptr();
  };
  for (std::int64_t i = 1; i < count; ++i) {
    LtProblem set = p;
    set.a.data = copy_of(p.a.data, a_bytes);
    set.b.data = copy_of(p.b.data, b_bytes);
    copies.push_back(Tensor::empty(Shape{out_bytes}, DType::kUInt8, ctx.device, &ctx.stream));
    set.out = copies.back().data_ptr();
    sets.push_back(set);
  }
  return sets;
}

void LtMatmul::State::tune(const KernelContext& ctx, const LtProblem& p, cudaStream_t stream) {
  const Layouts layouts = make_layouts(call, p);
  std::vector<std::pair<cublasLtMatmulAlgo_t, std::size_t>> runnable;
  std::size_t most_workspace = 0;
  for (const cublasLtMatmulAlgo_t& algo : candidates_for(layouts))
    if (auto workspace = check(layouts, algo)) {
      runnable.emplace_back(algo, *workspace);
      most_workspace = std::max(most_workspace, *workspace);
    }
  std::vector<Named> named_runnable;
  for (Named named : kNamedCandidates)
    if (auto workspace = named_workspace(named, p)) {
      named_runnable.push_back(named);
      most_workspace = std::max(most_workspace, *workspace);
    }
  tuning_done = true;
  if (runnable.empty() && named_runnable.empty()) return;
  const Tensor workspace = most_workspace == 0
                               ? Tensor()
                               : Tensor::empty(Shape{static_cast<std::int64_t>(most_workspace)},
                                               DType::kUInt8, ctx.device, &ctx.stream);
  void* workspace_ptr = workspace.defined() ? workspace.data_ptr() : nullptr;
  std::vector<Tensor> copies;
  const std::vector<LtProblem> sets = tuning_sets(ctx, p, stream, copies);
  // Destroyed before the operands' copies and the workspace, whose memory is freed in the call's
  // stream's order: the join comes first.
  const ForkedStream forked(stream);
  const cudaStream_t timing = forked.get();
  // Every candidate as a launch with its name: the cuBLASLt algorithms, then the named ones.
  std::vector<Launch> launches;
  std::vector<std::string> names;
  std::vector<Named> named_of;  // Named::kNone for a cuBLASLt algorithm
  for (const auto& [algo, bytes] : runnable) {
    launches.emplace_back([&, algo = algo, bytes = bytes](const LtProblem& set) {
      return matmul(set, layouts, algo, workspace_ptr, bytes, timing);
    });
    names.push_back(describe_algo(algo));
    named_of.push_back(Named::kNone);
  }
  for (Named named : named_runnable) {
    launches.emplace_back(
        [&, named](const LtProblem& set) { return run_named(named, set, workspace_ptr, timing); });
    names.emplace_back(name_of(named));
    named_of.push_back(named);
  }
  const std::size_t count = launches.size();
  std::vector<bool> failed(count, false);
  for (std::size_t c = 0; c < count; ++c)
    for (int i = 0; i < kWarmups && !failed[c]; ++i)
      failed[c] = launches[c](p) != CUBLAS_STATUS_SUCCESS;
  Burst burst;
  prepare_bursts(launches, sets, timing, failed, burst);
  std::vector<std::vector<float>> times(count);
  std::vector<std::size_t> all(count);
  for (std::size_t c = 0; c < count; ++c) all[c] = c;
  time_in_rounds(launches, burst, all, kRounds, sets, timing, times, failed);
  // The best median among the candidates in `which` that never failed.
  const auto timed = [&](std::size_t c) { return !failed[c] && !times[c].empty(); };
  const auto best_of = [&](const std::vector<std::size_t>& which) {
    std::optional<std::size_t> best;
    for (std::size_t c : which)
      if (timed(c) && (!best || median_of(times[c]) < median_of(times[*best]))) best = c;
    return best;
  };
  std::optional<std::size_t> best_candidate = best_of(all);
  if (!best_candidate) return;
  std::vector<std::size_t> contenders;
  for (std::size_t c = 0; c < count; ++c)
    if (timed(c) &&
        median_of(times[c]) <= (1.0 + kRunOffMargin) * median_of(times[*best_candidate]))
      contenders.push_back(c);
  if (contenders.size() > 1) {
    time_in_rounds(launches, burst, contenders, kRunOffRounds, sets, timing, times, failed);
    best_candidate = best_of(contenders);
    if (!best_candidate) best_candidate = best_of(all);
    if (!best_candidate) return;
  }
  const Named best_named = named_of[*best_candidate];
  if (log_tuning()) {
    for (std::size_t c = 0; c < count; ++c) {
      const std::string& name = names[c];
      const std::string result =
          timed(c) ? fmt::format("{:.2f} us over {} bursts{}", 1000.0 * median_of(times[c]),
                                 times[c].size(), c == *best_candidate ? " (chosen)" : "")
                   : std::string("failed");
      std::fprintf(stderr, "tileops: tune %s %s (%zu operand sets, %zu runs a burst%s): %s %s\n",
                   key.c_str(), call.str().c_str(), sets.size(), burst.runs,
                   burst.graphs[c] ? ", a graph" : "", name.c_str(), result.c_str());
    }
  }
  const double microseconds = 1000.0 * median_of(times[*best_candidate]);
  tuned_named = best_named;
  if (best_named != Named::kNone)
    tuned.reset();
  else
    tuned = runnable[*best_candidate].first;
  tuned_note = fmt::format("tuned {:.1f} us", microseconds);
  from_store = false;
  plans.clear();
  // The choice serves this process whether or not the file can be written: a file that cannot is
  // reported, not raised out of the call being served.
  try {
    tuning_store().record(key, call.str(), device_arch,
                          best_named != Named::kNone
                              ? encode_named(name_of(best_named), microseconds)
                              : encode_algo(*tuned, microseconds));
  } catch (const TuningFileError& e) {
    warn_once(g_unwritable_store_warned, e.what());
  }
}

void LtMatmul::run(const KernelContext& ctx, const LtProblem& p, bool tune) {
  State& s = *state_;
  const std::lock_guard<std::mutex> lock(s.mutex);
  auto stream = static_cast<cudaStream_t>(tileops::cuda::native_stream(ctx.stream));
  if (s.call.has_bias) s.set_bias(p.bias);
  if (tune && !s.tuning_done) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    TILEOPS_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    if (capture == cudaStreamCaptureStatusNone) s.tune(ctx, p, stream);
  }
  const State::Plan& plan = s.plan_for(p);
  if (plan.named != Named::kNone) {
    const Tensor workspace = plan.workspace == 0
                                 ? Tensor()
                                 : Tensor::empty(Shape{static_cast<std::int64_t>(plan.workspace)},
                                                 DType::kUInt8, ctx.device, &ctx.stream);
    const cublasStatus_t status =
        s.run_named(plan.named, p, workspace.defined() ? workspace.data_ptr() : nullptr, stream);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED)
      throw CudaError(fmt::format("{}: {} cannot implement {} at M = {}", s.key,
                                  name_of(plan.named), s.call.str(), p.m));
    TILEOPS_CUBLAS_CHECK(status);
    s.last_detail = plan.detail;
    return;
  }
  const Tensor workspace = plan.workspace == 0
                               ? Tensor()
                               : Tensor::empty(Shape{static_cast<std::int64_t>(plan.workspace)},
                                               DType::kUInt8, ctx.device, &ctx.stream);
  TILEOPS_CUBLASLT_CHECK(s.matmul(p, plan.layouts, plan.algo,
                                  workspace.defined() ? workspace.data_ptr() : nullptr,
                                  plan.workspace, stream));
  s.last_detail = plan.detail;
}

std::string LtMatmul::detail() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->last_detail;
}

}  // namespace tileops::kernels::cuda
