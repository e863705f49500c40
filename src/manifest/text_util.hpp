// Small text helpers for the manifest loader: splitting at top-level separators (outside
// brackets and quotes), trimming.
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

}  // namespace tileops::manifest::detail
