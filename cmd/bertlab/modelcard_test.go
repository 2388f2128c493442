package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/checkpoint"
	"github.com/bertlab/bertlab/core/train"
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
	args := []string{"modelcard", "--run", run, "--out", out, "--heldout", data, "--train", data, "--recipe", recipe,
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

	f, err := checkpoint.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Report.DType != string(checkpoint.F16) || f.Tokenizer == nil || f.Tokenizer.Vocab().Len() != 80 || f.Model.Config.PadTokenID != f.Tokenizer.PadID() {
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
	if note, err := os.ReadFile(filepath.Join(out, noteFile)); err != nil || string(note) != "A test model: three steps.\n" {
		t.Errorf("note.txt: %q, %v", note, err)
	}
	raw, err := os.ReadFile(filepath.Join(out, lossCurveFile))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil || img.Bounds().Dx() != 960 || img.Bounds().Dy() != 520 {
		t.Errorf("loss.png: %v, %v", err, img.Bounds())
	}
	readme, err := os.ReadFile(filepath.Join(out, modelCardFile))
	if err != nil {
		t.Fatal(err)
	}
	card := string(readme)
	for _, want := range []string{
		"# tiny-test\n", "> **A test model: three steps.**",
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
	} {
		if !strings.Contains(card, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	if strings.Index(card, "## Fine-tuning") > strings.Index(card, "## How to reproduce") {
		t.Error("the extra section should come before How to reproduce")
	}

	// Written again without a note: the old note goes.
	if _, stderr, code := bertlab(t, "", "modelcard", "--run", run, "--out", out, "--cloze", cloze, "--train", ""); code != 0 {
		t.Fatalf("second modelcard: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, noteFile)); !os.IsNotExist(err) {
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
		{[]string{"modelcard", "--run", fixture, "--out", t.TempDir(), "--cloze", noMask}, 1, "exactly one [MASK]"},
		// A model folder that is not the output of bertlab pretrain.
		{[]string{"modelcard", "--run", fixture, "--out", t.TempDir()}, 1, train.TrainerStateFile},
	} {
		_, stderr, code := bertlab(t, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []float64
		labels []string
	}{
		{0, 9.07, 6, []float64{0, 2, 4, 6, 8, 10}, []string{"0", "2", "4", "6", "8", "10"}},
		{0, 2500, 8, []float64{0, 500, 1000, 1500, 2000, 2500}, []string{"0", "500", "1000", "1500", "2000", "2500"}},
		{0, 0.37, 6, []float64{0, 0.1, 0.2, 0.3, 0.4}, []string{"0.0", "0.1", "0.2", "0.3", "0.4"}},
		{0, 40000, 4, []float64{0, 10000, 20000, 30000, 40000}, []string{"0", "10,000", "20,000", "30,000", "40,000"}},
	} {
		got := niceTicks(c.lo, c.hi, c.n)
		var labels []string
		for _, v := range got {
			labels = append(labels, tickLabel(v, got))
		}
		if len(got) != len(c.want) || !slices.Equal(labels, c.labels) {
			t.Errorf("niceTicks(%g, %g, %d) = %v %q, want %v %q", c.lo, c.hi, c.n, got, labels, c.want, c.labels)
		}
	}
}

func TestLossChart(t *testing.T) {
	var st trainerState
	for i := 1; i <= 200; i++ {
		st.LogHistory = append(st.LogHistory, train.Event{Kind: train.EventStep, Step: i, Loss: 9 - float64(i)/40})
		if i%50 == 0 {
			st.LogHistory = append(st.LogHistory, train.Event{Kind: train.EventEval, Step: i, Metrics: map[string]float64{"mlm_loss": 9 - float64(i)/35}})
		}
	}
	c := lossChart("m", st)
	if len(c.series) != 3 || len(c.series[0].x) != 200 || len(c.series[2].x) != 4 || !strings.Contains(c.series[1].label, "mean of 5 steps") {
		t.Fatalf("%v: %+v", c, c.series)
	}
	raw, err := c.renderPNG(400, 300)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	// Some pixels carry each series' colour.
	found := map[[3]uint32]bool{}
	for y := 0; y < 300; y++ {
		for x := 0; x < 400; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			found[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	for _, col := range []struct{ r, g, b uint8 }{{colBlue.R, colBlue.G, colBlue.B}, {colOrange.R, colOrange.G, colOrange.B}} {
		if !found[[3]uint32{uint32(col.r), uint32(col.g), uint32(col.b)}] {
			t.Errorf("no pixel of colour %v", col)
		}
	}
	if got := movingAverage([]float64{1, 2, 3, 4}, 2); !slices.Equal(got, []float64{1, 1.5, 2.5, 3.5}) {
		t.Errorf("movingAverage = %v", got)
	}
}
