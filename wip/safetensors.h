/* ------------------------------------------------------------------------------------------
 * >>safetensors -- Hugging Face checkpoints, read as GGUF.
 *
 * A .safetensors file:
 *
 *   bytes 0..7     u64 N, little-endian: the header length (we refuse N > 100 MB)
 *   bytes 8..8+N   JSON: { "<name>": { "dtype": "BF16", "shape": [4096, 4096],
 *                                       "data_offsets": [begin, end] }, ...,
 *                          "__metadata__": { "format": "pt" } }
 *                  (the JSON may end in spaces that pad the data to a multiple of 8)
 *   bytes 8+N..    the data area: tensor t is bytes [begin, end) of it, row-major with the
 *                  outermost dimension first (PyTorch order), little-endian
 *
 * Rules the parser enforces (every violation is an error that names the tensor):
 *   - end - begin == product(shape) * sizeof(dtype), computed without overflow;
 *   - sorted by begin, the tensors tile the data area: each starts where the previous one
 *     ended (no gap, no overlap) and the last ends at the end of the file;
 *   - names are unique, non-empty, without NUL; at most INFER_ST_MAX_DIMS dimensions.
 *
 * PyTorch's W[out, in] (in varying fastest) is byte for byte GGUF's ne = {in, out}: a
 * shape is reversed, the bytes are not touched. That is why most tensors of a checkpoint
 * can be used in place, straight from the mapped file.
 * ---------------------------------------------------------------------------------------- */
#define INFER__ST_MAX_HEADER ((uint64_t)100 << 20)
#ifndef INFER__TRY
#define INFER__TRY(expr) do { infer_status st_ = (expr); if (st_ != INFER_OK) return st_; } while (0)
#endif

typedef struct infer__st_dtype { const char *name; int32_t size; } infer__st_dtype;

/* the dtypes a safetensors header may name; only the float ones (and BitNet's packed U8,
 * FP8 with block scales) become model weights, the rest are readable for `convert info` */
static const infer__st_dtype infer__st_dtypes[] = {
    { "F32", 4 }, { "F16", 2 }, { "BF16", 2 }, { "F64", 8 },
    { "I8", 1 }, { "I16", 2 }, { "I32", 4 }, { "I64", 8 },
    { "U8", 1 }, { "U16", 2 }, { "U32", 4 }, { "U64", 8 }, { "BOOL", 1 },
    { "F8_E4M3", 1 }, { "F8_E5M2", 1 }, { "F8_E8M0", 1 },
};

static const infer__st_dtype *infer__st_find_dtype(const char *name) {
    for (size_t i = 0; i < sizeof infer__st_dtypes / sizeof infer__st_dtypes[0]; i++)
        if (strcmp(infer__st_dtypes[i].name, name) == 0) return &infer__st_dtypes[i];
    return NULL;
}

/* "[4096, 4096]" for messages */
static const char *infer__st_shape_str(char *buf, size_t size, const int64_t *shape, int n) {
    size_t at = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < n && at < size; d++) at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (at < size) snprintf(buf + at, size - at, "]");
    return buf;
}

/* one header entry: dtype, shape and byte range, checked against the data area's size */
static infer_status infer__st_tensor_info(infer_st_tensor *t, const infer__json *e, uint64_t data_size, infer_error *err) {
    const char *nm = e->key;
    char shp[160];
    if (e->key_len == 0 || strlen(nm) != e->key_len) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: a tensor name is empty or contains a NUL byte");
    t->name = nm;
    if (e->type != INFER__JSON_OBJECT) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': entry is not an object", nm);
    const char *dt = infer__json_str(infer__json_get(e, "dtype"));
    const infer__st_dtype *d = dt ? infer__st_find_dtype(dt) : NULL;
    if (!d) return infer__fail(err, INFER_ERR_UNSUPPORTED, "safetensors: tensor '%.100s': unknown dtype '%.32s'", nm, dt ? dt : "(missing)");
    t->dtype = d->name;
    t->dtype_size = d->size;
    const infer__json *shape = infer__json_get(e, "shape"), *off = infer__json_get(e, "data_offsets");
    if (!shape || shape->type != INFER__JSON_ARRAY || shape->len > INFER_ST_MAX_DIMS)
        return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': shape must be an array of at most %d sizes", nm, INFER_ST_MAX_DIMS);
    uint64_t numel = 1, bytes = 0;
    t->n_dims = (int32_t)shape->len;
    for (uint32_t i = 0; i < shape->len; i++) {
        if (infer__json_int(&shape->items[i], &t->shape[i]) < 0 || t->shape[i] < 0)
            return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': dimension %u is not a non-negative integer", nm, i);
        if (!infer__mul_ok(numel, (uint64_t)t->shape[i], &numel)) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': element count overflows", nm);
    }
    int64_t b, en;
    if (!off || off->type != INFER__JSON_ARRAY || off->len != 2 || infer__json_int(&off->items[0], &b) < 0 ||
        infer__json_int(&off->items[1], &en) < 0 || b < 0 || en < b)
        return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': data_offsets must be two integers [begin, end] with 0 <= begin <= end", nm);
    if ((uint64_t)en > data_size)
        return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': data [%lld, %lld) runs past the %llu-byte data area", nm, (long long)b, (long long)en, (unsigned long long)data_size);
    if (!infer__mul_ok(numel, (uint64_t)d->size, &bytes)) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': byte size overflows", nm);
    if (bytes != (uint64_t)(en - b))
        return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s': dtype %s with shape %s needs %llu bytes but data_offsets hold %lld", nm, d->name,
                           infer__st_shape_str(shp, sizeof shp, t->shape, t->n_dims), (unsigned long long)bytes, (long long)(en - b));
    t->offset = (uint64_t)b;
    t->nbytes = (size_t)bytes;
    return INFER_OK;
}

static int infer__st_cmp_offset(const void *a, const void *b) {
    const infer_st_tensor *x = (const infer_st_tensor *)a, *y = (const infer_st_tensor *)b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

/* the tensors, sorted by offset, must tile [0, data_size) exactly */
static infer_status infer__st_check_tiling(const infer_safetensors *st, uint64_t data_size, infer_error *err) {
    uint64_t pos = 0;
    for (int64_t i = 0; i < st->n_tensors; i++) {
        const infer_st_tensor *t = &st->tensors[i];
        if (t->offset < pos)
            return infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensors '%.100s' and '%.100s' overlap (the second starts at byte %llu, the first ends at %llu)",
                               st->tensors[i - 1].name, t->name, (unsigned long long)t->offset, (unsigned long long)pos);
        if (t->offset > pos)
            return infer__fail(err, INFER_ERR_FORMAT, "safetensors: data bytes [%llu, %llu) before tensor '%.100s' belong to no tensor",
                               (unsigned long long)pos, (unsigned long long)t->offset, t->name);
        pos = t->offset + t->nbytes;
    }
    if (pos != data_size)
        return infer__fail(err, INFER_ERR_FORMAT, "safetensors: the data area has %llu bytes but the tensors end at byte %llu", (unsigned long long)data_size, (unsigned long long)pos);
    return INFER_OK;
}

static infer_status infer__st_read_meta(infer_safetensors *st, const infer__json *m, infer_error *err) {
    if (m->type != INFER__JSON_OBJECT) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: __metadata__ is not an object");
    st->meta = (const char **)infer__calloc((size_t)m->len * 2 + 1, sizeof(char *));
    if (!st->meta) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < m->len; i++) {
        if (m->items[i].type != INFER__JSON_STRING) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: __metadata__ value '%.100s' is not a string", m->items[i].key);
        st->meta[2 * i] = m->items[i].key;
        st->meta[2 * i + 1] = m->items[i].str;
    }
    st->n_meta = m->len;
    return INFER_OK;
}

static infer_status infer__st_read_header(infer_safetensors *st, const infer__json *root, infer_error *err) {
    const uint64_t data_size = st->size - st->data_offset;
    struct { char *key; int value; } *seen = NULL;
    infer_status rc = INFER_OK;
    if (root->type != INFER__JSON_OBJECT) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: the header is not a JSON object");
    const int has_meta = infer__json_get(root, "__metadata__") != NULL;
    st->tensors = (infer_st_tensor *)infer__calloc(root->len, sizeof(infer_st_tensor));
    if (!st->tensors) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < root->len && rc == INFER_OK; i++) {
        const infer__json *e = &root->items[i];
        if (has_meta && strcmp(e->key, "__metadata__") == 0) {
            if (st->meta) rc = infer__fail(err, INFER_ERR_FORMAT, "safetensors: __metadata__ appears twice");
            else rc = infer__st_read_meta(st, e, err);
            continue;
        }
        infer_st_tensor *t = &st->tensors[st->n_tensors];
        if ((rc = infer__st_tensor_info(t, e, data_size, err)) != INFER_OK) break;
        if (shgeti(seen, t->name) >= 0) rc = infer__fail(err, INFER_ERR_FORMAT, "safetensors: tensor '%.100s' appears twice", t->name);
        shput(seen, (char *)t->name, 1);
        st->n_tensors++;
    }
    shfree(seen);
    if (rc != INFER_OK) return rc;
    qsort(st->tensors, (size_t)st->n_tensors, sizeof(infer_st_tensor), infer__st_cmp_offset);
    if ((rc = infer__st_check_tiling(st, data_size, err)) != INFER_OK) return rc;
    for (int64_t i = 0; i < st->n_tensors; i++) st->tensors[i].data = st->base + st->data_offset + st->tensors[i].offset;
    return INFER_OK;
}

infer_status infer_safetensors_parse(infer_safetensors *st, const void *data, size_t size, infer_error *err) {
    const uint8_t *p = (const uint8_t *)data;
    uint64_t n;
    char jerr[200];
    memset(st, 0, sizeof *st);
    if (size < 8) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: a %zu-byte file is too short for the 8-byte header length", size);
    memcpy(&n, p, 8);
    if (n > INFER__ST_MAX_HEADER) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: header length %llu exceeds the 100 MB limit", (unsigned long long)n);
    if (n > size - 8) return infer__fail(err, INFER_ERR_FORMAT, "safetensors: header length %llu runs past the end of the %zu-byte file", (unsigned long long)n, size);
    if (n == 0 || p[8] != '{') return infer__fail(err, INFER_ERR_FORMAT, "safetensors: the header must be a JSON object starting at byte 8");
    infer__json_doc *doc = (infer__json_doc *)infer__calloc(1, sizeof *doc);
    if (!doc) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    if (infer__json_parse(doc, (const char *)p + 8, (size_t)n, jerr, sizeof jerr) != 0) {
        INFER_FREE(doc);
        return infer__fail(err, INFER_ERR_FORMAT, "safetensors header: %s", jerr);
    }
    st->header = doc;
    st->base = p;
    st->size = size;
    st->data_offset = (size_t)(8 + n);
    infer_status rc = infer__st_read_header(st, doc->root, err);
    if (rc != INFER_OK) infer_safetensors_free(st);
    return rc;
}

void infer_safetensors_free(infer_safetensors *st) {
    if (st->header) infer__json_free((infer__json_doc *)st->header);
    INFER_FREE(st->header);
    INFER_FREE(st->tensors);
    INFER_FREE((void *)st->meta);
    memset(st, 0, sizeof *st);
}

const infer_st_tensor *infer_safetensors_tensor(const infer_safetensors *st, const char *name) {
    for (int64_t i = 0; i < st->n_tensors; i++) if (strcmp(st->tensors[i].name, name) == 0) return &st->tensors[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Hugging Face folder -> GGUF, in memory.
 *
 * infer_hf_load builds the infer_gguf the official converter (llama.cpp's
 * convert_hf_to_gguf.py) would write for the folder, so the GGUF loader and the GGUF writer
 * need to know nothing about Hugging Face:
 *   config.json            -> `<arch>.*` hyper-parameter keys (the converter's key names)
 *   *.safetensors          -> tensors renamed to GGUF names, shapes reversed, and the few
 *                             value transforms the converter applies (listed at >>hf-tensors)
 *   tokenizer.json (+ tokenizer_config.json)  -> `tokenizer.ggml.*` keys (>>hf-tokenizer)
 * Tensors the converter leaves alone point into the mapped shards (no copy); transformed
 * ones are owned copies. Everything lives in an infer__hf_owner that infer_gguf_free frees.
 * ---------------------------------------------------------------------------------------- */
typedef struct infer__hf_owner {
    infer__mapping *maps;       /* stb_ds: the mapped shards */
    void **blocks;              /* stb_ds: every allocation the GGUF points into */
} infer__hf_owner;

static void infer__hf_owner_free(void *p) {
    infer__hf_owner *o = (infer__hf_owner *)p;
    if (!o) return;
    for (ptrdiff_t i = 0; i < arrlen(o->maps); i++) infer__unmap(&o->maps[i]);
    for (ptrdiff_t i = 0; i < arrlen(o->blocks); i++) INFER_FREE(o->blocks[i]);
    arrfree(o->maps);
    arrfree(o->blocks);
    INFER_FREE(o);
}

/* zeroed memory that lives as long as the GGUF */
static void *infer__hf_keep(infer__hf_owner *o, size_t n) {
    void *p = infer__calloc(1, n ? n : 1);
    if (p) arrput(o->blocks, p);
    return p;
}

/* Families. `hf` is config.json's architectures[0]; `gguf` is general.architecture. */
enum {
    INFER__HF_PERMUTE_QK = 1,   /* llama: q/k rows reordered for adjacent-pair rope (>>hf-tensors) */
    INFER__HF_LLAMA_KEYS = 2,   /* vocab_size, rope.dimension_count, llama-3 rope_freqs */
    INFER__HF_NORM_PLUS1 = 4,   /* RMSNorm weights stored as w - 1 (HF computes (1 + w) x) */
    INFER__HF_HYBRID = 8,       /* gated DeltaNet layers: ssm keys, tiled value heads, MTP */
    INFER__HF_MOE = 16,         /* experts stacked into 3-D tensors */
    INFER__HF_BITNET = 32       /* ternary projections, sub-norms */
};

typedef struct infer__hf_arch { const char *hf, *gguf; unsigned flags; } infer__hf_arch;

static const infer__hf_arch infer__hf_archs[] = {
    { "LlamaForCausalLM", "llama", INFER__HF_PERMUTE_QK | INFER__HF_LLAMA_KEYS },
    { "MistralForCausalLM", "llama", INFER__HF_PERMUTE_QK | INFER__HF_LLAMA_KEYS },
    { "Qwen2ForCausalLM", "qwen2", 0 },
    { "Qwen3ForCausalLM", "qwen3", 0 },
    { "Qwen3MoeForCausalLM", "qwen3moe", INFER__HF_MOE },
    { "Qwen3_5ForCausalLM", "qwen35", INFER__HF_NORM_PLUS1 | INFER__HF_HYBRID },
    { "Qwen3_5ForConditionalGeneration", "qwen35", INFER__HF_NORM_PLUS1 | INFER__HF_HYBRID },
    { "Qwen3_5MoeForCausalLM", "qwen35moe", INFER__HF_NORM_PLUS1 | INFER__HF_HYBRID | INFER__HF_MOE },
    { "Qwen3_5MoeForConditionalGeneration", "qwen35moe", INFER__HF_NORM_PLUS1 | INFER__HF_HYBRID | INFER__HF_MOE },
    /* 1bitLLM checkpoints: float weights that the converter ternarizes */
    { "BitnetForCausalLM", "bitnet", INFER__HF_BITNET },
    /* Microsoft's: 2-bit packed weights + inverted scales; with ReLU^2 (hidden_act "relu2")
     * it is BitNet's own "bitnet-b1.58" GGUF architecture */
    { "BitNetForCausalLM", "bitnet", INFER__HF_BITNET },
};

typedef struct infer__hf {
    infer__hf_owner *own;
    infer_gguf_kv *kv;                 /* stb_ds: the metadata being built */
    infer_tensor *tensors;             /* stb_ds: the tensors being built */
    const infer__hf_arch *arch;
    char arch_name[32];                /* general.architecture */
    const char *dir;
    infer__json_doc cfg_doc;
    const infer__json *cfg, *text;     /* config.json, and its text_config (else cfg itself) */
    infer_safetensors *files;          /* stb_ds: the parsed shards */
    uint8_t **done;                    /* stb_ds: per shard, per tensor: already used */
    struct { char *key; int64_t value; } *where;   /* stb_ds: tensor name -> shard << 32 | index */
    /* the hyper-parameters the transforms need */
    int64_t n_head, n_head_kv, n_layer, n_mtp, n_expert;
    int64_t ssm_nk, ssm_nv, ssm_dk, ssm_dv;   /* gated DeltaNet: key heads, value heads, head sizes */
    int64_t fp8_block[2];              /* FP8 weight_scale_inv block size (rows, cols) */
} infer__hf;

/* ---- metadata builders: keys and strings are copied into the owner ---- */
static const char *infer__hf_str(infer__hf *h, const char *s) {
    size_t n = strlen(s);
    char *p = (char *)infer__hf_keep(h->own, n + 1);
    if (p) memcpy(p, s, n);
    return p ? p : "";
}
static const char *infer__hf_akey(infer__hf *h, const char *suffix) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", h->arch_name, suffix);
    return infer__hf_str(h, k);
}
static void infer__hf_put_u32(infer__hf *h, const char *key, int64_t v) { arrput(h->kv, infer_gguf_kv_u32(key, (uint32_t)v)); }
static void infer__hf_put_f32(infer__hf *h, const char *key, double v) { arrput(h->kv, infer_gguf_kv_f32(key, (float)v)); }
static void infer__hf_put_str(infer__hf *h, const char *key, const char *v) { arrput(h->kv, infer_gguf_kv_str(key, infer__hf_str(h, v))); }
static void infer__hf_put_bool(infer__hf *h, const char *key, int v) { arrput(h->kv, infer_gguf_kv_bool(key, v)); }

/* ---- reading files of the folder ---- */
static infer_status infer__hf_path(char *out, size_t size, const char *dir, const char *name, infer_error *err) {
    if ((size_t)snprintf(out, size, "%s/%s", dir, name) >= size) return infer__fail(err, INFER_ERR_ARG, "path '%.200s/%.100s' is too long", dir, name);
    return INFER_OK;
}
static int infer__hf_exists(const char *dir, const char *name) {
    char p[4096];
    struct stat st;
    return (size_t)snprintf(p, sizeof p, "%s/%s", dir, name) < sizeof p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* parse a JSON file of the folder into doc */
static infer_status infer__hf_read_json(infer__json_doc *doc, const char *dir, const char *name, infer_error *err) {
    char path[4096], jerr[200];
    infer__mapping m;
    memset(doc, 0, sizeof *doc);
    INFER__TRY(infer__hf_path(path, sizeof path, dir, name, err));
    INFER__TRY(infer__map_file(&m, path, err));
    int bad = infer__json_parse(doc, (const char *)m.addr, m.size, jerr, sizeof jerr);
    infer__unmap(&m);
    if (bad) return infer__fail(err, INFER_ERR_FORMAT, "%.100s: %s", name, jerr);
    if (doc->root->type != INFER__JSON_OBJECT) { infer__json_free(doc); return infer__fail(err, INFER_ERR_FORMAT, "%.100s: not a JSON object", name); }
    return INFER_OK;
}

/* ---- config.json ---- */

/* a config value: text_config first (multimodal checkpoints keep the language model's
 * settings there), then the top level; JSON null counts as absent */
static const infer__json *infer__hf_cfg(const infer__hf *h, const char *key) {
    const infer__json *v = h->text != h->cfg ? infer__json_get(h->text, key) : NULL;
    if (!v || v->type == INFER__JSON_NULL) v = infer__json_get(h->cfg, key);
    return v && v->type != INFER__JSON_NULL ? v : NULL;
}

/* rope settings moved from top-level keys (rope_theta, partial_rotary_factor, rope_scaling)
 * into one rope_parameters object in newer configs; look in both */
static const infer__json *infer__hf_rope_cfg(const infer__hf *h, const char *key) {
    const infer__json *v = infer__json_get(infer__hf_cfg(h, "rope_parameters"), key);
    if (!v) v = infer__json_get(infer__hf_cfg(h, "rope_scaling"), key);
    if (!v) v = infer__hf_cfg(h, key);
    return v && v->type != INFER__JSON_NULL ? v : NULL;
}

/* an integer hyper-parameter in [lo, hi]: 1 found, 0 absent, -1 malformed (message in err) */
static int infer__hf_int_v(const infer__json *v, const char *key, int64_t lo, int64_t hi, int64_t *out, infer_error *err) {
    if (!v) return 0;
    if (infer__json_int(v, out) < 0 || *out < lo || *out > hi) {
        infer__fail(err, INFER_ERR_FORMAT, "config.json: '%s' must be an integer in [%lld, %lld]", key, (long long)lo, (long long)hi);
        return -1;
    }
    return 1;
}
static int infer__hf_int(const infer__hf *h, const char *key, int64_t lo, int64_t hi, int64_t *out, infer_error *err) {
    return infer__hf_int_v(infer__hf_cfg(h, key), key, lo, hi, out, err);
}
static int infer__hf_num_v(const infer__json *v, const char *key, double *out, infer_error *err) {
    if (!v) return 0;
    if (infer__json_num(v, out) < 0 || !isfinite(*out)) {
        infer__fail(err, INFER_ERR_FORMAT, "config.json: '%s' must be a number", key);
        return -1;
    }
    return 1;
}
static infer_status infer__hf_need_int(const infer__hf *h, const char *key, int64_t lo, int64_t hi, int64_t *out, infer_error *err) {
    int r = infer__hf_int(h, key, lo, hi, out, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 0) return infer__fail(err, INFER_ERR_FORMAT, "config.json: missing '%s'", key);
    return INFER_OK;
}

/* copy an optional integer config value to a u32 GGUF key */
static infer_status infer__hf_opt_u32(infer__hf *h, const char *cfg_key, const char *gguf_suffix, infer_error *err) {
    int64_t v;
    int r = infer__hf_int(h, cfg_key, 0, UINT32_MAX, &v, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r) infer__hf_put_u32(h, infer__hf_akey(h, gguf_suffix), v);
    return INFER_OK;
}

/* architectures[0] -> the family (and BitNet with ReLU^2 -> BitNet's own "bitnet-b1.58") */
static infer_status infer__hf_find_arch(infer__hf *h, infer_error *err) {
    const char *name = infer__json_str(infer__json_at(infer__json_get(h->cfg, "architectures"), 0));
    if (!name) return infer__fail(err, INFER_ERR_FORMAT, "config.json: no \"architectures\" entry");
    for (size_t i = 0; i < sizeof infer__hf_archs / sizeof infer__hf_archs[0]; i++)
        if (strcmp(name, infer__hf_archs[i].hf) == 0) h->arch = &infer__hf_archs[i];
    if (!h->arch) return infer__fail(err, INFER_ERR_UNSUPPORTED, "config.json: architecture '%.64s' is not supported", name);
    const char *act = infer__json_str(infer__hf_cfg(h, "hidden_act"));
    const int relu2 = (h->arch->flags & INFER__HF_BITNET) && act && strcmp(act, "relu2") == 0;
    snprintf(h->arch_name, sizeof h->arch_name, "%s", relu2 ? "bitnet-b1.58" : h->arch->gguf);
    return INFER_OK;
}

/* rope_scaling: linear (llama) and yarn become keys; llama3 becomes the rope_freqs tensor */
static infer_status infer__hf_rope_scaling(infer__hf *h, infer_error *err) {
    const infer__json *rs = infer__hf_cfg(h, "rope_scaling");
    if (!rs) rs = infer__hf_cfg(h, "rope_parameters");
    const char *type = infer__json_str(infer__json_get(rs, "rope_type"));
    double factor, orig;
    if (!type) type = infer__json_str(infer__json_get(rs, "type"));
    int r = infer__hf_num_v(infer__json_get(rs, "factor"), "rope_scaling.factor", &factor, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (!type || r == 0) return INFER_OK;
    if (strcmp(type, "linear") == 0 && (h->arch->flags & INFER__HF_LLAMA_KEYS)) {
        infer__hf_put_str(h, infer__hf_akey(h, "rope.scaling.type"), "linear");
        infer__hf_put_f32(h, infer__hf_akey(h, "rope.scaling.factor"), factor);
    } else if (strcmp(type, "yarn") == 0) {
        if (infer__hf_num_v(infer__json_get(rs, "original_max_position_embeddings"), "rope_scaling.original_max_position_embeddings", &orig, err) != 1)
            return infer__fail(err, INFER_ERR_FORMAT, "config.json: yarn rope_scaling needs original_max_position_embeddings");
        infer__hf_put_str(h, infer__hf_akey(h, "rope.scaling.type"), "yarn");
        infer__hf_put_f32(h, infer__hf_akey(h, "rope.scaling.factor"), factor);
        infer__hf_put_u32(h, infer__hf_akey(h, "rope.scaling.original_context_length"), (int64_t)orig);
    }
    return INFER_OK;
}

/* qwen3.5's gated DeltaNet sizes, and the interleaved multi-axis rope (for text all axes
 * see the same position, so only the section sizes are recorded) */
static infer_status infer__hf_hybrid_keys(infer__hf *h, int64_t head_dim, infer_error *err) {
    int64_t kernel, interval = 4;
    double partial = 1.0;
    INFER__TRY(infer__hf_need_int(h, "linear_conv_kernel_dim", 1, 64, &kernel, err));
    INFER__TRY(infer__hf_need_int(h, "linear_key_head_dim", 1, 65536, &h->ssm_dk, err));
    INFER__TRY(infer__hf_need_int(h, "linear_num_key_heads", 1, 4096, &h->ssm_nk, err));
    INFER__TRY(infer__hf_need_int(h, "linear_num_value_heads", 1, 4096, &h->ssm_nv, err));
    INFER__TRY(infer__hf_need_int(h, "linear_value_head_dim", 1, 65536, &h->ssm_dv, err));
    if (h->ssm_nv % h->ssm_nk) return infer__fail(err, INFER_ERR_FORMAT, "config.json: %lld value heads are not a multiple of %lld key heads", (long long)h->ssm_nv, (long long)h->ssm_nk);
    if (infer__hf_int(h, "full_attention_interval", 1, 4096, &interval, err) < 0) return INFER_ERR_FORMAT;
    if (infer__hf_num_v(infer__hf_rope_cfg(h, "partial_rotary_factor"), "partial_rotary_factor", &partial, err) < 0) return INFER_ERR_FORMAT;
    infer__hf_put_u32(h, infer__hf_akey(h, "ssm.conv_kernel"), kernel);
    infer__hf_put_u32(h, infer__hf_akey(h, "ssm.state_size"), h->ssm_dk);
    infer__hf_put_u32(h, infer__hf_akey(h, "ssm.group_count"), h->ssm_nk);
    infer__hf_put_u32(h, infer__hf_akey(h, "ssm.time_step_rank"), h->ssm_nv);
    infer__hf_put_u32(h, infer__hf_akey(h, "ssm.inner_size"), h->ssm_nv * h->ssm_dv);
    infer__hf_put_u32(h, infer__hf_akey(h, "full_attention_interval"), interval);
    infer__hf_put_u32(h, infer__hf_akey(h, "rope.dimension_count"), (int64_t)(head_dim * partial));
    if (h->n_mtp) infer__hf_put_u32(h, infer__hf_akey(h, "nextn_predict_layers"), h->n_mtp);
    return INFER_OK;
}

/* rope.dimension_sections: mrope_section padded to 4 axes ([11, 11, 10, 0] when absent) */
static infer_status infer__hf_rope_sections(infer__hf *h, infer_error *err) {
    const infer__json *ms = infer__hf_rope_cfg(h, "mrope_section");
    int32_t *s = (int32_t *)infer__hf_keep(h->own, 4 * sizeof(int32_t));
    if (!s) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    if (!ms) { s[0] = 11; s[1] = 11; s[2] = 10; }
    for (uint32_t i = 0; ms && i < ms->len; i++) {
        int64_t v;
        if (i >= 4 || infer__hf_int_v(&ms->items[i], "mrope_section", 0, 65536, &v, err) != 1)
            return infer__fail(err, INFER_ERR_FORMAT, "config.json: mrope_section must be at most 4 small integers");
        s[i] = (int32_t)v;
    }
    arrput(h->kv, infer_gguf_kv_array(infer__hf_akey(h, "rope.dimension_sections"), INFER_GGUF_I32, 4, s));
    return INFER_OK;
}

/* the folder's name, for general.name */
static const char *infer__hf_basename(infer__hf *h) {
    char buf[256];
    size_t n = strlen(h->dir);
    while (n > 1 && h->dir[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && h->dir[b - 1] != '/') b--;
    snprintf(buf, sizeof buf, "%.*s", (int)(n - b), h->dir + b);
    return infer__hf_str(h, buf);
}

/* config.json -> `<arch>.*` keys, with the converter's names and order:
 *   num_hidden_layers         block_count (+ multi-token-prediction layers, qwen3.5)
 *   max_position_embeddings   context_length
 *   hidden_size               embedding_length
 *   intermediate_size         feed_forward_length
 *   num_attention_heads       attention.head_count
 *   num_key_value_heads       attention.head_count_kv
 *   rope_theta                rope.freq_base
 *   rms_norm_eps              attention.layer_norm_rms_epsilon
 *   num_experts(_per_tok)     expert_count, expert_used_count
 *   head_dim                  attention.key_length, attention.value_length
 * then each family's own keys. */
static infer_status infer__hf_params(infer__hf *h, infer_error *err) {
    int64_t n_embd, head_dim = 0;
    double f;
    INFER__TRY(infer__hf_need_int(h, "num_hidden_layers", 1, 4096, &h->n_layer, err));
    INFER__TRY(infer__hf_need_int(h, "hidden_size", 1, 1 << 24, &n_embd, err));
    INFER__TRY(infer__hf_need_int(h, "num_attention_heads", 1, 4096, &h->n_head, err));
    h->n_head_kv = h->n_head;
    if (infer__hf_int(h, "num_key_value_heads", 1, 4096, &h->n_head_kv, err) < 0) return INFER_ERR_FORMAT;
    if (infer__hf_int(h, "head_dim", 1, 65536, &head_dim, err) < 0) return INFER_ERR_FORMAT;
    if (h->n_mtp && infer__hf_int(h, "mtp_num_hidden_layers", 1, 64, &h->n_mtp, err) < 0) return INFER_ERR_FORMAT;   /* mtp.* tensors present */
    infer__hf_put_str(h, "general.architecture", h->arch_name);
    infer__hf_put_str(h, "general.type", "model");
    arrput(h->kv, infer_gguf_kv_str("general.name", infer__hf_basename(h)));
    infer__hf_put_u32(h, infer__hf_akey(h, "block_count"), h->n_layer + h->n_mtp);
    INFER__TRY(infer__hf_opt_u32(h, "max_position_embeddings", "context_length", err));
    infer__hf_put_u32(h, infer__hf_akey(h, "embedding_length"), n_embd);
    INFER__TRY(infer__hf_opt_u32(h, "intermediate_size", "feed_forward_length", err));
    infer__hf_put_u32(h, infer__hf_akey(h, "attention.head_count"), h->n_head);
    INFER__TRY(infer__hf_opt_u32(h, "num_key_value_heads", "attention.head_count_kv", err));
    int r = infer__hf_num_v(infer__hf_rope_cfg(h, "rope_theta"), "rope_theta", &f, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r) infer__hf_put_f32(h, infer__hf_akey(h, "rope.freq_base"), f);
    if ((r = infer__hf_num_v(infer__hf_cfg(h, "rms_norm_eps"), "rms_norm_eps", &f, err)) < 0) return INFER_ERR_FORMAT;
    if (r) infer__hf_put_f32(h, infer__hf_akey(h, "attention.layer_norm_rms_epsilon"), f);
    if (h->arch->flags & INFER__HF_HYBRID) INFER__TRY(infer__hf_rope_sections(h, err));
    if (h->arch->flags & INFER__HF_MOE) {
        const char *ek = infer__hf_cfg(h, "num_experts") ? "num_experts" : "num_local_experts";
        INFER__TRY(infer__hf_need_int(h, ek, 1, 65536, &h->n_expert, err));
        infer__hf_put_u32(h, infer__hf_akey(h, "expert_count"), h->n_expert);
        INFER__TRY(infer__hf_opt_u32(h, "num_experts_per_tok", "expert_used_count", err));
    }
    if (head_dim) {
        infer__hf_put_u32(h, infer__hf_akey(h, "attention.key_length"), head_dim);
        infer__hf_put_u32(h, infer__hf_akey(h, "attention.value_length"), head_dim);
    }
    if (!head_dim) head_dim = n_embd / h->n_head;
    if (h->arch->flags & INFER__HF_LLAMA_KEYS) {
        int64_t vocab;
        INFER__TRY(infer__hf_need_int(h, "vocab_size", 1, 1 << 24, &vocab, err));
        infer__hf_put_u32(h, infer__hf_akey(h, "vocab_size"), vocab);
        infer__hf_put_u32(h, infer__hf_akey(h, "rope.dimension_count"), head_dim);
    }
    INFER__TRY(infer__hf_rope_scaling(h, err));
    if (h->arch->flags & INFER__HF_MOE) {
        INFER__TRY(infer__hf_opt_u32(h, "moe_intermediate_size", "expert_feed_forward_length", err));
        INFER__TRY(infer__hf_opt_u32(h, "shared_expert_intermediate_size", "expert_shared_feed_forward_length", err));
    }
    if (h->arch->flags & INFER__HF_HYBRID) INFER__TRY(infer__hf_hybrid_keys(h, head_dim, err));
    if (h->arch->flags & INFER__HF_BITNET) {
        /* what the bitnet converter writes: linear scaling by 1 (no scaling) */
        infer__hf_put_str(h, infer__hf_akey(h, "rope.scaling.type"), "linear");
        infer__hf_put_f32(h, infer__hf_akey(h, "rope.scaling.factor"), 1.0);
    }
    return INFER_OK;
}

/* ---- the shards ---- */

/* HF name -> the name the tables below use: the prefixes of multimodal wrappers removed
 * (Qwen3.5's model.language_model., llava's language_model.model.); NULL for what the
 * converter drops (vision tower, projector, rotary caches) */
static const char *infer__hf_normalize(char *buf, size_t size, const char *name) {
    static const char *const skip[] = { "model.visual.", "visual.", "model.vision_tower.", "vision_tower.", "model.multi_modal_projector.",
                                        "multi_modal_projector.", "model.audio_tower.", "audio_tower." };
    static const char *const from[] = { "model.language_model.", "language_model.model.", "language_model.lm_head." };
    static const char *const to[] = { "model.", "model.", "lm_head." };
    if (strstr(name, "rotary_emb.inv_freq")) return NULL;
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) if (strncmp(name, skip[i], strlen(skip[i])) == 0) return NULL;
    for (size_t i = 0; i < sizeof from / sizeof from[0]; i++)
        if (strncmp(name, from[i], strlen(from[i])) == 0) {
            snprintf(buf, size, "%s%s", to[i], name + strlen(from[i]));
            return buf;
        }
    return name;
}

/* a shard's file name from the index must name a file inside the folder */
static int infer__hf_plain_name(const char *f) {
    return *f && !strchr(f, '/') && !strchr(f, '\\') && strcmp(f, ".") != 0 && strcmp(f, "..") != 0 && strlen(f) < 256;
}

static infer_status infer__hf_open_shard(infer__hf *h, const char *file, infer_error *err) {
    char path[4096];
    infer__mapping m;
    infer_safetensors st;
    if (!infer__hf_plain_name(file)) return infer__fail(err, INFER_ERR_FORMAT, "model.safetensors.index.json: shard name '%.100s' is not a plain file name", file);
    INFER__TRY(infer__hf_path(path, sizeof path, h->dir, file, err));
    INFER__TRY(infer__map_file(&m, path, err));
    arrput(h->own->maps, m);
    if (infer_safetensors_parse(&st, m.addr, m.size, err) != INFER_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return infer__fail(err, err->status, "%.100s: %s", file, msg);
    }
    uint8_t *done = (uint8_t *)infer__calloc((size_t)st.n_tensors + 1, 1);
    if (!done) { infer_safetensors_free(&st); return infer__fail(err, INFER_ERR_NOMEM, "out of memory"); }
    arrput(h->files, st);
    arrput(h->done, done);
    return INFER_OK;
}

/* index every tensor of every shard by its normalized name */
static infer_status infer__hf_index(infer__hf *h, infer_error *err) {
    char buf[512];
    sh_new_strdup(h->where);
    for (ptrdiff_t f = 0; f < arrlen(h->files); f++)
        for (int64_t i = 0; i < h->files[f].n_tensors; i++) {
            const char *name = infer__hf_normalize(buf, sizeof buf, h->files[f].tensors[i].name);
            if (!name) { h->done[f][i] = 1; continue; }
            if (shgeti(h->where, name) >= 0) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s' appears in two shards", name);
            shput(h->where, name, (int64_t)f << 32 | i);
            if (strncmp(name, "mtp.", 4) == 0 && (h->arch->flags & INFER__HF_HYBRID)) h->n_mtp = 1;
        }
    return INFER_OK;
}

/* model.safetensors.index.json ({"weight_map": {name: shard}}) or one model.safetensors */
static infer_status infer__hf_open_shards(infer__hf *h, infer_error *err) {
    if (!infer__hf_exists(h->dir, "model.safetensors.index.json")) {
        if (!infer__hf_exists(h->dir, "model.safetensors"))
            return infer__fail(err, INFER_ERR_IO, "'%.200s' has neither model.safetensors nor model.safetensors.index.json", h->dir);
        INFER__TRY(infer__hf_open_shard(h, "model.safetensors", err));
        return infer__hf_index(h, err);
    }
    infer__json_doc doc;
    struct { char *key; int value; } *files = NULL;
    INFER__TRY(infer__hf_read_json(&doc, h->dir, "model.safetensors.index.json", err));
    const infer__json *map = infer__json_get(doc.root, "weight_map");
    infer_status rc = INFER_OK;
    if (!map || map->type != INFER__JSON_OBJECT) rc = infer__fail(err, INFER_ERR_FORMAT, "model.safetensors.index.json: no weight_map object");
    for (uint32_t i = 0; rc == INFER_OK && i < map->len; i++) {
        const char *f = infer__json_str(&map->items[i]);
        if (!f) rc = infer__fail(err, INFER_ERR_FORMAT, "model.safetensors.index.json: weight_map['%.100s'] is not a file name", map->items[i].key);
        else if (shgeti(files, f) < 0) {
            const int index = (int)shlen(files);   /* the shard's index in h->files */
            shput(files, (char *)f, index);
            rc = infer__hf_open_shard(h, f, err);
        }
    }
    if (rc == INFER_OK) rc = infer__hf_index(h, err);
    /* every tensor the map names is in the shard it names */
    for (uint32_t i = 0; rc == INFER_OK && i < map->len; i++) {
        char buf[512];
        const char *name = infer__hf_normalize(buf, sizeof buf, map->items[i].key);
        ptrdiff_t at = name ? shgeti(h->where, name) : -1;
        if (name && (at < 0 || (h->where[at].value >> 32) != shget(files, (char *)map->items[i].str)))
            rc = infer__fail(err, INFER_ERR_FORMAT, "model.safetensors.index.json: tensor '%.100s' is not in %.100s", map->items[i].key, map->items[i].str);
    }
    shfree(files);
    infer__json_free(&doc);
    return rc;
}

/* a tensor by normalized name (NULL if absent); `take` marks it used */
static const infer_st_tensor *infer__hf_lookup(infer__hf *h, const char *name, int take) {
    ptrdiff_t at = shgeti(h->where, name);
    if (at < 0) return NULL;
    const int64_t v = h->where[at].value, f = v >> 32, i = v & 0xffffffff;
    if (take) h->done[f][i] = 1;
    return &h->files[f].tensors[i];
}

/* ---- >>hf-tensors: names, shapes and the converter's value transforms ----
 *
 * Names (N = layer; a trailing .weight or .bias carries over):
 *   model.embed_tokens                   token_embd
 *   model.norm                           output_norm
 *   lm_head                              output            (absent: tied to token_embd)
 *   model.layers.N.<infer__hf_layer[]>   blk.N.<...>
 *   mtp.layers.0.<infer__hf_layer[]>     blk.<n_layer>.<...>  (qwen3.5 multi-token prediction)
 *   mtp.fc, mtp.pre_fc_norm_embedding, mtp.pre_fc_norm_hidden, mtp.norm
 *                                        blk.<n_layer>.nextn.eh_proj, .enorm, .hnorm, .shared_head_norm
 *   mlp.experts.E.{gate,up,down}_proj    stacked: ffn_{gate,up,down}_exps, ne {in, out, n_expert}
 *   mlp.experts.gate_up_proj [E, 2F, D]  split into ffn_gate_exps and ffn_up_exps
 *   mlp.experts.down_proj [E, D, F]      ffn_down_exps
 *
 * Value transforms, and why the converter makes them:
 *   llama q_proj, k_proj  HF's rope rotates the halves (i, i + d/2) of each head, GGUF llama
 *                         rotates adjacent pairs (2i, 2i+1). Moving row i + j*d/2 of each head
 *                         to row 2i + j turns one into the other: q.k is unchanged.
 *   qwen3.5 norms         HF's RMSNorm computes (1 + w) * x_hat and stores w; GGUF stores 1 + w
 *                         (every norm but the gated linear_attn.norm).
 *   A_log                 the DeltaNet decay is a = -exp(A_log); GGUF stores a.
 *   value heads           HF groups DeltaNet value heads by key head (h = k*r + i, r = n_v/n_k);
 *                         qwen35 GGUFs tile them (j = i*n_k + k) so value head j reads key head
 *                         j % n_k. Every per-value-head tensor is reordered: the v rows of
 *                         in_proj_qkv and conv1d, in_proj_z/a/b, dt_bias, A_log, and the input
 *                         columns of out_proj.
 *   conv1d                [C, 1, K] squeezed to [C, K].
 *   BitNet                Microsoft's checkpoints pack 4 ternary rows per byte: row r + i*R/4
 *                         is bits 2i..2i+1 of byte row r, value = code - 1, and store the scale
 *                         inverted: W = (code - 1) / weight_scale. Float (1bitLLM) checkpoints
 *                         are ternarized with their absmean s: W' = clamp(round(W/s), -1, 1) s.
 *   FP8 (E4M3)            W = fp8 * weight_scale_inv, the scale broadcast over blocks (128x128).
 * Norms, biases and other 1-D tensors, routers, conv1d, dt and A become F32, as in the
 * converter; the other tensors keep their dtype (F32, F16, BF16; FP8 becomes BF16).
 * Arithmetic on a 16-bit source (+1, -exp) is rounded back to that dtype before widening to
 * F32, as the converter's tensor arithmetic in the source dtype does.
 */
typedef enum infer__hf_op {
    INFER__HF_COPY,      /* values unchanged */
    INFER__HF_Q,         /* attention q: llama permutes per query head */
    INFER__HF_K,         /* attention k: llama permutes per key head */
    INFER__HF_NORM,      /* an RMSNorm weight: F32, +1 where HF stores w - 1 */
    INFER__HF_SMALL,     /* F32 as it is: routers, the gated norm */
    INFER__HF_V_ROWS,    /* rows grouped per value head -> tiled order */
    INFER__HF_QKV_ROWS,  /* [q | k | v] rows (or conv channels): only the v part reordered */
    INFER__HF_V_COLS,    /* input columns grouped per value head -> tiled order */
    INFER__HF_CONV,      /* conv1d: squeezed, F32, v channels reordered */
    INFER__HF_DT,        /* dt_bias: F32, reordered */
    INFER__HF_A_LOG      /* -exp(A_log): F32, reordered */
} infer__hf_op;

typedef struct infer__hf_name { const char *hf, *gguf; uint8_t op, proj; } infer__hf_name;   /* proj: a BitNet ternary projection */

static const infer__hf_name infer__hf_layer[] = {
    { "input_layernorm", "attn_norm", INFER__HF_NORM, 0 },
    { "post_attention_layernorm", "ffn_norm", INFER__HF_NORM, 0 },   /* hybrid families: post_attention_norm */
    { "self_attn.q_proj", "attn_q", INFER__HF_Q, 1 },
    { "self_attn.k_proj", "attn_k", INFER__HF_K, 1 },
    { "self_attn.v_proj", "attn_v", INFER__HF_COPY, 1 },
    { "self_attn.o_proj", "attn_output", INFER__HF_COPY, 1 },
    { "self_attn.q_norm", "attn_q_norm", INFER__HF_NORM, 0 },
    { "self_attn.k_norm", "attn_k_norm", INFER__HF_NORM, 0 },
    { "self_attn.attn_sub_norm", "attn_sub_norm", INFER__HF_NORM, 0 },
    { "mlp.gate_proj", "ffn_gate", INFER__HF_COPY, 1 },
    { "mlp.up_proj", "ffn_up", INFER__HF_COPY, 1 },
    { "mlp.down_proj", "ffn_down", INFER__HF_COPY, 1 },
    { "mlp.ffn_sub_norm", "ffn_sub_norm", INFER__HF_NORM, 0 },
    { "mlp.gate", "ffn_gate_inp", INFER__HF_SMALL, 0 },
    { "mlp.shared_expert.gate_proj", "ffn_gate_shexp", INFER__HF_COPY, 0 },
    { "mlp.shared_expert.up_proj", "ffn_up_shexp", INFER__HF_COPY, 0 },
    { "mlp.shared_expert.down_proj", "ffn_down_shexp", INFER__HF_COPY, 0 },
    { "mlp.shared_expert_gate", "ffn_gate_inp_shexp", INFER__HF_SMALL, 0 },
    { "linear_attn.in_proj_qkv", "attn_qkv", INFER__HF_QKV_ROWS, 0 },
    { "linear_attn.in_proj_z", "attn_gate", INFER__HF_V_ROWS, 0 },
    { "linear_attn.in_proj_b", "ssm_beta", INFER__HF_V_ROWS, 0 },
    { "linear_attn.in_proj_a", "ssm_alpha", INFER__HF_V_ROWS, 0 },
    { "linear_attn.conv1d", "ssm_conv1d", INFER__HF_CONV, 0 },
    { "linear_attn.dt_bias", "ssm_dt.bias", INFER__HF_DT, 0 },        /* no .weight in either name */
    { "linear_attn.A_log", "ssm_a", INFER__HF_A_LOG, 0 },
    { "linear_attn.norm", "ssm_norm", INFER__HF_SMALL, 0 },          /* gated norm: plain w */
    { "linear_attn.out_proj", "ssm_out", INFER__HF_V_COLS, 0 },
};

static const infer__hf_name infer__hf_global[] = {
    { "model.embed_tokens", "token_embd", INFER__HF_COPY, 0 },
    { "model.norm", "output_norm", INFER__HF_NORM, 0 },
    { "lm_head", "output", INFER__HF_COPY, 0 },
};

static const infer__hf_name infer__hf_mtp[] = {     /* GGUF names under blk.<n_layer>. */
    { "mtp.fc", "nextn.eh_proj", INFER__HF_COPY, 0 },
    { "mtp.pre_fc_norm_embedding", "nextn.enorm", INFER__HF_NORM, 0 },
    { "mtp.pre_fc_norm_hidden", "nextn.hnorm", INFER__HF_NORM, 0 },
    { "mtp.norm", "nextn.shared_head_norm", INFER__HF_NORM, 0 },
};

/* FP8 E4M3 ("fn"): sign | 4-bit exponent (bias 7) | 3-bit mantissa; no infinities, S.1111.111 is nan */
static float infer__e4m3_to_f32(uint8_t b) {
    const int e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7) return NAN;
    const float v = e == 0 ? ldexpf((float)m, -9) : ldexpf((float)(8 + m), e - 10);   /* m/8 * 2^-6, (1 + m/8) * 2^(e-7) */
    return (b & 0x80) ? -v : v;
}

/* element i of a small float tensor (scales) */
static float infer__hf_scalar(const infer_st_tensor *t, int64_t i) {
    const uint8_t *p = (const uint8_t *)t->data + (size_t)i * (size_t)t->dtype_size;
    uint16_t u;
    float f;
    if (strcmp(t->dtype, "F32") == 0) { memcpy(&f, p, 4); return f; }
    memcpy(&u, p, 2);
    return strcmp(t->dtype, "BF16") == 0 ? infer__bf16_to_fp32(u) : infer__fp16_to_fp32(u);
}

static int infer__hf_is_float(const char *dtype) { return !strcmp(dtype, "F32") || !strcmp(dtype, "F16") || !strcmp(dtype, "BF16"); }
static infer_type infer__hf_gguf_type(const char *dtype) {
    return !strcmp(dtype, "F16") ? INFER_TYPE_F16 : !strcmp(dtype, "BF16") ? INFER_TYPE_BF16 : INFER_TYPE_F32;
}
static float infer__hf_round_as(float v, const char *dtype) {
    if (!strcmp(dtype, "BF16")) return infer__bf16_to_fp32(infer__fp32_to_bf16(v));
    if (!strcmp(dtype, "F16")) return infer__fp16_to_fp32(infer__fp32_to_fp16(v));
    return v;
}

/* BitNet's packed weight: rows4 x cols bytes, 4 rows per byte -> [4*rows4, cols] floats */
static infer_status infer__hf_unpack_bitnet(const infer_st_tensor *t, const infer_st_tensor *scale, float *out, infer_error *err) {
    if (t->n_dims != 2 || scale->nbytes == 0 || !infer__hf_is_float(scale->dtype))
        return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s': a packed BitNet weight needs 2 dimensions and a float weight_scale", t->name);
    const float ws = infer__hf_scalar(scale, 0);
    if (!(ws != 0) || !isfinite(ws)) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s': weight_scale %g is not a usable scale", t->name, ws);
    const int64_t rows4 = t->shape[0], cols = t->shape[1];
    const uint8_t *p = (const uint8_t *)t->data;
    for (int64_t i = 0; i < 4; i++)
        for (int64_t r = 0; r < rows4; r++)
            for (int64_t c = 0; c < cols; c++)
                out[((i * rows4) + r) * cols + c] = (float)((p[r * cols + c] >> (2 * i) & 3) - 1) / ws;
    return INFER_OK;
}

/* FP8 weight times its block scales (scale: [ceil(rows/b0), ceil(cols/b1)]) */
static infer_status infer__hf_dequant_fp8(const infer__hf *h, const infer_st_tensor *t, const infer_st_tensor *scale, float *out, infer_error *err) {
    const int64_t b0 = h->fp8_block[0], b1 = h->fp8_block[1];
    if (t->n_dims != 2 || scale->n_dims != 2 || scale->shape[0] != (t->shape[0] + b0 - 1) / b0 || scale->shape[1] != (t->shape[1] + b1 - 1) / b1 ||
        !infer__hf_is_float(scale->dtype))
        return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s': weight_scale_inv does not match %lldx%lld blocks", t->name, (long long)b0, (long long)b1);
    const int64_t rows = t->shape[0], cols = t->shape[1];
    const uint8_t *p = (const uint8_t *)t->data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            out[r * cols + c] = infer__e4m3_to_f32(p[r * cols + c]) * infer__hf_scalar(scale, (r / b0) * scale->shape[1] + c / b1);
    return INFER_OK;
}

/* the n values of t as floats */
static infer_status infer__hf_decode(const infer__hf *h, const infer_st_tensor *t, const infer_st_tensor *scale, float *out, int64_t n, infer_error *err) {
    const uint8_t *p = (const uint8_t *)t->data;
    uint16_t u;
    if (!strcmp(t->dtype, "F32")) { memcpy(out, p, (size_t)n * 4); return INFER_OK; }
    if (!strcmp(t->dtype, "BF16")) { for (int64_t i = 0; i < n; i++) { memcpy(&u, p + 2 * i, 2); out[i] = infer__bf16_to_fp32(u); } return INFER_OK; }
    if (!strcmp(t->dtype, "F16")) { for (int64_t i = 0; i < n; i++) { memcpy(&u, p + 2 * i, 2); out[i] = infer__fp16_to_fp32(u); } return INFER_OK; }
    if (!strcmp(t->dtype, "U8") && scale) return infer__hf_unpack_bitnet(t, scale, out, err);
    if (!strcmp(t->dtype, "F8_E4M3") && scale) return infer__hf_dequant_fp8(h, t, scale, out, err);
    if (!strcmp(t->dtype, "F8_E4M3")) return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%.100s': FP8 weights need block scales (weight_scale_inv)", t->name);
    return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%.100s': dtype %s is not supported", t->name, t->dtype);
}

/* floats -> the output type's bytes (F32, F16 or BF16) */
static void infer__hf_encode(const float *x, void *dst, int64_t n, infer_type ty) {
    uint16_t *o = (uint16_t *)dst;
    if (ty == INFER_TYPE_F32) { if ((const void *)x != dst) memcpy(dst, x, (size_t)n * 4); return; }
    for (int64_t i = 0; i < n; i++) o[i] = ty == INFER_TYPE_BF16 ? infer__fp32_to_bf16(x[i]) : infer__fp32_to_fp16(x[i]);
}

/* the converter's absmean ternarization (float BitNet checkpoints):
 * s = max(mean|W|, 1e-5), W' = clamp(round(W/s), -1, 1) * s, in the source dtype */
static void infer__hf_ternarize(float *w, int64_t n, const char *dtype) {
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += fabs((double)w[i]);
    float s = n ? (float)(sum / (double)n) : 0.0f;
    if (!(s >= 1e-5f)) s = 1e-5f;
    const float is = 1.0f / s;
    for (int64_t i = 0; i < n; i++) {
        float q = rintf(w[i] * is);                 /* round half to even, like torch.round */
        q = q > 1 ? 1 : q < -1 ? -1 : q;
        w[i] = infer__hf_round_as(q / is, dtype);
    }
}

/* tiled value-head order: GGUF head j holds HF head (j % n_k) * (n_v / n_k) + j / n_k */
static int64_t infer__hf_vhead(const infer__hf *h, int64_t j) { return (j % h->ssm_nk) * (h->ssm_nv / h->ssm_nk) + j / h->ssm_nk; }

static int infer__hf_reorders_v(const infer__hf *h) { return (h->arch->flags & INFER__HF_HYBRID) && h->ssm_nk != h->ssm_nv; }

/* The source row of every destination row, or *out = NULL when the op keeps the order.
 * `rows` is the outermost dimension (the element count of a 1-D tensor). */
static infer_status infer__hf_row_perm(const infer__hf *h, infer__hf_op op, const char *name, int64_t rows, int64_t **out, infer_error *err) {
    int64_t first = 0, heads = 0, hd;
    *out = NULL;
    if ((op == INFER__HF_Q || op == INFER__HF_K) && (h->arch->flags & INFER__HF_PERMUTE_QK)) {
        heads = op == INFER__HF_Q ? h->n_head : h->n_head_kv;
        if (rows % (2 * heads)) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s': %lld rows are not %lld heads of even size", name, (long long)rows, (long long)heads);
    } else if (infer__hf_reorders_v(h) && (op == INFER__HF_V_ROWS || op == INFER__HF_DT || op == INFER__HF_A_LOG)) {
        heads = h->ssm_nv;
        if (rows % heads) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s': %lld rows are not %lld value heads", name, (long long)rows, (long long)heads);
    } else if (infer__hf_reorders_v(h) && (op == INFER__HF_QKV_ROWS || op == INFER__HF_CONV)) {
        first = 2 * h->ssm_nk * h->ssm_dk;
        heads = h->ssm_nv;
        if (rows != first + h->ssm_nv * h->ssm_dv)
            return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s': %lld rows, expected q, k and v: 2*%lld*%lld + %lld*%lld", name, (long long)rows,
                               (long long)h->ssm_nk, (long long)h->ssm_dk, (long long)h->ssm_nv, (long long)h->ssm_dv);
    } else return INFER_OK;
    int64_t *p = (int64_t *)infer__calloc((size_t)rows, sizeof(int64_t));
    if (!p) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (int64_t r = 0; r < first; r++) p[r] = r;
    hd = (rows - first) / heads;
    for (int64_t j = 0; j < heads; j++)
        for (int64_t i = 0; i < hd; i++) {
            if (op == INFER__HF_Q || op == INFER__HF_K)   /* row 2a + b of the head <- row a + b*hd/2 */
                p[j * hd + i] = j * hd + (i % 2) * (hd / 2) + i / 2;
            else
                p[first + j * hd + i] = first + infer__hf_vhead(h, j) * hd + i;
        }
    *out = p;
    return INFER_OK;
}

static void infer__hf_permute_rows(uint8_t *dst, const uint8_t *src, const int64_t *perm, int64_t rows, size_t row_bytes) {
    for (int64_t r = 0; r < rows; r++) memcpy(dst + (size_t)r * row_bytes, src + (size_t)perm[r] * row_bytes, row_bytes);
}

/* out_proj: in each row, the column block of value head j comes from head vhead(j) */
static void infer__hf_permute_vcols(const infer__hf *h, uint8_t *dst, const uint8_t *src, int64_t rows, int64_t cols, size_t es) {
    const int64_t d = cols / h->ssm_nv;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < h->ssm_nv; j++)
            memcpy(dst + (size_t)(r * cols + j * d) * es, src + (size_t)(r * cols + infer__hf_vhead(h, j) * d) * es, (size_t)d * es);
}

static infer_status infer__hf_push(infer__hf *h, const char *gguf_name, infer_type ty, const int64_t *dims, int nd, const void *data, size_t nbytes, infer_error *err) {
    infer_tensor t;
    memset(&t, 0, sizeof t);
    if (strlen(gguf_name) >= 64) return infer__fail(err, INFER_ERR_FORMAT, "GGUF tensor name '%s' is longer than 63 bytes", gguf_name);
    t.name = infer__hf_str(h, gguf_name);
    t.type = ty;
    t.n_dims = nd;
    for (int d = 0; d < INFER_MAX_DIMS; d++) t.ne[d] = d < nd ? dims[nd - 1 - d] : 1;   /* PyTorch order reversed */
    t.data = data;
    t.nbytes = nbytes;
    t.scale = 1.0f;
    arrput(h->tensors, t);
    return INFER_OK;
}

/* the companion of a weight: BitNet's ".weight_scale" or FP8's ".weight_scale_inv" */
static const infer_st_tensor *infer__hf_companion(infer__hf *h, const char *name, const char *suffix) {
    char n[600];
    snprintf(n, sizeof n, "%s%s", name, suffix);
    return infer__hf_lookup(h, n, 1);
}

/* the n values of t (named `name`) as type ty in dst: a plain copy when nothing changes,
 * else decoded to floats, the op's arithmetic or BitNet's ternarization applied, encoded */
static infer_status infer__hf_fill(infer__hf *h, const char *name, const infer_st_tensor *t, infer__hf_op op, int proj,
                                   infer_type ty, int64_t n, void *dst, infer_error *err) {
    const infer_st_tensor *scale = NULL;
    if (!strcmp(t->dtype, "U8")) scale = infer__hf_companion(h, name, "_scale");
    if (!strcmp(t->dtype, "F8_E4M3")) scale = infer__hf_companion(h, name, "_scale_inv");
    const int plus1 = op == INFER__HF_NORM && (h->arch->flags & INFER__HF_NORM_PLUS1);
    const int tern = proj && (h->arch->flags & INFER__HF_BITNET) && infer__hf_is_float(t->dtype);
    if (infer__hf_is_float(t->dtype) && !plus1 && !tern && op != INFER__HF_A_LOG && ty == infer__hf_gguf_type(t->dtype)) {
        memcpy(dst, t->data, t->nbytes);
        return INFER_OK;
    }
    float *f = ty == INFER_TYPE_F32 ? (float *)dst : (float *)infer__calloc((size_t)n, sizeof(float));
    if (!f) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    infer_status rc = infer__hf_decode(h, t, scale, f, n, err);
    for (int64_t i = 0; rc == INFER_OK && i < n && (plus1 || op == INFER__HF_A_LOG); i++)
        f[i] = infer__hf_round_as(plus1 ? f[i] + 1.0f : -expf(f[i]), t->dtype);
    if (rc == INFER_OK && tern) infer__hf_ternarize(f, n, t->dtype);
    if (rc == INFER_OK) infer__hf_encode(f, dst, n, ty);
    if ((void *)f != dst) INFER_FREE(f);
    return rc;
}

/* One GGUF tensor from one HF tensor: zero-copy when nothing changes, else an owned copy */
static infer_status infer__hf_emit(infer__hf *h, const char *gguf_name, const char *name, const infer_st_tensor *t, infer__hf_op op, int proj, infer_error *err) {
    int64_t dims[INFER_ST_MAX_DIMS], n = 1, *perm = NULL;
    int nd = t->n_dims;
    const int packed = !strcmp(t->dtype, "U8"), fp8 = !strcmp(t->dtype, "F8_E4M3");
    if (!infer__hf_is_float(t->dtype) && !packed && !fp8)
        return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%.100s': dtype %s is not supported", name, t->dtype);
    memcpy(dims, t->shape, sizeof dims);
    if (nd == 0) { nd = 1; dims[0] = 1; }
    if (packed) dims[0] *= 4;
    if (op == INFER__HF_CONV && nd == 3 && dims[1] == 1) { dims[1] = dims[2]; nd = 2; }
    if (nd > INFER_MAX_DIMS || (op == INFER__HF_CONV && nd != 2)) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s' has %d dimensions", name, t->n_dims);
    for (int d = 0; d < nd; d++) n *= dims[d];
    const int small = nd == 1 || op == INFER__HF_NORM || op == INFER__HF_SMALL || op == INFER__HF_CONV || op == INFER__HF_DT || op == INFER__HF_A_LOG;
    const infer_type ty = small || packed ? INFER_TYPE_F32 : fp8 ? INFER_TYPE_BF16 : infer__hf_gguf_type(t->dtype);
    const size_t es = ty == INFER_TYPE_F32 ? 4 : 2, nbytes = (size_t)n * es;
    const int plus1 = op == INFER__HF_NORM && (h->arch->flags & INFER__HF_NORM_PLUS1);
    const int tern = proj && (h->arch->flags & INFER__HF_BITNET);
    const int vcols = op == INFER__HF_V_COLS && infer__hf_reorders_v(h);
    INFER__TRY(infer__hf_row_perm(h, op, gguf_name, dims[0], &perm, err));
    if (vcols && dims[nd - 1] != h->ssm_nv * h->ssm_dv) {
        INFER_FREE(perm);
        return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s': %lld columns are not %lld value heads of %lld", gguf_name, (long long)dims[nd - 1], (long long)h->ssm_nv, (long long)h->ssm_dv);
    }
    const int same = !plus1 && !tern && op != INFER__HF_A_LOG && !perm && !vcols && ty == infer__hf_gguf_type(t->dtype) && infer__hf_is_float(t->dtype);
    if (same && (uintptr_t)t->data % es == 0) return infer__hf_push(h, gguf_name, ty, dims, nd, t->data, nbytes, err);
    uint8_t *buf = (uint8_t *)infer__hf_keep(h->own, nbytes), *tmp = NULL;
    infer_status rc = buf ? infer__hf_fill(h, name, t, op, proj, ty, n, buf, err) : infer__fail(err, INFER_ERR_NOMEM, "out of memory for tensor '%s'", gguf_name);
    if (rc == INFER_OK && (perm || vcols)) {
        tmp = (uint8_t *)INFER_MALLOC(nbytes ? nbytes : 1);
        if (!tmp) rc = infer__fail(err, INFER_ERR_NOMEM, "out of memory for tensor '%s'", gguf_name);
        else {
            memcpy(tmp, buf, nbytes);
            if (perm) infer__hf_permute_rows(buf, tmp, perm, dims[0], nbytes / (size_t)(dims[0] ? dims[0] : 1));
            else infer__hf_permute_vcols(h, buf, tmp, n / dims[nd - 1], dims[nd - 1], es);
        }
    }
    INFER_FREE(tmp);
    INFER_FREE(perm);
    if (rc == INFER_OK) rc = infer__hf_push(h, gguf_name, ty, dims, nd, buf, nbytes, err);
    return rc;
}

/* <prefix>mlp.experts.E.<proj>.weight for E = 0..n_expert-1 -> blk.B.ffn_<gate|up|down>_exps,
 * ne {in, out, n_expert}: expert e is the e-th [out, in] slab */
static infer_status infer__hf_stack_experts(infer__hf *h, const char *prefix, int64_t blk, const char *proj, infer_error *err) {
    char name[600], gg[96];
    const infer_st_tensor *t0 = NULL;
    uint8_t *buf = NULL;
    int64_t dims[3] = { h->n_expert, 0, 0 };
    size_t each = 0;
    infer_type ty = INFER_TYPE_F32;
    snprintf(gg, sizeof gg, "blk.%lld.ffn_%.*s_exps.weight", (long long)blk, (int)(strlen(proj) - 5), proj);   /* "gate_proj" -> "gate" */
    for (int64_t e = 0; e < h->n_expert; e++) {
        snprintf(name, sizeof name, "%smlp.experts.%lld.%s.weight", prefix, (long long)e, proj);
        const infer_st_tensor *t = infer__hf_lookup(h, name, 1);
        if (!t) return infer__fail(err, INFER_ERR_FORMAT, "missing expert tensor '%.100s' (config.json says %lld experts)", name, (long long)h->n_expert);
        if (!t0) {
            const int packed = !strcmp(t->dtype, "U8");
            if (t->n_dims != 2) return infer__fail(err, INFER_ERR_FORMAT, "expert tensor '%.100s' is not 2-D", name);
            t0 = t;
            ty = packed ? INFER_TYPE_F32 : !strcmp(t->dtype, "F8_E4M3") ? INFER_TYPE_BF16 : infer__hf_gguf_type(t->dtype);
            dims[1] = t->shape[0] * (packed ? 4 : 1);
            dims[2] = t->shape[1];
            each = (size_t)(dims[1] * dims[2]) * (ty == INFER_TYPE_F32 ? 4 : 2);
            if (!(buf = (uint8_t *)infer__hf_keep(h->own, each * (size_t)h->n_expert))) return infer__fail(err, INFER_ERR_NOMEM, "out of memory for '%s'", gg);
        } else if (strcmp(t->dtype, t0->dtype) || t->n_dims != 2 || t->shape[0] != t0->shape[0] || t->shape[1] != t0->shape[1])
            return infer__fail(err, INFER_ERR_FORMAT, "expert tensor '%.100s' differs in dtype or shape from expert 0", name);
        if (!infer__hf_is_float(t->dtype) && strcmp(t->dtype, "U8") && strcmp(t->dtype, "F8_E4M3"))
            return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%.100s': dtype %s is not supported", name, t->dtype);
        INFER__TRY(infer__hf_fill(h, name, t, INFER__HF_COPY, 0, ty, dims[1] * dims[2], buf + each * (size_t)e, err));
    }
    return infer__hf_push(h, gg, ty, dims, 3, buf, each * (size_t)h->n_expert, err);
}

/* fused experts (newer checkpoints): gate_up_proj [E, 2F, D], rows [0, F) of each expert
 * are the gate projection and rows [F, 2F) the up projection */
static infer_status infer__hf_split_gate_up(infer__hf *h, const char *name, const infer_st_tensor *t, int64_t blk, infer_error *err) {
    char gg[96], gu[96];
    if (t->n_dims != 3 || t->shape[1] % 2 || !infer__hf_is_float(t->dtype))
        return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s': expected a float [experts, 2*ff, n_embd] tensor", name);
    const int64_t E = t->shape[0], F = t->shape[1] / 2, D = t->shape[2], dims[3] = { E, F, D };
    const size_t half = (size_t)(F * D) * (size_t)t->dtype_size;
    uint8_t *gate = (uint8_t *)infer__hf_keep(h->own, half * (size_t)E), *up = (uint8_t *)infer__hf_keep(h->own, half * (size_t)E);
    const uint8_t *src = (const uint8_t *)t->data;
    if (!gate || !up) return infer__fail(err, INFER_ERR_NOMEM, "out of memory for '%.100s'", name);
    for (int64_t e = 0; e < E; e++) {
        memcpy(gate + half * (size_t)e, src + 2 * half * (size_t)e, half);
        memcpy(up + half * (size_t)e, src + 2 * half * (size_t)e + half, half);
    }
    snprintf(gg, sizeof gg, "blk.%lld.ffn_gate_exps.weight", (long long)blk);
    snprintf(gu, sizeof gu, "blk.%lld.ffn_up_exps.weight", (long long)blk);
    INFER__TRY(infer__hf_push(h, gg, infer__hf_gguf_type(t->dtype), dims, 3, gate, half * (size_t)E, err));
    return infer__hf_push(h, gu, infer__hf_gguf_type(t->dtype), dims, 3, up, half * (size_t)E, err);
}

/* the part after "mlp.experts." */
static infer_status infer__hf_map_experts(infer__hf *h, const char *name, const char *prefix, const char *x, int64_t blk, const infer_st_tensor *t, infer_error *err) {
    static const char *const projs[] = { "gate_proj", "up_proj", "down_proj" };
    char gg[96];
    if (!(h->arch->flags & INFER__HF_MOE)) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s': experts in a %s model", name, h->arch_name);
    if (*x >= '0' && *x <= '9') {
        const char *dot = strchr(x, '.');
        for (int k = 0; dot && k < 3; k++)
            if (strncmp(dot + 1, projs[k], strlen(projs[k])) == 0 && strcmp(dot + 1 + strlen(projs[k]), ".weight") == 0)
                return infer__hf_stack_experts(h, prefix, blk, projs[k], err);
    } else if (!strcmp(x, "gate_up_proj") || !strcmp(x, "gate_up_proj.weight")) {
        return infer__hf_split_gate_up(h, name, t, blk, err);
    } else if (!strcmp(x, "down_proj") || !strcmp(x, "down_proj.weight")) {
        snprintf(gg, sizeof gg, "blk.%lld.ffn_down_exps.weight", (long long)blk);
        return infer__hf_emit(h, gg, name, t, INFER__HF_COPY, 0, err);
    }
    return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%.100s' has no GGUF name", name);
}

/* "x.weight" -> base "x", suffix ".weight" (also ".bias"; anything else: no suffix) */
static const char *infer__hf_split_suffix(const char *s, char *base, size_t size) {
    static const char *const suffixes[] = { ".weight", ".bias" };
    size_t n = strlen(s);
    for (int k = 0; k < 2; k++) {
        size_t l = strlen(suffixes[k]);
        if (n > l && strcmp(s + n - l, suffixes[k]) == 0) { snprintf(base, size, "%.*s", (int)(n - l), s); return suffixes[k]; }
    }
    snprintf(base, size, "%s", s);
    return "";
}

static const infer__hf_name *infer__hf_find_name(const infer__hf_name *table, size_t n, const char *base) {
    for (size_t i = 0; i < n; i++) if (strcmp(table[i].hf, base) == 0) return &table[i];
    return NULL;
}

/* prefix "model.layers.N." (or "mtp.layers.L."), GGUF block blk */
static infer_status infer__hf_map_layer(infer__hf *h, const char *name, size_t prefix_len, int64_t blk, const infer_st_tensor *t, infer_error *err) {
    char prefix[128], base[256], gg[160];
    const char *rest = name + prefix_len;
    snprintf(prefix, sizeof prefix, "%.*s", (int)prefix_len, name);
    if (strncmp(rest, "mlp.experts.", 12) == 0) return infer__hf_map_experts(h, name, prefix, rest + 12, blk, t, err);
    const char *suffix = infer__hf_split_suffix(rest, base, sizeof base);
    const infer__hf_name *e = infer__hf_find_name(infer__hf_layer, sizeof infer__hf_layer / sizeof infer__hf_layer[0], base);
    if (!e) return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%.100s' has no GGUF name for %s", name, h->arch_name);
    const char *g = (h->arch->flags & INFER__HF_HYBRID) && !strcmp(e->gguf, "ffn_norm") ? "post_attention_norm" : e->gguf;
    snprintf(gg, sizeof gg, "blk.%lld.%s%s", (long long)blk, g, suffix);
    return infer__hf_emit(h, gg, name, t, (infer__hf_op)e->op, e->proj, err);
}

static infer_status infer__hf_map(infer__hf *h, const char *name, const infer_st_tensor *t, infer_error *err) {
    static const char *const prefixes[] = { "model.layers.", "mtp.layers." };
    char base[256], gg[160];
    for (int k = 0; k < 2; k++) {
        const size_t pl = strlen(prefixes[k]);
        if (strncmp(name, prefixes[k], pl) != 0 || (k == 1 && !h->n_mtp)) continue;
        const char *p = name + pl;
        int64_t l = 0;
        while (*p >= '0' && *p <= '9' && l < (1 << 20)) l = l * 10 + (*p++ - '0');
        if (p == name + pl || *p != '.' || l >= (k ? h->n_mtp : h->n_layer))
            return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s': bad layer index (the model has %lld)", name, (long long)(k ? h->n_mtp : h->n_layer));
        return infer__hf_map_layer(h, name, (size_t)(p + 1 - name), k ? h->n_layer + l : l, t, err);
    }
    const char *suffix = infer__hf_split_suffix(name, base, sizeof base);
    const infer__hf_name *e = infer__hf_find_name(infer__hf_global, sizeof infer__hf_global / sizeof infer__hf_global[0], base);
    if (e) {
        snprintf(gg, sizeof gg, "%s%s", e->gguf, suffix);
        return infer__hf_emit(h, gg, name, t, (infer__hf_op)e->op, 0, err);
    }
    if (h->n_mtp && (e = infer__hf_find_name(infer__hf_mtp, sizeof infer__hf_mtp / sizeof infer__hf_mtp[0], base)) != NULL) {
        snprintf(gg, sizeof gg, "blk.%lld.%s%s", (long long)h->n_layer, e->gguf, suffix);
        return infer__hf_emit(h, gg, name, t, (infer__hf_op)e->op, 0, err);
    }
    return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%.100s' has no GGUF name for %s", name, h->arch_name);
}

static int infer__hf_ends_with(const char *s, const char *end) {
    size_t n = strlen(s), m = strlen(end);
    return n >= m && strcmp(s + n - m, end) == 0;
}

/* every tensor of every shard, in file order; scales are taken by their weights */
static infer_status infer__hf_tensors(infer__hf *h, infer_error *err) {
    char buf[512];
    for (int pass = 0; pass < 2; pass++)
        for (ptrdiff_t f = 0; f < arrlen(h->files); f++)
            for (int64_t i = 0; i < h->files[f].n_tensors; i++) {
                if (h->done[f][i]) continue;
                const infer_st_tensor *t = &h->files[f].tensors[i];
                const char *name = infer__hf_normalize(buf, sizeof buf, t->name);
                if (pass == 1) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%.100s' has no use (a scale without its weight?)", name);
                if (infer__hf_ends_with(name, ".weight_scale") || infer__hf_ends_with(name, ".weight_scale_inv")) continue;
                h->done[f][i] = 1;
                if (infer__hf_ends_with(name, ".input_scale")) continue;   /* FP8 activation scales: we compute in float */
                INFER__TRY(infer__hf_map(h, name, t, err));
            }
    return INFER_OK;
}

/* llama-3.1 rope scaling: the converter precomputes one divisor per rotated pair:
 *   freq_i = 1 / base^(2i/d), wavelen = 2 pi / freq_i
 *   wavelen < old_ctx / high_freq_factor -> 1;  wavelen > old_ctx / low_freq_factor -> factor
 *   else smooth = (old_ctx / wavelen - low) / (high - low), 1 / ((1 - smooth) / factor + smooth)
 * with freq_i computed in f32 and the rest in f64 (as the converter's f32 tensor of
 * frequencies and Python floats do), which gives its table bit for bit. */
static infer_status infer__hf_rope_freqs(infer__hf *h, infer_error *err) {
    const infer__json *rs = infer__hf_cfg(h, "rope_scaling");
    if (!rs) rs = infer__hf_cfg(h, "rope_parameters");
    const char *type = infer__json_str(infer__json_get(rs, "rope_type"));
    double base = 10000, factor = 8, lo = 1, hi = 4, old = 8192;
    int64_t dim, n_embd;
    if (!type || strcmp(type, "llama3") != 0 || !(h->arch->flags & INFER__HF_LLAMA_KEYS)) return INFER_OK;
    if (infer__hf_num_v(infer__hf_rope_cfg(h, "rope_theta"), "rope_theta", &base, err) < 0 ||
        infer__hf_num_v(infer__json_get(rs, "factor"), "rope_scaling.factor", &factor, err) < 0 ||
        infer__hf_num_v(infer__json_get(rs, "low_freq_factor"), "rope_scaling.low_freq_factor", &lo, err) < 0 ||
        infer__hf_num_v(infer__json_get(rs, "high_freq_factor"), "rope_scaling.high_freq_factor", &hi, err) < 0 ||
        infer__hf_num_v(infer__json_get(rs, "original_max_position_embeddings"), "rope_scaling.original_max_position_embeddings", &old, err) < 0)
        return INFER_ERR_FORMAT;
    if (!(hi > lo) || !(factor > 0) || !(base > 0)) return infer__fail(err, INFER_ERR_FORMAT, "config.json: llama3 rope_scaling needs high_freq_factor > low_freq_factor and positive factor and base");
    INFER__TRY(infer__hf_need_int(h, "hidden_size", 1, 1 << 24, &n_embd, err));
    dim = n_embd / h->n_head;
    if (infer__hf_int(h, "head_dim", 1, 65536, &dim, err) < 0) return INFER_ERR_FORMAT;
    const int64_t n = dim / 2;
    float *ff = (float *)infer__hf_keep(h->own, (size_t)n * sizeof(float));
    if (!ff) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        const float freq = 1.0f / powf((float)base, (float)(2 * i) / (float)dim);
        const double wavelen = 2 * M_PI / freq;
        if (wavelen < old / hi) ff[i] = 1.0f;
        else if (wavelen > old / lo) ff[i] = (float)factor;
        else {
            const double smooth = (old / wavelen - lo) / (hi - lo);
            ff[i] = (float)(1.0 / ((1.0 - smooth) / factor + smooth));
        }
    }
    return infer__hf_push(h, "rope_freqs.weight", INFER_TYPE_F32, &n, 1, ff, (size_t)n * sizeof(float), err);
}

/* a readable order: rope_freqs, token_embd, blocks by number, output_norm, output */
static int infer__hf_tensor_rank(const char *n, long *blk) {
    *blk = 0;
    if (!strncmp(n, "blk.", 4)) { *blk = strtol(n + 4, NULL, 10); return 1; }
    return !strncmp(n, "output", 6) ? 2 : 0;
}
static int infer__hf_cmp_tensor(const void *a, const void *b) {
    const infer_tensor *x = (const infer_tensor *)a, *y = (const infer_tensor *)b;
    long bx, by;
    const int rx = infer__hf_tensor_rank(x->name, &bx), ry = infer__hf_tensor_rank(y->name, &by);
    if (rx != ry) return rx - ry;
    if (bx != by) return bx < by ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* ---- >>hf-tokenizer: tokenizer.json (+ tokenizer_config.json) -> tokenizer.ggml.* ----
 *
 * Byte-level BPE ("gpt2"): model.vocab maps token text -> id, model.merges ranks the pairs
 *   ("a b" strings; newer files write ["a", "b"] pairs, whose spaces become U+0120 as in
 *   GPT-2's byte alphabet). added_tokens are CONTROL when marked special or when they look
 *   special ("<|...|>", "<pad>", ...), else USER_DEFINED. The pre-tokenizer is recognised by
 *   its Split regex (llama-bpe, qwen2, qwen35) or a bare ByteLevel with use_regex (gpt-2).
 * SentencePiece-style BPE (byte_fallback: true; "llama"): "<0xXX>" pieces are BYTE, the
 *   unk piece UNKNOWN. tokenizer.json has no scores, but SentencePiece merges by piece score
 *   and its pieces are numbered in score order; we rebuild an order-equivalent score: a piece
 *   made by merge r scores -r, a piece no merge makes scores -(n_merges + its rank among the
 *   normal pieces).
 * Ids in neither list become "[PAD<id>]" (UNUSED), up to config.json's vocab_size.
 * Special ids: tokenizer_config.json's bos/eos/unk/sep/pad/cls/mask token texts are looked
 * up among the added tokens, then config.json's <type>_token_id fills the gaps. add_bos /
 * add_eos come from a TemplateProcessing post-processor, overridden by tokenizer_config.json.
 */
#define INFER__HFT_RX_LLAMA3 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}" \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__HFT_RX_QWEN2 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}" \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__HFT_RX_QWEN35 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}" \
    "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

enum { INFER__TT_NORMAL = 1, INFER__TT_UNKNOWN = 2, INFER__TT_CONTROL = 3, INFER__TT_USER = 4, INFER__TT_UNUSED = 5, INFER__TT_BYTE = 6 };

static const char *const infer__hf_special_names[7] = { "bos", "eos", "unk", "sep", "pad", "cls", "mask" };
static const char *const infer__hf_special_keys[7] = { "bos", "eos", "unknown", "seperator", "padding", "cls", "mask" };   /* (sic) */

typedef struct infer__hf_tok {
    infer__json_doc doc, cfg;
    const infer__json *model, *added;
    int spm;                     /* SentencePiece-style (byte_fallback) */
    int32_t n;                   /* vocabulary size */
    const char **text;           /* [n] token texts (in the documents, or owned) */
    uint32_t *len;               /* [n] */
    int32_t *type;               /* [n] */
    float *score;                /* [n] SentencePiece-style only */
    int32_t special[7];          /* bos eos unk sep pad cls mask; -1 = none */
    int add_bos, add_eos;        /* -1 = not stated */
    const char *pre;
} infer__hf_tok;

static void infer__hf_tok_free(infer__hf_tok *k) {
    infer__json_free(&k->doc);
    infer__json_free(&k->cfg);
    INFER_FREE((void *)k->text);
    INFER_FREE(k->len);
    INFER_FREE(k->type);
    INFER_FREE(k->score);
}

static int infer__hf_looks_special_tok(const char *s, size_t n) {
    if ((n == 5 && !memcmp(s, "<pad>", 5)) || (n == 6 && !memcmp(s, "<mask>", 6)) || (n == 7 && !memcmp(s, "<2mass>", 7)) || (n == 7 && !memcmp(s, "[@BOS@]", 7))) return 1;
    if (n >= 4 && !memcmp(s, "<|", 2) && !memcmp(s + n - 2, "|>", 2)) return 1;
    if (n >= 8 && !memcmp(s, "<\xEF\xBD\x9C", 4) && !memcmp(s + n - 4, "\xEF\xBD\x9C>", 4)) return 1;   /* <｜...｜> */
    return n >= 8 && !memcmp(s, "<unused", 7) && s[n - 1] == '>';
}

/* the GGUF pre-tokenizer name of a tokenizer.json pre_tokenizer, or NULL */
static const char *infer__hf_tok_pre(const infer__json *pre) {
    const infer__json *list = infer__json_get(pre, "pretokenizers");
    int use_regex = 0;
    for (uint32_t i = 0; i < (list ? list->len : 1); i++) {
        const infer__json *p = list ? &list->items[i] : pre;
        const char *t = infer__json_str(infer__json_get(p, "type"));
        const char *rx = infer__json_str(infer__json_get(infer__json_get(p, "pattern"), "Regex"));
        if (t && !strcmp(t, "Split") && rx) {
            if (!strcmp(rx, INFER__HFT_RX_LLAMA3)) return "llama-bpe";
            if (!strcmp(rx, INFER__HFT_RX_QWEN2)) return "qwen2";
            if (!strcmp(rx, INFER__HFT_RX_QWEN35)) return "qwen35";
            return NULL;
        }
        if (t && !strcmp(t, "ByteLevel")) infer__json_bool(infer__json_get(p, "use_regex"), &use_regex);
    }
    return use_regex ? "gpt-2" : NULL;
}

/* ids of model.vocab and added_tokens -> the token table */
static infer_status infer__hf_tok_vocab(infer__hf_tok *k, int64_t n_hint, infer_error *err) {
    const infer__json *vocab = infer__json_get(k->model, "vocab");
    int64_t n = 0, id;
    if (!vocab || vocab->type != INFER__JSON_OBJECT) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: model.vocab is not an object");
    if (k->added && k->added->type != INFER__JSON_ARRAY) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: added_tokens is not an array");
    for (uint32_t i = 0; i < vocab->len; i++) {
        if (infer__json_int(&vocab->items[i], &id) < 0 || id < 0 || id >= (1 << 24)) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: vocab entry %u has a bad id", i);
        if (id >= n) n = id + 1;
    }
    for (uint32_t i = 0; k->added && i < k->added->len; i++) {
        const infer__json *a = &k->added->items[i];
        if (infer__json_int(infer__json_get(a, "id"), &id) < 0 || id < 0 || id >= (1 << 24) || !infer__json_str(infer__json_get(a, "content")))
            return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: added_tokens[%u] needs an id and a content", i);
        if (id >= n) n = id + 1;
    }
    if (n_hint > n) n = n_hint;
    k->n = (int32_t)n;
    k->text = (const char **)infer__calloc((size_t)n + 1, sizeof(char *));
    k->len = (uint32_t *)infer__calloc((size_t)n + 1, sizeof(uint32_t));
    k->type = (int32_t *)infer__calloc((size_t)n + 1, sizeof(int32_t));
    if (!k->text || !k->len || !k->type) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < vocab->len; i++) {
        const infer__json *v = &vocab->items[i];
        if (k->text[v->i]) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: id %lld is used twice", (long long)v->i);
        k->text[v->i] = v->key;
        k->len[v->i] = v->key_len;
        k->type[v->i] = INFER__TT_NORMAL;
        if (k->spm && v->key_len == 6 && !memcmp(v->key, "<0x", 3) && v->key[5] == '>') k->type[v->i] = INFER__TT_BYTE;
    }
    for (uint32_t i = 0; k->added && i < k->added->len; i++) {
        const infer__json *a = &k->added->items[i], *c = infer__json_get(a, "content");
        int special = 0;
        if (infer__json_int(infer__json_get(a, "id"), &id) < 0) continue;   /* checked above */
        infer__json_bool(infer__json_get(a, "special"), &special);
        k->text[id] = c->str;
        k->len[id] = c->len;
        k->type[id] = special || infer__hf_looks_special_tok(c->str, c->len) ? INFER__TT_CONTROL : INFER__TT_USER;
    }
    for (int64_t i = 0; i < n; i++) if (!k->text[i]) k->type[i] = INFER__TT_UNUSED;   /* "[PAD<i>]" */
    return INFER_OK;
}

/* SentencePiece-style scores from the merge order (see above) */
static infer_status infer__hf_tok_scores(infer__hf_tok *k, const infer__json *merges, infer_error *err) {
    struct { char *key; int32_t value; } *ids = NULL;
    char pair[1024];
    int64_t rank = 0;
    k->score = (float *)infer__calloc((size_t)k->n + 1, sizeof(float));
    if (!k->score) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; i < k->n; i++) {
        k->score[i] = 1.0f;                       /* 1 = not yet scored */
        if (k->type[i] == INFER__TT_NORMAL && k->text[i]) shput(ids, (char *)k->text[i], i);
    }
    for (uint32_t r = 0; merges && r < merges->len; r++) {
        const infer__json *m = &merges->items[r];
        if (m->type == INFER__JSON_STRING) snprintf(pair, sizeof pair, "%s", m->str);
        else if (m->type == INFER__JSON_ARRAY && m->len == 2 && m->items[0].str && m->items[1].str) snprintf(pair, sizeof pair, "%s %s", m->items[0].str, m->items[1].str);
        else { shfree(ids); return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: merge %u is neither \"a b\" nor [\"a\", \"b\"]", r); }
        char *sp = strchr(pair, ' ');
        if (!sp) continue;
        memmove(sp, sp + 1, strlen(sp));          /* "a b" -> "ab", the merged piece */
        const ptrdiff_t at = shgeti(ids, pair);
        if (at >= 0 && k->score[ids[at].value] > 0) k->score[ids[at].value] = -(float)r;
    }
    const int64_t n_merges = merges ? merges->len : 0;
    for (int32_t i = 0; i < k->n; i++) {
        if (k->type[i] != INFER__TT_NORMAL) k->score[i] = 0.0f;
        else if (k->score[i] > 0) k->score[i] = -(float)(n_merges + rank);
        if (k->type[i] == INFER__TT_NORMAL) rank++;
    }
    shfree(ids);
    return INFER_OK;
}

/* the id of a config entry ("text" or {"content": "text"}) among the added tokens, or -1 */
static int32_t infer__hf_tok_added_id(const infer__hf_tok *k, const infer__json *v) {
    const char *text = infer__json_str(v);
    int64_t id;
    if (!text) text = infer__json_str(infer__json_get(v, "content"));
    for (uint32_t i = 0; text && k->added && i < k->added->len; i++)
        if (!strcmp(infer__json_str(infer__json_get(&k->added->items[i], "content")), text) &&
            infer__json_int(infer__json_get(&k->added->items[i], "id"), &id) == 0)
            return (int32_t)id;
    return -1;
}

/* add_bos / add_eos as a TemplateProcessing post-processor implies: the single-sequence
 * template starting (ending) with the bos (eos) special token */
static void infer__hf_tok_template(infer__hf_tok *k, const infer__json *pp) {
    const infer__json *list = infer__json_get(pp, "processors");
    const char *bos = infer__json_str(infer__json_get(k->cfg.root, "bos_token"));
    const char *eos = infer__json_str(infer__json_get(k->cfg.root, "eos_token"));
    if (!bos) bos = infer__json_str(infer__json_get(infer__json_get(k->cfg.root, "bos_token"), "content"));
    if (!eos) eos = infer__json_str(infer__json_get(infer__json_get(k->cfg.root, "eos_token"), "content"));
    for (uint32_t i = 0; pp && i < (list ? list->len : 1); i++) {
        const infer__json *p = list ? &list->items[i] : pp;
        const infer__json *single = infer__json_get(p, "single");
        const char *t = infer__json_str(infer__json_get(p, "type"));
        if (!t || strcmp(t, "TemplateProcessing") || !single || single->type != INFER__JSON_ARRAY || single->len < 2) continue;
        const char *first = infer__json_str(infer__json_get(infer__json_get(&single->items[0], "SpecialToken"), "id"));
        const char *last = infer__json_str(infer__json_get(infer__json_get(&single->items[single->len - 1], "SpecialToken"), "id"));
        if (first) k->add_bos = bos && !strcmp(first, bos);
        if (last) k->add_eos = eos && !strcmp(last, eos);
        return;
    }
}

/* special ids and add_* flags; `cfg` is config.json (may be NULL) */
static void infer__hf_tok_specials(infer__hf_tok *k, const infer__hf *h) {
    const infer__json *tc = k->cfg.root;
    for (int s = 0; s < 7; s++) {
        char key[32];
        int64_t id;
        snprintf(key, sizeof key, "%s_token", infer__hf_special_names[s]);
        k->special[s] = infer__hf_tok_added_id(k, infer__json_get(tc, key));
        snprintf(key, sizeof key, "%s_token_id", infer__hf_special_names[s]);
        if (k->special[s] < 0 && h && infer__json_int(infer__hf_cfg(h, key), &id) == 0 && id >= 0 && id < k->n) k->special[s] = (int32_t)id;
    }
    k->add_bos = k->add_eos = -1;
    infer__hf_tok_template(k, infer__json_get(k->doc.root, "post_processor"));
    infer__json_bool(infer__json_get(tc, "add_bos_token"), &k->add_bos);
    infer__json_bool(infer__json_get(tc, "add_eos_token"), &k->add_eos);
    if (k->spm && k->special[2] < 0) {           /* the model's own unk piece */
        const char *unk = infer__json_str(infer__json_get(k->model, "unk_token"));
        int64_t id;
        if (unk && infer__json_int(infer__json_get(infer__json_get(k->model, "vocab"), unk), &id) == 0) k->special[2] = (int32_t)id;
    }
    if (k->spm && k->special[2] >= 0) k->type[k->special[2]] = INFER__TT_UNKNOWN;
}

/* token i as GGUF stores it: missing ids are "[PAD<i>]", and a user-defined token of a
 * byte-level vocabulary has SentencePiece's "▁" written back as a space (as the converter
 * does). out = NULL only measures. */
static size_t infer__hf_token_bytes(const infer__hf_tok *k, int32_t i, uint8_t *out) {
    char pad[32];
    const char *s = k->text[i];
    size_t n = k->len[i], o = 0;
    if (!s) { n = (size_t)snprintf(pad, sizeof pad, "[PAD%d]", i); s = pad; }
    const int fix = !k->spm && k->type[i] == INFER__TT_USER;
    for (size_t j = 0; j < n; j++, o++) {
        if (fix && j + 3 <= n && !memcmp(s + j, "\xE2\x96\x81", 3)) { if (out) out[o] = ' '; j += 2; continue; }
        if (out) out[o] = (uint8_t)s[j];
    }
    return o;
}

/* merge r as "a b"; in the pair form a space inside a part is written as U+0120 */
static size_t infer__hf_merge_bytes(const infer__json *m, uint8_t *out) {
    size_t o = 0;
    if (m->type == INFER__JSON_STRING) { if (out) memcpy(out, m->str, m->len); return m->len; }
    for (uint32_t part = 0; part < 2; part++) {
        if (part) { if (out) out[o] = ' '; o++; }
        for (uint32_t j = 0; j < m->items[part].len; j++) {
            const char c = m->items[part].str[j];
            if (c == ' ') { if (out) { out[o] = 0xC4; out[o + 1] = 0xA0; } o += 2; }
            else { if (out) out[o] = (uint8_t)c; o++; }
        }
    }
    return o;
}

/* a GGUF string array: for each element a u64 length and the bytes */
static infer_status infer__hf_put_strings(infer__hf *h, const char *key, const infer__hf_tok *k, const infer__json *merges, infer_error *err) {
    const int64_t n = merges ? (int64_t)merges->len : (int64_t)k->n;
    size_t total = 0;
    for (int64_t i = 0; i < n; i++) total += 8 + (merges ? infer__hf_merge_bytes(&merges->items[i], NULL) : infer__hf_token_bytes(k, (int32_t)i, NULL));
    uint8_t *buf = (uint8_t *)infer__hf_keep(h->own, total), *p = buf;
    if (!buf) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        const uint64_t len = merges ? infer__hf_merge_bytes(&merges->items[i], p + 8) : infer__hf_token_bytes(k, (int32_t)i, p + 8);
        memcpy(p, &len, 8);
        p += 8 + len;
    }
    arrput(h->kv, infer_gguf_kv_array(key, INFER_GGUF_STRING, (uint64_t)n, buf));
    return INFER_OK;
}

static infer_status infer__hf_put_array(infer__hf *h, const char *key, infer_gguf_vtype et, const void *src, int64_t n, infer_error *err) {
    void *p = infer__hf_keep(h->own, (size_t)n * 4);
    if (!p) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    memcpy(p, src, (size_t)n * 4);
    arrput(h->kv, infer_gguf_kv_array(key, et, (uint64_t)n, p));
    return INFER_OK;
}

/* SentencePiece prepends a space unless the tokenizer says otherwise (Prepend normalizer,
 * or a Metaspace pre-tokenizer whose prepend_scheme is not "never") */
static int infer__hf_spm_space_prefix(const infer__json *root) {
    const infer__json *norm = infer__json_get(root, "normalizer"), *pre = infer__json_get(root, "pre_tokenizer");
    const infer__json *list = infer__json_get(norm, "normalizers");
    for (uint32_t i = 0; norm && i < (list ? list->len : 1); i++) {
        const char *t = infer__json_str(infer__json_get(list ? &list->items[i] : norm, "type"));
        if (t && !strcmp(t, "Prepend")) return 1;
    }
    list = infer__json_get(pre, "pretokenizers");
    for (uint32_t i = 0; pre && i < (list ? list->len : 1); i++) {
        const infer__json *p = list ? &list->items[i] : pre;
        const char *t = infer__json_str(infer__json_get(p, "type")), *scheme = infer__json_str(infer__json_get(p, "prepend_scheme"));
        if (t && !strcmp(t, "Metaspace")) return !scheme || strcmp(scheme, "never") != 0;
    }
    return 0;
}

/* tokenizer_config.json's chat_template (a string, or the "default" of a list), else the
 * folder's chat_template.jinja */
static infer_status infer__hf_chat_template(infer__hf *h, const infer__hf_tok *k, const char *dir, infer_error *err) {
    const infer__json *ct = infer__json_get(k->cfg.root, "chat_template");
    const char *s = infer__json_str(ct);
    for (uint32_t i = 0; !s && ct && ct->type == INFER__JSON_ARRAY && i < ct->len; i++) {
        const char *name = infer__json_str(infer__json_get(&ct->items[i], "name"));
        if (name && !strcmp(name, "default")) s = infer__json_str(infer__json_get(&ct->items[i], "template"));
    }
    if (s) { infer__hf_put_str(h, "tokenizer.chat_template", s); return INFER_OK; }
    if (!infer__hf_exists(dir, "chat_template.jinja")) return INFER_OK;
    char path[4096];
    infer__mapping m;
    INFER__TRY(infer__hf_path(path, sizeof path, dir, "chat_template.jinja", err));
    INFER__TRY(infer__map_file(&m, path, err));
    char *copy = (char *)infer__hf_keep(h->own, m.size + 1);
    if (copy) memcpy(copy, m.addr, m.size);
    infer__unmap(&m);
    if (!copy) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    arrput(h->kv, infer_gguf_kv_str("tokenizer.chat_template", copy));
    return INFER_OK;
}

static infer_status infer__hf_tok_keys(infer__hf *h, infer__hf_tok *k, const infer__json *merges, const char *dir, infer_error *err) {
    infer__hf_put_str(h, "tokenizer.ggml.model", k->spm ? "llama" : "gpt2");
    infer__hf_put_str(h, "tokenizer.ggml.pre", k->pre);
    INFER__TRY(infer__hf_put_strings(h, "tokenizer.ggml.tokens", k, NULL, err));
    if (k->spm) INFER__TRY(infer__hf_put_array(h, "tokenizer.ggml.scores", INFER_GGUF_F32, k->score, k->n, err));
    INFER__TRY(infer__hf_put_array(h, "tokenizer.ggml.token_type", INFER_GGUF_I32, k->type, k->n, err));
    if (!k->spm && merges && merges->len) INFER__TRY(infer__hf_put_strings(h, "tokenizer.ggml.merges", k, merges, err));
    for (int s = 0; s < 7; s++) {
        char key[64];
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", infer__hf_special_keys[s]);
        if (k->special[s] >= 0) infer__hf_put_u32(h, infer__hf_str(h, key), k->special[s]);
    }
    if (k->add_bos >= 0) infer__hf_put_bool(h, "tokenizer.ggml.add_bos_token", k->add_bos);
    if (k->add_eos >= 0) infer__hf_put_bool(h, "tokenizer.ggml.add_eos_token", k->add_eos);
    if (k->spm && !infer__hf_spm_space_prefix(k->doc.root)) infer__hf_put_bool(h, "tokenizer.ggml.add_space_prefix", 0);
    return infer__hf_chat_template(h, k, dir, err);
}

/* tokenizer.json `file` in `dir` (and tokenizer_config.json beside it) -> tokenizer keys;
 * n_hint: config.json's vocab_size (0 if unknown) */
static infer_status infer__hf_tokenizer(infer__hf *h, const char *dir, const char *file, int64_t n_hint, infer_error *err) {
    infer__hf_tok k;
    int bf = 0;
    memset(&k, 0, sizeof k);
    infer_status rc = infer__hf_read_json(&k.doc, dir, file, err);
    if (rc == INFER_OK && infer__hf_exists(dir, "tokenizer_config.json")) rc = infer__hf_read_json(&k.cfg, dir, "tokenizer_config.json", err);
    const char *type = NULL;
    const infer__json *merges = NULL;
    if (rc == INFER_OK) {
        k.model = infer__json_get(k.doc.root, "model");
        k.added = infer__json_get(k.doc.root, "added_tokens");
        type = infer__json_str(infer__json_get(k.model, "type"));
        merges = infer__json_get(k.model, "merges");
        infer__json_bool(infer__json_get(k.model, "byte_fallback"), &bf);
        k.spm = bf;
        if (!type || strcmp(type, "BPE")) rc = infer__fail(err, INFER_ERR_UNSUPPORTED, "tokenizer.json: model type '%.32s' is not supported (BPE only)", type ? type : "(none)");
        else if (merges && merges->type != INFER__JSON_ARRAY) rc = infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: model.merges is not an array");
    }
    for (uint32_t r = 0; rc == INFER_OK && merges && r < merges->len; r++) {
        const infer__json *m = &merges->items[r];
        if (m->type != INFER__JSON_STRING && !(m->type == INFER__JSON_ARRAY && m->len == 2 && m->items[0].type == INFER__JSON_STRING && m->items[1].type == INFER__JSON_STRING))
            rc = infer__fail(err, INFER_ERR_FORMAT, "tokenizer.json: merge %u is neither \"a b\" nor [\"a\", \"b\"]", r);
    }
    if (rc == INFER_OK) rc = infer__hf_tok_vocab(&k, n_hint, err);
    if (rc == INFER_OK && k.spm) { k.pre = "default"; rc = infer__hf_tok_scores(&k, merges, err); }
    if (rc == INFER_OK && !k.spm && !(k.pre = infer__hf_tok_pre(infer__json_get(k.doc.root, "pre_tokenizer"))))
        rc = infer__fail(err, INFER_ERR_UNSUPPORTED, "tokenizer.json: unrecognized pre_tokenizer (known: the llama-bpe, qwen2, qwen35 and gpt-2 patterns)");
    if (rc == INFER_OK) {
        infer__hf_tok_specials(&k, h);
        rc = infer__hf_tok_keys(h, &k, merges, dir, err);
    }
    infer__hf_tok_free(&k);
    return rc;
}

/* ---- putting it together ---- */

/* general.file_type as the converter states it: what the 2-D weights mostly are */
static void infer__hf_file_type(infer__hf *h) {
    int ft = 0;
    for (ptrdiff_t i = 0; i < arrlen(h->tensors); i++) {
        if (h->tensors[i].n_dims < 2) continue;
        if (h->tensors[i].type == INFER_TYPE_BF16) ft = 32;
        else if (h->tensors[i].type == INFER_TYPE_F16 && ft == 0) ft = 1;
    }
    infer__hf_put_u32(h, "general.file_type", ft);
    infer__hf_put_u32(h, "general.quantization_version", 2);
}

/* move the built metadata and tensors into g (plain arrays, as infer_gguf_free expects) */
static infer_status infer__hf_finish(infer__hf *h, infer_gguf *g, infer_error *err) {
    const size_t nkv = (size_t)arrlen(h->kv), nt = (size_t)arrlen(h->tensors);
    g->kv = (infer_gguf_kv *)infer__calloc(nkv + 1, sizeof(infer_gguf_kv));
    g->tensors = (infer_tensor *)infer__calloc(nt + 1, sizeof(infer_tensor));
    if (!g->kv || !g->tensors) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    if (nkv) memcpy(g->kv, h->kv, nkv * sizeof(infer_gguf_kv));
    if (nt) memcpy(g->tensors, h->tensors, nt * sizeof(infer_tensor));
    g->n_kv = (int64_t)nkv;
    g->n_tensors = (int64_t)nt;
    g->version = 3;
    g->alignment = 32;
    g->owner = h->own;
    g->owner_free = infer__hf_owner_free;
    h->own = NULL;
    return INFER_OK;
}

static void infer__hf_free(infer__hf *h) {
    for (ptrdiff_t i = 0; i < arrlen(h->files); i++) { infer_safetensors_free(&h->files[i]); INFER_FREE(h->done[i]); }
    arrfree(h->files);
    arrfree(h->done);
    shfree(h->where);
    arrfree(h->kv);
    arrfree(h->tensors);
    infer__json_free(&h->cfg_doc);
    infer__hf_owner_free(h->own);
}

/* config.json: the family, and the text_config of multimodal wrappers */
static infer_status infer__hf_read_config(infer__hf *h, infer_error *err) {
    INFER__TRY(infer__hf_read_json(&h->cfg_doc, h->dir, "config.json", err));
    h->cfg = h->cfg_doc.root;
    h->text = infer__json_get(h->cfg, "text_config");
    if (!h->text || h->text->type != INFER__JSON_OBJECT) h->text = h->cfg;
    INFER__TRY(infer__hf_find_arch(h, err));
    const infer__json *q = infer__json_get(h->cfg, "quantization_config"), *bs = infer__json_get(q, "weight_block_size");
    h->fp8_block[0] = h->fp8_block[1] = 128;
    for (uint32_t i = 0; bs && i < 2; i++)
        if (infer__hf_int_v(infer__json_at(bs, i), "quantization_config.weight_block_size", 1, 1 << 20, &h->fp8_block[i], err) != 1) return INFER_ERR_FORMAT;
    return INFER_OK;
}

static infer_status infer__hf_begin(infer__hf *h, infer_gguf *g, const char *dir, infer_error *err) {
    memset(g, 0, sizeof *g);
    memset(h, 0, sizeof *h);
    h->dir = dir;
    h->own = (infer__hf_owner *)infer__calloc(1, sizeof(infer__hf_owner));
    if (!h->own) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    return INFER_OK;
}

infer_status infer_hf_load(infer_gguf *g, const char *dir, infer_error *err) {
    infer__hf h;
    int64_t n_vocab = 0;
    infer_status rc = infer__hf_begin(&h, g, dir, err);
    if (rc == INFER_OK) rc = infer__hf_read_config(&h, err);
    if (rc == INFER_OK) rc = infer__hf_open_shards(&h, err);
    if (rc == INFER_OK) rc = infer__hf_params(&h, err);
    if (rc == INFER_OK) rc = infer__hf_rope_freqs(&h, err);
    if (rc == INFER_OK) rc = infer__hf_tensors(&h, err);
    if (rc == INFER_OK) {
        qsort(h.tensors, (size_t)arrlen(h.tensors), sizeof(infer_tensor), infer__hf_cmp_tensor);
        infer__hf_file_type(&h);
        if (infer__hf_int(&h, "vocab_size", 1, 1 << 24, &n_vocab, err) < 0) rc = INFER_ERR_FORMAT;
    }
    if (rc == INFER_OK && infer__hf_exists(dir, "tokenizer.json")) rc = infer__hf_tokenizer(&h, dir, "tokenizer.json", n_vocab, err);
    if (rc == INFER_OK) rc = infer__hf_finish(&h, g, err);
    infer__hf_free(&h);
    if (rc != INFER_OK) infer_gguf_free(g);
    return rc;
}

infer_status infer_hf_vocab(infer_gguf *g, const char *tokenizer_json, infer_error *err) {
    char dir[4096];
    const char *slash = strrchr(tokenizer_json, '/');
    infer__hf h;
    int64_t n_vocab = 0;
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - tokenizer_json), tokenizer_json);
    else snprintf(dir, sizeof dir, ".");
    infer_status rc = infer__hf_begin(&h, g, dir, err);
    /* with a config.json beside it: the family's name and its vocab_size */
    if (rc == INFER_OK && infer__hf_exists(dir, "config.json") && infer__hf_read_config(&h, err) == INFER_OK) {
        infer__hf_put_str(&h, "general.architecture", h.arch_name);
        if (infer__hf_int(&h, "vocab_size", 1, 1 << 24, &n_vocab, err) < 0) rc = INFER_ERR_FORMAT;
    }
    if (rc == INFER_OK) arrput(h.kv, infer_gguf_kv_str("general.name", infer__hf_basename(&h)));
    if (rc == INFER_OK) rc = infer__hf_tokenizer(&h, dir, slash ? slash + 1 : tokenizer_json, n_vocab, err);
    if (rc == INFER_OK) rc = infer__hf_finish(&h, g, err);
    infer__hf_free(&h);
    if (rc != INFER_OK) infer_gguf_free(g);
    return rc;
}
