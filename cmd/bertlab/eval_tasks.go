package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/train"
)

func init() {
	evalTasks["classify"] = evalTask{summary: "sequence classification (label<TAB>text or label<TAB>a<TAB>b TSV): accuracy, macro F1", run: evalFineTask("classify")}
	evalTasks["tag"] = evalTask{summary: "token classification (CoNLL token<TAB>tag): token accuracy, entity F1", run: evalFineTask("tag")}
	evalTasks["qa"] = evalTask{summary: "extractive QA (SQuAD v1.1 JSON): exact match, F1", run: evalFineTask("qa")}
}

// evalFineTask evaluates a fine-tuned model of a task on a data file: with --json it prints
// {"accuracy","macro_f1","n"} (classify), {"entity_f1","n","token_accuracy"} (tag) or
// {"exact_match","f1","n"} (qa), scores as fractions.
func evalFineTask(name string) func(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	task := fineTasks[name]
	return func(args []string, _ io.Reader, stdout, stderr io.Writer) error {
		fs, f := newEvalFlags(name)
		seq := fs.Int("seq", 128, "max_seq_length (at most the model's positions)")
		batch := fs.Int("batch", 32, "sequences per forward pass")
		var qf qaFlags
		var predictions *string
		if task == bert.QuestionAnswering {
			qf = addQAFlags(fs)
			predictions = fs.String("predictions", "", "also write the answers, {id: text} as the SQuAD script reads them, to this file")
		}
		pos, err := parseFlags(fs, args, stderr)
		if err != nil {
			return err
		}
		if len(pos) > 0 || f.Data == "" {
			return usageErr("bertlab eval --task %s --model DIR --data FILE (%s) [--seq 128] [--json]", name, fineTaskFormats[name])
		}
		if *seq < 3 {
			return usageErr("--seq %d: too short", *seq)
		}
		if f.Model == "" {
			return usageErr("no model folder: pass --model DIR")
		}
		data, err := train.ReadTaskFile(task, f.Data)
		if err != nil {
			return err
		}
		fo, err := hf.LoadTaskFolder(f.Model, task, hf.TaskLoadOptions{RequireHead: true})
		if err != nil {
			return err
		}
		if fo.Tokenizer == nil {
			return fmt.Errorf("model folder %s has no vocab.txt", f.Model)
		}
		m := fo.Model
		S := min(*seq, m.Bert.Config.MaxPositionEmbeddings)
		d, notes, err := data.Dataset(fo.Tokenizer, m.Labels, S, qf.config(S))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Data, err)
		}
		ctx := context.Background()
		var metrics train.Metrics
		if qa, ok := d.(*train.QAData); ok && predictions != nil && *predictions != "" {
			preds, err := qa.Predict(ctx, m, *batch)
			if err != nil {
				return err
			}
			if err := train.WriteSQuADPredictions(*predictions, preds); err != nil {
				return err
			}
		}
		if metrics, err = d.Evaluate(ctx, m, *batch); err != nil {
			return err
		}
		if f.JSON {
			for _, n := range notes {
				fmt.Fprintf(stderr, "note: %s\n", n)
			}
			return json.NewEncoder(stdout).Encode(metrics)
		}
		fmt.Fprintf(stdout, "%s on %s (%d examples, sequences of at most %d tokens)\n", task, f.Data, d.Examples(), S)
		for _, n := range notes {
			fmt.Fprintf(stdout, "note: %s\n", n)
		}
		fmt.Fprintln(stdout, metrics.String())
		return nil
	}
}
