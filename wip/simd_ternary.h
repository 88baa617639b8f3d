/* ------------------------------------------------------------------------------------------
 * >>ternary -- fast dot products for the ternary weight types TQ1_0, TQ2_0 and I2_S.
 *
 * BitNet b1.58 weights are -1, 0 or +1 times a scale. All three types store the code
 * c = w + 1 in {0, 1, 2}, so against int8 activations y
 *
 *     sum_k w_k y_k  =  sum_k c_k y_k  -  sum_k y_k
 *
 * The first sum is one unsigned-by-signed byte multiply-add per weight (vpdpbusd with VNNI,
 * else vpmaddubsw + vpmaddwd on x86; sdot on ARM). The codes are at most 3, so no product
 * and no int16 pair sum can saturate (2 * 3 * 127 = 762). The second sum needs no weights:
 * a Q8_K activation block carries it in its partial sums `bsums`. What is left per weight is
 * unpacking: a 2-bit field (TQ2_0, I2_S: a shift and a mask) or a base-3 digit (TQ1_0:
 * a multiply that drops the leading digits, and one more for the top digit).
 *
 * Activations. All three dot against Q8_K: int8 codes with one f32 scale per 256 values
 * (absmax / 127 per block). BitNet's own runtime scales each whole token row by one absmax
 * instead; per block costs one float multiply-add per 256 weights, keeps an outlier from
 * coarsening the other values of a 2560- or 6912-wide row, and is what llama.cpp does for
 * TQ1_0/TQ2_0, the engine the golden fast-path logits come from. I2_S rows are whole
 * 128-element chunks; when a row has an odd number of them the activation row is padded
 * with zeros to a whole Q8_K block and the last block uses its first half only.
 *
 * Exactness. Each kernel computes the same integer sums as the scalar references
 * (infer__dot_tq1_0, infer__dot_tq2_0 in >>quant, infer__dot_i2_s_q8_k below). NEON then
 * applies the scales exactly as they do (bit-identical); the x86 kernels scale partial sums
 * in vector lanes (see the AVX2 section), a difference of float rounding only.
 *
 * Tiers (chosen at compile time, like >>simd): AVX-512 (F+BW+VL, with VNNI when present),
 * AVX2 (with FMA and F16C), NEON (with the dot-product extension when present), else the
 * scalar references.
 * infer__ternary_dot(t) returns the best one for t, or NULL for other types; for I2_S, which
 * has no traits entry, it always returns a kernel (the scalar reference at worst).
 * ---------------------------------------------------------------------------------------- */
#ifndef INFER_WIP_SIMD_TERNARY_H
#define INFER_WIP_SIMD_TERNARY_H

#if !defined(INFER_NO_SIMD) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define INFER__TERN_AVX2 1
#include <immintrin.h>
#endif
#if defined(INFER__TERN_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define INFER__TERN_AVX512 1
#endif
#if !defined(INFER_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__)
#define INFER__TERN_NEON 1
#include <arm_neon.h>
#endif

/* I2_S codes against Q8_K activations (the scalar reference): sum_k (code_k - 1) y_k over
 * n = 128 m weights, unscaled (the caller multiplies by the tensor scale). Q8_K block b
 * covers chunks 2b and 2b+1; with m odd the last block holds one chunk. */
static float infer__dot_i2_s_q8_k(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t b = 0; INFER_QK_K * b < n; b++) {
        const int len = n - INFER_QK_K * b < INFER_QK_K ? INFER_QK_I2_S : INFER_QK_K;
        int sumi = 0;
        for (int j = 0; j < len; j++) sumi += infer__i2_s_code(p + 64 * b, j) * y[b].qs[j];
        for (int g = 0; g < len / 16; g++) sumi -= y[b].bsums[g];
        s += (float)sumi * y[b].d;
    }
    return s;
}

#ifdef INFER__TERN_AVX2
/* ===================================================================================
 * AVX2. Registers hold 32 bytes; a 2-bit field of 32 code bytes is 32 weights, so one
 * shift-and-mask and one multiply-add handle 32 weights.
 *
 * Per 256-weight block the integer sums stay in 8 (AVX-512: 16) int32 lanes, exact; the
 * lanes are converted to float and multiplied by the block's scale into a float vector
 * accumulator, reduced once per row. A horizontal integer sum per block (what the scalar
 * code does) would cost as much as the block's unpacking: so these results differ from the
 * reference by the rounding of those partial float sums (measured below 1e-7 of
 * sum |w x|; the tests allow 1e-6).
 *
 * Prefetch. Decoding streams each weight matrix from memory once per token, and at 2 bits a
 * weight the kernels consume bytes faster than the hardware prefetcher brings them in by
 * itself. Each block asks for the cache line INFER__TERN_PREFETCH bytes ahead; past the end
 * of the row that is the next rows, which the matmul reads next. (One instruction per block,
 * between the arithmetic; measured +40-60% on one thread streaming from memory.)
 * =================================================================================== */
#define INFER__TERN_PREFETCH 4096
static inline void infer__tern_prefetch(const void *p) { _mm_prefetch((const char *)p + INFER__TERN_PREFETCH, _MM_HINT_T0); }

/* acc (8 x int32) += sums of 4 adjacent products u8 * s8 */
static inline __m256i infer__tern_dp256(__m256i acc, __m256i u, __m256i s) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(acc, u, s);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

static inline float infer__tern_hsum256_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* minus the sum of the first 8 * halves partial sums of a Q8_K block (halves = 1 or 2) */
static inline __m256i infer__tern_neg_bsums256(const int16_t *bsums, int halves) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i v = halves == 2 ? _mm256_loadu_si256((const __m256i *)bsums)
                                  : _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)bsums));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_madd_epi16(v, ones));
}

/* 128 weights as 32 bytes of 2-bit codes: field f (bits 2f+1..2f) of byte m is weight
 * 32 f + m (TQ2_0's halves) or, reversed, weight 32 (3 - f) + m (an I2_S chunk). */
static inline __m256i infer__tern_2bit256(__m256i acc, const uint8_t *q, const int8_t *y, int reversed) {
    const __m256i m3 = _mm256_set1_epi8(3);
    __m256i v = _mm256_loadu_si256((const __m256i *)q);
    for (int f = 0; f < 4; f++, v = _mm256_srli_epi16(v, 2)) {      /* bits shifted in from the next byte are masked off */
        const int g = reversed ? 3 - f : f;
        acc = infer__tern_dp256(acc, _mm256_and_si256(v, m3), _mm256_loadu_si256((const __m256i *)(y + 32 * g)));
    }
    return acc;
}

/* accf += float(acc) * d */
static inline __m256 infer__tern_scale256(__m256 accf, __m256i acc, float d) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(d), accf);
}

static float infer__dot_tq2_0_avx2_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    __m256 accf = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        __m256i acc = infer__tern_neg_bsums256(y[i].bsums, 2);
        acc = infer__tern_2bit256(acc, b[i].qs, y[i].qs, 0);
        acc = infer__tern_2bit256(acc, b[i].qs + 32, y[i].qs + 128, 0);
        accf = infer__tern_scale256(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return infer__tern_hsum256_ps(accf);
}

static float infer__dot_i2_s_avx2(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    __m256 accf = _mm256_setzero_ps();
    for (int64_t b = 0; INFER_QK_K * b < n; b++, p += 64) {
        const int halves = n - INFER_QK_K * b < INFER_QK_K ? 1 : 2;
        infer__tern_prefetch(p);
        __m256i acc = infer__tern_neg_bsums256(y[b].bsums, halves);
        acc = infer__tern_2bit256(acc, p, y[b].qs, 1);
        if (halves == 2) acc = infer__tern_2bit256(acc, p + 32, y[b].qs + 128, 1);
        accf = infer__tern_scale256(accf, acc, y[b].d);
    }
    return infer__tern_hsum256_ps(accf);
}

/* TQ1_0 digits. For each byte b with multiplier m (one per 16-bit lane), the digit is the
 * top trit of the byte times m, t = ((b m mod 256) * 3) >> 8 (see >>quant, TQ1_0). With the
 * byte moved into the high half of a 16-bit lane, mullo leaves (b m mod 256) << 8 and mulhi
 * by 3 the digit; the even bytes and the odd bytes take one such pass each. */
static inline __m256i infer__tern_trits256(__m256i v, __m256i m) {
    const __m256i three = _mm256_set1_epi16(3);
    const __m256i even = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_slli_epi16(v, 8), m), three);
    const __m256i odd = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_and_si256(v, _mm256_set1_epi16((short)0xFF00)), m), three);
    return _mm256_or_si256(even, _mm256_slli_epi16(odd, 8));
}

/* A block's trits in 8 registers of 32 consecutive weights:
 *   qs[0..31]  times 1, 3, 9, 27, 81                      weights   0..159
 *   qs[32..47] times 1 | 3, then 9 | 27 (one per half)    weights 160..223
 *   qs[32..47] times 81 | qh[0..3] four times, times 1, 3, 9, 27 (4 bytes each)
 *                                                         weights 224..255 */
static float infer__dot_tq1_0_avx2_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m256i m01 = _mm256_set_m128i(_mm_set1_epi16(3), _mm_set1_epi16(1));
    const __m256i m23 = _mm256_set_m128i(_mm_set1_epi16(27), _mm_set1_epi16(9));
    const __m256i mtail = _mm256_set_m128i(_mm_setr_epi16(1, 1, 3, 3, 9, 9, 27, 27), _mm_set1_epi16(81));
    __m256 accf = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)b[i].qs);
        const __m128i q1 = _mm_loadu_si128((const __m128i *)(b[i].qs + 32));
        uint32_t qh;
        memcpy(&qh, b[i].qh, 4);
        const __m256i q11 = _mm256_set_m128i(q1, q1), q1h = _mm256_set_m128i(_mm_set1_epi32((int)qh), q1);
        const int8_t *yq = y[i].qs;
        __m256i acc = infer__tern_neg_bsums256(y[i].bsums, 2);
        int pow3 = 1;
        for (int k = 0; k < 5; k++, pow3 *= 3)
            acc = infer__tern_dp256(acc, infer__tern_trits256(q0, _mm256_set1_epi16((short)pow3)), _mm256_loadu_si256((const __m256i *)(yq + 32 * k)));
        acc = infer__tern_dp256(acc, infer__tern_trits256(q11, m01), _mm256_loadu_si256((const __m256i *)(yq + 160)));
        acc = infer__tern_dp256(acc, infer__tern_trits256(q11, m23), _mm256_loadu_si256((const __m256i *)(yq + 192)));
        acc = infer__tern_dp256(acc, infer__tern_trits256(q1h, mtail), _mm256_loadu_si256((const __m256i *)(yq + 224)));
        accf = infer__tern_scale256(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return infer__tern_hsum256_ps(accf);
}
#endif /* INFER__TERN_AVX2 */

#ifdef INFER__TERN_AVX512
/* ===================================================================================
 * AVX-512. Registers hold 64 bytes. The 2-bit types put a code group of 32 bytes in both
 * halves of a register and shift each half to a different field (vpsrlvw), so one register
 * is 64 consecutive weights and the activations load straight. TQ1_0 builds 4 registers of
 * 64 consecutive trits from the same pieces as the AVX2 version.
 * =================================================================================== */
static inline __m512i infer__tern_dp512(__m512i acc, __m512i u, __m512i s) {
#ifdef __AVX512VNNI__
    return _mm512_dpbusd_epi32(acc, u, s);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1)));
#endif
}

static inline __m512i infer__tern_neg_bsums512(const int16_t *bsums, int halves) {
    return _mm512_zextsi256_si512(infer__tern_neg_bsums256(bsums, halves));
}

static inline __m512 infer__tern_scale512(__m512 accf, __m512i acc, float d) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(d), accf);
}

/* [a in the low 256 bits | b in the high 256 bits], 16-bit lanes */
static inline __m512i infer__tern_pair16(short a, short b) {
    return _mm512_inserti64x4(_mm512_set1_epi16(a), _mm256_set1_epi16(b), 1);
}

/* 128 weights of 2-bit codes (32 bytes): weights 0..63 come from fields (f0 | f1), 64..127
 * from (f2 | f3), as given by the shift vectors lo and hi */
static inline __m512i infer__tern_2bit512(__m512i acc, const uint8_t *q, const int8_t *y, __m512i lo, __m512i hi) {
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)q));
    acc = infer__tern_dp512(acc, _mm512_and_si512(_mm512_srlv_epi16(v, lo), m3), _mm512_loadu_si512(y));
    return infer__tern_dp512(acc, _mm512_and_si512(_mm512_srlv_epi16(v, hi), m3), _mm512_loadu_si512(y + 64));
}

static float infer__dot_tq2_0_avx512_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m512i lo = infer__tern_pair16(0, 2), hi = infer__tern_pair16(4, 6);
    __m512 accf = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        __m512i acc = infer__tern_neg_bsums512(y[i].bsums, 2);
        acc = infer__tern_2bit512(acc, b[i].qs, y[i].qs, lo, hi);
        acc = infer__tern_2bit512(acc, b[i].qs + 32, y[i].qs + 128, lo, hi);
        accf = infer__tern_scale512(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return _mm512_reduce_add_ps(accf);
}

static float infer__dot_i2_s_avx512(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m512i lo = infer__tern_pair16(6, 4), hi = infer__tern_pair16(2, 0);
    __m512 accf = _mm512_setzero_ps();
    for (int64_t b = 0; INFER_QK_K * b < n; b++, p += 64) {
        const int halves = n - INFER_QK_K * b < INFER_QK_K ? 1 : 2;
        infer__tern_prefetch(p);
        __m512i acc = infer__tern_neg_bsums512(y[b].bsums, halves);
        acc = infer__tern_2bit512(acc, p, y[b].qs, lo, hi);
        if (halves == 2) acc = infer__tern_2bit512(acc, p + 32, y[b].qs + 128, lo, hi);
        accf = infer__tern_scale512(accf, acc, y[b].d);
    }
    return _mm512_reduce_add_ps(accf);
}

static inline __m512i infer__tern_trits512(__m512i v, __m512i m) {
    const __m512i three = _mm512_set1_epi16(3);
    const __m512i even = _mm512_mulhi_epu16(_mm512_mullo_epi16(_mm512_slli_epi16(v, 8), m), three);
    const __m512i odd = _mm512_mulhi_epu16(_mm512_mullo_epi16(_mm512_and_si512(v, _mm512_set1_epi16((short)0xFF00)), m), three);
    return _mm512_or_si512(even, _mm512_slli_epi16(odd, 8));
}

/* Four registers of 64 consecutive trits (multipliers per 128-bit quarter):
 *   [qs0..31 | qs0..31]            x [1 | 3]           weights   0..63
 *   [qs0..31 | qs0..31]            x [9 | 27]          weights  64..127
 *   [qs0..31 | qs32..47 | qs32..47] x [81 | 1 | 3]      weights 128..191
 *   [qs32..47 x3 | qh x4]          x [9 | 27 | 81 | 1,1,3,3,9,9,27,27] weights 192..255 */
static float infer__dot_tq1_0_avx512_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m512i m0 = infer__tern_pair16(1, 3), m1 = infer__tern_pair16(9, 27);
    const __m512i m2 = _mm512_inserti64x4(_mm512_set1_epi16(81), _mm256_set_m128i(_mm_set1_epi16(3), _mm_set1_epi16(1)), 1);
    const __m512i m3 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(27), _mm_set1_epi16(9))),
                                          _mm256_set_m128i(_mm_setr_epi16(1, 1, 3, 3, 9, 9, 27, 27), _mm_set1_epi16(81)), 1);
    __m512 accf = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)b[i].qs);
        const __m128i q1 = _mm_loadu_si128((const __m128i *)(b[i].qs + 32));
        uint32_t qh;
        memcpy(&qh, b[i].qh, 4);
        const __m512i z0 = _mm512_broadcast_i64x4(q0);
        const __m512i z2 = _mm512_inserti64x4(_mm512_castsi256_si512(q0), _mm256_set_m128i(q1, q1), 1);
        const __m512i z3 = _mm512_inserti32x4(_mm512_broadcast_i32x4(q1), _mm_set1_epi32((int)qh), 3);
        const int8_t *yq = y[i].qs;
        __m512i acc = infer__tern_neg_bsums512(y[i].bsums, 2);
        acc = infer__tern_dp512(acc, infer__tern_trits512(z0, m0), _mm512_loadu_si512(yq));
        acc = infer__tern_dp512(acc, infer__tern_trits512(z0, m1), _mm512_loadu_si512(yq + 64));
        acc = infer__tern_dp512(acc, infer__tern_trits512(z2, m2), _mm512_loadu_si512(yq + 128));
        acc = infer__tern_dp512(acc, infer__tern_trits512(z3, m3), _mm512_loadu_si512(yq + 192));
        accf = infer__tern_scale512(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return _mm512_reduce_add_ps(accf);
}
#endif /* INFER__TERN_AVX512 */

#ifdef INFER__TERN_NEON
/* ===================================================================================
 * NEON. Registers hold 16 bytes. ARM has byte shifts and a byte multiply (mod 256), so
 * the fields and the TQ1_0 digit products come out directly; the top trit of a byte q is
 * (q >= 86) + (q >= 171), from two compares.
 * =================================================================================== */
static inline int32x4_t infer__tern_dp16(int32x4_t acc, uint8x16_t u, const int8_t *y) {
    const int8x16_t a = vreinterpretq_s8_u8(u), b = vld1q_s8(y);   /* codes <= 3 are valid int8 */
#ifdef __ARM_FEATURE_DOTPROD
    return vdotq_s32(acc, a, b);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}

static inline int32_t infer__tern_bsum_neon(const int16_t *bsums, int halves) {
    int32x4_t s = vpaddlq_s16(vld1q_s16(bsums));
    if (halves == 2) s = vaddq_s32(s, vpaddlq_s16(vld1q_s16(bsums + 8)));
    return vaddvq_s32(s);
}

/* 128 weights of 2-bit codes (two registers of 16 bytes), fields mapped as in the AVX2 version */
static inline int32x4_t infer__tern_2bit_neon(int32x4_t acc, const uint8_t *q, const int8_t *y, int reversed) {
    const uint8x16_t m3 = vdupq_n_u8(3);
    for (int h = 0; h < 2; h++) {
        const uint8x16_t v = vld1q_u8(q + 16 * h);
        const uint8x16_t f[4] = { vandq_u8(v, m3), vandq_u8(vshrq_n_u8(v, 2), m3), vandq_u8(vshrq_n_u8(v, 4), m3), vshrq_n_u8(v, 6) };
        for (int k = 0; k < 4; k++) acc = infer__tern_dp16(acc, f[k], y + 32 * (reversed ? 3 - k : k) + 16 * h);
    }
    return acc;
}

static float infer__dot_tq2_0_neon_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        int32x4_t acc = vdupq_n_s32(0);
        acc = infer__tern_2bit_neon(acc, b[i].qs, y[i].qs, 0);
        acc = infer__tern_2bit_neon(acc, b[i].qs + 32, y[i].qs + 128, 0);
        const int sumi = vaddvq_s32(acc) - infer__tern_bsum_neon(y[i].bsums, 2);
        s += (float)sumi * (infer__fp16_to_fp32(b[i].d) * y[i].d);
    }
    return s;
}

static float infer__dot_i2_s_neon(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t b = 0; INFER_QK_K * b < n; b++, p += 64) {
        const int halves = n - INFER_QK_K * b < INFER_QK_K ? 1 : 2;
        int32x4_t acc = infer__tern_2bit_neon(vdupq_n_s32(0), p, y[b].qs, 1);
        if (halves == 2) acc = infer__tern_2bit_neon(acc, p + 32, y[b].qs + 128, 1);
        const int sumi = vaddvq_s32(acc) - infer__tern_bsum_neon(y[b].bsums, halves);
        s += (float)sumi * y[b].d;
    }
    return s;
}

/* the top trit of (v * m) mod 256 per byte */
static inline uint8x16_t infer__tern_trits_neon(uint8x16_t v, uint8x16_t m) {
    const uint8x16_t q = vmulq_u8(v, m);
    const int8x16_t ge1 = vreinterpretq_s8_u8(vcgeq_u8(q, vdupq_n_u8(86))), ge2 = vreinterpretq_s8_u8(vcgeq_u8(q, vdupq_n_u8(171)));
    return vreinterpretq_u8_s8(vnegq_s8(vaddq_s8(ge1, ge2)));       /* masks are -1: 0, 1 or 2 */
}

/* qs[0..31] (2 registers) x 3^k: weights 32k..; qs[32..47] x 3^k: weights 160 + 16k..;
 * qh[0..3] four times x (1 | 3 | 9 | 27): weights 240..255 */
static float infer__dot_tq1_0_neon_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    static const uint8_t tail_mul[16] = { 1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27 };
    const uint8x16_t mt = vld1q_u8(tail_mul);
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        const uint8x16_t a0 = vld1q_u8(b[i].qs), a1 = vld1q_u8(b[i].qs + 16), a2 = vld1q_u8(b[i].qs + 32);
        uint32_t qh;
        memcpy(&qh, b[i].qh, 4);
        const int8_t *yq = y[i].qs;
        int32x4_t acc = vdupq_n_s32(0);
        uint8_t pow3 = 1;
        for (int k = 0; k < 5; k++, pow3 = (uint8_t)(pow3 * 3)) {
            const uint8x16_t m = vdupq_n_u8(pow3);
            acc = infer__tern_dp16(acc, infer__tern_trits_neon(a0, m), yq + 32 * k);
            acc = infer__tern_dp16(acc, infer__tern_trits_neon(a1, m), yq + 32 * k + 16);
            acc = infer__tern_dp16(acc, infer__tern_trits_neon(a2, m), yq + 160 + 16 * k);
        }
        acc = infer__tern_dp16(acc, infer__tern_trits_neon(vreinterpretq_u8_u32(vdupq_n_u32(qh)), mt), yq + 240);
        const int sumi = vaddvq_s32(acc) - infer__tern_bsum_neon(y[i].bsums, 2);
        s += (float)sumi * (infer__fp16_to_fp32(b[i].d) * y[i].d);
    }
    return s;
}
#endif /* INFER__TERN_NEON */

/* ===================================================================================
 * Dispatch: the tiers compiled into this build, best first, then the scalar references
 * (the tests run every tier against the last one).
 * =================================================================================== */
typedef struct { const char *name; infer__dot_fn tq1_0, tq2_0, i2_s; } infer__tern_tier;
static const infer__tern_tier infer__tern_tiers[] = {
#ifdef INFER__TERN_AVX512
    { "avx512", infer__dot_tq1_0_avx512_t, infer__dot_tq2_0_avx512_t, infer__dot_i2_s_avx512 },
#endif
#ifdef INFER__TERN_AVX2
    { "avx2", infer__dot_tq1_0_avx2_t, infer__dot_tq2_0_avx2_t, infer__dot_i2_s_avx2 },
#endif
#ifdef INFER__TERN_NEON
    { "neon", infer__dot_tq1_0_neon_t, infer__dot_tq2_0_neon_t, infer__dot_i2_s_neon },
#endif
    { "scalar", infer__dot_tq1_0, infer__dot_tq2_0, infer__dot_i2_s_q8_k },
};
#define INFER__TERN_N_TIERS ((int)(sizeof infer__tern_tiers / sizeof infer__tern_tiers[0]))

/* the fast dot for a ternary type (I2_S: unscaled, against Q8_K), NULL for other types and
 * for TQ1_0/TQ2_0 when only the scalar tier exists (the traits table has those) */
static infer__dot_fn infer__ternary_dot(infer_type t) {
    const infer__tern_tier *best = &infer__tern_tiers[0];
    const int simd = INFER__TERN_N_TIERS > 1;
    switch (t) {
    case INFER_TYPE_TQ1_0: return simd ? best->tq1_0 : NULL;
    case INFER_TYPE_TQ2_0: return simd ? best->tq2_0 : NULL;
    case INFER_TYPE_I2_S:  return best->i2_s;
    default:               return NULL;
    }
}

#endif /* INFER_WIP_SIMD_TERNARY_H */
