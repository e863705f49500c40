// The manifest's data model: one Entry per op, as the strict loader read it (docs/manifest.md §2).
// Expressions are kept as parsed syntax trees; the signature plan compiles them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tileops/core/dtype.hpp"
#include "tileops/core/value.hpp"
#include "tileops/manifest/expr.hpp"

namespace tileops::manifest {

// Where a declaration came from, for diagnostics: "norm.yaml: RMSNormFwdOp:
// signature.inputs.x.shape".
struct Origin {
  std::string file;
  std::string entry;
  std::string field;
  int line = 0;    // 1-based line in the file, 0 when unknown
  int column = 0;  // 1-based column in the file, 0 when unknown
  std::string str() const;
};

// One expression with its source text and syntax tree.
struct Expr {
  std::string source;
  std::shared_ptr<const expr::Ast> ast;
  Origin origin;
};

enum class IndexKind { kDim, kShape, kDType, kSeqInt };

struct IndexDecl {
  std::string name;
  IndexKind kind = IndexKind::kDim;
  std::vector<DType> dtypes;  // kDType: the allowed set, in declaration order
  Origin origin;
};

// A param's declared type (docs/manifest.md §2).
enum class ParamKind { kInt, kFloat, kNumber, kBool, kStr, kEnum, kIntList, kFloatList, kDType };

struct ParamType {
  ParamKind kind = ParamKind::kInt;
  bool optional = false;                 // `X | None`
  std::vector<std::string> enum_values;  // kEnum
  std::vector<DType> dtypes;             // kDType: empty means any dtype
  std::string text;                      // as written, for messages
};

// One axis of a declared shape: an integer expression, or `*e` splicing a sequence.
struct AxisTerm {
  bool splice = false;
  Expr expr;
};

struct ShapeDecl {
  std::string source;
  std::vector<AxisTerm> axes;
  Origin origin;
};

// A tensor of the signature: an input, an output, or a construction-time tensor param.
struct TensorDecl {
  std::string name;
  Expr dtype;
  ShapeDecl shape;
  bool optional = false;
  // `mutated: true` sets mutated; `mutated: "<expr>"` sets mutated_when instead.
  bool mutated = false;
  std::optional<Expr> mutated_when;
  bool write_only = false;
  bool cpu_only = false;    // device: cpu
  bool contiguous = false;  // contiguous: true
  bool buffer_out = false;  // outputs: buffer: out
  std::string alias;        // outputs: alias: <input>
  // inputs: `values: "group_ends(<Dim>)"`: the Dim this int tensor's non-decreasing group ends
  // finish at (docs/manifest.md §2). Only workloads read it; the signature cannot see data.
  std::string group_ends;
  Origin origin;

  bool may_be_written() const noexcept { return mutated || mutated_when.has_value(); }
};

struct ParamDecl {
  std::string name;
  ParamType type;
  std::optional<Value> default_value;  // absent: required
  bool kw_only = false;
  std::optional<TensorDecl> tensor;  // a construction-time tensor
  Origin origin;
};

struct LetDecl {
  std::string name;
  Expr expr;
};

struct WorkloadRow {
  std::string label;
  ParamMap params;                                     // construction params given by the row
  std::vector<std::pair<std::string, Value>> indices;  // Dim/Shape/Seq indices given by the row
  std::vector<std::string> some;                       // optional inputs passed
  std::vector<std::vector<std::pair<std::string, DType>>> dtype_cases;
  Origin origin;
};

struct Roofline {
  Expr flops;
  std::optional<Expr> bytes;  // absent: derived from the effects
};

struct Stage {
  std::string name;
  std::string op;
  bool optional = false;
  Origin origin;
};

// Where the parts of an entry that no declaration carries were written, for the diagnostics that
// concern them; line and column stay 0 for a part the entry does not write.
struct EntryOrigins {
  Origin name;    // the entry's key in the file
  Origin family;  // the family value
  // The keys that open these sections:
  Origin signature;
  Origin params;  // signature.params
  Origin inputs;  // signature.inputs
  Origin workloads;
  std::vector<Origin> dtype_combos;  // one per signature.dtype_combos row, in order
};

struct Entry {
  std::string name;
  std::string family;
  std::string status;  // "implemented" or "spec-only"
  std::string ref_api;
  std::string file;

  std::vector<IndexDecl> forall;
  std::vector<ParamDecl> params;
  std::vector<TensorDecl> inputs;
  std::vector<TensorDecl> outputs;
  std::vector<LetDecl> lets;
  std::vector<Expr> shape_rules;
  std::vector<std::vector<std::pair<std::string, DType>>> dtype_combos;
  std::vector<WorkloadRow> workloads;
  Roofline roofline;
  std::optional<std::vector<Stage>> composition;
  EntryOrigins origins;

  const IndexDecl* find_index(std::string_view n) const noexcept;
  const ParamDecl* find_param(std::string_view n) const noexcept;
  const TensorDecl* find_input(std::string_view n) const noexcept;
  const TensorDecl* find_output(std::string_view n) const noexcept;
  bool has_call_tensor_input() const noexcept { return !inputs.empty(); }
};

}  // namespace tileops::manifest
