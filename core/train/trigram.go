package train

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/bertlab/bertlab/core/bert"
	"github.com/bertlab/bertlab/core/tokenizer"
)

// TrigramModel is the count baseline a masked LM is measured against (issue 12): for a masked
// token it predicts the token seen most often between the same two neighbours in the training
// text, c(l, w, r); for a pair of neighbours never seen together, the token w with the most
// c(l, w) + c(w, r) (one neighbour at a time); for neighbours never seen at all, the most frequent
// token. Ties go to the smaller id. The neighbours are read as the masked instance shows them
// ([MASK], a random token or the original), which is what the masked LM sees too. Each document
// is counted as [CLS] its tokens [SEP], the way instances pack whole sentences.
type TrigramModel struct {
	ctx     []uint64 // sorted (l, r) keys: l<<trigramBits | r
	best    []int32  // best[i]: the most frequent w between the neighbours ctx[i]
	left    []pairCount
	right   []pairCount
	unigram int
}

// pairCount is a bigram: key = neighbour<<trigramBits | w, and its count.
type pairCount struct {
	key uint64
	n   int64
}

// trigramBits is the width of one token id in the packed keys.
const trigramBits = 21

// NewTrigramModel counts the documents' trigrams and bigrams (docs from ReadDocumentsFiles: a
// file given twice counts twice).
func NewTrigramModel(docs []TokenDocument, tok *tokenizer.Tokenizer) (*TrigramModel, error) {
	v := tok.Vocab().Len()
	if v > 1<<trigramBits {
		return nil, fmt.Errorf("trigram model: vocabulary of %d tokens, at most %d", v, 1<<trigramBits)
	}
	var tri, lw, wr []uint64
	uni := make([]int64, v)
	stream := []int{}
	for _, d := range docs {
		stream = append(stream[:0], tok.CLSID())
		for _, s := range d {
			stream = append(stream, s...)
		}
		stream = append(stream, tok.SEPID())
		for j := 1; j+1 < len(stream); j++ {
			l, w, r := uint64(stream[j-1]), uint64(stream[j]), uint64(stream[j+1])
			tri = append(tri, (l<<trigramBits|r)<<trigramBits|w)
			lw = append(lw, l<<trigramBits|w)
			wr = append(wr, r<<trigramBits|w)
			uni[w]++
		}
	}
	if len(tri) == 0 {
		return nil, fmt.Errorf("trigram model: no token to count")
	}
	t := &TrigramModel{unigram: argmax(uni)}
	slices.Sort(tri)
	const low = 1<<trigramBits - 1
	bestN := int64(0)
	for i := 0; i < len(tri); {
		j := i
		for j < len(tri) && tri[j] == tri[i] {
			j++
		}
		ctx, w, n := tri[i]>>trigramBits, int32(tri[i]&low), int64(j-i)
		if k := len(t.ctx) - 1; k < 0 || t.ctx[k] != ctx {
			t.ctx, t.best, bestN = append(t.ctx, ctx), append(t.best, w), n
		} else if n > bestN { // equal counts keep the smaller w, seen first
			t.best[k], bestN = w, n
		}
		i = j
	}
	t.left, t.right = countPairs(lw), countPairs(wr)
	return t, nil
}

// countPairs sorts keys and counts each distinct one.
func countPairs(keys []uint64) []pairCount {
	slices.Sort(keys)
	var out []pairCount
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		out = append(out, pairCount{keys[i], int64(j - i)})
		i = j
	}
	return out
}

// neighbourRange is the part of ps whose neighbour is a.
func neighbourRange(ps []pairCount, a int) []pairCount {
	lo := uint64(a) << trigramBits
	i, _ := slices.BinarySearchFunc(ps, lo, func(p pairCount, k uint64) int { return cmp.Compare(p.key, k) })
	j, _ := slices.BinarySearchFunc(ps, lo+1<<trigramBits, func(p pairCount, k uint64) int { return cmp.Compare(p.key, k) })
	return ps[i:j]
}

// Predict returns the token the model puts between the neighbours l and r.
func (t *TrigramModel) Predict(l, r int) int {
	const low = 1<<trigramBits - 1
	if l >= 0 && r >= 0 && l <= low && r <= low {
		if i, ok := slices.BinarySearch(t.ctx, uint64(l)<<trigramBits|uint64(r)); ok {
			return int(t.best[i])
		}
	}
	// One neighbour at a time: c(l, w) + c(w, r), merged by w (both ranges are sorted by w).
	a, b := neighbourRange(t.left, l), neighbourRange(t.right, r)
	best, bestN := -1, int64(0)
	for len(a) > 0 || len(b) > 0 {
		var w uint64
		var n int64
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].key&low < b[0].key&low:
			w, n, a = a[0].key&low, a[0].n, a[1:]
		case len(a) == 0 || b[0].key&low < a[0].key&low:
			w, n, b = b[0].key&low, b[0].n, b[1:]
		default:
			w, n, a, b = a[0].key&low, a[0].n+b[0].n, a[1:], b[1:]
		}
		if n > bestN {
			best, bestN = int(w), n
		}
	}
	if best < 0 {
		return t.unigram
	}
	return best
}

// Evaluate predicts every labelled position of insts from its neighbours in the instance and
// returns how many it got right out of how many.
func (t *TrigramModel) Evaluate(insts []Instance) (correct, n int) {
	for _, in := range insts {
		for i, y := range in.Labels {
			if y == bert.IgnoreIndex || i == 0 || i+1 >= len(in.InputIDs) {
				continue
			}
			n++
			if t.Predict(in.InputIDs[i-1], in.InputIDs[i+1]) == y {
				correct++
			}
		}
	}
	return correct, n
}
