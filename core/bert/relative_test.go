package bert_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/internal/approx"
)

// withPositions returns a model sharing m's weights whose config has the given
// position_embedding_type.
func withPositions(m *bert.Model, typ string) *bert.Model {
	c := *m
	c.Config.PositionEmbeddingType = typ
	return &c
}

// TestRelativeKeyDropsTheKeyTerm checks relative_key against relative_key_query on the
// fixture's weights: the first layer sees the same queries and keys in both (the embeddings do
// not depend on the type), and its scores must differ by exactly k_j·r[l, j] / √d, computed
// here in float64 from the traced keys and the distance embeddings; relative_key's scores
// must be (q_l·k_j + q_l·r[l, j]) / √d.
func TestRelativeKeyDropsTheKeyTerm(t *testing.T) {
	kq := loadFixtureModelIn(t, relKQFixtureDir, "")
	k := withPositions(kq, bert.PositionRelativeKey)
	b, _, _ := fixtureBatchIn(t, relKQFixtureDir)
	outKQ, err := kq.Forward(b, bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	outK, err := k.Forward(b, bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	c := kq.Config
	B, S, H, A, P := b.B, b.S, c.HiddenSize, c.NumAttentionHeads, c.MaxPositionEmbeddings
	d := H / A
	lkq, lk := outKQ.Trace.Layers[0], outK.Trace.Layers[0]
	if approx.MaxAbsDiff(lkq.Query.Data, lk.Query.Data) != 0 || approx.MaxAbsDiff(lkq.Key.Data, lk.Key.Data) != 0 {
		t.Fatal("layer 0's queries or keys depend on the position type")
	}
	q, key, dist := lk.Query.Data, lk.Key.Data, kq.Layers[0].Distance.Data
	wantK := make([]float32, B*A*S*S)       // relative_key's scores
	wantDiff := make([]float32, len(wantK)) // relative_key_query's minus relative_key's
	gotDiff := make([]float32, len(wantK))
	var keyTerm float64 // the largest |k·r| / √d: the term must matter
	for bi := 0; bi < B; bi++ {
		for h := 0; h < A; h++ {
			for l := 0; l < S; l++ {
				for j := 0; j < S; j++ {
					r := dist[(l-j+P-1)*d : (l-j+P)*d]
					var qk, qr, kr float64
					for t := 0; t < d; t++ {
						qv, kv := float64(q[(bi*S+l)*H+h*d+t]), float64(key[(bi*S+j)*H+h*d+t])
						qk += qv * kv
						qr += qv * float64(r[t])
						kr += kv * float64(r[t])
					}
					i := ((bi*A+h)*S+l)*S + j
					s := math.Sqrt(float64(d))
					wantK[i] = float32((qk + qr) / s)
					wantDiff[i] = float32(kr / s)
					gotDiff[i] = lkq.Scores.Data[i] - lk.Scores.Data[i]
					keyTerm = math.Max(keyTerm, math.Abs(kr/s))
				}
			}
		}
	}
	if err := approx.Check("relative_key scores", lk.Scores.Data, wantK, 1e-5, 1e-4); err != nil {
		t.Error(err)
	}
	if err := approx.Check("key term", gotDiff, wantDiff, 1e-5, 1e-4); err != nil {
		t.Error(err)
	}
	if keyTerm < 0.01 {
		t.Errorf("largest key term %g: too small to tell the types apart", keyTerm)
	}
	if d := approx.MaxAbsDiff(outK.Hidden.Data, outKQ.Hidden.Data); d < 1e-3 {
		t.Errorf("relative_key's output is within %g of relative_key_query's", d)
	}
}

// TestRelativeIgnoresPositionTable checks that with relative positions the position embedding
// table takes no part: changing it changes no output, and the trace shows no position added.
func TestRelativeIgnoresPositionTable(t *testing.T) {
	for _, typ := range []string{bert.PositionRelativeKey, bert.PositionRelativeKeyQuery} {
		t.Run(typ, func(t *testing.T) {
			m := withPositions(loadFixtureModelIn(t, relKQFixtureDir, ""), typ)
			b, _, _ := fixtureBatchIn(t, relKQFixtureDir)
			before, err := m.Forward(b, bert.Options{MLM: true, Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range before.Trace.PosEmb.Data {
				if v != 0 {
					t.Fatal("the trace shows a position embedding added")
				}
			}
			for i := range m.PosEmb.Data {
				m.PosEmb.Data[i] += float32(i%7) - 3
			}
			after, err := m.Forward(b, bert.Options{MLM: true})
			if err != nil {
				t.Fatal(err)
			}
			if d := approx.MaxAbsDiff(before.MLMLogits.Data, after.MLMLogits.Data); d != 0 {
				t.Errorf("changing the position table moved the logits by %g", d)
			}
		})
	}
}

// TestRelativeLeftPaddingInvariance checks the property that sets relative positions apart:
// scores depend on offsets only, so a sequence shifted right behind masked padding gives its
// tokens the same hidden states. Absolute positions do not have it (the control).
func TestRelativeLeftPaddingInvariance(t *testing.T) {
	ids := []int{101, 490, 103, 1248, 102, 1655, 996, 102}
	types := []int{0, 0, 0, 0, 0, 1, 1, 1}
	const shift = 3
	n := len(ids)
	S := n + shift
	b := bert.Batch{B: 2, S: S, InputIDs: make([]int, 2*S), TokenTypeIDs: make([]int, 2*S), AttentionMask: make([]int, 2*S)}
	for i := range n {
		// Sequence 0: the tokens then padding; sequence 1: padding then the tokens.
		b.InputIDs[i], b.TokenTypeIDs[i], b.AttentionMask[i] = ids[i], types[i], 1
		j := S + shift + i
		b.InputIDs[j], b.TokenTypeIDs[j], b.AttentionMask[j] = ids[i], types[i], 1
	}
	H := 64
	diff := func(m *bert.Model) float64 {
		out, err := m.Forward(b, bert.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return approx.MaxAbsDiff(out.Hidden.Data[:n*H], out.Hidden.Data[(S+shift)*H:(S+shift+n)*H])
	}
	rel := loadFixtureModelIn(t, relKQFixtureDir, "")
	for _, typ := range []string{bert.PositionRelativeKey, bert.PositionRelativeKeyQuery} {
		if d := diff(withPositions(rel, typ)); d > 1e-5 {
			t.Errorf("%s: shifted tokens differ by %g", typ, d)
		}
	}
	if d := diff(loadFixtureModel(t, "")); d < 1e-3 {
		t.Errorf("absolute positions: shifted tokens differ by only %g (the control should fail)", d)
	}
}

// TestRelativePathsAgree checks that the eval pass without trace (scratch buffers), with
// trace, and the training pass without dropout give the same numbers with relative positions,
// at several lengths (each its own window of the distance embeddings).
func TestRelativePathsAgree(t *testing.T) {
	m := loadFixtureModelIn(t, relKQFixtureDir, "")
	for _, S := range []int{1, 5, 12, 32} {
		t.Run(fmt.Sprint(S), func(t *testing.T) {
			b := bert.Batch{B: 2, S: S, InputIDs: make([]int, 2*S)}
			for i := range b.InputIDs {
				b.InputIDs[i] = 100 + (i*37)%1900
			}
			plain, err := m.Forward(b, bert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			traced, err := m.Forward(b, bert.Options{Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			a, err := m.ForwardTrain(b, bert.TrainOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d := approx.MaxAbsDiff(plain.Hidden.Data, traced.Hidden.Data); d != 0 {
				t.Errorf("scratch and traced passes differ by %g", d)
			}
			if d := approx.MaxAbsDiff(plain.Hidden.Data, a.Hidden.Data); d != 0 {
				t.Errorf("eval and training passes differ by %g", d)
			}
		})
	}
}

// TestRelativeNewRandom checks the initialisation of a relative model: every layer has a
// distance embedding [2P−1, d] named as HF names it, drawn from N(0, initializer_range²), and
// the parameter count computed from the config agrees.
func TestRelativeNewRandom(t *testing.T) {
	c, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	abs, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	c.PositionEmbeddingType = bert.PositionRelativeKeyQuery
	m, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	P, d := c.MaxPositionEmbeddings, c.HeadDim()
	var names []string
	for _, p := range m.Params() {
		if strings.Contains(p.Name, "distance_embedding") {
			names = append(names, p.Name)
			if p.T.Shape[0] != 2*P-1 || p.T.Shape[1] != d {
				t.Errorf("%s has shape %v, want [%d %d]", p.Name, p.T.Shape, 2*P-1, d)
			}
			var s, s2 float64
			for _, v := range p.T.Data {
				s += float64(v)
				s2 += float64(v) * float64(v)
			}
			nf := float64(p.T.Len())
			mean, std := s/nf, math.Sqrt(s2/nf-(s/nf)*(s/nf))
			// 65,408 draws: the sample's std is within 1% of 0.02 and its mean within 3e-4 of 0.
			if math.Abs(std-c.InitializerRange) > 0.01*c.InitializerRange || math.Abs(mean) > 3e-4 {
				t.Errorf("%s: mean %g, std %g; want N(0, %g²)", p.Name, mean, std, c.InitializerRange)
			}
		}
	}
	want := []string{"bert.encoder.layer.0.attention.self.distance_embedding.weight", "bert.encoder.layer.1.attention.self.distance_embedding.weight"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("distance embeddings %v, want %v", names, want)
	}
	if got, want := m.NumParams(), c.ParamCount(bert.AllHeads); got != want {
		t.Errorf("NumParams %d, ParamCount %d", got, want)
	}
	if got, want := m.NumParams()-abs.NumParams(), int64(c.NumHiddenLayers*(2*P-1)*d); got != want {
		t.Errorf("relative model has %d parameters more than the absolute one, want %d", got, want)
	}
}
