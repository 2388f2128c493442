package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bertlab/bertlab/core/explain"
)

func init() {
	commands["explain"] = command{"why did BERT say that: attributions, logit lens, head ablation and importance", runExplain}
}

func runExplain(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	model := fs.String("model", defaultModel(), "model folder (HF layout): pre-training, masked LM or a fine-tuned classifier")
	text := fs.String("text", "", "the text (or give it as arguments)")
	pair := fs.String("pair", "", "optional second segment (sentence B)")
	target := fs.String("target", "", "the output explained: WORD (its logit at the first [MASK]), isnext, class:N or tag:TOKEN:N; default the model's own answer")
	method := fs.String("method", explain.MethodGXI, "attribution method: gxi (gradient x input) or ig (integrated gradients)")
	steps := fs.Int("steps", explain.DefaultSteps, fmt.Sprintf("integrated gradients' steps (1..%d)", explain.MaxSteps))
	baseline := fs.String("baseline", "mask", "integrated gradients' baseline token: mask or pad ([CLS] and [SEP] kept)")
	lens := fs.Bool("lens", false, "the logit lens at every [MASK]: top predictions layer by layer")
	ablate := fs.String("ablate", "", "heads to switch off, LAYER.HEAD,... (from 0), e.g. 0.1,1.3: predictions at the masks with and without them")
	importance := fs.Bool("importance", false, "head importance (Michel et al. 2019) for the masked-LM loss of the text")
	topK := fs.Int("top-k", explain.DefaultTopK, "predictions listed per layer and mask")
	asJSON := fs.Bool("json", false, "print one JSON document")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if *text == "" {
		*text = strings.Join(pos, " ")
	} else if len(pos) > 0 {
		return usageErr("give the text once: --text or arguments, not both")
	}
	if strings.TrimSpace(*text) == "" {
		return usageErr(`give the text, e.g. bertlab explain --model DIR --text "The capital of France is [MASK]." --target paris`)
	}
	heads, err := explain.ParseHeads(*ablate)
	if err != nil {
		return usageErr("--ablate: %v", err)
	}
	if *model == "" {
		return usageErr("no model folder: pass --model DIR (a folder with config.json, model.safetensors, vocab.txt)")
	}
	e, err := explain.LoadFolder(*model)
	if err != nil {
		return err
	}
	req := explain.Request{Text: *text, Pair: *pair, Target: *target, Method: *method, Steps: *steps,
		Baseline: *baseline, TopK: *topK, Ablate: heads}
	rep, err := e.Explain(req, explain.Parts{Lens: *lens, Importance: *importance})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	return rep.WriteText(stdout)
}
