// The op-call harness's mutations (op_call_mutations.hpp).
#include "op_call_mutations.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <span>
#include <utility>

#include "tileops/core/error.hpp"

namespace tileops::fuzz {
namespace {

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

// Memory the harness filled, where a call's tensors live: the host bytes themselves, or a copy of
// them on a device. `owner` keeps it alive.
struct Placed {
  std::byte* base = nullptr;
  std::shared_ptr<void> owner;
};

Placed place(std::shared_ptr<std::byte[]> memory, std::size_t bytes, Device device) {
  if (device.is_cpu()) return {memory.get(), std::move(memory)};
  const Tensor host = Tensor::from_blob(memory.get(), Shape{static_cast<std::int64_t>(bytes)},
                                        Shape{1}, DType::kUInt8, Device::cpu(), memory);
  Tensor on_device = Tensor::empty(host.shape(), DType::kUInt8, device);
  on_device.copy_from(host);
  return {static_cast<std::byte*>(on_device.data_ptr()), on_device.storage()};
}

// `t`'s view again, `byte_offset` bytes into `memory` (its storage the bytes the view spans).
Tensor view_in(const Placed& memory, std::size_t byte_offset, const Tensor& t) {
  return Tensor::from_blob(memory.base + byte_offset, t.shape(), t.strides(), t.dtype(), t.device(),
                           memory.owner, t.read_only());
}

// make_tensor's tensor; the library's CheckError for a geometry it has no tensor of. A tensor on
// the CPU or a device has a storage of exactly the bytes its view spans.
Tensor make_valid_tensor(ByteReader& in, const Geometry& g, Device device,
                         const OpCallSizes& sizes) {
  const Shape strides = g.strides.value_or(tileops::contiguous_strides(g.shape));
  const std::optional<std::int64_t> span = tileops::strided_extent(g.shape, strides);
  const auto itemsize = static_cast<std::int64_t>(tileops::dtype_size(g.dtype));
  const std::optional<std::int64_t> numel = g.shape.checked_numel();
  const bool small = span && numel && *span <= sizes.max_tensor_elems &&
                     *numel <= sizes.max_tensor_elems &&
                     (*span + g.offset_elems) * itemsize <= sizes.max_tensor_bytes;
  if (g.meta || !small) return Tensor::meta(g.shape, g.dtype);
  const std::size_t bytes = static_cast<std::size_t>((*span + g.offset_elems) * itemsize);
  auto memory = std::shared_ptr<std::byte[]>(new std::byte[bytes]);
  const std::span<const std::uint8_t> given = in.bytes(bytes);
  for (std::size_t b = 0; b < bytes; ++b)
    memory[b] = static_cast<std::byte>(b < given.size() ? given[b] : (b * 37 + 11) & 0xff);
  const Device home = g.host ? Device::cpu() : device;
  const Placed placed = place(std::move(memory), bytes, home);
  return Tensor::from_blob(placed.base + g.offset_elems * itemsize, g.shape, strides, g.dtype, home,
                           placed.owner, g.read_only);
}

}  // namespace

DType any_dtype(ByteReader& in) {
  return static_cast<DType>(in.in_range(0, tileops::kNumDTypes - 1));
}

ParamMap mutate_params(ByteReader& in, const ParamMap& given,
                       const std::vector<tileops::manifest::ParamDecl>& decls) {
  ParamMap params = given;
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

Geometry geometry_of(DType dtype, Shape shape) {
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
      if (inputs > 1) {
        g.alias_of = static_cast<int>(in.index(inputs));
        g.sharing = static_cast<Sharing>(in.in_range(0, 3));
      }
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

std::optional<Tensor> make_tensor(ByteReader& in, const Geometry& g, Device device,
                                  const OpCallSizes& sizes) {
  try {
    return make_valid_tensor(in, g, device, sizes);
  } catch (const tileops::CheckError&) {
    return std::nullopt;
  }
}

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

std::optional<std::pair<Tensor, Tensor>> in_one_storage(ByteReader& in, const Tensor& first,
                                                        const Tensor& second, bool overlapping) {
  if (!first.defined() || !second.defined() || first.device() != second.device()) return {};
  const std::vector<std::byte> first_bytes = storage_bytes(first);
  const std::vector<std::byte> second_bytes = storage_bytes(second);
  if (first_bytes.empty() || second_bytes.empty()) return {};
  // `second` starts at an element boundary of its own dtype, so that no element is misaligned.
  const std::size_t item = second.itemsize();
  const std::size_t first_items = first_bytes.size() / item;
  std::size_t at = (first_bytes.size() + item - 1) / item * item;
  if (overlapping) {
    if (first_items < 2) return {};
    at = item * in.in_range<std::size_t>(1, first_items - 1);
  }
  const std::size_t bytes = std::max(first_bytes.size(), at + second_bytes.size());
  auto memory = std::shared_ptr<std::byte[]>(new std::byte[bytes]);
  std::copy(second_bytes.begin(), second_bytes.end(), memory.get() + at);
  std::copy(first_bytes.begin(), first_bytes.end(), memory.get());  // first's, where they overlap
  const Placed placed = place(std::move(memory), bytes, first.device());
  return std::pair(view_in(placed, 0, first), view_in(placed, at, second));
}

}  // namespace tileops::fuzz
