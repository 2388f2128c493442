package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/pipeline"
)

// familyHandler serves a family fixture of scripts/familyref with the fixtures' 120-word
// vocabulary (core/bert/testdata/family-vocab.txt).
func familyHandler(t testing.TB, fixture string) (*Handler, *engine.Engine) {
	t.Helper()
	files := fstest.MapFS{}
	for name, path := range map[string]string{
		"config.json":       filepath.Join("../core/bert/testdata", fixture, "config.json"),
		"model.safetensors": filepath.Join("../core/bert/testdata", fixture, "model.safetensors"),
		"vocab.txt":         "../core/bert/testdata/family-vocab.txt",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = &fstest.MapFile{Data: b}
	}
	e, err := engine.Open(files, fixture)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, e
}

// TestReplacedRoute: /api/replaced answers what the engine answers, and refuses a model without
// the discriminator's head and bad bodies with 400.
func TestReplacedRoute(t *testing.T) {
	h, e := familyHandler(t, "electra-tiny-discriminator")
	pair := "she ate"
	for _, body := range []string{`{"text":"the chef cooked the meal"}`, `{"text":"the chef cooked the meal","pair":"she ate"}`} {
		code, got, _ := do(t, h, http.MethodPost, "/api/replaced", body)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", body, code, got)
		}
		var p *string
		if strings.Contains(body, "pair") {
			p = &pair
		}
		want, err := e.Replaced("the chef cooked the meal", p)
		if err != nil {
			t.Fatal(err)
		}
		r := decodeAs[pipeline.ReplacedResult](t, got)
		if strings.Join(r.Tokens, " ") != strings.Join(want.Tokens, " ") || len(r.Replaced) != len(want.Replaced) {
			t.Fatalf("tokens %q, want %q", r.Tokens, want.Tokens)
		}
		for i := range r.Replaced {
			if r.Replaced[i] != want.Replaced[i] || r.Logits[i] != want.Logits[i] {
				t.Errorf("token %d: %g (%g), engine %g (%g)", i, r.Replaced[i], r.Logits[i], want.Replaced[i], want.Logits[i])
			}
		}
	}
	for _, tc := range []struct{ body, want string }{
		{`{}`, `missing`},
		{`{"text":"a","layer":1}`, "unknown field"},
	} {
		if code, got, _ := do(t, h, http.MethodPost, "/api/replaced", tc.body); code != http.StatusBadRequest || !strings.Contains(string(got), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.body, code, got, tc.want)
		}
	}
	g, _ := familyHandler(t, "electra-tiny-generator")
	if code, got, _ := do(t, g, http.MethodPost, "/api/replaced", `{"text":"the chef"}`); code != http.StatusBadRequest || !strings.Contains(string(got), "ElectraForPreTraining") {
		t.Errorf("the generator: %d %s", code, got)
	}
}

// TestAttentionPartsRoute: /api/attention-parts answers what the engine answers for a layer, and
// refuses another family, a layer out of range and bad bodies with 400.
func TestAttentionPartsRoute(t *testing.T) {
	h, e := familyHandler(t, "deberta-tiny-random")
	code, got, _ := do(t, h, http.MethodPost, "/api/attention-parts", `{"text":"the chef cooked the meal","layer":2}`)
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, got)
	}
	want, err := e.AttentionParts("the chef cooked the meal", nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(want)
	if !bytes.Equal(bytes.TrimSpace(got), b) {
		t.Errorf("answer %s\nengine %s", got, b)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"text":"a","layer":3}`, "layer 3 outside [0, 2]"},
		{`{"text":"a","layer":-1}`, "layer -1 outside"},
		{`{"layer":0}`, `missing`},
	} {
		if code, got, _ := do(t, h, http.MethodPost, "/api/attention-parts", tc.body); code != http.StatusBadRequest || !strings.Contains(string(got), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.body, code, got, tc.want)
		}
	}
	el, _ := familyHandler(t, "electra-tiny-discriminator")
	if code, got, _ := do(t, el, http.MethodPost, "/api/attention-parts", `{"text":"the chef"}`); code != http.StatusBadRequest || !strings.Contains(string(got), "DeBERTa-v2/v3 only") {
		t.Errorf("ELECTRA: %d %s", code, got)
	}
}

// fuzzFamilyRoute sends arbitrary bodies to a family route of a family fixture's handler: a 200
// with a well-formed answer, or a 400/413 with a JSON error; never a 500, never a panic.
func fuzzFamilyRoute(f *testing.F, fixture, path string, ok func(t *testing.T, body []byte)) {
	h, _ := familyHandler(f, fixture)
	f.Add([]byte(`{"text":"the chef cooked the meal"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(in)))
		body := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusOK:
			ok(t, body)
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
				t.Fatalf("%d with body %q: %v", rec.Code, body, err)
			}
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, in, body)
		}
	})
}

func FuzzReplacedBody(f *testing.F) {
	fuzzFamilyRoute(f, "electra-tiny-discriminator", "/api/replaced", func(t *testing.T, body []byte) {
		r := decodeAs[pipeline.ReplacedResult](t, body)
		n := len(r.Tokens)
		if n < 2 || n > 16 || len(r.Replaced) != n || len(r.Logits) != n || len(r.Special) != n {
			t.Fatalf("%d tokens, %d probabilities, %d logits", n, len(r.Replaced), len(r.Logits))
		}
		for i, p := range r.Replaced {
			if !(p >= 0 && p <= 1) || math.Abs(float64(p)-1/(1+math.Exp(-float64(r.Logits[i])))) > 1e-6 {
				t.Fatalf("token %d: probability %g of logit %g", i, p, r.Logits[i])
			}
		}
	})
}

func FuzzAttentionPartsBody(f *testing.F) {
	fuzzFamilyRoute(f, "deberta-tiny-random", "/api/attention-parts", func(t *testing.T, body []byte) {
		r := decodeAs[pipeline.AttentionPartsResult](t, body)
		S := len(r.Tokens)
		if r.Layer < 0 || r.Layer > 2 || S < 2 || S > 16 || len(r.C2C) != 2 || len(r.Sum) != 2 || len(r.Probs) != 2 {
			t.Fatalf("layer %d, %d tokens, %d heads", r.Layer, S, len(r.C2C))
		}
		for h := range r.Sum {
			for i := range S {
				var row float64
				for j := range S {
					if d := r.C2C[h][i][j] + r.C2P[h][i][j] + r.P2C[h][i][j] - r.Sum[h][i][j]; math.Abs(float64(d)) > 1e-4 {
						t.Fatalf("head %d cell %d,%d: parts off the sum by %g", h, i, j, d)
					}
					row += float64(r.Probs[h][i][j])
				}
				if math.Abs(row-1) > 1e-4 {
					t.Fatalf("head %d row %d sums to %g", h, i, row)
				}
			}
		}
	})
}
