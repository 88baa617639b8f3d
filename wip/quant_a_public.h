/* wip/quant_a_public.h -- block structs of the "simple" weight types (public part).
 *
 * >>quant_blocks_a
 * A quantized tensor row is an array of fixed-size blocks; each block holds `QK`
 * weights as small integer codes plus one or more scales. These structs are read by
 * the C implementation and by the CUDA kernels alike, so they are plain C (and C++)
 * aggregates with no padding; every one is followed by a static size check against
 * the byte counts GGUF files assume (ggml-common.h). Scales are stored as raw bits
 * (infer_half = IEEE binary16, or one-byte E8M0 / UE4M3) and converted on use.
 * Q8_0, Q8_1 and Q8_K (also used for activations) are defined with the base types. */
#ifndef INFER_WIP_QUANT_A_PUBLIC_H
#define INFER_WIP_QUANT_A_PUBLIC_H
#include "base.h"

#define INFER_QK4_0 32
#define INFER_QK4_1 32
#define INFER_QK5_0 32
#define INFER_QK5_1 32
#define INFER_QK_MXFP4 32
#define INFER_QK_NVFP4 64          /* four sub-blocks of 16, one scale each */
#define INFER_QK_NVFP4_SUB 16
#define INFER_QK1_0 128
#define INFER_QK2_0 64
#define INFER_QK_I2_S 128          /* BitNet i2_s packing chunk (x86 layout) */

/* Q4_0: x = (q - 8) * d,          q in 0..15 */
typedef struct { infer_half d; uint8_t qs[INFER_QK4_0 / 2]; } infer_block_q4_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q4_0) == 18, "q4_0 size");

/* Q4_1: x = q * d + m,            q in 0..15 */
typedef struct { infer_half d, m; uint8_t qs[INFER_QK4_1 / 2]; } infer_block_q4_1;
INFER__STATIC_ASSERT(sizeof(infer_block_q4_1) == 20, "q4_1 size");

/* Q5_0: x = (q - 16) * d,         q in 0..31, bit 4 of every q gathered in qh */
typedef struct { infer_half d; uint8_t qh[4]; uint8_t qs[INFER_QK5_0 / 2]; } infer_block_q5_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q5_0) == 22, "q5_0 size");

/* Q5_1: x = q * d + m,            q in 0..31 */
typedef struct { infer_half d, m; uint8_t qh[4]; uint8_t qs[INFER_QK5_1 / 2]; } infer_block_q5_1;
INFER__STATIC_ASSERT(sizeof(infer_block_q5_1) == 24, "q5_1 size");

/* TQ1_0: 256 trits, 5 per byte in qs (base 3) and 4 per byte in qh; x = (t - 1) * d */
typedef struct { uint8_t qs[(INFER_QK_K - 4 * INFER_QK_K / 64) / 5]; uint8_t qh[INFER_QK_K / 64]; infer_half d; } infer_block_tq1_0;
INFER__STATIC_ASSERT(sizeof(infer_block_tq1_0) == 54, "tq1_0 size");

/* TQ2_0: 256 trits as 2-bit codes; x = (c - 1) * d */
typedef struct { uint8_t qs[INFER_QK_K / 4]; infer_half d; } infer_block_tq2_0;
INFER__STATIC_ASSERT(sizeof(infer_block_tq2_0) == 66, "tq2_0 size");

/* MXFP4: 32 FP4 (E2M1) codes sharing one power-of-two scale (E8M0 exponent byte) */
typedef struct { uint8_t e; uint8_t qs[INFER_QK_MXFP4 / 2]; } infer_block_mxfp4;
INFER__STATIC_ASSERT(sizeof(infer_block_mxfp4) == 17, "mxfp4 size");

/* NVFP4: 64 FP4 (E2M1) codes, one UE4M3 scale byte per 16 */
typedef struct { uint8_t d[INFER_QK_NVFP4 / INFER_QK_NVFP4_SUB]; uint8_t qs[INFER_QK_NVFP4 / 2]; } infer_block_nvfp4;
INFER__STATIC_ASSERT(sizeof(infer_block_nvfp4) == 36, "nvfp4 size");

/* Q1_0: 128 sign bits; x = bit ? +d : -d */
typedef struct { infer_half d; uint8_t qs[INFER_QK1_0 / 8]; } infer_block_q1_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q1_0) == 18, "q1_0 size");

/* Q2_0: 64 2-bit codes; x = (c - 1) * d */
typedef struct { infer_half d; uint8_t qs[INFER_QK2_0 / 4]; } infer_block_q2_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q2_0) == 18, "q2_0 size");

/* I2_S (BitNet fork) has no block struct: a whole tensor of n weights is n/4 bytes of
 * 2-bit codes followed by one f32 scale and 28 zero bytes (see infer__dequant_i2_s). */

#endif
