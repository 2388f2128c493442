package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func TestByteChars(t *testing.T) {
	for _, c := range []struct {
		b    byte
		want rune
	}{
		{' ', 'Ġ'}, {'\n', 'Ċ'}, {'\t', 'ĉ'}, {0, 'Ā'}, {'a', 'a'}, {'!', '!'}, {'~', '~'},
		{0x7F, 'ġ'}, {0xA0, 'ł'}, {0xA1, '¡'}, {0xAD, 'Ń'}, {0xFF, 'ÿ'},
	} {
		if got := byteChars[c.b]; got != c.want {
			t.Errorf("byteChars[%#x] = %q, want %q", c.b, got, c.want)
		}
	}
	if len(charBytes) != 256 {
		t.Fatalf("%d distinct characters, want 256", len(charBytes))
	}
	for b := range 256 {
		if charBytes[byteChars[b]] != byte(b) {
			t.Errorf("byte %#x does not map back", b)
		}
	}
}

func TestSplitGPT2(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a <mask>", []string{"a", " <", "mask", ">"}},
		{"Hello  world\n\n  x", []string{"Hello", " ", " world", "\n\n ", " x"}},
		{"don't I'LL 's", []string{"don", "'t", " I", "'", "LL", " '", "s"}},
		{"we're they've I'm you'll he'd", []string{"we", "'re", " they", "'ve", " I", "'m", " you", "'ll", " he", "'d"}},
		{"é😀 12 3", []string{"é", "😀", " 12", " 3"}},
		{" \t a", []string{" \t", " a"}},
		{"   ", []string{"   "}},
		{"x  ", []string{"x", "  "}},
		{"a\n", []string{"a", "\n"}},
		{"\tb", []string{"\t", "b"}},
		{"½²٣ 3", []string{"½²٣", " 3"}},
		{"日本語 한국어", []string{"日本語", " 한국어"}},
		{"\u3000\u3000x", []string{"\u3000", "\u3000", "x"}},
		{"\xff\xfeab", []string{"\xff\xfe", "ab"}},
		{"a\u200db", []string{"a", "\u200d", "b"}},
	} {
		var got []string
		from := 0
		for _, end := range splitGPT2(nil, c.in) {
			got = append(got, c.in[from:end])
			from = end
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("splitGPT2(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}

func TestLossyUTF8(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"\xe2\x82A", "\uFFFDA"},
		{"\xff\xfe", "\uFFFD\uFFFD"},
		{"\xf0\x9f\x98", "\uFFFD"},
		{"\xf0\x9f\x98\x80\xf0", "😀\uFFFD"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
		{"a\x80b", "a\uFFFDb"},
	} {
		if got := lossyUTF8([]byte(c.in)); got != c.want {
			t.Errorf("lossyUTF8(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}

// TestBPEMask checks RoBERTa's mask token: it takes the space before it,
// so that "a <mask>" and "a<mask>" give the same ids.
func TestBPEMask(t *testing.T) {
	tk := loadBPEVariants(t)["roberta"]
	for _, c := range []struct {
		text    string
		tokens  []string
		offsets [][2]int
	}{
		{"a <mask>", []string{"<s>", "a", " <mask>", "</s>"}, [][2]int{{0, 0}, {0, 1}, {2, 8}, {0, 0}}},
		{"a<mask>", []string{"<s>", "a", "<mask>", "</s>"}, [][2]int{{0, 0}, {0, 1}, {1, 7}, {0, 0}}},
		{"é  <mask>", []string{"<s>", "Ã©", "  <mask>", "</s>"}, [][2]int{{0, 0}, {0, 2}, {4, 10}, {0, 0}}},
	} {
		enc, err := tk.Encode(c.text, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(enc.Tokens, c.tokens) || !slices.Equal(enc.Offsets, c.offsets) {
			t.Errorf("%q: tokens %q offsets %v, want %q %v", c.text, enc.Tokens, enc.Offsets, c.tokens, c.offsets)
		}
		if enc.IDs[2] != tk.MaskID() {
			t.Errorf("%q: id %d, want the mask %d", c.text, enc.IDs[2], tk.MaskID())
		}
	}
	if tk.CLSID() != 0 || tk.PadID() != 1 || tk.SEPID() != 2 || tk.UnkID() != 3 || tk.MaskID() != 1000 {
		t.Errorf("special ids %d %d %d %d %d", tk.CLSID(), tk.PadID(), tk.SEPID(), tk.UnkID(), tk.MaskID())
	}
}

func TestBPEMaxLen(t *testing.T) {
	tks := loadBPEVariants(t)
	for _, c := range []struct {
		variant string
		pair    bool
		maxLen  int
		ok      bool
	}{
		{"roberta", false, 1, false}, {"roberta", false, 2, true}, {"roberta", true, 3, false}, {"roberta", true, 4, true},
		{"gpt2", false, 1, true}, {"gpt2", true, 1, true},
	} {
		var err error
		if c.pair {
			_, err = tks[c.variant].EncodePair("a b", "c", c.maxLen)
		} else {
			_, err = tks[c.variant].Encode("a b", c.maxLen)
		}
		if (err == nil) != c.ok {
			t.Errorf("%s pair=%v maxLen %d: error %v, want ok=%v", c.variant, c.pair, c.maxLen, err, c.ok)
		}
	}
}

// minimalBPE is a small tokenizer.json that the error cases change.
const minimalBPE = `{
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": 3, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "RobertaProcessing", "sep": ["<s>", 3], "cls": ["<s>", 3], "trim_offsets": true, "add_prefix_space": false},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "", "end_of_word_suffix": "",
    "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
    "vocab": {"a": 0, "b": 1, "ab": 2, "<s>": 3}, "merges": [["a", "b"]]}
}`

func TestLoadBPEErrors(t *testing.T) {
	for _, s := range []string{
		minimalBPE,
		strings.Replace(minimalBPE, `"truncation": null, "padding": null`, `"truncation": {"max_length": 5}, "padding": {"strategy": "BatchLongest"}`, 1),
		strings.Replace(minimalBPE, `[["a", "b"]]`, `["a b"]`, 1),
	} {
		if _, err := LoadBPE([]byte(s)); err != nil {
			t.Fatalf("%v in\n%s", err, s)
		}
	}
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"not json", minimalBPE, "[1]", "not a JSON object"},
		{"syntax", `"normalizer": null,`, `"normalizer": nul,`, "line 4, column 20"},
		{"unknown field", `"normalizer": null,`, `"normalizer": null, "frobnicate": 1,`, `unknown field "frobnicate"`},
		{"version", `"version": "1.0"`, `"version": "2.0"`, `version "2.0"`},
		{"truncation", `"truncation": null`, `"truncation": 5`, "truncation: neither null nor an object"},
		{"padding", `"padding": null`, `"padding": []`, "padding: neither"},
		{"normalizer", `"normalizer": null`, `"normalizer": {"type": "NFC"}`, `normalizer: type "NFC"`},
		{"pre-tokenizer", `{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post`, `{"type": "Metaspace"},
  "post`, `pre_tokenizer: type "Metaspace"`},
		{"pre-tokenizer field", `"add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post`, `"add_prefix_space": false, "split": true},
  "post`, `pre_tokenizer: json: unknown field "split"`},
		{"no pre-tokenizer", `"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}`, `"pre_tokenizer": null`, "pre_tokenizer: missing"},
		{"post-processor", `{"type": "RobertaProcessing"`, `{"type": "TemplateProcessing"`, `post_processor: type "TemplateProcessing"`},
		{"post-processor id", `"sep": ["<s>", 3]`, `"sep": ["<s>", 99]`, "post_processor: sep: id 99"},
		{"decoder", `"decoder": {"type": "ByteLevel"`, `"decoder": {"type": "WordPiece"`, `decoder: type "WordPiece"`},
		{"model type", `"type": "BPE"`, `"type": "WordPiece"`, `model: type "WordPiece"`},
		{"dropout", `"dropout": null`, `"dropout": 0.1`, "model: dropout 0.1"},
		{"prefix", `"continuing_subword_prefix": ""`, `"continuing_subword_prefix": "##"`, "model: continuing_subword_prefix"},
		{"suffix", `"end_of_word_suffix": ""`, `"end_of_word_suffix": "</w>"`, "model: end_of_word_suffix"},
		{"byte fallback", `"byte_fallback": false`, `"byte_fallback": true`, "model: byte_fallback"},
		{"unk", `"unk_token": null`, `"unk_token": "<unk>"`, `model: unk_token "<unk>"`},
		{"merge", `[["a", "b"]]`, `[["a", "c"]]`, `model: merge 1: "c" is not in the vocabulary`},
		{"merged", `"ab": 2,`, `"ba": 2,`, `model: merge 1: the merged "ab"`},
		{"merge shape", `[["a", "b"]]`, `[["a", "b", "c"]]`, "model: merges: [0]: neither"},
		{"merge string", `[["a", "b"]]`, `["a b c"]`, "model: merges: [0]"},
		{"negative id", `"b": 1,`, `"b": -1,`, `model: vocab: entry "b": id -1`},
		{"huge id", `"b": 1,`, `"b": 100000000,`, "out of range"},
		{"duplicate id", `"b": 1,`, `"b": 0,`, "id 0 is given to"},
		{"vocab type", `"b": 1,`, `"b": "one",`, "model: vocab: json: cannot unmarshal string"},
		{"added single word", `"single_word": false`, `"single_word": true`, `added_tokens[0] "<s>": single_word`},
		{"added empty", `"content": "<s>"`, `"content": ""`, "added_tokens[0]: empty content"},
		{"added field", `"special": true}`, `"special": true, "x": 1}`, `added_tokens: json: unknown field "x"`},
	} {
		if !strings.Contains(minimalBPE, c.old) {
			t.Fatalf("%s: %q not in the minimal file", c.name, c.old)
		}
		_, err := LoadBPE([]byte(strings.Replace(minimalBPE, c.old, c.new, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "tokenizer tokenizer.json: ") {
			t.Errorf("%s: error %q does not name the file", c.name, err)
		}
	}
}

func TestParseMergesTxt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][2]string
		err  string
	}{
		{"#version: 0.2\na b\nab c\n", [][2]string{{"a", "b"}, {"ab", "c"}}, ""},
		{"a b\r\n\nc d", [][2]string{{"a", "b"}, {"c", "d"}}, ""},
		{"a b\nabc\n", nil, "line 2"},
		{"a b c\n", nil, "line 1"},
		{"a  b\n", nil, "line 1"},
		{"#version: 0.2\n" + strings.Repeat("x", 5000) + " y\n", nil, "token too long"},
	} {
		got, err := parseMergesTxt([]byte(c.in))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%.30q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%.30q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestLoadBPEFS loads the fixture's folders both ways: tokenizer.json, and
// the slow files with a tokenizer_config.json asking for a prefix space.
func TestLoadBPEFS(t *testing.T) {
	dir := filepath.Join("testdata", "bpe")
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	fast := fstest.MapFS{TokenizerJSONFile: {Data: read("roberta_prefix.tokenizer.json")}}
	slow := fstest.MapFS{
		BPEVocabFile:  {Data: read("vocab.json")},
		BPEMergesFile: {Data: read("merges.txt")},
		ConfigFile: {Data: []byte(`{"tokenizer_class": "RobertaTokenizer", "add_prefix_space": true, "errors": "replace",
			"mask_token": {"content": "<mask>", "lstrip": true, "rstrip": false, "normalized": false, "single_word": false, "__type": "AddedToken"}}`)},
	}
	a, err := LoadBPEFS(fast, "fast")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadBPEFS(slow, "slow")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Hello world", "a <mask> b", "x<s>y", " leading", "日本語 😀"} {
		ea, _ := a.EncodePair(text, text, 0)
		eb, _ := b.EncodePair(text, text, 0)
		if !slices.Equal(ea.IDs, eb.IDs) || !slices.Equal(ea.CharOffsets, eb.CharOffsets) {
			t.Errorf("%q: tokenizer.json gives %v %v, the slow files %v %v", text, ea.IDs, ea.CharOffsets, eb.IDs, eb.CharOffsets)
		}
	}
	if _, err := LoadBPEFS(fstest.MapFS{BPEVocabFile: {Data: read("vocab.json")}}, "half"); err == nil || !strings.Contains(err.Error(), "merges.txt") {
		t.Errorf("without merges.txt: %v", err)
	}
	big := fstest.MapFS{TokenizerJSONFile: {Data: make([]byte, MaxBPEFileSize+1)}}
	if _, err := LoadBPEFS(big, "big"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized file: %v", err)
	}
}

func TestBPEDecode(t *testing.T) {
	tks := loadBPEVariants(t)
	rb := tks["roberta"]
	for _, c := range []struct {
		ids  []int
		skip bool
		want string
	}{
		{[]int{0, 352, 368, 2}, false, "<s>Hello world</s>"},
		{[]int{0, 352, 368, 2}, true, "Hello world"},
		{[]int{352, -1, 5000, 368}, false, "Hello world"},
		{nil, false, ""},
	} {
		if got := rb.Decode(c.ids, c.skip); got != c.want {
			t.Errorf("Decode(%v, %v) = %q, want %q", c.ids, c.skip, got, c.want)
		}
	}
	// GPT-2 has no specials to add or drop: any valid text comes back.
	g := tks["gpt2"]
	for _, text := range []string{"", "Hello  world\n", " é😀 日本語\t", "<mask> x"} {
		enc, err := g.Encode(text, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Decode(enc.IDs, true); got != text {
			t.Errorf("Decode(Encode(%q)) = %q", text, got)
		}
	}
}

// TestBPEConcurrent encodes from many goroutines at once: the cache is
// shared.
func TestBPEConcurrent(t *testing.T) {
	tk := loadBPEVariants(t)["roberta"]
	texts := []string{"Hello world", "the running dog", "日本語 😀", "a <mask> b"}
	want := make([][]int, len(texts))
	for i, s := range texts {
		enc, _ := tk.Encode(s, 0)
		want[i] = enc.IDs
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				i := (g + k) % len(texts)
				enc, _ := tk.Encode(texts[i], 0)
				if !slices.Equal(enc.IDs, want[i]) {
					t.Errorf("%q: %v, want %v", texts[i], enc.IDs, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkBPEEncode(b *testing.B) {
	tk := loadBPEVariants(b)["roberta"]
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; it's 2024 and café prices are 3.50€. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := tk.Encode(text, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func TestClassTables(t *testing.T) {
	for name, rs := range map[string][]runeRange{"letters": bpeLetters, "numbers": bpeNumbers, "spaces": bpeSpaces} {
		for i, r := range rs {
			if r.lo > r.hi || (i > 0 && rs[i-1].hi >= r.lo) {
				t.Fatalf("%s: range %d %v not sorted or overlapping", name, i, r)
			}
		}
	}
	for _, c := range []struct {
		r    rune
		want int
	}{
		{'a', classLetter}, {'Z', classLetter}, {'é', classLetter}, {'日', classLetter}, {'한', classLetter},
		{'\u1C89', classLetter}, // a letter since Unicode 16, not in Go 1.26's tables
		{'7', classNumber}, {'½', classNumber}, {'²', classNumber}, {'٣', classNumber}, {'Ⅳ', classNumber},
		{' ', classSpace}, {'\t', classSpace}, {'\u0085', classSpace}, {'\u00a0', classSpace}, {'\u3000', classSpace}, {'\u2028', classSpace},
		{'\u200b', classOther}, {'\u001c', classOther}, {'!', classOther}, {'😀', classOther}, {'\u0301', classOther}, {0xFFFD, classOther},
	} {
		if got := classOf(c.r); got != c.want {
			t.Errorf("classOf(%U) = %d, want %d", c.r, got, c.want)
		}
	}
}

func TestLoadBPEFilesErrors(t *testing.T) {
	for _, c := range []struct {
		name          string
		vocab, merges string
		want          string
	}{
		{"vocab syntax", "{\n\"a\": 0,\n\"b\" 1}", "a b\n", "tokenizer vocab.json: line 3, column 5"},
		{"vocab not object", "[]", "", "tokenizer vocab.json: not a JSON object"},
		{"merge line", `{"a": 0, "b": 1, "ab": 2}`, "#version: 0.2\na b\nab\n", "tokenizer merges.txt: line 3"},
		{"merge vocab", `{"a": 0, "b": 1}`, "a b\n", `tokenizer merges.txt: merge 1: the merged "ab" is not in the vocabulary`},
		{"empty special", `{"a": 0}`, "", "cls_token is empty"},
	} {
		o := RobertaOptions()
		if c.name == "empty special" {
			o.ClsToken = ""
		}
		_, err := LoadBPEFiles([]byte(c.vocab), []byte(c.merges), o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestLoadEncoderFS(t *testing.T) {
	read := func(path ...string) []byte {
		data, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, path...)...))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	bertJSON := []byte(`{"model": {"type": "WordPiece", "vocab": {}}}`)
	for _, c := range []struct {
		name string
		fsys fstest.MapFS
		bpe  bool
		err  string
	}{
		{"bpe tokenizer.json", fstest.MapFS{TokenizerJSONFile: {Data: read("bpe", "gpt2.tokenizer.json")}}, true, ""},
		{"bpe slow files", fstest.MapFS{BPEVocabFile: {Data: read("bpe", "vocab.json")}, BPEMergesFile: {Data: read("bpe", "merges.txt")}}, true, ""},
		{"wordpiece", fstest.MapFS{VocabFile: {Data: read("bert-base-uncased", "vocab.txt")}}, false, ""},
		{"wordpiece with tokenizer.json", fstest.MapFS{VocabFile: {Data: read("bert-base-uncased", "vocab.txt")}, TokenizerJSONFile: {Data: bertJSON}}, false, ""},
		{"unigram", fstest.MapFS{TokenizerJSONFile: {Data: []byte(`{"model": {"type": "Unigram"}}`)}}, false, `model.type "Unigram"`},
		{"broken", fstest.MapFS{TokenizerJSONFile: {Data: []byte(`{"model": `)}}, false, "tokenizer m/tokenizer.json"},
		{"empty", fstest.MapFS{}, false, "holds none of"},
	} {
		enc, err := LoadEncoderFS(c.fsys, "m")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if _, isBPE := enc.(*BPE); isBPE != c.bpe {
			t.Errorf("%s: got %T", c.name, enc)
		}
		if _, err := enc.Encode("Hello world", 0); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
