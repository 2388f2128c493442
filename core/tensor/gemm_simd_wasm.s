//go:build wasm && goexperiment.simd && !purego

#include "textflag.h"

// func gemmDot2x16Asm(a, b, c0, c1 *float32, kc int)
//
// gemmDotSIMD2x16's loop in WebAssembly by hand: the same eight f32x4 sums, each product
// added in the same order (so the same bits), without what Go 1.27.3's wasm backend emits
// for the Go version: a 64-bit addition and wrap for every load (here the constant offsets
// sit in the loads' memarg), the function's resume dispatch (br_table) on every turn of the
// loop, and an accumulator spilled to the Go stack. One depth step a turn: with two, V8's
// optimising compiler loaded both steps' vectors first and kept four accumulators on its
// stack (26 GFLOP/s against 33 with one step, 128x768x768 in Node).
//
// R0: a (2 floats a step), R1: b (16 floats a step), R2: steps left (kc >= 1);
// V0-V3: row 0 of the tile, V4-V7: row 1, V8-V11: b's four vectors, V12-V13: a broadcast.
// The assembler gives v128.store no offset operand: the stores add theirs to the address.
TEXT ·gemmDot2x16Asm(SB), NOSPLIT, $0-40
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD kc+32(FP), R2
	I32Const $0
	I32x4Splat
	Tee V0
	Tee V1
	Tee V2
	Tee V3
	Tee V4
	Tee V5
	Tee V6
	Set V7

	Loop
	Get R0
	I32WrapI64
	F32Load $0
	F32x4Splat
	Set V12
	Get R0
	I32WrapI64
	F32Load $4
	F32x4Splat
	Set V13
	Get R1
	I32WrapI64
	V128Load $0
	Set V8
	Get R1
	I32WrapI64
	V128Load $16
	Set V9
	Get R1
	I32WrapI64
	V128Load $32
	Set V10
	Get R1
	I32WrapI64
	V128Load $48
	Set V11
	Get V0
	Get V12
	Get V8
	F32x4Mul
	F32x4Add
	Set V0
	Get V1
	Get V12
	Get V9
	F32x4Mul
	F32x4Add
	Set V1
	Get V2
	Get V12
	Get V10
	F32x4Mul
	F32x4Add
	Set V2
	Get V3
	Get V12
	Get V11
	F32x4Mul
	F32x4Add
	Set V3
	Get V4
	Get V13
	Get V8
	F32x4Mul
	F32x4Add
	Set V4
	Get V5
	Get V13
	Get V9
	F32x4Mul
	F32x4Add
	Set V5
	Get V6
	Get V13
	Get V10
	F32x4Mul
	F32x4Add
	Set V6
	Get V7
	Get V13
	Get V11
	F32x4Mul
	F32x4Add
	Set V7
	Get R0
	I64Const $8
	I64Add
	Set R0
	Get R1
	I64Const $64
	I64Add
	Set R1
	Get R2
	I64Const $1
	I64Sub
	Tee R2
	I64Eqz
	I32Eqz
	BrIf $0
	End

	MOVD c0+16(FP), R3
	MOVD c1+24(FP), R4
	Get R3
	I32WrapI64
	Get V0
	V128Store $0
	Get R3
	I64Const $16
	I64Add
	I32WrapI64
	Get V1
	V128Store $0
	Get R3
	I64Const $32
	I64Add
	I32WrapI64
	Get V2
	V128Store $0
	Get R3
	I64Const $48
	I64Add
	I32WrapI64
	Get V3
	V128Store $0
	Get R4
	I32WrapI64
	Get V4
	V128Store $0
	Get R4
	I64Const $16
	I64Add
	I32WrapI64
	Get V5
	V128Store $0
	Get R4
	I64Const $32
	I64Add
	I32WrapI64
	Get V6
	V128Store $0
	Get R4
	I64Const $48
	I64Add
	I32WrapI64
	Get V7
	V128Store $0
	RET

// func gemmDot2x16BetaAsm(a, b, c0, c1 *float32, kc int, beta float32)
//
// gemmDot2x16Asm, then c = sum + c·beta for each of the 16 columns of c0 and c1 (V14: beta
// broadcast): gemmKernelSIMD2x16 with beta != 0, whose Go version went through a tile on
// the stack.
TEXT ·gemmDot2x16BetaAsm(SB), NOSPLIT, $0-44
	MOVD a+0(FP), R0
	MOVD b+8(FP), R1
	MOVD kc+32(FP), R2
	I32Const $0
	I32x4Splat
	Tee V0
	Tee V1
	Tee V2
	Tee V3
	Tee V4
	Tee V5
	Tee V6
	Set V7

	Loop
	Get R0
	I32WrapI64
	F32Load $0
	F32x4Splat
	Set V12
	Get R0
	I32WrapI64
	F32Load $4
	F32x4Splat
	Set V13
	Get R1
	I32WrapI64
	V128Load $0
	Set V8
	Get R1
	I32WrapI64
	V128Load $16
	Set V9
	Get R1
	I32WrapI64
	V128Load $32
	Set V10
	Get R1
	I32WrapI64
	V128Load $48
	Set V11
	Get V0
	Get V12
	Get V8
	F32x4Mul
	F32x4Add
	Set V0
	Get V1
	Get V12
	Get V9
	F32x4Mul
	F32x4Add
	Set V1
	Get V2
	Get V12
	Get V10
	F32x4Mul
	F32x4Add
	Set V2
	Get V3
	Get V12
	Get V11
	F32x4Mul
	F32x4Add
	Set V3
	Get V4
	Get V13
	Get V8
	F32x4Mul
	F32x4Add
	Set V4
	Get V5
	Get V13
	Get V9
	F32x4Mul
	F32x4Add
	Set V5
	Get V6
	Get V13
	Get V10
	F32x4Mul
	F32x4Add
	Set V6
	Get V7
	Get V13
	Get V11
	F32x4Mul
	F32x4Add
	Set V7
	Get R0
	I64Const $8
	I64Add
	Set R0
	Get R1
	I64Const $64
	I64Add
	Set R1
	Get R2
	I64Const $1
	I64Sub
	Tee R2
	I64Eqz
	I32Eqz
	BrIf $0
	End

	MOVD c0+16(FP), R3
	MOVD c1+24(FP), R4
	F32Load beta+40(FP)
	F32x4Splat
	Set V14
	Get R3
	I32WrapI64
	Get V0
	Get R3
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	Get R3
	I64Const $16
	I64Add
	I32WrapI64
	Get V1
	Get R3
	I64Const $16
	I64Add
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	Get R3
	I64Const $32
	I64Add
	I32WrapI64
	Get V2
	Get R3
	I64Const $32
	I64Add
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	Get R3
	I64Const $48
	I64Add
	I32WrapI64
	Get V3
	Get R3
	I64Const $48
	I64Add
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	Get R4
	I32WrapI64
	Get V4
	Get R4
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	Get R4
	I64Const $16
	I64Add
	I32WrapI64
	Get V5
	Get R4
	I64Const $16
	I64Add
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	Get R4
	I64Const $32
	I64Add
	I32WrapI64
	Get V6
	Get R4
	I64Const $32
	I64Add
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	Get R4
	I64Const $48
	I64Add
	I32WrapI64
	Get V7
	Get R4
	I64Const $48
	I64Add
	I32WrapI64
	V128Load $0
	Get V14
	F32x4Mul
	F32x4Add
	V128Store $0
	RET
