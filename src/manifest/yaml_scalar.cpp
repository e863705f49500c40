#include "manifest/yaml_scalar.hpp"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

#include "manifest/text_util.hpp"

namespace tileops::manifest::detail {
namespace {

bool is_null_text(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// Records where the first anchored node or alias stands, in document order.
class AnchorFinder : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> found;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { note(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { note(mark, 1); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    note(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    note(mark, anchor);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    note(mark, anchor);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor && !found) found = mark;
  }
};

}  // namespace

Value resolve_scalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return Value(s);  // quoted
  if (is_null_text(s)) return Value();
  if (s == "true" || s == "True" || s == "TRUE") return Value(true);
  if (s == "false" || s == "False" || s == "FALSE") return Value(false);
  if (is_decimal_int(s)) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE) return Value(s);
    return Value(static_cast<std::int64_t>(v));
  }
  if (is_decimal_float(s)) {
    return Value(std::strtod(s.c_str(), nullptr));
  }
  std::string_view unsigned_text = s;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) unsigned_text.remove_prefix(1);
  if (unsigned_text == ".inf" || unsigned_text == ".Inf" || unsigned_text == ".INF") {
    return Value(s[0] == '-' ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::infinity());
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN")
    return Value(std::numeric_limits<double>::quiet_NaN());
  return Value(s);
}

Value node_to_value(const YAML::Node& node) {
  if (node.IsScalar()) return resolve_scalar(node);
  if (node.IsNull()) return Value();
  if (!node.IsSequence()) return Value(std::string("<mapping>"));
  std::vector<Value> items;
  bool all_int = true, all_number = true;
  for (const auto& child : node) {
    items.push_back(node_to_value(child));
    all_int = all_int && items.back().is_int();
    all_number = all_number && items.back().is_number();
  }
  if (all_int) {
    Shape ints;
    for (const Value& v : items) ints.push_back(v.as_int());
    return Value(std::move(ints));
  }
  if (all_number) {
    std::vector<double> floats;
    for (const Value& v : items) floats.push_back(v.as_float());
    return Value(std::move(floats));
  }
  return Value(ValueTuple(std::move(items)));
}

std::optional<YAML::Mark> first_anchor_or_alias(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  AnchorFinder finder;
  parser.HandleNextDocument(finder);  // only the first document, which is all YAML::Load reads
  return finder.found;
}

std::vector<std::pair<std::string, YAML::Mark>> duplicate_keys(const YAML::Node& map) {
  std::vector<std::pair<std::string, YAML::Mark>> dups;
  std::set<std::string> seen;
  for (const auto& kv : map) {
    std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("<non-scalar key>");
    if (!seen.insert(key).second) dups.emplace_back(key, kv.first.Mark());
  }
  return dups;
}

}  // namespace tileops::manifest::detail
