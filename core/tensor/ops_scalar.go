//go:build (!(wasm && goexperiment.simd) && !amd64) || purego

package tensor

// Without the simd package (wasm with GOEXPERIMENT=simd) or assembly (amd64, ops_amd64.go)
// the row and element-wise kernels are their pure-Go twins, in ops.go.

// softmaxRow replaces row by its softmax (see SoftmaxRows).
func softmaxRow(row []float32) { softmaxRowGo(row) }

// layerNormRow normalises row[n] into out[n] (see LayerNorm) and returns the mean and rstd.
func layerNormRow(out, row, g, b []float32, eps float32) (mean, rstd float32) {
	return layerNormRowGo(out, row, g, b, eps)
}

// gelu applies the exact GELU in place (see GELU).
func gelu(x []float32) { geluGo(x) }

// opsName names the element-wise kernels in use (see Kernels).
func opsName() string { return "go" }

// add sets dst[i] = a[i] + b[i] (see Add).
func add(dst, a, b []float32) { addGo(dst, a, b) }

// expShiftSum sets dst[j] = expf(x[j] - shift) and returns their sum in float64.
func expShiftSum(dst, x []float32, shift float32) float64 { return expShiftSumGo(dst, x, shift) }

// rowMax is the largest element of x (-Inf for an empty x).
func rowMax(x []float32) float32 { return rowMaxGo(x) }

// scale multiplies x by s in place (see Scale).
func scale(x []float32, s float32) { scaleGo(x, s) }

// geluBackward sets dx = dy·GELU'(x) (see GELUBackward).
func geluBackward(dx, dy, x []float32) { geluBackwardGo(dx, dy, x) }

// geluDeriv sets y = GELU(x) and d = GELU'(x) (see GELUWithDerivative).
func geluDeriv(y, d, x []float32) { geluDerivGo(y, d, x) }

// mul sets dst[i] = a[i]·b[i] (see Mul).
func mul(dst, a, b []float32) { mulGo(dst, a, b) }

// adamw is one AdamW update of w, m and v by g (see AdamW).
func adamw(w, m, v, g []float32, c *AdamWConsts) { adamwGo(w, m, v, g, c) }

// sumSquares is the sum of x[i]² in float64 (see SumSquares).
func sumSquares(x []float32) float64 { return sumSquaresGo(x) }

// addCols sets acc[j] += float64(x[j]) (see SumRows).
func addCols(acc []float64, x []float32) { addColsGo(acc, x) }
