package bert_test

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/internal/approx"
)

// TestDistilBERTLossMatchesFixture checks DistilBERT's distillation loss (ForwardBackwardDistil
// with the temperature and the cosine term) and its gradients against
// scripts/familyref/distilgrads.py's autograd: the loss, each term and all gradients.
func TestDistilBERTLossMatchesFixture(t *testing.T) {
	const dir = "testdata/distilbert-grads-distil"
	f, err := hf.LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Model
	b, labels, _ := familyBatch(t, dir)
	df, err := hf.Open(filepath.Join(dir, "distil.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	meta := df.Metadata()
	num := func(k string) float64 {
		v, err := strconv.ParseFloat(meta[k], 64)
		if err != nil {
			t.Fatalf("metadata %s: %v", k, err)
		}
		return v
	}
	w := bert.DistilWeights{Hard: num("hard"), Soft: num("soft"), Cosine: num("cosine"), Temperature: num("temperature")}
	tmlm, _, err := df.Float32("teacher_mlm")
	if err != nil {
		t.Fatal(err)
	}
	th, shape, err := df.Float32("teacher_hidden")
	if err != nil {
		t.Fatal(err)
	}
	g := m.NewGrads()
	l, err := m.ForwardBackwardDistil(b, labels, bert.DistilTargets{MLM: tmlm, Hidden: &tensor.Tensor{Shape: shape, Data: th}}, w, bert.TrainOptions{}, g)
	if err != nil {
		t.Fatal(err)
	}
	out := readAll(t, filepath.Join(dir, "outputs.safetensors"))
	for _, c := range []struct {
		name string
		got  float64
	}{{"loss", l.Total}, {"hard", l.Hard}, {"soft", l.Soft}, {"cosine", l.Cosine}} {
		if want := float64(out[c.name][0]); math.Abs(c.got-want) > 1e-5*max(1, math.Abs(want)) {
			t.Errorf("%s %.7f, fixture %.7f", c.name, c.got, want)
		}
	}
	got := map[string][]float32{}
	for _, p := range g.Params() {
		got[p.Name] = p.T.Data
	}
	grads := readAll(t, filepath.Join(dir, "grads.safetensors"))
	if len(grads) != len(got) {
		t.Errorf("fixture has %d gradients, the model %d", len(grads), len(got))
	}
	var worst float64
	for name, wv := range grads {
		key, ok := hf.BERTName(bert.FamilyDistilBERT, name)
		gv := got[key]
		if !ok || gv == nil {
			t.Errorf("%s: no gradient (as %q)", name, key)
			continue
		}
		rtol := gradRtol
		if strings.HasSuffix(name, "attention.k_lin.bias") {
			rtol = 0 // zero in exact math: only rounding noise to compare
		}
		if err := approx.Check(name, gv, wv, gradAtol, rtol); err != nil {
			t.Error(err)
		}
		worst = max(worst, approx.MaxAbsDiff(gv, wv))
	}
	t.Logf("loss %.7f (CE %.5f, T²·KL %.5f, 1 − cos %.5f); %d gradients, largest difference %.3g", l.Total, l.Hard, l.Soft, l.Cosine, len(grads), worst)
}
