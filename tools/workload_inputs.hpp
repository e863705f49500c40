// The CLI's side of workload cases: where it runs them and how large they may be. Instantiating,
// scaling and filling the cases is the tileops_workloads library's (tools/workloads/), which the
// tests share.
#pragma once

#include <cstdint>

#include "tileops/core/device.hpp"
#include "workload_cases.hpp"

namespace tileops::cli {

using workloads::cannot_run_reason;
using workloads::entry_of;
using workloads::pick_case;
using workloads::plan_of;
using workloads::random_inputs;
using workloads::retarget_device_param;
using workloads::scaled_cases;
using workloads::ScaledCase;

// The default element budget per tensor for CPU runs (inputs and outputs alike).
inline constexpr std::int64_t kDefaultMaxElems = std::int64_t{1} << 22;

// Note [CLI device choice]: the one place that decides where the CLI runs ops. The best device
// present is the accelerator's current device when the process has one (a CUDA build), else the
// CPU. Everything device-specific (input upload, timing, ceilings) keys off this choice.
Device choose_device();

}  // namespace tileops::cli
