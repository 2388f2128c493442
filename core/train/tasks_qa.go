package train

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/dataset"
	"github.com/bertlab/bertlab/core/hf"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// QAConfig are the settings of HF's run_qa.py that shape the inputs and the answers.
type QAConfig struct {
	MaxSeqLength int // tokens per window (max_seq_length; 384 in run_qa)
	// DocStride is how many context tokens neighbouring windows of a long context share
	// (doc_stride, 128 in run_qa: HF's stride is an overlap, not a step).
	DocStride int
	// MaxQueryLength truncates longer questions (run_squad.py's max_query_length, 64), so that
	// a window always has room for context.
	MaxQueryLength  int
	MaxAnswerLength int // longest answer, in tokens (max_answer_length, 30)
	NBest           int // start and end candidates per window (n_best_size, 20)
}

// DefaultQA is run_qa's configuration for windows of maxSeqLength tokens: doc stride a third of
// the window (128 for 384), questions of at most 64 tokens (or a quarter of a short window),
// answers of at most 30 tokens, 20 candidates.
func DefaultQA(maxSeqLength int) QAConfig {
	return QAConfig{MaxSeqLength: maxSeqLength, DocStride: maxSeqLength / 3, MaxQueryLength: min(64, maxSeqLength/4),
		MaxAnswerLength: 30, NBest: 20}
}

// QAData is an extractive question-answering dataset: each example becomes one feature per
// window of its context, [CLS] question [SEP] window [SEP].
type QAData struct {
	features
	Source []dataset.SQuADExample
	Config QAConfig
	// QuestionsTruncated counts questions cut to MaxQueryLength tokens.
	QuestionsTruncated int
	// Outside counts training features whose window does not hold the whole answer, labelled
	// with the [CLS] position (0, 0) as run_qa labels them.
	Outside int

	example   []int      // example of each feature
	ctxStart  []int      // position of each feature's first context token
	offsets   [][][2]int // byte span in the context of each context token of each feature
	byExample [][]int    // features of each example, in window order
}

// NewQAData tokenizes examples as run_qa's prepare_train_features and
// prepare_validation_features do: the question (leading space stripped) and the context as
// the second sequence, truncated "only_second" into windows of c.MaxSeqLength tokens that
// overlap by c.DocStride, each labelled with the token positions of the first answer, or (0, 0)
// when the window does not hold it whole.
func NewQAData(tok *tokenizer.Tokenizer, examples []dataset.SQuADExample, c QAConfig) (*QAData, error) {
	if c.MaxQueryLength < 1 || c.MaxSeqLength-c.MaxQueryLength-3 <= c.DocStride || c.DocStride < 0 {
		return nil, fmt.Errorf("qa data: windows of %d tokens cannot hold a question of %d tokens, [CLS], 2 [SEP] and more than the %d-token overlap (doc stride)",
			c.MaxSeqLength, c.MaxQueryLength, c.DocStride)
	}
	if c.MaxAnswerLength < 1 || c.NBest < 1 {
		return nil, fmt.Errorf("qa data: max answer length %d, n-best %d", c.MaxAnswerLength, c.NBest)
	}
	d := &QAData{features: features{padID: tok.PadID(), task: bert.QuestionAnswering}, Source: examples, Config: c}
	for e, ex := range examples {
		q := tok.Tokenize(strings.TrimLeft(ex.Question, " \t\n\r\f\v"))
		if len(q) > c.MaxQueryLength {
			q = q[:c.MaxQueryLength]
			d.QuestionsTruncated++
		}
		toks := tok.Tokenize(ex.Context)
		if len(toks) == 0 {
			return nil, fmt.Errorf("qa data: example %d (id %q): the context has no tokens", e+1, ex.ID)
		}
		// The answer as a byte span of the context.
		ans := ex.Answers[0]
		s := len(ex.Context)
		for ci, b := 0, 0; b < len(ex.Context); ci++ {
			if ci == ans.Start {
				s = b
				break
			}
			_, w := utf8.DecodeRuneInString(ex.Context[b:])
			b += w
		}
		end := s + len(ans.Text)

		head := []int{tok.CLSID()}
		for _, t := range q {
			head = append(head, t.ID)
		}
		head = append(head, tok.SEPID())
		room := c.MaxSeqLength - len(head) - 1
		var feats []int
		for ws := 0; ; ws += room - c.DocStride {
			we := min(ws+room, len(toks))
			ft := feature{ids: append([]int(nil), head...)}
			offs := make([][2]int, 0, we-ws)
			for _, t := range toks[ws:we] {
				ft.ids = append(ft.ids, t.ID)
				offs = append(offs, [2]int{t.Start, t.End})
			}
			ft.ids = append(ft.ids, tok.SEPID())
			ft.types = make([]int, len(ft.ids))
			for i := len(head); i < len(ft.ids); i++ {
				ft.types[i] = 1
			}
			ft.labels = []int{0, 0}
			if toks[ws].Start <= s && toks[we-1].End >= end {
				i := ws
				for i < we && toks[i].Start <= s {
					i++
				}
				j := we - 1
				for j >= ws && toks[j].End >= end {
					j--
				}
				ft.labels = []int{len(head) + i - 1 - ws, len(head) + j + 1 - ws}
			} else {
				d.Outside++
			}
			feats = append(feats, len(d.feats))
			d.feats = append(d.feats, ft)
			d.example = append(d.example, e)
			d.ctxStart = append(d.ctxStart, len(head))
			d.offsets = append(d.offsets, offs)
			if we == len(toks) {
				break
			}
		}
		d.byExample = append(d.byExample, feats)
	}
	return d, nil
}

func (d *QAData) Examples() int      { return len(d.Source) }
func (d *QAData) MainMetric() string { return "f1" }

// QAPrediction is the best answer found for an example.
type QAPrediction struct {
	ID    string
	Text  string  // "" when no window gave a valid span
	Score float64 // start logit + end logit
}

// WriteSQuADPredictions writes the answers as the SQuAD evaluation script reads them,
// {id: text}, to path.
func WriteSQuADPredictions(path string, preds []QAPrediction) error {
	answers := map[string]string{}
	for _, p := range preds {
		answers[p.ID] = p.Text
	}
	js, err := json.MarshalIndent(answers, "", "  ")
	if err != nil {
		return err
	}
	return hf.WriteFileAtomic(path, append(js, '\n'))
}

// Predict returns the best answer of every example, as run_qa's postprocess_qa_predictions
// chooses it: in each window, the NBest highest start logits and end logits, pairs of context
// tokens with start <= end and at most MaxAnswerLength tokens, scored start + end logit; the
// best over all windows wins and its text is the context between the tokens' offsets.
func (d *QAData) Predict(ctx context.Context, m *bert.TaskModel, batchSize int) ([]QAPrediction, error) {
	logits := make([][]float32, len(d.feats))
	err := d.forEachLogits(ctx, m, batchSize, func(i int, l []float32) { logits[i] = append([]float32(nil), l...) })
	if err != nil {
		return nil, err
	}
	return d.answers(logits), nil
}

// answers picks the best answer of every example from the logits [len(ids), 2] of every
// feature (see Predict).
func (d *QAData) answers(logits [][]float32) []QAPrediction {
	c := d.Config
	out := make([]QAPrediction, len(d.Source))
	for e, ex := range d.Source {
		best := QAPrediction{ID: ex.ID}
		found := false
		for _, fi := range d.byExample[e] {
			l, cs, offs := logits[fi], d.ctxStart[fi], d.offsets[fi]
			n := len(l) / 2
			starts, ends := topIndexes(l, 0, n, c.NBest), topIndexes(l, 1, n, c.NBest)
			for _, s := range starts {
				for _, en := range ends {
					// Only context tokens have offsets (run_qa sets the others to None).
					if s < cs || en < cs || s-cs >= len(offs) || en-cs >= len(offs) || en < s || en-s+1 > c.MaxAnswerLength {
						continue
					}
					score := float64(l[2*s]) + float64(l[2*en+1])
					if !found || score > best.Score {
						found = true
						best.Score = score
						best.Text = ex.Context[offs[s-cs][0]:offs[en-cs][1]]
					}
				}
			}
		}
		out[e] = best
	}
	return out
}

// topIndexes returns the positions of the k largest values of column col of rows [n, 2], largest
// first (ties: the earlier position first).
func topIndexes(l []float32, col, n, k int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return l[2*idx[a]+col] > l[2*idx[b]+col] })
	return idx[:min(k, n)]
}

// Evaluate returns SQuAD v1.1's "exact_match" and "f1" (as fractions: the official script
// prints them times 100) over the examples, and "n", their number.
func (d *QAData) Evaluate(ctx context.Context, m *bert.TaskModel, batchSize int) (Metrics, error) {
	preds, err := d.Predict(ctx, m, batchSize)
	if err != nil {
		return nil, err
	}
	var em, f1 float64
	for e, ex := range d.Source {
		golds := make([]string, len(ex.Answers))
		for i, a := range ex.Answers {
			golds[i] = a.Text
		}
		em += SQuADExactMatch(preds[e].Text, golds)
		f1 += SQuADF1(preds[e].Text, golds)
	}
	n := float64(len(d.Source))
	return Metrics{"exact_match": em / n, "f1": f1 / n, "n": n}, nil
}
