package familylab

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
)

// ProbeFolder is where an ELECTRA run's masked-LM probe is saved, inside its variant's folder.
const ProbeFolder = "mlm-probe"

// probeSteps is how long the masked-LM probe of an ELECTRA discriminator trains: a quarter of
// its run's steps, at least 10.
func probeSteps(steps int) int { return max(10, steps/4) }

// probeDiscriminator measures ELECTRA's discriminator on the held-out masked-LM set the other
// variants are measured on, by fine-tuning (as the paper compares discriminators): a masked-LM
// head (BERT's, random, its decoder tied to the discriminator's word embeddings) on a copy of
// the discriminator, the whole trained with the masked LM alone for probeSteps(steps) steps of
// the same data and settings, then evaluated. Its training FLOPs are not in the run's budget:
// it is part of the measurement. The probe is saved in dir/ProbeFolder.
func probeDiscriminator(ctx context.Context, c Config, disc *bert.Model, tok *tokenizer.Tokenizer, data *train.PretrainData, heldout []train.Instance, steps int, dir string) (Point, error) {
	mc := disc.Config
	mc.Extra = nil
	m, err := bert.NewRandom(mc, bert.Heads{MLM: true}, c.Seed^0x70726f6265)
	if err != nil {
		return Point{}, err
	}
	src := map[string]bert.Param{}
	for _, p := range disc.Params() {
		src[p.Name] = p
	}
	for _, p := range m.Params() {
		if q, ok := src[p.Name]; ok {
			copy(p.T.Data, q.T.Data)
		}
	}
	n := probeSteps(steps)
	pc := train.DefaultPretrain(n)
	pc.BatchSize, pc.LR, pc.Warmup, pc.Seed = c.Batch, c.LR, int(c.WarmupFrac*float64(n)), c.Seed
	p, err := train.NewPretrainer(m, nil, data, pc)
	if err != nil {
		return Point{}, err
	}
	if err := p.Run(ctx, nil); err != nil {
		return Point{}, fmt.Errorf("masked-LM probe: %w", err)
	}
	r, err := train.EvaluateMLM(m, heldout, data.PadID, c.Batch)
	if err != nil {
		return Point{}, err
	}
	if err := hf.SaveFolder(filepath.Join(dir, ProbeFolder), m, tok, hf.SaveOptions{}); err != nil {
		return Point{}, err
	}
	return Point{Step: n, Accuracy: r.Accuracy, Top5: r.Top5, Perplexity: r.Perplexity}, nil
}
