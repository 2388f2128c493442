// The eval command: `bertlab eval --task NAME [flags]` measures a model on a data set.
//
// Tasks are looked up in evalTasks by the value of --task. This file registers "mlm"; the
// fine-tuning tasks ("classify", "tag", "qa") register themselves from eval_tasks.go, in an
// init function of that file, e.g.
//
//	func init() {
//		evalTasks["classify"] = evalTask{summary: "sequence classification (label<TAB>text TSV): accuracy, macro F1", run: evalClassify}
//	}
//
// A task's run function gets the arguments without --task and parses them itself with its own
// flag.FlagSet (newEvalFlags gives one with the flags every task shares: --model, --data,
// --json). With --json it prints exactly one JSON object on stdout, e.g.
// {"accuracy":...,"macro_f1":...,"n":...}; without, a readable summary.

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/train"
)

func init() {
	commands["eval"] = command{"evaluate a model on a data set (--task mlm, classify, tag, qa)", runEval}
	evalTasks["mlm"] = evalTask{summary: "masked LM on plain text (one sentence a line, blank line between documents): top-1, top-5, perplexity", run: evalMLM}
}

// evalTask is one --task of bertlab eval.
type evalTask struct {
	summary string
	// run evaluates with args, the command line without --task.
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// evalTasks maps a --task name to its evaluation.
var evalTasks = map[string]evalTask{}

func runEval(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	task, rest, err := cutTaskFlag(args)
	if err != nil {
		return err
	}
	if task == "" {
		if len(rest) == 1 && (rest[0] == "-h" || rest[0] == "--help" || rest[0] == "-help") {
			evalUsage(stdout)
			return flag.ErrHelp
		}
		evalUsage(stderr)
		return usageErr("give --task (%s)", strings.Join(evalTaskNames(), ", "))
	}
	t, ok := evalTasks[task]
	if !ok {
		return usageErr("unknown --task %q (known: %s)", task, strings.Join(evalTaskNames(), ", "))
	}
	return t.run(rest, stdin, stdout, stderr)
}

// cutTaskFlag removes --task NAME (or -task, or --task=NAME) from args.
func cutTaskFlag(args []string) (string, []string, error) {
	var task string
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "task" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return "", nil, usageErr("--task needs a value (%s)", strings.Join(evalTaskNames(), ", "))
			}
			i++
			value = args[i]
		}
		task = value
	}
	return task, rest, nil
}

func evalTaskNames() []string { return slices.Sorted(maps.Keys(evalTasks)) }

func evalUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: bertlab eval --task NAME --model DIR --data FILE [--json] [flags]\n\ntasks:")
	for _, n := range evalTaskNames() {
		fmt.Fprintf(w, "  %-9s %s\n", n, evalTasks[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"bertlab eval --task NAME -h\" for a task's flags.")
}

// evalFlags are the flags every eval task has.
type evalFlags struct {
	Model, Data string
	JSON        bool
}

// newEvalFlags returns a flag set for task with --model, --data and --json defined.
func newEvalFlags(task string) (*flag.FlagSet, *evalFlags) {
	fs := flag.NewFlagSet("eval --task "+task, flag.ContinueOnError)
	var f evalFlags
	fs.StringVar(&f.Model, "model", defaultModel(), "model folder (HF layout)")
	fs.StringVar(&f.Data, "data", "", "evaluation data")
	fs.BoolVar(&f.JSON, "json", false, "print one JSON object")
	return fs, &f
}

// evalMLM measures the masked LM on plain text: instances of one segment (no sentence task),
// masked statically by the 15% rule from --seed, as pre-training masks them.
func evalMLM(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs, f := newEvalFlags("mlm")
	def := train.DefaultMLMEval()
	seed := fs.Uint64("seed", def.Seed, "seed of the instances and masks")
	seq := fs.Int("seq", def.SeqLen, "max_seq_length (at most the model's positions)")
	batch := fs.Int("batch", def.Batch, "sequences per forward pass")
	maskProb := fs.Float64("mask-prob", def.MaskProb, "share of the tokens predicted")
	wholeWord := fs.Bool("whole-word", false, "mask whole words")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 || f.Data == "" {
		return usageErr("bertlab eval --task mlm --model DIR --data FILE.txt [--seed N] [--seq 128] [--json]")
	}
	if *seq < 3 {
		return usageErr("--seq %d: too short", *seq)
	}
	fo, err := loadModel(f.Model)
	if err != nil {
		return err
	}
	if fo.Tokenizer == nil {
		return fmt.Errorf("model folder %s has no vocab.txt", f.Model)
	}
	if fo.Model.MLM == nil {
		return fmt.Errorf("model folder %s has no masked-LM head (cls.predictions)", f.Model)
	}
	S := min(*seq, fo.Model.Config.MaxPositionEmbeddings)
	c := train.MLMEvalConfig{SeqLen: *seq, Seed: *seed, Batch: *batch, MaskProb: *maskProb, WholeWord: *wholeWord}
	r, n, err := train.EvaluateMLMFile(fo.Model, fo.Tokenizer, f.Data, c)
	if err != nil {
		return err
	}
	if f.JSON {
		return json.NewEncoder(stdout).Encode(r)
	}
	fmt.Fprintf(stdout, "masked LM on %s (%d sequences of at most %d tokens, seed %d)\n", f.Data, n, S, *seed)
	fmt.Fprintf(stdout, "accuracy    %.4f\ntop-5       %.4f\nperplexity  %.3f (mean cross-entropy %.4f)\npredictions %d\n", r.Accuracy, r.Top5, r.Perplexity, r.Loss, r.N)
	return nil
}
