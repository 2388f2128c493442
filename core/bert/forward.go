package bert

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/tensor"
)

// MaskValue is what HF adds to the attention scores of masked keys: torch.finfo(float32).min.
const MaskValue = -math.MaxFloat32

// Batch is a padded batch of B sequences of S tokens, each slice row-major [B, S].
type Batch struct {
	B, S          int
	InputIDs      []int
	TokenTypeIDs  []int // nil: all 0; ignored by a model without token types (DistilBERT)
	AttentionMask []int // nil: all 1; 1 = attend, 0 = padding
}

// Options choose what Forward computes beyond the encoder.
type Options struct {
	// MLM computes the masked-LM logits (needs the MLM head).
	MLM bool
	// MLMRows, if not nil, restricts the MLM logits to these flattened positions b*S+s
	// (fill-mask needs only the masked ones); Output.MLMLogits is then [len(MLMRows), V].
	MLMRows []int
	// NSP computes the next-sentence logits (needs the pooler and the NSP head).
	NSP bool
	// RTD computes ELECTRA's replaced-token logits (needs the RTD head).
	RTD bool
	// Trace records every layer's hidden states and attention probabilities and the
	// per-operation intermediates of every layer.
	Trace bool
	// HeadMask, if not nil, is HF's head_mask [L, A], layer-major: the attention probabilities
	// of head h in layer l are multiplied by HeadMask[l*A+h] (0 switches the head off, 1 keeps
	// it). The trace's Attentions stay the probabilities before the mask.
	HeadMask []float32
	// MLMInto, if its capacity holds the MLM logits, is where Output.MLMLogits is written
	// instead of a fresh allocation: a caller that runs the head again and again (a benchmark,
	// a server) reuses one buffer rather than having the runtime clear and fault in tens of
	// megabytes each call (146 rows x 30,522 words are 17.8 MB).
	MLMInto []float32
}

// Output is what Forward returns.
type Output struct {
	Hidden    *tensor.Tensor // last_hidden_state: [B, S, H]
	Pooled    *tensor.Tensor // pooler_output: [B, H]; nil without a pooler
	MLMLogits *tensor.Tensor // prediction_logits: [B, S, V] (or [len(MLMRows), V]); nil unless asked
	NSPLogits *tensor.Tensor // seq_relationship_logits: [B, 2]; nil unless asked
	RTDLogits *tensor.Tensor // ELECTRA's discriminator logits, one a token: [B, S]; nil unless asked
	Trace     *Trace         // nil unless asked
}

// Trace holds the numbers inside the model, as HF's output_hidden_states and
// output_attentions give them plus every intermediate of a layer (for the step-through view).
type Trace struct {
	// Embedding parts before their sum: word, position and token-type rows looked up, [B, S, H] each.
	// With relative positions nothing is added for the position: PosEmb is zeros.
	WordEmb, PosEmb, TypeEmb *tensor.Tensor
	// EmbSum is word + type + position before the embedding LayerNorm: [B, S, E] (E =
	// Config.EmbDim()).
	EmbSum *tensor.Tensor
	// Embeddings is the embedding LayerNorm's output before the projection to the hidden size
	// (ALBERT's embedding_hidden_mapping_in): [B, S, E]; nil without a projection, where it is
	// HiddenStates[0].
	Embeddings *tensor.Tensor
	// HiddenStates[0] is the embedding output (after the projection, if any), HiddenStates[l+1]
	// the output of block l: [B, S, H].
	HiddenStates []*tensor.Tensor
	// Attentions[l] are layer l's attention probabilities after softmax: [B, A, S, S].
	Attentions []*tensor.Tensor
	// Layers[l] holds block l's intermediates.
	Layers []LayerTrace
	// MLMTransform is the MLM head's transform output (dense, act, LayerNorm): [B, S, E] or [R, E].
	MLMTransform *tensor.Tensor
}

// LayerTrace holds one layer's intermediates, in the order the layer computes them.
type LayerTrace struct {
	Query, Key, Value *tensor.Tensor // projections before the head split: [B, S, H]
	Scores            *tensor.Tensor // QKᵀ/√d (plus the relative terms, see Layer.Distance) before the mask: [B, A, S, S]
	Context           *tensor.Tensor // probabilities · V, heads merged: [B, S, H]
	AttnProj          *tensor.Tensor // output dense of the context, before the residual: [B, S, H]
	AttentionOutput   *tensor.Tensor // LayerNorm(AttnProj + input): [B, S, H]
	Intermediate      *tensor.Tensor // act(dense): [B, S, I]
	FFNOut            *tensor.Tensor // output dense, before the residual: [B, S, H]

	// C2P and P2C are DeBERTa's content-to-position and position-to-content terms of Scores, as
	// scaled there: [B, A, S, S]; nil for the other families (and without the term).
	C2P, P2C *tensor.Tensor
}

// Validate checks the batch against the model's config: lengths, id ranges, sequence length.
func (b Batch) Validate(c Config) error {
	if b.B <= 0 || b.S <= 0 {
		return fmt.Errorf("batch: empty shape [%d, %d]", b.B, b.S)
	}
	if b.S > c.MaxSequenceLength() {
		if c.MaxSequenceLength() != c.MaxPositionEmbeddings {
			return fmt.Errorf("batch: sequence length %d exceeds %d (max_position_embeddings %d less pad_token_id+1: %s counts positions from there)",
				b.S, c.MaxSequenceLength(), c.MaxPositionEmbeddings, c.Family.Name())
		}
		return fmt.Errorf("batch: sequence length %d exceeds max_position_embeddings %d", b.S, c.MaxPositionEmbeddings)
	}
	n := b.B * b.S
	if len(b.InputIDs) != n {
		return fmt.Errorf("batch: input_ids has %d entries, shape [%d, %d] needs %d", len(b.InputIDs), b.B, b.S, n)
	}
	for i, id := range b.InputIDs {
		if id < 0 || id >= c.VocabSize {
			return fmt.Errorf("batch: input_ids[%d][%d] = %d outside the vocabulary of %d", i/b.S, i%b.S, id, c.VocabSize)
		}
	}
	// A model without token types (DistilBERT) ignores them, as HF's DistilBERT does by never
	// receiving any: its tokenizer makes none, where ours makes them for every model.
	if b.TokenTypeIDs != nil && c.HasTokenTypes() {
		if len(b.TokenTypeIDs) != n {
			return fmt.Errorf("batch: token_type_ids has %d entries, need %d", len(b.TokenTypeIDs), n)
		}
		for i, t := range b.TokenTypeIDs {
			if t < 0 || t >= c.TypeVocabSize {
				return fmt.Errorf("batch: token_type_ids[%d][%d] = %d outside type_vocab_size %d", i/b.S, i%b.S, t, c.TypeVocabSize)
			}
		}
	}
	if b.AttentionMask != nil {
		if len(b.AttentionMask) != n {
			return fmt.Errorf("batch: attention_mask has %d entries, need %d", len(b.AttentionMask), n)
		}
		for i, v := range b.AttentionMask {
			if v != 0 && v != 1 {
				return fmt.Errorf("batch: attention_mask[%d][%d] = %d, want 0 or 1", i/b.S, i%b.S, v)
			}
		}
	}
	return nil
}

// Forward runs the model in eval mode (no dropout) on a batch. It may be called from several
// goroutines at once. The Output and its tensors are the caller's; without Trace the
// intermediates live in buffers that later calls reuse, so that a call after a first one of
// its shape allocates little more than its outputs.
func (m *Model) Forward(b Batch, opt Options) (*Output, error) {
	c := m.Config
	if err := b.Validate(c); err != nil {
		return nil, err
	}
	if opt.MLM && m.MLM == nil {
		return nil, fmt.Errorf("forward: the model has no MLM head (cls.predictions)")
	}
	if opt.NSP && (m.NSP == nil || m.Pooler == nil) {
		return nil, fmt.Errorf("forward: the model has no NSP head (cls.seq_relationship and bert.pooler)")
	}
	if opt.RTD && m.RTD == nil {
		return nil, fmt.Errorf("forward: the model has no replaced-token head (discriminator_predictions)")
	}
	for _, r := range opt.MLMRows {
		if r < 0 || r >= b.B*b.S {
			return nil, fmt.Errorf("forward: MLM row %d outside the batch of %d positions", r, b.B*b.S)
		}
	}
	if err := m.checkHeadMask(opt.HeadMask); err != nil {
		return nil, fmt.Errorf("forward: %w", err)
	}
	// Without the trace nothing of the pass outlives it but the outputs: its intermediates
	// live in a scratch that later passes reuse.
	var sc *scratch
	if !opt.Trace {
		sc = scratches.get()
	}
	p, err := m.newPass(b, dropoutConfig{}, sc)
	if err != nil {
		if sc != nil {
			scratches.put(sc)
		}
		return nil, err
	}
	p.headMask = opt.HeadMask
	B, H := b.B, c.HiddenSize
	var tr *Trace
	if opt.Trace {
		tr = &Trace{}
	}

	h := m.encode(b, p, tr, nil)
	if sc != nil {
		h = h.Clone() // the caller owns the outputs; the scratch's buffers are reused
	}
	out := &Output{Hidden: h, Trace: tr}
	if m.Pooler != nil {
		out.Pooled = m.pool(h, B, b.S)
	}
	if opt.MLM {
		out.MLMLogits = m.mlmLogits(h, B, b.S, opt.MLMRows, p, tr, opt.MLMInto)
	}
	if opt.NSP {
		out.NSPLogits = tensor.New(B, 2)
		tensor.Linear(out.NSPLogits.Data, out.Pooled.Data, m.NSP.W.Data, m.NSP.B.Data, B, H, 2)
	}
	if opt.RTD {
		out.RTDLogits = m.rtdLogits(h, B, b.S, p)
	}
	if sc != nil {
		// Not deferred: after a panic, goroutines of the pass may still write to the scratch.
		scratches.put(sc)
	}
	return out, nil
}

// pass holds what every part of one forward pass shares.
type pass struct {
	B, S int
	mask []float32 // HF's extended attention mask: 0 for attended keys, finfo.min for padding. [B, S]
	act  func([]float32)
	// actDeriv, when not nil, sets y = act(x) and d = act'(x) (activationWithDerivative): a
	// training pass keeps d in place of the activation's input.
	actDeriv func(y, d, x []float32)
	// mlmAct is the MLM head's activation (Config.MLMAct).
	mlmAct func([]float32)
	eps    float32
	drop   dropoutConfig // zero in eval mode
	// sc, when not nil, provides the intermediates (see buf): an eval pass without trace.
	sc *scratch
	// headMask is HF's head_mask [L, A]; nil keeps every head (see Options.HeadMask).
	headMask []float32
	// emb, when not nil, is the embedding output the encoder starts from instead of the
	// embeddings of the batch's ids (TrainOptions.Embeddings): [B, S, H].
	emb *tensor.Tensor
	// ar, when not nil, provides a training pass's activations (see arena); else they are
	// new zeroed memory.
	ar *arena
}

// newPass prepares a forward pass over b (already validated) with the given dropout. With
// a scratch sc (eval mode, no trace) the pass and its intermediates live in sc.
func (m *Model) newPass(b Batch, drop dropoutConfig, sc *scratch) (*pass, error) {
	act, err := activation(m.Config.HiddenAct)
	if err != nil {
		return nil, err
	}
	var p *pass
	var mask []float32
	if sc != nil {
		sc.mask = growFloats(sc.mask, b.B*b.S)
		p, mask = &sc.pass, sc.mask
	} else {
		p, mask = new(pass), make([]float32, b.B*b.S)
	}
	for i := range mask {
		mask[i] = 0
		if b.AttentionMask != nil && b.AttentionMask[i] == 0 {
			mask[i] = MaskValue
		}
	}
	mlmAct, err := activation(m.Config.MLMAct())
	if err != nil {
		return nil, err
	}
	*p = pass{B: b.B, S: b.S, mask: mask, act: act, actDeriv: activationWithDerivative(m.Config.HiddenAct),
		mlmAct: mlmAct, eps: float32(m.Config.LayerNormEps), drop: drop, sc: sc}
	return p, nil
}

// buf returns a tensor of the given shape for the pass's intermediate id (one of the scratch
// buffers, bufHidden0 etc.): the scratch's buffer, holding stale numbers, when the pass has a
// scratch; else one from the pass's arena (stale numbers too), or a new zero tensor. Every
// caller overwrites all of it.
func (p *pass) buf(id int, shape ...int) *tensor.Tensor {
	if p.sc == nil {
		return p.ar.tensor(shape...)
	}
	return p.sc.bufs[id].get(shape...)
}

// encode runs the embeddings and every layer, returning the last hidden state [B, S, H].
// tr (eval) records the trace; ta (training) records what Backward needs.
func (m *Model) encode(b Batch, p *pass, tr *Trace, ta *Activations) *tensor.Tensor {
	var ea *embActs
	if ta != nil {
		ea = &ta.emb
		ta.layers = make([]layerActs, m.NumBlocks())
	}
	h := p.emb
	if h == nil {
		h = m.embed(b, p, tr, ea)
	}
	if tr != nil {
		tr.HiddenStates = append(tr.HiddenStates, h)
	}
	for l := range m.NumBlocks() {
		var lt *LayerTrace
		if tr != nil {
			tr.Layers = append(tr.Layers, LayerTrace{})
			lt = &tr.Layers[l]
		}
		var la *layerActs
		if ta != nil {
			la = &ta.layers[l]
		}
		var probs *tensor.Tensor
		h, probs = m.layer(l, h, p, lt, la)
		if tr != nil {
			tr.HiddenStates = append(tr.HiddenStates, h)
			tr.Attentions = append(tr.Attentions, probs)
		}
	}
	return h
}

// embedSum forms rows of the embedding sum word + type (+ position) into x [B·S, E], and the
// trace's copies of the rows looked up (see embed).
type embedSum struct {
	m        *Model
	b        Batch
	x        []float32
	posIDs   []int     // nil: position i mod S
	zeros    []float32 // the type row of a model without token types
	relative bool      // no position row in the sum
	tr       *Trace
	E        int
}

// embedParallelMin is the smallest sum (B·S·E values) that embed splits over goroutines: the
// rows it looks up are scattered over the embedding tables, so each one is a cache miss, and
// two goroutines wait on twice as many at once.
const embedParallelMin = 1 << 15

// rows forms rows [lo, hi) of the sum.
func (j *embedSum) rows(lo, hi int) {
	m, b, E := j.m, j.b, j.E
	for i := lo; i < hi; i++ {
		w := m.WordEmb.Row(b.InputIDs[i])
		ty := j.zeros
		if m.TypeEmb != nil {
			t := 0
			if b.TokenTypeIDs != nil {
				t = b.TokenTypeIDs[i]
			}
			ty = m.TypeEmb.Row(t)
		}
		row := j.x[i*E : (i+1)*E]
		// HF adds inputs_embeds + token_type_embeddings, then the position embeddings.
		tensor.Add(row, w, ty)
		if !j.relative {
			pid := i % b.S
			if j.posIDs != nil {
				pid = j.posIDs[i]
			}
			pos := m.PosEmb.Row(pid)
			tensor.Add(row, row, pos)
			if j.tr != nil {
				copy(j.tr.PosEmb.Row(i), pos)
			}
		}
		if j.tr != nil {
			copy(j.tr.WordEmb.Row(i), w)
			copy(j.tr.TypeEmb.Row(i), ty)
		}
	}
}

// embed computes dropout(LayerNorm(word + type + position)) as HF's BertEmbeddings; with
// relative positions no position row is added, without token types (DistilBERT) no type row;
// the position ids are the family's (Config.PositionIDs). The sum and its LayerNorm are E =
// Config.EmbDim() wide; ALBERT's projection then maps them to H. [B, S, H]
func (m *Model) embed(b Batch, p *pass, tr *Trace, ea *embActs) *tensor.Tensor {
	c := m.Config
	B, S, H, E := b.B, b.S, c.HiddenSize, c.EmbDim()
	relative := c.Relative() || m.PosEmb == nil // no position row in the sum
	var x *tensor.Tensor
	if m.EmbProj != nil {
		// The projection's output takes the scratch's embedding buffer (see layer).
		x = tensor.New(B, S, E)
	} else {
		x = p.buf(bufHidden0, B, S, H)
	}
	if tr != nil {
		tr.WordEmb, tr.PosEmb, tr.TypeEmb = tensor.New(B, S, E), tensor.New(B, S, E), tensor.New(B, S, E)
	}
	var posIDs []int // nil: position i mod S
	if c.Family.Is(FamilyRoBERTa) {
		posIDs = make([]int, B*S)
		c.PositionIDs(posIDs, b.InputIDs, S)
	}
	var zeros []float32 // the type row of a model without token types
	if m.TypeEmb == nil {
		zeros = make([]float32, E)
	}
	j, rows := p.embedSum()
	*j = embedSum{m: m, b: b, x: x.Data, posIDs: posIDs, zeros: zeros, relative: relative, tr: tr, E: E}
	if B*S*E < embedParallelMin {
		rows(0, B*S)
	} else {
		tensor.ParallelFor(B*S, rows) // row by row: any split gives the same sums
	}
	*j = embedSum{} // keep no operand alive
	if tr != nil {
		tr.EmbSum = x.Clone()
	}
	out := x
	var mean, rstd []float32
	if ea != nil {
		// Backward needs the LayerNorm input and statistics.
		out, mean, rstd = p.ar.tensor(B, S, E), p.ar.f32(B*S), p.ar.f32(B*S)
	}
	tensor.LayerNorm(out.Data, x.Data, m.EmbLN.W.Data, m.EmbLN.B.Data, E, p.eps, mean, rstd)
	if ea != nil {
		*ea = embActs{sum: x, mean: mean, rstd: rstd}
		ea.keep = p.drop.dropSequences(p.ar, out.Data, B, siteEmbeddings, 0)
	}
	if c.Disentangled != nil && b.AttentionMask != nil {
		// DeBERTa multiplies the embeddings by the attention mask: padding rows are 0.
		for i, v := range b.AttentionMask {
			if v == 0 {
				clear(out.Row(i))
			}
		}
	}
	if m.EmbProj != nil {
		if tr != nil {
			tr.Embeddings = out
		}
		h := p.buf(bufHidden0, B, S, H)
		m.EmbProj.apply(h.Data, out.Data, B*S, E, H, ea == nil)
		if ea != nil {
			ea.projIn = out
		}
		return h
	}
	return out
}

// layer runs transformer block l on x [B, S, H]; it returns the block's output [B, S, H] and
// the attention probabilities [B, A, S, S] (before dropout). lt (eval) receives the trace;
// la (training) what Backward needs.
func (m *Model) layer(l int, x *tensor.Tensor, p *pass, lt *LayerTrace, la *layerActs) (*tensor.Tensor, *tensor.Tensor) {
	c := m.Config
	B, S := p.B, p.S
	H, A, I := c.HiddenSize, c.NumAttentionHeads, c.IntermediateSize
	d := H / A
	L := m.Block(l)
	rows := B * S

	q, k, v := p.buf(bufQ, B, S, H), p.buf(bufK, B, S, H), p.buf(bufV, B, S, H)
	L.Query.apply(q.Data, x.Data, rows, H, H, la == nil)
	L.Key.apply(k.Data, x.Data, rows, H, H, la == nil)
	L.Value.apply(v.Data, x.Data, rows, H, H, la == nil)

	probs := p.buf(bufProbs, B, A, S, S)
	var scores *tensor.Tensor
	if lt != nil {
		scores = tensor.New(B, A, S, S)
	}
	var keepP []uint8 // attention dropout mask [B, A, S, S]
	if p.drop.attn > 0 {
		keepP = p.ar.u8(B * A * S * S) // every pair's mask is drawn
	}
	ctx := p.buf(bufCtx, B, S, H)
	// One (sequence, head) pair at a time: scores = Q_h K_hᵀ / √d, + mask, softmax, dropout, · V_h.
	job, heads := p.attention()
	*job = attention{S: S, H: H, A: A, d: d, l: l, scale: float32(1 / math.Sqrt(float64(d))),
		q: q.Data, k: k.Data, v: v.Data, probs: probs.Data, ctx: ctx.Data, mask: p.mask,
		keepP: keepP, drop: p.drop}
	if L.Distance != nil {
		job.rel = distanceWindow(L.Distance, c.MaxPositionEmbeddings, S)
		job.relKey = c.PositionEmbeddingType == PositionRelativeKeyQuery
	}
	var c2p, p2c *tensor.Tensor // the trace's parts of the scores
	if dc := c.Disentangled; dc != nil {
		job.scale = float32(1 / math.Sqrt(float64(d*dc.ScaleFactor())))
		job.dis = m.disentangled(L, p)
		if lt != nil && job.dis.posK != nil {
			c2p = tensor.New(B, A, S, S)
			job.dis.c2pOut = c2p.Data
		}
		if lt != nil && job.dis.posQ != nil {
			p2c = tensor.New(B, A, S, S)
			job.dis.p2cOut = p2c.Data
		}
	}
	if scores != nil {
		job.scores = scores.Data
	}
	if B*A*S*S*d >= attnParallelMin {
		tensor.ParallelFor(B*A, heads)
	} else {
		heads(0, B*A)
	}
	ctxRaw := p.maskHeads(l, A, ctx, la != nil)

	proj := p.buf(bufProj, B, S, H)
	L.AttnOut.apply(proj.Data, ctx.Data, rows, H, H, la == nil)
	keep1 := p.drop.dropSequences(p.ar, proj.Data, B, siteAttnOutput, l)
	// The sums before the LayerNorms are formed in place unless the trace shows the dense
	// outputs; the LayerNorms run in place unless Backward needs their inputs.
	sum1 := proj
	if lt != nil {
		sum1 = tensor.New(B, S, H)
	}
	attnOut := sum1
	var mean1, rstd1 []float32
	if la != nil {
		attnOut, mean1, rstd1 = p.ar.tensor(B, S, H), p.ar.f32(rows), p.ar.f32(rows)
	}
	tensor.AddLayerNorm(sum1.Data, attnOut.Data, proj.Data, x.Data, L.AttnLN.W.Data, L.AttnLN.B.Data, H, p.eps, mean1, rstd1)

	pre := p.buf(bufPre, B, S, I)
	inter := pre
	if la == nil && L.Inter.packed != nil {
		// Bias and activation in the product's output pass, strip by strip (the same bits).
		tensor.LinearPackedAct(pre.Data, attnOut.Data, L.Inter.packed, L.Inter.B.Data, rows, p.act)
	} else {
		L.Inter.apply(pre.Data, attnOut.Data, rows, H, I, la == nil)
		aj, act := p.activate()
		*aj = activate{act: p.act, x: inter.Data, width: I}
		if la != nil {
			// The activation's backward needs its input, or its derivative where the
			// activation gives it at no extra cost (then written over the input): the output
			// goes to a buffer of its own.
			inter = p.ar.tensor(B, S, I)
			aj.x, aj.src, aj.deriv = inter.Data, pre.Data, p.actDeriv
		}
		tensor.ParallelFor(rows, act)
	}
	// The block's output is formed in ffn: with a scratch, in the hidden-state buffer that
	// does not hold x.
	ffn := p.buf(bufHidden0+(l+1)%2, B, S, H)
	L.Out.apply(ffn.Data, inter.Data, rows, I, H, la == nil)
	keep2 := p.drop.dropSequences(p.ar, ffn.Data, B, siteFFNOutput, l)
	sum2 := ffn
	if lt != nil {
		sum2 = tensor.New(B, S, H)
	}
	out := sum2
	var mean2, rstd2 []float32
	if la != nil {
		out, mean2, rstd2 = p.ar.tensor(B, S, H), p.ar.f32(rows), p.ar.f32(rows)
	}
	tensor.AddLayerNorm(sum2.Data, out.Data, ffn.Data, attnOut.Data, L.OutLN.W.Data, L.OutLN.B.Data, H, p.eps, mean2, rstd2)

	t := LayerTrace{Query: q, Key: k, Value: v, Context: ctx, AttentionOutput: attnOut, Intermediate: inter}
	if lt != nil {
		t.Scores, t.AttnProj, t.FFNOut = scores, proj, ffn
		t.C2P, t.P2C = c2p, p2c
		*lt = t
	}
	if la != nil {
		*la = layerActs{LayerTrace: t, x: x, probs: probs, keepP: keepP, ctxRaw: ctxRaw,
			keep1: keep1, sum1: sum1, mean1: mean1, rstd1: rstd1,
			pre: pre, keep2: keep2, sum2: sum2, mean2: mean2, rstd2: rstd2}
	}
	return out, probs
}

// attnParallelMin is the smallest B·A·S²·d (half the multiply-adds of a block's attention)
// that the heads are split over goroutines for: handing out a job and waiting for it costs a
// few microseconds, more than BERT-Tiny's 16-token attention takes (about 65 K multiply-adds
// a block); Mini's 128-token attention (8 M) is split.
const attnParallelMin = 1 << 20

// attention is the attention of one block, run on ranges of its (sequence, head) pairs
// bh = b·A + h by heads. Slices are [B, S, H] unless noted.
type attention struct {
	S, H, A, d, l int // l: the block, for the dropout streams
	scale         float32
	q, k, v       []float32
	probs         []float32 // receives the probabilities before dropout: [B, A, S, S]
	scores        []float32 // if not nil, receives the scores before the mask (trace): [B, A, S, S]
	ctx           []float32 // receives probabilities · V, heads merged
	mask          []float32 // the additive attention mask: [B, S]
	keepP         []uint8   // if not nil, receives the attention dropout mask: [B, A, S, S]
	drop          dropoutConfig
	// rel, with relative positions, is the window of the distance embeddings that S tokens
	// use (distanceWindow): [2S−1, d]; nil with absolute positions. relKey adds the key term
	// (relative_key_query).
	rel    []float32
	relKey bool
	// dis, with DeBERTa's disentangled attention, holds what its relative terms need; nil
	// otherwise. Padding queries then get all-zero probabilities (transformers' XSoftmax).
	dis *disentangledJob
}

// disentangledJob is what one block of DeBERTa's attention adds to BERT's.
type disentangledJob struct {
	span int
	// posK, posQ are the layer's key and query projections of the relative embeddings:
	// [2·span, H]; nil without c2p or p2c.
	posK, posQ []float32
	// c2p[i·S+j] and p2c[i·S+j] are the rows of posK and posQ that query i and key j use.
	c2p, p2c []int
	// c2pOut and p2cOut, if not nil, receive the terms (the trace): [B, A, S, S].
	c2pOut, p2cOut []float32
}

// distanceWindow returns the rows of a layer's distance embeddings [2P−1, d] that a sequence
// of S ≤ P tokens uses: offsets l − j from −(S−1) to S−1, rows P−S to P+S−2. Row
// l − j + S − 1 of the window is r[l, j]. [2S−1, d]
func distanceWindow(dist *tensor.Tensor, P, S int) []float32 {
	d := dist.Shape[1]
	return dist.Data[(P-S)*d : (P+S-1)*d]
}

// addRelativeScores adds HF 4.x's relative terms, times scale, to the scores sc [S, S] of one
// (sequence, head) pair: sc[l, j] += scale·(q_l·r[l, j] + k_j·r[l, j]), the key term only when
// kh is not nil. qh and kh are the head's queries and keys ([S, d], row stride ld), rel the
// distance window [2S−1, d] (r[l, j] is its row l − j + S − 1); qr and kr are scratch of
// S·(2S−1) values, receiving Q_h·relᵀ and K_h·relᵀ.
func addRelativeScores(sc, qh, kh []float32, ld int, rel []float32, S, d int, scale float32, qr, kr []float32) {
	W := 2*S - 1
	tensor.Gemm(false, true, S, W, d, scale, qh, ld, rel, d, 0, qr, W)
	if kh != nil {
		tensor.Gemm(false, true, S, W, d, scale, kh, ld, rel, d, 0, kr, W)
	}
	for l := 0; l < S; l++ {
		row := sc[l*S : (l+1)*S]
		// qr's row l read from offset l (key S−1) up to l+S−1 (key 0).
		q := qr[l*W+l : l*W+l+S]
		for j := range row {
			row[j] += q[S-1-j]
		}
		if kh != nil {
			for j := range row {
				row[j] += kr[j*W+l-j+S-1]
			}
		}
	}
}

// addDisentangled adds DeBERTa's c2p and p2c terms, times scale, to the scores sc [S, S] of the
// (sequence, head) pair bh whose queries and keys start at off; qp and kp are scratch of
// S·2·span values, receiving Q_h·posK_hᵀ and K_h·posQ_hᵀ.
func (j *attention) addDisentangled(sc []float32, bh, off int, qp, kp []float32) {
	S, H, d, D := j.S, j.H, j.d, j.dis
	W := 2 * D.span
	hoff := off % H // the head's columns
	if D.posK != nil {
		tensor.Gemm(false, true, S, W, d, j.scale, j.q[off:], H, D.posK[hoff:], H, 0, qp, W)
		for i := range S {
			row, qrow, idx := sc[i*S:(i+1)*S], qp[i*W:(i+1)*W], D.c2p[i*S:(i+1)*S]
			for k := range row {
				row[k] += qrow[idx[k]]
			}
			if D.c2pOut != nil {
				out := D.c2pOut[(bh*S+i)*S : (bh*S+i+1)*S]
				for k := range out {
					out[k] = qrow[idx[k]]
				}
			}
		}
	}
	if D.posQ != nil {
		tensor.Gemm(false, true, S, W, d, j.scale, j.k[off:], H, D.posQ[hoff:], H, 0, kp, W)
		for i := range S {
			row, idx := sc[i*S:(i+1)*S], D.p2c[i*S:(i+1)*S]
			for k := range row {
				row[k] += kp[k*W+idx[k]]
			}
			if D.p2cOut != nil {
				out := D.p2cOut[(bh*S+i)*S : (bh*S+i+1)*S]
				for k := range out {
					out[k] = kp[k*W+idx[k]]
				}
			}
		}
	}
}

// heads computes the pairs [lo, hi): scores = Q_h K_hᵀ / √d (plus the relative terms), + mask,
// softmax, dropout, · V_h.
func (j *attention) heads(lo, hi int) {
	S, H, A, d := j.S, j.H, j.A, j.d
	// Work buffers kept between passes (workBufs), each written whole before it is read: the
	// dropped probabilities a copy of each pair's, the relative terms' products set by their
	// GEMMs.
	var dropped, qr, kr []float32
	var hDrop, hQR, hKR *[]float32
	if j.keepP != nil {
		hDrop, dropped = workBuf(S * S)
	}
	if j.dis != nil {
		hQR, qr = workBuf(S * 2 * j.dis.span)
		hKR, kr = workBuf(S * 2 * j.dis.span)
	}
	if j.rel != nil {
		hQR, qr = workBuf(S * (2*S - 1))
		if j.relKey {
			hKR, kr = workBuf(S * (2*S - 1))
		}
	}
	defer putWorkBufs(hDrop, hQR, hKR)
	for bh := lo; bh < hi; bh++ {
		bi, hd := bh/A, bh%A
		off := bi*S*H + hd*d
		pr := j.probs[bh*S*S : (bh+1)*S*S]
		tensor.Gemm(false, true, S, S, d, j.scale, j.q[off:], H, j.k[off:], H, 0, pr, S)
		if j.rel != nil {
			var kh []float32
			if j.relKey {
				kh = j.k[off:]
			}
			addRelativeScores(pr, j.q[off:], kh, H, j.rel, S, d, j.scale, qr, kr)
		}
		if j.dis != nil {
			j.addDisentangled(pr, bh, off, qr, kr)
		}
		if j.scores != nil {
			copy(j.scores[bh*S*S:], pr)
		}
		tensor.SoftmaxRows(pr, S, j.mask[bi*S:(bi+1)*S])
		if j.dis != nil {
			// XSoftmax: a padding query attends to nothing.
			for i := range S {
				if j.mask[bi*S+i] != 0 {
					clear(pr[i*S : (i+1)*S])
				}
			}
		}
		src := pr
		if j.keepP != nil {
			copy(dropped, pr)
			Dropout(dropped, j.keepP[bh*S*S:(bh+1)*S*S], j.drop.attn, j.drop.seed, dropoutStream(siteAttnProbs, j.l, bh))
			src = dropped
		}
		tensor.Gemm(false, false, S, d, S, 1, src, S, j.v[off:], H, 0, j.ctx[off:], H)
	}
}

// pool is HF's BertPooler: tanh(dense(h[:, 0])). [B, H]
func (m *Model) pool(h *tensor.Tensor, B, S int) *tensor.Tensor {
	H := m.Config.HiddenSize
	out := tensor.New(B, H)
	// The first token of each sequence is row b·S·H of h: a strided operand, no copy.
	tensor.Gemm(false, true, B, H, H, 1, h.Data, S*H, m.Pooler.W.Data, H, 0, out.Data, H)
	tensor.AddBias(out.Data, m.Pooler.B.Data, H)
	tensor.Tanh(out.Data)
	return out
}

// rtdLogits is ELECTRA's ElectraDiscriminatorPredictions on h [B, S, H]: act(dense(h)), then
// the one-output dense_prediction. [B, S]
func (m *Model) rtdLogits(h *tensor.Tensor, B, S int, p *pass) *tensor.Tensor {
	H, n := m.Config.HiddenSize, B*S
	t := tensor.New(n, H)
	m.RTD.Dense.apply(t.Data, h.Data, n, H, H, true)
	p.act(t.Data)
	out := tensor.New(B, S)
	m.RTD.Out.apply(out.Data, t.Data, n, H, 1, true)
	return out
}

// mlmLogits runs the MLM head on h [B, S, H] (or on the rows listed), returning [B, S, V] or [R, V].
func (m *Model) mlmLogits(h *tensor.Tensor, B, S int, rows []int, p *pass, tr *Trace, into []float32) *tensor.Tensor {
	H := m.Config.HiddenSize
	in := h
	n := B * S
	if rows != nil {
		n = len(rows)
		in = p.buf(bufMLMIn, n, H)
		for i, r := range rows {
			copy(in.Row(i), h.Data[r*H:(r+1)*H])
		}
	}
	t, logits := m.mlmHead(in, n, p, nil, into)
	if tr != nil {
		tr.MLMTransform = t
		if rows == nil {
			tr.MLMTransform = &tensor.Tensor{Shape: []int{B, S, m.Config.EmbDim()}, Data: t.Data}
		}
	}
	if rows == nil {
		logits.Shape = []int{B, S, m.Config.VocabSize}
	}
	return logits
}

// mlmHead is HF's BertLMPredictionHead on in [n, H]: the transform (dense, act, LayerNorm)
// [n, E] (E = Config.EmbDim(), H but for ALBERT) and the logits of the decoder plus bias
// [n, V]. ma (training) receives what Backward needs.
func (m *Model) mlmHead(in *tensor.Tensor, n int, p *pass, ma *mlmActs, into []float32) (t, logits *tensor.Tensor) {
	H, V, E := m.Config.HiddenSize, m.Config.VocabSize, m.Config.EmbDim()
	pre := p.buf(bufMLMPre, n, E)
	m.MLM.Transform.apply(pre.Data, in.Data, n, H, E, ma == nil)
	a := pre
	if ma != nil {
		a = p.ar.tensor(n, E)
		copy(a.Data, pre.Data)
	}
	p.mlmAct(a.Data)
	t = a
	var mean, rstd []float32
	if ma != nil {
		t, mean, rstd = p.ar.tensor(n, E), p.ar.f32(n), p.ar.f32(n)
	}
	tensor.LayerNorm(t.Data, a.Data, m.MLM.LN.W.Data, m.MLM.LN.B.Data, E, p.eps, mean, rstd)
	if cap(into) >= n*V {
		logits = &tensor.Tensor{Shape: []int{n, V}, Data: into[:n*V]}
	} else {
		logits = p.ar.tensor(n, V) // an eval pass (no arena) hands it to its caller
	}
	if ma == nil && m.MLM.decPacked != nil {
		tensor.LinearPacked(logits.Data, t.Data, m.MLM.decPacked, m.MLM.Bias.Data, n)
	} else {
		tensor.Linear(logits.Data, t.Data, m.MLM.Decoder.Data, m.MLM.Bias.Data, n, E, V)
	}
	if ma != nil {
		*ma = mlmActs{in: in, pre: pre, act: a, mean: mean, rstd: rstd, t: t}
	}
	return t, logits
}

// disentangled prepares block L's DeBERTa terms for the pass p: the relative embeddings (with
// their LayerNorm), projected by the layer's key (c2p) and query (p2c) maps with their biases,
// and the rows each (query, key) pair reads. nil without relative attention, where DeBERTa's
// attention is BERT's with another scale and XSoftmax's masking.
func (m *Model) disentangled(L *Layer, p *pass) *disentangledJob {
	dc := m.Config.Disentangled
	D := &disentangledJob{span: dc.Span()}
	if !dc.Relative || m.RelEmb == nil {
		D.span = 0
		return D
	}
	H, W, S := m.Config.HiddenSize, 2*D.span, p.S
	rel := m.RelEmb.Data
	if m.RelLN != nil {
		normed := make([]float32, len(rel))
		tensor.LayerNorm(normed, rel, m.RelLN.W.Data, m.RelLN.B.Data, H, p.eps, nil, nil)
		rel = normed
	}
	clamp := func(x int) int { return min(max(x, 0), W-1) }
	if dc.C2P {
		D.posK = make([]float32, W*H)
		L.Key.apply(D.posK, rel, W, H, H, true)
		D.c2p = make([]int, S*S)
		for i := range S {
			for k := range S {
				D.c2p[i*S+k] = clamp(RelativeBucket(i-k, dc.PositionBuckets, dc.MaxRelativePositions) + D.span)
			}
		}
	}
	if dc.P2C {
		D.posQ = make([]float32, W*H)
		L.Query.apply(D.posQ, rel, W, H, H, true)
		D.p2c = make([]int, S*S)
		for i := range S {
			for k := range S {
				// transformers gathers row k of K·posQᵀ at −bucket(k − i) + span, then transposes.
				D.p2c[i*S+k] = clamp(-RelativeBucket(k-i, dc.PositionBuckets, dc.MaxRelativePositions) + D.span)
			}
		}
	}
	return D
}
