package pipeline

import (
	"fmt"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// ClozeResult is the model's answer to one cloze sentence: its top predictions for the mask and
// the rank of the first one a reader accepts.
type ClozeResult struct {
	Text        string       `json:"text"`
	Accept      []string     `json:"accept,omitempty"`
	Predictions []Prediction `json:"predictions"`
	// Rank is the 1-based place of the first accepted word among Predictions; 0 when none is
	// there (or the sentence has no accepted words).
	Rank int `json:"rank"`
}

// Hit reports whether an accepted word is among the first k predictions.
func (r ClozeResult) Hit(k int) bool { return r.Rank > 0 && r.Rank <= k }

// Cloze fills each sentence's one [MASK] with the model's top-k tokens and ranks the accepted
// words among them (compared without regard to case).
func Cloze(m *bert.Model, tok tokenizer.Encoder, items []dataset.Cloze, topK int) ([]ClozeResult, error) {
	out := make([]ClozeResult, 0, len(items))
	for _, c := range items {
		r, err := FillMask(m, tok, c.Text, nil, topK)
		if err != nil {
			return nil, fmt.Errorf("cloze %q: %w", c.Text, err)
		}
		if len(r.Masks) != 1 {
			return nil, fmt.Errorf("cloze %q: %d masks after tokenization, want 1", c.Text, len(r.Masks))
		}
		res := ClozeResult{Text: c.Text, Accept: c.Accept, Predictions: r.Masks[0].Predictions}
	rank:
		for i, p := range res.Predictions {
			for _, w := range c.Accept {
				if strings.EqualFold(clozeWord(tok, p), w) {
					res.Rank = i + 1
					break rank
				}
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// familyMask writes text's [MASK] (the cloze sets' and the page's mask) as tok's own mask
// token (RoBERTa's <mask>) when tok has no [MASK].
func familyMask(tok tokenizer.Encoder, text string) string {
	if !strings.Contains(text, bertMask) {
		return text
	}
	mask := tokenizer.MaskToken(tok)
	if mask == "" || mask == bertMask {
		return text
	}
	if _, ok := tok.TokenID(bertMask); ok {
		return text
	}
	return strings.ReplaceAll(text, bertMask, mask)
}

// bertMask is BERT's mask token, the one the cloze sets write.
const bertMask = "[MASK]"

// clozeWord is the word of a prediction that a cloze set's accepted words are compared with: the
// WordPiece entry itself (a "##" piece is never a word), any other tokenizer's readable word.
func clozeWord(tok tokenizer.Encoder, p Prediction) string {
	if tok.Kind() == tokenizer.KindWordPiece {
		return p.Token
	}
	return p.Word
}

// ClozeShare is the share of the results with accepted words that have one in their top k, and
// how many results had accepted words.
func ClozeShare(rs []ClozeResult, k int) (float64, int) {
	hits, n := 0, 0
	for _, r := range rs {
		if r.Accept == nil {
			continue
		}
		n++
		if r.Hit(k) {
			hits++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(hits) / float64(n), n
}

// ClozeMetrics scores each named set of cloze sentences: cloze_NAME_top1 and cloze_NAME_top5,
// the shares of sentences with an accepted word first and among the first five.
func ClozeMetrics(m *bert.Model, tok tokenizer.Encoder, sets map[string][]dataset.Cloze) (map[string]float64, error) {
	if tokenizer.IsNil(tok) {
		return nil, fmt.Errorf("cloze: the model has no vocabulary")
	}
	out := map[string]float64{}
	for name, items := range sets {
		rs, err := Cloze(m, tok, items, 5)
		if err != nil {
			return nil, fmt.Errorf("cloze %s: %w", name, err)
		}
		out["cloze_"+name+"_top1"], _ = ClozeShare(rs, 1)
		out["cloze_"+name+"_top5"], _ = ClozeShare(rs, 5)
	}
	return out, nil
}
