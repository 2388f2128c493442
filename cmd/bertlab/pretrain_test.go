package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/checkpoint"
	"github.com/bertlab/bertlab/core/train"
)

// smallText is pre-training text of three documents.
const smallText = `The cat sat on the mat.
The dog sat on the log.
The cat saw the dog.

A bird sang in the tree.
A bird flew over the tree.
The bird sang again.

The sun is hot.
The moon is cold.
We eat bread and jam.
`

func writeText(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPretrainCommand runs a short pre-training from the fixture model with checkpoints, then
// resumes it for two more steps, and loads the result.
func TestPretrainCommand(t *testing.T) {
	data := writeText(t, smallText)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"pretrain", "--model", fixture, "--data", data, "--out", out, "--steps", "4", "--batch", "4", "--seq", "24",
		"--lr", "1e-3", "--save-every", "2", "--seed", "3", "--heldout", data}
	stdout, stderr, code := bertlab(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"trained steps 1-4 of 4", "held-out: masked-LM accuracy", "model saved to " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "step 4/4") || !strings.Contains(stderr, "checkpoint "+filepath.Join(out, "checkpoint-2")) {
		t.Errorf("progress on stderr:\n%s", stderr)
	}
	if latest, _ := train.LatestCheckpoint(out); filepath.Base(latest) != "checkpoint-4" {
		t.Errorf("latest checkpoint %q", latest)
	}
	if _, err := checkpoint.LoadFolder(out); err != nil {
		t.Fatal(err)
	}
	var ts struct {
		GlobalStep int           `json:"global_step"`
		LogHistory []train.Event `json:"log_history"`
	}
	raw, err := os.ReadFile(filepath.Join(out, train.TrainerStateFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ts); err != nil || ts.GlobalStep != 4 || len(ts.LogHistory) != 5 {
		t.Errorf("trainer_state.json: %v, step %d, %d entries (want 4 steps and an evaluation)", err, ts.GlobalStep, len(ts.LogHistory))
	}

	// Starting again in the same folder is refused; --resume continues.
	if _, stderr, code := bertlab(t, "", args...); code != 2 || !strings.Contains(stderr, "--resume") {
		t.Errorf("second run without --resume: exit %d, %s", code, stderr)
	}
	args[8] = "6" // --steps
	stdout, stderr, code = bertlab(t, "", append(args, "--resume")...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "resuming from "+filepath.Join(out, "checkpoint-4")+" at step 4 of 6") || !strings.Contains(stdout, "trained steps 5-6 of 6") {
		t.Errorf("resume:\n%s", stdout)
	}
}

// TestPretrainPreset starts from a random preset with a vocabulary folder and no --model, without
// next-sentence prediction, with whole-word dynamic masking.
func TestPretrainPreset(t *testing.T) {
	data := writeText(t, smallText)
	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := bertlab(t, "", "pretrain", "--preset", "tiny", "--vocab", fixture, "--data", data, "--out", out,
		"--steps", "2", "--batch", "2", "--seq", "16", "--no-nsp", "--whole-word", "--dynamic")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "none, dynamic whole-word masking") || strings.Contains(stdout, "next-sentence") {
		t.Errorf("stdout:\n%s", stdout)
	}
	f, err := checkpoint.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Model.Config; c.HiddenSize != 128 || c.VocabSize != 2000 {
		t.Errorf("saved model: hidden %d, vocab %d", c.HiddenSize, c.VocabSize)
	}
}

func TestPretrainUsageErrors(t *testing.T) {
	data := writeText(t, smallText)
	long := writeText(t, "A sentence.\n"+strings.Repeat("x", 70000)+"\n")
	out := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no data", []string{"--model", fixture, "--out", out}, 2, "--data"},
		{"model and preset", []string{"--model", fixture, "--preset", "tiny", "--data", data, "--out", out}, 2, "one of --model"},
		{"preset without vocab", []string{"--preset", "tiny", "--data", data, "--out", out}, 2, "--vocab"},
		{"nsp and sop", []string{"--model", fixture, "--data", data, "--out", out, "--no-nsp", "--sop"}, 2, "exclude"},
		{"accumulation", []string{"--model", fixture, "--data", data, "--out", out, "--batch", "5", "--accum", "2"}, 2, "multiple"},
		{"resume nothing", []string{"--data", data, "--out", out, "--resume"}, 1, "no checkpoint"},
		{"missing data", []string{"--model", fixture, "--data", "nope.txt", "--out", out}, 1, "nope.txt"},
		{"bad line", []string{"--model", fixture, "--data", long, "--out", out}, 1, long + ":2:"},
		{"unknown position init", []string{"--preset", "tiny", "--vocab", fixture, "--data", data, "--out", out, "--position-init", "rope"}, 2, `--position-init "rope"`},
		{"sinusoidal positions of a folder", []string{"--model", fixture, "--data", data, "--out", out, "--position-init", "sinusoidal"}, 2, "needs --preset"},
		{"too long for the model", []string{"--model", fixture, "--data", data, "--out", out, "--seq", "64"}, 1, "64 tokens for a model of 32 positions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := bertlab(t, "", append([]string{"pretrain"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

func TestEvalMLM(t *testing.T) {
	data := writeText(t, smallText)
	run := func(seed string) map[string]float64 {
		stdout, stderr, code := bertlab(t, "", "eval", "--task", "mlm", "--model", fixture, "--data", data, "--seed", seed, "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var r map[string]float64
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if len(r) != 4 || r["n"] < 1 || r["mlm_accuracy"] < 0 || r["mlm_top5"] < r["mlm_accuracy"] || r["mlm_top5"] > 1 || r["perplexity"] < 1 {
			t.Errorf("seed %s: %v", seed, r)
		}
		return r
	}
	a, b, c := run("1"), run("1"), run("2")
	if a["perplexity"] != b["perplexity"] || a["n"] != b["n"] {
		t.Errorf("the same seed gave %v and %v", a, b)
	}
	if a["perplexity"] == c["perplexity"] {
		t.Errorf("seeds 1 and 2 gave the same figures %v", a)
	}
	// 15% of the maskable tokens: the text has 49 words and full stops in 10 sentences.
	if n := a["n"]; n < 5 || n > 12 {
		t.Errorf("%v predictions for about 60 tokens", n)
	}
	stdout, stderr, code := bertlab(t, "", "eval", "--model", fixture, "--data", data, "--task=mlm")
	if code != 0 || !strings.Contains(stdout, "perplexity") {
		t.Errorf("text output: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestEvalUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval"}, 2, "give --task"},
		{[]string{"eval", "--task", "nope"}, 2, `unknown --task "nope"`},
		{[]string{"eval", "--task"}, 2, "needs a value"},
		{[]string{"eval", "--task", "mlm", "--model", fixture}, 2, "--data"},
	}
	for _, tc := range tests {
		_, stderr, code := bertlab(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}
