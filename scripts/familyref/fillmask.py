# Fill-mask reference for BERT's family: one random-weight model folder per family with an MLM
# head, whose vocabulary is a real tokenizer's (WordPiece, byte-level BPE, SentencePiece
# Unigram), and the top-5 predictions (token ids and softmax probabilities) at each mask of a few
# sentences. The forward passes are familyref.py's (PyTorch float64 from transformers' formulas),
# run on the ids that HuggingFace tokenizers gave (fillmask_ids.js); nothing here is bertlab's.
#
#   node scripts/familyref/fillmask_ids.js OUT      # tokenizer files and OUT/ids.json (README.md)
#   /usr/bin/python3 scripts/familyref/fillmask.py OUT
#
# It adds to each OUT/<family>/: config.json and model.safetensors (the family's MLM class, tied
# decoder left out), fillmask.json and SOURCE.md. fillmask.json:
#   {"family", "items": [{"text", "ids" (HF's input_ids), "masks": [{"position" (token index),
#    "top_ids" [5], "scores" [5] (softmax over the vocabulary, float64)}]}]}
# The sentences run as one padded batch (attention_mask 0 on the pads), as transformers' pipeline
# would run them batched.
import json, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import familyref as fr  # noqa: E402

FAMILIES = {
    # family: (familyref function, its arguments after out_dir, seed, the logits' name)
    "distilbert": (fr.distilbert, dict(mlm=True, sinusoidal=False, activation="gelu"), 21, "logits"),
    "roberta": (fr.roberta, {}, 22, "logits"),
    "albert": (fr.albert, dict(pretraining=True, E=16, groups=1), 23, "prediction_logits"),
    "electra": (fr.electra, dict(discriminator=False, E=16, hidden_act="gelu"), 24, "logits"),
    "deberta": (fr.deberta, dict(mlm=True, buckets=8, max_rel=16, att=["p2c", "c2p"], norm_rel=True, biased=False,
                                 types_n=0), 25, "logits"),
}


def main(out):
    with open(os.path.join(out, "ids.json")) as f:
        ids_all = json.load(f)
    for family, (fn, kw, seed, key) in FAMILIES.items():
        d = ids_all[family]
        items = d["items"]
        B, S = len(items), max(len(it["ids"]) for it in items)
        ids = torch.full((B, S), d["pad_id"], dtype=torch.long)
        types = torch.zeros((B, S), dtype=torch.long)
        mask = torch.zeros((B, S), dtype=torch.long)
        for b, it in enumerate(items):
            n = len(it["ids"])
            ids[b, :n] = torch.tensor(it["ids"])
            types[b, :n] = torch.tensor(it["types"])
            mask[b, :n] = 1
        fr.B, fr.S, fr.VOCAB, fr.INPUTS = B, S, d["vocab_size"], (ids, types, mask)
        got = {}

        def save(out_dir, cfg, W, hf, inputs, hs, atts, outs, rec, desc, extra):
            got.update(cfg=cfg, W=W, hf=hf, outs=outs, desc=desc, extra=extra)

        fr.save = save
        fn(None, seed, **kw)
        dir_ = os.path.join(out, family)
        cfg = got["cfg"]
        with open(os.path.join(dir_, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        model = {name: got["W"].w[ours] for name, ours in got["hf"].items()}
        model.update(got["extra"])
        fr.write_safetensors(os.path.join(dir_, "model.safetensors"), model, {"format": "pt"})
        logits = got["outs"][key]  # [B, S, V] float64
        res = []
        for b, it in enumerate(items):
            masks = []
            for pos, tid in enumerate(it["ids"]):
                if tid != d["mask_id"]:
                    continue
                p = torch.softmax(logits[b, pos], dim=-1)
                top = torch.topk(p, 5)
                masks.append({"position": pos, "top_ids": top.indices.tolist(), "scores": top.values.tolist()})
            res.append({"text": it["text"], "ids": it["ids"], "masks": masks})
        with open(os.path.join(dir_, "fillmask.json"), "w") as f:
            json.dump({"family": family, "items": res}, f, indent=1)
            f.write("\n")
        with open(os.path.join(dir_, "SOURCE.md"), "w") as f:
            f.write(f"Made by `scripts/familyref/fillmask_ids.js` (token ids from HuggingFace tokenizers 0.23.2) and "
                    f"`/usr/bin/python3 scripts/familyref/fillmask.py` (familyref.py's PyTorch float64 forward of "
                    f"transformers' formulas, weights stored as float32). fillmask.json holds the top-5 ids and "
                    f"softmax probabilities at each mask of {B} sentences run as one padded batch.\n\n"
                    f"{got['desc']}\n")


if __name__ == "__main__":
    main(sys.argv[1])
