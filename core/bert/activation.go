package bert

import (
	"fmt"
	"math"

	"github.com/bertlab/bertlab/core/tensor"
)

// activation returns the in-place function for a HF hidden_act name. "gelu" is the exact erf
// form; the tanh approximation is "gelu_new" (and its aliases), never silently substituted.
// Every one is element-wise, so that it may run on any split of its input with the same bits
// (tensor.LinearPackedAct applies it strip by strip).
func activation(name string) (func([]float32), error) {
	switch name {
	case "gelu", "gelu_python":
		return tensor.GELU, nil
	case "gelu_new", "gelu_pytorch_tanh", "gelu_fast":
		return tensor.GELUTanh, nil
	case "relu":
		return tensor.ReLU, nil
	case "tanh":
		return tensor.Tanh, nil
	case "silu", "swish":
		return silu, nil
	}
	return nil, fmt.Errorf("hidden_act %q is not supported (gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu, tanh)", name)
}

// activationWithDerivative returns, for a hidden_act whose derivative a training step can
// keep from its forward pass at no extra cost, the function that sets y = act(x) and
// d = act'(x) (d may alias x; y with act's bits, and dy·d the bits of its backward); nil for
// the others. The exact GELU's backward otherwise evaluates Φ again (erf and exp per element).
func activationWithDerivative(name string) func(y, d, x []float32) {
	switch name {
	case "gelu", "gelu_python":
		return tensor.GELUWithDerivative
	}
	return nil
}

func silu(x []float32) {
	for i, v := range x {
		x[i] = float32(float64(v) / (1 + math.Exp(-float64(v))))
	}
}
