#!/bin/bash
# Training throughput of `bertlab pretrain` against PyTorch (train.py, Debian's torch 1.13 with
# OpenBLAS) on the same model, batch (8 x 128) and threads (2): BENCHMARKS.md, "Performance II".
# Interleaved rounds; bertlab's figures are the difference between a 5-step and an N-step run
# (start-up and warm-up removed), PyTorch's are timed after its fifth step (timing.py).
#
#   bash scripts/pretrainref/throughput.sh [OUT] [ROUNDS]     (from the repository root)
#
# Needs /usr/bin/python3 with python3-torch and libopenblas0-pthread (bench/run.sh installs them).
set -euo pipefail
OUT=${1:-/tmp/bertlab-throughput}
ROUNDS=${2:-3}
mkdir -p "$OUT"
go build -o "$OUT/bertlab" ./cmd/bertlab
[ -f "$OUT/vocab/vocab.txt" ] || "$OUT/bertlab" vocab --data tinydata/pretrain/train.txt --size 8000 --min-frequency 2 --out "$OUT/vocab"
[ -f "$OUT/tref/train.bin" ] || go run ./cmd/pretrainref-dump --vocab "$OUT/vocab" --steps 400 --batch 8 --out "$OUT/tref"
peer() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_WAIT_POLICY=PASSIVE "$@"; }
run_b() { # preset steps
  rm -rf "$OUT/run"
  /usr/bin/time -f "cpu %U user %S sys" env GOMAXPROCS=2 nice -n 10 "$OUT/bertlab" pretrain --preset "$1" \
    --vocab "$OUT/vocab" --data tinydata/pretrain/train.txt --no-nsp --dynamic --no-dropout --batch 8 --seq 128 \
    --steps "$2" --lr 5e-4 --position-init sinusoidal --seed 1 --out "$OUT/run" 2>&1 |
    grep -E "^trained steps|^cpu " | sed "s/^/bertlab $1 steps=$2: /"
}
for preset in tiny mini; do
  n=45; [ $preset = mini ] && n=25
  for _ in $(seq "$ROUNDS"); do
    uptime
    peer nice -n 10 /usr/bin/python3 scripts/pretrainref/timing.py scripts/pretrainref/train.py $preset 9600 $n 5e-4 2 "$OUT/tref" |
      grep TORCH | sed "s/^/torch $preset: /"
    run_b $preset 5
    run_b $preset $n
  done
done
