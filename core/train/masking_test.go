package train

import (
	"math"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

func TestNumToPredict(t *testing.T) {
	m := &Masker{Config: MaskingConfig{Prob: 0.15, MaxPredictions: 20}}
	tests := []struct{ n, want int }{
		{0, 0}, {1, 1}, {3, 1}, {10, 2}, // 1.5 rounds to even: 2
		{30, 4}, // 4.5 rounds to even: 4
		{100, 15}, {125, 19}, {1000, 20},
	}
	for _, tc := range tests {
		if got := m.NumToPredict(tc.n); got != tc.want {
			t.Errorf("NumToPredict(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// maskSeq is [CLS] 60 tokens [SEP] 40 tokens [SEP] [PAD] [PAD] over ids 5..v-1.
func maskSeq(v int, seed uint64) []int {
	rng := newRNG(seed, 99)
	ids := []int{tCLS}
	for i := range 100 {
		if i == 60 {
			ids = append(ids, tSEP)
		}
		ids = append(ids, 5+rng.IntN(v-5))
	}
	return append(ids, tSEP, tPad, tPad)
}

// TestMaskStatistics checks over many draws: exactly round(15%) of the 100 maskable tokens
// predicted, every maskable position about equally often, specials and padding never, and the
// 80/10/10 split within sampling error.
func TestMaskStatistics(t *testing.T) {
	const V, draws = 1000, 3000
	tok := numberedTokenizer(t, V)
	m, err := NewMasker(tok, MaskingConfig{Prob: 0.15, MaxPredictions: 20})
	if err != nil {
		t.Fatal(err)
	}
	ids := maskSeq(V, 1)
	perPos := make([]int, len(ids))
	var masked, random, kept, total int
	for d := range draws {
		in, labels := m.Mask(ids, newRNG(7, uint64(d)))
		n := 0
		for i, y := range labels {
			if y == bert.IgnoreIndex {
				if in[i] != ids[i] {
					t.Fatalf("draw %d: unpredicted position %d changed from %d to %d", d, i, ids[i], in[i])
				}
				continue
			}
			if y != ids[i] {
				t.Fatalf("draw %d: label %d at %d, want the original %d", d, y, i, ids[i])
			}
			n++
			perPos[i]++
			switch in[i] {
			case tMask:
				masked++
			case ids[i]:
				kept++
			default:
				random++
			}
		}
		if n != 15 {
			t.Fatalf("draw %d: %d predictions, want 15 (15%% of 100)", d, n)
		}
		total += n
	}
	for i, id := range ids {
		if id < 5 && perPos[i] != 0 {
			t.Errorf("special token %d at %d chosen %d times", id, i, perPos[i])
		}
		// Each maskable position: Binomial(draws, 0.15), sd about 20.
		if id >= 5 && math.Abs(float64(perPos[i])-0.15*draws) > 5*math.Sqrt(draws*0.15*0.85) {
			t.Errorf("position %d chosen %d times of %d, want about %.0f", i, perPos[i], draws, 0.15*draws)
		}
	}
	sd := func(p float64) float64 { return 5 * math.Sqrt(p*(1-p)/float64(total)) }
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"[MASK]", float64(masked) / float64(total), 0.8 + 0.2*0.5/V}, // a random draw may give [MASK]
		{"random", float64(random) / float64(total), 0.1 * (1 - 2.0/V)},
		{"unchanged", float64(kept) / float64(total), 0.1 + 0.1/V},
	} {
		if math.Abs(c.got-c.want) > sd(c.want) {
			t.Errorf("%s: %.4f of the predictions, want %.4f ± %.4f", c.name, c.got, c.want, sd(c.want))
		}
		t.Logf("%-9s %.4f (want %.4f)", c.name, c.got, c.want)
	}
}

func TestMaskCapAndDeterminism(t *testing.T) {
	tok := numberedTokenizer(t, 500)
	m, err := NewMasker(tok, MaskingConfig{Prob: 0.5, MaxPredictions: 7})
	if err != nil {
		t.Fatal(err)
	}
	ids := maskSeq(500, 2)
	a, la := m.Mask(ids, newRNG(3, 4))
	b, lb := m.Mask(ids, newRNG(3, 4))
	if !slices.Equal(a, b) || !slices.Equal(la, lb) {
		t.Error("the same seed gave different masks")
	}
	c, lc := m.Mask(ids, newRNG(3, 5))
	if slices.Equal(a, c) && slices.Equal(la, lc) {
		t.Error("different seeds gave the same masks")
	}
	n := 0
	for _, y := range la {
		if y != bert.IgnoreIndex {
			n++
		}
	}
	if n != 7 {
		t.Errorf("%d predictions, want the cap of 7", n)
	}
	// A sequence of specials only predicts nothing.
	_, l := m.Mask([]int{tCLS, tSEP, tPad}, newRNG(1))
	for _, y := range l {
		if y != bert.IgnoreIndex {
			t.Errorf("labels %v for specials only", l)
		}
	}
}

// TestWholeWordMasking checks that the pieces of a word are chosen together and that the
// number predicted stays within 15% (groups that would overshoot are skipped).
func TestWholeWordMasking(t *testing.T) {
	tok := testTokenizer(t, []string{"un", "##believ", "##able", "cat", "dog", "run", "##ning", "sun"})
	id := func(s string) int { i, _ := tok.Vocab().ID(s); return i }
	// Words: [un ##believ ##able] [cat] [run ##ning] [dog] [sun] ..., repeated.
	words := [][]int{{id("un"), id("##believ"), id("##able")}, {id("cat")}, {id("run"), id("##ning")}, {id("dog")}, {id("sun")}}
	ids := []int{tCLS}
	var wordOf []int // index of the word of each position, -1 for specials
	wordOf = append(wordOf, -1)
	w := 0
	for r := range 8 {
		for _, word := range words {
			ids = append(ids, word...)
			for range word {
				wordOf = append(wordOf, w)
			}
			w++
		}
		if r == 3 {
			ids, wordOf = append(ids, tSEP), append(wordOf, -1)
		}
	}
	ids, wordOf = append(ids, tSEP), append(wordOf, -1)
	maskable := len(ids) - 3
	m, err := NewMasker(tok, MaskingConfig{Prob: 0.15, WholeWord: true})
	if err != nil {
		t.Fatal(err)
	}
	want := m.NumToPredict(maskable)
	partial := 0
	var sum int
	const draws = 500
	for d := range draws {
		_, labels := m.Mask(ids, newRNG(11, uint64(d)))
		chosen := map[int]int{}
		n := 0
		for i, y := range labels {
			if y != bert.IgnoreIndex {
				if wordOf[i] < 0 {
					t.Fatalf("special token chosen at %d", i)
				}
				chosen[wordOf[i]]++
				n++
			}
		}
		for wi, c := range chosen {
			if c != len(words[wi%len(words)]) {
				partial++
			}
		}
		if n > want || n < want-2 { // at most one skipped group short of the target
			t.Errorf("draw %d: %d predictions, want %d (or just under)", d, n, want)
		}
		sum += n
	}
	if partial > 0 {
		t.Errorf("%d words were masked in part", partial)
	}
	t.Logf("whole words: %.2f predictions on average, target %d of %d", float64(sum)/draws, want, maskable)
}

func TestNewMaskerRejects(t *testing.T) {
	tok := numberedTokenizer(t, 10)
	for _, c := range []MaskingConfig{{Prob: 0}, {Prob: 1.5}, {Prob: math.NaN()}, {Prob: 0.15, MaxPredictions: -1}} {
		if _, err := NewMasker(tok, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
