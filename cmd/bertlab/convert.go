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
	shard := fs.String("max-shard-size", "0", "weights larger than this (e.g. 16MiB, 5GB) are saved in shards of at most this size with model.safetensors.index.json, as transformers' max_shard_size; 0: one model.safetensors")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *model == "" || *out == "" {
		return usageErr("bertlab convert --model DIR --out DIR [--dtype F16] [--max-shard-size 0]")
	}
	dt := hf.DType(strings.ToUpper(*dtype))
	if dt != hf.F32 && dt != hf.F16 && dt != hf.BF16 {
		return usageErr("--dtype %q: want F32, F16 or BF16", *dtype)
	}
	maxShard, err := shardSize(*shard)
	if err != nil {
		return err
	}
	fo, err := loadModel(*model)
	if err != nil {
		return err
	}
	if err := hf.SaveFolder(*out, fo.Model, fo.Tokenizer, hf.SaveOptions{DType: dt, TokenizerFiles: fo.TokenizerFiles, MaxShardSize: maxShard}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%s parameters, %s) to %s\n", *model, human.Commas(fo.Model.NumParams()), dt, *out)
	return nil
}

// shardSize reads --max-shard-size: "0" for one weights file, else a size (human.ParseBytes).
func shardSize(s string) (int64, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	n, err := human.ParseBytes(s)
	if err != nil {
		return 0, usageErr("--max-shard-size: %v", err)
	}
	return n, nil
}
