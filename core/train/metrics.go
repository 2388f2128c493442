package train

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/bertlab/bertlab/core/bert"
)

// Metrics are evaluation results by name, as `bertlab eval --json` prints them: "accuracy",
// "macro_f1", "token_accuracy", "entity_f1", "exact_match", "f1", "mlm_accuracy", "mlm_top5",
// "perplexity", "loss", and "n", the number of examples. Scores are fractions in [0, 1] (the
// official SQuAD script prints exact match and F1 multiplied by 100).
type Metrics map[string]float64

// Accuracy is the fraction of predictions equal to the gold labels (NaN for none).
func Accuracy(pred, gold []int) (float64, error) {
	if len(pred) != len(gold) {
		return 0, fmt.Errorf("accuracy: %d predictions for %d labels", len(pred), len(gold))
	}
	if len(gold) == 0 {
		return math.NaN(), nil
	}
	ok := 0
	for i := range gold {
		if pred[i] == gold[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(gold)), nil
}

// MacroF1 is the unweighted mean over classes of each class's F1 = 2·TP / (2·TP + FP + FN), as
// scikit-learn's f1_score(average="macro"): the classes are those that occur in the gold labels
// or the predictions, and a class's F1 is 0 where it is 0/0. NaN for no labels.
func MacroF1(pred, gold []int) (float64, error) {
	if len(pred) != len(gold) {
		return 0, fmt.Errorf("macro F1: %d predictions for %d labels", len(pred), len(gold))
	}
	if len(gold) == 0 {
		return math.NaN(), nil
	}
	type counts struct{ tp, fp, fn int }
	by := map[int]*counts{}
	get := func(c int) *counts {
		if by[c] == nil {
			by[c] = &counts{}
		}
		return by[c]
	}
	for i, g := range gold {
		p := pred[i]
		if p == g {
			get(g).tp++
		} else {
			get(p).fp++
			get(g).fn++
		}
	}
	var sum float64
	for _, c := range by {
		if d := 2*c.tp + c.fp + c.fn; d > 0 {
			sum += 2 * float64(c.tp) / float64(d)
		}
	}
	return sum / float64(len(by)), nil
}

// TokenAccuracy is the fraction of tokens whose predicted tag equals the gold tag, over all
// sentences (seqeval's accuracy_score). NaN for no tokens.
func TokenAccuracy(pred, gold [][]string) (float64, error) {
	if err := sameLengths(pred, gold); err != nil {
		return 0, fmt.Errorf("token accuracy: %w", err)
	}
	ok, n := 0, 0
	for s := range gold {
		for i, g := range gold[s] {
			if pred[s][i] == g {
				ok++
			}
			n++
		}
	}
	if n == 0 {
		return math.NaN(), nil
	}
	return float64(ok) / float64(n), nil
}

func sameLengths(pred, gold [][]string) error {
	if len(pred) != len(gold) {
		return fmt.Errorf("%d predicted sentences for %d", len(pred), len(gold))
	}
	for s := range gold {
		if len(pred[s]) != len(gold[s]) {
			return fmt.Errorf("sentence %d: %d predicted tags for %d tokens", s, len(pred[s]), len(gold[s]))
		}
	}
	return nil
}

// Entity is a chunk of a tagged sentence: tokens [Start, End) of one type.
type Entity struct {
	Type       string
	Start, End int
}

// splitTag returns a tag's chunk prefix (B, I, E, S, or O) and type. A tag that is not "O" and
// has no "B-", "I-", "E-" or "S-" prefix (a part-of-speech tag such as "NN" or "IN") is a chunk
// of one token: prefix S, its type the whole tag.
func splitTag(t string) (byte, string) {
	if t == "O" {
		return 'O', ""
	}
	if len(t) >= 2 && t[1] == '-' && strings.IndexByte("BIES", t[0]) >= 0 {
		return t[0], t[2:]
	}
	return 'S', t
}

// Entities returns the chunks of a sentence's tags as seqeval's default (conlleval) mode finds
// them in IOB1, IOB2 or IOBES tags: a chunk starts at B or S, at I or E after O, E or S, and
// where the type changes; it ends before B, S and O, after E and S, and where the type changes.
// Tags without a prefix are one-token chunks (see splitTag).
func Entities(tags []string) []Entity {
	var out []Entity
	prevTag, prevType := byte('O'), ""
	begin := 0
	for i := 0; i <= len(tags); i++ {
		tag, typ := byte('O'), ""
		if i < len(tags) {
			tag, typ = splitTag(tags[i])
		}
		if endOfChunk(prevTag, tag, prevType, typ) {
			out = append(out, Entity{prevType, begin, i})
		}
		if startOfChunk(prevTag, tag, prevType, typ) {
			begin = i
		}
		prevTag, prevType = tag, typ
	}
	return out
}

// endOfChunk and startOfChunk are conlleval's (and seqeval's) rules.
func endOfChunk(prevTag, tag byte, prevType, typ string) bool {
	switch {
	case prevTag == 'E' || prevTag == 'S':
		return true
	case (prevTag == 'B' || prevTag == 'I') && (tag == 'B' || tag == 'S' || tag == 'O'):
		return true
	}
	return prevTag != 'O' && prevType != typ
}

func startOfChunk(prevTag, tag byte, prevType, typ string) bool {
	switch {
	case tag == 'B' || tag == 'S':
		return true
	case (prevTag == 'E' || prevTag == 'S' || prevTag == 'O') && (tag == 'E' || tag == 'I'):
		return true
	}
	return tag != 'O' && prevType != typ
}

// EntityScores are the micro-averaged precision, recall and F1 of predicted entities against
// gold ones (seqeval's default mode): an entity counts when its type and both ends match.
// A score that is 0/0 is 0, as seqeval reports it.
func EntityScores(pred, gold [][]string) (precision, recall, f1 float64, err error) {
	if err := sameLengths(pred, gold); err != nil {
		return 0, 0, 0, fmt.Errorf("entity F1: %w", err)
	}
	nPred, nGold, correct := 0, 0, 0
	for s := range gold {
		g := map[Entity]bool{}
		for _, e := range Entities(gold[s]) {
			g[e] = true
		}
		nGold += len(g)
		for _, e := range Entities(pred[s]) {
			nPred++
			if g[e] {
				correct++
			}
		}
	}
	if nPred > 0 {
		precision = float64(correct) / float64(nPred)
	}
	if nGold > 0 {
		recall = float64(correct) / float64(nGold)
	}
	if precision+recall > 0 {
		f1 = 2 * precision * recall / (precision + recall)
	}
	return precision, recall, f1, nil
}

// NormalizeAnswer is the official SQuAD v1.1 evaluation script's normalize_answer: lowercase,
// remove ASCII punctuation (Python's string.punctuation), remove the articles a, an, the as whole
// words (the regular expression \b(a|an|the)\b, with Python's Unicode word characters), and
// collapse white space to single spaces.
func NormalizeAnswer(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 0x80 && strings.ContainsRune(`!"#$%&'()*+,-./:;<=>?@[\]^_`+"`"+`{|}~`, r) {
			return -1
		}
		return r
	}, s)
	// Articles: a run of word characters that is exactly "a", "an" or "the" becomes a space.
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if !isWordRune(rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && isWordRune(rs[j]) {
			j++
		}
		switch w := string(rs[i:j]); w {
		case "a", "an", "the":
			b.WriteByte(' ')
		default:
			b.WriteString(w)
		}
		i = j
	}
	return strings.Join(pythonSplit(b.String()), " ")
}

// isWordRune is Python's Unicode \w: letters, numbers and the underscore.
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

// pythonSplit is Python's str.split(): fields between runs of white space, which for Python
// also includes the separators U+001C..U+001F.
func pythonSplit(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

// SQuADExactMatch is 1 when the normalised prediction equals a normalised gold answer, else 0
// (the official script's exact_match_score, maximised over the gold answers).
func SQuADExactMatch(pred string, golds []string) float64 {
	p := NormalizeAnswer(pred)
	for _, g := range golds {
		if p == NormalizeAnswer(g) {
			return 1
		}
	}
	return 0
}

// SQuADF1 is the official SQuAD v1.1 token F1 of the prediction, maximised over the gold
// answers: tokens are the normalised answer split at white space, the overlap counts common
// tokens with multiplicity, and no overlap (empty answers included) scores 0.
func SQuADF1(pred string, golds []string) float64 {
	pt := pythonSplit(NormalizeAnswer(pred))
	best := 0.0
	for _, g := range golds {
		gt := pythonSplit(NormalizeAnswer(g))
		count := map[string]int{}
		for _, t := range gt {
			count[t]++
		}
		same := 0
		for _, t := range pt {
			if count[t] > 0 {
				count[t]--
				same++
			}
		}
		if same == 0 {
			continue
		}
		p := float64(same) / float64(len(pt))
		r := float64(same) / float64(len(gt))
		best = math.Max(best, 2*p*r/(p+r))
	}
	return best
}

// MLMStats accumulates masked-LM evaluation over batches: top-1 and top-5 accuracy of the
// predicted positions and the mean negative log-likelihood, whose exponential is the perplexity.
type MLMStats struct {
	N          int     // predicted positions
	Top1, Top5 int     // positions whose label is the best logit, or among the five best
	NLL        float64 // sum over positions of -log softmax(logits)[label]
}

// Add counts the rows of logits [N, V] whose label is not bert.IgnoreIndex. A label
// ranks k when k logits of its row are strictly greater than its own, so ties count in its favour.
func (s *MLMStats) Add(logits []float32, vocab int, labels []int) error {
	if vocab <= 0 || len(logits) != len(labels)*vocab {
		return fmt.Errorf("MLM stats: %d logits for %d labels of %d classes", len(logits), len(labels), vocab)
	}
	for i, y := range labels {
		if y == bert.IgnoreIndex {
			continue
		}
		if y < 0 || y >= vocab {
			return fmt.Errorf("MLM stats: label %d at row %d outside [0, %d)", y, i, vocab)
		}
		row := logits[i*vocab : (i+1)*vocab]
		rank := 0
		for _, v := range row {
			if v > row[y] {
				rank++
			}
		}
		if rank < 1 {
			s.Top1++
		}
		if rank < 5 {
			s.Top5++
		}
		s.NLL -= bert.LogSoftmaxAt(row, y)
		s.N++
	}
	return nil
}

// Metrics returns "mlm_accuracy", "mlm_top5", "perplexity" and "n".
func (s MLMStats) Metrics() Metrics {
	n := float64(s.N)
	return Metrics{"mlm_accuracy": float64(s.Top1) / n, "mlm_top5": float64(s.Top5) / n, "perplexity": Perplexity(s.NLL / n), "n": n}
}

// Perplexity is exp of a mean negative log-likelihood (in nats).
func Perplexity(meanNLL float64) float64 { return math.Exp(meanNLL) }

// String writes the figures sorted by name, "n" last: "accuracy 0.9000  macro_f1 0.8800  n 50".
func (m Metrics) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "n" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %.4f  ", k, m[k])
	}
	fmt.Fprintf(&b, "n %.0f", m["n"])
	return b.String()
}
