# An independent reference for BERT's family in core/bert: DistilBERT (DistilBertModel,
# DistilBertForMaskedLM) and RoBERTa (RobertaForMaskedLM), written from the formulas of
# HuggingFace transformers' modeling_distilbert.py and modeling_roberta.py (embeddings, post-LN
# self-attention and feed-forward blocks, the masked-LM heads) in PyTorch float64, on random
# float32 weights at awkward sizes (head size 24, 3 layers, padding in the batch). It writes one
# HF model folder per fixture:
#   config.json, model.safetensors     the model as transformers saves it (the family's names,
#                                      tied decoder left out)
#   inputs.json, inputs.safetensors    I64 input_ids, attention_mask (token_type_ids for
#                                      RoBERTa), labels [2, 10] (-100 = not predicted)
#   outputs.safetensors                hidden_states.0..3 (0 = embedding output), attentions.0..2
#                                      (after softmax), last_hidden_state; with the MLM head
#                                      logits [2, 10, V] and loss (mean cross-entropy over labels
#                                      not -100)
#   intermediates.safetensors          per layer layer.N.query/key/value (before the head split),
#                                      layer.N.scores (scaled, before the mask), layer.N.context
#                                      (heads merged), layer.N.attention_output (after the first
#                                      LayerNorm), layer.N.intermediate (after the activation);
#                                      mlm_transform with the MLM head
#   SOURCE.md                          what the fixture holds
# Fixtures:
#   distilbert-tiny-random      DistilBertForMaskedLM, learned positions, activation gelu
#   distilbert-tiny-sinusoidal  DistilBertModel (bare names), sinusoidal_pos_embds, activation relu
#   roberta-tiny-random         RobertaForMaskedLM, hidden_act gelu_new (the LM head's GELU stays
#                               exact), layer_norm_eps 1e-5, type_vocab_size 1, a stale
#                               roberta.embeddings.position_ids buffer, a pad id at an attended
#                               position (it keeps position padding_idx)
#   albert-tiny-random          AlbertForPreTraining (modeling_albert.py): embedding_size 16 apart
#                               from hidden 48, 3 layers sharing one group, token types, the SOP
#                               head; outputs prediction_logits, sop_logits, pooler_output and
#                               loss (masked LM + sentence order); intermediates add "embeddings"
#                               (the embedding LayerNorm's output before embedding_hidden_mapping_in)
#   albert-tiny-groups          AlbertModel (bare names), 3 layers over 2 groups (blocks 0, 1 run
#                               group 0, block 2 group 1: int(i / (3 / 2))), embedding_size 24
#   electra-tiny-discriminator  ElectraForPreTraining (modeling_electra.py): embedding_size 16 apart
#                               from hidden 48 (embeddings_project), logits [2, 10] (one a token,
#                               replaced > 0) and loss (binary cross-entropy of labels 0/1 over
#                               the attended tokens)
#   electra-tiny-generator      ElectraForMaskedLM: embedding_size equal to hidden (no projection),
#                               hidden_act gelu_new in the layers while generator_predictions'
#                               GELU stays exact; logits [2, 10, V], loss
#   deberta-tiny-random         DebertaV2ForMaskedLM (modeling_deberta_v2.py, the legacy
#                               cls.predictions head): relative_attention with c2p and p2c,
#                               share_att_key, position_buckets 8 (log buckets up to
#                               max_relative_positions 16), norm_rel_ebd layer_norm, no absolute
#                               positions, no token types, layer_norm_eps 1e-7; intermediates add
#                               layer.N.c2p and layer.N.p2c, the two terms of layer.N.scores;
#                               parts.safetensors (both DeBERTa fixtures) holds every term of the
#                               scores apart, layer.N.c2c (q_i.k_j), layer.N.c2p, layer.N.p2c
#                               (each divided by the scale), layer.N.sum (their sum, the scores
#                               before the mask) and layer.N.probs (after XSoftmax): [B, A, S, S]
#   deberta-tiny-nobuckets      DebertaV2Model (bare names): c2p only, no buckets and
#                               max_relative_positions 6 < the 10 tokens (clamped offsets),
#                               position_biased_input, two token types, no rel LayerNorm
#
#   /usr/bin/python3 scripts/familyref/familyref.py core/bert/testdata
# (Debian's python3-torch; no transformers, no safetensors package: a small writer below.)
import json, math, os, struct, sys
import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

B, S = 2, 10
VOCAB, HID, HEADS, INTER, LAYERS = 120, 48, 2, 64, 3  # head size 24

# fillmask.py sets INPUTS to (input_ids, token_type_ids, attention_mask) [B, S] (and B, S, VOCAB
# to match) to run a family on its own batch instead of the fixed one; the labels are then all
# -100 (no loss).
INPUTS = None


def batch_inputs(ids, types, mask, labels):
    if INPUTS is None:
        return ids, types, mask, labels
    ids, types, mask = INPUTS
    return ids, types, mask, torch.full(ids.shape, -100)


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> numpy array (float32 or int64)."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        dt = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}[a.dtype]
        b = a.tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


class Weights:
    """Random float32 weights under HF names; get() gives them as float64 tensors."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.w = {}

    def normal(self, name, shape, std, mean=0.0):
        self.w[name] = (mean + std * self.rng.standard_normal(shape)).astype(np.float32)

    def linear(self, name, out, inp):
        self.normal(name + ".weight", (out, inp), 0.15)
        self.normal(name + ".bias", (out,), 0.1)

    def layernorm(self, name, n):
        self.normal(name + ".weight", (n,), 0.1, 1.0)
        self.normal(name + ".bias", (n,), 0.1)

    def get(self, name):
        return torch.tensor(self.w[name].astype(np.float64))


# The shared blocks, once for every family: each takes the names of its parameters.
def layer_norm(W, x, name, eps):
    return F.layer_norm(x, (x.shape[-1],), W.get(name + ".weight"), W.get(name + ".bias"), eps)


def linear(W, x, name):
    return x @ W.get(name + ".weight").T + W.get(name + ".bias")


ACTS = {
    "gelu": lambda x: x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0))),
    "gelu_new": lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
    "relu": lambda x: torch.clamp(x, min=0),
}


def block(W, x, mask, n, act, eps, rec, li, scale_q_first):
    """One post-LN transformer layer. n: the names of its parts; mask [B, S] of 0/1."""
    d = HID // HEADS
    q, k, v = linear(W, x, n["q"]), linear(W, x, n["k"]), linear(W, x, n["v"])  # [B, S, H]
    split = lambda t: t.view(B, S, HEADS, d).transpose(1, 2)  # [B, A, S, d]
    qh, kh, vh = split(q), split(k), split(v)
    if scale_q_first:  # DistilBERT divides the queries, then multiplies
        scores = (qh / math.sqrt(d)) @ kh.transpose(2, 3)
    else:  # BERT and RoBERTa divide the products
        scores = (qh @ kh.transpose(2, 3)) / math.sqrt(d)
    masked = scores.masked_fill((mask == 0).view(B, 1, 1, S), torch.finfo(torch.float32).min)
    probs = torch.softmax(masked, dim=-1)  # [B, A, S, S]
    ctx = (probs @ vh).transpose(1, 2).reshape(B, S, HID)
    a = layer_norm(W, linear(W, ctx, n["o"]) + x, n["ln1"], eps)
    inter = act(linear(W, a, n["i"]))
    out = layer_norm(W, linear(W, inter, n["f"]) + a, n["ln2"], eps)
    for key, t in [("query", q), ("key", k), ("value", v), ("scores", scores), ("context", ctx),
                   ("attention_output", a), ("intermediate", inter)]:
        rec[f"layer.{li}.{key}"] = t
    return out, probs


def encoder(W, e, mask, names, act, eps, scale_q_first):
    rec, hs, atts = {}, [e], []
    h = e
    for li in range(LAYERS):
        h, p = block(W, h, mask, names(li), act, eps, rec, li, scale_q_first)
        hs.append(h)
        atts.append(p)
    return hs, atts, rec


def mlm_head(W, h, dense, ln, bias, act, eps, rec):
    t = layer_norm(W, act(linear(W, h, dense)), ln, eps)
    rec["mlm_transform"] = t
    return t @ W.get("word_embeddings").T + W.get(bias)  # the decoder is tied to the word embeddings


def mlm_loss(logits, labels):
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)


def sinusoids(P, H):
    pos = np.array([[p / np.power(10000, 2 * (j // 2) / H) for j in range(H)] for p in range(P)])
    out = np.zeros((P, H), dtype=np.float32)
    out[:, 0::2] = np.sin(pos[:, 0::2])
    out[:, 1::2] = np.cos(pos[:, 1::2])
    return out


def distilbert(out_dir, seed, mlm, sinusoidal, activation):
    P, PAD, MASK = 16, 0, 4
    W = Weights(seed)
    W.normal("word_embeddings", (VOCAB, HID), 0.5)
    W.w["word_embeddings"][PAD] = 0
    if sinusoidal:
        W.w["position_embeddings"] = sinusoids(P, HID)
    else:
        W.normal("position_embeddings", (P, HID), 0.5)
    W.layernorm("emb_ln", HID)
    for li in range(LAYERS):
        for part, (o, i) in {"q_lin": (HID, HID), "k_lin": (HID, HID), "v_lin": (HID, HID),
                             "out_lin": (HID, HID), "lin1": (INTER, HID), "lin2": (HID, INTER)}.items():
            W.linear(f"l{li}.{part}", o, i)
        W.layernorm(f"l{li}.sa_ln", HID)
        W.layernorm(f"l{li}.out_ln", HID)
    if mlm:
        W.linear("vocab_transform", HID, HID)
        W.layernorm("vocab_layer_norm", HID)
        W.normal("vocab_projector.bias", (VOCAB,), 0.1)

    ids = torch.tensor([[2, 17, MASK, 55, 0, 91, MASK, 33, 118, 3],
                        [2, 64, 8, MASK, 40, 3, PAD, PAD, PAD, PAD]])
    mask = torch.tensor([[1] * 10, [1] * 6 + [0] * 4])
    labels = torch.full((B, S), -100)
    labels[0, 2], labels[0, 6], labels[1, 3], labels[1, 1] = 71, 12, 99, 64
    ids, _, mask, labels = batch_inputs(ids, None, mask, labels)

    eps = 1e-12  # DistilBERT's LayerNorms are not configurable
    act = ACTS[activation]
    e = layer_norm(W, W.get("word_embeddings")[ids] + W.get("position_embeddings")[:S], "emb_ln", eps)
    names = lambda li: {"q": f"l{li}.q_lin", "k": f"l{li}.k_lin", "v": f"l{li}.v_lin", "o": f"l{li}.out_lin",
                        "ln1": f"l{li}.sa_ln", "i": f"l{li}.lin1", "f": f"l{li}.lin2", "ln2": f"l{li}.out_ln"}
    hs, atts, rec = encoder(W, e, mask, names, act, eps, scale_q_first=True)
    outs = {"last_hidden_state": hs[-1]}
    if mlm:
        logits = mlm_head(W, hs[-1], "vocab_transform", "vocab_layer_norm", "vocab_projector.bias", act, eps, rec)
        outs["logits"], outs["loss"] = logits, mlm_loss(logits, labels).reshape(1)

    # The names transformers gives them: DistilBertForMaskedLM prefixes the body, DistilBertModel not.
    pre = "distilbert." if mlm else ""
    hf = {pre + "embeddings.word_embeddings.weight": "word_embeddings",
          pre + "embeddings.position_embeddings.weight": "position_embeddings",
          pre + "embeddings.LayerNorm.weight": "emb_ln.weight", pre + "embeddings.LayerNorm.bias": "emb_ln.bias"}
    for li in range(LAYERS):
        lp = f"{pre}transformer.layer.{li}."
        for ours, theirs in [("q_lin", "attention.q_lin"), ("k_lin", "attention.k_lin"), ("v_lin", "attention.v_lin"),
                             ("out_lin", "attention.out_lin"), ("sa_ln", "sa_layer_norm"), ("lin1", "ffn.lin1"),
                             ("lin2", "ffn.lin2"), ("out_ln", "output_layer_norm")]:
            for s in ("weight", "bias"):
                hf[f"{lp}{theirs}.{s}"] = f"l{li}.{ours}.{s}"
    if mlm:
        for s in ("weight", "bias"):
            hf[f"vocab_transform.{s}"] = f"vocab_transform.{s}"
            hf[f"vocab_layer_norm.{s}"] = f"vocab_layer_norm.{s}"
        hf["vocab_projector.bias"] = "vocab_projector.bias"
    cfg = {"architectures": ["DistilBertForMaskedLM" if mlm else "DistilBertModel"], "model_type": "distilbert",
           "activation": activation, "attention_dropout": 0.1, "dim": HID, "dropout": 0.1, "hidden_dim": INTER,
           "initializer_range": 0.02, "max_position_embeddings": P, "n_heads": HEADS, "n_layers": LAYERS,
           "pad_token_id": PAD, "qa_dropout": 0.1, "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": sinusoidal,
           "tie_weights_": True, "torch_dtype": "float32", "transformers_version": "4.38.2", "vocab_size": VOCAB}
    desc = (f"{cfg['architectures'][0]}: vocab {VOCAB}, dim {HID}, {LAYERS} layers of {HEADS} heads (head size "
            f"{HID // HEADS}), hidden_dim {INTER}, max positions {P}, activation {activation}, "
            f"{'sinusoidal' if sinusoidal else 'learned'} positions; pad id {PAD}. Sequence 0 holds a pad id at an "
            f"attended position (the attention mask is used as given); sequence 1 is padded after 6 tokens.")
    save(out_dir, cfg, W, hf, {"input_ids": ids, "attention_mask": mask, "labels": labels}, hs, atts, outs, rec,
         desc, {})


def roberta(out_dir, seed):
    P, PAD, BOS, EOS, MASK = 20, 1, 0, 2, 3
    eps, hidden_act = 1e-5, "gelu_new"
    W = Weights(seed)
    W.normal("word_embeddings", (VOCAB, HID), 0.5)
    W.w["word_embeddings"][PAD] = 0
    W.normal("position_embeddings", (P, HID), 0.5)
    W.w["position_embeddings"][PAD] = 0  # padding_idx, as RobertaEmbeddings initialises it
    W.normal("token_type_embeddings", (1, HID), 0.5)
    W.layernorm("emb_ln", HID)
    for li in range(LAYERS):
        for part, (o, i) in {"query": (HID, HID), "key": (HID, HID), "value": (HID, HID),
                             "attn_out": (HID, HID), "inter": (INTER, HID), "out": (HID, INTER)}.items():
            W.linear(f"l{li}.{part}", o, i)
        W.layernorm(f"l{li}.attn_ln", HID)
        W.layernorm(f"l{li}.out_ln", HID)
    W.linear("lm_dense", HID, HID)
    W.layernorm("lm_ln", HID)
    W.normal("lm_bias", (VOCAB,), 0.1)

    ids = torch.tensor([[BOS, 17, MASK, 55, PAD, 91, MASK, 33, 118, EOS],
                        [BOS, 64, 8, MASK, 40, EOS, PAD, PAD, PAD, PAD]])
    mask = torch.tensor([[1] * 10, [1] * 6 + [0] * 4])
    types = torch.zeros((B, S), dtype=torch.long)
    labels = torch.full((B, S), -100)
    labels[0, 2], labels[0, 6], labels[1, 3], labels[1, 1] = 71, 12, 99, 64
    ids, types, mask, labels = batch_inputs(ids, types, mask, labels)

    # Position ids from the ids (not the mask): padding_idx + the count of non-pad tokens so far;
    # a pad id keeps padding_idx wherever it stands.
    notpad = (ids != PAD).long()
    pos = torch.cumsum(notpad, dim=1) * notpad + PAD
    e = W.get("word_embeddings")[ids] + W.get("token_type_embeddings")[types]
    e = e + W.get("position_embeddings")[pos]
    e = layer_norm(W, e, "emb_ln", eps)
    names = lambda li: {"q": f"l{li}.query", "k": f"l{li}.key", "v": f"l{li}.value", "o": f"l{li}.attn_out",
                        "ln1": f"l{li}.attn_ln", "i": f"l{li}.inter", "f": f"l{li}.out", "ln2": f"l{li}.out_ln"}
    hs, atts, rec = encoder(W, e, mask, names, ACTS[hidden_act], eps, scale_q_first=False)
    logits = mlm_head(W, hs[-1], "lm_dense", "lm_ln", "lm_bias", ACTS["gelu"], eps, rec)  # RobertaLMHead: exact GELU
    outs = {"last_hidden_state": hs[-1], "logits": logits, "loss": mlm_loss(logits, labels).reshape(1)}

    hf = {"roberta.embeddings.word_embeddings.weight": "word_embeddings",
          "roberta.embeddings.position_embeddings.weight": "position_embeddings",
          "roberta.embeddings.token_type_embeddings.weight": "token_type_embeddings",
          "roberta.embeddings.LayerNorm.weight": "emb_ln.weight", "roberta.embeddings.LayerNorm.bias": "emb_ln.bias",
          "lm_head.bias": "lm_bias"}
    for li in range(LAYERS):
        lp = f"roberta.encoder.layer.{li}."
        for ours, theirs in [("query", "attention.self.query"), ("key", "attention.self.key"),
                             ("value", "attention.self.value"), ("attn_out", "attention.output.dense"),
                             ("attn_ln", "attention.output.LayerNorm"), ("inter", "intermediate.dense"),
                             ("out", "output.dense"), ("out_ln", "output.LayerNorm")]:
            for s in ("weight", "bias"):
                hf[f"{lp}{theirs}.{s}"] = f"l{li}.{ours}.{s}"
    for s in ("weight", "bias"):
        hf[f"lm_head.dense.{s}"] = f"lm_dense.{s}"
        hf[f"lm_head.layer_norm.{s}"] = f"lm_ln.{s}"
    cfg = {"architectures": ["RobertaForMaskedLM"], "model_type": "roberta", "attention_probs_dropout_prob": 0.1,
           "bos_token_id": BOS, "eos_token_id": EOS, "hidden_act": hidden_act, "hidden_dropout_prob": 0.1,
           "hidden_size": HID, "initializer_range": 0.02, "intermediate_size": INTER, "layer_norm_eps": eps,
           "max_position_embeddings": P, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
           "pad_token_id": PAD, "position_embedding_type": "absolute", "type_vocab_size": 1, "use_cache": True,
           "classifier_dropout": None, "torch_dtype": "float32", "transformers_version": "4.30.2",
           "vocab_size": VOCAB}
    desc = (f"RobertaForMaskedLM: vocab {VOCAB}, hidden {HID}, {LAYERS} layers of {HEADS} heads (head size "
            f"{HID // HEADS}), intermediate {INTER}, max positions {P}, hidden_act {hidden_act} (the LM head's GELU "
            f"is exact), layer_norm_eps {eps}, type_vocab_size 1; pad {PAD}, bos {BOS}, eos {EOS}. Position ids are "
            f"counted from padding_idx+1 over the non-pad ids: sequence 0 holds a pad id at an attended position, "
            f"which keeps position {PAD} (and the later tokens count on without it); sequence 1 is padded after 6 "
            f"tokens. model.safetensors also holds the stale I64 buffer roberta.embeddings.position_ids that "
            f"transformers before 4.31 saved.")
    extra = {"roberta.embeddings.position_ids": np.arange(P, dtype=np.int64).reshape(1, P)}
    save(out_dir, cfg, W, hf, {"input_ids": ids, "token_type_ids": types, "attention_mask": mask, "labels": labels},
         hs, atts, outs, rec, desc, extra)


def albert(out_dir, seed, pretraining, E, groups):
    P, PAD, CLS, SEP, MASK = 16, 0, 2, 3, 4
    eps, hidden_act = 1e-12, "gelu_new"
    W = Weights(seed)
    W.normal("word_embeddings", (VOCAB, E), 0.5)
    W.w["word_embeddings"][PAD] = 0
    W.normal("position_embeddings", (P, E), 0.5)
    W.normal("token_type_embeddings", (2, E), 0.5)
    W.layernorm("emb_ln", E)
    W.linear("mapping", HID, E)
    for g in range(groups):
        for part, (o, i) in {"query": (HID, HID), "key": (HID, HID), "value": (HID, HID),
                             "dense": (HID, HID), "ffn": (INTER, HID), "ffn_output": (HID, INTER)}.items():
            W.linear(f"g{g}.{part}", o, i)
        W.layernorm(f"g{g}.attn_ln", HID)
        W.layernorm(f"g{g}.full_ln", HID)
    if pretraining:
        W.linear("pooler", HID, HID)
        W.linear("pred_dense", E, HID)
        W.layernorm("pred_ln", E)
        W.normal("pred_bias", (VOCAB,), 0.1)
        W.linear("sop", 2, HID)

    ids = torch.tensor([[CLS, 17, MASK, 55, SEP, 91, MASK, 33, 118, SEP],
                        [CLS, 64, 8, MASK, SEP, 40, SEP, PAD, PAD, PAD]])
    types = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 1, 0, 0, 0]])
    mask = torch.tensor([[1] * 10, [1] * 7 + [0] * 3])
    labels = torch.full((B, S), -100)
    labels[0, 2], labels[0, 6], labels[1, 3], labels[1, 1] = 71, 12, 99, 64
    ids, types, mask, labels = batch_inputs(ids, types, mask, labels)
    sop_labels = torch.tensor([1 - i % 2 for i in range(B)])  # [1, 0] for the fixed batch

    x = W.get("word_embeddings")[ids] + W.get("token_type_embeddings")[types] + W.get("position_embeddings")[:S]
    emb = layer_norm(W, x, "emb_ln", eps)  # [B, S, E]
    e = linear(W, emb, "mapping")  # embedding_hidden_mapping_in: [B, S, H]
    L = LAYERS
    rec, hs, atts, h = {"embeddings": emb}, [e], [], e
    for i in range(L):
        g = int(i / (L / groups))  # the group of block i, as AlbertTransformer computes it
        n = {"q": f"g{g}.query", "k": f"g{g}.key", "v": f"g{g}.value", "o": f"g{g}.dense", "ln1": f"g{g}.attn_ln",
             "i": f"g{g}.ffn", "f": f"g{g}.ffn_output", "ln2": f"g{g}.full_ln"}
        h, p = block(W, h, mask, n, ACTS[hidden_act], eps, rec, i, scale_q_first=False)
        hs.append(h)
        atts.append(p)
    outs = {"last_hidden_state": h}
    inputs = {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}
    if pretraining:
        pooled = torch.tanh(linear(W, h[:, 0], "pooler"))
        t = layer_norm(W, ACTS[hidden_act](linear(W, h, "pred_dense")), "pred_ln", eps)  # AlbertMLMHead: [B, S, E]
        rec["mlm_transform"] = t
        logits = t @ W.get("word_embeddings").T + W.get("pred_bias")
        sop = linear(W, pooled, "sop")
        loss = mlm_loss(logits, labels) + F.cross_entropy(sop, sop_labels)
        outs.update({"pooler_output": pooled, "prediction_logits": logits, "sop_logits": sop, "loss": loss.reshape(1)})
        inputs.update({"labels": labels, "sentence_order_label": sop_labels})

    pre = "albert." if pretraining else ""
    hf = {pre + "embeddings.word_embeddings.weight": "word_embeddings",
          pre + "embeddings.position_embeddings.weight": "position_embeddings",
          pre + "embeddings.token_type_embeddings.weight": "token_type_embeddings",
          pre + "embeddings.LayerNorm.weight": "emb_ln.weight", pre + "embeddings.LayerNorm.bias": "emb_ln.bias"}
    for s_ in ("weight", "bias"):
        hf[f"{pre}encoder.embedding_hidden_mapping_in.{s_}"] = f"mapping.{s_}"
        for g in range(groups):
            lp = f"{pre}encoder.albert_layer_groups.{g}.albert_layers.0."
            for ours, theirs in [("query", "attention.query"), ("key", "attention.key"), ("value", "attention.value"),
                                 ("dense", "attention.dense"), ("attn_ln", "attention.LayerNorm"), ("ffn", "ffn"),
                                 ("ffn_output", "ffn_output"), ("full_ln", "full_layer_layer_norm")]:
                hf[f"{lp}{theirs}.{s_}"] = f"g{g}.{ours}.{s_}"
        if pretraining:
            hf[f"albert.pooler.{s_}"] = f"pooler.{s_}"
            hf[f"predictions.dense.{s_}"] = f"pred_dense.{s_}"
            hf[f"predictions.LayerNorm.{s_}"] = f"pred_ln.{s_}"
            hf[f"sop_classifier.classifier.{s_}"] = f"sop.{s_}"
    if pretraining:
        hf["predictions.bias"] = "pred_bias"
    cfg = {"architectures": ["AlbertForPreTraining" if pretraining else "AlbertModel"], "model_type": "albert",
           "attention_probs_dropout_prob": 0, "bos_token_id": 2, "classifier_dropout_prob": 0.1,
           "embedding_size": E, "eos_token_id": 3, "hidden_act": hidden_act, "hidden_dropout_prob": 0,
           "hidden_size": HID, "initializer_range": 0.02, "inner_group_num": 1, "intermediate_size": INTER,
           "layer_norm_eps": eps, "max_position_embeddings": P, "num_attention_heads": HEADS,
           "num_hidden_groups": groups, "num_hidden_layers": L, "pad_token_id": PAD,
           "position_embedding_type": "absolute", "type_vocab_size": 2, "torch_dtype": "float32",
           "transformers_version": "4.38.2", "vocab_size": VOCAB}
    desc = (f"{cfg['architectures'][0]}: vocab {VOCAB}, embedding_size {E}, hidden {HID}, {L} layers sharing "
            f"{groups} group(s) (block i runs group int(i / ({L} / {groups}))), {HEADS} heads (head size "
            f"{HID // HEADS}), intermediate {INTER}, max positions {P}, hidden_act {hidden_act}; pad {PAD}. "
            f"hidden_states.0 is the output of embedding_hidden_mapping_in (as transformers reports it); "
            f"intermediates' \"embeddings\" is the embedding LayerNorm's output before it. Sequence 1 is padded "
            f"after 7 tokens; both sequences are pairs (token types 0 and 1).")
    save(out_dir, cfg, W, hf, inputs, hs, atts, outs, rec, desc, {})


def electra(out_dir, seed, discriminator, E, hidden_act):
    P, PAD, CLS, SEP, MASK = 16, 0, 2, 3, 4
    eps = 1e-12
    W = Weights(seed)
    W.normal("word_embeddings", (VOCAB, E), 0.5)
    W.w["word_embeddings"][PAD] = 0
    W.normal("position_embeddings", (P, E), 0.5)
    W.normal("token_type_embeddings", (2, E), 0.5)
    W.layernorm("emb_ln", E)
    if E != HID:
        W.linear("project", HID, E)
    for li in range(LAYERS):
        for part, (o, i) in {"query": (HID, HID), "key": (HID, HID), "value": (HID, HID),
                             "attn_out": (HID, HID), "inter": (INTER, HID), "out": (HID, INTER)}.items():
            W.linear(f"l{li}.{part}", o, i)
        W.layernorm(f"l{li}.attn_ln", HID)
        W.layernorm(f"l{li}.out_ln", HID)
    if discriminator:
        W.linear("disc_dense", HID, HID)
        W.linear("disc_pred", 1, HID)
    else:
        W.linear("gen_dense", E, HID)
        W.layernorm("gen_ln", E)
        W.normal("gen_bias", (VOCAB,), 0.1)

    ids = torch.tensor([[CLS, 17, 23, 55, SEP, 91, 7, 33, 118, SEP],
                        [CLS, 64, 8, MASK, SEP, 40, SEP, PAD, PAD, PAD]])
    types = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 1, 0, 0, 0]])
    mask = torch.tensor([[1] * 10, [1] * 7 + [0] * 3])
    if discriminator:
        labels = torch.tensor([[0, 0, 1, 0, 0, 0, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]])
    else:
        labels = torch.full((B, S), -100)
        labels[1, 3], labels[1, 1] = 99, 64
    ids, types, mask, labels = batch_inputs(ids, types, mask, labels)

    x = W.get("word_embeddings")[ids] + W.get("token_type_embeddings")[types] + W.get("position_embeddings")[:S]
    emb = layer_norm(W, x, "emb_ln", eps)  # [B, S, E]
    rec = {}
    e = emb
    if E != HID:
        rec["embeddings"] = emb
        e = linear(W, emb, "project")  # embeddings_project: [B, S, H]
    names = lambda li: {"q": f"l{li}.query", "k": f"l{li}.key", "v": f"l{li}.value", "o": f"l{li}.attn_out",
                        "ln1": f"l{li}.attn_ln", "i": f"l{li}.inter", "f": f"l{li}.out", "ln2": f"l{li}.out_ln"}
    hs, atts, rec2 = encoder(W, e, mask, names, ACTS[hidden_act], eps, scale_q_first=False)
    rec.update(rec2)
    h = hs[-1]
    outs = {"last_hidden_state": h}
    if discriminator:
        logits = linear(W, ACTS[hidden_act](linear(W, h, "disc_dense")), "disc_pred").squeeze(-1)  # [B, S]
        active = mask.reshape(-1) == 1
        loss = F.binary_cross_entropy_with_logits(logits.reshape(-1)[active], labels.reshape(-1)[active].double())
    else:
        t = layer_norm(W, ACTS["gelu"](linear(W, h, "gen_dense")), "gen_ln", eps)  # the generator's GELU is exact
        rec["mlm_transform"] = t
        logits = t @ W.get("word_embeddings").T + W.get("gen_bias")
        loss = mlm_loss(logits, labels)
    outs.update({"logits": logits, "loss": loss.reshape(1)})

    hf = {"electra.embeddings.word_embeddings.weight": "word_embeddings",
          "electra.embeddings.position_embeddings.weight": "position_embeddings",
          "electra.embeddings.token_type_embeddings.weight": "token_type_embeddings",
          "electra.embeddings.LayerNorm.weight": "emb_ln.weight", "electra.embeddings.LayerNorm.bias": "emb_ln.bias"}
    for s_ in ("weight", "bias"):
        if E != HID:
            hf[f"electra.embeddings_project.{s_}"] = f"project.{s_}"
        for li in range(LAYERS):
            lp = f"electra.encoder.layer.{li}."
            for ours, theirs in [("query", "attention.self.query"), ("key", "attention.self.key"),
                                 ("value", "attention.self.value"), ("attn_out", "attention.output.dense"),
                                 ("attn_ln", "attention.output.LayerNorm"), ("inter", "intermediate.dense"),
                                 ("out", "output.dense"), ("out_ln", "output.LayerNorm")]:
                hf[f"{lp}{theirs}.{s_}"] = f"l{li}.{ours}.{s_}"
        if discriminator:
            hf[f"discriminator_predictions.dense.{s_}"] = f"disc_dense.{s_}"
            hf[f"discriminator_predictions.dense_prediction.{s_}"] = f"disc_pred.{s_}"
        else:
            hf[f"generator_predictions.dense.{s_}"] = f"gen_dense.{s_}"
            hf[f"generator_predictions.LayerNorm.{s_}"] = f"gen_ln.{s_}"
    if not discriminator:
        hf["generator_lm_head.bias"] = "gen_bias"
    arch = "ElectraForPreTraining" if discriminator else "ElectraForMaskedLM"
    cfg = {"architectures": [arch], "model_type": "electra", "attention_probs_dropout_prob": 0.1,
           "embedding_size": E, "hidden_act": hidden_act, "hidden_dropout_prob": 0.1, "hidden_size": HID,
           "initializer_range": 0.02, "intermediate_size": INTER, "layer_norm_eps": eps,
           "max_position_embeddings": P, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
           "pad_token_id": PAD, "position_embedding_type": "absolute", "summary_activation": "gelu",
           "summary_last_dropout": 0.1, "summary_type": "first", "summary_use_proj": True, "type_vocab_size": 2,
           "use_cache": True, "classifier_dropout": None, "torch_dtype": "float32",
           "transformers_version": "4.38.2", "vocab_size": VOCAB}
    what = ("the discriminator head: logits [2, 10], one a token, replaced > 0; labels 1 = replaced, the loss the "
            "binary cross-entropy over the attended tokens" if discriminator else
            "the generator head (dense to E, exact GELU, LayerNorm, decoder tied to the word embeddings)")
    desc = (f"{arch}: vocab {VOCAB}, embedding_size {E}, hidden {HID} "
            f"({'embeddings_project maps E to H' if E != HID else 'no projection'}), {LAYERS} layers of {HEADS} heads "
            f"(head size {HID // HEADS}), intermediate {INTER}, max positions {P}, hidden_act {hidden_act}; {what}. "
            f"Sequence 1 is padded after 7 tokens.")
    save(out_dir, cfg, W, hf, {"input_ids": ids, "token_type_ids": types, "attention_mask": mask, "labels": labels},
         hs, atts, outs, rec, desc, {})


def log_bucket(rel, bucket_size, max_position):
    """make_log_bucket_position, in float32 as transformers computes it."""
    if bucket_size <= 0 or max_position <= 0:
        return rel
    sign = torch.sign(rel)
    mid = bucket_size // 2
    abs_pos = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1).type_as(rel), torch.abs(rel))
    ratio = torch.log(abs_pos.to(torch.float32) / mid) / torch.log(torch.tensor((max_position - 1) / mid, dtype=torch.float32))
    log_pos = torch.ceil(ratio * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, rel.to(torch.float32), log_pos * sign).long()


def deberta(out_dir, seed, mlm, buckets, max_rel, att, norm_rel, biased, types_n):
    P, PAD, CLS, SEP, MASK = 16, 0, 1, 2, 3
    eps, hidden_act = 1e-7, "gelu"
    span = buckets if buckets > 0 else max_rel
    W = Weights(seed)
    W.normal("word_embeddings", (VOCAB, HID), 0.5)
    W.w["word_embeddings"][PAD] = 0
    if biased:
        W.normal("position_embeddings", (P, HID), 0.5)
    if types_n:
        W.normal("token_type_embeddings", (types_n, HID), 0.5)
    W.layernorm("emb_ln", HID)
    W.normal("rel_embeddings", (2 * span, HID), 0.5)
    if norm_rel:
        W.layernorm("rel_ln", HID)
    for li in range(LAYERS):
        for part, (o, i) in {"query": (HID, HID), "key": (HID, HID), "value": (HID, HID),
                             "attn_out": (HID, HID), "inter": (INTER, HID), "out": (HID, INTER)}.items():
            W.linear(f"l{li}.{part}", o, i)
        W.layernorm(f"l{li}.attn_ln", HID)
        W.layernorm(f"l{li}.out_ln", HID)
    if mlm:
        W.linear("mlm_dense", HID, HID)
        W.layernorm("mlm_ln", HID)
        W.normal("mlm_bias", (VOCAB,), 0.1)

    ids = torch.tensor([[CLS, 17, MASK, 55, SEP, 91, MASK, 33, 118, SEP],
                        [CLS, 64, 8, MASK, SEP, 40, SEP, PAD, PAD, PAD]])
    types = torch.tensor([[0, 0, 0, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 1, 0, 0, 0]])
    mask = torch.tensor([[1] * 10, [1] * 7 + [0] * 3])
    labels = torch.full((B, S), -100)
    labels[0, 2], labels[0, 6], labels[1, 3], labels[1, 1] = 71, 12, 99, 64
    ids, types, mask, labels = batch_inputs(ids, types, mask, labels)

    x = W.get("word_embeddings")[ids]
    if biased:
        x = x + W.get("position_embeddings")[:S]
    if types_n:
        x = x + W.get("token_type_embeddings")[types]
    e = layer_norm(W, x, "emb_ln", eps) * mask[:, :, None]  # DeBERTa zeroes the padding rows
    rel = W.get("rel_embeddings")
    if norm_rel:
        rel = layer_norm(W, rel, "rel_ln", eps)
    d = HID // HEADS
    sf = 1 + ("c2p" in att) + ("p2c" in att)
    scale = math.sqrt(d * sf)
    pos = torch.arange(S)
    relpos = log_bucket(pos[:, None] - pos[None, :], buckets, max_rel)  # bucket(i - j): [S, S]
    pair = (mask[:, None, :, None] * mask[:, None, None, :]) == 0  # XSoftmax: query and key masks
    split = lambda t: t.view(t.shape[0], -1, HEADS, d).transpose(1, 2)
    rec, hs, atts, h, parts = {}, [e], [], e, {}
    for li in range(LAYERS):
        n = f"l{li}."
        q, k, v = linear(W, h, n + "query"), linear(W, h, n + "key"), linear(W, h, n + "value")
        qh, kh, vh = split(q), split(k), split(v)
        scores = qh @ kh.transpose(-1, -2) / scale
        parts[f"layer.{li}.c2c"] = scores
        if "c2p" in att:  # content to position: q_i . K(r[bucket(i - j) + span])
            pk = split(linear(W, rel[None], n + "key"))  # share_att_key: [1, A, 2span, d]
            c2p = qh @ pk.transpose(-1, -2)  # [B, A, S, 2span]
            idx = torch.clamp(relpos + span, 0, 2 * span - 1).expand(B, HEADS, S, S)
            rec[f"layer.{li}.c2p"] = torch.gather(c2p, -1, idx) / scale
            scores = scores + rec[f"layer.{li}.c2p"]
        if "p2c" in att:  # position to content: k_j . Q(r[-bucket(j - i) + span])
            pq = split(linear(W, rel[None], n + "query"))
            p2c = kh @ pq.transpose(-1, -2)  # [B, A, S(keys), 2span]
            idx = torch.clamp(-relpos + span, 0, 2 * span - 1).expand(B, HEADS, S, S)
            rec[f"layer.{li}.p2c"] = torch.gather(p2c, -1, idx).transpose(-1, -2) / scale
            scores = scores + rec[f"layer.{li}.p2c"]
        probs = torch.softmax(scores.masked_fill(pair, torch.finfo(torch.float32).min), -1).masked_fill(pair, 0)
        ctx = (probs @ vh).transpose(1, 2).reshape(B, S, HID)
        a = layer_norm(W, linear(W, ctx, n + "attn_out") + h, n + "attn_ln", eps)
        inter = ACTS[hidden_act](linear(W, a, n + "inter"))
        h = layer_norm(W, linear(W, inter, n + "out") + a, n + "out_ln", eps)
        for key, t in [("query", q), ("key", k), ("value", v), ("scores", scores), ("context", ctx),
                       ("attention_output", a), ("intermediate", inter)]:
            rec[f"layer.{li}.{key}"] = t
        for key in ("c2p", "p2c"):
            if f"layer.{li}.{key}" in rec:
                parts[f"layer.{li}.{key}"] = rec[f"layer.{li}.{key}"]
        parts[f"layer.{li}.sum"] = scores
        parts[f"layer.{li}.probs"] = probs
        hs.append(h)
        atts.append(probs)
    outs = {"last_hidden_state": h}
    inputs = {"input_ids": ids, "attention_mask": mask}
    if types_n:
        inputs["token_type_ids"] = types
    if mlm:
        t = layer_norm(W, ACTS[hidden_act](linear(W, h, "mlm_dense")), "mlm_ln", eps)
        rec["mlm_transform"] = t
        logits = t @ W.get("word_embeddings").T + W.get("mlm_bias")
        outs.update({"logits": logits, "loss": mlm_loss(logits, labels).reshape(1)})
        inputs["labels"] = labels

    pre = "deberta." if mlm else ""
    hf = {pre + "embeddings.word_embeddings.weight": "word_embeddings",
          pre + "embeddings.LayerNorm.weight": "emb_ln.weight", pre + "embeddings.LayerNorm.bias": "emb_ln.bias",
          pre + "encoder.rel_embeddings.weight": "rel_embeddings"}
    if biased:
        hf[pre + "embeddings.position_embeddings.weight"] = "position_embeddings"
    if types_n:
        hf[pre + "embeddings.token_type_embeddings.weight"] = "token_type_embeddings"
    for s_ in ("weight", "bias"):
        if norm_rel:
            hf[f"{pre}encoder.LayerNorm.{s_}"] = f"rel_ln.{s_}"
        for li in range(LAYERS):
            lp = f"{pre}encoder.layer.{li}."
            for ours, theirs in [("query", "attention.self.query_proj"), ("key", "attention.self.key_proj"),
                                 ("value", "attention.self.value_proj"), ("attn_out", "attention.output.dense"),
                                 ("attn_ln", "attention.output.LayerNorm"), ("inter", "intermediate.dense"),
                                 ("out", "output.dense"), ("out_ln", "output.LayerNorm")]:
                hf[f"{lp}{theirs}.{s_}"] = f"l{li}.{ours}.{s_}"
        if mlm:
            hf[f"cls.predictions.transform.dense.{s_}"] = f"mlm_dense.{s_}"
            hf[f"cls.predictions.transform.LayerNorm.{s_}"] = f"mlm_ln.{s_}"
    if mlm:
        hf["cls.predictions.bias"] = "mlm_bias"
    arch = "DebertaV2ForMaskedLM" if mlm else "DebertaV2Model"
    cfg = {"architectures": [arch], "model_type": "deberta-v2", "attention_probs_dropout_prob": 0.1,
           "hidden_act": hidden_act, "hidden_dropout_prob": 0.1, "hidden_size": HID, "initializer_range": 0.02,
           "intermediate_size": INTER, "layer_norm_eps": eps, "max_position_embeddings": P,
           "max_relative_positions": max_rel, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
           "pad_token_id": PAD, "pooler_dropout": 0, "pooler_hidden_act": "gelu", "pooler_hidden_size": HID,
           "pos_att_type": att if mlm else "|".join(att), "position_biased_input": biased,
           "position_buckets": buckets, "relative_attention": True, "share_att_key": True,
           "type_vocab_size": types_n, "vocab_size": VOCAB, "torch_dtype": "float32",
           "transformers_version": "4.38.2"}
    if norm_rel:
        cfg["norm_rel_ebd"] = "layer_norm"
    desc = (f"{arch}: vocab {VOCAB}, hidden {HID}, {LAYERS} layers of {HEADS} heads (head size {d}), intermediate "
            f"{INTER}, relative attention {'+'.join(att)} (scores divided by sqrt({d} * {sf})), position_buckets "
            f"{buckets}, max_relative_positions {max_rel} (att_span {span}), rel LayerNorm {norm_rel}, "
            f"position_biased_input {biased}, type_vocab_size {types_n}, layer_norm_eps {eps}. Sequence 1 is padded "
            f"after 7 tokens: its embedding rows are 0 and its padding queries attend to nothing (XSoftmax).")
    save(out_dir, cfg, W, hf, inputs, hs, atts, outs, rec, desc, {})
    # The attention view's split of the scores (core/bert DisentangledParts): each term apart,
    # as scaled in the scores, their sum before the mask and the probabilities after softmax.
    write_safetensors(os.path.join(out_dir, "parts.safetensors"),
                      {k: v.detach().numpy().astype(np.float32) for k, v in parts.items()})


def save(out_dir, cfg, W, hf, inputs, hs, atts, outs, rec, desc, extra):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    model = {name: W.w[ours] for name, ours in hf.items()}
    model.update(extra)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), model, {"format": "pt"})
    f32 = lambda t: t.detach().numpy().astype(np.float32)
    write_safetensors(os.path.join(out_dir, "inputs.safetensors"),
                      {k: v.numpy().astype(np.int64) for k, v in inputs.items()})
    with open(os.path.join(out_dir, "inputs.json"), "w") as f:
        json.dump({k: v.tolist() for k, v in inputs.items()}, f)
        f.write("\n")
    o = {f"hidden_states.{i}": f32(h) for i, h in enumerate(hs)}
    o.update({f"attentions.{i}": f32(a) for i, a in enumerate(atts)})
    o.update({k: f32(v) for k, v in outs.items()})
    write_safetensors(os.path.join(out_dir, "outputs.safetensors"), o)
    write_safetensors(os.path.join(out_dir, "intermediates.safetensors"), {k: f32(v) for k, v in rec.items()})
    loss = f" Loss {outs['loss'].item()!r}." if "loss" in outs else ""
    with open(os.path.join(out_dir, "SOURCE.md"), "w") as f:
        f.write(f"Made by `/usr/bin/python3 scripts/familyref/familyref.py core/bert/testdata` (PyTorch float64 from "
                f"transformers' formulas, stored as float32; see the script's header for every file).\n\n"
                f"{desc}{loss}\n")


if __name__ == "__main__":
    root = sys.argv[1]
    distilbert(os.path.join(root, "distilbert-tiny-random"), 11, mlm=True, sinusoidal=False, activation="gelu")
    distilbert(os.path.join(root, "distilbert-tiny-sinusoidal"), 12, mlm=False, sinusoidal=True, activation="relu")
    roberta(os.path.join(root, "roberta-tiny-random"), 13)
    albert(os.path.join(root, "albert-tiny-random"), 14, pretraining=True, E=16, groups=1)
    albert(os.path.join(root, "albert-tiny-groups"), 15, pretraining=False, E=24, groups=2)
    electra(os.path.join(root, "electra-tiny-discriminator"), 16, discriminator=True, E=16, hidden_act="gelu")
    electra(os.path.join(root, "electra-tiny-generator"), 17, discriminator=False, E=HID, hidden_act="gelu_new")
    deberta(os.path.join(root, "deberta-tiny-random"), 18, mlm=True, buckets=8, max_rel=16, att=["p2c", "c2p"],
            norm_rel=True, biased=False, types_n=0)
    deberta(os.path.join(root, "deberta-tiny-nobuckets"), 19, mlm=False, buckets=-1, max_rel=6, att=["c2p"],
            norm_rel=False, biased=True, types_n=2)
