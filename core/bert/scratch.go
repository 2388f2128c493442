package bert

import (
	"sync"

	"github.com/bertlab/bertlab/core/tensor"
)

// The scratch buffers of an eval pass, indices into scratch.bufs.
const (
	// bufHidden0 and bufHidden1 hold the hidden states between blocks, [B, S, H]: the
	// embeddings are formed in bufHidden0 and block l's output in bufHidden0 + (l+1)%2, so a
	// block reads one and writes the other.
	bufHidden0 = iota
	bufHidden1
	bufQ // the projections: [B, S, H]
	bufK
	bufV
	bufProbs  // the attention scores, then probabilities: [B, A, S, S]
	bufCtx    // probabilities · V, heads merged: [B, S, H]
	bufProj   // the attention output dense, then the first residual sum and LayerNorm: [B, S, H]
	bufPre    // the intermediate dense, then its activation: [B, S, I]
	bufMLMIn  // the rows the MLM head reads, when not all: [R, H]
	bufMLMPre // the MLM transform: dense, activation, LayerNorm: [n, H]
	numBufs
)

// scratch holds the intermediates of one eval-mode Forward without trace, reused by every
// block of the pass and, through scratches, by later passes: after a first pass of a shape,
// a pass whose intermediates fit the buffers (that shape, or a smaller one) allocates only
// its outputs. Nothing in a scratch is handed to the caller.
type scratch struct {
	bufs [numBufs]scratchTensor
	mask []float32 // the pass's additive attention mask: [B, S]
	pass pass
	// The jobs that ParallelFor runs, with their method values bound once (a method value
	// made per call would be allocated).
	attn      attention
	attnHeads func(lo, hi int) // attn.heads
	act       activate
	actRows   func(lo, hi int) // act.rows
	emb       embedSum
	embRows   func(lo, hi int) // emb.rows
}

// scratchTensor is one reusable tensor of a scratch.
type scratchTensor struct {
	t     tensor.Tensor
	shape [4]int
}

// get returns the buffer as a tensor of the given shape (at most 4 dimensions), growing its
// storage when it is too small. The elements hold whatever an earlier pass left there.
func (s *scratchTensor) get(shape ...int) *tensor.Tensor {
	s.t.Data = growFloats(s.t.Data, tensor.NumElements(shape))
	s.t.Shape = s.shape[:copy(s.shape[:], shape)]
	return &s.t
}

// growFloats returns s with length n, reusing its storage when it is large enough.
func growFloats(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// bytes is the memory the scratch's buffers hold.
func (sc *scratch) bytes() int {
	n := cap(sc.mask)
	for i := range sc.bufs {
		n += cap(sc.bufs[i].t.Data)
	}
	return 4 * n
}

// maxIdleScratchBytes bounds the memory that idle scratches keep between passes: a scratch
// that would exceed it (one very large batch) is left to the garbage collector.
const maxIdleScratchBytes = 256 << 20

// scratchList keeps idle scratches for later passes. Unlike a sync.Pool it is not emptied by
// the garbage collector, so a steady workload allocates no new ones; concurrent passes (the
// API server's) each take their own. It holds as many as were in use at once, up to
// maxIdleScratchBytes together.
type scratchList struct {
	mu        sync.Mutex
	idle      []*scratch
	idleBytes int
}

// scratches are the idle scratches of every model's eval passes: a scratch holds no weights,
// only buffers sized for the last shapes it served, so any model's pass can use any of them.
var scratches scratchList

// get returns an idle scratch, or a new one.
func (l *scratchList) get() *scratch {
	l.mu.Lock()
	if n := len(l.idle); n > 0 {
		sc := l.idle[n-1]
		l.idle[n-1] = nil
		l.idle = l.idle[:n-1]
		l.idleBytes -= sc.bytes()
		l.mu.Unlock()
		return sc
	}
	l.mu.Unlock()
	sc := new(scratch)
	sc.attnHeads = sc.attn.heads
	sc.actRows = sc.act.rows
	sc.embRows = sc.emb.rows
	return sc
}

// put returns sc, which its pass no longer uses, to the idle list (or to the garbage
// collector, past maxIdleScratchBytes).
func (l *scratchList) put(sc *scratch) {
	n := sc.bytes()
	l.mu.Lock()
	if l.idleBytes+n <= maxIdleScratchBytes {
		l.idle = append(l.idle, sc)
		l.idleBytes += n
	}
	l.mu.Unlock()
}

// workBufs keeps the float32 buffers in which each goroutine of a training pass's attention
// works on its (sequence, head) pairs: the dropped probabilities [S, S] in the forward, their
// gradient and the dropped probabilities again in the backward. Made fresh for every layer and
// goroutine (half a megabyte a step for BERT-Tiny at 8 x 128), they grew the heap between
// collections into memory it had not used; kept, with the decoder's bias sums (tensor), Tiny's
// step on two threads ran a median 7% faster, on one 1% (bertbench train, the binaries before
// and after alternating, ten rounds).
var workBufs = tensor.FreeList[[]float32]{
	New:     func() *[]float32 { return new([]float32) },
	MaxIdle: func() int { return maxIdleWorkBufs },
}

// maxIdleWorkBufs bounds the buffers workBufs keeps: a few per processor.
const maxIdleWorkBufs = 16

// workBuf returns a buffer of n floats from workBufs, holding whatever its last user left, and
// its handle, to give back with workBufs.Put once the buffer is no longer read or written.
func workBuf(n int) (handle *[]float32, buf []float32) {
	handle = workBufs.Get()
	*handle = growFloats(*handle, n)
	return handle, *handle
}

// putWorkBufs gives the buffers of the handles that are not nil back to workBufs.
func putWorkBufs(handles ...*[]float32) {
	for _, h := range handles {
		if h != nil {
			workBufs.Put(h)
		}
	}
}

// attention returns the attention job of the pass and the function that runs it on a range
// of (sequence, head) pairs: the scratch's, or new ones.
func (p *pass) attention() (*attention, func(lo, hi int)) {
	if p.sc != nil {
		return &p.sc.attn, p.sc.attnHeads
	}
	j := new(attention)
	return j, j.heads
}

// embedSum returns the embedding job of the pass and the function that runs it on a range of
// rows: the scratch's, or new ones.
func (p *pass) embedSum() (*embedSum, func(lo, hi int)) {
	if p.sc != nil {
		return &p.sc.emb, p.sc.embRows
	}
	j := new(embedSum)
	return j, j.rows
}

// activate returns the activation job of the pass and the function that runs it on a range
// of rows: the scratch's, or new ones.
func (p *pass) activate() (*activate, func(lo, hi int)) {
	if p.sc != nil {
		return &p.sc.act, p.sc.actRows
	}
	j := new(activate)
	return j, j.rows
}

// activate applies an activation in place to rows of x [rows, width], or, with src, sets
// x = act(src).
type activate struct {
	act func([]float32)
	x   []float32
	src []float32 // if not nil, the activation's input [rows, width]
	// deriv, with src, sets x = act(src) and src = act'(src) in one pass, in place of act.
	deriv func(y, d, x []float32)
	width int
}

// activateBlock is how many values rows copies from src at a time (32 KiB): the activation
// then runs on them while they are in the L1 cache, rather than on the whole range after the
// copy has pushed its start out of cache.
const activateBlock = 8192

// rows applies the activation to rows [lo, hi).
func (j *activate) rows(lo, hi int) {
	x := j.x[lo*j.width : hi*j.width]
	if j.src == nil {
		j.act(x)
		return
	}
	src := j.src[lo*j.width : hi*j.width]
	if j.deriv != nil {
		j.deriv(x, src, src) // element-wise: any split gives the same bits
		return
	}
	// Element-wise: any split gives the same bits.
	for i := 0; i < len(x); i += activateBlock {
		e := min(i+activateBlock, len(x))
		copy(x[i:e], src[i:e])
		j.act(x[i:e])
	}
}
