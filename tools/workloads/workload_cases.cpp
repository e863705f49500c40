#include "workload_cases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "tileops/core/error.hpp"
#include "tileops/core/numeric.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::workloads {
namespace {

using manifest::WorkloadCase;
using manifest::WorkloadRow;

// Elements of the largest tensor of any case of the row: inputs from the instantiation, outputs
// from the signature's inference.
std::int64_t largest_elems(const manifest::SignaturePlan& plan,
                           const std::vector<WorkloadCase>& cases) {
  std::int64_t largest = 0;
  for (const WorkloadCase& c : cases) {
    for (const auto& spec : c.inputs)
      if (spec) largest = std::max(largest, spec->shape.numel());
    try {
      for (const TensorSpec& out : infer_outputs(plan, c))
        largest = std::max(largest, out.shape.numel());
    } catch (const Error&) {
      // A case whose outputs the plan cannot infer without a device is sized by its inputs.
    }
  }
  return largest;
}

// `value` rounded to `dtype` as storing it in a tensor of that dtype does.
double round_to(DType dtype, double value) {
  unsigned char buffer[8] = {};
  store_from_double(dtype, value, buffer);
  return load_as_double(dtype, buffer);
}

// Names of int params that appear as a whole axis of some tensor (`[num_heads, seq_len, ...]`).
std::vector<std::string> axis_params(const manifest::Entry& entry) {
  std::vector<std::string> names;
  auto scan = [&](const std::vector<manifest::TensorDecl>& decls) {
    for (const auto& t : decls)
      for (const auto& axis : t.shape.axes) {
        const manifest::ParamDecl* p = entry.find_param(axis.expr.source);
        if (!axis.splice && p && p->type.kind == manifest::ParamKind::kInt &&
            std::find(names.begin(), names.end(), p->name) == names.end())
          names.push_back(p->name);
      }
  };
  scan(entry.inputs);
  scan(entry.outputs);
  return names;
}

// The rows one shrinking step towards `max_elems` gives, most preferred first (scaled_cases takes
// the first the signature accepts; none when nothing is left to shrink): the Shape indices of the
// largest rank together, on one axis, from the leading one; then each Dim index or int param that
// sizes a tensor axis halved, the longest first.
std::vector<WorkloadRow> shrink_steps(const manifest::Entry& entry, const WorkloadRow& row,
                                      std::int64_t size, std::int64_t max_elems) {
  std::vector<WorkloadRow> steps;
  // Shape indices of the largest rank shrink together, so that shapes that must agree (a + b of
  // one shape) keep agreeing and broadcast partners stay valid.
  std::size_t rank = 0;
  for (const auto& [name, v] : row.indices)
    if (v.is_int_list()) rank = std::max(rank, v.as_int_list().size());
  for (std::size_t a = 0; a < rank; ++a) {
    std::int64_t longest = 0;
    for (const auto& [name, v] : row.indices)
      if (v.is_int_list() && v.as_int_list().size() == rank)
        longest = std::max(longest, v.as_int_list()[a]);
    if (longest <= 1) continue;
    // A lower-rank index broadcast against this axis (shapes align on the right) pins it.
    bool pinned = false;
    for (const auto& [name, v] : row.indices)
      if (v.is_int_list() && v.as_int_list().size() < rank && a >= rank - v.as_int_list().size())
        pinned = pinned || v.as_int_list()[a - (rank - v.as_int_list().size())] != 1;
    if (pinned) continue;
    const double ratio = static_cast<double>(max_elems) / static_cast<double>(size);
    const std::int64_t target = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(static_cast<double>(longest) * ratio), 1, longest - 1);
    WorkloadRow& step = steps.emplace_back(row);
    for (auto& [name, v] : step.indices) {
      if (!v.is_int_list() || v.as_int_list().size() != rank) continue;
      Shape s = v.as_int_list();
      s[a] = std::min(s[a], target);
      v = Value(std::move(s));
    }
  }
  // Then Dim indices and int params that size a tensor axis, longest first (a Dim before a param
  // of the same length).
  struct Length {
    std::string name;
    bool param = false;
    std::int64_t value = 0;
  };
  std::vector<Length> lengths;
  for (const auto& [name, v] : row.indices)
    if (v.is_int() && v.as_int() > 1) lengths.push_back({name, false, v.as_int()});
  for (const std::string& name : axis_params(entry))
    if (const Value* v = row.params.find(name); v && v->is_int() && v->as_int() > 1)
      lengths.push_back({name, true, v->as_int()});
  std::stable_sort(lengths.begin(), lengths.end(),
                   [](const Length& a, const Length& b) { return a.value > b.value; });
  for (const Length& length : lengths) {
    WorkloadRow& step = steps.emplace_back(row);
    if (length.param) {
      step.params.set(length.name, Value(length.value / 2));
      continue;
    }
    for (auto& [name, v] : step.indices)
      if (name == length.name) v = Value(length.value / 2);
  }
  return steps;
}

// Whether the signature accepts every case (its outputs infer on meta tensors).
bool accepted(const manifest::SignaturePlan& plan, const std::vector<WorkloadCase>& cases) {
  try {
    for (const WorkloadCase& c : cases) infer_outputs(plan, c);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string scale_note(const WorkloadRow& from, const WorkloadRow& to, std::int64_t before,
                       std::int64_t after) {
  std::string changes;
  for (std::size_t i = 0; i < from.indices.size(); ++i)
    if (!(from.indices[i].second == to.indices[i].second))
      changes += fmt::format("{}{} {} -> {}", changes.empty() ? "" : ", ", from.indices[i].first,
                             from.indices[i].second.repr(), to.indices[i].second.repr());
  for (const auto& [name, v] : from.params)
    if (!(v == to.params.at(name)))
      changes += fmt::format("{}{} {} -> {}", changes.empty() ? "" : ", ", name, v.repr(),
                             to.params.at(name).repr());
  return fmt::format("scaled from {} to {} elements per tensor: {}", before, after, changes);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

}  // namespace

std::shared_ptr<const manifest::Entry> entry_of(std::string_view op) {
  for (const auto& e : manifest::Manifest::builtin().entries())
    if (e->name == op) return e;
  throw CheckError(
      fmt::format("{}: no manifest entry of this name (tileops list shows the ops)", op));
}

std::shared_ptr<const manifest::SignaturePlan> plan_of(
    const std::shared_ptr<const manifest::Entry>& entry) {
  register_builtin_ops();
  if (const RegisteredOp* reg = find_op_class(entry->name)) return reg->cls->plan();
  return manifest::SignaturePlan::build(entry);
}

std::vector<ScaledCase> scaled_cases(const manifest::SignaturePlan& plan, const WorkloadRow& row,
                                     std::int64_t max_elems) {
  WorkloadRow scaled = row;
  std::vector<WorkloadCase> cases = manifest::instantiate_workload(plan, scaled);
  const std::int64_t original = largest_elems(plan, cases);
  std::int64_t size = original;
  // A step must keep the shape rules (halving D of a rotary embedding may break R <= D), checked
  // when the row's own cases infer (one whose outputs need a device is sized by its inputs).
  const bool check_rules = accepted(plan, cases);
  for (int step = 0; max_elems > 0 && size > max_elems && step < 200; ++step) {
    bool shrunk = false;
    for (WorkloadRow& next : shrink_steps(plan.entry(), scaled, size, max_elems)) {
      std::vector<WorkloadCase> next_cases;
      try {
        next_cases = manifest::instantiate_workload(plan, next);
      } catch (const CheckError&) {
        continue;
      }
      if (check_rules && !accepted(plan, next_cases)) continue;
      scaled = std::move(next);
      cases = std::move(next_cases);
      size = largest_elems(plan, cases);
      shrunk = true;
      break;
    }
    if (!shrunk) break;
  }
  std::string note = size == original ? std::string() : scale_note(row, scaled, original, size);
  std::vector<ScaledCase> out;
  for (WorkloadCase& c : cases) out.push_back({&row, scaled, std::move(c), size, note});
  return out;
}

ScaledCase pick_case(const manifest::SignaturePlan& plan, const std::string& label,
                     const std::string& dtype, std::int64_t max_elems) {
  const manifest::Entry& entry = plan.entry();
  const manifest::WorkloadRow* row = nullptr;
  std::string labels;
  for (const auto& r : entry.workloads) {
    if (!row && (label.empty() || r.label == label)) row = &r;
    labels += (labels.empty() ? "" : ", ") + r.label;
  }
  if (!row)
    throw CheckError(
        fmt::format("{}: no workload labelled '{}'; workloads: {}", entry.name, label, labels));
  std::vector<ScaledCase> cases = scaled_cases(plan, *row, max_elems);
  std::string ids;
  for (ScaledCase& c : cases) {
    std::vector<std::string> parts = split(c.wcase.id, '-');
    if (dtype.empty() || std::find(parts.begin(), parts.end(), dtype) != parts.end())
      return std::move(c);
    ids += (ids.empty() ? "" : ", ") + c.wcase.id;
  }
  throw CheckError(fmt::format("{}: workload '{}' has no case of dtype '{}'; cases: {}", entry.name,
                               row->label, dtype, ids));
}

std::vector<TensorSpec> infer_outputs(const manifest::SignaturePlan& plan,
                                      const WorkloadCase& wcase) {
  std::vector<std::optional<Tensor>> metas;
  for (const auto& spec : wcase.inputs)
    metas.push_back(spec ? std::optional<Tensor>(Tensor::meta(spec->shape, spec->dtype))
                         : std::nullopt);
  const manifest::ConstructionState state = plan.construct(wcase.params);
  const manifest::SignatureCall call = plan.check(state, metas);
  std::vector<TensorSpec> outputs;
  for (std::size_t o = 0; o < plan.entry().outputs.size(); ++o)
    outputs.push_back({Device::meta(), call.output(o).dtype, call.output(o).shape});
  return outputs;
}

std::optional<std::string> cannot_run_reason(const manifest::WorkloadCase& wcase, Device device) {
  const Value* param = wcase.params.find("device");
  if (!param || !param->is_str()) return std::nullopt;
  const Device wanted = Device::parse(param->as_str());
  if (wanted.type == device.type) return std::nullopt;
  return fmt::format("the workload runs on device '{}' and the best device here is {}",
                     param->as_str(), device.str());
}

std::optional<std::string> retarget_device_param(manifest::WorkloadCase& wcase, Device device) {
  std::optional<std::string> reason = cannot_run_reason(wcase, device);
  if (!reason) return std::nullopt;
  const std::string was = wcase.params.at("device").as_str();
  wcase.params.set("device", Value(device.str()));
  return fmt::format("device param '{}' replaced by '{}' to run here", was, device.str());
}

namespace {

// Note [Random group ends]
// An input with `values: group_ends(<Dim>)` holds the ends of consecutive groups of the Dim's rows
// (a grouped GEMM's offsets): non-decreasing, each in [0, total], the last equal to total. The ends
// are drawn as sorted uniform cut points, then about a quarter of the groups are emptied (an end
// repeated), as routing leaves experts without tokens.
std::vector<std::int64_t> random_group_ends(std::int64_t groups, std::int64_t total,
                                            std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> cut(0, total);
  std::uniform_int_distribution<int> quarter(0, 3);
  std::vector<std::int64_t> ends(static_cast<std::size_t>(groups));
  for (auto& end : ends) end = cut(rng);
  std::sort(ends.begin(), ends.end());
  for (std::size_t g = 1; g < ends.size(); ++g)
    if (quarter(rng) == 0) ends[g] = ends[g - 1];
  if (!ends.empty()) ends.back() = total;
  return ends;
}

}  // namespace

std::vector<std::optional<Tensor>> random_inputs(const manifest::WorkloadCase& wcase, Device device,
                                                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small_int(1, 8);
  std::uniform_int_distribution<int> coin(0, 1);
  std::vector<std::optional<Tensor>> inputs;
  for (const auto& spec : wcase.inputs) {
    if (!spec) {
      inputs.emplace_back(std::nullopt);
      continue;
    }
    Tensor host = Tensor::empty(spec->shape, spec->dtype, Device::cpu());
    auto* bytes = static_cast<unsigned char*>(host.data_ptr());
    const std::size_t item = host.itemsize();
    const DTypeCategory category = dtype_category(spec->dtype);
    // A GPU workload holds up to hundreds of millions of elements: past kFreshElements the drawn
    // values repeat (copied), which keeps them random-looking and never zero at a fraction of the
    // time. The CPU's scaled-down cases stay below it.
    constexpr std::int64_t kFreshElements = std::int64_t{1} << 22;
    const std::size_t index = inputs.size();
    if (index < wcase.group_ends.size() && wcase.group_ends[index]) {
      const std::vector<std::int64_t> ends =
          random_group_ends(host.numel(), *wcase.group_ends[index], rng);
      for (std::size_t g = 0; g < ends.size(); ++g)
        store_from_double(spec->dtype, static_cast<double>(ends[g]), bytes + g * item);
      inputs.emplace_back(device.is_cpu() ? std::move(host) : host.to(device, spec->dtype));
      continue;
    }
    const std::int64_t fresh = std::min(host.numel(), kFreshElements);
    for (std::int64_t i = 0; i < fresh; ++i) {
      double v = 0.0;
      if (category == DTypeCategory::kBool)
        v = coin(rng);
      else if (category == DTypeCategory::kInt)
        v = small_int(rng);
      else
        do v = normal(rng);
        while (round_to(spec->dtype, v) == 0.0);
      store_from_double(spec->dtype, v, bytes + static_cast<std::size_t>(i) * item);
    }
    const auto fresh_bytes = static_cast<std::size_t>(fresh) * item;
    for (std::size_t at = fresh_bytes; fresh_bytes > 0 && at < host.nbytes(); at += fresh_bytes)
      std::memcpy(bytes + at, bytes, std::min(fresh_bytes, host.nbytes() - at));
    // A device's inputs are made on the host and copied up.
    inputs.emplace_back(device.is_cpu() ? std::move(host) : host.to(device, spec->dtype));
  }
  return inputs;
}

}  // namespace tileops::workloads
