// Recursive-descent parser for the expression language, one function per Python precedence
// level (docs/manifest.md §6.2). Every recursion goes through a depth guard, so no input can
// exhaust the stack, and every Ast it returns is at most kMaxDepth deep, so the checker,
// unparse and the evaluator recurse boundedly too (Note [Expression limits]).
//
// Note [Expression limits]
//   Two bounds keep parsing and everything after it cheap: nesting (kMaxDepth, on the parser's
//   recursion and on the Ast's height) and length (kMaxLength characters). Both hold for the
//   source and for the canonical form, the text unparse() renders, so that whatever parse()
//   accepts prints as text that parse() accepts again (the expression fuzzer checks this).
//   - Length: unparse() spaces binary operators and commas and writes literals in one form, so
//     the canonical form of a short source can be longer: `(1,1,1)` prints as `(1, 1, 1)`. A
//     bound on the source alone accepted expressions whose canonical form it then refused. The
//     bound applies to both texts: the source first, before any work, then the canonical form
//     of what parsed. The canonical form is a fixed point (parse then unparse gives it back), so
//     reading it again meets both bounds.
//   - Nesting: brackets count, and unparse() writes only the brackets that the Ast needs, which
//     every source of that Ast has too, so the canonical form nests no deeper than its source.
//     (It writes `1 .value`, not `(1).value`, for the same reason.)
//
// The grammar, one rule per function below, is docs/manifest.md §6.2.
// Forbidden Python constructs are recognised where they would start and rejected by name.

#include <cmath>
#include <limits>
#include <utility>

#include "manifest/expr/lexer.hpp"
#include "tileops/manifest/expr.hpp"

namespace tileops::expr {

ExprError::ExprError(int column, std::string detail)
    : ManifestError("column " + std::to_string(column) + ": " + detail),
      column_(column),
      detail_(std::move(detail)) {}

namespace {

using detail::Tok;
using detail::Token;

constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxLength = 4096;

// Python keywords the language has no use for; they are rejected by name rather than read as
// unknown names.
constexpr std::string_view kForbiddenKeywords[] = {
    "as",   "assert", "async",   "await", "break",  "class",  "continue", "def",    "del",
    "elif", "except", "finally", "from",  "global", "import", "is",       "lambda", "nonlocal",
    "pass", "raise",  "return",  "try",   "while",  "with",   "yield"};

// An Ast with its height, so that depth is checked as nodes are built.
struct Parsed {
  AstPtr ast;
  int depth = 1;
};

class Parser {
 public:
  explicit Parser(std::string_view source) : tokens_(detail::tokenize(source)) {}

  AstPtr run() {
    Parsed p = test();
    if (peek().kind != Tok::kEnd) unexpected(peek());
    return std::move(p.ast);
  }

 private:
  // --- token helpers ------------------------------------------------------------------------

  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool is_op(std::string_view op, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::kOp && t.text == op;
  }
  bool is_word(std::string_view word, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::kName && t.text == word;
  }
  bool accept_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool accept_word(std::string_view word) {
    if (!is_word(word)) return false;
    next();
    return true;
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op)) unexpected(peek(), op);
  }

  // The message for a token the grammar cannot take here; forbidden constructs are named.
  [[noreturn]] void unexpected(const Token& t, std::string_view expected = {}) const {
    std::string d;
    if (t.kind == Tok::kOp) {
      std::string_view s = t.text;
      if (s == "/")
        d = "'/' is not supported (use '//')";
      else if (s == "**")
        d = "'**' is not supported";
      else if (s == "&" || s == "|" || s == "^" || s == "<<" || s == ">>" || s == "~")
        d = "bit operation '" + std::string(s) + "' is not supported";
      else if (s == ":=")
        d = "':=' is not supported";
      else if (s == "@")
        d = "'@' is not supported";
      else if (s == "=" && expected.empty())
        d = "'=' is not supported (use '==')";
    } else if (t.kind == Tok::kName) {
      for (std::string_view kw : kForbiddenKeywords) {
        if (t.text != kw) continue;
        d = "'" + std::string(kw) + "' is not supported";
        if (kw == "is") d += " (use present() or '==')";
      }
    }
    if (d.empty()) {
      std::string found =
          t.kind == Tok::kEnd ? "end of expression" : "'" + std::string(t.text) + "'";
      d = expected.empty() ? "unexpected " + found
                           : "expected '" + std::string(expected) + "' but found " + found;
    }
    throw ExprError(t.column, std::move(d));
  }

  // --- node helpers -------------------------------------------------------------------------

  // Bounds recursion: each nested test, unary operator and bracket level takes one unit.
  struct Nest {
    Nest(Parser& p, int column) : p_(p) {
      if (++p_.nest_ > kMaxDepth)
        throw ExprError(column,
                        "expression nests deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~Nest() { --p_.nest_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    Parser& p_;
  };

  static Parsed leaf(AstOp op, int column) {
    Parsed p;
    p.ast = std::make_unique<Ast>();
    p.ast->op = op;
    p.ast->column = column;
    return p;
  }
  // Adds `child` under `parent`, keeping parent's height and the depth bound.
  static void adopt(Parsed& parent, Parsed child) {
    grow(parent, child.depth);
    parent.ast->args.push_back(std::move(child.ast));
  }
  static void grow(Parsed& parent, int child_depth) {
    if (child_depth + 1 > kMaxDepth)
      throw ExprError(parent.ast->column,
                      "expression nests deeper than " + std::to_string(kMaxDepth) + " levels");
    parent.depth = std::max(parent.depth, child_depth + 1);
  }
  static Parsed node(AstOp op, int column, Parsed a) {
    Parsed p = leaf(op, column);
    adopt(p, std::move(a));
    return p;
  }
  static Parsed node(AstOp op, int column, Parsed a, Parsed b) {
    Parsed p = leaf(op, column);
    adopt(p, std::move(a));
    adopt(p, std::move(b));
    return p;
  }

  // --- grammar ------------------------------------------------------------------------------

  Parsed test() {
    Nest nest(*this, peek().column);
    int column = peek().column;
    Parsed then = or_test();
    if (!accept_word("if")) return then;
    Parsed cond = or_test();
    if (!accept_word("else")) unexpected(peek(), "else");
    Parsed otherwise = test();
    Parsed p = node(AstOp::kIfElse, column, std::move(then), std::move(cond));
    adopt(p, std::move(otherwise));
    return p;
  }

  Parsed or_test() {
    Parsed x = and_test();
    while (is_word("or")) {
      next();
      int column = x.ast->column;
      x = node(AstOp::kOr, column, std::move(x), and_test());
    }
    return x;
  }

  Parsed and_test() {
    Parsed x = not_test();
    while (is_word("and")) {
      next();
      int column = x.ast->column;
      x = node(AstOp::kAnd, column, std::move(x), not_test());
    }
    return x;
  }

  Parsed not_test() {
    if (!is_word("not")) return comparison();
    int column = next().column;
    Nest nest(*this, column);
    return node(AstOp::kNot, column, not_test());
  }

  std::optional<CmpOp> cmp_op() {
    const Token& t = peek();
    if (t.kind == Tok::kOp) {
      static constexpr std::pair<std::string_view, CmpOp> kOps[] = {
          {"==", CmpOp::kEq}, {"!=", CmpOp::kNe}, {"<", CmpOp::kLt},
          {"<=", CmpOp::kLe}, {">", CmpOp::kGt},  {">=", CmpOp::kGe}};
      for (auto [text, op] : kOps) {
        if (t.text != text) continue;
        next();
        return op;
      }
      return std::nullopt;
    }
    if (accept_word("in")) return CmpOp::kIn;
    if (is_word("not") && is_word("in", 1)) {
      next();
      next();
      return CmpOp::kNotIn;
    }
    return std::nullopt;
  }

  Parsed comparison() {
    Parsed first = arith();
    std::optional<CmpOp> op = cmp_op();
    if (!op) return first;
    int column = first.ast->column;
    Parsed p = leaf(AstOp::kCompare, column);
    adopt(p, std::move(first));
    do {
      p.ast->cmp.push_back(*op);
      adopt(p, arith());
    } while ((op = cmp_op()));
    return p;
  }

  Parsed arith() {
    Parsed x = term();
    while (is_op("+") || is_op("-")) {
      AstOp op = next().text == "+" ? AstOp::kAdd : AstOp::kSub;
      int column = x.ast->column;
      x = node(op, column, std::move(x), term());
    }
    return x;
  }

  Parsed term() {
    Parsed x = factor();
    while (true) {
      AstOp op;
      if (is_op("*"))
        op = AstOp::kMul;
      else if (is_op("//"))
        op = AstOp::kFloorDiv;
      else if (is_op("%"))
        op = AstOp::kMod;
      else
        return x;
      next();
      int column = x.ast->column;
      x = node(op, column, std::move(x), factor());
    }
  }

  Parsed factor() {
    if (!is_op("-") && !is_op("+")) return postfix();
    const Token& t = next();
    AstOp op = t.text == "-" ? AstOp::kNeg : AstOp::kPos;
    Nest nest(*this, t.column);
    return node(op, t.column, factor());
  }

  Parsed postfix() {
    Parsed x = atom();
    while (true) {
      if (is_op("(")) {
        if (x.ast->op != AstOp::kName)
          throw ExprError(peek().column, "only primitives can be called");
        next();
        x = call(std::move(x));
      } else if (is_op("[")) {
        int column = next().column;
        Nest nest(*this, column);
        x = subscript(std::move(x), column);
      } else if (is_op(".")) {
        next();
        const Token& name = peek();
        if (name.kind != Tok::kName) unexpected(name);
        next();
        if (name.text != "value")
          throw ExprError(name.column, "attribute '" + std::string(name.text) +
                                           "' is not supported (only '.value')");
        int column = x.ast->column;
        x = node(AstOp::kAttr, column, std::move(x));
        x.ast->text = "value";
      } else {
        return x;
      }
    }
  }

  Parsed call(Parsed callee) {
    Nest nest(*this, callee.ast->column);
    Parsed p = leaf(AstOp::kCall, callee.ast->column);
    p.ast->text = std::move(callee.ast->text);
    bool keywords = false;
    while (!is_op(")")) {
      if (is_op("*") || is_op("**"))
        throw ExprError(peek().column, "starred arguments are not supported");
      if (peek().kind == Tok::kName && is_op("=", 1)) {
        const Token& name = next();
        next();
        for (const auto& kw : p.ast->kwargs)
          if (kw.first == name.text)
            throw ExprError(name.column,
                            "duplicate keyword argument '" + std::string(name.text) + "'");
        Parsed value = test();
        grow(p, value.depth);
        p.ast->kwargs.emplace_back(std::string(name.text), std::move(value.ast));
        keywords = true;
      } else {
        int column = peek().column;
        if (keywords) throw ExprError(column, "positional argument follows keyword argument");
        Parsed arg = test();
        if (is_word("for")) {
          arg = generator(std::move(arg));
          if (!p.ast->args.empty() || !is_op(")"))
            throw ExprError(arg.ast->column, "generator expression must be parenthesized");
        }
        adopt(p, std::move(arg));
      }
      if (!accept_op(",")) break;
    }
    expect_op(")");
    return p;
  }

  // `elem for name in iterable`, after `elem`; the caller consumes the brackets.
  Parsed generator(Parsed elem) {
    int column = elem.ast->column;
    next();  // 'for'
    const Token& var = peek();
    if (var.kind != Tok::kName || is_reserved(var.text)) unexpected(var);
    next();
    if (is_op(",")) throw ExprError(peek().column, "a generator expression binds exactly one name");
    if (!accept_word("in")) unexpected(peek(), "in");
    Parsed iterable = or_test();
    if (is_word("if"))
      throw ExprError(peek().column, "'if' in a generator expression is not supported");
    if (is_word("for")) throw ExprError(peek().column, "nested 'for' clauses are not supported");
    Parsed p = node(AstOp::kGenerator, column, std::move(elem), std::move(iterable));
    p.ast->text = std::string(var.text);
    return p;
  }

  Parsed subscript(Parsed base, int column) {
    Parsed lower = is_op(":") ? leaf(AstOp::kNoneLit, column) : test();
    if (!accept_op(":")) {
      if (is_op(",")) throw ExprError(peek().column, "tuple subscripts are not supported");
      expect_op("]");
      int c = base.ast->column;
      return node(AstOp::kSubscript, c, std::move(base), std::move(lower));
    }
    Parsed upper = is_op("]") || is_op(":") ? leaf(AstOp::kNoneLit, peek().column) : test();
    if (is_op(":")) throw ExprError(peek().column, "slice steps are not supported");
    if (is_op(",")) throw ExprError(peek().column, "tuple subscripts are not supported");
    expect_op("]");
    int c = base.ast->column;
    Parsed p = node(AstOp::kSlice, c, std::move(base), std::move(lower));
    adopt(p, std::move(upper));
    return p;
  }

  static bool is_reserved(std::string_view w) {
    static constexpr std::string_view kReserved[] = {"True", "False", "None", "inf",  "and", "or",
                                                     "not",  "in",    "if",   "else", "for"};
    for (std::string_view r : kReserved)
      if (w == r) return true;
    for (std::string_view r : kForbiddenKeywords)
      if (w == r) return true;
    return false;
  }

  Parsed atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::kInt: {
        next();
        Parsed p = leaf(AstOp::kIntLit, t.column);
        p.ast->int_value = t.int_value;
        return p;
      }
      case Tok::kFloat: {
        next();
        Parsed p = leaf(AstOp::kFloatLit, t.column);
        p.ast->float_value = t.float_value;
        return p;
      }
      case Tok::kStr: {
        next();
        Parsed p = leaf(AstOp::kStrLit, t.column);
        p.ast->text = t.str_value;
        return p;
      }
      case Tok::kName:
        return name_atom();
      case Tok::kOp:
        if (t.text == "(") return paren();
        if (t.text == "[") throw ExprError(t.column, "list literals are not supported");
        if (t.text == "{") throw ExprError(t.column, "set and dict literals are not supported");
        if (t.text == "*")
          throw ExprError(t.column, "starred expressions are allowed only as shape axes");
        unexpected(t);
      case Tok::kEnd:
        break;
    }
    unexpected(t);
  }

  Parsed name_atom() {
    const Token& t = peek();
    if (t.text == "True" || t.text == "False") {
      next();
      Parsed p = leaf(AstOp::kBoolLit, t.column);
      p.ast->bool_value = t.text == "True";
      return p;
    }
    if (t.text == "None") {
      next();
      return leaf(AstOp::kNoneLit, t.column);
    }
    if (t.text == "inf") {
      next();
      Parsed p = leaf(AstOp::kFloatLit, t.column);
      p.ast->float_value = std::numeric_limits<double>::infinity();
      return p;
    }
    if (is_reserved(t.text)) unexpected(t);
    next();
    Parsed p = leaf(AstOp::kName, t.column);
    p.ast->text = std::string(t.text);
    return p;
  }

  Parsed paren() {
    int column = next().column;
    Nest nest(*this, column);
    if (accept_op(")")) return leaf(AstOp::kTuple, column);
    Parsed first = test();
    if (is_word("for")) {
      Parsed g = generator(std::move(first));
      expect_op(")");
      return g;
    }
    if (accept_op(")")) return first;
    if (!is_op(",")) unexpected(peek(), ")");
    Parsed p = leaf(AstOp::kTuple, column);
    adopt(p, std::move(first));
    while (accept_op(",")) {
      if (is_op(")")) break;
      adopt(p, test());
    }
    expect_op(")");
    return p;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nest_ = 0;
};

}  // namespace

AstPtr parse(std::string_view source) {
  auto too_long = [](std::size_t length, std::string_view form) {
    return ExprError(1, "expression is longer than " + std::to_string(kMaxLength) + " characters" +
                            std::string(form) + " (" + std::to_string(length) + ")");
  };
  if (source.size() > kMaxLength) throw too_long(source.size(), "");
  AstPtr ast = Parser(source).run();
  // See Note [Expression limits]: the canonical form is bounded too.
  if (std::size_t length = unparse(*ast).size(); length > kMaxLength)
    throw too_long(length, " in canonical form");
  return ast;
}

}  // namespace tileops::expr
