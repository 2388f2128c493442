package hf

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestDeltaHandComputed: one block whose largest move is 1.27 has scale 0.01, and each move is
// that many hundredths, rounded.
func TestDeltaHandComputed(t *testing.T) {
	base := []float32{1, 2, 3, 4, 5}
	moved := []float32{1 + 1.27, 2 - 0.5, 3 + 0.013, 4, 5 - 0.006}
	bf := mustReader(t, encodeBytes(t, []Tensor{{Name: "w", Shape: []int{5}, Data: base}}, WriteOptions{}))
	tf := mustReader(t, encodeBytes(t, []Tensor{{Name: "w", Shape: []int{5}, Data: moved}}, WriteOptions{}))
	ts, st, err := MakeDelta(bf, tf)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "w" || ts[1].Name != "w.delta_scale" {
		t.Fatalf("tensors %v", ts)
	}
	if want := []int8{127, -50, 1, 0, -1}; !slices.Equal(ts[0].Int8, want) {
		t.Errorf("steps %v, want %v", ts[0].Int8, want)
	}
	if s := ts[1].Data; len(s) != 1 || math.Abs(float64(s[0])-0.01) > 1e-7 {
		t.Errorf("scales %v, want [0.01]", s)
	}
	if st.Tensors != 1 || st.Values != 5 || st.MaxErr > 0.005+1e-6 || st.MaxErr < 0.003-1e-6 {
		// the worst value is 3.013 carried as 3 + 0.01: 0.003 off.
		t.Errorf("stats %+v, want 1 tensor, 5 values, max error 0.003", st)
	}
	df := mustReader(t, encodeBytes(t, ts, WriteOptions{}))
	got, err := ApplyDelta(bf, df)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got[0].Data {
		if math.Abs(float64(v-moved[i])) > 0.005+1e-6 {
			t.Errorf("value %d: %v, want %v within 0.005", i, v, moved[i])
		}
	}
}

// TestDeltaRoundTrip: an F16 base moved by a little noise, as a pre-training run moves its
// weights, comes back within half a scale of each value, as MakeDelta's figures say, and the
// file is a quarter of F32's bytes (plus the scales).
func TestDeltaRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string][]int{"emb": {37, 16}, "w": {5, 64}, "b": {130}, "s": {}, "empty": {0, 3}}
	names := []string{"emb", "w", "b", "s", "empty"}
	var base, target []Tensor
	for _, name := range names {
		n := 1
		for _, d := range shapes[name] {
			n *= d
		}
		b, tt := make([]float32, n), make([]float32, n)
		for i := range b {
			b[i] = float32(rng.NormFloat64() * 0.05)
			tt[i] = F16ToF32(F32ToF16(b[i])) + float32(rng.NormFloat64()*0.0005)
			if i%97 == 5 {
				tt[i] = F16ToF32(F32ToF16(b[i])) // unmoved values stay exact
			}
		}
		if name == "b" {
			clear(tt[64:128]) // a block moved to zero
			clear(b[64:128])  // from zero: scale 0
		}
		base = append(base, Tensor{Name: name, Shape: shapes[name], Data: b})
		target = append(target, Tensor{Name: name, Shape: shapes[name], Data: tt})
	}
	bf := mustReader(t, encodeBytes(t, base, WriteOptions{DType: F16}))
	tf := mustReader(t, encodeBytes(t, target, WriteOptions{}))
	ts, st, err := MakeDelta(bf, tf)
	if err != nil {
		t.Fatal(err)
	}
	raw := encodeBytes(t, ts, WriteOptions{})
	df := mustReader(t, raw)
	got, err := ApplyDelta(bf, df)
	if err != nil {
		t.Fatal(err)
	}
	var maxErr float64
	values := 0
	for k, g := range got {
		if g.Name != names[k] || !slices.Equal(g.Shape, shapes[names[k]]) {
			t.Fatalf("tensor %d: %s %v, want %s %v", k, g.Name, g.Shape, names[k], shapes[names[k]])
		}
		scales := ts[2*k+1].Data
		for i, v := range g.Data {
			want := target[k].Data[i]
			e := math.Abs(float64(v - want))
			maxErr = max(maxErr, e)
			if lim := float64(scales[i/DeltaBlock])/2*1.0001 + 1e-9; e > lim {
				t.Errorf("%s[%d]: %v, want %v within half a scale (%g)", g.Name, i, v, want, lim)
			}
			if want == F16ToF32(F32ToF16(base[k].Data[i])) && v != want {
				t.Errorf("%s[%d]: an unmoved value came back as %v, want %v exactly", g.Name, i, v, want)
			}
		}
		values += len(g.Data)
	}
	if st.Values != values || st.Tensors != len(names) || st.MaxErr != maxErr {
		t.Errorf("stats %+v, want %d values in %d tensors, max error %g", st, values, len(names), maxErr)
	}
	// Moves of 1% of the weights (0.0005 on 0.05) in 64-value blocks: a scale near 0.0013/127, so
	// errors below F16's on the weights themselves (with moves of 4% they are about equal).
	if st.RMSErr >= st.F16RMSErr {
		t.Errorf("delta rms error %g, F16's %g: want the delta closer", st.RMSErr, st.F16RMSErr)
	}
	if f32 := 4 * values; len(raw) > f32/4+f32/16+1024 {
		t.Errorf("delta file %d bytes for %d values: want about a quarter of F32's %d", len(raw), values, f32)
	}
}

func TestDeltaErrors(t *testing.T) {
	w := func(name string, shape []int, data ...float32) Tensor {
		return Tensor{Name: name, Shape: shape, Data: data}
	}
	file := func(dt DType, ts ...Tensor) *File { return mustReader(t, encodeBytes(t, ts, WriteOptions{DType: dt})) }
	base := file(F16, w("a", []int{2}, 1, 2), w("b", []int{1}, 3))
	good, _, err := MakeDelta(base, file(F32, w("a", []int{2}, 1.5, 2), w("b", []int{1}, 2)))
	if err != nil {
		t.Fatal(err)
	}
	replace := func(name string, t2 Tensor) []Tensor {
		out := slices.Clone(good)
		for i := range out {
			if out[i].Name == name {
				out[i] = t2
			}
		}
		return out
	}
	nan := float32(math.NaN())
	makeTests := []struct {
		name         string
		base, target *File
		want         string
	}{
		{"missing tensor", base, file(F32, w("a", []int{2}, 1, 2), w("c", []int{1}, 3)), `has no tensor "b"`},
		{"count", base, file(F32, w("a", []int{2}, 1, 2)), `holds 2 tensors`},
		{"shape", base, file(F32, w("a", []int{1, 2}, 1, 2), w("b", []int{1}, 3)), `tensor "a" has shape [2]`},
		{"NaN", base, file(F32, w("a", []int{2}, 1, nan), w("b", []int{1}, 3)), `tensor "a" value 1: base 2, target NaN: not finite`},
		{"reserved name", file(F32, w("x.delta_scale", []int{1}, 1)), file(F32, w("x.delta_scale", []int{1}, 1)), `ends in ".delta_scale"`},
	}
	for _, tt := range makeTests {
		if _, _, err := MakeDelta(tt.base, tt.target); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("MakeDelta %s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	applyTests := []struct {
		name  string
		delta []Tensor
		want  string
	}{
		{"extra tensor", append(slices.Clone(good), w("z", []int{1}, 1)), `tensor "z" is not one of the base's`},
		{"missing steps", good[1:], `has no tensor "a" of the base`},
		{"missing scales", slices.Delete(slices.Clone(good), 1, 2), `has no scales "a.delta_scale"`},
		{"steps shape", replace("a", Tensor{Name: "a", Shape: []int{1}, Int8: []int8{1}}), `tensor "a" has shape [1], the base's [2]`},
		{"steps dtype", replace("a", w("a", []int{2}, 1, 1)), `cannot be read as int8`},
		{"scales shape", replace("a.delta_scale", w("a.delta_scale", []int{2}, 1, 1)), `have shape [2], want [1]`},
		{"negative scale", replace("a.delta_scale", w("a.delta_scale", []int{1}, -1)), `scale 0 of "a" is -1`},
		{"infinite scale", replace("a.delta_scale", w("a.delta_scale", []int{1}, float32(math.Inf(1)))), `is +Inf`},
	}
	for _, tt := range applyTests {
		if _, err := ApplyDelta(base, file(F32, tt.delta...)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ApplyDelta %s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := ApplyDelta(file(F32, Tensor{Name: "ids", Shape: []int{1}, Int64: []int64{1}}), file(F32, Tensor{Name: "ids", Shape: []int{1}, Int8: []int8{1}}, w("ids.delta_scale", []int{1}, 1))); err == nil || !strings.Contains(err.Error(), "not a float tensor") {
		t.Errorf("ApplyDelta to an integer tensor: %v", err)
	}
}

// FuzzApplyDelta: whatever bytes the delta file holds, ApplyDelta returns tensors or an error,
// never a panic, and reads no more than the base's size.
func FuzzApplyDelta(f *testing.F) {
	w := func(name string, shape []int, data ...float32) Tensor {
		return Tensor{Name: name, Shape: shape, Data: data}
	}
	enc := func(ts []Tensor) []byte {
		var b strings.Builder
		if err := Encode(&b, ts, WriteOptions{}); err != nil {
			f.Fatal(err)
		}
		return []byte(b.String())
	}
	baseBytes := enc([]Tensor{w("a", []int{2, 40}, make([]float32, 80)...), w("b", []int{3}, 1, 2, 3)})
	good := enc([]Tensor{
		{Name: "a", Shape: []int{2, 40}, Int8: make([]int8, 80)}, w("a.delta_scale", []int{2}, 0.1, 0.2),
		{Name: "b", Shape: []int{3}, Int8: []int8{1, -1, 127}}, w("b.delta_scale", []int{1}, 0.5),
	})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		base := mustReader(t, baseBytes)
		d, err := NewReader(strings.NewReader(string(data)), int64(len(data)), "delta.safetensors")
		if err != nil {
			return
		}
		got, err := ApplyDelta(base, d)
		if err == nil && (len(got) != 2 || len(got[0].Data) != 80 || len(got[1].Data) != 3) {
			t.Fatalf("ApplyDelta gave %d tensors without an error", len(got))
		}
	})
}
