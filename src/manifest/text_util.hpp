// Small text helpers for the manifest loader: splitting at top-level separators (outside
// brackets and quotes), trimming, and whole-string matchers for names and YAML scalars.
//
// Note [No std::regex in the loader]
//   libstdc++'s std::regex matcher recurses once per input character, so a long enough word in
//   a manifest file (a key or a scalar of some 100,000 characters; fewer under ASan) overflowed
//   the stack. The loader reads untrusted files, so its patterns are written out as loops.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tileops::manifest::detail {

std::string trim(std::string_view s);
bool is_quoted(std::string_view s);
// "an int", "a float", "a 'neox' | 'gptj'": a type's text after its indefinite article.
std::string with_article(std::string_view type_text);

// Splits at `sep` outside (), [] and quotes. Each piece keeps its offset into `s`.
struct Piece {
  std::string text;
  int offset = 0;
};
std::vector<Piece> split_pieces(std::string_view s, char sep);
std::vector<std::string> split_top_level(std::string_view s, char sep);

// [A-Z][A-Za-z0-9]*Op: an op class name.
bool is_op_class_name(std::string_view s);
// [a-z][a-z0-9_]*: a family name.
bool is_snake_case(std::string_view s);
// [-+]?[0-9]+: a YAML core-schema integer (decimal only).
bool is_decimal_int(std::string_view s);
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?: a YAML core-schema decimal float.
bool is_decimal_float(std::string_view s);

}  // namespace tileops::manifest::detail
