package train

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// TestDistilStudentStartsAsTeacher: the student of a 4-layer teacher has layers 0 and 2, and on
// single-segment input its embedding output and its first block's output are the teacher's
// (the type-0 embedding folded into the positions).
func TestDistilStudentStartsAsTeacher(t *testing.T) {
	teacher := testModel(t, 40, 3)
	c := teacher.Config
	c.NumHiddenLayers = 4
	teacher, err := bert.NewRandom(c, bert.AllHeads, 3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewDistilStudent(teacher)
	if err != nil {
		t.Fatal(err)
	}
	if got := DistilStudentLayers(4); !slices.Equal(got, []int{0, 2}) || s.Config.NumHiddenLayers != 2 || s.TypeEmb != nil || s.Pooler != nil {
		t.Fatalf("student layers %v, %d blocks, token types %v, pooler %v", got, s.Config.NumHiddenLayers, s.TypeEmb != nil, s.Pooler != nil)
	}
	b := bert.Batch{B: 2, S: 6, InputIDs: []int{2, 7, 9, 11, 3, 0, 2, 8, 8, 3, 0, 0},
		TokenTypeIDs: make([]int, 12), AttentionMask: []int{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0}}
	to, err := teacher.Forward(b, bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	so, err := s.Forward(b, bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := approx.Check("hidden state", so.Trace.HiddenStates[i].Data, to.Trace.HiddenStates[i].Data, 1e-6, 1e-5); err != nil {
			t.Errorf("hidden_states.%d: %v", i, err)
		}
	}
	// Student block 1 is teacher layer 2 run on teacher layer 0's output, not teacher block 1.
	if approx.MaxAbsDiff(so.Trace.HiddenStates[2].Data, to.Trace.HiddenStates[2].Data) < 1e-3 {
		t.Error("student block 1 equals teacher block 1: it should run teacher layer 2")
	}
}

// TestDistilBERTRecipe distils a small BERT teacher trained on the toy corpus into its
// DistilBERT student with DistilBERT's loss, and trains the same student on the masked LM alone:
// the distilled one ends closer to the teacher (soft-target KL and hidden-state cosine), and its
// folder is a DistilBertForMaskedLM that loads back with the same logits.
func TestDistilBERTRecipe(t *testing.T) {
	tok, docs := toyCorpus(t)
	dc := DefaultData(32, 3)
	if err := ApplyRecipe(bert.FamilyDistilBERT, &dc); err != nil {
		t.Fatal(err)
	}
	data, err := NewPretrainData(tok, docs, dc)
	if err != nil {
		t.Fatal(err)
	}
	// The teacher: 4 layers trained on the corpus's masked LM.
	c := testModel(t, tok.Vocab().Len(), 1).Config
	c.NumHiddenLayers = 4
	teacher, err := bert.NewRandom(c, bert.Heads{MLM: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tc := DefaultPretrain(80)
	tc.BatchSize, tc.LR, tc.Warmup, tc.Seed = 8, 3e-3, 5, 1
	tp, err := NewPretrainer(teacher, tok, data, tc)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	train := func(w bert.DistilWeights, out string) *Pretrainer {
		student, err := NewDistilStudent(teacher)
		if err != nil {
			t.Fatal(err)
		}
		pc := DefaultPretrain(60)
		pc.BatchSize, pc.LR, pc.Warmup, pc.Seed, pc.OutDir = 8, 3e-3, 4, 2, out
		p, err := NewPretrainer(student, tok, data, pc)
		if err != nil {
			t.Fatal(err)
		}
		tea, err := NewTeacher(teacher, student, w)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Distil(tea); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := t.TempDir()
	distilled := train(DistilBERTWeights, out)
	alone := train(bert.DistilWeights{Hard: 1}, "")
	// Distance to the teacher on the corpus's fixed masks, in eval mode.
	tea, err := NewTeacher(teacher, distilled.Model, DistilBERTWeights)
	if err != nil {
		t.Fatal(err)
	}
	dist := func(m *bert.Model) bert.DistilLosses {
		b, err := NewPretrainBatch(distilled.Data.Fixed(), distilled.Data.PadID, 0)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := tea.Targets(b.Batch, b.MLMLabels)
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.ForwardBackwardDistil(b.Batch, b.MLMLabels, tg, DistilBERTWeights, bert.TrainOptions{}, m.NewGrads())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	d, a := dist(distilled.Model), dist(alone.Model)
	t.Logf("distilled: CE %.4f, T²·KL %.4f, 1 − cos %.4f; masked LM alone: CE %.4f, T²·KL %.4f, 1 − cos %.4f", d.Hard, d.Soft, d.Cosine, a.Hard, a.Soft, a.Cosine)
	if !(d.Soft < a.Soft) || !(d.Cosine < a.Cosine) {
		t.Error("the distilled student is no closer to its teacher than the one trained on the masked LM alone")
	}

	f, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.Config.FamilyOf() != bert.FamilyDistilBERT || !strings.Contains(string(f.Model.Config.Extra["architectures"]), "DistilBertForMaskedLM") {
		t.Fatalf("saved %s %s", f.Model.Config.FamilyOf(), f.Model.Config.Extra["architectures"])
	}
	b, err := NewPretrainBatch(distilled.Data.Fixed()[:4], distilled.Data.PadID, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := distilled.Model.Forward(b.Batch, bert.Options{MLM: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.Model.Forward(b.Batch, bert.Options{MLM: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.MLMLogits.Data, g.MLMLogits.Data) {
		t.Error("the loaded student's logits differ")
	}
}
