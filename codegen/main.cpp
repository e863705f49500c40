// tileops_opgen: derives the typed op classes from the manifest at build time, as torchgen does
// from native_functions.yaml. For every family file it writes
//   <include-dir>/tileops/ops/<family>.hpp   the op classes of the family's implemented entries
//   <source-dir>/ops/<family>_ops.cpp        their constructors, call operators, op_class() and
//                                            registration
// and, over all files, <include-dir>/tileops/ops.hpp and <source-dir>/ops/registration.cpp.
// Hand-written per op: forward() and kernel_calls() in src/ops/<family>/ (docs/adding-an-op.md).
//
// Usage: tileops_opgen --include-dir DIR --source-dir DIR [--manifest-function NAME]
//                      [--label-prefix PREFIX] FAMILY.yaml...
// An entry the generator cannot turn into a class fails the build with a message naming the
// file, the entry and the field; nothing is skipped silently.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "class_model.hpp"
#include "emit.hpp"
#include "tileops/core/error.hpp"

namespace fs = std::filesystem;
using namespace tileops;

namespace {

// Writes `text` to `path` unless the file already holds it, so an unchanged family recompiles
// nothing.
void write_if_changed(const fs::path& path, const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream old;
      old << in.rdbuf();
      if (old.str() == text) return;
    }
  }
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw Error(fmt::format("tileops_opgen: cannot write {}", path.string()));
}

struct Options {
  fs::path include_dir;
  fs::path source_dir;
  std::string manifest_function;
  std::string label_prefix = "manifest/";
  std::vector<std::string> files;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(fmt::format("tileops_opgen: {} needs a value", a));
      return argv[++i];
    };
    if (a == "--include-dir")
      o.include_dir = value();
    else if (a == "--source-dir")
      o.source_dir = value();
    else if (a == "--manifest-function")
      o.manifest_function = value();
    else if (a == "--label-prefix")
      o.label_prefix = value();
    else if (a.rfind("--", 0) == 0)
      throw Error(fmt::format("tileops_opgen: unknown option {}", a));
    else
      o.files.push_back(a);
  }
  if (o.include_dir.empty() || o.source_dir.empty() || o.files.empty())
    throw Error(
        "usage: tileops_opgen --include-dir DIR --source-dir DIR [--manifest-function NAME] "
        "[--label-prefix PREFIX] FAMILY.yaml...");
  return o;
}

int run(const Options& o) {
  manifest::Manifest all;
  std::vector<std::pair<std::string, manifest::Manifest>> files;
  for (const std::string& path : o.files) {
    manifest::Manifest m = manifest::Manifest::load_file(path);
    all.merge(m);
    files.emplace_back(path, std::move(m));
  }
  std::vector<std::string> families;
  for (const auto& [path, m] : files) {
    codegen::FamilySources f;
    f.family = fs::path(path).stem().string();
    f.manifest_file = o.label_prefix + fs::path(path).filename().string();
    f.manifest_function = o.manifest_function;
    for (const auto& entry : m.entries()) {
      if (entry->status != "implemented") continue;
      codegen::ClassModel c = codegen::class_model(*entry, all);
      for (const codegen::StageModel& st : c.stages) {
        const std::string& family = all.at(st.op).family;
        if (std::find(f.stage_families.begin(), f.stage_families.end(), family) ==
            f.stage_families.end())
          f.stage_families.push_back(family);
      }
      f.classes.push_back(std::move(c));
    }
    write_if_changed(o.include_dir / "tileops" / "ops" / (f.family + ".hpp"),
                     codegen::family_header(f));
    write_if_changed(o.source_dir / "ops" / (f.family + "_ops.cpp"), codegen::family_source(f));
    families.push_back(f.family);
  }
  write_if_changed(o.include_dir / "tileops" / "ops.hpp", codegen::umbrella_header(families));
  write_if_changed(o.source_dir / "ops" / "registration.cpp",
                   codegen::registration_source(families));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_options(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
