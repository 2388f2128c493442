// Package pipeline is inference: it joins the tokenizer and the model into the tasks users run
// (fill-mask, next-sentence prediction, attention, the walk through a layer, embeddings and
// their 2-D maps). It is shared by the command line and core/engine (the HTTP API, the browser's
// worker) so that all give the same numbers; the training labs are core/lab.
package pipeline

import (
	"fmt"
	"math"
	"sort"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tensor"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// Prediction is one candidate for a masked position.
type Prediction struct {
	Token string `json:"token"` // the vocabulary entry: "##ing", "Ġcat", "▁cat"
	// Word is Token as a reader writes it (tokenizer.Encoder.Word): "ing", "cat".
	Word  string  `json:"word"`
	ID    int     `json:"id"`
	Score float64 `json:"score"` // softmax probability
}

// MaskResult holds the predictions for one [MASK].
type MaskResult struct {
	Position    int          `json:"position"` // token index in the encoded sequence ([CLS] is 0)
	Predictions []Prediction `json:"predictions"`
}

// FillMaskResult is the answer of FillMask, in the JSON layout of `bertlab fill-mask --json`.
type FillMaskResult struct {
	Masks []MaskResult `json:"masks"`
	// NSP is the next-sentence prediction of the pair, from the same forward pass; nil without a
	// second segment or when the model has no NSP head.
	NSP *NSPResult `json:"nsp,omitempty"`
}

// NSPResult is BERT's next-sentence prediction for a pair: the softmax of the NSP head's two
// logits (cls.seq_relationship on the pooled [CLS]). Index 0 is IsNext and 1 NotNext, as in
// HF's next_sentence_label.
type NSPResult struct {
	IsNext  float64    `json:"is_next"`  // probability that the second segment follows the first
	NotNext float64    `json:"not_next"` // 1 - IsNext, up to rounding
	Logits  [2]float32 `json:"logits"`   // seq_relationship_logits: IsNext, NotNext
}

// MaxTopK bounds top-k so that a request cannot ask for the whole vocabulary many times over.
const MaxTopK = 100

// FillMask predicts every [MASK] token of text (and of the optional second segment pair).
func FillMask(m *bert.Model, tok tokenizer.Encoder, text string, pair *string, topK int) (*FillMaskResult, error) {
	if m.MLM == nil {
		return nil, fmt.Errorf("fill-mask: the model has no MLM head (cls.predictions); load a BertForMaskedLM or BertForPreTraining checkpoint")
	}
	if topK < 1 || topK > MaxTopK {
		return nil, fmt.Errorf("fill-mask: top-k %d outside [1, %d]", topK, MaxTopK)
	}
	enc, err := Encode(tok, text, pair, m.Config.MaxSequenceLength())
	if err != nil {
		return nil, fmt.Errorf("fill-mask: %w", err)
	}
	maskID, mask := tok.MaskID(), tokenizer.MaskToken(tok)
	if maskID < 0 {
		return nil, fmt.Errorf("fill-mask: the %s tokenizer has no mask token", tok.Kind())
	}
	var rows []int
	for i, id := range enc.IDs {
		if id == maskID {
			rows = append(rows, i)
		}
	}
	if len(rows) == 0 {
		if enc.Truncated && containsMask(tok, text, pair) {
			return nil, fmt.Errorf("fill-mask: every %s falls after the model's %d positions; shorten the text", mask, m.Config.MaxSequenceLength())
		}
		return nil, fmt.Errorf("fill-mask: the text has no %s token; write %s where a word should be predicted", mask, mask)
	}
	return predict(m, tok, enc.IDs, enc.TypeIDs, rows, pair != nil && hasNSP(m), topK)
}

// predict runs the model once on one encoded sequence and answers the top-k predictions at the
// token positions rows (each a [MASK]) and, if nsp, the next-sentence prediction.
func predict(m *bert.Model, tok tokenizer.Encoder, ids, types, rows []int, nsp bool, topK int) (*FillMaskResult, error) {
	b := bert.Batch{B: 1, S: len(ids), InputIDs: ids, TokenTypeIDs: types}
	out, err := m.Forward(b, bert.Options{MLM: true, MLMRows: rows, NSP: nsp})
	if err != nil {
		return nil, fmt.Errorf("fill-mask: %w", err)
	}
	V := m.Config.VocabSize
	res := &FillMaskResult{}
	for r, pos := range rows {
		logits := out.MLMLogits.Data[r*V : (r+1)*V]
		res.Masks = append(res.Masks, MaskResult{Position: pos, Predictions: topKSoftmax(logits, topK, tok)})
	}
	if nsp {
		res.NSP = nspOf(out.NSPLogits.Data[:2])
	}
	return res, nil
}

// hasNSP reports whether m can predict the next sentence: the NSP head reads the pooler.
func hasNSP(m *bert.Model) bool { return m.NSP != nil && m.Pooler != nil }

// NextSentence is BERT's next-sentence prediction for the pair (text, pair), truncated to the
// model's positions: the probability that pair follows text.
func NextSentence(m *bert.Model, tok tokenizer.Encoder, text, pair string) (*NSPResult, error) {
	if !hasNSP(m) {
		return nil, fmt.Errorf("next sentence: the model has no NSP head (cls.seq_relationship and bert.pooler); load a BertForPreTraining checkpoint")
	}
	enc, err := tok.EncodePair(text, pair, m.Config.MaxSequenceLength())
	if err != nil {
		return nil, fmt.Errorf("next sentence: %w", err)
	}
	b := bert.Batch{B: 1, S: enc.Len(), InputIDs: enc.IDs, TokenTypeIDs: enc.TypeIDs}
	out, err := m.Forward(b, bert.Options{NSP: true})
	if err != nil {
		return nil, fmt.Errorf("next sentence: %w", err)
	}
	return nspOf(out.NSPLogits.Data[:2]), nil
}

// nspOf is the softmax of the two seq_relationship logits.
func nspOf(logits []float32) *NSPResult {
	a, b := float64(logits[0]), float64(logits[1])
	mx := math.Max(a, b)
	ea, eb := math.Exp(a-mx), math.Exp(b-mx)
	return &NSPResult{IsNext: ea / (ea + eb), NotNext: eb / (ea + eb), Logits: [2]float32{logits[0], logits[1]}}
}

func containsMask(tok tokenizer.Encoder, text string, pair *string) bool {
	all, _ := Encode(tok, text, pair, 0)
	for _, id := range all.IDs {
		if id == tok.MaskID() {
			return true
		}
	}
	return false
}

// topKSoftmax returns the k most probable entries of softmax(logits), highest first; ties go to
// the lower id, as torch.topk does on CPU.
func topKSoftmax(logits []float32, k int, tok tokenizer.Encoder) []Prediction {
	k = min(k, len(logits))
	idx := make([]int, 0, k+1)
	for i, v := range logits {
		if len(idx) == k && v <= logits[idx[k-1]] {
			continue
		}
		j := sort.Search(len(idx), func(j int) bool { return logits[idx[j]] < v })
		idx = append(idx, 0)
		copy(idx[j+1:], idx[j:])
		idx[j] = i
		if len(idx) > k {
			idx = idx[:k]
		}
	}
	e := make([]float32, len(logits))
	_, sum := tensor.SoftmaxTerms(e, logits)
	preds := make([]Prediction, len(idx))
	for i, id := range idx {
		preds[i] = Prediction{Token: tok.Token(id), Word: tok.Word(id), ID: id, Score: float64(e[id]) / sum}
	}
	return preds
}

// Encode encodes text, or the pair (text, *pair) when pair is not nil, truncated to maxLen
// tokens (0: no limit). BERT's [MASK], which the page and the cloze sets write, stands for the
// tokenizer's own mask token when that is another (RoBERTa's <mask>, as long, so offsets stay).
func Encode(tok tokenizer.Encoder, text string, pair *string, maxLen int) (tokenizer.Encoding, error) {
	text = familyMask(tok, text)
	if pair != nil {
		return tok.EncodePair(text, familyMask(tok, *pair), maxLen)
	}
	return tok.Encode(text, maxLen)
}

// FullLength is the number of tokens text (and pair) make without truncation, [CLS] and [SEP]
// included: with a truncated encoding, it tells how much the model does not see.
func FullLength(tok tokenizer.Encoder, text string, pair *string) (int, error) {
	enc, err := Encode(tok, text, pair, 0)
	if err != nil {
		return 0, err
	}
	return enc.Len(), nil
}
