"""GEMM peer for make bench: numpy (Debian python3-numpy) with OpenBLAS, 1 thread.

Prints "gemm/MxKxN/openblas GFLOP/s" lines and a "# ..." note naming the BLAS library and the
OpenBLAS kernel (openblas_get_corename through ctypes). Run with /usr/bin/python3,
OPENBLAS_NUM_THREADS=1, and OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset.
"""
import ctypes
import sys
from peer_timing import measure

import numpy as np

SHAPES = [(128, 768, 768), (128, 768, 3072), (128, 3072, 768), (16, 128, 128), (16, 128, 512), (512, 1024, 1024)]


def blas_library():
    """The BLAS shared object numpy loaded, and OpenBLAS's kernel name if it is OpenBLAS."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in path.lower() and ".so" in path:
                libs.add(path)
    core = None
    for path in sorted(libs):
        try:
            lib = ctypes.CDLL(path)
            fn = lib.openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        core = fn().decode()
        return path, core
    return ", ".join(sorted(libs)) or "unknown", core


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = np.random.default_rng(1)
    for m, k, n in SHAPES:
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        w = rng.uniform(-1, 1, (n, k)).astype(np.float32)
        c = np.empty((m, n), np.float32)
        wt = w.T
        t = measure(lambda: np.matmul(a, wt, out=c), reps, 0.3)
        print(f"gemm/{m}x{k}x{n}/openblas {2 * m * n * k / t / 1e9:.2f}")
    path, core = blas_library()
    print(f"# numpy {np.__version__} BLAS: {path}; OpenBLAS kernel: {core}")


if __name__ == "__main__":
    main()
