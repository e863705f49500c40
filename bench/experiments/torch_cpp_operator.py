#!/usr/bin/env python3
"""An experiment, not part of the library: host time per call of RMSNormFwdOp on CPU tensors
through its torch operator registered in Python (the package's torch.library operator) and
through the same operator registered in C++ (torch_cpp_operator.cpp, TORCH_LIBRARY, built here
with torch.utils.cpp_extension against the installed package's libtileops), beside torch's own
F.rms_norm and the package's direct calls. Every row passes `out`, except torch's.

    PYTHONPATH=<installed tileops> python3 bench/experiments/torch_cpp_operator.py [--calls N]

Each row is the median over 7 batches of N calls of the wall time per call (time.perf_counter);
the rows are timed in interleaved rounds, so that a drift of the machine's speed falls on all.
Results: bench/results/2026-12-01-torch-operator-cpp-vs-python.md.
"""
import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F
from torch.utils import cpp_extension

import tileops

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def build_cpp_operator():
    package = os.path.dirname(tileops.__file__)
    cpp_extension.load(
        name="tileops_cpp_operator_experiment",
        sources=[os.path.join(HERE, "torch_cpp_operator.cpp")],
        extra_include_paths=[os.path.join(ROOT, "include")],
        extra_cflags=["-O2", "-std=c++20"],
        extra_ldflags=[f"-L{package}", "-ltileops", "-ltileops_core", f"-Wl,-rpath,{package}"],
        is_python_module=False)


def per_call(fn, calls):
    for _ in range(200):
        fn()
    times = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    build_cpp_operator()
    rows = {}
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(1, 4096, dtype=dtype)
        w = torch.randn(4096, dtype=dtype)
        out = torch.full_like(x, float("nan"))
        op = tileops.RMSNormFwdOp([4096], eps=1e-6)
        op(x, w, out=out)
        want = F.rms_norm(x.double(), (4096,), w.double(), 1e-6)
        branch = op._op.effect_branch([True, True], True)["operator_name"].split("::", 1)[1]
        python_operator = getattr(torch.ops.tileops, branch).default
        cpp_operator = torch.ops.tileops_cpp.norm_rms_norm_fwd_out.default
        # Both operators compute what torch computes, into a poisoned out.
        for operator in (python_operator, cpp_operator):
            out.fill_(float("nan"))
            operator(op._key, x, w, out)
            tol = 1e-5 if dtype == torch.float32 else 2e-2
            torch.testing.assert_close(out.double(), want, rtol=tol, atol=tol)
        raw = op._op
        cases = {
            "torch F.rms_norm (allocates)": lambda: F.rms_norm(x, (4096,), w, 1e-6),
            "tileops op(x, w, out=out)": lambda: op(x, w, out=out),
            "tileops raw _C call (out=)": lambda: raw.call([x, w], out, None),
            "torch operator, Python-registered": lambda: python_operator(op._key, x, w, out),
            "torch operator, C++-registered": lambda: cpp_operator(op._key, x, w, out),
        }
        for _ in range(args.rounds):
            for name, fn in cases.items():
                rows.setdefault((str(dtype), name), []).append(per_call(fn, args.calls) * 1e6)
    print(f"torch {torch.__version__}, RMSNormFwdOp [1, 4096] on the CPU, us per call: "
          f"median of {args.rounds} interleaved rounds (range)")
    for (dtype, name), values in rows.items():
        print(f"  {dtype:15} {name:36} {statistics.median(values):7.2f}  "
              f"({min(values):.2f}-{max(values):.2f})")


if __name__ == "__main__":
    main()
