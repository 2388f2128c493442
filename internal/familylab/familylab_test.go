package familylab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
)

// The built-in model's vocabulary and tinydata's pre-training text.
const (
	testVocab   = "../../assets/models/bertlab-mini"
	testTrain   = "../../tinydata/pretrain/train.txt"
	testHeldout = "../../tinydata/pretrain/heldout.txt"
)

// quickTest is the quick setting with the test's paths (the task files too).
func quickTest() Config {
	c := Quick(testVocab, testTrain, testHeldout)
	for i := range c.Tasks {
		c.Tasks[i].Train, c.Tasks[i].Test = "../../"+c.Tasks[i].Train, "../../"+c.Tasks[i].Test
	}
	return c
}

// cancelOn is a log that cancels a context at the first line holding a substring.
type cancelOn struct {
	mu     sync.Mutex
	sub    string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil && strings.Contains(string(p), c.sub) {
		c.cancel()
		c.cancel = nil
	}
	return c.buf.Write(p)
}

// TestFamilyEndToEnd runs the quick setting with BERT, RoBERTa and ALBERT at Tiny size on
// tinydata, interrupted during RoBERTa's run and resumed: every variant keeps to the token
// budget, the resumed run equals an uninterrupted one, every folder loads back through core/hf
// with the recorded held-out figures, and the table, record and curves are written.
func TestFamilyEndToEnd(t *testing.T) {
	out := t.TempDir()
	c := quickTest()
	c.Variants = []bert.Family{bert.FamilyBERT, bert.FamilyRoBERTa, bert.FamilyALBERT} // ELECTRA: TestFamilyElectra
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &cancelOn{sub: "roberta: step ", cancel: cancel}
	rec, err := Run(ctx, c, out, log)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v\n%s", err, log.buf.String())
	}
	if len(rec.Results) != 1 || rec.Results[0].Family != bert.FamilyBERT {
		t.Fatalf("after the interruption the record holds %d results", len(rec.Results))
	}
	if latest, _ := train.LatestCheckpoint(filepath.Join(out, "roberta")); latest == "" {
		t.Fatal("the interrupted variant left no checkpoint")
	}
	var log2 bytes.Buffer
	rec, err = Run(context.Background(), c, out, &log2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s", log2.String(), Table(rec))
	if !strings.Contains(log2.String(), "bert: finished before, kept") || !strings.Contains(log2.String(), "roberta: resuming from") {
		t.Errorf("second run's log:\n%s", log2.String())
	}
	if len(rec.Results) != 3 {
		t.Fatalf("%d results, want 3", len(rec.Results))
	}
	byFam := map[bert.Family]Result{}
	for _, r := range rec.Results {
		byFam[r.Family] = r
	}

	// The budget: every variant reaches it within its last step.
	for _, r := range rec.Results {
		if len(r.Train) != r.Steps || float64(r.Tokens) < c.Amount || float64(r.Train[r.Steps-2].Tokens) >= c.Amount {
			t.Errorf("%s: %d steps recorded of %d, %d tokens (before the last step %d) for a budget of %g", r.Family, len(r.Train), r.Steps, r.Tokens, r.Train[r.Steps-2].Tokens, c.Amount)
		}
		if len(r.Evals) != c.Evals+1 && len(r.Evals) != c.Evals {
			t.Errorf("%s: %d evaluations, want %d or %d", r.Family, len(r.Evals), c.Evals, c.Evals+1)
		}
	}
	if a, b := byFam[bert.FamilyALBERT], byFam[bert.FamilyBERT]; !(a.Params < b.Params/2) || a.Layers != 1 || a.Blocks != 2 || a.EmbeddingDim != 32 {
		t.Errorf("albert: %d parameters (bert %d), %d distinct layers of %d blocks, E %d", a.Params, b.Params, a.Layers, a.Blocks, a.EmbeddingDim)
	}
	for fam, arch := range map[bert.Family]string{bert.FamilyBERT: "BertForPreTraining", bert.FamilyRoBERTa: "RobertaForMaskedLM", bert.FamilyALBERT: "AlbertForPreTraining"} {
		if got := byFam[fam].Architecture; got != arch {
			t.Errorf("%s wrote %q, want %s", fam, got, arch)
		}
	}

	// The resumed RoBERTa run equals an uninterrupted one, step for step.
	solo := c
	solo.Variants = []bert.Family{bert.FamilyRoBERTa}
	ref, err := Run(context.Background(), solo, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resumed := byFam[bert.FamilyRoBERTa]
	if !resumed.Resumed || !slices.Equal(resumed.Train, ref.Results[0].Train) || resumed.Final != ref.Results[0].Final {
		t.Errorf("resumed run (resumed %v, final %+v) differs from the uninterrupted one (final %+v)", resumed.Resumed, resumed.Final, ref.Results[0].Final)
	}

	// Every variant is fine-tuned on each task: the scores are the same for the same body (the
	// resumed RoBERTa's and the uninterrupted one's), counted on the test examples kept.
	for _, r := range rec.Results {
		if len(r.Tasks) != len(c.Tasks) {
			t.Fatalf("%s: %d task scores, want %d", r.Family, len(r.Tasks), len(c.Tasks))
		}
		for i, sc := range r.Tasks {
			spec := c.Tasks[i]
			wantMetric := map[bert.Task]string{bert.SequenceClassification: "accuracy", bert.TokenClassification: "token_accuracy"}[spec.Task]
			if sc.Name != spec.Name || sc.Metric != wantMetric || !(sc.Value > 0 && sc.Value <= 1) || sc.Steps != spec.MaxTrain/spec.Batch {
				t.Errorf("%s: score %+v for task %+v", r.Family, sc, spec)
			}
			if spec.Task == bert.SequenceClassification && sc.Examples != spec.MaxTest {
				t.Errorf("%s: %s scored on %d examples, want %d", r.Family, sc.Name, sc.Examples, spec.MaxTest)
			}
		}
	}
	for i, sc := range resumed.Tasks {
		if want := ref.Results[0].Tasks[i]; sc.Value != want.Value || sc.Steps != want.Steps {
			t.Errorf("resumed roberta's %s: %.4f after %d steps, uninterrupted %.4f after %d", sc.Name, sc.Value, sc.Steps, want.Value, want.Steps)
		}
	}

	// Each folder loads back with the recorded held-out figures.
	tok, err := tokenizer.LoadDir(testVocab)
	if err != nil {
		t.Fatal(err)
	}
	heldout, _, err := train.MLMEvalInstances(tok, testHeldout, train.MLMEvalConfig{SeqLen: c.SeqLen, Seed: c.Seed, MaskProb: c.MaskProb}, c.SeqLen)
	if err != nil {
		t.Fatal(err)
	}
	heldout = heldout[:c.HeldoutSeqs]
	for _, r := range rec.Results {
		f, err := hf.LoadFolder(r.Folder)
		if err != nil {
			t.Fatal(err)
		}
		if f.Model.Config.FamilyOf() != r.Family {
			t.Errorf("%s: folder holds %s", r.Family, f.Model.Config.FamilyOf())
		}
		m, err := train.EvaluateMLM(f.Model, heldout, tok.PadID(), 8)
		if err != nil {
			t.Fatal(err)
		}
		if m.Accuracy != r.Final.Accuracy || m.Top5 != r.Final.Top5 || m.N != rec.HeldoutN {
			t.Errorf("%s: loaded folder scores %.4f / %.4f on %d, the record %.4f / %.4f on %d", r.Family, m.Accuracy, m.Top5, m.N, r.Final.Accuracy, r.Final.Top5, rec.HeldoutN)
		}
	}

	// The files.
	data, err := os.ReadFile(filepath.Join(out, RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	var disk Record
	if err := json.Unmarshal(data, &disk); err != nil || len(disk.Results) != 3 {
		t.Errorf("%s: %v, %d results", RecordFile, err, len(disk.Results))
	}
	table, err := os.ReadFile(filepath.Join(out, TableFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| bert | BertForPreTraining |", "| roberta | RobertaForMaskedLM |", "| albert | AlbertForPreTraining |", "| sentiment | pos |"} {
		if !strings.Contains(string(table), row) {
			t.Errorf("%s has no row %q", TableFile, row)
		}
	}
	for _, f := range Curves {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || img.Bounds().Dx() != 900 {
			t.Errorf("%s: %v", f, err)
		}
	}

	// A third run keeps everything; other settings in the same folder are refused.
	again, err := Run(context.Background(), c, out, nil)
	if err != nil || len(again.Results) != 3 || again.Results[1].Final != rec.Results[1].Final {
		t.Errorf("third run: %v", err)
	}
	other := c
	other.Amount *= 2
	if _, err := Run(context.Background(), other, out, nil); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("other settings in the same folder: %v", err)
	}

	// Other tasks train nothing again: the variants are kept and scored on the new tasks.
	retask := c
	retask.Tasks = []TaskSpec{c.Tasks[1]}
	retask.Tasks[0].Epochs = 2
	var log3 bytes.Buffer
	re, err := Run(context.Background(), retask, out, &log3)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range re.Results {
		if r.Final != rec.Results[i].Final || len(r.Tasks) != 1 || r.Tasks[0].Name != "pos" || r.Tasks[0].Steps != 2*c.Tasks[1].MaxTrain/c.Tasks[1].Batch {
			t.Errorf("%s with other tasks: final %+v (was %+v), tasks %+v", r.Family, r.Final, rec.Results[i].Final, r.Tasks)
		}
	}
	if strings.Contains(log3.String(), "step ") {
		t.Errorf("other tasks trained a variant again:\n%s", log3.String())
	}
}

// TestPlanFLOPs: with a FLOP budget each variant takes the fewest steps whose counted FLOPs
// reach it, and ALBERT, whose embeddings and MLM head are narrower, takes more steps than BERT.
func TestPlanFLOPs(t *testing.T) {
	c := quickTest()
	c.Budget, c.Amount, c.MaxDocs = ByFLOPs, 40e9, 60
	tok, err := tokenizer.LoadDir(testVocab)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := readDocs(c.Train, c.MaxDocs, tok)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[bert.Family]int{}
	for _, fam := range []bert.Family{bert.FamilyBERT, bert.FamilyRoBERTa, bert.FamilyALBERT, bert.FamilyELECTRA} {
		dc := train.DefaultData(c.SeqLen, c.Seed)
		if err := train.ApplyRecipe(fam, &dc); err != nil {
			t.Fatal(err)
		}
		data, err := train.NewPretrainData(tok, docs, dc)
		if err != nil {
			t.Fatal(err)
		}
		mc, err := train.FamilyConfig(fam, c.Preset, tok)
		if err != nil {
			t.Fatal(err)
		}
		n, _, flops, err := plan(c, mc, nil, data)
		if err != nil {
			t.Fatal(err)
		}
		if !(flops[n] >= c.Amount && flops[n-1] < c.Amount) {
			t.Errorf("%s: %d steps, FLOPs %g then %g around the budget %g", fam, n, flops[n-1], flops[n], c.Amount)
		}
		steps[fam] = n
	}
	if !(steps[bert.FamilyALBERT] > steps[bert.FamilyBERT]) {
		t.Errorf("steps within %g FLOPs: %v; want ALBERT's above BERT's", c.Amount, steps)
	}
}

func TestConfigValidate(t *testing.T) {
	good := quickTest()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"no variant":    func(c *Config) { c.Variants = nil },
		"twice":         func(c *Config) { c.Variants = []bert.Family{bert.FamilyBERT, bert.FamilyBERT} },
		"mpnet":         func(c *Config) { c.Variants = []bert.Family{"mpnet"} },
		"no teacher":    func(c *Config) { c.Teacher = "" },
		"budget kind":   func(c *Config) { c.Budget = "steps" },
		"zero budget":   func(c *Config) { c.Amount = 0 },
		"preset":        func(c *Config) { c.Preset = "huge" },
		"mask prob":     func(c *Config) { c.MaskProb = 1 },
		"no held-out":   func(c *Config) { c.Heldout = "" },
		"short seq":     func(c *Config) { c.SeqLen = 4 },
		"evaluations":   func(c *Config) { c.Evals = 0 },
		"warm-up":       func(c *Config) { c.WarmupFrac = 1 },
		"learning rate": func(c *Config) { c.LR = 0 },
		"task twice":    func(c *Config) { c.Tasks = append(c.Tasks, c.Tasks[0]) },
		"task kind": func(c *Config) {
			c.Tasks = []TaskSpec{{Name: "qa", Task: bert.QuestionAnswering, Train: "a", Test: "b", Epochs: 1, Batch: 1, LR: 1e-4}}
		},
		"task epochs": func(c *Config) {
			c.Tasks = []TaskSpec{{Name: "s", Task: bert.SequenceClassification, Train: "a", Test: "b", Batch: 1, LR: 1e-4}}
		},
		"task no test": func(c *Config) {
			c.Tasks = []TaskSpec{{Name: "s", Task: bert.SequenceClassification, Train: "a", Epochs: 1, Batch: 1, LR: 1e-4}}
		},
	} {
		c := good
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestFamilyElectra runs ELECTRA alone on a small budget: its record holds the held-out figures
// of its discriminator with a fine-tuned masked-LM head (whose folder scores them again), its
// generator's and the discriminator's own, FLOPs counted with the generator, and the folders load
// back.
func TestFamilyElectra(t *testing.T) {
	out := t.TempDir()
	c := quickTest()
	c.Variants, c.Amount, c.Evals, c.MaxDocs, c.HeldoutSeqs = []bert.Family{bert.FamilyELECTRA}, 6000, 2, 60, 16
	rec, err := Run(context.Background(), c, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rec.Results[0]
	t.Logf("\n%s", Table(rec))
	if r.Architecture != "ElectraForPreTraining" || r.GeneratorParams == 0 || r.Final.Accuracy == 0 || r.Final.RTDAccuracy == 0 || r.Final.ReplacedProb == 0 {
		t.Errorf("electra result: %+v", r)
	}
	if !strings.Contains(Table(rec), "MLM head fine-tuned") || r.Generator == nil || r.ProbeSteps != 10 {
		t.Error("the table does not say how ELECTRA's discriminator was measured")
	}
	for _, dir := range []string{r.Folder, filepath.Join(r.Folder, train.GeneratorFolder), filepath.Join(r.Folder, ProbeFolder)} {
		if _, err := hf.LoadFolder(dir); err != nil {
			t.Error(err)
		}
	}
	// The probe's folder scores the recorded figures on the held-out set.
	pf, err := hf.LoadFolder(filepath.Join(r.Folder, ProbeFolder))
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tokenizer.LoadDir(testVocab)
	if err != nil {
		t.Fatal(err)
	}
	heldout, _, err := train.MLMEvalInstances(tk, testHeldout, train.MLMEvalConfig{SeqLen: c.SeqLen, Seed: c.Seed, MaskProb: c.MaskProb}, c.SeqLen)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := train.EvaluateMLM(pf.Model, heldout[:c.HeldoutSeqs], tk.PadID(), 8)
	if err != nil {
		t.Fatal(err)
	}
	if pm.Accuracy != r.Final.Accuracy || pm.Top5 != r.Final.Top5 {
		t.Errorf("probe folder scores %.4f / %.4f, the record %.4f / %.4f", pm.Accuracy, pm.Top5, r.Final.Accuracy, r.Final.Top5)
	}
	// The FLOPs are ELECTRA's (generator and discriminator), not a plain BERT step's.
	tok, err := tokenizer.LoadDir(testVocab)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := train.FamilyConfig(bert.FamilyELECTRA, c.Preset, tok)
	if err != nil {
		t.Fatal(err)
	}
	perToken := r.FLOPs / float64(r.Tokens)
	bertPerToken := 3 * train.ForwardFLOPs(mc, 1, c.SeqLen, 0, false) / float64(c.SeqLen)
	if !(perToken > bertPerToken) {
		t.Errorf("%.3g FLOPs a token, no more than the discriminator's body alone (%.3g)", perToken, bertPerToken)
	}
}

// TestFamilyDistilBERT runs DistilBERT alone on a small budget: the student of the built-in model
// has every other layer of it (half its layers, its width), the FLOPs count the teacher's forward
// passes, and the folder loads back with the recorded held-out figures.
func TestFamilyDistilBERT(t *testing.T) {
	out := t.TempDir()
	c := quickTest()
	c.Variants, c.Amount, c.Evals, c.MaxDocs, c.HeldoutSeqs = []bert.Family{bert.FamilyDistilBERT}, 3000, 1, 40, 16
	rec, err := Run(context.Background(), c, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rec.Results[0]
	t.Logf("\n%s", Table(rec))
	teacher, err := hf.LoadFolder(testVocab)
	if err != nil {
		t.Fatal(err)
	}
	tc := teacher.Model.Config
	if r.Architecture != "DistilBertForMaskedLM" || r.Blocks != tc.NumHiddenLayers/2 || r.Hidden != tc.HiddenSize {
		t.Errorf("distilbert result: %s, %d blocks of %d; want half the teacher's %d layers of %d", r.Architecture, r.Blocks, r.Hidden, tc.NumHiddenLayers, tc.HiddenSize)
	}
	// The FLOPs with the teacher's forward passes exceed the student's own steps'.
	tok, err := tokenizer.LoadDir(testVocab)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := readDocs(c.Train, c.MaxDocs, tok)
	if err != nil {
		t.Fatal(err)
	}
	dc := train.DefaultData(c.SeqLen, c.Seed)
	dc.Masking.Prob, dc.Masking.MaxPredictions = c.MaskProb, 10
	if err := train.ApplyRecipe(bert.FamilyDistilBERT, &dc); err != nil {
		t.Fatal(err)
	}
	data, err := train.NewPretrainData(tok, docs, dc)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := hf.LoadFolder(testVocab)
	if err != nil {
		t.Fatal(err)
	}
	s, err := train.NewDistilStudent(tf.Model)
	if err != nil {
		t.Fatal(err)
	}
	_, _, own, err := plan(c, s.Config, nil, data)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.FLOPs > own[r.Steps]) {
		t.Errorf("%g FLOPs recorded, the student's own steps alone %g: the teacher's passes are not counted", r.FLOPs, own[r.Steps])
	}
	f, err := hf.LoadFolder(r.Folder)
	if err != nil {
		t.Fatal(err)
	}
	heldout, _, err := train.MLMEvalInstances(tok, testHeldout, train.MLMEvalConfig{SeqLen: c.SeqLen, Seed: c.Seed, MaskProb: c.MaskProb}, c.SeqLen)
	if err != nil {
		t.Fatal(err)
	}
	m, err := train.EvaluateMLM(f.Model, heldout[:c.HeldoutSeqs], tok.PadID(), 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.Accuracy != r.Final.Accuracy {
		t.Errorf("loaded folder scores %.4f, the record %.4f", m.Accuracy, r.Final.Accuracy)
	}
}
