package bert

import (
	"fmt"

	"github.com/bertlab/bertlab/core/tensor"
)

// Grads holds d loss / d parameter for every parameter of a model, each tensor shaped like its
// parameter. Backward and ForwardBackward add to it (+=), so that the gradients of several
// batches accumulate until Zero. When the model's MLM decoder is tied to the word embeddings,
// so are their gradients: one tensor, the sum of the lookup and decoder gradients.
//
// Grads also keeps the activations and backward buffers of its last training step
// (ForwardBackward, ForwardBackwardDistil, TaskModel.ForwardBackward, Backward) for the next
// one: memory about that of one step's activations, held as long as the Grads.
type Grads struct {
	g *Model // a model-shaped holder: its parameters are the gradients
	// acts holds the activations of the training steps that use g (ForwardBackward and the
	// like), work the buffers of its backward passes: kept from step to step (see arena).
	acts, work arena
	// decZero: the MLM decoder's gradient is zero but not cleared yet (see Zero).
	decZero bool
}

// NewGrads returns zero gradients shaped like m's parameters, with the same heads and tying.
func (m *Model) NewGrads() *Grads {
	z := func(t *tensor.Tensor) *tensor.Tensor {
		if t == nil {
			return nil
		}
		return tensor.New(t.Shape...)
	}
	lin := func(l Linear) Linear { return Linear{W: z(l.W), B: z(l.B)} }
	ln := func(l LayerNorm) LayerNorm { return LayerNorm{W: z(l.W), B: z(l.B)} }
	g := &Model{Config: m.Config, WordEmb: z(m.WordEmb), PosEmb: z(m.PosEmb), TypeEmb: z(m.TypeEmb),
		EmbLN: ln(m.EmbLN), Layers: make([]Layer, len(m.Layers))}
	for i, l := range m.Layers {
		g.Layers[i] = Layer{Query: lin(l.Query), Key: lin(l.Key), Value: lin(l.Value),
			AttnOut: lin(l.AttnOut), AttnLN: ln(l.AttnLN), Inter: lin(l.Inter), Out: lin(l.Out), OutLN: ln(l.OutLN),
			Distance: z(l.Distance)}
	}
	if m.Pooler != nil {
		p := lin(*m.Pooler)
		g.Pooler = &p
	}
	if m.MLM != nil {
		g.MLM = &MLMHead{Transform: lin(m.MLM.Transform), LN: ln(m.MLM.LN), Bias: z(m.MLM.Bias), Decoder: g.WordEmb}
		if m.MLM.Decoder != m.WordEmb {
			g.MLM.Decoder = z(m.MLM.Decoder)
		}
	}
	if m.NSP != nil {
		p := lin(*m.NSP)
		g.NSP = &p
	}
	if m.EmbProj != nil {
		p := lin(*m.EmbProj)
		g.EmbProj = &p
	}
	if m.RTD != nil {
		g.RTD = &RTDHead{Dense: lin(m.RTD.Dense), Out: lin(m.RTD.Out)}
	}
	g.RelEmb = z(m.RelEmb)
	if m.RelLN != nil {
		l := ln(*m.RelLN)
		g.RelLN = &l
	}
	return &Grads{g: g}
}

// Params lists the gradients with the names of the parameters, in the order of Model.Params
// of the model that made them: g.Params()[i] is the gradient of m.Params()[i].
func (g *Grads) Params() []Param {
	g.settle()
	return g.g.Params()
}

// Zero sets every gradient to 0.
//
// The MLM decoder's gradient (the word embeddings' when tied: 15.6 MB of BERT-Tiny's 17.6) is
// only marked zero: ForwardBackward's masked-LM head then sets it where it would add to it,
// which spares clearing it and reading it back from memory each step. Every other reader
// clears it first: Params, and the check that each backward pass starts with.
func (g *Grads) Zero() {
	dec := g.decoder()
	for _, p := range g.g.Params() {
		if p.T != dec {
			clearParallel(p.T.Data)
		}
	}
	g.decZero = dec != nil
}

// clearParallel sets d to zeros, split over the processors when it is large (BERT-Base's
// gradients: 9 ms a step on one thread).
func clearParallel(d []float32) {
	if len(d) < 1<<16 {
		clear(d)
		return
	}
	tensor.ParallelFor(len(d), func(lo, hi int) { clear(d[lo:hi]) })
}

// decoder is the MLM decoder's gradient tensor (the word embeddings' when tied), nil without
// an MLM head.
func (g *Grads) decoder() *tensor.Tensor {
	if g.g.MLM == nil {
		return nil
	}
	return g.g.MLM.Decoder
}

// settle clears the decoder's gradient if Zero only marked it zero.
func (g *Grads) settle() {
	if g.decZero {
		clearParallel(g.g.MLM.Decoder.Data)
		g.decZero = false
	}
}

// takeDecoderZero reports whether the decoder's gradient is marked zero (Zero) and unmarks it:
// the caller must then set all of it.
func (g *Grads) takeDecoderZero() bool {
	z := g.decZero
	g.decZero = false
	return z
}

// check reports whether g holds gradients for m's parameters, and clears what Zero left
// marked.
func (g *Grads) check(m *Model) error {
	if err := g.checkShapes(m); err != nil {
		return err
	}
	g.settle()
	return nil
}

// checkShapes is check without the clearing: ForwardBackward sets the decoder's gradient.
func (g *Grads) checkShapes(m *Model) error {
	if g == nil || g.g == nil {
		return fmt.Errorf("gradients: nil (use Model.NewGrads)")
	}
	mp, gp := m.Params(), g.g.Params()
	if len(mp) != len(gp) {
		return fmt.Errorf("gradients: %d tensors for a model of %d parameters", len(gp), len(mp))
	}
	for i := range mp {
		if mp[i].Name != gp[i].Name || !tensor.SameShape(mp[i].T.Shape, gp[i].T.Shape) {
			return fmt.Errorf("gradients: %s %s does not match the model's %s %s", gp[i].Name,
				tensor.ShapeString(gp[i].T.Shape), mp[i].Name, tensor.ShapeString(mp[i].T.Shape))
		}
	}
	return nil
}
