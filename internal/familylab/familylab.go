// Package familylab runs the family lab's experiment (issue 28): it pre-trains chosen members of
// BERT's family on the same corpus with the same budget of tokens or of FLOPs, each with its
// own recipe (core/train's ApplyRecipe and FamilyConfig), evaluates each on the same held-out
// masked-LM set, and writes a Markdown table, a JSON record and PNG curves. A run killed at any
// moment resumes where its checkpoints left it.
package familylab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
)

// Budget kinds.
const (
	ByTokens = "tokens" // every variant trains on the same number of (non-padding) tokens
	ByFLOPs  = "flops"  // every variant spends the same training FLOPs (train.StepFLOPs)
)

// Config are the settings of an experiment. The same settings give the same numbers.
type Config struct {
	Variants []bert.Family `json:"variants"` // the recipes, in the order of the table
	Preset   string        `json:"preset"`   // the size (bert.Preset) of every variant
	Vocab    string        `json:"vocab"`    // folder with vocab.txt (and tokenizer_config.json)
	Train    []string      `json:"train"`    // training text files (one sentence a line, a blank line between documents)
	// MaxDocs keeps the first MaxDocs documents of the training text (0: all).
	MaxDocs int    `json:"max_docs"`
	Heldout string `json:"heldout"` // held-out text in the same format
	// HeldoutSeqs keeps the first HeldoutSeqs held-out sequences (0: all).
	HeldoutSeqs int     `json:"heldout_seqs"`
	SeqLen      int     `json:"seq_len"`   // max_seq_length of training and held-out sequences
	Batch       int     `json:"batch"`     // sequences per step
	LR          float64 `json:"lr"`        // peak learning rate (AdamW), every variant alike
	WarmupFrac  float64 `json:"warmup"`    // share of each variant's steps of linear warm-up
	MaskProb    float64 `json:"mask_prob"` // share of the tokens predicted
	Budget      string  `json:"budget"`    // ByTokens or ByFLOPs
	// Amount is the budget: tokens or FLOPs per variant. Each variant takes the fewest steps
	// whose total reaches it (so it overshoots by less than one step).
	Amount float64 `json:"amount"`
	// Evals is how many held-out evaluations each variant has, evenly spaced (the last at its
	// end); checkpoints are written at the same steps.
	Evals int    `json:"evals"`
	Seed  uint64 `json:"seed"`
	// Teacher is the model folder DistilBERT's student is distilled from (a BERT with an MLM
	// head and Vocab's vocabulary); only a run with DistilBERT reads it.
	Teacher string `json:"teacher,omitempty"`
	// Tasks are the fine-tuning tasks every variant's final body is measured on (none: the
	// held-out masked LM alone). They change no training: a record of other tasks goes on with
	// its variants kept and scored again.
	Tasks []TaskSpec `json:"tasks,omitempty"`
}

// Quick is a setting that runs in about a minute on two cores: every recipe (BERT, RoBERTa,
// ALBERT, ELECTRA, DeBERTa at Tiny size; DistilBERT's student of the built-in model, half its
// layers), 64-token sequences,
// 24,576 tokens each from the first 300 documents, 4 evaluations on 48 held-out sequences.
func Quick(vocab, trainFile, heldout string) Config {
	return Config{Variants: train.RecipeFamilies, Preset: "tiny", Vocab: vocab, Teacher: vocab, Train: []string{trainFile}, MaxDocs: 300,
		Heldout: heldout, HeldoutSeqs: 48, SeqLen: 64, Batch: 8, LR: 2e-3, WarmupFrac: 0.1, MaskProb: 0.15,
		Budget: ByTokens, Amount: 24576, Evals: 4, Seed: 1, Tasks: quickTasks()}
}

// Full is the setting of the record: Tiny models, 128-token sequences, 8.6·10¹² training FLOPs
// each (2,000 BERT Tiny steps of 8 full 128-token sequences; on tinydata, whose BERT pairs are
// shorter, BERT takes about 3,500 steps, 1.1 M tokens, RoBERTa about 2,200 steps, 1.9 M tokens,
// DistilBERT's student of the built-in model about 420), 10 evaluations on the whole held-out
// text; then fine-tuned on DefaultTasks.
func Full(vocab, trainFile, heldout string) Config {
	c := Quick(vocab, trainFile, heldout)
	c.MaxDocs, c.HeldoutSeqs, c.SeqLen, c.Evals, c.Tasks = 0, 0, 128, 10, DefaultTasks()
	c.Budget, c.Amount = ByFLOPs, 2000*3*train.ForwardFLOPs(tinyBERT(), 8, 128, 8*20, true)
	return c
}

// tinyBERT is BERT Tiny with a 12,000-token vocabulary (the built-in model's), for Full's budget.
func tinyBERT() bert.Config {
	c, _ := bert.Preset("tiny")
	c.VocabSize = 12000
	return c
}

// Validate checks the settings.
func (c Config) Validate() error {
	switch {
	case len(c.Variants) == 0:
		return errors.New("family: no variant")
	case c.Vocab == "" || len(c.Train) == 0 || c.Heldout == "":
		return errors.New("family: the vocabulary, training text and held-out text are all needed")
	case c.SeqLen < 8 || c.Batch < 1 || c.Evals < 1 || c.MaxDocs < 0 || c.HeldoutSeqs < 0:
		return fmt.Errorf("family: sequence length %d (at least 8), batch %d, evaluations %d (at least 1 each)", c.SeqLen, c.Batch, c.Evals)
	case !(c.LR > 0) || math.IsInf(c.LR, 0) || !(c.WarmupFrac >= 0 && c.WarmupFrac < 1) || !(c.MaskProb > 0 && c.MaskProb < 1):
		return fmt.Errorf("family: learning rate %g, warm-up share %g, mask probability %g", c.LR, c.WarmupFrac, c.MaskProb)
	case c.Budget != ByTokens && c.Budget != ByFLOPs:
		return fmt.Errorf("family: budget %q: want %s or %s", c.Budget, ByTokens, ByFLOPs)
	case !(c.Amount >= 1) || math.IsInf(c.Amount, 0):
		return fmt.Errorf("family: budget of %g %s", c.Amount, c.Budget)
	}
	if _, err := bert.Preset(c.Preset); err != nil {
		return fmt.Errorf("family: %w", err)
	}
	names := map[string]bool{}
	for _, s := range c.Tasks {
		if err := s.validate(); err != nil {
			return fmt.Errorf("family: %w", err)
		}
		if names[s.Name] {
			return fmt.Errorf("family: task %s given twice", s.Name)
		}
		names[s.Name] = true
	}
	seen := map[bert.Family]bool{}
	for _, v := range c.Variants {
		if v.Is(bert.FamilyDistilBERT) && c.Teacher == "" {
			return errors.New("family: distilbert needs a teacher folder")
		}
		if _, err := train.ParseRecipeFamily(string(v)); err != nil {
			return fmt.Errorf("family: %w", err)
		}
		if seen[v] {
			return fmt.Errorf("family: variant %s given twice", v)
		}
		seen[v] = true
	}
	return nil
}

// Point is one moment of a variant's run: after Step steps, Tokens tokens and FLOPs training
// FLOPs.
type Point struct {
	Step   int     `json:"step"`
	Tokens int64   `json:"tokens"`
	FLOPs  float64 `json:"flops"`
	// Loss is the training step's masked-LM loss (the sentence task's is apart: comparable across
	// recipes); SentenceLoss is NSP's or SOP's (0 without).
	Loss         float64 `json:"loss,omitempty"`
	SentenceLoss float64 `json:"sentence_loss,omitempty"`
	// The held-out masked-LM figures of an evaluation (ELECTRA's: its generator's).
	Accuracy   float64 `json:"mlm_accuracy,omitempty"`
	Top5       float64 `json:"mlm_top5,omitempty"`
	Perplexity float64 `json:"perplexity,omitempty"`
	// ELECTRA's discriminator: its loss at a step; at an evaluation its accuracy over the held-out
	// tokens corrupted by the generator and its mean P(replaced) on the replaced and the original
	// tokens.
	RTDLoss      float64 `json:"rtd_loss,omitempty"`
	RTDAccuracy  float64 `json:"rtd_accuracy,omitempty"`
	ReplacedProb float64 `json:"rtd_replaced_prob,omitempty"`
	OriginalProb float64 `json:"rtd_original_prob,omitempty"`
}

// Result is one variant's run.
type Result struct {
	Family       bert.Family `json:"family"`
	Architecture string      `json:"architecture"` // the HF class of the folder written
	Params       int64       `json:"params"`       // unique parameters (a tied decoder once)
	// GeneratorParams are ELECTRA's generator's own parameters (not shared with the
	// discriminator, which Params counts).
	GeneratorParams int64   `json:"generator_params,omitempty"`
	Hidden          int     `json:"hidden_size"`
	EmbeddingDim    int     `json:"embedding_size"`
	Blocks          int     `json:"num_hidden_layers"`
	Layers          int     `json:"distinct_layers"` // layers with weights of their own
	SentenceTask    string  `json:"sentence_task"`
	Masking         string  `json:"masking"`
	Steps           int     `json:"steps"`
	Tokens          int64   `json:"tokens"`
	FLOPs           float64 `json:"flops"`
	// Seconds is the training time of the session that finished the run (a resumed run's
	// earlier sessions are not in it: Resumed says so).
	Seconds float64 `json:"seconds"`
	Resumed bool    `json:"resumed,omitempty"`
	// Final is the last evaluation. ELECTRA's held-out masked-LM figures there are its
	// discriminator's with a masked-LM head fine-tuned ProbeSteps steps (probeDiscriminator);
	// Generator holds its generator's at the end of the run.
	Final      Point  `json:"final"`
	ProbeSteps int    `json:"probe_steps,omitempty"`
	Generator  *Point `json:"generator,omitempty"`
	// Tasks are the fine-tuning figures of the final body (Config.Tasks), in the tasks' order.
	Tasks []TaskScore `json:"tasks,omitempty"`
	// ForwardMs is the final model's eval forward pass over a batch of Batch held-out
	// sequences of SeqLen tokens, with its pre-training heads: the median of the rounds of the
	// last Run (timeForwards), in milliseconds.
	ForwardMs float64 `json:"forward_ms,omitempty"`
	Train     []Point `json:"train"` // every step
	Evals     []Point `json:"evals"` // every evaluation
	Folder    string  `json:"folder"`
}

// Record is the experiment's JSON record (RecordFile): its settings and every finished run.
type Record struct {
	Config      Config   `json:"config"`
	HeldoutN    int      `json:"heldout_predictions"` // masked positions of the held-out set
	HeldoutSeqs int      `json:"heldout_sequences"`
	Results     []Result `json:"results"`
	// Teacher is DistilBERT's teacher measured as the variants are (held-out masked LM, the
	// tasks, the forward pass), in a run with DistilBERT: the student's claim is relative to it.
	Teacher *Result `json:"teacher,omitempty"`
}

// Files the experiment writes in its output folder, beside one folder per variant (its
// checkpoints and final model).
const (
	RecordFile = "family.json"
	TableFile  = "family.md"
)

// Curves are the PNG files: training loss and held-out accuracy against tokens and FLOPs.
var Curves = []string{"loss-tokens.png", "loss-flops.png", "heldout-tokens.png", "heldout-flops.png"}

// Run carries out the experiment c in the folder out, printing progress to log (may be nil),
// and returns the record. Variants already finished there (in RecordFile) are kept; a variant
// interrupted mid-run resumes from its latest checkpoint. A cancelled ctx stops it between
// steps, its variant saved to resume. out must hold no experiment of other settings.
func Run(ctx context.Context, c Config, out string, log io.Writer) (*Record, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	rec, err := readRecord(out, c)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.LoadDir(c.Vocab)
	if err != nil {
		return nil, err
	}
	docs, err := readDocs(c.Train, c.MaxDocs, tok)
	if err != nil {
		return nil, err
	}
	heldout, _, err := train.MLMEvalInstances(tok, c.Heldout, train.MLMEvalConfig{SeqLen: c.SeqLen, Seed: c.Seed, MaskProb: c.MaskProb}, c.SeqLen)
	if err != nil {
		return nil, err
	}
	if c.HeldoutSeqs > 0 && len(heldout) > c.HeldoutSeqs {
		heldout = heldout[:c.HeldoutSeqs]
	}
	rec.HeldoutSeqs, rec.HeldoutN = len(heldout), 0
	for _, in := range heldout {
		for _, y := range in.Labels {
			if y != bert.IgnoreIndex {
				rec.HeldoutN++
			}
		}
	}
	tasks := map[string]*taskData{}
	for _, v := range c.Variants {
		var r *Result
		if i := slices.IndexFunc(rec.Results, func(r Result) bool { return r.Family == v }); i >= 0 {
			fmt.Fprintf(log, "%s: finished before, kept\n", v)
			r = &rec.Results[i]
		} else {
			if r, err = runVariant(ctx, c, v, tok, docs, heldout, filepath.Join(out, string(v)), log); err != nil {
				return rec, fmt.Errorf("family %s: %w", v, err)
			}
			rec.Results = append(rec.Results, *r)
			r = &rec.Results[len(rec.Results)-1]
			if err := writeRecord(out, rec); err != nil {
				return rec, err
			}
		}
		if len(r.Tasks) < len(c.Tasks) {
			if err := scoreTasks(ctx, c, r, tok, tasks, log); err != nil {
				return rec, fmt.Errorf("family %s: %w", v, err)
			}
			if err := writeRecord(out, rec); err != nil {
				return rec, err
			}
		}
	}
	if slices.ContainsFunc(c.Variants, func(f bert.Family) bool { return f.Is(bert.FamilyDistilBERT) }) {
		if err := measureTeacher(ctx, c, rec, tok, heldout, tasks, log); err != nil {
			return rec, fmt.Errorf("distilbert's teacher: %w", err)
		}
	}
	if err := timeForwards(c, rec, heldout, tok.PadID()); err != nil {
		return rec, err
	}
	if err := writeRecord(out, rec); err != nil {
		return rec, err
	}
	if err := writeReport(out, rec); err != nil {
		return rec, err
	}
	return rec, nil
}

// readDocs reads the training files' documents, the first maxDocs of them (0: all), tokenized.
func readDocs(paths []string, maxDocs int, tok *tokenizer.Tokenizer) ([]train.TokenDocument, error) {
	var texts [][]string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		docs, err := dataset.ParsePretrain(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, d := range docs {
			if maxDocs > 0 && len(texts) >= maxDocs {
				break
			}
			texts = append(texts, d.Sentences)
		}
	}
	out := train.TokenizeDocuments(tok, texts)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no text", strings.Join(paths, ", "))
	}
	return out, nil
}

// plan walks the data as training will see it, batch by batch, and returns the fewest steps
// whose tokens or FLOPs (as the budget counts) reach the budget, with the cumulative tokens and
// FLOPs after each step (index 0: before the first).
func plan(c Config, mc bert.Config, teacher *bert.Model, data *train.PretrainData) (steps int, tokens []int64, flops []float64, err error) {
	tokens, flops = []int64{0}, []float64{0}
	pos := train.Position{}
	const maxSteps = 1 << 24
	for len(tokens) <= maxSteps {
		var insts []train.Instance
		insts, pos = data.Next(pos, c.Batch)
		b, err := train.NewPretrainBatch(insts, data.PadID, 0)
		if err != nil {
			return 0, nil, nil, err
		}
		tokens = append(tokens, tokens[len(tokens)-1]+int64(b.Tokens))
		f := train.StepFLOPs(mc, b)
		if teacher != nil { // the teacher's forward for its targets, at the masked positions
			f += train.ForwardFLOPs(teacher.Config, b.B, b.S, nPredicted(b), false)
		}
		flops = append(flops, flops[len(flops)-1]+f)
		n := len(tokens) - 1
		if c.Budget == ByTokens && float64(tokens[n]) >= c.Amount || c.Budget == ByFLOPs && flops[n] >= c.Amount {
			return n, tokens, flops, nil
		}
	}
	return 0, nil, nil, fmt.Errorf("a budget of %g %s needs more than %d steps", c.Amount, c.Budget, maxSteps)
}

// runVariant trains (or resumes) one variant in dir.
func runVariant(ctx context.Context, c Config, fam bert.Family, tok *tokenizer.Tokenizer, docs []train.TokenDocument,
	heldout []train.Instance, dir string, log io.Writer) (*Result, error) {
	dc := train.DefaultData(c.SeqLen, c.Seed)
	dc.Masking.Prob = c.MaskProb
	dc.Masking.MaxPredictions = max(1, int(math.Ceil(c.MaskProb*float64(c.SeqLen))))
	if err := train.ApplyRecipe(fam, &dc); err != nil {
		return nil, err
	}
	data, err := train.NewPretrainData(tok, docs, dc)
	if err != nil {
		return nil, err
	}
	var teacher, student *bert.Model
	var mc bert.Config
	if fam.Is(bert.FamilyDistilBERT) {
		// The student is half its teacher, whatever the preset: DistilBERT's claim is about that.
		tf, err := hf.LoadFolder(c.Teacher)
		if err != nil {
			return nil, fmt.Errorf("teacher: %w", err)
		}
		teacher = tf.Model
		if student, err = train.NewDistilStudent(teacher); err != nil {
			return nil, err
		}
		mc = student.Config
	} else if mc, err = train.FamilyConfig(fam, c.Preset, tok); err != nil {
		return nil, err
	}
	steps, tokens, flops, err := plan(c, mc, teacher, data)
	if err != nil {
		return nil, err
	}
	pc := train.DefaultPretrain(steps)
	pc.BatchSize, pc.LR, pc.Warmup, pc.Seed = c.Batch, c.LR, int(c.WarmupFrac*float64(steps)), c.Seed
	pc.OutDir, pc.EvalEvery, pc.KeepCheckpoints = dir, max(1, steps/c.Evals), 1
	pc.SaveEvery = pc.EvalEvery
	latest, err := train.LatestCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	var p *train.Pretrainer
	if latest != "" {
		if p, err = train.ResumeRecipe(fam, latest, data, pc); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "%s: resuming from %s at step %d of %d\n", fam, latest, p.State.Step, steps)
	} else {
		m := student
		if m == nil {
			if m, err = bert.NewRandom(mc, train.RecipeHeads(fam), c.Seed); err != nil {
				return nil, err
			}
		}
		if p, err = train.NewRecipePretrainer(fam, m, tok, data, pc, c.Seed); err != nil {
			return nil, err
		}
	}
	if teacher != nil {
		t, err := train.NewTeacher(teacher, p.Model, train.DistilBERTWeights)
		if err != nil {
			return nil, err
		}
		if err := p.Distil(t); err != nil {
			return nil, err
		}
	}
	p.Eval = heldout
	fmt.Fprintf(log, "%s: %d parameters, %d steps of %d sequences for %s %s (%s, %s masking)\n", fam, p.Model.NumParams(), steps, c.Batch,
		fmtAmount(c.Amount), c.Budget, dc.Instances.Task, dc.MaskingName())
	start := time.Now()
	resumed := latest != ""
	if p.State.Step < steps {
		err = p.Run(ctx, func(e train.Event) {
			if e.Kind == train.EventEval {
				fmt.Fprintf(log, "%s: step %d/%d, %d tokens: held-out masked-LM accuracy %.4f\n", fam, e.Step, steps, e.Tokens, pointOf(e).Accuracy)
			}
		})
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if _, serr := p.SaveCheckpoint(); serr != nil {
				return nil, fmt.Errorf("%w (and the checkpoint failed: %v)", err, serr)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	r := &Result{Family: fam, Params: p.Model.NumParams(), GeneratorParams: generatorParams(p), Hidden: mc.HiddenSize, EmbeddingDim: mc.EmbDim(),
		Blocks: p.Model.NumBlocks(), Layers: len(p.Model.Layers), SentenceTask: dc.Instances.Task.String(),
		Masking: dc.MaskingName(), Steps: steps, Tokens: p.State.Tokens, FLOPs: flops[steps],
		Seconds: time.Since(start).Seconds(), Resumed: resumed, Folder: dir, Architecture: architecture(dir)}
	if r.Tokens != tokens[steps] {
		return nil, fmt.Errorf("trained on %d tokens, the plan counted %d: the data differs from the plan's", r.Tokens, tokens[steps])
	}
	for _, e := range p.History {
		if e.Step < 0 || e.Step > steps {
			continue
		}
		pt := pointOf(e)
		pt.Tokens, pt.FLOPs = tokens[e.Step], flops[e.Step]
		switch e.Kind {
		case train.EventStep:
			r.Train = append(r.Train, pt)
		case train.EventEval:
			r.Evals = append(r.Evals, pt)
		}
	}
	if len(r.Evals) == 0 {
		return nil, errors.New("no evaluation in the run's history")
	}
	r.Final = r.Evals[len(r.Evals)-1]
	if p.Generator != nil {
		fmt.Fprintf(log, "%s: fine-tuning a masked-LM head on the discriminator for %d steps\n", fam, probeSteps(steps))
		pt, err := probeDiscriminator(ctx, c, p.Model, tok, data, heldout, steps, dir)
		if err != nil {
			return nil, err
		}
		gen := r.Final
		r.Generator, r.Final.Accuracy, r.Final.Top5, r.Final.Perplexity = &gen, pt.Accuracy, pt.Top5, pt.Perplexity
		r.ProbeSteps = pt.Step
	}
	return r, nil
}

// pointOf is a step's or an evaluation's figures. ELECTRA's masked-LM figures are its
// generator's (its discriminator has no masked-LM head), with the discriminator's beside them.
func pointOf(e train.Event) Point {
	pt := Point{Step: e.Step, Loss: e.MLMLoss, SentenceLoss: e.NSPLoss, RTDLoss: e.RTDLoss}
	m := e.Metrics
	pre := ""
	if _, ok := m["generator_mlm_accuracy"]; ok {
		pre = "generator_"
	}
	pt.Accuracy, pt.Top5, pt.Perplexity = m[pre+"mlm_accuracy"], m[pre+"mlm_top5"], m[pre+"perplexity"]
	pt.RTDAccuracy, pt.ReplacedProb, pt.OriginalProb = m["rtd_accuracy"], m["rtd_replaced_prob"], m["rtd_original_prob"]
	return pt
}

// nPredicted counts the batch's masked positions.
func nPredicted(b train.PretrainBatch) int {
	n := 0
	for _, y := range b.MLMLabels {
		if y != bert.IgnoreIndex {
			n++
		}
	}
	return n
}

// generatorParams counts ELECTRA's generator's parameters that are not the discriminator's (0
// without a generator).
func generatorParams(p *train.Pretrainer) int64 {
	if p.Generator == nil {
		return 0
	}
	return countParams(p.Optimizer.Params()) - countParams(p.Model.Params())
}

func countParams(ps []bert.Param) int64 {
	var n int64
	for _, q := range ps {
		n += int64(q.T.Len())
	}
	return n
}

// architecture reads the HF class from the config.json of the folder a run wrote.
func architecture(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, hf.ConfigFile))
	if err != nil {
		return ""
	}
	var cfg struct {
		Architectures []string `json:"architectures"`
	}
	if json.Unmarshal(data, &cfg) != nil || len(cfg.Architectures) == 0 {
		return ""
	}
	return cfg.Architectures[0]
}

// readRecord reads out's record, which must be of the settings c, or starts a new one.
func readRecord(out string, c Config) (*Record, error) {
	path := filepath.Join(out, RecordFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Record{Config: c}, nil
	}
	if err != nil {
		return nil, err
	}
	rec, err := parseRecord(data, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// parseRecord reads a record (RecordFile) that must be of the settings c: its results are of
// distinct variants of c.
func parseRecord(data []byte, c Config) (*Record, error) {
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, err
	}
	// The tasks change no training: with other tasks the variants are kept, their scores not.
	oldTasks := rec.Config.Tasks
	rec.Config.Tasks = c.Tasks
	was, _ := json.Marshal(rec.Config)
	now, _ := json.Marshal(c)
	if string(was) != string(now) {
		return nil, fmt.Errorf("an experiment with other settings (%s); choose another folder", was)
	}
	o, _ := json.Marshal(oldTasks)
	n, _ := json.Marshal(c.Tasks)
	if string(o) != string(n) {
		for i := range rec.Results {
			rec.Results[i].Tasks = nil
		}
		if rec.Teacher != nil {
			rec.Teacher.Tasks = nil
		}
	}
	seen := map[bert.Family]bool{}
	for i, r := range rec.Results {
		if !slices.Contains(c.Variants, r.Family) || seen[r.Family] {
			return nil, fmt.Errorf("result %d: variant %q is not one of the settings' %v, or given twice", i, r.Family, c.Variants)
		}
		seen[r.Family] = true
	}
	return &rec, nil
}

// writeRecord writes the record, atomically.
func writeRecord(out string, rec *Record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return hf.WriteFileAtomic(filepath.Join(out, RecordFile), append(data, '\n'))
}

// fmtAmount writes a budget with a metric prefix (3.1M, 2.4T).
func fmtAmount(x float64) string {
	for _, u := range []struct {
		v float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= u.v {
			return fmt.Sprintf("%.3g%s", x/u.v, u.s)
		}
	}
	return fmt.Sprintf("%.0f", x)
}
