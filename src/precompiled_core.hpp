// The headers most of tileops_core's sources include, precompiled once for the target
// (src/CMakeLists.txt): parsing them was a fifth to two fifths of a source's compile time, and
// each configuration CI builds compiles the library again. Every source still includes what it
// uses; this list only decides what is parsed ahead.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/manifest/signature_plan.hpp"
