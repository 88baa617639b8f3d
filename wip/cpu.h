/* ------------------------------------------------------------------------------------------
 * >>cpu -- the CPU kernel table.
 *
 * Plain C, written to be checked by eye against the equations. The context carries a thread
 * pool and the `precise` flag:
 *   precise = 1: weights are dequantized to f32 a row at a time and every product and sum
 *                is f32 -- the exact maths the golden logits were computed with.
 *   precise = 0: activations are quantized to the weight type's dot format (int8 blocks),
 *                and the dot products run on integers -- faster, slightly less exact.
 * Matmuls split the output rows across threads; each thread computes whole dot products in
 * the same order whatever the thread count, so results do not depend on it.
 * ---------------------------------------------------------------------------------------- */
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

/* dequantize row `r` of a 2-D weight tensor (ne = {K, N}) */
static void infer__dequant_row(const infer_tensor *w, int64_t r, float *dst) {
    const int64_t K = w->ne[0];
    const uint8_t *row = (const uint8_t *)w->data + (size_t)r * infer_type_row_size(w->type, K);
#ifdef INFER__HAVE_I2_S
    if (w->type == INFER_TYPE_I2_S) { infer__dequant_i2_s(row, w->scale, dst, K); return; }
#endif
    infer__type(w->type)->dequant(row, dst, K);
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

/* one output of a matmul in the fast path: weight row (stored type) . activation row (dot type) */
static inline float infer__dot_row(const infer_tensor *w, infer__dot_fn dot, const uint8_t *wrow, const void *xr) {
#ifdef INFER__HAVE_I2_S
    if (w->type == INFER_TYPE_I2_S) return w->scale * infer__dot_i2_s(w->ne[0], wrow, xr);
#endif
    return dot(w->ne[0], wrow, xr);
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
    infer_type dt = w->type == INFER_TYPE_I2_S ? INFER_TYPE_Q8_0 : infer__type(w->type)->dot_type;
    if (dt == INFER_TYPE_F32) {
        *row_bytes = (size_t)K * sizeof(float);
        return x;
    }
    const infer__type_traits *qt = infer__type(dt);
    *row_bytes = infer_type_row_size(dt, K);
    infer__cpu_reserve(&c->xq, &c->xq_size, *row_bytes * (size_t)rows);
    for (int r = 0; r < rows; r++) qt->quant(x + (size_t)r * K, (uint8_t *)c->xq + (size_t)r * *row_bytes, K);
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
    const infer__dot_fn dot = infer__type_dot(w->type);
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

static inline float infer__kv_get(const infer_kv_view *kv, const void *base, size_t i) {
    return kv->type == INFER_TYPE_F16 ? infer__fp16_to_fp32(((const infer_half *)base)[i]) : ((const float *)base)[i];
}

typedef struct infer__attn_job {
    float *out; const float *q; const infer_kv_view *kv; const int32_t *pos;
    int rows, n_head, n_head_kv, head_dim; float scale;
    float *scores;  /* [n_threads, max_pos + 1] */
    int32_t n_scores;
} infer__attn_job;

/* one (token, head): o = sum_j softmax_j(q.k_j * scale) v_j over cache positions j <= pos */
static void infer__attn_task(void *arg, int ith, int nth) {
    infer__attn_job *j = (infer__attn_job *)arg;
    const infer_kv_view *kv = j->kv;
    const int group = j->n_head / j->n_head_kv, hd = j->head_dim;
    float *s = j->scores + (size_t)ith * j->n_scores;
    for (int task = ith; task < j->rows * j->n_head; task += nth) {
        const int r = task / j->n_head, h = task % j->n_head, g = h / group;
        const float *q = j->q + ((size_t)r * j->n_head + h) * hd;
        float *o = j->out + ((size_t)r * j->n_head + h) * hd;
        const int32_t n = j->pos[r] + 1;
        float mx = -INFINITY;
        for (int32_t p = 0; p < n; p++) {
            const size_t base = infer__kv_row(kv, p) * kv->kv_dim + (size_t)g * hd;
            float d = 0;
            for (int i = 0; i < hd; i++) d += q[i] * infer__kv_get(kv, kv->k, base + i);
            s[p] = d * j->scale;
            if (s[p] > mx) mx = s[p];
        }
        float sum = 0;
        for (int32_t p = 0; p < n; p++) { s[p] = expf(s[p] - mx); sum += s[p]; }
        for (int i = 0; i < hd; i++) o[i] = 0;
        for (int32_t p = 0; p < n; p++) {
            const size_t base = infer__kv_row(kv, p) * kv->kv_dim + (size_t)g * hd;
            const float w = s[p] / sum;
            for (int i = 0; i < hd; i++) o[i] += w * infer__kv_get(kv, kv->v, base + i);
        }
    }
}

static void infer__cpu_attention(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos,
                                 int rows, int n_head, int n_head_kv, int head_dim, float scale) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    int32_t maxp = 0;
    for (int r = 0; r < rows; r++) if (pos[r] > maxp) maxp = pos[r];
    infer__attn_job j = { out, q, kv, pos, rows, n_head, n_head_kv, head_dim, scale, NULL, maxp + 1 };
    j.scores = (float *)INFER_MALLOC((size_t)c->n_threads * (size_t)(maxp + 1) * sizeof(float));
    if (!j.scores) return;
    infer__pool_run(c->pool, infer__attn_task, &j);
    INFER_FREE(j.scores);
}

/* SwiGLU: out = silu(gate) * up, silu(z) = z / (1 + e^-z) */
static void infer__cpu_swiglu(void *ctx, float *out, const float *gate, const float *up, int64_t n) {
    (void)ctx;
    for (int64_t i = 0; i < n; i++) out[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

static const infer_kernels infer__cpu_kernels = {
    "cpu",
    infer__cpu_alloc, infer__cpu_free, infer__cpu_copy, infer__cpu_copy, infer__cpu_sync, infer__cpu_supports_type,
    infer__cpu_embed, infer__cpu_rmsnorm, infer__cpu_matmul, infer__cpu_add, infer__cpu_add_rows,
    infer__cpu_rope, infer__cpu_kv_store, infer__cpu_attention, infer__cpu_swiglu,
};

const infer_kernels *infer_cpu_kernels(void) { return &infer__cpu_kernels; }
