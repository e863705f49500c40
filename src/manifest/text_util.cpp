#include "manifest/text_util.hpp"

namespace tileops::manifest::detail {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n')) --e;
  return std::string(s.substr(b, e - b));
}

bool is_quoted(std::string_view s) {
  return s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front();
}

std::string with_article(std::string_view type_text) {
  std::size_t first = type_text.find_first_not_of("'\" ");
  bool vowel = first != std::string_view::npos &&
               std::string_view("aeiouAEIOU").find(type_text[first]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(type_text);
}

std::vector<Piece> split_pieces(std::string_view s, char sep) {
  std::vector<Piece> out;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"')
      quote = c;
    else if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    else if (c == sep && depth == 0) {
      out.push_back({std::string(s.substr(start, i - start)), static_cast<int>(start)});
      start = i + 1;
    }
  }
  out.push_back({std::string(s.substr(start)), static_cast<int>(start)});
  return out;
}

std::vector<std::string> split_top_level(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (Piece& p : split_pieces(s, sep)) out.push_back(std::move(p.text));
  return out;
}

}  // namespace tileops::manifest::detail
