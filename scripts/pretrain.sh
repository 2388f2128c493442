#!/usr/bin/env bash
# Pre-trains bertlab's built-in model on everyday English and writes it, with its model card, to
# $OUT: `make pretrain` (issue 25; the recipe's record is scripts/PRETRAIN.md). Each stage is
# skipped when its output is already there, and a stage interrupted resumes from its last
# checkpoint with the same numbers, so the whole recipe runs in pieces (`nice -n 19 bash
# scripts/pretrain.sh` again continues it):
#
#   0. corpus   the everyday corpus from the files of $SHARED_DATA (public-repository text that
#               the project never commits: shared/data/README.md): `go run ./cmd/corpus-build`
#               checks every file's sha256 and, when one is missing, says where it comes from
#               and stops here, before any training. Written to $CORPUS.
#   1. vocab    a WordPiece vocabulary of VOCAB_SIZE tokens trained on the mix VOCAB_MIX (the
#               short everyday sentences weighed up so that everyday words are whole tokens).
#   2. mlm      masked-LM pre-training of a LAYERS x HIDDEN model with absolute positions on the
#               mix MIX, whole-word masking of MASK_PROB, one linear schedule of STEPS steps,
#               into $WORK/mlm, evaluated on the held-out split and the cloze sets (CLOZE_SETS)
#               as it goes; for its first
#               PRIOR_STEPS steps the neighbour-head prior (scripts/PRETRAIN.md).
#               Carried on from $RESTART (weights committed when a session stopped, with the
#               step they were saved at) when $WORK/mlm has no checkpoint: the same schedule
#               from that step, the learning rate ramped up again over REWARM steps.
#   3. nsp      next-sentence prediction trained on briefly (its head and the pooler start
#               random), so that the page's next-sentence views have a trained head, into
#               $WORK/final.
#   4. card     the final weights as F16 in $OUT with vocab.txt, tokenizer_config.json and a
#               README.md model card (bertlab modelcard).
#
# `bash scripts/pretrain.sh finetune` afterwards adds the fine-tuning figures (sentiment on
# tinydata and on rt-polarity, part of speech on UD English-EWT) to the card; `... wasm` checks
# that the wasm build (Node) gives the same figures; `... cloze` scores the newest checkpoint of
# the run on the cloze sets; `... restart` writes the newest checkpoint's weights as F16 to
# $RESTART (commit it: a fresh machine carries the run on from there), or, when $RESTART holds
# such weights already, as an 8-bit delta from them to $RESTART/delta (half the bytes; FULL=1
# writes F16 again); `... measure` times a few
# steps of each candidate size; `... vocab` stops after the vocabulary; `... card` writes the
# folder and card again.
#
# Overrides (environment): SHARED_DATA, CORPUS, LAYERS, HIDDEN, HEADS, VOCAB_SIZE, POSITIONS,
# SEQ, BATCH, MASK_PROB, STEPS, LR, WARMUP, PRIOR_HEADS, PRIOR_WEIGHT, PRIOR_STEPS, NSP_STEPS,
# NSP_LR, EVAL_EVERY, SAVE_EVERY, SEED, NAME, OUT, WORK, RESTART, REWARM, NOTE; for restart
# FULL, CHECKPOINT; for finetune SENT_EPOCHS, POS_EPOCHS, SENT_LR, POS_LR, FT_BATCH, SENT_SEEDS; for wasm FT_LR, FT_BATCH, WASM_FT_N; for
# measure CANDIDATES ("LAYERSxHIDDEN ..."), MSTEPS. A short trial: STEPS=20 PRIOR_STEPS=10
# NSP_STEPS=10 NAME=trial OUT=/tmp/trial WORK=/tmp/trial-work RESTART=/tmp/trial-restart bash
# scripts/pretrain.sh
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BERTLAB=${BERTLAB:-bin/bertlab}
SHARED_DATA=${SHARED_DATA:-../shared/data}
CORPUS=${CORPUS:-build/corpus}
# 8 x 256 with a 20,000 vocabulary: 11.6 M parameters, 22.2 MiB as F16 (issue 25 allows 24 MiB);
# why this shape: scripts/PRETRAIN.md, "Everyday English (issue 25)".
LAYERS=${LAYERS:-8}
HIDDEN=${HIDDEN:-256}
HEADS=${HEADS:-4}
VOCAB_SIZE=${VOCAB_SIZE:-20000}
POSITIONS=${POSITIONS:-128}
SEQ=${SEQ:-128}
BATCH=${BATCH:-8}
MASK_PROB=${MASK_PROB:-0.2}
STEPS=${STEPS:-120000}
LR=${LR:-7e-4}
WARMUP=${WARMUP:-3000}
# Layer.head and offset of each head the prior shapes (see bertlab pretrain --neighbour-heads).
PRIOR_HEADS=${PRIOR_HEADS:-0.0-1,0.1+1,1.0-1,1.1+1}
PRIOR_WEIGHT=${PRIOR_WEIGHT:-1}
PRIOR_STEPS=${PRIOR_STEPS:-2000}
NSP_STEPS=${NSP_STEPS:-1500}
NSP_LR=${NSP_LR:-1e-4}
EVAL_EVERY=${EVAL_EVERY:-2000}
SAVE_EVERY=${SAVE_EVERY:-500}
REWARM=${REWARM:-1000}
SEED=${SEED:-1}
NAME=${NAME:-bertlab-mini}
OUT=${OUT:-assets/models/$NAME}
WORK=${WORK:-build/pretrain/$NAME-everyday}
RESTART=${RESTART:-checkpoints/$NAME}
# NOTE: the one line the page shows under the model's name (note.txt): the licence the
# CC BY-SA text gives the weights, and where the sources are named.
NOTE=${NOTE-Pre-trained here on everyday English (Simple English Wikipedia, dialogues, Tatoeba, news, reviews). Weights CC BY-SA 4.0: the model card names every source.}
PROSE=${PROSE:-tinydata/corpus/prose.txt.gz}
# The mixes: part:times. The parts are corpus-build's files in $CORPUS (wiki: Simple English
# Wikipedia; dialogue: Schema-Guided Dialogue; tatoeba: Tatoeba's sentences; news:
# OneStopEnglish; reviews: Pang & Lee's movie reviews) and prose (tinydata's Austen, WordNet,
# Brown and State of the Union text, the old corpus, as a minority).
MIX=${MIX:-wiki:1 dialogue:2 tatoeba:4 news:2 reviews:2 prose:1}
VOCAB_MIX=${VOCAB_MIX:-wiki:1 dialogue:3 tatoeba:12 news:2 reviews:2 prose:1}
# The held-out texts: the new text's split (corpus-build's heldout.txt) and the old comparison
# point; the run evaluates on every fifth document of the first as it goes.
HELDOUT_NEW="$CORPUS/heldout.txt"
HELDOUT_OLD=${HELDOUT_OLD:-tinydata/pretrain/heldout.txt}
HELDOUT_RUN="$WORK/heldout-run.txt"
CLOZE_SETS=${CLOZE_SETS:-tinydata/cloze/everyday.tsv tinydata/cloze/facts.tsv}
MLM_DIR="$WORK/mlm"
FINAL="$WORK/final"
RECIPE="$WORK/recipe.txt"

# plain_text FILE DIR: FILE as a plain text file (FILE itself, or DIR/NAME unpacked from it when
# it is gzip-compressed and not unpacked yet), printed. bertlab vocab reads plain text only.
plain_text() {
  case "$1" in
  *.gz)
    local plain
    plain="$2/$(basename "$1" .gz)"
    if [ ! -s "$plain" ] || [ "$1" -nt "$plain" ]; then
      mkdir -p "$2"
      gzip -dc "$1" >"$plain.tmp" && mv "$plain.tmp" "$plain"
    fi
    echo "$plain" ;;
  *) echo "$1" ;;
  esac
}

$GO build -o "$BERTLAB" ./cmd/bertlab

# mix_args FLAG MIX: FLAG FILE for each part of MIX, as many times as its weight (a file given
# twice counts twice in bertlab pretrain and bertlab vocab), one a line.
mix_args() {
  local flag=$1 part name times file
  for part in $2; do
    name=${part%%:*} times=${part##*:}
    case "$name" in
    prose) file=$(plain_text "$PROSE" "$CORPUS") ;;
    *) file="$CORPUS/$name.txt" ;;
    esac
    for _ in $(seq "$times"); do printf '%s\n%s\n' "$flag" "$file"; done
  done
}

# corpus: the everyday corpus from $SHARED_DATA, once (corpus-build checks every file's sha256;
# a missing one is named with its origin, and the script stops before training).
corpus() {
  if [ -f "$CORPUS/.built" ] && [ -f "$HELDOUT_NEW" ]; then
    return
  fi
  echo "== 0/4 the everyday corpus from $SHARED_DATA -> $CORPUS"
  if ! $GO run ./cmd/corpus-build -data "$SHARED_DATA" -out "$CORPUS"; then
    echo "pretrain.sh: the pre-training text is not all there (above: each missing file and where it comes from); name its folder with SHARED_DATA=DIR" >&2
    exit 1
  fi
  touch "$CORPUS/.built"
}

# card writes $OUT from the run's last checkpoint with its model card; the fine-tuning figures
# ($WORK/finetune.md) and the wasm figures ($WORK/wasm.md) of earlier stages stay on it.
card() {
  local extra=()
  : >"$WORK/extra.md"
  for f in "$WORK/finetune.md" "$WORK/wasm.md" "$CORPUS/SOURCES.md"; do
    [ -f "$f" ] && { cat "$f"; echo; } >>"$WORK/extra.md"
  done
  [ -s "$WORK/extra.md" ] && extra=(--extra "$WORK/extra.md")
  local trainf=()
  mapfile -t trainf < <(mix_args --train "$MIX")
  # The evaluations of the sessions before the last restart (their logs did not come along).
  [ -f "$RESTART/evals.tsv" ] && extra+=(--earlier-evals "$RESTART/evals.tsv")
  "$BERTLAB" modelcard --stage "$MLM_DIR" --run "$FINAL" --heldout "$HELDOUT_NEW" --heldout-also "$HELDOUT_OLD" --out "$OUT" --name "$NAME" \
    --recipe "$RECIPE" --note "$NOTE" "${trainf[@]}" "${extra[@]}"
}

# newest DIR: the newest checkpoint folder of a run.
newest() { ls -d "$1"/checkpoint-* 2>/dev/null | sort -t- -k2 -n | tail -n 1; }

case "${1:-}" in
card)
  card
  exit 0 ;;

# cloze: the cloze sets scored on the run's newest checkpoint (or MODEL=DIR; VERBOSE=1 lists
# the answers).
cloze)
  m=${MODEL:-$(newest "$MLM_DIR")}
  [ -n "$m" ] || { echo "pretrain.sh cloze: no checkpoint in $MLM_DIR" >&2; exit 1; }
  for f in $CLOZE_SETS; do "$BERTLAB" eval --task cloze --model "$m" --data "$f" ${VERBOSE:+-v}; done
  exit 0 ;;

# restart: the newest checkpoint's weights as F16 in $RESTART with the step they were saved at,
# for a commit: on a fresh machine stage 2 carries the run on from there.
restart)
  # CHECKPOINT=DIR names another checkpoint than the newest (one before the last step, so that
  # the stage carried on from it on a fresh machine still has a step to run).
  m=${CHECKPOINT:-$(newest "$MLM_DIR")}
  [ -n "$m" ] && [ -f "$m/model.safetensors" ] || { echo "pretrain.sh restart: no checkpoint ${m:-in $MLM_DIR}" >&2; exit 1; }
  step=${m##*-}
  if [ -f "$RESTART/step" ] && [ -z "${FULL:-}" ]; then
    # $RESTART already holds a base (committed): the new point as an 8-bit delta from it, half
    # the bytes of F16 (the restart commits stay under the issue's 100 MB), in $RESTART/delta.
    tmp="$RESTART/delta.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp"
    cat "$RESTART"/model.safetensors.part-* >"$tmp/model.safetensors"
    (cd "$tmp" && cp ../model.safetensors.sha256 . && sha256sum -c --quiet model.safetensors.sha256) ||
      { echo "pretrain.sh restart: the base in $RESTART does not match its sum (write a full one with FULL=1)" >&2; exit 1; }
    "$BERTLAB" delta --base "$tmp/model.safetensors" --target "$m/model.safetensors" --out "$tmp/model.delta.safetensors"
    rm "$tmp/model.safetensors" "$tmp/model.safetensors.sha256"
    echo "$step" >"$tmp/step"
    (cd "$tmp" && sha256sum model.delta.safetensors >model.delta.safetensors.sha256)
    {
      echo "# The run's newest restart point, as a delta"
      echo
      echo "The weights of \`$m\` (step $step of $STEPS) as an 8-bit delta from the F16 weights one"
      echo "folder up (step $(cat "$RESTART/step")): \`bertlab delta --base ../model.safetensors --apply"
      echo "model.delta.safetensors --out FILE\` gives them back as F32, each value within half its block's"
      echo "scale (\`core/hf/delta.go\`). \`make pretrain\` on a machine without \`build/\` applies it and carries"
      echo "the run on from step $step. Half the bytes of F16, so that the restart commits stay under 100 MB."
    } >"$tmp/README.md"
    rm -rf "$RESTART/delta" && mv "$tmp" "$RESTART/delta"
    echo "wrote $RESTART/delta (step $step, from the base at step $(cat "$RESTART/step")): commit it"
    exit 0
  fi
  tmp="$RESTART.tmp"
  rm -rf "$tmp"
  "$BERTLAB" convert --model "$m" --dtype F16 --out "$tmp"
  echo "$step" >"$tmp/step"
  # In parts under 20 MiB (the repository's limit for one file), with the whole file's sum.
  (cd "$tmp" && sha256sum model.safetensors >model.safetensors.sha256 &&
    split -b 12M -d model.safetensors model.safetensors.part- && rm model.safetensors)
  {
    echo "# Where the built-in model's pre-training run stands"
    echo
    echo "The weights of \`$m\` (step $step of $STEPS), stored as F16 (in parts:"
    echo "\`cat model.safetensors.part-* > model.safetensors\`, sum in model.safetensors.sha256) so that a"
    echo "fresh machine can carry the run on: \`make pretrain\` (scripts/pretrain.sh) starts its masked-LM"
    echo "stage from here with \`--start-step $step\` when its work folder has no checkpoint (the optimizer"
    echo "starts afresh; the learning rate ramps up again over $REWARM steps). Not a finished model: the"
    echo "page's model is in assets/models/. Trained on CC BY-SA text among others (scripts/PRETRAIN.md):"
    echo "CC BY-SA 4.0."
  } >"$tmp/README.md"
  rm -rf "$RESTART"
  mkdir -p "$(dirname "$RESTART")"
  mv "$tmp" "$RESTART"
  echo "wrote $RESTART (step $step): commit it"
  exit 0 ;;

# measure: the step time of each candidate shape on this machine (a few steps each; the first
# step is included, so it slightly overstates the time of a long run).
measure)
  MSTEPS=${MSTEPS:-8}
  corpus
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$BERTLAB" vocab --data "$CORPUS/tatoeba.txt" --size "$VOCAB_SIZE" --out "$tmp/vocab" >/dev/null
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
  for c in ${CANDIDATES:-4x256 8x256 4x384}; do
    "$BERTLAB" init --preset mini --layers "${c%x*}" --hidden "${c#*x}" --vocab "$tmp/vocab" --max-positions "$SEQ" --out "$tmp/m$c" >/dev/null
    log=$("$BERTLAB" pretrain --model "$tmp/m$c" --data "$CORPUS/tatoeba.txt" --out "$tmp/$c" --steps "$MSTEPS" \
      --batch "$BATCH" --seq "$SEQ" --seed "$SEED" --no-nsp --dynamic --whole-word --mask-prob "$MASK_PROB" --log-every 1000 2>/dev/null)
    echo "$c: $(echo "$log" | grep -o '[0-9,]* parameters' | head -n 1), $(echo "$log" | sed -n 's/^trained .*: \([0-9]* tokens\/s\)$/\1/p')"
  done
  exit 0 ;;

# finetune: the fine-tuning figures of the model card. Fine-tunes the folder in $OUT (as
# shipped) on each task's training split, keeping the best epoch on dev, scores the test split
# with bertlab eval, writes $WORK/finetune.md and rewrites the card with it.
finetune)
  SENT_EPOCHS=${SENT_EPOCHS:-4}
  POS_EPOCHS=${POS_EPOCHS:-4}
  SENT_LR=${SENT_LR:-3e-4}
  POS_LR=${POS_LR:-1e-3}
  FT_BATCH=${FT_BATCH:-32}
  # Restarts for the two sentiment sets, as BERT's paper ran them on small sets: seeds SEED to
  # SEED+SENT_SEEDS-1, the run best on the dev split kept (the test split chooses nothing).
  SENT_SEEDS=${SENT_SEEDS:-5}
  corpus
  [ -f "$OUT/config.json" ] || { echo "pretrain.sh finetune: no model in $OUT: run make pretrain first" >&2; exit 1; }
  ft() { # task train dev test out lr epochs [seeds]
    local best="" bestdev=-1 s dev
    for s in $(seq "$SEED" $((SEED + ${8:-1} - 1))); do
      local args=(finetune --task "$1" --model "$OUT" --train "$2" --dev "$3" --out "$5-seed$s" --epochs "$7"
        --batch "$FT_BATCH" --lr "$6" --seq 128 --seed "$s")
      # A seed whose run finished with the same arguments (its model, its dev line, the
      # arguments it ran with) is not run again.
      if ! { [ -f "$5-seed$s/config.json" ] && grep -q '^dev (best epoch' "$5-seed$s.log" 2>/dev/null &&
        [ "$(cat "$5-seed$s.args" 2>/dev/null)" = "${args[*]}" ]; }; then
        echo "   seed $s: fine-tuning into $5-seed$s (log: $5-seed$s.log)" >&2
        rm -f "$5-seed$s.args"
        "$BERTLAB" "${args[@]}" >"$5-seed$s.log" 2>&1
        echo "${args[*]}" >"$5-seed$s.args"
      fi
      # "dev (best epoch, 4 of 4, by accuracy): accuracy 0.7909  macro_f1 ...": the figure named after "by".
      dev=$(sed -n 's/^dev (best epoch.*by \([a-z_0-9]*\)):.* \1 \([0-9.]*\).*/\2/p' "$5-seed$s.log")
      [ -n "$dev" ] || { echo "pretrain.sh finetune: no dev figure in $5-seed$s.log" >&2; exit 1; }
      echo "   seed $s: dev $dev" >&2
      if awk -v d="$dev" -v b="$bestdev" 'BEGIN { exit !(d > b) }'; then best=$s bestdev=$dev; fi
    done
    echo "   kept: seed $best (dev $bestdev)" >&2
    rm -rf "$5" && cp -r "$5-seed$best" "$5"
    echo "$best" >"$5.seed"
    "$BERTLAB" eval --task "$1" --model "$5" --data "$4" --json
  }
  field() { echo "$1" | sed -n "s/.*\"$2\":\([0-9.eE+-]*\).*/\1/p" | awk '{ printf "%.2f%%", 100 * $1 }'; }
  echo "== fine-tuning: sentiment (tinydata)"
  sent=$(ft classify tinydata/sentiment/train.tsv tinydata/sentiment/dev.tsv tinydata/sentiment/test.tsv "$WORK/sentiment" "$SENT_LR" "$SENT_EPOCHS" "$SENT_SEEDS")
  echo "$sent"
  echo "== fine-tuning: sentiment (rt-polarity)"
  rt=$(ft classify "$CORPUS/rt-polarity-train.tsv" "$CORPUS/rt-polarity-dev.tsv" "$CORPUS/rt-polarity-test.tsv" "$WORK/sentiment-rt" "$SENT_LR" "$SENT_EPOCHS" "$SENT_SEEDS")
  echo "$rt"
  echo "== fine-tuning: part of speech (UD English-EWT)"
  pos=$(ft tag "$CORPUS/ewt-train.conll" "$CORPUS/ewt-dev.conll" "$CORPUS/ewt-test.conll" "$WORK/pos" "$POS_LR" "$POS_EPOCHS")
  echo "$pos"
  {
    echo "## Fine-tuning"
    echo
    echo "The model as stored here, fine-tuned natively with \`bertlab finetune\` (batch $FT_BATCH; sentiment"
    echo "$SENT_EPOCHS epochs at peak learning rate $SENT_LR, part of speech $POS_EPOCHS epochs at $POS_LR, with 10%"
    echo "warm-up; the epoch best on the dev split kept; part of speech with seed $SEED, each sentiment set"
    echo "with $SENT_SEEDS restarts, seeds $SEED-$((SEED + SENT_SEEDS - 1)), the run best on dev kept: seed $(cat "$WORK/sentiment.seed") for"
    echo "tinydata, $(cat "$WORK/sentiment-rt.seed") for rt-polarity), then scored on the test split with \`bertlab eval\`:"
    echo
    echo "| task | data (train / dev / test) | test figures |"
    echo "|---|---|---|"
    echo "| sentiment (Pang & Lee sentences) | \`tinydata/sentiment/\`: 3,200 / 400 / 400 sentences | accuracy $(field "$sent" accuracy), macro F1 $(field "$sent" macro_f1) |"
    echo "| sentiment (rt-polarity, CC BY 4.0) | corpus-build's fixed split: $(wc -l <"$CORPUS/rt-polarity-train.tsv") / $(wc -l <"$CORPUS/rt-polarity-dev.tsv") / $(wc -l <"$CORPUS/rt-polarity-test.tsv") sentences | accuracy $(field "$rt" accuracy), macro F1 $(field "$rt" macro_f1) |"
    echo "| part of speech (UD English-EWT, UPOS, CC BY-SA 4.0) | as released: 12,544 / 2,001 / 2,077 sentences | token accuracy $(field "$pos" token_accuracy) |"
    echo
    echo "Made by \`bash scripts/pretrain.sh finetune\`."
  } >"$WORK/finetune.md"
  cat "$WORK/finetune.md"
  if [ -d "$FINAL" ]; then card; else echo "no run in $WORK: the card is not rewritten"; fi
  exit 0 ;;
esac

if [ "${1:-}" = wasm ]; then
  corpus
  # 1e-3: what the small model learns at in a single short epoch (2e-4 left it at chance).
  FT_LR=${FT_LR:-1e-3}
  FT_BATCH=${FT_BATCH:-32}
  WASM_FT_N=${WASM_FT_N:-400}
  [ -f "$OUT/config.json" ] || { echo "pretrain.sh wasm: no model in $OUT: run make pretrain first" >&2; exit 1; }
  # The page's engine build: WebAssembly SIMD from Go 1.27.3's simd package (see the Makefile).
  WASM=build/bertlab.wasm
  SIMD_ENV=(env GOTOOLCHAIN=go1.27.3 GOEXPERIMENT=simd)
  GOOS=js GOARCH=wasm "${SIMD_ENV[@]}" $GO build -o "$WASM" ./cmd/bertlab
  NODEW=(node "$("${SIMD_ENV[@]}" $GO env GOROOT)/lib/wasm/wasm_exec_node.js" "$WASM")
  field() { echo "$1" | sed -n "s/.*\"$2\":\([0-9.eE+-]*\).*/\1/p" | awk '{ printf "%.2f%%", 100 * $1 }'; }
  tmp="$WORK/wasm"
  rm -rf "$tmp" && mkdir -p "$tmp"
  rows=()
  fail=0
  # row what metric native-json wasm-json [tolerance in points]: the same weights must give the
  # same figure; a fine-tune made in each build may differ by the tolerance (the builds' training
  # steps differ by float32 rounding: FMA natively, separate multiply and add in wasm).
  row() {
    local n w
    n=$(field "$3" "$2")
    w=$(field "$4" "$2")
    if [ -z "${5:-}" ]; then
      [ "$n" = "$w" ] || { echo "pretrain.sh wasm: $1 $2: native $n, wasm $w" >&2; fail=1; }
    else
      awk -v n="${n%\%}" -v w="${w%\%}" -v t="$5" 'BEGIN { d = n - w; if (d < 0) d = -d; exit !(d <= t) }' ||
        { echo "pretrain.sh wasm: $1 $2: native $n, wasm $w, more than $5 points apart" >&2; fail=1; }
    fi
    rows+=("| $1 | $2 | $n | $w |")
  }
  echo "== held-out masked LM (native, then wasm)"
  n=$("$BERTLAB" eval --task mlm --model "$OUT" --data "$HELDOUT_NEW" --json)
  w=$("${NODEW[@]}" eval --task mlm --model "$OUT" --data "$HELDOUT_NEW" --json)
  echo "native $n"; echo "wasm   $w"
  row "held-out masked LM, shipped model" mlm_accuracy "$n" "$w"
  row "held-out masked LM, shipped model" mlm_top5 "$n" "$w"
  # task name short-train short-dev short-test metric test-of-the-finetune-model (pretrain.sh
  # finetune trains part of speech on UD English-EWT, whose tags are not tinydata's)
  for t in "classify sentiment tinydata/sentiment/train.tsv tinydata/sentiment/dev.tsv tinydata/sentiment/test.tsv accuracy tinydata/sentiment/test.tsv" \
    "tag pos tinydata/pos/train.conll tinydata/pos/dev.conll tinydata/pos/test.conll token_accuracy $CORPUS/ewt-test.conll"; do
    set -- $t
    task=$1 name=$2 trainf=$3 devf=$4 testf=$5 metric=$6 fttest=$7
    if [ -f "$WORK/$name/config.json" ]; then
      echo "== $name: the fine-tuned model of pretrain.sh finetune on the test split"
      n=$("$BERTLAB" eval --task "$task" --model "$WORK/$name" --data "$fttest" --json)
      w=$("${NODEW[@]}" eval --task "$task" --model "$WORK/$name" --data "$fttest" --json)
      echo "native $n"; echo "wasm   $w"
      row "$name test ($fttest), model of \`pretrain.sh finetune\`" "$metric" "$n" "$w"
    fi
    echo "== $name: a short fine-tune in both builds ($WASM_FT_N training lines, 1 epoch)"
    if [ "$task" = tag ]; then # CoNLL: whole sentences (blank-line separated)
      awk -v n="$WASM_FT_N" 'BEGIN { RS = ""; ORS = "\n\n" } NR <= n' "$trainf" >"$tmp/$name-train"
    else
      head -n "$WASM_FT_N" "$trainf" >"$tmp/$name-train"
    fi
    for b in native wasm; do
      cmd=("$BERTLAB"); [ $b = wasm ] && cmd=("${NODEW[@]}")
      "${cmd[@]}" finetune --task "$task" --model "$OUT" --train "$tmp/$name-train" --out "$tmp/$name-$b" --epochs 1 \
        --batch "$FT_BATCH" --lr "$FT_LR" --seq 128 --seed "$SEED" --keep-last 2>"$tmp/$name-$b.log"
      "${cmd[@]}" eval --task "$task" --model "$tmp/$name-$b" --data "$testf" --json >"$tmp/$name-$b.json"
      echo "$b $(cat "$tmp/$name-$b.json")"
    done
    row "$name test, short fine-tune made in each build" "$metric" "$(cat "$tmp/$name-native.json")" "$(cat "$tmp/$name-wasm.json")" 1
  done
  {
    echo "## The same figures in the wasm build"
    echo
    echo "\`bash scripts/pretrain.sh wasm\` runs \`bertlab\` built for GOOS=js with WebAssembly SIMD (Go 1.27.3, as"
    echo "the page's app.wasm) in Node ($(node --version)), beside the native build. The short fine-tunes use the first $WASM_FT_N training"
    echo "lines (sentences for part of speech), 1 epoch, batch $FT_BATCH, learning rate $FT_LR, seed $SEED. The same"
    echo "weights give the same figures in both builds; a fine-tune made in each may differ by a few test"
    echo "items (at most 1 point is accepted), as the builds' training steps differ by float32 rounding (fused"
    echo "multiply-adds natively, none in wasm) and a short run near chance turns that into a few flipped answers."
    echo
    echo "| what | metric | native | wasm (Node) |"
    echo "|---|---|---:|---:|"
    printf '%s\n' "${rows[@]}"
  } >"$WORK/wasm.md"
  cat "$WORK/wasm.md"
  if [ -d "$FINAL" ]; then card; else echo "no run in $WORK: the card is not rewritten"; fi
  [ $fail = 0 ] || { echo "pretrain.sh wasm: the builds disagree (above)" >&2; exit 1; }
  exit 0
fi


mkdir -p "$WORK"
corpus
mapfile -t VOCAB_DATA < <(mix_args --data "$VOCAB_MIX")
mapfile -t DATA < <(mix_args --data "$MIX")
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR % 5 == 0' "$HELDOUT_NEW" >"$HELDOUT_RUN"
VOCAB_CMD=("$BERTLAB" vocab "${VOCAB_DATA[@]}" --size "$VOCAB_SIZE" --min-frequency 2 --out "$WORK/vocab")
INIT_MODEL=("$BERTLAB" init --preset mini --layers "$LAYERS" --hidden "$HIDDEN" --heads "$HEADS" --vocab "$WORK/vocab"
  --max-positions "$POSITIONS" --seed "$SEED" --out "$WORK/init")
OPTS=(--heldout "$HELDOUT_RUN" --batch "$BATCH" --seq "$SEQ" --dynamic --no-dropout --whole-word --mask-prob "$MASK_PROB"
  --eval-every "$EVAL_EVERY" --save-every "$SAVE_EVERY" --keep 2)
for f in $CLOZE_SETS; do OPTS+=(--cloze "$f"); done
MLM_CMD=("$BERTLAB" pretrain --out "$MLM_DIR" --steps "$STEPS" --lr "$LR" --warmup "$WARMUP" --no-nsp
  --neighbour-heads "$PRIOR_HEADS" --neighbour-weight "$PRIOR_WEIGHT" --neighbour-steps "$PRIOR_STEPS"
  "${DATA[@]}" "${OPTS[@]}" --seed "$SEED")
NSP_CMD=("$BERTLAB" pretrain --model "$MLM_DIR" --out "$FINAL" --steps "$NSP_STEPS" --lr "$NSP_LR"
  --warmup $((NSP_STEPS / 10)) "${DATA[@]}" "${OPTS[@]}" --seed "$SEED")

# The recipe, as the model card quotes it.
{
  echo "go run ./cmd/corpus-build -data $SHARED_DATA -out $CORPUS"
  echo "${VOCAB_CMD[*]}"
  echo "${INIT_MODEL[*]}"
  echo "${MLM_CMD[*]} --model $WORK/init"
  echo "${NSP_CMD[*]}"
} >"$RECIPE"

echo "== 1/4 vocabulary ($VOCAB_SIZE tokens)"
if [ -f "$WORK/vocab/vocab.txt" ]; then
  echo "$WORK/vocab/vocab.txt exists: kept"
elif [ -f "$RESTART/vocab.txt" ]; then
  mkdir -p "$WORK/vocab"
  cp "$RESTART/vocab.txt" "$RESTART/tokenizer_config.json" "$WORK/vocab/"
  echo "the vocabulary of $RESTART (the run carries on from there)"
else
  "${VOCAB_CMD[@]}"
fi
[ "${1:-}" = vocab ] && exit 0

echo "== 2/4 masked LM ($LAYERS x $HIDDEN, absolute positions, $STEPS steps of $BATCH x $SEQ tokens, whole-word masking of $MASK_PROB, the neighbour-head prior for $PRIOR_STEPS)"
start=$(date +%s)
if [ -f "$MLM_DIR/config.json" ] && [ -d "$MLM_DIR/checkpoint-$STEPS" ]; then
  echo "$MLM_DIR holds the finished masked-LM stage: kept"
elif [ -n "$(newest "$MLM_DIR")" ]; then
  # The stage's own start (from init, or carried on from $RESTART), then --resume.
  read -r -a from <"$WORK/mlm-from.txt"
  "${MLM_CMD[@]}" "${from[@]}" --resume
elif [ -f "$RESTART/step" ]; then
  # The committed weights joined again, their sum checked.
  rm -rf "$WORK/restart" && mkdir -p "$WORK/restart"
  cp "$RESTART"/*.json "$RESTART"/vocab.txt "$RESTART"/model.safetensors.sha256 "$WORK/restart/"
  cat "$RESTART"/model.safetensors.part-* >"$WORK/restart/model.safetensors"
  (cd "$WORK/restart" && sha256sum -c --quiet model.safetensors.sha256)
  rstep=$(cat "$RESTART/step")
  if [ -f "$RESTART/delta/step" ]; then
    # The newer point stored as a delta from those weights (pretrain.sh restart).
    (cd "$RESTART/delta" && sha256sum -c --quiet model.delta.safetensors.sha256)
    "$BERTLAB" delta --base "$WORK/restart/model.safetensors" --apply "$RESTART/delta/model.delta.safetensors" \
      --out "$WORK/restart/model.applied.safetensors"
    mv "$WORK/restart/model.applied.safetensors" "$WORK/restart/model.safetensors"
    rstep=$(cat "$RESTART/delta/step")
  fi
  from=(--model "$WORK/restart" --start-step "$rstep" --rewarm "$REWARM")
  echo "${from[*]}" >"$WORK/mlm-from.txt"
  echo "carrying the run on from $RESTART at step ${from[3]}"
  "${MLM_CMD[@]}" "${from[@]}"
else
  [ -f "$WORK/init/config.json" ] || "${INIT_MODEL[@]}"
  from=(--model "$WORK/init")
  echo "${from[*]}" >"$WORK/mlm-from.txt"
  "${MLM_CMD[@]}" "${from[@]}"
fi
echo "masked-LM stage: $(( $(date +%s) - start )) s"

echo "== 3/4 next-sentence prediction ($NSP_STEPS steps)"
if [ -f "$FINAL/config.json" ] && [ -d "$FINAL/checkpoint-$NSP_STEPS" ]; then
  echo "$FINAL holds the finished NSP stage: kept"
elif [ -n "$(newest "$FINAL")" ]; then
  "${NSP_CMD[@]}" --resume
else
  "${NSP_CMD[@]}"
fi

echo "== 4/4 model folder and card -> $OUT"
card
echo "done: $OUT (fine-tuning figures for the card: bash scripts/pretrain.sh finetune)"
