// The op-call harness: one fuzz input run as one op call (op_call_harness.hpp). Here the seeds and
// the call; the mutations are in op_call_mutations.cpp, the rules in op_call_rules.cpp.
//
// Note [Op-call fuzzing]
// The bytes pick a workload case of a builtin op (scaled to OpCallSizes::seed_elems), mutate its
// construction params and its inputs (dtype, lengths, rank, presence, device, strides, offset,
// read-only memory, an out= buffer; an input or out= that is another input, or shares its memory:
// over its bytes or right beside them), fill the tensors they change with bytes of their own
// (index tensors included: a kernel stays memory-safe whatever the values), and run the op. Each
// call is held to the rules of bad input:
// - a call fails only with a tileops::Error that names the op; anything else escapes, and
//   libFuzzer reports it;
// - ASan and UBSan watch every read and write, the storages sized to the bytes their views span;
// - a call the signature check on meta tensors (Op::check_call, the compile boundary's fake kernel)
//   refuses is refused when it runs; a call that runs gives the outputs that check inferred, on the
//   call's device, and out= is the buffer passed;
// - a call leaves unchanged every input it does not write (all of them when it fails on the CPU)
//   and every read-only input; so a kernel that writes past a view's end or before its start, into
//   an input placed there in the same memory, is seen on a device too, where a sanitizer sees
//   only the allocation's bounds;
// - a call that runs and writes no input runs again on the same inputs (a cache hit where the first
//   was a miss) with the same bits;
// - after any call, failed or not, the instance still serves the unmutated case: nothing is left
//   half-bound.
// A crash, a hang, a leak, a sanitizer report or a broken rule is a finding (the call and its last
// error on stderr, then abort). Its first finding: check_call refused an out= buffer of an op whose
// `device` param names its device (Op::check_call in src/op/op_explain.cpp).
//
// The same inputs run on a CUDA device (tileops_op_call_replay --device cuda:0, under
// compute-sanitizer in scripts/gpu-check): the seeds' inputs and `device` params are placed there,
// each mutated tensor gets a device storage of exactly its view's bytes, copied up from the
// host, and one mutation leaves a tensor on the host. A CudaError is a finding there: a kernel
// that faulted, seen at the next synchronisation (after which the device takes no more work), or a
// call the runtime or a CUDA library refused where the op should have refused it with its reason.

#include "op_call_harness.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "byte_reader.hpp"
#include "op_call_mutations.hpp"
#include "op_call_rules.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"
#include "tileops/op/registry.hpp"
#include "workload_cases.hpp"

namespace tileops::fuzz {
namespace {

// The run's device and sizes (the first call's).
Device g_device = Device::cpu();
OpCallSizes g_sizes;

// A workload case of a registered op, its `device` param (if any) pointed at the run's device, that
// runs there as the manifest gives it.
struct Seed {
  std::string op;
  tileops::manifest::WorkloadCase wcase;
  const tileops::manifest::Entry* entry = nullptr;
  std::optional<tileops::TensorSpec> buffer;  // the out= buffer the case's call would take
};

Inputs seed_inputs(const Seed& seed);

// Whether the case runs as given. A case scaled down can outgrow its data (RoPE's random
// positions past a cache cut to 8 rows): such a case is no seed.
bool runs(const Seed& seed) {
  try {
    (void)tileops::make_op(seed.op, seed.wcase.params)->call(seed_inputs(seed));
    return true;
  } catch (const tileops::Error&) {
    return false;
  }
}

const std::vector<Seed>& seeds() {
  static const std::vector<Seed> all = [] {
    tileops::register_builtin_ops();
    std::vector<Seed> found;
    for (const tileops::RegisteredOp& reg : tileops::registered_op_classes()) {
      const auto entry = tileops::workloads::entry_of(reg.cls->name());
      const auto plan = tileops::workloads::plan_of(entry);
      for (const auto& row : entry->workloads) {
        for (auto& sc : tileops::workloads::scaled_cases(*plan, row, g_sizes.seed_elems)) {
          if (sc.largest_elems > g_sizes.max_tensor_elems) continue;
          tileops::workloads::retarget_device_param(sc.wcase, g_device);
          std::optional<tileops::TensorSpec> buffer;
          const auto outputs = tileops::workloads::infer_outputs(*plan, sc.wcase);
          for (std::size_t i = 0; i < entry->outputs.size(); ++i)
            if (entry->outputs[i].buffer_out && i < outputs.size()) buffer = outputs[i];
          Seed seed{entry->name, std::move(sc.wcase), entry.get(), std::move(buffer)};
          if (runs(seed)) found.push_back(std::move(seed));
        }
      }
    }
    if (found.empty()) finding("no workload case of a registered op runs on " + g_device.str());
    return found;
  }();
  return all;
}

// Input `i` made to share input `j`'s memory as `how` says (Geometry::sharing); both stay as
// they are where either has no memory of its own.
void share_memory(ByteReader& in, Inputs& inputs, std::size_t i, std::size_t j, Sharing how) {
  if (how == Sharing::kSame || i == j) {
    inputs[i] = inputs[j];
    return;
  }
  if (!inputs[i] || !inputs[j]) return;
  const bool before = how == Sharing::kBefore;
  const auto shared =
      in_one_storage(in, before ? *inputs[i] : *inputs[j], before ? *inputs[j] : *inputs[i],
                     how == Sharing::kOverlapping);
  if (!shared) return;
  inputs[before ? i : j] = shared->first;
  inputs[before ? j : i] = shared->second;
}

// The seed's inputs as the manifest gives them, on the run's device, random and never zero.
Inputs seed_inputs(const Seed& seed) {
  return tileops::workloads::random_inputs(seed.wcase, g_device, /*seed=*/7);
}

std::optional<Tensor> as_meta(const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return t;
  return Tensor::meta(t->shape(), t->dtype());
}

}  // namespace

OpCallOutcome run_op_call(std::span<const std::uint8_t> data, Device device, std::string* op_name,
                          const OpCallSizes& sizes) {
  // The seeds are made once, on the first call's device and at its sizes.
  static const Device run_device = device;
  static const OpCallSizes run_sizes = sizes;
  if (device != run_device || sizes.seed_elems != run_sizes.seed_elems)
    finding("a run on " + device.str() + " after one on " + run_device.str() +
            " or at other sizes");
  g_device = device;
  g_sizes = sizes;
  ByteReader in(data);
  const std::vector<Seed>& all = seeds();
  const Seed& seed = all[in.index(all.size())];
  *op_name = seed.op;
  start_call(seed.op, g_device);

  const bool params_mutated = in.flag();
  const ParamMap params =
      params_mutated ? mutate_params(in, seed.wcase.params, seed.entry->params) : seed.wcase.params;
  std::shared_ptr<Op> op;
  if (!completes(seed.op, [&] { op = tileops::make_op(seed.op, params); }))
    return OpCallOutcome::kRefused;

  // The inputs' geometries as the seed gives them, then mutated.
  std::vector<std::optional<Geometry>> geometry(seed.wcase.inputs.size());
  for (std::size_t i = 0; i < geometry.size(); ++i)
    if (const auto& spec = seed.wcase.inputs[i])
      geometry[i] = geometry_of(spec->dtype, spec->shape);
  const int changes = in.in_range(0, 3);
  for (int k = 0; k < changes && !geometry.empty(); ++k) {
    auto& g = geometry[in.index(geometry.size())];
    if (!g || in.in_range(0, 7) == 0) {  // an optional input omitted, or given
      g = g ? std::nullopt : std::optional<Geometry>(geometry_of(DType::kFloat32, Shape{4}));
    } else {
      mutate_geometry(in, *g, geometry.size());
    }
  }
  // Fresh values for inputs left as the seed gives them, the input's bytes for the others.
  const Inputs fresh = seed_inputs(seed);
  Inputs inputs(geometry.size());
  for (std::size_t i = 0; i < geometry.size(); ++i) {
    if (!geometry[i]) continue;
    const auto& spec = seed.wcase.inputs[i];
    const Geometry& g = *geometry[i];
    const bool as_given = spec && g.dtype == spec->dtype && g.shape == spec->shape && !g.strides &&
                          g.offset_elems == 0 && !g.meta && !g.host && !g.read_only;
    if (as_given) {
      inputs[i] = fresh[i];
    } else if (std::optional<Tensor> t = make_tensor(in, g, g_device, g_sizes)) {
      inputs[i] = std::move(*t);
    } else {
      return OpCallOutcome::kSkipped;
    }
  }
  for (std::size_t i = 0; i < geometry.size(); ++i)
    if (geometry[i] && geometry[i]->alias_of >= 0)
      share_memory(in, inputs, i, static_cast<std::size_t>(geometry[i]->alias_of),
                   geometry[i]->sharing);

  std::optional<Tensor> out;
  const int out_kind = in.in_range(0, 7);
  if (out_kind == 0 && !inputs.empty()) {  // out= one of the inputs
    out = inputs[in.index(inputs.size())];
  } else if (out_kind == 1) {
    Geometry g = geometry_of(any_dtype(in));
    const int rank = in.in_range(0, 3);
    for (int k = 0; k < rank; ++k) g.shape.push_back(in.in_range(0, 9));
    out = make_tensor(in, g, g_device, g_sizes);
    if (!out) return OpCallOutcome::kSkipped;
  } else if ((out_kind == 2 || out_kind == 3) && seed.buffer) {
    // The buffer the call takes, perhaps mutated; or placed in one memory with an input, over its
    // bytes or beside them.
    Geometry g = geometry_of(seed.buffer->dtype, seed.buffer->shape);
    if (in.flag()) mutate_geometry(in, g, 1);
    out = make_tensor(in, g, g_device, g_sizes);
    if (!out) return OpCallOutcome::kSkipped;
    if (out_kind == 3 && !inputs.empty()) {
      Inputs with_out = inputs;
      with_out.push_back(out);
      share_memory(in, with_out, with_out.size() - 1, in.index(inputs.size()),
                   static_cast<Sharing>(in.in_range(1, 3)));
      out = with_out.back();
      with_out.pop_back();
      inputs = std::move(with_out);
    }
  }

  describe_call(seed.op, params, inputs, out);

  // The signature check alone, on meta tensors, then the call.
  Inputs metas;
  for (const auto& t : inputs) metas.push_back(as_meta(t));
  const std::optional<Tensor> out_meta = as_meta(out);
  std::optional<tileops::manifest::SignatureCall> expected;
  const bool checked = completes(
      seed.op, [&] { expected.emplace(op->check_call(metas, out_meta ? &*out_meta : nullptr)); });
  if (checked) {
    std::int64_t output_bytes = 0;
    for (std::size_t i = 0; i < seed.entry->outputs.size(); ++i) {
      const tileops::manifest::TensorRecord& record = expected->output(i);
      const std::optional<std::int64_t> numel = record.shape.checked_numel();
      if (!numel) finding(seed.op + ": check_call inferred an output whose size overflows");
      if (!record.present) continue;
      if (*numel > g_sizes.max_output_bytes) return OpCallOutcome::kSkipped;
      output_bytes += *numel * static_cast<std::int64_t>(tileops::dtype_size(record.dtype));
    }
    if (output_bytes > g_sizes.max_output_bytes) return OpCallOutcome::kSkipped;
  }
  tileops::CallResult result;
  tileops::CallOptions options;
  options.out = out;
  const std::vector<std::vector<std::byte>> before = snapshot(inputs);
  const bool ran = completes(seed.op, [&] { result = op->call(inputs, options); });
  if (ran && !checked) finding(seed.op + ": a call check_call refuses ran");
  if (ran) {
    check_result(*op, result, *expected, out ? &*out : nullptr);
    check_unwritten(*op, g_device, inputs, true, result, before);
    check_repeatable(*op, inputs, options, result);
  } else {
    check_unwritten(*op, g_device, inputs, false, {}, before);
  }

  // Nothing half-bound: the instance, built from the seed's params, still serves the seed's case.
  if (!params_mutated && !completes(seed.op, [&] { (void)op->call(seed_inputs(seed)); }))
    finding(seed.op + ": the seed's own case fails after a mutated call");
  return ran ? OpCallOutcome::kRan : OpCallOutcome::kRefused;
}

}  // namespace tileops::fuzz
