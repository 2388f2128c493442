package ui

import (
	"math"
	"slices"
	"testing"

	"github.com/bertlab/bertlab/core/engine"
	"github.com/bertlab/bertlab/core/explain"
)

// The explanation functions, natively, as wasm/engine answers them.

func (e *nativeEngine) Attributions(r explain.Request) (*explain.Report, error) {
	return e.e.Attributions(r)
}

func (e *nativeEngine) Lens(r explain.Request) (*explain.Report, error) { return e.e.Lens(r) }

func (e *nativeEngine) Ablation(r explain.Request) (*explain.Report, error) {
	return e.e.Ablation(r)
}

func (e *nativeEngine) Importance(r explain.Request) (*explain.Report, error) {
	return e.e.Importance(r)
}

func (e *nativeEngine) Neuron(r engine.NeuronRequest) (*explain.Neuron, error) {
	return e.e.Neuron(r)
}

func TestWhyRouteRoundTrip(t *testing.T) {
	for _, r := range []Route{
		{View: ViewWhy, Text: "the [MASK] sat", Masks: []int{1}, Target: "cat", Method: explain.MethodIG, IGSteps: 16, Baseline: "pad",
			Off: []explain.Head{{Layer: 1, Head: 3}, {Layer: 0, Head: 2}}},
		{View: ViewWhy, Text: "a b", Target: "isnext"},
	} {
		got, ok := ParseRoute(r.Hash())
		if !ok || got.View != ViewWhy || got.Target != r.Target || got.Method != r.Method || got.IGSteps != r.IGSteps ||
			got.Baseline != r.Baseline || !slices.Equal(got.Off, r.Off) {
			t.Errorf("%+v -> %q -> %+v", r, r.Hash(), got)
		}
	}
	// What the URL gets wrong is dropped, not kept.
	got, _ := ParseRoute("#why?text=x&method=lime&igsteps=9999&baseline=zero&off=0.1,x,1.-2,0.1,3")
	if got.Method != "" || got.IGSteps != explain.MaxSteps || got.Baseline != "" || !slices.Equal(got.Off, []explain.Head{{Layer: 0, Head: 1}}) {
		t.Errorf("lenient parse: %+v", got)
	}
}

func TestNiceCeil(t *testing.T) {
	for _, tc := range []struct{ v, want float64 }{
		{0.00008, 0.0001}, {0.0001, 0.0001}, {0.00011, 0.0002}, {0.003, 0.005}, {0.06, 0.1}, {0.3, 0.5}, {0.7, 1}, {0, 1},
	} {
		if got := niceCeil(tc.v); math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("niceCeil(%g) = %g, want %g", tc.v, got, tc.want)
		}
	}
}
