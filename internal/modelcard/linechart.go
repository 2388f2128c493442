package modelcard

import (
	"fmt"
	"image/color"
	"math"
)

// Series is one curve of LineChartPNG: points (X[i], Y[i]) joined by a line, with dots on them
// when Dots is set.
type Series struct {
	Label string
	X, Y  []float64
	Dots  bool
}

// palette colours the curves of LineChartPNG in turn (Okabe and Ito's colour-blind safe set).
var palette = []color.RGBA{
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xd5, 0x5e, 0x00, 0xff}, // vermilion
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
}

// LineChartPNG draws the series over linear axes (y from 0, as the model card's loss curve) as a
// w×h PNG with a legend, each series in the next colour of a colour-blind safe palette. Every
// series needs as many X as Y values, all finite and Y ≥ 0.
func LineChartPNG(title, xLabel, yLabel string, ss []Series, w, h int) ([]byte, error) {
	c := chart{title: title, xLabel: xLabel, yLabel: yLabel}
	for i, s := range ss {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("chart %q: series %q has %d x and %d y values", title, s.Label, len(s.X), len(s.Y))
		}
		for j := range s.X {
			if bad(s.X[j]) || bad(s.Y[j]) || s.Y[j] < 0 {
				return nil, fmt.Errorf("chart %q: series %q point %d (%g, %g) is not finite and non-negative", title, s.Label, j, s.X[j], s.Y[j])
			}
		}
		c.series = append(c.series, series{label: s.Label, color: palette[i%len(palette)], width: 2.5, dots: s.Dots, x: s.X, y: s.Y})
	}
	return c.renderPNG(w, h)
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
