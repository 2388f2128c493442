package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/human"
)

func init() {
	commands["convert"] = command{"write a model folder again in another storage dtype (F32, F16, BF16), HF layout", runConvert}
}

// runConvert loads a model folder (any dtype, old LayerNorm names, a checkpoint of a run) and
// writes it in HF's clean layout with the weights stored as --dtype.
func runConvert(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	model := fs.String("model", "", "model folder to read")
	out := fs.String("out", "", "folder to write")
	dtype := fs.String("dtype", "F16", "storage dtype: F32, F16 or BF16")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *model == "" || *out == "" {
		return usageErr("bertlab convert --model DIR --out DIR [--dtype F16]")
	}
	dt := hf.DType(strings.ToUpper(*dtype))
	if dt != hf.F32 && dt != hf.F16 && dt != hf.BF16 {
		return usageErr("--dtype %q: want F32, F16 or BF16", *dtype)
	}
	fo, err := loadModel(*model)
	if err != nil {
		return err
	}
	if err := hf.SaveFolder(*out, fo.Model, fo.Tokenizer, hf.SaveOptions{DType: dt, TokenizerFiles: fo.TokenizerFiles}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%s parameters, %s) to %s\n", *model, human.Commas(fo.Model.NumParams()), dt, *out)
	return nil
}
