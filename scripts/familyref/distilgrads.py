# A gradient fixture for DistilBERT's distillation loss in core/bert (ForwardBackwardDistil with
# a temperature and the cosine term): familyref.py's independent float64 PyTorch
# DistilBertForMaskedLM as the student, targets of a teacher made up at random (its masked-LM
# logits and last hidden states), and DistilBERT's loss (distiller.py) differentiated by
# autograd:
#   loss = 2·CE(labels) + 5·T²·KL(softmax(t/T) ‖ softmax(s/T)) + 1·mean(1 − cos(h_s, h_t))
# with T = 2, the CE and KL means over the labelled positions (restrict_ce_to_mask), the cosine
# mean over the attended tokens. The word embeddings' lookup has padding_idx (no gradient from
# pad ids, as nn.Embedding(padding_idx) gives none); the decoder is tied to them.
# It writes familyref.py's files (config.json, model.safetensors, inputs.*, outputs.safetensors
# with logits, last_hidden_state and loss) and
#   distil.safetensors   teacher_mlm [n, V] (softmax(t/T) at the labelled positions, in order),
#                        teacher_hidden [B, S, H], and in the metadata the weights and T
#   grads.safetensors    d loss / d every parameter under model.safetensors' names
#
#   /usr/bin/python3 scripts/familyref/distilgrads.py core/bert/testdata
import json, os, sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import familyref as fr  # noqa: E402
from familygrads import GradWeights  # noqa: E402

W_HARD, W_SOFT, W_COS, T = 2.0, 5.0, 1.0, 2.0


def distil(out_dir, seed):
    B, S, HID, VOCAB, INTER, LAYERS = fr.B, fr.S, fr.HID, fr.VOCAB, fr.INTER, fr.LAYERS
    P, PAD, MASK = 16, 0, 4
    W = GradWeights(seed)
    W.normal("word_embeddings", (VOCAB, HID), 0.5)
    W.w["word_embeddings"][PAD] = 0
    W.normal("position_embeddings", (P, HID), 0.5)
    W.layernorm("emb_ln", HID)
    for li in range(LAYERS):
        for part, (o, i) in {"q_lin": (HID, HID), "k_lin": (HID, HID), "v_lin": (HID, HID),
                             "out_lin": (HID, HID), "lin1": (INTER, HID), "lin2": (HID, INTER)}.items():
            W.linear(f"l{li}.{part}", o, i)
        W.layernorm(f"l{li}.sa_ln", HID)
        W.layernorm(f"l{li}.out_ln", HID)
    W.linear("vocab_transform", HID, HID)
    W.layernorm("vocab_layer_norm", HID)
    W.normal("vocab_projector.bias", (VOCAB,), 0.1)

    # Sequence 0 holds a pad id at an attended position; sequence 1 is padded after 6 tokens.
    ids = torch.tensor([[2, 17, MASK, 55, PAD, 91, MASK, 33, 118, 3],
                        [2, 64, 8, MASK, 40, 3, PAD, PAD, PAD, PAD]])
    mask = torch.tensor([[1] * 10, [1] * 6 + [0] * 4])
    labels = torch.full((B, S), -100)
    labels[0, 2], labels[0, 6], labels[1, 3], labels[1, 1] = 71, 12, 99, 64

    eps = 1e-12
    act = fr.ACTS["gelu"]
    x = F.embedding(ids, W.get("word_embeddings"), padding_idx=PAD) + W.get("position_embeddings")[:S]
    e = fr.layer_norm(W, x, "emb_ln", eps)
    names = lambda li: {"q": f"l{li}.q_lin", "k": f"l{li}.k_lin", "v": f"l{li}.v_lin", "o": f"l{li}.out_lin",
                        "ln1": f"l{li}.sa_ln", "i": f"l{li}.lin1", "f": f"l{li}.lin2", "ln2": f"l{li}.out_ln"}
    hs, atts, rec = fr.encoder(W, e, mask, names, act, eps, scale_q_first=True)
    logits = fr.mlm_head(W, hs[-1], "vocab_transform", "vocab_layer_norm", "vocab_projector.bias", act, eps, rec)

    # The teacher's targets, at random.
    rng = np.random.default_rng(seed + 1000)
    sel = labels.reshape(-1) != -100
    n = int(sel.sum())
    t_logits = torch.tensor((3 * rng.standard_normal((n, VOCAB))).astype(np.float32).astype(np.float64))
    t_mlm = torch.tensor(torch.softmax(t_logits / T, -1).numpy().astype(np.float32).astype(np.float64))
    t_hidden = torch.tensor(rng.standard_normal((B, S, HID)).astype(np.float32).astype(np.float64))

    s_sel = logits.reshape(-1, VOCAB)[sel]
    hard = F.cross_entropy(s_sel, labels.reshape(-1)[sel])
    soft = F.kl_div(F.log_softmax(s_sel / T, -1), t_mlm, reduction="batchmean") * T * T
    att = mask.reshape(-1) == 1
    cos = (1 - F.cosine_similarity(hs[-1].reshape(-1, HID)[att], t_hidden.reshape(-1, HID)[att], dim=-1)).mean()
    loss = W_HARD * hard + W_SOFT * soft + W_COS * cos
    loss.backward()

    hf = {"distilbert.embeddings.word_embeddings.weight": "word_embeddings",
          "distilbert.embeddings.position_embeddings.weight": "position_embeddings",
          "distilbert.embeddings.LayerNorm.weight": "emb_ln.weight", "distilbert.embeddings.LayerNorm.bias": "emb_ln.bias",
          "vocab_projector.bias": "vocab_projector.bias"}
    for li in range(LAYERS):
        lp = f"distilbert.transformer.layer.{li}."
        for ours, theirs in [("q_lin", "attention.q_lin"), ("k_lin", "attention.k_lin"), ("v_lin", "attention.v_lin"),
                             ("out_lin", "attention.out_lin"), ("sa_ln", "sa_layer_norm"), ("lin1", "ffn.lin1"),
                             ("lin2", "ffn.lin2"), ("out_ln", "output_layer_norm")]:
            for s_ in ("weight", "bias"):
                hf[f"{lp}{theirs}.{s_}"] = f"l{li}.{ours}.{s_}"
    for s_ in ("weight", "bias"):
        hf[f"vocab_transform.{s_}"] = f"vocab_transform.{s_}"
        hf[f"vocab_layer_norm.{s_}"] = f"vocab_layer_norm.{s_}"
    cfg = {"architectures": ["DistilBertForMaskedLM"], "model_type": "distilbert", "activation": "gelu",
           "attention_dropout": 0.1, "dim": HID, "dropout": 0.1, "hidden_dim": INTER, "initializer_range": 0.02,
           "max_position_embeddings": P, "n_heads": fr.HEADS, "n_layers": LAYERS, "pad_token_id": PAD,
           "sinusoidal_pos_embds": False, "tie_weights_": True, "vocab_size": VOCAB}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    f32 = lambda t: t.detach().numpy().astype(np.float32)
    fr.write_safetensors(os.path.join(out_dir, "model.safetensors"), {k: W.w[v] for k, v in hf.items()}, {"format": "pt"})
    inputs = {"input_ids": ids, "attention_mask": mask, "labels": labels}
    fr.write_safetensors(os.path.join(out_dir, "inputs.safetensors"), {k: v.numpy().astype(np.int64) for k, v in inputs.items()})
    with open(os.path.join(out_dir, "inputs.json"), "w") as f:
        json.dump({k: v.tolist() for k, v in inputs.items()}, f)
        f.write("\n")
    fr.write_safetensors(os.path.join(out_dir, "outputs.safetensors"),
                         {"logits": f32(logits), "last_hidden_state": f32(hs[-1]), "loss": f32(loss.reshape(1)),
                          "hard": f32(hard.reshape(1)), "soft": f32(soft.reshape(1)), "cosine": f32(cos.reshape(1))})
    fr.write_safetensors(os.path.join(out_dir, "distil.safetensors"),
                         {"teacher_mlm": f32(t_mlm), "teacher_hidden": f32(t_hidden)},
                         {"hard": str(W_HARD), "soft": str(W_SOFT), "cosine": str(W_COS), "temperature": str(T)})
    grads = {}
    for name, ours in hf.items():
        g = W.leaves[ours].grad
        grads[name] = (torch.zeros_like(W.leaves[ours]) if g is None else g).detach().numpy().astype(np.float32)
    fr.write_safetensors(os.path.join(out_dir, "grads.safetensors"), grads)
    with open(os.path.join(out_dir, "SOURCE.md"), "w") as f:
        f.write(f"Made by `/usr/bin/python3 scripts/familyref/distilgrads.py core/bert/testdata` (PyTorch float64, stored as "
                f"float32; see the script's header).\n\nDistilBertForMaskedLM student: vocab {VOCAB}, dim {HID}, {LAYERS} "
                f"layers of {fr.HEADS} heads, hidden_dim {INTER}, gelu, learned positions, pad id {PAD} (a pad id at an "
                f"attended position in sequence 0; sequence 1 padded after 6 tokens). Teacher targets at random. Loss "
                f"{W_HARD}·CE + {W_SOFT}·T²·KL + {W_COS}·(1 − cos), T = {T}: {loss.item()!r} (CE {hard.item()!r}, "
                f"T²·KL {soft.item()!r}, 1 − cos {cos.item()!r}).\n")


if __name__ == "__main__":
    distil(os.path.join(sys.argv[1], "distilbert-grads-distil"), 25)
