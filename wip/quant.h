/* ------------------------------------------------------------------------------------------
 * >>quant -- every weight type.
 *
 * A quantized tensor is a sequence of blocks; each block holds a few scales and a run of
 * small integer codes, and value = scale * code (+ min). Every type is described by one row
 * of a traits table: name, block size, bytes per block, and three operations:
 *   dequant  blocks -> f32 (the reference: golden tests compare it bit for bit)
 *   quant    f32 -> blocks
 *   dot      one weight row times one activation row that was itself quantized to the
 *            type's `dot_type` (Q8_0, Q8_1 or Q8_K blocks of int8). Doing the inner products
 *            in integers and applying the two scales once per block is what makes quantized
 *            matmuls cheap; the precise path instead dequantizes rows and dots in f32.
 * ---------------------------------------------------------------------------------------- */
/* Per-type operations, gathered into a traits table indexed by infer_type (implementation part).
 *   dequant: n values (n a multiple of blck) from blocks to f32
 *   quant:   n f32 values to blocks (NULL where there is no quantizer)
 *   dot:     sum_k w[k]*x[k] over n values; w in this type, x already in `dot_type` blocks */
typedef void (*infer__dequant_fn)(const void *src, float *dst, int64_t n);
typedef void (*infer__quant_fn)(const float *src, void *dst, int64_t n);
typedef float (*infer__dot_fn)(int64_t n, const void *w, const void *x);
typedef struct infer__type_traits {
    const char *name;            /* lower-case ggml name: "q4_K", "iq2_xxs", "f16", ... */
    int32_t blck, bytes;         /* elements per block, bytes per block */
    infer__dequant_fn dequant;
    infer__quant_fn quant;
    infer__dot_fn dot;
    infer_type dot_type;         /* INFER_TYPE_F32, _Q8_0, _Q8_1 or _Q8_K */
} infer__type_traits;


/* Q8_0 activation quantizer: d = max|x|/127, q = round(x/d) (roundf: ties away from zero). */
static inline void infer__quant_q8_0(const float *x, void *vy, int64_t n) {
    infer_block_q8_0 *y = (infer_block_q8_0 *)vy;
    for (int64_t i = 0; i < n / INFER_QK8_0; i++) {
        float amax = 0.0f;
        for (int j = 0; j < INFER_QK8_0; j++) { float a = fabsf(x[i * 32 + j]); if (a > amax) amax = a; }
        const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        y[i].d = infer__fp32_to_fp16(d);
        for (int j = 0; j < INFER_QK8_0; j++) y[i].qs[j] = (int8_t)roundf(x[i * 32 + j] * id);
    }
}

/* Q8_1: like Q8_0 plus s = d * sum(q), used against Q4_1/Q5_1 (their min term). */
static inline void infer__quant_q8_1(const float *x, void *vy, int64_t n) {
    infer_block_q8_1 *y = (infer_block_q8_1 *)vy;
    for (int64_t i = 0; i < n / INFER_QK8_0; i++) {
        float amax = 0.0f;
        for (int j = 0; j < INFER_QK8_0; j++) { float a = fabsf(x[i * 32 + j]); if (a > amax) amax = a; }
        const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < INFER_QK8_0; j++) { y[i].qs[j] = (int8_t)roundf(x[i * 32 + j] * id); sum += y[i].qs[j]; }
        y[i].d = infer__fp32_to_fp16(d);
        y[i].s = infer__fp32_to_fp16((float)sum * d);
    }
}

/* Q8_K activation quantizer (256-blocks, f32 scale, 16-element partial sums). */
static inline void infer__quant_q8_k(const float *x, void *vy, int64_t n) {
    infer_block_q8_k *y = (infer_block_q8_k *)vy;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, x += INFER_QK_K) {
        float max = 0, amax = 0;
        for (int j = 0; j < INFER_QK_K; j++) { float ax = fabsf(x[j]); if (ax > amax) { amax = ax; max = x[j]; } }
        if (amax == 0) { memset(&y[i], 0, sizeof y[i]); continue; }
        const float iscale = -127.f / max;
        for (int j = 0; j < INFER_QK_K; j++) { int v = infer__nearest_int(iscale * x[j]); y[i].qs[j] = (int8_t)(v < 127 ? v : 127); }
        for (int j = 0; j < INFER_QK_K / 16; j++) {
            int s = 0; for (int k = 0; k < 16; k++) s += y[i].qs[j * 16 + k];
            y[i].bsums[j] = (int16_t)s;
        }
        y[i].d = 1 / iscale;
    }
}


#include "quant_a.h"
#include "quant_b.h"
#include "quant_c.h"
#include "simd_ternary.h"
#define INFER__HAVE_I2_S   /* (kept while cpu.h still tests for it) */


static const infer__type_traits infer__traits[INFER_TYPE_COUNT] = {
#include "quant_a_traits.inc"
#include "quant_b_traits.inc"
#include "quant_c_traits.inc"
    [INFER_TYPE_Q8_1] = { "q8_1", 32, 36, NULL, infer__quant_q8_1, NULL, INFER_TYPE_Q8_1 },
    [INFER_TYPE_Q8_K] = { "q8_K", 256, 292, NULL, infer__quant_q8_k, NULL, INFER_TYPE_Q8_K },
};

/* I2_S is outside the id range; its rows have 4 codes per byte and no per-block scale. */
static const infer__type_traits *infer__type(infer_type t) {
    if ((unsigned)t < INFER_TYPE_COUNT && infer__traits[t].blck) return &infer__traits[t];
    return NULL;
}

/* The dot product the matmul uses: a SIMD version where one exists for this CPU, else the
 * scalar reference from the traits table (tests compare the two). */
#if !defined(INFER_NO_SIMD)
#include "simd.h"
#else
static infer__dot_fn infer__simd_dot(infer_type t) { (void)t; return NULL; }
#endif
static infer__dot_fn infer__type_dot(infer_type t) {
    infer__dot_fn f = infer__ternary_dot(t);   /* TQ1_0, TQ2_0 (and I2_S): >>ternary */
    if (!f) f = infer__simd_dot(t);
    return f ? f : infer__traits[t].dot;
}

const char *infer_type_name(infer_type t) {
    if (t == INFER_TYPE_I2_S) return "i2_s";
    const infer__type_traits *tt = infer__type(t);
    return tt ? tt->name : "unknown";
}
int infer_type_block(infer_type t) {
    if (t == INFER_TYPE_I2_S) return 128;
    const infer__type_traits *tt = infer__type(t);
    return tt && tt->dequant ? tt->blck : 0;
}
size_t infer_type_row_size(infer_type t, int64_t n) {
    if (t == INFER_TYPE_I2_S) return (size_t)(n / 4);
    const infer__type_traits *tt = infer__type(t);
    return tt ? (size_t)(n / tt->blck) * (size_t)tt->bytes : 0;
}
int infer_type_from_name(const char *name) {
    if (strcmp(name, "i2_s") == 0) return INFER_TYPE_I2_S;
    for (int t = 0; t < INFER_TYPE_COUNT; t++)
        if (infer__traits[t].name && strcmp(infer__traits[t].name, name) == 0) return t;
    return -1;
}

infer_status infer_dequantize(infer_type t, const void *src, float *dst, int64_t n, infer_error *err) {
    const infer__type_traits *tt = infer__type(t);
    if (!tt || !tt->dequant) return infer__fail(err, INFER_ERR_UNSUPPORTED, "no dequantizer for type %s", infer_type_name(t));
    if (n % tt->blck) return infer__fail(err, INFER_ERR_ARG, "%lld values is not a whole number of %s blocks (%d)", (long long)n, tt->name, tt->blck);
    tt->dequant(src, dst, n);
    return INFER_OK;
}
infer_status infer_quantize(infer_type t, const float *src, void *dst, int64_t n, infer_error *err) {
    const infer__type_traits *tt = infer__type(t);
    if (!tt || !tt->quant) return infer__fail(err, INFER_ERR_UNSUPPORTED, "no quantizer for type %s", infer_type_name(t));
    if (n % tt->blck) return infer__fail(err, INFER_ERR_ARG, "%lld values is not a whole number of %s blocks (%d)", (long long)n, tt->name, tt->blck);
    tt->quant(src, dst, n);
    return INFER_OK;
}
