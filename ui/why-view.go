package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vugu/vugu/js"

	"github.com/bertlab/bertlab/core/explain"
)

// WhyView is "Why?": attributions, the logit lens and head ablation for one answer of the model
// (why.go holds its state and requests).
type WhyView struct {
	App *App
}

// candidates are the answers the view can explain: the model's top predictions at the first
// [MASK] (the lens's last layer is the fill-mask output).
func (c *WhyView) candidates() []explain.Prediction {
	if ls := c.lensLayers(); len(ls) > 0 {
		return ls[len(ls)-1].Top
	}
	return nil
}

func (c *WhyView) lensLayers() []explain.LensLayer {
	w := &c.App.Why
	if w.Lens == nil || w.Lens.Lens == nil || len(w.Lens.Lens.Positions) == 0 {
		return nil
	}
	return w.Lens.Lens.Positions[0].Layers
}

func (c *WhyView) targetClass(t string) string {
	w := &c.App.Why
	if (t == "isnext" && w.Attr != nil && w.Attr.Target.Kind == explain.IsNext) || (t != "isnext" && t == w.Word) {
		return "opt target active"
	}
	return "opt target"
}

func (c *WhyView) optClass(on bool) string {
	if on {
		return "opt active"
	}
	return "opt"
}

func (c *WhyView) steps() int {
	if c.App.Why.Steps == 0 {
		return explain.DefaultSteps
	}
	return c.App.Why.Steps
}

func (c *WhyView) score(i int) float64 {
	if a := c.App.Why.Attr; a != nil && a.Attribution != nil && i < len(a.Attribution.Scores) {
		return a.Attribution.Scores[i]
	}
	return 0
}

// maxAbs is the largest attribution in magnitude: the colour scale's end.
func (c *WhyView) maxAbs() float64 {
	m := 0.0
	if a := c.App.Why.Attr; a != nil && a.Attribution != nil {
		for _, s := range a.Attribution.Scores {
			m = math.Max(m, math.Abs(s))
		}
	}
	return m
}

// attrColor is a diverging colour for score s on the scale ±m: red raises the logit, blue
// lowers it, white is no effect.
func attrColor(s, m float64) string {
	if m == 0 {
		return "rgb(255,255,255)"
	}
	t := math.Min(math.Abs(s)/m, 1)
	if s >= 0 {
		return fmt.Sprintf("rgb(%d,%d,%d)", 255, int(255-t*(255-70)), int(255-t*(255-60)))
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", int(255-t*(255-50)), int(255-t*(255-110)), 255)
}

func (c *WhyView) attrStyle(i int) string {
	s, m := c.score(i), c.maxAbs()
	style := "background: " + attrColor(s, m)
	if m > 0 && math.Abs(s)/m > 0.6 {
		style += "; color: #fff"
	}
	return style
}

func (c *WhyView) attrScore(i int) string { return scoreAttr(c.score(i)) }

func (c *WhyView) attrTitle(i int) string {
	return fmt.Sprintf("%s: %+.4f (share of the sum %+.1f%%)", c.App.Why.Attr.Tokens[i], c.score(i), 100*c.share(i))
}

func (c *WhyView) share(i int) float64 {
	a := c.App.Why.Attr.Attribution
	if a == nil || a.Sum == 0 {
		return 0
	}
	return c.score(i) / a.Sum
}

// attrSummary says what the scores add up to and, for integrated gradients, how far they are from
// the change of the logit (their completeness gap).
func (c *WhyView) attrSummary() string {
	a := c.App.Why.Attr.Attribution
	if a == nil {
		return ""
	}
	if a.Method == explain.MethodIG {
		return fmt.Sprintf("Integrated gradients, %d steps from the [%s] baseline: the scores sum to %.4f; the logit went from %.4f at the baseline to %.4f, a change of %.4f. Completeness gap %.3g (%.2f%% of the change): the fewer steps, the larger.",
			a.Steps, strings.ToUpper(a.Baseline.Name), a.Sum, a.BaselineLogit, a.Logit, a.Logit-a.BaselineLogit, a.Gap, 100*a.RelGap)
	}
	return fmt.Sprintf("Gradient × input on the embedding output: logit %.4f, the scores sum to %.4f. Red raised the logit, blue lowered it; hover a token for its value.", a.Logit, a.Sum)
}

// layerName names the lens's layer l (0: the embedding output; l: the output of block l, which
// the attention view and the head grid count from 0 as layer l-1).
func layerName(l int) string {
	if l == 0 {
		return "embeddings"
	}
	return "layer " + strconv.Itoa(l-1)
}

func (c *WhyView) lensClass(tok string) string {
	if tok == c.App.Why.Word {
		return "lenstop hit"
	}
	return "lenstop"
}

func (c *WhyView) layers() int {
	if c.App.Info == nil {
		return 0
	}
	return c.App.Info.Config.NumHiddenLayers
}

func (c *WhyView) headsN() int {
	if c.App.Info == nil {
		return 0
	}
	return c.App.Info.Config.NumAttentionHeads
}

func (c *WhyView) isOff(l, h int) bool {
	return slices.Contains(c.App.Why.Off, explain.Head{Layer: l, Head: h})
}

func (c *WhyView) headClass(l, h int) string {
	if c.isOff(l, h) {
		return "hcell off"
	}
	return "hcell"
}

func (c *WhyView) importance(l, h int) (float64, bool) {
	im := c.App.Why.Imp
	if im == nil || l >= len(im.Normalized) || h >= len(im.Normalized[l]) {
		return 0, false
	}
	return im.Normalized[l][h], true
}

func (c *WhyView) importanceAttr(l, h int) string {
	if im := c.App.Why.Imp; im != nil && l < len(im.Raw) && h < len(im.Raw[l]) {
		return scoreAttr(im.Raw[l][h])
	}
	return ""
}

// headStyle colours a ranked head by its importance within its layer (normalised to [0, 1]).
func (c *WhyView) headStyle(l, h int) string {
	v, ok := c.importance(l, h)
	if !ok {
		return ""
	}
	v = math.Min(math.Max(v, 0), 1)
	style := fmt.Sprintf("background: rgba(214, 90, 30, %.3f)", 0.08+0.92*v)
	if v > 0.55 {
		style += "; color: #fff"
	}
	return style
}

func (c *WhyView) headTitle(l, h int) string {
	state := "on: click to switch it off"
	if c.isOff(l, h) {
		state = "off: click to switch it back on"
	}
	s := fmt.Sprintf("head %d.%d, %s", l, h, state)
	if im := c.App.Why.Imp; im != nil && l < len(im.Raw) && h < len(im.Raw[l]) {
		s += fmt.Sprintf("; importance %.4g (%.2f of the layer's)", im.Raw[l][h], im.Normalized[l][h])
	}
	return s
}

func (c *WhyView) ablPos() *explain.AblatedPosition {
	a := c.App.Why.Abl
	if a == nil || a.Ablation == nil || len(a.Ablation.Positions) == 0 {
		return nil
	}
	return &a.Ablation.Positions[0]
}

func (c *WhyView) ablBefore() []explain.Shift {
	if p := c.ablPos(); p != nil {
		return p.Before
	}
	return nil
}

func (c *WhyView) ablAfter() []explain.Shift {
	if p := c.ablPos(); p != nil {
		return p.After
	}
	return nil
}

func (c *WhyView) offTitle() string {
	if len(c.App.Why.Off) == 0 {
		return "heads off: none (click heads above)"
	}
	return "heads off: " + heads(c.App.Why.Off)
}

func (c *WhyView) shiftText(s explain.Shift) string {
	return fmt.Sprintf("%s (was %s)", percent(s.After), percent(s.Before))
}

// Layout of the lens chart, in CSS pixels.
const (
	lensW, lensH       = 360.0, 220.0
	lensL, lensR       = 44.0, 12.0
	lensTop, lensBotom = 28.0, 34.0
)

// drawLens draws the target word's probability layer by layer, unless the canvas shows it.
func (c *WhyView) drawLens(holder js.Value) {
	w := &c.App.Why
	ls := c.lensLayers()
	if len(ls) == 0 {
		return
	}
	canvas, drawn := canvasIn(holder, fmt.Sprintf("%d/%s", w.gen, w.Word))
	if drawn {
		return
	}
	ctx := whiteCanvas(canvas, lensW, lensH)
	pw, ph := lensW-lensL-lensR, lensH-lensTop-lensBotom
	x := func(i int) float64 { return lensL + pw*float64(i)/float64(max(len(ls)-1, 1)) }
	ctx.Set("fillStyle", "#222")
	ctx.Set("font", embBold)
	ctx.Call("fillText", fmt.Sprintf("P(%s) layer by layer", w.Word), lensL, 16)
	ctx.Set("font", embSans)
	var probs []float64
	for _, ly := range ls {
		p := 0.0
		if len(ly.Candidates) > 0 {
			p = ly.Candidates[0]
		}
		probs = append(probs, p)
	}
	// The axis ends at the largest probability rounded up to 1, 2 or 5 times a power of ten, so
	// that an answer far from certain (a random model's 0.01%) still shows its course.
	top := niceCeil(slices.Max(probs))
	y := func(p float64) float64 { return lensTop + ph*(1-p/top) }
	ctx.Set("strokeStyle", "#ddd")
	ctx.Set("lineWidth", 1)
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		ctx.Call("beginPath")
		ctx.Call("moveTo", lensL, y(f*top))
		ctx.Call("lineTo", lensL+pw, y(f*top))
		ctx.Call("stroke")
		ctx.Set("fillStyle", "#666")
		ctx.Call("fillText", strconv.FormatFloat(100*f*top, 'g', 3, 64)+"%", 4, y(f*top)+4)
	}
	for i, ly := range ls {
		ctx.Set("fillStyle", "#666")
		label := strconv.Itoa(ly.Layer - 1)
		if ly.Layer == 0 {
			label = "emb"
		}
		ctx.Call("fillText", label, x(i)-8, lensH-lensBotom+16)
	}
	ctx.Call("fillText", "layer", lensL+pw/2-12, lensH-4)
	ctx.Set("strokeStyle", "#d65a1e")
	ctx.Set("lineWidth", 2)
	ctx.Call("beginPath")
	for i, p := range probs {
		if i == 0 {
			ctx.Call("moveTo", x(i), y(p))
		} else {
			ctx.Call("lineTo", x(i), y(p))
		}
	}
	ctx.Call("stroke")
	ctx.Set("fillStyle", "#d65a1e")
	for i, p := range probs {
		ctx.Call("beginPath")
		ctx.Call("arc", x(i), y(p), 3.5, 0, 2*math.Pi)
		ctx.Call("fill")
	}
	// The plotted probabilities, for tests.
	b := make([]string, len(probs))
	for i, p := range probs {
		b[i] = scoreAttr(p)
	}
	canvas.Set("bertlabProbs", strings.Join(b, ","))
}

// niceCeil is the smallest of 1, 2 or 5 times a power of ten at least v (v in (0, 1]); 1 for
// v <= 0 or above 0.5.
func niceCeil(v float64) float64 {
	if v <= 0 || v > 0.5 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// exportPNG downloads the lens chart, as drawn, as a PNG file.
func (c *WhyView) exportPNG() {
	downloadPNG(".lenschart canvas", fmt.Sprintf("bertlab-why-%s.png", fileSafe(c.App.Why.Word)))
}

// fileSafe keeps letters and digits of s for a file name.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "answer"
	}
	return b.String()
}
