// OpInfo: what the generic op suite (test_generic_ops.cpp) knows of an op, all of it derived from
// the op's manifest entry, in the manner of PyTorch's OpInfo: its workload cases scaled down, and
// the variants of a case that each check needs (a second shape and dtype, a zero-size axis, a rank
// the signature refuses, two tensors that disagree on an index). Nothing here is written per op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/dtype.hpp"
#include "tileops/core/shape.hpp"
#include "tileops/core/tensor_spec.hpp"
#include "tileops/core/value.hpp"
#include "tileops/manifest/model.hpp"
#include "tileops/manifest/signature_plan.hpp"
#include "tileops/manifest/workload.hpp"

namespace tileops::generic {

// Element budgets per tensor: the numerics cases (every dtype case of every workload row) are
// scaled to kNumericsElems; the case the other checks vary, to kSmallElems.
inline constexpr std::int64_t kNumericsElems = std::int64_t{1} << 14;
inline constexpr std::int64_t kSmallElems = std::int64_t{1} << 10;

// One call's worth of a workload row: the row as scaled (its indices and params give the case) and
// the instantiated case, with a `device` param pointed at the CPU.
struct Case {
  manifest::WorkloadRow row;
  manifest::WorkloadCase wcase;
  // "llama-8b-prefill-bfloat16 (x bfloat16 [4, 4096], weight bfloat16 [4096])".
  std::string str(const manifest::Entry& entry) const;
};

// A name (an index or a param) that sizes axes of several inputs, or of an input and the
// construction: a call where one of them disagrees is refused.
struct SharedName {
  std::string name;
  std::string term;                 // as the shapes write it: "*B", "N", "*normalized_shape"
  std::vector<std::size_t> inputs;  // the inputs whose shapes name it, in signature order
};

class OpInfo {
 public:
  explicit OpInfo(std::shared_ptr<const manifest::Entry> entry);

  const manifest::Entry& entry() const noexcept { return *entry_; }
  const std::string& name() const noexcept { return entry_->name; }
  const manifest::SignaturePlan& plan() const noexcept { return *plan_; }

  bool has_tensor_input() const noexcept { return !entry_->inputs.empty(); }
  // The output a call may pass out= for, or -1.
  int buffer_output() const noexcept;
  // The `device` param that places an op without a call-time tensor input, or nullptr.
  const manifest::ParamDecl* device_param() const noexcept;

  // Every dtype case of `row`, scaled to kNumericsElems.
  std::vector<Case> numerics_cases(const manifest::WorkloadRow& row) const;
  // The first dtype case of the row passing the most optional inputs among those passing every
  // input in `needed`, scaled to kSmallElems; nullopt when no row passes them all.
  std::optional<Case> base_case(const std::vector<std::size_t>& needed = {}) const;
  // `base` with one more element on a leading axis (or Dim index) and another dtype of a DType
  // index, under the same construction params; nullopt when the signature accepts no such case.
  std::optional<Case> second_case(const Case& base) const;
  // `base` with one index axis (or a param that sizes an axis) at 0, as the shape rules allow.
  std::optional<Case> empty_case(const Case& base) const;

  // The shape of input `i` with a rank its declaration refuses: one axis more when the params fix
  // its rank, one fewer than its least rank otherwise; nullopt when every rank is accepted.
  std::optional<Shape> wrong_rank_shape(const Case& c, std::size_t i) const;
  // The axes of input `i`'s shape in `c` that the bare name `name` sizes; nullopt when an axis
  // before them has a length the case does not give.
  std::optional<std::vector<std::size_t>> axes_of(const Case& c, std::size_t i,
                                                  std::string_view name) const;
  // Indices that size axes of two or more inputs, and params that size axes of an input.
  std::vector<SharedName> shared_names() const;
  // The dtypes input `i` may have in `c`; nullopt when its dtype is an expression.
  std::optional<std::vector<DType>> allowed_dtypes(const Case& c, std::size_t i) const;

  // The outputs the signature infers for `c`; CheckError when it refuses the case.
  std::vector<TensorSpec> outputs_of(const Case& c) const;
  bool accepts(const Case& c) const;
  // The checked construction params of `c`, defaults filled in.
  ParamMap params_of(const Case& c) const;

 private:
  // Dtype case `k` of `row`, instantiated; CheckError when the row does not instantiate.
  Case make_case(const manifest::WorkloadRow& row, std::size_t k) const;
  // `row` reduced to the dtype case of `base`, for the variants of a case.
  manifest::WorkloadRow variant_row(const Case& base) const;
  std::optional<Case> first_accepted(const std::vector<manifest::WorkloadRow>& rows) const;

  std::shared_ptr<const manifest::Entry> entry_;
  std::shared_ptr<const manifest::SignaturePlan> plan_;
};

// The manifest's entries with `status: implemented`, in manifest order.
std::vector<std::shared_ptr<const manifest::Entry>> implemented_entries();

// `text` with every character outside [A-Za-z0-9_] replaced by '_' (a GoogleTest name part).
std::string test_name_part(std::string_view text);

}  // namespace tileops::generic
