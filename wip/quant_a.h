/* wip/quant_a.h -- dequantize / quantize / dot for the float types, the legacy
 * 32-blocks, the ternary types, the FP4 types, Q1_0, Q2_0 and BitNet's I2_S
 * (implementation part).
 *
 * >>quant_a
 * Every type gets three scalar reference functions:
 *   infer__dequant_<t>(src, dst, n)  blocks -> n floats. Bit-exact with ggml's
 *                                    dequantize_row_*: same operations in the same
 *                                    order, so code*scale products round identically.
 *   infer__quant_<t>(src, dst, n)    n floats -> blocks. Byte-exact with ggml's
 *                                    quantize_row_*_ref (closed formulas, no search).
 *   infer__dot_<t>(n, w, x)          sum_k w[k]*x[k], with x already quantized to the
 *                                    type's dot_type (see the traits table).
 * n is always a multiple of the block size; rows never share a block.
 *
 * Why quantized activations: a weight block scaled by d_w times an activation block
 * scaled by d_x is d_w*d_x * sum(q_w*q_x). The inner sum is exact integer arithmetic
 * (cheap, and SIMD-friendly later); floats appear once per block. The activation block
 * must cover the same index range as the weight block, so the activation format is
 * chosen by block length: 32-blocks pair with Q8_0 (Q8_1 when the weight has an
 * offset m), 256-blocks with Q8_K, and the 64/128-blocks (NVFP4, Q1_0, Q2_0) with
 * 2 or 4 consecutive Q8_0 blocks. The float types dot against plain f32.
 *
 * Offset codes (q - 8, t - 1, ...) are dotted as sum(q*y) - offset*sum(y): unsigned
 * code times signed activation, the form SIMD dot instructions want. It also sidesteps
 * a GCC 12.2 bug: with -march=native on AVX512-VNNI CPUs it vectorizes
 * sum(((u8 >> s) & 3) - 1) * i8) into vpdpbusd as if the left factor were unsigned.
 *
 * Exactness note: a code (at most 8 bits, or an FP4 value) times an f16 / E8M0 / UE4M3
 * scale needs at most 16 significant bits, so every code*scale product below is exact in
 * f32; only the `+ m` of Q4_1/Q5_1 rounds. Fused multiply-add contraction therefore
 * cannot change any dequantized value. */
#ifndef INFER_WIP_QUANT_A_H
#define INFER_WIP_QUANT_A_H
#include <float.h>
#include "quant_a_public.h"

/* ---- small format helpers ---- */

/* E2M1 values times 2, indexed by the 4-bit FP4 code (bit 3 = sign). The doubling
 * makes them integers; the block scales below are halved to compensate. */
static const int8_t infer__kvalues_fp4[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* E8M0 byte -> 2^(e-128), i.e. half the MX scale 2^(e-127). Built from bits:
 * e = 0, 1 give the subnormals 2^-128, 2^-127; otherwise biased exponent e-1. */
static inline float infer__e8m0_to_fp32_half(uint8_t e) {
    return infer__fp32_from_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* UE4M3 byte (unsigned: 4 exponent bits, bias 7, 3 mantissa bits) -> half its value.
 * 0x00 and 0x7F (NaN) read as 0; exponent 0 is subnormal: man * 2^-9. */
static inline float infer__ue4m3_to_fp32(uint8_t x) {
    if (x == 0 || x == 0x7F) return 0.0f;
    int e = (x >> 3) & 15, m = x & 7;
    float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return v * 0.5f;
}

/* f32 -> UE4M3, as ggml does it: clamp to 448, keep the top 3 mantissa bits and round
 * half up on the 4th (ties away, not to even); saturate at 0x7E (= 240). */
static inline uint8_t infer__fp32_to_ue4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    uint32_t b = infer__fp32_to_bits(x);
    int e = (int)((b >> 23) & 0xFF) - 127 + 7, m = (b >> 20) & 7;
    if (e <= 0) {                                   /* subnormal: round(x * 2^9), 1..7 */
        int s = (int)(x * 512.0f + 0.5f);
        return (uint8_t)(s < 1 ? 0 : s > 7 ? 7 : s);
    }
    m += (b >> 19) & 1;
    if (m > 7) { m = 0; e++; }
    if (e >= 15) return 0x7E;
    return (uint8_t)((e << 3) | m);
}

/* FP4 code whose value kvalues_fp4[i]*d is nearest to x (first one on ties). */
static inline uint8_t infer__fp4_best_index(float x, float d) {
    int best = 0;
    float best_err = fabsf((float)infer__kvalues_fp4[0] * d - x);
    for (int i = 1; i < 16; i++) {
        float err = fabsf((float)infer__kvalues_fp4[i] * d - x);
        if (err < best_err) { best = i; best_err = err; }
    }
    return (uint8_t)best;
}

/* Largest-magnitude element with its sign (first one on ties). */
static inline float infer__signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) if (amax < fabsf(x[j])) { amax = fabsf(x[j]); max = x[j]; }
    return max;
}

static inline void infer__min_max(const float *x, int n, float *mn, float *mx) {
    *mn = FLT_MAX; *mx = -FLT_MAX;
    for (int j = 0; j < n; j++) { if (x[j] < *mn) *mn = x[j]; if (x[j] > *mx) *mx = x[j]; }
}

/* ===================================================================================
 * F32, F16, BF16: one element per "block". Their dot takes f32 activations and
 * accumulates in double: this is the exact-maths reference path.
 * =================================================================================== */

static void infer__dequant_f32(const void *src, float *dst, int64_t n) { memcpy(dst, src, (size_t)n * 4); }
static void infer__quant_f32(const float *src, void *dst, int64_t n) { memcpy(dst, src, (size_t)n * 4); }
static float infer__dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return (float)s;
}

static void infer__dequant_f16(const void *src, float *dst, int64_t n) {
    const infer_half *h = (const infer_half *)src;
    for (int64_t i = 0; i < n; i++) dst[i] = infer__fp16_to_fp32(h[i]);
}
static void infer__quant_f16(const float *src, void *dst, int64_t n) {
    infer_half *h = (infer_half *)dst;
    for (int64_t i = 0; i < n; i++) h[i] = infer__fp32_to_fp16(src[i]);
}
static float infer__dot_f16(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)infer__fp16_to_fp32(a[i]) * b[i];
    return (float)s;
}

static void infer__dequant_bf16(const void *src, float *dst, int64_t n) {
    const infer_bf16 *h = (const infer_bf16 *)src;
    for (int64_t i = 0; i < n; i++) dst[i] = infer__bf16_to_fp32(h[i]);
}
static void infer__quant_bf16(const float *src, void *dst, int64_t n) {
    infer_bf16 *h = (infer_bf16 *)dst;
    for (int64_t i = 0; i < n; i++) h[i] = infer__fp32_to_bf16(src[i]);
}
static float infer__dot_bf16(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)infer__bf16_to_fp32(a[i]) * b[i];
    return (float)s;
}

/* ===================================================================================
 * Q4_0 (18 bytes, 32 weights), symmetric 4-bit.
 *
 *   byte  0    1    2    3    4          17
 *       +----+----+----+----+--  ...  --+----+
 *       |  d (f16) | qs[0]| qs[1]  ...  |qs[15]|
 *       +----+----+----+----+--  ...  --+----+
 *   qs[j] = (q[j+16] << 4) | q[j]      (low nibbles: elements 0..15, high: 16..31)
 *
 *   x[j] = (q[j] - 8) * d
 * Quantizer: m = the signed largest-magnitude value, d = m / -8, so m maps to code 0
 * (-8) exactly; q = min(15, trunc(x/d + 8.5)).
 * Dot: vs Q8_0, d_w*d_x * sum((q-8)*q8).
 * =================================================================================== */

static void infer__dequant_q4_0(const void *src, float *dst, int64_t n) {
    const infer_block_q4_0 *b = (const infer_block_q4_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK4_0; i++, dst += INFER_QK4_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)((b[i].qs[j] & 15) - 8) * d;
            dst[j + 16] = (float)((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

static void infer__quant_q4_0(const float *src, void *dst, int64_t n) {
    infer_block_q4_0 *b = (infer_block_q4_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK4_0; i++, src += INFER_QK4_0) {
        const float d = infer__signed_absmax(src, INFER_QK4_0) / -8, id = d ? 1.0f / d : 0.0f;
        b[i].d = infer__fp32_to_fp16(d);
        for (int j = 0; j < 16; j++) {
            int q0 = (int8_t)(src[j] * id + 8.5f), q1 = (int8_t)(src[j + 16] * id + 8.5f);
            b[i].qs[j] = (uint8_t)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
        }
    }
}

static float infer__dot_q4_0(int64_t n, const void *w, const void *x) {
    const infer_block_q4_0 *a = (const infer_block_q4_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK4_0; i++) {
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += (a[i].qs[j] & 15) * y[i].qs[j] + (a[i].qs[j] >> 4) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        sumi -= 8 * sumy;                               /* sum((q-8)*y) = sum(q*y) - 8*sum(y) */
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * Q4_1 (20 bytes, 32 weights), 4-bit with offset.
 *
 *   byte  0    1    2    3    4          19
 *       +---------+---------+-- ... --+------+
 *       | d (f16) | m (f16) | qs[0..15]       |   nibbles as in Q4_0
 *       +---------+---------+-- ... --+------+
 *
 *   x[j] = q[j] * d + m
 * Quantizer: m = min, d = (max - min) / 15, q = min(15, trunc((x - m)/d + 0.5)).
 * Dot: vs Q8_1. sum(w*x) = d_w*d_x*sum(q*q8) + m*d_x*sum(q8). Q8_1 carries
 * s = fp16(d_x*sum(q8)) for SIMD code; this reference recomputes sum(q8) from the
 * integers instead, which avoids the 2^-11 relative error of the fp16 s.
 * =================================================================================== */

static void infer__dequant_q4_1(const void *src, float *dst, int64_t n) {
    const infer_block_q4_1 *b = (const infer_block_q4_1 *)src;
    for (int64_t i = 0; i < n / INFER_QK4_1; i++, dst += INFER_QK4_1) {
        const float d = infer__fp16_to_fp32(b[i].d), m = infer__fp16_to_fp32(b[i].m);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)(b[i].qs[j] & 15) * d + m;
            dst[j + 16] = (float)(b[i].qs[j] >> 4) * d + m;
        }
    }
}

static void infer__quant_q4_1(const float *src, void *dst, int64_t n) {
    infer_block_q4_1 *b = (infer_block_q4_1 *)dst;
    for (int64_t i = 0; i < n / INFER_QK4_1; i++, src += INFER_QK4_1) {
        float mn, mx;
        infer__min_max(src, INFER_QK4_1, &mn, &mx);
        const float d = (mx - mn) / 15, id = d ? 1.0f / d : 0.0f;
        b[i].d = infer__fp32_to_fp16(d);
        b[i].m = infer__fp32_to_fp16(mn);
        for (int j = 0; j < 16; j++) {
            int q0 = (int8_t)((src[j] - mn) * id + 0.5f), q1 = (int8_t)((src[j + 16] - mn) * id + 0.5f);
            b[i].qs[j] = (uint8_t)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
        }
    }
}

static float infer__dot_q4_1(int64_t n, const void *w, const void *x) {
    const infer_block_q4_1 *a = (const infer_block_q4_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK4_1; i++) {
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += (a[i].qs[j] & 15) * y[i].qs[j] + (a[i].qs[j] >> 4) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        const float dy = infer__fp16_to_fp32(y[i].d);
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * dy) + (float)sumy * (infer__fp16_to_fp32(a[i].m) * dy);
    }
    return s;
}

/* ===================================================================================
 * Q5_0 (22 bytes, 32 weights), symmetric 5-bit.
 *
 *   byte  0    1    2 .. 5     6 ......... 21
 *       +---------+----------+---------------+
 *       | d (f16) | qh (u32) |   qs[0..15]   |
 *       +---------+----------+---------------+
 *   low 4 bits: nibbles of qs as in Q4_0; bit 4 of element k: bit k of qh (LE u32)
 *
 *   x[j] = (q[j] - 16) * d,  q = (nibble | qh_bit << 4)
 * Quantizer: d = signed max / -16, q = min(31, trunc(x/d + 16.5)).
 * Dot: vs Q8_0.
 * =================================================================================== */

/* 5-bit code of elements j and j+16 of a Q5 block (qh bit k = high bit of element k). */
static inline int infer__q5_lo(const uint8_t *qs, uint32_t qh, int j) { return (qs[j] & 15) | (int)((qh >> j) << 4 & 16); }
static inline int infer__q5_hi(const uint8_t *qs, uint32_t qh, int j) { return (qs[j] >> 4) | (int)((qh >> (j + 12)) & 16); }

static void infer__dequant_q5_0(const void *src, float *dst, int64_t n) {
    const infer_block_q5_0 *b = (const infer_block_q5_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK5_0; i++, dst += INFER_QK5_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)(infer__q5_lo(b[i].qs, qh, j) - 16) * d;
            dst[j + 16] = (float)(infer__q5_hi(b[i].qs, qh, j) - 16) * d;
        }
    }
}

static void infer__quant_q5_0(const float *src, void *dst, int64_t n) {
    infer_block_q5_0 *b = (infer_block_q5_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK5_0; i++, src += INFER_QK5_0) {
        const float d = infer__signed_absmax(src, INFER_QK5_0) / -16, id = d ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        b[i].d = infer__fp32_to_fp16(d);
        for (int j = 0; j < 16; j++) {
            int q0 = (int8_t)(src[j] * id + 16.5f), q1 = (int8_t)(src[j + 16] * id + 16.5f);
            q0 = q0 < 31 ? q0 : 31; q1 = q1 < 31 ? q1 : 31;
            b[i].qs[j] = (uint8_t)((q0 & 15) | (q1 & 15) << 4);
            qh |= (uint32_t)(q0 >> 4) << j | (uint32_t)(q1 >> 4) << (j + 16);
        }
        memcpy(b[i].qh, &qh, 4);
    }
}

static float infer__dot_q5_0(int64_t n, const void *w, const void *x) {
    const infer_block_q5_0 *a = (const infer_block_q5_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK5_0; i++) {
        uint32_t qh; memcpy(&qh, a[i].qh, 4);
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += infer__q5_lo(a[i].qs, qh, j) * y[i].qs[j] + infer__q5_hi(a[i].qs, qh, j) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        sumi -= 16 * sumy;
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * Q5_1 (24 bytes, 32 weights), 5-bit with offset.
 *
 *   byte  0    1    2    3    4 .. 7     8 ......... 23
 *       +---------+---------+----------+---------------+
 *       | d (f16) | m (f16) | qh (u32) |   qs[0..15]   |   bits as in Q5_0
 *       +---------+---------+----------+---------------+
 *
 *   x[j] = q[j] * d + m
 * Quantizer: m = min, d = (max - min)/31, q = trunc((x - m)/d + 0.5) (no clamp).
 * Dot: vs Q8_1, as Q4_1.
 * =================================================================================== */

static void infer__dequant_q5_1(const void *src, float *dst, int64_t n) {
    const infer_block_q5_1 *b = (const infer_block_q5_1 *)src;
    for (int64_t i = 0; i < n / INFER_QK5_1; i++, dst += INFER_QK5_1) {
        const float d = infer__fp16_to_fp32(b[i].d), m = infer__fp16_to_fp32(b[i].m);
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)infer__q5_lo(b[i].qs, qh, j) * d + m;
            dst[j + 16] = (float)infer__q5_hi(b[i].qs, qh, j) * d + m;
        }
    }
}

static void infer__quant_q5_1(const float *src, void *dst, int64_t n) {
    infer_block_q5_1 *b = (infer_block_q5_1 *)dst;
    for (int64_t i = 0; i < n / INFER_QK5_1; i++, src += INFER_QK5_1) {
        float mn, mx;
        infer__min_max(src, INFER_QK5_1, &mn, &mx);
        const float d = (mx - mn) / 31, id = d ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        b[i].d = infer__fp32_to_fp16(d);
        b[i].m = infer__fp32_to_fp16(mn);
        for (int j = 0; j < 16; j++) {
            int q0 = (uint8_t)((src[j] - mn) * id + 0.5f), q1 = (uint8_t)((src[j + 16] - mn) * id + 0.5f);
            b[i].qs[j] = (uint8_t)((q0 & 15) | (q1 & 15) << 4);
            qh |= (uint32_t)((q0 >> 4) & 1) << j | (uint32_t)((q1 >> 4) & 1) << (j + 16);
        }
        memcpy(b[i].qh, &qh, 4);
    }
}

static float infer__dot_q5_1(int64_t n, const void *w, const void *x) {
    const infer_block_q5_1 *a = (const infer_block_q5_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK5_1; i++) {
        uint32_t qh; memcpy(&qh, a[i].qh, 4);
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += infer__q5_lo(a[i].qs, qh, j) * y[i].qs[j] + infer__q5_hi(a[i].qs, qh, j) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        const float dy = infer__fp16_to_fp32(y[i].d);
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * dy) + (float)sumy * (infer__fp16_to_fp32(a[i].m) * dy);
    }
    return s;
}

/* ===================================================================================
 * Q8_0 (34 bytes, 32 weights), symmetric 8-bit. Also the main activation format.
 *
 *   byte  0    1    2 ............ 33
 *       +---------+------------------+
 *       | d (f16) | qs[0..31] (i8)   |
 *       +---------+------------------+
 *
 *   x[j] = qs[j] * d
 * Quantizer: d = max|x| / 127, q = roundf(x/d)  (infer__quant_q8_0, with the base types).
 * Dot: vs Q8_0.
 * =================================================================================== */

static void infer__dequant_q8_0(const void *src, float *dst, int64_t n) {
    const infer_block_q8_0 *b = (const infer_block_q8_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK8_0; i++, dst += INFER_QK8_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK8_0; j++) dst[j] = (float)b[i].qs[j] * d;
    }
}

static float infer__dot_q8_0(int64_t n, const void *w, const void *x) {
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)w, *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK8_0; i++) {
        int sumi = 0;
        for (int j = 0; j < INFER_QK8_0; j++) sumi += a[i].qs[j] * y[i].qs[j];
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * TQ1_0 (54 bytes, 256 ternary weights), 1.6875 bits/weight.
 *
 *   byte  0 ............ 31  32 ....... 47  48 .. 51  52   53
 *       +-----------------+--------------+---------+---------+
 *       | qs[0..31]       | qs[32..47]   | qh[0..3]| d (f16) |
 *       | 5 trits / byte  | 5 trits/byte | 4 trits |         |
 *       +-----------------+--------------+---------+---------+
 *   element order:  qs[m],    m < 32, digit k: element 32k + m        (  0..159)
 *                   qs[32+m], m < 16, digit k: element 160 + 16k + m  (160..239)
 *                   qh[m],    m < 4,  digit k: element 240 + 4k + m   (240..255)
 *
 * A byte holds its digits as a base-3 fraction: for trits t0..t4 (t0 most significant),
 * v = sum t_i 3^(4-i) in 0..242 is stored as ceil(v * 256 / 243). Digit k comes out
 * by multiplying by 3^k mod 256 (drops the leading digits) and taking the top "trit"
 * of the 8-bit fraction: t = (u8(byte * 3^k) * 3) >> 8. qh bytes use 4 digits and a
 * trailing zero trit (v * 3) so that the same extraction works.
 *   x = (t - 1) * d,  t in {0, 1, 2}
 * Quantizer: d = max|x|, t = lroundf(x/d) + 1.
 * Dot: vs Q8_K (both 256-blocks); the -1 offset comes from Q8_K's partial sums bsums.
 * =================================================================================== */

static const uint8_t infer__pow3[6] = { 1, 3, 9, 27, 81, 243 };

static inline int infer__trit(uint8_t byte, int k) {
    uint8_t q = (uint8_t)(byte * infer__pow3[k]);
    return ((uint16_t)q * 3) >> 8;
}

/* Unpacks the 256 trits (0..2) of one TQ1_0 block, in element order. */
static void infer__tq1_0_trits(const infer_block_tq1_0 *b, int8_t t[INFER_QK_K]) {
    for (int k = 0; k < 5; k++) for (int m = 0; m < 32; m++) t[32 * k + m] = (int8_t)infer__trit(b->qs[m], k);
    for (int k = 0; k < 5; k++) for (int m = 0; m < 16; m++) t[160 + 16 * k + m] = (int8_t)infer__trit(b->qs[32 + m], k);
    for (int k = 0; k < 4; k++) for (int m = 0; m < 4; m++) t[240 + 4 * k + m] = (int8_t)infer__trit(b->qh[m], k);
}

static void infer__dequant_tq1_0(const void *src, float *dst, int64_t n) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)src;
    int8_t t[INFER_QK_K];
    for (int64_t i = 0; i < n / INFER_QK_K; i++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b[i].d);
        infer__tq1_0_trits(&b[i], t);
        for (int j = 0; j < INFER_QK_K; j++) dst[j] = (float)(t[j] - 1) * d;
    }
}

/* Packs `cnt` trits x[0], x[stride], ... (most significant first) into one byte;
 * 4-trit qh bytes get a trailing zero trit so that they decode like 5-trit bytes. */
static uint8_t infer__pack_trits(const float *x, int stride, int cnt, float id) {
    int v = 0;
    for (int k = 0; k < cnt; k++) v = v * 3 + (int)lroundf(x[k * stride] * id) + 1;
    if (cnt == 4) v *= 3;
    return (uint8_t)((v * 256 + 242) / 243);             /* ceil(v * 256 / 243) */
}

static void infer__quant_tq1_0(const float *src, void *dst, int64_t n) {
    infer_block_tq1_0 *b = (infer_block_tq1_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, src += INFER_QK_K) {
        const float d = fabsf(infer__signed_absmax(src, INFER_QK_K)), id = d ? 1.0f / d : 0.0f;
        for (int m = 0; m < 32; m++) b[i].qs[m] = infer__pack_trits(src + m, 32, 5, id);
        for (int m = 0; m < 16; m++) b[i].qs[32 + m] = infer__pack_trits(src + 160 + m, 16, 5, id);
        for (int m = 0; m < 4; m++) b[i].qh[m] = infer__pack_trits(src + 240 + m, 4, 4, id);
        b[i].d = infer__fp32_to_fp16(d);
    }
}

static float infer__dot_tq1_0(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *a = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    int8_t t[INFER_QK_K];
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        int sumi = 0;
        infer__tq1_0_trits(&a[i], t);
        for (int j = 0; j < INFER_QK_K; j++) sumi += t[j] * y[i].qs[j];
        for (int g = 0; g < INFER_QK_K / 16; g++) sumi -= y[i].bsums[g];   /* the -1 of (t-1) */
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * y[i].d);
    }
    return s;
}

/* ===================================================================================
 * TQ2_0 (66 bytes, 256 ternary weights), 2-bit codes.
 *
 *   byte  0 ................... 63  64   65
 *       +------------------------+---------+
 *       | qs[0..63], 4 codes each| d (f16) |
 *       +------------------------+---------+
 *   two halves of 128 elements (h = 0, 1) use qs[32h .. 32h+31];
 *   bits 2k+1..2k of qs[32h + m] hold element 128h + 32k + m
 *
 *   x = (c - 1) * d,  c in {0, 1, 2} (3 would read as +2 but is never written)
 * Quantizer: d = max|x|, c = lroundf(x/d) + 1.
 * Dot: vs Q8_K, as TQ1_0.
 * =================================================================================== */

static inline int infer__tq2_0_code(const infer_block_tq2_0 *b, int j) {
    return (b->qs[32 * (j / 128) + j % 32] >> (2 * (j % 128 / 32))) & 3;
}

static void infer__dequant_tq2_0(const void *src, float *dst, int64_t n) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK_K; j++) dst[j] = (float)(infer__tq2_0_code(&b[i], j) - 1) * d;
    }
}

static void infer__quant_tq2_0(const float *src, void *dst, int64_t n) {
    infer_block_tq2_0 *b = (infer_block_tq2_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, src += INFER_QK_K) {
        const float d = fabsf(infer__signed_absmax(src, INFER_QK_K)), id = d ? 1.0f / d : 0.0f;
        memset(b[i].qs, 0, sizeof b[i].qs);
        for (int j = 0; j < INFER_QK_K; j++) {
            int c = (int)lroundf(src[j] * id) + 1;
            b[i].qs[32 * (j / 128) + j % 32] |= (uint8_t)((c & 3) << (2 * (j % 128 / 32)));
        }
        b[i].d = infer__fp32_to_fp16(d);
    }
}

static float infer__dot_tq2_0(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *a = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        int sumi = 0;
        for (int j = 0; j < INFER_QK_K; j++) sumi += infer__tq2_0_code(&a[i], j) * y[i].qs[j];
        for (int g = 0; g < INFER_QK_K / 16; g++) sumi -= y[i].bsums[g];
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * y[i].d);
    }
    return s;
}

/* ===================================================================================
 * MXFP4 (17 bytes, 32 weights), OCP microscaling FP4.
 *
 *   byte  0     1 ............. 16
 *       +-----+------------------+
 *       |  e  | qs[0..15]        |   nibbles as in Q4_0 (low: 0..15, high: 16..31)
 *       +-----+------------------+
 *   e: E8M0 shared exponent (scale 2^(e-127)); code: E2M1 (sign, 2 exp, 1 mantissa bit)
 *
 *   x = E2M1(code) * 2^(e-127) = kvalues_fp4[code] * 2^(e-128)
 * Quantizer: e = floor(log2(max|x|)) - 2 + 127 (so that max|x| lands in E2M1's top
 * binade [4, 8)), code = nearest value (first on ties).
 * Dot: vs Q8_0, sum(kvalues_fp4[code]*q8) * 2^(e-128) * d_x.
 * =================================================================================== */

static void infer__dequant_mxfp4(const void *src, float *dst, int64_t n) {
    const infer_block_mxfp4 *b = (const infer_block_mxfp4 *)src;
    for (int64_t i = 0; i < n / INFER_QK_MXFP4; i++, dst += INFER_QK_MXFP4) {
        const float d = infer__e8m0_to_fp32_half(b[i].e);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)infer__kvalues_fp4[b[i].qs[j] & 15] * d;
            dst[j + 16] = (float)infer__kvalues_fp4[b[i].qs[j] >> 4] * d;
        }
    }
}

static void infer__quant_mxfp4(const float *src, void *dst, int64_t n) {
    infer_block_mxfp4 *b = (infer_block_mxfp4 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_MXFP4; i++, src += INFER_QK_MXFP4) {
        const float amax = fabsf(infer__signed_absmax(src, INFER_QK_MXFP4));
        /* clamped to 0..254: the reference leaves exponents outside that undefined */
        int e = amax > 0.0f ? (int)(floorf(log2f(amax)) - 2 + 127) : 0;
        b[i].e = (uint8_t)(e < 0 ? 0 : e > 254 ? 254 : e);
        const float d = infer__e8m0_to_fp32_half(b[i].e);
        for (int j = 0; j < 16; j++)
            b[i].qs[j] = (uint8_t)(infer__fp4_best_index(src[j], d) | infer__fp4_best_index(src[j + 16], d) << 4);
    }
}

static float infer__dot_mxfp4(int64_t n, const void *w, const void *x) {
    const infer_block_mxfp4 *a = (const infer_block_mxfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_MXFP4; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++)
            sumi += infer__kvalues_fp4[a[i].qs[j] & 15] * y[i].qs[j] + infer__kvalues_fp4[a[i].qs[j] >> 4] * y[i].qs[j + 16];
        s += (float)sumi * (infer__e8m0_to_fp32_half(a[i].e) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * NVFP4 (36 bytes, 64 weights), NVIDIA FP4: E2M1 codes, one UE4M3 scale per 16.
 *
 *   byte  0  1  2  3   4 ....... 11  12 ...... 19  20 ...... 27  28 ...... 35
 *       +--+--+--+--+------------+-------------+-------------+-------------+
 *       |d0|d1|d2|d3| qs sub 0   | qs sub 1    | qs sub 2    | qs sub 3    |
 *       +--+--+--+--+------------+-------------+-------------+-------------+
 *   sub-block s (elements 16s..16s+15): qs[8s + j] = (code[16s+j+8] << 4) | code[16s+j]
 *
 *   x = kvalues_fp4[code] * ue4m3_to_fp32(d_s)   (both halved/doubled, see helpers)
 * No per-tensor global scale lives in the blocks (files carry it as a separate tensor).
 * Quantizer: d_s = UE4M3(max|x_sub| / 6), code = nearest value (first on ties).
 * Dot: vs Q8_0, two Q8_0 blocks per NVFP4 block; sub-blocks 2b, 2b+1 share Q8_0 block b.
 * =================================================================================== */

static void infer__dequant_nvfp4(const void *src, float *dst, int64_t n) {
    const infer_block_nvfp4 *b = (const infer_block_nvfp4 *)src;
    for (int64_t i = 0; i < n / INFER_QK_NVFP4; i++) {
        for (int s = 0; s < 4; s++, dst += INFER_QK_NVFP4_SUB) {
            const float d = infer__ue4m3_to_fp32(b[i].d[s]);
            const uint8_t *q = b[i].qs + 8 * s;
            for (int j = 0; j < 8; j++) {
                dst[j] = (float)infer__kvalues_fp4[q[j] & 15] * d;
                dst[j + 8] = (float)infer__kvalues_fp4[q[j] >> 4] * d;
            }
        }
    }
}

static void infer__quant_nvfp4(const float *src, void *dst, int64_t n) {
    infer_block_nvfp4 *b = (infer_block_nvfp4 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_NVFP4; i++) {
        for (int s = 0; s < 4; s++, src += INFER_QK_NVFP4_SUB) {
            const float amax = fabsf(infer__signed_absmax(src, INFER_QK_NVFP4_SUB));
            b[i].d[s] = infer__fp32_to_ue4m3(amax / 6.0f);
            const float d = infer__ue4m3_to_fp32(b[i].d[s]);
            for (int j = 0; j < 8; j++)
                b[i].qs[8 * s + j] = (uint8_t)(infer__fp4_best_index(src[j], d) | infer__fp4_best_index(src[j + 8], d) << 4);
        }
    }
}

static float infer__dot_nvfp4(int64_t n, const void *w, const void *x) {
    const infer_block_nvfp4 *a = (const infer_block_nvfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_NVFP4; i++) {
        for (int sb = 0; sb < 4; sb++) {
            const infer_block_q8_0 *yb = &y[2 * i + sb / 2];
            const int8_t *yq = yb->qs + 16 * (sb % 2);
            const uint8_t *q = a[i].qs + 8 * sb;
            int sumi = 0;
            for (int j = 0; j < 8; j++)
                sumi += infer__kvalues_fp4[q[j] & 15] * yq[j] + infer__kvalues_fp4[q[j] >> 4] * yq[j + 8];
            s += (float)sumi * (infer__ue4m3_to_fp32(a[i].d[sb]) * infer__fp16_to_fp32(yb->d));
        }
    }
    return s;
}

/* ===================================================================================
 * Q1_0 (18 bytes, 128 weights), 1 bit per weight: sign times a shared magnitude.
 *
 *   byte  0    1    2 ............ 17
 *       +---------+------------------+
 *       | d (f16) | qs[0..15]        |   bit j%8 of qs[j/8] = element j (LSB first)
 *       +---------+------------------+
 *
 *   x[j] = bit ? +d : -d
 * Quantizer: d = mean|x| (the L2-best magnitude for fixed signs), bit = (x >= 0).
 * Dot: vs four Q8_0 blocks: per 32-group, d_x * (sum over set bits - sum over clear
 * bits of q8) = d_x * (2*sum_set - sum_all), then times d.
 * =================================================================================== */

static void infer__dequant_q1_0(const void *src, float *dst, int64_t n) {
    const infer_block_q1_0 *b = (const infer_block_q1_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK1_0; i++, dst += INFER_QK1_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK1_0; j++) dst[j] = (b[i].qs[j / 8] >> (j % 8) & 1) ? d : -d;
    }
}

static void infer__quant_q1_0(const float *src, void *dst, int64_t n) {
    infer_block_q1_0 *b = (infer_block_q1_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK1_0; i++, src += INFER_QK1_0) {
        float sum = 0.0f;
        for (int j = 0; j < INFER_QK1_0; j++) sum += fabsf(src[j]);
        b[i].d = infer__fp32_to_fp16(sum / INFER_QK1_0);
        memset(b[i].qs, 0, sizeof b[i].qs);
        for (int j = 0; j < INFER_QK1_0; j++) if (src[j] >= 0.0f) b[i].qs[j / 8] |= (uint8_t)(1 << (j % 8));
    }
}

static float infer__dot_q1_0(int64_t n, const void *w, const void *x) {
    const infer_block_q1_0 *a = (const infer_block_q1_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK1_0; i++) {
        const float d = infer__fp16_to_fp32(a[i].d);
        for (int g = 0; g < 4; g++) {
            const infer_block_q8_0 *yb = &y[4 * i + g];
            int sumi = 0;
            for (int j = 0; j < 32; j++) sumi += (a[i].qs[4 * g + j / 8] >> (j % 8) & 1) ? yb->qs[j] : -yb->qs[j];
            s += (float)sumi * (d * infer__fp16_to_fp32(yb->d));
        }
    }
    return s;
}

/* ===================================================================================
 * Q2_0 (18 bytes, 64 weights), ternary 2-bit codes with a 64-element scale.
 *
 *   byte  0    1    2 ............ 17
 *       +---------+------------------+
 *       | d (f16) | qs[0..15]        |   bits 2(j%4)+1..2(j%4) of qs[j/4] = element j
 *       +---------+------------------+
 *
 *   x[j] = (c - 1) * d,  c in {0, 1, 2} (3 would read as +2)
 * Quantizer: d = max|x|, c = lroundf(x/d) + 1  (like TQ2_0, finer scale granularity).
 * Dot: vs two Q8_0 blocks.
 * =================================================================================== */

static void infer__dequant_q2_0(const void *src, float *dst, int64_t n) {
    const infer_block_q2_0 *b = (const infer_block_q2_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK2_0; i++, dst += INFER_QK2_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK2_0; j++) dst[j] = (float)(((b[i].qs[j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    }
}

static void infer__quant_q2_0(const float *src, void *dst, int64_t n) {
    infer_block_q2_0 *b = (infer_block_q2_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK2_0; i++, src += INFER_QK2_0) {
        const float d = fabsf(infer__signed_absmax(src, INFER_QK2_0)), id = d ? 1.0f / d : 0.0f;
        b[i].d = infer__fp32_to_fp16(d);
        memset(b[i].qs, 0, sizeof b[i].qs);
        for (int j = 0; j < INFER_QK2_0; j++) {
            int c = (int)lroundf(src[j] * id) + 1;
            b[i].qs[j / 4] |= (uint8_t)((c & 3) << (2 * (j % 4)));
        }
    }
}

static float infer__dot_q2_0(int64_t n, const void *w, const void *x) {
    const infer_block_q2_0 *a = (const infer_block_q2_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK2_0; i++) {
        const float d = infer__fp16_to_fp32(a[i].d);
        for (int g = 0; g < 2; g++) {
            const infer_block_q8_0 *yb = &y[2 * i + g];
            const uint8_t *q = a[i].qs + 8 * g;
            int sumi = 0, sumy = 0;
            for (int j = 0; j < 32; j++) { sumi += ((q[j / 4] >> (2 * (j % 4))) & 3) * yb->qs[j]; sumy += yb->qs[j]; }
            sumi -= sumy;
            s += (float)sumi * (d * infer__fp16_to_fp32(yb->d));
        }
    }
    return s;
}

/* ===================================================================================
 * I2_S (BitNet b1.58 fork, file type id 36): ternary weights, one f32 scale per TENSOR.
 * Not in the traits table (its scale is tensor-level, not per block); the loader and
 * the matmul call these directly.
 *
 *   tensor of n weights (n % 128 == 0), nbytes = n/4 + 32:
 *     [ chunk 0: 32 bytes ][ chunk 1 ] ... [ chunk n/128-1 ][ scale f32 ][ 28 x 0 ]
 *   inside a 128-element chunk, element k -> byte k % 32, bits (7-2g)..(6-2g), g = k/32:
 *     byte r:  | e[r] | e[32+r] | e[64+r] | e[96+r] |     (2 bits each, MSB first)
 *   code 0 -> -1, 1 -> 0, 2 -> +1 (3 unused)
 *
 *   w = (code - 1) * scale
 * This is the x86 layout that published GGUFs use; the fork's ARM build writes 64-element
 * groups instead, and such files are not supported.
 *
 * Quantizer choice. The fork's quantizer assumes the input is already ternary {-s, 0, s}:
 * scale = max|w|, code from the sign (|w| < 1e-6 -> 0). That is right for exported
 * ternary weights but maps any other value to +-max. We use the BitNet b1.58 recipe
 * for the codes, t = clamp(round(w / gamma), -1, 1) with gamma = max(mean|w|, 1e-5)
 * (round half to even, as torch.round), and then the L2-optimal scale for those codes,
 * mean |w| over the nonzero codes. For ternary input both give the same codes and
 * scale = s exactly (the mean of equal magnitudes is summed in double, which is exact
 * here), so the round trip is exact; for full-precision input it is the b1.58 absmean
 * quantization.
 * =================================================================================== */

static size_t infer__i2_s_nbytes(int64_t n) { return (size_t)(n / 4 + 32); }

static inline int infer__i2_s_code(const uint8_t *p, int64_t k) {
    return (p[k / 128 * 32 + k % 32] >> (6 - 2 * (k % 128 / 32))) & 3;
}

static float infer__i2_s_scale(const void *packed, int64_t n) {
    float s; memcpy(&s, (const uint8_t *)packed + n / 4, 4); return s;
}

static void infer__dequant_i2_s(const void *packed, float scale, float *dst, int64_t n) {
    const uint8_t *p = (const uint8_t *)packed;
    for (int64_t k = 0; k < n; k++) dst[k] = (float)(infer__i2_s_code(p, k) - 1) * scale;
}

static void infer__quant_i2_s(const float *src, void *dst, int64_t n) {
    uint8_t *p = (uint8_t *)dst;
    double asum = 0, nzsum = 0;
    int64_t nz = 0;
    for (int64_t k = 0; k < n; k++) asum += fabsf(src[k]);
    const float gamma = n > 0 && asum / (double)n > 1e-5 ? (float)(asum / (double)n) : 1e-5f;
    memset(p, 0, infer__i2_s_nbytes(n));
    for (int64_t k = 0; k < n; k++) {
        float r = src[k] / gamma;                        /* ties to even, like torch.round */
        int t = r >= 1.5f ? 1 : r <= -1.5f ? -1 : infer__nearest_int(r);
        if (t) { nzsum += fabsf(src[k]); nz++; }
        p[k / 128 * 32 + k % 32] |= (uint8_t)((t + 1) << (6 - 2 * (k % 128 / 32)));
    }
    const float scale = nz ? (float)(nzsum / (double)nz) : 0.0f;
    memcpy(p + n / 4, &scale, 4);
}

/* Unscaled dot against Q8_0 activations: returns sum_k (code_k - 1) * x_k, where x_k
 * is the dequantized activation; the caller multiplies by the tensor scale. A Q8_0
 * block b covers chunk b/4 at bit group g = b%4, i.e. one 2-bit field of 32 bytes. */
static float infer__dot_i2_s(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t b = 0; b < n / INFER_QK8_0; b++) {
        const uint8_t *c = p + b / 4 * 32;
        const int shift = 6 - 2 * (int)(b % 4);
        int sumi = 0, sumy = 0;
        for (int r = 0; r < 32; r++) { sumi += ((c[r] >> shift) & 3) * y[b].qs[r]; sumy += y[b].qs[r]; }
        sumi -= sumy;
        s += (float)sumi * infer__fp16_to_fp32(y[b].d);
    }
    return s;
}

#endif
