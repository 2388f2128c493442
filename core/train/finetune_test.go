package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// ftModel is a small random task model for tok's vocabulary.
func ftModel(t testing.TB, tok *tokenizer.Tokenizer, task bert.Task, labels []string) *bert.TaskModel {
	t.Helper()
	c := bert.DefaultConfig()
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = tok.Vocab().Len(), 32, 2, 2, 64
	c.MaxPositionEmbeddings = 64
	body, err := bert.NewRandom(c, bert.Heads{Pooler: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bert.NewTaskModel(body, task, labels, 2)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sentiment draws n examples of a separable task: the label is the polarity of the adjective.
func sentiment(n int, seed uint64) []dataset.Example {
	rng := rand.New(rand.NewPCG(seed, 9))
	pos, neg := []string{"good", "great", "fine", "nice"}, []string{"bad", "awful", "poor", "dull"}
	nouns := []string{"movie", "film", "play"}
	var out []dataset.Example
	for i := range n {
		label, adj := "positive", pos
		if i%2 == 1 {
			label, adj = "negative", neg
		}
		a, noun := adj[rng.IntN(len(adj))], nouns[rng.IntN(len(nouns))]
		var text string
		switch rng.IntN(3) {
		case 0:
			text = "the " + noun + " is " + a
		case 1:
			text = "a " + a + " " + noun + " ."
		default:
			text = "the " + noun + " was " + a + " , the cat sat"
		}
		out = append(out, dataset.Example{Label: label, Text: text})
	}
	return out
}

func TestFinetuneClassifierLearnsSeparableTask(t *testing.T) {
	tok := ftTokenizer(t)
	train, dev := sentiment(64, 1), sentiment(32, 2)
	labels := ClassificationLabels(train)
	run := func() (Metrics, []Event) {
		m := ftModel(t, tok, bert.SequenceClassification, labels)
		td, err := NewClassificationData(tok, train, labels, 32)
		if err != nil {
			t.Fatal(err)
		}
		dd, err := NewClassificationData(tok, dev, labels, 32)
		if err != nil {
			t.Fatal(err)
		}
		c := DefaultFinetune()
		c.Epochs, c.BatchSize, c.LR, c.Seed = 10, 16, 5e-3, 7
		f, err := NewFinetuner(m, td, dd, c)
		if err != nil {
			t.Fatal(err)
		}
		var evs []Event
		got, err := f.Run(context.Background(), func(e Event) { evs = append(evs, e) })
		if err != nil {
			t.Fatal(err)
		}
		// The model left is the best epoch's: evaluating it again gives Best.
		again, err := dd.Evaluate(context.Background(), m, 8)
		if err != nil {
			t.Fatal(err)
		}
		if again["accuracy"] != got["accuracy"] || f.BestEpoch < 1 {
			t.Errorf("model left scores %v, run reported %v (best epoch %d)", again, got, f.BestEpoch)
		}
		return got, evs
	}
	m1, evs := run()
	var steps, evals, done int
	first, last := evs[0].Loss, 0.0
	for _, e := range evs {
		switch e.Kind {
		case EventStep:
			steps++
			last = e.Loss
			if e.Step != steps || e.TotalSteps != 40 || e.Tokens <= 0 {
				t.Errorf("step event %+v", e)
			}
		case EventEval:
			evals++
			if _, ok := e.Metrics["macro_f1"]; !ok || e.Epoch != float64(evals) {
				t.Errorf("eval event %+v", e)
			}
		case EventDone:
			done++
		}
	}
	t.Logf("loss %.4f -> %.4f; dev %v", first, last, m1)
	if steps != 40 || evals != 10 || done != 1 || evs[len(evs)-1].Kind != EventDone {
		t.Errorf("%d steps, %d evaluations, %d done events", steps, evals, done)
	}
	if m1["accuracy"] < 0.95 || m1["n"] != 32 {
		t.Errorf("dev accuracy %g of %g examples, want >= 0.95", m1["accuracy"], m1["n"])
	}
	// Deterministic for a seed.
	m2, evs2 := run()
	if !equalMetrics(m1, m2) || len(evs2) != len(evs) {
		t.Fatalf("second run %v, first %v", m2, m1)
	}
	for i := range evs {
		if evs[i].Loss != evs2[i].Loss {
			t.Fatalf("event %d: loss %v, first run %v", i, evs2[i].Loss, evs[i].Loss)
		}
	}
}

func equalMetrics(a, b Metrics) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// tagged draws n sentences whose tags are functions of the words (part of speech).
func tagged(n int, seed uint64) []dataset.TaggedSentence {
	rng := rand.New(rand.NewPCG(seed, 3))
	tag := map[string]string{"the": "DT", "a": "DT", "cat": "NN", "dog": "NN", "mat": "NN", "sat": "VBD", "was": "VBD",
		"good": "JJ", "blue": "JJ", "on": "IN", "in": "IN", "playing": "VBG", ".": "."}
	var out []dataset.TaggedSentence
	for range n {
		words := []string{[]string{"the", "a"}[rng.IntN(2)], []string{"cat", "dog"}[rng.IntN(2)]}
		switch rng.IntN(3) {
		case 0:
			words = append(words, "sat", "on", "the", "mat", ".")
		case 1:
			words = append(words, "was", []string{"good", "blue", "playing"}[rng.IntN(3)], ".")
		default:
			words = append(words, "sat", "in", "a", "mat")
		}
		s := dataset.TaggedSentence{Tokens: words}
		for _, w := range words {
			s.Tags = append(s.Tags, tag[w])
		}
		out = append(out, s)
	}
	return out
}

// taggingSets is the tagging task of the tests: 48 training and 16 dev sentences of tagged,
// their labels, as datasets for tok of at most 32 tokens.
func taggingSets(t *testing.T, tok *tokenizer.Tokenizer) (labels []string, td, dd *TaggingData) {
	t.Helper()
	train, dev := tagged(48, 1), tagged(16, 2)
	labels = TagLabels(train)
	td, err := NewTaggingData(tok, train, labels, 32)
	if err != nil {
		t.Fatal(err)
	}
	dd, err = NewTaggingData(tok, dev, labels, 32)
	if err != nil {
		t.Fatal(err)
	}
	return labels, td, dd
}

func TestFinetuneTaggerLearns(t *testing.T) {
	tok := ftTokenizer(t)
	labels, td, dd := taggingSets(t, tok)
	m := ftModel(t, tok, bert.TokenClassification, labels)
	c := DefaultFinetune()
	c.Epochs, c.BatchSize, c.LR, c.Seed = 6, 16, 3e-3, 1
	f, err := NewFinetuner(m, td, dd, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dev %v", got)
	if dd.MainMetric() != "token_accuracy" || got["token_accuracy"] < 0.95 || got["n"] != 16 {
		t.Errorf("dev %v, want token accuracy >= 0.95", got)
	}
}

// colors draws n QA examples whose answer is the one color word of a short context.
func colors(n int, seed uint64) []dataset.SQuADExample {
	rng := rand.New(rand.NewPCG(seed, 5))
	subjects := []string{"sky", "cat", "dog", "mat", "film", "movie", "play"}
	var out []dataset.SQuADExample
	for i := range n {
		s, c := subjects[rng.IntN(len(subjects))], []string{"blue", "red", "green"}[rng.IntN(3)]
		var ctx string
		switch rng.IntN(3) {
		case 0:
			ctx = "the " + s + " is " + c + " ."
		case 1:
			ctx = "a " + s + " was " + c + " , the cat sat ."
		default:
			ctx = "the dog sat on the mat . the " + s + " is " + c + " ."
		}
		at := strings.Index(ctx, c)
		out = append(out, dataset.SQuADExample{ID: fmt.Sprint(i), Context: ctx, Question: "what color is the " + s + " ?",
			Answers: []dataset.SQuADAnswer{{Text: c, Start: at}}})
	}
	return out
}

func TestFinetuneQALearns(t *testing.T) {
	tok := ftTokenizer(t)
	m := ftModel(t, tok, bert.QuestionAnswering, nil)
	c := QAConfig{MaxSeqLength: 24, DocStride: 4, MaxQueryLength: 8, MaxAnswerLength: 4, NBest: 5}
	td, err := NewQAData(tok, colors(48, 1), c)
	if err != nil {
		t.Fatal(err)
	}
	// The dev set has a long context, in several windows, whose answer only one window holds.
	dd, err := NewQAData(tok, append(colors(15, 2), qaExample()), c)
	if err != nil {
		t.Fatal(err)
	}
	if dd.Len() < 18 {
		t.Fatalf("%d dev windows: the long context is not split", dd.Len())
	}
	fc := DefaultFinetune()
	fc.Epochs, fc.BatchSize, fc.LR = 6, 16, 5e-3
	f, err := NewFinetuner(m, td, dd, fc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after %d steps: %v", f.Steps, got)
	if got["n"] != 16 || got["exact_match"] < 0.9 || got["f1"] < 0.9 {
		t.Errorf("dev %v, want exact match and F1 >= 0.9", got)
	}
	preds, err := dd.Predict(context.Background(), m, 4)
	if err != nil || len(preds) != 16 || preds[15].Text != "blue" || preds[15].ID != "q" {
		t.Errorf("long context: prediction %+v, %v", preds[15], err)
	}
}

func TestFinetuneStepCancelAndErrors(t *testing.T) {
	tok := ftTokenizer(t)
	train := sentiment(10, 1)
	labels := ClassificationLabels(train)
	m := ftModel(t, tok, bert.SequenceClassification, labels)
	td, _ := NewClassificationData(tok, train, labels, 16)
	c := DefaultFinetune()
	c.Epochs, c.BatchSize, c.WarmupRatio = 2, 4, 0.5
	f, err := NewFinetuner(m, td, nil, c)
	if err != nil {
		t.Fatal(err)
	}
	// 10 examples in batches of 4: 3 steps an epoch, the last of 2; ceil(0.5 · 6) = 3 warm-up steps.
	if f.StepsPerEpoch != 3 || f.TotalSteps != 6 || f.WarmupSteps != 3 {
		t.Errorf("steps %d per epoch, %d in all, %d warm-up", f.StepsPerEpoch, f.TotalSteps, f.WarmupSteps)
	}
	before := slices.Clone(m.Head.W.Data)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Step(ctx); !errors.Is(err, context.Canceled) || f.Steps != 0 || !slices.Equal(before, m.Head.W.Data) {
		t.Errorf("cancelled step: %v, steps %d", err, f.Steps)
	}
	if _, err := f.Run(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	var lrs []float64
	for !f.Done() {
		ev, err := f.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		lrs = append(lrs, ev.LR)
	}
	want := []float64{0, c.LR / 3, 2 * c.LR / 3, c.LR, 2 * c.LR / 3, c.LR / 3}
	for i := range want {
		if math.Abs(lrs[i]-want[i]) > 1e-15 {
			t.Errorf("learning rates %v, want %v", lrs, want)
			break
		}
	}
	if f.Epoch() != 2 || f.NeedsEval() || f.Finish() != nil {
		t.Errorf("epoch %g after the run", f.Epoch())
	}
	if _, err := f.Step(context.Background()); err == nil {
		t.Error("a step past the end accepted")
	}
	if _, err := f.Evaluate(context.Background()); err == nil {
		t.Error("evaluation without a dev set accepted")
	}
	// A diverging run stops with ErrNonFinite.
	m.Head.W.Data[0] = float32(math.Inf(1))
	f2, _ := NewFinetuner(m, td, nil, c)
	if _, err := f2.Step(context.Background()); !errors.Is(err, ErrNonFinite) {
		t.Errorf("infinite weight: %v", err)
	}
	for _, bad := range []FinetuneConfig{{Epochs: 0, BatchSize: 1}, {Epochs: 1, BatchSize: 0}, {Epochs: 1, BatchSize: 1, WarmupRatio: 2}, {Epochs: 1, BatchSize: 1, LR: math.NaN()}} {
		if _, err := NewFinetuner(m, td, nil, bad); err == nil {
			t.Errorf("config %+v accepted", bad)
		}
	}
	qd, _ := NewTaggingData(tok, tagged(2, 1), TagLabels(tagged(2, 1)), 16)
	if _, err := NewFinetuner(m, qd, nil, c); err == nil {
		t.Error("tagging data for a sequence classifier accepted")
	}
}
