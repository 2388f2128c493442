package tokenizer

import (
	"testing"
)

// TestEncoderWordPiece checks the Encoder methods of BERT's tokenizer against
// bert-base-uncased's vocabulary (ids from the vocab.txt line numbers).
func TestEncoderWordPiece(t *testing.T) {
	tk := loadTestTokenizer(t, "bert-base-uncased")
	var e Encoder = tk
	if e.Kind() != KindWordPiece || e.VocabSize() != 30522 {
		t.Errorf("kind %q, vocab size %d", e.Kind(), e.VocabSize())
	}
	want := Specials{CLS: "[CLS]", SEP: "[SEP]", Mask: "[MASK]", Pad: "[PAD]", Unk: "[UNK]"}
	if got := SpecialsOf(e); got != want || MaskToken(e) != "[MASK]" {
		t.Errorf("specials %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		id          int
		token, word string
	}{
		{2829, "brown", "brown"}, {103, "[MASK]", "[MASK]"}, {2075, "##ing", "ing"}, {30522, "", ""}, {-1, "", ""},
	} {
		if got := e.Token(c.id); got != c.token {
			t.Errorf("Token(%d) = %q, want %q", c.id, got, c.token)
		}
		if got := e.Word(c.id); got != c.word {
			t.Errorf("Word(%d) = %q, want %q", c.id, got, c.word)
		}
		if c.token == "" {
			continue
		}
		if id, ok := e.TokenID(c.token); !ok || id != c.id {
			t.Errorf("TokenID(%q) = %d, %v", c.token, id, ok)
		}
	}
	if IsNil(e) || !IsNil((*Tokenizer)(nil)) || !IsNil(nil) {
		t.Error("IsNil")
	}
}

// TestWordPieceDecode checks Decode against HuggingFace's WordPiece decoder
// with cleanup: the answers are those of tokenizers 0.23.2 (npm, the Rust
// core) for bert-base-uncased. "##" is glued on, every other entry gets a
// space before it, and cleanup works entry by entry, so " ." loses its
// space but "isn ' t" keeps them (transformers' own second cleanup of the
// whole text is not the library's).
func TestWordPieceDecode(t *testing.T) {
	tk := loadTestTokenizer(t, "bert-base-uncased")
	for _, c := range []struct {
		text string
		skip bool
		want string
	}{
		{"the brown fox jumps over the lazy dog", true, "the brown fox jumps over the lazy dog"},
		{"the brown fox jumps over the lazy dog", false, "[CLS] the brown fox jumps over the lazy dog [SEP]"},
		{"Unaffable, isn't it? Yes! It's done.", true, "unaffable, isn ' t it? yes! it ' s done."},
		{"I'm sure they've gone; we're here", true, "i ' m sure they ' ve gone ; we ' re here"},
		{"a [MASK] b", true, "a b"},
		{"a [MASK] b", false, "[CLS] a [MASK] b [SEP]"},
	} {
		enc, err := tk.Encode(c.text, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Decode(enc.IDs, c.skip); got != c.want {
			t.Errorf("Decode(%q, %v) = %q, want %q (tokens %q)", c.text, c.skip, got, c.want, enc.Tokens)
		}
	}
	// A leading continuation keeps its "##" (only later entries are glued);
	// unknown ids are skipped.
	if got := tk.Decode([]int{2075, 2829, 99999, 2075}, false); got != "##ing browning" {
		t.Errorf("Decode = %q", got)
	}
}

// TestEncoderBPE checks the Encoder methods of RoBERTa's tokenizer from the
// fixture's slow files (<s> 0, <pad> 1, </s> 2, <unk> 3, <mask> 1000).
func TestEncoderBPE(t *testing.T) {
	tk := loadBPEVariants(t)["slow"]
	var e Encoder = tk
	if e.Kind() != KindBPE || e.VocabSize() != 1001 {
		t.Errorf("kind %q, vocab size %d", e.Kind(), e.VocabSize())
	}
	want := Specials{CLS: "<s>", SEP: "</s>", Mask: "<mask>", Pad: "<pad>", Unk: "<unk>"}
	if got := SpecialsOf(e); got != want {
		t.Errorf("specials %+v, want %+v", got, want)
	}
	enc, err := e.Encode("The cat sat on the <mask>. Café", 0)
	if err != nil {
		t.Fatal(err)
	}
	words := make([]string, len(enc.IDs))
	for i, id := range enc.IDs {
		words[i] = e.Word(id)
	}
	t.Logf("tokens %q words %q", enc.Tokens, words)
	for i, tok := range enc.Tokens {
		w := words[i]
		switch {
		case i == 0 && w != "<s>", i == len(words)-1 && w != "</s>":
			t.Errorf("word %d %q", i, w)
		case tok == " <mask>" && w != "<mask>":
			t.Errorf("mask word %q", w)
		case w == "" || w[0] == ' ' || w[len(w)-1] == ' ':
			t.Errorf("word %d %q of %q has spaces or is empty", i, w, tok)
		}
	}
	// "Ġ" alone reads as nothing: its entry is kept.
	if id, ok := e.TokenID("Ġ"); !ok || e.Word(id) != "Ġ" {
		t.Errorf("Word(Ġ) = %q", e.Word(id))
	}
	if id, ok := e.TokenID("Ġthe"); !ok || e.Word(id) != "the" {
		t.Errorf("Word(Ġthe) = %q (%v)", e.Word(id), ok)
	}
	// "Ã" is the byte 0xC3, the first half of "é" and not UTF-8 alone.
	if id, ok := e.TokenID("Ã"); !ok || e.Word(id) != "<0xC3>" {
		t.Errorf("Word(Ã) = %q (%v)", e.Word(id), ok)
	}
}
