#!/usr/bin/env python3
"""The gemm family beside torch in one process, interleaved: tileops (tuned) and torch's cuBLAS
(`torch.mm`/`torch.addmm`, `torch.matmul`, `torch._grouped_mm`) on the same tensors.

    PYTHONPATH=<installed tileops> python3 bench/gemm_interleaved.py CASES.json [--markdown F]
        [--linear-weights]

CASES.json is `tileops bench --json-file` output (its GemmFwdOp, BmmFwdOp and GroupedGemmFwdOp
rows give the shapes, dtypes and FLOPs). Compute-bound kernels vary with the clock the card holds
(power and temperature), so timing ours and torch's in separate runs minutes apart compares clocks
as much as kernels. Here each case times torch and tileops alternately, 9 rounds each (the side
that goes first alternating from round to round), and reports the medians. Each timing replays a CUDA graph of back-to-back calls (the host's launch cost is not
timed) cycling through enough input sets to exceed 4x the L2, so weights come from HBM as they do
in a model. The tileops op is put in tuned mode and called once before timing (it tunes then).
With --linear-weights, GemmFwdOp's b is the transposed view W.t() of a row-major W [N, K], as
nn.Linear holds its weight and the manifest's Llama workloads describe b; without it, b is a
row-major [K, N] as `tileops bench` draws it.
"""
import argparse
import json
import math
import statistics
import sys

import torch

import tileops
from torch_baseline import group_ends  # the same offsets tileops bench draws

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
          "int32": torch.int32}
CEILING_FLOPS = 780e12
ROUNDS = 9


def make_input(spec, generator):
    if spec.get("values") == "group_ends":
        return group_ends(int(spec["values_bound"]), spec["shape"][0], generator)
    t = torch.randn(spec["shape"], generator=generator, dtype=torch.float32, device="cuda")
    return t.to(DTYPES[spec["dtype"]]).masked_fill_(t == 0, 1.0)


def torch_fn(op):
    if op == "GemmFwdOp":
        return lambda a, b, bias=None, out=None: (
            torch.mm(a, b, out=out) if bias is None else torch.addmm(bias, a, b, out=out))
    if op == "BmmFwdOp":
        return lambda a, b, out=None: torch.matmul(a, b, out=out)
    return lambda x, w, offsets, out=None: torch._grouped_mm(x, w, offs=offsets)


def graph_time(fn, sets, outs, calls):
    """Seconds per call: a CUDA graph of `calls` calls cycling the sets, replayed and timed."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for k in range(len(sets)):  # warm-up outside the capture
            fn(*sets[k], out=outs[k])
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in range(calls):
            k = c % len(sets)
            fn(*sets[k], out=outs[k])
    graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e-3 / calls, graph


def run_case(row, generator, linear_weights):
    op_name = row["op"]
    specs = row["inputs"]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    first = [None if s is None else make_input(s, generator) for s in specs]
    if linear_weights and op_name == "GemmFwdOp":  # b = W.t(); clone() keeps the layout
        first[1] = make_input({**specs[1], "shape": specs[1]["shape"][::-1]}, generator).t()
    set_bytes = sum(t.numel() * t.element_size() for t in first if t is not None)
    count = max(2, min(64, math.ceil(4 * max(l2, 50 << 20) / max(set_bytes, 1))))
    sets = [first] + [[None if t is None else t.clone() for t in first] for _ in range(count - 1)]
    sets = [[t for t in s if t is not None] for s in sets]
    op = getattr(tileops, op_name)()
    op.request_tune()
    probe = op(*sets[0])  # tunes
    outs = [torch.empty_like(probe) for _ in sets]
    theirs_fn = torch_fn(op_name)
    grouped = op_name == "GroupedGemmFwdOp"
    if grouped:  # torch._grouped_mm takes no out=: its output is allocated inside the graph
        theirs = lambda *args, out=None: theirs_fn(*args)
    else:
        theirs = theirs_fn
    ours = lambda *args, out=None: op(*args, out=out)
    time_theirs, time_ours = timer(theirs, sets, outs), timer(ours, sets, outs)
    # Enough calls per timing for about 2 ms of GPU time, from one estimate.
    per_call = time_theirs(len(sets))
    calls = len(sets) * max(1, min(64, math.ceil(2e-3 / max(per_call * len(sets), 1e-7))))
    mine, torch_times = [], []
    for r in range(ROUNDS):  # which side goes first alternates, so that neither always follows
        if r % 2 == 0:
            torch_times.append(time_theirs(calls))
            mine.append(time_ours(calls))
        else:
            mine.append(time_ours(calls))
            torch_times.append(time_theirs(calls))
    return statistics.median(mine), statistics.median(torch_times)


def eager_time(fn, sets, outs, calls):
    """Seconds per call of back-to-back eager calls: for a torch path that cannot be captured
    (torch._grouped_mm's float16 fallback copies offsets to the host)."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn(*sets[0], out=outs[0])
    start.record()
    for c in range(calls):
        fn(*sets[c % len(sets)], out=outs[c % len(sets)])
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e-3 / calls


def timer(fn, sets, outs):
    """A function of the call count giving seconds per call: replays of a graph of that many
    calls (captured at the first use of a count), else eager calls."""
    graphs = {}

    def time(calls):
        if graphs.get(calls) is None and graphs.get("eager") is None:
            try:
                t, graphs[calls] = graph_time(fn, sets, outs, calls)
                return t
            except RuntimeError:
                torch.cuda.synchronize()
                graphs["eager"] = True
        if graphs.get("eager"):
            return eager_time(fn, sets, outs, calls)
        return replay_time(graphs[calls], calls)

    return time


def replay_time(graph, calls):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) * 1e-3 / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases")
    parser.add_argument("--markdown")
    parser.add_argument("--ops", nargs="*", default=["GemmFwdOp", "BmmFwdOp", "GroupedGemmFwdOp"])
    parser.add_argument("--only", nargs="*", help="only these cases (names as in CASES.json)")
    parser.add_argument("--linear-weights", action="store_true",
                        help="GemmFwdOp's b as W.t() of a row-major [N, K] (nn.Linear's layout)")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    with open(args.cases) as f:
        rows = [r for r in json.load(f) if r.get("op") in args.ops and r.get("inputs")
                and (not args.only or r.get("case") in args.only)]
    generator = torch.Generator(device="cuda").manual_seed(0)
    lines = [f"# tileops vs torch {torch.__version__} on {torch.cuda.get_device_name(0)}, "
             "interleaved", "",
             f"CUDA-graph replays, medians of {ROUNDS} alternating rounds; TFLOP/s of the "
             "manifest's roofline; speed-up = torch time / tileops time. torch: reduced-precision "
             "reductions and TF32 off (the manifest's float32 accumulation). GemmFwdOp's b: "
             + ("W.t() of a row-major [N, K]." if args.linear_weights else "row-major [K, N]."),
             "",
             "| op | case | tileops us | TFLOP/s | % of 780 | GB/s | torch us | TFLOP/s | speed-up |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        try:
            ours, theirs = run_case(row, generator, args.linear_weights)
        except Exception as e:  # one failing case does not stop the others
            note = f"{type(e).__name__}: {e}".splitlines()[0][:160]
            print(f"[gemm] {row['op']} {row['case']}: {note}", file=sys.stderr, flush=True)
            lines.append(f"| {row['op']} | {row['case']} | - | - | - | - | - | - | {note} |")
            torch.cuda.synchronize()
            continue
        flops, bytes_ = row.get("flops") or 0, row.get("bytes") or 0
        line = (f"| {row['op']} | {row['case']} | {ours * 1e6:.2f} | {flops / ours / 1e12:.1f} "
                f"| {100 * flops / ours / CEILING_FLOPS:.1f}% | {bytes_ / ours / 1e9:.0f} "
                f"| {theirs * 1e6:.2f} | {flops / theirs / 1e12:.1f} | {theirs / ours:.3f}x |")
        print(line, flush=True)
        lines.append(line)
        torch.cuda.empty_cache()
    text = "\n".join(lines)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
