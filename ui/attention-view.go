package ui

import (
	"fmt"
	"math"
	"slices"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// AttentionView is "Attention": a layer × head grid of small heatmaps and a large heatmap of
// the selected head with its token labels. The maps are drawn on <canvas> from Go: vugu walks
// the whole page on every render, and hundreds of SVG cells made that take seconds.
type AttentionView struct {
	App *App

	// Where the large heatmap's matrix sits in its canvas (CSS pixels), for the hover readout.
	margin, cell int
	// The query row and key column under the mouse, when hovering.
	hovering       bool
	hoverI, hoverJ int

	// Head view (headview.go): where its two columns of tokens sit, and the token whose lines
	// alone are shown when focused, pinned by a click or following the mouse: a query of the
	// left column, or a key of the right one when focusKey.
	lines           headViewLayout
	focused, pinned bool
	focusKey        bool
	focus           int
}

func (c *AttentionView) hover(e vugu.DOMEvent) {
	c.hovering = false
	if c.cell <= 0 || len(c.App.Att) == 0 {
		return
	}
	x, y := int(e.PropFloat64("offsetX"))-c.margin, int(e.PropFloat64("offsetY"))-c.margin
	rows, cols := c.rows(c.App.Layer), c.cols(c.App.Layer)
	if x >= 0 && y >= 0 && x/c.cell < len(cols) && y/c.cell < len(rows) {
		// Rows and columns keep their numbers in the full matrix when some are hidden.
		c.hovering, c.hoverI, c.hoverJ = true, rows[y/c.cell], cols[x/c.cell]
	}
}

func (c *AttentionView) unhover() { c.hovering = false }

// readout is the probability under the mouse, with its tokens.
func (c *AttentionView) readout() string {
	m := c.head()
	if !c.hovering || c.hoverI < 0 || c.hoverI >= len(m) || c.hoverJ < 0 || c.hoverJ >= len(m) {
		return "Point at a cell to read its probability."
	}
	tokens := c.App.Att[c.App.Layer].Tokens
	return fmt.Sprintf("%s (row %d) attends to %s (column %d) with probability %.4f",
		tokens[c.hoverI], c.hoverI, tokens[c.hoverJ], c.hoverJ, m[c.hoverI][c.hoverJ])
}

func (c *AttentionView) layers() int { return len(c.App.Att) }

func (c *AttentionView) heads() int {
	if len(c.App.Att) == 0 {
		return 0
	}
	return c.App.Att[0].NumHeads
}

func (c *AttentionView) layerLabel(l int) string { return fmt.Sprintf("layer %d", l) }
func (c *AttentionView) headLabel(h int) string  { return fmt.Sprintf("head %d", h) }

func (c *AttentionView) thumbClass(l, h int) string {
	if l == c.App.Layer && h == c.App.Head {
		return "thumb selected"
	}
	return "thumb"
}

func (c *AttentionView) thumbTitle(l, h int) string {
	return fmt.Sprintf("layer %d, head %d", l, h)
}

func (c *AttentionView) head() [][]float32 {
	return c.App.Att[c.App.Layer].Attentions[c.App.Head]
}

func (c *AttentionView) legend() string {
	return fmt.Sprintf("rows: the token that attends (query) · columns: the token attended to (key) · shade: √probability, from 0 to 1 · largest in this head %.3f", maxOf(c.shownHead(c.App.Layer, c.App.Head)))
}

// hasPair reports whether the maps are of a pair (some token of type 1).
func (c *AttentionView) hasPair() bool {
	return len(c.App.Att) > 0 && slices.Contains(c.App.Att[0].TypeIDs, 1)
}

// seg is the segment filter in force: SegAll without a pair.
func (c *AttentionView) seg() string {
	if !c.hasPair() {
		return SegAll
	}
	return c.App.Seg
}

// shown is the token positions of layer l of token type typ (-1: any) that the maps draw:
// all of them, or all but [CLS] and [SEP] when the user hides those.
func (c *AttentionView) shown(l, typ int) []int {
	r := c.App.Att[l]
	idx := make([]int, 0, len(r.Tokens))
	for i, t := range r.Tokens {
		if c.App.HideSpecial && (t == "[CLS]" || t == "[SEP]") {
			continue
		}
		if typ >= 0 && (i >= len(r.TypeIDs) || r.TypeIDs[i] != typ) {
			continue
		}
		idx = append(idx, i)
	}
	return idx
}

// rows and cols are the token positions of the drawn rows (the tokens that attend) and
// columns (the tokens attended to) of layer l, after the segment filter.
func (c *AttentionView) rows(l int) []int {
	t, _ := segTypes(c.seg())
	return c.shown(l, t)
}

func (c *AttentionView) cols(l int) []int {
	_, t := segTypes(c.seg())
	return c.shown(l, t)
}

// shownHead is head h of layer l with only the shown rows and columns, [len(rows), len(cols)].
// Nothing is renormalised: with tokens hidden or filtered out a row sums to less than 1.
func (c *AttentionView) shownHead(l, h int) [][]float32 {
	m := c.App.Att[l].Attentions[h]
	if !c.App.HideSpecial && c.seg() == SegAll {
		return m
	}
	rows, cols := c.rows(l), c.cols(l)
	out := make([][]float32, len(rows))
	for a, i := range rows {
		out[a] = make([]float32, len(cols))
		for b, j := range cols {
			out[a][b] = m[i][j]
		}
	}
	return out
}

func (c *AttentionView) drawKey(l, h int) string {
	return fmt.Sprintf("%d/%d/%d/%s/%t", c.App.attGen, l, h, c.seg(), c.App.HideSpecial)
}

// exportPNG downloads the large heatmap, or the head view when it is shown, as drawn, as a
// PNG file.
func (c *AttentionView) exportPNG() {
	sel, name := ".heatmap canvas", fmt.Sprintf("bertlab-attention-layer%d-head%d.png", c.App.Layer, c.App.Head)
	if c.App.HeadView {
		sel, name = ".headview canvas", fmt.Sprintf("bertlab-headview-layer%d-head%d.png", c.App.Layer, c.App.Head)
		if c.App.AllHeads {
			name = fmt.Sprintf("bertlab-headview-layer%d-allheads.png", c.App.Layer)
		}
	}
	downloadPNG(sel, name)
}

// canvasIn returns the canvas that holder (an element with no children in the template)
// holds, and whether it is already drawn for key; it creates the canvas when needed. vugu sets
// every attribute of its elements on every render and removes the others, and setting or
// removing a canvas's width clears it: so the canvases are the page's own, out of vugu's sight.
// Each canvas counts its draws in bertlabDraws (for the tests: a render redraws only what
// changed).
func canvasIn(holder js.Value, key string) (canvas js.Value, drawn bool) {
	canvas = holder.Get("firstElementChild")
	if holder.Get("childElementCount").Int() != 1 || canvas.Get("tagName").String() != "CANVAS" {
		canvas = js.Global().Get("document").Call("createElement", "canvas")
		holder.Call("replaceChildren", canvas)
	}
	if k := canvas.Get("bertlabKey"); k.Truthy() && k.String() == key {
		return canvas, true
	}
	canvas.Set("bertlabKey", key)
	draws := 0
	if n := canvas.Get("bertlabDraws"); n.Type() == js.TypeNumber {
		draws = n.Int()
	}
	canvas.Set("bertlabDraws", draws+1)
	return canvas, false
}

// drawThumb draws head h of layer l, one pixel per query-key pair, unless its canvas already
// shows it (vugu calls this on every render).
func (c *AttentionView) drawThumb(holder js.Value, l, h int) {
	canvas, drawn := canvasIn(holder, c.drawKey(l, h))
	if drawn {
		return
	}
	m := c.shownHead(l, h)
	R, C := dims(m)
	if R == 0 || C == 0 {
		canvas.Set("width", 1)
		canvas.Set("height", 1)
		return
	}
	canvas.Set("width", C)
	canvas.Set("height", R)
	ctx := canvas.Call("getContext", "2d")
	ctx.Call("putImageData", heatImage(ctx, m), 0, 0)
}

// dims is the number of rows and columns of m.
func dims(m [][]float32) (rows, cols int) {
	if len(m) == 0 {
		return 0, 0
	}
	return len(m), len(m[0])
}

// Layout of the large heatmap, in CSS pixels.
const (
	bigMaxSide = 560 // the matrix side is at most this
	bigMinCell = 4
	bigMaxCell = 36
	labelFont  = `12px ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace`
)

// drawBig draws the selected head with token labels: queries down the left, keys along the top.
func (c *AttentionView) drawBig(holder js.Value) {
	canvas, drawn := canvasIn(holder, c.drawKey(c.App.Layer, c.App.Head))
	if drawn {
		return
	}
	m := c.shownHead(c.App.Layer, c.App.Head)
	all := c.App.Att[c.App.Layer].Tokens
	var rowTok, colTok []string
	for _, i := range c.rows(c.App.Layer) {
		rowTok = append(rowTok, all[i])
	}
	for _, j := range c.cols(c.App.Layer) {
		colTok = append(colTok, all[j])
	}
	R, C := len(rowTok), len(colTok)
	cell := min(max(bigMaxSide/max(R, C, 1), bigMinCell), bigMaxCell)
	// Label every token when the rows are tall enough for the font, else every few.
	every := 1
	for cell*every < 13 {
		every++
	}
	ctx := canvas.Call("getContext", "2d")
	ctx.Set("font", labelFont)
	label := 0.0
	for _, t := range append(slices.Clone(rowTok), colTok...) {
		label = max(label, ctx.Call("measureText", t).Get("width").Float())
	}
	margin := int(label) + 10
	c.margin, c.cell = margin, cell
	canvas.Set("bertlabMargin", margin) // for tests that point at a cell
	canvas.Set("bertlabCell", cell)
	canvas.Set("bertlabRows", R)
	canvas.Set("bertlabCols", C)
	canvas.Set("bertlabValues", joinValues(m)) // the matrix as drawn, row by row
	wide, high := C*cell, R*cell
	w, hgt := margin+wide+2, margin+high+2
	ctx = whiteCanvas(canvas, float64(w), float64(hgt))

	if R == 0 || C == 0 {
		return
	}
	// The matrix: one pixel per pair in an offscreen canvas, scaled up without smoothing.
	off := js.Global().Get("document").Call("createElement", "canvas")
	off.Set("width", C)
	off.Set("height", R)
	octx := off.Call("getContext", "2d")
	octx.Call("putImageData", heatImage(octx, m), 0, 0)
	ctx.Set("imageSmoothingEnabled", false)
	ctx.Call("drawImage", off, margin, margin, wide, high)
	ctx.Set("strokeStyle", "#cbd5e1")
	ctx.Set("lineWidth", 1)
	ctx.Call("strokeRect", float64(margin)-0.5, float64(margin)-0.5, wide+1, high+1)

	ctx.Set("font", labelFont)
	ctx.Set("fillStyle", "#334155")
	ctx.Set("textBaseline", "middle")
	ctx.Set("textAlign", "right")
	for i := 0; i < R; i += every {
		ctx.Call("fillText", rowTok[i], margin-6, margin+i*cell+cell/2)
	}
	// Key labels, rotated to read bottom-up.
	ctx.Set("textAlign", "left")
	for j := 0; j < C; j += every {
		ctx.Call("save")
		ctx.Call("translate", margin+j*cell+cell/2, margin-6)
		ctx.Call("rotate", -1.5707963267948966)
		ctx.Call("fillText", colTok[j], 0, 0)
		ctx.Call("restore")
	}
}

// heatImage turns a [R, C] matrix of probabilities into an ImageData. The shade is √p on a
// fixed scale, so that heads can be compared: a head that spreads its attention is pale, one
// that picks a single token dark, and the square root keeps a uniform row over a short
// sentence visible.
func heatImage(ctx js.Value, m [][]float32) js.Value {
	R, C := dims(m)
	img := ctx.Call("createImageData", C, R)
	px := make([]byte, 4*R*C)
	for i, row := range m {
		for j, v := range row {
			r, g, b := ramp(math.Sqrt(max(float64(v), 0)))
			o := 4 * (i*C + j)
			px[o], px[o+1], px[o+2], px[o+3] = r, g, b, 255
		}
	}
	js.CopyBytesToJS(img.Get("data"), px)
	return img
}

func maxOf(m [][]float32) float32 {
	var mx float32
	for _, row := range m {
		for _, v := range row {
			mx = max(mx, v)
		}
	}
	return mx
}

// ramp maps t in [0, 1] to a white-to-navy colour (ColorBrewer "Blues" ends).
func ramp(t float64) (r, g, b byte) {
	t = min(max(t, 0), 1)
	lerp := func(a, b float64) byte { return byte(a + (b-a)*t + 0.5) }
	return lerp(247, 8), lerp(251, 48), lerp(255, 107)
}
