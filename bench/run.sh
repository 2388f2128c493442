#!/usr/bin/env bash
# make bench: bertlab against its peers, side by side in one run, one table at the end.
#
# Installs the peers it needs when missing (Debian: python3-numpy, libopenblas0-pthread,
# python3-torch; npm: onnxruntime-node and onnxruntime-web into bench/node_modules, with
# --ignore-scripts), prints one line for each peer it skips and why, measures, and prints the
# table (cmd/bertbench table). Raw figures go to bench/out/results.txt.
#
# Environment: GO (go command), BENCH_REPS (repetitions, default 7; Base and training use
# fewer), BENCH_LARGE=0 skips BERT-Large, BENCH_BUDGET_S (default 480: BERT-Large is skipped
# when less than 120 s of it is left), BENCH_ONLY=wasm (make bench-wasm) measures only the
# WebAssembly rows: bertlab wasm, scalar (Go 1.26) and SIMD (BENCH_SIMD_TOOLCHAIN, default
# go1.27.3, with GOEXPERIMENT=simd: the page's app.wasm), and onnxruntime-web; BENCH_ONLY=train
# (make bench-train) only the training rows (native against PyTorch, with the host's two-core
# line, and the wasm builds'). BENCH_ROUNDS
# (default 3) is the number of alternating rounds of bertlab's and onnxruntime's measurements.
# WebAssembly runs under `node --no-liftoff`: V8 then compiles every function with its
# optimising tier at once; with its default dynamic tiering, onnxruntime-web's first thousands
# of calls ran baseline code while the optimiser competed for the (shared) cores.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
REPS=${BENCH_REPS:-7}
# Rounds of the alternating measurements against onnxruntime (see median_rounds below).
ROUNDS=${BENCH_ROUNDS:-3}
ONLY=${BENCH_ONLY:-}
SIMD_ENV="GOTOOLCHAIN=${BENCH_SIMD_TOOLCHAIN:-go1.27.3} GOEXPERIMENT=simd"
BUDGET=${BENCH_BUDGET_S:-480}
PY=/usr/bin/python3 # Debian's python: the first python3 on PATH lacks Debian's numpy and torch
OUT=bench/out
RES=$OUT/results.txt
mkdir -p "$OUT"
: >"$RES"
START=$SECONDS
note() { echo "# $*" >>"$RES"; }
skip() { echo "skip: $*"; note "skipped: $*"; }
step() { echo "== $* ($((SECONDS - START)) s)" >&2; }
# Peers run with OpenBLAS on its own choice of kernel: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
# may be set on these machines (they slow OpenBLAS down); unset them for the peer commands only.
peer() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_WAIT_POLICY=PASSIVE "$@"; }
# native: true unless only the WebAssembly rows are wanted; inference: false when only the
# training rows are.
native() { [ "$ONLY" != wasm ]; }
inference() { [ "$ONLY" != train ]; }
case "$ONLY" in
wasm) note "BENCH_ONLY=wasm: only the WebAssembly rows" ;;
train) note "BENCH_ONLY=train: only the training rows" ;;
esac

# --- peers: install what is missing --------------------------------------------------------
have_py() { [ -x "$PY" ] && "$PY" -c "import $1" >/dev/null 2>&1; }
have_openblas() { ls /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 >/dev/null 2>&1; }
if ! have_py numpy || ! have_py torch || ! have_openblas; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    step "apt-get install python3-numpy libopenblas0-pthread python3-torch"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-numpy libopenblas0-pthread python3-torch >"$OUT/apt.log" 2>&1 ||
      { apt-get update -q >>"$OUT/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-numpy libopenblas0-pthread python3-torch >>"$OUT/apt.log" 2>&1; }
  fi
fi
NUMPY=1 TORCH=1 ORT=1
have_py numpy || { NUMPY=0; skip "numpy+OpenBLAS: Debian python3-numpy not importable by $PY (see $OUT/apt.log)"; }
[ $NUMPY = 1 ] && ! have_openblas && note "libopenblas0-pthread missing: numpy runs Debian's reference BLAS"
have_py torch || { TORCH=0; skip "torch+OpenBLAS: Debian python3-torch not importable by $PY (see $OUT/apt.log)"; }
if ! command -v node >/dev/null; then
  ORT=0
  skip "onnxruntime-node, onnxruntime-web and bertlab wasm: node not found"
elif [ ! -f bench/node_modules/onnxruntime-node/package.json ] || [ ! -f bench/node_modules/onnxruntime-web/package.json ]; then
  step "npm ci --ignore-scripts (bench/)"
  (cd bench && npm ci --ignore-scripts --no-audit --no-fund >"../$OUT/npm.log" 2>&1) ||
    { ORT=0; skip "onnxruntime-node and onnxruntime-web: npm ci --ignore-scripts failed (see $OUT/npm.log)"; }
fi
[ $TORCH = 0 ] && [ $ORT = 1 ] && { ORT=0; skip "onnxruntime-node and onnxruntime-web: no ONNX models without torch.onnx.export"; }

# --- build bertlab's side -------------------------------------------------------------------
step "build"
$GO build -o "$OUT/bertbench" ./cmd/bertbench || exit 1
WASM=0
if command -v node >/dev/null; then
  GOOS=js GOARCH=wasm $GO build -o "$OUT/bertbench.wasm" ./cmd/bertbench && WASM=1
fi
WASMRUN="node --no-liftoff $($GO env GOROOT)/lib/wasm/wasm_exec_node.js $OUT/bertbench.wasm"
[ $WASM = 0 ] && command -v node >/dev/null && skip "bertlab wasm: GOOS=js GOARCH=wasm build failed"
# The page's engine.wasm: the same code built with the simd package (wasm SIMD, 4 float32 lanes).
SIMD=0
if command -v node >/dev/null; then
  env $SIMD_ENV GOOS=js GOARCH=wasm $GO build -o "$OUT/bertbench-simd.wasm" ./cmd/bertbench 2>"$OUT/simd-build.log" && SIMD=1
  [ $SIMD = 0 ] && skip "bertlab wasm-simd: $SIMD_ENV build failed (see $OUT/simd-build.log)"
fi
[ $SIMD = 1 ] && SIMDRUN="node --no-liftoff $(env $SIMD_ENV $GO env GOROOT)/lib/wasm/wasm_exec_node.js $OUT/bertbench-simd.wasm"
BB="$OUT/bertbench"

# This host's speed comes and goes by a third for seconds at a time: measured minutes apart, one
# side of a ratio could fall in a slow stretch and the other not. So the rows against
# onnxruntime (native and web) are measured in alternating rounds (ROUNDS), each figure the
# median of its rounds (median_rounds), and within a round the 1- and 2-thread Base/128
# forwards alternate call by call (bertbench forward -threads 1,2).
median_rounds() {
  grep '^#' "$1" | awk '!seen[$0]++' >>"$RES"
  grep -v '^#' "$1" | sort -k1,1 -k2,2g | awk '
    function emit() { print key, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }
    $1 != key { if (n) emit(); key = $1; n = 0 }
    { v[++n] = $2 }
    END { if (n) emit() }' >>"$RES"
}
BREPS=$((REPS < 5 ? REPS : 5))

# --- peers measured once: numpy, torch, and the ONNX exports ------------------------------------
if native && inference && [ $NUMPY = 1 ]; then
  step "GEMM numpy"
  peer OPENBLAS_NUM_THREADS=1 "$PY" bench/peer_numpy.py "$REPS" >>"$RES" || skip "numpy+OpenBLAS: peer_numpy.py failed"
fi
ORT_GEMM=0
if inference && [ $ORT = 1 ]; then
  step "ONNX export of the GEMMs (torch.onnx.export)"
  if peer OPENBLAS_NUM_THREADS=1 "$PY" bench/peer_torch.py "$OUT/onnx" gemm >"$OUT/export.log" 2>&1; then
    ORT_GEMM=1
  else
    skip "onnxruntime GEMM: torch.onnx.export failed (see $OUT/export.log)"
  fi
fi
if ! native && inference && [ $ORT = 1 ] && { [ ! -f "$OUT/onnx/mini128.onnx" ] || [ ! -f "$OUT/onnx/tiny16.onnx" ]; }; then
  step "ONNX export for onnxruntime-web"
  peer OPENBLAS_NUM_THREADS=1 "$PY" bench/peer_torch.py "$OUT/onnx" mini128,tiny16 1 1 >/dev/null ||
    skip "onnxruntime-web: torch.onnx.export failed"
fi
if native && inference && [ $TORCH = 1 ]; then
  step "forward torch (and ONNX export)"
  peer OPENBLAS_NUM_THREADS=1 "$PY" bench/peer_torch.py "$OUT/onnx" base128 "$BREPS" 1 >>"$RES" &&
    peer OPENBLAS_NUM_THREADS=1 "$PY" bench/peer_torch.py "$OUT/onnx" mini128,tiny16 "$REPS" 1 >>"$RES" &&
    peer OPENBLAS_NUM_THREADS=2 "$PY" bench/peer_torch.py "$OUT/onnx" base128 "$BREPS" 2 >>"$RES" ||
    skip "torch+OpenBLAS: peer_torch.py failed"
fi

# --- native GEMM and forward, and onnxruntime-node, in alternating rounds ---------------------
if native && inference; then
  step "GEMM and forward, native and onnxruntime-node, $ROUNDS rounds"
  NR="$OUT/native-rounds.txt"
  : >"$NR"
  ORT_NODE=$ORT
  for _ in $(seq "$ROUNDS"); do
    $BB gemm -reps "$REPS" >>"$NR"
    if [ $ORT_NODE = 1 ] && [ $ORT_GEMM = 1 ]; then
      node bench/peer_ort.js node "$OUT/onnx" gemm "$REPS" >>"$NR" || { ORT_NODE=0; skip "onnxruntime-node GEMM: peer_ort.js failed"; }
    fi
    $BB forward -models base128 -reps "$BREPS" -threads 1,2 >>"$NR"
    $BB forward -models mini128,tiny16 -reps "$REPS" >>"$NR"
    # What two of this host's cores give together (the 2-thread row's ceiling).
    $BB cores >>"$NR"
    if [ $ORT_NODE = 1 ] && [ -f "$OUT/onnx/base128.onnx" ]; then
      { node bench/peer_ort.js node "$OUT/onnx" base128 "$BREPS" && node bench/peer_ort.js node "$OUT/onnx" mini128,tiny16 "$REPS"; } >>"$NR" ||
        { ORT_NODE=0; skip "onnxruntime-node: peer_ort.js failed"; }
    fi
  done
  median_rounds "$NR"
fi

# --- the scalar browser build's GEMM, once (the SIMD build's and onnxruntime-web's alternate below)
if inference && [ $WASM = 1 ]; then
  step "GEMM wasm"
  $WASMRUN gemm -tag wasm -reps 3 >>"$RES"
fi

# --- forward, batch 1, eval, in the browser builds --------------------------------------------
if inference && [ $WASM = 1 ]; then
  step "forward wasm"
  $WASMRUN forward -tag wasm -models mini128 -reps 3 >>"$RES"
  $WASMRUN forward -tag wasm -models tiny16 -reps "$REPS" >>"$RES"
fi
# The browser build's GEMMs and forwards and onnxruntime-web's, in alternating rounds (see above).
if inference && { [ $SIMD = 1 ] || [ $ORT = 1 ]; }; then
  step "GEMM and forward, wasm-simd and onnxruntime-web (wasm, in Node), $ROUNDS rounds"
  WR="$OUT/web-rounds.txt"
  : >"$WR"
  ORT_WEB_GEMM=$ORT_GEMM
  for _ in $(seq "$ROUNDS"); do
    [ $SIMD = 1 ] && $SIMDRUN gemm -tag wasm-simd -reps 3 >>"$WR"
    if [ $ORT_WEB_GEMM = 1 ]; then
      node --no-liftoff bench/peer_ort.js web "$OUT/onnx" gemm 3 >>"$WR" || { ORT_WEB_GEMM=0; skip "onnxruntime-web GEMM: peer_ort.js failed"; }
    fi
    if [ $SIMD = 1 ]; then
      $SIMDRUN forward -tag wasm-simd -models mini128 -reps 3 >>"$WR"
      $SIMDRUN forward -tag wasm-simd -models tiny16 -reps "$REPS" >>"$WR"
    fi
    if [ $ORT = 1 ]; then
      node --no-liftoff bench/peer_ort.js web "$OUT/onnx" mini128,tiny16 "$REPS" >>"$WR" || { skip "onnxruntime-web: peer_ort.js failed"; break; }
    fi
  done
  median_rounds "$WR"
fi

# --- training, seq 128 ----------------------------------------------------------------------
# One full step a side (forward, backward, clipping, AdamW), bertlab's and PyTorch's in
# alternating rounds like the forward rows, each after its warm-up steps.
if native; then
  step "training native and torch, $ROUNDS rounds"
  TR="$OUT/train-rounds.txt"
  : >"$TR"
  TORCH_TRAIN=$TORCH
  for _ in $(seq "$ROUNDS"); do
    $BB train -models tiny,mini -reps 3 -threads 1,2 >>"$TR"
    $BB train -models base -reps 2 -threads 1,2 >>"$TR"
    # The 2-thread rows' ceiling, measured in the same rounds when the forward rounds do not run.
    inference || $BB cores >>"$TR"
    if [ $TORCH_TRAIN = 1 ]; then
      { peer OPENBLAS_NUM_THREADS=1 "$PY" bench/peer_torch_train.py tiny,mini 3 1 &&
        peer OPENBLAS_NUM_THREADS=1 "$PY" bench/peer_torch_train.py base 2 1 &&
        peer OPENBLAS_NUM_THREADS=2 "$PY" bench/peer_torch_train.py tiny,mini 3 2 &&
        peer OPENBLAS_NUM_THREADS=2 "$PY" bench/peer_torch_train.py base 2 2; } >>"$TR" ||
        { TORCH_TRAIN=0; skip "torch training: peer_torch_train.py failed"; }
    fi
  done
  median_rounds "$TR"
fi
if [ $WASM = 1 ]; then
  step "training wasm"
  $WASMRUN train -tag wasm -models tiny -batch 8 -reps 3 >>"$RES"
  $WASMRUN train -tag wasm -models mini -batch 2 -reps 1 >>"$RES"
  note "wasm training: Tiny batch 8, Mini batch 2 (x128 tokens), 3 and 1 timed steps after the warm-up steps"
fi
if [ $SIMD = 1 ]; then
  step "training wasm-simd"
  $SIMDRUN train -tag wasm-simd -models tiny -batch 8 -reps 3 >>"$RES"
  # Mini at batch 8 as well: the step-over-forward row is judged at batch 8 x 128.
  $SIMDRUN train -tag wasm-simd -models mini -batch 8 -reps 1 >>"$RES"
  note "wasm-simd training: Tiny and Mini batch 8 (x128 tokens), 3 and 1 timed steps after the warm-up steps"
fi

# --- BERT-Large load --------------------------------------------------------------------------
LEFT=$((BUDGET - (SECONDS - START)))
AVAIL_KB=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
DISK_KB=$(df -Pk "$OUT" | awk 'NR==2 {print $4}')
if ! native || ! inference; then
  : # BERT-Large is native only, and not a training row
elif [ "${BENCH_LARGE:-1}" = 0 ]; then
  skip "BERT-Large load: BENCH_LARGE=0"
elif [ "$LEFT" -lt 120 ]; then
  skip "BERT-Large load: only ${LEFT} s of the ${BUDGET} s budget left (writing and loading 1.34 GB takes about 1-2 min)"
elif [ "${AVAIL_KB:-0}" -lt 5000000 ] || [ "${DISK_KB:-0}" -lt 3000000 ]; then
  skip "BERT-Large load: needs 5 GB free memory and 3 GB free disk"
else
  step "BERT-Large write + load"
  $BB large -dir "$OUT/large" >>"$RES" || skip "BERT-Large load: failed"
  rm -rf "$OUT/large"
fi

step "done"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - START)) s" >>"$RES"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RES"
echo "# CPU flags seen: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512vl|avx512_bf16|avx512vnni)$' | tr '\n' ' ')" >>"$RES"
$BB table "$RES"
