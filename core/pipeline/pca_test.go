package pipeline

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// topAxes finds the first k principal axes of points without gonum: power iteration on the
// covariance matrix, deflating after each axis. It is the check FitPCA is held to.
func topAxes(points [][]float64, k int) (axes [][]float64, vars []float64) {
	N, D := len(points), len(points[0])
	mean := make([]float64, D)
	for _, p := range points {
		for j, v := range p {
			mean[j] += v / float64(N)
		}
	}
	cov := make([][]float64, D) // [D, D]
	for a := range cov {
		cov[a] = make([]float64, D)
		for b := range cov[a] {
			for _, p := range points {
				cov[a][b] += (p[a] - mean[a]) * (p[b] - mean[b])
			}
		}
	}
	for range k {
		v := make([]float64, D)
		for j := range v {
			v[j] = 1 + float64(j)/7 // not orthogonal to any axis of the tests
		}
		lambda := 0.0
		for range 5000 {
			w := make([]float64, D)
			for a := range cov {
				for b, c := range cov[a] {
					w[a] += c * v[b]
				}
			}
			n := 0.0
			for _, x := range w {
				n += x * x
			}
			lambda = math.Sqrt(n)
			if lambda == 0 {
				break
			}
			for j := range v {
				v[j] = w[j] / lambda
			}
		}
		axes, vars = append(axes, v), append(vars, lambda)
		for a := range cov {
			for b := range cov[a] {
				cov[a][b] -= lambda * v[a] * v[b]
			}
		}
	}
	return axes, vars
}

func dist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// ellipse is n points on an ellipse of half-axes a and b, rotated by phi, centred on c.
func ellipse(n int, a, b, phi float64, c [2]float64) [][]float64 {
	var pts [][]float64
	for i := range n {
		t := 2 * math.Pi * float64(i) / float64(n)
		x, y := a*math.Cos(t), b*math.Sin(t)
		pts = append(pts, []float64{c[0] + x*math.Cos(phi) - y*math.Sin(phi), c[1] + x*math.Sin(phi) + y*math.Cos(phi)})
	}
	return pts
}

func randomPoints(seed uint64, n, d int) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = make([]float64, d)
		for j := range pts[i] {
			// Unequal spreads, so that the axes are well separated.
			pts[i][j] = r.NormFloat64() * float64(d-j)
		}
	}
	return pts
}

// TestPCAKnownAxes: point sets whose principal axes and variances are known by construction.
func TestPCAKnownAxes(t *testing.T) {
	dir := []float64{2, -1, 2} // the line's direction, |dir| = 3
	var line [][]float64
	for _, s := range []float64{-2, -1, 0, 0.5, 4} {
		line = append(line, []float64{1 + s*dir[0], 5 + s*dir[1], -3 + s*dir[2]})
	}
	phi := math.Pi / 6
	for _, tc := range []struct {
		name      string
		points    [][]float64
		axis0     []float64 // the first axis, sign convention applied
		axis1     []float64 // nil: not checked
		explained [2]float64
		coords    func(i int) [2]float64 // nil: not checked
	}{
		{name: "line in 3-D", points: line, axis0: []float64{2.0 / 3, -1.0 / 3, 2.0 / 3}, explained: [2]float64{1, 0},
			// s of the points above, minus their mean 0.3, times |dir|.
			coords: func(i int) [2]float64 { return [2]float64{([]float64{-2, -1, 0, 0.5, 4}[i] - 0.3) * 3, 0} }},
		{name: "rotated ellipse", points: ellipse(12, 3, 1, phi, [2]float64{4, -2}),
			axis0: []float64{math.Cos(phi), math.Sin(phi)}, axis1: []float64{-math.Sin(phi), math.Cos(phi)},
			explained: [2]float64{0.9, 0.1}},
		// Rotated by 120°, the major axis points to (-1/2, √3/2): its largest component, y, is made positive.
		{name: "ellipse, axis flipped by the sign rule", points: ellipse(12, 3, 1, 2*math.Pi/3, [2]float64{0, 0}),
			axis0: []float64{-0.5, math.Sqrt(3) / 2}, explained: [2]float64{0.9, 0.1}},
		{name: "axis-aligned, x the larger spread", points: [][]float64{{-2, 0}, {2, 0}, {0, 1}, {0, -1}},
			axis0: []float64{1, 0}, axis1: []float64{0, 1}, explained: [2]float64{0.8, 0.2},
			coords: func(i int) [2]float64 { return [][2]float64{{-2, 0}, {2, 0}, {0, 1}, {0, -1}}[i] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FitPCA(tc.points, 2)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range [][]float64{tc.axis0, tc.axis1} {
				for j := range want {
					if math.Abs(p.Axes[k][j]-want[j]) > 1e-9 {
						t.Fatalf("axis %d = %v, want %v", k, p.Axes[k], want)
					}
				}
			}
			for k := range 2 {
				if math.Abs(p.Explained[k]-tc.explained[k]) > 1e-9 {
					t.Errorf("explained %v, want %v", p.Explained, tc.explained)
				}
			}
			if tc.coords != nil {
				for i := range tc.points {
					want := tc.coords(i)
					if math.Abs(p.Projected[i][0]-want[0]) > 1e-9 || math.Abs(p.Projected[i][1]-want[1]) > 1e-9 {
						t.Errorf("point %d at %v, want %v", i, p.Projected[i], want)
					}
				}
			}
		})
	}
}

// TestPCAAgainstPowerIteration compares FitPCA with topAxes (no gonum) on random points, with
// D < N (FitPCA takes the covariance) and D > N (it takes the Gram matrix): the same axes up to
// sign, the same variances, and pairwise distances of the 2-D points equal to those of the
// points projected onto topAxes' axes.
func TestPCAAgainstPowerIteration(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, d int
	}{{"covariance, 40 points in 5-D", 40, 5}, {"Gram, 6 points in 30-D", 6, 30}, {"square, 7 in 7-D", 7, 7}} {
		t.Run(tc.name, func(t *testing.T) {
			pts := randomPoints(uint64(tc.n*100+tc.d), tc.n, tc.d)
			p, err := FitPCA(pts, 2)
			if err != nil {
				t.Fatal(err)
			}
			axes, vars := topAxes(pts, 2)
			total := 0.0
			for _, row := range pts {
				for j, v := range row {
					total += (v - p.Mean[j]) * (v - p.Mean[j])
				}
			}
			for k := range 2 {
				dot := 0.0
				for j := range axes[k] {
					dot += axes[k][j] * p.Axes[k][j]
				}
				if math.Abs(math.Abs(dot)-1) > 1e-6 {
					t.Errorf("axis %d: |cos| with the power iteration's axis %v", k, math.Abs(dot))
				}
				if w := vars[k] / float64(tc.n-1); math.Abs(p.Variance[k]-w) > 1e-6*w {
					t.Errorf("variance %d: %v, want %v", k, p.Variance[k], w)
				}
				if w := vars[k] / total; math.Abs(p.Explained[k]-w) > 1e-9 {
					t.Errorf("explained %d: %v, want %v", k, p.Explained[k], w)
				}
			}
			proj := make([][]float64, tc.n) // the points on topAxes' axes: [N, 2]
			for i, row := range pts {
				proj[i] = make([]float64, 2)
				for k := range 2 {
					for j, v := range row {
						proj[i][k] += (v - p.Mean[j]) * axes[k][j]
					}
				}
			}
			for i := range pts {
				for j := range i {
					if got, want := dist(p.Projected[i], p.Projected[j]), dist(proj[i], proj[j]); math.Abs(got-want) > 1e-6*(1+want) {
						t.Fatalf("distance %d-%d: %v, want %v", i, j, got, want)
					}
				}
			}
		})
	}
}

// TestPCA2DKeepsDistances: on 2-D input both axes span the plane, so the projection is a
// rotation (or reflection) and keeps every pairwise distance.
func TestPCA2DKeepsDistances(t *testing.T) {
	for seed := range uint64(5) {
		pts := randomPoints(seed, 9, 2)
		p, err := FitPCA(pts, 2)
		if err != nil {
			t.Fatal(err)
		}
		if s := p.Explained[0] + p.Explained[1]; math.Abs(s-1) > 1e-12 {
			t.Errorf("seed %d: explained sums to %v, want 1", seed, s)
		}
		for i := range pts {
			for j := range i {
				if got, want := dist(p.Projected[i], p.Projected[j]), dist(pts[i], pts[j]); math.Abs(got-want) > 1e-9*(1+want) {
					t.Errorf("seed %d, distance %d-%d: %v, want %v", seed, i, j, got, want)
				}
			}
		}
	}
}

// TestPCASignRule: every axis has its component of largest magnitude positive, and a point set
// and its mirror image get the same axes.
func TestPCASignRule(t *testing.T) {
	pts := randomPoints(9, 20, 6)
	neg := make([][]float64, len(pts))
	for i, row := range pts {
		neg[i] = make([]float64, len(row))
		for j, v := range row {
			neg[i][j] = -v
		}
	}
	p, err := FitPCA(pts, 3)
	if err != nil {
		t.Fatal(err)
	}
	q, err := FitPCA(neg, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k, axis := range p.Axes {
		big := 0
		for j, v := range axis {
			if math.Abs(v) > math.Abs(axis[big]) {
				big = j
			}
			if math.Abs(v-q.Axes[k][j]) > 1e-9 {
				t.Fatalf("axis %d: %v, of the mirror image %v", k, axis, q.Axes[k])
			}
		}
		if axis[big] <= 0 {
			t.Errorf("axis %d: %v has its largest component negative", k, axis)
		}
	}
}

// TestPCADegenerate: too few points, or all the same, give zero coordinates; bad input errors.
func TestPCADegenerate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points [][]float64
		k      int
		err    string // "" for no error
	}{
		{"one point", [][]float64{{1, 2, 3}}, 2, ""},
		{"the same point twice", [][]float64{{1, 2}, {1, 2}}, 2, ""},
		{"two points, second axis empty", [][]float64{{0, 0, 0}, {1, 1, 1}}, 2, ""},
		{"more axes than dimensions", [][]float64{{0}, {1}, {3}}, 2, ""},
		{"no points", nil, 2, "no points"},
		{"no axes", [][]float64{{1}}, 0, "want at least 1"},
		{"dimension 0", [][]float64{{}}, 2, "dimension 0"},
		{"ragged", [][]float64{{1, 2}, {1}}, 2, "point 1 has 1 coordinates"},
		{"NaN", [][]float64{{1, 2}, {math.NaN(), 1}}, 2, "is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FitPCA(tc.points, tc.k)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Projected) != len(tc.points) || len(p.Axes) != tc.k || len(p.Explained) != tc.k {
				t.Fatalf("shapes: %d projections, %d axes, %d ratios", len(p.Projected), len(p.Axes), len(p.Explained))
			}
			sum := 0.0
			for _, e := range p.Explained {
				if e < 0 || e > 1+1e-12 || math.IsNaN(e) {
					t.Errorf("explained %v", p.Explained)
				}
				sum += e
			}
			if sum > 1+1e-12 {
				t.Errorf("explained sums to %v", sum)
			}
			// The empty axes project to 0.
			for k := range tc.k {
				if p.Explained[k] == 0 {
					for i := range p.Projected {
						if p.Projected[i][k] != 0 {
							t.Errorf("axis %d has no variance but point %d is at %v", k, i, p.Projected[i][k])
						}
					}
				}
			}
		})
	}
}
