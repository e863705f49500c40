// `tileops bench`: the manifest's workloads on the best device present, with time, GB/s, TFLOP/s
// from the op's own roofline and the fraction of the device's ceiling (docs/cuda.md, Ceilings).
// On a CUDA device the timing follows Note [CUDA bench] (bench_cuda.cpp); on the CPU, a host
// clock around each call.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench_device.hpp"
#include "commands.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::cli {
namespace {

// The roofline ceilings of a device: bytes/s and FLOP/s (0 = unknown).
struct Ceiling {
  double bytes_per_s = 0.0;
  double flops_per_s = 0.0;
  std::string source;
};

// Note [CPU ceiling]: a CPU has no datasheet figure here, so its bandwidth ceiling is measured
// once per run: the best of a few 256 MiB memcpys, counting bytes read plus written (the same
// convention as the H200's 4.25 TB/s device-to-device copy). Its FLOP ceiling is left unknown, so
// CPU fractions are bytes-only.
Ceiling measure_cpu_ceiling() {
  const std::size_t n = std::size_t{256} << 20;
  std::vector<unsigned char> a(n, 1), b(n, 2);
  double best = 1e30;
  for (int i = 0; i < 4; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), n);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return {2.0 * static_cast<double>(n) / best, 0.0,
          "measured memcpy (read + write), FLOP ceiling unknown"};
}

Ceiling ceiling_of(Device device) {
  if (device.is_cuda()) {
    const std::string name = cuda_device_name(device);
    return {4.25e12, 783e12,
            fmt::format("{}; ceilings of the H200: 4.25 TB/s copy, 783 TFLOP/s bf16 "
                        "(docs/cuda.md)",
                        name.empty() ? device.str() : name)};
  }
  return measure_cpu_ceiling();
}

struct Row {
  std::string op, workload, case_id, device, status, note;
  double seconds = 0.0;
  std::int64_t flops = 0, bytes = 0;
  double gbps = 0.0, tflops = 0.0, fraction = 0.0;
  int repeat = 0;
  // How it was timed, and what ran (CUDA: Note [CUDA bench]).
  std::string method;
  int calls_per_batch = 0, sets = 0;
  std::int64_t working_set_bytes = 0;
  std::vector<std::string> kernels;  // "Op.interface=key" of every entry the case built
  // The case itself, for other harnesses (bench/torch_baseline.py) to run the same workload.
  std::string inputs_json = "[]", params_json = "{}";
};

Row make_row(std::string op, std::string workload, std::string case_id, std::string device,
             std::string status, std::string note) {
  Row r;
  r.op = std::move(op);
  r.workload = std::move(workload);
  r.case_id = std::move(case_id);
  r.device = std::move(device);
  r.status = std::move(status);
  r.note = std::move(note);
  return r;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : "null"; }

std::string json_value(const Value& v) {
  if (v.is_none()) return "null";
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_float()) return fmt::format("{:.17g}", v.as_float());
  if (v.is_str()) return json_string(v.as_str());
  if (v.is_dtype()) return json_string(std::string(dtype_name(v.as_dtype())));
  if (v.is_int_list()) {
    std::string out = "[";
    for (std::int64_t d : v.as_int_list()) out += (out.size() > 1 ? ", " : "") + std::to_string(d);
    return out + "]";
  }
  if (v.is_float_list()) {
    std::string out = "[";
    for (double d : v.as_float_list())
      out += (out.size() > 1 ? ", " : "") + fmt::format("{:.17g}", d);
    return out + "]";
  }
  return json_string(v.repr());
}

std::string json_case_inputs(const manifest::Entry& entry, const manifest::WorkloadCase& wcase) {
  std::string out = "[";
  for (std::size_t i = 0; i < wcase.inputs.size(); ++i) {
    out += i ? ", " : "";
    const auto& spec = wcase.inputs[i];
    if (!spec) {
      out += "null";
      continue;
    }
    std::string shape = "[";
    for (std::int64_t d : spec->shape) shape += (shape.size() > 1 ? ", " : "") + std::to_string(d);
    // A `values: group_ends(<Dim>)` input: other harnesses make the same kind of values.
    std::string values;
    if (i < wcase.group_ends.size() && wcase.group_ends[i])
      values =
          fmt::format(", \"values\": \"group_ends\", \"values_bound\": {}", *wcase.group_ends[i]);
    out += fmt::format("{{\"name\": {}, \"shape\": {}], \"dtype\": {}{}}}",
                       json_string(entry.inputs[i].name), shape,
                       json_string(std::string(dtype_name(spec->dtype))), values);
  }
  return out + "]";
}

std::string json_params(const ParamMap& params) {
  std::string out = "{";
  for (const auto& [name, value] : params)
    out += (out.size() > 1 ? ", " : "") + json_string(name) + ": " + json_value(value);
  return out + "}";
}

std::string json_strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& s : items) out += (out.size() > 1 ? ", " : "") + json_string(s);
  return out + "]";
}

// "Op.interface=key" of each entry the op and its held sub-ops built.
void collect_kernels(const Op& op, std::vector<std::string>& out) {
  for (const InterfaceDecl& i : op.op_class().interfaces())
    for (const BuiltEntry& e : op.built_entries(i.name)) {
      // What the entry chose among its candidates (a tuned GEMM's algorithm), when it says.
      const auto* kernel = dynamic_cast<const Kernel*>(e.entry.get());
      const std::string detail = kernel ? kernel->detail() : std::string();
      out.push_back(fmt::format("{}.{}={}{}", op.name(), i.name, e.key,
                                detail.empty() ? "" : " [" + detail + "]"));
    }
  for (const auto& sub : op.held_delegates()) collect_kernels(*sub, out);
}

std::string to_json(const std::vector<Row>& rows, const Ceiling& ceiling) {
  std::string out = "[";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out += fmt::format(
        "{}\n  {{\"op\": {}, \"workload\": {}, \"case\": {}, \"device\": {}, \"status\": {}, "
        "\"note\": {}, "
        "\"repeat\": {}, \"time_s\": {}, \"flops\": {}, \"bytes\": {}, \"gb_per_s\": {}, "
        "\"tflop_per_s\": {}, "
        "\"fraction_of_ceiling\": {}, \"ceiling_bytes_per_s\": {}, \"ceiling_flop_per_s\": {}, "
        "\"method\": {}, \"calls_per_batch\": {}, \"sets\": {}, \"working_set_bytes\": {}, "
        "\"kernels\": {}, \"inputs\": {}, \"params\": {}}}",
        i ? "," : "", json_string(r.op), json_string(r.workload), json_string(r.case_id),
        json_string(r.device), json_string(r.status), json_string(r.note), r.repeat,
        json_number(r.seconds), r.flops, r.bytes, json_number(r.gbps), json_number(r.tflops),
        json_number(r.fraction), json_number(ceiling.bytes_per_s),
        ceiling.flops_per_s > 0 ? json_number(ceiling.flops_per_s) : "null", json_string(r.method),
        r.calls_per_batch, r.sets, r.working_set_bytes, json_strings(r.kernels), r.inputs_json,
        r.params_json);
  }
  return out + "\n]\n";
}

Row bench_case(const std::string& op_name, ScaledCase& sc, Device device, const Ceiling& ceiling,
               const BenchOptions& options) {
  Row row = make_row(op_name, sc.row->label, sc.wcase.id, device.str(), "ok", sc.scale_note);
  row.inputs_json = json_case_inputs(*entry_of(op_name), sc.wcase);
  row.params_json = json_params(sc.wcase.params);
  if (std::optional<std::string> reason = cannot_run_reason(sc.wcase, device)) {
    row.status = "skipped";
    row.note = *reason;
    return row;
  }
  std::shared_ptr<Op> op = make_op(op_name, sc.wcase.params);
  // Tuned mode before the first call: that call, untimed and never captured, tunes what it builds.
  if (options.tune) op->request_tune();
  std::vector<std::optional<Tensor>> inputs = random_inputs(sc.wcase, device, options.seed);
  if (device.is_cuda()) {
    const DeviceTiming t =
        time_on_cuda(*op, inputs, device, options.warmup, options.repeat, options.graph);
    row.seconds = t.seconds;
    row.repeat = t.batches;
    row.method = t.method;
    row.calls_per_batch = t.calls_per_batch;
    row.sets = t.sets;
    row.working_set_bytes = t.working_set_bytes;
    if (!t.note.empty()) row.note += (row.note.empty() ? "" : "; ") + t.note;
  } else {
    for (int i = 0; i < options.warmup; ++i) op->call(inputs);
    std::vector<double> times;
    for (int i = 0; i < std::max(1, options.repeat); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      op->call(inputs);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    row.repeat = static_cast<int>(times.size());
    row.seconds = times[times.size() / 2];
    row.method = "host-clock";
    row.calls_per_batch = 1;
    row.sets = 1;
  }
  collect_kernels(*op, row.kernels);
  const manifest::RooflineResult roof = op->eval_roofline();
  row.flops = roof.flops;
  row.bytes = roof.bytes;
  row.gbps = static_cast<double>(roof.bytes) / row.seconds / 1e9;
  row.tflops = static_cast<double>(roof.flops) / row.seconds / 1e12;
  const double bound = std::max(
      ceiling.bytes_per_s > 0 ? static_cast<double>(roof.bytes) / ceiling.bytes_per_s : 0.0,
      ceiling.flops_per_s > 0 ? static_cast<double>(roof.flops) / ceiling.flops_per_s : 0.0);
  row.fraction = bound / row.seconds;
  return row;
}

}  // namespace

int run_bench(const BenchOptions& options) {
  register_builtin_ops();
  std::vector<std::string> ops = options.ops;
  if (ops.empty())
    for (const auto& e : manifest::Manifest::builtin().entries())
      if (find_op_class(e->name)) ops.push_back(e->name);

  // Instantiate everything first so that the progress display knows the total.
  struct Pending {
    std::string op;
    ScaledCase sc;
  };
  std::vector<Pending> pending;
  std::vector<Row> rows;
  const Device device = choose_device();
  // Large workloads are scaled down on the CPU only, unless --max-elems says otherwise.
  const std::int64_t max_elems =
      options.max_elems >= 0 ? options.max_elems : (device.is_cpu() ? kDefaultMaxElems : 0);
  for (const std::string& name : ops) {
    auto entry = entry_of(name);
    if (!find_op_class(name)) {
      rows.push_back(
          make_row(name, "-", "-", "-", "skipped", "no op class is registered for this entry"));
      continue;
    }
    auto plan = plan_of(entry);
    for (const auto& w : entry->workloads)
      for (ScaledCase& sc : scaled_cases(*plan, w, max_elems))
        pending.push_back({name, std::move(sc)});
  }

  const Ceiling ceiling = ceiling_of(device);
  fmt::print(
      stderr, "bench on {}: ceiling {:.1f} GB/s{} ({})\n", device.str(), ceiling.bytes_per_s / 1e9,
      ceiling.flops_per_s > 0 ? fmt::format(", {:.0f} TFLOP/s", ceiling.flops_per_s / 1e12) : "",
      ceiling.source);
  if (device.is_cuda())
    fmt::print(stderr, "an empty kernel replayed from a CUDA graph takes {:.2f} us per kernel\n",
               empty_kernel_seconds(device) * 1e6);
  if (!options.json)
    fmt::print("{:<22} {:<34} {:>11} {:>9} {:>9} {:>8}  {}\n", "op", "case", "time (us)", "GB/s",
               "TFLOP/s", "ceiling", "kernels; note");
  for (std::size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    fmt::print(stderr, "[{}/{}] {} {}{}\n", i + 1, pending.size(), p.op, p.sc.wcase.id,
               p.sc.scale_note.empty() ? "" : " (" + p.sc.scale_note + ")");
    Row r;
    try {
      r = bench_case(p.op, p.sc, device, ceiling, options);
    } catch (const Error& e) {
      // OpNotAvailableError: nothing can run the op on this device (no CUDA kernel yet).
      const bool unavailable = dynamic_cast<const OpNotAvailableError*>(&e) != nullptr;
      r = make_row(p.op, p.sc.row->label, p.sc.wcase.id, device.str(),
                   unavailable ? "skipped" : "error", e.what());
      r.inputs_json = json_case_inputs(*entry_of(p.op), p.sc.wcase);
      r.params_json = json_params(p.sc.wcase.params);
    }
    if (!options.json) {
      if (r.status == "ok") {
        std::string keys;
        for (const std::string& k : r.kernels)
          keys += (keys.empty() ? "" : ",") + k.substr(k.find('=') + 1);
        fmt::print("{:<22} {:<34} {:>11.2f} {:>9.2f} {:>9.4f} {:>7.1f}%  {}{}{}\n", r.op, r.case_id,
                   r.seconds * 1e6, r.gbps, r.tflops, 100.0 * r.fraction, keys,
                   r.note.empty() ? "" : "; ", r.note);
      } else
        fmt::print("{:<22} {:<34} {:>11} {:>9} {:>9} {:>8}  {}\n", r.op, r.case_id, r.status, "-",
                   "-", "-", r.note);
    }
    rows.push_back(std::move(r));
  }
  if (options.json) fmt::print("{}", to_json(rows, ceiling));
  if (!options.json_file.empty()) {
    std::FILE* f = std::fopen(options.json_file.c_str(), "w");
    if (!f) throw Error(fmt::format("bench: cannot write {}", options.json_file));
    fmt::print(f, "{}", to_json(rows, ceiling));
    std::fclose(f);
  }
  const bool errors =
      std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.status == "error"; });
  return errors ? 1 : 0;
}

}  // namespace tileops::cli
