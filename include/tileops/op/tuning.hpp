// The tuning store: what a kernel entry chose by timing its candidates, kept per (implementation
// key, call spec, device architecture) so that the next entry built for the same call, in this
// process or a later one, starts tuned (docs/framework.md, Tuning). Framework-level and free of
// any device API: a kernel states its choice as a string it alone can read back.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace tileops {

// Note [Tuning file format]
// A text file, one choice a line, readable and diffable:
//
//   tileops-tuning 1
//   # comment lines and blank lines are skipped
//   <implementation key>\t<device arch>\t<call spec>\t<choice>
//
// Fields are tab-separated because call specs (CallSpec::str()) hold spaces and commas but never a
// tab; a field that holds a tab or a newline cannot be recorded. The first non-comment line is the
// version line; a file of another version, a line without four fields or a key without a value
// raises TuningFileError naming the file and the line.
class TuningStore {
 public:
  std::optional<std::string> find(std::string_view implementation_key, std::string_view call_spec,
                                  std::string_view device_arch) const;
  // Keeps `choice`, replacing an earlier one of the same key; then, when the store has a file
  // (set_file), rewrites it (a temporary file renamed over it, so a reader never sees half).
  void record(std::string_view implementation_key, std::string_view call_spec,
              std::string_view device_arch, std::string_view choice);

  // Writes every choice to `path` atomically; TuningFileError when it cannot.
  void save(const std::string& path) const;
  // Adds the choices of `path` (replacing those of the same key); TuningFileError when the file
  // cannot be read or is malformed, and then the store is unchanged.
  void load(const std::string& path);
  // The file record() rewrites; empty: none.
  void set_file(std::string path);

  std::size_t size() const;
  void clear();

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  void save_locked(const std::string& path) const;

  mutable std::mutex mutex_;
  std::map<Key, std::string> choices_;
  std::string file_;
};

// The process's store. At first use it loads TILEOPS_TUNING_FILE when that names an existing file
// and rewrites that file after each record; a malformed file raises TuningFileError there.
TuningStore& tuning_store();

}  // namespace tileops
