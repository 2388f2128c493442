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

// TestElectraGradientsMatchFixture checks ELECTRA's discriminator loss (ForwardBackwardRTD) and
// generator loss (the masked LM) and d loss / d every parameter against
// scripts/familyref/familygrads.py's autograd gradients.
func TestElectraGradientsMatchFixture(t *testing.T) {
	for _, tc := range []struct {
		dir    string
		disc   bool
		params int
	}{
		// 5 embedding tensors, embeddings_project 2, 16 a layer, the discriminator head 4.
		{"testdata/electra-grads-discriminator", true, 5 + 2 + 3*16 + 4},
		// 5 embedding tensors, 16 a layer, the generator head 5 (no projection: E = H).
		{"testdata/electra-grads-generator", false, 5 + 3*16 + 5},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			f, err := hf.LoadFolder(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			m := f.Model
			b, labels, _ := familyBatch(t, tc.dir)
			g := m.NewGrads()
			var loss float64
			if tc.disc {
				r, err := m.ForwardBackwardRTD(b, labels, 1, bert.TrainOptions{}, g)
				if err != nil {
					t.Fatal(err)
				}
				loss = r.Loss
				want := readAll(t, filepath.Join(tc.dir, "outputs.safetensors"))["logits"]
				if err := approx.Check("logits", r.Logits.Data, want, 1e-4, 1e-4); err != nil {
					t.Error(err)
				}
				if r.Counted != 17 {
					t.Errorf("%d tokens counted, want the 17 attended", r.Counted)
				}
			} else {
				l, err := m.ForwardBackward(b, labels, nil, bert.TrainOptions{}, g)
				if err != nil {
					t.Fatal(err)
				}
				loss = l.Total
			}
			want := readAll(t, filepath.Join(tc.dir, "outputs.safetensors"))["loss"][0]
			if d := math.Abs(loss - float64(want)); d > 1e-5 {
				t.Errorf("loss %.7f, fixture %.7f", loss, want)
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
				key, ok := hf.BERTName(bert.FamilyELECTRA, name)
				gv := got[key]
				if !ok || gv == nil {
					t.Errorf("%s: no gradient (as %q)", name, key)
					continue
				}
				rtol := gradRtol
				if strings.HasSuffix(name, "attention.self.key.bias") {
					rtol = 0 // zero in exact math: only rounding noise to compare
				}
				if err := approx.Check(name, gv, w, gradAtol, rtol); err != nil {
					t.Error(err)
				}
				worst = max(worst, approx.MaxAbsDiff(gv, w))
			}
			t.Logf("loss %.7f; %d gradients, largest difference %.3g", loss, len(grads), worst)
		})
	}
}

// TestForwardBackwardRTDWeight: the weight scales every gradient and not the loss; bad labels
// are errors.
func TestForwardBackwardRTDWeight(t *testing.T) {
	const dir = "testdata/electra-grads-discriminator"
	f, err := hf.LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Model
	b, labels, _ := familyBatch(t, dir)
	g1, g50 := m.NewGrads(), m.NewGrads()
	r1, err := m.ForwardBackwardRTD(b, labels, 1, bert.TrainOptions{}, g1)
	if err != nil {
		t.Fatal(err)
	}
	r50, err := m.ForwardBackwardRTD(b, labels, 50, bert.TrainOptions{}, g50)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Loss != r50.Loss {
		t.Errorf("loss %g with weight 1, %g with 50", r1.Loss, r50.Loss)
	}
	p1, p50 := g1.Params(), g50.Params()
	for i := range p1 {
		scaled := make([]float32, len(p1[i].T.Data))
		for j, v := range p1[i].T.Data {
			scaled[j] = 50 * v
		}
		if err := approx.Check(p1[i].Name, p50[i].T.Data, scaled, 1e-5, 1e-4); err != nil {
			t.Error(err)
		}
	}
	bad := append([]int(nil), labels...)
	bad[0] = 2
	if _, err := m.ForwardBackwardRTD(b, bad, 1, bert.TrainOptions{}, g1); err == nil {
		t.Error("label 2: no error")
	}
	if _, err := m.ForwardBackwardRTD(b, labels[:3], 1, bert.TrainOptions{}, g1); err == nil {
		t.Error("3 labels: no error")
	}
}
