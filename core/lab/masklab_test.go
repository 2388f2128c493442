package lab

import (
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/train"
)

// TestMaskLabIsTheMasker checks the lab against core/train's Masker run directly, and the
// shares of its kinds over many seeds (80/10/10 of 15%).
func TestMaskLabIsTheMasker(t *testing.T) {
	f := loadFixture(t)
	tok := f.Tokenizer
	text := "the quick brown fox jumps over the lazy dog while the cat sat on the mat and watched"
	var counts = map[string]int{}
	for seed := uint64(0); seed < 300; seed++ {
		for _, ww := range []bool{false, true} {
			r, err := MaskLab(tok, text, 512, seed, ww)
			if err != nil {
				t.Fatal(err)
			}
			enc, _ := tok.Encode(text, 512)
			cfg := train.DefaultMasking(enc.Len())
			cfg.WholeWord = ww
			m, _ := train.NewMasker(tok, cfg)
			input, labels := m.Mask(enc.IDs, MaskLabRNG(seed))
			var chosen []int
			for i, l := range labels {
				if l != bert.IgnoreIndex {
					chosen = append(chosen, i)
				}
				if r.Shown[i] != tok.Vocab().Token(input[i]) {
					t.Fatalf("seed %d: shown %q at %d, masker %q", seed, r.Shown[i], i, tok.Vocab().Token(input[i]))
				}
			}
			if len(chosen) != len(r.Chosen) {
				t.Fatalf("seed %d: chosen %v, masker %v", seed, r.Chosen, chosen)
			}
			for i := range chosen {
				if chosen[i] != r.Chosen[i] {
					t.Fatalf("seed %d: chosen %v, masker %v", seed, r.Chosen, chosen)
				}
			}
			if r.Maskable != enc.Len()-2 || len(r.Chosen) != r.NumToPredict || r.Kinds[0] != engine.KindSpecial {
				t.Fatalf("seed %d: maskable %d chosen %d of %d kinds[0] %q", seed, r.Maskable, len(r.Chosen), r.NumToPredict, r.Kinds[0])
			}
			for _, i := range r.Chosen {
				counts[r.Kinds[i]]++
			}
		}
	}
	n := float64(counts[engine.KindMask] + counts[engine.KindRandom] + counts[engine.KindSame])
	if p := float64(counts[engine.KindMask]) / n; math.Abs(p-0.8) > 0.04 {
		t.Errorf("[MASK] share %.3f, want about 0.8 (%v)", p, counts)
	}
	if p := float64(counts[engine.KindRandom]) / n; math.Abs(p-0.1) > 0.03 {
		t.Errorf("random share %.3f, want about 0.1 (%v)", p, counts)
	}
}

func TestNSPPairs(t *testing.T) {
	f := loadFixture(t)
	pairs, err := NSPPairs(f.Tokenizer, 7, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 8 {
		t.Fatalf("%d pairs", len(pairs))
	}
	next := 0
	for _, p := range pairs {
		if p.Tokens[0] != "[CLS]" || p.Tokens[len(p.Tokens)-1] != "[SEP]" || len(p.Tokens) > NSPMaxSeq || len(p.Segments) != len(p.Tokens) {
			t.Fatalf("pair %v", p)
		}
		if p.IsNext {
			next++
		}
	}
	again, _ := NSPPairs(f.Tokenizer, 7, 8)
	for i := range again {
		if len(again[i].Tokens) != len(pairs[i].Tokens) || again[i].IsNext != pairs[i].IsNext {
			t.Fatal("the same seed should give the same pairs")
		}
	}
	t.Logf("%d of %d IsNext", next, len(pairs))
}
