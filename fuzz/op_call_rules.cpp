// The op-call harness's rules (op_call_rules.hpp).
#include "op_call_rules.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "op_call_mutations.hpp"

namespace tileops::fuzz {
namespace {

// The call under test and the last error it raised, as finding() prints them, and the run's device.
std::string g_call;
std::string g_error;
Device g_device = Device::cpu();

bool g_keep_going = false;

}  // namespace

void keep_going_after_findings(bool keep_going) { g_keep_going = keep_going; }

void start_call(const std::string& op, Device device) {
  g_call = op;
  g_error.clear();
  g_device = device;
}

bool device_still_works() {
  try {
    // A copy back to the host waits for the device's queued work: a broken context fails it.
    (void)Tensor::empty(Shape{1}, DType::kUInt8, g_device).to(Device::cpu(), DType::kUInt8);
    return true;
  } catch (const tileops::Error&) {
    return false;
  }
}

void describe_call(const std::string& op, const ParamMap& params, const Inputs& inputs,
                   const std::optional<Tensor>& out) {
  std::string text = op + params.repr() + "(";
  const auto one = [](const std::optional<Tensor>& t) -> std::string {
    if (!t || !t->defined()) return "None";
    return std::string(tileops::dtype_name(t->dtype())) + t->shape().str() + " strides " +
           t->strides().str() + " offset " + std::to_string(t->byte_offset()) + " on " +
           t->device().str() + (t->read_only() ? " read-only" : "");
  };
  for (const auto& t : inputs) text += one(t) + ", ";
  g_call = text + "out=" + one(out) + ")";
}

void finding(const std::string& what, bool fatal) {
  const std::string text = what + "\n  call: " + g_call + "\n  last error: " + g_error;
  std::fprintf(stderr, "fuzz_op_call: %s\n", text.c_str());
  std::fflush(stderr);
  if (g_keep_going) throw OpCallFinding{text, fatal};
  std::abort();
}

void record_error(const std::string& op, const tileops::Error& e) {
  g_error = e.what();
  if (std::strstr(e.what(), op.c_str()) == nullptr)
    finding(op + ": an error that does not name the op: " + e.what());
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

std::vector<std::vector<std::byte>> snapshot(const Inputs& inputs) {
  std::vector<std::vector<std::byte>> bytes(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && inputs[i]->defined()) bytes[i] = storage_bytes(*inputs[i]);
  return bytes;
}

void check_unwritten(const Op& op, Device device, const Inputs& inputs, bool ran,
                     const tileops::CallResult& result,
                     const std::vector<std::vector<std::byte>>& before) {
  std::vector<const Tensor*> written;
  for (const auto& t : result)
    if (t && t->defined()) written.push_back(&*t);
  std::vector<bool> writes(inputs.size(), false);
  for (std::size_t i = 0; ran && i < inputs.size(); ++i)
    writes[i] = op.last_call()->writes_input(i);
  if (!ran && !device.is_cpu()) {
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

}  // namespace tileops::fuzz
