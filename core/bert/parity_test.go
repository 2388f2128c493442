package bert_test

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// The fixtures: bert-tiny-random has absolute positions, bert-tiny-relkq HF 4.x's
// relative_key_query positions.
const (
	fixtureDir      = "testdata/bert-tiny-random"
	relKQFixtureDir = "testdata/bert-tiny-relkq"
)

// Tolerances the fixtures' README gives for a float32 implementation.
const (
	actAtol, actRtol = 1e-5, 1e-4
	logitAtol        = 1e-4
)

// fixtureBatch reads inputs.safetensors: input ids, types, mask [B, S], MLM labels, NSP labels.
func fixtureBatch(t *testing.T) (bert.Batch, []int, []int) {
	t.Helper()
	return fixtureBatchIn(t, fixtureDir)
}

// fixtureBatchIn is fixtureBatch of the fixture in dir.
func fixtureBatchIn(t *testing.T, dir string) (bert.Batch, []int, []int) {
	t.Helper()
	f, err := hf.Open(filepath.Join(dir, "inputs.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func(name string) ([]int, []int) {
		v, shape, err := f.Int64(name)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out, shape
	}
	ids, shape := get("input_ids")
	types, _ := get("token_type_ids")
	mask, _ := get("attention_mask")
	labels, _ := get("labels")
	nsp, _ := get("next_sentence_label")
	return bert.Batch{B: shape[0], S: shape[1], InputIDs: ids, TokenTypeIDs: types, AttentionMask: mask}, labels, nsp
}

func loadFixtureModel(t *testing.T, weights string) *bert.Model {
	t.Helper()
	return loadFixtureModelIn(t, fixtureDir, weights)
}

// loadFixtureModelIn loads the fixture folder dir, with the weights of another file if weights
// is not "".
func loadFixtureModelIn(t *testing.T, dir, weights string) *bert.Model {
	t.Helper()
	f, err := hf.LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if weights == "" {
		return f.Model
	}
	m, _, err := hf.LoadModel(weights, f.Model.Config)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// readAll reads every tensor of a safetensors file as float32.
func readAll(t *testing.T, path string) map[string][]float32 {
	t.Helper()
	f, err := hf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float32{}
	for _, n := range f.Names() {
		v, _, err := f.Float32(n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = v
	}
	return out
}

// compareOutputs checks every tensor of dir's outputs.safetensors, scaling the tolerances by tolScale.
func compareOutputs(t *testing.T, dir string, m *bert.Model, tolScale float64) {
	t.Helper()
	b, labels, nsp := fixtureBatchIn(t, dir)
	out, err := m.Forward(b, bert.Options{MLM: true, NSP: true, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, filepath.Join(dir, "outputs.safetensors"))
	got := map[string][]float32{
		"last_hidden_state":       out.Hidden.Data,
		"pooler_output":           out.Pooled.Data,
		"prediction_logits":       out.MLMLogits.Data,
		"seq_relationship_logits": out.NSPLogits.Data,
	}
	for i, h := range out.Trace.HiddenStates {
		got[fmt.Sprintf("hidden_states.%d", i)] = h.Data
	}
	for i, a := range out.Trace.Attentions {
		got[fmt.Sprintf("attentions.%d", i)] = a.Data
	}
	loss, err := bert.PreTrainingLoss(out, labels, nsp)
	if err != nil {
		t.Fatal(err)
	}
	got["loss"] = []float32{float32(loss.Total)}
	got["masked_lm_loss"] = []float32{float32(loss.MLM)}
	got["next_sentence_loss"] = []float32{float32(loss.NSP)}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: not produced", name)
			continue
		}
		atol, rtol := actAtol, actRtol
		if name == "prediction_logits" || name == "seq_relationship_logits" || name == "loss" || name == "masked_lm_loss" || name == "next_sentence_loss" {
			atol = logitAtol
		}
		if err := approx.Check(name, g, w, atol*tolScale, rtol*tolScale); err != nil {
			t.Error(err)
		}
	}
}

func TestForwardMatchesFixture(t *testing.T) {
	for _, dir := range []string{fixtureDir, relKQFixtureDir} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			compareOutputs(t, dir, loadFixtureModelIn(t, dir, ""), 1)
		})
	}
}

func TestIntermediatesMatchFixture(t *testing.T) {
	for _, dir := range []string{fixtureDir, relKQFixtureDir} {
		t.Run(filepath.Base(dir), func(t *testing.T) { checkIntermediates(t, dir) })
	}
}

// checkIntermediates compares the trace of the fixture in dir with its intermediates.safetensors.
func checkIntermediates(t *testing.T, dir string) {
	m := loadFixtureModelIn(t, dir, "")
	b, _, _ := fixtureBatchIn(t, dir)
	out, err := m.Forward(b, bert.Options{MLM: true, NSP: true, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, filepath.Join(dir, "intermediates.safetensors"))
	got := map[string][]float32{"mlm_transform": out.Trace.MLMTransform.Data}
	for l, lt := range out.Trace.Layers {
		p := fmt.Sprintf("layer.%d.", l)
		got[p+"query"], got[p+"key"], got[p+"value"] = lt.Query.Data, lt.Key.Data, lt.Value.Data
		got[p+"scores"], got[p+"context"] = lt.Scores.Data, lt.Context.Data
		got[p+"attention_output"], got[p+"intermediate"] = lt.AttentionOutput.Data, lt.Intermediate.Data
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: not produced", name)
			continue
		}
		if err := approx.Check(name, g, w, actAtol, actRtol); err != nil {
			t.Error(err)
		}
	}
}

// TestTraceIsConsistent checks properties of the trace that hold whatever the weights:
// attention rows sum to 1, padded keys get exactly 0, and the last hidden state is the output.
func TestTraceIsConsistent(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, _, _ := fixtureBatch(t)
	out, err := m.Forward(b, bert.Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	A, S := m.Config.NumAttentionHeads, b.S
	for l, a := range out.Trace.Attentions {
		for bi := 0; bi < b.B; bi++ {
			for h := 0; h < A; h++ {
				for i := 0; i < S; i++ {
					row := a.Data[((bi*A+h)*S+i)*S : ((bi*A+h)*S+i+1)*S]
					var s float64
					for j, p := range row {
						s += float64(p)
						if b.AttentionMask[bi*S+j] == 0 && p != 0 {
							t.Fatalf("layer %d seq %d head %d: padded key %d gets %g", l, bi, h, j, p)
						}
					}
					if math.Abs(s-1) > 1e-5 {
						t.Fatalf("layer %d seq %d head %d row %d sums to %g", l, bi, h, i, s)
					}
				}
			}
		}
	}
	last := out.Trace.HiddenStates[len(out.Trace.HiddenStates)-1]
	if approx.MaxAbsDiff(last.Data, out.Hidden.Data) != 0 {
		t.Fatal("last hidden state differs from the trace's last layer")
	}
}

// TestMLMRowsEqualFullLogits checks that restricting the MLM head to some positions gives the
// same logits as the full computation.
func TestMLMRowsEqualFullLogits(t *testing.T) {
	m := loadFixtureModel(t, "")
	b, _, _ := fixtureBatch(t)
	full, err := m.Forward(b, bert.Options{MLM: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := []int{2, 3, 13, 17}
	part, err := m.Forward(b, bert.Options{MLM: true, MLMRows: rows})
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config.VocabSize
	for i, r := range rows {
		if err := approx.Check(fmt.Sprint("row ", r), part.MLMLogits.Data[i*V:(i+1)*V], full.MLMLogits.Data[r*V:(r+1)*V], 1e-6, 1e-6); err != nil {
			t.Error(err)
		}
	}
}

func TestForwardRejectsBadBatch(t *testing.T) {
	m := loadFixtureModel(t, "")
	ok, _, _ := fixtureBatch(t)
	tests := []struct {
		name string
		edit func(b *bert.Batch)
	}{
		{"id out of vocabulary", func(b *bert.Batch) { b.InputIDs[3] = m.Config.VocabSize }},
		{"negative id", func(b *bert.Batch) { b.InputIDs[0] = -1 }},
		{"type out of range", func(b *bert.Batch) { b.TokenTypeIDs[1] = 2 }},
		{"mask not 0/1", func(b *bert.Batch) { b.AttentionMask[1] = 5 }},
		{"short ids", func(b *bert.Batch) { b.InputIDs = b.InputIDs[:5] }},
		{"too long", func(b *bert.Batch) { b.S = 40; b.B = 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := ok
			b.InputIDs = append([]int(nil), ok.InputIDs...)
			b.TokenTypeIDs = append([]int(nil), ok.TokenTypeIDs...)
			b.AttentionMask = append([]int(nil), ok.AttentionMask...)
			tc.edit(&b)
			if _, err := m.Forward(b, bert.Options{}); err == nil {
				t.Fatal("no error")
			} else {
				t.Log(err)
			}
		})
	}
}
