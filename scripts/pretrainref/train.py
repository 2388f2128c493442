# An independent BERT masked-LM trainer: PyTorch, HF BertForMaskedLM's architecture and init
# (post-LayerNorm, exact GELU, eps 1e-12, N(0, 0.02), tied decoder), the position embeddings
# started from sinusoids as `bertlab pretrain --position-init sinusoidal`, no dropout, AdamW as
# HF's Trainer (no decay on biases and LayerNorm; linear warm-up over 4% then linear decay;
# clipping 1.0), on the very batches bertlab's recipe draws (cmd/pretrainref-dump). It tells
# a training bug from a recipe too weak for its budget: see scripts/PRETRAIN.md.
#
#   /usr/bin/python3 scripts/pretrainref/train.py PRESET SCHEDULE_STEPS RUN_STEPS LR [THREADS] [DIR]
#   e.g. tiny 9600 1440 5e-4 1 /tmp/tref   (Debian's python3-torch)
import math, sys, time
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
torch.set_num_threads(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
preset, steps_total, steps_run, lr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
L, H, A, I = {"tiny": (2, 128, 2, 512), "mini": (4, 256, 4, 1024)}[preset]
V, P, B = 8000, 512, 8

def load(path):
    a = np.fromfile(path, dtype=np.int32)
    n, s = a[0], a[1]
    a = a[2:].reshape(3, n, s)
    return torch.tensor(a[0], dtype=torch.long), torch.tensor(a[1], dtype=torch.long), torch.tensor(a[2], dtype=torch.long)

d = sys.argv[6] if len(sys.argv) > 6 else "/tmp/tref"
tr_ids, tr_lab, tr_mask = load(d + "/train.bin")
ho_ids, ho_lab, ho_mask = load(d + "/heldout.bin")

class Layer(nn.Module):
    def __init__(s):
        super().__init__()
        s.q, s.k, s.v, s.o = nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H), nn.Linear(H, H)
        s.ln1, s.ln2 = nn.LayerNorm(H, eps=1e-12), nn.LayerNorm(H, eps=1e-12)
        s.i, s.out = nn.Linear(H, I), nn.Linear(I, H)
    def forward(s, x, ext):
        b, n, _ = x.shape
        sh = lambda t: t.view(b, n, A, H // A).transpose(1, 2)
        q, k, v = sh(s.q(x)), sh(s.k(x)), sh(s.v(x))
        sc = q @ k.transpose(-1, -2) / math.sqrt(H // A) + ext
        ctx = (sc.softmax(-1) @ v).transpose(1, 2).reshape(b, n, H)
        x = s.ln1(x + s.o(ctx))
        return s.ln2(x + s.out(F.gelu(s.i(x))))

class Bert(nn.Module):
    def __init__(s):
        super().__init__()
        s.we, s.pe, s.te = nn.Embedding(V, H, padding_idx=0), nn.Embedding(P, H), nn.Embedding(2, H)
        s.ln = nn.LayerNorm(H, eps=1e-12)
        s.layers = nn.ModuleList([Layer() for _ in range(L)])
        s.tdense, s.tln = nn.Linear(H, H), nn.LayerNorm(H, eps=1e-12)
        s.bias = nn.Parameter(torch.zeros(V))
        for m in s.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.data.normal_(0, 0.02)
            if isinstance(m, nn.Linear):
                m.bias.data.zero_()
        s.we.weight.data[0].zero_()
        # bertlab's --position-init sinusoidal: RMS = initializer_range.
        pos = torch.arange(P, dtype=torch.float64)[:, None]
        i = torch.arange(0, H, 2, dtype=torch.float64)[None, :]
        a = pos * torch.pow(10000.0, -i / H)
        pe = torch.zeros(P, H, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
        s.pe.weight.data.copy_((0.02 * math.sqrt(2) * pe).float())
    def forward(s, ids, mask, rows):
        b, n = ids.shape
        x = s.ln(s.we(ids) + s.pe(torch.arange(n))[None] + s.te(torch.zeros_like(ids)))
        ext = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        for l in s.layers:
            x = l(x, ext)
        h = x.reshape(b * n, H)[rows]
        h = s.tln(F.gelu(s.tdense(h)))
        return h @ s.we.weight.T + s.bias

m = Bert()
lnp = {id(p) for mod in m.modules() if isinstance(mod, nn.LayerNorm) for p in mod.parameters()}
decay = [p for n, p in m.named_parameters() if not n.endswith("bias") and id(p) not in lnp]
nodecay = [p for n, p in m.named_parameters() if n.endswith("bias") or id(p) in lnp]
print("decay", sum(p.numel() for p in decay), "no decay", sum(p.numel() for p in nodecay), flush=True)
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": nodecay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.999), eps=1e-6)
warm = steps_total // 25
sched = lambda s: s / max(1, warm) if s < warm else max(0.0, (steps_total - s) / max(1, steps_total - warm))

def evaluate():
    m.eval()
    top1 = n = 0
    nll = 0.0
    with torch.no_grad():
        for lo in range(0, len(ho_ids), 32):
            ids, lab, mk = ho_ids[lo:lo+32], ho_lab[lo:lo+32], ho_mask[lo:lo+32]
            flat = lab.reshape(-1)
            rows = (flat != -100).nonzero().squeeze(1)
            logits = m(ids, mk, rows)
            y = flat[rows]
            top1 += (logits.argmax(-1) == y).sum().item()
            nll += F.cross_entropy(logits, y, reduction="sum").item()
            n += len(y)
    m.train()
    return top1 / n, nll / n, n

t0 = time.time()
for step in range(steps_run):
    for g in opt.param_groups:
        g["lr"] = lr * sched(step)
    sl = slice(step * B, (step + 1) * B)
    ids, lab, mk = tr_ids[sl], tr_lab[sl], tr_mask[sl]
    flat = lab.reshape(-1)
    rows = (flat != -100).nonzero().squeeze(1)
    loss = F.cross_entropy(m(ids, mk, rows), flat[rows])
    opt.zero_grad()
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    if (step + 1) % 240 == 0:
        acc, l, n = evaluate()
        print(f"step {step+1} loss {loss.item():.3f} gn {gn:.2f} heldout top-1 {acc:.4f} loss {l:.3f} n {n} ({time.time()-t0:.0f} s)", flush=True)
