// The call check and the result check (docs/framework.md, Signature plans).
#include <fmt/format.h>

#include "manifest/plan_exec.hpp"
#include "manifest/plan_internal.hpp"
#include "tileops/core/error.hpp"

namespace tileops::manifest {

using detail::PlanData;
using detail::PlanTensor;

namespace {

[[noreturn]] void fail(const PlanData& d, const std::string& what) {
  throw CheckError(fmt::format("{}: {}", d.op_name, what));
}

bool present(const Tensor* t) { return t && t->defined(); }
bool present(const std::optional<Tensor>& t) { return t && t->defined(); }

// A tensor the call writes whose elements overlap (Note [Internal overlap] in shape.cpp): the
// result would depend on the order of the writes. PyTorch's wording, after the tensor's name.
[[noreturn]] void fail_overlap(const PlanData& d, std::string_view tensor) {
  fail(d, fmt::format("{}: unsupported operation: more than one element of the written-to tensor "
                      "refers to a single memory location; pass a copy (Tensor::contiguous())",
                      tensor));
}

// Note [Sizes that overflow]: every tensor of a checked call has an element count and a byte
// count that int64 holds. Tensor constructors keep element counts in range, but a stride-0 view
// can count more bytes than int64 does, and an inferred output shape (a large param, a broadcast
// of two such views) can count more elements: unchecked, the count wraps to a negative or to
// exactly 0, which a kernel would be handed as a length and step 3 would take for an empty write.
// The check rejects such a call, naming the tensor, before any of that is decided (PyTorch
// raises at the allocation: "Storage size calculation overflowed").
bool bytes_fit(std::int64_t numel, DType dtype) {
  std::int64_t bytes = 0;
  return !__builtin_mul_overflow(numel, static_cast<std::int64_t>(dtype_size(dtype)), &bytes);
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.byte_offset() == b.byte_offset() &&
         a.shape() == b.shape() && a.strides() == b.strides() && a.dtype() == b.dtype() &&
         a.device() == b.device();
}

// The call-time tensor whose device is the call's: the first one not declared `device: cpu`, once
// every such tensor is checked to be on that device; null when no call-time tensor decides.
const Tensor* deciding_tensor(const PlanData& d, TensorRefs inputs) {
  const Tensor* first = nullptr;
  for (int i = 0; i < d.num_inputs; ++i) {
    if (!present(inputs[i])) continue;
    const Tensor& t = *inputs[i];
    if (d.input(i).decl->cpu_only) {
      if (!t.device().is_cpu() && !t.device().is_meta())
        fail(d, fmt::format("{} declares `device: cpu` but is on {}", d.input(i).decl->name,
                            t.device().str()));
      continue;
    }
    if (!first) {
      first = &t;
    } else if (first->device() != t.device()) {
      std::string devices;
      for (int j = 0; j < d.num_inputs; ++j)
        if (present(inputs[j]) && !d.input(j).decl->cpu_only)
          devices += (devices.empty() ? "" : ", ") + d.input(j).decl->name + " on " +
                     inputs[j]->device().str();
      fail(d, fmt::format("needs every tensor on one device; got [{}]", devices));
    }
  }
  return first;
}

// The device of a call no call-time tensor decides: the `device` param's, else the
// construction-time tensors' (docs/seeds.md, construction-and-calls §4).
std::optional<Device> construction_device(const PlanData& d, const ConstructionState& state) {
  if (state.device) return state.device;
  std::optional<Device> device;
  for (const auto& t : state.ctor_tensors) {
    if (!t) continue;
    if (!device)
      device = t->device();
    else if (*device != t->device())
      fail(d, "construction-time tensors are on more than one device");
  }
  return device;
}

void check_dtype_combos(const PlanData& d, const std::vector<Value>& frame) {
  const auto& combos = d.entry->dtype_combos;
  if (combos.empty()) return;
  for (const auto& row : combos) {
    bool match = true;
    for (const auto& [name, dt] : row) {
      const expr::Scope::Entry* s = d.scope.find(name);
      match = match && s && frame[s->slot].is_dtype() && frame[s->slot].as_dtype() == dt;
    }
    if (match) return;
  }
  std::string cols, vals;
  for (const auto& [name, dt] : combos.front()) {
    cols += (cols.empty() ? "" : ", ") + name;
    const expr::Scope::Entry* s = d.scope.find(name);
    vals +=
        (vals.empty() ? "" : ", ") +
        (s && frame[s->slot].is_dtype() ? std::string(dtype_name(frame[s->slot].as_dtype())) : "?");
  }
  fail(d, fmt::format("[{}] = [{}] is not a dtype_combos row", cols, vals));
}

}  // namespace

SignatureCall SignaturePlan::check(const ConstructionState& state,
                                   std::span<const std::optional<Tensor>> inputs,
                                   const Tensor* out) const {
  SignatureCall call;
  check_into(call, state, BorrowedTensors(inputs).refs(), out);
  return call;
}

std::unique_ptr<SignatureCall> SignaturePlan::new_record() {
  return std::unique_ptr<SignatureCall>(new SignatureCall());
}

// Note [Repeated geometry]
// A serving process calls an op with the same few geometries over and over, and everything the
// schedule solves (indices, lets, rules, the dtype rows, the output records and the empty-write
// answer) is a function of the construction, the presence point and each input's shape and
// dtype; none of it reads strides, addresses or the device. So a record that a check of this
// plan and construction filled completely keeps what it solved, and a later check into it whose
// inputs match its input records shape for shape and dtype for dtype takes those answers instead
// of solving again (Add's call: 4,320 instructions, ~1,500 of them the schedule). What depends on
// the tensors themselves is checked every call: presence, the device, contiguity, written inputs
// (read-only, internal overlap), `out` against the output record, storage shared between written
// tensors. `solved_` is cleared before a record is solved and set only once solving succeeded, so
// a record a failing check left half-filled is solved again, and fails again the same way.
bool SignaturePlan::solved_for(const SignatureCall& call, const ConstructionState& state,
                               TensorRefs inputs, std::uint32_t presence) const {
  const PlanData& d = *data_;
  if (!call.solved_ || call.plan_.get() != this || call.construction_id_ != state.id ||
      call.presence_ != presence)
    return false;
  for (int i = 0; i < d.num_inputs; ++i) {
    const TensorRecord& rec = call.tensors_[d.num_ctor + i];
    if (!present(inputs[i])) {
      if (rec.present) return false;
      continue;
    }
    if (!rec.present || rec.dtype != inputs[i]->dtype() || rec.shape != inputs[i]->shape())
      return false;
  }
  return true;
}

void SignaturePlan::solve_into(SignatureCall& call, const ConstructionState& state,
                               TensorRefs inputs, std::uint32_t presence,
                               std::uint32_t written) const {
  const PlanData& d = *data_;
  call.solved_ = false;
  const detail::Schedule& schedule = d.calls[presence & ~(1u << d.out_bit)];
  const bool has_out = (presence >> d.out_bit) & 1u;
  // A record from this construction keeps the construction's values (Note [Record reuse] in
  // signature_call.hpp); the slots other presence points write and this one does not go back to
  // theirs.
  if (call.plan_.get() != this) {
    call.plan_ = shared_from_this();
    call.memos_.clear();  // indices of another plan's programs
  }
  call.memos_.resize(static_cast<std::size_t>(d.num_memos));
  if (call.construction_id_ == state.id && call.frame_.size() == state.frame.size()) {
    for (int slot : schedule.reset_slots) call.frame_[slot] = state.frame[slot];
  } else {
    call.construction_id_ = 0;
    call.frame_ = state.frame;
    call.construction_id_ = state.id;
  }
  call.tensors_.resize(d.tensors.size());
  // An absent tensor's record is the default one, whatever the reused record held.
  auto record = [](TensorRecord& rec, const Tensor* t) {
    rec.present = t != nullptr;
    if (t) {
      rec.shape = t->shape();
      rec.dtype = t->dtype();
    } else {
      rec.shape.clear();
      rec.dtype = TensorRecord{}.dtype;
    }
  };
  for (int i = 0; i < d.num_ctor; ++i) {
    const auto& t = state.ctor_tensors[i];
    record(call.tensors_[i], t ? &*t : nullptr);
  }
  for (int i = 0; i < d.num_inputs; ++i)
    record(call.tensors_[d.num_ctor + i], present(inputs[i]) ? &*inputs[i] : nullptr);
  for (int slot : schedule.fill_tensor_slots) {
    const int ti = d.slot_tensor[slot];
    bool is_present = slot == d.out_slot
                          ? has_out
                          : (ti >= 0 && (call.tensors_[ti].present ||
                                         d.tensors[ti].role == PlanTensor::Role::kOutput));
    call.frame_[slot] = is_present ? Value(true) : Value();
  }
  detail::CallScratch scratch(d);
  detail::run_schedule(d, schedule, call.frame_, call.tensors_, scratch, call.memos_.data());
  // The call's dtype, which the op casts the tensor to (Note [Ctor tensor dtypes] in
  // plan_build.cpp).
  for (int ti : d.ctor_dtype_at_call)
    if (call.tensors_[ti].present)
      call.tensors_[ti].dtype = call.frame_[d.tensors[ti].dtype_index_slot].as_dtype();
  check_dtype_combos(d, call.frame_);

  for (int o = 0; o < d.num_outputs; ++o) {
    const PlanTensor& t = d.output(o);
    TensorRecord& rec = call.tensors_[d.num_ctor + d.num_inputs + o];
    rec.present = true;
    rec.shape.clear();
    const detail::Where where{t.decl->name, "shape"};
    Value value;
    for (std::size_t k = 0; k < t.axes.size(); ++k) {
      const Value& v = t.axis_direct[k] >= 0
                           ? call.frame_[t.axis_direct[k]]
                           : detail::eval_memoised(d, t.axes[k], call.frame_,
                                                   &call.memos_[t.axis_memo[k]], value, where);
      if (t.decl->shape.axes[k].splice) {
        rec.shape.append(v.as_int_list());
      } else {
        if (v.as_int() < 0)
          fail(d, fmt::format("axis {} of {}, {}, is negative ({})", rec.shape.size(), t.decl->name,
                              t.decl->shape.axes[k].expr.source, v.as_int()));
        rec.shape.push_back(v.as_int());
      }
    }
    rec.dtype =
        detail::operand(d, t.dtype, t.dtype_direct, call.frame_, value, {t.decl->name, "dtype"})
            .as_dtype();
    // See Note [Sizes that overflow]
    const std::optional<std::int64_t> numel = rec.shape.checked_numel();
    if (!numel)
      fail(d, fmt::format("output {} has shape {}, whose element count overflows int64",
                          t.decl->name, rec.shape.str()));
    if (!bytes_fit(*numel, rec.dtype))
      fail(d,
           fmt::format("output {} of shape {} and dtype {} holds more bytes than int64 can count",
                       t.decl->name, rec.shape.str(), dtype_name(rec.dtype)));
  }

  // Step 3's question, answered here from the records so the call path asks no name lookups:
  // at least one write, and every written tensor (the outputs and written inputs) is empty.
  bool any_write = d.num_outputs > 0 || written != 0;
  bool all_empty = any_write;
  for (int o = 0; o < d.num_outputs && all_empty; ++o)
    all_empty = call.tensors_[d.num_ctor + d.num_inputs + o].shape.numel() == 0;
  for (int i = 0; i < d.num_inputs && all_empty; ++i)
    if ((written >> i) & 1u) all_empty = call.tensors_[d.num_ctor + i].shape.numel() == 0;
  call.empty_write_ = all_empty;
  call.presence_ = presence;
  call.solved_ = true;
}

void SignaturePlan::check_into(SignatureCall& call, const ConstructionState& state,
                               TensorRefs inputs, const Tensor* out,
                               DeviceFallback fallback_device) const {
  const PlanData& d = *data_;
  if (inputs.size() != static_cast<std::size_t>(d.num_inputs))
    fail(d, fmt::format("takes {} inputs, got {}", d.num_inputs, inputs.size()));
  std::uint32_t presence = 0;
  for (int i = 0; i < d.num_inputs; ++i) {
    const PlanTensor& t = d.input(i);
    if (!present(inputs[i])) {
      if (t.optional_bit < 0) fail(d, fmt::format("'{}' is required", t.decl->name));
    } else if (t.optional_bit >= 0) {
      presence |= 1u << t.optional_bit;
    }
  }
  const bool has_out = out && out->defined();
  if (has_out && d.buffer_output < 0) fail(d, "takes no out buffer");
  if (has_out) presence |= 1u << d.out_bit;

  // The device is kept as a Device and a flag, not an optional, until it is stored: an optional
  // built on the stack and read back cost store-forwarding stalls that were a twentieth of a
  // cache-hit call (perf annotate).
  Device device;
  bool has_device = true;
  if (const Tensor* decider = deciding_tensor(d, inputs)) {
    device = decider->device();
  } else {
    std::optional<Device> other = construction_device(d, state);
    if (!other && fallback_device) other = fallback_device();
    has_device = other.has_value();
    if (other) device = *other;
  }
  const std::uint32_t written = state.point->written[presence];
  for (int i = 0; i < d.num_inputs; ++i) {
    if (!present(inputs[i])) continue;
    const Tensor& t = *inputs[i];
    const TensorDecl& decl = *d.input(i).decl;
    if (decl.contiguous && !t.is_contiguous())
      fail(d, fmt::format("{} must be contiguous", decl.name));
    if ((written >> i) & 1u) {
      if (t.read_only()) fail(d, fmt::format("{} is written but read-only", decl.name));
      if (t.has_internal_overlap()) fail_overlap(d, decl.name);
    }
    if (!bytes_fit(t.numel(), t.dtype()))  // Note [Sizes that overflow]
      fail(d, fmt::format("{} of shape {} and dtype {} holds more bytes than int64 can count",
                          decl.name, t.shape().str(), dtype_name(t.dtype())));
  }

  call.stages_.clear();
  if (!solved_for(call, state, inputs, presence))  // Note [Repeated geometry]
    solve_into(call, state, inputs, presence, written);

  if (has_out) {
    const TensorRecord& want = call.tensors_[d.num_ctor + d.num_inputs + d.buffer_output];
    const std::string& oname = d.output(d.buffer_output).decl->name;
    if (out->shape() != want.shape)
      fail(d, fmt::format("out does not have the shape of {}: got {}, expected {}", oname,
                          out->shape().str(), want.shape.str()));
    if (out->dtype() != want.dtype)
      fail(d, fmt::format("out dtype is not the dtype of {}: got {}, expected {}", oname,
                          dtype_name(out->dtype()), dtype_name(want.dtype)));
    if (has_device && out->device() != device)
      fail(d, fmt::format("out is not on the call device {}: got {}", device.str(),
                          out->device().str()));
    if (out->has_internal_overlap()) fail_overlap(d, "out");
    if (!out->is_contiguous()) fail(d, "out must be contiguous");
    if (out->read_only()) fail(d, "out is read-only");
    for (int i = 0; i < d.num_inputs; ++i)
      if (present(inputs[i]) && out->shares_storage_with(*inputs[i]))
        fail(d, fmt::format("out shares storage with input {}", d.input(i).decl->name));
  }
  for (int i = 0; i < d.num_inputs; ++i) {
    if (!((written >> i) & 1u)) continue;
    for (int j = 0; j < d.num_inputs; ++j) {
      if (j != i && present(inputs[j]) && inputs[i]->shares_storage_with(*inputs[j]))
        fail(d, fmt::format("{} is written and shares storage with input {}", d.input(i).decl->name,
                            d.input(j).decl->name));
    }
  }
  if (has_device)
    call.device_ = device;  // assigned in place: no optional built on the stack
  else
    call.device_.reset();
  call.has_out_ = has_out;
  call.written_mask_ = written;
}

void SignaturePlan::check_result(const SignatureCall& call, TensorRefs inputs, const Tensor* out,
                                 std::span<const std::optional<Tensor>> results) const {
  const PlanData& d = *data_;
  if (results.size() != static_cast<std::size_t>(d.num_outputs))
    fail(d, fmt::format("forward returns {} output{}; the signature declares {}", results.size(),
                        results.size() == 1 ? "" : "s", d.num_outputs));
  for (int o = 0; o < d.num_outputs; ++o) {
    const TensorDecl& decl = *d.output(o).decl;
    if (!present(results[o]))
      fail(d, fmt::format("forward returns no tensor for output {}", decl.name));
    const Tensor& r = *results[o];
    if (decl.buffer_out && call.has_out()) {
      if (!out || !same_tensor(r, *out))
        fail(d, fmt::format("output {} is not the out tensor the call passed", decl.name));
      continue;
    }
    if (!decl.alias.empty()) {
      const TensorDecl* in = d.entry->find_input(decl.alias);
      int ii = static_cast<int>(in - d.entry->inputs.data());
      if (call.writes_input(ii)) {
        if (!present(inputs[ii]) || !same_tensor(r, *inputs[ii]))
          fail(d,
               fmt::format("output {} is not input {}, which it aliases", decl.name, decl.alias));
        continue;
      }
    }
    const TensorRecord& want = call.output(o);
    if (r.shape() != want.shape)
      fail(d, fmt::format("output {} has shape {}, expected {}", decl.name, r.shape().str(),
                          want.shape.str()));
    if (r.dtype() != want.dtype)
      fail(d, fmt::format("output {} has dtype {}, expected {}", decl.name, dtype_name(r.dtype()),
                          dtype_name(want.dtype)));
    if (call.device() && r.device() != *call.device())
      fail(d, fmt::format("output {} is on {}, not on the call device {}", decl.name,
                          r.device().str(), call.device()->str()));
    if (decl.contiguous && !r.is_contiguous())
      fail(d, fmt::format("output {} must be contiguous", decl.name));
    for (int i = 0; i < d.num_inputs; ++i) {
      if (present(inputs[i]) && r.shares_storage_with(*inputs[i]))
        fail(d, fmt::format("output {} shares storage with a tensor it does not declare as its "
                            "alias (input {})",
                            decl.name, d.input(i).decl->name));
    }
    for (int p = 0; p < o; ++p) {
      if (present(results[p]) && r.shares_storage_with(*results[p]))
        fail(d, fmt::format("output {} shares storage with a tensor it does not declare as its "
                            "alias (output {})",
                            decl.name, d.output(p).decl->name));
    }
  }
}

}  // namespace tileops::manifest
