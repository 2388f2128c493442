package modelcard

import (
	"bytes"
	"image/png"
	"testing"
)

// TestLineChartPNG draws two curves: the PNG has the asked size and holds both curves' colours;
// mismatched or negative points are errors.
func TestLineChartPNG(t *testing.T) {
	ss := []Series{
		{Label: "bert", X: []float64{0, 1, 2, 3}, Y: []float64{4, 3, 2.5, 2}},
		{Label: "roberta", X: []float64{0, 1, 2, 3}, Y: []float64{4, 2.8, 2.2, 1.9}, Dots: true},
	}
	b, err := LineChartPNG("loss", "tokens", "loss", ss, 640, 400)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() != 640 || r.Dy() != 400 {
		t.Fatalf("size %v", r)
	}
	for i := range ss {
		want := palette[i]
		found := false
		for y := 0; y < 400 && !found; y++ {
			for x := 0; x < 640; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(bl>>8) == want.B {
					found = true
					break
				}
			}
		}
		if !found {
			t.Errorf("series %d's colour %v not drawn", i, want)
		}
	}
	for _, bad := range [][]Series{
		{{Label: "short", X: []float64{0, 1}, Y: []float64{1}}},
		{{Label: "negative", X: []float64{0}, Y: []float64{-1}}},
	} {
		if _, err := LineChartPNG("t", "x", "y", bad, 100, 100); err == nil {
			t.Errorf("%s: no error", bad[0].Label)
		}
	}
}
