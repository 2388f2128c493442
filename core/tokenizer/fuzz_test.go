package tokenizer

import (
	"bytes"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

var (
	fuzzTokenizersOnce sync.Once
	fuzzTokenizers     []*Tokenizer
)

// tokenizersForFuzz loads the five fixture variants and bert-base-uncased once.
func tokenizersForFuzz(t testing.TB) []*Tokenizer {
	fuzzTokenizersOnce.Do(func() {
		for _, v := range fixtureVariants {
			fuzzTokenizers = append(fuzzTokenizers, loadTestTokenizer(t, filepath.Join("fixtures", v)))
		}
		fuzzTokenizers = append(fuzzTokenizers, loadTestTokenizer(t, "bert-base-uncased"))
	})
	if len(fuzzTokenizers) != len(fixtureVariants)+1 {
		t.Fatal("tokenizers failed to load")
	}
	return fuzzTokenizers
}

func FuzzReadVocab(f *testing.F) {
	f.Add([]byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##b\n"))
	f.Add([]byte("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]"))
	f.Add([]byte("a\n\nb\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadVocab(bytes.NewReader(data))
		if err != nil {
			return
		}
		if v.Len() == 0 {
			t.Fatal("empty vocab without error")
		}
		for id := range v.Len() {
			if got, ok := v.ID(v.Token(id)); !ok || got != id {
				t.Fatalf("ID(Token(%d)) = %d, %v", id, got, ok)
			}
		}
		var buf bytes.Buffer
		if _, err := v.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadVocab(&buf)
		if err != nil {
			t.Fatalf("reading back what WriteTo wrote: %v", err)
		}
		if !slices.Equal(back.tokens, v.tokens) {
			t.Fatalf("round trip changed the tokens: %q -> %q", v.tokens, back.tokens)
		}
		// A vocab that names the special tokens must tokenize anything,
		// including its own entries.
		tk, err := New(v, DefaultConfig())
		if err != nil {
			return
		}
		for _, text := range append([]string{"a b", "[CLS]x[SEP]"}, v.tokens[:min(len(v.tokens), 20)]...) {
			enc, err := tk.Encode(text, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkEncoding(t, tk, [2]string{text}, enc, 0)
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"do_lower_case": false, "strip_accents": true, "model_max_length": 512}`))
	f.Add([]byte(`{"mask_token": {"content": "[MASK]", "lstrip": true}, "model_max_length": 1e30}`))
	f.Add([]byte(`{"unk_token": null, "tokenize_chinese_chars": false}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if c.ModelMaxLength < 0 {
			t.Fatalf("negative ModelMaxLength %d", c.ModelMaxLength)
		}
		out, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("parsing back %s: %v", out, err)
		}
		if !configEqual(back, c) {
			t.Fatalf("round trip through %s: %+v -> %+v", out, c, back)
		}
		v := tokenizersForFuzz(t)[0].Vocab()
		tk, err := New(v, c)
		if err != nil {
			return
		}
		text := "Héllo [MASK] 中文 wörld!"
		enc, err := tk.Encode(text, c.ModelMaxLength)
		if err != nil {
			if c.ModelMaxLength >= 2 {
				t.Fatal(err)
			}
			return
		}
		checkEncoding(t, tk, [2]string{text}, enc, c.ModelMaxLength)
	})
}

func FuzzEncode(f *testing.F) {
	f.Add("Hello, world!", "Second one!", 0, uint8(0))
	f.Add("Café naïve 中文 résumé", "e\u0301\u0301 \u0301 İ", 9, uint8(1))
	f.Add("[CLS] hi [SEP][MASK]x[mask]", "\x00\ufffd\u200b\u2028 \xff", 5, uint8(5))
	f.Fuzz(func(t *testing.T, a, b string, maxLen int, variant uint8) {
		tks := tokenizersForFuzz(t)
		tk := tks[int(variant)%len(tks)]
		maxLen %= 1024

		ta, tb := tk.Tokenize(a), tk.Tokenize(b)
		enc, err := tk.Encode(a, maxLen)
		if maxLen > 0 && maxLen < 2 {
			if err == nil {
				t.Fatalf("maxLen %d: no error", maxLen)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			checkEncoding(t, tk, [2]string{a}, enc, maxLen)
			checkOffsetsMatchText(t, tk, [2]string{a}, enc)
			if want := maxLen > 0 && len(ta) > maxLen-2; enc.Truncated != want {
				t.Fatalf("Truncated = %v with %d tokens, maxLen %d", enc.Truncated, len(ta), maxLen)
			}
			if !enc.Truncated && len(enc.IDs) != len(ta)+2 {
				t.Fatalf("%d ids for %d tokens", len(enc.IDs), len(ta))
			}
		}

		pair, err := tk.EncodePair(a, b, maxLen)
		if maxLen > 0 && maxLen < 3 {
			if err == nil {
				t.Fatalf("pair maxLen %d: no error", maxLen)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkEncoding(t, tk, [2]string{a, b}, pair, maxLen)
		checkOffsetsMatchText(t, tk, [2]string{a, b}, pair)
		if want := maxLen > 0 && len(ta)+len(tb) > maxLen-3; pair.Truncated != want {
			t.Fatalf("pair Truncated = %v with %d+%d tokens, maxLen %d", pair.Truncated, len(ta), len(tb), maxLen)
		}
		// What is kept of each text is a prefix of its tokens.
		var ia, ib []int
		for i, id := range pair.IDs {
			switch {
			case pair.Special[i]:
			case pair.TypeIDs[i] == 0:
				ia = append(ia, id)
			default:
				ib = append(ib, id)
			}
		}
		if len(ia) > len(ta) || len(ib) > len(tb) {
			t.Fatalf("pair holds %d+%d tokens of %d+%d", len(ia), len(ib), len(ta), len(tb))
		}
		for i := range ia {
			if ia[i] != ta[i].ID {
				t.Fatalf("first text token %d: %d, Tokenize gives %d", i, ia[i], ta[i].ID)
			}
		}
		for i := range ib {
			if ib[i] != tb[i].ID {
				t.Fatalf("second text token %d: %d, Tokenize gives %d", i, ib[i], tb[i].ID)
			}
		}
	})
}
