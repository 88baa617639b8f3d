/* wip/quant_b.h -- k-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K) and IQ4_NL / IQ4_XS:
 * dequantizers, quantizers and dot products against quantized activations.
 *
 * Layout accessors. Every format below stores its quants in a fixed permutation of
 * the element order; one small inline accessor per layout (infer__q2_crumb, ...) says
 * where element e lives, and dequant, quant and dot all go through it, so the layout is
 * written down exactly once. All formats are bit-compatible with ggml / GGUF.
 *
 * Quantizers. The k-quant and IQ4_XS quantizers search for scales (weighted least-squares
 * fits over a few candidate grids). They follow ggml's reference (no importance matrix)
 * search step for step, including float evaluation order, so that they reproduce its
 * bytes (IQ4_NL included: its GGUF quantizer is the same search, not the closed-form
 * quantize_row_iq4_nl_ref).
 *
 * Dot products. The activation row is quantized once per matmul (base.h: Q8_K for the
 * 256-element k-quants and IQ4_XS, Q8_0 for the 32-element IQ4_NL), so the inner loops
 * multiply small integers: per sub-block sum_i q_w[i]*q_x[i] is exact in int32, then the
 * float scales are applied once per sub-block / super-block. Matching the activation
 * block to the weight block is what makes that possible: one Q8_K block covers exactly
 * one super-block, so a single float scale d_x multiplies the whole integer sum, and its
 * 16-element partial sums (bsums) give sum(q_x) over each sub-block for free, which is
 * all the "- dmin*m" term needs:  sum_i (d*sc*q_i - dmin*m) x_i
 *                               = d_x * (d * sc * sum_i q_i qx_i  -  dmin * m * sum_i qx_i). */
#ifndef INFER_WIP_QUANT_B_H
#define INFER_WIP_QUANT_B_H
#include "quant_b_public.h"

#define INFER__GROUP_MAX_EPS 1e-15f   /* below this a group counts as all zero */

static inline int infer__clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ---------------------------------------------------------------------------------
 * Layout accessors (element e = 0..255 of a super-block)
 * --------------------------------------------------------------------------------- */

/* 2-bit "crumbs" of Q2_K/Q3_K: each 128-element half uses 32 bytes; byte l holds
 * elements l, l+32, l+64, l+96 of that half in bits 0-1, 2-3, 4-5, 6-7. */
static inline int infer__q2_crumb(const uint8_t *qs, int e) {
    return (qs[32 * (e >> 7) + (e & 31)] >> (2 * ((e >> 5) & 3))) & 3;
}
/* One extra bit per element (Q3_K hmask, Q5_K qh): bit e/32 of byte e%32. */
static inline int infer__hibit(const uint8_t *h, int e) { return (h[e & 31] >> (e >> 5)) & 1; }
/* 4-bit nibbles of Q4_K/Q5_K: each 64-element group uses 32 bytes; byte l holds
 * element l in the low nibble and element l+32 in the high nibble. */
static inline int infer__q4k_nibble(const uint8_t *qs, int e) {
    return (qs[32 * (e >> 6) + (e & 31)] >> (4 * ((e >> 5) & 1))) & 15;
}
/* Q6_K: per 128-element half, ql has 64 bytes and qh 32. Element r = 32k + l of the half
 * (k = 0..3): low 4 bits in ql[l + 32*(k&1)], nibble k>>1; high 2 bits in qh[l], bits 2k. */
static inline int infer__q6k_code(const uint8_t *ql, const uint8_t *qh, int e) {
    const int h = e >> 7, k = (e >> 5) & 3, l = e & 31;
    const int lo = (ql[64 * h + 32 * (k & 1) + l] >> (4 * (k >> 1))) & 15;
    const int hi = (qh[32 * h + l] >> (2 * k)) & 3;
    return lo | hi << 4;                               /* 0..63, value = code - 32 */
}
/* IQ4 nibbles: per 32-element block 16 bytes; byte j holds element j (low nibble) and
 * element j+16 (high nibble). e is the index inside the block run (any multiple of 32). */
static inline int infer__iq4_nibble(const uint8_t *qs, int e) {
    return (qs[16 * (e >> 5) + (e & 15)] >> (4 * ((e >> 4) & 1))) & 15;
}

/* Q3_K's 16 signed 6-bit scales in 12 bytes: low 4 bits of scale j in byte j (j < 8, low
 * nibble) or byte j-8 (j >= 8, high nibble); high 2 bits in byte 8 + j%4, bits 2*(j/4).
 * Stored biased by +32. */
static inline int infer__q3k_scale(const uint8_t *s, int j) {
    const int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
    const int hi = (s[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    return (lo | hi << 4) - 32;
}
/* Q4_K/Q5_K: 8 six-bit scales and 8 six-bit mins in 12 bytes:
 *   byte  0..3 : sc[0..3] (bits 0-5) | high 2 bits of sc[4..7] (bits 6-7)
 *   byte  4..7 : m [0..3] (bits 0-5) | high 2 bits of m [4..7] (bits 6-7)
 *   byte  8..11: low 4 bits of sc[4..7] | low 4 bits of m[4..7] << 4 */
static inline void infer__k4_scale_min(const uint8_t *s, int j, int *sc, int *m) {
    if (j < 4) { *sc = s[j] & 63; *m = s[j + 4] & 63; return; }
    *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
    *m  = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
}
static inline void infer__k4_pack_scale_min(uint8_t *s, int j, int sc, int m) {
    if (j < 4) { s[j] = (uint8_t)sc; s[j + 4] = (uint8_t)m; return; }
    s[j + 4] = (uint8_t)((sc & 15) | (m & 15) << 4);
    s[j - 4] |= (uint8_t)((sc >> 4) << 6);
    s[j]     |= (uint8_t)((m >> 4) << 6);
}

/* The 16 IQ4 levels (in units of the block scale): a non-uniform grid, finer near zero. */
static const int8_t infer__kvalues_iq4nl[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };

/* ---------------------------------------------------------------------------------
 * Dequantizers
 * --------------------------------------------------------------------------------- */

/* Q2_K, 84 bytes per 256 weights:
 *   0        16                      80    82      84
 *   | scales | qs (2 bits x 256)      | d   | dmin  |
 *     16 B: sub-block j (16 weights): low nibble sc_j, high nibble m_j
 *   qs: 2 x 32 bytes; byte l of half h holds elements 128h + l + {0,32,64,96}
 *       in bits {0-1, 2-3, 4-5, 6-7}
 *   w[e] = (d*sc_j) * q[e] - dmin*m_j,   j = e/16,  q in 0..3 */
static void infer__dequant_q2_k(const void *src, float *dst, int64_t n) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d), dmin = infer__fp16_to_fp32(b->dmin);
        for (int j = 0; j < 16; j++) {
            const float dl = d * (b->scales[j] & 15), ml = dmin * (b->scales[j] >> 4);
            for (int e = 16 * j; e < 16 * j + 16; e++) dst[e] = dl * infer__q2_crumb(b->qs, e) - ml;
        }
    }
}

/* Q3_K, 110 bytes per 256 weights:
 *   0         32                  96        108  110
 *   | hmask   | qs (low 2 bits)    | scales  | d  |
 *   hmask: bit e/32 of byte e%32 is the 3rd bit of element e
 *   qs:    same 2-bit layout as Q2_K
 *   scales: 16 signed 6-bit sub-block scales (see infer__q3k_scale)
 *   w[e] = (d*sc_j) * (q[e] - 4 + 4*h[e]),   j = e/16,  value in -4..3 */
static void infer__dequant_q3_k(const void *src, float *dst, int64_t n) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * infer__q3k_scale(b->scales, j);
            for (int e = 16 * j; e < 16 * j + 16; e++)
                dst[e] = dl * (infer__q2_crumb(b->qs, e) - (infer__hibit(b->hmask, e) ? 0 : 4));
        }
    }
}

/* Q4_K, 144 bytes per 256 weights:
 *   0    2      4          16                        144
 *   | d  | dmin | scales   | qs (4 bits x 256)        |
 *   scales: 8 six-bit scales sc_j + 8 six-bit mins m_j (see infer__k4_scale_min)
 *   qs: 4 x 32 bytes; byte l of group g holds element 64g+l (low nibble), 64g+32+l (high)
 *   w[e] = (d*sc_j) * q[e] - dmin*m_j,   j = e/32,  q in 0..15 */
static void infer__dequant_q4_k(const void *src, float *dst, int64_t n) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d), dmin = infer__fp16_to_fp32(b->dmin);
        for (int j = 0; j < 8; j++) {
            int sc, m;
            infer__k4_scale_min(b->scales, j, &sc, &m);
            const float dl = d * sc, ml = dmin * m;
            for (int e = 32 * j; e < 32 * j + 32; e++) dst[e] = dl * infer__q4k_nibble(b->qs, e) - ml;
        }
    }
}

/* Q5_K, 176 bytes per 256 weights:
 *   0    2      4          16         48                    176
 *   | d  | dmin | scales   | qh       | qs (low 4 bits)      |
 *   scales, qs: as Q4_K;  qh: bit e/32 of byte e%32 is the 5th bit of element e
 *   w[e] = (d*sc_j) * (q[e] + 16*h[e]) - dmin*m_j,   j = e/32 */
static void infer__dequant_q5_k(const void *src, float *dst, int64_t n) {
    const infer_block_q5_k *b = (const infer_block_q5_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d), dmin = infer__fp16_to_fp32(b->dmin);
        for (int j = 0; j < 8; j++) {
            int sc, m;
            infer__k4_scale_min(b->scales, j, &sc, &m);
            const float dl = d * sc, ml = dmin * m;
            for (int e = 32 * j; e < 32 * j + 32; e++)
                dst[e] = dl * (infer__q4k_nibble(b->qs, e) + 16 * infer__hibit(b->qh, e)) - ml;
        }
    }
}

/* Q6_K, 210 bytes per 256 weights:
 *   0                    128              192         208  210
 *   | ql (low 4 bits)    | qh (high 2)    | scales   | d  |
 *   per 128-element half h: ql[64h..64h+63], qh[32h..32h+31]; element 128h + 32k + l:
 *     low nibble k>>1 of ql[64h + 32(k&1) + l], bits 2k..2k+1 of qh[32h + l]
 *   scales: 16 signed 8-bit sub-block scales
 *   w[e] = (d*sc_j) * (code[e] - 32),   j = e/16,  value in -32..31 */
static void infer__dequant_q6_k(const void *src, float *dst, int64_t n) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * b->scales[j];
            for (int e = 16 * j; e < 16 * j + 16; e++) dst[e] = dl * (infer__q6k_code(b->ql, b->qh, e) - 32);
        }
    }
}

/* IQ4_NL, 18 bytes per 32 weights:
 *   0    2                 18
 *   | d  | qs (16 bytes)    |     byte j: element j (low nibble), element j+16 (high)
 *   w[e] = d * kvalues_iq4nl[q[e]] */
static void infer__dequant_iq4_nl(const void *src, float *dst, int64_t n) {
    const infer_block_iq4_nl *b = (const infer_block_iq4_nl *)src;
    for (int64_t i = 0; i < n / INFER_QK4_NL; i++, b++, dst += INFER_QK4_NL) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int e = 0; e < INFER_QK4_NL; e++) dst[e] = d * infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)];
    }
}

/* IQ4_XS, 136 bytes per 256 weights:
 *   0    2          4          8                       136
 *   | d  | scales_h | scales_l | qs (8 x 16 bytes)      |
 *   sub-block j (32 weights): 6-bit scale ls_j = nibble j%2 of scales_l[j/2]
 *                             | bits 2j..2j+1 of scales_h << 4;   sc_j = ls_j - 32
 *   qs: 16 bytes per sub-block, IQ4_NL nibble order
 *   w[e] = (d*sc_j) * kvalues_iq4nl[q[e]],   j = e/32 */
static inline int infer__iq4xs_scale(const infer_block_iq4_xs *b, int j) {
    const int lo = (b->scales_l[j >> 1] >> (4 * (j & 1))) & 15, hi = (b->scales_h >> (2 * j)) & 3;
    return (lo | hi << 4) - 32;
}
static void infer__dequant_iq4_xs(const void *src, float *dst, int64_t n) {
    const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int j = 0; j < 8; j++) {
            const float dl = d * infer__iq4xs_scale(b, j);
            for (int e = 32 * j; e < 32 * j + 32; e++) dst[e] = dl * infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)];
        }
    }
}

/* ---------------------------------------------------------------------------------
 * Scale searches (shared by the quantizers)
 *
 * Each sub-block is first fitted on its own in float; the sub-block scales (and mins)
 * are then themselves quantized to a few bits against one fp16 super-scale, and finally
 * every weight is re-rounded against the scale that will actually be stored.
 * --------------------------------------------------------------------------------- */

/* Codes l = clamp(round(iscale*(x - min)), 0, nmax) of an affine grid. */
static void infer__affine_codes(int n, int nmax, const float *x, float min, float iscale, uint8_t *L) {
    for (int i = 0; i < n; i++) L[i] = (uint8_t)infer__clampi(infer__nearest_int(iscale * (x[i] - min)), 0, nmax);
}
/* Weighted error sum w_i*|e_i| (mad) or w_i*e_i^2 with e_i = scale*L_i + min - x_i. */
static float infer__affine_err(int n, const float *x, const float *w, const uint8_t *L, float scale, float min, int mad) {
    float err = 0;
    for (int i = 0; i < n; i++) {
        float diff = scale * L[i] + min - x[i];
        err += w[i] * (mad ? fabsf(diff) : diff * diff);
    }
    return err;
}

/* Affine fit x_i ~ scale*L_i + min with L_i in 0..nmax and min <= 0 (ggml make_qkx2_quants).
 * Start from the plain range grid (max-min)/nmax; then for nstep+1 stretched grids
 * iscale = (nmax + rmin + rdelta*k)/(max-min) round the codes and solve the 2x2 weighted
 * least-squares system for (scale, min):
 *     D = Sw*Sll - Sl^2,  scale = (Sw*Sxl - Sx*Sl)/D,  min = (Sll*Sx - Sl*Sxl)/D
 * (min clipped to 0, scale then = Sxl/Sll), keeping whichever has the lowest weighted error.
 * Returns scale, writes -min (>= 0) to *neg_min and the codes to L (n <= 32). */
static float infer__fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L,
                               float *neg_min, float rmin, float rdelta, int nstep, int mad) {
    float min = x[0], max = x[0], sum_w = 0, sum_x = 0;
    for (int i = 0; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) { memset(L, 0, (size_t)n); *neg_min = -min; return 0.0f; }
    float iscale = nmax / (max - min), scale = 1 / iscale;
    infer__affine_codes(n, nmax, x, min, iscale, L);
    float best = infer__affine_err(n, x, w, L, scale, min, mad);
    for (int k = 0; k <= nstep; k++) {
        uint8_t Laux[32];
        infer__affine_codes(n, nmax, x, min, (rmin + rdelta * k + nmax) / (max - min), Laux);
        float sl = 0, sll = 0, sxl = 0;
        for (int i = 0; i < n; i++) {
            const float l = Laux[i];
            sl += w[i] * l; sll += w[i] * l * l; sxl += w[i] * l * x[i];
        }
        const float D = sum_w * sll - sl * sl;
        if (D <= 0) continue;
        float s = (sum_w * sxl - sum_x * sl) / D, m = (sll * sum_x - sl * sxl) / D;
        if (m > 0) { m = 0; s = sxl / sll; }
        const float err = infer__affine_err(n, x, w, Laux, s, m, mad);
        if (err < best) { memcpy(L, Laux, (size_t)n); best = err; scale = s; min = m; }
    }
    *neg_min = -min;
    return scale;
}

/* The element of largest magnitude, with its sign; its magnitude goes to *amax_out. */
static float infer__signed_absmax_k(int n, const float *x, float *amax_out) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) { float a = fabsf(x[i]); if (a > amax) { amax = a; max = x[i]; } }
    *amax_out = amax;
    return max;
}

/* Symmetric codes l = clamp(round(iscale*x), -nmax, nmax-1) and the weighted sums
 * Sxl = sum w x l, Sll = sum w l^2 with w = x^2. Stores l + nmax into L when L != NULL. */
static void infer__sym_sums(int n, int nmax, const float *x, float iscale, int8_t *L, float *sxl, float *sll) {
    float a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        const int l = infer__clampi(infer__nearest_int(iscale * x[i]), -nmax, nmax - 1);
        const float w = x[i] * x[i];
        if (L) L[i] = (int8_t)(l + nmax);
        a += w * x[i] * l; b += w * l * l;
    }
    *sxl = a; *sll = b;
}

/* Symmetric fit x_i ~ scale*l_i, l_i in -nmax..nmax-1, weights x_i^2 (ggml make_qx_quants,
 * rmse_type 1). The grid mapping the largest-|x| element to -nmax and 18 grids around it
 * (-(nmax + 0.1k)/max, k = +-1..9) are tried; for fixed codes the best scale is Sxl/Sll
 * and the error drops as Sxl^2/Sll grows, so that is the score. L gets l + nmax. */
static float infer__fit_sym_grid(int n, int nmax, const float *x, int8_t *L) {
    float amax, max = infer__signed_absmax_k(n, x, &amax), sxl, sll;
    if (amax < INFER__GROUP_MAX_EPS) { memset(L, 0, (size_t)n); return 0.0f; }
    infer__sym_sums(n, nmax, x, -nmax / max, L, &sxl, &sll);
    float scale = sll ? sxl / sll : 0.0f, best = scale * sxl;
    for (int k = -9; k <= 9; k++) {
        if (k == 0) continue;
        const float iscale = -(nmax + 0.1f * k) / max;
        infer__sym_sums(n, nmax, x, iscale, NULL, &sxl, &sll);
        if (sll > 0 && sxl * sxl > best * sll) {
            infer__sym_sums(n, nmax, x, iscale, L, &sxl, &sll);
            scale = sxl / sll; best = scale * sxl;
        }
    }
    return scale;
}

/* Symmetric fit by coordinate descent (ggml make_q3_quants with rmse): start from the
 * grid mapping the largest-|x| element to -nmax, then up to 5 sweeps in which each code
 * moves to its least-squares level given the others, round(x_i * Sll'/Sxl') (primes: sums
 * without element i), when that raises the score Sxl^2/Sll. Weights x^2; L gets l + nmax. */
static float infer__fit_sym_descent(int n, int nmax, const float *x, int8_t *L) {
    float amax, max = infer__signed_absmax_k(n, x, &amax), sxl, sll;
    if (amax < INFER__GROUP_MAX_EPS) { memset(L, 0, (size_t)n); return 0.0f; }
    infer__sym_sums(n, nmax, x, -nmax / max, L, &sxl, &sll);
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] - nmax);
    for (int sweep = 0; sweep < 5; sweep++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            const float w = x[i] * x[i];
            float a = sxl - w * x[i] * L[i];
            if (!(a > 0)) continue;
            float b = sll - w * L[i] * L[i];
            const int nl = infer__clampi(infer__nearest_int(x[i] * b / a), -nmax, nmax - 1);
            if (nl == L[i]) continue;
            a += w * x[i] * nl; b += w * nl * nl;
            if (b > 0 && a * a * sll > sxl * sxl * b) { L[i] = (int8_t)nl; sxl = a; sll = b; changed++; }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] + nmax);
    return sll > 0 ? sxl / sll : 0.0f;
}

/* Pack 256 two-bit codes in the Q2_K/Q3_K crumb order (see infer__q2_crumb). */
static void infer__q2_pack(const uint8_t *L, uint8_t *qs) {
    memset(qs, 0, INFER_QK_K / 4);
    for (int e = 0; e < INFER_QK_K; e++) qs[32 * (e >> 7) + (e & 31)] |= (uint8_t)((L[e] & 3) << (2 * ((e >> 5) & 3)));
}
/* Pack 256 four-bit codes in the Q4_K/Q5_K order (see infer__q4k_nibble). */
static void infer__q4k_pack(const uint8_t *L, uint8_t *qs) {
    memset(qs, 0, INFER_QK_K / 2);
    for (int e = 0; e < INFER_QK_K; e++) qs[32 * (e >> 6) + (e & 31)] |= (uint8_t)((L[e] & 15) << (4 * ((e >> 5) & 1)));
}
/* Set bit e/32 of byte e%32 where L[e] has bit `bit` set (Q3_K hmask, Q5_K qh). */
static void infer__hibit_pack(const uint8_t *L, int bit, uint8_t *h) {
    memset(h, 0, INFER_QK_K / 8);
    for (int e = 0; e < INFER_QK_K; e++) h[e & 31] |= (uint8_t)(((L[e] >> bit) & 1) << (e >> 5));
}

/* Affine k-quants (Q2_K, Q4_K, Q5_K): after the per-sub-block fits, the scales and mins
 * become nbits-bit codes against d = max_scale/qmax, dmin = max_min/qmax, then each
 * weight is re-rounded: q = clamp(round((x + dmin*m_j) / (d*sc_j)), 0, nmax). Codes whose
 * sub-block scale rounds to zero keep the codes of the float fit. */
static void infer__affine_requant(const float *x, int nsub, int sub, int nmax, float d, float dmin,
                                  const int *sc, const int *m, uint8_t *L) {
    for (int j = 0; j < nsub; j++) {
        const float dl = d * sc[j];
        if (!dl) continue;
        const float ml = dmin * m[j];
        for (int e = sub * j; e < sub * j + sub; e++) L[e] = (uint8_t)infer__clampi(infer__nearest_int((x[e] + ml) / dl), 0, nmax);
    }
}

/* ---------------------------------------------------------------------------------
 * Quantizers
 * --------------------------------------------------------------------------------- */

/* Q2_K: per 16 weights an affine 2-bit fit (weights |x|, mean-abs error, 16 grids
 * around (max-min)/3); scales and mins to 4 bits against max/15. */
static void infer__quant_q2_k(const float *src, void *dst, int64_t n) {
    infer_block_q2_k *y = (infer_block_q2_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[INFER_QK_K];
        float scale[16], min[16], w[16], max_scale = 0, max_min = 0;
        int sc[16] = {0}, m[16] = {0};
        for (int j = 0; j < 16; j++) {
            for (int l = 0; l < 16; l++) w[l] = fabsf(src[16 * j + l]);
            scale[j] = infer__fit_affine(16, 3, src + 16 * j, w, L + 16 * j, &min[j], -0.5f, 0.1f, 15, 1);
            if (scale[j] > max_scale) max_scale = scale[j];
            if (min[j] > max_min) max_min = min[j];
        }
        if (max_scale > 0) for (int j = 0; j < 16; j++) sc[j] = infer__nearest_int(15.0f / max_scale * scale[j]);
        if (max_min > 0) for (int j = 0; j < 16; j++) m[j] = infer__nearest_int(15.0f / max_min * min[j]);
        y->d = infer__fp32_to_fp16(max_scale > 0 ? max_scale / 15.0f : 0.0f);
        y->dmin = infer__fp32_to_fp16(max_min > 0 ? max_min / 15.0f : 0.0f);
        for (int j = 0; j < 16; j++) y->scales[j] = (uint8_t)(sc[j] | m[j] << 4);
        infer__affine_requant(src, 16, 16, 3, infer__fp16_to_fp32(y->d), infer__fp16_to_fp32(y->dmin), sc, m, L);
        infer__q2_pack(L, y->qs);
    }
}

/* Q3_K: per 16 weights a symmetric 3-bit fit (coordinate descent); the 16 signed scales
 * to 6 bits against d = max_scale/-32 (the largest-|scale| sub-block maps to code -32). */
static void infer__quant_q3_k(const float *src, void *dst, int64_t n) {
    infer_block_q3_k *y = (infer_block_q3_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        int8_t L8[INFER_QK_K];
        uint8_t L[INFER_QK_K];
        float scale[16];
        for (int j = 0; j < 16; j++) scale[j] = infer__fit_sym_descent(16, 4, src + 16 * j, L8 + 16 * j);
        float amax, max_scale = infer__signed_absmax_k(16, scale, &amax);
        memset(y->scales, 0, sizeof y->scales);
        y->d = infer__fp32_to_fp16(0.0f);
        if (max_scale) {
            const float iscale = -32.0f / max_scale;
            for (int j = 0; j < 16; j++) {
                const int l = infer__clampi(infer__nearest_int(iscale * scale[j]), -32, 31) + 32;
                y->scales[j & 7] |= (uint8_t)((l & 15) << (4 * (j >> 3)));
                y->scales[8 + (j & 3)] |= (uint8_t)((l >> 4) << (2 * (j >> 2)));
            }
            y->d = infer__fp32_to_fp16(1 / iscale);
        }
        const float d = infer__fp16_to_fp32(y->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * infer__q3k_scale(y->scales, j);
            if (!dl) continue;
            for (int e = 16 * j; e < 16 * j + 16; e++) L8[e] = (int8_t)(infer__clampi(infer__nearest_int(src[e] / dl), -4, 3) + 4);
        }
        for (int e = 0; e < INFER_QK_K; e++) L[e] = (uint8_t)L8[e];
        infer__hibit_pack(L, 2, y->hmask);
        infer__q2_pack(L, y->qs);
    }
}

/* Q4_K and Q5_K share everything but the code width: per 32 weights an affine fit with
 * weights av + |x| (av = rms of the sub-block), squared error, grids
 * (nmax + rmin + 0.1k)/(max-min); scales and mins to 6 bits against max/63. */
static void infer__quant_k4_common(const float *x, int nmax, float rmin, int nstep,
                                   infer_half *d_out, infer_half *dmin_out, uint8_t *scales, uint8_t *L) {
    float scale[8], min[8], w[32], max_scale = 0, max_min = 0;
    int sc[8], m[8];
    for (int j = 0; j < 8; j++) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++) w[l] = av + fabsf(x[32 * j + l]);
        scale[j] = infer__fit_affine(32, nmax, x + 32 * j, w, L + 32 * j, &min[j], rmin, 0.1f, nstep, 0);
        if (scale[j] > max_scale) max_scale = scale[j];
        if (min[j] > max_min) max_min = min[j];
    }
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f, inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    memset(scales, 0, 12);
    for (int j = 0; j < 8; j++) {
        /* the codes pass through uint8_t before clamping, as in the reference */
        sc[j] = (uint8_t)infer__nearest_int(inv_scale * scale[j]); if (sc[j] > 63) sc[j] = 63;
        m[j] = (uint8_t)infer__nearest_int(inv_min * min[j]);      if (m[j] > 63) m[j] = 63;
        infer__k4_pack_scale_min(scales, j, sc[j], m[j]);
    }
    *d_out = infer__fp32_to_fp16(max_scale / 63.0f);
    *dmin_out = infer__fp32_to_fp16(max_min / 63.0f);
    infer__affine_requant(x, 8, 32, nmax, infer__fp16_to_fp32(*d_out), infer__fp16_to_fp32(*dmin_out), sc, m, L);
}

static void infer__quant_q4_k(const float *src, void *dst, int64_t n) {
    infer_block_q4_k *y = (infer_block_q4_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[INFER_QK_K];
        infer__quant_k4_common(src, 15, -1.0f, 20, &y->d, &y->dmin, y->scales, L);
        infer__q4k_pack(L, y->qs);
    }
}

static void infer__quant_q5_k(const float *src, void *dst, int64_t n) {
    infer_block_q5_k *y = (infer_block_q5_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[INFER_QK_K];
        infer__quant_k4_common(src, 31, -0.5f, 15, &y->d, &y->dmin, y->scales, L);
        infer__hibit_pack(L, 4, y->qh);
        infer__q4k_pack(L, y->qs);
    }
}

/* Q6_K: per 16 weights a symmetric 6-bit fit (19 grids, weights x^2); the 16 signed
 * scales to 8 bits against d = max_scale/-128. */
static void infer__quant_q6_k(const float *src, void *dst, int64_t n) {
    infer_block_q6_k *y = (infer_block_q6_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        int8_t L[INFER_QK_K];
        float scale[16], amax;
        for (int j = 0; j < 16; j++) scale[j] = infer__fit_sym_grid(16, 32, src + 16 * j, L + 16 * j);
        const float max_scale = infer__signed_absmax_k(16, scale, &amax);
        memset(y, 0, sizeof *y);
        if (amax < INFER__GROUP_MAX_EPS) continue;       /* all-zero block */
        const float iscale = -128.0f / max_scale;
        y->d = infer__fp32_to_fp16(1 / iscale);
        for (int j = 0; j < 16; j++) {
            const int l = infer__nearest_int(iscale * scale[j]);
            y->scales[j] = (int8_t)(l < 127 ? l : 127);
        }
        const float d = infer__fp16_to_fp32(y->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * y->scales[j];
            if (!dl) continue;
            for (int e = 16 * j; e < 16 * j + 16; e++) L[e] = (int8_t)(infer__clampi(infer__nearest_int(src[e] / dl), -32, 31) + 32);
        }
        for (int e = 0; e < INFER_QK_K; e++) {           /* inverse of infer__q6k_code */
            const int h = e >> 7, k = (e >> 5) & 3, l = e & 31;
            y->ql[64 * h + 32 * (k & 1) + l] |= (uint8_t)((L[e] & 15) << (4 * (k >> 1)));
            y->qh[32 * h + l] |= (uint8_t)((L[e] >> 4) << (2 * k));
        }
    }
}

/* Nearest IQ4 level to v (in level units), by bisection of the sorted table. */
static int infer__iq4_index(float v) {
    const int8_t *t = infer__kvalues_iq4nl;
    if (v <= t[0]) return 0;
    if (v >= t[15]) return 15;
    int lo = 0, hi = 15;                  /* invariant t[lo] <= v < t[hi] */
    while (hi - lo > 1) { int mid = (lo + hi) / 2; if (v < t[mid]) hi = mid; else lo = mid; }
    return v - t[lo] < t[hi] - v ? lo : hi;
}

/* Weighted fit sums of the IQ4 codes for inverse scale id: Sqx = sum w q x, Sqq = sum w q^2
 * with w = x^2 and q = kvalues[index(id*x)]. */
static void infer__iq4_sums(int n, const float *x, float id, float *sqx, float *sqq) {
    float a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        const int l = infer__iq4_index(id * x[i]);
        const float q = infer__kvalues_iq4nl[l], w = x[i] * x[i];
        a += w * q * x[i]; b += w * q * q;
    }
    *sqx = a; *sqq = b;
}

/* Scale of one 32-element IQ4 block (ggml quantize_row_iq4_nl_impl with 7 tries, no
 * importance weights): map the largest-|x| element to level 127 (clipped to the top
 * level 113), round to the nearest levels and take the weighted least-squares scale
 * Sqx/Sqq; then also score the 15 grids id = (k - 127)/max, k = -7..7, by Sqx^2/Sqq. */
static float infer__iq4_block_scale(const float *x) {
    float amax, max = infer__signed_absmax_k(32, x, &amax), sqx, sqq;
    if (amax < INFER__GROUP_MAX_EPS) return 0.0f;
    infer__iq4_sums(32, x, 1 / (-max / infer__kvalues_iq4nl[0]), &sqx, &sqq);
    float d = sqq > 0 ? sqx / sqq : 0.0f, best = d * sqx;
    for (int k = -7; k <= 7; k++) {
        infer__iq4_sums(32, x, (k + infer__kvalues_iq4nl[0]) / max, &sqx, &sqq);
        if (sqq > 0 && sqx * sqx > best * sqq) { d = sqx / sqq; best = d * sqx; }
    }
    return d;
}

/* IQ4_NL: the scale search with 15 grids, then every weight re-rounded to the nearest
 * level of the float scale (the scale is stored as fp16 afterwards). */
static void infer__quant_iq4_nl(const float *src, void *dst, int64_t n) {
    infer_block_iq4_nl *y = (infer_block_iq4_nl *)dst;
    for (int64_t i = 0; i < n / INFER_QK4_NL; i++, y++, src += INFER_QK4_NL) {
        uint8_t L[INFER_QK4_NL];
        const float d = infer__iq4_block_scale(src), id = d ? 1 / d : 0.0f;
        y->d = infer__fp32_to_fp16(d);
        for (int e = 0; e < INFER_QK4_NL; e++) L[e] = (uint8_t)infer__iq4_index(id * src[e]);
        for (int j = 0; j < 16; j++) y->qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
    }
}

/* IQ4_XS: per 32 weights the IQ4 scale search with 15 grids; the 8 signed scales to 6
 * bits against d = max_scale/-32, then every weight re-rounded to the nearest level of
 * its stored scale d*sc_j (d here unrounded, as in the reference). */
static void infer__quant_iq4_xs(const float *src, void *dst, int64_t n) {
    infer_block_iq4_xs *y = (infer_block_iq4_xs *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[32];
        float scale[8], amax;
        for (int j = 0; j < 8; j++) scale[j] = infer__iq4_block_scale(src + 32 * j);
        const float d = -infer__signed_absmax_k(8, scale, &amax) / 32, id = d ? 1 / d : 0.0f;
        y->d = infer__fp32_to_fp16(d);
        y->scales_h = 0;
        memset(y->scales_l, 0, sizeof y->scales_l);
        for (int j = 0; j < 8; j++) {
            const int l = infer__clampi(infer__nearest_int(id * scale[j]), -32, 31);
            const float dl = d * l, idl = dl ? 1 / dl : 0.0f;
            for (int e = 0; e < 32; e++) L[e] = (uint8_t)infer__iq4_index(idl * src[32 * j + e]);
            for (int e = 0; e < 16; e++) y->qs[16 * j + e] = (uint8_t)(L[e] | L[e + 16] << 4);
            y->scales_l[j >> 1] |= (uint8_t)(((l + 32) & 15) << (4 * (j & 1)));
            y->scales_h |= (uint16_t)(((l + 32) >> 4) << (2 * j));
        }
    }
}

/* ---------------------------------------------------------------------------------
 * Dot products: w (this type) . x (Q8_K or Q8_0 blocks), n a multiple of the block
 * --------------------------------------------------------------------------------- */

/* Q2_K . Q8_K: sum_j d_x*(d*sc_j*S_j - dmin*m_j*bsum_j), S_j = sum_{e in j} q_e*qx_e. */
static float infer__dot_q2_k(int64_t n, const void *w, const void *x) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0, msum = 0;
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int e = 16 * j; e < 16 * j + 16; e++) s += infer__q2_crumb(b->qs, e) * a->qs[e];
            isum += (b->scales[j] & 15) * s;
            msum += (b->scales[j] >> 4) * a->bsums[j];
        }
        sum += a->d * (infer__fp16_to_fp32(b->d) * (float)isum - infer__fp16_to_fp32(b->dmin) * (float)msum);
    }
    return sum;
}

/* Q3_K . Q8_K: d*d_x * sum_j sc_j * sum_{e in j} v_e*qx_e, v in -4..3. */
static float infer__dot_q3_k(int64_t n, const void *w, const void *x) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int e = 16 * j; e < 16 * j + 16; e++)
                s += (infer__q2_crumb(b->qs, e) - (infer__hibit(b->hmask, e) ? 0 : 4)) * a->qs[e];
            isum += infer__q3k_scale(b->scales, j) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* Q4_K / Q5_K . Q8_K: as Q2_K with 32-element sub-blocks (two bsums each); qh holds
 * the 5th bits (Q5_K) or is NULL (Q4_K). */
static float infer__dot_k4_block(const uint8_t *scales, const uint8_t *qs, const uint8_t *qh,
                                 float d, float dmin, const infer_block_q8_k *a) {
    int isum = 0, msum = 0;
    for (int j = 0; j < 8; j++) {
        int sc, m, s = 0;
        infer__k4_scale_min(scales, j, &sc, &m);
        for (int e = 32 * j; e < 32 * j + 32; e++)
            s += (infer__q4k_nibble(qs, e) + (qh ? 16 * infer__hibit(qh, e) : 0)) * a->qs[e];
        isum += sc * s;
        msum += m * (a->bsums[2 * j] + a->bsums[2 * j + 1]);
    }
    return a->d * (d * (float)isum - dmin * (float)msum);
}
static float infer__dot_q4_k(int64_t n, const void *w, const void *x) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block(b->scales, b->qs, NULL, infer__fp16_to_fp32(b->d), infer__fp16_to_fp32(b->dmin), a);
    return sum;
}
static float infer__dot_q5_k(int64_t n, const void *w, const void *x) {
    const infer_block_q5_k *b = (const infer_block_q5_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block(b->scales, b->qs, b->qh, infer__fp16_to_fp32(b->d), infer__fp16_to_fp32(b->dmin), a);
    return sum;
}

/* Q6_K . Q8_K: d*d_x * sum_j sc_j * sum_{e in j} (code_e - 32)*qx_e. */
static float infer__dot_q6_k(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int e = 16 * j; e < 16 * j + 16; e++) s += (infer__q6k_code(b->ql, b->qh, e) - 32) * a->qs[e];
            isum += b->scales[j] * s;
        }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* IQ4_NL . Q8_0: both use 32-element blocks with one fp16 scale, so each block pair is
 * d_w*d_x * sum_e kvalues[q_e]*qx_e (|sum| <= 32*127*127, exact in int). */
static float infer__dot_iq4_nl(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_nl *b = (const infer_block_iq4_nl *)w;
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK4_NL; i++, b++, a++) {
        int s = 0;
        for (int e = 0; e < INFER_QK4_NL; e++) s += infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)] * a->qs[e];
        sum += infer__fp16_to_fp32(b->d) * infer__fp16_to_fp32(a->d) * (float)s;
    }
    return sum;
}

/* IQ4_XS . Q8_K: d*d_x * sum_j sc_j * sum_{e in j} kvalues[q_e]*qx_e. */
static float infer__dot_iq4_xs(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int j = 0; j < 8; j++) {
            int s = 0;
            for (int e = 32 * j; e < 32 * j + 32; e++) s += infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)] * a->qs[e];
            isum += infer__iq4xs_scale(b, j) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}

#endif
