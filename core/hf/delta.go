package hf

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// DeltaBlock is how many consecutive values of a tensor (row-major) share one scale in a delta
// file.
const DeltaBlock = 64

// deltaScaleSuffix names a tensor's scales in a delta file: "NAME" holds the 8-bit steps and
// "NAME" + deltaScaleSuffix the F32 scale of each block of DeltaBlock of them.
const deltaScaleSuffix = ".delta_scale"

// DeltaStats says how far a delta's reconstruction lies from the target it was made from, and,
// for comparison, how far the target stored as F16 would lie.
type DeltaStats struct {
	Tensors, Values int
	// MaxErr and RMSErr: |base + delta − target| over all values.
	MaxErr, RMSErr float64
	// F16MaxErr and F16RMSErr: |F16(target) − target| over the same values.
	F16MaxErr, F16RMSErr float64
}

// MakeDelta returns the tensors of a delta file that carries the weights of base to those of
// target, a quarter the size of target in F32 (half of F16) and, for weights that moved little
// from base, about as close to target as F16: for each tensor NAME of base (float, any stored
// dtype), "NAME" as I8 of its shape and "NAME.delta_scale" as F32 [⌈n/DeltaBlock⌉]. Block b's
// scale is max |target − base| over its values / 127 and its steps are round((target − base) /
// scale), so each reconstructed value (ApplyDelta) is within scale/2 of target. base and target
// must hold the same tensor names with the same shapes, all values finite.
func MakeDelta(base, target *File) ([]Tensor, DeltaStats, error) {
	var st DeltaStats
	names, err := sameTensors(base, target)
	if err != nil {
		return nil, st, err
	}
	out := make([]Tensor, 0, 2*len(names))
	var sumSq, f16SumSq float64
	for _, name := range names {
		b, shape, err := base.Float32(name)
		if err != nil {
			return nil, st, fmt.Errorf("delta: %w", err)
		}
		t, _, err := target.Float32(name)
		if err != nil {
			return nil, st, fmt.Errorf("delta: %w", err)
		}
		q := make([]int8, len(b))
		scales := make([]float32, (len(b)+DeltaBlock-1)/DeltaBlock)
		for blk := range scales {
			lo, hi := blk*DeltaBlock, min((blk+1)*DeltaBlock, len(b))
			var m float32
			for i := lo; i < hi; i++ {
				d := t[i] - b[i]
				if !finite(b[i]) || !finite(t[i]) || !finite(d) {
					return nil, st, fmt.Errorf("delta: tensor %q value %d: base %v, target %v: not finite", name, i, b[i], t[i])
				}
				m = max(m, float32(math.Abs(float64(d))))
			}
			s := m / 127
			scales[blk] = s
			for i := lo; i < hi; i++ {
				if s > 0 {
					// |d/s| ≤ 127 by construction; the clamp guards the rounding of s itself.
					q[i] = int8(max(-127, min(127, math.Round(float64((t[i]-b[i])/s)))))
				}
				r := deltaValue(b[i], q[i], s)
				e := math.Abs(float64(r - t[i]))
				st.MaxErr = max(st.MaxErr, e)
				sumSq += e * e
				e16 := math.Abs(float64(F16ToF32(F32ToF16(t[i])) - t[i]))
				st.F16MaxErr = max(st.F16MaxErr, e16)
				f16SumSq += e16 * e16
			}
		}
		st.Tensors++
		st.Values += len(b)
		out = append(out,
			Tensor{Name: name, Shape: shape, Int8: q},
			Tensor{Name: name + deltaScaleSuffix, Shape: []int{len(scales)}, Data: scales})
	}
	if st.Values > 0 {
		st.RMSErr = math.Sqrt(sumSq / float64(st.Values))
		st.F16RMSErr = math.Sqrt(f16SumSq / float64(st.Values))
	}
	return out, st, nil
}

// ApplyDelta returns base's tensors carried by delta (a file MakeDelta made from the same base)
// as float32, in base's order: value i of tensor NAME is base[i] + delta[i]·scale[i/DeltaBlock].
// Every tensor of base must have its steps and scales in delta, and delta nothing else; a
// mismatch names the tensor.
func ApplyDelta(base, delta *File) ([]Tensor, error) {
	names := base.Names()
	want := make(map[string]bool, 2*len(names))
	for _, name := range names {
		if strings.HasSuffix(name, deltaScaleSuffix) {
			return nil, fmt.Errorf("apply delta: base tensor %q ends in %q, which a delta file keeps for scales", name, deltaScaleSuffix)
		}
		want[name], want[name+deltaScaleSuffix] = true, true
	}
	for _, name := range delta.Names() {
		if !want[name] {
			return nil, fmt.Errorf("apply delta: %s: tensor %q is not one of the base's (a delta made from another base?)", delta.name, name)
		}
	}
	out := make([]Tensor, 0, len(names))
	for _, name := range names {
		bi, _ := base.Info(name)
		if bi.DType != F32 && bi.DType != F16 && bi.DType != BF16 {
			return nil, fmt.Errorf("apply delta: base tensor %q is %s, not a float tensor", name, bi.DType)
		}
		qi, ok := delta.Info(name)
		if !ok {
			return nil, fmt.Errorf("apply delta: %s has no tensor %q of the base", delta.name, name)
		}
		if !slices.Equal(qi.Shape, bi.Shape) {
			return nil, fmt.Errorf("apply delta: %s: tensor %q has shape %v, the base's %v", delta.name, name, qi.Shape, bi.Shape)
		}
		blocks := (bi.NumElements() + DeltaBlock - 1) / DeltaBlock
		si, ok := delta.Info(name + deltaScaleSuffix)
		if !ok {
			return nil, fmt.Errorf("apply delta: %s has no scales %q", delta.name, name+deltaScaleSuffix)
		}
		if len(si.Shape) != 1 || si.Shape[0] != blocks {
			return nil, fmt.Errorf("apply delta: %s: scales %q have shape %v, want [%d] (one for each %d values)", delta.name, name+deltaScaleSuffix, si.Shape, blocks, DeltaBlock)
		}
		q, _, err := delta.Int8(name)
		if err != nil {
			return nil, fmt.Errorf("apply delta: %w", err)
		}
		scales, _, err := delta.Float32(name + deltaScaleSuffix)
		if err != nil {
			return nil, fmt.Errorf("apply delta: %w", err)
		}
		for blk, s := range scales {
			if !finite(s) || s < 0 {
				return nil, fmt.Errorf("apply delta: %s: scale %d of %q is %v, want a finite value ≥ 0", delta.name, blk, name, s)
			}
		}
		b, shape, err := base.Float32(name)
		if err != nil {
			return nil, fmt.Errorf("apply delta: %w", err)
		}
		for i := range b {
			b[i] = deltaValue(b[i], q[i], scales[i/DeltaBlock])
		}
		out = append(out, Tensor{Name: name, Shape: shape, Data: b})
	}
	return out, nil
}

// deltaValue is one reconstructed value: MakeDelta's error figures and ApplyDelta use the same
// arithmetic, so the figures describe exactly what ApplyDelta gives.
func deltaValue(base float32, q int8, scale float32) float32 {
	return base + float32(q)*scale
}

// sameTensors returns the names of a's tensors after checking that b holds the same names with
// the same shapes, all of float dtypes.
func sameTensors(a, b *File) ([]string, error) {
	names := a.Names()
	if bn := b.Names(); len(bn) != len(names) {
		return nil, fmt.Errorf("delta: %s holds %d tensors, %s %d", a.name, len(names), b.name, len(bn))
	}
	for _, name := range names {
		if strings.HasSuffix(name, deltaScaleSuffix) {
			return nil, fmt.Errorf("delta: tensor %q ends in %q, which a delta file keeps for scales", name, deltaScaleSuffix)
		}
		ai, _ := a.Info(name)
		bi, ok := b.Info(name)
		if !ok {
			return nil, fmt.Errorf("delta: %s has no tensor %q (it is in %s)", b.name, name, a.name)
		}
		if !slices.Equal(ai.Shape, bi.Shape) {
			return nil, fmt.Errorf("delta: tensor %q has shape %v in %s and %v in %s", name, ai.Shape, a.name, bi.Shape, b.name)
		}
	}
	return names, nil
}

func finite(v float32) bool {
	return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
}
