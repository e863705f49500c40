#include "generic_call.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "ops/ops_testing.hpp"
#include "references.hpp"
#include "workload_cases.hpp"

namespace tileops::generic {
namespace {

// The bytes of t's storage (empty for a tensor without one).
std::vector<unsigned char> storage_bytes(const Tensor& t) {
  if (!t.storage() || !t.storage()->data()) return {};
  const auto* p = static_cast<const unsigned char*>(t.storage()->data());
  return {p, p + t.storage()->nbytes()};
}

// Per byte of t's storage, whether an element of the view t covers it.
std::vector<bool> element_bytes(const Tensor& t) {
  std::vector<bool> covered(t.storage() ? t.storage()->nbytes() : 0, false);
  for (std::int64_t off : test_ops::element_offsets(t))
    for (std::size_t b = 0; b < t.itemsize(); ++b)
      covered[static_cast<std::size_t>(t.byte_offset() + off) + b] = true;
  return covered;
}

const Tensor* tensor_named(const manifest::Entry& e, std::string_view name, const Inputs& inputs,
                           const CallResult& result, const std::vector<std::string>& written) {
  for (std::size_t o = 0; o < e.outputs.size() && o < result.size(); ++o)
    if (e.outputs[o].name == name && result[o]) return &*result[o];
  if (std::find(written.begin(), written.end(), name) == written.end()) return nullptr;
  for (std::size_t i = 0; i < e.inputs.size(); ++i)
    if (e.inputs[i].name == name && inputs[i]) return &*inputs[i];
  return nullptr;
}

}  // namespace

std::uint64_t seed_of(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (char ch : text) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ull;
  }
  return h;
}

Inputs inputs_of(const Case& c, std::uint64_t seed) {
  return workloads::random_inputs(c.wcase, Device::cpu(), seed);
}

Tensor random_tensor(const TensorSpec& spec, std::uint64_t seed) {
  manifest::WorkloadCase one;
  one.inputs.emplace_back(TensorSpec{Device::cpu(), spec.dtype, spec.shape});
  return *workloads::random_inputs(one, Device::cpu(), seed).at(0);
}

Tensor poisoned(const TensorSpec& spec) {
  Tensor t = Tensor::empty(spec.shape, spec.dtype);
  test_cpu::poison(t);
  return t;
}

Shape every_other_strides(const Shape& shape) {
  Shape strides = Shape::filled(shape.size(), 0);
  std::int64_t stride = 2;
  for (std::size_t a = shape.size(); a-- > 0;) {
    strides[a] = stride;
    stride *= shape[a];
  }
  return strides;
}

Tensor strided_copy(const Tensor& t) {
  Tensor base = poisoned({Device::cpu(), t.dtype(), {std::max<std::int64_t>(2 * t.numel(), 1)}});
  Tensor view = base.as_strided(t.shape(), every_other_strides(t.shape()), 0);
  view.copy_from(t);
  return view;
}

Inputs metas_of(const Inputs& inputs) {
  Inputs metas;
  for (const auto& t : inputs)
    metas.push_back(t ? std::optional<Tensor>(Tensor::meta(t->shape(), t->dtype())) : std::nullopt);
  return metas;
}

void check_call(Op& op, const OpInfo& info, const Inputs& inputs, bool with_out,
                CallResult* result_out) {
  const manifest::Entry& e = info.entry();
  // What the signature infers for this call, on meta tensors of the inputs.
  const manifest::ConstructionState state = info.plan().construct(op.params());
  const Inputs metas = metas_of(inputs);
  const manifest::SignatureCall inferred = info.plan().check(state, metas);

  std::vector<std::vector<unsigned char>> before_bytes;
  references::Inputs before;
  for (const auto& t : inputs) {
    before_bytes.push_back(t ? storage_bytes(*t) : std::vector<unsigned char>());
    before.push_back(t ? std::optional<references::HostTensor>(references::to_host(*t))
                       : std::nullopt);
  }
  const int buffer = info.buffer_output();
  std::optional<Tensor> out;
  if (with_out && buffer >= 0) {
    const manifest::TensorRecord& r = inferred.output(static_cast<std::size_t>(buffer));
    out = poisoned({Device::cpu(), r.dtype, r.shape});
  }
  const manifest::EffectBranch branch = op.effect_branch(inputs, out.has_value());

  CallResult result = op.call(inputs, CallOptions{out});
  ASSERT_EQ(result.size(), e.outputs.size()) << "one result per declared output";
  for (std::size_t o = 0; o < e.outputs.size(); ++o) {
    const std::string& name = e.outputs[o].name;
    const bool emitted =
        std::find(branch.emitted.begin(), branch.emitted.end(), name) != branch.emitted.end();
    if (!emitted) continue;
    ASSERT_TRUE(result[o] && result[o]->defined()) << "output " << name << " is emitted";
    EXPECT_TRUE(result[o]->device().is_cpu()) << name;
    EXPECT_EQ(result[o]->shape(), inferred.output(o).shape) << "shape of output " << name;
    EXPECT_EQ(result[o]->dtype(), inferred.output(o).dtype) << "dtype of output " << name;
    if (out && static_cast<int>(o) == buffer) {
      EXPECT_EQ(result[o]->storage(), out->storage()) << "output " << name << " is the out buffer";
      EXPECT_EQ(result[o]->data_ptr(), out->data_ptr()) << "output " << name;
    }
  }

  const references::Reference reference = references::find_reference(e.name);
  ASSERT_NE(reference, nullptr) << e.name << " has no float64 reference in references/";
  std::set<std::string> checked;
  for (const references::Expected& want : reference(op.params(), before)) {
    const Tensor* got = tensor_named(e, want.name, inputs, result, branch.written);
    if (!got) {
      ADD_FAILURE() << "the reference gives values for '" << want.name
                    << "', which the call neither returns nor writes";
      continue;
    }
    const references::HostTensor actual = references::to_host(*got);
    const references::Tolerance tol = references::tolerance(actual.dtype);
    const references::Comparison c = references::compare(actual.values, want, tol);
    EXPECT_TRUE(c.ok()) << want.name << " (" << dtype_name(actual.dtype) << " "
                        << actual.shape.str() << "): " << c.str(actual.values, want.values, tol);
    checked.insert(want.name);
  }
  for (const std::string& name : branch.emitted)
    EXPECT_TRUE(checked.count(name)) << "the reference gives no values for output " << name;
  for (const std::string& name : branch.written)
    EXPECT_TRUE(checked.count(name)) << "the reference gives no values for written input " << name;

  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    const std::vector<unsigned char> after = storage_bytes(*inputs[i]);
    const bool written = std::find(branch.written.begin(), branch.written.end(),
                                   e.inputs[i].name) != branch.written.end();
    const std::vector<bool> skip =
        written ? element_bytes(*inputs[i]) : std::vector<bool>(after.size(), false);
    std::size_t changed = 0;
    for (std::size_t b = 0; b < after.size(); ++b)
      changed += !skip[b] && after[b] != before_bytes[i][b];
    EXPECT_EQ(changed, 0u) << "bytes of input " << e.inputs[i].name << "'s storage "
                           << (written ? "outside its elements " : "") << "changed by the call";
  }
  if (result_out) *result_out = std::move(result);
}

}  // namespace tileops::generic
