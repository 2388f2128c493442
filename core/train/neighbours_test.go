package train

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

func TestParseNeighbourHeads(t *testing.T) {
	tests := []struct {
		in      string
		want    []NeighbourHead
		wantErr string
	}{
		{"0.0-1,0.1+1", []NeighbourHead{{0, 0, -1}, {0, 1, 1}}, ""},
		{" 3.11+2 ", []NeighbourHead{{3, 11, 2}}, ""},
		{"", nil, "want layer.head"},
		{"0.0", nil, "want layer.head"},
		{"0-1", nil, "want layer.head"},
		{"a.0-1", nil, "want layer.head"},
		{"0.0+0", nil, "want layer.head"},
		{"0.0-1,", nil, `""`},
		{"-1.0+1", nil, "want layer.head"},
	}
	for _, tc := range tests {
		got, err := ParseNeighbourHeads(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
		for i, h := range got {
			if back, _ := ParseNeighbourHeads(h.String()); len(back) != 1 || back[0] != h {
				t.Errorf("%q head %d: String %q reads back as %v", tc.in, i, h, back)
			}
		}
	}
}

// The prior's targets, worked out by hand for two sequences of 4 positions, the first with one
// padding token: a one on the neighbour where it is a token of the sequence, zero rows elsewhere.
func TestNeighbourTargets(t *testing.T) {
	c := bert.DefaultConfig()
	c.NumHiddenLayers, c.NumAttentionHeads = 2, 2
	b := bert.Batch{B: 2, S: 4, AttentionMask: []int{1, 1, 1, 0, 1, 1, 1, 1}}
	n := NeighbourPrior{Heads: []NeighbourHead{{0, 1, -1}, {1, 0, +1}}, Weight: 1, Steps: 1}
	ts := n.targets(nil, b, c)
	// want[l][bi][h] lists the (query, key) pairs set to 1.
	want := map[[3]int][][2]int{
		{0, 0, 1}: {{1, 0}, {2, 1}},
		{0, 1, 1}: {{1, 0}, {2, 1}, {3, 2}},
		{1, 0, 0}: {{0, 1}, {1, 2}},
		{1, 1, 0}: {{0, 1}, {1, 2}, {2, 3}},
	}
	for l := range 2 {
		for bi := range 2 {
			for h := range 2 {
				for i := range 4 {
					for j := range 4 {
						got := ts[l].Data[((bi*2+h)*4+i)*4+j]
						w := float32(0)
						if slices.Contains(want[[3]int{l, bi, h}], [2]int{i, j}) {
							w = 1
						}
						if got != w {
							t.Errorf("layer %d sequence %d head %d, query %d key %d: %g, want %g", l, bi, h, i, j, got, w)
						}
					}
				}
			}
		}
	}
	// Reused tensors are cleared first.
	again := NeighbourPrior{Heads: []NeighbourHead{{1, 1, -1}}}.targets(ts, b, c)
	if &again[0].Data[0] != &ts[0].Data[0] || again[0].Data[((0*2+1)*4+1)*4+0] != 0 || again[1].Data[((0*2+1)*4+1)*4+0] != 1 {
		t.Error("targets on reused tensors: want them reused, cleared and refilled")
	}
}

// A run with the prior on one head makes that head attend to the previous token; a run without
// it does not; once the prior's steps are over, the steps are plain masked LM.
func TestNeighbourPriorFormsHead(t *testing.T) {
	const steps, priorSteps = 40, 30
	c := DefaultPretrain(steps)
	c.BatchSize, c.LR, c.Warmup, c.NoDropout, c.Seed = 8, 1e-2, 2, true, 1
	dc := DefaultData(32, 1)
	dc.Instances.Task = NoSentenceTask
	prevShare := func(p *Pretrainer) float64 {
		insts, _ := p.Data.Next(Position{}, 8)
		b, err := NewPretrainBatch(insts, p.Data.PadID, 0)
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.Model.Forward(b.Batch, bert.Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		S, A := b.S, p.Model.Config.NumAttentionHeads
		var sum float64
		rows := 0
		for bi := range b.B {
			for i := 1; i < S; i++ {
				if b.AttentionMask[bi*S+i] != 0 {
					sum += float64(out.Trace.Attentions[1].Data[((bi*A+0)*S+i)*S+i-1])
					rows++
				}
			}
		}
		return sum / float64(rows)
	}
	run := func(n NeighbourPrior) (*Pretrainer, []Event) {
		c := c
		c.Neighbours = n
		p := toyPretrainer(t, dc, c)
		var evs []Event
		if err := p.Run(context.Background(), func(e Event) {
			if e.Kind == EventStep {
				evs = append(evs, e)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return p, evs
	}
	with, evs := run(NeighbourPrior{Heads: []NeighbourHead{{1, 0, -1}}, Weight: 1, Steps: priorSteps})
	without, _ := run(NeighbourPrior{})
	sw, so := prevShare(with), prevShare(without)
	t.Logf("layer 1 head 0 on the previous token: %.3f with the prior, %.3f without; prior KL %.3f at step 1, %.3f at step %d",
		sw, so, evs[0].DistilAttention, evs[priorSteps-1].DistilAttention, priorSteps)
	if sw < 0.8 || so > 0.5 {
		t.Errorf("previous-token share of layer 1 head 0: %.3f with the prior (want >= 0.8), %.3f without (want <= 0.5)", sw, so)
	}
	if !(evs[priorSteps-1].DistilAttention < 0.5*evs[0].DistilAttention) {
		t.Errorf("prior KL %.4f at step 1, %.4f at step %d: want it more than halved", evs[0].DistilAttention, evs[priorSteps-1].DistilAttention, priorSteps)
	}
	for _, e := range evs[priorSteps:] {
		if e.DistilAttention != 0 || e.Loss != e.MLMLoss {
			t.Fatalf("step %d, after the prior's %d steps: %+v, want plain masked LM", e.Step, priorSteps, e)
		}
	}
}

func TestNeighbourPriorRefused(t *testing.T) {
	tok, docs := toyCorpus(t)
	mlmOnly := DefaultData(32, 1)
	mlmOnly.Instances.Task = NoSentenceTask
	tests := []struct {
		name    string
		dc      DataConfig
		heads   []NeighbourHead
		wantErr string
	}{
		{"layer out of range", mlmOnly, []NeighbourHead{{2, 0, -1}}, "2 layers of 2 heads"},
		{"head out of range", mlmOnly, []NeighbourHead{{0, 2, 1}}, "2 layers of 2 heads"},
		{"twice", mlmOnly, []NeighbourHead{{0, 1, 1}, {0, 1, -1}}, "given twice"},
		{"sentence task", DefaultData(32, 1), []NeighbourHead{{0, 0, 1}}, "no sentence task"},
	}
	for _, tc := range tests {
		data, err := NewPretrainData(tok, docs, tc.dc)
		if err != nil {
			t.Fatal(err)
		}
		c := DefaultPretrain(10)
		c.Neighbours = NeighbourPrior{Heads: tc.heads, Weight: 1, Steps: 5}
		_, err = NewPretrainer(testModel(t, tok.Vocab().Len(), 1), tok, data, c)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
	c := DefaultPretrain(10)
	c.Neighbours = NeighbourPrior{Heads: []NeighbourHead{{0, 0, 1}}, Weight: 1, Steps: 5}
	p := toyPretrainer(t, mlmOnly, c)
	err := p.Distil(&Teacher{Model: testModel(t, p.Model.Config.VocabSize, 2), Weights: bert.DistilWeights{Hard: 1, Soft: 1}})
	if err == nil || !strings.Contains(err.Error(), "neighbour prior") {
		t.Errorf("a teacher with the neighbour prior: error %v, want one that names the prior", err)
	}
}
