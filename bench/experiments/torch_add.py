"""torch.add on the shapes of binary_variants.cu, timed the same way (rotated sets, CUDA events
around batches, the median): the reference those variants chase."""
import statistics

import torch


def time_us(fn, sets, calls=8, batches=15):
    for i in range(3):
        fn(*sets[i % len(sets)])
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per_call = []
    for _ in range(batches):
        start.record()
        for c in range(calls):
            fn(*sets[c % len(sets)])
        stop.record()
        stop.synchronize()
        per_call.append(start.elapsed_time(stop) * 1e3 / calls)
    return statistics.median(per_call)


def main():
    rows, cols = 16384, 8192
    new = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16)  # noqa: E731
    same = [(new(rows, cols), new(rows, cols)) for _ in range(2)]
    bias = [(new(rows, cols), new(cols)) for _ in range(2)]
    for name, sets, nbytes in (("torch add same-shape", same, 3 * rows * cols * 2),
                               ("torch add bias", bias, 2 * rows * cols * 2 + cols * 2)):
        us = time_us(torch.add, sets)
        print(f"{name:44s} {us:9.2f} us {nbytes / us / 1e3:8.0f} GB/s "
              f"{100 * nbytes / us / 1e3 / 4250:6.1f}%")


if __name__ == "__main__":
    main()
