// Toy manifest entries that both the manifest-layer tests and the op framework tests load. Each is
// one entry named "@NAME@": toy_entry() names it, so a test can give each op class an entry of its
// own or put several entries into one manifest text.
#pragma once

#include <string>
#include <string_view>

namespace tileops::test_common {

// `entry` with every "@NAME@" replaced by `name`.
inline std::string toy_entry(std::string_view entry, std::string_view name) {
  std::string text(entry);
  for (std::size_t at; (at = text.find("@NAME@")) != std::string::npos;) text.replace(at, 6, name);
  return text;
}

// Writes x when `inplace`; the output then is x.
inline constexpr std::string_view kInplaceEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float16 | float32]"}
    params:
      inplace: {type: bool, default: false}
    inputs:
      x: {dtype: T, shape: "[N]", mutated: inplace}
    outputs:
      y: {dtype: T, shape: "[N]", alias: x}
  workloads: [{label: w, N: 4, dtype_cases: [{T: float16}]}]
  roofline: {flops: "N"}
)yaml";

// Writes x and returns nothing.
inline constexpr std::string_view kSinkEntry = R"yaml(
@NAME@:
  family: toy
  status: spec-only
  signature:
    forall: {N: Dim}
    inputs:
      x: {dtype: float32, shape: "[N]", mutated: true}
    outputs: {}
  workloads: [{label: w, N: 4}]
  roofline: {flops: "N"}
)yaml";

}  // namespace tileops::test_common
