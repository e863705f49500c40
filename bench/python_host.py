#!/usr/bin/env python3
"""Host time per call from Python on CUDA tensors (the H200 machine): RMSNormFwdOp on [1, 4096]
bfloat16 beside torch's own F.rms_norm, in one process.

    PYTHONPATH=<installed tileops> python3 bench/python_host.py [--calls N] [--json FILE]

Rows: torch F.rms_norm eager; tileops called directly (op(x, w)); tileops through its torch
operator (torch.ops.tileops.<branch>, what a compiled graph calls); the direct call with out= (no
allocation); the DLPack conversions alone (import of two tensors and export of one, as the general
path does them); torch.compile(mode="reduce-overhead") of a function calling the op, replayed from
its CUDA graph; parts of a call; and the host path without a kernel launch: the direct call on CPU
tensors of 8 elements beside the DLPack import of one of them (a call with out= imports three). Each row is the median over 7 batches of N back-to-back calls of the wall time per
call (time.perf_counter), the GPU synchronised only between batches: for kernels this short the
host is the bottleneck, so the time is the host's.
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import tileops
from tileops._arrays import stream_for


def per_call(fn, calls):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
        torch.cuda.synchronize()
    return statistics.median(times)


def batch(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = (time.perf_counter() - start) / calls
    torch.cuda.synchronize()
    return elapsed


def ratio(fn, reference, calls, rounds=15, before_fn=None, before_reference=None):
    """The median over `rounds` alternating batches of fn's time per call over reference's: this
    host's speed drifts by tens of percent within a run, and alternating batches see the same
    drift. before_*: called (untimed) ahead of each batch of that side."""
    for setup, f in ((before_fn, fn), (before_reference, reference)):
        if setup:
            setup()
        for _ in range(200):
            f()
    torch.cuda.synchronize()
    ratios = []
    for _ in range(rounds):
        if before_fn:
            before_fn()
        a = batch(fn, calls)
        if before_reference:
            before_reference()
        ratios.append(a / batch(reference, calls))
    return statistics.median(ratios)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("python_host: torch sees no CUDA device", file=sys.stderr)
        return 1
    x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    op = tileops.RMSNormFwdOp([4096], eps=1e-6)
    op(x, w)
    # "c++" (Note [torch's caching allocator from C++]) or "python" (the Python function pair); the
    # package imports tileops._torch with the first op on torch tensors.
    print(f"allocator: torch's caching allocator called from {tileops._torch.cuda_allocator}",
          flush=True)
    branch = op._op.effect_branch([True, True], False)["operator_name"].split("::", 1)[1]
    operator = getattr(torch.ops.tileops, branch).default
    stream = torch.cuda.current_stream().cuda_stream or 1  # DLPack numbers the legacy stream 1
    raw = op._op

    def conversions():
        x.__dlpack__(max_version=(1, 1), stream=stream)
        w.__dlpack__(max_version=(1, 1), stream=stream)
        torch.from_dlpack(raw.call([x, w], out, stream)[0])

    # The host path alone: the same op on CPU tensors of 8 elements, whose kernel takes tens of
    # nanoseconds (no CUDA launch), beside the DLPack import of one such tensor.
    x8, w8 = torch.randn(1, 8), torch.randn(8)
    out8 = torch.empty_like(x8)
    op8 = tileops.RMSNormFwdOp([8], eps=1e-6)
    op8(x8, w8)
    compiled = torch.compile(lambda x, w: op(x, w), mode="reduce-overhead", fullgraph=True)
    # torch's own op compiled the same way: the graph-tree wrapper's cost on this host.
    compiled_torch = torch.compile(lambda x, w: F.rms_norm(x, [4096], w, 1e-6),
                                   mode="reduce-overhead", fullgraph=True)
    rows = {
        "torch F.rms_norm eager": lambda: F.rms_norm(x, [4096], w, 1e-6),
        "tileops op(x, w)": lambda: op(x, w),
        "tileops op(x, w, out=out)": lambda: op(x, w, out=out),
        f"tileops torch.ops.tileops.{branch}": lambda: operator(op._key, x, w),
        "tileops raw _C call (out=, stream given)": lambda: raw.call([x, w], out, stream),
        "DLPack: two imports and one export + call with out=": conversions,
        "torch.compile reduce-overhead (graph replay)": lambda: compiled(x, w),
        "torch.compile reduce-overhead of F.rms_norm (graph replay)": lambda: compiled_torch(x, w),
        # The parts, to find where a call's time goes.
        "part: x.__dlpack__(max_version, stream)": lambda: x.__dlpack__(max_version=(1, 1),
                                                                        stream=stream),
        "part: _C call with out=, no stream": lambda: raw.call([x, w], out, None),
        # The torch fast path alone (Note [The torch fast path] in python/src/ops.cpp), and the
        # DLPack import of one tensor inside it (three per call with out=).
        "part: _C call_torch((x, w), out)": lambda: raw.call_torch((x, w), out),
        "part: torch._C._to_dlpack(x)": lambda: torch._C._to_dlpack(x),
        "host path: op(x8, w8, out=out8) on the CPU, 8 elements": lambda: op8(x8, w8, out=out8),
        "host path: torch._C._to_dlpack(x8)": lambda: torch._C._to_dlpack(x8),
        "part: tileops._arrays.stream_for": lambda: stream_for([x, w, None]),
    }
    results = {}
    for name, fn in rows.items():
        results[name] = per_call(fn, args.calls)
        print(f"{name}: {results[name] * 1e6:.2f} us per call", flush=True)
    # The bar in alternating batches: the operator over torch's own op.
    ratios = {f"torch.ops.tileops.{branch} / F.rms_norm": ratio(
        lambda: operator(op._key, x, w), lambda: F.rms_norm(x, [4096], w, 1e-6), args.calls)}
    # The same with torch's allocator reached through the Python function pair (what the package
    # installs without libtileops_torch) against the C++ one, alternating.
    library = tileops._torch._cpp_library
    if tileops._torch.cuda_allocator == "c++":
        to_cpp = library.tileops_torch_install_cuda_allocator
        to_python = lambda: tileops._torch._install_torch_allocator(None)  # noqa: E731
        for name, fn in ((f"torch.ops.tileops.{branch}", lambda: operator(op._key, x, w)),
                         ("op(x, w)", lambda: op(x, w))):
            ratios[f"{name}, allocator through Python / through C++"] = ratio(
                fn, fn, args.calls, before_fn=to_python, before_reference=to_cpp)
        to_python()
    for name, value in ratios.items():
        print(f"ratio: {name}, alternating batches: {value:.2f}x", flush=True)
    # The same direct call with the library's own stream-ordered allocator instead of torch's.
    tileops._C.set_cuda_allocator(None, None)
    name = "part: op(x, w) with the built-in cudaMallocAsync allocator"
    results[name] = per_call(lambda: op(x, w), args.calls)
    print(f"{name}: {results[name] * 1e6:.2f} us per call", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "calls": args.calls, "seconds_per_call": results,
                       "ratios": ratios}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
