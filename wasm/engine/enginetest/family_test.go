//go:build !js

package enginetest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
)

// familyFolder copies a family fixture's config and weights with the fixtures' 120-word
// vocabulary into a folder, and opens it natively.
func familyFolder(t *testing.T, fixture string) (string, *engine.Engine) {
	t.Helper()
	dir := t.TempDir()
	for dst, src := range map[string]string{
		"config.json":       filepath.Join("../../../core/bert/testdata", fixture, "config.json"),
		"model.safetensors": filepath.Join("../../../core/bert/testdata", fixture, "model.safetensors"),
		"vocab.txt":         "../../../core/bert/testdata/family-vocab.txt",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := engine.Open(os.DirFS(dir), fixture)
	if err != nil {
		t.Fatal(err)
	}
	return dir, e
}

// TestFamilyInNodeMatchesNative asks the wasm engine the family views' questions (bertlab.replaced
// and bertlab.attentionParts) and compares its answers with the native engine's; bad arguments
// are errors that say what was wanted.
func TestFamilyInNodeMatchesNative(t *testing.T) {
	node, wasm, wasmExec := buildEngine(t)
	electra, el := familyFolder(t, "electra-tiny-discriminator")
	deberta, de := familyFolder(t, "deberta-tiny-random")
	text, pair := "the chef cooked the meal", "she ate"
	out, err := exec.Command(node, "run_family.mjs", wasmExec, wasm, electra, deberta, text, pair).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 8 {
		t.Fatalf("want 8 lines from the engine, got:\n%s", out)
	}
	// The wasm kernels round float32 differently from the native ones: numbers agree to 1e-5.
	same := func(i int, want any) {
		t.Helper()
		var g, w any
		if err := json.Unmarshal([]byte(lines[i]), &g); err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, lines[i])
		}
		b, _ := json.Marshal(want)
		json.Unmarshal(b, &w)
		if where := closeJSON("", g, w, 1e-5); where != "" {
			t.Errorf("line %d: wasm and native differ at %s\nwasm %s\nnative %s", i+1, where, lines[i], b)
		}
	}
	wantRep := func(p *string) *pipeline.ReplacedResult {
		r, err := el.Replaced(text, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	same(0, wantRep(nil))
	same(1, wantRep(&pair))
	wantParts := func(p *string, layer int) *pipeline.AttentionPartsResult {
		r, err := de.AttentionParts(text, p, layer)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	same(4, wantParts(nil, 1))
	same(5, wantParts(&pair, 2))
	for i, want := range map[int]string{2: "replaced: want (text[, pair])", 3: "DeBERTa-v2/v3 only", 6: "attentionParts: argument 2 must be a number", 7: "layer 9 outside 0..2"} {
		var e struct{ Error string }
		if json.Unmarshal([]byte(lines[i]), &e); !strings.Contains(e.Error, want) {
			t.Errorf("line %d: %s, want an error with %q", i+1, lines[i], want)
		}
	}
}

// closeJSON compares two decoded JSON values, numbers within tol; it returns where they first
// differ ("" when they do not).
func closeJSON(at string, a, b any, tol float64) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return at + " (object)"
		}
		for k, v := range x {
			if w := closeJSON(at+"."+k, v, y[k], tol); w != "" {
				return w
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return at + " (array)"
		}
		for i := range x {
			if w := closeJSON(fmt.Sprintf("%s[%d]", at, i), x[i], y[i], tol); w != "" {
				return w
			}
		}
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > tol {
			return at
		}
	default:
		if !reflect.DeepEqual(a, b) {
			return at
		}
	}
	return ""
}
