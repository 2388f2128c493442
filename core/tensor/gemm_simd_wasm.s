//go:build wasm && goexperiment.simd && !purego

#include "textflag.h"

// func gemmDot2x16Asm(a, b, c0, c1 *float32, kc int, beta float32)
//
// gemmDotSIMD2x16's loop in WebAssembly by hand: the same eight f32x4 sums, each product
// added in the same order (so the same bits), without what Go 1.27.3's wasm backend emits
// for the Go version: a 64-bit addition and wrap for every load (here the constant offsets
// sit in the loads' memarg), the function's resume dispatch (br_table) on every turn of the
// loop, and an accumulator spilled to the Go stack. One depth step a turn: with two, V8's
// optimising compiler loaded both steps' vectors first and kept four accumulators on its
// stack (26 GFLOP/s against 33 with one step, 128x768x768 in Node).
//
// Then c0 and c1 get the sums when beta is +0 (C is not read), sum + c·beta otherwise: the
// micro-kernel with beta != 0, whose Go version went through a tile on the stack.
//
// R0: a (2 floats a step), R1: b (16 floats a step), R2: steps left (kc >= 1), R3 and R4:
// c0 and c1; V0-V3: row 0 of the tile, V4-V7: row 1, V8-V11: b's four vectors, V12-V13: a
// broadcast, V14: beta broadcast. The assembler gives v128.store no offset operand: the
// stores add theirs to the address.
// MULADD adds a·b to the accumulator acc (f32x4: wasm SIMD has no fused multiply-add).
#define MULADD(acc, a, b) Get acc; Get a; Get b; F32x4Mul; F32x4Add; Set acc
// ADDR pushes the 32-bit address r+off.
#define ADDR(r, off) Get r; I64Const $off; I64Add; I32WrapI64
// STORE writes v at r+off; STOREBETA writes v + (vector at r+off)·V14 there.
#define STORE(r, off, v) ADDR(r, off); Get v; V128Store $0
#define STOREBETA(r, off, v) ADDR(r, off); Get v; ADDR(r, off); V128Load $0; Get V14; F32x4Mul; F32x4Add; V128Store $0

TEXT ·gemmDot2x16Asm(SB), NOSPLIT, $0-44
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD kc+32(FP), R2
	I32Const $0
	I32x4Splat
	Tee V0; Tee V1; Tee V2; Tee V3; Tee V4; Tee V5; Tee V6; Set V7

	Loop
	// a's two values of this step, broadcast; b's 16.
	Get R0; I32WrapI64; F32Load $0; F32x4Splat; Set V12
	Get R0; I32WrapI64; F32Load $4; F32x4Splat; Set V13
	Get R1; I32WrapI64; V128Load $0; Set V8
	Get R1; I32WrapI64; V128Load $16; Set V9
	Get R1; I32WrapI64; V128Load $32; Set V10
	Get R1; I32WrapI64; V128Load $48; Set V11
	MULADD(V0, V12, V8); MULADD(V1, V12, V9); MULADD(V2, V12, V10); MULADD(V3, V12, V11)
	MULADD(V4, V13, V8); MULADD(V5, V13, V9); MULADD(V6, V13, V10); MULADD(V7, V13, V11)
	Get R0; I64Const $8; I64Add; Set R0
	Get R1; I64Const $64; I64Add; Set R1
	Get R2; I64Const $1; I64Sub; Tee R2
	I64Eqz; I32Eqz; BrIf $0
	End

	MOVD c0+16(FP), R3
	MOVD c1+24(FP), R4
	I32Load beta+40(FP)
	I32Eqz
	If
	STORE(R3, 0, V0); STORE(R3, 16, V1); STORE(R3, 32, V2); STORE(R3, 48, V3)
	STORE(R4, 0, V4); STORE(R4, 16, V5); STORE(R4, 32, V6); STORE(R4, 48, V7)
	Else
	F32Load beta+40(FP); F32x4Splat; Set V14
	STOREBETA(R3, 0, V0); STOREBETA(R3, 16, V1); STOREBETA(R3, 32, V2); STOREBETA(R3, 48, V3)
	STOREBETA(R4, 0, V4); STOREBETA(R4, 16, V5); STOREBETA(R4, 32, V6); STOREBETA(R4, 48, V7)
	End
	RET
