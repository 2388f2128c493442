package train

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

func TestNewTeacher(t *testing.T) {
	model := func(v, layers, heads, positions int, relative bool) *bert.Model {
		c := bert.DefaultConfig()
		c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = v, 16, layers, heads, 32
		c.MaxPositionEmbeddings = positions
		if relative {
			c.PositionEmbeddingType = bert.PositionRelativeKeyQuery
		}
		m, err := bert.NewRandom(c, bert.Heads{MLM: true}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	all := bert.DistilWeights{Hard: 1, Soft: 1, Attention: 1}
	student := model(50, 2, 2, 32, false)
	for _, tc := range []struct {
		name    string
		teacher *bert.Model
		student *bert.Model
		w       bert.DistilWeights
		layerOf []int
		err     string
	}{
		{"same shape, relative teacher", model(50, 2, 2, 32, true), student, all, []int{0, 1}, ""},
		{"deeper teacher", model(50, 4, 2, 32, false), student, all, []int{1, 3}, ""},
		{"shallower teacher", model(50, 2, 2, 64, false), model(50, 4, 2, 32, false), all, []int{0, 0, 1, 1}, ""},
		{"three into two", model(50, 3, 2, 32, false), student, all, []int{1, 2}, ""},
		{"vocabulary", model(51, 2, 2, 32, false), student, all, nil, "vocab_size 51"},
		{"heads", model(50, 2, 4, 32, false), student, all, nil, "4 attention heads"},
		{"heads without attention term", model(50, 2, 4, 32, false), student, bert.DistilWeights{Hard: 1, Soft: 1}, []int{0, 1}, ""},
		{"positions", model(50, 2, 2, 16, false), student, all, nil, "16 positions"},
		{"negative weight", model(50, 2, 2, 32, false), student, bert.DistilWeights{Hard: 1, Soft: -1}, nil, "loss weights"},
		{"zero weights", model(50, 2, 2, 32, false), student, bert.DistilWeights{}, nil, "loss weights"},
	} {
		got, err := NewTeacher(tc.teacher, tc.student, tc.w)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && !slices.Equal(got.LayerOf, tc.layerOf):
			t.Errorf("%s: layers %v, want %v", tc.name, got.LayerOf, tc.layerOf)
		}
	}
}

// A student distilled from a fixed teacher with the attention term alone comes to attend as
// the teacher does: the attention divergence falls, while a run without the term (labels
// only) leaves it where it was. A copy of the student as its own teacher starts at 0.
func TestDistilPretrainer(t *testing.T) {
	const steps = 40
	c := DefaultPretrain(steps)
	c.BatchSize, c.LR, c.Warmup, c.NoDropout = 8, 1e-2, 2, true
	dc := DefaultData(32, 1)
	dc.Instances.Task = NoSentenceTask
	run := func(w bert.DistilWeights, teacherSeed uint64) []Event {
		p := toyPretrainer(t, dc, c)
		teacher := testModel(t, p.Model.Config.VocabSize, teacherSeed)
		if teacherSeed != 1 {
			// Large query and key weights: attention rows far from the near-uniform ones of
			// a fresh model, for the student to learn.
			for _, l := range teacher.Layers {
				for _, w := range [][]float32{l.Query.W.Data, l.Key.W.Data} {
					for i := range w {
						w[i] *= 15
					}
				}
			}
		}
		if err := p.Distil(&Teacher{Model: teacher, Weights: w, LayerOf: []int{0, 1}}); err != nil {
			t.Fatal(err)
		}
		var evs []Event
		if err := p.Run(context.Background(), func(e Event) {
			if e.Kind == EventStep {
				evs = append(evs, e)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	mean := func(evs []Event, f func(Event) float64) float64 {
		var s float64
		for _, e := range evs {
			s += f(e)
		}
		return s / float64(len(evs))
	}
	attn := func(e Event) float64 { return e.DistilAttention }
	distilled := run(bert.DistilWeights{Attention: 1}, 7)
	first, last := mean(distilled[:5], attn), mean(distilled[len(distilled)-5:], attn)
	t.Logf("attention KL from the teacher, first 5 steps %.4f, last 5 %.4f", first, last)
	if !(last < 0.5*first) {
		t.Errorf("distilled on attention: KL %.4f -> %.4f, want it halved", first, last)
	}
	labels := run(bert.DistilWeights{Hard: 1, Attention: 1e-9}, 7) // the term measured, hardly weighed
	lf, ll := mean(labels[:5], attn), mean(labels[len(labels)-5:], attn)
	if ll < 0.5*lf {
		t.Errorf("without the attention term the KL fell from %.4f to %.4f too: the test cannot tell", lf, ll)
	}

	self := run(bert.DistilWeights{Hard: 1, Soft: 1, Attention: 1}, 1) // testModel seed 1 is the student's start
	if e := self[0]; e.DistilSoft > 1e-6 || e.DistilAttention > 1e-6 || math.Abs(e.Loss-e.MLMLoss) > 1e-5 {
		t.Errorf("first step of self-distillation: %+v, want soft and attention 0 and the loss the MLM loss", e)
	}
}

// Distillation has no next-sentence term: a run with a sentence task refuses a teacher.
func TestDistilNeedsNoSentenceTask(t *testing.T) {
	p := toyPretrainer(t, DefaultData(32, 1), DefaultPretrain(10))
	err := p.Distil(&Teacher{Model: testModel(t, p.Model.Config.VocabSize, 2), Weights: bert.DistilWeights{Hard: 1, Soft: 1}})
	if err == nil || !strings.Contains(err.Error(), "no sentence task") {
		t.Errorf("error %v", err)
	}
}
