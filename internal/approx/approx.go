// Package approx compares float32 arrays the way numpy.allclose does, for tests that check
// our numbers against reference outputs.
package approx

import (
	"fmt"
	"math"
)

// Check reports whether |got - want| <= atol + rtol·|want| elementwise; the error names the
// tensor, the worst element and the count of elements outside the tolerance.
func Check(name string, got, want []float32, atol, rtol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d elements, want %d", name, len(got), len(want))
	}
	bad, worst := 0, -1
	var worstExcess, maxAbs float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		d := math.Abs(g - w)
		maxAbs = math.Max(maxAbs, d)
		lim := atol + rtol*math.Abs(w)
		if d > lim || math.IsNaN(g) != math.IsNaN(w) {
			bad++
			if ex := d - lim; worst < 0 || ex > worstExcess || math.IsNaN(d) {
				worst, worstExcess = i, ex
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%s: %d of %d elements outside atol %g rtol %g; worst at %d: got %g want %g (max |diff| %g)",
			name, bad, len(got), atol, rtol, worst, got[worst], want[worst], maxAbs)
	}
	return nil
}

// MaxAbsDiff is max |got - want| (NaN if lengths differ).
func MaxAbsDiff(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.NaN()
	}
	var m float64
	for i := range got {
		m = math.Max(m, math.Abs(float64(got[i])-float64(want[i])))
	}
	return m
}
