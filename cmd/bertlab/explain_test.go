package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
)

// explainRef is what the command tests read of core/explain's reference.
type explainRef struct {
	Candidate int `json:"candidate"`
	Targets   map[string]struct {
		GXI []float64 `json:"gxi"`
	} `json:"targets"`
	SeqHead struct {
		Weight [][]float64 `json:"weight"`
		Bias   []float64   `json:"bias"`
	} `json:"seq_classifier"`
	TokHead struct {
		Weight [][]float64 `json:"weight"`
		Bias   []float64   `json:"bias"`
	} `json:"token_classifier"`
}

func loadExplainRef(t *testing.T) explainRef {
	t.Helper()
	raw, err := os.ReadFile("../../core/explain/testdata/explainref.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref explainRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// explainScores runs bertlab explain --json and returns the tokens and attribution scores.
func explainScores(t *testing.T, args ...string) ([]string, []float64) {
	t.Helper()
	stdout, stderr, code := bertlab(t, "", append([]string{"explain", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Tokens      []string `json:"tokens"`
		Attribution struct {
			Scores []float64 `json:"scores"`
		} `json:"attribution"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return rep.Tokens, rep.Attribution.Scores
}

// A fine-tuned folder is explained with its own head: saved sequence and token classifiers with
// the reference's heads give the reference's gradient x input for class 1 and tag 4 at token 2.
func TestExplainFineTunedFolders(t *testing.T) {
	ref := loadExplainRef(t)
	f, err := hf.LoadFolder(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		task   bert.Task
		w      [][]float64
		b      []float64
		target string
		key    string
	}{
		{bert.SequenceClassification, ref.SeqHead.Weight, ref.SeqHead.Bias, "class:1", "class"},
		{bert.TokenClassification, ref.TokHead.Weight, ref.TokHead.Bias, "tag:2:LABEL_4", "tag"},
	} {
		tm, err := bert.NewTaskModel(f.Model, c.task, bert.DefaultLabelNames(len(c.w)), 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range c.w {
			for j, v := range row {
				tm.Head.W.Row(i)[j] = float32(v)
			}
			tm.Head.B.Data[i] = float32(c.b[i])
		}
		dir := filepath.Join(t.TempDir(), c.key)
		if err := hf.SaveTaskFolder(dir, tm, f.Tokenizer, hf.SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		tokens, scores := explainScores(t, "--model", dir, "--target", c.target, "--pair", "the big cat", "the city of paris is [MASK]")
		want := ref.Targets[c.key].GXI
		if len(scores) != len(want) {
			t.Fatalf("%s: %d scores, want %d", c.key, len(scores), len(want))
		}
		for i, s := range scores {
			if math.Abs(s-want[i]) > 1e-4 {
				t.Errorf("%s token %d %s: %.6f, want %.6f", c.key, i, tokens[i], s, want[i])
			}
		}
	}
}

// bertlab explain --json on the text of core/explain's reference gives the reference's gradient
// x input for the model's own answer at the mask; the text output names every token.
func TestExplainCommand(t *testing.T) {
	ref := loadExplainRef(t)
	stdout, stderr, code := bertlab(t, "", "explain", "--model", fixture, "--pair", "the big cat", "--json", "--lens", "--ablate", "0.1", "the city of paris is [MASK]")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Tokens []string `json:"tokens"`
		Target struct {
			Kind  string `json:"kind"`
			Index int    `json:"index"`
		} `json:"target"`
		Attribution struct {
			Scores []float64 `json:"scores"`
		} `json:"attribution"`
		Lens     *json.RawMessage `json:"lens"`
		Ablation *json.RawMessage `json:"ablation"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if rep.Target.Kind != "mlm" || rep.Target.Index != ref.Candidate || rep.Lens == nil || rep.Ablation == nil {
		t.Fatalf("target %+v, lens %v, ablation %v", rep.Target, rep.Lens != nil, rep.Ablation != nil)
	}
	want := ref.Targets["mlm"].GXI
	if len(rep.Attribution.Scores) != len(want) {
		t.Fatalf("%d scores, want %d", len(rep.Attribution.Scores), len(want))
	}
	for i, s := range rep.Attribution.Scores {
		if math.Abs(s-want[i]) > 1e-4 {
			t.Errorf("token %d %s: %.6f, want %.6f", i, rep.Tokens[i], s, want[i])
		}
	}

	stdout, stderr, code = bertlab(t, "", "explain", "--model", fixture, "--text", "the city of paris is [MASK]", "--target", "paris", "--method", "ig", "--steps", "8", "--importance")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{`why "paris" at token 6?`, "integrated gradients, 8 steps", "completeness gap", "head importance", "[CLS]", "[SEP]"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("text output lacks %q:\n%s", s, stdout)
		}
	}

	for _, args := range [][]string{
		{"explain", "--model", fixture},
		{"explain", "--model", fixture, "--ablate", "1-2", "[MASK]"},
		{"explain", "--model", fixture, "--text", "a", "b"},
	} {
		if _, _, code := bertlab(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage)", args, code)
		}
	}
	for _, args := range [][]string{
		{"explain", "--model", fixture, "--steps", "999", "--method", "ig", "[MASK]"},
		{"explain", "--model", fixture, "--ablate", "7.0", "[MASK]"},
		{"explain", "--model", fixture, "--target", "class:1", "[MASK]"},
	} {
		if _, stderr, code := bertlab(t, "", args...); code != 1 || stderr == "" {
			t.Errorf("%q: exit %d, want 1 with a message", args, code)
		}
	}
}
