/* infer.h -- a readable LLM inference engine in one C header.
 *
 * QUICK START
 *   In exactly one C file:
 *       #define INFER_IMPLEMENTATION
 *       #include "infer.h"
 *   Everywhere else just #include "infer.h". Link with -lm -lpthread.
 *
 *       infer_error err;
 *       infer_model *model;
 *       if (infer_model_load(&model, "model.gguf", NULL, &err) != INFER_OK) { puts(err.msg); ... }
 *       infer_session *s;
 *       infer_session_create(&s, model, NULL, &err);
 *       int32_t ids[512];
 *       int n = infer_tokenize(infer_model_tokenizer(model), "Once upon a time", 16, 1, 1, ids, 512);
 *       infer_generate(s, ids, n, &gen_params, on_token, user, &stats, &err);
 *
 * TABLE OF CONTENTS (grep for the anchors)
 *   Public part
 *     >>api-status     status codes and the error object
 *     >>api-types      ggml tensor types and the quant block structs
 *     >>api-tensor     tensors, GGUF files, model config
 *     >>api-kernels    the kernel table every backend fills
 *     >>api            model, session, tokenizer, sampler, generation
 *   Implementation (#define INFER_IMPLEMENTATION)
 *     >>util           checked byte cursor, size math, fp16/bf16, RNG, timer, mmap
 *     >>gguf           the GGUF container: metadata and tensor infos
 *     >>quant          every weight type: byte layouts, dequantize, quantize, dot
 *     >>ternary        fast ternary dots: TQ1_0, TQ2_0, I2_S
 *     >>cpu            the CPU kernel table (scalar reference)
 *     >>json           a small validating JSON parser (tokenizer.json, config.json)
 *     >>tokenizer      SentencePiece BPE, byte-level BPE, WordPiece
 *     >>arch           model families as descriptors
 *     >>load           from GGUF tensors to model weights, with shape checks
 *     >>kv             the paged KV cache and the recurrent (DeltaNet) state
 *     >>forward        one generic transformer forward pass
 *     >>sampler        logits -> next token
 *     >>generate       the generation loop
 *     >>tables         big lookup tables (unicode ranges, i-quant grids)
 *
 * OPTIONS (define before including, in the file that has INFER_IMPLEMENTATION)
 *   INFER_MALLOC / INFER_REALLOC / INFER_FREE   allocator (define all three or none)
 *   INFER_NO_SIMD                              use the scalar kernels only
 *
 * HOW TO READ THIS FILE
 *   Start at >>forward: it is the model, written as the equations. Every call there goes
 *   through the kernel table (>>api-kernels), whose CPU version (>>cpu) is plain C. The
 *   weights it uses come from >>load, which reads a GGUF file (>>gguf) whose tensors are
 *   stored in one of the block formats of >>quant. Shapes are written [rows, cols] with
 *   the last index varying fastest, so a matrix W[out, in] is stored as `out` rows of `in`.
 *
 * SUPPORTED
 *   families: llama (1/2/3, llama-3.1 rope scaling, mistral-style), qwen2, qwen2moe, qwen3,
 *             qwen3moe, qwen35 and qwen35moe (Qwen3.5/3.6: gated DeltaNet + gated attention),
 *             bitnet (BitNet b1.58: llama.cpp's `bitnet`, and BitNet's own `bitnet-b1.58` /
 *             `bitnet-25` I2_S files; SiLU or ReLU^2 from `hidden_activation`, else per flavour)
 *   weights:  F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K..Q6_K IQ1_S IQ1_M IQ2_XXS IQ2_XS
 *             IQ2_S IQ3_XXS IQ3_S IQ4_NL IQ4_XS TQ1_0 TQ2_0 MXFP4 NVFP4 Q1_0 Q2_0 I2_S
 *
 * LICENSE: MIT, at the end of the file.
 */
#ifndef INFER_H
#define INFER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#ifdef __cplusplus
extern "C" {
#define INFER__STATIC_ASSERT(c, msg) static_assert(c, msg)
#define INFER_RESTRICT __restrict__
#else
#define INFER__STATIC_ASSERT(c, msg) _Static_assert(c, msg)
#define INFER_RESTRICT restrict
#endif

/* ------------------------------------------------------------------------------------------
 * >>api-status -- every fallible function returns an infer_status and, on failure, writes a
 * one-line message (naming the key, tensor, byte offset, expected vs got) into an
 * infer_error the caller owns. Nothing is global, so threads never share error text.
 * ---------------------------------------------------------------------------------------- */
#define INFER_STATUS_LIST(X)                                   \
    X(INFER_OK, "ok")                                          \
    X(INFER_ERR_IO, "i/o error")                               \
    X(INFER_ERR_FORMAT, "malformed file")                      \
    X(INFER_ERR_UNSUPPORTED, "unsupported feature")            \
    X(INFER_ERR_NOMEM, "out of memory")                        \
    X(INFER_ERR_ARG, "invalid argument")                       \
    X(INFER_ERR_CONTEXT, "context full")                       \
    X(INFER_ERR_BACKEND, "backend error")

typedef enum infer_status {
#define INFER__X(name, text) name,
    INFER_STATUS_LIST(INFER__X)
#undef INFER__X
    INFER_STATUS_COUNT
} infer_status;

typedef struct infer_error { infer_status status; char msg[512]; } infer_error;

const char *infer_status_str(infer_status s);

/* ------------------------------------------------------------------------------------------
 * >>api-types -- tensor element types. The numbers are ggml's type ids, which is what a
 * GGUF file stores; ids that ggml removed are kept as comments so nothing reuses them.
 * ---------------------------------------------------------------------------------------- */
typedef enum infer_type {
    INFER_TYPE_F32 = 0, INFER_TYPE_F16 = 1, INFER_TYPE_Q4_0 = 2, INFER_TYPE_Q4_1 = 3,
    /* 4, 5: removed Q4_2, Q4_3 */
    INFER_TYPE_Q5_0 = 6, INFER_TYPE_Q5_1 = 7, INFER_TYPE_Q8_0 = 8, INFER_TYPE_Q8_1 = 9,
    INFER_TYPE_Q2_K = 10, INFER_TYPE_Q3_K = 11, INFER_TYPE_Q4_K = 12, INFER_TYPE_Q5_K = 13,
    INFER_TYPE_Q6_K = 14, INFER_TYPE_Q8_K = 15, INFER_TYPE_IQ2_XXS = 16, INFER_TYPE_IQ2_XS = 17,
    INFER_TYPE_IQ3_XXS = 18, INFER_TYPE_IQ1_S = 19, INFER_TYPE_IQ4_NL = 20, INFER_TYPE_IQ3_S = 21,
    INFER_TYPE_IQ2_S = 22, INFER_TYPE_IQ4_XS = 23, INFER_TYPE_I8 = 24, INFER_TYPE_I16 = 25,
    INFER_TYPE_I32 = 26, INFER_TYPE_I64 = 27, INFER_TYPE_F64 = 28, INFER_TYPE_IQ1_M = 29,
    INFER_TYPE_BF16 = 30,
    /* 31-33: removed Q4_0_4_4, Q4_0_4_8, Q4_0_8_8 */
    INFER_TYPE_TQ1_0 = 34, INFER_TYPE_TQ2_0 = 35,
    /* 36-38: removed IQ4_NL_4_4/4_8/8_8 upstream; BitNet's fork stores I2_S as 36 */
    INFER_TYPE_MXFP4 = 39, INFER_TYPE_NVFP4 = 40, INFER_TYPE_Q1_0 = 41, INFER_TYPE_Q2_0 = 42,
    INFER_TYPE_COUNT = 43,
    /* I2_S is not a ggml type; it gets a private id outside the file range. */
    INFER_TYPE_I2_S = 100
} infer_type;

typedef uint16_t infer_half;   /* IEEE binary16 bits */
typedef uint16_t infer_bf16;   /* the top 16 bits of an IEEE binary32 */

/* Activation-side blocks: the formats activations are quantized to before an integer dot
 * product with quantized weights. */
#define INFER_QK8_0 32
typedef struct { infer_half d; int8_t qs[INFER_QK8_0]; } infer_block_q8_0;             /* x = d*q */
INFER__STATIC_ASSERT(sizeof(infer_block_q8_0) == 34, "q8_0 size");
typedef struct { infer_half d; infer_half s; int8_t qs[INFER_QK8_0]; } infer_block_q8_1; /* s = d*sum(q) */
INFER__STATIC_ASSERT(sizeof(infer_block_q8_1) == 36, "q8_1 size");
#define INFER_QK_K 256
typedef struct { float d; int8_t qs[INFER_QK_K]; int16_t bsums[INFER_QK_K / 16]; } infer_block_q8_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q8_k) == 292, "q8_K size");

#define INFER_WIP_BASE_H /* development only */
#include "wip/quant_a_public.h"
#include "wip/quant_b_public.h"
#include "wip/quant_c_public.h"

#include "wip/tokenizer_public.h"

/* ------------------------------------------------------------------------------------------
 * >>api-tensor -- a tensor is a typed view of bytes (mmapped from the file on the CPU, or a
 * device pointer on a GPU). ne[0] is the innermost dimension: a matrix W[out, in] has
 * ne = {in, out}, so each of its `out` rows is `in` contiguous elements.
 * ---------------------------------------------------------------------------------------- */
#define INFER_MAX_DIMS 4

typedef struct infer_tensor {
    const char *name;             /* GGUF name, e.g. "blk.0.attn_q.weight" */
    infer_type type;
    int32_t n_dims;
    int64_t ne[INFER_MAX_DIMS];   /* elements per dimension, innermost first */
    const void *data;             /* first byte */
    size_t nbytes;
    float scale;                  /* multiplies the tensor's values (1, or I2_S's per-tensor scale) */
} infer_tensor;

/* GGUF metadata value types (the numbers stored in the file). */
typedef enum infer_gguf_vtype {
    INFER_GGUF_U8 = 0, INFER_GGUF_I8 = 1, INFER_GGUF_U16 = 2, INFER_GGUF_I16 = 3,
    INFER_GGUF_U32 = 4, INFER_GGUF_I32 = 5, INFER_GGUF_F32 = 6, INFER_GGUF_BOOL = 7,
    INFER_GGUF_STRING = 8, INFER_GGUF_ARRAY = 9, INFER_GGUF_U64 = 10, INFER_GGUF_I64 = 11,
    INFER_GGUF_F64 = 12, INFER_GGUF_VTYPE_COUNT = 13
} infer_gguf_vtype;

typedef struct infer_str { const char *ptr; uint64_t len; } infer_str;   /* not NUL-terminated */

/* One metadata entry. Scalars are decoded; arrays point into the file bytes. */
typedef struct infer_gguf_kv {
    infer_str key;
    infer_gguf_vtype type;
    struct { uint64_t u; int64_t i; double f; infer_str s; } v;  /* the scalar in each kind that fits, or the string */
    infer_gguf_vtype arr_type;    /* element type when type == ARRAY */
    uint64_t arr_n;               /* element count */
    const uint8_t *arr_data;      /* first element's bytes */
} infer_gguf_kv;

typedef struct infer_gguf {
    const uint8_t *base; size_t size;   /* the whole file */
    uint32_t version;
    uint64_t alignment;
    int64_t n_kv, n_tensors;
    infer_gguf_kv *kv;                   /* [n_kv] */
    infer_tensor *tensors;               /* [n_tensors]; names are NUL-terminated copies */
    char *names;                         /* storage for tensor names */
    size_t data_offset;                  /* start of the tensor data blob */
    /* a GGUF built in memory (infer_hf_load) owns its bytes: mapped shards, converted tensors,
     * metadata strings. infer_gguf_free calls owner_free(owner); both are NULL for a parse. */
    void *owner;
    void (*owner_free)(void *owner);
} infer_gguf;

/* ------------------------------------------------------------------------------------------
 * >>api-kernels -- the kernel table. The forward pass calls only these function pointers,
 * so a backend (the CPU here, CUDA in infer_cuda.cu) is a filled-in table. Every op takes
 * the backend's context first. Pointers to activations are backend memory (host memory on
 * the CPU, device memory on a GPU); tensors carry backend pointers too.
 * Shapes: `rows` tokens of `dim` values each, row-major.
 * ---------------------------------------------------------------------------------------- */
typedef struct infer_rope {
    int32_t n_rot;          /* rotated dims per head (the rest pass through) */
    int32_t neox;           /* 0: rotate pairs (2i, 2i+1); 1: rotate (i, i + n_rot/2) */
    float freq_base;        /* theta_i = pos * base^(-2i/n_rot) ... */
    float freq_scale;       /* ... * freq_scale (linear / YaRN interpolation) */
    const float *freq_factors; /* [n_rot/2] divisors of theta (llama-3.1 rope_freqs), or NULL */
    float ext_factor, attn_factor, beta_fast, beta_slow; /* YaRN; ext_factor 0 = off */
    int32_t n_ctx_orig;
} infer_rope;

typedef struct infer_kv_view {       /* what attention needs to read one sequence's cache */
    void *k, *v;                     /* pool base for this layer: [n_blocks*block_size, kv_dim] */
    infer_type type;                 /* F32 or F16 */
    int32_t block_size;              /* tokens per block */
    const int32_t *block_table;      /* logical block -> physical block */
    int32_t kv_dim;                  /* n_head_kv * head_dim (row length of k and v) */
} infer_kv_view;

typedef struct infer_kernels {
    const char *name;
    /* memory */
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    infer_status (*upload)(void *ctx, void *dst, const void *src, size_t bytes);
    infer_status (*download)(void *ctx, void *dst, const void *src, size_t bytes);
    infer_status (*sync)(void *ctx);
    int (*supports_type)(infer_type t);
    /* ops */
    void (*embed)(void *ctx, float *out, const infer_tensor *table, const int32_t *tokens, int rows);
    void (*rmsnorm)(void *ctx, float *out, const float *x, const float *w, int rows, int dim, float eps);
    /* out[r, n] = sum_k W[n, k] * x[r, k] ; W = w (ne = {dim_in, dim_out}) */
    void (*matmul)(void *ctx, float *out, const infer_tensor *w, const float *x, int rows);
    void (*add)(void *ctx, float *y, const float *x, int64_t n);              /* y += x */
    void (*add_rows)(void *ctx, float *y, const float *b, int rows, int dim); /* y[r] += b */
    void (*rope)(void *ctx, float *x, int rows, int n_heads, int head_dim, const int32_t *pos, const infer_rope *r);
    void (*kv_store)(void *ctx, const infer_kv_view *kv, const float *k, const float *v, const int32_t *pos, int rows);
    /* causal attention: query row r (position pos[r]) attends to cache positions 0..pos[r] */
    void (*attention)(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos,
                      int rows, int n_head, int n_head_kv, int head_dim, float scale);
    void (*swiglu)(void *ctx, float *out, const float *gate, const float *up, int64_t n); /* silu(g)*u */
    /* --- hybrid and mixture-of-experts families (qwen3moe, qwen35, qwen35moe) --- */
    void (*zero)(void *ctx, void *p, size_t bytes);                           /* p[0..bytes) = 0 */
    /* dst[r, 0..dim) = src[r, 0..dim) with row strides in floats (split or gather columns) */
    void (*copy_rows)(void *ctx, float *dst, int dst_stride, const float *src, int src_stride, int rows, int dim);
    /* y[r, i] *= sigmoid(g[r, g_cols == 1 ? 0 : i]);  g: [rows, g_cols], g_cols = dim or 1 */
    void (*mul_sigmoid)(void *ctx, float *y, const float *g, int rows, int dim, int g_cols);
    /* x[r] /= max(||x[r]||_2, eps), in place, x: [rows, dim] */
    void (*l2norm)(void *ctx, float *x, int rows, int dim, float eps);
    /* RoPE whose pairs take their position from one of 4 streams (t, h, w, e), chosen by
     * `sections` (interleaved multi-axis rope); pos: [4, rows] */
    void (*rope_multi)(void *ctx, float *x, int rows, int n_heads, int head_dim, const int32_t *pos,
                       const infer_rope *r, const int32_t *sections);
    /* router: probs = softmax (gating 1) or sigmoid (gating 2) of logits [rows, n_expert];
     * ids/weights [rows, n_used] = the top n_used probs, renormalised to sum 1 when `norm`,
     * times `scale` */
    void (*moe_route)(void *ctx, int32_t *ids, float *weights, const float *logits, int rows, int n_expert,
                      int n_used, int gating, int norm, float scale);
    /* out[r, s, :] = W[ids[r, s]] x[r or (r, s)]  for each of the n_used slots s;
     * W = w with ne = {K, N, n_expert}; x: [rows, K], or [rows, n_used, K] when x_per_slot */
    void (*matmul_id)(void *ctx, float *out, const infer_tensor *w, const float *x, const int32_t *ids,
                      int rows, int n_used, int x_per_slot);
    /* out[r, :] = sum_s weights[r, s] * y[r, s, :]   y: [rows, n_used, dim] */
    void (*moe_sum)(void *ctx, float *out, const float *y, const float *weights, int rows, int n_used, int dim);
    /* causal depthwise conv1d over time, then SiLU. x, out: [rows, channels]; w: [channels,
     * kernel] (ne = {kernel, channels}); state: [kernel-1, channels], the previous inputs,
     * oldest first, updated in place */
    void (*conv1d_silu)(void *ctx, float *out, const float *x, float *state, const float *w, int rows, int channels, int kernel);
    /* gated DeltaNet gates, in place: g = softplus(g + dt_bias) * a (a = -exp(A_log) < 0),
     * beta = sigmoid(beta); both [rows, n_v] */
    void (*deltanet_gates)(void *ctx, float *g, float *beta, const float *dt_bias, const float *a, int rows, int n_v);
    /* gated delta rule over `rows` tokens, state carried in place (see >>cpu for the maths):
     * q, k: [rows, n_k, d_k]; v, out: [rows, n_v, d_v]; g, beta: [rows, n_v];
     * state: [n_v, d_v, d_k]; value head h reads key head h % n_k.
     * deltanet_step is the token-by-token recurrence, deltanet_chunked the same result computed
     * 64 tokens at a time with small matrix products. */
    void (*deltanet_step)(void *ctx, float *out, const float *q, const float *k, const float *v, const float *g,
                          const float *beta, float *state, int rows, int n_k, int n_v, int d_k, int d_v, float scale);
    void (*deltanet_chunked)(void *ctx, float *out, const float *q, const float *k, const float *v, const float *g,
                             const float *beta, float *state, int rows, int n_k, int n_v, int d_k, int d_v, float scale);
} infer_kernels;

/* The CPU backend. Its context holds the thread count and the precise flag. */
const infer_kernels *infer_cpu_kernels(void);

/* ------------------------------------------------------------------------------------------
 * >>api -- models, sessions, tokens, sampling, generation.
 * ---------------------------------------------------------------------------------------- */
typedef struct infer_model infer_model;
typedef struct infer_session infer_session;

typedef enum infer_rope_scaling { INFER_ROPE_SCALING_NONE = 0, INFER_ROPE_SCALING_LINEAR, INFER_ROPE_SCALING_YARN } infer_rope_scaling;

/* Hyper-parameters, read from `<arch>.*` metadata keys. */
typedef struct infer_config {
    char arch[32];
    int32_t n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, head_dim_v, n_ff;
    /* n_layer counts the blocks the forward runs: block_count minus the n_layer_nextn below */
    int32_t n_ctx_train;
    float rms_eps;
    float attn_scale;            /* 0 = 1/sqrt(head_dim) */
    int32_t n_rot;
    float rope_base;
    infer_rope_scaling rope_scaling;
    float rope_scale_factor;     /* rope.scaling.factor */
    int32_t rope_orig_ctx;       /* rope.scaling.original_context_length */
    int32_t tied_output;         /* logits use token_embd */
    int32_t ffn_act;             /* feed-forward gate activation: 0 SiLU (SwiGLU), 1 ReLU^2 (squared ReLU);
                                    from <arch>.hidden_activation, else the family's default */
    int32_t rope_sections[4];    /* rope.dimension_sections (multi-axis rope), all 0 when absent */
    /* mixture of experts (n_expert = 0: dense feed-forward) */
    int32_t n_expert, n_expert_used;
    int32_t n_ff_exp, n_ff_shexp;   /* expert and shared-expert hidden sizes */
    int32_t expert_gating;       /* 1 softmax, 2 sigmoid (ggml's numbering) */
    int32_t expert_norm;         /* renormalise the top-k weights to sum 1 */
    float expert_weights_scale;  /* multiplies the top-k weights (1 = none) */
    /* hybrid recurrent families (gated DeltaNet layers between attention layers) */
    int32_t n_layer_nextn;       /* multi-token-prediction blocks stored after the n_layer main ones */
    int32_t full_attention_interval;
    int32_t ssm_conv_kernel;     /* K of the causal conv1d */
    int32_t ssm_d_state;         /* d_k: key head size */
    int32_t ssm_n_group;         /* n_k: key heads */
    int32_t ssm_dt_rank;         /* n_v: value heads */
    int32_t ssm_d_inner;         /* n_v * d_v */
} infer_config;

typedef struct infer_model_params {
    int vocab_only;              /* load only the tokenizer (works on files with no tensors) */
} infer_model_params;

infer_status infer_model_load(infer_model **out, const char *path, const infer_model_params *p, infer_error *err);
/* parse a GGUF already in memory (not copied: it must outlive the model) */
infer_status infer_model_load_memory(infer_model **out, const void *data, size_t size, const infer_model_params *p, infer_error *err);
void infer_model_free(infer_model *m);
const infer_config *infer_model_config(const infer_model *m);
const infer_gguf *infer_model_gguf(const infer_model *m);
const infer_tokenizer *infer_model_tokenizer(const infer_model *m); /* NULL when the file has no vocabulary */

/* GGUF access (usable without loading a model) */
infer_status infer_gguf_parse(infer_gguf *g, const void *data, size_t size, infer_error *err);
void infer_gguf_free(infer_gguf *g);
const infer_gguf_kv *infer_gguf_find(const infer_gguf *g, const char *key);
const infer_tensor *infer_gguf_tensor(const infer_gguf *g, const char *name);
/* write a GGUF v3 file (metadata entries and tensors as the parser presents them) */
infer_status infer_gguf_write(const char *path, const infer_gguf_kv *kv, int64_t n_kv, const infer_tensor *tensors, int64_t n_tensors,
                              uint32_t alignment, infer_error *err);
infer_gguf_kv infer_gguf_kv_u32(const char *key, uint32_t v);
infer_gguf_kv infer_gguf_kv_f32(const char *key, float v);
infer_gguf_kv infer_gguf_kv_bool(const char *key, int v);
infer_gguf_kv infer_gguf_kv_str(const char *key, const char *v);
infer_gguf_kv infer_gguf_kv_array(const char *key, infer_gguf_vtype et, uint64_t n, const void *encoded);

/* safetensors (>>safetensors): an 8-byte header length, a JSON header naming each tensor's
 * dtype, shape and byte range, then the raw data. Parsing checks every length and offset;
 * tensors view the caller's bytes (which must outlive the result). */
#define INFER_ST_MAX_DIMS 8
typedef struct infer_st_tensor {
    const char *name;             /* NUL-terminated */
    const char *dtype;            /* "F32", "BF16", "F8_E4M3", "U8", ... */
    int32_t dtype_size;           /* bytes per element */
    int32_t n_dims;
    int64_t shape[INFER_ST_MAX_DIMS]; /* outermost first, as the file writes it (PyTorch order) */
    const void *data;
    size_t nbytes;
    uint64_t offset;              /* data_offsets[0]: from the start of the data area */
} infer_st_tensor;
typedef struct infer_safetensors {
    const uint8_t *base; size_t size;    /* the whole file */
    size_t data_offset;                  /* 8 + header length */
    int64_t n_tensors;
    infer_st_tensor *tensors;            /* [n_tensors], in data order */
    int64_t n_meta;
    const char **meta;                   /* [2*n_meta]: the __metadata__ keys and values */
    void *header;                        /* the parsed JSON the names point into */
} infer_safetensors;
infer_status infer_safetensors_parse(infer_safetensors *st, const void *data, size_t size, infer_error *err);
void infer_safetensors_free(infer_safetensors *st);
const infer_st_tensor *infer_safetensors_tensor(const infer_safetensors *st, const char *name);
/* A Hugging Face folder (config.json, model.safetensors or sharded with
 * model.safetensors.index.json, tokenizer.json, tokenizer_config.json) as the GGUF the
 * official converter would write: same metadata keys, tensor names, shapes and transforms.
 * Untransformed tensors point into the mapped shards; free with infer_gguf_free. */
infer_status infer_hf_load(infer_gguf *g, const char *dir, infer_error *err);
/* a vocabulary-only GGUF from tokenizer.json (tokenizer_config.json is read from beside it) */
infer_status infer_hf_vocab(infer_gguf *g, const char *tokenizer_json, infer_error *err);
const char *infer_type_name(infer_type t);
size_t infer_type_row_size(infer_type t, int64_t n); /* bytes for n elements (n a multiple of the block) */
int infer_type_block(infer_type t);                   /* elements per block, 0 if unknown */
int infer_type_from_name(const char *name);           /* -1 if unknown */
/* convert n values to/from a weight type (n a multiple of the block size) */
infer_status infer_dequantize(infer_type t, const void *src, float *dst, int64_t n, infer_error *err);
infer_status infer_quantize(infer_type t, const float *src, void *dst, int64_t n, infer_error *err);

typedef struct infer_session_params {
    int32_t n_ctx;               /* 0 = min(training context, 4096) */
    infer_type kv_type;          /* INFER_TYPE_F32 or INFER_TYPE_F16 (forced F32 by precise) */
    int32_t n_ubatch;            /* tokens per forward chunk; 0 = 512 */
    int32_t n_threads;           /* 0 = all cores */
    int32_t precise;             /* F32 activations, F32 KV: the exact maths */
} infer_session_params;

infer_session_params infer_session_default_params(void);
infer_status infer_session_create(infer_session **out, infer_model *m, const infer_session_params *p, infer_error *err);
void infer_session_free(infer_session *s);
void infer_session_reset(infer_session *s);           /* forget all tokens */
int32_t infer_session_n_past(const infer_session *s);
int32_t infer_session_n_ctx(const infer_session *s);
/* Feed n tokens at the next positions. logits: NULL, or room for n*n_vocab floats when
 * all_logits is set (one row per token), else n_vocab floats for the last token. */
infer_status infer_eval(infer_session *s, const int32_t *tokens, int n, float *logits, int all_logits, infer_error *err);

/* Tokenizer (>>tokenizer). add_special: BOS/EOS as the model's flags say;
 * parse_special: control-token texts such as "<s>" in the text become those tokens.
 * Returns the token count (may exceed max_out; only max_out are written) or -1. */
int infer_tokenize(const infer_tokenizer *t, const char *text, size_t len, int add_special, int parse_special, int32_t *out, int max_out);

/* Sampler (>>sampler). Chain order: repetition penalty -> top-k -> top-p -> min-p ->
 * temperature -> random draw; temp <= 0 is greedy (argmax). */
typedef struct infer_sampler_params {
    float temp;                  /* 0.8; <= 0 greedy */
    int32_t top_k;               /* 40; <= 0 off */
    float top_p;                 /* 0.95; >= 1 off */
    float min_p;                 /* 0.05; <= 0 off */
    float repeat_penalty;        /* 1.0 = off */
    int32_t repeat_last_n;       /* 64 */
    uint64_t seed;
} infer_sampler_params;
infer_sampler_params infer_sampler_default_params(void);

typedef struct infer_sampler infer_sampler;
infer_sampler *infer_sampler_create(const infer_sampler_params *p, int32_t n_vocab);
void infer_sampler_free(infer_sampler *s);
void infer_sampler_accept(infer_sampler *s, int32_t token);   /* remember for the penalty */
int32_t infer_sampler_sample(infer_sampler *s, const float *logits);

/* Generation (>>generate): feed the prompt, then sample up to n_predict tokens, calling
 * on_token for each (return non-zero to stop). Stops at end-of-generation tokens. */
typedef struct infer_gen_stats {
    int32_t n_prompt, n_gen;
    double prompt_seconds, gen_seconds;
} infer_gen_stats;
typedef int (*infer_token_fn)(void *user, int32_t token, const float *logits);
infer_status infer_generate(infer_session *s, const int32_t *prompt, int n_prompt, int n_predict,
                            const infer_sampler_params *sp, infer_token_fn on_token, void *user,
                            infer_gen_stats *stats, infer_error *err);

double infer_time_seconds(void);

#ifdef __cplusplus
}
#endif
#endif /* INFER_H */

/* ========================================================================================== */
/*                                      IMPLEMENTATION                                         */
/* ========================================================================================== */
#ifdef INFER_IMPLEMENTATION
#ifndef INFER__IMPLEMENTED
#define INFER__IMPLEMENTED
#include "wip/impl.h"
#endif
#endif
