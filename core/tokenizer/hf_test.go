package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// hfCase is one input encoded by the HuggingFace tokenizers library (see
// testdata/hf/README.md): offsets are in code points, words and special as
// that library reports them.
type hfCase struct {
	Variant  string   `json:"v"`
	A        string   `json:"a"`
	Pair     *string  `json:"pair"`
	MaxLen   int      `json:"maxLen"`
	IDs      []int    `json:"ids"`
	Tokens   []string `json:"tokens"`
	Types    []int    `json:"types"`
	Offsets  [][2]int `json:"offsets"`
	Words    []*int   `json:"words"`
	Special  []int    `json:"special"`
	Overflow int      `json:"overflow"`
}

// TestHuggingFaceCases compares everything an Encoding holds with what the
// HuggingFace library gave for random inputs (control characters, marks in
// and out of canonical order, characters whose Unicode properties changed
// between versions, special tokens written in the text, truncated pairs).
// HF_CASES names another file of such cases to check instead.
func TestHuggingFaceCases(t *testing.T) {
	path := filepath.Join("testdata", "hf", "cases.jsonl")
	if p := os.Getenv("HF_CASES"); p != "" {
		path = p
	}
	tks := map[string]*Tokenizer{"bert-base-uncased": loadTestTokenizer(t, "bert-base-uncased")}
	for _, v := range fixtureVariants {
		tks[v] = loadTestTokenizer(t, filepath.Join("fixtures", v))
	}
	cases := readJSONL[hfCase](t, path)
	failed := 0
	for i, c := range cases {
		tk := tks[c.Variant]
		if tk == nil {
			t.Fatalf("case %d: unknown variant %q", i, c.Variant)
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
		checkEncoding(t, tk, texts, enc, c.MaxLen)
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
		var diff string
		switch {
		case !slices.Equal(enc.Tokens, c.Tokens) || !slices.Equal(enc.IDs, c.IDs):
			diff = fmt.Sprintf("tokens\n got  %q %v\n want %q %v", enc.Tokens, enc.IDs, c.Tokens, c.IDs)
		case !slices.Equal(enc.TypeIDs, c.Types):
			diff = fmt.Sprintf("types %v, want %v", enc.TypeIDs, c.Types)
		case !slices.Equal(enc.CharOffsets, c.Offsets):
			diff = fmt.Sprintf("offsets\n got  %v\n want %v", enc.CharOffsets, c.Offsets)
		case !slices.Equal(enc.WordIDs, words):
			diff = fmt.Sprintf("words\n got  %v\n want %v", enc.WordIDs, words)
		case !slices.Equal(enc.Special, special):
			diff = fmt.Sprintf("special %v, want %v", enc.Special, special)
		case enc.Truncated != (c.Overflow > 0):
			diff = fmt.Sprintf("truncated %v, want %v", enc.Truncated, c.Overflow > 0)
		}
		if diff != "" {
			failed++
			if failed <= 10 {
				t.Errorf("case %d (%s, maxLen %d) %+q / %+q: %s", i, c.Variant, c.MaxLen, texts[0], texts[1], diff)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d cases differ", failed, len(cases))
	}
}
