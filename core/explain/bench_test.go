package explain

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// Benchmarks on a Mini-shaped random model (4 layers, hidden 256, 4 heads) and 32 tokens.
func benchModel(b *testing.B) (Model, Input) {
	c, err := bert.Preset("mini")
	if err != nil {
		b.Skip(err)
	}
	c.VocabSize = 2000
	m, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		b.Fatal(err)
	}
	in := Input{IDs: make([]int, 32), TypeIDs: make([]int, 32)}
	for i := range in.IDs {
		in.IDs[i] = 999 + i
	}
	in.IDs[0], in.IDs[5], in.IDs[31] = 101, 103, 102
	return PreTraining(m), in
}

func BenchmarkGradientXInput(b *testing.B) {
	m, in := benchModel(b)
	t := Target{Kind: MaskedToken, Position: 5, Index: 1000}
	for b.Loop() {
		if _, err := m.GradientXInputOf(in, t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIntegratedGradients64(b *testing.B) {
	m, in := benchModel(b)
	t := Target{Kind: MaskedToken, Position: 5, Index: 1000}
	bl := Baseline{Name: "mask", ID: 103, Keep: []int{101, 102}}
	for b.Loop() {
		if _, err := m.IntegratedGradientsOf(in, t, 64, bl); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeadImportance(b *testing.B) {
	m, in := benchModel(b)
	labels := make([]int, len(in.IDs))
	for i := range labels {
		labels[i] = bert.IgnoreIndex
	}
	labels[5] = 1000
	for b.Loop() {
		if _, err := HeadImportance(m.Bert, []Example{{Input: in, Labels: labels}}); err != nil {
			b.Fatal(err)
		}
	}
}
