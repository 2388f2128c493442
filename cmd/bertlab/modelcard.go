package main

import (
	"flag"
	"io"
	"strings"

	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/internal/modelcard"
)

func init() {
	commands["modelcard"] = command{"write a pre-training run's model folder (F16) with its model card: loss curve, held-out masked LM, cloze sentences", runModelCard}
}

const modelCardUsage = "bertlab modelcard [--stage DIR]... --run DIR --out DIR [--heldout FILE] [--heldout-also FILE]... [--train FILE]... [--name NAME] [--recipe FILE] [--note TEXT] [--cloze FILE] [--extra FILE.md] [--dtype F16] [--max-shard-size 16MiB]"

func runModelCard(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("modelcard", flag.ContinueOnError)
	var o modelcard.Options
	flags.StringVar(&o.Run, "run", "", "output folder of bertlab pretrain: the final model and trainer_state.json")
	flags.Var((*stringList)(&o.Stages), "stage", "output folder of an earlier bertlab pretrain run that --run continued (repeatable, in order): the card covers every stage")
	flags.StringVar(&o.Out, "out", "", "model folder to write: config.json, model.safetensors, vocab.txt, tokenizer_config.json, README.md, loss.png")
	flags.StringVar(&o.Heldout, "heldout", "", "held-out text for `bertlab eval --task mlm` (one sentence a line, blank line between documents)")
	flags.Var((*stringList)(&o.AlsoHeldout), "heldout-also", "more held-out text scored the same way, beside the trigram baseline (repeatable)")
	flags.Var((*stringList)(&o.Train), "train", "the training text as the run read it (repeat for several files, a file twice counts twice): the card's data figures and the trigram baseline (default "+modelcard.DefaultTrain+"; \"\": none)")
	flags.StringVar(&o.Name, "name", "", "the model's name (default: the base name of --out)")
	flags.StringVar(&o.Recipe, "recipe", "", "file with the commands that made the run, quoted under \"How to reproduce\"")
	flags.StringVar(&o.Note, "note", "", "one line for note.txt (the page shows it) and the top of the card, e.g. that this is a preview")
	clozeFile := flags.String("cloze", "", "cloze sentences, one a line with one [MASK], a tab and the acceptable words w1|w2 (optional) (default: tinydata's everyday sentences and simple facts)")
	dtype := flags.String("dtype", "F16", "storage dtype of model.safetensors: F32, F16 or BF16")
	shard := flags.String("max-shard-size", modelcard.DefaultShardSize, "weights larger than this are saved in shards of at most this size with their index, as transformers' max_shard_size (the repository keeps each file under 20 MiB); 0: one model.safetensors")
	flags.StringVar(&o.EarlierEvals, "earlier-evals", "", "tab-separated evaluations of the first stage from before its history begins (a run carried on across machines): header step<TAB>mlm_accuracy<TAB>..., fractions, empty cells for figures not recorded")
	flags.StringVar(&o.Extra, "extra", "", "Markdown file appended to the card before \"How to reproduce\" (e.g. fine-tuning results)")
	pos, err := parseFlags(flags, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 || o.Run == "" || o.Out == "" {
		return usageErr("%s", modelCardUsage)
	}
	o.DType = hf.DType(strings.ToUpper(*dtype))
	if o.DType != hf.F32 && o.DType != hf.F16 && o.DType != hf.BF16 {
		return usageErr("--dtype %q: want F32, F16 or BF16", *dtype)
	}
	if o.MaxShardSize, err = shardSize(*shard); err != nil {
		return err
	}
	if strings.ContainsAny(o.Note, "\r\n") {
		return usageErr("--note must be one line")
	}
	if *clozeFile != "" {
		items, err := modelcard.ReadCloze(*clozeFile)
		if err != nil {
			return err
		}
		o.Cloze = []modelcard.ClozeSet{{Name: "Sentences", Path: *clozeFile, Items: items}}
	}
	return modelcard.Write(o, stdout)
}
