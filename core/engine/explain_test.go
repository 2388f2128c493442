package engine

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/explain"
)

func openFixture(t *testing.T) *Engine {
	t.Helper()
	e, err := Open(os.DirFS(fixture), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestExplainAgrees holds the explanation answers to the engine's other answers, which come
// from other code paths: the lens's last layer and the ablation without heads off are the
// fill-mask probabilities, and the neuron view's softmax row is the attention row.
func TestExplainAgrees(t *testing.T) {
	e := openFixture(t)
	const text = "paris is the [MASK] of france"
	fm, err := e.FillMask(text, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := fm.Masks[0].Predictions
	lens, err := e.Lens(explain.Request{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	layers := lens.Lens.Positions[0].Layers
	if len(layers) != e.Model().Config.NumHiddenLayers+1 {
		t.Fatalf("lens: %d layers, want embeddings + %d", len(layers), e.Model().Config.NumHiddenLayers)
	}
	abl, err := e.Ablation(explain.Request{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		l := layers[len(layers)-1].Top[i]
		if l.ID != w.ID || math.Abs(l.Prob-w.Score) > 1e-5 {
			t.Errorf("lens last layer %d: %+v, fill-mask %+v", i, l, w)
		}
		a := abl.Ablation.Positions[0].Before[i]
		if a.ID != w.ID || math.Abs(a.Before-w.Score) > 1e-5 || a.After != a.Before {
			t.Errorf("ablation of no head %d: %+v, fill-mask %+v", i, a, w)
		}
	}
	att, err := e.Attention(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []NeuronRequest{{Text: text, Layer: 1, Head: 2, Query: 4}, {Text: text, Pair: "the big cat", Layer: 0, Head: 3, Query: 0}} {
		n, err := e.Neuron(q)
		if err != nil {
			t.Fatal(err)
		}
		if q.Pair != "" {
			if att, err = e.Attention(q.Text, &q.Pair); err != nil {
				t.Fatal(err)
			}
		}
		row := att[q.Layer].Attentions[q.Head][q.Query]
		if len(n.Probs) != len(row) {
			t.Fatalf("neuron %+v: %d probabilities for %d tokens", q, len(n.Probs), len(row))
		}
		for j := range row {
			if math.Abs(n.Probs[j]-float64(row[j])) > 1e-5 {
				t.Errorf("neuron %+v: p[%d] %g, attention %g", q, j, n.Probs[j], row[j])
			}
		}
	}
	// Attributions answer the explainer's numbers for the same request.
	r := explain.Request{Text: text, Method: explain.MethodIG, Steps: 8, Baseline: "pad"}
	got, err := e.Attributions(r)
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Attribution; a.Steps != 8 || a.Baseline.Name != "pad" || len(a.Scores) != len(got.Tokens) || got.Target.Index != want[0].ID {
		t.Errorf("attributions: %+v for target %+v, want 8 steps from [PAD] to the top prediction %d", a, got.Target, want[0].ID)
	}
}

// TestExplainBounds: requests out of bounds are errors naming the field, never panics.
func TestExplainBounds(t *testing.T) {
	e := openFixture(t)
	const text = "paris is the [MASK] of france"
	for _, tc := range []struct {
		name string
		ask  func() error
		says string
	}{
		{"steps", func() error {
			_, err := e.Attributions(explain.Request{Text: text, Method: "ig", Steps: 257})
			return err
		}, "steps 257 outside"},
		{"negative steps", func() error { _, err := e.Attributions(explain.Request{Text: text, Steps: -1}); return err }, "steps -1 outside"},
		{"top_k", func() error { _, err := e.Lens(explain.Request{Text: text, TopK: 101}); return err }, "top_k 101 outside"},
		{"heads", func() error {
			_, err := e.Ablation(explain.Request{Text: text, Ablate: []explain.Head{{Layer: 2, Head: 0}}})
			return err
		}, "outside the model's 2 layers x 4 heads"},
		{"too many heads", func() error {
			_, err := e.Ablation(explain.Request{Text: text, Ablate: make([]explain.Head, 9)})
			return err
		}, "9 heads to ablate: the model has 8"},
		{"no mask", func() error { _, err := e.Importance(explain.Request{Text: "no mask here"}); return err }, "needs a [MASK]"},
		{"neuron head", func() error { _, err := e.Neuron(NeuronRequest{Text: text, Layer: 0, Head: 4}); return err }, "outside the model's"},
		{"neuron query", func() error { _, err := e.Neuron(NeuronRequest{Text: text, Query: 99}); return err }, "query token 99 outside"},
		{"neuron empty", func() error { _, err := e.Neuron(NeuronRequest{Text: ""}); return err }, "empty"},
	} {
		err := tc.ask()
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.says)
		}
	}
	for name, ask := range map[string]func() error{
		"Attributions": func() error { _, err := (&Engine{}).Attributions(explain.Request{Text: text}); return err },
		"Lens":         func() error { _, err := (&Engine{}).Lens(explain.Request{Text: text}); return err },
		"Ablation":     func() error { _, err := (&Engine{}).Ablation(explain.Request{Text: text}); return err },
		"Importance":   func() error { _, err := (&Engine{}).Importance(explain.Request{Text: text}); return err },
		"Neuron":       func() error { _, err := (&Engine{}).Neuron(NeuronRequest{Text: text}); return err },
	} {
		if err := ask(); err != ErrNoModel {
			t.Errorf("%s before a load: %v", name, err)
		}
	}
}
