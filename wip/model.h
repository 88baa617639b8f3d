/* ------------------------------------------------------------------------------------------
 * >>arch -- model families as descriptors.
 *
 * The families differ in small ways around one transformer block; each difference is a
 * field here instead of a separate forward pass:
 *   rope_neox   rotate (i, i+n/2) pairs instead of (2i, 2i+1)   qwen2, qwen3
 *   qkv_bias    q/k/v projections may carry biases              qwen2 (llama optional)
 *   qk_norm     RMSNorm over each head of q and k before rope   qwen3
 * ---------------------------------------------------------------------------------------- */
typedef struct infer__arch {
    const char *name;
    int rope_neox;
    int qk_norm;
} infer__arch;

static const infer__arch infer__archs[] = {
    { "llama", 0, 0 },
    { "qwen2", 1, 0 },
    { "qwen3", 1, 1 },
};

static const infer__arch *infer__find_arch(infer_str name) {
    for (size_t i = 0; i < sizeof infer__archs / sizeof infer__archs[0]; i++)
        if (infer__str_eq(name, infer__archs[i].name)) return &infer__archs[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * >>load -- from GGUF tensors to model weights.
 *
 * Weights are pointers into the mmapped file: loading copies nothing, and the OS pages
 * weights in as the first forward pass touches them. Every tensor's shape is checked
 * against the hyper-parameters here, so the forward pass can trust them.
 * ---------------------------------------------------------------------------------------- */
typedef struct infer__layer {
    const infer_tensor *attn_norm;            /* [n_embd] */
    const infer_tensor *wq, *wk, *wv;         /* [n_head*head_dim, n_embd], [n_head_kv*head_dim, n_embd] x2 */
    const infer_tensor *bq, *bk, *bv;         /* biases of the same out sizes, or NULL */
    const infer_tensor *q_norm, *k_norm;      /* [head_dim] (qwen3), or NULL */
    const infer_tensor *wo;                   /* [n_embd, n_head*head_dim_v] */
    const infer_tensor *ffn_norm;             /* [n_embd] */
    const infer_tensor *ffn_gate, *ffn_up;    /* [n_ff, n_embd] */
    const infer_tensor *ffn_down;             /* [n_embd, n_ff] */
} infer__layer;

struct infer_model {
    infer__mapping map;
    infer_gguf gguf;
    infer_config cfg;
    const infer__arch *arch;
    infer_tokenizer *tok;
    const infer_tensor *tok_embd;             /* [n_vocab, n_embd] */
    const infer_tensor *output_norm;          /* [n_embd] */
    const infer_tensor *output;               /* [n_vocab, n_embd]; = tok_embd when tied */
    const infer_tensor *rope_freqs;           /* [n_rot/2] llama-3.1 frequency divisors, or NULL */
    infer__layer *layers;                     /* [n_layer] */
};

const infer_config *infer_model_config(const infer_model *m) { return &m->cfg; }
const infer_gguf *infer_model_gguf(const infer_model *m) { return &m->gguf; }
const infer_tokenizer *infer_model_tokenizer(const infer_model *m) { return m->tok; }

/* read `<arch>.<suffix>` as an int; `need` makes absence an error */
static infer_status infer__cfg_int(const infer_model *m, const char *suffix, int32_t *out, int need, int64_t lo, int64_t hi, infer_error *err) {
    char key[128];
    int64_t v;
    snprintf(key, sizeof key, "%s.%s", m->cfg.arch, suffix);
    int r = infer__get_int(&m->gguf, key, &v, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 0) return need ? infer__fail(err, INFER_ERR_FORMAT, "missing metadata key '%s'", key) : INFER_OK;
    if (v < lo || v > hi) return infer__fail(err, INFER_ERR_FORMAT, "metadata '%s' = %lld is out of range [%lld, %lld]", key, (long long)v, (long long)lo, (long long)hi);
    *out = (int32_t)v;
    return INFER_OK;
}
static infer_status infer__cfg_float(const infer_model *m, const char *suffix, float *out, infer_error *err) {
    char key[128];
    double v;
    snprintf(key, sizeof key, "%s.%s", m->cfg.arch, suffix);
    int r = infer__get_float(&m->gguf, key, &v, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 1) {
        if (!isfinite(v)) return infer__fail(err, INFER_ERR_FORMAT, "metadata '%s' is not finite", key);
        *out = (float)v;
    }
    return INFER_OK;
}

#define INFER__TRY(expr) do { infer_status st_ = (expr); if (st_ != INFER_OK) return st_; } while (0)

static infer_status infer__load_config(infer_model *m, infer_error *err) {
    infer_config *c = &m->cfg;
    infer_str arch;
    int r = infer__get_str(&m->gguf, "general.architecture", &arch, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 0) return infer__fail(err, INFER_ERR_FORMAT, "missing metadata key 'general.architecture'");
    m->arch = infer__find_arch(arch);
    if (!m->arch) return infer__fail(err, INFER_ERR_UNSUPPORTED, "unsupported architecture '%.*s'", (int)(arch.len > 64 ? 64 : arch.len), arch.ptr);
    snprintf(c->arch, sizeof c->arch, "%s", m->arch->name);
    const int64_t BIG = 1 << 24;
    INFER__TRY(infer__cfg_int(m, "embedding_length", &c->n_embd, 1, 1, BIG, err));
    INFER__TRY(infer__cfg_int(m, "block_count", &c->n_layer, 1, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "attention.head_count", &c->n_head, 1, 1, 4096, err));
    c->n_head_kv = c->n_head;
    INFER__TRY(infer__cfg_int(m, "attention.head_count_kv", &c->n_head_kv, 0, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "feed_forward_length", &c->n_ff, 1, 1, BIG, err));
    c->n_ctx_train = 4096;
    INFER__TRY(infer__cfg_int(m, "context_length", &c->n_ctx_train, 0, 1, 1 << 30, err));
    if (c->n_head % c->n_head_kv) return infer__fail(err, INFER_ERR_FORMAT, "head_count %d is not a multiple of head_count_kv %d", c->n_head, c->n_head_kv);
    c->head_dim = c->n_embd / c->n_head;
    INFER__TRY(infer__cfg_int(m, "attention.key_length", &c->head_dim, 0, 1, 65536, err));
    c->head_dim_v = c->head_dim;
    INFER__TRY(infer__cfg_int(m, "attention.value_length", &c->head_dim_v, 0, 1, 65536, err));
    if (c->head_dim_v != c->head_dim) return infer__fail(err, INFER_ERR_UNSUPPORTED, "key_length %d != value_length %d", c->head_dim, c->head_dim_v);
    c->n_rot = c->head_dim;
    INFER__TRY(infer__cfg_int(m, "rope.dimension_count", &c->n_rot, 0, 2, c->head_dim, err));
    if (c->n_rot % 2) return infer__fail(err, INFER_ERR_FORMAT, "rope.dimension_count %d is odd", c->n_rot);
    c->rms_eps = 1e-5f;
    INFER__TRY(infer__cfg_float(m, "attention.layer_norm_rms_epsilon", &c->rms_eps, err));
    c->rope_base = 10000.0f;
    INFER__TRY(infer__cfg_float(m, "rope.freq_base", &c->rope_base, err));
    INFER__TRY(infer__cfg_float(m, "attention.scale", &c->attn_scale, err));
    c->rope_scale_factor = 1.0f;
    INFER__TRY(infer__cfg_float(m, "rope.scaling.factor", &c->rope_scale_factor, err));
    c->rope_orig_ctx = c->n_ctx_train;
    INFER__TRY(infer__cfg_int(m, "rope.scaling.original_context_length", &c->rope_orig_ctx, 0, 1, 1 << 30, err));
    char key[128];
    infer_str st;
    snprintf(key, sizeof key, "%s.rope.scaling.type", c->arch);
    r = infer__get_str(&m->gguf, key, &st, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 1 && !infer__str_eq(st, "none")) {
        if (infer__str_eq(st, "linear")) c->rope_scaling = INFER_ROPE_SCALING_LINEAR;
        else if (infer__str_eq(st, "yarn")) c->rope_scaling = INFER_ROPE_SCALING_YARN;
        else return infer__fail(err, INFER_ERR_UNSUPPORTED, "unsupported rope.scaling.type '%.*s'", (int)(st.len > 32 ? 32 : st.len), st.ptr);
        if (!(c->rope_scale_factor > 0)) return infer__fail(err, INFER_ERR_FORMAT, "rope.scaling.factor must be > 0");
    }
    if (!(c->rms_eps > 0) || !(c->rope_base > 0)) return infer__fail(err, INFER_ERR_FORMAT, "rms epsilon and rope.freq_base must be > 0");
    return INFER_OK;
}

/* find a tensor and check its type and 2-D shape {ne0, ne1} (ne1 = 0: a 1-D tensor) */
static infer_status infer__want(const infer_model *m, const infer_tensor **out, int need, int f32_only, int64_t ne0, int64_t ne1, infer_error *err, const char *fmt, ...) {
    char name[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    const infer_tensor *t = infer_gguf_tensor(&m->gguf, name);
    *out = t;
    if (!t) return need ? infer__fail(err, INFER_ERR_FORMAT, "missing tensor '%s'", name) : INFER_OK;
    const int want_dims = ne1 ? 2 : 1;
    int ok = t->ne[0] == ne0 && (want_dims == 1 ? t->ne[1] * t->ne[2] * t->ne[3] == 1 : t->ne[1] == ne1 && t->ne[2] * t->ne[3] == 1);
    if (!ok) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s' has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld]", name,
                                (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3], (long long)ne0, (long long)(ne1 ? ne1 : 1));
    if (f32_only && t->type != INFER_TYPE_F32) return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%s' has type %s, expected f32", name, infer_type_name(t->type));
    if (!infer__cpu_supports_type(t->type)) return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%s' has type %s, which has no kernels", name, infer_type_name(t->type));
    return INFER_OK;
}

static infer_status infer__load_weights(infer_model *m, infer_error *err) {
    const infer_config *c = &m->cfg;
    const int64_t E = c->n_embd, V = c->n_vocab, Q = (int64_t)c->n_head * c->head_dim, KV = (int64_t)c->n_head_kv * c->head_dim;
    INFER__TRY(infer__want(m, &m->tok_embd, 1, 0, E, V, err, "token_embd.weight"));
    INFER__TRY(infer__want(m, &m->output_norm, 1, 1, E, 0, err, "output_norm.weight"));
    INFER__TRY(infer__want(m, &m->output, 0, 0, E, V, err, "output.weight"));
    if (!m->output) { m->output = m->tok_embd; m->cfg.tied_output = 1; }
    INFER__TRY(infer__want(m, &m->rope_freqs, 0, 1, c->n_rot / 2, 0, err, "rope_freqs.weight"));
    m->layers = (infer__layer *)infer__calloc((size_t)c->n_layer, sizeof(infer__layer));
    if (!m->layers) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (int l = 0; l < c->n_layer; l++) {
        infer__layer *L = &m->layers[l];
        INFER__TRY(infer__want(m, &L->attn_norm, 1, 1, E, 0, err, "blk.%d.attn_norm.weight", l));
        INFER__TRY(infer__want(m, &L->wq, 1, 0, E, Q, err, "blk.%d.attn_q.weight", l));
        INFER__TRY(infer__want(m, &L->wk, 1, 0, E, KV, err, "blk.%d.attn_k.weight", l));
        INFER__TRY(infer__want(m, &L->wv, 1, 0, E, KV, err, "blk.%d.attn_v.weight", l));
        INFER__TRY(infer__want(m, &L->bq, 0, 1, Q, 0, err, "blk.%d.attn_q.bias", l));
        INFER__TRY(infer__want(m, &L->bk, 0, 1, KV, 0, err, "blk.%d.attn_k.bias", l));
        INFER__TRY(infer__want(m, &L->bv, 0, 1, KV, 0, err, "blk.%d.attn_v.bias", l));
        INFER__TRY(infer__want(m, &L->q_norm, m->arch->qk_norm, 1, c->head_dim, 0, err, "blk.%d.attn_q_norm.weight", l));
        INFER__TRY(infer__want(m, &L->k_norm, m->arch->qk_norm, 1, c->head_dim, 0, err, "blk.%d.attn_k_norm.weight", l));
        INFER__TRY(infer__want(m, &L->wo, 1, 0, Q, E, err, "blk.%d.attn_output.weight", l));
        INFER__TRY(infer__want(m, &L->ffn_norm, 1, 1, E, 0, err, "blk.%d.ffn_norm.weight", l));
        INFER__TRY(infer__want(m, &L->ffn_gate, 1, 0, E, c->n_ff, err, "blk.%d.ffn_gate.weight", l));
        INFER__TRY(infer__want(m, &L->ffn_up, 1, 0, E, c->n_ff, err, "blk.%d.ffn_up.weight", l));
        INFER__TRY(infer__want(m, &L->ffn_down, 1, 0, c->n_ff, E, err, "blk.%d.ffn_down.weight", l));
    }
    return INFER_OK;
}

/* Build the tokenizer from tokenizer.ggml.* keys (absent -> the model works on ids only). */
static infer_status infer__load_tokenizer(infer_model *m, infer_error *err);

static infer_status infer__model_init(infer_model *m, const infer_model_params *p, infer_error *err) {
    INFER__TRY(infer__load_tokenizer(m, err));
    if (p && p->vocab_only) return INFER_OK;
    INFER__TRY(infer__load_config(m, err));
    /* the vocabulary size: the embedding's rows (the tokenizer must not exceed them) */
    const infer_tensor *te = infer_gguf_tensor(&m->gguf, "token_embd.weight");
    if (!te) return infer__fail(err, INFER_ERR_FORMAT, "missing tensor 'token_embd.weight'");
    if (te->ne[1] < 1 || te->ne[1] > INT32_MAX) return infer__fail(err, INFER_ERR_FORMAT, "token_embd.weight has %lld rows", (long long)te->ne[1]);
    m->cfg.n_vocab = (int32_t)te->ne[1];
    if (m->tok && infer__tok_n_vocab(m->tok) > m->cfg.n_vocab)
        return infer__fail(err, INFER_ERR_FORMAT, "tokenizer has %d tokens but token_embd.weight only %d rows", infer__tok_n_vocab(m->tok), m->cfg.n_vocab);
    return infer__load_weights(m, err);
}

infer_status infer_model_load_memory(infer_model **out, const void *data, size_t size, const infer_model_params *p, infer_error *err) {
    *out = NULL;
    infer_model *m = (infer_model *)infer__calloc(1, sizeof *m);
    if (!m) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    infer_status st = infer_gguf_parse(&m->gguf, data, size, err);
    if (st == INFER_OK) st = infer__model_init(m, p, err);
    if (st != INFER_OK) { infer_model_free(m); return st; }
    *out = m;
    return INFER_OK;
}

infer_status infer_model_load(infer_model **out, const char *path, const infer_model_params *p, infer_error *err) {
    infer__mapping map;
    *out = NULL;
    INFER__TRY(infer__map_file(&map, path, err));
    infer_status st = infer_model_load_memory(out, map.addr, map.size, p, err);
    if (st != INFER_OK) { infer__unmap(&map); return st; }
    (*out)->map = map;
    return INFER_OK;
}

void infer_model_free(infer_model *m) {
    if (!m) return;
    if (m->tok) { infer_tokenizer_free(m->tok); INFER_FREE(m->tok); }
    INFER_FREE(m->layers);
    infer_gguf_free(&m->gguf);
    infer__unmap(&m->map);
    INFER_FREE(m);
}

/* ------------------------------------------------------------------------------------------
 * >>kv -- the paged KV cache.
 *
 * Keys and values of past tokens live in fixed-size blocks of `block_size` tokens taken from
 * a pool. A sequence owns a block table (logical block i -> physical block), so its cache
 * need not be contiguous and blocks return to the pool when the sequence is reset. Attention
 * reads a position p at row  table[p / block_size] * block_size + p % block_size.
 *
 *   pool (one per layer, for K and for V):  [n_blocks * block_size, n_head_kv * head_dim]
 * ---------------------------------------------------------------------------------------- */
#define INFER__KV_BLOCK 16

typedef struct infer__kv_pool {
    int32_t n_blocks, block_size, kv_dim;
    infer_type type;
    void **k, **v;           /* [n_layer] pool bases */
    int32_t *free_list;      /* stack of free physical blocks */
    int32_t n_free;
} infer__kv_pool;

static int32_t infer__kv_take(infer__kv_pool *p) { return p->n_free > 0 ? p->free_list[--p->n_free] : -1; }
static void infer__kv_give(infer__kv_pool *p, int32_t b) { p->free_list[p->n_free++] = b; }

/* ------------------------------------------------------------------------------------------
 * >>forward -- the transformer, once for every family.
 *
 *   x = token_embd[tokens]                                      x: [T, n_embd]
 *   for each layer:
 *       h = RMSNorm(x) * attn_norm
 *       q = Wq h (+bq),  k = Wk h (+bk),  v = Wv h (+bv)         per head: [head_dim]
 *       q, k = RMSNorm per head * q_norm, k_norm                 (qwen3)
 *       q, k = RoPE(q, pos), RoPE(k, pos)
 *       cache k, v at pos;  a = softmax(q K^T * scale) V          causal, GQA
 *       x = x + Wo a
 *       h = RMSNorm(x) * ffn_norm
 *       x = x + W_down( silu(W_gate h) * (W_up h) )              SwiGLU
 *   logits = W_out (RMSNorm(x) * output_norm)                    [T, n_vocab]
 * ---------------------------------------------------------------------------------------- */
struct infer_session {
    infer_model *m;
    const infer_kernels *k;
    void *kctx;
    infer_session_params p;
    int32_t n_ctx, n_past;
    infer__kv_pool kv;
    int32_t *block_table;    /* [n_ctx / block_size] */
    int32_t n_table;         /* blocks in use */
    infer_rope rope;
    /* activations for up to n_ubatch tokens */
    float *x, *h, *q, *kk, *vv, *att, *o, *gate, *up, *logits;
    int32_t *pos;
};

int32_t infer_session_n_past(const infer_session *s) { return s->n_past; }
int32_t infer_session_n_ctx(const infer_session *s) { return s->n_ctx; }

infer_session_params infer_session_default_params(void) {
    infer_session_params p;
    memset(&p, 0, sizeof p);
    p.kv_type = INFER_TYPE_F16;
    return p;
}

void infer_session_reset(infer_session *s) {
    for (int32_t i = s->n_table - 1; i >= 0; i--) infer__kv_give(&s->kv, s->block_table[i]);
    s->n_table = 0;
    s->n_past = 0;
}

void infer_session_free(infer_session *s) {
    if (!s) return;
    const infer_kernels *k = s->k;
    if (s->kv.k) for (int l = 0; l < s->m->cfg.n_layer; l++) { k->free(s->kctx, s->kv.k[l]); k->free(s->kctx, s->kv.v[l]); }
    INFER_FREE(s->kv.k); INFER_FREE(s->kv.v); INFER_FREE(s->kv.free_list); INFER_FREE(s->block_table);
    float *bufs[] = { s->x, s->h, s->q, s->kk, s->vv, s->att, s->o, s->gate, s->up, s->logits };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) k->free(s->kctx, bufs[i]);
    INFER_FREE(s->pos);
    infer__cpu_ctx_free((infer__cpu_ctx *)s->kctx);
    INFER_FREE(s);
}

infer_status infer_session_create(infer_session **out, infer_model *m, const infer_session_params *pp, infer_error *err) {
    *out = NULL;
    if (!m->layers) return infer__fail(err, INFER_ERR_ARG, "model was loaded vocab-only; it cannot run");
    infer_session_params p = pp ? *pp : infer_session_default_params();
    const infer_config *c = &m->cfg;
    if (p.n_ctx < 0 || p.n_ubatch < 0 || p.n_threads < 0) return infer__fail(err, INFER_ERR_ARG, "negative session parameter");
    if (p.n_ctx == 0) p.n_ctx = c->n_ctx_train < 4096 ? c->n_ctx_train : 4096;
    if (p.n_ubatch == 0) p.n_ubatch = 512;
    if (p.n_threads == 0) p.n_threads = infer__n_cores();
    if (p.precise) p.kv_type = INFER_TYPE_F32;
    if (p.kv_type != INFER_TYPE_F32 && p.kv_type != INFER_TYPE_F16) return infer__fail(err, INFER_ERR_ARG, "KV cache type must be f32 or f16");
    infer_session *s = (infer_session *)infer__calloc(1, sizeof *s);
    if (!s) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    s->m = m;
    s->k = infer_cpu_kernels();
    s->p = p;
    s->kctx = infer__cpu_ctx_create(p.n_threads, p.precise);
    const int32_t bs = INFER__KV_BLOCK;
    s->n_ctx = (p.n_ctx + bs - 1) / bs * bs;
    s->kv.block_size = bs;
    s->kv.n_blocks = s->n_ctx / bs;
    s->kv.kv_dim = c->n_head_kv * c->head_dim;
    s->kv.type = p.kv_type;
    const size_t esz = p.kv_type == INFER_TYPE_F16 ? 2 : 4;
    const size_t layer_bytes = (size_t)s->n_ctx * (size_t)s->kv.kv_dim * esz;
    s->kv.k = (void **)infer__calloc((size_t)c->n_layer, sizeof(void *));
    s->kv.v = (void **)infer__calloc((size_t)c->n_layer, sizeof(void *));
    s->kv.free_list = (int32_t *)infer__calloc((size_t)s->kv.n_blocks, sizeof(int32_t));
    s->block_table = (int32_t *)infer__calloc((size_t)s->kv.n_blocks, sizeof(int32_t));
    int ok = s->kctx && s->kv.k && s->kv.v && s->kv.free_list && s->block_table;
    for (int l = 0; ok && l < c->n_layer; l++) {
        s->kv.k[l] = s->k->alloc(s->kctx, layer_bytes);
        s->kv.v[l] = s->k->alloc(s->kctx, layer_bytes);
        ok = s->kv.k[l] && s->kv.v[l];
    }
    for (int32_t b = s->kv.n_blocks - 1; ok && b >= 0; b--) infer__kv_give(&s->kv, b);
    const size_t U = (size_t)p.n_ubatch, E = (size_t)c->n_embd, QD = (size_t)c->n_head * c->head_dim;
    if (ok) {
        s->x = (float *)s->k->alloc(s->kctx, U * E * 4);
        s->h = (float *)s->k->alloc(s->kctx, U * E * 4);
        s->q = (float *)s->k->alloc(s->kctx, U * QD * 4);
        s->kk = (float *)s->k->alloc(s->kctx, U * (size_t)s->kv.kv_dim * 4);
        s->vv = (float *)s->k->alloc(s->kctx, U * (size_t)s->kv.kv_dim * 4);
        s->att = (float *)s->k->alloc(s->kctx, U * QD * 4);
        s->o = (float *)s->k->alloc(s->kctx, U * E * 4);
        s->gate = (float *)s->k->alloc(s->kctx, U * (size_t)c->n_ff * 4);
        s->up = (float *)s->k->alloc(s->kctx, U * (size_t)c->n_ff * 4);
        s->logits = (float *)s->k->alloc(s->kctx, U * (size_t)c->n_vocab * 4);
        s->pos = (int32_t *)infer__calloc(U, sizeof(int32_t));
        ok = s->x && s->h && s->q && s->kk && s->vv && s->att && s->o && s->gate && s->up && s->logits && s->pos;
    }
    if (!ok) { infer_session_free(s); return infer__fail(err, INFER_ERR_NOMEM, "out of memory for a %d-token session", s->n_ctx); }
    infer_rope *r = &s->rope;
    r->n_rot = c->n_rot;
    r->neox = m->arch->rope_neox;
    r->freq_base = c->rope_base;
    r->freq_scale = c->rope_scaling != INFER_ROPE_SCALING_NONE ? 1.0f / c->rope_scale_factor : 1.0f;
    r->freq_factors = m->rope_freqs ? (const float *)m->rope_freqs->data : NULL;
    r->attn_factor = 1.0f;
    r->ext_factor = c->rope_scaling == INFER_ROPE_SCALING_YARN ? 1.0f : 0.0f;
    r->beta_fast = 32.0f;
    r->beta_slow = 1.0f;
    r->n_ctx_orig = c->rope_orig_ctx;
    *out = s;
    return INFER_OK;
}

/* One chunk of T <= n_ubatch tokens at positions n_past.. through every layer.
 * Leaves logits for rows [first_logit, T) in s->logits. */
static void infer__forward_chunk(infer_session *s, const int32_t *tokens, int T, int first_logit) {
    const infer_model *m = s->m;
    const infer_config *c = &m->cfg;
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int E = c->n_embd, hd = c->head_dim, QD = c->n_head * hd, KVD = c->n_head_kv * hd;
    const float scale = c->attn_scale > 0 ? c->attn_scale : 1.0f / sqrtf((float)hd);
    for (int i = 0; i < T; i++) s->pos[i] = s->n_past + i;
    infer_kv_view kv = { NULL, NULL, s->kv.type, s->kv.block_size, s->block_table, KVD };

    k->embed(kc, s->x, m->tok_embd, tokens, T);
    for (int l = 0; l < c->n_layer; l++) {
        const infer__layer *L = &m->layers[l];
        /* attention */
        k->rmsnorm(kc, s->h, s->x, (const float *)L->attn_norm->data, T, E, c->rms_eps);
        k->matmul(kc, s->q, L->wq, s->h, T);
        k->matmul(kc, s->kk, L->wk, s->h, T);
        k->matmul(kc, s->vv, L->wv, s->h, T);
        if (L->bq) k->add_rows(kc, s->q, (const float *)L->bq->data, T, QD);
        if (L->bk) k->add_rows(kc, s->kk, (const float *)L->bk->data, T, KVD);
        if (L->bv) k->add_rows(kc, s->vv, (const float *)L->bv->data, T, KVD);
        if (L->q_norm) {
            k->rmsnorm(kc, s->q, s->q, (const float *)L->q_norm->data, T * c->n_head, hd, c->rms_eps);
            k->rmsnorm(kc, s->kk, s->kk, (const float *)L->k_norm->data, T * c->n_head_kv, hd, c->rms_eps);
        }
        k->rope(kc, s->q, T, c->n_head, hd, s->pos, &s->rope);
        k->rope(kc, s->kk, T, c->n_head_kv, hd, s->pos, &s->rope);
        kv.k = s->kv.k[l];
        kv.v = s->kv.v[l];
        k->kv_store(kc, &kv, s->kk, s->vv, s->pos, T);
        k->attention(kc, s->att, s->q, &kv, s->pos, T, c->n_head, c->n_head_kv, hd, scale);
        k->matmul(kc, s->o, L->wo, s->att, T);
        k->add(kc, s->x, s->o, (int64_t)T * E);
        /* feed-forward */
        k->rmsnorm(kc, s->h, s->x, (const float *)L->ffn_norm->data, T, E, c->rms_eps);
        k->matmul(kc, s->gate, L->ffn_gate, s->h, T);
        k->matmul(kc, s->up, L->ffn_up, s->h, T);
        k->swiglu(kc, s->gate, s->gate, s->up, (int64_t)T * c->n_ff);
        k->matmul(kc, s->o, L->ffn_down, s->gate, T);
        k->add(kc, s->x, s->o, (int64_t)T * E);
    }
    const int nl = T - first_logit;
    k->rmsnorm(kc, s->h, s->x + (size_t)first_logit * E, (const float *)m->output_norm->data, nl, E, c->rms_eps);
    k->matmul(kc, s->logits, m->output, s->h, nl);
}

infer_status infer_eval(infer_session *s, const int32_t *tokens, int n, float *logits, int all_logits, infer_error *err) {
    const int32_t V = s->m->cfg.n_vocab;
    if (n <= 0) return infer__fail(err, INFER_ERR_ARG, "no tokens to evaluate");
    if ((int64_t)s->n_past + n > s->n_ctx)
        return infer__fail(err, INFER_ERR_CONTEXT, "%d tokens do not fit: %d of the context's %d are used", n, s->n_past, s->n_ctx);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= V) return infer__fail(err, INFER_ERR_ARG, "token id %d at index %d is outside the vocabulary (0..%d)", tokens[i], i, V - 1);
    /* take the blocks the new positions need */
    const int32_t need = (s->n_past + n + s->kv.block_size - 1) / s->kv.block_size;
    while (s->n_table < need) {
        int32_t b = infer__kv_take(&s->kv);
        if (b < 0) return infer__fail(err, INFER_ERR_CONTEXT, "KV cache pool exhausted");
        s->block_table[s->n_table++] = b;
    }
    for (int i0 = 0; i0 < n; i0 += s->p.n_ubatch) {
        const int T = n - i0 < s->p.n_ubatch ? n - i0 : s->p.n_ubatch;
        const int last_chunk = i0 + T == n;
        const int first = all_logits ? 0 : (last_chunk ? T - 1 : T);
        if (first < T) infer__forward_chunk(s, tokens + i0, T, first);
        else {
            /* no logits wanted from this chunk: run the layers, skip the output projection */
            infer__forward_chunk(s, tokens + i0, T, T);
        }
        if (logits && first < T) {
            float *dst = all_logits ? logits + (size_t)i0 * V : logits;
            s->k->download(s->kctx, dst, s->logits, (size_t)(T - first) * V * sizeof(float));
        }
        s->n_past += T;
    }
    return INFER_OK;
}

/* ------------------------------------------------------------------------------------------
 * >>sampler -- from logits to the next token.
 *
 * The chain, in this order (llama.cpp's default order, minus the samplers we do not have):
 *   1. repetition penalty over the last repeat_last_n tokens: l > 0 ? l / r : l * r
 *   2. top-k: keep the k largest logits
 *   3. top-p: keep the smallest prefix (by probability) whose mass reaches p
 *   4. min-p: keep tokens with p_i >= min_p * p_max
 *   5. temperature: l / temp
 *   6. draw from softmax of what is left with the seeded RNG
 * temp <= 0 skips all of it and returns the argmax (greedy), ties to the lowest id.
 * ---------------------------------------------------------------------------------------- */
struct infer_sampler {
    infer_sampler_params p;
    int32_t n_vocab;
    infer__rng rng;
    int32_t *recent; int32_t n_recent, recent_cap, recent_head;
    struct infer__cand { int32_t id; float logit; } *cand;   /* [n_vocab] */
};
typedef struct infer__cand infer__cand;

infer_sampler_params infer_sampler_default_params(void) {
    infer_sampler_params p;
    p.temp = 0.8f; p.top_k = 40; p.top_p = 0.95f; p.min_p = 0.05f;
    p.repeat_penalty = 1.0f; p.repeat_last_n = 64; p.seed = 0x5eed;
    return p;
}

infer_sampler *infer_sampler_create(const infer_sampler_params *p, int32_t n_vocab) {
    infer_sampler *s = (infer_sampler *)infer__calloc(1, sizeof *s);
    if (!s) return NULL;
    s->p = p ? *p : infer_sampler_default_params();
    s->n_vocab = n_vocab;
    infer__rng_seed(&s->rng, s->p.seed);
    s->recent_cap = s->p.repeat_last_n > 0 ? s->p.repeat_last_n : 0;
    s->recent = (int32_t *)infer__calloc((size_t)s->recent_cap + 1, sizeof(int32_t));
    s->cand = (infer__cand *)infer__calloc((size_t)n_vocab, sizeof(infer__cand));
    if (!s->recent || !s->cand) { infer_sampler_free(s); return NULL; }
    return s;
}
void infer_sampler_free(infer_sampler *s) {
    if (!s) return;
    INFER_FREE(s->recent);
    INFER_FREE(s->cand);
    INFER_FREE(s);
}
void infer_sampler_accept(infer_sampler *s, int32_t token) {
    if (s->recent_cap == 0) return;
    s->recent[s->recent_head] = token;
    s->recent_head = (s->recent_head + 1) % s->recent_cap;
    if (s->n_recent < s->recent_cap) s->n_recent++;
}

static int infer__cand_cmp(const void *a, const void *b) {
    const infer__cand *x = (const infer__cand *)a, *y = (const infer__cand *)b;
    if (x->logit != y->logit) return x->logit < y->logit ? 1 : -1;
    return x->id - y->id;
}

int32_t infer_sampler_sample(infer_sampler *s, const float *logits) {
    const int32_t V = s->n_vocab;
    if (s->p.temp <= 0) {
        int32_t best = 0;
        for (int32_t i = 1; i < V; i++) if (logits[i] > logits[best]) best = i;
        return best;
    }
    infer__cand *c = s->cand;
    for (int32_t i = 0; i < V; i++) { c[i].id = i; c[i].logit = logits[i]; }
    if (s->p.repeat_penalty != 1.0f) {                                  /* 1. penalty, once per distinct token */
        for (int32_t i = 0; i < s->n_recent; i++) {
            int32_t t = s->recent[i], seen = 0;
            for (int32_t j = 0; j < i; j++) seen |= s->recent[j] == t;
            if (seen || t < 0 || t >= V) continue;
            c[t].logit = c[t].logit > 0 ? c[t].logit / s->p.repeat_penalty : c[t].logit * s->p.repeat_penalty;
        }
    }
    qsort(c, (size_t)V, sizeof *c, infer__cand_cmp);
    int32_t n = V;
    if (s->p.top_k > 0 && s->p.top_k < n) n = s->p.top_k;               /* 2. top-k */
    double sum = 0;
    for (int32_t i = 0; i < n; i++) sum += exp((double)c[i].logit - c[0].logit);
    if (s->p.top_p < 1.0f) {                                            /* 3. top-p */
        double cum = 0;
        for (int32_t i = 0; i < n; i++) {
            cum += exp((double)c[i].logit - c[0].logit) / sum;
            if (cum >= s->p.top_p) { n = i + 1; break; }
        }
    }
    if (s->p.min_p > 0) {                                               /* 4. min-p */
        const double floor_l = c[0].logit + log(s->p.min_p);
        int32_t keep = 1;
        while (keep < n && c[keep].logit >= floor_l) keep++;
        n = keep;
    }
    double total = 0;                                                   /* 5. temperature, 6. draw */
    for (int32_t i = 0; i < n; i++) total += exp(((double)c[i].logit - c[0].logit) / s->p.temp);
    double u = infer__rng_uniform(&s->rng) * total, acc = 0;
    for (int32_t i = 0; i < n; i++) {
        acc += exp(((double)c[i].logit - c[0].logit) / s->p.temp);
        if (u < acc) return c[i].id;
    }
    return c[n - 1].id;
}

/* ------------------------------------------------------------------------------------------
 * >>generate -- prompt in, tokens out.
 * ---------------------------------------------------------------------------------------- */
infer_status infer_generate(infer_session *s, const int32_t *prompt, int n_prompt, int n_predict,
                            const infer_sampler_params *sp, infer_token_fn on_token, void *user,
                            infer_gen_stats *stats, infer_error *err) {
    const int32_t V = s->m->cfg.n_vocab;
    infer_gen_stats st;
    memset(&st, 0, sizeof st);
    float *logits = (float *)INFER_MALLOC((size_t)V * sizeof(float));
    infer_sampler *smp = infer_sampler_create(sp, V);
    infer_status rc = INFER_OK;
    if (!logits || !smp) { rc = infer__fail(err, INFER_ERR_NOMEM, "out of memory"); goto done; }
    for (int i = 0; i < n_prompt; i++) infer_sampler_accept(smp, prompt[i]);
    double t0 = infer_time_seconds();
    if ((rc = infer_eval(s, prompt, n_prompt, logits, 0, err)) != INFER_OK) goto done;
    st.n_prompt = n_prompt;
    st.prompt_seconds = infer_time_seconds() - t0;
    t0 = infer_time_seconds();
    for (int g = 0; g < n_predict; g++) {
        int32_t tok = infer_sampler_sample(smp, logits);
        infer_sampler_accept(smp, tok);
        if (s->m->tok && infer_token_is_eog(s->m->tok, tok)) break;
        st.n_gen++;
        if (on_token && on_token(user, tok, logits)) break;
        if (g + 1 == n_predict) break;
        if (s->n_past >= s->n_ctx) break;
        if ((rc = infer_eval(s, &tok, 1, logits, 0, err)) != INFER_OK) goto done;
    }
    st.gen_seconds = infer_time_seconds() - t0;
done:
    if (stats) *stats = st;
    INFER_FREE(logits);
    infer_sampler_free(smp);
    return rc;
}
