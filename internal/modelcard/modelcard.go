// Package modelcard writes a pre-training run's model folder with its model card (README.md):
// the loss curve (loss.png, plot.go), the held-out masked-LM figures, cloze sentences, the data
// and the settings the run recorded. `bertlab modelcard` is its command.
package modelcard

import (
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/internal/human"
	"github.com/bertlab/bertlab/tinydata"
)

// Files of a model folder that the model card writes besides the HF files.
const (
	CardFile      = "README.md"
	LossCurveFile = "loss.png"
	// AccuracyCurveFile plots the held-out top-1 and top-5 and the cloze shares of the
	// evaluations during training (written when there are evaluations).
	AccuracyCurveFile = "accuracy.png"
	NoteFile          = "note.txt" // one line, shown on the page under the header (cmd/modelindex)
)

// MaxShippedWeights bounds the weights of the built-in model, which the page downloads (24 MiB
// of F16: issue 25), over all their files.
const MaxShippedWeights = 24 << 20

// DefaultShardSize is the shard size `bertlab modelcard` saves the weights in: the repository
// that ships the built-in model keeps each file under 20 MiB, so weights over 16 MiB go in
// shards with their index, as transformers' save_pretrained(max_shard_size="16MiB") writes them.
const DefaultShardSize = "16MiB"

// ClozeSet is a file of cloze sentences the card scores, with the share of sentences that must
// have an accepted word in the model's top 5 (0: no bar).
type ClozeSet struct {
	Name  string // what the sentences are, for the card's heading
	Path  string // as the card names it
	Items []dataset.Cloze
	Bar   float64
}

// DefaultCloze are the card's cloze sets as tinydata embeds them: everyday sentences and simple
// facts, with issue 25's bars.
func DefaultCloze() ([]ClozeSet, error) {
	var sets []ClozeSet
	for _, d := range []struct {
		name, file string
		bar        float64
	}{{"Everyday sentences", tinydata.EverydayCloze, 0.7}, {"Simple facts", tinydata.FactsCloze, 0.5}} {
		items, err := tinydata.LoadCloze(d.file)
		if err != nil {
			return nil, err
		}
		sets = append(sets, ClozeSet{Name: d.name, Path: "tinydata/" + d.file, Items: items, Bar: d.bar})
	}
	return sets, nil
}

// clozeFigures is a cloze set as the card shows it.
type clozeFigures struct {
	ClozeSet
	Results []pipeline.ClozeResult
}

// corpusStats counts a pre-training text file as the model saw it.
type corpusStats struct {
	Path                         string
	Docs, Sentences, Tokens, Unk int
}

// Options say what to write.
type Options struct {
	// Run is the output folder of bertlab pretrain: the final model and trainer_state.json.
	Run string
	// Stages are the output folders of the earlier bertlab pretrain runs that Run continued,
	// in order (each started from the model of the one before): the card's training figures,
	// loss curve and evaluations cover them and Run, on one step axis.
	Stages []string
	// Out is the model folder to write: config.json, model.safetensors, vocab.txt,
	// tokenizer_config.json, README.md, loss.png (and note.txt with a Note).
	Out string
	// Heldout is held-out text for the masked-LM figures ("": none); AlsoHeldout more
	// held-out files scored the same way, each with the trigram baseline (a table of their own).
	Heldout     string
	AlsoHeldout []string
	// Train is the training text as the run read it (a file given twice counts twice): the
	// card's data figures and the trigram count baseline. Nil means DefaultTrain; "" entries
	// are skipped, so []string{""} leaves them out.
	Train []string
	// Name is the model's name (default: the base name of Out).
	Name string
	// Note is one line for note.txt (the page shows it) and the top of the card.
	Note string
	// Recipe is a file with the commands that made the run, quoted under "How to reproduce";
	// Extra a Markdown file appended to the card before it ("": none).
	Recipe, Extra string
	// EarlierEvals is a file of the first stage's evaluations from before its history begins
	// (ReadEarlierEvals; "": none): a run carried on across machines keeps only the newest
	// part of its log, and these put the rest back in the card's chart and table.
	EarlierEvals string
	// Cloze are the cloze sets, with the words a reader accepts (nil: DefaultCloze).
	Cloze []ClozeSet
	// DType is the storage dtype of model.safetensors (default F16).
	DType hf.DType
	// MaxShardSize, above 0, saves weights of more bytes in shards of at most that many
	// (hf.SaveOptions.MaxShardSize); 0 writes one model.safetensors.
	MaxShardSize int64
}

// DefaultTrain is the training text a card assumes when Options.Train is nil.
const DefaultTrain = "tinydata/pretrain/train.txt"

// Write writes the model folder o.Out from the run o.Run with its model card, and a summary to
// stdout. Weights larger than MaxShippedWeights are written, then reported as an error.
func Write(o Options, stdout io.Writer) error {
	dt := o.DType
	if dt == "" {
		dt = hf.F16
	}
	if dt != hf.F32 && dt != hf.F16 && dt != hf.BF16 {
		return fmt.Errorf("dtype %q: want F32, F16 or BF16", dt)
	}
	if o.Name == "" {
		o.Name = filepath.Base(filepath.Clean(o.Out))
	}
	if strings.ContainsAny(o.Note, "\r\n") {
		return fmt.Errorf("the note must be one line")
	}
	cloze := o.Cloze
	if cloze == nil {
		var err error
		if cloze, err = DefaultCloze(); err != nil {
			return err
		}
	}

	// The trained model and its history.
	src, err := hf.LoadFolder(o.Run)
	if err != nil {
		return err
	}
	if src.Tokenizer == nil || src.Model.MLM == nil {
		return fmt.Errorf("%s: a model card needs vocab.txt and the masked-LM head", o.Run)
	}
	recipeText, err := readOptional(o.Recipe)
	if err != nil {
		return err
	}
	extraText, err := readOptional(o.Extra)
	if err != nil {
		return err
	}
	var stages []stage
	for _, dir := range append(slices.Clone(o.Stages), o.Run) {
		st, err := train.ReadTrainerState(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w (is %s the --out folder of a finished bertlab pretrain?)", err, dir)
		}
		if err != nil {
			return err
		}
		stages = append(stages, stage{Dir: dir, State: *st, Meta: runMetadata(dir), Flags: recipeFlags(recipeText, dir)})
	}
	meta := stages[len(stages)-1].Meta
	earlier := 0
	if o.EarlierEvals != "" {
		f, err := os.Open(o.EarlierEvals)
		if err != nil {
			return err
		}
		evals, err := ReadEarlierEvals(f, o.EarlierEvals)
		f.Close()
		if err != nil {
			return err
		}
		earlier = prependEarlier(&stages[0], evals)
	}

	// A run without next-sentence prediction never trained the NSP head: the shipped folder
	// leaves it out (a BertForMaskedLM), so no one reads its random IsNext probabilities.
	if meta["sentence_task"] == "none" && src.Model.NSP != nil {
		src.Model.NSP = nil
		if err := src.Model.Config.SetExtra("architectures", []string{"BertForMaskedLM"}); err != nil {
			return err
		}
	}

	// The shipped folder, then everything measured on what it holds (the stored weights).
	if err := hf.SaveFolder(o.Out, src.Model, src.Tokenizer, hf.SaveOptions{DType: dt, MaxShardSize: o.MaxShardSize}); err != nil {
		return err
	}
	shipped, err := hf.LoadFolder(o.Out)
	if err != nil {
		return err
	}
	weightFiles, size, err := hf.WeightsSize(o.Out)
	if err != nil {
		return err
	}

	var eval *train.MLMMetrics
	var evalCmd string
	if o.Heldout != "" {
		r, _, err := train.EvaluateMLMFile(shipped.Model, shipped.Tokenizer, o.Heldout, train.DefaultMLMEval())
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		eval = &r
		evalCmd = "bertlab eval --task mlm --model " + o.Out + " --data " + o.Heldout
	}

	var results []clozeFigures
	for _, set := range cloze {
		rs, err := pipeline.Cloze(shipped.Model, shipped.Tokenizer, set.Items, 5)
		if err != nil {
			return fmt.Errorf("%s: %w", set.Path, err)
		}
		results = append(results, clozeFigures{set, rs})
	}

	var neighbours []pipeline.NeighbourShare
	if o.Heldout != "" {
		texts, err := firstSentences(o.Heldout, neighbourTexts)
		if err != nil {
			return err
		}
		if neighbours, err = pipeline.NeighbourHeads(shipped.Model, shipped.Tokenizer, texts); err != nil {
			return err
		}
	}

	trainFiles := o.Train
	if trainFiles == nil {
		trainFiles = []string{DefaultTrain}
	}
	trainFiles = slices.DeleteFunc(slices.Clone(trainFiles), func(p string) bool { return p == "" })
	// The trigram baseline's counts, made once for every held-out file.
	var tm *train.TrigramModel
	if len(trainFiles) > 0 && (o.Heldout != "" || len(o.AlsoHeldout) > 0) {
		docs, err := train.ReadDocumentsFiles(trainFiles, shipped.Tokenizer)
		if err != nil {
			return err
		}
		if tm, err = train.NewTrigramModel(docs, shipped.Tokenizer); err != nil {
			return err
		}
	}
	var baseline *baselineResult
	if o.Heldout != "" && tm != nil {
		if baseline, err = trigramBaseline(shipped, tm, trainFiles, o.Heldout); err != nil {
			return err
		}
	}

	var also []heldoutFigures
	for _, h := range o.AlsoHeldout {
		r, _, err := train.EvaluateMLMFile(shipped.Model, shipped.Tokenizer, h, train.DefaultMLMEval())
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		fig := heldoutFigures{Path: h, Eval: r}
		if tm != nil {
			if fig.Base, err = trigramBaseline(shipped, tm, trainFiles, h); err != nil {
				return err
			}
		}
		also = append(also, fig)
	}

	var stats []corpusStats
	seen := map[string]bool{}
	for _, p := range append(slices.Clone(trainFiles), o.Heldout) {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		docs, err := train.ReadDocumentsFile(p, shipped.Tokenizer)
		if err != nil {
			return err
		}
		cs := corpusStats{Path: p, Docs: len(docs)}
		for _, d := range docs {
			cs.Sentences += len(d)
			for _, s := range d {
				cs.Tokens += len(s)
				for _, id := range s {
					if id == shipped.Tokenizer.UnkID() {
						cs.Unk++
					}
				}
			}
		}
		stats = append(stats, cs)
	}

	png, err := lossChart(o.Name, stages).renderPNG(960, 520)
	if err != nil {
		return err
	}
	if err := hf.WriteFileAtomic(filepath.Join(o.Out, LossCurveFile), png); err != nil {
		return err
	}
	accPath := filepath.Join(o.Out, AccuracyCurveFile)
	if ac, ok := accuracyChart(o.Name, stages); ok {
		if png, err = ac.renderPNG(960, 520); err != nil {
			return err
		}
		if err := hf.WriteFileAtomic(accPath, png); err != nil {
			return err
		}
	} else if err := os.Remove(accPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	card := modelCard{Name: o.Name, Note: o.Note, Dir: o.Out, Folder: shipped, DType: dt, Size: size, Files: weightFiles, Stages: stages, Meta: meta,
		Earlier: earlier, EarlierFile: o.EarlierEvals,
		Eval: eval, EvalCmd: evalCmd, Baseline: baseline, Also: also, Cloze: results, Neighbours: neighbours, Stats: stats, Recipe: recipeText, Extra: extraText}
	if err := hf.WriteFileAtomic(filepath.Join(o.Out, CardFile), []byte(card.markdown())); err != nil {
		return err
	}
	notePath := filepath.Join(o.Out, NoteFile)
	if o.Note != "" {
		if err := hf.WriteFileAtomic(notePath, []byte(o.Note+"\n")); err != nil {
			return err
		}
	} else if err := os.Remove(notePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}

	fmt.Fprintf(stdout, "wrote %s: %s %s (%s), %s, %s\n", o.Out, strings.Join(weightFiles, ", "), dt, human.Bytes(size), CardFile, LossCurveFile)
	if eval != nil {
		fmt.Fprintf(stdout, "held-out masked LM: top-1 %.4f, top-5 %.4f, perplexity %.2f over %d predictions\n", eval.Accuracy, eval.Top5, eval.Perplexity, eval.N)
	}
	if baseline != nil {
		fmt.Fprintf(stdout, "trigram count baseline on the same positions: top-1 %.4f over %d predictions\n", baseline.Accuracy, baseline.N)
	}
	for _, h := range also {
		fmt.Fprintf(stdout, "%s: masked LM top-1 %.4f over %d predictions", h.Path, h.Eval.Accuracy, h.Eval.N)
		if h.Base != nil {
			fmt.Fprintf(stdout, ", trigram baseline %.4f", h.Base.Accuracy)
		}
		fmt.Fprintln(stdout)
	}
	for _, set := range results {
		share, n := pipeline.ClozeShare(set.Results, 5)
		fmt.Fprintf(stdout, "cloze, %s: an accepted word in the top 5 for %.0f%% of %d sentences\n", strings.ToLower(set.Name), 100*share, n)
		for _, r := range set.Results[:min(3, len(set.Results))] {
			fmt.Fprintf(stdout, "%s -> %s\n", r.Text, predictionList(r.Predictions, false))
		}
	}
	if size > MaxShippedWeights {
		return fmt.Errorf("the weights (%s) are %s, more than the %s the page may download: choose a smaller model or vocabulary", strings.Join(weightFiles, ", "), human.Bytes(size), human.Bytes(MaxShippedWeights))
	}
	return nil
}

// runMetadata returns the settings a run recorded with its optimizer state (seeds, sequence
// length, sentence task, masking): those of run itself when it is a checkpoint folder, else of
// its latest checkpoint; nil when there are none.
// readOptional returns the trimmed text of the file at path, or "" when path is "".
func readOptional(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func runMetadata(run string) map[string]string {
	dir := run
	if _, err := os.Stat(filepath.Join(run, train.OptimizerFile)); err != nil {
		if dir, err = train.LatestCheckpoint(run); err != nil || dir == "" {
			return nil
		}
	}
	f, err := hf.Open(filepath.Join(dir, train.OptimizerFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	return f.Metadata()
}

// stage is one bertlab pretrain run of the model's training: its folder, history and the
// settings it recorded.
type stage struct {
	Dir   string
	State train.TrainerState
	Meta  map[string]string
	// Flags are the flags of the recipe's `bertlab pretrain` command that wrote Dir (name
	// without the dashes: value, or "true"), for settings older checkpoints did not record.
	Flags map[string]string
}

// setting is the stage's setting recorded in its checkpoint's metadata under key, else the
// value of flag in the command that made it, else "".
func (s stage) setting(key, flag string) string {
	if v, ok := s.Meta[key]; ok {
		return v
	}
	return s.Flags[flag]
}

// lateStart is the first step of the stage's logged history when that is not step 1 (the run
// was carried on from saved weights and the steps before are logged nowhere here), else 0.
func (s stage) lateStart() int {
	if st, _ := splitHistory(s.State.LogHistory); len(st) > 0 && st[0].Step > 1 {
		return st[0].Step
	}
	return 0
}

// recipeFlags returns the flags of the `bertlab pretrain` line of recipe whose --out is dir
// (nil when none is): a flag followed by a word that is not a flag takes it as its value,
// others are "true"; a flag given twice keeps its last value.
func recipeFlags(recipe, dir string) map[string]string {
	for _, line := range strings.Split(recipe, "\n") {
		f := strings.Fields(line)
		if !slices.Contains(f, "pretrain") {
			continue
		}
		m := map[string]string{}
		for i := 0; i < len(f); i++ {
			k, ok := strings.CutPrefix(f[i], "--")
			if !ok {
				continue
			}
			if name, v, ok := strings.Cut(k, "="); ok {
				m[name] = v
			} else if i+1 < len(f) && !strings.HasPrefix(f[i+1], "--") {
				m[k] = f[i+1]
				i++
			} else {
				m[k] = "true"
			}
		}
		if m["out"] != "" && filepath.Clean(m["out"]) == filepath.Clean(dir) {
			return m
		}
	}
	return nil
}

// stageEvent is an event of a stage's history with its step counted from the start of the
// first stage.
type stageEvent struct {
	train.Event
	Stage int // index in the stages
	Step  int // steps of the earlier stages + the event's own step
}

// history lists the step events and the evaluations of all stages, in order, on one step axis.
func history(stages []stage) (steps, evals []stageEvent) {
	offset := 0
	for i, s := range stages {
		st, ev := splitHistory(s.State.LogHistory)
		for _, e := range st {
			steps = append(steps, stageEvent{e, i, offset + e.Step})
		}
		for _, e := range ev {
			evals = append(evals, stageEvent{e, i, offset + e.Step})
		}
		offset += s.State.GlobalStep
	}
	return steps, evals
}

// lossChart plots the training loss of every step (raw and smoothed) and the held-out
// masked-LM loss of every evaluation, the stages one after the other.
func lossChart(name string, stages []stage) chart {
	var sx, sy, ex, ey []float64
	steps, evals := history(stages)
	for _, e := range steps {
		// The masked-LM term alone: the total adds NSP or, early on, the neighbour prior.
		sx, sy = append(sx, float64(e.Step)), append(sy, e.MLMLoss)
	}
	for _, e := range evals {
		if l, ok := e.Metrics["mlm_loss"]; ok {
			ex, ey = append(ex, float64(e.Step)), append(ey, l)
		}
	}
	c := chart{
		title:  name + ": masked-LM loss during pre-training",
		xLabel: "optimizer step",
		yLabel: "loss (nats)",
	}
	if k := len(sy) / 40; k > 1 {
		c.series = append(c.series,
			series{label: "training, each step", color: colLight, width: 1, x: sx, y: sy},
			series{label: fmt.Sprintf("training, mean of %d steps", k), color: colBlue, width: 2.5, x: sx, y: movingAverage(sy, k)})
	} else {
		c.series = append(c.series, series{label: "training", color: colBlue, width: 2, x: sx, y: sy})
	}
	c.series = append(c.series, series{label: "held-out", color: colOrange, width: 2, dots: true, x: ex, y: ey})
	return c
}

// accuracyChart plots, in percent, the held-out masked-LM top-1 and top-5 and each cloze set's
// top-5 share (bertlab pretrain --cloze) of every evaluation; ok is false without evaluations.
func accuracyChart(name string, stages []stage) (c chart, ok bool) {
	_, evals := history(stages)
	c = chart{title: name + ": held-out figures during pre-training", xLabel: "optimizer step", yLabel: "percent"}
	add := func(label, key string, col color.RGBA, dots bool) {
		s := series{label: label, color: col, width: 2, dots: dots}
		for _, e := range evals {
			if v, found := e.Metrics[key]; found {
				s.x, s.y = append(s.x, float64(e.Step)), append(s.y, 100*v)
			}
		}
		if len(s.x) > 0 {
			c.series = append(c.series, s)
		}
	}
	add("held-out top-1", "mlm_accuracy", colBlue, false)
	add("held-out top-5", "mlm_top5", colLight, false)
	keys := map[string]bool{}
	for _, e := range evals {
		for k := range e.Metrics {
			if strings.HasPrefix(k, "cloze_") && strings.HasSuffix(k, "_top5") {
				keys[k] = true
			}
		}
	}
	cols := []color.RGBA{colOrange, colGrey}
	for i, k := range slices.Sorted(maps.Keys(keys)) {
		add("cloze "+strings.TrimSuffix(strings.TrimPrefix(k, "cloze_"), "_top5")+", top 5", k, cols[i%len(cols)], true)
	}
	return c, len(c.series) > 0
}

// modelCard holds what README.md reports.
type modelCard struct {
	Name, Note, Dir string
	Folder          *hf.Folder
	DType           hf.DType
	Size            int64
	Files           []string // the weights files (hf.WeightsFiles)
	Stages          []stage
	Meta            map[string]string // the last stage's settings
	Eval            *train.MLMMetrics
	EvalCmd         string
	Baseline        *baselineResult
	Also            []heldoutFigures
	Cloze           []clozeFigures
	Neighbours      []pipeline.NeighbourShare
	Stats           []corpusStats
	Recipe, Extra   string
	Earlier         int    // evaluations of the first stage read from EarlierFile
	EarlierFile     string // Options.EarlierEvals
}

// familyWords name a model's family for the card.
type familyWords struct {
	name, arch, desc string // "RoBERTa", its HF class, the architecture row
}

// familyOf describes m's family: its name, the HF class of its folder (config.json's
// architectures, else BertForPreTraining) and what sets its architecture apart.
func familyOf(m *bert.Model) familyWords {
	c := m.Config
	fw := familyWords{name: "BERT", arch: "BertForPreTraining", desc: "BERT (post-LayerNorm encoder, masked-LM head tied to the word embeddings)"}
	var archs []string
	if raw, ok := c.Extra["architectures"]; ok && json.Unmarshal(raw, &archs) == nil && len(archs) > 0 {
		fw.arch = archs[0]
	}
	switch c.FamilyOf() {
	case bert.FamilyRoBERTa:
		fw.name, fw.desc = "RoBERTa", "RoBERTa (BERT's post-LayerNorm encoder, positions counted from pad_token_id+1, one token type, masked-LM head tied to the word embeddings, no pooler)"
	case bert.FamilyALBERT:
		fw.name, fw.desc = "ALBERT", fmt.Sprintf("ALBERT (embeddings of size %d projected to the hidden size, %d blocks sharing %d layer(s), masked-LM head back down to %d and tied, sentence-order head)",
			c.EmbDim(), c.NumHiddenLayers, c.NumLayers(), c.EmbDim())
	case bert.FamilyELECTRA:
		fw.name, fw.desc = "ELECTRA", "ELECTRA's discriminator (BERT's encoder with a replaced-token detection head; its generator, which shares its embeddings, in generator/)"
	case bert.FamilyDistilBERT:
		fw.name, fw.desc = "DistilBERT", "DistilBERT (no token types, no pooler, masked-LM head tied to the word embeddings)"
	case bert.FamilyDeBERTaV2:
		fw.name, fw.desc = "DeBERTa-v2", "DeBERTa-v2 (disentangled attention: content-to-position and position-to-content terms from shared relative embeddings, no absolute positions, masked-LM head tied to the word embeddings)"
	}
	return fw
}

// markdown writes the model card.
func (c modelCard) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	m := c.Folder.Model
	mc := m.Config
	steps, evals := history(c.Stages)

	p("# %s\n\n", c.Name)
	if c.Note != "" {
		p("> **%s**\n\n", c.Note)
	}
	fw := familyOf(m)
	p("A small %s (%d layers, hidden size %d) pre-trained from scratch by bertlab, in pure Go, on the\n", fw.name, mc.NumHiddenLayers, mc.HiddenSize)
	p("English text that the repository carries (tinydata; the files under \"Data\"). It is bertlab's\n")
	p("built-in model, the one the page and\n")
	p("`bertlab fill-mask` use when no other model is given. It is a HuggingFace model folder:\n")
	p("`%s.from_pretrained(...)` and `BertTokenizer.from_pretrained(...)` load it.\n\n", fw.arch)
	if fw.name != "BERT" {
		p("It follows %s's pre-training recipe (`bertlab pretrain --family %s`) with BERT's WordPiece\n", fw.name, mc.FamilyOf())
		p("vocabulary: config.json and tokenizer_config.json name `tokenizer_class` `BertTokenizer`, so that\n")
		p("transformers' AutoTokenizer reads vocab.txt rather than looking for the family's own tokenizer files.\n\n")
	}

	p("## Model\n\n")
	p("| | |\n|---|---|\n")
	p("| architecture | %s |\n", fw.desc)
	p("| layers, hidden size, heads, intermediate size | %d, %d, %d, %d |\n", mc.NumHiddenLayers, mc.HiddenSize, mc.NumAttentionHeads, mc.IntermediateSize)
	p("| vocabulary | %d WordPiece tokens, lowercased, accents stripped (`bertlab vocab`) |\n", mc.VocabSize)
	p("| positions | %d (trained on sequences of at most %s tokens) |\n", mc.MaxPositionEmbeddings, orDash(c.Meta["max_seq_length"]))
	p("| activation, dropout | %s, %g (hidden), %g (attention) |\n", mc.HiddenAct, mc.HiddenDropoutProb, mc.AttentionProbsDropoutProb)
	p("| parameters | %s |\n", human.Commas(m.NumParams()))
	p("| weights | %s, %s, %s |\n", codeList(c.Files), c.DType, human.Bytes(c.Size))
	p("| heads | %s |\n\n", strings.Join(m.HeadNames(), ", "))
	if c.Meta["sentence_task"] == "none" && fw.name == "BERT" {
		p("Trained on masked LM only (no next-sentence prediction), so the NSP head, never trained, is\n")
		p("left out (`BertForMaskedLM`); the pooler keeps its random initial weights, and fine-tuning\n")
		p("trains it with the task head.\n\n")
	}

	p("## Data\n\n")
	fromTinydata := len(c.Stats) > 0
	for _, s := range c.Stats {
		fromTinydata = fromTinydata && strings.HasPrefix(filepath.ToSlash(s.Path), "tinydata/")
	}
	if fromTinydata {
		p("The files below, from `tinydata/` (`tinydata/SOURCES.md` gives every source's package, version,\n")
		p("licence and notice, and how `make tinydata` rebuilds the files byte for byte): one sentence a\n")
		p("line, documents (a chapter, a WordNet synset, an address, a manual page) separated by blank\n")
		p("lines; a file named more than once was read that many times an epoch. The held-out documents\n")
		p("are in none of the training files.\n\n")
	} else {
		p("The files below (\"Sources and licences\" says where each comes from): one sentence a line,\n")
		p("documents separated by blank lines; a file named more than once was read that many times an\n")
		p("epoch (\"How to reproduce\" has the commands). The held-out documents are in none of the\n")
		p("training files.\n\n")
	}
	if len(c.Stats) > 0 {
		p("| file | documents | sentences | WordPiece tokens | [UNK] |\n|---|---:|---:|---:|---:|\n")
		for _, s := range c.Stats {
			p("| `%s` | %s | %s | %s | %d |\n", s.Path, human.Commas(int64(s.Docs)), human.Commas(int64(s.Sentences)), human.Commas(int64(s.Tokens)), s.Unk)
		}
		p("\n")
	}
	p("WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. (The WordNet licence,\n")
	p("quoted in full in `tinydata/SOURCES.md`, asks that its notice go with copies of the database;\n")
	p("this model is not a copy, but it learnt from it.) The notices of the other sources are in\n")
	p("`tinydata/SOURCES.md`.\n\n")

	p("## Training\n\n")
	multi := len(c.Stages) > 1
	if multi {
		p("The model was trained in %d stages, each a `bertlab pretrain` run that starts from the model\n", len(c.Stages))
		p("the one before it wrote (the commands are under \"How to reproduce\"); the loss curve and the\n")
		p("evaluations count the steps on from one stage to the next.\n\n")
	}
	var allTokens int64
	var allSecs float64
	for i, s := range c.Stages {
		if multi {
			p("### Stage %d: `%s`\n\n", i+1, s.Dir)
		}
		tokens, secs := stageTable(p, s)
		allTokens += tokens
		allSecs += secs
	}
	if multi {
		about := ""
		for _, s := range c.Stages {
			if s.lateStart() > 0 {
				about = "about " // a stage's tokens are estimated
			}
		}
		p("In all: %s steps, %s%s tokens seen, %s at the speeds above.\n\n", human.Commas(int64(c.totalSteps())), about, human.Commas(allTokens), aboutDuration(allSecs))
	}
	if len(steps) > 0 {
		first := steps[0]
		k := max(1, len(steps)/40)
		tail := steps[len(steps)-min(k, len(steps)):]
		mean := 0.0
		for _, e := range tail {
			mean += e.MLMLoss
		}
		mean /= float64(len(tail))
		p("Training loss (masked-LM cross-entropy, nats): %.3f at step %d, %.3f averaged over the last %d steps.\n\n", first.MLMLoss, first.Step, mean, len(tail))
		for i, s := range c.Stages {
			if first := s.lateStart(); first > 0 {
				p("Stage %d's history here starts at its step %s: the run was carried on across machines from saved\n", i+1, human.Commas(int64(first)))
				if i == 0 && c.Earlier > 0 {
					p("weights, so the loss curve holds only the steps since; the %d evaluations before it are the\n", c.Earlier)
					p("ones the earlier sessions recorded (`%s`; `scripts/PRETRAIN.md` tells each session's part),\n", filepath.ToSlash(c.EarlierFile))
					p("with the figures they kept (an empty cell: not recorded).\n\n")
				} else {
					p("weights, so the curves and the table below hold only the steps since (`scripts/PRETRAIN.md`\n")
					p("records the evaluations of the whole run).\n\n")
				}
			}
		}
	}
	p("![masked-LM loss during pre-training](%s)\n\n", LossCurveFile)
	if _, ok := accuracyChart(c.Name, c.Stages); ok {
		p("![held-out top-1 and top-5, and the cloze shares, during pre-training](%s)\n\n", AccuracyCurveFile)
	}
	if len(evals) > 0 {
		shown := thinEvals(evals, maxEvalRows)
		p("Held-out evaluations during training (the first static mask of each held-out sequence, at\n")
		p("most %s predictions a sequence; model in float32", orDash(maxPredictions(c.Meta)))
		if len(shown) < len(evals) {
			p("; %d of the %d, evenly spaced, with each stage's last; the loss curve has them all", len(shown), len(evals))
		}
		p("):\n\n")
		if multi {
			p("| stage | step | masked-LM loss | top-1 | top-5 | perplexity |\n|---:|---:|---:|---:|---:|---:|\n")
		} else {
			p("| step | masked-LM loss | top-1 | top-5 | perplexity |\n|---:|---:|---:|---:|---:|\n")
		}
		for _, e := range shown {
			if multi {
				p("| %d ", e.Stage+1)
			}
			cell := func(key, format string, scale float64) string { // "–": not recorded
				if v, ok := e.Metrics[key]; ok {
					return fmt.Sprintf(format, scale*v)
				}
				return "–"
			}
			p("| %d | %s | %s | %s | %s |\n", e.Step, cell("mlm_loss", "%.3f", 1), cell("mlm_accuracy", "%.2f%%", 100), cell("mlm_top5", "%.2f%%", 100), cell("perplexity", "%.1f", 1))
		}
		p("\n")
	}

	p("## Evaluation\n\n")
	if c.Eval != nil {
		p("Masked LM on the held-out split with the weights as stored here (%s), 15%% of the tokens of\n", c.DType)
		p("every sequence predicted (80%% [MASK], 10%% random, 10%% unchanged):\n\n")
		p("```\n%s\n```\n\n", c.EvalCmd)
		p("| top-1 accuracy | top-5 accuracy | perplexity | predictions |\n|---:|---:|---:|---:|\n")
		p("| %.2f%% | %.2f%% | %.2f | %s |\n\n", 100*c.Eval.Accuracy, 100*c.Eval.Top5, c.Eval.Perplexity, human.Commas(int64(c.Eval.N)))
		if b := c.Baseline; b != nil {
			p("The trigram count baseline on the same %s masked positions (for each, the token seen most often\n", human.Commas(int64(b.N)))
			p("between the same two neighbours in the training text, else next to either neighbour, else the\n")
			p("most frequent token; `train.TrigramModel`, counted on %s): **top-1 %.2f%%**.\n\n", strings.Join(b.Train, ", "), 100*b.Accuracy)
		}
	} else {
		p("(No held-out evaluation was run for this card.)\n\n")
	}
	if len(c.Also) > 0 {
		p("The same figures on more held-out text (`bertlab eval --task mlm --data FILE`), each beside the\n")
		p("trigram count baseline on the same positions:\n\n")
		p("| held-out file | top-1 | top-5 | perplexity | predictions | trigram baseline top-1 |\n|---|---:|---:|---:|---:|---:|\n")
		for _, h := range c.Also {
			base := "-"
			if h.Base != nil {
				base = fmt.Sprintf("%.2f%%", 100*h.Base.Accuracy)
			}
			p("| `%s` | %.2f%% | %.2f%% | %.2f | %s | %s |\n", h.Path, 100*h.Eval.Accuracy, 100*h.Eval.Top5, h.Eval.Perplexity, human.Commas(int64(h.Eval.N)), base)
		}
		p("\n")
	}

	for _, set := range c.Cloze {
		p("## Cloze: %s\n\n", strings.ToLower(set.Name))
		share, n := pipeline.ClozeShare(set.Results, 5)
		p("%d sentences written for bertlab (`%s`; none taken from the corpus), the five most\n", len(set.Results), set.Path)
		p("likely tokens for the mask and their probabilities (`bertlab fill-mask --model %s \"...\"`).\n", c.Dir)
		if n > 0 {
			p("The words a reader accepts were written down before any model's answers were seen; an\n")
			p("accepted word is in the top 5 for **%.0f%%** of the %d sentences", 100*share, n)
			if set.Bar > 0 {
				p(" (the bar: %.0f%%)", 100*set.Bar)
			}
			p(".\n")
		}
		p("\n| sentence | top 5 | accepted | in the top 5 |\n|---|---|---|---|\n")
		for _, r := range set.Results {
			mark := ""
			if r.Accept != nil {
				mark = "no"
				if r.Hit(5) {
					mark = "yes"
				}
			}
			p("| %s | %s | %s | %s |\n", mdEscape(r.Text), predictionList(r.Predictions, true), mdEscape(strings.Join(r.Accept, ", ")), mark)
		}
		p("\n")
	}

	if len(c.Neighbours) > 0 {
		prev, next := c.Neighbours[0], c.Neighbours[0]
		for _, n := range c.Neighbours {
			if n.Prev > prev.Prev {
				prev = n
			}
			if n.Next > next.Next {
				next = n
			}
		}
		p("## Heads that look at the neighbours\n\n")
		p("The mean attention weight each head puts on the token just before and just after a token,\n")
		p("over the first %d sentences of the held-out text (uniform attention over a 30-token sentence\n", neighbourTexts)
		p("would give about 0.03). See them in the page's Attention view:\n\n")
		p("- **previous-token head: layer %d, head %d** (%.2f of its attention on the previous token)\n", prev.Layer, prev.Head, prev.Prev)
		p("- **next-token head: layer %d, head %d** (%.2f on the next token)\n\n", next.Layer, next.Head, next.Next)
		p("| layer | head | previous token | next token |\n|---:|---:|---:|---:|\n")
		for _, n := range c.Neighbours {
			p("| %d | %d | %.3f | %.3f |\n", n.Layer, n.Head, n.Prev, n.Next)
		}
		p("\n")
	}

	if c.Extra != "" {
		p("%s\n\n", c.Extra)
	}

	p("## How to reproduce\n\n")
	if allSecs > 0 {
		p("From the repository root, on any machine with Go (%s of training on the machine that made it,\n", aboutDuration(allSecs))
		p("%s, at the speeds under \"Training\"):\n\n", machineWords())
	} else {
		p("From the repository root, on any machine with Go:\n\n")
	}
	p("```\nmake pretrain\n```\n\n")
	p("which runs `scripts/pretrain.sh`: the vocabulary, then pre-training (resumable: run it again\n")
	p("after an interruption), then this folder and card (`bertlab modelcard`). Everything is a\n")
	p("function of the data and the seeds; the commands it ran:\n\n")
	if c.Recipe != "" {
		p("```\n%s\n```\n\n", c.Recipe)
	}
	return b.String()
}

// machineWords describes the machine the card is written on ("2 cores").
func machineWords() string {
	return fmt.Sprintf("%d cores", runtime.NumCPU())
}

// maxEvalRows is about how many held-out evaluations the card's table lists.
const maxEvalRows = 40

// thinEvals keeps about n of the evaluations, evenly spaced: the first, every k-th after it
// (k = ⌈len/n⌉) and each stage's last (the figures the stage ended on).
func thinEvals(evals []stageEvent, n int) []stageEvent {
	k := (len(evals) + n - 1) / max(n, 1)
	if k <= 1 {
		return evals
	}
	var out []stageEvent
	for i, e := range evals {
		last := i == len(evals)-1 || evals[i+1].Stage != e.Stage
		if i%k == 0 || last {
			out = append(out, e)
		}
	}
	return out
}

// stageTable writes the table of one stage of training and returns the tokens it saw and its
// wall time at the speed it last reported (0 when it reported none).
func stageTable(p func(string, ...any), s stage) (tokens int64, secs float64) {
	st := s.State
	steps, _ := splitHistory(st.LogHistory)
	p("| | |\n|---|---|\n")
	p("| objective | %s |\n", objective(s))
	p("| steps | %s of %s, batch %d sequences |\n", human.Commas(int64(st.GlobalStep)), human.Commas(int64(st.MaxSteps)), st.BatchSize)
	if len(steps) > 0 {
		first, last := steps[0], steps[len(steps)-1]
		if first.Step > 1 && last.Step > first.Step {
			// The history starts late: the run was carried on from saved weights (on another
			// machine, --start-step), and the steps before are in no history here. The tokens
			// are estimated from the tokens a step of the part that is.
			perStep := float64(last.Tokens-first.Tokens) / float64(last.Step-first.Step)
			tokens = int64(perStep * float64(st.GlobalStep))
			p("| tokens seen | about %s (%.2f epochs; %.0f a step over steps %s-%s, the part of the run whose history this folder holds: it was carried on across machines from saved weights) |\n",
				human.Commas(tokens), st.Epoch, perStep, human.Commas(int64(first.Step)), human.Commas(int64(last.Step)))
			lr, warm := s.setting("peak_lr", "lr"), s.setting("warmup_steps", "warmup")
			if lr == "" {
				lr = "?"
			}
			p("| optimizer | AdamW, peak learning rate %s after %s warm-up steps, then linear decay to 0; weight decay 0.01, gradient clipping 1.0 |\n", lr, orDash(warm))
		} else {
			peak := 0.0
			warm := 0
			for _, e := range steps {
				if e.LR > peak {
					peak, warm = e.LR, e.Step
				}
			}
			tokens = last.Tokens
			p("| tokens seen | %s (%.2f epochs) |\n", human.Commas(last.Tokens), st.Epoch)
			p("| optimizer | AdamW, peak learning rate %.3g reached at step %d, then linear decay to 0; weight decay 0.01, gradient clipping 1.0 |\n", peak, warm)
		}
		if last.TokensPerSec > 0 {
			secs = float64(tokens) / last.TokensPerSec
			p("| speed | %.0f tokens/s in the last session, evaluations and checkpoints included (%s for the whole run at that speed) |\n", last.TokensPerSec, aboutDuration(secs))
		}
		p("| seeds | data %s, training %s |\n", orDash(s.Meta["data_seed"]), orDash(s.Meta["train_seed"]))
	}
	p("\n")
	return tokens, secs
}

// totalSteps is the number of optimizer steps of all stages.
func (c modelCard) totalSteps() int {
	n := 0
	for _, s := range c.Stages {
		n += s.State.GlobalStep
	}
	return n
}

// splitHistory separates the step events from the evaluations.
func splitHistory(h []train.Event) (steps, evals []train.Event) {
	for _, e := range h {
		switch e.Kind {
		case train.EventStep:
			steps = append(steps, e)
		case train.EventEval:
			evals = append(evals, e)
		}
	}
	return steps, evals
}

func objective(st stage) string {
	meta := st.Meta
	prob := 0.15
	if v := st.setting("mask_prob", "mask-prob"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			prob = f
		}
	}
	s := fmt.Sprintf("masked LM (%g%% of the tokens: 80%% [MASK], 10%% random, 10%% unchanged)", 100*prob)
	if st.setting("whole_word", "whole-word") == "true" {
		s = fmt.Sprintf("masked LM with whole-word masking (%g%% of the tokens, a whole word's pieces chosen together: 80%% [MASK], 10%% random, 10%% unchanged)", 100*prob)
	}
	if meta["dynamic_masking"] == "true" {
		s += ", new masks every epoch"
	}
	switch meta["sentence_task"] {
	case "none":
		s += "; sequences packed with consecutive sentences across documents (RoBERTa's FULL-SENTENCES), no next-sentence prediction"
	case "":
	default:
		s += "; " + meta["sentence_task"] + " prediction"
	}
	return s
}

// maxPredictions is max_predictions_per_seq of the run: ceil(0.15 × the sequence length), as
// bertlab pretrain sets it by default.
func maxPredictions(meta map[string]string) string {
	var n int
	if _, err := fmt.Sscan(meta["max_seq_length"], &n); err != nil || n <= 0 {
		return ""
	}
	return fmt.Sprint(int(math.Ceil(0.15 * float64(n))))
}

func predictionList(ps []pipeline.Prediction, md bool) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		tok := p.Token
		if md {
			tok = "`" + strings.ReplaceAll(tok, "`", "'") + "`"
		}
		parts[i] = fmt.Sprintf("%s %.0f%%", tok, 100*p.Score)
	}
	return strings.Join(parts, ", ")
}

// mdEscape keeps text from being read as Markdown table syntax or a link.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "[", `\[`, "]", `\]`).Replace(s)
}

// aboutDuration writes a number of seconds for people: "about 1 h 52 min", "about 4 min".
func aboutDuration(secs float64) string {
	m := int(math.Round(secs / 60))
	if m >= 60 {
		return fmt.Sprintf("about %d h %02d min", m/60, m%60)
	}
	return fmt.Sprintf("about %d min", max(m, 1))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ReadCloze reads a file of cloze sentences (dataset.ParseCloze's format); errors name the file.
func ReadCloze(path string) ([]dataset.Cloze, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cs, err := dataset.ParseCloze(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

// neighbourTexts is how many held-out sentences the card's neighbour-head figures average over.
const neighbourTexts = 300

// firstSentences reads the first n non-empty lines (sentences) of a pre-training text file.
func firstSentences(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	docs, err := dataset.ParsePretrain(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, d := range docs {
		for _, s := range d.Sentences {
			if len(out) == n {
				return out, nil
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// heldoutFigures are one more held-out file's masked-LM figures and trigram baseline.
type heldoutFigures struct {
	Path string
	Eval train.MLMMetrics
	Base *baselineResult
}

// baselineResult is the trigram count baseline's score on the held-out positions.
type baselineResult struct {
	Accuracy float64
	N        int
	Train    []string // the files counted, each once with "×n" when read n times
}

// trigramBaseline scores the training files' trigram counts tm on the masked positions that the
// card's held-out evaluation scores the model on.
func trigramBaseline(f *hf.Folder, tm *train.TrigramModel, trainFiles []string, heldout string) (*baselineResult, error) {
	insts, _, err := train.MLMEvalInstances(f.Tokenizer, heldout, train.DefaultMLMEval(), f.Model.Config.MaxPositionEmbeddings)
	if err != nil {
		return nil, err
	}
	c, n := tm.Evaluate(insts)
	if n == 0 {
		return nil, fmt.Errorf("%s: no masked position for the trigram baseline", heldout)
	}
	var names []string // each file once, with the times it was read
	count := map[string]int{}
	for _, p := range trainFiles {
		if count[p]++; count[p] == 1 {
			names = append(names, p)
		}
	}
	for i, p := range names {
		names[i] = "`" + p + "`"
		if n := count[p]; n > 1 {
			names[i] += fmt.Sprintf(" ×%d", n)
		}
	}
	return &baselineResult{Accuracy: float64(c) / float64(n), N: n, Train: names}, nil
}

// codeList writes file names as Markdown code, joined by commas.
func codeList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}
