package bert_test

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestMLMInto checks that Options.MLMInto receives the masked-LM logits, equal to a fresh
// allocation's, for the labelled rows and for every position, and that a buffer too small is
// left alone.
func TestMLMInto(t *testing.T) {
	c, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	c.VocabSize = 2000
	m, err := bert.NewRandom(c, bert.AllHeads, 3)
	if err != nil {
		t.Fatal(err)
	}
	batch, labels := trainBatch(c, 2, 16)
	var rows []int
	for i, y := range labels {
		if y != bert.IgnoreIndex {
			rows = append(rows, i)
		}
	}
	for _, tc := range []struct {
		name string
		rows []int
		n    int
	}{{"labelled rows", rows, len(rows)}, {"every position", nil, 2 * 16}} {
		want, err := m.Forward(batch, bert.Options{MLM: true, MLMRows: tc.rows})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]float32, tc.n*c.VocabSize+7)
		got, err := m.Forward(batch, bert.Options{MLM: true, MLMRows: tc.rows, MLMInto: buf})
		if err != nil {
			t.Fatal(err)
		}
		if &got.MLMLogits.Data[0] != &buf[0] {
			t.Errorf("%s: the logits are not in MLMInto", tc.name)
		}
		for i, v := range want.MLMLogits.Data {
			if got.MLMLogits.Data[i] != v {
				t.Fatalf("%s: logit %d = %g into the buffer, %g allocated", tc.name, i, got.MLMLogits.Data[i], v)
			}
		}
		small := make([]float32, tc.n*c.VocabSize-1)
		got, err = m.Forward(batch, bert.Options{MLM: true, MLMRows: tc.rows, MLMInto: small})
		if err != nil {
			t.Fatal(err)
		}
		if &got.MLMLogits.Data[0] == &small[0] {
			t.Errorf("%s: a buffer one float short was used", tc.name)
		}
	}
}
