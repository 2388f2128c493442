package bert_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// TestAlbertGradientsMatchFixture checks AlbertForPreTraining's loss (masked LM + sentence
// order) and d loss / d every parameter against scripts/familyref/albertgrads.py's autograd
// gradients: the shared layer groups get the sum over the blocks that run them, the word
// embeddings the lookup's and the tied decoder's, embedding_hidden_mapping_in its own.
func TestAlbertGradientsMatchFixture(t *testing.T) {
	for _, tc := range []struct {
		dir            string
		groups, params int
	}{
		// 5 embedding tensors, the projection's 2, 16 a layer group, pooler 2, MLM head 5, SOP 2.
		{"testdata/albert-grads-shared", 1, 5 + 2 + 16 + 2 + 5 + 2},
		{"testdata/albert-grads-groups", 2, 5 + 2 + 2*16 + 2 + 5 + 2},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			f, err := hf.LoadFolder(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			m := f.Model
			if !m.Config.Family.Is(bert.FamilyALBERT) || len(m.Layers) != tc.groups || m.NumBlocks() != 3 || m.Config.EmbDim() >= m.Config.HiddenSize {
				t.Fatalf("fixture model: %s, %d groups for %d blocks, E %d, H %d", m.Config.FamilyOf(), len(m.Layers), m.NumBlocks(), m.Config.EmbDim(), m.Config.HiddenSize)
			}
			b, labels, sop := familyBatch(t, tc.dir)
			if sop == nil {
				t.Fatal("fixture has no sentence_order_label")
			}
			g := m.NewGrads()
			loss, err := m.ForwardBackward(b, labels, sop, bert.TrainOptions{}, g)
			if err != nil {
				t.Fatal(err)
			}
			want := readAll(t, filepath.Join(tc.dir, "outputs.safetensors"))["loss"][0]
			if d := math.Abs(loss.Total - float64(want)); d > 1e-5 {
				t.Errorf("loss %.7f (MLM %.7f, SOP %.7f), fixture %.7f", loss.Total, loss.MLM, loss.NSP, want)
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
				key, ok := hf.BERTName(bert.FamilyALBERT, name)
				gv := got[key]
				if !ok || gv == nil {
					t.Errorf("%s: no gradient (as %q)", name, key)
					continue
				}
				rtol := gradRtol
				if strings.HasSuffix(name, "attention.key.bias") {
					rtol = 0 // zero in exact math: only rounding noise to compare
				}
				if err := approx.Check(name, gv, w, gradAtol, rtol); err != nil {
					t.Error(err)
				}
				worst = max(worst, approx.MaxAbsDiff(gv, w))
			}
			t.Logf("loss %.7f; %d gradients, largest difference %.3g", loss.Total, len(grads), worst)
		})
	}
}
