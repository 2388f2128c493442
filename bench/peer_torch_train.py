"""Training peer for make bench: PyTorch (Debian python3-torch, with OpenBLAS), one full step.

The same step `bertbench train` times: BERT with its pre-training heads (HF's BertForPreTraining
layout: post-LayerNorm, erf GELU, absolute positions, the MLM head's dense, GELU, LayerNorm and a
decoder tied to the word embeddings, NSP on the tanh pooler), float32, dropout 0.1 on (train
mode), batch B x 128 with the same ids, token types, MLM labels (every 7th position, from the
4th) and NSP labels as bertbench; forward, the summed MLM and NSP cross-entropy, backward,
clip_grad_norm_(1.0) and torch.optim.AdamW (lr 1e-4, weight decay 0.01 except biases and
LayerNorm weights, HF Trainer's grouping). Like bertlab, only the labelled positions go through
the MLM head (the other logits never reach the loss). Three warm-up steps, then the median of
reps steps. Prints "train/<model>128/torch[-Nt] tokens/s". Run with /usr/bin/python3,
OMP_WAIT_POLICY=PASSIVE and OPENBLAS_NUM_THREADS equal to THREADS.

usage: peer_torch_train.py models [reps] [threads] [batch] [stepfwd]

With stepfwd it also prints "stepfwd/<model>128/torch[-Nt] R": forward and backward over the
eval forward of the same batch, as bertbench train prints bertlab's.
"""
import math
import sys
import time

import torch
from torch import nn

from peer_numpy import blas_library
from peer_timing import measure

PRESETS = {"tiny": (2, 128, 2), "mini": (4, 256, 4), "base": (12, 768, 12), "large": (24, 1024, 16)}
VOCAB, MAXPOS, TYPES, EPS, DROP, S = 30522, 512, 2, 1e-12, 0.1, 128
IGNORE = -100


class Layer(nn.Module):
    def __init__(self, h, a):
        super().__init__()
        self.a, self.d = a, h // a
        self.q, self.k, self.v, self.o = (nn.Linear(h, h) for _ in range(4))
        self.ln1 = nn.LayerNorm(h, eps=EPS)
        self.i = nn.Linear(h, 4 * h)
        self.out = nn.Linear(4 * h, h)
        self.ln2 = nn.LayerNorm(h, eps=EPS)
        self.drop = nn.Dropout(DROP)

    def forward(self, x):
        b, s, h = x.shape
        split = lambda t: t.view(b, s, self.a, self.d).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        p = self.drop(torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d), dim=-1))
        ctx = (p @ v).transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.drop(self.o(ctx)))
        return self.ln2(x + self.drop(self.out(nn.functional.gelu(self.i(x)))))


class BertForPreTraining(nn.Module):
    def __init__(self, L, h, a):
        super().__init__()
        self.word = nn.Embedding(VOCAB, h)
        self.pos = nn.Embedding(MAXPOS, h)
        self.typ = nn.Embedding(TYPES, h)
        self.ln = nn.LayerNorm(h, eps=EPS)
        self.drop = nn.Dropout(DROP)
        self.layers = nn.ModuleList(Layer(h, a) for _ in range(L))
        self.pool = nn.Linear(h, h)
        self.mlm_dense = nn.Linear(h, h)
        self.mlm_ln = nn.LayerNorm(h, eps=EPS)
        self.mlm_bias = nn.Parameter(torch.zeros(VOCAB))
        self.nsp = nn.Linear(h, 2)
        for name, p in self.named_parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, types, labels, nsp):
        s = ids.shape[1]
        pos = torch.arange(s).unsqueeze(0)
        x = self.drop(self.ln(self.word(ids) + self.pos(pos) + self.typ(types)))
        for layer in self.layers:
            x = layer(x)
        pooled = torch.tanh(self.pool(x[:, 0]))
        flat = labels.view(-1)
        rows = (flat != IGNORE).nonzero().squeeze(1)
        h = x.reshape(-1, x.shape[-1]).index_select(0, rows)
        h = self.mlm_ln(nn.functional.gelu(self.mlm_dense(h)))
        logits = h @ self.word.weight.t() + self.mlm_bias
        loss = nn.functional.cross_entropy(logits, flat.index_select(0, rows))
        return loss + nn.functional.cross_entropy(self.nsp(pooled), nsp)


def no_decay(name):
    """HF Trainer's rule: biases and LayerNorm weights get no weight decay."""
    module = name.rsplit(".", 1)[0].split(".")[-1]
    return name.endswith("bias") or module.startswith("ln") or module.endswith("_ln")


def batch(B):
    n = B * S
    i = torch.arange(n)
    ids = (1000 + (i * 7919) % (VOCAB - 1000)).view(B, S)
    types = ((i % S) >= S // 2).long().view(B, S)
    labels = torch.where(i % 7 == 3, ids.view(-1), torch.full_like(i, IGNORE)).view(B, S)
    nsp = torch.arange(B) % 2
    return ids, types, labels, nsp


def main():
    models = sys.argv[1].split(",")
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    B = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    stepfwd = len(sys.argv) > 5 and sys.argv[5] == "stepfwd"
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    for key in models:
        m = BertForPreTraining(*PRESETS[key]).train()
        decay = [p for n, p in m.named_parameters() if not no_decay(n)]
        keep = [p for n, p in m.named_parameters() if no_decay(n)]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": keep, "weight_decay": 0.0}],
                                lr=1e-4, eps=1e-8)
        data = batch(B)

        def step():
            opt.zero_grad(set_to_none=True)
            m(*data).backward()
            nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()

        for _ in range(3):
            step()
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            step()
            ts.append(time.perf_counter() - t)
        ts.sort()
        tag = "" if threads == 1 else f"-{threads}t"
        print(f"train/{key}128/torch{tag} {B * S / ts[len(ts) // 2]:.0f}", flush=True)
        if stepfwd:
            # bertbench's stepfwd on PyTorch's side: forward and backward (train mode) over the
            # eval forward of the same batch (no_grad), medians of reps each.
            def fb():
                opt.zero_grad(set_to_none=True)
                m(*data).backward()

            def fwd():
                with torch.no_grad():
                    m(*data)

            med = {}
            for name, f in (("fb", fb), ("fwd", fwd)):
                m.train(name == "fb")
                med[name] = measure(f, reps, 0)
            m.train()
            print(f"stepfwd/{key}128/torch{tag} {med['fb'] / med['fwd']:.2f}", flush=True)
            print(f"# torch {key}128: forward and backward {med['fb'] * 1e3:.1f} ms, eval forward {med['fwd'] * 1e3:.1f} ms")
    if threads == 1:
        # Which BLAS ran, and OpenBLAS's kernel: the ratio to bertlab moves with it (its AVX-512
        # Cooperlake kernels on an EPYC "Turin" ran 243-252 GFLOP/s a core at BERT-Base's shapes,
        # about bertlab's own GEMM; Haswell's AVX2 131).
        path, core = blas_library()
        print(f"# torch training: {torch.__version__}, batch {B} x {S}, dropout {DROP}, AdamW + clip_grad_norm_(1.0), "
              f"MLM on the labelled positions only (as bertlab); BLAS: {path}; OpenBLAS kernel: {core}")


main()
