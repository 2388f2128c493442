#!/bin/sh
# Makes core/tokenizer/unigram/testdata/spiece.model, spiece.vocab and
# sentencepiece.jsonl with the sentencepiece library itself (Debian's
# sentencepiece 0.1.97, extracted without installing). See
# core/tokenizer/unigram/testdata/README.md.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/core/tokenizer/unigram/testdata
work=$(mktemp -d)
cd "$work"
apt-get download sentencepiece libsentencepiece0
for f in *.deb; do dpkg -x "$f" root; done
export LD_LIBRARY_PATH=$work/root/usr/lib/x86_64-linux-gnu
bin=$work/root/usr/bin
head -c 300000 "$repo/tinydata/pretrain/train.txt" > train.txt
"$bin/spm_train" --input=train.txt --model_prefix=spiece --vocab_size=2000 --model_type=unigram \
    --pad_id=0 --unk_id=1 --bos_id=-1 --eos_id=-1 --control_symbols='[CLS],[SEP],[MASK]' \
    --character_coverage=0.9995 --num_threads=1
cp spiece.model spiece.vocab "$out/"
# The texts: every input of cases.jsonl without a line break, then the first
# 200 held-out sentences.
python3 - "$out/cases.jsonl" "$repo/tinydata/pretrain/heldout.txt" > texts.txt <<'PY'
import json, sys
seen, texts = set(), []
for l in open(sys.argv[1]):
    c = json.loads(l)
    for t in [c['a']] + ([c['b']] if 'b' in c else []):
        if t not in seen and '\n' not in t and '\r' not in t:
            seen.add(t); texts.append(t)
for l in [l.strip() for l in open(sys.argv[2]) if l.strip()][:200]:
    if l not in seen:
        seen.add(l); texts.append(l)
sys.stdout.write('\n'.join(texts) + '\n')
PY
"$bin/spm_encode" --model=spiece.model --output_format=id < texts.txt > ids.txt
python3 - texts.txt ids.txt > "$out/sentencepiece.jsonl" <<'PY'
import json, sys
texts = open(sys.argv[1]).read().split('\n')[:-1]
ids = open(sys.argv[2]).read().split('\n')[:-1]
for t, i in zip(texts, ids):
    print(json.dumps({'text': t, 'ids': [int(x) for x in i.split()]}, ensure_ascii=False))
PY
rm -rf "$work"
