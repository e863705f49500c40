#!/usr/bin/env bash
# bench/experiments/grouped_gemm_cutlass.cu under each schedule, on both weight layouts
# (cutlass_sweep.sh): the sweep behind the library's choice of schedule (docs/gemm.md, "The
# CUTLASS grouped kernel").
#
#   bench/experiments/grouped_gemm_sweep.sh OUT_FILE ['KIND M N K CLUSTER_M CLUSTER_N' ...]
#
# SWEEP_PHASE=compile only compiles, SWEEP_PHASE=run only runs what is compiled (to compile while
# something else builds and run when the GPU is free).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1
shift
schedules=("$@")
((${#schedules[@]} == 0)) && schedules=(
  'Cooperative 128 128 64 1 2' 'Cooperative 128 128 64 2 1' 'Cooperative 128 128 64 1 1'
  'Cooperative 128 256 64 1 2' 'Pingpong 64 128 64 1 2' 'Pingpong 64 256 64 1 2'
  'Pingpong 128 128 64 1 2' 'Pingpong 64 128 128 1 1')
SWEEP_RUNS="|--column-major" exec bench/experiments/cutlass_sweep.sh \
  bench/experiments/grouped_gemm_cutlass.cu "$out" "${schedules[@]}"
