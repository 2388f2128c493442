package engine

import (
	"fmt"
	"strings"

	"github.com/bertlab/bertlab/core/explain"
)

// The explanation questions ("why did BERT say that?", package explain) of every transport:
// attributions, the logit lens, head ablation and importance, and the neuron view. Each takes
// an explain.Request (text, pair, target, method, steps, baseline, top_k, heads off), bounds it
// and answers an explain.Report; bad requests are errors naming the field.

// MaxIGTokenSteps bounds steps × tokens of one integrated-gradients question (each step is a
// forward and a backward pass over the text): 256 steps on 128 tokens, 64 on 512.
const MaxIGTokenSteps = 256 * 128

// explainer is the Explainer of the loaded model (a pre-training model: its MLM and NSP heads).
func (e *Engine) explainer() (*explain.Explainer, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	return &explain.Explainer{Model: explain.PreTraining(e.model), Tok: e.tok}, nil
}

// checkExplain bounds the fields of r that every explanation question reads.
func (e *Engine) checkExplain(r explain.Request) error {
	if r.Steps < 0 || r.Steps > explain.MaxSteps {
		return fmt.Errorf("explain: steps %d outside [1, %d]", r.Steps, explain.MaxSteps)
	}
	if r.TopK < 0 || r.TopK > explain.MaxTopK {
		return fmt.Errorf("explain: top_k %d outside [1, %d]", r.TopK, explain.MaxTopK)
	}
	c := e.model.Config
	if n := c.NumHiddenLayers * c.NumAttentionHeads; len(r.Ablate) > n {
		return fmt.Errorf("explain: %d heads to ablate: the model has %d", len(r.Ablate), n)
	}
	if _, err := explain.HeadMask(c, r.Ablate); err != nil {
		return fmt.Errorf("explain: ablate: %w", err)
	}
	return nil
}

// Attributions answers how much each token of r's text moved r's target's logit: gradient x
// input, or integrated gradients (r.Method "ig", r.Steps steps from the r.Baseline baseline)
// with their completeness gap. Integrated gradients over more than MaxIGTokenSteps tokens ×
// steps are refused.
func (e *Engine) Attributions(r explain.Request) (*explain.Report, error) {
	x, err := e.explainer()
	if err != nil {
		return nil, err
	}
	if err := e.checkExplain(r); err != nil {
		return nil, err
	}
	if r.Method == explain.MethodIG {
		toks, err := e.Tokenize(r.Text, optPair(r.Pair))
		if err != nil {
			return nil, fmt.Errorf("explain: %w", err)
		}
		steps := r.Steps
		if steps == 0 {
			steps = explain.DefaultSteps
		}
		if n := len(toks.IDs); steps*n > MaxIGTokenSteps {
			return nil, fmt.Errorf("explain: integrated gradients over %d tokens x %d steps exceed %d: use fewer steps or a shorter text", n, steps, MaxIGTokenSteps)
		}
	}
	return x.Attribute(r)
}

// Lens answers the logit lens at every [MASK] of r's text: the MLM head on each layer's hidden
// state, r.TopK predictions per layer and, when r names a target word, its probability.
func (e *Engine) Lens(r explain.Request) (*explain.Report, error) {
	x, err := e.explainer()
	if err != nil {
		return nil, err
	}
	if err := e.checkExplain(r); err != nil {
		return nil, err
	}
	return x.Lens(r)
}

// Ablation answers the predictions at every [MASK] of r's text with every head and with the
// heads r.Ablate off (none: the two are the same).
func (e *Engine) Ablation(r explain.Request) (*explain.Report, error) {
	x, err := e.explainer()
	if err != nil {
		return nil, err
	}
	if err := e.checkExplain(r); err != nil {
		return nil, err
	}
	return x.Ablation(r)
}

// Importance answers every head's importance for the masked-LM loss of r's text (Michel et
// al. 2019), labelled with r's target word at the first [MASK] when it names one and the
// model's top predictions elsewhere.
func (e *Engine) Importance(r explain.Request) (*explain.Report, error) {
	x, err := e.explainer()
	if err != nil {
		return nil, err
	}
	if err := e.checkExplain(r); err != nil {
		return nil, err
	}
	return x.Importance(r)
}

// NeuronRequest names one attention row for the neuron view: head (Layer, Head) of the text
// (and its pair), for the query token at position Query ([CLS] is 0).
type NeuronRequest struct {
	Text  string `json:"text"`
	Pair  string `json:"pair,omitempty"`
	Layer int    `json:"layer"`
	Head  int    `json:"head"`
	Query int    `json:"query"`
}

// Neuron answers the neuron view of one attention row: q and k per dimension, q·k elementwise,
// the scaled scores and the softmax row (explain.NeuronView).
func (e *Engine) Neuron(r NeuronRequest) (*explain.Neuron, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Text) == "" {
		return nil, fmt.Errorf("neuron view: empty text")
	}
	toks, err := e.Tokenize(r.Text, optPair(r.Pair))
	if err != nil {
		return nil, fmt.Errorf("neuron view: %w", err)
	}
	return explain.NeuronView(e.model, explain.Input{IDs: toks.IDs, TypeIDs: toks.TypeIDs}, r.Layer, r.Head, r.Query)
}

func optPair(pair string) *string {
	if pair == "" {
		return nil
	}
	return &pair
}
