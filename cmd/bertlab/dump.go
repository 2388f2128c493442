package main

import (
	"flag"
	"io"

	"github.com/bertlab/bertlab/internal/dump"
)

func init() {
	commands["dump"] = command{"run the model on inputs.json and write every output tensor", runDump}
}

func runDump(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	model := fs.String("model", defaultModel(), "model folder (HF layout)")
	inputs := fs.String("inputs", "", `inputs.json: {"input_ids":[[...]],"token_type_ids":..,"attention_mask":..,"labels":..,"next_sentence_label":[..]}`)
	var o dump.Options
	fs.StringVar(&o.Out, "out", "", "output safetensors file")
	fs.StringVar(&o.Intermediates, "intermediates", "", "also write per-layer intermediates (layer.N.query, ..., mlm_transform) to this safetensors file")
	fs.StringVar(&o.Grads, "grads", "", "also write d loss / d parameter of every weight to this safetensors file (eval mode; needs labels and/or next_sentence_label)")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *inputs == "" || o.Out == "" {
		return usageErr("bertlab dump --model DIR --inputs inputs.json --out out.safetensors")
	}
	in, err := dump.ReadInputs(*inputs)
	if err != nil {
		return err
	}
	f, err := loadModel(*model)
	if err != nil {
		return err
	}
	return dump.Write(f.Model, in, *inputs, o, stdout)
}
