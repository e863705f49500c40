#!/usr/bin/env bash
# bench/experiments/gemm_cutlass.cu under each schedule (cutlass_sweep.sh): which CUTLASS schedules
# beat cuBLAS on which GemmFwdOp workloads, the step before #13's own GEMM candidates.
#
#   bench/experiments/gemm_sweep.sh OUT_FILE ['KIND M N K CLUSTER_M CLUSTER_N' ...]
set -uo pipefail
here=$(dirname "$0")
out=$1
shift
schedules=("$@")
((${#schedules[@]} == 0)) && schedules=(
  'Cooperative 128 256 64 2 1' 'Cooperative 128 256 64 1 2' 'Cooperative 128 256 64 1 1'
  'Cooperative 256 128 64 2 1' 'Cooperative 256 128 64 1 2' 'Cooperative 128 128 64 2 1'
  'Pingpong 128 128 64 2 1' 'Pingpong 128 128 64 1 2' 'Pingpong 64 256 64 1 2')
SWEEP_LINK=-lcublas exec "$here/cutlass_sweep.sh" "$here/gemm_cutlass.cu" "$out" "${schedules[@]}"
