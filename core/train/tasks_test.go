package train

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// ftWords is the vocabulary of the fine-tuning tests, after the five special tokens.
var ftWords = strings.Fields(`the a cat dog sat on mat is was sky blue red green color what where did it . ? , :
	good great fine nice bad awful poor dull movie film play ##ing ##ed cafe john paris lives in`)

// ftTokenizer is an uncased tokenizer of [PAD] [UNK] [CLS] [SEP] [MASK] and ftWords.
func ftTokenizer(t testing.TB) *tokenizer.Tokenizer {
	t.Helper()
	v, err := tokenizer.NewVocab(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, ftWords...))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New(v, tokenizer.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func ftID(t testing.TB, tok *tokenizer.Tokenizer, w string) int {
	id, ok := tok.Vocab().ID(w)
	if !ok {
		t.Fatalf("%q not in the test vocabulary", w)
	}
	return id
}

func TestClassificationData(t *testing.T) {
	tok := ftTokenizer(t)
	ex := []dataset.Example{{Label: "pos", Text: "a good movie"}, {Label: "neg", Text: "the film is dull , the play is bad"}}
	labels := ClassificationLabels(ex)
	if !slices.Equal(labels, []string{"neg", "pos"}) {
		t.Fatalf("labels %q", labels)
	}
	d, err := NewClassificationData(tok, ex, labels, 8)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 2 || d.Examples() != 2 || d.Truncated != 1 || d.Task() != bert.SequenceClassification || d.MainMetric() != "accuracy" {
		t.Errorf("len %d, examples %d, truncated %d", d.Len(), d.Examples(), d.Truncated)
	}
	id := func(w string) int { return ftID(t, tok, w) }
	b, y, n := d.Batch([]int{0, 1})
	wantIDs := []int{2, id("a"), id("good"), id("movie"), 3, 0, 0, 0,
		2, id("the"), id("film"), id("is"), id("dull"), id(","), id("the"), 3}
	if b.B != 2 || b.S != 8 || !slices.Equal(b.InputIDs, wantIDs) || !slices.Equal(y, []int{1, 0}) || n != 13 {
		t.Errorf("batch %+v labels %v tokens %d", b, y, n)
	}
	if !slices.Equal(b.AttentionMask[:8], []int{1, 1, 1, 1, 1, 0, 0, 0}) {
		t.Errorf("attention mask %v", b.AttentionMask)
	}

	pairs := []dataset.Example{{Label: "yes", Text: "the cat", Pair: "a dog"}, {Label: "no", Text: "it", Pair: "it"}}
	dp, err := NewClassificationData(tok, pairs, []string{"no", "yes"}, 16)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ = dp.Batch([]int{0})
	if !slices.Equal(b.InputIDs, []int{2, id("the"), id("cat"), 3, id("a"), id("dog"), 3}) || !slices.Equal(b.TokenTypeIDs, []int{0, 0, 0, 0, 1, 1, 1}) {
		t.Errorf("pair batch %v types %v", b.InputIDs, b.TokenTypeIDs)
	}
	// A label the model does not know is not trained on, and is a class of its own in scoring.
	du, err := NewClassificationData(tok, append(ex, dataset.Example{Label: "neg", Text: "bad"}), []string{"other", "pos"}, 16)
	if err != nil {
		t.Fatal(err)
	}
	_, y, _ = du.Batch([]int{0, 1, 2})
	if du.Unknown != 2 || !slices.Equal(y, []int{1, bert.IgnoreIndex, bert.IgnoreIndex}) || !slices.Equal(du.gold, []int{1, 2, 2}) {
		t.Errorf("unknown labels: %d, batch labels %v, gold %v", du.Unknown, y, du.gold)
	}
}

func TestTaggingData(t *testing.T) {
	tok := ftTokenizer(t)
	sents := []dataset.TaggedSentence{
		{Tokens: []string{"John", "lives", "in", "Paris", "."}, Tags: []string{"B-PER", "O", "O", "B-LOC", "O"}},
		{Tokens: []string{"playing", "played", "cat"}, Tags: []string{"VBG", "VBD", "NN"}},
	}
	labels := TagLabels(sents)
	if !slices.Equal(labels, []string{"B-LOC", "B-PER", "NN", "O", "VBD", "VBG"}) {
		t.Fatalf("labels %q", labels)
	}
	d, err := NewTaggingData(tok, sents, labels, 16)
	if err != nil {
		t.Fatal(err)
	}
	if d.MainMetric() != "entity_f1" || d.Dropped != 0 {
		t.Errorf("main metric %s, dropped %d", d.MainMetric(), d.Dropped)
	}
	b, y, _ := d.Batch([]int{1, 0})
	id := func(w string) int { return ftID(t, tok, w) }
	// "playing" -> play ##ing: the tag on "play", IgnoreIndex on "##ing".
	wantIDs := []int{2, id("play"), id("##ing"), id("play"), id("##ed"), id("cat"), 3}
	if !slices.Equal(b.InputIDs[:7], wantIDs) {
		t.Errorf("ids %v, want %v", b.InputIDs[:7], wantIDs)
	}
	const ig = bert.IgnoreIndex
	if want := []int{ig, 5, ig, 4, ig, 2, ig}; !slices.Equal(y[:7], want) {
		t.Errorf("labels %v, want %v", y[:7], want)
	}
	if len(y) != 2*b.S || y[b.S+b.S-1] != ig {
		t.Errorf("labels of the padded batch: %v", y)
	}
	// A sequence of 5 tokens holds [CLS], 3 pieces and [SEP]: "playing" and "played" (whose
	// second piece is cut) are scored, "cat" is dropped.
	d, err = NewTaggingData(tok, sents[1:], labels, 5)
	if err != nil {
		t.Fatal(err)
	}
	if d.Dropped != 1 || !slices.Equal(d.feats[0].labels, []int{ig, 5, ig, 4, ig}) || !slices.Equal(d.words[0], []int{0, 1}) || !slices.Equal(d.first[0], []int{1, 3}) {
		t.Errorf("dropped %d, labels %v, words %v, first pieces %v", d.Dropped, d.feats[0].labels, d.words[0], d.first[0])
	}
	pos, _ := NewTaggingData(tok, sents[1:], []string{"NN", "VBD", "VBG"}, 16)
	if pos.MainMetric() != "token_accuracy" {
		t.Errorf("part-of-speech main metric %s", pos.MainMetric())
	}
	// Tags the model does not know are not trained on, but scored (as wrong).
	du, err := NewTaggingData(tok, sents, []string{"NN", "O"}, 16)
	if err != nil {
		t.Fatal(err)
	}
	if du.Unknown != 4 || !slices.Equal(du.feats[0].labels, []int{ig, ig, 1, 1, ig, 1, ig}) || len(du.first[0]) != 5 {
		t.Errorf("unknown tags: %d, labels %v, first pieces %v", du.Unknown, du.feats[0].labels, du.first[0])
	}
}

// qaExample is a long context with the answer near its end.
func qaExample() dataset.SQuADExample {
	ctx := strings.Repeat("the cat sat on the mat . ", 4) + "Café: the sky is blue. " + strings.Repeat("the dog sat . ", 2)
	start := strings.Index(ctx, "blue")
	return dataset.SQuADExample{ID: "q", Context: ctx, Question: "  what color is the sky ?", Answers: []dataset.SQuADAnswer{{Text: "blue", Start: len([]rune(ctx[:start]))}}}
}

func TestQAWindows(t *testing.T) {
	tok := ftTokenizer(t)
	ex := qaExample()
	c := QAConfig{MaxSeqLength: 16, DocStride: 3, MaxQueryLength: 8, MaxAnswerLength: 5, NBest: 20}
	d, err := NewQAData(tok, []dataset.SQuADExample{ex}, c)
	if err != nil {
		t.Fatal(err)
	}
	ctxToks := tok.Tokenize(ex.Context)
	head := 1 + len(tok.Tokenize("what color is the sky ?")) + 1 // 8
	room := c.MaxSeqLength - head - 1                            // 7 context tokens a window
	if want := 1 + (len(ctxToks)-room+(room-c.DocStride)-1)/(room-c.DocStride); d.Len() != want {
		t.Errorf("%d windows over %d context tokens, want %d", d.Len(), len(ctxToks), want)
	}
	labelled := 0
	for i, f := range d.feats {
		if len(f.ids) > c.MaxSeqLength || f.ids[0] != tok.CLSID() || f.ids[head-1] != tok.SEPID() || f.ids[len(f.ids)-1] != tok.SEPID() || f.types[head] != 1 || f.types[head-1] != 0 {
			t.Errorf("window %d: ids %v types %v", i, f.ids, f.types)
		}
		if i > 0 { // neighbours share DocStride tokens
			prev := d.offsets[i-1]
			if !slices.Equal(prev[len(prev)-c.DocStride:], d.offsets[i][:c.DocStride]) {
				t.Errorf("windows %d and %d do not overlap by %d tokens", i-1, i, c.DocStride)
			}
		}
		s, e := f.labels[0], f.labels[1]
		if s == 0 && e == 0 {
			continue
		}
		labelled++
		if got := ex.Context[d.offsets[i][s-head][0]:d.offsets[i][e-head][1]]; got != "blue" {
			t.Errorf("window %d: labelled span %q", i, got)
		}
	}
	if last := d.offsets[d.Len()-1]; last[len(last)-1] != [2]int{ctxToks[len(ctxToks)-1].Start, ctxToks[len(ctxToks)-1].End} {
		t.Error("the last window does not end the context")
	}
	if labelled == 0 || labelled+d.Outside != d.Len() {
		t.Errorf("%d windows labelled with the answer, %d outside, of %d", labelled, d.Outside, d.Len())
	}
	// A question longer than MaxQueryLength is cut.
	long := ex
	long.Question = strings.Repeat("what ", 20)
	d2, err := NewQAData(tok, []dataset.SQuADExample{long}, c)
	if err != nil || d2.QuestionsTruncated != 1 {
		t.Errorf("long question: %v, truncated %d", err, d2.QuestionsTruncated)
	}
	if _, err := NewQAData(tok, []dataset.SQuADExample{ex}, QAConfig{MaxSeqLength: 16, DocStride: 5, MaxQueryLength: 8, MaxAnswerLength: 5, NBest: 5}); err == nil {
		t.Error("a stride as large as the window's room accepted")
	}
}

func TestQAAnswersPostprocessing(t *testing.T) {
	tok := ftTokenizer(t)
	ex := qaExample()
	c := QAConfig{MaxSeqLength: 16, DocStride: 3, MaxQueryLength: 8, MaxAnswerLength: 3, NBest: 20}
	d, err := NewQAData(tok, []dataset.SQuADExample{ex}, c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	logits := make([][]float32, d.Len())
	var answerWindow int
	for i, f := range d.feats {
		logits[i] = make([]float32, 2*len(f.ids))
		for j := range logits[i] {
			logits[i][j] = float32(rng.NormFloat64() * 0.1)
		}
		// Question tokens score highest, but are not context: never an answer.
		logits[i][2*1], logits[i][2*1+1] = 50, 50
		if f.labels[0] != 0 {
			answerWindow = i
		}
	}
	f := d.feats[answerWindow]
	s, e := f.labels[0], f.labels[1]
	logits[answerWindow][2*s] = 10
	logits[answerWindow][2*e+1] = 10
	// A better-scoring span that is too long (MaxAnswerLength 3) and one that ends before it starts.
	logits[0][2*8] = 12
	logits[0][2*14+1] = 12
	logits[1][2*12] = 15
	logits[1][2*9+1] = 15
	got := d.answers(logits)
	if len(got) != 1 || got[0].Text != "blue" || got[0].ID != "q" {
		t.Errorf("answers %+v, want blue", got)
	}
	m := Metrics{}
	m["em"] = SQuADExactMatch(got[0].Text, []string{"blue"})
	if m["em"] != 1 {
		t.Error("exact match of the right answer")
	}
}

func TestTaskDataEvaluateChecksTheModel(t *testing.T) {
	tok := ftTokenizer(t)
	m := ftModel(t, tok, bert.SequenceClassification, []string{"neg", "pos"})
	d, err := NewClassificationData(tok, []dataset.Example{{Label: "a", Text: "good"}}, []string{"a", "b"}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Evaluate(context.Background(), m, 4); err == nil {
		t.Error("a model of other labels accepted")
	}
	td, _ := NewTaggingData(tok, []dataset.TaggedSentence{{Tokens: []string{"cat"}, Tags: []string{"neg"}}}, []string{"neg", "pos"}, 8)
	if _, err := td.Evaluate(context.Background(), m, 4); err == nil {
		t.Error("tagging data evaluated with a sequence classifier")
	}
}
