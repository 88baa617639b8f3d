/* ------------------------------------------------------------------------------------------
 * >>simd -- vectorized dot products for the CPU matmul.
 *
 * What: for a weight type t, infer__simd_dot(t) returns a SIMD version of the scalar
 * reference infer__traits[t].dot -- same weight row, same activation format (dot_type),
 * same sum -- or NULL when this build has none, and the matmul then uses the scalar one
 * (quant.h: infer__type_dot). Only the order of float additions may differ, see below.
 *
 * Which code exists is decided by the compiler's target flags (-march=native, -mavx2, ...)
 * at build time, never at run time, so a binary runs only on CPUs that have what it was
 * built for. Tiers, best first; a type missing from a tier falls through to the next:
 *   avx512   AVX-512 F+BW+VL: 512-bit kernels for the types where they measured faster than
 *            the AVX2 ones (the list in infer__simd_dot_avx512, and why, at that tier)
 *   avx2     AVX2 + FMA + F16C: 256-bit kernels for all 19 types in infer__simd_dot_avx2
 *   neon     AArch64 NEON (+ the dot-product extension when present): the float types,
 *            Q8_0, Q4_0, Q4_K and Q6_K, written plainly
 * VNNI (AVX512-VNNI or AVX-VNNI) is used inside the x86 tiers when present. Not used on
 * purpose: AVX512-BF16 (vdpbf16ps multiplies bf16 by bf16, so it would have to round the
 * f32 activations to bf16: a different result from the BF16 reference dot) and AMX.
 *
 * The integer tricks (x86), explained once:
 *   maddubs   vpmaddubsw: 32 unsigned bytes a times 32 signed bytes b; adjacent products
 *             are added in pairs into 16 int16 lanes, SATURATING at +-32767. Every use below
 *             states why its pair sums fit.
 *   madd      vpmaddwd: 16-bit lanes multiplied by 16-bit lanes, adjacent products added
 *             into int32. With all-ones it just widens pairs; with a sub-block scale it
 *             applies the scale on the way (exact: the sums stay far below 2^31).
 *   dpbusd    VNNI vpdpbusd: for each int32 lane, acc += a0*b0 + a1*b1 + a2*b2 + a3*b3 with
 *             a unsigned and b signed bytes, computed exactly (no int16 step, so no
 *             saturation). Without VNNI the same is maddubs + madd(1) + add.
 *   sign trick  both instructions want one unsigned factor. For signed a and b,
 *             a*b = |a| * (b * sign(a)): abs_epi8(a) is |a| (-128 gives 128, still right
 *             as an unsigned byte) and sign_epi8(b, a) negates b where a < 0 and zeroes it
 *             where a == 0. Only b = -128 with a < 0 breaks (the negation wraps); b is the
 *             activation, whose quantizers produce codes in -127..127.
 *   offset codes  a code q stored with an offset (Q4_0: w = (q - 8) d) is dotted as
 *             sum(q*y) - 8*sum(y): the unsigned code feeds maddubs/dpbusd directly, and
 *             sum(y) is a dot with a vector of constant bytes (or Q8_K's bsums).
 *   nibbles   16 bytes -> 32 codes: low nibbles are b & 15; x86 has no byte shift, so the
 *             high nibbles are a 16-bit shift right by 4 followed by & 15, which clears
 *             the bits that came across from the neighbouring byte.
 *   lookups   non-linear 4-bit codes (IQ4, FP4): pshufb (shuffle_epi8) with a 16-byte table
 *             and the nibbles as indices gives the signed level of each code in one step.
 *   bits -> bytes  Q5's fifth bits: bit e of a 32-bit word becomes byte e (0xFF or 0).
 *
 * Exactness. The integer sums are exact. Kernels over 256-element super-blocks reduce them
 * to one integer per super-block and then apply the scales with the very float operations
 * of the scalar code, so they return bit-identical results. The 32-element block types
 * keep 8 or 16 float accumulator lanes (one horizontal sum per block would cost as much as
 * the block), and the float types accumulate in f32 where the reference uses double: those
 * differ from the reference by f32 rounding of the partial sums, measured below 3e-7 of
 * sum |w*x| (the tests allow 2e-6, and 1e-5 for the float types).
 * ---------------------------------------------------------------------------------------- */
#ifndef INFER_WIP_SIMD_H
#define INFER_WIP_SIMD_H

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define INFER__SIMD_AVX2 1
#include <immintrin.h>
#endif
#if defined(INFER__SIMD_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define INFER__SIMD_AVX512 1
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
#define INFER__SIMD_NEON 1
#include <arm_neon.h>
#endif

#ifdef INFER__SIMD_AVX2
/* ===================================================================================
 * x86 helpers (256-bit)
 * =================================================================================== */

static inline float infer__h2f(infer_half h) { return _cvtsh_ss(h); }   /* exact, as the scalar one */

static inline __m256i infer__load256(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline __m128i infer__load128(const void *p) { return _mm_loadu_si128((const __m128i *)p); }

static inline float infer__hsum_ps256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline int32_t infer__hsum_epi32_256(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* acc + (a0*b0 + a1*b1 + a2*b2 + a3*b3) per int32 lane; a unsigned bytes, b signed bytes.
 * The maddubs fallback needs every pair sum a0*b0 + a1*b1 within +-32767. */
static inline __m256i infer__dpbusd256(__m256i acc, __m256i a, __m256i b) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(acc, a, b);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(acc, a, b);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)));
#endif
}

/* The same for signed a and b (the sign trick; b must not hold -128). With |a| <= 128 and
 * |b| <= 127 a pair sum is at most 2*128*127 = 32512: the maddubs fallback cannot saturate. */
static inline __m256i infer__dpbssd256(__m256i acc, __m256i a, __m256i b) {
    return infer__dpbusd256(acc, _mm256_abs_epi8(a), _mm256_sign_epi8(b, a));
}

/* maddubs(a, b) then madd with the 16-bit scales sc: sum over 4 bytes of sc*a*b per int32
 * lane. Used where each 16 or 32 codes carry their own integer scale (k-quants). */
static inline __m256i infer__dot_scaled256(__m256i a, __m256i b, __m256i sc) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), sc);
}

/* 16 bytes of packed nibbles -> 32 codes 0..15: byte j of the result is the low nibble of
 * byte j (j < 16), byte 16 + j the high nibble of byte j. */
static inline __m256i infer__nibbles256(const uint8_t *p) {
    const __m128i q = infer__load128(p), m = _mm_set1_epi8(15);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
}

/* Bit e of `bits` -> byte e: 0xFF when set, 0 when clear. AVX512BW has it as one
 * instruction; otherwise every byte picks the byte of `bits` it needs (shuffle), keeps
 * its own bit (and) and compares it with that bit. */
static inline __m256i infer__bits_to_bytes256(uint32_t bits) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
    return _mm256_movm_epi8((__mmask32)bits);
#else
    const __m256i pick = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), pick);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
#endif
}

/* A 16-entry signed byte table in both 128-bit halves, for pshufb lookups. */
static inline __m256i infer__table256(const int8_t *t16) { return _mm256_broadcastsi128_si256(infer__load128(t16)); }

/* Scales of a 32-code chunk made of two 16-element sub-blocks j, j+1: int16 lanes 0..7
 * hold s[j], lanes 8..15 s[j+1]. s16 = the 16 signed byte scales in both 128-bit halves;
 * pshufb copies byte j (low half) or j+1 (high half) into both bytes of every 16-bit
 * lane, and the arithmetic shift right by 8 sign-extends it. */
static inline __m256i infer__scale_pair256(__m256i s16, int j) {
    const __m256i idx = _mm256_add_epi8(_mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
                                        _mm256_set1_epi8((char)j));
    return _mm256_srai_epi16(_mm256_shuffle_epi8(s16, idx), 8);
}

/* sum_j sc[j] * bsums[j] over the 16 sub-blocks of a Q8_K block (sc: 16 signed bytes). */
static inline int32_t infer__bsums_dot256(const int16_t *bsums, __m128i sc) {
    return infer__hsum_epi32_256(_mm256_madd_epi16(infer__load256(bsums), _mm256_cvtepi8_epi16(sc)));
}

/* The 16 signed 6-bit scales of Q3_K (see infer__q3k_scale), four per 32-bit lane. With
 * w0 w1 w2 the three words of the 12 scale bytes:
 *   sc[0..3]   = w0 & 0x0f..      | (w2      & 0x03..) << 4
 *   sc[4..7]   = w1 & 0x0f..      | (w2 >> 2 & 0x03..) << 4
 *   sc[8..11]  = w0 >> 4 & 0x0f.. | (w2 >> 4 & 0x03..) << 4
 *   sc[12..15] = w1 >> 4 & 0x0f.. | (w2 >> 6 & 0x03..) << 4,   each then - 32.
 * One load of the block's last 16 bytes (2 bytes of qs, the scales, d) and a 2-byte shift
 * put w0 w1 w2 in lanes 0 1 2. Per-lane shifts (srlv) do the four rows at once. */
static inline __m128i infer__q3k_scales128(const infer_block_q3_k *b) {
    INFER__STATIC_ASSERT(offsetof(infer_block_q3_k, scales) + 14 == sizeof(infer_block_q3_k), "q3_K: scales, then d, at the end");
    const __m128i h = _mm_srli_si128(infer__load128((const uint8_t *)b + sizeof *b - 16), 2);
    const __m128i lo = _mm_srlv_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 1, 0)), _mm_setr_epi32(0, 0, 4, 4));
    const __m128i hi = _mm_srlv_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(2, 2, 2, 2)), _mm_setr_epi32(0, 2, 4, 6));
    const __m128i v = _mm_or_si128(_mm_and_si128(lo, _mm_set1_epi8(0x0f)), _mm_slli_epi32(_mm_and_si128(hi, _mm_set1_epi8(3)), 4));
    return _mm_sub_epi8(v, _mm_set1_epi8(32));
}

/* The 8 six-bit scales and 8 mins of Q4_K/Q5_K (see infer__k4_scale_min), four per 32-bit
 * lane. The block's first 16 bytes are d, dmin and the 12 scale bytes, i.e. the words
 * w0 w1 w2 of the scales sit in int32 lanes 1, 2, 3 of one load:
 *   sc[0..3] = w0 & 0x3f..,   sc[4..7] = w2 & 0x0f.. | (w0 >> 2) & 0x30..   (bits 6-7 -> 4-5)
 *   m[0..3]  = w1 & 0x3f..,   m[4..7]  = w2 >> 4 & 0x0f.. | (w1 >> 2) & 0x30..
 * Returned as bytes: scales in 0..7, mins in 8..15. */
static inline __m128i infer__k4_scales128(const void *block) {
    const __m128i h = infer__load128(block);
    const __m128i a = _mm_srlv_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(3, 2, 3, 1)), _mm_setr_epi32(0, 0, 0, 4));
    const __m128i b = _mm_srli_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(2, 2, 1, 1)), 2);
    const __m128i lo = _mm_and_si128(a, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    return _mm_or_si128(lo, _mm_and_si128(b, _mm_setr_epi32(0, 0x30303030, 0, 0x30303030)));
}

/* sum_j m[j] * (bsums[2j] + bsums[2j+1]): the mins (bytes 8..15 of k4) paired with
 * the 16-element partial sums of Q8_K (each min covers two of them). */
static inline int32_t infer__k4_msum256(__m128i k4, const int16_t *bsums) {
    const __m128i m = _mm_unpackhi_epi8(k4, k4);                 /* m0 m0 m1 m1 ... m7 m7 */
    return infer__hsum_epi32_256(_mm256_madd_epi16(infer__load256(bsums), _mm256_cvtepu8_epi16(m)));
}

/* ===================================================================================
 * x86 AVX2 kernels. Each mirrors the scalar dot of the same name in quant_a.h /
 * quant_b.h; the layouts are drawn there.
 * =================================================================================== */

/* ---- float types: f32 FMA into 4 x 8 lanes, scalar tail ---- */

static float infer__dot_f32_avx2(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc[0]);
    float s = infer__hsum_ps256(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* 8 halves -> 8 floats (vcvtph2ps, exact). */
static inline __m256 infer__f16x8(const infer_half *p) { return _mm256_cvtph_ps(infer__load128(p)); }
/* 8 bf16 -> 8 floats: a bf16 is the top half of an f32, so widen and shift left by 16. */
static inline __m256 infer__bf16x8(const infer_bf16 *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(infer__load128(p)), 16));
}

static float infer__dot_f16_avx2(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(infer__f16x8(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(infer__f16x8(a + i), _mm256_loadu_ps(b + i), acc[0]);
    float s = infer__hsum_ps256(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) s += infer__h2f(a[i]) * b[i];
    return s;
}

static float infer__dot_bf16_avx2(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(infer__bf16x8(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(infer__bf16x8(a + i), _mm256_loadu_ps(b + i), acc[0]);
    float s = infer__hsum_ps256(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) s += infer__bf16_to_fp32(a[i]) * b[i];
    return s;
}

/* ---- 32-element blocks against Q8_0 / Q8_1 ----
 * Per block: 8 int32 partial sums -> float, times d_w*d_x, added into a float accumulator.
 * Each kernel is a block function plus a loop that alternates two accumulators, so two
 * FMA dependency chains overlap (an FMA takes 4 cycles, a block about as long). */

static inline __m256 infer__fmadd_block256(__m256i sumi, float scale, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_set1_ps(scale), acc);
}

#define INFER__TWO_CHAINS256(nb, BLOCK)                                                   \
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();                       \
    int64_t i = 0;                                                                        \
    for (; i + 2 <= (nb); i += 2) { acc0 = BLOCK(i, acc0); acc1 = BLOCK(i + 1, acc1); }   \
    if (i < (nb)) acc0 = BLOCK(i, acc0);                                                  \
    return infer__hsum_ps256(_mm256_add_ps(acc0, acc1))

static inline __m256 infer__q8_0_block256(const infer_block_q8_0 *a, const infer_block_q8_0 *y, __m256 acc) {
    const __m256i s = infer__dpbssd256(_mm256_setzero_si256(), infer__load256(a->qs), infer__load256(y->qs));
    return infer__fmadd_block256(s, infer__h2f(a->d) * infer__h2f(y->d), acc);
}
static float infer__dot_q8_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)w, *y = (const infer_block_q8_0 *)x;
#define INFER__B(i, acc) infer__q8_0_block256(&a[i], &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK8_0, INFER__B);
#undef INFER__B
}

/* sum(q*y) - off*sum(y) for 32 unsigned codes q (off = the code offset, 8 or 16). */
static inline __m256i infer__dot_offset256(__m256i q, __m256i yq, int off) {
    const __m256i s = infer__dpbusd256(_mm256_setzero_si256(), q, yq);
    return _mm256_sub_epi32(s, infer__dpbusd256(_mm256_setzero_si256(), _mm256_set1_epi8((char)off), yq));
}

static inline __m256 infer__q4_0_block256(const infer_block_q4_0 *a, const infer_block_q8_0 *y, __m256 acc) {
    const __m256i s = infer__dot_offset256(infer__nibbles256(a->qs), infer__load256(y->qs), 8);
    return infer__fmadd_block256(s, infer__h2f(a->d) * infer__h2f(y->d), acc);
}
static float infer__dot_q4_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q4_0 *a = (const infer_block_q4_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
#define INFER__B(i, acc) infer__q4_0_block256(&a[i], &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK4_0, INFER__B);
#undef INFER__B
}

/* Q5 codes: the nibble plus 16 where the element's bit of qh is set. */
static inline __m256i infer__q5_codes256(const uint8_t *qs, const uint8_t *qh4) {
    uint32_t qh; memcpy(&qh, qh4, 4);
    return _mm256_or_si256(infer__nibbles256(qs), _mm256_and_si256(infer__bits_to_bytes256(qh), _mm256_set1_epi8(16)));
}

static inline __m256 infer__q5_0_block256(const infer_block_q5_0 *a, const infer_block_q8_0 *y, __m256 acc) {
    const __m256i s = infer__dot_offset256(infer__q5_codes256(a->qs, a->qh), infer__load256(y->qs), 16);
    return infer__fmadd_block256(s, infer__h2f(a->d) * infer__h2f(y->d), acc);
}
static float infer__dot_q5_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q5_0 *a = (const infer_block_q5_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
#define INFER__B(i, acc) infer__q5_0_block256(&a[i], &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK5_0, INFER__B);
#undef INFER__B
}

/* Q4_1 / Q5_1 against Q8_1: d_w*d_x*sum(q*y) + m*d_x*sum(y). sum(y) is recomputed from
 * the integers (a dot with 1s), as the reference does, not read from Q8_1's fp16 s. */
static inline __m256 infer__affine_block256(__m256i q, const infer_block_q8_1 *y, infer_half d, infer_half m, __m256 acc) {
    const __m256i yq = infer__load256(y->qs), zero = _mm256_setzero_si256();
    const float dy = infer__h2f(y->d);
    acc = infer__fmadd_block256(infer__dpbusd256(zero, q, yq), infer__h2f(d) * dy, acc);
    return infer__fmadd_block256(infer__dpbusd256(zero, _mm256_set1_epi8(1), yq), infer__h2f(m) * dy, acc);
}

static float infer__dot_q4_1_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q4_1 *a = (const infer_block_q4_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
#define INFER__B(i, acc) infer__affine_block256(infer__nibbles256(a[i].qs), &y[i], a[i].d, a[i].m, acc)
    INFER__TWO_CHAINS256(n / INFER_QK4_1, INFER__B);
#undef INFER__B
}

static float infer__dot_q5_1_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q5_1 *a = (const infer_block_q5_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
#define INFER__B(i, acc) infer__affine_block256(infer__q5_codes256(a[i].qs, a[i].qh), &y[i], a[i].d, a[i].m, acc)
    INFER__TWO_CHAINS256(n / INFER_QK5_1, INFER__B);
#undef INFER__B
}

/* Non-linear 4-bit codes: table lookup, then a signed dot (|level| <= 127). The scale
 * d_w*d_x comes from the caller (IQ4_NL: fp16 d; MXFP4: E8M0 exponent). */
static inline __m256 infer__lut4_block256(__m256i tbl, const uint8_t *qs, const infer_block_q8_0 *y, float dw, __m256 acc) {
    const __m256i v = _mm256_shuffle_epi8(tbl, infer__nibbles256(qs));
    const __m256i s = infer__dpbssd256(_mm256_setzero_si256(), v, infer__load256(y->qs));
    return infer__fmadd_block256(s, dw * infer__h2f(y->d), acc);
}

static float infer__dot_iq4_nl_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_nl *a = (const infer_block_iq4_nl *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m256i tbl = infer__table256(infer__kvalues_iq4nl);
#define INFER__B(i, acc) infer__lut4_block256(tbl, a[i].qs, &y[i], infer__h2f(a[i].d), acc)
    INFER__TWO_CHAINS256(n / INFER_QK4_NL, INFER__B);
#undef INFER__B
}

/* MXFP4: the doubled E2M1 table and the halved E8M0 scale. */
static float infer__dot_mxfp4_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_mxfp4 *a = (const infer_block_mxfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m256i tbl = infer__table256(infer__kvalues_fp4);
#define INFER__B(i, acc) infer__lut4_block256(tbl, a[i].qs, &y[i], infer__e8m0_to_fp32_half(a[i].e), acc)
    INFER__TWO_CHAINS256(n / INFER_QK_MXFP4, INFER__B);
#undef INFER__B
}

/* UE4M3 byte -> half its value, from bits (no ldexpf): bit 7 is ignored as in the scalar
 * helper, 0x00 and 0x7F read as 0; normal: (1 + m/8) 2^(e-7) / 2 has f32 exponent field
 * e + 119 and mantissa m << 20; subnormal (e = 0): m * 2^-10. */
static inline float infer__ue4m3_half(uint8_t x) {
    const uint32_t e = (x >> 3) & 15, m = x & 7;
    if (x == 0 || x == 0x7F) return 0.0f;
    return e ? infer__fp32_from_bits((e + 119) << 23 | m << 20) : (float)m * (1.0f / 1024.0f);
}

/* NVFP4 against two Q8_0 blocks. Sub-block s (16 elements) is qs[8s..8s+7]: low nibbles
 * are its elements 0..7, high nibbles 8..15. Nibble-splitting 16 bytes (sub-blocks 2b,
 * 2b+1) gives lo = [lo(s0) lo(s1)], hi = [hi(s0) hi(s1)]; unpacking their 64-bit halves
 * puts the 32 codes in element order, matching Q8_0 block b. Int32 lanes 0..3 then
 * belong to sub-block 2b and lanes 4..7 to 2b+1, each with its own UE4M3 scale. */
static inline __m256 infer__nvfp4_half256(__m256i tbl, const uint8_t *qs16, const uint8_t *d2, const infer_block_q8_0 *y, __m256 acc) {
    const __m128i q = infer__load128(qs16), m4 = _mm_set1_epi8(15);
    const __m128i lo = _mm_and_si128(q, m4), hi = _mm_and_si128(_mm_srli_epi16(q, 4), m4);
    const __m256i c = _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
    const __m256i s = infer__dpbssd256(_mm256_setzero_si256(), _mm256_shuffle_epi8(tbl, c), infer__load256(y->qs));
    const float dy = infer__h2f(y->d);
    const __m256 sc = _mm256_set_m128(_mm_set1_ps(infer__ue4m3_half(d2[1]) * dy), _mm_set1_ps(infer__ue4m3_half(d2[0]) * dy));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), sc, acc);
}
static float infer__dot_nvfp4_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_nvfp4 *a = (const infer_block_nvfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m256i tbl = infer__table256(infer__kvalues_fp4);
#define INFER__B(i, acc) infer__nvfp4_half256(tbl, a[(i) / 2].qs + 16 * ((i) % 2), a[(i) / 2].d + 2 * ((i) % 2), &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK8_0, INFER__B);
#undef INFER__B
}

/* ---- 256-element super-blocks against Q8_K ----
 * One integer sum per super-block, then the scalar code's float formula. */

/* Q2_K: codes 0..3 (pair sums <= 2*3*127), scale pair per 32 codes; the mins use bsums. */
static float infer__dot_q2_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m3 = _mm256_set1_epi8(3);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sm = infer__load128(b->scales), m4 = _mm_set1_epi8(15);
        const __m128i sc = _mm_and_si128(sm, m4), mn = _mm_and_si128(_mm_srli_epi16(sm, 4), m4);
        const __m256i s16 = _mm256_broadcastsi128_si256(sc);
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            __m256i q = infer__load256(b->qs + 32 * h);
            for (int k = 0; k < 4; k++, q = _mm256_srli_epi16(q, 2)) {
                const __m256i yq = infer__load256(a->qs + 128 * h + 32 * k);
                acc = _mm256_add_epi32(acc, infer__dot_scaled256(_mm256_and_si256(q, m3), yq, infer__scale_pair256(s16, 8 * h + 2 * k)));
            }
        }
        const int isum = infer__hsum_epi32_256(acc), msum = infer__bsums_dot256(a->bsums, mn);
        sum += a->d * (infer__h2f(b->d) * (float)isum - infer__h2f(b->dmin) * (float)msum);
    }
    return sum;
}

/* Q3_K: code = crumb + 4*hbit in 0..7, value = code - 4, so
 * isum = sum_j sc_j * (sum code*y - 4*bsum_j). The hmask bit of element 128h + 32k + l
 * is bit 4h+k of hmask[l]: shift the 32 mask bytes right once per step and keep bit 0. */
static float infer__dot_q3_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__q3k_scales128(b);
        const __m256i s16 = _mm256_broadcastsi128_si256(sc);
        __m256i hm = infer__load256(b->hmask), acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            __m256i q = infer__load256(b->qs + 32 * h);
            for (int k = 0; k < 4; k++, q = _mm256_srli_epi16(q, 2), hm = _mm256_srli_epi16(hm, 1)) {
                const __m256i hb = _mm256_slli_epi16(_mm256_and_si256(hm, one), 2);
                const __m256i c = _mm256_or_si256(_mm256_and_si256(q, m3), hb);
                const __m256i yq = infer__load256(a->qs + 128 * h + 32 * k);
                acc = _mm256_add_epi32(acc, infer__dot_scaled256(c, yq, infer__scale_pair256(s16, 8 * h + 2 * k)));
            }
        }
        const int isum = infer__hsum_epi32_256(acc) - 4 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* Q4_K / Q5_K: 64 codes per 32 bytes of qs (low nibbles: sub-block 2g, high: 2g+1), one
 * scale per 32 codes; Q5_K adds 16 where bit j of qh[l] is set (j = sub-block), taken
 * like Q3_K's hmask. Pair sums <= 2*31*127. The scale of sub-block j is broadcast from
 * the 16-bit scale vector by pshufb (bytes 2j, 2j+1 into every 16-bit lane). */
static inline float infer__dot_k4_block_avx2(const void *block, const uint8_t *qs, const uint8_t *qh,
                                            float d, float dmin, const infer_block_q8_k *a) {
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
    const __m128i k4 = infer__k4_scales128(block);
    const __m256i s16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(k4));
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    __m256i hm = qh ? infer__load256(qh) : _mm256_setzero_si256();
    for (int g = 0; g < 4; g++) {
        const __m256i q = infer__load256(qs + 32 * g);
        __m256i c0 = _mm256_and_si256(q, m4), c1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        if (qh) {
            c0 = _mm256_or_si256(c0, _mm256_slli_epi16(_mm256_and_si256(hm, one), 4));
            c1 = _mm256_or_si256(c1, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, 1), one), 4));
            hm = _mm256_srli_epi16(hm, 2);
        }
        const __m256i sc0 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short)(0x0100 + 0x0202 * (2 * g))));
        const __m256i sc1 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short)(0x0100 + 0x0202 * (2 * g + 1))));
        acc0 = _mm256_add_epi32(acc0, infer__dot_scaled256(c0, infer__load256(a->qs + 64 * g), sc0));
        acc1 = _mm256_add_epi32(acc1, infer__dot_scaled256(c1, infer__load256(a->qs + 64 * g + 32), sc1));
    }
    const int isum = infer__hsum_epi32_256(_mm256_add_epi32(acc0, acc1)), msum = infer__k4_msum256(k4, a->bsums);
    return a->d * (d * (float)isum - dmin * (float)msum);
}

static float infer__dot_q4_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block_avx2(b, b->qs, NULL, infer__h2f(b->d), infer__h2f(b->dmin), a);
    return sum;
}

static float infer__dot_q5_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q5_k *b = (const infer_block_q5_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block_avx2(b, b->qs, b->qh, infer__h2f(b->d), infer__h2f(b->dmin), a);
    return sum;
}

/* Q6_K: per 128-element half, ql0 = ql[64h..+31], ql1 = ql[64h+32..+63], qh = qh[32h..+31].
 * Chunk k (elements 32k..32k+31 of the half) = nibble k>>1 of ql(k&1) | bits 2k..2k+1 of
 * qh moved to bits 4..5; codes 0..63 (pair sums <= 2*63*127), value = code - 32. */
static float infer__dot_q6_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__load128(b->scales);
        const __m256i s16 = _mm256_broadcastsi128_si256(sc);
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i l0 = infer__load256(b->ql + 64 * h), l1 = infer__load256(b->ql + 64 * h + 32);
            const __m256i qh = infer__load256(b->qh + 32 * h);
            const __m256i c[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30)),
                _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30)),
            };
            for (int k = 0; k < 4; k++) {
                const __m256i yq = infer__load256(a->qs + 128 * h + 32 * k);
                acc = _mm256_add_epi32(acc, infer__dot_scaled256(c[k], yq, infer__scale_pair256(s16, 8 * h + 2 * k)));
            }
        }
        const int isum = infer__hsum_epi32_256(acc) - 32 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* IQ4_XS: IQ4_NL lookups per 32-element sub-block, signed levels through the sign trick
 * (pair sums <= 2*127*127 = 32258), 6-bit signed sub-block scales. */
static float infer__dot_iq4_xs_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i tbl = infer__table256(infer__kvalues_iq4nl);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        __m256i acc = _mm256_setzero_si256();
        for (int j = 0; j < 8; j++) {
            const __m256i v = _mm256_shuffle_epi8(tbl, infer__nibbles256(b->qs + 16 * j));
            const __m256i yq = infer__load256(a->qs + 32 * j);
            const __m256i sc = _mm256_set1_epi16((short)infer__iq4xs_scale(b, j));
            acc = _mm256_add_epi32(acc, infer__dot_scaled256(_mm256_abs_epi8(v), _mm256_sign_epi8(yq, v), sc));
        }
        sum += infer__h2f(b->d) * a->d * (float)infer__hsum_epi32_256(acc);
    }
    return sum;
}

/* sum of the 16 bsums of a Q8_K block = sum of its 256 codes. */
static inline int32_t infer__bsums_total256(const int16_t *bsums) {
    return infer__hsum_epi32_256(_mm256_madd_epi16(infer__load256(bsums), _mm256_set1_epi16(1)));
}

/* TQ2_0: 2-bit codes 0..2 laid out like Q2_K's; sum((c - 1) y) = sum(c y) - sum(y). */
static float infer__dot_tq2_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m3 = _mm256_set1_epi8(3);
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            __m256i q = infer__load256(b[i].qs + 32 * h);
            for (int k = 0; k < 4; k++, q = _mm256_srli_epi16(q, 2))
                acc = infer__dpbusd256(acc, _mm256_and_si256(q, m3), infer__load256(a[i].qs + 128 * h + 32 * k));
        }
        const int sumi = infer__hsum_epi32_256(acc) - infer__bsums_total256(a[i].bsums);
        s += (float)sumi * (infer__h2f(b[i].d) * a[i].d);
    }
    return s;
}

/* TQ1_0 trits. Digit k of a byte is the top trit of the byte times 3^k modulo 256:
 *   u8(byte * 3^k): bytes multiplied as 16-bit lanes, even and odd bytes separately so no
 *                   carry crosses into the neighbour (mul_u8 below);
 *   top trit t = (3q) >> 8 = (q >= 86) + (q >= 171): two unsigned compares (max == q).
 * Per block, 8 vectors of 32 trits in element order:
 *   qs[0..31] times 3^0..3^4                    -> elements   0..159
 *   qs[32..47] times (1 | 3) and (9 | 27)        -> elements 160..223 (one digit per half)
 *   qs[32..47] times 81 | qh[0..3] x4 times 1,3,9,27 -> elements 224..239 | 240..255 */
static inline __m256i infer__mul_u8_256(__m256i v, __m256i m) {
    const __m256i lo = _mm256_mullo_epi16(v, _mm256_and_si256(m, _mm256_set1_epi16(0x00FF)));
    const __m256i hi = _mm256_mullo_epi16(_mm256_and_si256(v, _mm256_set1_epi16((short)0xFF00)), _mm256_srli_epi16(m, 8));
    return _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi16(0x00FF)), hi);
}
static inline __m256i infer__top_trit256(__m256i q) {
    const __m256i ge1 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8(86)), q);
    const __m256i ge2 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8((char)171)), q);
    return _mm256_sub_epi8(_mm256_sub_epi8(_mm256_setzero_si256(), ge1), ge2);
}

static float infer__dot_tq1_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i pow3[5] = { _mm256_set1_epi8(1), _mm256_set1_epi8(3), _mm256_set1_epi8(9), _mm256_set1_epi8(27), _mm256_set1_epi8(81) };
    const __m256i p01 = _mm256_set_m128i(_mm_set1_epi8(3), _mm_set1_epi8(1));
    const __m256i p23 = _mm256_set_m128i(_mm_set1_epi8(27), _mm_set1_epi8(9));
    const __m256i ptail = _mm256_set_m128i(_mm_setr_epi8(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27), _mm_set1_epi8(81));
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        const __m256i q0 = infer__load256(b[i].qs);
        const __m256i q1 = _mm256_broadcastsi128_si256(infer__load128(b[i].qs + 32));
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        const __m256i qt = _mm256_set_m128i(_mm_set1_epi32((int)qh), infer__load128(b[i].qs + 32));
        __m256i v[8];
        for (int k = 0; k < 5; k++) v[k] = infer__mul_u8_256(q0, pow3[k]);
        v[5] = infer__mul_u8_256(q1, p01);
        v[6] = infer__mul_u8_256(q1, p23);
        v[7] = infer__mul_u8_256(qt, ptail);
        __m256i acc = _mm256_setzero_si256();
        for (int k = 0; k < 8; k++) acc = infer__dpbusd256(acc, infer__top_trit256(v[k]), infer__load256(a[i].qs + 32 * k));
        const int sumi = infer__hsum_epi32_256(acc) - infer__bsums_total256(a[i].bsums);
        s += (float)sumi * (infer__h2f(b[i].d) * a[i].d);
    }
    return s;
}

static infer__dot_fn infer__simd_dot_avx2(infer_type t) {
    switch (t) {
    case INFER_TYPE_F32:    return infer__dot_f32_avx2;
    case INFER_TYPE_F16:    return infer__dot_f16_avx2;
    case INFER_TYPE_BF16:   return infer__dot_bf16_avx2;
    case INFER_TYPE_Q8_0:   return infer__dot_q8_0_avx2;
    case INFER_TYPE_Q4_0:   return infer__dot_q4_0_avx2;
    case INFER_TYPE_Q4_1:   return infer__dot_q4_1_avx2;
    case INFER_TYPE_Q5_0:   return infer__dot_q5_0_avx2;
    case INFER_TYPE_Q5_1:   return infer__dot_q5_1_avx2;
    case INFER_TYPE_IQ4_NL: return infer__dot_iq4_nl_avx2;
    case INFER_TYPE_MXFP4:  return infer__dot_mxfp4_avx2;
    case INFER_TYPE_NVFP4:  return infer__dot_nvfp4_avx2;
    case INFER_TYPE_Q2_K:   return infer__dot_q2_k_avx2;
    case INFER_TYPE_Q3_K:   return infer__dot_q3_k_avx2;
    case INFER_TYPE_Q4_K:   return infer__dot_q4_k_avx2;
    case INFER_TYPE_Q5_K:   return infer__dot_q5_k_avx2;
    case INFER_TYPE_Q6_K:   return infer__dot_q6_k_avx2;
    case INFER_TYPE_IQ4_XS: return infer__dot_iq4_xs_avx2;
    case INFER_TYPE_TQ1_0:  return infer__dot_tq1_0_avx2;
    case INFER_TYPE_TQ2_0:  return infer__dot_tq2_0_avx2;
    default:                return NULL;
    }
}
#endif /* INFER__SIMD_AVX2 */

#ifdef INFER__SIMD_AVX512
/* ===================================================================================
 * x86 AVX-512 kernels (F + BW + VL). Same maths as the AVX2 ones, twice the width:
 * two 32-element blocks, or 64 codes of a super-block, per instruction. Scales of the
 * parts of a vector are selected per 16-bit lane with vpermw.
 * Only kernels that beat their AVX2 version on a Sapphire Rapids core are here: the float
 * types, Q5_1, NVFP4, Q2_K, Q3_K, Q6_K, TQ1_0 (1.1x to 1.7x). For Q8_0, Q4_0, Q4_1, Q5_0,
 * IQ4_NL, MXFP4, Q4_K, Q5_K, IQ4_XS and TQ2_0 the 512-bit versions were no faster or
 * slower (Q8_0: 0.8x): their per-block work is too small to pay for joining two blocks
 * into one vector (two loads and an insert), AVX-512 has no vpsignb for the sign trick,
 * and 512-bit integer instructions issue on fewer ports. Those types use the AVX2 tier.
 * =================================================================================== */

static inline __m512i infer__load512(const void *p) { return _mm512_loadu_si512(p); }
static inline __m512i infer__cat512(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
/* float lanes 0..7 = lo, 8..15 = hi: the scales of two 32-blocks side by side */
static inline __m512 infer__halves512(float lo, float hi) { return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(lo), _mm512_set1_ps(hi)); }

static inline __m512i infer__dpbusd512(__m512i acc, __m512i a, __m512i b) {
#ifdef __AVX512VNNI__
    return _mm512_dpbusd_epi32(acc, a, b);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(a, b), _mm512_set1_epi16(1)));
#endif
}
/* The sign trick without vpsignb (AVX-512 has none): negate b under the mask of a's sign
 * bits. Where a == 0 b stays, but |a| = 0 already zeroes the product. */
static inline __m512i infer__signed_b512(__m512i a, __m512i b) {
    return _mm512_mask_sub_epi8(b, _mm512_movepi8_mask(a), _mm512_setzero_si512(), b);
}
static inline __m512i infer__dpbssd512(__m512i acc, __m512i a, __m512i b) {
    return infer__dpbusd512(acc, _mm512_abs_epi8(a), infer__signed_b512(a, b));
}

/* Two 16-byte nibble runs (two 32-blocks) -> 64 codes in block order [lo0 hi0 | lo1 hi1]:
 * one shift and mask give [lo0 lo1 | hi0 hi1], a 128-bit lane shuffle reorders them. */
static inline __m512i infer__nibbles512(const uint8_t *p0, const uint8_t *p1) {
    const __m256i q = _mm256_set_m128i(infer__load128(p1), infer__load128(p0));
    const __m512i b = _mm512_and_si512(infer__cat512(q, _mm256_srli_epi16(q, 4)), _mm512_set1_epi8(15));
    return _mm512_shuffle_i64x2(b, b, _MM_SHUFFLE(3, 1, 2, 0));
}

/* 16-bit lane scales for 64 codes: idx = lane pattern of sub-block numbers (added to j),
 * s16 = the type's sub-block scales as int16 in the low lanes. */
static inline __m512i infer__scales512(__m512i s16, __m512i pattern, int j) {
    return _mm512_permutexvar_epi16(_mm512_add_epi16(pattern, _mm512_set1_epi16((short)j)), s16);
}
/* Sub-block of each 16-bit lane of 64 codes made of four 16-element sub-blocks (the
 * `pattern` above). */
static const int16_t infer__sub4_lanes[32] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                               2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3 };

/* ---- float types: 4 x 16 lanes, masked loads for the tail ---- */
static inline __mmask16 infer__tail_mask(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1); }
static inline __m512 infer__f16x16(const infer_half *p, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p)); }
static inline __m512 infer__bf16x16(const infer_bf16 *p, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

static float infer__dot_f32_avx512(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; k++) acc[k] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * k), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    for (; i < n; i += 16) {
        const __mmask16 m = infer__tail_mask(n - i);
        acc[0] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc[0]);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

static float infer__dot_f16_avx512(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; k++) acc[k] = _mm512_fmadd_ps(infer__f16x16(a + i + 16 * k, 0xFFFF), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    for (; i < n; i += 16) {
        const __mmask16 m = infer__tail_mask(n - i);
        acc[0] = _mm512_fmadd_ps(infer__f16x16(a + i, m), _mm512_maskz_loadu_ps(m, b + i), acc[0]);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

static float infer__dot_bf16_avx512(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; k++) acc[k] = _mm512_fmadd_ps(infer__bf16x16(a + i + 16 * k, 0xFFFF), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    for (; i < n; i += 16) {
        const __mmask16 m = infer__tail_mask(n - i);
        acc[0] = _mm512_fmadd_ps(infer__bf16x16(a + i, m), _mm512_maskz_loadu_ps(m, b + i), acc[0]);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

/* ---- 32-element blocks: PAIR(i, acc) handles blocks i, i+1 in one 512-bit vector; two
 * chains of pairs, then an odd last block through the 256-bit SINGLE(i, acc). ---- */
#define INFER__PAIRS512(nb, PAIR, SINGLE)                                                    \
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();                           \
    int64_t i = 0;                                                                           \
    for (; i + 4 <= (nb); i += 4) { acc0 = PAIR(i, acc0); acc1 = PAIR(i + 2, acc1); }         \
    if (i + 2 <= (nb)) { acc0 = PAIR(i, acc0); i += 2; }                                     \
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));                               \
    if (i < (nb)) s += infer__hsum_ps256(SINGLE(i, _mm256_setzero_ps()));                    \
    return s

static inline __m512 infer__fmadd_pair512(__m512i sumi, float s0, float s1, __m512 acc) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi), infer__halves512(s0, s1), acc);
}
static inline __m512i infer__y_pair512(const infer_block_q8_0 *y) { return infer__cat512(infer__load256(y[0].qs), infer__load256(y[1].qs)); }

/* Q5 codes of two blocks: nibbles plus 16 under the 64-bit mask of both qh words. */
static inline __m512i infer__q5_codes512(const uint8_t *qs0, const uint8_t *qh0, const uint8_t *qs1, const uint8_t *qh1) {
    uint32_t h0, h1;
    memcpy(&h0, qh0, 4); memcpy(&h1, qh1, 4);
    const __m512i c = infer__nibbles512(qs0, qs1);
    return _mm512_mask_add_epi8(c, (__mmask64)((uint64_t)h1 << 32 | h0), c, _mm512_set1_epi8(16));
}

/* Q5_1 pairs: d*dy*sum(q*y) + m*dy*sum(y), as infer__affine_block256 */
static inline __m512 infer__affine_pair512(__m512i q, const infer_block_q8_1 *y, infer_half d0, infer_half m0,
                                           infer_half d1, infer_half m1, __m512 acc) {
    const __m512i yq = infer__cat512(infer__load256(y[0].qs), infer__load256(y[1].qs)), zero = _mm512_setzero_si512();
    const float dy0 = infer__h2f(y[0].d), dy1 = infer__h2f(y[1].d);
    acc = infer__fmadd_pair512(infer__dpbusd512(zero, q, yq), infer__h2f(d0) * dy0, infer__h2f(d1) * dy1, acc);
    return infer__fmadd_pair512(infer__dpbusd512(zero, _mm512_set1_epi8(1), yq), infer__h2f(m0) * dy0, infer__h2f(m1) * dy1, acc);
}
static float infer__dot_q5_1_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q5_1 *a = (const infer_block_q5_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
#define INFER__P(i, acc) infer__affine_pair512(infer__q5_codes512(a[i].qs, a[i].qh, a[(i) + 1].qs, a[(i) + 1].qh), &y[i], a[i].d, a[i].m, a[(i) + 1].d, a[(i) + 1].m, acc)
#define INFER__S(i, acc) infer__affine_block256(infer__q5_codes256(a[i].qs, a[i].qh), &y[i], a[i].d, a[i].m, acc)
    INFER__PAIRS512(n / INFER_QK5_1, INFER__P, INFER__S);
#undef INFER__P
#undef INFER__S
}

/* NVFP4: one whole block (4 sub-blocks of 16) per vector. Per 128-bit lane, unpacking the
 * 64-bit halves of lo and hi gives sub-blocks [s0 | s2] and [s1 | s3]; a lane shuffle
 * puts them in order s0 s1 s2 s3, matching Q8_0 blocks 2i, 2i+1. Four int32 lanes per
 * sub-block, each group with its own scale. */
static inline __m512 infer__nvfp4_block512(__m512i tbl, const infer_block_nvfp4 *a, const infer_block_q8_0 *y, __m512 acc) {
    const __m256i q = infer__load256(a->qs), m4 = _mm256_set1_epi8(15);
    const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    const __m512i c = infer__cat512(_mm256_unpacklo_epi64(lo, hi), _mm256_unpackhi_epi64(lo, hi));
    const __m512i v = _mm512_shuffle_epi8(tbl, _mm512_shuffle_i64x2(c, c, _MM_SHUFFLE(3, 1, 2, 0)));
    const __m512i s = infer__dpbssd512(_mm512_setzero_si512(), v, infer__y_pair512(y));
    const float dy0 = infer__h2f(y[0].d), dy1 = infer__h2f(y[1].d);
    const __m128 sc4 = _mm_setr_ps(infer__ue4m3_half(a->d[0]) * dy0, infer__ue4m3_half(a->d[1]) * dy0,
                                   infer__ue4m3_half(a->d[2]) * dy1, infer__ue4m3_half(a->d[3]) * dy1);
    const __m512 sc = _mm512_permutexvar_ps(_mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2),
                                            _mm512_castps128_ps512(sc4));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sc, acc);
}
static float infer__dot_nvfp4_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_nvfp4 *a = (const infer_block_nvfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m512i tbl = _mm512_broadcast_i32x4(infer__load128(infer__kvalues_fp4));
    const int64_t nb = n / INFER_QK_NVFP4;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        acc0 = infer__nvfp4_block512(tbl, &a[i], &y[2 * i], acc0);
        acc1 = infer__nvfp4_block512(tbl, &a[i + 1], &y[2 * i + 2], acc1);
    }
    if (i < nb) acc0 = infer__nvfp4_block512(tbl, &a[i], &y[2 * i], acc0);
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* ---- 256-element super-blocks: 64 codes per step, exact integer sums as in AVX2 ---- */

/* Q6_K: per half, ql[64h..64h+63] is [ql0 | ql1] in one load; qh2 = [qh | qh >> 2] puts
 * the bits of chunks 0, 1 at bits 0..1 (and of chunks 2, 3 at bits 4..5) of each half. */
static float infer__dot_q6_k_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30), pat = infer__load512(infer__sub4_lanes);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__load128(b->scales);
        const __m512i s16 = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(sc));
        __m512i acc = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            const __m512i l = infer__load512(b->ql + 64 * h);
            const __m256i qh = infer__load256(b->qh + 32 * h);
            const __m512i qh2 = infer__cat512(qh, _mm256_srli_epi16(qh, 2));
            const __m512i c01 = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(qh2, 4), m30));
            const __m512i c23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(qh2, m30));
            const __m512i p01 = _mm512_maddubs_epi16(c01, infer__load512(a->qs + 128 * h));
            const __m512i p23 = _mm512_maddubs_epi16(c23, infer__load512(a->qs + 128 * h + 64));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, infer__scales512(s16, pat, 8 * h)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, infer__scales512(s16, pat, 8 * h + 4)));
        }
        const int isum = _mm512_reduce_add_epi32(acc) - 32 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* Q2_K / Q3_K: per half, q2 = [qs | qs >> 2]: crumbs of chunks 0, 1 at bits 0..1 and of
 * chunks 2, 3 at bits 4..5. Q3_K's hmask likewise: hm2 = [hm | hm >> 1], bits 4h and
 * 4h+2 of each half. */
static float infer__dot_q2_k_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i m3 = _mm512_set1_epi8(3), pat = infer__load512(infer__sub4_lanes);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sm = infer__load128(b->scales), m4 = _mm_set1_epi8(15);
        const __m128i sc = _mm_and_si128(sm, m4), mn = _mm_and_si128(_mm_srli_epi16(sm, 4), m4);
        const __m512i s16 = _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(sc));
        __m512i acc = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            const __m256i q = infer__load256(b->qs + 32 * h);
            const __m512i q2 = infer__cat512(q, _mm256_srli_epi16(q, 2));
            const __m512i p01 = _mm512_maddubs_epi16(_mm512_and_si512(q2, m3), infer__load512(a->qs + 128 * h));
            const __m512i p23 = _mm512_maddubs_epi16(_mm512_and_si512(_mm512_srli_epi16(q2, 4), m3), infer__load512(a->qs + 128 * h + 64));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, infer__scales512(s16, pat, 8 * h)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, infer__scales512(s16, pat, 8 * h + 4)));
        }
        const int isum = _mm512_reduce_add_epi32(acc), msum = infer__bsums_dot256(a->bsums, mn);
        sum += a->d * (infer__h2f(b->d) * (float)isum - infer__h2f(b->dmin) * (float)msum);
    }
    return sum;
}

static float infer__dot_q3_k_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i m3 = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1), pat = infer__load512(infer__sub4_lanes);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__q3k_scales128(b);
        const __m512i s16 = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(sc));
        const __m256i hm = infer__load256(b->hmask);
        __m512i hm2 = infer__cat512(hm, _mm256_srli_epi16(hm, 1)), acc = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            const __m256i q = infer__load256(b->qs + 32 * h);
            const __m512i q2 = infer__cat512(q, _mm256_srli_epi16(q, 2));
            const __m512i h01 = _mm512_slli_epi16(_mm512_and_si512(hm2, one), 2);
            const __m512i h23 = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hm2, 2), one), 2);
            hm2 = _mm512_srli_epi16(hm2, 4);
            const __m512i c01 = _mm512_or_si512(_mm512_and_si512(q2, m3), h01);
            const __m512i c23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q2, 4), m3), h23);
            const __m512i p01 = _mm512_maddubs_epi16(c01, infer__load512(a->qs + 128 * h));
            const __m512i p23 = _mm512_maddubs_epi16(c23, infer__load512(a->qs + 128 * h + 64));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, infer__scales512(s16, pat, 8 * h)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, infer__scales512(s16, pat, 8 * h + 4)));
        }
        const int isum = _mm512_reduce_add_epi32(acc) - 4 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* TQ1_0: the AVX2 digit extraction on 64 bytes at a time; the top trit from two unsigned
 * compares into masks: t = [q >= 86] + [q >= 171]. */
static inline __m512i infer__mul_u8_512(__m512i v, __m512i m) {
    const __m512i lo = _mm512_mullo_epi16(v, _mm512_and_si512(m, _mm512_set1_epi16(0x00FF)));
    const __m512i hi = _mm512_mullo_epi16(_mm512_and_si512(v, _mm512_set1_epi16((short)0xFF00)), _mm512_srli_epi16(m, 8));
    return _mm512_mask_blend_epi8(0xAAAAAAAAAAAAAAAAull, lo, hi);
}
static inline __m512i infer__top_trit512(__m512i q) {
    const __m512i one = _mm512_set1_epi8(1);
    const __m512i t = _mm512_maskz_mov_epi8(_mm512_cmpge_epu8_mask(q, _mm512_set1_epi8(86)), one);
    return _mm512_mask_add_epi8(t, _mm512_cmpge_epu8_mask(q, _mm512_set1_epi8((char)171)), t, one);
}
static float infer__dot_tq1_0_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i p[4] = {   /* multipliers per 128-bit lane of the four vectors below */
        _mm512_setr_epi32(0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101,
                          0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303),
        _mm512_setr_epi32(0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909,
                          0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b),
        _mm512_setr_epi32(0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151,
                          0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x03030303, 0x03030303, 0x03030303, 0x03030303),
        _mm512_setr_epi32(0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b,
                          0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x01010101, 0x03030303, 0x09090909, 0x1b1b1b1b),
    };
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        /* bytes: [qs0..31 | qs0..31], [same], [qs0..31 | qs32..47 x2], [qs32..47 x2 | qs32..47 | qh x4] */
        const __m256i q0 = infer__load256(b[i].qs);
        const __m128i q1 = infer__load128(b[i].qs + 32);
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        const __m256i q11 = _mm256_broadcastsi128_si256(q1);
        const __m512i v[4] = { infer__cat512(q0, q0), infer__cat512(q0, q0), infer__cat512(q0, q11),
                               infer__cat512(q11, _mm256_set_m128i(_mm_set1_epi32((int)qh), q1)) };
        __m512i acc = _mm512_setzero_si512();
        for (int k = 0; k < 4; k++)
            acc = infer__dpbusd512(acc, infer__top_trit512(infer__mul_u8_512(v[k], p[k])), infer__load512(a[i].qs + 64 * k));
        const int sumi = _mm512_reduce_add_epi32(acc) - infer__bsums_total256(a[i].bsums);
        s += (float)sumi * (infer__h2f(b[i].d) * a[i].d);
    }
    return s;
}

static infer__dot_fn infer__simd_dot_avx512(infer_type t) {
    switch (t) {
    case INFER_TYPE_F32:    return infer__dot_f32_avx512;
    case INFER_TYPE_F16:    return infer__dot_f16_avx512;
    case INFER_TYPE_BF16:   return infer__dot_bf16_avx512;
    case INFER_TYPE_Q5_1:   return infer__dot_q5_1_avx512;
    case INFER_TYPE_NVFP4:  return infer__dot_nvfp4_avx512;
    case INFER_TYPE_Q2_K:   return infer__dot_q2_k_avx512;
    case INFER_TYPE_Q3_K:   return infer__dot_q3_k_avx512;
    case INFER_TYPE_Q6_K:   return infer__dot_q6_k_avx512;
    case INFER_TYPE_TQ1_0:  return infer__dot_tq1_0_avx512;
    default:                return NULL;
    }
}
#endif /* INFER__SIMD_AVX512 */

#ifdef INFER__SIMD_NEON
/* ===================================================================================
 * AArch64 NEON kernels. NEON multiplies signed bytes by signed bytes directly, so none
 * of the x86 sign tricks are needed: with the dot-product extension sdot adds four
 * s8*s8 products into each int32 lane; without it, widening multiplies give int16
 * products (|p| <= 128*128, no overflow) and pairwise add-accumulate widens them.
 * The 256-element kernels take one horizontal sum per sub-block: plain, and exact.
 * =================================================================================== */

/* acc + sums of s8*s8 products of 16 bytes, spread over 4 int32 lanes */
static inline int32x4_t infer__sdot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
#ifdef __ARM_FEATURE_DOTPROD
    return vdotq_s32(acc, a, b);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}
/* 32 signed codes (two vectors) times 32 activation bytes */
static inline int32x4_t infer__sdot32(int8x16_t a0, int8x16_t a1, const int8_t *y) {
    return infer__sdot16(infer__sdot16(vdupq_n_s32(0), a0, vld1q_s8(y)), a1, vld1q_s8(y + 16));
}

static inline float32x4_t infer__f16x4(const infer_half *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
static inline float32x4_t infer__bf16x4(const infer_bf16 *p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }

static float infer__dot_f32_neon(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    float32x4_t acc[4] = { vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0) };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; k++) acc[k] = vfmaq_f32(acc[k], vld1q_f32(a + i + 4 * k), vld1q_f32(b + i + 4 * k));
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], vld1q_f32(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

static float infer__dot_f16_neon(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    float32x4_t acc[4] = { vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0) };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; k++) acc[k] = vfmaq_f32(acc[k], infer__f16x4(a + i + 4 * k), vld1q_f32(b + i + 4 * k));
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], infer__f16x4(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; i++) s += infer__fp16_to_fp32(a[i]) * b[i];
    return s;
}

static float infer__dot_bf16_neon(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    float32x4_t acc[4] = { vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0) };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; k++) acc[k] = vfmaq_f32(acc[k], infer__bf16x4(a + i + 4 * k), vld1q_f32(b + i + 4 * k));
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], infer__bf16x4(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; i++) s += infer__bf16_to_fp32(a[i]) * b[i];
    return s;
}

static float infer__dot_q8_0_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)w, *y = (const infer_block_q8_0 *)x;
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t i = 0; i < n / INFER_QK8_0; i++) {
        const int32x4_t s = infer__sdot32(vld1q_s8(a[i].qs), vld1q_s8(a[i].qs + 16), y[i].qs);
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return vaddvq_f32(acc);
}

/* Q4_0: nibbles (and / shift right by 4: NEON has byte shifts) minus 8 are signed codes. */
static float infer__dot_q4_0_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q4_0 *a = (const infer_block_q4_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t i = 0; i < n / INFER_QK4_0; i++) {
        const uint8x16_t q = vld1q_u8(a[i].qs);
        const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(15))), vdupq_n_s8(8));
        const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), vdupq_n_s8(8));
        const int32x4_t s = infer__sdot32(lo, hi, y[i].qs);
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return vaddvq_f32(acc);
}

/* Q4_K: per 64-element group, low nibbles of 32 bytes = sub-block 2g, high = 2g+1. */
static float infer__dot_q4_k_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const uint8x16_t m4 = vdupq_n_u8(15);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0, msum = 0;
        for (int g = 0; g < 4; g++) {
            const uint8x16_t q0 = vld1q_u8(b->qs + 32 * g), q1 = vld1q_u8(b->qs + 32 * g + 16);
            const int32x4_t lo = infer__sdot32(vreinterpretq_s8_u8(vandq_u8(q0, m4)), vreinterpretq_s8_u8(vandq_u8(q1, m4)), a->qs + 64 * g);
            const int32x4_t hi = infer__sdot32(vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), vreinterpretq_s8_u8(vshrq_n_u8(q1, 4)), a->qs + 64 * g + 32);
            int sc0, m0, sc1, m1;
            infer__k4_scale_min(b->scales, 2 * g, &sc0, &m0);
            infer__k4_scale_min(b->scales, 2 * g + 1, &sc1, &m1);
            isum += sc0 * vaddvq_s32(lo) + sc1 * vaddvq_s32(hi);
            msum += m0 * (a->bsums[4 * g] + a->bsums[4 * g + 1]) + m1 * (a->bsums[4 * g + 2] + a->bsums[4 * g + 3]);
        }
        sum += a->d * (infer__fp16_to_fp32(b->d) * (float)isum - infer__fp16_to_fp32(b->dmin) * (float)msum);
    }
    return sum;
}

/* Q6_K: chunk k of half h, 16 bytes at a time (m = 0, 1): nibble k>>1 of ql(k&1) with
 * bits 2k..2k+1 of qh as bits 4..5, minus 32: signed codes of sub-block 8h + 2k + m. */
static float infer__dot_q6_k_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++)
                for (int m = 0; m < 2; m++) {
                    const uint8x16_t l = vld1q_u8(b->ql + 64 * h + 32 * (k & 1) + 16 * m);
                    const uint8x16_t hb = vld1q_u8(b->qh + 32 * h + 16 * m);
                    const uint8x16_t lo4 = k >> 1 ? vshrq_n_u8(l, 4) : vandq_u8(l, vdupq_n_u8(15));
                    const uint8x16_t hi2 = vandq_u8(vshlq_u8(hb, vdupq_n_s8((int8_t)(4 - 2 * k))), vdupq_n_u8(0x30));
                    const int8x16_t c = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo4, hi2)), vdupq_n_s8(32));
                    const int32x4_t s = infer__sdot16(vdupq_n_s32(0), c, vld1q_s8(a->qs + 128 * h + 32 * k + 16 * m));
                    isum += b->scales[8 * h + 2 * k + m] * vaddvq_s32(s);
                }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}

static infer__dot_fn infer__simd_dot_neon(infer_type t) {
    switch (t) {
    case INFER_TYPE_F32:  return infer__dot_f32_neon;
    case INFER_TYPE_F16:  return infer__dot_f16_neon;
    case INFER_TYPE_BF16: return infer__dot_bf16_neon;
    case INFER_TYPE_Q8_0: return infer__dot_q8_0_neon;
    case INFER_TYPE_Q4_0: return infer__dot_q4_0_neon;
    case INFER_TYPE_Q4_K: return infer__dot_q4_k_neon;
    case INFER_TYPE_Q6_K: return infer__dot_q6_k_neon;
    default:              return NULL;
    }
}
#endif /* INFER__SIMD_NEON */

/* ===================================================================================
 * Dispatch. Each tier is a lookup by type; infer__simd_tiers lists the tiers compiled
 * into this build, best first (the tests check every tier against the scalar dots).
 * =================================================================================== */
#define INFER__HAVE_SIMD_TIERS 1
typedef infer__dot_fn (*infer__simd_tier_fn)(infer_type t);
typedef struct { const char *name; infer__simd_tier_fn lookup; } infer__simd_tier;
static const infer__simd_tier infer__simd_tiers[] = {
#ifdef INFER__SIMD_AVX512
    { "avx512", infer__simd_dot_avx512 },
#endif
#ifdef INFER__SIMD_AVX2
    { "avx2", infer__simd_dot_avx2 },
#endif
#ifdef INFER__SIMD_NEON
    { "neon", infer__simd_dot_neon },
#endif
    { NULL, NULL }
};

static infer__dot_fn infer__simd_dot(infer_type t) {
    for (const infer__simd_tier *k = infer__simd_tiers; k->name; k++) {
        infer__dot_fn f = k->lookup(t);
        if (f) return f;
    }
    return NULL;
}

#endif
