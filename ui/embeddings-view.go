package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/bertlab/bertlab/core/pipeline"
)

// EmbeddingsView is "Embeddings": every token of a few sentences as a dot, its hidden state at
// one layer projected to 2-D by a PCA of that layer (pipeline.EmbeddingLayers), drawn on a
// canvas from Go.
type EmbeddingsView struct {
	App *App

	// Where the dots were drawn (CSS pixels in the canvas), for hovering and clicking.
	drawn []embDot
	// The dot under the mouse (an index into the current layer's points), or -1.
	hoverI int
	hovers bool
	// The last width the map was drawn at, for when the page is not laid out (a new element).
	width int
}

// embDot is a drawn point: its index in the layer's points and its place in the canvas.
type embDot struct {
	i      int
	cx, cy float64
}

// embColors tell the sentences apart (Tableau 10, colour-blind friendly enough at this count).
var embColors = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f"}

// embTextColors are embColors darkened for the labels, which must read on white.
var embTextColors = []string{"#2f4a68", "#a65a0e", "#3a6b33", "#a8383a", "#7a4f70", "#3f7a75", "#8a7310", "#5e4638"}

func embColor(s int) string { return embColors[((s%len(embColors))+len(embColors))%len(embColors)] }
func embTextColor(s int) string {
	return embTextColors[((s%len(embTextColors))+len(embTextColors))%len(embTextColors)]
}

// cur is the map of the layer shown, or nil before the engine answered.
func (c *EmbeddingsView) cur() *pipeline.EmbeddingMapResult {
	e := &c.App.Emb
	if e.Layer < 0 || e.Layer >= len(e.Maps) {
		return nil
	}
	return &e.Maps[e.Layer]
}

func (c *EmbeddingsView) pointCount() int {
	if m := c.cur(); m != nil {
		return len(m.Points)
	}
	return 0
}

func (c *EmbeddingsView) hiddenSize() string {
	if c.App.Info != nil && c.App.Info.Config.HiddenSize > 0 {
		return strconv.Itoa(c.App.Info.Config.HiddenSize)
	}
	return "H"
}

func (c *EmbeddingsView) canAdd() bool {
	return len(c.App.Emb.Sentences) < pipeline.MaxEmbeddingSentences
}

func (c *EmbeddingsView) swatchStyle(s int) string { return "background:" + embColor(s) }

func (c *EmbeddingsView) maxLayer() int {
	if n := len(c.App.Emb.Maps); n > 0 {
		return n - 1
	}
	return c.App.numLayers()
}

func (c *EmbeddingsView) layerValue() string { return strconv.Itoa(c.App.Emb.Layer) }

func (c *EmbeddingsView) slide(e vugu.DOMEvent) {
	if l, err := strconv.Atoi(e.PropString("target", "value")); err == nil {
		c.App.SetEmbLayer(l)
	}
}

func (c *EmbeddingsView) layerLabel() string {
	if c.App.Emb.Layer == 0 {
		return "layer 0 · embeddings"
	}
	return fmt.Sprintf("layer %d of %d", c.App.Emb.Layer, c.maxLayer())
}

func (c *EmbeddingsView) addKey(e vugu.DOMEvent) {
	if e.PropString("key") == "Enter" {
		e.PreventDefault()
		// The box's value, not Draft: a key pressed right after typing may come before @input.
		c.App.EmbTyped(e.PropString("target", "value"))
		c.App.AddSentence()
	}
}

func (c *EmbeddingsView) truncated() bool {
	if m := c.cur(); m != nil {
		for _, t := range m.Truncated {
			if t {
				return true
			}
		}
	}
	return false
}

func (c *EmbeddingsView) legend() string {
	m := c.cur()
	return fmt.Sprintf("axes: the layer's first two principal components, %.1f%% and %.1f%% of the variance of these %d tokens · same scale on both axes · one PCA per layer",
		100*m.Explained[0], 100*m.Explained[1], len(m.Points))
}

// hovered is the point under the mouse, if any.
func (c *EmbeddingsView) hovered() (pipeline.EmbeddingPoint, bool) {
	m := c.cur()
	if !c.hovers || m == nil || c.hoverI < 0 || c.hoverI >= len(m.Points) {
		return pipeline.EmbeddingPoint{}, false
	}
	return m.Points[c.hoverI], true
}

// hoverAttr is "sentence/position" of the hovered point, for tests.
func (c *EmbeddingsView) hoverAttr() string {
	if p, ok := c.hovered(); ok {
		return fmt.Sprintf("%d/%d", p.Sentence, p.Position)
	}
	return ""
}

func (c *EmbeddingsView) readout() string {
	p, ok := c.hovered()
	if !ok {
		if w := c.App.Emb.Word; w != "" && c.cur() != nil {
			return fmt.Sprintf("%q is joined across the sentences (click one of its dots to let go).", w)
		}
		return "Point at a dot to read its token; click it to join that word across the sentences."
	}
	var others []string
	for _, q := range c.cur().Points {
		if q.Token == p.Token && q.Sentence != p.Sentence {
			others = append(others, strconv.Itoa(q.Sentence+1))
		}
	}
	also := ""
	if len(others) > 0 {
		also = " · also in sentence " + strings.Join(dedup(others), ", ")
	}
	return fmt.Sprintf("%s · sentence %d, token %d · PC1 %.4f, PC2 %.4f%s", p.Token, p.Sentence+1, p.Position, p.X, p.Y, also)
}

func dedup(s []string) []string {
	var out []string
	for _, x := range s {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// nearest is the drawn dot within reach of (x, y), or -1.
func (c *EmbeddingsView) nearest(x, y float64) int {
	best, bestD := -1, 10.0*10.0
	for _, d := range c.drawn {
		if dd := (d.cx-x)*(d.cx-x) + (d.cy-y)*(d.cy-y); dd <= bestD {
			best, bestD = d.i, dd
		}
	}
	return best
}

func (c *EmbeddingsView) hover(e vugu.DOMEvent) {
	i := c.nearest(e.PropFloat64("offsetX"), e.PropFloat64("offsetY"))
	c.hovers, c.hoverI = i >= 0, i
}

func (c *EmbeddingsView) unhover() { c.hovers = false }

func (c *EmbeddingsView) click(e vugu.DOMEvent) {
	if i := c.nearest(e.PropFloat64("offsetX"), e.PropFloat64("offsetY")); i >= 0 {
		c.App.SetEmbWord(c.cur().Points[i].Token)
	}
}

// Layout of the map, in CSS pixels.
const (
	embMaxWidth = 1130
	embPad      = 44 // around the dots, room for their labels
	embTop      = 30 // the title line
	embLegendH  = 18 // one legend line per sentence, under the map
	embFont     = `12px ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace`
	embBold     = `bold 13px ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace`
	embSans     = `12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`
)

// draw draws the current layer's map, unless the canvas already shows it.
func (c *EmbeddingsView) draw(holder js.Value) {
	m := c.cur()
	if m == nil {
		return
	}
	e := &c.App.Emb
	width := holder.Get("clientWidth").Int()
	if width < 200 { // not laid out: a holder vugu just made, not yet in the page
		if v := js.Global().Get("document").Call("querySelector", ".embview"); v.Truthy() {
			width = v.Get("clientWidth").Int()
		}
		if width < 200 && c.width > 0 {
			width = c.width
		}
	}
	width = min(max(width, 360), embMaxWidth)
	c.width = width
	hover := -1
	if c.hovers {
		hover = c.hoverI
	}
	canvas, drawn := canvasIn(holder, fmt.Sprintf("%d/%d/%q/%d/%d", e.gen, e.Layer, e.Word, hover, width))
	if drawn {
		return
	}
	plotH := min(max(width*11/20, 320), 600)
	W, H := float64(width), float64(embTop+plotH+embLegendH*len(e.Sentences)+10)
	ctx := whiteCanvas(canvas, W, H)

	// One scale for both axes, so that distances on the screen are distances in the PCA plane.
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range m.Points {
		minX, maxX, minY, maxY = min(minX, p.X), max(maxX, p.X), min(minY, p.Y), max(maxY, p.Y)
	}
	boxL, boxT, boxW, boxH := float64(embPad), float64(embTop+embPad/2), W-2*embPad, float64(plotH)-embPad
	scale := math.Min(boxW/math.Max(maxX-minX, 1e-9), boxH/math.Max(maxY-minY, 1e-9))
	if maxX-minX < 1e-9 && maxY-minY < 1e-9 {
		scale = 1
	}
	midX, midY := (minX+maxX)/2, (minY+maxY)/2
	toX := func(x float64) float64 { return boxL + boxW/2 + (x-midX)*scale }
	toY := func(y float64) float64 { return boxT + boxH/2 - (y-midY)*scale } // up is +PC2

	// The frame and the axes through the mean of the dots (0, 0).
	ctx.Set("strokeStyle", "#e2e8f0")
	ctx.Set("lineWidth", 1)
	ctx.Call("strokeRect", 0.5, float64(embTop)+0.5, W-1, float64(plotH)-1)
	ctx.Call("setLineDash", []any{4, 4})
	ctx.Set("strokeStyle", "#cbd5e1")
	ctx.Call("beginPath")
	if x0 := toX(0); x0 > 0 && x0 < W {
		ctx.Call("moveTo", x0, float64(embTop))
		ctx.Call("lineTo", x0, float64(embTop+plotH))
	}
	if y0 := toY(0); y0 > float64(embTop) && y0 < float64(embTop+plotH) {
		ctx.Call("moveTo", 0, y0)
		ctx.Call("lineTo", W, y0)
	}
	ctx.Call("stroke")
	ctx.Call("setLineDash", []any{})

	ctx.Set("font", embSans)
	ctx.Set("fillStyle", "#334155")
	ctx.Set("textBaseline", "middle")
	ctx.Set("textAlign", "left")
	title := fmt.Sprintf("layer %d of %d", e.Layer, m.NumLayers)
	if e.Layer == 0 {
		title = fmt.Sprintf("layer 0 of %d: the embedding output", m.NumLayers)
	}
	ctx.Call("fillText", fmt.Sprintf("%s · %d tokens · PCA of this layer: PC1 → %.1f%%, PC2 ↑ %.1f%% of the variance", title, len(m.Points), 100*m.Explained[0], 100*m.Explained[1]), 2, embTop/2)

	// The joined word's dots (and the hovered one's), in sentence order.
	hoverTok := ""
	if hover >= 0 && hover < len(m.Points) {
		hoverTok = m.Points[hover].Token
	}
	join := func(tok, color string, width float64) {
		ctx.Set("strokeStyle", color)
		ctx.Set("lineWidth", width)
		ctx.Call("beginPath")
		first := true
		for _, p := range m.Points {
			if p.Token != tok {
				continue
			}
			if first {
				ctx.Call("moveTo", toX(p.X), toY(p.Y))
				first = false
			} else {
				ctx.Call("lineTo", toX(p.X), toY(p.Y))
			}
		}
		ctx.Call("stroke")
	}
	if e.Word != "" {
		join(e.Word, "#475569", 1.5)
	}
	if hoverTok != "" && hoverTok != e.Word {
		join(hoverTok, "#94a3b8", 1)
	}

	// The same token of several sentences in one place (at layer 0, a word at the same position
	// in two sentences has the same embedding): one dot in wedges of their colours, one label.
	// same[i] lists the points drawn as i's dot, i first; it is nil for the others of a group.
	same := make([][]int, len(m.Points))
	owner := make([]int, len(m.Points)) // the first point of i's group
	for i := range owner {
		owner[i] = -1
	}
	for i, p := range m.Points {
		if owner[i] >= 0 {
			continue
		}
		owner[i], same[i] = i, []int{i}
		for j := i + 1; j < len(m.Points); j++ {
			q := m.Points[j]
			if owner[j] < 0 && q.Token == p.Token && math.Abs(toX(q.X)-toX(p.X)) < 1 && math.Abs(toY(q.Y)-toY(p.Y)) < 1 {
				owner[j], same[i] = i, append(same[i], j)
			}
		}
	}

	// The dots: words filled, [CLS], [SEP] and punctuation as rings.
	c.drawn = c.drawn[:0]
	var exposed []map[string]any
	for i, p := range m.Points {
		cx, cy := toX(p.X), toY(p.Y)
		c.drawn = append(c.drawn, embDot{i: i, cx: cx, cy: cy})
		exposed = append(exposed, map[string]any{"x": p.X, "y": p.Y, "cx": cx, "cy": cy, "sentence": p.Sentence, "position": p.Position, "token": p.Token})
		r := 4.5
		if p.Token == e.Word || p.Token == hoverTok {
			r = 6
		}
		switch k := len(same[i]); {
		case k == 0: // drawn with an earlier point
		case k > 1:
			for w, j := range same[i] {
				a0, a1 := -math.Pi/2+2*math.Pi*float64(w)/float64(k), -math.Pi/2+2*math.Pi*float64(w+1)/float64(k)
				ctx.Call("beginPath")
				ctx.Call("moveTo", cx, cy)
				ctx.Call("arc", cx, cy, r+1, a0, a1)
				ctx.Call("closePath")
				ctx.Set("fillStyle", embColor(m.Points[j].Sentence))
				ctx.Call("fill")
			}
		case p.Special || p.Punct:
			ctx.Call("beginPath")
			ctx.Call("arc", cx, cy, r, 0, 2*math.Pi)
			ctx.Set("fillStyle", "#ffffff")
			ctx.Call("fill")
			ctx.Set("strokeStyle", embColor(p.Sentence))
			ctx.Set("lineWidth", 1.5)
			ctx.Call("stroke")
		default:
			ctx.Call("beginPath")
			ctx.Call("arc", cx, cy, r, 0, 2*math.Pi)
			ctx.Set("fillStyle", embColor(p.Sentence))
			ctx.Call("fill")
			ctx.Set("strokeStyle", "#ffffff")
			ctx.Set("lineWidth", 1)
			ctx.Call("stroke")
		}
	}
	if hover >= 0 && hover < len(c.drawn) {
		d := c.drawn[hover]
		ctx.Call("beginPath")
		ctx.Call("arc", d.cx, d.cy, 9, 0, 2*math.Pi)
		ctx.Set("strokeStyle", "#0f172a")
		ctx.Set("lineWidth", 1.5)
		ctx.Call("stroke")
	}
	// Labels after the dots, so that no dot hides one.
	ctx.Set("textBaseline", "alphabetic")
	for i, p := range m.Points {
		if same[i] == nil {
			continue
		}
		d := c.drawn[i]
		label := p.Token
		if k := len(same[i]); k > 1 {
			label = fmt.Sprintf("%s ×%d", p.Token, k)
		}
		bold := p.Token == e.Word || p.Token == hoverTok
		ctx.Set("font", embFont)
		if bold {
			ctx.Set("font", embBold)
		}
		switch {
		case p.Special || p.Punct:
			ctx.Set("fillStyle", "#94a3b8")
		default:
			ctx.Set("fillStyle", embTextColor(p.Sentence))
		}
		// Labels right of their dot, or left of it near the right edge.
		tw := ctx.Call("measureText", label).Get("width").Float()
		x := d.cx + 7
		if x+tw > W-4 {
			x = d.cx - 7 - tw
		}
		// A white halo keeps a label readable where it crosses a line or another dot.
		ctx.Set("lineWidth", 3)
		ctx.Set("strokeStyle", "rgba(255,255,255,0.85)")
		ctx.Call("strokeText", label, x, d.cy-5)
		ctx.Call("fillText", label, x, d.cy-5)
	}

	// The legend: one line per sentence (it goes with the exported image).
	ctx.Set("font", embSans)
	ctx.Set("textBaseline", "middle")
	for s, text := range e.Sentences {
		y := float64(embTop+plotH+6+embLegendH*s) + embLegendH/2
		ctx.Set("fillStyle", embColor(s))
		ctx.Call("beginPath")
		ctx.Call("arc", 8, y, 4.5, 0, 2*math.Pi)
		ctx.Call("fill")
		ctx.Set("fillStyle", "#334155")
		ctx.Call("fillText", fmt.Sprintf("%d  %s", s+1, text), 18, y)
	}

	// The drawn points, for tests: data coordinates and where they are in the canvas.
	if b, err := json.Marshal(exposed); err == nil {
		canvas.Set("bertlabPoints", string(b))
	}
}

// exportPNG downloads the map, as drawn, as a PNG file.
func (c *EmbeddingsView) exportPNG() {
	downloadPNG(".embmap canvas", fmt.Sprintf("bertlab-embeddings-layer%d.png", c.App.Emb.Layer))
}
