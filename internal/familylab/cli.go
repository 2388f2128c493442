package familylab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/internal/cli"
)

// Defaults of the command, relative to a clone's root: the built-in model's vocabulary and
// tinydata's pre-training text.
const (
	DefaultVocab   = "assets/models/bertlab-mini"
	DefaultTrain   = "tinydata/pretrain/train.txt"
	DefaultHeldout = "tinydata/pretrain/heldout.txt"
)

// Usage is the command's synopsis.
const Usage = "bertlab family --out DIR [--quick | --full] [--variants bert,roberta,albert,electra,distilbert,deberta] [--budget tokens|flops] [--amount N] [--preset tiny] [--teacher DIR] [--tasks sentiment,pos|none] ..."

// Command is `bertlab family`: it reads the flags in args, runs the experiment (Run) and
// prints where the table, record and curves are; usage problems wrap cli.ErrUsage. A cancelled ctx stops it with the current
// variant saved: the same command resumes it.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("family", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output folder: family.md, family.json, the curves (PNG) and one folder per variant (checkpoints, final model in HF layout)")
	quick := fs.Bool("quick", false, "the quick setting, the default (Tiny, 64-token sequences, 24,576 tokens a variant from 300 documents, 48 held-out sequences: about a minute)")
	full := fs.Bool("full", false, "the record's setting (Tiny, 128-token sequences, 8.6e12 training FLOPs each: 2,000 BERT steps of 8 full sequences, the whole held-out text)")
	variants := fs.String("variants", "", "comma-separated recipes to compare (default all: bert,roberta,albert,electra,distilbert,deberta)")
	budget := fs.String("budget", "", "what every variant gets the same of: tokens or flops (training FLOPs counted from the shapes)")
	amount := fs.Float64("amount", 0, "the budget per variant: tokens, or FLOPs (e.g. 2e14)")
	preset := fs.String("preset", "", "model size of every variant: "+strings.Join(bert.PresetNames(), ", "))
	vocab := fs.String("vocab", DefaultVocab, "folder with vocab.txt (every variant uses this WordPiece vocabulary)")
	data := fs.String("data", DefaultTrain, "training text: one sentence a line, a blank line between documents")
	heldout := fs.String("heldout", DefaultHeldout, "held-out text in the same format: the masked-LM set every variant is evaluated on")
	maxDocs := fs.Int("max-docs", -1, "use the first N documents of --data (0: all; -1: the setting's)")
	heldoutSeqs := fs.Int("heldout-seqs", -1, "use the first N held-out sequences (0: all; -1: the setting's)")
	seq := fs.Int("seq", 0, "max_seq_length (0: the setting's)")
	batch := fs.Int("batch", 0, "sequences per step (0: the setting's)")
	lr := fs.Float64("lr", 0, "peak learning rate of every variant (0: the setting's)")
	evals := fs.Int("evals", 0, "held-out evaluations (and checkpoints) along each run (0: the setting's)")
	seed := fs.Uint64("seed", 1, "seed of weights, instances, masks and order")
	teacher := fs.String("teacher", DefaultVocab, "the BERT folder DistilBERT's student is distilled from (half its layers, its width)")
	tasks := fs.String("tasks", "", "fine-tuning tasks every variant's final body is scored on: sentiment,pos (the default) or none")
	pageRecord := fs.String("page-record", "", "also write the record thinned for the page's Family lab to this file (e.g. assets/family/record.json)")
	taskData := fs.String("task-data", TaskDataDir, "folder with the tasks' files: sentiment/{train,test}.tsv, pos/{train,test}.conll")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q; %s", cli.ErrUsage, fs.Arg(0), Usage)
	case *out == "":
		return fmt.Errorf("%w: %s", cli.ErrUsage, Usage)
	case *quick && *full:
		return fmt.Errorf("%w: --quick and --full exclude each other", cli.ErrUsage)
	}
	c := Quick(*vocab, *data, *heldout)
	if *full {
		c = Full(*vocab, *data, *heldout)
	}
	if *variants != "" {
		c.Variants = nil
		for _, v := range strings.Split(*variants, ",") {
			f, err := train.ParseRecipeFamily(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%w: --variants: %v", cli.ErrUsage, err)
			}
			c.Variants = append(c.Variants, f)
		}
	}
	if *tasks == "none" {
		c.Tasks = nil
	} else if *tasks != "" {
		var keep []TaskSpec
		for _, name := range strings.Split(*tasks, ",") {
			i := slices.IndexFunc(c.Tasks, func(s TaskSpec) bool { return s.Name == strings.TrimSpace(name) })
			if i < 0 {
				return fmt.Errorf("%w: --tasks: %q is not sentiment, pos or none", cli.ErrUsage, name)
			}
			keep = append(keep, c.Tasks[i])
		}
		c.Tasks = keep
	}
	for i := range c.Tasks {
		for _, p := range []*string{&c.Tasks[i].Train, &c.Tasks[i].Test} {
			if rel, err := filepath.Rel(TaskDataDir, *p); err == nil {
				*p = filepath.Join(*taskData, rel)
			}
		}
	}
	if *budget != "" {
		c.Budget = *budget
		if *amount == 0 {
			return fmt.Errorf("%w: --budget %s needs --amount", cli.ErrUsage, *budget)
		}
	}
	set := func(dst *int, v int, keep int) {
		if v != keep {
			*dst = v
		}
	}
	if *amount != 0 {
		c.Amount = *amount
	}
	if *preset != "" {
		c.Preset = *preset
	}
	set(&c.MaxDocs, *maxDocs, -1)
	set(&c.HeldoutSeqs, *heldoutSeqs, -1)
	set(&c.SeqLen, *seq, 0)
	set(&c.Batch, *batch, 0)
	set(&c.Evals, *evals, 0)
	if *lr != 0 {
		c.LR = *lr
	}
	c.Seed, c.Teacher = *seed, *teacher
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	rec, err := Run(ctx, c, *out, stdout)
	if errors.Is(err, context.Canceled) && rec != nil {
		return fmt.Errorf("interrupted; %d of %d variants finished, the current one saved: run the same command to resume", len(rec.Results), len(c.Variants))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%s\nwrote %s, %s and the curves %s in %s\n", Table(rec), TableFile, RecordFile, strings.Join(Curves, ", "), filepath.Clean(*out))
	if *pageRecord != "" {
		if err := WritePageRecord(*pageRecord, rec); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote the page's record %s\n", *pageRecord)
	}
	return nil
}
