package bert

import "github.com/bertlab/bertlab/core/tensor"

// Dropout is inverted dropout, torch.nn.Dropout in training mode, in place: each x[i] is zeroed
// with probability p and the others multiplied by 1/(1-p), so that the expected value is
// unchanged. keep (len(x) entries) receives the mask, 1 for a kept element, for DropoutBackward.
//
// The mask is drawn from a PCG generator named by (seed, stream): the same pair gives the same
// mask on any machine and any number of goroutines. The encoder uses streams below
// HeadDropoutStream; a task head that drops out its input (the classifier of a fine-tuning
// head) uses HeadDropoutStream and above.
func Dropout(x []float32, keep []uint8, p float64, seed, stream uint64) {
	keep = keep[:len(x)]
	switch {
	case p <= 0:
		for i := range keep {
			keep[i] = 1
		}
		return
	case p >= 1: // torch: all zero
		clear(x)
		clear(keep)
		return
	}
	// Compare 32-bit draws with p·2³²: two decisions from each 64-bit draw, the low half
	// first (tensor.PCGKeep: the draws of dropoutState's generator, eight generators
	// interleaved with AVX-512). Then the mask is applied in vector code (tensor.MaskScale: a
	// dropped element's bits masked to +0), the same bits as a product. BenchmarkDropout, a
	// Mini hidden state: 390 -> 288 µs forward with MaskScale, 102 -> 11 µs backward;
	// BenchmarkPCGKeep, its mask: 260 µs with math/rand/v2's PCG a draw at a time, 44 µs.
	hi, lo := dropoutState(seed, stream)
	tensor.PCGKeep(keep, hi, lo, uint32(p*(1<<32)))
	tensor.MaskScale(x, x, keep, float32(1/(1-p)))
}

// DropoutBackward applies the mask of Dropout to a gradient in place: dx[i] *= keep[i]/(1-p).
func DropoutBackward(dx []float32, keep []uint8, p float64) { dropoutBackwardTo(dx, dx, keep, p) }

// dropoutBackwardTo is DropoutBackward from dy into dx [len(dy)] (which may be dy itself):
// dx[i] = dy[i]·keep[i]/(1-p). A layer's backward that needs the gradient both before and
// after the mask (the residual branch, and the branch through the dense layer) writes the
// masked one beside the other instead of copying it first.
func dropoutBackwardTo(dx, dy []float32, keep []uint8, p float64) {
	dy = dy[:len(dx)]
	switch {
	case p <= 0:
		copy(dx, dy)
		return
	case p >= 1:
		clear(dx)
		return
	}
	keep = keep[:len(dx)]
	scale := float32(1 / (1 - p))
	if len(dx) < dropoutParallelMin {
		tensor.MaskScale(dx, dy, keep, scale)
		return
	}
	// Element by element: any split over the processors gives the same bits.
	tensor.ParallelFor(len(dx), func(lo, hi int) { tensor.MaskScale(dx[lo:hi], dy[lo:hi], keep[lo:hi], scale) })
}

// dropoutParallelMin is the smallest gradient that DropoutBackward splits over goroutines (a
// hidden state of BERT-Mini's 128 tokens).
const dropoutParallelMin = 1 << 15

// HeadDropoutStream is the first dropout stream (see Dropout) that the encoder never uses.
const HeadDropoutStream uint64 = 1 << 62

// Dropout sites of the encoder, the high byte of their streams.
const (
	siteEmbeddings = iota + 1 // BertEmbeddings: after the LayerNorm
	siteAttnProbs             // BertSelfAttention: on the attention probabilities
	siteAttnOutput            // BertSelfOutput: after the dense, before the residual
	siteFFNOutput             // BertOutput: after the dense, before the residual
)

// dropoutStream names the stream of one dropout site: layer l, and index i within the site
// (the sequence, or the (sequence, head) pair for attention probabilities).
func dropoutStream(site, l, i int) uint64 {
	return uint64(site)<<56 | uint64(l)<<32 | uint64(uint32(i))
}

// dropoutState returns the state of the generator of (seed, stream): math/rand/v2's PCG as
// rand.NewPCG(hi, lo) starts it. Both words go through the splitmix64 finaliser so that
// neighbouring streams do not start from neighbouring states.
func dropoutState(seed, stream uint64) (hi, lo uint64) {
	a := mix64(seed ^ mix64(stream))
	return a, mix64(a ^ stream ^ 0x9e3779b97f4a7c15)
}

func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// dropoutConfig is the dropout of one forward pass; the zero value drops nothing (eval mode).
type dropoutConfig struct {
	hidden, attn float64 // hidden_dropout_prob, attention_probs_dropout_prob
	seed         uint64
}

// dropSequences applies hidden dropout to x [B, S, H] with one stream per sequence, so that
// the sequences can be drawn in parallel, and returns the mask [B*S*H] (nil when p is 0),
// from ar (see arena).
func (d dropoutConfig) dropSequences(ar *arena, x []float32, B int, site, l int) []uint8 {
	if d.hidden <= 0 {
		return nil
	}
	keep := ar.u8(len(x)) // Dropout sets every entry
	n := len(x) / B
	tensor.ParallelFor(B, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			Dropout(x[b*n:(b+1)*n], keep[b*n:(b+1)*n], d.hidden, d.seed, dropoutStream(site, l, b))
		}
	})
	return keep
}
