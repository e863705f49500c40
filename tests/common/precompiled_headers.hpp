// The headers most test sources include, precompiled once per test executable
// (tests/CMakeLists.txt): parsing them was a third of a test file's compile time. Every test source
// still includes what it uses; this list only decides what is parsed ahead.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tileops/core/error.hpp"
#include "tileops/core/tensor.hpp"
#include "tileops/manifest/manifest.hpp"
#include "tileops/op/op.hpp"
