package bert_test

import (
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

func equalData(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A pass from the given embedding output Embed computes, and one with a head mask of ones, are
// the plain pass: the same numbers bit for bit, and the same parameter gradients.
func TestEmbeddingsAndHeadMaskOfOnesChangeNothing(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, labels, nsp := fixtureBatch(t)
	emb, err := m.Embed(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Forward(b, bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !equalData(emb.Data, out.Trace.HiddenStates[0].Data) {
		t.Error("Embed differs from hidden_states[0]")
	}
	ones := make([]float32, len(m.Layers)*m.Config.NumAttentionHeads)
	for i := range ones {
		ones[i] = 1
	}
	plain, err := m.ForwardTrain(b, bert.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	given, err := m.ForwardTrain(b, bert.TrainOptions{Embeddings: emb, HeadMask: ones})
	if err != nil {
		t.Fatal(err)
	}
	if !equalData(plain.Hidden.Data, given.Hidden.Data) || !equalData(plain.Pooled.Data, given.Pooled.Data) {
		t.Error("a pass from the embedding output with a head mask of ones differs from the plain pass")
	}
	masked, err := m.Forward(b, bert.Options{MLM: true, NSP: true, HeadMask: ones})
	if err != nil {
		t.Fatal(err)
	}
	full, err := m.Forward(b, bert.Options{MLM: true, NSP: true})
	if err != nil {
		t.Fatal(err)
	}
	if !equalData(masked.MLMLogits.Data, full.MLMLogits.Data) || !equalData(masked.NSPLogits.Data, full.NSPLogits.Data) {
		t.Error("Forward with a head mask of ones differs from Forward")
	}

	g1, g2 := m.NewGrads(), m.NewGrads()
	if _, err := m.ForwardBackward(b, labels, nsp, bert.TrainOptions{}, g1); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ForwardBackward(b, labels, nsp, bert.TrainOptions{HeadMask: ones}, g2); err != nil {
		t.Fatal(err)
	}
	p1, p2 := g1.Params(), g2.Params()
	for i := range p1 {
		if !equalData(p1[i].T.Data, p2[i].T.Data) {
			t.Errorf("gradient of %s differs with a head mask of ones", p1[i].Name)
		}
	}
}

// The MLM head on hidden rows gives Forward's MLM logits.
func TestMLMHeadLogitsEqualForward(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, _, _ := fixtureBatch(t)
	out, err := m.Forward(b, bert.Options{MLM: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.MLMHeadLogits(out.Hidden)
	if err != nil {
		t.Fatal(err)
	}
	if !equalData(got.Data, out.MLMLogits.Data) {
		t.Error("MLMHeadLogits differs from Forward's MLM logits")
	}
}

func TestInputGradErrors(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, _, _ := fixtureBatch(t)
	if _, err := m.ForwardTrain(b, bert.TrainOptions{Embeddings: tensor.New(1, 2, 3)}); err == nil {
		t.Error("ForwardTrain with embeddings of the wrong shape: no error")
	}
	if _, err := m.ForwardTrain(b, bert.TrainOptions{HeadMask: []float32{1}}); err == nil {
		t.Error("ForwardTrain with a head mask of the wrong length: no error")
	}
	if _, err := m.MLMHeadLogits(tensor.New(3, 5)); err == nil {
		t.Error("MLMHeadLogits on rows of the wrong width: no error")
	}
	if _, err := m.MLMHeadBackward(tensor.New(2, m.Config.HiddenSize), tensor.New(1, 3), m.NewGrads()); err == nil {
		t.Error("MLMHeadBackward with d logits of the wrong shape: no error")
	}
	a, err := m.ForwardTrain(b, bert.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ig, err := m.BackwardInputs(a, tensor.New(b.B, b.S, m.Config.HiddenSize), nil, m.NewGrads())
	if err != nil {
		t.Fatal(err)
	}
	if ig.HeadMask != nil || ig.Embeddings == nil {
		t.Error("BackwardInputs without a head mask: want embedding gradients and no head-mask gradient")
	}
}
