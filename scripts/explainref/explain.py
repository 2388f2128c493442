# An independent reference for core/explain: BERT written from HuggingFace's formulas
# (modeling_bert.py: BertEmbeddings, BertSelfAttention with head_mask, BertPooler,
# BertLMPredictionHead, the NSP head, BertFor{Sequence,Token}Classification's linear heads) in
# PyTorch float64 with autograd, on the weights of core/bert/testdata/bert-tiny-random. It
# writes, for one sentence pair with a [MASK]:
#   - for four outputs (an MLM candidate's logit at the mask, the NSP IsNext logit, a sequence
#     classifier's class logit, a token classifier's tag logit): the output, its gradient with
#     respect to the embedding output (hidden_states[0]), gradient x input per token, and
#     integrated gradients per token with 64 Gauss-Legendre steps (Captum's default method) for
#     the [MASK] and [PAD] baselines, as Captum's LayerIntegratedGradients on bert.embeddings
#     computes them;
#   - head importance (Michel et al. 2019): |d loss / d head_mask| at a mask of ones for the MLM
#     loss of the sentence (label: the candidate) and for a small set (the two sequences of the
#     bert-tiny-random fixture with their labels, mean over the set of the per-sequence value);
#   - the MLM logits at the mask with a head mask switching two heads off;
#   - the logit lens: the MLM head on every hidden state at the mask, top 5 per layer.
# The classifier heads are random (seeded) and written into the output, so the Go test builds
# the same task models.
#
#   /usr/bin/python3 scripts/explainref/explain.py core/bert/testdata/bert-tiny-random \
#       core/explain/testdata/explainref.json
# (Debian's python3-torch; no transformers, no safetensors package: a small reader below.)
import json, math, struct, sys
import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
folder, out_path = sys.argv[1], sys.argv[2]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        dt = {"F32": np.float32, "I64": np.int64}[info["dtype"]]
        a = np.frombuffer(data[lo:hi], dtype=dt).reshape(info["shape"])
        out[name] = torch.tensor(a.astype(np.float64) if dt == np.float32 else a)
    return out


cfg = json.load(open(folder + "/config.json"))
W = read_safetensors(folder + "/model.safetensors")
H, L, A = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
d = H // A
eps = cfg["layer_norm_eps"]
PAD, CLS, SEP, MASK = 0, 101, 102, 103


def ln(x, p):
    return F.layer_norm(x, (H,), W[p + ".weight"], W[p + ".bias"], eps)


def lin(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]


def embeddings(ids, types):  # [B, S] -> [B, S, H], BertEmbeddings in eval mode
    S = ids.shape[1]
    e = W["bert.embeddings.word_embeddings.weight"][ids] + W["bert.embeddings.token_type_embeddings.weight"][types]
    e = e + W["bert.embeddings.position_embeddings.weight"][torch.arange(S)][None]
    return ln(e, "bert.embeddings.LayerNorm")


def encoder(x, mask, head_mask):  # x [B, S, H], mask [B, S] of 0/1, head_mask [L, A]
    B, S, _ = x.shape
    ext = (1.0 - mask[:, None, None, :].double()) * torch.finfo(torch.float32).min
    hs = [x]
    for l in range(L):
        p = f"bert.encoder.layer.{l}."
        sh = lambda t: t.view(B, S, A, d).transpose(1, 2)
        q, k, v = sh(lin(x, p + "attention.self.query")), sh(lin(x, p + "attention.self.key")), sh(lin(x, p + "attention.self.value"))
        probs = (q @ k.transpose(-1, -2) / math.sqrt(d) + ext).softmax(-1)
        probs = probs * head_mask[l][None, :, None, None]
        ctx = (probs @ v).transpose(1, 2).reshape(B, S, H)
        a = ln(x + lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        x = ln(a + lin(F.gelu(lin(a, p + "intermediate.dense")), p + "output.dense"), p + "output.LayerNorm")
        hs.append(x)
    return hs


def pooled(h):
    return torch.tanh(lin(h[:, 0], "bert.pooler.dense"))


def mlm_logits(h):  # [..., H] -> [..., V]
    t = ln(F.gelu(lin(h, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
    return t @ W["bert.embeddings.word_embeddings.weight"].T + W["cls.predictions.bias"]


# "the city of paris is [MASK]" / "the big cat" in the fixture's vocabulary.
ids = torch.tensor([[CLS, 409, 633, 410, 1010, 414, MASK, SEP, 409, 579, 1002, SEP]])
types = torch.tensor([[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]])
mask = torch.ones_like(ids)
S = ids.shape[1]
pos = 6
ones = torch.ones(L, A)

gen = torch.Generator().manual_seed(14)
seq_w, seq_b = torch.randn(3, H, generator=gen) * 0.5, torch.randn(3, generator=gen) * 0.1
tok_w, tok_b = torch.randn(5, H, generator=gen) * 0.5, torch.randn(5, generator=gen) * 0.1

with torch.no_grad():
    cand = int(mlm_logits(encoder(embeddings(ids, types), mask, ones)[-1][0, pos]).argmax())

targets = {
    "mlm": ("mlm", pos, cand),
    "isnext": ("isnext", 0, 0),
    "class": ("class", 0, 1),
    "tag": ("tag", 2, 4),
}


def output(e, t):  # e: embedding output [B, S, H] -> the target's logit [B]
    kind, p, n = t
    h = encoder(e, mask.expand(e.shape[0], -1), ones)[-1]
    if kind == "mlm":
        return mlm_logits(h[:, p])[:, n]
    if kind == "isnext":
        return lin(pooled(h), "cls.seq_relationship")[:, n]
    if kind == "class":
        return (pooled(h) @ seq_w.T + seq_b)[:, n]
    return (h[:, p] @ tok_w.T + tok_b)[:, n]


def baseline_ids(kind):
    b = ids.clone()
    special = (ids == CLS) | (ids == SEP)
    b[~special] = MASK if kind == "mask" else PAD
    return b


steps = 64
nodes, weights = np.polynomial.legendre.leggauss(steps)
alphas = torch.tensor(0.5 * (1 + nodes))
wts = torch.tensor(0.5 * weights)

x = embeddings(ids, types).detach()
res = {"note": "written by scripts/explainref/explain.py; see core/explain/testdata/SOURCE.md",
       "input_ids": ids[0].tolist(), "token_type_ids": types[0].tolist(), "mask_position": pos,
       "candidate": cand, "ig_steps": steps,
       "seq_classifier": {"weight": seq_w.tolist(), "bias": seq_b.tolist()},
       "token_classifier": {"weight": tok_w.tolist(), "bias": tok_b.tolist()},
       "embedding_output": x[0].tolist(), "targets": {}}
for name, t in targets.items():
    e = x.clone().requires_grad_(True)
    y = output(e, t)
    (g,) = torch.autograd.grad(y.sum(), e)
    r = {"kind": t[0], "position": t[1], "index": t[2], "logit": y.item(),
         "grad": g[0].tolist(), "gxi": (g * x).sum(-1)[0].tolist(), "ig": {}}
    for base in ("mask", "pad"):
        xb = embeddings(baseline_ids(base), types).detach()
        e = (xb + alphas[:, None, None] * (x - xb)).requires_grad_(True)  # [steps, S, H]
        (g,) = torch.autograd.grad(output(e, t).sum(), e)
        attr = ((x - xb) * (wts[:, None, None] * g).sum(0, keepdim=True)).sum(-1)[0]
        with torch.no_grad():
            yb = output(xb, t).item()
        r["ig"][base] = {"attributions": attr.tolist(), "baseline_logit": yb,
                         "sum": attr.sum().item(), "delta": y.item() - yb}
    res["targets"][name] = r


def mlm_loss(ids_, types_, mask_, labels, hm):
    h = encoder(embeddings(ids_, types_), mask_, hm)[-1]
    return F.cross_entropy(mlm_logits(h).reshape(-1, W["cls.predictions.bias"].shape[0]), labels.reshape(-1), ignore_index=-100)


hm = torch.ones(L, A, requires_grad=True)
labels = torch.full_like(ids, -100)
labels[0, pos] = cand
(g,) = torch.autograd.grad(mlm_loss(ids, types, mask, labels, hm), hm)
res["importance_sentence"] = {"labels": labels[0].tolist(), "grad": g.tolist(), "importance": g.abs().tolist()}

inp = read_safetensors(folder + "/inputs.safetensors")
imp = torch.zeros(L, A)
for b in range(inp["input_ids"].shape[0]):
    sl = slice(b, b + 1)
    hm = torch.ones(L, A, requires_grad=True)
    (g,) = torch.autograd.grad(mlm_loss(inp["input_ids"][sl], inp["token_type_ids"][sl], inp["attention_mask"][sl], inp["labels"][sl], hm), hm)
    imp += g.abs() / inp["input_ids"].shape[0]
res["importance_set"] = imp.tolist()

with torch.no_grad():
    off = torch.ones(L, A)
    off[0, 1] = 0
    off[1, 2] = 0
    h = encoder(x, mask, off)[-1]
    res["ablation"] = {"head_mask": off.tolist(), "mlm_logits": mlm_logits(h[0, pos]).tolist()}
    hs = encoder(x, mask, ones)
    lens = []
    for l, h in enumerate(hs):
        pr = mlm_logits(h[0, pos]).softmax(-1)
        top = pr.topk(5)
        lens.append({"layer": l, "ids": top.indices.tolist(), "probs": top.values.tolist(), "candidate_prob": pr[cand].item()})
    res["lens"] = lens

with open(out_path, "w") as f:
    json.dump(res, f, indent=1)
print("candidate", cand, {k: (round(v["logit"], 4), round(v["ig"]["mask"]["sum"] - v["ig"]["mask"]["delta"], 6)) for k, v in res["targets"].items()})
