package explain

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tensor"
)

const fixtureDir = "../bert/testdata/bert-tiny-random"

func loadFixture(t *testing.T) *hf.Folder {
	t.Helper()
	f, err := hf.LoadFolder(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// randomInput draws an input [CLS] w... [SEP] of S tokens with ordinary vocabulary ids.
func randomInput(rng *rand.Rand, S int) Input {
	in := Input{IDs: make([]int, S), TypeIDs: make([]int, S)}
	in.IDs[0], in.IDs[S-1] = 101, 102
	for i := 1; i < S-1; i++ {
		in.IDs[i] = 999 + rng.IntN(1000)
		if i > S/2 {
			in.TypeIDs[i] = 1
		}
	}
	in.TypeIDs[S-1] = 1
	in.IDs[S/3] = 103 // a [MASK]
	return in
}

// withValueZeroed returns a copy of m whose value projection is zero for the heads off: their
// P·V context is then exactly zero, which is what HF's head_mask of 0 gives.
func withValueZeroed(m *bert.Model, off []Head) *bert.Model {
	c := *m
	c.Layers = append([]bert.Layer(nil), m.Layers...)
	d := m.Config.HeadDim()
	for _, h := range off {
		L := &c.Layers[h.Layer]
		if L.Value.W == m.Layers[h.Layer].Value.W {
			L.Value = bert.Linear{W: L.Value.W.Clone(), B: L.Value.B.Clone()}
		}
		for r := h.Head * d; r < (h.Head+1)*d; r++ {
			clear(L.Value.W.Row(r))
			L.Value.B.Data[r] = 0
		}
	}
	return &c
}

// Property: switching heads off with the head mask equals running the model with those
// heads' attention output (their part of the context before the output dense) zeroed, here by
// zeroing their value projections; with every head of a layer off, that layer's whole context
// is zero. Checked for each layer whole and for random sets of heads on random inputs.
func TestAblationEqualsZeroedContext(t *testing.T) {
	m := loadFixture(t).Model
	L, A := len(m.Layers), m.Config.NumAttentionHeads
	rng := rand.New(rand.NewPCG(14, 1))
	var cases [][]Head
	for l := range L {
		var off []Head
		for h := range A {
			off = append(off, Head{l, h})
		}
		cases = append(cases, off)
	}
	for range 6 {
		var off []Head
		for l := range L {
			for h := range A {
				if rng.IntN(3) == 0 {
					off = append(off, Head{l, h})
				}
			}
		}
		cases = append(cases, off)
	}
	for ci, off := range cases {
		in := randomInput(rng, 6+rng.IntN(20))
		hm, err := HeadMask(m.Config, off)
		if err != nil {
			t.Fatal(err)
		}
		b := in.batch(1)
		got, err := m.Forward(b, bert.Options{MLM: true, NSP: true, HeadMask: hm})
		if err != nil {
			t.Fatal(err)
		}
		want, err := withValueZeroed(m, off).Forward(b, bert.Options{MLM: true, NSP: true})
		if err != nil {
			t.Fatal(err)
		}
		intact, err := m.Forward(b, bert.Options{MLM: true})
		if err != nil {
			t.Fatal(err)
		}
		// Both compute the same float32 operations on a zero context: equal to rounding.
		for _, c := range []struct {
			name      string
			got, want *tensor.Tensor
		}{{"hidden", got.Hidden, want.Hidden}, {"mlm", got.MLMLogits, want.MLMLogits}, {"nsp", got.NSPLogits, want.NSPLogits}} {
			if d := maxDiff(c.got.Data, c.want.Data); d > 1e-5 {
				t.Errorf("case %d (%v): %s differs from the zeroed-context model by %g", ci, off, c.name, d)
			}
		}
		if len(off) > 0 && maxDiff(got.MLMLogits.Data, intact.MLMLogits.Data) < 1e-3 {
			t.Errorf("case %d (%v): ablation changed nothing", ci, off)
		}
	}
}

func maxDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// mlmLoss is HF's masked-LM loss of one example under head mask hm, from the eval forward.
func mlmLoss(t *testing.T, m *bert.Model, ex Example, hm []float32) float64 {
	t.Helper()
	var rows, labels []int
	for i, y := range ex.Labels {
		if y != bert.IgnoreIndex {
			rows, labels = append(rows, i), append(labels, y)
		}
	}
	out, err := m.Forward(ex.batch(1), bert.Options{MLM: true, MLMRows: rows, HeadMask: hm})
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := bert.CrossEntropy(out.MLMLogits.Data, m.Config.VocabSize, labels)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Head importance equals |central differences| of the masked-LM loss in each head-mask entry.
// The forward is float32: the loss (about 8) carries rounding of a few 1e-6, which the
// quotient's 1/(2ε) with ε = 1e-2 turns into up to about 4e-4 (1.9e-4 seen on these cases);
// the truncation error ε²/6·|f”'| is smaller. Tolerance: 4e-4 + 1e-3 relative, so that an
// importance off by 1% (1e-2 on these scores of 0.05 to 1.5) fails.
func TestImportanceEqualsFiniteDifferences(t *testing.T) {
	m := loadFixture(t).Model
	L, A := len(m.Layers), m.Config.NumAttentionHeads
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 3 {
		in := randomInput(rng, 8+rng.IntN(12))
		ex := Example{Input: in, Labels: make([]int, len(in.IDs))}
		for i := range ex.Labels {
			ex.Labels[i] = bert.IgnoreIndex
			if in.IDs[i] == 103 || rng.IntN(4) == 0 && i > 0 && i < len(in.IDs)-1 {
				ex.Labels[i] = rng.IntN(m.Config.VocabSize)
			}
		}
		imp, err := HeadImportance(m, []Example{ex})
		if err != nil {
			t.Fatal(err)
		}
		const eps = 1e-2
		for l := range L {
			for h := range A {
				hm, _ := HeadMask(m.Config, nil)
				hm[l*A+h] = 1 + eps
				up := mlmLoss(t, m, ex, hm)
				hm[l*A+h] = 1 - eps
				down := mlmLoss(t, m, ex, hm)
				fd := math.Abs((up - down) / (2 * eps))
				got := imp.Raw[l][h]
				if math.Abs(got-fd) > 4e-4+1e-3*fd {
					t.Errorf("trial %d head %d.%d: importance %.6g, finite difference %.6g", trial, l, h, got, fd)
				}
			}
		}
	}
}

func TestHeadMaskErrors(t *testing.T) {
	m := loadFixture(t).Model
	for _, off := range [][]Head{{{-1, 0}}, {{2, 0}}, {{0, 4}}, {{0, -1}}} {
		if _, err := HeadMask(m.Config, off); err == nil {
			t.Errorf("HeadMask(%v): no error", off)
		}
	}
	if _, err := m.Forward(bert.Batch{B: 1, S: 2, InputIDs: []int{101, 102}}, bert.Options{HeadMask: []float32{1, 1}}); err == nil {
		t.Error("Forward with a head mask of the wrong length: no error")
	}
	nan := []float32{1, 1, 1, 1, 1, 1, 1, float32(math.NaN())}
	if _, err := m.Forward(bert.Batch{B: 1, S: 2, InputIDs: []int{101, 102}}, bert.Options{HeadMask: nan}); err == nil {
		t.Error("Forward with a NaN head mask: no error")
	}
	if _, err := HeadImportance(m, nil); err == nil {
		t.Error("HeadImportance of no example: no error")
	}
	in := Input{IDs: []int{101, 103, 102}}
	if _, err := HeadImportance(m, []Example{{Input: in, Labels: []int{-100, -100, -100}}}); err == nil {
		t.Error("HeadImportance without labels: no error")
	}
	if _, err := Ablate(m, in, []int{5}, nil, 5); err == nil {
		t.Error("Ablate at a position outside the input: no error")
	}
}
