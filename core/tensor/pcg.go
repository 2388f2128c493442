package tensor

import "math/bits"

// PCGKeep fills keep with dropout decisions drawn from a PCG generator in the state (hi, lo),
// as math/rand/v2's PCG holds it (rand.NewPCG(hi, lo)): each 64-bit draw (rand.PCG.Uint64)
// decides two elements, its low 32 bits the first and its high 32 bits the second, and an
// element is kept (1) when its 32 bits are at least thr, else dropped (0); an odd last element
// takes the low half of one more draw. These are the decisions of
//
//	for i := 0; i < len(keep); i += 2 {
//		r := rng.Uint64()
//		keep[i] = r&0xffffffff >= thr, keep[i+1] = r>>32 >= thr (while i+1 < len(keep))
//	}
//
// on any machine: with AVX-512 the generator runs as eight interleaved ones (the state
// jumped eight draws at a time), 16 decisions a turn.
func PCGKeep(keep []uint8, hi, lo uint64, thr uint32) {
	hi, lo = pcgStep(hi, lo)
	done := pcgKeepBlocks(keep, &hi, &lo, thr)
	pcgKeepPost(keep[done:], hi, lo, thr)
}

// The constants of math/rand/v2's PCG: a 128-bit LCG, state = state·mul + inc (mod 2¹²⁸),
// its output the DXSM mix of the new state.
const (
	pcgMulHi    = 2549297995355413924
	pcgMulLo    = 4865540595714422341
	pcgIncHi    = 6364136223846793005
	pcgIncLo    = 1442695040888963407
	pcgCheapMul = 0xda942042e4dd58b5
)

// pcgStep is one step of the LCG: (hi, lo)·mul + inc mod 2¹²⁸.
func pcgStep(hi, lo uint64) (uint64, uint64) {
	h, l := bits.Mul64(lo, pcgMulLo)
	h += hi*pcgMulLo + lo*pcgMulHi
	l, c := bits.Add64(l, pcgIncLo, 0)
	h, _ = bits.Add64(h, pcgIncHi, c)
	return h, l
}

// pcgOut is the draw (DXSM) from the state (hi, lo) just stepped to.
func pcgOut(hi, lo uint64) uint64 {
	hi ^= hi >> 32
	hi *= pcgCheapMul
	hi ^= hi >> 48
	return hi * (lo | 1)
}

// pcgKeepPost is PCGKeep from a state already stepped to: the first draw is pcgOut(hi, lo).
func pcgKeepPost(keep []uint8, hi, lo uint64, thr uint32) {
	n := len(keep)
	i := 0
	for ; i+2 <= n; i += 2 {
		r := pcgOut(hi, lo)
		hi, lo = pcgStep(hi, lo)
		keep[i], keep[i+1] = keepIf(uint32(r), thr), keepIf(uint32(r>>32), thr)
	}
	if i < n {
		keep[i] = keepIf(uint32(pcgOut(hi, lo)), thr)
	}
}

// keepIf is 1 when r ≥ thr, else 0 (a dropped element would be a mispredicted branch: the
// compiler makes this a SETcc).
func keepIf(r, thr uint32) uint8 {
	if r >= thr {
		return 1
	}
	return 0
}

// pcgJump8 is the LCG's step taken eight times as one: state·a + c (mod 2¹²⁸) with
// a = mul⁸ and c = inc·(mul⁷ + … + mul + 1), as [a.hi, a.lo, c.hi, c.lo].
var pcgJump8 = func() [4]uint64 {
	ah, al, ch, cl := uint64(0), uint64(1), uint64(0), uint64(0) // the identity step
	for range 8 {
		// (a, c) after one more step: a·mul, c·mul + inc.
		ah, al = mul128(ah, al, pcgMulHi, pcgMulLo)
		ch, cl = mul128(ch, cl, pcgMulHi, pcgMulLo)
		var carry uint64
		cl, carry = bits.Add64(cl, pcgIncLo, 0)
		ch, _ = bits.Add64(ch, pcgIncHi, carry)
	}
	return [4]uint64{ah, al, ch, cl}
}()

// mul128 is (ah, al)·(bh, bl) mod 2¹²⁸.
func mul128(ah, al, bh, bl uint64) (uint64, uint64) {
	h, l := bits.Mul64(al, bl)
	return h + ah*bl + al*bh, l
}
