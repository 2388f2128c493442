package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

var (
	fuzzBPEOnce  sync.Once
	fuzzBPE      map[string]*BPE
	fuzzBPENames = []string{"roberta", "roberta_prefix", "gpt2", "slow", "odd_unk", "odd_drop"}
)

// bpeForFuzz loads the fixture's tokenizers once.
func bpeForFuzz(t testing.TB) map[string]*BPE {
	fuzzBPEOnce.Do(func() { fuzzBPE = loadBPEVariants(t) })
	if len(fuzzBPE) != len(fuzzBPENames) {
		t.Fatal("tokenizers failed to load")
	}
	return fuzzBPE
}

// FuzzBPEEncode checks that any text, valid UTF-8 or not, encodes without
// panic into an Encoding whose parallel slices agree, whose spans lie in
// the text with byte and code-point offsets of the same characters, that
// keeps to maxLen, and that GPT-2's tokenizer decodes back to the text.
func FuzzBPEEncode(f *testing.F) {
	f.Add("Hello  world\n", "", 0, uint8(0))
	f.Add("a <mask> b<mask>", "c <s> d", 7, uint8(1))
	f.Add("é😀 日本語 don't", "x", 3, uint8(2))
	f.Add("\xff\xfe a\xe2\x82", "", 0, uint8(3))
	f.Fuzz(func(t *testing.T, a, b string, maxLen int, variant uint8) {
		tk := bpeForFuzz(t)[fuzzBPENames[int(variant)%len(fuzzBPENames)]]
		if len(a) > 4000 || len(b) > 4000 || maxLen > 10000 {
			return
		}
		pair := variant&4 != 0
		var enc Encoding
		var err error
		if pair {
			enc, err = tk.EncodePair(a, b, maxLen)
		} else {
			enc, err = tk.Encode(a, maxLen)
		}
		if err != nil {
			if maxLen > 0 && maxLen < tk.post.added(pair) {
				return
			}
			t.Fatal(err)
		}
		n := len(enc.IDs)
		if len(enc.TypeIDs) != n || len(enc.Tokens) != n || len(enc.Offsets) != n || len(enc.CharOffsets) != n ||
			len(enc.Special) != n || len(enc.WordIDs) != n {
			t.Fatalf("slices of different lengths: %+v", enc)
		}
		if maxLen > 0 && n > maxLen {
			t.Fatalf("%d tokens, maxLen %d", n, maxLen)
		}
		specials := 0
		for k := range n {
			if enc.Special[k] {
				specials++
				continue
			}
			text := a
			if pair && ((tk.post.kind == postRoberta && specials >= 3) || (tk.post.kind != postRoberta && enc.TypeIDs[k] == 1)) {
				text = b
			}
			o, co := enc.Offsets[k], enc.CharOffsets[k]
			if o[0] < 0 || o[0] > o[1] || o[1] > len(text) {
				t.Fatalf("%+q token %d: offsets %v out of range", text, k, o)
			}
			if c := utf8.RuneCountInString(text[:o[0]]); c != co[0] && utf8.ValidString(text) {
				t.Fatalf("%+q token %d: byte start %d is code point %d, char offset %d", text, k, o[0], c, co[0])
			}
			if enc.IDs[k] < 0 || enc.IDs[k] >= tk.VocabSize() {
				t.Fatalf("id %d out of range", enc.IDs[k])
			}
		}
		if tk == fuzzBPE["gpt2"] && !pair && maxLen <= 0 && utf8.ValidString(a) && !strings.Contains(a, "<|endoftext|>") {
			if got := tk.Decode(enc.IDs, false); got != a {
				t.Fatalf("Decode(Encode(%+q)) = %+q", a, got)
			}
		}
	})
}

// FuzzLoadBPE checks that any tokenizer.json loads or fails with an error,
// never a panic, and that what loads can encode.
func FuzzLoadBPE(f *testing.F) {
	f.Add([]byte(minimalBPE))
	if data, err := os.ReadFile(filepath.Join("testdata", "bpe", "gpt2.tokenizer.json")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(strings.Replace(minimalBPE, `"lstrip": false`, `"lstrip": true, "rstrip": true`, 1)))
	f.Add([]byte(strings.Replace(minimalBPE, `"unk_token": null`, `"unk_token": "a", "fuse_unk": true`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := LoadBPE(data)
		if err != nil {
			return
		}
		for _, text := range []string{"ab a b", "<s>ab <s> ", "é\xff", ""} {
			if _, err := tk.EncodePair(text, text, 0); err != nil {
				t.Fatal(err)
			}
		}
		tk.Decode([]int{0, 1, 2, 3, -1, 1 << 30}, true)
	})
}

// FuzzLoadBPEFiles does the same for vocab.json and merges.txt.
func FuzzLoadBPEFiles(f *testing.F) {
	f.Add([]byte(`{"a": 0, "b": 1, "ab": 2, "<s>": 3}`), []byte("#version: 0.2\na b\n"))
	f.Add([]byte(`{"Ġ": 0, "a": 1, "Ġa": 2}`), []byte("Ġ a\r\n"))
	f.Add([]byte(`{"a": 0, "a": 1}`), []byte("a a\n"))
	f.Fuzz(func(t *testing.T, vocab, merges []byte) {
		tk, err := LoadBPEFiles(vocab, merges, RobertaOptions())
		if err != nil {
			return
		}
		for _, text := range []string{"ab a b", "<s>ab <mask> ", "é\xff", ""} {
			if _, err := tk.EncodePair(text, text, 0); err != nil {
				t.Fatal(err)
			}
		}
	})
}
