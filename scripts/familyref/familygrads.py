# Gradient fixtures for training ALBERT and ELECTRA in core/bert: familyref.py's independent
# float64 PyTorch models, their losses differentiated by autograd. Every weight is one leaf, so a
# layer group run by several blocks gets the sum of their gradients, and the word embeddings get
# the lookup's and the tied decoder's.
#   AlbertForPreTraining: embedding_size apart from hidden with embedding_hidden_mapping_in,
#     blocks sharing layer groups, the MLM head back down to E with the decoder tied to the word
#     embeddings, the SOP head on the pooled output; loss masked LM + sentence order, each the
#     mean cross-entropy over the labels not -100.
#   ElectraForPreTraining: embeddings_project, the discriminator head; loss the mean binary
#     cross-entropy with logits over the attended tokens (labels 1 = replaced).
#   ElectraForMaskedLM: the generator head (exact GELU, tied decoder); masked-LM loss.
#   DebertaV2ForMaskedLM: disentangled attention (c2p and p2c through the layers' key and query
#     maps of the shared relative embeddings, log buckets, their LayerNorm), padding rows zeroed;
#     masked-LM loss. It writes familyref.py's files (without
# intermediates.safetensors) and
#   grads.safetensors   d loss / d every parameter under the names of model.safetensors (F32)
# Fixtures:
#   albert-grads-shared   3 blocks sharing one group, embedding_size 16, hidden 48
#   albert-grads-groups   3 blocks over 2 groups (blocks 0, 1 run group 0; block 2 group 1),
#                         embedding_size 24
#   electra-grads-discriminator  embedding_size 16 below hidden 48, hidden_act gelu
#   electra-grads-generator      embedding_size 48 (no projection), hidden_act gelu_new
#   deberta-grads-mlm            c2p and p2c, position_buckets 8 up to 16, norm_rel_ebd layer_norm, no
#                                absolute positions, no token types
#   deberta-grads-c2p            c2p only, no buckets, max_relative_positions 6 (clamped offsets),
#                                absolute positions, two token types
#
#   /usr/bin/python3 scripts/familyref/familygrads.py core/bert/testdata
# Padding: sequence 1 is padded after 7 tokens; padded keys get probability 0 exactly, so the
# padding row of the word embeddings gets no gradient from the lookup, as HF's
# nn.Embedding(padding_idx) gives it none.
import os, sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import familyref as fr  # noqa: E402


class GradWeights(fr.Weights):
    """fr.Weights whose get() returns one float64 leaf per name, so that gradients accumulate."""

    def __init__(self, seed):
        super().__init__(seed)
        self.leaves = {}

    def get(self, name):
        if name not in self.leaves:
            self.leaves[name] = torch.tensor(self.w[name].astype(np.float64), requires_grad=True)
        return self.leaves[name]


def grads_of(build, out_dir, *args, **kw):
    """Runs familyref's builder build(out_dir, *args, **kw) with one leaf per weight and adds
    grads.safetensors: d loss / d every parameter of model.safetensors."""
    captured = {}
    save = fr.save

    def capture(out_dir, cfg, W, hf, inputs, hs, atts, outs, rec, desc, extra):
        captured.update(W=W, hf=hf, loss=outs["loss"])
        save(out_dir, cfg, W, hf, inputs, hs, atts, outs, rec, desc, extra)

    fr.Weights, fr.save = GradWeights, capture
    try:
        build(out_dir, *args, **kw)
    finally:
        fr.Weights, fr.save = GradWeights.__mro__[1], save
    W, hf, loss = captured["W"], captured["hf"], captured["loss"]
    loss.sum().backward()
    grads = {}
    for name, ours in hf.items():
        g = W.leaves[ours].grad
        grads[name] = (torch.zeros_like(W.leaves[ours]) if g is None else g).detach().numpy().astype(np.float32)
    fr.write_safetensors(os.path.join(out_dir, "grads.safetensors"), grads)
    os.remove(os.path.join(out_dir, "intermediates.safetensors"))
    src = os.path.join(out_dir, "SOURCE.md")
    with open(src) as f:
        desc = f.read().split("\n\n", 1)[1].replace("; intermediates' \"embeddings\" is the embedding LayerNorm's "
                                                    "output before it.", ".")
    with open(src, "w") as f:
        f.write(f"Made by `/usr/bin/python3 scripts/familyref/familygrads.py core/bert/testdata`: grads.safetensors "
                f"holds d loss / d parameter (autograd, float64, stored as float32) under model.safetensors' names; "
                f"the tied decoder's gradient is in the word embeddings'. The model and the other files as "
                f"familyref.py writes them (see its header), without intermediates.safetensors.\n\n{desc}")


if __name__ == "__main__":
    root = sys.argv[1]
    grads_of(fr.albert, os.path.join(root, "albert-grads-shared"), 21, pretraining=True, E=16, groups=1)
    grads_of(fr.albert, os.path.join(root, "albert-grads-groups"), 22, pretraining=True, E=24, groups=2)
    grads_of(fr.electra, os.path.join(root, "electra-grads-discriminator"), 23, discriminator=True, E=16,
             hidden_act="gelu")
    grads_of(fr.electra, os.path.join(root, "electra-grads-generator"), 24, discriminator=False, E=fr.HID,
             hidden_act="gelu_new")
    grads_of(fr.deberta, os.path.join(root, "deberta-grads-mlm"), 26, mlm=True, buckets=8, max_rel=16,
             att=["p2c", "c2p"], norm_rel=True, biased=False, types_n=0)
    grads_of(fr.deberta, os.path.join(root, "deberta-grads-c2p"), 27, mlm=True, buckets=-1, max_rel=6, att=["c2p"],
             norm_rel=False, biased=True, types_n=2)
