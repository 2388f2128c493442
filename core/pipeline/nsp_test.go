package pipeline

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// softmax2 is the reference two-way softmax, in float64.
func softmax2(a, b float64) (float64, float64) {
	ea, eb := math.Exp(a), math.Exp(b)
	return ea / (ea + eb), eb / (ea + eb)
}

// TestNSPMatchesFixture runs fill-mask on the fixture's two pairs (inputs.safetensors, both
// with token type 1 segments and [MASK]s) and checks the next-sentence probabilities against
// the softmax of the independent implementation's seq_relationship_logits
// (outputs.safetensors). Padded positions are dropped: the fixture masks them out of
// attention, and positions are absolute, so [CLS] sees the same sequence.
func TestNSPMatchesFixture(t *testing.T) {
	f := loadFixture(t)
	in, err := hf.Open(filepath.Join(fixture, "inputs.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ints := func(name string) ([]int64, []int) {
		v, shape, err := in.Int64(name)
		if err != nil {
			t.Fatal(err)
		}
		return v, shape
	}
	ids, shape := ints("input_ids")
	types, _ := ints("token_type_ids")
	mask, _ := ints("attention_mask")
	out, err := hf.Open(filepath.Join(fixture, "outputs.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	want, _, err := out.Float32("seq_relationship_logits") // [B, 2]
	if err != nil {
		t.Fatal(err)
	}
	B, S := shape[0], shape[1]
	for b := range B {
		var seqIDs, seqTypes, rows []int
		pair := false
		for s := range S {
			if mask[b*S+s] == 0 {
				continue
			}
			id := int(ids[b*S+s])
			if id == f.Tokenizer.MaskID() {
				rows = append(rows, len(seqIDs))
			}
			seqIDs, seqTypes = append(seqIDs, id), append(seqTypes, int(types[b*S+s]))
			pair = pair || types[b*S+s] == 1
		}
		if !pair || len(rows) == 0 {
			t.Fatalf("fixture sequence %d: want a pair with [MASK]s, got types %v", b, seqTypes)
		}
		res, err := predict(f.Model, f.Tokenizer, seqIDs, seqTypes, rows, true, 3)
		if err != nil {
			t.Fatal(err)
		}
		if res.NSP == nil || len(res.Masks) != len(rows) {
			t.Fatalf("sequence %d: NSP %v, %d masks", b, res.NSP, len(res.Masks))
		}
		isNext, notNext := softmax2(float64(want[2*b]), float64(want[2*b+1]))
		for i, l := range res.NSP.Logits {
			if math.Abs(float64(l)-float64(want[2*b+i])) > 1e-4 {
				t.Errorf("sequence %d: logit %d = %v, fixture %v", b, i, l, want[2*b+i])
			}
		}
		if math.Abs(res.NSP.IsNext-isNext) > 1e-4 || math.Abs(res.NSP.NotNext-notNext) > 1e-4 {
			t.Errorf("sequence %d: IsNext %.6f NotNext %.6f, fixture softmax %.6f %.6f", b, res.NSP.IsNext, res.NSP.NotNext, isNext, notNext)
		}
	}
}

// TestFillMaskNSP checks when fill-mask answers the next-sentence prediction, and that it and
// NextSentence equal the softmax of bert.Forward's NSP logits for the same encoding.
func TestFillMaskNSP(t *testing.T) {
	f := loadFixture(t)
	noHead := *f.Model
	noHead.NSP = nil
	pair := "happiness sound"
	for _, tc := range []struct {
		name    string
		m       *bert.Model
		text    string
		pair    *string
		wantNSP bool
	}{
		{"pair", f.Model, "no [MASK] happiness", &pair, true},
		{"mask in the pair", f.Model, "no happiness", ptr("[MASK] sound"), true},
		{"empty pair", f.Model, "no [MASK] happiness", ptr(""), true},
		{"no pair", f.Model, "no [MASK] happiness", nil, false},
		{"no NSP head", &noHead, "no [MASK] happiness", &pair, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := FillMask(tc.m, f.Tokenizer, tc.text, tc.pair, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Masks) != 1 {
				t.Fatalf("%d masks", len(res.Masks))
			}
			if (res.NSP != nil) != tc.wantNSP {
				t.Fatalf("NSP %+v, want one: %v", res.NSP, tc.wantNSP)
			}
			next, err := NextSentence(tc.m, f.Tokenizer, tc.text, deref(tc.pair))
			if !tc.wantNSP {
				if tc.pair != nil && err == nil {
					t.Errorf("NextSentence without the NSP head: %+v, want an error", next)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			enc, err := Encode(f.Tokenizer, tc.text, tc.pair, 0)
			if err != nil {
				t.Fatal(err)
			}
			out, err := tc.m.Forward(bert.Batch{B: 1, S: enc.Len(), InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}, bert.Options{NSP: true})
			if err != nil {
				t.Fatal(err)
			}
			isNext, notNext := softmax2(float64(out.NSPLogits.Data[0]), float64(out.NSPLogits.Data[1]))
			for _, got := range []*NSPResult{res.NSP, next} {
				if math.Abs(got.IsNext-isNext) > 1e-6 || math.Abs(got.NotNext-notNext) > 1e-6 || math.Abs(got.IsNext+got.NotNext-1) > 1e-12 {
					t.Errorf("NSP %+v, want IsNext %v NotNext %v", got, isNext, notNext)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
