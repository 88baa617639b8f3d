/* wip/quant_c_public.h -- block structs of the grid i-quants (public part, shared with CUDA).
 * Plain structs only: this part must also compile as C++.
 *
 * All seven types cover super-blocks of INFER_QK_K = 256 weights. Instead of storing
 * one small integer per weight they store, per group of 8 (or 4) weights, an index
 * into a fixed codebook ("grid") of magnitude patterns plus sign bits, and a few bits
 * of scale per 32 (IQ1_M: 16) weights. The grids live in the tables section; the byte
 * layouts are drawn above each dequantizer in the implementation. Multi-byte fields are
 * little-endian, as in the file. Bits per weight: bytes*8/256. */
#ifndef INFER_WIP_QUANT_C_PUBLIC_H
#define INFER_WIP_QUANT_C_PUBLIC_H
#include "base.h"

/* IQ2_XXS, 2.06 bpw: 8 sub-blocks of 32, each = 4 grid indices (8 bits) + one u32
 * holding 4 seven-bit sign codes and a 4-bit scale; stored as 16-bit words. */
typedef struct {
    infer_half d;                       /* super-block scale */
    uint16_t qs[INFER_QK_K / 8];        /* per 32 weights: 4 index bytes, then u32 signs|scale */
} infer_block_iq2_xxs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq2_xxs) == 66, "iq2_xxs size");

/* IQ2_XS, 2.31 bpw: one u16 per 8 weights = 9-bit grid index | 7-bit sign code << 9;
 * a 4-bit scale per 16 weights. */
typedef struct {
    infer_half d;
    uint16_t qs[INFER_QK_K / 8];        /* index (bits 0-8) | sign code (bits 9-15) */
    uint8_t  scales[INFER_QK_K / 32];   /* two 4-bit scales per 32 weights */
} infer_block_iq2_xs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq2_xs) == 74, "iq2_xs size");

/* IQ2_S, 2.56 bpw: 10-bit grid index per 8 weights, explicit 8-bit sign masks. */
typedef struct {
    infer_half d;
    uint8_t qs[INFER_QK_K / 4];         /* [0,32): index low bytes; [32,64): sign masks */
    uint8_t qh[INFER_QK_K / 32];        /* index bits 8-9, 2 bits per group of 8 */
    uint8_t scales[INFER_QK_K / 32];    /* two 4-bit scales per 32 weights */
} infer_block_iq2_s;
INFER__STATIC_ASSERT(sizeof(infer_block_iq2_s) == 82, "iq2_s size");

/* IQ3_XXS, 3.06 bpw: 8-bit index per 4 weights, then per 32 weights a u32 of
 * 4 seven-bit sign codes and a 4-bit scale. */
typedef struct {
    infer_half d;
    uint8_t qs[3 * INFER_QK_K / 8];     /* [0,64): indices; [64,96): 8 x u32 signs|scale */
} infer_block_iq3_xxs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq3_xxs) == 98, "iq3_xxs size");

/* IQ3_S, 3.44 bpw: 9-bit index per 4 weights, explicit sign masks, 4-bit scale per 32. */
typedef struct {
    infer_half d;
    uint8_t qs[INFER_QK_K / 4];         /* index low bytes, one per 4 weights */
    uint8_t qh[INFER_QK_K / 32];        /* index bit 8: byte per 32 weights, bit k for index k */
    uint8_t signs[INFER_QK_K / 8];      /* one sign mask byte per 8 weights */
    uint8_t scales[INFER_QK_K / 64];    /* two 4-bit scales per 64 weights */
} infer_block_iq3_s;
INFER__STATIC_ASSERT(sizeof(infer_block_iq3_s) == 110, "iq3_s size");

/* IQ1_S, 1.56 bpw: 11-bit index into a ternary grid per 8 weights; per 32 weights a
 * u16 with the 4 high index parts, a 3-bit scale and the sign of a +-1/8 shift. */
typedef struct {
    infer_half d;
    uint8_t  qs[INFER_QK_K / 8];        /* index low bytes */
    uint16_t qh[INFER_QK_K / 32];       /* 4 x 3 index bits | scale << 12 | shift sign << 15 */
} infer_block_iq1_s;
INFER__STATIC_ASSERT(sizeof(infer_block_iq1_s) == 50, "iq1_s size");

/* IQ1_M, 1.75 bpw: like IQ1_S but a 3-bit scale per 16 weights and a shift sign per
 * 8; the f16 super-block scale is split into four nibbles hidden in `scales`. */
typedef struct {
    uint8_t qs[INFER_QK_K / 8];         /* index low bytes */
    uint8_t qh[INFER_QK_K / 16];        /* nibble per 8 weights: 3 index bits | shift sign << 3 */
    uint8_t scales[INFER_QK_K / 32];    /* 4 x u16: four 3-bit scales | nibble of d << 12 */
} infer_block_iq1_m;
INFER__STATIC_ASSERT(sizeof(infer_block_iq1_m) == 56, "iq1_m size");

#endif
