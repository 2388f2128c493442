package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// The head view, drawn the way bertviz's head view draws it: the tokens twice, in two columns
// (left: the token that attends, right: the token attended to), joined by lines whose opacity is
// the attention probability, one colour per head.

// headViewLayout is where the head view drew its two columns, in CSS pixels.
type headViewLayout struct {
	top, rowH  int   // the first row's top and the row height
	labelRight int   // the right edge of the left column
	rightLeft  int   // the left edge of the right column
	rows       []int // the token positions of the left column (queries), top down
	cols       []int // the token positions of the right column (keys), top down
}

// Layout of the head view, in CSS pixels.
const (
	hvRowH = 20
	hvTop  = 28  // room for the column captions
	hvGap  = 220 // the horizontal run of the lines
	hvPad  = 8
	// hvLevels is how many opacities the lines take: lines of one head and level share one path,
	// so a layer takes a few hundred canvas calls however long the text is.
	hvLevels = 50

	captionFont  = `11px system-ui, sans-serif`
	captionLeft  = "attends (query)"
	captionRight = "attended to (key)"
)

// headColors are the heads' colours: d3's category10, as bertviz uses (repeating after ten).
var headColors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

func headColor(h int) string { return headColors[h%len(headColors)] }

func (c *AttentionView) swatchStyle(h int) string { return "background: " + headColor(h) }

// lineHeads is the heads the head view draws: the selected one, or all of the layer.
func (c *AttentionView) lineHeads() []int {
	if !c.App.AllHeads {
		return []int{c.App.Head}
	}
	hs := make([]int, c.heads())
	for h := range hs {
		hs[h] = h
	}
	return hs
}

// focusIn returns the focused token when it is one of rows (a query) or, when the focus is on
// the right column, one of cols (a key).
func (c *AttentionView) focusIn(rows, cols []int) (int, bool) {
	in := rows
	if c.focusKey {
		in = cols
	}
	if c.focused && slices.Contains(in, c.focus) {
		return c.focus, true
	}
	return 0, false
}

// drawLines draws the head view of the selected layer, unless its canvas already shows it
// (vugu calls this on every render, the mouse moving over it included).
func (c *AttentionView) drawLines(holder js.Value) {
	l := c.App.Layer
	rows, cols := c.rows(l), c.cols(l)
	focus, focused := c.focusIn(rows, cols)
	fkey := "-"
	if focused {
		fkey = strconv.Itoa(focus)
		if c.focusKey {
			fkey = "k" + fkey
		}
	}
	canvas, drawn := canvasIn(holder, fmt.Sprintf("lines/%s/%t/%s", c.drawKey(l, c.App.Head), c.App.AllHeads, fkey))
	if drawn {
		return
	}
	tokens := c.App.Att[l].Tokens
	ctx := canvas.Call("getContext", "2d")
	ctx.Set("font", labelFont)
	widest := func(idx []int) int {
		w := 0.0
		for _, i := range idx {
			w = max(w, ctx.Call("measureText", tokens[i]).Get("width").Float())
		}
		return int(w) + 1
	}
	lw, rw := widest(rows), widest(cols)
	// The column captions must fit too.
	ctx.Set("font", captionFont)
	lw = max(lw, int(ctx.Call("measureText", captionLeft).Get("width").Float())+1)
	rw = max(rw, int(ctx.Call("measureText", captionRight).Get("width").Float())+1)
	labelRight := 2*hvPad + lw
	x1, x2 := labelRight+4, labelRight+4+hvGap
	rightLeft := x2 + 4
	w := rightLeft + 2*hvPad + rw
	hgt := hvTop + max(len(rows), len(cols))*hvRowH + hvPad
	c.lines = headViewLayout{top: hvTop, rowH: hvRowH, labelRight: labelRight, rightLeft: rightLeft, rows: rows, cols: cols}

	ctx = whiteCanvas(canvas, float64(w), float64(hgt))

	ctx.Set("font", captionFont)
	ctx.Set("fillStyle", "#64748b")
	ctx.Set("textBaseline", "alphabetic")
	ctx.Set("textAlign", "right")
	ctx.Call("fillText", captionLeft, labelRight-4, hvTop-10)
	ctx.Set("textAlign", "left")
	ctx.Call("fillText", captionRight, rightLeft+4, hvTop-10)

	rowY := func(a int) int { return hvTop + a*hvRowH + hvRowH/2 }
	if focused {
		ctx.Set("fillStyle", "#eef2ff")
		if c.focusKey {
			b := slices.Index(cols, focus)
			ctx.Call("fillRect", rightLeft, hvTop+b*hvRowH+1, w-rightLeft-2, hvRowH-2)
		} else {
			a := slices.Index(rows, focus)
			ctx.Call("fillRect", 2, hvTop+a*hvRowH+1, labelRight-2, hvRowH-2)
		}
	}

	lines := 0
	ctx.Set("lineWidth", 2)
	for _, h := range c.lineHeads() {
		m := c.App.Att[l].Attentions[h]
		var paths [hvLevels + 1]strings.Builder
		for a, i := range rows {
			if focused && !c.focusKey && i != focus {
				continue
			}
			for b, j := range cols {
				if focused && c.focusKey && j != focus {
					continue
				}
				lev := int(float64(m[i][j])*hvLevels + 0.5)
				if lev <= 0 {
					continue // under 1%: not a visible line
				}
				fmt.Fprintf(&paths[min(lev, hvLevels)], "M%d %dL%d %d", x1, rowY(a), x2, rowY(b))
				lines++
			}
		}
		ctx.Set("strokeStyle", headColor(h))
		for lev := 1; lev <= hvLevels; lev++ {
			if paths[lev].Len() == 0 {
				continue
			}
			ctx.Set("globalAlpha", float64(lev)/hvLevels)
			ctx.Call("stroke", js.Global().Get("Path2D").New(paths[lev].String()))
		}
	}
	ctx.Set("globalAlpha", 1)

	ctx.Set("font", labelFont)
	ctx.Set("fillStyle", "#334155")
	ctx.Set("textBaseline", "middle")
	ctx.Set("textAlign", "right")
	for a, i := range rows {
		ctx.Call("fillText", tokens[i], labelRight-4, rowY(a))
	}
	ctx.Set("textAlign", "left")
	for b, j := range cols {
		ctx.Call("fillText", tokens[j], rightLeft+4, rowY(b))
	}
	canvas.Set("bertlabLines", lines) // for tests: how many lines were drawn
	canvas.Set("bertlabTop", hvTop)
	canvas.Set("bertlabRowH", hvRowH)
	canvas.Set("bertlabRightLeft", rightLeft)
}

// lineRow returns the token under the mouse, if any: a query of the left column, or a key of
// the right one (key true).
func (c *AttentionView) lineRow(e vugu.DOMEvent) (i int, key, ok bool) {
	return c.lines.at(e.PropFloat64("offsetX"), e.PropFloat64("offsetY"))
}

// at returns the token at (x, y) in CSS pixels of the head view: a query of the left column, or
// a key of the right one (key true); ok is false between the columns and below the rows.
func (g headViewLayout) at(x, y float64) (i int, key, ok bool) {
	if g.rowH <= 0 || x < 0 || y < float64(g.top) {
		return 0, false, false
	}
	r := int(y-float64(g.top)) / g.rowH
	switch {
	case x <= float64(g.labelRight) && r < len(g.rows):
		return g.rows[r], false, true
	case x >= float64(g.rightLeft) && g.rightLeft > g.labelRight && r < len(g.cols):
		return g.cols[r], true, true
	}
	return 0, false, false
}

// lineHover shows only the lines of the token under the mouse, unless a click pinned one.
func (c *AttentionView) lineHover(e vugu.DOMEvent) {
	if !c.pinned {
		c.focus, c.focusKey, c.focused = c.lineRow(e)
	}
}

func (c *AttentionView) lineLeave() {
	if !c.pinned {
		c.focused = false
	}
}

// lineClick pins the token clicked in either column (its lines stay when the mouse leaves); a
// click on the pinned token, or off both columns, unpins.
func (c *AttentionView) lineClick(e vugu.DOMEvent) {
	i, key, ok := c.lineRow(e)
	switch {
	case !ok:
		c.pinned, c.focused = false, false
	case c.pinned && c.focus == i && c.focusKey == key:
		c.pinned = false
	default:
		c.pinned, c.focused, c.focus, c.focusKey = true, true, i, key
	}
	// A pinned query of one head opens the neuron view (neuron.go); anything else closes it.
	if c.pinned && !c.focusKey && !c.App.AllHeads {
		c.App.SetNeuron(c.focus)
	} else if c.App.NeuronQuery > 0 {
		c.App.SetNeuron(-1)
	}
}

// linesReadout says what the head view shows.
func (c *AttentionView) linesReadout() string {
	l := c.App.Layer
	focus, ok := c.focusIn(c.rows(l), c.cols(l))
	if !ok {
		return "Point at a token to see only its lines (left: what it attends to; right: what attends to it); click it to keep them."
	}
	tokens := c.App.Att[l].Tokens
	if c.focusKey {
		if c.App.AllHeads {
			return fmt.Sprintf("%s (column %d): the attention it receives in every head of layer %d", tokens[focus], focus, l)
		}
		m := c.App.Att[l].Attentions[c.App.Head]
		best := -1
		for _, i := range c.rows(l) {
			if best < 0 || m[i][focus] > m[best][focus] {
				best = i
			}
		}
		if best < 0 {
			return ""
		}
		return fmt.Sprintf("%s (column %d) is attended to most by %s (row %d) with probability %.4f", tokens[focus], focus, tokens[best], best, m[best][focus])
	}
	if c.App.AllHeads {
		return fmt.Sprintf("%s (row %d): its attention in every head of layer %d", tokens[focus], focus, l)
	}
	row := c.App.Att[l].Attentions[c.App.Head][focus]
	best := -1
	for _, j := range c.cols(l) {
		if best < 0 || row[j] > row[best] {
			best = j
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("%s (row %d) attends most to %s (column %d) with probability %.4f", tokens[focus], focus, tokens[best], best, row[best])
}

func (c *AttentionView) showClass(lines bool) string {
	if c.App.HeadView == lines {
		return "opt active"
	}
	return "opt"
}

func (c *AttentionView) segClass(s string) string {
	if c.seg() == s {
		return "opt active"
	}
	return "opt"
}

// segAttr names a filter for tests: "all", "aa", "ab", ...
func (c *AttentionView) segAttr(s string) string {
	if s == SegAll {
		return "all"
	}
	return s
}

func (c *AttentionView) segTitle(s string) string {
	names := map[byte]string{'a': "sentence A", 'b': "sentence B"}
	if s == SegAll {
		return "every token attending to every token"
	}
	return names[s[0]] + " attending to " + names[s[1]]
}
