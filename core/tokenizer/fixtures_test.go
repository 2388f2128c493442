package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fixtures were produced by the HuggingFace Rust tokenizers library
// (see testdata/fixtures/README.md).
var fixtureVariants = []string{"uncased", "cased", "uncased_keep_accents", "cased_strip_accents", "uncased_no_chinese"}

type fixtureCase struct {
	ID           string  `json:"id"`
	Text         string  `json:"text"`
	Pair         *string `json:"pair"`
	InputIDs     []int   `json:"input_ids"`
	Tokens       []string
	TokenTypeIDs []int `json:"token_type_ids"`
}

func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var x T
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func loadTestTokenizer(t testing.TB, dir string) *Tokenizer {
	t.Helper()
	tk, err := LoadDir(filepath.Join("testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestFixtures(t *testing.T) {
	cases := readJSONL[fixtureCase](t, filepath.Join("testdata", "fixtures", "cases.jsonl"))
	if len(cases) != 40 {
		t.Fatalf("got %d cases, want 40", len(cases))
	}
	for _, variant := range fixtureVariants {
		t.Run(variant, func(t *testing.T) {
			tk := loadTestTokenizer(t, filepath.Join("fixtures", variant))
			expected := readJSONL[fixtureCase](t, filepath.Join("testdata", "fixtures", variant, "expected.jsonl"))
			if len(expected) != len(cases) {
				t.Fatalf("%d expected lines for %d cases", len(expected), len(cases))
			}
			for i, want := range expected {
				c := cases[i]
				if c.ID != want.ID || c.Text != want.Text {
					t.Fatalf("line %d: case %q does not match expected %q", i+1, c.ID, want.ID)
				}
				var enc Encoding
				var err error
				if c.Pair != nil {
					enc, err = tk.EncodePair(c.Text, *c.Pair, 0)
				} else {
					enc, err = tk.Encode(c.Text, 0)
				}
				if err != nil {
					t.Fatalf("%s: %v", c.ID, err)
				}
				if !slices.Equal(enc.IDs, want.InputIDs) || !slices.Equal(enc.Tokens, want.Tokens) || !slices.Equal(enc.TypeIDs, want.TokenTypeIDs) {
					t.Errorf("%s %q:\n got  %v %v %v\n want %v %v %v", c.ID, c.Text,
						enc.Tokens, enc.IDs, enc.TypeIDs, want.Tokens, want.InputIDs, want.TokenTypeIDs)
				}
				texts := [2]string{c.Text}
				if c.Pair != nil {
					texts[1] = *c.Pair
				}
				checkEncoding(t, tk, texts, enc, 0)
				checkOffsetsMatchText(t, tk, texts, enc)
			}
		})
	}
}

// checkOffsetsMatchText checks that each token was made from the text its
// offsets point at: that text, normalised, starts with the token (without
// "##"). Unknown tokens and special tokens written in the text are compared
// as they are.
func checkOffsetsMatchText(t *testing.T, tk *Tokenizer, texts [2]string, enc Encoding) {
	t.Helper()
	var runesBefore [2][]int
	for k, text := range texts {
		runesBefore[k] = runeCounts(text)
	}
	for i, tok := range enc.Tokens {
		if enc.Special[i] {
			continue
		}
		text := texts[enc.TypeIDs[i]]
		o := enc.Offsets[i]
		src := text[o[0]:o[1]]
		// Character offsets count the code points before the same bytes.
		if c, want := enc.CharOffsets[i], [2]int{runesBefore[enc.TypeIDs[i]][o[0]], runesBefore[enc.TypeIDs[i]][o[1]]}; c != want {
			t.Errorf("%q: token %q at bytes %v: char offsets %v, want %v", text, tok, o, c, want)
		}
		if src == tok {
			continue
		}
		if enc.IDs[i] == tk.UnkID() {
			if strings.TrimSpace(src) == "" {
				t.Errorf("%q: [UNK] at %v covers no text", text, o)
			}
			continue
		}
		got := normalizeForTest(tk, src)
		piece := strings.TrimPrefix(tok, ContinuationPrefix)
		// Pieces made from one original character (a Hangul syllable split
		// into jamo) share its span: the later ones are inside it.
		shared := i > 0 && enc.Offsets[i-1] == o && !enc.Special[i-1]
		if !strings.HasPrefix(got, piece) && !(shared && strings.Contains(got, piece)) {
			t.Errorf("%q: token %d %q at %v: text %q normalises to %q", text, i, tok, o, src, got)
		}
	}
}

// normalizeForTest applies the tokenizer's normaliser to s and drops the
// spaces it leaves.
func normalizeForTest(tk *Tokenizer, s string) string {
	var b strings.Builder
	sc := tk.getScratch()
	defer scratchPool.Put(sc)
	for _, c := range sc.n.normalize(s, 0) {
		if c.r != ' ' {
			b.WriteRune(c.r)
		}
	}
	return b.String()
}

// checkEncoding checks the invariants every encoding keeps: parallel slices,
// [CLS]/[SEP] where they belong, offsets within the text and non-decreasing,
// maxLen respected.
func checkEncoding(t testing.TB, tk *Tokenizer, texts [2]string, enc Encoding, maxLen int) {
	t.Helper()
	n := len(enc.IDs)
	for name, l := range map[string]int{"TypeIDs": len(enc.TypeIDs), "Tokens": len(enc.Tokens), "Offsets": len(enc.Offsets),
		"CharOffsets": len(enc.CharOffsets), "Special": len(enc.Special), "WordIDs": len(enc.WordIDs)} {
		if l != n {
			t.Fatalf("len(%s) = %d, len(IDs) = %d", name, l, n)
		}
	}
	if maxLen > 0 && n > maxLen {
		t.Fatalf("%d tokens, maxLen %d", n, maxLen)
	}
	if n < 2 || enc.IDs[0] != tk.CLSID() || enc.IDs[n-1] != tk.SEPID() || !enc.Special[0] || !enc.Special[n-1] {
		t.Fatalf("encoding does not start with [CLS] and end with [SEP]: %v", enc.Tokens)
	}
	runes := [2]int{utf8.RuneCountInString(texts[0]), utf8.RuneCountInString(texts[1])}
	var prev [2][2]int
	var prevWord = [2]int{-1, -1}
	for i := range n {
		if tk.Vocab().Token(enc.IDs[i]) != enc.Tokens[i] {
			t.Fatalf("token %d: id %d is %q, token is %q", i, enc.IDs[i], tk.Vocab().Token(enc.IDs[i]), enc.Tokens[i])
		}
		typ := enc.TypeIDs[i]
		if typ != 0 && typ != 1 {
			t.Fatalf("token %d: type %d", i, typ)
		}
		if i > 0 && typ < enc.TypeIDs[i-1] {
			t.Fatalf("types not sorted: %v", enc.TypeIDs)
		}
		o, c := enc.Offsets[i], enc.CharOffsets[i]
		if enc.Special[i] {
			if o != [2]int{} || c != [2]int{} || enc.WordIDs[i] != -1 {
				t.Fatalf("special token %d: offsets %v %v word %d", i, o, c, enc.WordIDs[i])
			}
			continue
		}
		text := texts[typ]
		if o[0] < 0 || o[0] >= o[1] || o[1] > len(text) {
			t.Fatalf("token %d %q: offsets %v out of text of %d bytes", i, enc.Tokens[i], o, len(text))
		}
		if c[0] < 0 || c[0] >= c[1] || c[1] > runes[typ] || c[1]-c[0] > o[1]-o[0] {
			t.Fatalf("token %d %q: char offsets %v for byte offsets %v", i, enc.Tokens[i], c, o)
		}
		if o[0] < prev[typ][0] || o[1] < prev[typ][1] {
			t.Fatalf("token %d %q: offsets %v after %v", i, enc.Tokens[i], o, prev[typ])
		}
		if w := enc.WordIDs[i]; w < prevWord[typ] || w > prevWord[typ]+1 {
			t.Fatalf("token %d: word %d after %d", i, w, prevWord[typ])
		}
		prev[typ], prevWord[typ] = o, enc.WordIDs[i]
	}
}

// runeCounts returns, for every byte offset of text, the number of code points
// before it, counted as ranging over the string does; -1 inside a character.
func runeCounts(text string) []int {
	counts := make([]int, len(text)+1)
	n, next := 0, 0
	for i := range len(text) {
		if i != next {
			counts[i] = -1
			continue
		}
		counts[i] = n
		_, size := utf8.DecodeRuneInString(text[i:])
		next += size
		n++
	}
	counts[len(text)] = n
	return counts
}
