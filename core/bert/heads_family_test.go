package bert_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// TestProbeTaskModelGradients puts BERT's task heads on a body of each family (the family lab's
// fine-tuning probes) and checks ForwardBackward against the model's own eval forward: the
// loss equals Loss(Forward) without dropout, and the gradient's derivative along a random
// direction in each parameter tensor equals the central difference of that loss, so no
// part of a family's body (ALBERT's shared layer and projection, DeBERTa's relative
// embeddings, DistilBERT without token types) is left out of the backward from a task head.
func TestProbeTaskModelGradients(t *testing.T) {
	dirs := []string{"bert-tiny-random", "roberta-tiny-random", "distilbert-tiny-random", "albert-tiny-groups",
		"electra-tiny-discriminator", "deberta-tiny-random"}
	tasks := []struct {
		task   bert.Task
		labels func(b bert.Batch) []int
	}{
		{bert.SequenceClassification, func(b bert.Batch) []int { return []int{2, 0, 1}[:b.B] }},
		{bert.TokenClassification, func(b bert.Batch) []int {
			out := make([]int, b.B*b.S)
			for i := range out {
				out[i] = i % 3
				if b.AttentionMask != nil && b.AttentionMask[i] == 0 || i%4 == 0 {
					out[i] = bert.IgnoreIndex
				}
			}
			return out
		}},
	}
	for _, dir := range dirs {
		for ti, tc := range tasks {
			t.Run(dir+"/"+string(tc.task), func(t *testing.T) {
				f, err := hf.LoadFolder(filepath.Join("testdata", dir))
				if err != nil {
					t.Fatal(err)
				}
				b, _, _ := familyBatch(t, filepath.Join("testdata", dir))
				if b.B > 3 {
					t.Fatalf("batch of %d", b.B)
				}
				labels := tc.labels(b)
				tm, err := bert.NewProbeTaskModel(f.Model, tc.task, []string{"a", "b", "c"}, 5)
				if err != nil {
					t.Fatal(err)
				}
				if !f.Model.Config.Family.Is(bert.FamilyBERT) {
					if _, err := bert.NewTaskModel(f.Model, tc.task, []string{"a", "b", "c"}, 5); err == nil {
						t.Error("NewTaskModel took a body of another family")
					}
					if err := hf.SaveTaskFolder(t.TempDir(), tm, nil, hf.SaveOptions{}); err == nil || !strings.Contains(err.Error(), "probe") {
						t.Errorf("SaveTaskFolder of a %s probe: %v, want a refusal", f.Model.Config.Family.Name(), err)
					}
				}
				g := tm.NewGrads()
				got, _, err := tm.ForwardBackward(b, labels, bert.TrainOptions{}, g)
				if err != nil {
					t.Fatal(err)
				}
				loss := func() float64 {
					logits, err := tm.Forward(b)
					if err != nil {
						t.Fatal(err)
					}
					l, err := tm.Loss(logits, labels, b)
					if err != nil {
						t.Fatal(err)
					}
					return l
				}
				if want := loss(); math.Abs(got-want) > 1e-5*math.Max(1, want) {
					t.Errorf("training loss %.7g, eval forward's %.7g", got, want)
				}
				// For each parameter tensor, a random unit direction over it: the gradient's
				// derivative along it against the central difference of the eval loss.
				rng := rand.New(rand.NewPCG(3, uint64(ti)))
				ps, gs := tm.Params(), g.Params()
				const h = 1e-2
				touched, worst := 0, 0.0
				for i, p := range ps {
					orig := append([]float32(nil), p.T.Data...)
					v := make([]float64, p.T.Len())
					var norm, dd float64
					for j := range v {
						v[j] = rng.NormFloat64()
						norm += v[j] * v[j]
					}
					// HF's embeddings with a padding_idx give its row no gradient (the word
					// embeddings' pad row; RoBERTa's position row of pads): not along it.
					pad := tm.Bert.Config.PadTokenID
					if strings.HasSuffix(p.Name, "word_embeddings.weight") ||
						f.Model.Config.Family.Is(bert.FamilyRoBERTa) && strings.HasSuffix(p.Name, "position_embeddings.weight") {
						cols := p.T.Shape[1]
						for j := pad * cols; j < (pad+1)*cols; j++ {
							norm -= v[j] * v[j]
							v[j] = 0
						}
					}
					norm = math.Sqrt(norm)
					nz := false
					for j := range v {
						v[j] /= norm
						dd += v[j] * float64(gs[i].T.Data[j])
						nz = nz || gs[i].T.Data[j] != 0
					}
					if nz {
						touched++
					}
					shift := func(h float64) float64 {
						for j := range p.T.Data {
							p.T.Data[j] = orig[j] + float32(h*v[j])
						}
						return loss()
					}
					fd := (shift(h) - shift(-h)) / (2 * h)
					copy(p.T.Data, orig)
					if math.Abs(fd-dd) > 5e-5+2e-2*math.Abs(fd) {
						t.Errorf("%s: derivative along a unit direction %.6g, central difference %.6g", p.Name, dd, fd)
					}
					worst = math.Max(worst, math.Abs(fd-dd)/(5e-5+math.Abs(fd)))
				}
				// Every parameter gets a gradient (the pooler of a token task is not in it).
				if touched != len(ps) {
					t.Errorf("%d of %d parameters have a gradient", touched, len(ps))
				}
				t.Logf("%d parameters; worst |derivative - difference| / (5e-5 + |difference|) %.3g", len(ps), worst)
			})
		}
	}
}
