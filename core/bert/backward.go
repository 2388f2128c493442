package bert

import (
	"fmt"
	"math"
	"runtime"

	"github.com/bertlab/bertlab/core/tensor"
)

// Backward propagates the gradient of a loss with respect to the encoder's outputs through
// the pass that a recorded (ForwardTrain), adding the gradient of every parameter it reaches
// to g. dHidden [B, S, H] is d loss / d last_hidden_state and dPooled [B, H] is
// d loss / d pooler_output; either may be nil (no gradient from there). A task head calls it
// after its own backward: token classification and span heads give dHidden, sequence
// classification dPooled. The model's weights must be those of the forward pass.
//
// As in HF's nn.Embedding(padding_idx=pad_token_id), the word-embedding row of the padding id
// gets no gradient from the lookup, wherever that id appears.
func (m *Model) Backward(a *Activations, dHidden, dPooled *tensor.Tensor, g *Grads) error {
	_, err := m.backward(a, dHidden, dPooled, g, false)
	return err
}

// backward is Backward; with inputs it also returns the gradients with respect to the
// embedding output and the head mask (BackwardInputs).
func (m *Model) backward(a *Activations, dHidden, dPooled *tensor.Tensor, g *Grads, inputs bool) (*InputGrads, error) {
	m.EnsureRaw()
	if err := m.checkActivations(a); err != nil {
		return nil, err
	}
	if err := g.check(m); err != nil {
		return nil, err
	}
	B, S, H, I := a.pass.B, a.pass.S, m.Config.HiddenSize, m.Config.IntermediateSize
	if dHidden != nil && dHidden.Len() != B*S*H {
		return nil, fmt.Errorf("backward: d hidden has shape %s, want [%d,%d,%d]", tensor.ShapeString(dHidden.Shape), B, S, H)
	}
	if dPooled != nil {
		if m.Pooler == nil || a.Pooled == nil {
			return nil, fmt.Errorf("backward: d pooled given, but the model has no pooler")
		}
		if dPooled.Len() != B*H {
			return nil, fmt.Errorf("backward: d pooled has shape %s, want [%d,%d]", tensor.ShapeString(dPooled.Shape), B, H)
		}
	}
	actB, err := activationBackward(m.Config.HiddenAct)
	if err != nil {
		return nil, err
	}
	n := B * S * H
	// Every buffer but dy (and the head mask's) is written in full before it is read.
	ar := &g.work
	ar.reset()
	ws := &workspace{
		dy: ar.f32(n), dx: ar.f32(n), t1: ar.f32(n), t2: ar.f32(n),
		dq: ar.f32(n), dk: ar.f32(n), dv: ar.f32(n), dg: ar.f32(B * S * I),
	}
	if inputs && a.pass.headMask != nil {
		ws.dHeadMask = make([]float32, len(a.pass.headMask))
	}
	if m.Config.Relative() {
		ws.dqr = ar.f32(B * S * m.Config.NumAttentionHeads * (2*S - 1))
		if m.Config.PositionEmbeddingType == PositionRelativeKeyQuery {
			ws.dkr = ar.f32(len(ws.dqr))
		}
	}
	if dHidden != nil {
		copy(ws.dy, dHidden.Data)
	} else {
		clear(ws.dy)
	}
	if dPooled != nil {
		m.poolerBackward(a, dPooled.Data, ws.dy, g.g)
	}
	ws.rel = m.newRelBackward(a.pass)
	for l := m.NumBlocks() - 1; l >= 0; l-- {
		m.layerBackward(l, a, ws, actB, g.g)
		ws.dy, ws.dx = ws.dx, ws.dy
	}
	if ws.rel != nil {
		m.relEmbBackward(ws.rel, g.g)
	}
	var in *InputGrads
	if inputs {
		in = &InputGrads{Embeddings: &tensor.Tensor{Shape: []int{B, S, H}, Data: append([]float32(nil), ws.dy...)}}
		if ws.dHeadMask != nil {
			in.HeadMask = &tensor.Tensor{Shape: []int{m.NumBlocks(), m.Config.NumAttentionHeads}, Data: ws.dHeadMask}
		}
	}
	if a.pass.emb == nil { // else the pass did not use the embedding parameters
		m.embedBackward(a, ws.dy, ws.t1, g.g)
	}
	return in, nil
}

// workspace holds the gradient buffers of one Backward, reused by every layer.
type workspace struct {
	dy, dx     []float32 // d block output (read), d block input (written): [B*S*H]
	t1, t2     []float32 // scratch [B*S*H]
	dq, dk, dv []float32 // d projections [B*S*H]
	dg         []float32 // d intermediate [B*S*I]
	dHeadMask  []float32 // d head mask [L*A], when BackwardInputs asks for it; else nil
	// With relative positions, d loss / d (Q_h·relᵀ) and d (K_h·relᵀ) of every pair (see
	// relativeBackward), rows (b, s, h): [B, S, A, 2S−1]; dkr nil for relative_key.
	dqr, dkr []float32
	// rel is DeBERTa's relative embeddings' backward, shared by the layers; nil otherwise.
	rel *relBackward
}

// poolerBackward adds the gradient of the pooler (tanh(dense(h[:, 0]))) to g and its
// d h[:, 0] to dh [B, S, H], given dPooled [B, H].
func (m *Model) poolerBackward(a *Activations, dPooled, dh []float32, g *Model) {
	B, S, H := a.pass.B, a.pass.S, m.Config.HiddenSize
	dz := make([]float32, B*H)
	tensor.TanhBackward(dz, dPooled, a.Pooled.Data)
	// The first tokens are rows b·S of the hidden states: stride S·H, no copy.
	tensor.Gemm(true, false, H, H, B, 1, dz, H, a.Hidden.Data, S*H, 1, g.Pooler.W.Data, H)
	tensor.SumRows(g.Pooler.B.Data, dz, H)
	tensor.Gemm(false, false, B, H, H, 1, dz, H, m.Pooler.W.Data, H, 1, dh, S*H)
}

// layerBackward is the backward of layer: from ws.dy (d output of block l) it writes ws.dx
// (d input) and adds the block's parameter gradients to g.
func (m *Model) layerBackward(l int, a *Activations, ws *workspace, actB actBackward, g *Model) {
	c := m.Config
	B, S := a.pass.B, a.pass.S
	H, A, I := c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize
	d := H / A
	rows := B * S
	// Blocks that share a layer (ALBERT) add their gradients to the same one.
	L, G, la := m.Block(l), g.Block(l), &a.layers[l]
	drop := a.pass.drop

	// out = LayerNorm(attnOut + dropout(dense(inter))). d attnOut (da) starts as the gradient
	// of the LayerNorm's input (the residual branch), the feed-forward branch added below; the
	// dense layer's output gets it through the dropout mask (dsum).
	da := ws.t1
	tensor.LayerNormBackward(da, G.OutLN.W.Data, G.OutLN.B.Data, ws.dy, la.sum2.Data, L.OutLN.W.Data, la.mean2, la.rstd2, H)
	dsum := da
	if la.keep2 != nil {
		dsum = ws.t2
		dropoutBackwardTo(dsum, da, la.keep2, drop.hidden)
	}
	tensor.LinearBackward(ws.dg, G.Out.W.Data, G.Out.B.Data, dsum, la.Intermediate.Data, L.Out.W.Data, rows, I, H, 0)
	tensor.ParallelFor(rows, func(lo, hi int) {
		r := ws.dg[lo*I : hi*I]
		if a.pass.actDeriv != nil {
			tensor.Mul(r, r, la.pre.Data[lo*I:hi*I]) // dy·act'(x), the derivative kept by the forward
			return
		}
		actB(r, r, la.pre.Data[lo*I:hi*I], la.Intermediate.Data[lo*I:hi*I])
	})
	tensor.LinearBackward(da, G.Inter.W.Data, G.Inter.B.Data, ws.dg, la.AttentionOutput.Data, L.Inter.W.Data, rows, H, I, 1)

	// attnOut = LayerNorm(x + dropout(dense(ctx))): d x starts as the LayerNorm input's
	// gradient (the residual branch), Q, K and V's added at the end.
	tensor.LayerNormBackward(ws.dx, G.AttnLN.W.Data, G.AttnLN.B.Data, da, la.sum1.Data, L.AttnLN.W.Data, la.mean1, la.rstd1, H)
	dsum = ws.dx
	if la.keep1 != nil {
		dsum = ws.t2
		dropoutBackwardTo(dsum, ws.dx, la.keep1, drop.hidden)
	}
	dctx := ws.t1
	tensor.LinearBackward(dctx, G.AttnOut.W.Data, G.AttnOut.B.Data, dsum, la.Context.Data, L.AttnOut.W.Data, rows, H, H, 0)
	headMaskBackward(a.pass.headMask, l, A, la, dctx, ws.dHeadMask)

	// ctx_h = dropout(softmax(scale·(Q_h K_hᵀ + relative terms) + mask)) · V_h, one (sequence,
	// head) pair at a time.
	scale := float32(1 / math.Sqrt(float64(d)))
	var db *disBackward // DeBERTa's relative terms
	if dc := c.Disentangled; dc != nil {
		scale = float32(1 / math.Sqrt(float64(d*dc.ScaleFactor())))
		if ws.rel != nil {
			db = m.newDisBackward(L, a.pass, B*A)
		}
	}
	var rel []float32 // the distance window of relative positions: [2S−1, d]
	if L.Distance != nil {
		rel = distanceWindow(L.Distance, c.MaxPositionEmbeddings, S)
	}
	tensor.ParallelFor(B*A, func(lo, hi int) {
		// Work buffers kept between steps (workBufs), every value written before it is read.
		hDP, dp := workBuf(S * S)
		var dropped []float32
		var hDrop *[]float32
		if la.keepP != nil {
			hDrop, dropped = workBuf(S * S)
		}
		defer putWorkBufs(hDP, hDrop)
		for bh := lo; bh < hi; bh++ {
			bi, hd := bh/A, bh%A
			off := bi*S*H + hd*d
			pr := la.probs.Data[bh*S*S : (bh+1)*S*S]
			src := pr
			var keep []uint8
			if la.keepP != nil {
				keep = la.keepP[bh*S*S : (bh+1)*S*S]
				applyKeep(dropped, pr, keep, drop.attn)
				src = dropped
			}
			// d(dropped probs) [S, S] = dctx_h · V_hᵀ; dV_h [S, d] = (dropped probs)ᵀ · dctx_h.
			tensor.Gemm(false, true, S, S, d, 1, dctx[off:], H, la.Value.Data[off:], H, 0, dp, S)
			tensor.Gemm(true, false, S, d, S, 1, src, S, dctx[off:], H, 0, ws.dv[off:], H)
			if keep != nil {
				DropoutBackward(dp, keep, drop.attn)
			}
			tensor.SoftmaxBackward(dp, dp, pr, S) // now d scores
			if a.distil != nil {
				a.distil.addGrad(l, bh, A, a.batch.AttentionMask, dp, pr, S)
			}
			if rel == nil && db == nil {
				// scale·dp once, then products with alpha 1: Gemm reads A where it lies
				// instead of packing scale·dp (or its transpose) for each. The same factors,
				// so the same bits.
				tensor.Scale(dp, scale)
				tensor.Gemm(false, false, S, d, S, 1, dp, S, la.Key.Data[off:], H, 0, ws.dq[off:], H)
				tensor.Gemm(true, false, S, d, S, 1, dp, S, la.Query.Data[off:], H, 0, ws.dk[off:], H)
				continue
			}
			tensor.Gemm(false, false, S, d, S, scale, dp, S, la.Key.Data[off:], H, 0, ws.dq[off:], H)
			tensor.Gemm(true, false, S, d, S, scale, dp, S, la.Query.Data[off:], H, 0, ws.dk[off:], H)
			if rel != nil {
				relativeBackward(dp, rel, ws, (bi*S*A+hd)*(2*S-1), A*(2*S-1), off, H, S, d, scale)
			}
			if db != nil {
				db.pair(dp, bh, off, H, S, d, scale, ws)
			}
		}
	})
	if db != nil {
		db.finish(L, G, la.Query.Data, la.Key.Data, B, S, A, d, scale, ws.rel)
	}
	if rel != nil {
		// d rel [2S−1, d] = scale·(DQRᵀ·Q + DKRᵀ·K), summed over every pair at once: DQR's rows
		// (b, s, h) are those of Q viewed as [B·S·A, d].
		W := 2*S - 1
		dRel := distanceWindow(G.Distance, c.MaxPositionEmbeddings, S)
		tensor.Gemm(true, false, W, d, B*S*A, scale, ws.dqr, W, la.Query.Data, d, 1, dRel, d)
		if ws.dkr != nil {
			tensor.Gemm(true, false, W, d, B*S*A, scale, ws.dkr, W, la.Key.Data, d, 1, dRel, d)
		}
	}

	x := la.x.Data
	tensor.LinearBackward(ws.dx, G.Query.W.Data, G.Query.B.Data, ws.dq, x, L.Query.W.Data, rows, H, H, 1)
	tensor.LinearBackward(ws.dx, G.Key.W.Data, G.Key.B.Data, ws.dk, x, L.Key.W.Data, rows, H, H, 1)
	tensor.LinearBackward(ws.dx, G.Value.W.Data, G.Value.B.Data, ws.dv, x, L.Value.W.Data, rows, H, H, 1)
}

// relativeBackward is the backward of addRelativeScores for one (sequence, head) pair, given
// ds [S, S], d loss / d the scaled scores. The raw score of query l and key j holds
// QR[l, l−j+S−1] (and KR[j, l−j+S−1]) with QR = Q_h·relᵀ, KR = K_h·relᵀ, [S, 2S−1]: their
// gradients DQR and DKR are ds scattered to those places, zero elsewhere. They go to ws.dqr
// (ws.dkr) at offset base with row stride ld, for the distance embeddings' gradient that
// layerBackward forms from all pairs, and d Q_h += scale·DQR·rel, d K_h += scale·DKR·rel
// (ws.dq, ws.dk at off, row stride H).
func relativeBackward(ds, rel []float32, ws *workspace, base, ld, off, H, S, d int, scale float32) {
	W := 2*S - 1
	dqr := ws.dqr[base:]
	for l := 0; l < S; l++ {
		row := dqr[l*ld : l*ld+W]
		clear(row)
		// Query l meets keys S−1 .. 0 at columns l .. l+S−1.
		dst := row[l : l+S]
		for j, v := range ds[l*S : (l+1)*S] {
			dst[S-1-j] = v
		}
	}
	tensor.Gemm(false, false, S, d, W, scale, dqr, ld, rel, d, 1, ws.dq[off:], H)
	if ws.dkr == nil {
		return
	}
	dkr := ws.dkr[base:]
	for j := 0; j < S; j++ {
		clear(dkr[j*ld : j*ld+W])
	}
	for l := 0; l < S; l++ {
		for j, v := range ds[l*S : (l+1)*S] {
			dkr[j*ld+l-j+S-1] = v
		}
	}
	tensor.Gemm(false, false, S, d, W, scale, dkr, ld, rel, d, 1, ws.dk[off:], H)
}

// applyKeep sets dst to src with a dropout mask applied, as Dropout computed it.
func applyKeep(dst, src []float32, keep []uint8, p float64) {
	tensor.MaskScale(dst, src, keep, float32(1/(1-p)))
}

// embedBackward is the backward of embed: from dh (d embedding output [B, S, H], changed in
// place) it adds the gradients of the LayerNorm and of the looked-up rows to g. tmp holds
// B·S·H values.
func (m *Model) embedBackward(a *Activations, dh, tmp []float32, g *Model) {
	c := m.Config
	b := a.batch
	H := c.EmbDim()
	ea := &a.emb
	if c.Disentangled != nil && b.AttentionMask != nil {
		// DeBERTa zeroed the padding rows of the embeddings: they pass no gradient.
		for i, v := range b.AttentionMask {
			if v == 0 {
				clear(dh[i*c.HiddenSize : (i+1)*c.HiddenSize])
			}
		}
	}
	if m.EmbProj != nil {
		// h = projIn·Wᵀ + b: dh [B, S, hidden] becomes d projIn [B, S, E].
		n, E := b.B*b.S, c.EmbDim()
		dIn := make([]float32, n*E)
		tensor.LinearBackward(dIn, g.EmbProj.W.Data, g.EmbProj.B.Data, dh, ea.projIn.Data, m.EmbProj.W.Data, n, E, c.HiddenSize, 0)
		dh, tmp = dIn, make([]float32, n*E)
	}
	if ea.keep != nil {
		DropoutBackward(dh, ea.keep, a.pass.drop.hidden)
	}
	tensor.LayerNormBackward(tmp, g.EmbLN.W.Data, g.EmbLN.B.Data, dh, ea.sum.Data, m.EmbLN.W.Data, ea.mean, ea.rstd, H)
	var posIDs []int // nil: position i mod S
	if c.Family.Is(FamilyRoBERTa) {
		posIDs = make([]int, b.B*b.S)
		c.PositionIDs(posIDs, b.InputIDs, b.S)
	}
	// The rows are added token by token, in order (a word's row sums its tokens' gradients in
	// the same order on any number of threads); goroutine t of parts takes the rows whose
	// index is t modulo parts, whole, in each of the three tables (split by columns instead,
	// every goroutine waited on a cache miss for every token's rows).
	parts := runtime.GOMAXPROCS(0)
	tensor.ParallelFor(parts, func(lo, hi int) {
		mine := func(r int) bool { return r%parts >= lo && r%parts < hi }
		add := func(dst, src []float32) { tensor.Add(dst, dst, src) }
		for i := 0; i < b.B*b.S; i++ {
			row := tmp[i*H : (i+1)*H]
			if id := b.InputIDs[i]; id != c.PadTokenID && mine(id) {
				add(g.WordEmb.Row(id), row)
			}
			if g.TypeEmb != nil {
				t := 0
				if b.TokenTypeIDs != nil {
					t = b.TokenTypeIDs[i]
				}
				if mine(t) {
					add(g.TypeEmb.Row(t), row)
				}
			}
			if !c.Relative() && g.PosEmb != nil { // relative positions add no position embedding: it gets no gradient
				pid := i % b.S
				if posIDs != nil {
					pid = posIDs[i]
				}
				// RoBERTa's position embeddings have padding_idx: a pad's row gets no gradient.
				if (posIDs == nil || pid != c.PadTokenID) && mine(pid) {
					add(g.PosEmb.Row(pid), row)
				}
			}
		}
	})
}

// actBackward is the backward of a hidden_act: dx = dy · act'(x), given the activation's
// input x and output y (dx may alias dy).
type actBackward func(dx, dy, x, y []float32)

// activationBackward returns the backward of the activation that activation(name) returns.
func activationBackward(name string) (actBackward, error) {
	switch name {
	case "gelu", "gelu_python":
		return func(dx, dy, x, _ []float32) { tensor.GELUBackward(dx, dy, x) }, nil
	case "gelu_new", "gelu_pytorch_tanh", "gelu_fast":
		return func(dx, dy, x, _ []float32) { tensor.GELUTanhBackward(dx, dy, x) }, nil
	case "relu":
		return func(dx, dy, x, _ []float32) { tensor.ReLUBackward(dx, dy, x) }, nil
	case "tanh":
		return func(dx, dy, _, y []float32) { tensor.TanhBackward(dx, dy, y) }, nil
	case "silu", "swish":
		return func(dx, dy, x, _ []float32) { siluBackward(dx, dy, x) }, nil
	}
	if _, err := activation(name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("hidden_act %q has no backward", name)
}

// siluBackward: silu'(x) = σ(x)·(1 + x·(1 - σ(x))).
func siluBackward(dx, dy, x []float32) {
	x = x[:len(dx)]
	dy = dy[:len(dx)]
	for i, v := range x {
		u := float64(v)
		s := 1 / (1 + math.Exp(-u))
		dx[i] = dy[i] * float32(s*(1+u*(1-s)))
	}
}
