# bertlab: BERT in pure Go, in the browser (WebAssembly) and natively.
# `make test` is what CI runs (.ci/run); `make run` is the main job.

GO        ?= go
GOROOT    := $(shell $(GO) env GOROOT)
WASM_EXEC := $(GOROOT)/lib/wasm
BIN       := bin
BERTLAB   := $(BIN)/bertlab
# Go files that are generated (vugugen) are not gofmt-clean by design.
GOFILES    = $(shell git ls-files -co --exclude-standard '*.go' | grep -v -e '_vgen\.go$$' -e '_gen\.go$$')
DEMO      := build/demo-model

.PHONY: all build run test fmt-check vet test-native test-purego test-wasm wasm bench fuzz tinydata clean

all: build wasm

build:
	$(GO) build -o $(BERTLAB) ./cmd/bertlab

# The main job. Until the built-in pre-trained model lands (assets/models), it runs fill-mask on
# a randomly initialised Tiny model with the real bert-base-uncased vocabulary, to show the
# engine end to end; pass MODEL=DIR to use a real HuggingFace BERT folder.
MODEL ?=
TEXT  ?= The capital of France is [MASK].
run: build
	@if [ -n "$(MODEL)" ]; then m="$(MODEL)"; \
	elif ls assets/models/*/config.json >/dev/null 2>&1; then m=$$(dirname $$(ls assets/models/*/config.json | head -1)); \
	else m=$(DEMO); [ -f $(DEMO)/config.json ] || $(BERTLAB) init --preset tiny --vocab core/tokenizer/testdata/bert-base-uncased --seed 1 --out $(DEMO); \
	  echo "note: no pre-trained model in assets/models yet: $(DEMO) has random weights, so its predictions are noise"; fi; \
	$(BERTLAB) info --model $$m && $(BERTLAB) fill-mask --model $$m "$(TEXT)"

test: fmt-check vet test-native test-purego test-wasm wasm
	@echo "make test: all checks passed"

fmt-check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...

test-native:
	$(GO) test ./...

# The kernels again without the assembly path: the pure-Go twins are production code in the browser.
test-purego:
	$(GO) test -tags purego ./core/tensor/ ./core/bert/

# The engine under WebAssembly, as the browser runs it (Node executes the test binaries).
test-wasm:
	PATH="$(WASM_EXEC):$$PATH" GOOS=js GOARCH=wasm $(GO) test ./core/... ./tinydata/...

# Every wasm/ entry point, built into assets/ next to the page.
wasm:
	@mkdir -p assets
	GOOS=js GOARCH=wasm $(GO) build -o assets/engine.wasm ./wasm/engine
	cp "$(WASM_EXEC)/wasm_exec.js" assets/wasm_exec.js

bench:
	$(GO) test -run='^$$' -bench=. -benchtime=20x ./core/tensor/ ./core/bert/ ./core/checkpoint/ ./core/tokenizer/

# Short runs of every fuzz target (seed corpora live in testdata/fuzz/ and run in `make test`).
FUZZTIME ?= 30s
fuzz:
	@for pkg in ./core/checkpoint ./core/tokenizer ./core/bert ./tinydata ./tinydata/internal/build; do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test $$pkg -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) || exit 1; done; done

# Rebuild tinydata/ byte for byte from the Debian packages (apt-get download + dpkg-deb -x; no installs).
tinydata:
	bash scripts/tinydata.sh

clean:
	rm -rf $(BIN) build assets/engine.wasm assets/wasm_exec.js
