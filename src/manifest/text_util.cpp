#include "manifest/text_util.hpp"

#include <algorithm>

namespace tileops::manifest::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

// Advances `i` past a run of digits; false when there is none.
bool digits(std::string_view s, std::size_t& i) {
  std::size_t start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  return i > start;
}

void skip_sign(std::string_view s, std::size_t& i) {
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
}

}  // namespace

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

// See Note [No std::regex in the loader]: each matcher is one pass over the text.

bool is_op_class_name(std::string_view s) {
  return s.size() >= 3 && is_upper(s[0]) && s.ends_with("Op") &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return is_upper(c) || is_lower(c) || is_digit(c); });
}

bool is_snake_case(std::string_view s) {
  return !s.empty() && is_lower(s[0]) && std::all_of(s.begin(), s.end(), [](char c) {
    return is_lower(c) || is_digit(c) || c == '_';
  });
}

bool is_decimal_int(std::string_view s) {
  std::size_t i = 0;
  skip_sign(s, i);
  return digits(s, i) && i == s.size();
}

bool is_decimal_float(std::string_view s) {
  std::size_t i = 0;
  skip_sign(s, i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits(s, i)) return false;
  } else {
    if (!digits(s, i)) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits(s, i);
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    skip_sign(s, i);
    if (!digits(s, i)) return false;
  }
  return i == s.size();
}

}  // namespace tileops::manifest::detail
