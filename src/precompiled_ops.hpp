// tileops's precompiled headers: tileops_core's (precompiled_core.hpp) and the op framework's,
// which every op, kernel table and framework source includes.
#pragma once

#include "precompiled_core.hpp"
#include "tileops/op/op.hpp"
