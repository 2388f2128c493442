package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/internal/human"
	"github.com/bertlab/bertlab/internal/progress"
)

func init() {
	commands["finetune"] = command{"fine-tune a model on a task (--task classify, tag, qa) and save it in HF layout", runFinetune}
}

const finetuneUsage = "bertlab finetune --task classify|tag|qa --model DIR --train FILE [--dev FILE] --out DIR [--epochs 3] [--batch 32] [--lr 5e-5] [--seq 128] [--seed N] [--warmup 0.1] ..."

// fineTasks maps the command line's task names to the heads.
var fineTasks = map[string]bert.Task{
	"classify": bert.SequenceClassification,
	"tag":      bert.TokenClassification,
	"qa":       bert.QuestionAnswering,
}

// fineTaskFormats says what data each task reads.
var fineTaskFormats = map[string]string{
	"classify": "label<TAB>text or label<TAB>text_a<TAB>text_b lines",
	"tag":      "CoNLL: token<TAB>tag lines, a blank line after each sentence",
	"qa":       "SQuAD v1.1 JSON",
}

// qaFlags are the flags of run_qa.py's postprocessing and windows.
type qaFlags struct{ stride, query, answer, nbest *int }

func addQAFlags(fs *flag.FlagSet) qaFlags {
	return qaFlags{
		stride: fs.Int("doc-stride", -1, "qa: context tokens shared by neighbouring windows of a long context (-1: a third of --seq)"),
		query:  fs.Int("max-query-len", -1, "qa: longer questions are cut to this many tokens (-1: min(64, seq/4))"),
		answer: fs.Int("max-answer-len", 30, "qa: longest answer, in tokens"),
		nbest:  fs.Int("n-best", 20, "qa: start and end candidates per window"),
	}
}

// config is the QA configuration for windows of seq tokens; flags not defined keep their defaults.
func (q qaFlags) config(seq int) train.QAConfig {
	c := train.DefaultQA(seq)
	if q.stride == nil {
		return c
	}
	if *q.stride >= 0 {
		c.DocStride = *q.stride
	}
	if *q.query >= 0 {
		c.MaxQueryLength = *q.query
	}
	c.MaxAnswerLength, c.NBest = *q.answer, *q.nbest
	return c
}

func runFinetune(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("finetune", flag.ContinueOnError)
	taskName := fs.String("task", "", "classify (sequence classification), tag (token classification) or qa (extractive question answering)")
	model := fs.String("model", defaultModel(), "model folder (HF layout): pre-trained, or fine-tuned on the same task")
	trainPath := fs.String("train", "", "training data (classify: label<TAB>text TSV; tag: CoNLL; qa: SQuAD v1.1 JSON)")
	devPath := fs.String("dev", "", "dev data in the same format: evaluated after each epoch; the best epoch is kept")
	out := fs.String("out", "", "output folder for the fine-tuned model (HF layout)")
	epochs := fs.Int("epochs", 3, "passes over the training data")
	batch := fs.Int("batch", 32, "sequences per optimizer step")
	lr := fs.Float64("lr", 5e-5, "peak learning rate (AdamW)")
	seq := fs.Int("seq", 128, "max_seq_length: tokens per sequence with [CLS] and [SEP] (at most the model's positions)")
	seed := fs.Uint64("seed", 42, "random seed: new head, order, dropout")
	warmup := fs.Float64("warmup", 0.1, "warm-up ratio: share of the steps with a linear warm-up, then linear decay to 0")
	wd := fs.Float64("weight-decay", 0.01, "AdamW weight decay (not on biases and LayerNorm)")
	clip := fs.Float64("clip", 1, "global gradient-norm clipping (0: none)")
	noDropout := fs.Bool("no-dropout", false, "train without dropout")
	keepLast := fs.Bool("keep-last", false, "save the last epoch's model, not the best on --dev")
	grouped := fs.Bool("group-by-length", false, "batch sequences of about one length together (HF's group_by_length): less padding, faster steps")
	logEvery := fs.Int("log-every", 0, "when stderr is not a terminal, print a progress line every N steps (0: about 50 lines)")
	qf := addQAFlags(fs)
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	task, ok := fineTasks[*taskName]
	switch {
	case len(pos) > 0:
		return usageErr("unexpected argument %q; %s", oneLine(pos[0]), finetuneUsage)
	case !ok:
		return usageErr("--task %q: want classify, tag or qa; %s", *taskName, finetuneUsage)
	case *trainPath == "" || *out == "":
		return usageErr("%s", finetuneUsage)
	case *epochs < 1 || *batch < 1:
		return usageErr("--epochs %d, --batch %d: want positive counts", *epochs, *batch)
	case *seq < 3:
		return usageErr("--seq %d: too short", *seq)
	case *model == "":
		return usageErr("no model folder: pass --model DIR")
	}

	setup, err := train.PrepareFinetune(task, *model, *trainPath, *devPath, *seq, *seed, qf.config)
	if err != nil {
		return err
	}
	for _, n := range setup.Notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	f, m, td, dd, S := setup.Folder, setup.Folder.Model, setup.Train, setup.Dev, setup.SeqLen

	c := train.DefaultFinetune()
	c.Epochs, c.BatchSize, c.LR, c.WarmupRatio, c.WeightDecay, c.MaxGradNorm = *epochs, *batch, *lr, *warmup, *wd, *clip
	c.Seed, c.NoDropout, c.KeepBest, c.GroupByLength = *seed, *noDropout, !*keepLast, *grouped
	ft, err := train.NewFinetuner(m, td, dd, c)
	if err != nil {
		return err
	}
	mc := m.Bert.Config
	fmt.Fprintf(stdout, "fine-tuning %s (%d layers, hidden %d, %s parameters) on %d examples (%d sequences of at most %d tokens)",
		task, mc.NumHiddenLayers, mc.HiddenSize, human.Commas(m.NumParams()), td.Examples(), td.Len(), S)
	if m.Labels != nil {
		fmt.Fprintf(stdout, ", %d labels", len(m.Labels))
	}
	fmt.Fprintf(stdout, ": %d epochs of %d steps\n", c.Epochs, ft.StepsPerEpoch)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rec := &progress.Record{Bar: progress.New(stderr, 0, ft.TotalSteps, *logEvery), EvalLine: func(e train.Event) string {
		return fmt.Sprintf("epoch %.0f dev: %s", e.Epoch, train.Metrics(e.Metrics).String())
	}}
	start := time.Now()
	metrics, err := ft.Run(ctx, rec.Event)
	rec.Bar.Finish()
	first, last := rec.First, rec.Last
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("interrupted at step %d of %d: nothing saved", ft.Steps, ft.TotalSteps)
	case errors.Is(err, train.ErrNonFinite):
		return fmt.Errorf("%w: nothing saved (try a lower --lr)", err)
	case err != nil:
		return err
	}
	if err := hf.SaveTaskFolder(*out, m, f.Tokenizer, hf.SaveOptions{}); err != nil {
		return err
	}
	if first != nil {
		fmt.Fprintf(stdout, "trained %d steps in %s: loss %.4f -> %.4f, %.0f tokens/s\n", last.Step,
			time.Since(start).Round(100*time.Millisecond), first.Loss, last.Loss, last.TokensPerSec)
	}
	if metrics != nil {
		which := "last epoch"
		if c.KeepBest {
			which = fmt.Sprintf("best epoch, %d of %d, by %s", ft.BestEpoch, c.Epochs, dd.MainMetric())
		}
		fmt.Fprintf(stdout, "dev (%s): %s\n", which, metrics.String())
	}
	fmt.Fprintf(stdout, "model saved to %s (%s, HF layout)\n", *out, task)
	return nil
}
