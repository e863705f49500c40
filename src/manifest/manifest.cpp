#include "tileops/manifest/manifest.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include "manifest/entry_reader.hpp"
#include "manifest/text_util.hpp"
#include "manifest/yaml_scalar.hpp"
#include "tileops/core/error.hpp"
#include "tileops/manifest/embedded.hpp"

namespace tileops::manifest {
namespace {

std::string file_stem(std::string_view file_name) {
  std::string_view base = file_name.substr(file_name.find_last_of('/') + 1);
  return std::string(base.substr(0, base.find('.')));
}

[[noreturn]] void throw_diagnostics(const std::vector<std::string>& diags) {
  std::string msg;
  for (const auto& d : diags) msg += (msg.empty() ? "" : "\n") + d;
  throw ManifestError(msg);
}

// "<file>:<line>:<column>" of the entry's key, or the file alone for an entry built in code.
std::string where(const Entry& e) {
  const Origin& o = e.origins.name;
  return o.line == 0 ? e.file : fmt::format("{}:{}:{}", e.file, o.line, o.column);
}

}  // namespace

std::string Origin::str() const {
  return fmt::format("{}:{}:{}: {}: {}", file, line, column, entry, field);
}

const IndexDecl* Entry::find_index(std::string_view n) const noexcept {
  for (const auto& i : forall)
    if (i.name == n) return &i;
  return nullptr;
}
const ParamDecl* Entry::find_param(std::string_view n) const noexcept {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}
const TensorDecl* Entry::find_input(std::string_view n) const noexcept {
  for (const auto& t : inputs)
    if (t.name == n) return &t;
  return nullptr;
}
const TensorDecl* Entry::find_output(std::string_view n) const noexcept {
  for (const auto& t : outputs)
    if (t.name == n) return &t;
  return nullptr;
}

// Note [YAML exceptions]
//   yaml-cpp throws while it parses: a syntax error, or nesting past its depth bound (which keeps
//   its recursive parser, and ours over the tree, off the end of the stack). Either becomes the
//   file's one diagnostic, with line and column, and nothing is read. Reading the tree throws
//   nothing: the reader tests a node's kind before it reads it (Scalar(), operator[] on a map
//   only), so no accessor raises BadSubscript, InvalidNode or BadConversion. The manifest fuzzer
//   holds the loader to both: any exception leaving Manifest::parse is a finding.
Manifest Manifest::parse(std::string_view file_name, std::string_view text,
                         std::vector<std::string>& diagnostics) {
  Manifest m;
  std::string file(file_name.substr(file_name.find_last_of('/') + 1));
  YAML::Node root;
  try {
    std::string source(text);
    if (std::optional<YAML::Mark> at = detail::first_anchor_or_alias(source)) {
      diagnostics.push_back(
          fmt::format("{}:{}:{}: YAML anchors and aliases are not supported: write the value out",
                      file, at->line + 1, at->column + 1));
      return m;
    }
    root = YAML::Load(source);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for its depth bound is "bad file".
    diagnostics.push_back(fmt::format("{}:{}:{}: YAML syntax: nested too deeply", file,
                                      e.mark.line + 1, e.mark.column + 1));
    return m;
  } catch (const YAML::Exception& e) {
    diagnostics.push_back(
        fmt::format("{}:{}:{}: YAML syntax: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
    return m;
  }
  if (!root.IsMap() || root.size() == 0) {
    diagnostics.push_back(
        fmt::format("{}:1:1: a manifest file is a non-empty mapping of op names to entries", file));
    return m;
  }
  for (const auto& [key, mark] : detail::duplicate_keys(root))
    diagnostics.push_back(
        fmt::format("{}:{}:{}: {}: duplicate entry", file, mark.line + 1, mark.column + 1, key));
  std::string stem = file_stem(file);
  for (const auto& kv : root) {
    std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    YAML::Mark mark = kv.first.Mark();
    if (!detail::is_op_class_name(name)) {
      diagnostics.push_back(
          fmt::format("{}:{}:{}: '{}' is not an op class name ({{PascalCase}}[Fwd|Bwd]Op)", file,
                      mark.line + 1, mark.column + 1, name));
      continue;
    }
    if (m.find(name)) continue;  // reported as a duplicate above
    detail::EntryReader reader(file, name, diagnostics);
    Entry e = reader.read(kv.second);
    e.origins.name = Origin{file, name, "", mark.line + 1, mark.column + 1};
    if (!e.family.empty() && stem != e.family && stem.rfind(e.family + "_", 0) != 0) {
      const Origin& at = e.origins.family;
      diagnostics.push_back(
          fmt::format("{}:{}:{}: {}: family: '{}' does not match the file name {}", file, at.line,
                      at.column, name, e.family, file));
    }
    m.entries_.push_back(std::make_shared<const Entry>(std::move(e)));
  }
  return m;
}

Manifest Manifest::load_string(std::string_view file_name, std::string_view text) {
  std::vector<std::string> diags;
  Manifest m = parse(file_name, text, diags);
  if (!diags.empty()) throw_diagnostics(diags);
  return m;
}

Manifest Manifest::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ManifestError(fmt::format("{}: cannot read the file", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return load_string(path, buffer.str());
}

void Manifest::merge(const Manifest& other, std::vector<std::string>& diagnostics) {
  for (const auto& e : other.entries_) {
    if (const Entry* mine = find(e->name)) {
      diagnostics.push_back(
          fmt::format("{}: {}: the op is also declared in {}", where(*e), e->name, where(*mine)));
      continue;
    }
    entries_.push_back(e);
  }
}

void Manifest::merge(const Manifest& other) {
  std::vector<std::string> diags;
  merge(other, diags);
  if (!diags.empty()) throw_diagnostics(diags);
}

const Entry* Manifest::find(std::string_view op) const noexcept {
  for (const auto& e : entries_)
    if (e->name == op) return e.get();
  return nullptr;
}

const Entry& Manifest::at(std::string_view op) const {
  if (const Entry* e = find(op)) return *e;
  throw ManifestError(fmt::format("{}: no manifest entry", op));
}

const Manifest& Manifest::builtin() {
  // Note [Embedded manifest]: the family files are compiled into the library, so an installed
  // library needs no data file. A broken embedded file is a build defect that the tests catch;
  // here it throws on every call, never half-loads.
  static const Manifest* instance = [] {
    auto* m = new Manifest();
    std::vector<std::string> diags;
    for (const auto& f : tileops::detail::embedded_manifest_files()) {
      Manifest part = parse(f.name, f.content, diags);
      m->merge(part, diags);
    }
    if (!diags.empty()) throw_diagnostics(diags);
    return m;
  }();
  return *instance;
}

}  // namespace tileops::manifest
