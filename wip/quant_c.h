/* wip/quant_c.h -- grid i-quants: dequantization and dot products (implementation part, C only). */
#ifndef INFER_WIP_QUANT_C_H
#define INFER_WIP_QUANT_C_H
#include "base.h"
#include "quant_c_public.h"

/* ===================================================================================
 * >>quant_iq  grid i-quants: IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S
 * ===================================================================================
 * What: turn these blocks back into f32 weights, and dot them with Q8_K activations.
 * Why they look odd: below 4 bits per weight a per-weight integer wastes most of its
 * codes. These formats quantize a group of 8 (IQ3: 4) magnitudes jointly as one index
 * into a fixed codebook (the "grid", see >>tables_iq), store the signs separately, and
 * add a small scale per 32 (IQ1_M: 16) weights. Two families:
 *
 *   IQ2_*, IQ3_*:  w = d * f(s) * grid[index][j] * (sign_j ? -1 : +1)
 *                  f(s) = (0.5 + s)/4 (IQ2), (0.5 + s)/2 (IQ3_XXS), 1 + 2s (IQ3_S)
 *   IQ1_*:         w = d * (2s + 1) * (grid[index][j] + delta),  grid in {-1,0,1},
 *                  delta = +-1/8 (one sign bit per 32 weights, IQ1_M: per 8)
 *
 * Sign codes (IQ2_XXS, IQ2_XS, IQ3_XXS): only 7 sign bits per 8 weights are stored;
 * the encoder makes the count of negative signs even, so the 8th is their parity
 * (expanded through infer__ksigns_iq2xs).
 *
 * Dot with Q8_K (x = dx * q8): inside a 32-weight sub-block everything but d and dx is
 * an integer, so sum(grid*sign*q8) is accumulated exactly in int32 and scaled once;
 * IQ1's delta term needs sum(q8), taken from the Q8_K partial sums where they fit.
 * Bounds: |grid| <= 62, |q8| <= 127, scales <= 31: a super-block sum stays < 2^27.
 *
 * Multi-byte fields are read byte by byte (little-endian, as stored in the file), so
 * the code does not depend on the host's byte order. Every function takes n, a
 * multiple of INFER_QK_K (256) weights.
 */

/* Lookup tables, defined in >>tables_iq at the end of the file (these are C tentative
 * definitions; the initialized definitions come later in the same translation unit). */
static const uint64_t infer__iq2xxs_grid[256];
static const uint64_t infer__iq2xs_grid[512];
static const uint64_t infer__iq2s_grid[1024];
static const uint32_t infer__iq3xxs_grid[256];
static const uint32_t infer__iq3s_grid[512];
static const uint64_t infer__iq1s_grid[2048];
static const uint8_t  infer__ksigns_iq2xs[128];

/* ---- shared helpers ---- */

static inline uint32_t infer__iq_u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t infer__iq_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Two 4-value IQ3 grid entries side by side = one group of 8 magnitudes. */
static inline uint64_t infer__iq3_pair(const uint32_t *grid, uint32_t i0, uint32_t i1) {
    return (uint64_t)grid[i0] | (uint64_t)grid[i1] << 32;
}

/* 8 weights of an IQ2/IQ3 group: y[j] = +-(db * g_j), g_j = byte j of entry e,
 * negative where bit j of `signs` is set. */
static inline void infer__iq_put8(float *y, float db, uint64_t e, uint32_t signs) {
    for (int j = 0; j < 8; j++) {
        const float v = db * (float)(uint8_t)(e >> 8 * j);
        y[j] = (signs >> j) & 1 ? -v : v;
    }
}

/* Integer dot of the same group with 8 Q8 values: sum_j +-g_j * q_j. */
static inline int32_t infer__iq_dot8(uint64_t e, uint32_t signs, const int8_t *q) {
    int32_t s = 0;
    for (int j = 0; j < 8; j++) {
        const int32_t v = (int32_t)(uint8_t)(e >> 8 * j) * q[j];
        s += (signs >> j) & 1 ? -v : v;
    }
    return s;
}

/* 8 weights of an IQ1 group: y[j] = dl * (g_j + delta), g_j = signed byte j of e. */
static inline void infer__iq1_put8(float *y, float dl, float delta, uint64_t e) {
    for (int j = 0; j < 8; j++) y[j] = dl * ((float)(int8_t)(uint8_t)(e >> 8 * j) + delta);
}

/* sum_j g_j * q_j for an IQ1 group (g_j in {-1, 0, 1}). */
static inline int32_t infer__iq1_dot8(uint64_t e, const int8_t *q) {
    int32_t s = 0;
    for (int j = 0; j < 8; j++) s += (int32_t)(int8_t)(uint8_t)(e >> 8 * j) * q[j];
    return s;
}

/* ---- IQ2_XXS ----
 * Block, 66 bytes = f16 d + 8 sub-blocks of 8 bytes (stored as u16 words):
 *
 *   +-----+-------+-------+-----+-------+
 *   | d   | sub 0 | sub 1 | ... | sub 7 |        sub-block ib = weights 32ib..32ib+31
 *   +-----+-------+-------+-----+-------+
 *   sub-block:  bytes 0..3          bytes 4..7 as u32 (bit 0 on the right)
 *             +----+----+----+----+-----+--------+--------+--------+--------+
 *             | i0 | i1 | i2 | i3 | s:4 | c3:7   | c2:7   | c1:7   | c0:7   |
 *             +----+----+----+----+-----+--------+--------+--------+--------+
 *   i_l: index into infer__iq2xxs_grid, 8 magnitudes for weights 8l..8l+7
 *   c_l: 7-bit sign code of group l (ksigns -> 8 sign bits);  s: 4-bit scale
 *
 *   w[32ib + 8l + j] = d * (0.5 + s) * 0.25 * grid[i_l][j] * (sign bit j ? -1 : 1)
 */
static void infer__dequant_iq2_xxs(const void *src, float *dst, int64_t n) {
    const infer_block_iq2_xxs *b = (const infer_block_iq2_xxs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *q = (const uint8_t *)b->qs;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(q + 4);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db, infer__iq2xxs_grid[q[l]], infer__ksigns_iq2xs[(aux >> 7 * l) & 127]);
        }
    }
}

/* (0.5 + s) * 0.25 = (2s + 1) / 8: integer factor 2s+1 per sub-block, 1/8 at the end. */
static float infer__dot_iq2_xxs(int64_t n, const void *w, const void *x) {
    const infer_block_iq2_xxs *b = (const infer_block_iq2_xxs *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *q = (const uint8_t *)b->qs;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(q + 4);
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq_dot8(infer__iq2xxs_grid[q[l]], infer__ksigns_iq2xs[(aux >> 7 * l) & 127], q8);
            acc += (int32_t)(2 * (aux >> 28) + 1) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.125f * (float)acc;
    }
    return sum;
}

/* ---- IQ2_XS ----
 * Block, 74 bytes:
 *
 *   +-----+--------------------------------------+-------------+
 *   | d   | qs: 32 x u16, one per 8 weights      | scales: 8 B |
 *   +-----+--------------------------------------+-------------+
 *   qs[k] (weights 8k..8k+7):  | c:7 (bits 9-15) | index:9 (bits 0-8) |
 *       index into infer__iq2xs_grid (512 entries), c = 7-bit sign code
 *   scales[ib]: low nibble s for weights 32ib..32ib+15, high nibble for 32ib+16..+31
 *
 *   w = d * (0.5 + s) * 0.25 * grid[index][j] * (sign bit j ? -1 : 1)
 */
static void infer__dequant_iq2_xs(const void *src, float *dst, int64_t n) {
    const infer_block_iq2_xs *b = (const infer_block_iq2_xs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *q = (const uint8_t *)b->qs;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const float db[2] = { d * (0.5f + (float)(b->scales[ib] & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(b->scales[ib] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, q += 2, dst += 8) {
                const uint32_t v = infer__iq_u16(q);
                infer__iq_put8(dst, db[l / 2], infer__iq2xs_grid[v & 511], infer__ksigns_iq2xs[v >> 9]);
            }
        }
    }
}

static float infer__dot_iq2_xs(int64_t n, const void *w, const void *x) {
    const infer_block_iq2_xs *b = (const infer_block_iq2_xs *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *q = (const uint8_t *)b->qs;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            int32_t s[2] = { 0, 0 };                  /* the two 16-weight halves */
            for (int l = 0; l < 4; l++, q += 2, q8 += 8) {
                const uint32_t v = infer__iq_u16(q);
                s[l / 2] += infer__iq_dot8(infer__iq2xs_grid[v & 511], infer__ksigns_iq2xs[v >> 9], q8);
            }
            acc += (2 * (b->scales[ib] & 0xf) + 1) * s[0] + (2 * (b->scales[ib] >> 4) + 1) * s[1];
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.125f * (float)acc;
    }
    return sum;
}

/* ---- IQ2_S ----
 * Block, 82 bytes:
 *
 *   +-----+------------------+------------------+--------+-----------+
 *   | d   | qs[0..31]        | qs[32..63]       | qh[8]  | scales[8] |
 *   |     | index low bytes  | sign masks       |        |           |
 *   +-----+------------------+------------------+--------+-----------+
 *   group k = 4ib + l (weights 8k..8k+7):
 *     index = qs[k] | ((qh[ib] >> 2l) & 3) << 8        10 bits, infer__iq2s_grid
 *     sign of weight j = bit j of qs[32 + k]           (all 8 signs stored)
 *   scales as IQ2_XS (nibble per 16 weights)
 *
 *   w = d * (0.5 + s) * 0.25 * grid[index][j] * (sign bit j ? -1 : 1)
 */
static inline uint32_t infer__iq2s_index(const infer_block_iq2_s *b, int ib, int l) {
    return b->qs[4 * ib + l] | (uint32_t)((b->qh[ib] >> 2 * l) & 3) << 8;
}

static void infer__dequant_iq2_s(const void *src, float *dst, int64_t n) {
    const infer_block_iq2_s *b = (const infer_block_iq2_s *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *signs = b->qs + INFER_QK_K / 8;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const float db[2] = { d * (0.5f + (float)(b->scales[ib] & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(b->scales[ib] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db[l / 2], infer__iq2s_grid[infer__iq2s_index(b, ib, l)], signs[4 * ib + l]);
        }
    }
}

static float infer__dot_iq2_s(int64_t n, const void *w, const void *x) {
    const infer_block_iq2_s *b = (const infer_block_iq2_s *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *signs = b->qs + INFER_QK_K / 8;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            int32_t s[2] = { 0, 0 };
            for (int l = 0; l < 4; l++, q8 += 8)
                s[l / 2] += infer__iq_dot8(infer__iq2s_grid[infer__iq2s_index(b, ib, l)], signs[4 * ib + l], q8);
            acc += (2 * (b->scales[ib] & 0xf) + 1) * s[0] + (2 * (b->scales[ib] >> 4) + 1) * s[1];
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.125f * (float)acc;
    }
    return sum;
}

/* ---- IQ3_XXS ----
 * Block, 98 bytes:
 *
 *   +-----+---------------------------------+---------------------------------+
 *   | d   | qs[0..63]: index per 4 weights  | qs[64..95]: 8 x u32 signs+scale |
 *   +-----+---------------------------------+---------------------------------+
 *   sub-block ib, group l (weights 32ib+8l..+7): two indices qs[8ib+2l], qs[8ib+2l+1]
 *     into infer__iq3xxs_grid (4 magnitudes each: weights 0-3, then 4-7)
 *   u32 at qs[64+4ib]:  | s:4 | c3:7 | c2:7 | c1:7 | c0:7 |   (as IQ2_XXS)
 *
 *   w = d * (0.5 + s) * 0.5 * grid[idx][j] * (sign bit j ? -1 : 1)
 */
static void infer__dequant_iq3_xxs(const void *src, float *dst, int64_t n) {
    const infer_block_iq3_xxs *b = (const infer_block_iq3_xxs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *q = b->qs;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(b->qs + INFER_QK_K / 4 + 4 * ib);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db, infer__iq3_pair(infer__iq3xxs_grid, q[2 * l], q[2 * l + 1]),
                               infer__ksigns_iq2xs[(aux >> 7 * l) & 127]);
        }
    }
}

/* (0.5 + s) * 0.5 = (2s + 1) / 4. */
static float infer__dot_iq3_xxs(int64_t n, const void *w, const void *x) {
    const infer_block_iq3_xxs *b = (const infer_block_iq3_xxs *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *q = b->qs;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(b->qs + INFER_QK_K / 4 + 4 * ib);
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq_dot8(infer__iq3_pair(infer__iq3xxs_grid, q[2 * l], q[2 * l + 1]),
                                    infer__ksigns_iq2xs[(aux >> 7 * l) & 127], q8);
            acc += (int32_t)(2 * (aux >> 28) + 1) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.25f * (float)acc;
    }
    return sum;
}

/* ---- IQ3_S ----
 * Block, 110 bytes:
 *
 *   +-----+-----------+--------+------------+-----------+
 *   | d   | qs[64]    | qh[8]  | signs[32]  | scales[4] |
 *   +-----+-----------+--------+------------+-----------+
 *   index k of sub-block ib (weights 32ib+4k..+3):
 *     qs[8ib + k] | ((qh[ib] >> k) & 1) << 8           9 bits, infer__iq3s_grid
 *   signs[4ib + l]: bit j set = weight 32ib+8l+j negative
 *   scales[ib/2]: low nibble s for even ib, high nibble for odd ib
 *
 *   w = d * (1 + 2s) * grid[index][j] * (sign bit j ? -1 : 1)
 */
static inline uint64_t infer__iq3s_group(const infer_block_iq3_s *b, int ib, int l) {
    const uint8_t *q = b->qs + 8 * ib + 2 * l;
    const uint32_t h = b->qh[ib] >> 2 * l;
    return infer__iq3_pair(infer__iq3s_grid, q[0] | (h & 1) << 8, q[1] | (h >> 1 & 1) << 8);
}

static inline int32_t infer__iq3s_scale(const infer_block_iq3_s *b, int ib) {
    return 1 + 2 * ((b->scales[ib / 2] >> 4 * (ib % 2)) & 0xf);
}

static void infer__dequant_iq3_s(const void *src, float *dst, int64_t n) {
    const infer_block_iq3_s *b = (const infer_block_iq3_s *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const float db = d * (float)infer__iq3s_scale(b, ib);
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db, infer__iq3s_group(b, ib, l), b->signs[4 * ib + l]);
        }
    }
}

static float infer__dot_iq3_s(int64_t n, const void *w, const void *x) {
    const infer_block_iq3_s *b = (const infer_block_iq3_s *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq_dot8(infer__iq3s_group(b, ib, l), b->signs[4 * ib + l], q8);
            acc += infer__iq3s_scale(b, ib) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * (float)acc;
    }
    return sum;
}

/* ---- IQ1_S ----
 * Block, 50 bytes:
 *
 *   +-----+--------------------+------------------------------+
 *   | d   | qs[32]             | qh: 8 x u16, one per 32 w.   |
 *   |     | index low bytes    |                              |
 *   +-----+--------------------+------------------------------+
 *   qh[ib] (bit 0 on the right):
 *     | m:1 | s:3 | h3:3 | h2:3 | h1:3 | h0:3 |
 *   group l of sub-block ib: index = qs[4ib+l] | h_l << 8   (11 bits, infer__iq1s_grid)
 *   delta = m ? -1/8 : +1/8
 *
 *   w = d * (2s + 1) * (grid[index][j] + delta),   grid[index][j] in {-1, 0, +1}
 */
#define INFER__IQ1_DELTA 0.125f

static void infer__dequant_iq1_s(const void *src, float *dst, int64_t n) {
    const infer_block_iq1_s *b = (const infer_block_iq1_s *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t h = infer__iq_u16((const uint8_t *)&b->qh[ib]);
            const float dl = d * (float)(2 * ((h >> 12) & 7) + 1);
            const float delta = h & 0x8000 ? -INFER__IQ1_DELTA : INFER__IQ1_DELTA;
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq1_put8(dst, dl, delta, infer__iq1s_grid[b->qs[4 * ib + l] | ((h >> 3 * l) & 7) << 8]);
        }
    }
}

/* sum w*x = d*dx * sum_ib (2s+1) * (sum g*q8 + delta * sum q8); sum q8 over 32 weights
 * is two Q8_K partial sums (bsums covers 16 each). */
static float infer__dot_iq1_s(int64_t n, const void *w, const void *x) {
    const infer_block_iq1_s *b = (const infer_block_iq1_s *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const int8_t *q8 = y->qs;
        int32_t acc_g = 0, acc_q = 0;               /* grid term, delta term (in units of 1/8) */
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t h = infer__iq_u16((const uint8_t *)&b->qh[ib]);
            const int32_t ls = (int32_t)(2 * ((h >> 12) & 7) + 1);
            const int32_t qsum = y->bsums[2 * ib] + y->bsums[2 * ib + 1];
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq1_dot8(infer__iq1s_grid[b->qs[4 * ib + l] | ((h >> 3 * l) & 7) << 8], q8);
            acc_g += ls * s;
            acc_q += ls * (h & 0x8000 ? -qsum : qsum);
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * ((float)acc_g + INFER__IQ1_DELTA * (float)acc_q);
    }
    return sum;
}

/* ---- IQ1_M ----
 * Block, 56 bytes (no separate d field):
 *
 *   +--------------------+--------------------+--------------------------+
 *   | qs[32]             | qh[16]             | scales: 4 x u16 sc[0..3] |
 *   | index low bytes    | nibble per 8 w.    |                          |
 *   +--------------------+--------------------+--------------------------+
 *   qh[2ib + t]: low nibble = group 4ib+2t, high nibble = group 4ib+2t+1;
 *     nibble | m:1 | h:3 |  ->  index = qs[group] | h << 8,  delta = m ? -1/8 : +1/8
 *   sc[k] (bit 0 on the right): | D_k:4 | s3:3 | s2:3 | s1:3 | s0:3 |
 *     sub-block ib uses sc[ib/2]: s(2(ib%2)) for weights 32ib..+15, s(2(ib%2)+1) for +16..+31
 *     d = f16 with bits D_3 D_2 D_1 D_0 (D_0 lowest nibble)
 *
 *   w = d * (2s + 1) * (grid[index][j] + delta)
 */
static inline uint32_t infer__iq1m_sc(const infer_block_iq1_m *b, int k) {
    return infer__iq_u16(b->scales + 2 * k);
}

static inline float infer__iq1m_d(const infer_block_iq1_m *b) {
    const uint32_t h = infer__iq1m_sc(b, 0) >> 12 | (infer__iq1m_sc(b, 1) >> 12) << 4 |
                       (infer__iq1m_sc(b, 2) >> 12) << 8 | (infer__iq1m_sc(b, 3) >> 12) << 12;
    return infer__fp16_to_fp32((infer_half)h);
}

/* Grid entry and high nibble of group g (0..31). */
static inline uint32_t infer__iq1m_nibble(const infer_block_iq1_m *b, int g) {
    return (b->qh[g / 2] >> 4 * (g % 2)) & 0xf;
}
static inline uint64_t infer__iq1m_entry(const infer_block_iq1_m *b, int g) {
    return infer__iq1s_grid[b->qs[g] | (infer__iq1m_nibble(b, g) & 7) << 8];
}

static void infer__dequant_iq1_m(const void *src, float *dst, int64_t n) {
    const infer_block_iq1_m *b = (const infer_block_iq1_m *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__iq1m_d(b);
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t sc = infer__iq1m_sc(b, ib / 2) >> 6 * (ib % 2);
            for (int l = 0; l < 4; l++, dst += 8) {
                const int g = 4 * ib + l;
                const float dl = d * (float)(2 * ((sc >> 3 * (l / 2)) & 7) + 1);
                const float delta = infer__iq1m_nibble(b, g) & 8 ? -INFER__IQ1_DELTA : INFER__IQ1_DELTA;
                infer__iq1_put8(dst, dl, delta, infer__iq1m_entry(b, g));
            }
        }
    }
}

/* As IQ1_S, but the delta sign changes every 8 weights, so sum q8 is taken per group. */
static float infer__dot_iq1_m(int64_t n, const void *w, const void *x) {
    const infer_block_iq1_m *b = (const infer_block_iq1_m *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const int8_t *q8 = y->qs;
        int32_t acc_g = 0, acc_q = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t sc = infer__iq1m_sc(b, ib / 2) >> 6 * (ib % 2);
            for (int l = 0; l < 4; l++, q8 += 8) {
                const int g = 4 * ib + l;
                const int32_t ls = (int32_t)(2 * ((sc >> 3 * (l / 2)) & 7) + 1);
                int32_t qsum = 0;
                for (int j = 0; j < 8; j++) qsum += q8[j];
                acc_g += ls * infer__iq1_dot8(infer__iq1m_entry(b, g), q8);
                acc_q += ls * (infer__iq1m_nibble(b, g) & 8 ? -qsum : qsum);
            }
        }
        sum += infer__iq1m_d(b) * y->d * ((float)acc_g + INFER__IQ1_DELTA * (float)acc_q);
    }
    return sum;
}

#endif
