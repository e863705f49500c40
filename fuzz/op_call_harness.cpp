// The op-call harness: one fuzz input run as one op call (op_call_harness.hpp).
//
// Note [Op-call fuzzing]
// The bytes pick a workload case of a builtin op (scaled to OpCallSizes::seed_elems), mutate its
// construction params and its inputs (dtype, lengths, rank, presence, device, strides, offset,
// aliasing, read-only memory, an out= buffer), fill the tensors they change with bytes of their own
// (index tensors included: a kernel stays memory-safe whatever the values), and run the op. Each
// call is held to the rules of bad input:
// - a call fails only with a tileops::Error that names the op; anything else escapes, and
//   libFuzzer reports it;
// - ASan and UBSan watch every read and write, the storages sized to the bytes their views span;
// - a call the signature check on meta tensors (Op::check_call, the compile boundary's fake kernel)
//   refuses is refused when it runs; a call that runs gives the outputs that check inferred, on the
//   call's device, and out= is the buffer passed;
// - a call leaves unchanged every input it does not write (all of them when it fails on the CPU)
//   and every read-only input;
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
// that faulted, seen at the next synchronisation.

#include "op_call_harness.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "byte_reader.hpp"
#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/op/op.hpp"
#include "tileops/op/registry.hpp"
#include "workload_cases.hpp"

namespace tileops::fuzz {
namespace {

using Inputs = std::vector<std::optional<Tensor>>;

// The run's device and sizes (the first call's), and the call under test and the last error it
// raised, as finding() prints them.
Device g_device = Device::cpu();
OpCallSizes g_sizes;
std::string g_call;
std::string g_error;

bool g_keep_going = false;

// A broken rule: printed, then the process aborts, or (keep_going_after_findings) an OpCallFinding
// is thrown to run_op_call's caller. `fatal`: nothing can run after it (a CUDA context lost).
[[noreturn]] void finding(const std::string& what, bool fatal = false) {
  const std::string text = what + "\n  call: " + g_call + "\n  last error: " + g_error;
  std::fprintf(stderr, "fuzz_op_call: %s\n", text.c_str());
  std::fflush(stderr);
  if (g_keep_going) throw OpCallFinding{text, fatal};
  std::abort();
}

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

// ---- Values the mutations draw from. ----
std::int64_t interesting_int(ByteReader& in, std::int64_t near) {
  static constexpr std::int64_t kInts[] = {0,
                                           1,
                                           2,
                                           3,
                                           7,
                                           -1,
                                           -2,
                                           std::int64_t{1} << 20,
                                           std::int64_t{1} << 31,
                                           std::int64_t{1} << 40,
                                           std::numeric_limits<std::int64_t>::max(),
                                           std::numeric_limits<std::int64_t>::min()};
  // Neighbours wrap around (int64 arithmetic in uint64): INT64_MAX + 1 is INT64_MIN.
  const auto near_u = static_cast<std::uint64_t>(near);
  switch (in.in_range(0, 3)) {
    case 0:
      return static_cast<std::int64_t>(near_u + 1);
    case 1:
      return static_cast<std::int64_t>(near_u - 1);
    case 2:
      return static_cast<std::int64_t>(near_u * 2);
    default:
      return kInts[in.index(std::size(kInts))];
  }
}

double interesting_float(ByteReader& in) {
  static constexpr double kFloats[] = {0.0,
                                       -0.0,
                                       1.0,
                                       -1.0,
                                       0.5,
                                       1e-30,
                                       1e30,
                                       std::numeric_limits<double>::quiet_NaN(),
                                       std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::denorm_min(),
                                       std::numeric_limits<double>::max()};
  return kFloats[in.index(std::size(kFloats))];
}

DType any_dtype(ByteReader& in) {
  return static_cast<DType>(in.in_range(0, tileops::kNumDTypes - 1));
}

// A value of any kind, for a param of any type: the check must refuse what does not fit.
Value any_value(ByteReader& in, const tileops::manifest::ParamDecl& decl, const Value* current) {
  const std::int64_t near = current && current->is_int() ? current->as_int() : 4;
  switch (in.in_range(0, 7)) {
    case 0:
      return Value(interesting_int(in, near));
    case 1:
      return Value(interesting_float(in));
    case 2:
      return Value(in.flag());
    case 3: {
      const auto& choices = decl.type.enum_values;
      if (!choices.empty() && in.flag()) return Value(choices[in.index(choices.size())]);
      static constexpr const char* kTexts[] = {"cpu", "meta", "cuda", "cuda:7",   "none",
                                               "",    "tanh", "neox", "bfloat16", "int64"};
      return Value(kTexts[in.index(std::size(kTexts))]);
    }
    case 4:
      return Value(any_dtype(in));
    case 5: {
      Shape list;
      const int n = in.in_range(0, 5);
      for (int k = 0; k < n; ++k) list.push_back(interesting_int(in, near));
      return Value(std::move(list));
    }
    case 6: {
      std::vector<double> list(in.in_range(0, 3));
      for (double& x : list) x = interesting_float(in);
      return Value(std::move(list));
    }
    default:
      return Value();
  }
}

ParamMap mutate_params(ByteReader& in, const Seed& seed) {
  ParamMap params = seed.wcase.params;
  const auto& decls = seed.entry->params;
  const int changes = in.in_range(0, 2);
  for (int k = 0; k < changes && !decls.empty(); ++k) {
    const auto& decl = decls[in.index(decls.size())];
    if (in.in_range(0, 7) == 0) {  // omitted: a required param must be refused
      ParamMap without;
      for (const auto& [name, value] : params)
        if (name != decl.name) without.set(name, value);
      params = std::move(without);
    } else {
      params.set(decl.name, any_value(in, decl, params.find(decl.name)));
    }
  }
  if (in.in_range(0, 15) == 0) params.set("no_such_param", Value(1));
  return params;
}

// ---- Inputs: a geometry per tensor, then the tensors. ----
struct Geometry {
  DType dtype = DType::kFloat32;
  Shape shape;
  std::optional<Shape> strides;  // nullopt: contiguous
  std::int64_t offset_elems = 0;
  bool meta = false;
  bool host = false;  // on the CPU when the run's device is another
  bool read_only = false;
  int alias_of = -1;  // another input's index: this input is that tensor
};

Geometry geometry_of(DType dtype, Shape shape = {}) {
  Geometry g;
  g.dtype = dtype;
  g.shape = std::move(shape);
  return g;
}

void mutate_geometry(ByteReader& in, Geometry& g, std::size_t inputs) {
  const std::size_t rank = g.shape.size();
  switch (in.in_range(0, 9)) {
    case 0:
      g.dtype = any_dtype(in);
      break;
    case 1:
      if (rank > 0) {
        const std::size_t k = in.index(rank);
        g.shape[k] = interesting_int(in, g.shape[k]);
      }
      break;
    case 2: {  // one more axis
      Shape grown;
      const std::size_t at = in.index(rank + 1);
      for (std::size_t k = 0; k <= rank; ++k) {
        if (k == at) grown.push_back(in.flag() ? 1 : in.in_range(0, 9));
        if (k < rank) grown.push_back(g.shape[k]);
      }
      g.shape = std::move(grown);
      break;
    }
    case 3:  // one axis fewer
      if (rank > 0) {
        Shape shrunk;
        const std::size_t at = in.index(rank);
        for (std::size_t k = 0; k < rank; ++k)
          if (k != at) shrunk.push_back(g.shape[k]);
        g.shape = std::move(shrunk);
      }
      break;
    case 4:  // off the call's device: a meta tensor, or a host one in a run on a device
      (in.flag() ? g.meta : g.host) = true;
      break;
    case 5: {  // strided: every stride doubled, one axis broadcast (stride 0) or two swapped
      Shape strides = tileops::contiguous_strides(g.shape);
      const int kind = in.in_range(0, 2);
      if (kind == 0) {
        for (auto& s : strides)
          if (__builtin_mul_overflow(s, 2, &s)) s = std::numeric_limits<std::int64_t>::max();
      } else if (rank > 0) {
        const std::size_t k = in.index(rank);
        const std::size_t j = in.index(rank);
        if (kind == 1) {
          strides[k] = 0;
        } else {
          std::swap(strides[k], strides[j]);
        }
      }
      g.strides = std::move(strides);
      break;
    }
    case 6:  // element 0 past the storage's start: misaligned for 16-byte vectors
      g.offset_elems = in.in_range(1, 3);
      break;
    case 7:
      g.read_only = true;
      break;
    case 8:
      if (inputs > 1) g.alias_of = static_cast<int>(in.index(inputs));
      break;
    default: {  // an arbitrary small shape
      Shape shape;
      const int n = in.in_range(0, 4);
      for (int k = 0; k < n; ++k) shape.push_back(in.in_range(0, 9));
      g.shape = std::move(shape);
      break;
    }
  }
}

// make_tensor's tensor; the library's CheckError for a geometry it has no tensor of. A tensor on
// the CPU or a device has a storage of exactly the bytes its view spans.
Tensor make_valid_tensor(ByteReader& in, const Geometry& g) {
  const Shape strides = g.strides.value_or(tileops::contiguous_strides(g.shape));
  const std::optional<std::int64_t> span = tileops::strided_extent(g.shape, strides);
  const auto itemsize = static_cast<std::int64_t>(tileops::dtype_size(g.dtype));
  const std::optional<std::int64_t> numel = g.shape.checked_numel();
  const bool small = span && numel && *span <= g_sizes.max_tensor_elems &&
                     *numel <= g_sizes.max_tensor_elems &&
                     (*span + g.offset_elems) * itemsize <= g_sizes.max_tensor_bytes;
  if (g.meta || !small) return Tensor::meta(g.shape, g.dtype);
  const std::size_t bytes = static_cast<std::size_t>((*span + g.offset_elems) * itemsize);
  auto memory = std::shared_ptr<std::byte[]>(new std::byte[bytes]);
  const std::span<const std::uint8_t> given = in.bytes(bytes);
  for (std::size_t b = 0; b < bytes; ++b)
    memory[b] = static_cast<std::byte>(b < given.size() ? given[b] : (b * 37 + 11) & 0xff);
  const auto offset = static_cast<std::size_t>(g.offset_elems * itemsize);
  if (g_device.is_cpu() || g.host)
    return Tensor::from_blob(memory.get() + offset, g.shape, strides, g.dtype, Device::cpu(),
                             memory, g.read_only);
  const Tensor host = Tensor::from_blob(memory.get(), Shape{static_cast<std::int64_t>(bytes)},
                                        Shape{1}, DType::kUInt8, Device::cpu(), memory);
  Tensor device = Tensor::empty(host.shape(), DType::kUInt8, g_device);
  device.copy_from(host);
  return Tensor::from_blob(static_cast<std::byte*>(device.data_ptr()) + offset, g.shape, strides,
                           g.dtype, g_device, device.storage(), g.read_only);
}

// A meta tensor, or a tensor on the run's device (the CPU for a `host` one) over a storage of
// exactly the bytes the view spans, filled with bytes from the input (then a counter, when it runs
// out). nullopt for a geometry no tensor has (a
// negative length, more bytes than int64 counts): the library refuses to make one (a CheckError),
// so no op ever sees it.
std::optional<Tensor> make_tensor(ByteReader& in, const Geometry& g) {
  try {
    return make_valid_tensor(in, g);
  } catch (const tileops::CheckError&) {
    return std::nullopt;
  }
}

// The seed's inputs as the manifest gives them, on the run's device, random and never zero.
Inputs seed_inputs(const Seed& seed) {
  return tileops::workloads::random_inputs(seed.wcase, g_device, /*seed=*/7);
}

std::optional<Tensor> as_meta(const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return t;
  return Tensor::meta(t->shape(), t->dtype());
}

std::string describe(const std::string& op, const ParamMap& params, const Inputs& inputs,
                     const std::optional<Tensor>& out) {
  std::string text = op + params.repr() + "(";
  const auto one = [](const std::optional<Tensor>& t) -> std::string {
    if (!t || !t->defined()) return "None";
    return std::string(tileops::dtype_name(t->dtype())) + t->shape().str() + " strides " +
           t->strides().str() + " offset " + std::to_string(t->byte_offset()) + " on " +
           t->device().str() + (t->read_only() ? " read-only" : "");
  };
  for (const auto& t : inputs) text += one(t) + ", ";
  return text + "out=" + one(out) + ")";
}

void check_result(const Op& op, const tileops::CallResult& result,
                  const tileops::manifest::SignatureCall& expected, const Tensor* out) {
  for (std::size_t i = 0; i < result.size(); ++i) {
    if (!result[i]) continue;
    const tileops::manifest::TensorRecord& record = expected.output(i);
    if (!record.present) continue;
    if (result[i]->shape() != record.shape || result[i]->dtype() != record.dtype)
      finding(op.name() + ": an output differs from the shape or dtype check_call inferred");
    if (result[i]->device() != op.last_call()->device().value_or(Device::cpu()))
      finding(op.name() + ": an output is not on the call's device");
  }
  const int buffer = [&] {
    for (std::size_t i = 0; i < op.op_class().entry().outputs.size(); ++i)
      if (op.op_class().entry().outputs[i].buffer_out) return static_cast<int>(i);
    return -1;
  }();
  if (out && buffer >= 0 && static_cast<std::size_t>(buffer) < result.size() && result[buffer] &&
      result[buffer]->data_ptr() != out->data_ptr())
    finding(op.name() + ": the buffer output is not the out= tensor passed");
}

// The bytes of `t`'s storage, copied to the host (a device's once its queued work is done); empty
// for a meta tensor.
std::vector<std::byte> storage_bytes(const Tensor& t) {
  if (t.is_meta() || !t.storage() || !t.storage()->data()) return {};
  const std::shared_ptr<tileops::Storage>& storage = t.storage();
  const Tensor all =
      Tensor::from_blob(storage->data(), Shape{static_cast<std::int64_t>(storage->nbytes())},
                        Shape{1}, DType::kUInt8, storage->device(), storage);
  const Tensor host = all.to(Device::cpu(), DType::kUInt8);
  const auto* data = static_cast<const std::byte*>(host.data_ptr());
  return {data, data + storage->nbytes()};
}

std::vector<std::vector<std::byte>> snapshot(const Inputs& inputs) {
  std::vector<std::vector<std::byte>> bytes(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && inputs[i]->defined()) bytes[i] = storage_bytes(*inputs[i]);
  return bytes;
}

// Inputs a call leaves as they were: after one that ran, each input the call's record does not
// write, that shares no memory with an input it writes or an output; after one that failed, every
// input on the CPU (which checks before it writes), and on a device each input the signature never
// writes (the checking mode raises after the kernel, which rotated RoPE's other tokens:
// docs/cuda.md); a read-only input in every case.
void check_unwritten(const Op& op, const Inputs& inputs, bool ran,
                     const tileops::CallResult& result,
                     const std::vector<std::vector<std::byte>>& before) {
  std::vector<const Tensor*> written;
  for (const auto& t : result)
    if (t && t->defined()) written.push_back(&*t);
  std::vector<bool> writes(inputs.size(), false);
  for (std::size_t i = 0; ran && i < inputs.size(); ++i)
    writes[i] = op.last_call()->writes_input(i);
  if (!ran && !g_device.is_cpu()) {
    const auto& decls = op.op_class().entry().inputs;
    for (std::size_t i = 0; i < inputs.size() && i < decls.size(); ++i)
      writes[i] = decls[i].may_be_written();
  }
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && writes[i]) written.push_back(&*inputs[i]);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (before[i].empty()) continue;
    const Tensor& t = *inputs[i];
    bool may_change = false;
    for (const Tensor* w : written) may_change = may_change || w->shares_storage_with(t);
    if (may_change && !t.read_only()) continue;
    if (storage_bytes(t) != before[i])
      finding(op.name() + ": input " + std::to_string(i) +
              (ran ? " changed, which the call does not write" : " changed by a call that failed"));
  }
}

// Runs `f`; a tileops::Error (or an allocation the machine refuses) is an answer, anything else a
// finding. Returns whether `f` completed.
template <class F>
bool completes(const std::string& op, F&& f) {
  try {
    f();
    return true;
  } catch (const tileops::CudaError& e) {
    finding(
        op + ": a CUDA error (a kernel that faulted, or a call the runtime refused): " + e.what(),
        /*fatal=*/true);
  } catch (const tileops::Error& e) {
    g_error = e.what();
    if (std::strstr(e.what(), op.c_str()) == nullptr)
      finding(op + ": an error that does not name the op: " + e.what());
    return false;
  } catch (const std::bad_alloc&) {
    return false;
  } catch (const std::exception& e) {
    finding(op + ": an exception that is not a tileops::Error: " + e.what());
  }
}

// A call that writes no input, made again on the same inputs (the instance's cache hit, where the
// first was a miss), succeeds and gives the same bits: the kernels are deterministic.
void check_repeatable(Op& op, const Inputs& inputs, const tileops::CallOptions& options,
                      const tileops::CallResult& first) {
  if (!op.last_call()->written().empty()) return;
  std::vector<std::vector<std::byte>> expected;
  for (const auto& t : first) expected.push_back(t ? storage_bytes(*t) : std::vector<std::byte>{});
  tileops::CallResult again;
  if (!completes(op.name(), [&] { again = op.call(inputs, options); }))
    finding(op.name() + ": the same call, made again, fails");
  for (std::size_t i = 0; i < again.size() && i < expected.size(); ++i)
    if ((again[i] ? storage_bytes(*again[i]) : std::vector<std::byte>{}) != expected[i])
      finding(op.name() + ": output " + std::to_string(i) + " differs when the call is repeated");
}

}  // namespace

void keep_going_after_findings(bool keep_going) { g_keep_going = keep_going; }

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
  g_call = seed.op;
  g_error.clear();

  const bool params_mutated = in.flag();
  const ParamMap params = params_mutated ? mutate_params(in, seed) : seed.wcase.params;
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
    } else if (std::optional<Tensor> t = make_tensor(in, g)) {
      inputs[i] = std::move(*t);
    } else {
      return OpCallOutcome::kSkipped;
    }
  }
  for (std::size_t i = 0; i < geometry.size(); ++i)
    if (geometry[i] && geometry[i]->alias_of >= 0) inputs[i] = inputs[geometry[i]->alias_of];

  std::optional<Tensor> out;
  const int out_kind = in.in_range(0, 7);
  if (out_kind == 0 && !inputs.empty()) {  // out= one of the inputs
    out = inputs[in.index(inputs.size())];
  } else if (out_kind == 1) {
    Geometry g = geometry_of(any_dtype(in));
    const int rank = in.in_range(0, 3);
    for (int k = 0; k < rank; ++k) g.shape.push_back(in.in_range(0, 9));
    out = make_tensor(in, g);
    if (!out) return OpCallOutcome::kSkipped;
  } else if (out_kind == 2 && seed.buffer) {  // the buffer the call takes, perhaps mutated
    Geometry g = geometry_of(seed.buffer->dtype, seed.buffer->shape);
    if (in.flag()) mutate_geometry(in, g, 1);
    out = make_tensor(in, g);
    if (!out) return OpCallOutcome::kSkipped;
  }

  g_call = describe(seed.op, params, inputs, out);

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
    check_unwritten(*op, inputs, true, result, before);
    check_repeatable(*op, inputs, options, result);
  } else {
    check_unwritten(*op, inputs, false, {}, before);
  }

  // Nothing half-bound: the instance, built from the seed's params, still serves the seed's case.
  if (!params_mutated && !completes(seed.op, [&] { (void)op->call(seed_inputs(seed)); }))
    finding(seed.op + ": the seed's own case fails after a mutated call");
  return ran ? OpCallOutcome::kRan : OpCallOutcome::kRefused;
}

}  // namespace tileops::fuzz
