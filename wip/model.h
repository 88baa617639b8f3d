/* ------------------------------------------------------------------------------------------
 * >>arch -- model families as descriptors.
 *
 * The families differ in small ways around one transformer block; each difference is a
 * field here instead of a separate forward pass:
 *   rope        NORM rotates (2i, 2i+1) pairs, NEOX (i, i+n/2), IMROPE is NEOX whose pairs
 *               take one of 4 position streams (rope.dimension_sections)
 *   qk_norm     RMSNorm over each head of q and k before rope            qwen3, qwen3.5
 *   attn_gate   attn_q also yields a per-head output gate:               qwen3.5
 *               out = Wo (attention * sigmoid(gate))
 *   hybrid      gated DeltaNet layers, full attention every               qwen3.5
 *               full_attention_interval-th layer
 *   expert_norm renormalise the router's top-k weights (unless the file says otherwise)
 *   ffn_norm    name of the norm before the feed-forward
 *   bitlinear   BitNet b1.58's projections: an RMSNorm inside each block before its output
 *               projection (attn_sub_norm before Wo, ffn_sub_norm before W_down), and an
 *               optional one-value `<name>.scale` tensor per projection that multiplies
 *               its output                                               bitnet*
 *   ffn_act     the gate activation when <arch>.hidden_activation is absent: SiLU, or
 *               ReLU^2 for BitNet's own "bitnet-b1.58" files (b1.58-2B-4T was trained so)
 *   embd_logits logits always from token_embd; an `output` tensor is never read   bitnet
 * Shapes and the rest come from the file: q/k/v biases, MoE layers (a layer with
 * ffn_gate_inp routes its tokens through experts, plus a shared expert when one is stored),
 * tied embeddings.
 *
 * BitNet comes in two GGUF flavours. llama.cpp's "bitnet" stores ternary weights as F32,
 * TQ1_0 or TQ2_0 with the absmean scale baked into the values (or in `.scale` tensors) and
 * defaults to SiLU: its graph was written for the 1bitLLM models. BitNet's fork writes
 * "bitnet-b1.58" (and "bitnet-25"): I2_S tensors whose per-tensor scale follows the packed
 * codes, an F16 token_embd, ReLU^2. Both run the same forward; a `hidden_activation` key
 * ("silu", "relu2", ...) overrides either default.
 * ---------------------------------------------------------------------------------------- */
enum { INFER__ROPE_NORM = 0, INFER__ROPE_NEOX = 1, INFER__ROPE_IMROPE = 2 };

typedef struct infer__arch {
    const char *name;
    int rope;
    int qk_norm;
    int attn_gate;
    int hybrid;
    int expert_norm;
    const char *ffn_norm;
    int bitlinear;
    int ffn_act;              /* INFER__ACT_* (>>cpu) */
    int embd_logits;
} infer__arch;

static const infer__arch infer__archs[] = {
    /* name           rope                qk_norm attn_gate hybrid expert_norm ffn_norm               bitlinear ffn_act            embd_logits */
    { "llama",        INFER__ROPE_NORM,   0,      0,        0,     1,          "ffn_norm",            0,        INFER__ACT_SILU,  0 },
    { "qwen2",        INFER__ROPE_NEOX,   0,      0,        0,     0,          "ffn_norm",            0,        INFER__ACT_SILU,  0 },
    { "qwen2moe",     INFER__ROPE_NEOX,   0,      0,        0,     0,          "ffn_norm",            0,        INFER__ACT_SILU,  0 },
    { "qwen3",        INFER__ROPE_NEOX,   1,      0,        0,     1,          "ffn_norm",            0,        INFER__ACT_SILU,  0 },
    { "qwen3moe",     INFER__ROPE_NEOX,   1,      0,        0,     1,          "ffn_norm",            0,        INFER__ACT_SILU,  0 },
    { "qwen35",       INFER__ROPE_IMROPE, 1,      1,        1,     1,          "post_attention_norm", 0,        INFER__ACT_SILU,  0 },
    { "qwen35moe",    INFER__ROPE_IMROPE, 1,      1,        1,     1,          "post_attention_norm", 0,        INFER__ACT_SILU,  0 },
    { "bitnet",       INFER__ROPE_NEOX,   0,      0,        0,     1,          "ffn_norm",            1,        INFER__ACT_SILU,  1 },
    { "bitnet-b1.58", INFER__ROPE_NEOX,   0,      0,        0,     1,          "ffn_norm",            1,        INFER__ACT_RELU2, 0 },
    { "bitnet-25",    INFER__ROPE_NEOX,   0,      0,        0,     1,          "ffn_norm",            1,        INFER__ACT_RELU2, 0 },
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
 * Shapes below are [rows, cols] (ne reversed): W[out, in].
 * ---------------------------------------------------------------------------------------- */
typedef struct infer__layer {
    int recurrent;                            /* 1: gated DeltaNet, 0: attention */
    const infer_tensor *attn_norm;            /* [n_embd] */
    /* attention */
    const infer_tensor *wq;                   /* [n_head*head_dim (x2 with attn_gate), n_embd] */
    const infer_tensor *wk, *wv;              /* [n_head_kv*head_dim, n_embd] */
    const infer_tensor *bq, *bk, *bv;         /* biases of the same out sizes, or NULL */
    const infer_tensor *q_norm, *k_norm;      /* [head_dim], or NULL */
    const infer_tensor *attn_sub_norm;        /* [n_head*head_dim] before Wo (bitlinear), or NULL */
    const infer_tensor *wo;                   /* [n_embd, n_head*head_dim] */
    /* gated DeltaNet: n_k key heads of d_k, n_v value heads of d_v, conv_dim = 2 n_k d_k + n_v d_v */
    const infer_tensor *wqkv;                 /* attn_qkv  [conv_dim, n_embd]: rows [q | k | v] */
    const infer_tensor *wz;                   /* attn_gate [n_v*d_v, n_embd]: the output gate z */
    const infer_tensor *ssm_beta, *ssm_alpha; /* [n_v, n_embd] */
    const infer_tensor *ssm_conv1d;           /* [conv_dim, K] */
    const infer_tensor *ssm_dt, *ssm_a;       /* [n_v]: dt bias, a = -exp(A_log) */
    const infer_tensor *ssm_norm;             /* [d_v] */
    const infer_tensor *ssm_out;              /* [n_embd, n_v*d_v] */
    /* feed-forward */
    const infer_tensor *ffn_norm;             /* [n_embd] */
    const infer_tensor *ffn_gate, *ffn_up;    /* [n_ff, n_embd], or NULL in a MoE layer */
    const infer_tensor *ffn_sub_norm;         /* [n_ff] before W_down (bitlinear), or NULL */
    const infer_tensor *ffn_down;             /* [n_embd, n_ff] */
    const infer_tensor *ffn_gate_inp;         /* router [n_expert, n_embd], or NULL: dense */
    const infer_tensor *ffn_gate_exps, *ffn_up_exps;  /* [n_expert, n_ff_exp, n_embd] */
    const infer_tensor *ffn_down_exps;        /* [n_expert, n_embd, n_ff_exp] */
    const infer_tensor *ffn_gate_shexp, *ffn_up_shexp;/* shared expert [n_ff_shexp, n_embd], or NULL */
    const infer_tensor *ffn_down_shexp;       /* [n_embd, n_ff_shexp] */
    const infer_tensor *ffn_gate_inp_shexp;   /* [1, n_embd]: the shared expert's sigmoid gate, or NULL */
    /* multi-token prediction (layers n_layer.. only) */
    const infer_tensor *nextn_eh_proj;        /* [n_embd, 2*n_embd] */
    const infer_tensor *nextn_enorm, *nextn_hnorm, *nextn_head_norm; /* [n_embd] */
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
    infer__layer *layers;                     /* [n_layer + n_layer_nextn] */
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

/* element i of an integer (or bool) array kv */
static int64_t infer__arr_int(const infer_gguf_kv *kv, uint64_t i) {
    infer_gguf_kv e;
    memset(&e, 0, sizeof e);
    e.type = kv->arr_type;
    infer__gguf_scalar(&e, (int)kv->arr_type, kv->arr_data + i * infer__gguf_vsize[kv->arr_type]);
    return infer__kv_int(&e);
}
/* find `<arch>.<suffix>` as an array of integers (or bools); returns 1 found, 0 absent, -1 error */
static int infer__cfg_int_array(const infer_model *m, const char *suffix, const infer_gguf_kv **out, infer_error *err) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->cfg.arch, suffix);
    const infer_gguf_kv *kv = infer_gguf_find(&m->gguf, key);
    if (!kv) return 0;
    if (kv->type != INFER_GGUF_ARRAY || kv->arr_type == INFER_GGUF_STRING || kv->arr_type == INFER_GGUF_ARRAY ||
        kv->arr_type == INFER_GGUF_F32 || kv->arr_type == INFER_GGUF_F64 || kv->arr_type >= INFER_GGUF_VTYPE_COUNT) {
        infer__fail(err, INFER_ERR_FORMAT, "metadata '%s' must be an array of integers", key);
        return -1;
    }
    *out = kv;
    return 1;
}

#define INFER__TRY(expr) do { infer_status st_ = (expr); if (st_ != INFER_OK) return st_; } while (0)

static infer_status infer__load_rope_config(infer_model *m, infer_error *err) {
    infer_config *c = &m->cfg;
    c->n_rot = c->head_dim;
    INFER__TRY(infer__cfg_int(m, "rope.dimension_count", &c->n_rot, 0, 2, c->head_dim, err));
    if (c->n_rot % 2) return infer__fail(err, INFER_ERR_FORMAT, "rope.dimension_count %d is odd", c->n_rot);
    c->rope_base = 10000.0f;
    INFER__TRY(infer__cfg_float(m, "rope.freq_base", &c->rope_base, err));
    c->rope_scale_factor = 1.0f;
    INFER__TRY(infer__cfg_float(m, "rope.scaling.factor", &c->rope_scale_factor, err));
    c->rope_orig_ctx = c->n_ctx_train;
    INFER__TRY(infer__cfg_int(m, "rope.scaling.original_context_length", &c->rope_orig_ctx, 0, 1, 1 << 30, err));
    char key[128];
    infer_str st;
    snprintf(key, sizeof key, "%s.rope.scaling.type", c->arch);
    int r = infer__get_str(&m->gguf, key, &st, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 1 && !infer__str_eq(st, "none")) {
        if (infer__str_eq(st, "linear")) c->rope_scaling = INFER_ROPE_SCALING_LINEAR;
        else if (infer__str_eq(st, "yarn")) c->rope_scaling = INFER_ROPE_SCALING_YARN;
        else return infer__fail(err, INFER_ERR_UNSUPPORTED, "unsupported rope.scaling.type '%.*s'", (int)(st.len > 32 ? 32 : st.len), st.ptr);
        if (!(c->rope_scale_factor > 0)) return infer__fail(err, INFER_ERR_FORMAT, "rope.scaling.factor must be > 0");
    }
    /* multi-axis rope: up to 4 section sizes, in pairs; they must cover no more than n_rot/2 */
    const infer_gguf_kv *sec;
    r = infer__cfg_int_array(m, "rope.dimension_sections", &sec, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 1 && m->arch->rope == INFER__ROPE_IMROPE) {
        int64_t sum = 0;
        for (uint64_t i = 0; i < sec->arr_n && i < 4; i++) {
            int64_t v = infer__arr_int(sec, i);
            if (v < 0 || v > c->n_rot) return infer__fail(err, INFER_ERR_FORMAT, "%s.rope.dimension_sections[%d] = %lld is out of range", c->arch, (int)i, (long long)v);
            c->rope_sections[i] = (int32_t)v;
            sum += v;
        }
        if (sum == 0 || sum > c->n_rot / 2)
            return infer__fail(err, INFER_ERR_FORMAT, "%s.rope.dimension_sections sum to %lld, expected 1..%d (rope.dimension_count / 2)", c->arch, (long long)sum, c->n_rot / 2);
    }
    return INFER_OK;
}

static infer_status infer__load_moe_config(infer_model *m, infer_error *err) {
    infer_config *c = &m->cfg;
    INFER__TRY(infer__cfg_int(m, "expert_count", &c->n_expert, 0, 0, 1 << 16, err));
    c->expert_gating = 1;
    c->expert_norm = m->arch->expert_norm;
    c->expert_weights_scale = 1.0f;
    if (c->n_expert == 0) return INFER_OK;
    INFER__TRY(infer__cfg_int(m, "expert_used_count", &c->n_expert_used, 1, 1, c->n_expert, err));
    INFER__TRY(infer__cfg_int(m, "expert_feed_forward_length", &c->n_ff_exp, 0, 1, 1 << 24, err));
    INFER__TRY(infer__cfg_int(m, "expert_shared_feed_forward_length", &c->n_ff_shexp, 0, 1, 1 << 24, err));
    INFER__TRY(infer__cfg_int(m, "expert_gating_func", &c->expert_gating, 0, 1, 2, err));
    INFER__TRY(infer__cfg_int(m, "expert_weights_norm", &c->expert_norm, 0, 0, 1, err));
    INFER__TRY(infer__cfg_float(m, "expert_weights_scale", &c->expert_weights_scale, err));
    if (c->expert_weights_scale == 0.0f) c->expert_weights_scale = 1.0f;
    return INFER_OK;
}

/* gated DeltaNet sizes (ssm.*) and the multi-token-prediction block count */
static infer_status infer__load_hybrid_config(infer_model *m, infer_error *err) {
    infer_config *c = &m->cfg;
    const int64_t BIG = 1 << 20;
    c->full_attention_interval = 4;
    INFER__TRY(infer__cfg_int(m, "full_attention_interval", &c->full_attention_interval, 0, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "ssm.conv_kernel", &c->ssm_conv_kernel, 1, 1, INFER__MAX_CONV, err));
    INFER__TRY(infer__cfg_int(m, "ssm.state_size", &c->ssm_d_state, 1, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "ssm.group_count", &c->ssm_n_group, 1, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "ssm.time_step_rank", &c->ssm_dt_rank, 1, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "ssm.inner_size", &c->ssm_d_inner, 1, 1, BIG, err));
    if (c->ssm_dt_rank % c->ssm_n_group)
        return infer__fail(err, INFER_ERR_FORMAT, "%s.ssm.time_step_rank (value heads) %d is not a multiple of ssm.group_count (key heads) %d", c->arch, c->ssm_dt_rank, c->ssm_n_group);
    if (c->ssm_d_inner % c->ssm_dt_rank)
        return infer__fail(err, INFER_ERR_FORMAT, "%s.ssm.inner_size %d is not a multiple of ssm.time_step_rank %d", c->arch, c->ssm_d_inner, c->ssm_dt_rank);
    return INFER_OK;
}

/* The gate activation: <arch>.hidden_activation when present (the names Hugging Face configs
 * use for hidden_act), else the family's default. An unknown name is refused rather than
 * silently run as SiLU. */
static infer_status infer__load_ffn_act(infer_model *m, infer_error *err) {
    static const struct { const char *name; int act; } acts[] = {
        { "silu", INFER__ACT_SILU }, { "swish", INFER__ACT_SILU }, { "swiglu", INFER__ACT_SILU },
        { "relu2", INFER__ACT_RELU2 }, { "relu_sqr", INFER__ACT_RELU2 }, { "relu_squared", INFER__ACT_RELU2 },
        { "squared_relu", INFER__ACT_RELU2 },
    };
    char key[128];
    infer_str v;
    m->cfg.ffn_act = m->arch->ffn_act;
    snprintf(key, sizeof key, "%s.hidden_activation", m->cfg.arch);
    const int r = infer__get_str(&m->gguf, key, &v, err);
    if (r <= 0) return r < 0 ? INFER_ERR_FORMAT : INFER_OK;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (infer__str_eq(v, acts[i].name)) { m->cfg.ffn_act = acts[i].act; return INFER_OK; }
    return infer__fail(err, INFER_ERR_UNSUPPORTED, "metadata '%s' = '%.*s' is not a supported activation (silu, relu2)", key, (int)(v.len > 32 ? 32 : v.len), v.ptr);
}

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
    INFER__TRY(infer__cfg_int(m, "nextn_predict_layers", &c->n_layer_nextn, 0, 0, c->n_layer - 1, err));
    c->n_layer -= c->n_layer_nextn;
    INFER__TRY(infer__cfg_int(m, "attention.head_count", &c->n_head, 1, 1, 4096, err));
    c->n_head_kv = c->n_head;
    INFER__TRY(infer__cfg_int(m, "attention.head_count_kv", &c->n_head_kv, 0, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "feed_forward_length", &c->n_ff, 0, 1, BIG, err));
    c->n_ctx_train = 4096;
    INFER__TRY(infer__cfg_int(m, "context_length", &c->n_ctx_train, 0, 1, 1 << 30, err));
    if (c->n_head % c->n_head_kv) return infer__fail(err, INFER_ERR_FORMAT, "head_count %d is not a multiple of head_count_kv %d", c->n_head, c->n_head_kv);
    c->head_dim = c->n_embd / c->n_head;
    INFER__TRY(infer__cfg_int(m, "attention.key_length", &c->head_dim, 0, 1, 65536, err));
    if (c->head_dim < 1) return infer__fail(err, INFER_ERR_FORMAT, "head size %d (embedding_length / head_count) is invalid", c->head_dim);
    c->head_dim_v = c->head_dim;
    INFER__TRY(infer__cfg_int(m, "attention.value_length", &c->head_dim_v, 0, 1, 65536, err));
    if (c->head_dim_v != c->head_dim) return infer__fail(err, INFER_ERR_UNSUPPORTED, "key_length %d != value_length %d", c->head_dim, c->head_dim_v);
    c->rms_eps = 1e-5f;
    INFER__TRY(infer__cfg_float(m, "attention.layer_norm_rms_epsilon", &c->rms_eps, err));
    INFER__TRY(infer__cfg_float(m, "attention.scale", &c->attn_scale, err));
    INFER__TRY(infer__load_rope_config(m, err));
    if (!(c->rms_eps > 0) || !(c->rope_base > 0)) return infer__fail(err, INFER_ERR_FORMAT, "rms epsilon and rope.freq_base must be > 0");
    INFER__TRY(infer__load_moe_config(m, err));
    INFER__TRY(infer__load_ffn_act(m, err));
    if (m->arch->hybrid) INFER__TRY(infer__load_hybrid_config(m, err));
    return INFER_OK;
}

/* find a tensor and check its type and shape {ne0, ne1, ne2} (trailing 0s: fewer dims) */
static infer_status infer__want_v(const infer_model *m, const infer_tensor **out, int need, int f32_only,
                                  int64_t ne0, int64_t ne1, int64_t ne2, infer_error *err, const char *fmt, va_list ap) {
    char name[96];
    vsnprintf(name, sizeof name, fmt, ap);
    const infer_tensor *t = infer_gguf_tensor(&m->gguf, name);
    *out = t;
    if (!t) return need ? infer__fail(err, INFER_ERR_FORMAT, "missing tensor '%s'", name) : INFER_OK;
    const int64_t want[4] = { ne0, ne1 ? ne1 : 1, ne2 ? ne2 : 1, 1 };
    int ok = 1;
    for (int d = 0; d < 4; d++) ok &= t->ne[d] == want[d];
    if (!ok) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s' has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld, %lld]", name,
                                (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3],
                                (long long)want[0], (long long)want[1], (long long)want[2]);
    if (f32_only && t->type != INFER_TYPE_F32) return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%s' has type %s, expected f32", name, infer_type_name(t->type));
    if (!infer__cpu_supports_type(t->type)) return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%s' has type %s, which has no kernels", name, infer_type_name(t->type));
    if (t->type == INFER_TYPE_I2_S && !isfinite(t->scale)) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s': the i2_s scale is not finite", name);
    return INFER_OK;
}
/* a vector or matrix {ne0, ne1} (ne1 = 0: a vector) */
static infer_status infer__want(const infer_model *m, const infer_tensor **out, int need, int f32_only, int64_t ne0, int64_t ne1, infer_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    infer_status st = infer__want_v(m, out, need, f32_only, ne0, ne1, 0, err, fmt, ap);
    va_end(ap);
    return st;
}
/* a stack of ne2 matrices {ne0, ne1} (one per expert) */
static infer_status infer__want3(const infer_model *m, const infer_tensor **out, int64_t ne0, int64_t ne1, int64_t ne2, infer_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    infer_status st = infer__want_v(m, out, 1, 0, ne0, ne1, ne2, err, fmt, ap);
    va_end(ap);
    return st;
}
/* the out size (ne[1]) of an optional tensor, to size a layer whose key is absent */
static int32_t infer__tensor_rows(const infer_model *m, const char *fmt, int l) {
    char name[96];
    snprintf(name, sizeof name, fmt, l);
    const infer_tensor *t = infer_gguf_tensor(&m->gguf, name);
    return t && t->ne[1] > 0 && t->ne[1] <= INT32_MAX ? (int32_t)t->ne[1] : 0;
}

/* Which layers are gated DeltaNet: the explicit `<arch>.attention.recurrent_layers` array when
 * present, else every layer but each full_attention_interval-th (layers 3, 7, 11, ... for 4).
 * The multi-token-prediction blocks after the main layers are attention blocks. */
static infer_status infer__layer_kinds(infer_model *m, infer_error *err) {
    const infer_config *c = &m->cfg;
    const infer_gguf_kv *arr;
    int r = infer__cfg_int_array(m, "attention.recurrent_layers", &arr, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 1 && arr->arr_n < (uint64_t)c->n_layer)
        return infer__fail(err, INFER_ERR_FORMAT, "%s.attention.recurrent_layers has %llu entries, expected at least %d", c->arch, (unsigned long long)arr->arr_n, c->n_layer);
    for (int l = 0; l < c->n_layer; l++)
        m->layers[l].recurrent = r == 1 ? infer__arr_int(arr, (uint64_t)l) != 0 : (l + 1) % c->full_attention_interval != 0;
    return INFER_OK;
}

/* BitNet's optional per-projection scale `<name>.scale` (one f32) multiplies the projection's
 * output; it is folded into the weight tensor's `scale`, which every matmul applies (and which
 * an I2_S tensor already carries), so the forward pass never sees it. */
static infer_status infer__load_scale(infer_model *m, const infer_tensor *w, infer_error *err) {
    const infer_tensor *st;
    const size_t len = strlen(w->name), suffix = strlen(".weight");
    if (len <= suffix) return INFER_OK;
    INFER__TRY(infer__want(m, &st, 0, 1, 1, 0, err, "%.*s.scale", (int)(len - suffix), w->name));
    if (!st) return INFER_OK;
    float v;
    memcpy(&v, st->data, sizeof v);
    if (!isfinite(v) || v == 0) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s' = %g is not a usable scale", st->name, (double)v);
    m->gguf.tensors[w - m->gguf.tensors].scale *= v;
    return INFER_OK;
}

static infer_status infer__load_attention(infer_model *m, infer__layer *L, int l, infer_error *err) {
    const infer_config *c = &m->cfg;
    const int64_t E = c->n_embd, Q = (int64_t)c->n_head * c->head_dim, KV = (int64_t)c->n_head_kv * c->head_dim;
    INFER__TRY(infer__want(m, &L->wq, 1, 0, E, m->arch->attn_gate ? 2 * Q : Q, err, "blk.%d.attn_q.weight", l));
    INFER__TRY(infer__want(m, &L->wk, 1, 0, E, KV, err, "blk.%d.attn_k.weight", l));
    INFER__TRY(infer__want(m, &L->wv, 1, 0, E, KV, err, "blk.%d.attn_v.weight", l));
    INFER__TRY(infer__want(m, &L->bq, 0, 1, m->arch->attn_gate ? 2 * Q : Q, 0, err, "blk.%d.attn_q.bias", l));
    INFER__TRY(infer__want(m, &L->bk, 0, 1, KV, 0, err, "blk.%d.attn_k.bias", l));
    INFER__TRY(infer__want(m, &L->bv, 0, 1, KV, 0, err, "blk.%d.attn_v.bias", l));
    INFER__TRY(infer__want(m, &L->q_norm, m->arch->qk_norm, 1, c->head_dim, 0, err, "blk.%d.attn_q_norm.weight", l));
    INFER__TRY(infer__want(m, &L->k_norm, m->arch->qk_norm, 1, c->head_dim, 0, err, "blk.%d.attn_k_norm.weight", l));
    INFER__TRY(infer__want(m, &L->wo, 1, 0, Q, E, err, "blk.%d.attn_output.weight", l));
    if (!m->arch->bitlinear) return INFER_OK;
    INFER__TRY(infer__want(m, &L->attn_sub_norm, 1, 1, Q, 0, err, "blk.%d.attn_sub_norm.weight", l));
    const infer_tensor *proj[4] = { L->wq, L->wk, L->wv, L->wo };
    for (int i = 0; i < 4; i++) INFER__TRY(infer__load_scale(m, proj[i], err));
    return INFER_OK;
}

static infer_status infer__load_deltanet(infer_model *m, infer__layer *L, int l, infer_error *err) {
    const infer_config *c = &m->cfg;
    const int64_t E = c->n_embd, n_v = c->ssm_dt_rank, d_v = c->ssm_d_inner / c->ssm_dt_rank;
    const int64_t VD = c->ssm_d_inner, CD = 2 * (int64_t)c->ssm_n_group * c->ssm_d_state + VD;
    INFER__TRY(infer__want(m, &L->wqkv, 1, 0, E, CD, err, "blk.%d.attn_qkv.weight", l));
    INFER__TRY(infer__want(m, &L->wz, 1, 0, E, VD, err, "blk.%d.attn_gate.weight", l));
    INFER__TRY(infer__want(m, &L->ssm_beta, 1, 0, E, n_v, err, "blk.%d.ssm_beta.weight", l));
    INFER__TRY(infer__want(m, &L->ssm_alpha, 1, 0, E, n_v, err, "blk.%d.ssm_alpha.weight", l));
    INFER__TRY(infer__want(m, &L->ssm_conv1d, 1, 1, c->ssm_conv_kernel, CD, err, "blk.%d.ssm_conv1d.weight", l));
    INFER__TRY(infer__want(m, &L->ssm_dt, 1, 1, n_v, 0, err, "blk.%d.ssm_dt.bias", l));
    INFER__TRY(infer__want(m, &L->ssm_a, 1, 1, n_v, 0, err, "blk.%d.ssm_a", l));
    INFER__TRY(infer__want(m, &L->ssm_norm, 1, 1, d_v, 0, err, "blk.%d.ssm_norm.weight", l));
    return infer__want(m, &L->ssm_out, 1, 0, VD, E, err, "blk.%d.ssm_out.weight", l);
}

/* dense gated FFN (with its sub-norm and scales when bitlinear), or router + experts
 * (+ shared expert) when the layer stores a router */
static infer_status infer__load_ffn(infer_model *m, infer__layer *L, int l, infer_error *err) {
    infer_config *c = &m->cfg;
    const int64_t E = c->n_embd;
    INFER__TRY(infer__want(m, &L->ffn_norm, 1, 1, E, 0, err, "blk.%d.%s.weight", l, m->arch->ffn_norm));
    char router[64];
    snprintf(router, sizeof router, "blk.%d.ffn_gate_inp.weight", l);
    if (infer_gguf_tensor(&m->gguf, router) && c->n_expert == 0)
        return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s' is present but %s.expert_count is not", router, c->arch);
    INFER__TRY(infer__want(m, &L->ffn_gate_inp, 0, 0, E, c->n_expert, err, "%s", router));
    if (!L->ffn_gate_inp) {
        if (c->n_ff == 0) c->n_ff = infer__tensor_rows(m, "blk.%d.ffn_up.weight", l);
        INFER__TRY(infer__want(m, &L->ffn_gate, 1, 0, E, c->n_ff, err, "blk.%d.ffn_gate.weight", l));
        INFER__TRY(infer__want(m, &L->ffn_up, 1, 0, E, c->n_ff, err, "blk.%d.ffn_up.weight", l));
        INFER__TRY(infer__want(m, &L->ffn_down, 1, 0, c->n_ff, E, err, "blk.%d.ffn_down.weight", l));
        if (!m->arch->bitlinear) return INFER_OK;
        INFER__TRY(infer__want(m, &L->ffn_sub_norm, 1, 1, c->n_ff, 0, err, "blk.%d.ffn_sub_norm.weight", l));
        const infer_tensor *proj[3] = { L->ffn_gate, L->ffn_up, L->ffn_down };
        for (int i = 0; i < 3; i++) INFER__TRY(infer__load_scale(m, proj[i], err));
        return INFER_OK;
    }
    if (c->n_ff_exp == 0) c->n_ff_exp = infer__tensor_rows(m, "blk.%d.ffn_up_exps.weight", l);
    INFER__TRY(infer__want3(m, &L->ffn_gate_exps, E, c->n_ff_exp, c->n_expert, err, "blk.%d.ffn_gate_exps.weight", l));
    INFER__TRY(infer__want3(m, &L->ffn_up_exps, E, c->n_ff_exp, c->n_expert, err, "blk.%d.ffn_up_exps.weight", l));
    INFER__TRY(infer__want3(m, &L->ffn_down_exps, c->n_ff_exp, E, c->n_expert, err, "blk.%d.ffn_down_exps.weight", l));
    if (c->n_ff_shexp == 0) c->n_ff_shexp = infer__tensor_rows(m, "blk.%d.ffn_up_shexp.weight", l);
    INFER__TRY(infer__want(m, &L->ffn_up_shexp, 0, 0, E, c->n_ff_shexp, err, "blk.%d.ffn_up_shexp.weight", l));
    if (!L->ffn_up_shexp) return INFER_OK;
    INFER__TRY(infer__want(m, &L->ffn_gate_shexp, 1, 0, E, c->n_ff_shexp, err, "blk.%d.ffn_gate_shexp.weight", l));
    INFER__TRY(infer__want(m, &L->ffn_down_shexp, 1, 0, c->n_ff_shexp, E, err, "blk.%d.ffn_down_shexp.weight", l));
    return infer__want(m, &L->ffn_gate_inp_shexp, 0, 0, E, 0, err, "blk.%d.ffn_gate_inp_shexp.weight", l);
}

/* A multi-token-prediction block (qwen3.5's MTP) drafts the token after next from the last
 * hidden state and the next token's embedding, for speculative decoding:
 *   h' = attention block( W_eh [RMSNorm(embed(next)) * enorm | RMSNorm(h) * hnorm] ).
 * Plain decoding never runs it; it is loaded and checked so the file is known to be whole. */
static infer_status infer__load_nextn(infer_model *m, infer__layer *L, int l, infer_error *err) {
    const int64_t E = m->cfg.n_embd;
    INFER__TRY(infer__want(m, &L->nextn_eh_proj, 1, 0, 2 * E, E, err, "blk.%d.nextn.eh_proj.weight", l));
    INFER__TRY(infer__want(m, &L->nextn_enorm, 1, 1, E, 0, err, "blk.%d.nextn.enorm.weight", l));
    INFER__TRY(infer__want(m, &L->nextn_hnorm, 1, 1, E, 0, err, "blk.%d.nextn.hnorm.weight", l));
    return infer__want(m, &L->nextn_head_norm, 0, 1, E, 0, err, "blk.%d.nextn.shared_head_norm.weight", l);
}

static infer_status infer__load_weights(infer_model *m, infer_error *err) {
    const infer_config *c = &m->cfg;
    const int64_t E = c->n_embd, V = c->n_vocab;
    INFER__TRY(infer__want(m, &m->tok_embd, 1, 0, E, V, err, "token_embd.weight"));
    INFER__TRY(infer__want(m, &m->output_norm, 1, 1, E, 0, err, "output_norm.weight"));
    if (!m->arch->embd_logits) INFER__TRY(infer__want(m, &m->output, 0, 0, E, V, err, "output.weight"));
    if (!m->output) { m->output = m->tok_embd; m->cfg.tied_output = 1; }
    INFER__TRY(infer__want(m, &m->rope_freqs, 0, 1, c->n_rot / 2, 0, err, "rope_freqs.weight"));
    const int n_all = c->n_layer + c->n_layer_nextn;
    m->layers = (infer__layer *)infer__calloc((size_t)n_all, sizeof(infer__layer));
    if (!m->layers) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    if (m->arch->hybrid) INFER__TRY(infer__layer_kinds(m, err));
    for (int l = 0; l < n_all; l++) {
        infer__layer *L = &m->layers[l];
        INFER__TRY(infer__want(m, &L->attn_norm, 1, 1, E, 0, err, "blk.%d.attn_norm.weight", l));
        INFER__TRY(L->recurrent ? infer__load_deltanet(m, L, l, err) : infer__load_attention(m, L, l, err));
        INFER__TRY(infer__load_ffn(m, L, l, err));
        if (l >= c->n_layer) INFER__TRY(infer__load_nextn(m, L, l, err));
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
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {     /* a Hugging Face folder (>>safetensors) */
        infer_model *m = (infer_model *)infer__calloc(1, sizeof *m);
        if (!m) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
        infer_status st = infer_hf_load(&m->gguf, path, err);
        if (st == INFER_OK) st = infer__model_init(m, p, err);
        if (st != INFER_OK) { infer_model_free(m); return st; }
        *out = m;
        return INFER_OK;
    }
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
 * >>kv -- the paged KV cache, and the recurrent state.
 *
 * Keys and values of past tokens live in fixed-size blocks of `block_size` tokens taken from
 * a pool. A sequence owns a block table (logical block i -> physical block), so its cache
 * need not be contiguous and blocks return to the pool when the sequence is reset. Attention
 * reads a position p at row  table[p / block_size] * block_size + p % block_size.
 *
 *   pool (one per attention layer, for K and for V):  [n_blocks * block_size, n_head_kv * head_dim]
 *
 * A gated DeltaNet layer keeps no per-token cache: its whole past is a fixed-size state,
 * owned by the sequence beside its block table and updated in place by every token:
 *   conv state  [K-1, conv_dim]     the last K-1 inputs of the causal conv
 *   S           [n_v, d_v, d_k]     one d_k x d_v memory per value head (stored by column)
 * ---------------------------------------------------------------------------------------- */
#define INFER__KV_BLOCK 16

typedef struct infer__kv_pool {
    int32_t n_blocks, block_size, kv_dim;
    infer_type type;
    void **k, **v;           /* [n_layer] pool bases (NULL for recurrent layers) */
    int32_t *free_list;      /* stack of free physical blocks */
    int32_t n_free;
} infer__kv_pool;

static int32_t infer__kv_take(infer__kv_pool *p) { return p->n_free > 0 ? p->free_list[--p->n_free] : -1; }
static void infer__kv_give(infer__kv_pool *p, int32_t b) { p->free_list[p->n_free++] = b; }

/* sizes of one gated DeltaNet layer's recurrent state, in floats */
static size_t infer__conv_state_len(const infer_config *c) {
    return (size_t)(c->ssm_conv_kernel - 1) * (size_t)(2 * c->ssm_n_group * c->ssm_d_state + c->ssm_d_inner);
}
static size_t infer__ssm_state_len(const infer_config *c) { return (size_t)c->ssm_d_inner * (size_t)c->ssm_d_state; }

/* ------------------------------------------------------------------------------------------
 * >>forward -- the transformer, once for every family.
 *
 *   x = token_embd[tokens]                                          x: [T, n_embd]
 *   for each layer:
 *       x = x + Mixer(RMSNorm(x) * attn_norm)        attention, or gated DeltaNet (hybrid)
 *       x = x + FFN(RMSNorm(x) * ffn_norm)           gated (SwiGLU / ReLU^2), or MoE
 *   logits = W_out (RMSNorm(x) * output_norm)                       [T, n_vocab]
 *
 * Attention (h = the normed input):
 *   q = Wq h (+bq),  k = Wk h (+bk),  v = Wv h (+bv)         per head: [head_dim]
 *       with attn_gate, Wq h is [q | gate] per head: [n_head, 2, head_dim]
 *   q, k = RMSNorm per head * q_norm, k_norm                 (qk_norm)
 *   q, k = RoPE(q, pos), RoPE(k, pos)                        first n_rot dims of each head
 *   cache k, v at pos;  a = softmax(q K^T * scale) V          causal, GQA
 *   a = a * sigmoid(gate)                                    (attn_gate)
 *   a = RMSNorm(a) * attn_sub_norm                           (bitlinear)
 *   out = Wo a
 *
 * Gated DeltaNet (n_k key heads of d_k, n_v value heads of d_v, value head i reads key head
 * i % n_k -- the order the qwen3.5 converter stores the value heads in):
 *   [q | k | v] = conv1d_causal(W_qkv h), then SiLU      [n_k d_k | n_k d_k | n_v d_v]
 *   z = W_gate h                                         [n_v d_v]
 *   beta = sigmoid(W_beta h),  g = softplus(W_alpha h + dt_bias) * a      [n_v]
 *   q, k = q / ||q||, k / ||k||                          per head
 *   o = gated delta rule(q / sqrt(d_k), k, v, g, beta; S)                 [n_v, d_v]
 *   out = W_out (RMSNorm(o) * ssm_norm * silu(z))        per value head
 *
 * Feed-forward (act = SiLU, or ReLU^2 = max(z, 0)^2 per cfg.ffn_act):
 *   GLU:     W_down( act(W_gate h) * (W_up h) )
 *            bitlinear: W_down( RMSNorm(act(W_gate h) * (W_up h)) * ffn_sub_norm )
 *   MoE:     sum over the router's top-k experts e of w_e GLU_e(h)
 *            (+ sigmoid(w_shexp . h) GLU_shared(h) when a shared expert is stored)
 * A BitNet `.scale` tensor multiplies its projection's output; it is folded into the weight
 * tensor's `scale` at load, which every matmul applies.
 * ---------------------------------------------------------------------------------------- */
/* The output projection runs over at most this many rows at a time, so a long prompt with
 * all logits wanted needs [32, n_vocab] of scratch, not [n_ubatch, n_vocab]. */
#define INFER__LOGIT_ROWS 32

struct infer_session {
    infer_model *m;
    const infer_kernels *k;
    void *kctx;
    infer_session_params p;
    int32_t n_ctx, n_past;
    infer__kv_pool kv;
    int32_t *block_table;    /* [n_ctx / block_size] */
    int32_t n_table;         /* blocks in use */
    float **conv_state;      /* [n_layer] gated DeltaNet conv states, NULL for attention layers */
    float **ssm_state;       /* [n_layer] gated DeltaNet S matrices, NULL for attention layers */
    infer_rope rope;
    /* activations for up to U = n_ubatch tokens (NULL when the model has no use for one) */
    float *x, *h, *o;        /* [U, n_embd]: residual stream, normed input, block output */
    float *logits;           /* [min(U, INFER__LOGIT_ROWS), n_vocab] */
    float *q, *kk, *vv, *att;/* attention: [U, n_head*head_dim], [U, kv_dim] x2, [U, n_head*head_dim] */
    float *qg, *agate;       /* attn_gate: [U, 2*n_head*head_dim], [U, n_head*head_dim] */
    float *gate, *up;        /* feed-forward hidden: [U, max(n_ff, n_ff_shexp, n_used*n_ff_exp)] */
    float *router, *ew, *ey, *shg;  /* MoE: [U, n_expert], [U, n_used], [U, n_used, n_embd], [U] */
    int32_t *eid;            /* MoE: [U, n_used] chosen experts */
    float *mixed, *conv;     /* DeltaNet: [U, conv_dim] before and after the conv */
    float *dq, *dk, *dv, *z, *da, *db, *dout; /* [U, n_k d_k] x2, [U, n_v d_v] x2, [U, n_v] x2, [U, n_v d_v] */
    int32_t *pos;            /* [4, U] positions (4 streams for multi-axis rope) */
};

int32_t infer_session_n_past(const infer_session *s) { return s->n_past; }
int32_t infer_session_n_ctx(const infer_session *s) { return s->n_ctx; }

infer_session_params infer_session_default_params(void) {
    infer_session_params p;
    memset(&p, 0, sizeof p);
    p.kv_type = INFER_TYPE_F16;
    return p;
}

/* The activation buffers with their sizes in bytes (0: not needed by this model). One list
 * serves allocation and freeing. */
typedef struct infer__buf { void **p; size_t bytes; } infer__buf;

static int infer__session_bufs(infer_session *s, infer__buf *b) {
    const infer_config *c = &s->m->cfg;
    const size_t U = (size_t)s->p.n_ubatch, E = (size_t)c->n_embd, QD = (size_t)c->n_head * c->head_dim;
    const size_t KVD = (size_t)c->n_head_kv * c->head_dim, F = sizeof(float);
    const size_t k_used = (size_t)c->n_expert_used, moe = c->n_expert > 0;
    size_t ff = (size_t)c->n_ff;
    if ((size_t)c->n_ff_shexp > ff) ff = (size_t)c->n_ff_shexp;
    if (k_used * c->n_ff_exp > ff) ff = k_used * c->n_ff_exp;
    const int gated = s->m->arch->attn_gate, dn = s->m->arch->hybrid;
    const size_t KD = (size_t)c->ssm_n_group * c->ssm_d_state, VD = (size_t)c->ssm_d_inner, NV = (size_t)c->ssm_dt_rank;
    int n = 0;
#define INFER__BUF(field, size) (b[n].p = (void **)&s->field, b[n].bytes = (size), n++)
    INFER__BUF(x, U * E * F); INFER__BUF(h, U * E * F); INFER__BUF(o, U * E * F);
    INFER__BUF(logits, (U < INFER__LOGIT_ROWS ? U : INFER__LOGIT_ROWS) * (size_t)c->n_vocab * F);
    INFER__BUF(q, U * QD * F); INFER__BUF(kk, U * KVD * F); INFER__BUF(vv, U * KVD * F); INFER__BUF(att, U * QD * F);
    INFER__BUF(qg, gated ? U * 2 * QD * F : 0); INFER__BUF(agate, gated ? U * QD * F : 0);
    INFER__BUF(gate, U * ff * F); INFER__BUF(up, U * ff * F);
    INFER__BUF(router, moe * U * (size_t)c->n_expert * F); INFER__BUF(ew, moe * U * k_used * F);
    INFER__BUF(ey, moe * U * k_used * E * F); INFER__BUF(shg, moe * U * F); INFER__BUF(eid, moe * U * k_used * sizeof(int32_t));
    INFER__BUF(mixed, dn * U * (2 * KD + VD) * F); INFER__BUF(conv, dn * U * (2 * KD + VD) * F);
    INFER__BUF(dq, dn * U * KD * F); INFER__BUF(dk, dn * U * KD * F); INFER__BUF(dv, dn * U * VD * F);
    INFER__BUF(z, dn * U * VD * F); INFER__BUF(da, dn * U * NV * F); INFER__BUF(db, dn * U * NV * F);
    INFER__BUF(dout, dn * U * VD * F);
#undef INFER__BUF
    return n;
}
#define INFER__MAX_BUFS 32   /* >= the entries above */

/* a fresh sequence: no cached tokens, zero recurrent state */
void infer_session_reset(infer_session *s) {
    const infer_config *c = &s->m->cfg;
    for (int32_t i = s->n_table - 1; i >= 0; i--) infer__kv_give(&s->kv, s->block_table[i]);
    s->n_table = 0;
    s->n_past = 0;
    for (int l = 0; s->conv_state && s->ssm_state && l < c->n_layer; l++) {
        if (s->conv_state[l]) s->k->zero(s->kctx, s->conv_state[l], infer__conv_state_len(c) * sizeof(float));
        if (s->ssm_state[l]) s->k->zero(s->kctx, s->ssm_state[l], infer__ssm_state_len(c) * sizeof(float));
    }
}

void infer_session_free(infer_session *s) {
    if (!s) return;
    const infer_kernels *k = s->k;
    for (int l = 0; l < s->m->cfg.n_layer; l++) {
        if (s->kv.k) { k->free(s->kctx, s->kv.k[l]); k->free(s->kctx, s->kv.v[l]); }
        if (s->conv_state) k->free(s->kctx, s->conv_state[l]);
        if (s->ssm_state) k->free(s->kctx, s->ssm_state[l]);
    }
    INFER_FREE(s->kv.k); INFER_FREE(s->kv.v); INFER_FREE(s->kv.free_list); INFER_FREE(s->block_table);
    INFER_FREE(s->conv_state); INFER_FREE(s->ssm_state);
    infer__buf bufs[INFER__MAX_BUFS];
    const int nb = infer__session_bufs(s, bufs);
    for (int i = 0; i < nb; i++) k->free(s->kctx, *bufs[i].p);
    INFER_FREE(s->pos);
    infer__cpu_ctx_free((infer__cpu_ctx *)s->kctx);
    INFER_FREE(s);
}

/* per layer: a KV pool for attention layers, the recurrent state for DeltaNet layers */
static int infer__session_alloc_layers(infer_session *s, size_t kv_layer_bytes) {
    const infer_config *c = &s->m->cfg;
    const infer_kernels *k = s->k;
    const size_t n = (size_t)c->n_layer;
    s->kv.k = (void **)infer__calloc(n, sizeof(void *));
    s->kv.v = (void **)infer__calloc(n, sizeof(void *));
    s->conv_state = (float **)infer__calloc(n, sizeof(float *));
    s->ssm_state = (float **)infer__calloc(n, sizeof(float *));
    if (!s->kv.k || !s->kv.v || !s->conv_state || !s->ssm_state) return 0;
    for (int l = 0; l < c->n_layer; l++) {
        if (s->m->layers[l].recurrent) {
            s->conv_state[l] = (float *)k->alloc(s->kctx, infer__conv_state_len(c) * sizeof(float));
            s->ssm_state[l] = (float *)k->alloc(s->kctx, infer__ssm_state_len(c) * sizeof(float));
            if (!s->conv_state[l] || !s->ssm_state[l]) return 0;
        } else {
            s->kv.k[l] = k->alloc(s->kctx, kv_layer_bytes);
            s->kv.v[l] = k->alloc(s->kctx, kv_layer_bytes);
            if (!s->kv.k[l] || !s->kv.v[l]) return 0;
        }
    }
    return 1;
}

static void infer__session_rope(infer_session *s) {
    const infer_config *c = &s->m->cfg;
    infer_rope *r = &s->rope;
    r->n_rot = c->n_rot;
    r->neox = s->m->arch->rope != INFER__ROPE_NORM;
    r->freq_base = c->rope_base;
    r->freq_scale = c->rope_scaling != INFER_ROPE_SCALING_NONE ? 1.0f / c->rope_scale_factor : 1.0f;
    r->freq_factors = s->m->rope_freqs ? (const float *)s->m->rope_freqs->data : NULL;
    r->attn_factor = 1.0f;
    r->ext_factor = c->rope_scaling == INFER_ROPE_SCALING_YARN ? 1.0f : 0.0f;
    r->beta_fast = 32.0f;
    r->beta_slow = 1.0f;
    r->n_ctx_orig = c->rope_orig_ctx;
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
    s->kv.free_list = (int32_t *)infer__calloc((size_t)s->kv.n_blocks, sizeof(int32_t));
    s->block_table = (int32_t *)infer__calloc((size_t)s->kv.n_blocks, sizeof(int32_t));
    int ok = s->kctx && s->kv.free_list && s->block_table &&
             infer__session_alloc_layers(s, (size_t)s->n_ctx * (size_t)s->kv.kv_dim * esz);
    for (int32_t b = s->kv.n_blocks - 1; ok && b >= 0; b--) infer__kv_give(&s->kv, b);
    infer__buf bufs[INFER__MAX_BUFS];
    const int nb = infer__session_bufs(s, bufs);
    for (int i = 0; ok && i < nb; i++) {
        if (bufs[i].bytes) *bufs[i].p = s->k->alloc(s->kctx, bufs[i].bytes);
        ok = !bufs[i].bytes || *bufs[i].p;
    }
    if (ok) ok = (s->pos = (int32_t *)infer__calloc(4 * (size_t)p.n_ubatch, sizeof(int32_t))) != NULL;
    if (!ok) { infer_session_free(s); return infer__fail(err, INFER_ERR_NOMEM, "out of memory for a %d-token session", (int)((p.n_ctx + bs - 1) / bs * bs)); }
    infer_session_reset(s);
    infer__session_rope(s);
    *out = s;
    return INFER_OK;
}

/* Attention mixer: s->h -> s->o (see the block comment above) */
static void infer__attention_layer(infer_session *s, int l, int T) {
    const infer_model *m = s->m;
    const infer_config *c = &m->cfg;
    const infer__layer *L = &m->layers[l];
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int hd = c->head_dim, QD = c->n_head * hd, KVD = c->n_head_kv * hd;
    const float scale = c->attn_scale > 0 ? c->attn_scale : 1.0f / sqrtf((float)hd);
    if (m->arch->attn_gate) {                          /* [T, n_head, 2, hd] -> q, gate */
        k->matmul(kc, s->qg, L->wq, s->h, T);
        if (L->bq) k->add_rows(kc, s->qg, (const float *)L->bq->data, T, 2 * QD);
        k->copy_rows(kc, s->q, hd, s->qg, 2 * hd, T * c->n_head, hd);
        k->copy_rows(kc, s->agate, hd, s->qg + hd, 2 * hd, T * c->n_head, hd);
    } else {
        k->matmul(kc, s->q, L->wq, s->h, T);
        if (L->bq) k->add_rows(kc, s->q, (const float *)L->bq->data, T, QD);
    }
    k->matmul(kc, s->kk, L->wk, s->h, T);
    k->matmul(kc, s->vv, L->wv, s->h, T);
    if (L->bk) k->add_rows(kc, s->kk, (const float *)L->bk->data, T, KVD);
    if (L->bv) k->add_rows(kc, s->vv, (const float *)L->bv->data, T, KVD);
    if (L->q_norm) {
        k->rmsnorm(kc, s->q, s->q, (const float *)L->q_norm->data, T * c->n_head, hd, c->rms_eps);
        k->rmsnorm(kc, s->kk, s->kk, (const float *)L->k_norm->data, T * c->n_head_kv, hd, c->rms_eps);
    }
    /* multi-axis rope when the file gives sections; without them, plain rope on one stream */
    if (c->rope_sections[0] + c->rope_sections[1] + c->rope_sections[2] + c->rope_sections[3] > 0) {
        k->rope_multi(kc, s->q, T, c->n_head, hd, s->pos, &s->rope, c->rope_sections);
        k->rope_multi(kc, s->kk, T, c->n_head_kv, hd, s->pos, &s->rope, c->rope_sections);
    } else {
        k->rope(kc, s->q, T, c->n_head, hd, s->pos, &s->rope);
        k->rope(kc, s->kk, T, c->n_head_kv, hd, s->pos, &s->rope);
    }
    infer_kv_view kv = { s->kv.k[l], s->kv.v[l], s->kv.type, s->kv.block_size, s->block_table, KVD };
    k->kv_store(kc, &kv, s->kk, s->vv, s->pos, T);
    k->attention(kc, s->att, s->q, &kv, s->pos, T, c->n_head, c->n_head_kv, hd, scale);
    if (m->arch->attn_gate) k->mul_sigmoid(kc, s->att, s->agate, T, QD, QD);
    if (L->attn_sub_norm) k->rmsnorm(kc, s->att, s->att, (const float *)L->attn_sub_norm->data, T, QD, c->rms_eps);
    k->matmul(kc, s->o, L->wo, s->att, T);
}

/* Gated DeltaNet mixer: s->h -> s->o, carrying the layer's conv state and S. A prompt chunk
 * uses the chunked form of the delta rule, a single token the recurrence. */
static void infer__deltanet_layer(infer_session *s, int l, int T) {
    const infer_config *c = &s->m->cfg;
    const infer__layer *L = &s->m->layers[l];
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int n_k = c->ssm_n_group, n_v = c->ssm_dt_rank, d_k = c->ssm_d_state, d_v = c->ssm_d_inner / n_v;
    const int KD = n_k * d_k, VD = n_v * d_v, CD = 2 * KD + VD;
    k->matmul(kc, s->mixed, L->wqkv, s->h, T);                                   /* [T, q | k | v] */
    k->matmul(kc, s->z, L->wz, s->h, T);
    k->matmul(kc, s->db, L->ssm_beta, s->h, T);
    k->matmul(kc, s->da, L->ssm_alpha, s->h, T);
    k->deltanet_gates(kc, s->da, s->db, (const float *)L->ssm_dt->data, (const float *)L->ssm_a->data, T, n_v);
    k->conv1d_silu(kc, s->conv, s->mixed, s->conv_state[l], (const float *)L->ssm_conv1d->data, T, CD, c->ssm_conv_kernel);
    k->copy_rows(kc, s->dq, KD, s->conv, CD, T, KD);
    k->copy_rows(kc, s->dk, KD, s->conv + KD, CD, T, KD);
    k->copy_rows(kc, s->dv, VD, s->conv + 2 * KD, CD, T, VD);
    k->l2norm(kc, s->dq, T * n_k, d_k, c->rms_eps);
    k->l2norm(kc, s->dk, T * n_k, d_k, c->rms_eps);
    (T == 1 ? k->deltanet_step : k->deltanet_chunked)(kc, s->dout, s->dq, s->dk, s->dv, s->da, s->db, s->ssm_state[l],
                                                      T, n_k, n_v, d_k, d_v, 1.0f / sqrtf((float)d_k));
    k->rmsnorm(kc, s->dout, s->dout, (const float *)L->ssm_norm->data, T * n_v, d_v, c->rms_eps);
    k->swiglu(kc, s->dout, s->z, s->dout, (int64_t)T * VD);                     /* * silu(z) */
    k->matmul(kc, s->o, L->ssm_out, s->dout, T);
}

/* gate = act(gate) * up with the model's activation: SiLU through the table's swiglu, others
 * through the CPU's GLU kernel (>>cpu, infer__cpu_glu) */
static void infer__ffn_act(infer_session *s, float *gate, const float *up, int64_t n) {
    if (s->m->cfg.ffn_act == INFER__ACT_SILU) s->k->swiglu(s->kctx, gate, gate, up, n);
    else infer__cpu_glu(s->kctx, gate, gate, up, n, s->m->cfg.ffn_act);
}

/* out = W_down( act(W_gate h) * (W_up h) ), hidden size n_ff; BitLinear models normalise the
 * hidden vector (RMSNorm * ffn_sub_norm) before W_down */
static void infer__glu_ffn(infer_session *s, float *out, const infer_tensor *wg, const infer_tensor *wu, const infer_tensor *wd,
                           const infer_tensor *sub_norm, int n_ff, int T) {
    const infer_kernels *k = s->k;
    k->matmul(s->kctx, s->gate, wg, s->h, T);
    k->matmul(s->kctx, s->up, wu, s->h, T);
    infer__ffn_act(s, s->gate, s->up, (int64_t)T * n_ff);
    if (sub_norm) k->rmsnorm(s->kctx, s->gate, s->gate, (const float *)sub_norm->data, T, n_ff, s->m->cfg.rms_eps);
    k->matmul(s->kctx, out, wd, s->gate, T);
}

/* Mixture of experts: s->h -> s->o */
static void infer__moe_ffn(infer_session *s, const infer__layer *L, int T) {
    const infer_config *c = &s->m->cfg;
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int E = c->n_embd, n_used = c->n_expert_used;
    k->matmul(kc, s->router, L->ffn_gate_inp, s->h, T);                          /* [T, n_expert] */
    k->moe_route(kc, s->eid, s->ew, s->router, T, c->n_expert, n_used, c->expert_gating, c->expert_norm, c->expert_weights_scale);
    k->matmul_id(kc, s->gate, L->ffn_gate_exps, s->h, s->eid, T, n_used, 0);      /* [T, n_used, n_ff_exp] */
    k->matmul_id(kc, s->up, L->ffn_up_exps, s->h, s->eid, T, n_used, 0);
    infer__ffn_act(s, s->gate, s->up, (int64_t)T * n_used * c->n_ff_exp);
    k->matmul_id(kc, s->ey, L->ffn_down_exps, s->gate, s->eid, T, n_used, 1);     /* [T, n_used, n_embd] */
    k->moe_sum(kc, s->o, s->ey, s->ew, T, n_used, E);
    if (!L->ffn_up_shexp) return;
    infer__glu_ffn(s, s->ey, L->ffn_gate_shexp, L->ffn_up_shexp, L->ffn_down_shexp, NULL, c->n_ff_shexp, T);
    if (L->ffn_gate_inp_shexp) {
        k->matmul(kc, s->shg, L->ffn_gate_inp_shexp, s->h, T);                    /* [T, 1] */
        k->mul_sigmoid(kc, s->ey, s->shg, T, E, 1);
    }
    k->add(kc, s->o, s->ey, (int64_t)T * E);
}

/* One chunk of T <= n_ubatch tokens at positions n_past.. through every layer.
 * Writes logits of rows [first_logit, T) to dst (host memory), if dst is given. */
static void infer__forward_chunk(infer_session *s, const int32_t *tokens, int T, int first_logit, float *dst) {
    const infer_model *m = s->m;
    const infer_config *c = &m->cfg;
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int E = c->n_embd;
    for (int i = 0; i < T; i++) {            /* text: streams t, h, w = the position, e = 0 */
        s->pos[i] = s->pos[T + i] = s->pos[2 * T + i] = s->n_past + i;
        s->pos[3 * T + i] = 0;
    }
    k->embed(kc, s->x, m->tok_embd, tokens, T);
    for (int l = 0; l < c->n_layer; l++) {  /* the MTP blocks after n_layer are not run */
        const infer__layer *L = &m->layers[l];
        k->rmsnorm(kc, s->h, s->x, (const float *)L->attn_norm->data, T, E, c->rms_eps);
        if (L->recurrent) infer__deltanet_layer(s, l, T);
        else infer__attention_layer(s, l, T);
        k->add(kc, s->x, s->o, (int64_t)T * E);
        k->rmsnorm(kc, s->h, s->x, (const float *)L->ffn_norm->data, T, E, c->rms_eps);
        if (L->ffn_gate_inp) infer__moe_ffn(s, L, T);
        else infer__glu_ffn(s, s->o, L->ffn_gate, L->ffn_up, L->ffn_down, L->ffn_sub_norm, c->n_ff, T);
        k->add(kc, s->x, s->o, (int64_t)T * E);
    }
    const size_t V = (size_t)c->n_vocab;
    for (int r0 = first_logit; r0 < T && dst; r0 += INFER__LOGIT_ROWS) {
        const int nl = T - r0 < INFER__LOGIT_ROWS ? T - r0 : INFER__LOGIT_ROWS;
        k->rmsnorm(kc, s->h, s->x + (size_t)r0 * E, (const float *)m->output_norm->data, nl, E, c->rms_eps);
        k->matmul(kc, s->logits, m->output, s->h, nl);
        k->download(kc, dst + (size_t)(r0 - first_logit) * V, s->logits, (size_t)nl * V * sizeof(float));
    }
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
        float *dst = !logits || first == T ? NULL : all_logits ? logits + (size_t)i0 * V : logits;
        infer__forward_chunk(s, tokens + i0, T, first, dst);
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
