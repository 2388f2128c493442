package hf

import (
	"encoding/binary"
	"math"
	"sort"
	"testing"
)

// f16Value is the exact value of the binary16 bits h from the definition, for finite h.
func f16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	man := float64(h & 0x3ff)
	if exp == 0 {
		return sign * math.Ldexp(man, -24)
	}
	return sign * math.Ldexp(1+man/1024, exp-15)
}

func TestF16ToF32Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		got := F16ToF32(h)
		exp := h >> 10 & 0x1f
		switch {
		case exp == 0x1f && h&0x3ff == 0:
			if !math.IsInf(float64(got), 0) || math.Signbit(float64(got)) != (h&0x8000 != 0) {
				t.Errorf("F16ToF32(%#04x) = %v, want a signed infinity", h, got)
			}
		case exp == 0x1f:
			// NaN: sign and payload land in the top of the float32 mantissa.
			if want := uint32(h&0x8000)<<16 | 0x7f800000 | uint32(h&0x3ff)<<13; math.Float32bits(got) != want {
				t.Errorf("F16ToF32(%#04x) = %#08x, want NaN %#08x", h, math.Float32bits(got), want)
			}
		default:
			want := f16Value(h)
			if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
				t.Errorf("F16ToF32(%#04x) = %v, want %v", h, got, want)
			}
		}
		if back := F32ToF16(got); back != h {
			t.Errorf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

func TestBF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		got := BF16ToF32(h)
		if math.Float32bits(got) != uint32(h)<<16 {
			t.Errorf("BF16ToF32(%#04x) = %#08x", h, math.Float32bits(got))
		}
		if back := F32ToBF16(got); back != h {
			t.Errorf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, back)
		}
	}
}

// roundRef rounds the non-negative finite x to the nearest of the sorted grid values (the
// non-negative values of a format, by bit pattern, with one more value standing for the first
// step past the largest finite one), ties to the even bit pattern. It returns the bit pattern;
// len(grid)-1 means overflow to infinity.
func roundRef(x float64, grid []float64) int {
	if x >= grid[len(grid)-1] {
		return len(grid) - 1
	}
	hi := sort.SearchFloat64s(grid, x) // first grid value >= x
	if grid[hi] == x {
		return hi
	}
	lo := hi - 1
	switch dl, dh := x-grid[lo], grid[hi]-x; {
	case dl < dh:
		return lo
	case dh < dl:
		return hi
	case lo%2 == 0:
		return lo
	}
	return hi
}

// Test values: every grid value, the midpoints between neighbours and one float32 step either
// side of them (where rounding decides), plus a sweep through all float32 bit patterns.
func roundingCases(grid []float64) []float32 {
	var xs []float32
	for i := 0; i+1 < len(grid); i++ {
		mid := float32((grid[i] + grid[i+1]) / 2) // exact: midpoints need one more bit than the grid
		xs = append(xs, float32(grid[i]), mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, float32(math.Inf(1))))
	}
	for b := uint64(0); b < 1<<32; b += 4093 { // a prime stride: ~1M values of every exponent
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	return append(xs, float32(math.Inf(1)), math.MaxFloat32, math.SmallestNonzeroFloat32)
}

func checkRounding(t *testing.T, format string, conv func(float32) uint16, back func(uint16) float32, grid []float64, nanBits uint16) {
	for _, x := range roundingCases(grid) {
		for _, v := range []float32{x, -x} {
			got := conv(v)
			if v != v {
				if got&0x7fff <= nanBits || back(got) == back(got) {
					t.Errorf("%s(NaN %#08x) = %#04x, not a NaN", format, math.Float32bits(v), got)
				}
				if got>>15 != uint16(math.Float32bits(v)>>31) {
					t.Errorf("%s(NaN %#08x) = %#04x lost the sign", format, math.Float32bits(v), got)
				}
				continue
			}
			want := uint16(roundRef(math.Abs(float64(v)), grid))
			if math.Signbit(float64(v)) {
				want |= 0x8000
			}
			if got != want {
				t.Fatalf("%s(%v = %#08x) = %#04x (%v), want %#04x (%v)", format, v, math.Float32bits(v), got, back(got), want, back(want))
			}
		}
	}
}

func TestF32ToF16Rounding(t *testing.T) {
	// Bit patterns 0..0x7bff in order, then 0x7c00 standing for 2^16: the value the step past
	// 65504 would have, so that the round-to-nearest-even overflow threshold 65520 falls out.
	grid := make([]float64, 0x7c01)
	for h := range 0x7c00 {
		grid[h] = f16Value(uint16(h))
	}
	grid[0x7c00] = 65536
	checkRounding(t, "F32ToF16", F32ToF16, F16ToF32, grid, 0x7c00)
	for _, tt := range []struct {
		in   float32
		want uint16
	}{
		{65504, 0x7bff}, {65519.996, 0x7bff}, {65520, 0x7c00}, {1e6, 0x7c00},
		{0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {0x1.000002p-25, 0x0001}, {0x1.8p-24, 0x0002},
		{0x1.ffcp-15, 0x0400}, // the largest subnormal's upper midpoint rounds up into the normals
		{float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {0.1, 0x2e66},
	} {
		if got := F32ToF16(tt.in); got != tt.want {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

func TestF32ToBF16Rounding(t *testing.T) {
	grid := make([]float64, 0x7f81)
	for h := range 0x7f80 {
		grid[h] = float64(BF16ToF32(uint16(h)))
	}
	grid[0x7f80] = math.Ldexp(1, 128)
	checkRounding(t, "F32ToBF16", F32ToBF16, BF16ToF32, grid, 0x7f80)
	for _, tt := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80}, {3.14159265, 0x4049}, {math.MaxFloat32, 0x7f80}, {0x1.fep127, 0x7f7f},
		{float32(math.NaN()), 0x7fc0}, {math.Float32frombits(0x7f800001), 0x7fc0}, {math.Float32frombits(0xff800001), 0xffc0},
	} {
		if got := F32ToBF16(tt.in); got != tt.want {
			t.Errorf("F32ToBF16(%v) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

func TestF32ToF16NaN(t *testing.T) {
	for _, bits := range []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0x7f801fff, 0xff800001, 0x7fffffff} {
		got := F32ToF16(math.Float32frombits(bits))
		if got&0x7c00 != 0x7c00 || got&0x3ff == 0 || got>>15 != uint16(bits>>31) {
			t.Errorf("F32ToF16(NaN %#08x) = %#04x, want a NaN with the same sign", bits, got)
		}
	}
}

// TestBulkConversions checks f16ToF32s and bf16ToF32s against F16ToF32 and BF16ToF32 on every
// 16-bit value, bit for bit (NaN payloads included), at every length of the four-value loop's
// tail.
func TestBulkConversions(t *testing.T) {
	src := make([]byte, 2*65536)
	for i := range 65536 {
		binary.LittleEndian.PutUint16(src[2*i:], uint16(i*40503)) // every value once, shuffled
	}
	for _, c := range []struct {
		name string
		bulk func([]float32, []byte)
		one  func(uint16) float32
	}{{"F16", f16ToF32s, F16ToF32}, {"BF16", bf16ToF32s, BF16ToF32}} {
		for _, n := range []int{65536, 65535, 65534, 65533, 3, 1, 0} {
			dst := make([]float32, n+1)
			dst[n] = 42 // past the end: untouched
			c.bulk(dst[:n], src[:2*n])
			for i := range n {
				h := binary.LittleEndian.Uint16(src[2*i:])
				if math.Float32bits(dst[i]) != math.Float32bits(c.one(h)) {
					t.Fatalf("%s n=%d: value %#04x gives %#08x, want %#08x", c.name, n, h, math.Float32bits(dst[i]), math.Float32bits(c.one(h)))
				}
			}
			if dst[n] != 42 {
				t.Errorf("%s n=%d: wrote past the end", c.name, n)
			}
		}
	}
}

// BenchmarkF16ToF32s converts 1 Mi F16 weights (values of a trained model's spread).
func BenchmarkF16ToF32s(b *testing.B) {
	const n = 1 << 20
	src := make([]byte, 2*n)
	x := uint32(1)
	for i := range n {
		x = x*1664525 + 1013904223
		binary.LittleEndian.PutUint16(src[2*i:], F32ToF16(float32(int32(x>>8)-(1<<23))/(1<<23)*0.05))
	}
	dst := make([]float32, n)
	b.Run("one-at-a-time", func(b *testing.B) {
		for b.Loop() {
			for j := range dst {
				dst[j] = F16ToF32(binary.LittleEndian.Uint16(src[2*j:]))
			}
		}
		b.SetBytes(2 * n)
	})
	b.Run("bulk", func(b *testing.B) {
		for b.Loop() {
			f16ToF32s(dst, src)
		}
		b.SetBytes(2 * n)
	})
}
