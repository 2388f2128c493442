package bert

import (
	"fmt"

	"github.com/bertlab/bertlab/core/tensor"
)

// TrainOptions choose how a training forward pass runs.
type TrainOptions struct {
	// Dropout turns on training-mode dropout where HF's BertModel applies it, with the config's
	// probabilities: hidden_dropout_prob on the embedding output and on the outputs of the
	// attention and feed-forward dense layers (before their residual sums),
	// attention_probs_dropout_prob on the attention probabilities. Off, the pass is eval mode:
	// deterministic and equal to Forward.
	Dropout bool
	// Seed selects the dropout masks: the same seed gives the same masks on any machine and any
	// number of goroutines. A training loop passes a new seed every step (e.g. its run seed
	// mixed with the step number).
	Seed uint64
	// HeadMask, if not nil, is HF's head_mask [L, A], as Options.HeadMask. BackwardInputs
	// gives the gradient with respect to it.
	HeadMask []float32
	// Embeddings, if not nil, is the embedding output [B, S, H] (HF's hidden_states[0]) the
	// encoder starts from instead of the embeddings of the batch's ids, which then serve only
	// their shape: integrated gradients interpolate here. The embedding parameters get no
	// gradient from such a pass.
	Embeddings *tensor.Tensor
}

func (o TrainOptions) dropout(c Config) dropoutConfig {
	if !o.Dropout {
		return dropoutConfig{}
	}
	return dropoutConfig{hidden: c.HiddenDropoutProb, attn: c.AttentionProbsDropoutProb, seed: o.Seed}
}

// Activations are what a training forward pass (ForwardTrain) keeps for Backward: the
// inputs of every layer and LayerNorm, the LayerNorm statistics, the attention probabilities
// and the dropout masks. Hidden and Pooled are the outputs a task head reads. Backward does
// not change an Activations, so it can be used for several backward passes.
type Activations struct {
	Hidden *tensor.Tensor // last_hidden_state: [B, S, H]
	Pooled *tensor.Tensor // pooler_output: [B, H]; nil without a pooler

	batch  Batch // the batch as given (not copied)
	pass   *pass
	emb    embActs
	layers []layerActs
	distil *attnDistil // the attention term of ForwardBackwardDistil, during its backward; else nil
}

// embActs are the embeddings' activations.
type embActs struct {
	sum        *tensor.Tensor // word + type + position, the LayerNorm input: [B, S, E]
	mean, rstd []float32      // LayerNorm statistics: [B*S]
	keep       []uint8        // dropout mask [B*S*E]; nil without dropout
	// projIn is the input of the embedding projection (the LayerNorm's output after dropout):
	// [B, S, E]; nil without a projection.
	projIn *tensor.Tensor
}

// layerActs are one transformer block's activations: the trace's tensors (one struct of them
// for a trace and for training, so the two cannot drift) and what only Backward needs. [B, S, H]
// unless noted.
type layerActs struct {
	// LayerTrace holds Query, Key, Value, Context, AttentionOutput and Intermediate; Scores,
	// AttnProj and FFNOut are a trace's only (nil here: training sums in place).
	LayerTrace
	x            *tensor.Tensor // block input (the previous block's output)
	probs        *tensor.Tensor // attention probabilities before dropout: [B, A, S, S]
	keepP        []uint8        // attention dropout mask [B*A*S*S]; nil without dropout
	ctxRaw       *tensor.Tensor // Context before the head mask; nil without one
	keep1        []uint8        // dropout mask of the attention output dense; nil without dropout
	sum1         *tensor.Tensor // dropout(dense(ctx)) + x, the first LayerNorm's input
	mean1, rstd1 []float32      // its statistics [B*S]
	// pre is the intermediate dense output before the activation [B, S, I], or the
	// activation's derivative there where the pass has actDeriv.
	pre          *tensor.Tensor
	keep2        []uint8        // dropout mask of the output dense; nil without dropout
	sum2         *tensor.Tensor // dropout(dense(inter)) + attnOut, the second LayerNorm's input
	mean2, rstd2 []float32      // its statistics [B*S]
}

// mlmActs are the MLM head's activations on n rows. [n, H]
type mlmActs struct {
	in         *tensor.Tensor // the hidden states the head reads
	pre        *tensor.Tensor // transform dense output
	act        *tensor.Tensor // act(pre), the LayerNorm input
	mean, rstd []float32      // LayerNorm statistics [n]
	t          *tensor.Tensor // the transform output, the decoder input
}

// ForwardTrain runs the encoder and the pooler in training mode (dropout as opt says) and
// keeps the activations that Backward needs. The batch's slices must not change until the
// last Backward on the result.
func (m *Model) ForwardTrain(b Batch, opt TrainOptions) (*Activations, error) {
	return m.forwardTrain(b, opt, nil)
}

// forwardTrain is ForwardTrain with the activations in ar (reset first), so that they live
// until the next reset; nil allocates them.
func (m *Model) forwardTrain(b Batch, opt TrainOptions, ar *arena) (*Activations, error) {
	m.EnsureRaw()
	if err := b.Validate(m.Config); err != nil {
		return nil, err
	}
	if opt.Dropout {
		for _, p := range []float64{m.Config.HiddenDropoutProb, m.Config.AttentionProbsDropoutProb} {
			if !(p >= 0 && p < 1) {
				return nil, fmt.Errorf("forward-train: dropout probability %g outside [0, 1)", p)
			}
		}
	}
	if err := m.checkHeadMask(opt.HeadMask); err != nil {
		return nil, fmt.Errorf("forward-train: %w", err)
	}
	if e := opt.Embeddings; e != nil && !tensor.SameShape(e.Shape, []int{b.B, b.S, m.Config.HiddenSize}) {
		return nil, fmt.Errorf("forward-train: embeddings of shape %s, want [%d,%d,%d]", tensor.ShapeString(e.Shape), b.B, b.S, m.Config.HiddenSize)
	}
	p, err := m.newPass(b, opt.dropout(m.Config), nil)
	if err != nil {
		return nil, err
	}
	ar.reset()
	p.headMask, p.emb, p.ar = opt.HeadMask, opt.Embeddings, ar
	a := &Activations{batch: b, pass: p}
	a.Hidden = m.encode(b, p, nil, a)
	if m.Pooler != nil {
		a.Pooled = m.pool(a.Hidden, b.B, b.S)
	}
	return a, nil
}

// checkActivations reports whether a was computed by a model of m's shape.
func (m *Model) checkActivations(a *Activations) error {
	if a == nil || a.pass == nil {
		return fmt.Errorf("backward: no activations (use ForwardTrain)")
	}
	H := m.Config.HiddenSize
	if len(a.layers) != m.NumBlocks() || a.Hidden.Len() != a.pass.B*a.pass.S*H {
		return fmt.Errorf("backward: activations of a different model (%d layers, hidden %v; model has %d layers, hidden %d)",
			len(a.layers), a.Hidden.Shape, m.NumBlocks(), H)
	}
	return nil
}
