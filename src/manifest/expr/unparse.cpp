// Rendering an Ast back to Python-like text, with the fewest parentheses that keep the parse:
// parse(unparse(a)) rebuilds `a` (the fuzzer checks this), so messages quote what was meant.

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tileops/core/dtype.hpp"
#include "tileops/manifest/expr.hpp"

namespace tileops::expr {
namespace {

// Binding strength, lowest first (docs/manifest.md §6.2).
// A bare generator binds loosest of all: anywhere but as a sole call argument it is bracketed.
enum Prec : int {
  kGeneratorP = 0,
  kTest,
  kOrP,
  kAndP,
  kNotP,
  kCmpP,
  kArithP,
  kTermP,
  kFactorP,
  kPostfixP
};

Prec prec_of(const Ast& a) {
  switch (a.op) {
    case AstOp::kGenerator:
      return kGeneratorP;
    case AstOp::kIfElse:
      return kTest;
    case AstOp::kOr:
      return kOrP;
    case AstOp::kAnd:
      return kAndP;
    case AstOp::kNot:
      return kNotP;
    case AstOp::kCompare:
      return kCmpP;
    case AstOp::kAdd:
    case AstOp::kSub:
      return kArithP;
    case AstOp::kMul:
    case AstOp::kFloorDiv:
    case AstOp::kMod:
      return kTermP;
    case AstOp::kNeg:
    case AstOp::kPos:
    case AstOp::kStar:
      return kFactorP;
    default:
      return kPostfixP;
  }
}

std::string_view cmp_text(CmpOp op) {
  switch (op) {
    case CmpOp::kEq:
      return " == ";
    case CmpOp::kNe:
      return " != ";
    case CmpOp::kLt:
      return " < ";
    case CmpOp::kLe:
      return " <= ";
    case CmpOp::kGt:
      return " > ";
    case CmpOp::kGe:
      return " >= ";
    case CmpOp::kIn:
      return " in ";
    case CmpOp::kNotIn:
      return " not in ";
  }
  return " ? ";
}

std::string float_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // Shortest form that reads back exactly.
  for (int digits = 1; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string str_text(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "'";
}

void render(const Ast& a, std::string& out);

// Renders `a` as an operand needing at least `min` binding strength.
void operand(const Ast& a, Prec min, std::string& out) {
  bool paren = prec_of(a) < min;
  if (paren) out += '(';
  render(a, out);
  if (paren) out += ')';
}

void binary(const Ast& a, std::string_view op, Prec p, std::string& out) {
  operand(*a.args[0], p, out);
  out += op;
  // Left-associative: an equal-precedence right operand needs brackets.
  operand(*a.args[1], static_cast<Prec>(p + 1), out);
}

void render(const Ast& a, std::string& out) {
  switch (a.op) {
    case AstOp::kIntLit:
      out += std::to_string(a.int_value);
      return;
    case AstOp::kFloatLit:
      out += float_text(a.float_value);
      return;
    case AstOp::kStrLit:
      out += str_text(a.text);
      return;
    case AstOp::kBoolLit:
      out += a.bool_value ? "True" : "False";
      return;
    case AstOp::kNoneLit:
      out += "None";
      return;
    case AstOp::kName:
      out += a.text;
      return;
    case AstOp::kTuple:
      out += '(';
      for (std::size_t i = 0; i < a.args.size(); ++i) {
        if (i > 0) out += ", ";
        operand(*a.args[i], kTest, out);
      }
      if (a.args.size() == 1) out += ',';
      out += ')';
      return;
    case AstOp::kNeg:
    case AstOp::kPos:
      out += a.op == AstOp::kNeg ? '-' : '+';
      operand(*a.args[0], kFactorP, out);
      return;
    case AstOp::kStar:
      out += '*';
      operand(*a.args[0], kFactorP, out);
      return;
    case AstOp::kNot:
      out += "not ";
      operand(*a.args[0], kNotP, out);
      return;
    case AstOp::kAdd:
      binary(a, " + ", kArithP, out);
      return;
    case AstOp::kSub:
      binary(a, " - ", kArithP, out);
      return;
    case AstOp::kMul:
      binary(a, " * ", kTermP, out);
      return;
    case AstOp::kFloorDiv:
      binary(a, " // ", kTermP, out);
      return;
    case AstOp::kMod:
      binary(a, " % ", kTermP, out);
      return;
    case AstOp::kAnd:
      binary(a, " and ", kAndP, out);
      return;
    case AstOp::kOr:
      binary(a, " or ", kOrP, out);
      return;
    case AstOp::kCompare:
      // Operands of a chain are arithmetic expressions; a nested comparison needs brackets.
      operand(*a.args[0], kArithP, out);
      for (std::size_t i = 0; i < a.cmp.size() && i + 1 < a.args.size(); ++i) {
        out += cmp_text(a.cmp[i]);
        operand(*a.args[i + 1], kArithP, out);
      }
      return;
    case AstOp::kIfElse:
      operand(*a.args[0], kOrP, out);
      out += " if ";
      operand(*a.args[1], kOrP, out);
      out += " else ";
      operand(*a.args[2], kTest, out);
      return;
    case AstOp::kSubscript:
      operand(*a.args[0], kPostfixP, out);
      out += '[';
      operand(*a.args[1], kTest, out);
      out += ']';
      return;
    case AstOp::kSlice:
      operand(*a.args[0], kPostfixP, out);
      out += '[';
      if (a.args[1]->op != AstOp::kNoneLit) operand(*a.args[1], kTest, out);
      out += ':';
      if (a.args[2]->op != AstOp::kNoneLit) operand(*a.args[2], kTest, out);
      out += ']';
      return;
    case AstOp::kAttr:
      // `1.value` would lex as a malformed number, so a number literal (never negative: `-1` is a
      // negation) is followed by a space. Brackets would do as well, but `(1)` nests two levels
      // deeper than `1 .value`, and the canonical form must not nest deeper than any source of
      // the same Ast (Note [Expression limits] in parser.cpp).
      operand(*a.args[0], kPostfixP, out);
      if (a.args[0]->op == AstOp::kIntLit || a.args[0]->op == AstOp::kFloatLit) out += ' ';
      out += '.';
      out += a.text;
      return;
    case AstOp::kCall: {
      out += a.text;
      out += '(';
      bool first = true;
      for (const auto& arg : a.args) {
        if (!first) out += ", ";
        first = false;
        // A sole generator argument keeps Python's bare form; elsewhere it needs brackets.
        if (arg->op == AstOp::kGenerator && a.args.size() == 1 && a.kwargs.empty())
          render(*arg, out);
        else
          operand(*arg, kTest, out);
      }
      for (const auto& [name, value] : a.kwargs) {
        if (!first) out += ", ";
        first = false;
        out += name;
        out += '=';
        operand(*value, kTest, out);
      }
      out += ')';
      return;
    }
    case AstOp::kGenerator:
      operand(*a.args[0], kTest, out);
      out += " for ";
      out += a.text;
      out += " in ";
      operand(*a.args[1], kOrP, out);
      return;
  }
}

void collect(const Ast& a, std::vector<std::string>& bound, std::vector<std::string>& out) {
  if (a.op == AstOp::kName) {
    for (const auto& b : bound)
      if (b == a.text) return;
    if (parse_dtype(a.text)) return;  // a dtype constant, not a variable
    for (const auto& n : out)
      if (n == a.text) return;
    out.push_back(a.text);
    return;
  }
  if (a.op == AstOp::kGenerator) {
    // The iterable is outside the comprehension's scope; the element inside it.
    collect(*a.args[1], bound, out);
    bound.push_back(a.text);
    collect(*a.args[0], bound, out);
    bound.pop_back();
    return;
  }
  for (const auto& arg : a.args) collect(*arg, bound, out);
  for (const auto& kw : a.kwargs) collect(*kw.second, bound, out);
}

}  // namespace

std::string unparse(const Ast& ast) {
  std::string out;
  operand(ast, kTest, out);  // a bare generator keeps its brackets
  return out;
}

std::vector<std::string> free_names(const Ast& ast) {
  std::vector<std::string> bound;
  std::vector<std::string> out;
  collect(ast, bound, out);
  return out;
}

}  // namespace tileops::expr
