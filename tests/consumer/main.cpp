// Calls into the installed library; exits non-zero when a call does not give what it should.
// Loading the embedded manifest pulls yaml-cpp and fmt into the link, so a package config that
// forgets the static archive's private dependencies fails here.
#include <cstdio>

#include "tileops/core/dtype.hpp"
#include "tileops/manifest/manifest.hpp"

int main() {
  const auto dtype = tileops::parse_dtype("bfloat16");
  if (!dtype || *dtype != tileops::DType::kBFloat16) {
    std::fputs("tileops consumer: parse_dtype(\"bfloat16\") failed\n", stderr);
    return 1;
  }
  const auto& manifest = tileops::manifest::Manifest::builtin();
  if (manifest.find("RMSNormFwdOp") == nullptr) {
    std::fputs("tileops consumer: the embedded manifest has no RMSNormFwdOp\n", stderr);
    return 1;
  }
  std::printf("tileops consumer: parse_dtype and the embedded manifest (%zu ops) work\n",
              manifest.entries().size());
  return 0;
}
