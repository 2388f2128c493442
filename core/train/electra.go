package train

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// ELECTRA (Clark et al. 2020) trains two models at once: a small generator learns the masked LM,
// its samples replace the masked tokens, and the discriminator (Pretrainer.Model, with the RTD
// head) learns to tell every token of the corrupted input as original or replaced. The loss is
// the generator's masked LM plus λ times the discriminator's; the two share their embeddings
// (word, position, token type and the embedding LayerNorm), which get both gradients. Nothing
// flows from the discriminator into the generator through the sampling.

// ElectraLambda is ELECTRA's weight of the discriminator's loss.
const ElectraLambda = 50

// GeneratorFolder is the generator's folder inside a checkpoint and a run's output folder (an
// ElectraForMaskedLM); the discriminator is the folder itself (an ElectraForPreTraining).
const GeneratorFolder = "generator"

// streamGenerator draws the generator's samples (newRNG's purposes in batch.go count up from 1).
const streamGenerator uint64 = 0x656c6563

// Generator is ELECTRA's generator of a run (Pretrainer.SetGenerator).
type Generator struct {
	// Model is an ElectraForMaskedLM whose embeddings are the discriminator's tensors.
	Model *bert.Model
	// Weight is λ, the discriminator loss's weight.
	Weight float64
	grads  *bert.Grads
	// own lists the generator's parameters that are not the discriminator's (by index into
	// Model.Params), in the order the optimizer holds them after the discriminator's.
	own []int
	// shared maps the generator's shared parameters (by index) to the discriminator's.
	shared map[int]int
}

// GeneratorConfig is the generator of a discriminator of config disc: a quarter of its hidden
// size, heads and intermediate size (ELECTRA's best generator size), the same depth, the same
// embedding width (the embeddings are shared), so projected to its hidden size.
func GeneratorConfig(disc bert.Config) bert.Config {
	g := disc
	g.HiddenSize = max(1, disc.HiddenSize/4)
	g.NumAttentionHeads = max(1, disc.NumAttentionHeads/4)
	for g.HiddenSize%g.NumAttentionHeads != 0 {
		g.NumAttentionHeads--
	}
	g.IntermediateSize = max(1, disc.IntermediateSize/4)
	g.EmbeddingSize = disc.EmbDim()
	g.Extra = nil // its own: saving writes its architectures there
	if tc, ok := disc.Extra["tokenizer_class"]; ok {
		g.Extra = map[string]json.RawMessage{"tokenizer_class": tc}
	}
	return g
}

// NewGenerator makes a random generator (GeneratorConfig, initialised from seed) for disc,
// sharing its embeddings.
func NewGenerator(disc *bert.Model, seed uint64) (*bert.Model, error) {
	g, err := bert.NewRandom(GeneratorConfig(disc.Config), bert.Heads{MLM: true}, seed)
	if err != nil {
		return nil, err
	}
	return g, ShareEmbeddings(g, disc)
}

// ShareEmbeddings makes gen use disc's embedding tensors (word, position, token type, the
// embedding LayerNorm; the tied decoder follows the word embeddings), as ELECTRA shares them.
// Their shapes must agree.
func ShareEmbeddings(gen, disc *bert.Model) error {
	pairs := []struct {
		name     string
		dst, src **tensor.Tensor
	}{
		{"word embeddings", &gen.WordEmb, &disc.WordEmb}, {"position embeddings", &gen.PosEmb, &disc.PosEmb},
		{"token type embeddings", &gen.TypeEmb, &disc.TypeEmb},
		{"embedding LayerNorm weight", &gen.EmbLN.W, &disc.EmbLN.W}, {"embedding LayerNorm bias", &gen.EmbLN.B, &disc.EmbLN.B},
	}
	for _, p := range pairs {
		if (*p.dst == nil) != (*p.src == nil) || *p.dst != nil && !tensor.SameShape((*p.dst).Shape, (*p.src).Shape) {
			return fmt.Errorf("electra: the generator's %s do not match the discriminator's", p.name)
		}
	}
	tied := gen.MLM != nil && gen.MLM.Decoder == gen.WordEmb
	for _, p := range pairs {
		*p.dst = *p.src
	}
	if tied {
		gen.MLM.Decoder = gen.WordEmb
	}
	return nil
}

// SetGenerator makes the run ELECTRA's: gen (an MLM model sharing p.Model's embeddings, see
// ShareEmbeddings) is trained with p.Model, whose RTD head learns which tokens gen replaced,
// with the discriminator's loss weighted by weight. The optimizer starts over, holding both
// models' parameters (the generator's own under "generator." names); call it before LoadState.
// The data must have no sentence task.
func (p *Pretrainer) SetGenerator(gen *bert.Model, weight float64) error {
	switch {
	case p.Model.RTD == nil:
		return fmt.Errorf("electra: the discriminator has no replaced-token detection head (discriminator_predictions)")
	case gen.MLM == nil:
		return fmt.Errorf("electra: the generator has no masked-LM head")
	case p.Data.Config.Instances.Task != NoSentenceTask:
		return fmt.Errorf("electra: the data's %s task has no place in ELECTRA's loss: pre-train with no sentence task", p.Data.Config.Instances.Task)
	case p.Teacher != nil || len(p.Config.Neighbours.Heads) > 0:
		return fmt.Errorf("electra: a run with a generator takes no teacher and no neighbour prior")
	case !(weight > 0) || math.IsInf(weight, 0):
		return fmt.Errorf("electra: discriminator loss weight %g", weight)
	case gen.Config.VocabSize != p.Model.Config.VocabSize:
		return fmt.Errorf("electra: generator vocabulary %d, discriminator %d", gen.Config.VocabSize, p.Model.Config.VocabSize)
	}
	disc := map[*tensor.Tensor]int{}
	params := p.Model.Params()
	for i, prm := range params {
		disc[prm.T] = i
	}
	g := &Generator{Model: gen, Weight: weight, grads: gen.NewGrads(), shared: map[int]int{}}
	for i, prm := range gen.Params() {
		if j, ok := disc[prm.T]; ok {
			g.shared[i] = j
			continue
		}
		g.own = append(g.own, i)
		params = append(params, bert.Param{Name: "generator." + prm.Name, T: prm.T})
	}
	if len(g.shared) == 0 {
		return fmt.Errorf("electra: the generator shares no embedding with the discriminator (ShareEmbeddings)")
	}
	adam := DefaultAdamW(p.Config.LR)
	adam.WeightDecay = p.Config.WeightDecay
	p.Optimizer = NewAdamW(params, adam)
	p.Generator = g
	return nil
}

// stepGrads returns the gradients of the step in the optimizer's order: the discriminator's,
// with the generator's gradients of the shared embeddings added in, then the generator's own.
// It is called once a step, after the backward passes.
func (p *Pretrainer) stepGrads() []bert.Param {
	gs := p.grads.Params()
	g := p.Generator
	if g == nil {
		return gs
	}
	gens := g.grads.Params()
	for i, j := range g.shared {
		dst := gs[j].T.Data
		for k, v := range gens[i].T.Data {
			dst[k] += v
		}
	}
	for _, i := range g.own {
		gs = append(gs, gens[i])
	}
	return gs
}

// electraLosses are one micro-batch's terms.
type electraLosses struct {
	generator, discriminator float64 // the generator's masked LM, the discriminator's BCE
	correct, counted         int     // the discriminator's right calls of the attended tokens
	replaced                 int     // tokens the generator's samples changed
}

// electraStep is a micro-batch of ELECTRA: the generator's masked-LM step, its samples at the
// masked positions, and the discriminator's step on the corrupted batch.
func (p *Pretrainer) electraStep(b PretrainBatch, opt bert.TrainOptions) (electraLosses, error) {
	g := p.Generator
	if b.MLMLabels == nil {
		return electraLosses{}, fmt.Errorf("electra: a batch without masked positions")
	}
	corrupted, labels, replaced, err := g.corrupt(b, newRNG(opt.Seed, streamGenerator))
	if err != nil {
		return electraLosses{}, err
	}
	l, err := g.Model.ForwardBackward(b.Batch, b.MLMLabels, nil, opt, g.grads)
	if err != nil {
		return electraLosses{}, fmt.Errorf("generator: %w", err)
	}
	r, err := p.Model.ForwardBackwardRTD(corrupted, labels, g.Weight, opt, p.grads)
	if err != nil {
		return electraLosses{}, fmt.Errorf("discriminator: %w", err)
	}
	return electraLosses{generator: l.MLM, discriminator: r.Loss, correct: r.Correct, counted: r.Counted, replaced: replaced}, nil
}

// corrupt samples the generator's predictions (eval mode, from the softmax of its logits) at the
// batch's masked positions and returns the batch with them in place of the inputs, the
// replaced-token labels [B, S] (1 where the sample is not the original token) and how many were
// replaced.
func (g *Generator) corrupt(b PretrainBatch, rng *rand.Rand) (bert.Batch, []int, int, error) {
	var rows []int
	for i, y := range b.MLMLabels {
		if y != bert.IgnoreIndex {
			rows = append(rows, i)
		}
	}
	out, err := g.Model.Forward(b.Batch, bert.Options{MLM: true, MLMRows: rows})
	if err != nil {
		return bert.Batch{}, nil, 0, fmt.Errorf("generator: %w", err)
	}
	V := g.Model.Config.VocabSize
	c := b.Batch
	c.InputIDs = append([]int(nil), b.InputIDs...)
	labels := make([]int, len(c.InputIDs))
	replaced := 0
	probs := make([]float64, V)
	for k, r := range rows {
		id := sample(out.MLMLogits.Data[k*V:(k+1)*V], probs, rng)
		c.InputIDs[r] = id
		if id != b.MLMLabels[r] {
			labels[r] = 1
			replaced++
		}
	}
	return c, labels, replaced, nil
}

// sample draws an index from softmax(logits), in float64 (probs is scratch of the same length).
func sample(logits []float32, probs []float64, rng *rand.Rand) int {
	mx := math.Inf(-1)
	for _, z := range logits {
		mx = max(mx, float64(z))
	}
	sum := 0.0
	for i, z := range logits {
		probs[i] = math.Exp(float64(z) - mx)
		sum += probs[i]
	}
	u := rng.Float64() * sum
	for i, q := range probs {
		if u < q {
			return i
		}
		u -= q
	}
	return len(logits) - 1
}

// ElectraConfig is the discriminator of an ELECTRA of the preset's size for tok's vocabulary:
// the preset's encoder with the RTD head, embeddings of the hidden size (as ELECTRA-Base and
// Large), tokenizer_class BertTokenizer (the WordPiece vocabulary).
func ElectraConfig(preset string, tok *tokenizer.Tokenizer) (bert.Config, error) {
	c, err := bert.Preset(preset)
	if err != nil {
		return bert.Config{}, err
	}
	c.VocabSize, c.PadTokenID = tok.Vocab().Len(), tok.PadID()
	c.Family, c.EmbeddingSize = bert.FamilyELECTRA, c.HiddenSize
	if err := c.SetExtra("tokenizer_class", "BertTokenizer"); err != nil {
		return bert.Config{}, err
	}
	return c, c.Validate()
}

// NewElectra makes a random discriminator (ElectraConfig, RTD head) and its generator
// (NewGenerator) from seed.
func NewElectra(preset string, tok *tokenizer.Tokenizer, seed uint64) (disc, gen *bert.Model, err error) {
	c, err := ElectraConfig(preset, tok)
	if err != nil {
		return nil, nil, err
	}
	if disc, err = bert.NewRandom(c, bert.Heads{RTD: true}, seed); err != nil {
		return nil, nil, err
	}
	gen, err = NewGenerator(disc, seed^0x67656e)
	return disc, gen, err
}

// ResumeElectra continues an ELECTRA run from the checkpoint folder dir: the discriminator from
// dir, the generator from dir/generator (its embeddings shared again), then the optimizer and
// training state.
func ResumeElectra(dir string, data *PretrainData, c PretrainConfig, weight float64) (*Pretrainer, error) {
	f, err := hf.LoadFolder(dir)
	if err != nil {
		return nil, err
	}
	gf, err := hf.LoadFolder(filepath.Join(dir, GeneratorFolder))
	if err != nil {
		return nil, err
	}
	if err := ShareEmbeddings(gf.Model, f.Model); err != nil {
		return nil, err
	}
	p, err := NewPretrainer(f.Model, f.Tokenizer, data, c)
	if err != nil {
		return nil, err
	}
	if err := p.SetGenerator(gf.Model, weight); err != nil {
		return nil, err
	}
	if err := p.LoadState(dir); err != nil {
		return nil, err
	}
	return p, nil
}

// saveGenerator writes the generator, if the run has one, to dir/generator.
func (p *Pretrainer) saveGenerator(dir string) error {
	if p.Generator == nil {
		return nil
	}
	return hf.SaveFolder(filepath.Join(dir, GeneratorFolder), p.Generator.Model, p.Tokenizer, hf.SaveOptions{})
}

// Evaluate measures an ELECTRA run on masked instances (eval mode): the generator's masked LM
// (EvaluateMLM's figures named generator_…) and the discriminator disc on the instances
// corrupted by the generator's samples (drawn from a fixed seed, so that every evaluation sees
// the same draws for the same generator): rtd_accuracy over the attended tokens,
// rtd_replaced_accuracy over the replaced ones, replaced, their share, and the mean probability
// of "replaced" the discriminator gives the replaced tokens (rtd_replaced_prob) and the
// original ones (rtd_original_prob): their gap shows it telling them apart before its calls
// at 0.5 do.
func (g *Generator) Evaluate(disc *bert.Model, insts []Instance, padID, batchSize int) (map[string]float64, error) {
	gm, err := EvaluateMLM(g.Model, insts, padID, batchSize)
	if err != nil {
		return nil, fmt.Errorf("generator: %w", err)
	}
	out := map[string]float64{}
	for k, v := range gm.Map() {
		out["generator_"+k] = v
	}
	batchSize = max(1, batchSize)
	var correct, counted, replaced, caught int
	var probRep, probOrig float64
	for lo := 0; lo < len(insts); lo += batchSize {
		b, err := NewPretrainBatch(insts[lo:min(lo+batchSize, len(insts))], padID, 0)
		if err != nil {
			return nil, err
		}
		if b.MLMLabels == nil {
			continue
		}
		c, labels, _, err := g.corrupt(b, newRNG(0, streamGenerator, uint64(lo)))
		if err != nil {
			return nil, err
		}
		o, err := disc.Forward(c, bert.Options{RTD: true})
		if err != nil {
			return nil, fmt.Errorf("discriminator: %w", err)
		}
		for i, z := range o.RTDLogits.Data {
			if c.AttentionMask[i] == 0 {
				continue
			}
			counted++
			q := 1 / (1 + math.Exp(-float64(z)))
			if labels[i] == 1 {
				probRep += q
			} else {
				probOrig += q
			}
			right := (z > 0) == (labels[i] == 1)
			if right {
				correct++
			}
			if labels[i] == 1 {
				replaced++
				if right {
					caught++
				}
			}
		}
	}
	if counted == 0 {
		return nil, fmt.Errorf("evaluate: no token in %d examples", len(insts))
	}
	out["rtd_accuracy"] = float64(correct) / float64(counted)
	out["replaced"] = float64(replaced) / float64(counted)
	if replaced > 0 {
		out["rtd_replaced_accuracy"] = float64(caught) / float64(replaced)
		out["rtd_replaced_prob"] = probRep / float64(replaced)
	}
	if replaced < counted {
		out["rtd_original_prob"] = probOrig / float64(counted-replaced)
	}
	return out, nil
}
