// The selection side of the dispatch sinks (Note [Dispatch events] in tileops/op/dispatch.hpp).
#pragma once

#include "tileops/op/dispatch.hpp"

namespace tileops::detail {

// Hands `event` to every installed sink and, under TILEOPS_LOG=dispatch, prints it to stderr.
// Called on a cache miss only; with no sink and no log it reads one atomic and an env variable.
void publish_dispatch(const DispatchEvent& event);

}  // namespace tileops::detail
