#!/usr/bin/env python3
"""Which kernels torch's cuBLAS call and the tuned tileops call run for a few GEMM cases, and
whether the interleaved timing depends on which side goes first in a round.

    PYTHONPATH=<installed tileops>:bench python3 bench/experiments/gemm_probe.py CASES.json CASE...

For each case: the tileops op tunes (TILEOPS_LOG=tune shows its candidates), then torch.profiler
lists the kernels of 20 eager calls of each side with their mean device time, then 8 rounds of
CUDA-graph replays alternate the order (torch first, then tileops first) and the medians of each
order are printed.
"""
import json
import math
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import tileops
from gemm_interleaved import graph_time, make_input, replay_time, torch_fn


def kernels(fn, sets, outs, calls=20):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for c in range(calls):
            fn(*sets[c % len(sets)], out=outs[c % len(sets)])
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        if e.device_type.name == "CUDA" and e.count > 0:
            rows.append(f"    {e.count:3d} x {e.device_time_total / e.count:9.2f} us  {e.key[:110]}")
    return "\n".join(rows)


def main():
    cases_file, names = sys.argv[1], set(sys.argv[2:])
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    rows = [r for r in json.load(open(cases_file)) if r.get("case") in names]
    generator = torch.Generator(device="cuda").manual_seed(0)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for row in rows:
        first = [None if s is None else make_input(s, generator) for s in row["inputs"]]
        set_bytes = sum(t.numel() * t.element_size() for t in first if t is not None)
        count = max(2, min(64, math.ceil(4 * max(l2, 50 << 20) / max(set_bytes, 1))))
        sets = [first] + [[None if t is None else t.clone() for t in first]
                          for _ in range(count - 1)]
        sets = [[t for t in s if t is not None] for s in sets]
        op = getattr(tileops, row["op"])()
        op.request_tune()
        probe = op(*sets[0])
        outs = [torch.empty_like(probe) for _ in sets]
        theirs = torch_fn(row["op"])
        ours = lambda *args, out=None: op(*args, out=out)
        print(f"== {row['op']} {row['case']}", flush=True)
        print("  torch kernels:\n" + kernels(theirs, sets, outs), flush=True)
        print("  tileops kernels:\n" + kernels(ours, sets, outs), flush=True)
        per_call, _ = graph_time(theirs, sets, outs, len(sets))
        calls = len(sets) * max(1, min(64, math.ceil(2e-3 / max(per_call * len(sets), 1e-7))))
        _, g_theirs = graph_time(theirs, sets, outs, calls)
        _, g_ours = graph_time(ours, sets, outs, calls)
        by_order = {"torch first": ([], []), "tileops first": ([], [])}
        for r in range(8):
            order = "torch first" if r % 2 == 0 else "tileops first"
            t_list, o_list = by_order[order]
            if order == "torch first":
                t_list.append(replay_time(g_theirs, calls))
                o_list.append(replay_time(g_ours, calls))
            else:
                o_list.append(replay_time(g_ours, calls))
                t_list.append(replay_time(g_theirs, calls))
        for order, (t_list, o_list) in by_order.items():
            t, o = statistics.median(t_list), statistics.median(o_list)
            print(f"  {order}: torch {t * 1e6:.2f} us, tileops {o * 1e6:.2f} us, "
                  f"speed-up {t / o:.3f}x", flush=True)
        del g_theirs, g_ours
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
