package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/bertlab/bertlab/core/pipeline"
)

// CompareView is "Compare": two sentences' predictions at the same masks and one head's
// attention, side by side (compare.go holds its state and requests).
type CompareView struct {
	App *App
}

func (c *CompareView) keydown(e vugu.DOMEvent) {
	if e.PropString("key") == "Enter" && !e.PropBool("shiftKey") {
		e.PreventDefault()
		c.App.CommitCompare()
	}
}

// sentence1 is sentence 1 as compared: the page's sentence with its masked words as [MASK].
func (c *CompareView) sentence1() string { return c.App.MaskedText }

func (c *CompareView) optClass(on bool) string {
	if on {
		return "opt active"
	}
	return "opt"
}

func maskCount(f *pipeline.FillMaskResult) int {
	if f == nil {
		return 0
	}
	return len(f.Masks)
}

// masks is the number of masks compared: the i-th [MASK] of sentence 1 against the i-th of
// sentence 2.
func (c *CompareView) masks() int {
	return min(maskCount(c.App.Compare.Fill1), maskCount(c.App.Compare.Fill2))
}

func (c *CompareView) maskNote() string {
	n1, n2 := maskCount(c.App.Compare.Fill1), maskCount(c.App.Compare.Fill2)
	switch {
	case n1 == 0 && n2 == 0:
		return "Neither sentence has a [MASK]: mask a word in each to compare the predictions."
	case n1 == 0 || n2 == 0:
		return fmt.Sprintf("Sentence 1 has %d masks and sentence 2 has %d: mask a word in both to compare the predictions.", n1, n2)
	case n1 != n2:
		return fmt.Sprintf("Sentence 1 has %d masks and sentence 2 has %d: the first %d of each are compared, in order.", n1, n2, min(n1, n2))
	}
	return ""
}

func (c *CompareView) maskTitle(i int) string {
	return fmt.Sprintf("mask %d: the top %d of either sentence, largest change first (≤: beyond the sentence's top %d)", i+1, compareTopK, pipeline.MaxTopK)
}

func (c *CompareView) rows(i int) []CompareRow {
	cl := &c.App.Compare
	if i >= c.masks() {
		return nil
	}
	return compareRows(cl.Fill1.Masks[i], cl.Fill2.Masks[i], compareTopK)
}

func (c *CompareView) belowAttr(r CompareRow) string {
	switch {
	case r.Below1 && r.Below2:
		return "12"
	case r.Below1:
		return "1"
	case r.Below2:
		return "2"
	}
	return ""
}

// sig3 is p as a percentage to 3 significant digits: a small model's probabilities near
// 1/vocabulary still show how they differ.
func sig3(p float64) string { return strconv.FormatFloat(100*p, 'g', 3, 64) + "%" }

// probText is p as a percentage, or "≤ p" when the candidate is beyond the sentence's listed
// predictions (p is then the last listed one).
func (c *CompareView) probText(p float64, below bool) string {
	if below {
		return "≤ " + sig3(p)
	}
	return sig3(p)
}

// diffText is p2 − p1 in percentage points, to 3 significant digits; "≈" when one side is a bound.
func (c *CompareView) diffText(r CompareRow) string {
	d := strconv.FormatFloat(100*r.Diff(), 'g', 3, 64)
	if r.Diff() >= 0 {
		d = "+" + d
	}
	if r.Below1 || r.Below2 {
		return "≈" + d
	}
	return d
}

func (c *CompareView) diffClass(r CompareRow) string {
	if r.Diff() >= 0 {
		return "pct up"
	}
	return "pct down"
}

func (c *CompareView) headsN() int {
	if a := c.App.Compare.Att1; len(a) > 0 {
		return a[0].NumHeads
	}
	return 0
}

// layer and head are the page's, kept within the model.
func (c *CompareView) layer() int {
	return min(max(c.App.Layer, 0), max(len(c.App.Compare.Att1)-1, 0))
}

func (c *CompareView) head() int {
	return min(max(c.App.Head, 0), max(c.headsN()-1, 0))
}

func (c *CompareView) matrix(s int) ([][]float32, []string) {
	att := c.App.Compare.Att1
	if s == 2 {
		att = c.App.Compare.Att2
	}
	l, h := c.layer(), c.head()
	if l >= len(att) || h >= len(att[l].Attentions) {
		return nil, nil
	}
	return att[l].Attentions[h], att[l].Tokens
}

func (c *CompareView) sameLength() bool {
	a, _ := c.matrix(1)
	b, _ := c.matrix(2)
	_, ok := attentionDiff(a, b)
	return ok && len(a) > 0
}

func (c *CompareView) attNote() string {
	a, _ := c.matrix(1)
	b, _ := c.matrix(2)
	cut := ""
	for s, att := range [][]pipeline.AttentionResult{c.App.Compare.Att1, c.App.Compare.Att2} {
		if len(att) > 0 && att[0].Truncated {
			cut += fmt.Sprintf("Sentence %d was cut to the model's %d positions. ", s+1, len(att[0].Tokens))
		}
	}
	return cut + c.attText(len(a), len(b))
}

func (c *CompareView) attText(n1, n2 int) string {
	if c.sameLength() {
		return fmt.Sprintf("Layer %d, head %d: sentence 2's attention minus sentence 1's, token by token (both have %d tokens). Red: sentence 2 attends more; blue: less. Rows are the queries, columns the keys; the row labels are sentence 1's tokens, the column labels sentence 2's.", c.layer(), c.head(), n1)
	}
	return fmt.Sprintf("Layer %d, head %d: sentence 1 has %d tokens and sentence 2 has %d, so no token-by-token difference can be drawn; here is each sentence's own attention.", c.layer(), c.head(), n1, n2)
}

func (c *CompareView) drawKey(what string) string {
	return fmt.Sprintf("%s/%d/%d/%d", what, c.App.Compare.gen, c.layer(), c.head())
}

// Layout of the compare heatmaps, in CSS pixels.
const (
	cmpMaxSide = 300
	cmpMinCell = 4
	cmpMaxCell = 28
)

// drawMatrix draws m ([R, C]) with row labels rows and column labels cols, each cell coloured by
// color(v); it returns nothing (the caller sets the values for tests).
func drawMatrix(canvas js.Value, title string, m [][]float64, rows, cols []string, color func(float64) string) {
	R, C := len(m), 0
	if R > 0 {
		C = len(m[0])
	}
	cell := float64(min(max(cmpMaxSide/max(R, C, 1), cmpMinCell), cmpMaxCell))
	mctx := canvas.Call("getContext", "2d")
	mctx.Set("font", labelFont)
	label := 0.0
	for _, t := range append(append([]string{}, rows...), cols...) {
		label = max(label, mctx.Call("measureText", t).Get("width").Float())
	}
	margin := math.Ceil(label) + 10
	top := margin + 18
	w, h := margin+float64(C)*cell+4, top+float64(R)*cell+4
	w = max(w, 200)
	ctx := whiteCanvas(canvas, w, h)
	ctx.Set("font", embBold)
	ctx.Set("fillStyle", "#222")
	ctx.Call("fillText", title, 2, 14)
	for i, row := range m {
		for j, v := range row {
			ctx.Set("fillStyle", color(v))
			ctx.Call("fillRect", margin+float64(j)*cell, top+float64(i)*cell, cell, cell)
		}
	}
	ctx.Set("strokeStyle", "#cbd5e1")
	ctx.Set("lineWidth", 1)
	ctx.Call("strokeRect", margin-0.5, top-0.5, float64(C)*cell+1, float64(R)*cell+1)
	every := 1
	for cell*float64(every) < 13 {
		every++
	}
	ctx.Set("font", labelFont)
	ctx.Set("fillStyle", "#334155")
	ctx.Set("textBaseline", "middle")
	ctx.Set("textAlign", "right")
	for i := 0; i < R && i < len(rows); i += every {
		ctx.Call("fillText", rows[i], margin-6, top+float64(i)*cell+cell/2)
	}
	ctx.Set("textAlign", "left")
	for j := 0; j < C && j < len(cols); j += every {
		ctx.Call("save")
		ctx.Call("translate", margin+float64(j)*cell+cell/2, top-6)
		ctx.Call("rotate", -math.Pi/2)
		ctx.Call("fillText", cols[j], 0, 0)
		ctx.Call("restore")
	}
}

// joinValues writes m row by row as "v,v,...", for tests.
func joinValues[T float32 | float64](m [][]T) string {
	var b []string
	for _, row := range m {
		for _, v := range row {
			b = append(b, scoreAttr(float64(v)))
		}
	}
	return strings.Join(b, ",")
}

// drawDiff draws sentence 2's attention minus sentence 1's for the chosen head, on a diverging
// scale whose ends are ± the largest change.
func (c *CompareView) drawDiff(holder js.Value) {
	canvas, drawn := canvasIn(holder, c.drawKey("diff"))
	if drawn {
		return
	}
	a, t1 := c.matrix(1)
	b, t2 := c.matrix(2)
	d, ok := attentionDiff(a, b)
	if !ok {
		return
	}
	m := 0.0
	for _, row := range d {
		for _, v := range row {
			m = math.Max(m, math.Abs(v))
		}
	}
	drawMatrix(canvas, fmt.Sprintf("p2 − p1, layer %d head %d (scale ±%.3f)", c.layer(), c.head(), m), d, t1, t2,
		func(v float64) string { return attrColor(v, m) })
	canvas.Set("bertlabDiff", joinValues(d))
	canvas.Set("bertlabSide", len(d))
}

// drawOwn draws sentence s's own attention for the chosen head (when the lengths differ).
func (c *CompareView) drawOwn(holder js.Value, s int) {
	canvas, drawn := canvasIn(holder, c.drawKey("own"+strconv.Itoa(s)))
	if drawn {
		return
	}
	a, toks := c.matrix(s)
	m := make([][]float64, len(a))
	for i, row := range a {
		m[i] = make([]float64, len(row))
		for j, v := range row {
			m[i][j] = float64(v)
		}
	}
	drawMatrix(canvas, fmt.Sprintf("sentence %d, layer %d head %d", s, c.layer(), c.head()), m, toks, toks,
		func(v float64) string {
			r, g, b := ramp(math.Sqrt(max(v, 0)))
			return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
		})
	canvas.Set("bertlabValues", joinValues(m))
}

// exportPNG downloads the difference heatmap (or sentence 1's own, when no difference is
// drawn) as a PNG file.
func (c *CompareView) exportPNG() {
	downloadPNG(".cmpmap canvas", fmt.Sprintf("bertlab-compare-layer%d-head%d.png", c.layer(), c.head()))
}
