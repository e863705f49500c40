// EntryReader: turns one YAML entry into a manifest::Entry, strictly. Every problem becomes a
// diagnostic "<file>:<line>:<column>: <entry>: <field>: <what>"; reading goes on past a bad field
// so that one run reports everything.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "tileops/manifest/model.hpp"

namespace tileops::manifest::detail {

class EntryReader {
 public:
  EntryReader(std::string file, std::string entry, std::vector<std::string>& diagnostics)
      : file_(std::move(file)), entry_(std::move(entry)), diags_(diagnostics) {}

  Entry read(const YAML::Node& node);

 private:
  void error(const YAML::Node& at, const std::string& field, const std::string& what);
  void error_at(const YAML::Mark& mark, const std::string& field, const std::string& what);
  Origin origin(const YAML::Node& at, const std::string& field) const;
  // Where `key` itself stands in the mapping `map` (a section's opening key); 0:0 when absent.
  Origin key_origin(const YAML::Node& map, const char* key, const std::string& field) const;

  // Checks `node` is a mapping with only `allowed` keys and no duplicates.
  bool expect_map(const YAML::Node& node, const std::string& field,
                  std::initializer_list<const char*> allowed);
  bool expect_map_any_keys(const YAML::Node& node, const std::string& field);
  std::optional<std::string> read_string(const YAML::Node& node, const std::string& field);
  std::optional<bool> read_bool(const YAML::Node& node, const std::string& field);
  std::optional<Expr> read_expr(const YAML::Node& node, const std::string& field);
  std::optional<ShapeDecl> read_shape(const YAML::Node& node, const std::string& field);

  void read_signature(const YAML::Node& node, Entry& e);
  void read_forall(const YAML::Node& node, Entry& e);
  void read_params(const YAML::Node& node, Entry& e);
  // An input's `values` hint, checked against the entry's forall and the input's dtype.
  void read_values_hint(const YAML::Node& node, const std::string& field, const Entry& e,
                        TensorDecl& t);
  std::optional<TensorDecl> read_tensor(const std::string& name, const YAML::Node& node,
                                        const std::string& field, bool is_output, bool is_param);
  void read_dtype_combos(const YAML::Node& node, Entry& e);
  std::vector<std::pair<std::string, DType>> read_dtype_row(const YAML::Node& node,
                                                            const std::string& field);
  void read_workloads(const YAML::Node& node, Entry& e);
  void read_roofline(const YAML::Node& node, Entry& e);
  void read_composition(const YAML::Node& node, Entry& e);

  std::string file_;
  std::string entry_;
  std::vector<std::string>& diags_;
};

}  // namespace tileops::manifest::detail
