package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/bertlab/bertlab/core/tokenizer"
)

func init() {
	commands["fill-mask"] = command{"predict the [MASK] tokens of a text", runFillMask}
}

func runFillMask(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fill-mask", flag.ContinueOnError)
	model := fs.String("model", defaultModel(), "model folder (HF layout)")
	topK := fs.Int("top-k", 5, "predictions per mask")
	asJSON := fs.Bool("json", false, "print one JSON document")
	pair := fs.String("pair", "", "optional second segment (sentence B)")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErr("give the text, e.g. bertlab fill-mask --model DIR \"The capital of France is [MASK].\"")
	}
	text := strings.Join(pos, " ")
	f, err := loadModel(*model)
	if err != nil {
		return err
	}
	if f.Encoder == nil {
		return fmt.Errorf("model folder %s has no tokenizer files", *model)
	}
	var p *string
	if *pair != "" {
		p = pair
	}
	res, err := pipeline.FillMask(f.Model, f.Encoder, text, p, *topK)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	for i, m := range res.Masks {
		fmt.Fprintf(stdout, "mask %d (token %d):\n", i+1, m.Position)
		for _, p := range m.Predictions {
			bar := strings.Repeat("█", int(p.Score*30+0.5))
			w := p.Token // WordPiece's own entries; "Ġcat", "▁cat" as readers write them
			if f.Encoder.Kind() != tokenizer.KindWordPiece {
				w = p.Word
			}
			fmt.Fprintf(stdout, "  %-16s %6.2f%%  %s\n", w, 100*p.Score, bar)
		}
	}
	return nil
}
