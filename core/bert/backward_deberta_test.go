package bert_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// TestDebertaGradientsMatchFixture checks DebertaV2ForMaskedLM's masked-LM loss and d loss /
// d every parameter (the relative embeddings and their LayerNorm, reached through every layer's
// key and query maps, included) against scripts/familyref/familygrads.py's autograd gradients.
func TestDebertaGradientsMatchFixture(t *testing.T) {
	for _, tc := range []struct {
		dir    string
		params int
	}{
		// Word embeddings and LayerNorm 3, relative embeddings and their LayerNorm 3, 16 a layer,
		// the MLM head 5.
		{"testdata/deberta-grads-mlm", 3 + 3 + 3*16 + 5},
		// Word, position and type embeddings and LayerNorm 5, relative embeddings 1.
		{"testdata/deberta-grads-c2p", 5 + 1 + 3*16 + 5},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			f, err := hf.LoadFolder(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			m := f.Model
			b, labels, _ := familyBatch(t, tc.dir)
			g := m.NewGrads()
			l, err := m.ForwardBackward(b, labels, nil, bert.TrainOptions{}, g)
			if err != nil {
				t.Fatal(err)
			}
			want := readAll(t, filepath.Join(tc.dir, "outputs.safetensors"))["loss"][0]
			if d := math.Abs(l.Total - float64(want)); d > 1e-5 {
				t.Errorf("loss %.7f, fixture %.7f", l.Total, want)
			}
			got := map[string][]float32{}
			for _, p := range g.Params() {
				got[p.Name] = p.T.Data
			}
			grads := readAll(t, filepath.Join(tc.dir, "grads.safetensors"))
			if len(grads) != tc.params || len(got) != tc.params {
				t.Errorf("fixture has %d gradients, the model %d; want %d", len(grads), len(got), tc.params)
			}
			var worst float64
			for name, w := range grads {
				key, ok := hf.BERTName(bert.FamilyDeBERTaV2, name)
				gv := got[key]
				if !ok || gv == nil {
					t.Errorf("%s: no gradient (as %q)", name, key)
					continue
				}
				// The key bias has a gradient here: c2p adds it to every relative row.
				if err := approx.Check(name, gv, w, gradAtol, gradRtol); err != nil {
					t.Error(err)
				}
				worst = max(worst, approx.MaxAbsDiff(gv, w))
			}
			t.Logf("loss %.7f; %d gradients, largest difference %.3g", l.Total, len(grads), worst)
		})
	}
}
