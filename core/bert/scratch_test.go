package bert_test

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// scratchShape is a batch shape for the scratch tests; pad > 0 pads the last pad positions of
// every sequence but the first (attention mask 0), and the second half of each sequence is
// sentence B.
type scratchShape struct{ B, S, pad int }

func (s scratchShape) String() string { return fmt.Sprintf("B%d-S%d-pad%d", s.B, s.S, s.pad) }

func (s scratchShape) batch(vocab int) bert.Batch {
	b := bert.Batch{B: s.B, S: s.S, InputIDs: make([]int, s.B*s.S), TokenTypeIDs: make([]int, s.B*s.S)}
	if s.pad > 0 {
		b.AttentionMask = make([]int, s.B*s.S)
	}
	for i := range b.InputIDs {
		bi, j := i/s.S, i%s.S
		b.InputIDs[i] = 1000 + (i*7919+bi*104729)%(vocab-1000)
		if j >= s.S/2 {
			b.TokenTypeIDs[i] = 1
		}
		if b.AttentionMask != nil {
			b.AttentionMask[i] = 1
			if bi > 0 && j >= s.S-s.pad {
				b.AttentionMask[i] = 0
			}
		}
	}
	return b
}

// newTinyModel is BERT-Tiny with every head and random weights (seed 7).
func newTinyModel(t *testing.T) *bert.Model {
	t.Helper()
	c, err := bert.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := bert.NewRandom(c, bert.AllHeads, 7)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameBits reports the first index where a and b differ bit for bit, or -1.
func sameBits(a, b *tensor.Tensor) int {
	if a == nil || b == nil {
		if a == b {
			return -1
		}
		return 0
	}
	if !tensor.SameShape(a.Shape, b.Shape) || len(a.Data) != len(b.Data) {
		return 0
	}
	for i := range a.Data {
		if math.Float32bits(a.Data[i]) != math.Float32bits(b.Data[i]) {
			return i
		}
	}
	return -1
}

// checkSameOutput fails unless got's tensors equal want's bit for bit.
func checkSameOutput(t *testing.T, name string, got, want *bert.Output) {
	t.Helper()
	for _, o := range []struct {
		field     string
		got, want *tensor.Tensor
	}{
		{"Hidden", got.Hidden, want.Hidden}, {"Pooled", got.Pooled, want.Pooled},
		{"MLMLogits", got.MLMLogits, want.MLMLogits}, {"NSPLogits", got.NSPLogits, want.NSPLogits},
	} {
		if i := sameBits(o.got, o.want); i >= 0 {
			t.Errorf("%s: %s differs from a fresh model's traced pass at element %d", name, o.field, i)
		}
	}
}

// referenceOutputs runs each shape once with Trace on a model built anew: the trace path owns
// every tensor it makes and never uses a scratch, so these are the numbers to match.
func referenceOutputs(t *testing.T, shapes []scratchShape, opt bert.Options) []*bert.Output {
	t.Helper()
	fresh := newTinyModel(t)
	opt.Trace = true
	refs := make([]*bert.Output, len(shapes))
	for i, s := range shapes {
		out, err := fresh.Forward(s.batch(fresh.Config.VocabSize), opt)
		if err != nil {
			t.Fatal(err)
		}
		refs[i] = out
	}
	return refs
}

var scratchOptions = []struct {
	name string
	opt  bert.Options
}{
	{"encoder", bert.Options{}},
	{"mlm+nsp", bert.Options{MLM: true, NSP: true}},
	{"mlm-rows", bert.Options{MLM: true, MLMRows: []int{0, 5, 11}}},
}

// TestForwardReusesNoStaleNumbers interleaves shapes (growing and shrinking the scratch
// buffers) on one model and checks every output against a fresh model's traced pass, bit for
// bit; outputs already returned must not change when later passes reuse the scratch.
func TestForwardReusesNoStaleNumbers(t *testing.T) {
	shapes := []scratchShape{{1, 16, 0}, {3, 9, 4}, {2, 32, 0}, {1, 16, 0}, {4, 5, 2}, {2, 32, 0}, {3, 9, 4}}
	for _, tc := range scratchOptions {
		t.Run(tc.name, func(t *testing.T) {
			refs := referenceOutputs(t, shapes, tc.opt)
			m := newTinyModel(t)
			var kept []*bert.Output
			for i, s := range shapes {
				out, err := m.Forward(s.batch(m.Config.VocabSize), tc.opt)
				if err != nil {
					t.Fatal(err)
				}
				checkSameOutput(t, fmt.Sprint("pass ", i, " ", s), out, refs[i])
				kept = append(kept, out)
			}
			for i, out := range kept {
				checkSameOutput(t, fmt.Sprint("after all passes, pass ", i, " ", shapes[i]), out, refs[i])
			}
		})
	}
}

// TestForwardConcurrent runs passes of several shapes from several goroutines at once on one
// model (as the API server does): each must equal a fresh model's traced pass, bit for bit.
func TestForwardConcurrent(t *testing.T) {
	shapes := []scratchShape{{1, 16, 0}, {3, 9, 4}, {2, 32, 0}, {4, 5, 2}}
	opt := bert.Options{MLM: true, NSP: true}
	refs := referenceOutputs(t, shapes, opt)
	m := newTinyModel(t)
	const goroutines, rounds = 6, 4
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				i := (g + r) % len(shapes)
				out, err := m.Forward(shapes[i].batch(m.Config.VocabSize), opt)
				if err != nil {
					t.Error(err)
					return
				}
				checkSameOutput(t, fmt.Sprint("goroutine ", g, " round ", r, " ", shapes[i]), out, refs[i])
			}
		})
	}
	wg.Wait()
}

// TestForwardAllocs checks that an eval pass without trace, after a warm-up pass of its shape,
// allocates only what it returns: the Output, and for each result tensor its header, shape
// and data (tensor.New and Clone: 3 allocations). The MLM logits of every position take one
// more (their [B, S, V] shape); one allocation of slack per pass covers the runtime's own
// (a goroutine's wait record when the processor's cache of them runs dry).
func TestForwardAllocs(t *testing.T) {
	m := newTinyModel(t)
	b := scratchShape{1, 16, 0}.batch(m.Config.VocabSize)
	for _, tc := range []struct {
		name    string
		opt     bert.Options
		outputs int // allocations of the returned Output and its tensors
	}{
		{"encoder", bert.Options{}, 1 + 3 + 3},
		{"nsp", bert.Options{NSP: true}, 1 + 3 + 3 + 3},
		{"mlm+nsp", bert.Options{MLM: true, NSP: true}, 1 + 3 + 3 + 3 + 1 + 3},
		{"mlm-rows", bert.Options{MLM: true, MLMRows: []int{2, 9}}, 1 + 3 + 3 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 3 { // warm-up: the scratch and the GEMM buffers sized for this shape
				if _, err := m.Forward(b, tc.opt); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(50, func() {
				if _, err := m.Forward(b, tc.opt); err != nil {
					t.Fatal(err)
				}
			})
			t.Logf("%.0f allocations per pass (outputs: %d)", allocs, tc.outputs)
			if allocs > float64(tc.outputs+1) {
				t.Errorf("%.0f allocations per pass, want at most %d (the outputs) + 1", allocs, tc.outputs)
			}
		})
	}
}
