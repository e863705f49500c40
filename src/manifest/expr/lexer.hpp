// Tokens of the expression language. The lexer recognises every Python operator spelling so that
// the parser can name a forbidden construct ("'**' is not supported") instead of failing on a
// stray character.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tileops::expr::detail {

enum class Tok : std::uint8_t {
  kEnd,
  kInt,    // int_value
  kFloat,  // float_value
  kStr,    // str_value (escapes resolved)
  kName,   // text; keywords are names too, the parser tells them apart
  kOp,     // text: one of the punctuators below
};

struct Token {
  Tok kind = Tok::kEnd;
  int column = 0;         // 1-based
  std::string_view text;  // the token as written
  std::int64_t int_value = 0;
  double float_value = 0;
  std::string str_value;
};

// Splits `source` into tokens, ending with one kEnd token. Throws ExprError on a malformed literal
// or a character outside the language.
std::vector<Token> tokenize(std::string_view source);

}  // namespace tileops::expr::detail
