package pipeline

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// PCA is a principal component analysis of a point set: its first K principal axes and every
// point projected onto them.
type PCA struct {
	// Mean is the centre of the points: [D].
	Mean []float64
	// Axes[k] is the k-th principal axis, a unit vector in the input space: [K, D]. Its sign is
	// fixed so that its component of largest magnitude (the first of equals) is positive, and
	// the picture does not flip from one run to the next.
	Axes [][]float64
	// Variance[k] is the points' variance along axis k (divided by N-1), largest first: [K].
	Variance []float64
	// Explained[k] is Variance[k] over the total variance of the points (0 when every point is
	// the same): [K].
	Explained []float64
	// Projected[i][k] is point i, centred, dotted with axis k: [N, K].
	Projected [][]float64
}

// FitPCA finds the first k principal axes of points ([N, D], every row of the same length) and
// projects the points onto them. Axes beyond what the points span (k > N-1 or k > D) have zero
// variance and zero coordinates.
//
// It takes the eigenvectors of the smaller of the two symmetric matrices that hold the same
// spectrum: the covariance XᵀX [D, D] when D ≤ N, else the Gram matrix XXᵀ [N, N] (X centred),
// whose eigenvector u with eigenvalue λ gives the axis Xᵀu/√λ and the coordinates √λ·u. A few
// hundred tokens of BERT-Base are then a 300×300 problem rather than a 768×768 one.
func FitPCA(points [][]float64, k int) (*PCA, error) {
	N := len(points)
	if N == 0 {
		return nil, fmt.Errorf("pca: no points")
	}
	if k < 1 {
		return nil, fmt.Errorf("pca: %d axes asked for; want at least 1", k)
	}
	D := len(points[0])
	if D == 0 {
		return nil, fmt.Errorf("pca: points of dimension 0")
	}
	mean := make([]float64, D)
	for i, p := range points {
		if len(p) != D {
			return nil, fmt.Errorf("pca: point %d has %d coordinates, point 0 has %d", i, len(p), D)
		}
		for j, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("pca: point %d, coordinate %d is %v", i, j, v)
			}
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(N)
	}
	x := mat.NewDense(N, D, nil) // centred points: [N, D]
	total := 0.0
	for i, p := range points {
		for j, v := range p {
			c := v - mean[j]
			x.Set(i, j, c)
			total += c * c
		}
	}

	res := &PCA{Mean: mean, Axes: make([][]float64, k), Variance: make([]float64, k),
		Explained: make([]float64, k), Projected: make([][]float64, N)}
	for i := range res.Projected {
		res.Projected[i] = make([]float64, k)
	}
	for a := range res.Axes {
		res.Axes[a] = make([]float64, D)
	}
	if total == 0 {
		return res, nil // every point the same: no direction is principal
	}

	var sym mat.SymDense
	if D <= N {
		sym.SymOuterK(1, x.T()) // XᵀX: [D, D]
	} else {
		sym.SymOuterK(1, x) // XXᵀ: [N, N]
	}
	var eig mat.EigenSym
	if !eig.Factorize(&sym, true) {
		return nil, fmt.Errorf("pca: the eigendecomposition of a %d×%d matrix did not converge", sym.SymmetricDim(), sym.SymmetricDim())
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	M := len(vals)
	// Eigenvalues below this are rounding, not variance: their axes are left at zero.
	tiny := 1e-12 * total
	for a := 0; a < k && a < M; a++ {
		col := M - 1 - a
		lambda := vals[col]
		if lambda <= tiny {
			break
		}
		axis := res.Axes[a]
		if D <= N {
			for j := range axis {
				axis[j] = vecs.At(j, col)
			}
		} else {
			// axis = Xᵀu / √λ: [D]
			s := 1 / math.Sqrt(lambda)
			for i := 0; i < N; i++ {
				u := vecs.At(i, col) * s
				if u == 0 {
					continue
				}
				for j := range axis {
					axis[j] += u * x.At(i, j)
				}
			}
			normalize(axis)
		}
		// The sign convention: the component of largest magnitude is positive.
		big := 0
		for j, v := range axis {
			if math.Abs(v) > math.Abs(axis[big]) {
				big = j
			}
		}
		if axis[big] < 0 {
			for j := range axis {
				axis[j] = -axis[j]
			}
		}
		for i := range N {
			dot := 0.0
			for j, v := range axis {
				dot += v * x.At(i, j)
			}
			res.Projected[i][a] = dot
		}
		if N > 1 {
			res.Variance[a] = lambda / float64(N-1)
		}
		res.Explained[a] = lambda / total
	}
	return res, nil
}

// normalize scales v to unit length (in place).
func normalize(v []float64) {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		return
	}
	n = 1 / math.Sqrt(n)
	for i := range v {
		v[i] *= n
	}
}
