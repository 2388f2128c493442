package bert_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/approx"
)

// familyFixtures are the fixtures of scripts/familyref/familyref.py: a family's model folder
// and the outputs of an independent float64 PyTorch implementation of transformers' classes.
var familyFixtures = []struct {
	dir    string
	family bert.Family
	mlm    bool // the checkpoint has the MLM head (…ForMaskedLM)
	sop    bool // the checkpoint has the pooler and ALBERT's SOP head (AlbertForPreTraining)
	rtd    bool // the checkpoint has ELECTRA's discriminator head (ElectraForPreTraining)
	// notes are substrings the loader's report must hold.
	notes []string
}{
	{"testdata/distilbert-tiny-random", bert.FamilyDistilBERT, true, false, false, []string{"decoder weight absent"}},
	{"testdata/distilbert-tiny-sinusoidal", bert.FamilyDistilBERT, false, false, false, nil},
	{"testdata/roberta-tiny-random", bert.FamilyRoBERTa, true, false, false, []string{"stale buffer roberta.embeddings.position_ids"}},
	{"testdata/albert-tiny-random", bert.FamilyALBERT, true, true, false, []string{"decoder weight absent"}},
	{"testdata/albert-tiny-groups", bert.FamilyALBERT, false, false, false, nil},
	{"testdata/electra-tiny-discriminator", bert.FamilyELECTRA, false, false, true, nil},
	{"testdata/electra-tiny-generator", bert.FamilyELECTRA, true, false, false, []string{"decoder weight absent"}},
	{"testdata/deberta-tiny-random", bert.FamilyDeBERTaV2, true, false, false, []string{"decoder weight absent"}},
	{"testdata/deberta-tiny-nobuckets", bert.FamilyDeBERTaV2, false, false, false, nil},
}

// familyBatch reads a family fixture's inputs.safetensors: the batch [B, S], the MLM labels and
// ALBERT's sentence-order labels (nil when absent).
func familyBatch(t *testing.T, dir string) (bert.Batch, []int, []int) {
	t.Helper()
	f, err := hf.Open(filepath.Join(dir, "inputs.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func(name string) ([]int, []int) {
		if _, ok := f.Info(name); !ok {
			return nil, nil
		}
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
	sop, _ := get("sentence_order_label")
	return bert.Batch{B: shape[0], S: shape[1], InputIDs: ids, TokenTypeIDs: types, AttentionMask: mask}, labels, sop
}

// TestFamilyMatchesFixture loads each family fixture through core/hf and compares every output,
// hidden state, attention map and per-layer intermediate with the reference.
func TestFamilyMatchesFixture(t *testing.T) {
	for _, fx := range familyFixtures {
		t.Run(filepath.Base(fx.dir), func(t *testing.T) {
			f, err := hf.LoadFolder(fx.dir)
			if err != nil {
				t.Fatal(err)
			}
			m := f.Model
			if got := m.Config.FamilyOf(); got != fx.family {
				t.Fatalf("family %q, want %q", got, fx.family)
			}
			if len(f.Report.Ignored) > 0 {
				t.Errorf("tensors ignored: %v", f.Report.Ignored)
			}
			for _, n := range fx.notes {
				if !slices.ContainsFunc(f.Report.Notes, func(s string) bool { return strings.Contains(s, n) }) {
					t.Errorf("report notes %q lack %q", f.Report.Notes, n)
				}
			}
			if (m.MLM != nil) != fx.mlm || (m.Pooler != nil) != fx.sop || (m.NSP != nil) != fx.sop || (m.RTD != nil) != fx.rtd {
				t.Fatalf("heads %v, want mlm %v, pooler and sop %v, rtd %v", m.HeadNames(), fx.mlm, fx.sop, fx.rtd)
			}
			b, labels, sopLabels := familyBatch(t, fx.dir)
			out, err := m.Forward(b, bert.Options{MLM: fx.mlm, NSP: fx.sop, RTD: fx.rtd, Trace: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]float32{"last_hidden_state": out.Hidden.Data}
			for i, h := range out.Trace.HiddenStates {
				got[fmt.Sprintf("hidden_states.%d", i)] = h.Data
			}
			for i, a := range out.Trace.Attentions {
				got[fmt.Sprintf("attentions.%d", i)] = a.Data
			}
			for l, lt := range out.Trace.Layers {
				p := fmt.Sprintf("layer.%d.", l)
				got[p+"query"], got[p+"key"], got[p+"value"] = lt.Query.Data, lt.Key.Data, lt.Value.Data
				got[p+"scores"], got[p+"context"] = lt.Scores.Data, lt.Context.Data
				got[p+"attention_output"], got[p+"intermediate"] = lt.AttentionOutput.Data, lt.Intermediate.Data
				if lt.C2P != nil {
					got[p+"c2p"] = lt.C2P.Data
				}
				if lt.P2C != nil {
					got[p+"p2c"] = lt.P2C.Data
				}
			}
			if e := out.Trace.Embeddings; e != nil {
				got["embeddings"] = e.Data
			}
			if fx.rtd {
				got["logits"] = out.RTDLogits.Data
				got["loss"] = []float32{float32(replacedLoss(out.RTDLogits.Data, labels, b.AttentionMask))}
			}
			if fx.mlm {
				// …ForMaskedLM calls them logits, AlbertForPreTraining prediction_logits.
				got["logits"], got["prediction_logits"] = out.MLMLogits.Data, out.MLMLogits.Data
				got["mlm_transform"] = out.Trace.MLMTransform.Data
				loss, _, err := bert.CrossEntropy(out.MLMLogits.Data, m.Config.VocabSize, labels)
				if err != nil {
					t.Fatal(err)
				}
				if fx.sop {
					got["pooler_output"], got["sop_logits"] = out.Pooled.Data, out.NSPLogits.Data
					sop, _, err := bert.CrossEntropy(out.NSPLogits.Data, 2, sopLabels)
					if err != nil {
						t.Fatal(err)
					}
					loss += sop
				}
				got["loss"] = []float32{float32(loss)}
			}
			want := readAll(t, filepath.Join(fx.dir, "outputs.safetensors"))
			for k, v := range readAll(t, filepath.Join(fx.dir, "intermediates.safetensors")) {
				want[k] = v
			}
			var worst float64
			for _, name := range sortedNames(want) {
				g, ok := got[name]
				if !ok {
					t.Errorf("%s: not produced", name)
					continue
				}
				atol, rtol := actAtol, actRtol
				if strings.HasSuffix(name, "logits") || name == "loss" {
					atol = logitAtol
				}
				if err := approx.Check(name, g, want[name], atol, rtol); err != nil {
					t.Error(err)
				}
				worst = max(worst, approx.MaxAbsDiff(g, want[name]))
			}
			t.Logf("%d tensors; max |diff| %.3g", len(want), worst)
		})
	}
}

func sortedNames(m map[string][]float32) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// replacedLoss is ElectraForPreTraining's loss, written out here: the mean binary cross-entropy
// of sigmoid(logit) and the label over the attended tokens.
func replacedLoss(logits []float32, labels, mask []int) float64 {
	var sum float64
	n := 0
	for i, z := range logits {
		if mask[i] == 0 {
			continue
		}
		p := 1 / (1 + math.Exp(-float64(z)))
		if labels[i] == 1 {
			sum -= math.Log(p)
		} else {
			sum -= math.Log(1 - p)
		}
		n++
	}
	return sum / float64(n)
}
