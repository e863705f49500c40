// The compiled form of an expression: a tree whose names are resolved to frame slots (or to
// comprehension locals), whose kinds are fixed, and whose every operation is chosen for the kinds
// it meets, so that evaluation does no lookup and no dispatch on names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tileops/core/value.hpp"
#include "tileops/manifest/expr.hpp"

namespace tileops::expr {

enum class NodeOp : std::uint8_t {
  kConst,  // constant
  kSlot,   // frame[index]
  kLocal,  // the comprehension variable numbered index
  kNeg,    // args[0]; num says int or float
  kNot,
  kAdd,
  kSub,
  kMul,
  kFloorDiv,
  kMod,     // num says int or float
  kConcat,  // IntSeq + IntSeq
  kAnd,
  kOr,
  kCompare,      // args, cmp, modes
  kIfElse,       // args = {cond, then, else}
  kIndex,        // args[0][args[1]]
  kSlice,        // args[0][args[1]:args[2]]; a bound of kind None is open
  kOptValue,     // frame[index] of an optional param, which must not be None
  kIntSeqBuild,  // a tuple literal of ints, as a Shape
  kTupleBuild,   // a heterogeneous tuple literal
  kGenerator,    // args = {element, iterable}; index = its local
  // Primitives.
  kPresent,
  kLen,
  kSum,
  kProd,  // over args[0]: a sequence or a generator
  kMaxSeq,
  kMinSeq,  // args[0] a sequence or generator; args[1] the default when present
  kMaxArgs,
  kMinArgs,  // two or more numbers
  kAll,
  kAny,  // args[0] a Bool generator or a tuple
  kCeilDiv,
  kBroadcast,
  kReduced,
  kValidAxes,
  kUniqueAxes,
  kNormalizeAxis,
  kPromoteIntToFloat,
  kCoalesceDType,
  kCategory,
  kRepresentable,
  kBytes,
};

enum class NumMode : std::uint8_t { kInt, kFloat };

// How one link of a comparison chain compares its operands.
enum class CmpMode : std::uint8_t {
  kInt,    // int64
  kFloat,  // double (either side may be an Int)
  kStr,
  kDType,
  kBool,
  kIntSeq,    // lexicographic
  kValue,     // equality of values of no common static kind (tuples, Any); numbers order
  kInIntSeq,  // Int in IntSeq
  kInFloatSeq,
  kInTuple,  // a value among a tuple's items
};

struct Node {
  NodeOp op = NodeOp::kConst;
  Kind kind = Kind::kAny;
  bool optional = false;
  NumMode num = NumMode::kInt;
  int index = -1;
  Value constant;
  std::vector<CmpOp> cmp;
  std::vector<CmpMode> modes;
  std::vector<std::unique_ptr<Node>> args;
  std::string text;  // the source of this node, for evaluation errors
};
using NodePtr = std::unique_ptr<Node>;

// Comprehensions nest no deeper than the parser's depth bound.
inline constexpr int kMaxLocals = 64;

}  // namespace tileops::expr
