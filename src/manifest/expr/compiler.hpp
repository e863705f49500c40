// The kind checker and compiler: walks an Ast once, resolves names, fixes every node's kind and
// the operation it performs, and rejects what the language does not allow. compiler.cpp holds
// names and operators; compile_calls.cpp the primitives.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "manifest/expr/node.hpp"
#include "tileops/manifest/expr.hpp"

namespace tileops::expr::detail {

class Compiler {
 public:
  Compiler(const Scope& scope, CompileOptions options) : scope_(scope), options_(options) {}

  // Any node, tensors and optionals included (a Program's root may be optional).
  NodePtr any(const Ast& a);
  // A node whose value is usable by operators: not a tensor name, not possibly None.
  NodePtr value(const Ast& a);

  std::vector<int> take_reads();

  [[noreturn]] static void fail(const Ast& a, std::string detail);
  static NodePtr make(NodeOp op, Kind kind, const Ast& a);
  static NodePtr constant(Value v, Kind kind, const Ast& a);

 private:
  NodePtr name(const Ast& a);
  NodePtr tuple(const Ast& a);
  NodePtr unary(const Ast& a);
  NodePtr arithmetic(const Ast& a);
  NodePtr logic(const Ast& a);
  NodePtr compare(const Ast& a);
  NodePtr if_else(const Ast& a);
  NodePtr subscript(const Ast& a);
  NodePtr attr(const Ast& a);
  CmpMode cmp_mode(const Ast& whole, CmpOp op, NodePtr& lhs, const Ast& lhs_ast, NodePtr& rhs,
                   const Ast& rhs_ast);

  // compile_calls.cpp
  NodePtr call(const Ast& a);
  NodePtr generator(const Ast& a, const char* primitive);
  NodePtr sequence_or_generator(const Ast& call, const Ast& arg, bool want_bool);
  NodePtr present(const Ast& a);
  NodePtr bytes(const Ast& a);
  NodePtr axes_arg(const Ast& call, const Ast& arg, int position);

  struct Local {
    std::string name;
    Type type;
  };
  const Scope& scope_;
  CompileOptions options_;
  std::vector<Local> locals_;
  std::vector<int> reads_;
};

// "len() takes 1 argument, got 2"-style helpers shared by the call checks.
std::string plural(std::size_t n, std::string_view noun);

}  // namespace tileops::expr::detail
