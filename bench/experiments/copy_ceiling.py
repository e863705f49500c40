#!/usr/bin/env python3
"""How close a plain device-to-device copy comes to the 4.25 TB/s copy ceiling at each size: the
bound any memory-bound op of that size meets (a prefill norm moves 32 MB: 16 read, 16 written).

    python3 bench/experiments/copy_ceiling.py

Each size: CUDA-graph replays of back-to-back `dst.copy_(src)` (cudaMemcpyAsync) cycling through
buffer pairs that exceed 4x the L2, median of 9 replays; GB/s counts the bytes read and written.

Then the decode shapes of the gated activations (manifest/activation.yaml): torch's own
elementwise kernel, `torch.mul(x[:, :N], x[:, N:], out=o)`, on x [B, 2N] bfloat16, timed the same
way: what one SM-driven kernel moving those bytes takes, the floor under SiluAndMul's decode rows.
"""
import statistics

import torch

CEILING = 4.25e12


def seconds_per_call(call, sets):
    """The median time of one call(i) among graph replays of back-to-back calls over the sets."""
    calls = sets * max(1, 64 // sets)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for i in range(sets):
            call(i)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in range(calls):
            call(c % sets)
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(9):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3 / calls)
    del graph
    return statistics.median(times)


def main():
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    print(f"{'bytes copied':>14}  {'us per copy':>11}  {'GB/s':>7}  of 4.25 TB/s")
    for mib in (2, 8, 16, 32, 64, 256, 1024):
        size = mib << 20
        pairs = max(2, (4 * l2 + 2 * size - 1) // (2 * size))
        src = [torch.randn(size // 4, device="cuda") for _ in range(pairs)]
        dst = [torch.empty_like(s) for s in src]
        t = seconds_per_call(lambda i: dst[i].copy_(src[i]), pairs)
        rate = 2 * size / t
        print(f"{size:>14}  {t * 1e6:>11.2f}  {rate / 1e9:>7.0f}  {100 * rate / CEILING:5.1f}%",
              flush=True)
        del src, dst
        torch.cuda.empty_cache()

    print(f"\n{'torch.mul, gated decode shape':>34}  {'bytes':>9}  {'us':>6}")
    for rows, n in ((1, 14336), (32, 14336)):
        size = rows * 3 * n * 2  # x [rows, 2n] read, o [rows, n] written
        sets = max(2, (4 * l2 + size - 1) // size)
        xs = [torch.randn(rows, 2 * n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
        outs = [torch.empty(rows, n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
        t = seconds_per_call(lambda i: torch.mul(xs[i][:, :n], xs[i][:, n:], out=outs[i]), sets)
        print(f"{f'x [{rows}, 2 x {n}]':>34}  {size:>9}  {t * 1e6:>6.2f}", flush=True)
        del xs, outs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
