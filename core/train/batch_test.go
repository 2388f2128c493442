package train

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

func TestNewPretrainBatch(t *testing.T) {
	a := Instance{InputIDs: []int{tCLS, 7, tSEP, 8, tSEP}, TokenTypeIDs: []int{0, 0, 0, 1, 1},
		Labels: []int{-100, 9, -100, -100, -100}, NextSentenceLabel: 1}
	b := Instance{InputIDs: []int{tCLS, 5, tSEP}, TokenTypeIDs: []int{0, 0, 0}, Labels: []int{-100, -100, -100}, NextSentenceLabel: 0}
	pb, err := NewPretrainBatch([]Instance{a, b}, tPad, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pb.B != 2 || pb.S != 5 || pb.Tokens != 8 {
		t.Fatalf("B %d S %d tokens %d", pb.B, pb.S, pb.Tokens)
	}
	want := struct{ ids, types, mask, labels, nsp []int }{
		[]int{tCLS, 7, tSEP, 8, tSEP, tCLS, 5, tSEP, tPad, tPad},
		[]int{0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
		[]int{1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
		[]int{-100, 9, -100, -100, -100, -100, -100, -100, -100, -100},
		[]int{1, 0},
	}
	for _, c := range []struct {
		name      string
		got, want []int
	}{{"ids", pb.InputIDs, want.ids}, {"types", pb.TokenTypeIDs, want.types}, {"mask", pb.AttentionMask, want.mask},
		{"labels", pb.MLMLabels, want.labels}, {"nsp", pb.NSPLabels, want.nsp}} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	if pb, _ := NewPretrainBatch([]Instance{b}, tPad, 8); pb.S != 8 || pb.MLMLabels != nil {
		t.Errorf("padTo 8: S %d; no label predicted: MLMLabels %v, want nil", pb.S, pb.MLMLabels)
	}
	b.NextSentenceLabel = bert.IgnoreIndex
	if pb, _ := NewPretrainBatch([]Instance{b}, tPad, 0); pb.NSPLabels != nil {
		t.Errorf("no sentence task: NSPLabels %v, want nil", pb.NSPLabels)
	}
	if _, err := NewPretrainBatch(nil, tPad, 0); err == nil {
		t.Error("an empty batch was accepted")
	}
}

// TestPretrainDataOrderAndMasks checks that the examples are a function of the position: the
// same (epoch, index) gives the same masked instance, static masks repeat across epochs (in
// another order), dynamic masks change, and positions run on into the next epoch.
func TestPretrainDataOrderAndMasks(t *testing.T) {
	tok, docs := toyCorpus(t)
	for _, dynamic := range []bool{false, true} {
		c := DefaultData(32, 5)
		c.Dynamic, c.DupeFactor = dynamic, 2
		d, err := NewPretrainData(tok, docs, c)
		if err != nil {
			t.Fatal(err)
		}
		wantLen := len(d.Instances) * 2
		if dynamic {
			wantLen = len(d.Instances)
		}
		if d.Len() != wantLen {
			t.Fatalf("dynamic %v: %d examples an epoch, want %d", dynamic, d.Len(), wantLen)
		}
		epoch := func(e int) []string {
			var out []string
			for k := range d.Len() {
				out = append(out, fmt.Sprint(d.Example(e, k)))
			}
			return out
		}
		e0, e1 := epoch(0), epoch(1)
		if slices.Equal(e0, e1) {
			t.Errorf("dynamic %v: two epochs in the same order", dynamic)
		}
		if again := fmt.Sprint(d.Example(0, 3)); again != e0[3] {
			t.Errorf("dynamic %v: example (0, 3) changed when asked again", dynamic)
		}
		s0, s1 := slices.Sorted(slices.Values(e0)), slices.Sorted(slices.Values(e1))
		if same := slices.Equal(s0, s1); same == dynamic {
			t.Errorf("dynamic %v: the two epochs hold the same masked examples: %v", dynamic, same)
		}
		got, pos := d.Next(Position{Epoch: 0, Index: d.Len() - 2}, 5)
		if pos != (Position{Epoch: 1, Index: 3}) {
			t.Errorf("position after the epoch's end: %+v", pos)
		}
		if fmt.Sprint(got[2]) != e1[0] || fmt.Sprint(got[0]) != e0[d.Len()-2] {
			t.Errorf("Next does not follow the epochs' order")
		}
	}
}
