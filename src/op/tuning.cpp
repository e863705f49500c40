#include "tileops/op/tuning.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "tileops/core/error.hpp"

namespace tileops {
namespace {

constexpr std::string_view kVersionLine = "tileops-tuning 1";

bool recordable(std::string_view field) {
  return !field.empty() && field.find_first_of("\t\n\r") == std::string_view::npos;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(
        line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

}  // namespace

std::optional<std::string> TuningStore::find(std::string_view implementation_key,
                                             std::string_view call_spec,
                                             std::string_view device_arch) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = choices_.find(
      Key{std::string(implementation_key), std::string(device_arch), std::string(call_spec)});
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

void TuningStore::record(std::string_view implementation_key, std::string_view call_spec,
                         std::string_view device_arch, std::string_view choice) {
  for (std::string_view field : {implementation_key, call_spec, device_arch, choice})
    if (!recordable(field))
      throw CheckError(fmt::format(
          "tuning store: cannot record '{}': a field is empty or holds a tab or a newline", field));
  const std::lock_guard<std::mutex> lock(mutex_);
  choices_[Key{std::string(implementation_key), std::string(device_arch), std::string(call_spec)}] =
      std::string(choice);
  if (!file_.empty()) save_locked(file_);
}

void TuningStore::save(const std::string& path) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  save_locked(path);
}

void TuningStore::save_locked(const std::string& path) const {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << kVersionLine << "\n";
    out << "# implementation key, device arch, call spec, choice; tab-separated\n";
    for (const auto& [key, choice] : choices_)
      out << std::get<0>(key) << '\t' << std::get<1>(key) << '\t' << std::get<2>(key) << '\t'
          << choice << '\n';
    if (!out.flush())
      throw TuningFileError(fmt::format("tuning file {}: cannot write {}", path, temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw TuningFileError(fmt::format("tuning file {}: cannot rename {} over it", path, temporary));
}

void TuningStore::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TuningFileError(fmt::format("tuning file {}: cannot be read", path));
  std::map<Key, std::string> loaded;
  bool versioned = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!versioned) {
      if (line != kVersionLine)
        throw TuningFileError(fmt::format("{}:{}: expected the version line '{}', got '{}'", path,
                                          number, kVersionLine, line));
      versioned = true;
      continue;
    }
    const std::vector<std::string> f = split_tabs(line);
    if (f.size() != 4 || f[0].empty() || f[1].empty() || f[2].empty() || f[3].empty())
      throw TuningFileError(fmt::format(
          "{}:{}: expected four non-empty tab-separated fields (implementation key, device arch, "
          "call spec, choice), got {}",
          path, number, f.size()));
    loaded[Key{f[0], f[1], f[2]}] = f[3];
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, choice] : loaded) choices_[key] = std::move(choice);
}

void TuningStore::set_file(std::string path) {
  const std::lock_guard<std::mutex> lock(mutex_);
  file_ = std::move(path);
}

std::size_t TuningStore::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return choices_.size();
}

void TuningStore::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  choices_.clear();
}

TuningStore& tuning_store() {
  // Initialised once; a malformed file throws out of the initialiser, and the next use tries again.
  static TuningStore& store = []() -> TuningStore& {
    static TuningStore s;
    const char* path = std::getenv("TILEOPS_TUNING_FILE");
    if (path != nullptr && *path != '\0') {
      if (std::ifstream(path)) s.load(path);
      s.set_file(path);
    }
    return s;
  }();
  return store;
}

}  // namespace tileops
