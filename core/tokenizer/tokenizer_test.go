package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
)

func TestBertBaseUncased(t *testing.T) {
	// The folder holds only vocab.txt: LoadDir falls back to DefaultConfig,
	// which is bert-base-uncased's setting (lowercase, strip accents).
	tk := loadTestTokenizer(t, "bert-base-uncased")
	if tk.Vocab().Len() != 30522 {
		t.Fatalf("vocab size %d, want 30522", tk.Vocab().Len())
	}
	if tk.PadID() != 0 || tk.UnkID() != 100 || tk.CLSID() != 101 || tk.SEPID() != 102 || tk.MaskID() != 103 {
		t.Fatalf("special ids pad %d unk %d cls %d sep %d mask %d", tk.PadID(), tk.UnkID(), tk.CLSID(), tk.SEPID(), tk.MaskID())
	}
	for _, c := range []struct {
		name, text string
		ids        []int
		tokens     []string
	}{
		{"brown fox", "brown fox jumps over the lazy dog", []int{101, 2829, 4419, 14523, 2058, 1996, 13971, 3899, 102}, nil},
		// Google's README illustrates "un ##aff ##able"; the real vocab has no
		// "##aff", and HuggingFace's docs show this split.
		{"unaffable", "unaffable", []int{101, 14477, 20961, 3468, 102}, []string{"[CLS]", "una", "##ffa", "##ble", "[SEP]"}},
		{"mask kept whole", "The capital of France is [MASK].", nil, []string{"[CLS]", "the", "capital", "of", "france", "is", "[MASK]", ".", "[SEP]"}},
		{"mask glued to words", "a[MASK]b", nil, []string{"[CLS]", "a", "[MASK]", "b", "[SEP]"}},
		{"lowercase mask is text", "[mask]", []int{101, 1031, 7308, 1033, 102}, nil},
		{"accents", "Héllo wörld", []int{101, 7592, 2088, 102}, nil},
		// NFD splits a Hangul syllable into jamo, which the vocab holds.
		{"hangul", "한", []int{101, 1469, 30006, 30021, 102}, []string{"[CLS]", "ᄒ", "##ᅡ", "##ᆫ", "[SEP]"}},
		{"gpu", "I have a new GPU!", nil, []string{"[CLS]", "i", "have", "a", "new", "gp", "##u", "!", "[SEP]"}},
		{"empty", "", []int{101, 102}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc, err := tk.Encode(c.text, 0)
			if err != nil {
				t.Fatal(err)
			}
			if c.ids != nil && !slices.Equal(enc.IDs, c.ids) {
				t.Errorf("ids %v, want %v (%v)", enc.IDs, c.ids, enc.Tokens)
			}
			if c.tokens != nil && !slices.Equal(enc.Tokens, c.tokens) {
				t.Errorf("tokens %q, want %q", enc.Tokens, c.tokens)
			}
			checkEncoding(t, tk, [2]string{c.text}, enc, 0)
			checkOffsetsMatchText(t, tk, [2]string{c.text}, enc)
		})
	}
}

func TestOffsets(t *testing.T) {
	tk := loadTestTokenizer(t, "bert-base-uncased")
	for _, c := range []struct {
		text   string
		tokens []Token // Text, Start, End, CharStart, CharEnd, Word
	}{
		{"Héllo wörld", []Token{
			{Text: "hello", Start: 0, End: 6, CharStart: 0, CharEnd: 5, Word: 0},
			{Text: "world", Start: 7, End: 13, CharStart: 6, CharEnd: 11, Word: 1},
		}},
		// A decomposed accent: the mark is dropped and not part of the span.
		{"e\u0301!", []Token{
			{Text: "e", Start: 0, End: 1, CharStart: 0, CharEnd: 1, Word: 0},
			{Text: "!", Start: 3, End: 4, CharStart: 2, CharEnd: 3, Word: 1},
		}},
		// Pieces of one syllable all point at it.
		{"x 한", []Token{
			{Text: "x", Start: 0, End: 1, CharStart: 0, CharEnd: 1, Word: 0},
			{Text: "ᄒ", Start: 2, End: 5, CharStart: 2, CharEnd: 3, Word: 1},
			{Text: "##ᅡ", Start: 2, End: 5, CharStart: 2, CharEnd: 3, Word: 1},
			{Text: "##ᆫ", Start: 2, End: 5, CharStart: 2, CharEnd: 3, Word: 1},
		}},
		{"\t[MASK]🙂 playing我", []Token{
			{Text: "[MASK]", Start: 1, End: 7, CharStart: 1, CharEnd: 7, Word: 0, added: true},
			{Text: "[UNK]", Start: 7, End: 11, CharStart: 7, CharEnd: 8, Word: 1},
			{Text: "playing", Start: 12, End: 19, CharStart: 9, CharEnd: 16, Word: 2},
			{Text: "我", Start: 19, End: 22, CharStart: 16, CharEnd: 17, Word: 3},
		}},
		// Invalid UTF-8 is dropped like U+FFFD; a byte counts as a character.
		{"a\xffb \xe4c", []Token{
			{Text: "ab", Start: 0, End: 3, CharStart: 0, CharEnd: 3, Word: 0},
			{Text: "c", Start: 5, End: 6, CharStart: 5, CharEnd: 6, Word: 1},
		}},
	} {
		got := tk.Tokenize(c.text)
		for i := range got {
			got[i].ID = 0
		}
		if !slices.Equal(got, c.tokens) {
			t.Errorf("%q:\n got  %+v\n want %+v", c.text, got, c.tokens)
		}
	}
}

func TestLowercaseExpansion(t *testing.T) {
	// U+0130 lowercases to "i" + U+0307; with accents kept the mark stays.
	v, err := NewVocab([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "i", "##\u0307", "x"})
	if err != nil {
		t.Fatal(err)
	}
	keep := false
	for _, c := range []struct {
		strip *bool
		want  []string
	}{
		{nil, []string{"i", "x"}},
		{&keep, []string{"i", "##\u0307", "x"}},
	} {
		cfg := DefaultConfig()
		cfg.StripAccents = c.strip
		tk, err := New(v, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tok := range tk.Tokenize("İ x") {
			got = append(got, tok.Text)
			if tok.Text != "x" && (tok.Start != 0 || tok.End != 2) {
				t.Errorf("%q at [%d,%d), want [0,2)", tok.Text, tok.Start, tok.End)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("strip %v: %q, want %q", c.strip, got, c.want)
		}
	}
}

func TestCanonicalOrder(t *testing.T) {
	// U+1D16D (class 226) before U+1D165 (class 216): NFD swaps them; both are
	// spacing marks (Mc), so stripping accents keeps them. Spans stay in
	// place as the characters move, as in HuggingFace: the word ends where
	// U+0301 ends (HF reports characters [0, 3) here).
	tk, err := New(mustVocab(t, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a\U0001D165\U0001D16D"), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := tk.Tokenize("a\U0001D16D\u0301\U0001D165")
	if len(got) != 1 || got[0].Text != "a\U0001D165\U0001D16D" || got[0].Start != 0 || got[0].End != 7 {
		t.Errorf("got %+v", got)
	}
	// A starter in between stops the reordering.
	got = tk.Tokenize("a\U0001D16Db\U0001D165")
	if len(got) != 1 || got[0].ID != tk.UnkID() {
		t.Errorf("got %+v", got)
	}
}

func mustVocab(t testing.TB, tokens ...string) *Vocab {
	t.Helper()
	v, err := NewVocab(tokens)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWordPieceLimits(t *testing.T) {
	tk := loadTestTokenizer(t, "bert-base-uncased")
	for _, c := range []struct {
		text string
		want []string
	}{
		{strings.Repeat("a", 100), nil}, // splits into pieces
		{strings.Repeat("a", 101), []string{"[UNK]"}},
		{strings.Repeat("é", 101), []string{"[UNK]"}}, // counted after normalisation
		{strings.Repeat("e\u0301", 100), nil},         // 100 characters once the marks are gone
		{"hello\u0378world", []string{"[UNK]"}},       // unassigned code point: kept, unknown
		{"hello" + strings.Repeat("\u0301", 500), []string{"hello"}},
	} {
		var got []string
		for _, tok := range tk.Tokenize(c.text) {
			got = append(got, tok.Text)
		}
		if c.want == nil {
			if len(got) < 2 || slices.Contains(got, "[UNK]") {
				t.Errorf("%.20q...: %q, want word pieces", c.text, got)
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%.20q...: %q, want %q", c.text, got, c.want)
		}
	}
}

func TestTruncation(t *testing.T) {
	tk := loadTestTokenizer(t, "bert-base-uncased")
	enc, err := tk.Encode("one two three four five", 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"[CLS]", "one", "two", "three", "[SEP]"}; !slices.Equal(enc.Tokens, want) || !enc.Truncated {
		t.Errorf("single: %q truncated=%v, want %q truncated", enc.Tokens, enc.Truncated, want)
	}
	enc, _ = tk.Encode("one two", 4)
	if enc.Truncated || len(enc.IDs) != 4 {
		t.Errorf("fits exactly: %q truncated=%v", enc.Tokens, enc.Truncated)
	}
	enc, _ = tk.Encode("one two", 2)
	if !slices.Equal(enc.Tokens, []string{"[CLS]", "[SEP]"}) || !enc.Truncated {
		t.Errorf("maxLen 2: %q truncated=%v", enc.Tokens, enc.Truncated)
	}
	if _, err := tk.Encode("x", 1); err == nil {
		t.Error("maxLen 1: no error")
	}
	if _, err := tk.EncodePair("x", "y", 2); err == nil {
		t.Error("pair maxLen 2: no error")
	}

	enc, err = tk.EncodePair("a b c d e f g h", "one two", 9)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[CLS]", "a", "b", "c", "d", "[SEP]", "one", "two", "[SEP]"}
	if !slices.Equal(enc.Tokens, want) || !enc.Truncated {
		t.Errorf("pair: %q, want %q", enc.Tokens, want)
	}
	if wantTypes := []int{0, 0, 0, 0, 0, 0, 1, 1, 1}; !slices.Equal(enc.TypeIDs, wantTypes) {
		t.Errorf("pair types %v, want %v", enc.TypeIDs, wantTypes)
	}
	checkEncoding(t, tk, [2]string{"a b c d e f g h", "one two"}, enc, 9)
}

func TestTruncationWordCut(t *testing.T) {
	// Before a pair is truncated each text is cut after the word that reaches
	// maxLen tokens, which decides which text counts as longer (answers of
	// HuggingFace tokenizers 0.23.2).
	tk := loadTestTokenizer(t, "bert-base-uncased")
	for _, c := range []struct {
		a, b   string
		maxLen int
		want   []string
	}{
		// 12 and 4 tokens: both cut to 4, equal, the second gets the odd one.
		{"x y z w v u t s r q p o", "a b c d", 4, []string{"[CLS]", "[SEP]", "a", "[SEP]"}},
		{"x y z w v u t s r q p o", "a b c", 4, []string{"[CLS]", "x", "[SEP]", "[SEP]"}},
		// Words of two tokens: the first text keeps 10 or 11 tokens.
		{"gpu gpu gpu gpu gpu x", "a b c d e f g h i j", 10, []string{"[CLS]", "gp", "##u", "gp", "[SEP]", "a", "b", "c", "d", "[SEP]"}},
		{"x gpu gpu gpu gpu gpu", "a b c d e f g h i j", 10, []string{"[CLS]", "x", "gp", "##u", "gp", "[SEP]", "a", "b", "c", "[SEP]"}},
		// A special token in the text counts but does not end the text.
		{"a b c [MASK] d", "p q r s t", 4, []string{"[CLS]", "a", "[SEP]", "[SEP]"}},
		{"a b [MASK] c d", "p q r s t", 4, []string{"[CLS]", "[SEP]", "p", "[SEP]"}},
	} {
		enc, err := tk.EncodePair(c.a, c.b, c.maxLen)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(enc.Tokens, c.want) || !enc.Truncated {
			t.Errorf("%q / %q, maxLen %d: %q, want %q", c.a, c.b, c.maxLen, enc.Tokens, c.want)
		}
	}
}

func TestUnicodeTables(t *testing.T) {
	// Characters whose properties differ between Go's Unicode 15 and the
	// tables of HuggingFace tokenizers 0.23.2.
	for _, c := range []struct {
		name string
		got  bool
	}{
		{"U+2E45 (Po since Unicode 10) is no punctuation", !isPunctuation(0x2E45)},
		{"U+166D (Po before Unicode 12) is punctuation", isPunctuation(0x166D)},
		{"U+0890 (Cf since Unicode 14) is kept", !isRemoved(0x0890)},
		{"U+200B is removed", isRemoved(0x200B)},
		{"U+E000 (Co) is removed", isRemoved(0xE000)},
		{"U+0378 (unassigned) is kept", !isRemoved(0x0378)},
		{"U+1AC0 (Mn since Unicode 14) is no mark", !unicode.Is(hfNonspacingMark, 0x1AC0)},
		{"U+1734 (Mc since Unicode 14) is a mark", unicode.Is(hfNonspacingMark, 0x1734)},
		{"U+0301 is a mark", unicode.Is(hfNonspacingMark, 0x0301)},
		{"U+11938 does not decompose", unicode.Is(hfNoDecomposition, 0x11938)},
		{"U+0C3C has class 0", combiningClass(0x0C3C) == 0},
		{"U+0316 has class 220", combiningClass(0x0316) == 220},
		{"U+1C89 lowercases (Unicode 16)", toLower(0x1C89) == 0x1C8A},
		{"U+1E9E lowercases to U+00DF", toLower(0x1E9E) == 0xDF},
		{"U+03A3 lowercases to U+03C3", toLower(0x03A3) == 0x03C3},
		{"U+01C5 lowercases to U+01C6", toLower(0x01C5) == 0x01C6},
		{"U+00DF has no single lowercase change", toLower(0xDF) == 0xDF},
		{"U+2126 lowercases to U+03C9", toLower(0x2126) == 0x03C9},
	} {
		if !c.got {
			t.Error(c.name + ": no")
		}
	}
	for r := rune('A'); r <= 'Z'; r++ {
		if toLower(r) != r+32 || toLower(r+32) != r+32 {
			t.Fatalf("toLower(%q) = %q", r, toLower(r))
		}
	}
}

func TestLongestFirst(t *testing.T) {
	// Expected values follow the HuggingFace Rust library (TruncationStrategy
	// LongestFirst): the longer sequence loses tokens until both are equal,
	// then both lose; the odd token goes to the longer one, or to the second
	// when both are equal.
	for _, c := range []struct{ n1, n2, budget, w1, w2 int }{
		{3, 3, 6, 3, 3},
		{10, 2, 6, 4, 2},
		{2, 10, 6, 2, 4},
		{10, 6, 7, 4, 3},
		{6, 10, 7, 3, 4},
		{5, 5, 7, 3, 4},
		{5, 5, 8, 4, 4},
		{9, 0, 4, 4, 0},
		{0, 9, 4, 0, 4},
		{20, 20, 0, 0, 0},
		{20, 20, 1, 0, 1},
		{7, 30, 10, 5, 5},
		{30, 7, 11, 6, 5},
	} {
		g1, g2 := LongestFirst(c.n1, c.n2, c.budget)
		if g1 != c.w1 || g2 != c.w2 {
			t.Errorf("LongestFirst(%d, %d, %d) = %d, %d, want %d, %d", c.n1, c.n2, c.budget, g1, g2, c.w1, c.w2)
		}
	}
}

func TestNewErrors(t *testing.T) {
	v := mustVocab(t, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a")
	if _, err := New(nil, DefaultConfig()); err == nil {
		t.Error("nil vocab: no error")
	}
	cfg := DefaultConfig()
	cfg.MaskToken = "<mask>"
	if _, err := New(v, cfg); err == nil || !strings.Contains(err.Error(), `mask_token "<mask>"`) {
		t.Errorf("missing mask: %v", err)
	}
	cfg = DefaultConfig()
	cfg.UnkToken = ""
	if _, err := New(v, cfg); err == nil {
		t.Error("empty unk_token: no error")
	}
	cfg = DefaultConfig()
	cfg.ModelMaxLength = -1
	if _, err := New(v, cfg); err == nil {
		t.Error("negative model_max_length: no error")
	}
}

func TestCustomSpecialTokens(t *testing.T) {
	// Overlapping special tokens: the longest match at the leftmost place wins.
	v := mustVocab(t, "<pad>", "<unk>", "<s>", "</s>", "<s>x", "a", "##b")
	cfg := DefaultConfig()
	cfg.PadToken, cfg.UnkToken, cfg.ClsToken, cfg.SepToken, cfg.MaskToken = "<pad>", "<unk>", "<s>", "</s>", "<s>x"
	tk, err := New(v, cfg)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := tk.Encode("a<s>xab</s>", 0)
	want := []string{"<s>", "a", "<s>x", "a", "##b", "</s>", "</s>"}
	if !slices.Equal(enc.Tokens, want) {
		t.Errorf("%q, want %q", enc.Tokens, want)
	}
}

func TestLoadSaveDir(t *testing.T) {
	dir := t.TempDir()
	tk := loadTestTokenizer(t, filepath.Join("fixtures", "uncased_keep_accents"))
	cfg := tk.Config()
	cfg.ModelMaxLength = 128
	tk2, err := New(tk.Vocab(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "model")
	if err := tk2.SaveDir(out); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{ConfigFile, VocabFile}) {
		t.Errorf("files %q (temporary files left behind?)", names)
	}
	back, err := LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if !configEqual(back.Config(), cfg) {
		t.Errorf("config %+v, want %+v", back.Config(), cfg)
	}
	orig, _ := os.ReadFile(filepath.Join("testdata", "fixtures", "uncased_keep_accents", VocabFile))
	saved, _ := os.ReadFile(filepath.Join(out, VocabFile))
	if string(orig) != string(saved) {
		t.Error("vocab.txt changed in a save/load round trip")
	}
	text := "Café naïve résumé"
	a, _ := tk.Encode(text, 0)
	b, _ := back.Encode(text, 0)
	if !slices.Equal(a.IDs, b.IDs) {
		t.Errorf("%v != %v", a.IDs, b.IDs)
	}

	if _, err := LoadDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing folder: no error")
	}
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, VocabFile), []byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"), 0o644)
	os.WriteFile(filepath.Join(bad, ConfigFile), []byte(`{"do_lower_case": "yes"}`), 0o644)
	if _, err := LoadDir(bad); err == nil || !strings.Contains(err.Error(), ConfigFile) {
		t.Errorf("bad config: %v", err)
	}
	os.WriteFile(filepath.Join(bad, VocabFile), []byte("[PAD]\n[UNK]\n[PAD]\n"), 0o644)
	if _, err := LoadDir(bad); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("duplicate vocab: %v", err)
	}
}

func configEqual(a, b Config) bool {
	if (a.StripAccents == nil) != (b.StripAccents == nil) || (a.StripAccents != nil && *a.StripAccents != *b.StripAccents) {
		return false
	}
	a.StripAccents, b.StripAccents = nil, nil
	return a == b
}

func BenchmarkEncode(b *testing.B) {
	tk := loadTestTokenizer(b, "bert-base-uncased")
	const paragraph = "BERT, or Bidirectional Encoder Representations from Transformers, is a " +
		"language model introduced in October 2018 by researchers at Google. It learns to " +
		"represent text as a sequence of vectors using self-supervised learning. It uses the " +
		"encoder-only transformer architecture. BERT dramatically improved the state of the " +
		"art for large language models. As of 2020, BERT is a ubiquitous baseline in natural " +
		"language processing (NLP) experiments. Café, naïve, résumé — 東京 and 北京!"
	b.SetBytes(int64(len(paragraph)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tk.Encode(paragraph, 512); err != nil {
			b.Fatal(err)
		}
	}
}

func TestConcurrentEncode(t *testing.T) {
	// One Tokenizer serves many goroutines (run with -race).
	tk := loadTestTokenizer(t, "bert-base-uncased")
	texts := []string{"Héllo wörld [MASK]!", "brown fox jumps over the lazy dog", "中文 한국어 e\u0301"}
	want := make([][]int, len(texts))
	for i, s := range texts {
		enc, _ := tk.Encode(s, 0)
		want[i] = enc.IDs
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 50 {
				i := (g + k) % len(texts)
				enc, _ := tk.EncodePair(texts[i], texts[(i+1)%len(texts)], 0)
				if !slices.Equal(enc.IDs[:len(want[i])-1], want[i][:len(want[i])-1]) {
					t.Errorf("goroutine %d: %v, want prefix %v", g, enc.IDs, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
