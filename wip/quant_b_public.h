/* wip/quant_b_public.h -- block structs of the k-quants (Q2_K..Q6_K) and the 4-bit
 * non-linear quants (IQ4_NL, IQ4_XS). Public part: plain structs shared by C and CUDA.
 *
 * k-quants group 256 weights (INFER_QK_K) into a "super-block" holding one or two fp16
 * super-scales; inside it, 16- or 32-element sub-blocks carry small integer scales (and
 * mins) expressed in units of the super-scale. A weight is
 *     w = d * sc_j * q            (Q3_K, Q6_K: symmetric, q signed)
 *     w = d * sc_j * q - dmin * m_j  (Q2_K, Q4_K, Q5_K: affine, q unsigned)
 * IQ4_NL/IQ4_XS replace the uniform grid by 16 non-uniform levels (kvalues_iq4nl), denser
 * near zero where most weights live. Byte diagrams sit above each dequantizer. */
#ifndef INFER_WIP_QUANT_B_PUBLIC_H
#define INFER_WIP_QUANT_B_PUBLIC_H
#include "base.h"

/* Q2_K: 2.625 bits/weight. 16 sub-blocks of 16, 4-bit scale + 4-bit min each. */
typedef struct {
    uint8_t scales[INFER_QK_K / 16];   /* low nibble: scale, high nibble: min */
    uint8_t qs[INFER_QK_K / 4];        /* 2-bit quants, 4 per byte */
    infer_half d, dmin;                /* super-scales of the scales and of the mins */
} infer_block_q2_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q2_k) == 84, "q2_K size");

/* Q3_K: 3.4375 bits/weight. 16 sub-blocks of 16, signed 6-bit scales, no min. */
typedef struct {
    uint8_t hmask[INFER_QK_K / 8];     /* third (high) bit of each quant */
    uint8_t qs[INFER_QK_K / 4];        /* low 2 bits, 4 per byte */
    uint8_t scales[12];                /* 16 six-bit scales, packed */
    infer_half d;
} infer_block_q3_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q3_k) == 110, "q3_K size");

/* Q4_K: 4.5 bits/weight. 8 sub-blocks of 32, 6-bit scale + 6-bit min each. */
typedef struct {
    infer_half d, dmin;
    uint8_t scales[12];                /* 8 scales + 8 mins, 6 bits each, packed */
    uint8_t qs[INFER_QK_K / 2];        /* 4-bit quants */
} infer_block_q4_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q4_k) == 144, "q4_K size");

/* Q5_K: 5.5 bits/weight. Q4_K plus one high bit per quant. */
typedef struct {
    infer_half d, dmin;
    uint8_t scales[12];
    uint8_t qh[INFER_QK_K / 8];        /* fifth bit of each quant */
    uint8_t qs[INFER_QK_K / 2];        /* low 4 bits */
} infer_block_q5_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q5_k) == 176, "q5_K size");

/* Q6_K: 6.5625 bits/weight. 16 sub-blocks of 16, signed 8-bit scales, no min. */
typedef struct {
    uint8_t ql[INFER_QK_K / 2];        /* low 4 bits */
    uint8_t qh[INFER_QK_K / 4];        /* high 2 bits */
    int8_t scales[INFER_QK_K / 16];
    infer_half d;
} infer_block_q6_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q6_k) == 210, "q6_K size");

/* IQ4_NL: 4.5 bits/weight, 32-element blocks, one fp16 scale, 4-bit indices into
 * the 16-entry non-linear table. */
#define INFER_QK4_NL 32
typedef struct {
    infer_half d;
    uint8_t qs[INFER_QK4_NL / 2];
} infer_block_iq4_nl;
INFER__STATIC_ASSERT(sizeof(infer_block_iq4_nl) == 18, "iq4_nl size");

/* IQ4_XS: 4.25 bits/weight. IQ4_NL indices in 256-element super-blocks with 8 signed
 * 6-bit sub-block scales (4 low bits in scales_l, 2 high bits in scales_h). */
typedef struct {
    infer_half d;
    uint16_t scales_h;                 /* 2 high bits of each of the 8 scales */
    uint8_t scales_l[INFER_QK_K / 64]; /* 4 low bits of each scale, two per byte */
    uint8_t qs[INFER_QK_K / 2];
} infer_block_iq4_xs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq4_xs) == 136, "iq4_xs size");

#endif
