#include "ops/op_support.hpp"

#include <bit>
#include <cstdint>
#include <limits>

namespace tileops::ops {
namespace {

// The largest power of two up to 16 that divides the address of t's first element.
std::uint8_t pointer_alignment(const Tensor& t) {
  if (!t.is_contiguous() || t.device().is_meta() || t.numel() == 0) return 16;
  const auto address = reinterpret_cast<std::uintptr_t>(t.data_ptr());
  const std::uintptr_t lowest_bit = address & (~address + 1);
  return static_cast<std::uint8_t>(lowest_bit == 0 || lowest_bit > 16 ? 16 : lowest_bit);
}

void widen(AccessClass& access, const Tensor& t) {
  access.alignment = std::min(access.alignment, pointer_alignment(t));
  access.index64 = access.index64 || t.numel() > std::numeric_limits<std::int32_t>::max();
}

}  // namespace

AccessClass access_class(const CallArgs& args) {
  AccessClass access;
  for (const std::optional<Tensor>& t : args.inputs)
    if (t && t->defined()) widen(access, *t);
  if (args.out) widen(access, *args.out);
  // Outputs the op allocates are aligned; their size is the call's to bound as well.
  for (std::size_t o = 0; o < args.call.plan().entry().outputs.size(); ++o)
    access.index64 = access.index64 ||
                     args.call.output(o).shape.numel() > std::numeric_limits<std::int32_t>::max();
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
