// Call specs: the typed key a kernel interface is selected and cached by (docs/seeds.md,
// construction-and-calls §5): a struct with == and a field-wise hash, never a string or raw bytes.
//
// Note [Call spec fields]
// A call spec lists its fields once, in `fields()`, each with its name; equality, the hash and the
// text of messages all follow from that one list (CallSpecOf), so they cannot disagree. A call
// spec holds only what selects or builds a kernel: sizes that only index data (an elementwise
// call's element count, the rows of a softmax) stay out of it, or every new shape would build and
// cache a new entry. What a refusal depends on must stay in, at the granularity the refusal reads
// (a bucket, not the size), because a cache hit skips refusal: the access class below is such a
// bucket. docs/framework.md lists the fields each family keys on and why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "tileops/core/device.hpp"
#include "tileops/core/dtype.hpp"
#include "tileops/op/hash.hpp"

namespace tileops {

// What selection and building may read about a device; derived from the call's device on a
// cache miss, never part of a call spec's equality.
struct DeviceFacts {
  int arch = -1;  // SM version (90 for sm_90); -1 off CUDA
  int sm_count = 0;
  std::int64_t smem_budget = 0;  // opt-in shared memory per block, bytes
  friend bool operator==(const DeviceFacts&, const DeviceFacts&) = default;
};

// Every call spec derives from this. `device` is the call's device (nullopt: the accelerator's
// current device, filled in by kernel_for). `stated_facts` lets key_for answer for a device the
// process is not on; kernel_for refuses a spec that states facts (they take no part in equality,
// so a cache hit would silently accept them).
struct CallSpecBase {
  std::optional<Device> device;
  std::optional<DeviceFacts> stated_facts;
};

// A call spec: a small struct deriving CallSpecBase with == over its declared fields and device,
// a field-wise hash() and a str() for messages.
template <class C>
concept CallSpec = std::derived_from<C, CallSpecBase> && std::copy_constructible<C> &&
    requires(const C& a, const C& b) {
  { a == b } -> std::convertible_to<bool>;
  { a.hash() } -> std::convertible_to<std::size_t>;
  { a.str() } -> std::convertible_to<std::string>;
};

// How the kernel may access the call's tensors, as a bucket (Note [Call spec fields]): the
// largest power of two, up to 16 bytes, that divides every data pointer a kernel receives, and
// whether some tensor has more elements than 32-bit indexing reaches. Vectorised kernels refuse
// an alignment below their vector width; kernels indexing in 32 bits refuse `index64`.
struct AccessClass {
  std::uint8_t alignment = 16;
  bool index64 = false;
  friend bool operator==(const AccessClass&, const AccessClass&) = default;
  std::size_t hash() const noexcept { return std::size_t{alignment} << 1 | std::size_t{index64}; }
  std::string str() const;
};

// One named field of a call spec, as fields() lists it.
template <class T>
struct CallSpecField {
  std::string_view name;
  const T& value;
};
template <class T>
CallSpecField<T> field(std::string_view name, const T& value) {
  return {name, value};
}

namespace detail {
std::string format_field(bool v);
std::string format_field(std::int64_t v);
std::string format_field(int v);
std::string format_field(std::uint64_t v);
std::string format_field(double v);
std::string format_field(DType v);
template <class T>
std::string format_field(const T& v) requires requires {
  v.str();
}
{ return v.str(); }
// "NormCall" for tileops::kernels::NormCall: the unqualified name of a type, for messages.
std::string unqualified_type_name(const std::type_info& type);
std::string call_spec_str(std::string_view type, const std::optional<Device>& device,
                          std::string_view fields);
}  // namespace detail

// The base of a concrete call spec `Derived`, which declares its fields once:
//
//   struct NormCall : CallSpecOf<NormCall> {
//     std::int64_t n = 0;
//     DType dtype = DType::kFloat32;
//     auto fields() const { return std::tuple(field("n", n), field("dtype", dtype)); }
//   };
//
// and gets ==, hash() and str() ("NormCall(device=cpu, n=4096, dtype=bfloat16)") from them.
template <class Derived>
struct CallSpecOf : CallSpecBase {
  friend bool operator==(const Derived& a, const Derived& b) {
    if (a.device != b.device) return false;
    return std::apply(
        [&](const auto&... fa) {
          return std::apply([&](const auto&... fb) { return ((fa.value == fb.value) && ...); },
                            b.fields());
        },
        a.fields());
  }
  std::size_t hash() const noexcept {
    return std::apply(
        [&](const auto&... f) { return hash_fields(device.value_or(Device::meta()), f.value...); },
        self().fields());
  }
  std::string str() const {
    std::string text;
    std::apply(
        [&](const auto&... f) {
          ((text +=
            (text.empty() ? "" : ", ") + std::string(f.name) + "=" + detail::format_field(f.value)),
           ...);
        },
        self().fields());
    return detail::call_spec_str(detail::unqualified_type_name(typeid(Derived)), device, text);
  }

 private:
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace tileops
