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
 *     >>deepseek4      DeepSeek-V4: compressed sparse attention, hyper-connections, hash routing
 *     >>sampler        logits -> next token
 *     >>generate       the generation loop
 *     >>backends       the GPU backend of this build; any backend diffed against the CPU
 *     >>tables         big lookup tables (unicode ranges, i-quant grids)
 *
 * OPTIONS (define before including, in the file that has INFER_IMPLEMENTATION)
 *   INFER_MALLOC / INFER_REALLOC / INFER_FREE   allocator (define all three or none)
 *   INFER_NO_SIMD                              use the scalar kernels only
 *   INFER_CUDA                                 infer_cuda.cu is linked in: infer_gpu_kernels
 *                                              returns its table (`make cuda` sets this)
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
 *             `bitnet-25` I2_S files; SiLU or ReLU^2 from `hidden_activation`, else per flavour),
 *             deepseek4 (DeepSeek-V4: sliding window + compressed sparse attention, mHC)
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

/* block structs of the "simple" weight types (public part).
 *
 * >>quant_blocks_a
 * A quantized tensor row is an array of fixed-size blocks; each block holds `QK`
 * weights as small integer codes plus one or more scales. These structs are read by
 * the C implementation and by the CUDA kernels alike, so they are plain C (and C++)
 * aggregates with no padding; every one is followed by a static size check against
 * the byte counts GGUF files assume (ggml-common.h). Scales are stored as raw bits
 * (infer_half = IEEE binary16, or one-byte E8M0 / UE4M3) and converted on use.
 * Q8_0, Q8_1 and Q8_K (also used for activations) are defined with the base types. */


#define INFER_QK4_0 32
#define INFER_QK4_1 32
#define INFER_QK5_0 32
#define INFER_QK5_1 32
#define INFER_QK_MXFP4 32
#define INFER_QK_NVFP4 64          /* four sub-blocks of 16, one scale each */
#define INFER_QK_NVFP4_SUB 16
#define INFER_QK1_0 128
#define INFER_QK2_0 64
#define INFER_QK_I2_S 128          /* BitNet i2_s packing chunk (x86 layout) */

/* Q4_0: x = (q - 8) * d,          q in 0..15 */
typedef struct { infer_half d; uint8_t qs[INFER_QK4_0 / 2]; } infer_block_q4_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q4_0) == 18, "q4_0 size");

/* Q4_1: x = q * d + m,            q in 0..15 */
typedef struct { infer_half d, m; uint8_t qs[INFER_QK4_1 / 2]; } infer_block_q4_1;
INFER__STATIC_ASSERT(sizeof(infer_block_q4_1) == 20, "q4_1 size");

/* Q5_0: x = (q - 16) * d,         q in 0..31, bit 4 of every q gathered in qh */
typedef struct { infer_half d; uint8_t qh[4]; uint8_t qs[INFER_QK5_0 / 2]; } infer_block_q5_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q5_0) == 22, "q5_0 size");

/* Q5_1: x = q * d + m,            q in 0..31 */
typedef struct { infer_half d, m; uint8_t qh[4]; uint8_t qs[INFER_QK5_1 / 2]; } infer_block_q5_1;
INFER__STATIC_ASSERT(sizeof(infer_block_q5_1) == 24, "q5_1 size");

/* TQ1_0: 256 trits, 5 per byte in qs (base 3) and 4 per byte in qh; x = (t - 1) * d */
typedef struct { uint8_t qs[(INFER_QK_K - 4 * INFER_QK_K / 64) / 5]; uint8_t qh[INFER_QK_K / 64]; infer_half d; } infer_block_tq1_0;
INFER__STATIC_ASSERT(sizeof(infer_block_tq1_0) == 54, "tq1_0 size");

/* TQ2_0: 256 trits as 2-bit codes; x = (c - 1) * d */
typedef struct { uint8_t qs[INFER_QK_K / 4]; infer_half d; } infer_block_tq2_0;
INFER__STATIC_ASSERT(sizeof(infer_block_tq2_0) == 66, "tq2_0 size");

/* MXFP4: 32 FP4 (E2M1) codes sharing one power-of-two scale (E8M0 exponent byte) */
typedef struct { uint8_t e; uint8_t qs[INFER_QK_MXFP4 / 2]; } infer_block_mxfp4;
INFER__STATIC_ASSERT(sizeof(infer_block_mxfp4) == 17, "mxfp4 size");

/* NVFP4: 64 FP4 (E2M1) codes, one UE4M3 scale byte per 16 */
typedef struct { uint8_t d[INFER_QK_NVFP4 / INFER_QK_NVFP4_SUB]; uint8_t qs[INFER_QK_NVFP4 / 2]; } infer_block_nvfp4;
INFER__STATIC_ASSERT(sizeof(infer_block_nvfp4) == 36, "nvfp4 size");

/* Q1_0: 128 sign bits; x = bit ? +d : -d */
typedef struct { infer_half d; uint8_t qs[INFER_QK1_0 / 8]; } infer_block_q1_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q1_0) == 18, "q1_0 size");

/* Q2_0: 64 2-bit codes; x = (c - 1) * d */
typedef struct { infer_half d; uint8_t qs[INFER_QK2_0 / 4]; } infer_block_q2_0;
INFER__STATIC_ASSERT(sizeof(infer_block_q2_0) == 18, "q2_0 size");

/* I2_S (BitNet fork) has no block struct: a whole tensor of n weights is n/4 bytes of
 * 2-bit codes followed by one f32 scale and 28 zero bytes (see infer__dequant_i2_s). */
/* block structs of the k-quants (Q2_K..Q6_K) and the 4-bit
 * non-linear quants (IQ4_NL, IQ4_XS). Public part: plain structs shared by C and CUDA.
 *
 * k-quants group 256 weights (INFER_QK_K) into a "super-block" holding one or two fp16
 * super-scales; inside it, 16- or 32-element sub-blocks carry small integer scales (and
 * mins) expressed in units of the super-scale. A weight is
 *     w = d * sc_j * q            (Q3_K, Q6_K: symmetric, q signed)
 *     w = d * sc_j * q - dmin * m_j  (Q2_K, Q4_K, Q5_K: affine, q unsigned)
 * IQ4_NL/IQ4_XS replace the uniform grid by 16 non-uniform levels (kvalues_iq4nl), denser
 * near zero where most weights live. Byte diagrams sit above each dequantizer. */


/* Q2_K: 2.625 bits/weight. 16 sub-blocks of 16, 4-bit scale + 4-bit min each. */
typedef struct {
    uint8_t scales[INFER_QK_K / 16];   /* low nibble: scale, high nibble: min */
    uint8_t qs[INFER_QK_K / 4];        /* 2-bit quants, 4 per byte */
    infer_half d, dmin;                /* super-scales of the scales and of the mins */
} infer_block_q2_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q2_k) == 84, "q2_K size");

/* Q3_K: 3.4375 bits/weight. 16 sub-blocks of 16, signed 6-bit scales, no min. */
typedef struct {
    uint8_t hmask[INFER_QK_K / 8];     /* third (high) bit of each quant */
    uint8_t qs[INFER_QK_K / 4];        /* low 2 bits, 4 per byte */
    uint8_t scales[12];                /* 16 six-bit scales, packed */
    infer_half d;
} infer_block_q3_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q3_k) == 110, "q3_K size");

/* Q4_K: 4.5 bits/weight. 8 sub-blocks of 32, 6-bit scale + 6-bit min each. */
typedef struct {
    infer_half d, dmin;
    uint8_t scales[12];                /* 8 scales + 8 mins, 6 bits each, packed */
    uint8_t qs[INFER_QK_K / 2];        /* 4-bit quants */
} infer_block_q4_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q4_k) == 144, "q4_K size");

/* Q5_K: 5.5 bits/weight. Q4_K plus one high bit per quant. */
typedef struct {
    infer_half d, dmin;
    uint8_t scales[12];
    uint8_t qh[INFER_QK_K / 8];        /* fifth bit of each quant */
    uint8_t qs[INFER_QK_K / 2];        /* low 4 bits */
} infer_block_q5_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q5_k) == 176, "q5_K size");

/* Q6_K: 6.5625 bits/weight. 16 sub-blocks of 16, signed 8-bit scales, no min. */
typedef struct {
    uint8_t ql[INFER_QK_K / 2];        /* low 4 bits */
    uint8_t qh[INFER_QK_K / 4];        /* high 2 bits */
    int8_t scales[INFER_QK_K / 16];
    infer_half d;
} infer_block_q6_k;
INFER__STATIC_ASSERT(sizeof(infer_block_q6_k) == 210, "q6_K size");

/* IQ4_NL: 4.5 bits/weight, 32-element blocks, one fp16 scale, 4-bit indices into
 * the 16-entry non-linear table. */
#define INFER_QK4_NL 32
typedef struct {
    infer_half d;
    uint8_t qs[INFER_QK4_NL / 2];
} infer_block_iq4_nl;
INFER__STATIC_ASSERT(sizeof(infer_block_iq4_nl) == 18, "iq4_nl size");

/* IQ4_XS: 4.25 bits/weight. IQ4_NL indices in 256-element super-blocks with 8 signed
 * 6-bit sub-block scales (4 low bits in scales_l, 2 high bits in scales_h). */
typedef struct {
    infer_half d;
    uint16_t scales_h;                 /* 2 high bits of each of the 8 scales */
    uint8_t scales_l[INFER_QK_K / 64]; /* 4 low bits of each scale, two per byte */
    uint8_t qs[INFER_QK_K / 2];
} infer_block_iq4_xs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq4_xs) == 136, "iq4_xs size");
/* block structs of the grid i-quants (public part, shared with CUDA).
 * Plain structs only: this part must also compile as C++.
 *
 * All seven types cover super-blocks of INFER_QK_K = 256 weights. Instead of storing
 * one small integer per weight they store, per group of 8 (or 4) weights, an index
 * into a fixed codebook ("grid") of magnitude patterns plus sign bits, and a few bits
 * of scale per 32 (IQ1_M: 16) weights. The grids live in the tables section; the byte
 * layouts are drawn above each dequantizer in the implementation. Multi-byte fields are
 * little-endian, as in the file. Bits per weight: bytes*8/256. */


/* IQ2_XXS, 2.06 bpw: 8 sub-blocks of 32, each = 4 grid indices (8 bits) + one u32
 * holding 4 seven-bit sign codes and a 4-bit scale; stored as 16-bit words. */
typedef struct {
    infer_half d;                       /* super-block scale */
    uint16_t qs[INFER_QK_K / 8];        /* per 32 weights: 4 index bytes, then u32 signs|scale */
} infer_block_iq2_xxs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq2_xxs) == 66, "iq2_xxs size");

/* IQ2_XS, 2.31 bpw: one u16 per 8 weights = 9-bit grid index | 7-bit sign code << 9;
 * a 4-bit scale per 16 weights. */
typedef struct {
    infer_half d;
    uint16_t qs[INFER_QK_K / 8];        /* index (bits 0-8) | sign code (bits 9-15) */
    uint8_t  scales[INFER_QK_K / 32];   /* two 4-bit scales per 32 weights */
} infer_block_iq2_xs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq2_xs) == 74, "iq2_xs size");

/* IQ2_S, 2.56 bpw: 10-bit grid index per 8 weights, explicit 8-bit sign masks. */
typedef struct {
    infer_half d;
    uint8_t qs[INFER_QK_K / 4];         /* [0,32): index low bytes; [32,64): sign masks */
    uint8_t qh[INFER_QK_K / 32];        /* index bits 8-9, 2 bits per group of 8 */
    uint8_t scales[INFER_QK_K / 32];    /* two 4-bit scales per 32 weights */
} infer_block_iq2_s;
INFER__STATIC_ASSERT(sizeof(infer_block_iq2_s) == 82, "iq2_s size");

/* IQ3_XXS, 3.06 bpw: 8-bit index per 4 weights, then per 32 weights a u32 of
 * 4 seven-bit sign codes and a 4-bit scale. */
typedef struct {
    infer_half d;
    uint8_t qs[3 * INFER_QK_K / 8];     /* [0,64): indices; [64,96): 8 x u32 signs|scale */
} infer_block_iq3_xxs;
INFER__STATIC_ASSERT(sizeof(infer_block_iq3_xxs) == 98, "iq3_xxs size");

/* IQ3_S, 3.44 bpw: 9-bit index per 4 weights, explicit sign masks, 4-bit scale per 32. */
typedef struct {
    infer_half d;
    uint8_t qs[INFER_QK_K / 4];         /* index low bytes, one per 4 weights */
    uint8_t qh[INFER_QK_K / 32];        /* index bit 8: byte per 32 weights, bit k for index k */
    uint8_t signs[INFER_QK_K / 8];      /* one sign mask byte per 8 weights */
    uint8_t scales[INFER_QK_K / 64];    /* two 4-bit scales per 64 weights */
} infer_block_iq3_s;
INFER__STATIC_ASSERT(sizeof(infer_block_iq3_s) == 110, "iq3_s size");

/* IQ1_S, 1.56 bpw: 11-bit index into a ternary grid per 8 weights; per 32 weights a
 * u16 with the 4 high index parts, a 3-bit scale and the sign of a +-1/8 shift. */
typedef struct {
    infer_half d;
    uint8_t  qs[INFER_QK_K / 8];        /* index low bytes */
    uint16_t qh[INFER_QK_K / 32];       /* 4 x 3 index bits | scale << 12 | shift sign << 15 */
} infer_block_iq1_s;
INFER__STATIC_ASSERT(sizeof(infer_block_iq1_s) == 50, "iq1_s size");

/* IQ1_M, 1.75 bpw: like IQ1_S but a 3-bit scale per 16 weights and a shift sign per
 * 8; the f16 super-block scale is split into four nibbles hidden in `scales`. */
typedef struct {
    uint8_t qs[INFER_QK_K / 8];         /* index low bytes */
    uint8_t qh[INFER_QK_K / 16];        /* nibble per 8 weights: 3 index bits | shift sign << 3 */
    uint8_t scales[INFER_QK_K / 32];    /* 4 x u16: four 3-bit scales | nibble of d << 12 */
} infer_block_iq1_m;
INFER__STATIC_ASSERT(sizeof(infer_block_iq1_m) == 56, "iq1_m size");

/* =========================================================================================
 * PUBLIC PART
 * ========================================================================================= */

/* Which algorithm turns text into ids (GGUF `tokenizer.ggml.model`). */
typedef enum infer_tok_kind {
    INFER_TOK_NONE = 0, /* "none"/"no_vocab": the model has no vocabulary */
    INFER_TOK_SPM,      /* "llama": SentencePiece BPE, merges ranked by token score */
    INFER_TOK_BPE,      /* "gpt2":  byte-level BPE, merges ranked by merge-list index */
    INFER_TOK_WPM       /* "bert":  WordPiece, greedy longest match */
} infer_tok_kind;

/* Byte-string -> int32 hash table (open addressing, linear probing). Keys live in the
 * tokenizer's arena and may contain any byte, which is why this is not an stb_ds map
 * (stb_ds string keys stop at NUL). `aux` distinguishes keys with equal bytes: merges use
 * it for the length of the left half. A slot with value < 0 is empty. */
typedef struct infer__tok_slot { uint32_t hash, off, len; int32_t aux, value; } infer__tok_slot;
typedef struct infer__tok_map { infer__tok_slot *slots; uint32_t mask, count; } infer__tok_map;

struct infer__regex;

/* A loaded tokenizer. Filled by infer__tok_init(); read-only afterwards, so one tokenizer
 * can serve many threads. The fields above `internals` are the public ones. */
typedef struct infer_tokenizer {
    infer_tok_kind kind;
    int32_t n_vocab;
    int32_t bos, eos, eot, eom, unk, pad, sep, mask;  /* special ids, -1 = none */
    int add_bos, add_eos, add_space_prefix;           /* resolved flags (0/1) */
    int32_t max_token_len;   /* longest token text in bytes */
    int32_t max_piece_len;   /* longest infer_token_to_piece() result in bytes */
    char pre[32];            /* BPE pre-tokenizer in use, e.g. "llama-bpe" ("" otherwise) */
    /* internals */
    int32_t pre_def;         /* index into infer__pre_defs */
    int ignore_merges;       /* BPE: a whole pre-token that is a vocab entry skips merging */
    int clean_spaces;        /* infer_detokenize: drop the space in " ." " ," " 's" ... */
    char *arena;             /* token texts, merge keys, decoded pieces */
    uint32_t *text_off;      /* [n_vocab+1] token i's text is arena[text_off[i], text_off[i+1]) */
    uint32_t *piece_off;     /* [n_vocab+1] likewise for its decoded bytes */
    uint8_t *attr;           /* [n_vocab] INFER__TOK_* attribute bits */
    float *score;            /* [n_vocab] SPM merge priority (NULL: all 0) */
    infer__tok_map vocab;    /* text -> id */
    infer__tok_map merges;   /* left||right (aux = left length) -> rank */
    int32_t *specials;       /* ids of control/user-defined/unknown tokens, longest text first */
    int32_t n_specials;
    int32_t byte_token[256]; /* SPM byte fallback: id of "<0xXX>", -1 if absent */
    struct infer__regex **regex; /* BPE pre-tokenizer, applied in order */
    int32_t n_regex;
} infer_tokenizer;

/* Streaming detokenizer state: see infer_detok_push(). */
typedef struct infer_detok {
    const infer_tokenizer *tok;
    int special;             /* render control tokens' texts (default 0: they print nothing) */
    int at_start;            /* nothing emitted yet (the SPM leading space is still to strip) */
    int n_pending;
    unsigned char pending[4]; /* the start of a UTF-8 sequence whose other bytes are to come */
} infer_detok;

void infer_tokenizer_free(infer_tokenizer *t);
/* text -> ids. add_special: BOS/EOS as the model's flags say (WPM: CLS ... SEP);
 * parse_special: control-token texts in `text` become those tokens. Returns the token
 * count (only the first max_out are written: a larger result asks for a bigger array),
 * -1 if the model has no vocabulary or the arguments are bad. */
int  infer_tokenize(const infer_tokenizer *t, const char *text, size_t len, int add_special,
                    int parse_special, int32_t *out, int max_out);
/* the bytes one token stands for ("" for control tokens unless special); returns the
 * count, writes nothing when it exceeds size; -1 for a bad id. Not NUL-terminated. */
int  infer_token_to_piece(const infer_tokenizer *t, int32_t id, int special, char *buf, int size);
/* ids -> text in one go, as llama_detokenize (clean-up of spaces included); returns the
 * byte count, writes nothing when it exceeds size; -1 for a bad id. */
int  infer_detokenize(const infer_tokenizer *t, const int32_t *ids, int n, int remove_special,
                      int unparse_special, char *out, int size);
/* streaming: push ids as they are generated, get back complete UTF-8 only */
void infer_detok_init(infer_detok *d, const infer_tokenizer *t);
int  infer_detok_push(infer_detok *d, int32_t id, char *out, int size);
int  infer_detok_flush(infer_detok *d, char *out, int size);
/* end of generation: eos, eot, eom and the tokens llama.cpp recognises by text */
int  infer_token_is_eog(const infer_tokenizer *t, int32_t id);
int  infer_token_is_control(const infer_tokenizer *t, int32_t id);

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
    int32_t rot_first;      /* the first rotated dim of a head: 0, or head_dim - n_rot when rope
                               covers the last dims (deepseek4) */
    int32_t inverse;        /* 1: rotate by -theta (undo the rotation at that position) */
} infer_rope;

typedef struct infer_kv_view {       /* what attention needs to read one sequence's cache */
    void *k, *v;                     /* pool base for this layer: [n_blocks*block_size, kv_dim] */
    infer_type type;                 /* F32 or F16 */
    int32_t block_size;              /* tokens per block */
    const int32_t *block_table;      /* logical block -> physical block */
    int32_t kv_dim;                  /* n_head_kv * head_dim (row length of k and v) */
} infer_kv_view;

/* Gate activations of the GLU op (cfg.ffn_act uses the same numbers). */
enum { INFER_ACT_SILU = 0, INFER_ACT_RELU2 = 1 };

struct infer_config;

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
    /* router: probs = softmax (gating 1), sigmoid (gating 2) or sqrt(softplus) (gating 4) of
     * logits [rows, n_expert]; ids [rows, n_used] = the n_used largest probs + bias (bias
     * [n_expert] or NULL; it only selects), or, with ids_given, the ids already there (hash
     * routing); weights [rows, n_used] = their probs, renormalised to sum 1 when `norm`, times
     * `scale` */
    void (*moe_route)(void *ctx, int32_t *ids, float *weights, const float *logits, int rows, int n_expert,
                      int n_used, int gating, int norm, float scale, const float *bias, int ids_given);
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
    /* --- device backends --- */
    /* out = act(gate) * up, act = INFER_ACT_SILU (swiglu above) or INFER_ACT_RELU2 (max(z, 0)^2);
     * limit > 0 clamps first: gate = min(gate, limit), up = clamp(up, -limit, limit) */
    void (*glu)(void *ctx, float *out, const float *gate, const float *up, int64_t n, int act, float limit);
    /* a context: one per session, one more per model for its uploaded weights */
    infer_status (*ctx_create)(void **ctx, int n_threads, int precise, infer_error *err);
    void (*ctx_free)(void *ctx);
    /* the first failure an op or a copy met since the context was made ("" when none): ops
     * return nothing, so a device error is kept here and reported by the next sync/download */
    const char *(*last_error)(void *ctx);
    /* can this backend run a model of this shape (limits of its kernels, e.g. head size)?
     * 0 with a reason in why[0..n) if not */
    int (*supports_config)(const struct infer_config *c, char *why, size_t n);
    /* 1: alloc gives host memory and the ops read the model's (mmapped) weights in place;
     * 0: a device, whose weights are uploaded once per model (infer_model_upload) */
    int host_memory;
    /* optional (NULL: the forward pass calls matmul n times): out[m] = W_m x for n (<= 4)
     * weights that read the same x [rows, K], e.g. a layer's q, k and v, in one go */
    void (*matmul_n)(void *ctx, int n, float *const *out, const infer_tensor *const *w, const float *x, int rows);
    /* --- deepseek4 (DeepSeek-V4): hyper-connections and compressed sparse attention. A model
     * of that family needs all five; other models never call them (see >>deepseek4). --- */
    /* Hyper-connections before a block. x: [rows, n_hc, dim], the n_hc residual streams;
     * mix: [rows, n_mix], the matmul of the block's hc_fn with RMS(x) over all n_hc*dim values;
     * base: [n_mix]; scale: [3].  u[r] = sum_i pre_i x[r, i]  with
     *   pre_i = sigmoid(mix_i scale[0] + base_i) + eps                          i < n_hc
     * and, when pc is given ([rows, n_hc + n_hc^2]), the mixes hc_post uses:
     *   post_i = 2 sigmoid(mix_{n_hc+i} scale[1] + base_{n_hc+i})
     *   C = Sinkhorn(softmax over d of (mix_{2n_hc + s n_hc + d} scale[2] + base_..) + eps)   [s, d]
     * pc NULL: the head's collapse (n_mix = n_hc, only pre). */
    void (*hc_pre)(void *ctx, float *u, float *pc, const float *mix, const float *x, const float *base, const float *scale,
                   int rows, int dim, int n_hc, int sinkhorn_iters, float eps);
    /* Hyper-connections after a block, in place: x[r, d] = post_d h[r] + sum_s C[s, d] x[r, s]
     * (x: [rows, n_hc, dim], h: [rows, dim], pc from hc_pre) */
    void (*hc_post)(void *ctx, float *x, const float *h, const float *pc, int rows, int dim, int n_hc);
    /* KV compressor: softmax pooling of `ratio` consecutive tokens into one entry, channel by
     * channel. kv, gate: [rows, coff*dim] (coff = 2 when `overlap`, else 1); ape: [ratio, coff*dim];
     * pos: the rows' positions, consecutive. Each row whose window closes (pos % ratio ==
     * ratio-1) appends one entry [dim] to `entries`, in row order. Windows span chunks: state
     * ([2, 3, dim], zeroed for a new sequence) carries the open windows' running softmax. */
    void (*compress)(void *ctx, float *entries, float *state, const float *kv, const float *gate, const float *ape,
                     const int32_t *pos, int rows, int dim, int ratio, int overlap);
    /* Lightning indexer: for query row r, the compressed entries s < (pos[r]+1)/ratio are
     * scored  scale * sum_h w[r, h] relu(q[r, h] . keys[s])  (q: [rows, n_head, head_dim], w:
     * [rows, n_head], keys: the indexer's key cache, one head of head_dim); sel[r, 0..n_sel[r])
     * = the top_k best (all when fewer are visible; ties: the lower index), ascending. */
    void (*indexer_topk)(void *ctx, int32_t *sel, int32_t *n_sel, const float *q, const float *w, const infer_kv_view *keys,
                         const int32_t *pos, int rows, int n_head, int head_dim, int ratio, int top_k, float scale);
    /* Attention with one shared K=V head over a sliding window plus compressed entries:
     * query row r, head h attends to the cache positions pos[r]-window < j <= pos[r] (window 0:
     * all) of kv, and to compressed entries of comp (ratio > 0): the ones listed in sel[r,
     * 0..n_sel[r]) (rows top_k apart), or, sel NULL, every visible one (s < (pos[r]+1)/ratio).
     * sinks [n_head] (or NULL): a logit per head in the softmax's denominator with no value. */
    void (*attention_sparse)(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos, int rows,
                             int n_head, int head_dim, float scale, int window, const float *sinks,
                             const infer_kv_view *comp, int ratio, const int32_t *sel, const int32_t *n_sel, int top_k);
    /* optional (NULL: through the host): dst[0..bytes) = src[0..bytes), both backend memory */
    infer_status (*copy)(void *ctx, void *dst, const void *src, size_t bytes);
} infer_kernels;
/* Memory that stays on the host whatever the backend: the kernel table itself, the tensor
 * structs (only their `data` is backend memory), infer_rope (its freq_factors *is* backend
 * memory), infer_kv_view (its k, v and block_table are backend memory), and the 4 sections
 * of rope_multi. Everything else an op is given is backend memory. */

/* The CPU backend. Its context holds the thread count and the precise flag. */
const infer_kernels *infer_cpu_kernels(void);

/* The CUDA backend (infer_cuda.cu; a build made with `make cuda` links it and defines
 * INFER_CUDA). infer_cuda_init picks the device and fails, with the reason, when there is
 * none; infer_cuda_kernels is the table (NULL before a successful init). */
infer_status infer_cuda_init(int device, infer_error *err);
const infer_kernels *infer_cuda_kernels(void);
/* The GPU backend of this build: the CUDA table after infer_cuda_init(0), or a clear error
 * when the build has no GPU backend or the machine no device. */
infer_status infer_gpu_kernels(const infer_kernels **out, infer_error *err);

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
    /* deepseek4 (DeepSeek-V4; per-layer compress ratios and clamps are in the layers) */
    int32_t q_lora_rank;         /* rank of the low-rank query: q = W_qb RMSNorm(W_qa x) */
    int32_t sliding_window;      /* raw keys a query sees (itself included); 0 = all */
    int32_t n_hc;                /* hyper-connection streams of the residual (0: one plain stream) */
    int32_t hc_sinkhorn_iters;
    float hc_eps;
    float compress_rope_base;    /* rope theta of the layers with compressed entries */
    int32_t n_hash_layers;       /* the first n_hash_layers layers route by token id */
    int32_t idx_n_head, idx_head_dim, idx_top_k;   /* the lightning indexer */
    int32_t o_groups, o_lora_rank;                  /* grouped low-rank output projection */
} infer_config;

typedef struct infer_model_params {
    int vocab_only;              /* load only the tokenizer (works on files with no tensors) */
} infer_model_params;

infer_status infer_model_load(infer_model **out, const char *path, const infer_model_params *p, infer_error *err);
/* parse a GGUF already in memory (not copied: it must outlive the model) */
infer_status infer_model_load_memory(infer_model **out, const void *data, size_t size, const infer_model_params *p, infer_error *err);
void infer_model_free(infer_model *m);
/* Copy the weights the forward pass reads to a device backend, once (later calls with the same
 * backend do nothing). infer_session_create calls it for a device backend; calling it first
 * makes the upload's cost and errors (a weight type the backend lacks, out of memory) explicit,
 * and is required before sessions are created from several threads at once. */
infer_status infer_model_upload(infer_model *m, const infer_kernels *k, infer_error *err);
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
    const infer_kernels *backend;/* NULL = the CPU; e.g. from infer_gpu_kernels() */
    int32_t n_seq_max;           /* sequences the session holds at once; 0 = 1 (see infer_seq_add) */
    int32_t prefix_cache;        /* keep full KV blocks for reuse by later sequences (1 by default) */
} infer_session_params;

infer_session_params infer_session_default_params(void);
/* n_ctx positions of KV cache, shared by all the session's sequences */
infer_status infer_session_create(infer_session **out, infer_model *m, const infer_session_params *p, infer_error *err);
void infer_session_free(infer_session *s);
void infer_session_reset(infer_session *s);           /* forget all tokens (of every sequence) */
int32_t infer_session_n_past(const infer_session *s); /* sequence 0's */
int32_t infer_session_n_ctx(const infer_session *s);
/* Bytes of cache the session holds for one layer (-1: all layers): its KV blocks in use,
 * compressed entries and recurrent state. A sliding-window layer's stays bounded as the
 * sequence grows; a full-attention layer's grows with it. */
size_t infer_session_cache_bytes(const infer_session *s, int layer);
/* Feed n tokens to sequence 0 at its next positions. logits: NULL, or room for n*n_vocab
 * floats when all_logits is set (one row per token), else n_vocab floats for the last token. */
infer_status infer_eval(infer_session *s, const int32_t *tokens, int n, float *logits, int all_logits, infer_error *err);

/* Many sequences at once (continuous batching, >>kv). A session holds up to n_seq_max
 * sequences over one pool of KV blocks. Sequence 0 exists from the start (infer_eval feeds
 * it); infer_seq_add makes more, infer_seq_remove ends one and returns its blocks. Between
 * calls of infer_eval_batch, sequences may join and leave in any order; one call evaluates
 * tokens of several sequences in the same steps (a prompt and single decode tokens side by
 * side), each sequence's logits the same as if it ran alone. */
infer_status infer_seq_add(infer_session *s, int32_t *seq, infer_error *err);
void infer_seq_remove(infer_session *s, int32_t seq);
int32_t infer_seq_n_past(const infer_session *s, int32_t seq);  /* -1: no such sequence */
/* An empty sequence starts with the longest prefix of tokens[0..n) whose keys and values
 * the prefix cache still holds (at most n-1 tokens, so the rest gives logits): returns how
 * many; evaluate tokens[that..n) next. 0 for models that cannot share a prefix (recurrent
 * state, sliding windows) or with prefix_cache off. */
int32_t infer_seq_reuse(infer_session *s, int32_t seq, const int32_t *tokens, int32_t n);
/* tokens' worth of KV blocks that are free or hold only cached prefixes */
int32_t infer_session_free_tokens(const infer_session *s);
typedef struct infer_batch_item {
    int32_t seq;                 /* the sequence these tokens continue */
    const int32_t *tokens;
    int32_t n;
    float *logits;               /* NULL, or room as for infer_eval */
    int32_t all_logits;
} infer_batch_item;
/* Each item's tokens at its sequence's next positions (one item per sequence). Either every
 * sequence gets the KV blocks it needs or the call fails with INFER_ERR_CONTEXT and nothing
 * changes. */
infer_status infer_eval_batch(infer_session *s, const infer_batch_item *items, int n_items, infer_error *err);

/* Backend check (>>backends): with INFER_DIFF_OPS, run every op of the table `k` on random
 * inputs next to the CPU reference (precise), for each weight type both support; with
 * INFER_DIFF_MODEL (and a model m), the whole model on both over n_tokens tokens (a prompt,
 * then one decode step), comparing the hidden state after every layer and the logits. One
 * line per result goes to print. Returns the number of results beyond their tolerance
 * (0: the backends agree), or -1 with err set. */
enum { INFER_DIFF_OPS = 1, INFER_DIFF_MODEL = 2 };
int infer_backend_diff(const infer_kernels *k, infer_model *m, int n_tokens, int what, void (*print)(void *user, const char *line),
                       void *user, infer_error *err);

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
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sched.h>

#if defined(INFER_MALLOC) && defined(INFER_REALLOC) && defined(INFER_FREE)
#elif !defined(INFER_MALLOC) && !defined(INFER_REALLOC) && !defined(INFER_FREE)
#define INFER_MALLOC(n) malloc(n)
#define INFER_REALLOC(p, n) realloc(p, n)
#define INFER_FREE(p) free(p)
/* libc's calloc gives large blocks as fresh zero pages that cost no memory until written:
 * scratch sized for a 512-token batch stays out of the resident set until a batch uses it */
#define INFER__CALLOC_LIBC 1
#else
#error "define all of INFER_MALLOC, INFER_REALLOC and INFER_FREE, or none"
#endif

#define STBDS_REALLOC(c, p, n) INFER_REALLOC(p, n)
#define STBDS_FREE(c, p) INFER_FREE(p)
#ifndef STB_DS_IMPLEMENTATION
#define STB_DS_IMPLEMENTATION
#endif
#include <stb/stb_ds.h>

/* ------------------------------------------------------------------------------------------
 * >>util -- small tools the rest is built from.
 *   - errors: infer__fail() formats the message and returns the status, so a check reads
 *     `if (bad) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s': ...", name);`
 *   - a bounds-checked byte cursor: every read from a file goes through it, so a length or
 *     offset that points past the end becomes an error, never a read out of bounds.
 *   - checked size arithmetic, binary16/bfloat16 conversion, a seeded RNG, a timer, mmap.
 * ---------------------------------------------------------------------------------------- */
const char *infer_status_str(infer_status s) {
    static const char *names[] = {
#define INFER__X(name, text) text,
        INFER_STATUS_LIST(INFER__X)
#undef INFER__X
    };
    return (unsigned)s < INFER_STATUS_COUNT ? names[s] : "unknown status";
}

#if defined(__GNUC__)
#define INFER__MAYBE_UNUSED __attribute__((unused))   /* helpers only some programs call */
__attribute__((format(printf, 3, 4)))
#else
#define INFER__MAYBE_UNUSED
#endif
static infer_status infer__fail(infer_error *err, infer_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = st;
    }
    return st;
}

/* a*b and a+b on sizes, reporting overflow instead of wrapping */
static int infer__mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (a && b > UINT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}
static int infer__add_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (b > UINT64_MAX - a) return 0;
    *out = a + b;
    return 1;
}

static void *infer__calloc(size_t n, size_t size) {
    uint64_t bytes;
    if (!infer__mul_ok(n, size, &bytes) || bytes > SIZE_MAX) return NULL;
#ifdef INFER__CALLOC_LIBC
    return calloc(1, bytes ? (size_t)bytes : 1);
#endif
    void *p = INFER_MALLOC(bytes ? bytes : 1);
    if (p) memset(p, 0, bytes);
    return p;
}

/* The byte cursor. `pos` only moves forward after a successful bounds check. */
typedef struct infer__cursor { const uint8_t *base; size_t size, pos; } infer__cursor;

static int infer__need(const infer__cursor *c, uint64_t n) { return n <= c->size - c->pos; }
static int infer__read(infer__cursor *c, void *dst, size_t n) {
    if (!infer__need(c, n)) return 0;
    memcpy(dst, c->base + c->pos, n);
    c->pos += n;
    return 1;
}
static int infer__read_str(infer__cursor *c, infer_str *s) {
    uint64_t len;
    if (!infer__read(c, &len, 8) || !infer__need(c, len)) return 0;
    s->ptr = (const char *)c->base + c->pos;
    s->len = len;
    c->pos += len;
    return 1;
}

static int infer__str_eq(infer_str s, const char *z) { size_t n = strlen(z); return s.len == n && memcmp(s.ptr, z, n) == 0; }

/* ---- binary16 / bfloat16 ---- */
static inline float infer__fp32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t infer__fp32_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* binary16 -> binary32, exact for every input: sign | exponent rebias 15 -> 127 | mantissa */
static inline float infer__fp16_to_fp32(infer_half h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) return infer__fp32_from_bits(sign | 0x7f800000u | (man << 13)); /* inf, nan */
    if (exp == 0) {                                           /* zero or subnormal: man * 2^-24 */
        float f = (float)man * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    return infer__fp32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
}

/* binary32 -> binary16 with round-to-nearest-even, overflow to inf, nan stays nan. */
static inline infer_half infer__fp32_to_fp16(float f) {
    uint32_t x = infer__fp32_to_bits(f), sign = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (infer_half)(sign | 0x7e00);
    if (ax >= 0x477ff000u) return (infer_half)(sign | 0x7c00);     /* rounds to >= 65536 */
    if (ax < 0x38800000u) {                                        /* result is subnormal */
        float v = infer__fp32_from_bits(ax) * 16777216.0f;        /* in units of 2^-24, exact */
        float r = (v + 8388608.0f) - 8388608.0f;                  /* float add rounds to even */
        return (infer_half)(sign | (uint32_t)r);
    }
    uint32_t h = (((ax >> 23) - 112) << 10) | ((ax & 0x7fffff) >> 13), rest = ax & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;        /* a carry may bump the exponent: correct */
    return (infer_half)(sign | h);
}

static inline float infer__bf16_to_fp32(infer_bf16 b) { return infer__fp32_from_bits((uint32_t)b << 16); }
static inline infer_bf16 infer__fp32_to_bf16(float f) {
    uint32_t u = infer__fp32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (infer_bf16)((u >> 16) | 64);   /* quiet nan */
    return (infer_bf16)((u + 0x7fff + ((u >> 16) & 1)) >> 16);                   /* nearest even */
}

/* round to nearest, ties to even, by adding 1.5*2^23 and reading the low mantissa bits
 * (valid for |x| < 2^22; the quantizers only call it on small values) */
static inline int infer__nearest_int(float fval) {
    float val = fval + 12582912.f;
    int i;
    memcpy(&i, &val, sizeof(int));
    return (i & 0x007fffff) - 0x00400000;
}

/* ---- RNG: splitmix64 seeding a xoshiro256** generator; deterministic for a seed ---- */
typedef struct infer__rng { uint64_t s[4]; } infer__rng;
static uint64_t infer__splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static void infer__rng_seed(infer__rng *r, uint64_t seed) { for (int i = 0; i < 4; i++) r->s[i] = infer__splitmix(&seed); }
static uint64_t infer__rng_next(infer__rng *r) {
    uint64_t *s = r->s, res = s[1] * 5;
    res = ((res << 7) | (res >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return res;
}
static double infer__rng_uniform(infer__rng *r) { return (double)(infer__rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

double infer_time_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- mmap: the file's bytes become the model's weights without a copy ---- */
typedef struct infer__mapping { void *addr; size_t size; } infer__mapping;

static infer_status infer__map_file(infer__mapping *m, const char *path, infer_error *err) {
    m->addr = NULL; m->size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return infer__fail(err, INFER_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return infer__fail(err, INFER_ERR_IO, "'%s' is not a regular file", path);
    }
    if (st.st_size == 0) { close(fd); return infer__fail(err, INFER_ERR_FORMAT, "'%s' is empty", path); }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return infer__fail(err, INFER_ERR_IO, "cannot mmap '%s': %s", path, strerror(errno));
    m->addr = p; m->size = (size_t)st.st_size;
    return INFER_OK;
}
static void infer__unmap(infer__mapping *m) { if (m->addr) munmap(m->addr, m->size); m->addr = NULL; }

/* ---- a small thread pool: run fn(arg, i, n) for i in 0..n-1 on the pool's threads ----
 * A decode step is ~100 short jobs (one per matmul), a few microseconds to a millisecond
 * each, so handing a job over must cost far less than a microsecond. Waking a sleeping
 * thread through the kernel costs 5-50 us; instead the workers spin on the job counter
 * (with the pause instruction, which tells the core it is a spin loop) and go to sleep on a
 * condition variable only after spinning for about INFER__SPIN_US without work. The caller
 * runs part 0 itself and spins until the others report done.
 *   publish:  fn, arg, pending = n-1, then generation++ (release: the job is visible first)
 *   worker:   sees generation change (acquire), runs fn(arg, ith, n), pending-- (release)
 *   caller:   runs part 0, waits for pending == 0 (acquire: the workers' writes are visible)
 * Sleeping workers check the generation under the mutex that the caller takes to bump it,
 * so no wake-up is lost. */
#include <stdatomic.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define INFER__PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define INFER__PAUSE() __asm__ __volatile__("yield")
#else
#define INFER__PAUSE() ((void)0)
#endif
#define INFER__SPIN_US 2000

typedef void (*infer__task_fn)(void *arg, int ith, int nth);
typedef struct infer__pool {
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    infer__task_fn fn; void *arg;
    atomic_uint generation;   /* bumped for each job */
    atomic_int pending;       /* parts not yet finished */
    atomic_int quit;
} infer__pool;

typedef struct { infer__pool *p; int ith; } infer__worker_arg;

static void *infer__worker(void *varg) {
    infer__worker_arg *wa = (infer__worker_arg *)varg;
    infer__pool *p = wa->p;
    const int ith = wa->ith;
    INFER_FREE(wa);
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (g == seen) {                          /* no new job: spin a while, then sleep */
            const double t0 = infer_time_seconds();
            for (int i = 1; g == seen; i++) {
                INFER__PAUSE();
                g = atomic_load_explicit(&p->generation, memory_order_acquire);
                if (g != seen || (i & 1023) || infer_time_seconds() - t0 < INFER__SPIN_US * 1e-6) continue;
                pthread_mutex_lock(&p->mu);
                while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen) pthread_cond_wait(&p->cv, &p->mu);
                pthread_mutex_unlock(&p->mu);
            }
        }
        seen = g;
        if (atomic_load_explicit(&p->quit, memory_order_acquire)) return NULL;
        p->fn(p->arg, ith, p->n_threads);
        atomic_fetch_sub_explicit(&p->pending, 1, memory_order_release);
    }
}

static infer__pool *infer__pool_create(int n_threads) {
    infer__pool *p = (infer__pool *)infer__calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n_threads = n_threads < 1 ? 1 : n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    atomic_init(&p->generation, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->quit, 0);
    p->threads = (pthread_t *)infer__calloc((size_t)p->n_threads, sizeof(pthread_t));
    if (!p->threads) { INFER_FREE(p); return NULL; }
    for (int i = 1; i < p->n_threads; i++) {       /* thread 0 is the caller */
        infer__worker_arg *wa = (infer__worker_arg *)INFER_MALLOC(sizeof *wa);
        if (wa) { wa->p = p; wa->ith = i; }
        if (!wa || pthread_create(&p->threads[i], NULL, infer__worker, wa) != 0) {
            INFER_FREE(wa);
            p->n_threads = i;                      /* run with the threads we have */
            break;
        }
    }
    return p;
}

static void infer__pool_publish(infer__pool *p, infer__task_fn fn, void *arg) {
    p->fn = fn; p->arg = arg;
    atomic_store_explicit(&p->pending, p->n_threads - 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* wait (spinning, yielding now and then: a thread may have been descheduled) until *a ==
 * value, with acquire ordering: what the threads that moved it wrote is then visible */
static void infer__spin_until(atomic_int *a, int value) {
    for (int i = 1; atomic_load_explicit(a, memory_order_acquire) != value; i++) {
        INFER__PAUSE();
        if ((i & 4095) == 0) sched_yield();
    }
}

static void infer__pool_run(infer__pool *p, infer__task_fn fn, void *arg) {
    if (!p || p->n_threads == 1) { fn(arg, 0, 1); return; }
    infer__pool_publish(p, fn, arg);
    fn(arg, 0, p->n_threads);
    infer__spin_until(&p->pending, 0);
}

static void infer__pool_free(infer__pool *p) {
    if (!p) return;
    atomic_store_explicit(&p->quit, 1, memory_order_release);
    infer__pool_publish(p, NULL, NULL);
    for (int i = 1; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    INFER_FREE(p->threads);
    INFER_FREE(p);
}

static int infer__n_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

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


/* dequantize / quantize / dot for the float types, the legacy
 * 32-blocks, the ternary types, the FP4 types, Q1_0, Q2_0 and BitNet's I2_S
 * (implementation part).
 *
 * >>quant_a
 * Every type gets three scalar reference functions:
 *   infer__dequant_<t>(src, dst, n)  blocks -> n floats. Bit-exact with ggml's
 *                                    dequantize_row_*: same operations in the same
 *                                    order, so code*scale products round identically.
 *   infer__quant_<t>(src, dst, n)    n floats -> blocks. Byte-exact with ggml's
 *                                    quantize_row_*_ref (closed formulas, no search).
 *   infer__dot_<t>(n, w, x)          sum_k w[k]*x[k], with x already quantized to the
 *                                    type's dot_type (see the traits table).
 * n is always a multiple of the block size; rows never share a block.
 *
 * Why quantized activations: a weight block scaled by d_w times an activation block
 * scaled by d_x is d_w*d_x * sum(q_w*q_x). The inner sum is exact integer arithmetic
 * (cheap, and SIMD-friendly later); floats appear once per block. The activation block
 * must cover the same index range as the weight block, so the activation format is
 * chosen by block length: 32-blocks pair with Q8_0 (Q8_1 when the weight has an
 * offset m), 256-blocks with Q8_K, and the 64/128-blocks (NVFP4, Q1_0, Q2_0) with
 * 2 or 4 consecutive Q8_0 blocks. The float types dot against plain f32.
 *
 * Offset codes (q - 8, t - 1, ...) are dotted as sum(q*y) - offset*sum(y): unsigned
 * code times signed activation, the form SIMD dot instructions want. It also sidesteps
 * a GCC 12.2 bug: with -march=native on AVX512-VNNI CPUs it vectorizes
 * sum(((u8 >> s) & 3) - 1) * i8) into vpdpbusd as if the left factor were unsigned.
 *
 * Exactness note: a code (at most 8 bits, or an FP4 value) times an f16 / E8M0 / UE4M3
 * scale needs at most 16 significant bits, so every code*scale product below is exact in
 * f32; only the `+ m` of Q4_1/Q5_1 rounds. Fused multiply-add contraction therefore
 * cannot change any dequantized value. */
#include <float.h>


/* ---- small format helpers ---- */

/* E2M1 values times 2, indexed by the 4-bit FP4 code (bit 3 = sign). The doubling
 * makes them integers; the block scales below are halved to compensate. */
static const int8_t infer__kvalues_fp4[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* E8M0 byte -> 2^(e-128), i.e. half the MX scale 2^(e-127). Built from bits:
 * e = 0, 1 give the subnormals 2^-128, 2^-127; otherwise biased exponent e-1. */
static inline float infer__e8m0_to_fp32_half(uint8_t e) {
    return infer__fp32_from_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* UE4M3 byte (unsigned: 4 exponent bits, bias 7, 3 mantissa bits) -> half its value.
 * 0x00 and 0x7F (NaN) read as 0; exponent 0 is subnormal: man * 2^-9. */
static inline float infer__ue4m3_to_fp32(uint8_t x) {
    if (x == 0 || x == 0x7F) return 0.0f;
    int e = (x >> 3) & 15, m = x & 7;
    float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return v * 0.5f;
}

/* f32 -> UE4M3, as ggml does it: clamp to 448, keep the top 3 mantissa bits and round
 * half up on the 4th (ties away, not to even); saturate at 0x7E (= 240). */
static inline uint8_t infer__fp32_to_ue4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    uint32_t b = infer__fp32_to_bits(x);
    int e = (int)((b >> 23) & 0xFF) - 127 + 7, m = (b >> 20) & 7;
    if (e <= 0) {                                   /* subnormal: round(x * 2^9), 1..7 */
        int s = (int)(x * 512.0f + 0.5f);
        return (uint8_t)(s < 1 ? 0 : s > 7 ? 7 : s);
    }
    m += (b >> 19) & 1;
    if (m > 7) { m = 0; e++; }
    if (e >= 15) return 0x7E;
    return (uint8_t)((e << 3) | m);
}

/* FP4 code whose value kvalues_fp4[i]*d is nearest to x (first one on ties). */
static inline uint8_t infer__fp4_best_index(float x, float d) {
    int best = 0;
    float best_err = fabsf((float)infer__kvalues_fp4[0] * d - x);
    for (int i = 1; i < 16; i++) {
        float err = fabsf((float)infer__kvalues_fp4[i] * d - x);
        if (err < best_err) { best = i; best_err = err; }
    }
    return (uint8_t)best;
}

/* Largest-magnitude element with its sign (first one on ties). */
static inline float infer__signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) if (amax < fabsf(x[j])) { amax = fabsf(x[j]); max = x[j]; }
    return max;
}

static inline void infer__min_max(const float *x, int n, float *mn, float *mx) {
    *mn = FLT_MAX; *mx = -FLT_MAX;
    for (int j = 0; j < n; j++) { if (x[j] < *mn) *mn = x[j]; if (x[j] > *mx) *mx = x[j]; }
}

/* ===================================================================================
 * F32, F16, BF16: one element per "block". Their dot takes f32 activations and
 * accumulates in double: this is the exact-maths reference path.
 * =================================================================================== */

static void infer__dequant_f32(const void *src, float *dst, int64_t n) { memcpy(dst, src, (size_t)n * 4); }
/* I32 is not a weight type: it holds integer tables (deepseek4's token -> experts map). It
 * converts to float for display and tests; no matmul reads it. */
static void infer__dequant_i32(const void *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) { int32_t v; memcpy(&v, (const uint8_t *)src + 4 * i, 4); dst[i] = (float)v; }
}
static void infer__quant_f32(const float *src, void *dst, int64_t n) { memcpy(dst, src, (size_t)n * 4); }
static float infer__dot_f32(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return (float)s;
}

static void infer__dequant_f16(const void *src, float *dst, int64_t n) {
    const infer_half *h = (const infer_half *)src;
    for (int64_t i = 0; i < n; i++) dst[i] = infer__fp16_to_fp32(h[i]);
}
static void infer__quant_f16(const float *src, void *dst, int64_t n) {
    infer_half *h = (infer_half *)dst;
    for (int64_t i = 0; i < n; i++) h[i] = infer__fp32_to_fp16(src[i]);
}
static float infer__dot_f16(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)infer__fp16_to_fp32(a[i]) * b[i];
    return (float)s;
}

static void infer__dequant_bf16(const void *src, float *dst, int64_t n) {
    const infer_bf16 *h = (const infer_bf16 *)src;
    for (int64_t i = 0; i < n; i++) dst[i] = infer__bf16_to_fp32(h[i]);
}
static void infer__quant_bf16(const float *src, void *dst, int64_t n) {
    infer_bf16 *h = (infer_bf16 *)dst;
    for (int64_t i = 0; i < n; i++) h[i] = infer__fp32_to_bf16(src[i]);
}
static float infer__dot_bf16(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)infer__bf16_to_fp32(a[i]) * b[i];
    return (float)s;
}

/* ===================================================================================
 * Q4_0 (18 bytes, 32 weights), symmetric 4-bit.
 *
 *   byte  0    1    2    3    4          17
 *       +----+----+----+----+--  ...  --+----+
 *       |  d (f16) | qs[0]| qs[1]  ...  |qs[15]|
 *       +----+----+----+----+--  ...  --+----+
 *   qs[j] = (q[j+16] << 4) | q[j]      (low nibbles: elements 0..15, high: 16..31)
 *
 *   x[j] = (q[j] - 8) * d
 * Quantizer: m = the signed largest-magnitude value, d = m / -8, so m maps to code 0
 * (-8) exactly; q = min(15, trunc(x/d + 8.5)).
 * Dot: vs Q8_0, d_w*d_x * sum((q-8)*q8).
 * =================================================================================== */

static void infer__dequant_q4_0(const void *src, float *dst, int64_t n) {
    const infer_block_q4_0 *b = (const infer_block_q4_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK4_0; i++, dst += INFER_QK4_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)((b[i].qs[j] & 15) - 8) * d;
            dst[j + 16] = (float)((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

static void infer__quant_q4_0(const float *src, void *dst, int64_t n) {
    infer_block_q4_0 *b = (infer_block_q4_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK4_0; i++, src += INFER_QK4_0) {
        const float d = infer__signed_absmax(src, INFER_QK4_0) / -8, id = d ? 1.0f / d : 0.0f;
        b[i].d = infer__fp32_to_fp16(d);
        for (int j = 0; j < 16; j++) {
            int q0 = (int8_t)(src[j] * id + 8.5f), q1 = (int8_t)(src[j + 16] * id + 8.5f);
            b[i].qs[j] = (uint8_t)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
        }
    }
}

static float infer__dot_q4_0(int64_t n, const void *w, const void *x) {
    const infer_block_q4_0 *a = (const infer_block_q4_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK4_0; i++) {
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += (a[i].qs[j] & 15) * y[i].qs[j] + (a[i].qs[j] >> 4) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        sumi -= 8 * sumy;                               /* sum((q-8)*y) = sum(q*y) - 8*sum(y) */
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * Q4_1 (20 bytes, 32 weights), 4-bit with offset.
 *
 *   byte  0    1    2    3    4          19
 *       +---------+---------+-- ... --+------+
 *       | d (f16) | m (f16) | qs[0..15]       |   nibbles as in Q4_0
 *       +---------+---------+-- ... --+------+
 *
 *   x[j] = q[j] * d + m
 * Quantizer: m = min, d = (max - min) / 15, q = min(15, trunc((x - m)/d + 0.5)).
 * Dot: vs Q8_1. sum(w*x) = d_w*d_x*sum(q*q8) + m*d_x*sum(q8). Q8_1 carries
 * s = fp16(d_x*sum(q8)) for SIMD code; this reference recomputes sum(q8) from the
 * integers instead, which avoids the 2^-11 relative error of the fp16 s.
 * =================================================================================== */

static void infer__dequant_q4_1(const void *src, float *dst, int64_t n) {
    const infer_block_q4_1 *b = (const infer_block_q4_1 *)src;
    for (int64_t i = 0; i < n / INFER_QK4_1; i++, dst += INFER_QK4_1) {
        const float d = infer__fp16_to_fp32(b[i].d), m = infer__fp16_to_fp32(b[i].m);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)(b[i].qs[j] & 15) * d + m;
            dst[j + 16] = (float)(b[i].qs[j] >> 4) * d + m;
        }
    }
}

static void infer__quant_q4_1(const float *src, void *dst, int64_t n) {
    infer_block_q4_1 *b = (infer_block_q4_1 *)dst;
    for (int64_t i = 0; i < n / INFER_QK4_1; i++, src += INFER_QK4_1) {
        float mn, mx;
        infer__min_max(src, INFER_QK4_1, &mn, &mx);
        const float d = (mx - mn) / 15, id = d ? 1.0f / d : 0.0f;
        b[i].d = infer__fp32_to_fp16(d);
        b[i].m = infer__fp32_to_fp16(mn);
        for (int j = 0; j < 16; j++) {
            int q0 = (int8_t)((src[j] - mn) * id + 0.5f), q1 = (int8_t)((src[j + 16] - mn) * id + 0.5f);
            b[i].qs[j] = (uint8_t)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
        }
    }
}

static float infer__dot_q4_1(int64_t n, const void *w, const void *x) {
    const infer_block_q4_1 *a = (const infer_block_q4_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK4_1; i++) {
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += (a[i].qs[j] & 15) * y[i].qs[j] + (a[i].qs[j] >> 4) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        const float dy = infer__fp16_to_fp32(y[i].d);
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * dy) + (float)sumy * (infer__fp16_to_fp32(a[i].m) * dy);
    }
    return s;
}

/* ===================================================================================
 * Q5_0 (22 bytes, 32 weights), symmetric 5-bit.
 *
 *   byte  0    1    2 .. 5     6 ......... 21
 *       +---------+----------+---------------+
 *       | d (f16) | qh (u32) |   qs[0..15]   |
 *       +---------+----------+---------------+
 *   low 4 bits: nibbles of qs as in Q4_0; bit 4 of element k: bit k of qh (LE u32)
 *
 *   x[j] = (q[j] - 16) * d,  q = (nibble | qh_bit << 4)
 * Quantizer: d = signed max / -16, q = min(31, trunc(x/d + 16.5)).
 * Dot: vs Q8_0.
 * =================================================================================== */

/* 5-bit code of elements j and j+16 of a Q5 block (qh bit k = high bit of element k). */
static inline int infer__q5_lo(const uint8_t *qs, uint32_t qh, int j) { return (qs[j] & 15) | (int)((qh >> j) << 4 & 16); }
static inline int infer__q5_hi(const uint8_t *qs, uint32_t qh, int j) { return (qs[j] >> 4) | (int)((qh >> (j + 12)) & 16); }

static void infer__dequant_q5_0(const void *src, float *dst, int64_t n) {
    const infer_block_q5_0 *b = (const infer_block_q5_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK5_0; i++, dst += INFER_QK5_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)(infer__q5_lo(b[i].qs, qh, j) - 16) * d;
            dst[j + 16] = (float)(infer__q5_hi(b[i].qs, qh, j) - 16) * d;
        }
    }
}

static void infer__quant_q5_0(const float *src, void *dst, int64_t n) {
    infer_block_q5_0 *b = (infer_block_q5_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK5_0; i++, src += INFER_QK5_0) {
        const float d = infer__signed_absmax(src, INFER_QK5_0) / -16, id = d ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        b[i].d = infer__fp32_to_fp16(d);
        for (int j = 0; j < 16; j++) {
            int q0 = (int8_t)(src[j] * id + 16.5f), q1 = (int8_t)(src[j + 16] * id + 16.5f);
            q0 = q0 < 31 ? q0 : 31; q1 = q1 < 31 ? q1 : 31;
            b[i].qs[j] = (uint8_t)((q0 & 15) | (q1 & 15) << 4);
            qh |= (uint32_t)(q0 >> 4) << j | (uint32_t)(q1 >> 4) << (j + 16);
        }
        memcpy(b[i].qh, &qh, 4);
    }
}

static float infer__dot_q5_0(int64_t n, const void *w, const void *x) {
    const infer_block_q5_0 *a = (const infer_block_q5_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK5_0; i++) {
        uint32_t qh; memcpy(&qh, a[i].qh, 4);
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += infer__q5_lo(a[i].qs, qh, j) * y[i].qs[j] + infer__q5_hi(a[i].qs, qh, j) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        sumi -= 16 * sumy;
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * Q5_1 (24 bytes, 32 weights), 5-bit with offset.
 *
 *   byte  0    1    2    3    4 .. 7     8 ......... 23
 *       +---------+---------+----------+---------------+
 *       | d (f16) | m (f16) | qh (u32) |   qs[0..15]   |   bits as in Q5_0
 *       +---------+---------+----------+---------------+
 *
 *   x[j] = q[j] * d + m
 * Quantizer: m = min, d = (max - min)/31, q = trunc((x - m)/d + 0.5) (no clamp).
 * Dot: vs Q8_1, as Q4_1.
 * =================================================================================== */

static void infer__dequant_q5_1(const void *src, float *dst, int64_t n) {
    const infer_block_q5_1 *b = (const infer_block_q5_1 *)src;
    for (int64_t i = 0; i < n / INFER_QK5_1; i++, dst += INFER_QK5_1) {
        const float d = infer__fp16_to_fp32(b[i].d), m = infer__fp16_to_fp32(b[i].m);
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)infer__q5_lo(b[i].qs, qh, j) * d + m;
            dst[j + 16] = (float)infer__q5_hi(b[i].qs, qh, j) * d + m;
        }
    }
}

static void infer__quant_q5_1(const float *src, void *dst, int64_t n) {
    infer_block_q5_1 *b = (infer_block_q5_1 *)dst;
    for (int64_t i = 0; i < n / INFER_QK5_1; i++, src += INFER_QK5_1) {
        float mn, mx;
        infer__min_max(src, INFER_QK5_1, &mn, &mx);
        const float d = (mx - mn) / 31, id = d ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        b[i].d = infer__fp32_to_fp16(d);
        b[i].m = infer__fp32_to_fp16(mn);
        for (int j = 0; j < 16; j++) {
            int q0 = (uint8_t)((src[j] - mn) * id + 0.5f), q1 = (uint8_t)((src[j + 16] - mn) * id + 0.5f);
            b[i].qs[j] = (uint8_t)((q0 & 15) | (q1 & 15) << 4);
            qh |= (uint32_t)((q0 >> 4) & 1) << j | (uint32_t)((q1 >> 4) & 1) << (j + 16);
        }
        memcpy(b[i].qh, &qh, 4);
    }
}

static float infer__dot_q5_1(int64_t n, const void *w, const void *x) {
    const infer_block_q5_1 *a = (const infer_block_q5_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK5_1; i++) {
        uint32_t qh; memcpy(&qh, a[i].qh, 4);
        int sumi = 0, sumy = 0;
        for (int j = 0; j < 16; j++) {
            sumi += infer__q5_lo(a[i].qs, qh, j) * y[i].qs[j] + infer__q5_hi(a[i].qs, qh, j) * y[i].qs[j + 16];
            sumy += y[i].qs[j] + y[i].qs[j + 16];
        }
        const float dy = infer__fp16_to_fp32(y[i].d);
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * dy) + (float)sumy * (infer__fp16_to_fp32(a[i].m) * dy);
    }
    return s;
}

/* ===================================================================================
 * Q8_0 (34 bytes, 32 weights), symmetric 8-bit. Also the main activation format.
 *
 *   byte  0    1    2 ............ 33
 *       +---------+------------------+
 *       | d (f16) | qs[0..31] (i8)   |
 *       +---------+------------------+
 *
 *   x[j] = qs[j] * d
 * Quantizer: d = max|x| / 127, q = roundf(x/d)  (infer__quant_q8_0, with the base types).
 * Dot: vs Q8_0.
 * =================================================================================== */

static void infer__dequant_q8_0(const void *src, float *dst, int64_t n) {
    const infer_block_q8_0 *b = (const infer_block_q8_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK8_0; i++, dst += INFER_QK8_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK8_0; j++) dst[j] = (float)b[i].qs[j] * d;
    }
}

static float infer__dot_q8_0(int64_t n, const void *w, const void *x) {
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)w, *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK8_0; i++) {
        int sumi = 0;
        for (int j = 0; j < INFER_QK8_0; j++) sumi += a[i].qs[j] * y[i].qs[j];
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * TQ1_0 (54 bytes, 256 ternary weights), 1.6875 bits/weight.
 *
 *   byte  0 ............ 31  32 ....... 47  48 .. 51  52   53
 *       +-----------------+--------------+---------+---------+
 *       | qs[0..31]       | qs[32..47]   | qh[0..3]| d (f16) |
 *       | 5 trits / byte  | 5 trits/byte | 4 trits |         |
 *       +-----------------+--------------+---------+---------+
 *   element order:  qs[m],    m < 32, digit k: element 32k + m        (  0..159)
 *                   qs[32+m], m < 16, digit k: element 160 + 16k + m  (160..239)
 *                   qh[m],    m < 4,  digit k: element 240 + 4k + m   (240..255)
 *
 * A byte holds its digits as a base-3 fraction: for trits t0..t4 (t0 most significant),
 * v = sum t_i 3^(4-i) in 0..242 is stored as ceil(v * 256 / 243). Digit k comes out
 * by multiplying by 3^k mod 256 (drops the leading digits) and taking the top "trit"
 * of the 8-bit fraction: t = (u8(byte * 3^k) * 3) >> 8. qh bytes use 4 digits and a
 * trailing zero trit (v * 3) so that the same extraction works.
 *   x = (t - 1) * d,  t in {0, 1, 2}
 * Quantizer: d = max|x|, t = lroundf(x/d) + 1.
 * Dot: vs Q8_K (both 256-blocks); the -1 offset comes from Q8_K's partial sums bsums.
 * =================================================================================== */

static const uint8_t infer__pow3[6] = { 1, 3, 9, 27, 81, 243 };

static inline int infer__trit(uint8_t byte, int k) {
    uint8_t q = (uint8_t)(byte * infer__pow3[k]);
    return ((uint16_t)q * 3) >> 8;
}

/* Unpacks the 256 trits (0..2) of one TQ1_0 block, in element order. */
static void infer__tq1_0_trits(const infer_block_tq1_0 *b, int8_t t[INFER_QK_K]) {
    for (int k = 0; k < 5; k++) for (int m = 0; m < 32; m++) t[32 * k + m] = (int8_t)infer__trit(b->qs[m], k);
    for (int k = 0; k < 5; k++) for (int m = 0; m < 16; m++) t[160 + 16 * k + m] = (int8_t)infer__trit(b->qs[32 + m], k);
    for (int k = 0; k < 4; k++) for (int m = 0; m < 4; m++) t[240 + 4 * k + m] = (int8_t)infer__trit(b->qh[m], k);
}

static void infer__dequant_tq1_0(const void *src, float *dst, int64_t n) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)src;
    int8_t t[INFER_QK_K];
    for (int64_t i = 0; i < n / INFER_QK_K; i++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b[i].d);
        infer__tq1_0_trits(&b[i], t);
        for (int j = 0; j < INFER_QK_K; j++) dst[j] = (float)(t[j] - 1) * d;
    }
}

/* Packs `cnt` trits x[0], x[stride], ... (most significant first) into one byte;
 * 4-trit qh bytes get a trailing zero trit so that they decode like 5-trit bytes. */
static uint8_t infer__pack_trits(const float *x, int stride, int cnt, float id) {
    int v = 0;
    for (int k = 0; k < cnt; k++) v = v * 3 + (int)lroundf(x[k * stride] * id) + 1;
    if (cnt == 4) v *= 3;
    return (uint8_t)((v * 256 + 242) / 243);             /* ceil(v * 256 / 243) */
}

static void infer__quant_tq1_0(const float *src, void *dst, int64_t n) {
    infer_block_tq1_0 *b = (infer_block_tq1_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, src += INFER_QK_K) {
        const float d = fabsf(infer__signed_absmax(src, INFER_QK_K)), id = d ? 1.0f / d : 0.0f;
        for (int m = 0; m < 32; m++) b[i].qs[m] = infer__pack_trits(src + m, 32, 5, id);
        for (int m = 0; m < 16; m++) b[i].qs[32 + m] = infer__pack_trits(src + 160 + m, 16, 5, id);
        for (int m = 0; m < 4; m++) b[i].qh[m] = infer__pack_trits(src + 240 + m, 4, 4, id);
        b[i].d = infer__fp32_to_fp16(d);
    }
}

static float infer__dot_tq1_0(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *a = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    int8_t t[INFER_QK_K];
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        int sumi = 0;
        infer__tq1_0_trits(&a[i], t);
        for (int j = 0; j < INFER_QK_K; j++) sumi += t[j] * y[i].qs[j];
        for (int g = 0; g < INFER_QK_K / 16; g++) sumi -= y[i].bsums[g];   /* the -1 of (t-1) */
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * y[i].d);
    }
    return s;
}

/* ===================================================================================
 * TQ2_0 (66 bytes, 256 ternary weights), 2-bit codes.
 *
 *   byte  0 ................... 63  64   65
 *       +------------------------+---------+
 *       | qs[0..63], 4 codes each| d (f16) |
 *       +------------------------+---------+
 *   two halves of 128 elements (h = 0, 1) use qs[32h .. 32h+31];
 *   bits 2k+1..2k of qs[32h + m] hold element 128h + 32k + m
 *
 *   x = (c - 1) * d,  c in {0, 1, 2} (3 would read as +2 but is never written)
 * Quantizer: d = max|x|, c = lroundf(x/d) + 1.
 * Dot: vs Q8_K, as TQ1_0.
 * =================================================================================== */

static inline int infer__tq2_0_code(const infer_block_tq2_0 *b, int j) {
    return (b->qs[32 * (j / 128) + j % 32] >> (2 * (j % 128 / 32))) & 3;
}

static void infer__dequant_tq2_0(const void *src, float *dst, int64_t n) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK_K; j++) dst[j] = (float)(infer__tq2_0_code(&b[i], j) - 1) * d;
    }
}

static void infer__quant_tq2_0(const float *src, void *dst, int64_t n) {
    infer_block_tq2_0 *b = (infer_block_tq2_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, src += INFER_QK_K) {
        const float d = fabsf(infer__signed_absmax(src, INFER_QK_K)), id = d ? 1.0f / d : 0.0f;
        memset(b[i].qs, 0, sizeof b[i].qs);
        for (int j = 0; j < INFER_QK_K; j++) {
            int c = (int)lroundf(src[j] * id) + 1;
            b[i].qs[32 * (j / 128) + j % 32] |= (uint8_t)((c & 3) << (2 * (j % 128 / 32)));
        }
        b[i].d = infer__fp32_to_fp16(d);
    }
}

static float infer__dot_tq2_0(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *a = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        int sumi = 0;
        for (int j = 0; j < INFER_QK_K; j++) sumi += infer__tq2_0_code(&a[i], j) * y[i].qs[j];
        for (int g = 0; g < INFER_QK_K / 16; g++) sumi -= y[i].bsums[g];
        s += (float)sumi * (infer__fp16_to_fp32(a[i].d) * y[i].d);
    }
    return s;
}

/* ===================================================================================
 * MXFP4 (17 bytes, 32 weights), OCP microscaling FP4.
 *
 *   byte  0     1 ............. 16
 *       +-----+------------------+
 *       |  e  | qs[0..15]        |   nibbles as in Q4_0 (low: 0..15, high: 16..31)
 *       +-----+------------------+
 *   e: E8M0 shared exponent (scale 2^(e-127)); code: E2M1 (sign, 2 exp, 1 mantissa bit)
 *
 *   x = E2M1(code) * 2^(e-127) = kvalues_fp4[code] * 2^(e-128)
 * Quantizer: e = floor(log2(max|x|)) - 2 + 127 (so that max|x| lands in E2M1's top
 * binade [4, 8)), code = nearest value (first on ties).
 * Dot: vs Q8_0, sum(kvalues_fp4[code]*q8) * 2^(e-128) * d_x.
 * =================================================================================== */

static void infer__dequant_mxfp4(const void *src, float *dst, int64_t n) {
    const infer_block_mxfp4 *b = (const infer_block_mxfp4 *)src;
    for (int64_t i = 0; i < n / INFER_QK_MXFP4; i++, dst += INFER_QK_MXFP4) {
        const float d = infer__e8m0_to_fp32_half(b[i].e);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)infer__kvalues_fp4[b[i].qs[j] & 15] * d;
            dst[j + 16] = (float)infer__kvalues_fp4[b[i].qs[j] >> 4] * d;
        }
    }
}

static void infer__quant_mxfp4(const float *src, void *dst, int64_t n) {
    infer_block_mxfp4 *b = (infer_block_mxfp4 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_MXFP4; i++, src += INFER_QK_MXFP4) {
        const float amax = fabsf(infer__signed_absmax(src, INFER_QK_MXFP4));
        /* clamped to 0..254: the reference leaves exponents outside that undefined */
        int e = amax > 0.0f ? (int)(floorf(log2f(amax)) - 2 + 127) : 0;
        b[i].e = (uint8_t)(e < 0 ? 0 : e > 254 ? 254 : e);
        const float d = infer__e8m0_to_fp32_half(b[i].e);
        for (int j = 0; j < 16; j++)
            b[i].qs[j] = (uint8_t)(infer__fp4_best_index(src[j], d) | infer__fp4_best_index(src[j + 16], d) << 4);
    }
}

static float infer__dot_mxfp4(int64_t n, const void *w, const void *x) {
    const infer_block_mxfp4 *a = (const infer_block_mxfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_MXFP4; i++) {
        int sumi = 0;
        for (int j = 0; j < 16; j++)
            sumi += infer__kvalues_fp4[a[i].qs[j] & 15] * y[i].qs[j] + infer__kvalues_fp4[a[i].qs[j] >> 4] * y[i].qs[j + 16];
        s += (float)sumi * (infer__e8m0_to_fp32_half(a[i].e) * infer__fp16_to_fp32(y[i].d));
    }
    return s;
}

/* ===================================================================================
 * NVFP4 (36 bytes, 64 weights), NVIDIA FP4: E2M1 codes, one UE4M3 scale per 16.
 *
 *   byte  0  1  2  3   4 ....... 11  12 ...... 19  20 ...... 27  28 ...... 35
 *       +--+--+--+--+------------+-------------+-------------+-------------+
 *       |d0|d1|d2|d3| qs sub 0   | qs sub 1    | qs sub 2    | qs sub 3    |
 *       +--+--+--+--+------------+-------------+-------------+-------------+
 *   sub-block s (elements 16s..16s+15): qs[8s + j] = (code[16s+j+8] << 4) | code[16s+j]
 *
 *   x = kvalues_fp4[code] * ue4m3_to_fp32(d_s)   (both halved/doubled, see helpers)
 * No per-tensor global scale lives in the blocks (files carry it as a separate tensor).
 * Quantizer: d_s = UE4M3(max|x_sub| / 6), code = nearest value (first on ties).
 * Dot: vs Q8_0, two Q8_0 blocks per NVFP4 block; sub-blocks 2b, 2b+1 share Q8_0 block b.
 * =================================================================================== */

static void infer__dequant_nvfp4(const void *src, float *dst, int64_t n) {
    const infer_block_nvfp4 *b = (const infer_block_nvfp4 *)src;
    for (int64_t i = 0; i < n / INFER_QK_NVFP4; i++) {
        for (int s = 0; s < 4; s++, dst += INFER_QK_NVFP4_SUB) {
            const float d = infer__ue4m3_to_fp32(b[i].d[s]);
            const uint8_t *q = b[i].qs + 8 * s;
            for (int j = 0; j < 8; j++) {
                dst[j] = (float)infer__kvalues_fp4[q[j] & 15] * d;
                dst[j + 8] = (float)infer__kvalues_fp4[q[j] >> 4] * d;
            }
        }
    }
}

static void infer__quant_nvfp4(const float *src, void *dst, int64_t n) {
    infer_block_nvfp4 *b = (infer_block_nvfp4 *)dst;
    for (int64_t i = 0; i < n / INFER_QK_NVFP4; i++) {
        for (int s = 0; s < 4; s++, src += INFER_QK_NVFP4_SUB) {
            const float amax = fabsf(infer__signed_absmax(src, INFER_QK_NVFP4_SUB));
            b[i].d[s] = infer__fp32_to_ue4m3(amax / 6.0f);
            const float d = infer__ue4m3_to_fp32(b[i].d[s]);
            for (int j = 0; j < 8; j++)
                b[i].qs[8 * s + j] = (uint8_t)(infer__fp4_best_index(src[j], d) | infer__fp4_best_index(src[j + 8], d) << 4);
        }
    }
}

static float infer__dot_nvfp4(int64_t n, const void *w, const void *x) {
    const infer_block_nvfp4 *a = (const infer_block_nvfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_NVFP4; i++) {
        for (int sb = 0; sb < 4; sb++) {
            const infer_block_q8_0 *yb = &y[2 * i + sb / 2];
            const int8_t *yq = yb->qs + 16 * (sb % 2);
            const uint8_t *q = a[i].qs + 8 * sb;
            int sumi = 0;
            for (int j = 0; j < 8; j++)
                sumi += infer__kvalues_fp4[q[j] & 15] * yq[j] + infer__kvalues_fp4[q[j] >> 4] * yq[j + 8];
            s += (float)sumi * (infer__ue4m3_to_fp32(a[i].d[sb]) * infer__fp16_to_fp32(yb->d));
        }
    }
    return s;
}

/* ===================================================================================
 * Q1_0 (18 bytes, 128 weights), 1 bit per weight: sign times a shared magnitude.
 *
 *   byte  0    1    2 ............ 17
 *       +---------+------------------+
 *       | d (f16) | qs[0..15]        |   bit j%8 of qs[j/8] = element j (LSB first)
 *       +---------+------------------+
 *
 *   x[j] = bit ? +d : -d
 * Quantizer: d = mean|x| (the L2-best magnitude for fixed signs), bit = (x >= 0).
 * Dot: vs four Q8_0 blocks: per 32-group, d_x * (sum over set bits - sum over clear
 * bits of q8) = d_x * (2*sum_set - sum_all), then times d.
 * =================================================================================== */

static void infer__dequant_q1_0(const void *src, float *dst, int64_t n) {
    const infer_block_q1_0 *b = (const infer_block_q1_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK1_0; i++, dst += INFER_QK1_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK1_0; j++) dst[j] = (b[i].qs[j / 8] >> (j % 8) & 1) ? d : -d;
    }
}

static void infer__quant_q1_0(const float *src, void *dst, int64_t n) {
    infer_block_q1_0 *b = (infer_block_q1_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK1_0; i++, src += INFER_QK1_0) {
        float sum = 0.0f;
        for (int j = 0; j < INFER_QK1_0; j++) sum += fabsf(src[j]);
        b[i].d = infer__fp32_to_fp16(sum / INFER_QK1_0);
        memset(b[i].qs, 0, sizeof b[i].qs);
        for (int j = 0; j < INFER_QK1_0; j++) if (src[j] >= 0.0f) b[i].qs[j / 8] |= (uint8_t)(1 << (j % 8));
    }
}

static float infer__dot_q1_0(int64_t n, const void *w, const void *x) {
    const infer_block_q1_0 *a = (const infer_block_q1_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK1_0; i++) {
        const float d = infer__fp16_to_fp32(a[i].d);
        for (int g = 0; g < 4; g++) {
            const infer_block_q8_0 *yb = &y[4 * i + g];
            int sumi = 0;
            for (int j = 0; j < 32; j++) sumi += (a[i].qs[4 * g + j / 8] >> (j % 8) & 1) ? yb->qs[j] : -yb->qs[j];
            s += (float)sumi * (d * infer__fp16_to_fp32(yb->d));
        }
    }
    return s;
}

/* ===================================================================================
 * Q2_0 (18 bytes, 64 weights), ternary 2-bit codes with a 64-element scale.
 *
 *   byte  0    1    2 ............ 17
 *       +---------+------------------+
 *       | d (f16) | qs[0..15]        |   bits 2(j%4)+1..2(j%4) of qs[j/4] = element j
 *       +---------+------------------+
 *
 *   x[j] = (c - 1) * d,  c in {0, 1, 2} (3 would read as +2)
 * Quantizer: d = max|x|, c = lroundf(x/d) + 1  (like TQ2_0, finer scale granularity).
 * Dot: vs two Q8_0 blocks.
 * =================================================================================== */

static void infer__dequant_q2_0(const void *src, float *dst, int64_t n) {
    const infer_block_q2_0 *b = (const infer_block_q2_0 *)src;
    for (int64_t i = 0; i < n / INFER_QK2_0; i++, dst += INFER_QK2_0) {
        const float d = infer__fp16_to_fp32(b[i].d);
        for (int j = 0; j < INFER_QK2_0; j++) dst[j] = (float)(((b[i].qs[j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    }
}

static void infer__quant_q2_0(const float *src, void *dst, int64_t n) {
    infer_block_q2_0 *b = (infer_block_q2_0 *)dst;
    for (int64_t i = 0; i < n / INFER_QK2_0; i++, src += INFER_QK2_0) {
        const float d = fabsf(infer__signed_absmax(src, INFER_QK2_0)), id = d ? 1.0f / d : 0.0f;
        b[i].d = infer__fp32_to_fp16(d);
        memset(b[i].qs, 0, sizeof b[i].qs);
        for (int j = 0; j < INFER_QK2_0; j++) {
            int c = (int)lroundf(src[j] * id) + 1;
            b[i].qs[j / 4] |= (uint8_t)((c & 3) << (2 * (j % 4)));
        }
    }
}

static float infer__dot_q2_0(int64_t n, const void *w, const void *x) {
    const infer_block_q2_0 *a = (const infer_block_q2_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK2_0; i++) {
        const float d = infer__fp16_to_fp32(a[i].d);
        for (int g = 0; g < 2; g++) {
            const infer_block_q8_0 *yb = &y[2 * i + g];
            const uint8_t *q = a[i].qs + 8 * g;
            int sumi = 0, sumy = 0;
            for (int j = 0; j < 32; j++) { sumi += ((q[j / 4] >> (2 * (j % 4))) & 3) * yb->qs[j]; sumy += yb->qs[j]; }
            sumi -= sumy;
            s += (float)sumi * (d * infer__fp16_to_fp32(yb->d));
        }
    }
    return s;
}

/* ===================================================================================
 * I2_S (BitNet b1.58 fork, file type id 36): ternary weights, one f32 scale per TENSOR.
 * Not in the traits table (its scale is tensor-level, not per block); the loader and
 * the matmul call these directly.
 *
 *   tensor of n weights (n % 128 == 0), nbytes = n/4 + 32:
 *     [ chunk 0: 32 bytes ][ chunk 1 ] ... [ chunk n/128-1 ][ scale f32 ][ 28 x 0 ]
 *   inside a 128-element chunk, element k -> byte k % 32, bits (7-2g)..(6-2g), g = k/32:
 *     byte r:  | e[r] | e[32+r] | e[64+r] | e[96+r] |     (2 bits each, MSB first)
 *   code 0 -> -1, 1 -> 0, 2 -> +1 (3 unused)
 *
 *   w = (code - 1) * scale
 * This is the x86 layout that published GGUFs use; the fork's ARM build writes 64-element
 * groups instead, and such files are not supported.
 *
 * Quantizer choice. The fork's quantizer assumes the input is already ternary {-s, 0, s}:
 * scale = max|w|, code from the sign (|w| < 1e-6 -> 0). That is right for exported
 * ternary weights but maps any other value to +-max. We use the BitNet b1.58 recipe
 * for the codes, t = clamp(round(w / gamma), -1, 1) with gamma = max(mean|w|, 1e-5)
 * (round half to even, as torch.round), and then the L2-optimal scale for those codes,
 * mean |w| over the nonzero codes. For ternary input both give the same codes and
 * scale = s exactly (the mean of equal magnitudes is summed in double, which is exact
 * here), so the round trip is exact; for full-precision input it is the b1.58 absmean
 * quantization.
 * =================================================================================== */

static size_t infer__i2_s_nbytes(int64_t n) { return (size_t)(n / 4 + 32); }

static inline int infer__i2_s_code(const uint8_t *p, int64_t k) {
    return (p[k / 128 * 32 + k % 32] >> (6 - 2 * (k % 128 / 32))) & 3;
}

static INFER__MAYBE_UNUSED float infer__i2_s_scale(const void *packed, int64_t n) {
    float s; memcpy(&s, (const uint8_t *)packed + n / 4, 4); return s;
}

static void infer__dequant_i2_s(const void *packed, float scale, float *dst, int64_t n) {
    const uint8_t *p = (const uint8_t *)packed;
    for (int64_t k = 0; k < n; k++) dst[k] = (float)(infer__i2_s_code(p, k) - 1) * scale;
}

static INFER__MAYBE_UNUSED void infer__quant_i2_s(const float *src, void *dst, int64_t n) {
    uint8_t *p = (uint8_t *)dst;
    double asum = 0, nzsum = 0;
    int64_t nz = 0;
    for (int64_t k = 0; k < n; k++) asum += fabsf(src[k]);
    const float gamma = n > 0 && asum / (double)n > 1e-5 ? (float)(asum / (double)n) : 1e-5f;
    memset(p, 0, infer__i2_s_nbytes(n));
    for (int64_t k = 0; k < n; k++) {
        float r = src[k] / gamma;                        /* ties to even, like torch.round */
        int t = r >= 1.5f ? 1 : r <= -1.5f ? -1 : infer__nearest_int(r);
        if (t) { nzsum += fabsf(src[k]); nz++; }
        p[k / 128 * 32 + k % 32] |= (uint8_t)((t + 1) << (6 - 2 * (k % 128 / 32)));
    }
    const float scale = nz ? (float)(nzsum / (double)nz) : 0.0f;
    memcpy(p + n / 4, &scale, 4);
}

/* Unscaled dot against Q8_0 activations: returns sum_k (code_k - 1) * x_k, where x_k
 * is the dequantized activation; the caller multiplies by the tensor scale. A Q8_0
 * block b covers chunk b/4 at bit group g = b%4, i.e. one 2-bit field of 32 bytes. */
static INFER__MAYBE_UNUSED float infer__dot_i2_s(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float s = 0;
    for (int64_t b = 0; b < n / INFER_QK8_0; b++) {
        const uint8_t *c = p + b / 4 * 32;
        const int shift = 6 - 2 * (int)(b % 4);
        int sumi = 0, sumy = 0;
        for (int r = 0; r < 32; r++) { sumi += ((c[r] >> shift) & 3) * y[b].qs[r]; sumy += y[b].qs[r]; }
        sumi -= sumy;
        s += (float)sumi * infer__fp16_to_fp32(y[b].d);
    }
    return s;
}
/* k-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K) and IQ4_NL / IQ4_XS:
 * dequantizers, quantizers and dot products against quantized activations.
 *
 * Layout accessors. Every format below stores its quants in a fixed permutation of
 * the element order; one small inline accessor per layout (infer__q2_crumb, ...) says
 * where element e lives, and dequant, quant and dot all go through it, so the layout is
 * written down exactly once. All formats are bit-compatible with ggml / GGUF.
 *
 * Quantizers. The k-quant and IQ4_XS quantizers search for scales (weighted least-squares
 * fits over a few candidate grids). They follow ggml's reference (no importance matrix)
 * search step for step, including float evaluation order, so that they reproduce its
 * bytes (IQ4_NL included: its GGUF quantizer is the same search, not the closed-form
 * quantize_row_iq4_nl_ref).
 *
 * Dot products. The activation row is quantized once per matmul (base.h: Q8_K for the
 * 256-element k-quants and IQ4_XS, Q8_0 for the 32-element IQ4_NL), so the inner loops
 * multiply small integers: per sub-block sum_i q_w[i]*q_x[i] is exact in int32, then the
 * float scales are applied once per sub-block / super-block. Matching the activation
 * block to the weight block is what makes that possible: one Q8_K block covers exactly
 * one super-block, so a single float scale d_x multiplies the whole integer sum, and its
 * 16-element partial sums (bsums) give sum(q_x) over each sub-block for free, which is
 * all the "- dmin*m" term needs:  sum_i (d*sc*q_i - dmin*m) x_i
 *                               = d_x * (d * sc * sum_i q_i qx_i  -  dmin * m * sum_i qx_i). */


#define INFER__GROUP_MAX_EPS 1e-15f   /* below this a group counts as all zero */

static inline int infer__clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ---------------------------------------------------------------------------------
 * Layout accessors (element e = 0..255 of a super-block)
 * --------------------------------------------------------------------------------- */

/* 2-bit "crumbs" of Q2_K/Q3_K: each 128-element half uses 32 bytes; byte l holds
 * elements l, l+32, l+64, l+96 of that half in bits 0-1, 2-3, 4-5, 6-7. */
static inline int infer__q2_crumb(const uint8_t *qs, int e) {
    return (qs[32 * (e >> 7) + (e & 31)] >> (2 * ((e >> 5) & 3))) & 3;
}
/* One extra bit per element (Q3_K hmask, Q5_K qh): bit e/32 of byte e%32. */
static inline int infer__hibit(const uint8_t *h, int e) { return (h[e & 31] >> (e >> 5)) & 1; }
/* 4-bit nibbles of Q4_K/Q5_K: each 64-element group uses 32 bytes; byte l holds
 * element l in the low nibble and element l+32 in the high nibble. */
static inline int infer__q4k_nibble(const uint8_t *qs, int e) {
    return (qs[32 * (e >> 6) + (e & 31)] >> (4 * ((e >> 5) & 1))) & 15;
}
/* Q6_K: per 128-element half, ql has 64 bytes and qh 32. Element r = 32k + l of the half
 * (k = 0..3): low 4 bits in ql[l + 32*(k&1)], nibble k>>1; high 2 bits in qh[l], bits 2k. */
static inline int infer__q6k_code(const uint8_t *ql, const uint8_t *qh, int e) {
    const int h = e >> 7, k = (e >> 5) & 3, l = e & 31;
    const int lo = (ql[64 * h + 32 * (k & 1) + l] >> (4 * (k >> 1))) & 15;
    const int hi = (qh[32 * h + l] >> (2 * k)) & 3;
    return lo | hi << 4;                               /* 0..63, value = code - 32 */
}
/* IQ4 nibbles: per 32-element block 16 bytes; byte j holds element j (low nibble) and
 * element j+16 (high nibble). e is the index inside the block run (any multiple of 32). */
static inline int infer__iq4_nibble(const uint8_t *qs, int e) {
    return (qs[16 * (e >> 5) + (e & 15)] >> (4 * ((e >> 4) & 1))) & 15;
}

/* Q3_K's 16 signed 6-bit scales in 12 bytes: low 4 bits of scale j in byte j (j < 8, low
 * nibble) or byte j-8 (j >= 8, high nibble); high 2 bits in byte 8 + j%4, bits 2*(j/4).
 * Stored biased by +32. */
static inline int infer__q3k_scale(const uint8_t *s, int j) {
    const int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
    const int hi = (s[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    return (lo | hi << 4) - 32;
}
/* Q4_K/Q5_K: 8 six-bit scales and 8 six-bit mins in 12 bytes:
 *   byte  0..3 : sc[0..3] (bits 0-5) | high 2 bits of sc[4..7] (bits 6-7)
 *   byte  4..7 : m [0..3] (bits 0-5) | high 2 bits of m [4..7] (bits 6-7)
 *   byte  8..11: low 4 bits of sc[4..7] | low 4 bits of m[4..7] << 4 */
static inline void infer__k4_scale_min(const uint8_t *s, int j, int *sc, int *m) {
    if (j < 4) { *sc = s[j] & 63; *m = s[j + 4] & 63; return; }
    *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
    *m  = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
}
static inline void infer__k4_pack_scale_min(uint8_t *s, int j, int sc, int m) {
    if (j < 4) { s[j] = (uint8_t)sc; s[j + 4] = (uint8_t)m; return; }
    s[j + 4] = (uint8_t)((sc & 15) | (m & 15) << 4);
    s[j - 4] |= (uint8_t)((sc >> 4) << 6);
    s[j]     |= (uint8_t)((m >> 4) << 6);
}

/* The 16 IQ4 levels (in units of the block scale): a non-uniform grid, finer near zero. */
static const int8_t infer__kvalues_iq4nl[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };

/* ---------------------------------------------------------------------------------
 * Dequantizers
 * --------------------------------------------------------------------------------- */

/* Q2_K, 84 bytes per 256 weights:
 *   0        16                      80    82      84
 *   | scales | qs (2 bits x 256)      | d   | dmin  |
 *     16 B: sub-block j (16 weights): low nibble sc_j, high nibble m_j
 *   qs: 2 x 32 bytes; byte l of half h holds elements 128h + l + {0,32,64,96}
 *       in bits {0-1, 2-3, 4-5, 6-7}
 *   w[e] = (d*sc_j) * q[e] - dmin*m_j,   j = e/16,  q in 0..3 */
static void infer__dequant_q2_k(const void *src, float *dst, int64_t n) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d), dmin = infer__fp16_to_fp32(b->dmin);
        for (int j = 0; j < 16; j++) {
            const float dl = d * (b->scales[j] & 15), ml = dmin * (b->scales[j] >> 4);
            for (int e = 16 * j; e < 16 * j + 16; e++) dst[e] = dl * infer__q2_crumb(b->qs, e) - ml;
        }
    }
}

/* Q3_K, 110 bytes per 256 weights:
 *   0         32                  96        108  110
 *   | hmask   | qs (low 2 bits)    | scales  | d  |
 *   hmask: bit e/32 of byte e%32 is the 3rd bit of element e
 *   qs:    same 2-bit layout as Q2_K
 *   scales: 16 signed 6-bit sub-block scales (see infer__q3k_scale)
 *   w[e] = (d*sc_j) * (q[e] - 4 + 4*h[e]),   j = e/16,  value in -4..3 */
static void infer__dequant_q3_k(const void *src, float *dst, int64_t n) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * infer__q3k_scale(b->scales, j);
            for (int e = 16 * j; e < 16 * j + 16; e++)
                dst[e] = dl * (infer__q2_crumb(b->qs, e) - (infer__hibit(b->hmask, e) ? 0 : 4));
        }
    }
}

/* Q4_K, 144 bytes per 256 weights:
 *   0    2      4          16                        144
 *   | d  | dmin | scales   | qs (4 bits x 256)        |
 *   scales: 8 six-bit scales sc_j + 8 six-bit mins m_j (see infer__k4_scale_min)
 *   qs: 4 x 32 bytes; byte l of group g holds element 64g+l (low nibble), 64g+32+l (high)
 *   w[e] = (d*sc_j) * q[e] - dmin*m_j,   j = e/32,  q in 0..15 */
static void infer__dequant_q4_k(const void *src, float *dst, int64_t n) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d), dmin = infer__fp16_to_fp32(b->dmin);
        for (int j = 0; j < 8; j++) {
            int sc, m;
            infer__k4_scale_min(b->scales, j, &sc, &m);
            const float dl = d * sc, ml = dmin * m;
            for (int e = 32 * j; e < 32 * j + 32; e++) dst[e] = dl * infer__q4k_nibble(b->qs, e) - ml;
        }
    }
}

/* Q5_K, 176 bytes per 256 weights:
 *   0    2      4          16         48                    176
 *   | d  | dmin | scales   | qh       | qs (low 4 bits)      |
 *   scales, qs: as Q4_K;  qh: bit e/32 of byte e%32 is the 5th bit of element e
 *   w[e] = (d*sc_j) * (q[e] + 16*h[e]) - dmin*m_j,   j = e/32 */
static void infer__dequant_q5_k(const void *src, float *dst, int64_t n) {
    const infer_block_q5_k *b = (const infer_block_q5_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d), dmin = infer__fp16_to_fp32(b->dmin);
        for (int j = 0; j < 8; j++) {
            int sc, m;
            infer__k4_scale_min(b->scales, j, &sc, &m);
            const float dl = d * sc, ml = dmin * m;
            for (int e = 32 * j; e < 32 * j + 32; e++)
                dst[e] = dl * (infer__q4k_nibble(b->qs, e) + 16 * infer__hibit(b->qh, e)) - ml;
        }
    }
}

/* Q6_K, 210 bytes per 256 weights:
 *   0                    128              192         208  210
 *   | ql (low 4 bits)    | qh (high 2)    | scales   | d  |
 *   per 128-element half h: ql[64h..64h+63], qh[32h..32h+31]; element 128h + 32k + l:
 *     low nibble k>>1 of ql[64h + 32(k&1) + l], bits 2k..2k+1 of qh[32h + l]
 *   scales: 16 signed 8-bit sub-block scales
 *   w[e] = (d*sc_j) * (code[e] - 32),   j = e/16,  value in -32..31 */
static void infer__dequant_q6_k(const void *src, float *dst, int64_t n) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * b->scales[j];
            for (int e = 16 * j; e < 16 * j + 16; e++) dst[e] = dl * (infer__q6k_code(b->ql, b->qh, e) - 32);
        }
    }
}

/* IQ4_NL, 18 bytes per 32 weights:
 *   0    2                 18
 *   | d  | qs (16 bytes)    |     byte j: element j (low nibble), element j+16 (high)
 *   w[e] = d * kvalues_iq4nl[q[e]] */
static void infer__dequant_iq4_nl(const void *src, float *dst, int64_t n) {
    const infer_block_iq4_nl *b = (const infer_block_iq4_nl *)src;
    for (int64_t i = 0; i < n / INFER_QK4_NL; i++, b++, dst += INFER_QK4_NL) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int e = 0; e < INFER_QK4_NL; e++) dst[e] = d * infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)];
    }
}

/* IQ4_XS, 136 bytes per 256 weights:
 *   0    2          4          8                       136
 *   | d  | scales_h | scales_l | qs (8 x 16 bytes)      |
 *   sub-block j (32 weights): 6-bit scale ls_j = nibble j%2 of scales_l[j/2]
 *                             | bits 2j..2j+1 of scales_h << 4;   sc_j = ls_j - 32
 *   qs: 16 bytes per sub-block, IQ4_NL nibble order
 *   w[e] = (d*sc_j) * kvalues_iq4nl[q[e]],   j = e/32 */
static inline int infer__iq4xs_scale(const infer_block_iq4_xs *b, int j) {
    const int lo = (b->scales_l[j >> 1] >> (4 * (j & 1))) & 15, hi = (b->scales_h >> (2 * j)) & 3;
    return (lo | hi << 4) - 32;
}
static void infer__dequant_iq4_xs(const void *src, float *dst, int64_t n) {
    const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, dst += INFER_QK_K) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int j = 0; j < 8; j++) {
            const float dl = d * infer__iq4xs_scale(b, j);
            for (int e = 32 * j; e < 32 * j + 32; e++) dst[e] = dl * infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)];
        }
    }
}

/* ---------------------------------------------------------------------------------
 * Scale searches (shared by the quantizers)
 *
 * Each sub-block is first fitted on its own in float; the sub-block scales (and mins)
 * are then themselves quantized to a few bits against one fp16 super-scale, and finally
 * every weight is re-rounded against the scale that will actually be stored.
 * --------------------------------------------------------------------------------- */

/* Codes l = clamp(round(iscale*(x - min)), 0, nmax) of an affine grid. */
static void infer__affine_codes(int n, int nmax, const float *x, float min, float iscale, uint8_t *L) {
    for (int i = 0; i < n; i++) L[i] = (uint8_t)infer__clampi(infer__nearest_int(iscale * (x[i] - min)), 0, nmax);
}
/* Weighted error sum w_i*|e_i| (mad) or w_i*e_i^2 with e_i = scale*L_i + min - x_i. */
static float infer__affine_err(int n, const float *x, const float *w, const uint8_t *L, float scale, float min, int mad) {
    float err = 0;
    for (int i = 0; i < n; i++) {
        float diff = scale * L[i] + min - x[i];
        err += w[i] * (mad ? fabsf(diff) : diff * diff);
    }
    return err;
}

/* Affine fit x_i ~ scale*L_i + min with L_i in 0..nmax and min <= 0 (ggml make_qkx2_quants).
 * Start from the plain range grid (max-min)/nmax; then for nstep+1 stretched grids
 * iscale = (nmax + rmin + rdelta*k)/(max-min) round the codes and solve the 2x2 weighted
 * least-squares system for (scale, min):
 *     D = Sw*Sll - Sl^2,  scale = (Sw*Sxl - Sx*Sl)/D,  min = (Sll*Sx - Sl*Sxl)/D
 * (min clipped to 0, scale then = Sxl/Sll), keeping whichever has the lowest weighted error.
 * Returns scale, writes -min (>= 0) to *neg_min and the codes to L (n <= 32). */
static float infer__fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L,
                               float *neg_min, float rmin, float rdelta, int nstep, int mad) {
    float min = x[0], max = x[0], sum_w = 0, sum_x = 0;
    for (int i = 0; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) { memset(L, 0, (size_t)n); *neg_min = -min; return 0.0f; }
    float iscale = nmax / (max - min), scale = 1 / iscale;
    infer__affine_codes(n, nmax, x, min, iscale, L);
    float best = infer__affine_err(n, x, w, L, scale, min, mad);
    for (int k = 0; k <= nstep; k++) {
        uint8_t Laux[32];
        infer__affine_codes(n, nmax, x, min, (rmin + rdelta * k + nmax) / (max - min), Laux);
        float sl = 0, sll = 0, sxl = 0;
        for (int i = 0; i < n; i++) {
            const float l = Laux[i];
            sl += w[i] * l; sll += w[i] * l * l; sxl += w[i] * l * x[i];
        }
        const float D = sum_w * sll - sl * sl;
        if (D <= 0) continue;
        float s = (sum_w * sxl - sum_x * sl) / D, m = (sll * sum_x - sl * sxl) / D;
        if (m > 0) { m = 0; s = sxl / sll; }
        const float err = infer__affine_err(n, x, w, Laux, s, m, mad);
        if (err < best) { memcpy(L, Laux, (size_t)n); best = err; scale = s; min = m; }
    }
    *neg_min = -min;
    return scale;
}

/* The element of largest magnitude, with its sign; its magnitude goes to *amax_out. */
static float infer__signed_absmax_k(int n, const float *x, float *amax_out) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) { float a = fabsf(x[i]); if (a > amax) { amax = a; max = x[i]; } }
    *amax_out = amax;
    return max;
}

/* Symmetric codes l = clamp(round(iscale*x), -nmax, nmax-1) and the weighted sums
 * Sxl = sum w x l, Sll = sum w l^2 with w = x^2. Stores l + nmax into L when L != NULL. */
static void infer__sym_sums(int n, int nmax, const float *x, float iscale, int8_t *L, float *sxl, float *sll) {
    float a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        const int l = infer__clampi(infer__nearest_int(iscale * x[i]), -nmax, nmax - 1);
        const float w = x[i] * x[i];
        if (L) L[i] = (int8_t)(l + nmax);
        a += w * x[i] * l; b += w * l * l;
    }
    *sxl = a; *sll = b;
}

/* Symmetric fit x_i ~ scale*l_i, l_i in -nmax..nmax-1, weights x_i^2 (ggml make_qx_quants,
 * rmse_type 1). The grid mapping the largest-|x| element to -nmax and 18 grids around it
 * (-(nmax + 0.1k)/max, k = +-1..9) are tried; for fixed codes the best scale is Sxl/Sll
 * and the error drops as Sxl^2/Sll grows, so that is the score. L gets l + nmax. */
static float infer__fit_sym_grid(int n, int nmax, const float *x, int8_t *L) {
    float amax, max = infer__signed_absmax_k(n, x, &amax), sxl, sll;
    if (amax < INFER__GROUP_MAX_EPS) { memset(L, 0, (size_t)n); return 0.0f; }
    infer__sym_sums(n, nmax, x, -nmax / max, L, &sxl, &sll);
    float scale = sll ? sxl / sll : 0.0f, best = scale * sxl;
    for (int k = -9; k <= 9; k++) {
        if (k == 0) continue;
        const float iscale = -(nmax + 0.1f * k) / max;
        infer__sym_sums(n, nmax, x, iscale, NULL, &sxl, &sll);
        if (sll > 0 && sxl * sxl > best * sll) {
            infer__sym_sums(n, nmax, x, iscale, L, &sxl, &sll);
            scale = sxl / sll; best = scale * sxl;
        }
    }
    return scale;
}

/* Symmetric fit by coordinate descent (ggml make_q3_quants with rmse): start from the
 * grid mapping the largest-|x| element to -nmax, then up to 5 sweeps in which each code
 * moves to its least-squares level given the others, round(x_i * Sll'/Sxl') (primes: sums
 * without element i), when that raises the score Sxl^2/Sll. Weights x^2; L gets l + nmax. */
static float infer__fit_sym_descent(int n, int nmax, const float *x, int8_t *L) {
    float amax, max = infer__signed_absmax_k(n, x, &amax), sxl, sll;
    if (amax < INFER__GROUP_MAX_EPS) { memset(L, 0, (size_t)n); return 0.0f; }
    infer__sym_sums(n, nmax, x, -nmax / max, L, &sxl, &sll);
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] - nmax);
    for (int sweep = 0; sweep < 5; sweep++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            const float w = x[i] * x[i];
            float a = sxl - w * x[i] * L[i];
            if (!(a > 0)) continue;
            float b = sll - w * L[i] * L[i];
            const int nl = infer__clampi(infer__nearest_int(x[i] * b / a), -nmax, nmax - 1);
            if (nl == L[i]) continue;
            a += w * x[i] * nl; b += w * nl * nl;
            if (b > 0 && a * a * sll > sxl * sxl * b) { L[i] = (int8_t)nl; sxl = a; sll = b; changed++; }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] + nmax);
    return sll > 0 ? sxl / sll : 0.0f;
}

/* Pack 256 two-bit codes in the Q2_K/Q3_K crumb order (see infer__q2_crumb). */
static void infer__q2_pack(const uint8_t *L, uint8_t *qs) {
    memset(qs, 0, INFER_QK_K / 4);
    for (int e = 0; e < INFER_QK_K; e++) qs[32 * (e >> 7) + (e & 31)] |= (uint8_t)((L[e] & 3) << (2 * ((e >> 5) & 3)));
}
/* Pack 256 four-bit codes in the Q4_K/Q5_K order (see infer__q4k_nibble). */
static void infer__q4k_pack(const uint8_t *L, uint8_t *qs) {
    memset(qs, 0, INFER_QK_K / 2);
    for (int e = 0; e < INFER_QK_K; e++) qs[32 * (e >> 6) + (e & 31)] |= (uint8_t)((L[e] & 15) << (4 * ((e >> 5) & 1)));
}
/* Set bit e/32 of byte e%32 where L[e] has bit `bit` set (Q3_K hmask, Q5_K qh). */
static void infer__hibit_pack(const uint8_t *L, int bit, uint8_t *h) {
    memset(h, 0, INFER_QK_K / 8);
    for (int e = 0; e < INFER_QK_K; e++) h[e & 31] |= (uint8_t)(((L[e] >> bit) & 1) << (e >> 5));
}

/* Affine k-quants (Q2_K, Q4_K, Q5_K): after the per-sub-block fits, the scales and mins
 * become nbits-bit codes against d = max_scale/qmax, dmin = max_min/qmax, then each
 * weight is re-rounded: q = clamp(round((x + dmin*m_j) / (d*sc_j)), 0, nmax). Codes whose
 * sub-block scale rounds to zero keep the codes of the float fit. */
static void infer__affine_requant(const float *x, int nsub, int sub, int nmax, float d, float dmin,
                                  const int *sc, const int *m, uint8_t *L) {
    for (int j = 0; j < nsub; j++) {
        const float dl = d * sc[j];
        if (!dl) continue;
        const float ml = dmin * m[j];
        for (int e = sub * j; e < sub * j + sub; e++) L[e] = (uint8_t)infer__clampi(infer__nearest_int((x[e] + ml) / dl), 0, nmax);
    }
}

/* ---------------------------------------------------------------------------------
 * Quantizers
 * --------------------------------------------------------------------------------- */

/* Q2_K: per 16 weights an affine 2-bit fit (weights |x|, mean-abs error, 16 grids
 * around (max-min)/3); scales and mins to 4 bits against max/15. */
static void infer__quant_q2_k(const float *src, void *dst, int64_t n) {
    infer_block_q2_k *y = (infer_block_q2_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[INFER_QK_K];
        float scale[16], min[16], w[16], max_scale = 0, max_min = 0;
        int sc[16] = {0}, m[16] = {0};
        for (int j = 0; j < 16; j++) {
            for (int l = 0; l < 16; l++) w[l] = fabsf(src[16 * j + l]);
            scale[j] = infer__fit_affine(16, 3, src + 16 * j, w, L + 16 * j, &min[j], -0.5f, 0.1f, 15, 1);
            if (scale[j] > max_scale) max_scale = scale[j];
            if (min[j] > max_min) max_min = min[j];
        }
        if (max_scale > 0) for (int j = 0; j < 16; j++) sc[j] = infer__nearest_int(15.0f / max_scale * scale[j]);
        if (max_min > 0) for (int j = 0; j < 16; j++) m[j] = infer__nearest_int(15.0f / max_min * min[j]);
        y->d = infer__fp32_to_fp16(max_scale > 0 ? max_scale / 15.0f : 0.0f);
        y->dmin = infer__fp32_to_fp16(max_min > 0 ? max_min / 15.0f : 0.0f);
        for (int j = 0; j < 16; j++) y->scales[j] = (uint8_t)(sc[j] | m[j] << 4);
        infer__affine_requant(src, 16, 16, 3, infer__fp16_to_fp32(y->d), infer__fp16_to_fp32(y->dmin), sc, m, L);
        infer__q2_pack(L, y->qs);
    }
}

/* Q3_K: per 16 weights a symmetric 3-bit fit (coordinate descent); the 16 signed scales
 * to 6 bits against d = max_scale/-32 (the largest-|scale| sub-block maps to code -32). */
static void infer__quant_q3_k(const float *src, void *dst, int64_t n) {
    infer_block_q3_k *y = (infer_block_q3_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        int8_t L8[INFER_QK_K];
        uint8_t L[INFER_QK_K];
        float scale[16];
        for (int j = 0; j < 16; j++) scale[j] = infer__fit_sym_descent(16, 4, src + 16 * j, L8 + 16 * j);
        float amax, max_scale = infer__signed_absmax_k(16, scale, &amax);
        memset(y->scales, 0, sizeof y->scales);
        y->d = infer__fp32_to_fp16(0.0f);
        if (max_scale) {
            const float iscale = -32.0f / max_scale;
            for (int j = 0; j < 16; j++) {
                const int l = infer__clampi(infer__nearest_int(iscale * scale[j]), -32, 31) + 32;
                y->scales[j & 7] |= (uint8_t)((l & 15) << (4 * (j >> 3)));
                y->scales[8 + (j & 3)] |= (uint8_t)((l >> 4) << (2 * (j >> 2)));
            }
            y->d = infer__fp32_to_fp16(1 / iscale);
        }
        const float d = infer__fp16_to_fp32(y->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * infer__q3k_scale(y->scales, j);
            if (!dl) continue;
            for (int e = 16 * j; e < 16 * j + 16; e++) L8[e] = (int8_t)(infer__clampi(infer__nearest_int(src[e] / dl), -4, 3) + 4);
        }
        for (int e = 0; e < INFER_QK_K; e++) L[e] = (uint8_t)L8[e];
        infer__hibit_pack(L, 2, y->hmask);
        infer__q2_pack(L, y->qs);
    }
}

/* Q4_K and Q5_K share everything but the code width: per 32 weights an affine fit with
 * weights av + |x| (av = rms of the sub-block), squared error, grids
 * (nmax + rmin + 0.1k)/(max-min); scales and mins to 6 bits against max/63. */
static void infer__quant_k4_common(const float *x, int nmax, float rmin, int nstep,
                                   infer_half *d_out, infer_half *dmin_out, uint8_t *scales, uint8_t *L) {
    float scale[8], min[8], w[32], max_scale = 0, max_min = 0;
    int sc[8], m[8];
    for (int j = 0; j < 8; j++) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++) w[l] = av + fabsf(x[32 * j + l]);
        scale[j] = infer__fit_affine(32, nmax, x + 32 * j, w, L + 32 * j, &min[j], rmin, 0.1f, nstep, 0);
        if (scale[j] > max_scale) max_scale = scale[j];
        if (min[j] > max_min) max_min = min[j];
    }
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f, inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    memset(scales, 0, 12);
    for (int j = 0; j < 8; j++) {
        /* the codes pass through uint8_t before clamping, as in the reference */
        sc[j] = (uint8_t)infer__nearest_int(inv_scale * scale[j]); if (sc[j] > 63) sc[j] = 63;
        m[j] = (uint8_t)infer__nearest_int(inv_min * min[j]);      if (m[j] > 63) m[j] = 63;
        infer__k4_pack_scale_min(scales, j, sc[j], m[j]);
    }
    *d_out = infer__fp32_to_fp16(max_scale / 63.0f);
    *dmin_out = infer__fp32_to_fp16(max_min / 63.0f);
    infer__affine_requant(x, 8, 32, nmax, infer__fp16_to_fp32(*d_out), infer__fp16_to_fp32(*dmin_out), sc, m, L);
}

static void infer__quant_q4_k(const float *src, void *dst, int64_t n) {
    infer_block_q4_k *y = (infer_block_q4_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[INFER_QK_K];
        infer__quant_k4_common(src, 15, -1.0f, 20, &y->d, &y->dmin, y->scales, L);
        infer__q4k_pack(L, y->qs);
    }
}

static void infer__quant_q5_k(const float *src, void *dst, int64_t n) {
    infer_block_q5_k *y = (infer_block_q5_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[INFER_QK_K];
        infer__quant_k4_common(src, 31, -0.5f, 15, &y->d, &y->dmin, y->scales, L);
        infer__hibit_pack(L, 4, y->qh);
        infer__q4k_pack(L, y->qs);
    }
}

/* Q6_K: per 16 weights a symmetric 6-bit fit (19 grids, weights x^2); the 16 signed
 * scales to 8 bits against d = max_scale/-128. */
static void infer__quant_q6_k(const float *src, void *dst, int64_t n) {
    infer_block_q6_k *y = (infer_block_q6_k *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        int8_t L[INFER_QK_K];
        float scale[16], amax;
        for (int j = 0; j < 16; j++) scale[j] = infer__fit_sym_grid(16, 32, src + 16 * j, L + 16 * j);
        const float max_scale = infer__signed_absmax_k(16, scale, &amax);
        memset(y, 0, sizeof *y);
        if (amax < INFER__GROUP_MAX_EPS) continue;       /* all-zero block */
        const float iscale = -128.0f / max_scale;
        y->d = infer__fp32_to_fp16(1 / iscale);
        for (int j = 0; j < 16; j++) {
            const int l = infer__nearest_int(iscale * scale[j]);
            y->scales[j] = (int8_t)(l < 127 ? l : 127);
        }
        const float d = infer__fp16_to_fp32(y->d);
        for (int j = 0; j < 16; j++) {
            const float dl = d * y->scales[j];
            if (!dl) continue;
            for (int e = 16 * j; e < 16 * j + 16; e++) L[e] = (int8_t)(infer__clampi(infer__nearest_int(src[e] / dl), -32, 31) + 32);
        }
        for (int e = 0; e < INFER_QK_K; e++) {           /* inverse of infer__q6k_code */
            const int h = e >> 7, k = (e >> 5) & 3, l = e & 31;
            y->ql[64 * h + 32 * (k & 1) + l] |= (uint8_t)((L[e] & 15) << (4 * (k >> 1)));
            y->qh[32 * h + l] |= (uint8_t)((L[e] >> 4) << (2 * k));
        }
    }
}

/* Nearest IQ4 level to v (in level units), by bisection of the sorted table. */
static int infer__iq4_index(float v) {
    const int8_t *t = infer__kvalues_iq4nl;
    if (v <= t[0]) return 0;
    if (v >= t[15]) return 15;
    int lo = 0, hi = 15;                  /* invariant t[lo] <= v < t[hi] */
    while (hi - lo > 1) { int mid = (lo + hi) / 2; if (v < t[mid]) hi = mid; else lo = mid; }
    return v - t[lo] < t[hi] - v ? lo : hi;
}

/* Weighted fit sums of the IQ4 codes for inverse scale id: Sqx = sum w q x, Sqq = sum w q^2
 * with w = x^2 and q = kvalues[index(id*x)]. */
static void infer__iq4_sums(int n, const float *x, float id, float *sqx, float *sqq) {
    float a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        const int l = infer__iq4_index(id * x[i]);
        const float q = infer__kvalues_iq4nl[l], w = x[i] * x[i];
        a += w * q * x[i]; b += w * q * q;
    }
    *sqx = a; *sqq = b;
}

/* Scale of one 32-element IQ4 block (ggml quantize_row_iq4_nl_impl with 7 tries, no
 * importance weights): map the largest-|x| element to level 127 (clipped to the top
 * level 113), round to the nearest levels and take the weighted least-squares scale
 * Sqx/Sqq; then also score the 15 grids id = (k - 127)/max, k = -7..7, by Sqx^2/Sqq. */
static float infer__iq4_block_scale(const float *x) {
    float amax, max = infer__signed_absmax_k(32, x, &amax), sqx, sqq;
    if (amax < INFER__GROUP_MAX_EPS) return 0.0f;
    infer__iq4_sums(32, x, 1 / (-max / infer__kvalues_iq4nl[0]), &sqx, &sqq);
    float d = sqq > 0 ? sqx / sqq : 0.0f, best = d * sqx;
    for (int k = -7; k <= 7; k++) {
        infer__iq4_sums(32, x, (k + infer__kvalues_iq4nl[0]) / max, &sqx, &sqq);
        if (sqq > 0 && sqx * sqx > best * sqq) { d = sqx / sqq; best = d * sqx; }
    }
    return d;
}

/* IQ4_NL: the scale search with 15 grids, then every weight re-rounded to the nearest
 * level of the float scale (the scale is stored as fp16 afterwards). */
static void infer__quant_iq4_nl(const float *src, void *dst, int64_t n) {
    infer_block_iq4_nl *y = (infer_block_iq4_nl *)dst;
    for (int64_t i = 0; i < n / INFER_QK4_NL; i++, y++, src += INFER_QK4_NL) {
        uint8_t L[INFER_QK4_NL];
        const float d = infer__iq4_block_scale(src), id = d ? 1 / d : 0.0f;
        y->d = infer__fp32_to_fp16(d);
        for (int e = 0; e < INFER_QK4_NL; e++) L[e] = (uint8_t)infer__iq4_index(id * src[e]);
        for (int j = 0; j < 16; j++) y->qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
    }
}

/* IQ4_XS: per 32 weights the IQ4 scale search with 15 grids; the 8 signed scales to 6
 * bits against d = max_scale/-32, then every weight re-rounded to the nearest level of
 * its stored scale d*sc_j (d here unrounded, as in the reference). */
static void infer__quant_iq4_xs(const float *src, void *dst, int64_t n) {
    infer_block_iq4_xs *y = (infer_block_iq4_xs *)dst;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, y++, src += INFER_QK_K) {
        uint8_t L[32];
        float scale[8], amax;
        for (int j = 0; j < 8; j++) scale[j] = infer__iq4_block_scale(src + 32 * j);
        const float d = -infer__signed_absmax_k(8, scale, &amax) / 32, id = d ? 1 / d : 0.0f;
        y->d = infer__fp32_to_fp16(d);
        y->scales_h = 0;
        memset(y->scales_l, 0, sizeof y->scales_l);
        for (int j = 0; j < 8; j++) {
            const int l = infer__clampi(infer__nearest_int(id * scale[j]), -32, 31);
            const float dl = d * l, idl = dl ? 1 / dl : 0.0f;
            for (int e = 0; e < 32; e++) L[e] = (uint8_t)infer__iq4_index(idl * src[32 * j + e]);
            for (int e = 0; e < 16; e++) y->qs[16 * j + e] = (uint8_t)(L[e] | L[e + 16] << 4);
            y->scales_l[j >> 1] |= (uint8_t)(((l + 32) & 15) << (4 * (j & 1)));
            y->scales_h |= (uint16_t)(((l + 32) >> 4) << (2 * j));
        }
    }
}

/* ---------------------------------------------------------------------------------
 * Dot products: w (this type) . x (Q8_K or Q8_0 blocks), n a multiple of the block
 * --------------------------------------------------------------------------------- */

/* Q2_K . Q8_K: sum_j d_x*(d*sc_j*S_j - dmin*m_j*bsum_j), S_j = sum_{e in j} q_e*qx_e. */
static float infer__dot_q2_k(int64_t n, const void *w, const void *x) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0, msum = 0;
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int e = 16 * j; e < 16 * j + 16; e++) s += infer__q2_crumb(b->qs, e) * a->qs[e];
            isum += (b->scales[j] & 15) * s;
            msum += (b->scales[j] >> 4) * a->bsums[j];
        }
        sum += a->d * (infer__fp16_to_fp32(b->d) * (float)isum - infer__fp16_to_fp32(b->dmin) * (float)msum);
    }
    return sum;
}

/* Q3_K . Q8_K: d*d_x * sum_j sc_j * sum_{e in j} v_e*qx_e, v in -4..3. */
static float infer__dot_q3_k(int64_t n, const void *w, const void *x) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int e = 16 * j; e < 16 * j + 16; e++)
                s += (infer__q2_crumb(b->qs, e) - (infer__hibit(b->hmask, e) ? 0 : 4)) * a->qs[e];
            isum += infer__q3k_scale(b->scales, j) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* Q4_K / Q5_K . Q8_K: as Q2_K with 32-element sub-blocks (two bsums each); qh holds
 * the 5th bits (Q5_K) or is NULL (Q4_K). */
static float infer__dot_k4_block(const uint8_t *scales, const uint8_t *qs, const uint8_t *qh,
                                 float d, float dmin, const infer_block_q8_k *a) {
    int isum = 0, msum = 0;
    for (int j = 0; j < 8; j++) {
        int sc, m, s = 0;
        infer__k4_scale_min(scales, j, &sc, &m);
        for (int e = 32 * j; e < 32 * j + 32; e++)
            s += (infer__q4k_nibble(qs, e) + (qh ? 16 * infer__hibit(qh, e) : 0)) * a->qs[e];
        isum += sc * s;
        msum += m * (a->bsums[2 * j] + a->bsums[2 * j + 1]);
    }
    return a->d * (d * (float)isum - dmin * (float)msum);
}
static float infer__dot_q4_k(int64_t n, const void *w, const void *x) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block(b->scales, b->qs, NULL, infer__fp16_to_fp32(b->d), infer__fp16_to_fp32(b->dmin), a);
    return sum;
}
static float infer__dot_q5_k(int64_t n, const void *w, const void *x) {
    const infer_block_q5_k *b = (const infer_block_q5_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block(b->scales, b->qs, b->qh, infer__fp16_to_fp32(b->d), infer__fp16_to_fp32(b->dmin), a);
    return sum;
}

/* Q6_K . Q8_K: d*d_x * sum_j sc_j * sum_{e in j} (code_e - 32)*qx_e. */
static float infer__dot_q6_k(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int j = 0; j < 16; j++) {
            int s = 0;
            for (int e = 16 * j; e < 16 * j + 16; e++) s += (infer__q6k_code(b->ql, b->qh, e) - 32) * a->qs[e];
            isum += b->scales[j] * s;
        }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* IQ4_NL . Q8_0: both use 32-element blocks with one fp16 scale, so each block pair is
 * d_w*d_x * sum_e kvalues[q_e]*qx_e (|sum| <= 32*127*127, exact in int). */
static float infer__dot_iq4_nl(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_nl *b = (const infer_block_iq4_nl *)w;
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK4_NL; i++, b++, a++) {
        int s = 0;
        for (int e = 0; e < INFER_QK4_NL; e++) s += infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)] * a->qs[e];
        sum += infer__fp16_to_fp32(b->d) * infer__fp16_to_fp32(a->d) * (float)s;
    }
    return sum;
}

/* IQ4_XS . Q8_K: d*d_x * sum_j sc_j * sum_{e in j} kvalues[q_e]*qx_e. */
static float infer__dot_iq4_xs(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int j = 0; j < 8; j++) {
            int s = 0;
            for (int e = 32 * j; e < 32 * j + 32; e++) s += infer__kvalues_iq4nl[infer__iq4_nibble(b->qs, e)] * a->qs[e];
            isum += infer__iq4xs_scale(b, j) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}
/* grid i-quants: dequantization and dot products (implementation part, C only). */



/* ===================================================================================
 * >>quant_iq  grid i-quants: IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S
 * ===================================================================================
 * What: turn these blocks back into f32 weights, and dot them with Q8_K activations.
 * Why they look odd: below 4 bits per weight a per-weight integer wastes most of its
 * codes. These formats quantize a group of 8 (IQ3: 4) magnitudes jointly as one index
 * into a fixed codebook (the "grid", see >>tables_iq), store the signs separately, and
 * add a small scale per 32 (IQ1_M: 16) weights. Two families:
 *
 *   IQ2_*, IQ3_*:  w = d * f(s) * grid[index][j] * (sign_j ? -1 : +1)
 *                  f(s) = (0.5 + s)/4 (IQ2), (0.5 + s)/2 (IQ3_XXS), 1 + 2s (IQ3_S)
 *   IQ1_*:         w = d * (2s + 1) * (grid[index][j] + delta),  grid in {-1,0,1},
 *                  delta = +-1/8 (one sign bit per 32 weights, IQ1_M: per 8)
 *
 * Sign codes (IQ2_XXS, IQ2_XS, IQ3_XXS): only 7 sign bits per 8 weights are stored;
 * the encoder makes the count of negative signs even, so the 8th is their parity
 * (expanded through infer__ksigns_iq2xs).
 *
 * Dot with Q8_K (x = dx * q8): inside a 32-weight sub-block everything but d and dx is
 * an integer, so sum(grid*sign*q8) is accumulated exactly in int32 and scaled once;
 * IQ1's delta term needs sum(q8), taken from the Q8_K partial sums where they fit.
 * Bounds: |grid| <= 62, |q8| <= 127, scales <= 31: a super-block sum stays < 2^27.
 *
 * Multi-byte fields are read byte by byte (little-endian, as stored in the file), so
 * the code does not depend on the host's byte order. Every function takes n, a
 * multiple of INFER_QK_K (256) weights.
 */

/* Lookup tables, defined in >>tables_iq at the end of the file (these are C tentative
 * definitions; the initialized definitions come later in the same translation unit). */
static const uint64_t infer__iq2xxs_grid[256];
static const uint64_t infer__iq2xs_grid[512];
static const uint64_t infer__iq2s_grid[1024];
static const uint32_t infer__iq3xxs_grid[256];
static const uint32_t infer__iq3s_grid[512];
static const uint64_t infer__iq1s_grid[2048];
static const uint8_t  infer__ksigns_iq2xs[128];

/* ---- shared helpers ---- */

static inline uint32_t infer__iq_u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t infer__iq_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Two 4-value IQ3 grid entries side by side = one group of 8 magnitudes. */
static inline uint64_t infer__iq3_pair(const uint32_t *grid, uint32_t i0, uint32_t i1) {
    return (uint64_t)grid[i0] | (uint64_t)grid[i1] << 32;
}

/* 8 weights of an IQ2/IQ3 group: y[j] = +-(db * g_j), g_j = byte j of entry e,
 * negative where bit j of `signs` is set. */
static inline void infer__iq_put8(float *y, float db, uint64_t e, uint32_t signs) {
    for (int j = 0; j < 8; j++) {
        const float v = db * (float)(uint8_t)(e >> 8 * j);
        y[j] = (signs >> j) & 1 ? -v : v;
    }
}

/* Integer dot of the same group with 8 Q8 values: sum_j +-g_j * q_j. */
static inline int32_t infer__iq_dot8(uint64_t e, uint32_t signs, const int8_t *q) {
    int32_t s = 0;
    for (int j = 0; j < 8; j++) {
        const int32_t v = (int32_t)(uint8_t)(e >> 8 * j) * q[j];
        s += (signs >> j) & 1 ? -v : v;
    }
    return s;
}

/* 8 weights of an IQ1 group: y[j] = dl * (g_j + delta), g_j = signed byte j of e. */
static inline void infer__iq1_put8(float *y, float dl, float delta, uint64_t e) {
    for (int j = 0; j < 8; j++) y[j] = dl * ((float)(int8_t)(uint8_t)(e >> 8 * j) + delta);
}

/* sum_j g_j * q_j for an IQ1 group (g_j in {-1, 0, 1}). */
static inline int32_t infer__iq1_dot8(uint64_t e, const int8_t *q) {
    int32_t s = 0;
    for (int j = 0; j < 8; j++) s += (int32_t)(int8_t)(uint8_t)(e >> 8 * j) * q[j];
    return s;
}

/* ---- IQ2_XXS ----
 * Block, 66 bytes = f16 d + 8 sub-blocks of 8 bytes (stored as u16 words):
 *
 *   +-----+-------+-------+-----+-------+
 *   | d   | sub 0 | sub 1 | ... | sub 7 |        sub-block ib = weights 32ib..32ib+31
 *   +-----+-------+-------+-----+-------+
 *   sub-block:  bytes 0..3          bytes 4..7 as u32 (bit 0 on the right)
 *             +----+----+----+----+-----+--------+--------+--------+--------+
 *             | i0 | i1 | i2 | i3 | s:4 | c3:7   | c2:7   | c1:7   | c0:7   |
 *             +----+----+----+----+-----+--------+--------+--------+--------+
 *   i_l: index into infer__iq2xxs_grid, 8 magnitudes for weights 8l..8l+7
 *   c_l: 7-bit sign code of group l (ksigns -> 8 sign bits);  s: 4-bit scale
 *
 *   w[32ib + 8l + j] = d * (0.5 + s) * 0.25 * grid[i_l][j] * (sign bit j ? -1 : 1)
 */
static void infer__dequant_iq2_xxs(const void *src, float *dst, int64_t n) {
    const infer_block_iq2_xxs *b = (const infer_block_iq2_xxs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *q = (const uint8_t *)b->qs;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(q + 4);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db, infer__iq2xxs_grid[q[l]], infer__ksigns_iq2xs[(aux >> 7 * l) & 127]);
        }
    }
}

/* (0.5 + s) * 0.25 = (2s + 1) / 8: integer factor 2s+1 per sub-block, 1/8 at the end. */
static float infer__dot_iq2_xxs(int64_t n, const void *w, const void *x) {
    const infer_block_iq2_xxs *b = (const infer_block_iq2_xxs *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *q = (const uint8_t *)b->qs;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(q + 4);
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq_dot8(infer__iq2xxs_grid[q[l]], infer__ksigns_iq2xs[(aux >> 7 * l) & 127], q8);
            acc += (int32_t)(2 * (aux >> 28) + 1) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.125f * (float)acc;
    }
    return sum;
}

/* ---- IQ2_XS ----
 * Block, 74 bytes:
 *
 *   +-----+--------------------------------------+-------------+
 *   | d   | qs: 32 x u16, one per 8 weights      | scales: 8 B |
 *   +-----+--------------------------------------+-------------+
 *   qs[k] (weights 8k..8k+7):  | c:7 (bits 9-15) | index:9 (bits 0-8) |
 *       index into infer__iq2xs_grid (512 entries), c = 7-bit sign code
 *   scales[ib]: low nibble s for weights 32ib..32ib+15, high nibble for 32ib+16..+31
 *
 *   w = d * (0.5 + s) * 0.25 * grid[index][j] * (sign bit j ? -1 : 1)
 */
static void infer__dequant_iq2_xs(const void *src, float *dst, int64_t n) {
    const infer_block_iq2_xs *b = (const infer_block_iq2_xs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *q = (const uint8_t *)b->qs;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const float db[2] = { d * (0.5f + (float)(b->scales[ib] & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(b->scales[ib] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, q += 2, dst += 8) {
                const uint32_t v = infer__iq_u16(q);
                infer__iq_put8(dst, db[l / 2], infer__iq2xs_grid[v & 511], infer__ksigns_iq2xs[v >> 9]);
            }
        }
    }
}

static float infer__dot_iq2_xs(int64_t n, const void *w, const void *x) {
    const infer_block_iq2_xs *b = (const infer_block_iq2_xs *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *q = (const uint8_t *)b->qs;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            int32_t s[2] = { 0, 0 };                  /* the two 16-weight halves */
            for (int l = 0; l < 4; l++, q += 2, q8 += 8) {
                const uint32_t v = infer__iq_u16(q);
                s[l / 2] += infer__iq_dot8(infer__iq2xs_grid[v & 511], infer__ksigns_iq2xs[v >> 9], q8);
            }
            acc += (2 * (b->scales[ib] & 0xf) + 1) * s[0] + (2 * (b->scales[ib] >> 4) + 1) * s[1];
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.125f * (float)acc;
    }
    return sum;
}

/* ---- IQ2_S ----
 * Block, 82 bytes:
 *
 *   +-----+------------------+------------------+--------+-----------+
 *   | d   | qs[0..31]        | qs[32..63]       | qh[8]  | scales[8] |
 *   |     | index low bytes  | sign masks       |        |           |
 *   +-----+------------------+------------------+--------+-----------+
 *   group k = 4ib + l (weights 8k..8k+7):
 *     index = qs[k] | ((qh[ib] >> 2l) & 3) << 8        10 bits, infer__iq2s_grid
 *     sign of weight j = bit j of qs[32 + k]           (all 8 signs stored)
 *   scales as IQ2_XS (nibble per 16 weights)
 *
 *   w = d * (0.5 + s) * 0.25 * grid[index][j] * (sign bit j ? -1 : 1)
 */
static inline uint32_t infer__iq2s_index(const infer_block_iq2_s *b, int ib, int l) {
    return b->qs[4 * ib + l] | (uint32_t)((b->qh[ib] >> 2 * l) & 3) << 8;
}

static void infer__dequant_iq2_s(const void *src, float *dst, int64_t n) {
    const infer_block_iq2_s *b = (const infer_block_iq2_s *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *signs = b->qs + INFER_QK_K / 8;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const float db[2] = { d * (0.5f + (float)(b->scales[ib] & 0xf)) * 0.25f,
                                  d * (0.5f + (float)(b->scales[ib] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db[l / 2], infer__iq2s_grid[infer__iq2s_index(b, ib, l)], signs[4 * ib + l]);
        }
    }
}

static float infer__dot_iq2_s(int64_t n, const void *w, const void *x) {
    const infer_block_iq2_s *b = (const infer_block_iq2_s *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *signs = b->qs + INFER_QK_K / 8;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            int32_t s[2] = { 0, 0 };
            for (int l = 0; l < 4; l++, q8 += 8)
                s[l / 2] += infer__iq_dot8(infer__iq2s_grid[infer__iq2s_index(b, ib, l)], signs[4 * ib + l], q8);
            acc += (2 * (b->scales[ib] & 0xf) + 1) * s[0] + (2 * (b->scales[ib] >> 4) + 1) * s[1];
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.125f * (float)acc;
    }
    return sum;
}

/* ---- IQ3_XXS ----
 * Block, 98 bytes:
 *
 *   +-----+---------------------------------+---------------------------------+
 *   | d   | qs[0..63]: index per 4 weights  | qs[64..95]: 8 x u32 signs+scale |
 *   +-----+---------------------------------+---------------------------------+
 *   sub-block ib, group l (weights 32ib+8l..+7): two indices qs[8ib+2l], qs[8ib+2l+1]
 *     into infer__iq3xxs_grid (4 magnitudes each: weights 0-3, then 4-7)
 *   u32 at qs[64+4ib]:  | s:4 | c3:7 | c2:7 | c1:7 | c0:7 |   (as IQ2_XXS)
 *
 *   w = d * (0.5 + s) * 0.5 * grid[idx][j] * (sign bit j ? -1 : 1)
 */
static void infer__dequant_iq3_xxs(const void *src, float *dst, int64_t n) {
    const infer_block_iq3_xxs *b = (const infer_block_iq3_xxs *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        const uint8_t *q = b->qs;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(b->qs + INFER_QK_K / 4 + 4 * ib);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db, infer__iq3_pair(infer__iq3xxs_grid, q[2 * l], q[2 * l + 1]),
                               infer__ksigns_iq2xs[(aux >> 7 * l) & 127]);
        }
    }
}

/* (0.5 + s) * 0.5 = (2s + 1) / 4. */
static float infer__dot_iq3_xxs(int64_t n, const void *w, const void *x) {
    const infer_block_iq3_xxs *b = (const infer_block_iq3_xxs *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const uint8_t *q = b->qs;
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++, q += 8) {
            const uint32_t aux = infer__iq_u32(b->qs + INFER_QK_K / 4 + 4 * ib);
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq_dot8(infer__iq3_pair(infer__iq3xxs_grid, q[2 * l], q[2 * l + 1]),
                                    infer__ksigns_iq2xs[(aux >> 7 * l) & 127], q8);
            acc += (int32_t)(2 * (aux >> 28) + 1) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * 0.25f * (float)acc;
    }
    return sum;
}

/* ---- IQ3_S ----
 * Block, 110 bytes:
 *
 *   +-----+-----------+--------+------------+-----------+
 *   | d   | qs[64]    | qh[8]  | signs[32]  | scales[4] |
 *   +-----+-----------+--------+------------+-----------+
 *   index k of sub-block ib (weights 32ib+4k..+3):
 *     qs[8ib + k] | ((qh[ib] >> k) & 1) << 8           9 bits, infer__iq3s_grid
 *   signs[4ib + l]: bit j set = weight 32ib+8l+j negative
 *   scales[ib/2]: low nibble s for even ib, high nibble for odd ib
 *
 *   w = d * (1 + 2s) * grid[index][j] * (sign bit j ? -1 : 1)
 */
static inline uint64_t infer__iq3s_group(const infer_block_iq3_s *b, int ib, int l) {
    const uint8_t *q = b->qs + 8 * ib + 2 * l;
    const uint32_t h = b->qh[ib] >> 2 * l;
    return infer__iq3_pair(infer__iq3s_grid, q[0] | (h & 1) << 8, q[1] | (h >> 1 & 1) << 8);
}

static inline int32_t infer__iq3s_scale(const infer_block_iq3_s *b, int ib) {
    return 1 + 2 * ((b->scales[ib / 2] >> 4 * (ib % 2)) & 0xf);
}

static void infer__dequant_iq3_s(const void *src, float *dst, int64_t n) {
    const infer_block_iq3_s *b = (const infer_block_iq3_s *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const float db = d * (float)infer__iq3s_scale(b, ib);
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq_put8(dst, db, infer__iq3s_group(b, ib, l), b->signs[4 * ib + l]);
        }
    }
}

static float infer__dot_iq3_s(int64_t n, const void *w, const void *x) {
    const infer_block_iq3_s *b = (const infer_block_iq3_s *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const int8_t *q8 = y->qs;
        int32_t acc = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq_dot8(infer__iq3s_group(b, ib, l), b->signs[4 * ib + l], q8);
            acc += infer__iq3s_scale(b, ib) * s;
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * (float)acc;
    }
    return sum;
}

/* ---- IQ1_S ----
 * Block, 50 bytes:
 *
 *   +-----+--------------------+------------------------------+
 *   | d   | qs[32]             | qh: 8 x u16, one per 32 w.   |
 *   |     | index low bytes    |                              |
 *   +-----+--------------------+------------------------------+
 *   qh[ib] (bit 0 on the right):
 *     | m:1 | s:3 | h3:3 | h2:3 | h1:3 | h0:3 |
 *   group l of sub-block ib: index = qs[4ib+l] | h_l << 8   (11 bits, infer__iq1s_grid)
 *   delta = m ? -1/8 : +1/8
 *
 *   w = d * (2s + 1) * (grid[index][j] + delta),   grid[index][j] in {-1, 0, +1}
 */
#define INFER__IQ1_DELTA 0.125f

static void infer__dequant_iq1_s(const void *src, float *dst, int64_t n) {
    const infer_block_iq1_s *b = (const infer_block_iq1_s *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__fp16_to_fp32(b->d);
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t h = infer__iq_u16((const uint8_t *)&b->qh[ib]);
            const float dl = d * (float)(2 * ((h >> 12) & 7) + 1);
            const float delta = h & 0x8000 ? -INFER__IQ1_DELTA : INFER__IQ1_DELTA;
            for (int l = 0; l < 4; l++, dst += 8)
                infer__iq1_put8(dst, dl, delta, infer__iq1s_grid[b->qs[4 * ib + l] | ((h >> 3 * l) & 7) << 8]);
        }
    }
}

/* sum w*x = d*dx * sum_ib (2s+1) * (sum g*q8 + delta * sum q8); sum q8 over 32 weights
 * is two Q8_K partial sums (bsums covers 16 each). */
static float infer__dot_iq1_s(int64_t n, const void *w, const void *x) {
    const infer_block_iq1_s *b = (const infer_block_iq1_s *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const int8_t *q8 = y->qs;
        int32_t acc_g = 0, acc_q = 0;               /* grid term, delta term (in units of 1/8) */
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t h = infer__iq_u16((const uint8_t *)&b->qh[ib]);
            const int32_t ls = (int32_t)(2 * ((h >> 12) & 7) + 1);
            const int32_t qsum = y->bsums[2 * ib] + y->bsums[2 * ib + 1];
            int32_t s = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                s += infer__iq1_dot8(infer__iq1s_grid[b->qs[4 * ib + l] | ((h >> 3 * l) & 7) << 8], q8);
            acc_g += ls * s;
            acc_q += ls * (h & 0x8000 ? -qsum : qsum);
        }
        sum += infer__fp16_to_fp32(b->d) * y->d * ((float)acc_g + INFER__IQ1_DELTA * (float)acc_q);
    }
    return sum;
}

/* ---- IQ1_M ----
 * Block, 56 bytes (no separate d field):
 *
 *   +--------------------+--------------------+--------------------------+
 *   | qs[32]             | qh[16]             | scales: 4 x u16 sc[0..3] |
 *   | index low bytes    | nibble per 8 w.    |                          |
 *   +--------------------+--------------------+--------------------------+
 *   qh[2ib + t]: low nibble = group 4ib+2t, high nibble = group 4ib+2t+1;
 *     nibble | m:1 | h:3 |  ->  index = qs[group] | h << 8,  delta = m ? -1/8 : +1/8
 *   sc[k] (bit 0 on the right): | D_k:4 | s3:3 | s2:3 | s1:3 | s0:3 |
 *     sub-block ib uses sc[ib/2]: s(2(ib%2)) for weights 32ib..+15, s(2(ib%2)+1) for +16..+31
 *     d = f16 with bits D_3 D_2 D_1 D_0 (D_0 lowest nibble)
 *
 *   w = d * (2s + 1) * (grid[index][j] + delta)
 */
static inline uint32_t infer__iq1m_sc(const infer_block_iq1_m *b, int k) {
    return infer__iq_u16(b->scales + 2 * k);
}

static inline float infer__iq1m_d(const infer_block_iq1_m *b) {
    const uint32_t h = infer__iq1m_sc(b, 0) >> 12 | (infer__iq1m_sc(b, 1) >> 12) << 4 |
                       (infer__iq1m_sc(b, 2) >> 12) << 8 | (infer__iq1m_sc(b, 3) >> 12) << 12;
    return infer__fp16_to_fp32((infer_half)h);
}

/* Grid entry and high nibble of group g (0..31). */
static inline uint32_t infer__iq1m_nibble(const infer_block_iq1_m *b, int g) {
    return (b->qh[g / 2] >> 4 * (g % 2)) & 0xf;
}
static inline uint64_t infer__iq1m_entry(const infer_block_iq1_m *b, int g) {
    return infer__iq1s_grid[b->qs[g] | (infer__iq1m_nibble(b, g) & 7) << 8];
}

static void infer__dequant_iq1_m(const void *src, float *dst, int64_t n) {
    const infer_block_iq1_m *b = (const infer_block_iq1_m *)src;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++) {
        const float d = infer__iq1m_d(b);
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t sc = infer__iq1m_sc(b, ib / 2) >> 6 * (ib % 2);
            for (int l = 0; l < 4; l++, dst += 8) {
                const int g = 4 * ib + l;
                const float dl = d * (float)(2 * ((sc >> 3 * (l / 2)) & 7) + 1);
                const float delta = infer__iq1m_nibble(b, g) & 8 ? -INFER__IQ1_DELTA : INFER__IQ1_DELTA;
                infer__iq1_put8(dst, dl, delta, infer__iq1m_entry(b, g));
            }
        }
    }
}

/* As IQ1_S, but the delta sign changes every 8 weights, so sum q8 is taken per group. */
static float infer__dot_iq1_m(int64_t n, const void *w, const void *x) {
    const infer_block_iq1_m *b = (const infer_block_iq1_m *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, y++) {
        const int8_t *q8 = y->qs;
        int32_t acc_g = 0, acc_q = 0;
        for (int ib = 0; ib < INFER_QK_K / 32; ib++) {
            const uint32_t sc = infer__iq1m_sc(b, ib / 2) >> 6 * (ib % 2);
            for (int l = 0; l < 4; l++, q8 += 8) {
                const int g = 4 * ib + l;
                const int32_t ls = (int32_t)(2 * ((sc >> 3 * (l / 2)) & 7) + 1);
                int32_t qsum = 0;
                for (int j = 0; j < 8; j++) qsum += q8[j];
                acc_g += ls * infer__iq1_dot8(infer__iq1m_entry(b, g), q8);
                acc_q += ls * (infer__iq1m_nibble(b, g) & 8 ? -qsum : qsum);
            }
        }
        sum += infer__iq1m_d(b) * y->d * ((float)acc_g + INFER__IQ1_DELTA * (float)acc_q);
    }
    return sum;
}
/* ------------------------------------------------------------------------------------------
 * >>ternary -- fast dot products for the ternary weight types TQ1_0, TQ2_0 and I2_S.
 *
 * BitNet b1.58 weights are -1, 0 or +1 times a scale. All three types store the code
 * c = w + 1 in {0, 1, 2}, so against int8 activations y
 *
 *     sum_k w_k y_k  =  sum_k c_k y_k  -  sum_k y_k
 *
 * The first sum is one unsigned-by-signed byte multiply-add per weight (vpdpbusd with VNNI,
 * else vpmaddubsw + vpmaddwd on x86; sdot on ARM). The codes are at most 3, so no product
 * and no int16 pair sum can saturate (2 * 3 * 127 = 762). The second sum needs no weights:
 * a Q8_K activation block carries it in its partial sums `bsums`. What is left per weight is
 * unpacking: a 2-bit field (TQ2_0, I2_S: a shift and a mask) or a base-3 digit (TQ1_0:
 * a multiply that drops the leading digits, and one more for the top digit).
 *
 * Activations. All three dot against Q8_K: int8 codes with one f32 scale per 256 values
 * (absmax / 127 per block). BitNet's own runtime scales each whole token row by one absmax
 * instead; per block costs one float multiply-add per 256 weights, keeps an outlier from
 * coarsening the other values of a 2560- or 6912-wide row, and is what llama.cpp does for
 * TQ1_0/TQ2_0, the engine the golden fast-path logits come from. I2_S rows are whole
 * 128-element chunks; when a row has an odd number of them the activation row is padded
 * with zeros to a whole Q8_K block and the last block uses its first half only.
 *
 * Exactness. Each kernel computes the same integer sums as the scalar references
 * (infer__dot_tq1_0, infer__dot_tq2_0 in >>quant, infer__dot_i2_s_q8_k below). NEON then
 * applies the scales exactly as they do (bit-identical); the x86 kernels scale partial sums
 * in vector lanes (see the AVX2 section), a difference of float rounding only.
 *
 * Tiers (chosen at compile time, like >>simd): AVX-512 (F+BW+VL, with VNNI when present),
 * AVX2 (with FMA and F16C), NEON (with the dot-product extension when present), else the
 * scalar references.
 * infer__ternary_dot(t) returns the best one for t, or NULL for other types; for I2_S, which
 * has no traits entry, it always returns a kernel (the scalar reference at worst).
 * ---------------------------------------------------------------------------------------- */

#if !defined(INFER_NO_SIMD) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define INFER__TERN_AVX2 1
#include <immintrin.h>
#endif
#if defined(INFER__TERN_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define INFER__TERN_AVX512 1
#endif
#if !defined(INFER_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__)
#define INFER__TERN_NEON 1
#include <arm_neon.h>
#endif

/* I2_S codes against Q8_K activations (the scalar reference): sum_k (code_k - 1) y_k over
 * n = 128 m weights, unscaled (the caller multiplies by the tensor scale). Q8_K block b
 * covers chunks 2b and 2b+1; with m odd the last block holds one chunk. */
static float infer__dot_i2_s_q8_k(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t b = 0; INFER_QK_K * b < n; b++) {
        const int len = n - INFER_QK_K * b < INFER_QK_K ? INFER_QK_I2_S : INFER_QK_K;
        int sumi = 0;
        for (int j = 0; j < len; j++) sumi += infer__i2_s_code(p + 64 * b, j) * y[b].qs[j];
        for (int g = 0; g < len / 16; g++) sumi -= y[b].bsums[g];
        s += (float)sumi * y[b].d;
    }
    return s;
}

#ifdef INFER__TERN_AVX2
/* ===================================================================================
 * AVX2. Registers hold 32 bytes; a 2-bit field of 32 code bytes is 32 weights, so one
 * shift-and-mask and one multiply-add handle 32 weights.
 *
 * Per 256-weight block the integer sums stay in 8 (AVX-512: 16) int32 lanes, exact; the
 * lanes are converted to float and multiplied by the block's scale into a float vector
 * accumulator, reduced once per row. A horizontal integer sum per block (what the scalar
 * code does) would cost as much as the block's unpacking: so these results differ from the
 * reference by the rounding of those partial float sums (measured below 1e-7 of
 * sum |w x|; the tests allow 1e-6).
 *
 * Prefetch. Decoding streams each weight matrix from memory once per token, and at 2 bits a
 * weight the kernels consume bytes faster than the hardware prefetcher brings them in by
 * itself. Each block asks for the cache line INFER__TERN_PREFETCH bytes ahead; past the end
 * of the row that is the next rows, which the matmul reads next. (One instruction per block,
 * between the arithmetic; measured +40-60% on one thread streaming from memory.)
 * =================================================================================== */
#define INFER__TERN_PREFETCH 4096
static inline void infer__tern_prefetch(const void *p) { _mm_prefetch((const char *)p + INFER__TERN_PREFETCH, _MM_HINT_T0); }

/* acc (8 x int32) += sums of 4 adjacent products u8 * s8 */
static inline __m256i infer__tern_dp256(__m256i acc, __m256i u, __m256i s) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(acc, u, s);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

static inline float infer__tern_hsum256_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

/* minus the sum of the first 8 * halves partial sums of a Q8_K block (halves = 1 or 2) */
static inline __m256i infer__tern_neg_bsums256(const int16_t *bsums, int halves) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i v = halves == 2 ? _mm256_loadu_si256((const __m256i *)bsums)
                                  : _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)bsums));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_madd_epi16(v, ones));
}

/* 128 weights as 32 bytes of 2-bit codes: field f (bits 2f+1..2f) of byte m is weight
 * 32 f + m (TQ2_0's halves) or, reversed, weight 32 (3 - f) + m (an I2_S chunk). */
static inline __m256i infer__tern_2bit256(__m256i acc, const uint8_t *q, const int8_t *y, int reversed) {
    const __m256i m3 = _mm256_set1_epi8(3);
    __m256i v = _mm256_loadu_si256((const __m256i *)q);
    for (int f = 0; f < 4; f++, v = _mm256_srli_epi16(v, 2)) {      /* bits shifted in from the next byte are masked off */
        const int g = reversed ? 3 - f : f;
        acc = infer__tern_dp256(acc, _mm256_and_si256(v, m3), _mm256_loadu_si256((const __m256i *)(y + 32 * g)));
    }
    return acc;
}

/* accf += float(acc) * d */
static inline __m256 infer__tern_scale256(__m256 accf, __m256i acc, float d) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(d), accf);
}

static float infer__dot_tq2_0_avx2_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    __m256 accf = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        __m256i acc = infer__tern_neg_bsums256(y[i].bsums, 2);
        acc = infer__tern_2bit256(acc, b[i].qs, y[i].qs, 0);
        acc = infer__tern_2bit256(acc, b[i].qs + 32, y[i].qs + 128, 0);
        accf = infer__tern_scale256(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return infer__tern_hsum256_ps(accf);
}

static float infer__dot_i2_s_avx2(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    __m256 accf = _mm256_setzero_ps();
    for (int64_t b = 0; INFER_QK_K * b < n; b++, p += 64) {
        const int halves = n - INFER_QK_K * b < INFER_QK_K ? 1 : 2;
        infer__tern_prefetch(p);
        __m256i acc = infer__tern_neg_bsums256(y[b].bsums, halves);
        acc = infer__tern_2bit256(acc, p, y[b].qs, 1);
        if (halves == 2) acc = infer__tern_2bit256(acc, p + 32, y[b].qs + 128, 1);
        accf = infer__tern_scale256(accf, acc, y[b].d);
    }
    return infer__tern_hsum256_ps(accf);
}

/* TQ1_0 digits. For each byte b with multiplier m (one per 16-bit lane), the digit is the
 * top trit of the byte times m, t = ((b m mod 256) * 3) >> 8 (see >>quant, TQ1_0). With the
 * byte moved into the high half of a 16-bit lane, mullo leaves (b m mod 256) << 8 and mulhi
 * by 3 the digit; the even bytes and the odd bytes take one such pass each. */
static inline __m256i infer__tern_trits256(__m256i v, __m256i m) {
    const __m256i three = _mm256_set1_epi16(3);
    const __m256i even = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_slli_epi16(v, 8), m), three);
    const __m256i odd = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_and_si256(v, _mm256_set1_epi16((short)0xFF00)), m), three);
    return _mm256_or_si256(even, _mm256_slli_epi16(odd, 8));
}

/* A block's trits in 8 registers of 32 consecutive weights:
 *   qs[0..31]  times 1, 3, 9, 27, 81                      weights   0..159
 *   qs[32..47] times 1 | 3, then 9 | 27 (one per half)    weights 160..223
 *   qs[32..47] times 81 | qh[0..3] four times, times 1, 3, 9, 27 (4 bytes each)
 *                                                         weights 224..255 */
static float infer__dot_tq1_0_avx2_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m256i m01 = _mm256_set_m128i(_mm_set1_epi16(3), _mm_set1_epi16(1));
    const __m256i m23 = _mm256_set_m128i(_mm_set1_epi16(27), _mm_set1_epi16(9));
    const __m256i mtail = _mm256_set_m128i(_mm_setr_epi16(1, 1, 3, 3, 9, 9, 27, 27), _mm_set1_epi16(81));
    __m256 accf = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)b[i].qs);
        const __m128i q1 = _mm_loadu_si128((const __m128i *)(b[i].qs + 32));
        uint32_t qh;
        memcpy(&qh, b[i].qh, 4);
        const __m256i q11 = _mm256_set_m128i(q1, q1), q1h = _mm256_set_m128i(_mm_set1_epi32((int)qh), q1);
        const int8_t *yq = y[i].qs;
        __m256i acc = infer__tern_neg_bsums256(y[i].bsums, 2);
        int pow3 = 1;
        for (int k = 0; k < 5; k++, pow3 *= 3)
            acc = infer__tern_dp256(acc, infer__tern_trits256(q0, _mm256_set1_epi16((short)pow3)), _mm256_loadu_si256((const __m256i *)(yq + 32 * k)));
        acc = infer__tern_dp256(acc, infer__tern_trits256(q11, m01), _mm256_loadu_si256((const __m256i *)(yq + 160)));
        acc = infer__tern_dp256(acc, infer__tern_trits256(q11, m23), _mm256_loadu_si256((const __m256i *)(yq + 192)));
        acc = infer__tern_dp256(acc, infer__tern_trits256(q1h, mtail), _mm256_loadu_si256((const __m256i *)(yq + 224)));
        accf = infer__tern_scale256(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return infer__tern_hsum256_ps(accf);
}
#endif /* INFER__TERN_AVX2 */

#ifdef INFER__TERN_AVX512
/* ===================================================================================
 * AVX-512. Registers hold 64 bytes. The 2-bit types put a code group of 32 bytes in both
 * halves of a register and shift each half to a different field (vpsrlvw), so one register
 * is 64 consecutive weights and the activations load straight. TQ1_0 builds 4 registers of
 * 64 consecutive trits from the same pieces as the AVX2 version.
 * =================================================================================== */
static inline __m512i infer__tern_dp512(__m512i acc, __m512i u, __m512i s) {
#ifdef __AVX512VNNI__
    return _mm512_dpbusd_epi32(acc, u, s);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1)));
#endif
}

static inline __m512i infer__tern_neg_bsums512(const int16_t *bsums, int halves) {
    return _mm512_zextsi256_si512(infer__tern_neg_bsums256(bsums, halves));
}

static inline __m512 infer__tern_scale512(__m512 accf, __m512i acc, float d) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(d), accf);
}

/* [a in the low 256 bits | b in the high 256 bits], 16-bit lanes */
static inline __m512i infer__tern_pair16(short a, short b) {
    return _mm512_inserti64x4(_mm512_set1_epi16(a), _mm256_set1_epi16(b), 1);
}

/* 128 weights of 2-bit codes (32 bytes): weights 0..63 come from fields (f0 | f1), 64..127
 * from (f2 | f3), as given by the shift vectors lo and hi */
static inline __m512i infer__tern_2bit512(__m512i acc, const uint8_t *q, const int8_t *y, __m512i lo, __m512i hi) {
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)q));
    acc = infer__tern_dp512(acc, _mm512_and_si512(_mm512_srlv_epi16(v, lo), m3), _mm512_loadu_si512(y));
    return infer__tern_dp512(acc, _mm512_and_si512(_mm512_srlv_epi16(v, hi), m3), _mm512_loadu_si512(y + 64));
}

static float infer__dot_tq2_0_avx512_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m512i lo = infer__tern_pair16(0, 2), hi = infer__tern_pair16(4, 6);
    __m512 accf = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        __m512i acc = infer__tern_neg_bsums512(y[i].bsums, 2);
        acc = infer__tern_2bit512(acc, b[i].qs, y[i].qs, lo, hi);
        acc = infer__tern_2bit512(acc, b[i].qs + 32, y[i].qs + 128, lo, hi);
        accf = infer__tern_scale512(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return _mm512_reduce_add_ps(accf);
}

static float infer__dot_i2_s_avx512(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m512i lo = infer__tern_pair16(6, 4), hi = infer__tern_pair16(2, 0);
    __m512 accf = _mm512_setzero_ps();
    for (int64_t b = 0; INFER_QK_K * b < n; b++, p += 64) {
        const int halves = n - INFER_QK_K * b < INFER_QK_K ? 1 : 2;
        infer__tern_prefetch(p);
        __m512i acc = infer__tern_neg_bsums512(y[b].bsums, halves);
        acc = infer__tern_2bit512(acc, p, y[b].qs, lo, hi);
        if (halves == 2) acc = infer__tern_2bit512(acc, p + 32, y[b].qs + 128, lo, hi);
        accf = infer__tern_scale512(accf, acc, y[b].d);
    }
    return _mm512_reduce_add_ps(accf);
}

static inline __m512i infer__tern_trits512(__m512i v, __m512i m) {
    const __m512i three = _mm512_set1_epi16(3);
    const __m512i even = _mm512_mulhi_epu16(_mm512_mullo_epi16(_mm512_slli_epi16(v, 8), m), three);
    const __m512i odd = _mm512_mulhi_epu16(_mm512_mullo_epi16(_mm512_and_si512(v, _mm512_set1_epi16((short)0xFF00)), m), three);
    return _mm512_or_si512(even, _mm512_slli_epi16(odd, 8));
}

/* Four registers of 64 consecutive trits (multipliers per 128-bit quarter):
 *   [qs0..31 | qs0..31]            x [1 | 3]           weights   0..63
 *   [qs0..31 | qs0..31]            x [9 | 27]          weights  64..127
 *   [qs0..31 | qs32..47 | qs32..47] x [81 | 1 | 3]      weights 128..191
 *   [qs32..47 x3 | qh x4]          x [9 | 27 | 81 | 1,1,3,3,9,9,27,27] weights 192..255 */
static float infer__dot_tq1_0_avx512_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    const __m512i m0 = infer__tern_pair16(1, 3), m1 = infer__tern_pair16(9, 27);
    const __m512i m2 = _mm512_inserti64x4(_mm512_set1_epi16(81), _mm256_set_m128i(_mm_set1_epi16(3), _mm_set1_epi16(1)), 1);
    const __m512i m3 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(27), _mm_set1_epi16(9))),
                                          _mm256_set_m128i(_mm_setr_epi16(1, 1, 3, 3, 9, 9, 27, 27), _mm_set1_epi16(81)), 1);
    __m512 accf = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        infer__tern_prefetch(&b[i]);
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)b[i].qs);
        const __m128i q1 = _mm_loadu_si128((const __m128i *)(b[i].qs + 32));
        uint32_t qh;
        memcpy(&qh, b[i].qh, 4);
        const __m512i z0 = _mm512_broadcast_i64x4(q0);
        const __m512i z2 = _mm512_inserti64x4(_mm512_castsi256_si512(q0), _mm256_set_m128i(q1, q1), 1);
        const __m512i z3 = _mm512_inserti32x4(_mm512_broadcast_i32x4(q1), _mm_set1_epi32((int)qh), 3);
        const int8_t *yq = y[i].qs;
        __m512i acc = infer__tern_neg_bsums512(y[i].bsums, 2);
        acc = infer__tern_dp512(acc, infer__tern_trits512(z0, m0), _mm512_loadu_si512(yq));
        acc = infer__tern_dp512(acc, infer__tern_trits512(z0, m1), _mm512_loadu_si512(yq + 64));
        acc = infer__tern_dp512(acc, infer__tern_trits512(z2, m2), _mm512_loadu_si512(yq + 128));
        acc = infer__tern_dp512(acc, infer__tern_trits512(z3, m3), _mm512_loadu_si512(yq + 192));
        accf = infer__tern_scale512(accf, acc, _cvtsh_ss(b[i].d) * y[i].d);
    }
    return _mm512_reduce_add_ps(accf);
}
#endif /* INFER__TERN_AVX512 */

#ifdef INFER__TERN_NEON
/* ===================================================================================
 * NEON. Registers hold 16 bytes. ARM has byte shifts and a byte multiply (mod 256), so
 * the fields and the TQ1_0 digit products come out directly; the top trit of a byte q is
 * (q >= 86) + (q >= 171), from two compares.
 * =================================================================================== */
static inline int32x4_t infer__tern_dp16(int32x4_t acc, uint8x16_t u, const int8_t *y) {
    const int8x16_t a = vreinterpretq_s8_u8(u), b = vld1q_s8(y);   /* codes <= 3 are valid int8 */
#ifdef __ARM_FEATURE_DOTPROD
    return vdotq_s32(acc, a, b);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}

static inline int32_t infer__tern_bsum_neon(const int16_t *bsums, int halves) {
    int32x4_t s = vpaddlq_s16(vld1q_s16(bsums));
    if (halves == 2) s = vaddq_s32(s, vpaddlq_s16(vld1q_s16(bsums + 8)));
    return vaddvq_s32(s);
}

/* 128 weights of 2-bit codes (two registers of 16 bytes), fields mapped as in the AVX2 version */
static inline int32x4_t infer__tern_2bit_neon(int32x4_t acc, const uint8_t *q, const int8_t *y, int reversed) {
    const uint8x16_t m3 = vdupq_n_u8(3);
    for (int h = 0; h < 2; h++) {
        const uint8x16_t v = vld1q_u8(q + 16 * h);
        const uint8x16_t f[4] = { vandq_u8(v, m3), vandq_u8(vshrq_n_u8(v, 2), m3), vandq_u8(vshrq_n_u8(v, 4), m3), vshrq_n_u8(v, 6) };
        for (int k = 0; k < 4; k++) acc = infer__tern_dp16(acc, f[k], y + 32 * (reversed ? 3 - k : k) + 16 * h);
    }
    return acc;
}

static float infer__dot_tq2_0_neon_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        int32x4_t acc = vdupq_n_s32(0);
        acc = infer__tern_2bit_neon(acc, b[i].qs, y[i].qs, 0);
        acc = infer__tern_2bit_neon(acc, b[i].qs + 32, y[i].qs + 128, 0);
        const int sumi = vaddvq_s32(acc) - infer__tern_bsum_neon(y[i].bsums, 2);
        s += (float)sumi * (infer__fp16_to_fp32(b[i].d) * y[i].d);
    }
    return s;
}

static float infer__dot_i2_s_neon(int64_t n, const void *w, const void *x) {
    const uint8_t *p = (const uint8_t *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    float s = 0;
    for (int64_t b = 0; INFER_QK_K * b < n; b++, p += 64) {
        const int halves = n - INFER_QK_K * b < INFER_QK_K ? 1 : 2;
        int32x4_t acc = infer__tern_2bit_neon(vdupq_n_s32(0), p, y[b].qs, 1);
        if (halves == 2) acc = infer__tern_2bit_neon(acc, p + 32, y[b].qs + 128, 1);
        const int sumi = vaddvq_s32(acc) - infer__tern_bsum_neon(y[b].bsums, halves);
        s += (float)sumi * y[b].d;
    }
    return s;
}

/* the top trit of (v * m) mod 256 per byte */
static inline uint8x16_t infer__tern_trits_neon(uint8x16_t v, uint8x16_t m) {
    const uint8x16_t q = vmulq_u8(v, m);
    const int8x16_t ge1 = vreinterpretq_s8_u8(vcgeq_u8(q, vdupq_n_u8(86))), ge2 = vreinterpretq_s8_u8(vcgeq_u8(q, vdupq_n_u8(171)));
    return vreinterpretq_u8_s8(vnegq_s8(vaddq_s8(ge1, ge2)));       /* masks are -1: 0, 1 or 2 */
}

/* qs[0..31] (2 registers) x 3^k: weights 32k..; qs[32..47] x 3^k: weights 160 + 16k..;
 * qh[0..3] four times x (1 | 3 | 9 | 27): weights 240..255 */
static float infer__dot_tq1_0_neon_t(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *y = (const infer_block_q8_k *)x;
    static const uint8_t tail_mul[16] = { 1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27 };
    const uint8x16_t mt = vld1q_u8(tail_mul);
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        const uint8x16_t a0 = vld1q_u8(b[i].qs), a1 = vld1q_u8(b[i].qs + 16), a2 = vld1q_u8(b[i].qs + 32);
        uint32_t qh;
        memcpy(&qh, b[i].qh, 4);
        const int8_t *yq = y[i].qs;
        int32x4_t acc = vdupq_n_s32(0);
        uint8_t pow3 = 1;
        for (int k = 0; k < 5; k++, pow3 = (uint8_t)(pow3 * 3)) {
            const uint8x16_t m = vdupq_n_u8(pow3);
            acc = infer__tern_dp16(acc, infer__tern_trits_neon(a0, m), yq + 32 * k);
            acc = infer__tern_dp16(acc, infer__tern_trits_neon(a1, m), yq + 32 * k + 16);
            acc = infer__tern_dp16(acc, infer__tern_trits_neon(a2, m), yq + 160 + 16 * k);
        }
        acc = infer__tern_dp16(acc, infer__tern_trits_neon(vreinterpretq_u8_u32(vdupq_n_u32(qh)), mt), yq + 240);
        const int sumi = vaddvq_s32(acc) - infer__tern_bsum_neon(y[i].bsums, 2);
        s += (float)sumi * (infer__fp16_to_fp32(b[i].d) * y[i].d);
    }
    return s;
}
#endif /* INFER__TERN_NEON */

/* ===================================================================================
 * Dispatch: the tiers compiled into this build, best first, then the scalar references
 * (the tests run every tier against the last one).
 * =================================================================================== */
typedef struct { const char *name; infer__dot_fn tq1_0, tq2_0, i2_s; } infer__tern_tier;
static const infer__tern_tier infer__tern_tiers[] = {
#ifdef INFER__TERN_AVX512
    { "avx512", infer__dot_tq1_0_avx512_t, infer__dot_tq2_0_avx512_t, infer__dot_i2_s_avx512 },
#endif
#ifdef INFER__TERN_AVX2
    { "avx2", infer__dot_tq1_0_avx2_t, infer__dot_tq2_0_avx2_t, infer__dot_i2_s_avx2 },
#endif
#ifdef INFER__TERN_NEON
    { "neon", infer__dot_tq1_0_neon_t, infer__dot_tq2_0_neon_t, infer__dot_i2_s_neon },
#endif
    { "scalar", infer__dot_tq1_0, infer__dot_tq2_0, infer__dot_i2_s_q8_k },
};
#define INFER__TERN_N_TIERS ((int)(sizeof infer__tern_tiers / sizeof infer__tern_tiers[0]))

/* the fast dot for a ternary type (I2_S: unscaled, against Q8_K), NULL for other types and
 * for TQ1_0/TQ2_0 when only the scalar tier exists (the traits table has those) */
static infer__dot_fn infer__ternary_dot(infer_type t) {
    const infer__tern_tier *best = &infer__tern_tiers[0];
    const int simd = INFER__TERN_N_TIERS > 1;
    switch (t) {
    case INFER_TYPE_TQ1_0: return simd ? best->tq1_0 : NULL;
    case INFER_TYPE_TQ2_0: return simd ? best->tq2_0 : NULL;
    case INFER_TYPE_I2_S:  return best->i2_s;
    default:               return NULL;
    }
}
#define INFER__HAVE_I2_S   /* (kept while cpu.h still tests for it) */


static const infer__type_traits infer__traits[INFER_TYPE_COUNT] = {
/* traits-table entries for the types in quant_a.h.
 * Columns: name, elements per block, bytes per block, dequant, quant, dot, dot_type.
 * dot_type is the activation format the dot expects (see the >>quant_a header):
 * 32-blocks -> Q8_0 (Q8_1 with an offset m), 256-blocks -> Q8_K, 64/128-blocks ->
 * 2 or 4 Q8_0 blocks, float types -> plain f32. I2_S is not here (tensor-level scale). */
[INFER_TYPE_F32]   = { "f32",   1,                  4, infer__dequant_f32,   infer__quant_f32,   infer__dot_f32,   INFER_TYPE_F32  },
[INFER_TYPE_I32]   = { "i32",   1,                  4, infer__dequant_i32,   NULL,               NULL,             INFER_TYPE_F32  },
[INFER_TYPE_F16]   = { "f16",   1,                  2, infer__dequant_f16,   infer__quant_f16,   infer__dot_f16,   INFER_TYPE_F32  },
[INFER_TYPE_BF16]  = { "bf16",  1,                  2, infer__dequant_bf16,  infer__quant_bf16,  infer__dot_bf16,  INFER_TYPE_F32  },
[INFER_TYPE_Q4_0]  = { "q4_0",  INFER_QK4_0,       18, infer__dequant_q4_0,  infer__quant_q4_0,  infer__dot_q4_0,  INFER_TYPE_Q8_0 },
[INFER_TYPE_Q4_1]  = { "q4_1",  INFER_QK4_1,       20, infer__dequant_q4_1,  infer__quant_q4_1,  infer__dot_q4_1,  INFER_TYPE_Q8_1 },
[INFER_TYPE_Q5_0]  = { "q5_0",  INFER_QK5_0,       22, infer__dequant_q5_0,  infer__quant_q5_0,  infer__dot_q5_0,  INFER_TYPE_Q8_0 },
[INFER_TYPE_Q5_1]  = { "q5_1",  INFER_QK5_1,       24, infer__dequant_q5_1,  infer__quant_q5_1,  infer__dot_q5_1,  INFER_TYPE_Q8_1 },
[INFER_TYPE_Q8_0]  = { "q8_0",  INFER_QK8_0,       34, infer__dequant_q8_0,  infer__quant_q8_0,  infer__dot_q8_0,  INFER_TYPE_Q8_0 },
[INFER_TYPE_TQ1_0] = { "tq1_0", INFER_QK_K,        54, infer__dequant_tq1_0, infer__quant_tq1_0, infer__dot_tq1_0, INFER_TYPE_Q8_K },
[INFER_TYPE_TQ2_0] = { "tq2_0", INFER_QK_K,        66, infer__dequant_tq2_0, infer__quant_tq2_0, infer__dot_tq2_0, INFER_TYPE_Q8_K },
[INFER_TYPE_MXFP4] = { "mxfp4", INFER_QK_MXFP4,    17, infer__dequant_mxfp4, infer__quant_mxfp4, infer__dot_mxfp4, INFER_TYPE_Q8_0 },
[INFER_TYPE_NVFP4] = { "nvfp4", INFER_QK_NVFP4,    36, infer__dequant_nvfp4, infer__quant_nvfp4, infer__dot_nvfp4, INFER_TYPE_Q8_0 },
[INFER_TYPE_Q1_0]  = { "q1_0",  INFER_QK1_0,       18, infer__dequant_q1_0,  infer__quant_q1_0,  infer__dot_q1_0,  INFER_TYPE_Q8_0 },
[INFER_TYPE_Q2_0]  = { "q2_0",  INFER_QK2_0,       18, infer__dequant_q2_0,  infer__quant_q2_0,  infer__dot_q2_0,  INFER_TYPE_Q8_0 },
/* traits table entries for the k-quants and IQ4_NL / IQ4_XS.
 * { name, elements per block, bytes per block, dequant, quant, dot, activation type } */
[INFER_TYPE_Q2_K]   = { "q2_K",   INFER_QK_K,    84, infer__dequant_q2_k,   infer__quant_q2_k,   infer__dot_q2_k,   INFER_TYPE_Q8_K },
[INFER_TYPE_Q3_K]   = { "q3_K",   INFER_QK_K,   110, infer__dequant_q3_k,   infer__quant_q3_k,   infer__dot_q3_k,   INFER_TYPE_Q8_K },
[INFER_TYPE_Q4_K]   = { "q4_K",   INFER_QK_K,   144, infer__dequant_q4_k,   infer__quant_q4_k,   infer__dot_q4_k,   INFER_TYPE_Q8_K },
[INFER_TYPE_Q5_K]   = { "q5_K",   INFER_QK_K,   176, infer__dequant_q5_k,   infer__quant_q5_k,   infer__dot_q5_k,   INFER_TYPE_Q8_K },
[INFER_TYPE_Q6_K]   = { "q6_K",   INFER_QK_K,   210, infer__dequant_q6_k,   infer__quant_q6_k,   infer__dot_q6_k,   INFER_TYPE_Q8_K },
[INFER_TYPE_IQ4_NL] = { "iq4_nl", INFER_QK4_NL,  18, infer__dequant_iq4_nl, infer__quant_iq4_nl, infer__dot_iq4_nl, INFER_TYPE_Q8_0 },
[INFER_TYPE_IQ4_XS] = { "iq4_xs", INFER_QK_K,   136, infer__dequant_iq4_xs, infer__quant_iq4_xs, infer__dot_iq4_xs, INFER_TYPE_Q8_K },
/* traits entries of the grid i-quants (designated initializers, C only); all dot against Q8_K */
[INFER_TYPE_IQ2_XXS] = { "iq2_xxs", INFER_QK_K, (int32_t)sizeof(infer_block_iq2_xxs), infer__dequant_iq2_xxs, NULL, infer__dot_iq2_xxs, INFER_TYPE_Q8_K },
[INFER_TYPE_IQ2_XS]  = { "iq2_xs",  INFER_QK_K, (int32_t)sizeof(infer_block_iq2_xs),  infer__dequant_iq2_xs,  NULL, infer__dot_iq2_xs,  INFER_TYPE_Q8_K },
[INFER_TYPE_IQ2_S]   = { "iq2_s",   INFER_QK_K, (int32_t)sizeof(infer_block_iq2_s),   infer__dequant_iq2_s,   NULL, infer__dot_iq2_s,   INFER_TYPE_Q8_K },
[INFER_TYPE_IQ3_XXS] = { "iq3_xxs", INFER_QK_K, (int32_t)sizeof(infer_block_iq3_xxs), infer__dequant_iq3_xxs, NULL, infer__dot_iq3_xxs, INFER_TYPE_Q8_K },
[INFER_TYPE_IQ3_S]   = { "iq3_s",   INFER_QK_K, (int32_t)sizeof(infer_block_iq3_s),   infer__dequant_iq3_s,   NULL, infer__dot_iq3_s,   INFER_TYPE_Q8_K },
[INFER_TYPE_IQ1_S]   = { "iq1_s",   INFER_QK_K, (int32_t)sizeof(infer_block_iq1_s),   infer__dequant_iq1_s,   NULL, infer__dot_iq1_s,   INFER_TYPE_Q8_K },
[INFER_TYPE_IQ1_M]   = { "iq1_m",   INFER_QK_K, (int32_t)sizeof(infer_block_iq1_m),   infer__dequant_iq1_m,   NULL, infer__dot_iq1_m,   INFER_TYPE_Q8_K },
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
/* ------------------------------------------------------------------------------------------
 * >>simd -- vectorized dot products for the CPU matmul.
 *
 * What: for a weight type t, infer__simd_dot(t) returns a SIMD version of the scalar
 * reference infer__traits[t].dot -- same weight row, same activation format (dot_type),
 * same sum -- or NULL when this build has none, and the matmul then uses the scalar one
 * (quant.h: infer__type_dot). Only the order of float additions may differ, see below.
 *
 * Which code exists is decided by the compiler's target flags (-march=native, -mavx2, ...)
 * at build time, never at run time, so a binary runs only on CPUs that have what it was
 * built for. Tiers, best first; a type missing from a tier falls through to the next:
 *   avx512   AVX-512 F+BW+VL: 512-bit kernels for the types where they measured faster than
 *            the AVX2 ones (the list in infer__simd_dot_avx512, and why, at that tier)
 *   avx2     AVX2 + FMA + F16C: 256-bit kernels for all 19 types in infer__simd_dot_avx2
 *   neon     AArch64 NEON (+ the dot-product extension when present): the float types,
 *            Q8_0, Q4_0, Q4_K and Q6_K, written plainly
 * VNNI (AVX512-VNNI or AVX-VNNI) is used inside the x86 tiers when present. Not used on
 * purpose: AVX512-BF16 (vdpbf16ps multiplies bf16 by bf16, so it would have to round the
 * f32 activations to bf16: a different result from the BF16 reference dot) and AMX.
 *
 * The integer tricks (x86), explained once:
 *   maddubs   vpmaddubsw: 32 unsigned bytes a times 32 signed bytes b; adjacent products
 *             are added in pairs into 16 int16 lanes, SATURATING at +-32767. Every use below
 *             states why its pair sums fit.
 *   madd      vpmaddwd: 16-bit lanes multiplied by 16-bit lanes, adjacent products added
 *             into int32. With all-ones it just widens pairs; with a sub-block scale it
 *             applies the scale on the way (exact: the sums stay far below 2^31).
 *   dpbusd    VNNI vpdpbusd: for each int32 lane, acc += a0*b0 + a1*b1 + a2*b2 + a3*b3 with
 *             a unsigned and b signed bytes, computed exactly (no int16 step, so no
 *             saturation). Without VNNI the same is maddubs + madd(1) + add.
 *   sign trick  both instructions want one unsigned factor. For signed a and b,
 *             a*b = |a| * (b * sign(a)): abs_epi8(a) is |a| (-128 gives 128, still right
 *             as an unsigned byte) and sign_epi8(b, a) negates b where a < 0 and zeroes it
 *             where a == 0. Only b = -128 with a < 0 breaks (the negation wraps); b is the
 *             activation, whose quantizers produce codes in -127..127.
 *   offset codes  a code q stored with an offset (Q4_0: w = (q - 8) d) is dotted as
 *             sum(q*y) - 8*sum(y): the unsigned code feeds maddubs/dpbusd directly, and
 *             sum(y) is a dot with a vector of constant bytes (or Q8_K's bsums).
 *   nibbles   16 bytes -> 32 codes: low nibbles are b & 15; x86 has no byte shift, so the
 *             high nibbles are a 16-bit shift right by 4 followed by & 15, which clears
 *             the bits that came across from the neighbouring byte.
 *   lookups   non-linear 4-bit codes (IQ4, FP4): pshufb (shuffle_epi8) with a 16-byte table
 *             and the nibbles as indices gives the signed level of each code in one step.
 *   bits -> bytes  Q5's fifth bits: bit e of a 32-bit word becomes byte e (0xFF or 0).
 *
 * Exactness. The integer sums are exact. Kernels over 256-element super-blocks reduce them
 * to one integer per super-block and then apply the scales with the very float operations
 * of the scalar code, so they return bit-identical results. The 32-element block types
 * keep 8 or 16 float accumulator lanes (one horizontal sum per block would cost as much as
 * the block), and the float types accumulate in f32 where the reference uses double: those
 * differ from the reference by f32 rounding of the partial sums, measured below 3e-7 of
 * sum |w*x| (the tests allow 2e-6, and 1e-5 for the float types).
 * ---------------------------------------------------------------------------------------- */

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define INFER__SIMD_AVX2 1
#include <immintrin.h>
#endif
#if defined(INFER__SIMD_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define INFER__SIMD_AVX512 1
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
#define INFER__SIMD_NEON 1
#include <arm_neon.h>
#endif

#ifdef INFER__SIMD_AVX2
/* ===================================================================================
 * x86 helpers (256-bit)
 * =================================================================================== */

static inline float infer__h2f(infer_half h) { return _cvtsh_ss(h); }   /* exact, as the scalar one */

static inline __m256i infer__load256(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline __m128i infer__load128(const void *p) { return _mm_loadu_si128((const __m128i *)p); }

static inline float infer__hsum_ps256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline int32_t infer__hsum_epi32_256(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* acc + (a0*b0 + a1*b1 + a2*b2 + a3*b3) per int32 lane; a unsigned bytes, b signed bytes.
 * The maddubs fallback needs every pair sum a0*b0 + a1*b1 within +-32767. */
static inline __m256i infer__dpbusd256(__m256i acc, __m256i a, __m256i b) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(acc, a, b);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(acc, a, b);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)));
#endif
}

/* The same for signed a and b (the sign trick; b must not hold -128). With |a| <= 128 and
 * |b| <= 127 a pair sum is at most 2*128*127 = 32512: the maddubs fallback cannot saturate. */
static inline __m256i infer__dpbssd256(__m256i acc, __m256i a, __m256i b) {
    return infer__dpbusd256(acc, _mm256_abs_epi8(a), _mm256_sign_epi8(b, a));
}

/* maddubs(a, b) then madd with the 16-bit scales sc: sum over 4 bytes of sc*a*b per int32
 * lane. Used where each 16 or 32 codes carry their own integer scale (k-quants). */
static inline __m256i infer__dot_scaled256(__m256i a, __m256i b, __m256i sc) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), sc);
}

/* 16 bytes of packed nibbles -> 32 codes 0..15: byte j of the result is the low nibble of
 * byte j (j < 16), byte 16 + j the high nibble of byte j. */
static inline __m256i infer__nibbles256(const uint8_t *p) {
    const __m128i q = infer__load128(p), m = _mm_set1_epi8(15);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
}

/* Bit e of `bits` -> byte e: 0xFF when set, 0 when clear. AVX512BW has it as one
 * instruction; otherwise every byte picks the byte of `bits` it needs (shuffle), keeps
 * its own bit (and) and compares it with that bit. */
static inline __m256i infer__bits_to_bytes256(uint32_t bits) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
    return _mm256_movm_epi8((__mmask32)bits);
#else
    const __m256i pick = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), pick);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
#endif
}

/* A 16-entry signed byte table in both 128-bit halves, for pshufb lookups. */
static inline __m256i infer__table256(const int8_t *t16) { return _mm256_broadcastsi128_si256(infer__load128(t16)); }

/* Scales of a 32-code chunk made of two 16-element sub-blocks j, j+1: int16 lanes 0..7
 * hold s[j], lanes 8..15 s[j+1]. s16 = the 16 signed byte scales in both 128-bit halves;
 * pshufb copies byte j (low half) or j+1 (high half) into both bytes of every 16-bit
 * lane, and the arithmetic shift right by 8 sign-extends it. */
static inline __m256i infer__scale_pair256(__m256i s16, int j) {
    const __m256i idx = _mm256_add_epi8(_mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
                                        _mm256_set1_epi8((char)j));
    return _mm256_srai_epi16(_mm256_shuffle_epi8(s16, idx), 8);
}

/* sum_j sc[j] * bsums[j] over the 16 sub-blocks of a Q8_K block (sc: 16 signed bytes). */
static inline int32_t infer__bsums_dot256(const int16_t *bsums, __m128i sc) {
    return infer__hsum_epi32_256(_mm256_madd_epi16(infer__load256(bsums), _mm256_cvtepi8_epi16(sc)));
}

/* The 16 signed 6-bit scales of Q3_K (see infer__q3k_scale), four per 32-bit lane. With
 * w0 w1 w2 the three words of the 12 scale bytes:
 *   sc[0..3]   = w0 & 0x0f..      | (w2      & 0x03..) << 4
 *   sc[4..7]   = w1 & 0x0f..      | (w2 >> 2 & 0x03..) << 4
 *   sc[8..11]  = w0 >> 4 & 0x0f.. | (w2 >> 4 & 0x03..) << 4
 *   sc[12..15] = w1 >> 4 & 0x0f.. | (w2 >> 6 & 0x03..) << 4,   each then - 32.
 * One load of the block's last 16 bytes (2 bytes of qs, the scales, d) and a 2-byte shift
 * put w0 w1 w2 in lanes 0 1 2. Per-lane shifts (srlv) do the four rows at once. */
static inline __m128i infer__q3k_scales128(const infer_block_q3_k *b) {
    INFER__STATIC_ASSERT(offsetof(infer_block_q3_k, scales) + 14 == sizeof(infer_block_q3_k), "q3_K: scales, then d, at the end");
    const __m128i h = _mm_srli_si128(infer__load128((const uint8_t *)b + sizeof *b - 16), 2);
    const __m128i lo = _mm_srlv_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 1, 0)), _mm_setr_epi32(0, 0, 4, 4));
    const __m128i hi = _mm_srlv_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(2, 2, 2, 2)), _mm_setr_epi32(0, 2, 4, 6));
    const __m128i v = _mm_or_si128(_mm_and_si128(lo, _mm_set1_epi8(0x0f)), _mm_slli_epi32(_mm_and_si128(hi, _mm_set1_epi8(3)), 4));
    return _mm_sub_epi8(v, _mm_set1_epi8(32));
}

/* The 8 six-bit scales and 8 mins of Q4_K/Q5_K (see infer__k4_scale_min), four per 32-bit
 * lane. The block's first 16 bytes are d, dmin and the 12 scale bytes, i.e. the words
 * w0 w1 w2 of the scales sit in int32 lanes 1, 2, 3 of one load:
 *   sc[0..3] = w0 & 0x3f..,   sc[4..7] = w2 & 0x0f.. | (w0 >> 2) & 0x30..   (bits 6-7 -> 4-5)
 *   m[0..3]  = w1 & 0x3f..,   m[4..7]  = w2 >> 4 & 0x0f.. | (w1 >> 2) & 0x30..
 * Returned as bytes: scales in 0..7, mins in 8..15. */
static inline __m128i infer__k4_scales128(const void *block) {
    const __m128i h = infer__load128(block);
    const __m128i a = _mm_srlv_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(3, 2, 3, 1)), _mm_setr_epi32(0, 0, 0, 4));
    const __m128i b = _mm_srli_epi32(_mm_shuffle_epi32(h, _MM_SHUFFLE(2, 2, 1, 1)), 2);
    const __m128i lo = _mm_and_si128(a, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    return _mm_or_si128(lo, _mm_and_si128(b, _mm_setr_epi32(0, 0x30303030, 0, 0x30303030)));
}

/* sum_j m[j] * (bsums[2j] + bsums[2j+1]): the mins (bytes 8..15 of k4) paired with
 * the 16-element partial sums of Q8_K (each min covers two of them). */
static inline int32_t infer__k4_msum256(__m128i k4, const int16_t *bsums) {
    const __m128i m = _mm_unpackhi_epi8(k4, k4);                 /* m0 m0 m1 m1 ... m7 m7 */
    return infer__hsum_epi32_256(_mm256_madd_epi16(infer__load256(bsums), _mm256_cvtepu8_epi16(m)));
}

/* ===================================================================================
 * x86 AVX2 kernels. Each mirrors the scalar dot of the same name in quant_a.h /
 * quant_b.h; the layouts are drawn there.
 * =================================================================================== */

/* ---- float types: f32 FMA into 4 x 8 lanes, scalar tail ---- */

static float infer__dot_f32_avx2(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc[0]);
    float s = infer__hsum_ps256(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* 8 halves -> 8 floats (vcvtph2ps, exact). */
static inline __m256 infer__f16x8(const infer_half *p) { return _mm256_cvtph_ps(infer__load128(p)); }
/* 8 bf16 -> 8 floats: a bf16 is the top half of an f32, so widen and shift left by 16. */
static inline __m256 infer__bf16x8(const infer_bf16 *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(infer__load128(p)), 16));
}

static float infer__dot_f16_avx2(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(infer__f16x8(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(infer__f16x8(a + i), _mm256_loadu_ps(b + i), acc[0]);
    float s = infer__hsum_ps256(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) s += infer__h2f(a[i]) * b[i];
    return s;
}

static float infer__dot_bf16_avx2(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    __m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(infer__bf16x8(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(infer__bf16x8(a + i), _mm256_loadu_ps(b + i), acc[0]);
    float s = infer__hsum_ps256(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) s += infer__bf16_to_fp32(a[i]) * b[i];
    return s;
}

/* ---- 32-element blocks against Q8_0 / Q8_1 ----
 * Per block: 8 int32 partial sums -> float, times d_w*d_x, added into a float accumulator.
 * Each kernel is a block function plus a loop that alternates two accumulators, so two
 * FMA dependency chains overlap (an FMA takes 4 cycles, a block about as long). */

static inline __m256 infer__fmadd_block256(__m256i sumi, float scale, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), _mm256_set1_ps(scale), acc);
}

#define INFER__TWO_CHAINS256(nb, BLOCK)                                                   \
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();                       \
    int64_t i = 0;                                                                        \
    for (; i + 2 <= (nb); i += 2) { acc0 = BLOCK(i, acc0); acc1 = BLOCK(i + 1, acc1); }   \
    if (i < (nb)) acc0 = BLOCK(i, acc0);                                                  \
    return infer__hsum_ps256(_mm256_add_ps(acc0, acc1))

static inline __m256 infer__q8_0_block256(const infer_block_q8_0 *a, const infer_block_q8_0 *y, __m256 acc) {
    const __m256i s = infer__dpbssd256(_mm256_setzero_si256(), infer__load256(a->qs), infer__load256(y->qs));
    return infer__fmadd_block256(s, infer__h2f(a->d) * infer__h2f(y->d), acc);
}
static float infer__dot_q8_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)w, *y = (const infer_block_q8_0 *)x;
#define INFER__B(i, acc) infer__q8_0_block256(&a[i], &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK8_0, INFER__B);
#undef INFER__B
}

/* sum(q*y) - off*sum(y) for 32 unsigned codes q (off = the code offset, 8 or 16). */
static inline __m256i infer__dot_offset256(__m256i q, __m256i yq, int off) {
    const __m256i s = infer__dpbusd256(_mm256_setzero_si256(), q, yq);
    return _mm256_sub_epi32(s, infer__dpbusd256(_mm256_setzero_si256(), _mm256_set1_epi8((char)off), yq));
}

static inline __m256 infer__q4_0_block256(const infer_block_q4_0 *a, const infer_block_q8_0 *y, __m256 acc) {
    const __m256i s = infer__dot_offset256(infer__nibbles256(a->qs), infer__load256(y->qs), 8);
    return infer__fmadd_block256(s, infer__h2f(a->d) * infer__h2f(y->d), acc);
}
static float infer__dot_q4_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q4_0 *a = (const infer_block_q4_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
#define INFER__B(i, acc) infer__q4_0_block256(&a[i], &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK4_0, INFER__B);
#undef INFER__B
}

/* Q5 codes: the nibble plus 16 where the element's bit of qh is set. */
static inline __m256i infer__q5_codes256(const uint8_t *qs, const uint8_t *qh4) {
    uint32_t qh; memcpy(&qh, qh4, 4);
    return _mm256_or_si256(infer__nibbles256(qs), _mm256_and_si256(infer__bits_to_bytes256(qh), _mm256_set1_epi8(16)));
}

static inline __m256 infer__q5_0_block256(const infer_block_q5_0 *a, const infer_block_q8_0 *y, __m256 acc) {
    const __m256i s = infer__dot_offset256(infer__q5_codes256(a->qs, a->qh), infer__load256(y->qs), 16);
    return infer__fmadd_block256(s, infer__h2f(a->d) * infer__h2f(y->d), acc);
}
static float infer__dot_q5_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q5_0 *a = (const infer_block_q5_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
#define INFER__B(i, acc) infer__q5_0_block256(&a[i], &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK5_0, INFER__B);
#undef INFER__B
}

/* Q4_1 / Q5_1 against Q8_1: d_w*d_x*sum(q*y) + m*d_x*sum(y). sum(y) is recomputed from
 * the integers (a dot with 1s), as the reference does, not read from Q8_1's fp16 s. */
static inline __m256 infer__affine_block256(__m256i q, const infer_block_q8_1 *y, infer_half d, infer_half m, __m256 acc) {
    const __m256i yq = infer__load256(y->qs), zero = _mm256_setzero_si256();
    const float dy = infer__h2f(y->d);
    acc = infer__fmadd_block256(infer__dpbusd256(zero, q, yq), infer__h2f(d) * dy, acc);
    return infer__fmadd_block256(infer__dpbusd256(zero, _mm256_set1_epi8(1), yq), infer__h2f(m) * dy, acc);
}

static float infer__dot_q4_1_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q4_1 *a = (const infer_block_q4_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
#define INFER__B(i, acc) infer__affine_block256(infer__nibbles256(a[i].qs), &y[i], a[i].d, a[i].m, acc)
    INFER__TWO_CHAINS256(n / INFER_QK4_1, INFER__B);
#undef INFER__B
}

static float infer__dot_q5_1_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q5_1 *a = (const infer_block_q5_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
#define INFER__B(i, acc) infer__affine_block256(infer__q5_codes256(a[i].qs, a[i].qh), &y[i], a[i].d, a[i].m, acc)
    INFER__TWO_CHAINS256(n / INFER_QK5_1, INFER__B);
#undef INFER__B
}

/* Non-linear 4-bit codes: table lookup, then a signed dot (|level| <= 127). The scale
 * d_w*d_x comes from the caller (IQ4_NL: fp16 d; MXFP4: E8M0 exponent). */
static inline __m256 infer__lut4_block256(__m256i tbl, const uint8_t *qs, const infer_block_q8_0 *y, float dw, __m256 acc) {
    const __m256i v = _mm256_shuffle_epi8(tbl, infer__nibbles256(qs));
    const __m256i s = infer__dpbssd256(_mm256_setzero_si256(), v, infer__load256(y->qs));
    return infer__fmadd_block256(s, dw * infer__h2f(y->d), acc);
}

static float infer__dot_iq4_nl_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_nl *a = (const infer_block_iq4_nl *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m256i tbl = infer__table256(infer__kvalues_iq4nl);
#define INFER__B(i, acc) infer__lut4_block256(tbl, a[i].qs, &y[i], infer__h2f(a[i].d), acc)
    INFER__TWO_CHAINS256(n / INFER_QK4_NL, INFER__B);
#undef INFER__B
}

/* MXFP4: the doubled E2M1 table and the halved E8M0 scale. */
static float infer__dot_mxfp4_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_mxfp4 *a = (const infer_block_mxfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m256i tbl = infer__table256(infer__kvalues_fp4);
#define INFER__B(i, acc) infer__lut4_block256(tbl, a[i].qs, &y[i], infer__e8m0_to_fp32_half(a[i].e), acc)
    INFER__TWO_CHAINS256(n / INFER_QK_MXFP4, INFER__B);
#undef INFER__B
}

/* UE4M3 byte -> half its value, from bits (no ldexpf): bit 7 is ignored as in the scalar
 * helper, 0x00 and 0x7F read as 0; normal: (1 + m/8) 2^(e-7) / 2 has f32 exponent field
 * e + 119 and mantissa m << 20; subnormal (e = 0): m * 2^-10. */
static inline float infer__ue4m3_half(uint8_t x) {
    const uint32_t e = (x >> 3) & 15, m = x & 7;
    if (x == 0 || x == 0x7F) return 0.0f;
    return e ? infer__fp32_from_bits((e + 119) << 23 | m << 20) : (float)m * (1.0f / 1024.0f);
}

/* NVFP4 against two Q8_0 blocks. Sub-block s (16 elements) is qs[8s..8s+7]: low nibbles
 * are its elements 0..7, high nibbles 8..15. Nibble-splitting 16 bytes (sub-blocks 2b,
 * 2b+1) gives lo = [lo(s0) lo(s1)], hi = [hi(s0) hi(s1)]; unpacking their 64-bit halves
 * puts the 32 codes in element order, matching Q8_0 block b. Int32 lanes 0..3 then
 * belong to sub-block 2b and lanes 4..7 to 2b+1, each with its own UE4M3 scale. */
static inline __m256 infer__nvfp4_half256(__m256i tbl, const uint8_t *qs16, const uint8_t *d2, const infer_block_q8_0 *y, __m256 acc) {
    const __m128i q = infer__load128(qs16), m4 = _mm_set1_epi8(15);
    const __m128i lo = _mm_and_si128(q, m4), hi = _mm_and_si128(_mm_srli_epi16(q, 4), m4);
    const __m256i c = _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
    const __m256i s = infer__dpbssd256(_mm256_setzero_si256(), _mm256_shuffle_epi8(tbl, c), infer__load256(y->qs));
    const float dy = infer__h2f(y->d);
    const __m256 sc = _mm256_set_m128(_mm_set1_ps(infer__ue4m3_half(d2[1]) * dy), _mm_set1_ps(infer__ue4m3_half(d2[0]) * dy));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), sc, acc);
}
static float infer__dot_nvfp4_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_nvfp4 *a = (const infer_block_nvfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m256i tbl = infer__table256(infer__kvalues_fp4);
#define INFER__B(i, acc) infer__nvfp4_half256(tbl, a[(i) / 2].qs + 16 * ((i) % 2), a[(i) / 2].d + 2 * ((i) % 2), &y[i], acc)
    INFER__TWO_CHAINS256(n / INFER_QK8_0, INFER__B);
#undef INFER__B
}

/* ---- 256-element super-blocks against Q8_K ----
 * One integer sum per super-block, then the scalar code's float formula. */

/* Q2_K: codes 0..3 (pair sums <= 2*3*127), scale pair per 32 codes; the mins use bsums. */
static float infer__dot_q2_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m3 = _mm256_set1_epi8(3);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sm = infer__load128(b->scales), m4 = _mm_set1_epi8(15);
        const __m128i sc = _mm_and_si128(sm, m4), mn = _mm_and_si128(_mm_srli_epi16(sm, 4), m4);
        const __m256i s16 = _mm256_broadcastsi128_si256(sc);
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            __m256i q = infer__load256(b->qs + 32 * h);
            for (int k = 0; k < 4; k++, q = _mm256_srli_epi16(q, 2)) {
                const __m256i yq = infer__load256(a->qs + 128 * h + 32 * k);
                acc = _mm256_add_epi32(acc, infer__dot_scaled256(_mm256_and_si256(q, m3), yq, infer__scale_pair256(s16, 8 * h + 2 * k)));
            }
        }
        const int isum = infer__hsum_epi32_256(acc), msum = infer__bsums_dot256(a->bsums, mn);
        sum += a->d * (infer__h2f(b->d) * (float)isum - infer__h2f(b->dmin) * (float)msum);
    }
    return sum;
}

/* Q3_K: code = crumb + 4*hbit in 0..7, value = code - 4, so
 * isum = sum_j sc_j * (sum code*y - 4*bsum_j). The hmask bit of element 128h + 32k + l
 * is bit 4h+k of hmask[l]: shift the 32 mask bytes right once per step and keep bit 0. */
static float infer__dot_q3_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__q3k_scales128(b);
        const __m256i s16 = _mm256_broadcastsi128_si256(sc);
        __m256i hm = infer__load256(b->hmask), acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            __m256i q = infer__load256(b->qs + 32 * h);
            for (int k = 0; k < 4; k++, q = _mm256_srli_epi16(q, 2), hm = _mm256_srli_epi16(hm, 1)) {
                const __m256i hb = _mm256_slli_epi16(_mm256_and_si256(hm, one), 2);
                const __m256i c = _mm256_or_si256(_mm256_and_si256(q, m3), hb);
                const __m256i yq = infer__load256(a->qs + 128 * h + 32 * k);
                acc = _mm256_add_epi32(acc, infer__dot_scaled256(c, yq, infer__scale_pair256(s16, 8 * h + 2 * k)));
            }
        }
        const int isum = infer__hsum_epi32_256(acc) - 4 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* Q4_K / Q5_K: 64 codes per 32 bytes of qs (low nibbles: sub-block 2g, high: 2g+1), one
 * scale per 32 codes; Q5_K adds 16 where bit j of qh[l] is set (j = sub-block), taken
 * like Q3_K's hmask. Pair sums <= 2*31*127. The scale of sub-block j is broadcast from
 * the 16-bit scale vector by pshufb (bytes 2j, 2j+1 into every 16-bit lane). */
static inline float infer__dot_k4_block_avx2(const void *block, const uint8_t *qs, const uint8_t *qh,
                                            float d, float dmin, const infer_block_q8_k *a) {
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
    const __m128i k4 = infer__k4_scales128(block);
    const __m256i s16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(k4));
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    __m256i hm = qh ? infer__load256(qh) : _mm256_setzero_si256();
    for (int g = 0; g < 4; g++) {
        const __m256i q = infer__load256(qs + 32 * g);
        __m256i c0 = _mm256_and_si256(q, m4), c1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        if (qh) {
            c0 = _mm256_or_si256(c0, _mm256_slli_epi16(_mm256_and_si256(hm, one), 4));
            c1 = _mm256_or_si256(c1, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hm, 1), one), 4));
            hm = _mm256_srli_epi16(hm, 2);
        }
        const __m256i sc0 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short)(0x0100 + 0x0202 * (2 * g))));
        const __m256i sc1 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short)(0x0100 + 0x0202 * (2 * g + 1))));
        acc0 = _mm256_add_epi32(acc0, infer__dot_scaled256(c0, infer__load256(a->qs + 64 * g), sc0));
        acc1 = _mm256_add_epi32(acc1, infer__dot_scaled256(c1, infer__load256(a->qs + 64 * g + 32), sc1));
    }
    const int isum = infer__hsum_epi32_256(_mm256_add_epi32(acc0, acc1)), msum = infer__k4_msum256(k4, a->bsums);
    return a->d * (d * (float)isum - dmin * (float)msum);
}

static float infer__dot_q4_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block_avx2(b, b->qs, NULL, infer__h2f(b->d), infer__h2f(b->dmin), a);
    return sum;
}

static float infer__dot_q5_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q5_k *b = (const infer_block_q5_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++)
        sum += infer__dot_k4_block_avx2(b, b->qs, b->qh, infer__h2f(b->d), infer__h2f(b->dmin), a);
    return sum;
}

/* Q6_K: per 128-element half, ql0 = ql[64h..+31], ql1 = ql[64h+32..+63], qh = qh[32h..+31].
 * Chunk k (elements 32k..32k+31 of the half) = nibble k>>1 of ql(k&1) | bits 2k..2k+1 of
 * qh moved to bits 4..5; codes 0..63 (pair sums <= 2*63*127), value = code - 32. */
static float infer__dot_q6_k_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m4 = _mm256_set1_epi8(15), m30 = _mm256_set1_epi8(0x30);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__load128(b->scales);
        const __m256i s16 = _mm256_broadcastsi128_si256(sc);
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i l0 = infer__load256(b->ql + 64 * h), l1 = infer__load256(b->ql + 64 * h + 32);
            const __m256i qh = infer__load256(b->qh + 32 * h);
            const __m256i c[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30)),
                _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30)),
            };
            for (int k = 0; k < 4; k++) {
                const __m256i yq = infer__load256(a->qs + 128 * h + 32 * k);
                acc = _mm256_add_epi32(acc, infer__dot_scaled256(c[k], yq, infer__scale_pair256(s16, 8 * h + 2 * k)));
            }
        }
        const int isum = infer__hsum_epi32_256(acc) - 32 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* IQ4_XS: IQ4_NL lookups per 32-element sub-block, signed levels through the sign trick
 * (pair sums <= 2*127*127 = 32258), 6-bit signed sub-block scales. */
static float infer__dot_iq4_xs_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i tbl = infer__table256(infer__kvalues_iq4nl);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        __m256i acc = _mm256_setzero_si256();
        for (int j = 0; j < 8; j++) {
            const __m256i v = _mm256_shuffle_epi8(tbl, infer__nibbles256(b->qs + 16 * j));
            const __m256i yq = infer__load256(a->qs + 32 * j);
            const __m256i sc = _mm256_set1_epi16((short)infer__iq4xs_scale(b, j));
            acc = _mm256_add_epi32(acc, infer__dot_scaled256(_mm256_abs_epi8(v), _mm256_sign_epi8(yq, v), sc));
        }
        sum += infer__h2f(b->d) * a->d * (float)infer__hsum_epi32_256(acc);
    }
    return sum;
}

/* sum of the 16 bsums of a Q8_K block = sum of its 256 codes. */
static inline int32_t infer__bsums_total256(const int16_t *bsums) {
    return infer__hsum_epi32_256(_mm256_madd_epi16(infer__load256(bsums), _mm256_set1_epi16(1)));
}

/* TQ2_0: 2-bit codes 0..2 laid out like Q2_K's; sum((c - 1) y) = sum(c y) - sum(y). */
static float infer__dot_tq2_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i m3 = _mm256_set1_epi8(3);
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            __m256i q = infer__load256(b[i].qs + 32 * h);
            for (int k = 0; k < 4; k++, q = _mm256_srli_epi16(q, 2))
                acc = infer__dpbusd256(acc, _mm256_and_si256(q, m3), infer__load256(a[i].qs + 128 * h + 32 * k));
        }
        const int sumi = infer__hsum_epi32_256(acc) - infer__bsums_total256(a[i].bsums);
        s += (float)sumi * (infer__h2f(b[i].d) * a[i].d);
    }
    return s;
}

/* TQ1_0 trits. Digit k of a byte is the top trit of the byte times 3^k modulo 256:
 *   u8(byte * 3^k): bytes multiplied as 16-bit lanes, even and odd bytes separately so no
 *                   carry crosses into the neighbour (mul_u8 below);
 *   top trit t = (3q) >> 8 = (q >= 86) + (q >= 171): two unsigned compares (max == q).
 * Per block, 8 vectors of 32 trits in element order:
 *   qs[0..31] times 3^0..3^4                    -> elements   0..159
 *   qs[32..47] times (1 | 3) and (9 | 27)        -> elements 160..223 (one digit per half)
 *   qs[32..47] times 81 | qh[0..3] x4 times 1,3,9,27 -> elements 224..239 | 240..255 */
static inline __m256i infer__mul_u8_256(__m256i v, __m256i m) {
    const __m256i lo = _mm256_mullo_epi16(v, _mm256_and_si256(m, _mm256_set1_epi16(0x00FF)));
    const __m256i hi = _mm256_mullo_epi16(_mm256_and_si256(v, _mm256_set1_epi16((short)0xFF00)), _mm256_srli_epi16(m, 8));
    return _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi16(0x00FF)), hi);
}
static inline __m256i infer__top_trit256(__m256i q) {
    const __m256i ge1 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8(86)), q);
    const __m256i ge2 = _mm256_cmpeq_epi8(_mm256_max_epu8(q, _mm256_set1_epi8((char)171)), q);
    return _mm256_sub_epi8(_mm256_sub_epi8(_mm256_setzero_si256(), ge1), ge2);
}

static float infer__dot_tq1_0_avx2(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m256i pow3[5] = { _mm256_set1_epi8(1), _mm256_set1_epi8(3), _mm256_set1_epi8(9), _mm256_set1_epi8(27), _mm256_set1_epi8(81) };
    const __m256i p01 = _mm256_set_m128i(_mm_set1_epi8(3), _mm_set1_epi8(1));
    const __m256i p23 = _mm256_set_m128i(_mm_set1_epi8(27), _mm_set1_epi8(9));
    const __m256i ptail = _mm256_set_m128i(_mm_setr_epi8(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27), _mm_set1_epi8(81));
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        const __m256i q0 = infer__load256(b[i].qs);
        const __m256i q1 = _mm256_broadcastsi128_si256(infer__load128(b[i].qs + 32));
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        const __m256i qt = _mm256_set_m128i(_mm_set1_epi32((int)qh), infer__load128(b[i].qs + 32));
        __m256i v[8];
        for (int k = 0; k < 5; k++) v[k] = infer__mul_u8_256(q0, pow3[k]);
        v[5] = infer__mul_u8_256(q1, p01);
        v[6] = infer__mul_u8_256(q1, p23);
        v[7] = infer__mul_u8_256(qt, ptail);
        __m256i acc = _mm256_setzero_si256();
        for (int k = 0; k < 8; k++) acc = infer__dpbusd256(acc, infer__top_trit256(v[k]), infer__load256(a[i].qs + 32 * k));
        const int sumi = infer__hsum_epi32_256(acc) - infer__bsums_total256(a[i].bsums);
        s += (float)sumi * (infer__h2f(b[i].d) * a[i].d);
    }
    return s;
}

static infer__dot_fn infer__simd_dot_avx2(infer_type t) {
    switch (t) {
    case INFER_TYPE_F32:    return infer__dot_f32_avx2;
    case INFER_TYPE_F16:    return infer__dot_f16_avx2;
    case INFER_TYPE_BF16:   return infer__dot_bf16_avx2;
    case INFER_TYPE_Q8_0:   return infer__dot_q8_0_avx2;
    case INFER_TYPE_Q4_0:   return infer__dot_q4_0_avx2;
    case INFER_TYPE_Q4_1:   return infer__dot_q4_1_avx2;
    case INFER_TYPE_Q5_0:   return infer__dot_q5_0_avx2;
    case INFER_TYPE_Q5_1:   return infer__dot_q5_1_avx2;
    case INFER_TYPE_IQ4_NL: return infer__dot_iq4_nl_avx2;
    case INFER_TYPE_MXFP4:  return infer__dot_mxfp4_avx2;
    case INFER_TYPE_NVFP4:  return infer__dot_nvfp4_avx2;
    case INFER_TYPE_Q2_K:   return infer__dot_q2_k_avx2;
    case INFER_TYPE_Q3_K:   return infer__dot_q3_k_avx2;
    case INFER_TYPE_Q4_K:   return infer__dot_q4_k_avx2;
    case INFER_TYPE_Q5_K:   return infer__dot_q5_k_avx2;
    case INFER_TYPE_Q6_K:   return infer__dot_q6_k_avx2;
    case INFER_TYPE_IQ4_XS: return infer__dot_iq4_xs_avx2;
    case INFER_TYPE_TQ1_0:  return infer__dot_tq1_0_avx2;
    case INFER_TYPE_TQ2_0:  return infer__dot_tq2_0_avx2;
    default:                return NULL;
    }
}
#endif /* INFER__SIMD_AVX2 */

#ifdef INFER__SIMD_AVX512
/* ===================================================================================
 * x86 AVX-512 kernels (F + BW + VL). Same maths as the AVX2 ones, twice the width:
 * two 32-element blocks, or 64 codes of a super-block, per instruction. Scales of the
 * parts of a vector are selected per 16-bit lane with vpermw.
 * Only kernels that beat their AVX2 version on a Sapphire Rapids core are here: the float
 * types, Q5_1, NVFP4, Q2_K, Q3_K, Q6_K, TQ1_0 (1.1x to 1.7x). For Q8_0, Q4_0, Q4_1, Q5_0,
 * IQ4_NL, MXFP4, Q4_K, Q5_K, IQ4_XS and TQ2_0 the 512-bit versions were no faster or
 * slower (Q8_0: 0.8x): their per-block work is too small to pay for joining two blocks
 * into one vector (two loads and an insert), AVX-512 has no vpsignb for the sign trick,
 * and 512-bit integer instructions issue on fewer ports. Those types use the AVX2 tier.
 * =================================================================================== */

static inline __m512i infer__load512(const void *p) { return _mm512_loadu_si512(p); }
static inline __m512i infer__cat512(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
/* float lanes 0..7 = lo, 8..15 = hi: the scales of two 32-blocks side by side */
static inline __m512 infer__halves512(float lo, float hi) { return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(lo), _mm512_set1_ps(hi)); }

static inline __m512i infer__dpbusd512(__m512i acc, __m512i a, __m512i b) {
#ifdef __AVX512VNNI__
    return _mm512_dpbusd_epi32(acc, a, b);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(a, b), _mm512_set1_epi16(1)));
#endif
}
/* The sign trick without vpsignb (AVX-512 has none): negate b under the mask of a's sign
 * bits. Where a == 0 b stays, but |a| = 0 already zeroes the product. */
static inline __m512i infer__signed_b512(__m512i a, __m512i b) {
    return _mm512_mask_sub_epi8(b, _mm512_movepi8_mask(a), _mm512_setzero_si512(), b);
}
static inline __m512i infer__dpbssd512(__m512i acc, __m512i a, __m512i b) {
    return infer__dpbusd512(acc, _mm512_abs_epi8(a), infer__signed_b512(a, b));
}

/* Two 16-byte nibble runs (two 32-blocks) -> 64 codes in block order [lo0 hi0 | lo1 hi1]:
 * one shift and mask give [lo0 lo1 | hi0 hi1], a 128-bit lane shuffle reorders them. */
static inline __m512i infer__nibbles512(const uint8_t *p0, const uint8_t *p1) {
    const __m256i q = _mm256_set_m128i(infer__load128(p1), infer__load128(p0));
    const __m512i b = _mm512_and_si512(infer__cat512(q, _mm256_srli_epi16(q, 4)), _mm512_set1_epi8(15));
    return _mm512_shuffle_i64x2(b, b, _MM_SHUFFLE(3, 1, 2, 0));
}

/* 16-bit lane scales for 64 codes: idx = lane pattern of sub-block numbers (added to j),
 * s16 = the type's sub-block scales as int16 in the low lanes. */
static inline __m512i infer__scales512(__m512i s16, __m512i pattern, int j) {
    return _mm512_permutexvar_epi16(_mm512_add_epi16(pattern, _mm512_set1_epi16((short)j)), s16);
}
/* Sub-block of each 16-bit lane of 64 codes made of four 16-element sub-blocks (the
 * `pattern` above). */
static const int16_t infer__sub4_lanes[32] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                               2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3 };

/* ---- float types: 4 x 16 lanes, masked loads for the tail ---- */
static inline __mmask16 infer__tail_mask(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1); }
static inline __m512 infer__f16x16(const infer_half *p, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p)); }
static inline __m512 infer__bf16x16(const infer_bf16 *p, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

static float infer__dot_f32_avx512(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; k++) acc[k] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * k), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    for (; i < n; i += 16) {
        const __mmask16 m = infer__tail_mask(n - i);
        acc[0] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc[0]);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

static float infer__dot_f16_avx512(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; k++) acc[k] = _mm512_fmadd_ps(infer__f16x16(a + i + 16 * k, 0xFFFF), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    for (; i < n; i += 16) {
        const __mmask16 m = infer__tail_mask(n - i);
        acc[0] = _mm512_fmadd_ps(infer__f16x16(a + i, m), _mm512_maskz_loadu_ps(m, b + i), acc[0]);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

static float infer__dot_bf16_avx512(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    int64_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int k = 0; k < 4; k++) acc[k] = _mm512_fmadd_ps(infer__bf16x16(a + i + 16 * k, 0xFFFF), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    for (; i < n; i += 16) {
        const __mmask16 m = infer__tail_mask(n - i);
        acc[0] = _mm512_fmadd_ps(infer__bf16x16(a + i, m), _mm512_maskz_loadu_ps(m, b + i), acc[0]);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

/* ---- 32-element blocks: PAIR(i, acc) handles blocks i, i+1 in one 512-bit vector; two
 * chains of pairs, then an odd last block through the 256-bit SINGLE(i, acc). ---- */
#define INFER__PAIRS512(nb, PAIR, SINGLE)                                                    \
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();                           \
    int64_t i = 0;                                                                           \
    for (; i + 4 <= (nb); i += 4) { acc0 = PAIR(i, acc0); acc1 = PAIR(i + 2, acc1); }         \
    if (i + 2 <= (nb)) { acc0 = PAIR(i, acc0); i += 2; }                                     \
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));                               \
    if (i < (nb)) s += infer__hsum_ps256(SINGLE(i, _mm256_setzero_ps()));                    \
    return s

static inline __m512 infer__fmadd_pair512(__m512i sumi, float s0, float s1, __m512 acc) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi), infer__halves512(s0, s1), acc);
}
static inline __m512i infer__y_pair512(const infer_block_q8_0 *y) { return infer__cat512(infer__load256(y[0].qs), infer__load256(y[1].qs)); }

/* Q5 codes of two blocks: nibbles plus 16 under the 64-bit mask of both qh words. */
static inline __m512i infer__q5_codes512(const uint8_t *qs0, const uint8_t *qh0, const uint8_t *qs1, const uint8_t *qh1) {
    uint32_t h0, h1;
    memcpy(&h0, qh0, 4); memcpy(&h1, qh1, 4);
    const __m512i c = infer__nibbles512(qs0, qs1);
    return _mm512_mask_add_epi8(c, (__mmask64)((uint64_t)h1 << 32 | h0), c, _mm512_set1_epi8(16));
}

/* Q5_1 pairs: d*dy*sum(q*y) + m*dy*sum(y), as infer__affine_block256 */
static inline __m512 infer__affine_pair512(__m512i q, const infer_block_q8_1 *y, infer_half d0, infer_half m0,
                                           infer_half d1, infer_half m1, __m512 acc) {
    const __m512i yq = infer__cat512(infer__load256(y[0].qs), infer__load256(y[1].qs)), zero = _mm512_setzero_si512();
    const float dy0 = infer__h2f(y[0].d), dy1 = infer__h2f(y[1].d);
    acc = infer__fmadd_pair512(infer__dpbusd512(zero, q, yq), infer__h2f(d0) * dy0, infer__h2f(d1) * dy1, acc);
    return infer__fmadd_pair512(infer__dpbusd512(zero, _mm512_set1_epi8(1), yq), infer__h2f(m0) * dy0, infer__h2f(m1) * dy1, acc);
}
static float infer__dot_q5_1_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q5_1 *a = (const infer_block_q5_1 *)w;
    const infer_block_q8_1 *y = (const infer_block_q8_1 *)x;
#define INFER__P(i, acc) infer__affine_pair512(infer__q5_codes512(a[i].qs, a[i].qh, a[(i) + 1].qs, a[(i) + 1].qh), &y[i], a[i].d, a[i].m, a[(i) + 1].d, a[(i) + 1].m, acc)
#define INFER__S(i, acc) infer__affine_block256(infer__q5_codes256(a[i].qs, a[i].qh), &y[i], a[i].d, a[i].m, acc)
    INFER__PAIRS512(n / INFER_QK5_1, INFER__P, INFER__S);
#undef INFER__P
#undef INFER__S
}

/* NVFP4: one whole block (4 sub-blocks of 16) per vector. Per 128-bit lane, unpacking the
 * 64-bit halves of lo and hi gives sub-blocks [s0 | s2] and [s1 | s3]; a lane shuffle
 * puts them in order s0 s1 s2 s3, matching Q8_0 blocks 2i, 2i+1. Four int32 lanes per
 * sub-block, each group with its own scale. */
static inline __m512 infer__nvfp4_block512(__m512i tbl, const infer_block_nvfp4 *a, const infer_block_q8_0 *y, __m512 acc) {
    const __m256i q = infer__load256(a->qs), m4 = _mm256_set1_epi8(15);
    const __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    const __m512i c = infer__cat512(_mm256_unpacklo_epi64(lo, hi), _mm256_unpackhi_epi64(lo, hi));
    const __m512i v = _mm512_shuffle_epi8(tbl, _mm512_shuffle_i64x2(c, c, _MM_SHUFFLE(3, 1, 2, 0)));
    const __m512i s = infer__dpbssd512(_mm512_setzero_si512(), v, infer__y_pair512(y));
    const float dy0 = infer__h2f(y[0].d), dy1 = infer__h2f(y[1].d);
    const __m128 sc4 = _mm_setr_ps(infer__ue4m3_half(a->d[0]) * dy0, infer__ue4m3_half(a->d[1]) * dy0,
                                   infer__ue4m3_half(a->d[2]) * dy1, infer__ue4m3_half(a->d[3]) * dy1);
    const __m512 sc = _mm512_permutexvar_ps(_mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2),
                                            _mm512_castps128_ps512(sc4));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sc, acc);
}
static float infer__dot_nvfp4_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_nvfp4 *a = (const infer_block_nvfp4 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    const __m512i tbl = _mm512_broadcast_i32x4(infer__load128(infer__kvalues_fp4));
    const int64_t nb = n / INFER_QK_NVFP4;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        acc0 = infer__nvfp4_block512(tbl, &a[i], &y[2 * i], acc0);
        acc1 = infer__nvfp4_block512(tbl, &a[i + 1], &y[2 * i + 2], acc1);
    }
    if (i < nb) acc0 = infer__nvfp4_block512(tbl, &a[i], &y[2 * i], acc0);
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* ---- 256-element super-blocks: 64 codes per step, exact integer sums as in AVX2 ---- */

/* Q6_K: per half, ql[64h..64h+63] is [ql0 | ql1] in one load; qh2 = [qh | qh >> 2] puts
 * the bits of chunks 0, 1 at bits 0..1 (and of chunks 2, 3 at bits 4..5) of each half. */
static float infer__dot_q6_k_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30), pat = infer__load512(infer__sub4_lanes);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__load128(b->scales);
        const __m512i s16 = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(sc));
        __m512i acc = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            const __m512i l = infer__load512(b->ql + 64 * h);
            const __m256i qh = infer__load256(b->qh + 32 * h);
            const __m512i qh2 = infer__cat512(qh, _mm256_srli_epi16(qh, 2));
            const __m512i c01 = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(qh2, 4), m30));
            const __m512i c23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(qh2, m30));
            const __m512i p01 = _mm512_maddubs_epi16(c01, infer__load512(a->qs + 128 * h));
            const __m512i p23 = _mm512_maddubs_epi16(c23, infer__load512(a->qs + 128 * h + 64));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, infer__scales512(s16, pat, 8 * h)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, infer__scales512(s16, pat, 8 * h + 4)));
        }
        const int isum = _mm512_reduce_add_epi32(acc) - 32 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* Q2_K / Q3_K: per half, q2 = [qs | qs >> 2]: crumbs of chunks 0, 1 at bits 0..1 and of
 * chunks 2, 3 at bits 4..5. Q3_K's hmask likewise: hm2 = [hm | hm >> 1], bits 4h and
 * 4h+2 of each half. */
static float infer__dot_q2_k_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i m3 = _mm512_set1_epi8(3), pat = infer__load512(infer__sub4_lanes);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sm = infer__load128(b->scales), m4 = _mm_set1_epi8(15);
        const __m128i sc = _mm_and_si128(sm, m4), mn = _mm_and_si128(_mm_srli_epi16(sm, 4), m4);
        const __m512i s16 = _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(sc));
        __m512i acc = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            const __m256i q = infer__load256(b->qs + 32 * h);
            const __m512i q2 = infer__cat512(q, _mm256_srli_epi16(q, 2));
            const __m512i p01 = _mm512_maddubs_epi16(_mm512_and_si512(q2, m3), infer__load512(a->qs + 128 * h));
            const __m512i p23 = _mm512_maddubs_epi16(_mm512_and_si512(_mm512_srli_epi16(q2, 4), m3), infer__load512(a->qs + 128 * h + 64));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, infer__scales512(s16, pat, 8 * h)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, infer__scales512(s16, pat, 8 * h + 4)));
        }
        const int isum = _mm512_reduce_add_epi32(acc), msum = infer__bsums_dot256(a->bsums, mn);
        sum += a->d * (infer__h2f(b->d) * (float)isum - infer__h2f(b->dmin) * (float)msum);
    }
    return sum;
}

static float infer__dot_q3_k_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i m3 = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1), pat = infer__load512(infer__sub4_lanes);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        const __m128i sc = infer__q3k_scales128(b);
        const __m512i s16 = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(sc));
        const __m256i hm = infer__load256(b->hmask);
        __m512i hm2 = infer__cat512(hm, _mm256_srli_epi16(hm, 1)), acc = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            const __m256i q = infer__load256(b->qs + 32 * h);
            const __m512i q2 = infer__cat512(q, _mm256_srli_epi16(q, 2));
            const __m512i h01 = _mm512_slli_epi16(_mm512_and_si512(hm2, one), 2);
            const __m512i h23 = _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(hm2, 2), one), 2);
            hm2 = _mm512_srli_epi16(hm2, 4);
            const __m512i c01 = _mm512_or_si512(_mm512_and_si512(q2, m3), h01);
            const __m512i c23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q2, 4), m3), h23);
            const __m512i p01 = _mm512_maddubs_epi16(c01, infer__load512(a->qs + 128 * h));
            const __m512i p23 = _mm512_maddubs_epi16(c23, infer__load512(a->qs + 128 * h + 64));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p01, infer__scales512(s16, pat, 8 * h)));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(p23, infer__scales512(s16, pat, 8 * h + 4)));
        }
        const int isum = _mm512_reduce_add_epi32(acc) - 4 * infer__bsums_dot256(a->bsums, sc);
        sum += infer__h2f(b->d) * a->d * (float)isum;
    }
    return sum;
}

/* TQ1_0: the AVX2 digit extraction on 64 bytes at a time; the top trit from two unsigned
 * compares into masks: t = [q >= 86] + [q >= 171]. */
static inline __m512i infer__mul_u8_512(__m512i v, __m512i m) {
    const __m512i lo = _mm512_mullo_epi16(v, _mm512_and_si512(m, _mm512_set1_epi16(0x00FF)));
    const __m512i hi = _mm512_mullo_epi16(_mm512_and_si512(v, _mm512_set1_epi16((short)0xFF00)), _mm512_srli_epi16(m, 8));
    return _mm512_mask_blend_epi8(0xAAAAAAAAAAAAAAAAull, lo, hi);
}
static inline __m512i infer__top_trit512(__m512i q) {
    const __m512i one = _mm512_set1_epi8(1);
    const __m512i t = _mm512_maskz_mov_epi8(_mm512_cmpge_epu8_mask(q, _mm512_set1_epi8(86)), one);
    return _mm512_mask_add_epi8(t, _mm512_cmpge_epu8_mask(q, _mm512_set1_epi8((char)171)), t, one);
}
static float infer__dot_tq1_0_avx512(int64_t n, const void *w, const void *x) {
    const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const __m512i p[4] = {   /* multipliers per 128-bit lane of the four vectors below */
        _mm512_setr_epi32(0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x01010101,
                          0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303, 0x03030303),
        _mm512_setr_epi32(0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x09090909,
                          0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b),
        _mm512_setr_epi32(0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x51515151,
                          0x01010101, 0x01010101, 0x01010101, 0x01010101, 0x03030303, 0x03030303, 0x03030303, 0x03030303),
        _mm512_setr_epi32(0x09090909, 0x09090909, 0x09090909, 0x09090909, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b, 0x1b1b1b1b,
                          0x51515151, 0x51515151, 0x51515151, 0x51515151, 0x01010101, 0x03030303, 0x09090909, 0x1b1b1b1b),
    };
    float s = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++) {
        /* bytes: [qs0..31 | qs0..31], [same], [qs0..31 | qs32..47 x2], [qs32..47 x2 | qs32..47 | qh x4] */
        const __m256i q0 = infer__load256(b[i].qs);
        const __m128i q1 = infer__load128(b[i].qs + 32);
        uint32_t qh; memcpy(&qh, b[i].qh, 4);
        const __m256i q11 = _mm256_broadcastsi128_si256(q1);
        const __m512i v[4] = { infer__cat512(q0, q0), infer__cat512(q0, q0), infer__cat512(q0, q11),
                               infer__cat512(q11, _mm256_set_m128i(_mm_set1_epi32((int)qh), q1)) };
        __m512i acc = _mm512_setzero_si512();
        for (int k = 0; k < 4; k++)
            acc = infer__dpbusd512(acc, infer__top_trit512(infer__mul_u8_512(v[k], p[k])), infer__load512(a[i].qs + 64 * k));
        const int sumi = _mm512_reduce_add_epi32(acc) - infer__bsums_total256(a[i].bsums);
        s += (float)sumi * (infer__h2f(b[i].d) * a[i].d);
    }
    return s;
}

static infer__dot_fn infer__simd_dot_avx512(infer_type t) {
    switch (t) {
    case INFER_TYPE_F32:    return infer__dot_f32_avx512;
    case INFER_TYPE_F16:    return infer__dot_f16_avx512;
    case INFER_TYPE_BF16:   return infer__dot_bf16_avx512;
    case INFER_TYPE_Q5_1:   return infer__dot_q5_1_avx512;
    case INFER_TYPE_NVFP4:  return infer__dot_nvfp4_avx512;
    case INFER_TYPE_Q2_K:   return infer__dot_q2_k_avx512;
    case INFER_TYPE_Q3_K:   return infer__dot_q3_k_avx512;
    case INFER_TYPE_Q6_K:   return infer__dot_q6_k_avx512;
    case INFER_TYPE_TQ1_0:  return infer__dot_tq1_0_avx512;
    default:                return NULL;
    }
}
#endif /* INFER__SIMD_AVX512 */

#ifdef INFER__SIMD_NEON
/* ===================================================================================
 * AArch64 NEON kernels. NEON multiplies signed bytes by signed bytes directly, so none
 * of the x86 sign tricks are needed: with the dot-product extension sdot adds four
 * s8*s8 products into each int32 lane; without it, widening multiplies give int16
 * products (|p| <= 128*128, no overflow) and pairwise add-accumulate widens them.
 * The 256-element kernels take one horizontal sum per sub-block: plain, and exact.
 * =================================================================================== */

/* acc + sums of s8*s8 products of 16 bytes, spread over 4 int32 lanes */
static inline int32x4_t infer__sdot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
#ifdef __ARM_FEATURE_DOTPROD
    return vdotq_s32(acc, a, b);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}
/* 32 signed codes (two vectors) times 32 activation bytes */
static inline int32x4_t infer__sdot32(int8x16_t a0, int8x16_t a1, const int8_t *y) {
    return infer__sdot16(infer__sdot16(vdupq_n_s32(0), a0, vld1q_s8(y)), a1, vld1q_s8(y + 16));
}

static inline float32x4_t infer__f16x4(const infer_half *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
static inline float32x4_t infer__bf16x4(const infer_bf16 *p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }

static float infer__dot_f32_neon(int64_t n, const void *w, const void *x) {
    const float *a = (const float *)w, *b = (const float *)x;
    float32x4_t acc[4] = { vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0) };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; k++) acc[k] = vfmaq_f32(acc[k], vld1q_f32(a + i + 4 * k), vld1q_f32(b + i + 4 * k));
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], vld1q_f32(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

static float infer__dot_f16_neon(int64_t n, const void *w, const void *x) {
    const infer_half *a = (const infer_half *)w; const float *b = (const float *)x;
    float32x4_t acc[4] = { vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0) };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; k++) acc[k] = vfmaq_f32(acc[k], infer__f16x4(a + i + 4 * k), vld1q_f32(b + i + 4 * k));
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], infer__f16x4(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; i++) s += infer__fp16_to_fp32(a[i]) * b[i];
    return s;
}

static float infer__dot_bf16_neon(int64_t n, const void *w, const void *x) {
    const infer_bf16 *a = (const infer_bf16 *)w; const float *b = (const float *)x;
    float32x4_t acc[4] = { vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0) };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; k++) acc[k] = vfmaq_f32(acc[k], infer__bf16x4(a + i + 4 * k), vld1q_f32(b + i + 4 * k));
    for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], infer__bf16x4(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; i++) s += infer__bf16_to_fp32(a[i]) * b[i];
    return s;
}

static float infer__dot_q8_0_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q8_0 *a = (const infer_block_q8_0 *)w, *y = (const infer_block_q8_0 *)x;
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t i = 0; i < n / INFER_QK8_0; i++) {
        const int32x4_t s = infer__sdot32(vld1q_s8(a[i].qs), vld1q_s8(a[i].qs + 16), y[i].qs);
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return vaddvq_f32(acc);
}

/* Q4_0: nibbles (and / shift right by 4: NEON has byte shifts) minus 8 are signed codes. */
static float infer__dot_q4_0_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q4_0 *a = (const infer_block_q4_0 *)w;
    const infer_block_q8_0 *y = (const infer_block_q8_0 *)x;
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t i = 0; i < n / INFER_QK4_0; i++) {
        const uint8x16_t q = vld1q_u8(a[i].qs);
        const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(15))), vdupq_n_s8(8));
        const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), vdupq_n_s8(8));
        const int32x4_t s = infer__sdot32(lo, hi, y[i].qs);
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(s), infer__fp16_to_fp32(a[i].d) * infer__fp16_to_fp32(y[i].d));
    }
    return vaddvq_f32(acc);
}

/* Q4_K: per 64-element group, low nibbles of 32 bytes = sub-block 2g, high = 2g+1. */
static float infer__dot_q4_k_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    const uint8x16_t m4 = vdupq_n_u8(15);
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0, msum = 0;
        for (int g = 0; g < 4; g++) {
            const uint8x16_t q0 = vld1q_u8(b->qs + 32 * g), q1 = vld1q_u8(b->qs + 32 * g + 16);
            const int32x4_t lo = infer__sdot32(vreinterpretq_s8_u8(vandq_u8(q0, m4)), vreinterpretq_s8_u8(vandq_u8(q1, m4)), a->qs + 64 * g);
            const int32x4_t hi = infer__sdot32(vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), vreinterpretq_s8_u8(vshrq_n_u8(q1, 4)), a->qs + 64 * g + 32);
            int sc0, m0, sc1, m1;
            infer__k4_scale_min(b->scales, 2 * g, &sc0, &m0);
            infer__k4_scale_min(b->scales, 2 * g + 1, &sc1, &m1);
            isum += sc0 * vaddvq_s32(lo) + sc1 * vaddvq_s32(hi);
            msum += m0 * (a->bsums[4 * g] + a->bsums[4 * g + 1]) + m1 * (a->bsums[4 * g + 2] + a->bsums[4 * g + 3]);
        }
        sum += a->d * (infer__fp16_to_fp32(b->d) * (float)isum - infer__fp16_to_fp32(b->dmin) * (float)msum);
    }
    return sum;
}

/* Q6_K: chunk k of half h, 16 bytes at a time (m = 0, 1): nibble k>>1 of ql(k&1) with
 * bits 2k..2k+1 of qh as bits 4..5, minus 32: signed codes of sub-block 8h + 2k + m. */
static float infer__dot_q6_k_neon(int64_t n, const void *w, const void *x) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)w;
    const infer_block_q8_k *a = (const infer_block_q8_k *)x;
    float sum = 0;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, b++, a++) {
        int isum = 0;
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++)
                for (int m = 0; m < 2; m++) {
                    const uint8x16_t l = vld1q_u8(b->ql + 64 * h + 32 * (k & 1) + 16 * m);
                    const uint8x16_t hb = vld1q_u8(b->qh + 32 * h + 16 * m);
                    const uint8x16_t lo4 = k >> 1 ? vshrq_n_u8(l, 4) : vandq_u8(l, vdupq_n_u8(15));
                    const uint8x16_t hi2 = vandq_u8(vshlq_u8(hb, vdupq_n_s8((int8_t)(4 - 2 * k))), vdupq_n_u8(0x30));
                    const int8x16_t c = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo4, hi2)), vdupq_n_s8(32));
                    const int32x4_t s = infer__sdot16(vdupq_n_s32(0), c, vld1q_s8(a->qs + 128 * h + 32 * k + 16 * m));
                    isum += b->scales[8 * h + 2 * k + m] * vaddvq_s32(s);
                }
        sum += infer__fp16_to_fp32(b->d) * a->d * (float)isum;
    }
    return sum;
}

static infer__dot_fn infer__simd_dot_neon(infer_type t) {
    switch (t) {
    case INFER_TYPE_F32:  return infer__dot_f32_neon;
    case INFER_TYPE_F16:  return infer__dot_f16_neon;
    case INFER_TYPE_BF16: return infer__dot_bf16_neon;
    case INFER_TYPE_Q8_0: return infer__dot_q8_0_neon;
    case INFER_TYPE_Q4_0: return infer__dot_q4_0_neon;
    case INFER_TYPE_Q4_K: return infer__dot_q4_k_neon;
    case INFER_TYPE_Q6_K: return infer__dot_q6_k_neon;
    default:              return NULL;
    }
}
#endif /* INFER__SIMD_NEON */

/* ===================================================================================
 * Dispatch. Each tier is a lookup by type; infer__simd_tiers lists the tiers compiled
 * into this build, best first (the tests check every tier against the scalar dots).
 * =================================================================================== */
#define INFER__HAVE_SIMD_TIERS 1
typedef infer__dot_fn (*infer__simd_tier_fn)(infer_type t);
typedef struct { const char *name; infer__simd_tier_fn lookup; } infer__simd_tier;
static const infer__simd_tier infer__simd_tiers[] = {
#ifdef INFER__SIMD_AVX512
    { "avx512", infer__simd_dot_avx512 },
#endif
#ifdef INFER__SIMD_AVX2
    { "avx2", infer__simd_dot_avx2 },
#endif
#ifdef INFER__SIMD_NEON
    { "neon", infer__simd_dot_neon },
#endif
    { NULL, NULL }
};

static infer__dot_fn infer__simd_dot(infer_type t) {
    for (const infer__simd_tier *k = infer__simd_tiers; k->name; k++) {
        infer__dot_fn f = k->lookup(t);
        if (f) return f;
    }
    return NULL;
}
#else
static infer__dot_fn infer__simd_dot(infer_type t) { (void)t; return NULL; }
#endif
static infer__dot_fn infer__type_dot(infer_type t) {
    infer__dot_fn f = infer__ternary_dot(t);   /* TQ1_0, TQ2_0 (and I2_S): >>ternary */
    if (!f) f = infer__simd_dot(t);
    return f ? f : infer__traits[t].dot;
}

/* ------------------------------------------------------------------------------------------
 * >>tiles -- matrix-matrix tiles for the CPU matmul.
 *
 * What: out[c, r] = W[r] . x[c] for a tile of nr weight rows and nc activation rows (tokens).
 * Why: a dot product reads its weight row once per token; a tile reads (and unpacks) each
 * weight block once for all nc tokens and each activation block once for all nr rows, so a
 * prompt runs as matrix-matrix work at the speed of the multiply units, while decode
 * (nc = 1) streams the weights once with nr independent accumulators in flight.
 *
 * The reference tile is one dot product per output with the type's dot (scalar or >>simd),
 * and any type without a fast tile uses it. Fast tiles (x86 AVX-512), each tested against
 * the reference in make test:
 *   F32 F16 BF16   lanes along k: acc[r][c] += W[r, k..k+15] * x[c, k..k+15] (weights widened
 *                  to f32 once per 16 for all nc tokens), one horizontal sum at the end;
 *                  tiles of up to 6 rows x 4 tokens
 *   Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS TQ2_0
 *                  int8 dot products (vpdpbusd) against activations quantized to Q8_K and
 *                  stored transposed in 64-byte aligned groups ("XK", below), so that each
 *                  int32 lane sums one 16-value piece of a sub-block and the sub-block
 *                  scales and mins are applied per lane in float, once per block; tiles of
 *                  up to 2 rows x 4 tokens
 *   Q4_0 Q8_0      int8 dot products against activations quantized to Q8_0 and laid out in
 *                  groups of 4 blocks ("X4", below) so a block's codes line up with a
 *                  weight group unpacked by one byte permute (AVX512-VBMI) and multiplied
 *                  by vpdpbusd (AVX512-VNNI)
 * Every output is computed by the same sequence of operations whatever the tile shape, the
 * position of the tile, or the thread that runs it: results do not depend on the thread
 * count or the batch size. A single token (decode) goes through the type's row kernel
 * (`mv`), which gives the 1 x 1 tile's bits: a token decoded alone must equal the same token
 * decoded beside other sequences (>>kv). The row kernels stream the weights in address
 * order with a software prefetch ahead; decode is bound by memory bandwidth, so what
 * matters there is few vector operations per byte (each type's unpack says its count).
 * ---------------------------------------------------------------------------------------- */
typedef void (*infer__tile_fn)(int64_t K, const uint8_t *w, size_t w_stride, int nr,
                               const uint8_t *x, size_t x_stride, int nc, float *out, size_t ldo);
/* one token against n consecutive weight rows: out[i] = W[i] . x, the same bits as the
 * type's 1 x 1 tile */
typedef void (*infer__mv_fn)(int64_t K, const uint8_t *w, size_t w_stride, int64_t n, const uint8_t *x, float *out);
/* how a tile wants its activations: as the type's dot takes them, or in a tile layout */
enum { INFER__XLAY_DOT = 0, INFER__XLAY_X4 = 1, INFER__XLAY_XK = 2, INFER__XLAY_XE = 3 };
typedef struct infer__tile {
    infer__tile_fn fn;
    int xlay;        /* INFER__XLAY_*: the activation layout */
    int rows, cols;  /* the tile shape the kernel is built for (it takes any smaller one) */
    infer__mv_fn mv; /* a single token through this, where there is one (same bits as fn) */
} infer__tile;

/* X4: activations for the 32-block integer tiles. A row of K values is quantized to Q8_0
 * blocks exactly as infer__quant_q8_0 does (so the integer sums are those of the scalar
 * dot), then every 4 blocks (128 values) are stored as one 176-byte group:
 *
 *   byte 0         64               128                     160             176
 *        | ylo[64]        | yhi[64]        | nls[16] int16         | dy[4] f32     |
 *   int32 lane i = 4j + b of a vector holds block b's codes (the 4 blocks interleaved):
 *   ylo bytes 4i..4i+3 = q_b[4j..4j+3],  yhi bytes 4i..4i+3 = q_b[16+4j..16+4j+3]
 *   nls[i] = -(q_b[4j] + .. + q_b[4j+3] + q_b[16+4j] + .. + q_b[16+4j+3])
 *            (minus the sum of the 8 codes that lane i of a dot sums over)
 *   dy[b]  = d_b, block b's scale: loaded as [d0 d1 d2 d3] x 4, lane i gets d_(i mod 4)
 * nls serves the code offsets: Q4_0 weights arrive as q+8 and Q8_0's are made unsigned by
 * +128 (vpdpbusd multiplies unsigned by signed bytes), so a lane's integer sum starts at
 * offset * nls (a shift of nls) and is then exact. A last, partial group is padded with
 * zero blocks. Every line a decode streams past is one the next group reads (176 of 176
 * bytes; in a 320-byte layout with the scales and offsets as 16 floats each, a 8192-wide
 * row no longer fit the L1 cache beside the streamed weights: 25 vs 32 GB/s, measured). */
#define INFER__X4_GROUP 176
static size_t infer__x4_row_bytes(int64_t K) { return (size_t)((K + 127) / 128) * INFER__X4_GROUP; }

/* ---- activation quantizers ----
 * A matmul quantizes its activations once per call: for a prompt, [tokens, K] values per
 * matmul. The scalar quantizers (quant_a.h) call roundf per value; the AVX-512 twins below
 * give the same bytes (tested bit for bit): max|x| is exact in any order, x * id is one
 * IEEE multiply either way, and the rounding is rebuilt exactly:
 *   roundf (ties away from 0):  t = trunc(v); t += sign(v) where |v - t| >= 0.5
 *                               (v - t is exact: |v| < 2^23 here)
 *   nearest_int (ties to even): the default rounding of vcvtps2dq. */
static void infer__quant_q8_0_fast(const float *x, void *vy, int64_t n) {
#if defined(INFER__SIMD_AVX512)
    infer_block_q8_0 *y = (infer_block_q8_0 *)vy;
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < n / INFER_QK8_0; i++) {
        const __m512 a = _mm512_loadu_ps(x + 32 * i), b = _mm512_loadu_ps(x + 32 * i + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a), _mm512_abs_ps(b)));
        const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        y[i].d = infer__fp32_to_fp16(d);
        for (int h = 0; h < 2; h++) {
            const __m512 v = _mm512_mul_ps(h ? b : a, _mm512_set1_ps(id));
            __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __mmask16 up = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(v, t)), half, _CMP_GE_OQ);
            t = _mm512_mask_add_ps(t, up, t, _mm512_or_ps(one, _mm512_and_ps(v, _mm512_set1_ps(-0.0f))));
            _mm_storeu_si128((__m128i *)(y[i].qs + 16 * h), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t)));
        }
    }
#else
    infer__quant_q8_0(x, vy, n);
#endif
}

static void infer__quant_q8_k_fast(const float *x, void *vy, int64_t n) {
#if defined(INFER__SIMD_AVX512)
    infer_block_q8_k *y = (infer_block_q8_k *)vy;
    for (int64_t i = 0; i < n / INFER_QK_K; i++, x += INFER_QK_K) {
        __m512 m = _mm512_setzero_ps();
        for (int j = 0; j < INFER_QK_K; j += 16) m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(x + j)));
        const float amax = _mm512_reduce_max_ps(m);
        if (amax == 0) { memset(&y[i], 0, sizeof y[i]); continue; }
        int first = 0;                          /* the first value of largest magnitude, with its sign */
        while (fabsf(x[first]) != amax) first++;
        const float iscale = -127.f / x[first];
        for (int j = 0; j < INFER_QK_K; j += 16) {
            const __m512i v = _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_set1_ps(iscale), _mm512_loadu_ps(x + j))), _mm512_set1_epi32(127));
            const __m128i q = _mm512_cvtepi32_epi8(v);
            _mm_storeu_si128((__m128i *)(y[i].qs + j), q);
            y[i].bsums[j / 16] = (int16_t)_mm512_reduce_add_epi32(v);
        }
        y[i].d = 1 / iscale;
    }
#else
    infer__quant_q8_k(x, vy, n);
#endif
}

/* The activation quantizer of a dot type, fast where there is one. */
static infer__quant_fn infer__act_quant(infer_type dt) {
    if (dt == INFER_TYPE_Q8_0) return infer__quant_q8_0_fast;
    if (dt == INFER_TYPE_Q8_K) return infer__quant_q8_k_fast;
    return infer__type(dt)->quant;
}

/* X4 groups g0..g1-1 of a row of K values (a partial last group is zero-padded) */
static void infer__x4_quant_groups(const float *x, int64_t K, uint8_t *dst, int64_t g0, int64_t g1) {
    const int64_t nb = K / INFER_QK8_0;
    for (int64_t g = g0; g < g1; g++) {
        uint8_t *gp = dst + (size_t)g * INFER__X4_GROUP;
        memset(gp, 0, INFER__X4_GROUP);
        for (int b = 0; b < 4 && 4 * g + b < nb; b++) {
            infer_block_q8_0 q;
            infer__quant_q8_0_fast(x + (4 * g + b) * INFER_QK8_0, &q, INFER_QK8_0);
            const float d = infer__fp16_to_fp32(q.d);
            memcpy(gp + 160 + 4 * b, &d, 4);
            for (int j = 0; j < 4; j++) {           /* lane 4j + b */
                const int lane = 4 * j + b;
                memcpy(gp + 4 * lane, q.qs + 4 * j, 4);
                memcpy(gp + 64 + 4 * lane, q.qs + 16 + 4 * j, 4);
                int16_t nls = 0;
                for (int i = 0; i < 4; i++) nls = (int16_t)(nls - q.qs[4 * j + i] - q.qs[16 + 4 * j + i]);
                memcpy(gp + 128 + 2 * lane, &nls, 2);
            }
        }
    }
}
static inline void infer__x4_quant_row(const float *x, int64_t K, uint8_t *dst) { infer__x4_quant_groups(x, K, dst, 0, (K + 127) / 128); }

/* the reference: one dot per output (the fast-path dot of the type) */
static void infer__tile_ref(infer__dot_fn dot, int64_t K, const uint8_t *w, size_t ws, int nr,
                            const uint8_t *x, size_t xs, int nc, float *out, size_t ldo) {
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < nr; r++) out[(size_t)c * ldo + r] = dot(K, w + (size_t)r * ws, x + (size_t)c * xs);
}

/* The tiles below are loops over constant trip counts (NR rows, NC tokens) around vector
 * code; they must be unrolled completely so the accumulators live in registers. */
#if defined(__GNUC__) || defined(__clang__)
#define INFER__UNROLL _Pragma("GCC unroll 16")
#else
#define INFER__UNROLL
#endif

#if defined(INFER__SIMD_AVX512)
/* ---- float weights: F32, F16, BF16 against f32 activations ----
 * Per 16 values of k: nr weight vectors widened to f32, then nr*nc FMAs. A tile of 4 x 4
 * keeps 16 accumulators + 4 weight vectors in the 32 registers. The k tail uses masked
 * loads (masked-off lanes read as zero and never touch memory past the row). */
static inline __m512 infer__wvec_f32(const uint8_t *w, int64_t k, __mmask16 m) { return _mm512_maskz_loadu_ps(m, (const float *)w + k); }
static inline __m512 infer__wvec_f16(const uint8_t *w, int64_t k, __mmask16 m) { return infer__f16x16((const infer_half *)w + k, m); }
static inline __m512 infer__wvec_bf16(const uint8_t *w, int64_t k, __mmask16 m) { return infer__bf16x16((const infer_bf16 *)w + k, m); }

/* one k-step of 16: widen the nr weight vectors (and prefetch the next tile's rows, once per
 * 64-byte line), then nr x nc FMAs */
#define INFER__FTILE_STEP(WVEC, ESZ, NR, NC, m)                                                         \
    {   __m512 wv[NR];                                                                                \
        INFER__UNROLL for (int r = 0; r < NR; r++) {                                                  \
            wv[r] = WVEC(w + (size_t)r * ws, k, m);                                                   \
            if (((k * ESZ) & 63) == 0) _mm_prefetch((const char *)(w + (size_t)(r + NR) * ws) + ESZ * k, _MM_HINT_T0); \
        }                                                                                             \
        INFER__UNROLL for (int c = 0; c < NC; c++) {                                                  \
            const __m512 xv = _mm512_maskz_loadu_ps(m, (const float *)(x + (size_t)c * xs) + k);      \
            INFER__UNROLL for (int r = 0; r < NR; r++) acc[r][c] = _mm512_fmadd_ps(wv[r], xv, acc[r][c]); \
        }                                                                                             \
    }
#define INFER__FTILE(NAME, WVEC, ESZ, NR, NC)                                                             \
static void NAME(int64_t K, const uint8_t *w, size_t ws, const uint8_t *x, size_t xs, float *out, size_t ldo) { \
    __m512 acc[NR][NC];                                                                               \
    INFER__UNROLL for (int r = 0; r < NR; r++) INFER__UNROLL for (int c = 0; c < NC; c++) acc[r][c] = _mm512_setzero_ps(); \
    int64_t k = 0;                                                                                    \
    for (; k + 16 <= K; k += 16) INFER__FTILE_STEP(WVEC, ESZ, NR, NC, (__mmask16)0xFFFF)              \
    if (k < K) { const __mmask16 m = infer__tail_mask(K - k); INFER__FTILE_STEP(WVEC, ESZ, NR, NC, m) } \
    INFER__UNROLL for (int c = 0; c < NC; c++) INFER__UNROLL for (int r = 0; r < NR; r++) out[(size_t)c * ldo + r] = _mm512_reduce_add_ps(acc[r][c]); \
}
/* every (nr, nc) up to 6 x 4 as its own unrolled function, picked by a table. 6 x 4 keeps
 * 24 accumulators + 6 weight vectors + 1 activation vector in the 32 registers; measured
 * in a prompt-shaped run it is 1.3-1.45x faster than 4 x 4 (x is re-read for every row
 * tile, from L2 or L3: 6 rows read it 1.5x less often), 8 x 3 runs out of registers. */
#define INFER__FTILE_ROW(T, WVEC, ESZ, NR)                                                               \
    INFER__FTILE(infer__ftile_##T##_##NR##_1, WVEC, ESZ, NR, 1) INFER__FTILE(infer__ftile_##T##_##NR##_2, WVEC, ESZ, NR, 2) \
    INFER__FTILE(infer__ftile_##T##_##NR##_3, WVEC, ESZ, NR, 3) INFER__FTILE(infer__ftile_##T##_##NR##_4, WVEC, ESZ, NR, 4)
#define INFER__FTILE_TAB(T, NR) { infer__ftile_##T##_##NR##_1, infer__ftile_##T##_##NR##_2, infer__ftile_##T##_##NR##_3, infer__ftile_##T##_##NR##_4 }
#define INFER__FTILES(T, WVEC, ESZ)                                                                       \
    INFER__FTILE_ROW(T, WVEC, ESZ, 1) INFER__FTILE_ROW(T, WVEC, ESZ, 2) INFER__FTILE_ROW(T, WVEC, ESZ, 3) \
    INFER__FTILE_ROW(T, WVEC, ESZ, 4) INFER__FTILE_ROW(T, WVEC, ESZ, 5) INFER__FTILE_ROW(T, WVEC, ESZ, 6) \
    static void infer__ftile_##T(int64_t K, const uint8_t *w, size_t ws, int nr, const uint8_t *x, size_t xs, int nc, float *out, size_t ldo) { \
        typedef void (*f)(int64_t, const uint8_t *, size_t, const uint8_t *, size_t, float *, size_t);  \
        static const f tab[6][4] = { INFER__FTILE_TAB(T, 1), INFER__FTILE_TAB(T, 2), INFER__FTILE_TAB(T, 3), \
                                     INFER__FTILE_TAB(T, 4), INFER__FTILE_TAB(T, 5), INFER__FTILE_TAB(T, 6) }; \
        tab[nr - 1][nc - 1](K, w, ws, x, xs, out, ldo);                                               \
    }
INFER__FTILES(f32, infer__wvec_f32, 4)
INFER__FTILES(f16, infer__wvec_f16, 2)
INFER__FTILES(bf16, infer__wvec_bf16, 2)

/* The decode row kernels (`mv`) of every type: one token against n consecutive weight rows,
 * each row computed exactly as the type's 1 x 1 tile computes it (the same bits), taken
 * INFER__MV_ROWS rows side by side: as many streams in flight for the memory system and, for
 * the float types, as many FMA chains (one chain retires an FMA per 4 cycles: 32 bytes of
 * F16 weights, less than a core streams). Each row's weights are prefetched a fixed distance
 * ahead; past the row's end the prefetch goes to the same place in the row that follows the
 * group, so no prefetch is spent on a line the group already reads. Measured from memory on
 * one core against one row at a time: F16 11.4 -> 15.3 GB/s, Q8_0 10.6-10.8 -> 12.8-12.9,
 * Q4_0, Q4_K, Q6_K +0-10%; side by side without that redirection it was 10-20% slower. */
#ifndef INFER__MV_ROWS
#define INFER__MV_ROWS 4
#endif

/* F32 F16 BF16: prefetch 1 KiB ahead (512 B 14.5-14.8 GB/s, 1 KiB 15.3, 2 KiB 14.6, 4 KiB
 * 14.4-14.9: F16, one core) */
#ifndef INFER__FMV_AHEAD
#define INFER__FMV_AHEAD 1024
#endif
#define INFER__FMV_GROUP(WVEC, ESZ, NR)                                                                   \
    {   __m512 acc[NR];                                                                               \
        INFER__UNROLL for (int r = 0; r < NR; r++) acc[r] = _mm512_setzero_ps();                       \
        int64_t k = 0;                                                                                \
        for (; k + 16 <= K; k += 16) {                                                                \
            const __m512 xv = _mm512_loadu_ps((const float *)x + k);                                  \
            const int line = ((k * ESZ) & 63) == 0;                                                   \
            const size_t ahead = (size_t)(ESZ * k) + INFER__FMV_AHEAD, skip = ahead >= rb ? (size_t)(NR - 1) * ws : 0; \
            INFER__UNROLL for (int r = 0; r < NR; r++) {                                              \
                if (line) _mm_prefetch((const char *)(w + (size_t)r * ws + ahead + skip), _MM_HINT_T0); \
                acc[r] = _mm512_fmadd_ps(WVEC(w + (size_t)r * ws, k, (__mmask16)0xFFFF), xv, acc[r]);  \
            }                                                                                         \
        }                                                                                             \
        if (k < K) {                                                                                  \
            const __mmask16 m = infer__tail_mask(K - k);                                              \
            const __m512 xv = _mm512_maskz_loadu_ps(m, (const float *)x + k);                         \
            INFER__UNROLL for (int r = 0; r < NR; r++) acc[r] = _mm512_fmadd_ps(WVEC(w + (size_t)r * ws, k, m), xv, acc[r]); \
        }                                                                                             \
        INFER__UNROLL for (int r = 0; r < NR; r++) out[i + r] = _mm512_reduce_add_ps(acc[r]);         \
    }
#define INFER__FMV(NAME, WVEC, ESZ)                                                                       \
static void NAME(int64_t K, const uint8_t *w, size_t ws, int64_t n, const uint8_t *x, float *out) {   \
    const size_t rb = (size_t)(ESZ * K);                                                              \
    int64_t i = 0;                                                                                    \
    for (; i + INFER__MV_ROWS <= n; i += INFER__MV_ROWS, w += INFER__MV_ROWS * ws) INFER__FMV_GROUP(WVEC, ESZ, INFER__MV_ROWS) \
    for (; i < n; i++, w += ws) INFER__FMV_GROUP(WVEC, ESZ, 1)                                        \
}
INFER__FMV(infer__fmv_f32, infer__wvec_f32, 4)
INFER__FMV(infer__fmv_f16, infer__wvec_f16, 2)
INFER__FMV(infer__fmv_bf16, infer__wvec_bf16, 2)
#endif /* INFER__SIMD_AVX512 */

#if defined(INFER__SIMD_AVX512) && defined(__AVX512VBMI__) && defined(__AVX512VNNI__)
#define INFER__TILE_X4 1
/* ---- Q4_0 and Q8_0 weights against X4 activations ----
 * A weight group is 4 consecutive blocks (Q4_0: 72 bytes, Q8_0: 136). Unpacking it gives
 *   lo, hi  the 64 unsigned codes that line up with ylo and yhi (Q4_0: the low and high
 *           nibbles of the 4 x 16 code bytes; Q8_0: the codes + 128)
 *   dw      the 4 block scales, lane i holding block (i mod 4)'s
 * and then, per token, with the X4 group (ylo, yhi, nls, dy) of that token:
 *   s   = dpbusd(dpbusd(offset * nls, lo, ylo), hi, yhi)     int32 lane i: 8 products, exact
 *   acc = fma(cvt(s) * dy, dw, acc)                             = sum of d_w d_y (q_w . q_y)
 * The byte moves are vpermt2b (two 64-byte sources, one index per output byte) with index
 * tables built below; a partial last group loads only the bytes of its blocks (masked
 * loads), so nothing is read past the row. */
static __m512i infer__x4_idx_q4_0, infer__x4_idx_q4_0_full, infer__x4_idx_q4_0_d; /* built once, see below */
static __m512i infer__x4_idx_q8_0_lo, infer__x4_idx_q8_0_hi, infer__x4_idx_q8_0_d;
static pthread_once_t infer__x4_once = PTHREAD_ONCE_INIT;
static void infer__x4_init(void) {
    uint8_t a[64], b[64], c[64], d[64], e[64], f[64];
    for (int j = 0; j < 64; j++) {
        /* output byte j: int32 lane j/4 = 4 jj + blk, its byte k = j % 4: code i = 4 jj + k */
        const int blk = (j / 4) % 4, i = 4 * (j / 16) + j % 4;
        a[j] = (uint8_t)(18 * blk + 2 + i);           /* Q4_0: code byte i of block blk */
        /* a full Q4_0 group is read as bytes 0..63 and bytes 8..71 (two plain loads) */
        f[j] = (uint8_t)(a[j] < 64 ? a[j] : 64 + a[j] - 8);
        b[j] = (uint8_t)(34 * blk + 2 + i);           /* Q8_0 lo: code i (source: the group's bytes 0..127) */
        c[j] = (uint8_t)(34 * blk + 2 + i);           /* Q8_0 hi: code 16 + i (source: bytes 16..143) */
        /* scales: 16-bit word w (float lane w after the conversion) takes block w mod 4's */
        const int wd = (j / 2) % 4, half = j & 1;
        d[j] = (uint8_t)(j < 32 ? 18 * wd + half : 0);
        e[j] = (uint8_t)(j < 32 ? 34 * wd + half : 0);
    }
    infer__x4_idx_q4_0 = _mm512_loadu_si512(a);
    infer__x4_idx_q4_0_full = _mm512_loadu_si512(f);
    infer__x4_idx_q8_0_lo = _mm512_loadu_si512(b);
    infer__x4_idx_q8_0_hi = _mm512_loadu_si512(c);
    infer__x4_idx_q4_0_d = _mm512_loadu_si512(d);
    infer__x4_idx_q8_0_d = _mm512_loadu_si512(e);
}
static inline __mmask64 infer__bytes_mask(int64_t n) { return n >= 64 ? ~(__mmask64)0 : n <= 0 ? 0 : (((__mmask64)1 << n) - 1); }

/* unpack the group at p holding nb (1..4) blocks (a full group: two plain loads, which
 * measured 1.2x faster than masked ones; a partial one reads only its own bytes) */
static inline void infer__x4_unpack_q4_0(const uint8_t *p, int nb, __m512i *lo, __m512i *hi, __m512 *dw) {
    const int64_t n = 18 * nb;
    __m512i A, q;
    if (nb == 4) {
        A = _mm512_loadu_si512(p);
        q = _mm512_permutex2var_epi8(A, infer__x4_idx_q4_0_full, _mm512_loadu_si512(p + 8));
    } else {
        A = _mm512_maskz_loadu_epi8(infer__bytes_mask(n), p);
        q = _mm512_permutex2var_epi8(A, infer__x4_idx_q4_0, _mm512_maskz_loadu_epi8(infer__bytes_mask(n - 64), p + 64));
    }
    const __m512i m = _mm512_set1_epi8(15);
    *lo = _mm512_and_si512(q, m);
    *hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m);
    *dw = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi8(infer__x4_idx_q4_0_d, A)));
}
static inline void infer__x4_unpack_q8_0(const uint8_t *p, int nb, __m512i *lo, __m512i *hi, __m512 *dw) {
    const int64_t n = 34 * nb;
    const __m512i A = _mm512_maskz_loadu_epi8(infer__bytes_mask(n), p), B = _mm512_maskz_loadu_epi8(infer__bytes_mask(n - 64), p + 64);
    const __m512i C = _mm512_maskz_loadu_epi8(infer__bytes_mask(n - 16), p + 16), D = _mm512_maskz_loadu_epi8(infer__bytes_mask(n - 80), p + 80);
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    *lo = _mm512_xor_si512(_mm512_permutex2var_epi8(A, infer__x4_idx_q8_0_lo, B), flip);
    *hi = _mm512_xor_si512(_mm512_permutex2var_epi8(C, infer__x4_idx_q8_0_hi, D), flip);
    *dw = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi8(A, infer__x4_idx_q8_0_d, B)));
}

/* one (row, token) step on a group; every output of every tile goes through this:
 *   s   = dpbusd(dpbusd(nls << shift, lo, ylo), hi, yhi)   shift 3 (Q4_0: -8 ls) or 7 (Q8_0: -128 ls)
 *   acc = fma(cvt(s) * dy, dw, acc) */
static inline __m512 infer__x4_step(__m512 acc, __m512i lo, __m512i hi, __m512 dw, const uint8_t *g, int shift) {
    __m512i s = _mm512_slli_epi32(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(g + 128))), shift);
    s = _mm512_dpbusd_epi32(s, lo, _mm512_loadu_si512(g));
    s = _mm512_dpbusd_epi32(s, hi, _mm512_loadu_si512(g + 64));
    const __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_broadcast_f32x4(_mm_loadu_ps((const float *)(g + 160))));
    return _mm512_fmadd_ps(t, dw, acc);
}

#define INFER__QTILE_GROUP(UNPACK, GBYTES, SHIFT, NR, NC, n)                                             \
    {   __m512i lo[NR], hi[NR]; __m512 dw[NR];                                                        \
        INFER__UNROLL for (int r = 0; r < NR; r++) {                                                  \
            UNPACK(w + (size_t)r * ws + (size_t)g * GBYTES, n, &lo[r], &hi[r], &dw[r]);               \
            _mm_prefetch((const char *)(w + (size_t)(r + NR) * ws + (size_t)g * GBYTES), _MM_HINT_T0);\
            _mm_prefetch((const char *)(w + (size_t)(r + NR) * ws + (size_t)g * GBYTES) + 64, _MM_HINT_T0);\
        }                                                                                             \
        INFER__UNROLL for (int c = 0; c < NC; c++) {                                                  \
            const uint8_t *xg = x + (size_t)c * xs + (size_t)g * INFER__X4_GROUP;                     \
            INFER__UNROLL for (int r = 0; r < NR; r++) acc[r][c] = infer__x4_step(acc[r][c], lo[r], hi[r], dw[r], xg, SHIFT); \
        }                                                                                             \
    }
#define INFER__QTILE(NAME, UNPACK, GBYTES, SHIFT, NR, NC)                                                 \
static void NAME(int64_t K, const uint8_t *w, size_t ws, const uint8_t *x, size_t xs, float *out, size_t ldo) { \
    const int64_t nb = K / 32;                                                                        \
    __m512 acc[NR][NC];                                                                               \
    INFER__UNROLL for (int r = 0; r < NR; r++) INFER__UNROLL for (int c = 0; c < NC; c++) acc[r][c] = _mm512_setzero_ps(); \
    int64_t g = 0;                                                                                    \
    for (; 4 * g + 4 <= nb; g++) INFER__QTILE_GROUP(UNPACK, GBYTES, SHIFT, NR, NC, 4)                  \
    if (4 * g < nb) { const int n = (int)(nb - 4 * g); INFER__QTILE_GROUP(UNPACK, GBYTES, SHIFT, NR, NC, n) } \
    INFER__UNROLL for (int c = 0; c < NC; c++) INFER__UNROLL for (int r = 0; r < NR; r++) out[(size_t)c * ldo + r] = _mm512_reduce_add_ps(acc[r][c]); \
}
#define INFER__QTILES(T, UNPACK, GBYTES, SHIFT)                                                           \
    INFER__QTILE(infer__qtile_##T##_1_1, UNPACK, GBYTES, SHIFT, 1, 1) INFER__QTILE(infer__qtile_##T##_1_2, UNPACK, GBYTES, SHIFT, 1, 2) \
    INFER__QTILE(infer__qtile_##T##_1_3, UNPACK, GBYTES, SHIFT, 1, 3) INFER__QTILE(infer__qtile_##T##_1_4, UNPACK, GBYTES, SHIFT, 1, 4) \
    INFER__QTILE(infer__qtile_##T##_2_1, UNPACK, GBYTES, SHIFT, 2, 1) INFER__QTILE(infer__qtile_##T##_2_2, UNPACK, GBYTES, SHIFT, 2, 2) \
    INFER__QTILE(infer__qtile_##T##_2_3, UNPACK, GBYTES, SHIFT, 2, 3) INFER__QTILE(infer__qtile_##T##_2_4, UNPACK, GBYTES, SHIFT, 2, 4) \
    INFER__QTILE(infer__qtile_##T##_3_1, UNPACK, GBYTES, SHIFT, 3, 1) INFER__QTILE(infer__qtile_##T##_3_2, UNPACK, GBYTES, SHIFT, 3, 2) \
    INFER__QTILE(infer__qtile_##T##_3_3, UNPACK, GBYTES, SHIFT, 3, 3) INFER__QTILE(infer__qtile_##T##_3_4, UNPACK, GBYTES, SHIFT, 3, 4) \
    INFER__QTILE(infer__qtile_##T##_4_1, UNPACK, GBYTES, SHIFT, 4, 1) INFER__QTILE(infer__qtile_##T##_4_2, UNPACK, GBYTES, SHIFT, 4, 2) \
    INFER__QTILE(infer__qtile_##T##_4_3, UNPACK, GBYTES, SHIFT, 4, 3) INFER__QTILE(infer__qtile_##T##_4_4, UNPACK, GBYTES, SHIFT, 4, 4) \
    static void infer__qtile_##T(int64_t K, const uint8_t *w, size_t ws, int nr, const uint8_t *x, size_t xs, int nc, float *out, size_t ldo) { \
        typedef void (*f)(int64_t, const uint8_t *, size_t, const uint8_t *, size_t, float *, size_t);  \
        static const f tab[4][4] = {                                                                  \
            { infer__qtile_##T##_1_1, infer__qtile_##T##_1_2, infer__qtile_##T##_1_3, infer__qtile_##T##_1_4 }, \
            { infer__qtile_##T##_2_1, infer__qtile_##T##_2_2, infer__qtile_##T##_2_3, infer__qtile_##T##_2_4 }, \
            { infer__qtile_##T##_3_1, infer__qtile_##T##_3_2, infer__qtile_##T##_3_3, infer__qtile_##T##_3_4 }, \
            { infer__qtile_##T##_4_1, infer__qtile_##T##_4_2, infer__qtile_##T##_4_3, infer__qtile_##T##_4_4 } }; \
        pthread_once(&infer__x4_once, infer__x4_init);                                                \
        tab[nr - 1][nc - 1](K, w, ws, x, xs, out, ldo);                                               \
    }
INFER__QTILES(q4_0, infer__x4_unpack_q4_0, 72, 3)     /* Q4_0: codes q + 8, offset 8 = 1 << 3 */

/* One token (decode): the row kernel of the X4 types (see INFER__MV_ROWS), prefetching 2 KiB
 * ahead per row. */
#ifndef INFER__QMV_AHEAD
#define INFER__QMV_AHEAD 2048
#endif
#define INFER__QMV_G(T, UNPACK, GBYTES, SHIFT, NR)                                                       \
    {   __m512 acc[NR];                                                                               \
        INFER__UNROLL for (int r = 0; r < NR; r++) acc[r] = _mm512_setzero_ps();                       \
        int64_t g = 0;                                                                                \
        for (; 4 * g + 4 <= nb; g++) {                                                                \
            const size_t ahead = (size_t)g * GBYTES + INFER__QMV_AHEAD, skip = ahead >= rb ? (size_t)(NR - 1) * ws : 0; \
            INFER__UNROLL for (int r = 0; r < NR; r++) {                                              \
                const uint8_t *p = w + (size_t)r * ws + (size_t)g * GBYTES;                           \
                __m512i lo, hi; __m512 dw;                                                            \
                _mm_prefetch((const char *)(w + (size_t)r * ws + ahead + skip), _MM_HINT_T0);         \
                _mm_prefetch((const char *)(w + (size_t)r * ws + ahead + skip) + 64, _MM_HINT_T0);    \
                if (GBYTES > 128) _mm_prefetch((const char *)(w + (size_t)r * ws + ahead + skip) + 128, _MM_HINT_T0); \
                UNPACK(p, 4, &lo, &hi, &dw);                                                          \
                acc[r] = infer__x4_step(acc[r], lo, hi, dw, x + (size_t)g * INFER__X4_GROUP, SHIFT);  \
            }                                                                                         \
        }                                                                                             \
        if (4 * g < nb)                                                                               \
            INFER__UNROLL for (int r = 0; r < NR; r++) {                                              \
                __m512i lo, hi; __m512 dw;                                                            \
                UNPACK(w + (size_t)r * ws + (size_t)g * GBYTES, (int)(nb - 4 * g), &lo, &hi, &dw);    \
                acc[r] = infer__x4_step(acc[r], lo, hi, dw, x + (size_t)g * INFER__X4_GROUP, SHIFT);  \
            }                                                                                         \
        INFER__UNROLL for (int r = 0; r < NR; r++) out[i + r] = _mm512_reduce_add_ps(acc[r]);         \
    }
#define INFER__QMV(T, UNPACK, GBYTES, SHIFT)                                                              \
static void infer__qmv_##T(int64_t K, const uint8_t *w, size_t ws, int64_t n, const uint8_t *x, float *out) { \
    pthread_once(&infer__x4_once, infer__x4_init);                                                    \
    const int64_t nb = K / 32;                                                                        \
    const size_t rb = ws;                                                                             \
    int64_t i = 0;                                                                                    \
    for (; i + INFER__MV_ROWS <= n; i += INFER__MV_ROWS, w += INFER__MV_ROWS * ws) INFER__QMV_G(T, UNPACK, GBYTES, SHIFT, INFER__MV_ROWS)               \
    for (; i < n; i++, w += ws) INFER__QMV_G(T, UNPACK, GBYTES, SHIFT, 1)                              \
}
INFER__QMV(q4_0, infer__x4_unpack_q4_0, 72, 3)
INFER__QTILES(q8_0, infer__x4_unpack_q8_0, 136, 7)    /* Q8_0: codes q + 128, offset 128 = 1 << 7 */
INFER__QMV(q8_0, infer__x4_unpack_q8_0, 136, 7)
#endif /* X4 tiles */

/* XK: activations for the super-block tiles (Q2_K..Q6_K, IQ4_XS, TQ2_0). Each 256-value block is
 * quantized to Q8_K exactly as infer__quant_q8_k does, then stored as one 320-byte group
 * (64-byte aligned when the row is, so no vector load of it splits a cache line):
 *
 *   byte 0                   256               288     292      320
 *        | y, 4 x 64 bytes     | bsums[16] int16 | d f32 | (pad)  |
 *   vector v (bytes 64v..64v+63), int32 lane L, byte i  =  y[16L + 4v + i]
 * so int32 lane L of the 4 vectors holds the 16 values 16L..16L+15 -- those of bsums[L], of
 * the L-th 16-element sub-block, or of half of the (L/2)-th 32-element one. A weight block
 * unpacked the same way gives, after 4 vpdpbusd, one exact integer per lane and sub-block
 * part, which its scale then multiplies: the weights' scales are applied once per block,
 * not once per 64 codes.
 * XE, the same group with y in element order (vector v = y[64v..64v+63]) and at byte 256
 * the sums of what each int32 lane sees (lane L: y[64v + 4L + i], v, i = 0..3), serves a
 * type with one scale per block (TQ2_0): no lane needs its own scale, so its codes need
 * not be transposed. */
#define INFER__XK_GROUP 320
static size_t infer__xk_row_bytes(int64_t K) { return (size_t)(K / INFER_QK_K) * INFER__XK_GROUP; }
static void infer__xk_quant_blocks(const float *x, uint8_t *dst, int64_t b0, int64_t b1, int xlay) {
    for (int64_t b = b0; b < b1; b++) {
        infer_block_q8_k q;
        infer__quant_q8_k_fast(x + b * INFER_QK_K, &q, INFER_QK_K);
        uint8_t *g = dst + (size_t)b * INFER__XK_GROUP;
        if (xlay == INFER__XLAY_XK) {
            for (int v = 0; v < 4; v++)
                for (int L = 0; L < 16; L++) memcpy(g + 64 * v + 4 * L, q.qs + 16 * L + 4 * v, 4);
            memcpy(g + 256, q.bsums, 32);
        } else {
            memcpy(g, q.qs, 256);
            for (int L = 0; L < 16; L++) {
                int16_t s = 0;
                for (int v = 0; v < 4; v++) for (int i = 0; i < 4; i++) s = (int16_t)(s + q.qs[64 * v + 4 * L + i]);
                memcpy(g + 256 + 2 * L, &s, 2);
            }
        }
        memcpy(g + 288, &q.d, 4);
        memset(g + 292, 0, INFER__XK_GROUP - 292);
    }
}

#if defined(INFER__SIMD_AVX512) && defined(__AVX512VNNI__)
#define INFER__TILE_XK 1
/* ---- super-block weights against XK activations ----
 * A weight block is unpacked once for all tokens of a tile into
 *   q[v]   its 256 codes as unsigned bytes in the XK order (lane L: elements 16L..16L+15)
 *   dsc    per lane, d times the scale of the lane's sub-block          (16 floats)
 *   mn     per lane, dmin times the min of its sub-block (Q2_K Q4_K Q5_K) (16 floats)
 * and then, per token, with its XK group (y, bsums, dy):
 *   s   = dpbusd(dpbusd(dpbusd(dpbusd(s0, q[0], y[0]), q[1], y[1]), q[2], y[2]), q[3], y[3])
 *   acc = fma(cvt(s), dsc * dy, acc)           and for the types with mins:
 *   acc = fnmadd(cvt(bsums) * dy, mn, acc)
 * s0 = -off * bsums removes the offset of codes stored as value + off (TQ2_0 1, Q3_K 4,
 * Q6_K 32, IQ4_XS 128: its levels -127..113 as 1..241) in the integers, so every lane of s is the
 * exact sum of its 16 values' products; zero for the types with mins. The 16 float lanes
 * are added once, at the end of the row. That order is not the scalar dot's (one float sum
 * per block), so a tile differs from it by f32 rounding (tested within 2e-6 of sum |w x|, as
 * the 32-block tiles); every output of every tile shape, and the decode row kernel, run
 * this same sequence: the same bits. A lane's sum stays far inside int32 (16 * 63 * 127
 * for Q6_K codes, plus the offset). */
typedef struct infer__kq_w {
    __m512i q[4];
    __m512 dsc, mn;
} infer__kq_w;

/* From codes in element order (e[u] = elements 64u..64u+63) to the XK order: a 16 x 4
 * transpose of dwords (row L = dwords 4L..4L+3 of the block, column v = vector v): two-source
 * dword permutes gather columns (0, 1) and (2, 3) of rows 0..7 and of rows 8..15, 128-bit
 * lane shuffles join the halves. */
static inline void infer__kq_transpose(const __m512i e[4], __m512i q[4]) {
    const __m512i i01 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i i23 = _mm512_add_epi32(i01, _mm512_set1_epi32(2));
    const __m512i xa = _mm512_permutex2var_epi32(e[0], i01, e[1]), xb = _mm512_permutex2var_epi32(e[0], i23, e[1]);
    const __m512i ya = _mm512_permutex2var_epi32(e[2], i01, e[3]), yb = _mm512_permutex2var_epi32(e[2], i23, e[3]);
    q[0] = _mm512_shuffle_i64x2(xa, ya, _MM_SHUFFLE(1, 0, 1, 0));
    q[1] = _mm512_shuffle_i64x2(xa, ya, _MM_SHUFFLE(3, 2, 3, 2));
    q[2] = _mm512_shuffle_i64x2(xb, yb, _MM_SHUFFLE(1, 0, 1, 0));
    q[3] = _mm512_shuffle_i64x2(xb, yb, _MM_SHUFFLE(3, 2, 3, 2));
}
/* per-lane floats d * s: from 16 signed scales (one per lane), or from 8 (one per two lanes) */
static inline __m512 infer__kq_lanes16(__m128i s8, int is_signed, float d) {
    const __m512i s = is_signed ? _mm512_cvtepi8_epi32(s8) : _mm512_cvtepu8_epi32(s8);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(d));
}
static inline __m512 infer__kq_lanes8(__m128i s8, int is_signed, float d) { return infer__kq_lanes16(_mm_unpacklo_epi8(s8, s8), is_signed, d); }

/* Q2_K / Q3_K crumbs of half h (32 bytes at p, element 128h + 32k + l in bits 2k of byte l),
 * in element order: e0 = elements 128h + 0..63, e1 = 128h + 64..127 */
static inline void infer__kq_crumbs(const uint8_t *p, __m512i *e0, __m512i *e1) {
    const __m256i c = _mm256_loadu_si256((const __m256i *)p);
    const __m512i c2 = _mm512_inserti64x4(_mm512_castsi256_si512(c), _mm256_srli_epi16(c, 2), 1), m3 = _mm512_set1_epi8(3);
    *e0 = _mm512_and_si512(c2, m3);
    *e1 = _mm512_and_si512(_mm512_srli_epi16(c2, 4), m3);
}
/* Q3_K hmask / Q5_K qh (bit j of byte l: element 32j + l): add `add` to the codes (element
 * order) whose bit is set: bit 2u for the first 32 elements of e[u], 2u + 1 for the others */
static inline void infer__kq_hibits(const uint8_t *p, __m512i e[4], int add) {
    const __m256i h = _mm256_loadu_si256((const __m256i *)p);
    const __m512i h2 = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 1), 1), a = _mm512_set1_epi8((char)add);
    INFER__UNROLL for (int u = 0; u < 4; u++) e[u] = _mm512_mask_add_epi8(e[u], _mm512_test_epi8_mask(h2, _mm512_set1_epi8((char)(1 << 2 * u))), e[u], a);
}
/* TQ2_0: Q2_K's crumbs (codes 0..2, value code - 1), one scale: against XE, in element order */
static inline void infer__kq_unpack_tq2_0(const uint8_t *p, infer__kq_w *u) {
    const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)p;
    infer__kq_crumbs(b->qs, &u->q[0], &u->q[1]);
    infer__kq_crumbs(b->qs + 32, &u->q[2], &u->q[3]);
    u->dsc = _mm512_set1_ps(infer__h2f(b->d));
}
/* Q4_K / Q5_K nibbles: 64 code bytes hold elements 128h + l (low nibble of byte l < 32),
 * + 32 + l (high), + 64 + l (low of byte 32 + l), + 96 + l (high) */
static inline void infer__kq_nibbles_k4(const uint8_t *qs, __m512i e[4]) {
    const __m512i f = _mm512_set1_epi8(15);
    INFER__UNROLL for (int h = 0; h < 2; h++) {
        const __m512i a = _mm512_loadu_si512(qs + 64 * h);
        const __m512i lo = _mm512_and_si512(a, f), hi = _mm512_and_si512(_mm512_srli_epi16(a, 4), f);
        e[2 * h] = _mm512_shuffle_i64x2(lo, hi, _MM_SHUFFLE(1, 0, 1, 0));
        e[2 * h + 1] = _mm512_shuffle_i64x2(lo, hi, _MM_SHUFFLE(3, 2, 3, 2));
    }
}

static inline void infer__kq_unpack_q2_k(const uint8_t *p, infer__kq_w *u) {
    const infer_block_q2_k *b = (const infer_block_q2_k *)p;
    __m512i e[4];
    infer__kq_crumbs(b->qs, &e[0], &e[1]);
    infer__kq_crumbs(b->qs + 32, &e[2], &e[3]);
    infer__kq_transpose(e, u->q);
    const __m128i s = _mm_loadu_si128((const __m128i *)b->scales), f = _mm_set1_epi8(15);
    u->dsc = infer__kq_lanes16(_mm_and_si128(s, f), 0, infer__h2f(b->d));
    u->mn = infer__kq_lanes16(_mm_and_si128(_mm_srli_epi16(s, 4), f), 0, infer__h2f(b->dmin));
}
static inline void infer__kq_unpack_q3_k(const uint8_t *p, infer__kq_w *u) {
    const infer_block_q3_k *b = (const infer_block_q3_k *)p;
    __m512i e[4];
    infer__kq_crumbs(b->qs, &e[0], &e[1]);
    infer__kq_crumbs(b->qs + 32, &e[2], &e[3]);
    infer__kq_hibits(b->hmask, e, 4);                                  /* code = crumb + 4 hbit, value code - 4 */
    infer__kq_transpose(e, u->q);
    u->dsc = infer__kq_lanes16(infer__q3k_scales128(b), 1, infer__h2f(b->d));
}
static inline void infer__kq_scales_k4(const void *block, float d, float dmin, infer__kq_w *u) {
    const __m128i k4 = infer__k4_scales128(block);                    /* 8 scales, then 8 mins */
    u->dsc = infer__kq_lanes8(k4, 0, d);
    u->mn = infer__kq_lanes8(_mm_srli_si128(k4, 8), 0, dmin);
}
/* Q4_K straight into the XK order: byte 4L + i of vector v is the code of element
 * e = 16L + 4v + i, the nibble (L/2) % 2 of code byte 32 (L/4) + 16 (L%2) + 4v + i. One
 * two-source byte permute (AVX512-VBMI) per vector gathers those bytes from the 128, a
 * per-lane shift picks the nibble. The scales: the 8 scales and 8 mins widened to 16 floats
 * at once, times [d x 8 | dmin x 8], then spread over the lanes. (Per block 36 vector
 * operations instead of 47: decode of a 1024 x 1024 matrix held in cache, one core, 19.9 ->
 * 23.1 GB/s.) */
#if defined(__AVX512VBMI__)
static inline void infer__kq_unpack_q4_k(const uint8_t *p, infer__kq_w *u) {
    static const uint8_t idx0[64] = { 0, 1, 2, 3, 16, 17, 18, 19, 0, 1, 2, 3, 16, 17, 18, 19, 32, 33, 34, 35, 48, 49, 50, 51, 32, 33, 34, 35,
                                      48, 49, 50, 51, 64, 65, 66, 67, 80, 81, 82, 83, 64, 65, 66, 67, 80, 81, 82, 83, 96, 97, 98, 99,
                                      112, 113, 114, 115, 96, 97, 98, 99, 112, 113, 114, 115 };
    const infer_block_q4_k *b = (const infer_block_q4_k *)p;
    const __m512i A = _mm512_loadu_si512(b->qs), B = _mm512_loadu_si512(b->qs + 64), idx = _mm512_loadu_si512(idx0);
    const __m512i sh = _mm512_setr_epi32(0, 0, 4, 4, 0, 0, 4, 4, 0, 0, 4, 4, 0, 0, 4, 4), f = _mm512_set1_epi8(15);
    INFER__UNROLL for (int v = 0; v < 4; v++)
        u->q[v] = _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutex2var_epi8(A, _mm512_add_epi8(idx, _mm512_set1_epi8((char)(4 * v))), B), sh), f);
    uint32_t dd;
    memcpy(&dd, b, 4);                                                  /* d, dmin */
    const __m512 d2 = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                                            _mm512_castps128_ps512(_mm_cvtph_ps(_mm_cvtsi32_si128((int)dd))));
    const __m512 sm = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(infer__k4_scales128(b))), d2);   /* d sc[0..7], dmin m[0..7] */
    u->dsc = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), sm);
    u->mn = _mm512_permutexvar_ps(_mm512_setr_epi32(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15), sm);
}
#else
static inline void infer__kq_unpack_q4_k(const uint8_t *p, infer__kq_w *u) {
    const infer_block_q4_k *b = (const infer_block_q4_k *)p;
    __m512i e[4];
    infer__kq_nibbles_k4(b->qs, e);
    infer__kq_transpose(e, u->q);
    infer__kq_scales_k4(b, infer__h2f(b->d), infer__h2f(b->dmin), u);
}
#endif
static inline void infer__kq_unpack_q5_k(const uint8_t *p, infer__kq_w *u) {
    const infer_block_q5_k *b = (const infer_block_q5_k *)p;
    __m512i e[4];
    infer__kq_nibbles_k4(b->qs, e);
    infer__kq_hibits(b->qh, e, 16);
    infer__kq_transpose(e, u->q);
    infer__kq_scales_k4(b, infer__h2f(b->d), infer__h2f(b->dmin), u);
}
/* Q6_K: per half h, ql[64h..64h+63] low nibbles are elements 128h + 0..63 and high nibbles
 * 128h + 64..127; qh2 = [qh | qh >> 2] brings their 2 high bits to bits 0..1 (first
 * quarter) and 4..5 (second) */
static inline void infer__kq_unpack_q6_k(const uint8_t *p, infer__kq_w *u) {
    const infer_block_q6_k *b = (const infer_block_q6_k *)p;
    const __m512i m4 = _mm512_set1_epi8(15), m30 = _mm512_set1_epi8(0x30);
    __m512i e[4];
    INFER__UNROLL for (int h = 0; h < 2; h++) {
        const __m512i l = _mm512_loadu_si512(b->ql + 64 * h);
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(b->qh + 32 * h));
        const __m512i qh2 = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
        e[2 * h] = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_slli_epi16(qh2, 4), m30));
        e[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), _mm512_and_si512(qh2, m30));
    }
    infer__kq_transpose(e, u->q);
    u->dsc = infer__kq_lanes16(_mm_loadu_si128((const __m128i *)b->scales), 1, infer__h2f(b->d));
}
/* IQ4_XS: sub-block j's 16 bytes hold elements 32j + l (low nibble) and 32j + 16 + l (high);
 * levels + 128 by one pshufb */
static inline void infer__kq_unpack_iq4_xs(const uint8_t *p, infer__kq_w *u) {
    static const uint8_t lut[16] = { 1, 24, 45, 63, 79, 93, 106, 118, 129, 141, 153, 166, 181, 197, 217, 241 };  /* kvalues_iq4nl + 128 */
    const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)p;
    const __m512i tbl = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)lut)), f = _mm512_set1_epi8(15);
    __m512i e[4];
    INFER__UNROLL for (int v = 0; v < 4; v++) {
        const __m256i c = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * v));   /* sub-blocks 2v, 2v + 1 */
        const __m512i n = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(c), _mm256_srli_epi16(c, 4), 1), f);
        /* n = [lo(2v) lo(2v+1) | hi(2v) hi(2v+1)] in 128-bit lanes 0 1 | 2 3: element order is 0 2 1 3 */
        e[v] = _mm512_shuffle_epi8(tbl, _mm512_shuffle_i64x2(n, n, _MM_SHUFFLE(3, 1, 2, 0)));
    }
    infer__kq_transpose(e, u->q);
    uint32_t sl;
    memcpy(&sl, b->scales_l, 4);
    const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32((int)sl), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)), _mm256_set1_epi32(15));
    const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(b->scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
    const __m256i s32 = _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));   /* 8 scales, int32 */
    const __m512i s = _mm512_permutexvar_epi32(_mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 1),
                                               _mm512_castsi256_si512(s32));
    u->dsc = _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(infer__h2f(b->d)));
}

/* per token and block, once for all rows of a tile: s0 (the offset terms) and dy, or the
 * bsums times dy for the mins */
typedef struct infer__kq_x { __m512i s0; __m512 dy, bs; } infer__kq_x;
static inline __m512 infer__kq_dy(const uint8_t *g) { float dy; memcpy(&dy, g + 288, 4); return _mm512_set1_ps(dy); }
static inline __m512i infer__kq_bsums(const uint8_t *g) { return _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(g + 256))); }
static inline void infer__kq_prep_min(const uint8_t *g, infer__kq_x *p) {
    p->dy = infer__kq_dy(g);
    p->bs = _mm512_mul_ps(_mm512_cvtepi32_ps(infer__kq_bsums(g)), p->dy);
    p->s0 = _mm512_setzero_si512();
}
#define INFER__KQ_PREP_OFF(NAME, LOG2_OFF)                                                                \
static inline void NAME(const uint8_t *g, infer__kq_x *p) {                                           \
    p->dy = infer__kq_dy(g);                                                                          \
    p->s0 = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(infer__kq_bsums(g), LOG2_OFF)); \
}
INFER__KQ_PREP_OFF(infer__kq_prep_off1, 0)
INFER__KQ_PREP_OFF(infer__kq_prep_off4, 2)
INFER__KQ_PREP_OFF(infer__kq_prep_off32, 5)
INFER__KQ_PREP_OFF(infer__kq_prep_off128, 7)

/* one (row, token) step on a block, see above; g = the token's XK group */
static inline __m512i infer__kq_sum(const infer__kq_w *u, const uint8_t *g, __m512i s) {
    INFER__UNROLL for (int v = 0; v < 4; v++) s = _mm512_dpbusd_epi32(s, u->q[v], _mm512_loadu_si512(g + 64 * v));
    return s;
}
static inline __m512 infer__kq_step_min(__m512 acc, const infer__kq_w *u, const uint8_t *g, const infer__kq_x *p) {
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(infer__kq_sum(u, g, p->s0)), _mm512_mul_ps(u->dsc, p->dy), acc);
    return _mm512_fnmadd_ps(p->bs, u->mn, acc);
}
static inline __m512 infer__kq_step_off(__m512 acc, const infer__kq_w *u, const uint8_t *g, const infer__kq_x *p) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(infer__kq_sum(u, g, p->s0)), _mm512_mul_ps(u->dsc, p->dy), acc);
}

/* A tile of NR rows x NC tokens; each block's weights are unpacked once for the NC tokens
 * and the next row tile's block is prefetched */
#define INFER__KQTILE(T, UNPACK, PREP, STEP, BBYTES, NR, NC)                                                    \
static void infer__kqtile_##T##_##NR##_##NC(int64_t K, const uint8_t *w, size_t ws, const uint8_t *x, size_t xs, float *out, size_t ldo) { \
    __m512 acc[NR][NC];                                                                               \
    INFER__UNROLL for (int r = 0; r < NR; r++) INFER__UNROLL for (int c = 0; c < NC; c++) acc[r][c] = _mm512_setzero_ps(); \
    for (int64_t b = 0; b < K / INFER_QK_K; b++) {                                                    \
        infer__kq_w u[NR];                                                                            \
        INFER__UNROLL for (int r = 0; r < NR; r++) {                                                  \
            const uint8_t *p = w + (size_t)r * ws + (size_t)b * BBYTES;                               \
            UNPACK(p, &u[r]);                                                                         \
            INFER__UNROLL for (int o = 0; o < BBYTES; o += 64) _mm_prefetch((const char *)(p + (size_t)NR * ws) + o, _MM_HINT_T0); \
        }                                                                                             \
        INFER__UNROLL for (int c = 0; c < NC; c++) {                                                  \
            const uint8_t *g = x + (size_t)c * xs + (size_t)b * INFER__XK_GROUP;                      \
            infer__kq_x xp;                                                                           \
            PREP(g, &xp);                                                                             \
            INFER__UNROLL for (int r = 0; r < NR; r++) acc[r][c] = STEP(acc[r][c], &u[r], g, &xp);    \
        }                                                                                             \
    }                                                                                                 \
    INFER__UNROLL for (int c = 0; c < NC; c++) INFER__UNROLL for (int r = 0; r < NR; r++) out[(size_t)c * ldo + r] = _mm512_reduce_add_ps(acc[r][c]); \
}
/* Tiles of 1 or INFER__KQ_ROWS rows by 1..4 tokens; a tile with fewer rows than that runs
 * as one-row tiles (the same operations per output, so the same bits). One token (decode):
 * the row kernel (see INFER__MV_ROWS), prefetching INFER__KQ_AHEAD bytes ahead per row
 * (Q4_K, one row at a time, one core: none 6.6 GB/s, 512 B 8-9, 1 KiB 10-10.4, 2 KiB
 * 10.9-11.3). */
#ifndef INFER__KQ_ROWS
#define INFER__KQ_ROWS 2        /* 3 and 4 measured the same on prompts */
#endif
#ifndef INFER__KQ_AHEAD
#define INFER__KQ_AHEAD 2048
#endif
#define INFER__KQTILE_X(T, UNPACK, PREP, STEP, BBYTES, NR, NC) INFER__KQTILE(T, UNPACK, PREP, STEP, BBYTES, NR, NC)
#define INFER__KQ_NAME_X(T, NR, NC) infer__kqtile_##T##_r_##NR##_##NC
#define INFER__KQ_NAME_Y(T, NR, NC) INFER__KQ_NAME_X(T, NR, NC)
#define INFER__KQ_NAME(T, NC) INFER__KQ_NAME_Y(T, INFER__KQ_ROWS, NC)
#define INFER__KQMV_G(UNPACK, STEP, BBYTES, NR)                                                           \
    {   __m512 acc[NR];                                                                               \
        INFER__UNROLL for (int r = 0; r < NR; r++) acc[r] = _mm512_setzero_ps();                       \
        for (int64_t b = 0; b < nb; b++) {                                                            \
            const size_t ahead = (size_t)b * BBYTES + INFER__KQ_AHEAD, skip = ahead >= ws ? (size_t)(NR - 1) * ws : 0; \
            INFER__UNROLL for (int r = 0; r < NR; r++) {                                              \
                const uint8_t *p = w + (size_t)r * ws + (size_t)b * BBYTES;                           \
                infer__kq_w u;                                                                        \
                INFER__UNROLL for (int o = 0; o < BBYTES; o += 64) _mm_prefetch((const char *)(w + (size_t)r * ws + ahead + skip) + o, _MM_HINT_T0); \
                UNPACK(p, &u);                                                                        \
                acc[r] = STEP(acc[r], &u, x + (size_t)b * INFER__XK_GROUP, &xp[b]);                   \
            }                                                                                         \
        }                                                                                             \
        INFER__UNROLL for (int r = 0; r < NR; r++) out[i + r] = _mm512_reduce_add_ps(acc[r]);         \
    }
#define INFER__KQTILES(T, UNPACK, PREP, STEP, BBYTES)                                                     \
    INFER__KQTILE(T, UNPACK, PREP, STEP, BBYTES, 1, 1) INFER__KQTILE(T, UNPACK, PREP, STEP, BBYTES, 1, 2) \
    INFER__KQTILE(T, UNPACK, PREP, STEP, BBYTES, 1, 3) INFER__KQTILE(T, UNPACK, PREP, STEP, BBYTES, 1, 4) \
    INFER__KQTILE_X(T##_r, UNPACK, PREP, STEP, BBYTES, INFER__KQ_ROWS, 1) INFER__KQTILE_X(T##_r, UNPACK, PREP, STEP, BBYTES, INFER__KQ_ROWS, 2) \
    INFER__KQTILE_X(T##_r, UNPACK, PREP, STEP, BBYTES, INFER__KQ_ROWS, 3) INFER__KQTILE_X(T##_r, UNPACK, PREP, STEP, BBYTES, INFER__KQ_ROWS, 4) \
    static void infer__kqtile_##T(int64_t K, const uint8_t *w, size_t ws, int nr, const uint8_t *x, size_t xs, int nc, float *out, size_t ldo) { \
        typedef void (*f)(int64_t, const uint8_t *, size_t, const uint8_t *, size_t, float *, size_t);  \
        static const f tab[2][4] = { { infer__kqtile_##T##_1_1, infer__kqtile_##T##_1_2, infer__kqtile_##T##_1_3, infer__kqtile_##T##_1_4 }, \
                                     { INFER__KQ_NAME(T, 1), INFER__KQ_NAME(T, 2), INFER__KQ_NAME(T, 3), INFER__KQ_NAME(T, 4) } }; \
        if (nr == INFER__KQ_ROWS) { tab[1][nc - 1](K, w, ws, x, xs, out, ldo); return; }                \
        for (int r = 0; r < nr; r++) tab[0][nc - 1](K, w + (size_t)r * ws, ws, x, xs, out + r, ldo);   \
    }                                                                                                 \
    static void infer__kqmv_##T(int64_t K, const uint8_t *w, size_t ws, int64_t n, const uint8_t *x, float *out) { \
        const int64_t nb = K / INFER_QK_K;                                                            \
        infer__kq_x xp[nb];                     /* the token's per-block terms, once for all rows */  \
        for (int64_t b = 0; b < nb; b++) PREP(x + (size_t)b * INFER__XK_GROUP, &xp[b]);               \
        int64_t i = 0;                                                                                \
        for (; i + INFER__MV_ROWS <= n; i += INFER__MV_ROWS, w += INFER__MV_ROWS * ws) INFER__KQMV_G(UNPACK, STEP, BBYTES, INFER__MV_ROWS)              \
        for (; i < n; i++, w += ws) INFER__KQMV_G(UNPACK, STEP, BBYTES, 1)                             \
    }
INFER__KQTILES(q2_k, infer__kq_unpack_q2_k, infer__kq_prep_min, infer__kq_step_min, 84)
INFER__KQTILES(q3_k, infer__kq_unpack_q3_k, infer__kq_prep_off4, infer__kq_step_off, 110)
INFER__KQTILES(q4_k, infer__kq_unpack_q4_k, infer__kq_prep_min, infer__kq_step_min, 144)
INFER__KQTILES(q5_k, infer__kq_unpack_q5_k, infer__kq_prep_min, infer__kq_step_min, 176)
INFER__KQTILES(q6_k, infer__kq_unpack_q6_k, infer__kq_prep_off32, infer__kq_step_off, 210)
INFER__KQTILES(iq4_xs, infer__kq_unpack_iq4_xs, infer__kq_prep_off128, infer__kq_step_off, 136)
INFER__KQTILES(tq2_0, infer__kq_unpack_tq2_0, infer__kq_prep_off1, infer__kq_step_off, 66)
#endif /* XK tiles */

/* one tile through the type's fast tile, or through the reference tile with its dot */
static inline void infer__tile_run(const infer__tile *t, infer__dot_fn dot, int64_t K, const uint8_t *w, size_t ws, int nr,
                                   const uint8_t *x, size_t xs, int nc, float *out, size_t ldo) {
    if (t->fn) t->fn(K, w, ws, nr, x, xs, nc, out, ldo);
    else infer__tile_ref(dot, K, w, ws, nr, x, xs, nc, out, ldo);
}

/* The fast tile for a weight type, or {NULL}: use infer__tile_ref with the type's dot. */
static infer__tile infer__tile_for(infer_type t) {
    infer__tile k = { NULL, 0, 4, 4, NULL };
#if defined(INFER__SIMD_AVX512)
    if (t == INFER_TYPE_F32 || t == INFER_TYPE_F16 || t == INFER_TYPE_BF16) k.rows = 6;
    if (t == INFER_TYPE_F32) { k.fn = infer__ftile_f32; k.mv = infer__fmv_f32; }
    if (t == INFER_TYPE_F16) { k.fn = infer__ftile_f16; k.mv = infer__fmv_f16; }
    if (t == INFER_TYPE_BF16) { k.fn = infer__ftile_bf16; k.mv = infer__fmv_bf16; }
#endif
#if defined(INFER__TILE_X4)
    if (t == INFER_TYPE_Q4_0) { k.fn = infer__qtile_q4_0; k.xlay = INFER__XLAY_X4; k.mv = infer__qmv_q4_0; }
    /* Q8_0: unpacking a group (4 loads, 3 permutes) costs more than its 256-bit dot, which
     * reads each block with one unaligned load (in decode the dot measured 1.3x faster than
     * the 1 x 1 tile: 36-37 vs 27-28 GB/s), but only the tile's bits let a token decoded
     * alone equal the same token among other sequences' (>>kv): decode takes the tile's
     * row kernel. */
    if (t == INFER_TYPE_Q8_0) { k.fn = infer__qtile_q8_0; k.xlay = INFER__XLAY_X4; k.mv = infer__qmv_q8_0; }
#endif
#if defined(INFER__TILE_XK)
    {   /* the super-block types: XK tiles and their decode row kernels */
        static const struct { infer_type t; infer__tile_fn fn; infer__mv_fn mv; } kq[] = {
            { INFER_TYPE_Q2_K, infer__kqtile_q2_k, infer__kqmv_q2_k }, { INFER_TYPE_Q3_K, infer__kqtile_q3_k, infer__kqmv_q3_k },
            { INFER_TYPE_Q4_K, infer__kqtile_q4_k, infer__kqmv_q4_k }, { INFER_TYPE_Q5_K, infer__kqtile_q5_k, infer__kqmv_q5_k },
            { INFER_TYPE_Q6_K, infer__kqtile_q6_k, infer__kqmv_q6_k }, { INFER_TYPE_IQ4_XS, infer__kqtile_iq4_xs, infer__kqmv_iq4_xs },
            { INFER_TYPE_TQ2_0, infer__kqtile_tq2_0, infer__kqmv_tq2_0 } };
        for (size_t i = 0; i < sizeof kq / sizeof kq[0]; i++)
            if (t == kq[i].t) {
                k.fn = kq[i].fn; k.mv = kq[i].mv; k.rows = INFER__KQ_ROWS;
                k.xlay = t == INFER_TYPE_TQ2_0 ? INFER__XLAY_XE : INFER__XLAY_XK;
            }
    }
#endif
    (void)t;
    return k;
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
/* ------------------------------------------------------------------------------------------
 * >>gguf -- the GGUF container.
 *
 *   "GGUF" u32 version  i64 n_tensors  i64 n_kv
 *   n_kv x      { string key; i32 value_type; value }
 *   n_tensors x { string name; u32 n_dims; i64 ne[n_dims]; i32 type; u64 offset }
 *   padding to general.alignment (default 32)
 *   tensor data: each tensor at data_offset + offset
 *
 *   string = u64 length + bytes (no NUL). array value = i32 elem_type, u64 count, elements.
 *
 * The parser works on bytes in memory (mmap is a separate step) and trusts nothing: every
 * count, length, dimension and offset is checked against the bytes that remain and against
 * overflow before it is used. Errors name the key or tensor and the byte offset.
 * ---------------------------------------------------------------------------------------- */
static const uint8_t infer__gguf_vsize[INFER_GGUF_VTYPE_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

static const char *infer__gguf_vtype_name(int t) {
    static const char *n[] = { "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64" };
    return t >= 0 && t < INFER_GGUF_VTYPE_COUNT ? n[t] : "invalid";
}

/* decode one scalar of type t at p into the kv's union */
static void infer__gguf_scalar(infer_gguf_kv *kv, int t, const uint8_t *p) {
    uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32; float f32; double f64;
    switch (t) {
    case INFER_GGUF_U8: case INFER_GGUF_BOOL: memcpy(&u8, p, 1); kv->v.u = u8; kv->v.i = u8; kv->v.f = u8; break;
    case INFER_GGUF_I8: memcpy(&i8, p, 1); kv->v.i = i8; kv->v.f = i8; break;
    case INFER_GGUF_U16: memcpy(&u16, p, 2); kv->v.u = u16; kv->v.f = u16; break;
    case INFER_GGUF_I16: memcpy(&i16, p, 2); kv->v.i = i16; kv->v.f = i16; break;
    case INFER_GGUF_U32: memcpy(&u32, p, 4); kv->v.u = u32; kv->v.f = u32; break;
    case INFER_GGUF_I32: memcpy(&i32, p, 4); kv->v.i = i32; kv->v.f = i32; break;
    case INFER_GGUF_F32: memcpy(&f32, p, 4); kv->v.f = f32; break;
    case INFER_GGUF_U64: memcpy(&kv->v.u, p, 8); kv->v.f = (double)kv->v.u; break;
    case INFER_GGUF_I64: memcpy(&kv->v.i, p, 8); kv->v.f = (double)kv->v.i; break;
    case INFER_GGUF_F64: memcpy(&f64, p, 8); kv->v.f = f64; break;
    default: break;
    }
}

/* The union stores one representation; these read a numeric kv as the wanted kind. */
static int infer__kv_is_int(const infer_gguf_kv *kv) {
    return kv->type <= INFER_GGUF_I32 || kv->type == INFER_GGUF_BOOL || kv->type == INFER_GGUF_U64 || kv->type == INFER_GGUF_I64;
}
static int64_t infer__kv_int(const infer_gguf_kv *kv) {
    switch (kv->type) {
    case INFER_GGUF_I8: case INFER_GGUF_I16: case INFER_GGUF_I32: case INFER_GGUF_I64: return kv->v.i;
    default: return (int64_t)kv->v.u;
    }
}

static infer_status infer__gguf_read_kv(infer__cursor *c, infer_gguf_kv *kv, infer_error *err) {
    size_t at = c->pos;
    int32_t t;
    if (!infer__read_str(c, &kv->key)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: metadata key at byte %zu runs past the end of the file", at);
    if (kv->key.len == 0) return infer__fail(err, INFER_ERR_FORMAT, "gguf: empty metadata key at byte %zu", at);
    const int kl = kv->key.len > 200 ? 200 : (int)kv->key.len;
    if (!infer__read(c, &t, 4)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': value type past the end of the file", kl, kv->key.ptr);
    if (t < 0 || t >= INFER_GGUF_VTYPE_COUNT)
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s' at byte %zu: invalid value type %d", kl, kv->key.ptr, at, t);
    kv->type = (infer_gguf_vtype)t;
    if (t == INFER_GGUF_STRING) {
        if (!infer__read_str(c, &kv->v.s)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': string value runs past the end of the file", kl, kv->key.ptr);
        return INFER_OK;
    }
    if (t != INFER_GGUF_ARRAY) {
        if (!infer__need(c, infer__gguf_vsize[t])) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': value past the end of the file", kl, kv->key.ptr);
        infer__gguf_scalar(kv, t, c->base + c->pos);
        c->pos += infer__gguf_vsize[t];
        return INFER_OK;
    }
    int32_t et;
    uint64_t n;
    if (!infer__read(c, &et, 4) || !infer__read(c, &n, 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': array header past the end of the file", kl, kv->key.ptr);
    if (et < 0 || et >= INFER_GGUF_VTYPE_COUNT || et == INFER_GGUF_ARRAY)
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': invalid array element type %d", kl, kv->key.ptr, et);
    kv->arr_type = (infer_gguf_vtype)et;
    kv->arr_n = n;
    kv->arr_data = c->base + c->pos;
    if (et == INFER_GGUF_STRING) {              /* walk the strings to find the end */
        if (n > (c->size - c->pos) / 8) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': %llu strings cannot fit in the file", kl, kv->key.ptr, (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) {
            infer_str s;
            if (!infer__read_str(c, &s)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': string %llu runs past the end of the file", kl, kv->key.ptr, (unsigned long long)i);
        }
        return INFER_OK;
    }
    uint64_t bytes;
    if (!infer__mul_ok(n, infer__gguf_vsize[et], &bytes) || !infer__need(c, bytes))
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': array of %llu %s runs past the end of the file", kl, kv->key.ptr, (unsigned long long)n, infer__gguf_vtype_name(et));
    c->pos += bytes;
    return INFER_OK;
}

static size_t infer__tensor_nbytes(infer_type t, const int64_t *ne, int n_dims) {
    uint64_t rows = 1, b;
    for (int d = 1; d < n_dims; d++) if (!infer__mul_ok(rows, (uint64_t)ne[d], &rows)) return SIZE_MAX;
    if (t == INFER_TYPE_I2_S) {  /* n/4 packed bytes + one f32 scale padded to 32 bytes */
        uint64_t n;
        if (!infer__mul_ok(rows, (uint64_t)ne[0], &n)) return SIZE_MAX;
        return (size_t)(n / 4 + 32);
    }
    if (!infer__mul_ok(rows, infer_type_row_size(t, ne[0]), &b) || b > SIZE_MAX / 2) return SIZE_MAX;
    return (size_t)b;
}

static infer_status infer__gguf_read_tensor(infer__cursor *c, infer_gguf *g, int64_t idx, infer_str *name, infer_error *err) {
    infer_tensor *t = &g->tensors[idx];
    size_t at = c->pos;
    uint32_t nd;
    int32_t type;
    uint64_t off;
    if (!infer__read_str(c, name)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor %lld name at byte %zu runs past the end of the file", (long long)idx, at);
    const int nl = name->len > 200 ? 200 : (int)name->len;
    if (name->len == 0 || name->len >= 64) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor %lld at byte %zu: name length %llu (must be 1..63)", (long long)idx, at, (unsigned long long)name->len);
    if (!infer__read(c, &nd, 4)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': header past the end of the file", nl, name->ptr);
    if (nd < 1 || nd > INFER_MAX_DIMS) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': %u dimensions (must be 1..4)", nl, name->ptr, nd);
    t->n_dims = (int32_t)nd;
    uint64_t total = 1;
    for (int d = 0; d < INFER_MAX_DIMS; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < nd; d++) {
        if (!infer__read(c, &t->ne[d], 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': dims past the end of the file", nl, name->ptr);
        if (t->ne[d] < 0 || !infer__mul_ok(total, (uint64_t)t->ne[d], &total) || total > ((uint64_t)1 << 50))
            return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': dimension %u = %lld is invalid", nl, name->ptr, d, (long long)t->ne[d]);
    }
    if (!infer__read(c, &type, 4) || !infer__read(c, &off, 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': header past the end of the file", nl, name->ptr);
    if (type == 36) type = INFER_TYPE_I2_S;   /* BitNet's fork; upstream removed id 36 */
    if (infer_type_block((infer_type)type) == 0)
        return infer__fail(err, INFER_ERR_UNSUPPORTED, "gguf: tensor '%.*s': unknown or unsupported type id %d", nl, name->ptr, type);
    t->type = (infer_type)type;
    if (t->ne[0] % infer_type_block(t->type) != 0)
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': row length %lld is not a multiple of %s's block of %d", nl, name->ptr, (long long)t->ne[0], infer_type_name(t->type), infer_type_block(t->type));
    t->nbytes = infer__tensor_nbytes(t->type, t->ne, t->n_dims);
    if (t->nbytes == SIZE_MAX) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': size overflows", nl, name->ptr);
    t->data = (const void *)(uintptr_t)off;   /* relative for now; made absolute once data_offset is known */
    t->scale = 1.0f;
    return INFER_OK;
}

infer_status infer_gguf_parse(infer_gguf *g, const void *data, size_t size, infer_error *err) {
    memset(g, 0, sizeof *g);
    infer__cursor c = { (const uint8_t *)data, size, 0 };
    infer_status st = INFER_OK;
    char magic[4];
    uint32_t version;
    struct { char *key; int value; } *map = NULL;
    if (!infer__read(&c, magic, 4) || memcmp(magic, "GGUF", 4) != 0) return infer__fail(err, INFER_ERR_FORMAT, "not a GGUF file (bad magic)");
    if (!infer__read(&c, &version, 4)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: truncated header");
    if ((version & 0xffff) == 0) return infer__fail(err, INFER_ERR_UNSUPPORTED, "gguf: big-endian files are not supported");
    if (version < 2 || version > 3) return infer__fail(err, INFER_ERR_UNSUPPORTED, "gguf: version %u (supported: 2, 3)", version);
    g->version = version;
    if (!infer__read(&c, &g->n_tensors, 8) || !infer__read(&c, &g->n_kv, 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: truncated header");
    /* smallest kv is 8+1+4+1 bytes, smallest tensor info 8+1+4+8+4+8: counts beyond that cannot fit */
    if (g->n_kv < 0 || (uint64_t)g->n_kv > size / 14) return infer__fail(err, INFER_ERR_FORMAT, "gguf: metadata count %lld cannot fit in a %zu-byte file", (long long)g->n_kv, size);
    if (g->n_tensors < 0 || (uint64_t)g->n_tensors > size / 33) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor count %lld cannot fit in a %zu-byte file", (long long)g->n_tensors, size);
    g->base = (const uint8_t *)data;
    g->size = size;
    g->alignment = 32;
    g->kv = (infer_gguf_kv *)infer__calloc((size_t)g->n_kv, sizeof(infer_gguf_kv));
    g->tensors = (infer_tensor *)infer__calloc((size_t)g->n_tensors, sizeof(infer_tensor));
    g->names = (char *)infer__calloc((size_t)g->n_tensors, 64);
    if (!g->kv || !g->tensors || !g->names) { st = infer__fail(err, INFER_ERR_NOMEM, "gguf: out of memory"); goto fail; }

    for (int64_t i = 0; i < g->n_kv; i++) {
        if ((st = infer__gguf_read_kv(&c, &g->kv[i], err)) != INFER_OK) goto fail;
        for (int64_t j = 0; j < i; j++)
            if (g->kv[j].key.len == g->kv[i].key.len && memcmp(g->kv[j].key.ptr, g->kv[i].key.ptr, g->kv[i].key.len) == 0) {
                st = infer__fail(err, INFER_ERR_FORMAT, "gguf: duplicate key '%.*s'", (int)(g->kv[i].key.len > 200 ? 200 : g->kv[i].key.len), g->kv[i].key.ptr);
                goto fail;
            }
    }
    const infer_gguf_kv *al = infer_gguf_find(g, "general.alignment");
    if (al) {
        if (al->type != INFER_GGUF_U32 || al->v.u == 0 || (al->v.u & (al->v.u - 1)) != 0) {
            st = infer__fail(err, INFER_ERR_FORMAT, "gguf: general.alignment must be a power-of-two u32 (got %s %llu)", infer__gguf_vtype_name(al->type), (unsigned long long)al->v.u);
            goto fail;
        }
        g->alignment = al->v.u;
    }
    for (int64_t i = 0; i < g->n_tensors; i++) {
        infer_str name;
        if ((st = infer__gguf_read_tensor(&c, g, i, &name, err)) != INFER_OK) goto fail;
        char *nm = g->names + 64 * i;
        memcpy(nm, name.ptr, name.len);
        nm[name.len] = 0;
        g->tensors[i].name = nm;
        if (shgeti(map, nm) >= 0) { st = infer__fail(err, INFER_ERR_FORMAT, "gguf: duplicate tensor name '%s'", nm); goto fail; }
        shput(map, nm, (int)i);
    }
    shfree(map);
    map = NULL;
    g->data_offset = (c.pos + g->alignment - 1) / g->alignment * g->alignment;
    for (int64_t i = 0; i < g->n_tensors; i++) {
        infer_tensor *t = &g->tensors[i];
        uint64_t off = (uint64_t)(uintptr_t)t->data, start, end;
        if (off % g->alignment != 0) { st = infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%s': offset %llu is not a multiple of the alignment %llu", t->name, (unsigned long long)off, (unsigned long long)g->alignment); goto fail; }
        if (!infer__add_ok(g->data_offset, off, &start) || !infer__add_ok(start, t->nbytes, &end) || end > size) {
            st = infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%s': data [%llu, +%zu) lies outside the %zu-byte file", t->name, (unsigned long long)off, t->nbytes, size);
            goto fail;
        }
        t->data = g->base + start;
        if (t->type == INFER_TYPE_I2_S) {   /* the per-tensor scale follows the packed 2-bit codes */
            uint64_t n = t->nbytes - 32;
            memcpy(&t->scale, g->base + start + n, 4);
        }
    }
    return INFER_OK;
fail:
    shfree(map);
    infer_gguf_free(g);
    return st;
}

void infer_gguf_free(infer_gguf *g) {
    if (g->owner_free) g->owner_free(g->owner);
    INFER_FREE(g->kv);
    INFER_FREE(g->tensors);
    INFER_FREE(g->names);
    memset(g, 0, sizeof *g);
}

const infer_gguf_kv *infer_gguf_find(const infer_gguf *g, const char *key) {
    for (int64_t i = 0; i < g->n_kv; i++) if (infer__str_eq(g->kv[i].key, key)) return &g->kv[i];
    return NULL;
}

const infer_tensor *infer_gguf_tensor(const infer_gguf *g, const char *name) {
    for (int64_t i = 0; i < g->n_tensors; i++) if (strcmp(g->tensors[i].name, name) == 0) return &g->tensors[i];
    return NULL;
}

/* Typed metadata getters. They return 1 when the key exists with a fitting type, 0 when it is
 * absent, -1 (with a message) when it exists with the wrong type. */
static int infer__get_int(const infer_gguf *g, const char *key, int64_t *out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type == INFER_GGUF_ARRAY || !infer__kv_is_int(kv)) { infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s, expected an integer", key, infer__gguf_vtype_name(kv->type)); return -1; }
    *out = infer__kv_int(kv);
    return 1;
}
static int infer__get_float(const infer_gguf *g, const char *key, double *out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type == INFER_GGUF_ARRAY || kv->type == INFER_GGUF_STRING || kv->type == INFER_GGUF_BOOL) { infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s, expected a number", key, infer__gguf_vtype_name(kv->type)); return -1; }
    *out = kv->v.f;
    return 1;
}
static int infer__get_str(const infer_gguf *g, const char *key, infer_str *out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != INFER_GGUF_STRING) { infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s, expected a string", key, infer__gguf_vtype_name(kv->type)); return -1; }
    *out = kv->v.s;
    return 1;
}
static int infer__get_arr(const infer_gguf *g, const char *key, infer_gguf_vtype et, const infer_gguf_kv **out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != INFER_GGUF_ARRAY || kv->arr_type != et) {
        infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s%s%s, expected array of %s", key, infer__gguf_vtype_name(kv->type),
                    kv->type == INFER_GGUF_ARRAY ? " of " : "", kv->type == INFER_GGUF_ARRAY ? infer__gguf_vtype_name(kv->arr_type) : "", infer__gguf_vtype_name(et));
        return -1;
    }
    *out = kv;
    return 1;
}
/* Writing GGUF: the inverse of the parser, used by tools/convert. Metadata values are
 * infer_gguf_kv entries (as the parser produces them, or built with infer_gguf_kv_*),
 * tensors are infer_tensor views whose bytes are written at aligned offsets. */
static size_t infer__gguf_arr_bytes(const infer_gguf_kv *kv) {
    if (kv->arr_type != INFER_GGUF_STRING) return (size_t)kv->arr_n * infer__gguf_vsize[kv->arr_type];
    infer__cursor c = { kv->arr_data, (size_t)-1, 0 };
    for (uint64_t i = 0; i < kv->arr_n; i++) { infer_str s = { NULL, 0 }; infer__read_str(&c, &s); }
    return c.pos;
}

static int infer__fput(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n; }
static int infer__fput_str(FILE *f, infer_str s) { return infer__fput(f, &s.len, 8) && infer__fput(f, s.ptr, s.len); }

static int infer__gguf_write_kv(FILE *f, const infer_gguf_kv *kv) {
    int32_t t = kv->type;
    if (!infer__fput_str(f, kv->key) || !infer__fput(f, &t, 4)) return 0;
    uint8_t buf[8];
    switch (kv->type) {
    case INFER_GGUF_STRING: return infer__fput_str(f, kv->v.s);
    case INFER_GGUF_ARRAY: {
        int32_t et = kv->arr_type;
        return infer__fput(f, &et, 4) && infer__fput(f, &kv->arr_n, 8) && infer__fput(f, kv->arr_data, infer__gguf_arr_bytes(kv));
    }
    case INFER_GGUF_F32: { float x = (float)kv->v.f; memcpy(buf, &x, 4); break; }
    case INFER_GGUF_F64: memcpy(buf, &kv->v.f, 8); break;
    case INFER_GGUF_I8: case INFER_GGUF_I16: case INFER_GGUF_I32: case INFER_GGUF_I64: memcpy(buf, &kv->v.i, 8); break;
    default: memcpy(buf, &kv->v.u, 8); break;   /* little-endian: the low bytes come first */
    }
    return infer__fput(f, buf, infer__gguf_vsize[kv->type]);
}

infer_status infer_gguf_write(const char *path, const infer_gguf_kv *kv, int64_t n_kv, const infer_tensor *tensors, int64_t n_tensors,
                              uint32_t alignment, infer_error *err) {
    if (!alignment || (alignment & (alignment - 1))) return infer__fail(err, INFER_ERR_ARG, "alignment %u is not a power of two", alignment);
    FILE *f = fopen(path, "wb");
    if (!f) return infer__fail(err, INFER_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    uint32_t version = 3;
    int ok = infer__fput(f, "GGUF", 4) && infer__fput(f, &version, 4) && infer__fput(f, &n_tensors, 8) && infer__fput(f, &n_kv, 8);
    for (int64_t i = 0; ok && i < n_kv; i++) ok = infer__gguf_write_kv(f, &kv[i]);
    uint64_t off = 0;
    for (int64_t i = 0; ok && i < n_tensors; i++) {
        const infer_tensor *t = &tensors[i];
        infer_str name = { t->name, strlen(t->name) };
        uint32_t nd = (uint32_t)t->n_dims;
        int32_t type = t->type == INFER_TYPE_I2_S ? 36 : (int32_t)t->type;
        ok = infer__fput_str(f, name) && infer__fput(f, &nd, 4) && infer__fput(f, t->ne, 8 * nd) && infer__fput(f, &type, 4) && infer__fput(f, &off, 8);
        off += (t->nbytes + alignment - 1) / alignment * alignment;
    }
    static const uint8_t zeros[256];
    long pos = ftell(f);
    size_t pad = (alignment - (size_t)pos % alignment) % alignment;
    while (ok && pad) { size_t k = pad < sizeof zeros ? pad : sizeof zeros; ok = infer__fput(f, zeros, k); pad -= k; }
    for (int64_t i = 0; ok && i < n_tensors; i++) {
        ok = infer__fput(f, tensors[i].data, tensors[i].nbytes);
        pad = (alignment - tensors[i].nbytes % alignment) % alignment;
        while (ok && pad) { size_t k = pad < sizeof zeros ? pad : sizeof zeros; ok = infer__fput(f, zeros, k); pad -= k; }
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok) return infer__fail(err, INFER_ERR_IO, "error writing '%s': %s", path, strerror(errno));
    return INFER_OK;
}

/* metadata builders for writers (the strings must outlive the write) */
infer_gguf_kv infer_gguf_kv_u32(const char *key, uint32_t v) {
    infer_gguf_kv kv;
    memset(&kv, 0, sizeof kv);
    kv.key.ptr = key; kv.key.len = strlen(key); kv.type = INFER_GGUF_U32; kv.v.u = v;
    return kv;
}
infer_gguf_kv infer_gguf_kv_f32(const char *key, float v) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, 0);
    kv.type = INFER_GGUF_F32; kv.v.f = v;
    return kv;
}
infer_gguf_kv infer_gguf_kv_bool(const char *key, int v) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, v != 0);
    kv.type = INFER_GGUF_BOOL;
    return kv;
}
infer_gguf_kv infer_gguf_kv_str(const char *key, const char *v) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, 0);
    kv.type = INFER_GGUF_STRING; kv.v.s.ptr = v; kv.v.s.len = strlen(v);
    return kv;
}
/* an array whose elements are already encoded as GGUF stores them (strings: u64 len + bytes) */
infer_gguf_kv infer_gguf_kv_array(const char *key, infer_gguf_vtype et, uint64_t n, const void *encoded) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, 0);
    kv.type = INFER_GGUF_ARRAY; kv.arr_type = et; kv.arr_n = n; kv.arr_data = (const uint8_t *)encoded;
    return kv;
}
/* ------------------------------------------------------------------------------------------
 * >>cpu -- the CPU kernel table.
 *
 * Plain C, written to be checked by eye against the equations (the fast dot products live in
 * >>simd and >>ternary, the matrix tiles in >>tiles; attention converts F16 cache rows 8 at
 * a time with F16C where the compiler targets it). The context carries a thread pool and
 * the `precise` flag:
 *   precise = 1: weights are dequantized to f32 a row at a time and every product and sum
 *                is f32 -- the exact maths the golden logits were computed with.
 *   precise = 0: activations are quantized to the weight type's dot format (int8 blocks,
 *                by all threads), and the products run as tiles on integers -- faster,
 *                slightly less exact.
 * A matmul hands out its output rows in pieces of whole tiles; each output is computed by
 * the same operations whichever thread takes it, so results do not depend on the thread
 * count (tested, both paths).
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

/* A prompt's elementwise and per-row ops (norms, activations, the conv, copies) run over
 * [0, n) split across the pool, so they do not leave the other threads waiting; below about
 * INFER__PAR_MIN elementary steps (a decode step's ops) waking the pool costs more than it
 * saves, and they run on the calling thread. Every unit is computed the same way either
 * way. ctx may be NULL (tests call ops directly): then inline too. */
#define INFER__PAR_MIN 16384
typedef void (*infer__range_fn)(void *arg, int64_t i0, int64_t i1);
typedef struct { infer__range_fn fn; void *arg; int64_t n; } infer__par_job;
static void infer__par_task(void *arg, int ith, int nth) {
    const infer__par_job *j = (const infer__par_job *)arg;
    j->fn(j->arg, j->n * ith / nth, j->n * (ith + 1) / nth);
}
static void infer__cpu_par(void *ctx, int64_t n, int64_t steps_per_unit, infer__range_fn fn, void *arg) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    if (!c || c->n_threads < 2 || n < 2 || n * steps_per_unit < INFER__PAR_MIN) { fn(arg, 0, n); return; }
    infer__par_job j = { fn, arg, n };
    infer__pool_run(c->pool, infer__par_task, &j);
}

static void *infer__cpu_alloc(void *ctx, size_t bytes) { (void)ctx; return infer__calloc(1, bytes); }
static void infer__cpu_free(void *ctx, void *p) { (void)ctx; INFER_FREE(p); }
static infer_status infer__cpu_copy(void *ctx, void *dst, const void *src, size_t bytes) { (void)ctx; memcpy(dst, src, bytes); return INFER_OK; }
static infer_status infer__cpu_sync(void *ctx) { (void)ctx; return INFER_OK; }
/* every type with a dequantizer, except the integer tables (no matmul reads those) */
static int infer__cpu_supports_type(infer_type t) { return infer_type_block(t) != 0 && t != INFER_TYPE_I32; }

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
typedef struct { float *out; const float *x, *w; int dim; float eps; } infer__norm_args;
static void infer__rmsnorm_rows(void *arg, int64_t r0, int64_t r1) {
    const infer__norm_args *a = (const infer__norm_args *)arg;
    const int dim = a->dim;
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = a->x + (size_t)r * dim;
        float *o = a->out + (size_t)r * dim;
        double ss = 0;
        for (int i = 0; i < dim; i++) ss += (double)xr[i] * xr[i];
        const float scale = (float)(1.0 / sqrt(ss / dim + a->eps));
        for (int i = 0; i < dim; i++) o[i] = xr[i] * scale * (a->w ? a->w[i] : 1.0f);
    }
}
static void infer__cpu_rmsnorm(void *ctx, float *out, const float *x, const float *w, int rows, int dim, float eps) {
    infer__norm_args a = { out, x, w, dim, eps };
    infer__cpu_par(ctx, rows, dim, infer__rmsnorm_rows, &a);
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

/* Quantizing the activations of a matmul is spread over the threads: rows x chunks of 512
 * values (whole X4 groups, whole blocks of every dot type), so a single decode row is
 * split too. */
typedef struct infer__prep_job {
    const float *x; uint8_t *dst; size_t row_bytes;
    int64_t K; int rows, xlay; infer_type dt;
} infer__prep_job;
#define INFER__PREP_CHUNK 512
static void infer__prep_task(void *arg, int ith, int nth) {
    const infer__prep_job *j = (const infer__prep_job *)arg;
    const int64_t per_row = (j->K + INFER__PREP_CHUNK - 1) / INFER__PREP_CHUNK, units = per_row * j->rows;
    const int dot = j->xlay == INFER__XLAY_DOT;
    const infer__quant_fn quant = dot ? infer__act_quant(j->dt) : NULL;
    const size_t bbytes = dot ? (size_t)infer__type(j->dt)->bytes : 0;
    const int blck = dot ? infer__type(j->dt)->blck : 0;
    for (int64_t u = units * ith / nth; u < units * (ith + 1) / nth; u++) {
        const int64_t r = u / per_row, e0 = u % per_row * INFER__PREP_CHUNK;
        const int64_t e1 = e0 + INFER__PREP_CHUNK < j->K ? e0 + INFER__PREP_CHUNK : j->K;
        const float *xr = j->x + (size_t)r * (size_t)j->K;
        uint8_t *dr = j->dst + (size_t)r * j->row_bytes;
        if (j->xlay == INFER__XLAY_X4) infer__x4_quant_groups(xr, j->K, dr, e0 / 128, (e1 + 127) / 128);
        else if (j->xlay == INFER__XLAY_XK || j->xlay == INFER__XLAY_XE) infer__xk_quant_blocks(xr, dr, e0 / INFER_QK_K, e1 / INFER_QK_K, j->xlay);
        else quant(xr + e0, dr + (size_t)(e0 / blck) * bbytes, e1 - e0);
    }
}

/* Prepare the activations of a matmul with weight w: in the precise path, room for one
 * dequantized weight row per thread; in the fast path, x [rows, K] quantized to w's dot
 * format (or the X4 layout of its tile, >>tiles). Returns the activation rows to dot with
 * (NULL: precise, or out of memory) and their byte stride. With `defer`, a quantization
 * that would run on the pool is described there instead (defer->x stays NULL otherwise),
 * for the matmul's own job to run before its products. */
static const void *infer__cpu_prepare_x(infer__cpu_ctx *c, const infer_tensor *w, const infer__tile *tile, const float *x, int rows, size_t *row_bytes,
                                        infer__prep_job *defer) {
    const int64_t K = w->ne[0];
    if (c->precise) {
        if (c->wrow_len < K) {
            INFER_FREE(c->wrow);
            c->wrow = (float *)INFER_MALLOC((size_t)c->n_threads * (size_t)K * sizeof(float));
            c->wrow_len = c->wrow ? K : 0;
        }
        return NULL;
    }
    const infer_type dt = infer__matmul_dot_type(w->type);
    if (tile->xlay == INFER__XLAY_DOT && dt == INFER_TYPE_F32) {
        *row_bytes = (size_t)K * sizeof(float);
        return x;
    }
    const int xk = tile->xlay == INFER__XLAY_XK || tile->xlay == INFER__XLAY_XE;
    const int blck = tile->xlay == INFER__XLAY_X4 ? 128 : xk ? INFER_QK_K : infer__type(dt)->blck;
    const int64_t Kp = (K + blck - 1) / blck * blck;   /* I2_S rows of 128 k: padded to Q8_K blocks */
    *row_bytes = tile->xlay == INFER__XLAY_X4 ? infer__x4_row_bytes(K) : xk ? infer__xk_row_bytes(K) : infer_type_row_size(dt, Kp);
    if (!infer__cpu_reserve(&c->xq, &c->xq_size, *row_bytes * (size_t)rows + 64)) return NULL;
    uint8_t *xq = (uint8_t *)c->xq + (-(uintptr_t)c->xq & 63);   /* 64-byte aligned: tile loads split no line */
    if (tile->xlay != INFER__XLAY_DOT || Kp == K) {
        infer__prep_job pj = { x, xq, *row_bytes, K, rows, tile->xlay, dt };
        if (defer) *defer = pj;          /* the caller's job runs it (infer__matmul_task) */
        else infer__pool_run(c->pool, infer__prep_task, &pj);
        return xq;
    }
    const infer__type_traits *qt = infer__type(dt);
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * K;
        uint8_t *dst = xq + (size_t)r * *row_bytes;
        float pad[INFER_QK_K];                         /* the last block, zero-padded */
        memset(pad, 0, sizeof pad);
        memcpy(pad, xr + (K - K % blck), (size_t)(K % blck) * sizeof(float));
        if (K >= blck) qt->quant(xr, dst, K - K % blck);
        qt->quant(pad, dst + infer_type_row_size(dt, K - K % blck), blck);
    }
    return xq;
}

/* One job computes up to INFER__MM_MAX matmuls that share their activations (q, k and v
 * of a layer; gate and up): one quantization of x, one pass of the pool, and the pieces of
 * all of them handed out from one counter, so a thread that finishes k goes on with v. */
#define INFER__MM_MAX 4
typedef struct infer__matmul_job {
    infer__cpu_ctx *c;
    int nw;                                   /* weights in this job */
    float *out[INFER__MM_MAX];
    const infer_tensor *w[INFER__MM_MAX];
    int64_t chunk[INFER__MM_MAX];             /* output rows per piece (a multiple of the tile's) */
    int64_t first[INFER__MM_MAX + 1];         /* the first piece of each weight; first[nw]: all */
    const float *x;
    const void *xq; size_t xq_row;            /* prepared activations and their row stride */
    infer__prep_job prep;                     /* prep.x != NULL: quantize x first, then wait */
    atomic_int prepped;                       /* threads done with their share of prep */
    infer__tile tile;
    int rows;
    atomic_llong next;                        /* the next piece to take */
} infer__matmul_job;

#define INFER__MM_XBLOCK ((size_t)1 << 20)
/* The output rows are cut into pieces of whole tiles, which the threads take one after
 * another from a shared counter: a thread that runs slower (another process on its core, a
 * busier memory channel) simply takes fewer pieces. Where a tile starts never depends on
 * the thread count, and each output is computed the same way by any thread, so no result
 * depends on it either. Within a piece, a thread walks weight-row tiles and, for each, the
 * tokens a tile at a time, so a tile's weight rows are read from memory once and stay in
 * cache for all the tokens. */
static void infer__matmul_task(void *arg, int ith, int nth) {
    infer__matmul_job *j = (infer__matmul_job *)arg;
    if (j->xq == NULL) {                 /* precise: one dequantized row serves every token */
        float *wr = j->c->wrow + (size_t)ith * j->c->wrow_len;
        for (int m = 0; m < j->nw; m++) {
            const infer_tensor *w = j->w[m];
            const int64_t K = w->ne[0], N = w->ne[1], n0 = N * ith / nth, n1 = N * (ith + 1) / nth;
            for (int64_t n = n0; n < n1; n++) {
                infer__dequant_row(w, n, wr);
                for (int r = 0; r < j->rows; r++) j->out[m][(size_t)r * N + n] = infer__dot_f32_plain(wr, j->x + (size_t)r * K, K);
            }
        }
        return;
    }
    if (j->prep.x) {                     /* the activations: every thread a share, then all wait */
        infer__prep_task(&j->prep, ith, nth);
        atomic_fetch_add_explicit(&j->prepped, 1, memory_order_release);
        infer__spin_until(&j->prepped, nth);
    }
    /* one token (decode): one weight row at a time, so the weights stream from memory in
     * address order, which the hardware prefetchers follow best (measured: 4 interleaved
     * rows streamed 35% slower) */
    const int R = j->rows == 1 ? 1 : j->tile.rows, C = j->tile.cols;
    /* Each row tile reads the activations of all tokens again: from L2 while they fit there,
     * from L3 when they do not (F16, K = 8192: 4 MiB for 128 tokens, a third slower). So
     * the tokens go in blocks of INFER__MM_XBLOCK bytes of activations (whole tiles: the
     * same tiles, so the same bits), each block against the whole piece of weight rows. */
    const size_t fit = INFER__MM_XBLOCK / j->xq_row / (size_t)C * (size_t)C;   /* tokens, whole tiles */
    const int TB = fit >= (size_t)j->rows ? j->rows : fit > (size_t)C ? (int)fit : C;
    const uint8_t *xq = (const uint8_t *)j->xq;
    for (;;) {
        const int64_t piece = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (piece >= j->first[j->nw]) break;
        int m = 0;
        while (piece >= j->first[m + 1]) m++;
        const infer_tensor *w = j->w[m];
        const int64_t K = w->ne[0], N = w->ne[1];
        const size_t wrow_bytes = infer_type_row_size(w->type, K);
        const uint8_t *wdata = (const uint8_t *)w->data;
        const infer__dot_fn dot = infer__matmul_dot(w->type);
        float *out = j->out[m];
        const int64_t n0 = (piece - j->first[m]) * j->chunk[m], n1 = n0 + j->chunk[m] < N ? n0 + j->chunk[m] : N;
        if (j->rows == 1 && j->tile.mv) j->tile.mv(K, wdata + (size_t)n0 * wrow_bytes, wrow_bytes, n1 - n0, xq, out + n0);
        else for (int tb = 0; tb < j->rows; tb += TB)       /* a block of tokens whose activations stay in L2 */
            for (int64_t n = n0; n < n1; n += R) {
                const int nr = n1 - n < R ? (int)(n1 - n) : R, te = tb + TB < j->rows ? tb + TB : j->rows;
                for (int r = tb; r < te; r += C) {
                    const int nc = te - r < C ? te - r : C;
                    infer__tile_run(&j->tile, dot, K, wdata + (size_t)n * wrow_bytes, wrow_bytes, nr, xq + (size_t)r * j->xq_row, j->xq_row, nc,
                                    out + (size_t)r * N + n, (size_t)N);
                }
            }
        if (w->scale != 1.0f)            /* I2_S's per-tensor scale, or a BitNet .scale */
            for (int r = 0; r < j->rows; r++)
                for (int64_t n = n0; n < n1; n++) out[(size_t)r * N + n] *= w->scale;
    }
}

/* out[m][r, n] = sum_k W_m[n, k] x[r, k] for the nw weights W_m (ne = {K, N_m}) that share
 * x [rows, K]: out[m] is [rows, N_m]. Weights of one type and K go through one job; a set
 * that mixes them, one job each. */
static void infer__cpu_matmul_n(void *ctx, int nw, float *const *outs, const infer_tensor *const *ws, const float *x, int rows) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    int same = nw <= INFER__MM_MAX;
    for (int m = 1; m < nw && same; m++) same = ws[m]->type == ws[0]->type && ws[m]->ne[0] == ws[0]->ne[0];
    if (!same) {
        for (int m = 0; m < nw; m++) infer__cpu_matmul_n(ctx, 1, outs + m, ws + m, x, rows);
        return;
    }
    infer__matmul_job job;
    memset(&job, 0, sizeof job);
    job.c = c; job.nw = nw; job.x = x; job.rows = rows;
    job.tile = infer__tile_for(ws[0]->type);
    job.xq = infer__cpu_prepare_x(c, ws[0], &job.tile, x, rows, &job.xq_row, &job.prep);
    if (!job.xq && (!c->precise || !c->wrow)) {   /* out of memory for scratch: NaN, never stale numbers */
        for (int m = 0; m < nw; m++)
            for (size_t i = 0; i < (size_t)rows * (size_t)ws[m]->ne[1]; i++) outs[m][i] = NAN;
        return;
    }
    /* about 8 pieces per thread and weight, each a whole number of tiles (at least 16 rows);
     * measured in decode: one piece per thread streams at 18 GB/s, 4 or 8 at 25 GB/s, 16 at 24 */
    for (int m = 0; m < nw; m++) {
        const int64_t N = ws[m]->ne[1], unit = job.tile.rows;
        int64_t chunk = (N + 8 * c->n_threads - 1) / (8 * c->n_threads);
        chunk = chunk < 16 ? 16 : chunk;
        job.out[m] = outs[m]; job.w[m] = ws[m];
        job.chunk[m] = (chunk + unit - 1) / unit * unit;
        job.first[m + 1] = job.first[m] + (N + job.chunk[m] - 1) / job.chunk[m];
    }
    atomic_init(&job.next, 0);
    atomic_init(&job.prepped, 0);
    infer__pool_run(c->pool, infer__matmul_task, &job);
}

/* out[r, n] = sum_k W[n, k] x[r, k]   W: ne = {K, N}, x: [rows, K], out: [rows, N] */
static void infer__cpu_matmul(void *ctx, float *out, const infer_tensor *w, const float *x, int rows) {
    infer__cpu_matmul_n(ctx, 1, &out, &w, x, rows);
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

/* RoPE: rotate each pair of a head's n_rot dims (the first ones, or those from rot_first on)
 * by theta_i = pos * base^(-2i/n_rot) (by -theta_i when `inverse`),
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
            const float cs = (float)(cos(theta) * mscale), sn = (float)(sin(theta) * mscale) * (rp->inverse ? -1.0f : 1.0f);
            for (int h = 0; h < n_heads; h++) {
                float *v = x + ((size_t)r * n_heads + h) * head_dim + rp->rot_first;
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

/* cache rows pos[r] <- k[r] (and v[r]; v NULL: a cache whose values are its keys) */
static void infer__cpu_kv_store(void *ctx, const infer_kv_view *kv, const float *k, const float *v, const int32_t *pos, int rows) {
    (void)ctx;
    for (int r = 0; r < rows; r++) {
        const size_t off = infer__kv_row(kv, pos[r]) * kv->kv_dim;
        for (int pass = 0; pass < (v ? 2 : 1); pass++) {
            const float *src = (pass ? v : k) + (size_t)r * kv->kv_dim;
            void *pool = pass ? kv->v : kv->k;
            if (kv->type == INFER_TYPE_F16) {
                infer_half *d = (infer_half *)pool + off;
                for (int i = 0; i < kv->kv_dim; i++) d[i] = infer__fp32_to_fp16(src[i]);
            } else {
                memcpy((float *)pool + off, src, (size_t)kv->kv_dim * sizeof(float));
            }
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

/* Ask for a cache row's hd values a few positions ahead: the rows a task reads are one
 * head's slice of each position (128 bytes of every kv_dim-wide row, possibly in another
 * page), a pattern the hardware prefetchers may not follow (perf showed the old attention
 * loops stalled on these loads at context 128-256; the prefetch alone was within noise
 * end to end, most of the gain came from the vector loops below). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* an asm statement: GCC 12 deleted these builtin prefetches as dead code here */
#define INFER__PF(p) __asm__ __volatile__("prefetcht0 %0" : : "m"(*(const char *)(p)))
#else
#define INFER__PF(p) __builtin_prefetch(p)
#endif
static inline void infer__kv_prefetch(const infer_kv_view *kv, const void *pool, size_t row, int col, int hd) {
    const size_t es = kv->type == INFER_TYPE_F16 ? 2 : 4;
    const char *a = (const char *)pool + (row * kv->kv_dim + (size_t)col) * es;
#if defined(__GNUC__)
    const size_t n = (size_t)hd * es;
    INFER__PF(a);
    if (n > 64) INFER__PF(a + 64);
    if (n > 128) { INFER__PF(a + 128); INFER__PF(a + 192); }
    if (n > 256) { INFER__PF(a + 256); INFER__PF(a + 320); INFER__PF(a + 384); INFER__PF(a + 448); }
#else
    (void)a;
#endif
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
    int tokens;              /* query rows (tokens) per task */
    float *scratch;          /* per thread: [tokens, heads, max_pos + 1] scores, then INFER__ATTN_KROWS converted cache rows */
    size_t scratch_len;
    const size_t *rows_of;   /* [max_pos + 1]: cache row of each position (via the block table) */
} infer__attn_job;

/* softmax of x[0..n-1] in place: e^(x - max) / sum. With AVX-512, 16 at a time with the
 * exp below (sums in 16 lanes, then one horizontal sum): a row's weights depend only on its
 * scores and n, never on how rows were batched. */
#if defined(INFER__SIMD_AVX512)
/* e^x, Cephes-style: x = k ln2 + r (ln2 in two parts, so r is nearly exact), a degree-7
 * polynomial for e^r on |r| <= ln2/2, then times 2^k (vscalefps: exact, underflows to 0);
 * within 2 ulp of expf. Inputs below -104 give 0 (e^-104 is below the smallest float). */
static inline __m512 infer__exp512(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);                  /* keeps a NaN */
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(y, k);
}
#endif
static void infer__softmax_inplace(float *x, int32_t n) {
    int32_t p = 0;
    float mx = -INFINITY, sum = 0;
#if defined(INFER__SIMD_AVX512)
    __m512 m = _mm512_set1_ps(-INFINITY), acc = _mm512_setzero_ps();
    for (; p < n; p += 16) {
        const __mmask16 k = infer__tail_mask(n - p);
        m = _mm512_mask_max_ps(m, k, m, _mm512_maskz_loadu_ps(k, x + p));
    }
    mx = _mm512_reduce_max_ps(m);
    for (p = 0; p < n; p += 16) {
        const __mmask16 k = infer__tail_mask(n - p);
        const __m512 e = infer__exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + p), _mm512_set1_ps(mx)));
        _mm512_mask_storeu_ps(x + p, k, e);
        acc = _mm512_mask_add_ps(acc, k, acc, e);
    }
    sum = _mm512_reduce_add_ps(acc);
    for (p = 0; p < n; p += 16) {
        const __mmask16 k = infer__tail_mask(n - p);
        _mm512_mask_storeu_ps(x + p, k, _mm512_div_ps(_mm512_maskz_loadu_ps(k, x + p), _mm512_set1_ps(sum)));
    }
#else
    for (p = 0; p < n; p++) mx = x[p] > mx ? x[p] : mx;
    for (p = 0; p < n; p++) { x[p] = expf(x[p] - mx); sum += x[p]; }
    for (p = 0; p < n; p++) x[p] /= sum;
#endif
}

#define INFER__KV_AHEAD 8           /* cache rows prefetched this many positions ahead */
#define INFER__ATTN_KROWS 16        /* cache rows converted to f32 at a time (per thread scratch) */
#if defined(INFER__SIMD_AVX512)
/* Lane i of the result = the sum of the 16 lanes of a[i], by the same tree for every i:
 *   ((l[4b] + l[4b+2]) + (l[4b+1] + l[4b+3]))   within each 128-bit block b, then
 *   (block 0 + block 1) + (block 2 + block 3)
 * (a transpose folded into the additions: 30 shuffles and adds for 16 sums) */
static inline __m512 infer__hsum16x16(const __m512 a[16]) {
    __m512 u[8], v[4];
    for (int i = 0; i < 8; i++) u[i] = _mm512_add_ps(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 4; i++) v[i] = _mm512_add_ps(_mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0x44), _mm512_shuffle_ps(u[2 * i], u[2 * i + 1], 0xEE));
    /* v[i], block b: the block-b sums of a[4i], a[4i+1], a[4i+2], a[4i+3] */
    const __m512 w0 = _mm512_add_ps(_mm512_shuffle_f32x4(v[0], v[1], 0x88), _mm512_shuffle_f32x4(v[0], v[1], 0xDD));
    const __m512 w1 = _mm512_add_ps(_mm512_shuffle_f32x4(v[2], v[3], 0x88), _mm512_shuffle_f32x4(v[2], v[3], 0xDD));
    return _mm512_add_ps(_mm512_shuffle_f32x4(w0, w1, 0x88), _mm512_shuffle_f32x4(w0, w1, 0xDD));
}
/* s[i] = scale * (q . k_i) for i < np, k_i = kt + i * hd (16 rows, hd a multiple of 16):
 * each score is built by the same operations whichever of the 16 slots holds its row, so
 * scores do not depend on how positions fall into blocks (decode vs prompt) */
static inline void infer__attn_scores16(const float *q, const float *kt, int hd, int np, float scale, float *s) {
    __m512 a[16];
    INFER__UNROLL for (int i = 0; i < 16; i++) a[i] = _mm512_setzero_ps();
    for (int c = 0; c < hd; c += 16) {
        const __m512 qc = _mm512_loadu_ps(q + c);
        INFER__UNROLL for (int i = 0; i < 16; i++) a[i] = _mm512_fmadd_ps(qc, _mm512_loadu_ps(kt + (size_t)i * hd + c), a[i]);
    }
    _mm512_mask_storeu_ps(s, infer__tail_mask(np), _mm512_mul_ps(infer__hsum16x16(a), _mm512_set1_ps(scale)));
}
/* out[h][0..63] = sum over p < n of w[h][p] * V[p][col..col+63], for nh (1..4) heads whose
 * weights are w + h * wstride: each sum in p order with a multiply then an add, exactly
 * as infer__axpy_f32_8 builds it, but the 4 x 64 sums stay in registers. */
static void infer__attn_wv_avx512(const infer_kv_view *kv, const size_t *rows_of, int32_t n, int col, const float *w,
                                  size_t wstride, int nh, float *out, int hd) {
    __m512 acc[4][4];
    INFER__UNROLL for (int h = 0; h < 4; h++) INFER__UNROLL for (int c = 0; c < 4; c++) acc[h][c] = _mm512_setzero_ps();
    const int f16 = kv->type == INFER_TYPE_F16;
    for (int32_t p = 0; p < n; p++) {
        __m512 v[4];
        const size_t at = rows_of[p] * kv->kv_dim + (size_t)col;
        if (p + INFER__KV_AHEAD < n) infer__kv_prefetch(kv, kv->v, rows_of[p + INFER__KV_AHEAD], col, 64);
        if (f16) {
            const infer_half *src = (const infer_half *)kv->v + at;
            INFER__UNROLL for (int c = 0; c < 4; c++) v[c] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + 16 * c)));
        } else {
            const float *src = (const float *)kv->v + at;
            INFER__UNROLL for (int c = 0; c < 4; c++) v[c] = _mm512_loadu_ps(src + 16 * c);
        }
        INFER__UNROLL for (int h = 0; h < 4; h++) {
            if (h >= nh) break;
            const __m512 wh = _mm512_set1_ps(w[(size_t)h * wstride + p]);
            INFER__UNROLL for (int c = 0; c < 4; c++) acc[h][c] = _mm512_add_ps(acc[h][c], _mm512_mul_ps(wh, v[c]));
        }
    }
    INFER__UNROLL for (int h = 0; h < 4; h++) {
        if (h >= nh) break;
        INFER__UNROLL for (int c = 0; c < 4; c++) _mm512_storeu_ps(out + (size_t)h * hd + 16 * c, acc[h][c]);
    }
}
#endif

/* One task: a run of `tokens` query rows x a run of `heads` query heads sharing a KV head.
 * Every cache row is read (and converted) once for all of them: a prompt's queries are
 * handled several at a time, as its matmuls are. For query row t, head h:
 *   o_th = sum_j softmax_j(q_th . k_j * scale) v_j   over cache positions j <= pos[t]
 * Each (t, h) sees the same operations in the same order as it would alone, so results do
 * not depend on how rows are grouped. */
static void infer__attn_task(void *arg, int ith, int nth) {
    infer__attn_job *j = (infer__attn_job *)arg;
    const infer_kv_view *kv = j->kv;
    const int group = j->n_head / j->n_head_kv, heads = j->heads, hd = j->head_dim, TB = j->tokens;
    float *s = j->scratch + (size_t)ith * j->scratch_len, *tmp = s + (j->scratch_len - (size_t)INFER__ATTN_KROWS * hd);
    const size_t stride = (j->scratch_len - (size_t)INFER__ATTN_KROWS * hd) / (size_t)(heads * TB);   /* scores of one (row, head) */
    const int per_block = j->n_head / heads, blocks = (j->rows + TB - 1) / TB;
    for (int task = ith; task < blocks * per_block; task += nth) {
        const int r0 = task / per_block * TB, h0 = task % per_block * heads, g = h0 / group;
        const int tb = j->rows - r0 < TB ? j->rows - r0 : TB;
        int32_t n[64], nmax = 0;            /* positions seen by each row: 0..pos[r] */
        for (int t = 0; t < tb; t++) { n[t] = j->pos[r0 + t] + 1; nmax = n[t] > nmax ? n[t] : nmax; }
#if defined(INFER__SIMD_AVX512)
        if (hd % 16 == 0) {               /* 16 positions at a time (infer__attn_scores16) */
            for (int32_t p0 = 0; p0 < nmax; p0 += 16) {
                const int np = nmax - p0 < 16 ? nmax - p0 : 16;
                for (int i = 0; i < np; i++) {
                    if (p0 + 16 + i < nmax) infer__kv_prefetch(kv, kv->k, j->rows_of[p0 + 16 + i], g * hd, hd);
                    const float *k = infer__kv_row_f32(kv, kv->k, j->rows_of[p0 + i], g * hd, hd, tmp + (size_t)i * hd);
                    if (k != tmp + (size_t)i * hd) memcpy(tmp + (size_t)i * hd, k, sizeof(float) * (size_t)hd);
                }
                for (int i = np; i < 16; i++) memset(tmp + (size_t)i * hd, 0, sizeof(float) * (size_t)hd);
                for (int t = 0; t < tb; t++) {
                    if (p0 >= n[t]) continue;
                    const float *q = j->q + ((size_t)(r0 + t) * j->n_head + (size_t)h0) * hd;
                    for (int h = 0; h < heads; h++)
                        infer__attn_scores16(q + (size_t)h * hd, tmp, hd, n[t] - p0 < 16 ? n[t] - p0 : 16, j->scale, s + (t * heads + h) * stride + p0);
                }
            }
        } else
#endif
        for (int32_t p = 0; p < nmax; p++) {
            if (p + INFER__KV_AHEAD < nmax) infer__kv_prefetch(kv, kv->k, j->rows_of[p + INFER__KV_AHEAD], g * hd, hd);
            const float *k = infer__kv_row_f32(kv, kv->k, j->rows_of[p], g * hd, hd, tmp);
            for (int t = 0; t < tb; t++) {
                if (p >= n[t]) continue;
                const float *q = j->q + ((size_t)(r0 + t) * j->n_head + (size_t)h0) * hd;
                for (int h = 0; h < heads; h++) s[(t * heads + h) * stride + p] = infer__dot_f32_16(q + (size_t)h * hd, k, hd) * j->scale;
            }
        }
        for (int t = 0; t < tb; t++)
            for (int h = 0; h < heads; h++) infer__softmax_inplace(s + (t * heads + h) * stride, n[t]);
#if defined(INFER__SIMD_AVX512)
        if (hd % 64 == 0) {              /* out += w v with the sums held in registers: same bits */
            for (int t = 0; t < tb; t++)
                for (int ha = 0; ha < heads; ha += 4)
                    for (int d0 = 0; d0 < hd; d0 += 64)
                        infer__attn_wv_avx512(kv, j->rows_of, n[t], g * hd + d0, s + (size_t)(t * heads + ha) * stride, stride,
                                              heads - ha < 4 ? heads - ha : 4, j->out + ((size_t)(r0 + t) * j->n_head + (size_t)(h0 + ha)) * hd + d0, hd);
            continue;
        }
#endif
        for (int t = 0; t < tb; t++) memset(j->out + ((size_t)(r0 + t) * j->n_head + (size_t)h0) * hd, 0, sizeof(float) * (size_t)heads * hd);
        for (int32_t p = 0; p < nmax; p++) {
            if (p + INFER__KV_AHEAD < nmax) infer__kv_prefetch(kv, kv->v, j->rows_of[p + INFER__KV_AHEAD], g * hd, hd);
            const float *v = infer__kv_row_f32(kv, kv->v, j->rows_of[p], g * hd, hd, tmp);
            for (int t = 0; t < tb; t++) {
                if (p >= n[t]) continue;
                float *o = j->out + ((size_t)(r0 + t) * j->n_head + (size_t)h0) * hd;
                for (int h = 0; h < heads; h++) infer__axpy_f32_8(o + (size_t)h * hd, s[(t * heads + h) * stride + p], v, hd);
            }
        }
    }
}

static void infer__cpu_attention(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos,
                                 int rows, int n_head, int n_head_kv, int head_dim, float scale) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    int32_t maxp = 0;
    for (int r = 0; r < rows; r++) if (pos[r] > maxp) maxp = pos[r];
    /* 4 query rows per task (a prompt), whole GQA groups per task, halved while that leaves
     * threads without two tasks each */
    const int tokens = rows >= 4 * c->n_threads ? 4 : 1;
    int heads = n_head / n_head_kv;
    while (heads % 2 == 0 && (rows + tokens - 1) / tokens * (n_head / heads) < 2 * c->n_threads) heads /= 2;
    infer__attn_job j = { out, q, kv, pos, rows, n_head, n_head_kv, head_dim, scale, heads, tokens, NULL, 0, NULL };
    j.scratch_len = (size_t)tokens * (size_t)heads * (size_t)(maxp + 1) + (size_t)INFER__ATTN_KROWS * head_dim;
    j.scratch = (float *)INFER_MALLOC((size_t)c->n_threads * j.scratch_len * sizeof(float));
    size_t *rows_of = (size_t *)INFER_MALLOC((size_t)(maxp + 1) * sizeof(size_t));
    if (j.scratch && rows_of) {
        for (int32_t p = 0; p <= maxp; p++) rows_of[p] = infer__kv_row(kv, p);
        j.rows_of = rows_of;
        infer__pool_run(c->pool, infer__attn_task, &j);
    } else {                              /* out of memory for scratch: NaN, never stale numbers */
        for (size_t i = 0; i < (size_t)rows * (size_t)n_head * (size_t)head_dim; i++) out[i] = NAN;
    }
    INFER_FREE(j.scratch);
    INFER_FREE(rows_of);
}

/* SwiGLU: out = silu(gate) * up, silu(z) = z / (1 + e^-z); with AVX-512 16 at a time with
 * infer__exp512 (within 2 ulp of expf) */
#if defined(INFER__SIMD_AVX512)
static inline __m512 infer__silu512(__m512 z) {
    return _mm512_div_ps(z, _mm512_add_ps(_mm512_set1_ps(1.0f), infer__exp512(_mm512_sub_ps(_mm512_setzero_ps(), z))));
}
#endif
typedef struct { float *out; const float *gate, *up; int act; float limit; } infer__glu_args;
static void infer__swiglu_range(void *arg, int64_t i0, int64_t i1) {
    const infer__glu_args *a = (const infer__glu_args *)arg;
    int64_t i = i0;
#if defined(INFER__SIMD_AVX512)
    for (; i < i1; i += 16) {
        const __mmask16 m = infer__tail_mask(i1 - i);
        const __m512 s = infer__silu512(_mm512_maskz_loadu_ps(m, a->gate + i));
        _mm512_mask_storeu_ps(a->out + i, m, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, a->up + i)));
    }
#endif
    for (; i < i1; i++) a->out[i] = a->gate[i] / (1.0f + expf(-a->gate[i])) * a->up[i];
}
static void infer__cpu_swiglu(void *ctx, float *out, const float *gate, const float *up, int64_t n) {
    infer__glu_args a = { out, gate, up, 0, 0.0f };
    infer__cpu_par(ctx, n, 4, infer__swiglu_range, &a);
}

/* Gated linear unit with the activation `act` (INFER__ACT_*): out = act(gate) * up.
 *   SiLU:   act(z) = z / (1 + e^-z)                  (SwiGLU)
 *   ReLU^2: act(z) = max(z, 0)^2                     (BitNet b1.58-2B-4T's "relu2")
 * With limit L > 0 (DeepSeek-V4's clamped SwiGLU) the inputs are clamped first:
 *   out = act(min(gate, L)) * clamp(up, -L, L) */
enum { INFER__ACT_SILU = 0, INFER__ACT_RELU2 = 1 };
static void infer__glu_range(void *arg, int64_t i0, int64_t i1) {
    const infer__glu_args *a = (const infer__glu_args *)arg;
    const float limit = a->limit;
    for (int64_t i = i0; i < i1; i++) {
        float g = a->gate[i], u = a->up[i];
        if (limit > 0) { g = fminf(g, limit); u = fminf(fmaxf(u, -limit), limit); }
        if (a->act == INFER__ACT_SILU) { a->out[i] = g / (1.0f + expf(-g)) * u; continue; }
        const float r = g > 0 ? g : 0.0f;
        a->out[i] = r * r * u;
    }
}
static void infer__cpu_glu(void *ctx, float *out, const float *gate, const float *up, int64_t n, int act, float limit) {
    if (limit <= 0 && act == INFER__ACT_SILU) { infer__cpu_swiglu(ctx, out, gate, up, n); return; }
    infer__glu_args a = { out, gate, up, act, limit };
    infer__cpu_par(ctx, n, 4, infer__glu_range, &a);
}

/* ---- hybrid and mixture-of-experts ops ---- */
static void infer__cpu_zero(void *ctx, void *p, size_t bytes) { (void)ctx; memset(p, 0, bytes); }

typedef struct { float *dst; const float *src; int dst_stride, src_stride, dim; } infer__copy_args;
static void infer__copy_range(void *arg, int64_t r0, int64_t r1) {
    const infer__copy_args *a = (const infer__copy_args *)arg;
    for (int64_t r = r0; r < r1; r++) memcpy(a->dst + (size_t)r * a->dst_stride, a->src + (size_t)r * a->src_stride, (size_t)a->dim * sizeof(float));
}
static void infer__cpu_copy_rows(void *ctx, float *dst, int dst_stride, const float *src, int src_stride, int rows, int dim) {
    infer__copy_args a = { dst, src, dst_stride, src_stride, dim };
    infer__cpu_par(ctx, rows, dim / 4, infer__copy_range, &a);
}

static inline float infer__sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

typedef struct { float *y; const float *g; int dim, g_cols; } infer__msig_args;
static void infer__mul_sigmoid_rows(void *arg, int64_t r0, int64_t r1) {
    const infer__msig_args *a = (const infer__msig_args *)arg;
    for (int64_t r = r0; r < r1; r++)
        for (int i = 0; i < a->dim; i++) a->y[(size_t)r * a->dim + i] *= infer__sigmoid(a->g[(size_t)r * a->g_cols + (a->g_cols == 1 ? 0 : i)]);
}
static void infer__cpu_mul_sigmoid(void *ctx, float *y, const float *g, int rows, int dim, int g_cols) {
    infer__msig_args a = { y, g, dim, g_cols };
    infer__cpu_par(ctx, rows, dim * 4, infer__mul_sigmoid_rows, &a);
}

/* L2 normalisation: x / max(||x||, eps) -- eps bounds the norm, it is not added under the root */
static void infer__l2norm_rows(void *arg, int64_t r0, int64_t r1) {
    const infer__norm_args *a = (const infer__norm_args *)arg;
    for (int64_t r = r0; r < r1; r++) {
        float *v = a->out + (size_t)r * a->dim;
        double ss = 0;
        for (int i = 0; i < a->dim; i++) ss += (double)v[i] * v[i];
        const float scale = 1.0f / fmaxf(sqrtf((float)ss), a->eps);
        for (int i = 0; i < a->dim; i++) v[i] *= scale;
    }
}
static void infer__cpu_l2norm(void *ctx, float *x, int rows, int dim, float eps) {
    infer__norm_args a = { x, NULL, NULL, dim, eps };
    infer__cpu_par(ctx, rows, dim, infer__l2norm_rows, &a);
}

/* ---- mixture of experts ----
 * A router scores the experts for each token; the token goes through the n_used best and
 * their outputs are mixed with the router's weights:
 *   p = softmax(W_router h)                       [n_expert]
 *       (or sigmoid, or sqrt(softplus) for DeepSeek-V4, per expert_gating_func)
 *   S = the n_used largest p + bias (ties: lower id; bias only steers the choice, DeepSeek's
 *       load balancing), or the experts a table gives the token id (hash routing)
 *   w_e = p_e (/ sum_S p when renormalised) * scale
 *   y = sum_{e in S} w_e * W_down_e( silu(W_gate_e h) * (W_up_e h) ) */
enum { INFER__GATING_SOFTMAX = 1, INFER__GATING_SIGMOID = 2, INFER__GATING_SQRT_SOFTPLUS = 4 };
static inline float infer__softplus(float z) { return z > 20.0f ? z : log1pf(expf(z)); }
static void infer__cpu_moe_route(void *ctx, int32_t *ids, float *weights, const float *logits, int rows, int n_expert,
                                 int n_used, int gating, int norm, float scale, const float *bias, int ids_given) {
    (void)ctx;
    float *p = (float *)INFER_MALLOC((size_t)n_expert * sizeof(float));
    if (!p) return;
    for (int r = 0; r < rows; r++) {
        const float *l = logits + (size_t)r * n_expert;
        if (gating == INFER__GATING_SIGMOID) {
            for (int e = 0; e < n_expert; e++) p[e] = infer__sigmoid(l[e]);
        } else if (gating == INFER__GATING_SQRT_SOFTPLUS) {
            for (int e = 0; e < n_expert; e++) p[e] = sqrtf(infer__softplus(l[e]));
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
            int best = ids_given ? id[s] : -1;
            for (int e = 0; e < n_expert && !ids_given; e++) {
                int taken = 0;
                for (int u = 0; u < s; u++) taken |= id[u] == e;
                const float v = bias ? p[e] + bias[e] : p[e];
                if (!taken && (best < 0 || v > (bias ? p[best] + bias[best] : p[best]))) best = e;
            }
            id[s] = best;
            w[s] = p[best];
            wsum += p[best];
        }
        /* + 1e-20: a sum that underflowed to 0 gives weights 0, not NaN */
        for (int s = 0; s < n_used; s++) w[s] = (norm ? w[s] / (wsum + 1e-20f) : w[s]) * scale;
    }
    INFER_FREE(p);
}

typedef struct infer__matmul_id_job {
    infer__cpu_ctx *c;
    float *out;
    const infer_tensor *w;
    const float *x;
    const void *xq; size_t xq_row;   /* prepared activations, one row per output row, in `order` */
    infer__tile tile;
    const int32_t *order;    /* output rows (token * n_used + slot) grouped by expert */
    const int32_t *start;    /* [n_expert + 1]: expert e owns order[start[e] .. start[e+1]) */
    int n_used, x_per_slot;
} infer__matmul_id_job;

/* Each thread owns a run of the output columns N (in whole tiles, as the matmul), for every
 * expert in use. An expert's tokens are contiguous in the prepared activations, so they go
 * through the same tiles as a plain matmul (and give the same numbers), into a small
 * buffer that is then scattered to the tokens' output rows. */
static void infer__matmul_id_task(void *arg, int ith, int nth) {
    infer__matmul_id_job *j = (infer__matmul_id_job *)arg;
    const infer_tensor *w = j->w;
    const int64_t K = w->ne[0], N = w->ne[1], E = w->ne[2];
    const size_t wrow_bytes = infer_type_row_size(w->type, K);
    if (!j->xq) {                        /* precise: dequantized rows, f32 dots */
        const int64_t n0 = N * ith / nth, n1 = N * (ith + 1) / nth;
        float *wr = j->c->wrow + (size_t)ith * j->c->wrow_len;
        for (int64_t e = 0; e < E; e++)
            for (int64_t n = n0; n < n1 && j->start[e] < j->start[e + 1]; n++) {
                infer__dequant_row(w, e * N + n, wr);             /* the experts' rows are contiguous */
                for (int32_t o = j->start[e]; o < j->start[e + 1]; o++) {
                    const int32_t row = j->order[o], xrow = j->x_per_slot ? row : row / j->n_used;
                    j->out[(size_t)row * N + n] = infer__dot_f32_plain(wr, j->x + (size_t)xrow * K, K);
                }
            }
        return;
    }
    const int R = j->tile.rows, C = j->tile.cols;
    const int64_t tiles = (N + R - 1) / R, n0 = tiles * ith / nth * R, n1 = tiles * (ith + 1) / nth * R < N ? tiles * (ith + 1) / nth * R : N;
    const infer__dot_fn dot = infer__matmul_dot(w->type);
    const uint8_t *xq = (const uint8_t *)j->xq;
    float tmp[6 * 4];                    /* one tile's outputs (at most 6 x 4) */
    for (int64_t e = 0; e < E; e++) {
        const uint8_t *we = (const uint8_t *)w->data + (size_t)e * (size_t)N * wrow_bytes;
        for (int64_t n = n0; n < n1 && j->start[e] < j->start[e + 1]; n += R) {
            const int nr = n1 - n < R ? (int)(n1 - n) : R;
            for (int32_t o = j->start[e]; o < j->start[e + 1]; o += C) {
                const int nc = j->start[e + 1] - o < C ? j->start[e + 1] - o : C;
                const uint8_t *xo = xq + (size_t)o * j->xq_row;
                infer__tile_run(&j->tile, dot, K, we + (size_t)n * wrow_bytes, wrow_bytes, nr, xo, j->xq_row, nc, tmp, (size_t)R);
                for (int c = 0; c < nc; c++)
                    for (int r = 0; r < nr; r++) j->out[(size_t)j->order[o + c] * N + n + r] = tmp[c * R + r] * w->scale;
            }
        }
    }
}

static void infer__cpu_matmul_id(void *ctx, float *out, const infer_tensor *w, const float *x, const int32_t *ids,
                                 int rows, int n_used, int x_per_slot) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    const int64_t E = w->ne[2], K = w->ne[0];
    const int n_out = rows * n_used;
    int32_t *start = (int32_t *)infer__calloc((size_t)E + 1, sizeof(int32_t));
    int32_t *order = (int32_t *)infer__calloc((size_t)n_out, sizeof(int32_t));
    int32_t *fill = (int32_t *)infer__calloc((size_t)E, sizeof(int32_t));
    float *xs = c->precise ? NULL : (float *)INFER_MALLOC((size_t)n_out * (size_t)K * sizeof(float));
    if (start && order && fill && (c->precise || xs)) {
        for (int i = 0; i < n_out; i++) start[ids[i] + 1]++;      /* counting sort by expert */
        for (int64_t e = 0; e < E; e++) start[e + 1] += start[e];
        for (int i = 0; i < n_out; i++) order[start[ids[i]] + fill[ids[i]]++] = i;
        infer__matmul_id_job job = { c, out, w, x, NULL, 0, infer__tile_for(w->type), order, start, n_used, x_per_slot };
        /* the fast path wants each expert's tokens side by side: gather them in `order` */
        for (int o = 0; xs && o < n_out; o++)
            memcpy(xs + (size_t)o * K, x + (size_t)(x_per_slot ? order[o] : order[o] / n_used) * K, (size_t)K * sizeof(float));
        job.xq = infer__cpu_prepare_x(c, w, &job.tile, xs ? xs : x, n_out, &job.xq_row, NULL);
        if (job.xq || c->wrow) infer__pool_run(c->pool, infer__matmul_id_task, &job);
    }
    INFER_FREE(fill); INFER_FREE(start); INFER_FREE(order); INFER_FREE(xs);
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
typedef struct { float *out; const float *x; float *state; const float *w; int rows, channels, kernel; } infer__conv_args;
static void infer__conv1d_range(void *arg, int64_t c0, int64_t c1) {
    const infer__conv_args *a = (const infer__conv_args *)arg;
    float *out = a->out, *state = a->state;
    const float *x = a->x, *w = a->w;
    const int rows = a->rows, channels = a->channels, kernel = a->kernel, H = kernel - 1;
#if defined(INFER__SIMD_AVX512)
    /* 16 channels side by side (the last group masked), the same products and sums in the
     * same order as the scalar loop; the SiLU with infer__exp512 */
    for (int64_t c = c0; c < c1; c += 16) {
        const __mmask16 m = infer__tail_mask(c1 - c);
        const __m512i wi = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(kernel));
        __m512 wc[INFER__MAX_CONV], hist[INFER__MAX_CONV];
        for (int j = 0; j <= H; j++) wc[j] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, wi, w + (size_t)c * kernel + j, 4);
        for (int j = 0; j < H; j++) hist[j] = _mm512_maskz_loadu_ps(m, state + (size_t)j * channels + c);
        for (int t = 0; t < rows; t++) {
            const __m512 xt = _mm512_maskz_loadu_ps(m, x + (size_t)t * channels + c);
            __m512 y = _mm512_mul_ps(wc[H], xt);
            for (int j = 0; j < H; j++) y = _mm512_add_ps(y, _mm512_mul_ps(wc[j], hist[j]));
            for (int j = 0; j + 1 < H; j++) hist[j] = hist[j + 1];
            if (H > 0) hist[H - 1] = xt;
            _mm512_mask_storeu_ps(out + (size_t)t * channels + c, m, infer__silu512(y));
        }
        for (int j = 0; j < H; j++) _mm512_mask_storeu_ps(state + (size_t)j * channels + c, m, hist[j]);
    }
#else
    for (int64_t c = c0; c < c1; c++) {
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
#endif
}
static void infer__cpu_conv1d_silu(void *ctx, float *out, const float *x, float *state, const float *w, int rows, int channels, int kernel) {
    assert(kernel - 1 < INFER__MAX_CONV);
    infer__conv_args a = { out, x, state, w, rows, channels, kernel };
    /* a channel is computed the same way in any lane: the split across threads is free */
    infer__cpu_par(ctx, channels, (int64_t)rows * kernel, infer__conv1d_range, &a);
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

/* C[m, n] = sum_i A[m, i] B[n, i]   (A: [M, K] rows lda apart, B: [N, K] rows ldb apart).
 * Through the F32 matmul tile (>>tiles) where this build has one: B's rows are its weight
 * rows, A's its tokens. */
static void infer__gemm_nt(float *C, int ldc, const float *A, int lda, const float *B, int ldb, int M, int N, int K) {
    const infer__tile t = infer__tile_for(INFER_TYPE_F32);
    if (!t.fn) {
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) C[(size_t)m * ldc + n] = infer__dot_f32_plain(A + (size_t)m * lda, B + (size_t)n * ldb, K);
        return;
    }
    for (int n = 0; n < N; n += t.rows)
        for (int m = 0; m < M; m += t.cols)
            t.fn(K, (const uint8_t *)(B + (size_t)n * ldb), (size_t)ldb * sizeof(float), N - n < t.rows ? N - n : t.rows,
                 (const uint8_t *)(A + (size_t)m * lda), (size_t)lda * sizeof(float), M - m < t.cols ? M - m : t.cols, C + (size_t)m * ldc + n, (size_t)ldc);
}

/* y[i] += a x[i], i < n */
static void infer__axpy(float *y, float a, const float *x, int n) {
    int i = 0;
#if defined(INFER__SIMD_AVX512)
    const __m512 av = _mm512_set1_ps(a);
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
#endif
    for (; i < n; i++) y[i] += a * x[i];
}

/* dst[j, i] = src[i, j]   (src: [rows, cols] rows ld apart; dst: [cols, rows] rows ldd apart) */
static void infer__transpose(float *dst, int ldd, const float *src, int ld, int rows, int cols) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) dst[(size_t)j * ldd + i] = src[(size_t)i * ld + j];
}

/* scratch floats of one chunk (one thread) */
static size_t infer__dn_scratch(int d_k, int d_v) {
    const size_t C = INFER__DN_CHUNK;
    return C + 3 * C * C + 3 * C * (size_t)d_v + C * (size_t)d_k + (size_t)d_v * d_k;
}

static void infer__deltanet_chunk(const infer__dn_job *j, int h, int t0, int L, float *scr) {
    const int d_k = j->d_k, d_v = j->d_v, kh = h % j->n_k, C = INFER__DN_CHUNK;
    const int ldk = j->n_k * d_k;                              /* row stride of q and k */
    const float *Q = j->q + (size_t)t0 * ldk + (size_t)kh * d_k, *K = j->k + (size_t)t0 * ldk + (size_t)kh * d_k;
    float *S = j->state + (size_t)h * d_v * d_k;               /* S0 column by column: [d_v, d_k] */
    float *G = scr, *KK = G + C, *QK = KK + (size_t)C * C, *W = QK + (size_t)C * C, *QS = W + (size_t)C * d_v;
    float *WT = QS + (size_t)C * d_v, *KdT = WT + (size_t)C * d_v, *dS = KdT + (size_t)C * d_k, *D = dS + (size_t)d_v * d_k;
    float beta[INFER__DN_CHUNK];
    for (int t = 0; t < L; t++) {
        G[t] = (t ? G[t - 1] : 0.0f) + j->g[(size_t)(t0 + t) * j->n_v + h];
        beta[t] = j->beta[(size_t)(t0 + t) * j->n_v + h];
    }
    for (int t = 0; t < L; t++) {                              /* D[t, r] = e^{G_t - G_r}, r <= t */
        int r = 0;
#if defined(INFER__SIMD_AVX512)
        for (; r <= t; r += 16) {
            const __mmask16 m = infer__tail_mask(t + 1 - r);
            _mm512_mask_storeu_ps(D + (size_t)t * C + r, m, infer__exp512(_mm512_sub_ps(_mm512_set1_ps(G[t]), _mm512_maskz_loadu_ps(m, G + r))));
        }
#endif
        for (; r <= t; r++) D[(size_t)t * C + r] = expf(G[t] - G[r]);
    }
    infer__gemm_nt(W, d_v, K, ldk, S, d_k, L, d_v, d_k);       /* K S0  -> W     [L, d_v] */
    infer__gemm_nt(QS, d_v, Q, ldk, S, d_k, L, d_v, d_k);      /* Q S0           [L, d_v] */
    infer__gemm_nt(KK, C, K, ldk, K, ldk, L, L, d_k);          /* K K^T          [L, L]   */
    infer__gemm_nt(QK, C, Q, ldk, K, ldk, L, L, d_k);          /* Q K^T          [L, L]   */
    for (int t = 0; t < L; t++) {                              /* B, then forward substitution */
        const float *v = j->v + ((size_t)(t0 + t) * j->n_v + h) * d_v, eg = expf(G[t]);
        float *w = W + (size_t)t * d_v;
        for (int c = 0; c < d_v; c++) w[c] = beta[t] * (v[c] - eg * w[c]);
        for (int r = 0; r < t; r++) infer__axpy(w, -beta[t] * D[(size_t)t * C + r] * KK[(size_t)t * C + r], W + (size_t)r * d_v, d_v);
    }
    /* O = scale (e^G (Q S0) + P W), P = causal(e^{G_t - G_r}) * (Q K^T): P in place of QK */
    for (int t = 0; t < L; t++)
        for (int r = 0; r < L; r++) QK[(size_t)t * C + r] = r <= t ? D[(size_t)t * C + r] * QK[(size_t)t * C + r] : 0.0f;
    infer__transpose(WT, C, W, d_v, L, d_v);                   /* W^T            [d_v, L] */
    infer__gemm_nt(W, d_v, QK, C, WT, C, L, d_v, L);           /* P W -> W       [L, d_v] */
    for (int t = 0; t < L; t++) {
        float *o = j->out + ((size_t)(t0 + t) * j->n_v + h) * d_v;
        const float eg = expf(G[t]), *pw = W + (size_t)t * d_v, *qs = QS + (size_t)t * d_v;
        for (int c = 0; c < d_v; c++) o[c] = (eg * qs[c] + pw[c]) * j->scale;
    }
    /* S = e^{G_end} S0 + W^T K_d, K_d = the keys decayed to the chunk's end; S is [d_v, d_k] */
    const float g_end = G[L - 1], e_end = expf(g_end);
    for (int r = 0; r < L; r++) {
        const float d = expf(g_end - G[r]);
        for (int i = 0; i < d_k; i++) KdT[(size_t)i * C + r] = d * K[(size_t)r * ldk + i];
    }
    infer__gemm_nt(dS, d_k, WT, C, KdT, C, d_v, d_k, L);       /* W^T K_d        [d_v, d_k] */
    for (size_t i = 0; i < (size_t)d_v * d_k; i++) S[i] = e_end * S[i] + dS[i];
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
    infer__dn_job j = { out, q, k, v, g, beta, state, rows, n_k, n_v, d_k, d_v, scale, NULL, 0 };
    j.scratch_per_thread = infer__dn_scratch(d_k, d_v);
    j.scratch = (float *)INFER_MALLOC((size_t)c->n_threads * j.scratch_per_thread * sizeof(float));
    if (!j.scratch) return;
    infer__pool_run(c->pool, infer__deltanet_chunked_task, &j);
    INFER_FREE(j.scratch);
}

/* ---- deepseek4: hyper-connections, the KV compressor, the indexer, sparse attention ----
 * The maths of each op is in its table entry (>>api-kernels) and, as a whole, at >>deepseek4.
 * Every op here is plain loops over rows; the attention and the indexer spread their query
 * rows over the pool. */
#define INFER__MAX_HC 16

/* pre, post and the Sinkhorn-normalised C of one token, from its mixes */
static void infer__hc_mixes(const float *m, const float *base, const float *scale, int n_hc, int iters, float eps,
                            float *pre, float *post, float *C) {
    for (int i = 0; i < n_hc; i++) pre[i] = infer__sigmoid(m[i] * scale[0] + base[i]) + eps;
    if (!post) return;
    for (int i = 0; i < n_hc; i++) post[i] = 2.0f * infer__sigmoid(m[n_hc + i] * scale[1] + base[n_hc + i]);
    for (int s = 0; s < n_hc; s++) {            /* softmax over the destinations of source s */
        float *c = C + s * n_hc, mx = -INFINITY, sum = 0;
        for (int d = 0; d < n_hc; d++) { c[d] = m[2 * n_hc + s * n_hc + d] * scale[2] + base[2 * n_hc + s * n_hc + d]; mx = fmaxf(mx, c[d]); }
        for (int d = 0; d < n_hc; d++) { c[d] = expf(c[d] - mx); sum += c[d]; }
        for (int d = 0; d < n_hc; d++) c[d] = c[d] / sum + eps;
    }
    /* Sinkhorn: columns to sum 1, then (iters - 1) times rows, then columns again */
    for (int it = 0; it < iters; it++) {
        for (int pass = it == 0 ? 1 : 0; pass < 2; pass++) {
            for (int a = 0; a < n_hc; a++) {    /* pass 0: row a (sum over d); pass 1: column a (sum over s) */
                float sum = 0;
                for (int b = 0; b < n_hc; b++) sum += pass ? C[b * n_hc + a] : C[a * n_hc + b];
                for (int b = 0; b < n_hc; b++) {
                    float *v = pass ? &C[b * n_hc + a] : &C[a * n_hc + b];
                    *v = *v / (sum + eps);
                }
            }
        }
    }
}

static void infer__cpu_hc_pre(void *ctx, float *u, float *pc, const float *mix, const float *x, const float *base, const float *scale,
                              int rows, int dim, int n_hc, int iters, float eps) {
    (void)ctx;
    const int n_mix = pc ? n_hc * (2 + n_hc) : n_hc;
    assert(n_hc <= INFER__MAX_HC);
    for (int r = 0; r < rows; r++) {
        float pre[INFER__MAX_HC];
        float *post = pc ? pc + (size_t)r * (n_hc + n_hc * n_hc) : NULL;
        infer__hc_mixes(mix + (size_t)r * n_mix, base, scale, n_hc, iters, eps, pre, post, post ? post + n_hc : NULL);
        const float *xr = x + (size_t)r * n_hc * dim;
        float *ur = u + (size_t)r * dim;
        for (int e = 0; e < dim; e++) {
            float acc = pre[0] * xr[e];
            for (int i = 1; i < n_hc; i++) acc += pre[i] * xr[(size_t)i * dim + e];
            ur[e] = acc;
        }
    }
}

static void infer__cpu_hc_post(void *ctx, float *x, const float *h, const float *pc, int rows, int dim, int n_hc) {
    (void)ctx;
    assert(n_hc <= INFER__MAX_HC);
    for (int r = 0; r < rows; r++) {
        const float *post = pc + (size_t)r * (n_hc + n_hc * n_hc), *C = post + n_hc;
        float *xr = x + (size_t)r * n_hc * dim;
        const float *hr = h + (size_t)r * dim;
        for (int e = 0; e < dim; e++) {
            float old[INFER__MAX_HC];
            for (int s = 0; s < n_hc; s++) old[s] = xr[(size_t)s * dim + e];
            for (int d = 0; d < n_hc; d++) {
                float acc = post[d] * hr[e];
                for (int s = 0; s < n_hc; s++) acc += C[s * n_hc + d] * old[s];
                xr[(size_t)d * dim + e] = acc;
            }
        }
    }
}

/* One slot into a channel's running softmax (max m, sum s, weighted sum a): an empty
 * accumulator has s == 0 (the largest term always adds e^0 = 1). */
static inline void infer__pool_add(float *m, float *s, float *a, float v, float score) {
    if (*s == 0) { *m = score; *s = 1; *a = v; return; }
    if (score > *m) {
        const float f = expf(*m - score);
        *s = *s * f + 1;
        *a = *a * f + v;
        *m = score;
    } else {
        const float e = expf(score - *m);
        *s += e;
        *a += e * v;
    }
}

static void infer__cpu_compress(void *ctx, float *entries, float *state, const float *kv, const float *gate, const float *ape,
                                const int32_t *pos, int rows, int dim, int ratio, int overlap) {
    (void)ctx;
    const int W = overlap ? 2 * dim : dim;
    float *cur = state, *next = state + 3 * (size_t)dim;        /* each: max [dim] | sum [dim] | acc [dim] */
    int n_out = 0;
    for (int r = 0; r < rows; r++) {
        const int off = pos[r] % ratio;
        const float *kr = kv + (size_t)r * W, *gr = gate + (size_t)r * W, *ar = ape + (size_t)off * W;
        const int hi = overlap ? dim : 0;                       /* this window's own half */
        for (int c = 0; c < dim; c++) {
            infer__pool_add(cur + c, cur + dim + c, cur + 2 * dim + c, kr[hi + c], gr[hi + c] + ar[hi + c]);
            if (overlap) infer__pool_add(next + c, next + dim + c, next + 2 * dim + c, kr[c], gr[c] + ar[c]);
        }
        if (off != ratio - 1) continue;
        float *e = entries + (size_t)n_out++ * dim;
        for (int c = 0; c < dim; c++) e[c] = cur[2 * dim + c] / cur[dim + c];
        if (overlap) memcpy(cur, next, 3 * (size_t)dim * sizeof(float));
        memset(overlap ? next : cur, 0, 3 * (size_t)dim * sizeof(float));
    }
}

/* ---- the lightning indexer ---- */
typedef struct infer__idx_job {
    int32_t *sel, *n_sel; const float *q, *w; const infer_kv_view *keys; const int32_t *pos;
    int rows, n_head, head_dim, ratio, top_k; float scale;
    float *scratch; size_t scratch_len;          /* per thread: scores, heap, one key row */
} infer__idx_job;

/* a worse than b: a lower score, or the same score at a higher index (the lower one wins ties) */
static inline int infer__idx_worse(float sa, int32_t ia, float sb, int32_t ib) { return sa < sb || (sa == sb && ia > ib); }

static int infer__cmp_i32(const void *a, const void *b) {
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void infer__idx_task(void *arg, int ith, int nth) {
    const infer__idx_job *j = (const infer__idx_job *)arg;
    const int k = j->top_k, hd = j->head_dim;
    float *score = j->scratch + (size_t)ith * j->scratch_len, *tmp = score + (j->scratch_len - (size_t)hd);
    int32_t *heap = (int32_t *)(tmp - k);             /* k indices, the worst at heap[0] */
    for (int r = ith; r < j->rows; r += nth) {
        const int32_t n_vis = (j->pos[r] + 1) / j->ratio;
        int32_t *sel = j->sel + (size_t)r * k;
        if (n_vis <= k) {
            for (int32_t s = 0; s < n_vis; s++) sel[s] = s;
            j->n_sel[r] = n_vis;
            continue;
        }
        const float *q = j->q + (size_t)r * j->n_head * hd, *w = j->w + (size_t)r * j->n_head;
        int n = 0;
        for (int32_t s = 0; s < n_vis; s++) {
            const float *key = infer__kv_row_f32(j->keys, j->keys->k, infer__kv_row(j->keys, s), 0, hd, tmp);
            float acc = 0;
            for (int h = 0; h < j->n_head; h++) acc += w[h] * fmaxf(infer__dot_f32_16(q + (size_t)h * hd, key, hd), 0.0f);
            score[s] = acc * j->scale;
            /* keep the k best in a heap whose root is the worst kept */
            if (n < k) {
                int i = n++;
                heap[i] = s;
                while (i > 0 && infer__idx_worse(score[heap[i]], heap[i], score[heap[(i - 1) / 2]], heap[(i - 1) / 2])) {
                    const int32_t t = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = t; i = (i - 1) / 2;
                }
            } else if (infer__idx_worse(score[heap[0]], heap[0], score[s], s)) {
                int i = 0;
                heap[0] = s;
                for (;;) {
                    int m = i;
                    const int a = 2 * i + 1, b = 2 * i + 2;
                    if (a < k && infer__idx_worse(score[heap[a]], heap[a], score[heap[m]], heap[m])) m = a;
                    if (b < k && infer__idx_worse(score[heap[b]], heap[b], score[heap[m]], heap[m])) m = b;
                    if (m == i) break;
                    const int32_t t = heap[i]; heap[i] = heap[m]; heap[m] = t; i = m;
                }
            }
        }
        memcpy(sel, heap, (size_t)k * sizeof(int32_t));
        qsort(sel, (size_t)k, sizeof(int32_t), infer__cmp_i32);
        j->n_sel[r] = k;
    }
}

static void infer__cpu_indexer_topk(void *ctx, int32_t *sel, int32_t *n_sel, const float *q, const float *w, const infer_kv_view *keys,
                                    const int32_t *pos, int rows, int n_head, int head_dim, int ratio, int top_k, float scale) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    int32_t maxp = 0;
    for (int r = 0; r < rows; r++) maxp = pos[r] > maxp ? pos[r] : maxp;
    infer__idx_job j = { sel, n_sel, q, w, keys, pos, rows, n_head, head_dim, ratio, top_k, scale, NULL, 0 };
    j.scratch_len = (size_t)((maxp + 1) / ratio + 1) + (size_t)top_k + (size_t)head_dim;
    j.scratch = (float *)INFER_MALLOC((size_t)c->n_threads * j.scratch_len * sizeof(float));
    if (!j.scratch) {                        /* out of memory: select nothing rather than garbage */
        for (int r = 0; r < rows; r++) n_sel[r] = 0;
        return;
    }
    infer__pool_run(c->pool, infer__idx_task, &j);
    INFER_FREE(j.scratch);
}

/* ---- attention over a sliding window plus compressed entries ---- */
typedef struct infer__sparse_job {
    float *out; const float *q; const infer_kv_view *kv, *comp; const int32_t *pos, *sel, *n_sel;
    int rows, n_head, head_dim, window, ratio, top_k; float scale; const float *sinks;
    float *scratch; size_t scratch_len;          /* per thread: scores, then one converted row */
} infer__sparse_job;

/* key / value j of row r's list: window positions first, then its compressed entries */
static const float *infer__sparse_row(const infer__sparse_job *j, int r, int32_t j0, int32_t nw, int32_t i, int value, float *tmp) {
    const infer_kv_view *v = i < nw ? j->kv : j->comp;
    const int32_t at = i < nw ? j0 + i : (j->sel ? j->sel[(size_t)r * j->top_k + (i - nw)] : i - nw);
    return infer__kv_row_f32(v, value ? v->v : v->k, infer__kv_row(v, at), 0, j->head_dim, tmp);
}

static void infer__sparse_task(void *arg, int ith, int nth) {
    const infer__sparse_job *j = (const infer__sparse_job *)arg;
    const int hd = j->head_dim;
    float *s = j->scratch + (size_t)ith * j->scratch_len, *tmp = s + (j->scratch_len - (size_t)hd);
    for (int task = ith; task < j->rows * j->n_head; task += nth) {
        const int r = task / j->n_head, h = task % j->n_head;
        const int32_t t = j->pos[r], j0 = j->window > 0 && t - j->window + 1 > 0 ? t - j->window + 1 : 0, nw = t - j0 + 1;
        const int32_t nc = !j->comp || j->ratio <= 0 ? 0 : j->sel ? j->n_sel[r] : (t + 1) / j->ratio, n = nw + nc;
        const float *q = j->q + ((size_t)r * j->n_head + h) * hd;
        float mx = j->sinks ? j->sinks[h] : -INFINITY, sum = 0;
        for (int32_t i = 0; i < n; i++) {
            s[i] = infer__dot_f32_16(q, infer__sparse_row(j, r, j0, nw, i, 0, tmp), hd) * j->scale;
            mx = fmaxf(mx, s[i]);
        }
        for (int32_t i = 0; i < n; i++) { s[i] = expf(s[i] - mx); sum += s[i]; }
        if (j->sinks) sum += expf(j->sinks[h] - mx);
        float *o = j->out + ((size_t)r * j->n_head + h) * hd;
        memset(o, 0, (size_t)hd * sizeof(float));
        for (int32_t i = 0; i < n; i++) infer__axpy_f32_8(o, s[i] / sum, infer__sparse_row(j, r, j0, nw, i, 1, tmp), hd);
    }
}

static void infer__cpu_attention_sparse(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos, int rows,
                                        int n_head, int head_dim, float scale, int window, const float *sinks,
                                        const infer_kv_view *comp, int ratio, const int32_t *sel, const int32_t *n_sel, int top_k) {
    infer__cpu_ctx *c = (infer__cpu_ctx *)ctx;
    int32_t maxp = 0;
    for (int r = 0; r < rows; r++) maxp = pos[r] > maxp ? pos[r] : maxp;
    infer__sparse_job j = { out, q, kv, comp, pos, sel, n_sel, rows, n_head, head_dim, window, ratio, top_k, scale, sinks, NULL, 0 };
    const size_t n_win = window > 0 && window < maxp + 1 ? (size_t)window : (size_t)maxp + 1;
    const size_t n_comp = !comp || ratio <= 0 ? 0 : sel ? (size_t)top_k : (size_t)(maxp + 1) / (size_t)ratio;
    j.scratch_len = n_win + n_comp + (size_t)head_dim;
    j.scratch = (float *)INFER_MALLOC((size_t)c->n_threads * j.scratch_len * sizeof(float));
    if (!j.scratch) {                        /* out of memory for scratch: NaN, never stale numbers */
        for (size_t i = 0; i < (size_t)rows * (size_t)n_head * (size_t)head_dim; i++) out[i] = NAN;
        return;
    }
    infer__pool_run(c->pool, infer__sparse_task, &j);
    INFER_FREE(j.scratch);
}

/* ---- the context and capability entries of the table ---- */
INFER__STATIC_ASSERT((int)INFER__ACT_SILU == (int)INFER_ACT_SILU && (int)INFER__ACT_RELU2 == (int)INFER_ACT_RELU2, "activation ids");
static infer_status infer__cpu_ctx_new(void **ctx, int n_threads, int precise, infer_error *err) {
    *ctx = infer__cpu_ctx_create(n_threads, precise);
    return *ctx ? INFER_OK : infer__fail(err, INFER_ERR_NOMEM, "out of memory for the CPU backend's thread pool");
}
static void infer__cpu_ctx_release(void *ctx) { infer__cpu_ctx_free((infer__cpu_ctx *)ctx); }
static const char *infer__cpu_last_error(void *ctx) { (void)ctx; return ""; }
static int infer__cpu_supports_config(const struct infer_config *c, char *why, size_t n) { (void)c; (void)why; (void)n; return 1; }

static const infer_kernels infer__cpu_kernels = {
    "cpu",
    infer__cpu_alloc, infer__cpu_free, infer__cpu_copy, infer__cpu_copy, infer__cpu_sync, infer__cpu_supports_type,
    infer__cpu_embed, infer__cpu_rmsnorm, infer__cpu_matmul, infer__cpu_add, infer__cpu_add_rows,
    infer__cpu_rope, infer__cpu_kv_store, infer__cpu_attention, infer__cpu_swiglu,
    infer__cpu_zero, infer__cpu_copy_rows, infer__cpu_mul_sigmoid, infer__cpu_l2norm, infer__cpu_rope_multi,
    infer__cpu_moe_route, infer__cpu_matmul_id, infer__cpu_moe_sum,
    infer__cpu_conv1d_silu, infer__cpu_deltanet_gates, infer__cpu_deltanet_step, infer__cpu_deltanet_chunked,
    infer__cpu_glu, infer__cpu_ctx_new, infer__cpu_ctx_release, infer__cpu_last_error, infer__cpu_supports_config,
    1, infer__cpu_matmul_n,
    infer__cpu_hc_pre, infer__cpu_hc_post, infer__cpu_compress, infer__cpu_indexer_topk, infer__cpu_attention_sparse,
    infer__cpu_copy,
};

const infer_kernels *infer_cpu_kernels(void) { return &infer__cpu_kernels; }
/* >>json: a small validating JSON parser (RFC 8259) for tokenizer.json,
 * tokenizer_config.json, config.json and safetensors headers. Implementation part. */


/* -----------------------------------------------------------------------------------------
 * >>json -- parse (ptr, len) into a read-only tree.
 *
 * The whole input is validated: strict grammar (no comments, trailing commas or leading
 * zeros), strings must be valid UTF-8 without raw control characters, escapes include
 * \uXXXX with surrogate pairs, nesting is bounded by INFER__JSON_MAX_DEPTH, and nothing
 * may follow the top-level value. Errors name the byte offset. No input can crash it:
 * every read is bounds-checked and recursion depth is capped.
 *
 * Tree: every value is an infer__json node. Arrays and objects hold their children in
 * one contiguous block (`items[0..len)`), so indexing is O(1); object members carry their
 * name in `key`. Strings are unescaped copies, NUL-terminated for convenience (they may
 * also contain "\u0000", so use `len`). Numbers keep the double and, when the value is an
 * integer in int64 range, the exact integer (a literal like 9007199254740993 keeps all
 * its digits in `i`). All nodes and strings live in chunks owned by the infer__json_doc.
 *
 *   infer__json_doc doc;
 *   if (infer__json_parse(&doc, text, len, err, sizeof err) == 0) {
 *       const infer__json *v = infer__json_get(doc.root, "model");
 *       ...
 *       infer__json_free(&doc);
 *   }
 * --------------------------------------------------------------------------------------- */

#include <locale.h> /* localeconv: the decimal point strtod expects */

#ifndef INFER__JSON_MAX_DEPTH
#define INFER__JSON_MAX_DEPTH 64
#endif

enum { INFER__JSON_NULL, INFER__JSON_FALSE, INFER__JSON_TRUE, INFER__JSON_NUMBER,
       INFER__JSON_STRING, INFER__JSON_ARRAY, INFER__JSON_OBJECT };

typedef struct infer__json {
    uint8_t type;     /* INFER__JSON_* */
    uint8_t is_int;   /* NUMBER: `i` holds the exact integer value */
    uint32_t len;     /* STRING: bytes (without the NUL); ARRAY/OBJECT: number of items */
    uint32_t key_len; /* object member: length of its key */
    const char *key;  /* object member: its name (NUL-terminated), else NULL */
    const char *str;  /* STRING */
    struct infer__json *items; /* ARRAY/OBJECT children */
    double num;       /* NUMBER */
    int64_t i;        /* NUMBER when is_int */
} infer__json;

typedef struct infer__json_chunk { struct infer__json_chunk *next; size_t used, cap; } infer__json_chunk;
typedef struct infer__json_doc {
    infer__json *root;
    infer__json_chunk *chunks; /* storage of all nodes and strings */
} infer__json_doc;

typedef struct infer__json_parser {
    const unsigned char *s, *p, *end;
    infer__json_doc *doc;
    infer__json *stack;  /* stb_ds: children of the arrays/objects being parsed */
    char *sbuf;          /* stb_ds: the string being unescaped */
    char *err;
    size_t errlen;
    int failed;
} infer__json_parser;

static void infer__json_free(infer__json_doc *doc) {
    infer__json_chunk *c = doc->chunks;
    while (c) {
        infer__json_chunk *next = c->next;
        INFER_FREE(c);
        c = next;
    }
    doc->chunks = NULL;
    doc->root = NULL;
}

/* 16-byte aligned storage from the document's chunks (NULL when out of memory) */
static void *infer__json_alloc(infer__json_doc *doc, size_t n) {
    infer__json_chunk *c = doc->chunks;
    const size_t head = (sizeof(infer__json_chunk) + 15) & ~(size_t)15;
    n = (n + 15) & ~(size_t)15;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ((size_t)1 << 20) ? n : ((size_t)1 << 20);
        c = (infer__json_chunk *)INFER_MALLOC(head + cap);
        if (!c) return NULL;
        c->next = doc->chunks;
        c->used = 0;
        c->cap = cap;
        doc->chunks = c;
    }
    c->used += n;
    return (char *)c + head + c->used - n;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int infer__json_fail(infer__json_parser *P, const char *fmt, ...) {
    if (!P->failed && P->err && P->errlen) {
        char msg[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(P->err, P->errlen, "json: %s at byte %zu", msg, (size_t)(P->p - P->s));
    }
    P->failed = 1;
    return -1;
}

static void infer__json_ws(infer__json_parser *P) {
    while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r')) P->p++;
}

static int infer__json_hex4(infer__json_parser *P, uint32_t *v) {
    *v = 0;
    if (P->end - P->p < 4) return infer__json_fail(P, "truncated \\u escape");
    for (int k = 0; k < 4; k++) {
        unsigned char c = *P->p++;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) { P->p--; return infer__json_fail(P, "bad hex digit in \\u escape"); }
        *v = *v * 16 + (uint32_t)d;
    }
    return 0;
}

static void infer__json_put_utf8(infer__json_parser *P, uint32_t cp) {
    if (cp < 0x80) { arrput(P->sbuf, (char)cp); return; }
    if (cp < 0x800) { arrput(P->sbuf, (char)(0xC0 | (cp >> 6))); }
    else {
        if (cp < 0x10000) arrput(P->sbuf, (char)(0xE0 | (cp >> 12)));
        else { arrput(P->sbuf, (char)(0xF0 | (cp >> 18))); arrput(P->sbuf, (char)(0x80 | ((cp >> 12) & 0x3F))); }
        arrput(P->sbuf, (char)(0x80 | ((cp >> 6) & 0x3F)));
    }
    arrput(P->sbuf, (char)(0x80 | (cp & 0x3F)));
}

/* one escape after '\'; the decoded bytes go to sbuf */
static int infer__json_escape(infer__json_parser *P) {
    uint32_t cp, lo;
    if (P->p >= P->end) return infer__json_fail(P, "truncated escape");
    switch (*P->p++) {
    case '"': arrput(P->sbuf, '"'); return 0;
    case '\\': arrput(P->sbuf, '\\'); return 0;
    case '/': arrput(P->sbuf, '/'); return 0;
    case 'b': arrput(P->sbuf, '\b'); return 0;
    case 'f': arrput(P->sbuf, '\f'); return 0;
    case 'n': arrput(P->sbuf, '\n'); return 0;
    case 'r': arrput(P->sbuf, '\r'); return 0;
    case 't': arrput(P->sbuf, '\t'); return 0;
    case 'u':
        if (infer__json_hex4(P, &cp) < 0) return -1;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return infer__json_fail(P, "unpaired low surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* UTF-16 pair: \uD83D\uDE00 -> U+1F600 */
            if (P->end - P->p < 2 || P->p[0] != '\\' || P->p[1] != 'u') return infer__json_fail(P, "unpaired high surrogate");
            P->p += 2;
            if (infer__json_hex4(P, &lo) < 0) return -1;
            if (lo < 0xDC00 || lo > 0xDFFF) return infer__json_fail(P, "bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        infer__json_put_utf8(P, cp);
        return 0;
    default:
        P->p--;
        return infer__json_fail(P, "bad escape");
    }
}

/* strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF */
static int infer__json_utf8(infer__json_parser *P) {
    const unsigned char *s = P->p;
    size_t n = (size_t)(P->end - s), len;
    uint32_t cp, min;
    if (s[0] < 0xC2 || s[0] > 0xF4) return infer__json_fail(P, "invalid UTF-8");
    len = s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4;
    min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (n < len) return infer__json_fail(P, "truncated UTF-8");
    cp = s[0] & (0x7F >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return infer__json_fail(P, "invalid UTF-8");
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return infer__json_fail(P, "invalid UTF-8");
    for (size_t k = 0; k < len; k++) arrput(P->sbuf, (char)s[k]);
    P->p += len;
    return 0;
}

/* a string starting at '"'; on success *out is a NUL-terminated copy in the document */
static int infer__json_string(infer__json_parser *P, const char **out, uint32_t *len) {
    char *copy;
    arrsetlen(P->sbuf, 0);
    P->p++; /* '"' */
    for (;;) {
        if (P->p >= P->end) return infer__json_fail(P, "unterminated string");
        unsigned char c = *P->p;
        if (c == '"') { P->p++; break; }
        if (c < 0x20) return infer__json_fail(P, "control character in string");
        if (c == '\\') { P->p++; if (infer__json_escape(P) < 0) return -1; }
        else if (c >= 0x80) { if (infer__json_utf8(P) < 0) return -1; }
        else { arrput(P->sbuf, (char)c); P->p++; }
    }
    if (arrlenu(P->sbuf) >= 0xFFFFFFFFu) return infer__json_fail(P, "string too long");
    copy = (char *)infer__json_alloc(P->doc, arrlenu(P->sbuf) + 1);
    if (!copy) return infer__json_fail(P, "out of memory");
    if (arrlen(P->sbuf)) memcpy(copy, P->sbuf, arrlenu(P->sbuf));
    copy[arrlen(P->sbuf)] = '\0';
    *out = copy;
    *len = (uint32_t)arrlenu(P->sbuf);
    return 0;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int infer__json_number(infer__json_parser *P, infer__json *v) {
    const unsigned char *start = P->p;
    int neg = 0, integral = 1, overflow = 0;
    uint64_t mag = 0;
    char small[64], *buf = small, *dot;
    size_t n;
    if (P->p < P->end && *P->p == '-') { neg = 1; P->p++; }
    if (P->p >= P->end || *P->p < '0' || *P->p > '9') return infer__json_fail(P, "bad number");
    if (*P->p == '0' && P->end - P->p > 1 && P->p[1] >= '0' && P->p[1] <= '9') return infer__json_fail(P, "leading zero");
    while (P->p < P->end && *P->p >= '0' && *P->p <= '9') {
        unsigned d = (unsigned)(*P->p++ - '0');
        if (mag > (UINT64_MAX - d) / 10) overflow = 1; else mag = mag * 10 + d;
    }
    if (P->p < P->end && *P->p == '.') {
        integral = 0;
        P->p++;
        if (P->p >= P->end || *P->p < '0' || *P->p > '9') return infer__json_fail(P, "bad fraction");
        while (P->p < P->end && *P->p >= '0' && *P->p <= '9') P->p++;
    }
    if (P->p < P->end && (*P->p == 'e' || *P->p == 'E')) {
        integral = 0;
        P->p++;
        if (P->p < P->end && (*P->p == '+' || *P->p == '-')) P->p++;
        if (P->p >= P->end || *P->p < '0' || *P->p > '9') return infer__json_fail(P, "bad exponent");
        while (P->p < P->end && *P->p >= '0' && *P->p <= '9') P->p++;
    }
    /* strtod wants a NUL-terminated string and reads the locale's decimal point */
    n = (size_t)(P->p - start);
    if (n >= sizeof small && !(buf = (char *)INFER_MALLOC(n + 1))) return infer__json_fail(P, "out of memory");
    memcpy(buf, start, n);
    buf[n] = '\0';
    if ((dot = strchr(buf, '.')) != NULL) *dot = localeconv()->decimal_point[0];
    v->type = INFER__JSON_NUMBER;
    v->num = strtod(buf, NULL);
    if (buf != small) INFER_FREE(buf);
    if (integral && !overflow && mag <= (uint64_t)INT64_MAX + (uint64_t)neg) {
        v->is_int = 1;
        v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    } else if (v->num == floor(v->num) && fabs(v->num) < 9.2e18) {
        v->is_int = 1;
        v->i = (int64_t)v->num;
    }
    return 0;
}

static int infer__json_value(infer__json_parser *P, infer__json *v, int depth);

/* array or object; P->p is at '[' or '{' */
static int infer__json_container(infer__json_parser *P, infer__json *v, int depth) {
    int is_obj = *P->p == '{';
    unsigned char close = is_obj ? '}' : ']';
    size_t base = arrlenu(P->stack), n;
    if (depth >= INFER__JSON_MAX_DEPTH) return infer__json_fail(P, "nesting deeper than %d", INFER__JSON_MAX_DEPTH);
    P->p++;
    infer__json_ws(P);
    if (P->p < P->end && *P->p == close) P->p++;
    else for (;;) {
        infer__json item;
        memset(&item, 0, sizeof item);
        infer__json_ws(P);
        if (is_obj) {
            if (P->p >= P->end || *P->p != '"') return infer__json_fail(P, "expected a member name");
            if (infer__json_string(P, &item.key, &item.key_len) < 0) return -1;
            infer__json_ws(P);
            if (P->p >= P->end || *P->p != ':') return infer__json_fail(P, "expected ':'");
            P->p++;
        }
        if (infer__json_value(P, &item, depth + 1) < 0) return -1;
        arrput(P->stack, item);
        infer__json_ws(P);
        if (P->p < P->end && *P->p == ',') { P->p++; continue; }
        if (P->p < P->end && *P->p == close) { P->p++; break; }
        return infer__json_fail(P, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    n = arrlenu(P->stack) - base;
    if (n >= 0xFFFFFFFFu) return infer__json_fail(P, "too many items");
    v->type = (uint8_t)(is_obj ? INFER__JSON_OBJECT : INFER__JSON_ARRAY);
    v->len = (uint32_t)n;
    v->items = NULL;
    if (n) {
        v->items = (infer__json *)infer__json_alloc(P->doc, n * sizeof(infer__json));
        if (!v->items) return infer__json_fail(P, "out of memory");
        memcpy(v->items, P->stack + base, n * sizeof(infer__json));
    }
    arrsetlen(P->stack, base);
    return 0;
}

static int infer__json_literal(infer__json_parser *P, const char *word, int type, infer__json *v) {
    size_t n = strlen(word);
    if ((size_t)(P->end - P->p) < n || memcmp(P->p, word, n) != 0) return infer__json_fail(P, "unexpected character");
    P->p += n;
    v->type = (uint8_t)type;
    return 0;
}

/* fills v's value fields (its key, if any, is set by the caller) */
static int infer__json_value(infer__json_parser *P, infer__json *v, int depth) {
    infer__json_ws(P);
    if (P->p >= P->end) return infer__json_fail(P, "unexpected end of input");
    switch (*P->p) {
    case '{': case '[': return infer__json_container(P, v, depth);
    case '"': v->type = INFER__JSON_STRING; return infer__json_string(P, &v->str, &v->len);
    case 't': return infer__json_literal(P, "true", INFER__JSON_TRUE, v);
    case 'f': return infer__json_literal(P, "false", INFER__JSON_FALSE, v);
    case 'n': return infer__json_literal(P, "null", INFER__JSON_NULL, v);
    default:
        if (*P->p != '-' && (*P->p < '0' || *P->p > '9')) return infer__json_fail(P, "unexpected character");
        return infer__json_number(P, v);
    }
}

/* Parses text[0..len). Returns 0 and fills doc, or -1 with "json: <what> at byte <n>" in
 * err (doc is then empty). Free with infer__json_free(). */
static int infer__json_parse(infer__json_doc *doc, const char *text, size_t len, char *err, size_t errlen) {
    infer__json_parser P;
    infer__json *root;
    memset(doc, 0, sizeof *doc);
    memset(&P, 0, sizeof P);
    P.s = P.p = (const unsigned char *)(text ? text : "");
    P.end = P.s + (text ? len : 0);
    P.doc = doc;
    P.err = err;
    P.errlen = errlen;
    root = (infer__json *)infer__json_alloc(doc, sizeof *root);
    if (!root) return infer__json_fail(&P, "out of memory");
    memset(root, 0, sizeof *root);
    if (infer__json_value(&P, root, 0) == 0) {
        infer__json_ws(&P);
        if (P.p != P.end) infer__json_fail(&P, "trailing characters after the value");
    }
    arrfree(P.stack);
    arrfree(P.sbuf);
    if (P.failed) { infer__json_free(doc); return -1; }
    doc->root = root;
    return 0;
}

/* ---- lookups: all accept NULL and wrong types and then answer NULL / -1 ---- */

/* first member of object `obj` named `key` */
static const infer__json *infer__json_get(const infer__json *obj, const char *key) {
    size_t n = strlen(key);
    if (!obj || obj->type != INFER__JSON_OBJECT) return NULL;
    for (uint32_t i = 0; i < obj->len; i++)
        if (obj->items[i].key_len == n && memcmp(obj->items[i].key, key, n) == 0) return &obj->items[i];
    return NULL;
}

static const infer__json *infer__json_at(const infer__json *arr, size_t i) {
    if (!arr || arr->type != INFER__JSON_ARRAY || i >= arr->len) return NULL;
    return &arr->items[i];
}

static const char *infer__json_str(const infer__json *v) {
    return v && v->type == INFER__JSON_STRING ? v->str : NULL;
}

static int infer__json_int(const infer__json *v, int64_t *out) {
    if (!v || v->type != INFER__JSON_NUMBER || !v->is_int) return -1;
    *out = v->i;
    return 0;
}

static int infer__json_num(const infer__json *v, double *out) {
    if (!v || v->type != INFER__JSON_NUMBER) return -1;
    *out = v->num;
    return 0;
}

static int infer__json_bool(const infer__json *v, int *out) {
    if (!v || (v->type != INFER__JSON_TRUE && v->type != INFER__JSON_FALSE)) return -1;
    *out = v->type == INFER__JSON_TRUE;
    return 0;
}
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
/* Unicode tables (generated; in >>tables at the end of the file) */
#define INFER__UC_VERSION "14.0.0"
static const uint32_t infer__uc_cat[2213];
static const uint32_t infer__uc_space[25];
static const int32_t infer__uc_lower[182][4];
static const uint32_t infer__uc_nfd[1827][3];

/* =========================================================================================
 * IMPLEMENTATION PART
 * ========================================================================================= */

/* -----------------------------------------------------------------------------------------
 * >>tokenizer -- text <-> token ids, the way llama.cpp does it for GGUF vocabularies.
 *
 * Tokenizing runs in three stages:
 *   1. Special-token partitioning. The text is cut at every occurrence of a control,
 *      user-defined or unknown token's text (longest tokens first); those pieces become
 *      their ids directly. Without `parse_special` only user-defined tokens are cut out
 *      (HF does the same: added tokens that are not "special" are always matched).
 *   2. Each remaining raw fragment goes through the model's own algorithm:
 *        SPM  ' ' -> U+2581 "▁" (plus one leading ' ' on the first fragment and after a
 *             special token), then merge adjacent symbols, highest token score first.
 *        BPE  split into pre-tokens with the regexes of the `pre` type, map every byte to
 *             a printable code point (bytes_to_unicode), then merge adjacent symbols,
 *             lowest merge rank first, inside each pre-token.
 *        WPM  lower-case, strip accents, split at spaces and punctuation, then greedy
 *             longest match per word ("▁" marks a word start; continuations have none).
 *   3. BOS/EOS (WPM: CLS/SEP) around the result when `add_special` asks for them.
 *
 * Decoding maps each id back to the bytes it stands for (the "piece"): "▁" -> ' ',
 * "<0xXX>" -> the byte, byte-level BPE code points -> their bytes. Pieces are computed
 * once at load. A piece can end inside a UTF-8 sequence (byte fallback splits characters),
 * so the streaming detokenizer holds such bytes back until the sequence is complete.
 *
 * Both merge loops share one shape: a doubly linked list of symbols (byte ranges of one
 * buffer, so two neighbours are always one contiguous range) and a max-heap of candidate
 * pairs. A popped pair is stale when either symbol changed since it was pushed; the sum
 * of the two lengths detects that, because a symbol only ever grows by absorbing its
 * right neighbour.
 * --------------------------------------------------------------------------------------- */

#include <limits.h> /* INT_MAX */

/* The description of a vocabulary that infer__tok_init() reads; nothing in it is kept,
 * everything needed is copied, so the source (an mmapped GGUF, a parsed JSON) may go away.
 *
 * From GGUF metadata (absent key -> NULL / 0 / -1 as noted):
 *   model            tokenizer.ggml.model, NUL-terminated copy  NULL if absent -> no vocabulary
 *   pre              tokenizer.ggml.pre, NUL-terminated copy    NULL if absent -> "default"
 *   n_vocab, tokens, token_lens   tokenizer.ggml.tokens (string array: pointers to the bytes
 *                    of each string inside the file, and their u64 lengths)
 *   scores           tokenizer.ggml.scores (f32 array data, as is), NULL if absent
 *                    (llama.cpp also accepts an i32 array: convert that to float first)
 *   types            tokenizer.ggml.token_type (i32 array data, as is), NULL if absent
 *   n_merges, merges, merge_lens  tokenizer.ggml.merges (string array), 0/NULL if absent
 *   bos eos eot eom unk pad sep cls mask   tokenizer.ggml.{bos,eos,eot,eom,unknown,padding,
 *                    seperator (sic),cls,mask}_token_id (u32), -1 if absent
 *   add_bos add_eos add_space_prefix       tokenizer.ggml.{add_bos_token,add_eos_token,
 *                    add_space_prefix} (bool -> 0/1), -1 if absent
 * Array lengths must agree with n_vocab (scores/types) and n_merges; the caller checks
 * that against the GGUF array counts. */
typedef struct infer__tok_src {
    const char *model;          /* tokenizer.ggml.model: "llama", "gpt2", "bert", "none" or NULL */
    const char *pre;            /* tokenizer.ggml.pre, or NULL */
    int32_t n_vocab;
    const char *const *tokens;  /* [n_vocab] texts, NOT NUL-terminated */
    const uint64_t *token_lens; /* [n_vocab] */
    const float *scores;        /* [n_vocab] or NULL; need not be aligned (GGUF arrays are not) */
    const int32_t *types;       /* [n_vocab] or NULL, need not be aligned: 1 normal 2 unknown
                                   3 control 4 user-defined 5 unused 6 byte (others: undefined) */
    int32_t n_merges;
    const char *const *merges;  /* "left right" pairs, rank = index */
    const uint64_t *merge_lens;
    int32_t bos, eos, eot, eom, unk, pad, sep, cls, mask; /* -1 = key absent */
    int add_bos, add_eos, add_space_prefix;               /* -1 = key absent (use the model's default) */
} infer__tok_src;

#define INFER__TOK_MAX_LEN (1u << 20) /* longest token or merge text accepted, bytes */

/* token attributes (llama.cpp's llama_token_attr, as far as used here) */
enum {
    INFER__TOK_NORMAL = 1, INFER__TOK_UNKNOWN = 2, INFER__TOK_CONTROL = 4,
    INFER__TOK_USER = 8, INFER__TOK_UNUSED = 16, INFER__TOK_BYTE = 32,
    INFER__TOK_EOG = 64 /* ends generation */
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int infer__tok_fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- Unicode: categories, white space, lower case, NFD base, UTF-8 ---- */

/* Major general categories, the values stored in infer__uc_cat (see tools/gen_unicode.py). */
enum { INFER__UC_C, INFER__UC_L, INFER__UC_M, INFER__UC_N, INFER__UC_P, INFER__UC_S, INFER__UC_Z };

static int infer__uc_category(uint32_t cp) {
    /* last entry whose first code point (value >> 3) is <= cp */
    size_t lo = 0, hi = sizeof infer__uc_cat / sizeof infer__uc_cat[0];
    if (cp > 0x10FFFF) return INFER__UC_C;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((infer__uc_cat[mid] >> 3) <= cp) lo = mid; else hi = mid;
    }
    return (int)(infer__uc_cat[lo] & 7);
}

static int infer__uc_is_space(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
    for (size_t i = 0; i < sizeof infer__uc_space / sizeof infer__uc_space[0]; i++)
        if (infer__uc_space[i] == cp) return 1;
    return 0;
}

static uint32_t infer__uc_tolower(uint32_t cp) {
    size_t lo = 0, hi = sizeof infer__uc_lower / sizeof infer__uc_lower[0];
    while (lo < hi) { /* first run with last >= cp */
        size_t mid = (lo + hi) / 2;
        if ((uint32_t)infer__uc_lower[mid][1] < cp) lo = mid + 1; else hi = mid;
    }
    if (lo < sizeof infer__uc_lower / sizeof infer__uc_lower[0]) {
        const int32_t *r = infer__uc_lower[lo];
        if (cp >= (uint32_t)r[0] && (cp - (uint32_t)r[0]) % (uint32_t)r[3] == 0)
            return (uint32_t)((int32_t)cp + r[2]);
    }
    return cp;
}

static uint32_t infer__uc_nfd_base(uint32_t cp) {
    size_t lo = 0, hi = sizeof infer__uc_nfd / sizeof infer__uc_nfd[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (infer__uc_nfd[mid][1] < cp) lo = mid + 1; else hi = mid;
    }
    if (lo < sizeof infer__uc_nfd / sizeof infer__uc_nfd[0] && cp >= infer__uc_nfd[lo][0])
        return infer__uc_nfd[lo][2];
    return cp;
}

/* Length of the UTF-8 sequence a lead byte announces; continuation bytes count as 1. */
static int infer__utf8_len(unsigned char c) {
    static const unsigned char len[16] = { 1,1,1,1,1,1,1,1, 1,1,1,1, 2,2, 3, 4 };
    return len[c >> 4];
}

/* Decodes one code point from s[0..n), n >= 1. A malformed sequence decodes as U+FFFD and
 * consumes one byte (what llama.cpp does). Returns the bytes consumed. */
static int infer__utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    int len = infer__utf8_len(s[0]);
    uint32_t c;
    if (s[0] < 0x80) { *cp = s[0]; return 1; }
    if (s[0] < 0xC0 || s[0] >= 0xF8 || (size_t)len > n) goto bad;
    c = s[0] & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) goto bad;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c > 0x10FFFF) goto bad;
    *cp = c;
    return len;
bad:
    *cp = 0xFFFD;
    return 1;
}

static int infer__utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- GPT-2 bytes_to_unicode ----
 * Every byte becomes a printable code point so that BPE works on visible text:
 * 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to themselves; the other 68 bytes (0x00-0x20,
 * 0x7F-0xA0, 0xAD) map to U+0100.. in increasing byte order (' ' -> U+0120 'Ġ'). */
static int infer__byte_is_printable(unsigned b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
}

static uint32_t infer__byte_to_cp(unsigned b) {
    if (infer__byte_is_printable(b)) return b;
    if (b <= 0x20) return 0x100 + b;             /* 0x00-0x20 -> 0..32 */
    if (b <= 0xA0) return 0x100 + 33 + (b - 0x7F); /* 0x7F-0xA0 -> 33..66 */
    return 0x100 + 67;                           /* 0xAD */
}

/* inverse of infer__byte_to_cp; -1 for code points that are no byte */
static int infer__cp_to_byte(uint32_t cp) {
    if (cp < 0x100) return infer__byte_is_printable(cp) ? (int)cp : -1;
    if (cp <= 0x100 + 32) return (int)(cp - 0x100);
    if (cp <= 0x100 + 66) return (int)(cp - 0x100 - 33 + 0x7F);
    if (cp == 0x100 + 67) return 0xAD;
    return -1;
}

/* ---- the byte-string hash table ---- */

static uint32_t infer__tok_hash(const char *s, size_t n, int32_t aux) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 16777619u; }
    h ^= (uint32_t)aux * 0x9E3779B1u;
    return h ^ (h >> 15);
}

static int infer__map_alloc(infer__tok_map *m, size_t n) {
    uint32_t cap = 16;
    while (cap < 2 * n) {
        if (cap >= 0x40000000u) return -1;
        cap *= 2;
    }
    m->slots = (infer__tok_slot *)INFER_MALLOC(cap * sizeof *m->slots);
    if (!m->slots) return -1;
    for (uint32_t i = 0; i < cap; i++) m->slots[i].value = -1;
    m->mask = cap - 1;
    m->count = 0;
    return 0;
}

static int32_t infer__map_get(const infer__tok_map *m, const char *arena, const char *s, size_t n, int32_t aux) {
    if (!m->slots) return -1;
    uint32_t h = infer__tok_hash(s, n, aux);
    for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
        const infer__tok_slot *e = &m->slots[i];
        if (e->value < 0) return -1;
        if (e->hash == h && e->len == n && e->aux == aux && memcmp(arena + e->off, s, n) == 0)
            return e->value;
    }
}

/* Inserts arena[off, off+len) -> value unless the key is there; returns the value stored. */
static int32_t infer__map_put(infer__tok_map *m, const char *arena, uint32_t off, uint32_t len, int32_t aux, int32_t value) {
    uint32_t h = infer__tok_hash(arena + off, len, aux);
    for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
        infer__tok_slot *e = &m->slots[i];
        if (e->value < 0) {
            e->hash = h; e->off = off; e->len = len; e->aux = aux; e->value = value;
            m->count++;
            return value;
        }
        if (e->hash == h && e->len == len && e->aux == aux && memcmp(arena + e->off, arena + off, len) == 0)
            return e->value;
    }
}

static int32_t infer__tok_find(const infer_tokenizer *t, const char *s, size_t n) {
    return infer__map_get(&t->vocab, t->arena, s, n, 0);
}

static const char *infer__tok_text(const infer_tokenizer *t, int32_t id, uint32_t *len) {
    *len = t->text_off[id + 1] - t->text_off[id];
    return t->arena + t->text_off[id];
}

/* -----------------------------------------------------------------------------------------
 * A small backtracking regex matcher for the pre-tokenizer patterns.
 *
 * Supported: literals, `.`, classes `[...]`/`[^...]` with ranges, `\s \S \d \r \n \t`,
 * `\p{L} \p{M} \p{N} \p{P} \p{S} \p{Z} \p{C}` (major Unicode categories), groups `(...)`
 * and `(?:...)`, lookahead `(?=...)` `(?!...)`, `|`, greedy `? * + {n} {n,} {n,m}`, `$`.
 * Semantics are ECMAScript's (what std::regex gives llama.cpp): alternatives are tried
 * left to right and the first match wins, quantifiers are greedy and backtrack.
 *
 * The pattern compiles to a program for a backtracking VM (Pike, Cox "Regular Expression
 * Matching: the Virtual Machine Approach"): CLASS consumes one code point, SPLIT x,y tries
 * x first and remembers y, JMP, EOS asserts the end, LOOK runs a sub-program at the
 * current position. Backtracking uses an explicit stack, never the C stack, so long inputs
 * cannot overflow it. The patterns used here are linear in practice except `\s+$` on long
 * space runs, which is quadratic in the run length.
 * --------------------------------------------------------------------------------------- */

enum { INFER__RX_CLASS, INFER__RX_SPLIT, INFER__RX_JMP, INFER__RX_EOS, INFER__RX_NLOOK, INFER__RX_PLOOK, INFER__RX_MATCH };
#define INFER__RX_SPACE 0x80u /* class bit for \s; bits 0..6 are the categories */

typedef struct infer__rx_inst { uint8_t op; int32_t x, y; } infer__rx_inst;
typedef struct infer__rx_class { uint8_t neg, cats; int32_t first, count; } infer__rx_class;
typedef struct infer__regex {
    infer__rx_inst *prog;   /* stb_ds array */
    infer__rx_class *cls;   /* stb_ds array */
    uint32_t *ranges;       /* stb_ds array of lo,hi pairs, indexed by the classes */
} infer__regex;

/* parse tree, only alive while compiling */
enum { INFER__RXN_CLASS, INFER__RXN_SEQ, INFER__RXN_ALT, INFER__RXN_REP, INFER__RXN_EOS,
       INFER__RXN_NLOOK, INFER__RXN_PLOOK, INFER__RXN_EMPTY };
typedef struct infer__rx_node { uint8_t type; int32_t a, b, min, max; } infer__rx_node;
typedef struct infer__rx_parser {
    const unsigned char *p, *end;
    infer__regex *re;
    infer__rx_node *nodes;  /* stb_ds array */
    const char *err;
    int depth;
} infer__rx_parser;

static void infer__regex_free(infer__regex *re) {
    if (!re) return;
    arrfree(re->prog);
    arrfree(re->cls);
    arrfree(re->ranges);
    INFER_FREE(re);
}

static int32_t infer__rx_node_new(infer__rx_parser *P, int type, int32_t a, int32_t b) {
    infer__rx_node n;
    n.type = (uint8_t)type; n.a = a; n.b = b; n.min = n.max = 0;
    arrput(P->nodes, n);
    return (int32_t)arrlen(P->nodes) - 1;
}

static int32_t infer__rx_class_new(infer__rx_parser *P, int neg) {
    infer__rx_class c;
    c.neg = (uint8_t)neg; c.cats = 0; c.first = (int32_t)(arrlen(P->re->ranges) / 2); c.count = 0;
    arrput(P->re->cls, c);
    return (int32_t)arrlen(P->re->cls) - 1;
}

static void infer__rx_class_range(infer__rx_parser *P, int32_t cls, uint32_t lo, uint32_t hi) {
    arrput(P->re->ranges, lo);
    arrput(P->re->ranges, hi);
    P->re->cls[cls].count++;
}

static uint32_t infer__rx_next_cp(infer__rx_parser *P) {
    uint32_t cp;
    P->p += infer__utf8_decode(P->p, (size_t)(P->end - P->p), &cp);
    return cp;
}

/* One escape after '\'. Either a set (*cats != 0, *neg for \S), a range (\d: '0'..'9' in
 * *lo, *hi) or a literal (*lo == *hi). Returns -1 on an unsupported escape. */
static int infer__rx_escape(infer__rx_parser *P, uint8_t *cats, int *neg, uint32_t *lo, uint32_t *hi) {
    static const char cat_names[] = "CLMNPSZ"; /* order of INFER__UC_* */
    uint32_t c;
    *cats = 0; *neg = 0;
    if (P->p >= P->end) { P->err = "pattern ends after '\\'"; return -1; }
    c = infer__rx_next_cp(P);
    switch (c) {
    case 's': *cats = INFER__RX_SPACE; return 0;
    case 'S': *cats = INFER__RX_SPACE; *neg = 1; return 0;
    case 'd': *lo = '0'; *hi = '9'; return 0;
    case 'r': *lo = *hi = '\r'; return 0;
    case 'n': *lo = *hi = '\n'; return 0;
    case 't': *lo = *hi = '\t'; return 0;
    case 'f': *lo = *hi = '\f'; return 0;
    case 'v': *lo = *hi = '\v'; return 0;
    case 'p':
        if (P->end - P->p >= 3 && P->p[0] == '{' && P->p[2] == '}' && P->p[1] && strchr(cat_names, P->p[1])) {
            *cats = (uint8_t)(1u << (strchr(cat_names, P->p[1]) - cat_names));
            P->p += 3;
            return 0;
        }
        P->err = "unsupported \\p{...} (only L M N P S Z C)";
        return -1;
    default:
        if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            *lo = *hi = c; /* escaped punctuation */
            return 0;
        }
        P->err = "unsupported escape";
        return -1;
    }
}

/* '[' already consumed */
static int32_t infer__rx_parse_class(infer__rx_parser *P) {
    int neg = P->p < P->end && *P->p == '^';
    if (neg) P->p++;
    int32_t cls = infer__rx_class_new(P, neg);
    int first = 1;
    while (P->p < P->end && (*P->p != ']' || first)) {
        uint32_t lo, hi;
        first = 0;
        if (*P->p == '\\') {
            uint8_t cats; int eneg;
            P->p++;
            if (infer__rx_escape(P, &cats, &eneg, &lo, &hi) < 0) return -1;
            if (cats) {
                if (eneg) { P->err = "\\S inside [...] is not supported"; return -1; }
                P->re->cls[cls].cats |= cats;
                continue;
            }
        } else {
            lo = hi = infer__rx_next_cp(P);
        }
        if (lo == hi && P->end - P->p >= 2 && P->p[0] == '-' && P->p[1] != ']') {
            P->p++;
            if (*P->p == '\\') {
                uint8_t cats; int eneg;
                P->p++;
                if (infer__rx_escape(P, &cats, &eneg, &hi, &hi) < 0) return -1;
                if (cats) { P->err = "class range ends in a set"; return -1; }
            } else {
                hi = infer__rx_next_cp(P);
            }
            if (hi < lo) { P->err = "class range out of order"; return -1; }
        }
        infer__rx_class_range(P, cls, lo, hi);
    }
    if (P->p >= P->end) { P->err = "missing ']'"; return -1; }
    P->p++;
    return infer__rx_node_new(P, INFER__RXN_CLASS, cls, 0);
}

static int32_t infer__rx_parse_alt(infer__rx_parser *P);

static int32_t infer__rx_parse_atom(infer__rx_parser *P) {
    unsigned char c = *P->p;
    if (c == '(') {
        int type = INFER__RXN_SEQ; /* a plain group: no captures are needed */
        P->p++;
        if (P->end - P->p >= 2 && P->p[0] == '?') {
            if (P->p[1] == ':') type = INFER__RXN_SEQ;
            else if (P->p[1] == '!') type = INFER__RXN_NLOOK;
            else if (P->p[1] == '=') type = INFER__RXN_PLOOK;
            else { P->err = "unsupported group"; return -1; }
            P->p += 2;
        }
        if (++P->depth > 32) { P->err = "groups nested too deeply"; return -1; }
        int32_t a = infer__rx_parse_alt(P);
        P->depth--;
        if (a < 0) return -1;
        if (P->p >= P->end || *P->p != ')') { P->err = "missing ')'"; return -1; }
        P->p++;
        return type == INFER__RXN_SEQ ? a : infer__rx_node_new(P, type, a, 0);
    }
    if (c == '[') { P->p++; return infer__rx_parse_class(P); }
    if (c == '$') { P->p++; return infer__rx_node_new(P, INFER__RXN_EOS, 0, 0); }
    if (c == '.') { /* any code point but a line end */
        P->p++;
        int32_t cls = infer__rx_class_new(P, 1);
        infer__rx_class_range(P, cls, '\n', '\n');
        infer__rx_class_range(P, cls, '\r', '\r');
        return infer__rx_node_new(P, INFER__RXN_CLASS, cls, 0);
    }
    if (c == '^' || c == '*' || c == '+' || c == '?' || c == '{' || c == ')' || c == '|') {
        P->err = "unexpected metacharacter";
        return -1;
    }
    uint32_t lo, hi;
    uint8_t cats = 0;
    int neg = 0;
    if (c == '\\') {
        P->p++;
        if (infer__rx_escape(P, &cats, &neg, &lo, &hi) < 0) return -1;
    } else {
        lo = hi = infer__rx_next_cp(P);
    }
    int32_t cls = infer__rx_class_new(P, neg);
    if (cats) P->re->cls[cls].cats = cats;
    else infer__rx_class_range(P, cls, lo, hi);
    return infer__rx_node_new(P, INFER__RXN_CLASS, cls, 0);
}

static int infer__rx_parse_int(infer__rx_parser *P, int32_t *v) {
    if (P->p >= P->end || *P->p < '0' || *P->p > '9') return -1;
    *v = 0;
    while (P->p < P->end && *P->p >= '0' && *P->p <= '9') {
        *v = *v * 10 + (*P->p++ - '0');
        if (*v > 1000) return -1;
    }
    return 0;
}

static int32_t infer__rx_parse_quant(infer__rx_parser *P) {
    int32_t a = infer__rx_parse_atom(P), min, max;
    if (a < 0 || P->p >= P->end) return a;
    switch (*P->p) {
    case '?': min = 0; max = 1; break;
    case '*': min = 0; max = -1; break;
    case '+': min = 1; max = -1; break;
    case '{':
        P->p++;
        if (infer__rx_parse_int(P, &min) < 0) { P->err = "bad {n,m}"; return -1; }
        max = min;
        if (P->p < P->end && *P->p == ',') {
            P->p++;
            max = -1;
            if (P->p < P->end && *P->p != '}' && (infer__rx_parse_int(P, &max) < 0 || max < min)) {
                P->err = "bad {n,m}";
                return -1;
            }
        }
        if (P->p >= P->end || *P->p != '}') { P->err = "bad {n,m}"; return -1; }
        break;
    default: return a;
    }
    P->p++;
    if (P->p < P->end && (*P->p == '?' || *P->p == '+' || *P->p == '*' || *P->p == '{')) {
        P->err = "lazy, possessive or repeated quantifiers are not supported";
        return -1;
    }
    int32_t n = infer__rx_node_new(P, INFER__RXN_REP, a, 0);
    P->nodes[n].min = min;
    P->nodes[n].max = max;
    return n;
}

static int32_t infer__rx_parse_seq(infer__rx_parser *P) {
    int32_t n = -1;
    while (P->p < P->end && *P->p != '|' && *P->p != ')') {
        int32_t a = infer__rx_parse_quant(P);
        if (a < 0) return -1;
        n = n < 0 ? a : infer__rx_node_new(P, INFER__RXN_SEQ, n, a);
    }
    return n < 0 ? infer__rx_node_new(P, INFER__RXN_EMPTY, 0, 0) : n;
}

static int32_t infer__rx_parse_alt(infer__rx_parser *P) {
    int32_t n = infer__rx_parse_seq(P);
    while (n >= 0 && P->p < P->end && *P->p == '|') {
        P->p++;
        int32_t b = infer__rx_parse_seq(P);
        n = b < 0 ? -1 : infer__rx_node_new(P, INFER__RXN_ALT, n, b);
    }
    return n;
}

/* can the node match the empty string? (a `*` over such a node would loop forever) */
static int infer__rx_nullable(const infer__rx_node *nodes, int32_t i) {
    const infer__rx_node *n = &nodes[i];
    switch (n->type) {
    case INFER__RXN_CLASS: return 0;
    case INFER__RXN_SEQ: return infer__rx_nullable(nodes, n->a) && infer__rx_nullable(nodes, n->b);
    case INFER__RXN_ALT: return infer__rx_nullable(nodes, n->a) || infer__rx_nullable(nodes, n->b);
    case INFER__RXN_REP: return n->min == 0 || infer__rx_nullable(nodes, n->a);
    default: return 1;
    }
}

static int32_t infer__rx_emit_inst(infer__regex *re, int op, int32_t x, int32_t y) {
    infer__rx_inst in;
    in.op = (uint8_t)op; in.x = x; in.y = y;
    arrput(re->prog, in);
    return (int32_t)arrlen(re->prog) - 1;
}

static int infer__rx_emit(infer__regex *re, const infer__rx_node *nodes, int32_t i) {
    const infer__rx_node *n = &nodes[i];
    int32_t pc, here;
    if (arrlen(re->prog) > 20000) return -1;
    switch (n->type) {
    case INFER__RXN_CLASS: infer__rx_emit_inst(re, INFER__RX_CLASS, n->a, 0); return 0;
    case INFER__RXN_EOS: infer__rx_emit_inst(re, INFER__RX_EOS, 0, 0); return 0;
    case INFER__RXN_EMPTY: return 0;
    case INFER__RXN_SEQ:
        return infer__rx_emit(re, nodes, n->a) < 0 ? -1 : infer__rx_emit(re, nodes, n->b);
    case INFER__RXN_ALT: {
        /*     SPLIT L1, L2 / L1: a / JMP end / L2: b / end: */
        int32_t split = infer__rx_emit_inst(re, INFER__RX_SPLIT, 0, 0), jmp;
        re->prog[split].x = split + 1;
        if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        jmp = infer__rx_emit_inst(re, INFER__RX_JMP, 0, 0);
        re->prog[split].y = (int32_t)arrlen(re->prog);
        if (infer__rx_emit(re, nodes, n->b) < 0) return -1;
        re->prog[jmp].x = (int32_t)arrlen(re->prog);
        return 0;
    }
    case INFER__RXN_NLOOK: case INFER__RXN_PLOOK:
        /*     LOOK sub, end / sub: a / MATCH / end: */
        pc = infer__rx_emit_inst(re, n->type == INFER__RXN_NLOOK ? INFER__RX_NLOOK : INFER__RX_PLOOK, 0, 0);
        re->prog[pc].x = pc + 1;
        if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        infer__rx_emit_inst(re, INFER__RX_MATCH, 0, 0);
        re->prog[pc].y = (int32_t)arrlen(re->prog);
        return 0;
    case INFER__RXN_REP:
        for (int32_t k = 0; k < n->min; k++)
            if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        if (n->max < 0) {
            /*     L: SPLIT body, end / body: a / JMP L / end: */
            pc = infer__rx_emit_inst(re, INFER__RX_SPLIT, 0, 0);
            re->prog[pc].x = pc + 1;
            if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
            infer__rx_emit_inst(re, INFER__RX_JMP, pc, 0);
            re->prog[pc].y = (int32_t)arrlen(re->prog);
            return 0;
        }
        /* max-min optional copies, each SPLIT skipping to the common end: (a(a)?)? */
        here = (int32_t)arrlen(re->prog);
        for (int32_t k = n->min; k < n->max; k++) {
            pc = infer__rx_emit_inst(re, INFER__RX_SPLIT, 0, -1);
            re->prog[pc].x = pc + 1;
            if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        }
        for (pc = here; pc < (int32_t)arrlen(re->prog); pc++)
            if (re->prog[pc].op == INFER__RX_SPLIT && re->prog[pc].y == -1) re->prog[pc].y = (int32_t)arrlen(re->prog);
        return 0;
    }
    return -1;
}

static infer__regex *infer__regex_compile(const char *pattern, const char **err) {
    infer__rx_parser P;
    memset(&P, 0, sizeof P);
    P.p = (const unsigned char *)pattern;
    P.end = P.p + strlen(pattern);
    P.re = (infer__regex *)INFER_MALLOC(sizeof *P.re);
    if (!P.re) { *err = "out of memory"; return NULL; }
    memset(P.re, 0, sizeof *P.re);
    int32_t root = infer__rx_parse_alt(&P);
    if (root >= 0 && P.p < P.end) { P.err = "unbalanced ')'"; root = -1; }
    for (int32_t i = 0; root >= 0 && i < (int32_t)arrlen(P.nodes); i++)
        if (P.nodes[i].type == INFER__RXN_REP && P.nodes[i].max < 0 && infer__rx_nullable(P.nodes, P.nodes[i].a)) {
            P.err = "a repeated group can match the empty string";
            root = -1;
        }
    if (root >= 0 && infer__rx_emit(P.re, P.nodes, root) < 0) { P.err = "pattern too large"; root = -1; }
    if (root >= 0) infer__rx_emit_inst(P.re, INFER__RX_MATCH, 0, 0);
    arrfree(P.nodes);
    if (root < 0) {
        *err = P.err ? P.err : "bad pattern";
        infer__regex_free(P.re);
        return NULL;
    }
    return P.re;
}

/* per code point: bit (1 << category) | INFER__RX_SPACE if white space */
static uint8_t infer__rx_flags(uint32_t cp) {
    return (uint8_t)((1u << infer__uc_category(cp)) | (infer__uc_is_space(cp) ? INFER__RX_SPACE : 0));
}

static int infer__rx_class_match(const infer__regex *re, const infer__rx_class *c, uint32_t cp, uint8_t flags) {
    int hit = (c->cats & flags) != 0;
    for (int32_t k = 0; !hit && k < c->count; k++) {
        const uint32_t *r = &re->ranges[2 * (c->first + k)];
        hit = cp >= r[0] && cp <= r[1];
    }
    return hit != c->neg;
}

/* Runs the program from `pc` at code point `pos` of cp[0..end). Returns the end of the
 * first match in priority order, or -1. `stack` holds (pc, pos) pairs still to try. */
static int64_t infer__rx_run(const infer__regex *re, int32_t pc, const uint32_t *cp, const uint8_t *fl,
                             int64_t end, int64_t pos, int64_t **stack) {
    size_t base = arrlen(*stack);
    arrput(*stack, pc);
    arrput(*stack, pos);
    while (arrlenu(*stack) > base) {
        pos = arrpop(*stack);
        pc = (int32_t)arrpop(*stack);
        for (;;) {
            const infer__rx_inst *in = &re->prog[pc];
            if (in->op == INFER__RX_CLASS) {
                if (pos >= end || !infer__rx_class_match(re, &re->cls[in->x], cp[pos], fl[pos])) break;
                pos++; pc++;
            } else if (in->op == INFER__RX_SPLIT) {
                arrput(*stack, in->y);
                arrput(*stack, pos);
                pc = in->x;
            } else if (in->op == INFER__RX_JMP) {
                pc = in->x;
            } else if (in->op == INFER__RX_EOS) {
                if (pos != end) break;
                pc++;
            } else if (in->op == INFER__RX_MATCH) {
                arrsetlen(*stack, base);
                return pos;
            } else { /* lookahead: the sub-program must (PLOOK) or must not (NLOOK) match here */
                int hit = infer__rx_run(re, in->x, cp, fl, end, pos, stack) >= 0;
                if (hit != (in->op == INFER__RX_PLOOK)) break;
                pc = in->y;
            }
        }
    }
    return -1;
}

/* Splits every piece [a, b) of `in` (pairs of code point indices) with `re`, the way
 * llama.cpp's regex iterator does: each match is a piece and so is the text between two
 * matches. Each piece is matched on its own (its end is the end of the input). */
static void infer__rx_split(const infer__regex *re, const uint32_t *cp, const uint8_t *fl,
                            const int64_t *in, int64_t **out, int64_t **stack) {
    for (size_t k = 0; k < arrlenu(in); k += 2) {
        int64_t a = in[k], b = in[k + 1], last = a;
        for (int64_t s = a; s < b; s++) {
            int64_t e = infer__rx_run(re, 0, cp, fl, b, s, stack);
            if (e <= s) continue; /* no match here (an empty match is no piece) */
            if (s > last) { arrput(*out, last); arrput(*out, s); }
            arrput(*out, s);
            arrput(*out, e);
            last = e;
            s = e - 1;
        }
        if (last < b) { arrput(*out, last); arrput(*out, b); }
    }
}

/* -----------------------------------------------------------------------------------------
 * Pre-tokenizers by GGUF `tokenizer.ggml.pre` (llama.cpp llama-vocab.cpp). The regexes are
 * applied in order, each to the pieces the previous one produced. `flags`:
 *   IGNORE_MERGES  a pre-token that is itself a vocab entry is emitted without merging
 *   ADD_BOS        BOS is added by default (the GGUF key add_bos_token still overrides)
 *   KEEP_SPACES    detokenize does not "clean up" spaces before punctuation
 * --------------------------------------------------------------------------------------- */
enum { INFER__PRE_IGNORE_MERGES = 1, INFER__PRE_ADD_BOS = 2, INFER__PRE_KEEP_SPACES = 4 };

/* the GPT-2 pattern, shared by several families */
#define INFER__RX_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
/* llama3: the HF pattern with (?i:'s|...) spelled out case by case */
#define INFER__RX_LLAMA3 "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+" \
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* qwen2: llama3 with single digits */
#define INFER__RX_QWEN2 "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+" \
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* qwen35: qwen2 where combining marks count as letters */
#define INFER__RX_QWEN35 "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+" \
    "|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__RX_BLOOM " ?[^(\\s|.,!?…。，、।۔،)]+"

typedef struct infer__pre_def {
    const char *names;     /* '|'-separated GGUF names */
    int flags;
    const char *regex[8];  /* NULL-terminated */
} infer__pre_def;

static const infer__pre_def infer__pre_defs[] = {
    { "default", 0,
      { "[\\p{P}\\$\\+<=>\\^~\\|]+", INFER__RX_GPT2, "\\p{N}+", "[0-9][0-9][0-9]", NULL } },
    { "llama3|llama-v3|llama-bpe|falcon3|falcon-h1|pixtral|midm-2.0|lfm2",
      INFER__PRE_IGNORE_MERGES | INFER__PRE_ADD_BOS, { INFER__RX_LLAMA3, NULL } },
    { "dbrx|smaug-bpe", 0, { INFER__RX_LLAMA3, NULL } },
    { "qwen2|deepseek-r1-qwen|kormo|f2llmv2|hunyuan|solar-open", INFER__PRE_KEEP_SPACES, { INFER__RX_QWEN2, NULL } },
    { "megrez|stablelm2", 0, { INFER__RX_QWEN2, NULL } },
    { "qwen35", INFER__PRE_KEEP_SPACES, { INFER__RX_QWEN35, NULL } },
    { "gpt-2|mpt|olmo|jais|phi-2|jina-es|jina-de|gigachat|jina-v2-es|jina-v2-de|a.x-4.0|mellum|modern-bert|exaone4",
      0, { INFER__RX_GPT2, NULL } },
    { "trillion|granite-docling", INFER__PRE_KEEP_SPACES, { INFER__RX_GPT2, NULL } },
    { "starcoder|refact|codeshell|exaone|minerva-7b|mellum2", 0, { "\\p{N}", INFER__RX_GPT2, NULL } },
    { "command-r|smollm", INFER__PRE_KEEP_SPACES, { "\\p{N}", INFER__RX_GPT2, NULL } },
    { "falcon", 0, { "[\\p{P}\\$\\+<=>\\^~\\|`]+", INFER__RX_GPT2, "[0-9][0-9][0-9]", NULL } },
    /* deepseek-llm's second class is the cased letters (Lu Ll Lt). Six of its code points
     * have canonical singleton decompositions (U+1F7D U+1FBE U+1FD3 U+1FDB U+2126 U+212A);
     * they are written as escapes so that no Unicode normalization of this file changes them. */
    { "deepseek-llm", INFER__PRE_KEEP_SPACES,
      { "[\\r\\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-" "\xE1\xBD\xBD" "ᾀ-ᾴᾶ-ᾼ" "\xE1\xBE\xBE" "ῂ-ῄῆ-ῌῐ-" "\xE1\xBF\x93" "ῖ-" "\xE1\xBF\x9B" "ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ" "\xE2\x84\xA6" "ℨ" "\xE2\x84\xAA" "-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        "[一-龥ࠀ-一가-퟿]+",
        "\\p{N}+", NULL } },
    { "deepseek-coder", INFER__PRE_KEEP_SPACES,
      { "[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}", NULL } },
    { "deepseek-v3|hunyuan-dense|joyai-llm", INFER__PRE_KEEP_SPACES,
      { "\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
        "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL } },
    { "bloom|gpt3-finnish", 0, { INFER__RX_BLOOM, NULL } },
    { "poro-chat", INFER__PRE_KEEP_SPACES, { INFER__RX_BLOOM, NULL } },
    { "viking", INFER__PRE_KEEP_SPACES, { INFER__RX_BLOOM, "\\p{N}", NULL } },
};

static const infer__pre_def *infer__pre_find(const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof infer__pre_defs / sizeof infer__pre_defs[0]; i++) {
        const char *s = infer__pre_defs[i].names;
        while (*s) {
            const char *e = strchr(s, '|');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            if (len == n && memcmp(s, name, n) == 0) return &infer__pre_defs[i];
            s += len + (e != NULL);
        }
    }
    return NULL;
}

/* -----------------------------------------------------------------------------------------
 * Loading
 * --------------------------------------------------------------------------------------- */

void infer_tokenizer_free(infer_tokenizer *t) {
    if (!t) return;
    INFER_FREE(t->arena);
    INFER_FREE(t->text_off);
    INFER_FREE(t->piece_off);
    INFER_FREE(t->attr);
    INFER_FREE(t->score);
    INFER_FREE(t->vocab.slots);
    INFER_FREE(t->merges.slots);
    INFER_FREE(t->specials);
    for (int32_t i = 0; i < t->n_regex; i++) infer__regex_free(t->regex[i]);
    INFER_FREE(t->regex);
    memset(t, 0, sizeof *t);
}

static int infer__tok_attr_from_type(int32_t type) {
    switch (type) {
    case 1: return INFER__TOK_NORMAL;
    case 2: return INFER__TOK_UNKNOWN;
    case 3: return INFER__TOK_CONTROL;
    case 4: return INFER__TOK_USER;
    case 5: return INFER__TOK_UNUSED;
    case 6: return INFER__TOK_BYTE;
    default: return 0; /* undefined */
    }
}

/* "<0xAB>" -> 0xAB, else -1 */
static int infer__tok_parse_byte(const char *s, uint32_t n) {
    static const char hex[] = "0123456789ABCDEF";
    const char *h, *l;
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>' || !s[3] || !s[4]) return -1;
    h = strchr(hex, s[3]);
    l = strchr(hex, s[4]);
    if (!h || !l) return -1;
    return (int)((h - hex) * 16 + (l - hex));
}

/* Appends the bytes token `id` stands for (as infer_token_to_piece with special = 1). */
static size_t infer__tok_make_piece(const infer_tokenizer *t, int32_t id, char *out) {
    uint32_t n, k = 0;
    const char *s = infer__tok_text(t, id, &n);
    int a = t->attr[id];
    if (a & (INFER__TOK_UNKNOWN | INFER__TOK_CONTROL | INFER__TOK_USER)) {
        memcpy(out, s, n);
        return n;
    }
    if (a & INFER__TOK_BYTE) {
        int b = infer__tok_parse_byte(s, n);
        if (b < 0) { memcpy(out, s, n); return n; }
        out[0] = (char)b;
        return 1;
    }
    if (!(a & INFER__TOK_NORMAL)) return 0;
    if (t->kind == INFER_TOK_BPE) { /* undo bytes_to_unicode */
        for (uint32_t i = 0; i < n;) {
            uint32_t cp;
            int len = infer__utf8_decode((const unsigned char *)s + i, n - i, &cp);
            int b = infer__cp_to_byte(cp);
            if (b >= 0) out[k++] = (char)b;
            else { memcpy(out + k, s + i, (size_t)len); k += (uint32_t)len; }
            i += (uint32_t)len;
        }
        return k;
    }
    for (uint32_t i = 0; i < n;) { /* SPM, WPM: "▁" (E2 96 81) is a space */
        if (i + 3 <= n && memcmp(s + i, "\xE2\x96\x81", 3) == 0) { out[k++] = ' '; i += 3; }
        else out[k++] = s[i++];
    }
    return k;
}

static const char *const infer__eog_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", /* <｜end▁of▁sentence｜> */
    "[e~[", NULL
};
static const char *const infer__eot_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>", NULL
};

/* the first of `texts` (in list order) that is a token; -1 if none is */
static int32_t infer__tok_find_any(const infer_tokenizer *t, const char *const *texts) {
    for (int i = 0; texts[i]; i++) {
        int32_t id = infer__tok_find(t, texts[i], strlen(texts[i]));
        if (id >= 0) return id;
    }
    return -1;
}

/* Special ids: model default, replaced by the GGUF key when that is in range. */
static int32_t infer__tok_pick_id(int32_t key, int32_t dflt, int32_t n_vocab) {
    if (key >= 0 && key < n_vocab) return key;
    return dflt >= 0 && dflt < n_vocab ? dflt : -1;
}

/* model kind, default special ids and default flags (llama.cpp llama_vocab::impl::load) */
static int infer__tok_set_kind(infer_tokenizer *t, const infer__tok_src *src, char *err, size_t errlen) {
    const char *m = src->model;
    int32_t bos = -1, eos = -1, unk = -1, sep = -1, pad = -1, mask = -1, n = src->n_vocab;
    t->add_bos = t->add_eos = t->add_space_prefix = 0;
    if (!m || !strcmp(m, "none") || !strcmp(m, "no_vocab")) {
        t->kind = INFER_TOK_NONE;
        t->bos = t->eos = t->eot = t->eom = t->unk = t->pad = t->sep = t->mask = -1;
        return 0;
    } else if (!strcmp(m, "llama")) {
        t->kind = INFER_TOK_SPM;
        bos = 1; eos = 2; unk = 0;
        t->add_bos = 1; t->add_space_prefix = 1;
    } else if (!strcmp(m, "gpt2")) {
        const char *pre = src->pre && src->pre[0] ? src->pre : "default";
        const infer__pre_def *def = infer__pre_find(pre);
        if (!def) return infer__tok_fail(err, errlen, "unknown pre-tokenizer \"%s\"", pre);
        t->kind = INFER_TOK_BPE;
        t->pre_def = (int32_t)(def - infer__pre_defs);
        snprintf(t->pre, sizeof t->pre, "%.31s", pre);   /* known names are short */
        bos = eos = 11;
        t->ignore_merges = (def->flags & INFER__PRE_IGNORE_MERGES) != 0;
        t->add_bos = (def->flags & INFER__PRE_ADD_BOS) != 0;
        t->clean_spaces = !(def->flags & INFER__PRE_KEEP_SPACES);
    } else if (!strcmp(m, "bert")) {
        t->kind = INFER_TOK_WPM;
        bos = src->cls >= 0 ? src->cls : 101; unk = 100; sep = 102; pad = 0; mask = 103;
        t->add_bos = 1;
        t->clean_spaces = 1;
    } else {
        return infer__tok_fail(err, errlen, "unsupported tokenizer model \"%s\"", m);
    }
    if (n <= 0) return infer__tok_fail(err, errlen, "tokenizer \"%s\" has an empty vocabulary", m);
    t->bos = infer__tok_pick_id(src->bos, bos, n);
    t->eos = infer__tok_pick_id(src->eos, eos, n);
    t->eot = infer__tok_pick_id(src->eot, -1, n);
    t->eom = infer__tok_pick_id(src->eom, -1, n);
    t->unk = infer__tok_pick_id(src->unk, unk, n);
    t->sep = infer__tok_pick_id(src->sep, sep, n);
    t->pad = infer__tok_pick_id(src->pad, pad, n);
    t->mask = infer__tok_pick_id(src->mask, mask, n);
    if (src->add_bos >= 0) t->add_bos = src->add_bos != 0;
    if (src->add_eos >= 0) t->add_eos = src->add_eos != 0;
    if (src->add_space_prefix >= 0) t->add_space_prefix = src->add_space_prefix != 0;
    if (t->add_bos && t->bos < 0) return infer__tok_fail(err, errlen, "add_bos_token is set but there is no BOS token");
    if (t->add_eos && t->eos < 0) return infer__tok_fail(err, errlen, "add_eos_token is set but there is no EOS token");
    return 0;
}

/* Copies token texts into the arena, builds text -> id and the attributes. */
static int infer__tok_load_vocab(infer_tokenizer *t, const infer__tok_src *src, size_t *used, char *err, size_t errlen) {
    int32_t n = t->n_vocab;
    size_t off = 0;
    if (infer__map_alloc(&t->vocab, (size_t)n) < 0) return infer__tok_fail(err, errlen, "out of memory");
    for (int32_t i = 0; i < n; i++) {
        size_t len = (size_t)src->token_lens[i];
        if (len && !src->tokens[i]) return infer__tok_fail(err, errlen, "token %d has no text", i);
        t->text_off[i] = (uint32_t)off;
        if (len) memcpy(t->arena + off, src->tokens[i], len);
        /* GGUF metadata arrays are not aligned: read the elements bytewise */
        if (src->types) {
            int32_t type;
            memcpy(&type, (const char *)src->types + 4 * (size_t)i, 4);
            t->attr[i] = (uint8_t)infer__tok_attr_from_type(type);
        } else {
            t->attr[i] = INFER__TOK_NORMAL;
        }
        if (t->score) memcpy(&t->score[i], (const char *)src->scores + 4 * (size_t)i, 4);
        if (len > (size_t)t->max_token_len) t->max_token_len = (int32_t)len;
        if (len) { /* an empty text can never match; llama.cpp renames it "[EMPTY_i]" */
            int32_t prev = infer__map_put(&t->vocab, t->arena, (uint32_t)off, (uint32_t)len, 0, i);
            if (prev != i)
                return infer__tok_fail(err, errlen, "duplicate token in vocabulary: ids %d and %d have the same text", prev, i);
        }
        off += len;
    }
    t->text_off[n] = (uint32_t)off;
    *used = off;
    return 0;
}

/* BPE merges "left right" -> rank; the key is left||right with aux = strlen(left) */
static int infer__tok_load_merges(infer_tokenizer *t, const infer__tok_src *src, size_t *used, char *err, size_t errlen) {
    size_t off = *used;
    if (src->n_merges > 0 && (!src->merges || !src->merge_lens))
        return infer__tok_fail(err, errlen, "merges are missing");
    if (infer__map_alloc(&t->merges, (size_t)(src->n_merges > 0 ? src->n_merges : 0)) < 0)
        return infer__tok_fail(err, errlen, "out of memory");
    for (int32_t i = 0; i < src->n_merges; i++) {
        const char *s = src->merges[i];
        size_t len = (size_t)src->merge_lens[i], sp;
        if (!s && len) return infer__tok_fail(err, errlen, "bad merge at index %d (no text)", i);
        /* the separator is the first space after the first byte (a left part may be " ") */
        for (sp = 1; sp < len && s[sp] != ' '; sp++) {}
        if (len < 3 || sp >= len - 1)
            return infer__tok_fail(err, errlen, "bad merge at index %d (expected \"left right\")", i);
        memcpy(t->arena + off, s, sp);
        memcpy(t->arena + off + sp, s + sp + 1, len - sp - 1);
        infer__map_put(&t->merges, t->arena, (uint32_t)off, (uint32_t)(len - 1), (int32_t)sp, i);
        off += len - 1;
    }
    *used = off;
    return 0;
}

static int infer__cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* EOG set, EOT/EOM auto-detection, special-token list, byte tokens, pieces. */
static int infer__tok_finish(infer_tokenizer *t, size_t *used, char *err, size_t errlen) {
    int32_t n = t->n_vocab;
    size_t off = *used;
    if (t->eot < 0) t->eot = infer__tok_find_any(t, infer__eot_texts);
    if (t->eom < 0) t->eom = infer__tok_find(t, "<|eom_id|>", 10);
    for (int i = 0; infer__eog_texts[i]; i++) {
        int32_t id = infer__tok_find(t, infer__eog_texts[i], strlen(infer__eog_texts[i]));
        if (id >= 0) t->attr[id] |= INFER__TOK_EOG | INFER__TOK_CONTROL;
    }
    if (t->eot >= 0) t->attr[t->eot] |= INFER__TOK_CONTROL;
    if (t->eom >= 0) t->attr[t->eom] |= INFER__TOK_CONTROL;
    if (t->eos >= 0) t->attr[t->eos] |= INFER__TOK_EOG;
    if (t->eot >= 0) t->attr[t->eot] |= INFER__TOK_EOG;
    if (t->eom >= 0) t->attr[t->eom] |= INFER__TOK_EOG;

    for (int b = 0; b < 256; b++) {
        char buf[8];
        snprintf(buf, sizeof buf, "<0x%02X>", b);
        t->byte_token[b] = infer__tok_find(t, buf, 6);
        if (t->byte_token[b] < 0) { buf[0] = (char)b; t->byte_token[b] = infer__tok_find(t, buf, 1); }
    }

    t->specials = (int32_t *)INFER_MALLOC((size_t)n * sizeof(int32_t));
    if (!t->specials) return infer__tok_fail(err, errlen, "out of memory");
    for (int32_t i = 0; i < n; i++)
        if ((t->attr[i] & (INFER__TOK_CONTROL | INFER__TOK_USER | INFER__TOK_UNKNOWN)) && t->text_off[i + 1] > t->text_off[i])
            t->specials[t->n_specials++] = i;
    /* longest text first (ties: lower id), as llama.cpp's cache_special_tokens */
    {
        uint64_t *keys = (uint64_t *)INFER_MALLOC((size_t)(t->n_specials ? t->n_specials : 1) * sizeof(uint64_t));
        if (!keys) return infer__tok_fail(err, errlen, "out of memory");
        for (int32_t i = 0; i < t->n_specials; i++) {
            uint32_t len = t->text_off[t->specials[i] + 1] - t->text_off[t->specials[i]];
            keys[i] = ((uint64_t)(UINT32_MAX - len) << 32) | (uint32_t)t->specials[i];
        }
        qsort(keys, (size_t)t->n_specials, sizeof *keys, infer__cmp_u64);
        for (int32_t i = 0; i < t->n_specials; i++) t->specials[i] = (int32_t)(keys[i] & 0xFFFFFFFFu);
        INFER_FREE(keys);
    }

    for (int32_t i = 0; i < n; i++) {
        t->piece_off[i] = (uint32_t)off;
        size_t k = infer__tok_make_piece(t, i, t->arena + off);
        if (k > (size_t)t->max_piece_len) t->max_piece_len = (int32_t)k;
        off += k;
    }
    t->piece_off[n] = (uint32_t)off;
    *used = off;
    return 0;
}

static int infer__tok_compile_pre(infer_tokenizer *t, char *err, size_t errlen) {
    const infer__pre_def *def = &infer__pre_defs[t->pre_def];
    int32_t k = 0;
    while (def->regex[k]) k++;
    t->regex = (infer__regex **)INFER_MALLOC((size_t)k * sizeof *t->regex);
    if (!t->regex) return infer__tok_fail(err, errlen, "out of memory");
    for (t->n_regex = 0; t->n_regex < k; t->n_regex++) {
        const char *why = NULL;
        t->regex[t->n_regex] = infer__regex_compile(def->regex[t->n_regex], &why);
        if (!t->regex[t->n_regex])
            return infer__tok_fail(err, errlen, "pre-tokenizer \"%s\": regex %d: %s", t->pre, t->n_regex, why);
    }
    return 0;
}

/* Builds a tokenizer from `src`. Returns 0, or -1 with a message in err. On error `t` is
 * left empty (nothing to free). */
static int infer__tok_init(infer_tokenizer *t, const infer__tok_src *src, char *err, size_t errlen) {
    size_t text_bytes = 0, merge_bytes = 0, used = 0;
    memset(t, 0, sizeof *t);
    if (!src) return infer__tok_fail(err, errlen, "no tokenizer description");
    if (infer__tok_set_kind(t, src, err, errlen) < 0) goto fail;
    if (t->kind == INFER_TOK_NONE) return 0;
    if (!src->tokens || !src->token_lens) { infer__tok_fail(err, errlen, "tokenizer has no token list"); goto fail; }
    for (int32_t i = 0; i < src->n_vocab; i++) {
        if (src->token_lens[i] > INFER__TOK_MAX_LEN) { infer__tok_fail(err, errlen, "token %d is too long", i); goto fail; }
        text_bytes += (size_t)src->token_lens[i];
    }
    for (int32_t i = 0; t->kind == INFER_TOK_BPE && src->merge_lens && i < src->n_merges; i++) {
        if (src->merge_lens[i] > INFER__TOK_MAX_LEN) { infer__tok_fail(err, errlen, "merge %d is too long", i); goto fail; }
        merge_bytes += (size_t)src->merge_lens[i];
    }
    /* the arena holds texts, merge keys and pieces (never longer than their texts) */
    if (text_bytes * 2 + merge_bytes >= 0xFFFFFFFFu) { infer__tok_fail(err, errlen, "token texts too large"); goto fail; }
    t->n_vocab = src->n_vocab;
    t->arena = (char *)INFER_MALLOC(text_bytes * 2 + merge_bytes + 1);
    t->text_off = (uint32_t *)INFER_MALLOC(((size_t)t->n_vocab + 1) * sizeof(uint32_t));
    t->piece_off = (uint32_t *)INFER_MALLOC(((size_t)t->n_vocab + 1) * sizeof(uint32_t));
    t->attr = (uint8_t *)INFER_MALLOC((size_t)t->n_vocab);
    t->score = src->scores ? (float *)INFER_MALLOC((size_t)t->n_vocab * sizeof(float)) : NULL;
    if (!t->arena || !t->text_off || !t->piece_off || !t->attr || (src->scores && !t->score)) {
        infer__tok_fail(err, errlen, "out of memory");
        goto fail;
    }
    if (infer__tok_load_vocab(t, src, &used, err, errlen) < 0) goto fail;
    if (t->kind == INFER_TOK_BPE) {
        if (infer__tok_load_merges(t, src, &used, err, errlen) < 0) goto fail;
        if (infer__tok_compile_pre(t, err, errlen) < 0) goto fail;
    }
    if (infer__tok_finish(t, &used, err, errlen) < 0) goto fail;
    return 0;
fail:
    infer_tokenizer_free(t);
    return -1;
}

/* -----------------------------------------------------------------------------------------
 * Merging: symbols in a linked list over one buffer, candidate pairs in a max-heap
 * --------------------------------------------------------------------------------------- */

typedef struct infer__tok_sym { int32_t prev, next; uint32_t off, n; } infer__tok_sym;
/* prio: SPM token score, BPE -rank; ties go to the leftmost pair */
typedef struct infer__tok_pair { double prio; int32_t left, right; uint32_t size; } infer__tok_pair;

static int infer__pair_before(const infer__tok_pair *a, const infer__tok_pair *b) {
    return a->prio > b->prio || (a->prio == b->prio && a->left < b->left);
}

static void infer__heap_push(infer__tok_pair **h, infer__tok_pair p) {
    arrput(*h, p);
    for (size_t i = arrlenu(*h) - 1; i > 0;) {
        size_t up = (i - 1) / 2;
        if (!infer__pair_before(&(*h)[i], &(*h)[up])) break;
        infer__tok_pair tmp = (*h)[i]; (*h)[i] = (*h)[up]; (*h)[up] = tmp;
        i = up;
    }
}

static infer__tok_pair infer__heap_pop(infer__tok_pair *h) {
    infer__tok_pair top = h[0];
    size_t n = arrlenu(h) - 1, i = 0;
    h[0] = h[n];
    arrsetlen(h, n);
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < n && infer__pair_before(&h[l], &h[best])) best = l;
        if (r < n && infer__pair_before(&h[r], &h[best])) best = r;
        if (best == i) break;
        infer__tok_pair tmp = h[i]; h[i] = h[best]; h[best] = tmp;
        i = best;
    }
    return top;
}

/* One symbol per UTF-8 character of buf[0..n) (a stray byte is a character of its own). */
static void infer__syms_from_text(infer__tok_sym **syms, const char *buf, size_t n) {
    arrsetlen(*syms, 0);
    for (size_t off = 0; off < n;) {
        size_t len = (size_t)infer__utf8_len((unsigned char)buf[off]);
        infer__tok_sym s;
        if (len > n - off) len = n - off;
        s.prev = (int32_t)arrlen(*syms) - 1;
        s.off = (uint32_t)off;
        s.n = (uint32_t)len;
        off += len;
        s.next = off == n ? -1 : (int32_t)arrlen(*syms) + 1;
        arrput(*syms, s);
    }
}

/* the candidate pair (left, right); 0 when the two do not merge */
static int infer__tok_pair_make(const infer_tokenizer *t, const char *buf, const infer__tok_sym *syms,
                                int32_t left, int32_t right, infer__tok_pair *p) {
    const infer__tok_sym *l = &syms[left], *r = &syms[right];
    if (t->kind == INFER_TOK_SPM) {
        int32_t id = infer__tok_find(t, buf + l->off, l->n + r->n);
        if (id < 0) return 0;
        p->prio = t->score ? t->score[id] : 0.0;
    } else {
        int32_t rank = infer__map_get(&t->merges, t->arena, buf + l->off, l->n + r->n, (int32_t)l->n);
        if (rank < 0) return 0;
        p->prio = -(double)rank;
    }
    p->left = left;
    p->right = right;
    p->size = l->n + r->n;
    return 1;
}

static void infer__tok_try_pair(const infer_tokenizer *t, const char *buf, const infer__tok_sym *syms,
                                int32_t left, int32_t right, infer__tok_pair **heap) {
    infer__tok_pair p;
    if (left >= 0 && right >= 0 && infer__tok_pair_make(t, buf, syms, left, right, &p)) infer__heap_push(heap, p);
}

/* Merges the symbols of buf until no candidate pair is left (both SPM and BPE). */
static void infer__tok_merge(const infer_tokenizer *t, const char *buf, infer__tok_sym *syms, infer__tok_pair **heap) {
    arrsetlen(*heap, 0);
    for (int32_t i = 1; i < (int32_t)arrlen(syms); i++) infer__tok_try_pair(t, buf, syms, i - 1, i, heap);
    while (arrlen(*heap) > 0) {
        infer__tok_pair p = infer__heap_pop(*heap);
        infer__tok_sym *l = &syms[p.left], *r = &syms[p.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != p.size) continue; /* stale */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) syms[r->next].prev = p.left;
        infer__tok_try_pair(t, buf, syms, l->prev, p.left, heap);
        infer__tok_try_pair(t, buf, syms, p.left, l->next, heap);
    }
}

/* scratch buffers of one infer_tokenize() call (stb_ds arrays) */
typedef struct infer__tok_work {
    int32_t *out;
    char *buf;
    infer__tok_sym *syms;
    infer__tok_pair *heap;
    uint32_t *cps;
    uint8_t *flags;
    int64_t *pieces, *pieces2, *stack;
} infer__tok_work;

static void infer__tok_work_free(infer__tok_work *w) {
    arrfree(w->out); arrfree(w->buf); arrfree(w->syms); arrfree(w->heap); arrfree(w->cps);
    arrfree(w->flags); arrfree(w->pieces); arrfree(w->pieces2); arrfree(w->stack);
}

/* ---- SPM ---- */

static void infer__spm_fragment(const infer_tokenizer *t, infer__tok_work *w, const char *text, size_t len, int prefix) {
    arrsetlen(w->buf, 0);
    if (prefix) { arrput(w->buf, '\xE2'); arrput(w->buf, '\x96'); arrput(w->buf, '\x81'); }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') { arrput(w->buf, '\xE2'); arrput(w->buf, '\x96'); arrput(w->buf, '\x81'); }
        else arrput(w->buf, text[i]);
    }
    infer__syms_from_text(&w->syms, w->buf, arrlenu(w->buf));
    infer__tok_merge(t, w->buf, w->syms, &w->heap);
    for (int32_t i = 0; arrlen(w->syms) > 0 && i >= 0; i = w->syms[i].next) {
        const infer__tok_sym *s = &w->syms[i];
        int32_t id = infer__tok_find(t, w->buf + s->off, s->n);
        if (id >= 0) { arrput(w->out, id); continue; }
        /* Not a token: a single character (merges only ever form tokens). Byte fallback.
         * llama.cpp also keeps a "rev_merge" map for this case, but it can only be reached
         * by symbols that are tokens, so it is not needed. */
        for (uint32_t k = 0; k < s->n; k++) {
            int32_t b = t->byte_token[(unsigned char)w->buf[s->off + k]];
            if (b < 0) b = t->unk;
            if (b >= 0) arrput(w->out, b);
        }
    }
}

/* ---- BPE ---- */

/* Merges one pre-token (already mapped through bytes_to_unicode) and appends its ids. */
static void infer__bpe_word(const infer_tokenizer *t, infer__tok_work *w, const char *word, size_t n) {
    int32_t id;
    if (t->ignore_merges && (id = infer__tok_find(t, word, n)) >= 0) {
        arrput(w->out, id);
        return;
    }
    infer__syms_from_text(&w->syms, word, n);
    infer__tok_merge(t, word, w->syms, &w->heap);
    for (int32_t i = 0; arrlen(w->syms) > 0 && i >= 0; i = w->syms[i].next) {
        const infer__tok_sym *s = &w->syms[i];
        id = infer__tok_find(t, word + s->off, s->n);
        if (id >= 0) { arrput(w->out, id); continue; }
        for (uint32_t k = 0; k < s->n; k++) { /* llama.cpp: each byte as a one-byte token, if any */
            id = infer__tok_find(t, word + s->off + k, 1);
            if (id >= 0) arrput(w->out, id);
        }
    }
}

static void infer__bpe_fragment(const infer_tokenizer *t, infer__tok_work *w, const char *text, size_t len) {
    arrsetlen(w->cps, 0);
    arrsetlen(w->flags, 0);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += (size_t)infer__utf8_decode((const unsigned char *)text + i, len - i, &cp);
        arrput(w->cps, cp);
        arrput(w->flags, infer__rx_flags(cp));
    }
    arrsetlen(w->pieces, 0);
    arrput(w->pieces, 0);
    arrput(w->pieces, (int64_t)arrlen(w->cps));
    for (int32_t r = 0; r < t->n_regex; r++) {
        int64_t *tmp;
        arrsetlen(w->pieces2, 0);
        infer__rx_split(t->regex[r], w->cps, w->flags, w->pieces, &w->pieces2, &w->stack);
        tmp = w->pieces; w->pieces = w->pieces2; w->pieces2 = tmp;
    }
    for (size_t k = 0; k < arrlenu(w->pieces); k += 2) {
        arrsetlen(w->buf, 0);
        for (int64_t i = w->pieces[k]; i < w->pieces[k + 1]; i++) {
            char u[4], c[4];
            int n = infer__utf8_encode(w->cps[i], u);
            for (int j = 0; j < n; j++) {
                int m = infer__utf8_encode(infer__byte_to_cp((unsigned char)u[j]), c);
                for (int q = 0; q < m; q++) arrput(w->buf, c[q]);
            }
        }
        if (arrlen(w->buf) > 0) infer__bpe_word(t, w, w->buf, arrlenu(w->buf));
    }
}

/* ---- WPM (BERT WordPiece, llama.cpp llm_tokenizer_wpm_session) ---- */

static int infer__is_cjk(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* Greedy longest match of "▁" + word; a word with an unmatchable rest becomes [UNK]. */
static void infer__wpm_word(const infer_tokenizer *t, infer__tok_work *w, const char *word, size_t n) {
    size_t start = arrlenu(w->out);
    for (size_t i = 0; i < n;) {
        size_t j = i + (size_t)t->max_token_len < n ? i + (size_t)t->max_token_len : n;
        int32_t id = -1;
        for (; j > i; j--)
            if ((id = infer__tok_find(t, word + i, j - i)) >= 0) break;
        if (id < 0) { arrsetlen(w->out, start); break; }
        arrput(w->out, id);
        i = j;
    }
    if (arrlenu(w->out) == start && t->unk >= 0) arrput(w->out, t->unk);
}

static void infer__wpm_flush(const infer_tokenizer *t, infer__tok_work *w) {
    if (arrlen(w->buf) > 3) infer__wpm_word(t, w, w->buf, arrlenu(w->buf));
    arrsetlen(w->buf, 3); /* keep the "▁" prefix */
}

/* lower-case, NFD + drop accents, split at white space; punctuation, ASCII symbols and CJK
 * characters are words of their own; control characters are dropped. */
static void infer__wpm_fragment(const infer_tokenizer *t, infer__tok_work *w, const char *text, size_t len) {
    arrsetlen(w->buf, 0);
    arrput(w->buf, '\xE2'); arrput(w->buf, '\x96'); arrput(w->buf, '\x81');
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        char u[4];
        i += (size_t)infer__utf8_decode((const unsigned char *)text + i, len - i, &cp);
        cp = infer__uc_nfd_base(cp);
        int cat = infer__uc_category(cp);
        if (infer__uc_is_space(cp)) { infer__wpm_flush(t, w); continue; }
        if (cp == 0 || cp == 0xFFFD || cat == INFER__UC_C || cat == INFER__UC_M) continue;
        int n = infer__utf8_encode(infer__uc_tolower(cp), u);
        int alone = cat == INFER__UC_P || (cp < 0x7F && cat == INFER__UC_S) || infer__is_cjk(cp);
        if (alone) infer__wpm_flush(t, w);
        for (int k = 0; k < n; k++) arrput(w->buf, u[k]);
        if (alone) infer__wpm_flush(t, w);
    }
    infer__wpm_flush(t, w);
}

/* ---- special-token partitioning and the whole tokenize ---- */

/* fragment: id >= 0 is a special token, id < 0 raw text [off, off+len) */
typedef struct infer__tok_frag { int32_t id; size_t off, len; } infer__tok_frag;

static const char *infer__memfind(const char *h, size_t hn, const char *n, size_t nn) {
    if (nn == 0 || hn < nn) return NULL;
    for (const char *p = h, *end = h + hn - nn; p <= end; p++) {
        p = (const char *)memchr(p, n[0], (size_t)(end - p) + 1);
        if (!p) return NULL;
        if (memcmp(p, n, nn) == 0) return p;
    }
    return NULL;
}

static infer__tok_frag *infer__tok_partition(const infer_tokenizer *t, const char *text, size_t len, int parse_special) {
    infer__tok_frag *frags = NULL, *next = NULL, f;
    if (len == 0) return NULL;
    f.id = -1; f.off = 0; f.len = len;
    arrput(frags, f);
    for (int32_t s = 0; s < t->n_specials; s++) {
        int32_t id = t->specials[s];
        uint32_t sn;
        const char *st = infer__tok_text(t, id, &sn);
        if (!parse_special && (t->attr[id] & (INFER__TOK_CONTROL | INFER__TOK_UNKNOWN))) continue;
        arrsetlen(next, 0);
        for (size_t k = 0; k < arrlenu(frags); k++) {
            size_t pos = frags[k].off, end = frags[k].off + frags[k].len;
            const char *hit;
            if (frags[k].id >= 0) { arrput(next, frags[k]); continue; }
            while ((hit = infer__memfind(text + pos, end - pos, st, sn)) != NULL) {
                size_t at = (size_t)(hit - text);
                if (at > pos) { f.id = -1; f.off = pos; f.len = at - pos; arrput(next, f); }
                f.id = id; f.off = at; f.len = sn;
                arrput(next, f);
                pos = at + sn;
            }
            if (pos < end) { f.id = -1; f.off = pos; f.len = end - pos; arrput(next, f); }
        }
        { infer__tok_frag *tmp = frags; frags = next; next = tmp; }
    }
    arrfree(next);
    return frags;
}

/* Tokenizes text[0..len). Returns the number of tokens (the first max_out are written to
 * out, so a result > max_out means: call again with a bigger array), or -1 when the model
 * has no vocabulary or the arguments are bad. */
int infer_tokenize(const infer_tokenizer *t, const char *text, size_t len, int add_special,
                   int parse_special, int32_t *out, int max_out) {
    infer__tok_work w;
    infer__tok_frag *frags;
    int prev_special = 1; /* SPM: the first fragment gets the leading space */
    int64_t n;
    if (!t || t->kind == INFER_TOK_NONE || (!text && len) || max_out < 0 || (!out && max_out > 0)) return -1;
    memset(&w, 0, sizeof w);
    frags = infer__tok_partition(t, text, len, parse_special);
    if (add_special && (t->add_bos || t->kind == INFER_TOK_WPM) && t->bos >= 0) arrput(w.out, t->bos);
    for (size_t k = 0; k < arrlenu(frags); k++) {
        const infer__tok_frag *f = &frags[k];
        if (f->id >= 0) { arrput(w.out, f->id); prev_special = 1; continue; }
        if (t->kind == INFER_TOK_SPM) infer__spm_fragment(t, &w, text + f->off, f->len, t->add_space_prefix && prev_special);
        else if (t->kind == INFER_TOK_BPE) infer__bpe_fragment(t, &w, text + f->off, f->len);
        else infer__wpm_fragment(t, &w, text + f->off, f->len);
        prev_special = 0;
    }
    if (add_special && t->kind == INFER_TOK_WPM && t->sep >= 0) arrput(w.out, t->sep);
    else if (add_special && t->add_eos && t->eos >= 0) arrput(w.out, t->eos);
    n = (int64_t)arrlen(w.out);
    if (n > 0 && max_out > 0) memcpy(out, w.out, (size_t)(n < max_out ? n : max_out) * sizeof(int32_t));
    arrfree(frags);
    infer__tok_work_free(&w);
    return n > INT_MAX ? -1 : (int)n;
}

/* -----------------------------------------------------------------------------------------
 * Decoding
 * --------------------------------------------------------------------------------------- */

int infer_token_is_eog(const infer_tokenizer *t, int32_t id) {
    return t && id >= 0 && id < t->n_vocab && t->kind != INFER_TOK_NONE && (t->attr[id] & INFER__TOK_EOG) != 0;
}

int infer_token_is_control(const infer_tokenizer *t, int32_t id) {
    return t && id >= 0 && id < t->n_vocab && t->kind != INFER_TOK_NONE && (t->attr[id] & INFER__TOK_CONTROL) != 0;
}

/* the decoded bytes of id; control and unknown tokens are empty unless `special` */
static const char *infer__tok_piece(const infer_tokenizer *t, int32_t id, int special, int *len) {
    if (!special && (t->attr[id] & (INFER__TOK_CONTROL | INFER__TOK_UNKNOWN))) { *len = 0; return ""; }
    *len = (int)(t->piece_off[id + 1] - t->piece_off[id]);
    return t->arena + t->piece_off[id];
}

/* Writes the bytes token `id` stands for into buf. Returns their count; when that exceeds
 * `size` nothing is written. Returns -1 for an id out of range or a model without vocabulary.
 * buf is not NUL-terminated. A buffer of t->max_piece_len bytes always suffices. */
int infer_token_to_piece(const infer_tokenizer *t, int32_t id, int special, char *buf, int size) {
    int n;
    const char *p;
    if (!t || t->kind == INFER_TOK_NONE || id < 0 || id >= t->n_vocab) return -1;
    p = infer__tok_piece(t, id, special, &n);
    if (n <= size && n > 0) memcpy(buf, p, (size_t)n);
    return n;
}

/* llama.cpp's clean_up_tokenization_spaces: " ?" " !" " ." " ," lose the space, " ' " loses
 * both, " 's" " 'm" " 're" " 've" lose it. In place; returns the new length. */
static size_t infer__clean_spaces(char *s, size_t n) {
    size_t k = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) k--;
        s[k++] = x;
    }
    n = k; k = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') { k--; s[++i] = '\0'; }
        s[k++] = x;
    }
    n = k; k = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (s[i - 1] == ' ' && x == '\'' && i + 1 < n) {
            char x1 = s[i + 1], x2 = i + 2 < n ? s[i + 2] : 0;
            if (x1 == 's' || x1 == 'm' || (i + 2 < n && ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')))) k--;
        }
        s[k++] = x;
    }
    return k;
}

/* Whole-sequence detokenizer (llama.cpp llama_detokenize): remove_special drops a leading
 * BOS and trailing EOS the model adds; unparse_special renders control tokens' texts; the
 * first piece loses one leading space when the model prefixes one (add_space_prefix);
 * BPE/WPM models that ask for it get clean_spaces. Returns the byte count; when it exceeds
 * `size` nothing is written. -1 on bad arguments or an id out of range. */
int infer_detokenize(const infer_tokenizer *t, const int32_t *ids, int n, int remove_special,
                     int unparse_special, char *out, int size) {
    char *buf = NULL;
    int strip = 0;
    size_t total;
    if (!t || t->kind == INFER_TOK_NONE || n < 0 || (!ids && n)) return -1;
    strip = t->add_space_prefix;
    if (remove_special && t->add_bos && n > 0 && ids[0] == t->bos) { strip = 0; ids++; n--; }
    if (remove_special && t->add_eos && n > 0 && ids[n - 1] == t->eos) n--;
    for (int i = 0; i < n; i++) {
        int len;
        const char *p;
        if (ids[i] < 0 || ids[i] >= t->n_vocab) { arrfree(buf); return -1; }
        p = infer__tok_piece(t, ids[i], unparse_special, &len);
        if (strip && len > 0 && p[0] == ' ') { p++; len--; }
        strip = 0;
        if (len > 0) memcpy(arraddnptr(buf, len), p, (size_t)len); /* never memcpy to NULL */
    }
    total = arrlenu(buf);
    if (t->clean_spaces) total = infer__clean_spaces(buf, total);
    if (total <= (size_t)(size > 0 ? size : 0) && total) memcpy(out, buf, total);
    arrfree(buf);
    return total > INT_MAX ? -1 : (int)total;
}

/* ---- streaming ---- */

void infer_detok_init(infer_detok *d, const infer_tokenizer *t) {
    memset(d, 0, sizeof *d);
    d->tok = t;
    d->at_start = 1;
}

/* how many bytes at the end of s[0..n) start a UTF-8 sequence that is not complete yet */
static int infer__utf8_incomplete_tail(const unsigned char *s, int n) {
    for (int back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = s[n - back];
        if ((c & 0xC0) == 0x80) continue;           /* continuation: look further back */
        if (c >= 0xC0 && c < 0xF8 && infer__utf8_len(c) > back) return back;
        return 0;                                   /* complete, ASCII, or invalid lead */
    }
    return 0;
}

/* Pushes one generated id; writes the bytes that are now complete UTF-8 into out and
 * returns their count. A piece that ends inside a multi-byte character is held back until
 * the rest arrives. Control tokens produce nothing unless d->special. For SPM-style models (add_space_prefix)
 * the first piece loses its leading space; to stream a continuation of text shown already,
 * push the prompt first (ignoring the output) or clear d->at_start.
 * `size` must be at least n_pending + the piece (t->max_piece_len + 3 always is); when it
 * is not, nothing changes and -(bytes needed) is returned. -1 for an id out of range. */
int infer_detok_push(infer_detok *d, int32_t id, char *out, int size) {
    const infer_tokenizer *t = d->tok;
    int len, total, hold;
    const char *p;
    if (!t || t->kind == INFER_TOK_NONE || id < 0 || id >= t->n_vocab) return -1;
    p = infer__tok_piece(t, id, d->special, &len);
    if (len == 0) return 0;
    if (d->at_start && t->add_space_prefix && p[0] == ' ') { p++; len--; }
    if (d->n_pending + len > size) return -(d->n_pending + len);
    d->at_start = 0;
    memcpy(out, d->pending, (size_t)d->n_pending);
    memcpy(out + d->n_pending, p, (size_t)len);
    total = d->n_pending + len;
    hold = infer__utf8_incomplete_tail((const unsigned char *)out, total);
    memcpy(d->pending, out + total - hold, (size_t)hold);
    d->n_pending = hold;
    return total - hold;
}

/* Writes the bytes still held (an incomplete UTF-8 sequence at the end of the stream). */
int infer_detok_flush(infer_detok *d, char *out, int size) {
    int n = d->n_pending;
    if (n > size) return -n;
    if (n > 0) memcpy(out, d->pending, (size_t)n);
    d->n_pending = 0;
    return n;
}

/* -----------------------------------------------------------------------------------------
 * HF tokenizer.json -> infer__tok_src
 *
 * Supports byte-level BPE tokenizers (model.type "BPE" without byte_fallback: GPT-2,
 * Llama 3, Qwen 2/3, ...). What comes from where:
 *   tokens        model.vocab {text: id} plus added_tokens [{id, content, special}];
 *                 ids missing from both are empty UNUSED tokens
 *   types         vocab entries NORMAL; added tokens CONTROL when "special" or when they
 *                 look special ("<|...|>", "<｜...｜>", "<pad>", "<mask>", "<unused...>"),
 *                 else USER_DEFINED (what convert_hf_to_gguf.py writes)
 *   merges        model.merges, as "a b" strings or ["a", "b"] pairs
 *   pre           the Split regex of pre_tokenizer compared verbatim with the patterns of
 *                 Llama 3 ("llama-bpe"), Qwen 2 ("qwen2") and Qwen 3.5 ("qwen35"); a lone
 *                 ByteLevel pre-tokenizer with use_regex is GPT-2 ("gpt-2"); anything else
 *                 is an error rather than a guess
 *   config        tokenizer_config.json (optional): add_bos_token, add_eos_token and the
 *                 bos/eos/unk/pad token texts (a string or {"content": ...})
 * Ignored: the normalizer (Qwen's NFC; llama.cpp ignores it too), added tokens'
 * lstrip/rstrip/single_word, post_processor templates.
 * --------------------------------------------------------------------------------------- */

typedef struct infer__tok_hf {
    infer__tok_src src;
    infer__json_doc doc, cfg;     /* the token texts point into these */
    const char **tokens, **merges;
    uint64_t *token_lens, *merge_lens;
    int32_t *types;
    char *merge_text;             /* "a b" strings built from ["a", "b"] pairs */
    char pre[16];
} infer__tok_hf;

static INFER__MAYBE_UNUSED void infer__tok_hf_free(infer__tok_hf *h) {
    infer__json_free(&h->doc);
    infer__json_free(&h->cfg);
    INFER_FREE(h->tokens);
    INFER_FREE(h->merges);
    INFER_FREE(h->token_lens);
    INFER_FREE(h->merge_lens);
    INFER_FREE(h->types);
    INFER_FREE(h->merge_text);
    memset(h, 0, sizeof *h);
}

#define INFER__HF_RX_LLAMA3 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}" \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__HF_RX_QWEN2 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}" \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__HF_RX_QWEN35 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}" \
    "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* the GGUF pre name for a tokenizer.json pre_tokenizer, or NULL */
static const char *infer__hf_pre_name(const infer__json *pre) {
    const char *type = infer__json_str(infer__json_get(pre, "type"));
    const infer__json *list = infer__json_get(pre, "pretokenizers");
    int use_regex = 0;
    if (type && !strcmp(type, "Split")) list = NULL;
    for (uint32_t i = 0; i < (list ? list->len : 1); i++) {
        const infer__json *p = list ? &list->items[i] : pre;
        const char *t = infer__json_str(infer__json_get(p, "type"));
        const char *rx = infer__json_str(infer__json_get(infer__json_get(p, "pattern"), "Regex"));
        if (t && !strcmp(t, "Split") && rx) {
            if (!strcmp(rx, INFER__HF_RX_LLAMA3)) return "llama-bpe";
            if (!strcmp(rx, INFER__HF_RX_QWEN2)) return "qwen2";
            if (!strcmp(rx, INFER__HF_RX_QWEN35)) return "qwen35";
            return NULL;
        }
        if (t && !strcmp(t, "ByteLevel")) infer__json_bool(infer__json_get(p, "use_regex"), &use_regex);
    }
    return use_regex ? "gpt-2" : NULL;
}

static int infer__hf_looks_special(const char *s) {
    size_t n = strlen(s);
    if (!strcmp(s, "<pad>") || !strcmp(s, "<mask>") || !strcmp(s, "<2mass>") || !strcmp(s, "[@BOS@]")) return 1;
    if (n >= 4 && !memcmp(s, "<|", 2) && !memcmp(s + n - 2, "|>", 2)) return 1;
    if (n >= 8 && !memcmp(s, "<\xEF\xBD\x9C", 4) && !memcmp(s + n - 4, "\xEF\xBD\x9C>", 4)) return 1; /* <｜...｜> */
    return n >= 8 && !memcmp(s, "<unused", 7) && s[n - 1] == '>';
}

/* id of the token whose text is a config entry: "text" or {"content": "text"}; -1 if none */
static int32_t infer__hf_token_id(const infer__tok_hf *h, const infer__json *v) {
    const char *text = infer__json_str(v);
    if (!text) text = infer__json_str(infer__json_get(v, "content"));
    if (!text) return -1;
    size_t n = strlen(text);
    for (int32_t i = h->src.n_vocab - 1; i >= 0; i--)
        if (h->token_lens[i] == n && !memcmp(h->tokens[i], text, n)) return i;
    return -1;
}

static int infer__hf_vocab(infer__tok_hf *h, const infer__json *model, const infer__json *added, char *err, size_t errlen) {
    const infer__json *vocab = infer__json_get(model, "vocab");
    int64_t n = 0, id;
    if (!vocab || vocab->type != INFER__JSON_OBJECT) return infer__tok_fail(err, errlen, "tokenizer.json: model.vocab is missing");
    for (uint32_t i = 0; i < vocab->len; i++) {
        if (infer__json_int(&vocab->items[i], &id) < 0 || id < 0 || id >= (1 << 24))
            return infer__tok_fail(err, errlen, "tokenizer.json: bad id for vocab entry %u", i);
        if (id + 1 > n) n = id + 1;
    }
    for (uint32_t i = 0; added && i < added->len; i++) {
        if (infer__json_int(infer__json_get(&added->items[i], "id"), &id) < 0 || id < 0 || id >= (1 << 24) ||
            !infer__json_str(infer__json_get(&added->items[i], "content")))
            return infer__tok_fail(err, errlen, "tokenizer.json: bad added_tokens entry %u", i);
        if (id + 1 > n) n = id + 1;
    }
    h->tokens = (const char **)INFER_MALLOC((size_t)(n ? n : 1) * sizeof *h->tokens);
    h->token_lens = (uint64_t *)INFER_MALLOC((size_t)(n ? n : 1) * sizeof *h->token_lens);
    h->types = (int32_t *)INFER_MALLOC((size_t)(n ? n : 1) * sizeof *h->types);
    if (!h->tokens || !h->token_lens || !h->types) return infer__tok_fail(err, errlen, "out of memory");
    for (int64_t i = 0; i < n; i++) { h->tokens[i] = ""; h->token_lens[i] = 0; h->types[i] = 5; /* unused */ }
    for (uint32_t i = 0; i < vocab->len; i++) {
        id = vocab->items[i].i;
        if (h->types[id] != 5) return infer__tok_fail(err, errlen, "tokenizer.json: id %lld is used twice", (long long)id);
        h->tokens[id] = vocab->items[i].key;
        h->token_lens[id] = vocab->items[i].key_len;
        h->types[id] = 1;
    }
    for (uint32_t i = 0; added && i < added->len; i++) {
        const infer__json *a = &added->items[i];
        int special = 0;
        if (infer__json_int(infer__json_get(a, "id"), &id) < 0) return -1; /* checked above */
        infer__json_bool(infer__json_get(a, "special"), &special);
        h->tokens[id] = infer__json_get(a, "content")->str;
        h->token_lens[id] = infer__json_get(a, "content")->len;
        h->types[id] = special || infer__hf_looks_special(h->tokens[id]) ? 3 : 4;
    }
    h->src.n_vocab = (int32_t)n;
    h->src.tokens = h->tokens;
    h->src.token_lens = h->token_lens;
    h->src.types = h->types;
    return 0;
}

static int infer__hf_merges(infer__tok_hf *h, const infer__json *model, char *err, size_t errlen) {
    const infer__json *m = infer__json_get(model, "merges");
    size_t text = 0, off = 0;
    if (!m || m->type != INFER__JSON_ARRAY) return infer__tok_fail(err, errlen, "tokenizer.json: model.merges is missing");
    for (uint32_t i = 0; i < m->len; i++) { /* room for the pairs spelled as "a b" */
        const infer__json *e = &m->items[i];
        if (e->type == INFER__JSON_STRING) continue;
        if (e->type != INFER__JSON_ARRAY || e->len != 2 || e->items[0].type != INFER__JSON_STRING ||
            e->items[1].type != INFER__JSON_STRING)
            return infer__tok_fail(err, errlen, "tokenizer.json: bad merge at index %u", i);
        text += (size_t)e->items[0].len + e->items[1].len + 1;
    }
    h->merges = (const char **)INFER_MALLOC((size_t)(m->len ? m->len : 1) * sizeof *h->merges);
    h->merge_lens = (uint64_t *)INFER_MALLOC((size_t)(m->len ? m->len : 1) * sizeof *h->merge_lens);
    h->merge_text = (char *)INFER_MALLOC(text ? text : 1);
    if (!h->merges || !h->merge_lens || !h->merge_text) return infer__tok_fail(err, errlen, "out of memory");
    for (uint32_t i = 0; i < m->len; i++) {
        const infer__json *e = &m->items[i];
        if (e->type == INFER__JSON_STRING) { h->merges[i] = e->str; h->merge_lens[i] = e->len; continue; }
        h->merges[i] = h->merge_text + off;
        h->merge_lens[i] = (uint64_t)e->items[0].len + e->items[1].len + 1;
        memcpy(h->merge_text + off, e->items[0].str, e->items[0].len);
        h->merge_text[off + e->items[0].len] = ' ';
        memcpy(h->merge_text + off + e->items[0].len + 1, e->items[1].str, e->items[1].len);
        off += (size_t)h->merge_lens[i];
    }
    h->src.n_merges = (int32_t)m->len;
    h->src.merges = h->merges;
    h->src.merge_lens = h->merge_lens;
    return 0;
}

static void infer__hf_config(infer__tok_hf *h) {
    const infer__json *c = h->cfg.root;
    infer__json_bool(infer__json_get(c, "add_bos_token"), &h->src.add_bos);
    infer__json_bool(infer__json_get(c, "add_eos_token"), &h->src.add_eos);
    h->src.bos = infer__hf_token_id(h, infer__json_get(c, "bos_token"));
    h->src.eos = infer__hf_token_id(h, infer__json_get(c, "eos_token"));
    h->src.unk = infer__hf_token_id(h, infer__json_get(c, "unk_token"));
    h->src.pad = infer__hf_token_id(h, infer__json_get(c, "pad_token"));
}

/* Builds h->src from tokenizer.json text (and tokenizer_config.json text, or NULL).
 * Returns 0, or -1 with a message; h must be freed with infer__tok_hf_free() either way. */
static INFER__MAYBE_UNUSED int infer__tok_src_from_hf_json(infer__tok_hf *h, const char *json, size_t len, const char *cfg_json,
                                       size_t cfg_len, char *err, size_t errlen) {
    const infer__json *model, *pre;
    const char *type, *pre_name;
    int byte_fallback = 0;
    memset(h, 0, sizeof *h);
    h->src.bos = h->src.eos = h->src.eot = h->src.eom = h->src.unk = h->src.pad = -1;
    h->src.sep = h->src.cls = h->src.mask = -1;
    h->src.add_bos = h->src.add_eos = h->src.add_space_prefix = -1;
    if (infer__json_parse(&h->doc, json, len, err, errlen) < 0) return -1;
    if (cfg_json && infer__json_parse(&h->cfg, cfg_json, cfg_len, err, errlen) < 0) return -1;
    model = infer__json_get(h->doc.root, "model");
    type = infer__json_str(infer__json_get(model, "type"));
    if (!type || strcmp(type, "BPE"))
        return infer__tok_fail(err, errlen, "tokenizer.json: model type \"%s\" is not supported (only BPE)", type ? type : "?");
    infer__json_bool(infer__json_get(model, "byte_fallback"), &byte_fallback);
    if (byte_fallback)
        return infer__tok_fail(err, errlen, "tokenizer.json: SentencePiece-style BPE (byte_fallback) is not supported");
    pre = infer__json_get(h->doc.root, "pre_tokenizer");
    pre_name = infer__hf_pre_name(pre);
    if (!pre_name) return infer__tok_fail(err, errlen, "tokenizer.json: unrecognized pre_tokenizer");
    snprintf(h->pre, sizeof h->pre, "%s", pre_name);
    if (infer__hf_vocab(h, model, infer__json_get(h->doc.root, "added_tokens"), err, errlen) < 0) return -1;
    if (infer__hf_merges(h, model, err, errlen) < 0) return -1;
    if (h->cfg.root) infer__hf_config(h);
    h->src.model = "gpt2";
    h->src.pre = h->pre;
    return 0;
}


static int infer__tok_n_vocab(const infer_tokenizer *t) { return t->n_vocab; }
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
 *   csa         DeepSeek-V4's block (>>deepseek4): low-rank q, one K=V head over a sliding
 *               window plus compressed entries, grouped output projection, a residual of
 *               several hyper-connected streams, hash-routed or biased MoE   deepseek4
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
    int csa;
} infer__arch;

static const infer__arch infer__archs[] = {
    /* name           rope                qk_norm attn_gate hybrid expert_norm ffn_norm               bitlinear ffn_act            embd_logits csa */
    { "llama",        INFER__ROPE_NORM,   0,      0,        0,     1,          "ffn_norm",            0,        INFER__ACT_SILU,  0,          0 },
    { "qwen2",        INFER__ROPE_NEOX,   0,      0,        0,     0,          "ffn_norm",            0,        INFER__ACT_SILU,  0,          0 },
    { "qwen2moe",     INFER__ROPE_NEOX,   0,      0,        0,     0,          "ffn_norm",            0,        INFER__ACT_SILU,  0,          0 },
    { "qwen3",        INFER__ROPE_NEOX,   1,      0,        0,     1,          "ffn_norm",            0,        INFER__ACT_SILU,  0,          0 },
    { "qwen3moe",     INFER__ROPE_NEOX,   1,      0,        0,     1,          "ffn_norm",            0,        INFER__ACT_SILU,  0,          0 },
    { "qwen35",       INFER__ROPE_IMROPE, 1,      1,        1,     1,          "post_attention_norm", 0,        INFER__ACT_SILU,  0,          0 },
    { "qwen35moe",    INFER__ROPE_IMROPE, 1,      1,        1,     1,          "post_attention_norm", 0,        INFER__ACT_SILU,  0,          0 },
    { "bitnet",       INFER__ROPE_NEOX,   0,      0,        0,     1,          "ffn_norm",            1,        INFER__ACT_SILU,  1,          0 },
    { "bitnet-b1.58", INFER__ROPE_NEOX,   0,      0,        0,     1,          "ffn_norm",            1,        INFER__ACT_RELU2, 0,          0 },
    { "bitnet-25",    INFER__ROPE_NEOX,   0,      0,        0,     1,          "ffn_norm",            1,        INFER__ACT_RELU2, 0,          0 },
    { "deepseek4",    INFER__ROPE_NORM,   0,      0,        0,     1,          "ffn_norm",            0,        INFER__ACT_SILU,  0,          1 },
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
    int compress;                             /* deepseek4: compress ratio m (0 none, 4 CSA, else HCA) */
    float clamp_exp, clamp_shexp;             /* deepseek4: SwiGLU clamp of experts / shared expert (0: none) */
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
    /* deepseek4 (>>deepseek4): H heads of d, rank q_lora, G output groups of rank o_lora, n_hc
     * residual streams, n_mix = n_hc (2 + n_hc), m = compress, coff = 2 when m = 4 else 1 */
    const infer_tensor *attn_sinks;           /* [H] */
    const infer_tensor *wq_a, *q_a_norm;      /* [q_lora, n_embd], [q_lora] */
    const infer_tensor *wq_b;                 /* [H*d, q_lora] */
    const infer_tensor *wkv, *kv_a_norm;      /* [d, n_embd], [d]: the one K = V head */
    const infer_tensor *wo_a;                 /* [G*o_lora, H*d/G]: group g uses rows g*o_lora.. */
    const infer_tensor *wo_b;                 /* [n_embd, G*o_lora] */
    const infer_tensor *hc_attn_fn, *hc_attn_base, *hc_attn_scale; /* [n_mix, n_hc*n_embd], [n_mix], [3] */
    const infer_tensor *hc_ffn_fn, *hc_ffn_base, *hc_ffn_scale;
    const infer_tensor *comp_kv, *comp_gate;  /* [coff*d, n_embd] (m > 0) */
    const infer_tensor *comp_ape;             /* [m, coff*d] */
    const infer_tensor *comp_norm;            /* [d] */
    const infer_tensor *idx_proj;             /* [n_idx, n_embd] (m = 4): the indexer's head weights */
    const infer_tensor *idx_q_b;              /* [n_idx*d_idx, q_lora] */
    const infer_tensor *idx_comp_kv, *idx_comp_gate, *idx_comp_ape, *idx_comp_norm; /* its compressor (d_idx) */
    const infer_tensor *exp_probs_b;          /* [n_expert] selection bias (routed layers) */
    const infer_tensor *tid2eid;              /* [n_vocab, n_used] i32: the experts of each token id (hash layers) */
} infer__layer;

/* Every tensor field of infer__layer, for walking them all (infer_model_upload). The size
 * check catches a field added to the struct but not to this list. */
#define INFER__LAYER_TENSORS(X) X(attn_norm) X(wq) X(wk) X(wv) X(bq) X(bk) X(bv) X(q_norm) X(k_norm) \
    X(attn_sub_norm) X(wo) X(wqkv) X(wz) X(ssm_beta) X(ssm_alpha) X(ssm_conv1d) X(ssm_dt) X(ssm_a) X(ssm_norm) \
    X(ssm_out) X(ffn_norm) X(ffn_gate) X(ffn_up) X(ffn_sub_norm) X(ffn_down) X(ffn_gate_inp) X(ffn_gate_exps) \
    X(ffn_up_exps) X(ffn_down_exps) X(ffn_gate_shexp) X(ffn_up_shexp) X(ffn_down_shexp) X(ffn_gate_inp_shexp) \
    X(nextn_eh_proj) X(nextn_enorm) X(nextn_hnorm) X(nextn_head_norm) \
    X(attn_sinks) X(wq_a) X(q_a_norm) X(wq_b) X(wkv) X(kv_a_norm) X(wo_a) X(wo_b) X(hc_attn_fn) X(hc_attn_base) \
    X(hc_attn_scale) X(hc_ffn_fn) X(hc_ffn_base) X(hc_ffn_scale) X(comp_kv) X(comp_gate) X(comp_ape) X(comp_norm) \
    X(idx_proj) X(idx_q_b) X(idx_comp_kv) X(idx_comp_gate) X(idx_comp_ape) X(idx_comp_norm) X(exp_probs_b) X(tid2eid)
#define INFER__COUNT_ONE(f) + 1
INFER__STATIC_ASSERT(sizeof(infer__layer) == offsetof(infer__layer, attn_norm) + (0 INFER__LAYER_TENSORS(INFER__COUNT_ONE)) * sizeof(const infer_tensor *),
                     "INFER__LAYER_TENSORS must list every tensor of infer__layer");

/* What the forward pass reads: the model's own tensors (host memory, mmapped), or their
 * copies on a device. Same structs either way; only the `data` pointers differ. */
typedef struct infer__weights {
    const infer_tensor *tok_embd, *output_norm, *output, *rope_freqs;
    const infer_tensor *output_hc_fn, *output_hc_base, *output_hc_scale;   /* deepseek4's head */
    const infer__layer *layers;               /* [n_layer] */
} infer__weights;

/* The weights on a device backend (infer_model_upload): tensor structs parallel to
 * gguf.tensors with device `data` (NULL for tensors the forward never reads, e.g. the MTP
 * blocks), and layers pointing at them. Shared by every session on that backend. */
typedef struct infer__device_weights {
    const infer_kernels *k;                   /* NULL: nothing uploaded */
    void *kctx;                               /* the context that owns the allocations */
    infer_tensor *tensors;                    /* [gguf.n_tensors] */
    infer__layer *layers;                     /* [n_layer] */
    infer__weights w;
} infer__device_weights;

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
    const infer_tensor *output_hc_fn;         /* [n_hc, n_hc*n_embd] deepseek4: the streams' collapse before the head */
    const infer_tensor *output_hc_base;       /* [n_hc] */
    const infer_tensor *output_hc_scale;      /* [1] */
    infer__layer *layers;                     /* [n_layer + n_layer_nextn] */
    infer__device_weights dev;                /* the weights on a device backend, if uploaded */
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
    INFER__TRY(infer__cfg_int(m, "expert_gating_func", &c->expert_gating, 0, 1, 4, err));
    if (c->expert_gating == 3)
        return infer__fail(err, INFER_ERR_UNSUPPORTED, "%s.expert_gating_func = 3 is not supported (1 softmax, 2 sigmoid, 4 sqrt-softplus)", c->arch);
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

/* deepseek4's hyper-parameters (>>deepseek4). The per-layer ones (compress ratios, SwiGLU
 * clamps) are read with the layers, by infer__load_dsv4_layers. */
static infer_status infer__load_dsv4_config(infer_model *m, infer_error *err) {
    infer_config *c = &m->cfg;
    const int64_t BIG = 1 << 20;
    if (c->n_head_kv != 1) return infer__fail(err, INFER_ERR_FORMAT, "%s.attention.head_count_kv = %d, expected 1 (one shared K = V head)", c->arch, c->n_head_kv);
    INFER__TRY(infer__cfg_int(m, "attention.q_lora_rank", &c->q_lora_rank, 1, 1, BIG, err));
    INFER__TRY(infer__cfg_int(m, "attention.sliding_window", &c->sliding_window, 1, 0, 1 << 30, err));
    INFER__TRY(infer__cfg_int(m, "hyper_connection.count", &c->n_hc, 1, 1, 16, err));
    INFER__TRY(infer__cfg_int(m, "hyper_connection.sinkhorn_iterations", &c->hc_sinkhorn_iters, 1, 1, 1000, err));
    c->hc_eps = 1e-6f;
    INFER__TRY(infer__cfg_float(m, "hyper_connection.epsilon", &c->hc_eps, err));
    c->compress_rope_base = c->rope_base;
    INFER__TRY(infer__cfg_float(m, "attention.compress_rope_freq_base", &c->compress_rope_base, err));
    if (!(c->compress_rope_base > 0) || !(c->hc_eps >= 0))
        return infer__fail(err, INFER_ERR_FORMAT, "%s: compress_rope_freq_base must be > 0 and hyper_connection.epsilon >= 0", c->arch);
    INFER__TRY(infer__cfg_int(m, "hash_layer_count", &c->n_hash_layers, 0, 0, c->n_layer, err));
    INFER__TRY(infer__cfg_int(m, "attention.output_group_count", &c->o_groups, 1, 1, c->n_head, err));
    INFER__TRY(infer__cfg_int(m, "attention.output_lora_rank", &c->o_lora_rank, 1, 1, BIG, err));
    if (c->n_head % c->o_groups)
        return infer__fail(err, INFER_ERR_FORMAT, "%s.attention.output_group_count %d does not divide head_count %d", c->arch, c->o_groups, c->n_head);
    INFER__TRY(infer__cfg_int(m, "attention.indexer.head_count", &c->idx_n_head, 0, 1, 4096, err));
    INFER__TRY(infer__cfg_int(m, "attention.indexer.key_length", &c->idx_head_dim, 0, 1, 65536, err));
    INFER__TRY(infer__cfg_int(m, "attention.indexer.top_k", &c->idx_top_k, 0, 1, BIG, err));
    if (c->n_expert == 0) return infer__fail(err, INFER_ERR_FORMAT, "%s: missing metadata key '%s.expert_count'", c->arch, c->arch);
    if (c->expert_gating != INFER__GATING_SQRT_SOFTPLUS)
        return infer__fail(err, INFER_ERR_UNSUPPORTED, "%s.expert_gating_func = %d, expected 4 (sqrt-softplus)", c->arch, c->expert_gating);
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
    if (m->arch->csa) INFER__TRY(infer__load_dsv4_config(m, err));
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

/* deepseek4's per-layer keys: compress ratios (one per block, MTP blocks included) and the
 * SwiGLU clamps (an array per block, or one number for all) */
static infer_status infer__cfg_layer_float(infer_model *m, const char *suffix, int l, float *out, infer_error *err) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->cfg.arch, suffix);
    const infer_gguf_kv *kv = infer_gguf_find(&m->gguf, key);
    if (!kv) return INFER_OK;
    infer_gguf_kv e = *kv;
    if (kv->type == INFER_GGUF_ARRAY) {
        if (kv->arr_type == INFER_GGUF_STRING || kv->arr_type == INFER_GGUF_ARRAY || kv->arr_type == INFER_GGUF_BOOL || kv->arr_type >= INFER_GGUF_VTYPE_COUNT)
            return infer__fail(err, INFER_ERR_FORMAT, "metadata '%s' must be a number or an array of numbers", key);
        if (kv->arr_n <= (uint64_t)l) return infer__fail(err, INFER_ERR_FORMAT, "metadata '%s' has %llu entries, expected one per block", key, (unsigned long long)kv->arr_n);
        memset(&e, 0, sizeof e);
        e.type = kv->arr_type;
        infer__gguf_scalar(&e, (int)kv->arr_type, kv->arr_data + (size_t)l * infer__gguf_vsize[kv->arr_type]);
    } else if (kv->type == INFER_GGUF_STRING || kv->type == INFER_GGUF_BOOL) {
        return infer__fail(err, INFER_ERR_FORMAT, "metadata '%s' must be a number or an array of numbers", key);
    }
    if (!isfinite(e.v.f) || e.v.f < 0) return infer__fail(err, INFER_ERR_FORMAT, "metadata '%s' entry %d = %g is not a usable clamp", key, l, e.v.f);
    *out = (float)e.v.f;
    return INFER_OK;
}

static infer_status infer__load_dsv4_layers(infer_model *m, infer_error *err) {
    const infer_config *c = &m->cfg;
    const int n_all = c->n_layer + c->n_layer_nextn;
    const infer_gguf_kv *arr;
    const int r = infer__cfg_int_array(m, "attention.compress_ratios", &arr, err);
    if (r < 0) return INFER_ERR_FORMAT;
    if (r == 0) return infer__fail(err, INFER_ERR_FORMAT, "missing metadata key '%s.attention.compress_ratios'", c->arch);
    if (arr->arr_n != (uint64_t)n_all)
        return infer__fail(err, INFER_ERR_FORMAT, "%s.attention.compress_ratios has %llu entries, expected %d (one per block)", c->arch, (unsigned long long)arr->arr_n, n_all);
    for (int l = 0; l < n_all; l++) {
        infer__layer *L = &m->layers[l];
        const int64_t v = infer__arr_int(arr, (uint64_t)l);
        if (v != 0 && (v < 2 || v > 65536))
            return infer__fail(err, INFER_ERR_FORMAT, "%s.attention.compress_ratios[%d] = %lld (expected 0, 4 or another ratio in 2..65536)", c->arch, l, (long long)v);
        if (v == 4 && (c->idx_n_head == 0 || c->idx_head_dim == 0 || c->idx_top_k == 0))
            return infer__fail(err, INFER_ERR_FORMAT, "%s: layer %d compresses by 4 but the attention.indexer.* keys are missing", c->arch, l);
        L->compress = (int)v;
        INFER__TRY(infer__cfg_layer_float(m, "swiglu_clamp_exp", l, &L->clamp_exp, err));
        L->clamp_shexp = L->clamp_exp;
        INFER__TRY(infer__cfg_layer_float(m, "swiglu_clamp_shexp", l, &L->clamp_shexp, err));
    }
    return INFER_OK;
}

/* deepseek4's attention block (>>deepseek4); shapes as in infer__layer */
static infer_status infer__load_dsv4_attention(infer_model *m, infer__layer *L, int l, infer_error *err) {
    const infer_config *c = &m->cfg;
    const int64_t E = c->n_embd, d = c->head_dim, H = c->n_head, G = c->o_groups, R = c->o_lora_rank, QL = c->q_lora_rank;
    const int64_t n_mix = (int64_t)c->n_hc * (2 + c->n_hc), coff = L->compress == 4 ? 2 : 1;
    INFER__TRY(infer__want(m, &L->attn_sinks, 1, 1, H, 0, err, "blk.%d.attn_sinks.weight", l));
    INFER__TRY(infer__want(m, &L->wq_a, 1, 0, E, QL, err, "blk.%d.attn_q_a.weight", l));
    INFER__TRY(infer__want(m, &L->q_a_norm, 1, 1, QL, 0, err, "blk.%d.attn_q_a_norm.weight", l));
    INFER__TRY(infer__want(m, &L->wq_b, 1, 0, QL, H * d, err, "blk.%d.attn_q_b.weight", l));
    INFER__TRY(infer__want(m, &L->wkv, 1, 0, E, d, err, "blk.%d.attn_kv.weight", l));
    INFER__TRY(infer__want(m, &L->kv_a_norm, 1, 1, d, 0, err, "blk.%d.attn_kv_a_norm.weight", l));
    INFER__TRY(infer__want(m, &L->wo_a, 1, 0, H * d / G, G * R, err, "blk.%d.attn_output_a.weight", l));
    INFER__TRY(infer__want(m, &L->wo_b, 1, 0, G * R, E, err, "blk.%d.attn_output_b.weight", l));
    INFER__TRY(infer__want(m, &L->hc_attn_fn, 1, 0, c->n_hc * E, n_mix, err, "blk.%d.hc_attn_fn.weight", l));
    INFER__TRY(infer__want(m, &L->hc_attn_base, 1, 1, n_mix, 0, err, "blk.%d.hc_attn_base.weight", l));
    INFER__TRY(infer__want(m, &L->hc_attn_scale, 1, 1, 3, 0, err, "blk.%d.hc_attn_scale.weight", l));
    INFER__TRY(infer__want(m, &L->hc_ffn_fn, 1, 0, c->n_hc * E, n_mix, err, "blk.%d.hc_ffn_fn.weight", l));
    INFER__TRY(infer__want(m, &L->hc_ffn_base, 1, 1, n_mix, 0, err, "blk.%d.hc_ffn_base.weight", l));
    INFER__TRY(infer__want(m, &L->hc_ffn_scale, 1, 1, 3, 0, err, "blk.%d.hc_ffn_scale.weight", l));
    if (L->compress == 0) return INFER_OK;
    INFER__TRY(infer__want(m, &L->comp_kv, 1, 0, E, coff * d, err, "blk.%d.attn_compressor_kv.weight", l));
    INFER__TRY(infer__want(m, &L->comp_gate, 1, 0, E, coff * d, err, "blk.%d.attn_compressor_gate.weight", l));
    INFER__TRY(infer__want(m, &L->comp_ape, 1, 1, coff * d, L->compress, err, "blk.%d.attn_compressor_ape.weight", l));
    INFER__TRY(infer__want(m, &L->comp_norm, 1, 1, d, 0, err, "blk.%d.attn_compressor_norm.weight", l));
    if (L->compress != 4) return INFER_OK;
    const int64_t nI = c->idx_n_head, dI = c->idx_head_dim;
    if (dI < c->n_rot) return infer__fail(err, INFER_ERR_FORMAT, "%s.attention.indexer.key_length %lld is below rope.dimension_count %d", c->arch, (long long)dI, c->n_rot);
    INFER__TRY(infer__want(m, &L->idx_proj, 1, 0, E, nI, err, "blk.%d.indexer.proj.weight", l));
    INFER__TRY(infer__want(m, &L->idx_q_b, 1, 0, QL, nI * dI, err, "blk.%d.indexer.attn_q_b.weight", l));
    INFER__TRY(infer__want(m, &L->idx_comp_kv, 1, 0, E, 2 * dI, err, "blk.%d.indexer_compressor_kv.weight", l));
    INFER__TRY(infer__want(m, &L->idx_comp_gate, 1, 0, E, 2 * dI, err, "blk.%d.indexer_compressor_gate.weight", l));
    INFER__TRY(infer__want(m, &L->idx_comp_ape, 1, 1, 2 * dI, 4, err, "blk.%d.indexer_compressor_ape.weight", l));
    return infer__want(m, &L->idx_comp_norm, 1, 1, dI, 0, err, "blk.%d.indexer_compressor_norm.weight", l);
}

/* deepseek4's routing: hash layers map each token id to its experts through an i32 table
 * (every entry checked here, so routing can trust it), the others add a selection bias */
static infer_status infer__load_dsv4_routing(infer_model *m, infer__layer *L, int l, infer_error *err) {
    const infer_config *c = &m->cfg;
    if (l >= c->n_hash_layers) return infer__want(m, &L->exp_probs_b, 1, 1, c->n_expert, 0, err, "blk.%d.exp_probs_b.bias", l);
    char name[64];
    snprintf(name, sizeof name, "blk.%d.ffn_gate_tid2eid.weight", l);
    const infer_tensor *t = infer_gguf_tensor(&m->gguf, name);
    if (!t) return infer__fail(err, INFER_ERR_FORMAT, "missing tensor '%s'", name);
    if (t->type != INFER_TYPE_I32) return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s' has type %s, expected i32", name, infer_type_name(t->type));
    if (t->n_dims != 2 || t->ne[0] != c->n_expert_used || t->ne[1] != c->n_vocab)
        return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s' has shape [%lld, %lld, %lld, %lld], expected [%d, %d]", name, (long long)t->ne[0],
                           (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3], c->n_expert_used, c->n_vocab);
    for (int64_t i = 0; i < t->ne[0] * t->ne[1]; i++) {
        int32_t e;
        memcpy(&e, (const uint8_t *)t->data + 4 * i, 4);
        if (e < 0 || e >= c->n_expert)
            return infer__fail(err, INFER_ERR_FORMAT, "tensor '%s': token %lld, slot %lld names expert %d (the model has %d)", name,
                               (long long)(i / t->ne[0]), (long long)(i % t->ne[0]), (int)e, c->n_expert);
    }
    L->tid2eid = t;
    return INFER_OK;
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
    if (m->arch->csa) {
        INFER__TRY(infer__load_dsv4_layers(m, err));
        const int64_t n_hc = c->n_hc;
        INFER__TRY(infer__want(m, &m->output_hc_fn, 1, 0, n_hc * E, n_hc, err, "output_hc_fn.weight"));
        INFER__TRY(infer__want(m, &m->output_hc_base, 1, 1, n_hc, 0, err, "output_hc_base.weight"));
        INFER__TRY(infer__want(m, &m->output_hc_scale, 1, 1, 1, 0, err, "output_hc_scale.weight"));
    }
    for (int l = 0; l < n_all; l++) {
        infer__layer *L = &m->layers[l];
        if (m->arch->csa && l >= c->n_layer) continue;   /* deepseek4's MTP block: not run, not read */
        INFER__TRY(infer__want(m, &L->attn_norm, 1, 1, E, 0, err, "blk.%d.attn_norm.weight", l));
        if (m->arch->csa) INFER__TRY(infer__load_dsv4_attention(m, L, l, err));
        else INFER__TRY(L->recurrent ? infer__load_deltanet(m, L, l, err) : infer__load_attention(m, L, l, err));
        INFER__TRY(infer__load_ffn(m, L, l, err));
        if (m->arch->csa) INFER__TRY(infer__load_dsv4_routing(m, L, l, err));
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

/* A backend must fill every entry of the table the forward pass may call: one left NULL
 * (an op it lacks) refuses the model when it is put on that backend, by the op's name,
 * instead of failing in the middle of a run. */
static infer_status infer__backend_check(const infer_kernels *k, const infer_model *m, infer_error *err) {
#define INFER__NEED(f) if (!k->f) return infer__fail(err, INFER_ERR_UNSUPPORTED, "the %s backend has no '%s' op", k->name ? k->name : "?", #f);
    INFER__NEED(alloc) INFER__NEED(free) INFER__NEED(upload) INFER__NEED(download) INFER__NEED(sync) INFER__NEED(supports_type)
    INFER__NEED(embed) INFER__NEED(rmsnorm) INFER__NEED(matmul) INFER__NEED(add) INFER__NEED(add_rows) INFER__NEED(rope)
    INFER__NEED(kv_store) INFER__NEED(attention) INFER__NEED(swiglu) INFER__NEED(zero) INFER__NEED(copy_rows) INFER__NEED(mul_sigmoid)
    INFER__NEED(l2norm) INFER__NEED(rope_multi) INFER__NEED(moe_route) INFER__NEED(matmul_id) INFER__NEED(moe_sum)
    INFER__NEED(conv1d_silu) INFER__NEED(deltanet_gates) INFER__NEED(deltanet_step) INFER__NEED(deltanet_chunked) INFER__NEED(glu)
    INFER__NEED(ctx_create) INFER__NEED(ctx_free) INFER__NEED(last_error) INFER__NEED(supports_config)
    if (m && m->arch && m->arch->csa) {     /* deepseek4's own ops, only for that family */
        INFER__NEED(hc_pre) INFER__NEED(hc_post) INFER__NEED(compress) INFER__NEED(indexer_topk) INFER__NEED(attention_sparse)
    }
#undef INFER__NEED
    return INFER_OK;
}

/* ---- device copies of the weights ---- */
static void infer__device_weights_free(infer_model *m) {
    infer__device_weights *d = &m->dev;
    if (!d->k) return;
    for (int64_t i = 0; d->tensors && i < m->gguf.n_tensors; i++)
        if (d->tensors[i].data) d->k->free(d->kctx, (void *)d->tensors[i].data);
    d->k->ctx_free(d->kctx);
    INFER_FREE(d->tensors);
    INFER_FREE(d->layers);
    memset(d, 0, sizeof *d);
}

/* point *t at its device copy, uploading the tensor the first time it is met (tied
 * embeddings: output and token_embd are one tensor, uploaded once) */
static infer_status infer__upload_tensor(infer_model *m, const infer_tensor **t, infer_error *err) {
    infer__device_weights *d = &m->dev;
    if (!*t || (*t)->type == INFER_TYPE_I32) return INFER_OK;   /* integer tables are read on the host */
    const infer_tensor *h = *t;
    infer_tensor *dt = &d->tensors[h - m->gguf.tensors];
    if (!dt->data) {
        if (!d->k->supports_type(h->type))
            return infer__fail(err, INFER_ERR_UNSUPPORTED, "tensor '%s' has type %s, which the %s backend has no kernels for",
                               h->name, infer_type_name(h->type), d->k->name);
        void *p = d->k->alloc(d->kctx, h->nbytes);
        if (!p) return infer__fail(err, INFER_ERR_NOMEM, "%s backend: no memory for tensor '%s' (%zu bytes): %s", d->k->name, h->name, h->nbytes, d->k->last_error(d->kctx));
        if (d->k->upload(d->kctx, p, h->data, h->nbytes) != INFER_OK) {
            d->k->free(d->kctx, p);
            return infer__fail(err, INFER_ERR_BACKEND, "%s backend: uploading tensor '%s': %s", d->k->name, h->name, d->k->last_error(d->kctx));
        }
        *dt = *h;
        dt->data = p;
    }
    *t = dt;
    return INFER_OK;
}

static infer_status infer__upload_weights(infer_model *m, infer_error *err) {
    infer__device_weights *d = &m->dev;
    const int n = m->cfg.n_layer;             /* the MTP blocks after n_layer are not run */
    d->tensors = (infer_tensor *)infer__calloc((size_t)m->gguf.n_tensors, sizeof(infer_tensor));
    d->layers = (infer__layer *)infer__calloc((size_t)n, sizeof(infer__layer));
    if (!d->tensors || !d->layers) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    d->w.tok_embd = m->tok_embd; d->w.output_norm = m->output_norm; d->w.output = m->output; d->w.rope_freqs = m->rope_freqs;
    d->w.output_hc_fn = m->output_hc_fn; d->w.output_hc_base = m->output_hc_base; d->w.output_hc_scale = m->output_hc_scale;
    INFER__TRY(infer__upload_tensor(m, &d->w.output_hc_fn, err));
    INFER__TRY(infer__upload_tensor(m, &d->w.output_hc_base, err));
    INFER__TRY(infer__upload_tensor(m, &d->w.output_hc_scale, err));
    INFER__TRY(infer__upload_tensor(m, &d->w.tok_embd, err));
    INFER__TRY(infer__upload_tensor(m, &d->w.output_norm, err));
    INFER__TRY(infer__upload_tensor(m, &d->w.output, err));
    INFER__TRY(infer__upload_tensor(m, &d->w.rope_freqs, err));
    for (int l = 0; l < n; l++) {
        infer__layer *L = &d->layers[l];
        *L = m->layers[l];
#define INFER__UPLOAD_FIELD(f) INFER__TRY(infer__upload_tensor(m, &L->f, err));
        INFER__LAYER_TENSORS(INFER__UPLOAD_FIELD)
#undef INFER__UPLOAD_FIELD
    }
    d->w.layers = d->layers;
    if (d->k->sync(d->kctx) != INFER_OK)
        return infer__fail(err, INFER_ERR_BACKEND, "%s backend: uploading the weights: %s", d->k->name, d->k->last_error(d->kctx));
    return INFER_OK;
}

infer_status infer_model_upload(infer_model *m, const infer_kernels *k, infer_error *err) {
    if (!m->layers) return infer__fail(err, INFER_ERR_ARG, "model was loaded vocab-only; it cannot run");
    INFER__TRY(infer__backend_check(k, m, err));
    if (k->host_memory || m->dev.k == k) return INFER_OK;
    if (m->dev.k) return infer__fail(err, INFER_ERR_ARG, "the model's weights are already on the %s backend", m->dev.k->name);
    char why[256] = "";
    if (!k->supports_config(&m->cfg, why, sizeof why)) return infer__fail(err, INFER_ERR_UNSUPPORTED, "the %s backend cannot run this model: %s", k->name, why);
    infer__device_weights *d = &m->dev;
    memset(d, 0, sizeof *d);
    INFER__TRY(k->ctx_create(&d->kctx, 1, 0, err));
    d->k = k;
    infer_status st = infer__upload_weights(m, err);
    if (st != INFER_OK) infer__device_weights_free(m);
    return st;
}

void infer_model_free(infer_model *m) {
    if (!m) return;
    infer__device_weights_free(m);
    if (m->tok) { infer_tokenizer_free(m->tok); INFER_FREE(m->tok); }
    INFER_FREE(m->layers);
    infer_gguf_free(&m->gguf);
    infer__unmap(&m->map);
    INFER_FREE(m);
}

/* ------------------------------------------------------------------------------------------
 * >>kv -- the paged KV cache, many sequences, the prefix cache, and the recurrent state.
 *
 * Keys and values of past tokens live in fixed-size blocks of `block_size` rows taken from
 * a pool. Each sequence owns a block table (logical block i -> physical block), so its cache
 * need not be contiguous, many sequences share one pool without fragmenting it, and blocks
 * return to the pool when a sequence ends. Attention reads row p of a sequence at
 *   table[p / block_size] * block_size + p % block_size.
 *
 *   pool (one per attention layer, for K and for V):  [n_blocks * block_size, n_head_kv * head_dim]
 *
 * One such paged cache serves every attention layer of the families with plain attention:
 * a row per token, all layers' rows of a token in the same logical block, so one block table
 * per sequence covers them all. deepseek4 (>>deepseek4) has more caches, with the same
 * machinery:
 *   raw keys     a row per token, but only the last `window` positions are ever read: the
 *                blocks that slide out of the window go back to the pool at once, so a
 *                sequence holds W + one chunk of rows whatever its length
 *   compressed   a row per `ratio` tokens (one cache per ratio in use, shared by the layers
 *                with that ratio), with the lightning indexer's keys beside the entries
 *                (its V pool) on ratio-4 layers
 *
 * The prefix cache. Two sequences that start with the same tokens (a system prompt, a
 * few-shot preamble, a chat history) have the same keys and values for them. A full block
 * is named by a hash of its tokens chained after its predecessor's hash, so a name stands for
 * the whole prefix up to the block's end; a map from names to blocks finds them. A sequence
 * that starts with a cached prefix (infer_seq_reuse) points its table at those blocks (a
 * reference count says how many sequences hold one), and, where its prompt then shares only
 * the first rows of a block, copies those rows into a block of its own (copy-on-write: the
 * shared block is never written again). Blocks whose last holder has gone stay cached, and
 * the pool hands them out again, least recently used first, only when no free block is left.
 * Only families whose whole past is in the token cache use it; the hybrid families (a
 * recurrent state) and deepseek4 (windows and compressor states) start every sequence afresh.
 *
 * A gated DeltaNet layer keeps no per-token cache: its whole past is a fixed-size state,
 * owned by the sequence beside its block table and updated in place by every token:
 *   conv state  [K-1, conv_dim]     the last K-1 inputs of the causal conv
 *   S           [n_v, d_v, d_k]     one d_k x d_v memory per value head (stored by column)
 * deepseek4's compressors likewise carry their open windows as a fixed-size state per layer.
 * ---------------------------------------------------------------------------------------- */
#define INFER__KV_BLOCK 16
#define INFER__MAX_CACHES 8            /* the token cache + one per compress ratio in use */

typedef struct infer__cache {
    int32_t ratio;           /* tokens per row: 1 for the token cache, m for compressed entries */
    int32_t window;          /* > 0: only the rows of the last `window` positions are kept */
    int32_t block_size, n_blocks;
    int32_t max_logical;     /* logical blocks a sequence may have (its table's length) */
    int32_t k_dim, v_dim;    /* floats per row; v_dim 0: no V pool */
    infer_type type;
    void **k, **v;           /* [n_layer] pool bases, NULL for layers that keep nothing here */
    int32_t *free_list;      /* stack of free physical blocks */
    int32_t n_free;
    int32_t *ref;            /* [n_blocks] sequences holding each block */
    /* the prefix cache (`prefix` set): per block its rows' tokens, the rows written, its hash
     * and its predecessor's, whether the map names it, and when it was last let go */
    int prefix;
    int32_t *tokens, *fill;  /* [n_blocks, block_size], [n_blocks] */
    uint64_t *hash, *parent, *stamp, clock;
    uint8_t *cached;
    int32_t n_evictable;     /* cached blocks no sequence holds */
    uint64_t *map_key;       /* the map, block hash -> block: open addressing, keys never 0, */
    int32_t *map_val;        /* [map_mask + 1] slots, at least twice the blocks */
    uint32_t map_mask;
} infer__cache;

/* One sequence: its block tables (one per cache, host and backend copies), position and
 * recurrent state. */
typedef struct infer__seq {
    int live;
    int32_t n_past;
    int32_t *table[INFER__MAX_CACHES];       /* [max_logical]: logical -> physical, -1 slid out */
    int32_t n_table[INFER__MAX_CACHES];      /* logical blocks handed out */
    int32_t *dev_table[INFER__MAX_CACHES];   /* in backend memory */
    int32_t synced[INFER__MAX_CACHES];       /* leading entries the backend copy has */
    float **conv_state, **ssm_state;         /* [n_layer] gated DeltaNet, NULL elsewhere */
    float **comp_state, **idx_state;         /* [n_layer] deepseek4's compressors, NULL elsewhere */
} infer__seq;

/* The map of named blocks: linear probing from the hash's low bits; a deletion moves later
 * entries of the same run back, so no tombstones are needed. It never fills up (a block
 * has at most one name, and there are twice as many slots as blocks). */
static int32_t infer__name_find(const infer__cache *c, uint64_t key) {
    for (uint32_t i = (uint32_t)key & c->map_mask;; i = (i + 1) & c->map_mask) {
        if (c->map_key[i] == key) return c->map_val[i];
        if (!c->map_key[i]) return -1;
    }
}
static void infer__name_add(infer__cache *c, uint64_t key, int32_t b) {
    uint32_t i = (uint32_t)key & c->map_mask;
    while (c->map_key[i] && c->map_key[i] != key) i = (i + 1) & c->map_mask;
    c->map_key[i] = key;
    c->map_val[i] = b;
}
static void infer__name_drop(infer__cache *c, uint64_t key) {
    uint32_t i = (uint32_t)key & c->map_mask;
    while (c->map_key[i] != key) { if (!c->map_key[i]) return; i = (i + 1) & c->map_mask; }
    for (uint32_t j = (i + 1) & c->map_mask; c->map_key[j]; j = (j + 1) & c->map_mask) {
        const uint32_t home = (uint32_t)c->map_key[j] & c->map_mask;
        /* the entry at j may fill the hole at i unless its home lies cyclically in (i, j] */
        const int stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        c->map_key[i] = c->map_key[j];
        c->map_val[i] = c->map_val[j];
        i = j;
    }
    c->map_key[i] = 0;
}

/* a free block: from the free list, else the least recently used cached block, whose name
 * is forgotten; -1 when neither is left */
static int32_t infer__cache_take(infer__cache *c) {
    int32_t b = -1;
    if (c->n_free > 0) b = c->free_list[--c->n_free];
    else if (c->n_evictable > 0) {
        for (int32_t i = 0; i < c->n_blocks; i++)
            if (c->ref[i] == 0 && c->cached[i] && (b < 0 || c->stamp[i] < c->stamp[b])) b = i;
        infer__name_drop(c, c->hash[b]);
        c->cached[b] = 0;
        c->n_evictable--;
    }
    if (b < 0) return -1;
    c->ref[b] = 1;
    if (c->prefix) { c->fill[b] = 0; c->parent[b] = 0; }
    return b;
}
/* a holder lets go of block b: back to the free list, or, when the map names it, kept */
static void infer__cache_release(infer__cache *c, int32_t b) {
    if (--c->ref[b] > 0) return;
    if (c->prefix && c->cached[b]) { c->stamp[b] = ++c->clock; c->n_evictable++; }
    else c->free_list[c->n_free++] = b;
}
/* blocks a new request could get */
static int32_t infer__cache_available(const infer__cache *c) { return c->n_free + c->n_evictable; }

/* rows held for positions [0, n_pos): one per `ratio` positions, ended windows only */
static int32_t infer__cache_rows(const infer__cache *c, int32_t n_pos) { return n_pos / c->ratio; }
/* blocks a sequence's table needs for positions [0, end) */
static int32_t infer__cache_blocks(const infer__cache *c, int32_t end) { return (infer__cache_rows(c, end) + c->block_size - 1) / c->block_size; }

/* With a window, give back the blocks that no query from position `from` on can read. */
static void infer__seq_trim(infer__cache *c, infer__seq *q, int ci, int32_t from) {
    if (c->window <= 0) return;
    const int32_t first_needed = from - c->window + 1 > 0 ? from - c->window + 1 : 0;
    for (int32_t b = 0; b < q->n_table[ci] && (b + 1) * c->block_size <= first_needed; b++)
        if (q->table[ci][b] >= 0) { infer__cache_release(c, q->table[ci][b]); q->table[ci][b] = -1; }
}

/* Make room in the sequence's table for positions [0, end). 0 when the pool is exhausted
 * (callers check infer__cache_available first where a failure must change nothing). */
static int infer__seq_grow(infer__cache *c, infer__seq *q, int ci, int32_t end) {
    const int32_t need = infer__cache_blocks(c, end);
    while (q->n_table[ci] < need) {
        const int32_t b = infer__cache_take(c);
        if (b < 0) return 0;
        q->table[ci][q->n_table[ci]++] = b;
    }
    return 1;
}

/* every block of the sequence back (the cached ones stay named) */
static void infer__seq_release(infer__cache *caches, int n_caches, infer__seq *q) {
    for (int ci = 0; ci < n_caches; ci++) {
        for (int32_t b = q->n_table[ci] - 1; b >= 0; b--)
            if (q->table[ci][b] >= 0) infer__cache_release(&caches[ci], q->table[ci][b]);
        q->n_table[ci] = 0;
        q->synced[ci] = 0;
    }
    q->n_past = 0;
}

/* The name of a full block: its tokens hashed after its predecessor's name (splitmix64 as
 * the mixing step). Names are checked against the stored tokens before use, so a collision
 * costs a miss, never a wrong prefix. */
#define INFER__PREFIX_SEED 0x9e3779b97f4a7c15ull
static uint64_t infer__block_hash(uint64_t parent, const int32_t *tokens, int n) {
    uint64_t h = parent ^ 0xd6e8feb86659fd93ull;
    for (int i = 0; i < n; i++) {
        uint64_t z = (h ^ (uint32_t)tokens[i]) + 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        h = z ^ (z >> 31);
    }
    return h ? h : 1;                            /* 0 marks an empty slot of the map */
}

/* After a sequence wrote positions [from, to) into the token cache: record their tokens, and
 * name the blocks that filled up (chained after their predecessors), so later sequences
 * can find them. A block whose name another block already has stays unnamed. */
static void infer__prefix_note(infer__cache *c, infer__seq *q, const int32_t *tokens, int32_t from, int32_t to) {
    const int32_t bs = c->block_size;
    for (int32_t p = from; p < to; p++) {
        const int32_t b = q->table[0][p / bs];
        c->tokens[(size_t)b * bs + p % bs] = tokens[p - from];
        if (c->fill[b] < p % bs + 1) c->fill[b] = p % bs + 1;
    }
    for (int32_t i = from / bs; i <= (to - 1) / bs; i++) {
        const int32_t b = q->table[0][i];
        c->parent[b] = i ? c->hash[q->table[0][i - 1]] : INFER__PREFIX_SEED;
        if (c->fill[b] < bs || c->cached[b]) continue;
        c->hash[b] = infer__block_hash(c->parent[b], c->tokens + (size_t)b * bs, bs);
        if (infer__name_find(c, c->hash[b]) >= 0) continue;
        infer__name_add(c, c->hash[b], b);
        c->cached[b] = 1;
    }
}

/* sizes of one gated DeltaNet layer's recurrent state, in floats */
static size_t infer__conv_state_len(const infer_config *c) {
    return (size_t)(c->ssm_conv_kernel - 1) * (size_t)(2 * c->ssm_n_group * c->ssm_d_state + c->ssm_d_inner);
}
static size_t infer__ssm_state_len(const infer_config *c) { return (size_t)c->ssm_d_inner * (size_t)c->ssm_d_state; }
/* a deepseek4 compressor's open windows: 2 running softmaxes (max, sum, acc) of `dim` channels */
static size_t infer__comp_state_len(int dim) { return 6 * (size_t)dim; }
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
 *
 * deepseek4 keeps this loop but widens the residual to n_hc streams, mixed around every
 * block by hyper-connections (infer__block_in / infer__block_out below), and its mixer is
 * the compressed sparse attention of >>deepseek4.
 *
 * Many sequences at once. The T rows of a step may belong to several sequences (continuous
 * batching: prompts and single decode tokens side by side, each at its own positions). The
 * matmuls, norms and elementwise ops run over all T rows together, so each weight is read
 * once per step for every sequence in it; the ops that read or write one sequence's past
 * (kv_store, attention, the conv and delta-rule states, the compressors, the indexer) run
 * once per sequence, on its rows, with its block table and state. Each row is computed by
 * the same operations whichever rows share its step, so a sequence's logits do not depend
 * on the others.
 * ---------------------------------------------------------------------------------------- */
/* The output projection runs over at most this many rows at a time, so a long prompt with
 * all logits wanted needs [32, n_vocab] of scratch, not [n_ubatch, n_vocab]. */
#define INFER__LOGIT_ROWS 32

/* a step's rows [row0, row0 + n) belong to sequence `seq`, at its positions p0.. */
typedef struct infer__seg { int32_t seq, row0, n, p0; } infer__seg;

struct infer_session {
    infer_model *m;
    const infer_kernels *k;
    void *kctx;
    infer__weights w;        /* the weights in this backend's memory */
    infer_session_params p;
    int32_t n_ctx;           /* positions the token cache's pool holds, for all sequences together */
    infer__cache cache[INFER__MAX_CACHES];   /* [0]: a row per token; then one per compress ratio */
    int n_caches;
    int8_t *comp_cache;      /* [n_layer] deepseek4: the cache of the layer's compressed entries, -1: none */
    infer__seq *seqs;        /* [n_seq_max] */
    /* the step being computed: its rows sequence by sequence, and (deepseek4) the entries each
     * segment closes per compressed cache: the first one's row in s->cent and the count */
    infer__seg *segs;        /* [n_seq_max] */
    int n_segs;
    int32_t (*emit_first)[INFER__MAX_CACHES], (*emit_n)[INFER__MAX_CACHES];   /* [n_seq_max] */
    int32_t n_emit[INFER__MAX_CACHES];       /* entries the step closes, per cache */
    infer_rope rope;
    /* activations for up to U = n_ubatch tokens (NULL when the model has no use for one) */
    float *x, *h, *o;        /* [U, n_hc or 1, n_embd] residual stream(s); [U, n_embd] normed input, block output */
    float *logits;           /* [min(U, INFER__LOGIT_ROWS), n_vocab] */
    float *xg;               /* [min(U, INFER__LOGIT_ROWS), n_hc or 1, n_embd] the rows whose logits are wanted */
    float *q, *kk, *vv, *att;/* attention: [U, n_head*head_dim], [U, kv_dim] x2, [U, n_head*head_dim] */
    float *qg, *agate;       /* attn_gate: [U, 2*n_head*head_dim], [U, n_head*head_dim] */
    float *gate, *up;        /* feed-forward hidden: [U, max(n_ff, n_ff_shexp, n_used*n_ff_exp)] */
    float *router, *ew, *ey, *shg;  /* MoE: [U, n_expert], [U, n_used], [U, n_used, n_embd], [U] */
    int32_t *eid;            /* MoE: [U, n_used] chosen experts */
    float *mixed, *conv;     /* DeltaNet: [U, conv_dim] before and after the conv */
    float *dq, *dk, *dv, *z, *da, *db, *dout; /* [U, n_k d_k] x2, [U, n_v d_v] x2, [U, n_v] x2, [U, n_v d_v] */
    /* deepseek4 (>>deepseek4) */
    float *hcn, *hmix, *hpc; /* [U, n_hc*n_embd] RMS(streams), [U, n_mix] mixes, [U, n_hc + n_hc^2] post and C */
    float *qr;               /* [U, q_lora] */
    float *ckv, *cgate;      /* compressor inputs [U, 2*max(d, d_idx)] */
    float *cent;             /* entries closed by the step [U, max(d, d_idx)] */
    float *iq, *iw;          /* indexer queries [U, n_idx*d_idx], head weights [U, n_idx] */
    int32_t *isel, *insel;   /* indexer choice [U, top_k], its count [U] */
    float *oa;               /* [U, G*o_lora] grouped output projection */
    int32_t *gids;           /* [U, G]: 0..G-1 on every row, the groups as matmul_id's experts */
    int32_t *epos;           /* [n_caches, 2, U]: per compressed cache, the closing entries' rope positions and indices */
    int32_t *eid_host;       /* [U, n_used] hash-routed experts before upload */
    /* the ops' integer inputs, in backend memory, uploaded from the host copies */
    int32_t *pos;            /* [4, T] positions of the step (4 streams for multi-axis rope) */
    int32_t *tok;            /* [T] token ids of the step */
    int32_t *lrows;          /* [U] the rows whose logits are wanted */
    int32_t *pos_host;       /* [4, U] */
    int32_t *tok_host;       /* [U] the step's tokens */
    float *lstage;           /* [min(U, INFER__LOGIT_ROWS), n_vocab] logits on their way to the callers */
    /* called after every layer with the residual stream s->x (backend memory), for the
     * backend diff (>>backends); NULL otherwise */
    void (*layer_hook)(void *user, infer_session *s, int layer, int T);
    void *hook_user;
};

int32_t infer_session_n_past(const infer_session *s) { return s->seqs[0].live ? s->seqs[0].n_past : 0; }
int32_t infer_session_n_ctx(const infer_session *s) { return s->n_ctx; }
int32_t infer_seq_n_past(const infer_session *s, int32_t seq) {
    return seq >= 0 && seq < s->p.n_seq_max && s->seqs[seq].live ? s->seqs[seq].n_past : -1;
}

infer_session_params infer_session_default_params(void) {
    infer_session_params p;
    memset(&p, 0, sizeof p);
    p.kv_type = INFER_TYPE_F16;
    p.prefix_cache = 1;
    return p;
}

/* floats per token of the residual stream: n_embd, times n_hc with hyper-connections */
static size_t infer__stream_dim(const infer_config *c) { return (size_t)c->n_embd * (size_t)(c->n_hc > 1 ? c->n_hc : 1); }

/* The activation buffers with their sizes in bytes (0: not needed by this model). One list
 * serves allocation and freeing. */
typedef struct infer__buf { void **p; size_t bytes; } infer__buf;

static int infer__session_bufs(infer_session *s, infer__buf *b) {
    const infer_config *c = &s->m->cfg;
    const size_t U = (size_t)s->p.n_ubatch, E = (size_t)c->n_embd, QD = (size_t)c->n_head * c->head_dim;
    const size_t KVD = (size_t)c->n_head_kv * c->head_dim, F = sizeof(float), I = sizeof(int32_t);
    const size_t k_used = (size_t)c->n_expert_used, moe = c->n_expert > 0, LR = U < INFER__LOGIT_ROWS ? U : INFER__LOGIT_ROWS;
    size_t ff = (size_t)c->n_ff;
    if ((size_t)c->n_ff_shexp > ff) ff = (size_t)c->n_ff_shexp;
    if (k_used * c->n_ff_exp > ff) ff = k_used * c->n_ff_exp;
    const int gated = s->m->arch->attn_gate, dn = s->m->arch->hybrid, ds = s->m->arch->csa;
    const size_t KD = (size_t)c->ssm_n_group * c->ssm_d_state, VD = (size_t)c->ssm_d_inner, NV = (size_t)c->ssm_dt_rank;
    const size_t HC = (size_t)c->n_hc, CD = (size_t)(c->head_dim > c->idx_head_dim ? c->head_dim : c->idx_head_dim);
    const size_t NI = (size_t)c->idx_n_head, DI = (size_t)c->idx_head_dim, TK = (size_t)c->idx_top_k, G = (size_t)c->o_groups;
    int n = 0;
#define INFER__BUF(field, size) (b[n].p = (void **)&s->field, b[n].bytes = (size), n++)
    INFER__BUF(x, U * infer__stream_dim(c) * F); INFER__BUF(h, U * E * F); INFER__BUF(o, U * E * F);
    INFER__BUF(logits, LR * (size_t)c->n_vocab * F); INFER__BUF(xg, LR * infer__stream_dim(c) * F);
    INFER__BUF(q, U * QD * F); INFER__BUF(kk, U * KVD * F); INFER__BUF(vv, ds ? 0 : U * KVD * F); INFER__BUF(att, U * QD * F);
    INFER__BUF(qg, gated ? U * 2 * QD * F : 0); INFER__BUF(agate, gated ? U * QD * F : 0);
    INFER__BUF(gate, U * ff * F); INFER__BUF(up, U * ff * F);
    INFER__BUF(router, moe * U * (size_t)c->n_expert * F); INFER__BUF(ew, moe * U * k_used * F);
    INFER__BUF(ey, moe * U * k_used * E * F); INFER__BUF(shg, moe * U * F); INFER__BUF(eid, moe * U * k_used * I);
    INFER__BUF(mixed, dn * U * (2 * KD + VD) * F); INFER__BUF(conv, dn * U * (2 * KD + VD) * F);
    INFER__BUF(dq, dn * U * KD * F); INFER__BUF(dk, dn * U * KD * F); INFER__BUF(dv, dn * U * VD * F);
    INFER__BUF(z, dn * U * VD * F); INFER__BUF(da, dn * U * NV * F); INFER__BUF(db, dn * U * NV * F);
    INFER__BUF(dout, dn * U * VD * F);
    INFER__BUF(hcn, ds * U * HC * E * F); INFER__BUF(hmix, ds * U * HC * (2 + HC) * F); INFER__BUF(hpc, ds * U * HC * (1 + HC) * F);
    INFER__BUF(qr, ds * U * (size_t)c->q_lora_rank * F);
    INFER__BUF(ckv, ds * U * 2 * CD * F); INFER__BUF(cgate, ds * U * 2 * CD * F); INFER__BUF(cent, ds * U * CD * F);
    INFER__BUF(iq, ds * U * NI * DI * F); INFER__BUF(iw, ds * U * NI * F);
    INFER__BUF(isel, ds * U * TK * I); INFER__BUF(insel, ds * U * I);
    INFER__BUF(oa, ds * U * G * (size_t)c->o_lora_rank * F); INFER__BUF(gids, ds * U * G * I);
    INFER__BUF(epos, ds * (size_t)INFER__MAX_CACHES * 2 * U * I);
    INFER__BUF(pos, 4 * U * I); INFER__BUF(tok, U * I); INFER__BUF(lrows, U * I);
#undef INFER__BUF
    return n;
}
#define INFER__MAX_BUFS 48   /* >= the entries above */

/* the recurrent states of a sequence (layers that keep one), zeroed: a fresh past */
static void infer__seq_zero_state(infer_session *s, infer__seq *q) {
    const infer_config *c = &s->m->cfg;
    for (int l = 0; q->conv_state && l < c->n_layer; l++) {
        if (q->conv_state[l]) s->k->zero(s->kctx, q->conv_state[l], infer__conv_state_len(c) * sizeof(float));
        if (q->ssm_state[l]) s->k->zero(s->kctx, q->ssm_state[l], infer__ssm_state_len(c) * sizeof(float));
        if (q->comp_state[l]) s->k->zero(s->kctx, q->comp_state[l], infer__comp_state_len(c->head_dim) * sizeof(float));
        if (q->idx_state[l]) s->k->zero(s->kctx, q->idx_state[l], infer__comp_state_len(c->idx_head_dim) * sizeof(float));
    }
}

/* a sequence slot's tables and state, made the first time the slot is used (0: out of memory) */
static int infer__seq_alloc(infer_session *s, infer__seq *q) {
    if (q->conv_state) return 1;
    const infer_config *c = &s->m->cfg;
    const infer_kernels *k = s->k;
    const size_t n = (size_t)c->n_layer;
    for (int ci = 0; ci < s->n_caches; ci++) {
        q->table[ci] = (int32_t *)infer__calloc((size_t)s->cache[ci].max_logical, sizeof(int32_t));
        q->dev_table[ci] = (int32_t *)k->alloc(s->kctx, (size_t)s->cache[ci].max_logical * sizeof(int32_t));
        if (!q->table[ci] || !q->dev_table[ci]) return 0;
    }
    q->ssm_state = (float **)infer__calloc(n, sizeof(float *));
    q->comp_state = (float **)infer__calloc(n, sizeof(float *));
    q->idx_state = (float **)infer__calloc(n, sizeof(float *));
    q->conv_state = (float **)infer__calloc(n, sizeof(float *));   /* last: it marks the slot as made */
    if (!q->conv_state || !q->ssm_state || !q->comp_state || !q->idx_state) return 0;
    for (int l = 0; l < c->n_layer; l++) {
        const infer__layer *L = &s->m->layers[l];
        if (L->recurrent) {
            if (!(q->conv_state[l] = (float *)k->alloc(s->kctx, infer__conv_state_len(c) * sizeof(float)))) return 0;
            if (!(q->ssm_state[l] = (float *)k->alloc(s->kctx, infer__ssm_state_len(c) * sizeof(float)))) return 0;
        }
        if (L->compress && !(q->comp_state[l] = (float *)k->alloc(s->kctx, infer__comp_state_len(c->head_dim) * sizeof(float)))) return 0;
        if (L->compress == 4 && !(q->idx_state[l] = (float *)k->alloc(s->kctx, infer__comp_state_len(c->idx_head_dim) * sizeof(float)))) return 0;
    }
    infer__seq_zero_state(s, q);
    return 1;
}

static void infer__seq_free(infer_session *s, infer__seq *q) {
    const infer_kernels *k = s->k;
    for (int ci = 0; ci < s->n_caches; ci++) {
        INFER_FREE(q->table[ci]);
        if (q->dev_table[ci]) k->free(s->kctx, q->dev_table[ci]);
    }
    float **states[4] = { q->conv_state, q->ssm_state, q->comp_state, q->idx_state };
    for (int i = 0; i < 4; i++) {
        for (int l = 0; states[i] && l < s->m->cfg.n_layer; l++) if (states[i][l]) k->free(s->kctx, states[i][l]);
        INFER_FREE(states[i]);
    }
}

/* every sequence empty (its id stays valid) */
void infer_session_reset(infer_session *s) {
    for (int i = 0; i < s->p.n_seq_max; i++) {
        infer__seq *q = &s->seqs[i];
        if (!q->live) continue;
        infer__seq_release(s->cache, s->n_caches, q);
        infer__seq_zero_state(s, q);
    }
}

infer_status infer_seq_add(infer_session *s, int32_t *seq, infer_error *err) {
    *seq = -1;
    for (int i = 0; i < s->p.n_seq_max; i++) {
        infer__seq *q = &s->seqs[i];
        if (q->live) continue;
        if (!infer__seq_alloc(s, q)) return infer__fail(err, INFER_ERR_NOMEM, "out of %s memory for sequence %d's state", s->k->name, i);
        infer__seq_zero_state(s, q);
        q->live = 1;
        q->n_past = 0;
        *seq = i;
        return INFER_OK;
    }
    return infer__fail(err, INFER_ERR_CONTEXT, "all %d sequences of the session are in use", s->p.n_seq_max);
}

void infer_seq_remove(infer_session *s, int32_t seq) {
    if (seq < 0 || seq >= s->p.n_seq_max || !s->seqs[seq].live) return;
    infer__seq_release(s->cache, s->n_caches, &s->seqs[seq]);
    s->seqs[seq].live = 0;
}

int32_t infer_session_free_tokens(const infer_session *s) {
    const infer__cache *c = &s->cache[0];
    return c->window > 0 ? s->n_ctx : infer__cache_available(c) * c->block_size;
}

/* Copy rows [0, rows) of block `from` into block `to` in every layer's K and V pools, on the
 * backend (through the host when it has no copy op). */
static int infer__cache_copy_rows(infer_session *s, infer__cache *c, int32_t to, int32_t from, int32_t rows) {
    const size_t es = c->type == INFER_TYPE_F16 ? 2 : 4, bs = (size_t)c->block_size;
    for (int l = 0; l < s->m->cfg.n_layer; l++)
        for (int kv = 0; kv < 2; kv++) {
            void *pool = kv ? (c->v_dim ? c->v[l] : NULL) : c->k[l];
            const size_t row = (size_t)(kv ? c->v_dim : c->k_dim) * es, n = (size_t)rows * row;
            if (!pool) continue;
            uint8_t *dst = (uint8_t *)pool + (size_t)to * bs * row;
            const uint8_t *src = (const uint8_t *)pool + (size_t)from * bs * row;
            if (s->k->copy) { if (s->k->copy(s->kctx, dst, src, n) != INFER_OK) return 0; continue; }
            void *tmp = INFER_MALLOC(n);
            const int ok = tmp && s->k->download(s->kctx, tmp, src, n) == INFER_OK && s->k->upload(s->kctx, dst, tmp, n) == INFER_OK;
            INFER_FREE(tmp);
            if (!ok) return 0;
        }
    return 1;
}

int32_t infer_seq_reuse(infer_session *s, int32_t seq, const int32_t *tokens, int32_t n) {
    infer__cache *c = &s->cache[0];
    if (seq < 0 || seq >= s->p.n_seq_max || !s->seqs[seq].live || s->seqs[seq].n_past != 0 || !c->prefix || n < 2) return 0;
    infer__seq *q = &s->seqs[seq];
    const int32_t bs = c->block_size;
    uint64_t h = INFER__PREFIX_SEED;
    int32_t i = 0;
    /* whole blocks, as long as the chain of names matches (and one token stays to evaluate) */
    while ((i + 1) * bs <= n - 1 && i < c->max_logical) {
        const uint64_t hi = infer__block_hash(h, tokens + (size_t)i * bs, bs);
        const int32_t b = infer__name_find(c, hi);
        if (b < 0) break;
        if (c->parent[b] != h || memcmp(c->tokens + (size_t)b * bs, tokens + (size_t)i * bs, (size_t)bs * sizeof(int32_t)) != 0) break;
        if (c->ref[b]++ == 0) c->n_evictable--;
        q->table[0][i++] = b;
        h = hi;
    }
    q->n_table[0] = i;
    q->n_past = i * bs;
    /* then the first rows of a block that continues this prefix, copied into one of its own */
    const int32_t rest = n - 1 - i * bs < bs ? n - 1 - i * bs : bs;
    int32_t best = -1, best_j = 0;
    for (int32_t b = 0; b < c->n_blocks && rest > 0 && i < c->max_logical; b++) {
        if ((c->ref[b] == 0 && !c->cached[b]) || c->fill[b] == 0 || c->parent[b] != h) continue;
        int32_t j = 0;
        while (j < c->fill[b] && j < rest && c->tokens[(size_t)b * bs + j] == tokens[(size_t)i * bs + j]) j++;
        if (j > best_j) { best = b; best_j = j; }
    }
    if (best >= 0) {
        if (c->ref[best]++ == 0 && c->cached[best]) c->n_evictable--;   /* hold it while it is copied */
        const int32_t nb = infer__cache_take(c);
        if (nb >= 0 && infer__cache_copy_rows(s, c, nb, best, best_j)) {
            memcpy(c->tokens + (size_t)nb * bs, tokens + (size_t)i * bs, (size_t)best_j * sizeof(int32_t));
            c->fill[nb] = best_j;
            c->parent[nb] = h;
            q->table[0][q->n_table[0]++] = nb;
            q->n_past += best_j;
        } else if (nb >= 0) {
            infer__cache_release(c, nb);
        }
        infer__cache_release(c, best);
    }
    return q->n_past;
}

size_t infer_session_cache_bytes(const infer_session *s, int layer) {
    const infer_config *c = &s->m->cfg;
    size_t total = 0;
    for (int l = 0; l < c->n_layer; l++) {
        if (layer >= 0 && l != layer) continue;
        for (int i = 0; i < s->n_caches; i++) {
            const infer__cache *ch = &s->cache[i];
            if (!ch->k[l]) continue;
            const size_t esz = ch->type == INFER_TYPE_F16 ? 2 : 4;
            int32_t held = 0;
            for (int32_t b = 0; b < ch->n_blocks; b++) held += ch->ref[b] > 0;
            total += (size_t)held * (size_t)ch->block_size * (size_t)(ch->k_dim + ch->v_dim) * esz;
        }
        for (int i = 0; i < s->p.n_seq_max; i++) {
            const infer__seq *q = &s->seqs[i];
            if (!q->live || !q->conv_state) continue;
            if (q->conv_state[l]) total += (infer__conv_state_len(c) + infer__ssm_state_len(c)) * sizeof(float);
            if (q->comp_state[l]) total += infer__comp_state_len(c->head_dim) * sizeof(float);
            if (q->idx_state[l]) total += infer__comp_state_len(c->idx_head_dim) * sizeof(float);
        }
    }
    return total;
}

void infer_session_free(infer_session *s) {
    if (!s) return;
    const infer_kernels *k = s->k;
    for (int i = 0; s->seqs && i < s->p.n_seq_max; i++) infer__seq_free(s, &s->seqs[i]);
    for (int i = 0; i < s->n_caches; i++) {
        infer__cache *ch = &s->cache[i];
        for (int l = 0; l < s->m->cfg.n_layer; l++) {
            if (ch->k && ch->k[l]) k->free(s->kctx, ch->k[l]);
            if (ch->v && ch->v[l]) k->free(s->kctx, ch->v[l]);
        }
        INFER_FREE(ch->k); INFER_FREE(ch->v); INFER_FREE(ch->free_list); INFER_FREE(ch->ref);
        INFER_FREE(ch->tokens); INFER_FREE(ch->fill); INFER_FREE(ch->hash); INFER_FREE(ch->parent); INFER_FREE(ch->stamp); INFER_FREE(ch->cached);
        INFER_FREE(ch->map_key); INFER_FREE(ch->map_val);
    }
    INFER_FREE(s->seqs); INFER_FREE(s->segs); INFER_FREE(s->emit_first); INFER_FREE(s->emit_n);
    INFER_FREE(s->comp_cache);
    infer__buf bufs[INFER__MAX_BUFS];
    const int nb = infer__session_bufs(s, bufs);
    for (int i = 0; i < nb; i++) if (*bufs[i].p) k->free(s->kctx, *bufs[i].p);
    INFER_FREE(s->pos_host); INFER_FREE(s->tok_host); INFER_FREE(s->eid_host); INFER_FREE(s->lstage);
    k->ctx_free(s->kctx);
    INFER_FREE(s);
}

/* A pool of `blocks` blocks for the layers marked in `use`; a sequence's table may reach
 * max_rows rows. With `prefix`, the prefix cache's bookkeeping too. */
static int infer__cache_init(infer_session *s, infer__cache *ch, const uint8_t *use, int32_t ratio, int32_t window, int64_t blocks,
                             int64_t max_rows, int32_t k_dim, int32_t v_dim, int prefix) {
    const infer_kernels *k = s->k;
    const int n = s->m->cfg.n_layer;
    const int32_t bs = INFER__KV_BLOCK;
    ch->ratio = ratio; ch->window = window; ch->block_size = bs;
    ch->n_blocks = (int32_t)(blocks > 0 ? blocks : 1);
    ch->max_logical = (int32_t)((max_rows + bs - 1) / bs + 1);
    ch->k_dim = k_dim; ch->v_dim = v_dim;
    ch->type = s->p.kv_type;
    ch->prefix = prefix;
    const size_t nb = (size_t)ch->n_blocks;
    ch->k = (void **)infer__calloc((size_t)n, sizeof(void *));
    ch->v = (void **)infer__calloc((size_t)n, sizeof(void *));
    ch->free_list = (int32_t *)infer__calloc(nb, sizeof(int32_t));
    ch->ref = (int32_t *)infer__calloc(nb, sizeof(int32_t));
    if (!ch->k || !ch->v || !ch->free_list || !ch->ref) return 0;
    if (prefix) {
        ch->tokens = (int32_t *)infer__calloc(nb * (size_t)bs, sizeof(int32_t));
        ch->fill = (int32_t *)infer__calloc(nb, sizeof(int32_t));
        ch->hash = (uint64_t *)infer__calloc(nb, sizeof(uint64_t));
        ch->parent = (uint64_t *)infer__calloc(nb, sizeof(uint64_t));
        ch->stamp = (uint64_t *)infer__calloc(nb, sizeof(uint64_t));
        ch->cached = (uint8_t *)infer__calloc(nb, 1);
        ch->map_mask = 1;
        while (ch->map_mask < 2 * nb) ch->map_mask <<= 1;
        ch->map_key = (uint64_t *)infer__calloc((size_t)ch->map_mask, sizeof(uint64_t));
        ch->map_val = (int32_t *)infer__calloc((size_t)ch->map_mask, sizeof(int32_t));
        ch->map_mask--;
        if (!ch->tokens || !ch->fill || !ch->hash || !ch->parent || !ch->stamp || !ch->cached || !ch->map_key || !ch->map_val) return 0;
    }
    const size_t esz = ch->type == INFER_TYPE_F16 ? 2 : 4, pool_rows = nb * bs;
    for (int l = 0; l < n; l++) {
        if (!use[l]) continue;
        ch->k[l] = k->alloc(s->kctx, pool_rows * (size_t)k_dim * esz);
        if (v_dim) ch->v[l] = k->alloc(s->kctx, pool_rows * (size_t)v_dim * esz);
        if (!ch->k[l] || (v_dim && !ch->v[l])) return 0;
    }
    for (int32_t b = ch->n_blocks - 1; b >= 0; b--) ch->free_list[ch->n_free++] = b;
    return 1;
}

/* the pools (>>kv): the token cache for every attention layer, one per compress ratio */
static int infer__session_alloc_caches(infer_session *s) {
    const infer_config *c = &s->m->cfg;
    const int n = c->n_layer, bs = INFER__KV_BLOCK;
    const int64_t U = s->p.n_ubatch, S = s->p.n_seq_max;
    s->comp_cache = (int8_t *)infer__calloc((size_t)n, 1);
    uint8_t *use = (uint8_t *)infer__calloc((size_t)n, 1);
    int ok = s->comp_cache && use, plain = !s->m->arch->csa;
    for (int l = 0; ok && l < n; l++) { use[l] = !s->m->layers[l].recurrent; plain &= use[l]; }
    /* the token cache: n_ctx positions; with a sliding window, W - 1 positions per sequence
     * between steps plus a step's rows, a partial block at each end of every sequence's run */
    const int32_t W = c->sliding_window;
    const int64_t full = (s->n_ctx + bs - 1) / bs, windowed = S * ((W - 1 + bs - 1) / bs + 2) + (U + bs - 1) / bs;
    const int32_t kvd = c->n_head_kv * c->head_dim;
    if (ok) ok = infer__cache_init(s, &s->cache[s->n_caches++], use, 1, W, W > 0 && windowed < full ? windowed : full, s->n_ctx, kvd,
                                   s->m->arch->csa ? 0 : kvd, plain && W == 0 && s->p.prefix_cache);
    for (int l = 0; ok && l < n; l++) {
        const infer__layer *L = &s->m->layers[l];
        s->comp_cache[l] = -1;
        if (!L->compress) continue;
        int i = 1;                                       /* the cache of this ratio, made on first use */
        while (i < s->n_caches && s->cache[i].ratio != L->compress) i++;
        s->comp_cache[l] = (int8_t)i;
        if (i < s->n_caches) continue;
        if (i == INFER__MAX_CACHES) { ok = 0; break; }
        for (int j = 0; j < n; j++) use[j] = s->m->layers[j].compress == L->compress;
        const int64_t entries = s->n_ctx / L->compress;
        ok = infer__cache_init(s, &s->cache[s->n_caches++], use, L->compress, 0, (entries + bs - 1) / bs, entries, c->head_dim,
                               L->compress == 4 ? c->idx_head_dim : 0, 0);
    }
    INFER_FREE(use);
    return ok;
}
static void infer__session_rope(infer_session *s) {
    const infer_config *c = &s->m->cfg;
    infer_rope *r = &s->rope;
    r->n_rot = c->n_rot;
    r->neox = s->m->arch->rope != INFER__ROPE_NORM;
    r->freq_base = c->rope_base;
    r->freq_scale = c->rope_scaling != INFER_ROPE_SCALING_NONE ? 1.0f / c->rope_scale_factor : 1.0f;
    r->freq_factors = s->w.rope_freqs ? (const float *)s->w.rope_freqs->data : NULL;
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
    if (p.n_ctx < 0 || p.n_ubatch < 0 || p.n_threads < 0 || p.n_seq_max < 0) return infer__fail(err, INFER_ERR_ARG, "negative session parameter");
    if (p.n_ctx == 0) p.n_ctx = c->n_ctx_train < 4096 ? c->n_ctx_train : 4096;
    if (p.n_ubatch == 0) p.n_ubatch = 512;
    if (p.n_threads == 0) p.n_threads = infer__n_cores();
    if (p.n_seq_max == 0) p.n_seq_max = 1;
    if (p.n_seq_max > 4096) return infer__fail(err, INFER_ERR_ARG, "%d sequences is more than a session holds (4096)", p.n_seq_max);
    if (p.precise) p.kv_type = INFER_TYPE_F32;
    if (p.kv_type != INFER_TYPE_F32 && p.kv_type != INFER_TYPE_F16) return infer__fail(err, INFER_ERR_ARG, "KV cache type must be f32 or f16");
    const infer_kernels *k = p.backend ? p.backend : infer_cpu_kernels();
    INFER__TRY(infer__backend_check(k, m, err));
    char why[256] = "";
    if (!k->supports_config(c, why, sizeof why)) return infer__fail(err, INFER_ERR_UNSUPPORTED, "the %s backend cannot run this model: %s", k->name, why);
    if (!k->host_memory) INFER__TRY(infer_model_upload(m, k, err));   /* once per model */
    infer_session *s = (infer_session *)infer__calloc(1, sizeof *s);
    if (!s) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    s->m = m;
    s->k = k;
    s->p = p;
    if (k->host_memory) {
        s->w.tok_embd = m->tok_embd; s->w.output_norm = m->output_norm; s->w.output = m->output;
        s->w.rope_freqs = m->rope_freqs; s->w.layers = m->layers;
        s->w.output_hc_fn = m->output_hc_fn; s->w.output_hc_base = m->output_hc_base; s->w.output_hc_scale = m->output_hc_scale;
    } else {
        s->w = m->dev.w;
    }
    infer_error cerr;
    if (k->ctx_create(&s->kctx, p.n_threads, p.precise, &cerr) != INFER_OK) {
        INFER_FREE(s);
        return infer__fail(err, cerr.status, "%s", cerr.msg);
    }
    const int32_t bs = INFER__KV_BLOCK;
    const size_t U = (size_t)p.n_ubatch, S = (size_t)p.n_seq_max, LR = U < INFER__LOGIT_ROWS ? U : INFER__LOGIT_ROWS;
    s->n_ctx = (p.n_ctx + bs - 1) / bs * bs;
    s->seqs = (infer__seq *)infer__calloc(S, sizeof(infer__seq));
    s->segs = (infer__seg *)infer__calloc(S, sizeof(infer__seg));
    s->emit_first = (int32_t (*)[INFER__MAX_CACHES])infer__calloc(S, sizeof *s->emit_first);
    s->emit_n = (int32_t (*)[INFER__MAX_CACHES])infer__calloc(S, sizeof *s->emit_n);
    int ok = s->kctx && s->seqs && s->segs && s->emit_first && s->emit_n && infer__session_alloc_caches(s);
    infer__buf bufs[INFER__MAX_BUFS];
    const int nb = infer__session_bufs(s, bufs);
    for (int i = 0; ok && i < nb; i++) {
        if (bufs[i].bytes) *bufs[i].p = s->k->alloc(s->kctx, bufs[i].bytes);
        ok = !bufs[i].bytes || *bufs[i].p;
    }
    if (ok) {
        s->pos_host = (int32_t *)infer__calloc(4 * U, sizeof(int32_t));
        s->tok_host = (int32_t *)infer__calloc(U, sizeof(int32_t));
        s->eid_host = (int32_t *)infer__calloc(U * (size_t)(c->n_expert_used > 0 ? c->n_expert_used : 1), sizeof(int32_t));
        s->lstage = (float *)INFER_MALLOC(LR * (size_t)c->n_vocab * sizeof(float));
        ok = s->pos_host && s->tok_host && s->eid_host && s->lstage;
    }
    if (ok && m->arch->csa) {                 /* the output groups as matmul_id's "experts": 0..G-1 on every row */
        const size_t G = (size_t)c->o_groups;
        int32_t *g = (int32_t *)infer__calloc(U * G, sizeof(int32_t));
        ok = g != NULL;
        for (size_t i = 0; ok && i < U * G; i++) g[i] = (int32_t)(i % G);
        ok = ok && k->upload(s->kctx, s->gids, g, U * G * sizeof(int32_t)) == INFER_OK;
        INFER_FREE(g);
    }
    if (ok) ok = infer__seq_alloc(s, &s->seqs[0]);   /* sequence 0: the one infer_eval feeds */
    if (!ok) {
        infer__fail(err, INFER_ERR_NOMEM, "out of %s memory for a %d-token session%s%s", k->name, (int)s->n_ctx,
                    s->kctx && *k->last_error(s->kctx) ? ": " : "", s->kctx ? k->last_error(s->kctx) : "");
        infer_session_free(s);
        return INFER_ERR_NOMEM;
    }
    s->seqs[0].live = 1;
    infer__session_rope(s);
    *out = s;
    return INFER_OK;
}
/* out[i] = W_i x for n weights reading the same activations: one call where the backend
 * has matmul_n, else one matmul each */
static void infer__matmuls(infer_session *s, int n, float *const *out, const infer_tensor *const *w, const float *x, int T) {
    if (s->k->matmul_n) { s->k->matmul_n(s->kctx, n, out, w, x, T); return; }
    for (int i = 0; i < n; i++) s->k->matmul(s->kctx, out[i], w[i], x, T);
}

/* A block's input, s->h = RMSNorm(x) * norm. With hyper-connections (n_hc streams, deepseek4)
 * the streams are first collapsed by this block's mixes (>>deepseek4):
 *   mix = W_fn RMS(x)  over all n_hc * n_embd values,   u = sum_i pre_i x_i,   h = RMSNorm(u) * norm
 * and the post weights and the stream-mixing matrix C wait in s->hpc for infer__block_out. */
static void infer__block_in(infer_session *s, const infer_tensor *norm, const infer_tensor *fn, const infer_tensor *base,
                            const infer_tensor *scale, int T) {
    const infer_config *c = &s->m->cfg;
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int E = c->n_embd;
    if (c->n_hc > 1) {
        k->rmsnorm(kc, s->hcn, s->x, NULL, T, c->n_hc * E, c->rms_eps);
        k->matmul(kc, s->hmix, fn, s->hcn, T);
        k->hc_pre(kc, s->h, s->hpc, s->hmix, s->x, (const float *)base->data, (const float *)scale->data, T, E, c->n_hc,
                  c->hc_sinkhorn_iters, c->hc_eps);
        k->rmsnorm(kc, s->h, s->h, (const float *)norm->data, T, E, c->rms_eps);
    } else {
        k->rmsnorm(kc, s->h, s->x, (const float *)norm->data, T, E, c->rms_eps);
    }
}
/* ... and its output s->o back into the residual: x += o, or, with hyper-connections,
 * x_d = post_d o + sum_s C[s, d] x_s for every stream d */
static void infer__block_out(infer_session *s, int T) {
    const infer_config *c = &s->m->cfg;
    if (c->n_hc > 1) s->k->hc_post(s->kctx, s->x, s->o, s->hpc, T, c->n_embd, c->n_hc);
    else s->k->add(s->kctx, s->x, s->o, (int64_t)T * c->n_embd);
}


/* a layer's view of cache ci through sequence seq's block table: its K pool's rows as keys
 * (and its V pool's as values; none: K = V), or, v_pool, its V pool's rows as the keys
 * (deepseek4's indexer keys) */
static infer_kv_view infer__seq_view(const infer_session *s, int32_t seq, int ci, int l, int v_pool) {
    const infer__cache *c = &s->cache[ci];
    infer_kv_view v;
    memset(&v, 0, sizeof v);
    v.type = c->type;
    v.block_size = c->block_size;
    v.block_table = s->seqs[seq].dev_table[ci];
    if (v_pool) { v.k = v.v = c->v[l]; v.kv_dim = c->v_dim; return v; }
    v.k = c->k[l];
    v.v = c->v_dim ? c->v[l] : c->k[l];
    v.kv_dim = c->k_dim;
    return v;
}

/* Attention mixer: s->h -> s->o (see the block comment above) */
static void infer__attention_layer(infer_session *s, int l, int T) {
    const infer_model *m = s->m;
    const infer_config *c = &m->cfg;
    const infer__layer *L = &s->w.layers[l];
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int hd = c->head_dim, QD = c->n_head * hd, KVD = c->n_head_kv * hd;
    const float scale = c->attn_scale > 0 ? c->attn_scale : 1.0f / sqrtf((float)hd);
    float *const outs[3] = { m->arch->attn_gate ? s->qg : s->q, s->kk, s->vv };
    const infer_tensor *const ws[3] = { L->wq, L->wk, L->wv };
    infer__matmuls(s, 3, outs, ws, s->h, T);
    if (m->arch->attn_gate) {                          /* [T, n_head, 2, hd] -> q, gate */
        if (L->bq) k->add_rows(kc, s->qg, (const float *)L->bq->data, T, 2 * QD);
        k->copy_rows(kc, s->q, hd, s->qg, 2 * hd, T * c->n_head, hd);
        k->copy_rows(kc, s->agate, hd, s->qg + hd, 2 * hd, T * c->n_head, hd);
    } else if (L->bq) k->add_rows(kc, s->q, (const float *)L->bq->data, T, QD);
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
    for (int g = 0; g < s->n_segs; g++) {              /* each sequence: its own cache */
        const infer__seg *sg = &s->segs[g];
        const size_t r = (size_t)sg->row0;
        const infer_kv_view kv = infer__seq_view(s, sg->seq, 0, l, 0);
        k->kv_store(kc, &kv, s->kk + r * KVD, s->vv + r * KVD, s->pos + r, sg->n);
        k->attention(kc, s->att + r * QD, s->q + r * QD, &kv, s->pos + r, sg->n, c->n_head, c->n_head_kv, hd, scale);
    }
    if (m->arch->attn_gate) k->mul_sigmoid(kc, s->att, s->agate, T, QD, QD);
    if (L->attn_sub_norm) k->rmsnorm(kc, s->att, s->att, (const float *)L->attn_sub_norm->data, T, QD, c->rms_eps);
    k->matmul(kc, s->o, L->wo, s->att, T);
}

/* Gated DeltaNet mixer: s->h -> s->o, carrying each sequence's conv state and S. A prompt
 * uses the chunked form of the delta rule, a single token the recurrence. */
static void infer__deltanet_layer(infer_session *s, int l, int T) {
    const infer_config *c = &s->m->cfg;
    const infer__layer *L = &s->w.layers[l];
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int n_k = c->ssm_n_group, n_v = c->ssm_dt_rank, d_k = c->ssm_d_state, d_v = c->ssm_d_inner / n_v;
    const int KD = n_k * d_k, VD = n_v * d_v, CD = 2 * KD + VD;
    float *const outs[4] = { s->mixed, s->z, s->db, s->da };                   /* mixed: [T, q | k | v] */
    const infer_tensor *const ws[4] = { L->wqkv, L->wz, L->ssm_beta, L->ssm_alpha };
    infer__matmuls(s, 4, outs, ws, s->h, T);
    k->deltanet_gates(kc, s->da, s->db, (const float *)L->ssm_dt->data, (const float *)L->ssm_a->data, T, n_v);
    for (int g = 0; g < s->n_segs; g++) {
        const size_t r = (size_t)s->segs[g].row0;
        k->conv1d_silu(kc, s->conv + r * CD, s->mixed + r * CD, s->seqs[s->segs[g].seq].conv_state[l], (const float *)L->ssm_conv1d->data,
                       s->segs[g].n, CD, c->ssm_conv_kernel);
    }
    k->copy_rows(kc, s->dq, KD, s->conv, CD, T, KD);
    k->copy_rows(kc, s->dk, KD, s->conv + KD, CD, T, KD);
    k->copy_rows(kc, s->dv, VD, s->conv + 2 * KD, CD, T, VD);
    k->l2norm(kc, s->dq, T * n_k, d_k, c->rms_eps);
    k->l2norm(kc, s->dk, T * n_k, d_k, c->rms_eps);
    for (int g = 0; g < s->n_segs; g++) {
        const infer__seg *sg = &s->segs[g];
        const size_t r = (size_t)sg->row0;
        (sg->n == 1 ? k->deltanet_step : k->deltanet_chunked)(kc, s->dout + r * VD, s->dq + r * KD, s->dk + r * KD, s->dv + r * VD,
                                                              s->da + r * n_v, s->db + r * n_v, s->seqs[sg->seq].ssm_state[l],
                                                              sg->n, n_k, n_v, d_k, d_v, 1.0f / sqrtf((float)d_k));
    }
    k->rmsnorm(kc, s->dout, s->dout, (const float *)L->ssm_norm->data, T * n_v, d_v, c->rms_eps);
    k->swiglu(kc, s->dout, s->z, s->dout, (int64_t)T * VD);                     /* * silu(z) */
    k->matmul(kc, s->o, L->ssm_out, s->dout, T);
}

/* gate = act(gate) * up with the model's activation (SiLU or ReLU^2), inputs clamped to
 * `limit` first when it is > 0 */
static void infer__ffn_act(infer_session *s, float *gate, const float *up, int64_t n, float limit) {
    s->k->glu(s->kctx, gate, gate, up, n, s->m->cfg.ffn_act, limit);
}

/* out = W_down( act(W_gate h) * (W_up h) ), hidden size n_ff; BitLinear models normalise the
 * hidden vector (RMSNorm * ffn_sub_norm) before W_down */
static void infer__glu_ffn(infer_session *s, float *out, const infer_tensor *wg, const infer_tensor *wu, const infer_tensor *wd,
                           const infer_tensor *sub_norm, int n_ff, float limit, int T) {
    const infer_kernels *k = s->k;
    float *const outs[2] = { s->gate, s->up };
    const infer_tensor *const ws[2] = { wg, wu };
    infer__matmuls(s, 2, outs, ws, s->h, T);
    infer__ffn_act(s, s->gate, s->up, (int64_t)T * n_ff, limit);
    if (sub_norm) k->rmsnorm(s->kctx, s->gate, s->gate, (const float *)sub_norm->data, T, n_ff, s->m->cfg.rms_eps);
    k->matmul(s->kctx, out, wd, s->gate, T);
}

/* Mixture of experts: s->h -> s->o. A hash-routed layer (deepseek4) finds its experts
 * already in s->eid (infer__forward_chunk puts them there). */
static void infer__moe_ffn(infer_session *s, const infer__layer *L, int T) {
    const infer_config *c = &s->m->cfg;
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int E = c->n_embd, n_used = c->n_expert_used;
    k->matmul(kc, s->router, L->ffn_gate_inp, s->h, T);                          /* [T, n_expert] */
    k->moe_route(kc, s->eid, s->ew, s->router, T, c->n_expert, n_used, c->expert_gating, c->expert_norm, c->expert_weights_scale,
                 L->exp_probs_b ? (const float *)L->exp_probs_b->data : NULL, L->tid2eid != NULL);
    k->matmul_id(kc, s->gate, L->ffn_gate_exps, s->h, s->eid, T, n_used, 0);      /* [T, n_used, n_ff_exp] */
    k->matmul_id(kc, s->up, L->ffn_up_exps, s->h, s->eid, T, n_used, 0);
    infer__ffn_act(s, s->gate, s->up, (int64_t)T * n_used * c->n_ff_exp, L->clamp_exp);
    k->matmul_id(kc, s->ey, L->ffn_down_exps, s->gate, s->eid, T, n_used, 1);     /* [T, n_used, n_embd] */
    k->moe_sum(kc, s->o, s->ey, s->ew, T, n_used, E);
    if (!L->ffn_up_shexp) return;
    infer__glu_ffn(s, s->ey, L->ffn_gate_shexp, L->ffn_up_shexp, L->ffn_down_shexp, NULL, c->n_ff_shexp, L->clamp_shexp, T);
    if (L->ffn_gate_inp_shexp) {
        k->matmul(kc, s->shg, L->ffn_gate_inp_shexp, s->h, T);                    /* [T, 1] */
        k->mul_sigmoid(kc, s->ey, s->shg, T, E, 1);
    }
    k->add(kc, s->o, s->ey, (int64_t)T * E);
}

/* ------------------------------------------------------------------------------------------
 * >>deepseek4 -- DeepSeek-V4: compressed sparse attention and hyper-connections.
 *
 * A long context costs attention two things: the cache (a row per token per layer) and the
 * reading of it (every query reads every row). DeepSeek-V4 keeps only a short window of raw
 * keys and summarises the rest: every `m` tokens are pooled into one compressed entry, so
 * the cache grows as W + n/m rows, not n. Its layers come in three kinds, by the file's
 * compress_ratios[layer] = m:
 *   m = 0     sliding window only: the last W tokens
 *   m = 128   HCA, heavily compressed: the window plus every entry so far (n/128 of them)
 *   m = 4     CSA, compressed sparse: the window plus the top_k entries (of n/4) that a small
 *             "lightning indexer" scores highest for this query
 *
 * One token through a CSA layer (m = 4), at position t, with h = the block's normed input
 * [n_embd] (hyper-connections below) and d = head_dim:
 *   1. queries, low rank:   qr = RMSNorm(W_qa h) * q_a_norm                       [q_lora]
 *                           q_i = RMSNorm(W_qb qr)_i  per head, no weight         [H, d]
 *   2. one key, which is also the value:  kv = RMSNorm(W_kv h) * kv_a_norm        [d]
 *      q and kv are roped on their last n_rot dims (theta: compress_rope_freq_base on
 *      layers with m > 0, rope.freq_base on window-only layers); kv joins the token cache,
 *      whose blocks older than the window go back to the pool.
 *   3. the compressor: kv_t = W_ckv h, g_t = W_cg h, each [2d]. Entry w pools the 8 tokens
 *      4(w-1) .. 4w+3, channel by channel, with softmax weights over the 8 slots:
 *        slots from the previous window use kv_t[c],   score g_t[c]   + ape[r, c]
 *        slots from its own window      use kv_t[d+c], score g_t[d+c] + ape[r, d+c]
 *      (r = the token's offset in its window; entry 0 has no previous window). When token
 *      t = 4w+3 closes window w, entry w = RMSNorm(pooled) * compressor_norm, roped at
 *      position 4w (the window's first token), is appended to the compressed cache. A
 *      window's partial sums wait in a small state between chunks, so a token costs O(d)
 *      compressor work however long the sequence: the same whether the prompt came in one
 *      batch or one token at a time. HCA pools its 128 tokens the same way, with no overlap
 *      (kv_t, g_t of width d).
 *   4. the indexer: its own compressor makes keys K_s [d_idx] the same way; its queries are
 *      q_I = rope(W_Iqb qr) [n_idx, d_idx], its head weights w = W_Iproj h [n_idx], and
 *        score_s = sum_h w_h relu(q_I,h . K_s) / sqrt(n_idx d_idx)
 *      over the entries already closed (s < (t+1)/4): the top_k of them (ties: the lower
 *      index) are this query's compressed keys.
 *   5. attention, one K = V head shared by all H query heads:
 *        keys = kv_j for t-W < j <= t  plus the chosen entries;   scale 1/sqrt(d)
 *        o_i = sum_j p_ij v_j,  p_ij = e^(s_ij) / (sum_j e^(s_ij) + e^(sink_i))
 *      a learned per-head "sink" logit takes a share of the softmax without adding a value.
 *      Each o_i is rotated back by its query's rope (inverse rope on its last n_rot dims),
 *      so what leaves the head does not depend on the absolute position.
 *   6. grouped low-rank output: the H heads form G groups; group g's concatenated heads go
 *      through rows g*o_lora .. of W_oa (one matmul_id with the groups as "experts"), and
 *      out = W_ob [a_0 | .. | a_G-1].
 *
 * Hyper-connections: the residual is n_hc streams X [n_hc, n_embd] (the embedding copied to
 * each). Around every block, mixes are read off all the streams at once,
 *   mix = W_fn (X / rms(X))                                   [n_hc (2 + n_hc)]
 *   pre = sigmoid(mix_pre * s0 + b) + eps,  post = 2 sigmoid(mix_post * s1 + b)
 *   C   = Sinkhorn(softmax over d (mix_comb * s2 + b) + eps)  a nearly doubly stochastic [n_hc, n_hc]
 * the block reads u = sum_i pre_i X_i (normalised as usual) and writes back
 *   X'_d = post_d block(u) + sum_s C[s, d] X_s
 * Before the head the streams collapse once more with pre weights from output_hc_*.
 *
 * The feed-forward is a MoE scored by sqrt(softplus(W_router h)), with a bias that only
 * steers the choice (load balancing); the first hash_layer_count layers instead take the
 * experts a fixed table assigns to the token id. Both use the clamped SwiGLU:
 * down(silu(min(gate, L)) * clamp(up, -L, L)).
 * ---------------------------------------------------------------------------------------- */

/* the rope of a deepseek4 layer: the last n_rot dims of a head of head_dim; compressed
 * layers turn with compress_rope_freq_base (and the file's YaRN, whose magnitude factor is
 * cancelled, as the reference does), window-only layers with rope.freq_base, unscaled */
static infer_rope infer__dsv4_rope(const infer_session *s, int compressed, int head_dim) {
    const infer_config *c = &s->m->cfg;
    infer_rope r = s->rope;
    r.rot_first = head_dim - r.n_rot;
    if (!compressed) {
        r.freq_scale = 1.0f;
        r.ext_factor = 0.0f;
    } else {
        r.freq_base = c->compress_rope_base;
        if (r.ext_factor != 0) r.attn_factor = 1.0f / (1.0f + 0.1f * logf(1.0f / r.freq_scale));
    }
    return r;
}


/* One compressor: project s->h, pool each sequence's windows that close in this step (its
 * open windows in `state`), normalise, rope at each window's first position and append the
 * entries to the sequence's cache (step 3 above). state: [n_layer] per sequence, v_pool: the
 * entries go to the V pool (the indexer's keys). */
static void infer__dsv4_compress(infer_session *s, int l, int ci, int v_pool, const infer_tensor *wkv, const infer_tensor *wgate,
                                 const infer_tensor *ape, const infer_tensor *norm, int dim, int T, const infer_rope *rope) {
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int ratio = s->cache[ci].ratio, overlap = ratio == 4, W = overlap ? 2 * dim : dim, n = s->n_emit[ci];
    float *const outs[2] = { s->ckv, s->cgate };
    const infer_tensor *const ws[2] = { wkv, wgate };
    infer__matmuls(s, 2, outs, ws, s->h, T);
    for (int g = 0; g < s->n_segs; g++) {
        const infer__seg *sg = &s->segs[g];
        const size_t r = (size_t)sg->row0;
        float *state = v_pool ? s->seqs[sg->seq].idx_state[l] : s->seqs[sg->seq].comp_state[l];
        k->compress(kc, s->cent + (size_t)s->emit_first[g][ci] * dim, state, s->ckv + r * W, s->cgate + r * W, (const float *)ape->data,
                    s->pos + r, sg->n, dim, ratio, overlap);
    }
    if (n == 0) return;
    const int32_t *epos = s->epos + (size_t)ci * 2 * s->p.n_ubatch, *eidx = epos + s->p.n_ubatch;
    k->rmsnorm(kc, s->cent, s->cent, (const float *)norm->data, n, dim, s->m->cfg.rms_eps);
    k->rope(kc, s->cent, n, 1, dim, epos, rope);
    for (int g = 0; g < s->n_segs; g++) {
        const int32_t first = s->emit_first[g][ci], cnt = s->emit_n[g][ci];
        if (!cnt) continue;
        const infer_kv_view dst = infer__seq_view(s, s->segs[g].seq, ci, l, v_pool);
        k->kv_store(kc, &dst, s->cent + (size_t)first * dim, NULL, eidx + first, cnt);
    }
}

/* The deepseek4 mixer: s->h -> s->o (steps 1-6 above) */
static void infer__csa_layer(infer_session *s, int l, int T) {
    const infer_config *c = &s->m->cfg;
    const infer__layer *L = &s->w.layers[l];
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int hd = c->head_dim, H = c->n_head, m = L->compress, ci = s->comp_cache[l], nI = c->idx_n_head, dI = c->idx_head_dim;
    const int top_k = c->idx_top_k;
    const float eps = c->rms_eps;
    infer_rope rope = infer__dsv4_rope(s, m > 0, hd);
    const infer_rope ri = infer__dsv4_rope(s, 1, dI);
    float *const outs[2] = { s->qr, s->kk };
    const infer_tensor *const ws[2] = { L->wq_a, L->wkv };
    infer__matmuls(s, 2, outs, ws, s->h, T);
    k->rmsnorm(kc, s->qr, s->qr, (const float *)L->q_a_norm->data, T, c->q_lora_rank, eps);
    k->matmul(kc, s->q, L->wq_b, s->qr, T);                                       /* 1. */
    k->rmsnorm(kc, s->q, s->q, NULL, T * H, hd, eps);
    k->rope(kc, s->q, T, H, hd, s->pos, &rope);
    k->rmsnorm(kc, s->kk, s->kk, (const float *)L->kv_a_norm->data, T, hd, eps);  /* 2. */
    k->rope(kc, s->kk, T, 1, hd, s->pos, &rope);
    for (int g = 0; g < s->n_segs; g++) {
        const infer_kv_view raw = infer__seq_view(s, s->segs[g].seq, 0, l, 0);
        k->kv_store(kc, &raw, s->kk + (size_t)s->segs[g].row0 * hd, NULL, s->pos + s->segs[g].row0, s->segs[g].n);
    }
    if (m > 0)                                                                    /* 3. */
        infer__dsv4_compress(s, l, ci, 0, L->comp_kv, L->comp_gate, L->comp_ape, L->comp_norm, hd, T, &rope);
    if (m == 4) {                                                                 /* 4. */
        infer__dsv4_compress(s, l, ci, 1, L->idx_comp_kv, L->idx_comp_gate, L->idx_comp_ape, L->idx_comp_norm, dI, T, &ri);
        k->matmul(kc, s->iq, L->idx_q_b, s->qr, T);
        k->rope(kc, s->iq, T, nI, dI, s->pos, &ri);
        k->matmul(kc, s->iw, L->idx_proj, s->h, T);
    }
    for (int g = 0; g < s->n_segs; g++) {                                        /* 4., 5. per sequence */
        const infer__seg *sg = &s->segs[g];
        const size_t r = (size_t)sg->row0;
        const infer_kv_view raw = infer__seq_view(s, sg->seq, 0, l, 0);
        infer_kv_view comp;
        if (m > 0) { comp = infer__seq_view(s, sg->seq, ci, l, 0); comp.v = comp.k; }   /* entries are keys and values */
        if (m == 4) {
            const infer_kv_view keys = infer__seq_view(s, sg->seq, ci, l, 1);
            k->indexer_topk(kc, s->isel + r * top_k, s->insel + r, s->iq + r * nI * dI, s->iw + r * nI, &keys, s->pos + r, sg->n, nI, dI, m,
                            top_k, 1.0f / sqrtf((float)nI * (float)dI));
        }
        k->attention_sparse(kc, s->att + r * H * hd, s->q + r * H * hd, &raw, s->pos + r, sg->n, H, hd, 1.0f / sqrtf((float)hd),
                            c->sliding_window, (const float *)L->attn_sinks->data, m > 0 ? &comp : NULL, m,
                            m == 4 ? s->isel + r * top_k : NULL, s->insel + r, top_k);
    }
    rope.inverse = 1;
    k->rope(kc, s->att, T, H, hd, s->pos, &rope);
    infer_tensor wo_a = *L->wo_a;                                                 /* 6. [G, o_lora, H*d/G] */
    wo_a.n_dims = 3;
    wo_a.ne[1] = c->o_lora_rank;
    wo_a.ne[2] = c->o_groups;
    k->matmul_id(kc, s->oa, &wo_a, s->att, s->gids, T, c->o_groups, 1);
    k->matmul(kc, s->o, L->wo_b, s->oa, T);
}

/* The host's share of a deepseek4 step: which compressed entries each sequence's rows close
 * (index w, rope position w*m, per compressed cache), uploaded once for the step. */
static infer_status infer__dsv4_prepare(infer_session *s) {
    const infer_kernels *k = s->k;
    const size_t U = (size_t)s->p.n_ubatch;
    int32_t *host = s->pos_host;                       /* free once the positions are uploaded */
    for (int ci = 1; ci < s->n_caches; ci++) {
        const int32_t m = s->cache[ci].ratio;
        int n = 0;
        for (int g = 0; g < s->n_segs; g++) {
            s->emit_first[g][ci] = n;
            for (int32_t p = s->segs[g].p0; p < s->segs[g].p0 + s->segs[g].n; p++) {
                if (p % m != m - 1) continue;
                host[U + (size_t)n] = (p + 1) / m - 1;     /* the entry's index ... */
                host[n] = host[U + (size_t)n] * m;         /* ... and its rope position */
                n++;
            }
            s->emit_n[g][ci] = n - s->emit_first[g][ci];
        }
        s->n_emit[ci] = n;
        if (n && (k->upload(s->kctx, s->epos + (size_t)ci * 2 * U, host, (size_t)n * sizeof(int32_t)) != INFER_OK ||
                  k->upload(s->kctx, s->epos + (size_t)ci * 2 * U + U, host + U, (size_t)n * sizeof(int32_t)) != INFER_OK))
            return INFER_ERR_BACKEND;
    }
    return INFER_OK;
}

/* hash routing: the experts of the step's tokens, from the layer's table (host memory) */
static infer_status infer__dsv4_hash_ids(infer_session *s, int l, int T) {
    const infer_tensor *t = s->m->layers[l].tid2eid;
    const int n_used = s->m->cfg.n_expert_used;
    for (int r = 0; r < T; r++)
        memcpy(s->eid_host + (size_t)r * n_used, (const int32_t *)t->data + (size_t)s->tok_host[r] * n_used, (size_t)n_used * sizeof(int32_t));
    return s->k->upload(s->kctx, s->eid, s->eid_host, (size_t)T * n_used * sizeof(int32_t));
}

/* One step of T <= n_ubatch rows (s->tok_host, segments s->segs) through every layer. Then
 * the logits of the rows listed in want[0..n_want) go to dst[i] (host memory): the rows are
 * gathered, n_ubatch at most INFER__LOGIT_ROWS at a time, through the output projection. Only
 * the tokens, positions and row lists go to the backend, only those logits come back. */
static infer_status infer__forward_step(infer_session *s, int T, const int32_t *want, float *const *dst, int n_want) {
    const infer_model *m = s->m;
    const infer_config *c = &m->cfg;
    const infer_kernels *k = s->k;
    void *kc = s->kctx;
    const int E = c->n_embd, n_hc = c->n_hc > 1 ? c->n_hc : 1;
    const size_t SD = infer__stream_dim(c);
    int32_t *pos = s->pos_host;
    for (int g = 0; g < s->n_segs; g++)      /* text: streams t, h, w = the position, e = 0 */
        for (int i = 0; i < s->segs[g].n; i++) {
            const int r = s->segs[g].row0 + i;
            pos[r] = pos[T + r] = pos[2 * T + r] = s->segs[g].p0 + i;
            pos[3 * T + r] = 0;
        }
    INFER__TRY(k->upload(kc, s->pos, pos, 4 * (size_t)T * sizeof(int32_t)));
    INFER__TRY(k->upload(kc, s->tok, s->tok_host, (size_t)T * sizeof(int32_t)));
    if (m->arch->csa) INFER__TRY(infer__dsv4_prepare(s));
    if (n_hc > 1) {                          /* every stream starts as the embedding */
        k->embed(kc, s->h, s->w.tok_embd, s->tok, T);
        for (int i = 0; i < n_hc; i++) k->copy_rows(kc, s->x + (size_t)i * E, (int)SD, s->h, E, T, E);
    } else {
        k->embed(kc, s->x, s->w.tok_embd, s->tok, T);
    }
    for (int l = 0; l < c->n_layer; l++) {  /* the MTP blocks after n_layer are not run */
        const infer__layer *L = &s->w.layers[l];
        infer__block_in(s, L->attn_norm, L->hc_attn_fn, L->hc_attn_base, L->hc_attn_scale, T);
        if (m->arch->csa) infer__csa_layer(s, l, T);
        else if (L->recurrent) infer__deltanet_layer(s, l, T);
        else infer__attention_layer(s, l, T);
        infer__block_out(s, T);
        infer__block_in(s, L->ffn_norm, L->hc_ffn_fn, L->hc_ffn_base, L->hc_ffn_scale, T);
        if (L->tid2eid) INFER__TRY(infer__dsv4_hash_ids(s, l, T));
        if (L->ffn_gate_inp) infer__moe_ffn(s, L, T);
        else infer__glu_ffn(s, s->o, L->ffn_gate, L->ffn_up, L->ffn_down, L->ffn_sub_norm, c->n_ff, 0.0f, T);
        infer__block_out(s, T);
        if (s->layer_hook) s->layer_hook(s->hook_user, s, l, T);
    }
    if (n_want == 0) return INFER_OK;
    const size_t V = (size_t)c->n_vocab;
    /* the residual rows as a table, so `embed` gathers the wanted ones */
    const infer_tensor xs = { "residual", INFER_TYPE_F32, 2, { (int64_t)SD, T, 1, 1 }, s->x, (size_t)T * SD * sizeof(float), 1.0f };
    INFER__TRY(k->upload(kc, s->lrows, want, (size_t)n_want * sizeof(int32_t)));
    for (int r0 = 0; r0 < n_want; r0 += INFER__LOGIT_ROWS) {
        const int nl = n_want - r0 < INFER__LOGIT_ROWS ? n_want - r0 : INFER__LOGIT_ROWS;
        k->embed(kc, s->xg, &xs, s->lrows + r0, nl);
        const float *xr = s->xg;
        if (n_hc > 1) {                      /* the streams' last collapse: u = sum_i pre_i x_i */
            k->rmsnorm(kc, s->hcn, xr, NULL, nl, (int)SD, c->rms_eps);
            k->matmul(kc, s->hmix, s->w.output_hc_fn, s->hcn, nl);
            k->hc_pre(kc, s->h, NULL, s->hmix, xr, (const float *)s->w.output_hc_base->data, (const float *)s->w.output_hc_scale->data,
                      nl, E, n_hc, 0, c->hc_eps);
            xr = s->h;
        }
        k->rmsnorm(kc, s->h, xr, (const float *)s->w.output_norm->data, nl, E, c->rms_eps);
        k->matmul(kc, s->logits, s->w.output, s->h, nl);
        INFER__TRY(k->download(kc, s->lstage, s->logits, (size_t)nl * V * sizeof(float)));
        for (int i = 0; i < nl; i++) memcpy(dst[r0 + i], s->lstage + (size_t)i * V, V * sizeof(float));
    }
    return INFER_OK;
}

/* The new part of each sequence's block tables, on the backend */
static infer_status infer__tables_sync(infer_session *s, infer__seq *q) {
    for (int ci = 0; ci < s->n_caches; ci++) {
        const int32_t from = q->synced[ci], to = q->n_table[ci];
        if (to > from && s->k->upload(s->kctx, q->dev_table[ci] + from, q->table[ci] + from, (size_t)(to - from) * sizeof(int32_t)) != INFER_OK)
            return INFER_ERR_BACKEND;
        q->synced[ci] = to;
    }
    return INFER_OK;
}

infer_status infer_eval_batch(infer_session *s, const infer_batch_item *items, int n_items, infer_error *err) {
    const int32_t V = s->m->cfg.n_vocab, U = s->p.n_ubatch;
    if (n_items <= 0 || n_items > s->p.n_seq_max) return infer__fail(err, INFER_ERR_ARG, "%d batch items (the session holds %d sequences)", n_items, s->p.n_seq_max);
    for (int i = 0; i < n_items; i++) {
        const infer_batch_item *it = &items[i];
        if (it->seq < 0 || it->seq >= s->p.n_seq_max || !s->seqs[it->seq].live)
            return infer__fail(err, INFER_ERR_ARG, "batch item %d: sequence %d does not exist", i, it->seq);
        for (int j = 0; j < i; j++)
            if (items[j].seq == it->seq) return infer__fail(err, INFER_ERR_ARG, "batch items %d and %d both feed sequence %d", j, i, it->seq);
        if (it->n <= 0 || !it->tokens) return infer__fail(err, INFER_ERR_ARG, "batch item %d: no tokens to evaluate", i);
        const int32_t n_past = s->seqs[it->seq].n_past;
        if ((int64_t)n_past + it->n > s->n_ctx)
            return infer__fail(err, INFER_ERR_CONTEXT, "%d tokens do not fit: %d of the context's %d are used", it->n, n_past, s->n_ctx);
        for (int t = 0; t < it->n; t++)
            if (it->tokens[t] < 0 || it->tokens[t] >= V)
                return infer__fail(err, INFER_ERR_ARG, "token id %d at index %d is outside the vocabulary (0..%d)", it->tokens[t], t, V - 1);
    }
    /* the blocks of the caches without a window, for the whole call at once: either every
     * sequence gets what it needs, or nothing changes */
    for (int ci = 0; ci < s->n_caches; ci++) {
        infer__cache *c = &s->cache[ci];
        if (c->window > 0) continue;
        int64_t need = 0;
        for (int i = 0; i < n_items; i++) {
            const infer__seq *q = &s->seqs[items[i].seq];
            const int32_t b = infer__cache_blocks(c, q->n_past + items[i].n);
            need += b > q->n_table[ci] ? b - q->n_table[ci] : 0;
        }
        if (need > infer__cache_available(c))
            return infer__fail(err, INFER_ERR_CONTEXT, "KV cache pool exhausted: %lld more blocks of %d %s needed, %d free (a larger -c, or fewer sequences at once)",
                               (long long)need, c->block_size * c->ratio, "positions", infer__cache_available(c));
        for (int i = 0; i < n_items; i++) infer__seq_grow(c, &s->seqs[items[i].seq], ci, s->seqs[items[i].seq].n_past + items[i].n);
    }
    const infer_kernels *k = s->k;
    int32_t *want = (int32_t *)INFER_MALLOC((size_t)U * sizeof(int32_t));
    float **dst = (float **)INFER_MALLOC((size_t)U * sizeof(float *));
    if (!want || !dst) { INFER_FREE(want); INFER_FREE(dst); return infer__fail(err, INFER_ERR_NOMEM, "out of memory"); }
    infer_status st = INFER_OK;
    int item = 0, done = 0;                     /* the next token to place: items[item].tokens[done] */
    while (item < n_items && st == INFER_OK) {
        /* a step: up to U rows, whole items where they fit, the last one possibly cut */
        int T = 0, n_want = 0;
        s->n_segs = 0;
        while (item < n_items && T < U) {
            const infer_batch_item *it = &items[item];
            infer__seq *q = &s->seqs[it->seq];
            const int n = it->n - done < U - T ? it->n - done : U - T;
            infer__seg *sg = &s->segs[s->n_segs++];
            sg->seq = it->seq; sg->row0 = T; sg->n = n; sg->p0 = q->n_past;
            memcpy(s->tok_host + T, it->tokens + done, (size_t)n * sizeof(int32_t));
            for (int i = 0; i < n && it->logits; i++)
                if (it->all_logits || done + i == it->n - 1) { want[n_want] = T + i; dst[n_want++] = it->logits + (it->all_logits ? (size_t)(done + i) * V : 0); }
            for (int ci = 0; ci < s->n_caches && st == INFER_OK; ci++)      /* windowed caches grow step by step */
                if (s->cache[ci].window > 0 && !infer__seq_grow(&s->cache[ci], q, ci, q->n_past + n))
                    st = infer__fail(err, INFER_ERR_CONTEXT, "KV cache pool exhausted");
            if (st == INFER_OK && infer__tables_sync(s, q) != INFER_OK)
                st = infer__fail(err, INFER_ERR_BACKEND, "%s backend: uploading a block table: %s", k->name, k->last_error(s->kctx));
            T += n;
            done += n;
            if (done == it->n) { item++; done = 0; }
        }
        if (st != INFER_OK) break;
        if (infer__forward_step(s, T, want, dst, n_want) != INFER_OK) {
            st = infer__fail(err, INFER_ERR_BACKEND, "%s backend: %s", k->name, k->last_error(s->kctx));
            break;
        }
        for (int g = 0; g < s->n_segs; g++) {
            const infer__seg *sg = &s->segs[g];
            infer__seq *q = &s->seqs[sg->seq];
            q->n_past = sg->p0 + sg->n;
            if (s->cache[0].prefix) infer__prefix_note(&s->cache[0], q, s->tok_host + sg->row0, sg->p0, q->n_past);
            for (int ci = 0; ci < s->n_caches; ci++) infer__seq_trim(&s->cache[ci], q, ci, q->n_past);
        }
    }
    INFER_FREE(want);
    INFER_FREE(dst);
    if (st == INFER_OK && k->sync(s->kctx) != INFER_OK) st = infer__fail(err, INFER_ERR_BACKEND, "%s backend: %s", k->name, k->last_error(s->kctx));
    return st;
}

infer_status infer_eval(infer_session *s, const int32_t *tokens, int n, float *logits, int all_logits, infer_error *err) {
    if (!s->seqs[0].live) return infer__fail(err, INFER_ERR_ARG, "sequence 0 was removed; use infer_eval_batch");
    const infer_batch_item it = { 0, tokens, n, logits, all_logits };
    return infer_eval_batch(s, &it, 1, err);
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
        if (infer_session_n_past(s) >= s->n_ctx) break;
        if ((rc = infer_eval(s, &tok, 1, logits, 0, err)) != INFER_OK) goto done;
    }
    st.gen_seconds = infer_time_seconds() - t0;
done:
    if (stats) *stats = st;
    INFER_FREE(logits);
    infer_sampler_free(smp);
    return rc;
}
/* glue: GGUF tokenizer.ggml.* keys -> infer__tok_src -> infer_tokenizer */

/* string array -> pointer/length arrays (pointing into the file) */
static infer_status infer__str_array(const infer_gguf_kv *kv, const char ***ptrs, uint64_t **lens, infer_error *err) {
    *ptrs = (const char **)infer__calloc((size_t)kv->arr_n, sizeof(char *));
    *lens = (uint64_t *)infer__calloc((size_t)kv->arr_n, sizeof(uint64_t));
    if (!*ptrs || !*lens) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    infer__cursor c = { kv->arr_data, (size_t)-1, 0 };   /* already validated by the parser */
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        infer_str s = { NULL, 0 };
        infer__read_str(&c, &s);
        (*ptrs)[i] = s.ptr;
        (*lens)[i] = s.len;
    }
    return INFER_OK;
}

static infer_status infer__load_tokenizer(infer_model *m, infer_error *err) {
    const infer_gguf *g = &m->gguf;
    infer__tok_src src;
    memset(&src, 0, sizeof src);
    const infer_gguf_kv *tokens = NULL, *scores = NULL, *types = NULL, *merges = NULL;
    infer_str model = { NULL, 0 }, pre = { NULL, 0 };
    char model_z[32] = "", pre_z[64] = "";
    if (infer__get_str(g, "tokenizer.ggml.model", &model, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_str(g, "tokenizer.ggml.pre", &pre, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.tokens", INFER_GGUF_STRING, &tokens, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.scores", INFER_GGUF_F32, &scores, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.token_type", INFER_GGUF_I32, &types, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.merges", INFER_GGUF_STRING, &merges, err) < 0) return INFER_ERR_FORMAT;
    if (!tokens || !model.ptr || infer__str_eq(model, "none")) return INFER_OK;      /* ids only */
    if (tokens->arr_n == 0 || tokens->arr_n > INT32_MAX) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.ggml.tokens has %llu entries", (unsigned long long)tokens->arr_n);
    if (scores && scores->arr_n != tokens->arr_n) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.ggml.scores has %llu entries for %llu tokens", (unsigned long long)scores->arr_n, (unsigned long long)tokens->arr_n);
    if (types && types->arr_n != tokens->arr_n) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.ggml.token_type has %llu entries for %llu tokens", (unsigned long long)types->arr_n, (unsigned long long)tokens->arr_n);
    snprintf(model_z, sizeof model_z, "%.*s", (int)(model.len < 31 ? model.len : 31), model.ptr);
    if (pre.ptr) snprintf(pre_z, sizeof pre_z, "%.*s", (int)(pre.len < 63 ? pre.len : 63), pre.ptr);
    src.model = model_z;
    src.pre = pre.ptr ? pre_z : NULL;
    src.n_vocab = (int32_t)tokens->arr_n;
    const char **tp = NULL, **mp = NULL;
    uint64_t *tl = NULL, *ml = NULL;
    float *sc = NULL;
    int32_t *ty = NULL;
    infer_status st = infer__str_array(tokens, &tp, &tl, err);
    if (st == INFER_OK && merges) {
        if (merges->arr_n > INT32_MAX) st = infer__fail(err, INFER_ERR_FORMAT, "too many merges");
        else st = infer__str_array(merges, &mp, &ml, err);
    }
    if (st == INFER_OK && scores) {   /* copied: array data in the file need not be aligned */
        sc = (float *)infer__calloc((size_t)scores->arr_n, sizeof(float));
        if (sc) memcpy(sc, scores->arr_data, (size_t)scores->arr_n * 4);
    }
    if (st == INFER_OK && types) {
        ty = (int32_t *)infer__calloc((size_t)types->arr_n, sizeof(int32_t));
        if (ty) memcpy(ty, types->arr_data, (size_t)types->arr_n * 4);
    }
    src.tokens = tp; src.token_lens = tl; src.scores = sc; src.types = ty;
    src.n_merges = merges ? (int32_t)merges->arr_n : 0;
    src.merges = mp; src.merge_lens = ml;
    static const char *id_keys[] = { "bos", "eos", "eot", "eom", "unknown", "padding", "seperator", "cls", "mask" };
    int32_t *ids[] = { &src.bos, &src.eos, &src.eot, &src.eom, &src.unk, &src.pad, &src.sep, &src.cls, &src.mask };
    for (int i = 0; i < 9 && st == INFER_OK; i++) {
        char key[64];
        int64_t v;
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", id_keys[i]);
        *ids[i] = -1;
        int r = infer__get_int(g, key, &v, err);
        if (r < 0) st = INFER_ERR_FORMAT;
        else if (r == 1) {
            /* converters write -1 (as u32 0xffffffff) for "none"; any id outside the
             * vocabulary cannot name a token, so it counts as absent */
            if (v >= 0 && v < src.n_vocab) *ids[i] = (int32_t)v;
        }
    }
    static const char *flag_keys[] = { "add_bos_token", "add_eos_token", "add_space_prefix" };
    int *flags[] = { &src.add_bos, &src.add_eos, &src.add_space_prefix };
    for (int i = 0; i < 3 && st == INFER_OK; i++) {
        char key[64];
        snprintf(key, sizeof key, "tokenizer.ggml.%s", flag_keys[i]);
        const infer_gguf_kv *kv = infer_gguf_find(g, key);
        *flags[i] = -1;
        if (kv && kv->type != INFER_GGUF_BOOL) st = infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' must be a bool", key);
        else if (kv) *flags[i] = kv->v.u != 0;
    }
    if (st == INFER_OK && (!tp || (scores && !sc) || (types && !ty))) st = infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    if (st == INFER_OK) {
        m->tok = (infer_tokenizer *)infer__calloc(1, sizeof(infer_tokenizer));
        if (!m->tok) st = infer__fail(err, INFER_ERR_NOMEM, "out of memory");
        else if (infer__tok_init(m->tok, &src, err->msg, sizeof err->msg) != 0) {
            INFER_FREE(m->tok);
            m->tok = NULL;
            err->status = INFER_ERR_FORMAT;
            st = INFER_ERR_FORMAT;
        }
    }
    INFER_FREE(tp); INFER_FREE(tl); INFER_FREE(mp); INFER_FREE(ml); INFER_FREE(sc); INFER_FREE(ty);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * >>backends -- choosing the GPU backend, and checking any backend against the CPU.
 *
 * infer_gpu_kernels is the one place that knows whether this build has a GPU backend: a
 * build with INFER_CUDA defined (make cuda) links infer_cuda.cu, any other build answers
 * with a clear error, so callers never need their own #ifdef.
 *
 * infer_backend_diff runs a backend next to the CPU table in its precise mode, the
 * reference: every op on random inputs of awkward sizes (partial tiles, K not a multiple of
 * 32, GQA, a shuffled block table, a context long enough for split-K attention, a DeltaNet
 * prompt longer than one 64-token chunk), then whole models layer by layer. Errors:
 *   max_abs = max_i |b_i - a_i|          max_rel = max_abs / max_i |a_i|
 * max_rel is measured against the output's own scale; an elementwise relative error would
 * blow up wherever the reference crosses zero. A result fails when max_rel > tol:
 *   1e-5  elementwise ops, copies, norms, embeddings (same formula, at most a different
 *         rounding of exp or a fused multiply-add)
 *   1e-4  reductions over long rows (matmul, attention, the delta rule): f32 sums taken in
 *         a different order differ by a few ulp times sqrt(K)
 *   2e-3  whole-model hidden states and logits, where those differences compound
 *   1e-2  prompt-sized matmuls in the backend's fast mode (split-TF32 tensor cores on the
 *         GPU, int8 activations on the CPU) against the same exact reference
 * Integer results (the router's expert ids) and the KV cache bytes must match exactly.
 * ---------------------------------------------------------------------------------------- */
#ifdef INFER_CUDA
infer_status infer_gpu_kernels(const infer_kernels **out, infer_error *err) {
    *out = NULL;
    INFER__TRY(infer_cuda_init(0, err));
    *out = infer_cuda_kernels();
    return INFER_OK;
}
#else
infer_status infer_gpu_kernels(const infer_kernels **out, infer_error *err) {
    *out = NULL;
    return infer__fail(err, INFER_ERR_UNSUPPORTED, "this build has no GPU backend (build one with `make cuda`, which needs nvcc, and run ./infer-cuda)");
}
#endif

#define INFER__TOL_ELEM 1e-5
#define INFER__TOL_SUM  1e-4
#define INFER__TOL_MODEL 2e-3
#define INFER__TOL_FAST 1e-2

typedef struct infer__diff {
    const infer_kernels *ka, *kb;     /* a: the CPU reference (precise), b: the backend under test */
    void *ca, *cb, *cb_fast;          /* cb_fast: the backend in its fast (not precise) mode */
    void (*print)(void *user, const char *line);
    void *user;
    int n_bad;                        /* results beyond tolerance */
    int broken;                       /* an allocation or copy failed: stop */
    infer__rng rng;
} infer__diff;

typedef struct infer__pair { void *a, *b; size_t bytes; } infer__pair;   /* one buffer on each backend */

static void infer__diff_say(infer__diff *d, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    d->print(d->user, line);
}

static float *infer__diff_rand(infer__diff *d, size_t n, float lo, float hi) {
    float *x = (float *)INFER_MALLOC((n ? n : 1) * sizeof(float));
    for (size_t i = 0; x && i < n; i++) x[i] = lo + (hi - lo) * (float)infer__rng_uniform(&d->rng);
    return x;
}

/* the same bytes on both backends (zeros when src is NULL) */
static infer__pair infer__pair_new(infer__diff *d, const void *src, size_t bytes) {
    infer__pair p = { NULL, NULL, bytes };
    if (d->broken || !(p.a = d->ka->alloc(d->ca, bytes)) || !(p.b = d->kb->alloc(d->cb, bytes))) { d->broken = 1; return p; }
    if (src) {
        if (d->ka->upload(d->ca, p.a, src, bytes) != INFER_OK || d->kb->upload(d->cb, p.b, src, bytes) != INFER_OK) d->broken = 1;
    } else {
        d->ka->zero(d->ca, p.a, bytes);
        d->kb->zero(d->cb, p.b, bytes);
    }
    return p;
}
static void infer__pair_free(infer__diff *d, infer__pair *p) {
    if (p->a) d->ka->free(d->ca, p->a);
    if (p->b) d->kb->free(d->cb, p->b);
    p->a = p->b = NULL;
}

/* both results back on the host; 0 (and the run marked broken) when a copy fails */
static int infer__pair_get(infer__diff *d, const infer__pair *p, void *a, void *b) {
    if (d->broken) return 0;
    if (d->ka->download(d->ca, a, p->a, p->bytes) != INFER_OK || d->kb->download(d->cb, b, p->b, p->bytes) != INFER_OK) {
        infer__diff_say(d, "FAIL  %s backend: %s", d->kb->name, d->kb->last_error(d->cb));
        d->broken = 1;
        return 0;
    }
    return 1;
}

/* one line: max_abs and max_rel of b against a over n floats */
static void infer__diff_floats(infer__diff *d, const char *op, const char *what, const float *a, const float *b, size_t n, double tol) {
    double mabs = 0, mref = 0;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)a[i] - b[i]);
        if (isnan(a[i]) != isnan(b[i]) || (!isnan(a[i]) && !(e <= mabs))) {
            if (isnan(e) || isinf(e)) bad = 1; else mabs = e;
        }
        if (fabs(a[i]) > mref) mref = fabs(a[i]);
    }
    const double rel = mref > 0 ? mabs / mref : mabs;
    bad |= !(rel <= tol);
    d->n_bad += bad;
    infer__diff_say(d, "%-5s %-18s %-38s max_abs %9.3e  max_rel %9.3e  (tol %.0e)", bad ? "FAIL" : "ok", op, what, mabs, rel, tol);
}
static void infer__diff_cmp(infer__diff *d, const char *op, const char *what, const infer__pair *p, double tol) {
    float *a = (float *)INFER_MALLOC(p->bytes + 4), *b = (float *)INFER_MALLOC(p->bytes + 4);
    if (a && b && infer__pair_get(d, p, a, b)) infer__diff_floats(d, op, what, a, b, p->bytes / sizeof(float), tol);
    INFER_FREE(a); INFER_FREE(b);
}
/* bytes that must be identical (expert ids, the KV cache) */
static void infer__diff_exact(infer__diff *d, const char *op, const char *what, const infer__pair *p) {
    uint8_t *a = (uint8_t *)INFER_MALLOC(p->bytes + 1), *b = (uint8_t *)INFER_MALLOC(p->bytes + 1);
    if (a && b && infer__pair_get(d, p, a, b)) {
        size_t n = 0;
        for (size_t i = 0; i < p->bytes; i++) n += a[i] != b[i];
        d->n_bad += n > 0;
        infer__diff_say(d, "%-5s %-18s %-38s %zu of %zu bytes differ", n ? "FAIL" : "ok", op, what, n, p->bytes);
    }
    INFER_FREE(a); INFER_FREE(b);
}

/* ---- weights: random values quantized to a type, as a tensor on each backend ---- */
typedef struct infer__diff_w { infer__pair p; infer_tensor ta, tb; } infer__diff_w;

static int infer__diff_can_quantize(infer_type t) {
    const infer__type_traits *tt = infer__type(t);
    return t == INFER_TYPE_I2_S || (tt && tt->quant && tt->dequant);
}
static infer__diff_w infer__diff_weights(infer__diff *d, infer_type t, int64_t K, int64_t N, int64_t E, float scale) {
    infer__diff_w w;
    memset(&w, 0, sizeof w);
    const int64_t n = K * N * E;
    const size_t bytes = infer_type_row_size(t, K) * (size_t)(N * E) + (t == INFER_TYPE_I2_S ? 32 : 0);
    float *f = infer__diff_rand(d, (size_t)n, -1.0f, 1.0f);
    void *q = infer__calloc(1, bytes);
    if (f && q) {
        if (t == INFER_TYPE_I2_S) { infer__quant_i2_s(f, q, n); scale = infer__i2_s_scale(q, n); }
        else infer__type(t)->quant(f, q, n);
        w.p = infer__pair_new(d, q, bytes);
    } else {
        d->broken = 1;
    }
    const infer_tensor t0 = { "diff.weight", t, E > 1 ? 3 : 2, { K, N, E, 1 }, NULL, bytes, scale };
    w.ta = w.tb = t0;
    w.ta.data = w.p.a;
    w.tb.data = w.p.b;
    INFER_FREE(f); INFER_FREE(q);
    return w;
}

static infer__pair infer__diff_rand_pair(infer__diff *d, size_t n, float lo, float hi) {
    float *x = infer__diff_rand(d, n, lo, hi);
    infer__pair p = infer__pair_new(d, x, n * sizeof(float));
    INFER_FREE(x);
    return p;
}

/* ---- per-type ops: embed, matmul, matmul_id ---- */
static void infer__diff_type(infer__diff *d, infer_type t) {
    const char *tn = infer_type_name(t);
    char what[64];
    if (!d->kb->supports_type(t)) {
        infer__diff_say(d, "%-5s %-18s %-38s not supported by the %s backend (models using it fail to load there)", "--", "matmul", tn, d->kb->name);
        return;
    }
    const int is_float = t == INFER_TYPE_F32 || t == INFER_TYPE_F16 || t == INFER_TYPE_BF16;
    const int64_t Ks[2] = { 512, 72 };                 /* 72: a row that is not whole 32-chunks */
    for (int ki = 0; ki < (is_float ? 2 : 1); ki++) {
        const int64_t K = Ks[ki], N = 80;
        infer__diff_w w = infer__diff_weights(d, t, K, N, 1, t == INFER_TYPE_Q8_0 ? 0.5f : 1.0f);
        const int rows_list[4] = { 1, 5, 33, 70 };     /* decode, small batch, partial tiles */
        for (int ri = 0; ri < 4 && !d->broken; ri++) {
            const int rows = rows_list[ri];
            infer__pair x = infer__diff_rand_pair(d, (size_t)rows * K, -1, 1), o = infer__pair_new(d, NULL, (size_t)rows * N * sizeof(float));
            if (!d->broken) {
                d->ka->matmul(d->ca, (float *)o.a, &w.ta, (const float *)x.a, rows);
                d->kb->matmul(d->cb, (float *)o.b, &w.tb, (const float *)x.b, rows);
                snprintf(what, sizeof what, "%s K=%lld rows=%d", tn, (long long)K, rows);
                infer__diff_cmp(d, "matmul", what, &o, INFER__TOL_SUM);
                if (rows > 8) {               /* prompt-sized: the fast mode against the same reference */
                    d->kb->matmul(d->cb_fast, (float *)o.b, &w.tb, (const float *)x.b, rows);
                    infer__diff_cmp(d, "matmul fast", what, &o, INFER__TOL_FAST);
                }
            }
            infer__pair_free(d, &x); infer__pair_free(d, &o);
        }
        if (ki == 0 && !d->broken) {                   /* embed: rows of the same table */
            const int32_t tok[5] = { 0, 79, 7, 7, 41 };
            infer__pair ids = infer__pair_new(d, tok, sizeof tok), o = infer__pair_new(d, NULL, 5 * (size_t)K * sizeof(float));
            if (!d->broken) {
                d->ka->embed(d->ca, (float *)o.a, &w.ta, (const int32_t *)ids.a, 5);
                d->kb->embed(d->cb, (float *)o.b, &w.tb, (const int32_t *)ids.b, 5);
                snprintf(what, sizeof what, "%s K=%lld rows=5", tn, (long long)K);
                infer__diff_cmp(d, "embed", what, &o, INFER__TOL_ELEM);
            }
            infer__pair_free(d, &ids); infer__pair_free(d, &o);
        }
        infer__pair_free(d, &w.p);
    }
    /* matmul_id: 4 experts of [48, 256]; 6 tokens choosing 3 each (decode-sized), 40 tokens
     * choosing 2 (prompt-sized), x shared or per slot */
    const int64_t K = 256, N = 48, E = 4;
    infer__diff_w w = infer__diff_weights(d, t, K, N, E, 1.0f);
    for (int c = 0; c < 4 && !d->broken; c++) {
        const int rows = c < 2 ? 6 : 40, n_used = c < 2 ? 3 : 2, per_slot = c % 2;
        int32_t ids_h[80];
        for (int r = 0; r < rows; r++) for (int s = 0; s < n_used; s++) ids_h[r * n_used + s] = (r * 3 + s) % (int)E;
        infer__pair ids = infer__pair_new(d, ids_h, (size_t)rows * n_used * sizeof(int32_t));
        infer__pair x = infer__diff_rand_pair(d, (size_t)rows * (per_slot ? n_used : 1) * K, -1, 1);
        infer__pair o = infer__pair_new(d, NULL, (size_t)rows * n_used * N * sizeof(float));
        if (!d->broken) {
            d->ka->matmul_id(d->ca, (float *)o.a, &w.ta, (const float *)x.a, (const int32_t *)ids.a, rows, n_used, per_slot);
            d->kb->matmul_id(d->cb, (float *)o.b, &w.tb, (const float *)x.b, (const int32_t *)ids.b, rows, n_used, per_slot);
            snprintf(what, sizeof what, "%s rows=%d x_per_slot=%d", tn, rows, per_slot);
            infer__diff_cmp(d, "matmul_id", what, &o, INFER__TOL_SUM);
            if (rows > 8) {
                d->kb->matmul_id(d->cb_fast, (float *)o.b, &w.tb, (const float *)x.b, (const int32_t *)ids.b, rows, n_used, per_slot);
                infer__diff_cmp(d, "matmul_id fast", what, &o, INFER__TOL_FAST);
            }
        }
        infer__pair_free(d, &ids); infer__pair_free(d, &x); infer__pair_free(d, &o);
    }
    infer__pair_free(d, &w.p);
}

/* ---- elementwise ops, norms, copies ---- */
static void infer__diff_elementwise(infer__diff *d) {
    const int rows = 7, dim = 320;
    const size_t n = (size_t)rows * dim, F = sizeof(float);
    infer__pair x = infer__diff_rand_pair(d, n, -2, 2), y = infer__diff_rand_pair(d, n, -2, 2), w = infer__diff_rand_pair(d, dim, 0.5f, 1.5f);
    infer__pair o = infer__pair_new(d, NULL, n * F), g1 = infer__diff_rand_pair(d, rows, -3, 3);
    infer__pair big = infer__diff_rand_pair(d, 70 * 13, -1, 1), cp = infer__pair_new(d, NULL, 50 * 13 * F);
    if (d->broken) goto done;
#define A(p) ((float *)(p).a)
#define B(p) ((float *)(p).b)
    d->ka->rmsnorm(d->ca, A(o), A(x), A(w), rows, dim, 1e-5f); d->kb->rmsnorm(d->cb, B(o), B(x), B(w), rows, dim, 1e-5f);
    infer__diff_cmp(d, "rmsnorm", "rows=7 dim=320", &o, INFER__TOL_ELEM);
    d->ka->rmsnorm(d->ca, A(o), A(o), NULL, 35, 64, 1e-6f); d->kb->rmsnorm(d->cb, B(o), B(o), NULL, 35, 64, 1e-6f);
    infer__diff_cmp(d, "rmsnorm", "in place, no weight, dim=64", &o, INFER__TOL_ELEM);
    d->ka->add(d->ca, A(o), A(x), (int64_t)n); d->kb->add(d->cb, B(o), B(x), (int64_t)n);
    infer__diff_cmp(d, "add", "n=2240", &o, INFER__TOL_ELEM);
    d->ka->add_rows(d->ca, A(o), A(w), rows, dim); d->kb->add_rows(d->cb, B(o), B(w), rows, dim);
    infer__diff_cmp(d, "add_rows", "rows=7 dim=320", &o, INFER__TOL_ELEM);
    d->ka->swiglu(d->ca, A(o), A(x), A(y), (int64_t)n); d->kb->swiglu(d->cb, B(o), B(x), B(y), (int64_t)n);
    infer__diff_cmp(d, "swiglu", "n=2240", &o, INFER__TOL_ELEM);
    for (int act = INFER_ACT_SILU; act <= INFER_ACT_RELU2; act++)
        for (int clamp = 0; clamp < 2; clamp++) {     /* limit 1.5 binds: x, y are in [-2, 2] */
            const float lim = clamp ? 1.5f : 0.0f;
            d->ka->glu(d->ca, A(o), A(x), A(y), (int64_t)n, act, lim); d->kb->glu(d->cb, B(o), B(x), B(y), (int64_t)n, act, lim);
            infer__diff_cmp(d, "glu", act == INFER_ACT_SILU ? (clamp ? "silu, clamped at 1.5" : "silu") : (clamp ? "relu2, clamped at 1.5" : "relu2"), &o, INFER__TOL_ELEM);
        }
    d->ka->mul_sigmoid(d->ca, A(o), A(y), rows, dim, dim); d->kb->mul_sigmoid(d->cb, B(o), B(y), rows, dim, dim);
    infer__diff_cmp(d, "mul_sigmoid", "g_cols=dim", &o, INFER__TOL_ELEM);
    d->ka->mul_sigmoid(d->ca, A(o), A(g1), rows, dim, 1); d->kb->mul_sigmoid(d->cb, B(o), B(g1), rows, dim, 1);
    infer__diff_cmp(d, "mul_sigmoid", "g_cols=1", &o, INFER__TOL_ELEM);
    d->ka->l2norm(d->ca, A(o), rows * 5, dim / 5, 1e-6f); d->kb->l2norm(d->cb, B(o), rows * 5, dim / 5, 1e-6f);
    infer__diff_cmp(d, "l2norm", "rows=35 dim=64", &o, INFER__TOL_ELEM);
    d->ka->copy_rows(d->ca, A(cp), 50, A(big) + 3, 70, 13, 30); d->kb->copy_rows(d->cb, B(cp), 50, B(big) + 3, 70, 13, 30);
    infer__diff_cmp(d, "copy_rows", "strides 50 <- 70, dim=30", &cp, 0);
    d->ka->zero(d->ca, A(o), n * F / 2); d->kb->zero(d->cb, B(o), n * F / 2);
    infer__diff_cmp(d, "zero", "half the buffer", &o, 0);
    if (d->kb->copy) {
        d->ka->copy(d->ca, A(o) + 3, A(x) + 5, 1000 * F); d->kb->copy(d->cb, B(o) + 3, B(x) + 5, 1000 * F);
        infer__diff_exact(d, "copy", "1000 floats, within the backend", &o);
    }
    {   /* DeltaNet gates: g, beta in place */
        infer__pair g = infer__diff_rand_pair(d, 5 * 8, -30, 30), beta = infer__diff_rand_pair(d, 5 * 8, -4, 4);
        infer__pair bias = infer__diff_rand_pair(d, 8, -1, 1), a = infer__diff_rand_pair(d, 8, -3, -0.1f);
        if (!d->broken) {
            d->ka->deltanet_gates(d->ca, A(g), A(beta), A(bias), A(a), 5, 8);
            d->kb->deltanet_gates(d->cb, B(g), B(beta), B(bias), B(a), 5, 8);
            infer__diff_cmp(d, "deltanet_gates", "g", &g, INFER__TOL_ELEM);
            infer__diff_cmp(d, "deltanet_gates", "beta", &beta, INFER__TOL_ELEM);
        }
        infer__pair_free(d, &g); infer__pair_free(d, &beta); infer__pair_free(d, &bias); infer__pair_free(d, &a);
    }
    {   /* moe_sum: 5 tokens, 3 slots, dim 64 */
        infer__pair ys = infer__diff_rand_pair(d, 5 * 3 * 64, -1, 1), ws = infer__diff_rand_pair(d, 5 * 3, 0, 1);
        if (!d->broken) {
            d->ka->moe_sum(d->ca, A(o), A(ys), A(ws), 5, 3, 64); d->kb->moe_sum(d->cb, B(o), B(ys), B(ws), 5, 3, 64);
            infer__diff_cmp(d, "moe_sum", "rows=5 n_used=3 dim=64", &o, INFER__TOL_ELEM);
        }
        infer__pair_free(d, &ys); infer__pair_free(d, &ws);
    }
done:
    infer__pair_free(d, &x); infer__pair_free(d, &y); infer__pair_free(d, &w); infer__pair_free(d, &o);
    infer__pair_free(d, &g1); infer__pair_free(d, &big); infer__pair_free(d, &cp);
}
#undef A
#undef B

/* ---- RoPE: plain, NeoX with partial rotation and frequency factors, YaRN, multi-axis ---- */
static void infer__diff_rope(infer__diff *d) {
    const int rows = 4, nh = 3, hd = 64;
    const int32_t pos1[4] = { 0, 5, 300, 5000 }, pos4[16] = { 0, 5, 300, 5000, 1, 6, 301, 5001, 2, 7, 302, 5002, 0, 0, 0, 0 };
    const int32_t sections[4] = { 11, 11, 10, 0 };
    float ff[16];
    for (int i = 0; i < 16; i++) ff[i] = 1.0f + (float)i / 4;
    infer__pair p1 = infer__pair_new(d, pos1, sizeof pos1), p4 = infer__pair_new(d, pos4, sizeof pos4), f = infer__pair_new(d, ff, sizeof ff);
    float *x = infer__diff_rand(d, (size_t)rows * nh * hd, -1, 1);
    for (int c = 0; c < 5 && !d->broken; c++) {
        infer_rope r;
        memset(&r, 0, sizeof r);
        r.n_rot = hd; r.freq_base = 10000.0f; r.freq_scale = 1.0f; r.attn_factor = 1.0f;
        r.beta_fast = 32.0f; r.beta_slow = 1.0f; r.n_ctx_orig = 2048;
        const char *what = "norm";
        if (c == 1) { what = "neox n_rot=32 freq_factors linear"; r.neox = 1; r.n_rot = 32; r.freq_scale = 0.25f; }
        if (c == 2) { what = "neox yarn x4"; r.neox = 1; r.freq_scale = 0.25f; r.ext_factor = 1.0f; r.freq_base = 500000.0f; }
        if (c == 3) { what = "multi sections 11,11,10,0"; r.neox = 1; }
        if (c == 4) { what = "last 16 dims, inverse"; r.n_rot = 16; r.rot_first = hd - 16; r.inverse = 1; r.freq_base = 160000.0f; }
        infer_rope ra = r, rb = r;
        if (c == 1) { ra.freq_factors = (const float *)f.a; rb.freq_factors = (const float *)f.b; }
        infer__pair o = infer__pair_new(d, x, (size_t)rows * nh * hd * sizeof(float));
        if (d->broken) break;
        if (c != 3) {
            d->ka->rope(d->ca, (float *)o.a, rows, nh, hd, (const int32_t *)p1.a, &ra);
            d->kb->rope(d->cb, (float *)o.b, rows, nh, hd, (const int32_t *)p1.b, &rb);
            infer__diff_cmp(d, "rope", what, &o, INFER__TOL_ELEM);
        } else {
            d->ka->rope_multi(d->ca, (float *)o.a, rows, nh, hd, (const int32_t *)p4.a, &ra, sections);
            d->kb->rope_multi(d->cb, (float *)o.b, rows, nh, hd, (const int32_t *)p4.b, &rb, sections);
            infer__diff_cmp(d, "rope_multi", what, &o, INFER__TOL_ELEM);
        }
        infer__pair_free(d, &o);
    }
    INFER_FREE(x);
    infer__pair_free(d, &p1); infer__pair_free(d, &p4); infer__pair_free(d, &f);
}

/* ---- the paged KV cache and attention ---- */
static void infer__diff_attention(infer__diff *d, infer_type kvt, int n_head, int n_head_kv, int hd, int rows, int32_t last_pos) {
    const int bs = 16, n_pos = last_pos + 1, n_blocks = (n_pos + bs - 1) / bs + 2, kvd = n_head_kv * hd;
    const size_t esz = kvt == INFER_TYPE_F16 ? 2 : 4;
    int32_t *table = (int32_t *)INFER_MALLOC((size_t)n_blocks * sizeof(int32_t));
    int32_t *all = (int32_t *)INFER_MALLOC((size_t)n_pos * sizeof(int32_t)), qpos[64];
    for (int b = 0; table && b < n_blocks; b++) table[b] = n_blocks - 1 - b;      /* reversed: physical != logical */
    for (int32_t p = 0; all && p < n_pos; p++) all[p] = p;
    for (int r = 0; r < rows; r++) qpos[r] = last_pos - (rows - 1) + r;   /* the last `rows` positions: a chunk */
    infer__pair tb = infer__pair_new(d, table, (size_t)n_blocks * sizeof(int32_t)), pa = infer__pair_new(d, all, (size_t)n_pos * sizeof(int32_t));
    infer__pair pq = infer__pair_new(d, qpos, (size_t)rows * sizeof(int32_t));
    infer__pair kp = infer__pair_new(d, NULL, (size_t)n_blocks * bs * kvd * esz), vp = infer__pair_new(d, NULL, (size_t)n_blocks * bs * kvd * esz);
    infer__pair k = infer__diff_rand_pair(d, (size_t)n_pos * kvd, -1, 1), v = infer__diff_rand_pair(d, (size_t)n_pos * kvd, -1, 1);
    infer__pair q = infer__diff_rand_pair(d, (size_t)rows * n_head * hd, -1, 1), o = infer__pair_new(d, NULL, (size_t)rows * n_head * hd * sizeof(float));
    char what[80];
    snprintf(what, sizeof what, "%s heads=%d/%d hd=%d rows=%d pos=%d", infer_type_name(kvt), n_head, n_head_kv, hd, rows, (int)last_pos);
    if (!d->broken && table && all) {
        infer_kv_view va = { kp.a, vp.a, kvt, bs, (const int32_t *)tb.a, kvd }, vb = { kp.b, vp.b, kvt, bs, (const int32_t *)tb.b, kvd };
        d->ka->kv_store(d->ca, &va, (const float *)k.a, (const float *)v.a, (const int32_t *)pa.a, n_pos);
        d->kb->kv_store(d->cb, &vb, (const float *)k.b, (const float *)v.b, (const int32_t *)pa.b, n_pos);
        infer__diff_exact(d, "kv_store k", what, &kp);
        infer__diff_exact(d, "kv_store v", what, &vp);
        const float scale = 1.0f / sqrtf((float)hd);
        d->ka->attention(d->ca, (float *)o.a, (const float *)q.a, &va, (const int32_t *)pq.a, rows, n_head, n_head_kv, hd, scale);
        d->kb->attention(d->cb, (float *)o.b, (const float *)q.b, &vb, (const int32_t *)pq.b, rows, n_head, n_head_kv, hd, scale);
        infer__diff_cmp(d, "attention", what, &o, INFER__TOL_SUM);
    }
    INFER_FREE(table); INFER_FREE(all);
    infer__pair_free(d, &tb); infer__pair_free(d, &pa); infer__pair_free(d, &pq); infer__pair_free(d, &kp); infer__pair_free(d, &vp);
    infer__pair_free(d, &k); infer__pair_free(d, &v); infer__pair_free(d, &q); infer__pair_free(d, &o);
}

/* ---- mixture-of-experts routing ---- */
/* with_bias: a selection bias; hashed: the ids given (a token table's), only weights computed */
static void infer__diff_route(infer__diff *d, int n_expert, int n_used, int gating, int norm, float scale, int with_bias, int hashed) {
    const int rows = 6;
    int32_t given[6 * 64];
    for (int i = 0; i < rows * n_used; i++) given[i] = (i * 7 + i / n_used) % n_expert;
    infer__pair lg = infer__diff_rand_pair(d, (size_t)rows * n_expert, -4, 4), bias = infer__diff_rand_pair(d, (size_t)n_expert, -0.5f, 0.5f);
    infer__pair ids = infer__pair_new(d, hashed ? given : NULL, (size_t)rows * n_used * sizeof(int32_t)), w = infer__pair_new(d, NULL, (size_t)rows * n_used * sizeof(float));
    char what[80];
    snprintf(what, sizeof what, "experts=%d used=%d gating=%d norm=%d%s%s", n_expert, n_used, gating, norm, with_bias ? " bias" : "", hashed ? " hashed" : "");
    if (!d->broken) {
        d->ka->moe_route(d->ca, (int32_t *)ids.a, (float *)w.a, (const float *)lg.a, rows, n_expert, n_used, gating, norm, scale,
                         with_bias ? (const float *)bias.a : NULL, hashed);
        d->kb->moe_route(d->cb, (int32_t *)ids.b, (float *)w.b, (const float *)lg.b, rows, n_expert, n_used, gating, norm, scale,
                         with_bias ? (const float *)bias.b : NULL, hashed);
        infer__diff_exact(d, "moe_route ids", what, &ids);
        infer__diff_cmp(d, "moe_route w", what, &w, INFER__TOL_ELEM);
    }
    infer__pair_free(d, &lg); infer__pair_free(d, &bias); infer__pair_free(d, &ids); infer__pair_free(d, &w);
}

/* ---- deepseek4: hyper-connections, the compressor, the indexer, sparse attention ---- */
static void infer__diff_dsv4(infer__diff *d) {
    if (!d->kb->hc_pre || !d->kb->hc_post || !d->kb->compress || !d->kb->indexer_topk || !d->kb->attention_sparse) {
        infer__diff_say(d, "%-5s %-18s %-38s not supported by the %s backend (deepseek4 models fail to load there)", "--", "deepseek4 ops", "", d->kb->name);
        return;
    }
    const size_t F = sizeof(float), I = sizeof(int32_t);
#define A(p) ((float *)(p).a)
#define B(p) ((float *)(p).b)
    {   /* hyper-connections: 4 streams of 96, 5 tokens; then the head's collapse */
        const int rows = 5, dim = 96, hc = 4, n_mix = hc * (2 + hc);
        infer__pair x = infer__diff_rand_pair(d, (size_t)rows * hc * dim, -2, 2), mix = infer__diff_rand_pair(d, (size_t)rows * n_mix, -2, 2);
        infer__pair base = infer__diff_rand_pair(d, (size_t)n_mix, -1, 1), scale = infer__diff_rand_pair(d, 3, 0.2f, 1.5f);
        infer__pair h = infer__diff_rand_pair(d, (size_t)rows * dim, -2, 2), u = infer__pair_new(d, NULL, (size_t)rows * dim * F);
        infer__pair pc = infer__pair_new(d, NULL, (size_t)rows * (hc + hc * hc) * F);
        if (!d->broken) {
            d->ka->hc_pre(d->ca, A(u), A(pc), A(mix), A(x), A(base), A(scale), rows, dim, hc, 20, 1e-6f);
            d->kb->hc_pre(d->cb, B(u), B(pc), B(mix), B(x), B(base), B(scale), rows, dim, hc, 20, 1e-6f);
            infer__diff_cmp(d, "hc_pre u", "4 streams of 96, 20 Sinkhorn steps", &u, INFER__TOL_ELEM);
            infer__diff_cmp(d, "hc_pre post, C", "4 streams of 96, 20 Sinkhorn steps", &pc, INFER__TOL_ELEM);
            d->ka->hc_post(d->ca, A(x), A(h), A(pc), rows, dim, hc);
            d->kb->hc_post(d->cb, B(x), B(h), B(pc), rows, dim, hc);
            infer__diff_cmp(d, "hc_post", "4 streams of 96", &x, INFER__TOL_ELEM);
            d->ka->hc_pre(d->ca, A(u), NULL, A(mix), A(x), A(base), A(scale), rows, dim, hc, 0, 1e-6f);
            d->kb->hc_pre(d->cb, B(u), NULL, B(mix), B(x), B(base), B(scale), rows, dim, hc, 0, 1e-6f);
            infer__diff_cmp(d, "hc_pre", "the head's collapse", &u, INFER__TOL_ELEM);
        }
        infer__pair_free(d, &x); infer__pair_free(d, &mix); infer__pair_free(d, &base); infer__pair_free(d, &scale);
        infer__pair_free(d, &h); infer__pair_free(d, &u); infer__pair_free(d, &pc);
    }
    for (int kind = 0; kind < 2 && !d->broken; kind++) {   /* the compressor: CSA (ratio 4, overlapping), HCA-style (ratio 8) */
        const int dim = 40, ratio = kind ? 8 : 4, overlap = !kind, W = overlap ? 2 * dim : dim, rows = 23;
        int32_t pos[23];
        for (int r = 0; r < rows; r++) pos[r] = r;
        infer__pair kv = infer__diff_rand_pair(d, (size_t)rows * W, -2, 2), g = infer__diff_rand_pair(d, (size_t)rows * W, -3, 3);
        infer__pair ape = infer__diff_rand_pair(d, (size_t)ratio * W, -1, 1), pp = infer__pair_new(d, pos, sizeof pos);
        infer__pair st = infer__pair_new(d, NULL, 6 * (size_t)dim * F), e = infer__pair_new(d, NULL, (size_t)rows * dim * F);
        char what[64];
        snprintf(what, sizeof what, "ratio %d%s, 23 tokens in chunks of 9 and 14", ratio, overlap ? " overlapping" : "");
        if (!d->broken) {
            const int n1 = 9 / ratio;                     /* entries closed by the first chunk */
            d->ka->compress(d->ca, A(e), A(st), A(kv), A(g), A(ape), (const int32_t *)pp.a, 9, dim, ratio, overlap);
            d->kb->compress(d->cb, B(e), B(st), B(kv), B(g), B(ape), (const int32_t *)pp.b, 9, dim, ratio, overlap);
            d->ka->compress(d->ca, A(e) + (size_t)n1 * dim, A(st), A(kv) + 9 * W, A(g) + 9 * W, A(ape), (const int32_t *)pp.a + 9, 14, dim, ratio, overlap);
            d->kb->compress(d->cb, B(e) + (size_t)n1 * dim, B(st), B(kv) + 9 * W, B(g) + 9 * W, B(ape), (const int32_t *)pp.b + 9, 14, dim, ratio, overlap);
            infer__diff_cmp(d, "compress", what, &e, INFER__TOL_ELEM);
            infer__diff_cmp(d, "compress state", what, &st, INFER__TOL_ELEM);
        }
        infer__pair_free(d, &kv); infer__pair_free(d, &g); infer__pair_free(d, &ape); infer__pair_free(d, &pp);
        infer__pair_free(d, &st); infer__pair_free(d, &e);
    }
    if (d->broken) return;
    /* a compressed cache of 30 entries (head 32, a shuffled block table), a token cache of
     * 125 positions (head 64), queries at positions where 0, few and many entries are visible */
    const int bs = 16, n_ent = 30, n_tok = 125, hd = 64, dI = 32, nI = 3, H = 4, top_k = 8, rows = 5;
    const int32_t qpos[5] = { 2, 20, 50, 99, 124 };
    int32_t table[16], all[125], sel[5 * 8], nsel[5];
    for (int b = 0; b < 16; b++) table[b] = 15 - b;
    for (int p = 0; p < n_tok; p++) all[p] = p;
    for (int r = 0; r < rows; r++) {                     /* a hand-made choice for the attention */
        const int vis = (qpos[r] + 1) / 4;
        nsel[r] = vis < top_k ? vis : top_k;
        for (int i = 0; i < nsel[r]; i++) sel[r * top_k + i] = vis <= top_k ? i : (i * vis) / top_k;
    }
    infer__pair tb = infer__pair_new(d, table, sizeof table), pa = infer__pair_new(d, all, sizeof all), pq = infer__pair_new(d, qpos, sizeof qpos);
    infer__pair keys = infer__diff_rand_pair(d, (size_t)n_ent * dI, -1, 1), ent = infer__diff_rand_pair(d, (size_t)n_ent * hd, -1, 1);
    infer__pair raw = infer__diff_rand_pair(d, (size_t)n_tok * hd, -1, 1);
    infer__pair kpool = infer__pair_new(d, NULL, 16 * (size_t)bs * dI * F), epool = infer__pair_new(d, NULL, 16 * (size_t)bs * hd * F);
    infer__pair rpool = infer__pair_new(d, NULL, 16 * (size_t)bs * hd * F);
    infer__pair q = infer__diff_rand_pair(d, (size_t)rows * nI * dI, -1, 1), w = infer__diff_rand_pair(d, (size_t)rows * nI, -1, 1);
    infer__pair s_out = infer__pair_new(d, NULL, (size_t)rows * top_k * I), n_out = infer__pair_new(d, NULL, (size_t)rows * I);
    infer__pair hsel = infer__pair_new(d, sel, sizeof sel), hn = infer__pair_new(d, nsel, sizeof nsel);
    infer__pair qa = infer__diff_rand_pair(d, (size_t)rows * H * hd, -1, 1), sinks = infer__diff_rand_pair(d, (size_t)H, -1, 2);
    infer__pair o = infer__pair_new(d, NULL, (size_t)rows * H * hd * F);
    if (!d->broken) {
        const infer_type kvt = INFER_TYPE_F32;
        infer_kv_view ka = { kpool.a, kpool.a, kvt, bs, (const int32_t *)tb.a, dI }, kb = { kpool.b, kpool.b, kvt, bs, (const int32_t *)tb.b, dI };
        infer_kv_view ea = { epool.a, epool.a, kvt, bs, (const int32_t *)tb.a, hd }, eb = { epool.b, epool.b, kvt, bs, (const int32_t *)tb.b, hd };
        infer_kv_view ra = { rpool.a, rpool.a, kvt, bs, (const int32_t *)tb.a, hd }, rb = { rpool.b, rpool.b, kvt, bs, (const int32_t *)tb.b, hd };
        d->ka->kv_store(d->ca, &ka, A(keys), NULL, (const int32_t *)pa.a, n_ent); d->kb->kv_store(d->cb, &kb, B(keys), NULL, (const int32_t *)pa.b, n_ent);
        d->ka->kv_store(d->ca, &ea, A(ent), NULL, (const int32_t *)pa.a, n_ent); d->kb->kv_store(d->cb, &eb, B(ent), NULL, (const int32_t *)pa.b, n_ent);
        d->ka->kv_store(d->ca, &ra, A(raw), NULL, (const int32_t *)pa.a, n_tok); d->kb->kv_store(d->cb, &rb, B(raw), NULL, (const int32_t *)pa.b, n_tok);
        infer__diff_exact(d, "kv_store", "keys only (K = V)", &rpool);
        const float sc = 1.0f / sqrtf((float)(nI * dI));
        d->ka->indexer_topk(d->ca, (int32_t *)s_out.a, (int32_t *)n_out.a, A(q), A(w), &ka, (const int32_t *)pq.a, rows, nI, dI, 4, top_k, sc);
        d->kb->indexer_topk(d->cb, (int32_t *)s_out.b, (int32_t *)n_out.b, B(q), B(w), &kb, (const int32_t *)pq.b, rows, nI, dI, 4, top_k, sc);
        infer__diff_exact(d, "indexer_topk n", "30 entries, top 8", &n_out);
        infer__diff_exact(d, "indexer_topk sel", "30 entries, top 8", &s_out);
        const float asc = 1.0f / sqrtf((float)hd);
        for (int c = 0; c < 3 && !d->broken; c++) {      /* window only; + every entry (ratio 4); + chosen entries */
            static const char *what[3] = { "window 16, sinks", "window 16 + all entries", "window 16 + chosen entries" };
            d->ka->attention_sparse(d->ca, A(o), A(qa), &ra, (const int32_t *)pq.a, rows, H, hd, asc, 16, A(sinks), c ? &ea : NULL, c ? 4 : 0,
                                    c == 2 ? (const int32_t *)hsel.a : NULL, (const int32_t *)hn.a, top_k);
            d->kb->attention_sparse(d->cb, B(o), B(qa), &rb, (const int32_t *)pq.b, rows, H, hd, asc, 16, B(sinks), c ? &eb : NULL, c ? 4 : 0,
                                    c == 2 ? (const int32_t *)hsel.b : NULL, (const int32_t *)hn.b, top_k);
            infer__diff_cmp(d, "attention_sparse", what[c], &o, INFER__TOL_SUM);
        }
    }
    infer__pair *all_p[] = { &tb, &pa, &pq, &keys, &ent, &raw, &kpool, &epool, &rpool, &q, &w, &s_out, &n_out, &hsel, &hn, &qa, &sinks, &o };
    for (size_t i = 0; i < sizeof all_p / sizeof all_p[0]; i++) infer__pair_free(d, all_p[i]);
#undef A
#undef B
}

/* ---- gated DeltaNet: the conv state and the delta rule ---- */
static void infer__diff_conv(infer__diff *d, int rows) {
    const int ch = 100, kern = 4;
    infer__pair x = infer__diff_rand_pair(d, (size_t)rows * ch, -2, 2), st = infer__diff_rand_pair(d, (size_t)(kern - 1) * ch, -2, 2);
    infer__pair w = infer__diff_rand_pair(d, (size_t)ch * kern, -1, 1), o = infer__pair_new(d, NULL, (size_t)rows * ch * sizeof(float));
    char what[64];
    snprintf(what, sizeof what, "rows=%d channels=%d kernel=%d", rows, ch, kern);
    if (!d->broken) {
        d->ka->conv1d_silu(d->ca, (float *)o.a, (const float *)x.a, (float *)st.a, (const float *)w.a, rows, ch, kern);
        d->kb->conv1d_silu(d->cb, (float *)o.b, (const float *)x.b, (float *)st.b, (const float *)w.b, rows, ch, kern);
        infer__diff_cmp(d, "conv1d_silu", what, &o, INFER__TOL_ELEM);
        infer__diff_cmp(d, "conv1d_silu st", what, &st, INFER__TOL_ELEM);
    }
    infer__pair_free(d, &x); infer__pair_free(d, &st); infer__pair_free(d, &w); infer__pair_free(d, &o);
}

static void infer__diff_deltanet(infer__diff *d, int chunked, int rows, int n_k, int n_v, int d_k, int d_v) {
    const size_t nq = (size_t)rows * n_k * d_k, nv = (size_t)rows * n_v * d_v, ng = (size_t)rows * n_v;
    float *q = infer__diff_rand(d, nq, -1, 1), *k = infer__diff_rand(d, nq, -1, 1);
    for (size_t h = 0; q && k && h < nq / d_k; h++) {          /* unit-norm q, k as the layer gives them */
        double sq = 0, sk = 0;
        for (int i = 0; i < d_k; i++) { sq += (double)q[h * d_k + i] * q[h * d_k + i]; sk += (double)k[h * d_k + i] * k[h * d_k + i]; }
        for (int i = 0; i < d_k; i++) { q[h * d_k + i] /= (float)sqrt(sq); k[h * d_k + i] /= (float)sqrt(sk); }
    }
    infer__pair pq = infer__pair_new(d, q, nq * sizeof(float)), pk = infer__pair_new(d, k, nq * sizeof(float));
    infer__pair pv = infer__diff_rand_pair(d, nv, -1, 1), pg = infer__diff_rand_pair(d, ng, -0.7f, -0.01f), pb = infer__diff_rand_pair(d, ng, 0.05f, 0.95f);
    infer__pair st = infer__diff_rand_pair(d, (size_t)n_v * d_v * d_k, -0.3f, 0.3f), o = infer__pair_new(d, NULL, nv * sizeof(float));
    char what[80];
    snprintf(what, sizeof what, "rows=%d n_k=%d n_v=%d d_k=%d d_v=%d", rows, n_k, n_v, d_k, d_v);
    const char *op = chunked ? "deltanet_chunked" : "deltanet_step";
    if (!d->broken) {
        const float scale = 1.0f / sqrtf((float)d_k);
#define INFER__DN_ARGS(s) (float *)o.s, (const float *)pq.s, (const float *)pk.s, (const float *)pv.s, (const float *)pg.s, (const float *)pb.s, (float *)st.s, rows, n_k, n_v, d_k, d_v, scale
        if (chunked) { d->ka->deltanet_chunked(d->ca, INFER__DN_ARGS(a)); d->kb->deltanet_chunked(d->cb, INFER__DN_ARGS(b)); }
        else { d->ka->deltanet_step(d->ca, INFER__DN_ARGS(a)); d->kb->deltanet_step(d->cb, INFER__DN_ARGS(b)); }
#undef INFER__DN_ARGS
        infer__diff_cmp(d, op, what, &o, INFER__TOL_SUM);
        infer__diff_cmp(d, chunked ? "deltanet_chunked S" : "deltanet_step S", what, &st, INFER__TOL_SUM);
    }
    INFER_FREE(q); INFER_FREE(k);
    infer__pair_free(d, &pq); infer__pair_free(d, &pk); infer__pair_free(d, &pv); infer__pair_free(d, &pg);
    infer__pair_free(d, &pb); infer__pair_free(d, &st); infer__pair_free(d, &o);
}

/* ---- whole models: the residual stream after every layer, then the logits ---- */
typedef struct infer__diff_run {
    infer__diff *d;
    float *x;                 /* [n_layer, T, n_embd] captured by the hook */
    int E, ok;
} infer__diff_run;

static void infer__diff_hook(void *user, infer_session *s, int l, int T) {
    infer__diff_run *r = (infer__diff_run *)user;
    const size_t n = (size_t)T * r->E;       /* E: floats of one token's residual stream(s) */
    if (s->k->download(s->kctx, r->x + (size_t)l * n, s->x, n * sizeof(float)) != INFER_OK) r->ok = 0;
}

static void infer__diff_model(infer__diff *d, infer_model *m, int n_tokens, infer_error *err) {
    const infer_config *c = &m->cfg;
    const int E = (int)infer__stream_dim(c), V = c->n_vocab, L = c->n_layer, T = n_tokens - 1;
    infer_session *sa = NULL, *sb = NULL;
    infer_session_params p = infer_session_default_params();
    p.n_ctx = n_tokens + 16;
    p.n_ubatch = T;
    p.precise = 1;
    p.backend = d->ka;
    infer__diff_run ra = { d, NULL, E, 1 }, rb = { d, NULL, E, 1 };
    int32_t *tok = (int32_t *)INFER_MALLOC((size_t)n_tokens * sizeof(int32_t));
    float *la = (float *)INFER_MALLOC((size_t)T * V * sizeof(float)), *lb = (float *)INFER_MALLOC((size_t)T * V * sizeof(float));
    ra.x = (float *)INFER_MALLOC((size_t)L * T * E * sizeof(float));
    rb.x = (float *)INFER_MALLOC((size_t)L * T * E * sizeof(float));
    if (!tok || !la || !lb || !ra.x || !rb.x) { infer__fail(err, INFER_ERR_NOMEM, "out of memory"); d->broken = 1; goto done; }
    for (int i = 0; i < n_tokens; i++) tok[i] = (int32_t)(infer__rng_next(&d->rng) % (uint64_t)V);
    if (infer_session_create(&sa, m, &p, err) != INFER_OK) { d->broken = 1; goto done; }
    p.backend = d->kb;
    if (infer_session_create(&sb, m, &p, err) != INFER_OK) { d->broken = 1; goto done; }
    sa->layer_hook = sb->layer_hook = infer__diff_hook;
    sa->hook_user = &ra;
    sb->hook_user = &rb;
    for (int step = 0; step < 2; step++) {           /* the prompt (T tokens, all logits), then one decode step */
        const int n = step ? 1 : T;
        if (infer_eval(sa, tok + (step ? T : 0), n, la, 1, err) != INFER_OK || infer_eval(sb, tok + (step ? T : 0), n, lb, 1, err) != INFER_OK ||
            !ra.ok || !rb.ok) {
            if (!ra.ok || !rb.ok) infer__fail(err, INFER_ERR_BACKEND, "reading a layer's output back failed");
            d->broken = 1;
            goto done;
        }
        char what[64];
        for (int l = 0; l < L; l++) {
            snprintf(what, sizeof what, "%s, layer %d%s", step ? "decode" : "prompt", l, m->layers[l].recurrent ? " (deltanet)" : "");
            infer__diff_floats(d, "model hidden", what, ra.x + (size_t)l * n * E, rb.x + (size_t)l * n * E, (size_t)n * E, INFER__TOL_MODEL);
        }
        snprintf(what, sizeof what, "%s, %d token%s", step ? "decode" : "prompt", n, n > 1 ? "s" : "");
        infer__diff_floats(d, "model logits", what, la, lb, (size_t)n * V, INFER__TOL_MODEL);
    }
done:
    infer_session_free(sa);
    infer_session_free(sb);
    INFER_FREE(tok); INFER_FREE(la); INFER_FREE(lb); INFER_FREE(ra.x); INFER_FREE(rb.x);
}

/* every op, on shapes chosen to reach every code path of a backend */
static void infer__diff_ops(infer__diff *d) {
    for (int t = 0; t < INFER_TYPE_COUNT && !d->broken; t++)
        if (infer_type_block((infer_type)t) && infer__diff_can_quantize((infer_type)t)) infer__diff_type(d, (infer_type)t);
    if (!d->broken) infer__diff_type(d, INFER_TYPE_I2_S);
    if (!d->broken) infer__diff_elementwise(d);
    if (!d->broken) infer__diff_rope(d);
    if (!d->broken) infer__diff_attention(d, INFER_TYPE_F32, 8, 2, 64, 6, 35);      /* a prompt chunk, GQA 4 */
    if (!d->broken) infer__diff_attention(d, INFER_TYPE_F16, 4, 4, 128, 1, 200);    /* decode */
    if (!d->broken) infer__diff_attention(d, INFER_TYPE_F16, 2, 1, 256, 3, 90);     /* qwen3.5's head size */
    if (!d->broken) infer__diff_attention(d, INFER_TYPE_F32, 16, 2, 128, 1, 3000);  /* long context: split-K */
    if (!d->broken) infer__diff_route(d, 64, 8, 1, 1, 1.0f, 0, 0);
    if (!d->broken) infer__diff_route(d, 256, 8, 2, 0, 2.5f, 0, 0);
    if (!d->broken) infer__diff_route(d, 256, 6, 4, 1, 1.5f, 1, 0);       /* deepseek4: sqrt-softplus + bias */
    if (!d->broken) infer__diff_route(d, 16, 2, 4, 1, 1.5f, 0, 1);        /* deepseek4's hash layers */
    if (!d->broken) infer__diff_dsv4(d);
    if (!d->broken) infer__diff_conv(d, 1);
    if (!d->broken) infer__diff_conv(d, 9);
    if (!d->broken) infer__diff_deltanet(d, 0, 1, 2, 4, 32, 16);
    if (!d->broken) infer__diff_deltanet(d, 0, 3, 1, 2, 128, 128);
    if (!d->broken) infer__diff_deltanet(d, 1, 70, 2, 4, 32, 16);
    if (!d->broken) infer__diff_deltanet(d, 1, 65, 1, 2, 128, 128);
}

int infer_backend_diff(const infer_kernels *k, infer_model *m, int n_tokens, int what, void (*print)(void *user, const char *line),
                       void *user, infer_error *err) {
    infer__diff d;
    memset(&d, 0, sizeof d);
    d.ka = infer_cpu_kernels();
    d.kb = k;
    d.print = print;
    d.user = user;
    infer__rng_seed(&d.rng, 1234);
    if (n_tokens < 2) n_tokens = 2;
    if (d.ka->ctx_create(&d.ca, infer__n_cores(), 1, err) != INFER_OK) return -1;
    if (k->ctx_create(&d.cb, infer__n_cores(), 1, err) != INFER_OK) { d.ka->ctx_free(d.ca); return -1; }
    if (k->ctx_create(&d.cb_fast, infer__n_cores(), 0, err) != INFER_OK) { k->ctx_free(d.cb); d.ka->ctx_free(d.ca); return -1; }
    infer__diff_say(&d, "backend diff: %s against the cpu (precise)", k->name);
    if (what & INFER_DIFF_OPS) infer__diff_ops(&d);
    infer_error merr;
    merr.msg[0] = 0;
    if (!d.broken && m && (what & INFER_DIFF_MODEL)) infer__diff_model(&d, m, n_tokens, &merr);
    int rc = d.n_bad;
    if (d.broken) {
        const char *why = merr.msg[0] ? merr.msg : k->last_error(d.cb);
        infer__fail(err, INFER_ERR_BACKEND, "backend diff stopped: %s", why && *why ? why : "an allocation or copy failed");
        rc = -1;
    } else {
        infer__diff_say(&d, "%d result%s beyond tolerance", d.n_bad, d.n_bad == 1 ? "" : "s");
    }
    k->ctx_free(d.cb_fast);
    k->ctx_free(d.cb);
    d.ka->ctx_free(d.ca);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * >>tables -- big lookup tables, kept out of the way of the reading.
 * ---------------------------------------------------------------------------------------- */
/* lookup tables of the grid i-quants (IQ1_S, IQ1_M, IQ2_XXS,
 * IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S). Goes verbatim into the tables section at the very end
 * of infer.h; quant_c.h only forward-declares these arrays.
 *
 * ===================================================================================
 * >>tables_iq  i-quant grids and sign table
 * ===================================================================================
 * A grid entry packs the magnitudes of a group of weights, one byte per weight,
 * weight j in byte j (bits 8j..8j+7), so entry >> 8*j & 0xff is the j-th value.
 * Each byte is one of a few levels:
 *
 *   table               entries  bytes/entry  levels (byte values)
 *   infer__iq2xxs_grid    256        8        0x08 0x19 0x2b            (8, 25, 43)
 *   infer__iq2xs_grid     512        8        0x08 0x19 0x2b
 *   infer__iq2s_grid     1024        8        0x08 0x19 0x2b
 *   infer__iq3xxs_grid    256        4        0x04 0x0c 0x14 0x1c 0x24 0x2c 0x34 0x3e
 *   infer__iq3s_grid      512        4        0x01 0x03 0x05 ... 0x0f   (odd 1..15)
 *   infer__iq1s_grid     2048        8        0xff 0x00 0x01            (int8: -1, 0, +1)
 *
 * The grids are the points of a lattice-like codebook chosen (by the format's author)
 * to cover typical weight groups well; entries are sorted by their level indices
 * read as a base-4 (2-bit) or base-8 (3-bit) number with weight 0 least significant.
 * The values are format facts: a file quantized with them must be decoded with them.
 *
 * infer__ksigns_iq2xs: the sign codes of IQ2_XXS/IQ2_XS/IQ3_XXS store 7 sign bits per
 * group of 8 weights; the 8th is implied by an even number of negative signs, so
 * ksigns[c] = c | (parity(c) << 7). Bit j set = weight j negative.
 */

static const uint64_t infer__iq2xxs_grid[256] = {
    0x0808080808080808, 0x080808080808082b, 0x0808080808081919, 0x0808080808082b08,
    0x0808080808082b2b, 0x0808080808190819, 0x0808080808191908, 0x08080808082b0808,
    0x08080808082b082b, 0x08080808082b2b08, 0x08080808082b2b2b, 0x0808080819080819,
    0x0808080819081908, 0x0808080819190808, 0x0808080819192b08, 0x08080808192b0819,
    0x08080808192b1908, 0x080808082b080808, 0x080808082b08082b, 0x080808082b082b2b,
    0x080808082b2b082b, 0x0808081908080819, 0x0808081908081908, 0x0808081908190808,
    0x0808081908191919, 0x0808081919080808, 0x080808192b081908, 0x080808192b192b08,
    0x0808082b08080808, 0x0808082b0808082b, 0x0808082b082b082b, 0x0808082b2b08082b,
    0x0808190808080819, 0x0808190808081908, 0x0808190808190808, 0x08081908082b0819,
    0x08081908082b1908, 0x0808190819080808, 0x080819081908082b, 0x0808190819082b08,
    0x08081908192b0808, 0x080819082b080819, 0x080819082b081908, 0x080819082b190808,
    0x080819082b2b1908, 0x0808191908080808, 0x080819190808082b, 0x0808191908082b08,
    0x08081919082b0808, 0x080819191908192b, 0x08081919192b2b19, 0x080819192b080808,
    0x080819192b190819, 0x0808192b08082b19, 0x0808192b08190808, 0x0808192b19080808,
    0x0808192b2b081908, 0x0808192b2b2b1908, 0x08082b0808080808, 0x08082b0808081919,
    0x08082b0808082b08, 0x08082b0808191908, 0x08082b08082b2b08, 0x08082b0819080819,
    0x08082b0819081908, 0x08082b0819190808, 0x08082b081919082b, 0x08082b082b082b08,
    0x08082b1908081908, 0x08082b1919080808, 0x08082b2b0808082b, 0x08082b2b08191908,
    0x0819080808080819, 0x0819080808081908, 0x0819080808190808, 0x08190808082b0819,
    0x0819080819080808, 0x08190808192b0808, 0x081908082b081908, 0x081908082b190808,
    0x081908082b191919, 0x0819081908080808, 0x0819081908082b08, 0x08190819082b0808,
    0x0819081919190808, 0x0819081919192b2b, 0x081908192b080808, 0x0819082b082b1908,
    0x0819082b19081919, 0x0819190808080808, 0x0819190808082b08, 0x08191908082b0808,
    0x08191908082b1919, 0x0819190819082b19, 0x081919082b080808, 0x0819191908192b08,
    0x08191919192b082b, 0x0819192b08080808, 0x0819192b0819192b, 0x08192b0808080819,
    0x08192b0808081908, 0x08192b0808190808, 0x08192b0819080808, 0x08192b082b080819,
    0x08192b1908080808, 0x08192b1908081919, 0x08192b192b2b0808, 0x08192b2b19190819,
    0x082b080808080808, 0x082b08080808082b, 0x082b080808082b2b, 0x082b080819081908,
    0x082b0808192b0819, 0x082b08082b080808, 0x082b08082b08082b, 0x082b0819082b2b19,
    0x082b081919082b08, 0x082b082b08080808, 0x082b082b0808082b, 0x082b190808080819,
    0x082b190808081908, 0x082b190808190808, 0x082b190819080808, 0x082b19081919192b,
    0x082b191908080808, 0x082b191919080819, 0x082b1919192b1908, 0x082b192b2b190808,
    0x082b2b0808082b08, 0x082b2b08082b0808, 0x082b2b082b191908, 0x082b2b2b19081908,
    0x1908080808080819, 0x1908080808081908, 0x1908080808190808, 0x1908080808192b08,
    0x19080808082b0819, 0x19080808082b1908, 0x1908080819080808, 0x1908080819082b08,
    0x190808081919192b, 0x19080808192b0808, 0x190808082b080819, 0x190808082b081908,
    0x190808082b190808, 0x1908081908080808, 0x19080819082b0808, 0x19080819192b0819,
    0x190808192b080808, 0x190808192b081919, 0x1908082b08080819, 0x1908082b08190808,
    0x1908082b19082b08, 0x1908082b1919192b, 0x1908082b192b2b08, 0x1908190808080808,
    0x1908190808082b08, 0x19081908082b0808, 0x190819082b080808, 0x190819082b192b19,
    0x190819190819082b, 0x19081919082b1908, 0x1908192b08080808, 0x19082b0808080819,
    0x19082b0808081908, 0x19082b0808190808, 0x19082b0819080808, 0x19082b0819081919,
    0x19082b1908080808, 0x19082b1919192b08, 0x19082b19192b0819, 0x19082b192b08082b,
    0x19082b2b19081919, 0x19082b2b2b190808, 0x1919080808080808, 0x1919080808082b08,
    0x1919080808190819, 0x1919080808192b19, 0x19190808082b0808, 0x191908082b080808,
    0x191908082b082b08, 0x1919081908081908, 0x191908191908082b, 0x191908192b2b1908,
    0x1919082b2b190819, 0x191919082b190808, 0x191919082b19082b, 0x1919191908082b2b,
    0x1919192b08080819, 0x1919192b19191908, 0x19192b0808080808, 0x19192b0808190819,
    0x19192b0808192b19, 0x19192b08192b1908, 0x19192b1919080808, 0x19192b2b08082b08,
    0x192b080808081908, 0x192b080808190808, 0x192b080819080808, 0x192b0808192b2b08,
    0x192b081908080808, 0x192b081919191919, 0x192b082b08192b08, 0x192b082b192b0808,
    0x192b190808080808, 0x192b190808081919, 0x192b191908190808, 0x192b19190819082b,
    0x192b19192b081908, 0x192b2b081908082b, 0x2b08080808080808, 0x2b0808080808082b,
    0x2b08080808082b2b, 0x2b08080819080819, 0x2b0808082b08082b, 0x2b08081908081908,
    0x2b08081908192b08, 0x2b08081919080808, 0x2b08082b08190819, 0x2b08190808080819,
    0x2b08190808081908, 0x2b08190808190808, 0x2b08190808191919, 0x2b08190819080808,
    0x2b081908192b0808, 0x2b08191908080808, 0x2b0819191908192b, 0x2b0819192b191908,
    0x2b08192b08082b19, 0x2b08192b19080808, 0x2b08192b192b0808, 0x2b082b080808082b,
    0x2b082b1908081908, 0x2b082b2b08190819, 0x2b19080808081908, 0x2b19080808190808,
    0x2b190808082b1908, 0x2b19080819080808, 0x2b1908082b2b0819, 0x2b1908190819192b,
    0x2b1908192b080808, 0x2b19082b19081919, 0x2b19190808080808, 0x2b191908082b082b,
    0x2b19190819081908, 0x2b19191919190819, 0x2b192b082b080819, 0x2b192b19082b0808,
    0x2b2b08080808082b, 0x2b2b080819190808, 0x2b2b08082b081919, 0x2b2b081908082b19,
    0x2b2b082b08080808, 0x2b2b190808192b08, 0x2b2b2b0819190808, 0x2b2b2b1908081908,
};

static const uint64_t infer__iq2xs_grid[512] = {
    0x0808080808080808, 0x080808080808082b, 0x0808080808081919, 0x0808080808082b08,
    0x0808080808082b2b, 0x0808080808190819, 0x0808080808191908, 0x080808080819192b,
    0x0808080808192b19, 0x08080808082b0808, 0x08080808082b082b, 0x08080808082b1919,
    0x08080808082b2b08, 0x0808080819080819, 0x0808080819081908, 0x080808081908192b,
    0x0808080819082b19, 0x0808080819190808, 0x080808081919082b, 0x0808080819191919,
    0x0808080819192b08, 0x08080808192b0819, 0x08080808192b1908, 0x080808082b080808,
    0x080808082b08082b, 0x080808082b081919, 0x080808082b082b08, 0x080808082b190819,
    0x080808082b191908, 0x080808082b192b19, 0x080808082b2b0808, 0x0808081908080819,
    0x0808081908081908, 0x080808190808192b, 0x0808081908082b19, 0x0808081908190808,
    0x080808190819082b, 0x0808081908191919, 0x0808081908192b08, 0x0808081908192b2b,
    0x08080819082b0819, 0x08080819082b1908, 0x0808081919080808, 0x080808191908082b,
    0x0808081919081919, 0x0808081919082b08, 0x0808081919190819, 0x0808081919191908,
    0x08080819192b0808, 0x08080819192b2b08, 0x080808192b080819, 0x080808192b081908,
    0x080808192b190808, 0x0808082b08080808, 0x0808082b0808082b, 0x0808082b08081919,
    0x0808082b08082b08, 0x0808082b08190819, 0x0808082b08191908, 0x0808082b082b0808,
    0x0808082b19080819, 0x0808082b19081908, 0x0808082b19190808, 0x0808082b19191919,
    0x0808082b2b080808, 0x0808082b2b082b2b, 0x0808190808080819, 0x0808190808081908,
    0x080819080808192b, 0x0808190808082b19, 0x0808190808190808, 0x080819080819082b,
    0x0808190808191919, 0x0808190808192b08, 0x08081908082b0819, 0x08081908082b1908,
    0x0808190819080808, 0x080819081908082b, 0x0808190819081919, 0x0808190819082b08,
    0x0808190819190819, 0x0808190819191908, 0x080819081919192b, 0x08081908192b0808,
    0x080819082b080819, 0x080819082b081908, 0x080819082b190808, 0x0808191908080808,
    0x080819190808082b, 0x0808191908081919, 0x0808191908082b08, 0x0808191908190819,
    0x0808191908191908, 0x08081919082b0808, 0x0808191919080819, 0x0808191919081908,
    0x0808191919190808, 0x08081919192b0819, 0x080819192b080808, 0x0808192b08080819,
    0x0808192b08081908, 0x0808192b08190808, 0x0808192b082b192b, 0x0808192b19080808,
    0x0808192b1908082b, 0x0808192b2b081908, 0x08082b0808080808, 0x08082b080808082b,
    0x08082b0808081919, 0x08082b0808082b08, 0x08082b0808082b2b, 0x08082b0808190819,
    0x08082b0808191908, 0x08082b08082b0808, 0x08082b08082b1919, 0x08082b0819080819,
    0x08082b0819081908, 0x08082b0819190808, 0x08082b0819192b08, 0x08082b082b080808,
    0x08082b082b2b0808, 0x08082b082b2b2b2b, 0x08082b1908080819, 0x08082b1908081908,
    0x08082b1908190808, 0x08082b1919080808, 0x08082b192b080819, 0x08082b192b082b19,
    0x08082b2b08080808, 0x08082b2b082b0808, 0x08082b2b082b2b08, 0x08082b2b2b19192b,
    0x08082b2b2b2b0808, 0x0819080808080819, 0x0819080808081908, 0x081908080808192b,
    0x0819080808082b19, 0x0819080808190808, 0x081908080819082b, 0x0819080808191919,
    0x0819080808192b08, 0x08190808082b0819, 0x08190808082b1908, 0x0819080819080808,
    0x081908081908082b, 0x0819080819081919, 0x0819080819082b08, 0x0819080819190819,
    0x0819080819191908, 0x08190808192b0808, 0x08190808192b2b2b, 0x081908082b080819,
    0x081908082b081908, 0x081908082b190808, 0x0819081908080808, 0x081908190808082b,
    0x0819081908081919, 0x0819081908082b08, 0x0819081908190819, 0x0819081908191908,
    0x08190819082b0808, 0x0819081919080819, 0x0819081919081908, 0x0819081919190808,
    0x081908192b080808, 0x081908192b191908, 0x081908192b19192b, 0x0819082b08080819,
    0x0819082b08081908, 0x0819082b0808192b, 0x0819082b08190808, 0x0819082b19080808,
    0x0819082b192b0808, 0x0819190808080808, 0x081919080808082b, 0x0819190808081919,
    0x0819190808082b08, 0x0819190808190819, 0x0819190808191908, 0x08191908082b0808,
    0x0819190819080819, 0x0819190819081908, 0x0819190819082b19, 0x0819190819190808,
    0x08191908192b1908, 0x081919082b080808, 0x0819191908080819, 0x0819191908081908,
    0x0819191908190808, 0x0819191919080808, 0x0819192b08080808, 0x0819192b08191908,
    0x0819192b19082b19, 0x08192b0808080819, 0x08192b0808081908, 0x08192b0808190808,
    0x08192b080819082b, 0x08192b0819080808, 0x08192b0819191908, 0x08192b082b08192b,
    0x08192b1908080808, 0x08192b1908081919, 0x08192b19192b192b, 0x08192b2b19190819,
    0x08192b2b2b2b2b19, 0x082b080808080808, 0x082b08080808082b, 0x082b080808081919,
    0x082b080808082b08, 0x082b080808082b2b, 0x082b080808190819, 0x082b080808191908,
    0x082b0808082b0808, 0x082b080819080819, 0x082b080819081908, 0x082b080819190808,
    0x082b08082b080808, 0x082b08082b2b0808, 0x082b081908080819, 0x082b081908081908,
    0x082b081908190808, 0x082b081919080808, 0x082b081919082b08, 0x082b0819192b1919,
    0x082b082b08080808, 0x082b082b082b082b, 0x082b082b2b080808, 0x082b082b2b2b2b08,
    0x082b190808080819, 0x082b190808081908, 0x082b190808190808, 0x082b1908082b2b19,
    0x082b190819080808, 0x082b191908080808, 0x082b191919080819, 0x082b19191919082b,
    0x082b19192b192b19, 0x082b192b08080819, 0x082b192b08192b2b, 0x082b192b2b2b192b,
    0x082b2b0808080808, 0x082b2b0808082b08, 0x082b2b0808082b2b, 0x082b2b08082b0808,
    0x082b2b0819191919, 0x082b2b082b082b08, 0x082b2b082b2b082b, 0x082b2b19192b2b08,
    0x082b2b192b190808, 0x082b2b2b08082b08, 0x082b2b2b082b0808, 0x082b2b2b2b08082b,
    0x082b2b2b2b082b08, 0x082b2b2b2b082b2b, 0x1908080808080819, 0x1908080808081908,
    0x190808080808192b, 0x1908080808082b19, 0x1908080808190808, 0x190808080819082b,
    0x1908080808191919, 0x1908080808192b08, 0x19080808082b0819, 0x19080808082b1908,
    0x1908080819080808, 0x190808081908082b, 0x1908080819081919, 0x1908080819082b08,
    0x1908080819082b2b, 0x1908080819190819, 0x1908080819191908, 0x19080808192b0808,
    0x19080808192b1919, 0x190808082b080819, 0x190808082b081908, 0x190808082b190808,
    0x1908081908080808, 0x190808190808082b, 0x1908081908081919, 0x1908081908082b08,
    0x1908081908190819, 0x1908081908191908, 0x19080819082b0808, 0x1908081919080819,
    0x1908081919081908, 0x1908081919190808, 0x190808192b080808, 0x190808192b081919,
    0x190808192b2b082b, 0x1908082b08080819, 0x1908082b08081908, 0x1908082b08190808,
    0x1908082b0819082b, 0x1908082b082b2b19, 0x1908082b19080808, 0x1908190808080808,
    0x190819080808082b, 0x1908190808081919, 0x1908190808082b08, 0x1908190808190819,
    0x1908190808191908, 0x1908190808192b19, 0x19081908082b0808, 0x1908190819080819,
    0x1908190819081908, 0x1908190819190808, 0x190819082b080808, 0x190819082b191908,
    0x1908191908080819, 0x1908191908081908, 0x1908191908190808, 0x19081919082b1908,
    0x1908191919080808, 0x190819192b192b2b, 0x1908192b08080808, 0x1908192b08082b2b,
    0x1908192b19081908, 0x1908192b19190808, 0x19082b0808080819, 0x19082b0808081908,
    0x19082b0808190808, 0x19082b0819080808, 0x19082b0819081919, 0x19082b0819191908,
    0x19082b08192b082b, 0x19082b1908080808, 0x19082b1908190819, 0x19082b1919081908,
    0x19082b1919190808, 0x19082b19192b2b19, 0x19082b2b08081908, 0x1919080808080808,
    0x191908080808082b, 0x1919080808081919, 0x1919080808082b08, 0x1919080808190819,
    0x1919080808191908, 0x19190808082b0808, 0x19190808082b2b08, 0x1919080819080819,
    0x1919080819081908, 0x1919080819190808, 0x191908082b080808, 0x1919081908080819,
    0x1919081908081908, 0x1919081908190808, 0x1919081908191919, 0x1919081919080808,
    0x191908191908082b, 0x1919082b08080808, 0x1919082b19081908, 0x1919082b2b2b2b2b,
    0x1919190808080819, 0x1919190808081908, 0x1919190808190808, 0x19191908082b0819,
    0x1919190819080808, 0x19191908192b0808, 0x191919082b080819, 0x191919082b2b0819,
    0x1919191908080808, 0x1919191908082b08, 0x191919192b080808, 0x191919192b082b08,
    0x1919192b082b0819, 0x1919192b192b2b08, 0x1919192b2b2b0819, 0x19192b0808080808,
    0x19192b0808191908, 0x19192b0819080819, 0x19192b0819190808, 0x19192b082b192b19,
    0x19192b1908192b2b, 0x19192b1919080808, 0x19192b191908082b, 0x19192b2b2b081919,
    0x192b080808080819, 0x192b080808081908, 0x192b080808190808, 0x192b080819080808,
    0x192b080819191908, 0x192b0808192b082b, 0x192b08082b08192b, 0x192b08082b2b2b19,
    0x192b081908080808, 0x192b082b082b1908, 0x192b082b19082b2b, 0x192b082b2b19082b,
    0x192b190808080808, 0x192b19080819192b, 0x192b191908190808, 0x192b191919080808,
    0x192b191919081919, 0x192b19192b2b1908, 0x192b2b0808080819, 0x192b2b08192b2b2b,
    0x192b2b19082b1919, 0x192b2b2b0808192b, 0x192b2b2b19191908, 0x192b2b2b192b082b,
    0x2b08080808080808, 0x2b0808080808082b, 0x2b08080808081919, 0x2b08080808082b08,
    0x2b08080808190819, 0x2b08080808191908, 0x2b080808082b0808, 0x2b080808082b2b2b,
    0x2b08080819080819, 0x2b08080819081908, 0x2b08080819190808, 0x2b0808082b080808,
    0x2b0808082b08082b, 0x2b0808082b2b2b08, 0x2b0808082b2b2b2b, 0x2b08081908080819,
    0x2b08081908081908, 0x2b0808190808192b, 0x2b08081908190808, 0x2b08081919080808,
    0x2b08081919190819, 0x2b08081919192b19, 0x2b08082b08080808, 0x2b08082b082b0808,
    0x2b08082b2b080808, 0x2b08082b2b08082b, 0x2b08082b2b2b0808, 0x2b08082b2b2b2b08,
    0x2b08190808080819, 0x2b08190808081908, 0x2b08190808190808, 0x2b0819080819082b,
    0x2b08190808191919, 0x2b08190819080808, 0x2b081908192b0808, 0x2b0819082b082b19,
    0x2b08191908080808, 0x2b08191919081908, 0x2b0819192b2b1919, 0x2b08192b08192b08,
    0x2b08192b192b2b2b, 0x2b082b0808080808, 0x2b082b0808082b08, 0x2b082b08082b1919,
    0x2b082b0819192b2b, 0x2b082b082b080808, 0x2b082b082b08082b, 0x2b082b082b2b2b08,
    0x2b082b190808192b, 0x2b082b2b082b082b, 0x2b082b2b2b080808, 0x2b082b2b2b082b08,
    0x2b082b2b2b19192b, 0x2b082b2b2b2b2b08, 0x2b19080808080819, 0x2b19080808081908,
    0x2b19080808190808, 0x2b19080819080808, 0x2b1908081919192b, 0x2b1908082b081908,
    0x2b19081908080808, 0x2b190819082b082b, 0x2b190819192b1908, 0x2b19082b1919192b,
    0x2b19082b2b082b19, 0x2b19190808080808, 0x2b19190808081919, 0x2b19190819081908,
    0x2b19190819190808, 0x2b19190819192b08, 0x2b191919082b2b19, 0x2b1919192b190808,
    0x2b1919192b19082b, 0x2b19192b19080819, 0x2b192b0819190819, 0x2b192b082b2b192b,
    0x2b192b1919082b19, 0x2b192b2b08191919, 0x2b192b2b192b0808, 0x2b2b080808080808,
    0x2b2b08080808082b, 0x2b2b080808082b08, 0x2b2b080808082b2b, 0x2b2b0808082b0808,
    0x2b2b0808082b2b2b, 0x2b2b08082b2b0808, 0x2b2b081919190819, 0x2b2b081919192b19,
    0x2b2b08192b2b192b, 0x2b2b082b08080808, 0x2b2b082b0808082b, 0x2b2b082b08082b08,
    0x2b2b082b082b2b2b, 0x2b2b082b2b080808, 0x2b2b082b2b2b0808, 0x2b2b190819080808,
    0x2b2b19082b191919, 0x2b2b192b192b1919, 0x2b2b192b2b192b08, 0x2b2b2b0808082b2b,
    0x2b2b2b08082b0808, 0x2b2b2b08082b082b, 0x2b2b2b08082b2b08, 0x2b2b2b082b2b0808,
    0x2b2b2b082b2b2b08, 0x2b2b2b1908081908, 0x2b2b2b192b081908, 0x2b2b2b192b08192b,
    0x2b2b2b2b082b2b08, 0x2b2b2b2b082b2b2b, 0x2b2b2b2b2b190819, 0x2b2b2b2b2b2b2b2b,
};

static const uint64_t infer__iq2s_grid[1024] = {
    0x0808080808080808, 0x080808080808082b, 0x0808080808081919, 0x0808080808082b08,
    0x0808080808082b2b, 0x0808080808190819, 0x0808080808191908, 0x080808080819192b,
    0x0808080808192b19, 0x08080808082b0808, 0x08080808082b082b, 0x08080808082b1919,
    0x08080808082b2b08, 0x0808080819080819, 0x0808080819081908, 0x080808081908192b,
    0x0808080819082b19, 0x0808080819190808, 0x080808081919082b, 0x0808080819191919,
    0x0808080819192b08, 0x08080808192b0819, 0x08080808192b1908, 0x08080808192b192b,
    0x08080808192b2b19, 0x080808082b080808, 0x080808082b08082b, 0x080808082b081919,
    0x080808082b082b08, 0x080808082b190819, 0x080808082b191908, 0x080808082b2b0808,
    0x080808082b2b1919, 0x080808082b2b2b2b, 0x0808081908080819, 0x0808081908081908,
    0x080808190808192b, 0x0808081908082b19, 0x0808081908190808, 0x080808190819082b,
    0x0808081908191919, 0x0808081908192b08, 0x08080819082b0819, 0x08080819082b1908,
    0x0808081919080808, 0x080808191908082b, 0x0808081919081919, 0x0808081919082b08,
    0x0808081919190819, 0x0808081919191908, 0x080808191919192b, 0x0808081919192b19,
    0x08080819192b0808, 0x08080819192b1919, 0x08080819192b2b08, 0x080808192b080819,
    0x080808192b081908, 0x080808192b190808, 0x080808192b19082b, 0x080808192b191919,
    0x080808192b2b0819, 0x080808192b2b1908, 0x0808082b08080808, 0x0808082b0808082b,
    0x0808082b08081919, 0x0808082b08082b08, 0x0808082b08190819, 0x0808082b08191908,
    0x0808082b082b0808, 0x0808082b082b2b2b, 0x0808082b19080819, 0x0808082b19081908,
    0x0808082b1908192b, 0x0808082b19082b19, 0x0808082b19190808, 0x0808082b19191919,
    0x0808082b2b080808, 0x0808082b2b081919, 0x0808082b2b082b2b, 0x0808082b2b191908,
    0x0808082b2b2b082b, 0x0808190808080819, 0x0808190808081908, 0x080819080808192b,
    0x0808190808082b19, 0x0808190808190808, 0x080819080819082b, 0x0808190808191919,
    0x0808190808192b08, 0x08081908082b0819, 0x08081908082b1908, 0x08081908082b192b,
    0x08081908082b2b19, 0x0808190819080808, 0x080819081908082b, 0x0808190819081919,
    0x0808190819082b08, 0x0808190819082b2b, 0x0808190819190819, 0x0808190819191908,
    0x080819081919192b, 0x0808190819192b19, 0x08081908192b0808, 0x08081908192b082b,
    0x08081908192b1919, 0x080819082b080819, 0x080819082b081908, 0x080819082b08192b,
    0x080819082b082b19, 0x080819082b190808, 0x080819082b191919, 0x080819082b192b08,
    0x080819082b2b0819, 0x080819082b2b1908, 0x0808191908080808, 0x080819190808082b,
    0x0808191908081919, 0x0808191908082b08, 0x0808191908082b2b, 0x0808191908190819,
    0x0808191908191908, 0x080819190819192b, 0x0808191908192b19, 0x08081919082b0808,
    0x08081919082b1919, 0x08081919082b2b08, 0x0808191919080819, 0x0808191919081908,
    0x080819191908192b, 0x0808191919082b19, 0x0808191919190808, 0x080819191919082b,
    0x0808191919191919, 0x0808191919192b08, 0x08081919192b0819, 0x08081919192b1908,
    0x080819192b080808, 0x080819192b08082b, 0x080819192b081919, 0x080819192b082b08,
    0x080819192b190819, 0x080819192b191908, 0x080819192b2b0808, 0x0808192b08080819,
    0x0808192b08081908, 0x0808192b0808192b, 0x0808192b08082b19, 0x0808192b08190808,
    0x0808192b08191919, 0x0808192b19080808, 0x0808192b19081919, 0x0808192b19082b08,
    0x0808192b19190819, 0x0808192b19191908, 0x0808192b192b0808, 0x0808192b2b080819,
    0x0808192b2b081908, 0x0808192b2b190808, 0x08082b0808080808, 0x08082b080808082b,
    0x08082b0808081919, 0x08082b0808082b08, 0x08082b0808190819, 0x08082b0808191908,
    0x08082b080819192b, 0x08082b0808192b19, 0x08082b08082b0808, 0x08082b08082b1919,
    0x08082b08082b2b2b, 0x08082b0819080819, 0x08082b0819081908, 0x08082b081908192b,
    0x08082b0819082b19, 0x08082b0819190808, 0x08082b081919082b, 0x08082b0819191919,
    0x08082b0819192b08, 0x08082b08192b0819, 0x08082b08192b1908, 0x08082b082b080808,
    0x08082b082b081919, 0x08082b082b191908, 0x08082b082b2b2b2b, 0x08082b1908080819,
    0x08082b1908081908, 0x08082b1908190808, 0x08082b190819082b, 0x08082b1908191919,
    0x08082b1908192b08, 0x08082b19082b0819, 0x08082b1919080808, 0x08082b1919081919,
    0x08082b1919082b08, 0x08082b1919190819, 0x08082b1919191908, 0x08082b19192b0808,
    0x08082b192b080819, 0x08082b192b190808, 0x08082b2b08080808, 0x08082b2b08190819,
    0x08082b2b08191908, 0x08082b2b082b082b, 0x08082b2b082b2b08, 0x08082b2b082b2b2b,
    0x08082b2b19190808, 0x08082b2b2b192b19, 0x0819080808080819, 0x0819080808081908,
    0x081908080808192b, 0x0819080808082b19, 0x0819080808190808, 0x081908080819082b,
    0x0819080808191919, 0x0819080808192b08, 0x08190808082b0819, 0x08190808082b1908,
    0x08190808082b192b, 0x0819080819080808, 0x081908081908082b, 0x0819080819081919,
    0x0819080819082b08, 0x0819080819190819, 0x0819080819191908, 0x081908081919192b,
    0x0819080819192b19, 0x08190808192b0808, 0x08190808192b082b, 0x08190808192b1919,
    0x08190808192b2b08, 0x081908082b080819, 0x081908082b081908, 0x081908082b08192b,
    0x081908082b190808, 0x081908082b191919, 0x081908082b192b08, 0x081908082b2b0819,
    0x081908082b2b1908, 0x0819081908080808, 0x081908190808082b, 0x0819081908081919,
    0x0819081908082b08, 0x0819081908082b2b, 0x0819081908190819, 0x0819081908191908,
    0x081908190819192b, 0x0819081908192b19, 0x08190819082b0808, 0x08190819082b082b,
    0x08190819082b1919, 0x08190819082b2b08, 0x0819081919080819, 0x0819081919081908,
    0x081908191908192b, 0x0819081919082b19, 0x0819081919190808, 0x081908191919082b,
    0x0819081919191919, 0x0819081919192b08, 0x08190819192b0819, 0x08190819192b1908,
    0x081908192b080808, 0x081908192b08082b, 0x081908192b081919, 0x081908192b082b08,
    0x081908192b190819, 0x081908192b191908, 0x0819082b08080819, 0x0819082b08081908,
    0x0819082b08082b19, 0x0819082b08190808, 0x0819082b08191919, 0x0819082b082b0819,
    0x0819082b082b1908, 0x0819082b19080808, 0x0819082b19081919, 0x0819082b19190819,
    0x0819082b19191908, 0x0819082b2b080819, 0x0819082b2b081908, 0x0819082b2b190808,
    0x0819190808080808, 0x081919080808082b, 0x0819190808081919, 0x0819190808082b08,
    0x0819190808190819, 0x0819190808191908, 0x081919080819192b, 0x0819190808192b19,
    0x08191908082b0808, 0x08191908082b1919, 0x08191908082b2b08, 0x0819190819080819,
    0x0819190819081908, 0x081919081908192b, 0x0819190819082b19, 0x0819190819190808,
    0x081919081919082b, 0x0819190819191919, 0x0819190819192b08, 0x08191908192b0819,
    0x08191908192b1908, 0x081919082b080808, 0x081919082b08082b, 0x081919082b081919,
    0x081919082b082b08, 0x081919082b190819, 0x081919082b191908, 0x081919082b2b0808,
    0x0819191908080819, 0x0819191908081908, 0x081919190808192b, 0x0819191908082b19,
    0x0819191908190808, 0x081919190819082b, 0x0819191908191919, 0x0819191908192b08,
    0x08191919082b0819, 0x08191919082b1908, 0x0819191919080808, 0x081919191908082b,
    0x0819191919081919, 0x0819191919082b08, 0x0819191919190819, 0x0819191919191908,
    0x08191919192b0808, 0x081919192b080819, 0x081919192b081908, 0x081919192b190808,
    0x0819192b08080808, 0x0819192b08081919, 0x0819192b08082b08, 0x0819192b08190819,
    0x0819192b08191908, 0x0819192b082b0808, 0x0819192b19080819, 0x0819192b19081908,
    0x0819192b19190808, 0x0819192b2b080808, 0x0819192b2b2b2b2b, 0x08192b0808080819,
    0x08192b0808081908, 0x08192b080808192b, 0x08192b0808082b19, 0x08192b0808190808,
    0x08192b0808191919, 0x08192b0808192b08, 0x08192b08082b0819, 0x08192b0819080808,
    0x08192b081908082b, 0x08192b0819081919, 0x08192b0819082b08, 0x08192b0819190819,
    0x08192b0819191908, 0x08192b08192b0808, 0x08192b082b080819, 0x08192b082b081908,
    0x08192b1908080808, 0x08192b190808082b, 0x08192b1908081919, 0x08192b1908082b08,
    0x08192b1908190819, 0x08192b1908191908, 0x08192b19082b0808, 0x08192b1919080819,
    0x08192b1919081908, 0x08192b1919190808, 0x08192b19192b2b19, 0x08192b192b2b082b,
    0x08192b2b08081908, 0x08192b2b08190808, 0x08192b2b19080808, 0x08192b2b1919192b,
    0x082b080808080808, 0x082b08080808082b, 0x082b080808081919, 0x082b080808082b08,
    0x082b080808190819, 0x082b080808191908, 0x082b08080819192b, 0x082b080808192b19,
    0x082b0808082b0808, 0x082b0808082b1919, 0x082b0808082b2b2b, 0x082b080819080819,
    0x082b080819081908, 0x082b080819190808, 0x082b08081919082b, 0x082b080819191919,
    0x082b0808192b1908, 0x082b08082b080808, 0x082b08082b082b2b, 0x082b08082b191908,
    0x082b08082b2b2b2b, 0x082b081908080819, 0x082b081908081908, 0x082b081908190808,
    0x082b08190819082b, 0x082b081908191919, 0x082b0819082b0819, 0x082b081919080808,
    0x082b08191908082b, 0x082b081919081919, 0x082b081919190819, 0x082b081919191908,
    0x082b0819192b0808, 0x082b08192b080819, 0x082b08192b081908, 0x082b08192b190808,
    0x082b082b08080808, 0x082b082b08082b2b, 0x082b082b082b082b, 0x082b082b082b2b08,
    0x082b082b082b2b2b, 0x082b082b19081908, 0x082b082b19190808, 0x082b082b2b082b08,
    0x082b082b2b082b2b, 0x082b082b2b2b2b08, 0x082b190808080819, 0x082b190808081908,
    0x082b19080808192b, 0x082b190808082b19, 0x082b190808190808, 0x082b190808191919,
    0x082b190808192b08, 0x082b1908082b0819, 0x082b1908082b1908, 0x082b190819080808,
    0x082b19081908082b, 0x082b190819081919, 0x082b190819082b08, 0x082b190819190819,
    0x082b190819191908, 0x082b1908192b0808, 0x082b19082b080819, 0x082b19082b081908,
    0x082b19082b190808, 0x082b191908080808, 0x082b191908081919, 0x082b191908082b08,
    0x082b191908190819, 0x082b191908191908, 0x082b1919082b0808, 0x082b191919080819,
    0x082b191919081908, 0x082b191919190808, 0x082b1919192b192b, 0x082b19192b080808,
    0x082b192b08080819, 0x082b192b08081908, 0x082b192b08190808, 0x082b192b19080808,
    0x082b192b19192b19, 0x082b2b0808080808, 0x082b2b0808081919, 0x082b2b0808190819,
    0x082b2b0808191908, 0x082b2b0819080819, 0x082b2b0819081908, 0x082b2b0819190808,
    0x082b2b082b082b2b, 0x082b2b082b2b2b2b, 0x082b2b1908080819, 0x082b2b1908081908,
    0x082b2b1908190808, 0x082b2b192b191919, 0x082b2b2b08082b2b, 0x082b2b2b082b082b,
    0x082b2b2b192b1908, 0x082b2b2b2b082b08, 0x082b2b2b2b082b2b, 0x1908080808080819,
    0x1908080808081908, 0x190808080808192b, 0x1908080808082b19, 0x1908080808190808,
    0x190808080819082b, 0x1908080808191919, 0x1908080808192b08, 0x1908080808192b2b,
    0x19080808082b0819, 0x19080808082b1908, 0x19080808082b192b, 0x1908080819080808,
    0x190808081908082b, 0x1908080819081919, 0x1908080819082b08, 0x1908080819082b2b,
    0x1908080819190819, 0x1908080819191908, 0x190808081919192b, 0x1908080819192b19,
    0x19080808192b0808, 0x19080808192b082b, 0x19080808192b1919, 0x190808082b080819,
    0x190808082b081908, 0x190808082b190808, 0x190808082b191919, 0x190808082b192b08,
    0x190808082b2b0819, 0x190808082b2b1908, 0x1908081908080808, 0x190808190808082b,
    0x1908081908081919, 0x1908081908082b08, 0x1908081908190819, 0x1908081908191908,
    0x190808190819192b, 0x1908081908192b19, 0x19080819082b0808, 0x19080819082b082b,
    0x19080819082b1919, 0x1908081919080819, 0x1908081919081908, 0x190808191908192b,
    0x1908081919082b19, 0x1908081919190808, 0x190808191919082b, 0x1908081919191919,
    0x1908081919192b08, 0x19080819192b0819, 0x19080819192b1908, 0x190808192b080808,
    0x190808192b08082b, 0x190808192b081919, 0x190808192b082b08, 0x190808192b190819,
    0x190808192b191908, 0x190808192b2b0808, 0x1908082b08080819, 0x1908082b08081908,
    0x1908082b08190808, 0x1908082b0819082b, 0x1908082b08191919, 0x1908082b08192b08,
    0x1908082b082b1908, 0x1908082b19080808, 0x1908082b19081919, 0x1908082b19082b08,
    0x1908082b19190819, 0x1908082b19191908, 0x1908082b192b0808, 0x1908082b2b080819,
    0x1908082b2b081908, 0x1908190808080808, 0x190819080808082b, 0x1908190808081919,
    0x1908190808082b08, 0x1908190808082b2b, 0x1908190808190819, 0x1908190808191908,
    0x190819080819192b, 0x1908190808192b19, 0x19081908082b0808, 0x19081908082b082b,
    0x19081908082b1919, 0x19081908082b2b08, 0x1908190819080819, 0x1908190819081908,
    0x190819081908192b, 0x1908190819082b19, 0x1908190819190808, 0x190819081919082b,
    0x1908190819191919, 0x1908190819192b08, 0x19081908192b0819, 0x19081908192b1908,
    0x190819082b080808, 0x190819082b08082b, 0x190819082b081919, 0x190819082b082b08,
    0x190819082b190819, 0x190819082b191908, 0x190819082b2b0808, 0x1908191908080819,
    0x1908191908081908, 0x190819190808192b, 0x1908191908082b19, 0x1908191908190808,
    0x190819190819082b, 0x1908191908191919, 0x1908191908192b08, 0x19081919082b0819,
    0x19081919082b1908, 0x1908191919080808, 0x190819191908082b, 0x1908191919081919,
    0x1908191919082b08, 0x1908191919190819, 0x1908191919191908, 0x19081919192b0808,
    0x19081919192b2b2b, 0x190819192b080819, 0x190819192b081908, 0x190819192b190808,
    0x1908192b08080808, 0x1908192b0808082b, 0x1908192b08081919, 0x1908192b08082b08,
    0x1908192b08190819, 0x1908192b08191908, 0x1908192b082b0808, 0x1908192b19080819,
    0x1908192b19081908, 0x1908192b19190808, 0x1908192b2b080808, 0x1908192b2b2b1919,
    0x19082b0808080819, 0x19082b0808081908, 0x19082b0808082b19, 0x19082b0808190808,
    0x19082b080819082b, 0x19082b0808191919, 0x19082b0808192b08, 0x19082b08082b0819,
    0x19082b08082b1908, 0x19082b0819080808, 0x19082b081908082b, 0x19082b0819081919,
    0x19082b0819082b08, 0x19082b0819190819, 0x19082b0819191908, 0x19082b08192b0808,
    0x19082b082b081908, 0x19082b082b190808, 0x19082b1908080808, 0x19082b190808082b,
    0x19082b1908081919, 0x19082b1908082b08, 0x19082b1908190819, 0x19082b1908191908,
    0x19082b19082b0808, 0x19082b1919080819, 0x19082b1919081908, 0x19082b1919190808,
    0x19082b192b080808, 0x19082b192b19192b, 0x19082b2b08080819, 0x19082b2b08081908,
    0x19082b2b08190808, 0x19082b2b19080808, 0x1919080808080808, 0x191908080808082b,
    0x1919080808081919, 0x1919080808082b08, 0x1919080808190819, 0x1919080808191908,
    0x191908080819192b, 0x1919080808192b19, 0x19190808082b0808, 0x19190808082b082b,
    0x19190808082b1919, 0x19190808082b2b08, 0x1919080819080819, 0x1919080819081908,
    0x191908081908192b, 0x1919080819082b19, 0x1919080819190808, 0x191908081919082b,
    0x1919080819191919, 0x1919080819192b08, 0x19190808192b0819, 0x19190808192b1908,
    0x191908082b080808, 0x191908082b08082b, 0x191908082b081919, 0x191908082b082b08,
    0x191908082b190819, 0x191908082b191908, 0x1919081908080819, 0x1919081908081908,
    0x191908190808192b, 0x1919081908082b19, 0x1919081908190808, 0x191908190819082b,
    0x1919081908191919, 0x1919081908192b08, 0x19190819082b0819, 0x19190819082b1908,
    0x1919081919080808, 0x191908191908082b, 0x1919081919081919, 0x1919081919082b08,
    0x1919081919190819, 0x1919081919191908, 0x19190819192b0808, 0x191908192b080819,
    0x191908192b081908, 0x191908192b190808, 0x1919082b08080808, 0x1919082b08081919,
    0x1919082b08082b08, 0x1919082b08190819, 0x1919082b08191908, 0x1919082b082b0808,
    0x1919082b19080819, 0x1919082b19081908, 0x1919082b19190808, 0x1919082b192b2b19,
    0x1919082b2b080808, 0x1919190808080819, 0x1919190808081908, 0x191919080808192b,
    0x1919190808082b19, 0x1919190808190808, 0x191919080819082b, 0x1919190808191919,
    0x1919190808192b08, 0x19191908082b0819, 0x19191908082b1908, 0x1919190819080808,
    0x191919081908082b, 0x1919190819081919, 0x1919190819082b08, 0x1919190819190819,
    0x1919190819191908, 0x19191908192b0808, 0x191919082b080819, 0x191919082b081908,
    0x191919082b190808, 0x1919191908080808, 0x191919190808082b, 0x1919191908081919,
    0x1919191908082b08, 0x1919191908190819, 0x1919191908191908, 0x19191919082b0808,
    0x1919191919080819, 0x1919191919081908, 0x1919191919190808, 0x191919192b080808,
    0x1919192b08080819, 0x1919192b08081908, 0x1919192b08190808, 0x1919192b082b192b,
    0x1919192b19080808, 0x19192b0808080808, 0x19192b080808082b, 0x19192b0808081919,
    0x19192b0808082b08, 0x19192b0808190819, 0x19192b0808191908, 0x19192b08082b0808,
    0x19192b0819080819, 0x19192b0819081908, 0x19192b0819190808, 0x19192b0819192b2b,
    0x19192b082b080808, 0x19192b1908080819, 0x19192b1908081908, 0x19192b1908190808,
    0x19192b1919080808, 0x19192b2b08080808, 0x19192b2b08192b19, 0x19192b2b2b081919,
    0x19192b2b2b2b2b08, 0x192b080808080819, 0x192b080808081908, 0x192b08080808192b,
    0x192b080808190808, 0x192b08080819082b, 0x192b080808191919, 0x192b080808192b08,
    0x192b0808082b0819, 0x192b0808082b1908, 0x192b080819080808, 0x192b080819081919,
    0x192b080819082b08, 0x192b080819190819, 0x192b080819191908, 0x192b0808192b0808,
    0x192b08082b081908, 0x192b08082b190808, 0x192b081908080808, 0x192b08190808082b,
    0x192b081908081919, 0x192b081908082b08, 0x192b081908190819, 0x192b081908191908,
    0x192b0819082b0808, 0x192b081919080819, 0x192b081919081908, 0x192b081919190808,
    0x192b08192b080808, 0x192b08192b192b19, 0x192b082b08081908, 0x192b082b08190808,
    0x192b082b19080808, 0x192b082b1919192b, 0x192b082b2b2b0819, 0x192b190808080808,
    0x192b190808081919, 0x192b190808082b08, 0x192b190808190819, 0x192b190808191908,
    0x192b1908082b0808, 0x192b190819080819, 0x192b190819081908, 0x192b190819190808,
    0x192b19082b080808, 0x192b191908080819, 0x192b191908081908, 0x192b191908190808,
    0x192b191919080808, 0x192b191919082b2b, 0x192b1919192b2b08, 0x192b19192b19082b,
    0x192b192b08080808, 0x192b192b2b191908, 0x192b2b0808080819, 0x192b2b0808081908,
    0x192b2b0808190808, 0x192b2b08192b1919, 0x192b2b082b192b08, 0x192b2b1908080808,
    0x192b2b19082b2b2b, 0x192b2b2b1908082b, 0x192b2b2b2b2b0819, 0x2b08080808080808,
    0x2b0808080808082b, 0x2b08080808081919, 0x2b08080808082b08, 0x2b08080808190819,
    0x2b08080808191908, 0x2b08080808192b19, 0x2b080808082b0808, 0x2b080808082b1919,
    0x2b08080819080819, 0x2b08080819081908, 0x2b08080819190808, 0x2b0808081919082b,
    0x2b08080819191919, 0x2b08080819192b08, 0x2b080808192b0819, 0x2b0808082b080808,
    0x2b0808082b081919, 0x2b0808082b190819, 0x2b0808082b191908, 0x2b08081908080819,
    0x2b08081908081908, 0x2b08081908082b19, 0x2b08081908190808, 0x2b0808190819082b,
    0x2b08081908191919, 0x2b08081908192b08, 0x2b080819082b0819, 0x2b080819082b1908,
    0x2b08081919080808, 0x2b0808191908082b, 0x2b08081919081919, 0x2b08081919082b08,
    0x2b08081919190819, 0x2b08081919191908, 0x2b0808192b080819, 0x2b0808192b081908,
    0x2b0808192b190808, 0x2b0808192b2b2b19, 0x2b08082b08080808, 0x2b08082b08081919,
    0x2b08082b08082b2b, 0x2b08082b08190819, 0x2b08082b08191908, 0x2b08082b19080819,
    0x2b08082b19081908, 0x2b08082b19190808, 0x2b08190808080819, 0x2b08190808081908,
    0x2b0819080808192b, 0x2b08190808082b19, 0x2b08190808190808, 0x2b0819080819082b,
    0x2b08190808191919, 0x2b08190808192b08, 0x2b081908082b0819, 0x2b08190819080808,
    0x2b0819081908082b, 0x2b08190819081919, 0x2b08190819082b08, 0x2b08190819190819,
    0x2b08190819191908, 0x2b081908192b0808, 0x2b0819082b080819, 0x2b0819082b081908,
    0x2b0819082b190808, 0x2b08191908080808, 0x2b0819190808082b, 0x2b08191908081919,
    0x2b08191908082b08, 0x2b08191908190819, 0x2b08191908191908, 0x2b081919082b0808,
    0x2b08191919080819, 0x2b08191919081908, 0x2b08191919190808, 0x2b0819192b080808,
    0x2b0819192b082b2b, 0x2b08192b08080819, 0x2b08192b08081908, 0x2b08192b08190808,
    0x2b08192b082b2b19, 0x2b08192b19080808, 0x2b082b0808080808, 0x2b082b0808081919,
    0x2b082b0808190819, 0x2b082b0808191908, 0x2b082b0819080819, 0x2b082b0819081908,
    0x2b082b0819190808, 0x2b082b082b2b082b, 0x2b082b1908080819, 0x2b082b1908081908,
    0x2b082b1919080808, 0x2b082b19192b1919, 0x2b082b2b082b082b, 0x2b082b2b19192b08,
    0x2b082b2b19192b2b, 0x2b082b2b2b08082b, 0x2b082b2b2b2b082b, 0x2b19080808080819,
    0x2b19080808081908, 0x2b19080808082b19, 0x2b19080808190808, 0x2b1908080819082b,
    0x2b19080808191919, 0x2b19080808192b08, 0x2b190808082b1908, 0x2b19080819080808,
    0x2b1908081908082b, 0x2b19080819081919, 0x2b19080819082b08, 0x2b19080819190819,
    0x2b19080819191908, 0x2b190808192b0808, 0x2b1908082b080819, 0x2b1908082b081908,
    0x2b1908082b190808, 0x2b19081908080808, 0x2b19081908081919, 0x2b19081908190819,
    0x2b19081908191908, 0x2b19081919080819, 0x2b19081919081908, 0x2b19081919190808,
    0x2b19081919192b2b, 0x2b19082b08080819, 0x2b19082b08081908, 0x2b19082b08190808,
    0x2b19082b19080808, 0x2b19082b2b2b192b, 0x2b19190808080808, 0x2b1919080808082b,
    0x2b19190808081919, 0x2b19190808082b08, 0x2b19190808190819, 0x2b19190808191908,
    0x2b191908082b0808, 0x2b19190819080819, 0x2b19190819081908, 0x2b19190819190808,
    0x2b1919082b080808, 0x2b1919082b19192b, 0x2b19191908080819, 0x2b19191908081908,
    0x2b19191908190808, 0x2b19191919080808, 0x2b1919192b192b08, 0x2b1919192b2b0819,
    0x2b19192b08080808, 0x2b19192b1908192b, 0x2b19192b192b1908, 0x2b192b0808080819,
    0x2b192b0808081908, 0x2b192b0808190808, 0x2b192b08082b192b, 0x2b192b0819080808,
    0x2b192b082b2b2b19, 0x2b192b1908080808, 0x2b192b1919082b19, 0x2b192b191919082b,
    0x2b192b2b2b190808, 0x2b2b080808080808, 0x2b2b080808081919, 0x2b2b080808082b2b,
    0x2b2b080808191908, 0x2b2b0808082b082b, 0x2b2b0808082b2b2b, 0x2b2b080819080819,
    0x2b2b080819081908, 0x2b2b080819190808, 0x2b2b08082b2b082b, 0x2b2b08082b2b2b2b,
    0x2b2b081919080808, 0x2b2b0819192b1919, 0x2b2b082b0808082b, 0x2b2b082b08082b2b,
    0x2b2b082b082b082b, 0x2b2b082b082b2b08, 0x2b2b082b082b2b2b, 0x2b2b082b2b08082b,
    0x2b2b082b2b082b08, 0x2b2b082b2b082b2b, 0x2b2b082b2b2b2b08, 0x2b2b190808080819,
    0x2b2b190808081908, 0x2b2b190808190808, 0x2b2b190819080808, 0x2b2b19082b082b19,
    0x2b2b19082b2b1908, 0x2b2b191908080808, 0x2b2b191908192b19, 0x2b2b192b19190819,
    0x2b2b2b0808082b2b, 0x2b2b2b08082b2b08, 0x2b2b2b082b2b082b, 0x2b2b2b1919191908,
    0x2b2b2b192b08192b, 0x2b2b2b2b08082b08, 0x2b2b2b2b08082b2b, 0x2b2b2b2b082b0808,
    0x2b2b2b2b082b082b, 0x2b2b2b2b082b2b08, 0x2b2b2b2b2b082b08, 0x2b2b2b2b2b2b2b2b,
};

static const uint32_t infer__iq3xxs_grid[256] = {
    0x04040404, 0x04040414, 0x04040424, 0x04040c0c, 0x04040c1c, 0x04040c3e, 0x04041404, 0x04041414,
    0x04041c0c, 0x04042414, 0x04043e1c, 0x04043e2c, 0x040c040c, 0x040c041c, 0x040c0c04, 0x040c0c14,
    0x040c140c, 0x040c142c, 0x040c1c04, 0x040c1c14, 0x040c240c, 0x040c2c24, 0x040c3e04, 0x04140404,
    0x04140414, 0x04140424, 0x04140c0c, 0x04141404, 0x04141414, 0x04141c0c, 0x04141c1c, 0x04141c3e,
    0x04142c0c, 0x04142c3e, 0x04143e2c, 0x041c040c, 0x041c043e, 0x041c0c04, 0x041c0c14, 0x041c142c,
    0x041c3e04, 0x04240c1c, 0x04241c3e, 0x04242424, 0x04242c3e, 0x04243e1c, 0x04243e2c, 0x042c040c,
    0x042c043e, 0x042c1c14, 0x042c2c14, 0x04341c2c, 0x04343424, 0x043e0c04, 0x043e0c24, 0x043e0c34,
    0x043e241c, 0x043e340c, 0x0c04040c, 0x0c04041c, 0x0c040c04, 0x0c040c14, 0x0c04140c, 0x0c04141c,
    0x0c041c04, 0x0c041c14, 0x0c041c24, 0x0c04243e, 0x0c042c04, 0x0c0c0404, 0x0c0c0414, 0x0c0c0c0c,
    0x0c0c1404, 0x0c0c1414, 0x0c14040c, 0x0c14041c, 0x0c140c04, 0x0c140c14, 0x0c14140c, 0x0c141c04,
    0x0c143e14, 0x0c1c0404, 0x0c1c0414, 0x0c1c1404, 0x0c1c1c0c, 0x0c1c2434, 0x0c1c3434, 0x0c24040c,
    0x0c24042c, 0x0c242c04, 0x0c2c1404, 0x0c2c1424, 0x0c2c2434, 0x0c2c3e0c, 0x0c34042c, 0x0c3e1414,
    0x0c3e2404, 0x14040404, 0x14040414, 0x14040c0c, 0x14040c1c, 0x14041404, 0x14041414, 0x14041434,
    0x14041c0c, 0x14042414, 0x140c040c, 0x140c041c, 0x140c042c, 0x140c0c04, 0x140c0c14, 0x140c140c,
    0x140c1c04, 0x140c341c, 0x140c343e, 0x140c3e04, 0x14140404, 0x14140414, 0x14140c0c, 0x14140c3e,
    0x14141404, 0x14141414, 0x14141c3e, 0x14142404, 0x14142c2c, 0x141c040c, 0x141c0c04, 0x141c0c24,
    0x141c3e04, 0x141c3e24, 0x14241c2c, 0x14242c1c, 0x142c041c, 0x142c143e, 0x142c240c, 0x142c3e24,
    0x143e040c, 0x143e041c, 0x143e0c34, 0x143e242c, 0x1c04040c, 0x1c040c04, 0x1c040c14, 0x1c04140c,
    0x1c04141c, 0x1c042c04, 0x1c04342c, 0x1c043e14, 0x1c0c0404, 0x1c0c0414, 0x1c0c1404, 0x1c0c1c0c,
    0x1c0c2424, 0x1c0c2434, 0x1c14040c, 0x1c14041c, 0x1c140c04, 0x1c14142c, 0x1c142c14, 0x1c143e14,
    0x1c1c0c0c, 0x1c1c1c1c, 0x1c241c04, 0x1c24243e, 0x1c243e14, 0x1c2c0404, 0x1c2c0434, 0x1c2c1414,
    0x1c2c2c2c, 0x1c340c24, 0x1c341c34, 0x1c34341c, 0x1c3e1c1c, 0x1c3e3404, 0x24040424, 0x24040c3e,
    0x24041c2c, 0x24041c3e, 0x24042c1c, 0x24042c3e, 0x240c3e24, 0x24141404, 0x24141c3e, 0x24142404,
    0x24143404, 0x24143434, 0x241c043e, 0x241c242c, 0x24240424, 0x24242c0c, 0x24243424, 0x242c142c,
    0x242c241c, 0x242c3e04, 0x243e042c, 0x243e0c04, 0x243e0c14, 0x243e1c04, 0x2c040c14, 0x2c04240c,
    0x2c043e04, 0x2c0c0404, 0x2c0c0434, 0x2c0c1434, 0x2c0c2c2c, 0x2c140c24, 0x2c141c14, 0x2c143e14,
    0x2c1c0414, 0x2c1c2c1c, 0x2c240c04, 0x2c24141c, 0x2c24143e, 0x2c243e14, 0x2c2c0414, 0x2c2c1c0c,
    0x2c342c04, 0x2c3e1424, 0x2c3e2414, 0x34041424, 0x34042424, 0x34042434, 0x34043424, 0x340c140c,
    0x340c340c, 0x34140c3e, 0x34143424, 0x341c1c04, 0x341c1c34, 0x34242424, 0x342c042c, 0x342c2c14,
    0x34341c1c, 0x343e041c, 0x343e140c, 0x3e04041c, 0x3e04042c, 0x3e04043e, 0x3e040c04, 0x3e041c14,
    0x3e042c14, 0x3e0c1434, 0x3e0c2404, 0x3e140c14, 0x3e14242c, 0x3e142c14, 0x3e1c0404, 0x3e1c0c2c,
    0x3e1c1c1c, 0x3e1c3404, 0x3e24140c, 0x3e24240c, 0x3e2c0404, 0x3e2c0414, 0x3e2c1424, 0x3e341c04,
};

static const uint32_t infer__iq3s_grid[512] = {
    0x01010101, 0x01010103, 0x01010105, 0x0101010b, 0x0101010f, 0x01010301, 0x01010303, 0x01010305,
    0x01010309, 0x0101030d, 0x01010501, 0x01010503, 0x0101050b, 0x01010707, 0x01010901, 0x01010905,
    0x0101090b, 0x0101090f, 0x01010b03, 0x01010b07, 0x01010d01, 0x01010d05, 0x01010f03, 0x01010f09,
    0x01010f0f, 0x01030101, 0x01030103, 0x01030105, 0x01030109, 0x01030301, 0x01030303, 0x0103030b,
    0x01030501, 0x01030507, 0x0103050f, 0x01030703, 0x0103070b, 0x01030909, 0x01030d03, 0x01030d0b,
    0x01030f05, 0x01050101, 0x01050103, 0x0105010b, 0x0105010f, 0x01050301, 0x01050307, 0x0105030d,
    0x01050503, 0x0105050b, 0x01050701, 0x01050709, 0x01050905, 0x0105090b, 0x0105090f, 0x01050b03,
    0x01050b07, 0x01050f01, 0x01050f07, 0x01070107, 0x01070303, 0x0107030b, 0x01070501, 0x01070505,
    0x01070703, 0x01070707, 0x0107070d, 0x01070909, 0x01070b01, 0x01070b05, 0x01070d0f, 0x01070f03,
    0x01070f0b, 0x01090101, 0x01090307, 0x0109030f, 0x01090503, 0x01090509, 0x01090705, 0x01090901,
    0x01090907, 0x01090b03, 0x01090f01, 0x010b0105, 0x010b0109, 0x010b0501, 0x010b0505, 0x010b050d,
    0x010b0707, 0x010b0903, 0x010b090b, 0x010b090f, 0x010b0d0d, 0x010b0f07, 0x010d010d, 0x010d0303,
    0x010d0307, 0x010d0703, 0x010d0b05, 0x010d0f03, 0x010f0101, 0x010f0105, 0x010f0109, 0x010f0501,
    0x010f0505, 0x010f050d, 0x010f0707, 0x010f0b01, 0x010f0b09, 0x03010101, 0x03010103, 0x03010105,
    0x03010109, 0x03010301, 0x03010303, 0x03010307, 0x0301030b, 0x0301030f, 0x03010501, 0x03010505,
    0x03010703, 0x03010709, 0x0301070d, 0x03010b09, 0x03010b0d, 0x03010d03, 0x03010f05, 0x03030101,
    0x03030103, 0x03030107, 0x0303010d, 0x03030301, 0x03030309, 0x03030503, 0x03030701, 0x03030707,
    0x03030903, 0x03030b01, 0x03030b05, 0x03030f01, 0x03030f0d, 0x03050101, 0x03050305, 0x0305030b,
    0x0305030f, 0x03050501, 0x03050509, 0x03050705, 0x03050901, 0x03050907, 0x03050b0b, 0x03050d01,
    0x03050f05, 0x03070103, 0x03070109, 0x0307010f, 0x03070301, 0x03070307, 0x03070503, 0x0307050f,
    0x03070701, 0x03070709, 0x03070903, 0x03070d05, 0x03070f01, 0x03090107, 0x0309010b, 0x03090305,
    0x03090309, 0x03090703, 0x03090707, 0x03090905, 0x0309090d, 0x03090b01, 0x03090b09, 0x030b0103,
    0x030b0301, 0x030b0307, 0x030b0503, 0x030b0701, 0x030b0705, 0x030b0b03, 0x030d0501, 0x030d0509,
    0x030d050f, 0x030d0909, 0x030d090d, 0x030f0103, 0x030f0107, 0x030f0301, 0x030f0305, 0x030f0503,
    0x030f070b, 0x030f0903, 0x030f0d05, 0x030f0f01, 0x05010101, 0x05010103, 0x05010107, 0x0501010b,
    0x0501010f, 0x05010301, 0x05010305, 0x05010309, 0x0501030d, 0x05010503, 0x05010507, 0x0501050f,
    0x05010701, 0x05010705, 0x05010903, 0x05010907, 0x0501090b, 0x05010b01, 0x05010b05, 0x05010d0f,
    0x05010f01, 0x05010f07, 0x05010f0b, 0x05030101, 0x05030105, 0x05030301, 0x05030307, 0x0503030f,
    0x05030505, 0x0503050b, 0x05030703, 0x05030709, 0x05030905, 0x05030b03, 0x05050103, 0x05050109,
    0x0505010f, 0x05050503, 0x05050507, 0x05050701, 0x0505070f, 0x05050903, 0x05050b07, 0x05050b0f,
    0x05050f03, 0x05050f09, 0x05070101, 0x05070105, 0x0507010b, 0x05070303, 0x05070505, 0x05070509,
    0x05070703, 0x05070707, 0x05070905, 0x05070b01, 0x05070d0d, 0x05090103, 0x0509010f, 0x05090501,
    0x05090507, 0x05090705, 0x0509070b, 0x05090903, 0x05090f05, 0x05090f0b, 0x050b0109, 0x050b0303,
    0x050b0505, 0x050b070f, 0x050b0901, 0x050b0b07, 0x050b0f01, 0x050d0101, 0x050d0105, 0x050d010f,
    0x050d0503, 0x050d0b0b, 0x050d0d03, 0x050f010b, 0x050f0303, 0x050f050d, 0x050f0701, 0x050f0907,
    0x050f0b01, 0x07010105, 0x07010303, 0x07010307, 0x0701030b, 0x0701030f, 0x07010505, 0x07010703,
    0x07010707, 0x0701070b, 0x07010905, 0x07010909, 0x0701090f, 0x07010b03, 0x07010d07, 0x07010f03,
    0x07030103, 0x07030107, 0x0703010b, 0x07030309, 0x07030503, 0x07030507, 0x07030901, 0x07030d01,
    0x07030f05, 0x07030f0d, 0x07050101, 0x07050305, 0x07050501, 0x07050705, 0x07050709, 0x07050b01,
    0x07070103, 0x07070301, 0x07070309, 0x07070503, 0x07070507, 0x0707050f, 0x07070701, 0x07070903,
    0x07070907, 0x0707090f, 0x07070b0b, 0x07070f07, 0x07090107, 0x07090303, 0x0709030d, 0x07090505,
    0x07090703, 0x07090b05, 0x07090d01, 0x07090d09, 0x070b0103, 0x070b0301, 0x070b0305, 0x070b050b,
    0x070b0705, 0x070b0909, 0x070b0b0d, 0x070b0f07, 0x070d030d, 0x070d0903, 0x070f0103, 0x070f0107,
    0x070f0501, 0x070f0505, 0x070f070b, 0x09010101, 0x09010109, 0x09010305, 0x09010501, 0x09010509,
    0x0901050f, 0x09010705, 0x09010903, 0x09010b01, 0x09010f01, 0x09030105, 0x0903010f, 0x09030303,
    0x09030307, 0x09030505, 0x09030701, 0x0903070b, 0x09030907, 0x09030b03, 0x09030b0b, 0x09050103,
    0x09050107, 0x09050301, 0x0905030b, 0x09050503, 0x09050707, 0x09050901, 0x09050b0f, 0x09050d05,
    0x09050f01, 0x09070109, 0x09070303, 0x09070307, 0x09070501, 0x09070505, 0x09070703, 0x0907070b,
    0x09090101, 0x09090105, 0x09090509, 0x0909070f, 0x09090901, 0x09090f03, 0x090b010b, 0x090b010f,
    0x090b0503, 0x090b0d05, 0x090d0307, 0x090d0709, 0x090d0d01, 0x090f0301, 0x090f030b, 0x090f0701,
    0x090f0907, 0x090f0b03, 0x0b010105, 0x0b010301, 0x0b010309, 0x0b010505, 0x0b010901, 0x0b010909,
    0x0b01090f, 0x0b010b05, 0x0b010d0d, 0x0b010f09, 0x0b030103, 0x0b030107, 0x0b03010b, 0x0b030305,
    0x0b030503, 0x0b030705, 0x0b030f05, 0x0b050101, 0x0b050303, 0x0b050507, 0x0b050701, 0x0b05070d,
    0x0b050b07, 0x0b070105, 0x0b07010f, 0x0b070301, 0x0b07050f, 0x0b070909, 0x0b070b03, 0x0b070d0b,
    0x0b070f07, 0x0b090103, 0x0b090109, 0x0b090501, 0x0b090705, 0x0b09090d, 0x0b0b0305, 0x0b0b050d,
    0x0b0b0b03, 0x0b0b0b07, 0x0b0d0905, 0x0b0f0105, 0x0b0f0109, 0x0b0f0505, 0x0d010303, 0x0d010307,
    0x0d01030b, 0x0d010703, 0x0d010707, 0x0d010d01, 0x0d030101, 0x0d030501, 0x0d03050f, 0x0d030d09,
    0x0d050305, 0x0d050709, 0x0d050905, 0x0d050b0b, 0x0d050d05, 0x0d050f01, 0x0d070101, 0x0d070309,
    0x0d070503, 0x0d070901, 0x0d09050b, 0x0d090907, 0x0d090d05, 0x0d0b0101, 0x0d0b0107, 0x0d0b0709,
    0x0d0b0d01, 0x0d0d010b, 0x0d0d0901, 0x0d0f0303, 0x0d0f0307, 0x0f010101, 0x0f010109, 0x0f01010f,
    0x0f010501, 0x0f010505, 0x0f01070d, 0x0f010901, 0x0f010b09, 0x0f010d05, 0x0f030105, 0x0f030303,
    0x0f030509, 0x0f030907, 0x0f03090b, 0x0f050103, 0x0f050109, 0x0f050301, 0x0f05030d, 0x0f050503,
    0x0f050701, 0x0f050b03, 0x0f070105, 0x0f070705, 0x0f07070b, 0x0f070b07, 0x0f090103, 0x0f09010b,
    0x0f090307, 0x0f090501, 0x0f090b01, 0x0f0b0505, 0x0f0b0905, 0x0f0d0105, 0x0f0d0703, 0x0f0f0101,
};

static const uint64_t infer__iq1s_grid[2048] = {
    0xffffffffffffffff, 0xffffffffffffff01, 0xffffffffffff0000, 0xffffffffffff01ff,
    0xffffffffffff0101, 0xffffffffff00ff00, 0xffffffffff000000, 0xffffffffff01ffff,
    0xffffffffff01ff01, 0xffffffffff0101ff, 0xffffffffff010101, 0xffffffff00ff0000,
    0xffffffff0000ff00, 0xffffffff000000ff, 0xffffffff00000001, 0xffffffff00010000,
    0xffffffff01ffffff, 0xffffffff01ffff01, 0xffffffff01ff01ff, 0xffffffff01ff0101,
    0xffffffff01000000, 0xffffffff0101ffff, 0xffffffff0101ff01, 0xffffffff010101ff,
    0xffffffff01010101, 0xffffff00ffff00ff, 0xffffff00ffff0000, 0xffffff00ff00ff00,
    0xffffff00ff0000ff, 0xffffff00ff000001, 0xffffff00ff000100, 0xffffff00ff000101,
    0xffffff00ff010000, 0xffffff0000ffff00, 0xffffff0000ff0001, 0xffffff0000ff0100,
    0xffffff000000ff01, 0xffffff0000000000, 0xffffff0000000101, 0xffffff000001ff00,
    0xffffff00000100ff, 0xffffff0000010001, 0xffffff00000101ff, 0xffffff0001ff0000,
    0xffffff000100ff00, 0xffffff00010000ff, 0xffffff0001000001, 0xffffff0001010000,
    0xffffff01ffffffff, 0xffffff01ffffff01, 0xffffff01ffff01ff, 0xffffff01ffff0101,
    0xffffff01ff000000, 0xffffff01ff01ffff, 0xffffff01ff01ff01, 0xffffff01ff0101ff,
    0xffffff01ff010101, 0xffffff0100ff0000, 0xffffff010000ff00, 0xffffff0100000100,
    0xffffff01000100ff, 0xffffff0100010100, 0xffffff0101ffffff, 0xffffff0101ffff01,
    0xffffff0101ff01ff, 0xffffff0101ff0101, 0xffffff010100ff00, 0xffffff0101000000,
    0xffffff0101000100, 0xffffff010101ffff, 0xffffff010101ff01, 0xffffff01010101ff,
    0xffffff0101010101, 0xffff00ffff00ff00, 0xffff00ffff0000ff, 0xffff00ffff000001,
    0xffff00ffff010000, 0xffff00ff00ffff00, 0xffff00ff00ff0100, 0xffff00ff00000000,
    0xffff00ff00000101, 0xffff00ff000100ff, 0xffff00ff00010000, 0xffff00ff0100ff00,
    0xffff00ff01000100, 0xffff00ff01010000, 0xffff0000ffffff00, 0xffff0000ffff00ff,
    0xffff0000ffff0000, 0xffff0000ffff0001, 0xffff0000ff000000, 0xffff0000ff0001ff,
    0xffff0000ff000101, 0xffff0000ff010100, 0xffff000000ffffff, 0xffff000000ff0000,
    0xffff000000ff0101, 0xffff00000000ffff, 0xffff00000000ff00, 0xffff0000000000ff,
    0xffff000000000000, 0xffff000000000001, 0xffff000000000100, 0xffff00000001ffff,
    0xffff00000001ff01, 0xffff000000010000, 0xffff0000000101ff, 0xffff000000010101,
    0xffff000001ffff00, 0xffff00000100ff00, 0xffff000001000000, 0xffff0000010001ff,
    0xffff000001000101, 0xffff00000101ff00, 0xffff0000010100ff, 0xffff000001010000,
    0xffff000001010001, 0xffff000001010100, 0xffff0001ff0000ff, 0xffff0001ff000100,
    0xffff000100ffff00, 0xffff000100ff00ff, 0xffff00010000ffff, 0xffff00010000ff01,
    0xffff000100000000, 0xffff0001000001ff, 0xffff00010001ffff, 0xffff00010001ff00,
    0xffff000100010001, 0xffff000100010100, 0xffff000101ff0000, 0xffff00010100ff00,
    0xffff0001010000ff, 0xffff000101000100, 0xffff01ffffffffff, 0xffff01ffffffff01,
    0xffff01ffffff01ff, 0xffff01ffffff0101, 0xffff01ffff000000, 0xffff01ffff01ffff,
    0xffff01ffff01ff01, 0xffff01ffff0101ff, 0xffff01ffff010101, 0xffff01ff00ff0000,
    0xffff01ff0000ff00, 0xffff01ff00000001, 0xffff01ff00010000, 0xffff01ff01ffffff,
    0xffff01ff01ffff01, 0xffff01ff01ff01ff, 0xffff01ff01ff0101, 0xffff01ff01000000,
    0xffff01ff0101ffff, 0xffff01ff0101ff01, 0xffff01ff010101ff, 0xffff01ff01010101,
    0xffff0100ffff0000, 0xffff0100ff00ff00, 0xffff0100ff0000ff, 0xffff0100ff000100,
    0xffff0100ff0100ff, 0xffff0100ff010000, 0xffff010000ffff00, 0xffff01000000ffff,
    0xffff01000000ff00, 0xffff010000000000, 0xffff01000001ff00, 0xffff0100000100ff,
    0xffff010000010100, 0xffff01000100ff00, 0xffff0100010000ff, 0xffff010001000001,
    0xffff010001000100, 0xffff010001010000, 0xffff0101ffffffff, 0xffff0101ffffff01,
    0xffff0101ffff01ff, 0xffff0101ffff0101, 0xffff0101ff000000, 0xffff0101ff01ffff,
    0xffff0101ff01ff01, 0xffff0101ff0101ff, 0xffff0101ff010101, 0xffff010100ff0000,
    0xffff01010000ff00, 0xffff010100000100, 0xffff01010001ff00, 0xffff010100010000,
    0xffff010101ffffff, 0xffff010101ffff01, 0xffff010101ff0000, 0xffff010101ff01ff,
    0xffff010101ff0101, 0xffff010101000000, 0xffff01010101ffff, 0xffff01010101ff01,
    0xffff0101010101ff, 0xffff010101010101, 0xff00ffffff00ffff, 0xff00ffffff00ff00,
    0xff00ffffff0000ff, 0xff00ffffff000100, 0xff00ffffff0100ff, 0xff00ffffff010000,
    0xff00ffff00ffff00, 0xff00ffff00ff00ff, 0xff00ffff0000ffff, 0xff00ffff00000000,
    0xff00ffff000001ff, 0xff00ffff0001ff00, 0xff00ffff000100ff, 0xff00ffff00010000,
    0xff00ffff00010100, 0xff00ffff0100ff00, 0xff00ffff010000ff, 0xff00ffff01000001,
    0xff00ffff0101ff00, 0xff00ffff01010000, 0xff00ff00ffffff00, 0xff00ff00ffff00ff,
    0xff00ff00ffff0001, 0xff00ff00ffff0100, 0xff00ff00ff00ffff, 0xff00ff00ff00ff01,
    0xff00ff00ff000000, 0xff00ff00ff0001ff, 0xff00ff00ff01ff00, 0xff00ff00ff0100ff,
    0xff00ff00ff010100, 0xff00ff0000ff0000, 0xff00ff0000ff0101, 0xff00ff000000ffff,
    0xff00ff000000ff00, 0xff00ff000000ff01, 0xff00ff00000000ff, 0xff00ff0000000000,
    0xff00ff0000000001, 0xff00ff0000000100, 0xff00ff000001ffff, 0xff00ff0000010000,
    0xff00ff0001ff00ff, 0xff00ff000100ff01, 0xff00ff0001000000, 0xff00ff000101ff00,
    0xff00ff00010100ff, 0xff00ff01ff00ff00, 0xff00ff01ff0000ff, 0xff00ff01ff000001,
    0xff00ff01ff010000, 0xff00ff0100ffffff, 0xff00ff0100ff0001, 0xff00ff0100ff0100,
    0xff00ff010000ff01, 0xff00ff0100000000, 0xff00ff01000001ff, 0xff00ff0100000101,
    0xff00ff01000100ff, 0xff00ff0100010001, 0xff00ff0101ff0000, 0xff00ff010100ff00,
    0xff00ff01010000ff, 0xff00ff0101000001, 0xff00ff0101010000, 0xff0000ffffffff00,
    0xff0000ffffff0001, 0xff0000ffffff0100, 0xff0000ffff0000ff, 0xff0000ffff000000,
    0xff0000ffff0001ff, 0xff0000ffff000100, 0xff0000ffff01ff00, 0xff0000ffff010001,
    0xff0000ff00ffff00, 0xff0000ff00ff0000, 0xff0000ff00ff0001, 0xff0000ff00ff01ff,
    0xff0000ff00ff0101, 0xff0000ff0000ff00, 0xff0000ff000000ff, 0xff0000ff00000000,
    0xff0000ff00000001, 0xff0000ff00000100, 0xff0000ff0001ff01, 0xff0000ff00010000,
    0xff0000ff000101ff, 0xff0000ff01ff00ff, 0xff0000ff01ff0100, 0xff0000ff0100ffff,
    0xff0000ff010000ff, 0xff0000ff01000000, 0xff0000ff010001ff, 0xff0000ff01000100,
    0xff0000ff01000101, 0xff0000ff0101ff00, 0xff0000ff010100ff, 0xff0000ff01010000,
    0xff0000ff01010100, 0xff000000ffffff01, 0xff000000ffff0000, 0xff000000ffff0101,
    0xff000000ff00ff00, 0xff000000ff0000ff, 0xff000000ff000000, 0xff000000ff000001,
    0xff000000ff000100, 0xff000000ff01ffff, 0xff000000ff01ff01, 0xff000000ff010000,
    0xff000000ff0101ff, 0xff000000ff010101, 0xff00000000ffff00, 0xff00000000ff00ff,
    0xff00000000ff0000, 0xff00000000ff0001, 0xff0000000000ff00, 0xff0000000000ff01,
    0xff000000000000ff, 0xff00000000000000, 0xff00000000000001, 0xff00000000000100,
    0xff00000000000101, 0xff0000000001ff00, 0xff000000000100ff, 0xff00000000010000,
    0xff00000000010001, 0xff00000000010100, 0xff00000001ffffff, 0xff00000001ffff01,
    0xff00000001ff00ff, 0xff00000001ff0000, 0xff00000001ff01ff, 0xff00000001ff0101,
    0xff0000000100ffff, 0xff0000000100ff00, 0xff000000010000ff, 0xff00000001000000,
    0xff00000001000001, 0xff00000001000100, 0xff00000001000101, 0xff0000000101ffff,
    0xff0000000101ff01, 0xff00000001010000, 0xff000001ffffff00, 0xff000001ffff00ff,
    0xff000001ffff0000, 0xff000001ffff0001, 0xff000001ff000000, 0xff000001ff000001,
    0xff000001ff0001ff, 0xff000001ff000101, 0xff000001ff01ff00, 0xff000001ff010001,
    0xff00000100ffffff, 0xff00000100ffff01, 0xff00000100ff00ff, 0xff00000100ff0000,
    0xff00000100ff01ff, 0xff00000100ff0101, 0xff0000010000ff00, 0xff00000100000000,
    0xff00000100000001, 0xff000001000001ff, 0xff00000100000100, 0xff0000010001ff00,
    0xff000001000100ff, 0xff00000100010000, 0xff000001000101ff, 0xff00000100010100,
    0xff00000100010101, 0xff00000101ff0001, 0xff00000101ff0101, 0xff0000010100ff01,
    0xff00000101000000, 0xff000001010100ff, 0xff00000101010100, 0xff0001ffff00ff00,
    0xff0001ffff000001, 0xff0001ffff010000, 0xff0001ff00ffff00, 0xff0001ff00ff00ff,
    0xff0001ff00ff0001, 0xff0001ff00ff0100, 0xff0001ff0000ffff, 0xff0001ff00000000,
    0xff0001ff000001ff, 0xff0001ff00000101, 0xff0001ff0001ffff, 0xff0001ff0001ff00,
    0xff0001ff000100ff, 0xff0001ff00010001, 0xff0001ff00010100, 0xff0001ff01ff0000,
    0xff0001ff0100ff00, 0xff0001ff010000ff, 0xff0001ff01010000, 0xff000100ff00ffff,
    0xff000100ff00ff01, 0xff000100ff000000, 0xff000100ff000101, 0xff000100ff01ff00,
    0xff000100ff010000, 0xff00010000ffff01, 0xff00010000ff00ff, 0xff00010000ff0000,
    0xff00010000ff01ff, 0xff0001000000ff00, 0xff000100000000ff, 0xff00010000000000,
    0xff00010000000001, 0xff00010000000100, 0xff00010000000101, 0xff0001000001ffff,
    0xff00010000010000, 0xff00010000010101, 0xff00010001ff0100, 0xff0001000100ff00,
    0xff0001000100ff01, 0xff00010001000000, 0xff000100010001ff, 0xff0001000101ff00,
    0xff00010001010001, 0xff00010001010100, 0xff000101ffff0100, 0xff000101ff000001,
    0xff000101ff0100ff, 0xff000101ff010001, 0xff00010100ff00ff, 0xff00010100ff0001,
    0xff00010100ff0100, 0xff0001010000ffff, 0xff0001010000ff01, 0xff00010100000000,
    0xff000101000001ff, 0xff0001010001ff00, 0xff00010100010001, 0xff00010100010100,
    0xff00010101ff0000, 0xff0001010100ff00, 0xff00010101000001, 0xff00010101000101,
    0xff01ffffffffffff, 0xff01ffffffffff01, 0xff01ffffffff01ff, 0xff01ffffffff0101,
    0xff01ffffff000000, 0xff01ffffff01ffff, 0xff01ffffff01ff01, 0xff01ffffff010000,
    0xff01ffffff0101ff, 0xff01ffffff010101, 0xff01ffff00ff0000, 0xff01ffff0000ff00,
    0xff01ffff00000100, 0xff01ffff0001ff00, 0xff01ffff00010000, 0xff01ffff01ffffff,
    0xff01ffff01ffff01, 0xff01ffff01ff01ff, 0xff01ffff01ff0101, 0xff01ffff01000000,
    0xff01ffff0101ffff, 0xff01ffff0101ff01, 0xff01ffff01010000, 0xff01ffff010101ff,
    0xff01ffff01010101, 0xff01ff00ffff0000, 0xff01ff00ff00ff00, 0xff01ff00ff0000ff,
    0xff01ff00ff000100, 0xff01ff00ff010000, 0xff01ff0000ffff01, 0xff01ff0000ff00ff,
    0xff01ff0000ff0100, 0xff01ff0000000000, 0xff01ff00000001ff, 0xff01ff0000000101,
    0xff01ff000001ff00, 0xff01ff00000100ff, 0xff01ff0000010000, 0xff01ff0000010001,
    0xff01ff0001ff0000, 0xff01ff000100ffff, 0xff01ff0001000001, 0xff01ff0001000100,
    0xff01ff0001010000, 0xff01ff01ffffff00, 0xff01ff01ffff01ff, 0xff01ff01ffff0101,
    0xff01ff01ff00ff00, 0xff01ff01ff000000, 0xff01ff01ff01ffff, 0xff01ff01ff01ff01,
    0xff01ff01ff0101ff, 0xff01ff01ff010101, 0xff01ff0100ff0000, 0xff01ff010000ff00,
    0xff01ff0100000001, 0xff01ff0100000100, 0xff01ff0100010000, 0xff01ff0101ffff00,
    0xff01ff0101ff01ff, 0xff01ff0101ff0101, 0xff01ff010100ff00, 0xff01ff0101000000,
    0xff01ff010101ffff, 0xff01ff010101ff01, 0xff01ff01010101ff, 0xff01ff0101010101,
    0xff0100ffffff0000, 0xff0100ffff0000ff, 0xff0100ffff000001, 0xff0100ffff000100,
    0xff0100ffff010000, 0xff0100ff00ff00ff, 0xff0100ff00ff0000, 0xff0100ff00ff0001,
    0xff0100ff00ff0100, 0xff0100ff0000ff01, 0xff0100ff00000000, 0xff0100ff000001ff,
    0xff0100ff00000101, 0xff0100ff00010001, 0xff0100ff01ff0000, 0xff0100ff0100ff00,
    0xff0100ff010000ff, 0xff0100ff01000100, 0xff0100ff0101ff00, 0xff0100ff01010000,
    0xff010000ffff0100, 0xff010000ff000000, 0xff010000ff01ff00, 0xff010000ff010100,
    0xff01000000ffffff, 0xff01000000ff0000, 0xff01000000ff01ff, 0xff0100000000ff00,
    0xff010000000000ff, 0xff01000000000000, 0xff01000000000100, 0xff0100000001ff01,
    0xff01000000010000, 0xff010000000101ff, 0xff01000001ff0100, 0xff0100000100ffff,
    0xff010000010000ff, 0xff01000001000000, 0xff010000010001ff, 0xff01000001000101,
    0xff0100000101ff00, 0xff010000010100ff, 0xff01000001010001, 0xff01000001010100,
    0xff010001ffff0000, 0xff010001ff00ffff, 0xff010001ff00ff01, 0xff010001ff000100,
    0xff010001ff010000, 0xff01000100ffff00, 0xff01000100ff0100, 0xff01000100000000,
    0xff0100010001ffff, 0xff0100010001ff00, 0xff01000100010100, 0xff01000101ff00ff,
    0xff01000101ff0001, 0xff0100010100ffff, 0xff01000101000101, 0xff0101ffffffffff,
    0xff0101ffffffff01, 0xff0101ffffff01ff, 0xff0101ffffff0101, 0xff0101ffff000000,
    0xff0101ffff01ffff, 0xff0101ffff01ff01, 0xff0101ffff0101ff, 0xff0101ffff010101,
    0xff0101ff00ff0000, 0xff0101ff0000ff00, 0xff0101ff000000ff, 0xff0101ff00010000,
    0xff0101ff01ffffff, 0xff0101ff01ffff01, 0xff0101ff01ff01ff, 0xff0101ff01ff0101,
    0xff0101ff0101ffff, 0xff0101ff0101ff01, 0xff0101ff010101ff, 0xff0101ff01010101,
    0xff010100ffff0100, 0xff010100ff00ff00, 0xff010100ff0000ff, 0xff010100ff000100,
    0xff010100ff010000, 0xff01010000ff0001, 0xff01010000ff0100, 0xff0101000000ff01,
    0xff01010000000000, 0xff0101000001ff00, 0xff010100000100ff, 0xff01010000010001,
    0xff01010000010100, 0xff01010001ff0000, 0xff0101000100ffff, 0xff01010001000001,
    0xff01010001000100, 0xff010100010100ff, 0xff01010001010000, 0xff010101ffffffff,
    0xff010101ffffff01, 0xff010101ffff01ff, 0xff010101ffff0101, 0xff010101ff01ffff,
    0xff010101ff01ff01, 0xff010101ff0101ff, 0xff010101ff010101, 0xff01010100ff0000,
    0xff0101010000ff00, 0xff01010100000001, 0xff01010100000100, 0xff01010100010000,
    0xff01010101ffffff, 0xff01010101ffff01, 0xff01010101ff01ff, 0xff01010101ff0101,
    0xff01010101000000, 0xff0101010101ffff, 0xff0101010101ff01, 0xff010101010101ff,
    0xff01010101010101, 0x00ffffffffff0000, 0x00ffffffff00ff00, 0x00ffffffff000001,
    0x00ffffffff010000, 0x00ffffff00ff0100, 0x00ffffff0000ff01, 0x00ffffff00000000,
    0x00ffffff000001ff, 0x00ffffff00000101, 0x00ffffff0001ff00, 0x00ffffff000100ff,
    0x00ffffff00010001, 0x00ffffff010000ff, 0x00ffffff01000100, 0x00ffffff0101ff00,
    0x00ffffff01010001, 0x00ffff00ffffffff, 0x00ffff00ffffff00, 0x00ffff00ffff00ff,
    0x00ffff00ffff0001, 0x00ffff00ffff0100, 0x00ffff00ff00ff01, 0x00ffff00ff000000,
    0x00ffff00ff000001, 0x00ffff00ff0001ff, 0x00ffff00ff000101, 0x00ffff00ff01ff00,
    0x00ffff00ff010001, 0x00ffff00ff010100, 0x00ffff0000ff0000, 0x00ffff0000ff01ff,
    0x00ffff0000ff0101, 0x00ffff000000ff00, 0x00ffff00000000ff, 0x00ffff0000000000,
    0x00ffff0000000001, 0x00ffff0000000100, 0x00ffff0000000101, 0x00ffff0000010000,
    0x00ffff00000101ff, 0x00ffff0000010101, 0x00ffff0001ffff00, 0x00ffff0001ff00ff,
    0x00ffff0001ff0001, 0x00ffff000100ffff, 0x00ffff000100ff01, 0x00ffff0001000000,
    0x00ffff000101ffff, 0x00ffff000101ff00, 0x00ffff000101ff01, 0x00ffff01ffff0000,
    0x00ffff01ff00ff00, 0x00ffff01ff0000ff, 0x00ffff01ff000001, 0x00ffff01ff010000,
    0x00ffff0100ffff00, 0x00ffff010000ff01, 0x00ffff0100000000, 0x00ffff0100000101,
    0x00ffff01000100ff, 0x00ffff0100010100, 0x00ffff0101ff0100, 0x00ffff01010000ff,
    0x00ffff0101010000, 0x00ff00ffffffff00, 0x00ff00ffff000000, 0x00ff00ffff000100,
    0x00ff00ffff010100, 0x00ff00ff00ff0000, 0x00ff00ff00ff01ff, 0x00ff00ff00ff0101,
    0x00ff00ff0000ff00, 0x00ff00ff000000ff, 0x00ff00ff00000000, 0x00ff00ff00000001,
    0x00ff00ff0001ff00, 0x00ff00ff0001ff01, 0x00ff00ff00010000, 0x00ff00ff000101ff,
    0x00ff00ff00010101, 0x00ff00ff01ffff00, 0x00ff00ff01ff0001, 0x00ff00ff01ff0100,
    0x00ff00ff0100ffff, 0x00ff00ff0100ff01, 0x00ff00ff01000000, 0x00ff00ff0101ffff,
    0x00ff00ff0101ff00, 0x00ff00ff01010100, 0x00ff0000ffffff00, 0x00ff0000ffffff01,
    0x00ff0000ffff0000, 0x00ff0000ffff0101, 0x00ff0000ff00ff00, 0x00ff0000ff0000ff,
    0x00ff0000ff000000, 0x00ff0000ff000001, 0x00ff0000ff000100, 0x00ff0000ff01ffff,
    0x00ff0000ff010000, 0x00ff0000ff010101, 0x00ff000000ffff00, 0x00ff000000ff00ff,
    0x00ff000000ff0000, 0x00ff000000ff0001, 0x00ff000000ff0100, 0x00ff00000000ffff,
    0x00ff00000000ff00, 0x00ff0000000000ff, 0x00ff000000000000, 0x00ff000000000001,
    0x00ff0000000001ff, 0x00ff000000000100, 0x00ff00000001ff00, 0x00ff0000000100ff,
    0x00ff000000010000, 0x00ff000000010001, 0x00ff000000010100, 0x00ff000001ffff01,
    0x00ff000001ff00ff, 0x00ff000001ff0000, 0x00ff000001ff01ff, 0x00ff00000100ff00,
    0x00ff0000010000ff, 0x00ff000001000000, 0x00ff000001000001, 0x00ff000001000100,
    0x00ff000001000101, 0x00ff000001010000, 0x00ff0000010101ff, 0x00ff000001010101,
    0x00ff0001ffffff00, 0x00ff0001ffff0000, 0x00ff0001ffff0100, 0x00ff0001ff0000ff,
    0x00ff0001ff000000, 0x00ff0001ff0001ff, 0x00ff0001ff000101, 0x00ff0001ff01ff00,
    0x00ff0001ff0100ff, 0x00ff0001ff010100, 0x00ff000100ffffff, 0x00ff000100ffff01,
    0x00ff000100ff0000, 0x00ff000100ff01ff, 0x00ff00010000ffff, 0x00ff00010000ff00,
    0x00ff00010000ff01, 0x00ff000100000000, 0x00ff000100000001, 0x00ff000100000100,
    0x00ff00010001ff01, 0x00ff000100010000, 0x00ff0001000101ff, 0x00ff000101ffff00,
    0x00ff000101ff0000, 0x00ff000101ff0101, 0x00ff0001010000ff, 0x00ff000101000000,
    0x00ff00010101ff00, 0x00ff0001010100ff, 0x00ff000101010001, 0x00ff01ffffff0000,
    0x00ff01ffff00ff00, 0x00ff01ffff000000, 0x00ff01ffff000101, 0x00ff01ffff010000,
    0x00ff01ff00ffff01, 0x00ff01ff00ff0100, 0x00ff01ff0000ffff, 0x00ff01ff00000000,
    0x00ff01ff000001ff, 0x00ff01ff0001ff00, 0x00ff01ff000100ff, 0x00ff01ff00010001,
    0x00ff01ff00010100, 0x00ff01ff01ff0000, 0x00ff01ff0100ff00, 0x00ff01ff010000ff,
    0x00ff01ff01000001, 0x00ff01ff01000100, 0x00ff01ff01010000, 0x00ff0100ffffff00,
    0x00ff0100ffff0000, 0x00ff0100ffff0001, 0x00ff0100ffff0101, 0x00ff0100ff00ffff,
    0x00ff0100ff0000ff, 0x00ff0100ff000000, 0x00ff0100ff0001ff, 0x00ff0100ff01ff00,
    0x00ff0100ff0100ff, 0x00ff0100ff010001, 0x00ff010000ffffff, 0x00ff010000ff0000,
    0x00ff010000ff0101, 0x00ff01000000ff00, 0x00ff01000000ff01, 0x00ff0100000000ff,
    0x00ff010000000000, 0x00ff010000000001, 0x00ff010000000100, 0x00ff01000001ffff,
    0x00ff01000001ff01, 0x00ff010000010000, 0x00ff010000010001, 0x00ff010000010101,
    0x00ff010001ff0001, 0x00ff010001ff0100, 0x00ff01000100ff01, 0x00ff010001000000,
    0x00ff010001000001, 0x00ff0100010001ff, 0x00ff01000101ff00, 0x00ff0100010100ff,
    0x00ff010001010001, 0x00ff010001010100, 0x00ff0101ff000001, 0x00ff010100ff00ff,
    0x00ff010100ff0001, 0x00ff010100ff0100, 0x00ff010100000000, 0x00ff0101000001ff,
    0x00ff010100000101, 0x00ff0101000100ff, 0x00ff010100010100, 0x00ff0101010000ff,
    0x00ff010101010000, 0x0000ffffffffff00, 0x0000ffffffff00ff, 0x0000ffffffff0000,
    0x0000ffffffff0001, 0x0000ffffffff0100, 0x0000ffffff00ff01, 0x0000ffffff000000,
    0x0000ffffff000101, 0x0000ffffff01ff00, 0x0000ffffff0100ff, 0x0000ffffff010100,
    0x0000ffff00ffffff, 0x0000ffff00ff0000, 0x0000ffff00ff01ff, 0x0000ffff0000ff00,
    0x0000ffff000000ff, 0x0000ffff00000000, 0x0000ffff00000001, 0x0000ffff00000100,
    0x0000ffff00010000, 0x0000ffff000101ff, 0x0000ffff01ff0001, 0x0000ffff01ff0100,
    0x0000ffff01000000, 0x0000ffff010001ff, 0x0000ffff0101ffff, 0x0000ffff0101ff00,
    0x0000ffff01010001, 0x0000ffff01010100, 0x0000ff00ffff0000, 0x0000ff00ffff01ff,
    0x0000ff00ffff0100, 0x0000ff00ffff0101, 0x0000ff00ff00ff00, 0x0000ff00ff0000ff,
    0x0000ff00ff000000, 0x0000ff00ff000001, 0x0000ff00ff0001ff, 0x0000ff00ff000100,
    0x0000ff00ff01ffff, 0x0000ff00ff010000, 0x0000ff00ff010001, 0x0000ff00ff0101ff,
    0x0000ff00ff010101, 0x0000ff0000ffff00, 0x0000ff0000ff00ff, 0x0000ff0000ff0000,
    0x0000ff0000ff0001, 0x0000ff0000ff0100, 0x0000ff000000ffff, 0x0000ff000000ff00,
    0x0000ff000000ff01, 0x0000ff00000000ff, 0x0000ff0000000000, 0x0000ff0000000001,
    0x0000ff00000001ff, 0x0000ff0000000100, 0x0000ff0000000101, 0x0000ff000001ff00,
    0x0000ff00000100ff, 0x0000ff0000010000, 0x0000ff0000010001, 0x0000ff0000010100,
    0x0000ff0001ffff01, 0x0000ff0001ff0000, 0x0000ff000100ff00, 0x0000ff00010000ff,
    0x0000ff0001000000, 0x0000ff0001000001, 0x0000ff0001000100, 0x0000ff000101ffff,
    0x0000ff0001010000, 0x0000ff0001010101, 0x0000ff01ffffff00, 0x0000ff01ffff0001,
    0x0000ff01ff00ff01, 0x0000ff01ff000000, 0x0000ff01ff000101, 0x0000ff01ff01ff00,
    0x0000ff01ff0100ff, 0x0000ff0100ffff01, 0x0000ff0100ff0000, 0x0000ff0100ff0101,
    0x0000ff010000ff00, 0x0000ff01000000ff, 0x0000ff0100000000, 0x0000ff0100000001,
    0x0000ff0100000100, 0x0000ff010001ff01, 0x0000ff0100010000, 0x0000ff0101ff0000,
    0x0000ff010100ffff, 0x0000ff010100ff01, 0x0000ff0101000000, 0x0000ff0101000100,
    0x0000ff0101000101, 0x0000ff01010100ff, 0x000000ffffff00ff, 0x000000ffffff0000,
    0x000000ffff00ff00, 0x000000ffff0000ff, 0x000000ffff000000, 0x000000ffff000001,
    0x000000ffff0001ff, 0x000000ffff000100, 0x000000ffff01ff00, 0x000000ffff010000,
    0x000000ffff0101ff, 0x000000ffff010101, 0x000000ff00ffff00, 0x000000ff00ff00ff,
    0x000000ff00ff0000, 0x000000ff00ff0001, 0x000000ff00ff0100, 0x000000ff00ff0101,
    0x000000ff0000ffff, 0x000000ff0000ff00, 0x000000ff000000ff, 0x000000ff00000000,
    0x000000ff00000001, 0x000000ff000001ff, 0x000000ff00000100, 0x000000ff00000101,
    0x000000ff0001ff00, 0x000000ff0001ff01, 0x000000ff000100ff, 0x000000ff00010000,
    0x000000ff00010001, 0x000000ff00010100, 0x000000ff01ffffff, 0x000000ff01ff01ff,
    0x000000ff01ff0101, 0x000000ff0100ff00, 0x000000ff010000ff, 0x000000ff01000000,
    0x000000ff01000001, 0x000000ff01000100, 0x000000ff0101ff00, 0x000000ff010100ff,
    0x000000ff01010000, 0x000000ff01010101, 0x00000000ffffff00, 0x00000000ffffff01,
    0x00000000ffff00ff, 0x00000000ffff0000, 0x00000000ffff0001, 0x00000000ffff0100,
    0x00000000ff00ffff, 0x00000000ff00ff00, 0x00000000ff00ff01, 0x00000000ff0000ff,
    0x00000000ff000000, 0x00000000ff000001, 0x00000000ff000100, 0x00000000ff000101,
    0x00000000ff01ff00, 0x00000000ff0100ff, 0x00000000ff010000, 0x00000000ff010001,
    0x00000000ff010100, 0x0000000000ffffff, 0x0000000000ffff00, 0x0000000000ffff01,
    0x0000000000ff00ff, 0x0000000000ff0000, 0x0000000000ff0001, 0x0000000000ff01ff,
    0x0000000000ff0100, 0x000000000000ffff, 0x000000000000ff00, 0x000000000000ff01,
    0x00000000000000ff, 0x0000000000000000, 0x0000000000000001, 0x00000000000001ff,
    0x0000000000000100, 0x0000000000000101, 0x000000000001ffff, 0x000000000001ff00,
    0x00000000000100ff, 0x0000000000010000, 0x0000000000010001, 0x00000000000101ff,
    0x0000000000010100, 0x0000000000010101, 0x0000000001ffff00, 0x0000000001ff00ff,
    0x0000000001ff0000, 0x0000000001ff0100, 0x0000000001ff0101, 0x000000000100ffff,
    0x000000000100ff00, 0x00000000010000ff, 0x0000000001000000, 0x0000000001000001,
    0x00000000010001ff, 0x0000000001000100, 0x000000000101ff00, 0x00000000010100ff,
    0x0000000001010000, 0x0000000001010001, 0x0000000001010100, 0x00000001ffffffff,
    0x00000001ffffff00, 0x00000001ffffff01, 0x00000001ffff00ff, 0x00000001ffff0001,
    0x00000001ffff01ff, 0x00000001ffff0100, 0x00000001ff00ff00, 0x00000001ff0000ff,
    0x00000001ff000000, 0x00000001ff0001ff, 0x00000001ff000100, 0x00000001ff01ffff,
    0x00000001ff01ff00, 0x00000001ff01ff01, 0x00000001ff0100ff, 0x00000001ff010000,
    0x00000001ff010001, 0x00000001ff0101ff, 0x00000001ff010100, 0x0000000100ffff00,
    0x0000000100ff0000, 0x0000000100ff0001, 0x0000000100ff01ff, 0x0000000100ff0100,
    0x0000000100ff0101, 0x000000010000ffff, 0x000000010000ff00, 0x000000010000ff01,
    0x00000001000000ff, 0x0000000100000000, 0x0000000100000001, 0x00000001000001ff,
    0x0000000100000100, 0x0000000100000101, 0x000000010001ff00, 0x00000001000100ff,
    0x0000000100010000, 0x0000000100010100, 0x0000000101ffff01, 0x0000000101ff0000,
    0x0000000101ff0001, 0x0000000101ff01ff, 0x0000000101ff0100, 0x0000000101ff0101,
    0x000000010100ff00, 0x0000000101000000, 0x0000000101000101, 0x000000010101ff01,
    0x0000000101010000, 0x0000000101010001, 0x00000001010101ff, 0x0000000101010100,
    0x000001ffffff00ff, 0x000001ffffff0000, 0x000001ffffff0001, 0x000001ffffff0100,
    0x000001ffff00ffff, 0x000001ffff000000, 0x000001ffff0001ff, 0x000001ffff01ff00,
    0x000001ffff010101, 0x000001ff00ff0000, 0x000001ff00ff01ff, 0x000001ff00ff0101,
    0x000001ff0000ff00, 0x000001ff000000ff, 0x000001ff00000000, 0x000001ff00000001,
    0x000001ff000001ff, 0x000001ff00000100, 0x000001ff0001ffff, 0x000001ff0001ff01,
    0x000001ff000100ff, 0x000001ff00010000, 0x000001ff01ffff01, 0x000001ff01ff0100,
    0x000001ff0100ffff, 0x000001ff0100ff01, 0x000001ff01000000, 0x000001ff010001ff,
    0x000001ff0101ff00, 0x000001ff01010100, 0x00000100ffffff00, 0x00000100ffffff01,
    0x00000100ffff0000, 0x00000100ffff0101, 0x00000100ff00ff00, 0x00000100ff0000ff,
    0x00000100ff000000, 0x00000100ff000001, 0x00000100ff000100, 0x00000100ff010000,
    0x0000010000ffff00, 0x0000010000ff00ff, 0x0000010000ff0000, 0x0000010000ff0001,
    0x0000010000ff0100, 0x000001000000ffff, 0x000001000000ff00, 0x000001000000ff01,
    0x00000100000000ff, 0x0000010000000000, 0x0000010000000001, 0x00000100000001ff,
    0x0000010000000100, 0x0000010000000101, 0x000001000001ff00, 0x00000100000100ff,
    0x0000010000010000, 0x0000010000010001, 0x0000010000010100, 0x0000010001ffff00,
    0x0000010001ff0000, 0x0000010001ff0100, 0x000001000100ff00, 0x00000100010000ff,
    0x0000010001000000, 0x0000010001000001, 0x00000100010001ff, 0x0000010001000100,
    0x0000010001010000, 0x00000101ffff00ff, 0x00000101ffff01ff, 0x00000101ff000000,
    0x00000101ff000101, 0x00000101ff01ffff, 0x00000101ff010000, 0x00000101ff010001,
    0x00000101ff010100, 0x0000010100ff0000, 0x0000010100ff01ff, 0x0000010100ff0100,
    0x000001010000ff00, 0x0000010100000000, 0x0000010100000001, 0x00000101000001ff,
    0x0000010100000100, 0x000001010001ff01, 0x0000010100010000, 0x00000101000101ff,
    0x0000010100010101, 0x0000010101ffff00, 0x0000010101ff0101, 0x000001010100ff01,
    0x0000010101000000, 0x0000010101000001, 0x00000101010001ff, 0x0000010101000101,
    0x000001010101ff00, 0x0001ffffffff0000, 0x0001ffffff0000ff, 0x0001ffffff000001,
    0x0001ffffff000100, 0x0001ffffff010000, 0x0001ffff00ff00ff, 0x0001ffff0000ffff,
    0x0001ffff00000000, 0x0001ffff00000001, 0x0001ffff000001ff, 0x0001ffff00000101,
    0x0001ffff0001ff00, 0x0001ffff000100ff, 0x0001ffff00010001, 0x0001ffff00010100,
    0x0001ffff01ffff00, 0x0001ffff01000001, 0x0001ffff01010000, 0x0001ff00ffffff00,
    0x0001ff00ffff00ff, 0x0001ff00ffff0001, 0x0001ff00ffff0100, 0x0001ff00ff00ff01,
    0x0001ff00ff000000, 0x0001ff00ff01ff00, 0x0001ff00ff01ff01, 0x0001ff00ff010001,
    0x0001ff00ff010100, 0x0001ff0000ff0000, 0x0001ff0000ff0100, 0x0001ff000000ff00,
    0x0001ff0000000000, 0x0001ff0000000001, 0x0001ff0000000100, 0x0001ff0000010000,
    0x0001ff0000010001, 0x0001ff0000010101, 0x0001ff0001ff00ff, 0x0001ff0001ff0101,
    0x0001ff000100ff01, 0x0001ff0001000000, 0x0001ff000101ff00, 0x0001ff0001010001,
    0x0001ff0001010100, 0x0001ff01ff00ff00, 0x0001ff01ff000001, 0x0001ff01ff000100,
    0x0001ff0100ffffff, 0x0001ff0100ffff00, 0x0001ff0100ff0001, 0x0001ff0100000000,
    0x0001ff0100000001, 0x0001ff01000001ff, 0x0001ff010001ffff, 0x0001ff0101ff0000,
    0x0001ff010100ff00, 0x0001ff0101000001, 0x0001ff0101010000, 0x000100ffff00ff00,
    0x000100ffff00ff01, 0x000100ffff000000, 0x000100ffff000001, 0x000100ffff000101,
    0x000100ffff01ff00, 0x000100ffff010001, 0x000100ffff010100, 0x000100ff00ffffff,
    0x000100ff00ffff01, 0x000100ff00ff0000, 0x000100ff00ff01ff, 0x000100ff00ff0101,
    0x000100ff0000ff00, 0x000100ff000000ff, 0x000100ff00000000, 0x000100ff00000001,
    0x000100ff00000100, 0x000100ff00000101, 0x000100ff0001ffff, 0x000100ff0001ff01,
    0x000100ff00010000, 0x000100ff01ff00ff, 0x000100ff01ff0000, 0x000100ff01ff0100,
    0x000100ff0100ffff, 0x000100ff0100ff01, 0x000100ff010000ff, 0x000100ff01000000,
    0x000100ff01000001, 0x000100ff010001ff, 0x000100ff01000101, 0x000100ff0101ff00,
    0x000100ff010100ff, 0x000100ff01010100, 0x00010000ffff0000, 0x00010000ffff01ff,
    0x00010000ffff0101, 0x00010000ff00ff00, 0x00010000ff000000, 0x00010000ff000001,
    0x00010000ff000100, 0x0001000000ff00ff, 0x0001000000ff0000, 0x0001000000ff0001,
    0x0001000000ff0100, 0x000100000000ffff, 0x000100000000ff00, 0x00010000000000ff,
    0x0001000000000000, 0x0001000000000001, 0x0001000000000100, 0x000100000001ff00,
    0x00010000000100ff, 0x0001000000010000, 0x0001000000010001, 0x0001000000010100,
    0x0001000001ff0001, 0x0001000001ff0100, 0x0001000001ff0101, 0x000100000100ff00,
    0x0001000001000000, 0x0001000001000001, 0x0001000001000100, 0x0001000001000101,
    0x000100000101ff01, 0x0001000001010000, 0x0001000001010001, 0x00010000010101ff,
    0x00010001ffffff01, 0x00010001ffff0100, 0x00010001ff000000, 0x00010001ff01ffff,
    0x00010001ff010001, 0x00010001ff0101ff, 0x00010001ff010100, 0x0001000100ffffff,
    0x0001000100ff0000, 0x0001000100ff01ff, 0x0001000100ff0101, 0x000100010000ff00,
    0x00010001000000ff, 0x0001000100000000, 0x0001000100000001, 0x00010001000001ff,
    0x0001000100000101, 0x000100010001ffff, 0x0001000100010000, 0x00010001000101ff,
    0x0001000101ffffff, 0x0001000101ffff01, 0x0001000101ff0000, 0x0001000101ff0101,
    0x00010001010000ff, 0x0001000101000001, 0x00010001010001ff, 0x0001000101000100,
    0x000100010101ffff, 0x00010001010100ff, 0x0001000101010001, 0x0001000101010101,
    0x000101ffff000001, 0x000101ffff000100, 0x000101ffff010000, 0x000101ff00ffff00,
    0x000101ff0000ff01, 0x000101ff00000000, 0x000101ff00000101, 0x000101ff0001ff00,
    0x000101ff00010100, 0x000101ff01ff0000, 0x000101ff0100ff00, 0x000101ff010001ff,
    0x000101ff01010001, 0x00010100ffffff00, 0x00010100ffff00ff, 0x00010100ff00ffff,
    0x00010100ff000000, 0x00010100ff01ff00, 0x00010100ff0100ff, 0x00010100ff010001,
    0x00010100ff010100, 0x0001010000ffffff, 0x0001010000ffff00, 0x0001010000ff0000,
    0x0001010000ff0001, 0x0001010000ff01ff, 0x000101000000ff00, 0x00010100000000ff,
    0x0001010000000000, 0x0001010000000001, 0x0001010000000100, 0x000101000001ffff,
    0x0001010000010000, 0x0001010000010101, 0x0001010001ffff01, 0x0001010001ff00ff,
    0x0001010001ff0101, 0x0001010001000000, 0x000101000101ff00, 0x00010100010100ff,
    0x0001010001010000, 0x0001010001010100, 0x00010101ff00ff00, 0x00010101ff000001,
    0x00010101ff0001ff, 0x0001010100ffff00, 0x0001010100ff00ff, 0x0001010100ff0100,
    0x000101010000ffff, 0x0001010100000000, 0x00010101000001ff, 0x0001010100000101,
    0x00010101000100ff, 0x0001010100010000, 0x0001010100010100, 0x0001010101ff0001,
    0x00010101010000ff, 0x00010101010001ff, 0x0001010101000101, 0x0001010101010001,
    0x01ffffffffffffff, 0x01ffffffffffff01, 0x01ffffffffff01ff, 0x01ffffffffff0101,
    0x01ffffffff01ffff, 0x01ffffffff01ff01, 0x01ffffffff0101ff, 0x01ffffffff010101,
    0x01ffffff00ff0000, 0x01ffffff0000ffff, 0x01ffffff0000ff00, 0x01ffffff000000ff,
    0x01ffffff00000001, 0x01ffffff00000100, 0x01ffffff00010000, 0x01ffffff01ffffff,
    0x01ffffff01ffff01, 0x01ffffff01ff01ff, 0x01ffffff01ff0101, 0x01ffffff01000000,
    0x01ffffff0101ffff, 0x01ffffff0101ff01, 0x01ffffff010101ff, 0x01ffffff01010101,
    0x01ffff00ffff0000, 0x01ffff00ff00ff00, 0x01ffff00ff0000ff, 0x01ffff00ff000001,
    0x01ffff00ff000100, 0x01ffff00ff010000, 0x01ffff0000ffff00, 0x01ffff0000ff00ff,
    0x01ffff0000ff0100, 0x01ffff000000ffff, 0x01ffff000000ff01, 0x01ffff0000000000,
    0x01ffff0000000001, 0x01ffff00000001ff, 0x01ffff0000000100, 0x01ffff00000100ff,
    0x01ffff0000010001, 0x01ffff0000010100, 0x01ffff0001ff0000, 0x01ffff0001ff0100,
    0x01ffff00010000ff, 0x01ffff0001000001, 0x01ffff0001000100, 0x01ffff0001010000,
    0x01ffff01ffffffff, 0x01ffff01ffffff01, 0x01ffff01ffff01ff, 0x01ffff01ffff0101,
    0x01ffff01ff000000, 0x01ffff01ff01ffff, 0x01ffff01ff01ff01, 0x01ffff01ff0101ff,
    0x01ffff01ff010101, 0x01ffff010000ff00, 0x01ffff01000000ff, 0x01ffff0100000100,
    0x01ffff0100010000, 0x01ffff0101ffffff, 0x01ffff0101ffff01, 0x01ffff0101ff01ff,
    0x01ffff0101ff0101, 0x01ffff0101000000, 0x01ffff010101ffff, 0x01ffff010101ff01,
    0x01ffff01010101ff, 0x01ffff0101010101, 0x01ff00ffff0000ff, 0x01ff00ffff000100,
    0x01ff00ff00ffff00, 0x01ff00ff00ff00ff, 0x01ff00ff0000ff00, 0x01ff00ff00000000,
    0x01ff00ff00000101, 0x01ff00ff0001ff00, 0x01ff00ff000100ff, 0x01ff00ff00010100,
    0x01ff00ff010000ff, 0x01ff00ff01000100, 0x01ff0000ffffff00, 0x01ff0000ffff0100,
    0x01ff0000ff00ff01, 0x01ff0000ff000000, 0x01ff0000ff000101, 0x01ff0000ff010001,
    0x01ff0000ff010100, 0x01ff000000ffffff, 0x01ff000000ffff00, 0x01ff000000ff0000,
    0x01ff000000ff01ff, 0x01ff00000000ff00, 0x01ff0000000000ff, 0x01ff000000000000,
    0x01ff000000000001, 0x01ff000000000100, 0x01ff000000000101, 0x01ff000000010000,
    0x01ff000000010001, 0x01ff0000000101ff, 0x01ff000000010101, 0x01ff000001ffff00,
    0x01ff000001ff00ff, 0x01ff000001ff0001, 0x01ff000001ff0100, 0x01ff00000100ffff,
    0x01ff00000100ff01, 0x01ff000001000000, 0x01ff0000010001ff, 0x01ff000001010001,
    0x01ff0001ff00ff00, 0x01ff0001ff000001, 0x01ff0001ff000100, 0x01ff0001ff010000,
    0x01ff000100ffff00, 0x01ff000100ff00ff, 0x01ff000100ff0100, 0x01ff000100ff0101,
    0x01ff00010000ffff, 0x01ff000100000000, 0x01ff000100000100, 0x01ff000100000101,
    0x01ff00010001ff00, 0x01ff000100010001, 0x01ff000100010101, 0x01ff000101ff0000,
    0x01ff00010100ff00, 0x01ff000101000101, 0x01ff0001010100ff, 0x01ff01ffffffffff,
    0x01ff01ffffffff01, 0x01ff01ffffff01ff, 0x01ff01ffffff0101, 0x01ff01ffff000000,
    0x01ff01ffff01ffff, 0x01ff01ffff01ff01, 0x01ff01ffff0101ff, 0x01ff01ffff010101,
    0x01ff01ff00ffff00, 0x01ff01ff00ff0000, 0x01ff01ff0000ff00, 0x01ff01ff000000ff,
    0x01ff01ff00000100, 0x01ff01ff00010000, 0x01ff01ff00010100, 0x01ff01ff01ffffff,
    0x01ff01ff01ffff01, 0x01ff01ff01ff01ff, 0x01ff01ff01ff0101, 0x01ff01ff01000000,
    0x01ff01ff0101ffff, 0x01ff01ff0101ff01, 0x01ff01ff010101ff, 0x01ff01ff01010101,
    0x01ff0100ffff0000, 0x01ff0100ffff0001, 0x01ff0100ff00ff00, 0x01ff0100ff0000ff,
    0x01ff0100ff000001, 0x01ff0100ff010000, 0x01ff010000ffff00, 0x01ff010000ff00ff,
    0x01ff010000ff0001, 0x01ff010000ff0100, 0x01ff01000000ffff, 0x01ff01000000ff01,
    0x01ff010000000000, 0x01ff010000000101, 0x01ff01000001ff00, 0x01ff0100000100ff,
    0x01ff010001ff0000, 0x01ff010001000001, 0x01ff010001000100, 0x01ff010001010000,
    0x01ff0101ffffffff, 0x01ff0101ffffff01, 0x01ff0101ffff01ff, 0x01ff0101ffff0101,
    0x01ff0101ff000000, 0x01ff0101ff01ffff, 0x01ff0101ff01ff01, 0x01ff0101ff0101ff,
    0x01ff0101ff010101, 0x01ff010100ff0000, 0x01ff01010000ff00, 0x01ff0101000000ff,
    0x01ff010100000001, 0x01ff010101ffffff, 0x01ff010101ffff01, 0x01ff010101ff01ff,
    0x01ff010101ff0101, 0x01ff010101000000, 0x01ff01010101ffff, 0x01ff01010101ff01,
    0x01ff0101010101ff, 0x01ff010101010101, 0x0100ffffffff0000, 0x0100ffffff00ff00,
    0x0100ffffff000001, 0x0100ffffff0001ff, 0x0100ffffff000100, 0x0100ffffff010000,
    0x0100ffff00ffff00, 0x0100ffff00ff0001, 0x0100ffff00ff0100, 0x0100ffff00000000,
    0x0100ffff000001ff, 0x0100ffff00000101, 0x0100ffff00010100, 0x0100ffff00010101,
    0x0100ffff01ff0000, 0x0100ffff0100ff00, 0x0100ffff010000ff, 0x0100ffff01000001,
    0x0100ffff01000100, 0x0100ffff01010000, 0x0100ff00ffffff00, 0x0100ff00ffff00ff,
    0x0100ff00ffff0001, 0x0100ff00ffff0100, 0x0100ff00ff00ffff, 0x0100ff00ff000000,
    0x0100ff00ff0001ff, 0x0100ff00ff000101, 0x0100ff00ff01ff00, 0x0100ff00ff0100ff,
    0x0100ff00ff010001, 0x0100ff00ff010100, 0x0100ff0000ffffff, 0x0100ff0000ff0000,
    0x0100ff000000ffff, 0x0100ff000000ff00, 0x0100ff00000000ff, 0x0100ff0000000000,
    0x0100ff0000000001, 0x0100ff0000000100, 0x0100ff000001ff01, 0x0100ff0000010000,
    0x0100ff0001ff00ff, 0x0100ff0001ff0001, 0x0100ff000100ff01, 0x0100ff0001000000,
    0x0100ff00010001ff, 0x0100ff000101ff00, 0x0100ff00010100ff, 0x0100ff0001010001,
    0x0100ff0001010100, 0x0100ff01ffff0000, 0x0100ff01ff00ff00, 0x0100ff01ff0000ff,
    0x0100ff01ff000100, 0x0100ff01ff010000, 0x0100ff0100ff00ff, 0x0100ff0100ff0001,
    0x0100ff0100ff0100, 0x0100ff010000ffff, 0x0100ff010000ff01, 0x0100ff0100000000,
    0x0100ff01000001ff, 0x0100ff0100010001, 0x0100ff0100010100, 0x0100ff0101ff0000,
    0x0100ff01010000ff, 0x0100ff0101000001, 0x0100ff0101010100, 0x010000ffffffff00,
    0x010000ffffff00ff, 0x010000ffffff0001, 0x010000ffff00ffff, 0x010000ffff000000,
    0x010000ffff0001ff, 0x010000ffff010001, 0x010000ff00ffffff, 0x010000ff00ff0101,
    0x010000ff0000ff00, 0x010000ff000000ff, 0x010000ff00000000, 0x010000ff00000001,
    0x010000ff000001ff, 0x010000ff00000100, 0x010000ff0001ffff, 0x010000ff0001ff00,
    0x010000ff0001ff01, 0x010000ff00010000, 0x010000ff01ff00ff, 0x010000ff01ff0001,
    0x010000ff0100ff01, 0x010000ff010000ff, 0x010000ff01000000, 0x010000ff010001ff,
    0x010000ff0101ff00, 0x010000ff01010100, 0x01000000ffffffff, 0x01000000ffff0000,
    0x01000000ffff01ff, 0x01000000ffff0101, 0x01000000ff00ffff, 0x01000000ff00ff00,
    0x01000000ff0000ff, 0x01000000ff000000, 0x01000000ff000001, 0x01000000ff000100,
    0x01000000ff01ff00, 0x01000000ff010000, 0x01000000ff010100, 0x01000000ff010101,
    0x0100000000ffff00, 0x0100000000ff00ff, 0x0100000000ff0000, 0x0100000000ff0001,
    0x0100000000ff0100, 0x010000000000ffff, 0x010000000000ff00, 0x010000000000ff01,
    0x01000000000000ff, 0x0100000000000000, 0x0100000000000001, 0x01000000000001ff,
    0x0100000000000100, 0x0100000000000101, 0x010000000001ff00, 0x01000000000100ff,
    0x0100000000010000, 0x0100000000010001, 0x0100000000010100, 0x0100000001ffff00,
    0x0100000001ff0000, 0x0100000001ff01ff, 0x010000000100ff00, 0x010000000100ff01,
    0x01000000010000ff, 0x0100000001000000, 0x0100000001000001, 0x0100000001000100,
    0x0100000001000101, 0x010000000101ffff, 0x010000000101ff01, 0x0100000001010000,
    0x01000000010101ff, 0x0100000001010101, 0x01000001ffffff00, 0x01000001ffff00ff,
    0x01000001ff00ffff, 0x01000001ff000000, 0x01000001ff000100, 0x01000001ff01ffff,
    0x01000001ff010001, 0x01000001ff010100, 0x0100000100ff0000, 0x0100000100ff01ff,
    0x0100000100ff0100, 0x010000010000ff00, 0x010000010000ff01, 0x0100000100000000,
    0x0100000100000001, 0x0100000100000100, 0x0100000100010000, 0x01000001000101ff,
    0x0100000101ffff01, 0x0100000101ff00ff, 0x0100000101ff0100, 0x0100000101ff0101,
    0x010000010100ff01, 0x01000001010000ff, 0x0100000101000000, 0x01000001010100ff,
    0x0100000101010001, 0x0100000101010100, 0x010001ffffff0000, 0x010001ffff000001,
    0x010001ffff000100, 0x010001ffff010000, 0x010001ff00ffff00, 0x010001ff00ff0001,
    0x010001ff0000ffff, 0x010001ff0000ff01, 0x010001ff00000000, 0x010001ff00000001,
    0x010001ff00000101, 0x010001ff000100ff, 0x010001ff00010000, 0x010001ff01ff0000,
    0x010001ff0100ff00, 0x010001ff01000001, 0x010001ff01000100, 0x010001ff01010000,
    0x01000100ffff00ff, 0x01000100ffff0001, 0x01000100ffff0100, 0x01000100ff00ffff,
    0x01000100ff00ff01, 0x01000100ff000000, 0x01000100ff0001ff, 0x01000100ff000101,
    0x01000100ff01ffff, 0x01000100ff01ff00, 0x01000100ff0100ff, 0x01000100ff010001,
    0x0100010000ffffff, 0x0100010000ffff01, 0x0100010000ff0000, 0x0100010000ff01ff,
    0x0100010000ff0101, 0x010001000000ff00, 0x01000100000000ff, 0x0100010000000000,
    0x0100010000000001, 0x0100010000000100, 0x010001000001ff01, 0x0100010000010000,
    0x0100010000010001, 0x0100010000010101, 0x0100010001ffff00, 0x0100010001ff00ff,
    0x010001000100ffff, 0x010001000100ff01, 0x0100010001000000, 0x0100010001000101,
    0x010001000101ff00, 0x0100010001010001, 0x01000101ffff0000, 0x01000101ff000000,
    0x01000101ff010000, 0x0100010100ff00ff, 0x0100010100ff0001, 0x0100010100ff0100,
    0x010001010000ffff, 0x0100010100000000, 0x01000101000001ff, 0x010001010001ff00,
    0x0100010101ff0000, 0x010001010100ff00, 0x01000101010000ff, 0x0100010101000000,
    0x0100010101000001, 0x0101ffffffffffff, 0x0101ffffffffff01, 0x0101ffffffff01ff,
    0x0101ffffffff0101, 0x0101ffffff000000, 0x0101ffffff01ffff, 0x0101ffffff01ff01,
    0x0101ffffff0101ff, 0x0101ffffff010101, 0x0101ffff00ff0000, 0x0101ffff0000ff00,
    0x0101ffff000000ff, 0x0101ffff00000001, 0x0101ffff00000100, 0x0101ffff01ffffff,
    0x0101ffff01ffff01, 0x0101ffff01ff01ff, 0x0101ffff01ff0101, 0x0101ffff01000000,
    0x0101ffff0101ffff, 0x0101ffff0101ff01, 0x0101ffff010101ff, 0x0101ffff01010101,
    0x0101ff00ffff0000, 0x0101ff00ffff0100, 0x0101ff00ff00ff00, 0x0101ff00ff0000ff,
    0x0101ff00ff000001, 0x0101ff00ff000100, 0x0101ff00ff000101, 0x0101ff0000ff0001,
    0x0101ff0000ff0100, 0x0101ff000000ff00, 0x0101ff0000000000, 0x0101ff00000001ff,
    0x0101ff0000000101, 0x0101ff000001ff00, 0x0101ff00000100ff, 0x0101ff0001ff0000,
    0x0101ff000100ffff, 0x0101ff000100ff01, 0x0101ff0001000001, 0x0101ff0001000100,
    0x0101ff01ffffff01, 0x0101ff01ffff01ff, 0x0101ff01ffff0101, 0x0101ff01ff00ffff,
    0x0101ff01ff000100, 0x0101ff01ff01ff01, 0x0101ff01ff0101ff, 0x0101ff01ff010101,
    0x0101ff0100ff0000, 0x0101ff010000ff00, 0x0101ff0100000001, 0x0101ff0100000100,
    0x0101ff0100010000, 0x0101ff0101ffffff, 0x0101ff0101ffff01, 0x0101ff0101ff01ff,
    0x0101ff0101ff0101, 0x0101ff0101000000, 0x0101ff010101ffff, 0x0101ff010101ff01,
    0x0101ff01010101ff, 0x0101ff0101010101, 0x010100ffff000100, 0x010100ffff010000,
    0x010100ff00ffff00, 0x010100ff00ff00ff, 0x010100ff0000ffff, 0x010100ff000000ff,
    0x010100ff00000000, 0x010100ff000001ff, 0x010100ff00000101, 0x010100ff0001ff00,
    0x010100ff00010000, 0x010100ff00010001, 0x010100ff000101ff, 0x010100ff00010100,
    0x010100ff01ff0000, 0x01010000ffff0001, 0x01010000ffff0100, 0x01010000ff00ffff,
    0x01010000ff00ff01, 0x01010000ff000000, 0x01010000ff0001ff, 0x01010000ff010001,
    0x01010000ff010100, 0x0101000000ffff01, 0x0101000000ff0000, 0x010100000000ff00,
    0x01010000000000ff, 0x0101000000000000, 0x0101000000000001, 0x0101000000000100,
    0x0101000000010000, 0x0101000000010101, 0x0101000001ffff00, 0x0101000001ff00ff,
    0x0101000001ff0000, 0x0101000001ff0001, 0x0101000001ff0100, 0x010100000100ff01,
    0x0101000001000000, 0x01010000010001ff, 0x01010001ffff0000, 0x01010001ff00ff00,
    0x01010001ff000001, 0x01010001ff000101, 0x01010001ff01ff00, 0x01010001ff010000,
    0x0101000100ff00ff, 0x0101000100ff0001, 0x0101000100ff0101, 0x010100010000ff01,
    0x0101000100000000, 0x0101000100000001, 0x01010001000001ff, 0x010100010001ffff,
    0x010100010001ff01, 0x0101000101ff0001, 0x010100010100ffff, 0x0101000101000000,
    0x0101000101000001, 0x0101000101000100, 0x010100010101ff00, 0x01010001010100ff,
    0x0101000101010001, 0x010101ffffffffff, 0x010101ffffffff01, 0x010101ffffff01ff,
    0x010101ffffff0101, 0x010101ffff01ffff, 0x010101ffff01ff01, 0x010101ffff0101ff,
    0x010101ffff010101, 0x010101ff0000ff00, 0x010101ff000000ff, 0x010101ff00000001,
    0x010101ff00000100, 0x010101ff01ffffff, 0x010101ff01ffff01, 0x010101ff01ff01ff,
    0x010101ff01ff0101, 0x010101ff01000000, 0x010101ff0101ffff, 0x010101ff0101ff01,
    0x010101ff010101ff, 0x010101ff01010101, 0x01010100ffff0000, 0x01010100ff0000ff,
    0x01010100ff000100, 0x01010100ff01ff00, 0x01010100ff010000, 0x0101010000ffff00,
    0x010101000000ffff, 0x0101010000000000, 0x0101010000000101, 0x010101000001ff00,
    0x0101010000010001, 0x0101010000010100, 0x010101000100ffff, 0x0101010001000001,
    0x01010101ffffffff, 0x01010101ffffff01, 0x01010101ffff01ff, 0x01010101ffff0101,
    0x01010101ff01ffff, 0x01010101ff01ff01, 0x01010101ff0101ff, 0x01010101ff010101,
    0x010101010000ff00, 0x01010101000000ff, 0x0101010100000001, 0x0101010101ffffff,
    0x0101010101ffff01, 0x0101010101ff01ff, 0x0101010101ff0101, 0x0101010101000000,
    0x010101010101ffff, 0x010101010101ff01, 0x01010101010101ff, 0x0101010101010101,
};

static const uint8_t infer__ksigns_iq2xs[128] = {
      0, 129, 130,   3, 132,   5,   6, 135, 136,   9,  10, 139,  12, 141, 142,  15,
    144,  17,  18, 147,  20, 149, 150,  23,  24, 153, 154,  27, 156,  29,  30, 159,
    160,  33,  34, 163,  36, 165, 166,  39,  40, 169, 170,  43, 172,  45,  46, 175,
     48, 177, 178,  51, 180,  53,  54, 183, 184,  57,  58, 187,  60, 189, 190,  63,
    192,  65,  66, 195,  68, 197, 198,  71,  72, 201, 202,  75, 204,  77,  78, 207,
     80, 209, 210,  83, 212,  85,  86, 215, 216,  89,  90, 219,  92, 221, 222,  95,
     96, 225, 226,  99, 228, 101, 102, 231, 232, 105, 106, 235, 108, 237, 238, 111,
    240, 113, 114, 243, 116, 245, 246, 119, 120, 249, 250, 123, 252, 125, 126, 255,
};
/* >>unicode_tables -- generated by tools/gen_unicode.py from Python's unicodedata
 * (Unicode 14.0.0). Do not edit; rerun the script.
 * Layouts are described in the script's docstring and at infer__uc_category(). */
static const uint32_t infer__uc_cat[2213] = {
    0x0000000, 0x0000106, 0x000010C, 0x0000125, 0x000012C, 0x000015D, 0x0000164, 0x0000183,
    0x00001D4, 0x00001E5, 0x00001FC, 0x0000209, 0x00002DC, 0x00002F5, 0x00002FC, 0x0000305,
    0x0000309, 0x00003DC, 0x00003E5, 0x00003EC, 0x00003F5, 0x00003F8, 0x0000506, 0x000050C,
    0x0000515, 0x000053C, 0x0000545, 0x0000551, 0x000055C, 0x0000565, 0x0000568, 0x0000575,
    0x0000593, 0x00005A5, 0x00005A9, 0x00005B4, 0x00005C5, 0x00005CB, 0x00005D1, 0x00005DC,
    0x00005E3, 0x00005FC, 0x0000601, 0x00006BD, 0x00006C1, 0x00007BD, 0x00007C1, 0x0001615,
    0x0001631, 0x0001695, 0x0001701, 0x000172D, 0x0001761, 0x000176D, 0x0001771, 0x000177D,
    0x0001802, 0x0001B81, 0x0001BAD, 0x0001BB1, 0x0001BC0, 0x0001BD1, 0x0001BF4, 0x0001BF9,
    0x0001C00, 0x0001C25, 0x0001C31, 0x0001C3C, 0x0001C41, 0x0001C58, 0x0001C61, 0x0001C68,
    0x0001C71, 0x0001D10, 0x0001D19, 0x0001FB5, 0x0001FB9, 0x0002415, 0x000241A, 0x0002451,
    0x0002980, 0x0002989, 0x0002AB8, 0x0002AC9, 0x0002AD4, 0x0002B01, 0x0002C4C, 0x0002C58,
    0x0002C6D, 0x0002C80, 0x0002C8A, 0x0002DF4, 0x0002DFA, 0x0002E04, 0x0002E0A, 0x0002E1C,
    0x0002E22, 0x0002E34, 0x0002E3A, 0x0002E40, 0x0002E81, 0x0002F58, 0x0002F79, 0x0002F9C,
    0x0002FA8, 0x0003035, 0x000304C, 0x000305D, 0x0003064, 0x0003075, 0x0003082, 0x00030DC,
    0x00030E0, 0x00030EC, 0x0003101, 0x000325A, 0x0003303, 0x0003354, 0x0003371, 0x0003382,
    0x0003389, 0x00036A4, 0x00036A9, 0x00036B2, 0x00036E8, 0x00036F5, 0x00036FA, 0x0003729,
    0x000373A, 0x000374D, 0x0003752, 0x0003771, 0x0003783, 0x00037D1, 0x00037ED, 0x00037F9,
    0x0003804, 0x0003870, 0x0003881, 0x000388A, 0x0003891, 0x0003982, 0x0003A58, 0x0003A69,
    0x0003D32, 0x0003D89, 0x0003D90, 0x0003E03, 0x0003E51, 0x0003F5A, 0x0003FA1, 0x0003FB5,
    0x0003FBC, 0x0003FD1, 0x0003FD8, 0x0003FEA, 0x0003FF5, 0x0004001, 0x00040B2, 0x00040D1,
    0x00040DA, 0x0004121, 0x000412A, 0x0004141, 0x000414A, 0x0004170, 0x0004184, 0x00041F8,
    0x0004201, 0x00042CA, 0x00042E0, 0x00042F4, 0x00042F8, 0x0004301, 0x0004358, 0x0004381,
    0x0004445, 0x0004449, 0x0004478, 0x00044C2, 0x0004501, 0x0004652, 0x0004710, 0x000471A,
    0x0004821, 0x00049D2, 0x00049E9, 0x00049F2, 0x0004A81, 0x0004A8A, 0x0004AC1, 0x0004B12,
    0x0004B24, 0x0004B33, 0x0004B84, 0x0004B89, 0x0004C0A, 0x0004C20, 0x0004C29, 0x0004C68,
    0x0004C79, 0x0004C88, 0x0004C99, 0x0004D48, 0x0004D51, 0x0004D88, 0x0004D91, 0x0004D98,
    0x0004DB1, 0x0004DD0, 0x0004DE2, 0x0004DE9, 0x0004DF2, 0x0004E28, 0x0004E3A, 0x0004E48,
    0x0004E5A, 0x0004E71, 0x0004E78, 0x0004EBA, 0x0004EC0, 0x0004EE1, 0x0004EF0, 0x0004EF9,
    0x0004F12, 0x0004F20, 0x0004F33, 0x0004F81, 0x0004F95, 0x0004FA3, 0x0004FD5, 0x0004FE1,
    0x0004FEC, 0x0004FF2, 0x0004FF8, 0x000500A, 0x0005020, 0x0005029, 0x0005058, 0x0005079,
    0x0005088, 0x0005099, 0x0005148, 0x0005151, 0x0005188, 0x0005191, 0x00051A0, 0x00051A9,
    0x00051B8, 0x00051C1, 0x00051D0, 0x00051E2, 0x00051E8, 0x00051F2, 0x0005218, 0x000523A,
    0x0005248, 0x000525A, 0x0005270, 0x000528A, 0x0005290, 0x00052C9, 0x00052E8, 0x00052F1,
    0x00052F8, 0x0005333, 0x0005382, 0x0005391, 0x00053AA, 0x00053B4, 0x00053B8, 0x000540A,
    0x0005420, 0x0005429, 0x0005470, 0x0005479, 0x0005490, 0x0005499, 0x0005548, 0x0005551,
    0x0005588, 0x0005591, 0x00055A0, 0x00055A9, 0x00055D0, 0x00055E2, 0x00055E9, 0x00055F2,
    0x0005630, 0x000563A, 0x0005650, 0x000565A, 0x0005670, 0x0005681, 0x0005688, 0x0005701,
    0x0005712, 0x0005720, 0x0005733, 0x0005784, 0x000578D, 0x0005790, 0x00057C9, 0x00057D2,
    0x0005800, 0x000580A, 0x0005820, 0x0005829, 0x0005868, 0x0005879, 0x0005888, 0x0005899,
    0x0005948, 0x0005951, 0x0005988, 0x0005991, 0x00059A0, 0x00059A9, 0x00059D0, 0x00059E2,
    0x00059E9, 0x00059F2, 0x0005A28, 0x0005A3A, 0x0005A48, 0x0005A5A, 0x0005A70, 0x0005AAA,
    0x0005AC0, 0x0005AE1, 0x0005AF0, 0x0005AF9, 0x0005B12, 0x0005B20, 0x0005B33, 0x0005B85,
    0x0005B89, 0x0005B93, 0x0005BC0, 0x0005C12, 0x0005C19, 0x0005C20, 0x0005C29, 0x0005C58,
    0x0005C71, 0x0005C88, 0x0005C91, 0x0005CB0, 0x0005CC9, 0x0005CD8, 0x0005CE1, 0x0005CE8,
    0x0005CF1, 0x0005D00, 0x0005D19, 0x0005D28, 0x0005D41, 0x0005D58, 0x0005D71, 0x0005DD0,
    0x0005DF2, 0x0005E18, 0x0005E32, 0x0005E48, 0x0005E52, 0x0005E70, 0x0005E81, 0x0005E88,
    0x0005EBA, 0x0005EC0, 0x0005F33, 0x0005F9D, 0x0005FD8, 0x0006002, 0x0006029, 0x0006068,
    0x0006071, 0x0006088, 0x0006091, 0x0006148, 0x0006151, 0x00061D0, 0x00061E2, 0x00061E9,
    0x00061F2, 0x0006228, 0x0006232, 0x0006248, 0x0006252, 0x0006270, 0x00062AA, 0x00062B8,
    0x00062C1, 0x00062D8, 0x00062E9, 0x00062F0, 0x0006301, 0x0006312, 0x0006320, 0x0006333,
    0x0006380, 0x00063BC, 0x00063C3, 0x00063FD, 0x0006401, 0x000640A, 0x0006424, 0x0006429,
    0x0006468, 0x0006471, 0x0006488, 0x0006491, 0x0006548, 0x0006551, 0x00065A0, 0x00065A9,
    0x00065D0, 0x00065E2, 0x00065E9, 0x00065F2, 0x0006628, 0x0006632, 0x0006648, 0x0006652,
    0x0006670, 0x00066AA, 0x00066B8, 0x00066E9, 0x00066F8, 0x0006701, 0x0006712, 0x0006720,
    0x0006733, 0x0006780, 0x0006789, 0x0006798, 0x0006802, 0x0006821, 0x0006868, 0x0006871,
    0x0006888, 0x0006891, 0x00069DA, 0x00069E9, 0x00069F2, 0x0006A28, 0x0006A32, 0x0006A48,
    0x0006A52, 0x0006A71, 0x0006A7D, 0x0006A80, 0x0006AA1, 0x0006ABA, 0x0006AC3, 0x0006AF9,
    0x0006B12, 0x0006B20, 0x0006B33, 0x0006BCD, 0x0006BD1, 0x0006C00, 0x0006C0A, 0x0006C20,
    0x0006C29, 0x0006CB8, 0x0006CD1, 0x0006D90, 0x0006D99, 0x0006DE0, 0x0006DE9, 0x0006DF0,
    0x0006E01, 0x0006E38, 0x0006E52, 0x0006E58, 0x0006E7A, 0x0006EA8, 0x0006EB2, 0x0006EB8,
    0x0006EC2, 0x0006F00, 0x0006F33, 0x0006F80, 0x0006F92, 0x0006FA4, 0x0006FA8, 0x0007009,
    0x000718A, 0x0007191, 0x00071A2, 0x00071D8, 0x00071FD, 0x0007201, 0x000723A, 0x000727C,
    0x0007283, 0x00072D4, 0x00072E0, 0x0007409, 0x0007418, 0x0007421, 0x0007428, 0x0007431,
    0x0007458, 0x0007461, 0x0007520, 0x0007529, 0x0007530, 0x0007539, 0x000758A, 0x0007591,
    0x00075A2, 0x00075E9, 0x00075F0, 0x0007601, 0x0007628, 0x0007631, 0x0007638, 0x0007642,
    0x0007670, 0x0007683, 0x00076D0, 0x00076E1, 0x0007700, 0x0007801, 0x000780D, 0x0007824,
    0x000789D, 0x00078A4, 0x00078AD, 0x00078C2, 0x00078D5, 0x0007903, 0x00079A5, 0x00079AA,
    0x00079B5, 0x00079BA, 0x00079C5, 0x00079CA, 0x00079D4, 0x00079F2, 0x0007A01, 0x0007A40,
    0x0007A49, 0x0007B68, 0x0007B8A, 0x0007C2C, 0x0007C32, 0x0007C41, 0x0007C6A, 0x0007CC0,
    0x0007CCA, 0x0007DE8, 0x0007DF5, 0x0007E32, 0x0007E3D, 0x0007E68, 0x0007E75, 0x0007E84,
    0x0007EAD, 0x0007ECC, 0x0007ED8, 0x0008001, 0x000815A, 0x00081F9, 0x0008203, 0x0008254,
    0x0008281, 0x00082B2, 0x00082D1, 0x00082F2, 0x0008309, 0x0008312, 0x0008329, 0x000833A,
    0x0008371, 0x000838A, 0x00083A9, 0x0008412, 0x0008471, 0x000847A, 0x0008483, 0x00084D2,
    0x00084F5, 0x0008501, 0x0008630, 0x0008639, 0x0008640, 0x0008669, 0x0008670, 0x0008681,
    0x00087DC, 0x00087E1, 0x0009248, 0x0009251, 0x0009270, 0x0009281, 0x00092B8, 0x00092C1,
    0x00092C8, 0x00092D1, 0x00092F0, 0x0009301, 0x0009448, 0x0009451, 0x0009470, 0x0009481,
    0x0009588, 0x0009591, 0x00095B0, 0x00095C1, 0x00095F8, 0x0009601, 0x0009608, 0x0009611,
    0x0009630, 0x0009641, 0x00096B8, 0x00096C1, 0x0009888, 0x0009891, 0x00098B0, 0x00098C1,
    0x0009AD8, 0x0009AEA, 0x0009B04, 0x0009B4B, 0x0009BE8, 0x0009C01, 0x0009C85, 0x0009CD0,
    0x0009D01, 0x0009FB0, 0x0009FC1, 0x0009FF0, 0x000A004, 0x000A009, 0x000B36D, 0x000B374,
    0x000B379, 0x000B406, 0x000B409, 0x000B4DC, 0x000B4E8, 0x000B501, 0x000B75C, 0x000B773,
    0x000B789, 0x000B7C8, 0x000B801, 0x000B892, 0x000B8B0, 0x000B8F9, 0x000B992, 0x000B9AC,
    0x000B9B8, 0x000BA01, 0x000BA92, 0x000BAA0, 0x000BB01, 0x000BB68, 0x000BB71, 0x000BB88,
    0x000BB92, 0x000BBA0, 0x000BC01, 0x000BDA2, 0x000BEA4, 0x000BEB9, 0x000BEC4, 0x000BEDD,
    0x000BEE1, 0x000BEEA, 0x000BEF0, 0x000BF03, 0x000BF50, 0x000BF83, 0x000BFD0, 0x000C004,
    0x000C05A, 0x000C070, 0x000C07A, 0x000C083, 0x000C0D0, 0x000C101, 0x000C3C8, 0x000C401,
    0x000C42A, 0x000C439, 0x000C54A, 0x000C551, 0x000C558, 0x000C581, 0x000C7B0, 0x000C801,
    0x000C8F8, 0x000C902, 0x000C960, 0x000C982, 0x000C9E0, 0x000CA05, 0x000CA08, 0x000CA24,
    0x000CA33, 0x000CA81, 0x000CB70, 0x000CB81, 0x000CBA8, 0x000CC01, 0x000CD60, 0x000CD81,
    0x000CE50, 0x000CE83, 0x000CED8, 0x000CEF5, 0x000D001, 0x000D0BA, 0x000D0E0, 0x000D0F4,
    0x000D101, 0x000D2AA, 0x000D2F8, 0x000D302, 0x000D3E8, 0x000D3FA, 0x000D403, 0x000D450,
    0x000D483, 0x000D4D0, 0x000D504, 0x000D539, 0x000D544, 0x000D570, 0x000D582, 0x000D678,
    0x000D802, 0x000D829, 0x000D9A2, 0x000DA29, 0x000DA68, 0x000DA83, 0x000DAD4, 0x000DB0D,
    0x000DB5A, 0x000DBA5, 0x000DBEC, 0x000DBF8, 0x000DC02, 0x000DC19, 0x000DD0A, 0x000DD71,
    0x000DD83, 0x000DDD1, 0x000DF32, 0x000DFA0, 0x000DFE4, 0x000E001, 0x000E122, 0x000E1C0,
    0x000E1DC, 0x000E203, 0x000E250, 0x000E269, 0x000E283, 0x000E2D1, 0x000E3F4, 0x000E401,
    0x000E448, 0x000E481, 0x000E5D8, 0x000E5E9, 0x000E604, 0x000E640, 0x000E682, 0x000E69C,
    0x000E6A2, 0x000E749, 0x000E76A, 0x000E771, 0x000E7A2, 0x000E7A9, 0x000E7BA, 0x000E7D1,
    0x000E7D8, 0x000E801, 0x000EE02, 0x000F001, 0x000F8B0, 0x000F8C1, 0x000F8F0, 0x000F901,
    0x000FA30, 0x000FA41, 0x000FA70, 0x000FA81, 0x000FAC0, 0x000FAC9, 0x000FAD0, 0x000FAD9,
    0x000FAE0, 0x000FAE9, 0x000FAF0, 0x000FAF9, 0x000FBF0, 0x000FC01, 0x000FDA8, 0x000FDB1,
    0x000FDED, 0x000FDF1, 0x000FDFD, 0x000FE11, 0x000FE28, 0x000FE31, 0x000FE6D, 0x000FE81,
    0x000FEA0, 0x000FEB1, 0x000FEE0, 0x000FEED, 0x000FF01, 0x000FF6D, 0x000FF80, 0x000FF91,
    0x000FFA8, 0x000FFB1, 0x000FFED, 0x000FFF8, 0x0010006, 0x0010058, 0x0010084, 0x0010146,
    0x0010150, 0x001017E, 0x0010184, 0x0010225, 0x001022C, 0x0010295, 0x001029C, 0x00102FE,
    0x0010300, 0x0010383, 0x0010389, 0x0010390, 0x00103A3, 0x00103D5, 0x00103EC, 0x00103F9,
    0x0010403, 0x0010455, 0x001046C, 0x0010478, 0x0010481, 0x00104E8, 0x0010505, 0x0010608,
    0x0010682, 0x0010788, 0x0010805, 0x0010811, 0x001081D, 0x0010839, 0x0010845, 0x0010851,
    0x00108A5, 0x00108A9, 0x00108B5, 0x00108C9, 0x00108F5, 0x0010921, 0x001092D, 0x0010931,
    0x001093D, 0x0010941, 0x001094D, 0x0010951, 0x0010975, 0x0010979, 0x00109D5, 0x00109E1,
    0x0010A05, 0x0010A29, 0x0010A55, 0x0010A71, 0x0010A7D, 0x0010A83, 0x0010C19, 0x0010C2B,
    0x0010C55, 0x0010C60, 0x0010C85, 0x0011844, 0x0011865, 0x001194C, 0x001195D, 0x0012138,
    0x0012205, 0x0012258, 0x0012303, 0x00124E5, 0x0012753, 0x0012805, 0x0013B44, 0x0013BB3,
    0x0013CA5, 0x0013E2C, 0x0013E3D, 0x0013F34, 0x0013F85, 0x0014C1C, 0x0014CCD, 0x0014EC4,
    0x0014EE5, 0x0014FE4, 0x0014FF5, 0x0015BA0, 0x0015BB5, 0x0015CB0, 0x0015CBD, 0x0016001,
    0x001672D, 0x0016759, 0x001677A, 0x0016791, 0x00167A0, 0x00167CC, 0x00167EB, 0x00167F4,
    0x0016801, 0x0016930, 0x0016939, 0x0016940, 0x0016969, 0x0016970, 0x0016981, 0x0016B40,
    0x0016B79, 0x0016B84, 0x0016B88, 0x0016BFA, 0x0016C01, 0x0016CB8, 0x0016D01, 0x0016D38,
    0x0016D41, 0x0016D78, 0x0016D81, 0x0016DB8, 0x0016DC1, 0x0016DF8, 0x0016E01, 0x0016E38,
    0x0016E41, 0x0016E78, 0x0016E81, 0x0016EB8, 0x0016EC1, 0x0016EF8, 0x0016F02, 0x0017004,
    0x0017179, 0x0017184, 0x0017285, 0x0017294, 0x00172F0, 0x0017405, 0x00174D0, 0x00174DD,
    0x00177A0, 0x0017805, 0x0017EB0, 0x0017F85, 0x0017FE0, 0x0018006, 0x001800C, 0x0018025,
    0x0018029, 0x001803B, 0x0018044, 0x0018095, 0x00180A4, 0x0018105, 0x001810B, 0x0018152,
    0x0018184, 0x0018189, 0x00181B5, 0x00181C3, 0x00181D9, 0x00181EC, 0x00181F5, 0x0018200,
    0x0018209, 0x00184B8, 0x00184CA, 0x00184DD, 0x00184E9, 0x0018504, 0x0018509, 0x00187DC,
    0x00187E1, 0x0018800, 0x0018829, 0x0018980, 0x0018989, 0x0018C78, 0x0018C85, 0x0018C93,
    0x0018CB5, 0x0018D01, 0x0018E05, 0x0018F20, 0x0018F81, 0x0019005, 0x00190F8, 0x0019103,
    0x0019155, 0x0019243, 0x0019285, 0x001928B, 0x0019305, 0x0019403, 0x0019455, 0x001958B,
    0x0019605, 0x001A001, 0x0026E05, 0x0027001, 0x0052468, 0x0052485, 0x0052638, 0x0052681,
    0x00527F4, 0x0052801, 0x005306C, 0x0053081, 0x0053103, 0x0053151, 0x0053160, 0x0053201,
    0x005337A, 0x005339C, 0x00533A2, 0x00533F4, 0x00533F9, 0x00534F2, 0x0053501, 0x0053733,
    0x0053782, 0x0053794, 0x00537C0, 0x0053805, 0x00538B9, 0x0053905, 0x0053911, 0x0053C4D,
    0x0053C59, 0x0053E58, 0x0053E81, 0x0053E90, 0x0053E99, 0x0053EA0, 0x0053EA9, 0x0053ED0,
    0x0053F91, 0x0054012, 0x0054019, 0x0054032, 0x0054039, 0x005405A, 0x0054061, 0x005411A,
    0x0054145, 0x0054162, 0x0054168, 0x0054183, 0x00541B5, 0x00541D0, 0x0054201, 0x00543A4,
    0x00543C0, 0x0054402, 0x0054411, 0x00545A2, 0x0054630, 0x0054674, 0x0054683, 0x00546D0,
    0x0054702, 0x0054791, 0x00547C4, 0x00547D9, 0x00547E4, 0x00547E9, 0x00547FA, 0x0054803,
    0x0054851, 0x0054932, 0x0054974, 0x0054981, 0x0054A3A, 0x0054AA0, 0x0054AFC, 0x0054B01,
    0x0054BE8, 0x0054C02, 0x0054C21, 0x0054D9A, 0x0054E0C, 0x0054E70, 0x0054E79, 0x0054E83,
    0x0054ED0, 0x0054EF4, 0x0054F01, 0x0054F2A, 0x0054F31, 0x0054F83, 0x0054FD1, 0x0054FF8,
    0x0055001, 0x005514A, 0x00551B8, 0x0055201, 0x005521A, 0x0055221, 0x0055262, 0x0055270,
    0x0055283, 0x00552D0, 0x00552E4, 0x0055301, 0x00553BD, 0x00553D1, 0x00553DA, 0x00553F1,
    0x0055582, 0x0055589, 0x0055592, 0x00555A9, 0x00555BA, 0x00555C9, 0x00555F2, 0x0055601,
    0x005560A, 0x0055611, 0x0055618, 0x00556D9, 0x00556F4, 0x0055701, 0x005575A, 0x0055784,
    0x0055791, 0x00557AA, 0x00557B8, 0x0055809, 0x0055838, 0x0055849, 0x0055878, 0x0055889,
    0x00558B8, 0x0055901, 0x0055938, 0x0055941, 0x0055978, 0x0055981, 0x0055ADD, 0x0055AE1,
    0x0055B55, 0x0055B60, 0x0055B81, 0x0055F1A, 0x0055F5C, 0x0055F62, 0x0055F70, 0x0055F83,
    0x0055FD0, 0x0056001, 0x006BD20, 0x006BD81, 0x006BE38, 0x006BE59, 0x006BFE0, 0x007C801,
    0x007D370, 0x007D381, 0x007D6D0, 0x007D801, 0x007D838, 0x007D899, 0x007D8C0, 0x007D8E9,
    0x007D8F2, 0x007D8F9, 0x007D94D, 0x007D951, 0x007D9B8, 0x007D9C1, 0x007D9E8, 0x007D9F1,
    0x007D9F8, 0x007DA01, 0x007DA10, 0x007DA19, 0x007DA28, 0x007DA31, 0x007DD95, 0x007DE18,
    0x007DE99, 0x007E9F4, 0x007EA05, 0x007EA81, 0x007EC80, 0x007EC91, 0x007EE40, 0x007EE7D,
    0x007EE80, 0x007EF81, 0x007EFE5, 0x007F002, 0x007F084, 0x007F0D0, 0x007F102, 0x007F184,
    0x007F298, 0x007F2A4, 0x007F315, 0x007F31C, 0x007F325, 0x007F338, 0x007F344, 0x007F34D,
    0x007F354, 0x007F360, 0x007F381, 0x007F3A8, 0x007F3B1, 0x007F7E8, 0x007F80C, 0x007F825,
    0x007F82C, 0x007F85D, 0x007F864, 0x007F883, 0x007F8D4, 0x007F8E5, 0x007F8FC, 0x007F909,
    0x007F9DC, 0x007F9F5, 0x007F9FC, 0x007FA05, 0x007FA09, 0x007FADC, 0x007FAE5, 0x007FAEC,
    0x007FAF5, 0x007FAFC, 0x007FB31, 0x007FDF8, 0x007FE11, 0x007FE40, 0x007FE51, 0x007FE80,
    0x007FE91, 0x007FEC0, 0x007FED1, 0x007FEE8, 0x007FF05, 0x007FF38, 0x007FF45, 0x007FF78,
    0x007FFE5, 0x007FFF0, 0x0080001, 0x0080060, 0x0080069, 0x0080138, 0x0080141, 0x00801D8,
    0x00801E1, 0x00801F0, 0x00801F9, 0x0080270, 0x0080281, 0x00802F0, 0x0080401, 0x00807D8,
    0x0080804, 0x0080818, 0x008083B, 0x00809A0, 0x00809BD, 0x0080A03, 0x0080BCD, 0x0080C53,
    0x0080C65, 0x0080C78, 0x0080C85, 0x0080CE8, 0x0080D05, 0x0080D08, 0x0080E85, 0x0080FEA,
    0x0080FF0, 0x0081401, 0x00814E8, 0x0081501, 0x0081688, 0x0081702, 0x008170B, 0x00817E0,
    0x0081801, 0x0081903, 0x0081920, 0x0081969, 0x0081A0B, 0x0081A11, 0x0081A53, 0x0081A58,
    0x0081A81, 0x0081BB2, 0x0081BD8, 0x0081C01, 0x0081CF0, 0x0081CFC, 0x0081D01, 0x0081E20,
    0x0081E41, 0x0081E84, 0x0081E8B, 0x0081EB0, 0x0082001, 0x00824F0, 0x0082503, 0x0082550,
    0x0082581, 0x00826A0, 0x00826C1, 0x00827E0, 0x0082801, 0x0082940, 0x0082981, 0x0082B20,
    0x0082B7C, 0x0082B81, 0x0082BD8, 0x0082BE1, 0x0082C58, 0x0082C61, 0x0082C98, 0x0082CA1,
    0x0082CB0, 0x0082CB9, 0x0082D10, 0x0082D19, 0x0082D90, 0x0082D99, 0x0082DD0, 0x0082DD9,
    0x0082DE8, 0x0083001, 0x00839B8, 0x0083A01, 0x0083AB0, 0x0083B01, 0x0083B40, 0x0083C01,
    0x0083C30, 0x0083C39, 0x0083D88, 0x0083D91, 0x0083DD8, 0x0084001, 0x0084030, 0x0084041,
    0x0084048, 0x0084051, 0x00841B0, 0x00841B9, 0x00841C8, 0x00841E1, 0x00841E8, 0x00841F9,
    0x00842B0, 0x00842BC, 0x00842C3, 0x0084301, 0x00843BD, 0x00843CB, 0x0084401, 0x00844F8,
    0x008453B, 0x0084580, 0x0084701, 0x0084798, 0x00847A1, 0x00847B0, 0x00847DB, 0x0084801,
    0x00848B3, 0x00848E0, 0x00848FC, 0x0084901, 0x00849D0, 0x00849FC, 0x0084A00, 0x0084C01,
    0x0084DC0, 0x0084DE3, 0x0084DF1, 0x0084E03, 0x0084E80, 0x0084E93, 0x0085001, 0x008500A,
    0x0085020, 0x008502A, 0x0085038, 0x0085062, 0x0085081, 0x00850A0, 0x00850A9, 0x00850C0,
    0x00850C9, 0x00851B0, 0x00851C2, 0x00851D8, 0x00851FA, 0x0085203, 0x0085248, 0x0085284,
    0x00852C8, 0x0085301, 0x00853EB, 0x00853FC, 0x0085401, 0x00854EB, 0x0085500, 0x0085601,
    0x0085645, 0x0085649, 0x008572A, 0x0085738, 0x008575B, 0x0085784, 0x00857B8, 0x0085801,
    0x00859B0, 0x00859CC, 0x0085A01, 0x0085AB0, 0x0085AC3, 0x0085B01, 0x0085B98, 0x0085BC3,
    0x0085C01, 0x0085C90, 0x0085CCC, 0x0085CE8, 0x0085D4B, 0x0085D80, 0x0086001, 0x0086248,
    0x0086401, 0x0086598, 0x0086601, 0x0086798, 0x00867D3, 0x0086801, 0x0086922, 0x0086940,
    0x0086983, 0x00869D0, 0x0087303, 0x00873F8, 0x0087401, 0x0087550, 0x008755A, 0x008756C,
    0x0087570, 0x0087581, 0x0087590, 0x0087801, 0x00878EB, 0x0087939, 0x0087940, 0x0087981,
    0x0087A32, 0x0087A8B, 0x0087AAC, 0x0087AD0, 0x0087B81, 0x0087C12, 0x0087C34, 0x0087C50,
    0x0087D81, 0x0087E2B, 0x0087E60, 0x0087F01, 0x0087FB8, 0x0088002, 0x0088019, 0x00881C2,
    0x008823C, 0x0088270, 0x0088293, 0x0088382, 0x0088389, 0x008839A, 0x00883A9, 0x00883B0,
    0x00883FA, 0x0088419, 0x0088582, 0x00885DC, 0x00885E8, 0x00885F4, 0x0088612, 0x0088618,
    0x0088681, 0x0088748, 0x0088783, 0x00887D0, 0x0088802, 0x0088819, 0x008893A, 0x00889A8,
    0x00889B3, 0x0088A04, 0x0088A21, 0x0088A2A, 0x0088A39, 0x0088A40, 0x0088A81, 0x0088B9A,
    0x0088BA4, 0x0088BB1, 0x0088BB8, 0x0088C02, 0x0088C19, 0x0088D9A, 0x0088E09, 0x0088E2C,
    0x0088E4A, 0x0088E6C, 0x0088E72, 0x0088E83, 0x0088ED1, 0x0088EDC, 0x0088EE1, 0x0088EEC,
    0x0088F00, 0x0088F0B, 0x0088FA8, 0x0089001, 0x0089090, 0x0089099, 0x0089162, 0x00891C4,
    0x00891F2, 0x00891F8, 0x0089401, 0x0089438, 0x0089441, 0x0089448, 0x0089451, 0x0089470,
    0x0089479, 0x00894F0, 0x00894F9, 0x008954C, 0x0089550, 0x0089581, 0x00896FA, 0x0089758,
    0x0089783, 0x00897D0, 0x0089802, 0x0089820, 0x0089829, 0x0089868, 0x0089879, 0x0089888,
    0x0089899, 0x0089948, 0x0089951, 0x0089988, 0x0089991, 0x00899A0, 0x00899A9, 0x00899D0,
    0x00899DA, 0x00899E9, 0x00899F2, 0x0089A28, 0x0089A3A, 0x0089A48, 0x0089A5A, 0x0089A70,
    0x0089A81, 0x0089A88, 0x0089ABA, 0x0089AC0, 0x0089AE9, 0x0089B12, 0x0089B20, 0x0089B32,
    0x0089B68, 0x0089B82, 0x0089BA8, 0x008A001, 0x008A1AA, 0x008A239, 0x008A25C, 0x008A283,
    0x008A2D4, 0x008A2E0, 0x008A2EC, 0x008A2F2, 0x008A2F9, 0x008A310, 0x008A401, 0x008A582,
    0x008A621, 0x008A634, 0x008A639, 0x008A640, 0x008A683, 0x008A6D0, 0x008AC01, 0x008AD7A,
    0x008ADB0, 0x008ADC2, 0x008AE0C, 0x008AEC1, 0x008AEE2, 0x008AEF0, 0x008B001, 0x008B182,
    0x008B20C, 0x008B221, 0x008B228, 0x008B283, 0x008B2D0, 0x008B304, 0x008B368, 0x008B401,
    0x008B55A, 0x008B5C1, 0x008B5CC, 0x008B5D0, 0x008B603, 0x008B650, 0x008B801, 0x008B8D8,
    0x008B8EA, 0x008B960, 0x008B983, 0x008B9E4, 0x008B9FD, 0x008BA01, 0x008BA38, 0x008C001,
    0x008C162, 0x008C1DC, 0x008C1E0, 0x008C501, 0x008C703, 0x008C798, 0x008C7F9, 0x008C838,
    0x008C849, 0x008C850, 0x008C861, 0x008C8A0, 0x008C8A9, 0x008C8B8, 0x008C8C1, 0x008C982,
    0x008C9B0, 0x008C9BA, 0x008C9C8, 0x008C9DA, 0x008C9F9, 0x008CA02, 0x008CA09, 0x008CA12,
    0x008CA24, 0x008CA38, 0x008CA83, 0x008CAD0, 0x008CD01, 0x008CD40, 0x008CD51, 0x008CE8A,
    0x008CEC0, 0x008CED2, 0x008CF09, 0x008CF14, 0x008CF19, 0x008CF22, 0x008CF28, 0x008D001,
    0x008D00A, 0x008D059, 0x008D19A, 0x008D1D1, 0x008D1DA, 0x008D1FC, 0x008D23A, 0x008D240,
    0x008D281, 0x008D28A, 0x008D2E1, 0x008D452, 0x008D4D4, 0x008D4E9, 0x008D4F4, 0x008D518,
    0x008D581, 0x008D7C8, 0x008E001, 0x008E048, 0x008E051, 0x008E17A, 0x008E1B8, 0x008E1C2,
    0x008E201, 0x008E20C, 0x008E230, 0x008E283, 0x008E368, 0x008E384, 0x008E391, 0x008E480,
    0x008E492, 0x008E540, 0x008E54A, 0x008E5B8, 0x008E801, 0x008E838, 0x008E841, 0x008E850,
    0x008E859, 0x008E98A, 0x008E9B8, 0x008E9D2, 0x008E9D8, 0x008E9E2, 0x008E9F0, 0x008E9FA,
    0x008EA31, 0x008EA3A, 0x008EA40, 0x008EA83, 0x008EAD0, 0x008EB01, 0x008EB30, 0x008EB39,
    0x008EB48, 0x008EB51, 0x008EC52, 0x008EC78, 0x008EC82, 0x008EC90, 0x008EC9A, 0x008ECC1,
    0x008ECC8, 0x008ED03, 0x008ED50, 0x008F701, 0x008F79A, 0x008F7BC, 0x008F7C8, 0x008FD81,
    0x008FD88, 0x008FE03, 0x008FEAD, 0x008FF90, 0x008FFFC, 0x0090001, 0x0091CD0, 0x0092003,
    0x0092378, 0x0092384, 0x00923A8, 0x0092401, 0x0092A20, 0x0097C81, 0x0097F8C, 0x0097F98,
    0x0098001, 0x009A178, 0x00A2001, 0x00A3238, 0x00B4001, 0x00B51C8, 0x00B5201, 0x00B52F8,
    0x00B5303, 0x00B5350, 0x00B5374, 0x00B5381, 0x00B55F8, 0x00B5603, 0x00B5650, 0x00B5681,
    0x00B5770, 0x00B5782, 0x00B57AC, 0x00B57B0, 0x00B5801, 0x00B5982, 0x00B59BC, 0x00B59E5,
    0x00B5A01, 0x00B5A24, 0x00B5A2D, 0x00B5A30, 0x00B5A83, 0x00B5AD0, 0x00B5ADB, 0x00B5B10,
    0x00B5B19, 0x00B5BC0, 0x00B5BE9, 0x00B5C80, 0x00B7201, 0x00B7403, 0x00B74BC, 0x00B74D8,
    0x00B7801, 0x00B7A58, 0x00B7A7A, 0x00B7A81, 0x00B7A8A, 0x00B7C40, 0x00B7C7A, 0x00B7C99,
    0x00B7D00, 0x00B7F01, 0x00B7F14, 0x00B7F19, 0x00B7F22, 0x00B7F28, 0x00B7F82, 0x00B7F90,
    0x00B8001, 0x00C3FC0, 0x00C4001, 0x00C66B0, 0x00C6801, 0x00C6848, 0x00D7F81, 0x00D7FA0,
    0x00D7FA9, 0x00D7FE0, 0x00D7FE9, 0x00D7FF8, 0x00D8001, 0x00D8918, 0x00D8A81, 0x00D8A98,
    0x00D8B21, 0x00D8B40, 0x00D8B81, 0x00D97E0, 0x00DE001, 0x00DE358, 0x00DE381, 0x00DE3E8,
    0x00DE401, 0x00DE448, 0x00DE481, 0x00DE4D0, 0x00DE4E5, 0x00DE4EA, 0x00DE4FC, 0x00DE500,
    0x00E7802, 0x00E7970, 0x00E7982, 0x00E7A38, 0x00E7A85, 0x00E7E20, 0x00E8005, 0x00E87B0,
    0x00E8805, 0x00E8938, 0x00E894D, 0x00E8B2A, 0x00E8B55, 0x00E8B6A, 0x00E8B98, 0x00E8BDA,
    0x00E8C1D, 0x00E8C2A, 0x00E8C65, 0x00E8D52, 0x00E8D75, 0x00E8F58, 0x00E9005, 0x00E9212,
    0x00E922D, 0x00E9230, 0x00E9703, 0x00E97A0, 0x00E9805, 0x00E9AB8, 0x00E9B03, 0x00E9BC8,
    0x00EA001, 0x00EA2A8, 0x00EA2B1, 0x00EA4E8, 0x00EA4F1, 0x00EA500, 0x00EA511, 0x00EA518,
    0x00EA529, 0x00EA538, 0x00EA549, 0x00EA568, 0x00EA571, 0x00EA5D0, 0x00EA5D9, 0x00EA5E0,
    0x00EA5E9, 0x00EA620, 0x00EA629, 0x00EA830, 0x00EA839, 0x00EA858, 0x00EA869, 0x00EA8A8,
    0x00EA8B1, 0x00EA8E8, 0x00EA8F1, 0x00EA9D0, 0x00EA9D9, 0x00EA9F8, 0x00EAA01, 0x00EAA28,
    0x00EAA31, 0x00EAA38, 0x00EAA51, 0x00EAA88, 0x00EAA91, 0x00EB530, 0x00EB541, 0x00EB60D,
    0x00EB611, 0x00EB6DD, 0x00EB6E1, 0x00EB7DD, 0x00EB7E1, 0x00EB8AD, 0x00EB8B1, 0x00EB9AD,
    0x00EB9B1, 0x00EBA7D, 0x00EBA81, 0x00EBB7D, 0x00EBB81, 0x00EBC4D, 0x00EBC51, 0x00EBD4D,
    0x00EBD51, 0x00EBE1D, 0x00EBE21, 0x00EBE60, 0x00EBE73, 0x00EC005, 0x00ED002, 0x00ED1BD,
    0x00ED1DA, 0x00ED36D, 0x00ED3AA, 0x00ED3B5, 0x00ED422, 0x00ED42D, 0x00ED43C, 0x00ED460,
    0x00ED4DA, 0x00ED500, 0x00ED50A, 0x00ED580, 0x00EF801, 0x00EF8F8, 0x00F0002, 0x00F0038,
    0x00F0042, 0x00F00C8, 0x00F00DA, 0x00F0110, 0x00F011A, 0x00F0128, 0x00F0132, 0x00F0158,
    0x00F0801, 0x00F0968, 0x00F0982, 0x00F09B9, 0x00F09F0, 0x00F0A03, 0x00F0A50, 0x00F0A71,
    0x00F0A7D, 0x00F0A80, 0x00F1481, 0x00F1572, 0x00F1578, 0x00F1601, 0x00F1762, 0x00F1783,
    0x00F17D0, 0x00F17FD, 0x00F1800, 0x00F3F01, 0x00F3F38, 0x00F3F41, 0x00F3F60, 0x00F3F69,
    0x00F3F78, 0x00F3F81, 0x00F3FF8, 0x00F4001, 0x00F4628, 0x00F463B, 0x00F4682, 0x00F46B8,
    0x00F4801, 0x00F4A22, 0x00F4A59, 0x00F4A60, 0x00F4A83, 0x00F4AD0, 0x00F4AF4, 0x00F4B00,
    0x00F638B, 0x00F6565, 0x00F656B, 0x00F6585, 0x00F658B, 0x00F65A8, 0x00F680B, 0x00F6975,
    0x00F697B, 0x00F69F0, 0x00F7001, 0x00F7020, 0x00F7029, 0x00F7100, 0x00F7109, 0x00F7118,
    0x00F7121, 0x00F7128, 0x00F7139, 0x00F7140, 0x00F7149, 0x00F7198, 0x00F71A1, 0x00F71C0,
    0x00F71C9, 0x00F71D0, 0x00F71D9, 0x00F71E0, 0x00F7211, 0x00F7218, 0x00F7239, 0x00F7240,
    0x00F7249, 0x00F7250, 0x00F7259, 0x00F7260, 0x00F7269, 0x00F7280, 0x00F7289, 0x00F7298,
    0x00F72A1, 0x00F72A8, 0x00F72B9, 0x00F72C0, 0x00F72C9, 0x00F72D0, 0x00F72D9, 0x00F72E0,
    0x00F72E9, 0x00F72F0, 0x00F72F9, 0x00F7300, 0x00F7309, 0x00F7318, 0x00F7321, 0x00F7328,
    0x00F7339, 0x00F7358, 0x00F7361, 0x00F7398, 0x00F73A1, 0x00F73C0, 0x00F73C9, 0x00F73E8,
    0x00F73F1, 0x00F73F8, 0x00F7401, 0x00F7450, 0x00F7459, 0x00F74E0, 0x00F7509, 0x00F7520,
    0x00F7529, 0x00F7550, 0x00F7559, 0x00F75E0, 0x00F7785, 0x00F7790, 0x00F8005, 0x00F8160,
    0x00F8185, 0x00F84A0, 0x00F8505, 0x00F8578, 0x00F858D, 0x00F8600, 0x00F860D, 0x00F8680,
    0x00F868D, 0x00F87B0, 0x00F8803, 0x00F886D, 0x00F8D70, 0x00F8F35, 0x00F9018, 0x00F9085,
    0x00F91E0, 0x00F9205, 0x00F9248, 0x00F9285, 0x00F9290, 0x00F9305, 0x00F9330, 0x00F9805,
    0x00FB6C0, 0x00FB6ED, 0x00FB768, 0x00FB785, 0x00FB7E8, 0x00FB805, 0x00FBBA0, 0x00FBC05,
    0x00FBEC8, 0x00FBF05, 0x00FBF60, 0x00FBF85, 0x00FBF88, 0x00FC005, 0x00FC060, 0x00FC085,
    0x00FC240, 0x00FC285, 0x00FC2D0, 0x00FC305, 0x00FC440, 0x00FC485, 0x00FC570, 0x00FC585,
    0x00FC590, 0x00FC805, 0x00FD2A0, 0x00FD305, 0x00FD370, 0x00FD385, 0x00FD3A8, 0x00FD3C5,
    0x00FD3E8, 0x00FD405, 0x00FD438, 0x00FD485, 0x00FD568, 0x00FD585, 0x00FD5D8, 0x00FD605,
    0x00FD630, 0x00FD685, 0x00FD6D0, 0x00FD705, 0x00FD740, 0x00FD785, 0x00FD7B8, 0x00FD805,
    0x00FDC98, 0x00FDCA5, 0x00FDE58, 0x00FDF83, 0x00FDFD0, 0x0100001, 0x0153700, 0x0153801,
    0x015B9C8, 0x015BA01, 0x015C0F0, 0x015C101, 0x0167510, 0x0167581, 0x0175F08, 0x017C001,
    0x017D0F0, 0x0180001, 0x0189A58, 0x0700802, 0x0700F80,
};
static const uint32_t infer__uc_space[25] = {
    0x0009, 0x000A, 0x000B, 0x000C, 0x000D, 0x0020, 0x0085, 0x00A0,
    0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
    0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F,
    0x3000,
};
static const int32_t infer__uc_lower[182][4] = {
    {0x00041, 0x0005A, 32, 1}, {0x000C0, 0x000D6, 32, 1}, {0x000D8, 0x000DE, 32, 1}, {0x00100, 0x0012E, 1, 2},
    {0x00130, 0x00130, -199, 1}, {0x00132, 0x00136, 1, 2}, {0x00139, 0x00147, 1, 2}, {0x0014A, 0x00176, 1, 2},
    {0x00178, 0x00178, -121, 1}, {0x00179, 0x0017D, 1, 2}, {0x00181, 0x00181, 210, 1}, {0x00182, 0x00184, 1, 2},
    {0x00186, 0x00186, 206, 1}, {0x00187, 0x00187, 1, 1}, {0x00189, 0x0018A, 205, 1}, {0x0018B, 0x0018B, 1, 1},
    {0x0018E, 0x0018E, 79, 1}, {0x0018F, 0x0018F, 202, 1}, {0x00190, 0x00190, 203, 1}, {0x00191, 0x00191, 1, 1},
    {0x00193, 0x00193, 205, 1}, {0x00194, 0x00194, 207, 1}, {0x00196, 0x00196, 211, 1}, {0x00197, 0x00197, 209, 1},
    {0x00198, 0x00198, 1, 1}, {0x0019C, 0x0019C, 211, 1}, {0x0019D, 0x0019D, 213, 1}, {0x0019F, 0x0019F, 214, 1},
    {0x001A0, 0x001A4, 1, 2}, {0x001A6, 0x001A6, 218, 1}, {0x001A7, 0x001A7, 1, 1}, {0x001A9, 0x001A9, 218, 1},
    {0x001AC, 0x001AC, 1, 1}, {0x001AE, 0x001AE, 218, 1}, {0x001AF, 0x001AF, 1, 1}, {0x001B1, 0x001B2, 217, 1},
    {0x001B3, 0x001B5, 1, 2}, {0x001B7, 0x001B7, 219, 1}, {0x001B8, 0x001B8, 1, 1}, {0x001BC, 0x001BC, 1, 1},
    {0x001C4, 0x001C4, 2, 1}, {0x001C5, 0x001C5, 1, 1}, {0x001C7, 0x001C7, 2, 1}, {0x001C8, 0x001C8, 1, 1},
    {0x001CA, 0x001CA, 2, 1}, {0x001CB, 0x001DB, 1, 2}, {0x001DE, 0x001EE, 1, 2}, {0x001F1, 0x001F1, 2, 1},
    {0x001F2, 0x001F4, 1, 2}, {0x001F6, 0x001F6, -97, 1}, {0x001F7, 0x001F7, -56, 1}, {0x001F8, 0x0021E, 1, 2},
    {0x00220, 0x00220, -130, 1}, {0x00222, 0x00232, 1, 2}, {0x0023A, 0x0023A, 10795, 1}, {0x0023B, 0x0023B, 1, 1},
    {0x0023D, 0x0023D, -163, 1}, {0x0023E, 0x0023E, 10792, 1}, {0x00241, 0x00241, 1, 1}, {0x00243, 0x00243, -195, 1},
    {0x00244, 0x00244, 69, 1}, {0x00245, 0x00245, 71, 1}, {0x00246, 0x0024E, 1, 2}, {0x00370, 0x00372, 1, 2},
    {0x00376, 0x00376, 1, 1}, {0x0037F, 0x0037F, 116, 1}, {0x00386, 0x00386, 38, 1}, {0x00388, 0x0038A, 37, 1},
    {0x0038C, 0x0038C, 64, 1}, {0x0038E, 0x0038F, 63, 1}, {0x00391, 0x003A1, 32, 1}, {0x003A3, 0x003AB, 32, 1},
    {0x003CF, 0x003CF, 8, 1}, {0x003D8, 0x003EE, 1, 2}, {0x003F4, 0x003F4, -60, 1}, {0x003F7, 0x003F7, 1, 1},
    {0x003F9, 0x003F9, -7, 1}, {0x003FA, 0x003FA, 1, 1}, {0x003FD, 0x003FF, -130, 1}, {0x00400, 0x0040F, 80, 1},
    {0x00410, 0x0042F, 32, 1}, {0x00460, 0x00480, 1, 2}, {0x0048A, 0x004BE, 1, 2}, {0x004C0, 0x004C0, 15, 1},
    {0x004C1, 0x004CD, 1, 2}, {0x004D0, 0x0052E, 1, 2}, {0x00531, 0x00556, 48, 1}, {0x010A0, 0x010C5, 7264, 1},
    {0x010C7, 0x010C7, 7264, 1}, {0x010CD, 0x010CD, 7264, 1}, {0x013A0, 0x013EF, 38864, 1}, {0x013F0, 0x013F5, 8, 1},
    {0x01C90, 0x01CBA, -3008, 1}, {0x01CBD, 0x01CBF, -3008, 1}, {0x01E00, 0x01E94, 1, 2}, {0x01E9E, 0x01E9E, -7615, 1},
    {0x01EA0, 0x01EFE, 1, 2}, {0x01F08, 0x01F0F, -8, 1}, {0x01F18, 0x01F1D, -8, 1}, {0x01F28, 0x01F2F, -8, 1},
    {0x01F38, 0x01F3F, -8, 1}, {0x01F48, 0x01F4D, -8, 1}, {0x01F59, 0x01F5F, -8, 2}, {0x01F68, 0x01F6F, -8, 1},
    {0x01F88, 0x01F8F, -8, 1}, {0x01F98, 0x01F9F, -8, 1}, {0x01FA8, 0x01FAF, -8, 1}, {0x01FB8, 0x01FB9, -8, 1},
    {0x01FBA, 0x01FBB, -74, 1}, {0x01FBC, 0x01FBC, -9, 1}, {0x01FC8, 0x01FCB, -86, 1}, {0x01FCC, 0x01FCC, -9, 1},
    {0x01FD8, 0x01FD9, -8, 1}, {0x01FDA, 0x01FDB, -100, 1}, {0x01FE8, 0x01FE9, -8, 1}, {0x01FEA, 0x01FEB, -112, 1},
    {0x01FEC, 0x01FEC, -7, 1}, {0x01FF8, 0x01FF9, -128, 1}, {0x01FFA, 0x01FFB, -126, 1}, {0x01FFC, 0x01FFC, -9, 1},
    {0x02126, 0x02126, -7517, 1}, {0x0212A, 0x0212A, -8383, 1}, {0x0212B, 0x0212B, -8262, 1}, {0x02132, 0x02132, 28, 1},
    {0x02160, 0x0216F, 16, 1}, {0x02183, 0x02183, 1, 1}, {0x024B6, 0x024CF, 26, 1}, {0x02C00, 0x02C2F, 48, 1},
    {0x02C60, 0x02C60, 1, 1}, {0x02C62, 0x02C62, -10743, 1}, {0x02C63, 0x02C63, -3814, 1}, {0x02C64, 0x02C64, -10727, 1},
    {0x02C67, 0x02C6B, 1, 2}, {0x02C6D, 0x02C6D, -10780, 1}, {0x02C6E, 0x02C6E, -10749, 1}, {0x02C6F, 0x02C6F, -10783, 1},
    {0x02C70, 0x02C70, -10782, 1}, {0x02C72, 0x02C72, 1, 1}, {0x02C75, 0x02C75, 1, 1}, {0x02C7E, 0x02C7F, -10815, 1},
    {0x02C80, 0x02CE2, 1, 2}, {0x02CEB, 0x02CED, 1, 2}, {0x02CF2, 0x02CF2, 1, 1}, {0x0A640, 0x0A66C, 1, 2},
    {0x0A680, 0x0A69A, 1, 2}, {0x0A722, 0x0A72E, 1, 2}, {0x0A732, 0x0A76E, 1, 2}, {0x0A779, 0x0A77B, 1, 2},
    {0x0A77D, 0x0A77D, -35332, 1}, {0x0A77E, 0x0A786, 1, 2}, {0x0A78B, 0x0A78B, 1, 1}, {0x0A78D, 0x0A78D, -42280, 1},
    {0x0A790, 0x0A792, 1, 2}, {0x0A796, 0x0A7A8, 1, 2}, {0x0A7AA, 0x0A7AA, -42308, 1}, {0x0A7AB, 0x0A7AB, -42319, 1},
    {0x0A7AC, 0x0A7AC, -42315, 1}, {0x0A7AD, 0x0A7AD, -42305, 1}, {0x0A7AE, 0x0A7AE, -42308, 1}, {0x0A7B0, 0x0A7B0, -42258, 1},
    {0x0A7B1, 0x0A7B1, -42282, 1}, {0x0A7B2, 0x0A7B2, -42261, 1}, {0x0A7B3, 0x0A7B3, 928, 1}, {0x0A7B4, 0x0A7C2, 1, 2},
    {0x0A7C4, 0x0A7C4, -48, 1}, {0x0A7C5, 0x0A7C5, -42307, 1}, {0x0A7C6, 0x0A7C6, -35384, 1}, {0x0A7C7, 0x0A7C9, 1, 2},
    {0x0A7D0, 0x0A7D0, 1, 1}, {0x0A7D6, 0x0A7D8, 1, 2}, {0x0A7F5, 0x0A7F5, 1, 1}, {0x0FF21, 0x0FF3A, 32, 1},
    {0x10400, 0x10427, 40, 1}, {0x104B0, 0x104D3, 40, 1}, {0x10570, 0x1057A, 39, 1}, {0x1057C, 0x1058A, 39, 1},
    {0x1058C, 0x10592, 39, 1}, {0x10594, 0x10595, 39, 1}, {0x10C80, 0x10CB2, 64, 1}, {0x118A0, 0x118BF, 32, 1},
    {0x16E40, 0x16E5F, 32, 1}, {0x1E900, 0x1E921, 34, 1},
};
static const uint32_t infer__uc_nfd[1827][3] = {
    {0x000C0, 0x000C5, 0x00041}, {0x000C7, 0x000C7, 0x00043}, {0x000C8, 0x000CB, 0x00045}, {0x000CC, 0x000CF, 0x00049},
    {0x000D1, 0x000D1, 0x0004E}, {0x000D2, 0x000D6, 0x0004F}, {0x000D9, 0x000DC, 0x00055}, {0x000DD, 0x000DD, 0x00059},
    {0x000E0, 0x000E5, 0x00061}, {0x000E7, 0x000E7, 0x00063}, {0x000E8, 0x000EB, 0x00065}, {0x000EC, 0x000EF, 0x00069},
    {0x000F1, 0x000F1, 0x0006E}, {0x000F2, 0x000F6, 0x0006F}, {0x000F9, 0x000FC, 0x00075}, {0x000FD, 0x000FD, 0x00079},
    {0x000FF, 0x000FF, 0x00079}, {0x00100, 0x00100, 0x00041}, {0x00101, 0x00101, 0x00061}, {0x00102, 0x00102, 0x00041},
    {0x00103, 0x00103, 0x00061}, {0x00104, 0x00104, 0x00041}, {0x00105, 0x00105, 0x00061}, {0x00106, 0x00106, 0x00043},
    {0x00107, 0x00107, 0x00063}, {0x00108, 0x00108, 0x00043}, {0x00109, 0x00109, 0x00063}, {0x0010A, 0x0010A, 0x00043},
    {0x0010B, 0x0010B, 0x00063}, {0x0010C, 0x0010C, 0x00043}, {0x0010D, 0x0010D, 0x00063}, {0x0010E, 0x0010E, 0x00044},
    {0x0010F, 0x0010F, 0x00064}, {0x00112, 0x00112, 0x00045}, {0x00113, 0x00113, 0x00065}, {0x00114, 0x00114, 0x00045},
    {0x00115, 0x00115, 0x00065}, {0x00116, 0x00116, 0x00045}, {0x00117, 0x00117, 0x00065}, {0x00118, 0x00118, 0x00045},
    {0x00119, 0x00119, 0x00065}, {0x0011A, 0x0011A, 0x00045}, {0x0011B, 0x0011B, 0x00065}, {0x0011C, 0x0011C, 0x00047},
    {0x0011D, 0x0011D, 0x00067}, {0x0011E, 0x0011E, 0x00047}, {0x0011F, 0x0011F, 0x00067}, {0x00120, 0x00120, 0x00047},
    {0x00121, 0x00121, 0x00067}, {0x00122, 0x00122, 0x00047}, {0x00123, 0x00123, 0x00067}, {0x00124, 0x00124, 0x00048},
    {0x00125, 0x00125, 0x00068}, {0x00128, 0x00128, 0x00049}, {0x00129, 0x00129, 0x00069}, {0x0012A, 0x0012A, 0x00049},
    {0x0012B, 0x0012B, 0x00069}, {0x0012C, 0x0012C, 0x00049}, {0x0012D, 0x0012D, 0x00069}, {0x0012E, 0x0012E, 0x00049},
    {0x0012F, 0x0012F, 0x00069}, {0x00130, 0x00130, 0x00049}, {0x00134, 0x00134, 0x0004A}, {0x00135, 0x00135, 0x0006A},
    {0x00136, 0x00136, 0x0004B}, {0x00137, 0x00137, 0x0006B}, {0x00139, 0x00139, 0x0004C}, {0x0013A, 0x0013A, 0x0006C},
    {0x0013B, 0x0013B, 0x0004C}, {0x0013C, 0x0013C, 0x0006C}, {0x0013D, 0x0013D, 0x0004C}, {0x0013E, 0x0013E, 0x0006C},
    {0x00143, 0x00143, 0x0004E}, {0x00144, 0x00144, 0x0006E}, {0x00145, 0x00145, 0x0004E}, {0x00146, 0x00146, 0x0006E},
    {0x00147, 0x00147, 0x0004E}, {0x00148, 0x00148, 0x0006E}, {0x0014C, 0x0014C, 0x0004F}, {0x0014D, 0x0014D, 0x0006F},
    {0x0014E, 0x0014E, 0x0004F}, {0x0014F, 0x0014F, 0x0006F}, {0x00150, 0x00150, 0x0004F}, {0x00151, 0x00151, 0x0006F},
    {0x00154, 0x00154, 0x00052}, {0x00155, 0x00155, 0x00072}, {0x00156, 0x00156, 0x00052}, {0x00157, 0x00157, 0x00072},
    {0x00158, 0x00158, 0x00052}, {0x00159, 0x00159, 0x00072}, {0x0015A, 0x0015A, 0x00053}, {0x0015B, 0x0015B, 0x00073},
    {0x0015C, 0x0015C, 0x00053}, {0x0015D, 0x0015D, 0x00073}, {0x0015E, 0x0015E, 0x00053}, {0x0015F, 0x0015F, 0x00073},
    {0x00160, 0x00160, 0x00053}, {0x00161, 0x00161, 0x00073}, {0x00162, 0x00162, 0x00054}, {0x00163, 0x00163, 0x00074},
    {0x00164, 0x00164, 0x00054}, {0x00165, 0x00165, 0x00074}, {0x00168, 0x00168, 0x00055}, {0x00169, 0x00169, 0x00075},
    {0x0016A, 0x0016A, 0x00055}, {0x0016B, 0x0016B, 0x00075}, {0x0016C, 0x0016C, 0x00055}, {0x0016D, 0x0016D, 0x00075},
    {0x0016E, 0x0016E, 0x00055}, {0x0016F, 0x0016F, 0x00075}, {0x00170, 0x00170, 0x00055}, {0x00171, 0x00171, 0x00075},
    {0x00172, 0x00172, 0x00055}, {0x00173, 0x00173, 0x00075}, {0x00174, 0x00174, 0x00057}, {0x00175, 0x00175, 0x00077},
    {0x00176, 0x00176, 0x00059}, {0x00177, 0x00177, 0x00079}, {0x00178, 0x00178, 0x00059}, {0x00179, 0x00179, 0x0005A},
    {0x0017A, 0x0017A, 0x0007A}, {0x0017B, 0x0017B, 0x0005A}, {0x0017C, 0x0017C, 0x0007A}, {0x0017D, 0x0017D, 0x0005A},
    {0x0017E, 0x0017E, 0x0007A}, {0x001A0, 0x001A0, 0x0004F}, {0x001A1, 0x001A1, 0x0006F}, {0x001AF, 0x001AF, 0x00055},
    {0x001B0, 0x001B0, 0x00075}, {0x001CD, 0x001CD, 0x00041}, {0x001CE, 0x001CE, 0x00061}, {0x001CF, 0x001CF, 0x00049},
    {0x001D0, 0x001D0, 0x00069}, {0x001D1, 0x001D1, 0x0004F}, {0x001D2, 0x001D2, 0x0006F}, {0x001D3, 0x001D3, 0x00055},
    {0x001D4, 0x001D4, 0x00075}, {0x001D5, 0x001D5, 0x00055}, {0x001D6, 0x001D6, 0x00075}, {0x001D7, 0x001D7, 0x00055},
    {0x001D8, 0x001D8, 0x00075}, {0x001D9, 0x001D9, 0x00055}, {0x001DA, 0x001DA, 0x00075}, {0x001DB, 0x001DB, 0x00055},
    {0x001DC, 0x001DC, 0x00075}, {0x001DE, 0x001DE, 0x00041}, {0x001DF, 0x001DF, 0x00061}, {0x001E0, 0x001E0, 0x00041},
    {0x001E1, 0x001E1, 0x00061}, {0x001E2, 0x001E2, 0x000C6}, {0x001E3, 0x001E3, 0x000E6}, {0x001E6, 0x001E6, 0x00047},
    {0x001E7, 0x001E7, 0x00067}, {0x001E8, 0x001E8, 0x0004B}, {0x001E9, 0x001E9, 0x0006B}, {0x001EA, 0x001EA, 0x0004F},
    {0x001EB, 0x001EB, 0x0006F}, {0x001EC, 0x001EC, 0x0004F}, {0x001ED, 0x001ED, 0x0006F}, {0x001EE, 0x001EE, 0x001B7},
    {0x001EF, 0x001EF, 0x00292}, {0x001F0, 0x001F0, 0x0006A}, {0x001F4, 0x001F4, 0x00047}, {0x001F5, 0x001F5, 0x00067},
    {0x001F8, 0x001F8, 0x0004E}, {0x001F9, 0x001F9, 0x0006E}, {0x001FA, 0x001FA, 0x00041}, {0x001FB, 0x001FB, 0x00061},
    {0x001FC, 0x001FC, 0x000C6}, {0x001FD, 0x001FD, 0x000E6}, {0x001FE, 0x001FE, 0x000D8}, {0x001FF, 0x001FF, 0x000F8},
    {0x00200, 0x00200, 0x00041}, {0x00201, 0x00201, 0x00061}, {0x00202, 0x00202, 0x00041}, {0x00203, 0x00203, 0x00061},
    {0x00204, 0x00204, 0x00045}, {0x00205, 0x00205, 0x00065}, {0x00206, 0x00206, 0x00045}, {0x00207, 0x00207, 0x00065},
    {0x00208, 0x00208, 0x00049}, {0x00209, 0x00209, 0x00069}, {0x0020A, 0x0020A, 0x00049}, {0x0020B, 0x0020B, 0x00069},
    {0x0020C, 0x0020C, 0x0004F}, {0x0020D, 0x0020D, 0x0006F}, {0x0020E, 0x0020E, 0x0004F}, {0x0020F, 0x0020F, 0x0006F},
    {0x00210, 0x00210, 0x00052}, {0x00211, 0x00211, 0x00072}, {0x00212, 0x00212, 0x00052}, {0x00213, 0x00213, 0x00072},
    {0x00214, 0x00214, 0x00055}, {0x00215, 0x00215, 0x00075}, {0x00216, 0x00216, 0x00055}, {0x00217, 0x00217, 0x00075},
    {0x00218, 0x00218, 0x00053}, {0x00219, 0x00219, 0x00073}, {0x0021A, 0x0021A, 0x00054}, {0x0021B, 0x0021B, 0x00074},
    {0x0021E, 0x0021E, 0x00048}, {0x0021F, 0x0021F, 0x00068}, {0x00226, 0x00226, 0x00041}, {0x00227, 0x00227, 0x00061},
    {0x00228, 0x00228, 0x00045}, {0x00229, 0x00229, 0x00065}, {0x0022A, 0x0022A, 0x0004F}, {0x0022B, 0x0022B, 0x0006F},
    {0x0022C, 0x0022C, 0x0004F}, {0x0022D, 0x0022D, 0x0006F}, {0x0022E, 0x0022E, 0x0004F}, {0x0022F, 0x0022F, 0x0006F},
    {0x00230, 0x00230, 0x0004F}, {0x00231, 0x00231, 0x0006F}, {0x00232, 0x00232, 0x00059}, {0x00233, 0x00233, 0x00079},
    {0x00340, 0x00340, 0x00300}, {0x00341, 0x00341, 0x00301}, {0x00343, 0x00343, 0x00313}, {0x00344, 0x00344, 0x00308},
    {0x00374, 0x00374, 0x002B9}, {0x0037E, 0x0037E, 0x0003B}, {0x00385, 0x00385, 0x000A8}, {0x00386, 0x00386, 0x00391},
    {0x00387, 0x00387, 0x000B7}, {0x00388, 0x00388, 0x00395}, {0x00389, 0x00389, 0x00397}, {0x0038A, 0x0038A, 0x00399},
    {0x0038C, 0x0038C, 0x0039F}, {0x0038E, 0x0038E, 0x003A5}, {0x0038F, 0x0038F, 0x003A9}, {0x00390, 0x00390, 0x003B9},
    {0x003AA, 0x003AA, 0x00399}, {0x003AB, 0x003AB, 0x003A5}, {0x003AC, 0x003AC, 0x003B1}, {0x003AD, 0x003AD, 0x003B5},
    {0x003AE, 0x003AE, 0x003B7}, {0x003AF, 0x003AF, 0x003B9}, {0x003B0, 0x003B0, 0x003C5}, {0x003CA, 0x003CA, 0x003B9},
    {0x003CB, 0x003CB, 0x003C5}, {0x003CC, 0x003CC, 0x003BF}, {0x003CD, 0x003CD, 0x003C5}, {0x003CE, 0x003CE, 0x003C9},
    {0x003D3, 0x003D4, 0x003D2}, {0x00400, 0x00401, 0x00415}, {0x00403, 0x00403, 0x00413}, {0x00407, 0x00407, 0x00406},
    {0x0040C, 0x0040C, 0x0041A}, {0x0040D, 0x0040D, 0x00418}, {0x0040E, 0x0040E, 0x00423}, {0x00419, 0x00419, 0x00418},
    {0x00439, 0x00439, 0x00438}, {0x00450, 0x00451, 0x00435}, {0x00453, 0x00453, 0x00433}, {0x00457, 0x00457, 0x00456},
    {0x0045C, 0x0045C, 0x0043A}, {0x0045D, 0x0045D, 0x00438}, {0x0045E, 0x0045E, 0x00443}, {0x00476, 0x00476, 0x00474},
    {0x00477, 0x00477, 0x00475}, {0x004C1, 0x004C1, 0x00416}, {0x004C2, 0x004C2, 0x00436}, {0x004D0, 0x004D0, 0x00410},
    {0x004D1, 0x004D1, 0x00430}, {0x004D2, 0x004D2, 0x00410}, {0x004D3, 0x004D3, 0x00430}, {0x004D6, 0x004D6, 0x00415},
    {0x004D7, 0x004D7, 0x00435}, {0x004DA, 0x004DA, 0x004D8}, {0x004DB, 0x004DB, 0x004D9}, {0x004DC, 0x004DC, 0x00416},
    {0x004DD, 0x004DD, 0x00436}, {0x004DE, 0x004DE, 0x00417}, {0x004DF, 0x004DF, 0x00437}, {0x004E2, 0x004E2, 0x00418},
    {0x004E3, 0x004E3, 0x00438}, {0x004E4, 0x004E4, 0x00418}, {0x004E5, 0x004E5, 0x00438}, {0x004E6, 0x004E6, 0x0041E},
    {0x004E7, 0x004E7, 0x0043E}, {0x004EA, 0x004EA, 0x004E8}, {0x004EB, 0x004EB, 0x004E9}, {0x004EC, 0x004EC, 0x0042D},
    {0x004ED, 0x004ED, 0x0044D}, {0x004EE, 0x004EE, 0x00423}, {0x004EF, 0x004EF, 0x00443}, {0x004F0, 0x004F0, 0x00423},
    {0x004F1, 0x004F1, 0x00443}, {0x004F2, 0x004F2, 0x00423}, {0x004F3, 0x004F3, 0x00443}, {0x004F4, 0x004F4, 0x00427},
    {0x004F5, 0x004F5, 0x00447}, {0x004F8, 0x004F8, 0x0042B}, {0x004F9, 0x004F9, 0x0044B}, {0x00622, 0x00623, 0x00627},
    {0x00624, 0x00624, 0x00648}, {0x00625, 0x00625, 0x00627}, {0x00626, 0x00626, 0x0064A}, {0x006C0, 0x006C0, 0x006D5},
    {0x006C2, 0x006C2, 0x006C1}, {0x006D3, 0x006D3, 0x006D2}, {0x00929, 0x00929, 0x00928}, {0x00931, 0x00931, 0x00930},
    {0x00934, 0x00934, 0x00933}, {0x00958, 0x00958, 0x00915}, {0x00959, 0x00959, 0x00916}, {0x0095A, 0x0095A, 0x00917},
    {0x0095B, 0x0095B, 0x0091C}, {0x0095C, 0x0095C, 0x00921}, {0x0095D, 0x0095D, 0x00922}, {0x0095E, 0x0095E, 0x0092B},
    {0x0095F, 0x0095F, 0x0092F}, {0x009CB, 0x009CC, 0x009C7}, {0x009DC, 0x009DC, 0x009A1}, {0x009DD, 0x009DD, 0x009A2},
    {0x009DF, 0x009DF, 0x009AF}, {0x00A33, 0x00A33, 0x00A32}, {0x00A36, 0x00A36, 0x00A38}, {0x00A59, 0x00A59, 0x00A16},
    {0x00A5A, 0x00A5A, 0x00A17}, {0x00A5B, 0x00A5B, 0x00A1C}, {0x00A5E, 0x00A5E, 0x00A2B}, {0x00B48, 0x00B48, 0x00B47},
    {0x00B4B, 0x00B4C, 0x00B47}, {0x00B5C, 0x00B5C, 0x00B21}, {0x00B5D, 0x00B5D, 0x00B22}, {0x00B94, 0x00B94, 0x00B92},
    {0x00BCA, 0x00BCA, 0x00BC6}, {0x00BCB, 0x00BCB, 0x00BC7}, {0x00BCC, 0x00BCC, 0x00BC6}, {0x00C48, 0x00C48, 0x00C46},
    {0x00CC0, 0x00CC0, 0x00CBF}, {0x00CC7, 0x00CC8, 0x00CC6}, {0x00CCA, 0x00CCB, 0x00CC6}, {0x00D4A, 0x00D4A, 0x00D46},
    {0x00D4B, 0x00D4B, 0x00D47}, {0x00D4C, 0x00D4C, 0x00D46}, {0x00DDA, 0x00DDA, 0x00DD9}, {0x00DDC, 0x00DDE, 0x00DD9},
    {0x00F43, 0x00F43, 0x00F42}, {0x00F4D, 0x00F4D, 0x00F4C}, {0x00F52, 0x00F52, 0x00F51}, {0x00F57, 0x00F57, 0x00F56},
    {0x00F5C, 0x00F5C, 0x00F5B}, {0x00F69, 0x00F69, 0x00F40}, {0x00F73, 0x00F73, 0x00F71}, {0x00F75, 0x00F75, 0x00F71},
    {0x00F76, 0x00F76, 0x00FB2}, {0x00F78, 0x00F78, 0x00FB3}, {0x00F81, 0x00F81, 0x00F71}, {0x00F93, 0x00F93, 0x00F92},
    {0x00F9D, 0x00F9D, 0x00F9C}, {0x00FA2, 0x00FA2, 0x00FA1}, {0x00FA7, 0x00FA7, 0x00FA6}, {0x00FAC, 0x00FAC, 0x00FAB},
    {0x00FB9, 0x00FB9, 0x00F90}, {0x01026, 0x01026, 0x01025}, {0x01B06, 0x01B06, 0x01B05}, {0x01B08, 0x01B08, 0x01B07},
    {0x01B0A, 0x01B0A, 0x01B09}, {0x01B0C, 0x01B0C, 0x01B0B}, {0x01B0E, 0x01B0E, 0x01B0D}, {0x01B12, 0x01B12, 0x01B11},
    {0x01B3B, 0x01B3B, 0x01B3A}, {0x01B3D, 0x01B3D, 0x01B3C}, {0x01B40, 0x01B40, 0x01B3E}, {0x01B41, 0x01B41, 0x01B3F},
    {0x01B43, 0x01B43, 0x01B42}, {0x01E00, 0x01E00, 0x00041}, {0x01E01, 0x01E01, 0x00061}, {0x01E02, 0x01E02, 0x00042},
    {0x01E03, 0x01E03, 0x00062}, {0x01E04, 0x01E04, 0x00042}, {0x01E05, 0x01E05, 0x00062}, {0x01E06, 0x01E06, 0x00042},
    {0x01E07, 0x01E07, 0x00062}, {0x01E08, 0x01E08, 0x00043}, {0x01E09, 0x01E09, 0x00063}, {0x01E0A, 0x01E0A, 0x00044},
    {0x01E0B, 0x01E0B, 0x00064}, {0x01E0C, 0x01E0C, 0x00044}, {0x01E0D, 0x01E0D, 0x00064}, {0x01E0E, 0x01E0E, 0x00044},
    {0x01E0F, 0x01E0F, 0x00064}, {0x01E10, 0x01E10, 0x00044}, {0x01E11, 0x01E11, 0x00064}, {0x01E12, 0x01E12, 0x00044},
    {0x01E13, 0x01E13, 0x00064}, {0x01E14, 0x01E14, 0x00045}, {0x01E15, 0x01E15, 0x00065}, {0x01E16, 0x01E16, 0x00045},
    {0x01E17, 0x01E17, 0x00065}, {0x01E18, 0x01E18, 0x00045}, {0x01E19, 0x01E19, 0x00065}, {0x01E1A, 0x01E1A, 0x00045},
    {0x01E1B, 0x01E1B, 0x00065}, {0x01E1C, 0x01E1C, 0x00045}, {0x01E1D, 0x01E1D, 0x00065}, {0x01E1E, 0x01E1E, 0x00046},
    {0x01E1F, 0x01E1F, 0x00066}, {0x01E20, 0x01E20, 0x00047}, {0x01E21, 0x01E21, 0x00067}, {0x01E22, 0x01E22, 0x00048},
    {0x01E23, 0x01E23, 0x00068}, {0x01E24, 0x01E24, 0x00048}, {0x01E25, 0x01E25, 0x00068}, {0x01E26, 0x01E26, 0x00048},
    {0x01E27, 0x01E27, 0x00068}, {0x01E28, 0x01E28, 0x00048}, {0x01E29, 0x01E29, 0x00068}, {0x01E2A, 0x01E2A, 0x00048},
    {0x01E2B, 0x01E2B, 0x00068}, {0x01E2C, 0x01E2C, 0x00049}, {0x01E2D, 0x01E2D, 0x00069}, {0x01E2E, 0x01E2E, 0x00049},
    {0x01E2F, 0x01E2F, 0x00069}, {0x01E30, 0x01E30, 0x0004B}, {0x01E31, 0x01E31, 0x0006B}, {0x01E32, 0x01E32, 0x0004B},
    {0x01E33, 0x01E33, 0x0006B}, {0x01E34, 0x01E34, 0x0004B}, {0x01E35, 0x01E35, 0x0006B}, {0x01E36, 0x01E36, 0x0004C},
    {0x01E37, 0x01E37, 0x0006C}, {0x01E38, 0x01E38, 0x0004C}, {0x01E39, 0x01E39, 0x0006C}, {0x01E3A, 0x01E3A, 0x0004C},
    {0x01E3B, 0x01E3B, 0x0006C}, {0x01E3C, 0x01E3C, 0x0004C}, {0x01E3D, 0x01E3D, 0x0006C}, {0x01E3E, 0x01E3E, 0x0004D},
    {0x01E3F, 0x01E3F, 0x0006D}, {0x01E40, 0x01E40, 0x0004D}, {0x01E41, 0x01E41, 0x0006D}, {0x01E42, 0x01E42, 0x0004D},
    {0x01E43, 0x01E43, 0x0006D}, {0x01E44, 0x01E44, 0x0004E}, {0x01E45, 0x01E45, 0x0006E}, {0x01E46, 0x01E46, 0x0004E},
    {0x01E47, 0x01E47, 0x0006E}, {0x01E48, 0x01E48, 0x0004E}, {0x01E49, 0x01E49, 0x0006E}, {0x01E4A, 0x01E4A, 0x0004E},
    {0x01E4B, 0x01E4B, 0x0006E}, {0x01E4C, 0x01E4C, 0x0004F}, {0x01E4D, 0x01E4D, 0x0006F}, {0x01E4E, 0x01E4E, 0x0004F},
    {0x01E4F, 0x01E4F, 0x0006F}, {0x01E50, 0x01E50, 0x0004F}, {0x01E51, 0x01E51, 0x0006F}, {0x01E52, 0x01E52, 0x0004F},
    {0x01E53, 0x01E53, 0x0006F}, {0x01E54, 0x01E54, 0x00050}, {0x01E55, 0x01E55, 0x00070}, {0x01E56, 0x01E56, 0x00050},
    {0x01E57, 0x01E57, 0x00070}, {0x01E58, 0x01E58, 0x00052}, {0x01E59, 0x01E59, 0x00072}, {0x01E5A, 0x01E5A, 0x00052},
    {0x01E5B, 0x01E5B, 0x00072}, {0x01E5C, 0x01E5C, 0x00052}, {0x01E5D, 0x01E5D, 0x00072}, {0x01E5E, 0x01E5E, 0x00052},
    {0x01E5F, 0x01E5F, 0x00072}, {0x01E60, 0x01E60, 0x00053}, {0x01E61, 0x01E61, 0x00073}, {0x01E62, 0x01E62, 0x00053},
    {0x01E63, 0x01E63, 0x00073}, {0x01E64, 0x01E64, 0x00053}, {0x01E65, 0x01E65, 0x00073}, {0x01E66, 0x01E66, 0x00053},
    {0x01E67, 0x01E67, 0x00073}, {0x01E68, 0x01E68, 0x00053}, {0x01E69, 0x01E69, 0x00073}, {0x01E6A, 0x01E6A, 0x00054},
    {0x01E6B, 0x01E6B, 0x00074}, {0x01E6C, 0x01E6C, 0x00054}, {0x01E6D, 0x01E6D, 0x00074}, {0x01E6E, 0x01E6E, 0x00054},
    {0x01E6F, 0x01E6F, 0x00074}, {0x01E70, 0x01E70, 0x00054}, {0x01E71, 0x01E71, 0x00074}, {0x01E72, 0x01E72, 0x00055},
    {0x01E73, 0x01E73, 0x00075}, {0x01E74, 0x01E74, 0x00055}, {0x01E75, 0x01E75, 0x00075}, {0x01E76, 0x01E76, 0x00055},
    {0x01E77, 0x01E77, 0x00075}, {0x01E78, 0x01E78, 0x00055}, {0x01E79, 0x01E79, 0x00075}, {0x01E7A, 0x01E7A, 0x00055},
    {0x01E7B, 0x01E7B, 0x00075}, {0x01E7C, 0x01E7C, 0x00056}, {0x01E7D, 0x01E7D, 0x00076}, {0x01E7E, 0x01E7E, 0x00056},
    {0x01E7F, 0x01E7F, 0x00076}, {0x01E80, 0x01E80, 0x00057}, {0x01E81, 0x01E81, 0x00077}, {0x01E82, 0x01E82, 0x00057},
    {0x01E83, 0x01E83, 0x00077}, {0x01E84, 0x01E84, 0x00057}, {0x01E85, 0x01E85, 0x00077}, {0x01E86, 0x01E86, 0x00057},
    {0x01E87, 0x01E87, 0x00077}, {0x01E88, 0x01E88, 0x00057}, {0x01E89, 0x01E89, 0x00077}, {0x01E8A, 0x01E8A, 0x00058},
    {0x01E8B, 0x01E8B, 0x00078}, {0x01E8C, 0x01E8C, 0x00058}, {0x01E8D, 0x01E8D, 0x00078}, {0x01E8E, 0x01E8E, 0x00059},
    {0x01E8F, 0x01E8F, 0x00079}, {0x01E90, 0x01E90, 0x0005A}, {0x01E91, 0x01E91, 0x0007A}, {0x01E92, 0x01E92, 0x0005A},
    {0x01E93, 0x01E93, 0x0007A}, {0x01E94, 0x01E94, 0x0005A}, {0x01E95, 0x01E95, 0x0007A}, {0x01E96, 0x01E96, 0x00068},
    {0x01E97, 0x01E97, 0x00074}, {0x01E98, 0x01E98, 0x00077}, {0x01E99, 0x01E99, 0x00079}, {0x01E9B, 0x01E9B, 0x0017F},
    {0x01EA0, 0x01EA0, 0x00041}, {0x01EA1, 0x01EA1, 0x00061}, {0x01EA2, 0x01EA2, 0x00041}, {0x01EA3, 0x01EA3, 0x00061},
    {0x01EA4, 0x01EA4, 0x00041}, {0x01EA5, 0x01EA5, 0x00061}, {0x01EA6, 0x01EA6, 0x00041}, {0x01EA7, 0x01EA7, 0x00061},
    {0x01EA8, 0x01EA8, 0x00041}, {0x01EA9, 0x01EA9, 0x00061}, {0x01EAA, 0x01EAA, 0x00041}, {0x01EAB, 0x01EAB, 0x00061},
    {0x01EAC, 0x01EAC, 0x00041}, {0x01EAD, 0x01EAD, 0x00061}, {0x01EAE, 0x01EAE, 0x00041}, {0x01EAF, 0x01EAF, 0x00061},
    {0x01EB0, 0x01EB0, 0x00041}, {0x01EB1, 0x01EB1, 0x00061}, {0x01EB2, 0x01EB2, 0x00041}, {0x01EB3, 0x01EB3, 0x00061},
    {0x01EB4, 0x01EB4, 0x00041}, {0x01EB5, 0x01EB5, 0x00061}, {0x01EB6, 0x01EB6, 0x00041}, {0x01EB7, 0x01EB7, 0x00061},
    {0x01EB8, 0x01EB8, 0x00045}, {0x01EB9, 0x01EB9, 0x00065}, {0x01EBA, 0x01EBA, 0x00045}, {0x01EBB, 0x01EBB, 0x00065},
    {0x01EBC, 0x01EBC, 0x00045}, {0x01EBD, 0x01EBD, 0x00065}, {0x01EBE, 0x01EBE, 0x00045}, {0x01EBF, 0x01EBF, 0x00065},
    {0x01EC0, 0x01EC0, 0x00045}, {0x01EC1, 0x01EC1, 0x00065}, {0x01EC2, 0x01EC2, 0x00045}, {0x01EC3, 0x01EC3, 0x00065},
    {0x01EC4, 0x01EC4, 0x00045}, {0x01EC5, 0x01EC5, 0x00065}, {0x01EC6, 0x01EC6, 0x00045}, {0x01EC7, 0x01EC7, 0x00065},
    {0x01EC8, 0x01EC8, 0x00049}, {0x01EC9, 0x01EC9, 0x00069}, {0x01ECA, 0x01ECA, 0x00049}, {0x01ECB, 0x01ECB, 0x00069},
    {0x01ECC, 0x01ECC, 0x0004F}, {0x01ECD, 0x01ECD, 0x0006F}, {0x01ECE, 0x01ECE, 0x0004F}, {0x01ECF, 0x01ECF, 0x0006F},
    {0x01ED0, 0x01ED0, 0x0004F}, {0x01ED1, 0x01ED1, 0x0006F}, {0x01ED2, 0x01ED2, 0x0004F}, {0x01ED3, 0x01ED3, 0x0006F},
    {0x01ED4, 0x01ED4, 0x0004F}, {0x01ED5, 0x01ED5, 0x0006F}, {0x01ED6, 0x01ED6, 0x0004F}, {0x01ED7, 0x01ED7, 0x0006F},
    {0x01ED8, 0x01ED8, 0x0004F}, {0x01ED9, 0x01ED9, 0x0006F}, {0x01EDA, 0x01EDA, 0x0004F}, {0x01EDB, 0x01EDB, 0x0006F},
    {0x01EDC, 0x01EDC, 0x0004F}, {0x01EDD, 0x01EDD, 0x0006F}, {0x01EDE, 0x01EDE, 0x0004F}, {0x01EDF, 0x01EDF, 0x0006F},
    {0x01EE0, 0x01EE0, 0x0004F}, {0x01EE1, 0x01EE1, 0x0006F}, {0x01EE2, 0x01EE2, 0x0004F}, {0x01EE3, 0x01EE3, 0x0006F},
    {0x01EE4, 0x01EE4, 0x00055}, {0x01EE5, 0x01EE5, 0x00075}, {0x01EE6, 0x01EE6, 0x00055}, {0x01EE7, 0x01EE7, 0x00075},
    {0x01EE8, 0x01EE8, 0x00055}, {0x01EE9, 0x01EE9, 0x00075}, {0x01EEA, 0x01EEA, 0x00055}, {0x01EEB, 0x01EEB, 0x00075},
    {0x01EEC, 0x01EEC, 0x00055}, {0x01EED, 0x01EED, 0x00075}, {0x01EEE, 0x01EEE, 0x00055}, {0x01EEF, 0x01EEF, 0x00075},
    {0x01EF0, 0x01EF0, 0x00055}, {0x01EF1, 0x01EF1, 0x00075}, {0x01EF2, 0x01EF2, 0x00059}, {0x01EF3, 0x01EF3, 0x00079},
    {0x01EF4, 0x01EF4, 0x00059}, {0x01EF5, 0x01EF5, 0x00079}, {0x01EF6, 0x01EF6, 0x00059}, {0x01EF7, 0x01EF7, 0x00079},
    {0x01EF8, 0x01EF8, 0x00059}, {0x01EF9, 0x01EF9, 0x00079}, {0x01F00, 0x01F07, 0x003B1}, {0x01F08, 0x01F0F, 0x00391},
    {0x01F10, 0x01F15, 0x003B5}, {0x01F18, 0x01F1D, 0x00395}, {0x01F20, 0x01F27, 0x003B7}, {0x01F28, 0x01F2F, 0x00397},
    {0x01F30, 0x01F37, 0x003B9}, {0x01F38, 0x01F3F, 0x00399}, {0x01F40, 0x01F45, 0x003BF}, {0x01F48, 0x01F4D, 0x0039F},
    {0x01F50, 0x01F57, 0x003C5}, {0x01F59, 0x01F59, 0x003A5}, {0x01F5B, 0x01F5B, 0x003A5}, {0x01F5D, 0x01F5D, 0x003A5},
    {0x01F5F, 0x01F5F, 0x003A5}, {0x01F60, 0x01F67, 0x003C9}, {0x01F68, 0x01F6F, 0x003A9}, {0x01F70, 0x01F71, 0x003B1},
    {0x01F72, 0x01F73, 0x003B5}, {0x01F74, 0x01F75, 0x003B7}, {0x01F76, 0x01F77, 0x003B9}, {0x01F78, 0x01F79, 0x003BF},
    {0x01F7A, 0x01F7B, 0x003C5}, {0x01F7C, 0x01F7D, 0x003C9}, {0x01F80, 0x01F87, 0x003B1}, {0x01F88, 0x01F8F, 0x00391},
    {0x01F90, 0x01F97, 0x003B7}, {0x01F98, 0x01F9F, 0x00397}, {0x01FA0, 0x01FA7, 0x003C9}, {0x01FA8, 0x01FAF, 0x003A9},
    {0x01FB0, 0x01FB4, 0x003B1}, {0x01FB6, 0x01FB7, 0x003B1}, {0x01FB8, 0x01FBC, 0x00391}, {0x01FBE, 0x01FBE, 0x003B9},
    {0x01FC1, 0x01FC1, 0x000A8}, {0x01FC2, 0x01FC4, 0x003B7}, {0x01FC6, 0x01FC7, 0x003B7}, {0x01FC8, 0x01FC9, 0x00395},
    {0x01FCA, 0x01FCC, 0x00397}, {0x01FCD, 0x01FCF, 0x01FBF}, {0x01FD0, 0x01FD3, 0x003B9}, {0x01FD6, 0x01FD7, 0x003B9},
    {0x01FD8, 0x01FDB, 0x00399}, {0x01FDD, 0x01FDF, 0x01FFE}, {0x01FE0, 0x01FE3, 0x003C5}, {0x01FE4, 0x01FE5, 0x003C1},
    {0x01FE6, 0x01FE7, 0x003C5}, {0x01FE8, 0x01FEB, 0x003A5}, {0x01FEC, 0x01FEC, 0x003A1}, {0x01FED, 0x01FEE, 0x000A8},
    {0x01FEF, 0x01FEF, 0x00060}, {0x01FF2, 0x01FF4, 0x003C9}, {0x01FF6, 0x01FF7, 0x003C9}, {0x01FF8, 0x01FF9, 0x0039F},
    {0x01FFA, 0x01FFC, 0x003A9}, {0x01FFD, 0x01FFD, 0x000B4}, {0x02000, 0x02000, 0x02002}, {0x02001, 0x02001, 0x02003},
    {0x02126, 0x02126, 0x003A9}, {0x0212A, 0x0212A, 0x0004B}, {0x0212B, 0x0212B, 0x00041}, {0x0219A, 0x0219A, 0x02190},
    {0x0219B, 0x0219B, 0x02192}, {0x021AE, 0x021AE, 0x02194}, {0x021CD, 0x021CD, 0x021D0}, {0x021CE, 0x021CE, 0x021D4},
    {0x021CF, 0x021CF, 0x021D2}, {0x02204, 0x02204, 0x02203}, {0x02209, 0x02209, 0x02208}, {0x0220C, 0x0220C, 0x0220B},
    {0x02224, 0x02224, 0x02223}, {0x02226, 0x02226, 0x02225}, {0x02241, 0x02241, 0x0223C}, {0x02244, 0x02244, 0x02243},
    {0x02247, 0x02247, 0x02245}, {0x02249, 0x02249, 0x02248}, {0x02260, 0x02260, 0x0003D}, {0x02262, 0x02262, 0x02261},
    {0x0226D, 0x0226D, 0x0224D}, {0x0226E, 0x0226E, 0x0003C}, {0x0226F, 0x0226F, 0x0003E}, {0x02270, 0x02270, 0x02264},
    {0x02271, 0x02271, 0x02265}, {0x02274, 0x02274, 0x02272}, {0x02275, 0x02275, 0x02273}, {0x02278, 0x02278, 0x02276},
    {0x02279, 0x02279, 0x02277}, {0x02280, 0x02280, 0x0227A}, {0x02281, 0x02281, 0x0227B}, {0x02284, 0x02284, 0x02282},
    {0x02285, 0x02285, 0x02283}, {0x02288, 0x02288, 0x02286}, {0x02289, 0x02289, 0x02287}, {0x022AC, 0x022AC, 0x022A2},
    {0x022AD, 0x022AD, 0x022A8}, {0x022AE, 0x022AE, 0x022A9}, {0x022AF, 0x022AF, 0x022AB}, {0x022E0, 0x022E0, 0x0227C},
    {0x022E1, 0x022E1, 0x0227D}, {0x022E2, 0x022E2, 0x02291}, {0x022E3, 0x022E3, 0x02292}, {0x022EA, 0x022EA, 0x022B2},
    {0x022EB, 0x022EB, 0x022B3}, {0x022EC, 0x022EC, 0x022B4}, {0x022ED, 0x022ED, 0x022B5}, {0x02329, 0x02329, 0x03008},
    {0x0232A, 0x0232A, 0x03009}, {0x02ADC, 0x02ADC, 0x02ADD}, {0x0304C, 0x0304C, 0x0304B}, {0x0304E, 0x0304E, 0x0304D},
    {0x03050, 0x03050, 0x0304F}, {0x03052, 0x03052, 0x03051}, {0x03054, 0x03054, 0x03053}, {0x03056, 0x03056, 0x03055},
    {0x03058, 0x03058, 0x03057}, {0x0305A, 0x0305A, 0x03059}, {0x0305C, 0x0305C, 0x0305B}, {0x0305E, 0x0305E, 0x0305D},
    {0x03060, 0x03060, 0x0305F}, {0x03062, 0x03062, 0x03061}, {0x03065, 0x03065, 0x03064}, {0x03067, 0x03067, 0x03066},
    {0x03069, 0x03069, 0x03068}, {0x03070, 0x03071, 0x0306F}, {0x03073, 0x03074, 0x03072}, {0x03076, 0x03077, 0x03075},
    {0x03079, 0x0307A, 0x03078}, {0x0307C, 0x0307D, 0x0307B}, {0x03094, 0x03094, 0x03046}, {0x0309E, 0x0309E, 0x0309D},
    {0x030AC, 0x030AC, 0x030AB}, {0x030AE, 0x030AE, 0x030AD}, {0x030B0, 0x030B0, 0x030AF}, {0x030B2, 0x030B2, 0x030B1},
    {0x030B4, 0x030B4, 0x030B3}, {0x030B6, 0x030B6, 0x030B5}, {0x030B8, 0x030B8, 0x030B7}, {0x030BA, 0x030BA, 0x030B9},
    {0x030BC, 0x030BC, 0x030BB}, {0x030BE, 0x030BE, 0x030BD}, {0x030C0, 0x030C0, 0x030BF}, {0x030C2, 0x030C2, 0x030C1},
    {0x030C5, 0x030C5, 0x030C4}, {0x030C7, 0x030C7, 0x030C6}, {0x030C9, 0x030C9, 0x030C8}, {0x030D0, 0x030D1, 0x030CF},
    {0x030D3, 0x030D4, 0x030D2}, {0x030D6, 0x030D7, 0x030D5}, {0x030D9, 0x030DA, 0x030D8}, {0x030DC, 0x030DD, 0x030DB},
    {0x030F4, 0x030F4, 0x030A6}, {0x030F7, 0x030F7, 0x030EF}, {0x030F8, 0x030F8, 0x030F0}, {0x030F9, 0x030F9, 0x030F1},
    {0x030FA, 0x030FA, 0x030F2}, {0x030FE, 0x030FE, 0x030FD}, {0x0AC00, 0x0AE4B, 0x01100}, {0x0AE4C, 0x0B097, 0x01101},
    {0x0B098, 0x0B2E3, 0x01102}, {0x0B2E4, 0x0B52F, 0x01103}, {0x0B530, 0x0B77B, 0x01104}, {0x0B77C, 0x0B9C7, 0x01105},
    {0x0B9C8, 0x0BC13, 0x01106}, {0x0BC14, 0x0BE5F, 0x01107}, {0x0BE60, 0x0C0AB, 0x01108}, {0x0C0AC, 0x0C2F7, 0x01109},
    {0x0C2F8, 0x0C543, 0x0110A}, {0x0C544, 0x0C78F, 0x0110B}, {0x0C790, 0x0C9DB, 0x0110C}, {0x0C9DC, 0x0CC27, 0x0110D},
    {0x0CC28, 0x0CE73, 0x0110E}, {0x0CE74, 0x0D0BF, 0x0110F}, {0x0D0C0, 0x0D30B, 0x01110}, {0x0D30C, 0x0D557, 0x01111},
    {0x0D558, 0x0D7A3, 0x01112}, {0x0F900, 0x0F900, 0x08C48}, {0x0F901, 0x0F901, 0x066F4}, {0x0F902, 0x0F902, 0x08ECA},
    {0x0F903, 0x0F903, 0x08CC8}, {0x0F904, 0x0F904, 0x06ED1}, {0x0F905, 0x0F905, 0x04E32}, {0x0F906, 0x0F906, 0x053E5},
    {0x0F907, 0x0F908, 0x09F9C}, {0x0F909, 0x0F909, 0x05951}, {0x0F90A, 0x0F90A, 0x091D1}, {0x0F90B, 0x0F90B, 0x05587},
    {0x0F90C, 0x0F90C, 0x05948}, {0x0F90D, 0x0F90D, 0x061F6}, {0x0F90E, 0x0F90E, 0x07669}, {0x0F90F, 0x0F90F, 0x07F85},
    {0x0F910, 0x0F910, 0x0863F}, {0x0F911, 0x0F911, 0x087BA}, {0x0F912, 0x0F912, 0x088F8}, {0x0F913, 0x0F913, 0x0908F},
    {0x0F914, 0x0F914, 0x06A02}, {0x0F915, 0x0F915, 0x06D1B}, {0x0F916, 0x0F916, 0x070D9}, {0x0F917, 0x0F917, 0x073DE},
    {0x0F918, 0x0F918, 0x0843D}, {0x0F919, 0x0F919, 0x0916A}, {0x0F91A, 0x0F91A, 0x099F1}, {0x0F91B, 0x0F91B, 0x04E82},
    {0x0F91C, 0x0F91C, 0x05375}, {0x0F91D, 0x0F91D, 0x06B04}, {0x0F91E, 0x0F91E, 0x0721B}, {0x0F91F, 0x0F91F, 0x0862D},
    {0x0F920, 0x0F920, 0x09E1E}, {0x0F921, 0x0F921, 0x05D50}, {0x0F922, 0x0F922, 0x06FEB}, {0x0F923, 0x0F923, 0x085CD},
    {0x0F924, 0x0F924, 0x08964}, {0x0F925, 0x0F925, 0x062C9}, {0x0F926, 0x0F926, 0x081D8}, {0x0F927, 0x0F927, 0x0881F},
    {0x0F928, 0x0F928, 0x05ECA}, {0x0F929, 0x0F929, 0x06717}, {0x0F92A, 0x0F92A, 0x06D6A}, {0x0F92B, 0x0F92B, 0x072FC},
    {0x0F92C, 0x0F92C, 0x090CE}, {0x0F92D, 0x0F92D, 0x04F86}, {0x0F92E, 0x0F92E, 0x051B7}, {0x0F92F, 0x0F92F, 0x052DE},
    {0x0F930, 0x0F930, 0x064C4}, {0x0F931, 0x0F931, 0x06AD3}, {0x0F932, 0x0F932, 0x07210}, {0x0F933, 0x0F933, 0x076E7},
    {0x0F934, 0x0F934, 0x08001}, {0x0F935, 0x0F935, 0x08606}, {0x0F936, 0x0F936, 0x0865C}, {0x0F937, 0x0F937, 0x08DEF},
    {0x0F938, 0x0F938, 0x09732}, {0x0F939, 0x0F939, 0x09B6F}, {0x0F93A, 0x0F93A, 0x09DFA}, {0x0F93B, 0x0F93B, 0x0788C},
    {0x0F93C, 0x0F93C, 0x0797F}, {0x0F93D, 0x0F93D, 0x07DA0}, {0x0F93E, 0x0F93E, 0x083C9}, {0x0F93F, 0x0F93F, 0x09304},
    {0x0F940, 0x0F940, 0x09E7F}, {0x0F941, 0x0F941, 0x08AD6}, {0x0F942, 0x0F942, 0x058DF}, {0x0F943, 0x0F943, 0x05F04},
    {0x0F944, 0x0F944, 0x07C60}, {0x0F945, 0x0F945, 0x0807E}, {0x0F946, 0x0F946, 0x07262}, {0x0F947, 0x0F947, 0x078CA},
    {0x0F948, 0x0F948, 0x08CC2}, {0x0F949, 0x0F949, 0x096F7}, {0x0F94A, 0x0F94A, 0x058D8}, {0x0F94B, 0x0F94B, 0x05C62},
    {0x0F94C, 0x0F94C, 0x06A13}, {0x0F94D, 0x0F94D, 0x06DDA}, {0x0F94E, 0x0F94E, 0x06F0F}, {0x0F94F, 0x0F94F, 0x07D2F},
    {0x0F950, 0x0F950, 0x07E37}, {0x0F951, 0x0F951, 0x0964B}, {0x0F952, 0x0F952, 0x052D2}, {0x0F953, 0x0F953, 0x0808B},
    {0x0F954, 0x0F954, 0x051DC}, {0x0F955, 0x0F955, 0x051CC}, {0x0F956, 0x0F956, 0x07A1C}, {0x0F957, 0x0F957, 0x07DBE},
    {0x0F958, 0x0F958, 0x083F1}, {0x0F959, 0x0F959, 0x09675}, {0x0F95A, 0x0F95A, 0x08B80}, {0x0F95B, 0x0F95B, 0x062CF},
    {0x0F95C, 0x0F95C, 0x06A02}, {0x0F95D, 0x0F95D, 0x08AFE}, {0x0F95E, 0x0F95E, 0x04E39}, {0x0F95F, 0x0F95F, 0x05BE7},
    {0x0F960, 0x0F960, 0x06012}, {0x0F961, 0x0F961, 0x07387}, {0x0F962, 0x0F962, 0x07570}, {0x0F963, 0x0F963, 0x05317},
    {0x0F964, 0x0F964, 0x078FB}, {0x0F965, 0x0F965, 0x04FBF}, {0x0F966, 0x0F966, 0x05FA9}, {0x0F967, 0x0F967, 0x04E0D},
    {0x0F968, 0x0F968, 0x06CCC}, {0x0F969, 0x0F969, 0x06578}, {0x0F96A, 0x0F96A, 0x07D22}, {0x0F96B, 0x0F96B, 0x053C3},
    {0x0F96C, 0x0F96C, 0x0585E}, {0x0F96D, 0x0F96D, 0x07701}, {0x0F96E, 0x0F96E, 0x08449}, {0x0F96F, 0x0F96F, 0x08AAA},
    {0x0F970, 0x0F970, 0x06BBA}, {0x0F971, 0x0F971, 0x08FB0}, {0x0F972, 0x0F972, 0x06C88}, {0x0F973, 0x0F973, 0x062FE},
    {0x0F974, 0x0F974, 0x082E5}, {0x0F975, 0x0F975, 0x063A0}, {0x0F976, 0x0F976, 0x07565}, {0x0F977, 0x0F977, 0x04EAE},
    {0x0F978, 0x0F978, 0x05169}, {0x0F979, 0x0F979, 0x051C9}, {0x0F97A, 0x0F97A, 0x06881}, {0x0F97B, 0x0F97B, 0x07CE7},
    {0x0F97C, 0x0F97C, 0x0826F}, {0x0F97D, 0x0F97D, 0x08AD2}, {0x0F97E, 0x0F97E, 0x091CF}, {0x0F97F, 0x0F97F, 0x052F5},
    {0x0F980, 0x0F980, 0x05442}, {0x0F981, 0x0F981, 0x05973}, {0x0F982, 0x0F982, 0x05EEC}, {0x0F983, 0x0F983, 0x065C5},
    {0x0F984, 0x0F984, 0x06FFE}, {0x0F985, 0x0F985, 0x0792A}, {0x0F986, 0x0F986, 0x095AD}, {0x0F987, 0x0F987, 0x09A6A},
    {0x0F988, 0x0F988, 0x09E97}, {0x0F989, 0x0F989, 0x09ECE}, {0x0F98A, 0x0F98A, 0x0529B}, {0x0F98B, 0x0F98B, 0x066C6},
    {0x0F98C, 0x0F98C, 0x06B77}, {0x0F98D, 0x0F98D, 0x08F62}, {0x0F98E, 0x0F98E, 0x05E74}, {0x0F98F, 0x0F98F, 0x06190},
    {0x0F990, 0x0F990, 0x06200}, {0x0F991, 0x0F991, 0x0649A}, {0x0F992, 0x0F992, 0x06F23}, {0x0F993, 0x0F993, 0x07149},
    {0x0F994, 0x0F994, 0x07489}, {0x0F995, 0x0F995, 0x079CA}, {0x0F996, 0x0F996, 0x07DF4}, {0x0F997, 0x0F997, 0x0806F},
    {0x0F998, 0x0F998, 0x08F26}, {0x0F999, 0x0F999, 0x084EE}, {0x0F99A, 0x0F99A, 0x09023}, {0x0F99B, 0x0F99B, 0x0934A},
    {0x0F99C, 0x0F99C, 0x05217}, {0x0F99D, 0x0F99D, 0x052A3}, {0x0F99E, 0x0F99E, 0x054BD}, {0x0F99F, 0x0F99F, 0x070C8},
    {0x0F9A0, 0x0F9A0, 0x088C2}, {0x0F9A1, 0x0F9A1, 0x08AAA}, {0x0F9A2, 0x0F9A2, 0x05EC9}, {0x0F9A3, 0x0F9A3, 0x05FF5},
    {0x0F9A4, 0x0F9A4, 0x0637B}, {0x0F9A5, 0x0F9A5, 0x06BAE}, {0x0F9A6, 0x0F9A6, 0x07C3E}, {0x0F9A7, 0x0F9A7, 0x07375},
    {0x0F9A8, 0x0F9A8, 0x04EE4}, {0x0F9A9, 0x0F9A9, 0x056F9}, {0x0F9AA, 0x0F9AA, 0x05BE7}, {0x0F9AB, 0x0F9AB, 0x05DBA},
    {0x0F9AC, 0x0F9AC, 0x0601C}, {0x0F9AD, 0x0F9AD, 0x073B2}, {0x0F9AE, 0x0F9AE, 0x07469}, {0x0F9AF, 0x0F9AF, 0x07F9A},
    {0x0F9B0, 0x0F9B0, 0x08046}, {0x0F9B1, 0x0F9B1, 0x09234}, {0x0F9B2, 0x0F9B2, 0x096F6}, {0x0F9B3, 0x0F9B3, 0x09748},
    {0x0F9B4, 0x0F9B4, 0x09818}, {0x0F9B5, 0x0F9B5, 0x04F8B}, {0x0F9B6, 0x0F9B6, 0x079AE}, {0x0F9B7, 0x0F9B7, 0x091B4},
    {0x0F9B8, 0x0F9B8, 0x096B8}, {0x0F9B9, 0x0F9B9, 0x060E1}, {0x0F9BA, 0x0F9BA, 0x04E86}, {0x0F9BB, 0x0F9BB, 0x050DA},
    {0x0F9BC, 0x0F9BC, 0x05BEE}, {0x0F9BD, 0x0F9BD, 0x05C3F}, {0x0F9BE, 0x0F9BE, 0x06599}, {0x0F9BF, 0x0F9BF, 0x06A02},
    {0x0F9C0, 0x0F9C0, 0x071CE}, {0x0F9C1, 0x0F9C1, 0x07642}, {0x0F9C2, 0x0F9C2, 0x084FC}, {0x0F9C3, 0x0F9C3, 0x0907C},
    {0x0F9C4, 0x0F9C4, 0x09F8D}, {0x0F9C5, 0x0F9C5, 0x06688}, {0x0F9C6, 0x0F9C6, 0x0962E}, {0x0F9C7, 0x0F9C7, 0x05289},
    {0x0F9C8, 0x0F9C8, 0x0677B}, {0x0F9C9, 0x0F9C9, 0x067F3}, {0x0F9CA, 0x0F9CA, 0x06D41}, {0x0F9CB, 0x0F9CB, 0x06E9C},
    {0x0F9CC, 0x0F9CC, 0x07409}, {0x0F9CD, 0x0F9CD, 0x07559}, {0x0F9CE, 0x0F9CE, 0x0786B}, {0x0F9CF, 0x0F9CF, 0x07D10},
    {0x0F9D0, 0x0F9D0, 0x0985E}, {0x0F9D1, 0x0F9D1, 0x0516D}, {0x0F9D2, 0x0F9D2, 0x0622E}, {0x0F9D3, 0x0F9D3, 0x09678},
    {0x0F9D4, 0x0F9D4, 0x0502B}, {0x0F9D5, 0x0F9D5, 0x05D19}, {0x0F9D6, 0x0F9D6, 0x06DEA}, {0x0F9D7, 0x0F9D7, 0x08F2A},
    {0x0F9D8, 0x0F9D8, 0x05F8B}, {0x0F9D9, 0x0F9D9, 0x06144}, {0x0F9DA, 0x0F9DA, 0x06817}, {0x0F9DB, 0x0F9DB, 0x07387},
    {0x0F9DC, 0x0F9DC, 0x09686}, {0x0F9DD, 0x0F9DD, 0x05229}, {0x0F9DE, 0x0F9DE, 0x0540F}, {0x0F9DF, 0x0F9DF, 0x05C65},
    {0x0F9E0, 0x0F9E0, 0x06613}, {0x0F9E1, 0x0F9E1, 0x0674E}, {0x0F9E2, 0x0F9E2, 0x068A8}, {0x0F9E3, 0x0F9E3, 0x06CE5},
    {0x0F9E4, 0x0F9E4, 0x07406}, {0x0F9E5, 0x0F9E5, 0x075E2}, {0x0F9E6, 0x0F9E6, 0x07F79}, {0x0F9E7, 0x0F9E7, 0x088CF},
    {0x0F9E8, 0x0F9E8, 0x088E1}, {0x0F9E9, 0x0F9E9, 0x091CC}, {0x0F9EA, 0x0F9EA, 0x096E2}, {0x0F9EB, 0x0F9EB, 0x0533F},
    {0x0F9EC, 0x0F9EC, 0x06EBA}, {0x0F9ED, 0x0F9ED, 0x0541D}, {0x0F9EE, 0x0F9EE, 0x071D0}, {0x0F9EF, 0x0F9EF, 0x07498},
    {0x0F9F0, 0x0F9F0, 0x085FA}, {0x0F9F1, 0x0F9F1, 0x096A3}, {0x0F9F2, 0x0F9F2, 0x09C57}, {0x0F9F3, 0x0F9F3, 0x09E9F},
    {0x0F9F4, 0x0F9F4, 0x06797}, {0x0F9F5, 0x0F9F5, 0x06DCB}, {0x0F9F6, 0x0F9F6, 0x081E8}, {0x0F9F7, 0x0F9F7, 0x07ACB},
    {0x0F9F8, 0x0F9F8, 0x07B20}, {0x0F9F9, 0x0F9F9, 0x07C92}, {0x0F9FA, 0x0F9FA, 0x072C0}, {0x0F9FB, 0x0F9FB, 0x07099},
    {0x0F9FC, 0x0F9FC, 0x08B58}, {0x0F9FD, 0x0F9FD, 0x04EC0}, {0x0F9FE, 0x0F9FE, 0x08336}, {0x0F9FF, 0x0F9FF, 0x0523A},
    {0x0FA00, 0x0FA00, 0x05207}, {0x0FA01, 0x0FA01, 0x05EA6}, {0x0FA02, 0x0FA02, 0x062D3}, {0x0FA03, 0x0FA03, 0x07CD6},
    {0x0FA04, 0x0FA04, 0x05B85}, {0x0FA05, 0x0FA05, 0x06D1E}, {0x0FA06, 0x0FA06, 0x066B4}, {0x0FA07, 0x0FA07, 0x08F3B},
    {0x0FA08, 0x0FA08, 0x0884C}, {0x0FA09, 0x0FA09, 0x0964D}, {0x0FA0A, 0x0FA0A, 0x0898B}, {0x0FA0B, 0x0FA0B, 0x05ED3},
    {0x0FA0C, 0x0FA0C, 0x05140}, {0x0FA0D, 0x0FA0D, 0x055C0}, {0x0FA10, 0x0FA10, 0x0585A}, {0x0FA12, 0x0FA12, 0x06674},
    {0x0FA15, 0x0FA15, 0x051DE}, {0x0FA16, 0x0FA16, 0x0732A}, {0x0FA17, 0x0FA17, 0x076CA}, {0x0FA18, 0x0FA18, 0x0793C},
    {0x0FA19, 0x0FA19, 0x0795E}, {0x0FA1A, 0x0FA1A, 0x07965}, {0x0FA1B, 0x0FA1B, 0x0798F}, {0x0FA1C, 0x0FA1C, 0x09756},
    {0x0FA1D, 0x0FA1D, 0x07CBE}, {0x0FA1E, 0x0FA1E, 0x07FBD}, {0x0FA20, 0x0FA20, 0x08612}, {0x0FA22, 0x0FA22, 0x08AF8},
    {0x0FA25, 0x0FA25, 0x09038}, {0x0FA26, 0x0FA26, 0x090FD}, {0x0FA2A, 0x0FA2A, 0x098EF}, {0x0FA2B, 0x0FA2B, 0x098FC},
    {0x0FA2C, 0x0FA2C, 0x09928}, {0x0FA2D, 0x0FA2D, 0x09DB4}, {0x0FA2E, 0x0FA2E, 0x090DE}, {0x0FA2F, 0x0FA2F, 0x096B7},
    {0x0FA30, 0x0FA30, 0x04FAE}, {0x0FA31, 0x0FA31, 0x050E7}, {0x0FA32, 0x0FA32, 0x0514D}, {0x0FA33, 0x0FA33, 0x052C9},
    {0x0FA34, 0x0FA34, 0x052E4}, {0x0FA35, 0x0FA35, 0x05351}, {0x0FA36, 0x0FA36, 0x0559D}, {0x0FA37, 0x0FA37, 0x05606},
    {0x0FA38, 0x0FA38, 0x05668}, {0x0FA39, 0x0FA39, 0x05840}, {0x0FA3A, 0x0FA3A, 0x058A8}, {0x0FA3B, 0x0FA3B, 0x05C64},
    {0x0FA3C, 0x0FA3C, 0x05C6E}, {0x0FA3D, 0x0FA3D, 0x06094}, {0x0FA3E, 0x0FA3E, 0x06168}, {0x0FA3F, 0x0FA3F, 0x0618E},
    {0x0FA40, 0x0FA40, 0x061F2}, {0x0FA41, 0x0FA41, 0x0654F}, {0x0FA42, 0x0FA42, 0x065E2}, {0x0FA43, 0x0FA43, 0x06691},
    {0x0FA44, 0x0FA44, 0x06885}, {0x0FA45, 0x0FA45, 0x06D77}, {0x0FA46, 0x0FA46, 0x06E1A}, {0x0FA47, 0x0FA47, 0x06F22},
    {0x0FA48, 0x0FA48, 0x0716E}, {0x0FA49, 0x0FA49, 0x0722B}, {0x0FA4A, 0x0FA4A, 0x07422}, {0x0FA4B, 0x0FA4B, 0x07891},
    {0x0FA4C, 0x0FA4C, 0x0793E}, {0x0FA4D, 0x0FA4D, 0x07949}, {0x0FA4E, 0x0FA4E, 0x07948}, {0x0FA4F, 0x0FA4F, 0x07950},
    {0x0FA50, 0x0FA50, 0x07956}, {0x0FA51, 0x0FA51, 0x0795D}, {0x0FA52, 0x0FA52, 0x0798D}, {0x0FA53, 0x0FA53, 0x0798E},
    {0x0FA54, 0x0FA54, 0x07A40}, {0x0FA55, 0x0FA55, 0x07A81}, {0x0FA56, 0x0FA56, 0x07BC0}, {0x0FA57, 0x0FA57, 0x07DF4},
    {0x0FA58, 0x0FA58, 0x07E09}, {0x0FA59, 0x0FA59, 0x07E41}, {0x0FA5A, 0x0FA5A, 0x07F72}, {0x0FA5B, 0x0FA5B, 0x08005},
    {0x0FA5C, 0x0FA5C, 0x081ED}, {0x0FA5D, 0x0FA5E, 0x08279}, {0x0FA5F, 0x0FA5F, 0x08457}, {0x0FA60, 0x0FA60, 0x08910},
    {0x0FA61, 0x0FA61, 0x08996}, {0x0FA62, 0x0FA62, 0x08B01}, {0x0FA63, 0x0FA63, 0x08B39}, {0x0FA64, 0x0FA64, 0x08CD3},
    {0x0FA65, 0x0FA65, 0x08D08}, {0x0FA66, 0x0FA66, 0x08FB6}, {0x0FA67, 0x0FA67, 0x09038}, {0x0FA68, 0x0FA68, 0x096E3},
    {0x0FA69, 0x0FA69, 0x097FF}, {0x0FA6A, 0x0FA6A, 0x0983B}, {0x0FA6B, 0x0FA6B, 0x06075}, {0x0FA6C, 0x0FA6C, 0x242EE},
    {0x0FA6D, 0x0FA6D, 0x08218}, {0x0FA70, 0x0FA70, 0x04E26}, {0x0FA71, 0x0FA71, 0x051B5}, {0x0FA72, 0x0FA72, 0x05168},
    {0x0FA73, 0x0FA73, 0x04F80}, {0x0FA74, 0x0FA74, 0x05145}, {0x0FA75, 0x0FA75, 0x05180}, {0x0FA76, 0x0FA76, 0x052C7},
    {0x0FA77, 0x0FA77, 0x052FA}, {0x0FA78, 0x0FA78, 0x0559D}, {0x0FA79, 0x0FA79, 0x05555}, {0x0FA7A, 0x0FA7A, 0x05599},
    {0x0FA7B, 0x0FA7B, 0x055E2}, {0x0FA7C, 0x0FA7C, 0x0585A}, {0x0FA7D, 0x0FA7D, 0x058B3}, {0x0FA7E, 0x0FA7E, 0x05944},
    {0x0FA7F, 0x0FA7F, 0x05954}, {0x0FA80, 0x0FA80, 0x05A62}, {0x0FA81, 0x0FA81, 0x05B28}, {0x0FA82, 0x0FA82, 0x05ED2},
    {0x0FA83, 0x0FA83, 0x05ED9}, {0x0FA84, 0x0FA84, 0x05F69}, {0x0FA85, 0x0FA85, 0x05FAD}, {0x0FA86, 0x0FA86, 0x060D8},
    {0x0FA87, 0x0FA87, 0x0614E}, {0x0FA88, 0x0FA88, 0x06108}, {0x0FA89, 0x0FA89, 0x0618E}, {0x0FA8A, 0x0FA8A, 0x06160},
    {0x0FA8B, 0x0FA8B, 0x061F2}, {0x0FA8C, 0x0FA8C, 0x06234}, {0x0FA8D, 0x0FA8D, 0x063C4}, {0x0FA8E, 0x0FA8E, 0x0641C},
    {0x0FA8F, 0x0FA8F, 0x06452}, {0x0FA90, 0x0FA90, 0x06556}, {0x0FA91, 0x0FA91, 0x06674}, {0x0FA92, 0x0FA92, 0x06717},
    {0x0FA93, 0x0FA93, 0x0671B}, {0x0FA94, 0x0FA94, 0x06756}, {0x0FA95, 0x0FA95, 0x06B79}, {0x0FA96, 0x0FA96, 0x06BBA},
    {0x0FA97, 0x0FA97, 0x06D41}, {0x0FA98, 0x0FA98, 0x06EDB}, {0x0FA99, 0x0FA99, 0x06ECB}, {0x0FA9A, 0x0FA9A, 0x06F22},
    {0x0FA9B, 0x0FA9B, 0x0701E}, {0x0FA9C, 0x0FA9C, 0x0716E}, {0x0FA9D, 0x0FA9D, 0x077A7}, {0x0FA9E, 0x0FA9E, 0x07235},
    {0x0FA9F, 0x0FA9F, 0x072AF}, {0x0FAA0, 0x0FAA0, 0x0732A}, {0x0FAA1, 0x0FAA1, 0x07471}, {0x0FAA2, 0x0FAA2, 0x07506},
    {0x0FAA3, 0x0FAA3, 0x0753B}, {0x0FAA4, 0x0FAA4, 0x0761D}, {0x0FAA5, 0x0FAA5, 0x0761F}, {0x0FAA6, 0x0FAA6, 0x076CA},
    {0x0FAA7, 0x0FAA7, 0x076DB}, {0x0FAA8, 0x0FAA8, 0x076F4}, {0x0FAA9, 0x0FAA9, 0x0774A}, {0x0FAAA, 0x0FAAA, 0x07740},
    {0x0FAAB, 0x0FAAB, 0x078CC}, {0x0FAAC, 0x0FAAC, 0x07AB1}, {0x0FAAD, 0x0FAAD, 0x07BC0}, {0x0FAAE, 0x0FAAE, 0x07C7B},
    {0x0FAAF, 0x0FAAF, 0x07D5B}, {0x0FAB0, 0x0FAB0, 0x07DF4}, {0x0FAB1, 0x0FAB1, 0x07F3E}, {0x0FAB2, 0x0FAB2, 0x08005},
    {0x0FAB3, 0x0FAB3, 0x08352}, {0x0FAB4, 0x0FAB4, 0x083EF}, {0x0FAB5, 0x0FAB5, 0x08779}, {0x0FAB6, 0x0FAB6, 0x08941},
    {0x0FAB7, 0x0FAB7, 0x08986}, {0x0FAB8, 0x0FAB8, 0x08996}, {0x0FAB9, 0x0FAB9, 0x08ABF}, {0x0FABA, 0x0FABA, 0x08AF8},
    {0x0FABB, 0x0FABB, 0x08ACB}, {0x0FABC, 0x0FABC, 0x08B01}, {0x0FABD, 0x0FABD, 0x08AFE}, {0x0FABE, 0x0FABE, 0x08AED},
    {0x0FABF, 0x0FABF, 0x08B39}, {0x0FAC0, 0x0FAC0, 0x08B8A}, {0x0FAC1, 0x0FAC1, 0x08D08}, {0x0FAC2, 0x0FAC2, 0x08F38},
    {0x0FAC3, 0x0FAC3, 0x09072}, {0x0FAC4, 0x0FAC4, 0x09199}, {0x0FAC5, 0x0FAC5, 0x09276}, {0x0FAC6, 0x0FAC6, 0x0967C},
    {0x0FAC7, 0x0FAC7, 0x096E3}, {0x0FAC8, 0x0FAC8, 0x09756}, {0x0FAC9, 0x0FAC9, 0x097DB}, {0x0FACA, 0x0FACA, 0x097FF},
    {0x0FACB, 0x0FACB, 0x0980B}, {0x0FACC, 0x0FACC, 0x0983B}, {0x0FACD, 0x0FACD, 0x09B12}, {0x0FACE, 0x0FACE, 0x09F9C},
    {0x0FACF, 0x0FACF, 0x2284A}, {0x0FAD0, 0x0FAD0, 0x22844}, {0x0FAD1, 0x0FAD1, 0x233D5}, {0x0FAD2, 0x0FAD2, 0x03B9D},
    {0x0FAD3, 0x0FAD3, 0x04018}, {0x0FAD4, 0x0FAD4, 0x04039}, {0x0FAD5, 0x0FAD5, 0x25249}, {0x0FAD6, 0x0FAD6, 0x25CD0},
    {0x0FAD7, 0x0FAD7, 0x27ED3}, {0x0FAD8, 0x0FAD8, 0x09F43}, {0x0FAD9, 0x0FAD9, 0x09F8E}, {0x0FB1D, 0x0FB1D, 0x005D9},
    {0x0FB1F, 0x0FB1F, 0x005F2}, {0x0FB2A, 0x0FB2D, 0x005E9}, {0x0FB2E, 0x0FB30, 0x005D0}, {0x0FB31, 0x0FB31, 0x005D1},
    {0x0FB32, 0x0FB32, 0x005D2}, {0x0FB33, 0x0FB33, 0x005D3}, {0x0FB34, 0x0FB34, 0x005D4}, {0x0FB35, 0x0FB35, 0x005D5},
    {0x0FB36, 0x0FB36, 0x005D6}, {0x0FB38, 0x0FB38, 0x005D8}, {0x0FB39, 0x0FB39, 0x005D9}, {0x0FB3A, 0x0FB3A, 0x005DA},
    {0x0FB3B, 0x0FB3B, 0x005DB}, {0x0FB3C, 0x0FB3C, 0x005DC}, {0x0FB3E, 0x0FB3E, 0x005DE}, {0x0FB40, 0x0FB40, 0x005E0},
    {0x0FB41, 0x0FB41, 0x005E1}, {0x0FB43, 0x0FB43, 0x005E3}, {0x0FB44, 0x0FB44, 0x005E4}, {0x0FB46, 0x0FB46, 0x005E6},
    {0x0FB47, 0x0FB47, 0x005E7}, {0x0FB48, 0x0FB48, 0x005E8}, {0x0FB49, 0x0FB49, 0x005E9}, {0x0FB4A, 0x0FB4A, 0x005EA},
    {0x0FB4B, 0x0FB4B, 0x005D5}, {0x0FB4C, 0x0FB4C, 0x005D1}, {0x0FB4D, 0x0FB4D, 0x005DB}, {0x0FB4E, 0x0FB4E, 0x005E4},
    {0x1109A, 0x1109A, 0x11099}, {0x1109C, 0x1109C, 0x1109B}, {0x110AB, 0x110AB, 0x110A5}, {0x1112E, 0x1112E, 0x11131},
    {0x1112F, 0x1112F, 0x11132}, {0x1134B, 0x1134C, 0x11347}, {0x114BB, 0x114BC, 0x114B9}, {0x114BE, 0x114BE, 0x114B9},
    {0x115BA, 0x115BA, 0x115B8}, {0x115BB, 0x115BB, 0x115B9}, {0x11938, 0x11938, 0x11935}, {0x1D15E, 0x1D15E, 0x1D157},
    {0x1D15F, 0x1D164, 0x1D158}, {0x1D1BB, 0x1D1BB, 0x1D1B9}, {0x1D1BC, 0x1D1BC, 0x1D1BA}, {0x1D1BD, 0x1D1BD, 0x1D1B9},
    {0x1D1BE, 0x1D1BE, 0x1D1BA}, {0x1D1BF, 0x1D1BF, 0x1D1B9}, {0x1D1C0, 0x1D1C0, 0x1D1BA}, {0x2F800, 0x2F800, 0x04E3D},
    {0x2F801, 0x2F801, 0x04E38}, {0x2F802, 0x2F802, 0x04E41}, {0x2F803, 0x2F803, 0x20122}, {0x2F804, 0x2F804, 0x04F60},
    {0x2F805, 0x2F805, 0x04FAE}, {0x2F806, 0x2F806, 0x04FBB}, {0x2F807, 0x2F807, 0x05002}, {0x2F808, 0x2F808, 0x0507A},
    {0x2F809, 0x2F809, 0x05099}, {0x2F80A, 0x2F80A, 0x050E7}, {0x2F80B, 0x2F80B, 0x050CF}, {0x2F80C, 0x2F80C, 0x0349E},
    {0x2F80D, 0x2F80D, 0x2063A}, {0x2F80E, 0x2F80E, 0x0514D}, {0x2F80F, 0x2F80F, 0x05154}, {0x2F810, 0x2F810, 0x05164},
    {0x2F811, 0x2F811, 0x05177}, {0x2F812, 0x2F812, 0x2051C}, {0x2F813, 0x2F813, 0x034B9}, {0x2F814, 0x2F814, 0x05167},
    {0x2F815, 0x2F815, 0x0518D}, {0x2F816, 0x2F816, 0x2054B}, {0x2F817, 0x2F817, 0x05197}, {0x2F818, 0x2F818, 0x051A4},
    {0x2F819, 0x2F819, 0x04ECC}, {0x2F81A, 0x2F81A, 0x051AC}, {0x2F81B, 0x2F81B, 0x051B5}, {0x2F81C, 0x2F81C, 0x291DF},
    {0x2F81D, 0x2F81D, 0x051F5}, {0x2F81E, 0x2F81E, 0x05203}, {0x2F81F, 0x2F81F, 0x034DF}, {0x2F820, 0x2F820, 0x0523B},
    {0x2F821, 0x2F821, 0x05246}, {0x2F822, 0x2F822, 0x05272}, {0x2F823, 0x2F823, 0x05277}, {0x2F824, 0x2F824, 0x03515},
    {0x2F825, 0x2F825, 0x052C7}, {0x2F826, 0x2F826, 0x052C9}, {0x2F827, 0x2F827, 0x052E4}, {0x2F828, 0x2F828, 0x052FA},
    {0x2F829, 0x2F829, 0x05305}, {0x2F82A, 0x2F82A, 0x05306}, {0x2F82B, 0x2F82B, 0x05317}, {0x2F82C, 0x2F82C, 0x05349},
    {0x2F82D, 0x2F82D, 0x05351}, {0x2F82E, 0x2F82E, 0x0535A}, {0x2F82F, 0x2F82F, 0x05373}, {0x2F830, 0x2F830, 0x0537D},
    {0x2F831, 0x2F833, 0x0537F}, {0x2F834, 0x2F834, 0x20A2C}, {0x2F835, 0x2F835, 0x07070}, {0x2F836, 0x2F836, 0x053CA},
    {0x2F837, 0x2F837, 0x053DF}, {0x2F838, 0x2F838, 0x20B63}, {0x2F839, 0x2F839, 0x053EB}, {0x2F83A, 0x2F83A, 0x053F1},
    {0x2F83B, 0x2F83B, 0x05406}, {0x2F83C, 0x2F83C, 0x0549E}, {0x2F83D, 0x2F83D, 0x05438}, {0x2F83E, 0x2F83E, 0x05448},
    {0x2F83F, 0x2F83F, 0x05468}, {0x2F840, 0x2F840, 0x054A2}, {0x2F841, 0x2F841, 0x054F6}, {0x2F842, 0x2F842, 0x05510},
    {0x2F843, 0x2F843, 0x05553}, {0x2F844, 0x2F844, 0x05563}, {0x2F845, 0x2F846, 0x05584}, {0x2F847, 0x2F847, 0x05599},
    {0x2F848, 0x2F848, 0x055AB}, {0x2F849, 0x2F849, 0x055B3}, {0x2F84A, 0x2F84A, 0x055C2}, {0x2F84B, 0x2F84B, 0x05716},
    {0x2F84C, 0x2F84C, 0x05606}, {0x2F84D, 0x2F84D, 0x05717}, {0x2F84E, 0x2F84E, 0x05651}, {0x2F84F, 0x2F84F, 0x05674},
    {0x2F850, 0x2F850, 0x05207}, {0x2F851, 0x2F851, 0x058EE}, {0x2F852, 0x2F852, 0x057CE}, {0x2F853, 0x2F853, 0x057F4},
    {0x2F854, 0x2F854, 0x0580D}, {0x2F855, 0x2F855, 0x0578B}, {0x2F856, 0x2F856, 0x05832}, {0x2F857, 0x2F857, 0x05831},
    {0x2F858, 0x2F858, 0x058AC}, {0x2F859, 0x2F859, 0x214E4}, {0x2F85A, 0x2F85A, 0x058F2}, {0x2F85B, 0x2F85B, 0x058F7},
    {0x2F85C, 0x2F85C, 0x05906}, {0x2F85D, 0x2F85D, 0x0591A}, {0x2F85E, 0x2F85E, 0x05922}, {0x2F85F, 0x2F85F, 0x05962},
    {0x2F860, 0x2F860, 0x216A8}, {0x2F861, 0x2F861, 0x216EA}, {0x2F862, 0x2F862, 0x059EC}, {0x2F863, 0x2F863, 0x05A1B},
    {0x2F864, 0x2F864, 0x05A27}, {0x2F865, 0x2F865, 0x059D8}, {0x2F866, 0x2F866, 0x05A66}, {0x2F867, 0x2F867, 0x036EE},
    {0x2F868, 0x2F868, 0x036FC}, {0x2F869, 0x2F869, 0x05B08}, {0x2F86A, 0x2F86B, 0x05B3E}, {0x2F86C, 0x2F86C, 0x219C8},
    {0x2F86D, 0x2F86D, 0x05BC3}, {0x2F86E, 0x2F86E, 0x05BD8}, {0x2F86F, 0x2F86F, 0x05BE7}, {0x2F870, 0x2F870, 0x05BF3},
    {0x2F871, 0x2F871, 0x21B18}, {0x2F872, 0x2F872, 0x05BFF}, {0x2F873, 0x2F873, 0x05C06}, {0x2F874, 0x2F874, 0x05F53},
    {0x2F875, 0x2F875, 0x05C22}, {0x2F876, 0x2F876, 0x03781}, {0x2F877, 0x2F877, 0x05C60}, {0x2F878, 0x2F878, 0x05C6E},
    {0x2F879, 0x2F879, 0x05CC0}, {0x2F87A, 0x2F87A, 0x05C8D}, {0x2F87B, 0x2F87B, 0x21DE4}, {0x2F87C, 0x2F87C, 0x05D43},
    {0x2F87D, 0x2F87D, 0x21DE6}, {0x2F87E, 0x2F87E, 0x05D6E}, {0x2F87F, 0x2F87F, 0x05D6B}, {0x2F880, 0x2F880, 0x05D7C},
    {0x2F881, 0x2F881, 0x05DE1}, {0x2F882, 0x2F882, 0x05DE2}, {0x2F883, 0x2F883, 0x0382F}, {0x2F884, 0x2F884, 0x05DFD},
    {0x2F885, 0x2F885, 0x05E28}, {0x2F886, 0x2F886, 0x05E3D}, {0x2F887, 0x2F887, 0x05E69}, {0x2F888, 0x2F888, 0x03862},
    {0x2F889, 0x2F889, 0x22183}, {0x2F88A, 0x2F88A, 0x0387C}, {0x2F88B, 0x2F88B, 0x05EB0}, {0x2F88C, 0x2F88C, 0x05EB3},
    {0x2F88D, 0x2F88D, 0x05EB6}, {0x2F88E, 0x2F88E, 0x05ECA}, {0x2F88F, 0x2F88F, 0x2A392}, {0x2F890, 0x2F890, 0x05EFE},
    {0x2F891, 0x2F892, 0x22331}, {0x2F893, 0x2F893, 0x08201}, {0x2F894, 0x2F895, 0x05F22}, {0x2F896, 0x2F896, 0x038C7},
    {0x2F897, 0x2F897, 0x232B8}, {0x2F898, 0x2F898, 0x261DA}, {0x2F899, 0x2F899, 0x05F62}, {0x2F89A, 0x2F89A, 0x05F6B},
    {0x2F89B, 0x2F89B, 0x038E3}, {0x2F89C, 0x2F89C, 0x05F9A}, {0x2F89D, 0x2F89D, 0x05FCD}, {0x2F89E, 0x2F89E, 0x05FD7},
    {0x2F89F, 0x2F89F, 0x05FF9}, {0x2F8A0, 0x2F8A0, 0x06081}, {0x2F8A1, 0x2F8A1, 0x0393A}, {0x2F8A2, 0x2F8A2, 0x0391C},
    {0x2F8A3, 0x2F8A3, 0x06094}, {0x2F8A4, 0x2F8A4, 0x226D4}, {0x2F8A5, 0x2F8A5, 0x060C7}, {0x2F8A6, 0x2F8A6, 0x06148},
    {0x2F8A7, 0x2F8A7, 0x0614C}, {0x2F8A8, 0x2F8A8, 0x0614E}, {0x2F8A9, 0x2F8A9, 0x0614C}, {0x2F8AA, 0x2F8AA, 0x0617A},
    {0x2F8AB, 0x2F8AB, 0x0618E}, {0x2F8AC, 0x2F8AC, 0x061B2}, {0x2F8AD, 0x2F8AD, 0x061A4}, {0x2F8AE, 0x2F8AE, 0x061AF},
    {0x2F8AF, 0x2F8AF, 0x061DE}, {0x2F8B0, 0x2F8B0, 0x061F2}, {0x2F8B1, 0x2F8B1, 0x061F6}, {0x2F8B2, 0x2F8B2, 0x06210},
    {0x2F8B3, 0x2F8B3, 0x0621B}, {0x2F8B4, 0x2F8B4, 0x0625D}, {0x2F8B5, 0x2F8B5, 0x062B1}, {0x2F8B6, 0x2F8B6, 0x062D4},
    {0x2F8B7, 0x2F8B7, 0x06350}, {0x2F8B8, 0x2F8B8, 0x22B0C}, {0x2F8B9, 0x2F8B9, 0x0633D}, {0x2F8BA, 0x2F8BA, 0x062FC},
    {0x2F8BB, 0x2F8BB, 0x06368}, {0x2F8BC, 0x2F8BC, 0x06383}, {0x2F8BD, 0x2F8BD, 0x063E4}, {0x2F8BE, 0x2F8BE, 0x22BF1},
    {0x2F8BF, 0x2F8BF, 0x06422}, {0x2F8C0, 0x2F8C0, 0x063C5}, {0x2F8C1, 0x2F8C1, 0x063A9}, {0x2F8C2, 0x2F8C2, 0x03A2E},
    {0x2F8C3, 0x2F8C3, 0x06469}, {0x2F8C4, 0x2F8C4, 0x0647E}, {0x2F8C5, 0x2F8C5, 0x0649D}, {0x2F8C6, 0x2F8C6, 0x06477},
    {0x2F8C7, 0x2F8C7, 0x03A6C}, {0x2F8C8, 0x2F8C8, 0x0654F}, {0x2F8C9, 0x2F8C9, 0x0656C}, {0x2F8CA, 0x2F8CA, 0x2300A},
    {0x2F8CB, 0x2F8CB, 0x065E3}, {0x2F8CC, 0x2F8CC, 0x066F8}, {0x2F8CD, 0x2F8CD, 0x06649}, {0x2F8CE, 0x2F8CE, 0x03B19},
    {0x2F8CF, 0x2F8CF, 0x06691}, {0x2F8D0, 0x2F8D0, 0x03B08}, {0x2F8D1, 0x2F8D1, 0x03AE4}, {0x2F8D2, 0x2F8D2, 0x05192},
    {0x2F8D3, 0x2F8D3, 0x05195}, {0x2F8D4, 0x2F8D4, 0x06700}, {0x2F8D5, 0x2F8D5, 0x0669C}, {0x2F8D6, 0x2F8D6, 0x080AD},
    {0x2F8D7, 0x2F8D7, 0x043D9}, {0x2F8D8, 0x2F8D8, 0x06717}, {0x2F8D9, 0x2F8D9, 0x0671B}, {0x2F8DA, 0x2F8DA, 0x06721},
    {0x2F8DB, 0x2F8DB, 0x0675E}, {0x2F8DC, 0x2F8DC, 0x06753}, {0x2F8DD, 0x2F8DD, 0x233C3}, {0x2F8DE, 0x2F8DE, 0x03B49},
    {0x2F8DF, 0x2F8DF, 0x067FA}, {0x2F8E0, 0x2F8E0, 0x06785}, {0x2F8E1, 0x2F8E1, 0x06852}, {0x2F8E2, 0x2F8E2, 0x06885},
    {0x2F8E3, 0x2F8E3, 0x2346D}, {0x2F8E4, 0x2F8E4, 0x0688E}, {0x2F8E5, 0x2F8E5, 0x0681F}, {0x2F8E6, 0x2F8E6, 0x06914},
    {0x2F8E7, 0x2F8E7, 0x03B9D}, {0x2F8E8, 0x2F8E8, 0x06942}, {0x2F8E9, 0x2F8E9, 0x069A3}, {0x2F8EA, 0x2F8EA, 0x069EA},
    {0x2F8EB, 0x2F8EB, 0x06AA8}, {0x2F8EC, 0x2F8EC, 0x236A3}, {0x2F8ED, 0x2F8ED, 0x06ADB}, {0x2F8EE, 0x2F8EE, 0x03C18},
    {0x2F8EF, 0x2F8EF, 0x06B21}, {0x2F8F0, 0x2F8F0, 0x238A7}, {0x2F8F1, 0x2F8F1, 0x06B54}, {0x2F8F2, 0x2F8F2, 0x03C4E},
    {0x2F8F3, 0x2F8F3, 0x06B72}, {0x2F8F4, 0x2F8F4, 0x06B9F}, {0x2F8F5, 0x2F8F5, 0x06BBA}, {0x2F8F6, 0x2F8F6, 0x06BBB},
    {0x2F8F7, 0x2F8F7, 0x23A8D}, {0x2F8F8, 0x2F8F8, 0x21D0B}, {0x2F8F9, 0x2F8F9, 0x23AFA}, {0x2F8FA, 0x2F8FA, 0x06C4E},
    {0x2F8FB, 0x2F8FB, 0x23CBC}, {0x2F8FC, 0x2F8FC, 0x06CBF}, {0x2F8FD, 0x2F8FD, 0x06CCD}, {0x2F8FE, 0x2F8FE, 0x06C67},
    {0x2F8FF, 0x2F8FF, 0x06D16}, {0x2F900, 0x2F900, 0x06D3E}, {0x2F901, 0x2F901, 0x06D77}, {0x2F902, 0x2F902, 0x06D41},
    {0x2F903, 0x2F903, 0x06D69}, {0x2F904, 0x2F904, 0x06D78}, {0x2F905, 0x2F905, 0x06D85}, {0x2F906, 0x2F906, 0x23D1E},
    {0x2F907, 0x2F907, 0x06D34}, {0x2F908, 0x2F908, 0x06E2F}, {0x2F909, 0x2F909, 0x06E6E}, {0x2F90A, 0x2F90A, 0x03D33},
    {0x2F90B, 0x2F90B, 0x06ECB}, {0x2F90C, 0x2F90C, 0x06EC7}, {0x2F90D, 0x2F90D, 0x23ED1}, {0x2F90E, 0x2F90E, 0x06DF9},
    {0x2F90F, 0x2F90F, 0x06F6E}, {0x2F910, 0x2F910, 0x23F5E}, {0x2F911, 0x2F911, 0x23F8E}, {0x2F912, 0x2F912, 0x06FC6},
    {0x2F913, 0x2F913, 0x07039}, {0x2F914, 0x2F914, 0x0701E}, {0x2F915, 0x2F915, 0x0701B}, {0x2F916, 0x2F916, 0x03D96},
    {0x2F917, 0x2F917, 0x0704A}, {0x2F918, 0x2F918, 0x0707D}, {0x2F919, 0x2F919, 0x07077}, {0x2F91A, 0x2F91A, 0x070AD},
    {0x2F91B, 0x2F91B, 0x20525}, {0x2F91C, 0x2F91C, 0x07145}, {0x2F91D, 0x2F91D, 0x24263}, {0x2F91E, 0x2F91E, 0x0719C},
    {0x2F91F, 0x2F91F, 0x243AB}, {0x2F920, 0x2F920, 0x07228}, {0x2F921, 0x2F921, 0x07235}, {0x2F922, 0x2F922, 0x07250},
    {0x2F923, 0x2F923, 0x24608}, {0x2F924, 0x2F924, 0x07280}, {0x2F925, 0x2F925, 0x07295}, {0x2F926, 0x2F926, 0x24735},
    {0x2F927, 0x2F927, 0x24814}, {0x2F928, 0x2F928, 0x0737A}, {0x2F929, 0x2F929, 0x0738B}, {0x2F92A, 0x2F92A, 0x03EAC},
    {0x2F92B, 0x2F92B, 0x073A5}, {0x2F92C, 0x2F92D, 0x03EB8}, {0x2F92E, 0x2F92E, 0x07447}, {0x2F92F, 0x2F92F, 0x0745C},
    {0x2F930, 0x2F930, 0x07471}, {0x2F931, 0x2F931, 0x07485}, {0x2F932, 0x2F932, 0x074CA}, {0x2F933, 0x2F933, 0x03F1B},
    {0x2F934, 0x2F934, 0x07524}, {0x2F935, 0x2F935, 0x24C36}, {0x2F936, 0x2F936, 0x0753E}, {0x2F937, 0x2F937, 0x24C92},
    {0x2F938, 0x2F938, 0x07570}, {0x2F939, 0x2F939, 0x2219F}, {0x2F93A, 0x2F93A, 0x07610}, {0x2F93B, 0x2F93B, 0x24FA1},
    {0x2F93C, 0x2F93C, 0x24FB8}, {0x2F93D, 0x2F93D, 0x25044}, {0x2F93E, 0x2F93E, 0x03FFC}, {0x2F93F, 0x2F93F, 0x04008},
    {0x2F940, 0x2F940, 0x076F4}, {0x2F941, 0x2F941, 0x250F3}, {0x2F942, 0x2F942, 0x250F2}, {0x2F943, 0x2F943, 0x25119},
    {0x2F944, 0x2F944, 0x25133}, {0x2F945, 0x2F945, 0x0771E}, {0x2F946, 0x2F947, 0x0771F}, {0x2F948, 0x2F948, 0x0774A},
    {0x2F949, 0x2F949, 0x04039}, {0x2F94A, 0x2F94A, 0x0778B}, {0x2F94B, 0x2F94B, 0x04046}, {0x2F94C, 0x2F94C, 0x04096},
    {0x2F94D, 0x2F94D, 0x2541D}, {0x2F94E, 0x2F94E, 0x0784E}, {0x2F94F, 0x2F94F, 0x0788C}, {0x2F950, 0x2F950, 0x078CC},
    {0x2F951, 0x2F951, 0x040E3}, {0x2F952, 0x2F952, 0x25626}, {0x2F953, 0x2F953, 0x07956}, {0x2F954, 0x2F954, 0x2569A},
    {0x2F955, 0x2F955, 0x256C5}, {0x2F956, 0x2F956, 0x0798F}, {0x2F957, 0x2F957, 0x079EB}, {0x2F958, 0x2F958, 0x0412F},
    {0x2F959, 0x2F959, 0x07A40}, {0x2F95A, 0x2F95A, 0x07A4A}, {0x2F95B, 0x2F95B, 0x07A4F}, {0x2F95C, 0x2F95C, 0x2597C},
    {0x2F95D, 0x2F95E, 0x25AA7}, {0x2F95F, 0x2F95F, 0x07AEE}, {0x2F960, 0x2F960, 0x04202}, {0x2F961, 0x2F961, 0x25BAB},
    {0x2F962, 0x2F962, 0x07BC6}, {0x2F963, 0x2F963, 0x07BC9}, {0x2F964, 0x2F964, 0x04227}, {0x2F965, 0x2F965, 0x25C80},
    {0x2F966, 0x2F966, 0x07CD2}, {0x2F967, 0x2F967, 0x042A0}, {0x2F968, 0x2F968, 0x07CE8}, {0x2F969, 0x2F969, 0x07CE3},
    {0x2F96A, 0x2F96A, 0x07D00}, {0x2F96B, 0x2F96B, 0x25F86}, {0x2F96C, 0x2F96C, 0x07D63}, {0x2F96D, 0x2F96D, 0x04301},
    {0x2F96E, 0x2F96E, 0x07DC7}, {0x2F96F, 0x2F96F, 0x07E02}, {0x2F970, 0x2F970, 0x07E45}, {0x2F971, 0x2F971, 0x04334},
    {0x2F972, 0x2F972, 0x26228}, {0x2F973, 0x2F973, 0x26247}, {0x2F974, 0x2F974, 0x04359}, {0x2F975, 0x2F975, 0x262D9},
    {0x2F976, 0x2F976, 0x07F7A}, {0x2F977, 0x2F977, 0x2633E}, {0x2F978, 0x2F978, 0x07F95}, {0x2F979, 0x2F979, 0x07FFA},
    {0x2F97A, 0x2F97A, 0x08005}, {0x2F97B, 0x2F97B, 0x264DA}, {0x2F97C, 0x2F97C, 0x26523}, {0x2F97D, 0x2F97D, 0x08060},
    {0x2F97E, 0x2F97E, 0x265A8}, {0x2F97F, 0x2F97F, 0x08070}, {0x2F980, 0x2F980, 0x2335F}, {0x2F981, 0x2F981, 0x043D5},
    {0x2F982, 0x2F982, 0x080B2}, {0x2F983, 0x2F983, 0x08103}, {0x2F984, 0x2F984, 0x0440B}, {0x2F985, 0x2F985, 0x0813E},
    {0x2F986, 0x2F986, 0x05AB5}, {0x2F987, 0x2F987, 0x267A7}, {0x2F988, 0x2F988, 0x267B5}, {0x2F989, 0x2F989, 0x23393},
    {0x2F98A, 0x2F98A, 0x2339C}, {0x2F98B, 0x2F98B, 0x08201}, {0x2F98C, 0x2F98C, 0x08204}, {0x2F98D, 0x2F98D, 0x08F9E},
    {0x2F98E, 0x2F98E, 0x0446B}, {0x2F98F, 0x2F98F, 0x08291}, {0x2F990, 0x2F990, 0x0828B}, {0x2F991, 0x2F991, 0x0829D},
    {0x2F992, 0x2F992, 0x052B3}, {0x2F993, 0x2F993, 0x082B1}, {0x2F994, 0x2F994, 0x082B3}, {0x2F995, 0x2F995, 0x082BD},
    {0x2F996, 0x2F996, 0x082E6}, {0x2F997, 0x2F997, 0x26B3C}, {0x2F998, 0x2F998, 0x082E5}, {0x2F999, 0x2F999, 0x0831D},
    {0x2F99A, 0x2F99A, 0x08363}, {0x2F99B, 0x2F99B, 0x083AD}, {0x2F99C, 0x2F99C, 0x08323}, {0x2F99D, 0x2F99D, 0x083BD},
    {0x2F99E, 0x2F99E, 0x083E7}, {0x2F99F, 0x2F99F, 0x08457}, {0x2F9A0, 0x2F9A0, 0x08353}, {0x2F9A1, 0x2F9A1, 0x083CA},
    {0x2F9A2, 0x2F9A2, 0x083CC}, {0x2F9A3, 0x2F9A3, 0x083DC}, {0x2F9A4, 0x2F9A4, 0x26C36}, {0x2F9A5, 0x2F9A5, 0x26D6B},
    {0x2F9A6, 0x2F9A6, 0x26CD5}, {0x2F9A7, 0x2F9A7, 0x0452B}, {0x2F9A8, 0x2F9A8, 0x084F1}, {0x2F9A9, 0x2F9A9, 0x084F3},
    {0x2F9AA, 0x2F9AA, 0x08516}, {0x2F9AB, 0x2F9AB, 0x273CA}, {0x2F9AC, 0x2F9AC, 0x08564}, {0x2F9AD, 0x2F9AD, 0x26F2C},
    {0x2F9AE, 0x2F9AE, 0x0455D}, {0x2F9AF, 0x2F9AF, 0x04561}, {0x2F9B0, 0x2F9B0, 0x26FB1}, {0x2F9B1, 0x2F9B1, 0x270D2},
    {0x2F9B2, 0x2F9B2, 0x0456B}, {0x2F9B3, 0x2F9B3, 0x08650}, {0x2F9B4, 0x2F9B4, 0x0865C}, {0x2F9B5, 0x2F9B5, 0x08667},
    {0x2F9B6, 0x2F9B6, 0x08669}, {0x2F9B7, 0x2F9B7, 0x086A9}, {0x2F9B8, 0x2F9B8, 0x08688}, {0x2F9B9, 0x2F9B9, 0x0870E},
    {0x2F9BA, 0x2F9BA, 0x086E2}, {0x2F9BB, 0x2F9BB, 0x08779}, {0x2F9BC, 0x2F9BC, 0x08728}, {0x2F9BD, 0x2F9BD, 0x0876B},
    {0x2F9BE, 0x2F9BE, 0x08786}, {0x2F9BF, 0x2F9BF, 0x045D7}, {0x2F9C0, 0x2F9C0, 0x087E1}, {0x2F9C1, 0x2F9C1, 0x08801},
    {0x2F9C2, 0x2F9C2, 0x045F9}, {0x2F9C3, 0x2F9C3, 0x08860}, {0x2F9C4, 0x2F9C4, 0x08863}, {0x2F9C5, 0x2F9C5, 0x27667},
    {0x2F9C6, 0x2F9C6, 0x088D7}, {0x2F9C7, 0x2F9C7, 0x088DE}, {0x2F9C8, 0x2F9C8, 0x04635}, {0x2F9C9, 0x2F9C9, 0x088FA},
    {0x2F9CA, 0x2F9CA, 0x034BB}, {0x2F9CB, 0x2F9CB, 0x278AE}, {0x2F9CC, 0x2F9CC, 0x27966}, {0x2F9CD, 0x2F9CD, 0x046BE},
    {0x2F9CE, 0x2F9CE, 0x046C7}, {0x2F9CF, 0x2F9CF, 0x08AA0}, {0x2F9D0, 0x2F9D0, 0x08AED}, {0x2F9D1, 0x2F9D1, 0x08B8A},
    {0x2F9D2, 0x2F9D2, 0x08C55}, {0x2F9D3, 0x2F9D3, 0x27CA8}, {0x2F9D4, 0x2F9D4, 0x08CAB}, {0x2F9D5, 0x2F9D5, 0x08CC1},
    {0x2F9D6, 0x2F9D6, 0x08D1B}, {0x2F9D7, 0x2F9D7, 0x08D77}, {0x2F9D8, 0x2F9D8, 0x27F2F}, {0x2F9D9, 0x2F9D9, 0x20804},
    {0x2F9DA, 0x2F9DA, 0x08DCB}, {0x2F9DB, 0x2F9DB, 0x08DBC}, {0x2F9DC, 0x2F9DC, 0x08DF0}, {0x2F9DD, 0x2F9DD, 0x208DE},
    {0x2F9DE, 0x2F9DE, 0x08ED4}, {0x2F9DF, 0x2F9DF, 0x08F38}, {0x2F9E0, 0x2F9E0, 0x285D2}, {0x2F9E1, 0x2F9E1, 0x285ED},
    {0x2F9E2, 0x2F9E2, 0x09094}, {0x2F9E3, 0x2F9E3, 0x090F1}, {0x2F9E4, 0x2F9E4, 0x09111}, {0x2F9E5, 0x2F9E5, 0x2872E},
    {0x2F9E6, 0x2F9E6, 0x0911B}, {0x2F9E7, 0x2F9E7, 0x09238}, {0x2F9E8, 0x2F9E8, 0x092D7}, {0x2F9E9, 0x2F9E9, 0x092D8},
    {0x2F9EA, 0x2F9EA, 0x0927C}, {0x2F9EB, 0x2F9EB, 0x093F9}, {0x2F9EC, 0x2F9EC, 0x09415}, {0x2F9ED, 0x2F9ED, 0x28BFA},
    {0x2F9EE, 0x2F9EE, 0x0958B}, {0x2F9EF, 0x2F9EF, 0x04995}, {0x2F9F0, 0x2F9F0, 0x095B7}, {0x2F9F1, 0x2F9F1, 0x28D77},
    {0x2F9F2, 0x2F9F2, 0x049E6}, {0x2F9F3, 0x2F9F3, 0x096C3}, {0x2F9F4, 0x2F9F4, 0x05DB2}, {0x2F9F5, 0x2F9F5, 0x09723},
    {0x2F9F6, 0x2F9F6, 0x29145}, {0x2F9F7, 0x2F9F7, 0x2921A}, {0x2F9F8, 0x2F9F8, 0x04A6E}, {0x2F9F9, 0x2F9F9, 0x04A76},
    {0x2F9FA, 0x2F9FA, 0x097E0}, {0x2F9FB, 0x2F9FB, 0x2940A}, {0x2F9FC, 0x2F9FC, 0x04AB2}, {0x2F9FD, 0x2F9FD, 0x29496},
    {0x2F9FE, 0x2F9FF, 0x0980B}, {0x2FA00, 0x2FA00, 0x09829}, {0x2FA01, 0x2FA01, 0x295B6}, {0x2FA02, 0x2FA02, 0x098E2},
    {0x2FA03, 0x2FA03, 0x04B33}, {0x2FA04, 0x2FA04, 0x09929}, {0x2FA05, 0x2FA05, 0x099A7}, {0x2FA06, 0x2FA06, 0x099C2},
    {0x2FA07, 0x2FA07, 0x099FE}, {0x2FA08, 0x2FA08, 0x04BCE}, {0x2FA09, 0x2FA09, 0x29B30}, {0x2FA0A, 0x2FA0A, 0x09B12},
    {0x2FA0B, 0x2FA0B, 0x09C40}, {0x2FA0C, 0x2FA0C, 0x09CFD}, {0x2FA0D, 0x2FA0D, 0x04CCE}, {0x2FA0E, 0x2FA0E, 0x04CED},
    {0x2FA0F, 0x2FA0F, 0x09D67}, {0x2FA10, 0x2FA10, 0x2A0CE}, {0x2FA11, 0x2FA11, 0x04CF8}, {0x2FA12, 0x2FA12, 0x2A105},
    {0x2FA13, 0x2FA13, 0x2A20E}, {0x2FA14, 0x2FA14, 0x2A291}, {0x2FA15, 0x2FA15, 0x09EBB}, {0x2FA16, 0x2FA16, 0x04D56},
    {0x2FA17, 0x2FA17, 0x09EF9}, {0x2FA18, 0x2FA18, 0x09EFE}, {0x2FA19, 0x2FA19, 0x09F05}, {0x2FA1A, 0x2FA1A, 0x09F0F},
    {0x2FA1B, 0x2FA1B, 0x09F16}, {0x2FA1C, 0x2FA1C, 0x09F3B}, {0x2FA1D, 0x2FA1D, 0x2A600},
};
#endif
#endif
