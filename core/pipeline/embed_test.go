package pipeline

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

func TestEmbedPooling(t *testing.T) {
	f := loadFixture(t)
	m, tok := f.Model, f.Tokenizer
	texts := []string{"paris is a city", "", strings.Repeat("long ", 60)}
	H, P := m.Config.HiddenSize, m.Config.MaxPositionEmbeddings
	for _, pooling := range []Pooling{PoolCLS, PoolMean} {
		res, err := Embed(m, tok, texts, pooling)
		if err != nil {
			t.Fatal(err)
		}
		if res.Pooling != pooling || res.Dim != H || len(res.Vectors) != len(texts) || len(res.Truncated) != len(texts) {
			t.Fatalf("%s: header %+v", pooling, res)
		}
		for i, text := range texts {
			enc, _ := tok.Encode(text, P)
			S := enc.Len()
			out, err := m.Forward(bert.Batch{B: 1, S: S, InputIDs: enc.IDs}, bert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			hid := out.Hidden.Data // [1, S, H]
			for j := 0; j < H; j++ {
				want := float64(hid[j])
				if pooling == PoolMean {
					want = 0
					for s := 0; s < S; s++ {
						want += float64(hid[s*H+j])
					}
					want /= float64(S)
				}
				if got := float64(res.Vectors[i][j]); math.Abs(got-want) > 1e-6 {
					t.Fatalf("%s text %d dim %d: %v, want %v", pooling, i, j, got, want)
				}
			}
			if res.Truncated[i] != (i == 2) {
				t.Errorf("%s text %d: truncated %v", pooling, i, res.Truncated[i])
			}
		}
	}
}

// TestEmbedIndependentOfBatch: a text's vector does not depend on the other texts of the request.
func TestEmbedIndependentOfBatch(t *testing.T) {
	f := loadFixture(t)
	alone, err := Embed(f.Model, f.Tokenizer, []string{"cats"}, PoolMean)
	if err != nil {
		t.Fatal(err)
	}
	with, err := Embed(f.Model, f.Tokenizer, []string{strings.Repeat("dogs ", 20), "cats"}, PoolMean)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone.Vectors[0], with.Vectors[1]) {
		t.Error("the vector of a text changed with the other texts of the batch")
	}
}

func TestParsePooling(t *testing.T) {
	for in, want := range map[string]Pooling{"": PoolCLS, "cls": PoolCLS, "mean": PoolMean} {
		if got, err := ParsePooling(in); err != nil || got != want {
			t.Errorf("ParsePooling(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"max", "CLS", "pooler", " mean"} {
		if _, err := ParsePooling(in); err == nil {
			t.Errorf("ParsePooling(%q): no error", in)
		}
	}
	f := loadFixture(t)
	if _, err := Embed(f.Model, f.Tokenizer, []string{"x"}, "max"); err == nil {
		t.Error("Embed with pooling max: no error")
	}
}
