// The manifest's expression language (docs/manifest.md §6): a side-effect-free subset of Python
// expressions. Source text is parsed once into an Ast, kind-checked against a Scope, and compiled
// into a Program whose names are resolved to frame slots; evaluation reads only the frame.
// No expression text is parsed on the call path.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/core/error.hpp"
#include "tileops/core/value.hpp"

namespace tileops::expr {

// ---------------------------------------------------------------------------------------------
// Syntax

enum class AstOp : std::uint8_t {
  kIntLit,    // int_value
  kFloatLit,  // float_value
  kStrLit,    // text
  kBoolLit,   // bool_value
  kNoneLit,
  kName,   // text
  kTuple,  // args (also a parenthesised tuple literal)
  kNeg,    // args[0]
  kPos,    // args[0]
  kNot,    // args[0]
  kAdd,
  kSub,
  kMul,
  kFloorDiv,
  kMod,  // args[0], args[1]
  kAnd,
  kOr,         // args[0], args[1] (short-circuit)
  kCompare,    // args[0] cmp[0] args[1] cmp[1] args[2] ... (chained)
  kIfElse,     // args = {then, cond, else} in source order: `then if cond else else`
  kSubscript,  // args[0][args[1]]
  kSlice,      // args[0][args[1]:args[2]] (absent bounds are kNoneLit)
  kAttr,       // args[0].text  (only `.value`)
  kCall,       // text(args...)  — a primitive; keyword arguments in kwargs
  kGenerator,  // (args[0] for text in args[1]) — only as the single argument of a reduction
  kStar,       // *args[0] — only as a shape axis, handled by the shape parser
};

enum class CmpOp : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };

struct Ast {
  AstOp op = AstOp::kNoneLit;
  int column = 0;  // 1-based column of the node's first character in the source
  std::string text;
  std::int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::vector<CmpOp> cmp;
  std::vector<std::unique_ptr<Ast>> args;
  std::vector<std::pair<std::string, std::unique_ptr<Ast>>> kwargs;
};
using AstPtr = std::unique_ptr<Ast>;

// A syntax, kind or name error in one expression. what() is "column N: <detail>"; the manifest
// loader adds file, entry and field. `column` is 1-based within the source.
class ExprError : public ManifestError {
 public:
  ExprError(int column, std::string detail);
  int column() const noexcept { return column_; }
  const std::string& detail() const noexcept { return detail_; }

 private:
  int column_;
  std::string detail_;
};

// Parses one expression; throws ExprError on bad syntax.
// Never crashes on any input; recursion depth is bounded.
AstPtr parse(std::string_view source);

// Free names an expression reads (comprehension variables excluded), in first-use order.
std::vector<std::string> free_names(const Ast& ast);

// Python-like rendering of an Ast, for messages.
std::string unparse(const Ast& ast);

// ---------------------------------------------------------------------------------------------
// Kinds

enum class Kind : std::uint8_t {
  kInt,  // an integer (axis lengths, Dim indices and int params included)
  kBool,
  kFloat,
  kStr,
  kDType,
  kNone,
  kIntSeq,  // Shape indices, list[int] params, shape-valued primitives
  kFloatSeq,
  kTuple,   // heterogeneous tuple literal
  kTensor,  // a tensor name: readable only through present() and bytes()
  kAny,     // no static kind (only for values the language never computes with)
};

struct Type {
  Kind kind = Kind::kAny;
  bool optional = false;  // `X | None`: only present(v) and v.value may read it
  friend bool operator==(const Type&, const Type&) = default;
};

std::string type_name(Type type);

// What a name stands for; the checker allows `present()` on optional params and tensors, and
// `bytes()` on tensors only when the context allows it.
enum class NameRole : std::uint8_t { kIndex, kParam, kLet, kTensor };

// The names an expression may read, each with its type and the frame slot holding its value.
class Scope {
 public:
  // Declares `name`; returns its slot. Redeclaring a name replaces it.
  int declare(std::string name, Type type, NameRole role);
  struct Entry {
    std::string name;
    Type type;
    NameRole role;
    int slot;
  };
  const Entry* find(std::string_view name) const noexcept;
  int num_slots() const noexcept { return static_cast<int>(entries_.size()); }
  std::span<const Entry> entries() const noexcept { return entries_; }

 private:
  std::vector<Entry> entries_;
};

struct CompileOptions {
  bool allow_bytes = false;  // bytes(t): only in roofline formulas
};

// ---------------------------------------------------------------------------------------------
// Evaluation

// The values a Program reads: one Value per Scope slot. A tensor slot holds the Tensor (a meta
// tensor will do: only presence, shape and dtype are read) or None when the tensor is absent.
using Frame = std::span<const Value>;

struct Node;  // compiled form; private to the implementation

class Program {
 public:
  Program() = default;
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  Program(const Program&);
  Program& operator=(const Program&);
  ~Program();

  // Evaluates over `frame`; throws EvalError naming the failure (overflow, division by zero,
  // a primitive's domain error). Int arithmetic is exact int64 and overflow is an error.
  Value eval(Frame frame) const;

  Type type() const noexcept { return type_; }
  const std::string& source() const noexcept { return source_; }
  // Slots the program reads.
  const std::vector<int>& reads() const noexcept { return reads_; }
  bool valid() const noexcept { return root_ != nullptr; }

 private:
  friend Program compile(const Ast&, std::string_view, const Scope&, CompileOptions);
  std::shared_ptr<const Node> root_;
  Type type_;
  std::string source_;
  std::vector<int> reads_;
};

// Kind-checks `ast` against `scope` and compiles it. Throws ExprError
// naming the offending text for an unknown name, a call outside the primitive set, a wrong
// argument count or kind, a forbidden construct (`/`, `**`, bit ops, lambdas, list literals,
// attributes other than `.value` on an optional).
Program compile(const Ast& ast, std::string_view source, const Scope& scope,
                CompileOptions options = {});
// parse() then compile().
Program compile(std::string_view source, const Scope& scope, CompileOptions options = {});

// The primitive names the language accepts (docs/manifest.md §6.6), for the validator's messages.
std::span<const std::string_view> primitive_names() noexcept;

// Shared helpers the signature plan also uses, with the primitives' semantics.
// PyTorch broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// Normalises axis `a` for `rank` (rank 0 accepts only 0 and -1); nullopt when out of range.
std::optional<std::int64_t> normalize_axis(std::int64_t a, std::int64_t rank);

}  // namespace tileops::expr
