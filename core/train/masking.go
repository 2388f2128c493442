package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// MaskingConfig are the masked-LM settings of google-research/bert's create_pretraining_data.py.
type MaskingConfig struct {
	// Prob is masked_lm_prob: the share of a sequence's maskable tokens that are predicted (0.15).
	Prob float64
	// MaxPredictions is max_predictions_per_seq, the cap on predictions per sequence (20 for 128
	// tokens in the reference); 0 means no cap.
	MaxPredictions int
	// WholeWord is do_whole_word_mask: the WordPiece pieces of a word ("##" continuations) are
	// chosen together, never apart.
	WholeWord bool
}

// DefaultMasking is the reference's recipe for sequences of seqLen tokens: 15%, at most
// ceil(0.15·seqLen) predictions (20 for 128, 77 for 512, as BERT used), single pieces.
func DefaultMasking(seqLen int) MaskingConfig {
	return MaskingConfig{Prob: 0.15, MaxPredictions: int(math.Ceil(0.15 * float64(seqLen)))}
}

// Masker chooses the positions a masked-LM predicts and corrupts them, as
// create_masked_lm_predictions does. It is immutable and safe for concurrent use (each call
// brings its own generator).
type Masker struct {
	Config    MaskingConfig
	maskID    int
	vocabSize int
	special   map[int]bool // never chosen: [CLS], [SEP], [PAD], [MASK]
	cont      []bool       // by id: a "##" continuation piece
}

// NewMasker returns a masker for tok's vocabulary.
func NewMasker(tok *tokenizer.Tokenizer, c MaskingConfig) (*Masker, error) {
	if !(c.Prob > 0 && c.Prob <= 1) {
		return nil, fmt.Errorf("masking: probability %g outside (0, 1]", c.Prob)
	}
	if c.MaxPredictions < 0 {
		return nil, fmt.Errorf("masking: max predictions %d < 0", c.MaxPredictions)
	}
	v := tok.Vocab()
	m := &Masker{Config: c, maskID: tok.MaskID(), vocabSize: v.Len(),
		special: map[int]bool{tok.CLSID(): true, tok.SEPID(): true, tok.PadID(): true, tok.MaskID(): true},
		cont:    make([]bool, v.Len())}
	for id := range m.cont {
		m.cont[id] = strings.HasPrefix(v.Token(id), tokenizer.ContinuationPrefix)
	}
	return m, nil
}

// NumToPredict is how many of n maskable tokens a sequence predicts: round(n·Prob), at least
// 1, at most MaxPredictions. Python's round (half to even) as in the reference.
func (m *Masker) NumToPredict(n int) int {
	if n == 0 {
		return 0
	}
	k := max(1, int(math.RoundToEven(float64(n)*m.Config.Prob)))
	if m.Config.MaxPredictions > 0 {
		k = min(k, m.Config.MaxPredictions)
	}
	return min(k, n)
}

// Mask returns a corrupted copy of ids [S] and its labels [S]: the original id at each predicted
// position, bert.IgnoreIndex elsewhere. Of the predicted positions 80% become [MASK], 10% a
// random id of the whole vocabulary and 10% stay as they were (the model must predict them all).
//
// The steps and their order are create_masked_lm_predictions': candidates are the positions
// that are not special tokens ([CLS], [SEP], [PAD], [MASK]), grouped into whole words when
// WholeWord is set; the groups are shuffled and taken in turn while they fit in the number to
// predict (a group that would overshoot is skipped). One difference: the number to predict is
// 15% of the maskable tokens, not of all tokens as in the reference (which counts [CLS] and
// [SEP]); it is what DataCollatorForLanguageModeling's 15% means. ids is not changed.
func (m *Masker) Mask(ids []int, rng *rand.Rand) (input, labels []int) {
	input = append([]int(nil), ids...)
	labels = make([]int, len(ids))
	for i := range labels {
		labels[i] = bert.IgnoreIndex
	}
	var groups [][]int
	n := 0
	for i, id := range ids {
		if m.special[id] {
			continue
		}
		n++
		if m.Config.WholeWord && len(groups) > 0 && id >= 0 && id < len(m.cont) && m.cont[id] &&
			groups[len(groups)-1][len(groups[len(groups)-1])-1] == i-1 {
			groups[len(groups)-1] = append(groups[len(groups)-1], i)
			continue
		}
		groups = append(groups, []int{i})
	}
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	k := m.NumToPredict(n)
	chosen := 0
	for _, g := range groups {
		if chosen >= k {
			break
		}
		if chosen+len(g) > k {
			continue
		}
		for _, i := range g {
			labels[i] = ids[i]
			switch {
			case rng.Float64() < 0.8:
				input[i] = m.maskID
			case rng.Float64() < 0.5: // keep the original
			default:
				input[i] = rng.IntN(m.vocabSize)
			}
		}
		chosen += len(g)
	}
	return input, labels
}

// newRNG returns a generator for one purpose, named by the run's seed and a few numbers (what
// it is for, the epoch, the instance): the same names give the same draws on any machine and
// in any order of use, which is what makes a resumed run equal an uninterrupted one.
func newRNG(seed uint64, names ...uint64) *rand.Rand {
	h := mix64(seed)
	for _, n := range names {
		h = mix64(h ^ mix64(n))
	}
	return rand.New(rand.NewPCG(h, mix64(h^0x9e3779b97f4a7c15)))
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
