// Package tensor holds dense float32 tensors and the kernels BERT needs: the matmul family,
// bias add, masked softmax, LayerNorm, exact GELU and tanh.
//
// Every kernel has a pure-Go implementation that is the reference and the path WebAssembly
// runs; matmul has a faster amd64 path selected at run time (see gemm_amd64.go), always tested
// against its pure-Go twin.
package tensor

import (
	"fmt"
	"strings"
)

// Tensor is a dense, row-major float32 array.
type Tensor struct {
	Shape []int
	Data  []float32
}

// New returns a zero tensor of the given shape.
func New(shape ...int) *Tensor {
	n := 1
	for _, d := range shape {
		if d < 0 {
			// A copy in the message: shape itself does not escape, so the caller's
			// variadic arguments stay on its stack.
			panic(fmt.Sprintf("tensor: negative dimension in shape %v", append([]int(nil), shape...)))
		}
		n *= d
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: make([]float32, n)}
}

// FromData wraps data (not copied) as a tensor of the given shape.
func FromData(data []float32, shape ...int) (*Tensor, error) {
	n := NumElements(shape)
	if n != len(data) {
		return nil, fmt.Errorf("tensor: shape %v needs %d elements, have %d", shape, n, len(data))
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: data}, nil
}

// NumElements is the product of the dimensions of shape (1 for a scalar).
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Len is the number of elements.
func (t *Tensor) Len() int { return len(t.Data) }

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	return &Tensor{Shape: append([]int(nil), t.Shape...), Data: append([]float32(nil), t.Data...)}
}

// Zero sets every element to 0.
func (t *Tensor) Zero() { clear(t.Data) }

// Row returns row i of a tensor viewed as [rows, Shape[last]].
func (t *Tensor) Row(i int) []float32 {
	w := t.Shape[len(t.Shape)-1]
	return t.Data[i*w : (i+1)*w]
}

// ShapeString formats a shape as [a,b,c].
func ShapeString(shape []int) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// SameShape reports whether two shapes are equal.
func SameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
