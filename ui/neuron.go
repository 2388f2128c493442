package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vugu/vugu/js"

	"github.com/bertlab/bertlab/core/engine"
)

// The neuron view (after bertviz's): in the attention view's head view, a click on a query token
// (left column) of one head shows why its attention row is what it is: the head's query vector q,
// every key vector k per dimension, their elementwise products q·k, the scaled scores and the
// softmax row. Its state is App.NeuronQuery ("&query=" in the URL).

// NeuronShown reports whether the attention view shows the neuron view.
func (a *App) NeuronShown() bool {
	return a.View == ViewAttention && a.HeadView && !a.AllHeads && a.NeuronQuery > 0
}

// SetNeuron shows the neuron view of query token q of the selected head (q < 0: none).
func (a *App) SetNeuron(q int) {
	a.NeuronQuery = max(q+1, 0)
	a.writeRoute()
	a.fetchNeuron()
}

// fetchNeuron asks the engine for the neuron view, unless it is shown. Called with the render
// lock held.
func (a *App) fetchNeuron() {
	if !a.Loaded || !a.NeuronShown() || a.AttText == "" {
		return
	}
	r := engine.NeuronRequest{Text: a.MaskedText, Pair: a.MaskedB, Layer: a.Layer, Head: a.Head, Query: a.NeuronQuery - 1}
	key := fmt.Sprintf("%p|%s|%d|%d|%d", a.Info, inputKey(r.Text, r.Pair), r.Layer, r.Head, r.Query)
	if key == a.neuronKey {
		return
	}
	a.neuronKey, a.NeuronErr = key, ""
	a.busy++
	a.spawn(func() {
		defer a.Do(func() { a.busy-- })
		n, err := a.Eng.Neuron(r)
		a.Do(func() {
			if key != a.neuronKey {
				return
			}
			if err != nil {
				a.Neuron, a.NeuronErr = nil, err.Error()
				return
			}
			a.Neuron = n
		})
	})
}

// neuronTitle names what the neuron view shows.
func (c *AttentionView) neuronTitle() string {
	n := c.App.Neuron
	if n == nil || len(c.App.Att) == 0 || n.Query >= len(c.App.Att[0].Tokens) {
		return "Neuron view"
	}
	return fmt.Sprintf("Neuron view: why “%s” (row %d) attends where it does in head %d.%d", c.App.Att[0].Tokens[n.Query], n.Query, n.Layer, n.Head)
}

// Layout of the neuron view, in CSS pixels.
const (
	nvLabel = 84 // the key tokens' labels
	nvRowH  = 16
	nvTop   = 40 // the title lines and q's row
	nvGap   = 18
	nvNum   = 70 // a number column
	nvBar   = 90 // the softmax bar
)

// drawNeuron draws the neuron view, unless the canvas shows it.
func (c *AttentionView) drawNeuron(holder js.Value) {
	n := c.App.Neuron
	if n == nil || len(c.App.Att) == 0 {
		return
	}
	tokens := c.App.Att[0].Tokens
	if len(n.K) != len(tokens) {
		return // an answer for another text
	}
	canvas, drawn := canvasIn(holder, fmt.Sprintf("%p", n))
	if drawn {
		return
	}
	d, S := len(n.Q), len(n.K)
	cell := float64(min(max(300/max(d, 1), 3), 10))
	block := cell * float64(d)
	kx := float64(nvLabel)
	qkx := kx + block + nvGap
	sx := qkx + block + nvGap
	px := sx + nvNum
	W := px + nvBar + nvNum + 60
	H := float64(nvTop + nvRowH*(S+1) + 8)
	ctx := whiteCanvas(canvas, W, H)
	maxK, maxQK := 0.0, 0.0
	for _, v := range n.Q {
		maxK = math.Max(maxK, math.Abs(float64(v)))
	}
	for j := range n.K {
		for e, v := range n.K[j] {
			maxK = math.Max(maxK, math.Abs(float64(v)))
			maxQK = math.Max(maxQK, math.Abs(n.QK[j][e]))
		}
	}
	maxP := 0.0
	for _, p := range n.Probs {
		maxP = math.Max(maxP, p)
	}
	ctx.Set("font", embSans)
	ctx.Set("fillStyle", "#334155")
	ctx.Set("textBaseline", "middle")
	ctx.Call("fillText", fmt.Sprintf("k per dimension (%d)", d), kx, 10)
	ctx.Call("fillText", "q·k elementwise", qkx, 10)
	ctx.Call("fillText", "score", sx, 10)
	ctx.Call("fillText", "softmax (bars: to the row's largest)", px, 10)
	y0 := float64(nvTop - nvRowH)
	ctx.Set("textAlign", "right")
	ctx.Call("fillText", "q: "+tokens[n.Query], kx-6, y0+nvRowH/2)
	ctx.Set("textAlign", "left")
	for e, v := range n.Q {
		ctx.Set("fillStyle", attrColor(float64(v), maxK))
		ctx.Call("fillRect", kx+float64(e)*cell, y0+2, cell-0.5, nvRowH-4)
	}
	for j := range n.K {
		y := float64(nvTop + nvRowH*j + 4)
		ctx.Set("fillStyle", "#334155")
		ctx.Set("textAlign", "right")
		ctx.Call("fillText", tokens[j], kx-6, y+nvRowH/2)
		ctx.Set("textAlign", "left")
		for e := range n.K[j] {
			ctx.Set("fillStyle", attrColor(float64(n.K[j][e]), maxK))
			ctx.Call("fillRect", kx+float64(e)*cell, y+2, cell-0.5, nvRowH-4)
			ctx.Set("fillStyle", attrColor(n.QK[j][e], maxQK))
			ctx.Call("fillRect", qkx+float64(e)*cell, y+2, cell-0.5, nvRowH-4)
		}
		ctx.Set("fillStyle", "#334155")
		ctx.Call("fillText", fmt.Sprintf("%+.3f", n.Scores[j]), sx, y+nvRowH/2)
		ctx.Set("fillStyle", "#4f46e5")
		if maxP > 0 { // bars scaled to the largest probability of the row
			ctx.Call("fillRect", px, y+3, nvBar*n.Probs[j]/maxP, nvRowH-6)
		}
		ctx.Set("fillStyle", "#334155")
		ctx.Call("fillText", fmt.Sprintf("%.3f", n.Probs[j]), px+nvBar+6, y+nvRowH/2)
	}
	// The drawn numbers, for tests.
	join := func(v []float64) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		return strings.Join(s, ",")
	}
	canvas.Set("bertlabScores", join(n.Scores))
	canvas.Set("bertlabProbs", join(n.Probs))
}

// neuronNote says how the numbers add up, with the relative-position terms when the model has them.
func (c *AttentionView) neuronNote() string {
	n := c.App.Neuron
	if n == nil {
		return ""
	}
	s := fmt.Sprintf("Each score is the sum of the q·k row divided by √%d; the softmax of the scores is the attention row the lines show. Red is positive, blue negative.", len(n.Q))
	if n.QR != nil {
		s += " This model adds relative-position terms (q·r and k·r of the distance embedding) to each sum before the scaling."
	}
	return s
}

// exportNeuronPNG downloads the neuron view, as drawn, as a PNG file.
func (c *AttentionView) exportNeuronPNG() {
	if n := c.App.Neuron; n != nil {
		downloadPNG(".neuronview canvas", fmt.Sprintf("bertlab-neuron-layer%d-head%d-query%d.png", n.Layer, n.Head, n.Query))
	}
}
