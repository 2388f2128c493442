//go:build wasm && goexperiment.simd && !purego

#include "textflag.h"

// func addColsAsm(acc *float64, x *float32, n int)
//
// acc[j] += float64(x[j]) for j < n (n >= 4, a multiple of 4), four a turn, x[n] and x[n+1]
// readable: each pair of x is the low half of a vector loaded from where it starts, widened
// exactly to float64 (f64x2.promote_low_f32x4) and added to acc's pair. (The assembler writes
// no memory operand for v128.load64_zero, which would load the pair alone.) R0: acc, R1: x,
// R2: elements left.
//
// The assembler gives v128.store no offset operand: the store adds its own to the address.
#define PAIR(q) Get R0; I64Const $(16*q); I64Add; I32WrapI64; Get R0; I32WrapI64; V128Load $(16*q); Get R1; I32WrapI64; V128Load $(8*q); F64x2PromoteLowF32x4; F64x2Add; V128Store $0
TEXT ·addColsAsm(SB), NOSPLIT, $0-24
	MOVD acc+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R2
	Loop
	PAIR(0); PAIR(1)
	Get R0; I64Const $32; I64Add; Set R0
	Get R1; I64Const $16; I64Add; Set R1
	Get R2; I64Const $4; I64Sub; Tee R2
	I64Eqz; I32Eqz; BrIf $0
	End
	RET
