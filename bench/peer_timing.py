"""Timing shared by the Python benchmark peers."""

import time


def measure(f, reps=5, min_s=0.1):
    """Median per-call seconds over at least reps calls and min_s seconds, after a warm-up call."""
    f()
    ts = []
    t0 = time.perf_counter()
    while len(ts) < reps or time.perf_counter() - t0 < min_s:
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2]
