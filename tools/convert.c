/* tools/convert.c -- converting weights and models with infer.h's own readers, writers and
 * quantizers.
 *
 *   convert dequant TYPE IN OUT              raw blocks of TYPE -> raw little-endian f32
 *   convert quant TYPE IN OUT --cols N       raw f32 rows of N values -> raw blocks of TYPE
 *   convert quantize IN.gguf OUT.gguf --type FTYPE [--pure]
 *                                            re-encode a model's weight matrices: FTYPE is a
 *                                            llama-quantize file type (Q4_K_M, Q6_K, ...) with
 *                                            its per-tensor choices, or a plain TYPE for all of
 *                                            them (--pure: the file type's base type for all);
 *                                            norms, biases and other small tensors stay
 *   convert info FILE                        metadata and tensor table of a GGUF or safetensors
 *                                            file, or of the GGUF a Hugging Face folder becomes
 *   convert HF_FOLDER OUT.gguf [--type FTYPE] a Hugging Face folder (config.json, *.safetensors,
 *                                            tokenizer.json) as the GGUF the official converter
 *                                            writes; FTYPE re-encodes the weights as quantize does
 *   convert vocab TOKENIZER.json OUT.gguf    a vocabulary-only GGUF from tokenizer.json (and the
 *                                            tokenizer_config.json / config.json beside it)
 *   convert llama2c MODEL.bin TOKENIZER.bin OUT.gguf
 *                                            a llama2.c checkpoint and tokenizer as GGUF
 *   convert synth ARCH PRESET OUT.gguf [--type TYPE] [--vocab TOKENIZER.json]
 *                                            a random-weight model with a real model's shape
 *                                            and GGUF layout (for benchmarks), with a tokenizer
 *                                            of its family (generated, or --vocab's); presets below
 *
 * -t N (any command): threads for quantizing (default: the cores this process may use);
 * which thread quantizes a row never changes its bytes.
 *
 * TYPE is a ggml type name, in any case: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K
 * q5_K q6_K iq1_s iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq4_nl iq4_xs tq1_0 tq2_0 mxfp4 nvfp4
 * q1_0 q2_0 i2_s.
 */
#define INFER_IMPLEMENTATION
#include "../infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>

static void die(const char *fmt, ...) {
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;   /* quantizing threads: one message, one exit */
    pthread_mutex_lock(&once);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "convert: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* every allocation is checked: a size no machine has is a message, not a crash */
static void *xmalloc(size_t n, const char *what) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory for %s (%zu bytes)", what, n);
    return p;
}
static void *xcalloc(size_t n, size_t size, const char *what) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die("out of memory for %s (%zu x %zu bytes)", what, n, size);
    return p;
}

/* ---- quantizing rows on every core ----
 * The rows of a matrix are independent, so they are quantized by -t threads at once, each
 * taking 16 rows at a time from a counter. With `from` set, a row is first decoded from that
 * tensor and checked (quantize, and a Hugging Face folder with --type); otherwise x holds the
 * rows as floats (synth). */
static int n_threads;             /* -t N; 0 until main sets it */
static void check_row(const infer_tensor *t, int64_t r, const float *x, int64_t K);
typedef struct {
    infer_type to; int64_t K, rows; size_t row_bytes;
    const float *x; const infer_tensor *from;
    uint8_t *q;
    atomic_llong next;
} quant_job;
static void *quant_rows_part(void *arg) {
    quant_job *j = (quant_job *)arg;
    float *row = j->from ? xmalloc((size_t)j->K * sizeof(float), "a row") : NULL;
    for (int64_t r0; (r0 = atomic_fetch_add(&j->next, 16)) < j->rows;)
        for (int64_t r = r0; r < r0 + 16 && r < j->rows; r++) {
            const float *x = j->x + (size_t)r * (size_t)j->K;
            if (j->from) { infer__dequant_row(j->from, r, row); check_row(j->from, r, row, j->K); x = row; }
            infer__traits[j->to].quant(x, j->q + (size_t)r * j->row_bytes, j->K);
        }
    free(row);
    return NULL;
}
static void quant_rows(infer_type to, int64_t K, int64_t rows, const float *x, const infer_tensor *from, uint8_t *q) {
    quant_job j = { to, K, rows, infer_type_row_size(to, K), x, from, q, 0 };
    int n = n_threads < 1 ? 1 : n_threads;
    if (n > (rows + 15) / 16) n = (int)((rows + 15) / 16);
    pthread_t th[256];
    int started = 0;
    while (started < n - 1 && started < 256 && pthread_create(&th[started], NULL, quant_rows_part, &j) == 0) started++;
    quant_rows_part(&j);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}

/* every synth preset, for usage and the unknown-preset message */
static const char *const synth_names[] = { "llama llama-1b", "llama tiny", "bitnet bitnet-2b", "bitnet tiny", "qwen35 qwen35-0.8b",
                                          "qwen35 tiny", "qwen35moe qwen35moe-small", "qwen35moe tiny", "deepseek4 deepseek4-small",
                                          "deepseek4 tiny" };

static void unknown_preset(const char *arch, const char *name) {
    fprintf(stderr, "convert: unknown preset '%s %s' (have:", arch, name);
    for (size_t i = 0; i < sizeof synth_names / sizeof synth_names[0]; i++) fprintf(stderr, " %s%s", synth_names[i], i + 1 < sizeof synth_names / sizeof synth_names[0] ? "," : ")\n");
    exit(1);
}

static void usage(FILE *f, int code) {
    fputs("usage:\n"
          "  convert dequant TYPE IN OUT\n"
          "  convert quant TYPE IN OUT --cols N\n"
          "  convert quantize IN.gguf OUT.gguf --type FTYPE [--pure]\n"
          "  convert info FILE.gguf|FILE.safetensors|HF_FOLDER\n"
          "  convert HF_FOLDER OUT.gguf [--type FTYPE]\n"
          "  convert vocab TOKENIZER.json OUT.gguf\n"
          "  convert llama2c MODEL.bin TOKENIZER.bin OUT.gguf\n"
          "  convert synth ARCH PRESET OUT.gguf [--type FTYPE [--pure]] [--vocab TOKENIZER.json]\n"
          "                                          (llama and bitnet presets: an FTYPE's per-tensor\n"
          "                                          choices as quantize makes them; the others: one type)\n"
          "  -t N (with any command): threads for quantizing (default: every core)\n"
          "\n"
          "TYPE: a ggml type name, any case (q4_0, Q8_0, q4_k, tq2_0, i2_s, ...).\n"
          "FTYPE: a file type as llama-quantize names them -- Q4_K_M, Q4_K_S, Q5_K_M, Q5_K_S, Q6_K, Q3_K_M,\n"
          "  Q3_K_S, Q3_K_L, Q2_K, IQ4_XS, IQ4_NL, Q4_0, Q8_0, TQ2_0, MXFP4_MOE, F16, ... -- with the\n"
          "  reference's per-tensor choices (output at Q6_K, more bits for some attn_v / ffn_down, ...),\n"
          "  or a plain type (every quantizable matrix in that type; --pure does this for a file type).\n"
          "\n"
          "synth presets:", f);
    for (size_t i = 0; i < sizeof synth_names / sizeof synth_names[0]; i++) fprintf(f, " %s%s", synth_names[i], i + 1 < sizeof synth_names / sizeof synth_names[0] ? "," : "\n");
    exit(code);
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

static const char *known_types(void);

/* a ggml type name, any case */
static infer_type parse_type(const char *name) {
    int t = infer_type_from_name(name);
    if (t < 0 || infer_type_block((infer_type)t) == 0) die("unknown type '%s' (%s)", name, known_types());
    return (infer_type)t;
}

/* IN holds whole rows of blocks; with no row length given, the file is one run of blocks */
static int cmd_dequant(int argc, char **argv) {
    if (argc != 5) usage(stderr, 1);
    infer_type t = parse_type(argv[2]);
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    const size_t bs = infer_type_row_size(t, infer_type_block(t));
    if (t == INFER_TYPE_I2_S) {
        /* I2_S: n/4 packed bytes + 32 bytes holding the f32 scale */
        if (n < 32 || (n - 32) % 32) die("'%s': %zu bytes is not an i2_s tensor (4 codes per byte in 32-byte groups + 32)", argv[3], n);
        int64_t count = (int64_t)(n - 32) * 4;
        float *out = xmalloc((size_t)count * sizeof(float), "the values"), scale;
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
    if (argc != 7 || strcmp(argv[5], "--cols") != 0) usage(stderr, 1);
    infer_type t = parse_type(argv[2]);
    char *end;
    long cols = strtol(argv[6], &end, 10);
    if (*end || cols <= 0) die("bad --cols '%s'", argv[6]);
    if (cols % infer_type_block(t)) die("row length %ld is not a multiple of %s's block size %d", cols, argv[2], infer_type_block(t));
    size_t n;
    uint8_t *in = read_all(argv[3], &n);
    if (n == 0 || n % ((size_t)cols * 4)) die("'%s': %zu bytes is not a whole number of %ld-value f32 rows", argv[3], n, cols);
    const int64_t rows = (int64_t)(n / ((size_t)cols * 4));
    float *x = xmalloc(n, "the values");
    memcpy(x, in, n);
    if (t == INFER_TYPE_I2_S) {
        /* one tensor: packed rows, then the shared scale */
        const int64_t bad = infer__first_nonfinite(x, rows * cols);
        if (bad >= 0) die("'%s': value %lld is %g: only finite numbers can be quantized", argv[3], (long long)bad, (double)x[bad]);
        size_t bytes = (size_t)(rows * cols) / 4 + 32;
        uint8_t *out = xcalloc(1, bytes, "the blocks");
        infer__quant_i2_s(x, out, rows * cols);
        write_all(argv[4], out, bytes);
        free(out); free(x); free(in);
        return 0;
    }
    const size_t row_bytes = infer_type_row_size(t, cols);
    uint8_t *out = xmalloc(row_bytes * (size_t)rows, "the blocks");
    infer_error err;
    for (int64_t r = 0; r < rows; r++)
        if (infer_quantize(t, x + r * cols, out + (size_t)r * row_bytes, cols, &err) != INFER_OK) die("'%s' row %lld: %s", argv[3], (long long)r, err.msg);
    write_all(argv[4], out, row_bytes * (size_t)rows);
    free(out); free(x); free(in);
    return 0;
}

static void print_line(void *user, const char *line) { (void)user; printf("%s\n", line); }

/* the same text as `infer --info` (one function in infer.h prints both) */
static void print_gguf(const infer_gguf *g) { infer_gguf_describe(g, print_line, NULL); }

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
    if (argc != 3) usage(stderr, 1);
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

/* ---- quantize: llama-quantize's file types ----
 * A file type such as Q4_K_M is a mixture: a base type for most matrices and exceptions
 * where quantization error costs the most -- the output matrix (and a tied embedding) at
 * Q6_K, attn_v and ffn_down at Q6_K in the first and last eighth of the layers and every
 * third layer between, and so on per type. The choices below restate llama.cpp's
 * llama_tensor_get_type (src/llama-quant.cpp) rule for rule, so a file made here holds
 * the same tensor types as the reference's for the same model; the few inputs it reads
 * are the tensor names, the layer count, GQA ratio and expert count. Tensors walk in the
 * reference's order (by layer, then by name), which the "i-th attn_v" counters depend on.
 * A matrix whose rows are not whole blocks of its type falls back to a compatible type,
 * with a warning, as the reference does. A plain type name that is not a file type
 * (mxfp4, nvfp4, i2_s), or --pure, puts every quantizable matrix in that one type. */
enum {   /* llama_ftype numbers, as general.file_type stores them */
    FT_F32 = 0, FT_F16 = 1, FT_Q4_0 = 2, FT_Q4_1 = 3, FT_Q8_0 = 7, FT_Q5_0 = 8, FT_Q5_1 = 9, FT_Q2_K = 10, FT_Q3_K_S = 11,
    FT_Q3_K_M = 12, FT_Q3_K_L = 13, FT_Q4_K_S = 14, FT_Q4_K_M = 15, FT_Q5_K_S = 16, FT_Q5_K_M = 17, FT_Q6_K = 18,
    FT_IQ2_XXS = 19, FT_IQ2_XS = 20, FT_Q2_K_S = 21, FT_IQ3_XS = 22, FT_IQ3_XXS = 23, FT_IQ1_S = 24, FT_IQ4_NL = 25,
    FT_IQ3_S = 26, FT_IQ3_M = 27, FT_IQ2_S = 28, FT_IQ2_M = 29, FT_IQ4_XS = 30, FT_IQ1_M = 31, FT_BF16 = 32,
    FT_TQ1_0 = 36, FT_TQ2_0 = 37, FT_MXFP4_MOE = 38, FT_Q1_0 = 40, FT_Q2_0 = 41
};
typedef struct { const char *name; int ftype; infer_type base; } ftype_t;
static const ftype_t ftypes[] = {
    { "Q1_0", FT_Q1_0, INFER_TYPE_Q1_0 }, { "Q2_0", FT_Q2_0, INFER_TYPE_Q2_0 }, { "Q4_0", FT_Q4_0, INFER_TYPE_Q4_0 },
    { "Q4_1", FT_Q4_1, INFER_TYPE_Q4_1 }, { "MXFP4_MOE", FT_MXFP4_MOE, INFER_TYPE_MXFP4 }, { "Q5_0", FT_Q5_0, INFER_TYPE_Q5_0 },
    { "Q5_1", FT_Q5_1, INFER_TYPE_Q5_1 }, { "IQ2_XXS", FT_IQ2_XXS, INFER_TYPE_IQ2_XXS }, { "IQ2_XS", FT_IQ2_XS, INFER_TYPE_IQ2_XS },
    { "IQ2_S", FT_IQ2_S, INFER_TYPE_IQ2_XS }, { "IQ2_M", FT_IQ2_M, INFER_TYPE_IQ2_S }, { "IQ1_S", FT_IQ1_S, INFER_TYPE_IQ1_S },
    { "IQ1_M", FT_IQ1_M, INFER_TYPE_IQ1_M }, { "TQ1_0", FT_TQ1_0, INFER_TYPE_TQ1_0 }, { "TQ2_0", FT_TQ2_0, INFER_TYPE_TQ2_0 },
    { "Q2_K", FT_Q2_K, INFER_TYPE_Q2_K }, { "Q2_K_S", FT_Q2_K_S, INFER_TYPE_Q2_K }, { "IQ3_XXS", FT_IQ3_XXS, INFER_TYPE_IQ3_XXS },
    { "IQ3_S", FT_IQ3_S, INFER_TYPE_IQ3_S }, { "IQ3_M", FT_IQ3_M, INFER_TYPE_IQ3_S }, { "Q3_K", FT_Q3_K_M, INFER_TYPE_Q3_K },
    { "IQ3_XS", FT_IQ3_XS, INFER_TYPE_IQ3_S }, { "Q3_K_S", FT_Q3_K_S, INFER_TYPE_Q3_K }, { "Q3_K_M", FT_Q3_K_M, INFER_TYPE_Q3_K },
    { "Q3_K_L", FT_Q3_K_L, INFER_TYPE_Q3_K }, { "IQ4_NL", FT_IQ4_NL, INFER_TYPE_IQ4_NL }, { "IQ4_XS", FT_IQ4_XS, INFER_TYPE_IQ4_XS },
    { "Q4_K", FT_Q4_K_M, INFER_TYPE_Q4_K }, { "Q4_K_S", FT_Q4_K_S, INFER_TYPE_Q4_K }, { "Q4_K_M", FT_Q4_K_M, INFER_TYPE_Q4_K },
    { "Q5_K", FT_Q5_K_M, INFER_TYPE_Q5_K }, { "Q5_K_S", FT_Q5_K_S, INFER_TYPE_Q5_K }, { "Q5_K_M", FT_Q5_K_M, INFER_TYPE_Q5_K },
    { "Q6_K", FT_Q6_K, INFER_TYPE_Q6_K }, { "Q8_0", FT_Q8_0, INFER_TYPE_Q8_0 }, { "F16", FT_F16, INFER_TYPE_F16 },
    { "BF16", FT_BF16, INFER_TYPE_BF16 }, { "F32", FT_F32, INFER_TYPE_F32 },
};
#define N_FTYPES ((int)(sizeof ftypes / sizeof ftypes[0]))

static const char *known_types(void) {   /* for error messages */
    static char list[1024];
    size_t n = (size_t)snprintf(list, sizeof list, "file types:");
    for (int i = 0; i < N_FTYPES; i++) n += (size_t)snprintf(list + n, sizeof list - n, " %s", ftypes[i].name);
    n += (size_t)snprintf(list + n, sizeof list - n, "; plain types:");
    for (int t = 0; t <= INFER_TYPE_COUNT; t++) {
        const infer_type ty = t == INFER_TYPE_COUNT ? INFER_TYPE_I2_S : (infer_type)t;
        if (t < INFER_TYPE_COUNT && (!infer__type(ty) || !infer__type(ty)->quant)) continue;
        n += (size_t)snprintf(list + n, sizeof list - n, " %s", infer_type_name(ty));
    }
    return list;
}

/* a file type by name, any case; NULL if none */
static const ftype_t *find_ftype(const char *name) {
    for (int i = 0; i < N_FTYPES; i++) {
        const char *a = ftypes[i].name, *b = name;
        while (*a && *b && (*a | 32) == (*b | 32)) a++, b++;
        if (!*a && !*b) return &ftypes[i];
    }
    return NULL;
}

/* the one type of a synth preset that takes no file type (qwen35, qwen35moe, deepseek4) */
static infer_type synth_plain_type(const char *arch, const char *name) {
    const int t = infer_type_from_name(name);
    if ((t < 0 || infer_type_block((infer_type)t) == 0) && find_ftype(name))
        die("synth %s writes every matrix in one type: '%s' is a file type (a mix of types); give a plain type (q4_K, q8_0, ...), "
            "or synth f16 and `convert quantize` the file with --type %s", arch, name, name);
    return parse_type(name);
}

enum { CAT_OTHER, CAT_OUTPUT, CAT_TOKEN_EMBD, CAT_ATTN_QKV, CAT_ATTN_KV_B, CAT_ATTN_V, CAT_ATTN_K, CAT_ATTN_Q,
       CAT_ATTN_OUTPUT, CAT_FFN_UP, CAT_FFN_GATE, CAT_FFN_DOWN };
static int tensor_category(const char *n) {
    if (!strcmp(n, "output.weight")) return CAT_OUTPUT;
    if (!strcmp(n, "token_embd.weight") || !strcmp(n, "per_layer_token_embd.weight")) return CAT_TOKEN_EMBD;
    if (strstr(n, "attn_qkv.weight")) return CAT_ATTN_QKV;
    if (strstr(n, "attn_kv_b.weight")) return CAT_ATTN_KV_B;
    if (strstr(n, "attn_v.weight")) return CAT_ATTN_V;
    if (strstr(n, "attn_k.weight")) return CAT_ATTN_K;
    if (strstr(n, "attn_q.weight")) return CAT_ATTN_Q;
    if (strstr(n, "attn_output.weight")) return CAT_ATTN_OUTPUT;
    if (strstr(n, "ffn_up")) return CAT_FFN_UP;
    if (strstr(n, "ffn_gate")) return CAT_FFN_GATE;
    if (strstr(n, "ffn_down")) return CAT_FFN_DOWN;
    return CAT_OTHER;
}
/* attn_v-like: the tensors quantization error hurts most */
static int cat_attn_v(int c) { return c == CAT_ATTN_V || c == CAT_ATTN_QKV || c == CAT_ATTN_KV_B; }

/* dimensions up to the last one that is not 1 (what ggml counts, and writes) */
static int real_dims(const infer_tensor *t) {
    int n = t->n_dims;
    while (n > 1 && t->ne[n - 1] == 1) n--;
    return n;
}

/* may this tensor be quantized at all (llama.cpp's tensor_allows_quantization)? */
static int may_quantize(const infer_tensor *t) {
    static const char *const never[] = { "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
        "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
        "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight",
        "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
        "time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
        "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_",
        ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
        "hc_", "_compressor_ape.weight", NULL };   /* deepseek4's stream mixes and window offsets stay f32 */
    const size_t n = strlen(t->name);
    if (real_dims(t) < 2 || n < 6 || strcmp(t->name + n - 6, "weight") || t->type == INFER_TYPE_I32) return 0;
    if (!strcmp(t->name, "position_embd.weight") || !strcmp(t->name, "token_types.weight")) return 0;
    for (int i = 0; never[i]; i++) if (strstr(t->name, never[i])) return 0;
    return 1;
}

/* what the mixture needs to know about the model */
typedef struct {
    const char *arch;
    int n_layer, n_gqa, n_expert, is_70b, tied;
    int n_attn_v, i_attn_v, i_ffn_down, i_ffn_gate, i_ffn_up;
} qmodel_t;

static int gguf_u32(const infer_gguf *g, const char *arch, const char *suffix, int dflt) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return dflt;
    if (kv->type == INFER_GGUF_ARRAY && kv->arr_n > 0 && (kv->arr_type == INFER_GGUF_U32 || kv->arr_type == INFER_GGUF_I32)) {   /* per-layer: the first */
        int32_t v;
        memcpy(&v, kv->arr_data, 4);
        return v;
    }
    return infer__kv_is_int(kv) ? (int)infer__kv_int(kv) : dflt;
}

static int use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

/* the layer of a tensor: with experts, from its name ("blk.N."); else the category's counter */
static int layer_of(const qmodel_t *q, int counter, const char *name) {
    int l = counter;
    if (q->n_expert > 1 && (sscanf(name, "blk.%d.", &l) != 1 || l < 0 || l >= q->n_layer)) die("cannot tell the layer of tensor %s", name);
    return l;
}

/* llama_tensor_get_type's mixture rules for one tensor (base: the file type's type) */
static infer_type mixture_type(qmodel_t *q, const infer_tensor *t, int ft, infer_type type, int cat) {
    const int falcon = !strcmp(q->arch, "falcon"), n_exp = q->n_expert;
    const int iq_low = ft == FT_IQ2_XXS || ft == FT_IQ2_XS || ft == FT_IQ1_S || ft == FT_IQ2_S || ft == FT_IQ2_M || ft == FT_IQ1_M;
    if (cat == CAT_OUTPUT || (q->tied && cat == CAT_TOKEN_EMBD)) {
        if (ft == FT_MXFP4_MOE || falcon || t->ne[0] % infer_type_block(type)) return INFER_TYPE_Q8_0;
        if (iq_low || ft == FT_IQ3_XXS) return INFER_TYPE_Q5_K;
        return type != INFER_TYPE_Q8_0 ? INFER_TYPE_Q6_K : type;
    }
    if (ft == FT_MXFP4_MOE) return real_dims(t) > 2 && t->ne[2] > 1 ? INFER_TYPE_MXFP4 : INFER_TYPE_Q8_0;   /* experts MXFP4 */
    if (cat == CAT_TOKEN_EMBD) {
        if (ft == FT_IQ2_XXS || ft == FT_IQ2_XS || ft == FT_IQ1_S || ft == FT_IQ1_M) return INFER_TYPE_Q2_K;
        if (ft == FT_IQ2_S || ft == FT_IQ2_M || ft == FT_IQ3_XXS) return INFER_TYPE_IQ3_S;
        if (ft == FT_TQ1_0 || ft == FT_TQ2_0 || ft == FT_Q2_0) return INFER_TYPE_Q4_K;
        return type;
    }
    if (iq_low) {
        const int iq2sm = ft == FT_IQ2_S || ft == FT_IQ2_M;
        if (cat_attn_v(cat)) {
            q->i_attn_v++;
            return q->n_gqa >= 4 || n_exp >= 4 ? INFER_TYPE_Q4_K : iq2sm ? INFER_TYPE_IQ3_S : INFER_TYPE_Q2_K;
        }
        if (n_exp == 8 && cat == CAT_ATTN_K) return INFER_TYPE_Q4_K;
        if (cat == CAT_FFN_DOWN) {
            const int first = q->i_ffn_down++ < q->n_layer / 8;
            return first ? (iq2sm ? INFER_TYPE_IQ3_S : INFER_TYPE_Q2_K) : type;
        }
        if (cat == CAT_ATTN_OUTPUT) {
            if (n_exp == 8) return INFER_TYPE_Q5_K;
            if (ft == FT_IQ1_S || ft == FT_IQ1_M) return INFER_TYPE_IQ2_XXS;
            if (iq2sm) return INFER_TYPE_IQ3_S;
        }
        return type;
    }
    if (cat_attn_v(cat)) {
        const int i = q->i_attn_v++, gqa4 = q->n_gqa >= 4;
        if (ft == FT_Q2_K) type = gqa4 ? INFER_TYPE_Q4_K : INFER_TYPE_Q3_K;
        else if (ft == FT_Q2_K_S && gqa4) type = INFER_TYPE_Q4_K;
        else if (ft == FT_IQ3_XXS) type = gqa4 ? INFER_TYPE_Q4_K : INFER_TYPE_IQ3_S;   /* (IQ3_XXS with an importance matrix) */
        else if ((ft == FT_IQ3_XS || ft == FT_IQ3_S) && gqa4) type = INFER_TYPE_Q4_K;
        else if (ft == FT_IQ3_M) type = INFER_TYPE_Q4_K;
        else if (ft == FT_Q3_K_M) type = i < 2 ? INFER_TYPE_Q5_K : INFER_TYPE_Q4_K;
        else if (ft == FT_Q3_K_L) type = INFER_TYPE_Q5_K;
        else if ((ft == FT_IQ4_NL || ft == FT_IQ4_XS) && gqa4) type = INFER_TYPE_Q5_K;
        else if ((ft == FT_Q4_K_M || ft == FT_Q5_K_M) && use_more_bits(i, q->n_attn_v)) type = INFER_TYPE_Q6_K;
        else if (ft == FT_Q4_K_S && i < 4) type = INFER_TYPE_Q5_K;
        if (q->is_70b && (type == INFER_TYPE_Q3_K || type == INFER_TYPE_Q4_K)) type = INFER_TYPE_Q5_K;   /* 8 heads share attn_v */
        if (n_exp == 8) type = INFER_TYPE_Q8_0;
        return type;
    }
    if (cat == CAT_ATTN_K) {
        if (n_exp == 8) return INFER_TYPE_Q8_0;
        if (ft == FT_IQ3_XS) return INFER_TYPE_IQ3_XXS;
        if (ft == FT_IQ3_XXS) return INFER_TYPE_IQ2_S;
        return type;
    }
    if (cat == CAT_ATTN_Q) {
        if (ft == FT_IQ3_XS) return INFER_TYPE_IQ3_XXS;
        if (ft == FT_IQ3_XXS) return INFER_TYPE_IQ2_S;
        return type;
    }
    if (cat == CAT_FFN_DOWN) {
        const int l = layer_of(q, q->i_ffn_down++, t->name), n = q->n_layer;
        if (ft == FT_Q2_K) return INFER_TYPE_Q3_K;
        if (ft == FT_Q2_K_S) return l < n / 8 ? INFER_TYPE_Q4_K : type;
        if (ft == FT_IQ3_XXS) return l < n / 8 ? INFER_TYPE_Q4_K : INFER_TYPE_Q3_K;
        if (ft == FT_Q3_K_M) return l < n / 16 ? INFER_TYPE_Q5_K : !falcon || use_more_bits(l, n) ? INFER_TYPE_Q4_K : INFER_TYPE_Q3_K;
        if (ft == FT_IQ3_M && (l < n / 8 || (n_exp == 8 && use_more_bits(l, n)))) return INFER_TYPE_Q4_K;
        if (ft == FT_Q3_K_L) return falcon ? INFER_TYPE_Q4_K : INFER_TYPE_Q5_K;
        if (ft == FT_Q4_K_M) {
            if (falcon) return l < n / 16 ? INFER_TYPE_Q6_K : use_more_bits(l, n) ? INFER_TYPE_Q5_K : INFER_TYPE_Q4_K;
            return use_more_bits(l, n) ? INFER_TYPE_Q6_K : type;
        }
        if (l < n / 8 && (ft == FT_IQ4_NL || ft == FT_IQ4_XS)) return INFER_TYPE_Q5_K;
        if (ft == FT_Q5_K_M && use_more_bits(l, n)) return INFER_TYPE_Q6_K;
        if (ft == FT_Q4_K_S && !falcon && l < n / 8) return INFER_TYPE_Q5_K;
        return type;
    }
    if (cat == CAT_ATTN_OUTPUT) {
        if (falcon) return ft == FT_Q3_K_L ? INFER_TYPE_Q4_K : type;
        if (n_exp == 8) {
            const int bump = ft == FT_Q2_K || ft == FT_IQ3_XS || ft == FT_IQ3_XXS || ft == FT_Q3_K_S || ft == FT_Q3_K_M || ft == FT_IQ4_NL ||
                             ft == FT_Q4_K_S || ft == FT_Q4_K_M || ft == FT_IQ3_S || ft == FT_IQ3_M || ft == FT_IQ4_XS;
            return bump ? INFER_TYPE_Q5_K : type;
        }
        if (ft == FT_Q2_K) return INFER_TYPE_Q3_K;
        if (ft == FT_IQ3_XXS) return INFER_TYPE_IQ3_S;
        if (ft == FT_Q3_K_M || ft == FT_IQ3_M) return INFER_TYPE_Q4_K;
        if (ft == FT_Q3_K_L) return INFER_TYPE_Q5_K;
        return type;
    }
    if (cat == CAT_FFN_GATE || cat == CAT_FFN_UP) {
        const int l = layer_of(q, cat == CAT_FFN_GATE ? q->i_ffn_gate++ : q->i_ffn_up++, t->name), n = q->n_layer;
        return ft == FT_IQ3_XS && l >= n / 8 && l < 7 * n / 8 ? INFER_TYPE_IQ3_XXS : type;
    }
    return type;
}

/* rows that are not whole blocks of `type`: the reference's fallback, with a warning */
static infer_type fit_type(const infer_tensor *t, infer_type type) {
    const int64_t cols = t->ne[0];
    const int blk = type == INFER_TYPE_I2_S ? 1 : infer_type_block(type);
    if (cols % blk == 0) return type;
    infer_type to;
    switch (type) {
    case INFER_TYPE_IQ1_S: case INFER_TYPE_IQ1_M: case INFER_TYPE_IQ2_XXS: case INFER_TYPE_IQ2_XS: case INFER_TYPE_IQ2_S:
    case INFER_TYPE_IQ3_XXS: case INFER_TYPE_IQ3_S: case INFER_TYPE_IQ4_XS: to = INFER_TYPE_IQ4_NL; break;
    case INFER_TYPE_Q2_0: case INFER_TYPE_Q2_K: case INFER_TYPE_Q3_K: case INFER_TYPE_TQ1_0: case INFER_TYPE_TQ2_0: to = INFER_TYPE_Q4_0; break;
    case INFER_TYPE_Q4_K: to = INFER_TYPE_Q5_0; break;
    case INFER_TYPE_Q5_K: to = INFER_TYPE_Q5_1; break;
    case INFER_TYPE_Q6_K: to = INFER_TYPE_Q8_0; break;
    default: to = INFER_TYPE_Q8_0; break;      /* the reference has no fallback for these types and gives up */
    }
    if (cols % infer_type_block(to)) to = INFER_TYPE_F16;
    fprintf(stderr, "warning: %s: %lld columns are not a multiple of %s's block of %d: %s instead\n", t->name, (long long)cols,
            infer_type_name(type), blk, infer_type_name(to));
    return to;
}

static int type_is_quantized(infer_type t) { return t != INFER_TYPE_F32 && t != INFER_TYPE_F16 && t != INFER_TYPE_BF16; }

/* a tensor that `spec` puts in a type infer has no quantizer for stops the run, named */
static void need_quantizer(const char *tensor, const char *spec, infer_type type) {
    if (type != INFER_TYPE_I2_S && type_is_quantized(type) && !infer__type(type)->quant)
        die("%s: %s needs the %s quantizer, which infer does not have", tensor, spec, infer_type_name(type));
}

/* the sort order of the reference's tensor walk: by layer (none first), then by name */
static const infer_tensor *sort_base;
static int by_layer_name(const void *a, const void *b) {
    const infer_tensor *x = &sort_base[*(const int64_t *)a], *y = &sort_base[*(const int64_t *)b];
    int lx = -1, ly = -1;
    sscanf(x->name, "blk.%d.", &lx);
    sscanf(y->name, "blk.%d.", &ly);
    return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->name, y->name);
}

/* The type each tensor of g gets for `spec` (a file type, or a plain type): plan[i]. With
 * pure, every quantizable matrix gets the file type's base type. Returns the file type (-1
 * for a plain type). */
static int quant_plan(const infer_gguf *g, const char *spec, int pure, infer_type *plan) {
    const ftype_t *ft = find_ftype(spec);
    infer_type base;
    if (ft) base = ft->base;
    else {
        int t = infer_type_from_name(spec);
        if (t < 0 || (t != INFER_TYPE_I2_S && !infer__type((infer_type)t)->quant)) die("unknown type '%s' (%s)", spec, known_types());
        base = (infer_type)t;
        pure = 1;
    }
    qmodel_t q;
    memset(&q, 0, sizeof q);
    const infer_gguf_kv *a = infer_gguf_find(g, "general.architecture");
    static char arch[64];
    snprintf(arch, sizeof arch, "%.*s", a && a->type == INFER_GGUF_STRING ? (int)(a->v.s.len < 63 ? a->v.s.len : 63) : 0, a ? a->v.s.ptr : "");
    q.arch = arch;
    q.n_layer = gguf_u32(g, arch, "block_count", 0);
    const int n_head = gguf_u32(g, arch, "attention.head_count", 0), n_head_kv = gguf_u32(g, arch, "attention.head_count_kv", n_head);
    q.n_gqa = n_head_kv > 0 ? n_head / n_head_kv : 0;
    q.n_expert = gguf_u32(g, arch, "expert_count", 0);
    /* the reference's 70B class: 80-layer llama with GQA, 80-layer qwen2 */
    q.is_70b = q.n_layer == 80 && ((!strcmp(arch, "llama") && n_head != n_head_kv) || !strcmp(arch, "qwen2"));
    q.tied = !infer_gguf_tensor(g, "output.weight");
    for (int64_t i = 0; i < g->n_tensors; i++) q.n_attn_v += cat_attn_v(tensor_category(g->tensors[i].name));
    int64_t *order = malloc(sizeof(int64_t) * (size_t)(g->n_tensors + 1));
    if (!order) die("out of memory");
    for (int64_t i = 0; i < g->n_tensors; i++) order[i] = i;
    sort_base = g->tensors;
    qsort(order, (size_t)g->n_tensors, sizeof *order, by_layer_name);
    int needs_imatrix = 0, experts_only = 0;
    /* a plain FP4 type is an expert format: in a MoE model only the experts take it */
    for (int64_t i = 0; i < g->n_tensors && !ft && (base == INFER_TYPE_MXFP4 || base == INFER_TYPE_NVFP4); i++)
        experts_only |= strstr(g->tensors[i].name, "_exps.") != NULL;
    for (int64_t k = 0; k < g->n_tensors; k++) {
        const infer_tensor *t = &g->tensors[order[k]];
        infer_type type = t->type;
        if (may_quantize(t) && (!experts_only || strstr(t->name, "_exps."))) {
            type = base;
            if (type_is_quantized(base)) {
                if (!pure) type = mixture_type(&q, t, ft->ftype, base, tensor_category(t->name));
                type = fit_type(t, type);
            }
            /* the reference refuses these types without an importance matrix (which infer has not) */
            const int iq = type == INFER_TYPE_IQ3_XXS || type == INFER_TYPE_IQ2_XXS || type == INFER_TYPE_IQ2_XS ||
                           type == INFER_TYPE_IQ2_S || type == INFER_TYPE_IQ1_M || type == INFER_TYPE_IQ1_S;
            const int cat = tensor_category(t->name);
            if (cat != CAT_OUTPUT && cat != CAT_TOKEN_EMBD && (iq || (type == INFER_TYPE_Q2_K && ft && ft->ftype == FT_Q2_K_S))) needs_imatrix = 1;
            need_quantizer(t->name, spec, type);
        }
        plan[order[k]] = type;
    }
    free(order);
    if (needs_imatrix) die("%s needs an importance matrix (as in the reference engine); infer cannot make it", spec);
    return ft ? ft->ftype : -1;
}

/* a dequantized row must be finite before it is quantized: NaN / Inf weights are an error
 * (the quantizers' scale searches have nothing to fit) */
static void check_row(const infer_tensor *t, int64_t r, const float *x, int64_t K) {
    const int64_t bad = infer__first_nonfinite(x, K);
    if (bad >= 0) die("tensor '%s': row %lld, column %lld is %g: only finite weights can be quantized", t->name, (long long)r, (long long)bad, (double)x[bad]);
}

/* t re-encoded as `to` into *out (the same name and shape); returns the new bytes. The row
 * count comes from the shape (the parser checked it against the bytes); a tensor without
 * elements has nothing to quantize. */
static void *requant(const infer_tensor *t, infer_type to, infer_tensor *out) {
    const infer__type_traits *tt = to == INFER_TYPE_I2_S ? NULL : infer__type(to);
    const int64_t K = t->ne[0], rows = t->ne[1] * t->ne[2] * t->ne[3];
    if (K <= 0 || rows <= 0)
        die("tensor '%s' has no elements (shape [%lld, %lld, %lld, %lld]): nothing to quantize", t->name, (long long)t->ne[0], (long long)t->ne[1],
            (long long)t->ne[2], (long long)t->ne[3]);
    float *row = xmalloc((size_t)K * sizeof(float), t->name);
    size_t bytes = to == INFER_TYPE_I2_S ? (size_t)(K * rows) / 4 + 32 : infer_type_row_size(to, K) * (size_t)rows;
    uint8_t *q = xcalloc(1, bytes, t->name);
    *out = *t;
    out->type = to;
    out->data = q;
    out->nbytes = bytes;
    if (to == INFER_TYPE_I2_S) {
        float *all = xmalloc((size_t)(K * rows) * sizeof(float), t->name);
        for (int64_t r = 0; r < rows; r++) { infer__dequant_row(t, r, all + r * K); check_row(t, r, all + r * K, K); }
        infer__quant_i2_s(all, q, K * rows);
        out->scale = infer__i2_s_scale(q, K * rows);
        free(all);
    } else {
        (void)tt;
        quant_rows(to, K, rows, NULL, t, q);
    }
    free(row);
    return q;
}

/* the tensors of g re-encoded by plan (out[i] views g's bytes where the type stays) */
static void apply_plan(const infer_gguf *g, const infer_type *plan, infer_tensor *out, void **owned) {
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const infer_tensor *t = &g->tensors[i];
        out[i] = *t;
        out[i].n_dims = real_dims(t);   /* as ggml writes shapes: no trailing 1 */
        if (plan[i] == t->type) continue;
        owned[i] = requant(t, plan[i], &out[i]);
        out[i].n_dims = real_dims(t);
        fprintf(stderr, "\r[%lld/%lld] %-40s -> %-8s", (long long)i + 1, (long long)g->n_tensors, t->name, infer_type_name(plan[i]));
    }
    fprintf(stderr, "\n");
}

/* g's metadata with general.file_type set to ftype (dropped when ftype < 0: a plain type) */
static infer_gguf_kv *plan_metadata(const infer_gguf *g, int ftype, int64_t *nkv) {
    infer_gguf_kv *kv = calloc((size_t)g->n_kv + 2, sizeof *kv);
    if (!kv) die("out of memory");
    *nkv = 0;
    for (int64_t i = 0; i < g->n_kv; i++)
        if (!infer__str_eq(g->kv[i].key, "general.file_type") && !infer__str_eq(g->kv[i].key, "general.quantization_version")) kv[(*nkv)++] = g->kv[i];
    if (ftype >= 0) {
        kv[(*nkv)++] = infer_gguf_kv_u32("general.quantization_version", 2);
        kv[(*nkv)++] = infer_gguf_kv_u32("general.file_type", (uint32_t)ftype);
    }
    return kv;
}

static int cmd_quantize(int argc, char **argv) {
    int pure = argc == 7 && !strcmp(argv[6], "--pure");
    if ((argc != 6 && !pure) || strcmp(argv[4], "--type") != 0) usage(stderr, 1);
    size_t n;
    uint8_t *p = read_all(argv[2], &n);
    infer_gguf g;
    infer_error err;
    if (infer_gguf_parse(&g, p, n, &err) != INFER_OK) die("%s: %s", argv[2], err.msg);
    infer_type *plan = xcalloc((size_t)g.n_tensors + 1, sizeof *plan, "the tensor table");
    infer_tensor *out = xcalloc((size_t)g.n_tensors + 1, sizeof *out, "the tensor table");
    void **owned = xcalloc((size_t)g.n_tensors + 1, sizeof(void *), "the tensor table");
    const int ftype = quant_plan(&g, argv[5], pure, plan);
    apply_plan(&g, plan, out, owned);
    int64_t nkv;
    infer_gguf_kv *kv = plan_metadata(&g, ftype, &nkv);
    if (infer_gguf_write(argv[3], kv, nkv, out, g.n_tensors, (uint32_t)g.alignment, &err) != INFER_OK) die("%s", err.msg);
    for (int64_t i = 0; i < g.n_tensors; i++) free(owned[i]);
    free(owned); free(out); free(kv); free(plan);
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
    t->name = strcpy(xmalloc(strlen(name) + 1, name), name);
    t->n_dims = ne2 > 1 ? 3 : ne1 ? 2 : 1;
    t->ne[0] = ne0; t->ne[1] = ne1 ? ne1 : 1; t->ne[2] = ne2; t->ne[3] = 1;
    if (!ne1) type = INFER_TYPE_F32;
    t->type = type;
    const int64_t rows = t->ne[1] * ne2;
    const size_t row_bytes = infer_type_row_size(type, ne0);
    const int i2_s = type == INFER_TYPE_I2_S;   /* one scale for the whole tensor: quantized at once */
    t->nbytes = i2_s ? (size_t)(ne0 * rows) / 4 + 32 : row_bytes * (size_t)rows;
    uint8_t *data = xcalloc(1, t->nbytes, name);
    /* the rows drawn in order (the same numbers whatever -t is), a chunk of up to 4M values
     * at a time, each chunk quantized on every core; I2_S's one scale needs all rows at once */
    const int64_t chunk = i2_s ? rows : (((int64_t)4 << 20) / ne0 > 0 ? ((int64_t)4 << 20) / ne0 : 1);
    float *row = xmalloc((size_t)ne0 * (size_t)(chunk < rows ? chunk : rows) * sizeof(float), name);
    const float s3 = sigma * sqrtf(1.5f);
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t n = rows - r0 < chunk ? rows - r0 : chunk;
        for (int64_t r = 0; r < n; r++) {
            float *x = row + r * ne0;
            for (int64_t i = 0; i < ne0; i++)
                x[i] = sigma == 0 ? 1.0f : is_ternary(type) ? s3 * (float)((int)(infer__rng_next(rng) % 3) - 1) : sigma * gauss(rng);
        }
        if (!i2_s) quant_rows(type, ne0, n, row, NULL, data + (size_t)r0 * row_bytes);
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

/* ---- synth: the tokenizer ----
 * A synth model gets a vocabulary of its family's kind, so that a prompt tokenizes, the
 * reply detokenizes, --chat works, and the reference engine loads the file (it refuses a
 * GGUF without tokenizer.ggml.model). With --vocab TOKENIZER.json it is a real one (e.g.
 * ../shared/tokenizers/llama3/tokenizer.json for the llama and bitnet presets), padded to
 * the preset's size. Without, one is generated here, the same every time: byte-level BPE
 * (GPT-2's 256 byte tokens, then merges " e", " t", ..., "ee", "et", ... and longer pieces
 * built on them), the family's pre-tokenizer and special tokens at the ids the real models
 * use (shifted down when the preset's vocabulary is smaller), and a chat template of the
 * family's layout. The text it makes of random weights is noise either way; what matters
 * is that every layer of the pipeline has something real to chew. */
typedef struct {
    const char *pre, *template;
    int32_t first_special;              /* the real models' id of specials[0] */
    const char *const *specials;        /* control tokens, in id order */
    int bos, eos, pad;                  /* indices into specials, -1 = none */
    int add_bos;
    const char *reserved;               /* printf pattern for the rest of the ids, or NULL: [PAD<i>] */
} vocab_family_t;
static const char *const llama3_specials[] = { "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>", "<|start_header_id|>",
    "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>", NULL };
static const char *const chatml_specials[] = { "<|endoftext|>", "<|im_start|>", "<|im_end|>", NULL };
static const vocab_family_t vocab_llama3 = {
    "llama-bpe",
    "{{- bos_token }}{%- for m in messages %}{{- '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + m['content'] | trim + "
    "'<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}",
    128000, llama3_specials, 0, 1, -1, 1, "<|reserved_special_token_%d|>" };
/* DeepSeek-V3/V4's turn markers: fullwidth bars (U+FF5C), U+2581 for the spaces */
#define DS_BAR "\xEF\xBD\x9C"
#define DS_SP "\xE2\x96\x81"
static const char *const deepseek_specials[] = { "<" DS_BAR "begin" DS_SP "of" DS_SP "sentence" DS_BAR ">",
    "<" DS_BAR "end" DS_SP "of" DS_SP "sentence" DS_BAR ">", "<" DS_BAR DS_SP "pad" DS_SP DS_BAR ">",
    "<" DS_BAR "User" DS_BAR ">", "<" DS_BAR "Assistant" DS_BAR ">", NULL };
static const vocab_family_t vocab_deepseek = {
    "deepseek-v3",
    "{{- bos_token }}{%- for m in messages %}{%- if m['role'] == 'user' %}{{- '<" DS_BAR "User" DS_BAR ">' + m['content'] }}"
    "{%- elif m['role'] == 'assistant' %}{{- '<" DS_BAR "Assistant" DS_BAR ">' + m['content'] + eos_token }}"
    "{%- else %}{{- m['content'] }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<" DS_BAR "Assistant" DS_BAR ">' }}{%- endif %}",
    128800, deepseek_specials, 0, 1, 2, 1, NULL };
#undef DS_BAR
#undef DS_SP
static const vocab_family_t vocab_qwen35 = {
    "qwen35",
    "{%- for m in messages %}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
    248044, chatml_specials, -1, 2, 0, 0, NULL };

/* GPT-2's bytes_to_unicode: printable bytes stay, the other 68 map to U+0100.. in order */
static int byte_char(int b) {
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) return b;
    int k = 0;
    for (int c = 0; c < b; c++) k += !((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF));
    return 0x100 + k;
}

typedef struct { uint8_t *p; size_t n, cap; } bytes_t;
static void bytes_put(bytes_t *b, const void *s, size_t n) {
    if (b->n + n > b->cap) { b->cap = (b->n + n) * 2 + 1024; if (!(b->p = realloc(b->p, b->cap))) die("out of memory"); }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
static void gguf_string(bytes_t *b, const char *s, size_t n) { uint64_t len = n; bytes_put(b, &len, 8); bytes_put(b, s, n); }

/* what a synth tokenizer owns until the file is written */
typedef struct { bytes_t tokens, merges; int32_t *types; infer_gguf hf; int has_hf; char *tmpl; } synth_vocab_t;

/* the generated vocabulary of `fam` with n_vocab tokens */
static void gen_vocab(synth_vocab_t *v, const vocab_family_t *fam, int32_t n_vocab, int32_t *bos, int32_t *eos, int32_t *pad) {
    int n_spec = 0;
    while (fam->specials[n_spec]) n_spec++;
    const int32_t first = fam->first_special + n_spec <= n_vocab ? fam->first_special : n_vocab - n_spec;
    if (first < 256 + 64) die("a vocabulary of %d tokens is too small for a synth tokenizer", n_vocab);
    v->types = malloc(sizeof(int32_t) * (size_t)n_vocab);
    char **text = calloc((size_t)n_vocab, sizeof(char *));
    if (!v->types || !text) die("out of memory");
    struct { char *key; int value; } *seen = NULL;
    sh_new_strdup(seen);
    for (int b = 0; b < 256; b++) {
        char u[8];
        u[infer__utf8_encode((uint32_t)byte_char(b), u)] = 0;
        text[b] = strdup(u);
        v->types[b] = 1;
        shput(seen, u, 1);
    }
    /* merges: " x" pairs, letter pairs, then each new piece extended by a letter */
    static const char letters[] = "etaoinshrdlucmfwypvbgkjqxz";
    const char *space = "\xC4\xA0";   /* U+0120, the byte-level space */
    int32_t n = 256, from = 256;
    for (int stage = 0; n < first; stage++) {
        for (int i = 0; n < first && (stage > 1 ? from < n : i < (stage == 0 ? 26 : 26 * 26)); i++) {
            char l[64], r[8];
            if (stage == 0) { snprintf(l, sizeof l, "%s", space); snprintf(r, sizeof r, "%c", letters[i]); }
            else if (stage == 1) { snprintf(l, sizeof l, "%c", letters[i / 26]); snprintf(r, sizeof r, "%c", letters[i % 26]); }
            else { snprintf(l, sizeof l, "%s", text[from + i / 26]); snprintf(r, sizeof r, "%c", letters[i % 26]); if (i % 26 == 25) { from++; i = -1; } }
            char cat[80];
            snprintf(cat, sizeof cat, "%s%s", l, r);
            if (shgeti(seen, cat) >= 0 || strlen(cat) > 48) continue;
            shput(seen, cat, 1);
            char m[96];
            int ml = snprintf(m, sizeof m, "%s %s", l, r);
            gguf_string(&v->merges, m, (size_t)ml);
            text[n] = strdup(cat);
            v->types[n++] = 1;
        }
        if (stage > 1 && from >= n) die("cannot generate %d merges", first - 256);
    }
    for (int i = 0; i < n_spec; i++) { text[first + i] = strdup(fam->specials[i]); v->types[first + i] = 3; }   /* control */
    for (int32_t i = first + n_spec; i < n_vocab; i++) {
        char r[64];
        if (fam->reserved) snprintf(r, sizeof r, fam->reserved, i - first - n_spec + 3);
        else snprintf(r, sizeof r, "[PAD%d]", i);
        text[i] = strdup(r);
        v->types[i] = fam->reserved ? 3 : 5;   /* control, or unused */
    }
    for (int32_t i = 0; i < n_vocab; i++) { gguf_string(&v->tokens, text[i], strlen(text[i])); free(text[i]); }
    free(text);
    shfree(seen);
    *bos = fam->bos >= 0 ? first + fam->bos : -1;
    *eos = fam->eos >= 0 ? first + fam->eos : -1;
    *pad = fam->pad >= 0 ? first + fam->pad : -1;
}

/* appends the tokenizer's keys to kv (room for 16 more); v owns their bytes */
static int synth_tokenizer(infer_gguf_kv *kv, synth_vocab_t *v, const vocab_family_t *fam, int32_t n_vocab, const char *vocab_json) {
    int nkv = 0;
    memset(v, 0, sizeof *v);
    if (vocab_json) {   /* a real vocabulary: tokenizer.json's keys, padded to n_vocab */
        infer_error err;
        if (infer_hf_vocab(&v->hf, vocab_json, &err) != INFER_OK) die("%s: %s", vocab_json, err.msg);
        v->has_hf = 1;
        const infer_gguf_kv *toks = infer_gguf_find(&v->hf, "tokenizer.ggml.tokens"), *types = infer_gguf_find(&v->hf, "tokenizer.ggml.token_type");
        if (!toks || !types || types->arr_n != toks->arr_n) die("%s: no token list", vocab_json);
        if (toks->arr_n > (uint64_t)n_vocab) die("%s has %llu tokens, more than the preset's %d", vocab_json, (unsigned long long)toks->arr_n, n_vocab);
        infer__cursor c = { toks->arr_data, (size_t)-1, 0 };
        v->types = malloc(sizeof(int32_t) * (size_t)n_vocab);
        if (!v->types) die("out of memory");
        for (int32_t i = 0; i < n_vocab; i++) {
            if ((uint64_t)i < toks->arr_n) {
                infer_str str;
                infer__read_str(&c, &str);
                gguf_string(&v->tokens, str.ptr, (size_t)str.len);
                memcpy(&v->types[i], types->arr_data + 4 * (size_t)i, 4);
            } else {
                char pad[32];
                gguf_string(&v->tokens, pad, (size_t)snprintf(pad, sizeof pad, "[PAD%d]", i));
                v->types[i] = 5;
            }
        }
        for (int64_t i = 0; i < v->hf.n_kv; i++) {
            const infer_gguf_kv *k = &v->hf.kv[i];
            if (!strncmp(k->key.ptr, "tokenizer.", 10) && !infer__str_eq(k->key, "tokenizer.ggml.tokens") && !infer__str_eq(k->key, "tokenizer.ggml.token_type")) {
                if (nkv >= 12) die("%s: too many tokenizer keys", vocab_json);
                kv[nkv++] = *k;
            }
        }
        kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.tokens", INFER_GGUF_STRING, (uint64_t)n_vocab, v->tokens.p);
        kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.token_type", INFER_GGUF_I32, (uint64_t)n_vocab, v->types);
        return nkv;
    }
    int32_t bos, eos, pad;
    gen_vocab(v, fam, n_vocab, &bos, &eos, &pad);
    kv[nkv++] = infer_gguf_kv_str("tokenizer.ggml.model", "gpt2");
    kv[nkv++] = infer_gguf_kv_str("tokenizer.ggml.pre", fam->pre);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.tokens", INFER_GGUF_STRING, (uint64_t)n_vocab, v->tokens.p);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.token_type", INFER_GGUF_I32, (uint64_t)n_vocab, v->types);
    int64_t n_merges = 0;
    for (size_t off = 0; off < v->merges.n; n_merges++) { uint64_t len; memcpy(&len, v->merges.p + off, 8); off += 8 + len; }
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.merges", INFER_GGUF_STRING, (uint64_t)n_merges, v->merges.p);
    if (bos >= 0) kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.bos_token_id", (uint32_t)bos);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.eos_token_id", (uint32_t)eos);
    if (pad >= 0) kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.padding_token_id", (uint32_t)pad);
    kv[nkv++] = infer_gguf_kv_bool("tokenizer.ggml.add_bos_token", fam->add_bos);
    kv[nkv++] = infer_gguf_kv_str("tokenizer.chat_template", fam->template);
    return nkv;
}

static void synth_vocab_free(synth_vocab_t *v) {
    free(v->tokens.p); free(v->merges.p); free(v->types);
    if (v->has_hf) infer_gguf_free(&v->hf);
}

/* --vocab FILE, taken out of argv (so the preset commands see their usual arguments) */
static const char *synth_vocab_path;

/* the preset's vocabulary size, or the --vocab file's when that is larger (the embedding grows) */
static int32_t synth_n_vocab(int32_t n) {
    if (!synth_vocab_path) return n;
    infer_gguf g;
    infer_error err;
    if (infer_hf_vocab(&g, synth_vocab_path, &err) != INFER_OK) die("%s: %s", synth_vocab_path, err.msg);
    const infer_gguf_kv *toks = infer_gguf_find(&g, "tokenizer.ggml.tokens");
    if (toks && toks->arr_n > (uint64_t)n && toks->arr_n < (1u << 24)) n = (int32_t)toks->arr_n;
    infer_gguf_free(&g);
    return n;
}


/* the synthesized model to `path` (32-byte alignment); the tensors and the vocabulary freed */
static int synth_write(const char *path, const infer_gguf_kv *kv, int nkv, tensor_list *L, synth_vocab_t *vocab) {
    infer_error err;
    if (infer_gguf_write(path, kv, nkv, L->t, L->n, 32, &err) != INFER_OK) die("%s", err.msg);
    for (int i = 0; i < L->n; i++) { free((void *)L->t[i].name); free((void *)L->t[i].data); }
    free(L->t);
    synth_vocab_free(vocab);
    return 0;
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
    if (!p) unknown_preset(argv[2], argv[3]);
    hybrid_t sized = *p;
    sized.n_vocab = synth_n_vocab(p->n_vocab);
    p = &sized;
    const char *A = p->arch;
    infer_type type = argc == 7 ? synth_plain_type(argv[2], argv[6]) : INFER_TYPE_F16;
    if (type == INFER_TYPE_I2_S || !infer__traits[type].quant) die("type %s has no quantizer", argv[6]);
    const int64_t E = p->n_embd, F = p->n_ff, hd = p->head_dim, H = p->n_head, HKV = p->n_head_kv;
    const int64_t D = p->d_state, KD = (int64_t)p->k_heads * D, VD = (int64_t)p->v_heads * D, CD = 2 * KD + VD;
    const int64_t X = p->n_expert, FS = p->n_ff_sh;
    if (E % infer_type_block(type) || F % infer_type_block(type) || VD % infer_type_block(type) || (H * hd) % infer_type_block(type))
        die("%s rows are not a whole number of %s blocks", p->name, infer_type_name(type));
    infer__rng rng;
    infer__rng_seed(&rng, 4321);
    tensor_list L = { xcalloc((size_t)(2 + 20 * p->n_layer), sizeof(infer_tensor), "the tensor table"), 0 };
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
    infer_gguf_kv kv[48];   /* the model's keys, then the tokenizer's */
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
    synth_vocab_t vocab;
    nkv += synth_tokenizer(kv + nkv, &vocab, &vocab_qwen35, p->n_vocab, synth_vocab_path);
    return synth_write(argv[4], kv, nkv, &L, &vocab);
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
    if (!p) unknown_preset(argv[2], argv[3]);
    dsv4_t sized = *p;
    sized.n_vocab = synth_n_vocab(p->n_vocab);
    p = &sized;
    infer_type type = argc == 7 ? synth_plain_type(argv[2], argv[6]) : INFER_TYPE_F16;
    if (type == INFER_TYPE_I2_S || !infer__traits[type].quant) die("type %s has no quantizer", argv[6]);
    const int64_t E = p->n_embd, H = p->n_head, d = p->head_dim, QL = p->q_lora, G = p->o_groups, R = p->o_lora, X = p->n_expert, F = p->n_ff;
    const int64_t HC = 4, n_mix = HC * (2 + HC), nI = p->idx_heads, dI = p->idx_dim;
    const int64_t rows[] = { E, QL, H * d / G, G * R, F };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i] % infer_type_block(type)) die("%s rows are not a whole number of %s blocks", p->name, infer_type_name(type));
    infer__rng rng;
    infer__rng_seed(&rng, 2468);
    tensor_list L = { xcalloc((size_t)(8 + 40 * p->n_layer), sizeof(infer_tensor), "the tensor list"), 0 };
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
    infer_gguf_kv kv[64];
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
    /* a tokenizer, unless the vocabulary is too small for one (tiny: the golden model's 320 ids) */
    synth_vocab_t vocab;
    memset(&vocab, 0, sizeof vocab);
    if (p->n_vocab >= 1024 || synth_vocab_path) nkv += synth_tokenizer(kv + nkv, &vocab, &vocab_deepseek, p->n_vocab, synth_vocab_path);
    return synth_write(argv[4], kv, nkv, &L, &vocab);
}

/* the type synth gives one matrix: with a file type (ft), the reference quantizer's choice
 * for that tensor (mixture_type, walked in the reference's order: synth writes the tensors
 * by layer, and within a layer each category once, so its counters advance alike), fitted
 * to the row length; else `type` */
static infer_type synth_type(qmodel_t *q, const ftype_t *ft, infer_type type, const char *name, int64_t ne0, int64_t ne1) {
    if (!ft || !ne1 || !type_is_quantized(type)) return type;
    infer_tensor t;
    memset(&t, 0, sizeof t);
    t.name = name; t.n_dims = 2; t.ne[0] = ne0; t.ne[1] = ne1; t.ne[2] = t.ne[3] = 1;
    infer_type mt = mixture_type(q, &t, ft->ftype, type, tensor_category(name));
    mt = fit_type(&t, mt);
    need_quantizer(name, ft->name, mt);
    return mt;
}

static int cmd_synth(int argc, char **argv) {
    int pure = 0;
    for (int i = 5; i < argc; i++) {       /* --pure */
        if (strcmp(argv[i], "--pure")) continue;
        pure = 1;
        memmove(argv + i, argv + i + 1, sizeof(char *) * (size_t)(argc - i - 1));
        argc -= 1;
        break;
    }
    for (int i = 5; i + 1 < argc; i++) {   /* --vocab FILE */
        if (strcmp(argv[i], "--vocab")) continue;
        synth_vocab_path = argv[i + 1];
        memmove(argv + i, argv + i + 2, sizeof(char *) * (size_t)(argc - i - 2));
        argc -= 2;
        break;
    }
    if (argc != 5 && !(argc == 7 && !strcmp(argv[5], "--type"))) usage(stderr, 1);
    if (!strcmp(argv[2], "qwen35") || !strcmp(argv[2], "qwen35moe")) return cmd_synth_qwen35(argc, argv);
    if (!strcmp(argv[2], "deepseek4")) return cmd_synth_deepseek4(argc, argv);
    const preset_t *p = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].arch, argv[2]) && !strcmp(presets[i].name, argv[3])) p = &presets[i];
    if (!p) unknown_preset(argv[2], argv[3]);
    preset_t sized = *p;
    sized.n_vocab = synth_n_vocab(p->n_vocab);
    p = &sized;
    /* --type: a file type as llama-quantize names it (Q4_0, Q8_0, Q4_K_M, TQ2_0, ... in any
     * case) gets, tensor by tensor, the type the reference quantizer gives that tensor in
     * such a file (as `convert quantize`: the output matrix or tied embedding at Q6_K, more
     * bits for some layers' attn_v and ffn_down, ...); a plain type that names no file type
     * (mxfp4, nvfp4, i2_s), or --pure, puts every matrix in that one type */
    const ftype_t *ft = argc == 7 && !pure ? find_ftype(argv[6]) : NULL;
    infer_type type = ft ? ft->base : argc == 7 ? parse_type(argv[6]) : INFER_TYPE_F16;
    if (type != INFER_TYPE_I2_S && !infer__traits[type].quant) die("type %s has no quantizer", argv[6]);
    qmodel_t q;
    memset(&q, 0, sizeof q);
    q.arch = p->arch;
    q.n_layer = p->n_layer;
    q.n_gqa = p->n_head_kv > 0 ? p->n_head / p->n_head_kv : 0;
    q.is_70b = q.n_layer == 80 && !strcmp(p->arch, "llama") && p->n_head != p->n_head_kv;
    q.n_attn_v = p->n_layer;
    /* bitnet: sub-norms before Wo and W_down, ReLU^2, logits from token_embd; with a ternary
     * type the embedding is Q6_K, as llama.cpp's TQ1_0/TQ2_0 quantization writes it */
    const int bitnet = !strcmp(p->arch, "bitnet");
    q.tied = p->tied || bitnet;
    const infer_type embd_type = ft ? synth_type(&q, ft, type, "token_embd.weight", p->n_embd, p->n_vocab) : is_ternary(type) ? INFER_TYPE_Q6_K : type;
    const int64_t E = p->n_embd, Q = (int64_t)p->n_head * p->head_dim, KV = (int64_t)p->n_head_kv * p->head_dim;
    if (!ft && (E % infer_type_block(type) || p->n_ff % infer_type_block(type) || Q % infer_type_block(type)))
        die("%s rows are not a whole number of %s blocks", p->name, infer_type_name(type));
    infer__rng rng;
    infer__rng_seed(&rng, 1234);
    tensor_list L = { xcalloc((size_t)(4 + 11 * p->n_layer), sizeof(infer_tensor), "the tensor table"), 0 };
    char name[96];
    const float s_in = 1.0f / sqrtf((float)E), s_res = s_in / sqrtf(2.0f * p->n_layer);
    synth_tensor(&L, "token_embd.weight", embd_type, E, p->n_vocab, 3.0f * s_in, &rng);   /* tied logits: std ~3 */
    synth_tensor(&L, "output_norm.weight", type, E, 0, 0, &rng);
    if (!p->tied) synth_tensor(&L, "output.weight", synth_type(&q, ft, type, "output.weight", E, p->n_vocab), E, p->n_vocab, 3.0f * s_in, &rng);
    for (int l = 0; l < p->n_layer; l++) {
        fprintf(stderr, "\rsynth %s: layer %d/%d", p->name, l + 1, p->n_layer);
#define T(suffix, ne0, ne1, sigma) (snprintf(name, sizeof name, "blk.%d." suffix, l), \
                                    synth_tensor(&L, name, synth_type(&q, ft, type, name, ne0, ne1), ne0, ne1, sigma, &rng))
        T("attn_norm.weight", E, 0, 0);
        T("attn_q.weight", E, Q, s_in);
        T("attn_k.weight", E, KV, s_in);
        T("attn_v.weight", E, KV, s_in);
        T("attn_output.weight", Q, E, s_res);
        T("ffn_norm.weight", E, 0, 0);
        T("ffn_gate.weight", E, p->n_ff, s_in);
        T("ffn_up.weight", E, p->n_ff, s_in);
        T("ffn_down.weight", p->n_ff, E, s_res / sqrtf((float)p->n_ff / E));
        if (bitnet) { T("attn_sub_norm.weight", Q, 0, 0); T("ffn_sub_norm.weight", p->n_ff, 0, 0); }
#undef T
    }
    fprintf(stderr, "\n");
    char k[16][64];
    infer_gguf_kv kv[40];   /* the model's keys, then the tokenizer's */
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
    synth_vocab_t vocab;
    nkv += synth_tokenizer(kv + nkv, &vocab, &vocab_llama3, p->n_vocab, synth_vocab_path);   /* Llama-3's tokenizer, as both models have */
    return synth_write(argv[4], kv, nkv, &L, &vocab);
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
    if (argc != 5) usage(stderr, 1);
    size_t n, tn;
    uint8_t *mb = read_all(argv[2], &n), *tb = read_all(argv[3], &tn);
    int32_t cfg[7];
    if (n < sizeof cfg) die("'%s' is too short for a llama2.c header", argv[2]);
    memcpy(cfg, mb, sizeof cfg);
    const int dim = cfg[0], hidden = cfg[1], L = cfg[2], H = cfg[3], HKV = cfg[4], seq = cfg[6];
    const int shared = cfg[5] > 0, V = shared ? cfg[5] : cfg[5] == INT32_MIN ? 0 : -cfg[5];   /* (INT32_MIN has no negation) */
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
    infer_tensor *t = xcalloc((size_t)(3 + 9 * L), sizeof *t, "the tensor table");
    char (*names)[64] = xcalloc((size_t)(3 + 9 * L), 64, "the tensor names");
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
    uint8_t *enc = xmalloc(tn * 4 + 64, "the tokens");
    float *scores = xmalloc(sizeof(float) * (size_t)V, "the token scores");
    int32_t *types = xmalloc(sizeof(int32_t) * (size_t)V, "the token types");
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
    const int pure = argc == 6 && !strcmp(argv[5], "--pure");
    if (argc != 3 && !((argc == 5 || pure) && !strcmp(argv[3], "--type"))) usage(stderr, 1);
    const char *dir = argv[1], *out_path = argv[2];
    infer_gguf g;
    infer_error err;
    const double t0 = infer_time_seconds();
    if (infer_hf_load(&g, dir, &err) != INFER_OK) die("%s: %s", dir, err.msg);
    infer_tensor *out = xcalloc((size_t)g.n_tensors + 1, sizeof *out, "the tensor table");
    void **owned = xcalloc((size_t)g.n_tensors + 1, sizeof(void *), "the tensor table");
    infer_type *plan = xcalloc((size_t)g.n_tensors + 1, sizeof *plan, "the tensor table");
    int ftype = -2;   /* no --type: the types as they are */
    if (argc >= 5) ftype = quant_plan(&g, argv[4], pure, plan);
    uint64_t total = 0, done = 0;
    for (int64_t i = 0; i < g.n_tensors; i++) total += g.tensors[i].nbytes;
    for (int64_t i = 0; i < g.n_tensors; i++) {
        const infer_tensor *t = &g.tensors[i];
        out[i] = *t;
        if (ftype != -2 && plan[i] != t->type) { owned[i] = requant(t, plan[i], &out[i]); out[i].n_dims = real_dims(t); }
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
    /* general.file_type describes the source types; with --type, the file type made */
    int64_t nkv = 0;
    infer_gguf_kv *kv = ftype == -2 ? xcalloc((size_t)g.n_kv + 1, sizeof *kv, "the metadata") : plan_metadata(&g, ftype, &nkv);
    for (int64_t i = 0; ftype == -2 && i < g.n_kv; i++) kv[nkv++] = g.kv[i];
    if (infer_gguf_write(out_path, kv, nkv, out, g.n_tensors, 32, &err) != INFER_OK) die("%s", err.msg);
    uint64_t bytes = 0;
    for (int64_t i = 0; i < g.n_tensors; i++) bytes += out[i].nbytes;
    fprintf(stderr, "wrote %s: %lld tensors, %.1f MB of weights, %lld metadata entries, %.1f s\n", out_path, (long long)g.n_tensors, (double)bytes / 1e6,
            (long long)nkv, infer_time_seconds() - t0);
    for (int64_t i = 0; i < g.n_tensors; i++) free(owned[i]);
    free(owned); free(out); free(kv); free(plan);
    infer_gguf_free(&g);
    return 0;
}

static int cmd_vocab(int argc, char **argv) {
    if (argc != 4) usage(stderr, 1);
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
    for (int i = 1; i + 1 < argc; i++) {          /* -t N, wherever it is */
        if (strcmp(argv[i], "-t")) continue;
        char *end;
        const long v = strtol(argv[i + 1], &end, 10);
        if (*end || v < 1 || v > 256) die("-t %s: give a thread count from 1 to 256", argv[i + 1]);
        n_threads = (int)v;
        memmove(argv + i, argv + i + 2, sizeof(char *) * (size_t)(argc - i - 2));
        argc -= 2;
        break;
    }
    if (n_threads == 0) n_threads = infer_default_threads();
    if (argc < 2) usage(stderr, 1);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) usage(stdout, 0);
    if (!strcmp(argv[1], "dequant")) return cmd_dequant(argc, argv);
    if (!strcmp(argv[1], "quant")) return cmd_quant(argc, argv);
    if (!strcmp(argv[1], "quantize")) return cmd_quantize(argc, argv);
    if (!strcmp(argv[1], "info")) return cmd_info(argc, argv);
    if (!strcmp(argv[1], "synth")) return cmd_synth(argc, argv);
    if (!strcmp(argv[1], "llama2c")) return cmd_llama2c(argc, argv);
    if (!strcmp(argv[1], "vocab")) return cmd_vocab(argc, argv);
    if (is_dir(argv[1])) return cmd_hf(argc, argv);
    fprintf(stderr, "convert: unknown command '%s'\n", argv[1]);
    usage(stderr, 1);
    return 1;
}
