package main

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// bertlab explain --json on the text of core/explain's reference gives the reference's gradient
// x input for the model's own answer at the mask; the text output names every token.
func TestExplainCommand(t *testing.T) {
	raw, err := os.ReadFile("../../core/explain/testdata/explainref.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Candidate int `json:"candidate"`
		Targets   map[string]struct {
			GXI []float64 `json:"gxi"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
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
