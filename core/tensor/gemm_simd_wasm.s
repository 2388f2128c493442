//go:build wasm && goexperiment.simd && !purego

#include "textflag.h"

// func gemmCol2x16Asm(a, b, c *float32, kc, tiles, ldc int, beta float32)
//
// tiles 2×16 tiles of C down one column of tiles, tile t from the A sliver at a + t·2·kc and the
// B sliver b: rows 2t and 2t+1 of c (row stride ldc) get the sums over kc >= 1 steps when beta
// is +0 (C is not read), sum + c·beta otherwise. One call per column of tiles instead of one
// per tile: a Go call costs the caller and the callee their resume bookkeeping in wasm.
//
// The sums are gemmDotSIMD2x16's, each product added in the same order (so the same bits),
// without what Go 1.27.3's wasm backend emits for the Go loop: a 64-bit addition and wrap
// for every load (here the constant offsets sit in the loads' memarg), the function's resume
// dispatch (br_table) on every turn of the loop, and an accumulator spilled to the Go stack.
// One depth step a turn: with two, V8's optimising compiler loaded both steps' vectors first
// and kept four accumulators on its stack (26 GFLOP/s against 33 with one step, 128x768x768
// in Node).
//
// R0: a (2 floats a step), R1: b (16 floats a step), R2: steps left; R3 and R4: the tile's two
// rows of c; R5: the next tile's a, R6: its row 0 of c, R7: tiles left, R8: ldc in bytes, R9:
// beta's bits. V0-V3: row 0 of the tile, V4-V7: row 1, V8-V11: b's four vectors, V12-V13: a
// broadcast, V14: beta broadcast. The assembler gives v128.store no offset operand: the stores
// add theirs to the address.

// MULADD adds a·b to the accumulator acc (f32x4: wasm SIMD has no fused multiply-add).
#define MULADD(acc, a, b) Get acc; Get a; Get b; F32x4Mul; F32x4Add; Set acc
// ADDR pushes the 32-bit address r+off.
#define ADDR(r, off) Get r; I64Const $off; I64Add; I32WrapI64
// STORE writes v at r+off; STOREBETA writes v + (vector at r+off)·V14 there.
#define STORE(r, off, v) ADDR(r, off); Get v; V128Store $0
#define STOREBETA(r, off, v) ADDR(r, off); Get v; ADDR(r, off); V128Load $0; Get V14; F32x4Mul; F32x4Add; V128Store $0

// The parts both column kernels share (gemmCol2x16Asm, gemmCol2x16StridedAsm). COLARGS loads
// a, c, tiles, ldc (in bytes) and beta (its bits in R9, broadcast in V14); TILEBEGIN starts a
// tile: R0 at its A, R1 at b, R2 = kc, the accumulators cleared; STEPB loads a depth step's B
// row and adds both broadcast A values (V12, V13) times it; TILESTORE stores the tile at R6's
// two rows (adding beta·C unless beta is +0) and moves R6 two rows down.
#define COLARGS MOVD a+0(FP), R5; MOVD c+16(FP), R6; MOVD tiles+32(FP), R7; MOVD ldc+40(FP), R8; Get R8; I64Const $2; I64Shl; Set R8; I32Load beta+48(FP); I64ExtendI32U; Set R9; F32Load beta+48(FP); F32x4Splat; Set V14
#define TILEBEGIN Get R5; Set R0; MOVD b+8(FP), R1; MOVD kc+24(FP), R2; I32Const $0; I32x4Splat; Tee V0; Tee V1; Tee V2; Tee V3; Tee V4; Tee V5; Tee V6; Set V7
#define STEPB Get R1; I32WrapI64; V128Load $0; Set V8; Get R1; I32WrapI64; V128Load $16; Set V9; Get R1; I32WrapI64; V128Load $32; Set V10; Get R1; I32WrapI64; V128Load $48; Set V11; MULADD(V0, V12, V8); MULADD(V1, V12, V9); MULADD(V2, V12, V10); MULADD(V3, V12, V11); MULADD(V4, V13, V8); MULADD(V5, V13, V9); MULADD(V6, V13, V10); MULADD(V7, V13, V11)
#define TILESTORE Get R6; Tee R3; Get R8; I64Add; Tee R4; Get R8; I64Add; Set R6; Get R9; I64Eqz; If; STORE(R3, 0, V0); STORE(R3, 16, V1); STORE(R3, 32, V2); STORE(R3, 48, V3); STORE(R4, 0, V4); STORE(R4, 16, V5); STORE(R4, 32, V6); STORE(R4, 48, V7); Else; STOREBETA(R3, 0, V0); STOREBETA(R3, 16, V1); STOREBETA(R3, 32, V2); STOREBETA(R3, 48, V3); STOREBETA(R4, 0, V4); STOREBETA(R4, 16, V5); STOREBETA(R4, 32, V6); STOREBETA(R4, 48, V7); End

TEXT ·gemmCol2x16Asm(SB), NOSPLIT, $0-52
	COLARGS

	Loop // tiles
	TILEBEGIN

	Loop // depth steps
	// a's two values of this step, broadcast; b's 16.
	Get R0; I32WrapI64; F32Load $0; F32x4Splat; Set V12
	Get R0; I32WrapI64; F32Load $4; F32x4Splat; Set V13
	STEPB
	Get R0; I64Const $8; I64Add; Set R0
	Get R1; I64Const $64; I64Add; Set R1
	Get R2; I64Const $1; I64Sub; Tee R2
	I64Eqz; I32Eqz; BrIf $0
	End

	// R0 is now the next tile's A sliver (they follow one another).
	Get R0; Set R5
	TILESTORE

	Get R7; I64Const $1; I64Sub; Tee R7
	I64Eqz; I32Eqz; BrIf $0
	End
	RET

// func gemmPackRows2Asm(dst, r0, r1 *float32, kb int)
//
// dst[2p] = r0[p], dst[2p+1] = r1[p] for p < kb (>= 1): a two-row A sliver packed (gemmPackA
// with mr 2 and alpha 1), four steps a turn, the offsets in the loads' and stores' memarg.
// R0: dst, R1: r0, R2: r1, R3: steps left.
#define PACK(q) Get R0; I32WrapI64; Get R1; I32WrapI64; F32Load $(4*q); F32Store $(8*q); Get R0; I32WrapI64; Get R2; I32WrapI64; F32Load $(4*q); F32Store $(8*q+4)
TEXT ·gemmPackRows2Asm(SB), NOSPLIT, $0-32
	MOVD dst+0(FP), R0
	MOVD r0+8(FP), R1
	MOVD r1+16(FP), R2
	MOVD kb+24(FP), R3
	Block
	Get R3; I64Const $4; I64LtS; BrIf $0
	Loop
	PACK(0); PACK(1); PACK(2); PACK(3)
	Get R0; I64Const $32; I64Add; Set R0
	Get R1; I64Const $16; I64Add; Set R1
	Get R2; I64Const $16; I64Add; Set R2
	Get R3; I64Const $4; I64Sub; Tee R3
	I64Const $4; I64GeS; BrIf $0
	End
	End
	Block
	Get R3; I64Eqz; BrIf $0
	Loop
	PACK(0)
	Get R0; I64Const $8; I64Add; Set R0
	Get R1; I64Const $4; I64Add; Set R1
	Get R2; I64Const $4; I64Add; Set R2
	Get R3; I64Const $1; I64Sub; Tee R3
	I64Eqz; I32Eqz; BrIf $0
	End
	End
	RET

// func gemmCol2x16StridedAsm(a, b, c *float32, kc, tiles, ldc int, beta float32, arow, astep, atile int)
//
// gemmCol2x16Asm with A read where it lies: depth step p of tile t takes its two values at
// a + t·atile + p·astep and arow bytes further (strides in bytes). A matrix's rows read in
// place are arow = lda·4, astep = 4, atile = 2·lda·4; a transposed one's arow = 4, astep =
// lda·4, atile = 8. The same products in the same order as the packed kernel, so the same bits.
// R10: arow, R11: astep, R12: atile; the other registers as gemmCol2x16Asm's.
TEXT ·gemmCol2x16StridedAsm(SB), NOSPLIT, $0-80
	COLARGS
	MOVD arow+56(FP), R10
	MOVD astep+64(FP), R11
	MOVD atile+72(FP), R12

	Loop // tiles
	TILEBEGIN

	Loop // depth steps
	Get R0; I32WrapI64; F32Load $0; F32x4Splat; Set V12
	Get R0; Get R10; I64Add; I32WrapI64; F32Load $0; F32x4Splat; Set V13
	STEPB
	Get R0; Get R11; I64Add; Set R0
	Get R1; I64Const $64; I64Add; Set R1
	Get R2; I64Const $1; I64Sub; Tee R2
	I64Eqz; I32Eqz; BrIf $0
	End

	Get R5; Get R12; I64Add; Set R5
	TILESTORE

	Get R7; I64Const $1; I64Sub; Tee R7
	I64Eqz; I32Eqz; BrIf $0
	End
	RET
