// libFuzzer target for the manifest loader: any bytes, read as one manifest file. Each step is held
// to the contract its header states:
// - Manifest::parse reports every problem as a diagnostic and throws nothing (Note [YAML
//   exceptions] in src/manifest/manifest.cpp);
// - validate() returns its diagnostics and throws nothing. It builds the signature plan of every
//   entry parse returned (entries read only in part included, as `tileops validate` sees them)
//   with SignaturePlan::build, which may throw only ManifestError (the validator reports it and
//   lets anything else escape), and instantiates and checks every workload row of each plan that
//   builds. A second build here would repeat the first call for call.
// An exception that escapes, a crash, a hang, a leak or a sanitizer report is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/manifest/manifest.hpp"
#include "tileops/manifest/validator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using tileops::manifest::Manifest;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> diagnostics;
  // The file name sets the family every entry must declare; a mismatch is one more diagnostic.
  Manifest m = Manifest::parse("fuzz.yaml", text, diagnostics);
  (void)tileops::manifest::validate(m);
  return 0;
}
