"""Forward peer for make bench: PyTorch (Debian python3-torch, with OpenBLAS) at batch 1, eval.

Builds BERT's encoder and pooler (the layout of HF's BertModel: post-LayerNorm, erf GELU,
absolute positions) with random weights for each model, times a forward pass on 1 thread
(or THREADS; run it with OPENBLAS_NUM_THREADS equal to THREADS), and exports each model with torch.onnx.export (opset 17) to
OUTDIR/<model>.onnx for the onnxruntime peers. Prints "fwd/<model>/torch ms" lines.
With models "gemm" it only exports y = x·Wᵀ (W a constant) for each GEMM shape of make bench.
Run with /usr/bin/python3 and OMP_WAIT_POLICY=PASSIVE.

usage: peer_torch.py OUTDIR [models] [reps] [threads]
"""
import math
import os
import sys
from peer_timing import measure

import torch
from torch import nn

PRESETS = {"tiny": (2, 128, 2), "mini": (4, 256, 4), "base": (12, 768, 12), "large": (24, 1024, 16)}
VOCAB, MAXPOS, TYPES, EPS = 30522, 512, 2, 1e-12


class Layer(nn.Module):
    def __init__(self, h, a):
        super().__init__()
        self.a, self.d = a, h // a
        self.q, self.k, self.v, self.o = (nn.Linear(h, h) for _ in range(4))
        self.ln1 = nn.LayerNorm(h, eps=EPS)
        self.i = nn.Linear(h, 4 * h)
        self.out = nn.Linear(4 * h, h)
        self.ln2 = nn.LayerNorm(h, eps=EPS)

    def forward(self, x):
        b, s, h = x.shape
        split = lambda t: t.view(b, s, self.a, self.d).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        ctx = (p @ v).transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.out(nn.functional.gelu(self.i(x))))


class Bert(nn.Module):
    def __init__(self, L, h, a):
        super().__init__()
        self.word = nn.Embedding(VOCAB, h)
        self.pos = nn.Embedding(MAXPOS, h)
        self.typ = nn.Embedding(TYPES, h)
        self.ln = nn.LayerNorm(h, eps=EPS)
        self.layers = nn.ModuleList(Layer(h, a) for _ in range(L))
        self.pool = nn.Linear(h, h)
        for p in self.parameters():
            nn.init.normal_(p, std=0.02)

    def forward(self, ids):
        s = ids.shape[1]
        pos = torch.arange(s).unsqueeze(0)
        x = self.ln(self.word(ids) + self.pos(pos) + self.typ(torch.zeros_like(ids)))
        for layer in self.layers:
            x = layer(x)
        return x, torch.tanh(self.pool(x[:, 0]))


def model_spec(key):
    for p in PRESETS:
        if key.startswith(p):
            return p, int(key[len(p):])
    raise ValueError(key)


GEMM_SHAPES = [(128, 768, 768), (128, 768, 3072), (128, 3072, 768), (16, 128, 128), (16, 128, 512), (512, 1024, 1024)]


class MatMul(nn.Module):
    """y = x·Wᵀ with W [N, K] a constant of the graph: the GEMM of a linear layer, for the ONNX peers."""

    def __init__(self, n, k):
        super().__init__()
        self.w = nn.Parameter(torch.rand(n, k) * 2 - 1)

    def forward(self, x):
        return x @ self.w.t()


def export_gemm(outdir):
    for m, k, n in GEMM_SHAPES:
        path = os.path.join(outdir, f"gemm_{m}x{k}x{n}.onnx")
        if not os.path.exists(path):
            torch.onnx.export(MatMul(n, k).eval(), (torch.rand(m, k),), path, input_names=["x"],
                              output_names=["y"], opset_version=17)


def main():
    outdir = sys.argv[1]
    models = (sys.argv[2] if len(sys.argv) > 2 else "base128,mini128,tiny16").split(",")
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(1)
    if models == ["gemm"]:
        export_gemm(outdir)
        return
    for key in models:
        preset, s = model_spec(key)
        m = Bert(*PRESETS[preset]).eval()
        ids = ((torch.arange(s) * 7919) % (VOCAB - 1000) + 1000).unsqueeze(0)
        with torch.no_grad():
            base = preset in ("base", "large")
            torch.set_num_threads(threads)
            t = measure(lambda: m(ids), reps, 0 if base else 0.2)
            print(f"fwd/{key}/torch{'' if threads == 1 else f'-{threads}t'} {t * 1e3:.3f}", flush=True)
            path = os.path.join(outdir, key + ".onnx")
            if not os.path.exists(path):
                torch.onnx.export(m, (ids,), path, input_names=["input_ids"],
                                  output_names=["last_hidden_state", "pooler_output"], opset_version=17)
    if threads == 1:
        print(f"# torch {torch.__version__} (BLAS through Debian's libblas.so.3 alternative; see the numpy line)")


if __name__ == "__main__":
    main()
