#!/usr/bin/env bash
# Compiles bench/experiments/gemm_cutlass.cu once per schedule, in parallel, and runs each in turn
# (the GPU is shared): which CUTLASS schedules beat cuBLAS on which GemmFwdOp workloads, the step
# before #13's own GEMM candidates.
#
#   bench/experiments/gemm_sweep.sh OUT_FILE ['KIND M N K CLUSTER_M CLUSTER_N' ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=$1
shift
schedules=("$@")
((${#schedules[@]} == 0)) && schedules=(
  'Cooperative 128 256 64 2 1' 'Cooperative 128 256 64 1 2' 'Cooperative 128 256 64 1 1'
  'Cooperative 256 128 64 2 1' 'Cooperative 256 128 64 1 2' 'Cooperative 128 128 64 2 1'
  'Pingpong 128 128 64 2 1' 'Pingpong 128 128 64 1 2' 'Pingpong 64 256 64 1 2')
nvcc=$(scripts/find-nvcc)
dir=build/gemm-sweep
mkdir -p "$dir"
for i in "${!schedules[@]}"; do
  read -r kind m n k cm cn <<<"${schedules[$i]}"
  "$nvcc" -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
    -I. -isystem build/cutlass/include -DKIND="$kind" -DTILE_M="$m" -DTILE_N="$n" -DTILE_K="$k" \
    -DCLUSTER_M="$cm" -DCLUSTER_N="$cn" bench/experiments/gemm_cutlass.cu -lcublas \
    -o "$dir/schedule_$i" >"$dir/schedule_$i.log" 2>&1 &
done
wait
for i in "${!schedules[@]}"; do
  if [[ -x $dir/schedule_$i ]]; then
    "$dir/schedule_$i" >>"$out" 2>&1
  else
    { echo "${schedules[$i]}: did not compile"; tail -5 "$dir/schedule_$i.log"; } >>"$out"
  fi
done
