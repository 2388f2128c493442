package api

import (
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/explain"
)

// The explanation routes' fuzz targets, as fuzz_test.go's: any body gets a well-formed 200 or a
// 400/413 with a JSON error. Seed corpora: testdata/fuzz/FuzzExplain*Body/.

// checkTokens checks the tokens of a 200: [CLS] ... [SEP] within the fixture's 32 positions.
func checkTokens(t *testing.T, r explain.Report) {
	t.Helper()
	if n := len(r.Tokens); n < 2 || n > 32 || r.Tokens[0] != "[CLS]" {
		t.Fatalf("tokens %q", r.Tokens)
	}
}

func FuzzExplainAttributionsBody(f *testing.F) {
	fuzzRoute(f, "/api/explain/attributions", func(t *testing.T, body []byte) {
		got := decodeAs[explain.Report](t, body)
		checkTokens(t, got)
		a := got.Attribution
		if a == nil || got.Target == nil || len(a.Scores) != len(got.Tokens) {
			t.Fatalf("attribution %+v for %d tokens", a, len(got.Tokens))
		}
		var sum float64
		for _, s := range a.Scores {
			if math.IsNaN(s) || math.IsInf(s, 0) {
				t.Fatalf("score %v", s)
			}
			sum += s
		}
		if math.Abs(sum-a.Sum) > 1e-9*(1+math.Abs(sum)) {
			t.Fatalf("sum %v of scores summing to %v", a.Sum, sum)
		}
		if a.Method == explain.MethodIG && (a.Steps < 1 || a.Steps > explain.MaxSteps || a.Baseline == nil) {
			t.Fatalf("integrated gradients with %d steps, baseline %v", a.Steps, a.Baseline)
		}
	})
}

func FuzzExplainLensBody(f *testing.F) {
	fuzzRoute(f, "/api/explain/lens", func(t *testing.T, body []byte) {
		got := decodeAs[explain.Report](t, body)
		checkTokens(t, got)
		if got.Lens == nil || len(got.Lens.Positions) == 0 {
			t.Fatal("200 without lens positions")
		}
		for _, p := range got.Lens.Positions {
			if p.Position < 1 || p.Position >= len(got.Tokens) || len(p.Layers) != 3 {
				t.Fatalf("lens position %d with %d layers", p.Position, len(p.Layers))
			}
			for _, l := range p.Layers {
				if len(l.Top) < 1 || len(l.Top) > explain.MaxTopK || l.Top[0].Prob < 0 || l.Top[0].Prob > 1 {
					t.Fatalf("layer %d: %+v", l.Layer, l.Top)
				}
			}
		}
	})
}

func FuzzExplainAblationBody(f *testing.F) {
	fuzzRoute(f, "/api/explain/ablation", func(t *testing.T, body []byte) {
		got := decodeAs[explain.Report](t, body)
		checkTokens(t, got)
		if got.Ablation == nil || len(got.Ablation.Off) == 0 || len(got.Ablation.Off) > 8 || len(got.Ablation.Positions) == 0 {
			t.Fatalf("ablation %+v", got.Ablation)
		}
		for _, p := range got.Ablation.Positions {
			for _, s := range append(p.Before, p.After...) {
				if s.Before < 0 || s.Before > 1 || s.After < 0 || s.After > 1 {
					t.Fatalf("shift %+v", s)
				}
			}
		}
		if imp := got.Importance; imp != nil && (len(imp.Raw) != 2 || len(imp.Raw[0]) != 4) {
			t.Fatalf("importance %+v", imp)
		}
	})
}
