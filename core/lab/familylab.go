package lab

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/tokenizer"
	"github.com/bertlab/bertlab/core/train"
	"github.com/bertlab/bertlab/tinydata"
)

// The family lab's settings: `bertlab family --quick`'s (internal/familylab.Quick) at Tiny
// size, on the page's sample corpus with a vocabulary learned from it, so that a race of two
// variants takes about a minute in a browser.
const (
	FamilyPreset    = "tiny"
	FamilySeqLen    = 64
	FamilyBatch     = 8
	FamilyLR        = 2e-3
	FamilyWarmup    = 0.1  // share of each variant's steps of linear warm-up
	FamilyMaskProb  = 0.15 // share of the tokens predicted
	FamilyVocabSize = MLMDefaultVocab
	FamilyEvals     = 6 // held-out evaluations along each variant's run, besides the one before it
	// FamilyHeldoutEvery holds out every FamilyHeldoutEvery-th document of the sample corpus.
	FamilyHeldoutEvery = 10
	// FamilyDefaultTokens is the default token budget; FamilyMaxTokens the largest.
	FamilyDefaultTokens = 16384
	FamilyMaxTokens     = 1 << 20
	// familyForwardRuns are the forward passes timed for each variant's speed (median).
	familyForwardRuns = 3
)

// FamilyVariants are the families the lab races: the recipes of core/train (train.RecipeFamilies)
// that start from random weights. DistilBERT is not among them: its student starts from a
// teacher's layers.
func FamilyVariants() []bert.Family {
	var out []bert.Family
	for _, f := range train.RecipeFamilies {
		if !f.Is(bert.FamilyDistilBERT) {
			out = append(out, f)
		}
	}
	return out
}

// familyArch is the HF class each recipe trains (as hf.SaveFolder names it).
var familyArch = map[bert.Family]string{
	bert.FamilyBERT: "BertForPreTraining", bert.FamilyRoBERTa: "RobertaForMaskedLM",
	bert.FamilyALBERT: "AlbertForPreTraining", bert.FamilyELECTRA: "ElectraForPreTraining",
	bert.FamilyDeBERTaV2: "DebertaV2ForMaskedLM",
}

// FamilyStart is NewFamilyRace, for engine.FamilyLabs.
func (Labs) FamilyStart(req engine.FamilyRequest) (engine.FamilyRace, error) {
	return NewFamilyRace(req)
}

// FamilyRace is the family lab's race: one Pretrainer per variant, each with its recipe's data
// from the same documents, the same held-out set and the same budget, advanced one piece of
// work at a time, always that of the variant that has spent the least of its budget.
type FamilyRace struct {
	Runs     []*FamilyRun
	Tok      *tokenizer.Tokenizer
	info     engine.FamilyInfo
	finished bool
}

// FamilyRun is one variant of a race.
type FamilyRun struct {
	Family bert.Family
	Config bert.Config
	Data   *train.PretrainData
	Pre    *train.Pretrainer
	// Tokens and FLOPs are the plan's cumulative counts after each step (index 0: before the
	// first), as `bertlab family` plans them.
	Tokens []int64
	FLOPs  []float64
	// lastEval is the step of the latest evaluation (-1 before any).
	lastEval int
}

// Steps are the optimizer steps of the run's budget.
func (r *FamilyRun) Steps() int { return len(r.Tokens) - 1 }

// Done reports whether the run has taken all its steps and evaluated after the last.
func (r *FamilyRun) Done() bool {
	return r.Pre.State.Step >= r.Steps() && r.lastEval == r.Pre.State.Step
}

// NewFamilyRace prepares a race of req's variants: a WordPiece vocabulary of
// FamilyVocabSize learned from the sample corpus (tinydata web/pretrain.txt) without its
// held-out documents (every FamilyHeldoutEvery-th), and for each variant its recipe's data
// (train.ApplyRecipe), a random model of its recipe at FamilyPreset size (train.FamilyConfig,
// RecipeHeads) and core/train's Pretrainer with `bertlab family`'s settings; every variant is
// scored on the same held-out sequences, masked once.
func NewFamilyRace(req engine.FamilyRequest) (*FamilyRace, error) {
	if len(req.Variants) < 2 {
		return nil, fmt.Errorf("family lab: pick two or more variants, not %d", len(req.Variants))
	}
	var fams []bert.Family
	for _, v := range req.Variants {
		f, err := train.ParseRecipeFamily(v)
		if err != nil {
			return nil, fmt.Errorf("family lab: %w", err)
		}
		if !slices.Contains(FamilyVariants(), f) {
			return nil, fmt.Errorf("family lab: %s cannot race here (its recipe does not start from random weights)", f)
		}
		if slices.Contains(fams, f) {
			return nil, fmt.Errorf("family lab: %s picked twice", f)
		}
		fams = append(fams, f)
	}
	budget, amount, scale := req.Budget, req.Amount, req.Scale
	if scale == 0 {
		scale = 1
	}
	if !(scale > 0 && scale <= 64) {
		return nil, fmt.Errorf("family lab: budget scale %g: give more than 0, at most 64", scale)
	}
	switch budget {
	case "", engine.BudgetTokens:
		budget = engine.BudgetTokens
		if amount == 0 {
			amount = scale * FamilyDefaultTokens
		}
		if !(amount >= FamilyBatch && amount <= FamilyMaxTokens) {
			return nil, fmt.Errorf("family lab: a budget of %g tokens; give %d to %d", amount, FamilyBatch, FamilyMaxTokens)
		}
	case engine.BudgetFLOPs:
	default:
		return nil, fmt.Errorf("family lab: budget %q: want %s or %s", budget, engine.BudgetTokens, engine.BudgetFLOPs)
	}

	docs, err := tinydata.LoadDocuments(tinydata.WebPretrain)
	if err != nil {
		return nil, err
	}
	var trainText, heldText [][]string
	for i, d := range dataset.Sentences(docs) {
		if i%FamilyHeldoutEvery == FamilyHeldoutEvery-1 {
			heldText = append(heldText, d)
		} else {
			trainText = append(trainText, d)
		}
	}
	tr, err := tokenizer.NewTrainer(tokenizer.DefaultTrainer(FamilyVocabSize))
	if err != nil {
		return nil, err
	}
	for _, d := range trainText {
		for _, s := range d {
			tr.Add(s)
		}
	}
	tok, err := tr.Train()
	if err != nil {
		return nil, fmt.Errorf("family lab: training the vocabulary: %w", err)
	}
	if budget == engine.BudgetFLOPs && amount == 0 {
		amount = scale * FamilyDefaultFLOPs(tok.Vocab().Len())
	}
	if !(amount >= 1) || math.IsInf(amount, 0) {
		return nil, fmt.Errorf("family lab: a budget of %g %s", amount, budget)
	}
	heldout, err := familyHeldout(tok, train.TokenizeDocuments(tok, heldText), req.Seed)
	if err != nil {
		return nil, err
	}
	race := &FamilyRace{Tok: tok, info: engine.FamilyInfo{Preset: FamilyPreset, SeqLen: FamilySeqLen, Batch: FamilyBatch, LR: FamilyLR,
		Warmup: FamilyWarmup, MaskProb: FamilyMaskProb, Budget: budget, Amount: amount, VocabSize: tok.Vocab().Len(),
		Documents: len(trainText), HeldoutDocs: len(heldText), HeldoutSeqs: len(heldout)}}
	for _, in := range heldout {
		for _, y := range in.Labels {
			if y != bert.IgnoreIndex {
				race.info.HeldoutN++
			}
		}
	}
	tdocs := train.TokenizeDocuments(tok, trainText)
	for _, f := range fams {
		run, vi, err := newFamilyRun(f, tok, tdocs, heldout, budget, amount, req.Seed)
		if err != nil {
			return nil, fmt.Errorf("family lab: %s: %w", f, err)
		}
		race.Runs = append(race.Runs, run)
		race.info.Variants = append(race.info.Variants, *vi)
	}
	return race, nil
}

// FamilyDefaultFLOPs is the default FLOP budget: what Tiny BERT (with a vocabulary of V
// tokens) spends on FamilyDefaultTokens tokens of full sequences, counted as `bertlab family
// --full` counts its budget.
func FamilyDefaultFLOPs(V int) float64 {
	c, _ := bert.Preset(FamilyPreset)
	c.VocabSize = V
	steps := float64(FamilyDefaultTokens) / float64(FamilyBatch*FamilySeqLen)
	nPred := FamilyBatch * int(math.Ceil(FamilyMaskProb*FamilySeqLen))
	return steps * 3 * train.ForwardFLOPs(c, FamilyBatch, FamilySeqLen, nPred, true)
}

// FamilyDataConfig is the data of family fam's recipe as `bertlab family` makes it.
func FamilyDataConfig(fam bert.Family, seed uint64) (train.DataConfig, error) {
	dc := train.DefaultData(FamilySeqLen, seed)
	dc.Masking.Prob = FamilyMaskProb
	dc.Masking.MaxPredictions = max(1, int(math.Ceil(FamilyMaskProb*float64(FamilySeqLen))))
	return dc, train.ApplyRecipe(fam, &dc)
}

// familyHeldout are the held-out instances, as train.MLMEvalInstances makes them of a file:
// single segments, masked once from seed, with no cap on the predictions.
func familyHeldout(tok *tokenizer.Tokenizer, docs []train.TokenDocument, seed uint64) ([]train.Instance, error) {
	dc := train.DefaultData(FamilySeqLen, seed)
	dc.Instances = train.InstanceConfig{MaxSeqLength: FamilySeqLen, Task: train.NoSentenceTask}
	dc.Masking.Prob, dc.Masking.MaxPredictions = FamilyMaskProb, 0
	d, err := train.NewPretrainData(tok, docs, dc)
	if err != nil {
		return nil, fmt.Errorf("family lab: held-out set: %w", err)
	}
	return d.Fixed(), nil
}

// FamilyPlan walks data as training will see it, batch by batch, and returns the cumulative
// tokens and FLOPs (train.StepFLOPs of mc) after each step, index 0 before the first, up to
// the fewest steps whose total reaches amount: `bertlab family`'s plan.
func FamilyPlan(mc bert.Config, data *train.PretrainData, batch int, budget string, amount float64) ([]int64, []float64, error) {
	tokens, flops := []int64{0}, []float64{0}
	pos := train.Position{}
	const maxSteps = 1 << 20
	for len(tokens) <= maxSteps {
		var insts []train.Instance
		insts, pos = data.Next(pos, batch)
		b, err := train.NewPretrainBatch(insts, data.PadID, 0)
		if err != nil {
			return nil, nil, err
		}
		n := len(tokens)
		tokens = append(tokens, tokens[n-1]+int64(b.Tokens))
		flops = append(flops, flops[n-1]+train.StepFLOPs(mc, b))
		if budget == engine.BudgetTokens && float64(tokens[n]) >= amount || budget == engine.BudgetFLOPs && flops[n] >= amount {
			return tokens, flops, nil
		}
	}
	return nil, nil, fmt.Errorf("a budget of %g %s needs more than %d steps", amount, budget, maxSteps)
}

// newFamilyRun prepares one variant of a race.
func newFamilyRun(fam bert.Family, tok *tokenizer.Tokenizer, docs []train.TokenDocument, heldout []train.Instance,
	budget string, amount float64, seed uint64) (*FamilyRun, *engine.FamilyVariant, error) {
	dc, err := FamilyDataConfig(fam, seed)
	if err != nil {
		return nil, nil, err
	}
	data, err := train.NewPretrainData(tok, docs, dc)
	if err != nil {
		return nil, nil, err
	}
	mc, err := train.FamilyConfig(fam, FamilyPreset, tok)
	if err != nil {
		return nil, nil, err
	}
	tokens, flops, err := FamilyPlan(mc, data, FamilyBatch, budget, amount)
	if err != nil {
		return nil, nil, err
	}
	steps := len(tokens) - 1
	pc := train.DefaultPretrain(steps)
	pc.BatchSize, pc.LR, pc.Warmup, pc.Seed = FamilyBatch, FamilyLR, int(FamilyWarmup*float64(steps)), seed
	m, err := bert.NewRandom(mc, train.RecipeHeads(fam), seed)
	if err != nil {
		return nil, nil, err
	}
	p, err := train.NewRecipePretrainer(fam, m, tok, data, pc, seed)
	if err != nil {
		return nil, nil, err
	}
	p.Eval = heldout
	run := &FamilyRun{Family: fam, Config: mc, Data: data, Pre: p, Tokens: tokens, FLOPs: flops, lastEval: -1}
	vi := &engine.FamilyVariant{Family: string(fam), Architecture: familyArch[fam], Params: m.NumParams(), Hidden: mc.HiddenSize,
		EmbeddingDim: mc.EmbDim(), Blocks: m.NumBlocks(), Layers: len(m.Layers), SentenceTask: dc.Instances.Task.String(),
		Masking: dc.MaskingName(), Steps: steps, Tokens: tokens[steps], FLOPs: flops[steps], EvalEvery: max(1, steps/FamilyEvals)}
	if p.Generator != nil {
		vi.GeneratorParams = countParams(p.Optimizer.Params()) - m.NumParams()
	}
	vi.Bytes = 4 * (vi.Params + vi.GeneratorParams)
	if vi.ForwardMs, err = forwardMs(m, heldout, tok.PadID()); err != nil {
		return nil, nil, err
	}
	vi.ForwardTokensPerSec = float64(FamilyBatch*FamilySeqLen) / (vi.ForwardMs / 1000)
	return run, vi, nil
}

func countParams(ps []bert.Param) int64 {
	var n int64
	for _, q := range ps {
		n += int64(q.T.Len())
	}
	return n
}

// forwardMs times a forward pass of m in eval mode, with its pre-training heads, over a batch
// [FamilyBatch, FamilySeqLen] of held-out sequences padded to FamilySeqLen: the median of
// familyForwardRuns, in milliseconds.
func forwardMs(m *bert.Model, heldout []train.Instance, padID int) (float64, error) {
	insts := make([]train.Instance, FamilyBatch)
	for i := range insts {
		insts[i] = heldout[i%len(heldout)]
	}
	b, err := train.NewPretrainBatch(insts, padID, FamilySeqLen)
	if err != nil {
		return 0, err
	}
	opt := bert.Options{MLM: m.MLM != nil, NSP: m.NSP != nil, RTD: m.RTD != nil}
	// One pass untimed: the first grows the heap (in the browser, the wasm memory) for the rest.
	if _, err := m.Forward(b.Batch, opt); err != nil {
		return 0, fmt.Errorf("timing the forward pass: %w", err)
	}
	ms := make([]float64, familyForwardRuns)
	for i := range ms {
		t0 := time.Now()
		if _, err := m.Forward(b.Batch, opt); err != nil {
			return 0, fmt.Errorf("timing the forward pass: %w", err)
		}
		ms[i] = float64(time.Since(t0).Microseconds()) / 1000
	}
	sort.Float64s(ms)
	return max(ms[len(ms)/2], 0.001), nil
}

// Info describes the race as NewFamilyRace prepared it.
func (r *FamilyRace) Info() *engine.FamilyInfo { return &r.info }

// Done reports whether every variant has spent its budget, or Stop was called.
func (r *FamilyRace) Done() bool { return r.finished }

// Stop ends the race where it is.
func (r *FamilyRace) Stop() { r.finished = true }

// spent is the share of its budget run i has spent, as the budget counts.
func (r *FamilyRace) spent(i int) float64 {
	run := r.Runs[i]
	if r.info.Budget == engine.BudgetFLOPs {
		return run.FLOPs[run.Pre.State.Step] / r.info.Amount
	}
	return float64(run.Tokens[run.Pre.State.Step]) / r.info.Amount
}

// next is the run to advance: of those not done, the one that has spent the least of its
// budget (the first of equals), so that the variants move together.
func (r *FamilyRace) next() int {
	best := -1
	for i, run := range r.Runs {
		if !run.Done() && (best < 0 || r.spent(i) < r.spent(best)) {
			best = i
		}
	}
	return best
}

// Advance does the next piece of work of the variant furthest behind: an evaluation before
// its first step, every EvalEvery steps and after its last, else one optimizer step. After
// every variant's last evaluation the race ends.
func (r *FamilyRace) Advance(ctx context.Context) ([]engine.FamilyEvent, error) {
	if r.finished {
		return nil, nil
	}
	i := r.next()
	if i < 0 {
		r.finished = true
		return nil, nil
	}
	run, vi := r.Runs[i], &r.info.Variants[i]
	p := run.Pre
	step := p.State.Step
	t0 := time.Now()
	var ev train.Event
	var err error
	if run.lastEval < step && (step%vi.EvalEvery == 0 || step == run.Steps()) {
		ev, err = p.Evaluate()
		run.lastEval = step
	} else {
		ev, err = p.Step(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("%s at step %d: %w", run.Family, step, err)
	}
	if p.State.Tokens != run.Tokens[p.State.Step] {
		return nil, fmt.Errorf("%s: trained on %d tokens by step %d, the plan counted %d", run.Family, p.State.Tokens, p.State.Step, run.Tokens[p.State.Step])
	}
	fe := familyEvent(i, ev)
	fe.Tokens, fe.FLOPs, fe.Seconds = run.Tokens[ev.Step], run.FLOPs[ev.Step], time.Since(t0).Seconds()
	if r.next() < 0 {
		r.finished = true
	}
	return []engine.FamilyEvent{fe}, nil
}

// familyEvent is a step's or an evaluation's figures, as `bertlab family` records them
// (ELECTRA's masked-LM figures are its generator's).
func familyEvent(i int, e train.Event) engine.FamilyEvent {
	fe := engine.FamilyEvent{Variant: i, Kind: "step", Step: e.Step, Loss: e.MLMLoss, SentenceLoss: e.NSPLoss, RTDLoss: e.RTDLoss}
	if e.Kind == train.EventEval {
		fe.Kind = "eval"
		m, pre := e.Metrics, ""
		if _, ok := m["generator_mlm_accuracy"]; ok {
			pre = "generator_"
		}
		fe.Accuracy, fe.Perplexity, fe.RTDAccuracy = m[pre+"mlm_accuracy"], m[pre+"perplexity"], m["rtd_accuracy"]
	}
	return fe
}
