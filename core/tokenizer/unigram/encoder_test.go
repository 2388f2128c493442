package unigram

import (
	"testing"

	"github.com/bertlab/bertlab/core/tokenizer"
)

// TestEncoder checks the Encoder methods on the fixture's ALBERT and
// DeBERTa-v3 pipelines (testdata/README.md gives their special ids) and on
// the .model file through ALBERT's recipe.
func TestEncoder(t *testing.T) {
	for _, c := range []struct {
		variant string
		want    tokenizer.Specials
		ids     [5]int // cls, sep, mask, pad, unk
		size    int    // len(model.vocab) of the tokenizer.json, the pieces of the .model
	}{
		{"albert", tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "[MASK]", Pad: "<pad>", Unk: "<unk>"}, [5]int{2, 3, 4, 0, 1}, 2016},
		{"spiece", tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "[MASK]", Pad: "<pad>", Unk: "<unk>"}, [5]int{2, 3, 4, 0, 1}, 2000},
		{"deberta", tokenizer.Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "[MASK]", Pad: "[PAD]", Unk: "[UNK]"}, [5]int{1, 2, -1, 0, 3}, -1},
	} {
		t.Run(c.variant, func(t *testing.T) {
			var e tokenizer.Encoder = loadVariant(t, c.variant)
			if e.Kind() != tokenizer.KindUnigram {
				t.Errorf("kind %q", e.Kind())
			}
			if got := tokenizer.SpecialsOf(e); got != c.want {
				t.Errorf("specials %+v, want %+v", got, c.want)
			}
			got := [5]int{e.CLSID(), e.SEPID(), e.MaskID(), e.PadID(), e.UnkID()}
			if c.ids[2] < 0 { // DeBERTa's [MASK] comes after the last piece
				c.ids[2] = e.VocabSize() - 1
			}
			if got != c.ids {
				t.Errorf("ids %v, want %v", got, c.ids)
			}
			if c.size > 0 && e.VocabSize() != c.size {
				t.Errorf("vocab size %d, want %d", e.VocabSize(), c.size)
			}
			enc, err := e.Encode("the cat sat on the [MASK].", 0)
			if err != nil {
				t.Fatal(err)
			}
			if enc.IDs[0] != e.CLSID() || enc.IDs[len(enc.IDs)-1] != e.SEPID() {
				t.Errorf("ids %v", enc.IDs)
			}
			for i, id := range enc.IDs {
				w, tok := e.Word(id), enc.Tokens[i]
				want := tok
				if len(tok) > len("▁") && tok[:len("▁")] == "▁" {
					want = tok[len("▁"):]
				}
				if w != want {
					t.Errorf("Word(%d) = %q for %q, want %q", id, w, tok, want)
				}
				if tid, ok := e.TokenID(e.Token(id)); !ok || tid != id {
					t.Errorf("TokenID(Token(%d)) = %d, %v", id, tid, ok)
				}
			}
		})
	}
	// A lone "▁" reads as nothing: the piece is kept. A byte piece reads as
	// its character.
	e := loadVariant(t, "bytes")
	if id, ok := e.TokenID("▁"); ok && e.Word(id) != "▁" {
		t.Errorf("Word(▁) = %q", e.Word(id))
	}
	if id, ok := e.TokenID("<0x41>"); !ok || e.Word(id) != "A" {
		t.Errorf("Word(<0x41>) = %q (%v)", e.Word(id), ok)
	}
}

// TestIsNil: a nil *Tokenizer of this package held by an Encoder is nil.
func TestIsNil(t *testing.T) {
	var u *Tokenizer
	if !tokenizer.IsNil(u) || tokenizer.IsNil(loadVariant(t, "albert")) {
		t.Error("IsNil")
	}
}
