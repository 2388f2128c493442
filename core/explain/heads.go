package explain

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
)

// Head names one attention head.
type Head struct {
	Layer int `json:"layer"`
	Head  int `json:"head"`
}

// HeadMask returns HF's head_mask [L, A] for c with the heads off set to 0 and the others 1.
func HeadMask(c bert.Config, off []Head) ([]float32, error) {
	L, A := c.NumHiddenLayers, c.NumAttentionHeads
	hm := make([]float32, L*A)
	for i := range hm {
		hm[i] = 1
	}
	for _, h := range off {
		if h.Layer < 0 || h.Layer >= L || h.Head < 0 || h.Head >= A {
			return nil, fmt.Errorf("head %d.%d outside the model's %d layers x %d heads", h.Layer, h.Head, L, A)
		}
		hm[h.Layer*A+h.Head] = 0
	}
	return hm, nil
}

// Shift is one token's probability with all heads and with some heads off.
type Shift struct {
	ID     int     `json:"id"`
	Token  string  `json:"token,omitempty"` // filled by the Explainer
	Before float64 `json:"before"`          // all heads on
	After  float64 `json:"after"`           // the heads off
}

// AblatedPosition holds the predictions at one position with and without the heads.
type AblatedPosition struct {
	Position int     `json:"position"`
	Before   []Shift `json:"before"` // the intact model's top k, with their probabilities after
	After    []Shift `json:"after"`  // the ablated model's top k, with their probabilities before
}

// Ablation is what switching heads off does to the masked-LM predictions.
type Ablation struct {
	Off       []Head            `json:"off"`
	Positions []AblatedPosition `json:"positions"`
}

// Ablate predicts the tokens at positions with every head and with the heads off (HF's
// head_mask with 0 for those heads: their attention output is zero), topK of each.
func Ablate(m *bert.Model, in Input, positions []int, off []Head, topK int) (*Ablation, error) {
	if m.MLM == nil {
		return nil, fmt.Errorf("ablation: the model has no MLM head (cls.predictions)")
	}
	if err := in.check(m.Config); err != nil {
		return nil, err
	}
	if topK < 1 || topK > MaxTopK {
		return nil, fmt.Errorf("ablation: top-k %d outside [1, %d]", topK, MaxTopK)
	}
	if len(positions) == 0 {
		return nil, fmt.Errorf("ablation: no position")
	}
	for _, p := range positions {
		if p < 0 || p >= len(in.IDs) {
			return nil, fmt.Errorf("ablation: position %d outside the %d tokens", p, len(in.IDs))
		}
	}
	hm, err := HeadMask(m.Config, off)
	if err != nil {
		return nil, fmt.Errorf("ablation: %w", err)
	}
	b := in.batch(1)
	before, err := m.Forward(b, bert.Options{MLM: true, MLMRows: positions})
	if err != nil {
		return nil, err
	}
	after, err := m.Forward(b, bert.Options{MLM: true, MLMRows: positions, HeadMask: hm})
	if err != nil {
		return nil, err
	}
	r := &Ablation{Off: off}
	for i, p := range positions {
		pb, pa := softmax(before.MLMLogits.Row(i)), softmax(after.MLMLogits.Row(i))
		ap := AblatedPosition{Position: p}
		for _, t := range topK64(pb, topK) {
			ap.Before = append(ap.Before, Shift{ID: t.ID, Before: t.Prob, After: pa[t.ID]})
		}
		for _, t := range topK64(pa, topK) {
			ap.After = append(ap.After, Shift{ID: t.ID, Before: pb[t.ID], After: t.Prob})
		}
		r.Positions = append(r.Positions, ap)
	}
	return r, nil
}

// Example is one input with masked-LM labels for head importance.
type Example struct {
	Input
	Labels []int `json:"labels"` // [S]: the token to predict, bert.IgnoreIndex where none
}

// Importance is head importance as Michel et al. (2019) define it: the mean over the examples
// of |d loss / d head_mask| at a mask of ones, where the loss is an example's masked-LM loss
// (HF's mean cross-entropy over its labelled positions).
type Importance struct {
	// Raw is the importance [L, A]: Raw[l][h] for head h of layer l.
	Raw [][]float64 `json:"scores"`
	// Normalized divides each layer's scores by their L2 norm, as Michel et al. do before
	// comparing heads across layers.
	Normalized [][]float64 `json:"normalized"`
	Examples   int         `json:"examples"`
}

// HeadImportance computes Importance over the examples.
func HeadImportance(m *bert.Model, examples []Example) (*Importance, error) {
	if m.MLM == nil {
		return nil, fmt.Errorf("head importance: the model has no MLM head (cls.predictions)")
	}
	if len(examples) == 0 {
		return nil, fmt.Errorf("head importance: no example")
	}
	L, A, H, V := m.NumBlocks(), m.Config.NumAttentionHeads, m.Config.HiddenSize, m.Config.VocabSize
	ones := make([]float32, L*A)
	for i := range ones {
		ones[i] = 1
	}
	g := m.NewGrads()
	sum := make([]float64, L*A)
	for e, ex := range examples {
		if err := ex.check(m.Config); err != nil {
			return nil, fmt.Errorf("head importance: example %d: %w", e, err)
		}
		S := len(ex.IDs)
		if len(ex.Labels) != S {
			return nil, fmt.Errorf("head importance: example %d: %d labels for %d tokens", e, len(ex.Labels), S)
		}
		var rows, labels []int
		for i, y := range ex.Labels {
			if y == bert.IgnoreIndex {
				continue
			}
			if y < 0 || y >= V {
				return nil, fmt.Errorf("head importance: example %d: label %d at %d outside the vocabulary", e, y, i)
			}
			rows, labels = append(rows, i), append(labels, y)
		}
		if len(rows) == 0 {
			return nil, fmt.Errorf("head importance: example %d has no labelled position", e)
		}
		a, err := m.ForwardTrain(ex.batch(1), bert.TrainOptions{HeadMask: ones})
		if err != nil {
			return nil, err
		}
		h := tensor.New(len(rows), H)
		for i, r := range rows {
			copy(h.Row(i), a.Hidden.Data[r*H:(r+1)*H])
		}
		logits, err := m.MLMHeadLogits(h)
		if err != nil {
			return nil, err
		}
		if _, _, err := bert.CrossEntropyBackward(logits.Data, logits.Data, V, labels, 1); err != nil {
			return nil, err
		}
		dh, err := m.MLMHeadBackward(h, logits, g)
		if err != nil {
			return nil, err
		}
		dHidden := tensor.New(1, S, H)
		for i, r := range rows {
			copy(dHidden.Data[r*H:(r+1)*H], dh.Row(i))
		}
		ig, err := m.BackwardInputs(a, dHidden, nil, g)
		if err != nil {
			return nil, err
		}
		for i, v := range ig.HeadMask.Data {
			sum[i] += math.Abs(float64(v))
		}
	}
	imp := &Importance{Examples: len(examples)}
	for l := range L {
		raw, norm := make([]float64, A), make([]float64, A)
		var n2 float64
		for h := range A {
			raw[h] = sum[l*A+h] / float64(len(examples))
			n2 += raw[h] * raw[h]
		}
		for h := range A {
			if n2 > 0 {
				norm[h] = raw[h] / math.Sqrt(n2)
			}
		}
		imp.Raw, imp.Normalized = append(imp.Raw, raw), append(imp.Normalized, norm)
	}
	return imp, nil
}

// MaxHeadList bounds the heads a list may name (BERT-Large has 24 x 16 = 384).
const MaxHeadList = 1024

// ParseHeads reads a list of heads written "L.H,L.H,..." (layer and head from 0), e.g. "0.1,3.11";
// spaces around entries are allowed and "" is no head. Ranges are checked by HeadMask.
func ParseHeads(s string) ([]Head, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxHeadList {
		return nil, fmt.Errorf("heads: %d entries, at most %d", len(parts), MaxHeadList)
	}
	var hs []Head
	for _, p := range parts {
		l, h, ok := strings.Cut(strings.TrimSpace(p), ".")
		li, err1 := strconv.Atoi(l)
		hi, err2 := strconv.Atoi(h)
		if !ok || err1 != nil || err2 != nil || li < 0 || hi < 0 {
			return nil, fmt.Errorf("heads: %q is not LAYER.HEAD (e.g. 0.3)", strings.TrimSpace(p))
		}
		hs = append(hs, Head{Layer: li, Head: hi})
	}
	return hs, nil
}

// String writes the head as ParseHeads reads it.
func (h Head) String() string { return fmt.Sprintf("%d.%d", h.Layer, h.Head) }
