package explain

import (
	"fmt"
	"math"
	"slices"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// Attribution methods.
const (
	MethodGXI = "gxi"
	MethodIG  = "ig"
)

// MaxSteps bounds the integration steps of integrated gradients.
const MaxSteps = 256

// Baseline is the input integrated gradients start from: every token replaced by ID except
// those in Keep, which stay ([CLS] and [SEP]: the baseline keeps the sequence's frame).
type Baseline struct {
	Name string `json:"name"` // "mask" or "pad", for the report
	ID   int    `json:"id"`   // the token that replaces the others: [MASK] or [PAD]
	Keep []int  `json:"keep"` // token ids kept: [CLS], [SEP]
}

// ids returns the baseline's ids for in.
func (bl Baseline) ids(in Input) Input {
	ids := make([]int, len(in.IDs))
	for i, id := range in.IDs {
		ids[i] = bl.ID
		if slices.Contains(bl.Keep, id) {
			ids[i] = id
		}
	}
	return Input{IDs: ids, TypeIDs: in.TypeIDs}
}

// Attribution is how much each input token contributed to one output logit.
//
// The attributed input is the embedding output, HF's hidden_states[0]: LayerNorm(word +
// position + token type) of bert.embeddings, which is the layer output Captum's
// LayerIntegratedGradients (and LayerGradientXActivation) on model.bert.embeddings attribute
// to. A token's score is the sum over the hidden dimension of its attribution.
type Attribution struct {
	Method string    `json:"method"` // MethodGXI or MethodIG
	Target Target    `json:"target"`
	Scores []float64 `json:"scores"` // per token [S]
	Logit  float64   `json:"logit"`  // the target's logit at the input
	// Integrated gradients only.
	Steps    int       `json:"steps,omitempty"`
	Baseline *Baseline `json:"baseline,omitempty"`
	// BaselineLogit is the target's logit at the baseline's embedding output.
	BaselineLogit float64 `json:"baseline_logit,omitempty"`
	// Sum is the sum of Scores; completeness says it equals Logit - BaselineLogit, and Gap is
	// the difference Sum - (Logit - BaselineLogit), RelGap |Gap| / |Logit - BaselineLogit|.
	Sum    float64 `json:"sum"`
	Gap    float64 `json:"gap,omitempty"`
	RelGap float64 `json:"rel_gap,omitempty"`
	// Grad is d logit / d embedding output [S, H] (gradient x input only).
	Grad *tensor.Tensor `json:"-"`
}

// prepare checks the input and target and returns the gradient holder for a backward pass.
func (m Model) prepare(in Input, t Target) (*bert.Grads, error) {
	if m.Bert == nil {
		return nil, fmt.Errorf("explain: no model")
	}
	if err := in.check(m.Bert.Config); err != nil {
		return nil, err
	}
	if err := m.check(t, len(in.IDs)); err != nil {
		return nil, err
	}
	// Backward adds parameter gradients too; they are not used. One holder serves every pass.
	return m.Bert.NewGrads(), nil
}

// gradients runs the batch of B copies of in (from the embedding output emb [B, S, H] when not
// nil) and returns the target's logits [B] and d logit / d embedding output [B, S, H].
func (m Model) gradients(in Input, t Target, B int, emb *tensor.Tensor, g *bert.Grads) ([]float64, *tensor.Tensor, error) {
	S := len(in.IDs)
	a, err := m.Bert.ForwardTrain(in.batch(B), bert.TrainOptions{Embeddings: emb})
	if err != nil {
		return nil, nil, err
	}
	logits, dh, dp, err := m.seed(a, t, B, S, g)
	if err != nil {
		return nil, nil, err
	}
	ig, err := m.Bert.BackwardInputs(a, dh, dp, g)
	if err != nil {
		return nil, nil, err
	}
	return logits, ig.Embeddings, nil
}

// GradientXInputOf is gradient x input: per token, the sum over the hidden dimension of
// d logit / d embedding output times the embedding output.
func (m Model) GradientXInputOf(in Input, t Target) (*Attribution, error) {
	g, err := m.prepare(in, t)
	if err != nil {
		return nil, err
	}
	x, err := m.Bert.Embed(in.batch(1))
	if err != nil {
		return nil, err
	}
	logits, grad, err := m.gradients(in, t, 1, nil, g)
	if err != nil {
		return nil, err
	}
	S, H := len(in.IDs), m.Bert.Config.HiddenSize
	r := &Attribution{Method: MethodGXI, Target: t, Logit: logits[0], Scores: make([]float64, S),
		Grad: &tensor.Tensor{Shape: []int{S, H}, Data: grad.Data}}
	for s := range S {
		var sum float64
		for j := s * H; j < (s+1)*H; j++ {
			sum += float64(grad.Data[j]) * float64(x.Data[j])
		}
		r.Scores[s] = sum
		r.Sum += sum
	}
	return r, nil
}

// IntegratedGradientsOf is integrated gradients (Sundararajan et al. 2017) in the embedding
// output: with x the input's and x' the baseline's embedding output, token s gets
// Σ_h (x - x')[s,h] · ∫₀¹ d logit / d e [s,h] at e = x' + α(x - x') dα, the integral by
// Gauss-Legendre quadrature with steps nodes (Captum's default method, "gausslegendre").
func (m Model) IntegratedGradientsOf(in Input, t Target, steps int, bl Baseline) (*Attribution, error) {
	if steps < 1 || steps > MaxSteps {
		return nil, fmt.Errorf("explain: %d integration steps outside [1, %d]", steps, MaxSteps)
	}
	if bl.ID < 0 || bl.ID >= m.Bert.Config.VocabSize {
		return nil, fmt.Errorf("explain: baseline token %d outside the vocabulary", bl.ID)
	}
	g, err := m.prepare(in, t)
	if err != nil {
		return nil, err
	}
	S, H := len(in.IDs), m.Bert.Config.HiddenSize
	x, err := m.Bert.Embed(in.batch(1))
	if err != nil {
		return nil, err
	}
	xb, err := m.Bert.Embed(bl.ids(in).batch(1))
	if err != nil {
		return nil, err
	}
	// The endpoints first: F(x) and F(x') from the same kind of pass as the steps.
	ends := tensor.New(2, S, H)
	copy(ends.Data, x.Data)
	copy(ends.Data[S*H:], xb.Data)
	a, err := m.Bert.ForwardTrain(in.batch(2), bert.TrainOptions{Embeddings: ends})
	if err != nil {
		return nil, err
	}
	endLogits, _, _, err := m.seed(a, t, 2, S, g)
	if err != nil {
		return nil, err
	}
	alphas, weights := GaussLegendre(steps)
	// Several steps per pass, a batch of about 1024 tokens.
	chunk := max(1, min(steps, 1024/S))
	avg := make([]float64, S*H) // Σ_k w_k · grad at α_k
	for lo := 0; lo < steps; lo += chunk {
		k := min(chunk, steps-lo)
		emb := tensor.New(k, S, H)
		for i := range k {
			al := float32(alphas[lo+i])
			row := emb.Data[i*S*H : (i+1)*S*H]
			for j := range row {
				row[j] = xb.Data[j] + al*(x.Data[j]-xb.Data[j])
			}
		}
		_, grad, err := m.gradients(in, t, k, emb, g)
		if err != nil {
			return nil, err
		}
		for i := range k {
			w := weights[lo+i]
			for j, v := range grad.Data[i*S*H : (i+1)*S*H] {
				avg[j] += w * float64(v)
			}
		}
	}
	r := &Attribution{Method: MethodIG, Target: t, Logit: endLogits[0], BaselineLogit: endLogits[1],
		Steps: steps, Baseline: &bl, Scores: make([]float64, S)}
	for s := range S {
		var sum float64
		for j := s * H; j < (s+1)*H; j++ {
			sum += (float64(x.Data[j]) - float64(xb.Data[j])) * avg[j]
		}
		r.Scores[s] = sum
		r.Sum += sum
	}
	delta := r.Logit - r.BaselineLogit
	r.Gap = r.Sum - delta
	if delta != 0 {
		r.RelGap = math.Abs(r.Gap) / math.Abs(delta)
	}
	return r, nil
}

// GaussLegendre returns the n nodes in (0, 1), ascending, and weights of Gauss-Legendre
// quadrature on [0, 1], as numpy's leggauss(n) mapped by α = (1 + x)/2, w/2 (Captum's
// "gausslegendre" alphas and step sizes). The nodes are the roots of the Legendre polynomial
// P_n, found by Newton's method from Chebyshev-like guesses.
func GaussLegendre(n int) (alphas, weights []float64) {
	alphas, weights = make([]float64, n), make([]float64, n)
	for i := 0; i < (n+1)/2; i++ {
		z := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(n) + 0.5))
		var pp float64
		for range 100 {
			p1, p2 := 1.0, 0.0
			for j := 1; j <= n; j++ {
				p3 := p2
				p2 = p1
				p1 = ((2*float64(j)-1)*z*p2 - (float64(j)-1)*p3) / float64(j)
			}
			pp = float64(n) * (z*p1 - p2) / (z*z - 1)
			z1 := z
			z = z1 - p1/pp
			if math.Abs(z-z1) < 1e-15 {
				break
			}
		}
		w := 2 / ((1 - z*z) * pp * pp)
		// z is the i-th largest root: -z is the i-th smallest.
		alphas[i], alphas[n-1-i] = (1-z)/2, (1+z)/2
		weights[i], weights[n-1-i] = w/2, w/2
	}
	return alphas, weights
}
