// The generic op suite: every `status: implemented` manifest entry gets the same checks, derived
// from its signature and workloads alone (OpInfo, op_info.hpp), as tests named
// Generic/<Op>.<Check>[/<variant>]. A new implemented op is covered with no test written for it;
// the per-op files (test_*_ops.cpp) keep only what is specific to an op. A check that does not
// apply to an op skips with the reason (it never passes silently).
//
//   Registered            the op class is registered under the entry's name, with its stages
//   HasReference          references::find_reference has a float64 reference for it
//   Numerics/<case>       every dtype case of every workload row, scaled down, against the
//                         reference (Note [Generic call check] in generic_call.hpp)
//   SecondDTypeAndShape   one instance called with a case, then another dtype and shape
//   OutGiven              out= is the result (or refused when no output takes it); no out=
//                         allocates a result of its own
//   BadOut                out= of the wrong shape, dtype or device, strided, or an input
//   Strided/<input>       that input as a non-contiguous view (or refused: `contiguous: true`)
//   Empty                 a zero-size axis: the call completes with the inferred shapes
//   Meta                  meta tensors give a real call's output shapes and dtypes, and run
//                         nothing
//   WrongDType/<input>    a dtype outside the input's set (or a dtype param's)
//   WrongRank/<input>     a rank its declaration refuses
//   MismatchedShape/<n>   two tensors sharing an index (or a tensor and a param) disagreeing
//   WrittenInput/<input>  a written input read-only, or sharing storage with another tensor
//   WrongDevice           CUDA tensor descriptors (or `device: cuda`) where no kernel runs
//   MixedDevices          tensors on two devices
//   BadArguments          an unknown param, a required param or input left out
//
// Every bad call raises the library's typed error whose message names the op and the tensor or
// param (and the rule, where there is one), and leaves the instance usable: a good call follows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "generic_call.hpp"
#include "op_info.hpp"
#include "ops/ops_testing.hpp"
#include "references.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::generic {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The name of the running test, for its seed.
std::string current_test() {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(t->test_suite_name()) + "." + t->name();
}

std::uint64_t test_seed() { return seed_of(current_test()); }

// A dtype outside `allowed`.
DType dtype_outside(const std::vector<DType>& allowed) {
  for (DType d : {DType::kFloat64, DType::kInt8, DType::kBool})
    if (std::find(allowed.begin(), allowed.end(), d) == allowed.end()) return d;
  return DType::kUInt8;
}

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::string s;
  for (DType d : dtypes) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  return "[" + s + "]";
}

bool has_cuda_kernel(const OpClass& cls) {
  for (const KernelType& k : cls.kernel_types())
    if (std::find(k.devices.begin(), k.devices.end(), DeviceType::kCUDA) != k.devices.end())
      return true;
  for (const StageDecl& s : cls.stages())
    if (const RegisteredOp* sub = find_op_class(s.op_name); sub && has_cuda_kernel(*sub->cls))
      return true;
  return false;
}

ParamMap with_param(ParamMap params, std::string_view name, Value value) {
  params.set(name, std::move(value));
  return params;
}

// The base case every structural check starts from; a failure when the manifest gives none.
Case base_of(const OpInfo& info, const std::vector<std::size_t>& needed = {}) {
  std::optional<Case> c = info.base_case(needed);
  if (!c) throw Error(info.name() + ": no workload row passes the inputs this check needs");
  return *c;
}

// After a refused call: the instance still serves a good one.
void expect_usable(Op& op, const OpInfo& info, const Case& c) {
  SCOPED_TRACE("the good call after the refused one");
  check_call(op, info, inputs_of(c, test_seed() + 1), true);
}

// ---- Checks ------------------------------------------------------------------------------------

void registered(const OpInfo& info) {
  register_builtin_ops();
  const RegisteredOp* reg = find_op_class(info.name());
  ASSERT_NE(reg, nullptr) << info.name() << " is `status: implemented` in manifest/"
                          << info.entry().file << " but no op class of this name is registered";
  EXPECT_EQ(reg->cls->name(), info.name());
  EXPECT_EQ(reg->cls->entry().family, info.entry().family);
  const auto& stages = info.entry().composition;
  ASSERT_EQ(reg->cls->stages().size(), stages ? stages->size() : 0u);
  for (std::size_t s = 0; stages && s < stages->size(); ++s) {
    EXPECT_EQ(reg->cls->stages()[s].name, (*stages)[s].name);
    EXPECT_EQ(reg->cls->stages()[s].op_name, (*stages)[s].op);
  }
  std::shared_ptr<Op> op = make_op(info.name(), base_of(info).wcase.params);
  EXPECT_EQ(&op->op_class(), reg->cls);
}

void has_reference(const OpInfo& info) {
  EXPECT_NE(references::find_reference(info.name()), nullptr)
      << info.name() << " is `status: implemented` but has no float64 reference: add one to "
      << "references/ (references::find_reference)";
}

void numerics(const OpInfo& info, std::size_t row, std::size_t k) {
  const Case c = info.numerics_cases(info.entry().workloads[row]).at(k);
  SCOPED_TRACE(c.str(info.entry()));
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  check_call(*op, info, inputs_of(c, test_seed()), true);
}

void second_dtype_and_shape(const OpInfo& info) {
  if (!info.has_tensor_input()) {
    GTEST_SKIP() << info.name() << " has no call-time tensor input: its dtype and shape are "
                 << "construction params";
  }
  const Case first = base_of(info);
  const std::optional<Case> second = info.second_case(first);
  if (!second) {
    GTEST_SKIP() << "the signature accepts no other shape and dtype under the params of "
                 << first.str(info.entry());
  }
  std::shared_ptr<Op> op = make_op(info.name(), first.wcase.params);
  {
    SCOPED_TRACE("first call: " + first.str(info.entry()));
    check_call(*op, info, inputs_of(first, test_seed()), false);
  }
  SCOPED_TRACE("second call, same instance: " + second->str(info.entry()));
  check_call(*op, info, inputs_of(*second, test_seed() + 1), true);
}

void out_given(const OpInfo& info) {
  const Case c = base_of(info);
  SCOPED_TRACE(c.str(info.entry()));
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  const Inputs inputs = inputs_of(c, test_seed());
  if (info.buffer_output() < 0) {
    std::string message;
    const std::vector<TensorSpec> outputs = info.outputs_of(c);
    const Tensor out =
        poisoned(outputs.empty() ? TensorSpec{Device::cpu(), DType::kFloat32, {1}} : outputs[0]);
    ASSERT_TRUE(raises<CheckError>([&] { op->call(inputs, CallOptions{out}); }, &message));
    EXPECT_EQ(message, info.name() + ": takes no out buffer");
    EXPECT_TRUE(test_ops::still_poisoned(out));
    expect_usable(*op, info, c);
    return;
  }
  check_call(*op, info, inputs, true);
  // Without out=, the result is a tensor of its own.
  CallResult result;
  check_call(*op, info, inputs, false, &result);
  for (const auto& r : result)
    for (const auto& in : inputs)
      if (r && in) {
        EXPECT_FALSE(r->shares_storage_with(*in));
      }
}

void bad_out(const OpInfo& info) {
  const int buffer = info.buffer_output();
  if (buffer < 0) {
    GTEST_SKIP() << "no output of " << info.name() << " takes out= (OutGiven checks "
                 << "that out= is refused)";
  }
  const Case c = base_of(info);
  SCOPED_TRACE(c.str(info.entry()));
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  const Inputs inputs = inputs_of(c, test_seed());
  const TensorSpec spec = info.outputs_of(c).at(static_cast<std::size_t>(buffer));
  const std::string output = info.entry().outputs[static_cast<std::size_t>(buffer)].name;
  const std::string op_name = info.name();
  auto refused = [&](const Tensor& out, const std::string& want) {
    std::string message;
    EXPECT_TRUE(raises<CheckError>([&] { op->call(inputs, CallOptions{out}); }, &message));
    EXPECT_EQ(message, op_name + ": " + want);
  };
  Shape longer = spec.shape;
  if (longer.empty())
    longer.push_back(1);
  else
    ++longer[longer.size() - 1];
  refused(poisoned({Device::cpu(), spec.dtype, longer}), "out does not have the shape of " +
                                                             output + ": got " + longer.str() +
                                                             ", expected " + spec.shape.str());
  const DType other = dtype_outside({spec.dtype});
  refused(poisoned({Device::cpu(), other, spec.shape}),
          "out dtype is not the dtype of " + output + ": got " + std::string(dtype_name(other)) +
              ", expected " + std::string(dtype_name(spec.dtype)));
  refused(Tensor::meta(spec.shape, spec.dtype), "out is not on the call device cpu: got meta");
  if (spec.shape.numel() >= 2) refused(strided_copy(poisoned(spec)), "out must be contiguous");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && inputs[i]->shape() == spec.shape && inputs[i]->dtype() == spec.dtype)
      refused(*inputs[i], "out shares storage with input " + info.entry().inputs[i].name);
  expect_usable(*op, info, c);
}

void strided(const OpInfo& info, std::size_t i) {
  const manifest::TensorDecl& decl = info.entry().inputs[i];
  const Case c = base_of(info, {i});
  SCOPED_TRACE(c.str(info.entry()));
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  Inputs inputs = inputs_of(c, test_seed());
  if (inputs[i]->numel() < 2) {
    GTEST_SKIP() << decl.name << " has " << inputs[i]->numel() << " element(s) in "
                 << c.str(info.entry()) << ": no strided view of it differs from a contiguous one";
  }
  inputs[i] = strided_copy(*inputs[i]);
  ASSERT_FALSE(inputs[i]->is_contiguous());
  if (decl.contiguous) {
    std::string message;
    EXPECT_TRUE(raises<CheckError>([&] { op->call(inputs); }, &message));
    EXPECT_EQ(message, info.name() + ": " + decl.name + " must be contiguous");
    expect_usable(*op, info, c);
    return;
  }
  check_call(*op, info, inputs, true);
}

void empty(const OpInfo& info) {
  const std::optional<Case> c = info.empty_case(base_of(info));
  if (!c) {
    GTEST_SKIP() << "no index or size param of " << info.name()
                 << " can be 0 under its shape rules";
  }
  SCOPED_TRACE(c->str(info.entry()));
  std::shared_ptr<Op> op = make_op(info.name(), c->wcase.params);
  const Inputs inputs = inputs_of(*c, test_seed());
  CallResult result;
  check_call(*op, info, inputs, true, &result);
  // An empty write (every output and written input empty) runs no kernel.
  bool all_empty = true;
  for (const auto& r : result) all_empty = all_empty && (!r || r->numel() == 0);
  for (const std::string& w : op->effect_branch(inputs, true).written)
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (info.entry().inputs[i].name == w) all_empty = all_empty && inputs[i]->numel() == 0;
  if (all_empty) {
    EXPECT_TRUE(op->iter_kernels().empty()) << "an empty write built a kernel";
  }
}

void meta(const OpInfo& info) {
  const Case c = base_of(info);
  SCOPED_TRACE(c.str(info.entry()));
  std::shared_ptr<Op> meta_op;
  Inputs real_inputs, meta_inputs;
  if (info.has_tensor_input()) {
    meta_op = make_op(info.name(), c.wcase.params);
    real_inputs = inputs_of(c, test_seed());
    meta_inputs = metas_of(real_inputs);
  } else if (const manifest::ParamDecl* device = info.device_param()) {
    meta_op = make_op(info.name(), with_param(c.wcase.params, device->name, Value("meta")));
  } else {
    GTEST_SKIP() << info.name() << " has no call-time tensor input and no device param";
  }
  const CallResult metas = meta_op->call(meta_inputs);
  EXPECT_TRUE(meta_op->iter_kernels().empty()) << "a meta call built a kernel";
  std::shared_ptr<Op> real_op = make_op(info.name(), c.wcase.params);
  CallResult real;
  check_call(*real_op, info, real_inputs, false, &real);
  ASSERT_EQ(metas.size(), real.size());
  for (std::size_t o = 0; o < real.size(); ++o) {
    const std::string& name = info.entry().outputs[o].name;
    ASSERT_EQ(metas[o].has_value(), real[o].has_value()) << name;
    if (!real[o]) continue;
    EXPECT_TRUE(metas[o]->is_meta()) << name;
    EXPECT_EQ(metas[o]->shape(), real[o]->shape()) << name;
    EXPECT_EQ(metas[o]->dtype(), real[o]->dtype()) << name;
  }
}

void wrong_dtype(const OpInfo& info, std::size_t i) {
  const manifest::TensorDecl& decl = info.entry().inputs[i];
  const Case c = base_of(info, {i});
  SCOPED_TRACE(c.str(info.entry()));
  const std::optional<std::vector<DType>> allowed = info.allowed_dtypes(c, i);
  if (!allowed) {
    GTEST_SKIP() << "the dtype of " << decl.name << " is an expression: " << decl.dtype.source;
  }
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  Inputs inputs = inputs_of(c, test_seed());
  const DType bad = dtype_outside(*allowed);
  inputs[i] = random_tensor({Device::cpu(), bad, inputs[i]->shape()}, test_seed() + 2);
  std::string message;
  ASSERT_TRUE(raises<CheckError>([&] { op->call(inputs); }, &message));
  EXPECT_THAT(message, StartsWith(info.name() + ": " + decl.name + " dtype "));
  EXPECT_THAT(message, HasSubstr("got " + std::string(dtype_name(bad))));
  EXPECT_THAT(message, AnyOf(HasSubstr("is outside " + dtype_list(*allowed)),
                             HasSubstr("differs from " + decl.dtype.source),
                             HasSubstr("is not " + decl.dtype.source)));
  expect_usable(*op, info, c);
}

void wrong_dtype_param(const OpInfo& info, const manifest::ParamDecl& p) {
  const Case c = base_of(info);
  const DType bad = dtype_outside(p.type.dtypes);
  std::string message;
  ASSERT_TRUE(raises<CheckError>(
      [&] { make_op(info.name(), with_param(c.wcase.params, p.name, Value(bad))); }, &message));
  EXPECT_THAT(message, StartsWith(info.name() + ": param '" + p.name + "'"));
  EXPECT_THAT(message, HasSubstr(std::string(dtype_name(bad))));
}

void wrong_rank(const OpInfo& info, std::size_t i) {
  const manifest::TensorDecl& decl = info.entry().inputs[i];
  const Case c = base_of(info, {i});
  SCOPED_TRACE(c.str(info.entry()));
  const std::optional<Shape> shape = info.wrong_rank_shape(c, i);
  if (!shape) {
    GTEST_SKIP() << "every rank of " << decl.name << " " << decl.shape.source << " is accepted";
  }
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  Inputs inputs = inputs_of(c, test_seed());
  inputs[i] = random_tensor({Device::cpu(), inputs[i]->dtype(), *shape}, test_seed() + 2);
  std::string message;
  ASSERT_TRUE(raises<CheckError>([&] { op->call(inputs); }, &message));
  EXPECT_THAT(message, StartsWith(info.name() + ": " + decl.name + " needs rank "));
  EXPECT_THAT(message, HasSubstr("got rank " + std::to_string(shape->size())));
  expect_usable(*op, info, c);
}

void mismatched_shape(const OpInfo& info, const SharedName& shared) {
  const Case c = base_of(info, shared.inputs);
  SCOPED_TRACE(c.str(info.entry()));
  const std::size_t changed = shared.inputs.back();
  const std::string& changed_name = info.entry().inputs[changed].name;
  const std::optional<std::vector<std::size_t>> axes = info.axes_of(c, changed, shared.name);
  if (!axes || axes->empty()) {
    GTEST_SKIP() << shared.name << " sizes no axis of " << changed_name << " whose position "
                 << c.str(info.entry()) << " gives";
  }
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  Inputs inputs = inputs_of(c, test_seed());
  Shape shape = inputs[changed]->shape();
  for (std::size_t a : *axes) ++shape[a];
  inputs[changed] =
      random_tensor({Device::cpu(), inputs[changed]->dtype(), shape}, test_seed() + 2);
  std::string message;
  ASSERT_TRUE(raises<CheckError>([&] { op->call(inputs); }, &message));
  EXPECT_THAT(message, StartsWith(info.name() + ": "));
  std::vector<::testing::Matcher<const std::string&>> names;
  for (std::size_t i : shared.inputs)
    names.push_back(
        HasSubstr(": " + info.entry().inputs[i].name + " shape does not match " + shared.term));
  EXPECT_THAT(message, ::testing::AnyOfArray(names));
  expect_usable(*op, info, c);
}

void written_input(const OpInfo& info, std::size_t i) {
  const std::string& name = info.entry().inputs[i].name;
  const Case c = base_of(info, {i});
  SCOPED_TRACE(c.str(info.entry()));
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  const Inputs inputs = inputs_of(c, test_seed());
  const std::vector<std::string> written = op->effect_branch(inputs, false).written;
  if (std::find(written.begin(), written.end(), name) == written.end()) {
    GTEST_SKIP() << name << " is not written under the params of " << c.str(info.entry());
  }
  auto refused = [&](const Inputs& call_inputs, const CallOptions& options,
                     const std::string& want) {
    std::string message;
    EXPECT_TRUE(raises<CheckError>([&] { op->call(call_inputs, options); }, &message));
    EXPECT_EQ(message, info.name() + ": " + want);
  };
  Inputs read_only = inputs;
  const Tensor& t = *inputs[i];
  read_only[i] = Tensor::from_blob(t.data_ptr(), t.shape(), t.strides(), t.dtype(), t.device(),
                                   t.storage(), true);
  refused(read_only, {}, name + " is written but read-only");
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    if (j == i || !inputs[j] || inputs[j]->shape() != t.shape() || inputs[j]->dtype() != t.dtype())
      continue;
    Inputs aliased = inputs;
    aliased[i] = inputs[j];
    // Two written inputs passed as one tensor (RopeFwdOp's query and key): the check names the
    // first written input in signature order (src/manifest/plan_check.cpp).
    const std::string& other = info.entry().inputs[j].name;
    const bool other_first =
        j < i && std::find(written.begin(), written.end(), other) != written.end();
    refused(aliased, {},
            other_first ? other + " is written and shares storage with input " + name
                        : name + " is written and shares storage with input " + other);
  }
  const int buffer = info.buffer_output();
  if (buffer >= 0 && info.outputs_of(c).at(static_cast<std::size_t>(buffer)).shape == t.shape() &&
      info.outputs_of(c).at(static_cast<std::size_t>(buffer)).dtype == t.dtype())
    refused(inputs, CallOptions{t}, "out shares storage with input " + name);
  expect_usable(*op, info, c);
}

void wrong_device(const OpInfo& info) {
  register_builtin_ops();
  const RegisteredOp* reg = find_op_class(info.name());
  ASSERT_NE(reg, nullptr);
  if (has_cuda_kernel(*reg->cls)) {
    GTEST_SKIP() << "this build has a CUDA kernel for " << info.name()
                 << ": a CUDA descriptor over host memory would reach it";
  }
  const Case c = base_of(info);
  SCOPED_TRACE(c.str(info.entry()));
  std::string message;
  if (!info.has_tensor_input()) {
    const manifest::ParamDecl* device = info.device_param();
    if (!device) {
      GTEST_SKIP() << info.name() << " has no call-time tensor input and no device param";
    }
    std::shared_ptr<Op> op =
        make_op(info.name(), with_param(c.wcase.params, device->name, Value("cuda")));
    ASSERT_TRUE(raises<OpNotAvailableError>([&] { op->call({}); }, &message));
    EXPECT_THAT(message, HasSubstr(info.name()));
    EXPECT_THAT(message, HasSubstr("cuda:0"));
    EXPECT_TRUE(op->iter_kernels().empty());
    return;
  }
  // Every input on cuda:0, the first with two elements or more as a strided view: the call fails
  // on availability before it copies anything.
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  std::vector<test_ops::CudaDescriptor> descriptors;
  Inputs inputs = inputs_of(c, test_seed());
  bool strided_one = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i] || info.entry().inputs[i].cpu_only) continue;
    const Shape shape = inputs[i]->shape();
    if (!strided_one && shape.numel() >= 2) {
      strided_one = true;
      descriptors.push_back(test_ops::cuda_descriptor({2 * shape.numel()}, inputs[i]->dtype()));
      inputs[i] = descriptors.back().tensor.as_strided(shape, every_other_strides(shape), 0);
      EXPECT_FALSE(inputs[i]->is_contiguous());
    } else {
      descriptors.push_back(test_ops::cuda_descriptor(shape, inputs[i]->dtype()));
      inputs[i] = descriptors.back().tensor;
    }
  }
  CallOptions options;
  if (const int buffer = info.buffer_output(); buffer >= 0) {
    const TensorSpec spec = info.outputs_of(c).at(static_cast<std::size_t>(buffer));
    descriptors.push_back(test_ops::cuda_descriptor(spec.shape, spec.dtype));
    options.out = descriptors.back().tensor;
  }
  ASSERT_TRUE(raises<OpNotAvailableError>([&] { op->call(inputs, options); }, &message));
  EXPECT_THAT(message, HasSubstr(info.name()));
  EXPECT_THAT(message, HasSubstr("cuda:0"));
  for (const test_ops::CudaDescriptor& d : descriptors)
    EXPECT_TRUE(test_ops::all_bytes_are(*d.bytes, 0xAB)) << "a CUDA descriptor's bytes changed";
  EXPECT_TRUE(op->iter_kernels().empty());
  expect_usable(*op, info, c);
}

void mixed_devices(const OpInfo& info) {
  const Case c = base_of(info);
  SCOPED_TRACE(c.str(info.entry()));
  Inputs inputs = inputs_of(c, test_seed());
  std::vector<std::size_t> placed;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && !info.entry().inputs[i].cpu_only) placed.push_back(i);
  if (placed.size() < 2) {
    GTEST_SKIP() << info.name() << " passes fewer than two tensors that must share a device";
  }
  std::shared_ptr<Op> op = make_op(info.name(), c.wcase.params);
  const std::size_t last = placed.back();
  inputs[last] = Tensor::meta(inputs[last]->shape(), inputs[last]->dtype());
  std::string message;
  ASSERT_TRUE(raises<CheckError>([&] { op->call(inputs); }, &message));
  EXPECT_THAT(message, StartsWith(info.name() + ": needs every tensor on one device; got ["));
  EXPECT_THAT(message, HasSubstr(info.entry().inputs[placed.front()].name + " on cpu"));
  EXPECT_THAT(message, HasSubstr(info.entry().inputs[last].name + " on meta"));
  expect_usable(*op, info, c);
}

void bad_arguments(const OpInfo& info) {
  const Case c = base_of(info);
  SCOPED_TRACE(c.str(info.entry()));
  const std::string op_name = info.name();
  std::string message;
  EXPECT_TRUE(raises<CheckError>(
      [&] { make_op(op_name, with_param(c.wcase.params, "no_such_param", Value(1))); }, &message));
  EXPECT_EQ(message, op_name + ": unknown param 'no_such_param'");
  for (const manifest::ParamDecl& p : info.entry().params) {
    if (p.default_value || p.tensor) continue;
    ParamMap without;
    for (const auto& [name, value] : c.wcase.params)
      if (name != p.name) without.set(name, value);
    EXPECT_TRUE(raises<CheckError>([&] { make_op(op_name, without); }, &message)) << p.name;
    EXPECT_EQ(message, op_name + ": param '" + p.name + "' is required");
  }
  std::shared_ptr<Op> op = make_op(op_name, c.wcase.params);
  const Inputs inputs = inputs_of(c, test_seed());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (info.entry().inputs[i].optional) continue;
    Inputs missing = inputs;
    missing[i] = std::nullopt;
    EXPECT_TRUE(raises<CheckError>([&] { op->call(missing); }, &message));
    EXPECT_EQ(message, op_name + ": '" + info.entry().inputs[i].name + "' is required");
  }
  Inputs extra = inputs;
  extra.push_back(std::nullopt);
  EXPECT_TRUE(raises<CheckError>([&] { op->call(extra); }, &message));
  EXPECT_EQ(message, op_name + ": takes " + std::to_string(inputs.size()) + " inputs, got " +
                         std::to_string(extra.size()));
  expect_usable(*op, info, c);
}

// ---- Registration ------------------------------------------------------------------------------

class GenericTest : public ::testing::Test {
 public:
  explicit GenericTest(std::function<void()> check) : check_(std::move(check)) {}
  void TestBody() override { check_(); }

 private:
  std::function<void()> check_;
};

void add(const OpInfo& info, const std::string& test, std::function<void()> check) {
  ::testing::RegisterTest(
      ("Generic/" + info.name()).c_str(), test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
      [check = std::move(check)]() -> ::testing::Test* { return new GenericTest(check); });
}

// One test per input, or one that skips, saying why, when the op has no call-time tensor input.
void add_per_input(const std::shared_ptr<const OpInfo>& info, const std::string& check,
                   void (*body)(const OpInfo&, std::size_t)) {
  const auto& inputs = info->entry().inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    add(*info, check + "/" + test_name_part(inputs[i].name), [info, i, body] { body(*info, i); });
  if (inputs.empty())
    add(*info, check, [info] { GTEST_SKIP() << info->name() << " has no call-time tensor input"; });
}

void register_op(const std::shared_ptr<const OpInfo>& info) {
  const manifest::Entry& e = info->entry();
  add(*info, "Registered", [info] { registered(*info); });
  add(*info, "HasReference", [info] { has_reference(*info); });
  for (std::size_t r = 0; r < e.workloads.size(); ++r) {
    std::vector<manifest::WorkloadCase> cases;
    try {
      cases = manifest::instantiate_workload(info->plan(), e.workloads[r]);
    } catch (const Error& err) {
      const std::string what = err.what();
      add(*info, "Numerics/" + test_name_part(e.workloads[r].label),
          [what] { FAIL() << "the workload row does not instantiate: " << what; });
      continue;
    }
    for (std::size_t k = 0; k < cases.size(); ++k)
      add(*info, "Numerics/" + test_name_part(cases[k].id),
          [info, r, k] { numerics(*info, r, k); });
  }
  add(*info, "SecondDTypeAndShape", [info] { second_dtype_and_shape(*info); });
  add(*info, "OutGiven", [info] { out_given(*info); });
  add(*info, "BadOut", [info] { bad_out(*info); });
  add_per_input(info, "Strided", strided);
  add(*info, "Empty", [info] { empty(*info); });
  add(*info, "Meta", [info] { meta(*info); });
  add_per_input(info, "WrongDType", wrong_dtype);
  for (const manifest::ParamDecl& p : e.params)
    if (!p.tensor && p.type.kind == manifest::ParamKind::kDType && !p.type.dtypes.empty())
      add(*info, "WrongDType/" + test_name_part(p.name),
          [info, name = p.name] { wrong_dtype_param(*info, *info->entry().find_param(name)); });
  add_per_input(info, "WrongRank", wrong_rank);
  const std::vector<SharedName> shared = info->shared_names();
  for (const SharedName& s : shared)
    add(*info, "MismatchedShape/" + test_name_part(s.name),
        [info, s] { mismatched_shape(*info, s); });
  if (shared.empty())
    add(*info, "MismatchedShape", [info] {
      GTEST_SKIP() << "no index of " << info->name() << " sizes two inputs, and no param sizes one";
    });
  for (std::size_t i = 0; i < e.inputs.size(); ++i)
    if (e.inputs[i].may_be_written())
      add(*info, "WrittenInput/" + test_name_part(e.inputs[i].name),
          [info, i] { written_input(*info, i); });
  add(*info, "WrongDevice", [info] { wrong_device(*info); });
  add(*info, "MixedDevices", [info] { mixed_devices(*info); });
  add(*info, "BadArguments", [info] { bad_arguments(*info); });
}

}  // namespace

void register_generic_suite() {
  register_builtin_ops();
  for (const auto& entry : implemented_entries())
    register_op(std::make_shared<const OpInfo>(entry));
}

}  // namespace tileops::generic
