package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/internal/approx"
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
	if _, err := hf.LoadFolder(out); err != nil {
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
	f, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Model.Config; c.HiddenSize != 128 || c.VocabSize != 2000 {
		t.Errorf("saved model: hidden %d, vocab %d", c.HiddenSize, c.VocabSize)
	}
}

// TestPretrainRelative starts a relative_key_query model from a preset, saves checkpoints and
// resumes: the config's type and the distance embeddings are in every folder written, the
// distance embeddings train, and bertlab info names the type.
func TestPretrainRelative(t *testing.T) {
	data := writeText(t, smallText)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"pretrain", "--preset", "tiny", "--vocab", fixture, "--data", data, "--out", out,
		"--steps", "2", "--batch", "2", "--seq", "16", "--no-nsp", "--save-every", "1", "--keep", "0",
		"--lr", "1e-3", "--position-embedding-type", "relative_key_query"}
	stdout, stderr, code := bertlab(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "relative_key_query positions") {
		t.Errorf("stdout does not name the position type:\n%s", stdout)
	}
	const dist = "bert.encoder.layer.1.attention.self.distance_embedding.weight"
	distance := func(dir string) []float32 {
		t.Helper()
		f, err := hf.LoadFolder(dir)
		if err != nil {
			t.Fatal(err)
		}
		if c := f.Model.Config; c.PositionEmbeddingType != "relative_key_query" {
			t.Fatalf("%s: position_embedding_type %q", dir, c.PositionEmbeddingType)
		}
		for _, p := range f.Model.Params() {
			if p.Name == dist {
				return p.T.Data
			}
		}
		t.Fatalf("%s: no %s", dir, dist)
		return nil
	}
	first := distance(filepath.Join(out, "checkpoint-1"))
	if d := approx.MaxAbsDiff(first, distance(out)); d == 0 {
		t.Error("the distance embeddings did not change in step 2")
	}
	args[10] = "3" // --steps
	stdout, stderr, code = bertlab(t, "", append(args, "--resume")...)
	if code != 0 || !strings.Contains(stdout, "trained steps 3-3 of 3") {
		t.Fatalf("resume: exit %d: %s\n%s", code, stderr, stdout)
	}
	distance(out)
	stdout, stderr, code = bertlab(t, "", "info", "--model", out)
	if code != 0 || !strings.Contains(stdout, "positions (relative_key_query)") || !strings.Contains(stdout, "transformers 4.x only") {
		t.Errorf("info: exit %d: %s\n%s", code, stderr, stdout)
	}
	// A resume that asks for another type is refused.
	args[len(args)-1] = "absolute"
	args[10] = "4"
	if _, stderr, code := bertlab(t, "", append(args, "--resume")...); code != 2 || !strings.Contains(stderr, "holds a relative_key_query model") {
		t.Errorf("resume with another type: exit %d, %s", code, stderr)
	}
}

// TestInitRelative writes a random relative_key model with bertlab init.
func TestInitRelative(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m")
	if _, stderr, code := bertlab(t, "", "init", "--preset", "tiny", "--max-positions", "64", "--position-embedding-type", "relative_key", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if l := f.Model.Layers[0]; f.Model.Config.PositionEmbeddingType != "relative_key" || l.Distance == nil || l.Distance.Shape[0] != 127 || l.Distance.Shape[1] != 64 {
		t.Errorf("config %q, distance embedding %v; want relative_key, [127 64]", f.Model.Config.PositionEmbeddingType, l.Distance)
	}
	if _, stderr, code := bertlab(t, "", "init", "--preset", "tiny", "--position-embedding-type", "alibi", "--out", out+"2"); code != 2 || !strings.Contains(stderr, `"alibi"`) {
		t.Errorf("unknown type: exit %d, %s", code, stderr)
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
		{"unknown position type", []string{"--preset", "tiny", "--vocab", fixture, "--data", data, "--out", out, "--position-embedding-type", "rotary"}, 2, `--position-embedding-type "rotary"`},
		{"position type of a folder", []string{"--model", fixture, "--data", data, "--out", out, "--position-embedding-type", "relative_key"}, 2, "needs --preset"},
		{"sinusoidal relative positions", []string{"--preset", "tiny", "--vocab", fixture, "--data", data, "--out", out, "--position-embedding-type", "relative_key_query", "--position-init", "sinusoidal"}, 2, "adds no position embeddings"},
		{"too long for the model", []string{"--model", fixture, "--data", data, "--out", out, "--seq", "64"}, 1, "64 tokens for a model of 32 positions"},
		{"neighbour head unreadable", []string{"--model", fixture, "--data", data, "--out", out, "--no-nsp", "--neighbour-heads", "0.0"}, 2, `--neighbour-heads: neighbour head "0.0"`},
		{"neighbour head outside the model", []string{"--model", fixture, "--data", data, "--out", out, "--no-nsp", "--neighbour-heads", "9.0-1"}, 1, "neighbour head 9.0-1: the model has"},
		{"neighbour prior with NSP", []string{"--model", fixture, "--data", data, "--out", out, "--neighbour-heads", "0.0-1"}, 1, "no sentence task"},
		{"neighbour prior and a teacher", []string{"--model", fixture, "--data", data, "--out", out, "--no-nsp", "--neighbour-heads", "0.0-1", "--teacher", fixture, "--seq", "32"}, 2, "takes no teacher"},
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

// TestPretrainDistil distils a relative_key_query teacher (trained two steps here) into an
// absolute student: the steps report the distillation terms, the run records its teacher,
// --resume carries on with it, and the usage errors say what is wrong.
func TestPretrainDistil(t *testing.T) {
	data := writeText(t, smallText)
	dir := t.TempDir()
	teacher := filepath.Join(dir, "teacher")
	base := []string{"--vocab", fixture, "--data", data, "--batch", "2", "--seq", "16", "--no-nsp", "--lr", "1e-3", "--log-every", "1"}
	if _, stderr, code := bertlab(t, "", append([]string{"pretrain", "--preset", "tiny", "--out", teacher, "--steps", "2", "--position-embedding-type", "relative_key_query"}, base...)...); code != 0 {
		t.Fatalf("teacher: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "student")
	args := append([]string{"pretrain", "--preset", "tiny", "--out", out, "--steps", "2", "--save-every", "1", "--teacher", teacher, "--distil-attention", "2"}, base...)
	stdout, stderr, code := bertlab(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "distilling "+teacher) || !strings.Contains(stdout, "relative_key_query positions") || !strings.Contains(stdout, "2·KL(teacher attention)") {
		t.Errorf("stdout does not describe the distillation:\n%s", stdout)
	}
	if !strings.Contains(stderr, "(distil: soft ") {
		t.Errorf("the progress lines do not report the distillation terms:\n%s", stderr)
	}
	f, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.Config.Relative() {
		t.Errorf("the student has %s positions, want the preset's absolute ones", f.Model.Config.PositionEmbeddingType)
	}
	rec, err := os.ReadFile(filepath.Join(out, "distil.json"))
	if err != nil || !strings.Contains(string(rec), `"Attention": 2`) {
		t.Errorf("distil.json: %s, %v", rec, err)
	}
	// --resume without --teacher continues the distillation.
	resume := append([]string{"pretrain", "--out", out, "--steps", "3", "--resume"}, base...)
	if stdout, stderr, code := bertlab(t, "", resume...); code != 0 || !strings.Contains(stdout, "distilling "+teacher) || !strings.Contains(stdout, "trained steps 3-3 of 3") {
		t.Errorf("resume: exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{append(resume[:len(resume):len(resume)], "--distil-soft", "0.5"), "the run distils"},
		{append([]string{"pretrain", "--preset", "tiny", "--out", filepath.Join(dir, "x"), "--steps", "1", "--distil-soft", "2"}, base...), "need a teacher"},
		{append([]string{"pretrain", "--preset", "tiny", "--out", filepath.Join(dir, "y"), "--steps", "1", "--teacher", teacher}, slices.DeleteFunc(slices.Clone(base), func(s string) bool { return s == "--no-nsp" })...), "no sentence task"},
		{append([]string{"pretrain", "--out", filepath.Join(dir, "teacher"), "--steps", "3", "--resume", "--teacher", out}, base...), "was not distilled"},
	} {
		if _, stderr, code := bertlab(t, "", bad.args...); code != 2 || !strings.Contains(stderr, bad.want) {
			t.Errorf("%v: exit %d, %s (want %q)", bad.args[len(bad.args)-4:], code, stderr, bad.want)
		}
	}
}
