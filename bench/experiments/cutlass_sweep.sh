#!/usr/bin/env bash
# Compiles a CUTLASS experiment once per schedule, in parallel, and runs each binary in turn (the
# GPU is shared), appending to OUT_FILE: what gemm_sweep.sh and grouped_gemm_sweep.sh share.
#
#   bench/experiments/cutlass_sweep.sh EXPERIMENT.cu OUT_FILE 'KIND M N K CLUSTER_M CLUSTER_N [SCHEDULER]' ...
#
# The experiment reads its schedule from the macros KIND, TILE_M, TILE_N, TILE_K, CLUSTER_M,
# CLUSTER_N and, when given, SCHEDULER. SWEEP_LINK: extra link flags (-lcublas); SWEEP_DEFINES:
# extra compile flags (-DSMALL_M); SWEEP_RUNS: the argument lists each binary
# runs with, separated by '|' (default: one run without arguments); SWEEP_PHASE=compile only
# compiles, SWEEP_PHASE=run only runs what is compiled.
set -uo pipefail
cd "$(dirname "$0")/../.."
experiment=$1
out=$2
shift 2
schedules=("$@")
IFS='|' read -r -a runs <<<"${SWEEP_RUNS:-}"
((${#runs[@]} == 0)) && runs=("")
nvcc=$(scripts/find-nvcc)
dir=build/sweep-$(basename "$experiment" .cu)
mkdir -p "$dir"
phase=${SWEEP_PHASE:-both}
read -r -a link <<<"${SWEEP_LINK:-}"
read -r -a defines <<<"${SWEEP_DEFINES:-}"
for i in "${!schedules[@]}"; do
  [[ $phase == run ]] && break
  read -r kind m n k cm cn scheduler <<<"${schedules[$i]}"
  [[ -n $scheduler ]] && defines_i=(-DSCHEDULER="$scheduler") || defines_i=()
  "$nvcc" -std=c++20 -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
    -I. -Iinclude -Isrc -isystem build/cutlass/include -DKIND="$kind" -DTILE_M="$m" -DTILE_N="$n" \
    -DTILE_K="$k" -DCLUSTER_M="$cm" -DCLUSTER_N="$cn" "${defines_i[@]}" "${defines[@]}" \
    "$experiment" "${link[@]}" \
    -o "$dir/schedule_$i" >"$dir/schedule_$i.log" 2>&1 &
done
wait
[[ $phase == compile ]] && exit 0
for i in "${!schedules[@]}"; do
  if [[ ! -x $dir/schedule_$i ]]; then
    { echo "${schedules[$i]}: did not compile"; tail -5 "$dir/schedule_$i.log"; } >>"$out"
    continue
  fi
  for run in "${runs[@]}"; do
    read -r -a args <<<"$run"
    "$dir/schedule_$i" "${args[@]}" >>"$out" 2>&1
  done
done
