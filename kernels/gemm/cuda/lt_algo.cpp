#include "kernels/gemm/cuda/lt_algo.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <sstream>

#include "kernels/gemm/cuda/cublas_library.hpp"
#include "tileops/core/error.hpp"

namespace tileops::kernels::cuda {
namespace {

template <class T>
T config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  if (cublas().cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value),
                                                    &written) != CUBLAS_STATUS_SUCCESS)
    return T{};
  return value;
}

}  // namespace

void throw_cublaslt_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("cuBLASLt error at {}:{}: {}: {} ({})", file, line, call,
                              cublas().cublasLtGetStatusName(status),
                              cublas().cublasLtGetStatusString(status)));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("cuBLAS error at {}:{}: {}: {} ({})", file, line, call,
                              cublas().cublasLtGetStatusName(status),
                              cublas().cublasLtGetStatusString(status)));
}

bool same_algo(const cublasLtMatmulAlgo_t& a, const cublasLtMatmulAlgo_t& b) {
  return std::memcmp(a.data, b.data, sizeof(a.data)) == 0;
}

std::string describe_algo(const cublasLtMatmulAlgo_t& algo) {
  return fmt::format("cublaslt algo {} tile {} stages {} splitk {} cluster {}",
                     config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                     config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                     config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
}

std::string encode_algo(const cublasLtMatmulAlgo_t& algo, double microseconds) {
  std::string hex;
  for (std::uint64_t word : algo.data) hex += fmt::format("{:016x}", word);
  return fmt::format("cublaslt {} {} {:.2f}", cublas().cublasLtGetVersion(), hex, microseconds);
}

std::optional<cublasLtMatmulAlgo_t> decode_algo(const std::string& text, std::string* why) {
  std::istringstream in(text);
  std::string tag, hex;
  std::size_t version = 0;
  if (!(in >> tag >> version >> hex) || tag != "cublaslt" || hex.size() != 128) {
    *why = fmt::format("'{}' is not a stored cuBLASLt algorithm", text);
    return std::nullopt;
  }
  if (version != cublas().cublasLtGetVersion()) {
    *why = fmt::format("stored by cuBLASLt {}, and this process runs {}", version,
                       cublas().cublasLtGetVersion());
    return std::nullopt;
  }
  cublasLtMatmulAlgo_t algo{};
  for (std::size_t i = 0; i < 8; ++i) {
    const std::string word = hex.substr(16 * i, 16);
    if (word.find_first_not_of("0123456789abcdef") != std::string::npos) {
      *why = fmt::format("'{}' holds a character that is not a hex digit", word);
      return std::nullopt;
    }
    algo.data[i] = std::stoull(word, nullptr, 16);
  }
  return algo;
}

std::string encode_named(const char* name, double microseconds) {
  return fmt::format("{} {:.2f}", name, microseconds);
}

bool is_stored_named(const std::string& text, const char* name) {
  return text.rfind(std::string(name) + " ", 0) == 0;
}

bool is_stored_classic(const std::string& text) {
  std::istringstream in(text);
  std::string library, api;
  return in >> library >> api && library + " " + api == kClassicGemmName;
}

}  // namespace tileops::kernels::cuda
