package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// bpeCase is one input encoded and decoded by the HuggingFace tokenizers
// library (see testdata/bpe/README.md).
type bpeCase struct {
	hfCase
	Decoded     string `json:"decoded"`
	DecodedSkip string `json:"decodedSkip"`
}

// bpeFixture returns the folder of the BPE fixture: testdata/bpe, or
// BPE_FIXTURE, another folder that scripts/bperef/gen.js wrote (such as one
// made from the merges of a real model).
func bpeFixture() string {
	if d := os.Getenv("BPE_FIXTURE"); d != "" {
		return d
	}
	return filepath.Join("testdata", "bpe")
}

// loadBPEVariants loads the fixture's tokenizers: one per tokenizer.json,
// and "slow", RoBERTa's from vocab.json and merges.txt.
func loadBPEVariants(t testing.TB) map[string]*BPE {
	t.Helper()
	dir := bpeFixture()
	tks := map[string]*BPE{}
	for _, v := range []string{"roberta", "roberta_prefix", "gpt2", "odd_unk", "odd_drop"} {
		data, err := os.ReadFile(filepath.Join(dir, v+".tokenizer.json"))
		if err != nil {
			t.Fatal(err)
		}
		if tks[v], err = LoadBPE(data); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	vocab, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	merges, err := os.ReadFile(filepath.Join(dir, "merges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if tks["slow"], err = LoadBPEFiles(vocab, merges, RobertaOptions()); err != nil {
		t.Fatal(err)
	}
	return tks
}

// TestBPEHuggingFaceCases compares everything an Encoding holds, and the
// decoded text, with what the HuggingFace library gave for hard cases and
// random inputs. RoBERTa's cases are checked again with the tokenizer built
// from the slow files. BPE_CASES names another file of such cases for the
// same tokenizers; BPE_FIXTURE another fixture folder.
func TestBPEHuggingFaceCases(t *testing.T) {
	path := filepath.Join(bpeFixture(), "cases.jsonl")
	if p := os.Getenv("BPE_CASES"); p != "" {
		path = p
	}
	tks := loadBPEVariants(t)
	cases := readJSONL[bpeCase](t, path)
	failed, n := 0, 0
	for i, c := range cases {
		variants := []string{c.Variant}
		if c.Variant == "roberta" {
			variants = append(variants, "slow")
		}
		for _, v := range variants {
			n++
			tk := tks[v]
			if tk == nil {
				t.Fatalf("case %d: unknown variant %q", i, v)
			}
			var enc Encoding
			var err error
			texts := [2]string{c.A}
			if c.Pair != nil {
				texts[1] = *c.Pair
				enc, err = tk.EncodePair(c.A, *c.Pair, c.MaxLen)
			} else {
				enc, err = tk.Encode(c.A, c.MaxLen)
			}
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			want := c.hfCase
			if enc.Truncated && c.Overflow == 0 && len(enc.IDs) < len(tk.Tokenize(c.A))+t2len(tk, c.Pair)+tk.post.added(c.Pair != nil) {
				// HuggingFace stops tokenizing once it holds maxLen tokens
				// and then reports no overflow when exactly maxLen are left;
				// Truncated says that text was dropped all the same.
				want.Overflow = 1
			}
			if diff := compareHF(enc, &want); diff != "" {
				failed++
				if failed <= 10 {
					t.Errorf("case %d (%s, maxLen %d) %+q / %+q: %s", i, v, c.MaxLen, texts[0], texts[1], diff)
				}
				continue
			}
			checkBPEOffsets(t, tk, texts, enc)
			if got := tk.Decode(enc.IDs, false); got != c.Decoded {
				failed++
				t.Errorf("case %d (%s): Decode = %+q, want %+q", i, v, got, c.Decoded)
			}
			if got := tk.Decode(enc.IDs, true); got != c.DecodedSkip {
				failed++
				t.Errorf("case %d (%s): Decode(skip special) = %+q, want %+q", i, v, got, c.DecodedSkip)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d encodings differ", failed, n)
	}
}

// compareHF returns how enc differs from the library's answer, or "".
func compareHF(enc Encoding, c *hfCase) string {
	words := make([]int, len(c.Words))
	for k, w := range c.Words {
		words[k] = -1
		if w != nil {
			words[k] = *w
		}
	}
	special := make([]bool, len(c.Special))
	for k, s := range c.Special {
		special[k] = s == 1
	}
	switch {
	case !slices.Equal(enc.Tokens, c.Tokens) || !slices.Equal(enc.IDs, c.IDs):
		return fmt.Sprintf("tokens\n got  %q %v\n want %q %v", enc.Tokens, enc.IDs, c.Tokens, c.IDs)
	case !slices.Equal(enc.TypeIDs, c.Types):
		return fmt.Sprintf("types %v, want %v", enc.TypeIDs, c.Types)
	case !slices.Equal(enc.CharOffsets, c.Offsets):
		return fmt.Sprintf("offsets\n got  %v\n want %v", enc.CharOffsets, c.Offsets)
	case !slices.Equal(enc.WordIDs, words):
		return fmt.Sprintf("words\n got  %v\n want %v", enc.WordIDs, words)
	case !slices.Equal(enc.Special, special):
		return fmt.Sprintf("special %v, want %v", enc.Special, special)
	case enc.Truncated != (c.Overflow > 0):
		return fmt.Sprintf("truncated %v, want %v", enc.Truncated, c.Overflow > 0)
	}
	return ""
}

// checkBPEOffsets checks that the byte offsets are the code-point offsets
// in bytes: text[Start:End] holds CharEnd-CharStart code points.
func checkBPEOffsets(t *testing.T, tk *BPE, texts [2]string, enc Encoding) {
	t.Helper()
	specials := 0
	for k := range enc.IDs {
		if enc.Special[k] {
			specials++
			continue
		}
		// RoBERTa's second text follows <s> A </s></s>; elsewhere its type
		// is 1.
		text := texts[0]
		if (tk.post.kind == postRoberta && specials >= 3) || (tk.post.kind != postRoberta && enc.TypeIDs[k] == 1) {
			text = texts[1]
		}
		o, co := enc.Offsets[k], enc.CharOffsets[k]
		if o[0] < 0 || o[0] > o[1] || o[1] > len(text) {
			t.Errorf("%+q token %d: offsets %v out of range", text, k, o)
			continue
		}
		if got := len([]rune(text[:o[0]])); got != co[0] {
			t.Errorf("%+q token %d: byte start %d is code point %d, want %d", text, k, o[0], got, co[0])
		}
		if got := len([]rune(text[:o[1]])); got != co[1] {
			t.Errorf("%+q token %d: byte end %d is code point %d, want %d", text, k, o[1], got, co[1])
		}
	}
}

// t2len returns the number of tokens of the second text of a pair, 0 for
// none.
func t2len(tk *BPE, pair *string) int {
	if pair == nil {
		return 0
	}
	return len(tk.Tokenize(*pair))
}
