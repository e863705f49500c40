#!/usr/bin/env bash
# Compiles bench/experiments/grouped_gemm_cutlass.cu once per schedule, in parallel, and runs each
# on both weight layouts, one after another (the GPU is shared): the sweep behind the library's
# choice of schedule (docs/gemm.md, "The CUTLASS grouped kernel").
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
nvcc=$(scripts/find-nvcc)
dir=build/grouped-gemm-sweep
mkdir -p "$dir"
phase=${SWEEP_PHASE:-both}
for i in "${!schedules[@]}"; do
  [[ $phase == run ]] && break
  read -r kind m n k cm cn <<<"${schedules[$i]}"
  "$nvcc" -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
    -I. -Iinclude -Isrc -isystem build/cutlass/include -DKIND="$kind" -DTILE_M="$m" -DTILE_N="$n" \
    -DTILE_K="$k" -DCLUSTER_M="$cm" -DCLUSTER_N="$cn" \
    bench/experiments/grouped_gemm_cutlass.cu -o "$dir/schedule_$i" >"$dir/schedule_$i.log" 2>&1 &
done
wait
[[ $phase == compile ]] && exit 0
for i in "${!schedules[@]}"; do
  if [[ -x $dir/schedule_$i ]]; then
    "$dir/schedule_$i" >>"$out" 2>&1
    "$dir/schedule_$i" --column-major >>"$out" 2>&1
  else
    { echo "${schedules[$i]}: did not compile"; tail -5 "$dir/schedule_$i.log"; } >>"$out"
  fi
done
