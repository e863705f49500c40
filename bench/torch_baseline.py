#!/usr/bin/env python3
"""PyTorch eager and torch.compile on the workloads `tileops bench --json` ran, timed the same way.

    build/cuda/tools/tileops bench --json RMSNormFwdOp ... > tileops-bench.json
    python3 bench/torch_baseline.py tileops-bench.json [--markdown torch-baseline.md] [--json out]

For every row of the bench's JSON (one workload case: op, inputs with shapes and dtypes, params)
whose op has a torch equivalent here, the script builds the same inputs on the GPU and times
torch eager and torch.compile the way `tileops bench` times our kernels (Note [CUDA bench] in
tools/bench_cuda.cpp): inputs replicated into enough sets to exceed four times the L2 and cycled
through, in-place inputs restored before each batch outside the timed region, CUDA events around
batches of back-to-back calls after a warm-up, the median per call. GB/s and the fraction of the
4.25 TB/s ceiling use the bytes of our manifest's roofline (the JSON's `bytes`), so all three
columns count the same traffic. It prints one table per op with, per workload and dtype: our
time, eager's and compile's, GB/s, fraction of the ceiling, and our speed-up over each.

torch.compile compiles each shape once (static shapes, fullgraph); --budget-s bounds the time the
script spends, compiles included: cases past it are reported as not run.
"""

import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

CEILING_BYTES_PER_S = 4.25e12  # docs/cuda.md: the H200's measured device-to-device copy
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
          "int32": torch.int32, "int64": torch.int64}
FLOAT32_EPS = 1.1920928955078125e-07  # eps = None in the manifest (docs/manifest.md §4.1)


def norm_eps(params):
    eps = params.get("eps")
    return FLOAT32_EPS if eps is None else float(eps)


# Each maker takes the case's params and returns (fn, written): fn(*inputs) runs the op, and
# `written` lists the indices of the inputs it writes in place.
def rms_norm(p):
    shape, eps = list(p["normalized_shape"]), norm_eps(p)
    return (lambda x, w: F.rms_norm(x, shape, w, eps)), []


def layer_norm(p):
    shape, eps = list(p["normalized_shape"]), float(p.get("eps", 1e-5))
    return (lambda x, w, b: F.layer_norm(x, shape, w, b, eps)), []


def fused_add_rms_norm(p):
    eps = norm_eps(p)

    def fn(x, residual, w):
        residual.add_(x)
        return F.rms_norm(residual, [residual.shape[-1]], w, eps)

    return fn, [1]


def residual_rms_norm(p):
    shape, eps = list(p["normalized_shape"]), norm_eps(p)

    def fn(x, residual, w):
        hidden = x + residual
        return hidden, F.rms_norm(hidden, shape, w, eps)

    return fn, []


def add(p):
    alpha = p.get("alpha", 1)
    return (lambda a, b: torch.add(a, b, alpha=alpha)), []


def mul(p):
    return (lambda a, b: torch.mul(a, b)), []


def softmax(p):
    dim = p.get("dim", -1)
    return (lambda x: torch.softmax(x, dim)), []


def log_softmax(p):
    dim = p.get("dim", -1)
    return (lambda x: torch.log_softmax(x, dim)), []


def reduced_dims(p):
    """The manifest's `dim` as torch takes it: None or [] reduce every axis."""
    dim = p.get("dim")
    return None if not dim else list(dim)


def sum_(p):
    dim, keepdim = reduced_dims(p), bool(p.get("keepdim", False))
    return (lambda x: torch.sum(x, dim=dim, keepdim=keepdim)), []


def mean(p):
    dim, keepdim = reduced_dims(p), bool(p.get("keepdim", False))
    return (lambda x: torch.mean(x, dim=dim, keepdim=keepdim)), []


def amax(p):
    dim, keepdim = reduced_dims(p) or [], bool(p.get("keepdim", False))
    return (lambda x: torch.amax(x, dim=dim, keepdim=keepdim)), []


def silu(p):
    return (lambda x: F.silu(x)), []


def gelu(p):
    approximate = p.get("approximate", "none")
    return (lambda x: F.gelu(x, approximate=approximate)), []


# torch has no fused gated activation: the composition as written in models (vLLM's native path).
def silu_and_mul(p):
    def fn(x):
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up

    return fn, []


def gelu_and_mul(p):
    approximate = p.get("approximate", "none")

    def fn(x):
        gate, up = x.chunk(2, dim=-1)
        return F.gelu(gate, approximate=approximate) * up

    return fn, []


# torch has no rotary op: vLLM's native (torch) rotary embedding, query and key rotated in place.
def rope(p):
    is_neox = bool(p.get("is_neox", True))

    def rotate(x, cos, sin):
        rotary = cos.shape[-1] * 2
        part = x[..., :rotary]
        if is_neox:
            x1, x2 = part.chunk(2, dim=-1)
        else:
            x1, x2 = part[..., 0::2], part[..., 1::2]
        o1, o2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
        rotated = torch.cat((o1, o2), dim=-1) if is_neox else torch.stack((o1, o2), -1).flatten(-2)
        part.copy_(rotated)

    def fn(positions, query, key, cos_sin_cache):
        cos, sin = cos_sin_cache.index_select(0, positions).chunk(2, dim=-1)
        cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)
        rotate(query, cos, sin)
        rotate(key, cos, sin)

    return fn, [1, 2]


# torch has no ALiBi op: the bias materialised from the slopes (HF BLOOM's formula; the slopes,
# H numbers, are made once outside the timed calls).
def alibi(p):
    heads, seq_len = int(p["num_heads"]), int(p["seq_len"])
    dtype = DTYPES[p.get("out_dtype") or "float32"]
    m = 1 << (heads.bit_length() - 1)
    slopes = [2.0 ** (-8.0 * (h + 1) / m) for h in range(m)]
    slopes += [2.0 ** (-4.0 * (2 * k + 1) / m) for k in range(heads - m)]
    slopes = torch.tensor(slopes, dtype=torch.float32, device="cuda")

    def fn():
        position = torch.arange(seq_len, device="cuda", dtype=torch.float32)
        distance = position[None, :] - position[:, None]
        return (slopes[:, None, None] * distance[None]).to(dtype)

    return fn, []


def gemm(p):
    def fn(a, b, bias=None):
        return torch.mm(a, b) if bias is None else torch.addmm(bias, a, b)

    return fn, []


def bmm(p):
    return (lambda a, b: torch.matmul(a, b)), []


def grouped_gemm(p):
    # torch._grouped_mm: the MoE layout of manifest/gemm.yaml (rows sorted by group, offsets the
    # int32 group ends on the device).
    return (lambda x, w, offsets: torch._grouped_mm(x, w, offs=offsets)), []


OPS = {
    "RMSNormFwdOp": rms_norm,
    "LayerNormFwdOp": layer_norm,
    "FusedAddRMSNormFwdOp": fused_add_rms_norm,
    "ResidualRMSNormFwdOp": residual_rms_norm,
    "AddFwdOp": add,
    "MulFwdOp": mul,
    "SoftmaxFwdOp": softmax,
    "LogSoftmaxFwdOp": log_softmax,
    "SumFwdOp": sum_,
    "MeanFwdOp": mean,
    "AmaxFwdOp": amax,
    "SiluFwdOp": silu,
    "GeluFwdOp": gelu,
    "SiluAndMulFwdOp": silu_and_mul,
    "GeluAndMulFwdOp": gelu_and_mul,
    "RopeFwdOp": rope,
    "AlibiFwdOp": alibi,
    "GemmFwdOp": gemm,
    "BmmFwdOp": bmm,
    "GroupedGemmFwdOp": grouped_gemm,
}
# Compute-bound ops: their tables show TFLOP/s and the fraction of the 780 TFLOP/s bf16 ceiling
# beside GB/s (weight streaming, what bounds M <= 16).
COMPUTE_OPS = {"GemmFwdOp", "BmmFwdOp", "GroupedGemmFwdOp"}
CEILING_FLOPS_PER_S = 780e12
# Ops whose cases have no input tensor (the op makes its output from params alone).
NO_INPUTS = {"AlibiFwdOp"}


def group_ends(rows, groups, generator):
    """Group ends as tileops bench draws them for `values: "group_ends(M)"` (Note [Random group
    ends] in tools/workloads/workload_cases.cpp): sorted uniform cut points in [0, rows], about a
    quarter of the groups emptied, the last end equal to rows."""
    ends = torch.randint(0, rows + 1, (groups,), generator=generator, device="cuda").sort().values
    emptied = (torch.randint(0, 4, (groups,), generator=generator, device="cuda") == 0).tolist()
    ends = ends.tolist()
    for g in range(1, groups):
        if emptied[g]:
            ends[g] = ends[g - 1]
    ends[-1] = rows
    return torch.tensor(ends, dtype=torch.int32, device="cuda")


def random_input(spec, generator):
    dtype = DTYPES[spec["dtype"]]
    shape = spec["shape"]
    if spec.get("values", "").startswith("group_ends"):
        return group_ends(int(spec["values_bound"]), shape[0], generator)
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=generator, dtype=torch.float32, device="cuda").to(dtype)
        return t.masked_fill_(t == 0, 1.0)  # never time zeros (tools/workloads/workload_cases.hpp)
    return torch.randint(0, 9, shape, generator=generator, dtype=dtype, device="cuda")


class Sets:
    """The case's inputs replicated into enough sets to exceed 4x the L2, cycled by the calls."""

    def __init__(self, inputs, written):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        set_bytes = sum(t.numel() * t.element_size() for t in inputs if t is not None)
        # An op without inputs (it only writes) has nothing to rotate: two empty sets.
        self.count = 2 if set_bytes == 0 else max(
            2, min(4096, math.ceil(4 * max(l2, 50 << 20) / set_bytes)))
        self.sets = [[None if t is None else t.clone() for t in inputs] for _ in range(self.count)]
        self.pristine = {(k, i): self.sets[k][i].clone() for k in range(self.count) for i in written}

    def restore(self):
        for (k, i), saved in self.pristine.items():
            self.sets[k][i].copy_(saved)


def time_calls(fn, sets, warmup=3, batches=15, batch_seconds=1e-3):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for i in range(warmup):
            fn(*sets.sets[i % sets.count])
        sets.restore()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for k in range(sets.count):
            fn(*sets.sets[k])
        stop.record()
        stop.synchronize()
        rotation = max(start.elapsed_time(stop) * 1e-3, 1e-7)
        calls = sets.count * int(min(64, max(1, math.ceil(batch_seconds / rotation))))
        per_call = []
        for _ in range(batches):
            sets.restore()
            start.record()
            for c in range(calls):
                fn(*sets.sets[c % sets.count])
            stop.record()
            stop.synchronize()
            per_call.append(start.elapsed_time(stop) * 1e-3 / calls)
        sets.restore()
    torch.cuda.synchronize()
    return statistics.median(per_call)


def fmt_time(seconds):
    return "-" if seconds is None else f"{seconds * 1e6:.2f}"


def fmt_gbps(bytes_, seconds):
    return "-" if seconds is None else f"{bytes_ / seconds / 1e9:.0f}"


def fmt_fraction(bytes_, seconds):
    return "-" if seconds is None else f"{100 * bytes_ / CEILING_BYTES_PER_S / seconds:.1f}%"


def fmt_ratio(ours, theirs):
    return "-" if ours is None or theirs is None else f"{theirs / ours:.2f}x"


def fmt_tflops(flops, seconds):
    return "-" if seconds is None else f"{flops / seconds / 1e12:.1f}"


def fmt_flops_fraction(flops, seconds):
    return "-" if seconds is None else f"{100 * flops / CEILING_FLOPS_PER_S / seconds:.1f}%"


def compute_table(op, op_rows):
    """The table of a compute-bound op: TFLOP/s first, GB/s (of the roofline's bytes) beside."""
    lines = [f"## {op}", "",
             "| case | tileops us | TFLOP/s | % of 780 | GB/s | torch us | TFLOP/s | GB/s "
             "| vs torch | compile us | vs compile | kernels; notes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in op_rows:
        ours = r.get("time_s") if r.get("status") == "ok" else None
        f, b = r.get("flops") or 0, r.get("bytes") or 0
        kernels = ",".join(k.split("=")[-1] for k in r.get("kernels", []))
        notes = "; ".join(x for x in (kernels, r.get("status") if ours is None else "",
                                      r.get("note", "") if ours is None else "",
                                      r["torch_note"]) if x)
        lines.append(
            f"| {r['case']} | {fmt_time(ours)} | {fmt_tflops(f, ours)} "
            f"| {fmt_flops_fraction(f, ours)} | {fmt_gbps(b, ours)} | {fmt_time(r['eager_time_s'])} "
            f"| {fmt_tflops(f, r['eager_time_s'])} | {fmt_gbps(b, r['eager_time_s'])} "
            f"| {fmt_ratio(ours, r['eager_time_s'])} | {fmt_time(r['compile_time_s'])} "
            f"| {fmt_ratio(ours, r['compile_time_s'])} | {notes} |")
    lines.append("")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_json", help="the output of `tileops bench --json`")
    parser.add_argument("--ops", nargs="*", help="only these ops (default: every op known here)")
    parser.add_argument("--no-compile", action="store_true", help="eager only")
    parser.add_argument("--compile-ops", nargs="*",
                        help="torch.compile only these ops (default: every op); eager for all")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="stop starting new cases after this many seconds (default 420)")
    parser.add_argument("--markdown", help="also write the tables to this file")
    parser.add_argument("--json", help="also write every row, with torch's times, to this file")
    args = parser.parse_args()

    if not torch.cuda.is_available():
        print("torch_baseline: torch sees no CUDA device", file=sys.stderr)
        return 1
    with open(args.bench_json) as f:
        rows = json.load(f)
    torch.backends.cuda.matmul.allow_tf32 = False
    began = time.monotonic()
    generator = torch.Generator(device="cuda").manual_seed(0)
    results = []
    for row in rows:
        op = row.get("op")
        if op not in OPS or (args.ops and op not in args.ops):
            continue
        if not row.get("inputs") and op not in NO_INPUTS:
            continue
        if not str(row.get("device", "")).startswith("cuda"):
            continue  # a CPU run's cases are scaled down: nothing to compare on the GPU
        result = dict(row, eager_time_s=None, compile_time_s=None, torch_note="")
        results.append(result)
        if time.monotonic() - began > args.budget_s:
            result["torch_note"] = "not run: time budget spent"
            continue
        try:
            fn, written = OPS[op](row["params"])
            inputs = [None if s is None else random_input(s, generator) for s in row.get("inputs") or []]
            sets = Sets(inputs, written)
            result["eager_time_s"] = time_calls(fn, sets)
            if not args.no_compile and (args.compile_ops is None or op in args.compile_ops):
                # Each case compiles from a clean slate: the cases share their Python functions,
                # whose recompiles for new shapes would otherwise hit dynamo's recompile limit
                # (FailOnRecompileLimitHit under fullgraph=True).
                torch._dynamo.reset()
                compiled = torch.compile(fn, fullgraph=True, dynamic=False)
                result["compile_time_s"] = time_calls(compiled, sets)
            del sets, inputs
        except Exception as e:  # one failing case does not stop the others
            result["torch_note"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
        torch.cuda.empty_cache()
        print(f"[torch] {op} {row['case']}: eager {fmt_time(result['eager_time_s'])} us, "
              f"compile {fmt_time(result['compile_time_s'])} us {result['torch_note']}",
              file=sys.stderr, flush=True)

    name = torch.cuda.get_device_name(0)
    lines = [f"# tileops vs torch {torch.__version__} on {name}", "",
             "Times are CUDA-event medians per call with inputs rotated over more than 4x L2; "
             "GB/s and % of 4.25 TB/s count our manifest's roofline bytes for all three. "
             "Speed-up = torch time / tileops time.", ""]
    for op in OPS:
        op_rows = [r for r in results if r["op"] == op]
        if not op_rows:
            continue
        if op in COMPUTE_OPS:
            lines += compute_table(op, op_rows)
            continue
        lines += [f"## {op}", "",
                  "| case | tileops us | GB/s | % ceiling | eager us | GB/s | % | compile us | "
                  "GB/s | % | vs eager | vs compile | kernels; notes |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in op_rows:
            ours = r.get("time_s") if r.get("status") == "ok" else None
            b = r.get("bytes") or 0
            kernels = ",".join(k.split("=")[-1] for k in r.get("kernels", []))
            notes = "; ".join(x for x in (kernels, r.get("status") if ours is None else "",
                                          r.get("note", "") if ours is None else "",
                                          r["torch_note"]) if x)
            lines.append(
                f"| {r['case']} | {fmt_time(ours)} | {fmt_gbps(b, ours)} | {fmt_fraction(b, ours)} "
                f"| {fmt_time(r['eager_time_s'])} | {fmt_gbps(b, r['eager_time_s'])} "
                f"| {fmt_fraction(b, r['eager_time_s'])} | {fmt_time(r['compile_time_s'])} "
                f"| {fmt_gbps(b, r['compile_time_s'])} | {fmt_fraction(b, r['compile_time_s'])} "
                f"| {fmt_ratio(ours, r['eager_time_s'])} | {fmt_ratio(ours, r['compile_time_s'])} "
                f"| {notes} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
