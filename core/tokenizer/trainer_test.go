package tokenizer

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// trainOn trains a vocabulary on texts with settings c.
func trainOn(t testing.TB, c TrainerConfig, texts ...string) *Tokenizer {
	t.Helper()
	tr, err := NewTrainer(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range texts {
		tr.Add(s)
	}
	tk, err := tr.Train()
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// repeat returns n copies of s separated by spaces.
func repeat(s string, n int) string { return strings.TrimSpace(strings.Repeat(s+" ", n)) }

// hugCorpus is the word counts of HuggingFace's course on subword tokenizers.
var hugCorpus = []string{repeat("hug", 10), repeat("pug", 5), repeat("pun", 12), repeat("bun", 4), repeat("hugs", 5)}

var hugAlphabet = []string{"b", "g", "h", "n", "p", "s", "u", "##b", "##g", "##h", "##n", "##p", "##s", "##u"}

func TestTrainerByHand(t *testing.T) {
	specials := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for _, c := range []struct {
		name      string
		size, min int
		want      []string // after the specials
	}{
		// Pairs over the corpus: ##u ##g 20 (hug, pug, hugs), p ##u 17, ##u ##n 16, h ##u 15,
		// ##g ##s 5, b ##u 4. After "##ug": h ##ug 15, ##u ##n 16 -> "##un"; then h ##ug 15 ->
		// "hug"; p ##un 12 -> "pun"; then p ##ug 5 and hug ##s 5 tie: "p" entered the
		// vocabulary first -> "pug", "hugs"; finally b ##un 4 -> "bun".
		{"all merges", 100, 1, append(slices.Clone(hugAlphabet), "##ug", "##un", "hug", "pun", "pug", "hugs", "bun")},
		{"stops at the size", 5 + 14 + 3, 1, append(slices.Clone(hugAlphabet), "##ug", "##un", "hug")},
		// "b" occurs 4 times: out of the alphabet, so bun's b ##un never counts, and pairs
		// seen fewer than 5 times are not merged.
		{"min frequency", 100, 5, []string{"g", "h", "n", "p", "s", "u", "##g", "##h", "##n", "##p", "##s", "##u", "##ug", "##un", "hug", "pun", "pug", "hugs"}},
		// The alphabet stays whole even when it alone exceeds the size.
		{"alphabet kept", 3, 1, hugAlphabet},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := DefaultTrainer(c.size)
			tc.MinFrequency = c.min
			tk := trainOn(t, tc, hugCorpus...)
			want := append(slices.Clone(specials), c.want...)
			if got := tk.Vocab().tokens; !slices.Equal(got, want) {
				t.Errorf("vocab\n got %q\nwant %q", got, want)
			}
		})
	}
	tk := trainOn(t, DefaultTrainer(100), hugCorpus...)
	for text, want := range map[string][]string{
		// "for" and "!" hold characters the corpus lacks.
		"Hugs for pugs!": {"hugs", "[UNK]", "pug", "##s", "[UNK]"},
		"pubs":           {"p", "##u", "##b", "##s"},
		"bunny":          {"[UNK]"},
		"HUGSPUN":        {"hugs", "##p", "##un"},
	} {
		var got []string
		for _, tok := range tk.Tokenize(text) {
			got = append(got, tok.Text)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: tokens %q, want %q", text, got, want)
		}
	}
}

func TestTrainerSpecialTokens(t *testing.T) {
	tk := trainOn(t, DefaultTrainer(60), "The quick brown fox jumps over the lazy dog.", "A [MASK] is not a word; [CLS] neither.")
	if tk.PadID() != 0 || tk.UnkID() != 1 || tk.CLSID() != 2 || tk.SEPID() != 3 || tk.MaskID() != 4 {
		t.Fatalf("special ids pad %d unk %d cls %d sep %d mask %d, want 0-4", tk.PadID(), tk.UnkID(), tk.CLSID(), tk.SEPID(), tk.MaskID())
	}
	v := tk.Vocab()
	// Special tokens written in the text are skipped: their brackets are not counted.
	for _, s := range []string{"[", "]"} {
		if _, ok := v.ID(s); ok {
			t.Errorf("%q came from a special token in the text", s)
		}
	}
	// Custom names keep the same order.
	c := DefaultTrainer(40)
	c.MinFrequency = 1
	c.Tokenizer.UnkToken, c.Tokenizer.MaskToken = "<unk>", "<mask>"
	tk = trainOn(t, c, "some text")
	if got := tk.Vocab().tokens[:5]; !slices.Equal(got, []string{"[PAD]", "<unk>", "[CLS]", "[SEP]", "<mask>"}) {
		t.Errorf("specials %q", got)
	}
	if tk.Config().UnkToken != "<unk>" {
		t.Errorf("config unk %q", tk.Config().UnkToken)
	}
}

// readCorpus reads the browser's sample of the pre-training corpus (one sentence a line).
func readCorpus(t testing.TB) []string {
	f, err := os.Open(filepath.Join("..", "..", "tinydata", "web", "pretrain.txt"))
	if err != nil {
		t.Skipf("corpus sample: %v", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			lines = append(lines, s)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestTrainerDeterministic(t *testing.T) {
	lines := readCorpus(t)
	c := DefaultTrainer(600)
	a := trainOn(t, c, lines...)
	shuffled := slices.Clone(lines)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b := trainOn(t, c, shuffled...)
	// One text or many: the same words counted.
	d := trainOn(t, c, strings.Join(lines, "\n"))
	for name, other := range map[string]*Tokenizer{"shuffled": b, "joined": d} {
		if !slices.Equal(a.Vocab().tokens, other.Vocab().tokens) {
			t.Errorf("%s: vocabulary differs", name)
		}
	}
	if n := a.Vocab().Len(); n != 600 {
		t.Errorf("vocab of %d tokens, want 600", n)
	}
}

func TestTrainerCoversCorpus(t *testing.T) {
	lines := readCorpus(t)
	c := DefaultTrainer(800)
	c.MinFrequency = 3
	tk := trainOn(t, c, lines...)
	// Characters seen at least MinFrequency times, in both forms.
	freq := map[rune]int{}
	for _, s := range lines {
		for _, w := range PreTokenize(c.Tokenizer, s) {
			for _, r := range w {
				freq[r]++
			}
		}
	}
	rare := 0
	for r, f := range freq {
		_, first := tk.Vocab().ID(string(r))
		_, cont := tk.Vocab().ID(ContinuationPrefix + string(r))
		if (f >= 3) != first || first != cont {
			t.Errorf("character %q seen %d times: in vocab %v, ##form %v", r, f, first, cont)
		}
		if f < 3 {
			rare++
		}
	}
	if rare == 0 {
		t.Log("no rare characters in the sample: the [UNK] side is not exercised")
	}
	unk := 0
	for _, s := range lines {
		checkWordsRebuilt(t, tk, s)
		for _, tok := range tk.Tokenize(s) {
			if tok.ID != tk.UnkID() {
				continue
			}
			unk++
			hasRare := false
			for _, w := range PreTokenize(c.Tokenizer, s[tok.Start:tok.End]) {
				for _, r := range w {
					hasRare = hasRare || freq[r] < 3
				}
			}
			if !hasRare {
				t.Errorf("%q: [UNK] for %q, whose characters are all frequent", s, s[tok.Start:tok.End])
			}
		}
	}
	t.Logf("%d lines, %d characters (%d rare), %d [UNK] tokens", len(lines), len(freq), rare, unk)
}

// checkWordsRebuilt checks that the WordPiece tokens of text, joined per word, are the words
// PreTokenize gives, and that an unknown token stands for a word whose characters are not all
// in the vocabulary or that is too long.
func checkWordsRebuilt(t testing.TB, tk *Tokenizer, text string) {
	t.Helper()
	var got []string
	toks := tk.Tokenize(text)
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j].Word == toks[i].Word {
			j++
		}
		switch {
		case toks[i].added:
		case toks[i].ID == tk.UnkID():
			if ws := PreTokenize(tk.Config(), text[toks[i].Start:toks[i].End]); len(ws) == 1 {
				for _, r := range ws[0] {
					if _, ok := tk.Vocab().ID(string(r)); !ok {
						ws = nil
						break
					}
				}
				if ws != nil {
					t.Fatalf("%q: [UNK] for %q, whose characters are all in the vocabulary", text, text[toks[i].Start:toks[i].End])
				}
				got = append(got, PreTokenize(tk.Config(), text[toks[i].Start:toks[i].End])[0])
			}
		default:
			var b strings.Builder
			for k, tok := range toks[i:j] {
				if k > 0 {
					b.WriteString(strings.TrimPrefix(tok.Text, ContinuationPrefix))
				} else {
					b.WriteString(tok.Text)
				}
			}
			got = append(got, b.String())
		}
		i = j
	}
	if want := PreTokenize(tk.Config(), text); !slices.Equal(got, want) {
		t.Fatalf("%q: words rebuilt from tokens %q, PreTokenize %q", text, got, want)
	}
}

func TestPreTokenize(t *testing.T) {
	c := DefaultConfig()
	for text, want := range map[string][]string{
		"Héllo, WORLD!":          {"hello", ",", "world", "!"},
		"a[MASK]b [CLS]":         {"a", "b"},
		"don't  stop\tme\n":      {"don", "'", "t", "stop", "me"},
		"中文":                     {"中", "文"},
		strings.Repeat("x", 101): nil,
		strings.Repeat("x", 100): {strings.Repeat("x", 100)},
	} {
		if got := PreTokenize(c, text); !slices.Equal(got, want) {
			t.Errorf("PreTokenize(%.20q) = %q, want %q", text, got, want)
		}
	}
	cased := c
	cased.DoLowerCase = false
	if got := PreTokenize(cased, "Héllo"); !slices.Equal(got, []string{"Héllo"}) {
		t.Errorf("cased: %q", got)
	}
}

func TestTrainerSaveLoad(t *testing.T) {
	tk := trainOn(t, DefaultTrainer(200), readCorpus(t)...)
	dir := t.TempDir()
	if err := tk.SaveDir(dir); err != nil {
		t.Fatal(err)
	}
	back, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Vocab().tokens, tk.Vocab().tokens) || !configEqual(back.Config(), tk.Config()) {
		t.Error("vocabulary or config changed on the way through SaveDir and LoadDir")
	}
}

func TestTrainerErrors(t *testing.T) {
	if _, err := NewTrainer(TrainerConfig{VocabSize: 0}); err == nil {
		t.Error("size 0: no error")
	}
	c := DefaultTrainer(10)
	c.Tokenizer.SepToken = ""
	if _, err := NewTrainer(c); err == nil {
		t.Error("empty sep_token: no error")
	}
	c = DefaultTrainer(10)
	c.Tokenizer.MaskToken = "a\nb"
	if _, err := NewTrainer(c); err == nil {
		t.Error("newline in a special token: no error")
	}
	tr, err := NewTrainer(DefaultTrainer(10))
	if err != nil {
		t.Fatal(err)
	}
	tr.Add("  [MASK] \n")
	if _, err := tr.Train(); err == nil {
		t.Error("no words: no error")
	}
}

func FuzzTrainer(f *testing.F) {
	f.Add("Hugs for pugs! Hugs, pugs and puns.", 50)
	f.Add("a[MASK]b [SEP] İstanbul Σσς café naïve 中文 ###", 30)
	f.Add(strings.Repeat("ab", 60)+" ab abab", 12)
	f.Fuzz(func(t *testing.T, text string, size int) {
		if size < 1 || size > 500 || len(text) > 4000 {
			return
		}
		c := DefaultTrainer(size)
		c.MinFrequency = 1
		tr, err := NewTrainer(c)
		if err != nil {
			t.Fatal(err)
		}
		tr.Add(text)
		if tr.Words() == 0 {
			return
		}
		tk, err := tr.Train()
		if err != nil {
			t.Fatal(err)
		}
		// With every character in the alphabet, only over-long words are unknown.
		checkWordsRebuilt(t, tk, text)
	})
}

// TestCoverage counts by hand: "the running dog" is 3 words in 4 pieces (run ##ning), "zebra"
// is one word that becomes [UNK].
func TestCoverage(t *testing.T) {
	v, err := NewVocab([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "run", "##ning", "dog"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := New(v, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	words, pieces, unk := tok.Coverage([]string{"the running dog", "zebra", ""})
	if words != 4 || pieces != 5 || unk != 1 {
		t.Errorf("Coverage: %d words, %d pieces, %d unknown; want 4, 5, 1", words, pieces, unk)
	}
}
