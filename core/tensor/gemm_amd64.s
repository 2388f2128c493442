//go:build amd64 && !purego

#include "textflag.h"

// Micro-kernels for gemm.go (reference loop and Go declarations in gemm_amd64.go; the pure-Go
// twin is gemmKernelGo2x4). A kernel computes one MR×NR tile C = A·B + beta·C from a packed A
// sliver (kc steps of MR floats) and a packed B sliver (kc steps of NR floats): each depth
// step loads the NR-wide row of B into vector registers, broadcasts each of the MR values of
// A and multiplies them in with FMA, so the whole tile stays in registers until the end. The
// loop takes four depth steps per turn. beta ±0 stores the tile without reading C.
//
// The Go assembler's operand order is the reverse of Intel's: VFMADD231PS B, A, ACC is
// ACC += A*B. Registers: SI walks A, DI walks B, DX is the C row, BX is ldc in bytes.

// ARGSA loads the arguments (kc, a, lda, b, c, ldc) of the four kernels that read A in place:
// CX = kc, SI = a, R11 = lda in bytes, DI = b, DX = c, BX = ldc in bytes. Defined before the
// first TEXT, so that go vet does not take its names for another function's.
#define ARGSA \
	MOVQ kc+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ lda+16(FP), R11; \
	MOVQ b+24(FP), DI; \
	MOVQ c+32(FP), DX; \
	MOVQ ldc+40(FP), BX; \
	SHLQ $2, BX; \
	SHLQ $2, R11

// STEPSAT points R9, R10 and R13 at depth steps 1, 2 and 3 of a transposed A (SI at step 0)
// and sets R12 to four steps, 4·lda bytes: the transposed kernels' addressing.
#define STEPSAT \
	LEAQ (SI)(R11*1), R9; \
	LEAQ (SI)(R11*2), R10; \
	LEAQ (R9)(R11*2), R13; \
	LEAQ (R11*4), R12

// ---- AVX-512: 8×32 tile, accumulators Z0-Z15 (row r in Z(2r), Z(2r+1)), B in Z16-Z17,
// ---- broadcasts of A in Z18-Z25.

#define ROW512(ao, za, acc0, acc1) \
	VBROADCASTSS (ao)(SI), za; \
	VFMADD231PS  Z16, za, acc0; \
	VFMADD231PS  Z17, za, acc1

// STEP512 is one depth step: A values at ao(SI), the B row at bo(DI).
#define STEP512(ao, bo) \
	VMOVUPS (bo)(DI), Z16; \
	VMOVUPS (bo+64)(DI), Z17; \
	ROW512(ao, Z18, Z0, Z1); \
	ROW512(ao+4, Z19, Z2, Z3); \
	ROW512(ao+8, Z20, Z4, Z5); \
	ROW512(ao+12, Z21, Z6, Z7); \
	ROW512(ao+16, Z22, Z8, Z9); \
	ROW512(ao+20, Z23, Z10, Z11); \
	ROW512(ao+24, Z24, Z12, Z13); \
	ROW512(ao+28, Z25, Z14, Z15)

// STOREBETA512 sets one C row to acc + beta*C (beta broadcast in Z26) and moves to the next.
#define STOREBETA512(acc0, acc1) \
	VFMADD231PS (DX), Z26, acc0; \
	VMOVUPS     acc0, (DX); \
	VFMADD231PS 64(DX), Z26, acc1; \
	VMOVUPS     acc1, 64(DX); \
	ADDQ        BX, DX

#define STORE512(acc0, acc1) \
	VMOVUPS acc0, (DX); \
	VMOVUPS acc1, 64(DX); \
	ADDQ    BX, DX

// PREFETCHROW512 asks for the cache lines of one 32-float C row at R8 (three, as a row that
// does not start on a line spans three) and moves R8 to the next row.
#define PREFETCHROW512 \
	PREFETCHT0 (R8); \
	PREFETCHT0 64(R8); \
	PREFETCHT0 127(R8); \
	ADDQ       BX, R8

// The whole 8×32 tile, for both kernels (packed A, A in place): the C rows' prefetch, the
// accumulators cleared, and the stores (STOREBETATILE512 with beta broadcast in Z26).
#define PREFETCHTILE512 \
	PREFETCHROW512; \
	PREFETCHROW512; \
	PREFETCHROW512; \
	PREFETCHROW512; \
	PREFETCHROW512; \
	PREFETCHROW512; \
	PREFETCHROW512; \
	PREFETCHROW512

// VPXORD, not VXORPS: the 512-bit VXORPS needs AVX512DQ.
#define ZEROTILE512 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

#define STOREBETATILE512 \
	STOREBETA512(Z0, Z1); \
	STOREBETA512(Z2, Z3); \
	STOREBETA512(Z4, Z5); \
	STOREBETA512(Z6, Z7); \
	STOREBETA512(Z8, Z9); \
	STOREBETA512(Z10, Z11); \
	STOREBETA512(Z12, Z13); \
	STOREBETA512(Z14, Z15)

#define STORETILE512 \
	STORE512(Z0, Z1); \
	STORE512(Z2, Z3); \
	STORE512(Z4, Z5); \
	STORE512(Z6, Z7); \
	STORE512(Z8, Z9); \
	STORE512(Z10, Z11); \
	STORE512(Z12, Z13); \
	STORE512(Z14, Z15)

// func gemmKernel8x32AVX512(kc int, a, b, c *float32, ldc int, beta float32)
TEXT ·gemmKernel8x32AVX512(SB), NOSPLIT, $0-44
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), BX
	SHLQ $2, BX

	// The C tile is read (beta != 0) or written at the end; its rows are ldc apart and, in a
	// large C (a weight gradient, the MLM logits), not in cache. Asking for them now lets the
	// loads overlap the products instead of stalling the stores.
	MOVQ DX, R8
	PREFETCHTILE512

	ZEROTILE512

	MOVQ CX, AX
	SHRQ $2, AX
	JZ   tail512

loop512:
	STEP512(0, 0)
	STEP512(32, 128)
	STEP512(64, 256)
	STEP512(96, 384)
	ADDQ $128, SI
	ADDQ $512, DI
	DECQ AX
	JNZ  loop512

tail512:
	ANDQ $3, CX
	JZ   store512

loop512x1:
	STEP512(0, 0)
	ADDQ $32, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  loop512x1

store512:
	MOVL  beta+40(FP), AX
	TESTL $0x7fffffff, AX
	JZ    store512beta0
	VBROADCASTSS beta+40(FP), Z26
	STOREBETATILE512
	VZEROUPPER
	RET

store512beta0:
	STORETILE512
	VZEROUPPER
	RET

// ---- AVX2+FMA: 6×16 tile, accumulators Y0-Y11 (row r in Y(2r), Y(2r+1)), B in Y12-Y13,
// ---- broadcasts of A alternating in Y14-Y15 (all 16 registers in use).

#define ROW256(ao, ya, acc0, acc1) \
	VBROADCASTSS (ao)(SI), ya; \
	VFMADD231PS  Y12, ya, acc0; \
	VFMADD231PS  Y13, ya, acc1

#define STEP256(ao, bo) \
	VMOVUPS (bo)(DI), Y12; \
	VMOVUPS (bo+32)(DI), Y13; \
	ROW256(ao, Y14, Y0, Y1); \
	ROW256(ao+4, Y15, Y2, Y3); \
	ROW256(ao+8, Y14, Y4, Y5); \
	ROW256(ao+12, Y15, Y6, Y7); \
	ROW256(ao+16, Y14, Y8, Y9); \
	ROW256(ao+20, Y15, Y10, Y11)

#define STOREBETA256(acc0, acc1) \
	VFMADD231PS (DX), Y14, acc0; \
	VMOVUPS     acc0, (DX); \
	VFMADD231PS 32(DX), Y14, acc1; \
	VMOVUPS     acc1, 32(DX); \
	ADDQ        BX, DX

#define STORE256(acc0, acc1) \
	VMOVUPS acc0, (DX); \
	VMOVUPS acc1, 32(DX); \
	ADDQ    BX, DX

// The whole 6×16 tile, for both AVX2 kernels.
#define ZEROTILE256 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

#define STOREBETATILE256 \
	STOREBETA256(Y0, Y1); \
	STOREBETA256(Y2, Y3); \
	STOREBETA256(Y4, Y5); \
	STOREBETA256(Y6, Y7); \
	STOREBETA256(Y8, Y9); \
	STOREBETA256(Y10, Y11)

#define STORETILE256 \
	STORE256(Y0, Y1); \
	STORE256(Y2, Y3); \
	STORE256(Y4, Y5); \
	STORE256(Y6, Y7); \
	STORE256(Y8, Y9); \
	STORE256(Y10, Y11)

// func gemmKernel6x16AVX2(kc int, a, b, c *float32, ldc int, beta float32)
TEXT ·gemmKernel6x16AVX2(SB), NOSPLIT, $0-44
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), BX
	SHLQ $2, BX

	ZEROTILE256

	MOVQ CX, AX
	SHRQ $2, AX
	JZ   tail256

loop256:
	STEP256(0, 0)
	STEP256(24, 64)
	STEP256(48, 128)
	STEP256(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ AX
	JNZ  loop256

tail256:
	ANDQ $3, CX
	JZ   store256

loop256x1:
	STEP256(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop256x1

store256:
	MOVL  beta+40(FP), AX
	TESTL $0x7fffffff, AX
	JZ    store256beta0
	VBROADCASTSS beta+40(FP), Y14
	STOREBETATILE256
	VZEROUPPER
	RET

store256beta0:
	STORETILE256
	VZEROUPPER
	RET

// ---- One row of a tile: the first row of the 8×32 (AVX-512) or 6×16 (AVX2) kernel's tile,
// ---- with the same FMAs in the same order (so the same bits), for an A of one row (a
// ---- masked word through the MLM decoder), where the full kernel would compute seven or five
// ---- rows of padding. The A sliver is still packed mr wide: its row-0 values lie mr apart.

// func gemmRow1x32AVX512(kc int, a, b, c *float32)
TEXT ·gemmRow1x32AVX512(SB), NOSPLIT, $0-32
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	TESTQ  CX, CX
	JZ     row512done

row512loop:
	VBROADCASTSS (SI), Z18
	VFMADD231PS  (DI), Z18, Z0
	VFMADD231PS  64(DI), Z18, Z1
	ADDQ         $32, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          row512loop

row512done:
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VZEROUPPER
	RET

// func gemmRow1x16AVX2(kc int, a, b, c *float32)
TEXT ·gemmRow1x16AVX2(SB), NOSPLIT, $0-32
	MOVQ   kc+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	MOVQ   c+24(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TESTQ  CX, CX
	JZ     row256done

row256loop:
	VBROADCASTSS (SI), Y14
	VFMADD231PS  (DI), Y14, Y0
	VFMADD231PS  32(DI), Y14, Y1
	ADDQ         $24, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          row256loop

row256done:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET

// func gemmTranspose8AVX2(dst, src *float32, ldd, lds, n int)
//
// For j < 8, p < n (n a multiple of 8): dst[p*ldd+j] = src[j*lds+p]. Each turn loads an 8×8
// block (8 rows of src, 8 floats each) and stores its transpose with the usual
// unpack/shuffle/permute sequence; this packs B for op(B) = Bᵀ (a linear layer's weight)
// several times faster than scalar code.
TEXT ·gemmTranspose8AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldd+16(FP), DX
	MOVQ lds+24(FP), BX
	MOVQ n+32(FP), CX
	SHLQ $2, DX
	SHLQ $2, BX
	SHRQ $3, CX
	JZ   transdone
	LEAQ (BX)(BX*2), R8  // 3 source rows
	LEAQ (SI)(BX*4), R9  // source row 4
	LEAQ (DX)(DX*2), R10 // 3 destination rows
	LEAQ (DI)(DX*4), R11 // destination row 4

transloop:
	PREFETCHT0 512(SI)
	PREFETCHT0 512(SI)(BX*1)
	PREFETCHT0 512(SI)(BX*2)
	PREFETCHT0 512(SI)(R8*1)
	PREFETCHT0 512(R9)
	PREFETCHT0 512(R9)(BX*1)
	PREFETCHT0 512(R9)(BX*2)
	PREFETCHT0 512(R9)(R8*1)
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(BX*1), Y1
	VMOVUPS (SI)(BX*2), Y2
	VMOVUPS (SI)(R8*1), Y3
	VMOVUPS (R9), Y4
	VMOVUPS (R9)(BX*1), Y5
	VMOVUPS (R9)(BX*2), Y6
	VMOVUPS (R9)(R8*1), Y7

	// Per 128-bit lane: pairs of rows interleaved...
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	// ...then quadruples: Y0 holds column 0 of rows 0-3 (low lane) and column 4 (high lane).
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	// ...then lanes: Y8+q holds column q of rows 0-7.
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(DX*1)
	VMOVUPS Y10, (DI)(DX*2)
	VMOVUPS Y11, (DI)(R10*1)
	VMOVUPS Y12, (R11)
	VMOVUPS Y13, (R11)(DX*1)
	VMOVUPS Y14, (R11)(DX*2)
	VMOVUPS Y15, (R11)(R10*1)

	ADDQ $32, SI
	ADDQ $32, R9
	LEAQ (DI)(DX*8), DI
	LEAQ (R11)(DX*8), R11
	DECQ CX
	JNZ  transloop

transdone:
	VZEROUPPER
	RET

// func gemmPackRows32AVX(dst, src *float32, ldb, kb, nsl int)
// For p < kb, s < nsl: dst[s*kb*32+p*32 : +32] = src[p*ldb+s*32 : +32]. Row by row of src, so
// that the source streams from memory in order, each row dealt out to the nsl slivers; the
// same columns four rows down are asked for as each run is read (BenchmarkPackBRows, 2-vCPU
// EPYC: 15.2 and 14.2 GB/s without, 29.5 and 24.6 with, at ldb 256 and 1024).
TEXT ·gemmPackRows32AVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldb+16(FP), BX
	MOVQ kb+24(FP), CX
	MOVQ nsl+32(FP), DX
	SHLQ $2, BX
	MOVQ CX, R8
	SHLQ $7, R8 // a sliver's bytes: kb*32*4
	TESTQ CX, CX
	JZ   rows32done
	TESTQ DX, DX
	JZ   rows32done

rows32p:
	MOVQ SI, R9
	MOVQ DI, R10
	MOVQ DX, R11

rows32s:
	PREFETCHT0 (R9)(BX*4)
	PREFETCHT0 64(R9)(BX*4)
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y1
	VMOVUPS 64(R9), Y2
	VMOVUPS 96(R9), Y3
	VMOVUPS Y0, (R10)
	VMOVUPS Y1, 32(R10)
	VMOVUPS Y2, 64(R10)
	VMOVUPS Y3, 96(R10)
	ADDQ $128, R9
	ADDQ R8, R10
	DECQ R11
	JNZ  rows32s

	ADDQ BX, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  rows32p

rows32done:
	VZEROUPPER
	RET

// func gemmPackRows16AVX(dst, src *float32, ldb, kb, nsl int)
// gemmPackRows32AVX for slivers of 16 columns.
TEXT ·gemmPackRows16AVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldb+16(FP), BX
	MOVQ kb+24(FP), CX
	MOVQ nsl+32(FP), DX
	SHLQ $2, BX
	MOVQ CX, R8
	SHLQ $6, R8 // a sliver's bytes: kb*16*4
	TESTQ CX, CX
	JZ   rows16done
	TESTQ DX, DX
	JZ   rows16done

rows16p:
	MOVQ SI, R9
	MOVQ DI, R10
	MOVQ DX, R11

rows16s:
	PREFETCHT0 (R9)(BX*4)
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y1
	VMOVUPS Y0, (R10)
	VMOVUPS Y1, 32(R10)
	ADDQ $64, R9
	ADDQ R8, R10
	DECQ R11
	JNZ  rows16s

	ADDQ BX, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  rows16p

rows16done:
	VZEROUPPER
	RET

// func gemmPackRows8AVX(dst, src *float32, ldb, kb, nsl int)
// gemmPackRows32AVX for slivers of 8 columns (the AVX-512 kernel's A slivers of a transposed A).
TEXT ·gemmPackRows8AVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ldb+16(FP), BX
	MOVQ kb+24(FP), CX
	MOVQ nsl+32(FP), DX
	SHLQ $2, BX
	MOVQ CX, R8
	SHLQ $5, R8 // a sliver's bytes: kb*8*4
	TESTQ CX, CX
	JZ   rows8done
	TESTQ DX, DX
	JZ   rows8done

rows8p:
	MOVQ SI, R9
	MOVQ DI, R10
	MOVQ DX, R11

rows8s:
	PREFETCHT0 (R9)(BX*4)
	VMOVUPS (R9), Y0
	VMOVUPS Y0, (R10)
	ADDQ $32, R9
	ADDQ R8, R10
	DECQ R11
	JNZ  rows8s

	ADDQ BX, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  rows8p

rows8done:
	VZEROUPPER
	RET

// ---- AVX-512, A read in place: gemmKernel8x32AVX512 with A's eight rows read where they lie
// ---- (row i at a + i·lda) instead of from a packed sliver. Rows 0-3 from SI, rows 4-7 from
// ---- R13 (SI + 4·lda), with R11 = lda and R12 = 3·lda in bytes; the same products in the same
// ---- order as the packed kernel, so the same bits.

#define ROWA512(addr, za, acc0, acc1) \
	VBROADCASTSS addr, za; \
	VFMADD231PS  Z16, za, acc0; \
	VFMADD231PS  Z17, za, acc1

// STEPA512 is one depth step: A's column at ao bytes into each row, the B row at bo(DI).
#define STEPA512(ao, bo) \
	VMOVUPS (bo)(DI), Z16; \
	VMOVUPS (bo+64)(DI), Z17; \
	ROWA512(ao(SI), Z18, Z0, Z1); \
	ROWA512(ao(SI)(R11*1), Z19, Z2, Z3); \
	ROWA512(ao(SI)(R11*2), Z20, Z4, Z5); \
	ROWA512(ao(SI)(R12*1), Z21, Z6, Z7); \
	ROWA512(ao(R13), Z22, Z8, Z9); \
	ROWA512(ao(R13)(R11*1), Z23, Z10, Z11); \
	ROWA512(ao(R13)(R11*2), Z24, Z12, Z13); \
	ROWA512(ao(R13)(R12*1), Z25, Z14, Z15)

// func gemmKernel8x32AVX512A(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32, ahead *float32, lines int)
TEXT ·gemmKernel8x32AVX512A(SB), NOSPLIT, $0-72
	ARGSA
	LEAQ (R11)(R11*2), R12
	LEAQ (SI)(R11*4), R13
	MOVQ ahead+56(FP), R9
	MOVQ lines+64(FP), R10

	MOVQ DX, R8
	PREFETCHTILE512

	ZEROTILE512

	// Sixteen depth steps a turn (a cache line of each row), with each row's line 256 bytes
	// ahead asked for: on the first column tile, A comes from memory, and the hardware
	// prefetchers of the 2-vCPU EPYC VMs do not follow eight rows (X·Wᵀ and dY·W of Mini's
	// 256x256 and 256x1024 layers from memory, alternating calls: 203-223 -> 236-244 GFLOP/s;
	// Base's shapes unchanged).
	// These turns stop 64 steps before the end: past it lie columns of the next depth block,
	// not wanted until much later. Then four steps a turn, then one.
	MOVQ CX, AX
	SUBQ $64, AX
	JLE  quadA512
	SHRQ $4, AX
	JZ   quadA512
	MOVQ AX, R14
	SHLQ $4, R14
	SUBQ R14, CX

loopA512x16:
	PREFETCHT0 256(SI)
	PREFETCHT0 256(SI)(R11*1)
	PREFETCHT0 256(SI)(R11*2)
	PREFETCHT0 256(SI)(R12*1)
	PREFETCHT0 256(R13)
	PREFETCHT0 256(R13)(R11*1)
	PREFETCHT0 256(R13)(R11*2)
	PREFETCHT0 256(R13)(R12*1)
	// Three of the lines asked for ahead a turn while three are left; the rest at the end.
	CMPQ R10, $3
	JLT  stepsA512x16
	PREFETCHT0 (R9)
	PREFETCHT0 64(R9)
	PREFETCHT0 128(R9)
	ADDQ $192, R9
	SUBQ $3, R10

stepsA512x16:
	STEPA512(0, 0)
	STEPA512(4, 128)
	STEPA512(8, 256)
	STEPA512(12, 384)
	STEPA512(16, 512)
	STEPA512(20, 640)
	STEPA512(24, 768)
	STEPA512(28, 896)
	STEPA512(32, 1024)
	STEPA512(36, 1152)
	STEPA512(40, 1280)
	STEPA512(44, 1408)
	STEPA512(48, 1536)
	STEPA512(52, 1664)
	STEPA512(56, 1792)
	STEPA512(60, 1920)
	ADDQ $64, SI
	ADDQ $64, R13
	ADDQ $2048, DI
	DECQ AX
	JNZ  loopA512x16

quadA512:
	MOVQ CX, AX
	SHRQ $2, AX
	JZ   tailA512

loopA512:
	STEPA512(0, 0)
	STEPA512(4, 128)
	STEPA512(8, 256)
	STEPA512(12, 384)
	ADDQ $16, SI
	ADDQ $16, R13
	ADDQ $512, DI
	DECQ AX
	JNZ  loopA512

tailA512:
	ANDQ $3, CX
	JZ   aheadA512

loopA512x1:
	STEPA512(0, 0)
	ADDQ $4, SI
	ADDQ $4, R13
	ADDQ $128, DI
	DECQ CX
	JNZ  loopA512x1

aheadA512:
	TESTQ R10, R10
	JLE   storeA512
	PREFETCHT0 (R9)
	ADDQ  $64, R9
	DECQ  R10
	JMP   aheadA512

storeA512:
	MOVL  beta+48(FP), AX
	TESTL $0x7fffffff, AX
	JZ    storeA512beta0
	VBROADCASTSS beta+48(FP), Z26
	STOREBETATILE512
	VZEROUPPER
	RET

storeA512beta0:
	STORETILE512
	VZEROUPPER
	RET

// ---- AVX2+FMA, A read in place: gemmKernel6x16AVX2 with A's six rows read where they lie,
// ---- rows 0-3 from SI, rows 4-5 from R13 (SI + 4·lda), R11 = lda, R12 = 3·lda in bytes.

#define ROWA256(addr, ya, acc0, acc1) \
	VBROADCASTSS addr, ya; \
	VFMADD231PS  Y12, ya, acc0; \
	VFMADD231PS  Y13, ya, acc1

#define STEPA256(ao, bo) \
	VMOVUPS (bo)(DI), Y12; \
	VMOVUPS (bo+32)(DI), Y13; \
	ROWA256(ao(SI), Y14, Y0, Y1); \
	ROWA256(ao(SI)(R11*1), Y15, Y2, Y3); \
	ROWA256(ao(SI)(R11*2), Y14, Y4, Y5); \
	ROWA256(ao(SI)(R12*1), Y15, Y6, Y7); \
	ROWA256(ao(R13), Y14, Y8, Y9); \
	ROWA256(ao(R13)(R11*1), Y15, Y10, Y11)

// func gemmKernel6x16AVX2A(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32)
TEXT ·gemmKernel6x16AVX2A(SB), NOSPLIT, $0-52
	ARGSA
	LEAQ (R11)(R11*2), R12
	LEAQ (SI)(R11*4), R13

	ZEROTILE256

	// As gemmKernel8x32AVX512A: sixteen steps a turn with each row's line 256 bytes ahead
	// asked for, except in the last 64 steps (a Mini layer's X·Wᵀ and dY·W from memory,
	// alternating calls: 107-121 -> 121-130 GFLOP/s; Base's unchanged).
	MOVQ CX, AX
	SUBQ $64, AX
	JLE  quadA256
	SHRQ $4, AX
	JZ   quadA256
	MOVQ AX, R14
	SHLQ $4, R14
	SUBQ R14, CX

loopA256x16:
	PREFETCHT0 256(SI)
	PREFETCHT0 256(SI)(R11*1)
	PREFETCHT0 256(SI)(R11*2)
	PREFETCHT0 256(SI)(R12*1)
	PREFETCHT0 256(R13)
	PREFETCHT0 256(R13)(R11*1)
	STEPA256(0, 0)
	STEPA256(4, 64)
	STEPA256(8, 128)
	STEPA256(12, 192)
	STEPA256(16, 256)
	STEPA256(20, 320)
	STEPA256(24, 384)
	STEPA256(28, 448)
	STEPA256(32, 512)
	STEPA256(36, 576)
	STEPA256(40, 640)
	STEPA256(44, 704)
	STEPA256(48, 768)
	STEPA256(52, 832)
	STEPA256(56, 896)
	STEPA256(60, 960)
	ADDQ $64, SI
	ADDQ $64, R13
	ADDQ $1024, DI
	DECQ AX
	JNZ  loopA256x16

quadA256:
	MOVQ CX, AX
	SHRQ $2, AX
	JZ   tailA256

loopA256:
	STEPA256(0, 0)
	STEPA256(4, 64)
	STEPA256(8, 128)
	STEPA256(12, 192)
	ADDQ $16, SI
	ADDQ $16, R13
	ADDQ $256, DI
	DECQ AX
	JNZ  loopA256

tailA256:
	ANDQ $3, CX
	JZ   storeA256

loopA256x1:
	STEPA256(0, 0)
	ADDQ $4, SI
	ADDQ $4, R13
	ADDQ $64, DI
	DECQ CX
	JNZ  loopA256x1

storeA256:
	MOVL  beta+48(FP), AX
	TESTL $0x7fffffff, AX
	JZ    storeA256beta0
	VBROADCASTSS beta+48(FP), Y14
	STOREBETATILE256
	VZEROUPPER
	RET

storeA256beta0:
	STORETILE256
	VZEROUPPER
	RET

// ---- AVX-512, A read in place, transposed: gemmKernel8x32AVX512 with the tile's A sliver
// ---- read where it lies in an Aᵀ stored [kc, lda]: depth step p's eight values at a + p·lda,
// ---- contiguous as a packed sliver's are (the weight gradient dYᵀ·X reads dY so). Steps p,
// ---- p+1, p+2, p+3 from SI, R9, R10, R13, each moved on by R12 = 4·lda bytes a turn; the same
// ---- products in the same order as the packed kernel, so the same bits.

#define STEPT512(base, bo) \
	VMOVUPS (bo)(DI), Z16; \
	VMOVUPS (bo+64)(DI), Z17; \
	ROWA512(0(base), Z18, Z0, Z1); \
	ROWA512(4(base), Z19, Z2, Z3); \
	ROWA512(8(base), Z20, Z4, Z5); \
	ROWA512(12(base), Z21, Z6, Z7); \
	ROWA512(16(base), Z22, Z8, Z9); \
	ROWA512(20(base), Z23, Z10, Z11); \
	ROWA512(24(base), Z24, Z12, Z13); \
	ROWA512(28(base), Z25, Z14, Z15)

// func gemmKernel8x32AVX512AT(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32)
TEXT ·gemmKernel8x32AVX512AT(SB), NOSPLIT, $0-52
	ARGSA
	STEPSAT

	MOVQ DX, R8
	PREFETCHTILE512

	ZEROTILE512

	MOVQ CX, AX
	SHRQ $2, AX
	JZ   tailT512

	// Each step's line sixteen steps ahead asked for (dYᵀ·X of a Mini or Base layer from
	// memory, alternating calls: 3-10% faster).
loopT512:
	PREFETCHT0 (SI)(R12*4)
	PREFETCHT0 (R9)(R12*4)
	PREFETCHT0 (R10)(R12*4)
	PREFETCHT0 (R13)(R12*4)
	STEPT512(SI, 0)
	STEPT512(R9, 128)
	STEPT512(R10, 256)
	STEPT512(R13, 384)
	ADDQ R12, SI
	ADDQ R12, R9
	ADDQ R12, R10
	ADDQ R12, R13
	ADDQ $512, DI
	DECQ AX
	JNZ  loopT512

tailT512:
	ANDQ $3, CX
	JZ   storeT512

loopT512x1:
	STEPT512(SI, 0)
	ADDQ R11, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  loopT512x1

storeT512:
	MOVL  beta+48(FP), AX
	TESTL $0x7fffffff, AX
	JZ    storeT512beta0
	VBROADCASTSS beta+48(FP), Z26
	STOREBETATILE512
	VZEROUPPER
	RET

storeT512beta0:
	STORETILE512
	VZEROUPPER
	RET

// ---- AVX2+FMA, A read in place, transposed: gemmKernel6x16AVX2 with depth step p's six A
// ---- values at a + p·lda (as gemmKernel8x32AVX512AT).

#define STEPT256(base, bo) \
	VMOVUPS (bo)(DI), Y12; \
	VMOVUPS (bo+32)(DI), Y13; \
	ROWA256(0(base), Y14, Y0, Y1); \
	ROWA256(4(base), Y15, Y2, Y3); \
	ROWA256(8(base), Y14, Y4, Y5); \
	ROWA256(12(base), Y15, Y6, Y7); \
	ROWA256(16(base), Y14, Y8, Y9); \
	ROWA256(20(base), Y15, Y10, Y11)

// func gemmKernel6x16AVX2AT(kc int, a *float32, lda int, b, c *float32, ldc int, beta float32)
TEXT ·gemmKernel6x16AVX2AT(SB), NOSPLIT, $0-52
	ARGSA
	STEPSAT

	ZEROTILE256

	MOVQ CX, AX
	SHRQ $2, AX
	JZ   tailT256

loopT256:
	STEPT256(SI, 0)
	STEPT256(R9, 64)
	STEPT256(R10, 128)
	STEPT256(R13, 192)
	ADDQ R12, SI
	ADDQ R12, R9
	ADDQ R12, R10
	ADDQ R12, R13
	ADDQ $256, DI
	DECQ AX
	JNZ  loopT256

tailT256:
	ANDQ $3, CX
	JZ   storeT256

loopT256x1:
	STEPT256(SI, 0)
	ADDQ R11, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loopT256x1

storeT256:
	MOVL  beta+48(FP), AX
	TESTL $0x7fffffff, AX
	JZ    storeT256beta0
	VBROADCASTSS beta+48(FP), Y14
	STOREBETATILE256
	VZEROUPPER
	RET

storeT256beta0:
	STORETILE256
	VZEROUPPER
	RET

// func gemmPrefetchLines(p *float32, lines int)
// asks for lines cache lines from p on (PREFETCHT0): nothing waits on them.
TEXT ·gemmPrefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ lines+8(FP), CX
	TESTQ CX, CX
	JLE  prefetchDone

prefetchLoop:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	DECQ CX
	JNZ  prefetchLoop

prefetchDone:
	RET
