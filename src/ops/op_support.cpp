#include "ops/op_support.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace tileops::ops {
AccessClass access_class(const CallArgs& args) {
  // The data addresses ORed together: their common alignment is the lowest set bit.
  std::uintptr_t addresses = 0;
  std::int64_t largest = 0;
  auto visit = [&](const Tensor& t) {
    const std::int64_t n = t.numel();
    largest = std::max(largest, n);
    if (n > 0 && t.is_contiguous() && !t.is_meta())
      addresses |= reinterpret_cast<std::uintptr_t>(t.data_ptr());
  };
  for (const Tensor* t : args.inputs)
    if (t && t->defined()) visit(*t);
  if (args.out) visit(*args.out);
  // Outputs the op allocates are aligned; their size is the call's to bound as well.
  const std::size_t outputs = args.call.plan().entry().outputs.size();
  for (std::size_t o = 0; o < outputs; ++o)
    largest = std::max(largest, args.call.output(o).shape.numel());
  AccessClass access;
  const std::uintptr_t lowest_bit = addresses & (~addresses + 1);
  if (lowest_bit != 0 && lowest_bit < 16) access.alignment = static_cast<std::uint8_t>(lowest_bit);
  access.index64 = largest > std::numeric_limits<std::int32_t>::max();
  return access;
}

ParamMap without_tensors(const ParamMap& params) {
  ParamMap out;
  for (const auto& [name, value] : params)
    if (!value.is_tensor()) out.set(name, value);
  return out;
}

std::vector<std::optional<Tensor>> tensors_of(const ParamMap& params,
                                              std::initializer_list<std::string_view> names) {
  std::vector<std::optional<Tensor>> tensors;
  for (std::string_view name : names) {
    const Value* v = params.find(name);
    tensors.push_back(v && v->is_tensor() ? std::optional<Tensor>(v->as_tensor()) : std::nullopt);
  }
  return tensors;
}

}  // namespace tileops::ops
