#include "manifest/expr/lexer.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "tileops/manifest/expr.hpp"

namespace tileops::expr::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Printable rendering of one source byte for messages: 'x' or byte 0xC3.
std::string describe_char(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("character '") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02X", u);
  return buf;
}

// Longest punctuators first so that "**" is one token and can be rejected by name.
constexpr std::string_view kPunctuators[] = {
    "**", "//", "<<", ">>", "<=", ">=", "==", "!=", ":=", "->", "+", "-", "*", "/", "%", "(",
    ")",  "[",  "]",  "{",  "}",  ",",  ":",  ".",  "=",  "<",  ">", "&", "|", "^", "~", "@"};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skip_space();
      Token t;
      t.column = static_cast<int>(pos_) + 1;
      if (pos_ >= src_.size()) {
        out.push_back(std::move(t));
        return out;
      }
      char c = src_[pos_];
      if (is_digit(c) || (c == '.' && pos_ + 1 < src_.size() && is_digit(src_[pos_ + 1]))) {
        number(t);
      } else if (is_name_start(c)) {
        std::size_t start = pos_;
        while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
        t.kind = Tok::kName;
        t.text = src_.substr(start, pos_ - start);
      } else if (c == '\'' || c == '"') {
        string(t);
      } else {
        punctuator(t);
      }
      out.push_back(std::move(t));
    }
  }

 private:
  void skip_space() {
    while (pos_ < src_.size() &&
           (src_[pos_] == ' ' || src_[pos_] == '\t' || src_[pos_] == '\n' || src_[pos_] == '\r'))
      ++pos_;
  }

  // Python's decimal literals: digits with single underscores between them, an optional
  // fraction and exponent. Anything glued on (0x1f, 1j, 12abc) is one invalid literal.
  void number(Token& t) {
    std::size_t start = pos_;
    bool is_float = false;
    if (src_[pos_] != '.') digits();
    if (pos_ < src_.size() && src_[pos_] == '.') {
      is_float = true;
      ++pos_;
      if (pos_ < src_.size() && is_digit(src_[pos_])) digits();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      std::size_t save = pos_;
      ++pos_;
      if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) ++pos_;
      if (pos_ < src_.size() && is_digit(src_[pos_])) {
        digits();
        is_float = true;
      } else {
        pos_ = save;
      }
    }
    bool glued = pos_ < src_.size() && (is_name_char(src_[pos_]) || src_[pos_] == '.');
    while (pos_ < src_.size() && (is_name_char(src_[pos_]) || (glued && src_[pos_] == '.'))) ++pos_;
    t.text = src_.substr(start, pos_ - start);
    if (glued || bad_underscore_) fail(t, "invalid number literal '" + std::string(t.text) + "'");

    std::string clean;
    for (char c : t.text)
      if (c != '_') clean += c;
    if (!is_float) {
      if (clean.size() > 1 && clean[0] == '0' && clean.find_first_not_of('0') != std::string::npos)
        fail(t, "leading zeros are not allowed in '" + std::string(t.text) + "'");
      std::int64_t v = 0;
      auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), v);
      if (ec != std::errc() || end != clean.data() + clean.size())
        fail(t, "integer literal '" + std::string(t.text) + "' is out of range");
      t.kind = Tok::kInt;
      t.int_value = v;
      return;
    }
    double v = 0;
    auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), v);
    if (ec == std::errc::result_out_of_range) {
      // Overflow and underflow both land here; strtod tells them apart (underflow is a
      // legitimate 0.0 or denormal, as in Python).
      v = std::strtod(clean.c_str(), nullptr);
    } else if (ec != std::errc() || end != clean.data() + clean.size()) {
      fail(t, "invalid number literal '" + std::string(t.text) + "'");
    }
    if (!std::isfinite(v)) fail(t, "float literal '" + std::string(t.text) + "' is not finite");
    t.kind = Tok::kFloat;
    t.float_value = v;
  }

  void digits() {
    bool prev_digit = false;
    while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_')) {
      bool d = is_digit(src_[pos_]);
      if (!d && !prev_digit) bad_underscore_ = true;
      prev_digit = d;
      ++pos_;
    }
    if (!prev_digit) bad_underscore_ = true;
  }

  void string(Token& t) {
    char quote = src_[pos_];
    std::size_t start = pos_++;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') {
        t.text = src_.substr(start, pos_ - start);
        fail(t, "unterminated string literal");
      }
      char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        t.str_value += c;
        continue;
      }
      if (pos_ >= src_.size()) continue;  // reported as unterminated on the next turn
      char e = src_[pos_++];
      switch (e) {
        case '\\':
          t.str_value += '\\';
          break;
        case '\'':
          t.str_value += '\'';
          break;
        case '"':
          t.str_value += '"';
          break;
        case 'n':
          t.str_value += '\n';
          break;
        case 't':
          t.str_value += '\t';
          break;
        default:
          throw ExprError(static_cast<int>(pos_) - 1,
                          "unsupported escape '\\" + std::string(1, e) + "' in a string literal");
      }
    }
    t.kind = Tok::kStr;
    t.text = src_.substr(start, pos_ - start);
  }

  void punctuator(Token& t) {
    for (std::string_view p : kPunctuators) {
      if (src_.substr(pos_, p.size()) == p) {
        t.kind = Tok::kOp;
        t.text = src_.substr(pos_, p.size());
        pos_ += p.size();
        return;
      }
    }
    throw ExprError(t.column, "unexpected " + describe_char(src_[pos_]));
  }

  [[noreturn]] static void fail(const Token& t, std::string detail) {
    throw ExprError(t.column, std::move(detail));
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  bool bad_underscore_ = false;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace tileops::expr::detail
