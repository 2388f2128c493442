package hf

import (
	"encoding/binary"
	"math"
	"sync"
)

// F16ToF32 returns the IEEE 754 binary16 value h as a float32. Every binary16 value is exactly
// representable in float32, subnormals, infinities and NaNs included, so the conversion is exact;
// a NaN keeps its sign and payload (shifted into the top of the float32 mantissa).
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	em := uint32(h & 0x7fff) // exponent and mantissa
	switch {
	case em >= 0x7c00: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | (em&0x3ff)<<13)
	case em >= 0x400: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (em<<13 + (127-15)<<23))
	}
	// Zero or subnormal: em * 2^-24, exact in float32 arithmetic.
	return math.Float32frombits(sign | math.Float32bits(float32(em)*0x1p-24))
}

// F32ToF16 converts f to IEEE 754 binary16, rounding to nearest with ties to even (the rounding of
// torch's .half() and of the F16C instructions). Values whose magnitude rounds above 65504 become
// infinity, values below half the smallest subnormal (2^-25) become a signed zero. A NaN stays a
// NaN with its sign and the top 10 bits of its payload (forced non-zero), so F32ToF16(F16ToF32(h))
// == h for all 65536 values of h.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man == 0 {
			return sign | 0x7c00
		}
		m := uint16(man >> 13)
		if m == 0 {
			m = 0x200 // the payload lived in the dropped bits: keep it a NaN (quiet)
		}
		return sign | 0x7c00 | m
	}
	e := exp - 127 + 15 // binary16 biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Result is subnormal (or rounds up to the smallest normal). In units of 2^-24 the value
		// is man24 * 2^(e-14) with the implicit bit restored; values below 2^-25 round to zero.
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e) // 14..24
		h := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && h&1 == 1 {
			h++ // may carry into the exponent field: 0x400 is the smallest normal, as it should be
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // a carry out of the mantissa bumps the exponent; out of 0x7bff it gives infinity
	}
	return sign | uint16(h)
}

// BF16ToF32 returns the bfloat16 value h (the top 16 bits of a float32) as a float32; exact.
func BF16ToF32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// F32ToBF16 converts f to bfloat16, rounding to nearest with ties to even (as torch does); values
// that round past the largest finite bfloat16 become infinity. A NaN stays a NaN with its sign and
// the top 7 bits of its payload (forced non-zero), so F32ToBF16(BF16ToF32(h)) == h for every h.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		h := uint16(b >> 16)
		if h&0x7f == 0 {
			h |= 0x40
		}
		return h
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// f16Table holds F16ToF32 of every binary16 value (256 KiB), built on first use.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = F16ToF32(uint16(i))
	}
	return &t
})

// f16ToF32s converts the little-endian binary16 values of b into dst (len(b) = 2·len(dst)), as
// F16ToF32 does each: by table, four values a 64-bit load. Loading the built-in model's 11.6 M
// F16 weights in the page spent about 150 ms converting one value at a time; this is 3.9x as
// fast in wasm and 2.4x natively (BenchmarkF16ToF32s).
func f16ToF32s(dst []float32, b []byte) {
	t := f16Table()
	b = b[:2*len(dst)]
	n4 := len(dst) / 4 * 4
	for j := 0; j < n4; j += 4 {
		w := binary.LittleEndian.Uint64(b[2*j:])
		d := dst[j : j+4 : j+4]
		d[0], d[1], d[2], d[3] = t[uint16(w)], t[uint16(w>>16)], t[uint16(w>>32)], t[uint16(w>>48)]
	}
	for j := n4; j < len(dst); j++ {
		dst[j] = t[binary.LittleEndian.Uint16(b[2*j:])]
	}
}

// bf16ToF32s converts the little-endian bfloat16 values of b into dst (len(b) = 2·len(dst)), as
// BF16ToF32 does each, four values a 64-bit load.
func bf16ToF32s(dst []float32, b []byte) {
	b = b[:2*len(dst)]
	n4 := len(dst) / 4 * 4
	for j := 0; j < n4; j += 4 {
		w := binary.LittleEndian.Uint64(b[2*j:])
		d := dst[j : j+4 : j+4]
		d[0] = math.Float32frombits(uint32(uint16(w)) << 16)
		d[1] = math.Float32frombits(uint32(uint16(w>>16)) << 16)
		d[2] = math.Float32frombits(uint32(uint16(w>>32)) << 16)
		d[3] = math.Float32frombits(uint32(uint16(w>>48)) << 16)
	}
	for j := n4; j < len(dst); j++ {
		dst[j] = BF16ToF32(binary.LittleEndian.Uint16(b[2*j:]))
	}
}
