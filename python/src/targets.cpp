// Targets written in Python (docs/python.md, "Targets in Python"): a detector and a kernel builder
// registered from Python, called from C++ with the GIL taken back. A builder receives the inputs'
// specs (dicts of shape, dtype and device; None for an absent optional input) and the params, and
// returns the kernel: a callable of (inputs, out) whose inputs are DLPackTensors (None when
// absent) and which returns the outputs in signature order, as arrays of any DLPack framework.
#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "tileops/core/error.hpp"
#include "tileops/op/backend.hpp"
#include "tileops/op/registry.hpp"
#include "values.hpp"

namespace nb = nanobind;

namespace tileops::python {
namespace {

// A Python object the registries keep: released with the GIL held, or left alone once the
// interpreter is gone (the registries outlive it).
using Held = std::shared_ptr<nb::object>;

Held hold(nb::object o) {
  return Held(new nb::object(std::move(o)), [](nb::object* p) {
    if (Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      delete p;
    }
  });
}

nb::object spec_dict(const std::optional<TensorSpec>& spec) {
  if (!spec) return nb::none();
  nb::dict d;
  nb::list shape;
  for (std::int64_t s : spec->shape) shape.append(s);
  d["shape"] = nb::tuple(shape);
  d["dtype"] = std::string(dtype_name(spec->dtype));
  d["device"] = spec->device.str();
  return d;
}

// `written[i]`: whether the op's entry declares input i written. The kernel sees every other input
// read-only, so that a kernel writing one (a NumPy array from np.from_dlpack) fails rather than
// change the caller's array.
TargetKernel kernel_of(Held kernel, const std::string& where, std::vector<bool> written) {
  TargetKernel k;
  k.run = [kernel, where, written](const TargetCall& call) {
    nb::gil_scoped_acquire gil;
    nb::list inputs;
    for (std::size_t i = 0; i < call.inputs.size(); ++i) {
      const std::optional<Tensor>& t = call.inputs[i];
      const bool writable = i < written.size() && written[i];
      inputs.append(t ? nb::cast(DLPackTensor{writable ? *t : read_only_view(*t)}) : nb::none());
    }
    nb::object out = call.out ? nb::cast(DLPackTensor{*call.out}) : nb::none();
    nb::object results = (*kernel)(inputs, out);
    if (!nb::isinstance<nb::list>(results) && !nb::isinstance<nb::tuple>(results))
      throw ContractError(
          fmt::format("{} is a {}, not a list of arrays", where, nb::inst_name(results).c_str()));
    CallResult outputs;
    for (nb::handle r : results) {
      if (r.is_none()) {
        outputs.emplace_back();
        continue;
      }
      // The out buffer, handed back as it came or as an array over its memory and geometry
      // (np.from_dlpack(out)), is the call's own out tensor, as the op's result check asks.
      if (call.out && r.is(out)) {
        outputs.emplace_back(*call.out);
        continue;
      }
      Tensor t = import_array(r, where.c_str());
      const bool is_out = call.out && t.data_ptr() == call.out->data_ptr() &&
                          t.shape() == call.out->shape() && t.strides() == call.out->strides() &&
                          t.dtype() == call.out->dtype() && t.device() == call.out->device();
      outputs.emplace_back(is_out ? *call.out : std::move(t));
    }
    return outputs;
  };
  if (nb::hasattr(*kernel, "request_tune")) {
    k.request_tune = [kernel] {
      nb::gil_scoped_acquire gil;
      kernel->attr("request_tune")();
    };
  }
  return k;
}

}  // namespace

void bind_targets(nb::module_& m) {
  m.def(
      "register_detector",
      [](const std::string& target, nb::object detect) {
        Held held = hold(std::move(detect));
        register_detector(target, [held](const Device& device) noexcept {
          nb::gil_scoped_acquire gil;
          try {
            return nb::cast<bool>((*held)(device.str()));
          } catch (...) {
            return false;  // a detector must not throw: one that fails claims nothing
          }
        });
      },
      nb::arg("target"), nb::arg("detect"));
  m.def(
      "register_kernel_builder",
      [](const std::string& op, const std::string& target, nb::object build) {
        register_builtin_ops();
        const RegisteredOp* cls = find_op_class(op);
        if (cls == nullptr)
          throw CheckError(fmt::format(
              "register_kernel_builder: no op class is named {} (tileops.op_classes lists them)",
              op));
        std::vector<bool> written;
        for (const manifest::TensorDecl& input : cls->cls->entry().inputs)
          written.push_back(input.may_be_written());
        Held held = hold(std::move(build));
        const std::string where = fmt::format("{}: the output of target {}'s kernel", op, target);
        register_kernel_builder(
            op, target,
            [held, where, written](std::span<const std::optional<TensorSpec>> specs,
                                   const ParamMap& params) {
              nb::gil_scoped_acquire gil;
              nb::list inputs;
              for (const std::optional<TensorSpec>& s : specs) inputs.append(spec_dict(s));
              nb::dict p;
              for (const auto& [name, value] : params) p[name.c_str()] = from_value(value);
              return kernel_of(hold((*held)(inputs, p)), where, written);
            });
      },
      nb::arg("op"), nb::arg("target"), nb::arg("build"));
  m.def("set_default_target", [](std::optional<std::string> target) {
    if (!target)
      set_default_target(std::nullopt);
    else if (*target == "BUILTIN")
      set_default_target(Target::builtin());
    else
      set_default_target(Target::named(*target));
  });
}

}  // namespace tileops::python
