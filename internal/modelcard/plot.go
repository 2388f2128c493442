package modelcard

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"

	"github.com/bertlab/bertlab/internal/human"
)

// series is one curve of a chart: points (x, y) joined by lines, or drawn as dots.
type series struct {
	label string
	color color.RGBA
	width float64 // line width in pixels; 0 draws dots only
	dots  bool
	x, y  []float64
}

// chart is a line chart with linear axes: what the model card's loss curve needs and no
// more.
type chart struct {
	title, xLabel, yLabel string
	series                []series
}

// Colours of the card's charts (colour-blind safe: blue, orange, greys).
var (
	colBlue   = color.RGBA{0x1f, 0x5f, 0xa8, 0xff}
	colLight  = color.RGBA{0xb8, 0xc7, 0xdb, 0xff}
	colOrange = color.RGBA{0xe0, 0x6c, 0x00, 0xff}
	colGrey   = color.RGBA{0x70, 0x70, 0x70, 0xff}
	colGrid   = color.RGBA{0xe4, 0xe4, 0xe4, 0xff}
	colText   = color.RGBA{0x22, 0x22, 0x22, 0xff}
)

// renderPNG draws the chart as a w×h PNG.
func (c chart) renderPNG(w, h int) ([]byte, error) {
	ft, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	face := func(size float64) (font.Face, error) {
		return opentype.NewFace(ft, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	}
	titleFace, err := face(20)
	if err != nil {
		return nil, err
	}
	textFace, err := face(15)
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)

	// The data's extent; y starts at 0 so that falls in loss read as proportions.
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range c.series {
		for i := range s.x {
			xmin, xmax, ymax = min(xmin, s.x[i]), max(xmax, s.x[i]), max(ymax, s.y[i])
		}
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax, ymax = 0, 1, 1
	}
	xmin = min(xmin, 0)
	if xmax <= xmin {
		xmax = xmin + 1
	}
	if ymax <= 0 {
		ymax = 1
	}
	xticks := niceTicks(xmin, xmax, 8)
	yticks := niceTicks(0, ymax, 6)
	xmax = max(xmax, xticks[len(xticks)-1])
	ymax = max(ymax, yticks[len(yticks)-1])

	left, right, top, bottom := 70.0, float64(w)-24, 64.0, float64(h)-62
	// The legend's rows, right-aligned above the plot, the last row lowest; each added row
	// moves the plot down.
	entry := func(s series) float64 { return 48 + textWidth(textFace, s.label) }
	var rows [][]series
	width := math.Inf(1)
	for _, s := range c.series {
		if width+entry(s) > right-left-60 {
			rows, width = append(rows, nil), 0
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], s)
		width += entry(s)
	}
	top += 22 * float64(max(0, len(rows)-1))
	px := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*(right-left) }
	py := func(y float64) float64 { return bottom - y/ymax*(bottom-top) }

	// Grid, ticks and their labels.
	for _, t := range yticks {
		y := py(t)
		fillRect(img, left, y-0.5, right, y+0.5, colGrid)
		s := tickLabel(t, yticks)
		drawText(img, textFace, s, left-8-textWidth(textFace, s), y+5, colText)
	}
	for _, t := range xticks {
		x := px(t)
		fillRect(img, x-0.5, top, x+0.5, bottom, colGrid)
		s := tickLabel(t, xticks)
		drawText(img, textFace, s, x-textWidth(textFace, s)/2, bottom+20, colText)
	}
	fillRect(img, left-1, top, left, bottom+1, colText)
	fillRect(img, left-1, bottom, right, bottom+1, colText)

	// The curves, clipped to the plot area by construction (all y >= 0, x within the ticks).
	for _, s := range c.series {
		if s.width > 0 && len(s.x) > 1 {
			pts := make([][2]float64, len(s.x))
			for i := range s.x {
				pts[i] = [2]float64{px(s.x[i]), py(s.y[i])}
			}
			strokePolyline(img, pts, s.width, s.color)
		}
		if s.dots {
			for i := range s.x {
				fillDisc(img, px(s.x[i]), py(s.y[i]), 4, s.color)
			}
		}
	}

	// Title, axis labels, legend (top right).
	drawText(img, titleFace, c.title, left, 30, colText)
	drawText(img, textFace, c.yLabel, left-60, top-12, colText)
	drawText(img, textFace, c.xLabel, (left+right)/2-textWidth(textFace, c.xLabel)/2, bottom+46, colText)
	for r, row := range rows {
		ly := top - 12 - 22*float64(len(rows)-1-r)
		lx := right
		for i := len(row) - 1; i >= 0; i-- {
			s := row[i]
			lx -= textWidth(textFace, s.label)
			drawText(img, textFace, s.label, lx, ly, colText)
			lx -= 28
			if s.width > 0 {
				fillRect(img, lx, ly-5-s.width/2, lx+22, ly-5+max(s.width, 2)/2, s.color)
			} else {
				fillDisc(img, lx+11, ly-5, 4, s.color)
			}
			lx -= 20
		}
	}

	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// niceTicks returns about n round tick values (1, 2 or 5 times a power of ten apart) from lo
// down to a tick at or below it, up to a tick at or above hi.
func niceTicks(lo, hi float64, n int) []float64 {
	raw := (hi - lo) / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []float64
	for k := math.Floor(lo/step + 1e-9); ; k++ {
		t := k * step
		ts = append(ts, t)
		if t >= hi-1e-9*step {
			break
		}
	}
	return ts
}

// tickLabel formats a tick with as many decimals as the spacing of ticks needs.
func tickLabel(t float64, ticks []float64) string {
	step := 1.0
	if len(ticks) > 1 {
		step = ticks[1] - ticks[0]
	}
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if math.Abs(t) < step*1e-9 {
		t = 0
	}
	if dec == 0 && math.Abs(t) >= 10000 {
		return human.Commas(int64(math.Round(t)))
	}
	return strconv.FormatFloat(t, 'f', dec, 64)
}

func textWidth(f font.Face, s string) float64 {
	return float64(font.MeasureString(f, s)) / 64
}

// drawText draws s with its baseline starting at (x, y).
func drawText(img draw.Image, f font.Face, s string, x, y float64, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: f,
		Dot: fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(y * 64)}}
	d.DrawString(s)
}

// fill rasterizes the path that build draws (anti-aliased; overlapping parts of the same
// orientation count once) and paints it with c.
func fill(img *image.RGBA, c color.Color, build func(r *vector.Rasterizer)) {
	b := img.Bounds()
	r := vector.NewRasterizer(b.Dx(), b.Dy())
	r.DrawOp = draw.Over
	build(r)
	r.Draw(img, b, image.NewUniform(c), image.Point{})
}

func fillRect(img *image.RGBA, x0, y0, x1, y1 float64, c color.Color) {
	fill(img, c, func(r *vector.Rasterizer) {
		r.MoveTo(float32(x0), float32(y0))
		r.LineTo(float32(x1), float32(y0))
		r.LineTo(float32(x1), float32(y1))
		r.LineTo(float32(x0), float32(y1))
		r.ClosePath()
	})
}

func fillDisc(img *image.RGBA, cx, cy, radius float64, c color.Color) {
	fill(img, c, func(r *vector.Rasterizer) { disc(r, cx, cy, radius) })
}

// disc adds a circle as a 24-sided polygon, with the orientation of the segments of
// strokePolyline (positive shoelace area), so that where they overlap their coverage adds up
// instead of cancelling.
func disc(r *vector.Rasterizer, cx, cy, radius float64) {
	const n = 24
	for i := 0; i <= n; i++ {
		a := 2 * math.Pi * float64(i) / n
		x, y := float32(cx+radius*math.Cos(a)), float32(cy+radius*math.Sin(a))
		if i == 0 {
			r.MoveTo(x, y)
		} else {
			r.LineTo(x, y)
		}
	}
	r.ClosePath()
}

// strokePolyline draws a line of the given width through pts: every segment a rectangle and
// every joint a disc, all in one path.
func strokePolyline(img *image.RGBA, pts [][2]float64, width float64, c color.Color) {
	hw := width / 2
	fill(img, c, func(r *vector.Rasterizer) {
		for i := 0; i+1 < len(pts); i++ {
			x0, y0, x1, y1 := pts[i][0], pts[i][1], pts[i+1][0], pts[i+1][1]
			dx, dy := x1-x0, y1-y0
			l := math.Hypot(dx, dy)
			if l == 0 {
				continue
			}
			nx, ny := -dy/l*hw, dx/l*hw
			r.MoveTo(float32(x0+nx), float32(y0+ny))
			r.LineTo(float32(x0-nx), float32(y0-ny))
			r.LineTo(float32(x1-nx), float32(y1-ny))
			r.LineTo(float32(x1+nx), float32(y1+ny))
			r.ClosePath()
		}
		if width >= 2 {
			for _, p := range pts[1 : len(pts)-1] {
				disc(r, p[0], p[1], hw)
			}
		}
	})
}

// movingAverage smooths ys with a trailing window of k values (shorter at the start).
func movingAverage(ys []float64, k int) []float64 {
	out := make([]float64, len(ys))
	sum := 0.0
	for i, y := range ys {
		sum += y
		if i >= k {
			sum -= ys[i-k]
		}
		out[i] = sum / float64(min(i+1, k))
	}
	return out
}

// String describes the chart in one line (for errors and tests).
func (c chart) String() string {
	return fmt.Sprintf("chart %q: %d series", c.title, len(c.series))
}
