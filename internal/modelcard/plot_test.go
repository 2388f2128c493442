package modelcard

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bertlab/bertlab/core/train"
)

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []float64
		labels []string
	}{
		{0, 9.07, 6, []float64{0, 2, 4, 6, 8, 10}, []string{"0", "2", "4", "6", "8", "10"}},
		{0, 2500, 8, []float64{0, 500, 1000, 1500, 2000, 2500}, []string{"0", "500", "1000", "1500", "2000", "2500"}},
		{0, 0.37, 6, []float64{0, 0.1, 0.2, 0.3, 0.4}, []string{"0.0", "0.1", "0.2", "0.3", "0.4"}},
		{0, 40000, 4, []float64{0, 10000, 20000, 30000, 40000}, []string{"0", "10,000", "20,000", "30,000", "40,000"}},
	} {
		got := niceTicks(c.lo, c.hi, c.n)
		var labels []string
		for _, v := range got {
			labels = append(labels, tickLabel(v, got))
		}
		if len(got) != len(c.want) || !slices.Equal(labels, c.labels) {
			t.Errorf("niceTicks(%g, %g, %d) = %v %q, want %v %q", c.lo, c.hi, c.n, got, labels, c.want, c.labels)
		}
	}
}

func TestLossChart(t *testing.T) {
	var st train.TrainerState
	for i := 1; i <= 200; i++ {
		st.LogHistory = append(st.LogHistory, train.Event{Kind: train.EventStep, Step: i, Loss: 9 - float64(i)/40})
		if i%50 == 0 {
			st.LogHistory = append(st.LogHistory, train.Event{Kind: train.EventEval, Step: i, Metrics: map[string]float64{"mlm_loss": 9 - float64(i)/35}})
		}
	}
	st.GlobalStep = 200
	c := lossChart("m", []stage{{State: st}})
	if len(c.series) != 3 || len(c.series[0].x) != 200 || len(c.series[2].x) != 4 || !strings.Contains(c.series[1].label, "mean of 5 steps") {
		t.Fatalf("%v: %+v", c, c.series)
	}
	raw, err := c.renderPNG(400, 300)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	// Some pixels carry each series' colour.
	found := map[[3]uint32]bool{}
	for y := 0; y < 300; y++ {
		for x := 0; x < 400; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			found[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	for _, col := range []struct{ r, g, b uint8 }{{colBlue.R, colBlue.G, colBlue.B}, {colOrange.R, colOrange.G, colOrange.B}} {
		if !found[[3]uint32{uint32(col.r), uint32(col.g), uint32(col.b)}] {
			t.Errorf("no pixel of colour %v", col)
		}
	}
	// A second stage continues the step axis: its steps 1-200 are steps 201-400.
	c = lossChart("m", []stage{{State: st}, {State: st}})
	if n := len(c.series[0].x); n != 400 || c.series[0].x[200] != 201 || c.series[0].x[399] != 400 || c.series[2].x[4] != 250 {
		t.Errorf("two stages: %d steps, x[200] %v, x[399] %v; evaluations at %v", n, c.series[0].x[200], c.series[0].x[399], c.series[2].x)
	}
	if got := movingAverage([]float64{1, 2, 3, 4}, 2); !slices.Equal(got, []float64{1, 1.5, 2.5, 3.5}) {
		t.Errorf("movingAverage = %v", got)
	}
}

// TestAccuracyChart: one curve for each of the held-out top-1 and top-5 and for each cloze set,
// in percent, on the stages' common step axis; none without evaluations.
func TestAccuracyChart(t *testing.T) {
	var st train.TrainerState
	for i := 1; i <= 4; i++ {
		st.LogHistory = append(st.LogHistory, train.Event{Kind: train.EventStep, Step: i},
			train.Event{Kind: train.EventEval, Step: i, Metrics: map[string]float64{"mlm_accuracy": 0.1 * float64(i), "mlm_top5": 0.2,
				"cloze_facts_top5": 0.05, "cloze_everyday_top5": 0.3, "cloze_everyday_top1": 0.1}})
	}
	st.GlobalStep = 4
	c, ok := accuracyChart("m", []stage{{State: st}, {State: st}})
	if !ok || len(c.series) != 4 {
		t.Fatalf("%v series, ok %v", len(c.series), ok)
	}
	if s := c.series[0]; len(s.x) != 8 || s.x[4] != 5 || math.Abs(s.y[3]-40) > 1e-9 {
		t.Errorf("top-1 curve %v %v", s.x, s.y)
	}
	if !strings.Contains(c.series[2].label, "cloze everyday") || !strings.Contains(c.series[3].label, "cloze facts") || c.series[3].y[0] != 5 {
		t.Errorf("cloze curves %+v", c.series[2:])
	}
	if _, err := c.renderPNG(400, 300); err != nil {
		t.Fatal(err)
	}
	st.LogHistory = st.LogHistory[:1]
	if _, ok := accuracyChart("m", []stage{{State: st}}); ok {
		t.Error("a chart without evaluations")
	}
}

// TestLegendRows: labels too long for one row wrap into more rows above the plot instead of
// running off the image's left edge; every series' colour still reaches the image.
func TestLegendRows(t *testing.T) {
	c := chart{title: "t", xLabel: "x", yLabel: "y"}
	cols := []color.RGBA{colBlue, colOrange, colGrey, colLight}
	for i := range 4 {
		c.series = append(c.series, series{label: strings.Repeat("a long legend label ", 2), color: cols[i], width: 2, x: []float64{0, 1}, y: []float64{1, 2}})
	}
	raw, err := c.renderPNG(400, 300)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range cols {
		hit := false
		for y := 0; y < 300 && !hit; y++ {
			for x := 0; x < 400 && !hit; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				hit = uint8(r>>8) == col.R && uint8(g>>8) == col.G && uint8(b>>8) == col.B
			}
		}
		if !hit {
			t.Errorf("no pixel of %v", col)
		}
	}
	// The leftmost legend text starts right of the y axis label's column.
	for y := 0; y < 64; y++ {
		for x := 0; x < 8; x++ {
			if r, _, _, _ := img.At(x, y).RGBA(); r>>8 < 200 {
				t.Fatalf("ink at (%d, %d): the legend runs off the left edge", x, y)
			}
		}
	}
}
