/* tests.c -- infer's tests.  ./tests [substring ...] runs the tests whose name contains any
 * of the substrings (all tests when none is given); the last line is "N passed, N failed".
 * Tests that need ../shared print a SKIP line when it is absent. */
#define INFER_IMPLEMENTATION
#include "infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the harness ---- */
static int t_failed;         /* checks failed in the current test */
static int t_skipped;

#define CHECK(cond) do { if (!(cond)) { printf("    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); t_failed++; } } while (0)
#define CHECK_MSG(cond, ...) do { if (!(cond)) { printf("    %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); t_failed++; } } while (0)
#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); if (!(fabs(a_ - b_) <= (tol))) { printf("    %s:%d: %s = %.9g, expected %.9g +- %g\n", __FILE__, __LINE__, #a, a_, b_, (double)(tol)); t_failed++; } } while (0)
#define SKIP(...) do { printf("  SKIP: "); printf(__VA_ARGS__); printf("\n"); t_skipped = 1; return; } while (0)

#define SHARED "../shared"

static int file_exists(const char *p) { FILE *f = fopen(p, "rb"); if (f) fclose(f); return f != NULL; }

static void *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); fclose(f); return NULL; }
    buf[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

/* ---- GGUF parser: valid files, truncation, corruption ---- */

/* a tiny GGUF builder for hand-made test files */
typedef struct { uint8_t *p; size_t n, cap; } buf_t;
static void b_put(buf_t *b, const void *d, size_t n) {
    if (b->n + n > b->cap) { b->cap = (b->n + n) * 2 + 64; b->p = realloc(b->p, b->cap); }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void b_u32(buf_t *b, uint32_t v) { b_put(b, &v, 4); }
static void b_u64(buf_t *b, uint64_t v) { b_put(b, &v, 8); }
static void b_str(buf_t *b, const char *s) { b_u64(b, strlen(s)); b_put(b, s, strlen(s)); }
static void b_kv_u32(buf_t *b, const char *k, uint32_t v) { b_str(b, k); b_u32(b, INFER_GGUF_U32); b_u32(b, v); }
static void b_kv_str(buf_t *b, const char *k, const char *v) { b_str(b, k); b_u32(b, INFER_GGUF_STRING); b_str(b, v); }
static void b_pad(buf_t *b, size_t a) { static const uint8_t z[64]; while (b->n % a) b_put(b, z, 1); }

/* a small valid file: 3 kvs (one a string array), 2 f32 tensors */
static buf_t make_gguf(void) {
    buf_t b = { 0 };
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, 2); b_u64(&b, 3);
    b_kv_str(&b, "general.architecture", "llama");
    b_kv_u32(&b, "general.alignment", 32);
    b_str(&b, "tokenizer.ggml.tokens"); b_u32(&b, INFER_GGUF_ARRAY); b_u32(&b, INFER_GGUF_STRING); b_u64(&b, 2); b_str(&b, "a"); b_str(&b, "bc");
    b_str(&b, "t0"); b_u32(&b, 2); b_u64(&b, 4); b_u64(&b, 2); b_u32(&b, INFER_TYPE_F32); b_u64(&b, 0);
    b_str(&b, "t1"); b_u32(&b, 1); b_u64(&b, 8); b_u32(&b, INFER_TYPE_F32); b_u64(&b, 32);
    b_pad(&b, 32);
    float data[16];
    for (int i = 0; i < 16; i++) data[i] = (float)i;
    b_put(&b, data, 32);      /* t0: 8 floats */
    b_put(&b, data, 32);      /* t1: 8 floats */
    return b;
}

static void test_gguf_valid(void) {
    buf_t b = make_gguf();
    infer_gguf g;
    infer_error err;
    CHECK(infer_gguf_parse(&g, b.p, b.n, &err) == INFER_OK);
    CHECK(g.n_kv == 3 && g.n_tensors == 2);
    const infer_tensor *t1 = infer_gguf_tensor(&g, "t1");
    CHECK(t1 && t1->ne[0] == 8 && t1->nbytes == 32 && ((const float *)t1->data)[3] == 3.0f);
    const infer_gguf_kv *kv = infer_gguf_find(&g, "tokenizer.ggml.tokens");
    CHECK(kv && kv->type == INFER_GGUF_ARRAY && kv->arr_n == 2);
    infer_gguf_free(&g);
    free(b.p);
}

static void test_gguf_truncated(void) {
    buf_t b = make_gguf();
    infer_error err;
    int bad = 0;
    for (size_t cut = 0; cut < b.n; cut++) {     /* every prefix shorter than the file fails */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, b.p, cut);
        infer_gguf g;
        if (infer_gguf_parse(&g, p, cut, &err) == INFER_OK) { bad++; infer_gguf_free(&g); }
        free(p);
    }
    CHECK_MSG(bad == 0, "%d truncated files parsed as valid", bad);
    free(b.p);
    /* the real model file cut at many points */
    size_t n;
    uint8_t *f = slurp(SHARED "/models/stories260K.gguf", &n);
    if (!f) SKIP("../shared/models/stories260K.gguf not found");
    bad = 0;
    for (size_t cut = 0; cut < n; cut += 1 + cut / 7) {
        infer_model *m;
        if (infer_model_load_memory(&m, f, cut, NULL, &err) == INFER_OK) { bad++; infer_model_free(m); }
    }
    CHECK_MSG(bad == 0, "%d truncated models loaded", bad);
    free(f);
}

static int parse_patched(const buf_t *b, size_t off, const void *patch, size_t n, infer_error *err) {
    uint8_t *p = malloc(b->n);
    memcpy(p, b->p, b->n);
    memcpy(p + off, patch, n);
    infer_gguf g;
    int st = infer_gguf_parse(&g, p, b->n, err);
    if (st == INFER_OK) infer_gguf_free(&g);
    free(p);
    return st;
}

static void test_gguf_corrupt(void) {
    buf_t b = make_gguf();
    infer_error err;
    uint64_t huge = 0x7fffffffffffffffull;
    uint32_t v1 = 1, badtype = 99;
    CHECK(parse_patched(&b, 0, "GGUX", 4, &err) != INFER_OK);              /* magic */
    CHECK(parse_patched(&b, 4, &v1, 4, &err) != INFER_OK);                 /* version 1 */
    CHECK(parse_patched(&b, 8, &huge, 8, &err) != INFER_OK);               /* n_tensors */
    CHECK(parse_patched(&b, 16, &huge, 8, &err) != INFER_OK);              /* n_kv */
    CHECK(strstr(err.msg, "metadata count") != NULL);
    CHECK(parse_patched(&b, 24, &huge, 8, &err) != INFER_OK);              /* first key length */
    const size_t vt = 24 + 8 + strlen("general.architecture");
    CHECK(parse_patched(&b, vt, &badtype, 4, &err) != INFER_OK);           /* value type */
    CHECK(strstr(err.msg, "general.architecture") != NULL);
    CHECK(parse_patched(&b, vt + 4, &huge, 8, &err) != INFER_OK);          /* string length */
    /* find fields by searching for the tensor names */
    size_t t0 = 0;
    for (size_t i = 0; i + 2 < b.n; i++) if (!memcmp(b.p + i, "t0", 2) && b.p[i - 8] == 2) { t0 = i; break; }
    CHECK(t0 > 0);
    uint32_t nd = 9;
    CHECK(parse_patched(&b, t0 + 2, &nd, 4, &err) != INFER_OK);            /* n_dims */
    int64_t neg = -5, big = (int64_t)1 << 40;
    CHECK(parse_patched(&b, t0 + 6, &neg, 8, &err) != INFER_OK);           /* negative dim */
    CHECK(parse_patched(&b, t0 + 6, &big, 8, &err) != INFER_OK);           /* data past the end */
    CHECK(strstr(err.msg, "t0") != NULL);
    CHECK(parse_patched(&b, t0 + 22, &badtype, 4, &err) != INFER_OK);      /* tensor type */
    CHECK(err.status == INFER_ERR_UNSUPPORTED);
    uint64_t off = 8;
    CHECK(parse_patched(&b, t0 + 26, &off, 8, &err) != INFER_OK);          /* misaligned offset */
    CHECK(parse_patched(&b, t0 + 26, &huge, 8, &err) != INFER_OK);         /* offset overflow */
    CHECK(parse_patched(&b, t0 + 34 + 8, "t0", 2, &err) != INFER_OK);      /* duplicate tensor name */
    CHECK(strstr(err.msg, "duplicate") != NULL);
    /* duplicate key: rename general.alignment's key to general.architecture (same length? no: build) */
    buf_t d = { 0 };
    b_put(&d, "GGUF", 4); b_u32(&d, 3); b_u64(&d, 0); b_u64(&d, 2);
    b_kv_u32(&d, "a.b", 1); b_kv_u32(&d, "a.b", 2);
    infer_gguf g;
    CHECK(infer_gguf_parse(&g, d.p, d.n, &err) != INFER_OK && strstr(err.msg, "duplicate key"));
    /* alignment that is not a power of two */
    d.n = 0;
    b_put(&d, "GGUF", 4); b_u32(&d, 3); b_u64(&d, 0); b_u64(&d, 1);
    b_kv_u32(&d, "general.alignment", 24);
    CHECK(infer_gguf_parse(&g, d.p, d.n, &err) != INFER_OK && strstr(err.msg, "alignment"));
    /* random byte flips never crash (and anything that parses is self-consistent) */
    infer__rng rng;
    infer__rng_seed(&rng, 7);
    for (int it = 0; it < 3000; it++) {
        uint8_t *p = malloc(b.n);
        memcpy(p, b.p, b.n);
        for (int k = 0; k < 3; k++) p[infer__rng_next(&rng) % b.n] ^= (uint8_t)(1 + infer__rng_next(&rng) % 255);
        if (infer_gguf_parse(&g, p, b.n, &err) == INFER_OK) {
            for (int64_t i = 0; i < g.n_tensors; i++) {
                const uint8_t *s = g.tensors[i].data;
                CHECK(s >= p && s + g.tensors[i].nbytes <= p + b.n);
            }
            infer_gguf_free(&g);
        }
        free(p);
    }
    free(d.p);
    free(b.p);
}

/* a model file whose known key has the wrong type fails with the key's name */
static void test_model_bad_keys(void) {
    buf_t b = { 0 };
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, 0); b_u64(&b, 2);
    b_kv_str(&b, "general.architecture", "llama");
    b_kv_str(&b, "llama.block_count", "three");
    infer_model *m;
    infer_error err;
    size_t n = b.n;
    /* no token_embd: config is read first, so the wrong type is reported */
    CHECK(infer_model_load_memory(&m, b.p, n, NULL, &err) != INFER_OK);
    CHECK_MSG(strstr(err.msg, "llama.") != NULL, "message: %s", err.msg);
    b.n = 0;
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, 0); b_u64(&b, 1);
    b_kv_str(&b, "general.architecture", "nonesuch");
    CHECK(infer_model_load_memory(&m, b.p, b.n, NULL, &err) == INFER_ERR_UNSUPPORTED && strstr(err.msg, "nonesuch"));
    free(b.p);
}

/* ---- quantization: every type against ../shared/golden/quants ---- */
typedef struct { uint32_t type, nrows, ncols; uint64_t qbytes; float *input, *dequant; uint8_t *q; void *mem; } qg_t;

static int load_qg(const char *name, qg_t *g) {
    char path[256];
    snprintf(path, sizeof path, SHARED "/golden/quants/%s.qg", name);
    size_t n;
    uint8_t *p = slurp(path, &n);
    if (!p) return 0;
    uint32_t magic;
    memcpy(&magic, p, 4); memcpy(&g->type, p + 4, 4); memcpy(&g->nrows, p + 8, 4); memcpy(&g->ncols, p + 12, 4); memcpy(&g->qbytes, p + 16, 8);
    size_t nv = (size_t)g->nrows * g->ncols;
    if (magic != 0x31475149 || n != 24 + nv * 8 + g->qbytes) { free(p); return 0; }
    g->input = malloc(nv * 4); g->dequant = malloc(nv * 4);
    memcpy(g->input, p + 24, nv * 4);
    g->q = p + 24 + nv * 4;
    memcpy(g->dequant, p + 24 + nv * 4 + g->qbytes, nv * 4);
    g->mem = p;
    return 1;
}
static void free_qg(qg_t *g) { free(g->input); free(g->dequant); free(g->mem); }

static const char *qg_names[] = { "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K",
                                  "iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_nl", "iq4_xs",
                                  "tq1_0", "tq2_0", "mxfp4", "nvfp4", "q1_0", "q2_0" };
static const char *closed_form[] = { "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "iq4_nl", "tq1_0", "tq2_0", "mxfp4", "nvfp4", "q1_0", "q2_0" };

static double rel_rms(const float *a, const float *ref, size_t n) {
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++) { e += (double)(a[i] - ref[i]) * (a[i] - ref[i]); s += (double)ref[i] * ref[i]; }
    return sqrt(e / (s > 0 ? s : 1));
}

static void test_quant_golden(void) {
    if (!file_exists(SHARED "/golden/quants/q4_0.qg")) SKIP("../shared/golden/quants not found");
    for (size_t i = 0; i < sizeof qg_names / sizeof qg_names[0]; i++) {
        qg_t g;
        const char *name = qg_names[i];
        if (!load_qg(name, &g)) { CHECK_MSG(0, "cannot read %s.qg", name); continue; }
        int t = infer_type_from_name(name);
        CHECK_MSG(t == (int)g.type, "%s: type id %d, file says %u", name, t, g.type);
        if (t != (int)g.type) { free_qg(&g); continue; }
        size_t nv = (size_t)g.nrows * g.ncols;
        CHECK_MSG(infer_type_row_size((infer_type)t, g.ncols) * g.nrows == g.qbytes, "%s: size mismatch", name);
        float *deq = malloc(nv * 4);
        infer_error err;
        infer_status st = infer_dequantize((infer_type)t, g.q, deq, (int64_t)nv, &err);
        CHECK_MSG(st == INFER_OK && memcmp(deq, g.dequant, nv * 4) == 0, "%s: dequantization is not bit-exact", name);
        int closed = 0;
        for (size_t k = 0; k < sizeof closed_form / sizeof closed_form[0]; k++) closed |= !strcmp(closed_form[k], name);
        uint8_t *q = malloc(g.qbytes);
        st = infer_quantize((infer_type)t, g.input, q, (int64_t)nv, &err);
        if (closed) {
            CHECK_MSG(st == INFER_OK && memcmp(q, g.q, g.qbytes) == 0, "%s: quantization is not byte-exact", name);
        } else if (st == INFER_OK) {
            infer_dequantize((infer_type)t, q, deq, (int64_t)nv, &err);
            double ours = rel_rms(deq, g.input, nv), ref = rel_rms(g.dequant, g.input, nv);
            CHECK_MSG(ours <= 1.01 * ref, "%s: relative RMS error %.6f > 1.01 x golden %.6f", name, ours, ref);
        } else {
            /* only the grid i-quants have no quantizer */
            CHECK_MSG(strncmp(name, "iq1", 3) == 0 || strncmp(name, "iq2", 3) == 0 || strncmp(name, "iq3", 3) == 0, "%s: no quantizer", name);
        }
        free(q); free(deq); free_qg(&g);
    }
}

/* dot(weights, quantized activations) against dequantize-then-f32-dot, every type with a dot */
static void test_quant_dot(void) {
    infer__rng rng;
    infer__rng_seed(&rng, 11);
    const int64_t K = 1024;
    float *w = malloc(K * 4), *x = malloc(K * 4), *wd = malloc(K * 4), *xd = malloc(K * 4);
    uint8_t *wq = malloc(K * 4 + 1024), *xq = malloc(K * 4 + 1024);
    int tested = 0;
    for (int t = 0; t < INFER_TYPE_COUNT; t++) {
        const infer__type_traits *tt = infer__type((infer_type)t);
        if (!tt || !tt->dot || !tt->dequant) continue;
        for (int trial = 0; trial < 3; trial++) {
            for (int64_t i = 0; i < K; i++) {
                w[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1) * (trial == 2 ? 50.0f : 1.0f);
            }
            /* weights: quantize when we can, else random bytes decoded by the golden-tested dequantizer */
            if (tt->quant) tt->quant(w, wq, K);
            else for (size_t i = 0; i < infer_type_row_size((infer_type)t, K); i++) wq[i] = (uint8_t)infer__rng_next(&rng);
            if (t == INFER_TYPE_F16 || t == INFER_TYPE_BF16 || t == INFER_TYPE_F32 || !tt->quant) {
                /* random bytes may hold inf/nan halves: rebuild through quant when possible */
                if (!tt->quant) {
                    /* keep the scale bytes sane: dequantize and check finiteness; skip non-finite draws */
                }
            }
            tt->dequant(wq, wd, K);
            int finite = 1;
            for (int64_t i = 0; i < K; i++) finite &= isfinite(wd[i]) && fabsf(wd[i]) < 1e6f;
            if (!finite) continue;
            const void *xin = x;
            if (tt->dot_type != INFER_TYPE_F32) {
                const infer__type_traits *qt = infer__type(tt->dot_type);
                qt->quant(x, xq, K);
                if (tt->dot_type == INFER_TYPE_Q8_K) {
                    const infer_block_q8_k *b = (const infer_block_q8_k *)xq;
                    for (int64_t i = 0; i < K; i++) xd[i] = b[i / 256].d * b[i / 256].qs[i % 256];
                } else if (tt->dot_type == INFER_TYPE_Q8_1) {
                    const infer_block_q8_1 *b = (const infer_block_q8_1 *)xq;
                    for (int64_t i = 0; i < K; i++) xd[i] = infer__fp16_to_fp32(b[i / 32].d) * b[i / 32].qs[i % 32];
                } else {
                    const infer_block_q8_0 *b = (const infer_block_q8_0 *)xq;
                    for (int64_t i = 0; i < K; i++) xd[i] = infer__fp16_to_fp32(b[i / 32].d) * b[i / 32].qs[i % 32];
                }
                xin = xq;
            } else memcpy(xd, x, K * 4);
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < K; i++) { ref += (double)wd[i] * xd[i]; mag += fabs((double)wd[i] * xd[i]); }
            float got = tt->dot(K, wq, xin);
            /* both sides see identical values; only f32 summation order differs */
            CHECK_MSG(fabs(got - ref) <= 1e-5 * mag + 1e-6, "%s: dot %.8g vs dequantized %.8g (sum|wx| %.4g)", tt->name, got, ref, mag);
            tested++;
        }
    }
    CHECK(tested > 20);
    free(w); free(x); free(wd); free(xd); free(wq); free(xq);
}

/* I2_S (BitNet's fork): ternary codes packed 4 per byte in 128-element chunks + one f32 scale */
static void test_quant_i2_s(void) {
    infer__rng rng;
    infer__rng_seed(&rng, 5);
    const int64_t n = 512;
    float w[512], back[512], x[512];
    uint8_t q[512 / 4 + 32];
    for (int64_t i = 0; i < n; i++) {   /* already ternary: {-s, 0, +s} round-trips exactly */
        int t = (int)(infer__rng_next(&rng) % 3) - 1;
        w[i] = 0.37f * t;
        x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
    }
    infer__quant_i2_s(w, q, n);
    float scale;
    memcpy(&scale, q + n / 4, 4);
    CHECK_NEAR(scale, 0.37f, 1e-7);
    infer__dequant_i2_s(q, scale, back, n);
    CHECK(memcmp(w, back, sizeof w) == 0);
    /* element k of a 128-chunk sits in byte k%32 at shift 6-2*(k/32): check one by hand */
    CHECK(((q[5] >> 6) & 3) == (uint8_t)(w[5] / 0.37f + 1.5f) && ((q[5] >> 4) & 3) == (uint8_t)(w[37] / 0.37f + 1.5f));
    /* the dot against Q8_0 activations equals dequantize-then-dot */
    uint8_t xq[sizeof(infer_block_q8_0) * 16];
    infer__quant_q8_0(x, xq, n);
    double ref = 0;
    const infer_block_q8_0 *b = (const infer_block_q8_0 *)xq;
    for (int64_t i = 0; i < n; i++) ref += (double)back[i] / scale * infer__fp16_to_fp32(b[i / 32].d) * b[i / 32].qs[i % 32];
    CHECK_NEAR(infer__dot_i2_s(n, q, xq), ref, 1e-4);
    /* non-ternary input: absmean codes, scale = mean |w| over the non-zero codes */
    for (int64_t i = 0; i < n; i++) w[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
    infer__quant_i2_s(w, q, n);
    memcpy(&scale, q + n / 4, 4);
    infer__dequant_i2_s(q, scale, back, n);
    CHECK(rel_rms(back, w, n) < 0.6 && scale > 0.3f && scale < 1.0f);
}

/* ---- whole models against the golden logits ---- */
static float *read_floats(const char *path, size_t *n) {
    size_t bytes;
    float *p = slurp(path, &bytes);
    if (p) *n = bytes / 4;
    return p;
}

/* the prompt ids from prompts.json: {"short": [...], "long": [...]} */
static int read_prompt(const char *dir, const char *which, int32_t *ids, int max) {
    char path[256];
    snprintf(path, sizeof path, "%s/prompts.json", dir);
    char *s = slurp(path, NULL);
    if (!s) return 0;
    char key[32];
    snprintf(key, sizeof key, "\"%s\"", which);
    char *p = strstr(s, key);
    int n = 0;
    if (p && (p = strchr(p, '['))) {
        p++;
        while (*p && *p != ']' && n < max) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) { p++; continue; }
            ids[n++] = (int32_t)v;
            p = end;
        }
    }
    free(s);
    return n;
}

typedef struct { double max_abs, mean_abs; } diff_t;

/* run prompt ++ 16 greedy tokens of the reference file, with the prompt in chunks of
 * ubatch and every generated token one at a time; compare all rows */
static diff_t run_golden(const char *dir, const char *model_file, const char *prompt, const char *ref_file, int precise, int ubatch, int threads, const char *fast_file, double *ref_fast_mean) {
    diff_t d = { -1, -1 };
    char path[512];
    int32_t ids[600];
    int np = read_prompt(dir, prompt, ids, 512);
    snprintf(path, sizeof path, "%s/logits/%s", dir, ref_file);
    size_t nref;
    float *ref = read_floats(path, &nref);
    snprintf(path, sizeof path, "%s/%s", dir, model_file);
    infer_model *m;
    infer_error err;
    if (!np || !ref || infer_model_load(&m, path, NULL, &err) != INFER_OK) { printf("    cannot load %s: %s\n", path, ref ? err.msg : "no reference"); free(ref); return d; }
    const int V = infer_model_config(m)->n_vocab;
    const int rows = (int)(nref / V);
    for (int g = np; g < rows; g++) {      /* greedy token g-np = argmax of row g-1 of the reference */
        const float *r = ref + (size_t)(g - 1) * V;
        int best = 0;
        for (int v = 1; v < V; v++) if (r[v] > r[best]) best = v;
        ids[g] = best;
    }
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise;
    sp.n_ubatch = ubatch;
    sp.n_threads = threads;
    sp.n_ctx = 512;
    infer_session *s;
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { printf("    %s\n", err.msg); infer_model_free(m); free(ref); return d; }
    float *out = malloc(sizeof(float) * (size_t)V * rows);
    infer_status st = infer_eval(s, ids, np, out, 1, &err);
    for (int g = np; g < rows && st == INFER_OK; g++) st = infer_eval(s, &ids[g], 1, out + (size_t)g * V, 1, &err);
    if (st != INFER_OK) printf("    eval: %s\n", err.msg);
    else {
        double mx = 0, sum = 0;
        for (size_t i = 0; i < (size_t)V * rows; i++) {
            double e = fabs((double)out[i] - ref[i]);
            if (!(e <= mx)) mx = e;       /* nan propagates as a failure */
            sum += e;
        }
        d.max_abs = mx;
        d.mean_abs = sum / ((double)V * rows);
        if (fast_file && ref_fast_mean) {
            snprintf(path, sizeof path, "%s/logits/%s", dir, fast_file);
            size_t nf;
            float *fast = read_floats(path, &nf);
            *ref_fast_mean = -1;
            if (fast && nf == nref) {
                double s2 = 0;
                for (size_t i = 0; i < nf; i++) s2 += fabs((double)fast[i] - ref[i]);
                *ref_fast_mean = s2 / nf;
            }
            free(fast);
        }
    }
    free(out);
    infer_session_free(s);
    infer_model_free(m);
    free(ref);
    return d;
}

/* precise: max abs diff <= 2e-3 on every row, batched and one token at a time */
static void golden_precise(const char *family, const char *variant) {
    char dir[256], model[64], ref[64];
    snprintf(dir, sizeof dir, SHARED "/golden/%s", family);
    snprintf(model, sizeof model, "model-%s.gguf", variant);
    if (!file_exists(dir)) { printf("  SKIP: %s not found\n", dir); t_skipped = 1; return; }
    const char *prompts[] = { "short", "long" };
    for (int p = 0; p < 2; p++) {
        if (!strcmp(variant, "F32")) snprintf(ref, sizeof ref, "F32.%s.hp.bin", prompts[p]);
        else snprintf(ref, sizeof ref, "%s.%s.deq.hp.bin", variant, prompts[p]);
        const int ubatches[] = { 512, 1, 7 };
        for (int u = 0; u < 3; u++) {
            if (u == 2 && p == 0) continue;
            diff_t d = run_golden(dir, model, prompts[p], ref, 1, ubatches[u], u == 1 ? 1 : 2, NULL, NULL);
            CHECK_MSG(d.max_abs >= 0 && d.max_abs <= 2e-3, "%s %s %s ubatch %d: max abs diff %.3g (mean %.3g)", family, variant, prompts[p], ubatches[u], d.max_abs, d.mean_abs);
        }
    }
}

/* fast path: mean abs diff vs the exact maths <= 1.5 x the reference engine's + 0.01 */
static void golden_fast(const char *family, const char *variant) {
    char dir[256], model[64], ref[64], fast[64];
    snprintf(dir, sizeof dir, SHARED "/golden/%s", family);
    if (!file_exists(dir)) { printf("  SKIP: %s not found\n", dir); t_skipped = 1; return; }
    snprintf(model, sizeof model, "model-%s.gguf", variant);
    const char *prompts[] = { "short", "long" };
    for (int p = 0; p < 2; p++) {
        if (!strcmp(variant, "F32")) snprintf(ref, sizeof ref, "F32.%s.hp.bin", prompts[p]);
        else snprintf(ref, sizeof ref, "%s.%s.deq.hp.bin", variant, prompts[p]);
        snprintf(fast, sizeof fast, "%s.%s.bin", variant, prompts[p]);
        double theirs = -1;
        diff_t d = run_golden(dir, model, prompts[p], ref, 0, 512, 2, fast, &theirs);
        CHECK_MSG(d.mean_abs >= 0 && theirs >= 0 && d.mean_abs <= 1.5 * theirs + 0.01,
                  "%s %s %s fast path: mean abs diff %.4g, reference engine's %.4g", family, variant, prompts[p], d.mean_abs, theirs);
    }
}

static void test_golden_llama_f32(void) { golden_precise("llama", "F32"); }
static void test_golden_llama_q8_0(void) { golden_precise("llama", "Q8_0"); }
static void test_golden_llama_q4_0(void) { golden_precise("llama", "Q4_0"); }
static void test_golden_llama_quants(void) {
    const char *v[] = { "Q4_K", "Q4_K_M", "Q6_K", "MXFP4", "NVFP4" };
    for (int i = 0; i < 5; i++) golden_precise("llama", v[i]);
}
static void test_golden_llama_fast(void) {
    const char *v[] = { "F32", "Q8_0", "Q4_0", "Q4_K", "Q4_K_M", "Q6_K", "MXFP4", "NVFP4" };
    for (int i = 0; i < 8; i++) golden_fast("llama", v[i]);
}
static void test_golden_llama3_ropescale(void) { golden_precise("llama3_ropescale", "F32"); golden_fast("llama3_ropescale", "F32"); }
static void test_golden_qwen3(void) { golden_precise("qwen3", "F32"); golden_fast("qwen3", "F32"); }

/* ---- stories260K: a real trained model ---- */
/* the ids after `label` on its line in GOLDEN_stories260K.md */
static int golden_ids(const char *text, const char *label, int32_t *ids, int max) {
    const char *p = strstr(text, label);
    if (!p) return 0;
    p = strchr(p, ':');
    int n = 0;
    while (p && *p && *p != '\n' && n < max) {
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1) { p++; continue; }
        ids[n++] = (int32_t)v;
        p = end - 1;
        if (*end == '\n' || !*end) break;
        p = end;
    }
    return n;
}

static void test_stories_greedy(void) {
    char *md = slurp(SHARED "/models/GOLDEN_stories260K.md", NULL);
    if (!md || !file_exists(SHARED "/models/stories260K.gguf")) { free(md); SKIP("../shared/models not found"); }
    int32_t want[300];
    int n = golden_ids(md, "greedy from BOS", want, 300);
    CHECK(n == 256);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    for (int precise = 0; precise < 2; precise++) {
        infer_session_params sp = infer_session_default_params();
        sp.precise = precise;
        infer_session *s;
        CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
        float logits[512];
        int32_t tok = 1;   /* BOS */
        int same = 0;
        for (int i = 0; i < n; i++) {
            if (infer_eval(s, &tok, 1, logits, 0, &err) != INFER_OK) break;
            int best = 0;
            for (int v = 1; v < 512; v++) if (logits[v] > logits[best]) best = v;
            if (best != want[i]) break;
            same++;
            tok = best;
        }
        CHECK_MSG(same == n, "precise=%d: greedy tokens agree for %d of %d", precise, same, n);
        infer_session_free(s);
    }
    infer_model_free(m);
    free(md);
}

static void test_stories_nll(void) {
    char *md = slurp(SHARED "/models/GOLDEN_stories260K.md", NULL);
    if (!md || !file_exists(SHARED "/models/stories260K.gguf")) { free(md); SKIP("../shared/models not found"); }
    int32_t ids[64];
    int n = golden_ids(md, "tokens(35)", ids, 64);
    CHECK(n == 35);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1;
    infer_session *s;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    float *logits = malloc(sizeof(float) * 512 * n);
    CHECK(infer_eval(s, ids, n, logits, 1, &err) == INFER_OK);
    double nll = 0;
    for (int i = 0; i + 1 < n; i++) {
        const float *l = logits + (size_t)i * 512;
        double mx = l[0], sum = 0;
        for (int v = 1; v < 512; v++) if (l[v] > mx) mx = l[v];
        for (int v = 0; v < 512; v++) sum += exp(l[v] - mx);
        nll -= l[ids[i + 1]] - mx - log(sum);
    }
    CHECK_NEAR(nll, 54.4041, 0.001);
    CHECK_NEAR(exp(nll / (n - 1)), 4.9536, 0.0005);
    /* the tokenizer gives the same ids for the golden sentence */
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    int32_t got[64] = { 0 };
    const char *sentence = "One day, a clever fox found a shiny key under the old oak tree.";
    int k = tok ? infer_tokenize(tok, sentence, strlen(sentence), 1, 1, got, 64) : -1;
    CHECK(k == n && memcmp(got, ids, sizeof(int32_t) * n) == 0);
    free(logits);
    infer_session_free(s);
    infer_model_free(m);
    free(md);
}

/* the same logits whatever the chunking, the thread count, and after a reset (paged KV reuse) */
static void test_session_consistency(void) {
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    int32_t ids[70];
    for (int i = 0; i < 70; i++) ids[i] = (i * 37 + 1) % 512;
    float *a = malloc(sizeof(float) * 512 * 70), *b = malloc(sizeof(float) * 512 * 70);
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1;
    sp.n_threads = 1;
    infer_session *s;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 70, a, 1, &err) == INFER_OK);
    infer_session_reset(s);
    CHECK(infer_eval(s, ids, 33, b, 1, &err) == INFER_OK);      /* reuses freed blocks */
    CHECK(infer_eval(s, ids + 33, 37, b + 33 * 512, 1, &err) == INFER_OK);
    double mx = 0;
    for (int i = 0; i < 512 * 70; i++) mx = fmax(mx, fabs(a[i] - b[i]));
    CHECK_MSG(mx == 0, "chunked vs whole: max diff %g", mx);
    infer_session_free(s);
    sp.n_threads = 2;
    sp.n_ubatch = 5;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 70, b, 1, &err) == INFER_OK);
    mx = 0;
    for (int i = 0; i < 512 * 70; i++) mx = fmax(mx, fabs(a[i] - b[i]));
    CHECK_MSG(mx == 0, "2 threads, ubatch 5 vs 1 thread: max diff %g", mx);
    /* context overflow is an error, not a crash */
    infer_session_free(s);
    sp.n_ctx = 32;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 40, NULL, 0, &err) == INFER_ERR_CONTEXT);
    int32_t bad = 9999;
    CHECK(infer_eval(s, &bad, 1, NULL, 0, &err) == INFER_ERR_ARG);
    /* f16 KV stays close to f32 */
    infer_session_free(s);
    sp.n_ctx = 0; sp.precise = 0; sp.kv_type = INFER_TYPE_F16;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 70, b, 1, &err) == INFER_OK);
    mx = 0;
    for (int i = 0; i < 512 * 70; i++) mx = fmax(mx, fabs(a[i] - b[i]));
    CHECK_MSG(mx < 0.05, "f16 KV vs f32: max diff %g", mx);
    infer_session_free(s);
    free(a); free(b);
    infer_model_free(m);
}

/* infer_generate: the streaming callback sees the greedy tokens; returning non-zero stops */
typedef struct { int32_t got[64]; int n, stop_at; } gen_rec;
static int on_tok(void *user, int32_t tok, const float *logits) {
    gen_rec *r = user;
    (void)logits;
    r->got[r->n++] = tok;
    return r->n == r->stop_at;
}
static void test_generate(void) {
    char *md = slurp(SHARED "/models/GOLDEN_stories260K.md", NULL);
    if (!md) SKIP("../shared/models not found");
    int32_t want[300];
    golden_ids(md, "greedy from BOS", want, 300);
    free(md);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    infer_session *s;
    CHECK(infer_session_create(&s, m, NULL, &err) == INFER_OK);
    infer_sampler_params sp = infer_sampler_default_params();
    sp.temp = 0;
    int32_t bos = 1;
    gen_rec r = { { 0 }, 0, 0 };
    infer_gen_stats st;
    CHECK(infer_generate(s, &bos, 1, 40, &sp, on_tok, &r, &st, &err) == INFER_OK);
    CHECK(r.n == 40 && st.n_gen == 40 && st.n_prompt == 1 && memcmp(r.got, want, sizeof(int32_t) * 40) == 0);
    CHECK(st.gen_seconds > 0);
    infer_session_reset(s);
    gen_rec r2 = { { 0 }, 0, 5 };
    CHECK(infer_generate(s, &bos, 1, 40, &sp, on_tok, &r2, &st, &err) == INFER_OK);
    CHECK(r2.n == 5 && infer_session_n_past(s) == 5);
    /* sampling with a seed is reproducible */
    sp = infer_sampler_default_params();
    sp.seed = 99;
    gen_rec a = { { 0 }, 0, 0 }, b = { { 0 }, 0, 0 };
    infer_session_reset(s);
    CHECK(infer_generate(s, &bos, 1, 30, &sp, on_tok, &a, &st, &err) == INFER_OK);
    infer_session_reset(s);
    CHECK(infer_generate(s, &bos, 1, 30, &sp, on_tok, &b, &st, &err) == INFER_OK);
    CHECK(a.n == b.n && memcmp(a.got, b.got, sizeof(int32_t) * (size_t)a.n) == 0);
    infer_session_free(s);
    infer_model_free(m);
}

/* ---- sampler ---- */
static void test_sampler(void) {
    float logits[8] = { 0.1f, 2.0f, -1.0f, 1.9f, 0.0f, 0.5f, -3.0f, 1.0f };
    infer_sampler_params p = infer_sampler_default_params();
    p.temp = 0;
    infer_sampler *s = infer_sampler_create(&p, 8);
    CHECK(infer_sampler_sample(s, logits) == 1);
    infer_sampler_free(s);
    p.temp = 1.0f; p.top_k = 1; p.top_p = 1; p.min_p = 0;
    s = infer_sampler_create(&p, 8);
    for (int i = 0; i < 20; i++) CHECK(infer_sampler_sample(s, logits) == 1);   /* top-k 1 is greedy */
    infer_sampler_free(s);
    /* top-k 2: only ids 1 and 3 ever come out, both do */
    p.top_k = 2;
    s = infer_sampler_create(&p, 8);
    int seen[8] = { 0 };
    for (int i = 0; i < 400; i++) seen[infer_sampler_sample(s, logits)]++;
    CHECK(seen[1] > 0 && seen[3] > 0 && seen[1] + seen[3] == 400);
    infer_sampler_free(s);
    /* min-p 0.5 keeps tokens within ln(2) of the best: ids 1 and 3 */
    p.top_k = 0; p.min_p = 0.5f;
    s = infer_sampler_create(&p, 8);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 400; i++) seen[infer_sampler_sample(s, logits)]++;
    CHECK(seen[1] + seen[3] == 400);
    infer_sampler_free(s);
    /* top-p 0.5: the top token alone has p = 0.37 < 0.5, so ids 1 and 3 */
    p.min_p = 0; p.top_p = 0.5f;
    s = infer_sampler_create(&p, 8);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 400; i++) seen[infer_sampler_sample(s, logits)]++;
    CHECK(seen[1] > 0 && seen[3] > 0 && seen[1] + seen[3] == 400);
    infer_sampler_free(s);
    /* the same seed draws the same sequence; a different seed a different one */
    p.top_p = 1; p.seed = 42;
    int32_t r1[64], r2[64], r3[64];
    s = infer_sampler_create(&p, 8); for (int i = 0; i < 64; i++) r1[i] = infer_sampler_sample(s, logits); infer_sampler_free(s);
    s = infer_sampler_create(&p, 8); for (int i = 0; i < 64; i++) r2[i] = infer_sampler_sample(s, logits); infer_sampler_free(s);
    p.seed = 43;
    s = infer_sampler_create(&p, 8); for (int i = 0; i < 64; i++) r3[i] = infer_sampler_sample(s, logits); infer_sampler_free(s);
    CHECK(memcmp(r1, r2, sizeof r1) == 0 && memcmp(r1, r3, sizeof r1) != 0);
    /* repetition penalty 100 on token 1 makes token 3 the greedy choice under top-k 1 */
    p.top_k = 1; p.repeat_penalty = 100; p.repeat_last_n = 4; p.temp = 1;
    s = infer_sampler_create(&p, 8);
    infer_sampler_accept(s, 1);
    CHECK(infer_sampler_sample(s, logits) == 3);
    infer_sampler_free(s);
}

/* ---- fp16 / bf16 conversions ---- */
static void test_fp16(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;   /* nan payloads */
        if (infer__fp32_to_fp16(infer__fp16_to_fp32((infer_half)h)) != h) bad++;
    }
    CHECK(bad == 0);
    CHECK(infer__fp32_to_fp16(65520.0f) == 0x7c00);
    CHECK(infer__fp32_to_fp16(1.0f + 1.0f / 2048) == 0x3c00);            /* tie to even */
    CHECK(infer__fp32_to_fp16(1.0f + 3.0f / 2048) == 0x3c02);
    CHECK(infer__fp32_to_bf16(1.0f) == 0x3f80 && infer__bf16_to_fp32(0x3f80) == 1.0f);
}

/* ---- tokenizers against ../shared/vocab golden vectors ---- */
static void check_vocab_vectors(const char *name, const infer_tokenizer *tok) {
    char path[256];
    snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf.inp", name);
    char *inp = slurp(path, NULL);
    snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf.out", name);
    char *out = slurp(path, NULL);
    if (!inp || !out) { free(inp); free(out); printf("  SKIP: vectors for %s not found\n", name); t_skipped = 1; return; }
    const char *sep = "\n__ggml_vocab_test__\n";
    char *text = inp, *line = out;
    int cases = 0, bad = 0;
    while (text && *line) {
        char *next = strstr(text, sep);
        size_t len = next ? (size_t)(next - text) : strlen(text);
        if (!next && len == 0) break;
        char *eol = strchr(line, '\n');
        if (eol) *eol = 0;
        int32_t want[4096], got[4096];
        int nw = 0;
        for (char *p = line; *p && nw < 4096;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) break;
            want[nw++] = (int32_t)v;
            p = end;
        }
        int ng = infer_tokenize(tok, text, len, 0, 0, got, 4096);
        if (ng != nw || memcmp(got, want, sizeof(int32_t) * (size_t)nw) != 0) {
            if (bad < 3) printf("    %s case %d: '%.*s' -> %d tokens, expected %d\n", name, cases, (int)(len > 60 ? 60 : len), text, ng, nw);
            bad++;
        }
        cases++;
        text = next ? next + strlen(sep) : NULL;
        line = eol ? eol + 1 : line + strlen(line);
    }
    CHECK_MSG(bad == 0 && cases > 0, "%s: %d of %d cases differ", name, bad, cases);
    free(inp); free(out);
}

static void test_tokenizer_vocabs(void) {
    const char *names[] = { "llama-spm", "gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "phi-3", "mpt", "starcoder", "refact", "gpt-neox", "baichuan", "bert-bge" };
    int found = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf", names[i]);
        if (!file_exists(path)) continue;
        snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf.out", names[i]);
        if (!file_exists(path)) { printf("  (%s: no golden vectors)\n", names[i]); continue; }
        snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf", names[i]);
        found++;
        infer_model *m;
        infer_error err;
        infer_model_params mp = { 1 };
        if (infer_model_load(&m, path, &mp, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", names[i], err.msg); continue; }
        CHECK(infer_model_tokenizer(m) != NULL);
        if (infer_model_tokenizer(m)) check_vocab_vectors(names[i], infer_model_tokenizer(m));
        infer_model_free(m);
    }
    if (!found) SKIP("../shared/vocab not found");
}

/* tokenizer.json files (Hugging Face) against the llama-bpe, qwen2 and qwen35 vectors */
static void hf_vectors(const char *json_path, const char *cfg_path, const char *pre_override, const char *vectors) {
    size_t n, cn = 0;
    char *js = slurp(json_path, &n), *cfg = cfg_path ? slurp(cfg_path, &cn) : NULL;
    if (!js) { printf("  SKIP: %s not found\n", json_path); t_skipped = 1; free(cfg); return; }
    infer__tok_hf h;
    char msg[256];
    infer_tokenizer tok;
    int ok = infer__tok_src_from_hf_json(&h, js, n, cfg, cn, msg, sizeof msg) == 0;
    CHECK_MSG(ok, "%s: %s", json_path, msg);
    if (ok) {
        if (pre_override) h.src.pre = pre_override;
        ok = infer__tok_init(&tok, &h.src, msg, sizeof msg) == 0;
        CHECK_MSG(ok, "%s: %s", json_path, msg);
        if (ok) { check_vocab_vectors(vectors, &tok); infer_tokenizer_free(&tok); }
    }
    infer__tok_hf_free(&h);
    free(js); free(cfg);
}
static void test_tokenizer_hf_json(void) {
    hf_vectors(SHARED "/tokenizers/llama3/tokenizer.json", SHARED "/tokenizers/llama3/tokenizer_config.json", NULL, "llama-bpe");
    hf_vectors(SHARED "/tokenizers/qwen3/tokenizer.json", SHARED "/tokenizers/qwen3/tokenizer_config.json", NULL, "qwen2");
    hf_vectors(SHARED "/tokenizers/qwen3/tokenizer.json", SHARED "/tokenizers/qwen3/tokenizer_config.json", "qwen35", "qwen35");
}

/* streaming detokenization: byte tokens that split a UTF-8 character come out whole */
static void test_detok_stream(void) {
    infer_model *m;
    infer_error err;
    infer_model_params mp = { 1 };
    if (infer_model_load(&m, SHARED "/vocab/ggml-vocab-llama-spm.gguf", &mp, &err) != INFER_OK) SKIP("../shared/vocab not found");
    const infer_tokenizer *t = infer_model_tokenizer(m);
    const char *text = "Hi \xf0\x9f\xa6\x99 there";   /* a 4-byte emoji with no token of its own */
    int32_t ids[64];
    int n = infer_tokenize(t, text, strlen(text), 1, 0, ids, 64);
    CHECK(n > 4 && ids[0] == 1);
    infer_detok d;
    infer_detok_init(&d, t);
    char out[256], piece[64];
    size_t len = 0;
    int partial_seen = 0;
    for (int i = 0; i < n; i++) {
        int k = infer_detok_push(&d, ids[i], piece, sizeof piece);
        CHECK(k >= 0);
        for (int j = 0; j < k; j++) if ((unsigned char)piece[j] == 0xf0 && j + 3 >= k) partial_seen = 1;
        memcpy(out + len, piece, (size_t)k);
        len += (size_t)k;
    }
    len += (size_t)infer_detok_flush(&d, out + len, 16);
    CHECK(!partial_seen);
    CHECK(len == strlen(text) && memcmp(out, text, len) == 0);
    /* special tokens: "<s>" is BOS only when special parsing is on */
    n = infer_tokenize(t, "<s>x", 4, 0, 1, ids, 64);
    CHECK(n >= 2 && ids[0] == 1);
    n = infer_tokenize(t, "<s>x", 4, 0, 0, ids, 64);
    CHECK(n >= 2 && ids[0] != 1);
    infer_model_free(m);
}

/* ---- the command line ---- */
static int run_cmd(const char *cmd, char *out, size_t outsz) {
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    char out[8192];
    CHECK(run_cmd("./infer 2>&1", out, sizeof out) != 0 && strstr(out, "no model"));
    CHECK(run_cmd("./infer -m /nonexistent.gguf -p hi 2>&1", out, sizeof out) != 0 && strstr(out, "cannot open"));
    CHECK(run_cmd("./infer -m x --bogus 2>&1", out, sizeof out) != 0 && strstr(out, "unknown option"));
    CHECK(run_cmd("./infer -m x -n abc 2>&1", out, sizeof out) != 0 && strstr(out, "bad value"));
    CHECK(run_cmd("./infer -m tests.c -p hi 2>&1", out, sizeof out) != 0 && strstr(out, "GGUF"));
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    const char *M = SHARED "/models/stories260K.gguf";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./infer -m %s -p \"Once upon a time\" -n 40 --temp 0 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, ", there was a little girl named Lily. She loved to play outside in the park.") != NULL, "got: %s", out);
    snprintf(cmd, sizeof cmd, "./infer -m %s -p \"Once upon a time\" --tokenize", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strncmp(out, "1 ", 2) == 0);
    snprintf(cmd, sizeof cmd, "./infer -m %s -p \"Once upon a time\" --tokenize --no-bos", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strncmp(out, "1 ", 2) != 0);
    /* --tokenize on a vocab-only file (no tensors): the same ids as the library */
    if (file_exists(SHARED "/vocab/ggml-vocab-gpt-2.gguf")) {
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-gpt-2.gguf -p \"Hello world<|endoftext|>\" --tokenize --no-bos", out, sizeof out) == 0);
        CHECK_MSG(strcmp(out, "15496 995 50256\n") == 0, "got: %s", out);
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-gpt-2.gguf -p \"Hello world<|endoftext|>\" --tokenize --no-bos --no-special", out, sizeof out) == 0);
        CHECK_MSG(strstr(out, "50256") == NULL, "got: %s", out);
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-gpt-2.gguf -p hi 2>&1", out, sizeof out) != 0);
    }
    /* a prompt longer than the context */
    snprintf(cmd, sizeof cmd, "./infer -m %s -c 16 -p \"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen\" 2>&1", M);
    CHECK(run_cmd(cmd, out, sizeof out) != 0 && strstr(out, "context"));
    /* --logits-out: n_prompt + n rows; -n 0 gives only the prompt rows */
    snprintf(cmd, sizeof cmd, "./infer -m %s --prompt-ids 1,403,407 -n 5 --temp 0 --logits-out /tmp/infer_test_logits.bin 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    size_t n = 0;
    free(slurp("/tmp/infer_test_logits.bin", &n));
    CHECK_MSG(n == (size_t)(3 + 5) * 512 * 4, "logits file has %zu bytes", n);
    snprintf(cmd, sizeof cmd, "./infer -m %s --prompt-ids 1,403,407 -n 0 --logits-out /tmp/infer_test_logits.bin 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    free(slurp("/tmp/infer_test_logits.bin", &n));
    CHECK(n == (size_t)3 * 512 * 4);
    remove("/tmp/infer_test_logits.bin");
    /* --ppl prints the perplexity on its last line */
    FILE *f = fopen("/tmp/infer_test_ppl.txt", "w");
    fputs("One day, a clever fox found a shiny key under the old oak tree.", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "./infer -m %s --precise --ppl /tmp/infer_test_ppl.txt 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    char *pl = strstr(out, "perplexity: ");
    CHECK(pl && fabs(atof(pl + 12) - 4.9536) < 0.001);
    remove("/tmp/infer_test_ppl.txt");
    snprintf(cmd, sizeof cmd, "./infer -m %s --info", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strstr(out, "token_embd.weight"));
}

/* ---- every weight type runs a whole model ----
 * The golden llama's matrices re-encoded as TYPE (by our quantizer, or random blocks with a
 * small scale for the grid i-quants, which have none) must give, in precise mode, the same
 * logits as an F32 model holding the dequantized values: the matmul of each type is exactly
 * "dequantize, then f32 maths". The fast path must stay finite and close. */
static int is_matrix(const infer_tensor *t) { return t->n_dims == 2 && !strstr(t->name, "norm"); }

static void write_variant(const infer_gguf *g, infer_type to, const char *qpath, const char *dpath, infer__rng *rng) {
    infer_tensor *q = calloc((size_t)g->n_tensors, sizeof *q), *d = calloc((size_t)g->n_tensors, sizeof *d);
    void **own = calloc((size_t)g->n_tensors * 2, sizeof(void *));
    infer_error err;
    const infer__type_traits *tt = infer__type(to);
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const infer_tensor *t = &g->tensors[i];
        q[i] = d[i] = *t;
        if (!is_matrix(t) || t->type != INFER_TYPE_F32 || t->ne[0] % tt->blck) continue;
        const int64_t n = t->ne[0] * t->ne[1];
        const size_t qb = infer_type_row_size(to, t->ne[0]) * (size_t)t->ne[1];
        uint8_t *qd = malloc(qb);
        float *dd = malloc((size_t)n * 4);
        if (tt->quant) tt->quant((const float *)t->data, qd, n);
        else {
            for (size_t b = 0; b < qb; b++) qd[b] = (uint8_t)infer__rng_next(rng);
            /* the block's f16 scale: first in every grid type except iq1_m, which spreads it
             * over the top nibbles of its four trailing u16 scale words */
            const infer_half h = infer__fp32_to_fp16(0.0005f);
            for (size_t b = 0; b < qb; b += (size_t)tt->bytes) {
                if (to != INFER_TYPE_IQ1_M) { memcpy(qd + b, &h, 2); continue; }
                uint16_t sc[4];
                memcpy(sc, qd + b + tt->bytes - 8, 8);
                for (int k = 0; k < 4; k++) sc[k] = (uint16_t)((sc[k] & 0x0fff) | (((h >> (4 * k)) & 0xf) << 12));
                memcpy(qd + b + tt->bytes - 8, sc, 8);
            }
        }
        tt->dequant(qd, dd, n);
        q[i].type = to; q[i].data = qd; q[i].nbytes = qb;
        d[i].data = dd;
        own[2 * i] = qd; own[2 * i + 1] = dd;
    }
    CHECK(infer_gguf_write(qpath, g->kv, g->n_kv, q, g->n_tensors, 32, &err) == INFER_OK);
    CHECK(infer_gguf_write(dpath, g->kv, g->n_kv, d, g->n_tensors, 32, &err) == INFER_OK);
    for (int64_t i = 0; i < 2 * g->n_tensors; i++) free(own[i]);
    free(own); free(q); free(d);
}

static float *model_logits(const char *path, const int32_t *ids, int n, int precise) {
    infer_model *m;
    infer_session *s;
    infer_error err;
    if (infer_model_load(&m, path, NULL, &err) != INFER_OK) { printf("    %s\n", err.msg); return NULL; }
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise;
    sp.n_ctx = 64;
    float *out = malloc(sizeof(float) * (size_t)infer_model_config(m)->n_vocab * n);
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK || infer_eval(s, ids, n, out, 1, &err) != INFER_OK) { printf("    %s\n", err.msg); free(out); out = NULL; }
    else infer_session_free(s);
    infer_model_free(m);
    return out;
}

static void test_types_run_models(void) {
    size_t n;
    uint8_t *f = slurp(SHARED "/golden/llama/model-F32.gguf", &n);
    if (!f) SKIP("../shared/golden/llama not found");
    infer_gguf g;
    infer_error err;
    CHECK(infer_gguf_parse(&g, f, n, &err) == INFER_OK);
    const char *types[] = { "q4_1", "q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs", "tq1_0", "tq2_0",
                            "mxfp4", "nvfp4", "q1_0", "q2_0", "bf16", "f16", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m" };
    int32_t ids[20];
    for (int i = 0; i < 20; i++) ids[i] = (i * 53 + 7) % 320;
    infer__rng rng;
    infer__rng_seed(&rng, 3);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        infer_type t = (infer_type)infer_type_from_name(types[i]);
        write_variant(&g, t, "/tmp/infer_test_q.gguf", "/tmp/infer_test_d.gguf", &rng);
        float *a = model_logits("/tmp/infer_test_q.gguf", ids, 20, 1), *b = model_logits("/tmp/infer_test_d.gguf", ids, 20, 1);
        float *c = model_logits("/tmp/infer_test_q.gguf", ids, 20, 0);
        CHECK_MSG(a && b && c, "%s: a model failed to run", types[i]);
        if (a && b && c) {
            double mx = 0, fast = 0, mag = 0;
            for (int k = 0; k < 20 * 320; k++) {
                mx = fmax(mx, fabs(a[k] - b[k]));
                fast += fabs(c[k] - b[k]);
                mag += fabs(b[k]);
                if (!isfinite(c[k])) fast = INFINITY;
            }
            CHECK_MSG(mx <= 1e-3, "%s: precise logits differ from the dequantized model by %g", types[i], mx);
            CHECK_MSG(fast <= 0.05 * mag + 1e-3, "%s: fast path mean diff %g vs mean |logit| %g", types[i], fast / 6400, mag / 6400);
        }
        free(a); free(b); free(c);
    }
    remove("/tmp/infer_test_q.gguf");
    remove("/tmp/infer_test_d.gguf");
    infer_gguf_free(&g);
    free(f);
}

/* ---- tools/convert ---- */
static void test_convert_cli(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    char out[4096];
    CHECK(run_cmd("./tools/convert 2>&1", out, sizeof out) != 0 && strstr(out, "usage"));
    CHECK(run_cmd("./tools/convert dequant q9_9 a b 2>&1", out, sizeof out) != 0 && strstr(out, "unknown type"));
    /* round trip through files: f32 -> q8_0 -> f32 */
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = sinf((float)i);
    FILE *f = fopen("/tmp/infer_cv_in.f32", "wb");
    fwrite(x, 4, 64, f);
    fclose(f);
    CHECK(run_cmd("./tools/convert quant q8_0 /tmp/infer_cv_in.f32 /tmp/infer_cv.q /tmp/x --cols 32 2>&1", out, sizeof out) != 0);
    CHECK(run_cmd("./tools/convert quant q8_0 /tmp/infer_cv_in.f32 /tmp/infer_cv.q --cols 32", out, sizeof out) == 0);
    CHECK(run_cmd("./tools/convert quant q4_K /tmp/infer_cv_in.f32 /tmp/infer_cv.q2 --cols 64 2>&1", out, sizeof out) != 0 && strstr(out, "multiple"));
    CHECK(run_cmd("./tools/convert quant q8_0 /tmp/infer_cv_in.f32 /tmp/infer_cv.q2 --cols 48 2>&1", out, sizeof out) != 0);
    CHECK(run_cmd("./tools/convert dequant q8_0 /tmp/infer_cv.q /tmp/infer_cv_out.f32", out, sizeof out) == 0);
    size_t n;
    float *y = slurp("/tmp/infer_cv_out.f32", &n);
    CHECK(y && n == 256);
    double mx = 0;
    for (int i = 0; y && i < 64; i++) mx = fmax(mx, fabs(y[i] - x[i]));
    CHECK(mx < 0.01);
    free(y);
    /* a truncated block file */
    f = fopen("/tmp/infer_cv.q", "r+b");
    CHECK(f && ftruncate(fileno(f), 33) == 0);
    fclose(f);
    CHECK(run_cmd("./tools/convert dequant q8_0 /tmp/infer_cv.q /tmp/infer_cv_out.f32 2>&1", out, sizeof out) != 0 && strstr(out, "whole number"));
    remove("/tmp/infer_cv_in.f32"); remove("/tmp/infer_cv.q"); remove("/tmp/infer_cv_out.f32");
}

/* llama2.c's stories260K.bin + tok512.bin -> GGUF: same tensors, same tokens, same logits as
 * the published stories260K.gguf */
static void test_convert_llama2c(void) {
    if (!file_exists(SHARED "/models/stories260K.bin") || !file_exists("./tools/convert")) SKIP("../shared/models or ./tools/convert missing");
    char out[4096];
    CHECK(run_cmd("./tools/convert llama2c " SHARED "/models/stories260K.bin " SHARED "/models/tok512.bin /tmp/infer_l2c.gguf 2>&1", out, sizeof out) == 0);
    infer_model *a, *b;
    infer_error err;
    if (infer_model_load(&a, "/tmp/infer_l2c.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    CHECK(infer_model_load(&b, SHARED "/models/stories260K.gguf", NULL, &err) == INFER_OK);
    const infer_gguf *ga = infer_model_gguf(a), *gb = infer_model_gguf(b);
    int same = 0;
    for (int64_t i = 0; i < ga->n_tensors; i++) {
        const infer_tensor *ta = &ga->tensors[i], *tb = infer_gguf_tensor(gb, ta->name);
        same += tb && tb->nbytes == ta->nbytes && memcmp(tb->data, ta->data, ta->nbytes) == 0;
    }
    CHECK_MSG(same == ga->n_tensors, "%d of %lld tensors are bit-identical", same, (long long)ga->n_tensors);
    const infer_gguf_kv *ka = infer_gguf_find(ga, "tokenizer.ggml.tokens"), *kb = infer_gguf_find(gb, "tokenizer.ggml.tokens");
    CHECK(ka && kb && ka->arr_n == kb->arr_n && memcmp(ka->arr_data, kb->arr_data, infer__gguf_arr_bytes(kb)) == 0);
    int32_t ids[12] = { 1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315 };
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1;
    infer_session *sa, *sb;
    float la[12 * 512], lb[12 * 512];
    CHECK(infer_session_create(&sa, a, &sp, &err) == INFER_OK && infer_session_create(&sb, b, &sp, &err) == INFER_OK);
    CHECK(infer_eval(sa, ids, 12, la, 1, &err) == INFER_OK && infer_eval(sb, ids, 12, lb, 1, &err) == INFER_OK);
    CHECK(memcmp(la, lb, sizeof la) == 0);
    infer_session_free(sa); infer_session_free(sb);
    infer_model_free(a); infer_model_free(b);
    remove("/tmp/infer_l2c.gguf");
    /* a truncated checkpoint is refused with a message */
    CHECK(run_cmd("head -c 5000 " SHARED "/models/stories260K.bin > /tmp/infer_l2c_cut.bin && ./tools/convert llama2c /tmp/infer_l2c_cut.bin " SHARED "/models/tok512.bin /tmp/infer_l2c.gguf 2>&1", out, sizeof out) != 0 && strstr(out, "truncated"));
    remove("/tmp/infer_l2c_cut.bin");
}

#include "wip/simd_tests.inc"
#include "wip/qwen_tests.inc"

#include "wip/hf_tests.inc"
#include "wip/bitnet_tests.inc"

/* ---- the table of tests ---- */
typedef struct { const char *name; void (*fn)(void); } test_case;
static const test_case tests[] = {
    { "util_fp16", test_fp16 },
    { "gguf_valid", test_gguf_valid },
    { "gguf_truncated", test_gguf_truncated },
    { "gguf_corrupt", test_gguf_corrupt },
    { "gguf_model_bad_keys", test_model_bad_keys },
    { "quant_golden", test_quant_golden },
    { "quant_dot", test_quant_dot },
    { "simd_dot", test_simd_dot },
    { "quant_i2_s", test_quant_i2_s },
    { "sampler", test_sampler },
    { "tokenizer_vocabs", test_tokenizer_vocabs },
    { "tokenizer_hf_json", test_tokenizer_hf_json },
    { "tokenizer_detok_stream", test_detok_stream },
    { "stories_greedy", test_stories_greedy },
    { "stories_nll", test_stories_nll },
    { "session_consistency", test_session_consistency },
    { "generate", test_generate },
    { "types_run_models", test_types_run_models },
    { "golden_llama_f32", test_golden_llama_f32 },
    { "golden_llama_q8_0", test_golden_llama_q8_0 },
    { "golden_llama_q4_0", test_golden_llama_q4_0 },
    { "golden_llama_quants", test_golden_llama_quants },
    { "golden_llama_fast", test_golden_llama_fast },
    { "golden_llama3_ropescale", test_golden_llama3_ropescale },
    { "golden_qwen3", test_golden_qwen3 },
    { "golden_qwen3moe", test_golden_qwen3moe },
    { "golden_qwen3moe_mxfp4", test_golden_qwen3moe_mxfp4 },
    { "golden_qwen35", test_golden_qwen35 },
    { "golden_qwen35moe", test_golden_qwen35moe },
    { "golden_qwen35moe_mxfp4", test_golden_qwen35moe_mxfp4 },
    { "golden_qwen35_quants", test_golden_qwen35_quants },
    { "qwen_deltanet_chunked", test_deltanet_chunked },
    { "qwen_deltanet_step", test_deltanet_step_equations },
    { "qwen_conv1d_state", test_conv1d_state },
    { "qwen_rope_multi", test_rope_multi },
    { "qwen_moe_route", test_moe_route },
    { "qwen_matmul_id", test_matmul_id },
    { "qwen35_prefill_vs_recurrent", test_qwen35_prefill_vs_recurrent },
    { "qwen35_load_errors", test_qwen35_load_errors },
    { "qwen35_other_shapes", test_qwen35_other_shapes },
    { "golden_bitnet_f32", test_golden_bitnet_f32 },
    { "golden_bitnet_tq2_0", test_golden_bitnet_tq2_0 },
    { "golden_bitnet_tq1_0", test_golden_bitnet_tq1_0 },
    { "bitnet_i2_s", test_bitnet_i2_s },
    { "bitnet_reference_forward", test_bitnet_reference_forward },
    { "bitnet_load_errors", test_bitnet_load_errors },
    { "bitnet_ternary_kernels", test_bitnet_ternary_kernels },
    { "bitnet_matmul_glu", test_bitnet_matmul_glu },
    { "bitnet_synth", test_bitnet_synth },
    { "cli", test_cli },
    { "convert_cli", test_convert_cli },
    { "convert_llama2c", test_convert_llama2c },
    { "st_parse", test_st_parse },
    { "st_corrupt", test_st_corrupt },
    { "hf_dtypes", test_hf_dtypes },
    { "hf_llama", test_hf_llama },
    { "hf_llama3_ropescale", test_hf_llama3_ropescale },
    { "hf_qwen3", test_hf_qwen3 },
    { "hf_qwen3moe", test_hf_qwen3moe },
    { "hf_qwen35", test_hf_qwen35 },
    { "hf_qwen35moe", test_hf_qwen35moe },
    { "hf_bitnet", test_hf_bitnet },
    { "hf_corrupt", test_hf_corrupt },
    { "hf_vocab", test_hf_vocab },
    { "hf_convert_cli", test_hf_convert_cli },
};

int main(int argc, char **argv) {
    int passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        int selected = argc < 2;
        for (int a = 1; a < argc; a++) selected |= strstr(tests[i].name, argv[a]) != NULL;
        if (!selected) continue;
        t_failed = 0;
        t_skipped = 0;
        double t0 = infer_time_seconds();
        printf("%s\n", tests[i].name);
        fflush(stdout);
        tests[i].fn();
        double dt = infer_time_seconds() - t0;
        if (t_failed) { failed++; printf("  FAIL %s (%.2fs)\n", tests[i].name, dt); }
        else if (t_skipped) { skipped++; passed++; printf("  ok (with skips) %s (%.2fs)\n", tests[i].name, dt); }
        else { passed++; printf("  ok %s (%.2fs)\n", tests[i].name, dt); }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
