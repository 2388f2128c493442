package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/internal/modelcard"
)

// TestModelCard runs the pipeline of scripts/pretrain.sh in miniature: a vocabulary, a short
// pre-training of a random tiny model, then the model folder and its card.
func TestModelCard(t *testing.T) {
	data := writeText(t, smallText)
	tmp := t.TempDir()
	vocab, run, out := filepath.Join(tmp, "vocab"), filepath.Join(tmp, "run"), filepath.Join(tmp, "models", "tiny-test")
	steps := [][]string{
		{"vocab", "--data", data, "--size", "80", "--min-frequency", "1", "--out", vocab},
		{"pretrain", "--preset", "tiny", "--vocab", vocab, "--data", data, "--heldout", data, "--out", run, "--steps", "3",
			"--batch", "4", "--seq", "24", "--lr", "1e-3", "--no-nsp", "--dynamic", "--eval-every", "2", "--seed", "1"},
	}
	for _, args := range steps {
		if _, stderr, code := bertlab(t, "", args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, stderr)
		}
	}
	cloze := writeText(t, "The cat sat on the [MASK].\nA [MASK] sang in the tree.\n")
	recipe := writeText(t, "bertlab vocab ...\nbertlab pretrain ...\n")
	extra := writeText(t, "## Fine-tuning\n\nSentiment: to come.\n")
	args := []string{"modelcard", "--run", run, "--out", out, "--heldout", data, "--heldout-also", data, "--train", data, "--recipe", recipe,
		"--note", "A test model: three steps.", "--cloze", cloze, "--extra", extra}
	stdout, stderr, code := bertlab(t, "", args...)
	if code != 0 {
		t.Fatalf("modelcard: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"wrote " + out, "model.safetensors F16", "held-out masked LM: top-1", "The cat sat on the [MASK]. -> "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// The trigram baseline is scored on the very positions of the held-out evaluation.
	var evalN, baseN int
	var baseAcc float64
	for _, line := range strings.Split(stdout, "\n") {
		if i := strings.LastIndex(line, " over "); strings.HasPrefix(line, "held-out masked LM:") && i > 0 {
			fmt.Sscanf(line[i:], " over %d predictions", &evalN)
		}
		if strings.HasPrefix(line, "trigram count baseline") {
			fmt.Sscanf(line, "trigram count baseline on the same positions: top-1 %f over %d predictions", &baseAcc, &baseN)
		}
	}
	// The same file again as --heldout-also: the same figures.
	if !strings.Contains(stdout, fmt.Sprintf(" over %d predictions, trigram baseline %.4f", evalN, baseAcc)) {
		t.Errorf("--heldout-also with the held-out file itself: want its %d predictions and baseline %.4f again\n%s", evalN, baseAcc, stdout)
	}
	if evalN == 0 || baseN != evalN || baseAcc < 0 || baseAcc > 1 {
		t.Errorf("trigram baseline over %d predictions (top-1 %g), the held-out evaluation over %d: want the same positions\n%s", baseN, baseAcc, evalN, stdout)
	}

	f, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Report.DType != string(hf.F16) || f.Tokenizer == nil || f.Tokenizer.Vocab().Len() != 80 || f.Model.Config.PadTokenID != f.Tokenizer.PadID() {
		t.Errorf("folder: dtype %s, tokenizer %v, pad_token_id %d", f.Report.DType, f.Tokenizer != nil, f.Model.Config.PadTokenID)
	}
	// Pre-trained without NSP: the untrained NSP head stays out of the shipped folder.
	cfgJSON, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.NSP != nil || f.Model.MLM == nil || f.Model.Pooler == nil || !strings.Contains(string(cfgJSON), `"BertForMaskedLM"`) {
		t.Errorf("heads: NSP %v, MLM %v, pooler %v; want BertForMaskedLM with the pooler", f.Model.NSP != nil, f.Model.MLM != nil, f.Model.Pooler != nil)
	}
	if note, err := os.ReadFile(filepath.Join(out, modelcard.NoteFile)); err != nil || string(note) != "A test model: three steps.\n" {
		t.Errorf("note.txt: %q, %v", note, err)
	}
	raw, err := os.ReadFile(filepath.Join(out, modelcard.LossCurveFile))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil || img.Bounds().Dx() != 960 || img.Bounds().Dy() != 520 {
		t.Errorf("loss.png: %v, %v", err, img.Bounds())
	}
	readme, err := os.ReadFile(filepath.Join(out, modelcard.CardFile))
	if err != nil {
		t.Fatal(err)
	}
	card := string(readme)
	for _, want := range []string{
		"# tiny-test\n", "> **A test model: three steps.**", "The trigram count baseline on the same", "| held-out file | top-1 | top-5 | perplexity | predictions | trigram baseline top-1 |",
		"| layers, hidden size, heads, intermediate size | 2, 128, 2, 512 |",
		"| vocabulary | 80 WordPiece tokens",
		"| steps | 3 of 3, batch 4 sequences |",
		"no next-sentence prediction", "| seeds | data 1, training 1 |",
		"| `" + data + "` | 3 | 9 |",
		"![masked-LM loss during pre-training](loss.png)",
		"| 2 | ", // the evaluation at step 2
		"bertlab eval --task mlm --model " + out + " --data " + data,
		"| The cat sat on the \\[MASK\\]. | ", "| A \\[MASK\\] sang in the tree. | ",
		"## Fine-tuning\n\nSentiment: to come.",
		"bertlab vocab ...\nbertlab pretrain ...",
		"## Heads that look at the neighbours", "- **previous-token head: layer ", "| 1 | 1 | 0.",
	} {
		if !strings.Contains(card, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	if strings.Index(card, "## Fine-tuning") > strings.Index(card, "## How to reproduce") {
		t.Error("the extra section should come before How to reproduce")
	}

	// A second stage (next-sentence prediction, from the first stage's model): the card covers
	// both, its steps counted on from the first stage's.
	run2 := filepath.Join(tmp, "run2")
	if _, stderr, code := bertlab(t, "", "pretrain", "--model", run, "--data", data, "--heldout", data, "--out", run2, "--steps", "2",
		"--batch", "4", "--seq", "24", "--lr", "1e-4", "--eval-every", "2", "--seed", "2"); code != 0 {
		t.Fatalf("second stage: exit %d: %s", code, stderr)
	}
	if _, stderr, code := bertlab(t, "", "modelcard", "--stage", run, "--run", run2, "--out", out, "--heldout", data, "--cloze", cloze, "--train", ""); code != 0 {
		t.Fatalf("modelcard of two stages: exit %d: %s", code, stderr)
	}
	readme, err = os.ReadFile(filepath.Join(out, modelcard.CardFile))
	if err != nil {
		t.Fatal(err)
	}
	card = string(readme)
	for _, want := range []string{
		"trained in 2 stages", "### Stage 1: `" + run + "`", "### Stage 2: `" + run2 + "`",
		"| steps | 3 of 3, batch 4 sequences |", "| steps | 2 of 2, batch 4 sequences |", "| seeds | data 2, training 2 |",
		"In all: 5 steps", "| stage | step |", "| 1 | 2 | ", "| 2 | 5 | ", // stage 2's evaluation at its step 2
	} {
		if !strings.Contains(card, want) {
			t.Errorf("the card of two stages lacks %q", want)
		}
	}
	if f, err := hf.LoadFolder(out); err != nil || f.Model.NSP == nil {
		t.Errorf("the second stage trained NSP: its head should ship (%v)", err)
	}

	// Written again without a note: the old note goes.
	if _, stderr, code := bertlab(t, "", "modelcard", "--run", run, "--out", out, "--cloze", cloze, "--train", ""); code != 0 {
		t.Fatalf("second modelcard: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, modelcard.NoteFile)); !os.IsNotExist(err) {
		t.Errorf("note.txt still there: %v", err)
	}
}

func TestModelCardErrors(t *testing.T) {
	noMask := writeText(t, "No mask here.\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"modelcard", "--out", t.TempDir()}, 2, "usage"},
		{[]string{"modelcard", "--run", fixture}, 2, "usage"},
		{[]string{"modelcard", "--run", fixture, "--out", t.TempDir(), "--dtype", "I8"}, 2, "--dtype"},
		{[]string{"modelcard", "--run", fixture, "--out", t.TempDir(), "--note", "two\nlines"}, 2, "one line"},
		{[]string{"modelcard", "--run", fixture, "--out", t.TempDir(), "--cloze", noMask}, 1, "want exactly one"},
		// A model folder that is not the output of bertlab pretrain.
		{[]string{"modelcard", "--run", fixture, "--out", t.TempDir()}, 1, train.TrainerStateFile},
	} {
		_, stderr, code := bertlab(t, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
