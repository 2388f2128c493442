package unigram

import (
	"testing"
	"unicode/utf8"
)

// FuzzParseModelProto: any bytes give a model or an error, never a panic,
// and a model that parses round-trips through Marshal.
func FuzzParseModelProto(f *testing.F) {
	f.Add((&ModelProto{ModelType: 1, Pieces: []Piece{{Piece: "<unk>", Type: Unknown}, {Piece: "▁a", Score: -1, Type: Normal}}}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseModelProto(b)
		if err != nil {
			return
		}
		if _, err := ParseModelProto(m.Marshal()); err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		tk, err := FromModelProto(m, ModelOptions{Family: FamilyDeBERTaV2})
		if err != nil {
			return
		}
		tk.Encode("hello [MASK] world", 0)
	})
}

// FuzzEncode: any text encodes with spans inside the text, in order of
// their tokens within each split, and decodes without a panic.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"Hello world", "the [MASK] sat", "日本語 ﬁ 😀", "  a\t\nb  ", "\xff\xfe[CLS]"} {
		f.Add(s, "pair text", 0)
	}
	toks := map[string]*Tokenizer{}
	for _, v := range []string{"albert", "albert_accents", "deberta", "bytes", "never"} {
		toks[v] = loadVariant(f, v)
	}
	f.Fuzz(func(t *testing.T, a, b string, maxLen int) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		maxLen %= 64
		for v, tk := range toks {
			e, err := tk.EncodePair(a, b, maxLen)
			if err != nil {
				if maxLen > 0 && maxLen < 3 {
					continue
				}
				t.Fatalf("%s: %v", v, err)
			}
			for i, o := range e.Offsets {
				text := a
				if e.TypeIDs[i] == 1 {
					text = b
				}
				if o[0] < 0 || o[0] > o[1] || o[1] > len(text) {
					t.Fatalf("%s: token %d span %v outside %q", v, i, o, text)
				}
			}
			if maxLen > 0 && e.Len() > maxLen {
				t.Fatalf("%s: %d tokens, maxLen %d", v, e.Len(), maxLen)
			}
			tk.Decode(e.IDs, false)
		}
	})
}
