// tileops: the library's command-line tool. Only CLI11 APIs present in both 2.1 (Debian 12) and
// 2.4 are used.
#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace {

void add_case_options(CLI::App* cmd, tileops::cli::CaseOptions& o) {
  cmd->add_option("op", o.op, "op name, e.g. RMSNormFwdOp")->required();
  cmd->add_option("--workload", o.workload, "workload label (default: the first row)");
  cmd->add_option("--dtype", o.dtype, "dtype of the case (default: the row's first dtype case)");
  cmd->add_option("--max-elems", o.max_elems,
                  "largest tensor size; bigger cases are scaled down (0: no scaling)");
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = tileops::cli;
  CLI::App app{"TileOPs: manifest-driven LLM operators"};
  app.require_subcommand(1);

  std::vector<std::string> files;
  CLI::App* validate =
      app.add_subcommand("validate", "Check the manifest (the embedded one, or the given files)");
  validate->add_option("files", files,
                       "family YAML files to validate instead of the embedded manifest");

  CLI::App* list =
      app.add_subcommand("list", "List the ops of the manifest with the devices they run on");

  cli::DescribeOptions describe_options;
  CLI::App* describe = app.add_subcommand(
      "describe", "Signature, dtypes, roofline, effect branches, implementations");
  describe->add_option("ops", describe_options.ops, "op names");
  describe->add_flag("--all", describe_options.all, "every op of the manifest");
  describe->add_flag("--write-docs", describe_options.write_docs,
                     "write the reference pages instead of printing");
  describe->add_option("--docs-dir", describe_options.docs_dir,
                       "where --write-docs writes <Op>.md (default docs/ops)");
  describe->add_option("--semantics", describe_options.semantics_file,
                       "the entry-semantics document to quote (default docs/manifest.md)");

  cli::ExplainOptions explain_options;
  CLI::App* explain =
      app.add_subcommand("explain", "Why each implementation serves or refuses a workload call");
  add_case_options(explain, explain_options);
  CLI::Option* device =
      explain->add_option("--device", explain_options.device,
                          "state the call for this device (e.g. cuda:0) on meta tensors, running "
                          "nothing (default: run one call on the best device present)");
  explain
      ->add_option("--arch", explain_options.arch,
                   "the SM architecture to state (default: the accelerator's, else 90)")
      ->needs(device);
  explain
      ->add_option("--sm-count", explain_options.sm_count,
                   "the SM count to state (default: the accelerator's, else 132)")
      ->needs(device);
  explain
      ->add_option("--smem-kib", explain_options.smem_kib,
                   "the shared memory per block to state, in KiB (default: the accelerator's, "
                   "else 227)")
      ->needs(device);

  cli::CaseOptions run_options;
  run_options.max_elems = cli::kDefaultMaxElems;
  CLI::App* run =
      app.add_subcommand("run", "One call on random inputs, checked against a float64 reference");
  add_case_options(run, run_options);
  run->add_option("--seed", run_options.seed, "random seed (default 0)");

  cli::BenchOptions bench_options;
  CLI::App* bench =
      app.add_subcommand("bench", "Time the manifest's workloads on the best device present");
  bench->add_option("ops", bench_options.ops, "op names (default: every implemented op)");
  bench->add_flag("--json", bench_options.json, "print one JSON array on stdout");
  bench->add_option("--json-file", bench_options.json_file,
                    "also write the JSON array to this file (stdout keeps the table)");
  bench->add_option("--max-elems", bench_options.max_elems,
                    "largest tensor size; bigger cases are scaled down (0: no scaling; default: "
                    "4194304 on the CPU, no scaling on a GPU)");
  bench->add_option("--repeat", bench_options.repeat,
                    "timed calls (CPU) or timed batches of calls (GPU) per case; the median is "
                    "reported");
  std::string graph = "auto";
  bench->add_option("--graph", graph,
                    "GPU: replay each batch from a CUDA graph: auto (cases under 32 MiB), always, "
                    "never");
  bench->add_option("--warmup", bench_options.warmup, "untimed calls before timing");
  bench->add_option("--seed", bench_options.seed, "random seed (default 0)");
  bench->add_flag("--tune", bench_options.tune,
                  "request tuning of each op before its first call, which then tunes (kernels "
                  "that hold candidates time them and keep the fastest; TILEOPS_TUNING_FILE "
                  "saves the choices)");

  CLI11_PARSE(app, argc, argv);
  try {
    if (validate->parsed()) return cli::run_validate(files);
    if (list->parsed()) return cli::run_list();
    if (describe->parsed()) return cli::run_describe(describe_options);
    if (explain->parsed()) return cli::run_explain(explain_options);
    if (run->parsed()) return cli::run_run(run_options);
    if (bench->parsed()) {
      if (graph == "always")
        bench_options.graph = cli::GraphMode::kAlways;
      else if (graph == "never")
        bench_options.graph = cli::GraphMode::kNever;
      else if (graph != "auto")
        throw std::invalid_argument("--graph takes auto, always or never, not '" + graph + "'");
      return cli::run_bench(bench_options);
    }
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tileops: %s\n", e.what());
    return 2;
  }
}
