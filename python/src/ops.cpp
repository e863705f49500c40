// The op classes from Python: the registered classes' manifest entries (which __init__ turns into
// Python classes) and a generic handle over one op instance.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "streams.hpp"
#include "tileops/core/small_vector.hpp"
#include "tileops/op/dispatch.hpp"
#include "tileops/op/registry.hpp"
#include "values.hpp"

namespace nb = nanobind;

namespace tileops::python {
namespace {

nb::dict entry_dict(const manifest::Entry& e) {
  nb::dict d;
  d["name"] = e.name;
  d["family"] = e.family;
  d["ref_api"] = e.ref_api;
  nb::list params, inputs, outputs;
  for (const manifest::ParamDecl& p : e.params) {
    nb::dict pd;
    pd["name"] = p.name;
    pd["type"] = p.type.text;
    pd["required"] = !p.default_value.has_value();
    pd["default"] = p.default_value ? from_value(*p.default_value) : nb::none();
    pd["kw_only"] = p.kw_only;
    pd["tensor"] = p.tensor.has_value();
    params.append(pd);
  }
  for (const manifest::TensorDecl& t : e.inputs) {
    nb::dict td;
    td["name"] = t.name;
    td["optional"] = t.optional;
    td["dtype"] = t.dtype.source;
    td["shape"] = t.shape.source;
    td["mutated"] = t.may_be_written();
    inputs.append(td);
  }
  for (const manifest::TensorDecl& t : e.outputs) {
    nb::dict td;
    td["name"] = t.name;
    td["buffer_out"] = t.buffer_out;
    td["alias"] = t.alias;
    td["dtype"] = t.dtype.source;
    td["shape"] = t.shape.source;
    outputs.append(td);
  }
  d["params"] = params;
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  return d;
}

// One op instance. Calls release the GIL: the inputs are imported (and their deleters wrapped,
// Note [Python arrays]) before, and the outputs exported after.
class PyOp {
 public:
  PyOp(const std::string& name, nb::dict params, std::optional<std::string> target) {
    ParamMap map;
    for (auto [key, value] : params) {
      const std::string k = nb::cast<std::string>(key);
      map.set(k, to_value(value, (name + " param " + k).c_str()));
    }
    std::optional<Target> t;
    if (target) t = *target == "BUILTIN" ? Target::builtin() : Target::named(*target);
    op_ = make_op(name, map, t);
    describe_entry();
  }
  explicit PyOp(std::shared_ptr<Op> op) : op_(std::move(op)) { describe_entry(); }

  // `stream`: the DLPack number of the caller's current CUDA stream, when the caller's arrays are
  // CUDA arrays (Note [Python streams] in streams.cpp); the call runs on it.
  nb::list call(nb::list inputs, nb::handle out, std::optional<std::intptr_t> stream) {
    const manifest::Entry& e = op_->op_class().entry();
    std::vector<std::optional<Tensor>> tensors;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      nb::handle a = inputs[i];
      const std::string what =
          fmt::format("{}: input {}", op_->name(), i < e.inputs.size() ? e.inputs[i].name : "?");
      tensors.push_back(a.is_none() ? std::nullopt
                                    : std::optional<Tensor>(import_array(a, what.c_str(), stream)));
    }
    CallOptions options;
    if (!out.is_none()) options.out = import_array(out, (op_->name() + ": out").c_str(), stream);
    const std::optional<Stream> call_stream =
        stream ? stream_of_call(tensors, options, [&](int) { return *stream; }) : std::nullopt;
    const CallResult result = run(tensors, options, call_stream);
    mark_written_arrays([&](std::size_t i) { return nb::handle(inputs[i]); }, inputs.size(), out);
    nb::list outputs;
    for (const std::optional<Tensor>& t : result) {
      if (!t) {
        outputs.append(nb::none());
        continue;
      }
      const bool ordered = call_stream && t->device().is_cuda();
      outputs.append(nb::cast(DLPackTensor{*t, ordered ? stream : std::nullopt}));
    }
    return outputs;
  }

  // Note [The torch fast path]
  // The usual eager call from torch: the inputs by position, every array a torch tensor that needs
  // no gradient, `out` a torch tensor where the entry has a buffer output, the instance reachable
  // from the compile boundary. It runs in one crossing: the tensors through libtileops_torch's
  // bridge (Note [The torch bridge]: at::Tensors viewed directly) when the package loaded it, else
  // through torch's C DLPack functions (_set_torch_export); the call on torch's current stream; the
  // outputs back as torch tensors and the out buffer as the caller's own object, as the general
  // path returns them. What the general
  // path (tileops/_classes.py) spends in Python on every call (the stream and converter lookups per
  // array type, a DLPackTensor and a __dlpack__ call per output) is skipped. Anything else returns
  // NotImplemented, and the general path serves it: other array types, keywords, a tensor that
  // needs a gradient, an instance made before torch was imported and not yet registered.
  nb::object call_torch(nb::tuple args, nb::handle out) {
    const manifest::Entry& e = op_->op_class().entry();
    const std::size_t given = args.size();
    if (!torch_reachable_ || !torch_functions_registered() || given < required_inputs_ ||
        given > e.inputs.size() || (!out.is_none() && !buffer_output_))
      return nb::borrow(Py_NotImplemented);
    // Inline for the usual few inputs: no allocation for the list itself.
    SmallVector<std::optional<Tensor>, 4> tensors;
    for (std::size_t i = 0; i < e.inputs.size(); ++i) tensors.emplace_back();
    bool any_tensor = false;  // a call of no torch tensor returns what the general path does
    for (std::size_t i = 0; i < given; ++i) {
      if (args[i].is_none()) continue;
      if (!import_torch(args[i], tensors[i])) return nb::borrow(Py_NotImplemented);
      any_tensor = true;
    }
    CallOptions options;
    if (!out.is_none()) {
      if (!import_torch(out, options.out)) return nb::borrow(Py_NotImplemented);
      any_tensor = true;
    }
    if (!any_tensor) return nb::borrow(Py_NotImplemented);
    const std::span<const std::optional<Tensor>> inputs(tensors.data(), tensors.size());
    const CallResult result =
        run(inputs, options, stream_of_call(inputs, options, torch_current_stream));
    mark_written_arrays([&](std::size_t i) { return args[i]; }, given, out);
    auto output = [&](std::size_t i) -> nb::object {
      if (options.out && i == *buffer_output_) return nb::borrow(out);
      return result[i] ? export_torch(*result[i]) : nb::none();
    };
    if (result.size() == 0) return nb::none();
    if (result.size() == 1) return output(0);
    nb::tuple all = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(result.size())));
    if (!all.is_valid()) throw nb::python_error();
    for (std::size_t i = 0; i < result.size(); ++i)
      PyTuple_SET_ITEM(all.ptr(), static_cast<Py_ssize_t>(i), output(i).release().ptr());
    return all;
  }

  // The compile boundary can find this instance by its key (tileops._torch.register).
  void mark_torch_reachable() { torch_reachable_ = true; }

  nb::dict last_call() const {
    const auto record = op_->last_call();
    const manifest::Entry& e = op_->op_class().entry();
    nb::dict d;
    d["op"] = op_->name();
    d["device"] = record->device() ? nb::cast(record->device()->str()) : nb::none();
    d["has_out"] = record->has_out();
    d["written"] = nb::cast(record->written());
    nb::dict tensors;
    std::vector<std::string> names;
    for (const auto& p : e.params)
      if (p.tensor) names.push_back(p.name);
    for (const auto& t : e.inputs) names.push_back(t.name);
    for (const auto& t : e.outputs) names.push_back(t.name);
    const auto records = record->tensors();
    for (std::size_t i = 0; i < records.size() && i < names.size(); ++i) {
      nb::dict td;
      td["present"] = records[i].present;
      nb::list shape;
      for (std::int64_t s : records[i].shape) shape.append(s);
      td["shape"] = nb::tuple(shape);
      td["dtype"] = std::string(dtype_name(records[i].dtype));
      tensors[names[i].c_str()] = td;
    }
    d["tensors"] = tensors;
    nb::dict indices;
    for (const auto& [name, value] : record->indices()) indices[name.c_str()] = from_value(value);
    d["indices"] = indices;
    return d;
  }

  nb::dict eval_roofline() const {
    const manifest::RooflineResult r = op_->eval_roofline();
    nb::dict d;
    d["flops"] = r.flops;
    d["bytes"] = r.bytes;
    return d;
  }

  std::optional<std::string> serving_target() const {
    const auto t = op_->serving_target();
    return t ? std::optional<std::string>(t->str()) : std::nullopt;
  }

  std::vector<std::string> explain(nb::list inputs, const std::string& device) {
    const manifest::Entry& e = op_->op_class().entry();
    std::vector<std::optional<Tensor>> tensors;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      nb::handle a = inputs[i];
      const std::string what = fmt::format("{}: explain's input {}", op_->name(),
                                           i < e.inputs.size() ? e.inputs[i].name : "?");
      tensors.push_back(a.is_none() ? std::nullopt
                                    : std::optional<Tensor>(import_array(a, what.c_str())));
    }
    std::vector<std::string> lines;
    for (const DispatchEvent& event : op_->explain_call(tensors, Device::parse(device)))
      lines.push_back(format(event));
    return lines;
  }

  // Output shapes and dtypes of a call of inputs with these geometries (None for an absent one),
  // from the signature check alone (Op::check_call): what the torch fake kernels return.
  nb::list infer(nb::list inputs, nb::handle out) const {
    auto meta = [](nb::handle spec) {
      const nb::tuple t = nb::borrow<nb::tuple>(spec);
      Shape shape;
      for (nb::handle s : t[0]) shape.push_back(nb::cast<std::int64_t>(s));
      const std::string name = nb::cast<std::string>(t[1]);
      const std::optional<DType> dtype = parse_dtype(name);
      if (!dtype) throw nb::type_error(("no tileops dtype is named '" + name + "'").c_str());
      return Tensor::meta(shape, *dtype);
    };
    std::vector<std::optional<Tensor>> tensors;
    for (nb::handle spec : inputs)
      tensors.push_back(spec.is_none() ? std::nullopt : std::optional<Tensor>(meta(spec)));
    const std::optional<Tensor> out_meta =
        out.is_none() ? std::nullopt : std::optional<Tensor>(meta(out));
    const manifest::SignatureCall call = op_->check_call(tensors, out_meta ? &*out_meta : nullptr);
    nb::list outputs;
    for (std::size_t o = 0; o < op_->op_class().entry().outputs.size(); ++o) {
      const manifest::TensorRecord& r = call.output(o);
      nb::list shape;
      for (std::int64_t s : r.shape) shape.append(s);
      outputs.append(nb::make_tuple(nb::tuple(shape), std::string(dtype_name(r.dtype))));
    }
    return outputs;
  }

  // The effect branch of a call with these inputs present and out passed or not.
  nb::dict effect_branch(std::vector<bool> present, bool has_out) const {
    std::vector<std::optional<Tensor>> tensors;
    for (bool p : present)
      tensors.push_back(p ? std::optional<Tensor>(Tensor::meta(Shape{}, DType::kFloat32))
                          : std::nullopt);
    const manifest::EffectBranch b = op_->effect_branch(tensors, has_out);
    nb::dict d;
    d["operator_name"] = b.operator_name;
    d["written"] = nb::cast(b.written);
    d["emitted"] = nb::cast(b.emitted);
    d["has_out"] = b.has_out;
    return d;
  }

  nb::list held_delegates() const {
    nb::list ops;
    for (const std::shared_ptr<Op>& d : op_->held_delegates()) ops.append(nb::cast(PyOp(d)));
    return ops;
  }

  nb::dict params() const {
    nb::dict d;
    for (const auto& [name, value] : op_->params()) d[name.c_str()] = from_value(value);
    return d;
  }

  const Op& op() const { return *op_; }
  Op& op() { return *op_; }

 private:
  // The call's stream: on the device of its first CUDA tensor (the out buffer first), the stream
  // `number_on(device)` numbers; nullopt for a CPU call.
  template <class NumberOn>
  static std::optional<Stream> stream_of_call(std::span<const std::optional<Tensor>> tensors,
                                              const CallOptions& options, NumberOn&& number_on) {
    const Tensor* cuda_tensor =
        options.out && options.out->device().is_cuda() ? &*options.out : nullptr;
    for (const std::optional<Tensor>& t : tensors)
      if (cuda_tensor == nullptr && t && t->device().is_cuda()) cuda_tensor = &*t;
    if (cuda_tensor == nullptr) return std::nullopt;
    const int index = cuda_tensor->device().index;
    return stream_of(index, number_on(index));
  }

  // The instance's call with the GIL released, on `stream` when given.
  CallResult run(std::span<const std::optional<Tensor>> tensors, const CallOptions& options,
                 const std::optional<Stream>& stream) {
    const nb::gil_scoped_release unlocked;
    if (!stream) return op_->call(tensors, options);
    const StreamGuard guard(*stream);
    return op_->call(tensors, options);
  }

  // After a call: the arrays it may have written (the inputs the entry declares written, out)
  // marked as changed (mark_written); `given` arrays, the i-th from `array(i)`.
  template <class ArrayAt>
  void mark_written_arrays(ArrayAt array, std::size_t given, nb::handle out) const {
    for (std::size_t i : written_inputs_)
      if (i < given && !array(i).is_none()) mark_written(array(i));
    if (!out.is_none()) mark_written(out);
  }

  void describe_entry() {
    const manifest::Entry& e = op_->op_class().entry();
    for (std::size_t i = 0; i < e.inputs.size(); ++i)
      if (e.inputs[i].may_be_written()) written_inputs_.push_back(i);
    for (const manifest::TensorDecl& t : e.inputs) required_inputs_ += t.optional ? 0 : 1;
    for (std::size_t i = 0; i < e.outputs.size(); ++i)
      if (e.outputs[i].buffer_out && !buffer_output_) buffer_output_ = i;
  }

  std::shared_ptr<Op> op_;
  std::size_t required_inputs_ = 0;           // the entry's inputs before its optional ones
  std::optional<std::size_t> buffer_output_;  // the output `out=` takes a buffer for
  std::vector<std::size_t> written_inputs_;   // the inputs the entry declares written
  bool torch_reachable_ = false;
};

}  // namespace

void bind_ops(nb::module_& m) {
  m.def("entries", [] {
    register_builtin_ops();
    nb::list entries;
    for (const RegisteredOp& r : registered_op_classes())
      entries.append(entry_dict(r.cls->entry()));
    return entries;
  });
  nb::class_<PyOp>(m, "Op", "One op instance (the generated classes of tileops wrap it).")
      .def(nb::init<const std::string&, nb::dict, std::optional<std::string>>(), nb::arg("name"),
           nb::arg("params"), nb::arg("target") = nb::none())
      .def("call", &PyOp::call, nb::arg("inputs"), nb::arg("out") = nb::none(),
           nb::arg("stream") = nb::none())
      .def("call_torch", &PyOp::call_torch, nb::arg("args"), nb::arg("out").none())
      .def("_mark_torch_reachable", &PyOp::mark_torch_reachable)
      .def("last_call", &PyOp::last_call)
      .def("eval_roofline", &PyOp::eval_roofline)
      .def("serving_target", &PyOp::serving_target)
      .def("request_tune", [](PyOp& self) { self.op().request_tune(); })
      .def("held_delegates", &PyOp::held_delegates)
      .def("explain", &PyOp::explain, nb::arg("inputs"), nb::arg("device"))
      .def("infer", &PyOp::infer, nb::arg("inputs"), nb::arg("out") = nb::none())
      .def("effect_branch", &PyOp::effect_branch, nb::arg("present"), nb::arg("has_out"))
      .def("params", &PyOp::params)
      .def_prop_ro("name", [](const PyOp& self) { return self.op().name(); })
      .def_prop_ro("instance_key", [](const PyOp& self) { return self.op().instance_key(); });
}

}  // namespace tileops::python
