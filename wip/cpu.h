/* ------------------------------------------------------------------------------------------
 * >>cpu -- the CPU kernel table.
 *
 * Plain C, written to be checked by eye against the equations (the fast dot products live in
 * >>simd and >>ternary; attention converts F16 cache rows 8 at a time with F16C where the
 * compiler targets it). The context carries a thread pool and the `precise` flag:
 *   precise = 1: weights are dequantized to f32 a row at a time and every product and sum
 *                is f32 -- the exact maths the golden logits were computed with.
 *   precise = 0: activations are quantized to the weight type's dot format (int8 blocks),
 *                and the dot products run on integers -- faster, slightly less exact.
 * Matmuls split the output rows across threads; each thread computes whole dot products in
 * the same order whatever the thread count, so results do not depend on it.
 * ---------------------------------------------------------------------------------------- */
#include <assert.h>

typedef struct infer__cpu_ctx {
    infer__pool *pool;
    int n_threads, precise;
    float *wrow;        /* [n_threads, wrow_len] dequantized weight rows (precise path) */
    int64_t wrow_len;
    void *xq;           /* activations quantized to a dot format */
    size_t xq_size;
} infer__cpu_ctx;

static infer__cpu_ctx *infer__cpu_ctx_create(int n_threads, int precise) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)infer__calloc(1, sizeof *c);
    if (!c) return NULL;
    c->n_threads = n_threads < 1 ? 1 : n_threads;
    c->precise = precise;
    c->pool = infer__pool_create(c->n_threads);
    if (!c->pool) { INFER_FREE(c); return NULL; }
    return c;
}
static void infer__cpu_ctx_free(infer__cpu_ctx *c) {
    if (!c) return;
    infer__pool_free(c->pool);
    INFER_FREE(c->wrow);
    INFER_FREE(c->xq);
    INFER_FREE(c);
}
static int infer__cpu_reserve(void **p, size_t *cap, size_t need) {
    if (need <= *cap) return 1;
    void *q = INFER_REALLOC(*p, need);
    if (!q) return 0;
    *p = q;
    *cap = need;
    return 1;
}

static void *infer__cpu_alloc(void *ctx, size_t bytes) { (void)ctx; return infer__calloc(1, bytes); }
static void infer__cpu_free(void *ctx, void *p) { (void)ctx; INFER_FREE(p); }
static infer_status infer__cpu_copy(void *ctx, void *dst, const void *src, size_t bytes) { (void)ctx; memcpy(dst, src, bytes); return INFER_OK; }
static infer_status infer__cpu_sync(void *ctx) { (void)ctx; return INFER_OK; }
static int infer__cpu_supports_type(infer_type t) { return infer_type_block(t) != 0; }

/* dequantize row `r` of a 2-D weight tensor (ne = {K, N}), times the tensor's scale (I2_S's
 * per-tensor scale, or a BitNet `.scale` tensor folded in at load; 1 for everything else) */
static void infer__dequant_row(const infer_tensor *w, int64_t r, float *dst) {
    const int64_t K = w->ne[0];
    const uint8_t *row = (const uint8_t *)w->data + (size_t)r * infer_type_row_size(w->type, K);
    if (w->type == INFER_TYPE_I2_S) { infer__dequant_i2_s(row, w->scale, dst, K); return; }
    infer__type(w->type)->dequant(row, dst, K);
    if (w->scale != 1.0f) for (int64_t k = 0; k < K; k++) dst[k] *= w->scale;
}

/* embedding: out[r] = table[tokens[r]] (one row of the table, dequantized) */
static void infer__cpu_embed(void *ctx, float *out, const infer_tensor *table, const int32_t *tokens, int rows) {
    (void)ctx;
    for (int r = 0; r < rows; r++) infer__dequant_row(table, tokens[r], out + (size_t)r * table->ne[0]);
}

/* RMSNorm: out = x / sqrt(mean(x^2) + eps) * w  (sum of squares in double) */
static void infer__cpu_rmsnorm(void *ctx, float *out, const float *x, const float *w, int rows, int dim, float eps) {
    (void)ctx;
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim;
        float *o = out + (size_t)r * dim;
        double ss = 0;
        for (int i = 0; i < dim; i++) ss += (double)xr[i] * xr[i];
        const float scale = (float)(1.0 / sqrt(ss / dim + eps));
        for (int i = 0; i < dim; i++) o[i] = xr[i] * scale * (w ? w[i] : 1.0f);
    }
}

static float infer__dot_f32_plain(const float *a, const float *b, int64_t n) {
    float s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* The dot product of the fast path for a weight type: the traits' (or its SIMD version);
 * I2_S, outside the traits table, dots its codes against Q8_K (>>ternary). */
static infer__dot_fn infer__matmul_dot(infer_type t) {
    return t == INFER_TYPE_I2_S ? infer__ternary_dot(t) : infer__type_dot(t);
}
static infer_type infer__matmul_dot_type(infer_type t) {
    return t == INFER_TYPE_I2_S ? INFER_TYPE_Q8_K : infer__type(t)->dot_type;
}

/* one output of a matmul in the fast path: weight row (stored type) . activation row (dot
 * type), times the tensor's scale */
static inline float infer__dot_row(const infer_tensor *w, infer__dot_fn dot, const uint8_t *wrow, const void *xr) {
    const float d = dot(w->ne[0], wrow, xr);
    return w->scale != 1.0f ? w->scale * d : d;
}

/* Prepare the activations of a matmul with weight w: in the precise path, room for one
 * dequantized weight row per thread; in the fast path, x [rows, K] quantized to w's dot
 * format. Returns the activation rows to dot with (NULL: precise) and their byte stride. */
static const void *infer__cpu_prepare_x(infer__cpu_ctx *c, const infer_tensor *w, const float *x, int rows, size_t *row_bytes) {
    const int64_t K = w->ne[0];
    if (c->precise) {
        if (c->wrow_len < K) {
            INFER_FREE(c->wrow);
            c->wrow = (float *)INFER_MALLOC((size_t)c->n_threads * (size_t)K * sizeof(float));
            c->wrow_len = K;
        }
        return NULL;
    }
    const infer_type dt = infer__matmul_dot_type(w->type);
    if (dt == INFER_TYPE_F32) {
        *row_bytes = (size_t)K * sizeof(float);
        return x;
    }
    const infer__type_traits *qt = infer__type(dt);
    const int blck = qt->blck;
    const int64_t Kp = (K + blck - 1) / blck * blck;   /* I2_S rows of 128 k: padded to Q8_K blocks */
    *row_bytes = infer_type_row_size(dt, Kp);
    infer__cpu_reserve(&c->xq, &c->xq_size, *row_bytes * (size_t)rows);
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * K;
        uint8_t *dst = (uint8_t *)c->xq + (size_t)r * *row_bytes;
        if (Kp == K) { qt->quant(xr, dst, K); continue; }
        float pad[INFER_QK_K];                         /* the last block, zero-padded */
        memset(pad, 0, sizeof pad);
        memcpy(pad, xr + (K - K % blck), (size_t)(K % blck) * sizeof(float));
        if (K >= blck) qt->quant(xr, dst, K - K % blck);
        qt->quant(pad, dst + infer_type_row_size(dt, K - K % blck), blck);
    }
    return c->xq;
}

typedef struct infer__matmul_job {
    infer__cpu_ctx *c;
    float *out;
    const infer_tensor *w;
    const float *x;
    const void *xq; size_t xq_row;   /* quantized activations and their row stride */
    int rows;
} infer__matmul_job;

static void infer__matmul_task(void *arg, int ith, int nth) {
    infer__matmul_job *j = (infer__matmul_job *)arg;
    const infer_tensor *w = j->w;
    const int64_t K = w->ne[0], N = w->ne[1];
    const int64_t n0 = N * ith / nth, n1 = N * (ith + 1) / nth;
    const size_t wrow_bytes = infer_type_row_size(w->type, K);
    const infer__dot_fn dot = infer__matmul_dot(w->type);
    for (int64_t n = n0; n < n1; n++) {
        if (j->xq == NULL) {                 /* precise: one dequantized row serves every token */
            float *wr = j->c->wrow + (size_t)ith * j->c->wrow_len;
            infer__dequant_row(w, n, wr);
            for (int r = 0; r < j->rows; r++) j->out[(size_t)r * N + n] = infer__dot_f32_plain(wr, j->x + (size_t)r * K, K);
        } else {
            const uint8_t *wrow = (const uint8_t *)w->data + (size_t)n * wrow_bytes;
            for (int r = 0; r < j->rows; r++)
                j->out[(size_t)r * N + n] = infer__dot_row(w, dot, wrow, (const uint8_t *)j->xq + (size_t)r * j->xq_row);
        }
    }
}

/* out[r, n] = sum_k W[n, k] x[r, k]   W: ne = {K, N}, x: [rows, K], out: [rows, N] */
static void infer__cpu_matmul(void *ctx, float *out, const infer_tensor *w, const float *x, int rows) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    infer__matmul_job job = { c, out, w, x, NULL, 0, rows };
    job.xq = infer__cpu_prepare_x(c, w, x, rows, &job.xq_row);
    infer__pool_run(c->pool, infer__matmul_task, &job);
}

static void infer__cpu_add(void *ctx, float *y, const float *x, int64_t n) {
    (void)ctx;
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
}
static void infer__cpu_add_rows(void *ctx, float *y, const float *b, int rows, int dim) {
    (void)ctx;
    for (int r = 0; r < rows; r++) for (int i = 0; i < dim; i++) y[(size_t)r * dim + i] += b[i];
}

/* YaRN's correction range: the pair indices whose wavelength passes through n_ctx_orig at
 * beta rotations. */
static float infer__yarn_corr_dim(int n_rot, int n_ctx_orig, float beta, float base) {
    return (float)(n_rot * log((double)n_ctx_orig / (beta * 2 * M_PI)) / (2 * log((double)base)));
}

/* RoPE: rotate each pair of a head's first n_rot dims by theta_i = pos * base^(-2i/n_rot),
 * divided by freq_factors[i] when given (llama-3.1), interpolated by freq_scale (linear /
 * YaRN). Pairs are (2i, 2i+1) in the GGUF llama layout (its converter permuted q/k rows
 * to make that equal to the rotate-half form), (i, i + n_rot/2) in the NeoX layout.
 *
 * Multi-axis rope (qwen3-vl, qwen3.5) gives each token 4 positions (t, h, w, e) and pair i
 * takes one of them. In the interleaved layout, with n = sum(sections), sector = i mod n:
 *   sector % 3 == 0 and sector < 3*sections[0]  -> t
 *   sector % 3 == 1 and sector < 3*sections[1]  -> h
 *   sector % 3 == 2 and sector < 3*sections[2]  -> w
 *   otherwise                                    -> e
 * For text, t = h = w = the token position and e = 0. */
static int infer__imrope_stream(int i, const int32_t *sec) {
    const int n = sec[0] + sec[1] + sec[2] + sec[3];
    const int sector = n > 0 ? i % n : i;
    if (sector % 3 == 0 && sector < 3 * sec[0]) return 0;
    if (sector % 3 == 1 && sector < 3 * sec[1]) return 1;
    if (sector % 3 == 2 && sector < 3 * sec[2]) return 2;
    return 3;
}

/* pos: [n_streams, rows]; sections NULL: one stream */
static void infer__rope_apply(float *x, int rows, int n_heads, int head_dim, const int32_t *pos, const int32_t *sections, const infer_rope *rp) {
    const int half = rp->n_rot / 2;
    float lo = 0, hi = 0;
    if (rp->ext_factor != 0) {
        lo = floorf(infer__yarn_corr_dim(rp->n_rot, rp->n_ctx_orig, rp->beta_fast, rp->freq_base));
        hi = ceilf(infer__yarn_corr_dim(rp->n_rot, rp->n_ctx_orig, rp->beta_slow, rp->freq_base));
        if (lo < 0) lo = 0;
        if (hi > rp->n_rot - 1) hi = (float)(rp->n_rot - 1);
    }
    for (int r = 0; r < rows; r++) {
        for (int i = 0; i < half; i++) {
            const int32_t p = pos[(size_t)(sections ? infer__imrope_stream(i, sections) : 0) * rows + r];
            double theta_base = p * pow(rp->freq_base, -2.0 * i / rp->n_rot);
            if (rp->freq_factors) theta_base /= rp->freq_factors[i];
            double theta = rp->freq_scale * theta_base, mscale = rp->attn_factor;
            if (rp->ext_factor != 0) {
                double y = (i - lo) / fmax(0.001, hi - lo);
                double ramp = (1 - fmin(1, fmax(0, y))) * rp->ext_factor;
                theta = theta * (1 - ramp) + theta_base * ramp;
                mscale *= 1 + 0.1 * log(1 / rp->freq_scale);
            }
            const float cs = (float)(cos(theta) * mscale), sn = (float)(sin(theta) * mscale);
            for (int h = 0; h < n_heads; h++) {
                float *v = x + ((size_t)r * n_heads + h) * head_dim;
                const int a = rp->neox ? i : 2 * i, b = rp->neox ? i + half : 2 * i + 1;
                const float x0 = v[a], x1 = v[b];
                v[a] = x0 * cs - x1 * sn;
                v[b] = x0 * sn + x1 * cs;
            }
        }
    }
}
static void infer__cpu_rope(void *ctx, float *x, int rows, int n_heads, int head_dim, const int32_t *pos, const infer_rope *rp) {
    (void)ctx;
    infer__rope_apply(x, rows, n_heads, head_dim, pos, NULL, rp);
}
static void infer__cpu_rope_multi(void *ctx, float *x, int rows, int n_heads, int head_dim, const int32_t *pos,
                                  const infer_rope *rp, const int32_t *sections) {
    (void)ctx;
    infer__rope_apply(x, rows, n_heads, head_dim, pos, sections, rp);
}

/* address of cache row `p` (a token position) through the block table */
static size_t infer__kv_row(const infer_kv_view *kv, int32_t p) {
    return (size_t)kv->block_table[p / kv->block_size] * kv->block_size + p % kv->block_size;
}

static void infer__cpu_kv_store(void *ctx, const infer_kv_view *kv, const float *k, const float *v, const int32_t *pos, int rows) {
    (void)ctx;
    for (int r = 0; r < rows; r++) {
        const size_t off = infer__kv_row(kv, pos[r]) * kv->kv_dim;
        const float *kr = k + (size_t)r * kv->kv_dim, *vr = v + (size_t)r * kv->kv_dim;
        if (kv->type == INFER_TYPE_F16) {
            infer_half *kd = (infer_half *)kv->k + off, *vd = (infer_half *)kv->v + off;
            for (int i = 0; i < kv->kv_dim; i++) { kd[i] = infer__fp32_to_fp16(kr[i]); vd[i] = infer__fp32_to_fp16(vr[i]); }
        } else {
            memcpy((float *)kv->k + off, kr, (size_t)kv->kv_dim * sizeof(float));
            memcpy((float *)kv->v + off, vr, (size_t)kv->kv_dim * sizeof(float));
        }
    }
}

/* Cache row `row` of a K or V pool (head slice at column `col`, hd values) as f32: F32 pools
 * are read in place, F16 rows are converted into tmp (8 at a time with F16C: exact, like
 * the scalar conversion). */
#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif
static inline const float *infer__kv_row_f32(const infer_kv_view *kv, const void *pool, size_t row, int col, int hd, float *tmp) {
    const size_t at = row * kv->kv_dim + (size_t)col;
    if (kv->type != INFER_TYPE_F16) return (const float *)pool + at;
    const infer_half *h = (const infer_half *)pool + at;
    int i = 0;
#if defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= hd; i += 8) _mm256_storeu_ps(tmp + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
#endif
    for (; i < hd; i++) tmp[i] = infer__fp16_to_fp32(h[i]);
    return tmp;
}

/* a . b with 16 independent partial sums: one running sum would wait on every add, and
 * lanes of fixed width are what the compiler turns into vector multiply-adds */
static inline float infer__dot_f32_16(const float *a, const float *b, int n) {
    float s[16] = { 0 };
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++) s[k] += a[i + k] * b[i + k];
    for (; i < n; i++) s[0] += a[i] * b[i];
    for (int k = 0; k < 8; k++) s[k] += s[k + 8];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* y += w x, 8 at a time for the same reason */
static inline void infer__axpy_f32_8(float *INFER_RESTRICT y, float w, const float *INFER_RESTRICT x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) y[i + k] += w * x[i + k];
    for (; i < n; i++) y[i] += w * x[i];
}

typedef struct infer__attn_job {
    float *out; const float *q; const infer_kv_view *kv; const int32_t *pos;
    int rows, n_head, n_head_kv, head_dim; float scale;
    int heads;               /* query heads per task: the GQA group, or a part of it */
    float *scratch;          /* per thread: [heads, max_pos + 1] scores, then one converted cache row */
    size_t scratch_len;
    const size_t *rows_of;   /* [max_pos + 1]: cache row of each position (via the block table) */
} infer__attn_job;

/* One (token, run of `heads` query heads sharing a KV head): the heads go together, so each
 * cache row is read (and converted) once for all of them. For query head h:
 *   o_h = sum_j softmax_j(q_h . k_j * scale) v_j   over cache positions j <= pos */
static void infer__attn_task(void *arg, int ith, int nth) {
    infer__attn_job *j = (infer__attn_job *)arg;
    const infer_kv_view *kv = j->kv;
    const int group = j->n_head / j->n_head_kv, heads = j->heads, hd = j->head_dim;
    float *s = j->scratch + (size_t)ith * j->scratch_len, *tmp = s + (j->scratch_len - (size_t)hd);
    const size_t stride = (j->scratch_len - (size_t)hd) / (size_t)heads;   /* scores of one query head */
    const int per_row = j->n_head / heads;
    for (int task = ith; task < j->rows * per_row; task += nth) {
        const int r = task / per_row, h0 = task % per_row * heads, g = h0 / group;
        const float *q = j->q + ((size_t)r * j->n_head + (size_t)h0) * hd;
        float *o = j->out + ((size_t)r * j->n_head + (size_t)h0) * hd;
        const int32_t n = j->pos[r] + 1;
        for (int32_t p = 0; p < n; p++) {
            const float *k = infer__kv_row_f32(kv, kv->k, j->rows_of[p], g * hd, hd, tmp);
            for (int h = 0; h < heads; h++) s[h * stride + p] = infer__dot_f32_16(q + (size_t)h * hd, k, hd) * j->scale;
        }
        for (int h = 0; h < heads; h++) {                      /* softmax, normalised in place */
            float *sh = s + h * stride, mx = -INFINITY, sum = 0;
            for (int32_t p = 0; p < n; p++) mx = sh[p] > mx ? sh[p] : mx;
            for (int32_t p = 0; p < n; p++) { sh[p] = expf(sh[p] - mx); sum += sh[p]; }
            for (int32_t p = 0; p < n; p++) sh[p] /= sum;
        }
        memset(o, 0, sizeof(float) * (size_t)heads * hd);
        for (int32_t p = 0; p < n; p++) {
            const float *v = infer__kv_row_f32(kv, kv->v, j->rows_of[p], g * hd, hd, tmp);
            for (int h = 0; h < heads; h++) infer__axpy_f32_8(o + (size_t)h * hd, s[h * stride + p], v, hd);
        }
    }
}

static void infer__cpu_attention(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos,
                                 int rows, int n_head, int n_head_kv, int head_dim, float scale) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    int32_t maxp = 0;
    for (int r = 0; r < rows; r++) if (pos[r] > maxp) maxp = pos[r];
    /* whole GQA groups per task, halved while that leaves threads without two tasks each */
    int heads = n_head / n_head_kv;
    while (heads % 2 == 0 && rows * (n_head / heads) < 2 * c->n_threads) heads /= 2;
    infer__attn_job j = { out, q, kv, pos, rows, n_head, n_head_kv, head_dim, scale, heads, NULL, 0, NULL };
    j.scratch_len = (size_t)heads * (size_t)(maxp + 1) + (size_t)head_dim;
    j.scratch = (float *)INFER_MALLOC((size_t)c->n_threads * j.scratch_len * sizeof(float));
    size_t *rows_of = (size_t *)INFER_MALLOC((size_t)(maxp + 1) * sizeof(size_t));
    if (j.scratch && rows_of) {
        for (int32_t p = 0; p <= maxp; p++) rows_of[p] = infer__kv_row(kv, p);
        j.rows_of = rows_of;
        infer__pool_run(c->pool, infer__attn_task, &j);
    }
    INFER_FREE(j.scratch);
    INFER_FREE(rows_of);
}

/* SwiGLU: out = silu(gate) * up, silu(z) = z / (1 + e^-z) */
static void infer__cpu_swiglu(void *ctx, float *out, const float *gate, const float *up, int64_t n) {
    (void)ctx;
    for (int64_t i = 0; i < n; i++) out[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

/* Gated linear unit with the activation `act` (INFER__ACT_*): out = act(gate) * up.
 *   SiLU:   act(z) = z / (1 + e^-z)                  (SwiGLU)
 *   ReLU^2: act(z) = max(z, 0)^2                     (BitNet b1.58-2B-4T's "relu2") */
enum { INFER__ACT_SILU = 0, INFER__ACT_RELU2 = 1 };
static void infer__cpu_glu(void *ctx, float *out, const float *gate, const float *up, int64_t n, int act) {
    if (act == INFER__ACT_SILU) { infer__cpu_swiglu(ctx, out, gate, up, n); return; }
    for (int64_t i = 0; i < n; i++) {
        const float r = gate[i] > 0 ? gate[i] : 0.0f;
        out[i] = r * r * up[i];
    }
}

/* ---- hybrid and mixture-of-experts ops ---- */
static void infer__cpu_zero(void *ctx, void *p, size_t bytes) { (void)ctx; memset(p, 0, bytes); }

static void infer__cpu_copy_rows(void *ctx, float *dst, int dst_stride, const float *src, int src_stride, int rows, int dim) {
    (void)ctx;
    for (int r = 0; r < rows; r++) memcpy(dst + (size_t)r * dst_stride, src + (size_t)r * src_stride, (size_t)dim * sizeof(float));
}

static inline float infer__sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

static void infer__cpu_mul_sigmoid(void *ctx, float *y, const float *g, int rows, int dim, int g_cols) {
    (void)ctx;
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < dim; i++) y[(size_t)r * dim + i] *= infer__sigmoid(g[(size_t)r * g_cols + (g_cols == 1 ? 0 : i)]);
}

/* L2 normalisation: x / max(||x||, eps) -- eps bounds the norm, it is not added under the root */
static void infer__cpu_l2norm(void *ctx, float *x, int rows, int dim, float eps) {
    (void)ctx;
    for (int r = 0; r < rows; r++) {
        float *v = x + (size_t)r * dim;
        double ss = 0;
        for (int i = 0; i < dim; i++) ss += (double)v[i] * v[i];
        const float scale = 1.0f / fmaxf(sqrtf((float)ss), eps);
        for (int i = 0; i < dim; i++) v[i] *= scale;
    }
}

/* ---- mixture of experts ----
 * A router scores the experts for each token; the token goes through the n_used best and
 * their outputs are mixed with the router's weights:
 *   p = softmax(W_router h)                       [n_expert]
 *   S = the n_used largest p (ties: lower id)      w_e = p_e (/ sum_S p when renormalised)
 *   y = sum_{e in S} w_e * W_down_e( silu(W_gate_e h) * (W_up_e h) ) */
static void infer__cpu_moe_route(void *ctx, int32_t *ids, float *weights, const float *logits, int rows, int n_expert,
                                 int n_used, int gating, int norm, float scale) {
    (void)ctx;
    float *p = (float *)INFER_MALLOC((size_t)n_expert * sizeof(float));
    if (!p) return;
    for (int r = 0; r < rows; r++) {
        const float *l = logits + (size_t)r * n_expert;
        if (gating == 2) {
            for (int e = 0; e < n_expert; e++) p[e] = infer__sigmoid(l[e]);
        } else {
            float mx = -INFINITY;
            for (int e = 0; e < n_expert; e++) mx = fmaxf(mx, l[e]);
            double sum = 0;
            for (int e = 0; e < n_expert; e++) { p[e] = expf(l[e] - mx); sum += p[e]; }
            for (int e = 0; e < n_expert; e++) p[e] = (float)(p[e] / sum);
        }
        int32_t *id = ids + (size_t)r * n_used;
        float *w = weights + (size_t)r * n_used, wsum = 0;
        for (int s = 0; s < n_used; s++) {           /* selection: n_used passes of argmax */
            int best = -1;
            for (int e = 0; e < n_expert; e++) {
                int taken = 0;
                for (int u = 0; u < s; u++) taken |= id[u] == e;
                if (!taken && (best < 0 || p[e] > p[best])) best = e;
            }
            id[s] = best;
            w[s] = p[best];
            wsum += p[best];
        }
        for (int s = 0; s < n_used; s++) w[s] = (norm ? w[s] / wsum : w[s]) * scale;
    }
    INFER_FREE(p);
}

typedef struct infer__matmul_id_job {
    infer__cpu_ctx *c;
    float *out;
    const infer_tensor *w;
    const float *x;
    const void *xq; size_t xq_row;
    const int32_t *order;    /* output rows (token * n_used + slot) grouped by expert */
    const int32_t *start;    /* [n_expert + 1]: expert e owns order[start[e] .. start[e+1]) */
    int n_used, x_per_slot;
} infer__matmul_id_job;

/* each thread owns a slice of the output columns N, for every expert in use */
static void infer__matmul_id_task(void *arg, int ith, int nth) {
    infer__matmul_id_job *j = (infer__matmul_id_job *)arg;
    const infer_tensor *w = j->w;
    const int64_t K = w->ne[0], N = w->ne[1], E = w->ne[2];
    const int64_t n0 = N * ith / nth, n1 = N * (ith + 1) / nth;
    const size_t wrow_bytes = infer_type_row_size(w->type, K);
    const infer__dot_fn dot = infer__matmul_dot(w->type);
    for (int64_t e = 0; e < E; e++) {
        for (int64_t n = n0; n < n1 && j->start[e] < j->start[e + 1]; n++) {
            const int64_t wr_index = e * N + n;              /* the experts' rows are contiguous */
            float *wr = NULL;
            if (!j->xq) { wr = j->c->wrow + (size_t)ith * j->c->wrow_len; infer__dequant_row(w, wr_index, wr); }
            for (int32_t o = j->start[e]; o < j->start[e + 1]; o++) {
                const int32_t row = j->order[o], xrow = j->x_per_slot ? row : row / j->n_used;
                float *dst = &j->out[(size_t)row * N + n];
                if (wr) *dst = infer__dot_f32_plain(wr, j->x + (size_t)xrow * K, K);
                else *dst = infer__dot_row(w, dot, (const uint8_t *)w->data + (size_t)wr_index * wrow_bytes, (const uint8_t *)j->xq + (size_t)xrow * j->xq_row);
            }
        }
    }
}

static void infer__cpu_matmul_id(void *ctx, float *out, const infer_tensor *w, const float *x, const int32_t *ids,
                                 int rows, int n_used, int x_per_slot) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    const int64_t E = w->ne[2];
    const int n_out = rows * n_used;
    int32_t *start = (int32_t *)infer__calloc((size_t)E + 1, sizeof(int32_t));
    int32_t *order = (int32_t *)infer__calloc((size_t)n_out, sizeof(int32_t));
    if (!start || !order) { INFER_FREE(start); INFER_FREE(order); return; }
    for (int i = 0; i < n_out; i++) start[ids[i] + 1]++;          /* counting sort by expert */
    for (int64_t e = 0; e < E; e++) start[e + 1] += start[e];
    int32_t *fill = (int32_t *)infer__calloc((size_t)E, sizeof(int32_t));
    if (fill) {
        for (int i = 0; i < n_out; i++) order[start[ids[i]] + fill[ids[i]]++] = i;
        infer__matmul_id_job job = { c, out, w, x, NULL, 0, order, start, n_used, x_per_slot };
        job.xq = infer__cpu_prepare_x(c, w, x, x_per_slot ? n_out : rows, &job.xq_row);
        infer__pool_run(c->pool, infer__matmul_id_task, &job);
    }
    INFER_FREE(fill); INFER_FREE(start); INFER_FREE(order);
}

static void infer__cpu_moe_sum(void *ctx, float *out, const float *y, const float *weights, int rows, int n_used, int dim) {
    (void)ctx;
    for (int r = 0; r < rows; r++) {
        float *o = out + (size_t)r * dim;
        for (int i = 0; i < dim; i++) o[i] = 0;
        for (int s = 0; s < n_used; s++) {
            const float w = weights[(size_t)r * n_used + s], *ys = y + ((size_t)r * n_used + s) * dim;
            for (int i = 0; i < dim; i++) o[i] += w * ys[i];
        }
    }
}

/* ---- gated DeltaNet ----
 * Causal depthwise conv: channel c at token t sees its last K inputs,
 *   y_t[c] = sum_{j<K-1} w[c, j] * state[j, c] + w[c, K-1] * x_t[c],   then the state shifts
 * by one (the oldest input drops out, x_t[c] comes in). The K-1 previous inputs of a channel
 * are read into locals once, carried through the tokens and written back once. */
#define INFER__MAX_CONV 16
static void infer__cpu_conv1d_silu(void *ctx, float *out, const float *x, float *state, const float *w, int rows, int channels, int kernel) {
    (void)ctx;
    const int H = kernel - 1;
    assert(H < INFER__MAX_CONV);
    for (int c = 0; c < channels; c++) {
        float hist[INFER__MAX_CONV];
        const float *wc = w + (size_t)c * kernel;
        for (int j = 0; j < H; j++) hist[j] = state[(size_t)j * channels + c];
        for (int t = 0; t < rows; t++) {
            const float xt = x[(size_t)t * channels + c];
            float y = wc[H] * xt;
            for (int j = 0; j < H; j++) y += wc[j] * hist[j];
            for (int j = 0; j + 1 < H; j++) hist[j] = hist[j + 1];
            if (H > 0) hist[H - 1] = xt;
            out[(size_t)t * channels + c] = y / (1.0f + expf(-y));
        }
        for (int j = 0; j < H; j++) state[(size_t)j * channels + c] = hist[j];
    }
}

/* g = softplus(alpha + dt_bias) * a, the log of the per-token decay (a < 0, so g <= 0);
 * beta = sigmoid(beta), the write strength. softplus(z) = log(1 + e^z), = z above 20. */
static void infer__cpu_deltanet_gates(void *ctx, float *g, float *beta, const float *dt_bias, const float *a, int rows, int n_v) {
    (void)ctx;
    for (int r = 0; r < rows; r++)
        for (int h = 0; h < n_v; h++) {
            const size_t i = (size_t)r * n_v + h;
            const float z = g[i] + dt_bias[h];
            g[i] = (z > 20.0f ? z : log1pf(expf(z))) * a[h];
            beta[i] = infer__sigmoid(beta[i]);
        }
}

/* The gated delta rule, per value head h (key head h % n_k), per token t:
 *   S  <- exp(g_t) S                         decay; S: [d_k, d_v], a key -> value memory
 *   u  =  S^T k_t                             what the memory recalls for k_t   [d_v]
 *   S  <- S + k_t (beta_t (v_t - u))^T        move the recall of k_t towards v_t
 *   o_t = scale * S^T q_t                                                       [d_v]
 * The state is stored by value column: state[h, j, :] = S[:, j] (d_k contiguous floats), and
 * every column is independent, so the step walks a column twice (recall, then update and
 * readout) and writes it once, in place. */
typedef struct infer__dn_job {
    float *out; const float *q, *k, *v, *g, *beta; float *state;
    int rows, n_k, n_v, d_k, d_v; float scale;
    float *scratch; size_t scratch_per_thread;   /* chunked form only */
} infer__dn_job;

static void infer__deltanet_step_task(void *arg, int ith, int nth) {
    const infer__dn_job *j = (const infer__dn_job *)arg;
    const int d_k = j->d_k, d_v = j->d_v;
    for (int h = ith; h < j->n_v; h += nth) {
        const int kh = h % j->n_k;
        for (int t = 0; t < j->rows; t++) {
            const float *q = j->q + ((size_t)t * j->n_k + kh) * d_k, *k = j->k + ((size_t)t * j->n_k + kh) * d_k;
            const float *v = j->v + ((size_t)t * j->n_v + h) * d_v;
            const float decay = expf(j->g[(size_t)t * j->n_v + h]), beta = j->beta[(size_t)t * j->n_v + h];
            float *o = j->out + ((size_t)t * j->n_v + h) * d_v;
            for (int c = 0; c < d_v; c++) {
                float *col = j->state + ((size_t)h * d_v + c) * d_k;
                float u = 0, y = 0;
                for (int i = 0; i < d_k; i++) u += col[i] * k[i];
                const float delta = beta * (v[c] - decay * u);
                for (int i = 0; i < d_k; i++) {
                    const float s = decay * col[i] + k[i] * delta;
                    col[i] = s;
                    y += s * q[i];
                }
                o[c] = j->scale * y;
            }
        }
    }
}

static void infer__cpu_deltanet_step(void *ctx, float *out, const float *q, const float *k, const float *v, const float *g,
                                     const float *beta, float *state, int rows, int n_k, int n_v, int d_k, int d_v, float scale) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    infer__dn_job j = { out, q, k, v, g, beta, state, rows, n_k, n_v, d_k, d_v, scale, NULL, 0 };
    infer__pool_run(c->pool, infer__deltanet_step_task, &j);
}

/* The chunked form. Over a chunk of L <= 64 tokens starting from state S0, write
 * G_t = g_0 + ... + g_t (so exp(G_t - G_r) is the decay from token r to token t) and
 * w_t = beta_t (v_t - u_t) for the vector the step adds. Unrolling the step,
 *   S_t = e^{G_t} S0 + sum_{r<=t} e^{G_t - G_r} k_r w_r^T,  and so
 *   w_t = beta_t (v_t - e^{G_t} S0^T k_t) - sum_{r<t} beta_t e^{G_t - G_r} (k_t.k_r) w_r:
 * a unit lower-triangular system (I + A) W = B, solved by forward substitution. Then
 *   o_t   = scale (e^{G_t} S0^T q_t + sum_{r<=t} e^{G_t - G_r} (q_t.k_r) w_r)
 *   S_end = e^{G_L-1} S0 + sum_r e^{G_L-1 - G_r} k_r w_r^T.
 * As matrix products over the chunk (K, Q: [L, d_k], V, W: [L, d_v], S0: [d_k, d_v]):
 *   B = beta (V - e^G (K S0)),  A = strictly_lower(beta e^{G_t-G_r} (K K^T)),  W = (I+A)^-1 B,
 *   O = scale (e^G (Q S0) + (causal(e^{G_t-G_r}) * (Q K^T)) W),  S = e^{G_L-1} S0 + K_d^T W
 * with K_d the keys scaled by their decay to the chunk's end. Every exponent is <= 0. */
#define INFER__DN_CHUNK 64

/* C[m, n] = sum_i A[m, i] B[n, i]   (A: [M, K] rows lda apart, B: [N, K] rows ldb apart) */
static void infer__gemm_nt(float *C, int ldc, const float *A, int lda, const float *B, int ldb, int M, int N, int K) {
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) C[(size_t)m * ldc + n] = infer__dot_f32_plain(A + (size_t)m * lda, B + (size_t)n * ldb, K);
}

static void infer__deltanet_chunk(const infer__dn_job *j, int h, int t0, int L, float *scr) {
    const int d_k = j->d_k, d_v = j->d_v, kh = h % j->n_k, C = INFER__DN_CHUNK;
    const int ldk = j->n_k * d_k;                              /* row stride of q and k */
    const float *Q = j->q + (size_t)t0 * ldk + (size_t)kh * d_k, *K = j->k + (size_t)t0 * ldk + (size_t)kh * d_k;
    float *S = j->state + (size_t)h * d_v * d_k;               /* S0 column by column: [d_v, d_k] */
    float *G = scr, *KK = G + C, *QK = KK + (size_t)C * C, *W = QK + (size_t)C * C, *QS = W + (size_t)C * d_v, *Kd = QS + (size_t)C * d_v;
    float beta[INFER__DN_CHUNK];
    for (int t = 0; t < L; t++) {
        G[t] = (t ? G[t - 1] : 0.0f) + j->g[(size_t)(t0 + t) * j->n_v + h];
        beta[t] = j->beta[(size_t)(t0 + t) * j->n_v + h];
    }
    infer__gemm_nt(W, d_v, K, ldk, S, d_k, L, d_v, d_k);       /* K S0  -> W     [L, d_v] */
    infer__gemm_nt(QS, d_v, Q, ldk, S, d_k, L, d_v, d_k);      /* Q S0           [L, d_v] */
    infer__gemm_nt(KK, C, K, ldk, K, ldk, L, L, d_k);          /* K K^T          [L, L]   */
    infer__gemm_nt(QK, C, Q, ldk, K, ldk, L, L, d_k);          /* Q K^T          [L, L]   */
    for (int t = 0; t < L; t++) {                              /* B, then forward substitution */
        const float *v = j->v + ((size_t)(t0 + t) * j->n_v + h) * d_v, eg = expf(G[t]);
        float *w = W + (size_t)t * d_v;
        for (int c = 0; c < d_v; c++) w[c] = beta[t] * (v[c] - eg * w[c]);
        for (int r = 0; r < t; r++) {
            const float a = beta[t] * expf(G[t] - G[r]) * KK[(size_t)t * C + r];
            const float *wr = W + (size_t)r * d_v;
            for (int c = 0; c < d_v; c++) w[c] -= a * wr[c];
        }
    }
    for (int t = 0; t < L; t++) {                              /* O */
        float *o = j->out + ((size_t)(t0 + t) * j->n_v + h) * d_v;
        const float eg = expf(G[t]);
        for (int c = 0; c < d_v; c++) o[c] = eg * QS[(size_t)t * d_v + c];
        for (int r = 0; r <= t; r++) {
            const float p = expf(G[t] - G[r]) * QK[(size_t)t * C + r];
            const float *wr = W + (size_t)r * d_v;
            for (int c = 0; c < d_v; c++) o[c] += p * wr[c];
        }
        for (int c = 0; c < d_v; c++) o[c] *= j->scale;
    }
    const float g_end = G[L - 1], e_end = expf(g_end);         /* S = e^{G_end} S0 + K_d^T W */
    for (int r = 0; r < L; r++) {
        const float d = expf(g_end - G[r]);
        for (int i = 0; i < d_k; i++) Kd[(size_t)r * d_k + i] = d * K[(size_t)r * ldk + i];
    }
    for (int c = 0; c < d_v; c++) {
        float *col = S + (size_t)c * d_k;
        for (int i = 0; i < d_k; i++) {
            float s = e_end * col[i];
            for (int r = 0; r < L; r++) s += Kd[(size_t)r * d_k + i] * W[(size_t)r * d_v + c];
            col[i] = s;
        }
    }
}

static void infer__deltanet_chunked_task(void *arg, int ith, int nth) {
    const infer__dn_job *j = (const infer__dn_job *)arg;
    float *scr = j->scratch + (size_t)ith * j->scratch_per_thread;
    for (int h = ith; h < j->n_v; h += nth)
        for (int t0 = 0; t0 < j->rows; t0 += INFER__DN_CHUNK)
            infer__deltanet_chunk(j, h, t0, j->rows - t0 < INFER__DN_CHUNK ? j->rows - t0 : INFER__DN_CHUNK, scr);
}

static void infer__cpu_deltanet_chunked(void *ctx, float *out, const float *q, const float *k, const float *v, const float *g,
                                        const float *beta, float *state, int rows, int n_k, int n_v, int d_k, int d_v, float scale) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    const size_t C = INFER__DN_CHUNK;
    infer__dn_job j = { out, q, k, v, g, beta, state, rows, n_k, n_v, d_k, d_v, scale, NULL, 0 };
    j.scratch_per_thread = C + 2 * C * C + 2 * C * (size_t)d_v + C * (size_t)d_k;
    j.scratch = (float *)INFER_MALLOC((size_t)c->n_threads * j.scratch_per_thread * sizeof(float));
    if (!j.scratch) return;
    infer__pool_run(c->pool, infer__deltanet_chunked_task, &j);
    INFER_FREE(j.scratch);
}

static const infer_kernels infer__cpu_kernels = {
    "cpu",
    infer__cpu_alloc, infer__cpu_free, infer__cpu_copy, infer__cpu_copy, infer__cpu_sync, infer__cpu_supports_type,
    infer__cpu_embed, infer__cpu_rmsnorm, infer__cpu_matmul, infer__cpu_add, infer__cpu_add_rows,
    infer__cpu_rope, infer__cpu_kv_store, infer__cpu_attention, infer__cpu_swiglu,
    infer__cpu_zero, infer__cpu_copy_rows, infer__cpu_mul_sigmoid, infer__cpu_l2norm, infer__cpu_rope_multi,
    infer__cpu_moe_route, infer__cpu_matmul_id, infer__cpu_moe_sum,
    infer__cpu_conv1d_silu, infer__cpu_deltanet_gates, infer__cpu_deltanet_step, infer__cpu_deltanet_chunked,
};

const infer_kernels *infer_cpu_kernels(void) { return &infer__cpu_kernels; }
