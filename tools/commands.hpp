// The `tileops` subcommands; each returns the process exit code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_device.hpp"
#include "tileops/core/device.hpp"
#include "tileops/op/op_class.hpp"
#include "workload_inputs.hpp"

namespace tileops::cli {

// Validates the embedded manifest, or the given family files; prints every diagnostic.
int run_validate(const std::vector<std::string>& files);

// Lists the ops of the manifest: name, family, status, devices and implementation keys.
int run_list();
// The device types an op class's implementations run on: its kernel types' devices, or for a
// composite the union over its stages' op classes. Sorted, each once.
std::vector<DeviceType> devices_of(const OpClass& cls);

struct DescribeOptions {
  std::vector<std::string> ops;
  bool all = false;         // every manifest op
  bool write_docs = false;  // write <docs_dir>/<Op>.md instead of printing
  std::string docs_dir = "docs/ops";
  std::string semantics_file = "docs/manifest.md";  // where the per-op semantics lines come from
};
// Prints (or writes) the reference page of each op: signature, dtypes, rules, roofline, effect
// branches with their operator names, implementations, workloads, tolerances. A written page
// leaves out what depends on the build, this build's implementations (Note [Pages every build
// agrees on] in cmd_describe.cpp).
int run_describe(const DescribeOptions& options);

// Which workload case a single-call command uses.
struct CaseOptions {
  std::string op;
  std::string workload;  // label; empty: the first row
  std::string dtype;     // dtype name; empty: the row's first case
  std::int64_t max_elems = std::int64_t{1} << 16;
  std::uint64_t seed = 0;
};
struct ExplainOptions : CaseOptions {
  std::string device;  // empty: one real call on the best device present
  int arch = -1;       // overrides of the stated device facts; -1: not overridden
  int sm_count = -1;
  std::int64_t smem_kib = -1;
};
// Prints the dispatch events of the case (Note [Explain reads dispatch events]): each selection,
// every implementation's verdict and the outcome. With a device, of the call stated on meta
// tensors for that device, running nothing; without, of one real call, then what it built.
int run_explain(const ExplainOptions& options);
// Runs one call of the case on random inputs and checks it against the tool's float64 reference.
int run_run(const CaseOptions& options);

struct BenchOptions {
  std::vector<std::string> ops;  // empty: every op with a registered class
  bool json = false;
  std::string json_file;  // also write the JSON here, whatever stdout shows
  // Largest tensor; bigger cases are scaled down. -1: kDefaultMaxElems on the CPU, no scaling on
  // a GPU; 0: no scaling.
  std::int64_t max_elems = -1;
  int repeat = 10;  // CPU: timed calls; CUDA: timed batches (Note [CUDA bench])
  int warmup = 2;
  std::uint64_t seed = 0;
  GraphMode graph = GraphMode::kAuto;
  bool tune = false;  // request_tune() on each op before its first call
};
// Times every workload case of the ops on the best device present.
int run_bench(const BenchOptions& options);

}  // namespace tileops::cli
