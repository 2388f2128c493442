package pretraincmd

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/cli"
)

// TestPretrainFamily: --family roberta, albert and electra write their family's folders, which
// load back, and resume; flags that the recipe sets are refused.
func TestPretrainFamily(t *testing.T) {
	const vocab, data = "../../assets/models/bertlab-mini", "../../tinydata/pretrain/heldout.txt"
	for _, tc := range []struct {
		family, arch, task string
		heads              []string
	}{
		{"roberta", "RobertaForMaskedLM", "none, dynamic masking", []string{"mlm"}},
		{"albert", "AlbertForPreTraining", "sentence-order, static ×1 masking", []string{"pooler", "mlm", "nsp"}},
		{"electra", "ElectraForPreTraining", "none, dynamic masking", []string{"rtd"}},
		{"deberta-v2", "DebertaV2ForMaskedLM", "none, dynamic masking", []string{"mlm"}},
	} {
		t.Run(tc.family, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := []string{"--family", tc.family, "--preset", "tiny", "--vocab", vocab, "--data", data, "--out", out,
				"--steps", "3", "--batch", "2", "--seq", "32", "--save-every", "2"}
			var stdout, stderr bytes.Buffer
			if err := Run(args, &stdout, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.task) {
				t.Errorf("stdout:\n%s", stdout.String())
			}
			f, err := hf.LoadFolder(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(f.Model.Config.FamilyOf()) != tc.family || !slices.Equal(f.Model.HeadNames(), tc.heads) {
				t.Errorf("saved %s with heads %v", f.Model.Config.FamilyOf(), f.Model.HeadNames())
			}
			if tc.family == "albert" && f.Model.Config.EmbDim() != 32 {
				t.Errorf("albert embedding size %d, want 32", f.Model.Config.EmbDim())
			}
			if a := f.Model.Config.Extra["architectures"]; !strings.Contains(string(a), tc.arch) {
				t.Errorf("architectures %s, want %s", a, tc.arch)
			}
			if tc.family == "electra" {
				g, err := hf.LoadFolder(filepath.Join(out, "generator"))
				if err != nil {
					t.Fatal(err)
				}
				if g.Model.MLM == nil || g.Model.Config.HiddenSize != 32 {
					t.Errorf("generator: heads %v, hidden %d", g.Model.HeadNames(), g.Model.Config.HiddenSize)
				}
			}
			stdout.Reset()
			resume := append(slices.Clone(args[:len(args)-8]), "--steps", "5", "--batch", "2", "--seq", "32", "--resume")
			if err := Run(resume, &stdout, &stderr); err != nil {
				t.Fatalf("resume: %v", err)
			}
			if !strings.Contains(stdout.String(), "at step 3 of 5") || !strings.Contains(stdout.String(), "trained steps 4-5 of 5") {
				t.Errorf("resume:\n%s", stdout.String())
			}
		})
	}
	// DistilBERT: a student of the built-in model from every other layer of it.
	teacher, err := hf.LoadFolder(vocab)
	if err != nil {
		t.Fatal(err)
	}
	tc := teacher.Model.Config
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"--family", "distilbert", "--teacher", vocab, "--data", data, "--out", out, "--steps", "3", "--batch", "2", "--seq", "32"}
	var stdout, stderr bytes.Buffer
	if err := Run(args, &stdout, &stderr); err != nil {
		t.Fatalf("distilbert: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "2·masked LM + 5·KL(teacher MLM) + 0·KL(teacher attention) + 1·(1 − cos hidden), temperature 2") {
		t.Errorf("distilbert stdout:\n%s", stdout.String())
	}
	f, err := hf.LoadFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Model.Config; !c.Family.Is("distilbert") || c.NumHiddenLayers != tc.NumHiddenLayers/2 || c.HiddenSize != tc.HiddenSize || !strings.Contains(string(c.Extra["architectures"]), "DistilBertForMaskedLM") {
		t.Errorf("distilbert student: %s, %d layers of %d, %s; want half the teacher's %d layers of %d", c.FamilyOf(), c.NumHiddenLayers, c.HiddenSize, c.Extra["architectures"], tc.NumHiddenLayers, tc.HiddenSize)
	}
	stdout.Reset()
	if err := Run([]string{"--family", "distilbert", "--data", data, "--out", out, "--steps", "4", "--batch", "2", "--seq", "32", "--resume"}, &stdout, &stderr); err != nil {
		t.Fatalf("distilbert resume: %v", err)
	}
	if !strings.Contains(stdout.String(), "trained steps 4-4 of 4") {
		t.Errorf("distilbert resume:\n%s", stdout.String())
	}
	for _, args := range [][]string{
		{"--family", "distilbert", "--preset", "tiny"},
		{"--family", "roberta", "--no-nsp"},
		{"--family", "albert", "--dynamic"},
		{"--family", "gpt"},
	} {
		full := append(args, "--preset", "tiny", "--vocab", vocab, "--data", data, "--out", t.TempDir())
		if err := Run(full, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
