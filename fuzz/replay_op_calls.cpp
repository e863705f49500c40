// tileops_op_call_replay: the op-call corpus (or any inputs) replayed without libFuzzer, on the CPU
// or a CUDA device, each input one call of the op-call harness (Note [Op-call fuzzing] in
// op_call_harness.cpp), which aborts on a broken rule. ctest replays fuzz/corpus/op_call on the
// CPU in every build (under ASan and UBSan in preset asan) and on cuda:0 where there is a GPU;
// scripts/gpu-check replays it under compute-sanitizer.
//
//   tileops_op_call_replay [--device cpu|cuda:N] [--keep-going] [--large] PATH...
//
// PATH: files, or directories of them. --large replays the inputs on seeds 64 times larger
// (kLargeOpCallSizes), past the kernels' one-block shapes.
//
// Prints how many calls ran, were refused or were skipped, per op. A broken rule aborts, or with
// --keep-going is printed and counted (the replay stops at a CUDA error after which the device
// takes no more work) and the exit status is 1. Exits 0 when every call kept the rules; 77 (ctest's
// skip) when the device is a CUDA device the process does not have, unless TILEOPS_REQUIRE_GPU=1; 2
// for bad arguments or an unreadable path.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "op_call_harness.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/accelerator.hpp"

namespace {

namespace fs = std::filesystem;
using tileops::fuzz::OpCallOutcome;

// The files a path names, sorted: the file itself, or a directory's regular files.
std::vector<fs::path> files_of(const fs::path& path) {
  if (!fs::is_directory(path)) return {path};
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(path))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool gpu_required() {
  const char* v = std::getenv("TILEOPS_REQUIRE_GPU");
  return v && std::string_view(v) == "1";
}

}  // namespace

int main(int argc, char** argv) {
  tileops::Device device = tileops::Device::cpu();
  tileops::fuzz::OpCallSizes sizes;
  std::vector<fs::path> paths;
  for (int a = 1; a < argc; ++a) {
    const std::string_view arg = argv[a];
    if (arg == "--keep-going") {
      tileops::fuzz::keep_going_after_findings(true);
    } else if (arg == "--large") {
      sizes = tileops::fuzz::kLargeOpCallSizes;
    } else if (arg == "--device" && a + 1 < argc) {
      const std::optional<tileops::Device> d = tileops::Device::try_parse(argv[++a]);
      if (!d || d->is_meta()) {
        std::fprintf(stderr, "tileops_op_call_replay: --device takes cpu or cuda:N\n");
        return 2;
      }
      device = *d;
    } else {
      paths.emplace_back(arg);
    }
  }
  if (paths.empty()) {
    std::fprintf(
        stderr,
        "usage: tileops_op_call_replay [--device cpu|cuda:N] [--keep-going] [--large] PATH...\n");
    return 2;
  }
  if (!device.is_cpu()) {
    const std::optional<tileops::Device> present = tileops::current_accelerator_device();
    if (!present || present->type != device.type) {
      std::fprintf(stderr, "tileops_op_call_replay: no %s device in this process%s\n",
                   device.str().c_str(), gpu_required() ? " (TILEOPS_REQUIRE_GPU=1)" : ": skipped");
      return gpu_required() ? 1 : 77;
    }
  }

  std::map<std::string, std::array<int, 3>> tally;  // op -> ran, refused, skipped
  int inputs = 0;
  int findings = 0;
  bool stopped = false;
  for (const fs::path& path : paths) {
    if (!fs::exists(path)) {
      std::fprintf(stderr, "tileops_op_call_replay: %s does not exist\n", path.c_str());
      return 2;
    }
    for (const fs::path& file : files_of(path)) {
      if (stopped) break;
      std::ifstream in(file, std::ios::binary);
      const std::vector<std::uint8_t> data{std::istreambuf_iterator<char>(in), {}};
      std::string op;
      ++inputs;
      try {
        const OpCallOutcome outcome = tileops::fuzz::run_op_call(data, device, &op, sizes);
        ++tally[op][outcome == OpCallOutcome::kRan       ? 0
                    : outcome == OpCallOutcome::kRefused ? 1
                                                         : 2];
      } catch (const tileops::fuzz::OpCallFinding& f) {
        std::fprintf(stderr, "  (input %s)\n", file.c_str());
        ++findings;
        stopped = f.fatal;
      }
    }
  }
  if (findings > 0) {
    std::printf("%d inputs on %s: %d broke a rule%s\n", inputs, device.str().c_str(), findings,
                stopped ? " (stopped at a CUDA error)" : "");
  } else {
    std::printf("%d inputs on %s: every call kept the rules\n", inputs, device.str().c_str());
  }
  std::printf("%-24s %6s %8s %8s\n", "op", "ran", "refused", "skipped");
  for (const auto& [op, n] : tally)
    std::printf("%-24s %6d %8d %8d\n", op.c_str(), n[0], n[1], n[2]);
  return findings > 0 ? 1 : 0;
}
