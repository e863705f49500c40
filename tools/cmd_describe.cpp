// `tileops describe`: an op's reference page, rendered from the manifest (and the registered
// class's implementation table). The same Markdown is printed and written by --write-docs, except
// for what depends on the build (Note [Pages every build agrees on]).
//
// Note [Pages every build agrees on]
//   The pages under docs/ops are committed, and a test (Cli.CommittedOpPagesAreCurrent) holds them
//   to what `describe --all --write-docs` writes, in every build that runs the tests. An op's
//   kernel interfaces and implementations are not the same in every build: kernels/<family>/
//   impls.cpp adds its CUDA rows only under TILEOPS_WITH_CUDA, and an interface exists only where
//   one of its rows does. So a written page carries what the manifest and the op class's
//   declaration decide (signature, roofline, effect branches, tolerances, composite stages,
//   workloads) and points to the live table; printing without --write-docs adds this build's
//   interfaces and implementations. One committed page is then true of the CPU and the CUDA
//   build alike, and the test can run in both.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "references.hpp"
#include "tileops/core/error.hpp"
#include "tileops/manifest/signature_plan.hpp"
#include "tileops/op/registry.hpp"

namespace tileops::cli {
namespace {

using manifest::Entry;

std::string code(const std::string& s) { return s.empty() ? std::string() : "`" + s + "`"; }

// Markdown table cells may not hold '|'.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string index_kind(const manifest::IndexDecl& i) {
  switch (i.kind) {
    case manifest::IndexKind::kDim:
      return "Dim";
    case manifest::IndexKind::kShape:
      return "Shape";
    case manifest::IndexKind::kSeqInt:
      return "Seq[Int]";
    case manifest::IndexKind::kDType: {
      std::vector<std::string> names;
      for (DType d : i.dtypes) names.emplace_back(dtype_name(d));
      return fmt::format("DType[{}]", fmt::join(names, " | "));
    }
  }
  return "?";
}

std::string tensor_flags(const manifest::TensorDecl& t) {
  std::vector<std::string> flags;
  if (t.optional) flags.emplace_back("optional");
  if (t.mutated) flags.emplace_back(t.write_only ? "written (write-only)" : "mutated");
  if (t.mutated_when) flags.push_back("mutated when `" + t.mutated_when->source + "`");
  if (t.buffer_out) flags.emplace_back("`out=` buffer");
  if (!t.alias.empty()) flags.push_back("aliases `" + t.alias + "` when written");
  if (t.cpu_only) flags.emplace_back("device: cpu");
  if (t.contiguous) flags.emplace_back("contiguous");
  return fmt::format("{}", fmt::join(flags, ", "));
}

// The paragraph of docs/manifest.md §4 that describes `op`: the bullet or paragraph whose bold
// name list (`**A / B**`) contains it, with its continuation lines.
std::string semantics_from(const std::string& path, const std::string& op) {
  std::ifstream in(path);
  if (!in) return {};
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    std::size_t open = l.find("**");
    if (open == std::string::npos) continue;
    std::size_t close = l.find("**", open + 2);
    if (close == std::string::npos) continue;
    std::string names = l.substr(open + 2, close - open - 2);
    bool match = false;
    std::stringstream ss(names);
    for (std::string part; std::getline(ss, part, '/');) {
      part.erase(0, part.find_first_not_of(' '));
      part.erase(part.find_last_not_of(' ') + 1);
      match = match || part == op;
    }
    const bool starts_item = l.rfind("- **", 0) == 0 || l.rfind("**", 0) == 0;
    if (!match || !starts_item) continue;
    std::string text = l.rfind("- ", 0) == 0 ? l.substr(2) : l;
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      const std::string& n = lines[j];
      if (n.empty() || n.rfind("- ", 0) == 0 || n.rfind("#", 0) == 0) break;
      std::size_t first = n.find_first_not_of(' ');
      text += "\n" + (first == std::string::npos ? std::string() : n.substr(first));
    }
    return text;
  }
  return {};
}

std::string presence_text(const Entry& e, std::uint32_t presence) {
  std::vector<std::string> parts;
  int bit = 0;
  for (const auto& t : e.inputs)
    if (t.optional) parts.push_back(((presence >> bit++) & 1u) ? t.name : "no " + t.name);
  parts.emplace_back(((presence >> bit) & 1u) ? "out=" : "no out=");
  return fmt::format("{}", fmt::join(parts, ", "));
}

void effect_branches(std::ostream& os, const manifest::SignaturePlan& plan) {
  const Entry& e = plan.entry();
  os << "## Effect branches\n\n";
  if (e.composition) {
    os << "A composite op gets no compile-boundary operator; its stages' ops do "
          "(docs/manifest.md §7).\n\n";
    return;
  }
  if (e.workloads.empty()) return;
  manifest::ConstructionState state;
  try {
    state = plan.construct(e.workloads.front().params);
  } catch (const Error& err) {
    os << "The first workload's params do not construct: " << err.what() << "\n\n";
    return;
  }
  int optional = 0;
  for (const auto& t : e.inputs) optional += t.optional ? 1 : 0;
  os << fmt::format("Constructed with the params of workload `{}`.\n\n", e.workloads.front().label);
  os << "| call | writes | emits | operator |\n| --- | --- | --- | --- |\n";
  for (std::uint32_t p = 0; p < (1u << (optional + 1)); ++p) {
    manifest::EffectBranch b = plan.effect_branch(state, p);
    os << fmt::format("| {} | {} | {} | `{}` |\n", presence_text(e, p),
                      b.written.empty() ? "-" : fmt::format("{}", fmt::join(b.written, ", ")),
                      fmt::join(b.emitted, ", "), b.operator_name);
  }
  os << "\n";
}

// `this_build`: the interfaces and the implementation rows of this build (Note [Pages every build
// agrees on]); otherwise a pointer to them.
void implementations(std::ostream& os, const std::string& op, bool this_build) {
  os << "## Implementations\n\n";
  const RegisteredOp* reg = find_op_class(op);
  if (!reg) {
    os << "No op class is registered for this entry (spec only).\n\n";
    return;
  }
  const OpClass& cls = *reg->cls;
  if (cls.is_composite()) {
    os << "Composite; stages in order:\n\n";
    for (const StageDecl& s : cls.stages()) os << fmt::format("- `{}`: {}\n", s.name, s.op_name);
    os << "\n";
  }
  if (!this_build) {
    os << fmt::format(
        "The kernel interfaces and implementations depend on the build (`kernels/<family>/"
        "impls.cpp` adds its CUDA rows to a CUDA build only): `tileops describe {}` prints this "
        "build's, and `tileops list` every op's keys.\n\n",
        op);
    return;
  }
  if (!cls.interfaces().empty()) {
    std::vector<std::string> names;
    for (const auto& i : cls.interfaces()) names.push_back("`" + i.name + "`");
    os << fmt::format("Kernel interfaces: {}.\n\n", fmt::join(names, ", "));
  }
  if (cls.kernel_types().empty()) return;
  os << "| key | class | devices | archs | general | preferred over |\n| --- | --- | --- | --- | "
        "--- | --- |\n";
  for (const KernelType& t : cls.kernel_types()) {
    std::vector<std::string> devices;
    for (DeviceType d : t.devices) devices.emplace_back(device_type_name(d));
    os << fmt::format(
        "| `{}` | {} | {} | {} | {} | {} |\n", t.key, t.class_name, fmt::join(devices, ", "),
        t.supported_archs ? fmt::format("{}", fmt::join(*t.supported_archs, ", ")) : "any",
        t.general ? "yes" : "no",
        t.preferred_over.empty() ? "-" : fmt::format("{}", fmt::join(t.preferred_over, ", ")));
  }
  os << "\n";
}

void workloads(std::ostream& os, const Entry& e) {
  os << "## Workloads\n\n| label | indices and params | optional inputs passed | dtype cases |\n"
        "| --- | --- | --- | --- |\n";
  for (const auto& w : e.workloads) {
    std::vector<std::string> given;
    for (const auto& [name, v] : w.indices) given.push_back(name + "=" + v.repr());
    for (const auto& [name, v] : w.params) given.push_back(name + "=" + v.repr());
    std::vector<std::string> cases;
    for (const auto& c : w.dtype_cases) {
      std::vector<std::string> a;
      for (const auto& [name, d] : c) a.push_back(name + "=" + std::string(dtype_name(d)));
      cases.push_back(fmt::format("{}", fmt::join(a, " ")));
    }
    os << fmt::format("| `{}` | {} | {} | {} |\n", w.label,
                      cell(fmt::format("{}", fmt::join(given, ", "))),
                      w.some.empty() ? "-" : fmt::format("{}", fmt::join(w.some, ", ")),
                      cases.empty() ? "-" : fmt::format("{}", fmt::join(cases, "; ")));
  }
  os << "\n";
}

std::string render(const std::shared_ptr<const Entry>& entry, const DescribeOptions& options) {
  const Entry& e = *entry;
  std::ostringstream os;
  os << "# " << e.name << "\n\n";
  os << fmt::format("Family `{}`, status `{}`{}, declared in `manifest/{}`.\n\n", e.family,
                    e.status, e.ref_api.empty() ? "" : ", reference API `" + e.ref_api + "`",
                    e.file);
  os << "<!-- Generated by `tileops describe " << e.name
     << " --write-docs` from the manifest; edit the manifest, not this page. -->\n\n";

  os << "## Semantics\n\n";
  std::string semantics = semantics_from(options.semantics_file, e.name);
  if (!semantics.empty())
    os << semantics << "\n\n";
  else
    os << "See `manifest/" << e.file << "` (the entry's comments) and docs/manifest.md.\n\n";

  os << "## Signature\n\n";
  if (!e.forall.empty()) {
    os << "| index | kind |\n| --- | --- |\n";
    for (const auto& i : e.forall)
      os << fmt::format("| `{}` | {} |\n", i.name, cell(index_kind(i)));
    os << "\n";
  }
  if (!e.params.empty()) {
    os << "| param | type | default | keyword-only |\n| --- | --- | --- | --- |\n";
    for (const auto& p : e.params) {
      std::string type =
          p.tensor ? fmt::format("tensor {} {}", p.tensor->dtype.source, p.tensor->shape.source)
                   : p.type.text;
      os << fmt::format("| `{}` | {} | {} | {} |\n", p.name, cell(code(type)),
                        p.default_value ? cell(code(p.default_value->repr())) : "required",
                        p.kw_only ? "yes" : "no");
    }
    os << "\n";
  }
  auto tensors = [&](const char* what, const std::vector<manifest::TensorDecl>& decls) {
    if (decls.empty()) return;
    os << fmt::format("| {} | dtype | shape | effects |\n| --- | --- | --- | --- |\n", what);
    for (const auto& t : decls)
      os << fmt::format("| `{}` | `{}` | `{}` | {} |\n", t.name, cell(t.dtype.source),
                        cell(t.shape.source), cell(tensor_flags(t)));
    os << "\n";
  };
  tensors("input", e.inputs);
  tensors("output", e.outputs);
  if (!e.lets.empty()) {
    os << "Derived values:\n\n";
    for (const auto& l : e.lets) os << fmt::format("- `{} = {}`\n", l.name, l.expr.source);
    os << "\n";
  }
  os << "Shape rules:" << (e.shape_rules.empty() ? " none.\n\n" : "\n\n");
  for (std::size_t i = 0; i < e.shape_rules.size(); ++i)
    os << fmt::format("- `shape_rules[{}]`: `{}`\n", i, e.shape_rules[i].source);
  if (!e.shape_rules.empty()) os << "\n";
  if (!e.dtype_combos.empty()) {
    os << "Legal dtype combinations:\n\n";
    for (const auto& combo : e.dtype_combos) {
      std::vector<std::string> a;
      for (const auto& [name, d] : combo) a.push_back(name + "=" + std::string(dtype_name(d)));
      os << fmt::format("- {}\n", fmt::join(a, ", "));
    }
    os << "\n";
  }

  os << "## Roofline\n\n";
  os << fmt::format("- FLOPs: `{}`\n", e.roofline.flops.source);
  os << (e.roofline.bytes
             ? fmt::format("- bytes: `{}`\n\n", e.roofline.bytes->source)
             : std::string("- bytes: derived from the effects (each input read once, each output "
                           "written once, a mutated input read and written)\n\n"));

  effect_branches(os, *plan_of(entry));

  os << "## Tolerances\n\n"
     << "`tileops run` and the CPU numerics tests compare with a float64 reference on the same "
        "(dtype-rounded) inputs and allow `|got - want| <= rtol * scale + atol`, where `scale` is "
        "`|want|` (or the magnitude of the terms where the exact result cancels, as in a sum):\n\n"
     << "| dtype | rtol | atol |\n| --- | --- | --- |\n";
  std::vector<DType> dtypes;
  for (const auto& i : e.forall)
    for (DType d : i.dtypes)
      if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
  for (const auto& p : e.params)
    if (p.type.kind == manifest::ParamKind::kDType)
      for (DType d : p.type.dtypes)
        if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
  auto rtol_text = [](DType d) -> std::string {
    if (d == DType::kFloat16) return "2^-10";
    if (d == DType::kBFloat16) return "2^-7";
    if (!is_floating(d)) return "0 (exact)";
    return fmt::format("{:g}", references::tolerance(d).rtol);
  };
  for (DType d : dtypes)
    os << fmt::format("| {} | {} | {:g} |\n", dtype_name(d), rtol_text(d),
                      references::tolerance(d).atol);
  os << "\n";

  implementations(os, e.name, !options.write_docs);
  workloads(os, e);
  std::string page = os.str();
  while (page.size() > 1 && page[page.size() - 2] == '\n') page.pop_back();
  return page;
}

}  // namespace

int run_describe(const DescribeOptions& options) {
  register_builtin_ops();
  std::vector<std::shared_ptr<const Entry>> entries;
  if (options.all)
    entries = manifest::Manifest::builtin().entries();
  else
    for (const auto& op : options.ops) entries.push_back(entry_of(op));
  if (entries.empty()) throw CheckError("describe: name an op, or pass --all");
  if (options.write_docs) std::filesystem::create_directories(options.docs_dir);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string page = render(entries[i], options);
    if (!options.write_docs) {
      fmt::print("{}{}", i ? "\n" : "", page);
      continue;
    }
    const std::filesystem::path path =
        std::filesystem::path(options.docs_dir) / (entries[i]->name + ".md");
    std::ofstream out(path);
    out << page;
    if (!out) throw Error(fmt::format("describe: cannot write {}", path.string()));
    fmt::print("wrote {}\n", path.string());
  }
  return 0;
}

}  // namespace tileops::cli
