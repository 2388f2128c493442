package engine

import (
	"context"
	"errors"
)

// The family lab (issue 28): chosen members of BERT's family pre-trained side by side from
// random weights on the same text with the same budget of tokens or FLOPs, one step of one
// variant at a time, so that their curves race. Package lab implements it (lab.NewFamilyRace)
// with core/train's recipes and the accounting of `bertlab family` (internal/familylab).

// FamilyLabs starts family-lab races; package lab's Labs implements it.
type FamilyLabs interface {
	FamilyStart(req FamilyRequest) (FamilyRace, error)
}

// FamilyRace is a family-lab race, driven one piece of work at a time.
type FamilyRace interface {
	// Info describes the race as it was prepared.
	Info() *FamilyInfo
	// Advance does the next piece of work of the variant furthest behind (one optimizer step,
	// or an evaluation) and returns its events.
	Advance(ctx context.Context) ([]FamilyEvent, error)
	// Done reports whether every variant has spent its budget (or Stop was called).
	Done() bool
	// Stop ends the race where it is.
	Stop()
}

// Budget kinds of a race (FamilyRequest.Budget), as `bertlab family --budget` names them.
const (
	BudgetTokens = "tokens" // every variant trains on the same number of non-padding tokens
	BudgetFLOPs  = "flops"  // every variant spends the same training FLOPs (train.StepFLOPs)
)

// FamilyRequest are the settings of a race.
type FamilyRequest struct {
	// Variants are the families' names (train.ParseRecipeFamily), two or more.
	Variants []string `json:"variants"`
	Budget   string   `json:"budget"` // BudgetTokens or BudgetFLOPs
	// Amount is each variant's budget: tokens, or FLOPs (0: Scale times the lab's default for
	// the kind; Scale 0 is 1).
	Amount float64 `json:"amount,omitempty"`
	Scale  float64 `json:"scale,omitempty"`
	Seed   uint64  `json:"seed"`
}

// FamilyInfo describes a prepared race: its settings and its variants.
type FamilyInfo struct {
	Preset    string  `json:"preset"`
	SeqLen    int     `json:"seq_len"`
	Batch     int     `json:"batch"`
	LR        float64 `json:"lr"`
	Warmup    float64 `json:"warmup"`
	MaskProb  float64 `json:"mask_prob"`
	Budget    string  `json:"budget"`
	Amount    float64 `json:"amount"`
	VocabSize int     `json:"vocab_size"` // the WordPiece vocabulary every variant shares
	// Documents and HeldoutDocs are the sample corpus's documents trained on and held out;
	// HeldoutSeqs and HeldoutN the held-out set's sequences and masked positions, the same for
	// every variant.
	Documents   int             `json:"documents"`
	HeldoutDocs int             `json:"heldout_documents"`
	HeldoutSeqs int             `json:"heldout_sequences"`
	HeldoutN    int             `json:"heldout_predictions"`
	Variants    []FamilyVariant `json:"variants"`
}

// FamilyVariant describes one variant of a race: its model, its recipe and its plan.
type FamilyVariant struct {
	Family       string `json:"family"`
	Architecture string `json:"architecture"` // the HF class the recipe trains
	// Params are the model's unique parameters (for ELECTRA the discriminator's), Bytes their
	// size as float32; GeneratorParams ELECTRA's generator's own.
	Params          int64  `json:"params"`
	GeneratorParams int64  `json:"generator_params,omitempty"`
	Bytes           int64  `json:"bytes"`
	Hidden          int    `json:"hidden_size"`
	EmbeddingDim    int    `json:"embedding_size"`
	Blocks          int    `json:"num_hidden_layers"`
	Layers          int    `json:"distinct_layers"` // layers with weights of their own
	SentenceTask    string `json:"sentence_task"`
	Masking         string `json:"masking"`
	// ForwardMs is the median time of one forward pass over a batch [Batch, SeqLen] in eval
	// mode, measured where the engine runs (the page's worker); ForwardTokensPerSec the same
	// as tokens a second.
	ForwardMs           float64 `json:"forward_ms"`
	ForwardTokensPerSec float64 `json:"forward_tokens_per_sec"`
	// Steps are the optimizer steps that spend the budget; Tokens and FLOPs their totals.
	Steps  int     `json:"steps"`
	Tokens int64   `json:"tokens"`
	FLOPs  float64 `json:"flops"`
	// EvalEvery is the steps between held-out evaluations (also one before the first step and
	// one after the last).
	EvalEvery int `json:"eval_every"`
}

// FamilyEvent is a step or an evaluation of one variant (Variant indexes FamilyInfo.Variants),
// with the run's counts after it: Tokens and FLOPs as the budget counts them.
type FamilyEvent struct {
	Variant int     `json:"variant"`
	Kind    string  `json:"kind"` // "step" or "eval"
	Step    int     `json:"step"`
	Tokens  int64   `json:"tokens"`
	FLOPs   float64 `json:"flops"`
	Seconds float64 `json:"seconds"` // the time this piece of work took
	// Loss is a step's masked-LM loss (ELECTRA: its generator's; the sentence task's apart, so
	// that the figures compare across recipes), SentenceLoss NSP's or SOP's, RTDLoss ELECTRA's
	// discriminator's.
	Loss         float64 `json:"loss,omitempty"`
	SentenceLoss float64 `json:"sentence_loss,omitempty"`
	RTDLoss      float64 `json:"rtd_loss,omitempty"`
	// An evaluation's held-out masked-LM figures (ELECTRA: its generator's), and ELECTRA's
	// discriminator accuracy on the held-out tokens its generator corrupted.
	Accuracy    float64 `json:"mlm_accuracy,omitempty"`
	Perplexity  float64 `json:"perplexity,omitempty"`
	RTDAccuracy float64 `json:"rtd_accuracy,omitempty"`
}

// FamilyEvents is the answer to a race step.
type FamilyEvents struct {
	Events []FamilyEvent `json:"events"`
	Done   bool          `json:"done"`
}

// ErrNoRace is the error of the family lab's questions before FamilyStart.
var ErrNoRace = errors.New("no family race: start one first")

// FamilyStart prepares a family-lab race, replacing the previous one. It needs no loaded
// model: every variant starts from random weights with a vocabulary of the sample corpus.
func (e *Engine) FamilyStart(req FamilyRequest) (*FamilyInfo, error) {
	fl, ok := e.Labs.(FamilyLabs)
	if !ok {
		return nil, ErrNoLabs
	}
	r, err := fl.FamilyStart(req)
	if err != nil {
		return nil, err
	}
	e.race = r
	return r.Info(), nil
}

// FamilyStep does the race's next piece of work.
func (e *Engine) FamilyStep(ctx context.Context) (*FamilyEvents, error) {
	if e.race == nil {
		return nil, ErrNoRace
	}
	evs, err := e.race.Advance(ctx)
	if err != nil {
		return nil, err
	}
	return &FamilyEvents{Events: evs, Done: e.race.Done()}, nil
}

// FamilyStop ends the race where it is.
func (e *Engine) FamilyStop() (*FamilyEvents, error) {
	if e.race == nil {
		return nil, ErrNoRace
	}
	e.race.Stop()
	return &FamilyEvents{Done: true}, nil
}
