package train

import (
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 || (math.IsNaN(a) && math.IsNaN(b)) }

func TestAccuracyAndMacroF1(t *testing.T) {
	tests := []struct {
		name       string
		pred, gold []int
		acc, f1    float64
	}{
		// class 0: TP 1, FP 1, FN 1 -> 2/4; class 1: TP 2, FP 1 -> 4/5; class 2: FN 1 -> 0.
		{"three classes", []int{0, 1, 1, 1, 0}, []int{0, 0, 1, 1, 2}, 3.0 / 5, (0.5 + 0.8 + 0) / 3},
		// A class only predicted counts (F1 0), as scikit-learn's labels = gold ∪ pred.
		{"predicted-only class", []int{0, 1}, []int{0, 0}, 0.5, (2.0 / 3) / 2},
		{"perfect", []int{1, 0, 1}, []int{1, 0, 1}, 1, 1},
		{"none", nil, nil, math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		acc, err := Accuracy(tc.pred, tc.gold)
		if err != nil || !near(acc, tc.acc) {
			t.Errorf("%s: accuracy %g, %v; want %g", tc.name, acc, err, tc.acc)
		}
		f1, err := MacroF1(tc.pred, tc.gold)
		if err != nil || !near(f1, tc.f1) {
			t.Errorf("%s: macro F1 %g, %v; want %g", tc.name, f1, err, tc.f1)
		}
	}
	if _, err := Accuracy([]int{1}, nil); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := MacroF1([]int{1}, nil); err == nil {
		t.Error("length mismatch accepted")
	}
}

func TestEntities(t *testing.T) {
	tests := []struct {
		tags []string
		want []Entity
	}{
		{[]string{"B-PER", "I-PER", "O", "B-LOC"}, []Entity{{"PER", 0, 2}, {"LOC", 3, 4}}},
		// IOB1: I after O starts a chunk; B splits two chunks of one type.
		{[]string{"I-PER", "I-PER", "B-PER", "O"}, []Entity{{"PER", 0, 2}, {"PER", 2, 3}}},
		// A change of type ends one chunk and starts another.
		{[]string{"B-PER", "I-LOC", "I-LOC"}, []Entity{{"PER", 0, 1}, {"LOC", 1, 3}}},
		// IOBES.
		{[]string{"S-LOC", "B-ORG", "I-ORG", "E-ORG", "O", "E-PER"}, []Entity{{"LOC", 0, 1}, {"ORG", 1, 4}, {"PER", 5, 6}}},
		// Tags without a prefix (part of speech) are one-token chunks; "IN" is not "I-N".
		{[]string{"NN", "NN", "IN", "O"}, []Entity{{"NN", 0, 1}, {"NN", 1, 2}, {"IN", 2, 3}}},
		{[]string{"O", "O"}, nil},
		{nil, nil},
	}
	for _, tc := range tests {
		if got := Entities(tc.tags); !slices.Equal(got, tc.want) {
			t.Errorf("Entities(%q) = %v, want %v", tc.tags, got, tc.want)
		}
	}
}

func TestEntityScoresAndTokenAccuracy(t *testing.T) {
	// seqeval's README example: f1_score 0.5, accuracy_score 0.8.
	gold := [][]string{{"O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"}, {"B-PER", "I-PER", "O"}}
	pred := [][]string{{"O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"}, {"B-PER", "I-PER", "O"}}
	p, r, f1, err := EntityScores(pred, gold)
	if err != nil || !near(p, 0.5) || !near(r, 0.5) || !near(f1, 0.5) {
		t.Errorf("entity scores %g %g %g, %v; want 0.5 0.5 0.5", p, r, f1, err)
	}
	acc, err := TokenAccuracy(pred, gold)
	if err != nil || !near(acc, 0.8) {
		t.Errorf("token accuracy %g, %v; want 0.8", acc, err)
	}
	// Precision 1/1, recall 1/3: F1 = 2·(1/3)/(4/3) = 0.5.
	p, r, f1, _ = EntityScores([][]string{{"B-A", "O", "O", "O"}}, [][]string{{"B-A", "O", "B-B", "B-A"}})
	if !near(p, 1) || !near(r, 1.0/3) || !near(f1, 0.5) {
		t.Errorf("entity scores %g %g %g; want 1 1/3 0.5", p, r, f1)
	}
	// Nothing predicted, nothing to find: 0, as seqeval.
	if _, _, f1, _ := EntityScores([][]string{{"O"}}, [][]string{{"O"}}); f1 != 0 {
		t.Errorf("F1 of no entities %g, want 0", f1)
	}
	if _, err := TokenAccuracy([][]string{{"O"}}, [][]string{{"O", "O"}}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, _, _, err := EntityScores(nil, [][]string{{"O"}}); err == nil {
		t.Error("length mismatch accepted")
	}
}

func TestNormalizeAnswer(t *testing.T) {
	tests := []struct{ in, want string }{
		{"The Cat", "cat"},
		{"  the  quick, brown fox!  ", "quick brown fox"},
		{"Denver Broncos.", "denver broncos"},
		{"an apple a day", "apple day"},
		{"A-Team", "ateam"},    // punctuation goes before the articles
		{"theater", "theater"}, // not a whole word
		{"1,000 (approx.)", "1000 approx"},
		{"Théâtre de l'Odéon", "théâtre de lodéon"}, // accents and non-ASCII letters stay
		{"the\u2014end", "\u2014end"},               // an em dash is not ASCII punctuation, but ends a word
		{"café a", "café"},                          // é is a word character: "a" stands alone
		{"über\tthe\nlake", "über lake"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := NormalizeAnswer(tc.in); got != tc.want {
			t.Errorf("NormalizeAnswer(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSQuADExactMatchAndF1(t *testing.T) {
	tests := []struct {
		pred  string
		golds []string
		em    float64
		f1    float64
	}{
		{"Denver Broncos", []string{"Denver Broncos", "The Denver Broncos."}, 1, 1},
		{"the Broncos", []string{"Denver Broncos"}, 0, 2.0 / 3}, // p 1/1, r 1/2
		// "cat sat" vs "cat sat on mat": p 2/2, r 2/4.
		{"the cat sat", []string{"a cat sat on the mat"}, 0, 2.0 / 3},
		// Maximum over the gold answers.
		{"cat", []string{"dog", "the cat", "cat dog"}, 1, 1},
		// Common tokens count with multiplicity: p 1/3, r 1.
		{"cat cat cat", []string{"cat"}, 0, 0.5},
		{"", []string{"cat"}, 0, 0},
		{"", []string{""}, 1, 0}, // v1.1: no common token scores 0, even for two empty answers
		{"anything", nil, 0, 0},
	}
	for _, tc := range tests {
		if em := SQuADExactMatch(tc.pred, tc.golds); em != tc.em {
			t.Errorf("exact match(%q, %q) = %g, want %g", tc.pred, tc.golds, em, tc.em)
		}
		if f1 := SQuADF1(tc.pred, tc.golds); !near(f1, tc.f1) {
			t.Errorf("F1(%q, %q) = %g, want %g", tc.pred, tc.golds, f1, tc.f1)
		}
	}
}

func TestMLMStats(t *testing.T) {
	row := []float32{0.1, 0.5, 0.3, 0.2, 0.9, 0.0}
	logits := slices.Concat(row, row, row, row)
	var s MLMStats
	// Label 4 ranks 0, label 3 ranks 3 (0.5, 0.3, 0.9 above), label 5 ranks 5; -100 skipped.
	if err := s.Add(logits, 6, []int{4, 3, 5, -100}); err != nil {
		t.Fatal(err)
	}
	var z float64
	for _, v := range row {
		z += math.Exp(float64(v))
	}
	nll := 3*math.Log(z) - (0.9 + 0.2 + 0.0)
	if s.N != 3 || s.Top1 != 1 || s.Top5 != 2 || math.Abs(s.NLL-nll) > 1e-6 {
		t.Errorf("stats %+v, want N 3, Top1 1, Top5 2, NLL %g", s, nll)
	}
	m := s.Metrics()
	if !near(m["mlm_accuracy"], 1.0/3) || !near(m["mlm_top5"], 2.0/3) || math.Abs(m["perplexity"]-math.Exp(nll/3)) > 1e-6 || m["n"] != 3 {
		t.Errorf("metrics %v", m)
	}
	if err := s.Add(logits[:5], 6, []int{1}); err == nil {
		t.Error("short logits accepted")
	}
	if err := s.Add(row, 6, []int{6}); err == nil {
		t.Error("label outside the vocabulary accepted")
	}
	if p := Perplexity(math.Log(2)); math.Abs(p-2) > 1e-12 {
		t.Errorf("perplexity %g, want 2", p)
	}
}
