//go:build amd64 && !purego

#include "textflag.h"

// AVX-512F kernels for the element-wise and row operations of ops.go, ops_backward.go and
// the optimizer (Go declarations and dispatch in ops_amd64.go). Each one performs, lane by
// lane, the same float32 and float64 operations in the same order as its pure-Go twin (no
// FMA where the twin has none), so that the element-wise results are bit-identical to it;
// only the order of the sums of the reductions differs. Every loop takes 16 floats a turn;
// the last turn loads and stores under a mask (K7) of the floats that remain, so that no
// byte outside the slices is touched.
//
// The Go assembler's operand order is the reverse of Intel's: VSUBPS A, B, C is C = B - A;
// VCMPPS $p, A, B, K is K = B <p> A; a .BCST operand is a float from memory broadcast to
// every lane.

// Constants (bit patterns printed by a Go program from the expressions of erf.go and
// ops_backward.go, so that each is the float the Go twin uses).
DATA opsc<>+0(SB)/8, $0x3fe6a09e667f3bcd // 1/√2 (float64)
DATA opsc<>+8(SB)/8, $0x3ff0000000000000 // 1 (float64)
DATA opsc<>+16(SB)/8, $0x3fe0000000000000 // 0.5 (float64)
DATA opsc<>+24(SB)/8, $0x4055d589f2fe5107 // 87.33654475055311 = -ln(2⁻¹²⁶) (float64)
DATA opsc<>+32(SB)/8, $0xbff71547652b82fe // -log2(e) (float64)
DATA opsc<>+40(SB)/8, $0x4338000000000000 // 1.5·2⁵² (float64)
DATA opsc<>+48(SB)/8, $0x3fe62e42fefa39ef // ln 2 (float64)
DATA opsc<>+56(SB)/8, $0x8000000000000000 // sign bit (float64)
DATA opsc<>+64(SB)/4, $0x38a4b514 // erfR
DATA opsc<>+68(SB)/4, $0xba51fb7e
DATA opsc<>+72(SB)/4, $0x3baa02d9
DATA opsc<>+76(SB)/4, $0xbcdbfc86
DATA opsc<>+80(SB)/4, $0x3de7167c
DATA opsc<>+84(SB)/4, $0xbec0939f
DATA opsc<>+88(SB)/4, $0x3e0375d4
DATA opsc<>+92(SB)/4, $0x3ddc28f6 // 0.1075 ≈ 1/9.3
DATA opsc<>+96(SB)/4, $0xbd4f328b // erfcxQ
DATA opsc<>+100(SB)/4, $0x3e92d640
DATA opsc<>+104(SB)/4, $0xbf3701e4
DATA opsc<>+108(SB)/4, $0x3f8131a0
DATA opsc<>+112(SB)/4, $0xbf548aaf
DATA opsc<>+116(SB)/4, $0x3e917b37
DATA opsc<>+120(SB)/4, $0x3e378b99
DATA opsc<>+124(SB)/4, $0xbe72d06d
DATA opsc<>+128(SB)/4, $0xbdb034dd
DATA opsc<>+132(SB)/4, $0x3f0dff9e
DATA opsc<>+136(SB)/4, $0x3d770342
DATA opsc<>+140(SB)/4, $0x39506967 // expPoly
DATA opsc<>+144(SB)/4, $0x3ab743ce
DATA opsc<>+148(SB)/4, $0x3c088908
DATA opsc<>+152(SB)/4, $0x3d2aa9c1
DATA opsc<>+156(SB)/4, $0x3e2aaaaa
DATA opsc<>+160(SB)/4, $0x3f000000
DATA opsc<>+164(SB)/4, $0x3f800000 // 1
DATA opsc<>+168(SB)/4, $0x3f000000 // 0.5
DATA opsc<>+172(SB)/4, $0x00000000 // 0
DATA opsc<>+176(SB)/4, $0x4114cccd // 9.3
DATA opsc<>+180(SB)/4, $0x3ecc422a // 1/√(2π)
DATA opsc<>+184(SB)/4, $0x7fffffff // abs mask
DATA opsc<>+188(SB)/4, $0x0000007f // 127 (int32)
DATA opsc<>+192(SB)/4, $0x3fb8aa3b // log2(e)
DATA opsc<>+196(SB)/4, $0x4b400000 // 1.5·2²³
DATA opsc<>+200(SB)/4, $0xbf318000 // -c1 (ln 2 high part)
DATA opsc<>+204(SB)/4, $0x395e8083 // -c2
DATA opsc<>+208(SB)/4, $0x42b17218 // expf's hi
DATA opsc<>+212(SB)/4, $0xc2aeac50 // expf's lo
DATA opsc<>+216(SB)/4, $0x7f800000 // +Inf
DATA opsc<>+220(SB)/4, $0xff800000 // -Inf
DATA opsc<>+224(SB)/4, $0x42fe0000 // 127 (float32)
GLOBL opsc<>(SB), RODATA|NOPTR, $232

#define C_INVSQRT2 opsc<>+0(SB)
#define C_ONE64 opsc<>+8(SB)
#define C_HALF64 opsc<>+16(SB)
#define C_EXPCUT opsc<>+24(SB)
#define C_NLOG2E64 opsc<>+32(SB)
#define C_MAGIC64 opsc<>+40(SB)
#define C_LN2_64 opsc<>+48(SB)
#define C_SIGN64 opsc<>+56(SB)
#define C_R0 opsc<>+64(SB)
#define C_R1 opsc<>+68(SB)
#define C_R2 opsc<>+72(SB)
#define C_R3 opsc<>+76(SB)
#define C_R4 opsc<>+80(SB)
#define C_R5 opsc<>+84(SB)
#define C_R6 opsc<>+88(SB)
#define C_QW opsc<>+92(SB)
#define C_Q0 opsc<>+96(SB)
#define C_Q1 opsc<>+100(SB)
#define C_Q2 opsc<>+104(SB)
#define C_Q3 opsc<>+108(SB)
#define C_Q4 opsc<>+112(SB)
#define C_Q5 opsc<>+116(SB)
#define C_Q6 opsc<>+120(SB)
#define C_Q7 opsc<>+124(SB)
#define C_Q8 opsc<>+128(SB)
#define C_Q9 opsc<>+132(SB)
#define C_Q10 opsc<>+136(SB)
#define C_P0 opsc<>+140(SB)
#define C_P1 opsc<>+144(SB)
#define C_P2 opsc<>+148(SB)
#define C_P3 opsc<>+152(SB)
#define C_P4 opsc<>+156(SB)
#define C_P5 opsc<>+160(SB)
#define C_ONE32 opsc<>+164(SB)
#define C_HALF32 opsc<>+168(SB)
#define C_ZERO32 opsc<>+172(SB)
#define C_93 opsc<>+176(SB)
#define C_INVSQRT2PI opsc<>+180(SB)
#define C_ABS32 opsc<>+184(SB)
#define C_127 opsc<>+188(SB)
#define C_LOG2E32 opsc<>+192(SB)
#define C_MAGIC32 opsc<>+196(SB)
#define C_NC1 opsc<>+200(SB)
#define C_NC2 opsc<>+204(SB)
#define C_EXPHI opsc<>+208(SB)
#define C_EXPLO opsc<>+212(SB)
#define C_INF32 opsc<>+216(SB)
#define C_NINF32 opsc<>+220(SB)
#define C_127F opsc<>+224(SB)

// TAILMASK sets K7 to the lanes of this turn: all 16, or the CX < 16 that remain. Clobbers AX.
#define TAILMASK(lbl) \
	MOVL $0xffff, AX; \
	CMPQ CX, $16; \
	JGE  lbl; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
lbl: \
	KMOVW AX, K7

// PREFETCHAHEAD asks for the cache line PFDIST bytes past reg: the streaming kernels (AdamW,
// sums of squares) run over arrays far larger than the caches, and on the 2-vCPU EPYC VMs the
// hardware prefetchers alone fed one stream at 7.6 GB/s. With one line asked for per line
// read, 512 bytes ahead: SumSquares of 11.2 M floats 5.9 -> 1.25-1.5 ms, AdamW on 11.2 M
// parameters 12.9 -> 5.0-6.8 ms. The element-wise kernels of a training step (GELU and its
// derivative, the products and sums, the logits' maximum, the bias gradients' column sums)
// ask for their inputs too: a Mini step's forward and backward 160.7 -> 156.8 ms, medians of
// alternating runs (asking for the output lines as well, with PREFETCHW, gained nothing
// measurable). A prefetch past the end of an array does not fault.
#define PFDIST 512
#define PREFETCHAHEAD(reg) PREFETCHT0 PFDIST(reg)

// HORNER32 is p = p*x + c in float32 (a multiply, then an add: no FMA, as in Go).
#define HORNER32(x, p, c) \
	VMULPS      x, p, p; \
	VADDPS.BCST c, p, p

// EXPPOLY sets p to expPoly(r): Cephes expf's polynomial, then p·r·r + r + 1.
#define EXPPOLY(r, p) \
	VBROADCASTSS C_P0, p; \
	HORNER32(r, p, C_P1); \
	HORNER32(r, p, C_P2); \
	HORNER32(r, p, C_P3); \
	HORNER32(r, p, C_P4); \
	HORNER32(r, p, C_P5); \
	VMULPS       r, p, p; \
	VMULPS       r, p, p; \
	VADDPS       r, p, p; \
	VADDPS.BCST  C_ONE32, p, p

// EXPF sets Z1 to expf(Z0) (ops_backward.go) lane by lane. Clobbers Z2-Z4, K2, K3.
#define EXPF \
	VMULPS.BCST C_LOG2E32, Z0, Z2; \
	VADDPS.BCST C_MAGIC32, Z2, Z2; \
	VSUBPS.BCST C_MAGIC32, Z2, Z2; \
	VMULPS.BCST C_NC1, Z2, Z3; \
	VADDPS      Z3, Z0, Z3; \
	VMULPS.BCST C_NC2, Z2, Z4; \
	VADDPS      Z4, Z3, Z3; \
	EXPPOLY(Z3, Z1); \
	VSCALEFPS   Z2, Z1, Z1; \
	VCMPPS.BCST $0x1e, C_EXPHI, Z0, K2; \
	VCMPPS.BCST $0x11, C_EXPLO, Z0, K3; \
	VBROADCASTSS C_INF32, K2, Z1; \
	VPXORD      Z1, Z1, K3, Z1

// HORNER32X2 is HORNER32 on two vectors at once: p = p*x + c and q = q*y + c.
#define HORNER32X2(x, p, y, q, c) \
	VMULPS      x, p, p; \
	VMULPS      y, q, q; \
	VADDPS.BCST c, p, p; \
	VADDPS.BCST c, q, q

// EXPF2 is EXPF on two vectors at once, its steps interleaved: Z1 = expf(Z0) and
// Z11 = expf(Z10), lane by lane, the same operations in the same order for each. One EXPF a
// turn is a chain of about twenty dependent steps: the core kept too few turns in flight
// to fill its pipes (23 cycles a vector in L1); two independent chains side by side take 18.
// Clobbers Z2-Z4, Z13-Z15, K2-K5.
#define EXPF2 \
	VMULPS.BCST  C_LOG2E32, Z0, Z2; \
	VMULPS.BCST  C_LOG2E32, Z10, Z13; \
	VADDPS.BCST  C_MAGIC32, Z2, Z2; \
	VADDPS.BCST  C_MAGIC32, Z13, Z13; \
	VSUBPS.BCST  C_MAGIC32, Z2, Z2; \
	VSUBPS.BCST  C_MAGIC32, Z13, Z13; \
	VMULPS.BCST  C_NC1, Z2, Z3; \
	VMULPS.BCST  C_NC1, Z13, Z14; \
	VADDPS       Z3, Z0, Z3; \
	VADDPS       Z14, Z10, Z14; \
	VMULPS.BCST  C_NC2, Z2, Z4; \
	VMULPS.BCST  C_NC2, Z13, Z15; \
	VADDPS       Z4, Z3, Z3; \
	VADDPS       Z15, Z14, Z14; \
	VBROADCASTSS C_P0, Z1; \
	VBROADCASTSS C_P0, Z11; \
	HORNER32X2(Z3, Z1, Z14, Z11, C_P1); \
	HORNER32X2(Z3, Z1, Z14, Z11, C_P2); \
	HORNER32X2(Z3, Z1, Z14, Z11, C_P3); \
	HORNER32X2(Z3, Z1, Z14, Z11, C_P4); \
	HORNER32X2(Z3, Z1, Z14, Z11, C_P5); \
	VMULPS       Z3, Z1, Z1; \
	VMULPS       Z14, Z11, Z11; \
	VMULPS       Z3, Z1, Z1; \
	VMULPS       Z14, Z11, Z11; \
	VADDPS       Z3, Z1, Z1; \
	VADDPS       Z14, Z11, Z11; \
	VADDPS.BCST  C_ONE32, Z1, Z1; \
	VADDPS.BCST  C_ONE32, Z11, Z11; \
	VSCALEFPS    Z2, Z1, Z1; \
	VSCALEFPS    Z13, Z11, Z11; \
	VCMPPS.BCST  $0x1e, C_EXPHI, Z0, K2; \
	VCMPPS.BCST  $0x1e, C_EXPHI, Z10, K4; \
	VCMPPS.BCST  $0x11, C_EXPLO, Z0, K3; \
	VCMPPS.BCST  $0x11, C_EXPLO, Z10, K5; \
	VBROADCASTSS C_INF32, K2, Z1; \
	VBROADCASTSS C_INF32, K4, Z11; \
	VPXORD       Z1, Z1, K3, Z1; \
	VPXORD       Z11, Z11, K5, Z11

// NORMCDF sets Z1 to Φ(Z0) and Z2 to exp(-Z0²/2) lane by lane, as normCDF and expNeg64 in
// erf.go: both branches of normCDF are computed and the lanes with |v/√2| < 1 (K1) take
// the first. The float64 parts run in two halves of 8 lanes (lo in Z16.., hi in Z17..).
// The three polynomials (R in Z23, expPoly in Z2, Q in Z6) are independent chains of
// dependent steps, interleaved here so that each waits on its own previous step while the
// others go on: one after the other, with Q's ten steps after the division last, GELU took
// 8-9% longer (BenchmarkGELU, BenchmarkGELUBackward). The operations are those of one after
// the other, so the bits are the same.
// Clobbers Z5-Z9, Z16-Z31, K1-K5.
#define NORMCDF \
	VCVTPS2PD     Y0, Z16; \
	VEXTRACTF64X4 $1, Z0, Y17; \
	VCVTPS2PD     Y17, Z17; \
	VMULPD.BCST   C_INVSQRT2, Z16, Z18; \
	VMULPD.BCST   C_INVSQRT2, Z17, Z19; \
	VCVTPD2PS     Z18, Y20; \
	VCVTPD2PS     Z19, Y21; \
	VINSERTF64X4  $1, Y21, Z20, Z20; \
	VPANDD.BCST   C_ABS32, Z20, Z21; \
	VCMPPS.BCST   $0x11, C_ONE32, Z21, K1; \
	VMULPS        Z20, Z20, Z22; \
	VMINPS.BCST   C_93, Z21, Z5; \
	VBROADCASTSS  C_ONE32, Z7; \
	VDIVPS        Z5, Z7, Z5; \
	VSUBPS.BCST   C_QW, Z5, Z5; \
	VBROADCASTSS  C_Q0, Z6; \
	VBROADCASTSS  C_R0, Z23; \
	VMULPD.BCST   C_HALF64, Z16, Z26; \
	VMULPD        Z16, Z26, Z26; \
	VMULPD.BCST   C_HALF64, Z17, Z27; \
	VMULPD        Z17, Z27, Z27; \
	HORNER32(Z22, Z23, C_R1); \
	VCMPPD.BCST   $0x1e, C_EXPCUT, Z26, K2; \
	VCMPPD.BCST   $0x1e, C_EXPCUT, Z27, K3; \
	KUNPCKBW      K2, K3, K4; \
	VMULPD.BCST   C_NLOG2E64, Z26, Z28; \
	VMULPD.BCST   C_NLOG2E64, Z27, Z29; \
	HORNER32(Z22, Z23, C_R2); \
	VADDPD.BCST   C_MAGIC64, Z28, Z28; \
	VADDPD.BCST   C_MAGIC64, Z29, Z29; \
	VSUBPD.BCST   C_MAGIC64, Z28, Z28; \
	VSUBPD.BCST   C_MAGIC64, Z29, Z29; \
	HORNER32(Z22, Z23, C_R3); \
	HORNER32(Z5, Z6, C_Q1); \
	VMULPD.BCST   C_LN2_64, Z28, Z30; \
	VMULPD.BCST   C_LN2_64, Z29, Z31; \
	VPXORQ.BCST   C_SIGN64, Z26, Z26; \
	VPXORQ.BCST   C_SIGN64, Z27, Z27; \
	VSUBPD        Z30, Z26, Z26; \
	VSUBPD        Z31, Z27, Z27; \
	HORNER32(Z22, Z23, C_R4); \
	HORNER32(Z5, Z6, C_Q2); \
	VCVTPD2PS     Z26, Y26; \
	VCVTPD2PS     Z27, Y27; \
	VINSERTF64X4  $1, Y27, Z26, Z26; \
	VCVTTPD2DQ    Z28, Y28; \
	VCVTTPD2DQ    Z29, Y29; \
	VINSERTI64X4  $1, Y29, Z28, Z28; \
	VPADDD.BCST   C_127, Z28, Z28; \
	VPSLLD        $23, Z28, Z28; \
	HORNER32(Z22, Z23, C_R5); \
	HORNER32(Z5, Z6, C_Q3); \
	VBROADCASTSS  C_P0, Z2; \
	HORNER32(Z22, Z23, C_R6); \
	HORNER32(Z26, Z2, C_P1); \
	HORNER32(Z5, Z6, C_Q4); \
	VCVTPS2PD     Y23, Z24; \
	VEXTRACTF64X4 $1, Z23, Y25; \
	VCVTPS2PD     Y25, Z25; \
	HORNER32(Z26, Z2, C_P2); \
	HORNER32(Z5, Z6, C_Q5); \
	VMULPD        Z18, Z24, Z24; \
	VMULPD        Z19, Z25, Z25; \
	VADDPD.BCST   C_ONE64, Z18, Z8; \
	VADDPD.BCST   C_ONE64, Z19, Z9; \
	HORNER32(Z26, Z2, C_P3); \
	HORNER32(Z5, Z6, C_Q6); \
	VADDPD        Z24, Z8, Z24; \
	VADDPD        Z25, Z9, Z25; \
	VMULPD.BCST   C_HALF64, Z24, Z24; \
	VMULPD.BCST   C_HALF64, Z25, Z25; \
	HORNER32(Z26, Z2, C_P4); \
	HORNER32(Z5, Z6, C_Q7); \
	VCVTPD2PS     Z24, Y24; \
	VCVTPD2PS     Z25, Y25; \
	VINSERTF64X4  $1, Y25, Z24, Z24; \
	HORNER32(Z26, Z2, C_P5); \
	HORNER32(Z5, Z6, C_Q8); \
	VMULPS        Z26, Z2, Z2; \
	HORNER32(Z5, Z6, C_Q9); \
	VMULPS        Z26, Z2, Z2; \
	VADDPS        Z26, Z2, Z2; \
	HORNER32(Z5, Z6, C_Q10); \
	VADDPS.BCST   C_ONE32, Z2, Z2; \
	VMULPS        Z28, Z2, Z2; \
	VPXORD        Z2, Z2, K4, Z2; \
	VMULPS.BCST   C_HALF32, Z2, Z1; \
	VMULPS        Z6, Z1, Z1; \
	VCMPPS.BCST   $0x1e, C_ZERO32, Z0, K5; \
	VSUBPS        Z1, Z7, K5, Z1; \
	VMOVAPS       Z24, K1, Z1

// func geluAVX512(x *float32, n int)
TEXT ·geluAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX

geluloop:
	TESTQ CX, CX
	JLE   geludone
	TAILMASK(gelumask)
	PREFETCHAHEAD(DI)
	VMOVUPS.Z (DI), K7, Z0
	NORMCDF
	VMULPS    Z1, Z0, Z3
	VMOVUPS   Z3, K7, (DI)
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       geluloop

geludone:
	VZEROUPPER
	RET

// func geluBackwardAVX512(dx, dy, x *float32, n int)
TEXT ·geluBackwardAVX512(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX

gelubloop:
	TESTQ CX, CX
	JLE   gelubdone
	TAILMASK(gelubmask)
	PREFETCHAHEAD(DX)
	PREFETCHAHEAD(SI)
	VMOVUPS.Z   (DX), K7, Z0
	NORMCDF
	VMULPS.BCST C_INVSQRT2PI, Z0, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS      Z3, Z1, Z3
	VMOVUPS.Z   (SI), K7, Z4
	VMULPS      Z3, Z4, Z3
	VMOVUPS     Z3, K7, (DI)
	ADDQ        $64, DI
	ADDQ        $64, SI
	ADDQ        $64, DX
	SUBQ        $16, CX
	JMP         gelubloop

gelubdone:
	VZEROUPPER
	RET

// HMAXPS sets the low lane of X5 to the largest of the 16 lanes of Z5. Clobbers Z6.
#define HMAXPS \
	VEXTRACTF64X4 $1, Z5, Y6; \
	VMAXPS        Y6, Y5, Y5; \
	VEXTRACTF128  $1, Y5, X6; \
	VMAXPS        X6, X5, X5; \
	VPERMILPS     $0x4e, X5, X6; \
	VMAXPS        X6, X5, X5; \
	VPERMILPS     $0xb1, X5, X6; \
	VMAXPS        X6, X5, X5

// HSUMPD sets the low lane of X(acc) to the sum of the 8 float64 lanes of Z(acc). Clobbers tmp.
#define HSUMPD(accz, accy, accx, tmpy, tmpx) \
	VEXTRACTF64X4 $1, accz, tmpy; \
	VADDPD        tmpy, accy, accy; \
	VEXTRACTF128  $1, accy, tmpx; \
	VADDPD        tmpx, accx, accx; \
	VPERMILPD     $1, accx, tmpx; \
	VADDSD        tmpx, accx, accx

// ADDPS2PD adds the 16 float32 lanes of Z(src) to the float64 accumulators lo and hi.
// Clobbers tmp.
#define ADDPS2PD(srcz, srcy, lo, hi, tmpz, tmpy) \
	VCVTPS2PD     srcy, tmpz; \
	VADDPD        tmpz, lo, lo; \
	VEXTRACTF64X4 $1, srcz, tmpy; \
	VCVTPS2PD     tmpy, tmpz; \
	VADDPD        tmpz, hi, hi

// func maxAddAVX512(x, mask *float32, n int) float32
// The largest x[i] + mask[i] (x[i] when mask is nil); -Inf for n 0.
TEXT ·maxAddAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ mask+8(FP), R8
	MOVQ n+16(FP), CX
	VBROADCASTSS C_NINF32, Z5

maxloop:
	TESTQ CX, CX
	JLE   maxdone
	TAILMASK(maxmask)
	PREFETCHAHEAD(SI)
	VBROADCASTSS C_NINF32, Z0
	VMOVUPS      (SI), K7, Z0
	TESTQ        R8, R8
	JZ           maxnomask
	VMOVUPS.Z    (R8), K7, Z1
	VADDPS       Z1, Z0, Z0
	ADDQ         $64, R8

maxnomask:
	VMAXPS Z0, Z5, Z5
	ADDQ   $64, SI
	SUBQ   $16, CX
	JMP    maxloop

maxdone:
	HMAXPS
	MOVSS X5, ret+24(FP)
	VZEROUPPER
	RET

// func expSumAVX512(dst, x, mask *float32, n int, shift float32) float64
// dst[i] = expf(x[i] + mask[i] - shift) (mask nil: expf(x[i] - shift)); returns their sum
// in float64. dst may alias x.
TEXT ·expSumAVX512(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         mask+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSS shift+32(FP), Z7
	VPXORQ       Z8, Z8, Z8
	VPXORQ       Z9, Z9, Z9

	// Two vectors a turn while 32 or more remain (EXPF2), their sums added in order: the
	// first vector's, then the second's, as the one-vector loop adds them.
exploop2:
	CMPQ    CX, $32
	JLT     exploop
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z10
	TESTQ   R8, R8
	JZ      exp2nomask
	VADDPS  (R8), Z0, Z0
	VADDPS  64(R8), Z10, Z10
	ADDQ    $128, R8

exp2nomask:
	VSUBPS  Z7, Z0, Z0
	VSUBPS  Z7, Z10, Z10
	EXPF2
	VMOVUPS Z1, (DI)
	VMOVUPS Z11, 64(DI)
	ADDPS2PD(Z1, Y1, Z8, Z9, Z12, Y12)
	ADDPS2PD(Z11, Y11, Z8, Z9, Z12, Y12)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     exploop2

exploop:
	TESTQ CX, CX
	JLE   expdone
	TAILMASK(expmask)
	VMOVUPS.Z (SI), K7, Z0
	TESTQ     R8, R8
	JZ        expnomask
	VMOVUPS.Z (R8), K7, Z1
	VADDPS    Z1, Z0, Z0
	ADDQ      $64, R8

expnomask:
	VSUBPS    Z7, Z0, Z0
	EXPF
	VMOVAPS.Z Z1, K7, Z1
	VMOVUPS   Z1, K7, (DI)
	ADDPS2PD(Z1, Y1, Z8, Z9, Z10, Y10)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       exploop

expdone:
	VADDPD Z9, Z8, Z8
	HSUMPD(Z8, Y8, X8, Y10, X10)
	MOVSD  X8, ret+40(FP)
	VZEROUPPER
	RET

// func scaleAVX512(x *float32, n int, s float32)
// x[i] *= s.
TEXT ·scaleAVX512(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Z7

scaleloop:
	TESTQ CX, CX
	JLE   scaledone
	TAILMASK(scalemask)
	VMOVUPS.Z (DI), K7, Z0
	VMULPS    Z7, Z0, Z0
	VMOVUPS   Z0, K7, (DI)
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       scaleloop

scaledone:
	VZEROUPPER
	RET

// func sumAVX512(x *float32, n int) float64
// The sum of x[i] in float64.
TEXT ·sumAVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9

sumloop:
	TESTQ CX, CX
	JLE   sumdone
	TAILMASK(summask)
	VMOVUPS.Z (SI), K7, Z0
	ADDPS2PD(Z0, Y0, Z8, Z9, Z10, Y10)
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       sumloop

sumdone:
	VADDPD Z9, Z8, Z8
	HSUMPD(Z8, Y8, X8, Y10, X10)
	MOVSD  X8, ret+16(FP)
	VZEROUPPER
	RET

// func addSumAVX512(dst, a, b *float32, n int) float64
// dst[i] = a[i] + b[i] (float32); returns the sum of dst in float64. dst may alias a or b.
TEXT ·addSumAVX512(SB), NOSPLIT, $0-40
	MOVQ   dst+0(FP), DI
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   n+24(FP), CX
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9

addsumloop:
	TESTQ CX, CX
	JLE   addsumdone
	TAILMASK(addsummask)
	VMOVUPS.Z (SI), K7, Z0
	VMOVUPS.Z (DX), K7, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K7, (DI)
	ADDPS2PD(Z0, Y0, Z8, Z9, Z10, Y10)
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       addsumloop

addsumdone:
	VADDPD Z9, Z8, Z8
	HSUMPD(Z8, Y8, X8, Y10, X10)
	MOVSD  X8, ret+32(FP)
	VZEROUPPER
	RET

// func sumSqDevAVX512(x *float32, n int, mu float64) float64
// The sum of (float64(x[i]) - mu)² in float64.
TEXT ·sumSqDevAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD mu+16(FP), Z7
	VPXORQ       Z8, Z8, Z8
	VPXORQ       Z9, Z9, Z9

sqloop:
	TESTQ CX, CX
	JLE   sqdone
	TAILMASK(sqmask)
	PREFETCHAHEAD(SI)
	VMOVUPS.Z       (SI), K7, Z0
	VCVTPS2PD       Y0, Z1
	VEXTRACTF64X4   $1, Z0, Y2
	VCVTPS2PD       Y2, Z2
	KSHIFTRW        $8, K7, K5
	VSUBPD.Z        Z7, Z1, K7, Z1
	VSUBPD.Z        Z7, Z2, K5, Z2
	VMULPD          Z1, Z1, Z1
	VMULPD          Z2, Z2, Z2
	VADDPD          Z1, Z8, Z8
	VADDPD          Z2, Z9, Z9
	ADDQ            $64, SI
	SUBQ            $16, CX
	JMP             sqloop

sqdone:
	VADDPD Z9, Z8, Z8
	HSUMPD(Z8, Y8, X8, Y10, X10)
	MOVSD  X8, ret+24(FP)
	VZEROUPPER
	RET

// func layerNormApplyAVX512(out, x, gamma, beta *float32, n int, mean, rstd float32)
// out[i] = (x[i] - mean)·rstd·gamma[i] + beta[i] (float32, in that order). out may alias x.
TEXT ·layerNormApplyAVX512(SB), NOSPLIT, $0-48
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         beta+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSS mean+40(FP), Z6
	VBROADCASTSS rstd+44(FP), Z7

lnloop:
	TESTQ CX, CX
	JLE   lndone
	TAILMASK(lnmask)
	VMOVUPS.Z (SI), K7, Z0
	VMOVUPS.Z (DX), K7, Z1
	VMOVUPS.Z (R8), K7, Z2
	VSUBPS    Z6, Z0, Z0
	VMULPS    Z7, Z0, Z0
	VMULPS    Z1, Z0, Z0
	VADDPS    Z2, Z0, Z0
	VMOVUPS   Z0, K7, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $64, R8
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       lnloop

lndone:
	VZEROUPPER
	RET

// func adamwAVX512(w, m, v, grad *float32, n int, c *AdamWConsts)
// The AdamW update of adamwGo (ops.go), lane by lane in the same order.
TEXT ·adamwAVX512(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), DI
	MOVQ         m+8(FP), SI
	MOVQ         v+16(FP), DX
	MOVQ         grad+24(FP), R8
	MOVQ         n+32(FP), CX
	MOVQ         c+40(FP), R9
	VBROADCASTSS 0(R9), Z20  // b1
	VBROADCASTSS 4(R9), Z21  // 1 - b1
	VBROADCASTSS 8(R9), Z22  // b2
	VBROADCASTSS 12(R9), Z23 // 1 - b2
	VBROADCASTSS 16(R9), Z24 // bc2sqrt
	VBROADCASTSS 20(R9), Z25 // eps
	VBROADCASTSS 24(R9), Z26 // step size
	VBROADCASTSS 28(R9), Z27 // weight decay factor
	VBROADCASTSS 32(R9), Z28 // gradient scale (clipping)

adamloop:
	TESTQ CX, CX
	JLE   adamdone
	TAILMASK(adammask)
	PREFETCHAHEAD(R8)
	PREFETCHAHEAD(DI)
	PREFETCHAHEAD(SI)
	PREFETCHAHEAD(DX)
	VMOVUPS.Z (R8), K7, Z0 // g
	VMOVUPS.Z (DI), K7, Z1 // w
	VMOVUPS.Z (SI), K7, Z2 // m
	VMOVUPS.Z (DX), K7, Z3 // v
	VMULPS    Z28, Z0, Z0
	VMULPS    Z27, Z1, Z1
	VMULPS    Z20, Z2, Z2
	VMULPS    Z21, Z0, Z4
	VADDPS    Z4, Z2, Z2
	VMULPS    Z22, Z3, Z3
	VMULPS    Z23, Z0, Z4
	VMULPS    Z0, Z4, Z4
	VADDPS    Z4, Z3, Z3
	VSQRTPS   Z3, Z5
	VDIVPS    Z24, Z5, Z5
	VADDPS    Z25, Z5, Z5
	VMULPS    Z2, Z26, Z4
	VDIVPS    Z5, Z4, Z4
	VSUBPS    Z4, Z1, Z1
	VMOVUPS   Z1, K7, (DI)
	VMOVUPS   Z2, K7, (SI)
	VMOVUPS   Z3, K7, (DX)
	ADDQ      $64, DI
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $64, R8
	SUBQ      $16, CX
	JMP       adamloop

adamdone:
	VZEROUPPER
	RET

// ---- AVX2 (with FMA's CPUs, but no FMA used): the same kernels on 8 lanes, for CPUs without
// ---- AVX-512. They take n rounded down to a multiple of 8; the Go side finishes the rest with
// ---- the twin (the same bits for the element-wise kernels). No embedded broadcasts: each
// ---- constant is broadcast into Y15 (or Y14) before use.

#define H32Y(x, p, c) \
	VMULPS       x, p, p; \
	VBROADCASTSS c, Y15; \
	VADDPS       Y15, p, p

// NORMCDFY sets Y1 to Φ(Y0) and Y2 to exp(-Y0²/2), as NORMCDF. Blends by the sign bit of a
// mask (VBLENDVPS). Clobbers Y3-Y15.
#define NORMCDFY \
	VCVTPS2PD     X0, Y3; \
	VEXTRACTF128  $1, Y0, X4; \
	VCVTPS2PD     X4, Y4; \
	VBROADCASTSD  C_INVSQRT2, Y15; \
	VMULPD        Y15, Y3, Y5; \
	VMULPD        Y15, Y4, Y6; \
	VCVTPD2PSY    Y5, X7; \
	VCVTPD2PSY    Y6, X8; \
	VINSERTF128   $1, X8, Y7, Y7; \
	VBROADCASTSS  C_ABS32, Y15; \
	VANDPS        Y15, Y7, Y8; \
	VBROADCASTSS  C_ONE32, Y15; \
	VCMPPS        $0x11, Y15, Y8, Y9; \
	VMULPS        Y7, Y7, Y7; \
	VBROADCASTSS  C_R0, Y10; \
	H32Y(Y7, Y10, C_R1); \
	H32Y(Y7, Y10, C_R2); \
	H32Y(Y7, Y10, C_R3); \
	H32Y(Y7, Y10, C_R4); \
	H32Y(Y7, Y10, C_R5); \
	H32Y(Y7, Y10, C_R6); \
	VCVTPS2PD     X10, Y11; \
	VEXTRACTF128  $1, Y10, X10; \
	VCVTPS2PD     X10, Y10; \
	VMULPD        Y5, Y11, Y11; \
	VMULPD        Y6, Y10, Y10; \
	VBROADCASTSD  C_ONE64, Y15; \
	VADDPD        Y15, Y5, Y5; \
	VADDPD        Y15, Y6, Y6; \
	VADDPD        Y11, Y5, Y5; \
	VADDPD        Y10, Y6, Y6; \
	VBROADCASTSD  C_HALF64, Y15; \
	VMULPD        Y15, Y5, Y5; \
	VMULPD        Y15, Y6, Y6; \
	VCVTPD2PSY    Y5, X5; \
	VCVTPD2PSY    Y6, X6; \
	VINSERTF128   $1, X6, Y5, Y5; \
	VMULPD        Y15, Y3, Y6; \
	VMULPD        Y3, Y6, Y6; \
	VMULPD        Y15, Y4, Y7; \
	VMULPD        Y4, Y7, Y7; \
	VBROADCASTSD  C_EXPCUT, Y15; \
	VCMPPD        $0x1e, Y15, Y6, Y10; \
	VCMPPD        $0x1e, Y15, Y7, Y11; \
	VCVTPD2PSY    Y10, X10; \
	VCVTPD2PSY    Y11, X11; \
	VINSERTF128   $1, X11, Y10, Y10; \
	VBROADCASTSD  C_NLOG2E64, Y15; \
	VMULPD        Y15, Y6, Y3; \
	VMULPD        Y15, Y7, Y4; \
	VBROADCASTSD  C_MAGIC64, Y15; \
	VADDPD        Y15, Y3, Y3; \
	VADDPD        Y15, Y4, Y4; \
	VSUBPD        Y15, Y3, Y3; \
	VSUBPD        Y15, Y4, Y4; \
	VBROADCASTSD  C_LN2_64, Y15; \
	VMULPD        Y15, Y3, Y11; \
	VMULPD        Y15, Y4, Y12; \
	VBROADCASTSD  C_SIGN64, Y15; \
	VXORPD        Y15, Y6, Y6; \
	VXORPD        Y15, Y7, Y7; \
	VSUBPD        Y11, Y6, Y6; \
	VSUBPD        Y12, Y7, Y7; \
	VCVTPD2PSY    Y6, X6; \
	VCVTPD2PSY    Y7, X7; \
	VINSERTF128   $1, X7, Y6, Y6; \
	VCVTTPD2DQY   Y3, X3; \
	VCVTTPD2DQY   Y4, X4; \
	VINSERTF128   $1, X4, Y3, Y3; \
	VPBROADCASTD  C_127, Y15; \
	VPADDD        Y15, Y3, Y3; \
	VPSLLD        $23, Y3, Y3; \
	VBROADCASTSS  C_P0, Y2; \
	H32Y(Y6, Y2, C_P1); \
	H32Y(Y6, Y2, C_P2); \
	H32Y(Y6, Y2, C_P3); \
	H32Y(Y6, Y2, C_P4); \
	H32Y(Y6, Y2, C_P5); \
	VMULPS        Y6, Y2, Y2; \
	VMULPS        Y6, Y2, Y2; \
	VADDPS        Y6, Y2, Y2; \
	VBROADCASTSS  C_ONE32, Y15; \
	VADDPS        Y15, Y2, Y2; \
	VMULPS        Y3, Y2, Y2; \
	VXORPS        Y11, Y11, Y11; \
	VBLENDVPS     Y10, Y11, Y2, Y2; \
	VBROADCASTSS  C_93, Y15; \
	VMINPS        Y15, Y8, Y8; \
	VBROADCASTSS  C_ONE32, Y15; \
	VDIVPS        Y8, Y15, Y8; \
	VBROADCASTSS  C_QW, Y15; \
	VSUBPS        Y15, Y8, Y8; \
	VBROADCASTSS  C_Q0, Y3; \
	H32Y(Y8, Y3, C_Q1); \
	H32Y(Y8, Y3, C_Q2); \
	H32Y(Y8, Y3, C_Q3); \
	H32Y(Y8, Y3, C_Q4); \
	H32Y(Y8, Y3, C_Q5); \
	H32Y(Y8, Y3, C_Q6); \
	H32Y(Y8, Y3, C_Q7); \
	H32Y(Y8, Y3, C_Q8); \
	H32Y(Y8, Y3, C_Q9); \
	H32Y(Y8, Y3, C_Q10); \
	VBROADCASTSS  C_HALF32, Y15; \
	VMULPS        Y15, Y2, Y1; \
	VMULPS        Y3, Y1, Y1; \
	VXORPS        Y4, Y4, Y4; \
	VCMPPS        $0x1e, Y4, Y0, Y4; \
	VBROADCASTSS  C_ONE32, Y15; \
	VSUBPS        Y1, Y15, Y6; \
	VBLENDVPS     Y4, Y6, Y1, Y1; \
	VBLENDVPS     Y9, Y5, Y1, Y1

// EXPFY sets Y1 to expf(Y0), as EXPF: the power of two as (p·f)·2^min(k, 127) with f = 2
// where k = 128 (expf's own split), 1 elsewhere. Clobbers Y2-Y6, Y15.
#define EXPFY \
	VBROADCASTSS C_LOG2E32, Y15; \
	VMULPS       Y15, Y0, Y2; \
	VBROADCASTSS C_MAGIC32, Y15; \
	VADDPS       Y15, Y2, Y2; \
	VSUBPS       Y15, Y2, Y2; \
	VBROADCASTSS C_NC1, Y15; \
	VMULPS       Y15, Y2, Y3; \
	VADDPS       Y3, Y0, Y3; \
	VBROADCASTSS C_NC2, Y15; \
	VMULPS       Y15, Y2, Y4; \
	VADDPS       Y4, Y3, Y3; \
	VBROADCASTSS C_P0, Y1; \
	H32Y(Y3, Y1, C_P1); \
	H32Y(Y3, Y1, C_P2); \
	H32Y(Y3, Y1, C_P3); \
	H32Y(Y3, Y1, C_P4); \
	H32Y(Y3, Y1, C_P5); \
	VMULPS       Y3, Y1, Y1; \
	VMULPS       Y3, Y1, Y1; \
	VADDPS       Y3, Y1, Y1; \
	VBROADCASTSS C_ONE32, Y15; \
	VADDPS       Y15, Y1, Y1; \
	VBROADCASTSS C_127F, Y4; \
	VCMPPS       $0x1e, Y4, Y2, Y5; \
	VANDPS       Y15, Y5, Y5; \
	VADDPS       Y15, Y5, Y5; \
	VMULPS       Y5, Y1, Y1; \
	VMINPS       Y4, Y2, Y2; \
	VCVTTPS2DQ   Y2, Y2; \
	VPBROADCASTD C_127, Y15; \
	VPADDD       Y15, Y2, Y2; \
	VPSLLD       $23, Y2, Y2; \
	VMULPS       Y2, Y1, Y1; \
	VBROADCASTSS C_EXPHI, Y15; \
	VCMPPS       $0x1e, Y15, Y0, Y5; \
	VBROADCASTSS C_INF32, Y15; \
	VBLENDVPS    Y5, Y15, Y1, Y1; \
	VBROADCASTSS C_EXPLO, Y15; \
	VCMPPS       $0x11, Y15, Y0, Y5; \
	VANDNPS      Y1, Y5, Y1

// HSUMPDY sets the low lane of X8 to the sum of the 4 float64 lanes of Y8. Clobbers X9.
#define HSUMPDY \
	VEXTRACTF128 $1, Y8, X9; \
	VADDPD       X9, X8, X8; \
	VPERMILPD    $1, X8, X9; \
	VADDSD       X9, X8, X8

// ADDPS2PDY adds the 8 float32 lanes of Y(src) to the float64 accumulator Y8. Clobbers Y9, Y10.
#define ADDPS2PDY(srcy, srcx) \
	VCVTPS2PD    srcx, Y9; \
	VEXTRACTF128 $1, srcy, X10; \
	VCVTPS2PD    X10, Y10; \
	VADDPD       Y9, Y8, Y8; \
	VADDPD       Y10, Y8, Y8

// func geluAVX2(x *float32, n int)
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ   gelu2done

gelu2loop:
	PREFETCHAHEAD(DI)
	VMOVUPS (DI), Y0
	NORMCDFY
	VMULPS  Y1, Y0, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     gelu2loop

gelu2done:
	VZEROUPPER
	RET

// func geluBackwardAVX2(dx, dy, x *float32, n int)
TEXT ·geluBackwardAVX2(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   gelub2done

gelub2loop:
	PREFETCHAHEAD(DX)
	PREFETCHAHEAD(SI)
	VMOVUPS      (DX), Y0
	NORMCDFY
	VBROADCASTSS C_INVSQRT2PI, Y15
	VMULPS       Y15, Y0, Y3
	VMULPS       Y2, Y3, Y3
	VADDPS       Y3, Y1, Y3
	VMOVUPS      (SI), Y4
	VMULPS       Y3, Y4, Y3
	VMOVUPS      Y3, (DI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	ADDQ         $32, DX
	DECQ         CX
	JNZ          gelub2loop

gelub2done:
	VZEROUPPER
	RET

// func maxAddAVX2(x, mask *float32, n int) float32
TEXT ·maxAddAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         mask+8(FP), R8
	MOVQ         n+16(FP), CX
	VBROADCASTSS C_NINF32, Y5
	SHRQ         $3, CX
	JZ           max2done

max2loop:
	PREFETCHAHEAD(SI)
	VMOVUPS (SI), Y0
	TESTQ   R8, R8
	JZ      max2nomask
	VADDPS  (R8), Y0, Y0
	ADDQ    $32, R8

max2nomask:
	VMAXPS Y0, Y5, Y5
	ADDQ   $32, SI
	DECQ   CX
	JNZ    max2loop

max2done:
	VEXTRACTF128 $1, Y5, X6
	VMAXPS       X6, X5, X5
	VPERMILPS    $0x4e, X5, X6
	VMAXPS       X6, X5, X5
	VPERMILPS    $0xb1, X5, X6
	VMAXPS       X6, X5, X5
	MOVSS        X5, ret+24(FP)
	VZEROUPPER
	RET

// func expSumAVX2(dst, x, mask *float32, n int, shift float32) float64
TEXT ·expSumAVX2(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         mask+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSS shift+32(FP), Y7
	VXORPD       Y8, Y8, Y8
	SHRQ         $3, CX
	JZ           exp2done

exp2loop:
	VMOVUPS (SI), Y0
	TESTQ   R8, R8
	JZ      exp2nomask
	VADDPS  (R8), Y0, Y0
	ADDQ    $32, R8

exp2nomask:
	VSUBPS  Y7, Y0, Y0
	EXPFY
	VMOVUPS Y1, (DI)
	ADDPS2PDY(Y1, X1)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     exp2loop

exp2done:
	HSUMPDY
	MOVSD X8, ret+40(FP)
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, n int, s float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y7
	SHRQ         $3, CX
	JZ           scale2done

scale2loop:
	VMULPS  (DI), Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     scale2loop

scale2done:
	VZEROUPPER
	RET

// func sumAVX2(x *float32, n int) float64
TEXT ·sumAVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y8, Y8, Y8
	SHRQ   $3, CX
	JZ     sum2done

sum2loop:
	VMOVUPS (SI), Y0
	ADDPS2PDY(Y0, X0)
	ADDQ    $32, SI
	DECQ    CX
	JNZ     sum2loop

sum2done:
	HSUMPDY
	MOVSD X8, ret+16(FP)
	VZEROUPPER
	RET

// func addSumAVX2(dst, a, b *float32, n int) float64
TEXT ·addSumAVX2(SB), NOSPLIT, $0-40
	MOVQ   dst+0(FP), DI
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   n+24(FP), CX
	VXORPD Y8, Y8, Y8
	SHRQ   $3, CX
	JZ     addsum2done

addsum2loop:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDPS2PDY(Y0, X0)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     addsum2loop

addsum2done:
	HSUMPDY
	MOVSD X8, ret+32(FP)
	VZEROUPPER
	RET

// func sumSqDevAVX2(x *float32, n int, mu float64) float64
TEXT ·sumSqDevAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD mu+16(FP), Y7
	VXORPD       Y8, Y8, Y8
	SHRQ         $3, CX
	JZ           sq2done

sq2loop:
	PREFETCHAHEAD(SI)
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VSUBPD    Y7, Y1, Y1
	VSUBPD    Y7, Y2, Y2
	VMULPD    Y1, Y1, Y1
	VMULPD    Y2, Y2, Y2
	VADDPD    Y1, Y8, Y8
	VADDPD    Y2, Y8, Y8
	ADDQ      $32, SI
	DECQ      CX
	JNZ       sq2loop

sq2done:
	HSUMPDY
	MOVSD X8, ret+24(FP)
	VZEROUPPER
	RET

// func layerNormApplyAVX2(out, x, gamma, beta *float32, n int, mean, rstd float32)
TEXT ·layerNormApplyAVX2(SB), NOSPLIT, $0-48
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         beta+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y6
	VBROADCASTSS rstd+44(FP), Y7
	SHRQ         $3, CX
	JZ           ln2done

ln2loop:
	VMOVUPS (SI), Y0
	VSUBPS  Y6, Y0, Y0
	VMULPS  Y7, Y0, Y0
	VMULPS  (DX), Y0, Y0
	VADDPS  (R8), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	ADDQ    $32, DI
	DECQ    CX
	JNZ     ln2loop

ln2done:
	VZEROUPPER
	RET

// func adamwAVX2(w, m, v, grad *float32, n int, c *AdamWConsts)
TEXT ·adamwAVX2(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), DI
	MOVQ         m+8(FP), SI
	MOVQ         v+16(FP), DX
	MOVQ         grad+24(FP), R8
	MOVQ         n+32(FP), CX
	MOVQ         c+40(FP), R9
	VBROADCASTSS 0(R9), Y8
	VBROADCASTSS 4(R9), Y9
	VBROADCASTSS 8(R9), Y10
	VBROADCASTSS 12(R9), Y11
	VBROADCASTSS 16(R9), Y12
	VBROADCASTSS 20(R9), Y13
	VBROADCASTSS 24(R9), Y14
	VBROADCASTSS 28(R9), Y15
	VBROADCASTSS 32(R9), Y6
	SHRQ         $3, CX
	JZ           adam2done

adam2loop:
	PREFETCHAHEAD(R8)
	PREFETCHAHEAD(DI)
	PREFETCHAHEAD(SI)
	PREFETCHAHEAD(DX)
	VMOVUPS (R8), Y0
	VMULPS  Y6, Y0, Y0
	VMOVUPS (DI), Y1
	VMOVUPS (SI), Y2
	VMOVUPS (DX), Y3
	VMULPS  Y15, Y1, Y1
	VMULPS  Y8, Y2, Y2
	VMULPS  Y9, Y0, Y4
	VADDPS  Y4, Y2, Y2
	VMULPS  Y10, Y3, Y3
	VMULPS  Y11, Y0, Y4
	VMULPS  Y0, Y4, Y4
	VADDPS  Y4, Y3, Y3
	VSQRTPS Y3, Y5
	VDIVPS  Y12, Y5, Y5
	VADDPS  Y13, Y5, Y5
	VMULPS  Y2, Y14, Y4
	VDIVPS  Y5, Y4, Y4
	VSUBPS  Y4, Y1, Y1
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, (SI)
	VMOVUPS Y3, (DX)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	DECQ    CX
	JNZ     adam2loop

adam2done:
	VZEROUPPER
	RET

// func addColsAVX512(acc *float64, x *float32, n int)
// acc[j] += float64(x[j]) for j < n (one row of SumRows).
TEXT ·addColsAVX512(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

	// Whole vectors of 16 without masks (masked stores are slow on some cores), then the tail.
colsfull:
	CMPQ          CX, $16
	JLT           colstail
	PREFETCHAHEAD(SI)
	VCVTPS2PD     (SI), Z1
	VCVTPS2PD     32(SI), Z2
	VADDPD        (DI), Z1, Z1
	VADDPD        64(DI), Z2, Z2
	VMOVUPD       Z1, (DI)
	VMOVUPD       Z2, 64(DI)
	ADDQ          $64, SI
	ADDQ          $128, DI
	SUBQ          $16, CX
	JMP           colsfull

colstail:
	TESTQ CX, CX
	JLE   colsdone
	TAILMASK(colsmask)
	KSHIFTRW      $8, K7, K6
	VMOVUPS.Z     (SI), K7, Z0
	VCVTPS2PD     Y0, Z1
	VEXTRACTF64X4 $1, Z0, Y2
	VCVTPS2PD     Y2, Z2
	VMOVUPD.Z     (DI), K7, Z3
	VMOVUPD.Z     64(DI), K6, Z4
	VADDPD        Z1, Z3, Z3
	VADDPD        Z2, Z4, Z4
	VMOVUPD       Z3, K7, (DI)
	VMOVUPD       Z4, K6, 64(DI)

colsdone:
	VZEROUPPER
	RET

// func addColsAVX2(acc *float64, x *float32, n int)
// As addColsAVX512 on the first n &^ 7 columns.
TEXT ·addColsAVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   cols2done

cols2loop:
	PREFETCHAHEAD(SI)
	VCVTPS2PD (SI), Y1
	VCVTPS2PD 16(SI), Y2
	VADDPD    (DI), Y1, Y1
	VADDPD    32(DI), Y2, Y2
	VMOVUPD   Y1, (DI)
	VMOVUPD   Y2, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       cols2loop

cols2done:
	VZEROUPPER
	RET

// func addAVX512(dst, a, b *float32, n int)
// dst[i] = a[i] + b[i]; dst may be a or b.
TEXT ·addAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

addloop:
	TESTQ CX, CX
	JLE   adddone
	TAILMASK(addmask)
	PREFETCHAHEAD(SI)
	PREFETCHAHEAD(DX)
	VMOVUPS.Z (SI), K7, Z0
	VMOVUPS.Z (DX), K7, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K7, (DI)
	ADDQ      $64, DI
	ADDQ      $64, SI
	ADDQ      $64, DX
	SUBQ      $16, CX
	JMP       addloop

adddone:
	VZEROUPPER
	RET

// func addAVX2(dst, a, b *float32, n int)
// dst[i] = a[i] + b[i] for n a multiple of 8; dst may be a or b.
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   add2done

add2loop:
	PREFETCHAHEAD(SI)
	PREFETCHAHEAD(DX)
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     add2loop

add2done:
	VZEROUPPER
	RET

// func geluDerivAVX512(y, d, x *float32, n int)
// y = GELU(x) as geluAVX512 and d = GELU'(x) as geluBackwardAVX512 multiplies dy by (the same
// instructions on one NORMCDF); d may be x.
TEXT ·geluDerivAVX512(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ d+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX

gelumloop:
	TESTQ CX, CX
	JLE   gelumdone
	TAILMASK(gelummask)
	PREFETCHAHEAD(DX)
	VMOVUPS.Z   (DX), K7, Z0
	NORMCDF
	VMULPS      Z1, Z0, Z4
	VMULPS.BCST C_INVSQRT2PI, Z0, Z3
	VMULPS      Z2, Z3, Z3
	VADDPS      Z3, Z1, Z3
	VMOVUPS     Z4, K7, (DI)
	VMOVUPS     Z3, K7, (SI)
	ADDQ        $64, DI
	ADDQ        $64, SI
	ADDQ        $64, DX
	SUBQ        $16, CX
	JMP         gelumloop

gelumdone:
	VZEROUPPER
	RET

// func geluDerivAVX2(y, d, x *float32, n int)
// geluDerivAVX512 for n a multiple of 8.
TEXT ·geluDerivAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ d+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   gelum2done

gelum2loop:
	PREFETCHAHEAD(DX)
	VMOVUPS      (DX), Y0
	NORMCDFY
	VMULPS       Y1, Y0, Y4
	VBROADCASTSS C_INVSQRT2PI, Y15
	VMULPS       Y15, Y0, Y3
	VMULPS       Y2, Y3, Y3
	VADDPS       Y3, Y1, Y3
	VMOVUPS      Y4, (DI)
	VMOVUPS      Y3, (SI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	ADDQ         $32, DX
	DECQ         CX
	JNZ          gelum2loop

gelum2done:
	VZEROUPPER
	RET

// func mulAVX512(dst, a, b *float32, n int)
// dst[i] = a[i] * b[i]; dst may be a or b.
TEXT ·mulAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

mulloop:
	TESTQ CX, CX
	JLE   muldone
	TAILMASK(mulmask)
	PREFETCHAHEAD(SI)
	PREFETCHAHEAD(DX)
	VMOVUPS.Z (SI), K7, Z0
	VMOVUPS.Z (DX), K7, Z1
	VMULPS    Z1, Z0, Z0
	VMOVUPS   Z0, K7, (DI)
	ADDQ      $64, DI
	ADDQ      $64, SI
	ADDQ      $64, DX
	SUBQ      $16, CX
	JMP       mulloop

muldone:
	VZEROUPPER
	RET

// func mulAVX2(dst, a, b *float32, n int)
// dst[i] = a[i] * b[i] for n a multiple of 8; dst may be a or b.
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   mul2done

mul2loop:
	PREFETCHAHEAD(SI)
	PREFETCHAHEAD(DX)
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     mul2loop

mul2done:
	VZEROUPPER
	RET

// func maskScaleAVX512(dst, src *float32, keep *uint8, n int, scale float32)
// dst[i] = src[i]·scale with its bits ANDed with -keep[i] (0 or all ones), as maskScaleGo;
// n a multiple of 16; dst may be src.
TEXT ·maskScaleAVX512(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         keep+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS scale+32(FP), Z2
	VPXORD       Z3, Z3, Z3
	SHRQ         $4, CX
	JZ           msdone

msloop:
	PREFETCHAHEAD(SI)
	VMOVUPS   (SI), Z0
	VPMOVZXBD (DX), Z1
	VPSUBD    Z1, Z3, Z1
	VMULPS    Z2, Z0, Z0
	VPANDD    Z1, Z0, Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	ADDQ      $16, DX
	DECQ      CX
	JNZ       msloop

msdone:
	VZEROUPPER
	RET

// func maskScaleAVX2(dst, src *float32, keep *uint8, n int, scale float32)
// maskScaleAVX512 for n a multiple of 8.
TEXT ·maskScaleAVX2(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         keep+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS scale+32(FP), Y2
	VPXOR        Y3, Y3, Y3
	SHRQ         $3, CX
	JZ           ms2done

ms2loop:
	PREFETCHAHEAD(SI)
	VMOVUPS   (SI), Y0
	VPMOVZXBD (DX), Y1
	VPSUBD    Y1, Y3, Y1
	VMULPS    Y2, Y0, Y0
	VPAND     Y1, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $8, DX
	DECQ      CX
	JNZ       ms2loop

ms2done:
	VZEROUPPER
	RET

// TRANSPOSE8X16 turns eight rows of 16 floats (r0-r7) into the 16 columns of 8 (one per row,
// row i in lane i), in t0-t7: column k < 4 is the low half of tk, 4+k its high half, 8+k the
// low half of t(4+k) and 12+k its high half. Overwrites r0-r7 (unpacks and shuffles within
// 128-bit lanes, then the lanes regrouped).
#define TRANSPOSE8X16(r0, r1, r2, r3, r4, r5, r6, r7, t0, t1, t2, t3, t4, t5, t6, t7) \
	VUNPCKLPS  r1, r0, t0; \
	VUNPCKHPS  r1, r0, t1; \
	VUNPCKLPS  r3, r2, t2; \
	VUNPCKHPS  r3, r2, t3; \
	VUNPCKLPS  r5, r4, t4; \
	VUNPCKHPS  r5, r4, t5; \
	VUNPCKLPS  r7, r6, t6; \
	VUNPCKHPS  r7, r6, t7; \
	VSHUFPS    $0x44, t2, t0, r0; \
	VSHUFPS    $0xee, t2, t0, r1; \
	VSHUFPS    $0x44, t3, t1, r2; \
	VSHUFPS    $0xee, t3, t1, r3; \
	VSHUFPS    $0x44, t6, t4, r4; \
	VSHUFPS    $0xee, t6, t4, r5; \
	VSHUFPS    $0x44, t7, t5, r6; \
	VSHUFPS    $0xee, t7, t5, r7; \
	VSHUFF32X4 $0x44, r4, r0, t0; \
	VSHUFF32X4 $0xee, r4, r0, t4; \
	VSHUFF32X4 $0x44, r5, r1, t1; \
	VSHUFF32X4 $0xee, r5, r1, t5; \
	VSHUFF32X4 $0x44, r6, r2, t2; \
	VSHUFF32X4 $0xee, r6, r2, t6; \
	VSHUFF32X4 $0x44, r7, r3, t3; \
	VSHUFF32X4 $0xee, r7, r3, t7; \
	VSHUFF32X4 $0xd8, t0, t0, t0; \
	VSHUFF32X4 $0xd8, t1, t1, t1; \
	VSHUFF32X4 $0xd8, t2, t2, t2; \
	VSHUFF32X4 $0xd8, t3, t3, t3; \
	VSHUFF32X4 $0xd8, t4, t4, t4; \
	VSHUFF32X4 $0xd8, t5, t5, t5; \
	VSHUFF32X4 $0xd8, t6, t6, t6; \
	VSHUFF32X4 $0xd8, t7, t7, t7

// LNBACCLO adds one column, in the low halves of (g, x) (ymm), to the eight rows' sums:
// s1 += float64(g) (Z30), s2 += float64(g)·float64(x) (Z31; the product is exact in float64,
// so the FMA rounds once, as Go's multiply then add).
#define LNBACCLO(gy, xy) \
	VCVTPS2PD   gy, Z24; \
	VCVTPS2PD   xy, Z25; \
	VADDPD      Z24, Z30, Z30; \
	VFMADD231PD Z25, Z24, Z31

// LNBACCHI is LNBACCLO for the column in the high halves of (g, x).
#define LNBACCHI(gz, xz) \
	VEXTRACTF64X4 $1, gz, Y26; \
	VCVTPS2PD     Y26, Z24; \
	VEXTRACTF64X4 $1, xz, Y27; \
	VCVTPS2PD     Y27, Z25; \
	VADDPD        Z24, Z30, Z30; \
	VFMADD231PD   Z25, Z24, Z31

// LNBLOADROW loads 16 columns of one row of dy (at dya) into dyz and sets xz to those of
// x̂ = (x - mean)·rstd (x at xa; mean and rstd moff bytes into R11 and R12).
#define LNBLOADROW(dya, xa, moff, dyz, xz) \
	VMOVUPS     xa, xz; \
	VSUBPS.BCST moff(R11), xz, xz; \
	VMULPS.BCST moff(R12), xz, xz; \
	VMOVUPS     dya, dyz

// LNBLOAD8 loads 16 columns of eight rows: dy in Z0-Z7, x̂ in Z8-Z15. Row r is r·BX bytes on
// from SI (dy) and DX (x), with R13 = 3·BX, R14 = 5·BX, AX = 7·BX.
#define LNBLOAD8 \
	LNBLOADROW((SI), (DX), 0, Z0, Z8); \
	LNBLOADROW((SI)(BX*1), (DX)(BX*1), 4, Z1, Z9); \
	LNBLOADROW((SI)(BX*2), (DX)(BX*2), 8, Z2, Z10); \
	LNBLOADROW((SI)(R13*1), (DX)(R13*1), 12, Z3, Z11); \
	LNBLOADROW((SI)(BX*4), (DX)(BX*4), 16, Z4, Z12); \
	LNBLOADROW((SI)(R14*1), (DX)(R14*1), 20, Z5, Z13); \
	LNBLOADROW((SI)(R13*2), (DX)(R13*2), 24, Z6, Z14); \
	LNBLOADROW((SI)(AX*1), (DX)(AX*1), 28, Z7, Z15)

// LNBDGROW adds one row's terms to dgamma (Z27) and dbeta (Z28). Clobbers Z24.
#define LNBDGROW(dyz, xz) \
	VMULPS dyz, xz, Z24; \
	VADDPS Z24, Z27, Z27; \
	VADDPS dyz, Z28, Z28

// LNBDGDB adds the eight rows to dgamma (R8) and dbeta (R9), row after row: dg += dy·x̂,
// db += dy, as layerNormBackwardRow does for each row in turn.
#define LNBDGDB \
	VMOVUPS (R8), Z27; \
	VMOVUPS (R9), Z28; \
	LNBDGROW(Z0, Z8); \
	LNBDGROW(Z1, Z9); \
	LNBDGROW(Z2, Z10); \
	LNBDGROW(Z3, Z11); \
	LNBDGROW(Z4, Z12); \
	LNBDGROW(Z5, Z13); \
	LNBDGROW(Z6, Z14); \
	LNBDGROW(Z7, Z15); \
	VMOVUPS Z27, (R8); \
	VMOVUPS Z28, (R9)

// LNBSUMS turns dy (Z0-Z7) into g = dy·gamma (gamma's 16 columns at R10), transposes g and x̂
// into columns and adds the 16 columns, in order, to the sums s1 (Z30) and s2 (Z31).
#define LNBSUMS \
	VMOVUPS (R10), Z29; \
	VMULPS  Z29, Z0, Z0; \
	VMULPS  Z29, Z1, Z1; \
	VMULPS  Z29, Z2, Z2; \
	VMULPS  Z29, Z3, Z3; \
	VMULPS  Z29, Z4, Z4; \
	VMULPS  Z29, Z5, Z5; \
	VMULPS  Z29, Z6, Z6; \
	VMULPS  Z29, Z7, Z7; \
	TRANSPOSE8X16(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23); \
	TRANSPOSE8X16(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7); \
	LNBACCLO(Y16, Y0); \
	LNBACCLO(Y17, Y1); \
	LNBACCLO(Y18, Y2); \
	LNBACCLO(Y19, Y3); \
	LNBACCHI(Z16, Z0); \
	LNBACCHI(Z17, Z1); \
	LNBACCHI(Z18, Z2); \
	LNBACCHI(Z19, Z3); \
	LNBACCLO(Y20, Y4); \
	LNBACCLO(Y21, Y5); \
	LNBACCLO(Y22, Y6); \
	LNBACCLO(Y23, Y7); \
	LNBACCHI(Z20, Z4); \
	LNBACCHI(Z21, Z5); \
	LNBACCHI(Z22, Z6); \
	LNBACCHI(Z23, Z7)

// func lnbSums8AVX512(s *float64, dg, db, dy, x, gamma, mean, rstd *float32, n int)
// For eight rows of n floats (n a positive multiple of 16; row r at dy[r·n:] and x[r·n:]),
// with x̂ = (x - mean[r])·rstd[r] and t = dy·gamma: s[r] = the sum of float64(t) and
// s[8+r] = the sum of float64(t)·float64(x̂), each over the row in order, as
// layerNormBackwardRow sums them. With dg not nil, the rows are added to dg and db in order
// as well (dg += dy·x̂, db += dy).
TEXT ·lnbSums8AVX512(SB), NOSPLIT, $0-72
	MOVQ   dg+8(FP), R8
	MOVQ   db+16(FP), R9
	MOVQ   dy+24(FP), SI
	MOVQ   x+32(FP), DX
	MOVQ   gamma+40(FP), R10
	MOVQ   mean+48(FP), R11
	MOVQ   rstd+56(FP), R12
	MOVQ   n+64(FP), CX
	LEAQ   (CX*4), BX
	LEAQ   (BX)(BX*2), R13
	LEAQ   (BX)(BX*4), R14
	LEAQ   (R13)(BX*4), AX
	SHRQ   $4, CX
	VPXORQ Z30, Z30, Z30
	VPXORQ Z31, Z31, Z31
	TESTQ  R8, R8
	JZ     lnbnodg

lnbdgloop:
	LNBLOAD8
	LNBDGDB
	LNBSUMS
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R10
	ADDQ $64, R8
	ADDQ $64, R9
	DECQ CX
	JNZ  lnbdgloop
	JMP  lnbdone

lnbnodg:
	LNBLOAD8
	LNBSUMS
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R10
	DECQ CX
	JNZ  lnbnodg

lnbdone:
	MOVQ    s+0(FP), DI
	VMOVUPD Z30, (DI)
	VMOVUPD Z31, 64(DI)
	VZEROUPPER
	RET

// The row loops of LayerNormBackward and SoftmaxBackward, one vector of w bytes a step (the
// AVX-512 and AVX2 kernels differ only in their registers and w).
//
// LNBDXSTEP: dx (DI) = rs·((dy (SI)·gamma (R10) - m1) - x̂·m2), x̂ = (x (DX) - mu)·rs.
#define LNBDXSTEP(v0, v1, mu, rs, m1, m2, w) \
	VMOVUPS (DX), v0; \
	VSUBPS  mu, v0, v0; \
	VMULPS  rs, v0, v0; \
	VMOVUPS (SI), v1; \
	VMULPS  (R10), v1, v1; \
	VSUBPS  m1, v1, v1; \
	VMULPS  m2, v0, v0; \
	VSUBPS  v0, v1, v1; \
	VMULPS  rs, v1, v1; \
	VMOVUPS v1, (DI); \
	ADDQ    $w, SI; \
	ADDQ    $w, DX; \
	ADDQ    $w, R10; \
	ADDQ    $w, DI

// LNBCOLSTEP: dgamma (R8) += dy (SI)·x̂, dbeta (R9) += dy, x̂ = (x (DX) - mu)·rs.
#define LNBCOLSTEP(v0, v1, mu, rs, w) \
	VMOVUPS (DX), v0; \
	VSUBPS  mu, v0, v0; \
	VMULPS  rs, v0, v0; \
	VMOVUPS (SI), v1; \
	VMULPS  v1, v0, v0; \
	VADDPS  (R8), v0, v0; \
	VMOVUPS v0, (R8); \
	VADDPS  (R9), v1, v1; \
	VMOVUPS v1, (R9); \
	ADDQ    $w, SI; \
	ADDQ    $w, DX; \
	ADDQ    $w, R8; \
	ADDQ    $w, R9

// SMBDXSTEP: dx (DI) = y (DX)·(dy (SI) - s).
#define SMBDXSTEP(v0, sv, w) \
	VMOVUPS (SI), v0; \
	VSUBPS  sv, v0, v0; \
	VMULPS  (DX), v0, v0; \
	VMOVUPS v0, (DI); \
	ADDQ    $w, SI; \
	ADDQ    $w, DX; \
	ADDQ    $w, DI

// func lnbDxAVX512(dx, dy, x, gamma *float32, n int, mu, rs, m1, m2 float32)
// One row of LayerNormBackward's dx (n a positive multiple of 16), as layerNormDx:
// dx = rs·((dy·gamma - m1) - x̂·m2) with x̂ = (x - mu)·rs.
TEXT ·lnbDxAVX512(SB), NOSPLIT, $0-56
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), SI
	MOVQ         x+16(FP), DX
	MOVQ         gamma+24(FP), R10
	MOVQ         n+32(FP), CX
	VBROADCASTSS mu+40(FP), Z20
	VBROADCASTSS rs+44(FP), Z21
	VBROADCASTSS m1+48(FP), Z22
	VBROADCASTSS m2+52(FP), Z23
	SHRQ         $4, CX

lnbdxloop:
	LNBDXSTEP(Z0, Z1, Z20, Z21, Z22, Z23, 64)
	DECQ CX
	JNZ  lnbdxloop
	VZEROUPPER
	RET

// func lnbColsAVX512(dg, db, dy, x *float32, n int, mu, rs float32)
// One row's terms of dgamma and dbeta (n a positive multiple of 16): dg += dy·x̂, db += dy,
// x̂ = (x - mu)·rs.
TEXT ·lnbColsAVX512(SB), NOSPLIT, $0-48
	MOVQ         dg+0(FP), R8
	MOVQ         db+8(FP), R9
	MOVQ         dy+16(FP), SI
	MOVQ         x+24(FP), DX
	MOVQ         n+32(FP), CX
	VBROADCASTSS mu+40(FP), Z20
	VBROADCASTSS rs+44(FP), Z21
	SHRQ         $4, CX

lnbcolloop:
	LNBCOLSTEP(Z0, Z1, Z20, Z21, 64)
	DECQ CX
	JNZ  lnbcolloop
	VZEROUPPER
	RET

// SMBLOAD8 loads 16 columns of eight rows, r·BX bytes apart: dy (at SI) in Z0-Z7, y (at DX) in
// Z8-Z15 (R13 = 3·BX, R14 = 5·BX, AX = 7·BX).
#define SMBLOAD8 \
	VMOVUPS (SI), Z0; \
	VMOVUPS (DX), Z8; \
	VMOVUPS (SI)(BX*1), Z1; \
	VMOVUPS (DX)(BX*1), Z9; \
	VMOVUPS (SI)(BX*2), Z2; \
	VMOVUPS (DX)(BX*2), Z10; \
	VMOVUPS (SI)(R13*1), Z3; \
	VMOVUPS (DX)(R13*1), Z11; \
	VMOVUPS (SI)(BX*4), Z4; \
	VMOVUPS (DX)(BX*4), Z12; \
	VMOVUPS (SI)(R14*1), Z5; \
	VMOVUPS (DX)(R14*1), Z13; \
	VMOVUPS (SI)(R13*2), Z6; \
	VMOVUPS (DX)(R13*2), Z14; \
	VMOVUPS (SI)(AX*1), Z7; \
	VMOVUPS (DX)(AX*1), Z15

// SMBACCLO adds one column's products, in the low halves of (dy, y), to the eight rows' sums
// in Z30: s += float64(dy)·float64(y), the product exact in float64 (one rounding, as Go's).
#define SMBACCLO(ay, by) \
	VCVTPS2PD   ay, Z24; \
	VCVTPS2PD   by, Z25; \
	VFMADD231PD Z25, Z24, Z30

// SMBACCHI is SMBACCLO for the column in the high halves.
#define SMBACCHI(az, bz) \
	VEXTRACTF64X4 $1, az, Y26; \
	VCVTPS2PD     Y26, Z24; \
	VEXTRACTF64X4 $1, bz, Y27; \
	VCVTPS2PD     Y27, Z25; \
	VFMADD231PD   Z25, Z24, Z30

// func smbSums8AVX512(s *float64, dy, y *float32, n int)
// For eight rows of n floats (n a positive multiple of 16; row r at dy[r·n:] and y[r·n:]),
// s[r] = the sum of float64(dy)·float64(y) over the row in order, as SoftmaxBackward sums it.
TEXT ·smbSums8AVX512(SB), NOSPLIT, $0-32
	MOVQ   dy+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   n+24(FP), CX
	LEAQ   (CX*4), BX
	LEAQ   (BX)(BX*2), R13
	LEAQ   (BX)(BX*4), R14
	LEAQ   (R13)(BX*4), AX
	SHRQ   $4, CX
	VPXORQ Z30, Z30, Z30

smbloop:
	SMBLOAD8
	TRANSPOSE8X16(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)
	TRANSPOSE8X16(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	SMBACCLO(Y16, Y0)
	SMBACCLO(Y17, Y1)
	SMBACCLO(Y18, Y2)
	SMBACCLO(Y19, Y3)
	SMBACCHI(Z16, Z0)
	SMBACCHI(Z17, Z1)
	SMBACCHI(Z18, Z2)
	SMBACCHI(Z19, Z3)
	SMBACCLO(Y20, Y4)
	SMBACCLO(Y21, Y5)
	SMBACCLO(Y22, Y6)
	SMBACCLO(Y23, Y7)
	SMBACCHI(Z20, Z4)
	SMBACCHI(Z21, Z5)
	SMBACCHI(Z22, Z6)
	SMBACCHI(Z23, Z7)
	ADDQ $64, SI
	ADDQ $64, DX
	DECQ CX
	JNZ  smbloop
	MOVQ    s+0(FP), DI
	VMOVUPD Z30, (DI)
	VZEROUPPER
	RET

// func smbDxAVX512(dx, dy, y *float32, n int, s float32)
// One row of SoftmaxBackward (n a positive multiple of 16): dx = y·(dy - s). dx may be dy.
TEXT ·smbDxAVX512(SB), NOSPLIT, $0-36
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), SI
	MOVQ         y+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS s+32(FP), Z20
	SHRQ         $4, CX

smbdxloop:
	SMBDXSTEP(Z0, Z20, 64)
	DECQ CX
	JNZ  smbdxloop
	VZEROUPPER
	RET

// func pcgKeep16AVX512(keep *uint8, lanes *uint64, blocks int, jump *uint64, thr uint32)
// PCGKeep's decisions for blocks·16 elements from eight interleaved generators: lanes holds
// their states [hi0..hi7, lo0..lo7], lane r the state (already stepped to) of draw 8t+r in
// turn t; jump is pcgJump8 [a.hi, a.lo, c.hi, c.lo], the step that takes a lane eight draws
// on. Each turn the eight draws (DXSM) give 16 32-bit halves in element order, compared with
// thr; lanes is left at the states of the next turn's draws.
TEXT ·pcgKeep16AVX512(SB), NOSPLIT, $0-36
	MOVQ         keep+0(FP), DI
	MOVQ         lanes+8(FP), SI
	MOVQ         blocks+16(FP), CX
	MOVQ         jump+24(FP), DX
	VMOVDQU64    (SI), Z0
	VMOVDQU64    64(SI), Z1
	VPBROADCASTQ (DX), Z3
	VPBROADCASTQ 8(DX), Z2
	VPBROADCASTQ 16(DX), Z5
	VPBROADCASTQ 24(DX), Z4
	VPSRLQ       $32, Z2, Z6
	MOVQ         $0xda942042e4dd58b5, AX
	VPBROADCASTQ AX, Z7
	MOVQ         $1, AX
	VPBROADCASTQ AX, Z8
	VPBROADCASTD AX, Z11
	MOVQ         $0xffffffff, AX
	VPBROADCASTQ AX, Z10
	MOVL         thr+32(FP), AX
	VPBROADCASTD AX, Z9

pcgloop:
	// The draws: h = hi ^ hi>>32; h *= cheapMul; h ^= h>>48; h *= lo|1.
	VPSRLQ   $32, Z0, Z12
	VPXORQ   Z0, Z12, Z12
	VPMULLQ  Z7, Z12, Z12
	VPSRLQ   $48, Z12, Z13
	VPXORQ   Z13, Z12, Z12
	VPORQ    Z8, Z1, Z13
	VPMULLQ  Z13, Z12, Z12
	// Element 2i is the low half of draw i, 2i+1 its high half: the dword lanes in order.
	VPCMPUD    $5, Z9, Z12, K1
	VMOVDQU32.Z Z11, K1, Z14
	VPMOVDB    Z14, (DI)

	// The states eight draws on: (hi, lo)·a + c mod 2¹²⁸. lo·a.lo's high 64 bits from 32-bit
	// products.
	VPMULLQ  Z2, Z1, Z15
	VPADDQ   Z4, Z15, Z16
	VPCMPUQ  $1, Z15, Z16, K2
	VPSRLQ   $32, Z1, Z17
	VPMULUDQ Z2, Z1, Z18
	VPMULUDQ Z6, Z1, Z19
	VPMULUDQ Z2, Z17, Z20
	VPMULUDQ Z6, Z17, Z21
	VPSRLQ   $32, Z18, Z18
	VPANDQ   Z10, Z19, Z22
	VPADDQ   Z22, Z18, Z18
	VPANDQ   Z10, Z20, Z22
	VPADDQ   Z22, Z18, Z18
	VPSRLQ   $32, Z18, Z18
	VPSRLQ   $32, Z19, Z19
	VPSRLQ   $32, Z20, Z20
	VPADDQ   Z19, Z21, Z21
	VPADDQ   Z20, Z21, Z21
	VPADDQ   Z18, Z21, Z21
	VPMULLQ  Z3, Z1, Z22
	VPMULLQ  Z2, Z0, Z23
	VPADDQ   Z22, Z21, Z21
	VPADDQ   Z23, Z21, Z21
	VPADDQ   Z5, Z21, Z21
	VPADDQ   Z8, Z21, K2, Z21
	VMOVDQA64 Z21, Z0
	VMOVDQA64 Z16, Z1
	ADDQ     $16, DI
	DECQ     CX
	JNZ      pcgloop
	VMOVDQU64 Z0, (SI)
	VMOVDQU64 Z1, 64(SI)
	VZEROUPPER
	RET

// TRANSPOSE4X8 turns four rows of 8 floats (r0-r3) into the 8 columns of 4 (row i in lane i):
// column k < 4 in the low half of ck, 4+k in its high half (unpacks and shuffles within the
// 128-bit lanes). t0-t3 are scratch.
#define TRANSPOSE4X8(r0, r1, r2, r3, t0, t1, t2, t3, c0, c1, c2, c3) \
	VUNPCKLPS r1, r0, t0; \
	VUNPCKHPS r1, r0, t1; \
	VUNPCKLPS r3, r2, t2; \
	VUNPCKHPS r3, r2, t3; \
	VSHUFPS   $0x44, t2, t0, c0; \
	VSHUFPS   $0xee, t2, t0, c1; \
	VSHUFPS   $0x44, t3, t1, c2; \
	VSHUFPS   $0xee, t3, t1, c3

// LNBACC4LO adds one column, in the low halves of (g, x), to the four rows' sums s1 (Y8) and
// s2 (Y9), the product exact in float64 (as Go's). Clobbers Y11, Y12.
#define LNBACC4LO(gx, xx) \
	VCVTPS2PD gx, Y11; \
	VCVTPS2PD xx, Y12; \
	VADDPD    Y11, Y8, Y8; \
	VMULPD    Y12, Y11, Y12; \
	VADDPD    Y12, Y9, Y9

// LNBACC4HI is LNBACC4LO for the column in the high halves. Clobbers Y11-Y13.
#define LNBACC4HI(gy, xy) \
	VEXTRACTF128 $1, gy, X13; \
	VCVTPS2PD    X13, Y11; \
	VEXTRACTF128 $1, xy, X13; \
	VCVTPS2PD    X13, Y12; \
	VADDPD       Y11, Y8, Y8; \
	VMULPD       Y12, Y11, Y12; \
	VADDPD       Y12, Y9, Y9

// LNBROW4 loads 8 columns of one row of dy (at dya) into dyy and sets xy to those of
// x̂ = (x - mean)·rstd (x at xa; mean and rstd moff bytes into R11 and R12). Clobbers Y11.
#define LNBROW4(dya, xa, moff, dyy, xy) \
	VMOVUPS      xa, xy; \
	VBROADCASTSS moff(R11), Y11; \
	VSUBPS       Y11, xy, xy; \
	VBROADCASTSS moff(R12), Y11; \
	VMULPS       Y11, xy, xy; \
	VMOVUPS      dya, dyy

// LNBDG4ROW adds one row's terms to dgamma (Y12) and dbeta (Y13). Clobbers Y14.
#define LNBDG4ROW(dyy, xy) \
	VMULPS dyy, xy, Y14; \
	VADDPS Y14, Y12, Y12; \
	VADDPS dyy, Y13, Y13

// func lnbSums4AVX2(s *float64, dg, db, dy, x, gamma, mean, rstd *float32, n int)
// lnbSums8AVX512 for four rows and n a positive multiple of 8: s[r] and s[4+r] are the sums
// s1 and s2 of row r < 4, each over the row in order, and with dg not nil the rows are added
// to dg and db in order.
TEXT ·lnbSums4AVX2(SB), NOSPLIT, $0-72
	MOVQ   dg+8(FP), R8
	MOVQ   db+16(FP), R9
	MOVQ   dy+24(FP), SI
	MOVQ   x+32(FP), DX
	MOVQ   gamma+40(FP), R10
	MOVQ   mean+48(FP), R11
	MOVQ   rstd+56(FP), R12
	MOVQ   n+64(FP), CX
	LEAQ   (CX*4), BX
	LEAQ   (BX)(BX*2), R13
	SHRQ   $3, CX
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9

lnb4loop:
	LNBROW4((SI), (DX), 0, Y0, Y4)
	LNBROW4((SI)(BX*1), (DX)(BX*1), 4, Y1, Y5)
	LNBROW4((SI)(BX*2), (DX)(BX*2), 8, Y2, Y6)
	LNBROW4((SI)(R13*1), (DX)(R13*1), 12, Y3, Y7)
	TESTQ R8, R8
	JZ    lnb4nodg
	VMOVUPS (R8), Y12
	VMOVUPS (R9), Y13
	LNBDG4ROW(Y0, Y4)
	LNBDG4ROW(Y1, Y5)
	LNBDG4ROW(Y2, Y6)
	LNBDG4ROW(Y3, Y7)
	VMOVUPS Y12, (R8)
	VMOVUPS Y13, (R9)
	ADDQ    $32, R8
	ADDQ    $32, R9

lnb4nodg:
	VMOVUPS (R10), Y10
	VMULPS  Y10, Y0, Y0
	VMULPS  Y10, Y1, Y1
	VMULPS  Y10, Y2, Y2
	VMULPS  Y10, Y3, Y3
	TRANSPOSE4X8(Y0, Y1, Y2, Y3, Y11, Y12, Y13, Y14, Y0, Y1, Y2, Y3)
	TRANSPOSE4X8(Y4, Y5, Y6, Y7, Y11, Y12, Y13, Y14, Y4, Y5, Y6, Y7)
	LNBACC4LO(X0, X4)
	LNBACC4LO(X1, X5)
	LNBACC4LO(X2, X6)
	LNBACC4LO(X3, X7)
	LNBACC4HI(Y0, Y4)
	LNBACC4HI(Y1, Y5)
	LNBACC4HI(Y2, Y6)
	LNBACC4HI(Y3, Y7)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R10
	DECQ CX
	JNZ  lnb4loop
	MOVQ    s+0(FP), DI
	VMOVUPD Y8, (DI)
	VMOVUPD Y9, 32(DI)
	VZEROUPPER
	RET

// func lnbDxAVX2(dx, dy, x, gamma *float32, n int, mu, rs, m1, m2 float32)
// lnbDxAVX512 for n a positive multiple of 8.
TEXT ·lnbDxAVX2(SB), NOSPLIT, $0-56
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), SI
	MOVQ         x+16(FP), DX
	MOVQ         gamma+24(FP), R10
	MOVQ         n+32(FP), CX
	VBROADCASTSS mu+40(FP), Y12
	VBROADCASTSS rs+44(FP), Y13
	VBROADCASTSS m1+48(FP), Y14
	VBROADCASTSS m2+52(FP), Y15
	SHRQ         $3, CX

lnbdx2loop:
	LNBDXSTEP(Y0, Y1, Y12, Y13, Y14, Y15, 32)
	DECQ CX
	JNZ  lnbdx2loop
	VZEROUPPER
	RET

// func lnbColsAVX2(dg, db, dy, x *float32, n int, mu, rs float32)
// lnbColsAVX512 for n a positive multiple of 8.
TEXT ·lnbColsAVX2(SB), NOSPLIT, $0-48
	MOVQ         dg+0(FP), R8
	MOVQ         db+8(FP), R9
	MOVQ         dy+16(FP), SI
	MOVQ         x+24(FP), DX
	MOVQ         n+32(FP), CX
	VBROADCASTSS mu+40(FP), Y12
	VBROADCASTSS rs+44(FP), Y13
	SHRQ         $3, CX

lnbcol2loop:
	LNBCOLSTEP(Y0, Y1, Y12, Y13, 32)
	DECQ CX
	JNZ  lnbcol2loop
	VZEROUPPER
	RET

// SMBACC4LO adds one column's products, in the low halves of (dy, y), to the four rows' sums
// in Y8. Clobbers Y11, Y12.
#define SMBACC4LO(ax, bx) \
	VCVTPS2PD ax, Y11; \
	VCVTPS2PD bx, Y12; \
	VMULPD    Y12, Y11, Y12; \
	VADDPD    Y12, Y8, Y8

// SMBACC4HI is SMBACC4LO for the column in the high halves. Clobbers Y11-Y13.
#define SMBACC4HI(ay, by) \
	VEXTRACTF128 $1, ay, X13; \
	VCVTPS2PD    X13, Y11; \
	VEXTRACTF128 $1, by, X13; \
	VCVTPS2PD    X13, Y12; \
	VMULPD       Y12, Y11, Y12; \
	VADDPD       Y12, Y8, Y8

// func smbSums4AVX2(s *float64, dy, y *float32, n int)
// smbSums8AVX512 for four rows and n a positive multiple of 8.
TEXT ·smbSums4AVX2(SB), NOSPLIT, $0-32
	MOVQ   dy+8(FP), SI
	MOVQ   y+16(FP), DX
	MOVQ   n+24(FP), CX
	LEAQ   (CX*4), BX
	LEAQ   (BX)(BX*2), R13
	SHRQ   $3, CX
	VXORPD Y8, Y8, Y8

smb4loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(BX*1), Y1
	VMOVUPS (SI)(BX*2), Y2
	VMOVUPS (SI)(R13*1), Y3
	VMOVUPS (DX), Y4
	VMOVUPS (DX)(BX*1), Y5
	VMOVUPS (DX)(BX*2), Y6
	VMOVUPS (DX)(R13*1), Y7
	TRANSPOSE4X8(Y0, Y1, Y2, Y3, Y11, Y12, Y13, Y14, Y0, Y1, Y2, Y3)
	TRANSPOSE4X8(Y4, Y5, Y6, Y7, Y11, Y12, Y13, Y14, Y4, Y5, Y6, Y7)
	SMBACC4LO(X0, X4)
	SMBACC4LO(X1, X5)
	SMBACC4LO(X2, X6)
	SMBACC4LO(X3, X7)
	SMBACC4HI(Y0, Y4)
	SMBACC4HI(Y1, Y5)
	SMBACC4HI(Y2, Y6)
	SMBACC4HI(Y3, Y7)
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  smb4loop
	MOVQ    s+0(FP), DI
	VMOVUPD Y8, (DI)
	VZEROUPPER
	RET

// func smbDxAVX2(dx, dy, y *float32, n int, s float32)
// smbDxAVX512 for n a positive multiple of 8.
TEXT ·smbDxAVX2(SB), NOSPLIT, $0-36
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), SI
	MOVQ         y+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS s+32(FP), Y12
	SHRQ         $3, CX

smbdx2loop:
	SMBDXSTEP(Y0, Y12, 32)
	DECQ CX
	JNZ  smbdx2loop
	VZEROUPPER
	RET
