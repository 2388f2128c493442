package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/pipeline"
)

func init() {
	evalTasks["cloze"] = evalTask{summary: "cloze sentences (sentence with one [MASK]<TAB>accepted|words): share with an accepted word in the top 1 and top 5", run: evalCloze}
}

// clozeReport is `bertlab eval --task cloze --json`.
type clozeReport struct {
	Top1      float64                `json:"top1"`
	Top5      float64                `json:"top5"`
	Sentences int                    `json:"sentences"`
	Results   []pipeline.ClozeResult `json:"results,omitempty"`
}

// evalCloze scores cloze sentences: for each, whether a word a reader accepts is the model's
// first guess, or among its first five.
func evalCloze(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs, f := newEvalFlags("cloze")
	verbose := fs.Bool("v", false, "list every sentence with its top 5 (with --json: include them)")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 || f.Data == "" {
		return usageErr("bertlab eval --task cloze --model DIR --data FILE.tsv [-v] [--json]")
	}
	file, err := os.Open(f.Data)
	if err != nil {
		return err
	}
	items, err := dataset.ParseCloze(file)
	file.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Data, err)
	}
	fo, err := loadModel(f.Model)
	if err != nil {
		return err
	}
	if fo.Tokenizer == nil {
		return fmt.Errorf("model folder %s has no vocab.txt", f.Model)
	}
	rs, err := pipeline.Cloze(fo.Model, fo.Tokenizer, items, 5)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Data, err)
	}
	rep := clozeReport{Results: rs}
	rep.Top1, rep.Sentences = pipeline.ClozeShare(rs, 1)
	rep.Top5, _ = pipeline.ClozeShare(rs, 5)
	if rep.Sentences == 0 {
		return fmt.Errorf("%s: no sentence has accepted words", f.Data)
	}
	if f.JSON {
		if !*verbose {
			rep.Results = nil
		}
		return json.NewEncoder(stdout).Encode(rep)
	}
	if *verbose {
		for _, r := range rs {
			mark := " "
			if r.Hit(5) {
				mark = "+"
			}
			words := make([]string, len(r.Predictions))
			for i, p := range r.Predictions {
				words[i] = p.Token
			}
			fmt.Fprintf(stdout, "%s %-60s %s\n", mark, r.Text, strings.Join(words, " "))
		}
	}
	fmt.Fprintf(stdout, "cloze on %s (%d sentences): accepted word first %.1f%%, in the top 5 %.1f%%\n", f.Data, rep.Sentences, 100*rep.Top1, 100*rep.Top5)
	return nil
}
