#!/usr/bin/env python3
"""How close a plain device-to-device copy comes to the 4.25 TB/s copy ceiling at each size: the
bound any memory-bound op of that size meets (a prefill norm moves 32 MB: 16 read, 16 written).

    python3 bench/experiments/copy_ceiling.py

Each size: CUDA-graph replays of back-to-back `dst.copy_(src)` (cudaMemcpyAsync) cycling through
buffer pairs that exceed 4x the L2, median of 9 replays; GB/s counts the bytes read and written.
"""
import statistics

import torch

CEILING = 4.25e12


def main():
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    print(f"{'bytes copied':>14}  {'us per copy':>11}  {'GB/s':>7}  of 4.25 TB/s")
    for mib in (2, 8, 16, 32, 64, 256, 1024):
        size = mib << 20
        pairs = max(2, (4 * l2 + 2 * size - 1) // (2 * size))
        src = [torch.randn(size // 4, device="cuda") for _ in range(pairs)]
        dst = [torch.empty_like(s) for s in src]
        calls = pairs * max(1, 64 // pairs)
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            for d, s in zip(dst, src):
                d.copy_(s)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for c in range(calls):
                dst[c % pairs].copy_(src[c % pairs])
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
        t = statistics.median(times)
        rate = 2 * size / t
        print(f"{size:>14}  {t * 1e6:>11.2f}  {rate / 1e9:>7.0f}  {100 * rate / CEILING:5.1f}%",
              flush=True)
        del graph, src, dst
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
