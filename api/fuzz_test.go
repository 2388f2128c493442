package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/pipeline"
)

// The fuzz targets send arbitrary bodies to each route and check what any answer must be: a
// 200 with a well-formed result, or a 400/413 with a JSON error; never a 500, never a panic.
// Their seed corpora are in testdata/fuzz/<target>/ and run with every `go test`.

func FuzzFillMaskBody(f *testing.F) {
	fuzzRoute(f, "/api/fill-mask", func(t *testing.T, body []byte) {
		got := decodeAs[FillMaskResponse](t, body)
		if len(got.Masks) == 0 {
			t.Fatal("200 without masks")
		}
		for _, m := range got.Masks {
			if m.Position < 1 || m.Position >= 32 || len(m.Predictions) < 1 || len(m.Predictions) > pipeline.MaxTopK {
				t.Fatalf("mask %+v", m)
			}
			for i, p := range m.Predictions {
				if p.Score < 0 || p.Score > 1 || p.ID < 0 || p.ID >= 2000 || (i > 0 && p.Score > m.Predictions[i-1].Score) {
					t.Fatalf("prediction %d %+v", i, p)
				}
			}
		}
	})
}

func FuzzTokenizeBody(f *testing.F) {
	fuzzRoute(f, "/api/tokenize", func(t *testing.T, body []byte) {
		got := decodeAs[TokenizeResponse](t, body)
		n := len(got.InputIDs)
		if n < 2 || n > 32 || len(got.Tokens) != n || len(got.TokenTypeIDs) != n || len(got.Offsets) != n {
			t.Fatalf("lengths %d %d %d %d", n, len(got.Tokens), len(got.TokenTypeIDs), len(got.Offsets))
		}
		for i, o := range got.Offsets {
			if o[0] < 0 || o[1] < o[0] {
				t.Fatalf("offset %d: %v", i, o)
			}
		}
	})
}

func FuzzAttentionBody(f *testing.F) {
	fuzzRoute(f, "/api/attention", func(t *testing.T, body []byte) {
		got := decodeAs[pipeline.AttentionResult](t, body)
		S := len(got.Tokens)
		if got.Layer < 0 || got.Layer > 1 || len(got.Attentions) != 4 || S < 2 || S > 32 {
			t.Fatalf("layer %d, %d heads, %d tokens", got.Layer, len(got.Attentions), S)
		}
		for h, head := range got.Attentions {
			if len(head) != S {
				t.Fatalf("head %d: %d rows", h, len(head))
			}
			for i, row := range head {
				var sum float64
				for _, p := range row {
					sum += float64(p)
				}
				if len(row) != S || math.Abs(sum-1) > 1e-4 {
					t.Fatalf("head %d row %d: %d columns summing to %v", h, i, len(row), sum)
				}
			}
		}
	})
}

func FuzzEmbedBody(f *testing.F) {
	fuzzRoute(f, "/api/embed", func(t *testing.T, body []byte) {
		got := decodeAs[pipeline.EmbedResult](t, body)
		if len(got.Vectors) < 1 || len(got.Vectors) > DefaultMaxTexts || len(got.Truncated) != len(got.Vectors) || got.Dim != 64 {
			t.Fatalf("%d vectors, %d flags, dim %d", len(got.Vectors), len(got.Truncated), got.Dim)
		}
		for i, v := range got.Vectors {
			if len(v) != 64 {
				t.Fatalf("vector %d: %d dims", i, len(v))
			}
		}
	})
}

// fuzzRoute posts each body to path and checks the answer; ok checks a 200's body.
func fuzzRoute(f *testing.F, path string, ok func(t *testing.T, body []byte)) {
	h, logs := newHandler(f, Options{})
	f.Add([]byte(`{"text":"paris is the [MASK] of france"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(in))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
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
			t.Fatalf("status %d for %q: %s\nlog: %s", rec.Code, in, body, logs.String())
		}
	})
}

// FuzzAcceptsGzip reads arbitrary Accept-Encoding headers: never a panic, and gzip is only
// taken from a header that names it or *.
func FuzzAcceptsGzip(f *testing.F) {
	f.Fuzz(func(t *testing.T, header string) {
		got := acceptsGzip(header)
		lower := strings.ToLower(header)
		if got && !strings.Contains(lower, "gzip") && !strings.Contains(header, "*") {
			t.Fatalf("acceptsGzip(%q) = true without gzip or *", header)
		}
		if header == "gzip" && !got {
			t.Fatal("plain gzip refused")
		}
	})
}
