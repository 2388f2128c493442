package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// tinyPretrained writes a small random BertForPreTraining with a vocabulary of the test words
// to a folder, as a pre-training run would leave it.
func tinyPretrained(t *testing.T) string {
	t.Helper()
	words := strings.Fields(`the a cat dog sat on mat is was sky blue red green color what it . ? ,
		good great fine nice bad awful poor dull movie film play ##ing ##ed`)
	v, err := tokenizer.NewVocab(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, words...))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New(v, tokenizer.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := bert.DefaultConfig()
	c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = v.Len(), 32, 2, 2, 64
	c.MaxPositionEmbeddings = 64
	m, err := bert.NewRandom(c, bert.AllHeads, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pretrained")
	if err := hf.SaveFolder(dir, m, tok, hf.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sentimentTSV is a separable classification set: the label is the adjective's polarity.
func sentimentTSV(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for i := range n {
		label, adj := "positive", []string{"good", "great", "fine", "nice"}
		if i%2 == 1 {
			label, adj = "negative", []string{"bad", "awful", "poor", "dull"}
		}
		noun := []string{"movie", "film", "play"}[rng.IntN(3)]
		a := adj[rng.IntN(4)]
		switch rng.IntN(3) {
		case 0:
			fmt.Fprintf(&b, "%s\tthe %s is %s\n", label, noun, a)
		case 1:
			fmt.Fprintf(&b, "%s\ta %s %s .\n", label, a, noun)
		default:
			fmt.Fprintf(&b, "%s\tthe %s was %s , the cat sat\n", label, noun, a)
		}
	}
	return b.String()
}

// evalJSON runs bertlab eval --json and returns the object it printed.
func evalJSON(t *testing.T, args ...string) map[string]float64 {
	t.Helper()
	stdout, stderr, code := bertlab(t, "", append([]string{"eval"}, append(args, "--json")...)...)
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, stderr)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(stdout), &m); err != nil || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("eval --json printed %q: %v", stdout, err)
	}
	return m
}

func keys(m map[string]float64) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func TestFinetuneClassifyLearnsAndLoadsBack(t *testing.T) {
	model := tinyPretrained(t)
	trainF, devF := writeFile(t, "train.tsv", sentimentTSV(64, 1)), writeFile(t, "dev.tsv", sentimentTSV(32, 2))
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := bertlab(t, "", "finetune", "--task", "classify", "--model", model, "--train", trainF, "--dev", devF,
		"--out", out, "--epochs", "10", "--batch", "16", "--lr", "5e-3", "--seed", "7", "--warmup", "0.1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Log(stdout)
	for _, want := range []string{"classifier initialised", "not used for BertForSequenceClassification: cls.", "10 epochs of 4 steps",
		"dev (best epoch", "model saved to " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if !strings.Contains(stderr, "epoch 10 dev: accuracy") {
		t.Errorf("no per-epoch dev line in stderr: %s", stderr)
	}
	m := evalJSON(t, "--task", "classify", "--model", out, "--data", devF)
	if !slices.Equal(keys(m), []string{"accuracy", "macro_f1", "n"}) || m["n"] != 32 {
		t.Errorf("eval JSON %v", m)
	}
	if m["accuracy"] < 0.95 {
		t.Errorf("dev accuracy %g after fine-tuning a separable task, want >= 0.95", m["accuracy"])
	}
	f, err := hf.LoadTaskFolder(out, bert.SequenceClassification, hf.TaskLoadOptions{RequireHead: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Model.Labels, []string{"negative", "positive"}) || len(f.Report.Ignored) != 0 || f.Tokenizer == nil {
		t.Errorf("loaded back: labels %q, ignored %v", f.Model.Labels, f.Report.Ignored)
	}
	// The pre-training checkpoint has no classifier to evaluate.
	if _, stderr, code := bertlab(t, "", "eval", "--task", "classify", "--model", model, "--data", devF, "--json"); code == 0 || !strings.Contains(stderr, "fine-tune the model first") {
		t.Errorf("eval of a model without a classifier: exit %d, %s", code, stderr)
	}
	// Fine-tuning again from the fine-tuned folder keeps its classifier.
	stdout, stderr, code = bertlab(t, "", "finetune", "--task", "classify", "--model", out, "--train", trainF, "--out", filepath.Join(t.TempDir(), "again"), "--epochs", "1", "--lr", "0")
	if code != 0 || strings.Contains(stdout, "initialised") {
		t.Errorf("second fine-tune: exit %d, %s %s", code, stdout, stderr)
	}
}

func TestFinetuneTagAndQA(t *testing.T) {
	model := tinyPretrained(t)
	var conll strings.Builder
	tags := map[string]string{"the": "DT", "a": "DT", "cat": "NN", "dog": "NN", "mat": "NN", "sat": "VBD", "on": "IN", "playing": "VBG", ".": "."}
	rng := rand.New(rand.NewPCG(3, 3))
	for range 24 {
		for _, w := range []string{[]string{"the", "a"}[rng.IntN(2)], []string{"cat", "dog"}[rng.IntN(2)], "sat", "on", "the", "mat", "."} {
			fmt.Fprintf(&conll, "%s\t%s\n", w, tags[w])
		}
		conll.WriteString("\n")
	}
	conllF := writeFile(t, "pos.conll", conll.String())
	out := filepath.Join(t.TempDir(), "tagger")
	if _, stderr, code := bertlab(t, "", "finetune", "--task", "tag", "--model", model, "--train", conllF, "--dev", conllF, "--out", out, "--epochs", "4", "--batch", "8", "--lr", "5e-3", "--group-by-length"); code != 0 {
		t.Fatalf("tag: exit %d: %s", code, stderr)
	}
	m := evalJSON(t, "--task", "tag", "--model", out, "--data", conllF)
	if !slices.Equal(keys(m), []string{"entity_f1", "n", "token_accuracy"}) || m["n"] != 24 || m["token_accuracy"] < 0.9 {
		t.Errorf("tag eval %v", m)
	}

	squad := `{"version": "1.1", "data": [{"title": "t", "paragraphs": [
		{"context": "the sky is blue .", "qas": [{"id": "1", "question": "what color is the sky ?", "answers": [{"text": "blue", "answer_start": 11}]}]},
		{"context": "the cat was red , the dog sat .", "qas": [{"id": "2", "question": "what color is the cat ?", "answers": [{"text": "red", "answer_start": 12}]}]},
		{"context": "a dog is green .", "qas": [{"id": "3", "question": "what color is the dog ?", "answers": [{"text": "green", "answer_start": 9}]}]}]}]}`
	squadF := writeFile(t, "qa.json", squad)
	out = filepath.Join(t.TempDir(), "qa")
	if _, stderr, code := bertlab(t, "", "finetune", "--task", "qa", "--model", model, "--train", squadF, "--out", out, "--epochs", "2", "--batch", "2", "--seq", "24"); code != 0 {
		t.Fatalf("qa: exit %d: %s", code, stderr)
	}
	preds := filepath.Join(t.TempDir(), "predictions.json")
	m = evalJSON(t, "--task", "qa", "--model", out, "--data", squadF, "--predictions", preds)
	if !slices.Equal(keys(m), []string{"exact_match", "f1", "n"}) || m["n"] != 3 {
		t.Errorf("qa eval %v", m)
	}
	var answers map[string]string
	if js, err := os.ReadFile(preds); err != nil || json.Unmarshal(js, &answers) != nil || len(answers) != 3 {
		t.Errorf("predictions file: %s, %v", js, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(out, hf.ConfigFile))
	if !strings.Contains(string(cfg), `"BertForQuestionAnswering"`) || strings.Contains(string(cfg), "id2label") {
		t.Errorf("QA config.json: %s", cfg)
	}
}

func TestFinetuneErrors(t *testing.T) {
	model := tinyPretrained(t)
	good := writeFile(t, "good.tsv", "positive\tgood\nnegative\tbad\n")
	tests := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no task", []string{"finetune", "--model", model, "--train", good, "--out", "x"}, "--task", 2},
		{"bad task", []string{"finetune", "--task", "ner", "--model", model, "--train", good, "--out", "x"}, `--task "ner"`, 2},
		{"no out", []string{"finetune", "--task", "classify", "--model", model, "--train", good}, "usage", 2},
		{"malformed line", []string{"finetune", "--task", "classify", "--model", model, "--out", "x",
			"--train", writeFile(t, "bad.tsv", "positive\tgood\n\tempty label\n")}, "bad.tsv:2: empty label (fatal", 1},
		{"bad squad", []string{"finetune", "--task", "qa", "--model", model, "--out", "x", "--train", writeFile(t, "q.json", "{\n\"data\": [}")}, "q.json: squad: line 2, column 10", 1},
		{"empty file", []string{"finetune", "--task", "tag", "--model", model, "--out", "x", "--train", writeFile(t, "e.conll", "\n\n")}, "no examples", 1},
		{"eval without a head", []string{"eval", "--task", "classify", "--model", model, "--data", good}, "fine-tune the model first", 1},
	}
	for _, tc := range tests {
		_, stderr, code := bertlab(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, stderr, tc.code, tc.want)
		}
	}
}

func TestFinetuneLabelsOnlyInDev(t *testing.T) {
	model := tinyPretrained(t)
	trainF := writeFile(t, "train.tsv", "positive\tgood\nnegative\tbad\n")
	devF := writeFile(t, "dev.tsv", "neutral\tfine\npositive\tgreat\n")
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := bertlab(t, "", "finetune", "--task", "classify", "--model", model, "--train", trainF, "--dev", devF, "--out", out, "--epochs", "1")
	if code != 0 || !strings.Contains(stdout, `labels ["neutral"] occur in `+devF+` but not in`) {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	f, err := hf.LoadTaskFolder(out, bert.SequenceClassification, hf.TaskLoadOptions{RequireHead: true})
	if err != nil || !slices.Equal(f.Model.Labels, []string{"negative", "neutral", "positive"}) {
		t.Fatalf("labels %q, %v", f.Model.Labels, err)
	}
	// A label the model does not know is scored as wrong, with a note.
	otherF := writeFile(t, "other.tsv", "mixed\tfine\npositive\tgreat\n")
	stdout, stderr, code = bertlab(t, "", "eval", "--task", "classify", "--model", out, "--data", otherF, "--json")
	if code != 0 || !strings.Contains(stderr, `1 examples have labels the model does not know (["mixed"])`) || !strings.Contains(stdout, `"n":2`) {
		t.Errorf("eval with an unknown label: exit %d, %s %s", code, stdout, stderr)
	}
}
