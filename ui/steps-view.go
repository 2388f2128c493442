package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/bertlab/bertlab/core/pipeline"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// StepsView is "Inside a layer": the operations of one layer for one token, one at a time, each
// with the vectors the model computed drawn as heat strips on <canvas>.
type StepsView struct {
	App *App

	hovering bool
	hoverK   int // vector of the step
	hoverI   int // element of the vector
}

func (c *StepsView) tokens() []string {
	if c.App.Tok == nil {
		return nil
	}
	return c.App.Tok.Tokens
}

func (c *StepsView) tokClass(i int) string {
	if i == c.App.Token {
		return "stok selected"
	}
	return "stok"
}

func (c *StepsView) tokTitle(i int) string {
	return fmt.Sprintf("follow token %d through the layer", i)
}

func (c *StepsView) layerLabel() string {
	return fmt.Sprintf("layer %d of %d", c.App.Layer, c.App.numLayers())
}

func (c *StepsView) stepLabel() string {
	return fmt.Sprintf("step %d of %d", c.App.StepI+1, NumSteps)
}

func (c *StepsView) navClass(i int) string {
	if i == c.App.StepI {
		return "navstep current"
	}
	return "navstep"
}

// cur is the step shown; nil until the engine answered.
func (c *StepsView) cur() *pipeline.Step {
	s := c.App.Steps
	if s == nil || c.App.StepI < 0 || c.App.StepI >= len(s.Steps) {
		return nil
	}
	return &s.Steps[c.App.StepI]
}

// cardClass marks a walk that is not yet for the selected layer and token.
func (c *StepsView) cardClass() string {
	if s := c.App.Steps; s != nil && (s.Layer != c.App.Layer || s.Token != c.App.Token) {
		return "stepcard stale"
	}
	return "stepcard"
}

func (c *StepsView) vec(k int) *pipeline.Vector {
	s := c.cur()
	if s == nil || k < 0 || k >= len(s.Vectors) {
		return nil
	}
	return &s.Vectors[k]
}

// summary prints a few of the vector's values and its range.
func (c *StepsView) summary(k int) string {
	v := c.vec(k)
	if v == nil || len(v.Values) == 0 {
		return ""
	}
	lo, hi := v.Values[0], v.Values[0]
	for _, x := range v.Values {
		lo, hi = min(lo, x), max(hi, x)
	}
	var b strings.Builder
	if v.Labels != nil {
		for j, x := range v.Values {
			if j == 6 {
				b.WriteString(" …")
				break
			}
			if j > 0 {
				b.WriteString("  ")
			}
			fmt.Fprintf(&b, "%s %s", v.Labels[j], num(x))
		}
		if v.Max == 1 { // probabilities: show that they sum to 1
			var sum float64
			for _, x := range v.Values {
				sum += float64(x)
			}
			fmt.Fprintf(&b, "  (sum %.4f)", sum)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%d values in [%s, %s]: ", len(v.Values), num(lo), num(hi))
	for j, x := range v.Values[:min(4, len(v.Values))] {
		if j > 0 {
			b.WriteString(" ")
		}
		b.WriteString(num(x))
	}
	if len(v.Values) > 4 {
		b.WriteString(" …")
	}
	return b.String()
}

func num(x float32) string {
	switch {
	case x <= -1e30:
		return "−∞"
	case x == 0:
		return "0"
	}
	return strings.ReplaceAll(fmt.Sprintf("%.4f", x), "-", "−")
}

func (c *StepsView) readout() string {
	v := c.vec(c.hoverK)
	if !c.hovering || v == nil || c.hoverI < 0 || c.hoverI >= len(v.Values) {
		return "Point at a strip to read a value."
	}
	x := v.Values[c.hoverI]
	if v.Labels != nil {
		return fmt.Sprintf("%s → %s (token %d) = %s", v.Name, v.Labels[c.hoverI], c.hoverI, num(x))
	}
	if v.Heads > 1 {
		d := len(v.Values) / v.Heads
		return fmt.Sprintf("%s, head %d, dimension %d (element %d) = %s", v.Name, c.hoverI/d, c.hoverI%d, c.hoverI, num(x))
	}
	return fmt.Sprintf("%s, dimension %d = %s", v.Name, c.hoverI, num(x))
}

func (c *StepsView) hover(e vugu.DOMEvent, k int) {
	c.hovering = false
	v := c.vec(k)
	if v == nil {
		return
	}
	x := int(e.PropFloat64("offsetX"))
	if i := stripIndex(len(v.Values), stripHeads(v), stripWidth(v), x); i >= 0 {
		c.hovering, c.hoverK, c.hoverI = true, k, i
	}
}

func (c *StepsView) unhover() { c.hovering = false }

// Layout of a strip, in CSS pixels.
const (
	stripMaxW   = 640
	stripH      = 18
	stripGap    = 8 // between heads
	labelledH   = 40
	labelledMin = 14
	labelledMax = 64
)

func stripHeads(v *pipeline.Vector) int {
	if v.Heads > 1 && len(v.Values)%v.Heads == 0 {
		return v.Heads
	}
	return 1
}

// stripWidth is the strip's width: one cell per value up to stripMaxW, wider cells for a row
// over the tokens so that their labels fit.
func stripWidth(v *pipeline.Vector) int {
	n := max(len(v.Values), 1)
	if v.Labels != nil {
		return n * min(max(stripMaxW/n, labelledMin), labelledMax)
	}
	return min(stripMaxW, n*12)
}

// stripIndex maps pixel column x of a strip of width w to the element it shows, -1 for a gap.
func stripIndex(n, heads, w, x int) int {
	if n == 0 || x < 0 || x >= w {
		return -1
	}
	seg := float64(w-(heads-1)*stripGap) / float64(heads)
	d := n / heads
	h := int(float64(x) / (seg + stripGap))
	in := float64(x) - float64(h)*(seg+stripGap)
	if h >= heads || in >= seg {
		return -1
	}
	return h*d + min(int(in*float64(d)/seg), d-1)
}

// drawStrip draws vector k of the current step, unless its canvas already shows it.
func (c *StepsView) drawStrip(holder js.Value, k int) {
	// A panic here would stop the page's render loop for good: log it instead.
	defer func() {
		if r := recover(); r != nil {
			js.Global().Get("console").Call("error", fmt.Sprintf("drawing a strip: %v", r))
		}
	}()
	v := c.vec(k)
	if v == nil {
		return
	}
	canvas, drawn := canvasIn(holder, fmt.Sprintf("%d/%d/%d", c.App.stepsGen, c.App.StepI, k))
	if drawn {
		return
	}
	n, heads, w := len(v.Values), stripHeads(v), stripWidth(v)
	h := stripH
	if v.Labels != nil {
		h = labelledH
	}
	scale := float64(v.Max)
	for _, x := range v.Values {
		if x > -1e30 && v.Max <= 0 {
			scale = max(scale, math.Abs(float64(x)))
		}
	}
	dpr := js.Global().Get("devicePixelRatio").Float()
	if dpr < 1 {
		dpr = 1
	}
	canvas.Set("width", int(float64(w)*dpr))
	canvas.Set("height", int(float64(h)*dpr))
	canvas.Get("style").Set("width", fmt.Sprintf("%dpx", w))
	canvas.Get("style").Set("height", fmt.Sprintf("%dpx", h))
	// For tests and the console: the numbers the strip shows.
	vals := make([]any, n)
	for i, x := range v.Values {
		vals[i] = float64(x)
	}
	canvas.Set("bertlabValues", vals)
	ctx := canvas.Call("getContext", "2d")
	// One pixel column per CSS pixel: the colours, then scaled to the device's pixels.
	ch := 1
	img := ctx.Call("createImageData", w, ch)
	px := make([]byte, 4*w*ch)
	for x := 0; x < w; x++ {
		i := stripIndex(n, heads, w, x)
		if i < 0 {
			continue
		}
		r, g, b := diverge(float64(v.Values[i]), scale)
		if v.Labels != nil && x > 0 && stripIndex(n, heads, w, x-1) != i {
			r, g, b = 255, 255, 255 // a thin line between token cells
		}
		px[4*x], px[4*x+1], px[4*x+2], px[4*x+3] = r, g, b, 255
	}
	js.CopyBytesToJS(img.Get("data"), px)
	off := js.Global().Get("document").Call("createElement", "canvas")
	off.Set("width", w)
	off.Set("height", ch)
	off.Call("getContext", "2d").Call("putImageData", img, 0, 0)
	ctx.Call("setTransform", dpr, 0, 0, dpr, 0, 0)
	ctx.Set("imageSmoothingEnabled", false)
	cellH := h
	if v.Labels != nil {
		cellH = 22
	}
	ctx.Call("drawImage", off, 0, 0, w, cellH)
	if v.Labels == nil {
		return
	}
	// A row over the tokens: the value in each cell when it fits, the token under it.
	cell := w / n
	ctx.Set("textAlign", "center")
	ctx.Set("textBaseline", "middle")
	for i, x := range v.Values {
		cx := float64(i*cell) + float64(cell)/2
		if cell >= 40 {
			ctx.Set("font", `10px ui-monospace, Menlo, Consolas, monospace`)
			if x <= -1e30 || math.Sqrt(math.Abs(float64(x))/scale) > 0.7 {
				ctx.Set("fillStyle", "#ffffff")
			} else {
				ctx.Set("fillStyle", "#1e293b")
			}
			ctx.Call("fillText", shortNum(x), cx, 11)
		}
		ctx.Set("font", `11px ui-monospace, Menlo, Consolas, monospace`)
		ctx.Set("fillStyle", "#475569")
		t := []rune(v.Labels[i])
		for len(t) > 1 && ctx.Call("measureText", string(t)).Get("width").Float() > float64(cell-2) {
			t = t[:len(t)-1]
		}
		ctx.Call("fillText", string(t), cx, 32)
	}
}

func shortNum(x float32) string {
	switch {
	case x <= -1e30:
		return "−∞"
	case math.Abs(float64(x)) >= 100:
		return fmt.Sprintf("%.0f", x)
	case math.Abs(float64(x)) < 0.005:
		return "0.00"
	}
	return fmt.Sprintf("%.2f", x)
}

// diverge maps x in [-scale, scale] to blue (negative), white (0) and red (positive).
func diverge(x, scale float64) (r, g, b byte) {
	if scale <= 0 || x <= -1e30 {
		if x <= -1e30 {
			return 30, 41, 59
		}
		return 255, 255, 255
	}
	t := math.Sqrt(min(math.Abs(x)/scale, 1))
	lerp := func(a, b float64) byte { return byte(a + (b-a)*t + 0.5) }
	if x < 0 {
		return lerp(255, 33), lerp(255, 102), lerp(255, 172)
	}
	return lerp(255, 178), lerp(255, 24), lerp(255, 43)
}
