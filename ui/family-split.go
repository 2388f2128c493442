package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// FamilySplit is the attention view's split panel for DeBERTa: the selected head's scores taken
// apart into content-to-content, content-to-position and position-to-content, and their sum
// before the softmax, as heatmaps on one scale (pipeline.AttentionParts).
type FamilySplit struct {
	App *App

	// Where each map's matrix sits in its canvas (CSS pixels), and the cell under the mouse.
	margin, cell   int
	hovering       bool
	hoverI, hoverJ int
}

// ready reports whether the parts shown are those of the selected layer and the maps' input.
func (c *FamilySplit) ready() bool {
	a := c.App
	f := a.fam()
	return f.Parts != nil && f.PartsKey == a.partsKey(a.Layer) && a.Head < f.Parts.NumHeads
}

func (c *FamilySplit) title() string {
	return fmt.Sprintf("The score, taken apart: layer %d, head %d", c.App.Layer, c.App.Head)
}

func (c *FamilySplit) has(t string) bool {
	for _, x := range c.App.SplitTerms() {
		if x == t {
			return true
		}
	}
	return false
}

// terms are the maps drawn: each term, then their sum.
func (c *FamilySplit) terms() []string {
	return append(append([]string(nil), c.App.SplitTerms()...), "sum")
}

func (c *FamilySplit) op(t string) string {
	if t == "sum" {
		return "="
	}
	return "+"
}

func (c *FamilySplit) termName(t string) string {
	return map[string]string{
		"c2c": "c2c: content → content",
		"c2p": "c2p: content → position",
		"p2c": "p2c: position → content",
		"sum": "sum: the score before softmax",
	}[t]
}

func (c *FamilySplit) divisor() string {
	p := c.App.Fam.Parts
	if p == nil {
		return "√(d · (1 + number of position terms))"
	}
	return fmt.Sprintf("√(d · %d) = %.2f (d the head size, 1 plus one for each position term)", len(c.App.SplitTerms()), p.Divisor)
}

// term is head h's matrix of term t: [S][S].
func (c *FamilySplit) term(t string) [][]float32 {
	p := c.App.Fam.Parts
	var m [][][]float32
	switch t {
	case "c2c":
		m = p.C2C
	case "c2p":
		m = p.C2P
	case "p2c":
		m = p.P2C
	case "sum":
		m = p.Sum
	case "probs":
		m = p.Probs
	}
	if c.App.Head >= len(m) {
		return nil
	}
	return m[c.App.Head]
}

// scale is the largest magnitude over the maps drawn: one colour scale, so they compare.
func (c *FamilySplit) scale() float64 {
	var s float64
	for _, t := range c.terms() {
		for _, row := range c.term(t) {
			for _, v := range row {
				s = math.Max(s, math.Abs(float64(v)))
			}
		}
	}
	return s
}

func (c *FamilySplit) legend() string {
	return fmt.Sprintf("blue negative · white 0 · red positive, one scale for every map (±%.3f); rows: the query token, columns: the key token", c.scale())
}

func (c *FamilySplit) readout() string {
	p := c.App.Fam.Parts
	S := len(p.Tokens)
	if !c.hovering || c.hoverI >= S || c.hoverJ >= S {
		return "Point at a cell of any map to read how its score adds up."
	}
	i, j := c.hoverI, c.hoverJ
	var parts []string
	for _, t := range c.App.SplitTerms() {
		parts = append(parts, fmt.Sprintf("%s %.3f", t, c.term(t)[i][j]))
	}
	return fmt.Sprintf("%s (row %d) → %s (column %d): %s = %.3f; after softmax %.4f", p.Tokens[i], i, p.Tokens[j], j,
		strings.Join(parts, " + "), c.term("sum")[i][j], c.term("probs")[i][j])
}

func (c *FamilySplit) hover(e vugu.DOMEvent, _ string) {
	c.hovering = false
	if c.cell <= 0 || !c.ready() {
		return
	}
	x, y := int(e.PropFloat64("offsetX"))-c.margin, int(e.PropFloat64("offsetY"))-c.margin
	S := len(c.App.Fam.Parts.Tokens)
	if x >= 0 && y >= 0 && x/c.cell < S && y/c.cell < S {
		c.hovering, c.hoverI, c.hoverJ = true, y/c.cell, x/c.cell
	}
}

func (c *FamilySplit) unhover() { c.hovering = false }

// Layout of the maps, in CSS pixels.
const (
	splitSide    = 210
	splitMaxCell = 20
	splitLabels  = 24 // label the tokens when there are at most this many
)

// draw draws term t of the selected head, unless its canvas already shows it.
func (c *FamilySplit) draw(holder js.Value, t string) {
	a := c.App
	canvas, drawn := canvasIn(holder, fmt.Sprintf("%d/%s/%d/%s", a.Fam.partsGen, a.Fam.PartsKey, a.Head, t))
	if drawn {
		return
	}
	m, toks := c.term(t), a.Fam.Parts.Tokens
	S := len(m)
	cell := min(max(splitSide/max(S, 1), 2), splitMaxCell)
	margin := 4
	ctx := canvas.Call("getContext", "2d")
	labels := S <= splitLabels
	if labels {
		ctx.Set("font", labelFont)
		w := 0.0
		for _, tok := range toks {
			w = max(w, ctx.Call("measureText", tok).Get("width").Float())
		}
		margin = int(w) + 8
	}
	c.margin, c.cell = margin, cell
	scale := c.scale()
	canvas.Set("bertlabMargin", margin)
	canvas.Set("bertlabCell", cell)
	canvas.Set("bertlabValues", joinValues(m))
	canvas.Set("bertlabScale", scale)
	side := S * cell
	ctx = whiteCanvas(canvas, float64(margin+side+2), float64(margin+side+2))
	if S == 0 {
		return
	}
	off := js.Global().Get("document").Call("createElement", "canvas")
	off.Set("width", S)
	off.Set("height", S)
	octx := off.Call("getContext", "2d")
	img := octx.Call("createImageData", S, S)
	px := make([]byte, 4*S*S)
	for i, row := range m {
		for j, v := range row {
			r, g, b := diverge(float64(v), scale)
			o := 4 * (i*S + j)
			px[o], px[o+1], px[o+2], px[o+3] = r, g, b, 255
		}
	}
	js.CopyBytesToJS(img.Get("data"), px)
	octx.Call("putImageData", img, 0, 0)
	ctx.Set("imageSmoothingEnabled", false)
	ctx.Call("drawImage", off, margin, margin, side, side)
	ctx.Set("strokeStyle", "#cbd5e1")
	ctx.Set("lineWidth", 1)
	ctx.Call("strokeRect", float64(margin)-0.5, float64(margin)-0.5, side+1, side+1)
	if !labels {
		return
	}
	ctx.Set("font", labelFont)
	ctx.Set("fillStyle", "#334155")
	ctx.Set("textBaseline", "middle")
	ctx.Set("textAlign", "right")
	for i, tok := range toks {
		ctx.Call("fillText", tok, margin-4, margin+i*cell+cell/2)
	}
	ctx.Set("textAlign", "left")
	for j, tok := range toks {
		ctx.Call("save")
		ctx.Call("translate", margin+j*cell+cell/2, margin-4)
		ctx.Call("rotate", -1.5707963267948966)
		ctx.Call("fillText", tok, 0, 0)
		ctx.Call("restore")
	}
}
