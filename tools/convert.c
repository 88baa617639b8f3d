/* tools/convert.c -- converting weights and models with infer.h's own readers, writers and
 * quantizers.
 *
 *   convert dequant TYPE IN OUT              raw blocks of TYPE -> raw little-endian f32
 *   convert quant TYPE IN OUT --cols N       raw f32 rows of N values -> raw blocks of TYPE
 *   convert quantize IN.gguf OUT.gguf --type TYPE
 *                                            re-encode a model's 2-D weight matrices as TYPE
 *                                            (norms, biases and other small tensors stay f32)
 *   convert info FILE                        metadata and tensor table of a GGUF or safetensors
 *                                            file, or of the GGUF a Hugging Face folder becomes
 *   convert HF_FOLDER OUT.gguf [--type TYPE] a Hugging Face folder (config.json, *.safetensors,
 *                                            tokenizer.json) as the GGUF the official converter
 *                                            writes; TYPE re-encodes the 2-D weights
 *   convert vocab TOKENIZER.json OUT.gguf    a vocabulary-only GGUF from tokenizer.json (and the
 *                                            tokenizer_config.json / config.json beside it)
 *   convert llama2c MODEL.bin TOKENIZER.bin OUT.gguf
 *                                            a llama2.c checkpoint and tokenizer as GGUF
 *   convert synth ARCH PRESET OUT.gguf [--type TYPE]
 *                                            a random-weight model with a real model's shape
 *                                            and GGUF layout (for benchmarks); presets below
 *
 * TYPE is the lower-case ggml name: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K
 * q6_K iq1_s iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq4_nl iq4_xs tq1_0 tq2_0 mxfp4 nvfp4
 * q1_0 q2_0 i2_s.
 */
#define INFER_IMPLEMENTATION
#include "../infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "convert: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void usage(void) {
    fputs("usage:\n"
          "  convert dequant TYPE IN OUT\n"
          "  convert quant TYPE IN OUT --cols N\n"
          "  convert quantize IN.gguf OUT.gguf --type TYPE\n"
          "  convert info FILE.gguf|FILE.safetensors|HF_FOLDER\n"
          "  convert HF_FOLDER OUT.gguf [--type TYPE]\n"
          "  convert vocab TOKENIZER.json OUT.gguf\n"
          "  convert llama2c MODEL.bin TOKENIZER.bin OUT.gguf\n"
          "  convert synth ARCH PRESET OUT.gguf [--type TYPE]   (llama llama-1b | llama tiny | bitnet bitnet-2b | bitnet tiny |\n"
          "                                                       qwen35 qwen35-0.8b | qwen35 tiny | qwen35moe qwen35moe-small | qwen35moe tiny |\n"
          "                                                       deepseek4 deepseek4-small | deepseek4 tiny;\n"
          "                                                       llama: --type q4_K_M, the reference quantizer's Q4_K/Q6_K mix)\n", stderr);
    exit(1);
}

static uint8_t *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open '%s': %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) die("cannot seek '%s'", path);
    long len = ftell(f);
    if (len < 0) die("cannot size '%s'", path);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)len + 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) die("cannot read '%s'", path);
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void write_all(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) die("cannot write '%s': %s", path, strerror(errno));
}

static infer_type parse_type(const char *name) {
    int t = infer_type_from_name(name);
    if (t < 0 || infer_type_block((infer_type)t) == 0) die("unknown type '%s'", name);
    return (infer_type)t;
}

/* IN holds whole rows of blocks; with no row length given, the file is one run of blocks */
static int cmd_dequant(int argc, char **argv) {
    if (argc != 5) usage();
    infer_type t = parse_type(argv[2]);
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    const size_t bs = infer_type_row_size(t, infer_type_block(t));
    if (t == INFER_TYPE_I2_S) {
        /* I2_S: n/4 packed bytes + 32 bytes holding the f32 scale */
        if (n < 32 || (n - 32) % 32) die("'%s': %zu bytes is not an i2_s tensor (4 codes per byte in 32-byte groups + 32)", argv[3], n);
        int64_t count = (int64_t)(n - 32) * 4;
        float *out = malloc((size_t)count * sizeof(float)), scale;
        memcpy(&scale, in + n - 32, 4);
        infer__dequant_i2_s(in, scale, out, count);
        write_all(argv[4], out, (size_t)count * sizeof(float));
        free(out); free(in);
        return 0;
    }
    if (n == 0 || n % bs) die("'%s': %zu bytes is not a whole number of %s blocks (%zu bytes each)", argv[3], n, argv[2], bs);
    int64_t count = (int64_t)(n / bs) * infer_type_block(t);
    float *out = malloc((size_t)count * sizeof(float));
    infer_error err;
    if (!out) die("out of memory");
    if (infer_dequantize(t, in, out, count, &err) != INFER_OK) die("%s", err.msg);
    write_all(argv[4], out, (size_t)count * sizeof(float));
    free(out); free(in);
    return 0;
}

static int cmd_quant(int argc, char **argv) {
    if (argc != 7 || strcmp(argv[5], "--cols") != 0) usage();
    infer_type t = parse_type(argv[2]);
    char *end;
    long cols = strtol(argv[6], &end, 10);
    if (*end || cols <= 0) die("bad --cols '%s'", argv[6]);
    if (cols % infer_type_block(t)) die("row length %ld is not a multiple of %s's block size %d", cols, argv[2], infer_type_block(t));
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    if (n == 0 || n % ((size_t)cols * 4)) die("'%s': %zu bytes is not a whole number of %ld-value f32 rows", argv[3], n, cols);
    const int64_t rows = (int64_t)(n / ((size_t)cols * 4));
    float *x = malloc(n);
    memcpy(x, in, n);
    if (t == INFER_TYPE_I2_S) {
        /* one tensor: packed rows, then the shared scale */
        size_t bytes = (size_t)(rows * cols) / 4 + 32;
        uint8_t *out = calloc(1, bytes);
        infer__quant_i2_s(x, out, rows * cols);
        write_all(argv[4], out, bytes);
        free(out); free(x); free(in);
        return 0;
    }
    const size_t row_bytes = infer_type_row_size(t, cols);
    uint8_t *out = malloc(row_bytes * (size_t)rows);
    infer_error err;
    for (int64_t r = 0; r < rows; r++)
        if (infer_quantize(t, x + r * cols, out + (size_t)r * row_bytes, cols, &err) != INFER_OK) die("%s", err.msg);
    write_all(argv[4], out, row_bytes * (size_t)rows);
    free(out); free(x); free(in);
    return 0;
}

static void print_gguf(const infer_gguf *g) {
    printf("GGUF v%u: %lld metadata entries, %lld tensors, alignment %llu, data at byte %zu\n", g->version, (long long)g->n_kv,
           (long long)g->n_tensors, (unsigned long long)g->alignment, g->data_offset);
    for (int64_t i = 0; i < g->n_kv; i++) {
        const infer_gguf_kv *kv = &g->kv[i];
        printf("  %-50.*s ", (int)kv->key.len, kv->key.ptr);
        switch (kv->type) {
        case INFER_GGUF_STRING: printf("\"%.*s\"\n", (int)(kv->v.s.len > 100 ? 100 : kv->v.s.len), kv->v.s.ptr); break;
        case INFER_GGUF_ARRAY: printf("array[%llu]\n", (unsigned long long)kv->arr_n); break;
        case INFER_GGUF_F32: case INFER_GGUF_F64: printf("%g\n", kv->v.f); break;
        case INFER_GGUF_BOOL: printf("%s\n", kv->v.u ? "true" : "false"); break;
        case INFER_GGUF_I8: case INFER_GGUF_I16: case INFER_GGUF_I32: case INFER_GGUF_I64: printf("%lld\n", (long long)kv->v.i); break;
        default: printf("%llu\n", (unsigned long long)kv->v.u); break;
        }
    }
    uint64_t total = 0;
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const infer_tensor *t = &g->tensors[i];
        printf("  %-44s %-8s [", t->name, infer_type_name(t->type));
        for (int d = 0; d < t->n_dims; d++) printf("%s%lld", d ? ", " : "", (long long)t->ne[d]);
        printf("] %zu bytes\n", t->nbytes);
        total += t->nbytes;
    }
    printf("total tensor bytes: %llu\n", (unsigned long long)total);
}

/* safetensors: PyTorch shapes (outermost first) and byte ranges of the data area */
static void print_safetensors(const infer_safetensors *st) {
    printf("safetensors: %lld tensors, header %zu bytes, data %zu bytes\n", (long long)st->n_tensors, st->data_offset - 8, st->size - st->data_offset);
    for (int64_t i = 0; i < st->n_meta; i++) printf("  __metadata__ %-37s \"%.100s\"\n", st->meta[2 * i], st->meta[2 * i + 1]);
    for (int64_t i = 0; i < st->n_tensors; i++) {
        const infer_st_tensor *t = &st->tensors[i];
        printf("  %-60s %-8s [", t->name, t->dtype);
        for (int d = 0; d < t->n_dims; d++) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
        printf("] bytes [%llu, %llu)\n", (unsigned long long)t->offset, (unsigned long long)(t->offset + t->nbytes));
    }
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmd_info(int argc, char **argv) {
    if (argc != 3) usage();
    infer_gguf g;
    infer_error err;
    if (is_dir(argv[2])) {
        if (infer_hf_load(&g, argv[2], &err) != INFER_OK) die("%s: %s", argv[2], err.msg);
        print_gguf(&g);
        infer_gguf_free(&g);
        return 0;
    }
    size_t n;
    uint8_t *p = read_all(argv[2], &n);
    if (n >= 4 && !memcmp(p, "GGUF", 4)) {
        if (infer_gguf_parse(&g, p, n, &err) != INFER_OK) die("%s: %s", argv[2], err.msg);
        print_gguf(&g);
        infer_gguf_free(&g);
    } else {
        infer_safetensors st;
        if (infer_safetensors_parse(&st, p, n, &err) != INFER_OK) die("%s: not GGUF, and as safetensors: %s", argv[2], err.msg);
        print_safetensors(&st);
        infer_safetensors_free(&st);
    }
    free(p);
    return 0;
}

/* Which tensors get the new type: 2-D weight matrices. Norms, biases, rope factors and
 * other 1-D tensors stay as they are, as do rows that are not a whole number of blocks. */
static int wants_quant(const infer_tensor *t, infer_type to) {
    if (t->n_dims < 2 || t->ne[0] % infer_type_block(to) || t->type == INFER_TYPE_I32) return 0;
    const char *n = t->name;
    return strstr(n, ".weight") && !strstr(n, "norm") && !strstr(n, "rope_freqs") && !strstr(n, "ssm_conv1d") && !strstr(n, "ffn_gate_inp")   /* ssm_a has no .weight */
           && !strstr(n, "hc_") && !strstr(n, "_ape.");   /* deepseek4's stream mixes and window offsets stay as they are */
}

/* t re-encoded as `to` into *out (the same name and shape); returns the new bytes */
static void *requant(const infer_tensor *t, infer_type to, infer_tensor *out) {
    const infer__type_traits *tt = to == INFER_TYPE_I2_S ? NULL : infer__type(to);
    const int64_t K = t->ne[0], rows = (int64_t)(t->nbytes / infer_type_row_size(t->type, K));
    float *row = malloc((size_t)K * sizeof(float));
    size_t bytes = to == INFER_TYPE_I2_S ? (size_t)(K * rows) / 4 + 32 : infer_type_row_size(to, K) * (size_t)rows;
    uint8_t *q = calloc(1, bytes);
    if (!row || !q) die("out of memory for %s", t->name);
    *out = *t;
    out->type = to;
    out->data = q;
    out->nbytes = bytes;
    if (to == INFER_TYPE_I2_S) {
        float *all = malloc((size_t)(K * rows) * sizeof(float));
        if (!all) die("out of memory for %s", t->name);
        for (int64_t r = 0; r < rows; r++) infer__dequant_row(t, r, all + r * K);
        infer__quant_i2_s(all, q, K * rows);
        out->scale = infer__i2_s_scale(q, K * rows);
        free(all);
    } else {
        for (int64_t r = 0; r < rows; r++) {
            infer__dequant_row(t, r, row);
            tt->quant(row, q + (size_t)r * infer_type_row_size(to, K), K);
        }
    }
    free(row);
    return q;
}

static int cmd_quantize(int argc, char **argv) {
    if (argc != 6 || strcmp(argv[4], "--type") != 0) usage();
    infer_type to = parse_type(argv[5]);
    const infer__type_traits *tt = to == INFER_TYPE_I2_S ? NULL : infer__type(to);
    if (to != INFER_TYPE_I2_S && (!tt || !tt->quant)) die("type %s has no quantizer", argv[5]);
    size_t n;
    uint8_t *p = read_all(argv[2], &n);
    infer_gguf g;
    infer_error err;
    if (infer_gguf_parse(&g, p, n, &err) != INFER_OK) die("%s: %s", argv[2], err.msg);
    infer_tensor *out = calloc((size_t)g.n_tensors, sizeof *out);
    void **owned = calloc((size_t)g.n_tensors, sizeof(void *));
    /* the FP4 types are expert formats: in a MoE model only the experts take them */
    int experts_only = 0;
    for (int64_t i = 0; i < g.n_tensors && (to == INFER_TYPE_MXFP4 || to == INFER_TYPE_NVFP4); i++) experts_only |= strstr(g.tensors[i].name, "_exps.") != NULL;
    for (int64_t i = 0; i < g.n_tensors; i++) {
        out[i] = g.tensors[i];
        if (!wants_quant(&g.tensors[i], to) || g.tensors[i].type == to || (experts_only && !strstr(g.tensors[i].name, "_exps."))) continue;
        owned[i] = requant(&g.tensors[i], to, &out[i]);
        fprintf(stderr, "\r[%lld/%lld] %-40s -> %s", (long long)i + 1, (long long)g.n_tensors, g.tensors[i].name, argv[5]);
    }
    fprintf(stderr, "\n");
    /* general.file_type no longer describes the file: drop it */
    infer_gguf_kv *kv = calloc((size_t)g.n_kv + 1, sizeof *kv);
    int64_t nkv = 0;
    for (int64_t i = 0; i < g.n_kv; i++) if (!infer__str_eq(g.kv[i].key, "general.file_type")) kv[nkv++] = g.kv[i];
    if (infer_gguf_write(argv[3], kv, nkv, out, g.n_tensors, (uint32_t)g.alignment, &err) != INFER_OK) die("%s", err.msg);
    for (int64_t i = 0; i < g.n_tensors; i++) free(owned[i]);
    free(owned); free(out); free(kv);
    infer_gguf_free(&g);
    free(p);
    return 0;
}


/* ---- synth: random weights in a real model's shape ----
 * Weights are drawn N(0, sigma) with sigma = 1/sqrt(fan_in) scaled down for the residual
 * projections, norms are 1: activations stay O(1) through every layer and the logits come
 * out of ordinary size (a few units), so the numbers a benchmark pushes are realistic. */
typedef struct { const char *arch, *name; int n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, tied; float rope_base; } preset_t;
static const preset_t presets[] = {
    { "llama", "llama-1b", 2048, 16, 32, 8, 64, 8192, 128256, 1, 500000.0f },   /* Llama-3.2-1B */
    { "llama", "tiny", 256, 2, 8, 2, 32, 512, 1024, 1, 10000.0f },
    { "bitnet", "bitnet-2b", 2560, 30, 20, 5, 128, 6912, 128256, 1, 500000.0f }, /* BitNet-b1.58-2B-4T */
    { "bitnet", "tiny", 256, 2, 8, 2, 32, 512, 1024, 1, 10000.0f },
};

/* BitNet's projections are ternary: {-s, 0, +s} drawn uniformly, s chosen for an RMS of sigma */
static int is_ternary(infer_type t) { return t == INFER_TYPE_TQ1_0 || t == INFER_TYPE_TQ2_0 || t == INFER_TYPE_I2_S; }

static float gauss(infer__rng *r) {   /* Box-Muller */
    double u = infer__rng_uniform(r), v = infer__rng_uniform(r);
    return (float)(sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v));
}

typedef struct { infer_tensor *t; int n; } tensor_list;

/* ne2 > 1: a stack of ne2 matrices (the experts of a MoE layer) */
static void synth_tensor3(tensor_list *L, const char *name, infer_type type, int64_t ne0, int64_t ne1, int64_t ne2, float sigma, infer__rng *rng) {
    infer_tensor *t = &L->t[L->n++];
    memset(t, 0, sizeof *t);
    t->name = strdup(name);
    t->n_dims = ne2 > 1 ? 3 : ne1 ? 2 : 1;
    t->ne[0] = ne0; t->ne[1] = ne1 ? ne1 : 1; t->ne[2] = ne2; t->ne[3] = 1;
    if (!ne1) type = INFER_TYPE_F32;
    t->type = type;
    const int64_t rows = t->ne[1] * ne2;
    const size_t row_bytes = infer_type_row_size(type, ne0);
    const int i2_s = type == INFER_TYPE_I2_S;   /* one scale for the whole tensor: quantized at once */
    t->nbytes = i2_s ? (size_t)(ne0 * rows) / 4 + 32 : row_bytes * (size_t)rows;
    uint8_t *data = calloc(1, t->nbytes);
    float *row = malloc((size_t)ne0 * (size_t)(i2_s ? rows : 1) * sizeof(float));
    if (!data || !row) die("out of memory for %s", name);
    const float s3 = sigma * sqrtf(1.5f);
    for (int64_t r = 0; r < rows; r++) {
        float *x = row + (i2_s ? r * ne0 : 0);
        for (int64_t i = 0; i < ne0; i++)
            x[i] = sigma == 0 ? 1.0f : is_ternary(type) ? s3 * (float)((int)(infer__rng_next(rng) % 3) - 1) : sigma * gauss(rng);
        if (!i2_s) infer__traits[type].quant(x, data + (size_t)r * row_bytes, ne0);
    }
    if (i2_s) {
        infer__quant_i2_s(row, data, ne0 * rows);
        memcpy(&t->scale, data + (size_t)(ne0 * rows) / 4, 4);
    }
    free(row);
    t->data = data;
}
static void synth_tensor(tensor_list *L, const char *name, infer_type type, int64_t ne0, int64_t ne1, float sigma, infer__rng *rng) {
    synth_tensor3(L, name, type, ne0, ne1, 1, sigma, rng);
}

/* qwen35 / qwen35moe: the Qwen3.5 hybrid. Layer l is gated attention when (l+1) % interval
 * == 0, else a gated DeltaNet layer (fused qkv, z gate, alpha/beta projections, A, dt bias,
 * conv taps). The MoE variant (n_expert > 0) replaces every dense FFN by a softmax router
 * over n_expert experts of n_ff (top n_used) plus a shared expert of n_ff_sh with its
 * sigmoid gate; the router and that gate stay F32, as llama.cpp's quantizer leaves them. */
typedef struct {
    const char *arch, *name;
    int n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_rot, k_heads, v_heads, d_state, conv, interval;
    int n_expert, n_used, n_ff_sh;
} hybrid_t;
static const hybrid_t hybrids[] = {
    { "qwen35", "qwen35-0.8b", 1024, 24, 8, 2, 256, 3584, 248320, 64, 16, 16, 128, 4, 4, 0, 0, 0 },   /* Qwen3.5-0.8B */
    { "qwen35", "tiny", 256, 4, 4, 2, 64, 512, 1024, 16, 2, 4, 64, 4, 4, 0, 0, 0 },
    /* a small Qwen3.5-MoE: the 35B-A3B layer design (8 routed experts + 1 shared, 16 k /
     * 32 v DeltaNet heads, gated attention every 4th layer) at hidden 1024, 16 layers, 64
     * experts of 256 and a shared expert of 512 */
    { "qwen35moe", "qwen35moe-small", 1024, 16, 8, 2, 256, 256, 248320, 64, 16, 32, 128, 4, 4, 64, 8, 512 },
    { "qwen35moe", "tiny", 256, 4, 4, 2, 64, 128, 1024, 16, 2, 4, 64, 4, 4, 8, 2, 256 },
};

static int cmd_synth_qwen35(int argc, char **argv) {
    const hybrid_t *p = NULL;
    for (size_t i = 0; i < sizeof hybrids / sizeof hybrids[0]; i++)
        if (!strcmp(hybrids[i].arch, argv[2]) && !strcmp(hybrids[i].name, argv[3])) p = &hybrids[i];
    if (!p) die("unknown preset '%s %s' (have: qwen35 qwen35-0.8b, qwen35 tiny, qwen35moe qwen35moe-small, qwen35moe tiny)", argv[2], argv[3]);
    const char *A = p->arch;
    infer_type type = argc == 7 ? parse_type(argv[6]) : INFER_TYPE_F16;
    if (type == INFER_TYPE_I2_S || !infer__traits[type].quant) die("type %s has no quantizer", argv[6]);
    const int64_t E = p->n_embd, F = p->n_ff, hd = p->head_dim, H = p->n_head, HKV = p->n_head_kv;
    const int64_t D = p->d_state, KD = (int64_t)p->k_heads * D, VD = (int64_t)p->v_heads * D, CD = 2 * KD + VD;
    const int64_t X = p->n_expert, FS = p->n_ff_sh;
    if (E % infer_type_block(type) || F % infer_type_block(type) || VD % infer_type_block(type) || (H * hd) % infer_type_block(type))
        die("%s rows are not a whole number of %s blocks", p->name, infer_type_name(type));
    infer__rng rng;
    infer__rng_seed(&rng, 4321);
    tensor_list L = { calloc((size_t)(2 + 20 * p->n_layer), sizeof(infer_tensor)), 0 };
    char name[96];
    const float s_in = 1.0f / sqrtf((float)E), s_res = s_in / sqrtf(2.0f * p->n_layer);
    synth_tensor(&L, "token_embd.weight", type, E, p->n_vocab, 3.0f * s_in, &rng);
    synth_tensor(&L, "output_norm.weight", type, E, 0, 0, &rng);
    for (int l = 0; l < p->n_layer; l++) {
        fprintf(stderr, "\rsynth %s: layer %d/%d", p->name, l + 1, p->n_layer);
#define T(suffix, t, ne0, ne1, sigma) (snprintf(name, sizeof name, "blk.%d." suffix, l), synth_tensor(&L, name, t, ne0, ne1, sigma, &rng))
        T("attn_norm.weight", type, E, 0, 0);
        T("post_attention_norm.weight", type, E, 0, 0);
        if (X == 0) {
            T("ffn_gate.weight", type, E, F, s_in);
            T("ffn_up.weight", type, E, F, s_in);
            T("ffn_down.weight", type, F, E, s_res / sqrtf((float)F / E));
        } else {
#define T3(suffix, ne0, ne1, sigma) (snprintf(name, sizeof name, "blk.%d." suffix, l), synth_tensor3(&L, name, type, ne0, ne1, X, sigma, &rng))
            T("ffn_gate_inp.weight", INFER_TYPE_F32, E, X, s_in);
            T3("ffn_gate_exps.weight", E, F, s_in);
            T3("ffn_up_exps.weight", E, F, s_in);
            T3("ffn_down_exps.weight", F, E, s_res / sqrtf((float)F / E));
#undef T3
            T("ffn_gate_inp_shexp.weight", INFER_TYPE_F32, E, 1, s_in);
            T("ffn_gate_shexp.weight", type, E, FS, s_in);
            T("ffn_up_shexp.weight", type, E, FS, s_in);
            T("ffn_down_shexp.weight", type, FS, E, s_res / sqrtf((float)FS / E));
        }
        if ((l + 1) % p->interval == 0) {
            T("attn_q.weight", type, E, 2 * H * hd, s_in);          /* q and its output gate */
            T("attn_k.weight", type, E, HKV * hd, s_in);
            T("attn_v.weight", type, E, HKV * hd, s_in);
            T("attn_q_norm.weight", type, hd, 0, 0);
            T("attn_k_norm.weight", type, hd, 0, 0);
            T("attn_output.weight", type, H * hd, E, s_res);
        } else {
            T("attn_qkv.weight", type, E, CD, s_in);
            T("attn_gate.weight", type, E, VD, s_in);
            T("ssm_alpha.weight", INFER_TYPE_F32, E, p->v_heads, s_in);
            T("ssm_beta.weight", INFER_TYPE_F32, E, p->v_heads, s_in);
            T("ssm_conv1d.weight", INFER_TYPE_F32, p->conv, CD, 0.5f);
            T("ssm_dt.bias", INFER_TYPE_F32, p->v_heads, 0, 0.5f);
            T("ssm_a", INFER_TYPE_F32, p->v_heads, 0, 1.0f);
            float *a = (float *)L.t[L.n - 1].data;                   /* A = -exp(A_log), A_log ~ U(0, ln 16) */
            for (int i = 0; i < p->v_heads; i++) a[i] = -expf((float)infer__rng_uniform(&rng) * logf(16.0f));
            T("ssm_norm.weight", type, D, 0, 0);
            T("ssm_out.weight", type, VD, E, s_res);
        }
#undef T
    }
    fprintf(stderr, "\n");
    const int32_t third = (p->n_rot / 2 + 2) / 3;   /* n_rot 64 -> [11, 11, 10, 0] as Qwen3.5 ships */
    const int32_t sections[4] = { third, third, p->n_rot / 2 - 2 * third, 0 };
    infer_gguf_kv kv[32];
    char keys[32][64];
    int nkv = 0;
#define KEY(suffix) (snprintf(keys[nkv], sizeof keys[nkv], "%s." suffix, A), keys[nkv])
    kv[nkv] = infer_gguf_kv_str("general.architecture", A); nkv++;
    kv[nkv] = infer_gguf_kv_str("general.name", p->name); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("context_length"), 262144); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("embedding_length"), (uint32_t)E); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("block_count"), (uint32_t)p->n_layer); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("feed_forward_length"), (uint32_t)F); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count"), (uint32_t)H); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count_kv"), (uint32_t)HKV); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.key_length"), (uint32_t)hd); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.value_length"), (uint32_t)hd); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("rope.freq_base"), 1e7f); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("attention.layer_norm_rms_epsilon"), 1e-6f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("rope.dimension_count"), (uint32_t)p->n_rot); nkv++;
    kv[nkv] = infer_gguf_kv_array(KEY("rope.dimension_sections"), INFER_GGUF_I32, 4, sections); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("ssm.conv_kernel"), (uint32_t)p->conv); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("ssm.state_size"), (uint32_t)D); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("ssm.group_count"), (uint32_t)p->k_heads); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("ssm.time_step_rank"), (uint32_t)p->v_heads); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("ssm.inner_size"), (uint32_t)VD); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("full_attention_interval"), (uint32_t)p->interval); nkv++;
    if (X > 0) {
        kv[nkv] = infer_gguf_kv_u32(KEY("expert_count"), (uint32_t)X); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("expert_used_count"), (uint32_t)p->n_used); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("expert_feed_forward_length"), (uint32_t)F); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("expert_shared_feed_forward_length"), (uint32_t)FS); nkv++;
    }
#undef KEY
    infer_error err;
    if (infer_gguf_write(argv[4], kv, nkv, L.t, L.n, 32, &err) != INFER_OK) die("%s", err.msg);
    for (int i = 0; i < L.n; i++) { free((void *)L.t[i].name); free((void *)L.t[i].data); }
    free(L.t);
    return 0;
}

/* deepseek4: DeepSeek-V4's layout as the official converter writes it (>>deepseek4 in
 * infer.h): hyper-connections around every block and the head, a low-rank q, one K = V head
 * over a sliding window plus compressed entries (per-layer ratios), a grouped low-rank output,
 * a MoE of sqrt-softplus-scored experts in MXFP4 (as the converter stores them) with a shared
 * expert, and hash routing (an i32 token -> experts table) in the first layers. --type sets
 * the other matrices (default f16). */
typedef struct {
    const char *name;
    int n_embd, n_layer, n_head, head_dim, n_rot, q_lora, o_groups, o_lora, window, n_vocab;
    int n_expert, n_used, n_ff, n_hash, idx_heads, idx_dim, idx_top_k;
    int ratios[16];
} dsv4_t;
static const dsv4_t dsv4_presets[] = {
    /* the golden model's shape: SWA, CSA, HCA, CSA */
    { "tiny", 256, 4, 4, 64, 16, 128, 2, 64, 16, 320, 8, 2, 64, 1, 4, 64, 8, { 0, 4, 128, 4 } },
    /* V4-Flash's layer design at hidden 1024: 2 window-only layers, then CSA and HCA in turn;
     * 16 heads of 128 (rope on the last 64), q rank 512, 4 output groups of rank 256, window
     * 128, 64 experts of 512 (6 routed + 1 shared), 3 hash layers, an indexer of 16 x 64
     * choosing 128 entries, the real 129,280-token vocabulary size */
    { "deepseek4-small", 1024, 12, 16, 128, 64, 512, 4, 256, 128, 129280, 64, 6, 512, 3, 16, 64, 128,
      { 0, 0, 4, 128, 4, 128, 4, 128, 4, 128, 4, 128 } },
};

static int cmd_synth_deepseek4(int argc, char **argv) {
    const dsv4_t *p = NULL;
    for (size_t i = 0; i < sizeof dsv4_presets / sizeof dsv4_presets[0]; i++)
        if (!strcmp(dsv4_presets[i].name, argv[3])) p = &dsv4_presets[i];
    if (!p) die("unknown preset '%s %s' (have: deepseek4 tiny, deepseek4 deepseek4-small)", argv[2], argv[3]);
    infer_type type = argc == 7 ? parse_type(argv[6]) : INFER_TYPE_F16;
    if (type == INFER_TYPE_I2_S || !infer__traits[type].quant) die("type %s has no quantizer", argv[6]);
    const int64_t E = p->n_embd, H = p->n_head, d = p->head_dim, QL = p->q_lora, G = p->o_groups, R = p->o_lora, X = p->n_expert, F = p->n_ff;
    const int64_t HC = 4, n_mix = HC * (2 + HC), nI = p->idx_heads, dI = p->idx_dim;
    const int64_t rows[] = { E, QL, H * d / G, G * R, F };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i] % infer_type_block(type)) die("%s rows are not a whole number of %s blocks", p->name, infer_type_name(type));
    infer__rng rng;
    infer__rng_seed(&rng, 2468);
    tensor_list L = { calloc((size_t)(8 + 40 * p->n_layer), sizeof(infer_tensor)), 0 };
    char name[96];
    const float s_in = 1.0f / sqrtf((float)E), s_res = s_in / sqrtf(2.0f * p->n_layer);
    synth_tensor(&L, "token_embd.weight", type, E, p->n_vocab, 1.0f, &rng);
    synth_tensor(&L, "output.weight", type, E, p->n_vocab, 3.0f * s_in, &rng);
    synth_tensor(&L, "output_norm.weight", type, E, 0, 0, &rng);
    synth_tensor(&L, "output_hc_fn.weight", INFER_TYPE_F32, HC * E, HC, s_in, &rng);
    synth_tensor(&L, "output_hc_base.weight", INFER_TYPE_F32, HC, 0, 0.5f, &rng);
    synth_tensor(&L, "output_hc_scale.weight", INFER_TYPE_F32, 1, 0, 0.5f, &rng);
    for (int l = 0; l < p->n_layer; l++) {
        fprintf(stderr, "\rsynth %s: layer %d/%d", p->name, l + 1, p->n_layer);
        const int m = p->ratios[l];
        const int64_t coff = m == 4 ? 2 : 1;
#define T(suffix, t, ne0, ne1, sigma) (snprintf(name, sizeof name, "blk.%d." suffix, l), synth_tensor(&L, name, t, ne0, ne1, sigma, &rng))
#define T3(suffix, ne0, ne1, sigma) (snprintf(name, sizeof name, "blk.%d." suffix, l), synth_tensor3(&L, name, INFER_TYPE_MXFP4, ne0, ne1, X, sigma, &rng))
        T("attn_norm.weight", type, E, 0, 0);
        T("attn_sinks.weight", INFER_TYPE_F32, H, 0, 1.0f);
        T("attn_q_a.weight", type, E, QL, s_in);
        T("attn_q_a_norm.weight", type, QL, 0, 0);
        T("attn_q_b.weight", type, QL, H * d, 1.0f / sqrtf((float)QL));
        T("attn_kv.weight", type, E, d, s_in);
        T("attn_kv_a_norm.weight", type, d, 0, 0);
        T("attn_output_a.weight", type, H * d / G, G * R, 1.0f / sqrtf((float)(H * d / G)));
        T("attn_output_b.weight", type, G * R, E, s_res);
        T("hc_attn_fn.weight", INFER_TYPE_F32, HC * E, n_mix, s_in);
        T("hc_attn_base.weight", INFER_TYPE_F32, n_mix, 0, 0.5f);
        T("hc_attn_scale.weight", INFER_TYPE_F32, 3, 0, 0.5f);
        T("hc_ffn_fn.weight", INFER_TYPE_F32, HC * E, n_mix, s_in);
        T("hc_ffn_base.weight", INFER_TYPE_F32, n_mix, 0, 0.5f);
        T("hc_ffn_scale.weight", INFER_TYPE_F32, 3, 0, 0.5f);
        if (m) {
            T("attn_compressor_kv.weight", type, E, coff * d, s_in);
            T("attn_compressor_gate.weight", type, E, coff * d, s_in);
            T("attn_compressor_ape.weight", INFER_TYPE_F32, coff * d, m, 0.5f);
            T("attn_compressor_norm.weight", type, d, 0, 0);
        }
        if (m == 4) {
            T("indexer.proj.weight", type, E, nI, s_in);
            T("indexer.attn_q_b.weight", type, QL, nI * dI, 1.0f / sqrtf((float)QL));
            T("indexer_compressor_kv.weight", type, E, 2 * dI, s_in);
            T("indexer_compressor_gate.weight", type, E, 2 * dI, s_in);
            T("indexer_compressor_ape.weight", INFER_TYPE_F32, 2 * dI, 4, 0.5f);
            T("indexer_compressor_norm.weight", type, dI, 0, 0);
        }
        T("ffn_norm.weight", type, E, 0, 0);
        T("ffn_gate_inp.weight", INFER_TYPE_F32, E, X, s_in);
        T3("ffn_gate_exps.weight", E, F, s_in);
        T3("ffn_up_exps.weight", E, F, s_in);
        T3("ffn_down_exps.weight", F, E, s_res / sqrtf((float)F / E));
        T("ffn_gate_shexp.weight", type, E, F, s_in);
        T("ffn_up_shexp.weight", type, E, F, s_in);
        T("ffn_down_shexp.weight", type, F, E, s_res / sqrtf((float)F / E));
        if (l >= p->n_hash) {
            T("exp_probs_b.bias", INFER_TYPE_F32, X, 0, 0.1f);
        } else {                              /* the hash table: n_used distinct experts per token id */
            infer_tensor *t = &L.t[L.n++];
            memset(t, 0, sizeof *t);
            snprintf(name, sizeof name, "blk.%d.ffn_gate_tid2eid.weight", l);
            t->name = strdup(name);
            t->type = INFER_TYPE_I32;
            t->n_dims = 2;
            t->ne[0] = p->n_used; t->ne[1] = p->n_vocab; t->ne[2] = t->ne[3] = 1;
            t->nbytes = (size_t)p->n_used * (size_t)p->n_vocab * sizeof(int32_t);
            t->scale = 1.0f;
            int32_t *ids = malloc(t->nbytes);
            if (!ids) die("out of memory for %s", name);
            for (int64_t v = 0; v < p->n_vocab; v++)
                for (int s = 0; s < p->n_used; s++) ids[v * p->n_used + s] = (int32_t)((v * 7 + s * (X / p->n_used) + (int64_t)(infer__rng_next(&rng) % 3)) % X);
            t->data = ids;
        }
#undef T
#undef T3
    }
    fprintf(stderr, "\n");
    uint32_t ratios[16];
    float clamps[16];
    for (int l = 0; l < p->n_layer; l++) { ratios[l] = (uint32_t)p->ratios[l]; clamps[l] = 10.0f; }
    infer_gguf_kv kv[48];
    char keys[48][80];
    int nkv = 0;
#define KEY(suffix) (snprintf(keys[nkv], sizeof keys[nkv], "deepseek4." suffix), keys[nkv])
    kv[nkv] = infer_gguf_kv_str("general.architecture", "deepseek4"); nkv++;
    kv[nkv] = infer_gguf_kv_str("general.name", p->name); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("context_length"), 65536); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("embedding_length"), (uint32_t)E); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("block_count"), (uint32_t)p->n_layer); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("feed_forward_length"), (uint32_t)F); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count"), (uint32_t)H); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count_kv"), 1); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.key_length"), (uint32_t)d); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.value_length"), (uint32_t)d); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("rope.freq_base"), 10000.0f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("rope.dimension_count"), (uint32_t)p->n_rot); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("attention.layer_norm_rms_epsilon"), 1e-6f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_count"), (uint32_t)X); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_used_count"), (uint32_t)p->n_used); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_gating_func"), 4); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_feed_forward_length"), (uint32_t)F); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_shared_count"), 1); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("expert_weights_scale"), 1.5f); nkv++;
    kv[nkv] = infer_gguf_kv_bool(KEY("expert_weights_norm"), 1); nkv++;
    kv[nkv] = infer_gguf_kv_array(KEY("swiglu_clamp_exp"), INFER_GGUF_F32, (uint64_t)p->n_layer, clamps); nkv++;
    kv[nkv] = infer_gguf_kv_array(KEY("swiglu_clamp_shexp"), INFER_GGUF_F32, (uint64_t)p->n_layer, clamps); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.q_lora_rank"), (uint32_t)QL); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.sliding_window"), (uint32_t)p->window); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.indexer.head_count"), (uint32_t)nI); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.indexer.key_length"), (uint32_t)dI); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.indexer.top_k"), (uint32_t)p->idx_top_k); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.output_group_count"), (uint32_t)G); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.output_lora_rank"), (uint32_t)R); nkv++;
    kv[nkv] = infer_gguf_kv_array(KEY("attention.compress_ratios"), INFER_GGUF_U32, (uint64_t)p->n_layer, ratios); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("attention.compress_rope_freq_base"), 160000.0f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("hyper_connection.count"), (uint32_t)HC); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("hyper_connection.sinkhorn_iterations"), 20); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("hyper_connection.epsilon"), 1e-6f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("hash_layer_count"), (uint32_t)p->n_hash); nkv++;
#undef KEY
    infer_error err;
    if (infer_gguf_write(argv[4], kv, nkv, L.t, L.n, 32, &err) != INFER_OK) die("%s", err.msg);
    for (int i = 0; i < L.n; i++) { free((void *)L.t[i].name); free((void *)L.t[i].data); }
    free(L.t);
    return 0;
}

static int cmd_synth(int argc, char **argv) {
    if (argc != 5 && !(argc == 7 && !strcmp(argv[5], "--type"))) usage();
    if (!strcmp(argv[2], "qwen35") || !strcmp(argv[2], "qwen35moe")) return cmd_synth_qwen35(argc, argv);
    if (!strcmp(argv[2], "deepseek4")) return cmd_synth_deepseek4(argc, argv);
    const preset_t *p = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].arch, argv[2]) && !strcmp(presets[i].name, argv[3])) p = &presets[i];
    if (!p) die("unknown preset '%s %s' (have: llama llama-1b, llama tiny, bitnet bitnet-2b, bitnet tiny)", argv[2], argv[3]);
    /* q4_K_M: the reference quantizer's mix -- Q4_K, with Q6_K for the embedding and for
     * attn_v and ffn_down in the first and last eighth of the layers and every third between */
    const int q4km = argc == 7 && !strcmp(argv[6], "q4_K_M");
    infer_type type = q4km ? INFER_TYPE_Q4_K : argc == 7 ? parse_type(argv[6]) : INFER_TYPE_F16;
    if (type != INFER_TYPE_I2_S && !infer__traits[type].quant) die("type %s has no quantizer", argv[6]);
    /* bitnet: sub-norms before Wo and W_down, ReLU^2, logits from token_embd; with a ternary
     * type the embedding is Q6_K, as llama.cpp's TQ1_0/TQ2_0 quantization writes it */
    const int bitnet = !strcmp(p->arch, "bitnet");
    const infer_type embd_type = is_ternary(type) || q4km ? INFER_TYPE_Q6_K : type;
    const int64_t E = p->n_embd, Q = (int64_t)p->n_head * p->head_dim, KV = (int64_t)p->n_head_kv * p->head_dim;
    if (E % infer_type_block(type) || p->n_ff % infer_type_block(type) || Q % infer_type_block(type)) die("%s rows are not a whole number of %s blocks", p->name, infer_type_name(type));
    infer__rng rng;
    infer__rng_seed(&rng, 1234);
    tensor_list L = { calloc((size_t)(4 + 11 * p->n_layer), sizeof(infer_tensor)), 0 };
    char name[96];
    const float s_in = 1.0f / sqrtf((float)E), s_res = s_in / sqrtf(2.0f * p->n_layer);
    synth_tensor(&L, "token_embd.weight", embd_type, E, p->n_vocab, 3.0f * s_in, &rng);   /* tied logits: std ~3 */
    synth_tensor(&L, "output_norm.weight", type, E, 0, 0, &rng);
    if (!p->tied) synth_tensor(&L, "output.weight", type, E, p->n_vocab, 3.0f * s_in, &rng);
    for (int l = 0; l < p->n_layer; l++) {
        fprintf(stderr, "\rsynth %s: layer %d/%d", p->name, l + 1, p->n_layer);
        const int n8 = p->n_layer / 8, more_bits = l < n8 || l >= 7 * p->n_layer / 8 || (l - n8) % 3 == 2;
        const infer_type vd_type = q4km && more_bits ? INFER_TYPE_Q6_K : type;    /* attn_v, ffn_down */
#define TT(suffix, t, ne0, ne1, sigma) (snprintf(name, sizeof name, "blk.%d." suffix, l), synth_tensor(&L, name, t, ne0, ne1, sigma, &rng))
#define T(suffix, ne0, ne1, sigma) TT(suffix, type, ne0, ne1, sigma)
        T("attn_norm.weight", E, 0, 0);
        T("attn_q.weight", E, Q, s_in);
        T("attn_k.weight", E, KV, s_in);
        TT("attn_v.weight", vd_type, E, KV, s_in);
        T("attn_output.weight", Q, E, s_res);
        T("ffn_norm.weight", E, 0, 0);
        T("ffn_gate.weight", E, p->n_ff, s_in);
        T("ffn_up.weight", E, p->n_ff, s_in);
        TT("ffn_down.weight", vd_type, p->n_ff, E, s_res / sqrtf((float)p->n_ff / E));
        if (bitnet) { T("attn_sub_norm.weight", Q, 0, 0); T("ffn_sub_norm.weight", p->n_ff, 0, 0); }
#undef T
#undef TT
    }
    fprintf(stderr, "\n");
    char k[16][64];
    infer_gguf_kv kv[16];
    int nkv = 0;
#define KEY(suffix) (snprintf(k[nkv], sizeof k[nkv], "%s." suffix, p->arch), k[nkv])
    kv[nkv] = infer_gguf_kv_str("general.architecture", p->arch); nkv++;
    kv[nkv] = infer_gguf_kv_str("general.name", p->name); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("context_length"), 131072); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("embedding_length"), (uint32_t)E); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("block_count"), (uint32_t)p->n_layer); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("feed_forward_length"), (uint32_t)p->n_ff); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count"), (uint32_t)p->n_head); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count_kv"), (uint32_t)p->n_head_kv); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.key_length"), (uint32_t)p->head_dim); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.value_length"), (uint32_t)p->head_dim); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("rope.dimension_count"), (uint32_t)p->head_dim); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("rope.freq_base"), p->rope_base); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("attention.layer_norm_rms_epsilon"), 1e-5f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("vocab_size"), (uint32_t)p->n_vocab); nkv++;
    if (bitnet) { kv[nkv] = infer_gguf_kv_str(KEY("hidden_activation"), "relu2"); nkv++; }
#undef KEY
    infer_error err;
    if (infer_gguf_write(argv[4], kv, nkv, L.t, L.n, 32, &err) != INFER_OK) die("%s", err.msg);
    for (int i = 0; i < L.n; i++) { free((void *)L.t[i].name); free((void *)L.t[i].data); }
    free(L.t);
    return 0;
}

/* ---- llama2c: llama2.c's checkpoint and tokenizer formats ----
 * MODEL.bin:  i32 dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
 *             (vocab_size < 0: a separate classifier follows), then f32 arrays:
 *             token_embedding [vocab, dim]      rms_att [layers, dim]
 *             wq [layers, n_heads*hs, dim]      wk, wv [layers, n_kv_heads*hs, dim]
 *             wo [layers, dim, n_heads*hs]      rms_ffn [layers, dim]
 *             w1 [layers, hidden, dim]          w2 [layers, dim, hidden]   w3 [layers, hidden, dim]
 *             rms_final [dim]                   freq_cis_real, _imag [seq_len, hs/2] (unused)
 *             wcls [vocab, dim] (only when vocab_size < 0)
 *   Matrices are PyTorch [out, in] row-major: the same bytes as GGUF ne = {in, out}. llama2.c
 *   rotates adjacent pairs, which is GGUF llama's layout already: no q/k permutation.
 * TOKENIZER.bin: i32 max_token_length, then per token: f32 score, i32 len, bytes. Its export
 *   wrote SentencePiece's "▁" as a space and wrapped BOS/EOS in newlines; we undo both. */
static int cmd_llama2c(int argc, char **argv) {
    if (argc != 5) usage();
    size_t n, tn;
    uint8_t *mb = read_all(argv[2], &n), *tb = read_all(argv[3], &tn);
    int32_t cfg[7];
    if (n < sizeof cfg) die("'%s' is too short for a llama2.c header", argv[2]);
    memcpy(cfg, mb, sizeof cfg);
    const int dim = cfg[0], hidden = cfg[1], L = cfg[2], H = cfg[3], HKV = cfg[4], seq = cfg[6];
    const int shared = cfg[5] > 0, V = shared ? cfg[5] : -cfg[5];
    if (dim <= 0 || hidden <= 0 || L <= 0 || H <= 0 || HKV <= 0 || V <= 0 || seq <= 0 || dim % H || H % HKV || dim > (1 << 16) || hidden > (1 << 18) || L > 1024 || V > (1 << 22))
        die("'%s': implausible llama2.c header (dim %d hidden %d layers %d heads %d kv_heads %d vocab %d seq %d)", argv[2], dim, hidden, L, H, HKV, V, seq);
    const int64_t hs = dim / H, kvd = (int64_t)HKV * hs;
    /* sizes in floats of every array, in file order */
    const int64_t sizes[] = { (int64_t)V * dim, (int64_t)L * dim, (int64_t)L * dim * dim, (int64_t)L * kvd * dim, (int64_t)L * kvd * dim,
                              (int64_t)L * dim * dim, (int64_t)L * dim, (int64_t)L * hidden * dim, (int64_t)L * dim * hidden,
                              (int64_t)L * hidden * dim, dim, (int64_t)seq * hs / 2, (int64_t)seq * hs / 2, shared ? 0 : (int64_t)V * dim };
    const float *arr[14];
    size_t off = sizeof cfg;
    for (int i = 0; i < 14; i++) {
        if ((uint64_t)sizes[i] * 4 > n - off) die("'%s' is truncated (array %d needs %lld bytes at offset %zu)", argv[2], i, (long long)sizes[i] * 4, off);
        arr[i] = (const float *)(mb + off);
        off += (size_t)sizes[i] * 4;
    }
    /* tensors */
    infer_tensor *t = calloc((size_t)(3 + 9 * L), sizeof *t);
    char (*names)[64] = calloc((size_t)(3 + 9 * L), 64);
    int nt = 0;
#define ADD(nm, ptr, ne0, ne1) do { snprintf(names[nt], 64, "%s", nm); t[nt].name = names[nt]; t[nt].type = INFER_TYPE_F32; \
        t[nt].n_dims = (ne1) > 1 ? 2 : 1; t[nt].ne[0] = ne0; t[nt].ne[1] = ne1; t[nt].ne[2] = t[nt].ne[3] = 1; \
        t[nt].data = ptr; t[nt].nbytes = (size_t)(ne0) * (size_t)(ne1) * 4; nt++; } while (0)
    ADD("token_embd.weight", arr[0], dim, V);
    ADD("output_norm.weight", arr[10], dim, 1);
    if (!shared) ADD("output.weight", arr[13], dim, V);
    for (int l = 0; l < L; l++) {
        char nm[64];
#define LAYER(suffix, a, per, ne0, ne1) do { snprintf(nm, sizeof nm, "blk.%d." suffix, l); ADD(nm, arr[a] + (size_t)l * (per), ne0, ne1); } while (0)
        LAYER("attn_norm.weight", 1, dim, dim, 1);
        LAYER("attn_q.weight", 2, (size_t)dim * dim, dim, dim);
        LAYER("attn_k.weight", 3, (size_t)kvd * dim, dim, kvd);
        LAYER("attn_v.weight", 4, (size_t)kvd * dim, dim, kvd);
        LAYER("attn_output.weight", 5, (size_t)dim * dim, dim, dim);
        LAYER("ffn_norm.weight", 6, dim, dim, 1);
        LAYER("ffn_gate.weight", 7, (size_t)hidden * dim, dim, hidden);
        LAYER("ffn_down.weight", 8, (size_t)dim * hidden, hidden, dim);
        LAYER("ffn_up.weight", 9, (size_t)hidden * dim, dim, hidden);
#undef LAYER
    }
#undef ADD
    /* tokenizer: GGUF string array encoding (u64 length + bytes), scores, types */
    if (tn < 4) die("'%s' is too short for a llama2.c tokenizer", argv[3]);
    uint8_t *enc = malloc(tn * 4 + 64);
    float *scores = malloc(sizeof(float) * (size_t)V);
    int32_t *types = malloc(sizeof(int32_t) * (size_t)V);
    size_t ep = 0, tp = 4;
    for (int i = 0; i < V; i++) {
        float sc;
        int32_t len;
        if (tn - tp < 8) die("'%s': token %d is truncated", argv[3], i);
        memcpy(&sc, tb + tp, 4); memcpy(&len, tb + tp + 4, 4);
        tp += 8;
        if (len < 0 || (size_t)len > tn - tp) die("'%s': token %d has a bad length %d", argv[3], i, len);
        char piece[1024];
        size_t pl = 0;
        if (i == 1 || i == 2) pl = (size_t)snprintf(piece, sizeof piece, "%s", i == 1 ? "<s>" : "</s>");
        else for (int32_t k = 0; k < len && pl + 3 < sizeof piece; k++) {
            if (tb[tp + k] == ' ') { memcpy(piece + pl, "\xe2\x96\x81", 3); pl += 3; }   /* U+2581 */
            else piece[pl++] = (char)tb[tp + k];
        }
        tp += (size_t)len;
        uint64_t L64 = pl;
        memcpy(enc + ep, &L64, 8); memcpy(enc + ep + 8, piece, pl);
        ep += 8 + pl;
        scores[i] = sc;
        types[i] = i == 0 ? 2 : (i == 1 || i == 2) ? 3 : (pl == 6 && !memcmp(piece, "<0x", 3) && piece[5] == '>') ? 6 : 1;
    }
    char k[8][64];
    infer_gguf_kv kv[24];
    int nkv = 0;
    kv[nkv++] = infer_gguf_kv_str("general.architecture", "llama");
    kv[nkv++] = infer_gguf_kv_str("general.name", "llama");
    kv[nkv++] = infer_gguf_kv_u32("llama.context_length", (uint32_t)seq);
    kv[nkv++] = infer_gguf_kv_u32("llama.embedding_length", (uint32_t)dim);
    kv[nkv++] = infer_gguf_kv_u32("llama.feed_forward_length", (uint32_t)hidden);
    kv[nkv++] = infer_gguf_kv_u32("llama.attention.head_count", (uint32_t)H);
    kv[nkv++] = infer_gguf_kv_u32("llama.attention.head_count_kv", (uint32_t)HKV);
    kv[nkv++] = infer_gguf_kv_u32("llama.block_count", (uint32_t)L);
    kv[nkv++] = infer_gguf_kv_u32("llama.rope.dimension_count", (uint32_t)hs);
    kv[nkv++] = infer_gguf_kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    kv[nkv++] = infer_gguf_kv_str("tokenizer.ggml.model", "llama");
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.tokens", INFER_GGUF_STRING, (uint64_t)V, enc);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.scores", INFER_GGUF_F32, (uint64_t)V, scores);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.token_type", INFER_GGUF_I32, (uint64_t)V, types);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.unknown_token_id", 0);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.bos_token_id", 1);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.eos_token_id", 2);
    (void)k;
    infer_error err;
    if (infer_gguf_write(argv[4], kv, nkv, t, nt, 32, &err) != INFER_OK) die("%s", err.msg);
    fprintf(stderr, "wrote %s: llama dim %d, %d layers, %d heads (%d kv), vocab %d, %d tensors\n", argv[4], dim, L, H, HKV, V, nt);
    free(t); free(names); free(enc); free(scores); free(types); free(mb); free(tb);
    return 0;
}

/* ---- Hugging Face folders ----
 * infer_hf_load gives the GGUF the official converter would write (tensors mapped in place
 * from the safetensors shards); --type re-encodes the 2-D weights as cmd_quantize does.
 * Progress goes to stderr per tensor: quantizing is the slow part with --type, reading the
 * shards (the first touch of the mapped pages) without. */
static int cmd_hf(int argc, char **argv) {
    if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--type"))) usage();
    const char *dir = argv[1], *out_path = argv[2];
    infer_type to = argc == 5 ? parse_type(argv[4]) : INFER_TYPE_COUNT;
    if (argc == 5 && to != INFER_TYPE_I2_S && (!infer__type(to) || !infer__type(to)->quant)) die("type %s has no quantizer", argv[4]);
    infer_gguf g;
    infer_error err;
    const double t0 = infer_time_seconds();
    if (infer_hf_load(&g, dir, &err) != INFER_OK) die("%s: %s", dir, err.msg);
    infer_tensor *out = calloc((size_t)g.n_tensors + 1, sizeof *out);
    void **owned = calloc((size_t)g.n_tensors + 1, sizeof(void *));
    uint64_t total = 0, done = 0;
    for (int64_t i = 0; i < g.n_tensors; i++) total += g.tensors[i].nbytes;
    for (int64_t i = 0; i < g.n_tensors; i++) {
        const infer_tensor *t = &g.tensors[i];
        out[i] = *t;
        if (to != INFER_TYPE_COUNT && wants_quant(t, to) && t->type != to) owned[i] = requant(t, to, &out[i]);
        else {
            volatile uint8_t sink = 0;   /* read the mapped shard now, with progress, not silently in the write */
            for (size_t b = 0; b < t->nbytes; b += 4096) sink ^= ((const uint8_t *)t->data)[b];
            (void)sink;
        }
        done += t->nbytes;
        fprintf(stderr, "\r[%lld/%lld] %5.1f%% %-40s %s", (long long)i + 1, (long long)g.n_tensors, total ? 100.0 * (double)done / (double)total : 100.0,
                t->name, infer_type_name(out[i].type));
    }
    fprintf(stderr, "\n");
    /* general.file_type describes the source types; with --type it no longer holds */
    infer_gguf_kv *kv = calloc((size_t)g.n_kv + 1, sizeof *kv);
    int64_t nkv = 0;
    for (int64_t i = 0; i < g.n_kv; i++) if (to == INFER_TYPE_COUNT || !infer__str_eq(g.kv[i].key, "general.file_type")) kv[nkv++] = g.kv[i];
    if (infer_gguf_write(out_path, kv, nkv, out, g.n_tensors, 32, &err) != INFER_OK) die("%s", err.msg);
    uint64_t bytes = 0;
    for (int64_t i = 0; i < g.n_tensors; i++) bytes += out[i].nbytes;
    fprintf(stderr, "wrote %s: %lld tensors, %.1f MB of weights, %lld metadata entries, %.1f s\n", out_path, (long long)g.n_tensors, (double)bytes / 1e6,
            (long long)nkv, infer_time_seconds() - t0);
    for (int64_t i = 0; i < g.n_tensors; i++) free(owned[i]);
    free(owned); free(out); free(kv);
    infer_gguf_free(&g);
    return 0;
}

static int cmd_vocab(int argc, char **argv) {
    if (argc != 4) usage();
    infer_gguf g;
    infer_error err;
    if (infer_hf_vocab(&g, argv[2], &err) != INFER_OK) die("%s: %s", argv[2], err.msg);
    if (infer_gguf_write(argv[3], g.kv, g.n_kv, NULL, 0, 32, &err) != INFER_OK) die("%s", err.msg);
    const infer_gguf_kv *toks = infer_gguf_find(&g, "tokenizer.ggml.tokens");
    fprintf(stderr, "wrote %s: %llu tokens, %lld metadata entries\n", argv[3], toks ? (unsigned long long)toks->arr_n : 0ull, (long long)g.n_kv);
    infer_gguf_free(&g);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    if (!strcmp(argv[1], "dequant")) return cmd_dequant(argc, argv);
    if (!strcmp(argv[1], "quant")) return cmd_quant(argc, argv);
    if (!strcmp(argv[1], "quantize")) return cmd_quantize(argc, argv);
    if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
    if (!strcmp(argv[1], "synth")) return cmd_synth(argc, argv);
    if (!strcmp(argv[1], "llama2c")) return cmd_llama2c(argc, argv);
    if (!strcmp(argv[1], "vocab")) return cmd_vocab(argc, argv);
    if (is_dir(argv[1])) return cmd_hf(argc, argv);
    fprintf(stderr, "convert: unknown command '%s'\n", argv[1]);
    usage();
    return 1;
}
