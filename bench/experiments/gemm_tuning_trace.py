#!/usr/bin/env python3
"""The device's timeline of one GEMM entry's tuning: every kernel it launches, with its duration
and the idle gap before it, from torch.profiler.

    PYTHONPATH=<installed tileops>:bench python3 bench/experiments/gemm_tuning_trace.py CASES.json CASE...

Prints the last 60 kernels of each case's tuning (the run-off rounds: an L2-evicting read, then a
candidate's kernels), so that the candidates' device times can be set beside the event timings
that TILEOPS_LOG=tune prints.
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import tileops
from gemm_interleaved import make_input


def main():
    cases_file, names = sys.argv[1], set(sys.argv[2:])
    rows = [r for r in json.load(open(cases_file)) if r.get("case") in names]
    generator = torch.Generator(device="cuda").manual_seed(0)
    for row in rows:
        inputs = [make_input(s, generator) for s in row["inputs"] if s is not None]
        op = getattr(tileops, row["op"])()
        op.request_tune()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            op(*inputs)
            torch.cuda.synchronize()
        events = sorted((e for e in prof.events() if e.device_type.name == "CUDA"),
                        key=lambda e: e.time_range.start)
        print(f"== {row['op']} {row['case']}: {len(events)} device events", flush=True)
        previous_end = None
        for e in events[-60:]:
            gap = 0.0 if previous_end is None else e.time_range.start - previous_end
            print(f"  gap {gap:8.2f} us  {e.time_range.elapsed_us():9.2f} us  {e.name[:90]}")
            previous_end = e.time_range.end


if __name__ == "__main__":
    main()
