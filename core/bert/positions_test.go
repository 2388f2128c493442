package bert_test

import (
	"math"
	"testing"

	"github.com/bertlab/bertlab/core/bert"
)

// TestSinusoidalPositions checks the sinusoidal start of the position embeddings against
// hand-computed entries and its two properties: BERT's init scale, and neighbours alike.
func TestSinusoidalPositions(t *testing.T) {
	for _, preset := range []string{"tiny", "mini"} {
		t.Run(preset, func(t *testing.T) {
			c, err := bert.Preset(preset)
			if err != nil {
				t.Fatal(err)
			}
			m, err := bert.NewRandom(c, bert.Heads{MLM: true}, 1)
			if err != nil {
				t.Fatal(err)
			}
			m.SinusoidalPositions()
			H, P := c.HiddenSize, c.MaxPositionEmbeddings
			s := c.InitializerRange * math.Sqrt2
			cases := []struct {
				pos, col int
				want     float64
			}{
				{0, 0, 0}, {0, 1, s}, {1, 0, s * math.Sin(1)}, {1, 1, s * math.Cos(1)},
				{7, 2, s * math.Sin(7/math.Pow(10000, 2/float64(H)))},
				{511, H - 1, s * math.Cos(511/math.Pow(10000, float64(H-2)/float64(H)))},
			}
			for _, tc := range cases {
				if got := float64(m.PosEmb.Row(tc.pos)[tc.col]); math.Abs(got-tc.want) > 1e-7 {
					t.Errorf("position %d, column %d: %g, want %g", tc.pos, tc.col, got, tc.want)
				}
			}
			var ss float64
			for _, v := range m.PosEmb.Data {
				ss += float64(v) * float64(v)
			}
			// Over 512 positions the sines and cosines of the fast columns average 1/2 each.
			if rms := math.Sqrt(ss / float64(P*H)); math.Abs(rms-c.InitializerRange)/c.InitializerRange > 0.05 {
				t.Errorf("root mean square %g, want about initializer_range %g", rms, c.InitializerRange)
			}
			cos := func(a, b []float32) float64 {
				var d, na, nb float64
				for i := range a {
					d += float64(a[i]) * float64(b[i])
					na += float64(a[i]) * float64(a[i])
					nb += float64(b[i]) * float64(b[i])
				}
				return d / math.Sqrt(na*nb)
			}
			if c1, c64 := cos(m.PosEmb.Row(10), m.PosEmb.Row(11)), cos(m.PosEmb.Row(10), m.PosEmb.Row(74)); c1 < 0.8 || c64 > c1 {
				t.Errorf("cosine of positions 10 and 11 %.3f, of 10 and 74 %.3f: neighbours should be the most alike", c1, c64)
			}
		})
	}
}
