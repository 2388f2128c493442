package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/internal/human"
)

func init() {
	commands["info"] = command{"show a model's config, parameter count, dtype and size", runInfo}
	commands["init"] = command{"create a randomly initialised model folder of any preset", runInit}
}

func runInfo(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	model := fs.String("model", defaultModel(), "model folder (HF layout)")
	preset := fs.String("preset", "", "describe a preset instead of a folder: "+strings.Join(bert.PresetNames(), ", "))
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q", oneLine(pos[0]))
	}
	if *preset != "" {
		c, err := bert.Preset(*preset)
		if err != nil {
			return usageErr("%v", err)
		}
		fmt.Fprintf(stdout, "preset      %s (BertForPreTraining, vocab %d, %d positions, %d types)\n", strings.ToLower(*preset), c.VocabSize, c.MaxPositionEmbeddings, c.TypeVocabSize)
		printConfig(stdout, c)
		n := c.ParamCount(bert.AllHeads)
		fmt.Fprintf(stdout, "parameters  %s (BertModel without pooler %s)\n", human.Commas(n), human.Commas(c.ParamCount(bert.Heads{})))
		fmt.Fprintf(stdout, "size         %s as F32, %s as F16\n", human.Bytes(4*n), human.Bytes(2*n))
		return nil
	}
	f, err := loadModel(*model)
	if err != nil {
		return err
	}
	m := f.Model
	fmt.Fprintf(stdout, "model       %s\n", f.Dir)
	printConfig(stdout, m.Config)
	heads := m.HeadNames()
	fmt.Fprintf(stdout, "heads       %s\n", orNone(strings.Join(heads, ", ")))
	fmt.Fprintf(stdout, "parameters  %s\n", human.Commas(m.NumParams()))
	// The weights' files (model.safetensors, or the index and its shards) and their bytes.
	wfiles, size, _ := hf.WeightsSize(f.Dir)
	fmt.Fprintf(stdout, "weights     %s, %s (%s)\n", strings.Join(wfiles, ", "), f.Report.DType, human.Bytes(size))
	if f.Tokenizer != nil {
		tc := f.Tokenizer.Config()
		fmt.Fprintf(stdout, "tokenizer   %d tokens, lowercase %v\n", f.Tokenizer.Vocab().Len(), tc.DoLowerCase)
	} else if f.Encoder != nil {
		fmt.Fprintf(stdout, "tokenizer   %s, %d tokens, mask %s\n", f.Encoder.Kind(), f.Encoder.VocabSize(), tokenizer.MaskToken(f.Encoder))
	} else {
		fmt.Fprintf(stdout, "tokenizer   none (no tokenizer files)\n")
	}
	for _, n := range f.Report.Notes {
		fmt.Fprintf(stdout, "note        %s\n", n)
	}
	if len(f.Report.Ignored) > 0 {
		fmt.Fprintf(stdout, "ignored     %d tensors the model does not use: %s\n", len(f.Report.Ignored), strings.Join(f.Report.Ignored, ", "))
	}
	return nil
}

func printConfig(w io.Writer, c bert.Config) {
	fmt.Fprintf(w, "config      %d layers, hidden %d, %d heads, intermediate %d, vocab %d, %d positions (%s), act %s, eps %g\n",
		c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize, c.VocabSize, c.MaxPositionEmbeddings, c.Positions(), c.HiddenAct, c.LayerNormEps)
	if c.Relative() {
		fmt.Fprintf(w, "note        %s positions load in transformers 4.x only (transformers 5 removed them from BERT)\n", c.PositionEmbeddingType)
	}
}

func runInit(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	preset := fs.String("preset", "tiny", "size: "+strings.Join(bert.PresetNames(), ", "))
	out := fs.String("out", "", "folder to create")
	vocab := fs.String("vocab", "", "folder with vocab.txt (and tokenizer_config.json) to use; sets vocab_size")
	seed := fs.Uint64("seed", 0, "random seed")
	dtype := fs.String("dtype", "F32", "storage dtype: F32, F16 or BF16")
	maxPos := fs.Int("max-positions", 0, "max_position_embeddings (0: the preset's 512)")
	posType := fs.String("position-embedding-type", bert.PositionAbsolute, "position_embedding_type: "+strings.Join(bert.PositionTypes, ", "))
	layers := fs.Int("layers", 0, "num_hidden_layers (0: the preset's)")
	hidden := fs.Int("hidden", 0, "hidden_size (0: the preset's; the intermediate size follows at 4x unless given)")
	heads := fs.Int("heads", 0, "num_attention_heads (0: the preset's, or hidden/64 with --hidden)")
	inter := fs.Int("intermediate", 0, "intermediate_size (0: 4 x hidden)")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *out == "" {
		return usageErr("bertlab init --preset NAME --out DIR [--vocab DIR] [--seed N] [--dtype F16] [--position-embedding-type TYPE] [--layers N --hidden N --heads N --intermediate N]")
	}
	c, err := bert.Preset(*preset)
	if err != nil {
		return usageErr("%v", err)
	}
	if !slices.Contains(bert.PositionTypes, *posType) {
		return usageErr("--position-embedding-type %q: want one of %s", *posType, strings.Join(bert.PositionTypes, ", "))
	}
	c.PositionEmbeddingType = *posType
	if c, err = c.Reshape(bert.Shape{Layers: *layers, Hidden: *hidden, Heads: *heads, Intermediate: *inter}); err != nil {
		return usageErr("%v", err)
	}
	if *maxPos > 0 {
		c.MaxPositionEmbeddings = *maxPos
	}
	var tok *tokenizer.Tokenizer
	if *vocab != "" {
		if tok, err = tokenizer.LoadDir(*vocab); err != nil {
			return err
		}
		c.VocabSize = tok.Vocab().Len()
		c.PadTokenID = tok.PadID()
	}
	dt := hf.DType(strings.ToUpper(*dtype))
	if dt != hf.F32 && dt != hf.F16 && dt != hf.BF16 {
		return usageErr("--dtype %q: want F32, F16 or BF16", *dtype)
	}
	m, err := bert.NewRandom(c, bert.AllHeads, *seed)
	if err != nil {
		return err
	}
	if err := hf.SaveFolder(*out, m, tok, hf.SaveOptions{DType: dt}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote a random %s model (%d layers, hidden %d, %d heads, intermediate %d; %s parameters, %s) to %s\n", strings.ToLower(*preset), c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize, human.Commas(m.NumParams()), dt, *out)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
