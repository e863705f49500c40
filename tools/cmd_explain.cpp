// `tileops explain`: why each implementation serves or refuses a workload call.
//
// Note [Explain through the dispatch log]
// The call specs an op builds from a SignatureCall are private to its forward(), and no op has a
// hook yet that states them without running (ARCHITECTURE.md §6 plans one). Op::verdicts needs
// that typed spec, so explain instead runs one real call of the (scaled) workload case on random
// inputs with TILEOPS_LOG=dispatch set, captures the selection lines the framework prints on the
// cache miss of each kernel_for (every sub-op of a composite included), and lays them out per
// implementation. What it shows is therefore exactly what the call selected, at the cost of running
// it once; meta tensors would not do, since a meta call selects no kernel.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <typeindex>

#include "commands.hpp"
#include "env_guard.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::cli {
namespace {

// Runs `body` with file descriptor 2 redirected to a temporary file; returns what was written.
template <class F>
std::string capture_stderr(F&& body) {
  std::fflush(stderr);
  std::FILE* tmp = std::tmpfile();
  if (!tmp) throw Error("explain: cannot create a temporary file to capture the dispatch log");
  const int saved = dup(2);
  dup2(fileno(tmp), 2);
  auto restore = [&] {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
  };
  try {
    body();
  } catch (...) {
    restore();
    std::fclose(tmp);
    throw;
  }
  restore();
  std::string text;
  std::rewind(tmp);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, tmp)) > 0;) text.append(buffer, n);
  std::fclose(tmp);
  return text;
}

const OpClass* class_named(const std::string& name) {
  const RegisteredOp* reg = find_op_class(name);
  return reg ? reg->cls : nullptr;
}

// One line "tileops dispatch: Op.iface: winner for CALL[; refused: k (why); ...]".
void print_selection(const std::string& line) {
  const std::string prefix = "tileops dispatch: ";
  const std::size_t head_end = line.find(": ", prefix.size());
  const std::size_t for_at = line.find(" for ", head_end);
  if (line.rfind(prefix, 0) != 0 || head_end == std::string::npos || for_at == std::string::npos) {
    fmt::print("  {}\n", line);
    return;
  }
  const std::string where = line.substr(prefix.size(), head_end - prefix.size());
  const std::string winner = line.substr(head_end + 2, for_at - head_end - 2);
  const std::size_t refused_at = line.find("; refused: ", for_at);
  const std::string call = line.substr(
      for_at + 5, refused_at == std::string::npos ? std::string::npos : refused_at - for_at - 5);
  const std::string refused =
      refused_at == std::string::npos ? std::string() : line.substr(refused_at + 11);
  fmt::print("  {}\n    call:   {}\n", where, call);
  const std::size_t dot = where.find('.');
  const OpClass* cls = class_named(where.substr(0, dot));
  const std::string iface = dot == std::string::npos ? std::string() : where.substr(dot + 1);
  std::type_index iface_type = typeid(void);
  if (cls)
    for (const auto& i : cls->interfaces())
      if (i.name == iface) iface_type = i.interface_type;
  bool listed = false;
  if (cls)
    for (const KernelType& t : cls->kernel_types()) {
      if (t.interface_type != iface_type) continue;
      listed = true;
      const std::string tag = t.key + " (";
      const std::size_t at = refused.find(tag);
      if (t.key == winner)
        fmt::print("    {:<28} serves: selected\n", t.key);
      else if (at != std::string::npos) {
        const std::size_t end = refused.find("; ", at);
        const std::string reason = refused.substr(
            at + tag.size(), (end == std::string::npos ? refused.size() : end) - at - tag.size());
        fmt::print(
            "    {:<28} refuses: {}\n", t.key,
            reason.empty() || reason.back() != ')' ? reason : reason.substr(0, reason.size() - 1));
      } else
        fmt::print("    {:<28} serves, but {} is preferred\n", t.key, winner);
    }
  if (!listed)
    fmt::print("    selected: {}\n    refused:  {}\n", winner, refused.empty() ? "-" : refused);
}

void print_built(const Op& op, int depth) {
  for (const auto& i : op.op_class().interfaces()) {
    std::vector<std::string> keys;
    for (const BuiltEntry& b : op.built_entries(i.name)) keys.push_back(b.key);
    fmt::print(
        "{:>{}}{}.{}: {}\n", "", 2 * depth + 2, op.name(), i.name,
        keys.empty() ? std::string("(nothing built)") : fmt::format("{}", fmt::join(keys, ", ")));
  }
  for (const auto& sub : op.held_delegates()) print_built(*sub, depth + 1);
}

}  // namespace

int run_explain(const CaseOptions& options) {
  auto entry = entry_of(options.op);
  auto plan = plan_of(entry);
  register_builtin_ops();
  if (!find_op_class(entry->name)) {
    fmt::print("{}: no op class is registered (status {}); nothing to explain\n", entry->name,
               entry->status);
    return 1;
  }
  ScaledCase sc = pick_case(*plan, options.workload, options.dtype, options.max_elems);
  const Device device = choose_device();
  std::optional<std::string> retarget = retarget_device_param(sc.wcase, device);
  fmt::print("{}: workload case {} on {}\n", entry->name, sc.wcase.id, device.str());
  if (!sc.scale_note.empty()) fmt::print("  {}\n", sc.scale_note);
  if (retarget) fmt::print("  {}\n", *retarget);
  if (const char* force = std::getenv("TILEOPS_FORCE"))
    fmt::print("  TILEOPS_FORCE={} is set\n", force);

  std::shared_ptr<Op> op = make_op(entry->name, sc.wcase.params);
  std::vector<std::optional<Tensor>> inputs = random_inputs(sc.wcase, device, options.seed);
  std::string error;
  std::string log = capture_stderr([&] {
    EnvGuard env("TILEOPS_LOG", "dispatch");
    try {
      op->call(inputs);
    } catch (const Error& e) {
      error = e.what();
    }
  });
  fmt::print("selections (the dispatch log of one call):\n");
  std::size_t start = 0;
  bool any = false;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(start, end - start);
    if (line.rfind("tileops dispatch: ", 0) == 0) {
      print_selection(line);
      any = true;
    } else if (!line.empty()) {
      fmt::print(stderr, "{}\n", line);
    }
    start = end + 1;
  }
  if (!any) fmt::print("  (no kernel was selected: a target or an empty result served the call)\n");
  if (!error.empty()) {
    fmt::print("the call failed: {}\n", error);
    return 1;
  }
  if (std::optional<Target> t = op->serving_target()) fmt::print("serving target: {}\n", t->str());
  fmt::print("built entries:\n");
  print_built(*op, 0);
  return 0;
}

}  // namespace tileops::cli
