/* infer_cuda.cu -- the kernel table of infer.h on NVIDIA GPUs.
 *
 * This file includes infer.h *without* INFER_IMPLEMENTATION: it sees the public part only
 * (the block structs, infer_tensor, infer_kv_view, infer_rope and the infer_kernels table)
 * and fills the same table the CPU fills, so the one forward pass in infer.h runs here
 * unchanged. It calls a few public functions of the header (infer_type_row_size, ...), which
 * the program's one INFER_IMPLEMENTATION file defines.
 *
 * BUILD   make cuda   ->  ./infer-cuda, ./tests-cuda  (nvcc for this file, cc for the rest,
 *                         main.c / tests.c compiled with -DINFER_CUDA)
 *
 * WHAT RUNS WHERE
 *   The weights are uploaded once per model (infer_model_upload): the same infer_tensor
 *   structs, with `data` pointing at device memory. The activations, the paged KV cache and
 *   the DeltaNet state live on the device; per chunk only the token ids, the positions and
 *   (when it grows) the block table go up, and only the logits come back.
 *
 * PRECISION
 *   precise: f32 arithmetic everywhere on weights dequantized in registers, F32 KV cache.
 *   fast (the default): the same, except for quantized activations, 16-bit tensor cores
 *   (in prompt attention too: queries, keys, values and softmax weights as F16) and the
 *   KV cache (F16 unless asked otherwise). A matmul of quantized weights runs as
 *   the CPU's fast path runs it: the activations quantized to int8 blocks once per matmul
 *   (Q8_0 or Q8_K, the CPU's bytes exactly), int8 x int8 products -- __dp4a in the decode
 *   matvec (k_quant_x, k_mvq; up to 16 rows), int8 tensor-core MMAs in the prompt tiles
 *   (k_quant_act, tile_matmul_q8) -- each block's integer sum scaled in f32: the two fast
 *   paths differ only in the order of f32 sums, and share the CPU fast path's error bound
 *   against exact maths. In prompt tiles, F16 and BF16 weights run on 16-bit tensor cores,
 *   the activations rounded to the weight's format (tile_matmul_half: exact products, f32
 *   sums, through cuBLAS where the build has it, else the project's own tiles; an activation
 *   beyond F16's 65504 becomes infinite there), F32 weights through cuBLAS's f32 GEMM, else
 *   as split TF32 products ("3xTF32", about f32 accuracy, tile_matmul_tc); in the decode matvec the
 *   float types read 8 weights a 16-byte load against f32 activations.
 *
 * KERNELS (one CUDA thread block per row, warp per output, ... as each comment says)
 *   memory      cudaMalloc / cudaMemcpyAsync on the context's stream
 *   steps       a forward step's launches recorded between step_begin and step_end and
 *               replayed as one CUDA graph when the same step comes again (decode)
 *   matmul      rows <= 8, precise: k_matvec, one warp per output column, each lane
 *               decoding 32 weights at a time ("chunks") in registers and dotting them
 *               with up to 8 activation rows staged in shared memory; fast: k_quant_x
 *               quantizes the rows to int8 once (the CPU's Q8_0 or Q8_K codes), then
 *               k_mvq, a block of up to 128 threads per 2 output columns, each thread
 *               taking 16-weight slices of the rows through __dp4a (the float types: 8
 *               weights in one 16-byte load, f32 FMAs), two slices loaded at once for
 *               one row (mvq_block's U); in both, matmul_n does a layer's
 *               q, k, v (or gate and up) in one launch, matmul_glu gate and up with the
 *               GLU, matmul_add the residual add in the stores; in the fast mode the
 *               fused entries rmsnorm_matmul_n and rmsnorm_ffn let the norm write the
 *               int8 activations (k_rmsnorm_q, no k_quant_x) and k_mvq's GLU write the
 *               down projection's (the last block of each 32- or 256-column group
 *               quantizes it: mvq_quant_out), and attention_matmul_add lets the decode
 *               attention write the output projection's (attention below); for one row
 *               of float weights the norm runs inside k_mvq itself (NM: rms_scale_v, the
 *               norm's bits). The fast mode's int8 matvec can take up to 64 rows
 *               (INFER_CUDA_MVQ_ROWS; 8 by default): blocks of 8 rows, those of one
 *               column pair side by side (the weights from L2).
 *               rows > 8: 64x64 output
 *               tiles: k_matmul_tiled, weights dequantized into shared memory 32 columns
 *               at a time, then f32 FMAs (precise), or in the fast mode TF32 MMAs (F32
 *               weights; cuBLAS's f32 GEMM where the build has it); F16/BF16 weights
 *               in the fast mode: k_round_half rounds x to the weight's format, then
 *               one cublasGemmEx (f32 accumulation; builds
 *               without cuBLAS: 16-bit MMA tiles, two shared-memory stages where the rows
 *               are 16-byte aligned, 64 K values a step, the weights' bytes by
 *               cp.async); k_matmul_q8 (fast, quantized
 *               weights): x quantized by k_quant_act, tiles of 16, 32 or 64 rows (from
 *               the row count) x 64 columns, 8 warps, K 256 values a step through two
 *               shared-memory stages (the next step's activations by cp.async, its
 *               weights unpacked to int8 codes and scales while this step's MMAs run),
 *               int8 MMAs (mma.sync m16n8k32, or m16n8k16 for the types scaled per 16),
 *               each block's sums scaled into f32; a grid too small for the SMs splits K
 *               over blocks, the last block of a tile adding the partial tiles in a
 *               fixed order (the same bits every run). From 64 rows (a prompt),
 *               quantized weights go to cuBLAS instead: k_dequant_bf16 writes the
 *               weight's columns as BF16 (32 MiB at a time), k_round_half rounds x, one
 *               cublasGemmEx per piece (infer_cuda_gemm_q)
 *   matmul_id   decode: a warp per (token, expert slot, column), in the fast mode
 *               k_mvq_id (k_mvq's blocks per (token, slot)); a prompt: the rows grouped
 *               by expert on the device, then the same tiles per expert
 *   attention   decode (and any prompt in the precise mode): k_attention, online softmax
 *               in f32, one block per (query row, the query heads of one KV head, split),
 *               each key and value read once for those heads (k_attention_h16 in the
 *               fast mode on an F16 cache: a lane reads 8 halves in one 16-byte load); long contexts with few
 *               query rows are split over positions ("flash-decoding") and the partial
 *               (max, sum, accumulator) triples merged by the last split block to finish
 *               (an atomic counter per block group, left at 0). attention_matmul_add in
 *               the fast mode (up to 16 rows, a Wo read through Q8_0 or Q8_K activations):
 *               the block that holds a head group's output (the merging one, when split)
 *               also quantizes it for Wo's k_mvq (attn_quant_out: the 32- or 256-column
 *               blocks inside the group's columns by itself, a block shared with the
 *               neighbouring head groups by the last of them, a ticket from a counter per
 *               (row, block), left at 0), then k_mvq adds Wo att into x. Fast-mode prompts of 16
 *               rows and more with head size 64, 128 or 256: k_flash_attention, flash-
 *               attention tiles -- 64 (row, head) pairs of one KV head a block, 4 warps,
 *               keys 64 (32) a step, S = Q K^T and O += P V as F16 MMAs (mma.sync
 *               m16n8k16, f32 accumulators), the online softmax in registers, whole key
 *               tiles past the tile's last position skipped
 *   deltanet    the recurrence, one warp per value column of the state, the column held in
 *               registers across the tokens; deltanet_chunked the same recurrence, or
 *               with INFER_CUDA_DN=chunks from 32 rows in chunks of 64 (k_dn_prep: a
 *               block per chunk and head, all at once, the products and the unit-triangular
 *               solve that do not depend on the state carried in; k_dn_chunks: a block per
 *               head and 16 state columns walking the chunks; on an H100 still slower than
 *               the recurrence at 512 tokens, k_dn_chunks' 128 blocks too few). Decode rows:
 *               deltanet_decode, k_deltanet_decode -- one launch for all the rows of a step,
 *               a block per (row, value head, 16 columns), a warp per column: each block
 *               makes its q, k (conv, SiLU, L2 norm), v and gates from the row's conv state,
 *               steps its columns of the row's S (per-row state pointers from a table in
 *               device memory), and the last block of each key head's group (a ticket, left
 *               at 0) applies the output norm * silu(z), shifts the conv state and, given
 *               Wo in the fast mode, writes its heads' int8 activations for Wo's k_mvq
 *               (attn_quant_out, as attention does)
 *   deepseek4   hc_pre: a block per row, one thread the Sinkhorn-normalised mixes, all of
 *               them the collapse of the streams; hc_post: a thread per element.
 *               compress: a thread per channel walks the chunk's rows with its two running
 *               softmaxes in registers (the state between chunks is the CPU's layout).
 *               indexer_topk: a block per query row; half-warps score the entries with the
 *               CPU's exact sums (ties decide the choice), into a bounded shared-memory
 *               buffer that a radix select cuts to the top_k whenever it fills.
 *               attention_sparse: attention's blocks, steps and splits (the same code,
 *               another list of positions) over the window plus the compressed entries,
 *               the sink a logit with no value
 *   rope        a thread per rotated pair; rope_kv_store turns the keys on their way into
 *               the cache (a thread per cache element) and, in the same launch, the
 *               queries in place (a thread per pair)
 *   argmax      greedy picks: the first index of the largest value (-1 for a row with a NaN
 *               or an infinity), a row's 4096-value pieces over blocks, the last block to
 *               finish reducing them, so a decode step downloads ids, not logits
 *   the rest    elementwise and per-row reductions, written to match the CPU's formulas
 *               (RMSNorm and L2 norm sum squares in double, as the CPU does)
 *
 * ERRORS
 *   Ops return nothing, so every CUDA call and every launch is checked and the first failure
 *   is kept in the context (with cudaGetErrorString's text); sync and download report it as
 *   INFER_ERR_BACKEND and infer_eval turns it into a message. Weight types without kernels
 *   here (the grid i-quants IQ1_S..IQ3_S) and shapes beyond the kernels' limits are refused
 *   when the model is uploaded (supports_type, supports_config), never at run time.
 *
 * TESTING
 *   ./tests-cuda gpu_       every op and weight type against the CPU (infer_backend_diff),
 *                           whole models layer by layer, the golden greedy story, the
 *                           golden llama logits of every weight type (exact and fast),
 *                           decode steps as graphs within a launch budget (llama;
 *                           qwen35: gpu_deltanet_decode, one sequence and three); the int8 tiles
 *                           (gpu_int8_*): the activation quantizer byte for byte against
 *                           the CPU's, every type's prompt matmul and matmul_id against the
 *                           CPU's fast path (1e-5) and exact maths (the fast bound), the
 *                           tile shapes and split-K (gpu_int8_tiles: rows 9..200, K split
 *                           or not, the same bits twice; gpu_int8_moe: 16- to 64-row tiles); SKIP
 *                           lines without a device. ./infer-cuda --diff -m MODEL likewise.
 *   ./tests-cuda gpu_flash_attention, gpu_attention_splits
 *                           prompt attention (the flash tiles in the fast mode, 2e-3; the
 *                           f32 kernel in the precise one, 1e-5) against the CPU over
 *                           paged caches, GQA groups 1/4/8, head sizes 64/128/256 and one
 *                           that falls back; decode steps split over many blocks, captured
 *                           and replayed as graphs (the merge counters left at 0)
 *   ./tests-cuda gpu_matvec_fast, gpu_act_quant
 *                           the fast decode matvec of every type it covers against the
 *                           CPU's fast path and the exact reference, its activation
 *                           quantizer byte for byte against the CPU's
 *   ./tests-cuda gpu_fused_act, gpu_fused_attention
 *                           the int8 activations the norm, the GLU and the decode
 *                           attention write, byte for byte against k_quant_x's of the
 *                           floats they wrote (Q8_0 and Q8_K; attention: split and not,
 *                           GQA, head groups that share a quantization block)
 *   ./tests-cuda cuda_      the weight decoders below and the int8 tiles' unpackers, run on
 *                           the host, bit for bit against the CPU's dequantizers (no device
 *                           needed)
 *   make cuda-emu           the same GPU tests with this file's kernels run on the CPU by
 *                           tools/cuda_emu.h: their logic, checked without a GPU (the int8
 *                           MMA by its documented register layout)
 *
 * WHAT IS NOT HERE
 *   The precise mode decodes every weight to f32 and multiplies in f32. The fast matvec
 *   has no slices for Q1_0, Q2_0, TQ1_0 and I2_S (k_matvec serves them in both modes);
 *   the decode matvec's int8 activations come from the kernel that writes its input (the
 *   norms, the GLU, the attention: see matmul and attention above) only where the forward
 *   calls the fused entries (not, e.g., after a gated attention or a sub-norm); elsewhere,
 *   and for prompts, they are quantized by a launch of their own; the decode and the
 *   prompt paths each have their activation quantizer (k_quant_x, k_quant_act: the same
 *   bytes, other layouts). Prompts:
 *   the int8 tiles are at most 64 x 64 (no 128-column tiles for wide matrices), short
 *   grids split K in whole tiles (not stream-K's running fractions), matmul_id's tiles
 *   never split K, and the weights are unpacked by the threads (no cp.async of raw weight
 *   blocks); cuBLAS serves the 16-bit weights' dense matmuls only (matmul_id's experts run
 *   on the 16-bit tiles, the TF32 tiles' 64x64 wmma shape; rows that are not 16-byte
 *   aligned, K not a multiple of 8, take their one-stage form); the
 *   flash-attention tiles take F16 products only (no BF16 or FP8), double-buffer an F16
 *   cache only (an F32 one is converted between steps) and serve one block table a call
 *   (rows of several sequences take k_attention); decode attention reads 16-byte rows
 *   only from an F16 cache in the fast mode (k_attention_h16, head sizes 64, 128, 256),
 *   2-byte or 4-byte elements otherwise. The delta rule runs token by token (no chunked
 *   matrix form). A prompt's DeltaNet layer still runs op by op (conv and the rule once per
 *   sequence, q, k and v copied out of the conv's output, l2norm, rmsnorm, glu), and so does
 *   every row of a step that has a prompt among its decode rows; only steps of decode rows
 *   alone take deltanet_decode. Its blocks recompute their key head's q and k (conv and L2
 *   norm) rather than share them.
 *   The indexer scores with scalar dots, which is what keeps the CPU's exact ties.
 *   RMSNorm is a launch of its own, not part of the matvec that reads its output (it
 *   writes that matvec's int8 activations instead).
 *
 * SECTIONS (grep the anchor)
 *   >>cuda_context   the stream, the error, the step recorder (graphs), memory
 *   >>cuda_helpers   warp and block reductions, the number formats
 *   >>cuda_decode    the weight decoders, Dq<T>::chunk, one per type
 *   >>cuda_types     the list of types and the one switch over them
 *   >>cuda_matmul    matvec (decode), tiles (prompts), matmul_id (MoE), embed
 *   >>cuda_elem      norms and elementwise ops
 *   >>cuda_rope      RoPE
 *   >>cuda_attention the paged KV cache, rope_kv_store, attention and its split merge
 *   >>cuda_moe       MoE routing
 *   >>cuda_deltanet  conv1d, the gated delta rule, a layer's decode rows in one launch
 *   >>cuda_deepseek4 hyper-connections, the compressor, the indexer, sparse attention
 *   >>cuda_table     contexts, shape limits, the kernel table, the host decoder test
 */
#include "infer.h"

#ifdef INFER_CUDA_EMU          /* the kernels on the CPU, for tests without a GPU: tools/cuda_emu.h */
#include "tools/cuda_emu.h"
#define INFER_CUDA_RAW_LAUNCH(g, b, shm, stream, k, ...) (emu_launch((g), (b), (shm), (k))(__VA_ARGS__), cudaGetLastError())
#define INFER_CUDA_GEMM 1      /* the emulator has the cuBLAS GEMM this file uses (on the CPU) */
#else
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#define INFER_CUDA_RAW_LAUNCH(g, b, shm, stream, k, ...) infer_cuda_raw_launch((g), (b), (shm), (stream), k, __VA_ARGS__)
#define INFER_CUDA_DYN_SHARED(type, name) extern __shared__ type name[]
#ifdef INFER_CUDA_CUBLAS       /* the Makefile defines it where the toolkit has cuBLAS */
#include <cublas_v2.h>
#define INFER_CUDA_GEMM 1
#endif
#endif
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <functional>
#include <new>
#include <type_traits>
#include <vector>
using namespace nvcuda;

/* ------------------------------------------------------------------------------------------
 * >>cuda_context -- a stream per session, the first error met on it, and the step recorder.
 * Ops return nothing (the kernel table's contract), so errors are kept here until the next
 * call that can answer one.
 *
 * STEPS AS GRAPHS. A decode step is a few hundred small launches; issued one by one, the
 * host's cost per launch (a few microseconds) and the gaps between kernels are most of a
 * token's time on a small model. So the forward pass brackets a step with step_begin and
 * step_end, and between the two nothing is launched: every kernel launch, memset and
 * device copy is *recorded* -- as a closure that will issue it, and as bytes (the kernel's
 * address, grid, block, shared memory and every argument's bytes) appended to the step's
 * key. step_end then compares the key with the steps it has seen:
 *   - the key of a cached graph: that graph is replayed, one cudaGraphLaunch for the step;
 *   - the key of the step before (seen once): the closures are issued under stream capture,
 *     the graph is instantiated and cached (up to INFER_CUDA_GRAPHS, least recently used
 *     out), and launched;
 *   - anything else: the closures are issued as plain launches.
 * Two steps with the same key are the same launches with the same arguments, so a replay
 * does exactly what issuing them would. Decode steps repeat their keys because everything
 * that changes from token to token -- the token id, its position, the block table, the
 * context length -- is in device memory that the kernels read, never in an argument. A
 * prompt chunk's key (its row count) rarely repeats, and it runs as plain launches.
 * Whatever needs the host in the middle of a step (an upload, a download, a sync, a larger
 * scratch buffer) first issues what was recorded so far and ends the recording: that step
 * runs unrecorded, correct as before, only without a graph.
 * ---------------------------------------------------------------------------------------- */
#define INFER_CUDA_GRAPHS 8

typedef struct infer_cuda_graph {
    std::vector<uint8_t> key;
#ifdef INFER_CUDA_EMU
    std::vector<std::function<void()>> ops;   /* the emulator's "graph": the closures kept */
#else
    cudaGraphExec_t exec;
#endif
    uint64_t used;                            /* the step count when last replayed */
} infer_cuda_graph;

typedef struct infer_cuda_ctx {
    cudaStream_t stream;
    int precise;
    char error[400];          /* the first failure, "" while there is none */
    void *scratch;            /* attention's split partials; matmul_id's expert grouping */
    size_t scratch_bytes;
    void *att_count;          /* attention's split counters, 0 between launches (attn_merge_last) */
    size_t att_count_bytes;
    void *xq;                 /* quantized activations: the fast matvec's (k_quant_x), the int8 tiles' (k_quant_act) */
    size_t xq_bytes;
    void *qt;                 /* the int8 tiles' split-K counts and partial tiles (infer_cuda_qt_space) */
    size_t qt_bytes;
    int qt_rows, qt_splits;   /* the last int8 tile launch's tile rows and splits of K (for the tests) */
    void *xq2;                /* the GLU's output quantized for the down projection (rmsnorm_ffn) */
    size_t xq2_bytes;
    void *qcount;             /* mvq_quant_out's counters, 0 between launches */
    size_t qcount_bytes;
#ifdef INFER_CUDA_GEMM
    cublasHandle_t blas;      /* cuBLAS, made on the first 16-bit prompt matmul (NULL before) */
    void *blas_ws;            /* its workspace, ours: a GEMM in a captured graph allocates nothing */
    int blas_failed;          /* the handle could not be made: the tiles from then on */
#endif
    void *xh;                 /* activations rounded to F16 / BF16 for the library GEMM */
    size_t xh_bytes;
    void *wh;                 /* a quantized weight's columns dequantized to BF16 for it (infer_cuda_gemm_q) */
    size_t wh_bytes;
    struct wcache { const uint8_t *W; int T, K, N; void *bf; };
    std::vector<wcache> wcache;   /* quantized weights kept as BF16 (INFER_CUDA_BF16_CACHE, infer_cuda_bf16_cached) */
    size_t wcache_bytes;
    void *dnc;                /* the DeltaNet chunks' U, Wk, P and G (infer_cuda_deltanet_chunked) */
    size_t dnc_bytes;
    int dn_chunks;            /* the last deltanet_chunked: 1 on the chunked kernels, 0 the recurrence (for the tests) */
    int norm_mv;              /* the last fused norm entry: 1 when the norm ran inside a float matvec (for the tests) */
    int qkv_store;            /* the last rmsnorm_qkv_store: 1 when rope and the cache stores ran in the matvec (for the tests) */
    int half_gemm;            /* the last 16-bit prompt matmul: 1 the library GEMM, 0 the tiles */
    /* the step recorder (see above) */
    int recording;            /* between step_begin and step_end, nothing issued yet */
    int in_step;              /* between step_begin and step_end */
    int no_graphs;            /* a capture failed once: plain launches from then on */
    std::vector<std::function<void()>> ops;
    std::vector<uint8_t> key, prev_key;       /* this step's key; the last unrecorded step's */
    std::vector<infer_cuda_graph> graphs;
    uint64_t steps;
    int step_ops, last_ops, last_graph;       /* launches this step; the last step's, as a graph? */
} infer_cuda_ctx;

static int infer_cuda_device = -1;       /* set by infer_cuda_init */
static int infer_cuda_sms = 1;           /* streaming multiprocessors, to size split-K */
static int infer_cuda_mma8;              /* int8 MMA (compute capability 8.0 and later): the fast mode's int8 tiles */
static int infer_cuda_pdl;               /* launches may overlap their predecessor's end (see INFER_CUDA_PDL_ENTRY) */
static int infer_cuda_pdl_ok;            /* the device has it (compute capability 9.0 and later) */

/* Programmatic dependent launch (compute capability 9.0 and later): a kernel launched with the
 * attribute below may start while the kernel before it in the stream is still running. Every
 * kernel of this file opens with INFER_CUDA_PDL_ENTRY: it lets the next launch begin (its
 * blocks are placed as soon as all of this kernel's blocks are), then waits until the previous
 * kernel has finished and its writes are visible. So each kernel still sees everything before
 * it, as with plain launches (each waits for its predecessor, which waited for its own, and no
 * block leaves before its wait), and what overlaps is the launch and the placing of blocks,
 * which a decode step of ~130 small kernels would otherwise pay in turn. The decode matvec
 * k_mvq and the norm k_rmsnorm_q go one step further: they load their first weights (no
 * kernel writes them) before the wait, so that memory latency overlaps the kernel before.
 * In a captured graph the launches keep the attribute as programmatic edges. Without the
 * attribute (older GPUs, kernels compiled for an older target, INFER_CUDA_PDL=0) the wait
 * returns at once. */
#ifndef INFER_CUDA_EMU
template <typename... P, typename... A>
static cudaError_t infer_cuda_raw_launch(dim3 g, dim3 b, size_t shm, cudaStream_t s, void (*k)(P...), A... a) {
    if (!infer_cuda_pdl) {
        k<<<g, b, shm, s>>>(a...);
        return cudaGetLastError();
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1] = {};
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = g; cfg.blockDim = b; cfg.dynamicSmemBytes = shm; cfg.stream = s;
    cfg.attrs = at; cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, k, a...);
}
#endif

static void infer_cuda_record(infer_cuda_ctx *c, cudaError_t e, const char *what) {
    if (e == cudaSuccess || c->error[0]) return;
    snprintf(c->error, sizeof c->error, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
/* what a call that can fail answers: the first error met, if any */
static infer_status infer_cuda_status(const infer_cuda_ctx *c) { return c->error[0] ? INFER_ERR_BACKEND : INFER_OK; }
/* after a launch: a bad configuration shows up here, a fault in the kernel at the next sync.
 * (A recorded launch is checked when it is issued.) */
#define INFER_CUDA_LAUNCHED(c, what) do { if (!(c)->recording) infer_cuda_record((c), cudaGetLastError(), (what)); } while (0)

static void infer_cuda_set_error(infer_error *err, infer_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void infer_cuda_set_error(infer_error *err, infer_status st, const char *fmt, ...) {
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    err->status = st;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* ---- the recorder ---- */
static void infer_cuda_key_add(infer_cuda_ctx *c, const void *p, size_t n) {
    if (!n) return;
    const size_t at = c->key.size();
    c->key.resize(at + n);
    memcpy(c->key.data() + at, p, n);
}
/* issue what was recorded, in order, as plain launches (or into a capture) */
static void infer_cuda_issue(std::vector<std::function<void()>> &ops) {
    for (size_t i = 0; i < ops.size(); i++) ops[i]();
}
/* something needs the host mid-step: issue the recording so far and stop recording */
static void infer_cuda_flush(infer_cuda_ctx *c) {
    if (!c->recording) return;
    c->recording = 0;
    infer_cuda_issue(c->ops);
    c->ops.clear();
    c->key.clear();
}
/* An operation of the step: issued now, or recorded. `tag` and `args` (the bytes that decide
 * what it does) go into the key. */
template <class F> static void infer_cuda_op(infer_cuda_ctx *c, const void *tag, const void *args, size_t n, F &&issue) {
    if (c->in_step) c->step_ops++;
    if (!c->recording) { issue(); return; }
    infer_cuda_key_add(c, &tag, sizeof tag);
    infer_cuda_key_add(c, args, n);
    c->ops.emplace_back(std::move(issue));
}

/* INFER_CUDA_LAUNCH(grid, block, shm, c, kernel)(args...): a kernel launch through the
 * recorder; the arguments are converted to the kernel's parameter types first, so the key
 * holds exactly the bytes the kernel receives */
template <typename... P> struct infer_cuda_launch_t {
    infer_cuda_ctx *c;
    dim3 g, b;
    size_t shm;
    void (*k)(P...);
    template <typename... A> void operator()(A... a) const { go(((P)a)...); }
    void go(P... a) const {
        infer_cuda_ctx *cc = c;
        const dim3 G = g, B = b;
        const size_t S = shm;
        void (*K)(P...) = k;
        if (cc->recording) {                  /* the key: shape, then every argument's bytes */
            const unsigned head[7] = { G.x, G.y, G.z, B.x, B.y, B.z, (unsigned)S };
            const void *ptrs[] = { (const void *)&a... };
            const size_t sizes[] = { sizeof(P)... };
            infer_cuda_key_add(cc, head, sizeof head);
            for (size_t i = 0; i < sizeof...(P); i++) infer_cuda_key_add(cc, ptrs[i], sizes[i]);
        }
        infer_cuda_op(cc, (const void *)K, NULL, 0, [=]() {
            infer_cuda_record(cc, INFER_CUDA_RAW_LAUNCH(G, B, S, cc->stream, K, a...), "kernel launch");
        });
    }
};
template <typename... P> static infer_cuda_launch_t<P...> infer_cuda_launch(infer_cuda_ctx *c, dim3 g, dim3 b, size_t shm, void (*k)(P...)) {
    infer_cuda_launch_t<P...> l;
    l.c = c; l.g = g; l.b = b; l.shm = shm; l.k = k;
    return l;
}
#define INFER_CUDA_LAUNCH(grid, block, shm, ctx, ...) infer_cuda_launch((ctx), dim3(grid), dim3(block), (shm), __VA_ARGS__)

static void infer_cuda_graphs_free(infer_cuda_ctx *c) {
#ifndef INFER_CUDA_EMU
    for (size_t i = 0; i < c->graphs.size(); i++) cudaGraphExecDestroy(c->graphs[i].exec);
#endif
    c->graphs.clear();
}

static void infer_cuda_step_begin(void *ctx) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    infer_cuda_flush(c);                      /* a step left open (an error path): issue it */
    c->in_step = 1;
    c->step_ops = 0;
    c->recording = 1;
    c->ops.clear();
    c->key.clear();
}

/* the end of a step: replay, capture, or issue (see the context's comment) */
static infer_status infer_cuda_step_end(void *ctx) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (!c->in_step) return infer_cuda_status(c);
    c->in_step = 0;
    c->last_ops = c->step_ops;
    c->last_graph = 0;
    if (!c->recording) return infer_cuda_status(c);   /* flushed mid-step */
    c->recording = 0;
    c->steps++;
    for (size_t i = 0; i < c->graphs.size(); i++) {
        infer_cuda_graph &g = c->graphs[i];
        if (g.key != c->key) continue;
        g.used = c->steps;
#ifdef INFER_CUDA_EMU
        infer_cuda_issue(g.ops);
#else
        infer_cuda_record(c, cudaGraphLaunch(g.exec, c->stream), "cudaGraphLaunch");
#endif
        c->last_graph = 1;
        c->ops.clear();
        return infer_cuda_status(c);
    }
    if (c->no_graphs || c->key != c->prev_key || c->ops.empty()) {   /* a new shape: plain launches */
        infer_cuda_issue(c->ops);
        c->prev_key.swap(c->key);
        c->ops.clear();
        return infer_cuda_status(c);
    }
    /* the same step twice in a row: capture it */
    infer_cuda_graph g;
    g.used = c->steps;
#ifdef INFER_CUDA_EMU
    g.ops = c->ops;
    infer_cuda_issue(c->ops);
#else
    cudaGraph_t graph = NULL;
    const int had_error = c->error[0] != 0;
    cudaError_t e = cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeRelaxed);
    if (e == cudaSuccess) {
        infer_cuda_issue(c->ops);
        e = cudaStreamEndCapture(c->stream, &graph);
    }
    if (e == cudaSuccess) e = cudaGraphInstantiate(&g.exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (e != cudaSuccess) {                   /* no graphs here: the launches as they are, for good */
        (void)cudaGetLastError();
        c->no_graphs = 1;
        if (!had_error) c->error[0] = 0;      /* a launch inside the failed capture may have noted it */
        infer_cuda_issue(c->ops);
        c->ops.clear();
        return infer_cuda_status(c);
    }
    infer_cuda_record(c, cudaGraphLaunch(g.exec, c->stream), "cudaGraphLaunch");
#endif
    g.key.swap(c->key);
    if (c->graphs.size() >= INFER_CUDA_GRAPHS) {           /* the least recently used goes */
        size_t lru = 0;
        for (size_t i = 1; i < c->graphs.size(); i++) if (c->graphs[i].used < c->graphs[lru].used) lru = i;
#ifndef INFER_CUDA_EMU
        cudaGraphExecDestroy(c->graphs[lru].exec);
#endif
        c->graphs.erase(c->graphs.begin() + (long)lru);
    }
    c->graphs.push_back(g);
    c->last_graph = 1;
    c->ops.clear();
    c->prev_key.clear();
    return infer_cuda_status(c);
}

static void infer_cuda_step_info(void *ctx, int *launches, int *graph) {
    const infer_cuda_ctx *c = (const infer_cuda_ctx *)ctx;
    if (launches) *launches = c->last_ops;
    if (graph) *graph = c->last_graph;
}

/* ---- memory: device buffers and copies, in order on the context's stream. A call that
 * makes the host wait (upload, download, sync, free) first issues what a recording holds. ---- */
static void *infer_cuda_alloc(void *ctx, size_t bytes) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) { infer_cuda_record(c, e, "cudaMalloc"); return NULL; }
    return p;
}
/* a buffer may still be read by kernels queued on the stream: wait for them first */
static void infer_cuda_free(void *ctx, void *p) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (!p) return;
    infer_cuda_flush(c);
    infer_cuda_record(c, cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
    infer_cuda_record(c, cudaFree(p), "cudaFree");
}
/* Waits for the copy: the caller reuses src at once (the positions of the next chunk go
 * into the same host array). Per token that is a wait on an idle stream -- the previous
 * token's logits were already waited for. */
static infer_status infer_cuda_upload(void *ctx, void *dst, const void *src, size_t bytes) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    infer_cuda_flush(c);
    if (bytes) infer_cuda_record(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream), "upload (cudaMemcpyAsync)");
    infer_cuda_record(c, cudaStreamSynchronize(c->stream), "upload (cudaStreamSynchronize)");
    return infer_cuda_status(c);
}
static infer_status infer_cuda_download(void *ctx, void *dst, const void *src, size_t bytes) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    infer_cuda_flush(c);
    if (bytes) infer_cuda_record(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream), "download (cudaMemcpyAsync)");
    infer_cuda_record(c, cudaStreamSynchronize(c->stream), "download (cudaStreamSynchronize)");
    return infer_cuda_status(c);
}
/* within device memory (a prefix block's rows copied for a sequence of its own), in stream order */
static infer_status infer_cuda_copy(void *ctx, void *dst, const void *src, size_t bytes) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (!bytes) return infer_cuda_status(c);
    const struct { void *d; const void *s; size_t n; } a = { dst, src, bytes };
    static const char tag = 'c';
    infer_cuda_op(c, &tag, &a, sizeof a, [=]() {
        infer_cuda_record(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream), "copy (cudaMemcpyAsync)");
    });
    return infer_cuda_status(c);
}
static infer_status infer_cuda_sync(void *ctx) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    infer_cuda_flush(c);
    infer_cuda_record(c, cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
    return infer_cuda_status(c);
}
static void infer_cuda_zero(void *ctx, void *p, size_t bytes) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (!bytes) return;
    const struct { void *p; size_t n; } a = { p, bytes };
    static const char tag = 'z';
    infer_cuda_op(c, &tag, &a, sizeof a, [=]() { infer_cuda_record(c, cudaMemsetAsync(p, 0, bytes, c->stream), "zero (cudaMemsetAsync)"); });
}
/* dst[r, 0..dim) = src[r, 0..dim): a strided 2-D copy, which the copy engine does as is */
static void infer_cuda_copy_rows(void *ctx, float *dst, int dst_stride, const float *src, int src_stride, int rows, int dim) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0 || dim <= 0) return;
    const struct { float *d; const float *s; int ds, ss, rows, dim; } a = { dst, src, dst_stride, src_stride, rows, dim };
    static const char tag = 'r';
    infer_cuda_op(c, &tag, &a, sizeof a, [=]() {
        infer_cuda_record(c, cudaMemcpy2DAsync(dst, (size_t)dst_stride * sizeof(float), src, (size_t)src_stride * sizeof(float),
                                               (size_t)dim * sizeof(float), (size_t)rows, cudaMemcpyDeviceToDevice, c->stream),
                          "copy_rows (cudaMemcpy2DAsync)");
    });
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_helpers -- reductions and number formats. A warp sums with shuffles (no shared
 * memory, no barrier), a block through one slot per warp: both add in an order fixed by
 * the block's shape, so a result never depends on how the threads were scheduled.
 * ---------------------------------------------------------------------------------------- */
template <typename V> __device__ __forceinline__ V warp_sum(V v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
/* the sum over a whole block (blockDim.x a multiple of 32, at most 1024), returned to all */
template <typename V> __device__ V block_sum(V v) {
    __shared__ V part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();                      /* part[] may still be read from a previous call */
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = lane < nw ? part[lane] : (V)0;
    return warp_sum(v);
}
__device__ float block_max(float v) {
    __shared__ float part[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = lane < nw ? part[lane] : -INFINITY;
    return warp_max(v);
}

/* act(g) * u: SiLU g / (1 + e^-g), or ReLU^2 max(g, 0)^2; with limit L > 0 the inputs are
 * clamped first (DeepSeek-V4): g = min(g, L), u = clamp(u, -L, L). k_glu and the fused
 * matvec share it. */
__device__ __forceinline__ float glu_act(float g, float u, int act, float limit) {
    if (limit > 0) { g = fminf(g, limit); u = fminf(fmaxf(u, -limit), limit); }
    if (act == INFER_ACT_SILU) return g / (1.0f + expf(-g)) * u;
    const float r = g > 0 ? g : 0.0f;
    return r * r * u;
}

/* The weight decoders below also compile for the host (INFER_CUDA_HD), so that a test can
 * check them against the CPU's dequantizers on a machine without a GPU
 * (infer_cuda_dequant_host at the end of this file). */
#define INFER_CUDA_HD __host__ __device__ __forceinline__
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define INFER_CUDA_PDL_TRIGGER() asm volatile("griddepcontrol.launch_dependents;" ::: "memory")
#define INFER_CUDA_PDL_WAIT() asm volatile("griddepcontrol.wait;" ::: "memory")
#else
#define INFER_CUDA_PDL_TRIGGER() do { } while (0)
#define INFER_CUDA_PDL_WAIT() do { } while (0)
#endif
#define INFER_CUDA_PDL_ENTRY do { INFER_CUDA_PDL_TRIGGER(); INFER_CUDA_PDL_WAIT(); } while (0)
#ifdef __CUDA_ARCH__
#define INFER_CUDA_UNROLL _Pragma("unroll")
#define INFER_CUDA_UNROLL8 _Pragma("unroll 8")
#else
#define INFER_CUDA_UNROLL
#define INFER_CUDA_UNROLL8
#endif

INFER_CUDA_HD float bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, 4);
    return f;
#endif
}
INFER_CUDA_HD float f16(infer_half h) { return __half2float(__ushort_as_half(h)); }
INFER_CUDA_HD float bf16(uint16_t b) { return bits_float((uint32_t)b << 16); }
INFER_CUDA_HD uint32_t u32_le(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The FP4 (E2M1) values are stored times 2 (bit 3 = sign), the scales halved to match (as in
 * >>quant); the FP4 and IQ4 tables are with the decoders below. */
/* E8M0 byte -> 2^(e-128), half the MX scale (e = 0, 1: the subnormals 2^-128, 2^-127) */
INFER_CUDA_HD float e8m0_half(uint8_t e) { return bits_float(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23); }
/* UE4M3 byte -> half its value; 0x00 and 0x7F (NaN) read as 0, exponent 0 is subnormal */
INFER_CUDA_HD float ue4m3_half(uint8_t x) {
    if (x == 0 || x == 0x7F) return 0.0f;
    const int e = (x >> 3) & 15, m = x & 7;
    const float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return v * 0.5f;
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_decode -- weight decoding. Every matmul kernel walks a weight row in chunks of 32 consecutive
 * weights: Dq<T>::chunk(row, c, K, w) writes w[i] = W[32c + i] for i < 32 (zeros past K,
 * which only the float types can have: the block types' K is a multiple of their block).
 * Each is the scalar dequantizer of >>quant restricted to one chunk; the layouts are drawn
 * there. A chunk is one block (32-blocks), half a block (NVFP4, Q2_0), a quarter (Q1_0,
 * I2_S's 128-groups) or an eighth of a 256-super-block (k-quants, TQ*, IQ4_XS).
 *
 * Decoding is most of a decode step's instructions, so the common types read their codes
 * four at a time and turn them into floats without an integer-to-float conversion:
 *   - a block's bytes are read as 32-bit words (two 16-bit loads where the block is only
 *     2-byte aligned, as Q4_0's 18 bytes are; 16-byte loads for F32/F16/BF16 rows);
 *   - the 4-bit (or 5-, 6-, 8-bit) codes of a word are masked in place, one code a byte;
 *   - byte k of such a word becomes a float by one byte permute: 0x4B0000vv is the float
 *     2^23 + vv, so subtracting 2^23 + offset leaves vv - offset, exactly (both are
 *     integers below 2^24);
 *   - a 16-entry table (IQ4's levels, FP4's values) is looked up four codes at a time by two
 *     byte permutes over the table's 16 bytes (lut16).
 * The results are the same floats as the one-byte-at-a-time formulas, bit for bit: the
 * host build runs this same code (prmt below is __byte_perm's definition), and the test
 * cuda_decoders holds it to the CPU's dequantizers.
 * ---------------------------------------------------------------------------------------- */
template <int T> struct Dq;

/* __byte_perm(x, y, s) for selectors 0..7: result byte i = byte (s >> 4i & 7) of y:x */
INFER_CUDA_HD uint32_t prmt(uint32_t x, uint32_t y, uint32_t s) {
#ifdef __CUDA_ARCH__
    return __byte_perm(x, y, s);
#else
    const uint64_t v = (uint64_t)y << 32 | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) r |= (uint32_t)(v >> (8 * ((s >> (4 * i)) & 7)) & 255) << (8 * i);
    return r;
#endif
}
/* byte k (0..3) of v, minus off, as a float (exact) */
INFER_CUDA_HD float byte_f(uint32_t v, int k, float off) { return bits_float(prmt(v, 0x4B000000u, 0x7540u | (uint32_t)k)) - (8388608.0f + off); }
/* 4 little-endian bytes at p, p 2-byte aligned (two 16-bit loads), or any p (ld1) */
INFER_CUDA_HD uint32_t ld2(const uint8_t *p) {
#ifdef __CUDA_ARCH__
    const uint16_t *h = (const uint16_t *)p;
    return (uint32_t)h[0] | (uint32_t)h[1] << 16;
#else
    return u32_le(p);
#endif
}
INFER_CUDA_HD uint32_t ld1(const uint8_t *p) { return u32_le(p); }
/* 16 bytes at a 16-byte aligned p, as 4 words */
INFER_CUDA_HD void ld16(const uint8_t *p, uint32_t *w) {
#ifdef __CUDA_ARCH__
    const uint4 v = *(const uint4 *)p;
    w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
#else
    for (int i = 0; i < 4; i++) w[i] = u32_le(p + 4 * i);
#endif
}
/* the 4 bytes of q (each 0..15) looked up in a 16-entry table of int8 values stored + 128
 * (t: its 16 bytes as 4 words): bytes 0..7 of the table by one permute, 8..15 by another,
 * the code's bit 3 picks */
INFER_CUDA_HD uint32_t lut16(uint32_t q, const uint32_t *t) {
    uint32_t s = q & 0x07070707u;
    s |= s >> 4;
    s = (s & 0xFFu) | (s >> 8 & 0xFF00u);             /* the 4 byte indices as 4 nibbles */
    const uint32_t lo = prmt(t[0], t[1], s), hi = prmt(t[2], t[3], s), m = (q >> 3 & 0x01010101u) * 0xFFu;
    return (hi & m) | (lo & ~m);
}
#define INFER_CUDA_LUTW(a, b, c, d) ((uint32_t)((a) + 128) | (uint32_t)((b) + 128) << 8 | (uint32_t)((c) + 128) << 16 | (uint32_t)((d) + 128) << 24)
#define INFER_CUDA_FP4_LUT { INFER_CUDA_LUTW(0, 1, 2, 3), INFER_CUDA_LUTW(4, 6, 8, 12), INFER_CUDA_LUTW(0, -1, -2, -3), INFER_CUDA_LUTW(-4, -6, -8, -12) }
#define INFER_CUDA_IQ4_LUT { INFER_CUDA_LUTW(-127, -104, -83, -65), INFER_CUDA_LUTW(-49, -35, -22, -10), INFER_CUDA_LUTW(1, 13, 25, 38), \
                             INFER_CUDA_LUTW(53, 69, 89, 113) }
__constant__ uint32_t k_fp4_lut_dev[4] = INFER_CUDA_FP4_LUT, k_iq4_lut_dev[4] = INFER_CUDA_IQ4_LUT;
#ifdef __CUDA_ARCH__
#define k_fp4_lut k_fp4_lut_dev
#define k_iq4_lut k_iq4_lut_dev
#else
static const uint32_t k_fp4_lut_host[4] = INFER_CUDA_FP4_LUT, k_iq4_lut_host[4] = INFER_CUDA_IQ4_LUT;
#define k_fp4_lut k_fp4_lut_host
#define k_iq4_lut k_iq4_lut_host
#endif
/* 16 bytes of 4-bit codes (4 words): w[j] = lo nibble of byte j, w[j + 16] = hi nibble, each
 * looked up in `lut` and times d (the layout of Q4_0, IQ4_NL, MXFP4 and an IQ4_XS chunk) */
INFER_CUDA_HD void nibbles_lut(const uint32_t *q, const uint32_t *lut, float d, float *w) {
    uint32_t t[4];
    for (int i = 0; i < 4; i++) t[i] = lut[i];
INFER_CUDA_UNROLL
    for (int i = 0; i < 4; i++) {
        const uint32_t lo = lut16(q[i] & 0x0F0F0F0Fu, t), hi = lut16(q[i] >> 4 & 0x0F0F0F0Fu, t);
INFER_CUDA_UNROLL
        for (int k = 0; k < 4; k++) { w[4 * i + k] = byte_f(lo, k, 128.0f) * d; w[16 + 4 * i + k] = byte_f(hi, k, 128.0f) * d; }
    }
}

/* F32, F16, BF16: a whole, 16-byte aligned chunk in 16-byte loads; else element by element */
template <> struct Dq<INFER_TYPE_F32> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int K, float *w) {
        const float *r = (const float *)row + 32 * c;
        if (32 * c + 32 <= K && ((uintptr_t)r & 15) == 0) {
INFER_CUDA_UNROLL
            for (int i = 0; i < 8; i++) {
                uint32_t v[4];
                ld16((const uint8_t *)(r + 4 * i), v);
INFER_CUDA_UNROLL
                for (int j = 0; j < 4; j++) w[4 * i + j] = bits_float(v[j]);
            }
            return;
        }
INFER_CUDA_UNROLL
        for (int i = 0; i < 32; i++) w[i] = 32 * c + i < K ? r[i] : 0.0f;
    }
};
template <int BF> INFER_CUDA_HD float half_bits(uint32_t h) { return BF ? bf16((uint16_t)h) : f16((infer_half)h); }
template <int BF> INFER_CUDA_HD void chunk16(const uint8_t *row, int c, int K, float *w) {
    const uint16_t *r = (const uint16_t *)row + 32 * c;
    if (32 * c + 32 <= K && ((uintptr_t)r & 15) == 0) {
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) {
            uint32_t v[4];
            ld16((const uint8_t *)(r + 8 * i), v);
INFER_CUDA_UNROLL
            for (int j = 0; j < 4; j++) { w[8 * i + 2 * j] = half_bits<BF>(v[j] & 0xFFFFu); w[8 * i + 2 * j + 1] = half_bits<BF>(v[j] >> 16); }
        }
        return;
    }
INFER_CUDA_UNROLL
    for (int i = 0; i < 32; i++) w[i] = 32 * c + i < K ? half_bits<BF>(r[i]) : 0.0f;
}
template <> struct Dq<INFER_TYPE_F16> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int K, float *w) { chunk16<0>(row, c, K, w); }
};
template <> struct Dq<INFER_TYPE_BF16> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int K, float *w) { chunk16<1>(row, c, K, w); }
};
/* Q4_0: x = (q - 8) d; byte j holds elements j (low nibble) and j + 16 */
template <> struct Dq<INFER_TYPE_Q4_0> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q4_0 *b = (const infer_block_q4_0 *)row + c;
        const float d = f16(b->d);
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) {
            const uint32_t q = ld2(b->qs + 4 * i), lo = q & 0x0F0F0F0Fu, hi = q >> 4 & 0x0F0F0F0Fu;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) { w[4 * i + k] = byte_f(lo, k, 8.0f) * d; w[16 + 4 * i + k] = byte_f(hi, k, 8.0f) * d; }
        }
    }
};
/* Q4_1: x = q d + m */
template <> struct Dq<INFER_TYPE_Q4_1> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q4_1 *b = (const infer_block_q4_1 *)row + c;
        const float d = f16(b->d), m = f16(b->m);
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) {
            const uint32_t q = ld2(b->qs + 4 * i), lo = q & 0x0F0F0F0Fu, hi = q >> 4 & 0x0F0F0F0Fu;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) { w[4 * i + k] = byte_f(lo, k, 0.0f) * d + m; w[16 + 4 * i + k] = byte_f(hi, k, 0.0f) * d + m; }
        }
    }
};
/* bit 4 of byte k = bit k of h (h < 16): the fifth bits of 4 consecutive elements */
INFER_CUDA_HD uint32_t spread4(uint32_t h) { return (h & 1) << 4 | (h & 2) << 11 | (h & 4) << 18 | (h & 8) << 25; }
/* Q5_0: x = (q - 16) d, the fifth bit of element k is bit k of qh (a u32 at an odd offset) */
template <> struct Dq<INFER_TYPE_Q5_0> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q5_0 *b = (const infer_block_q5_0 *)row + c;
        const float d = f16(b->d);
        const uint32_t qh = ld2(b->qh);
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) {
            const uint32_t q = ld2(b->qs + 4 * i);
            const uint32_t lo = (q & 0x0F0F0F0Fu) | spread4(qh >> (4 * i) & 15), hi = (q >> 4 & 0x0F0F0F0Fu) | spread4(qh >> (16 + 4 * i) & 15);
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) { w[4 * i + k] = byte_f(lo, k, 16.0f) * d; w[16 + 4 * i + k] = byte_f(hi, k, 16.0f) * d; }
        }
    }
};
/* Q5_1: x = q d + m */
template <> struct Dq<INFER_TYPE_Q5_1> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q5_1 *b = (const infer_block_q5_1 *)row + c;
        const float d = f16(b->d), m = f16(b->m);
        const uint32_t qh = ld2(b->qh);
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) {
            const uint32_t q = ld2(b->qs + 4 * i);
            const uint32_t lo = (q & 0x0F0F0F0Fu) | spread4(qh >> (4 * i) & 15), hi = (q >> 4 & 0x0F0F0F0Fu) | spread4(qh >> (16 + 4 * i) & 15);
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) { w[4 * i + k] = byte_f(lo, k, 0.0f) * d + m; w[16 + 4 * i + k] = byte_f(hi, k, 0.0f) * d + m; }
        }
    }
};
/* Q8_0: x = q d; the signed bytes are read offset by 128 (q ^ 0x80 = q + 128) */
template <> struct Dq<INFER_TYPE_Q8_0> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q8_0 *b = (const infer_block_q8_0 *)row + c;
        const float d = f16(b->d);
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            const uint32_t q = ld2((const uint8_t *)b->qs + 4 * i) ^ 0x80808080u;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) w[4 * i + k] = byte_f(q, k, 128.0f) * d;
        }
    }
};

/* k-quant sub-block scales (>>quant: the packed 6-bit scales of Q3_K, Q4_K and Q5_K) */
INFER_CUDA_HD int q3k_scale(const uint8_t *s, int j) {
    const int lo = j < 8 ? s[j] & 15 : s[j - 8] >> 4;
    const int hi = (s[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    return (lo | hi << 4) - 32;
}
/* Q4_K/Q5_K: the 6-bit scale and min of sub-block j */
INFER_CUDA_HD void k4_scale_min(const uint8_t *s, int j, int *sc, int *m) {
    if (j < 4) { *sc = s[j] & 63; *m = s[j + 4] & 63; return; }
    *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
    *m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
}

/* Q2_K and Q3_K share the 2-bit layout (>>quant's infer__q2_crumb and infer__hibit, which
 * address one element at a time): a chunk's element i is bits sh..sh+1 of byte i of one
 * 32-byte row of qs, sh = 2 ((e0 / 32) % 4), so its codes are read 4 to a word as Q6_K's
 * are; Q3_K's third bit is bit e0 / 32 of hmask[i]. The chunk's first 16 elements have
 * sub-block scale j = e0 / 16, the last 16 scale j + 1. */
/* Q2_K: w = d sc_j q - dmin m_j, j = e / 16 */
template <> struct Dq<INFER_TYPE_Q2_K> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q2_k *b = (const infer_block_q2_k *)row + c / 8;
        const float d = f16(b->d), dmin = f16(b->dmin);
        const int e0 = 32 * (c % 8), j = e0 / 16, sh = 2 * ((e0 >> 5) & 3);
        const uint8_t *qs = b->qs + 32 * (e0 >> 7);
        const float dl0 = d * (float)(b->scales[j] & 15), ml0 = dmin * (float)(b->scales[j] >> 4);
        const float dl1 = d * (float)(b->scales[j + 1] & 15), ml1 = dmin * (float)(b->scales[j + 1] >> 4);
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            const uint32_t q = ld2(qs + 4 * i) >> sh & 0x03030303u;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) w[4 * i + k] = (i < 4 ? dl0 : dl1) * byte_f(q, k, 0.0f) - (i < 4 ? ml0 : ml1);
        }
    }
};
/* Q3_K: w = d sc_j (q - 4 + 4 h): the code q | h << 2, less 4 */
template <> struct Dq<INFER_TYPE_Q3_K> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q3_k *b = (const infer_block_q3_k *)row + c / 8;
        const float d = f16(b->d);
        const int e0 = 32 * (c % 8), j = e0 / 16, sh = 2 * ((e0 >> 5) & 3), hb = e0 >> 5;
        const uint8_t *qs = b->qs + 32 * (e0 >> 7);
        const float dl0 = d * (float)q3k_scale(b->scales, j), dl1 = d * (float)q3k_scale(b->scales, j + 1);
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            const uint32_t code = (ld2(qs + 4 * i) >> sh & 0x03030303u) | (ld2(b->hmask + 4 * i) >> hb & 0x01010101u) << 2;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) w[4 * i + k] = (i < 4 ? dl0 : dl1) * byte_f(code, k, 4.0f);
        }
    }
};
/* Q4_K: w = d sc_j q - dmin m_j, j = e / 32: a chunk is exactly one sub-block */
template <> struct Dq<INFER_TYPE_Q4_K> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q4_k *b = (const infer_block_q4_k *)row + c / 8;
        const int j = c % 8;
        int sc, m;
        k4_scale_min(b->scales, j, &sc, &m);
        const float dl = f16(b->d) * (float)sc, ml = f16(b->dmin) * (float)m;
        const uint8_t *qs = b->qs + 32 * (j >> 1);
        const int sh = 4 * (j & 1);
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            const uint32_t q = ld2(qs + 4 * i) >> sh & 0x0F0F0F0Fu;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) w[4 * i + k] = dl * byte_f(q, k, 0.0f) - ml;
        }
    }
};
/* Q5_K: Q4_K plus a fifth bit: bit j of qh[i] for element 32 j + i */
template <> struct Dq<INFER_TYPE_Q5_K> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q5_k *b = (const infer_block_q5_k *)row + c / 8;
        const int j = c % 8;
        int sc, m;
        k4_scale_min(b->scales, j, &sc, &m);
        const float dl = f16(b->d) * (float)sc, ml = f16(b->dmin) * (float)m;
        const uint8_t *qs = b->qs + 32 * (j >> 1);
        const int sh = 4 * (j & 1);
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            const uint32_t q = (ld2(qs + 4 * i) >> sh & 0x0F0F0F0Fu) | (ld2(b->qh + 4 * i) >> j & 0x01010101u) << 4;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) w[4 * i + k] = dl * byte_f(q, k, 0.0f) - ml;
        }
    }
};
/* Q6_K: w = d sc_j (code - 32), j = e / 16; low 4 bits in ql, high 2 in qh */
template <> struct Dq<INFER_TYPE_Q6_K> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q6_k *b = (const infer_block_q6_k *)row + c / 8;
        const float d = f16(b->d);
        const int e0 = 32 * (c % 8), h = e0 >> 7, k = (e0 >> 5) & 3;   /* one (half, k) per chunk */
        const uint8_t *ql = b->ql + 64 * h + 32 * (k & 1), *qh = b->qh + 32 * h;
        const float dl0 = d * (float)b->scales[e0 / 16], dl1 = d * (float)b->scales[e0 / 16 + 1];
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            const uint32_t code = (ld2(ql + 4 * i) >> (4 * (k >> 1)) & 0x0F0F0F0Fu) | (ld2(qh + 4 * i) >> (2 * k) & 0x03030303u) << 4;
INFER_CUDA_UNROLL
            for (int l = 0; l < 4; l++) w[4 * i + l] = (i < 4 ? dl0 : dl1) * byte_f(code, l, 32.0f);
        }
    }
};
/* IQ4_NL: w = d kvalues[q] */
template <> struct Dq<INFER_TYPE_IQ4_NL> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_iq4_nl *b = (const infer_block_iq4_nl *)row + c;
        uint32_t q[4];
        for (int i = 0; i < 4; i++) q[i] = ld2(b->qs + 4 * i);
        nibbles_lut(q, k_iq4_lut, f16(b->d), w);
    }
};
/* IQ4_XS: w = d sc_j kvalues[q], 6-bit signed sub-block scales split over scales_l/_h */
template <> struct Dq<INFER_TYPE_IQ4_XS> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)row + c / 8;
        const int j = c % 8;
        const int ls = ((b->scales_l[j >> 1] >> (4 * (j & 1))) & 15) | ((b->scales_h >> (2 * j)) & 3) << 4;
        uint32_t q[4];
        for (int i = 0; i < 4; i++) q[i] = ld2(b->qs + 16 * j + 4 * i);
        nibbles_lut(q, k_iq4_lut, f16(b->d) * (float)(ls - 32), w);
    }
};
/* TQ1_0: trits packed base 3, 5 per byte (4 in qh); trit k of a byte = top trit of
 * byte * 3^k mod 256. Element order: qs[0..32) digit k -> 32k + m; qs[32..48) -> 160 + 16k + m;
 * qh[0..4) -> 240 + 4k + m. x = (t - 1) d */
INFER_CUDA_HD int trit(uint8_t byte, int k) {
    uint8_t q = byte;
    for (int i = 0; i < k; i++) q = (uint8_t)(q * 3);     /* byte * 3^k mod 256 */
    return ((uint16_t)q * 3) >> 8;
}
template <> struct Dq<INFER_TYPE_TQ1_0> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)row + c / 8;
        const float d = f16(b->d);
        const int e0 = 32 * (c % 8);
INFER_CUDA_UNROLL
        for (int i = 0; i < 32; i++) {
            const int e = e0 + i;
            int t;
            if (e < 160) t = trit(b->qs[e % 32], e / 32);
            else if (e < 240) t = trit(b->qs[32 + (e - 160) % 16], (e - 160) / 16);
            else t = trit(b->qh[(e - 240) % 4], (e - 240) / 4);
            w[i] = (float)(t - 1) * d;
        }
    }
};
/* TQ2_0: bits 2k..2k+1 of qs[32 h + m] hold element 128 h + 32 k + m; x = (c - 1) d */
template <> struct Dq<INFER_TYPE_TQ2_0> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)row + c / 8;
        const float d = f16(b->d);
        const int e0 = 32 * (c % 8), sh = 2 * (e0 % 128 / 32);
        const uint8_t *qs = b->qs + 32 * (e0 / 128);
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            const uint32_t q = ld2(qs + 4 * i) >> sh & 0x03030303u;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) w[4 * i + k] = byte_f(q, k, 1.0f) * d;
        }
    }
};
/* MXFP4: x = E2M1(code) 2^(e-127) (17-byte blocks: byte loads) */
template <> struct Dq<INFER_TYPE_MXFP4> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_mxfp4 *b = (const infer_block_mxfp4 *)row + c;
        uint32_t q[4];
        for (int i = 0; i < 4; i++) q[i] = ld1(b->qs + 4 * i);
        nibbles_lut(q, k_fp4_lut, e8m0_half(b->e), w);
    }
};
/* NVFP4: 64 codes, a UE4M3 scale per 16; a chunk is sub-blocks 2h and 2h + 1, each 8 bytes
 * whose low nibbles are its elements 0..7 and high nibbles 8..15 */
template <> struct Dq<INFER_TYPE_NVFP4> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_nvfp4 *b = (const infer_block_nvfp4 *)row + c / 2;
        uint32_t t[4];
        for (int i = 0; i < 4; i++) t[i] = k_fp4_lut[i];
INFER_CUDA_UNROLL
        for (int u = 0; u < 2; u++) {
            const int s = 2 * (c % 2) + u;
            const float d = ue4m3_half(b->d[s]);
INFER_CUDA_UNROLL
            for (int i = 0; i < 2; i++) {
                const uint32_t q = ld1(b->qs + 8 * s + 4 * i), lo = lut16(q & 0x0F0F0F0Fu, t), hi = lut16(q >> 4 & 0x0F0F0F0Fu, t);
INFER_CUDA_UNROLL
                for (int k = 0; k < 4; k++) { w[16 * u + 4 * i + k] = byte_f(lo, k, 128.0f) * d; w[16 * u + 8 + 4 * i + k] = byte_f(hi, k, 128.0f) * d; }
            }
        }
    }
};
/* Q1_0: 128 sign bits, x = bit ? d : -d */
template <> struct Dq<INFER_TYPE_Q1_0> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q1_0 *b = (const infer_block_q1_0 *)row + c / 4;
        const float d = f16(b->d);
        const uint8_t *qs = b->qs + 4 * (c % 4);
INFER_CUDA_UNROLL
        for (int i = 0; i < 32; i++) w[i] = (qs[i / 8] >> (i % 8) & 1) ? d : -d;
    }
};
/* Q2_0: 64 2-bit codes, x = (c - 1) d */
template <> struct Dq<INFER_TYPE_Q2_0> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const infer_block_q2_0 *b = (const infer_block_q2_0 *)row + c / 2;
        const float d = f16(b->d);
        const uint8_t *qs = b->qs + 8 * (c % 2);
INFER_CUDA_UNROLL
        for (int i = 0; i < 32; i++) w[i] = (float)(((qs[i / 4] >> (2 * (i % 4))) & 3) - 1) * d;
    }
};
/* I2_S: in each 128-group, element 32 g + r is bits (7-2g)..(6-2g) of byte r; x = code - 1
 * (the per-tensor scale is the tensor's `scale`, applied to the output) */
template <> struct Dq<INFER_TYPE_I2_S> {
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, int, float *w) {
        const uint8_t *p = row + 32 * (c / 4);
        const int sh = 6 - 2 * (c % 4);
INFER_CUDA_UNROLL
        for (int i = 0; i < 32; i++) w[i] = (float)(((p[i] >> sh) & 3) - 1);
    }
};

/* ------------------------------------------------------------------------------------------
 * >>cuda_types -- the weight types of this backend, and the one switch over them.
 *
 * INFER_CUDA_TYPES lists every type with a decoder above: X(name) stands for the type id
 * INFER_TYPE_name, whose decoder is Dq<INFER_TYPE_name> (the block struct is the one infer.h
 * declares, named in the decoder). A type joins the backend by its Dq specialization and
 * its entry here, nothing else: every kernel that reads weights is a template over the type,
 * and infer_cuda_with_type is the only place a run-time type picks its instantiation:
 *
 *     infer_cuda_with_type(t, [&](auto ty) { kernel<decltype(ty)::id><<<...>>>(...); });
 *
 * calls the lambda with ty an infer_cuda_ty<T> (T = t as a compile-time constant) and
 * returns 1, or returns 0 for a type not in the list. The types without decoders (the grid
 * i-quants) are refused at upload (supports_type), so no launch ever meets one.
 * ---------------------------------------------------------------------------------------- */
#define INFER_CUDA_TYPES(X) X(F32) X(F16) X(BF16) X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q2_K) X(Q3_K) X(Q4_K) \
    X(Q5_K) X(Q6_K) X(IQ4_NL) X(IQ4_XS) X(TQ1_0) X(TQ2_0) X(MXFP4) X(NVFP4) X(Q1_0) X(Q2_0) X(I2_S)

template <int T> struct infer_cuda_ty { static constexpr int id = T; };
template <class F> static int infer_cuda_with_type(infer_type t, F &&f) {
    switch (t) {
#define INFER_CUDA_CASE(n) case INFER_TYPE_##n: f(infer_cuda_ty<INFER_TYPE_##n>()); return 1;
    INFER_CUDA_TYPES(INFER_CUDA_CASE)
#undef INFER_CUDA_CASE
    default: return 0;
    }
}
static int infer_cuda_supports_type(infer_type t) { return infer_cuda_with_type(t, [](auto) {}); }

/* ------------------------------------------------------------------------------------------
 * >>cuda_matmul -- matmul, matmul_n, matmul_glu, matmul_add, matmul_id, embed:
 *   out[r, n] = scale * sum_k W[n, k] x[r, k]    W: [N, K] (row_bytes apart), x: [rows, K]
 * Two shapes of work, two kernels. A decode step has 1..8 rows (in the fast mode, with int8
 * activations, up to 16: a batch of sequences): each weight is used once
 * per row, so the kernel is built around reading the weights (k_matvec: a warp per output
 * column, the activations shared through shared memory; in the fast mode k_mvq, integer
 * dot products against int8 activations, below k_matvec). A prompt has many rows: each
 * weight is used many times, so the kernel tiles the output and reuses every decoded
 * weight over 64 rows from shared memory (k_matmul_tiled; in the fast mode, for the
 * quantized types, k_matmul_q8 on int8 tensor cores). matmul_id is the same kernels over
 * the experts' weights, embed a row lookup through the same decoders.
 * ---------------------------------------------------------------------------------------- */
#define INFER_CUDA_MV_WARPS 4        /* output columns per block of k_matvec */
#define INFER_CUDA_MV_ROWS 8         /* most activation rows one pass of k_matvec serves */
#define INFER_CUDA_MVQ_ROWS 8        /* most the fast mode's int8 matvec serves by default (9-16 rows ran faster on the tiles) */
#define INFER_CUDA_MVQ_MAX 64        /* ... and the most it can be set to serve (INFER_CUDA_MVQ_ROWS in the environment) */

/* Decode-sized matmul: one warp per output column, rows [blockIdx.y * R, + R). One launch
 * serves up to 4 weights that read the same x (matmul_n: a layer's q, k and v, or gate and
 * up): their output columns are numbered one after another, start[j] .. start[j+1] being
 * weight j's, so the launch's blocks cover all of them. */
#define INFER_CUDA_MV_MAXW 4
typedef struct infer_cuda_mv {
    const uint8_t *W[INFER_CUDA_MV_MAXW];
    float *out[INFER_CUDA_MV_MAXW];
    float scale[INFER_CUDA_MV_MAXW];
    int start[INFER_CUDA_MV_MAXW + 1];
    int n;
    int add;                  /* out += W x (matmul_add) instead of out = W x */
    int act;                  /* GLU mode (k_matvec's G): out[0] = act(W[0] x) * (W[1] x), limit */
    float limit;
    int unused;               /* no padding bytes: a recorded launch's key holds the struct's bytes */
} infer_cuda_mv;
static_assert(offsetof(infer_cuda_mv, unused) + sizeof(int) == sizeof(infer_cuda_mv), "infer_cuda_mv has tail padding");
/* Weights to pull into L2 ahead of the matvec that reads them (l2_prefetch): up to 4
 * ranges, 16-byte aligned, whole 16-byte groups; bytes 0 where there are none. */
#define INFER_CUDA_PF_N 4
typedef struct infer_cuda_pf {
    const uint8_t *p[INFER_CUDA_PF_N];
    uint32_t bytes[INFER_CUDA_PF_N];
} infer_cuda_pf;
static_assert(sizeof(infer_cuda_pf) == INFER_CUDA_PF_N * (sizeof(void *) + 4), "infer_cuda_pf has padding");
/* The decode step's small kernels (the norm that feeds a matvec, the attention or DeltaNet
 * step that feeds Wo) run for microseconds with the memory all but idle, and the matvec after
 * them waits on memory from its first load. So they first ask L2 for the start of the next
 * matvec's weights (its first columns, which its first blocks read): every thread of the grid
 * issues bulk L2 prefetches (cp.async.bulk.prefetch, sm_90; no-ops before) of 4 KiB pieces
 * in turn, before the kernel waits for its predecessor -- the weights are no kernel's output.
 * A hint: nothing waits for it, and what it fetched is read as any cached line. Off by
 * default (INFER_CUDA_L2PF=1 turns it on): on an H100 it gained nothing on llama and cost
 * qwen35 10% of its decode speed, and ncu timed each norm that issues it at ~15 us, not ~3 --
 * a grid seems not to finish while its bulk prefetches are in flight. */
#define INFER_CUDA_PF_PIECE 4096u
__device__ __forceinline__ void l2_prefetch(const infer_cuda_pf &pf) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(INFER_CUDA_EMU)
    const uint32_t nb = gridDim.x * gridDim.y * gridDim.z, b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const uint32_t nt = nb * blockDim.x, t = b * blockDim.x + threadIdx.x;
INFER_CUDA_UNROLL
    for (int j = 0; j < INFER_CUDA_PF_N; j++) {
        const uint32_t bytes = pf.bytes[j], pieces = (bytes + INFER_CUDA_PF_PIECE - 1) / INFER_CUDA_PF_PIECE;
        for (uint32_t i = t; i < pieces; i += nt) {
            const uint32_t o = i * INFER_CUDA_PF_PIECE, n = bytes - o < INFER_CUDA_PF_PIECE ? bytes - o : INFER_CUDA_PF_PIECE;
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(pf.p[j] + o), "r"(n) : "memory");
        }
    }
#else
    (void)pf;
#endif
}

/* k_mvq's GLU mode with kind 1 (Q8_0) or 2 (Q8_K): out[0] is also written quantized, as
 * k_quant_x would write it, into codes [rows, N] and ds [rows, N / 32] -- the down
 * projection's activations; count [N / size] counts the blocks done per quantization block
 * of size (32 or 256) columns, all 0 between launches. kind 0: no such output. */
typedef struct infer_cuda_qout {
    int8_t *codes;
    float2 *ds;
    int *count;
    int kind, size;
    infer_cuda_pf pf;         /* the weights of the matvec that reads them, to prefetch (the attention's: Wo) */
} infer_cuda_qout;
static_assert(sizeof(infer_cuda_qout) == 3 * sizeof(void *) + 2 * sizeof(int) + sizeof(infer_cuda_pf), "infer_cuda_qout has padding");
/* The RMSNorm a one-row float matvec does itself (k_mvq's NM): x the norm's input, g its
 * weight, h where the normalised row goes (written by the blocks of the first column pair),
 * vt the threads k_rmsnorm would sum the squares with (its order of sums, rms_scale_v) */
typedef struct infer_cuda_mvn {
    const float *x, *g;
    float *h;
    float eps;
    int vt;
} infer_cuda_mvn;
static_assert(sizeof(infer_cuda_mvn) == 3 * sizeof(void *) + sizeof(float) + sizeof(int), "infer_cuda_mvn has padding");
/* The activations go through shared memory. A lane dots its 32 decoded weights with the 32
 * activations of its chunk: read straight from global memory, the 32 lanes of a warp would
 * read 32 segments 128 bytes apart with every load, 8 times the cache traffic of reading
 * the same bytes side by side. So the block stages x 1024 values (32 chunks, one a lane)
 * at a time, read side by side, into rows of 33 floats per chunk: lane l's value i is at
 * 33 l + i, in bank (l + i) mod 32, so the lanes' reads never collide. Each lane's weights
 * are loaded and decoded before the barrier that waits for the stage, so their latency
 * overlaps it. */
#define INFER_CUDA_MV_TILE 1024
/* the block stages rows r0 .. r0 + nr of x (K apart), values k0 .. k0 + MV_TILE, into xs
 * (zeros past K and for the rows it lacks); every thread of the block takes part */
template <int R> __device__ __forceinline__ void mv_stage(float (*xs)[32 * 33], const float *x, int K, int nr, int k0) {
    for (int i = threadIdx.x; i < R * INFER_CUDA_MV_TILE; i += blockDim.x) {
        const int r = i / INFER_CUDA_MV_TILE, e = i % INFER_CUDA_MV_TILE, k = k0 + e;
        xs[r][(e >> 5) * 33 + (e & 31)] = r < nr && k < K ? x[(size_t)r * K + k] : 0.0f;
    }
}
/* a lane's 32 decoded weights dotted with its chunk of a staged row, in order */
__device__ __forceinline__ float mv_dot32(const float *w, const float *xs_row, int lane) {
    const float *xr = xs_row + 33 * lane;
    float s = 0.0f;
INFER_CUDA_UNROLL
    for (int i = 0; i < 32; i++) s += w[i] * xr[i];
    return s;
}
/* G = 1 (with R = 1): the GLU mode of matmul_glu -- the warp of column n dots row n of W[0]
 * (gate) and of W[1] (up) with the same activations, two sums, and writes
 * act(gate) * up to out[0]; the two columns' weights are decoded one after the other. */
template <int T, int R, int G>
__global__ void __launch_bounds__(32 * INFER_CUDA_MV_WARPS) k_matvec(infer_cuda_mv mv, size_t row_bytes, const float *x, int K, int rows) {
    INFER_CUDA_PDL_ENTRY;
    __shared__ float xs[R][32 * 33];
    const int g = blockIdx.x * INFER_CUDA_MV_WARPS + (threadIdx.x >> 5), r0 = blockIdx.y * R, lane = threadIdx.x & 31;
    /* which weight: constant indices only, so the parameters are not copied to local memory */
    const uint8_t *W = mv.W[0];
    float *out = mv.out[0], scale = mv.scale[0];
    int s0 = 0, s1 = mv.start[1];
    if (!G)
INFER_CUDA_UNROLL
        for (int i = 1; i < INFER_CUDA_MV_MAXW; i++)
            if (i < mv.n && g >= mv.start[i]) { W = mv.W[i]; out = mv.out[i]; scale = mv.scale[i]; s0 = mv.start[i]; s1 = mv.start[i + 1]; }
    const int active = g < s1;               /* a warp past the last column still helps stage x */
    const int n = g - s0, N = s1 - s0, nch = (K + 31) / 32;
    const int nr = rows - r0 < R ? rows - r0 : R;
    const uint8_t *wrow = W + (size_t)(active ? n : 0) * row_bytes, *urow = mv.W[G ? 1 : 0] + (size_t)(active ? n : 0) * row_bytes;
    float acc[R], accu = 0.0f;
INFER_CUDA_UNROLL
    for (int r = 0; r < R; r++) acc[r] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += INFER_CUDA_MV_TILE) {
        const int c = k0 / 32 + lane;
        float w[32];
        if (active && c < nch) Dq<T>::chunk(wrow, c, K, w);
        __syncthreads();                      /* the previous tile's reads are done */
        mv_stage<R>(xs, x + (size_t)r0 * K, K, nr, k0);
        __syncthreads();
        if (!active || c >= nch) continue;
INFER_CUDA_UNROLL
        for (int r = 0; r < R; r++) {
            if (r >= nr) break;
            acc[r] += mv_dot32(w, xs[r], lane);
        }
        if (G) {
            Dq<T>::chunk(urow, c, K, w);
            accu += mv_dot32(w, xs[0], lane);
        }
    }
    if (!active) return;
INFER_CUDA_UNROLL
    for (int r = 0; r < R; r++) acc[r] = warp_sum(acc[r]);
    if (G) accu = warp_sum(accu);
    if (lane != 0) return;
    if (G) out[n] = glu_act(acc[0] * scale, accu * mv.scale[1], mv.act, mv.limit);
    else
        for (int r = 0; r < nr; r++) {
            const float v = acc[r] * scale;
            float *o = &out[(size_t)(r0 + r) * N + n];
            *o = mv.add ? *o + v : v;
        }
}

/* ---- the fast mode's matvec: int8 dot products against quantized activations ----
 * k_matvec above decodes every weight to f32 and multiplies in f32; per weight that is a
 * few integer operations, a conversion and an FMA, and the decode step was bound by that
 * work rather than by the bytes. The fast mode (the context's precise flag off) instead
 * does what the CPU's fast path does (>>quant, "Why quantized activations"): the
 * activation rows are quantized once to int8 with a scale per block (of 32 values, or 256
 * for the k-quants), and a weight block times an activation block is d_w d_x sum(q_w q_x),
 * the inner sum in integers, four
 * byte products and their sum in one __dp4a. The codes are the CPU's codes bit for bit
 * (k_quant_x), so this path's result is the CPU fast path's up to the order of the float
 * sums. The float weight types (F32, F16, BF16) keep f32 activations and f32 sums and get
 * only the kernel's shape (16-byte loads, 8 weights a slice).
 *
 * ACTIVATIONS (k_quant_x into the context's xq buffer, or the kernel that wrote x): x [rows, K]
 * becomes codes int8 [rows, K] and xds float2 [rows, K / 32], one (d, sum of the 32 codes)
 * per 32-block, the sum's int32 bits stored in the float. Two rules, as the weight type's
 * dot_type says (>>traits):
 *   Q8_0 (32-blocks)   d = max|x| / 127 rounded to f16, q = roundf(x 127 / max|x|)
 *   Q8_K (256-blocks)  d = max / -127 in f32 for the signed value of largest magnitude,
 *                      q = rint(x -127 / max) at most 127; each 32-block's pair repeats d
 * (Q4_1, Q5_1 and the k-quants with mins dot against the sums.) Why quantized before the
 * matvec rather than inside it: a matvec launch has thousands of blocks, and every one of
 * them would redo the whole row's max, scale and rounding; quantized once, the row is a
 * quarter of the f32 bytes, read by all blocks from L2, and one quantization serves
 * matmul_n's q, k and v and matmul_glu's gate and up. Where the kernel that writes the
 * activations can write their int8 form too, it does (k_rmsnorm_q; the GLU's
 * mvq_quant_out), and no launch of its own is needed.
 *
 * THE MATVEC (k_mvq): a block of 128 threads (fewer, in whole warps, when a row has fewer
 * slices) computes MVQ_COLS output columns for up to 8 activation rows. A weight row is
 * cut into slices of 16 weights (8 for the float types): half a 32-block, a sixteenth of a
 * 256-super-block, so several lanes share a block and a warp's loads of one slice each
 * cover consecutive bytes. Thread t takes slices t, t + 128, ... (t + the block's
 * threads): for each slice it
 * decodes the weight words of each of its columns once, then dots them with each row's
 * activation words (integer sums, then one float multiply by the scales per slice). Many
 * threads per column keep many loads in flight even where N is small (a k or v
 * projection), and a decode's K = 2048 is one slice a thread. At the end the partial sums
 * of each (column, row) are added by a transposing warp reduction (V values in V - 1 +
 * 5 - log2 V shuffles instead of 5 V) and one shared-memory step over the warps, in an
 * order fixed by the block's shape. Mv<T> holds each type's slice: which activation bytes
 * it pairs with (the element offsets elo, ehi of two runs of 8), its weight words, and the
 * dot.
 * ---------------------------------------------------------------------------------------- */
#define INFER_CUDA_MVQ_THREADS 128
#define INFER_CUDA_MVQ_COLS 2          /* output columns per block (each thread's slices of both) */

/* loads of a whole vector at an address aligned to its size (the emulator: memcpy) */
template <class V> __device__ __forceinline__ V ldv(const void *p) {
#ifdef __CUDA_ARCH__
    return *(const V *)p;
#else
    V v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}
template <class V> __device__ __forceinline__ void stv(void *p, V v) {
#ifdef __CUDA_ARCH__
    *(V *)p = v;
#else
    memcpy(p, &v, sizeof v);
#endif
}
/* 4 bytes at a 4-byte aligned p */
INFER_CUDA_HD uint32_t ld4(const uint8_t *p) {
#ifdef __CUDA_ARCH__
    return *(const uint32_t *)p;
#else
    return u32_le(p);
#endif
}
/* two f16 (low half first) or two bf16 as floats */
__device__ __forceinline__ float2 f16x2(uint32_t w) {
    __half2 h;
    memcpy(&h, &w, 4);
    return __half22float2(h);
}
__device__ __forceinline__ float2 bf16x2(uint32_t w) { float2 f = { bits_float(w << 16), bits_float(w & 0xFFFF0000u) }; return f; }
/* 4 codes 0..63, one a byte, less 32, as signed bytes: + 0x60 never carries out of a byte,
 * and the xor turns 0x60 + c into c - 32 in two's complement */
__device__ __forceinline__ int minus32(uint32_t c) { return (int)((c + 0x60606060u) ^ 0x80808080u); }

/* the activation words a slice pairs with: bytes elo..elo+7 and ehi..ehi+7 of a row's codes
 * (8-byte aligned), and the (d, sum) of their 32-blocks. CONTIG: ehi = elo + 8 (one 16-byte
 * load); DS: 0 both in one 32-block, 1 in the adjacent blocks 2j, 2j + 1 (one 16-byte load
 * of the pairs), 2 anywhere. */
struct MvX {
    int lo[2], hi[2];
    float dlo, dhi;
    int slo, shi;
};
template <int CONTIG, int DS> __device__ __forceinline__ void mvx_load(const int8_t *q, const float2 *ds, int elo, int ehi, MvX &x) {
    if (CONTIG) {
        const int4 a = ldv<int4>(q + elo);
        x.lo[0] = a.x; x.lo[1] = a.y; x.hi[0] = a.z; x.hi[1] = a.w;
    } else {
        const int2 a = ldv<int2>(q + elo), b = ldv<int2>(q + ehi);
        x.lo[0] = a.x; x.lo[1] = a.y; x.hi[0] = b.x; x.hi[1] = b.y;
    }
    float2 u, v;
    if (DS == 1) {
        const float4 f = ldv<float4>(ds + (elo >> 5));
        u.x = f.x; u.y = f.y; v.x = f.z; v.y = f.w;
    } else {
        u = ds[elo >> 5];
        v = DS == 0 ? u : ds[ehi >> 5];
    }
    x.dlo = u.x; x.slo = __float_as_int(u.y);
    x.dhi = v.x; x.shi = __float_as_int(v.y);
}
/* sum over the 16 pairs of (lo, hi) weight codes with the activation codes */
__device__ __forceinline__ int dp16(const int *lo, const int *hi, const MvX &x) {
    return __dp4a(hi[1], x.hi[1], __dp4a(hi[0], x.hi[0], __dp4a(lo[1], x.lo[1], __dp4a(lo[0], x.lo[0], 0))));
}
/* the codes of 4-bit nibbles: low and high nibbles of two words */
__device__ __forceinline__ void nib2(uint32_t w0, uint32_t w1, int *lo, int *hi) {
    lo[0] = (int)(w0 & 0x0F0F0F0Fu); lo[1] = (int)(w1 & 0x0F0F0F0Fu);
    hi[0] = (int)(w0 >> 4 & 0x0F0F0F0Fu); hi[1] = (int)(w1 >> 4 & 0x0F0F0F0Fu);
}

/* Mv<T>: KIND 0 (no fast kernel: k_matvec serves the type in both modes), 1 (Q8_0
 * activations), 2 (Q8_K activations), 3 (f32 activations); QK weights a block, SPB slices a
 * block, ALIGN the alignment its loads need of a weight row. */
template <int T> struct Mv { enum { KIND = 0 }; };

/* the 32-block types with Q4_0's nibble order (byte j: elements j and j + 16): slice p takes
 * bytes 8p..8p+7 of qs, elements 8p.. (low nibbles) and 16 + 8p.. (high) */
struct MvNib {
    enum { KIND = 1, QK = 32, SPB = 2 };
    typedef MvX X;
    static __device__ __forceinline__ void x(const int8_t *q, const float2 *ds, int b, int p, X &o) { mvx_load<0, 0>(q, ds, 32 * b + 8 * p, 32 * b + 16 + 8 * p, o); }
};
/* Q4_0: (q - 8) d; the -8 sum(x) of the block is slice 0's */
template <> struct Mv<INFER_TYPE_Q4_0> : MvNib {
    enum { ALIGN = 2 };
    struct W { int lo[2], hi[2]; float d; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q4_0 *k = (const infer_block_q4_0 *)row + b;
        nib2(ld2(k->qs + 8 * p), ld2(k->qs + 8 * p + 4), o.lo, o.hi);
        o.d = f16(k->d);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int p) {
        return (float)(dp16(w.lo, w.hi, x) - (p ? 0 : 8 * x.slo)) * (w.d * x.dlo);
    }
};
/* Q4_1: q d + m; the m sum(x) of the block is slice 0's */
template <> struct Mv<INFER_TYPE_Q4_1> : MvNib {
    enum { ALIGN = 4 };
    struct W { int lo[2], hi[2]; float d, m; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q4_1 *k = (const infer_block_q4_1 *)row + b;
        const uint32_t dm = ld4((const uint8_t *)k);
        nib2(ld4(k->qs + 8 * p), ld4(k->qs + 8 * p + 4), o.lo, o.hi);
        o.d = f16((infer_half)(dm & 0xFFFF)); o.m = f16((infer_half)(dm >> 16));
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int p) {
        const float v = (float)dp16(w.lo, w.hi, x) * (w.d * x.dlo);
        return p ? v : v + (float)x.slo * (w.m * x.dlo);
    }
};
/* the fifth bits of Q5_0/Q5_1: element j's is bit j of qh */
__device__ __forceinline__ void q5_high(uint32_t qh, int p, int *lo, int *hi) {
    lo[0] |= (int)spread4(qh >> (8 * p) & 15); lo[1] |= (int)spread4(qh >> (8 * p + 4) & 15);
    hi[0] |= (int)spread4(qh >> (16 + 8 * p) & 15); hi[1] |= (int)spread4(qh >> (20 + 8 * p) & 15);
}
/* Q5_0: (q - 16) d */
template <> struct Mv<INFER_TYPE_Q5_0> : MvNib {
    enum { ALIGN = 2 };
    struct W { int lo[2], hi[2]; float d; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q5_0 *k = (const infer_block_q5_0 *)row + b;
        nib2(ld2(k->qs + 8 * p), ld2(k->qs + 8 * p + 4), o.lo, o.hi);
        q5_high(ld2(k->qh), p, o.lo, o.hi);
        o.d = f16(k->d);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int p) {
        return (float)(dp16(w.lo, w.hi, x) - (p ? 0 : 16 * x.slo)) * (w.d * x.dlo);
    }
};
/* Q5_1: q d + m */
template <> struct Mv<INFER_TYPE_Q5_1> : MvNib {
    enum { ALIGN = 4 };
    struct W { int lo[2], hi[2]; float d, m; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q5_1 *k = (const infer_block_q5_1 *)row + b;
        const uint32_t dm = ld4((const uint8_t *)k);
        nib2(ld4(k->qs + 8 * p), ld4(k->qs + 8 * p + 4), o.lo, o.hi);
        q5_high(ld4(k->qh), p, o.lo, o.hi);
        o.d = f16((infer_half)(dm & 0xFFFF)); o.m = f16((infer_half)(dm >> 16));
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int p) {
        const float v = (float)dp16(w.lo, w.hi, x) * (w.d * x.dlo);
        return p ? v : v + (float)x.slo * (w.m * x.dlo);
    }
};
/* 16-entry tables of signed bytes for lut16 (IQ4_NL's levels; FP4's values times 2) */
#define INFER_CUDA_SLUTW(a, b, c, d) ((uint32_t)(uint8_t)(a) | (uint32_t)(uint8_t)(b) << 8 | (uint32_t)(uint8_t)(c) << 16 | (uint32_t)(uint8_t)(d) << 24)
/* the codes of two words of nibbles looked up in a signed table */
__device__ __forceinline__ void nib2_lut(uint32_t w0, uint32_t w1, const uint32_t *t, int *lo, int *hi) {
    lo[0] = (int)lut16(w0 & 0x0F0F0F0Fu, t); lo[1] = (int)lut16(w1 & 0x0F0F0F0Fu, t);
    hi[0] = (int)lut16(w0 >> 4 & 0x0F0F0F0Fu, t); hi[1] = (int)lut16(w1 >> 4 & 0x0F0F0F0Fu, t);
}
/* IQ4_NL: d kvalues[q] */
template <> struct Mv<INFER_TYPE_IQ4_NL> : MvNib {
    enum { ALIGN = 2 };
    struct W { int lo[2], hi[2]; float d; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_iq4_nl *k = (const infer_block_iq4_nl *)row + b;
        const uint32_t t[4] = { INFER_CUDA_SLUTW(-127, -104, -83, -65), INFER_CUDA_SLUTW(-49, -35, -22, -10), INFER_CUDA_SLUTW(1, 13, 25, 38),
                                INFER_CUDA_SLUTW(53, 69, 89, 113) };
        nib2_lut(ld2(k->qs + 8 * p), ld2(k->qs + 8 * p + 4), t, o.lo, o.hi);
        o.d = f16(k->d);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) { return (float)dp16(w.lo, w.hi, x) * (w.d * x.dlo); }
};
/* MXFP4: E2M1(q) 2^(e-127) = (2 E2M1(q)) 2^(e-128) (17-byte blocks: byte loads) */
template <> struct Mv<INFER_TYPE_MXFP4> : MvNib {
    enum { ALIGN = 1 };
    struct W { int lo[2], hi[2]; float d; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_mxfp4 *k = (const infer_block_mxfp4 *)row + b;
        const uint32_t t[4] = { INFER_CUDA_SLUTW(0, 1, 2, 3), INFER_CUDA_SLUTW(4, 6, 8, 12), INFER_CUDA_SLUTW(0, -1, -2, -3), INFER_CUDA_SLUTW(-4, -6, -8, -12) };
        nib2_lut(ld1(k->qs + 8 * p), ld1(k->qs + 8 * p + 4), t, o.lo, o.hi);
        o.d = e8m0_half(k->e);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) { return (float)dp16(w.lo, w.hi, x) * (w.d * x.dlo); }
};
/* Q8_0: q d; slice p is elements 16p..16p+15 */
template <> struct Mv<INFER_TYPE_Q8_0> {
    enum { KIND = 1, QK = 32, SPB = 2, ALIGN = 2 };
    typedef MvX X;
    struct W { int lo[2], hi[2]; float d; };
    static __device__ __forceinline__ void x(const int8_t *q, const float2 *ds, int b, int p, X &o) { mvx_load<1, 0>(q, ds, 32 * b + 16 * p, 32 * b + 16 * p + 8, o); }
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q8_0 *k = (const infer_block_q8_0 *)row + b;
        const uint8_t *q = (const uint8_t *)k->qs + 16 * p;
        o.lo[0] = (int)ld2(q); o.lo[1] = (int)ld2(q + 4); o.hi[0] = (int)ld2(q + 8); o.hi[1] = (int)ld2(q + 12);
        o.d = f16(k->d);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) { return (float)dp16(w.lo, w.hi, x) * (w.d * x.dlo); }
};

/* byte j (0..11) of the 12 packed scale bytes of Q4_K/Q5_K, held as 3 words */
__device__ __forceinline__ int sbyte(uint32_t s0, uint32_t s1, uint32_t s2, int j) {
    const uint32_t w = j < 4 ? s0 : j < 8 ? s1 : s2;
    return (int)(w >> (8 * (j & 3)) & 255);
}
/* the 6-bit scale and min of sub-block j (>>quant's infer__k4_scale_min) from the 3 words */
__device__ __forceinline__ void k4_sm(uint32_t s0, uint32_t s1, uint32_t s2, int j, int *sc, int *m) {
    if (j < 4) { *sc = sbyte(s0, s1, s2, j) & 63; *m = sbyte(s0, s1, s2, j + 4) & 63; return; }
    *sc = (sbyte(s0, s1, s2, j + 4) & 15) | (sbyte(s0, s1, s2, j - 4) >> 6) << 4;
    *m = (sbyte(s0, s1, s2, j + 4) >> 4) | (sbyte(s0, s1, s2, j) >> 6) << 4;
}
/* Q4_K and Q5_K: 32-byte rows of qs hold sub-blocks 2i (low nibbles) and 2i + 1 (high);
 * slice p = 4i + u takes bytes 8u..8u+7 of row i: elements 64i + 8u.. and 64i + 32 + 8u..
 * (16-byte aligned blocks: the header of d, dmin and the scales is one load). Per slice:
 * d_x (d sum sc_j S_j - dmin sum m_j sum_j(x)), the mins' term the u = 0 slice's. */
struct MvK4 {
    enum { KIND = 2, QK = 256, SPB = 16, ALIGN = 16 };
    typedef MvX X;
    struct W { int lo[2], hi[2], sc[2], m[2]; float d, dmin; };
    static __device__ __forceinline__ void x(const int8_t *q, const float2 *ds, int b, int p, X &o) {
        mvx_load<0, 1>(q, ds, 256 * b + 64 * (p >> 2) + 8 * (p & 3), 256 * b + 64 * (p >> 2) + 32 + 8 * (p & 3), o);
    }
    /* the header (16 bytes at the block's start) */
    static __device__ __forceinline__ void head(const uint8_t *blk, int p, W &o) {
        const uint4 h = ldv<uint4>(blk);
        o.d = f16((infer_half)(h.x & 0xFFFF)); o.dmin = f16((infer_half)(h.x >> 16));
        k4_sm(h.y, h.z, h.w, 2 * (p >> 2), &o.sc[0], &o.m[0]);
        k4_sm(h.y, h.z, h.w, 2 * (p >> 2) + 1, &o.sc[1], &o.m[1]);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int p) {
        const int slo = __dp4a(w.lo[1], x.lo[1], __dp4a(w.lo[0], x.lo[0], 0)), shi = __dp4a(w.hi[1], x.hi[1], __dp4a(w.hi[0], x.hi[0], 0));
        const int isum = w.sc[0] * slo + w.sc[1] * shi, msum = p & 3 ? 0 : w.m[0] * x.slo + w.m[1] * x.shi;
        return x.dlo * (w.d * (float)isum - w.dmin * (float)msum);
    }
};
template <> struct Mv<INFER_TYPE_Q4_K> : MvK4 {
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q4_k *k = (const infer_block_q4_k *)row + b;
        head((const uint8_t *)k, p, o);
        const int2 q = ldv<int2>(k->qs + 32 * (p >> 2) + 8 * (p & 3));
        nib2((uint32_t)q.x, (uint32_t)q.y, o.lo, o.hi);
    }
};
/* Q5_K: the fifth bit of element 32j + m is bit j of qh[m] */
template <> struct Mv<INFER_TYPE_Q5_K> : MvK4 {
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q5_k *k = (const infer_block_q5_k *)row + b;
        head((const uint8_t *)k, p, o);
        const int i = p >> 2, u = p & 3;
        const int2 q = ldv<int2>(k->qs + 32 * i + 8 * u), h = ldv<int2>(k->qh + 8 * u);
        nib2((uint32_t)q.x, (uint32_t)q.y, o.lo, o.hi);
        o.lo[0] |= (int)((uint32_t)h.x >> (2 * i) & 0x01010101u) << 4; o.lo[1] |= (int)((uint32_t)h.y >> (2 * i) & 0x01010101u) << 4;
        o.hi[0] |= (int)((uint32_t)h.x >> (2 * i + 1) & 0x01010101u) << 4; o.hi[1] |= (int)((uint32_t)h.y >> (2 * i + 1) & 0x01010101u) << 4;
    }
};
/* Q6_K: in half h of the super-block, element 128h + 32k + m has low bits from byte
 * 64h + 32(k & 1) + m of ql (nibble k >> 1) and high bits from byte 32h + m of qh (bits
 * 2k, 2k+1). Slice p = 8h + 4a + u takes ql bytes 64h + 32a + 8u.. (both nibbles: k = a and
 * k = a + 2) and qh bytes 32h + 8u..: elements 128h + 32a + 8u.. and 64 further; one scale
 * each. Per slice: d d_x sum sc_j S_j, codes less 32 as signed bytes. */
template <> struct Mv<INFER_TYPE_Q6_K> {
    enum { KIND = 2, QK = 256, SPB = 16, ALIGN = 2 };
    typedef MvX X;
    struct W { int lo[2], hi[2], sc[2]; float d; };
    static __device__ __forceinline__ void x(const int8_t *q, const float2 *ds, int b, int p, X &o) {
        const int e = 256 * b + 128 * (p >> 3) + 32 * (p >> 2 & 1) + 8 * (p & 3);
        mvx_load<0, 2>(q, ds, e, e + 64, o);
    }
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q6_k *k = (const infer_block_q6_k *)row + b;
        const int h = p >> 3, a = p >> 2 & 1, u = p & 3;
        const uint8_t *ql = k->ql + 64 * h + 32 * a + 8 * u, *qh = k->qh + 32 * h + 8 * u;
        const uint32_t l0 = ld2(ql), l1 = ld2(ql + 4), h0 = ld2(qh) >> (2 * a), h1 = ld2(qh + 4) >> (2 * a);
        o.lo[0] = minus32((l0 & 0x0F0F0F0Fu) | (h0 & 0x03030303u) << 4);
        o.lo[1] = minus32((l1 & 0x0F0F0F0Fu) | (h1 & 0x03030303u) << 4);
        o.hi[0] = minus32((l0 >> 4 & 0x0F0F0F0Fu) | (h0 >> 4 & 0x03030303u) << 4);
        o.hi[1] = minus32((l1 >> 4 & 0x0F0F0F0Fu) | (h1 >> 4 & 0x03030303u) << 4);
        const int j = 8 * h + 2 * a + (u >> 1);              /* the scale of the low run; the high run's is j + 4 */
        o.sc[0] = k->scales[j]; o.sc[1] = k->scales[j + 4];
        o.d = f16(k->d);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) {
        const int slo = __dp4a(w.lo[1], x.lo[1], __dp4a(w.lo[0], x.lo[0], 0)), shi = __dp4a(w.hi[1], x.hi[1], __dp4a(w.hi[0], x.hi[0], 0));
        return (w.d * x.dlo) * (float)(w.sc[0] * slo + w.sc[1] * shi);
    }
};

/* IQ4_XS: d (ls_j - 32) kvalues[q]; sub-block j's 16 bytes of qs in IQ4_NL's nibble order.
 * Slice p = 2j + u takes bytes 8u..8u+7 of them: elements 32j + 8u.. and 32j + 16 + 8u..
 * (8-byte aligned blocks: d, scales_h and scales_l are one load). */
template <> struct Mv<INFER_TYPE_IQ4_XS> {
    enum { KIND = 2, QK = 256, SPB = 16, ALIGN = 8 };
    typedef MvX X;
    struct W { int lo[2], hi[2], sc; float d; };
    static __device__ __forceinline__ void x(const int8_t *q, const float2 *ds, int b, int p, X &o) {
        mvx_load<0, 0>(q, ds, 256 * b + 32 * (p >> 1) + 8 * (p & 1), 256 * b + 32 * (p >> 1) + 16 + 8 * (p & 1), o);
    }
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_iq4_xs *k = (const infer_block_iq4_xs *)row + b;
        const int j = p >> 1;
        const int2 h = ldv<int2>(k), q = ldv<int2>(k->qs + 16 * j + 8 * (p & 1));
        const uint32_t t[4] = { INFER_CUDA_SLUTW(-127, -104, -83, -65), INFER_CUDA_SLUTW(-49, -35, -22, -10), INFER_CUDA_SLUTW(1, 13, 25, 38),
                                INFER_CUDA_SLUTW(53, 69, 89, 113) };
        nib2_lut((uint32_t)q.x, (uint32_t)q.y, t, o.lo, o.hi);
        o.d = f16((infer_half)(h.x & 0xFFFF));
        o.sc = (int)(((uint32_t)h.y >> (4 * j) & 15) | ((uint32_t)h.x >> (16 + 2 * j) & 3) << 4) - 32;
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) { return (w.d * x.dlo) * (float)(w.sc * dp16(w.lo, w.hi, x)); }
};
/* Q2_K, Q3_K and TQ2_0 share the 2-bit layout: element 128h + 32k + m is bits 2k, 2k+1 of
 * byte 32h + m of qs. Slice p = 8h + 2u + a takes qs bytes 32h + 8u.. at k = 2a (elements
 * 128h + 64a + 8u..) and k = 2a + 1 (32 further): each run of 8 in one 16-sub-block. */
struct Mv2b {
    enum { KIND = 2, QK = 256, SPB = 16 };
    typedef MvX X;
    static __device__ __forceinline__ int e0(int b, int p) { return 256 * b + 128 * (p >> 3) + 64 * (p & 1) + 8 * (p >> 1 & 3); }
    static __device__ __forceinline__ void x(const int8_t *q, const float2 *ds, int b, int p, X &o) { mvx_load<0, 1>(q, ds, e0(b, p), e0(b, p) + 32, o); }
    /* the two runs' codes from the 8 bytes at qs: low bits of k = 2a, then of 2a + 1 */
    static __device__ __forceinline__ void crumbs(uint32_t w0, uint32_t w1, int a, int *lo, int *hi) {
        lo[0] = (int)(w0 >> (4 * a) & 0x03030303u); lo[1] = (int)(w1 >> (4 * a) & 0x03030303u);
        hi[0] = (int)(w0 >> (4 * a + 2) & 0x03030303u); hi[1] = (int)(w1 >> (4 * a + 2) & 0x03030303u);
    }
};
/* 4 codes 0..7 less 4 as signed bytes (0x7C + c never carries out of a byte) */
__device__ __forceinline__ int minus4(uint32_t c) { return (int)((c + 0x7C7C7C7Cu) ^ 0x80808080u); }
__device__ __forceinline__ int minus1(uint32_t c) { return (int)((c + 0x7F7F7F7Fu) ^ 0x80808080u); }
/* Q2_K: d sc_j q - dmin m_j with 4-bit sc, m per 16: d_x (d sum sc_j S_j - dmin sum m_j
 * sum_j(x)); the runs' activation sums by dp4a against ones (the 32-block sums span two
 * sub-blocks) */
template <> struct Mv<INFER_TYPE_Q2_K> : Mv2b {
    enum { ALIGN = 4 };
    struct W { int lo[2], hi[2], sc[2], m[2]; float d, dmin; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q2_k *k = (const infer_block_q2_k *)row + b;
        const uint8_t *q = k->qs + 32 * (p >> 3) + 8 * (p >> 1 & 3);
        crumbs(ld4(q), ld4(q + 4), p & 1, o.lo, o.hi);
        const int j = (e0(0, p)) >> 4, s0 = k->scales[j], s1 = k->scales[j + 2];
        o.sc[0] = s0 & 15; o.m[0] = s0 >> 4; o.sc[1] = s1 & 15; o.m[1] = s1 >> 4;
        const uint32_t dd = ld4((const uint8_t *)&k->d);
        o.d = f16((infer_half)(dd & 0xFFFF)); o.dmin = f16((infer_half)(dd >> 16));
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) {
        const int slo = __dp4a(w.lo[1], x.lo[1], __dp4a(w.lo[0], x.lo[0], 0)), shi = __dp4a(w.hi[1], x.hi[1], __dp4a(w.hi[0], x.hi[0], 0));
        const int xlo = __dp4a(0x01010101, x.lo[1], __dp4a(0x01010101, x.lo[0], 0)), xhi = __dp4a(0x01010101, x.hi[1], __dp4a(0x01010101, x.hi[0], 0));
        return x.dlo * (w.d * (float)(w.sc[0] * slo + w.sc[1] * shi) - w.dmin * (float)(w.m[0] * xlo + w.m[1] * xhi));
    }
};
/* Q3_K: d sc_j (q - 4 + 4 h): the code q | h << 2, less 4; h is bit 4h' + k of hmask[m]
 * (h' the half) */
template <> struct Mv<INFER_TYPE_Q3_K> : Mv2b {
    enum { ALIGN = 2 };
    struct W { int lo[2], hi[2], sc[2]; float d; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_q3_k *k = (const infer_block_q3_k *)row + b;
        const int h = p >> 3, a = p & 1, u = p >> 1 & 3;
        const uint8_t *q = k->qs + 32 * h + 8 * u;
        crumbs(ld2(q), ld2(q + 4), a, o.lo, o.hi);
        const uint32_t m0 = ld2(k->hmask + 8 * u) >> (4 * h + 2 * a), m1 = ld2(k->hmask + 8 * u + 4) >> (4 * h + 2 * a);
        o.lo[0] = minus4((uint32_t)o.lo[0] | (m0 & 0x01010101u) << 2); o.lo[1] = minus4((uint32_t)o.lo[1] | (m1 & 0x01010101u) << 2);
        o.hi[0] = minus4((uint32_t)o.hi[0] | (m0 >> 1 & 0x01010101u) << 2); o.hi[1] = minus4((uint32_t)o.hi[1] | (m1 >> 1 & 0x01010101u) << 2);
        const int j = e0(0, p) >> 4;
        o.sc[0] = q3k_scale(k->scales, j); o.sc[1] = q3k_scale(k->scales, j + 2);
        o.d = f16(k->d);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) {
        const int slo = __dp4a(w.lo[1], x.lo[1], __dp4a(w.lo[0], x.lo[0], 0)), shi = __dp4a(w.hi[1], x.hi[1], __dp4a(w.hi[0], x.hi[0], 0));
        return (w.d * x.dlo) * (float)(w.sc[0] * slo + w.sc[1] * shi);
    }
};
/* TQ2_0: (c - 1) d */
template <> struct Mv<INFER_TYPE_TQ2_0> : Mv2b {
    enum { ALIGN = 2 };
    struct W { int lo[2], hi[2]; float d; };
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_tq2_0 *k = (const infer_block_tq2_0 *)row + b;
        const uint8_t *q = k->qs + 32 * (p >> 3) + 8 * (p >> 1 & 3);
        crumbs(ld2(q), ld2(q + 4), p & 1, o.lo, o.hi);
        for (int i = 0; i < 2; i++) { o.lo[i] = minus1((uint32_t)o.lo[i]); o.hi[i] = minus1((uint32_t)o.hi[i]); }
        o.d = f16(k->d);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) { return (float)dp16(w.lo, w.hi, x) * (w.d * x.dlo); }
};
/* NVFP4: 64 codes, a UE4M3 scale per 16; slice p is sub-block p (8 bytes: elements 16p..
 * low nibbles, 16p + 8.. high), against Q8_0 activations */
template <> struct Mv<INFER_TYPE_NVFP4> {
    enum { KIND = 1, QK = 64, SPB = 4, ALIGN = 4 };
    typedef MvX X;
    struct W { int lo[2], hi[2]; float d; };
    static __device__ __forceinline__ void x(const int8_t *q, const float2 *ds, int b, int p, X &o) { mvx_load<1, 0>(q, ds, 64 * b + 16 * p, 64 * b + 16 * p + 8, o); }
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int p, W &o) {
        const infer_block_nvfp4 *k = (const infer_block_nvfp4 *)row + b;
        const uint32_t t[4] = { INFER_CUDA_SLUTW(0, 1, 2, 3), INFER_CUDA_SLUTW(4, 6, 8, 12), INFER_CUDA_SLUTW(0, -1, -2, -3), INFER_CUDA_SLUTW(-4, -6, -8, -12) };
        const uint32_t w0 = ld4(k->qs + 8 * p), w1 = ld4(k->qs + 8 * p + 4);
        o.lo[0] = (int)lut16(w0 & 0x0F0F0F0Fu, t); o.lo[1] = (int)lut16(w1 & 0x0F0F0F0Fu, t);
        o.hi[0] = (int)lut16(w0 >> 4 & 0x0F0F0F0Fu, t); o.hi[1] = (int)lut16(w1 >> 4 & 0x0F0F0F0Fu, t);
        o.d = ue4m3_half(k->d[p]);
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) { return (float)dp16(w.lo, w.hi, x) * (w.d * x.dlo); }
};

/* the float types: slices of 8 weights in one 16-byte load (two for F32) against 8 f32
 * activations, f32 FMAs (needs K a multiple of 8 and 16-byte aligned rows of W and x) */
struct MvF {
    enum { KIND = 3, QK = 8, SPB = 1, ALIGN = 16 };
    struct X { float v[8]; };
    struct W { float v[8]; };
    static __device__ __forceinline__ void x(const float *f, const float2 *, int b, int, X &o) {
        const float4 a = ldv<float4>(f + 8 * b), c = ldv<float4>(f + 8 * b + 4);
        o.v[0] = a.x; o.v[1] = a.y; o.v[2] = a.z; o.v[3] = a.w; o.v[4] = c.x; o.v[5] = c.y; o.v[6] = c.z; o.v[7] = c.w;
    }
    static __device__ __forceinline__ float dot(const W &w, const X &x, int) {
        float s = w.v[0] * x.v[0];
INFER_CUDA_UNROLL
        for (int i = 1; i < 8; i++) s += w.v[i] * x.v[i];
        return s;
    }
};
template <> struct Mv<INFER_TYPE_F32> : MvF {
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int, W &o) {
        const float4 a = ldv<float4>(row + 32 * b), c = ldv<float4>(row + 32 * b + 16);
        o.v[0] = a.x; o.v[1] = a.y; o.v[2] = a.z; o.v[3] = a.w; o.v[4] = c.x; o.v[5] = c.y; o.v[6] = c.z; o.v[7] = c.w;
    }
};
template <int BF> __device__ __forceinline__ void mvf_w16(const uint8_t *row, int b, MvF::W &o) {
    const uint4 u = ldv<uint4>(row + 16 * b);
    const uint32_t w[4] = { u.x, u.y, u.z, u.w };
INFER_CUDA_UNROLL
    for (int i = 0; i < 4; i++) {
        const float2 f = BF ? bf16x2(w[i]) : f16x2(w[i]);
        o.v[2 * i] = f.x; o.v[2 * i + 1] = f.y;
    }
}
template <> struct Mv<INFER_TYPE_F16> : MvF {
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int, W &o) { mvf_w16<0>(row, b, o); }
};
template <> struct Mv<INFER_TYPE_BF16> : MvF {
    static __device__ __forceinline__ void w(const uint8_t *row, int b, int, W &o) { mvf_w16<1>(row, b, o); }
};

/* One quantization block of activations, by one warp, as the CPU's quantizers do
 * (infer__quant_q8_0, infer__quant_q8_k): codes int8 and per 32-block (d, sum of the codes).
 * NaN and Inf follow the CPU: a NaN makes the block's d NaN (Q8_0) or the whole block zero
 * with d NaN (Q8_K), an Inf makes d infinite, and a code whose value is not a number in range
 * is 0. Every kernel that writes the fast matvec's int8 activations (k_quant_x, the RMSNorm
 * that feeds a matvec, the GLU that feeds the down projection) goes through these two, so
 * their bytes are the same for the same floats.
 * Q8_0: lane l holds value l of the 32-block; q: the block's 32 codes, ds its pair. */
__device__ __forceinline__ void quant_q8_0_warp(float v, int8_t *q, float2 *ds) {
    const int lane = threadIdx.x & 31;
    const int nan = __ballot_sync(0xffffffffu, v != v) != 0;
    const float amax = nan ? NAN : warp_max(fabsf(v));
    const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
    const float rq = roundf(v * id);                 /* ties away from zero, as roundf on the CPU */
    const int c = rq >= -128.0f && rq <= 127.0f ? (int)rq : 0;
    const int s = warp_sum(c);
    q[lane] = (int8_t)c;
    if (lane == 0) { float2 o = { __half2float(__float2half_rn(d)), __int_as_float(s) }; *ds = o; }
}
/* Q8_K: lane l holds values 8 l .. 8 l + 7 of the 256-block; q: its 256 codes, ds its 8
 * pairs (each repeats d) */
__device__ __forceinline__ void quant_q8_k_warp(const float *v, int8_t *q, float2 *ds) {
    const int lane = threadIdx.x & 31;
    float amax = 0.0f, mx = 0.0f;
    int nan = 0;
INFER_CUDA_UNROLL
    for (int i = 0; i < 8; i++) {
        const float a = fabsf(v[i]);
        if (a > amax) { amax = a; mx = v[i]; }            /* the first of the largest magnitude */
        nan |= a != a;
    }
    int from = lane;                                     /* the lower lane wins a tie: the first index */
    for (int o = 16; o > 0; o >>= 1) {
        const float a = __shfl_xor_sync(0xffffffffu, amax, o), m = __shfl_xor_sync(0xffffffffu, mx, o);
        const int f = __shfl_xor_sync(0xffffffffu, from, o);
        if (a > amax || (a == amax && f < from)) { amax = a; mx = m; from = f; }
    }
    nan = __ballot_sync(0xffffffffu, nan) != 0;
    const int zero = amax == 0.0f || nan;
    const float iscale = zero ? 0.0f : -127.0f / mx;
    int c[8], s = 0;
INFER_CUDA_UNROLL
    for (int i = 0; i < 8; i++) {
        const float pv = iscale * v[i];
        const int k = zero || pv != pv ? 0 : __float2int_rn(pv);
        c[i] = k < 127 ? k : 127;
        s += c[i];
    }
    int2 w;
    w.x = (c[0] & 255) | (c[1] & 255) << 8 | (c[2] & 255) << 16 | (int)((uint32_t)c[3] << 24);
    w.y = (c[4] & 255) | (c[5] & 255) << 8 | (c[6] & 255) << 16 | (int)((uint32_t)c[7] << 24);
    stv<int2>(q + 8 * lane, w);
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    const float d = nan ? NAN : zero ? 0.0f : 1 / iscale;
    if ((lane & 3) == 0) { float2 o = { d, __int_as_float(s) }; ds[lane / 4] = o; }
}

/* k_quant_x: the activation rows quantized into codes [rows, K] and xds [rows, K / 32]; a
 * warp per block of 32 (KIND 1) or 256 (KIND 2) values, blockIdx.y the row */
template <int KIND>
__global__ void __launch_bounds__(128) k_quant_x(const float *x, int K, int8_t *codes, float2 *xds) {
    INFER_CUDA_PDL_ENTRY;
    const int lane = threadIdx.x & 31, blk = blockIdx.x * 4 + (threadIdx.x >> 5), r = blockIdx.y;
    const float *xr = x + (size_t)r * K;
    int8_t *qr = codes + (size_t)r * K;
    float2 *dr = xds + (size_t)r * (K / 32);
    if (KIND == 1) {
        if (32 * blk >= K) return;                       /* the whole warp: no block barrier follows */
        quant_q8_0_warp(xr[32 * blk + lane], qr + 32 * blk, dr + blk);
    } else {
        if (256 * blk >= K) return;
        float v[8];
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) v[i] = xr[256 * blk + 8 * lane + i];
        quant_q8_k_warp(v, qr + 256 * blk, dr + 8 * blk);
    }
}

/* The V partial sums of a lane summed over the warp, transposed: after the call lane l's
 * v[0] is the warp's sum of value l >> (5 - log2 V), complete in the lanes with
 * l mod (32 / V) = 0. Each step keeps half the values (the half the lane's bit picks) and
 * adds the partner's copy of that half: V/2 + V/4 + .. + 1 shuffles, then 5 - log2 V more
 * for the one value left. V a power of 2, at most 32. */
template <int V> __device__ __forceinline__ void warp_sum_t(float *v) {
    static_assert(V >= 1 && V <= 32 && (V & (V - 1)) == 0, "warp_sum_t: V a power of 2");
    constexpr int LV = V >= 32 ? 5 : V >= 16 ? 4 : V >= 8 ? 3 : V >= 4 ? 2 : V >= 2 ? 1 : 0;   /* log2 V */
    const int lane = threadIdx.x & 31;
    /* Step k keeps h = V / 2^(k+1) values and adds lane ^ o's, o = 16 / 2^k. The trip counts
     * are known at compile time and the halves are picked as values, not as `up ? v[i] :
     * v[i + h]` (an address): so v stays in registers, not in local memory. */
INFER_CUDA_UNROLL
    for (int k = 0; k < LV; k++) {
        const int h = V >> (k + 1), o = 16 >> k, up = (lane & o) != 0;
INFER_CUDA_UNROLL
        for (int i = 0; i < (V > 1 ? V / 2 : 1); i++) {
            if (i >= h) break;
            const float lo = v[i], hi = v[i + h];
            const float send = up ? lo : hi, keep = up ? hi : lo;
            v[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
        }
    }
INFER_CUDA_UNROLL
    for (int k = LV; k < 5; k++) v[0] += __shfl_xor_sync(0xffffffffu, v[0], 16 >> k);
}

/* 1 / sqrt(mean(xr^2) + eps) of a row as a block of vt threads computes it -- each thread
 * summing every vt-th square in double, then the warps' sums (block_sum's order) -- by a
 * block of any count of whole warps: each thread stands in for the virtual threads tid + j
 * blockDim.x below vt (j < JM), keeps their sums side by side (their loads in flight
 * together, 8 steps unrolled), and their warps' sums meet in the same slots. rms_scale (the
 * norms' own blocks, vt = blockDim.x) and k_mvq's NM (a matvec's block standing in for
 * k_rmsnorm's) both call it: the same additions in the same order, the same bits. */
template <int JM>
__device__ __forceinline__ float rms_scale_v(const float *xr, int dim, float eps, int vt) {
    __shared__ double part[32];
    const int lane = threadIdx.x & 31, nt = blockDim.x, J = (vt + nt - 1) / nt;    /* J <= JM (the caller's bound) */
    double ss[JM];
INFER_CUDA_UNROLL
    for (int j = 0; j < JM; j++) ss[j] = 0;
INFER_CUDA_UNROLL8
    for (int base = 0; base < dim; base += vt)
INFER_CUDA_UNROLL
        for (int j = 0; j < JM; j++) {
            const int v = threadIdx.x + j * nt;
            if (j < J && v < vt && base + v < dim) ss[j] += (double)xr[base + v] * xr[base + v];
        }
    __syncthreads();                      /* part[] may still be read from a previous call */
INFER_CUDA_UNROLL
    for (int j = 0; j < JM; j++) {
        const int v = threadIdx.x + j * nt;
        if (j >= J || v >= vt) continue;  /* (whole warps: nt and vt are multiples of 32) */
        const double t = warp_sum(ss[j]);
        if (lane == 0) part[v >> 5] = t;
    }
    __syncthreads();
    double t = lane < vt / 32 ? part[lane] : 0.0;
    t = warp_sum(t);
    return (float)(1.0 / sqrt(t / dim + eps));
}

/* The body of the fast matvec's blocks: the CC weight rows wr[c] (those with bit c of
 * `cols`) dotted with activation rows 0 .. nr of x0 (codes, xd0 their scales; or f32 x);
 * the block's total of (c, r) comes back in tot[c R + r] for every thread. The block has 32,
 * 64, 96 or 128 threads (infer_cuda_mvq_threads). U: the slices a thread loads at once (1
 * or 2). A decode matvec is bound by the weight bytes each thread has in flight: with one
 * slice of two columns at a time, a thread waits a whole memory latency for 32 bytes (F16)
 * or 20 (Q4_0) every step. U = 2 loads the thread's next two slices together, then dots
 * them in the same order as U = 1 -- the same sums, the same bits. */
template <int T, int R, int CC, int U = 1, int NM = 0>
__device__ __forceinline__ void mvq_block(const uint8_t *const *wr, unsigned cols, const void *x0, const float2 *xd0, int K, int nr, float *tot,
                                          const infer_cuda_mvn *nm = NULL, int writer = 0) {
    typedef Mv<T> M;
    constexpr int V = CC * R;
    static_assert(U == 1 || U == 2, "mvq_block: one or two slices at once");
    static_assert(!NM || M::KIND == 3, "mvq_block: the norm only before a float matvec");
    __shared__ float nsc[NM ? R : 1];
    typedef typename std::conditional<M::KIND == 3, float, int8_t>::type XT;
    __shared__ float part[INFER_CUDA_MVQ_THREADS / 32][V];
    const int tid = threadIdx.x, lane = tid & 31, nt = blockDim.x;
    float acc[V];
INFER_CUDA_UNROLL
    for (int i = 0; i < V; i++) acc[i] = 0.0f;
    const int S = K / M::QK * M::SPB;                      /* slices in a row */
    typename M::W w[U][CC];
    /* The weights are no kernel's output: the first slices' are loaded before waiting for the
     * kernel before (programmatic dependent launch, INFER_CUDA_PDL_ENTRY), so their memory
     * latency overlaps that kernel's end; the activations are read after the wait. */
INFER_CUDA_UNROLL
    for (int u = 0; u < U; u++) {
        const int s = tid + u * nt;
        if (s < S) {
INFER_CUDA_UNROLL
            for (int c = 0; c < CC; c++) if (cols >> c & 1) M::w(wr[c], s / M::SPB, s % M::SPB, w[u][c]);
        }
    }
    INFER_CUDA_PDL_WAIT();
    if constexpr (NM != 0) {                               /* the rows' RMS scales, k_rmsnorm's bits */
INFER_CUDA_UNROLL
        for (int r = 0; r < R; r++) {
            if (r >= nr) break;
            const float sc = rms_scale_v<8>((const float *)x0 + (size_t)r * K, K, nm->eps, nm->vt);   /* (8: 32 threads for 256) */
            if (tid == 0) nsc[r] = sc;
        }
        __syncthreads();
    }
    for (int s0 = tid; s0 < S; s0 += U * nt) {
        if (s0 != tid) {
INFER_CUDA_UNROLL
            for (int u = 0; u < U; u++) {
                const int s = s0 + u * nt;
                if (s >= S) break;
INFER_CUDA_UNROLL
                for (int c = 0; c < CC; c++) if (cols >> c & 1) M::w(wr[c], s / M::SPB, s % M::SPB, w[u][c]);
            }
        }
INFER_CUDA_UNROLL
        for (int u = 0; u < U; u++) {
            const int s = s0 + u * nt, b = s / M::SPB, p = s % M::SPB;
            if (s >= S) break;
            float gv[NM ? 8 : 1];
            if constexpr (NM != 0) {
                const float4 g0 = ldv<float4>(nm->g + 8 * b), g1 = ldv<float4>(nm->g + 8 * b + 4);
                gv[0] = g0.x; gv[1] = g0.y; gv[2] = g0.z; gv[3] = g0.w; gv[4] = g1.x; gv[5] = g1.y; gv[6] = g1.z; gv[7] = g1.w;
            }
INFER_CUDA_UNROLL
            for (int r = 0; r < R; r++) {
                if (r >= nr) break;
                typename M::X xv;
                M::x((const XT *)x0 + (size_t)r * K, xd0 ? xd0 + (size_t)r * (K / 32) : NULL, b, p, xv);
                if constexpr (NM != 0) {                   /* h = x scale g, as k_rmsnorm rounds it */
INFER_CUDA_UNROLL
                    for (int i = 0; i < 8; i++) xv.v[i] = xv.v[i] * nsc[r] * gv[i];
                    if (writer) {
                        float *hr = nm->h + (size_t)r * K + 8 * b;
                        const float4 h0 = { xv.v[0], xv.v[1], xv.v[2], xv.v[3] }, h1 = { xv.v[4], xv.v[5], xv.v[6], xv.v[7] };
                        stv<float4>(hr, h0);
                        stv<float4>(hr + 4, h1);
                    }
                }
INFER_CUDA_UNROLL
                for (int c = 0; c < CC; c++) if (cols >> c & 1) acc[c * R + r] += M::dot(w[u][c], xv, p);
            }
        }
    }
    warp_sum_t<V>(acc);
    if ((lane & (32 / V - 1)) == 0) part[tid >> 5][lane / (32 / V)] = acc[0];
    __syncthreads();
    for (int v = tid; v < V; v += nt) {
        float t = part[0][v];
        for (int i = 1; i < nt / 32; i++) t += part[i][v];
        tot[v] = t;
    }
    __syncthreads();
}

/* The GLU's output quantized for the down projection inside the GLU's own launch (k_mvq,
 * G = 1, qo.kind set). A quantization block of qo.size columns needs all its columns, which
 * qo.size / MVQ_COLS blocks compute; so each block, once its columns are stored, counts itself
 * done in qo.count[its row block by, its group], and the one that finds itself last quantizes
 * the group -- every activation row of its row block -- with k_quant_x's warp functions (the
 * same bytes) and sets the count back to 0 for the next launch (a graph replays the same
 * counters). The stores are fenced before the count, the last block fences again before
 * reading the others' floats, and reads them through L2 (__ldcg), where the other blocks'
 * stores are. */
__device__ __forceinline__ void mvq_quant_out(const infer_cuda_qout &qo, const float *out, int N, int n0, int nr, int r0, int by, int cpb = INFER_CUDA_MVQ_COLS) {
    __shared__ int last;
    const int gs = qo.size, g = n0 / gs, cols = N - g * gs < gs ? N - g * gs : gs;
    const int blocks = (cols + cpb - 1) / cpb;            /* cpb: the columns a block computes */
    int *count = qo.count + (size_t)by * ((N + gs - 1) / gs) + g;     /* the group's counter for this block's rows */
    __threadfence();                          /* this thread's stores, seen before the count */
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(count, 1) == blocks - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    for (int r = warp; r < nr; r += nw) {
        const float *xr = out + (size_t)r * N + (size_t)g * gs;
        int8_t *q = qo.codes + (size_t)(r0 + r) * N + (size_t)g * gs;
        float2 *ds = qo.ds + (size_t)(r0 + r) * (N / 32) + (size_t)g * (gs / 32);
        if (gs == 32) {
            quant_q8_0_warp(__ldcg(xr + lane), q, ds);
        } else {
            float v[8];
INFER_CUDA_UNROLL
            for (int i = 0; i < 8; i++) v[i] = __ldcg(xr + 8 * lane + i);
            quant_q8_k_warp(v, q, ds);
        }
    }
    if (threadIdx.x == 0) *count = 0;
}

/* Which of mv's weights the block of column group bx (C columns a group, each weight's groups
 * one after another) computes: its weight, output and scale, its width N, the group's first
 * column n0 and the weight's index ws. G (the GLU): weight 0's columns. Constant indices
 * only, so mv stays in the kernel's parameter space. */
struct MvCols { const uint8_t *W; float *out; float scale; int N, n0, ws; };
__device__ __forceinline__ MvCols mv_cols(const infer_cuda_mv &mv, int bx, int C, int G) {
    MvCols m = { mv.W[0], mv.out[0], mv.scale[0], mv.start[1], bx * C, 0 };
    int b0 = 0;
    if (!G)
INFER_CUDA_UNROLL
        for (int i = 0; i < INFER_CUDA_MV_MAXW; i++) {
            if (i >= mv.n) break;
            const int Ni = mv.start[i + 1] - mv.start[i];
            if (bx >= b0) { m.W = mv.W[i]; m.out = mv.out[i]; m.scale = mv.scale[i]; m.N = Ni; m.n0 = (bx - b0) * C; m.ws = i; }
            b0 += (Ni + C - 1) / C;
        }
    return m;
}

/* k_mvq's stores. MvPlain: out = v, or out += v (mv.add). The other kind, MvRopeStore
 * (>>cuda_rope), is rope_kv_store done by the q/k/v matvec itself: pre() runs before the dot
 * products (rope's cos and sin of the thread's column), put() turns q and k by their pairs
 * -- a block's two columns are one pair -- and writes k and v into the cache as well. */
struct MvPlain {
    enum { plain = 1 };
    int unused;               /* (a recorded launch's key holds the argument's bytes: none left undefined) */
    struct Pre { };
    __device__ __forceinline__ Pre pre(int, int, int) const { return Pre(); }
    __device__ __forceinline__ void put(const Pre &, float *, float, float, int, int, int) const {}
};

/* The fast matvec. Block (bx, by) computes columns n0 .. n0 + MVQ_COLS of one weight of mv
 * (the weights' columns in blocks one after another, ceil(N_j / MVQ_COLS) each) for activation
 * rows by R .. by R + R; blockIdx.x = bx ry + by over the ry row blocks, so the blocks of one
 * column pair run side by side and all but the first find its weights in L2. xa is the codes
 * (xds their scales) or, for the float types, x itself. G: matmul_glu's mode, the same columns
 * of W[0] (gate) and W[1] (up), out[0] = act(gate) * up. U: mvq_block's slices at once. NM
 * (float types): xa is the norm's input nm.x, and the block normalises it as it reads it
 * (mvq_block), the blocks of the first column pair storing the normalised rows in nm.h. E
 * (not with G): how the values are stored, MvPlain or MvRopeStore (rmsnorm_qkv_store). */
template <int T, int R, int G, int U = 1, int NM = 0, class E = MvPlain>
__global__ void __launch_bounds__(INFER_CUDA_MVQ_THREADS) k_mvq(infer_cuda_mv mv, size_t row_bytes, const void *xa, const float2 *xds, int K, int rows,
                                                              infer_cuda_qout qo, infer_cuda_mvn nm, E e) {
    INFER_CUDA_PDL_TRIGGER();                        /* the wait is in mvq_block, after the first weights */
    constexpr int C = INFER_CUDA_MVQ_COLS, CC = G ? 2 * C : C;
    typedef typename std::conditional<Mv<T>::KIND == 3, float, int8_t>::type XT;
    __shared__ float tot[CC * R];
    const int ry = (rows + R - 1) / R, bx = (int)blockIdx.x / ry, by = (int)blockIdx.x - bx * ry;
    const int tid = threadIdx.x, r0 = by * R;
    const int nr = rows - r0 < R ? rows - r0 : R;
    const MvCols mc = mv_cols(mv, bx, C, G);
    const uint8_t *W = mc.W;
    float *out = mc.out, scale = mc.scale;
    const int N = mc.N, n0 = mc.n0, ws = mc.ws;
    typename E::Pre pre = {};                /* (E's work before the dot products: its loads' latency hidden behind theirs) */
    if (!E::plain && tid < C * R && n0 + tid / R < N && tid % R < nr) pre = e.pre(ws, n0 + tid / R, r0 + tid % R);
    const uint8_t *wr[CC];
    unsigned cols = 0;
INFER_CUDA_UNROLL
    for (int c = 0; c < CC; c++) {
        const int n = n0 + c % C;
        wr[c] = (G && c >= C ? mv.W[1] : W) + (size_t)(n < N ? n : 0) * row_bytes;
        cols |= (unsigned)(n < N) << c;
    }
    infer_cuda_mvn nr0 = nm;
    if (NM) nr0.h += (size_t)r0 * K;
    mvq_block<T, R, CC, U, NM>(wr, cols, (const XT *)xa + (size_t)r0 * K, xds ? xds + (size_t)r0 * (K / 32) : NULL, K, nr, tot, &nr0, NM && bx == 0);
    const int c = tid / R, r = tid % R, n = n0 + c;
    if (G && Mv<T>::KIND != 3 && qo.kind) {          /* (not in the float types' GLU) every thread goes on to the barriers */
        if (tid < C * R && n < N && r < nr) out[(size_t)(r0 + r) * N + n] = glu_act(tot[tid] * scale, tot[C * R + tid] * mv.scale[1], mv.act, mv.limit);
        mvq_quant_out(qo, out + (size_t)r0 * N, N, n0, nr, r0, by);
        return;
    }
    if (tid >= C * R || n >= N || r >= nr) return;
    const float v = tot[tid] * scale;
    float *o = &out[(size_t)(r0 + r) * N + n];
    if (G) *o = glu_act(v, tot[C * R + tid] * mv.scale[1], mv.act, mv.limit);
    else if (!E::plain) e.put(pre, o, v, tot[(c ^ 1) * R + r] * scale, ws, n, r0 + r);   /* (the pair's other column: this block's other) */
    else *o = mv.add ? *o + v : v;
}

/* matmul_id's decode in the fast mode: out[o, :] = W_e x[o or o / n_used] with e = ids[o],
 * o = blockIdx.y, as k_mvq's blocks of MVQ_COLS columns; an id out of range gives zeros */
template <int T>
__global__ void __launch_bounds__(INFER_CUDA_MVQ_THREADS) k_mvq_id(float *out, const uint8_t *W, size_t row_bytes, const void *xa, const float2 *xds,
                                                                 const int32_t *ids, int K, int N, int E, int n_used, int x_per_slot, float scale) {
    INFER_CUDA_PDL_ENTRY;
    constexpr int C = INFER_CUDA_MVQ_COLS;
    typedef typename std::conditional<Mv<T>::KIND == 3, float, int8_t>::type XT;
    __shared__ float tot[C];
    const int o = blockIdx.y, n0 = blockIdx.x * C, e = ids[o], xr = x_per_slot ? o : o / n_used;
    const uint8_t *wr[C];
    unsigned cols = 0;
INFER_CUDA_UNROLL
    for (int c = 0; c < C; c++) {
        const int n = n0 + c, ok = n < N && e >= 0 && e < E;
        wr[c] = W + ((size_t)(ok ? e : 0) * N + (ok ? n : 0)) * row_bytes;
        cols |= (unsigned)ok << c;
    }
    mvq_block<T, 1, C>(wr, cols, (const XT *)xa + (size_t)xr * K, xds ? xds + (size_t)xr * (K / 32) : NULL, K, 1, tot);
    if ((int)threadIdx.x < C && n0 + (int)threadIdx.x < N) out[(size_t)o * N + n0 + threadIdx.x] = tot[threadIdx.x] * scale;
}
/* prompt-sized matmul: a 256-thread block computes a 64x64 tile of out, stepping through K
 * 32 columns at a time. Threads 0..63 decode one weight row's chunk each into Ws; all
 * threads load the activation tile Xs; then thread (ty, tx) accumulates the 4x4 outputs at
 * rows ty + 16i, columns tx + 16j (strided so a warp's shared-memory reads fall in
 * distinct banks, and its stores to out are 16 consecutive floats). Which activation row
 * tile row i reads, and which output row it writes, is the Rows policy's business: the
 * rows in order for a matmul, the rows routed to one expert for matmul_id. */
#define INFER_CUDA_TILE 64
struct RowsPlain {            /* tile rows r0 .. r0 + n of x and of out */
    int r0, n;
    __device__ int xrow(int i) const { return r0 + i; }
    __device__ int orow(int i) const { return r0 + i; }
};
struct RowsRouted {           /* tile rows = (token, slot) rows order[t0 ..] sent to one expert */
    const int32_t *order;
    int t0, n, n_used, x_per_slot;
    __device__ int xrow(int i) const { const int o = order[t0 + i]; return x_per_slot ? o : o / n_used; }
    __device__ int orow(int i) const { return order[t0 + i]; }
};

/* One 32-column step of a tile, shared by both tile kernels: after a barrier (the previous
 * step is done with Ws and Xs, and xr is written), threads 0..63 decode their weight row's
 * chunk c into Ws, all threads load the activation rows xr[] into Xs (zeros past K, and for
 * rows the tile does not have), and a second barrier makes both visible. S is the padded
 * row length of the two shared arrays. */
template <int T, int S>
__device__ void tile_stage(float (*Ws)[S], float (*Xs)[S], const int *xr, const uint8_t *W, size_t row_bytes, const float *x,
                           int K, int N, int n0, int c, int tid) {
    __syncthreads();
    if (tid < INFER_CUDA_TILE) {
        float w[32];
        if (n0 + tid < N) Dq<T>::chunk(W + (size_t)(n0 + tid) * row_bytes, c, K, w);
        else for (int i = 0; i < 32; i++) w[i] = 0.0f;
INFER_CUDA_UNROLL
        for (int i = 0; i < 32; i++) Ws[tid][i] = w[i];
    }
    for (int i = tid; i < INFER_CUDA_TILE * 32; i += 256) {
        const int rr = i / 32, kk = i % 32, k = 32 * c + kk;
        Xs[rr][kk] = xr[rr] >= 0 && k < K ? x[(size_t)xr[rr] * K + k] : 0.0f;
    }
    __syncthreads();
}

template <int T, class Rows>
__device__ void tile_matmul(float *out, const uint8_t *W, size_t row_bytes, const float *x, int K, int N, float scale, int n0, Rows rows, int add = 0) {
    __shared__ float Ws[INFER_CUDA_TILE][33], Xs[INFER_CUDA_TILE][33];   /* +1: no bank conflicts on columns */
    __shared__ int xr[INFER_CUDA_TILE];
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16, nch = (K + 31) / 32;
    if (tid < INFER_CUDA_TILE) xr[tid] = tid < rows.n ? rows.xrow(tid) : -1;
    float acc[4][4];
INFER_CUDA_UNROLL
    for (int i = 0; i < 4; i++)
INFER_CUDA_UNROLL
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    for (int c = 0; c < nch; c++) {
        tile_stage<T>(Ws, Xs, xr, W, row_bytes, x, K, N, n0, c, tid);
INFER_CUDA_UNROLL
        for (int kk = 0; kk < 32; kk++) {
            float a[4], b[4];
INFER_CUDA_UNROLL
            for (int i = 0; i < 4; i++) { a[i] = Xs[ty + 16 * i][kk]; b[i] = Ws[tx + 16 * i][kk]; }
INFER_CUDA_UNROLL
            for (int i = 0; i < 4; i++)
INFER_CUDA_UNROLL
                for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
        }
    }
INFER_CUDA_UNROLL
    for (int i = 0; i < 4; i++) {
        const int ri = ty + 16 * i;
        if (ri >= rows.n) continue;
        const int o = rows.orow(ri);
INFER_CUDA_UNROLL
        for (int j = 0; j < 4; j++) {
            const int n = n0 + tx + 16 * j;
            if (n < N) {
                const float v = acc[i][j] * scale;
                float *d = &out[(size_t)o * N + n];
                *d = add ? *d + v : v;
            }
        }
    }
}

/* the tensor-core tiles' stores: the tile, in Cs (rows 68 floats apart), times scale into
 * out (or added to it) -- after a barrier, as the warps wrote Cs */
template <class Rows> __device__ void tile_store(const float (*Cs)[68], float *out, int N, float scale, int n0, Rows rows, int add) {
    __syncthreads();
    for (int i = threadIdx.x; i < INFER_CUDA_TILE * INFER_CUDA_TILE; i += 256) {
        const int r = i / INFER_CUDA_TILE, n = n0 + i % INFER_CUDA_TILE;
        if (r < rows.n && n < N) {
            const float v = Cs[r][i % INFER_CUDA_TILE] * scale;
            float *d = &out[(size_t)rows.orow(r) * N + n];
            *d = add ? *d + v : v;
        }
    }
}

/* The fast mode's tiles on tensor cores: the same 64x64 tile and 32-column steps, the
 * products on TF32 MMAs (f32 range, 10-bit mantissa, f32 sums). One TF32 product would
 * round every activation to 11 significant bits (a relative error near 5e-4, which a deep
 * model turns into 1e-3..1e-2 on the logits), so each operand is split as v = hi + lo, both
 * TF32, and a b = a_hi b_hi + a_hi b_lo + a_lo b_hi (the lo*lo term is below f32's
 * precision): three MMAs per step and about f32 accuracy. Warp w owns rows
 * 16 (w / 2) .. + 16 and columns 32 (w % 2) .. + 32 of the tile as two 16x16 accumulators,
 * and steps k by 8: A = Xs (row-major), B[k][n] = W[n][k] = Ws read column-major. Rows of
 * 36 and 68 floats keep every fragment pointer 32-byte aligned, as load/store_matrix_sync
 * require. The precise mode keeps tile_matmul's exact f32 products. */
template <int T, class Rows>
__device__ void tile_matmul_tc(float *out, const uint8_t *W, size_t row_bytes, const float *x, int K, int N, float scale, int n0, Rows rows, int add = 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800          /* no TF32 MMA before Ampere */
    tile_matmul<T>(out, W, row_bytes, x, K, N, scale, n0, rows, add);
#else
    __shared__ __align__(32) float Ws[INFER_CUDA_TILE][36];
    __shared__ __align__(32) float Xs[INFER_CUDA_TILE][36];
    __shared__ __align__(32) float Cs[INFER_CUDA_TILE][68];
    __shared__ int xr[INFER_CUDA_TILE];
    const int tid = threadIdx.x, warp = tid / 32, wi = warp / 2, wj = (warp % 2) * 2, nch = (K + 31) / 32;
    if (tid < INFER_CUDA_TILE) xr[tid] = tid < rows.n ? rows.xrow(tid) : -1;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::fill_fragment(acc[1], 0.0f);
    for (int c = 0; c < nch; c++) {
        tile_stage<T>(Ws, Xs, xr, W, row_bytes, x, K, N, n0, c, tid);
INFER_CUDA_UNROLL
        for (int kk = 0; kk < 32; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a_hi, a_lo;
            wmma::load_matrix_sync(a_hi, &Xs[16 * wi][kk], 36);
            for (int i = 0; i < a_hi.num_elements; i++) {
                const float v = a_hi.x[i], hi = wmma::__float_to_tf32(v);
                a_hi.x[i] = hi;
                a_lo.x[i] = wmma::__float_to_tf32(v - hi);
            }
INFER_CUDA_UNROLL
            for (int j = 0; j < 2; j++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b_hi, b_lo;
                wmma::load_matrix_sync(b_hi, &Ws[16 * (wj + j)][kk], 36);
                for (int i = 0; i < b_hi.num_elements; i++) {
                    const float v = b_hi.x[i], hi = wmma::__float_to_tf32(v);
                    b_hi.x[i] = hi;
                    b_lo.x[i] = wmma::__float_to_tf32(v - hi);
                }
                wmma::mma_sync(acc[j], a_lo, b_hi, acc[j]);     /* small terms first */
                wmma::mma_sync(acc[j], a_hi, b_lo, acc[j]);
                wmma::mma_sync(acc[j], a_hi, b_hi, acc[j]);
            }
        }
    }
    for (int j = 0; j < 2; j++) wmma::store_matrix_sync(&Cs[16 * wi][16 * (wj + j)], acc[j], 68, wmma::mem_row_major);
    tile_store(Cs, out, N, scale, n0, rows, add);
#endif
}

/* cp.async (sm_80+): 16 or 4 bytes from global to shared memory that land later, without
 * passing through registers; the first src_bytes from src, zeros after (0: zeros, src not
 * read). commit closes this thread's copies so far into a group; wait<N> returns when all
 * but its N latest groups have landed (the thread's own copies: a barrier after the wait
 * makes every thread's visible). tools/cuda_emu.h defers the copies to the wait, as here. */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes) {
#ifdef INFER_CUDA_EMU
    emu_cp_async(dst, src, 16, src_bytes);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "r"(src_bytes) : "memory");
#else
    uint4 v = make_uint4(0, 0, 0, 0);       /* no cp.async: a plain copy (its tiles never run there) */
    if (src_bytes) v = *(const uint4 *)src;
    *(uint4 *)dst = v;
#endif
}
__device__ __forceinline__ void cp_async4(void *dst, const void *src, int src_bytes) {
#ifdef INFER_CUDA_EMU
    emu_cp_async(dst, src, 4, src_bytes);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "r"(src_bytes) : "memory");
#else
    *(uint32_t *)dst = src_bytes ? *(const uint32_t *)src : 0u;
#endif
}
__device__ __forceinline__ void cp_async_commit(void) {
#ifdef INFER_CUDA_EMU
    emu_cp_commit();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void cp_async_wait(void) {
#ifdef INFER_CUDA_EMU
    emu_cp_wait(N);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

/* The fast mode's tiles for F16 and BF16 weights: tile_matmul_tc's tile, steps and warps on
 * 16-bit tensor cores (wmma m16n16k16, f32 accumulators), one MMA per product where 3xTF32
 * takes three at half the rate. The weights are exact in their own format; the activations
 * are rounded to it (F16: a relative error of at most 2^-11 a value, and a value beyond
 * 65504 becomes infinite; BF16: 2^-8); products and sums are f32. Rows of 40 16-bit values
 * (80 bytes) keep every fragment pointer 32-byte aligned. */
template <int T> struct half_of { typedef __half type; static __device__ __forceinline__ __half from(float v) { return __float2half_rn(v); } };
template <> struct half_of<INFER_TYPE_BF16> {
    typedef __nv_bfloat16 type;
    static __device__ __forceinline__ __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
};
/* y = x rounded to the 16-bit format of weight type T, n values, 8 a thread: the library
 * GEMM's activations (the tiles round theirs the same way in shared memory) */
template <int T> __global__ void __launch_bounds__(256) k_round_half(typename half_of<T>::type *y, const float *x, int64_t n) {
    INFER_CUDA_PDL_ENTRY;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < n; i += (int64_t)gridDim.x * 256) y[i] = half_of<T>::from(x[i]);
}

/* W's rows dequantized to BF16, one after another K values apart (the library GEMM's
 * weights for a quantized type: infer_cuda_gemm_q); `chunks` = rows x K / 32, a thread a
 * 32-weight chunk through the precise path's decoders (Dq), each value rounded to the
 * nearest BF16 (even on a tie), four 16-byte stores. Threads side by side take the chunks
 * side by side, so both the blocks read and the rows written are contiguous. K: a multiple
 * of 32. */
template <int T> __global__ void __launch_bounds__(256) k_dequant_bf16(__nv_bfloat16 *out, const uint8_t *W, size_t row_bytes, int K, int64_t chunks) {
    INFER_CUDA_PDL_ENTRY;
    const int nch = K / 32;
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < chunks; i += (int64_t)gridDim.x * 256) {
        const int64_t n = i / nch;
        const int ch = (int)(i - n * nch);
        float w[32];
        Dq<T>::chunk(W + (size_t)n * row_bytes, ch, K, w);
        __nv_bfloat16 h[32];
INFER_CUDA_UNROLL
        for (int j = 0; j < 32; j++) h[j] = half_of<INFER_TYPE_BF16>::from(w[j]);
        uint4 v[4];
        memcpy(v, h, sizeof v);
        __nv_bfloat16 *o = out + (size_t)n * K + 32 * ch;
INFER_CUDA_UNROLL
        for (int j = 0; j < 4; j++) stv<uint4>(o + 8 * j, v[j]);
    }
}

template <int T, class Rows>
__device__ void tile_matmul_half(float *out, const uint8_t *W, size_t row_bytes, const float *x, int K, int N, float scale, int n0, Rows rows, int add = 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800          /* no BF16 MMA before Ampere */
    tile_matmul<T>(out, W, row_bytes, x, K, N, scale, n0, rows, add);
#else
    typedef half_of<T> Hc;
    typedef typename Hc::type H;
    __shared__ __align__(32) H Wh[INFER_CUDA_TILE][40], Xh[INFER_CUDA_TILE][40];
    __shared__ __align__(32) float Cs[INFER_CUDA_TILE][68];
    __shared__ int xr[INFER_CUDA_TILE];
    const int tid = threadIdx.x, warp = tid / 32, wi = warp / 2, wj = (warp % 2) * 2, nch = (K + 31) / 32;
    if (tid < INFER_CUDA_TILE) xr[tid] = tid < rows.n ? rows.xrow(tid) : -1;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::fill_fragment(acc[1], 0.0f);
    for (int c = 0; c < nch; c++) {
        __syncthreads();                  /* the previous step is done with Wh and Xh (and xr is written) */
        if (tid < INFER_CUDA_TILE) {
            float w[32];
            if (n0 + tid < N) Dq<T>::chunk(W + (size_t)(n0 + tid) * row_bytes, c, K, w);
            else for (int i = 0; i < 32; i++) w[i] = 0.0f;
INFER_CUDA_UNROLL
            for (int i = 0; i < 32; i++) Wh[tid][i] = Hc::from(w[i]);
        }
        for (int i = tid; i < INFER_CUDA_TILE * 32; i += 256) {
            const int rr = i / 32, kk = i % 32, k = 32 * c + kk;
            Xh[rr][kk] = Hc::from(xr[rr] >= 0 && k < K ? x[(size_t)xr[rr] * K + k] : 0.0f);
        }
        __syncthreads();
INFER_CUDA_UNROLL
        for (int kk = 0; kk < 32; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, H, wmma::row_major> a;
            wmma::load_matrix_sync(a, &Xh[16 * wi][kk], 40);
INFER_CUDA_UNROLL
            for (int j = 0; j < 2; j++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, H, wmma::col_major> b;
                wmma::load_matrix_sync(b, &Wh[16 * (wj + j)][kk], 40);
                wmma::mma_sync(acc[j], a, b, acc[j]);
            }
        }
    }
    for (int j = 0; j < 2; j++) wmma::store_matrix_sync(&Cs[16 * wi][16 * (wj + j)], acc[j], 68, wmma::mem_row_major);
    tile_store(Cs, out, N, scale, n0, rows, add);
#endif
}

/* tile_matmul_half with two shared-memory stages, where the weight rows and x allow 16-byte
 * copies (row_bytes, W and x 16-byte aligned: K a multiple of 8): K 64 values a step; the
 * next step's weights come by cp.async, exactly their bytes (the tile's 16-bit format is
 * the weight's own), and its activations are loaded into registers (16 a thread) before
 * this step's MMAs and rounded into the other stage after them. One barrier a step, after
 * the wait for the step's copies. The accumulators go out through the stages' memory. */
#define INFER_CUDA_HT_K 64            /* K values per step */
#define INFER_CUDA_HT_LD 72           /* 16-bit values between two rows of a stage (144 bytes: 16-byte rows, 32-byte fragments) */
template <int T, class Rows>
__device__ void tile_matmul_half_async(float *out, const uint8_t *W, size_t row_bytes, const float *x, int K, int N, float scale, int n0, Rows rows, int add) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800          /* no BF16 MMA, no cp.async before Ampere */
    tile_matmul<T>(out, W, row_bytes, x, K, N, scale, n0, rows, add);
#else
    typedef half_of<T> Hc;
    typedef typename Hc::type H;
    enum { KS = INFER_CUDA_HT_K, LD = INFER_CUDA_HT_LD, STAGE = 2 * INFER_CUDA_TILE * LD };      /* a stage: W rows, then x rows */
    static_assert(2 * STAGE * sizeof(H) >= INFER_CUDA_TILE * 68 * sizeof(float), "the output tile fits in the stages");
    __shared__ __align__(32) H st_mem[2 * STAGE];
    __shared__ int xr[INFER_CUDA_TILE];
    const int tid = threadIdx.x, warp = tid / 32, wi = warp / 2, wj = (warp % 2) * 2, steps = (K + KS - 1) / KS;
    if (tid < INFER_CUDA_TILE) xr[tid] = tid < rows.n ? rows.xrow(tid) : -1;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::fill_fragment(acc[1], 0.0f);
    float xv[16];                         /* the next step's activations: rows tid / 16 + 16 i, values 4 (tid % 16) .. + 4 */
    __syncthreads();                      /* xr */
    auto load_w = [&](int st, int k0) {   /* 64 rows x 8 pieces of 16 bytes, zeros past K and N */
        H *ws = st_mem + st * STAGE;
        for (int i = tid; i < INFER_CUDA_TILE * KS / 8; i += 256) {
            const int n = i / (KS / 8), k = k0 + 8 * (i % (KS / 8)), ok = n0 + n < N && k < K;
            const int bytes = ok ? (K - k >= 8 ? 16 : 2 * (K - k)) : 0;
            cp_async16(ws + n * LD + (k - k0), ok ? (const void *)(W + (size_t)(n0 + n) * row_bytes + 2 * (size_t)k) : (const void *)W, bytes);
        }
        cp_async_commit();
    };
    auto load_x = [&](int k0) {
        const int k = k0 + 4 * (tid % 16);
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) {
            const int r = tid / 16 + 16 * i;
            float4 v = { 0.0f, 0.0f, 0.0f, 0.0f };
            if (xr[r] >= 0 && k < K) v = *(const float4 *)(x + (size_t)xr[r] * K + k);
            xv[4 * i] = v.x; xv[4 * i + 1] = v.y; xv[4 * i + 2] = v.z; xv[4 * i + 3] = v.w;
        }
    };
    auto store_x = [&](int st) {
        H *xs = st_mem + st * STAGE + INFER_CUDA_TILE * LD;
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++)
INFER_CUDA_UNROLL
            for (int j = 0; j < 4; j++) xs[(tid / 16 + 16 * i) * LD + 4 * (tid % 16) + j] = Hc::from(xv[4 * i + j]);
    };
    load_w(0, 0);
    load_x(0);
    store_x(0);
    for (int s = 0; s < steps; s++) {
        const int st = s & 1, more = s + 1 < steps;
        cp_async_wait<0>();
        __syncthreads();                  /* stage st complete; every warp is done with stage st ^ 1 */
        if (more) {
            load_w(st ^ 1, KS * (s + 1));
            load_x(KS * (s + 1));
        }
        const H *ws = st_mem + st * STAGE, *xs = ws + INFER_CUDA_TILE * LD;
INFER_CUDA_UNROLL
        for (int kk = 0; kk < KS; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, H, wmma::row_major> a;
            wmma::load_matrix_sync(a, xs + 16 * wi * LD + kk, LD);
INFER_CUDA_UNROLL
            for (int j = 0; j < 2; j++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, H, wmma::col_major> b;
                wmma::load_matrix_sync(b, ws + 16 * (wj + j) * LD + kk, LD);
                wmma::mma_sync(acc[j], a, b, acc[j]);
            }
        }
        if (more) store_x(st ^ 1);
    }
    __syncthreads();                      /* the stages are free: the output tile goes through them */
    float (*Cs)[68] = (float (*)[68])(void *)st_mem;
    for (int j = 0; j < 2; j++) wmma::store_matrix_sync(&Cs[16 * wi][16 * (wj + j)], acc[j], 68, wmma::mem_row_major);
    tile_store(Cs, out, N, scale, n0, rows, add);
#endif
}

/* TC: 0 f32 FMAs (the precise mode), 1 split TF32 (the fast mode's F32 weights), 2 16-bit
 * tensor cores (its F16 and BF16 weights), 3 the same with two stages (W, x and the weight
 * rows 16-byte aligned) */
template <int T, int TC>
__global__ void __launch_bounds__(256) k_matmul_tiled(float *out, const uint8_t *W, size_t row_bytes, const float *x, int K, int N, int rows, float scale,
                                                      int add) {
    INFER_CUDA_PDL_ENTRY;
    RowsPlain rp;
    rp.r0 = blockIdx.y * INFER_CUDA_TILE;
    rp.n = rows - rp.r0 < INFER_CUDA_TILE ? rows - rp.r0 : INFER_CUDA_TILE;
    if constexpr (TC == 3) tile_matmul_half_async<T>(out, W, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rp, add);
    else if constexpr (TC == 2) tile_matmul_half<T>(out, W, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rp, add);
    else if constexpr (TC) tile_matmul_tc<T>(out, W, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rp, add);
    else tile_matmul<T>(out, W, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rp, add);
}

/* MoE with many tokens: the (token, slot) rows are first grouped by expert on the device
 * (k_moe_group, a counting sort in one block: start[e] .. start[e+1] of order[] are the rows
 * of expert e), then block (x, y, e) computes tile y of expert e's rows against its weights,
 * so each expert's weights are read once per 64 routed rows. The host cannot know how many
 * rows an expert got without a sync, so the grid allows every expert all rows; the blocks
 * past an expert's last row return at once. */
__global__ void k_moe_group(const int32_t *ids, int n_out, int E, int32_t *start, int32_t *fill, int32_t *order) {
    INFER_CUDA_PDL_ENTRY;
    for (int e = threadIdx.x; e < E; e += blockDim.x) fill[e] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n_out; i += blockDim.x) { const int e = ids[i]; if (e >= 0 && e < E) atomicAdd(&fill[e], 1); }
    __syncthreads();
    if (threadIdx.x == 0) {
        int acc = 0;
        for (int e = 0; e < E; e++) { start[e] = acc; acc += fill[e]; fill[e] = 0; }
        start[E] = acc;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n_out; i += blockDim.x) {
        const int e = ids[i];
        if (e >= 0 && e < E) order[start[e] + atomicAdd(&fill[e], 1)] = i;
    }
}

template <int T, int TC>
__global__ void __launch_bounds__(256) k_matmul_id_tiled(float *out, const uint8_t *W, size_t row_bytes, const float *x, const int32_t *start,
                                                         const int32_t *order, int K, int N, int n_used, int x_per_slot, float scale) {
    INFER_CUDA_PDL_ENTRY;
    const int e = blockIdx.z;
    RowsRouted rr;
    rr.order = order;
    rr.t0 = start[e] + blockIdx.y * INFER_CUDA_TILE;
    rr.n = start[e + 1] - rr.t0 < INFER_CUDA_TILE ? start[e + 1] - rr.t0 : INFER_CUDA_TILE;
    rr.n_used = n_used;
    rr.x_per_slot = x_per_slot;
    if (rr.n <= 0) return;                  /* the whole block: past this expert's rows */
    if constexpr (TC == 3) tile_matmul_half_async<T>(out, W + (size_t)e * N * row_bytes, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rr, 0);
    else if constexpr (TC == 2) tile_matmul_half<T>(out, W + (size_t)e * N * row_bytes, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rr);
    else if constexpr (TC) tile_matmul_tc<T>(out, W + (size_t)e * N * row_bytes, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rr);
    else tile_matmul<T>(out, W + (size_t)e * N * row_bytes, row_bytes, x, K, N, scale, blockIdx.x * INFER_CUDA_TILE, rr);
}

/* ---- int8 tiles: the fast mode's prompt matmuls for the quantized weight types ----
 *
 * The CPU's fast mode (>>quant, "Why quantized activations") on tensor cores. Over the
 * 32-blocks b of K, with w = dw q + mw inside a block (per 16 for the types whose scales are):
 *   out[r, n] = scale * sum_b [ dx[r,b] dw[n,b] sum_{k in b} qx[r,k] qw[n,k]  +  mw[n,b] dx[r,b] sum_{k in b} qx[r,k] ]
 * The activations x [rows, K] are quantized once per matmul (k_quant_act) exactly as the CPU
 * quantizes them for the weight type's dot: Q8_0 (32-blocks, f16 scale, roundf; with the
 * sums of the codes for the types with a min) or Q8_K (256-blocks, f32 scale, rounding to
 * even; sums per 16, Q8_K's bsums). The codes and
 * scales are the CPU's byte for byte (tested), so the two paths differ only in the order of
 * their f32 sums, and the error against exact maths is the CPU fast path's (INFER__TOL_FAST).
 * The weights are unpacked to int8 codes with their scales (Dq8 below) into shared memory,
 * and the integer sums run on int8 MMAs (mma.sync m16n8k32; m16n8k16 for the types with a
 * scale per 16), each block's int32 sum scaled and added into f32. The types without an
 * unpacker here (F32, F16, BF16) keep the split-TF32 tiles above. */
#define INFER_CUDA_ACT_Q8_0 0        /* 32-blocks: d = f16(max|x| / 127), q = roundf(x / d) (infer__quant_q8_0) */
#define INFER_CUDA_ACT_Q8_K 1        /* 256-blocks: d = -max / 127 (max: the first value of largest |x|), q = rint(x / d) (infer__quant_q8_k) */

/* the quantized activations, [rows, K] (K a multiple of 32). A block's 8 words of codes are
 * stored in the order 0 4 1 5 2 6 3 7 (see tile_matmul_q8: one 8-byte load then gives a lane
 * the two words an MMA fragment wants). The sums serve the types with a min. */
typedef struct infer_cuda_q8x {
    int8_t *q;                /* [rows, K] codes */
    float *d;                 /* [rows, K / 32] each block's scale */
    int32_t *s;               /* [rows, K / 32] the sums of the block's first and last 16 codes, lo | hi << 16 */
} infer_cuda_q8x;

/* where word i (codes 4i .. 4i + 3) of a 32-block goes */
INFER_CUDA_HD int q8_slot(int i) { return 2 * (i % 4) + i / 4; }
/* the CPU's max |x| of a Q8_0 block: a NaN sticks (fmaxf would drop it) */
__device__ __forceinline__ float nan_max(float a, float b) { return a != a || b != b ? a + b : fmaxf(a, b); }
/* infer__round_i8: roundf (ties away from zero); what is not a number in range becomes 0 */
__device__ __forceinline__ int round_i8(float v) {
    const float r = roundf(v);
    return r >= -128.0f && r <= 127.0f ? (int)r : 0;
}
/* 4 codes as one word, byte e = code e */
__device__ __forceinline__ uint32_t pack4(const int *q) { return (uint32_t)(q[0] & 255) | (uint32_t)(q[1] & 255) << 8 | (uint32_t)(q[2] & 255) << 16 | (uint32_t)(q[3] & 255) << 24; }

/* One warp per 256 values of a row (lane l: values 8l .. 8l + 7 of them; a lane past K holds
 * zeros and writes nothing). MODE Q8_0: a block is 4 lanes, its max taken over them with two
 * shuffles; MODE Q8_K: the block is the whole warp, max |x| over it, then the first value that
 * has it (the lowest index, as the CPU's loop finds it), whose sign the scale takes. NaN and Inf
 * give what the CPU's quantizers give (their comment in >>quant). */
template <int MODE>
__global__ void __launch_bounds__(256) k_quant_act(infer_cuda_q8x xq, const float *x, int K, int rows) {
    INFER_CUDA_PDL_ENTRY;
    const int lane = threadIdx.x & 31, spans = (K + 255) / 256, nb = K / 32;
    const int64_t span = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (span >= (int64_t)rows * spans) return;                 /* whole warps */
    const int r = (int)(span / spans), k0 = 256 * (int)(span % spans) + 8 * lane, have = k0 < K;
    const float *xr = x + (size_t)r * K + k0;
    float v[8];
    if (have && ((uintptr_t)xr & 15) == 0) {                   /* two 16-byte loads where x is aligned */
        const float4 a = ((const float4 *)xr)[0], b = ((const float4 *)xr)[1];
        v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
    } else
        for (int i = 0; i < 8; i++) v[i] = have ? xr[i] : 0.0f;
    int q[8];
    float d;
    if (MODE == INFER_CUDA_ACT_Q8_0) {
        float amax = 0.0f;
        for (int i = 0; i < 8; i++) amax = nan_max(amax, fabsf(v[i]));
        amax = nan_max(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        amax = nan_max(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
        const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;   /* a NaN dd is "not 0", as in C */
        for (int i = 0; i < 8; i++) q[i] = round_i8(v[i] * id);
        d = __half2float(__float2half_rn(dd));                 /* the dot reads the f16 scale */
    } else {
        float amax = 0.0f;
        int nan = 0;
        for (int i = 0; i < 8; i++) { amax = fmaxf(amax, fabsf(v[i])); nan |= v[i] != v[i]; }
        amax = warp_max(amax);
        nan = __ballot_sync(0xffffffffu, nan) != 0;
        if (amax == 0.0f || nan) {
            for (int i = 0; i < 8; i++) q[i] = 0;
            d = nan ? NAN : 0.0f;
        } else {
            int first = 256;                                   /* the first index with |x| = amax */
            for (int i = 7; i >= 0; i--) if (fabsf(v[i]) == amax) first = 8 * lane + i;
            for (int o = 16; o > 0; o >>= 1) { const int f = __shfl_xor_sync(0xffffffffu, first, o); first = f < first ? f : first; }
            float mine = 0.0f;                                 /* that value, to every lane: the one nonzero term of a sum */
            for (int i = 0; i < 8; i++) if (8 * lane + i == first) mine = v[i];
            const float iscale = -127.0f / warp_sum(mine);
            for (int i = 0; i < 8; i++) {
                const float p = iscale * v[i];
                const int c = p == p ? (int)rintf(p) : 0;
                q[i] = c < 127 ? c : 127;
            }
            d = 1.0f / iscale;
        }
    }
    /* the sums of each half block: lanes 4j, 4j + 1 hold its first 16 codes, 4j + 2, 4j + 3 the rest */
    int s = 0;
    for (int i = 0; i < 8; i++) s += q[i];
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    const int other = __shfl_xor_sync(0xffffffffu, s, 2);
    if (!have) return;
    const int b = k0 / 32, l4 = lane & 3;
    int8_t *qb = xq.q + (size_t)r * K + 32 * b;
    *(uint32_t *)(qb + 4 * q8_slot(2 * l4)) = pack4(q);
    *(uint32_t *)(qb + 4 * q8_slot(2 * l4 + 1)) = pack4(q + 4);
    if (l4 == 0) {
        xq.d[(size_t)r * nb + b] = d;
        xq.s[(size_t)r * nb + b] = (int32_t)((uint32_t)(s & 0xFFFF) | (uint32_t)other << 16);
    }
}

/* Dq8<T>::chunk(row, c, o) unpacks weight chunk c (the 32 weights of Dq<T>::chunk) into
 * signed codes q_i, four a word (o.q[i / 4] byte i % 4), and the scales and mins with
 *   W[32c + i] = o.d[i / 16] q_i + o.m[i / 16]
 * (the dequantizer's own products: the host test cuda_int8_decoders holds them to the CPU's
 * values bit for bit). sub = 32 where d[0] = d[1] and m[0] = m[1]; mins = 0 where m = 0; act:
 * the CPU's activation format for the type's dot (>>traits' dot_type). */
struct q8chunk { uint32_t q[8]; float d[2], m[2]; };
template <int T> struct Dq8 { enum { ok = 0 }; };
/* the bytes of v (each 0..127) minus k (at most 128) as signed bytes: the high bit set in
 * every byte first keeps a borrow from crossing into the next */
INFER_CUDA_HD uint32_t sub_bytes(uint32_t v, uint32_t k) { return ((v | 0x80808080u) - k * 0x01010101u) ^ 0x80808080u; }
INFER_CUDA_HD void q8_scales(q8chunk &o, float d0, float d1, float m0, float m1) { o.d[0] = d0; o.d[1] = d1; o.m[0] = m0; o.m[1] = m1; }
/* 16 bytes of 4-bit codes: lo nibbles are codes 0..15, hi nibbles 16..31, each minus off */
INFER_CUDA_HD void q8_nibbles(q8chunk &o, const uint32_t *w, uint32_t off) {
INFER_CUDA_UNROLL
    for (int i = 0; i < 4; i++) { o.q[i] = sub_bytes(w[i] & 0x0F0F0F0Fu, off); o.q[4 + i] = sub_bytes(w[i] >> 4 & 0x0F0F0F0Fu, off); }
}
/* the same through a 16-entry table of int8 values stored + 128 (lut16) */
INFER_CUDA_HD void q8_nibbles_lut(q8chunk &o, const uint32_t *w, const uint32_t *lut) {
    uint32_t t[4];
    for (int i = 0; i < 4; i++) t[i] = lut[i];
INFER_CUDA_UNROLL
    for (int i = 0; i < 4; i++) { o.q[i] = lut16(w[i] & 0x0F0F0F0Fu, t) ^ 0x80808080u; o.q[4 + i] = lut16(w[i] >> 4 & 0x0F0F0F0Fu, t) ^ 0x80808080u; }
}
template <> struct Dq8<INFER_TYPE_Q8_0> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q8_0 *b = (const infer_block_q8_0 *)row + c;
        for (int i = 0; i < 8; i++) o.q[i] = ld2((const uint8_t *)b->qs + 4 * i);
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
template <> struct Dq8<INFER_TYPE_Q4_0> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q4_0 *b = (const infer_block_q4_0 *)row + c;
        uint32_t w[4];
        for (int i = 0; i < 4; i++) w[i] = ld2(b->qs + 4 * i);
        q8_nibbles(o, w, 8);
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
template <> struct Dq8<INFER_TYPE_Q4_1> {
    enum { ok = 1, sub = 32, mins = 1, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q4_1 *b = (const infer_block_q4_1 *)row + c;
        uint32_t w[4];
        for (int i = 0; i < 4; i++) w[i] = ld2(b->qs + 4 * i);
        q8_nibbles(o, w, 0);
        const float d = f16(b->d), m = f16(b->m);
        q8_scales(o, d, d, m, m);
    }
};
/* Q5_0 / Q5_1: the fifth bit of code j is bit j of qh (spread4 puts 4 of them in place) */
INFER_CUDA_HD void q8_fives(q8chunk &o, const uint8_t *qs, uint32_t qh, uint32_t off) {
INFER_CUDA_UNROLL
    for (int i = 0; i < 4; i++) {
        const uint32_t w = ld2(qs + 4 * i);
        o.q[i] = sub_bytes((w & 0x0F0F0F0Fu) | spread4(qh >> (4 * i) & 15), off);
        o.q[4 + i] = sub_bytes((w >> 4 & 0x0F0F0F0Fu) | spread4(qh >> (16 + 4 * i) & 15), off);
    }
}
template <> struct Dq8<INFER_TYPE_Q5_0> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q5_0 *b = (const infer_block_q5_0 *)row + c;
        q8_fives(o, b->qs, ld2(b->qh), 16);
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
template <> struct Dq8<INFER_TYPE_Q5_1> {
    enum { ok = 1, sub = 32, mins = 1, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q5_1 *b = (const infer_block_q5_1 *)row + c;
        q8_fives(o, b->qs, ld2(b->qh), 0);
        const float d = f16(b->d), m = f16(b->m);
        q8_scales(o, d, d, m, m);
    }
};
/* Q2_K: codes 0..3, scale and min per 16 (w = d sc q - dmin m) */
template <> struct Dq8<INFER_TYPE_Q2_K> {
    enum { ok = 1, sub = 16, mins = 1, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q2_k *b = (const infer_block_q2_k *)row + c / 8;
        const float d = f16(b->d), dmin = f16(b->dmin);
        const int e0 = 32 * (c % 8), j = e0 / 16, sh = 2 * ((e0 >> 5) & 3);
        const uint8_t *qs = b->qs + 32 * (e0 >> 7);
        for (int i = 0; i < 8; i++) o.q[i] = ld2(qs + 4 * i) >> sh & 0x03030303u;
        q8_scales(o, d * (float)(b->scales[j] & 15), d * (float)(b->scales[j + 1] & 15), -(dmin * (float)(b->scales[j] >> 4)),
                  -(dmin * (float)(b->scales[j + 1] >> 4)));
    }
};
/* Q3_K: codes -4..3, a signed 6-bit scale per 16 */
template <> struct Dq8<INFER_TYPE_Q3_K> {
    enum { ok = 1, sub = 16, mins = 0, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q3_k *b = (const infer_block_q3_k *)row + c / 8;
        const float d = f16(b->d);
        const int e0 = 32 * (c % 8), j = e0 / 16, sh = 2 * ((e0 >> 5) & 3), hb = e0 >> 5;
        const uint8_t *qs = b->qs + 32 * (e0 >> 7);
        for (int i = 0; i < 8; i++) o.q[i] = sub_bytes((ld2(qs + 4 * i) >> sh & 0x03030303u) | (ld2(b->hmask + 4 * i) >> hb & 0x01010101u) << 2, 4);
        q8_scales(o, d * (float)q3k_scale(b->scales, j), d * (float)q3k_scale(b->scales, j + 1), 0.0f, 0.0f);
    }
};
/* Q4_K / Q5_K: a chunk is one sub-block: codes 0..15 (0..31), w = (d sc) q - (dmin m) */
template <> struct Dq8<INFER_TYPE_Q4_K> {
    enum { ok = 1, sub = 32, mins = 1, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q4_k *b = (const infer_block_q4_k *)row + c / 8;
        const int j = c % 8, sh = 4 * (j & 1);
        int sc, m;
        k4_scale_min(b->scales, j, &sc, &m);
        const uint8_t *qs = b->qs + 32 * (j >> 1);
        for (int i = 0; i < 8; i++) o.q[i] = ld2(qs + 4 * i) >> sh & 0x0F0F0F0Fu;
        const float dl = f16(b->d) * (float)sc, ml = f16(b->dmin) * (float)m;
        q8_scales(o, dl, dl, -ml, -ml);
    }
};
template <> struct Dq8<INFER_TYPE_Q5_K> {
    enum { ok = 1, sub = 32, mins = 1, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q5_k *b = (const infer_block_q5_k *)row + c / 8;
        const int j = c % 8, sh = 4 * (j & 1);
        int sc, m;
        k4_scale_min(b->scales, j, &sc, &m);
        const uint8_t *qs = b->qs + 32 * (j >> 1);
        for (int i = 0; i < 8; i++) o.q[i] = (ld2(qs + 4 * i) >> sh & 0x0F0F0F0Fu) | (ld2(b->qh + 4 * i) >> j & 0x01010101u) << 4;
        const float dl = f16(b->d) * (float)sc, ml = f16(b->dmin) * (float)m;
        q8_scales(o, dl, dl, -ml, -ml);
    }
};
/* Q6_K: codes -32..31, a signed 8-bit scale per 16 */
template <> struct Dq8<INFER_TYPE_Q6_K> {
    enum { ok = 1, sub = 16, mins = 0, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q6_k *b = (const infer_block_q6_k *)row + c / 8;
        const float d = f16(b->d);
        const int e0 = 32 * (c % 8), h = e0 >> 7, k = (e0 >> 5) & 3;
        const uint8_t *ql = b->ql + 64 * h + 32 * (k & 1), *qh = b->qh + 32 * h;
        for (int i = 0; i < 8; i++) o.q[i] = sub_bytes((ld2(ql + 4 * i) >> (4 * (k >> 1)) & 0x0F0F0F0Fu) | (ld2(qh + 4 * i) >> (2 * k) & 0x03030303u) << 4, 32);
        q8_scales(o, d * (float)b->scales[e0 / 16], d * (float)b->scales[e0 / 16 + 1], 0.0f, 0.0f);
    }
};
template <> struct Dq8<INFER_TYPE_IQ4_NL> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_iq4_nl *b = (const infer_block_iq4_nl *)row + c;
        uint32_t w[4];
        for (int i = 0; i < 4; i++) w[i] = ld2(b->qs + 4 * i);
        q8_nibbles_lut(o, w, k_iq4_lut);
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
template <> struct Dq8<INFER_TYPE_IQ4_XS> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_iq4_xs *b = (const infer_block_iq4_xs *)row + c / 8;
        const int j = c % 8;
        const int ls = ((b->scales_l[j >> 1] >> (4 * (j & 1))) & 15) | ((b->scales_h >> (2 * j)) & 3) << 4;
        uint32_t w[4];
        for (int i = 0; i < 4; i++) w[i] = ld2(b->qs + 16 * j + 4 * i);
        q8_nibbles_lut(o, w, k_iq4_lut);
        const float d = f16(b->d) * (float)(ls - 32);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
/* MXFP4 / NVFP4: the FP4 values doubled (integers -12..12), the scales halved (Dq's) */
template <> struct Dq8<INFER_TYPE_MXFP4> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_mxfp4 *b = (const infer_block_mxfp4 *)row + c;
        uint32_t w[4];
        for (int i = 0; i < 4; i++) w[i] = ld1(b->qs + 4 * i);
        q8_nibbles_lut(o, w, k_fp4_lut);
        const float d = e8m0_half(b->e);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
/* NVFP4: a chunk is sub-blocks 2h, 2h + 1 (a scale each): sub-block u's bytes hold its codes
 * 0..7 (lo nibbles) and 8..15 (hi) */
template <> struct Dq8<INFER_TYPE_NVFP4> {
    enum { ok = 1, sub = 16, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_nvfp4 *b = (const infer_block_nvfp4 *)row + c / 2;
        uint32_t t[4];
        for (int i = 0; i < 4; i++) t[i] = k_fp4_lut[i];
        float d[2];
        for (int u = 0; u < 2; u++) {
            const int s = 2 * (c % 2) + u;
            d[u] = ue4m3_half(b->d[s]);
            for (int i = 0; i < 2; i++) {
                const uint32_t w = ld1(b->qs + 8 * s + 4 * i);
                o.q[4 * u + i] = lut16(w & 0x0F0F0F0Fu, t) ^ 0x80808080u;
                o.q[4 * u + 2 + i] = lut16(w >> 4 & 0x0F0F0F0Fu, t) ^ 0x80808080u;
            }
        }
        q8_scales(o, d[0], d[1], 0.0f, 0.0f);
    }
};
/* TQ1_0: the trits one at a time (trit, Dq's element order), four to a word */
template <> struct Dq8<INFER_TYPE_TQ1_0> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_tq1_0 *b = (const infer_block_tq1_0 *)row + c / 8;
        const int e0 = 32 * (c % 8);
INFER_CUDA_UNROLL
        for (int i = 0; i < 8; i++) {
            uint32_t w = 0;
INFER_CUDA_UNROLL
            for (int k = 0; k < 4; k++) {
                const int e = e0 + 4 * i + k;
                const int t = e < 160 ? trit(b->qs[e % 32], e / 32) : e < 240 ? trit(b->qs[32 + (e - 160) % 16], (e - 160) / 16) : trit(b->qh[(e - 240) % 4], (e - 240) / 4);
                w |= (uint32_t)t << (8 * k);
            }
            o.q[i] = sub_bytes(w, 1);
        }
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
template <> struct Dq8<INFER_TYPE_TQ2_0> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)row + c / 8;
        const int e0 = 32 * (c % 8), sh = 2 * (e0 % 128 / 32);
        const uint8_t *qs = b->qs + 32 * (e0 / 128);
        for (int i = 0; i < 8; i++) o.q[i] = sub_bytes(ld2(qs + 4 * i) >> sh & 0x03030303u, 1);
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
/* Q1_0: code 4i + k is bit k of nibble i: spread4 puts it at bit 4 of byte k, >> 3 makes the
 * byte 2 bit, and less 1 that is +-1 */
template <> struct Dq8<INFER_TYPE_Q1_0> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q1_0 *b = (const infer_block_q1_0 *)row + c / 4;
        const uint8_t *qs = b->qs + 4 * (c % 4);
        for (int i = 0; i < 8; i++) o.q[i] = sub_bytes(spread4(qs[i / 2] >> (4 * (i % 2)) & 15) >> 3, 1);
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
/* Q2_0: code 4i + k is bits 2k, 2k + 1 of byte i */
template <> struct Dq8<INFER_TYPE_Q2_0> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_0 };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const infer_block_q2_0 *b = (const infer_block_q2_0 *)row + c / 2;
        const uint8_t *qs = b->qs + 8 * (c % 2);
        for (int i = 0; i < 8; i++) {
            const uint32_t v = qs[i];
            o.q[i] = sub_bytes((v & 3) | (v >> 2 & 3) << 8 | (v >> 4 & 3) << 16 | (v >> 6) << 24, 1);
        }
        const float d = f16(b->d);
        q8_scales(o, d, d, 0.0f, 0.0f);
    }
};
/* I2_S: codes - 1, the scale the tensor's (applied to the output) */
template <> struct Dq8<INFER_TYPE_I2_S> {
    enum { ok = 1, sub = 32, mins = 0, act = INFER_CUDA_ACT_Q8_K };
    static INFER_CUDA_HD void chunk(const uint8_t *row, int c, q8chunk &o) {
        const uint8_t *p = row + 32 * (c / 4);
        const int sh = 6 - 2 * (c % 4);
        for (int i = 0; i < 8; i++) o.q[i] = sub_bytes(ld1(p + 4 * i) >> sh & 0x03030303u, 1);
        q8_scales(o, 1.0f, 1.0f, 0.0f, 0.0f);
    }
};

/* D = A B + C on the int8 tensor cores, a warp at a time: A 16 x K (K / 8 registers a lane),
 * B K x 8 (K / 16), C and D 16 x 8 int32 (4), C here one constant. The fragments' layout is
 * the PTX ISA's (tools/cuda_emu.h spells it out and emulates it). */
template <int K> __device__ __forceinline__ void mma_s8(int32_t *d, const uint32_t *a, const uint32_t *b, int32_t c) {
#ifdef INFER_CUDA_EMU
    const int32_t cc[4] = { c, c, c, c };
    emu_mma_s8<K>(d, a, b, cc);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (K == 32)
        asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
            : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c), "r"(c), "r"(c), "r"(c));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
            : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c), "r"(c), "r"(c), "r"(c));
#else
    (void)a; (void)b;                  /* no int8 MMA before Ampere: the host never picks these tiles there */
    d[0] = d[1] = d[2] = d[3] = c;
#endif
}
/* An integer sum s (|s| < 2^22) read as a float without a conversion instruction (those run
 * at a quarter of the FMA rate): the MMA adds it to C = the bits of 1.5 * 2^23, whose mantissa
 * steps by exactly 1 there, so the result's bits are the float 1.5 * 2^23 + s, exactly; one
 * subtraction leaves s. A block's sum is at most 32 * 128 * 128 = 2^19. */
#define INFER_CUDA_MAGIC 0x4B400000
#define INFER_CUDA_MAGIC_F 12582912.0f

/* 16 bytes (4 words) at a 16-byte aligned p; 8 bytes at an 8-byte aligned p */
INFER_CUDA_HD void st16(uint8_t *p, const uint32_t *w) {
#ifdef __CUDA_ARCH__
    *(uint4 *)p = make_uint4(w[0], w[1], w[2], w[3]);
#else
    memcpy(p, w, 16);
#endif
}
INFER_CUDA_HD void ld8(const uint8_t *p, uint32_t *lo, uint32_t *hi) {
#ifdef __CUDA_ARCH__
    const uint2 v = *(const uint2 *)p;
    *lo = v.x;
    *hi = v.y;
#else
    memcpy(lo, p, 4);
    memcpy(hi, p + 4, 4);
#endif
}

/* The int8 tile: 256 threads (8 warps) compute BM token rows x 64 weight columns of out,
 * stepping through K 256 values (8 blocks) at a time, with two shared-memory stages: while
 * the warps multiply step s out of one stage, step s + 1's bytes come into the other -- the
 * activations' codes, scales and sums by cp.async (already int8 in memory: 16-byte pieces
 * copied as they are), the weights' chunks unpacked to int8 codes and scales (Dq8) into
 * registers before the MMAs and stored after them. One barrier a step, after the wait for
 * the step's copies: it also tells every warp that the other stage is free again.
 * BM follows the row count (16, 32 or 64: a batched decode step of 9..16 sequences must not
 * pay for 64-row tiles); the 8 warps stand WM down x WC across, each owning MT x NT MMA
 * tiles of 16 x 8 (BM = 64: 2 x 4 warps of 2 x 2; 32: 2 x 4 of 1 x 2; 16: 1 x 8 of 1 x 1).
 * Block by block a warp's MMAs (m16n8k32, or two m16n8k16 for the types scaled per 16) give
 * int32 sums, each scaled by dx dw into f32 accumulators (+ mw dx sum(qx) for the types with
 * a min).
 * A lane (g = lane / 4, t = lane % 4) reads the 8 bytes at 8t of a block's row, which the
 * word order 0 4 1 5 2 6 3 7 makes codes 4t..4t+3 and 16+4t..16+4t+3: exactly its A and B
 * fragment words (a0 a2 of row g, a1 a3 of row g + 8, b0 b1 of column g). Rows 288 bytes
 * apart (32 mod 128) put the 16 lanes of a half-warp's 8-byte loads in distinct banks.
 * SPLIT-K. A grid of few tiles (a batched decode step: 16 rows x 2048 columns is 32 tiles for
 * 132 SMs) leaves most SMs idle, so the host may split K over gridDim.z blocks per tile
 * (sps steps each). Each block then writes its partial tile to `part` and counts itself in
 * count[tile]; the block that counts last adds the partials in split order 0, 1, ... --
 * the same f32 sums whichever block is last, so the result is the same bits every run --
 * stores the tile, and puts the count back to 0 for the next launch (a replayed graph). */
#define INFER_CUDA_QT 64              /* weight columns of a tile, and the most token rows */
#define INFER_CUDA_QT_B 8             /* 32-blocks of K per step (256 values) */
#define INFER_CUDA_QT_S (32 * INFER_CUDA_QT_B + 32)   /* bytes between two rows of a stage (32 mod 128) */
#define INFER_CUDA_QT_THREADS 256     /* 8 warps */
#define INFER_CUDA_QT_WAVE 2          /* int8 tiles an SM runs at once, as split-K plans (registers: 2 of 256 threads) */
#define INFER_CUDA_QT_SPLITS 16       /* the most splits of a tile's K */
static_assert(INFER_CUDA_QT == INFER_CUDA_TILE, "the f32 tiles' grid serves the int8 tiles");
/* a tile of BM rows: its warps, and one stage's shared memory (bytes): the activations'
 * codes [BM][S], the weights' [64][S], then [block][row] activation scales and half sums,
 * [block, half][column] weight scales and mins; two stages */
template <int BM> struct QtShape {
    enum {
        WM = BM >= 32 ? 2 : 1, WC = 8 / WM, MT = BM / (16 * WM), NT = INFER_CUDA_QT / (8 * WC), ACC = MT * NT * 4,
        CPT = INFER_CUDA_QT * INFER_CUDA_QT_B / INFER_CUDA_QT_THREADS,        /* weight chunks a thread unpacks per step */
        B_Q = BM * INFER_CUDA_QT_S, A_D = B_Q + INFER_CUDA_QT * INFER_CUDA_QT_S, A_S = A_D + 4 * INFER_CUDA_QT_B * BM,
        B_D = A_S + 4 * INFER_CUDA_QT_B * BM, B_M = B_D + 8 * INFER_CUDA_QT_B * INFER_CUDA_QT, STAGE = B_M + 8 * INFER_CUDA_QT_B * INFER_CUDA_QT,
        SHM = 2 * STAGE
    };
    static_assert(MT * 16 * WM == BM && NT * 8 * WC == INFER_CUDA_QT && WM * WC == INFER_CUDA_QT_THREADS / 32, "the warps cover the tile");
    static_assert(CPT * INFER_CUDA_QT_THREADS == INFER_CUDA_QT * INFER_CUDA_QT_B && STAGE % 16 == 0, "whole chunks a thread, 16-byte stages");
};
/* out (or out += ) scale acc for the tile's rows and columns that exist */
template <int BM, class Rows>
__device__ __forceinline__ void tile_q8_store(const float *acc, float *out, int N, float scale, int n0, Rows rows, int add, int wr, int wc, int g, int t) {
    typedef QtShape<BM> Q;
INFER_CUDA_UNROLL
    for (int e = 0; e < Q::ACC; e++) {
        const int mt = e / (4 * Q::NT), nt = e / 4 % Q::NT, i = e % 4;
        const int r = wr + 16 * mt + g + 8 * (i >> 1), n = n0 + wc + 8 * nt + 2 * t + (i & 1);
        if (r < rows.n && n < N) {
            const float v = acc[e] * scale;
            float *d = &out[(size_t)rows.orow(r) * N + n];
            *d = add ? *d + v : v;
        }
    }
}
template <int T, int BM, class Rows>
__device__ void tile_matmul_q8(float *out, const uint8_t *W, size_t row_bytes, infer_cuda_q8x xq, int K, int N, float scale, int n0, Rows rows, int add,
                               int split, int nsplit, int sps, float *part, int *count, int tile) {
    typedef Dq8<T> D;
    typedef QtShape<BM> Q;
    enum { B = INFER_CUDA_QT_B, S = INFER_CUDA_QT_S };
    INFER_CUDA_DYN_SHARED(uint4, smem4);
    uint8_t *const smem = (uint8_t *)smem4;
    __shared__ int xr[BM];
    __shared__ int last;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3, nb = K / 32;
    const int wr = 16 * Q::MT * (warp / Q::WC), wc = 8 * Q::NT * (warp % Q::WC);
    /* this block's share of K: blocks kb0 .. kb1, whole steps of B (the last one partial) */
    const int kb0 = split * sps * B, kb1 = nb < kb0 + sps * B ? nb : kb0 + sps * B, steps = kb1 > kb0 ? (kb1 - kb0 + B - 1) / B : 0;
    if (tid < BM) xr[tid] = tid < rows.n ? rows.xrow(tid) : -1;
    float acc[Q::ACC];
INFER_CUDA_UNROLL
    for (int e = 0; e < Q::ACC; e++) acc[e] = 0.0f;
    q8chunk ch[Q::CPT];
    __syncthreads();                      /* xr */
    /* step b0's activations into stage st, by cp.async: zeros for the rows the tile lacks and past kb1 */
    auto load_act = [&](int st, int b0) {
        uint8_t *s = smem + st * Q::STAGE;
        for (int i = tid; i < BM * 2 * B; i += INFER_CUDA_QT_THREADS) {
            const int r = i / (2 * B), p = i % (2 * B), b = b0 + p / 2, ok = xr[r] >= 0 && b < kb1;
            cp_async16(s + r * S + 16 * p, ok ? (const void *)(xq.q + (size_t)xr[r] * K + 32 * b + 16 * (p & 1)) : (const void *)xq.q, ok ? 16 : 0);
        }
        for (int i = tid; i < BM * B; i += INFER_CUDA_QT_THREADS) {
            const int r = i / B, j = i % B, b = b0 + j, ok = xr[r] >= 0 && b < kb1;
            const size_t o = ok ? (size_t)xr[r] * nb + b : 0;
            cp_async4(s + Q::A_D + 4 * (j * BM + r), xq.d + o, ok ? 4 : 0);
            if (D::mins) cp_async4(s + Q::A_S + 4 * (j * BM + r), xq.s + o, ok ? 4 : 0);
        }
        cp_async_commit();
    };
    /* step b0's weight chunks unpacked into registers (8 threads a column, its chunks side by side in memory) */
    auto load_w = [&](int b0) {
INFER_CUDA_UNROLL
        for (int u = 0; u < Q::CPT; u++) {
            const int i = tid + INFER_CUDA_QT_THREADS * u, n = i / B, b = b0 + i % B;
            if (n0 + n < N && b < kb1) D::chunk(W + (size_t)(n0 + n) * row_bytes, b, ch[u]);
            else {
                for (int k = 0; k < 8; k++) ch[u].q[k] = 0;
                q8_scales(ch[u], 0.0f, 0.0f, 0.0f, 0.0f);
            }
        }
    };
    auto store_w = [&](int st) {
        uint8_t *s = smem + st * Q::STAGE;
        float *bd = (float *)(s + Q::B_D), *bm = (float *)(s + Q::B_M);
INFER_CUDA_UNROLL
        for (int u = 0; u < Q::CPT; u++) {
            const int i = tid + INFER_CUDA_QT_THREADS * u, n = i / B, j = i % B;
            const uint32_t lo[4] = { ch[u].q[0], ch[u].q[4], ch[u].q[1], ch[u].q[5] }, hi[4] = { ch[u].q[2], ch[u].q[6], ch[u].q[3], ch[u].q[7] };
            st16(s + Q::B_Q + n * S + 32 * j, lo);
            st16(s + Q::B_Q + n * S + 32 * j + 16, hi);
            bd[2 * j * INFER_CUDA_QT + n] = ch[u].d[0];
            bd[(2 * j + 1) * INFER_CUDA_QT + n] = ch[u].d[1];
            if (D::mins) { bm[2 * j * INFER_CUDA_QT + n] = ch[u].m[0]; bm[(2 * j + 1) * INFER_CUDA_QT + n] = ch[u].m[1]; }
        }
    };
    /* the MMAs of the step at b0, out of stage st */
    auto mma_step = [&](int st, int b0) {
        const uint8_t *s = smem + st * Q::STAGE;
        const float *ad = (const float *)(s + Q::A_D), *bd = (const float *)(s + Q::B_D), *bm = (const float *)(s + Q::B_M);
        const int32_t *as = (const int32_t *)(s + Q::A_S);
        const int jn = kb1 - b0 < B ? kb1 - b0 : B;
INFER_CUDA_UNROLL
        for (int j = 0; j < B; j++) {
            if (j >= jn) break;           /* the same for the whole block */
            const int kb = 32 * j + 8 * t;
            uint32_t a[Q::MT][4], bw[Q::NT][2];
            float dx[Q::MT][2], sx[Q::MT][2][2], dw[Q::NT][2][2], mw[Q::NT][2][2];
INFER_CUDA_UNROLL
            for (int mt = 0; mt < Q::MT; mt++)
INFER_CUDA_UNROLL
                for (int h = 0; h < 2; h++) {
                    const int r = wr + 16 * mt + g + 8 * h;
                    ld8(s + r * S + kb, &a[mt][h], &a[mt][2 + h]);
                    dx[mt][h] = ad[j * BM + r];
                    if (D::mins) {        /* dx times the sums of the block's halves (of the whole block where sub = 32) */
                        const int32_t v = as[j * BM + r], lo = (int32_t)(int16_t)(v & 0xFFFF), hi = v >> 16;
                        sx[mt][h][0] = D::sub == 16 ? dx[mt][h] * (float)lo : dx[mt][h] * (float)(lo + hi);
                        sx[mt][h][1] = dx[mt][h] * (float)hi;
                    }
                }
INFER_CUDA_UNROLL
            for (int nt = 0; nt < Q::NT; nt++) {
                const int n = wc + 8 * nt;
                ld8(s + Q::B_Q + (n + g) * S + kb, &bw[nt][0], &bw[nt][1]);
INFER_CUDA_UNROLL
                for (int e = 0; e < 2; e++)
INFER_CUDA_UNROLL
                    for (int h = 0; h < 32 / D::sub; h++) {
                        dw[nt][e][h] = bd[(2 * j + h) * INFER_CUDA_QT + n + 2 * t + e];
                        if (D::mins) mw[nt][e][h] = bm[(2 * j + h) * INFER_CUDA_QT + n + 2 * t + e];
                    }
            }
INFER_CUDA_UNROLL
            for (int mt = 0; mt < Q::MT; mt++)
INFER_CUDA_UNROLL
                for (int nt = 0; nt < Q::NT; nt++) {
                    int32_t c0[4], c1[4];
                    if (D::sub == 32) mma_s8<32>(c0, a[mt], bw[nt], INFER_CUDA_MAGIC);
                    else {
                        mma_s8<16>(c0, a[mt], &bw[nt][0], INFER_CUDA_MAGIC);           /* codes 0..15: a0 a1, b0 */
                        mma_s8<16>(c1, a[mt] + 2, &bw[nt][1], INFER_CUDA_MAGIC);       /* codes 16..31: a2 a3, b1 */
                    }
INFER_CUDA_UNROLL
                    for (int i = 0; i < 4; i++) {
                        const int h = i >> 1, e = i & 1;
                        float &o = acc[(mt * Q::NT + nt) * 4 + i];
                        float v = o + (bits_float((uint32_t)c0[i]) - INFER_CUDA_MAGIC_F) * (dx[mt][h] * dw[nt][e][0]);
                        if (D::sub == 16) v += (bits_float((uint32_t)c1[i]) - INFER_CUDA_MAGIC_F) * (dx[mt][h] * dw[nt][e][1]);
                        if (D::mins) {
                            v += mw[nt][e][0] * sx[mt][h][0];
                            if (D::sub == 16) v += mw[nt][e][1] * sx[mt][h][1];
                        }
                        o = v;
                    }
                }
        }
    };
    if (steps > 0) {
        load_act(0, kb0);
        load_w(kb0);
        store_w(0);
    }
    for (int s = 0, b0 = kb0; s < steps; s++, b0 += B) {
        const int st = s & 1, more = s + 1 < steps;
        cp_async_wait<0>();               /* this step's copies (the only group in flight) */
        __syncthreads();                  /* ... everyone's, and the stores of its weights; all are done with stage st ^ 1 */
        if (more) {
            load_act(st ^ 1, b0 + B);     /* lands while the MMAs below run */
            load_w(b0 + B);
        }
        mma_step(st, b0);
        if (more) store_w(st ^ 1);
    }
    if (nsplit > 1) {                     /* split K: the partial tile out, the last block of the tile adds them up */
        float *p = part + (size_t)tile * nsplit * Q::ACC * INFER_CUDA_QT_THREADS;
INFER_CUDA_UNROLL
        for (int e = 0; e < Q::ACC; e++) p[((size_t)split * Q::ACC + e) * INFER_CUDA_QT_THREADS + tid] = acc[e];
        __threadfence();                  /* the partials are visible device-wide before the count says so */
        __syncthreads();
        if (tid == 0) {
            const int k = atomicAdd(&count[tile], 1);
            last = k == nsplit - 1;
            if (last) count[tile] = 0;    /* every split has counted: ready for the next launch */
        }
        __syncthreads();
        if (!last) return;
        __threadfence();
INFER_CUDA_UNROLL
        for (int e = 0; e < Q::ACC; e++) {
            float v = 0.0f;
            for (int z = 0; z < nsplit; z++) v += __ldcg(&p[((size_t)z * Q::ACC + e) * INFER_CUDA_QT_THREADS + tid]);
            acc[e] = v;
        }
    }
    tile_q8_store<BM>(acc, out, N, scale, n0, rows, add, wr, wc, g, t);
}

/* tile (blockIdx.x, blockIdx.y) of out, split blockIdx.z of K (sps steps each) */
template <int T, int BM>
__global__ void __launch_bounds__(INFER_CUDA_QT_THREADS, 2) k_matmul_q8(float *out, const uint8_t *W, size_t row_bytes, infer_cuda_q8x xq, int K, int N, int rows,
                                                                        float scale, int add, int sps, float *part, int *count) {
    INFER_CUDA_PDL_ENTRY;
    RowsPlain rp;
    rp.r0 = blockIdx.y * BM;
    rp.n = rows - rp.r0 < BM ? rows - rp.r0 : BM;
    tile_matmul_q8<T, BM>(out, W, row_bytes, xq, K, N, scale, blockIdx.x * INFER_CUDA_QT, rp, add, blockIdx.z, gridDim.z, sps, part, count,
                          blockIdx.y * gridDim.x + blockIdx.x);
}
/* matmul_id's grouped tiles (k_matmul_id_tiled) on int8: xq holds every row of x; K whole */
template <int T, int BM>
__global__ void __launch_bounds__(INFER_CUDA_QT_THREADS, 2) k_matmul_id_q8(float *out, const uint8_t *W, size_t row_bytes, infer_cuda_q8x xq, const int32_t *start,
                                                                           const int32_t *order, int K, int N, int n_used, int x_per_slot, float scale) {
    INFER_CUDA_PDL_ENTRY;
    const int e = blockIdx.z;
    RowsRouted rr;
    rr.order = order;
    rr.t0 = start[e] + blockIdx.y * BM;
    rr.n = start[e + 1] - rr.t0 < BM ? start[e + 1] - rr.t0 : BM;
    rr.n_used = n_used;
    rr.x_per_slot = x_per_slot;
    if (rr.n <= 0) return;                  /* the whole block: past this expert's rows */
    tile_matmul_q8<T, BM>(out, W + (size_t)e * N * row_bytes, row_bytes, xq, K, N, scale, blockIdx.x * INFER_CUDA_QT, rr, 0, 0, 1, (K / 32 + INFER_CUDA_QT_B - 1) / INFER_CUDA_QT_B,
                          NULL, NULL, 0);
}

/* ---- a batch's rows of quantized weights: the tensor-core matvec (k_mmv) ----
 * A batch of 9-16 decoding sequences multiplies each weight by at most 16 rows: too few for
 * the int8 tiles, whose steps through shared memory (copies, unpacking, a barrier a step)
 * set their pace at this size, not the bytes -- an H100 ran a 16-row down projection on
 * them at 0.4 TB/s, where the one-row matvec reads 2 TB/s. k_mmv reads the weights as the
 * matvec does, straight into registers with many loads in flight, no shared memory and no
 * barrier, and leaves the 16 rows to the tensor cores: the weight rows are the MMA's B (8
 * columns an n-tile), the activations' int8 codes its A, 16 rows, those past `rows` zero.
 * Lane (g = lane / 4, t = lane % 4) unpacks, of weight column g's block kb, only the codes
 * of its B fragment -- 4t..4t+3 and 16+4t..16+4t+3, for Q4_0 one 4-byte load (mmv_frag) --
 * and reads its A fragment, the same codes of rows g and g + 8. The scales of the C
 * fragment's columns 2t, 2t + 1 come from their lanes by shuffles; the types with a min take
 * the block's (or half block's) sum of codes from the four lanes that hold them. A block's
 * warps share K: warp w takes the groups of MMV_U blocks w, w + MMV_WARPS, ..., its sums
 * scaled block by block into f32 (the tiles' epilogue); then the warps' partial tiles are
 * added in warp order in shared memory, the same bits every run. NT n-tiles a warp (8 NT
 * columns a block): 2 halves the activations' reads per weight byte, 1 doubles the blocks of
 * a short output.
 * It serves the decode path as k_mvq does (infer_cuda_matvec_fast, XF = 1): several weights
 * of one x in one launch (q, k, v), the residual add, the GLU (G: n-tile 0 of the gate and 1
 * of the up weight over the same 8 columns, out = act(gate) up) with its output quantized
 * for the down projection (mvq_quant_out), activations in k_quant_x's layout as the fused
 * norm, GLU and attention write them; and the prompt path's matmuls of types without a fast
 * matvec (XF = 0: the tiles' layout, k_quant_act). E (not with G): how the values are
 * stored, as k_mvq's; MvRopeStore's pairs are a lane's two values of a C fragment's row. */
#define INFER_CUDA_MMV_WARPS 8        /* warps of a block, each a share of K */
#define INFER_CUDA_MMV_U 4            /* blocks of 32 a lane loads before their MMAs */
#define INFER_CUDA_MMV_ROWS 16        /* the rows a block serves (the MMA's m); more in blocks of 16 side by side */
#define INFER_CUDA_MMV_MAX 64         /* the most rows k_mmv can be set to take (INFER_CUDA_MMV=N) */
typedef struct infer_cuda_mmx {       /* k_mmv's activations: the tiles' (XF 0), or k_quant_x's codes [rows, K] and (d, sum) pairs (XF 1) */
    infer_cuda_q8x q;
    const int8_t *codes;
    const float2 *ds;
} infer_cuda_mmx;
/* word t of a chunk's first four (b = q) or last four (b = q + 4), without indexing an array
 * by a lane's value (which would put the chunk in local memory) */
__device__ __forceinline__ uint32_t pick4(const uint32_t *q, int t) { return t == 0 ? q[0] : t == 1 ? q[1] : t == 2 ? q[2] : q[3]; }
/* 4 bytes at a 4-byte aligned p */
__device__ __forceinline__ uint32_t ld4(const int8_t *p) {
#ifdef __CUDA_ARCH__
    return *(const uint32_t *)p;
#else
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#endif
}
/* Of weight row `row`'s chunk c (Dq8<T>'s 32 weights), the B fragment of lane group t --
 * b[0] = codes 4t..4t+3, b[1] = codes 16+4t..16+4t+3, each word as Dq8::chunk's -- and the
 * chunk's scales d[2] and mins m[2] (Dq8's too). Q4_0, Q8_0 and Q6_K (the output matrix of
 * a Q4_0 model) read only those codes' bytes; the other types unpack the whole chunk and keep
 * the two words. */
template <int T> __device__ __forceinline__ void mmv_frag(const uint8_t *row, int c, int t, uint32_t *b, float *d, float *m) {
    m[0] = m[1] = 0.0f;
    if constexpr (T == INFER_TYPE_Q4_0) {
        const infer_block_q4_0 *bk = (const infer_block_q4_0 *)row + c;
        const uint32_t w = ld2(bk->qs + 4 * t);
        b[0] = sub_bytes(w & 0x0F0F0F0Fu, 8);
        b[1] = sub_bytes(w >> 4 & 0x0F0F0F0Fu, 8);
        d[0] = d[1] = f16(bk->d);
    } else if constexpr (T == INFER_TYPE_Q8_0) {
        const infer_block_q8_0 *bk = (const infer_block_q8_0 *)row + c;
        b[0] = ld2((const uint8_t *)bk->qs + 4 * t);
        b[1] = ld2((const uint8_t *)bk->qs + 16 + 4 * t);
        d[0] = d[1] = f16(bk->d);
    } else if constexpr (T == INFER_TYPE_Q6_K) {
        const infer_block_q6_k *bk = (const infer_block_q6_k *)row + c / 8;
        const int e0 = 32 * (c % 8), h = e0 >> 7, k = (e0 >> 5) & 3;
        const uint8_t *ql = bk->ql + 64 * h + 32 * (k & 1), *qh = bk->qh + 32 * h;
INFER_CUDA_UNROLL
        for (int j = 0; j < 2; j++) {
            const int i = t + 4 * j;
            b[j] = sub_bytes((ld2(ql + 4 * i) >> (4 * (k >> 1)) & 0x0F0F0F0Fu) | (ld2(qh + 4 * i) >> (2 * k) & 0x03030303u) << 4, 32);
        }
        const float dd = f16(bk->d);
        d[0] = dd * (float)bk->scales[e0 / 16];
        d[1] = dd * (float)bk->scales[e0 / 16 + 1];
    } else {
        q8chunk ch;
        Dq8<T>::chunk(row, c, ch);
        b[0] = pick4(ch.q, t);
        b[1] = pick4(ch.q + 4, t);
        d[0] = ch.d[0]; d[1] = ch.d[1];
        m[0] = ch.m[0]; m[1] = ch.m[1];
    }
}
/* the sum of the 16 codes whose words lanes t = 0..3 of this lane's group hold in w */
__device__ __forceinline__ int mmv_sum16(uint32_t w) {
    int s = __dp4a((int)w, 0x01010101, 0);
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    return s + __shfl_xor_sync(0xffffffffu, s, 2);
}
template <int T, int NT, int G, int XF, class E = MvPlain>
__global__ void __launch_bounds__(32 * INFER_CUDA_MMV_WARPS) k_mmv(infer_cuda_mv mv, size_t row_bytes, infer_cuda_mmx x, int K, int rows, infer_cuda_qout qo,
                                                                 E ep) {
    INFER_CUDA_PDL_TRIGGER();                /* the wait follows the first weights' loads */
    typedef Dq8<T> D;
    enum { U = INFER_CUDA_MMV_U, WARPS = INFER_CUDA_MMV_WARPS, HS = 32 / D::sub, C = G ? 8 : 8 * NT };
    static_assert(!G || NT == 2, "k_mmv: the GLU's gate and up are its two n-tiles");
    __shared__ float red[WARPS][NT * 4][32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3, nb = K / 32;
    /* blockIdx.x = bx ry + by over the ry blocks of 16 rows: those of one column group side by
     * side, so all but the first find its weights in L2 */
    enum { BR = INFER_CUDA_MMV_ROWS };
    const int ry = (rows + BR - 1) / BR, bx = (int)blockIdx.x / ry, by = (int)blockIdx.x - bx * ry, r0 = BR * by;
    const int nr = rows - r0 < BR ? rows - r0 : BR;
    const MvCols mc = mv_cols(mv, bx, C, G);
    const uint8_t *W = mc.W;
    float *out = mc.out, scale = mc.scale;
    const int N = mc.N, n0 = mc.n0, ws = mc.ws;
    /* the value this thread stores at the end: fragment value fe of lane fl (below) */
    const int fe = tid >> 5, fl = tid & 31, fi = fe & 3, fr = (fl >> 2) + 8 * (fi >> 1), fn = n0 + (G ? 0 : 8 * (fe >> 2)) + 2 * (fl & 3) + (fi & 1);
    const int stores = fe < (G ? 4 : 4 * NT) && fr < nr && fn < N;
    typename E::Pre pre = {};                /* (E's work before the dot products: its loads' latency hidden behind theirs) */
    if (!E::plain && stores) pre = ep.pre(ws, fn, r0 + fr);
    const uint8_t *wr[NT];                   /* lane's weight row in each n-tile (a column past N reads column 0) */
INFER_CUDA_UNROLL
    for (int nt = 0; nt < NT; nt++) {
        const int n = G ? n0 + g : n0 + 8 * nt + g;
        wr[nt] = (G && nt ? mv.W[1] : W) + (size_t)(n < N ? n : 0) * row_bytes;
    }
    const int8_t *xr[2];                     /* lane's activation rows r0 + g, r0 + g + 8 (NULL: past rows) */
INFER_CUDA_UNROLL
    for (int h = 0; h < 2; h++) {
        const int r = g + 8 * h;
        xr[h] = r < nr ? (XF ? x.codes : x.q.q) + (size_t)(r0 + r) * K : NULL;
    }
    float acc[NT][4];
INFER_CUDA_UNROLL
    for (int nt = 0; nt < NT; nt++)
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) acc[nt][i] = 0.0f;
    int waited = 0;
    for (int kb0 = U * warp; kb0 < nb; kb0 += U * WARPS) {
        uint32_t bw[U][NT][2];
        float dw[U][NT][2], mw[U][NT][2];
INFER_CUDA_UNROLL
        for (int u = 0; u < U; u++)
INFER_CUDA_UNROLL
            for (int nt = 0; nt < NT; nt++) {
                if (kb0 + u < nb) mmv_frag<T>(wr[nt], kb0 + u, t, bw[u][nt], dw[u][nt], mw[u][nt]);
                else { bw[u][nt][0] = bw[u][nt][1] = 0; dw[u][nt][0] = dw[u][nt][1] = mw[u][nt][0] = mw[u][nt][1] = 0.0f; }
            }
        if (!waited) { INFER_CUDA_PDL_WAIT(); waited = 1; }   /* the activations are the kernel before's output */
        uint32_t a[U][4];
        float dx[U][2];
INFER_CUDA_UNROLL
        for (int u = 0; u < U; u++)
INFER_CUDA_UNROLL
            for (int h = 0; h < 2; h++) {
                const int kb = kb0 + u;
                if (xr[h] && kb < nb) {
                    const size_t r = (size_t)(r0 + g + 8 * h);
                    if (XF) {                     /* codes in order: words t and 4 + t */
                        a[u][h] = ld4(xr[h] + 32 * kb + 4 * t);
                        a[u][2 + h] = ld4(xr[h] + 32 * kb + 16 + 4 * t);
                        dx[u][h] = x.ds[r * nb + kb].x;
                    } else {                      /* the tiles' word order: both in one 8-byte load */
                        ld8((const uint8_t *)xr[h] + 32 * kb + 8 * t, &a[u][h], &a[u][2 + h]);
                        dx[u][h] = x.q.d[r * nb + kb];
                    }
                } else {
                    a[u][h] = a[u][2 + h] = 0;
                    dx[u][h] = 0.0f;
                }
            }
INFER_CUDA_UNROLL
        for (int u = 0; u < U; u++) {
            float sx[2][2];                   /* dx times the sums of the block's halves (of the whole block where sub = 32) */
            if (D::mins)
INFER_CUDA_UNROLL
                for (int h = 0; h < 2; h++) {
                    if (h && nr <= BR / 2) { sx[h][0] = sx[h][1] = 0.0f; continue; }   /* (rows g + 8: none) */
                    const int lo = mmv_sum16(a[u][h]), hi = mmv_sum16(a[u][2 + h]);
                    sx[h][0] = D::sub == 16 ? dx[u][h] * (float)lo : dx[u][h] * (float)(lo + hi);
                    sx[h][1] = dx[u][h] * (float)hi;
                }
INFER_CUDA_UNROLL
            for (int nt = 0; nt < NT; nt++) {
                float ds[2][HS], ms[2][HS];   /* the scales (and mins) of columns 2t, 2t + 1, from lanes 8t, 8t + 4 */
INFER_CUDA_UNROLL
                for (int e = 0; e < 2; e++)
INFER_CUDA_UNROLL
                    for (int s = 0; s < HS; s++) {
                        ds[e][s] = __shfl_sync(0xffffffffu, dw[u][nt][s], 4 * (2 * t + e));
                        ms[e][s] = D::mins ? __shfl_sync(0xffffffffu, mw[u][nt][s], 4 * (2 * t + e)) : 0.0f;
                    }
                int32_t c0[4], c1[4];
                if (D::sub == 32) mma_s8<32>(c0, a[u], bw[u][nt], INFER_CUDA_MAGIC);
                else {
                    mma_s8<16>(c0, a[u], &bw[u][nt][0], INFER_CUDA_MAGIC);       /* codes 0..15: a0 a1, b0 */
                    mma_s8<16>(c1, a[u] + 2, &bw[u][nt][1], INFER_CUDA_MAGIC);   /* codes 16..31: a2 a3, b1 */
                }
INFER_CUDA_UNROLL
                for (int i = 0; i < 4; i++) {
                    const int h = i >> 1, e = i & 1;
                    if (h && nr <= BR / 2) continue;   /* (rows g + 8: none; the same for the whole block) */
                    float v = acc[nt][i] + (bits_float((uint32_t)c0[i]) - INFER_CUDA_MAGIC_F) * (dx[u][h] * ds[e][0]);
                    if (D::sub == 16) v += (bits_float((uint32_t)c1[i]) - INFER_CUDA_MAGIC_F) * (dx[u][h] * ds[e][HS - 1]);
                    if (D::mins) {
                        v += ms[e][0] * sx[h][0];
                        if (D::sub == 16) v += ms[e][HS - 1] * sx[h][1];
                    }
                    acc[nt][i] = v;
                }
            }
        }
    }
    if (!waited) INFER_CUDA_PDL_WAIT();      /* (a warp without blocks: out may be the kernel before's) */
INFER_CUDA_UNROLL
    for (int nt = 0; nt < NT; nt++)
INFER_CUDA_UNROLL
        for (int i = 0; i < 4; i++) red[warp][4 * nt + i][lane] = acc[nt][i];
    __syncthreads();
    /* thread (fe, fl) adds the warps' sums of fragment value fe of lane fl, in warp order */
    if (stores) {
        float v = 0.0f;
        for (int w = 0; w < WARPS; w++) v += red[w][fe][fl];
        float *o = &out[(size_t)(r0 + fr) * N + fn];
        if (G) {
            float vu = 0.0f;
            for (int w = 0; w < WARPS; w++) vu += red[w][4 + fe][fl];
            *o = glu_act(v * scale, vu * mv.scale[1], mv.act, mv.limit);
        } else if (!E::plain) {             /* the pair's other column: value fe ^ 1 of the same lane, summed the same way */
            float u = 0.0f;
            for (int w = 0; w < WARPS; w++) u += red[w][fe ^ 1][fl];
            ep.put(pre, o, v * scale, u * scale, ws, fn, r0 + fr);
        } else {
            v *= scale;
            *o = mv.add ? *o + v : v;
        }
    }
    if (G && qo.kind) mvq_quant_out(qo, out + (size_t)r0 * N, N, n0, nr, r0, by, C);   /* every thread: its barriers */
}

/* out[r, s, :] = W_e x[r or (r, s)] with e = ids[r, s]: k_matvec's warp per output column,
 * blockIdx.y = r * n_used + s, the block's one activation row staged in shared memory as
 * there. Each (token, slot) reads its expert's rows on its own; a prompt that sends many
 * tokens to one expert takes the grouped tiles instead. */
template <int T>
__global__ void __launch_bounds__(32 * INFER_CUDA_MV_WARPS) k_matmul_id(float *out, const uint8_t *W, size_t row_bytes, const float *x, const int32_t *ids,
                                                                     int K, int N, int E, int n_used, int x_per_slot, float scale) {
    INFER_CUDA_PDL_ENTRY;
    __shared__ float xs[1][32 * 33];
    const int n = blockIdx.x * INFER_CUDA_MV_WARPS + (threadIdx.x >> 5), o = blockIdx.y, lane = threadIdx.x & 31, nch = (K + 31) / 32;
    const int e = ids[o], active = n < N && e >= 0 && e < E;
    const float *xr = x + (size_t)(x_per_slot ? o : o / n_used) * K;
    const uint8_t *wrow = W + ((size_t)(active ? e : 0) * N + (active ? n : 0)) * row_bytes;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += INFER_CUDA_MV_TILE) {
        const int c = k0 / 32 + lane;
        float w[32];
        if (active && c < nch) Dq<T>::chunk(wrow, c, K, w);
        __syncthreads();
        mv_stage<1>(xs, xr, K, 1, k0);
        __syncthreads();
        if (!active || c >= nch) continue;
        acc += mv_dot32(w, xs[0], lane);
    }
    if (n >= N) return;
    acc = warp_sum(acc);
    if (lane == 0) out[(size_t)o * N + n] = acc * scale;
}

/* embedding: out[r] = scale * table[tokens[r]]; one thread per 32-chunk of a row */
template <int T>
__global__ void k_embed(float *out, const uint8_t *table, size_t row_bytes, const int32_t *tokens, int K, int V, float scale) {
    INFER_CUDA_PDL_ENTRY;
    const int r = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (32 * c >= K) return;
    const int t = tokens[r];
    float w[32];
    if (t >= 0 && t < V) Dq<T>::chunk(table + (size_t)t * row_bytes, c, K, w);
    else
INFER_CUDA_UNROLL
        for (int i = 0; i < 32; i++) w[i] = 0.0f;
    float *o = out + (size_t)r * K + 32 * c;
INFER_CUDA_UNROLL
    for (int i = 0; i < 32; i++) if (32 * c + i < K) o[i] = w[i] * scale;
}

/* launch(ty), which launches a kernel for the weight type t, through infer_cuda_with_type;
 * then the launch's check. A type without kernels is an error of the op `what`. */
template <class F> static void infer_cuda_typed(infer_cuda_ctx *c, infer_type t, const char *what, F &&launch) {
    if (!infer_cuda_with_type(t, launch)) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s: weight type without kernels", what);
        infer_cuda_record(c, cudaErrorNotSupported, msg);
        return;
    }
    INFER_CUDA_LAUNCHED(c, what);
}

static int infer_cuda_grow(infer_cuda_ctx *c, void **buf, size_t *have, size_t bytes, const char *what);

/* x [rows, K] quantized by k_quant_x (kind 1: Q8_0 rules, 2: Q8_K) into the context's xq
 * buffer: the codes, then (16-byte aligned) their scales and sums; 0 when no buffer could
 * be had (the error is kept) */
static int infer_cuda_quant_x(infer_cuda_ctx *c, int kind, const float *x, int K, int rows, int8_t **q, float2 **ds) {
    const size_t codes = ((size_t)rows * (size_t)K + 15) / 16 * 16;
    if (!infer_cuda_grow(c, &c->xq, &c->xq_bytes, codes + (size_t)rows * (size_t)(K / 32) * sizeof(float2), "cudaMalloc (quantized activations)")) return 0;
    *q = (int8_t *)c->xq;
    *ds = (float2 *)(*q + codes);
    const int groups = (K / (kind == 1 ? 32 : 256) + 3) / 4;      /* a warp per block, 4 a launch block */
    if (kind == 1) INFER_CUDA_LAUNCH(dim3(groups, rows), 128, 0, c, k_quant_x<1>)(x, K, *q, *ds);
    else INFER_CUDA_LAUNCH(dim3(groups, rows), 128, 0, c, k_quant_x<2>)(x, K, *q, *ds);
    INFER_CUDA_LAUNCHED(c, "matmul (activations)");
    return 1;
}

/* Mv<T>'s kind and weight alignment as values for the host (0, 1 for a type without) */
template <int T> static constexpr int infer_cuda_mv_align() {
    if constexpr (Mv<T>::KIND != 0) return Mv<T>::ALIGN;
    else return 1;
}
/* the kind of the fast matvec of weight type t for these weight rows (n of them, rb bytes
 * apart) and this x: 0 where the type has none or the pointers do not suit its loads */
static int infer_cuda_mv_kind(infer_type t, const uint8_t *const *W, int n, size_t rb, const float *x, int K) {
    int kind = 0, align = 1;
    infer_cuda_with_type(t, [&](auto ty) { kind = Mv<decltype(ty)::id>::KIND; align = infer_cuda_mv_align<decltype(ty)::id>(); });
    int ok = kind != 0 && rb % (size_t)align == 0 && (kind != 3 || (K % 8 == 0 && (uintptr_t)x % 16 == 0));
    for (int i = 0; ok && i < n; i++) ok = (uintptr_t)W[i] % (uintptr_t)align == 0;
    return ok ? kind : 0;
}
/* A call's activations as the fast matvec reads them: the float kinds x itself, the others
 * x quantized -- once per call: xq remembers what the call's last quantization was, which
 * matmul_n's groups of weights share (one x, at most two kinds). 0: no buffer (the error is
 * kept). */
struct infer_cuda_xq { int kind; int8_t *q; float2 *ds; };
static int infer_cuda_mv_x(infer_cuda_ctx *c, int kind, const float *x, int K, int rows, infer_cuda_xq *xq, const void **xa, const float2 **xds) {
    if (kind == 3) { *xa = x; *xds = NULL; return 1; }
    if (xq->kind != kind) {
        if (!infer_cuda_quant_x(c, kind, x, K, rows, &xq->q, &xq->ds)) return 0;
        xq->kind = kind;
    }
    *xa = xq->q;
    *xds = xq->ds;
    return 1;
}

/* threads of a k_mvq block for rows of K weights: INFER_CUDA_MVQ_THREADS, or fewer where a
 * row has fewer slices (whole warps) */
static int infer_cuda_mvq_threads(infer_type t, int K) {
    int slices = 0;
    infer_cuda_with_type(t, [&](auto ty) {
        typedef Mv<decltype(ty)::id> M;
        if constexpr (M::KIND != 0) slices = K / M::QK * M::SPB;
    });
    const int w = (slices + 31) / 32 * 32;
    return w < 32 ? 32 : w > INFER_CUDA_MVQ_THREADS ? INFER_CUDA_MVQ_THREADS : w;
}

/* the column groups of mv's weights (glu: weight 0's) at C columns a group: the blocks over
 * one row block of k_mvq or k_mmv, as mv_cols deals them */
static int infer_cuda_mv_groups(const infer_cuda_mv &mv, int glu, int C) {
    int groups = 0;
    for (int i = 0; i < (glu ? 1 : mv.n); i++) groups += (mv.start[i + 1] - mv.start[i] + C - 1) / C;
    return groups;
}

/* ---- k_mmv's launches: 9-N rows of quantized weights, the fast mode, INFER_CUDA_MMV=N ---- */
static int infer_cuda_mmv_env = 0;        /* the most rows on k_mmv: 0 (off) until measured against the tiles (INFER_CUDA_MMV=1: 16; =N: N, up to 64) */
static int infer_cuda_mmv_on = 0;         /* ... and as the tests set it */
static int infer_cuda_mmv_nt = 0;         /* the tests: k_mmv's n-tiles a warp (1 or 2; 0: chosen by the width) */
static long infer_cuda_mmv_issued = 0;    /* the tests: k_mmv launches issued (or recorded into a graph) */
/* a setting's most rows: 0 off, 1 (on) 16, else 16..64 */
static int infer_cuda_mmv_clamp(int n) { return n <= 0 ? 0 : n <= INFER_CUDA_MMV_ROWS ? INFER_CUDA_MMV_ROWS : n > INFER_CUDA_MMV_MAX ? INFER_CUDA_MMV_MAX : n; }
/* the fewest rows on k_mmv when it is on: 9 (the int8 matvec's are up to 8); INFER_CUDA_MMV_MIN=N
 * lowers it, down to one row, to time the tensor cores against the matvec's dot products */
static int infer_cuda_mmv_min = INFER_CUDA_MV_ROWS + 1;
static int infer_cuda_mmv_rows(const infer_cuda_ctx *c, int rows) {
    return !c->precise && infer_cuda_mma8 && rows >= infer_cuda_mmv_min && rows <= infer_cuda_mmv_on;
}
/* which activations k_mmv reads for type T: 1 k_quant_x's (the type's fast matvec reads the
 * same codes: the decode path's), 0 the tiles' (a type without one), -1 none (no Dq8) */
template <int T> static constexpr int infer_cuda_mmv_xf() {
    if constexpr (!Dq8<T>::ok) return -1;
    else if constexpr ((Mv<T>::KIND == 1 && (int)Dq8<T>::act == INFER_CUDA_ACT_Q8_0) || (Mv<T>::KIND == 2 && (int)Dq8<T>::act == INFER_CUDA_ACT_Q8_K)) return 1;
    else return 0;
}
/* mv's product (glu: the GLU of W[0], W[1], its output quantized as qo says) from x in the
 * layout infer_cuda_mmv_xf<T> names. Two n-tiles a warp while that still leaves two blocks
 * an SM (a feed-forward's gate and up, an output matrix), else one (a down projection, q, k
 * and v of a 1B model: twice the blocks). */
template <int T, class E = MvPlain> static void infer_cuda_mmv_launch(infer_cuda_ctx *c, const infer_cuda_mv &mv, size_t rb, const infer_cuda_mmx &x, int K,
                                                                    int rows, int glu, const infer_cuda_qout &qo, const E &e = E()) {
    constexpr int XF = infer_cuda_mmv_xf<T>();
    if constexpr (XF >= 0) {
        const int width = glu ? mv.start[1] : mv.start[mv.n];
        int nt = infer_cuda_mmv_nt;
        if (nt != 1 && nt != 2) nt = (width + 15) / 16 >= 2 * infer_cuda_sms ? 2 : 1;
        if (glu) nt = 2;
        const int blocks = infer_cuda_mv_groups(mv, glu, glu ? 8 : 8 * nt) * ((rows + INFER_CUDA_MMV_ROWS - 1) / INFER_CUDA_MMV_ROWS);
        c->qt_rows = -2;                      /* (infer_cuda_tiles_last: k_mmv, its n-tiles as the splits) */
        c->qt_splits = nt;
        infer_cuda_mmv_issued++;
        const int threads = 32 * INFER_CUDA_MMV_WARPS;
        if (glu) {
            if constexpr (E::plain) INFER_CUDA_LAUNCH(blocks, threads, 0, c, k_mmv<T, 2, 1, XF>)(mv, rb, x, K, rows, qo, e);
        } else if (nt == 2) INFER_CUDA_LAUNCH(blocks, threads, 0, c, k_mmv<T, 2, 0, XF, E>)(mv, rb, x, K, rows, qo, e);
        else INFER_CUDA_LAUNCH(blocks, threads, 0, c, k_mmv<T, 1, 0, XF, E>)(mv, rb, x, K, rows, qo, e);
    }
}
/* one weight, or the GLU of two, from the tiles' activations (XF 0) */
template <int T> static void infer_cuda_mmv_tiles(infer_cuda_ctx *c, float *out, const infer_tensor *w, const infer_tensor *wu, const infer_cuda_q8x &q, int rows,
                                                  int add, int act, float limit) {
    infer_cuda_mv mv;
    memset(&mv, 0, sizeof mv);
    const int K = (int)w->ne[0];
    mv.W[0] = (const uint8_t *)w->data; mv.out[0] = out; mv.scale[0] = w->scale; mv.start[1] = (int)w->ne[1]; mv.n = 1; mv.add = add;
    if (wu) { mv.W[1] = (const uint8_t *)wu->data; mv.scale[1] = wu->scale; mv.start[2] = 2 * (int)w->ne[1]; mv.n = 2; mv.act = act; mv.limit = limit; }
    infer_cuda_mmx x;
    memset(&x, 0, sizeof x);
    x.q = q;
    infer_cuda_qout none;
    memset(&none, 0, sizeof none);
    infer_cuda_mmv_launch<T>(c, mv, infer_type_row_size(w->type, K), x, K, rows, wu != NULL, none);
}

static int infer_cuda_mvq_u = 2;          /* a one-row k_mvq's slices at once (mvq_block's U; INFER_CUDA_MVQ_U=1: one) */
/* The fast mode's matvec (k_quant_x, then k_mvq) where the type has one and the pointers
 * suit its loads; 0: the caller runs k_matvec instead. glu: mv is (gate, up); qo (or NULL):
 * the GLU's output also quantized there. */
template <class E = MvPlain>
static int infer_cuda_matvec_fast(infer_cuda_ctx *c, infer_type t, const infer_cuda_mv &mv, size_t rb, const float *x, int K, int rows, int glu,
                                  infer_cuda_xq *xq, const infer_cuda_qout *qo = NULL, const infer_cuda_mvn *nm = NULL, const E &e = E()) {
    infer_cuda_qout q;
    memset(&q, 0, sizeof q);
    if (qo && glu) q = *qo;
    infer_cuda_mvn n;
    memset(&n, 0, sizeof n);
    if (nm) n = *nm;
    const int kind = infer_cuda_mv_kind(t, mv.W, glu ? 2 : mv.n, rb, x, K);
    if (!kind || (nm && (kind != 3 || rows != 1))) return 0;    /* (the norm: infer_cuda_norm_mv_ok has checked) */
    infer_cuda_xq own = { 0, NULL, NULL };
    const void *xa;
    const float2 *xds;
    if (!infer_cuda_mv_x(c, kind, nm ? nm->x : x, K, rows, xq ? xq : &own, &xa, &xds)) return 1;
    c->qt_rows = 0;                           /* (infer_cuda_tiles_last: no tiles this time) */
    c->qt_splits = 0;
    if (infer_cuda_mmv_rows(c, rows)) {         /* k_mmv's rows: the tensor-core matvec, where the type has one */
        int done = 0;
        infer_cuda_with_type(t, [&](auto ty) {
            constexpr int T = decltype(ty)::id;
            if constexpr (infer_cuda_mmv_xf<T>() == 1) {
                infer_cuda_mmx xm;
                memset(&xm, 0, sizeof xm);
                xm.codes = (const int8_t *)xa;
                xm.ds = xds;
                infer_cuda_mmv_launch<T, E>(c, mv, rb, xm, K, rows, glu, q, e);
                done = 1;
            }
        });
        if (done) return 1;
    }
    const int ry = rows > 1 ? (rows + INFER_CUDA_MV_ROWS - 1) / INFER_CUDA_MV_ROWS : 1;   /* k_mvq's row blocks, side by side */
    const dim3 grid((unsigned)(infer_cuda_mv_groups(mv, glu, INFER_CUDA_MVQ_COLS) * ry));
    const int nt = infer_cuda_mvq_threads(t, K);
    infer_cuda_typed(c, t, "matmul", [&](auto ty) {
        constexpr int T = decltype(ty)::id, R = INFER_CUDA_MV_ROWS;
        if constexpr (Mv<T>::KIND != 0) {
            const int u2 = rows == 1 && infer_cuda_mvq_u == 2;     /* one row: two slices at once (mvq_block) */
            if constexpr (Mv<T>::KIND == 3) {                         /* one row normalised on the way in */
                if (nm) {
                    if (!glu) {
                        if (u2) INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 0, 2, 1, E>)(mv, rb, xa, xds, K, rows, q, n, e);
                        else INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 0, 1, 1, E>)(mv, rb, xa, xds, K, rows, q, n, e);
                    } else if constexpr (E::plain) {
                        if (u2) INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 1, 2, 1>)(mv, rb, xa, xds, K, rows, q, n, e);
                        else INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 1, 1, 1>)(mv, rb, xa, xds, K, rows, q, n, e);
                    }
                    return;
                }
            }
            if (!glu) {
                if (u2) INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 0, 2, 0, E>)(mv, rb, xa, xds, K, rows, q, n, e);
                else if (rows == 1) INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 0, 1, 0, E>)(mv, rb, xa, xds, K, rows, q, n, e);
                else INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, R, 0, 1, 0, E>)(mv, rb, xa, xds, K, rows, q, n, e);
            } else if constexpr (E::plain) {   /* (the GLU: plain stores only) */
                if (u2) INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 1, 2>)(mv, rb, xa, xds, K, rows, q, n, e);
                else if (rows == 1) INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, 1, 1>)(mv, rb, xa, xds, K, rows, q, n, e);
                else INFER_CUDA_LAUNCH(grid, nt, 0, c, k_mvq<T, R, 1>)(mv, rb, xa, xds, K, rows, q, n, e);
            }
        }
    });
    return 1;
}

/* x [rows, K] quantized for the int8 tiles of weight type T (k_quant_act) into the context's
 * own buffer -- not `scratch`, which holds matmul_glu's second product and matmul_id's
 * grouping while the tiles run; 0 when no buffer can be had (the error is kept) */
template <int T> static int infer_cuda_quant_tiles(infer_cuda_ctx *c, const float *x, int rows, int K, infer_cuda_q8x *xq) {
    const size_t nb = (size_t)rows * (size_t)(K / 32), qb = ((size_t)rows * (size_t)K + 255) & ~(size_t)255, db = (nb * 4 + 255) & ~(size_t)255;
    if (qb + 2 * db > c->xq_bytes) {
        infer_cuda_flush(c);                  /* recorded launches may use the old buffer */
        if (c->xq) {
            infer_cuda_record(c, cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
            infer_cuda_record(c, cudaFree(c->xq), "cudaFree");
            c->xq = NULL;
            c->xq_bytes = 0;
        }
        cudaError_t e = cudaMalloc(&c->xq, qb + 2 * db);
        if (e != cudaSuccess) { c->xq = NULL; infer_cuda_record(c, e, "cudaMalloc (quantized activations)"); return 0; }
        c->xq_bytes = qb + 2 * db;
    }
    xq->q = (int8_t *)c->xq;
    xq->d = (float *)((char *)c->xq + qb);
    xq->s = (int32_t *)((char *)c->xq + qb + db);
    const int64_t warps = (int64_t)rows * ((K + 255) / 256);
    INFER_CUDA_LAUNCH((unsigned)((warps + 7) / 8), 256, 0, c, k_quant_act<Dq8<T>::act>)(*xq, x, K, rows);
    INFER_CUDA_LAUNCHED(c, "matmul (quantizing the activations)");
    return 1;
}

/* the 16-bit tiles' two-stage form (k_matmul_tiled<T, 3>) where its 16-byte copies and loads may go */
static int infer_cuda_half_async(const void *W, const float *x, size_t rb) { return (((uintptr_t)W | (uintptr_t)x | (uintptr_t)rb) & 15) == 0; }
/* ---- the int8 tiles' launches: the tile's rows from the row count, K split for short grids ---- */
static int infer_cuda_qt_force = -1;      /* the tests: splits of every plain int8 tile launch (1: none); -1: chosen here */
/* tile rows for a matmul of `rows` rows (matmul_id: an expert's rows on average) */
static int infer_cuda_qt_rows(int rows) { return rows <= 16 ? 16 : rows <= 32 ? 32 : 64; }
/* the most tiles a split grid has (4 waves: beyond, a split saves at most a quarter of a
 * wave), and the count buffer's length */
static int infer_cuda_qt_cap(void) { return 4 * INFER_CUDA_QT_WAVE * infer_cuda_sms; }
/* K's splits for a grid of `tiles` tiles and `steps` steps of K. The grid runs in waves of
 * slots = INFER_CUDA_QT_WAVE x SMs blocks; S splits make S times the blocks at 1/S the work
 * each, so the time goes as waves(S) / S = ceil(tiles S / slots) / S. The smallest S that
 * cuts that by an eighth or more over the best so far (the fix-up's partial tiles cost
 * memory traffic): 32 tiles on 264 slots split 8 ways; 256 tiles (0.97 of a wave) none. */
static int infer_cuda_qt_splits(int tiles, int steps) {
    const int slots = INFER_CUDA_QT_WAVE * infer_cuda_sms;
    if (tiles >= infer_cuda_qt_cap()) return 1;
    int best = 1;
    double cost = (double)((tiles + slots - 1) / slots);
    for (int s = 2; s <= steps && s <= INFER_CUDA_QT_SPLITS; s++) {
        const double c = (double)(((int64_t)tiles * s + slots - 1) / slots) / s;
        if (c < 0.875 * cost) { best = s; cost = c; }
    }
    return best;
}
/* split-K's buffer: a count per tile (zeros, and every launch leaves them zeros), then the
 * partial tiles; grown outside a recorded step, like the activations' buffer. 0: no memory
 * (the error is kept). */
static int infer_cuda_qt_space(infer_cuda_ctx *c, size_t floats, int **count, float **part) {
    const size_t cb = ((size_t)infer_cuda_qt_cap() * sizeof(int) + 255) & ~(size_t)255, need = cb + floats * sizeof(float);
    if (need > c->qt_bytes) {
        infer_cuda_flush(c);                  /* recorded launches may use the old buffer */
        if (c->qt) {
            infer_cuda_record(c, cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
            infer_cuda_record(c, cudaFree(c->qt), "cudaFree");
            c->qt = NULL;
            c->qt_bytes = 0;
        }
        cudaError_t e = cudaMalloc(&c->qt, need);
        if (e == cudaSuccess) e = cudaMemsetAsync(c->qt, 0, cb, c->stream);
        if (e != cudaSuccess) {
            if (c->qt) cudaFree(c->qt);
            c->qt = NULL;
            infer_cuda_record(c, e, "cudaMalloc (split-K partial tiles)");
            return 0;
        }
        c->qt_bytes = need;
    }
    *count = (int *)c->qt;
    *part = (float *)((char *)c->qt + cb);
    return 1;
}
/* a kernel's dynamic shared memory beyond the default 48 KB, allowed once per kernel */
static void infer_cuda_qt_shm(infer_cuda_ctx *c, const void *k, int bytes, int *done) {
    if (*done) return;
    infer_cuda_record(c, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), "cudaFuncSetAttribute (int8 tiles)");
    *done = 1;
}
/* out = W x (add: out += W x) on BM-row int8 tiles, x quantized in q, K split as
 * infer_cuda_qt_splits says (at most one split a step; each split whole steps, none empty) */
template <int T, int BM>
static void infer_cuda_qt_launch(infer_cuda_ctx *c, float *out, const uint8_t *W, size_t rb, const infer_cuda_q8x &q, int K, int N, int rows, float scale, int add) {
    static int shm_done;
    const int gx = (N + INFER_CUDA_QT - 1) / INFER_CUDA_QT, gy = (rows + BM - 1) / BM, tiles = gx * gy, cap = infer_cuda_qt_cap();
    const int steps = (K / 32 + INFER_CUDA_QT_B - 1) / INFER_CUDA_QT_B;
    int splits = infer_cuda_qt_force >= 0 ? infer_cuda_qt_force : infer_cuda_qt_splits(tiles, steps);
    if (splits > INFER_CUDA_QT_SPLITS) splits = INFER_CUDA_QT_SPLITS;
    if (splits > steps) splits = steps;
    if (splits < 1 || tiles > cap) splits = 1;
    const int sps = steps > 0 ? (steps + splits - 1) / splits : 1;
    splits = steps > 0 ? (steps + sps - 1) / sps : 1;
    int *count = NULL;
    float *part = NULL;
    if (splits > 1 && !infer_cuda_qt_space(c, (size_t)tiles * (size_t)splits * QtShape<BM>::ACC * INFER_CUDA_QT_THREADS, &count, &part)) return;
    infer_cuda_qt_shm(c, (const void *)k_matmul_q8<T, BM>, QtShape<BM>::SHM, &shm_done);
    c->qt_rows = BM;
    c->qt_splits = splits;
    INFER_CUDA_LAUNCH(dim3(gx, gy, splits), INFER_CUDA_QT_THREADS, QtShape<BM>::SHM, c, k_matmul_q8<T, BM>)(out, W, rb, q, K, N, rows, scale, add, sps, part, count);
}
template <int T> static void infer_cuda_qt(infer_cuda_ctx *c, float *out, const uint8_t *W, size_t rb, const infer_cuda_q8x &q, int K, int N, int rows, float scale, int add) {
    const int bm = infer_cuda_qt_rows(rows);
    if (bm == 16) infer_cuda_qt_launch<T, 16>(c, out, W, rb, q, K, N, rows, scale, add);
    else if (bm == 32) infer_cuda_qt_launch<T, 32>(c, out, W, rb, q, K, N, rows, scale, add);
    else infer_cuda_qt_launch<T, 64>(c, out, W, rb, q, K, N, rows, scale, add);
}
/* matmul_id's int8 tiles: n_out (token, slot) rows over E experts, grouped (start, order) */
template <int T, int BM>
static void infer_cuda_qt_id_launch(infer_cuda_ctx *c, float *out, const uint8_t *W, size_t rb, const infer_cuda_q8x &q, const int32_t *start, const int32_t *order,
                                    int K, int N, int n_out, int E, int n_used, int x_per_slot, float scale) {
    static int shm_done;
    infer_cuda_qt_shm(c, (const void *)k_matmul_id_q8<T, BM>, QtShape<BM>::SHM, &shm_done);
    c->qt_rows = BM;
    c->qt_splits = 1;
    const dim3 grid((N + INFER_CUDA_QT - 1) / INFER_CUDA_QT, (n_out + BM - 1) / BM, E);
    INFER_CUDA_LAUNCH(grid, INFER_CUDA_QT_THREADS, QtShape<BM>::SHM, c, k_matmul_id_q8<T, BM>)(out, W, rb, q, start, order, K, N, n_used, x_per_slot, scale);
}
template <int T>
static void infer_cuda_qt_id(infer_cuda_ctx *c, float *out, const uint8_t *W, size_t rb, const infer_cuda_q8x &q, const int32_t *start, const int32_t *order, int K,
                             int N, int n_out, int E, int n_used, int x_per_slot, float scale) {
    const int bm = infer_cuda_qt_rows((n_out + E - 1) / E);
    if (bm == 16) infer_cuda_qt_id_launch<T, 16>(c, out, W, rb, q, start, order, K, N, n_out, E, n_used, x_per_slot, scale);
    else if (bm == 32) infer_cuda_qt_id_launch<T, 32>(c, out, W, rb, q, start, order, K, N, n_out, E, n_used, x_per_slot, scale);
    else infer_cuda_qt_id_launch<T, 64>(c, out, W, rb, q, start, order, K, N, n_out, E, n_used, x_per_slot, scale);
}

/* rows <= INFER_CUDA_MV_ROWS against the weights of mv (one type, one K) by k_matvec;
 * glu (one row): mv is (gate, up) */
static void infer_cuda_matvec_f32(infer_cuda_ctx *c, infer_type t, const infer_cuda_mv &mv, size_t rb, const float *x, int K, int rows, int glu) {
    const int cols = glu ? mv.start[1] : mv.start[mv.n];
    const dim3 grid((cols + INFER_CUDA_MV_WARPS - 1) / INFER_CUDA_MV_WARPS, rows > 1 ? (rows + INFER_CUDA_MV_ROWS - 1) / INFER_CUDA_MV_ROWS : 1);
    infer_cuda_typed(c, t, "matmul", [&](auto ty) {
        constexpr int T = decltype(ty)::id;
        const int threads = 32 * INFER_CUDA_MV_WARPS;
        if (glu) INFER_CUDA_LAUNCH(grid, threads, 0, c, k_matvec<T, 1, 1>)(mv, rb, x, K, rows);
        else if (rows == 1) INFER_CUDA_LAUNCH(grid, threads, 0, c, k_matvec<T, 1, 0>)(mv, rb, x, K, rows);
        else INFER_CUDA_LAUNCH(grid, threads, 0, c, k_matvec<T, INFER_CUDA_MV_ROWS, 0>)(mv, rb, x, K, rows);
    });
}
/* rows <= INFER_CUDA_MV_ROWS: the fast mode's k_mvq where it applies, else k_matvec (the
 * precise mode always) */
static void infer_cuda_matvec(infer_cuda_ctx *c, infer_type t, const infer_cuda_mv &mv, size_t rb, const float *x, int K, int rows, infer_cuda_xq *xq = NULL) {
    if (!c->precise && infer_cuda_matvec_fast(c, t, mv, rb, x, K, rows, 0, xq)) return;
    infer_cuda_matvec_f32(c, t, mv, rb, x, K, rows, 0);
}
/* out = W x (add: out += W x) of one weight on the decode matvec; xq (or NULL): x's int8 form
 * where the kernel that wrote x also wrote it */
static void infer_cuda_matvec_w(infer_cuda_ctx *c, float *out, const infer_tensor *w, const float *x, int rows, int add, infer_cuda_xq *xq = NULL) {
    const int K = (int)w->ne[0];
    infer_cuda_mv mv;
    memset(&mv, 0, sizeof mv);
    mv.W[0] = (const uint8_t *)w->data; mv.out[0] = out; mv.scale[0] = w->scale; mv.start[1] = (int)w->ne[1]; mv.n = 1; mv.add = add;
    infer_cuda_matvec(c, w->type, mv, infer_type_row_size(w->type, K), x, K, rows, xq);
}

/* x as the int8 tiles last quantized it (the context's xq buffer): matmul_n's weights of one
 * activation format share one quantization of their x. Launches run in stream order, so a
 * later quantization into the same buffer never overtakes a tile still reading it. */
struct infer_cuda_xtiles { const float *x; int rows, K, act; infer_cuda_q8x q; const void *h; };

/* ---- F16 and BF16 weights, more than 8 rows, the fast mode: cuBLAS where the build has it.
 * The activations are rounded to the weight's format by k_round_half (the tiles' rounding),
 * then one cublasGemmEx with f32 accumulation and f32 output: the same maths as the tiles
 * (exact products of 16-bit values, f32 sums, in the library's order). Column-major, as
 * cuBLAS reads it, out^T [N x rows] = W [N x K] x^T: W's rows are the columns of a K x N
 * matrix (op T, lda = its row length), x's rows those of a K x rows one, out's rows those of
 * an N x rows one. The library's kernels are tuned per GPU; on the reference engine's
 * shapes they are the fast choice above 16 rows. The handle has a workspace of its own so
 * that a GEMM inside a captured graph allocates nothing. ---- */
#ifdef INFER_CUDA_GEMM
static int infer_cuda_gemm_mode = -1;     /* the tests: 0 the tiles, 1 the library, -1 the library where there is one */
#define INFER_CUDA_BLAS_WS (32u << 20)    /* cuBLAS's workspace on Hopper, as its documentation advises */
static int infer_cuda_blas_ready(infer_cuda_ctx *c) {
    if (c->blas) return 1;
    if (c->blas_failed) return 0;
    cublasHandle_t h = NULL;
    void *ws = NULL;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cudaMalloc(&ws, INFER_CUDA_BLAS_WS) != cudaSuccess || cublasSetStream(h, c->stream) != CUBLAS_STATUS_SUCCESS ||
        cublasSetWorkspace(h, ws, INFER_CUDA_BLAS_WS) != CUBLAS_STATUS_SUCCESS) {
        (void)cudaGetLastError();             /* no library: the tiles do the work, nothing failed */
        if (ws) cudaFree(ws);
        if (h) cublasDestroy(h);
        c->blas_failed = 1;
        return 0;
    }
    c->blas = h;
    c->blas_ws = ws;
    return 1;
}
/* the GEMM's operands, all of them, as the recorder's key (a step that repeats them is the same step) */
struct infer_cuda_gemm { const void *A, *B; float *C; int m, n, k, lda, ldb, ldc, type; float alpha, beta; };
static void infer_cuda_gemm_tag(void) {}
/* out [rows, N] = scale W x (+ out), W [N, K] rows lda elements apart, x [rows, K], both of
 * `type`, out's rows ldc apart (N, or more for some of a wider out's columns): one
 * cublasGemmEx (column-major: out^T = W^T^T x^T) through the step recorder */
static void infer_cuda_gemm_run(infer_cuda_ctx *c, float *out, const void *W, int lda, const void *x, int K, int N, int rows, int type, float scale, int add,
                                int ldc) {
    infer_cuda_gemm g;
    memset(&g, 0, sizeof g);                  /* the key's padding bytes too */
    g.A = W; g.B = x; g.C = out; g.m = N; g.n = rows; g.k = K; g.lda = lda; g.ldb = K; g.ldc = ldc;
    g.type = type;
    g.alpha = scale; g.beta = add ? 1.0f : 0.0f;
    infer_cuda_op(c, (const void *)&infer_cuda_gemm_tag, &g, sizeof g, [c, g]() {
        const cublasStatus_t st = cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, g.m, g.n, g.k, &g.alpha, g.A, (cudaDataType)g.type, g.lda, g.B,
                                               (cudaDataType)g.type, g.ldb, &g.beta, g.C, CUDA_R_32F, g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS && !c->error[0]) snprintf(c->error, sizeof c->error, "cuBLAS GEMM: %s", cublasGetStatusString(st));
    });
}
/* x [rows, K] rounded to the 16-bit format of type T (F16 or BF16) in the context's xh
 * buffer, or as xt says it already is there (q, k and v: x rounded once); NULL when no
 * buffer could be had (the error is kept) */
template <int T> static const typename half_of<T>::type *infer_cuda_round_x(infer_cuda_ctx *c, const float *x, int K, int rows, infer_cuda_xtiles *xt) {
    typedef typename half_of<T>::type H;
    if (xt && xt->x == x && xt->rows == rows && xt->K == K && xt->act == -T) return (const H *)xt->h;
    const int64_t n = (int64_t)rows * K;
    if (!infer_cuda_grow(c, &c->xh, &c->xh_bytes, (size_t)n * sizeof(H), "cudaMalloc (16-bit activations)")) return NULL;
    const int64_t blocks = (n + 8 * 256 - 1) / (8 * 256);
    INFER_CUDA_LAUNCH((unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, c, k_round_half<T>)((H *)c->xh, x, n);
    INFER_CUDA_LAUNCHED(c, "matmul (rounding the activations)");
    if (xt) { memset(xt, 0, sizeof *xt); xt->x = x; xt->rows = rows; xt->K = K; xt->act = -T; xt->h = c->xh; }
    return (const H *)c->xh;
}
/* out = scale W x (+ out): 1 when done (or its error kept), 0 when the tiles must do it */
template <int T> static int infer_cuda_gemm_half(infer_cuda_ctx *c, float *out, const uint8_t *W, size_t rb, const float *x, int K, int N, int rows, float scale,
                                                 int add, infer_cuda_xtiles *xt) {
    typedef typename half_of<T>::type H;
    if (infer_cuda_gemm_mode == 0 || !infer_cuda_blas_ready(c)) return 0;
    const H *xh = infer_cuda_round_x<T>(c, x, K, rows, xt);
    if (xh) infer_cuda_gemm_run(c, out, W, (int)(rb / sizeof(H)), xh, K, N, rows, T == INFER_TYPE_F16 ? CUDA_R_16F : CUDA_R_16BF, scale, add, N);
    return 1;
}
/* out = scale W x (+ out) for F32 weights in the fast mode (a DeltaNet layer's small gate
 * projections, a few columns over a prompt's rows: the tiles would give them a handful of
 * blocks): the library's f32 GEMM, no rounding of x; 0 when the tiles must do it */
static int infer_cuda_gemm_f32(infer_cuda_ctx *c, float *out, const uint8_t *W, size_t rb, const float *x, int K, int N, int rows, float scale, int add) {
    if (infer_cuda_gemm_mode == 0 || !infer_cuda_blas_ready(c)) return 0;
    infer_cuda_gemm_run(c, out, W, (int)(rb / sizeof(float)), x, K, N, rows, CUDA_R_32F, scale, add, N);
    return 1;
}

/* ---- quantized weights, a prompt's rows, the fast mode: BF16 tensor cores through cuBLAS.
 * From about 64 rows the int8 tiles' work per weight (a scale per 32-block and row, in f32,
 * after every MMA) costs more than reading the weights twice more (on an H100: 11% faster
 * here on a 64-row prompt, 1.6x at 256, 1.9x at 512; 17% slower on a 32-sequence decode
 * step): so the weight's columns are dequantized to BF16 (k_dequant_bf16, at most
 * INFER_CUDA_QGEMM_BYTES of them
 * at a time, into the context's wh buffer), x is rounded to BF16 (k_round_half, once for
 * matmul_n's weights), and one cublasGemmEx per piece of columns multiplies them with f32
 * accumulation, out's rows ldc = N apart. BF16 rather than F16: F16's largest value is 65504,
 * which a GLU's output can pass, and BF16 has f32's range. Each value rounded to BF16 is off
 * by at most 2^-9 of itself, less than the int8 codes' rounding costs the tiles (half a
 * step of 1/127 of a block's largest value): on gpu_qgemm's random data the result is about
 * twice as close to exact maths as the tiles'.
 * Rows from infer_cuda_qgemm_rows on (INFER_CUDA_QGEMM=tiles: never, =N: from N rows, to
 * time the two in one build); fewer go to the int8 tiles, whose cost grows with the rows
 * while this path's dequantization is the same for any. */
#define INFER_CUDA_QGEMM_ROWS 64
#define INFER_CUDA_QGEMM_BYTES (32u << 20)
static int infer_cuda_qgemm_rows = INFER_CUDA_QGEMM_ROWS;
static int infer_cuda_qgemm_cols = 0;         /* the tests: columns a piece (0: as many as the bytes allow) */
/* The dequantization is the same work at every call: run 8 timed it at half of a 64-sequence
 * decode step, where every step dequantizes every weight again. With INFER_CUDA_BF16_CACHE=MiB
 * in the environment (0, the default: off) a context keeps each weight's BF16 copy after its
 * first matmul of more than 8 rows, up to that many MiB in all, and those matmuls (from 9
 * rows: a batch of sequences too) go straight to the GEMM.
 * The copy costs 2 bytes a weight of GPU memory beside the quantized ones (llama-1b: 2.5 GB
 * beside 0.73 GB of Q4_0), so it is the caller's choice. The same BF16 values as the pieces,
 * so the same results. A copy is found by the weight's device address, shape and type, and
 * lives as long as the context: the weights must outlive it, as a session's model does.
 * INFER_CUDA_BF16_CACHE=auto: no fixed budget, a copy is made while a quarter of the GPU's
 * memory stays free after it. Returns the weight's copy, or NULL (not kept: over the budget,
 * or no memory to be had). */
#define INFER_CUDA_BF16_AUTO ((size_t)-1)
static size_t infer_cuda_bf16_cache_max = 0;
template <int T> static const __nv_bfloat16 *infer_cuda_bf16_cached(infer_cuda_ctx *c, const uint8_t *W, size_t rb, int K, int N) {
    if (!infer_cuda_bf16_cache_max) return NULL;
    for (size_t i = 0; i < c->wcache.size(); i++)
        if (c->wcache[i].W == W && c->wcache[i].T == T && c->wcache[i].K == K && c->wcache[i].N == N) return (const __nv_bfloat16 *)c->wcache[i].bf;
    const size_t bytes = (size_t)N * (size_t)K * 2;
    if (infer_cuda_bf16_cache_max == INFER_CUDA_BF16_AUTO) {
        size_t free_bytes = 0, total = 0;
        if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) { (void)cudaGetLastError(); return NULL; }
        if (free_bytes < bytes || free_bytes - bytes < total / 4) return NULL;
    } else if (c->wcache_bytes + bytes > infer_cuda_bf16_cache_max) return NULL;
    infer_cuda_flush(c);                      /* (an allocation: the step so far is issued, the rest unrecorded) */
    void *bf = NULL;
    if (cudaMalloc(&bf, bytes) != cudaSuccess) { (void)cudaGetLastError(); return NULL; }
    const int64_t chunks = (int64_t)N * (K / 32), blocks = (chunks + 255) / 256;
    INFER_CUDA_LAUNCH((unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, c, k_dequant_bf16<T>)((__nv_bfloat16 *)bf, W, rb, K, chunks);
    INFER_CUDA_LAUNCHED(c, "matmul (BF16 weights kept)");
    c->wcache.push_back({ W, T, K, N, bf });
    c->wcache_bytes += bytes;
    return (const __nv_bfloat16 *)bf;
}
template <int T> static int infer_cuda_gemm_q(infer_cuda_ctx *c, float *out, const uint8_t *W, size_t rb, const float *x, int K, int N, int rows, float scale, int add,
                                              infer_cuda_xtiles *xt) {
    /* with BF16 copies kept, every matmul past the matvec's rows reads them (a step of 16
     * sequences reads 2 bytes a weight once, where the int8 tiles' 16-row shape ran at a
     * third of the memory's rate); without, from infer_cuda_qgemm_rows */
    const int keep = infer_cuda_bf16_cache_max != 0 && rows > INFER_CUDA_MV_ROWS;
    if ((rows < infer_cuda_qgemm_rows && !keep) || K % 32 || infer_cuda_gemm_mode == 0 || !infer_cuda_blas_ready(c)) return 0;
    const __nv_bfloat16 *kept = keep ? infer_cuda_bf16_cached<T>(c, W, rb, K, N) : NULL;
    if (!kept && rows < infer_cuda_qgemm_rows) return 0;   /* (not kept: over the budget) */
    c->qt_rows = -1;                          /* (infer_cuda_tiles_last: the library GEMM) */
    c->qt_splits = 0;
    const __nv_bfloat16 *xh = infer_cuda_round_x<INFER_TYPE_BF16>(c, x, K, rows, xt);
    if (kept) {
        if (xh) infer_cuda_gemm_run(c, out, kept, K, xh, K, N, rows, CUDA_R_16BF, scale, add, N);
        return 1;
    }
    /* columns a piece: a multiple of 8 (each piece's out then starts 32-byte aligned, as the
     * library's fastest kernels want), at least 8 */
    const int cols = infer_cuda_qgemm_cols > 0 ? infer_cuda_qgemm_cols : (int)(INFER_CUDA_QGEMM_BYTES / (2 * (size_t)K)) / 8 * 8;
    const int nc = cols < 8 && infer_cuda_qgemm_cols <= 0 ? 8 : cols < N ? cols : N;
    if (!xh || !infer_cuda_grow(c, &c->wh, &c->wh_bytes, (size_t)nc * (size_t)K * 2, "cudaMalloc (BF16 weights)")) return 1;
    for (int n0 = 0; n0 < N; n0 += nc) {
        const int m = N - n0 < nc ? N - n0 : nc;
        const int64_t chunks = (int64_t)m * (K / 32), blocks = (chunks + 255) / 256;
        INFER_CUDA_LAUNCH((unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, c, k_dequant_bf16<T>)((__nv_bfloat16 *)c->wh, W + (size_t)n0 * rb, rb, K, chunks);
        INFER_CUDA_LAUNCHED(c, "matmul (BF16 weights)");
        infer_cuda_gemm_run(c, out + n0, c->wh, K, xh, K, m, rows, CUDA_R_16BF, scale, add, N);
    }
    return 1;
}
#endif
/* Does the decode matvec take these rows, its activations of `kind` (infer_cuda_mv_kind)? Up
 * to 8 rows always; up to infer_cuda_mvq_rows (8: 9-16 rows ran faster on the tiles on an
 * H100; up to 64 by INFER_CUDA_MVQ_ROWS) in the
 * fast mode with int8 activations (a batch of sequences: row blocks of k_mvq side by side a
 * column pair, the weights read once from memory, where the int8 tiles' smallest tile would
 * run 16 rows of MMA over a step's weights). */
static int infer_cuda_mvq_rows = INFER_CUDA_MVQ_ROWS;   /* the tests: 8 sends 9-16 rows to the tiles, 64 up to 64 to the matvec */
static int infer_cuda_mvq_clamp(int rows) { return rows < INFER_CUDA_MV_ROWS ? INFER_CUDA_MV_ROWS : rows > INFER_CUDA_MVQ_MAX ? INFER_CUDA_MVQ_MAX : rows; }
static int infer_cuda_mv_rows(const infer_cuda_ctx *c, int rows, int kind) {
    return rows >= 1 && (rows <= INFER_CUDA_MV_ROWS || (!c->precise && (rows <= infer_cuda_mvq_rows || infer_cuda_mmv_rows(c, rows)) && (kind == 1 || kind == 2)));
}
/* the kind of x's activations for w's fast matvec where these rows take one (else 0) */
static int infer_cuda_fused_kind(const infer_cuda_ctx *c, const infer_tensor *w, const float *x, int rows);

/* out = W x, or (add) out += W x; xt (or NULL): x's quantization for the int8 tiles, reused
 * when it is of this x in this format, else made and noted there */
static void infer_cuda_matmul_to(infer_cuda_ctx *c, float *out, const infer_tensor *w, const float *x, int rows, int add, infer_cuda_xtiles *xt = NULL) {
    const int K = (int)w->ne[0], N = (int)w->ne[1];
    const size_t rb = infer_type_row_size(w->type, K);
    const uint8_t *W = (const uint8_t *)w->data;
    if (rows <= 0) return;
    if (rows <= INFER_CUDA_MV_ROWS || infer_cuda_fused_kind(c, w, x, rows)) {
        infer_cuda_matvec_w(c, out, w, x, rows, add);
    } else {
        dim3 grid((N + INFER_CUDA_TILE - 1) / INFER_CUDA_TILE, (rows + INFER_CUDA_TILE - 1) / INFER_CUDA_TILE);
        infer_cuda_typed(c, w->type, "matmul", [&](auto ty) {
            constexpr int T = decltype(ty)::id;
            if constexpr (Dq8<T>::ok)
                if (!c->precise && infer_cuda_mma8) {      /* the fast mode, a quantized type: int8 tiles (k_mmv's rows where on; a long prompt: BF16 GEMM) */
                    const int mmv = infer_cuda_mmv_rows(c, rows) && infer_cuda_mmv_xf<T>() == 0;   /* (the others' k_mmv rows: the matvec's path) */
#ifdef INFER_CUDA_GEMM
                    if (!mmv && infer_cuda_gemm_q<T>(c, out, W, rb, x, K, N, rows, w->scale, add, xt)) return;
#endif
                    infer_cuda_q8x q;
                    if (xt && xt->x == x && xt->rows == rows && xt->K == K && xt->act == (int)Dq8<T>::act) q = xt->q;
                    else if (!infer_cuda_quant_tiles<T>(c, x, rows, K, &q)) return;
                    else if (xt) *xt = infer_cuda_xtiles{ x, rows, K, (int)Dq8<T>::act, q, NULL };
                    if (mmv) infer_cuda_mmv_tiles<T>(c, out, w, NULL, q, rows, add, 0, 0.0f);
                    else infer_cuda_qt<T>(c, out, W, rb, q, K, N, rows, w->scale, add);
                    return;
                }
            if constexpr (T == INFER_TYPE_F16 || T == INFER_TYPE_BF16)
                if (!c->precise && infer_cuda_mma8) {      /* the fast mode, 16-bit weights: 16-bit tensor cores */
#ifdef INFER_CUDA_GEMM
                    c->half_gemm = 1;
                    if (infer_cuda_gemm_half<T>(c, out, W, rb, x, K, N, rows, w->scale, add, xt)) return;
#endif
                    c->half_gemm = 0;
                    if (infer_cuda_half_async(W, x, rb)) INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_tiled<T, 3>)(out, W, rb, x, K, N, rows, w->scale, add);
                    else INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_tiled<T, 2>)(out, W, rb, x, K, N, rows, w->scale, add);
                    return;
                }
#ifdef INFER_CUDA_GEMM
            if constexpr (T == INFER_TYPE_F32)
                if (!c->precise && infer_cuda_gemm_f32(c, out, W, rb, x, K, N, rows, w->scale, add)) return;
#endif
            if (c->precise) INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_tiled<T, 0>)(out, W, rb, x, K, N, rows, w->scale, add);
            else INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_tiled<T, 1>)(out, W, rb, x, K, N, rows, w->scale, add);
        });
    }
}
static void infer_cuda_matmul(void *ctx, float *out, const infer_tensor *w, const float *x, int rows) {
    infer_cuda_matmul_to((infer_cuda_ctx *)ctx, out, w, x, rows, 0);
}
/* y += W x: the residual add done by the matmul's own stores */
static void infer_cuda_matmul_add(void *ctx, float *y, const infer_tensor *w, const float *x, int rows) {
    infer_cuda_matmul_to((infer_cuda_ctx *)ctx, y, w, x, rows, 1);
}

/* out = act(Wg x) * (Wu x): one launch when the two share a type and K -- up to 8 rows in
 * the fast mode (k_mvq; 16 with int8 activations), one row in the precise mode (k_matvec); otherwise matmul_n of the
 * two into out and a scratch buffer, then glu */
static void infer_cuda_glu(void *ctx, float *out, const float *gate, const float *up, int64_t n, int act, float limit);
static int infer_cuda_reserve(infer_cuda_ctx *c, size_t bytes);
static void infer_cuda_matmul_n(void *ctx, int n, float *const *out, const infer_tensor *const *w, const float *x, int rows);
static void infer_cuda_matmul_glu(void *ctx, float *out, const infer_tensor *wg, const infer_tensor *wu, const float *x, int rows, int act, float limit) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    const int K = (int)wg->ne[0], N = (int)wg->ne[1];
    if ((rows <= INFER_CUDA_MV_ROWS || infer_cuda_fused_kind(c, wg, x, rows)) && wu->type == wg->type && wu->ne[0] == K && wu->ne[1] == N) {
        infer_cuda_mv mv;
        memset(&mv, 0, sizeof mv);
        mv.W[0] = (const uint8_t *)wg->data; mv.W[1] = (const uint8_t *)wu->data;
        mv.out[0] = out; mv.scale[0] = wg->scale; mv.scale[1] = wu->scale;
        mv.start[1] = N; mv.start[2] = 2 * N; mv.n = 2; mv.act = act; mv.limit = limit;
        const size_t rb = infer_type_row_size(wg->type, K);
        if (!c->precise && infer_cuda_matvec_fast(c, wg->type, mv, rb, x, K, rows, 1, NULL)) return;
        if (rows == 1) { infer_cuda_matvec_f32(c, wg->type, mv, rb, x, K, rows, 1); return; }
    }
    if (infer_cuda_mmv_rows(c, rows) && wu->type == wg->type && wu->ne[0] == K && wu->ne[1] == N) {   /* k_mmv's rows: its GLU */
        int done = 0;
        infer_cuda_with_type(wg->type, [&](auto ty) {
            constexpr int T = decltype(ty)::id;
            if constexpr (infer_cuda_mmv_xf<T>() == 0) {
                done = 1;
                infer_cuda_q8x q;
                if (infer_cuda_quant_tiles<T>(c, x, rows, K, &q)) infer_cuda_mmv_tiles<T>(c, out, wg, wu, q, rows, 0, act, limit);
            }
        });
        if (done) return;
    }
    const size_t n = (size_t)rows * (size_t)wu->ne[1];
    if (!infer_cuda_reserve(c, n * sizeof(float))) return;
    float *up = (float *)c->scratch;
    float *const outs[2] = { out, up };
    const infer_tensor *const ws[2] = { wg, wu };
    infer_cuda_matmul_n(ctx, 2, outs, ws, x, rows);
    infer_cuda_glu(ctx, out, out, up, (int64_t)n, act, limit);
}

/* n weights reading the same x: for a decode step, one launch per group of weights that share
 * a type (all of them, usually), and in the fast mode one quantization of x for all groups of
 * one activation format */
static void infer_cuda_matmul_n_xq(infer_cuda_ctx *c, int n, float *const *out, const infer_tensor *const *w, const float *x, int rows, infer_cuda_xq xq);
static void infer_cuda_matmul_n(void *ctx, int n, float *const *out, const infer_tensor *const *w, const float *x, int rows) {
    const infer_cuda_xq none = { 0, NULL, NULL };
    infer_cuda_matmul_n_xq((infer_cuda_ctx *)ctx, n, out, w, x, rows, none);
}
/* ... xq: x already quantized (its kind, 0 when not), as infer_cuda_rmsnorm_matmul_n leaves it */
static void infer_cuda_matmul_n_xq(infer_cuda_ctx *c, int n, float *const *out, const infer_tensor *const *w, const float *x, int rows, infer_cuda_xq xq) {
    int mv_ok = rows >= 1 && n <= 32;         /* above 8 rows, every weight's matvec must take them */
    for (int i = 0; mv_ok && rows > INFER_CUDA_MV_ROWS && i < n; i++) mv_ok = infer_cuda_fused_kind(c, w[i], x, rows) != 0;
    if (!mv_ok) {
        infer_cuda_xtiles xt = { NULL, 0, 0, 0, { NULL, NULL, NULL }, NULL };   /* q, k and v (gate and up): x quantized once */
        for (int i = 0; i < n; i++) infer_cuda_matmul_to(c, out[i], w[i], x, rows, 0, &xt);
        return;
    }
    unsigned done = 0;
    for (int i = 0; i < n; i++) {
        if (done >> i & 1) continue;
        infer_cuda_mv mv;
        memset(&mv, 0, sizeof mv);
        for (int j = i; j < n && mv.n < INFER_CUDA_MV_MAXW; j++) {
            if ((done >> j & 1) || w[j]->type != w[i]->type || w[j]->ne[0] != w[i]->ne[0]) continue;
            mv.W[mv.n] = (const uint8_t *)w[j]->data;
            mv.out[mv.n] = out[j];
            mv.scale[mv.n] = w[j]->scale;
            mv.start[mv.n + 1] = mv.start[mv.n] + (int)w[j]->ne[1];
            mv.n++;
            done |= 1u << j;
        }
        const int K = (int)w[i]->ne[0];
        infer_cuda_matvec(c, w[i]->type, mv, infer_type_row_size(w[i]->type, K), x, K, rows, &xq);
    }
}

static void infer_cuda_matmul_id(void *ctx, float *out, const infer_tensor *w, const float *x, const int32_t *ids, int rows, int n_used, int x_per_slot) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const int K = (int)w->ne[0], N = (int)w->ne[1], E = (int)w->ne[2], n_out = rows * n_used;
    const size_t rb = infer_type_row_size(w->type, K);
    const uint8_t *W = (const uint8_t *)w->data;
    if (rows <= 0 || n_used <= 0) return;
    if (rows > INFER_CUDA_MV_ROWS) {            /* a prompt: group the rows by expert, then tiles */
        if (!infer_cuda_reserve(c, ((size_t)E + 1 + (size_t)E + (size_t)n_out) * sizeof(int32_t))) return;
        int32_t *start = (int32_t *)c->scratch, *fill = start + E + 1, *order = fill + E;
        INFER_CUDA_LAUNCH(1, 1024, 0, c, k_moe_group)(ids, n_out, E, start, fill, order);
        INFER_CUDA_LAUNCHED(c, "matmul_id (grouping)");
        dim3 grid((N + INFER_CUDA_TILE - 1) / INFER_CUDA_TILE, (n_out + INFER_CUDA_TILE - 1) / INFER_CUDA_TILE, E);
        infer_cuda_typed(c, w->type, "matmul_id", [&](auto ty) {
            constexpr int T = decltype(ty)::id;
            if constexpr (Dq8<T>::ok)
                if (!c->precise && infer_cuda_mma8) {
                    infer_cuda_q8x q;
                    if (infer_cuda_quant_tiles<T>(c, x, x_per_slot ? n_out : rows, K, &q))
                        infer_cuda_qt_id<T>(c, out, W, rb, q, start, order, K, N, n_out, E, n_used, x_per_slot, w->scale);
                    return;
                }
            if constexpr (T == INFER_TYPE_F16 || T == INFER_TYPE_BF16)
                if (!c->precise && infer_cuda_mma8) {
                    if (infer_cuda_half_async(W, x, rb))
                        INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_id_tiled<T, 3>)(out, W, rb, x, start, order, K, N, n_used, x_per_slot, w->scale);
                    else INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_id_tiled<T, 2>)(out, W, rb, x, start, order, K, N, n_used, x_per_slot, w->scale);
                    return;
                }
            if (c->precise) INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_id_tiled<T, 0>)(out, W, rb, x, start, order, K, N, n_used, x_per_slot, w->scale);
            else INFER_CUDA_LAUNCH(grid, 256, 0, c, k_matmul_id_tiled<T, 1>)(out, W, rb, x, start, order, K, N, n_used, x_per_slot, w->scale);
        });
        return;
    }
    const int kind = c->precise ? 0 : infer_cuda_mv_kind(w->type, &W, 1, rb, x, K);
    if (kind) {                                 /* the fast mode: k_mvq_id */
        infer_cuda_xq xq = { 0, NULL, NULL };
        const void *xa;
        const float2 *xds;
        if (!infer_cuda_mv_x(c, kind, x, K, x_per_slot ? n_out : rows, &xq, &xa, &xds)) return;
        const dim3 grid((N + INFER_CUDA_MVQ_COLS - 1) / INFER_CUDA_MVQ_COLS, n_out);
        infer_cuda_typed(c, w->type, "matmul_id", [&](auto ty) {
            constexpr int T = decltype(ty)::id;
            if constexpr (Mv<T>::KIND != 0)
                INFER_CUDA_LAUNCH(grid, infer_cuda_mvq_threads(w->type, K), 0, c, k_mvq_id<T>)(out, W, rb, xa, xds, ids, K, N, E, n_used, x_per_slot, w->scale);
        });
        return;
    }
    dim3 grid((N + INFER_CUDA_MV_WARPS - 1) / INFER_CUDA_MV_WARPS, rows * n_used);
    infer_cuda_typed(c, w->type, "matmul_id", [&](auto ty) {
        INFER_CUDA_LAUNCH(grid, 32 * INFER_CUDA_MV_WARPS, 0, c, k_matmul_id<decltype(ty)::id>)(out, W, rb, x, ids, K, N, E, n_used, x_per_slot, w->scale);
    });
}

static void infer_cuda_embed(void *ctx, float *out, const infer_tensor *table, const int32_t *tokens, int rows) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const int K = (int)table->ne[0], V = (int)table->ne[1], nch = (K + 31) / 32;
    const size_t rb = infer_type_row_size(table->type, K);
    const uint8_t *W = (const uint8_t *)table->data;
    if (rows <= 0) return;
    dim3 grid((nch + 127) / 128, rows);
    infer_cuda_typed(c, table->type, "embed", [&](auto ty) {
        INFER_CUDA_LAUNCH(grid, 128, 0, c, k_embed<decltype(ty)::id>)(out, W, rb, tokens, K, V, table->scale);
    });
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_elem -- norms and elementwise ops. A norm's block sums a whole row (block_sum);
 * an elementwise op is a grid-stride loop of 256-thread blocks over all the elements. Each
 * computes the CPU's formula, in the CPU's order where the order decides the rounding.
 * ---------------------------------------------------------------------------------------- */
/* RMSNorm: out = x / sqrt(mean(x^2) + eps) * w, the sum of squares in double as on the CPU.
 * Block (r, part) normalises part `part` of row r's elements; every block of a row sums the
 * whole row itself (a few KiB from L2), so a decode step's one row still spreads over
 * several blocks. In place (out == x) a row has one part: a block reads only what it writes. */
/* 1 / sqrt(mean(xr^2) + eps) of a row, by the whole block (the same threads, the same order
 * of sums wherever it is called with the same block size: k_rmsnorm_q's scale is k_rmsnorm's;
 * rms_scale_v, which k_mvq's NM calls with k_rmsnorm's block size, is this) */
__device__ __forceinline__ float rms_scale(const float *xr, int dim, float eps) { return rms_scale_v<1>(xr, dim, eps, blockDim.x); }
#define INFER_CUDA_NORM_THREADS(dim) ((dim) >= 1024 ? 256 : 128)
__global__ void k_rmsnorm(float *out, const float *x, const float *w, int dim, float eps, infer_cuda_pf pf) {
    INFER_CUDA_PDL_TRIGGER();
    l2_prefetch(pf);                                     /* (the float matvec's weights that read out, in a decode step) */
    INFER_CUDA_PDL_WAIT();
    const float *xr = x + (size_t)blockIdx.x * dim;
    float *o = out + (size_t)blockIdx.x * dim;
    const float scale = rms_scale(xr, dim, eps);
    const int per = (dim + gridDim.y - 1) / gridDim.y, i0 = blockIdx.y * per, i1 = i0 + per < dim ? i0 + per : dim;
    for (int i = i0 + threadIdx.x; i < i1; i += blockDim.x) o[i] = xr[i] * scale * (w ? w[i] : 1.0f);
}
static void infer_cuda_rmsnorm_pf(infer_cuda_ctx *c, float *out, const float *x, const float *w, int rows, int dim, float eps, const infer_cuda_pf &pf) {
    if (rows <= 0) return;
    int parts = out == x || rows >= infer_cuda_sms ? 1 : dim / 256;
    if (parts > 8) parts = 8;
    if (parts < 1) parts = 1;
    INFER_CUDA_LAUNCH(dim3(rows, parts), INFER_CUDA_NORM_THREADS(dim), 0, c, k_rmsnorm)(out, x, w, dim, eps, pf);
    INFER_CUDA_LAUNCHED(c, "rmsnorm");
}
static void infer_cuda_rmsnorm(void *ctx, float *out, const float *x, const float *w, int rows, int dim, float eps) {
    infer_cuda_pf none;
    memset(&none, 0, sizeof none);
    infer_cuda_rmsnorm_pf((infer_cuda_ctx *)ctx, out, x, w, rows, dim, eps, none);
}

/* RMSNorm feeding the fast matvec: k_rmsnorm's out, and the same floats quantized as
 * k_quant_x quantizes them (KIND 1: Q8_0 rules, 2: Q8_K) into codes [rows, dim] and xds
 * [rows, dim / 32]. Block (b, r) writes values 256 b .. 256 b + 256 of row r: every block
 * sums the row's squares itself (a few KiB from L2, k_rmsnorm's sum, so the same scale), so
 * a decode row is still spread over dim / 256 blocks; then a warp per quantization block
 * computes its normalised values, stores them and quantizes them from its registers. The
 * one launch replaces k_rmsnorm and k_quant_x. */
template <int KIND>
__global__ void k_rmsnorm_q(float *out, const float *x, const float *w, int dim, float eps, int8_t *codes, float2 *xds, infer_cuda_pf pf) {
    INFER_CUDA_PDL_TRIGGER();
    l2_prefetch(pf);                                     /* the matvec's first columns (before the wait, as the norm's weights) */
    const int r = blockIdx.y, i0 = 256 * blockIdx.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    /* the norm's weights (no kernel writes them) before the wait: their load overlaps the
     * kernel before, not the row's sum; a thread's first group (KIND 1) or warp 0's 8 (KIND 2) */
    float wv[8];
INFER_CUDA_UNROLL
    for (int j = 0; j < 8; j++) {
        const int i = KIND == 1 ? i0 + 32 * warp + lane : i0 + 8 * lane + j;
        wv[j] = w && (KIND == 1 ? j == 0 && warp < 8 : warp == 0) && i < dim ? w[i] : 1.0f;
    }
    INFER_CUDA_PDL_WAIT();
    const float *xr = x + (size_t)r * dim;
    float *o = out + (size_t)r * dim;
    int8_t *qr = codes + (size_t)r * dim;
    float2 *dr = xds + (size_t)r * (dim / 32);
    const float scale = rms_scale(xr, dim, eps);
    if (KIND == 1) {
        for (int g = warp; g < 8 && i0 + 32 * g < dim; g += nw) {
            const int i = i0 + 32 * g + lane;
            const float v = xr[i] * scale * (g == warp ? wv[0] : w ? w[i] : 1.0f);
            o[i] = v;
            quant_q8_0_warp(v, qr + i0 + 32 * g, dr + (i0 + 32 * g) / 32);
        }
    } else if (warp == 0) {
        float v[8];
INFER_CUDA_UNROLL
        for (int j = 0; j < 8; j++) {
            const int i = i0 + 8 * lane + j;
            v[j] = xr[i] * scale * wv[j];
            o[i] = v[j];
        }
        quant_q8_k_warp(v, qr + i0, dr + i0 / 32);
    }
}

/* ---- fused ops: the norm that feeds a decode matvec writes the matvec's int8 activations,
 * the GLU writes the down projection's. Kernel-table entries (infer.h: rmsnorm_matmul_n,
 * rmsnorm_ffn) rather than a memo inside the backend: the forward pass says which norm feeds
 * which weights, so the norm knows the weights' activation format before it runs (a
 * layer's q, k and v, or gate and up, may want Q8_0 or Q8_K bytes), and infer_backend_diff
 * holds each entry to the ops it stands for. Where a fusion does not apply (the precise
 * mode, more rows than the fast matvec takes, a weight type without int8 activations, shapes
 * that do not fit)
 * the entries run those ops one by one. */

/* w's first columns added to the L2 prefetch list pf (l2_prefetch): each range at most
 * INFER_CUDA_PF_MAX / INFER_CUDA_PF_N bytes, so the list stays well inside L2 (50 MiB on an
 * H100); a weight not 16-byte aligned, a full list, or the switch off adds nothing */
#define INFER_CUDA_PF_MAX (24u << 20)
static int infer_cuda_l2pf = 0;        /* off unless INFER_CUDA_L2PF=1: measured no faster (README) */
static void infer_cuda_pf_add(infer_cuda_pf *pf, const infer_tensor *w) {
    if (!infer_cuda_l2pf || !w || !w->data || (uintptr_t)w->data % 16) return;
    for (int i = 0; i < INFER_CUDA_PF_N; i++) {
        if (pf->bytes[i]) continue;
        const size_t cap = INFER_CUDA_PF_MAX / INFER_CUDA_PF_N, n = w->nbytes < cap ? w->nbytes : cap;
        pf->p[i] = (const uint8_t *)w->data;
        pf->bytes[i] = (uint32_t)(n / 16 * 16);
        return;
    }
}

/* a buffer of the context holding x [rows, K] quantized in infer_cuda_quant_x's layout (codes,
 * then 16-byte aligned (d, sum) pairs); 0 when it cannot be had (the error is kept) */
static int infer_cuda_xq_in(infer_cuda_ctx *c, void **buf, size_t *have, int K, int rows, int8_t **q, float2 **ds) {
    const size_t codes = ((size_t)rows * (size_t)K + 15) / 16 * 16;
    if (!infer_cuda_grow(c, buf, have, codes + (size_t)rows * (size_t)(K / 32) * sizeof(float2), "cudaMalloc (quantized activations)")) return 0;
    *q = (int8_t *)*buf;
    *ds = (float2 *)(*q + codes);
    return 1;
}

/* h = RMSNorm(x) * w for a matvec whose activations are of `kind` (infer_cuda_mv_kind): kind 1
 * or 2 and rows that split into its blocks, one k_rmsnorm_q launch that also quantizes h
 * into the context's xq buffer (returned as the matvec's memo); otherwise k_rmsnorm. */
static infer_cuda_xq infer_cuda_norm_for(infer_cuda_ctx *c, int kind, float *h, const float *x, const float *w, int rows, int dim, float eps,
                                         const infer_cuda_pf &pf) {
    infer_cuda_xq xq = { 0, NULL, NULL };
    if ((kind == 1 && dim % 32 == 0) || (kind == 2 && dim % 256 == 0)) {
        if (!infer_cuda_xq_in(c, &c->xq, &c->xq_bytes, dim, rows, &xq.q, &xq.ds)) return xq;
        const dim3 grid((dim + 255) / 256, rows);
        if (kind == 1) INFER_CUDA_LAUNCH(grid, INFER_CUDA_NORM_THREADS(dim), 0, c, k_rmsnorm_q<1>)(h, x, w, dim, eps, xq.q, xq.ds, pf);
        else INFER_CUDA_LAUNCH(grid, INFER_CUDA_NORM_THREADS(dim), 0, c, k_rmsnorm_q<2>)(h, x, w, dim, eps, xq.q, xq.ds, pf);
        INFER_CUDA_LAUNCHED(c, "rmsnorm (quantized)");
        xq.kind = kind;
        return xq;
    }
    infer_cuda_rmsnorm_pf(c, h, x, w, rows, dim, eps, pf);
    return xq;
}
/* does the fast decode matvec read x quantized, for this weight and these rows? its kind */
static int infer_cuda_fused_kind(const infer_cuda_ctx *c, const infer_tensor *w, const float *x, int rows) {
    if (c->precise || rows < 1 || (rows > infer_cuda_mvq_rows && !infer_cuda_mmv_rows(c, rows))) return 0;
    const int K = (int)w->ne[0];
    const uint8_t *W = (const uint8_t *)w->data;
    const int kind = infer_cuda_mv_kind(w->type, &W, 1, infer_type_row_size(w->type, K), x, K);
    return infer_cuda_mv_rows(c, rows, kind) ? kind : 0;
}
/* Can the kernel that writes x [rows, D] also write its int8 form for w's fast matvec: w reads
 * Q8_0 or Q8_K activations of D columns, whole blocks of them? Their kind (1, 2; *qs the block
 * size, 32 or 256), else 0. */
static int infer_cuda_quant_for(const infer_cuda_ctx *c, const infer_tensor *w, const float *x, int rows, int D, int *qs) {
    const int kind = w->ne[0] == D ? infer_cuda_fused_kind(c, w, x, rows) : 0;
    *qs = kind == 1 ? 32 : 256;
    return (kind == 1 || kind == 2) && D % *qs == 0 ? kind : 0;
}

/* The fast mode's one-row decode with float weights (F16, BF16, F32) needs no norm launch:
 * the matvec normalises x as it reads it (k_mvq's NM) -- the same scale and the same h as
 * k_rmsnorm, to the bit (rms_scale_v), h stored by the first column pair's blocks. Where it
 * applies: x, h and nw 16-byte aligned, x and h apart, the weights' fast kind the float one
 * (3), and INFER_CUDA_NORM_MV not 0. Fills nm; 0 where the norm must run on its own. */
static int infer_cuda_norm_mv = 1;
static int infer_cuda_norm_mv_ok(infer_cuda_ctx *c, infer_type t, const uint8_t *const *W, int n, size_t rb, const float *x, float *h, const float *nw,
                                 int K, int rows, float eps, infer_cuda_mvn *nm) {
    if (!infer_cuda_norm_mv || c->precise || rows != 1 || !nw || x == h || ((uintptr_t)x | (uintptr_t)h | (uintptr_t)nw) % 16 ||
        infer_cuda_mv_kind(t, W, n, rb, x, K) != 3)
        return 0;
    nm->x = x; nm->g = nw; nm->h = h; nm->eps = eps; nm->vt = INFER_CUDA_NORM_THREADS(K);
    return 1;
}

/* h = RMSNorm(x) * nw, then out[i] = W_i h: in the fast mode's decode the norm writes the
 * first weight's int8 activations, which matmul_n's groups of that format reuse; float
 * weights of one type and width, one row: the norm inside their matvec (infer_cuda_norm_mv_ok) */
/* mv of the n (at most INFER_CUDA_MV_MAXW) weights w, out[i] = W_i x: 1 when they share a
 * type and their K is dim, so one matvec launch can take them all */
static int infer_cuda_mv_all(infer_cuda_mv *mv, int n, float *const *out, const infer_tensor *const *w, int dim) {
    memset(mv, 0, sizeof *mv);
    int same = 1;
    for (int i = 0; i < n; i++) {
        same &= w[i]->type == w[0]->type && w[i]->ne[0] == dim;
        mv->W[i] = (const uint8_t *)w[i]->data; mv->out[i] = out[i]; mv->scale[i] = w[i]->scale;
        mv->start[i + 1] = mv->start[i] + (int)w[i]->ne[1];
    }
    mv->n = n;
    return same;
}
static void infer_cuda_rmsnorm_matmul_n(void *ctx, float *h, const float *x, const float *nw, int rows, int dim, float eps, int n,
                                        float *const *out, const infer_tensor *const *w) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    const int kind = n > 0 && h != x && w[0]->ne[0] == dim ? infer_cuda_fused_kind(c, w[0], h, rows) : 0;
    c->norm_mv = 0;
    if (kind == 3 && n <= INFER_CUDA_MV_MAXW) {
        infer_cuda_mv mv;
        const int same = infer_cuda_mv_all(&mv, n, out, w, dim);
        const size_t rb = infer_type_row_size(w[0]->type, dim);
        infer_cuda_mvn nm;
        if (same && infer_cuda_norm_mv_ok(c, w[0]->type, mv.W, n, rb, x, h, nw, dim, rows, eps, &nm) &&
            infer_cuda_matvec_fast(c, w[0]->type, mv, rb, h, dim, rows, 0, NULL, NULL, &nm)) {
            c->norm_mv = 1;
            return;
        }
    }
    infer_cuda_pf pf;
    memset(&pf, 0, sizeof pf);
    for (int i = 0; kind && i < n; i++) infer_cuda_pf_add(&pf, w[i]);
    const infer_cuda_xq xq = infer_cuda_norm_for(c, kind == 3 ? 0 : kind, h, x, nw, rows, dim, eps, pf);
    infer_cuda_matmul_n_xq(c, n, out, w, h, rows, xq);
}

/* The counters of mvq_quant_out, n of them, all 0 (set once when the buffer is made; each
 * launch leaves them 0); NULL when they cannot be had */
static int *infer_cuda_counters(infer_cuda_ctx *c, int n) {
    const size_t bytes = (size_t)n * sizeof(int);
    if (bytes > c->qcount_bytes) {
        if (!infer_cuda_grow(c, &c->qcount, &c->qcount_bytes, bytes, "cudaMalloc (counters)")) return NULL;
        infer_cuda_record(c, cudaMemsetAsync(c->qcount, 0, bytes, c->stream), "cudaMemsetAsync");   /* grow ended any recording */
    }
    return (int *)c->qcount;
}

/* The feed-forward block of a decode step: h = RMSNorm(x) * nw, hid = act(Wg h) * (Wu h),
 * x += Wd hid. In the fast mode, the rows the fast matvec takes, gate and up of one type and shape:
 * three launches -- k_rmsnorm_q (h and its int8 form), k_mvq's GLU (hid and, when Wd reads
 * int8 activations, their bytes: mvq_quant_out), k_mvq of Wd adding into x -- where the ops
 * one by one take five (gate and up of a float type with a quantized Wd: four, hid quantized
 * by k_quant_x). Otherwise rmsnorm, matmul_glu, matmul_add. */
static void infer_cuda_rmsnorm_ffn(void *ctx, float *x, float *h, float *hid, const float *nw, float eps, const infer_tensor *wg,
                                   const infer_tensor *wu, const infer_tensor *wd, int rows, int act, float limit) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    const int K = (int)wg->ne[0], F = (int)wg->ne[1];
    infer_cuda_mv mv;
    memset(&mv, 0, sizeof mv);
    mv.W[0] = (const uint8_t *)wg->data; mv.W[1] = (const uint8_t *)wu->data;
    mv.out[0] = hid; mv.scale[0] = wg->scale; mv.scale[1] = wu->scale;
    mv.start[1] = F; mv.start[2] = 2 * F; mv.n = 2; mv.act = act; mv.limit = limit;
    const size_t rb = infer_type_row_size(wg->type, K);
    const int fits = !c->precise && (rows <= infer_cuda_mvq_rows || infer_cuda_mmv_rows(c, rows)) && h != x && wu->type == wg->type && wu->ne[0] == K && wu->ne[1] == F &&
                     wd->ne[0] == F;
    int kin = fits ? infer_cuda_mv_kind(wg->type, mv.W, 2, rb, h, K) : 0;
    if (!infer_cuda_mv_rows(c, rows, kin)) kin = 0;
    if (!kin) {
        infer_cuda_rmsnorm(c, h, x, nw, rows, K, eps);
        infer_cuda_matmul_glu(c, hid, wg, wu, h, rows, act, limit);
        infer_cuda_matmul_add(c, x, wd, hid, rows);
        return;
    }
    int qsize;
    const int kout = infer_cuda_quant_for(c, wd, hid, rows, F, &qsize);
    infer_cuda_xq xd = { 0, NULL, NULL };
    infer_cuda_qout qo;
    memset(&qo, 0, sizeof qo);
    if (kin != 3 && kout) {                  /* the GLU quantizes hid for Wd (not a float GLU's) */
        const int ry = (rows + INFER_CUDA_MV_ROWS - 1) / INFER_CUDA_MV_ROWS;     /* a group's counter for each of k_mvq's row blocks */
        if (!infer_cuda_xq_in(c, &c->xq2, &c->xq2_bytes, F, rows, &xd.q, &xd.ds) || !(qo.count = infer_cuda_counters(c, ry * (F / qsize)))) return;
        qo.codes = xd.q; qo.ds = xd.ds; qo.kind = kout; qo.size = qsize;
        xd.kind = kout;
    }
    infer_cuda_pf pf;
    memset(&pf, 0, sizeof pf);
    infer_cuda_pf_add(&pf, wg);
    infer_cuda_pf_add(&pf, wu);
    infer_cuda_mvn nm;
    c->norm_mv = kin == 3 && infer_cuda_norm_mv_ok(c, wg->type, mv.W, 2, rb, x, h, nw, K, rows, eps, &nm);
    if (c->norm_mv) {                        /* float gate and up, one row: the norm inside their matvec */
        if (!infer_cuda_matvec_fast(c, wg->type, mv, rb, h, K, rows, 1, NULL, &qo, &nm)) return;
    } else {
        infer_cuda_xq xq = infer_cuda_norm_for(c, kin == 3 ? 0 : kin, h, x, nw, rows, K, eps, pf);
        if (!infer_cuda_matvec_fast(c, wg->type, mv, rb, h, K, rows, 1, &xq, &qo)) return;     /* kin != 0: it runs */
    }
    infer_cuda_matvec_w(c, x, wd, hid, rows, 1, &xd);
}

/* L2 norm in place: x / max(||x||, eps) */
__global__ void k_l2norm(float *x, int dim, float eps) {
    INFER_CUDA_PDL_ENTRY;
    float *v = x + (size_t)blockIdx.x * dim;
    double ss = 0;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) ss += (double)v[i] * v[i];
    ss = block_sum(ss);
    const float scale = 1.0f / fmaxf(sqrtf((float)ss), eps);
    for (int i = threadIdx.x; i < dim; i += blockDim.x) v[i] *= scale;
}
static void infer_cuda_l2norm(void *ctx, float *x, int rows, int dim, float eps) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    INFER_CUDA_LAUNCH(rows, 128, 0, c, k_l2norm)(x, dim, eps);
    INFER_CUDA_LAUNCHED(c, "l2norm");
}

/* grid-stride loops over n elements */
#define INFER_CUDA_FOR(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)
static unsigned infer_cuda_blocks(int64_t n) {
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

__global__ void k_add(float *y, const float *x, int64_t n) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_FOR(i, n) y[i] += x[i];
}
__global__ void k_add_rows(float *y, const float *b, int64_t n, int dim) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_FOR(i, n) y[i] += b[i % dim];
}
/* out = act(gate) * up: SiLU z / (1 + e^-z), or ReLU^2 max(z, 0)^2; with limit L > 0 the
 * inputs are clamped first (DeepSeek-V4): gate = min(gate, L), up = clamp(up, -L, L) */
__global__ void k_glu(float *out, const float *gate, const float *up, int64_t n, int act, float limit) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_FOR(i, n) out[i] = glu_act(gate[i], up[i], act, limit);
}
__global__ void k_mul_sigmoid(float *y, const float *g, int64_t n, int dim, int g_cols) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_FOR(i, n) {
        const int64_t r = i / dim, k = i % dim;
        y[i] *= 1.0f / (1.0f + expf(-g[r * g_cols + (g_cols == 1 ? 0 : k)]));
    }
}
/* out[r, i] = sum_s w[r, s] y[r, s, i], the slots in order as on the CPU */
__global__ void k_moe_sum(float *out, const float *y, const float *w, int64_t n, int n_used, int dim) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_FOR(i, n) {
        const int64_t r = i / dim, k = i % dim;
        float o = 0.0f;
        for (int s = 0; s < n_used; s++) o += w[r * n_used + s] * y[(r * n_used + s) * dim + k];
        out[i] = o;
    }
}
/* g = softplus(g + dt_bias) * a, beta = sigmoid(beta);  [rows, n_v] */
__global__ void k_deltanet_gates(float *g, float *beta, const float *dt_bias, const float *a, int64_t n, int n_v) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_FOR(i, n) {
        const int h = (int)(i % n_v);
        const float z = g[i] + dt_bias[h];
        g[i] = (z > 20.0f ? z : log1pf(expf(z))) * a[h];
        beta[i] = 1.0f / (1.0f + expf(-beta[i]));
    }
}

static void infer_cuda_add(void *ctx, float *y, const float *x, int64_t n) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (n <= 0) return;
    INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_add)(y, x, n);
    INFER_CUDA_LAUNCHED(c, "add");
}
static void infer_cuda_add_rows(void *ctx, float *y, const float *b, int rows, int dim) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const int64_t n = (int64_t)rows * dim;
    if (n <= 0) return;
    INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_add_rows)(y, b, n, dim);
    INFER_CUDA_LAUNCHED(c, "add_rows");
}
static void infer_cuda_glu(void *ctx, float *out, const float *gate, const float *up, int64_t n, int act, float limit) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (n <= 0) return;
    INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_glu)(out, gate, up, n, act, limit);
    INFER_CUDA_LAUNCHED(c, "glu");
}
static void infer_cuda_mul_sigmoid(void *ctx, float *y, const float *g, int rows, int dim, int g_cols) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const int64_t n = (int64_t)rows * dim;
    if (n <= 0) return;
    INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_mul_sigmoid)(y, g, n, dim, g_cols);
    INFER_CUDA_LAUNCHED(c, "mul_sigmoid");
}
static void infer_cuda_moe_sum(void *ctx, float *out, const float *y, const float *w, int rows, int n_used, int dim) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const int64_t n = (int64_t)rows * dim;
    if (n <= 0) return;
    INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_moe_sum)(out, y, w, n, n_used, dim);
    INFER_CUDA_LAUNCHED(c, "moe_sum");
}
static void infer_cuda_deltanet_gates(void *ctx, float *g, float *beta, const float *dt_bias, const float *a, int rows, int n_v) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const int64_t n = (int64_t)rows * n_v;
    if (n <= 0) return;
    INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_deltanet_gates)(g, beta, dt_bias, a, n, n_v);
    INFER_CUDA_LAUNCHED(c, "deltanet_gates");
}

/* Greedy picks (argmax): a block per row finds the row's largest value and the first index
 * that holds it -- the sampler's greedy rule -- so a decode step sends back one id per
 * sequence instead of n_vocab floats. Each thread keeps the best of its strided share
 * (strictly larger replaces: the first of equals stays), then the warp and the block keep the
 * larger value, the smaller index of equals. A NaN or an infinity anywhere makes the row's
 * id -1: the forward pass then fetches the logits to say where. */
/* The greedy pick of each row: the first index of its largest value, -1 where the row holds
 * a NaN or an infinity. A row of logits (128k floats) is too long for one block: one SM
 * reads it from L2 at a fraction of the GPU's rate. So block (b, r) takes values
 * ARGMAX_SEG b .. of row r (16-byte loads where the row is aligned), writes its (value,
 * index) -- the index -2 for "saw a non-finite value" -- and the last block of the row to
 * finish (a ticket, left at 0) reduces the partials, a share of them a thread. Ties go to
 * the lower index in every comparison, so neither the order in which blocks finish nor the
 * threads' shares matter. */
#define INFER_CUDA_ARGMAX_THREADS 256
#define INFER_CUDA_ARGMAX_SEG 1024        /* values a block takes: 4 a thread, one 16-byte load (128k logits: 126 blocks) */
__device__ __forceinline__ void argmax_keep(float &v, int &i, float v2, int i2) {
    if (v2 > v || (v2 == v && i2 < i)) { v = v2; i = i2; }
}
__device__ __forceinline__ void argmax_see(float &best, int &at, int &bad, float v, int i) {
    bad |= !isfinite(v);
    argmax_keep(best, at, v, i);
}
/* the block's (best, at, bad) into thread 0's: the larger value, ties to the lower index, in
 * any order the same answer; bad if any thread's is */
__device__ __forceinline__ void argmax_block(float &best, int &at, int &bad) {
    constexpr int NW = INFER_CUDA_ARGMAX_THREADS / 32;
    __shared__ float wv[NW];
    __shared__ int wi[NW], wbad[NW];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        argmax_keep(best, at, __shfl_xor_sync(0xffffffffu, best, o), __shfl_xor_sync(0xffffffffu, at, o));
        bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    }
    __syncthreads();                      /* wv may still be read from a previous call */
    if (lane == 0) { wv[warp] = best; wi[warp] = at; wbad[warp] = bad; }
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (int w = 1; w < NW; w++) {
        bad |= wbad[w];
        argmax_keep(best, at, wv[w], wi[w]);
    }
}
__global__ void __launch_bounds__(INFER_CUDA_ARGMAX_THREADS) k_argmax(int32_t *ids, const float *x, int n, float *pv, int *pi, int *count) {
    INFER_CUDA_PDL_ENTRY;
    __shared__ int last;
    const int r = blockIdx.y, nb = gridDim.x, b = blockIdx.x, tid = threadIdx.x;
    const float *xr = x + (size_t)r * n;
    const int i0 = b * INFER_CUDA_ARGMAX_SEG, i1 = n - i0 < INFER_CUDA_ARGMAX_SEG ? n : i0 + INFER_CUDA_ARGMAX_SEG;
    float best = -INFINITY;               /* (-inf, n): nothing seen; any finite value beats it, and */
    int at = n, bad = 0;                  /* a row with -inf (or NaN) in it is -1 whatever is kept */
    int i = i0 + tid;
    if (((uintptr_t)(xr + i0) & 15) == 0) {  /* 16-byte loads */
        const int nv = (i1 - i0) / 4;
INFER_CUDA_UNROLL
        for (int j = tid; j < nv; j += INFER_CUDA_ARGMAX_THREADS) {
            const float4 v = ldv<float4>(xr + i0 + 4 * j);
            argmax_see(best, at, bad, v.x, i0 + 4 * j);
            argmax_see(best, at, bad, v.y, i0 + 4 * j + 1);
            argmax_see(best, at, bad, v.z, i0 + 4 * j + 2);
            argmax_see(best, at, bad, v.w, i0 + 4 * j + 3);
        }
        i = i0 + 4 * nv + tid;
    }
    for (; i < i1; i += INFER_CUDA_ARGMAX_THREADS) argmax_see(best, at, bad, xr[i], i);
    argmax_block(best, at, bad);
    if (nb == 1) {
        if (tid == 0) ids[r] = bad || at == n ? -1 : at;
        return;
    }
    if (tid == 0) {                       /* the partial out; the row's last block reduces them */
        pv[(size_t)r * nb + b] = best;
        pi[(size_t)r * nb + b] = bad ? -2 : at;
        __threadfence();
        last = atomicAdd(&count[r], 1) == nb - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    best = -INFINITY; at = n; bad = 0;    /* every thread takes every 256th partial */
    for (int s2 = tid; s2 < nb; s2 += INFER_CUDA_ARGMAX_THREADS) {
        const int j = __ldcg(&pi[(size_t)r * nb + s2]);
        if (j == -2) bad = 1;
        else argmax_keep(best, at, __ldcg(&pv[(size_t)r * nb + s2]), j);
    }
    argmax_block(best, at, bad);
    if (tid != 0) return;
    count[r] = 0;                          /* for the next launch (a replayed graph) */
    ids[r] = bad || at == n ? -1 : at;
}
static void infer_cuda_argmax(void *ctx, int32_t *ids, const float *x, int rows, int n) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    if (rows > 65535) { infer_cuda_record(c, cudaErrorInvalidValue, "argmax: more than 65535 rows"); return; }
    const int nb = n > 0 ? (n + INFER_CUDA_ARGMAX_SEG - 1) / INFER_CUDA_ARGMAX_SEG : 1;
    float *pv = NULL;
    int *pi = NULL, *count = NULL;
    if (nb > 1) {
        if (!infer_cuda_reserve(c, (size_t)rows * nb * (sizeof(float) + sizeof(int))) || !(count = infer_cuda_counters(c, rows))) return;
        pv = (float *)c->scratch;
        pi = (int *)(pv + (size_t)rows * nb);
    }
    INFER_CUDA_LAUNCH(dim3((unsigned)nb, (unsigned)rows), INFER_CUDA_ARGMAX_THREADS, 0, c, k_argmax)(ids, x, n, pv, pi, count);
    INFER_CUDA_LAUNCHED(c, "argmax");
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_rope -- RoPE. One thread per (row, head, pair i): theta is computed by every
 * thread (the heads' threads of a pair compute the same one), in double, with the CPU's
 * formula (>>cpu, infer__rope_apply):
 *   theta_base = pos * base^(-2i/n_rot) / freq_factors[i],  theta = freq_scale * theta_base,
 *   YaRN: theta = theta (1 - ramp) + theta_base ramp, mscale *= 1 + 0.1 ln(1/freq_scale).
 * The rotated dims start at rot_first of each head (deepseek4 turns the last n_rot), and
 * `inverse` turns by -theta (sin negated), which undoes the rotation at that position.
 * The rotation is written with round-to-nearest intrinsics so no multiply-add is fused and
 * the result rounds exactly like the CPU's.
 * ---------------------------------------------------------------------------------------- */
typedef struct infer_cuda_rope {
    int n_rot, neox;
    double freq_base, freq_scale, attn_factor, ext_factor, yarn_mscale;
    float lo, hi;                 /* YaRN's correction range */
    const float *freq_factors;
    int sec[4];                   /* multi-axis sections; all 0 for one stream */
    int multi;
    int rot_first, inverse;       /* the first rotated dim of a head; rotate by -theta */
    int unused;                   /* no padding bytes: a recorded launch's key holds the struct's bytes */
} infer_cuda_rope;
static_assert(offsetof(infer_cuda_rope, unused) + sizeof(int) == sizeof(infer_cuda_rope), "infer_cuda_rope has tail padding");

/* infer__imrope_stream of infer.h, on the device (a deliberate twin) */
__device__ int imrope_stream(int i, const int *sec) {
    const int n = sec[0] + sec[1] + sec[2] + sec[3];
    const int sector = n > 0 ? i % n : i;
    if (sector % 3 == 0 && sector < 3 * sec[0]) return 0;
    if (sector % 3 == 1 && sector < 3 * sec[1]) return 1;
    if (sector % 3 == 2 && sector < 3 * sec[2]) return 2;
    return 3;
}

/* cos and sin (times mscale, sin negated for `inverse`) of pair i at position p */
__device__ void rope_cs(const infer_cuda_rope &rp, int i, int32_t p, float *cs, float *sn) {
    double theta_base = p * pow(rp.freq_base, -2.0 * i / rp.n_rot);
    if (rp.freq_factors) theta_base /= rp.freq_factors[i];
    double theta = rp.freq_scale * theta_base, mscale = rp.attn_factor;
    if (rp.ext_factor != 0) {
        const double y = (i - rp.lo) / fmax(0.001, (double)(rp.hi - rp.lo));
        const double ramp = (1 - fmin(1.0, fmax(0.0, y))) * rp.ext_factor;
        theta = theta * (1 - ramp) + theta_base * ramp;
        mscale *= rp.yarn_mscale;
    }
    *cs = (float)(cos(theta) * mscale);
    *sn = (float)(sin(theta) * mscale) * (rp.inverse ? -1.0f : 1.0f);
}
/* the pair (x0, x1) turned by the angle of (cs, sn): its first value (second = 0) or its
 * second, each product rounded on its own */
__device__ __forceinline__ float rope_turn(float x0, float x1, float cs, float sn, int second) {
    return second ? __fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, cs)) : __fsub_rn(__fmul_rn(x0, cs), __fmul_rn(x1, sn));
}
__global__ void k_rope(float *x, int rows, int n_heads, int head_dim, const int32_t *pos, infer_cuda_rope rp) {
    INFER_CUDA_PDL_ENTRY;
    const int half = rp.n_rot / 2;
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (int64_t)rows * n_heads * half) return;
    const int i = (int)(t % half), h = (int)(t / half % n_heads), r = (int)(t / half / n_heads);
    float cs, sn;
    rope_cs(rp, i, pos[(size_t)(rp.multi ? imrope_stream(i, rp.sec) : 0) * rows + r], &cs, &sn);
    const int a = rp.neox ? i : 2 * i, b = rp.neox ? i + half : 2 * i + 1;
    float *v = x + ((size_t)r * n_heads + h) * head_dim + rp.rot_first;
    const float x0 = v[a], x1 = v[b];
    v[a] = rope_turn(x0, x1, cs, sn, 0);
    v[b] = rope_turn(x0, x1, cs, sn, 1);
}

/* YaRN's correction dims, as the CPU computes them (float results of a double formula) */
static float infer_cuda_yarn_corr_dim(int n_rot, int n_ctx_orig, float beta, float base) {
    return (float)(n_rot * log((double)n_ctx_orig / ((double)(beta * 2) * M_PI)) / (2 * log((double)base)));
}

static infer_cuda_rope infer_cuda_rope_of(const infer_rope *r, const int32_t *sections) {
    infer_cuda_rope rp;
    memset(&rp, 0, sizeof rp);
    rp.n_rot = r->n_rot;
    rp.neox = r->neox;
    rp.freq_base = r->freq_base;
    rp.freq_scale = r->freq_scale;
    rp.attn_factor = r->attn_factor;
    rp.ext_factor = r->ext_factor;
    rp.freq_factors = r->freq_factors;
    rp.rot_first = r->rot_first;
    rp.inverse = r->inverse;
    if (r->ext_factor != 0) {
        float lo = floorf(infer_cuda_yarn_corr_dim(r->n_rot, r->n_ctx_orig, r->beta_fast, r->freq_base));
        float hi = ceilf(infer_cuda_yarn_corr_dim(r->n_rot, r->n_ctx_orig, r->beta_slow, r->freq_base));
        rp.lo = lo < 0 ? 0 : lo;
        rp.hi = hi > r->n_rot - 1 ? (float)(r->n_rot - 1) : hi;
        rp.yarn_mscale = 1 + 0.1 * log((double)(1 / r->freq_scale));
    }
    if (sections) { rp.multi = 1; for (int i = 0; i < 4; i++) rp.sec[i] = sections[i]; }
    return rp;
}
static void infer_cuda_rope_launch(infer_cuda_ctx *c, float *x, int rows, int n_heads, int head_dim, const int32_t *pos, const infer_rope *r,
                                   const int32_t *sections) {
    const infer_cuda_rope rp = infer_cuda_rope_of(r, sections);
    const int64_t n = (int64_t)rows * n_heads * (r->n_rot / 2);
    if (n <= 0) return;
    INFER_CUDA_LAUNCH((unsigned)((n + 127) / 128), 128, 0, c, k_rope)(x, rows, n_heads, head_dim, pos, rp);
    INFER_CUDA_LAUNCHED(c, sections ? "rope_multi" : "rope");
}
static void infer_cuda_rope_op(void *ctx, float *x, int rows, int n_heads, int head_dim, const int32_t *pos, const infer_rope *r) {
    infer_cuda_rope_launch((infer_cuda_ctx *)ctx, x, rows, n_heads, head_dim, pos, r, NULL);
}
static void infer_cuda_rope_multi(void *ctx, float *x, int rows, int n_heads, int head_dim, const int32_t *pos, const infer_rope *r,
                                  const int32_t *sections) {
    infer_cuda_rope_launch((infer_cuda_ctx *)ctx, x, rows, n_heads, head_dim, pos, r, sections);
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_attention -- the paged KV cache and attention over it.
 * Cache row of position p:  table[p / block_size] * block_size + p % block_size.
 * The cache is F32 or F16 (kv_load reads either); a sequence's blocks are anywhere in the
 * pool, so every read goes through its block table, as on the CPU.
 * ---------------------------------------------------------------------------------------- */
__device__ __forceinline__ size_t kv_row(const int32_t *table, int bs, int32_t p) { return (size_t)table[p / bs] * bs + p % bs; }
/* the block table of the call's row r: its own when the rows are of several sequences */
__device__ __forceinline__ const int32_t *kv_table(const int32_t *table, const int32_t *const *rows, int r) { return rows ? rows[r] : table; }

/* a paged cache as a kernel reads it: the host's infer_kv_view, passed by value */
typedef struct infer_cuda_kv {
    const void *k, *v;
    const int32_t *table;
    const int32_t *const *rows;   /* NULL, or row r's table at rows[r] (infer_kv_view.row_tables) */
    int bs, dim, f16;
    int unused;               /* no padding bytes: a recorded launch's key holds the struct's bytes */
} infer_cuda_kv;
static_assert(offsetof(infer_cuda_kv, unused) + sizeof(int) == sizeof(infer_cuda_kv), "infer_cuda_kv has tail padding");
/* the view for the rows after the first n of a call (the same cache; per-row tables moved on) */
static infer_kv_view infer_cuda_kv_skip(const infer_kv_view *v, int n) {
    infer_kv_view rest = *v;
    if (rest.row_tables) rest.row_tables += n;
    return rest;
}
static infer_cuda_kv infer_cuda_kv_of(const infer_kv_view *v) {
    infer_cuda_kv d;
    memset(&d, 0, sizeof d);
    if (!v) return d;
    d.k = v->k; d.v = v->v; d.table = v->block_table; d.rows = v->row_tables; d.bs = v->block_size; d.dim = v->kv_dim; d.f16 = v->type == INFER_TYPE_F16;
    return d;
}

/* a thread per (row r, element): k, v [rows, kv_dim] -> the pools, converted to F16 when the cache is,
 * saturating at +-65504 as the CPU does (infer__f16_saturate: a NaN stays NaN); v NULL: keys
 * only (a cache whose values are its keys) */
__device__ __forceinline__ float f16_saturate(float x) { return x > 65504.0f ? 65504.0f : x < -65504.0f ? -65504.0f : x; }
/* element `off` of the pools: key kval, and (v not NULL) value *v */
__device__ __forceinline__ void kv_put(void *kp, void *vp, int f16_cache, size_t off, float kval, const float *v) {
    if (f16_cache) {
        ((__half *)kp)[off] = __float2half_rn(f16_saturate(kval));
        if (v) ((__half *)vp)[off] = __float2half_rn(f16_saturate(*v));
    } else {
        ((float *)kp)[off] = kval;
        if (v) ((float *)vp)[off] = *v;
    }
}
__global__ void k_kv_store(void *kp, void *vp, int f16_cache, const int32_t *table, const int32_t *const *rows, int bs, int kv_dim, const float *k,
                           const float *v, const int32_t *pos) {
    INFER_CUDA_PDL_ENTRY;
    const int r = blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= kv_dim) return;
    const size_t e = (size_t)r * kv_dim + i;
    kv_put(kp, vp, f16_cache, kv_row(kv_table(table, rows, r), bs, pos[r]) * kv_dim + i, k[e], v ? v + e : NULL);
}
static void infer_cuda_kv_store(void *ctx, const infer_kv_view *kv, const float *k, const float *v, const int32_t *pos, int rows) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0 || kv->kv_dim <= 0) return;
    if (rows > 65535) {                       /* grid.y holds at most 65535 rows: the rest after */
        const infer_kv_view rest = infer_cuda_kv_skip(kv, 65535);
        infer_cuda_kv_store(ctx, kv, k, v, pos, 65535);
        infer_cuda_kv_store(ctx, &rest, k + (size_t)65535 * kv->kv_dim, v ? v + (size_t)65535 * kv->kv_dim : NULL, pos + 65535, rows - 65535);
        return;
    }
    INFER_CUDA_LAUNCH(dim3((kv->kv_dim + 127) / 128, rows), 128, 0, c, k_kv_store)(kv->k, kv->v, kv->type == INFER_TYPE_F16, kv->block_table, kv->row_tables,
                                                                              kv->block_size, kv->kv_dim, k, v, pos);
    INFER_CUDA_LAUNCHED(c, "kv_store");
}

/* rope + kv_store (+ rope of q): blocks 0 .. kb - 1 of row r = blockIdx.y store the cache row
 * of pos[r] (through row r's own block table when the rows are of several sequences), a
 * thread per element e of kv_dim: k[e] turned by its pair's angle (k_rope's formula; the
 * pair's other value is read too) or, outside the rotated dims, k[e] as it is; and v[e].
 * Blocks from kb on (q not NULL) turn q [rows, n_q, head_dim] in place, a thread per pair
 * as k_rope does: one launch where rope of q, rope of k and kv_store took three. */
__global__ void k_rope_kv_store(void *kp, void *vp, int f16_cache, const int32_t *table, const int32_t *const *rows, int bs, int kv_dim, const float *k,
                                const float *v, const int32_t *pos, int head_dim, infer_cuda_rope rp, float *q, int n_q, int kb) {
    INFER_CUDA_PDL_ENTRY;
    const int r = blockIdx.y, half = rp.n_rot / 2;
    if ((int)blockIdx.x >= kb) {
        const int t = ((int)blockIdx.x - kb) * blockDim.x + threadIdx.x;
        if (t >= n_q * half) return;
        const int i = t % half, h = t / half;
        float cs, sn;
        rope_cs(rp, i, pos[r], &cs, &sn);
        const int a = rp.neox ? i : 2 * i, b = rp.neox ? i + half : 2 * i + 1;
        float *hv = q + ((size_t)r * n_q + h) * head_dim + rp.rot_first;
        const float x0 = hv[a], x1 = hv[b];
        hv[a] = rope_turn(x0, x1, cs, sn, 0);
        hv[b] = rope_turn(x0, x1, cs, sn, 1);
        return;
    }
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= kv_dim) return;
    const float *kr = k + (size_t)r * kv_dim;
    const int d = e % head_dim - rp.rot_first;
    float val = kr[e];
    if (d >= 0 && d < rp.n_rot) {
        const int i = rp.neox ? (d < half ? d : d - half) : d / 2, second = rp.neox ? d >= half : d & 1;
        const int a = rp.neox ? i : 2 * i, b = rp.neox ? i + half : 2 * i + 1;
        const float *hv = kr + (size_t)(e / head_dim) * head_dim + rp.rot_first;
        float cs, sn;
        rope_cs(rp, i, pos[r], &cs, &sn);
        val = rope_turn(hv[a], hv[b], cs, sn, second);
    }
    kv_put(kp, vp, f16_cache, kv_row(kv_table(table, rows, r), bs, pos[r]) * kv_dim + e, val, v ? v + (size_t)r * kv_dim + e : NULL);
}
static void infer_cuda_rope_kv_store(void *ctx, const infer_kv_view *kv, float *q, const float *k, const float *v, const int32_t *pos, int rows,
                                     int n_head, int n_head_kv, int head_dim, const infer_rope *r) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0 || kv->kv_dim <= 0) return;
    if (n_head_kv * head_dim != kv->kv_dim) { infer_cuda_record(c, cudaErrorInvalidValue, "rope_kv_store: heads x head size is not the cache's row"); return; }
    if (rows > 65535) {                       /* grid.y holds at most 65535 rows: the rest after */
        const infer_kv_view rest = infer_cuda_kv_skip(kv, 65535);
        infer_cuda_rope_kv_store(ctx, kv, q, k, v, pos, 65535, n_head, n_head_kv, head_dim, r);
        infer_cuda_rope_kv_store(ctx, &rest, q ? q + (size_t)65535 * n_head * head_dim : NULL, k + (size_t)65535 * kv->kv_dim,
                                 v ? v + (size_t)65535 * kv->kv_dim : NULL, pos + 65535, rows - 65535, n_head, n_head_kv, head_dim, r);
        return;
    }
    const infer_cuda_rope rp = infer_cuda_rope_of(r, NULL);
    const int kb = (kv->kv_dim + 127) / 128, qb = q ? (n_head * (r->n_rot / 2) + 127) / 128 : 0;
    INFER_CUDA_LAUNCH(dim3(kb + qb, rows), 128, 0, c, k_rope_kv_store)(kv->k, kv->v, kv->type == INFER_TYPE_F16, kv->block_table, kv->row_tables,
                                                                      kv->block_size, kv->kv_dim, k, v, pos, head_dim, rp, q, q ? n_head : 0, kb);
    INFER_CUDA_LAUNCHED(c, "rope_kv_store");
}

/* rmsnorm_qkv_store: q, k and v's matvec (k_mvq) doing rope_kv_store's work in its stores
 * (MvRopeStore), one launch where there were two. Where it applies -- the fast mode's decode
 * matvec (1-8 rows), q, k and v of one type and K, rope on pairs of neighbours (not NEOX's
 * halves) from an even dim, one stream of positions -- a k_mvq block's two columns are one
 * rope pair: the thread of column n (and row r) takes rope_cs of its pair before the dot
 * products, and after them turns (its value, its neighbour's) with rope_turn as k_rope_kv_store
 * would -- the same floats in, the same functions, the same bits -- then stores q turned, k
 * and v as the matvec gives them, and the turned k and the v into the cache rows of pos.
 * Elsewhere it runs rmsnorm_matmul_n, then rope_kv_store. */
struct MvRopeStore {
    enum { plain = 0 };
    void *kp, *vp;                    /* the cache's pools */
    const int32_t *table;             /* its block table, or each row's (rows) */
    const int32_t *const *rows;
    const int32_t *pos;               /* [rows] */
    int f16, bs, kv_dim, head_dim;
    infer_cuda_rope rp;
    struct Pre { float cs, sn; };
    /* cos and sin of column n's pair (q: weight 0, k: 1) at row r's position */
    __device__ __forceinline__ Pre pre(int w, int n, int r) const {
        Pre p = { 1.0f, 0.0f };
        const int d = n % head_dim - rp.rot_first;
        if (w < 2 && d >= 0 && d < rp.n_rot) rope_cs(rp, d / 2, pos[r], &p.cs, &p.sn);
        return p;
    }
    /* v: this column's value, o: its place in out[w]; u: the pair's other value */
    __device__ __forceinline__ void put(const Pre &p, float *o, float v, float u, int w, int n, int r) const {
        const int d = n % head_dim - rp.rot_first, second = d & 1;
        const float t = w < 2 && d >= 0 && d < rp.n_rot ? rope_turn(second ? u : v, second ? v : u, p.cs, p.sn, second) : v;
        *o = w == 0 ? t : v;
        if (w == 0) return;
        const size_t off = kv_row(kv_table(table, rows, r), bs, pos[r]) * kv_dim + n;
        if (f16) ((__half *)(w == 1 ? kp : vp))[off] = __float2half_rn(f16_saturate(t));
        else ((float *)(w == 1 ? kp : vp))[off] = t;
    }
};
static_assert(offsetof(MvRopeStore, rp) == 5 * sizeof(void *) + 4 * sizeof(int) && sizeof(MvRopeStore) == offsetof(MvRopeStore, rp) + sizeof(infer_cuda_rope),
              "MvRopeStore has padding");
static int infer_cuda_qkv_store = 1;      /* INFER_CUDA_QKV_STORE=0: the matvec, then rope_kv_store's own launch */
static void infer_cuda_rmsnorm_qkv_store(void *ctx, float *h, const float *x, const float *nw, int rows, int dim, float eps, float *const *out,
                                         const infer_tensor *const *w, const infer_kv_view *kv, const int32_t *pos, int n_head, int n_head_kv,
                                         int head_dim, const infer_rope *r) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    const float *in = nw ? h : x;             /* the matvecs' input */
    const int QD = n_head * head_dim, KVD = n_head_kv * head_dim;
    int fuse = infer_cuda_qkv_store && !c->precise && (rows <= INFER_CUDA_MV_ROWS || infer_cuda_mmv_rows(c, rows)) && !r->neox && r->n_rot % 2 == 0 &&
               r->rot_first % 2 == 0 && r->rot_first + r->n_rot <= head_dim && head_dim % 2 == 0 && kv->kv_dim == KVD && (!nw || h != x) &&
               w[0]->ne[1] == QD && w[1]->ne[1] == KVD && w[2]->ne[1] == KVD;
    infer_cuda_mv mv;
    fuse = infer_cuda_mv_all(&mv, 3, out, w, dim) && fuse;
    const size_t rb = infer_type_row_size(w[0]->type, dim);
    const int kind = fuse ? infer_cuda_mv_kind(w[0]->type, mv.W, 3, rb, in, dim) : 0;
    c->qkv_store = 0;
    if (!kind) {
        if (nw) infer_cuda_rmsnorm_matmul_n(ctx, h, x, nw, rows, dim, eps, 3, out, w);
        else infer_cuda_matmul_n(ctx, 3, out, w, x, rows);
        infer_cuda_rope_kv_store(ctx, kv, out[0], out[1], out[2], pos, rows, n_head, n_head_kv, head_dim, r);
        return;
    }
    MvRopeStore e;
    memset(&e, 0, sizeof e);
    e.kp = kv->k; e.vp = kv->v; e.table = kv->block_table; e.rows = kv->row_tables; e.pos = pos;
    e.f16 = kv->type == INFER_TYPE_F16; e.bs = kv->block_size; e.kv_dim = KVD; e.head_dim = head_dim;
    e.rp = infer_cuda_rope_of(r, NULL);
    infer_cuda_mvn nm;
    infer_cuda_xq xq = { 0, NULL, NULL };
    c->norm_mv = 0;
    if (nw && kind == 3 && infer_cuda_norm_mv_ok(c, w[0]->type, mv.W, 3, rb, x, h, nw, dim, rows, eps, &nm)) {
        c->norm_mv = 1;                       /* float weights, one row: the norm inside the matvec too */
        infer_cuda_matvec_fast(c, w[0]->type, mv, rb, h, dim, rows, 0, NULL, NULL, &nm, e);
    } else {
        if (nw) {
            infer_cuda_pf pf;
            memset(&pf, 0, sizeof pf);
            xq = infer_cuda_norm_for(c, kind == 3 ? 0 : kind, h, x, nw, rows, dim, eps, pf);
        }
        infer_cuda_matvec_fast(c, w[0]->type, mv, rb, in, dim, rows, 0, &xq, NULL, NULL, e);
    }
    c->qkv_store = 1;
}

__device__ __forceinline__ float kv_load(const void *pool, int f16_cache, size_t i) {
    return f16_cache ? __half2float(((const __half *)pool)[i]) : ((const float *)pool)[i];
}

/* Attention with an online softmax (decode; prompts in the precise mode). Block (b, r,
 * split): the G query heads b G .. b G + G - 1 of row r, which share one KV head (G divides
 * the GQA group), over the cache positions of this split -- chunks of ATT_CHUNK positions
 * dealt round-robin to the n_split splits; every key and value is read once for the G heads.
 * The 4 warps take 4 consecutive positions each in turn; lane l holds dimensions l, l+32, ...
 * of each head's q and accumulator (DPL of them). Per head, per group of positions P:
 *   s_p = q . k_p * scale,  m' = max(m, max_p s_p),  l = l e^(m-m') + sum_p e^(s_p-m'),
 *   acc = acc e^(m-m') + sum_p e^(s_p-m') v_p,  m = m'
 * and at the end the warps' (m, l, acc) are merged the same way. With one split the block
 * writes out = acc / l; with several it writes its (m, l, acc), and the last of the head
 * group's split blocks to finish merges them (attn_merge_last): flash-decoding in one
 * launch, so a single long-context query still fills the GPU. */
#define INFER_CUDA_ATT_WARPS 4
#define INFER_CUDA_ATT_CHUNK 64
#define INFER_CUDA_ATT_POS 4          /* positions a warp reads at once */
#define INFER_CUDA_ATT_MAXD 512
#define INFER_CUDA_ATT_HEADS 16       /* G x DPL at most: a lane's q floats (and as many of acc) */

/* The end of an attention block's heads (k_attention, k_attention_sparse): for each of its G
 * heads, the warps' (m, l, acc) merged through shared memory; with no slot (one split at
 * work) o = acc / l, else the block's (M, L, acc) go to the head's slot of `part` (head g's
 * slot is g n_split slots after head 0's), merged by attn_merge_last. A warp that saw nothing has
 * m = -inf and weight 0. acc's layout: lane l holds dims l, l+32, ... (VL = 0), or lanes
 * l < VL dims DPL l .. DPL l + DPL - 1 (k_attention_h16). */
template <int DPL, int G, int VL = 0>
__device__ void attn_finish(const float *m, const float *l, const float (*acc)[DPL], float *o, float *slot, int hd, int n_split) {
    __shared__ float sm_m[INFER_CUDA_ATT_WARPS], sm_l[INFER_CUDA_ATT_WARPS];
    __shared__ float sm_acc[INFER_CUDA_ATT_WARPS][32 * DPL];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
INFER_CUDA_UNROLL
    for (int g = 0; g < G; g++) {
        if (g) __syncthreads();               /* the previous head's values are read */
        if (lane == 0) { sm_m[warp] = m[g]; sm_l[warp] = l[g]; }
        if (!VL) {                            /* lane l: dims l, l+32, ... */
INFER_CUDA_UNROLL
            for (int j = 0; j < DPL; j++) sm_acc[warp][lane + 32 * j] = acc[g][j];
        } else if (lane < VL) {               /* lane l < VL: dims DPL l .. DPL l + DPL - 1 */
INFER_CUDA_UNROLL
            for (int j = 0; j < DPL; j++) sm_acc[warp][DPL * lane + j] = acc[g][j];
        }
        __syncthreads();
        float M = -INFINITY;
INFER_CUDA_UNROLL
        for (int w = 0; w < INFER_CUDA_ATT_WARPS; w++) M = fmaxf(M, sm_m[w]);
        float L = 0.0f, f[INFER_CUDA_ATT_WARPS];
INFER_CUDA_UNROLL
        for (int w = 0; w < INFER_CUDA_ATT_WARPS; w++) { f[w] = sm_m[w] == -INFINITY ? 0.0f : expf(sm_m[w] - M); L += sm_l[w] * f[w]; }
        float *sg = slot ? slot + (size_t)g * n_split * (hd + 2) : NULL;
        for (int d = threadIdx.x; d < hd; d += blockDim.x) {
            float a = 0.0f;
INFER_CUDA_UNROLL
            for (int w = 0; w < INFER_CUDA_ATT_WARPS; w++) a += sm_acc[w][d] * f[w];
            if (!slot) o[(size_t)g * hd + d] = a / L;
            else sg[2 + d] = a;
        }
        if (slot && threadIdx.x == 0) { sg[0] = M; sg[1] = L; }
    }
}

/* The splits that have positions: chunks of `chunk` positions are dealt round-robin to the
 * n_split splits, so of a list of n only the first ceil(n / chunk) get any (at least 1). The
 * others return at once; with one at work it writes the output itself, no partials, no
 * merge. n comes from device memory (the position), so a replayed graph adapts per step. */
__device__ __forceinline__ int attn_active(int n, int chunk, int n_split) {
    const int c = n > 0 ? (n + chunk - 1) / chunk : 1;
    return c < n_split ? c : n_split;
}

/* The split merge, inside the attention launch: the `active` split blocks of one (row, head
 * group) each write their partials, then take a ticket from the group's counter; the block
 * that draws the last ticket has every partial visible and merges them,
 *   out = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M),  M = max_s m_s,
 * for its `heads` heads (head g: partials at part + g n_split (hd + 2), output at out + g hd),
 * and sets the counter back to 0 for the next launch (or graph replay). The fence before the
 * ticket publishes this block's partials device-wide before anyone can count it; the last
 * block reads them with __ldcg (the L2, not an L1 that may hold stale lines): first every
 * head's (m_s, l_s) at once (a warp a head, a lane a split) into weights e^(m_s - M) and L,
 * then every (head, dim) output with its splits' loads in flight together. Returns 1 in
 * every thread of the block that merged (it holds the heads' final output), 0 in the others. */
#define INFER_CUDA_MERGE_HEADS 8              /* most heads a merge takes (k_attention's G) */
__device__ int attn_merge_last(float *out, const float *part, int *count, int n_split, int active, int hd, int heads) {
    __shared__ int last;
    __shared__ float wt[INFER_CUDA_MERGE_HEADS][32], tl[INFER_CUDA_MERGE_HEADS];   /* n_split <= 32 */
    __threadfence();
    __syncthreads();                          /* every thread's partials written and fenced */
    if (threadIdx.x == 0) {
        last = atomicAdd(count, 1) == active - 1;
        if (last) *count = 0;                 /* all the active splits have counted: nobody adds again */
    }
    __syncthreads();
    if (!last) return 0;
    __threadfence();
    const int lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    for (int g = threadIdx.x >> 5; g < heads; g += nw) {
        const float *pr = part + (size_t)g * n_split * (hd + 2) + (size_t)lane * (hd + 2);
        const float ms = lane < active ? __ldcg(pr) : -INFINITY, ls = lane < active ? __ldcg(pr + 1) : 0.0f;
        const float M = warp_max(ms), f = ms == -INFINITY ? 0.0f : expf(ms - M);
        const float L = warp_sum(ls * f);
        wt[g][lane] = f;
        if (lane == 0) tl[g] = L;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < heads * hd; i += blockDim.x) {
        const int g = i / hd, d = i - g * hd;
        const float *pr = part + (size_t)g * n_split * (hd + 2) + 2 + d;
        float a = 0.0f;
INFER_CUDA_UNROLL8
        for (int s = 0; s < active; s++) a += __ldcg(pr + (size_t)s * (hd + 2)) * wt[g][s];
        out[(size_t)g * hd + d] = a / tl[g];
    }
    return 1;
}

/* Attention's output quantized for the output projection's decode matvec, inside the attention
 * launch (attention_matmul_add in the fast mode, the kernels' Q = 1): qs = 32 makes Q8_0
 * blocks, 256 Q8_K blocks, the bytes k_quant_x would write into codes [rows, QD] and xds
 * [rows, QD / 32]. The block that holds the final output of a head group -- columns a .. a + W
 * of row r's QD, W = G hd -- quantizes the quantization blocks that lie inside them itself. A
 * quantization block that reaches past the head group's edge (Q8_K's 256 columns over groups
 * of 64 or 128, or heads that are not whole 32-blocks) is also written by its neighbours: it is
 * at most the first or the last one the group touches, and each of the head groups that write
 * into it takes a ticket from count [rows, QD / qs]; the last to come quantizes it, reading the
 * others' floats through L2 after the fence (mvq_quant_out's pattern), and sets the counter
 * back to 0 for the next launch or graph replay. orow: row r's output, QD floats. Not inlined:
 * the attention's own registers stay as they were without it. */
#ifdef INFER_CUDA_EMU
#define INFER_CUDA_NOINLINE
#else
#define INFER_CUDA_NOINLINE __noinline__
#endif
__device__ INFER_CUDA_NOINLINE void attn_quant_out(int8_t *codes, float2 *xds, int *count, int qs, const float *orow, int r, int QD, int a, int W) {
    __shared__ int take[2];                   /* quantize the first / the last block touched */
    const int g0 = a / qs, g1 = (a + W - 1) / qs;
    __threadfence();                          /* this block's output, seen before its tickets */
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int e = 0; e < 2; e++) {
            const int g = e ? g1 : g0, lo = g * qs;
            int t = 1;
            if (e && g1 == g0) t = take[0];   /* one block touched: one ticket */
            else if (lo < a || lo + qs > a + W) {
                int *cnt = count + (size_t)r * (QD / qs) + g;
                t = atomicAdd(cnt, 1) == (lo + qs - 1) / W - lo / W;      /* head groups lo / W .. (lo + qs - 1) / W write into it */
                if (t) *cnt = 0;
            }
            take[e] = t;
        }
    }
    __syncthreads();
    __threadfence();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    int8_t *q = codes + (size_t)r * QD;
    float2 *ds = xds + (size_t)r * (QD / 32);
    for (int g = g0 + warp; g <= g1; g += nw) {
        if ((g == g0 && !take[0]) || (g == g1 && !take[1])) continue;
        if (qs == 32) {
            quant_q8_0_warp(__ldcg(orow + 32 * g + lane), q + 32 * g, ds + g);
        } else {
            float v[8];
INFER_CUDA_UNROLL
            for (int i = 0; i < 8; i++) v[i] = __ldcg(orow + 256 * g + 8 * lane + i);
            quant_q8_k_warp(v, q + 256 * g, ds + 8 * g);
        }
    }
}

/* Where a position's key and value are: the rows at k and v (F16 when f16, else F32).
 * A list of positions -- the cache in order for k_attention, a window plus chosen entries for
 * k_attention_sparse -- is a functor from the position's index in the list to its attn_kv;
 * its may_share says whether k == v can happen (then a row is loaded once for both). */
struct attn_kv {
    const void *k, *v;        /* pointers, not pool + offset: fewer registers while 4 rows load */
    int f16;
};
struct KeysCache {            /* index p: cache position p; head: the KV head's first element in a row */
    static constexpr int may_share = 0;
    infer_cuda_kv kv;
    size_t head;
    __device__ attn_kv operator()(int p) const {
        const size_t at = (kv_row(kv.table, kv.bs, p) * kv.dim + head) << (kv.f16 ? 1 : 2);
        attn_kv a = { (const char *)kv.k + at, (const char *)kv.v + at, kv.f16 };
        return a;
    }
};

/* One step of a warp's online softmax over the list's positions p0 .. p0 + ATT_POS (those
 * at or past c1 are read at c0 instead, in bounds, and count for nothing), for G query heads
 * that share the keys: all the keys and values are loaded first -- one memory latency for
 * the group, not one each, and one read for the G heads -- then each head's scores, then
 * its update above as one step. Lane l holds dims l, l+32, ... of each head's q and acc. */
template <int DPL, int G, class Keys>
__device__ __forceinline__ void attn_step(const Keys &keys, int p0, int c0, int c1, const float (*qr)[DPL], float (*acc)[DPL], float *m,
                                          float *l, int hd, float scale, int lane) {
    float s[G][INFER_CUDA_ATT_POS], vr[INFER_CUDA_ATT_POS][DPL];
INFER_CUDA_UNROLL
    for (int i = 0; i < INFER_CUDA_ATT_POS; i++) {
        const attn_kv a = keys(p0 + i < c1 ? p0 + i : c0);
        const int same = Keys::may_share && a.k == a.v;
        float t[G];
INFER_CUDA_UNROLL
        for (int g = 0; g < G; g++) t[g] = 0.0f;
INFER_CUDA_UNROLL
        for (int j = 0; j < DPL; j++) {
            const int d = lane + 32 * j;
            const float kd = d < hd ? kv_load(a.k, a.f16, d) : 0.0f;
INFER_CUDA_UNROLL
            for (int g = 0; g < G; g++) if (d < hd) t[g] += qr[g][j] * kd;
            vr[i][j] = d >= hd ? 0.0f : same ? kd : kv_load(a.v, a.f16, d);
        }
INFER_CUDA_UNROLL
        for (int g = 0; g < G; g++) s[g][i] = t[g];
    }
INFER_CUDA_UNROLL
    for (int g = 0; g < G; g++) {
        float m2 = m[g];
INFER_CUDA_UNROLL
        for (int i = 0; i < INFER_CUDA_ATT_POS; i++) {
            s[g][i] = warp_sum(s[g][i]) * scale;
            if (p0 + i < c1) m2 = fmaxf(m2, s[g][i]);
        }
        const float corr = expf(m[g] - m2);
        float e[INFER_CUDA_ATT_POS];
        l[g] *= corr;
INFER_CUDA_UNROLL
        for (int i = 0; i < INFER_CUDA_ATT_POS; i++) { e[i] = p0 + i < c1 ? expf(s[g][i] - m2) : 0.0f; l[g] += e[i]; }
INFER_CUDA_UNROLL
        for (int j = 0; j < DPL; j++) {
            float a = acc[g][j] * corr;
INFER_CUDA_UNROLL
            for (int i = 0; i < INFER_CUDA_ATT_POS; i++) a += e[i] * vr[i][j];
            acc[g][j] = a;
        }
        m[g] = m2;
    }
}

/* A block's share of a list of n positions for G query heads (head g's q at qh + g hd):
 * chunks of `chunk` positions dealt round-robin to the n_split splits, the warps of the block
 * taking ATT_POS consecutive positions each in turn, each warp's (m, l) starting as given
 * ((-inf, 0), or a sink's (s, 1)); then attn_finish. o, slot: as attn_finish's. */
template <int DPL, int G, class Keys>
__device__ void attn_block(const Keys &keys, int n, int chunk, const float *qh, float m0, float l0, float *o, float *slot, int hd, float scale,
                           int split, int n_split) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float qr[G][DPL], acc[G][DPL], m[G], l[G];
INFER_CUDA_UNROLL
    for (int g = 0; g < G; g++) {
        m[g] = m0;
        l[g] = l0;
INFER_CUDA_UNROLL
        for (int j = 0; j < DPL; j++) { const int d = lane + 32 * j; qr[g][j] = d < hd ? qh[(size_t)g * hd + d] : 0.0f; acc[g][j] = 0.0f; }
    }
    for (int c0 = split * chunk; c0 < n; c0 += n_split * chunk) {
        const int c1 = c0 + chunk < n ? c0 + chunk : n;
        for (int p0 = c0 + warp * INFER_CUDA_ATT_POS; p0 < c1; p0 += INFER_CUDA_ATT_WARPS * INFER_CUDA_ATT_POS)
            attn_step<DPL, G>(keys, p0, c0, c1, qr, acc, m, l, hd, scale, lane);
    }
    attn_finish<DPL, G>(m, l, acc, o, slot, hd, n_split);
}

/* Block (head group b, row r, split): query heads b G .. b G + G - 1, which share the KV head
 * (b G) / group, so each key and value read serves G heads (GQA); G divides the group.
 * Q = 1: the block holding the heads' output also quantizes it for Wo (attn_quant_out, aq). */
template <int DPL, int G, int Q>
__global__ void __launch_bounds__(32 * INFER_CUDA_ATT_WARPS) k_attention(float *out, float *part, int *count, const float *q, infer_cuda_kv kv,
                                                                         const int32_t *pos, int n_head, int group, int hd, float scale, int n_split,
                                                                         infer_cuda_qout aq) {
    INFER_CUDA_PDL_TRIGGER();
    l2_prefetch(aq.pf);                                   /* Wo's first columns (attention_matmul_add), before the wait */
    INFER_CUDA_PDL_WAIT();
    const int h0 = blockIdx.x * G, r = blockIdx.y, split = blockIdx.z;
    const size_t row = (size_t)r * n_head + h0;
    KeysCache keys;
    keys.kv = kv;
    keys.kv.table = kv_table(kv.table, kv.rows, r);
    keys.head = (size_t)(h0 / group) * hd;
    const int n = pos[r] + 1, active = attn_active(n, INFER_CUDA_ATT_CHUNK, n_split);
    if (split >= active) return;
    attn_block<DPL, G>(keys, n, INFER_CUDA_ATT_CHUNK, q + row * hd, -INFINITY, 0.0f, out + row * hd,
                       active > 1 ? part + (row * n_split + split) * (hd + 2) : NULL, hd, scale, split, n_split);
    if (active > 1 && !attn_merge_last(out + row * hd, part + row * n_split * (hd + 2), count + (size_t)r * gridDim.x + blockIdx.x, n_split, active, hd, G))
        return;
    if (Q) attn_quant_out(aq.codes, aq.ds, aq.count, aq.size, out + (size_t)r * n_head * hd, r, n_head * hd, h0 * hd, G * hd);
}

/* k_attention for an F16 cache (the fast mode) with head size HD = 64, 128 or 256: the same
 * blocks, chunks, splits and merge, but a lane reads 8 consecutive halves of a row in one
 * 16-byte load. L = HD / 8 lanes cover a row, so a warp's 32 lanes read PW = 32 / L
 * positions at once, R = 4 / PW times a step (4 positions a warp a step, as k_attention's).
 * Lane l holds dims 8 (l % L) .. 8 (l % L) + 7 of each head's q and acc, for the positions
 * of its segment l / L: a score is summed over the segment's L lanes; the step's max and
 * softmax sum over all the warp's positions (the segments' shuffles), so (m, l) stay the
 * same in every lane, and the segments' accumulators are added together once, at the end.
 * Q: as k_attention's. */
template <int HD, int G, int Q>
__global__ void __launch_bounds__(32 * INFER_CUDA_ATT_WARPS) k_attention_h16(float *out, float *part, int *count, const float *q, infer_cuda_kv kv,
                                                                             const int32_t *pos, int n_head, int group, float scale, int n_split,
                                                                             infer_cuda_qout aq) {
    INFER_CUDA_PDL_TRIGGER();
    l2_prefetch(aq.pf);                                   /* Wo's first columns (attention_matmul_add), before the wait */
    INFER_CUDA_PDL_WAIT();
    constexpr int L = HD / 8, PW = 32 / L, R = INFER_CUDA_ATT_POS / PW;
    const int h0 = blockIdx.x * G, r = blockIdx.y, split = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, seg = lane / L, d0 = 8 * (lane % L);
    const size_t row = (size_t)r * n_head + h0;
    KeysCache keys;
    keys.kv = kv;
    keys.kv.table = kv_table(kv.table, kv.rows, r);
    keys.head = (size_t)(h0 / group) * HD;
    const int n = pos[r] + 1, active = attn_active(n, INFER_CUDA_ATT_CHUNK, n_split);
    if (split >= active) return;
    float qr[G][8], acc[G][8], m[G], l[G];
INFER_CUDA_UNROLL
    for (int g = 0; g < G; g++) {
        m[g] = -INFINITY;
        l[g] = 0.0f;
INFER_CUDA_UNROLL
        for (int j = 0; j < 8; j++) { qr[g][j] = q[(row + g) * HD + d0 + j]; acc[g][j] = 0.0f; }
    }
    for (int c0 = split * INFER_CUDA_ATT_CHUNK; c0 < n; c0 += n_split * INFER_CUDA_ATT_CHUNK) {
        const int c1 = c0 + INFER_CUDA_ATT_CHUNK < n ? c0 + INFER_CUDA_ATT_CHUNK : n;
        for (int p0 = c0 + warp * INFER_CUDA_ATT_POS; p0 < c1; p0 += INFER_CUDA_ATT_WARPS * INFER_CUDA_ATT_POS) {
            uint4 kw[R], vw[R];               /* all the step's loads first: one latency */
INFER_CUDA_UNROLL
            for (int i = 0; i < R; i++) {
                const int p = p0 + seg + PW * i;
                const attn_kv a = keys(p < c1 ? p : c0);
                kw[i] = *(const uint4 *)((const __half *)a.k + d0);
                vw[i] = *(const uint4 *)((const __half *)a.v + d0);
            }
            float kf[R][8], vf[R][8];
INFER_CUDA_UNROLL
            for (int i = 0; i < R; i++) {
                const uint32_t kk[4] = { kw[i].x, kw[i].y, kw[i].z, kw[i].w }, vv[4] = { vw[i].x, vw[i].y, vw[i].z, vw[i].w };
INFER_CUDA_UNROLL
                for (int j = 0; j < 8; j++) {
                    kf[i][j] = __half2float(__ushort_as_half((unsigned short)(kk[j / 2] >> (16 * (j % 2)))));
                    vf[i][j] = __half2float(__ushort_as_half((unsigned short)(vv[j / 2] >> (16 * (j % 2)))));
                }
            }
INFER_CUDA_UNROLL
            for (int g = 0; g < G; g++) {
                float s[R], m2 = m[g];
INFER_CUDA_UNROLL
                for (int i = 0; i < R; i++) {
                    float t = 0.0f;
INFER_CUDA_UNROLL
                    for (int j = 0; j < 8; j++) t += qr[g][j] * kf[i][j];
                    for (int o = L / 2; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);   /* the segment's sum */
                    s[i] = p0 + seg + PW * i < c1 ? t * scale : -INFINITY;
                    m2 = fmaxf(m2, s[i]);
                }
                for (int o = L; o < 32; o <<= 1) m2 = fmaxf(m2, __shfl_xor_sync(0xffffffffu, m2, o));   /* over the segments */
                const float corr = expf(m[g] - m2);
                float e[R], sum = 0.0f;
INFER_CUDA_UNROLL
                for (int i = 0; i < R; i++) { e[i] = s[i] == -INFINITY ? 0.0f : expf(s[i] - m2); sum += e[i]; }
                for (int o = L; o < 32; o <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
                l[g] = l[g] * corr + sum;
INFER_CUDA_UNROLL
                for (int j = 0; j < 8; j++) {
                    float a = acc[g][j] * corr;
INFER_CUDA_UNROLL
                    for (int i = 0; i < R; i++) a += e[i] * vf[i][j];
                    acc[g][j] = a;
                }
                m[g] = m2;
            }
        }
    }
INFER_CUDA_UNROLL
    for (int g = 0; g < G; g++)               /* the segments' accumulators, into every lane */
INFER_CUDA_UNROLL
        for (int j = 0; j < 8; j++)
            for (int o = L; o < 32; o <<= 1) acc[g][j] += __shfl_xor_sync(0xffffffffu, acc[g][j], o);
    attn_finish<8, G, L>(m, l, acc, out + row * HD, active > 1 ? part + (row * n_split + split) * (HD + 2) : NULL, HD, n_split);
    if (active > 1 && !attn_merge_last(out + row * HD, part + row * n_split * (HD + 2), count + (size_t)r * gridDim.x + blockIdx.x, n_split, active, HD, G))
        return;
    if (Q) attn_quant_out(aq.codes, aq.ds, aq.count, aq.size, out + (size_t)r * n_head * HD, r, n_head * HD, h0 * HD, G * HD);
}

/* a buffer of the context (*buf, *have bytes) of at least `bytes` */
static int infer_cuda_grow(infer_cuda_ctx *c, void **buf, size_t *have, size_t bytes, const char *what) {
    if (bytes <= *have) return 1;
    infer_cuda_flush(c);                      /* recorded launches may use the old buffer */
    if (*buf) {
        infer_cuda_record(c, cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
        infer_cuda_record(c, cudaFree(*buf), "cudaFree");
        *buf = NULL;
        *have = 0;
    }
    cudaError_t e = cudaMalloc(buf, bytes);
    if (e != cudaSuccess) { *buf = NULL; infer_cuda_record(c, e, what); return 0; }
    *have = bytes;
    return 1;
}
static int infer_cuda_reserve(infer_cuda_ctx *c, size_t bytes) {
    return infer_cuda_grow(c, &c->scratch, &c->scratch_bytes, bytes, "cudaMalloc (attention scratch)");
}

/* Splits of an attention launch of `blocks` blocks (each (row, `heads` query heads)): enough
 * for four waves over the SMs when the blocks alone are too few, with scratch for the heads'
 * partials and a zeroed counter per block for attn_merge_last (0: no memory to be had). The
 * host does not know the positions (they are on the device); the splits that get no chunk
 * return at once (attn_active). */
static int infer_cuda_att_force = -1;     /* the tests: the splits of every decode attention launch; -1: chosen here */
static int infer_cuda_att_splits(infer_cuda_ctx *c, int blocks, int heads, int hd) {
    int n_split = 1;
    if (blocks < 4 * infer_cuda_sms) n_split = (4 * infer_cuda_sms + blocks - 1) / blocks;
    if (infer_cuda_att_force > 0) n_split = infer_cuda_att_force;
    if (n_split > 32) n_split = 32;
    if (n_split == 1) return 1;
    if (!infer_cuda_reserve(c, (size_t)blocks * heads * n_split * (hd + 2) * sizeof(float))) return 0;
    const size_t need = (size_t)blocks * sizeof(int);
    if (need > c->att_count_bytes) {          /* a new buffer (grow flushed the recording): zero it now */
        if (!infer_cuda_grow(c, &c->att_count, &c->att_count_bytes, need, "cudaMalloc (attention counters)")) return 0;
        infer_cuda_record(c, cudaMemsetAsync(c->att_count, 0, c->att_count_bytes, c->stream), "cudaMemsetAsync");
    }
    return n_split;
}

/* query heads a decode block takes: the largest of 8, 4, 2 that divides the GQA group with
 * G x DPL <= ATT_HEADS, else 1 */
static int infer_cuda_att_heads(int group, int dpl) {
    for (int g = 8; g > 1; g /= 2)
        if (group % g == 0 && g * dpl <= INFER_CUDA_ATT_HEADS) return g;
    return 1;
}

/* ---- prompt attention on tensor cores (the fast mode): flash attention ----
 * A block takes 64 (query row, head) pairs of one KV head -- the GQA group's heads of
 * consecutive rows, pair m = (row m / group, head kvh group + m % group) -- and walks the
 * keys KT positions a step, never materialising the scores:
 *   S = Q K^T scale (64 x KT),  m' = max(m, rowmax S),  P = e^(S - m'),
 *   l = l e^(m - m') + rowsum P,  O = O e^(m - m') + P V,  and at the end out = O / l.
 * Q [64, hd] and two stages of K and V [KT, hd] sit in shared memory as F16: an F16 cache's
 * rows are copied by cp.async into one stage while the warps compute on the other (an F32
 * cache's, and the f32 queries, are rounded on the way in); each of the 4 warps
 * owns 16 pairs, its S and O in registers as mma_f16's accumulators. P leaves the S
 * accumulators as the next product's A operand (the C fragment of m16n8 is the A fragment of
 * m16n8k16, two key tiles at a time), rounded to F16. Causality: pair m sees cache positions
 * 0 .. pos[row]; the walk stops after the tile's largest position, and only the steps past
 * its smallest one mask per pair. Exponentials are base 2 with log2(e) folded into the scale. */
#define INFER_CUDA_FA_M 64            /* pairs a block: 4 warps x 16 */
#define INFER_CUDA_FA_ROWS 16         /* query rows from which a fast-mode prompt takes these tiles */

/* D = A B + D on the 16-bit tensor cores, a warp at a time (mma.sync m16n8k16, F16 inputs, f32
 * accumulators): A 16 x 16 (4 registers of two halves a lane), B 16 x 8 (2), D 16 x 8 (4 f32).
 * With g = lane / 4, t = lane % 4 (PTX ISA; tools/cuda_emu.h emulates the same layout):
 *   a0 (g, 2t..2t+1)  a1 (g+8, 2t..2t+1)  a2 (g, 2t+8..2t+9)  a3 (g+8, 2t+8..2t+9)
 *   b0 (2t..2t+1, g)  b1 (2t+8..2t+9, g)      d0, d1 (g, 2t), (g, 2t+1)  d2, d3 (g+8, ..) */
__device__ __forceinline__ void mma_f16(float *d, const uint32_t *a, const uint32_t *b) {
#ifdef INFER_CUDA_EMU
    emu_mma_f16(d, a, b, d);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d; (void)a; (void)b;         /* before Ampere the host never picks these tiles */
#endif
}
/* two floats as halves in one register, lo in the low 16 bits */
__device__ __forceinline__ uint32_t half2_bits(float lo, float hi) {
    return (uint32_t)__half_as_ushort(__float2half_rn(lo)) | (uint32_t)__half_as_ushort(__float2half_rn(hi)) << 16;
}
/* the same, each saturated at +-65504 first (as the cache store does: a large query or F32
 * cache value becomes F16's largest, not infinite) */
__device__ __forceinline__ uint32_t half2_sat(float lo, float hi) { return half2_bits(f16_saturate(lo), f16_saturate(hi)); }
__device__ __forceinline__ uint32_t ld_u32(const __half *p) { return *(const uint32_t *)p; }

/* the shared memory of k_flash_attention<HD, KT>: Q, then two stages of K and V (rows of HD +
 * 8 halves each), then the pairs' last positions. The 8 halves of padding put the 8 rows a
 * fragment load touches in different banks. */
static constexpr size_t infer_cuda_fa_shm(int hd, int kt) {
    return (size_t)(INFER_CUDA_FA_M + 4 * kt) * (hd + 8) * 2 + INFER_CUDA_FA_M * sizeof(int);
}

/* Keys and values of positions kb .. kb + KT - 1 into a stage (Ks, Vs: [KT, HD + 8] halves),
 * 8 elements a thread at a time through the block table; positions from `end` on are zeros.
 * An F16 cache's rows go as they are, by cp.async (in flight until cp_async_wait: the caller
 * computes on the other stage meanwhile); an F32 cache's are rounded to halves on the way. */
template <int HD, int KT>
__device__ __forceinline__ void fa_load_kv(__half *Ks, __half *Vs, const infer_cuda_kv &kv, int kvh, int kb, int end) {
    constexpr int QS = HD + 8;
    for (int u = threadIdx.x; u < KT * HD / 8; u += 128) {
        const int i = u / (HD / 8), d = u % (HD / 8) * 8, p = kb + i;
        __half *kd = Ks + i * QS + d, *vd = Vs + i * QS + d;
        if (p >= end) {
            const uint4 z = { 0, 0, 0, 0 };
            *(uint4 *)kd = z;
            *(uint4 *)vd = z;
            continue;
        }
        const size_t at = kv_row(kv.table, kv.bs, p) * kv.dim + (size_t)kvh * HD + d;
        if (kv.f16) {
            cp_async16(kd, (const __half *)kv.k + at, 16);
            cp_async16(vd, (const __half *)kv.v + at, 16);
        } else {
            const float4 *kf = (const float4 *)((const float *)kv.k + at), *vf = (const float4 *)((const float *)kv.v + at);
            const float4 k0 = kf[0], k1 = kf[1], v0 = vf[0], v1 = vf[1];
            uint4 kw, vw;
            kw.x = half2_sat(k0.x, k0.y); kw.y = half2_sat(k0.z, k0.w); kw.z = half2_sat(k1.x, k1.y); kw.w = half2_sat(k1.z, k1.w);
            vw.x = half2_sat(v0.x, v0.y); vw.y = half2_sat(v0.z, v0.w); vw.z = half2_sat(v1.x, v1.y); vw.w = half2_sat(v1.z, v1.w);
            *(uint4 *)kd = kw;
            *(uint4 *)vd = vw;
        }
    }
    cp_async_commit();
}
/* two halves of a column of V (rows k, k + 1 of the row-major tile) as one B register */
__device__ __forceinline__ uint32_t ld_col2(const __half *p, int stride) {
    return (uint32_t)__half_as_ushort(p[0]) | (uint32_t)__half_as_ushort(p[stride]) << 16;
}

template <int HD, int KT>
__global__ void __launch_bounds__(128) k_flash_attention(float *out, const float *q, infer_cuda_kv kv, const int32_t *pos, int rows, int n_head,
                                                         int group, float scale) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_DYN_SHARED(uint4, fa_shm);
    constexpr int QS = HD + 8, NT = KT / 8, NO = HD / 8;
    __half *Qs = (__half *)fa_shm, *KV = Qs + INFER_CUDA_FA_M * QS;     /* stage s: K at KV + 2 s KT QS, V after it */
    int *lim = (int *)(KV + 4 * KT * QS);
    __shared__ int kend, kmin;
    const int kvh = blockIdx.y, m0 = blockIdx.x * INFER_CUDA_FA_M, M = rows * group;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    if (tid < INFER_CUDA_FA_M) lim[tid] = m0 + tid < M ? pos[(m0 + tid) / group] : -1;
    __syncthreads();
    if (tid == 0) {                           /* the walk's end and where masking starts */
        int hi = 0, lo = 0x7fffffff;
        for (int i = 0; i < INFER_CUDA_FA_M; i++)
            if (lim[i] >= 0) { hi = lim[i] > hi ? lim[i] : hi; lo = lim[i] < lo ? lim[i] : lo; }
        for (int i = 0; i < INFER_CUDA_FA_M; i++) if (lim[i] < 0) lim[i] = 0;   /* pairs past the rows: key 0, never stored */
        kend = hi + 1;
        kmin = lo;
    }
    __syncthreads();
    const int n_keys = kend, diag_from = kmin, r0 = warp * 16;
    fa_load_kv<HD, KT>(KV, KV + KT * QS, kv, kvh, 0, n_keys);          /* the first tile flies while Q loads */
    /* Q: 4 floats a thread at a time, rounded to halves */
    for (int u = tid; u < INFER_CUDA_FA_M * HD / 4; u += 128) {
        const int i = u / (HD / 4), d = u % (HD / 4) * 4, m = m0 + i;
        float4 v = { 0.0f, 0.0f, 0.0f, 0.0f };
        if (m < M) v = *(const float4 *)(q + ((size_t)(m / group) * n_head + (size_t)kvh * group + m % group) * HD + d);
        uint32_t *dst = (uint32_t *)(Qs + i * QS + d);
        dst[0] = half2_sat(v.x, v.y);
        dst[1] = half2_sat(v.z, v.w);
    }
    const int lim0 = lim[r0 + g], lim1 = lim[r0 + g + 8];
    const float sl2 = scale * 1.4426950408889634f;   /* log2(e): e^x = 2^(x log2 e) */
    float o[NO][4], mrow[2] = { -INFINITY, -INFINITY }, lrow[2] = { 0.0f, 0.0f };
INFER_CUDA_UNROLL
    for (int n = 0; n < NO; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    for (int kb = 0, st = 0; kb < n_keys; kb += KT, st ^= 1) {
        /* the next tile into the other stage (free: every warp passed the barrier that ended
         * the step before, which read it), then wait for this one */
        const __half *Ks = KV + 2 * st * KT * QS, *Vs = Ks + KT * QS;
        if (kb + KT < n_keys) {
            __half *nk = KV + 2 * (st ^ 1) * KT * QS;
            fa_load_kv<HD, KT>(nk, nk + KT * QS, kv, kvh, kb + KT, n_keys);
            cp_async_wait<1>();
        } else cp_async_wait<0>();
        __syncthreads();                      /* this stage's copies (and Q) seen by every thread */
        /* S = Q K^T for the warp's 16 pairs x KT keys */
        float s[NT][4];
INFER_CUDA_UNROLL
        for (int j = 0; j < NT; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
INFER_CUDA_UNROLL
        for (int k0 = 0; k0 < HD; k0 += 16) {
            const __half *qa = Qs + (r0 + g) * QS + k0 + 2 * t;
            const uint32_t a[4] = { ld_u32(qa), ld_u32(qa + 8 * QS), ld_u32(qa + 8), ld_u32(qa + 8 * QS + 8) };
INFER_CUDA_UNROLL
            for (int j = 0; j < NT; j++) {
                const __half *kp = Ks + (j * 8 + g) * QS + k0 + 2 * t;
                const uint32_t b[2] = { ld_u32(kp), ld_u32(kp + 8) };
                mma_f16(s[j], a, b);
            }
        }
        /* scale, mask, the online softmax; this lane's pairs are r0 + g (elements 0, 1) and
         * r0 + g + 8 (2, 3), its keys kb + 8j + 2t + (0, 1); a quad of lanes holds a pair's row */
        const int mask = kb + KT - 1 > diag_from;
        float mx[2] = { mrow[0], mrow[1] };
INFER_CUDA_UNROLL
        for (int j = 0; j < NT; j++)
INFER_CUDA_UNROLL
            for (int e = 0; e < 4; e++) {
                const int key = kb + 8 * j + 2 * t + (e & 1);
                float v = s[j][e] * sl2;
                if (mask && key > (e < 2 ? lim0 : lim1)) v = -INFINITY;
                s[j][e] = v;
                mx[e >> 1] = fmaxf(mx[e >> 1], v);
            }
        float corr[2], sum[2] = { 0.0f, 0.0f };
INFER_CUDA_UNROLL
        for (int h = 0; h < 2; h++) {
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
            corr[h] = exp2f(mrow[h] - mx[h]);  /* 0 on the first step: mrow = -inf, mx finite (key 0 is always seen) */
            mrow[h] = mx[h];
        }
INFER_CUDA_UNROLL
        for (int j = 0; j < NT; j++)
INFER_CUDA_UNROLL
            for (int e = 0; e < 4; e++) { s[j][e] = exp2f(s[j][e] - mx[e >> 1]); sum[e >> 1] += s[j][e]; }
        lrow[0] = lrow[0] * corr[0] + sum[0];
        lrow[1] = lrow[1] * corr[1] + sum[1];
INFER_CUDA_UNROLL
        for (int n = 0; n < NO; n++) { o[n][0] *= corr[0]; o[n][1] *= corr[0]; o[n][2] *= corr[1]; o[n][3] *= corr[1]; }
        /* O += P V, 16 keys a step: P's A fragment is the S fragments of key tiles 2kk, 2kk + 1;
         * V's B fragment pairs two rows of a column (V stays row-major, as it was copied) */
INFER_CUDA_UNROLL
        for (int kk = 0; kk < KT / 16; kk++) {
            const uint32_t a[4] = { half2_bits(s[2 * kk][0], s[2 * kk][1]), half2_bits(s[2 * kk][2], s[2 * kk][3]),
                                    half2_bits(s[2 * kk + 1][0], s[2 * kk + 1][1]), half2_bits(s[2 * kk + 1][2], s[2 * kk + 1][3]) };
INFER_CUDA_UNROLL
            for (int n = 0; n < NO; n++) {
                const __half *vp = Vs + (kk * 16 + 2 * t) * QS + n * 8 + g;
                const uint32_t b[2] = { ld_col2(vp, QS), ld_col2(vp + 8 * QS, QS) };
                mma_f16(o[n], a, b);
            }
        }
        __syncthreads();                      /* every warp is done with this stage: the next step refills it */
    }
    /* out = O / l, l summed over the quad's lanes */
INFER_CUDA_UNROLL
    for (int h = 0; h < 2; h++) {
        float l = lrow[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int m = m0 + r0 + g + 8 * h;
        if (m >= M) continue;
        float *dst = out + ((size_t)(m / group) * n_head + (size_t)kvh * group + m % group) * HD + 2 * t;
        const float inv = 1.0f / l;
INFER_CUDA_UNROLL
        for (int n = 0; n < NO; n++) { dst[8 * n] = o[n][2 * h] * inv; dst[8 * n + 1] = o[n][2 * h + 1] * inv; }
    }
}

/* The fast mode's prompt attention, when it applies (returns 1): F16 or F32 cache, head
 * sizes 64, 128, 256, at least FA_ROWS query rows of one sequence (one block table: a tile's
 * rows share its key tiles), tensor cores of compute capability 8.0 or later; anything
 * else (and the precise mode) runs k_attention. */
static int infer_cuda_flash(infer_cuda_ctx *c, float *out, const float *q, const infer_cuda_kv &kv, const int32_t *pos, int rows, int n_head,
                            int n_head_kv, int hd, float scale) {
    if (c->precise || !infer_cuda_mma8 || rows < INFER_CUDA_FA_ROWS || n_head_kv <= 0 || n_head % n_head_kv || kv.rows) return 0;
    if (hd != 64 && hd != 128 && hd != 256) return 0;
    const int group = n_head / n_head_kv;
    const dim3 grid((unsigned)(((long long)rows * group + INFER_CUDA_FA_M - 1) / INFER_CUDA_FA_M), n_head_kv);
#define INFER_CUDA_FA(HD, KT) do { \
        static int opted;                     /* above 48 KB of shared memory a kernel must ask, once */ \
        const size_t shm = infer_cuda_fa_shm(HD, KT); \
        if (!opted && shm > 48 * 1024) \
            infer_cuda_record(c, cudaFuncSetAttribute(k_flash_attention<HD, KT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm), \
                              "cudaFuncSetAttribute (flash attention)"); \
        opted = 1; \
        INFER_CUDA_LAUNCH(grid, 128, shm, c, k_flash_attention<HD, KT>)(out, q, kv, pos, rows, n_head, group, scale); \
    } while (0)
    if (hd == 64) INFER_CUDA_FA(64, 64);
    else if (hd == 128) INFER_CUDA_FA(128, 64);
    else INFER_CUDA_FA(256, 32);
#undef INFER_CUDA_FA
    INFER_CUDA_LAUNCHED(c, "attention (flash)");
    return 1;
}

/* attention (the table's entry); aq.kind set: the launch also writes out's int8 form for the
 * output projection (attn_quant_out; decode rows only, never the flash tiles) */
static void infer_cuda_attention_q(infer_cuda_ctx *c, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos, int rows, int n_head,
                                   int n_head_kv, int head_dim, float scale, const infer_cuda_qout &aq) {
    if (rows <= 0) return;
    if (head_dim > INFER_CUDA_ATT_MAXD) { infer_cuda_record(c, cudaErrorInvalidValue, "attention: head size above 512"); return; }
    /* grid.y holds at most 65535 rows: longer chunks go in parts */
    if (rows > 65535) {
        const infer_kv_view rest = infer_cuda_kv_skip(kv, 65535);
        const size_t at = (size_t)65535 * n_head * head_dim;
        infer_cuda_attention_q(c, out, q, kv, pos, 65535, n_head, n_head_kv, head_dim, scale, aq);
        infer_cuda_attention_q(c, out + at, q + at, &rest, pos + 65535, rows - 65535, n_head, n_head_kv, head_dim, scale, aq);
        return;
    }
    const infer_cuda_kv cache = infer_cuda_kv_of(kv);
    const int group = n_head / n_head_kv;
    if (!aq.kind && infer_cuda_flash(c, out, q, cache, pos, rows, n_head, n_head_kv, head_dim, scale)) return;
    const int h16 = !c->precise && cache.f16 && (head_dim == 64 || head_dim == 128 || head_dim == 256);
    const int dpl = h16 ? 8 : head_dim <= 32 ? 1 : head_dim <= 64 ? 2 : head_dim <= 128 ? 4 : head_dim <= 256 ? 8 : 16;
    const int G = h16 ? infer_cuda_att_heads(group, 4) : infer_cuda_att_heads(group, dpl);   /* h16: 8 q floats a head, G <= 4 */
    const int n_split = infer_cuda_att_splits(c, rows * (n_head / G), G, head_dim);
    if (!n_split) return;
    dim3 grid(n_head / G, rows, n_split);
#define INFER_CUDA_H16G(HD, G, Q) INFER_CUDA_LAUNCH(grid, 32 * INFER_CUDA_ATT_WARPS, 0, c, k_attention_h16<HD, G, Q>)(out, (float *)c->scratch, \
        (int *)c->att_count, q, cache, pos, n_head, group, scale, n_split, aq)
#define INFER_CUDA_H16(HD, Q) do { if (G == 4) INFER_CUDA_H16G(HD, 4, Q); else if (G == 2) INFER_CUDA_H16G(HD, 2, Q); else INFER_CUDA_H16G(HD, 1, Q); } while (0)
#define INFER_CUDA_H16Q(HD) do { if (aq.kind) INFER_CUDA_H16(HD, 1); else INFER_CUDA_H16(HD, 0); } while (0)
    if (h16) {
        if (head_dim == 64) INFER_CUDA_H16Q(64);
        else if (head_dim == 128) INFER_CUDA_H16Q(128);
        else INFER_CUDA_H16Q(256);
        INFER_CUDA_LAUNCHED(c, "attention");
        return;
    }
#undef INFER_CUDA_H16Q
#undef INFER_CUDA_H16
#undef INFER_CUDA_H16G
#define INFER_CUDA_ATT(DPL, G, Q) INFER_CUDA_LAUNCH(grid, 32 * INFER_CUDA_ATT_WARPS, 0, c, k_attention<DPL, G, Q>)(out, (float *)c->scratch, \
        (int *)c->att_count, q, cache, pos, n_head, group, head_dim, scale, n_split, aq)
#define INFER_CUDA_ATT_G(DPL, Q) do { if (G == 8) INFER_CUDA_ATT(DPL, (DPL <= 2 ? 8 : 1), Q); else if (G == 4) INFER_CUDA_ATT(DPL, (DPL <= 4 ? 4 : 1), Q); \
        else if (G == 2) INFER_CUDA_ATT(DPL, (DPL <= 8 ? 2 : 1), Q); else INFER_CUDA_ATT(DPL, 1, Q); } while (0)
#define INFER_CUDA_ATT_D(Q) do { if (dpl == 1) INFER_CUDA_ATT_G(1, Q); else if (dpl == 2) INFER_CUDA_ATT_G(2, Q); \
        else if (dpl == 4) INFER_CUDA_ATT_G(4, Q); else if (dpl == 8) INFER_CUDA_ATT_G(8, Q); else INFER_CUDA_ATT(16, 1, Q); } while (0)
    if (aq.kind) INFER_CUDA_ATT_D(1);
    else INFER_CUDA_ATT_D(0);
#undef INFER_CUDA_ATT_D
#undef INFER_CUDA_ATT_G
#undef INFER_CUDA_ATT
    INFER_CUDA_LAUNCHED(c, "attention");
}
static void infer_cuda_attention(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos, int rows, int n_head,
                                 int n_head_kv, int head_dim, float scale) {
    infer_cuda_qout none;
    memset(&none, 0, sizeof none);
    infer_cuda_attention_q((infer_cuda_ctx *)ctx, out, q, kv, pos, rows, n_head, n_head_kv, head_dim, scale, none);
}

/* y += Wo att, att = attention(q): the composition of attention and matmul_add, in the fast
 * mode's decode (the rows the fast matvec takes, a Wo whose matvec reads Q8_0 or Q8_K
 * activations) as two launches -- the attention writing att and its int8 form
 * (attn_quant_out), then k_mvq of Wo adding into y -- where the ops one by one take three (att
 * quantized by k_quant_x). The precise mode, a float Wo and prompts run the two ops. */
static void infer_cuda_attention_matmul_add(void *ctx, float *y, const infer_tensor *wo, float *att, const float *q, const infer_kv_view *kv,
                                            const int32_t *pos, int rows, int n_head, int n_head_kv, int head_dim, float scale) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    int qs;
    const int QD = n_head * head_dim, kind = infer_cuda_quant_for(c, wo, att, rows, QD, &qs);
    if (!kind || head_dim > INFER_CUDA_ATT_MAXD) {
        infer_cuda_qout none;                 /* (a decode step's float Wo: its first columns prefetched) */
        memset(&none, 0, sizeof none);
        if (!c->precise && rows <= INFER_CUDA_MV_ROWS) infer_cuda_pf_add(&none.pf, wo);
        infer_cuda_attention_q(c, att, q, kv, pos, rows, n_head, n_head_kv, head_dim, scale, none);
        infer_cuda_matmul_add(ctx, y, wo, att, rows);
        return;
    }
    infer_cuda_xq xq = { 0, NULL, NULL };
    infer_cuda_qout aq;
    memset(&aq, 0, sizeof aq);
    if (!infer_cuda_xq_in(c, &c->xq, &c->xq_bytes, QD, rows, &xq.q, &xq.ds) || !(aq.count = infer_cuda_counters(c, rows * (QD / qs)))) return;
    aq.codes = xq.q; aq.ds = xq.ds; aq.kind = kind; aq.size = qs;
    infer_cuda_pf_add(&aq.pf, wo);
    infer_cuda_attention_q(c, att, q, kv, pos, rows, n_head, n_head_kv, head_dim, scale, aq);
    xq.kind = kind;
    infer_cuda_matvec_w(c, y, wo, att, rows, 1, &xq);
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_moe -- mixture of experts: routing.
 * A block per token: the probabilities p in shared memory (softmax, sigmoid, or DeepSeek-V4's
 * sqrt(softplus)), then n_used rounds of a block-wide argmax of p + bias (ties to the lower
 * id, like the CPU's strict >; the bias only steers the choice, the weight stays p); a
 * chosen expert's p is replaced by -inf so the next round skips it. With ids_given (hash
 * routing) the ids are already there and only their weights are read. Thread 0 keeps the
 * CPU's order for the sum.
 * ---------------------------------------------------------------------------------------- */
#define INFER_CUDA_MAX_EXPERTS 8192
#define INFER_CUDA_MAX_USED 64
__global__ void k_moe_route(int32_t *ids, float *weights, const float *logits, int n_expert, int n_used, int gating, int norm, float scale,
                            const float *bias, int ids_given) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_DYN_SHARED(float, p);
    __shared__ float best_v[32];
    __shared__ int best_i[32];
    __shared__ float chosen_w[INFER_CUDA_MAX_USED];
    const int r = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const float *l = logits + (size_t)r * n_expert;
    if (gating == 2) {
        for (int e = threadIdx.x; e < n_expert; e += blockDim.x) p[e] = 1.0f / (1.0f + expf(-l[e]));
    } else if (gating == 4) {                       /* sqrt(softplus(z)), softplus(z) = ln(1 + e^z) */
        for (int e = threadIdx.x; e < n_expert; e += blockDim.x) p[e] = sqrtf(l[e] > 20.0f ? l[e] : log1pf(expf(l[e])));
    } else {
        float mx = -INFINITY;
        for (int e = threadIdx.x; e < n_expert; e += blockDim.x) mx = fmaxf(mx, l[e]);
        mx = block_max(mx);
        double sum = 0;
        for (int e = threadIdx.x; e < n_expert; e += blockDim.x) { p[e] = expf(l[e] - mx); sum += p[e]; }
        sum = block_sum(sum);
        for (int e = threadIdx.x; e < n_expert; e += blockDim.x) p[e] = (float)(p[e] / sum);
    }
    __syncthreads();
    int32_t *id = ids + (size_t)r * n_used;
    if (ids_given) {
        if (threadIdx.x == 0)
            for (int s = 0; s < n_used; s++) chosen_w[s] = id[s] >= 0 && id[s] < n_expert ? p[id[s]] : 0.0f;
    } else {
        for (int s = 0; s < n_used; s++) {
            float v = -INFINITY;
            int bi = -1;
            for (int e = threadIdx.x; e < n_expert; e += blockDim.x) {
                const float ve = bias ? p[e] + bias[e] : p[e];
                if (bi < 0 || ve > v) { v = ve; bi = e; }
            }
            for (int o = 16; o > 0; o >>= 1) {          /* larger value wins, ties to the lower id */
                const float v2 = __shfl_xor_sync(0xffffffffu, v, o);
                const int i2 = __shfl_xor_sync(0xffffffffu, bi, o);
                if (i2 >= 0 && (bi < 0 || v2 > v || (v2 == v && i2 < bi))) { v = v2; bi = i2; }
            }
            if (lane == 0) { best_v[warp] = v; best_i[warp] = bi; }
            __syncthreads();
            if (threadIdx.x == 0) {
                for (int w = 1; w < nw; w++)
                    if (best_i[w] >= 0 && (bi < 0 || best_v[w] > v || (best_v[w] == v && best_i[w] < bi))) { v = best_v[w]; bi = best_i[w]; }
                id[s] = bi;
                chosen_w[s] = p[bi];
                p[bi] = -INFINITY;
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) {
        float wsum = 0.0f;
        for (int s = 0; s < n_used; s++) wsum += chosen_w[s];
        /* + 1e-20: a sum that underflowed to 0 gives weights 0, not NaN (as on the CPU) */
        for (int s = 0; s < n_used; s++) weights[(size_t)r * n_used + s] = (norm ? chosen_w[s] / (wsum + 1e-20f) : chosen_w[s]) * scale;
    }
}
static void infer_cuda_moe_route(void *ctx, int32_t *ids, float *weights, const float *logits, int rows, int n_expert, int n_used, int gating,
                                 int norm, float scale, const float *bias, int ids_given) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    if (n_expert > INFER_CUDA_MAX_EXPERTS || n_used > INFER_CUDA_MAX_USED || n_used > n_expert) {
        infer_cuda_record(c, cudaErrorInvalidValue, "moe_route: more experts than the kernel supports");
        return;
    }
    INFER_CUDA_LAUNCH(rows, 256, (size_t)n_expert * sizeof(float), c, k_moe_route)(ids, weights, logits, n_expert, n_used, gating, norm, scale,
                                                                                           bias, ids_given);
    INFER_CUDA_LAUNCHED(c, "moe_route");
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_deltanet -- Gated DeltaNet: the short causal convolution and the delta rule. Both
 * carry a per-sequence state across calls; each kernel reads its part of the state into
 * registers once, runs the chunk's tokens in order, and writes it back once.
 * ---------------------------------------------------------------------------------------- */
/* causal depthwise conv1d + SiLU, thread (channel c, chunk y): the tokens y CONV_T ..
 * y CONV_T + CONV_T - 1 of channel c, each output the loop of infer__cpu_conv1d_silu's scalar
 * path, line for line (a deliberate twin: the diff tests hold the two to each other):
 *   y_t = w[K-1] x_t + sum_{j<K-1} w[j] h_j,  h = the K-1 inputs before t,  out_t = silu(y_t).
 * A chunk's first history comes from the inputs before it (CONV_T >= K-1, so only chunk 0
 * reaches back into the state), so a prompt's tokens run in parallel, CONV_T loads of a thread
 * in flight at once, not one memory latency per token. The state is read and written by chunk
 * 0 alone: with one chunk its history after the last token; with more (then rows >= K-1) the
 * last K-1 inputs, read from x. The history is sized by a template bound KM >= K (4 for the
 * usual kernel of 4, else 16) and its loops run to KM with the tail skipped, so they unroll
 * and the history stays in registers; indexed by a run-time j it would live in local memory. */
#define INFER_CUDA_MAX_CONV 16
#define INFER_CUDA_CONV_T 16                  /* tokens a thread takes; >= MAX_CONV - 1 */
template <int KM>
__global__ void k_conv1d_silu(float *out, const float *x, float *state, const float *w, int rows, int channels, int kernel) {
    INFER_CUDA_PDL_ENTRY;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    const int H = kernel - 1, t0 = blockIdx.y * INFER_CUDA_CONV_T;
    float hist[KM - 1];
    const float *wc = w + (size_t)c * kernel;
INFER_CUDA_UNROLL
    for (int j = 0; j < KM - 1; j++) {
        const int t = t0 - H + j;             /* the input before the chunk that hist[j] holds */
        hist[j] = j >= H ? 0.0f : t >= 0 ? x[(size_t)t * channels + c] : state[(size_t)(t + H) * channels + c];
    }
    float xs[INFER_CUDA_CONV_T];
INFER_CUDA_UNROLL
    for (int i = 0; i < INFER_CUDA_CONV_T; i++) xs[i] = t0 + i < rows ? x[(size_t)(t0 + i) * channels + c] : 0.0f;
INFER_CUDA_UNROLL
    for (int i = 0; i < INFER_CUDA_CONV_T; i++) {
        if (t0 + i >= rows) break;
        const float xt = xs[i];
        float y = wc[H] * xt;
INFER_CUDA_UNROLL
        for (int j = 0; j < KM - 1; j++) if (j < H) y += wc[j] * hist[j];
INFER_CUDA_UNROLL
        for (int j = 0; j + 1 < KM - 1; j++) if (j + 1 < H) hist[j] = hist[j + 1];
INFER_CUDA_UNROLL
        for (int j = 0; j < KM - 1; j++) if (j == H - 1) hist[j] = xt;
        out[(size_t)(t0 + i) * channels + c] = y / (1.0f + expf(-y));
    }
    if (blockIdx.y) return;
INFER_CUDA_UNROLL
    for (int j = 0; j < KM - 1; j++)
        if (j < H) state[(size_t)j * channels + c] = gridDim.y == 1 ? hist[j] : x[(size_t)(rows - H + j) * channels + c];
}
static void infer_cuda_conv1d_silu(void *ctx, float *out, const float *x, float *state, const float *w, int rows, int channels, int kernel) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (channels <= 0 || rows <= 0) return;
    if (kernel > INFER_CUDA_MAX_CONV) { infer_cuda_record(c, cudaErrorInvalidValue, "conv1d_silu: kernel above 16"); return; }
    const dim3 grid((unsigned)((channels + 127) / 128), (unsigned)((rows + INFER_CUDA_CONV_T - 1) / INFER_CUDA_CONV_T));
    if (kernel <= 4) INFER_CUDA_LAUNCH(grid, 128, 0, c, k_conv1d_silu<4>)(out, x, state, w, rows, channels, kernel);
    else INFER_CUDA_LAUNCH(grid, 128, 0, c, k_conv1d_silu<INFER_CUDA_MAX_CONV>)(out, x, state, w, rows, channels, kernel);
    INFER_CUDA_LAUNCHED(c, "conv1d_silu");
}

/* The gated delta rule, token by token (>>cpu has the maths). A warp per value column
 * (head h, column j): S[:, j] (d_k floats, state[h, j, :]) is spread over the lanes, DKL
 * per lane, and stays in registers across all the tokens; per token
 *   u = S^T k (one warp sum),  delta = beta (v_j - e^g u),  S = e^g S + k delta,
 *   o_j = scale S^T q (another warp sum),
 * and the column goes back to memory once at the end: the state is updated in place. The
 * tokens form a chain (each step needs the state the one before left), so a token's time is
 * the chain's latency: the next token's inputs (k, q, g, beta, v_j) are loaded into
 * registers before this token's sums, and arrive while the shuffles run. */
#define INFER_CUDA_DN_WARPS 4
#define INFER_CUDA_DN_MAXK 512
template <int DKL>
__global__ void __launch_bounds__(32 * INFER_CUDA_DN_WARPS) k_deltanet(float *out, const float *q, const float *k, const float *v, const float *g,
                           const float *beta, float *state, int rows, int n_k, int n_v, int d_k, int d_v, float scale) {
    INFER_CUDA_PDL_ENTRY;
    const int col = blockIdx.x * INFER_CUDA_DN_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (col >= n_v * d_v) return;
    const int h = col / d_v, j = col % d_v, kh = h % n_k;
    float *S = state + (size_t)col * d_k;                 /* state[h, j, :] */
    float s[DKL], kn[DKL], qn[DKL], gn = 0.0f, bn = 0.0f, vn = 0.0f;
    auto load = [&](int t) {                              /* token t's inputs into kn, qn, gn, bn, vn */
        const float *qt = q + ((size_t)t * n_k + kh) * d_k, *kt = k + ((size_t)t * n_k + kh) * d_k;
INFER_CUDA_UNROLL
        for (int i = 0; i < DKL; i++) {
            const int e = lane + 32 * i;
            kn[i] = e < d_k ? kt[e] : 0.0f;
            qn[i] = e < d_k ? qt[e] : 0.0f;
        }
        gn = g[(size_t)t * n_v + h];
        bn = beta[(size_t)t * n_v + h];
        vn = v[((size_t)t * n_v + h) * d_v + j];
    };
INFER_CUDA_UNROLL
    for (int i = 0; i < DKL; i++) { const int e = lane + 32 * i; s[i] = e < d_k ? S[e] : 0.0f; }
    if (rows > 0) load(0);
    for (int t = 0; t < rows; t++) {
        float kr[DKL], qr[DKL];
INFER_CUDA_UNROLL
        for (int i = 0; i < DKL; i++) { kr[i] = kn[i]; qr[i] = qn[i]; }
        const float decay = expf(gn), b = bn, vj = vn;
        if (t + 1 < rows) load(t + 1);
        float u = 0.0f;
INFER_CUDA_UNROLL
        for (int i = 0; i < DKL; i++) u += s[i] * kr[i];
        u = warp_sum(u);
        const float delta = b * (vj - decay * u);
        float y = 0.0f;
INFER_CUDA_UNROLL
        for (int i = 0; i < DKL; i++) {
            s[i] = decay * s[i] + kr[i] * delta;
            y += s[i] * qr[i];
        }
        y = warp_sum(y);
        if (lane == 0) out[((size_t)t * n_v + h) * d_v + j] = scale * y;
    }
INFER_CUDA_UNROLL
    for (int i = 0; i < DKL; i++) { const int e = lane + 32 * i; if (e < d_k) S[e] = s[i]; }
}
static void infer_cuda_deltanet(void *ctx, float *out, const float *q, const float *k, const float *v, const float *g, const float *beta,
                                float *state, int rows, int n_k, int n_v, int d_k, int d_v, float scale) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0 || n_v <= 0 || d_v <= 0) return;
    if (d_k > INFER_CUDA_DN_MAXK) { infer_cuda_record(c, cudaErrorInvalidValue, "deltanet: key head size above 512"); return; }
    const unsigned blocks = (unsigned)((n_v * d_v + INFER_CUDA_DN_WARPS - 1) / INFER_CUDA_DN_WARPS);
    const int dkl = (d_k + 31) / 32;
#define INFER_CUDA_DN(DKL) INFER_CUDA_LAUNCH(blocks, 32 * INFER_CUDA_DN_WARPS, 0, c, k_deltanet<DKL>)(out, q, k, v, g, beta, state, rows, n_k, n_v, d_k, d_v, scale)
    if (dkl <= 1) INFER_CUDA_DN(1);
    else if (dkl <= 2) INFER_CUDA_DN(2);
    else if (dkl <= 4) INFER_CUDA_DN(4);
    else if (dkl <= 8) INFER_CUDA_DN(8);
    else INFER_CUDA_DN(16);
#undef INFER_CUDA_DN
    INFER_CUDA_LAUNCHED(c, "deltanet");
}

/* ---- the chunked form (deltanet_chunked: a prompt's rows) ----
 * The recurrence above is a chain of `rows` steps, each a few warp sums long: at 512 tokens
 * the chain, not the arithmetic, sets the time. The chunked form (>>cpu's
 * infer__deltanet_chunk has the algebra) cuts the chain to one step per 64 tokens. Over a
 * chunk with state S0, G_t the running sum of g, A = strictly_lower(beta_t e^{G_t - G_r}
 * (K K^T)) and T = (I + A)^-1, the vector each token adds is
 *   W = T beta (V - e^G (K S0)) = U - Wk S0,   U = T (beta V),   Wk = T (beta e^G K),
 * and U, Wk and P = causal(e^{G_t - G_r}) * (Q K^T) do not depend on S0. So two kernels:
 *   k_dn_prep    a block per (chunk, value head), all chunks at once: K and Q of the chunk
 *                in shared memory, K K^T and Q K^T (A kept, P written out), then the forward
 *                substitution (I + A) X = [beta V | beta e^G K] by one thread per column of
 *                the right-hand side, the column's 64 values in registers (the loops run to
 *                64 with the tail's rows zero, so they unroll); U, Wk, P and G go to scratch
 *   k_dn_chunks  a block per (value head, 16 columns of S; 4 or 8 by INFER_CUDA_DNC_COLS),
 *                the chunks one after another,
 *                the block's S columns in shared memory: W = U - Wk S0, O = scale (e^G (Q
 *                S0) + P W), S = e^{G_end} S0 + K_d^T W (K_d: the keys decayed to the
 *                chunk's end)
 * f32 throughout, the CPU's chunked maths in another arrangement (the S0 term outside the
 * substitution), so it agrees with the CPU's deltanet_chunked to rounding. Prompts of at
 * least INFER_CUDA_DNC_MIN rows take it when INFER_CUDA_DN=chunks (by default, and for
 * fewer rows, the recurrence: it measured faster), key heads of at most
 * INFER_CUDA_DNC_MAXK values, a multiple of 8. */
#define INFER_CUDA_DNC_T 64           /* tokens a chunk */
#define INFER_CUDA_DNC_COLS 16        /* S columns a k_dn_chunks block: 16, or 8 or 4 (INFER_CUDA_DNC_COLS) for more blocks */
#define INFER_CUDA_DNC_MAXK 256
#define INFER_CUDA_DNC_MIN 32
#define INFER_CUDA_DNC_PIECE 1024     /* most rows a pair of launches takes (longer calls go in pieces): 16 chunks of scratch */
static int infer_cuda_dnc_cols = INFER_CUDA_DNC_COLS;
static int infer_cuda_dnc_min = INT_MAX;     /* the fewest rows on the chunked kernels: off unless INFER_CUDA_DN=chunks or the tests say */
/* floats of scratch per (value head, chunk): U [T, d_v], Wk [T, d_k], P [T, T], G [T] */
INFER_CUDA_HD size_t infer_cuda_dnc_floats(int d_k, int d_v) {
    return (size_t)INFER_CUDA_DNC_T * ((size_t)d_v + (size_t)d_k + INFER_CUDA_DNC_T + 1);
}
#define INFER_CUDA_DNC_LDA (INFER_CUDA_DNC_T + 4)       /* A's rows in shared memory: whole 16-byte groups */
static size_t infer_cuda_dnc_prep_shm(int d_k) {
    return sizeof(float) * ((size_t)2 * INFER_CUDA_DNC_T * (d_k + 1) + INFER_CUDA_DNC_T * INFER_CUDA_DNC_LDA + 2 * INFER_CUDA_DNC_T);
}
__global__ void __launch_bounds__(256) k_dn_prep(float *scr, const float *q, const float *k, const float *v, const float *g, const float *beta, int rows,
                                                 int n_k, int n_v, int d_k, int d_v) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_DYN_SHARED(float, sm);
    constexpr int C = INFER_CUDA_DNC_T, LA = INFER_CUDA_DNC_LDA;
    const int ch = blockIdx.x, h = blockIdx.y, kh = h % n_k, t0 = ch * C, L = rows - t0 < C ? rows - t0 : C, ld = d_k + 1, tid = threadIdx.x;
    float *Ks = sm, *Qs = Ks + C * ld, *As = Qs + C * ld, *G = As + C * LA, *Bt = G + C;
    float *U = scr + ((size_t)h * gridDim.x + ch) * infer_cuda_dnc_floats(d_k, d_v), *Wk = U + (size_t)C * d_v, *P = Wk + (size_t)C * d_k, *Go = P + C * C;
    if (tid == 0) {                                        /* G_t = g_0 + ... + g_t, in the CPU's order */
        float acc = 0.0f;
        for (int t = 0; t < C; t++) { if (t < L) acc += g[(size_t)(t0 + t) * n_v + h]; G[t] = acc; }
    }
    if (tid < C) Bt[tid] = tid < L ? beta[(size_t)(t0 + tid) * n_v + h] : 0.0f;
    for (int e = tid; e < C * d_k; e += blockDim.x) {
        const int t = e / d_k, i = e - t * d_k;
        const size_t at = ((size_t)(t0 + t) * n_k + kh) * d_k + i;
        Ks[t * ld + i] = t < L ? k[at] : 0.0f;
        Qs[t * ld + i] = t < L ? q[at] : 0.0f;
    }
    __syncthreads();
    {                                                      /* K K^T and Q K^T: a thread's 4 x 4 (t, r), t = tt + 16 a, r = tr + 16 b */
        const int tr = tid % 16, tt = tid / 16;           /* (256 threads; Ks rows d_k + 1 apart: a warp's 16 r in 16 banks) */
        float kk[4][4], qk[4][4];
INFER_CUDA_UNROLL
        for (int a = 0; a < 4; a++)
INFER_CUDA_UNROLL
            for (int b = 0; b < 4; b++) kk[a][b] = qk[a][b] = 0.0f;
        for (int i = 0; i < d_k; i++) {
            float kt[4], qt[4], kr[4];
INFER_CUDA_UNROLL
            for (int a = 0; a < 4; a++) { kt[a] = Ks[(tt + 16 * a) * ld + i]; qt[a] = Qs[(tt + 16 * a) * ld + i]; kr[a] = Ks[(tr + 16 * a) * ld + i]; }
INFER_CUDA_UNROLL
            for (int a = 0; a < 4; a++)
INFER_CUDA_UNROLL
                for (int b = 0; b < 4; b++) { kk[a][b] += kt[a] * kr[b]; qk[a][b] += qt[a] * kr[b]; }
        }
INFER_CUDA_UNROLL
        for (int a = 0; a < 4; a++)
INFER_CUDA_UNROLL
            for (int b = 0; b < 4; b++) {
                const int t = tt + 16 * a, r = tr + 16 * b;
                const float dec = r <= t && t < L ? expf(G[t] - G[r]) : 0.0f;
                As[t * LA + r] = r < t ? Bt[t] * dec * kk[a][b] : 0.0f;
                P[t * C + r] = dec * qk[a][b];
            }
    }
    if (tid < C) Go[tid] = G[tid];
    __syncthreads();
    /* (I + A) X = [beta V | beta e^G K], column by column: x_t = rhs_t - sum_{r<t} A[t, r] x_r */
    for (int col = tid; col < d_v + d_k; col += blockDim.x) {
        float x[C];
INFER_CUDA_UNROLL
        for (int t = 0; t < C; t++) {
            float s0 = 0.0f, s1 = 0.0f;
            if (t < L) s0 = col < d_v ? Bt[t] * v[((size_t)(t0 + t) * n_v + h) * d_v + col] : Bt[t] * expf(G[t]) * Ks[t * ld + col - d_v];
INFER_CUDA_UNROLL
            for (int r = 0; r < t; r += 4) {              /* A's row 4 at a time; two sums: half the chain's length */
                const float4 a = ldv<float4>(As + t * LA + r);
                s0 -= a.x * x[r];
                if (r + 1 < t) s1 -= a.y * x[r + 1];
                if (r + 2 < t) s0 -= a.z * x[r + 2];
                if (r + 3 < t) s1 -= a.w * x[r + 3];
            }
            x[t] = s0 + s1;
        }
INFER_CUDA_UNROLL
        for (int t = 0; t < C; t++) {
            if (col < d_v) U[(size_t)t * d_v + col] = x[t];
            else Wk[(size_t)t * d_k + col - d_v] = x[t];
        }
    }
}
template <int CO>
__global__ void __launch_bounds__(256) k_dn_chunks(float *out, float *state, const float *scr, const float *q, const float *k, int rows, int n_k, int n_v,
                                                   int d_k, int d_v, float scale) {
    INFER_CUDA_PDL_ENTRY;
    constexpr int C = INFER_CUDA_DNC_T, NT = 256, TG = NT / CO, M = C / TG;
    static_assert(CO == 4 || CO == 8 || CO == 16, "k_dn_chunks: 4, 8 or 16 columns a block");
    __shared__ float Ss[INFER_CUDA_DNC_MAXK][CO + 1], Ws[C][CO + 1], Gs[C], Ds[C];
    const int h = blockIdx.y, c0 = blockIdx.x * CO, kh = h % n_k, tid = threadIdx.x, c = tid % CO, tg = tid / CO;
    const int nc = d_v - c0 < CO ? d_v - c0 : CO, nch = (rows + C - 1) / C, ldq = n_k * d_k;
    float *S = state + (size_t)h * d_v * d_k;             /* S0 column by column: S[col, i] */
    for (int e = tid; e < CO * d_k; e += NT) {
        const int cc = e / d_k, i = e - cc * d_k;
        Ss[i][cc] = cc < nc ? S[(size_t)(c0 + cc) * d_k + i] : 0.0f;
    }
    for (int ch = 0; ch < nch; ch++) {
        const int t0 = ch * C, L = rows - t0 < C ? rows - t0 : C;
        const float *U = scr + ((size_t)h * nch + ch) * infer_cuda_dnc_floats(d_k, d_v), *Wk = U + (size_t)C * d_v, *P = Wk + (size_t)C * d_k, *G = P + C * C;
        const float *Q = q + (size_t)t0 * ldq + (size_t)kh * d_k, *K = k + (size_t)t0 * ldq + (size_t)kh * d_k;
        if (tid < C) Gs[tid] = G[tid];
        __syncthreads();                                   /* Ss (loaded, or the last chunk's update), Gs */
        if (tid < C) Ds[tid] = tid < L ? expf(Gs[L - 1] - Gs[tid]) : 0.0f;
        /* W = U - Wk S0 and Q S0: a thread's rows t = tg, tg + TG, ..., its column c */
        float w[M], qs[M];
INFER_CUDA_UNROLL
        for (int m = 0; m < M; m++) { w[m] = 0.0f; qs[m] = 0.0f; }
        for (int i = 0; i < d_k; i += 4) {
            const float s0 = Ss[i][c], s1 = Ss[i + 1][c], s2 = Ss[i + 2][c], s3 = Ss[i + 3][c];
INFER_CUDA_UNROLL
            for (int m = 0; m < M; m++) {
                const int t = tg + TG * m;
                if (t >= L) break;
                const float4 a = ldv<float4>(Wk + (size_t)t * d_k + i), b = ldv<float4>(Q + (size_t)t * ldq + i);
                w[m] += a.x * s0 + a.y * s1 + a.z * s2 + a.w * s3;
                qs[m] += b.x * s0 + b.y * s1 + b.z * s2 + b.w * s3;
            }
        }
INFER_CUDA_UNROLL
        for (int m = 0; m < M; m++) {
            const int t = tg + TG * m;
            Ws[t][c] = t < L && c < nc ? U[(size_t)t * d_v + c0 + c] - w[m] : 0.0f;
        }
        __syncthreads();                                   /* Ws, Ds */
INFER_CUDA_UNROLL
        for (int m = 0; m < M; m++) {                      /* O = scale (e^G (Q S0) + P W) */
            const int t = tg + TG * m;
            if (t >= L || c >= nc) continue;
            float o = 0.0f;
            for (int r = 0; r <= t; r++) o += P[t * C + r] * Ws[r][c];
            out[((size_t)(t0 + t) * n_v + h) * d_v + c0 + c] = (expf(Gs[t]) * qs[m] + o) * scale;
        }
        /* S = e^{G_end} S0 + K_d^T W: a thread's 8 consecutive i (each key row's 8 values in two
         * 16-byte loads), its column c */
        const float e_end = expf(Gs[L - 1]);
        for (int i0 = 8 * tg; i0 < d_k; i0 += 8 * TG) {
            float acc[8] = { 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f };
            for (int r = 0; r < L; r++) {
                const float dw = Ds[r] * Ws[r][c];
                const float4 a = ldv<float4>(K + (size_t)r * ldq + i0), b = ldv<float4>(K + (size_t)r * ldq + i0 + 4);
                acc[0] += a.x * dw; acc[1] += a.y * dw; acc[2] += a.z * dw; acc[3] += a.w * dw;
                acc[4] += b.x * dw; acc[5] += b.y * dw; acc[6] += b.z * dw; acc[7] += b.w * dw;
            }
INFER_CUDA_UNROLL
            for (int e = 0; e < 8; e++) Ss[i0 + e][c] = e_end * Ss[i0 + e][c] + acc[e];
        }
        __syncthreads();                                   /* the update done before the next chunk's Gs and reads */
    }
    for (int e = tid; e < CO * d_k; e += NT) {
        const int cc = e / d_k, i = e - cc * d_k;
        if (cc < nc) S[(size_t)(c0 + cc) * d_k + i] = Ss[i][cc];
    }
}
static void infer_cuda_deltanet_chunked(void *ctx, float *out, const float *q, const float *k, const float *v, const float *g, const float *beta,
                                        float *state, int rows, int n_k, int n_v, int d_k, int d_v, float scale) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows < infer_cuda_dnc_min || rows < 2 || d_k > INFER_CUDA_DNC_MAXK || d_k % 8 || n_v <= 0 || d_v <= 0 || n_v > 65535 || (uintptr_t)q % 16 ||
        (uintptr_t)k % 16) {                               /* (q's and k's rows: 16-byte loads) */
        c->dn_chunks = 0;
        infer_cuda_deltanet(ctx, out, q, k, v, g, beta, state, rows, n_k, n_v, d_k, d_v, scale);
        return;
    }
    c->dn_chunks = 1;
    if (rows > INFER_CUDA_DNC_PIECE) {                    /* long chunks of rows in pieces: the scratch stays bounded */
        for (int r0 = 0; r0 < rows; r0 += INFER_CUDA_DNC_PIECE) {
            const int n = rows - r0 < INFER_CUDA_DNC_PIECE ? rows - r0 : INFER_CUDA_DNC_PIECE;
            const size_t qo = (size_t)r0 * n_k * d_k, vo = (size_t)r0 * n_v * d_v, go = (size_t)r0 * n_v;
            infer_cuda_deltanet_chunked(ctx, out + vo, q + qo, k + qo, v + vo, g + go, beta + go, state, n, n_k, n_v, d_k, d_v, scale);
        }
        return;
    }
    const int nch = (rows + INFER_CUDA_DNC_T - 1) / INFER_CUDA_DNC_T;
    if (!infer_cuda_grow(c, &c->dnc, &c->dnc_bytes, (size_t)n_v * nch * infer_cuda_dnc_floats(d_k, d_v) * sizeof(float), "cudaMalloc (DeltaNet chunks)")) return;
    const size_t shm = infer_cuda_dnc_prep_shm(d_k);
    static int opted;                                      /* above 48 KB of shared memory a kernel must ask, once, for the most it can take */
    if (!opted && shm > 48 * 1024) {
        infer_cuda_record(c, cudaFuncSetAttribute(k_dn_prep, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)infer_cuda_dnc_prep_shm(INFER_CUDA_DNC_MAXK)),
                          "cudaFuncSetAttribute (DeltaNet chunks)");
        opted = 1;
    }
    INFER_CUDA_LAUNCH(dim3((unsigned)nch, (unsigned)n_v), 256, shm, c, k_dn_prep)((float *)c->dnc, q, k, v, g, beta, rows, n_k, n_v, d_k, d_v);
    INFER_CUDA_LAUNCHED(c, "deltanet (chunk products)");
    const int co = infer_cuda_dnc_cols;                   /* (a block of 4 or 8 columns: more blocks, each reading the chunk's keys again) */
    const dim3 grid((unsigned)((d_v + co - 1) / co), (unsigned)n_v);
    if (co == 4) INFER_CUDA_LAUNCH(grid, 256, 0, c, k_dn_chunks<4>)(out, state, (const float *)c->dnc, q, k, rows, n_k, n_v, d_k, d_v, scale);
    else if (co == 8) INFER_CUDA_LAUNCH(grid, 256, 0, c, k_dn_chunks<8>)(out, state, (const float *)c->dnc, q, k, rows, n_k, n_v, d_k, d_v, scale);
    else INFER_CUDA_LAUNCH(grid, 256, 0, c, k_dn_chunks<16>)(out, state, (const float *)c->dnc, q, k, rows, n_k, n_v, d_k, d_v, scale);
    INFER_CUDA_LAUNCHED(c, "deltanet (chunks)");
}

/* A DeltaNet layer's decode rows in one launch (deltanet_decode): everything between the
 * input matmuls and the output projection, for `rows` sequences of one token each. Block
 * (b, h, r) is row r, value head h, columns j0 = b COLS .. j0 + COLS of the head (k_deltanet's
 * shape: a warp per column of S, the column in registers). It first makes what those
 * columns read, from the row's `mixed` and conv state:
 *   q, k of key head h % n_k   conv + SiLU over their 2 d_k channels, then each L2-normed
 *                              (recomputed by every block that reads them: a few KiB of L2)
 *   v of its COLS columns      conv + SiLU
 *   decay = e^g, g = softplus(alpha + dt_bias) a;   b = sigmoid(beta)
 * then runs the delta rule's step on its columns (k_deltanet's sums: u = S^T k, delta =
 * b (v_j - decay u), S = decay S + k delta, o_j = scale S^T q) and stores o_j raw. Two things
 * need every block of a group -- the value heads that read one key head, all their columns:
 * the output norm (RMSNorm over a head's d_v outputs) and the conv state's shift (its q, k
 * channels are read by every block of the group, so none may be overwritten before all have
 * read them). So each block, its o stored, takes a ticket from the group's counter; the one
 * that draws the last has every o of the group visible (the fence before the ticket, __ldcg
 * after it), writes out = RMSNorm(o) * norm * silu(z) for each of the group's heads, shifts
 * the group's channels of the conv state (the oldest input drops out, this token's comes
 * in), and sets the counter back to 0 for the next launch (or graph replay). With Wo in the
 * fast mode (qs > 0) it also quantizes its heads' outputs for Wo's matvec, each head a column
 * range as attention's head groups are (attn_quant_out: a Q8_K block over two heads of two
 * groups goes to the later of the two). */
#define INFER_CUDA_DND_WARPS 8
#define INFER_CUDA_DND_COLS 16                  /* columns a block: 2 a warp */
struct infer_cuda_dnd {                         /* deltanet_decode's arguments (no padding: the key's bytes) */
    float *out;
    const float *mixed, *z, *alpha, *beta;
    float *const *states;                       /* [2, rows]: conv states, then S */
    const float *conv_w, *dt_bias, *a, *norm;
    int *count;                                 /* [rows, n_k] tickets, 0 between launches */
    int8_t *qcodes;                             /* qs > 0: out's int8 form for Wo (attn_quant_out), [rows, VD] */
    float2 *qds;                                /* ... and its scales and sums, [rows, VD / 32] */
    int *qcount;                                /* [rows, VD / qs] tickets for blocks shared by two groups */
    int rows, n_k, n_v, d_k, d_v, kernel, qs;
    float eps, scale;
    infer_cuda_pf pf;                           /* Wo's first columns, prefetched into L2 */
};
/* conv1d + SiLU of channel c for one token: the CPU's sum, term for term (conv1d_silu) */
__device__ __forceinline__ float dnd_conv_silu(const float *x, const float *state, const float *w, int c, int CD, int kernel) {
    const int H = kernel - 1;
    const float *wc = w + (size_t)c * kernel;
    float y = wc[H] * x[c];
    for (int j = 0; j < H; j++) y += wc[j] * state[(size_t)j * CD + c];
    return y / (1.0f + expf(-y));
}
template <int DKL>
__global__ void __launch_bounds__(32 * INFER_CUDA_DND_WARPS) k_deltanet_decode(infer_cuda_dnd p) {
    INFER_CUDA_PDL_TRIGGER();
    l2_prefetch(p.pf);
    INFER_CUDA_PDL_WAIT();
    constexpr int COLS = INFER_CUDA_DND_COLS, CPW = INFER_CUDA_DND_COLS / INFER_CUDA_DND_WARPS;
    __shared__ float sq[INFER_CUDA_DN_MAXK], sk[INFER_CUDA_DN_MAXK], sv[COLS], gates[2];
    __shared__ int last;
    const int r = blockIdx.z, h = blockIdx.y, j0 = blockIdx.x * COLS, kh = h % p.n_k;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int d_k = p.d_k, d_v = p.d_v, KD = p.n_k * d_k, VD = p.n_v * d_v, CD = 2 * KD + VD;
    const float *x = p.mixed + (size_t)r * CD;
    float *cs = p.states[r];                              /* [kernel-1, CD] */
    float *S = p.states[p.rows + r];                      /* [n_v, d_v, d_k] */
    for (int i = tid; i < 2 * d_k; i += blockDim.x) {
        const int c = (i < d_k ? 0 : KD - d_k) + kh * d_k + i;
        const float y = dnd_conv_silu(x, cs, p.conv_w, c, CD, p.kernel);
        if (i < d_k) sq[i] = y; else sk[i - d_k] = y;
    }
    if (tid < COLS && j0 + tid < d_v) sv[tid] = dnd_conv_silu(x, cs, p.conv_w, 2 * KD + h * d_v + j0 + tid, CD, p.kernel);
    if (tid == 0) {
        const size_t i = (size_t)r * p.n_v + h;
        const float zz = p.alpha[i] + p.dt_bias[h];
        gates[0] = expf((zz > 20.0f ? zz : log1pf(expf(zz))) * p.a[h]);
        gates[1] = 1.0f / (1.0f + expf(-p.beta[i]));
    }
    __syncthreads();
    double qq = 0, kk = 0;                                /* the L2 norms, squares summed in double */
    for (int i = tid; i < d_k; i += blockDim.x) { qq += (double)sq[i] * sq[i]; kk += (double)sk[i] * sk[i]; }
    qq = block_sum(qq);
    kk = block_sum(kk);
    const float qs = 1.0f / fmaxf(sqrtf((float)qq), p.eps), ks = 1.0f / fmaxf(sqrtf((float)kk), p.eps);
    const float decay = gates[0], b = gates[1];
    float qr[DKL], kr[DKL], s[CPW][DKL], u[CPW];
INFER_CUDA_UNROLL
    for (int i = 0; i < DKL; i++) {
        const int e = lane + 32 * i;
        qr[i] = e < d_k ? sq[e] * qs : 0.0f;
        kr[i] = e < d_k ? sk[e] * ks : 0.0f;
    }
    /* this warp's columns j0 + warp + c WARPS, read together (CPW loads in flight) */
INFER_CUDA_UNROLL
    for (int c = 0; c < CPW; c++) {
        const int j = j0 + warp + c * INFER_CUDA_DND_WARPS;
        const float *col = S + ((size_t)h * d_v + (j < d_v ? j : 0)) * d_k;
        u[c] = 0.0f;
INFER_CUDA_UNROLL
        for (int i = 0; i < DKL; i++) {
            const int e = lane + 32 * i;
            s[c][i] = e < d_k && j < d_v ? col[e] : 0.0f;
            u[c] += s[c][i] * kr[i];
        }
    }
INFER_CUDA_UNROLL
    for (int c = 0; c < CPW; c++) {
        const int jj = warp + c * INFER_CUDA_DND_WARPS, j = j0 + jj;
        const float uc = warp_sum(u[c]);
        if (j >= d_v) continue;                           /* the same for the whole warp */
        const float delta = b * (sv[jj] - decay * uc);
        float *col = S + ((size_t)h * d_v + j) * d_k;
        float y = 0.0f;
INFER_CUDA_UNROLL
        for (int i = 0; i < DKL; i++) {
            const int e = lane + 32 * i;
            s[c][i] = decay * s[c][i] + kr[i] * delta;
            y += e < d_k ? s[c][i] * qr[i] : 0.0f;
            if (e < d_k) col[e] = s[c][i];
        }
        y = warp_sum(y);
        if (lane == 0) p.out[(size_t)r * VD + (size_t)h * d_v + j] = p.scale * y;
    }
    /* the group's last block: the output norm and the conv state's shift */
    const int heads = (p.n_v - 1 - kh) / p.n_k + 1;      /* value heads kh, kh + n_k, ... */
    int *count = p.count + (size_t)r * p.n_k + kh;
    __threadfence();
    __syncthreads();
    if (tid == 0) {
        last = atomicAdd(count, 1) == heads * (int)gridDim.x - 1;
        if (last) *count = 0;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (int hh = kh; hh < p.n_v; hh += p.n_k) {
        float *o = p.out + (size_t)r * VD + (size_t)hh * d_v;
        const float *zr = p.z + (size_t)r * VD + (size_t)hh * d_v;
        double ss = 0;
        for (int i = tid; i < d_v; i += blockDim.x) { const float v = __ldcg(o + i); ss += (double)v * v; }
        ss = block_sum(ss);
        const float sc = (float)(1.0 / sqrt(ss / d_v + p.eps));
        for (int i = tid; i < d_v; i += blockDim.x) o[i] = glu_act(zr[i], __ldcg(o + i) * sc * p.norm[i], INFER_ACT_SILU, 0.0f);
    }
    /* Wo's int8 activations (the fast decode's deltanet_decode with Wo): each of the group's
     * heads is a column range of the row, quantized as attention's head groups are */
    if (p.qs)
        for (int hh = kh; hh < p.n_v; hh += p.n_k) attn_quant_out(p.qcodes, p.qds, p.qcount, p.qs, p.out + (size_t)r * VD, r, VD, hh * d_v, d_v);
    const int H = p.kernel - 1, nc = 2 * d_k + heads * d_v;
    for (int i = tid; i < nc && H > 0; i += blockDim.x) {
        const int c = i < 2 * d_k ? (i < d_k ? 0 : KD - d_k) + kh * d_k + i : 2 * KD + (kh + ((i - 2 * d_k) / d_v) * p.n_k) * d_v + (i - 2 * d_k) % d_v;
        for (int j = 0; j + 1 < H; j++) cs[(size_t)j * CD + c] = cs[(size_t)(j + 1) * CD + c];
        cs[(size_t)(H - 1) * CD + c] = x[c];
    }
}
static void infer_cuda_deltanet_decode(void *ctx, float *out, float *y, const infer_tensor *wo, const float *mixed, const float *z,
                                       const float *alpha, const float *beta, float *const *states, const float *conv_w, const float *dt_bias, const float *a, const float *norm,
                                       int rows, int n_k, int n_v, int d_k, int d_v, int kernel, float eps) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0 || n_v <= 0 || d_v <= 0) return;
    if (d_k > INFER_CUDA_DN_MAXK || n_k <= 0 || d_k <= 0) { infer_cuda_record(c, cudaErrorInvalidValue, "deltanet_decode: key head size outside 1..512"); return; }
    if (rows > 65535 || n_v > 65535) { infer_cuda_record(c, cudaErrorInvalidValue, "deltanet_decode: more than 65535 rows or value heads"); return; }
    /* with Wo: in the fast mode's decode (a Wo whose matvec reads Q8_0 or Q8_K activations, VD
     * whole blocks of them) the kernel also writes out's int8 form and k_mvq of Wo adds into y:
     * two launches; otherwise the kernel, then matmul_add */
    int qs = 0;
    const int VD = n_v * d_v, kind = y && wo ? infer_cuda_quant_for(c, wo, out, rows, VD, &qs) : 0, fuse = kind != 0;
    infer_cuda_xq xq = { 0, NULL, NULL };
    infer_cuda_dnd p;
    memset(&p, 0, sizeof p);
    if (fuse && !infer_cuda_xq_in(c, &c->xq, &c->xq_bytes, VD, rows, &xq.q, &xq.ds)) return;
    if (!(p.count = infer_cuda_counters(c, rows * n_k + (fuse ? rows * (VD / qs) : 0)))) return;
    if (fuse) { p.qcodes = xq.q; p.qds = xq.ds; p.qcount = p.count + (size_t)rows * n_k; p.qs = qs; }
    if (y && wo) infer_cuda_pf_add(&p.pf, wo);
    p.out = out; p.mixed = mixed; p.z = z; p.alpha = alpha; p.beta = beta; p.states = states;
    p.conv_w = conv_w; p.dt_bias = dt_bias; p.a = a; p.norm = norm;
    p.rows = rows; p.n_k = n_k; p.n_v = n_v; p.d_k = d_k; p.d_v = d_v; p.kernel = kernel;
    p.eps = eps; p.scale = 1.0f / sqrtf((float)d_k);
    const dim3 grid((unsigned)((d_v + INFER_CUDA_DND_COLS - 1) / INFER_CUDA_DND_COLS), (unsigned)n_v, (unsigned)rows);
    const int dkl = (d_k + 31) / 32;
#define INFER_CUDA_DND(DKL) INFER_CUDA_LAUNCH(grid, 32 * INFER_CUDA_DND_WARPS, 0, c, k_deltanet_decode<DKL>)(p)
    if (dkl <= 1) INFER_CUDA_DND(1);
    else if (dkl <= 2) INFER_CUDA_DND(2);
    else if (dkl <= 4) INFER_CUDA_DND(4);
    else if (dkl <= 8) INFER_CUDA_DND(8);
    else INFER_CUDA_DND(16);
#undef INFER_CUDA_DND
    INFER_CUDA_LAUNCHED(c, "deltanet_decode");
    if (fuse) {
        xq.kind = kind;
        infer_cuda_matvec_w(c, y, wo, out, rows, 1, &xq);
    } else if (y && wo) {
        infer_cuda_matmul_add(ctx, y, wo, out, rows);
    }
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_deepseek4 -- hyper-connections, the KV compressor, the lightning indexer, and attention
 * over a sliding window plus compressed entries. The maths is at >>deepseek4 in infer.h and
 * in the table's entries; these kernels follow the CPU's loops (infer__cpu_hc_pre, ...)
 * operation for operation where the order of a sum decides a result.
 * ---------------------------------------------------------------------------------------- */
#define INFER_CUDA_MAX_HC 16

__device__ __forceinline__ float sigmoidf_(float z) { return 1.0f / (1.0f + expf(-z)); }

/* Hyper-connections before a block, a block per row. Thread 0 turns the row's mixes into
 * pre, post and the Sinkhorn-normalised C [n_hc, n_hc] exactly as infer__hc_mixes does (a
 * few hundred flops for n_hc = 4, not worth spreading over threads; the Sinkhorn passes
 * are sequential anyway), then every thread collapses the streams for its elements,
 *   u[e] = sum_i pre_i x[i, e]   (the streams in order, as on the CPU).
 * pc NULL: the head's collapse, only pre (n_mix = n_hc). */
__global__ void k_hc_pre(float *u, float *pc, const float *mix, const float *x, const float *base, const float *scale, int dim, int n_hc,
                         int iters, float eps) {
    INFER_CUDA_PDL_ENTRY;
    __shared__ float pre[INFER_CUDA_MAX_HC], C[INFER_CUDA_MAX_HC * INFER_CUDA_MAX_HC];
    const int r = blockIdx.x, n_mix = pc ? n_hc * (2 + n_hc) : n_hc;
    if (threadIdx.x == 0) {
        const float *m = mix + (size_t)r * n_mix;
        for (int i = 0; i < n_hc; i++) pre[i] = sigmoidf_(m[i] * scale[0] + base[i]) + eps;
        if (pc) {
            float *post = pc + (size_t)r * (n_hc + n_hc * n_hc);
            for (int i = 0; i < n_hc; i++) post[i] = 2.0f * sigmoidf_(m[n_hc + i] * scale[1] + base[n_hc + i]);
            for (int s = 0; s < n_hc; s++) {            /* softmax over the destinations of source s */
                float *c = C + s * n_hc, mx = -INFINITY, sum = 0.0f;
                for (int d = 0; d < n_hc; d++) { c[d] = m[2 * n_hc + s * n_hc + d] * scale[2] + base[2 * n_hc + s * n_hc + d]; mx = fmaxf(mx, c[d]); }
                for (int d = 0; d < n_hc; d++) { c[d] = expf(c[d] - mx); sum += c[d]; }
                for (int d = 0; d < n_hc; d++) c[d] = c[d] / sum + eps;
            }
            /* Sinkhorn: columns to sum 1, then (iters - 1) times rows, then columns again */
            for (int it = 0; it < iters; it++)
                for (int pass = it == 0 ? 1 : 0; pass < 2; pass++)
                    for (int a = 0; a < n_hc; a++) {    /* pass 0: row a (sum over d); pass 1: column a (sum over s) */
                        float sum = 0.0f;
                        for (int b = 0; b < n_hc; b++) sum += pass ? C[b * n_hc + a] : C[a * n_hc + b];
                        for (int b = 0; b < n_hc; b++) {
                            float *v = pass ? &C[b * n_hc + a] : &C[a * n_hc + b];
                            *v = *v / (sum + eps);
                        }
                    }
            for (int i = 0; i < n_hc * n_hc; i++) post[n_hc + i] = C[i];
        }
    }
    __syncthreads();
    const float *xr = x + (size_t)r * n_hc * dim;
    float *ur = u + (size_t)r * dim;
    for (int e = threadIdx.x; e < dim; e += blockDim.x) {
        float acc = pre[0] * xr[e];
        for (int i = 1; i < n_hc; i++) acc += pre[i] * xr[(size_t)i * dim + e];
        ur[e] = acc;
    }
}

/* Hyper-connections after a block, in place: a thread per (row, element e) reads the n_hc
 * streams' x[s, e] first, then writes x[d, e] = post_d h[e] + sum_s C[s, d] x_old[s, e].
 * The streams' values are held in registers: loops over a template bound HM >= n_hc (4, the
 * usual count, else 16), the tail skipped, as k_conv1d_silu's history. */
template <int HM>
__global__ void k_hc_post(float *x, const float *h, const float *pc, int64_t n, int dim, int n_hc) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_FOR(i, n) {
        const int64_t r = i / dim, e = i % dim;
        const float *post = pc + r * (n_hc + n_hc * n_hc), *C = post + n_hc;
        float *xr = x + r * n_hc * dim;
        float old[HM];
INFER_CUDA_UNROLL
        for (int s = 0; s < HM; s++) old[s] = s < n_hc ? xr[(size_t)s * dim + e] : 0.0f;
        for (int d = 0; d < n_hc; d++) {
            float acc = post[d] * h[i];
INFER_CUDA_UNROLL
            for (int s = 0; s < HM; s++) if (s < n_hc) acc += C[s * n_hc + d] * old[s];
            xr[(size_t)d * dim + e] = acc;
        }
    }
}

static void infer_cuda_hc_pre(void *ctx, float *u, float *pc, const float *mix, const float *x, const float *base, const float *scale,
                              int rows, int dim, int n_hc, int iters, float eps) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    if (n_hc > INFER_CUDA_MAX_HC) { infer_cuda_record(c, cudaErrorInvalidValue, "hc_pre: more than 16 streams"); return; }
    INFER_CUDA_LAUNCH(rows, 256, 0, c, k_hc_pre)(u, pc, mix, x, base, scale, dim, n_hc, iters, eps);
    INFER_CUDA_LAUNCHED(c, "hc_pre");
}
static void infer_cuda_hc_post(void *ctx, float *x, const float *h, const float *pc, int rows, int dim, int n_hc) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const int64_t n = (int64_t)rows * dim;
    if (n <= 0) return;
    if (n_hc > INFER_CUDA_MAX_HC) { infer_cuda_record(c, cudaErrorInvalidValue, "hc_post: more than 16 streams"); return; }
    if (n_hc <= 4) INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_hc_post<4>)(x, h, pc, n, dim, n_hc);
    else INFER_CUDA_LAUNCH(infer_cuda_blocks(n), 256, 0, c, k_hc_post<INFER_CUDA_MAX_HC>)(x, h, pc, n, dim, n_hc);
    INFER_CUDA_LAUNCHED(c, "hc_post");
}

/* One slot into a channel's running softmax (max m, sum s, weighted sum a), the CPU's
 * infer__pool_add: an empty accumulator has s == 0. Rounded like the CPU (no fused
 * multiply-add), so the state that crosses chunks is the CPU's up to expf. */
__device__ __forceinline__ void pool_add(float &m, float &s, float &a, float v, float score) {
    if (s == 0.0f) { m = score; s = 1.0f; a = v; return; }
    if (score > m) {
        const float f = expf(m - score);
        s = __fadd_rn(__fmul_rn(s, f), 1.0f);
        a = __fadd_rn(__fmul_rn(a, f), v);
        m = score;
    } else {
        const float e = expf(score - m);
        s = __fadd_rn(s, e);
        a = __fadd_rn(a, __fmul_rn(e, v));
    }
}

/* The KV compressor: a thread per channel c (warps over consecutive channels, so every
 * row's loads are coalesced) walks the chunk's rows in order, as the CPU does, with its two
 * running softmaxes in registers: `cur` pools the open window, `next` (overlap only) the
 * slots this window lends the next one (the low half of the channels). A row that closes
 * a window (pos % ratio == ratio - 1) writes entry cur.a / cur.s; then cur <- next and
 * next (or cur) starts empty. The registers go back to the state at the end in the CPU's
 * layout [2][3][dim] (cur, next; each max | sum | acc), so a window left open by a chunk
 * is carried on by the next one whichever backend ran it. */
__global__ void k_compress(float *entries, float *state, const float *kv, const float *gate, const float *ape, const int32_t *pos, int rows,
                           int dim, int ratio, int overlap) {
    INFER_CUDA_PDL_ENTRY;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= dim) return;
    const int W = overlap ? 2 * dim : dim, hi = overlap ? dim : 0;     /* hi: this window's own half */
    float cm = state[c], cs = state[dim + c], ca = state[2 * dim + c];
    float nm = state[3 * dim + c], ns = state[4 * dim + c], na = state[5 * dim + c];
    int n_out = 0;
    for (int r = 0; r < rows; r++) {
        const int off = pos[r] % ratio;
        const float *kr = kv + (size_t)r * W, *gr = gate + (size_t)r * W, *ar = ape + (size_t)off * W;
        pool_add(cm, cs, ca, kr[hi + c], gr[hi + c] + ar[hi + c]);
        if (overlap) pool_add(nm, ns, na, kr[c], gr[c] + ar[c]);
        if (off != ratio - 1) continue;
        entries[(size_t)n_out++ * dim + c] = ca / cs;
        if (overlap) { cm = nm; cs = ns; ca = na; nm = ns = na = 0.0f; }
        else cm = cs = ca = 0.0f;
    }
    state[c] = cm; state[dim + c] = cs; state[2 * dim + c] = ca;
    state[3 * dim + c] = nm; state[4 * dim + c] = ns; state[5 * dim + c] = na;
}
static void infer_cuda_compress(void *ctx, float *entries, float *state, const float *kv, const float *gate, const float *ape,
                                const int32_t *pos, int rows, int dim, int ratio, int overlap) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0 || dim <= 0) return;
    if (ratio <= 0) { infer_cuda_record(c, cudaErrorInvalidValue, "compress: ratio must be positive"); return; }
    INFER_CUDA_LAUNCH((dim + 127) / 128, 128, 0, c, k_compress)(entries, state, kv, gate, ape, pos, rows, dim, ratio, overlap);
    INFER_CUDA_LAUNCHED(c, "compress");
}

/* The lightning indexer, a block per query row r (256 threads: 16 half-warps, a visible
 * entry s each at a time). A score
 *   score_s = scale * sum_h w[r, h] relu(q[r, h] . K_s)
 * is the CPU's bit for bit: the dot is infer__dot_f32_16's (lane k of the half-warp keeps
 * the running sum of dims k, k+16, ..., lane 0 adds the tail, then the same pairwise tree
 * by shuffles), the heads are summed in order, and no multiply-add is fused. That matters:
 * exact ties are common (a score is exactly 0 whenever every head's dot is <= 0), and the
 * tie rule (the lower index wins at the cut) is only the CPU's when the scores are.
 * The top_k must come out of any number of visible entries with bounded memory: a buffer in
 * shared memory holds up to INFER_CUDA_IDX_CAP (key, index) pairs in index order. Entries
 * are scored into it until it is full; then it is cut to the top_k best: a radix select
 * finds the k-th best key 8 bits at a time from the top (a 256-bin histogram per digit),
 * and a stable compaction keeps every key above it and the lowest-indexed ones equal to it.
 * Scoring goes on behind the survivors, which stay in index order, so the last cut leaves
 * the answer ascending, as the CPU sorts it. A key is the score's bits mapped so that
 * unsigned order is float order (-0 read as +0: they are one score). */
#define INFER_CUDA_IDX_CAP 4096          /* the buffer: 32 KiB of shared memory */
#define INFER_CUDA_IDX_MAXK 2048         /* top_k; the rest of the buffer is for new entries */
#define INFER_CUDA_IDX_MAXD 512          /* indexer head size: 32 dims per lane of a half-warp */
#define INFER_CUDA_IDX_THREADS 256

__device__ __forceinline__ uint32_t score_key(float s) {
    if (s == 0.0f) s = 0.0f;
    uint32_t u;
    memcpy(&u, &s, 4);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/* exclusive prefix count of `flag` over the block in thread order, and the block's total */
__device__ int block_scan_flag(int flag, int *total) {
    __shared__ int warp_n[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const unsigned b = __ballot_sync(0xffffffffu, flag);
    __syncthreads();                              /* warp_n may still be read from a previous call */
    if (lane == 0) warp_n[warp] = __popc(b);
    __syncthreads();
    int before = __popc(b & ((1u << lane) - 1u)), all = 0;
    for (int w = 0; w < nw; w++) { before += w < warp ? warp_n[w] : 0; all += warp_n[w]; }
    *total = all;
    return before;
}

/* cut key/idx[0..n) (index order) to its k best, in place and in order; returns k */
__device__ int idx_cut(uint32_t *key, int32_t *idx, int n, int k) {
    __shared__ int hist[256];
    __shared__ uint32_t s_prefix;
    __shared__ int s_rank;
    uint32_t T = 0, mask = 0;
    int rank = k;                                 /* T's rank among the keys that share its digits so far */
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            if ((key[i] & mask) == T) atomicAdd(&hist[(key[i] >> shift) & 255], 1);
        __syncthreads();
        if (threadIdx.x == 0) {                   /* the digit where the count from the top reaches rank */
            int cum = 0, b = 255;
            for (; b > 0 && cum + hist[b] < rank; b--) cum += hist[b];
            s_prefix = T | (uint32_t)b << shift;
            s_rank = rank - cum;
        }
        __syncthreads();
        T = s_prefix;
        rank = s_rank;
        mask |= 255u << shift;
    }
    /* T is the k-th best key; keep those above it and the first `rank` equal to it */
    int eq_base = 0, out = 0;
    for (int t0 = 0; t0 < n; t0 += blockDim.x) {
        const int i = t0 + threadIdx.x, valid = i < n;
        const uint32_t kk = valid ? key[i] : 0u;
        const int32_t ii = valid ? idx[i] : 0;
        int n_eq, n_keep;
        const int eq = valid && kk == T, eq_before = eq_base + block_scan_flag(eq, &n_eq);
        const int keep = valid && (kk > T || (eq && eq_before < rank));
        const int at = out + block_scan_flag(keep, &n_keep);
        if (keep) { key[at] = kk; idx[at] = ii; }     /* at <= i: never over an entry not yet read */
        eq_base += n_eq;
        out += n_keep;
    }
    __syncthreads();
    return out;
}

template <int KPL>
__global__ void __launch_bounds__(INFER_CUDA_IDX_THREADS) k_indexer_topk(int32_t *sel, int32_t *n_sel, const float *q, const float *w, infer_cuda_kv keys,
                                                                        const int32_t *pos, int n_head, int hd, int ratio, int top_k, float scale) {
    INFER_CUDA_PDL_ENTRY;
    INFER_CUDA_DYN_SHARED(uint32_t, key);
    int32_t *idx = (int32_t *)(key + INFER_CUDA_IDX_CAP);
    const int r = blockIdx.x, hw = threadIdx.x >> 4, l16 = threadIdx.x & 15, nhw = blockDim.x >> 4, nfull = hd / 16;
    const int32_t n_vis = (pos[r] + 1) / ratio;
    int32_t *out = sel + (size_t)r * top_k;
    if (n_vis <= top_k) {                         /* every visible entry */
        for (int32_t s = threadIdx.x; s < n_vis; s += blockDim.x) out[s] = s;
        if (threadIdx.x == 0) n_sel[r] = n_vis;
        return;
    }
    const float *qr = q + (size_t)r * n_head * hd, *wr = w + (size_t)r * n_head;
    int n = 0;
    for (int32_t s0 = 0; s0 < n_vis;) {
        const int m = INFER_CUDA_IDX_CAP - n < n_vis - s0 ? INFER_CUDA_IDX_CAP - n : n_vis - s0;
        for (int b = 0; b < m; b += nhw) {        /* every lane runs every round: the shuffles need the whole warp */
            const int e = b + hw < m ? b + hw : m - 1;
            const size_t base = kv_row(keys.table, keys.bs, s0 + e) * keys.dim;
            float kr[KPL];
INFER_CUDA_UNROLL
            for (int j = 0; j < KPL; j++) kr[j] = j < nfull ? kv_load(keys.k, keys.f16, base + l16 + 16 * j) : 0.0f;
            float acc = 0.0f;
            for (int h = 0; h < n_head; h++) {
                const float *qh = qr + (size_t)h * hd;
                float part = 0.0f;
INFER_CUDA_UNROLL
                for (int j = 0; j < KPL; j++) if (j < nfull) part = __fadd_rn(part, __fmul_rn(qh[l16 + 16 * j], kr[j]));
                if (l16 == 0)
                    for (int i = 16 * nfull; i < hd; i++) part = __fadd_rn(part, __fmul_rn(qh[i], kv_load(keys.k, keys.f16, base + i)));
                part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, 8));    /* s[k] + s[k+8] */
                part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, 1));    /* ((s0+s1) + (s2+s3)) + ((s4+s5) + (s6+s7)) */
                part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, 2));
                part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, 4));
                acc = __fadd_rn(acc, __fmul_rn(wr[h], fmaxf(part, 0.0f)));
            }
            if (b + hw < m && l16 == 0) { key[n + e] = score_key(__fmul_rn(acc, scale)); idx[n + e] = s0 + e; }
        }
        s0 += m;
        n += m;
        __syncthreads();
        if (n == INFER_CUDA_IDX_CAP || s0 == n_vis) n = idx_cut(key, idx, n, top_k);
    }
    for (int i = threadIdx.x; i < top_k; i += blockDim.x) out[i] = idx[i];
    if (threadIdx.x == 0) n_sel[r] = top_k;
}
static void infer_cuda_indexer_topk(void *ctx, int32_t *sel, int32_t *n_sel, const float *q, const float *w, const infer_kv_view *keys,
                                    const int32_t *pos, int rows, int n_head, int head_dim, int ratio, int top_k, float scale) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    if (ratio <= 0 || top_k <= 0 || top_k > INFER_CUDA_IDX_MAXK || head_dim > INFER_CUDA_IDX_MAXD) {
        infer_cuda_record(c, cudaErrorInvalidValue, "indexer_topk: top_k above 2048 or head size above 512");
        return;
    }
    const infer_cuda_kv kv = infer_cuda_kv_of(keys);
    const size_t shm = (size_t)INFER_CUDA_IDX_CAP * (sizeof(uint32_t) + sizeof(int32_t));
    const int kpl = head_dim / 16;
#define INFER_CUDA_IDX(KPL) INFER_CUDA_LAUNCH(rows, INFER_CUDA_IDX_THREADS, shm, c, k_indexer_topk<KPL>)(sel, n_sel, q, w, kv, pos, n_head, head_dim, \
        ratio, top_k, scale)
    if (kpl <= 2) INFER_CUDA_IDX(2);
    else if (kpl <= 4) INFER_CUDA_IDX(4);
    else if (kpl <= 8) INFER_CUDA_IDX(8);
    else if (kpl <= 16) INFER_CUDA_IDX(16);
    else INFER_CUDA_IDX(32);
#undef INFER_CUDA_IDX
    INFER_CUDA_LAUNCHED(c, "indexer_topk");
}

/* Attention over a sliding window plus compressed entries: k_attention's blocks, steps and
 * splits over the row's list of keys -- the window positions pos-W < j <= pos of the token
 * cache first, then the compressed entries (the chosen ones sel[r, ..], or every visible
 * one). The one K = V head is shared by all query heads; a cache whose values are its keys
 * (k == v, as deepseek4's are) has each row loaded once. The sink is a logit with no value:
 * split 0's first warp starts from (m, l) = (sink, 1) instead of (-inf, 0), which puts
 * e^(sink - M) in the denominator once. Chunks are half k_attention's: a list holds at most
 * window + top_k keys, and smaller chunks still give every split a share. */
#define INFER_CUDA_SPARSE_CHUNK 32
struct KeysSparse {           /* index i < nw: window position j0 + i; else entry sel[i - nw] (or i - nw) */
    infer_cuda_kv raw, comp;
    int32_t j0, nw;
    const int32_t *sel;
    static constexpr int may_share = 1;
    __device__ attn_kv operator()(int i) const {
        const int w = i < nw;                 /* field by field: a reference to raw or comp would put both in local memory */
        const int32_t at = w ? j0 + i : sel ? sel[i - nw] : i - nw;
        const int f16 = w ? raw.f16 : comp.f16;
        const size_t off = (kv_row(w ? raw.table : comp.table, w ? raw.bs : comp.bs, at) * (w ? raw.dim : comp.dim)) << (f16 ? 1 : 2);
        attn_kv a = { (const char *)(w ? raw.k : comp.k) + off, (const char *)(w ? raw.v : comp.v) + off, f16 };
        return a;
    }
};
template <int DPL>
__global__ void __launch_bounds__(32 * INFER_CUDA_ATT_WARPS) k_attention_sparse(float *out, float *part, int *count, const float *q, infer_cuda_kv raw,
        infer_cuda_kv comp, const int32_t *pos, int n_head, int hd, float scale, int window, const float *sinks, int ratio, const int32_t *sel, const int32_t *n_sel,
        int top_k, int n_split) {
    INFER_CUDA_PDL_ENTRY;
    const int h = blockIdx.x, r = blockIdx.y, split = blockIdx.z;
    const int32_t t = pos[r], j0 = window > 0 && t - window + 1 > 0 ? t - window + 1 : 0, nw = t - j0 + 1;
    const int32_t nc = !comp.k || ratio <= 0 ? 0 : sel ? n_sel[r] : (t + 1) / ratio;
    const size_t row = (size_t)r * n_head + h, slot = row * n_split + split;
    KeysSparse keys;
    keys.raw = raw; keys.comp = comp; keys.j0 = j0; keys.nw = nw; keys.sel = sel ? sel + (size_t)r * top_k : NULL;
    const int sink = sinks && split == 0 && threadIdx.x < 32, active = attn_active(nw + nc, INFER_CUDA_SPARSE_CHUNK, n_split);
    if (split >= active) return;
    attn_block<DPL, 1>(keys, nw + nc, INFER_CUDA_SPARSE_CHUNK, q + row * hd, sink ? sinks[h] : -INFINITY, sink ? 1.0f : 0.0f, out + row * hd,
                       active > 1 ? part + slot * (hd + 2) : NULL, hd, scale, split, n_split);
    if (active > 1) attn_merge_last(out + row * hd, part + row * n_split * (hd + 2), count + row, n_split, active, hd, 1);
}
static void infer_cuda_attention_sparse(void *ctx, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos, int rows,
                                        int n_head, int head_dim, float scale, int window, const float *sinks,
                                        const infer_kv_view *comp, int ratio, const int32_t *sel, const int32_t *n_sel, int top_k) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (rows <= 0) return;
    if (head_dim > INFER_CUDA_ATT_MAXD) { infer_cuda_record(c, cudaErrorInvalidValue, "attention_sparse: head size above 512"); return; }
    for (; rows > 65535; rows -= 65535, q += (size_t)65535 * n_head * head_dim, out += (size_t)65535 * n_head * head_dim, pos += 65535,
                         sel = sel ? sel + (size_t)65535 * top_k : NULL, n_sel = n_sel ? n_sel + 65535 : NULL)
        infer_cuda_attention_sparse(ctx, out, q, kv, pos, 65535, n_head, head_dim, scale, window, sinks, comp, ratio, sel, n_sel, top_k);
    const int n_split = infer_cuda_att_splits(c, rows * n_head, 1, head_dim);
    if (!n_split) return;
    const infer_cuda_kv raw = infer_cuda_kv_of(kv), cmp = infer_cuda_kv_of(comp);
    dim3 grid(n_head, rows, n_split);
#define INFER_CUDA_SPARSE(DPL) INFER_CUDA_LAUNCH(grid, 32 * INFER_CUDA_ATT_WARPS, 0, c, k_attention_sparse<DPL>)(out, (float *)c->scratch, (int *)c->att_count, q, \
        raw, cmp, pos, n_head, head_dim, scale, window, sinks, ratio, sel, n_sel, top_k, n_split)
    const int dpl = (head_dim + 31) / 32;
    if (dpl <= 1) INFER_CUDA_SPARSE(1);
    else if (dpl <= 2) INFER_CUDA_SPARSE(2);
    else if (dpl <= 4) INFER_CUDA_SPARSE(4);
    else if (dpl <= 8) INFER_CUDA_SPARSE(8);
    else INFER_CUDA_SPARSE(16);
#undef INFER_CUDA_SPARSE
    INFER_CUDA_LAUNCHED(c, "attention_sparse");
}

/* ------------------------------------------------------------------------------------------
 * >>cuda_table -- contexts, limits, and the table. infer_cuda_init fills the kernel table
 * once, every entry the forward pass of infer.h calls (the optional fused ones included),
 * and that forward pass runs on it unchanged.
 * ---------------------------------------------------------------------------------------- */
static infer_status infer_cuda_ctx_create(void **out, int n_threads, int precise, infer_error *err) {
    (void)n_threads;
    *out = NULL;
    if (infer_cuda_device < 0) { infer_cuda_set_error(err, INFER_ERR_BACKEND, "cuda backend: infer_cuda_init was not called"); return INFER_ERR_BACKEND; }
    infer_cuda_ctx *c = new (std::nothrow) infer_cuda_ctx();
    if (!c) { infer_cuda_set_error(err, INFER_ERR_NOMEM, "out of memory"); return INFER_ERR_NOMEM; }
    c->precise = precise;
    cudaError_t e = cudaSetDevice(infer_cuda_device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        infer_cuda_set_error(err, INFER_ERR_BACKEND, "cuda backend: creating a stream: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
        delete c;
        return INFER_ERR_BACKEND;
    }
    *out = c;
    return INFER_OK;
}
static void infer_cuda_ctx_free(void *ctx) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    if (!c) return;
    infer_cuda_flush(c);
    cudaStreamSynchronize(c->stream);
    infer_cuda_graphs_free(c);
    if (c->scratch) cudaFree(c->scratch);
    if (c->att_count) cudaFree(c->att_count);
    if (c->xq) cudaFree(c->xq);
    if (c->qt) cudaFree(c->qt);
    if (c->xq2) cudaFree(c->xq2);
    if (c->qcount) cudaFree(c->qcount);
    if (c->xh) cudaFree(c->xh);
    if (c->wh) cudaFree(c->wh);
    for (size_t i = 0; i < c->wcache.size(); i++) cudaFree(c->wcache[i].bf);
    if (c->dnc) cudaFree(c->dnc);
#ifdef INFER_CUDA_GEMM
    if (c->blas) cublasDestroy(c->blas);
    if (c->blas_ws) cudaFree(c->blas_ws);
#endif
    cudaStreamDestroy(c->stream);
    delete c;
}
static const char *infer_cuda_last_error(void *ctx) { return ctx ? ((infer_cuda_ctx *)ctx)->error : ""; }

/* the shapes the kernels above are written for (registers and shared memory are sized by
 * these); anything else is refused when the model is uploaded */
static int infer_cuda_supports_config(const struct infer_config *c, char *why, size_t n) {
    if (c->head_dim > INFER_CUDA_ATT_MAXD) { snprintf(why, n, "attention head size %d (the kernels handle up to %d)", c->head_dim, INFER_CUDA_ATT_MAXD); return 0; }
    if (c->ssm_d_state > INFER_CUDA_DN_MAXK) { snprintf(why, n, "DeltaNet key head size %d (the kernels handle up to %d)", c->ssm_d_state, INFER_CUDA_DN_MAXK); return 0; }
    if (c->n_expert > INFER_CUDA_MAX_EXPERTS || c->n_expert_used > INFER_CUDA_MAX_USED) {
        snprintf(why, n, "%d experts, %d used (the router handles up to %d, %d used)", c->n_expert, c->n_expert_used, INFER_CUDA_MAX_EXPERTS, INFER_CUDA_MAX_USED);
        return 0;
    }
    if (c->ssm_conv_kernel > INFER_CUDA_MAX_CONV) { snprintf(why, n, "conv kernel %d (up to %d)", c->ssm_conv_kernel, INFER_CUDA_MAX_CONV); return 0; }
    if (c->n_hc > INFER_CUDA_MAX_HC) { snprintf(why, n, "%d hyper-connection streams (the kernels handle up to %d)", c->n_hc, INFER_CUDA_MAX_HC); return 0; }
    if (c->idx_top_k > INFER_CUDA_IDX_MAXK) { snprintf(why, n, "indexer top_k %d (the kernel keeps up to %d)", c->idx_top_k, INFER_CUDA_IDX_MAXK); return 0; }
    if (c->idx_head_dim > INFER_CUDA_IDX_MAXD) { snprintf(why, n, "indexer head size %d (the kernel handles up to %d)", c->idx_head_dim, INFER_CUDA_IDX_MAXD); return 0; }
    return 1;
}

static infer_kernels infer_cuda_table;
static int infer_cuda_table_ready;

static void infer_cuda_fill_table(void) {
    infer_kernels *k = &infer_cuda_table;
    memset(k, 0, sizeof *k);
#ifdef INFER_CUDA_EMU
    k->name = "cuda-emu";                 /* the kernels run on the CPU (tools/cuda_emu.h) */
#else
    k->name = "cuda";
#endif
    k->alloc = infer_cuda_alloc;
    k->free = infer_cuda_free;
    k->upload = infer_cuda_upload;
    k->download = infer_cuda_download;
    k->sync = infer_cuda_sync;
    k->supports_type = infer_cuda_supports_type;
    k->embed = infer_cuda_embed;
    k->rmsnorm = infer_cuda_rmsnorm;
    k->matmul = infer_cuda_matmul;
    k->matmul_n = infer_cuda_matmul_n;
    k->add = infer_cuda_add;
    k->add_rows = infer_cuda_add_rows;
    k->rope = infer_cuda_rope_op;
    k->kv_store = infer_cuda_kv_store;
    k->attention = infer_cuda_attention;
    k->zero = infer_cuda_zero;
    k->copy_rows = infer_cuda_copy_rows;
    k->mul_sigmoid = infer_cuda_mul_sigmoid;
    k->l2norm = infer_cuda_l2norm;
    k->rope_multi = infer_cuda_rope_multi;
    k->moe_route = infer_cuda_moe_route;
    k->matmul_id = infer_cuda_matmul_id;
    k->moe_sum = infer_cuda_moe_sum;
    k->conv1d_silu = infer_cuda_conv1d_silu;
    k->deltanet_gates = infer_cuda_deltanet_gates;
    k->deltanet_step = infer_cuda_deltanet;
    k->deltanet_chunked = infer_cuda_deltanet_chunked;
    k->glu = infer_cuda_glu;
    k->ctx_create = infer_cuda_ctx_create;
    k->ctx_free = infer_cuda_ctx_free;
    k->last_error = infer_cuda_last_error;
    k->supports_config = infer_cuda_supports_config;
    k->host_memory = 0;
    k->hc_pre = infer_cuda_hc_pre;
    k->hc_post = infer_cuda_hc_post;
    k->compress = infer_cuda_compress;
    k->indexer_topk = infer_cuda_indexer_topk;
    k->attention_sparse = infer_cuda_attention_sparse;
    k->copy = infer_cuda_copy;
    k->step_begin = infer_cuda_step_begin;
    k->step_end = infer_cuda_step_end;
    k->step_info = infer_cuda_step_info;
    k->matmul_add = infer_cuda_matmul_add;
    k->matmul_glu = infer_cuda_matmul_glu;
    k->rope_kv_store = infer_cuda_rope_kv_store;
    k->rmsnorm_qkv_store = infer_cuda_rmsnorm_qkv_store;
    k->rmsnorm_matmul_n = infer_cuda_rmsnorm_matmul_n;
    k->rmsnorm_ffn = infer_cuda_rmsnorm_ffn;
    k->argmax = infer_cuda_argmax;
    k->deltanet_decode = infer_cuda_deltanet_decode;
    k->attention_matmul_add = infer_cuda_attention_matmul_add;
}

infer_status infer_cuda_init(int device, infer_error *err) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        infer_cuda_set_error(err, INFER_ERR_BACKEND, "no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return INFER_ERR_BACKEND;
    }
    if (device < 0 || device >= n) {
        infer_cuda_set_error(err, INFER_ERR_ARG, "no CUDA device %d (there are %d)", device, n);
        return INFER_ERR_ARG;
    }
    int major = 0;
    if ((e = cudaSetDevice(device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&infer_cuda_sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) != cudaSuccess) {
        infer_cuda_set_error(err, INFER_ERR_BACKEND, "CUDA device: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
        return INFER_ERR_BACKEND;
    }
    if (infer_cuda_sms < 1) infer_cuda_sms = 1;
    infer_cuda_mma8 = major >= 8;
    const char *pdl = getenv("INFER_CUDA_PDL");    /* INFER_CUDA_PDL=0: plain launches (to time the two in one build) */
    /* the kernels wait for their predecessor only where they were compiled for 9.0 or later:
     * a newer GPU running the build's compute_80 PTX (JIT) has the launch attribute but kernels
     * without the wait, so it gets plain launches */
#ifdef INFER_CUDA_EMU
    const int waits = 1;
#else
    cudaFuncAttributes fa;
    const int waits = cudaFuncGetAttributes(&fa, (const void *)k_add) == cudaSuccess && fa.ptxVersion >= 90;
    (void)cudaGetLastError();
#endif
    infer_cuda_pdl_ok = major >= 9 && waits;
    infer_cuda_pdl = infer_cuda_pdl_ok && !(pdl && !strcmp(pdl, "0"));
    infer_cuda_device = device;
#ifdef INFER_CUDA_GEMM
    /* INFER_CUDA_HALF_GEMM=tiles: the 16-bit prompt matmuls on the own tiles, not cuBLAS (to
     * time the two in one build) */
    const char *hg = getenv("INFER_CUDA_HALF_GEMM");
    if (hg && !strcmp(hg, "tiles")) infer_cuda_gemm_mode = 0;
    /* INFER_CUDA_QGEMM=tiles: quantized prompts on the int8 tiles at any length, not the BF16
     * GEMM (infer_cuda_gemm_q); =N: on the GEMM from N rows (N > 16), to find where the two cross */
    /* INFER_CUDA_MVQ_ROWS=N: a batch of up to N (8..64) sequences on the int8 matvec, not the
     * tiles (the default 8), to time the two in one build */
    /* INFER_CUDA_BF16_CACHE=MiB: keep quantized weights as BF16 for the long matmuls, up to
     * that much GPU memory a context (infer_cuda_bf16_cached; 0, the default: off; auto:
     * while a quarter of the memory stays free) */
    const char *bc = getenv("INFER_CUDA_BF16_CACHE");
    if (bc && !strcmp(bc, "auto")) infer_cuda_bf16_cache_max = INFER_CUDA_BF16_AUTO;
    else if (bc && atoll(bc) > 0) infer_cuda_bf16_cache_max = (size_t)atoll(bc) << 20;
    /* INFER_CUDA_NORM_MV=0: the norm before a one-row float matvec as its own launch
     * (k_rmsnorm), not inside the matvec, to time the two in one build */
    const char *qks = getenv("INFER_CUDA_QKV_STORE");   /* INFER_CUDA_QKV_STORE=0: rope and the cache stores in their own launch */
    if (qks) infer_cuda_qkv_store = atoi(qks) != 0;
    const char *nmv = getenv("INFER_CUDA_NORM_MV");
    if (nmv && !strcmp(nmv, "0")) infer_cuda_norm_mv = 0;
    /* INFER_CUDA_MVQ_U=1: a one-row decode matvec loads one slice at a time, not two
     * (mvq_block), to time the two in one build */
    const char *mu = getenv("INFER_CUDA_MVQ_U");
    if (mu && atoi(mu) == 1) infer_cuda_mvq_u = 1;
    const char *mmv = getenv("INFER_CUDA_MMV");    /* INFER_CUDA_MMV=N: 9-N rows of quantized weights on k_mmv (1: 16), not the int8 tiles */
    if (mmv) infer_cuda_mmv_on = infer_cuda_mmv_env = infer_cuda_mmv_clamp(atoi(mmv));
    const char *mmn = getenv("INFER_CUDA_MMV_MIN");
    if (mmn && atoi(mmn) >= 1 && atoi(mmn) <= INFER_CUDA_MV_ROWS) infer_cuda_mmv_min = atoi(mmn);
    const char *mr = getenv("INFER_CUDA_MVQ_ROWS");
    if (mr && atoi(mr) > 0) infer_cuda_mvq_rows = infer_cuda_mvq_clamp(atoi(mr));
    /* INFER_CUDA_L2PF=1: the L2 prefetch of the next matvec's weights (l2_prefetch), off by
     * default: it measured no faster on llama and 10% slower on qwen35 (README) */
    const char *pfe = getenv("INFER_CUDA_L2PF");
    if (pfe) infer_cuda_l2pf = strcmp(pfe, "0") != 0;
    /* INFER_CUDA_DN=chunks: DeltaNet prompts in chunks (k_dn_prep, k_dn_chunks) from
     * INFER_CUDA_DNC_MIN rows; by default token by token (k_deltanet), which measured faster */
    const char *dn = getenv("INFER_CUDA_DN");
    if (dn) infer_cuda_dnc_min = !strcmp(dn, "chunks") ? INFER_CUDA_DNC_MIN : INT_MAX;
    /* INFER_CUDA_DNC_COLS=4 or 8: k_dn_chunks' blocks take that many state columns (16),
     * 4 or 2 times the blocks, to time the shapes in one build */
    const char *dcc = getenv("INFER_CUDA_DNC_COLS");
    if (dcc && (atoi(dcc) == 4 || atoi(dcc) == 8 || atoi(dcc) == 16)) infer_cuda_dnc_cols = atoi(dcc);
    const char *qg = getenv("INFER_CUDA_QGEMM");
    if (qg && !strcmp(qg, "tiles")) infer_cuda_qgemm_rows = INT_MAX;
    else if (qg && atoi(qg) > 16) infer_cuda_qgemm_rows = atoi(qg);
#endif
    if (!infer_cuda_table_ready) { infer_cuda_fill_table(); infer_cuda_table_ready = 1; }
    return INFER_OK;
}

const infer_kernels *infer_cuda_kernels(void) { return infer_cuda_device >= 0 ? &infer_cuda_table : NULL; }

/* For the tests (tests.c declares it under INFER_CUDA): the device decoders run on the host
 * over one row of K weights of type t, chunk by chunk, times the tensor scale as the
 * kernels apply it. Returns 0 for a type without kernels here. */
extern "C" int infer_cuda_dequant_host(infer_type t, const void *row, int K, float scale, float *dst) {
    const int nch = (K + 31) / 32;
    return infer_cuda_with_type(t, [&](auto ty) {
        for (int c = 0; c < nch; c++) {
            float w[32];
            Dq<decltype(ty)::id>::chunk((const uint8_t *)row, c, K, w);
            for (int i = 0; i < 32 && 32 * c + i < K; i++) dst[32 * c + i] = w[i] * scale;
        }
    });
}

/* For the tests (tests.c declares it under INFER_CUDA): x [rows, K] (host memory) quantized
 * on the device by k_quant_x as the fast matvec of weight type t quantizes its activations;
 * back come the codes [rows, K] and, per 32-block [rows, K / 32], the scale d and the sum of
 * the codes. Returns 0 for a type whose fast matvec takes no int8 activations, or when the
 * device fails. */
extern "C" int infer_cuda_quant_x_host(infer_type t, const float *x, int rows, int K, int8_t *codes, float *d, int32_t *sums) {
    int kind = 0;
    infer_cuda_with_type(t, [&](auto ty) { kind = Mv<decltype(ty)::id>::KIND; });
    if (kind != 1 && kind != 2) return 0;
    void *ctx;
    if (infer_cuda_ctx_create(&ctx, 1, 0, NULL) != INFER_OK) return 0;
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const size_t nx = (size_t)rows * (size_t)K, nd = (size_t)rows * (size_t)(K / 32);
    float *xd = (float *)infer_cuda_alloc(c, nx * sizeof(float));
    float2 *ds = (float2 *)malloc(nd * sizeof(float2));
    int8_t *q = NULL;
    float2 *qds = NULL;
    int ok = xd && ds && infer_cuda_upload(c, xd, x, nx * sizeof(float)) == INFER_OK && infer_cuda_quant_x(c, kind, xd, K, rows, &q, &qds) &&
             infer_cuda_download(c, codes, q, nx) == INFER_OK && infer_cuda_download(c, ds, qds, nd * sizeof(float2)) == INFER_OK;
    for (size_t i = 0; ok && i < nd; i++) { d[i] = ds[i].x; memcpy(&sums[i], &ds[i].y, 4); }
    free(ds);
    infer_cuda_free(c, xd);
    infer_cuda_ctx_free(ctx);
    return ok;
}

/* For the tests (tests.c declares it under INFER_CUDA): the int8 activations the fused ops
 * of ctx last wrote, as rows of K: which 0, the norm's (the context's xq buffer, written by
 * rmsnorm_matmul_n or rmsnorm_ffn), 1, the GLU's for the down projection (rmsnorm_ffn); the
 * codes [rows, K], per 32-block [rows, K / 32] the scale d and the sum of the codes (host
 * memory). 0 when there are none of that size or the copy fails. */
extern "C" int infer_cuda_fused_act_host(void *ctx, int which, int rows, int K, int8_t *codes, float *d, int32_t *sums) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    const size_t nx = (size_t)rows * (size_t)K, nd = (size_t)rows * (size_t)(K / 32), at = (nx + 15) / 16 * 16;
    const void *buf = which ? c->xq2 : c->xq;
    if (!buf || at + nd * sizeof(float2) > (which ? c->xq2_bytes : c->xq_bytes)) return 0;
    float2 *ds = (float2 *)malloc(nd * sizeof(float2));
    int ok = ds && infer_cuda_download(c, codes, buf, nx) == INFER_OK && infer_cuda_download(c, ds, (const char *)buf + at, nd * sizeof(float2)) == INFER_OK;
    for (size_t i = 0; ok && i < nd; i++) { d[i] = ds[i].x; memcpy(&sums[i], &ds[i].y, 4); }
    free(ds);
    return ok;
}

/* For the tests: the int8 unpackers run on the host over one row of K weights of type t,
 * giving d q (+ m) per weight (tests.c holds it to the CPU's dequantizer); 0 for a type
 * without int8 tiles. */
extern "C" int infer_cuda_int8_host(infer_type t, const void *row, int K, float *dst) {
    int ok = 0;
    infer_cuda_with_type(t, [&](auto ty) {
        constexpr int T = decltype(ty)::id;
        if constexpr (Dq8<T>::ok) {
            for (int c = 0; c < K / 32; c++) {
                q8chunk o;
                Dq8<T>::chunk((const uint8_t *)row, c, o);
                for (int i = 0; i < 32; i++) {
                    const float v = o.d[i / 16] * (float)(int8_t)(o.q[i / 4] >> (8 * (i % 4)));
                    dst[32 * c + i] = Dq8<T>::mins ? v + o.m[i / 16] : v;      /* (+ 0 would turn a -0 into +0) */
                }
            }
            ok = 1;
        }
    });
    return ok;
}

/* For the tests: x [rows, K] (device memory) quantized as a prompt matmul of type t would
 * quantize it, into q [rows, K], d and s [rows, K / 32] (device memory; the layout of
 * infer_cuda_q8x); 0 for a type without int8 tiles. */
extern "C" int infer_cuda_quant_act(void *ctx, infer_type t, const float *x, int rows, int K, int8_t *q, float *d, int32_t *s) {
    infer_cuda_ctx *c = (infer_cuda_ctx *)ctx;
    int ok = 0;
    infer_cuda_with_type(t, [&](auto ty) {
        constexpr int T = decltype(ty)::id;
        if constexpr (Dq8<T>::ok) {
            infer_cuda_q8x xq = { q, d, s };
            const int64_t warps = (int64_t)rows * ((K + 255) / 256);
            INFER_CUDA_LAUNCH((unsigned)((warps + 7) / 8), 256, 0, c, k_quant_act<Dq8<T>::act>)(xq, x, K, rows);
            INFER_CUDA_LAUNCHED(c, "quant_act");
            ok = 1;
        }
    });
    return ok;
}

/* For the tests: the splits of K every plain int8 tile launch takes from now on (1: none;
 * -1: the backend's choice, the default; set it while no other thread launches); returns
 * the previous setting. The tile rows and splits of the context's last int8 tile launch
 * into bm and splits. */
static int infer_cuda_knob(int *knob, int v) {   /* the tests' hooks below: set, return what it was */
    const int old = *knob;
    *knob = v;
    return old;
}
extern "C" int infer_cuda_tiles_force_splits(int splits) { return infer_cuda_knob(&infer_cuda_qt_force, splits); }
/* For the tests: the splits of every decode attention launch from now on (k_attention,
 * k_attention_h16: the positions dealt to that many blocks a head group, merged by the last;
 * -1: the backend's choice, the default); returns the previous setting */
extern "C" int infer_cuda_att_force_splits(int splits) { return infer_cuda_knob(&infer_cuda_att_force, splits); }
/* For the tests: launches issued from now on use programmatic dependent launch (1) or not
 * (0), in every context (graphs captured before keep how they were made); returns the
 * previous setting, or -2 (and changes nothing) where the device or the build cannot */
extern "C" int infer_cuda_pdl_force(int on) { return infer_cuda_pdl_ok ? infer_cuda_knob(&infer_cuda_pdl, on != 0) : -2; }
/* For the tests: the small kernels of launches issued from now on prefetch the next
 * matvec's weights into L2 (1) or not (0); returns the previous setting */
extern "C" int infer_cuda_l2pf_force(int on) { return infer_cuda_knob(&infer_cuda_l2pf, on != 0); }
/* For the tests: how a fast-mode matmul of F16 or BF16 weights over more than 8 rows runs
 * from now on: 0 the tiles, 1 the library GEMM (cuBLAS), -1 the backend's choice (the
 * library where the build has it); returns the previous setting, or -2 (and changes
 * nothing) when this build has no library GEMM. infer_cuda_half_gemm_last: 1 when the
 * context's last such matmul ran on the library, 0 on the tiles. */
extern "C" int infer_cuda_half_gemm_force(int mode) {
#ifdef INFER_CUDA_GEMM
    return infer_cuda_knob(&infer_cuda_gemm_mode, mode);
#else
    (void)mode;
    return -2;
#endif
}
extern "C" int infer_cuda_half_gemm_last(void *ctx) { return ((infer_cuda_ctx *)ctx)->half_gemm; }
/* For the tests: from now on, the fewest rows of a fast-mode matmul of quantized weights
 * that go to the BF16 library GEMM (infer_cuda_gemm_q), where fewer go to the int8 tiles
 * (-1: the default, INFER_CUDA_QGEMM_ROWS; INT_MAX: never), and the weight columns it
 * dequantizes at a time (0: the default, INFER_CUDA_QGEMM_BYTES' worth); returns the previous
 * row setting, or -2 (and changes nothing) when this build has no library GEMM.
 * infer_cuda_tiles_last gives bm = -1 after a matmul that ran there. */
extern "C" int infer_cuda_qgemm_force(int rows, int cols) {
#ifdef INFER_CUDA_GEMM
    infer_cuda_qgemm_cols = cols > 0 ? cols : 0;
    return infer_cuda_knob(&infer_cuda_qgemm_rows, rows < 0 ? INFER_CUDA_QGEMM_ROWS : rows);
#else
    (void)rows; (void)cols;
    return -2;
#endif
}
/* For the tests: the most rows the fast mode's int8 matvec takes from now on (8 to 64; -1:
 * the default, 8); returns the previous setting */
/* For the tests: the BF16 weight copies' budget from now on, in bytes (0: off; SIZE_MAX:
 * auto); returns the previous one. infer_cuda_bf16_cache_bytes: what a context keeps. */
extern "C" size_t infer_cuda_bf16_cache_force(size_t bytes) {
#ifdef INFER_CUDA_GEMM
    const size_t old = infer_cuda_bf16_cache_max;
    infer_cuda_bf16_cache_max = bytes;
    return old;
#else
    (void)bytes;
    return 0;
#endif
}
extern "C" size_t infer_cuda_bf16_cache_bytes(void *ctx) { return ((infer_cuda_ctx *)ctx)->wcache_bytes; }
/* For the tests: rmsnorm_qkv_store's rope and cache stores inside the q/k/v matvec (1) or in
 * rope_kv_store's own launch after it (0); returns the previous setting. _last: 1 when the
 * context's last rmsnorm_qkv_store ran them in the matvec. */
extern "C" int infer_cuda_qkv_store_force(int on) { return infer_cuda_knob(&infer_cuda_qkv_store, on != 0); }
extern "C" int infer_cuda_qkv_store_last(void *ctx) { return ((infer_cuda_ctx *)ctx)->qkv_store; }
extern "C" int infer_cuda_norm_mv_force(int on) { return infer_cuda_knob(&infer_cuda_norm_mv, on != 0); }
extern "C" int infer_cuda_norm_mv_last(void *ctx) { return ((infer_cuda_ctx *)ctx)->norm_mv; }
/* For the tests: 9-16 rows of a fast-mode matmul of quantized weights run on k_mmv (on = 1;
 * on = N > 16: 9-N rows, N at most 64) or the int8 tiles (0; -1: the default,
 * INFER_CUDA_MMV), with nt n-tiles a warp (1, 2; 0: chosen by the output's width); returns
 * the previous setting (the most rows, 0 when off). infer_cuda_tiles_last
 * gives bm = -2 after a matmul that ran there, and its n-tiles (2 for the GLU) as splits. */
extern "C" int infer_cuda_mmv_force(int on, int nt) {
    infer_cuda_mmv_nt = nt == 1 || nt == 2 ? nt : 0;
    return infer_cuda_knob(&infer_cuda_mmv_on, on < 0 ? infer_cuda_mmv_env : infer_cuda_mmv_clamp(on));
}
extern "C" long infer_cuda_mmv_count(void) { return infer_cuda_mmv_issued; }
/* For the tests: which activations k_mmv reads for type t (infer_cuda_mmv_xf: 1 the fast
 * matvec's, 0 the tiles', -1 none) */
extern "C" int infer_cuda_mmv_xf_host(infer_type t) {
    int xf = -1;
    infer_cuda_with_type(t, [&](auto ty) { xf = infer_cuda_mmv_xf<decltype(ty)::id>(); });
    return xf;
}
/* For the tests: the fewest rows k_mmv takes when on (1..9; -1: the default, 9); returns the previous */
extern "C" int infer_cuda_mmv_min_force(int rows) {
    return infer_cuda_knob(&infer_cuda_mmv_min, rows >= 1 && rows <= INFER_CUDA_MV_ROWS ? rows : INFER_CUDA_MV_ROWS + 1);
}
extern "C" int infer_cuda_mvq_u_force(int u) { return infer_cuda_knob(&infer_cuda_mvq_u, u == 1 ? 1 : 2); }
extern "C" int infer_cuda_mvq_rows_force(int rows) { return infer_cuda_knob(&infer_cuda_mvq_rows, rows < 0 ? INFER_CUDA_MVQ_ROWS : infer_cuda_mvq_clamp(rows)); }
/* For the tests: the fewest rows of a deltanet_chunked call that run on the chunked kernels
 * (k_dn_prep, k_dn_chunks) from now on (-1 or INT_MAX: the default, never, the recurrence);
 * returns the previous setting */
extern "C" int infer_cuda_dn_chunks_force(int rows) { return infer_cuda_knob(&infer_cuda_dnc_min, rows < 0 ? INT_MAX : rows); }
extern "C" int infer_cuda_dn_chunks_last(void *ctx) { return ((infer_cuda_ctx *)ctx)->dn_chunks; }
/* For the tests: the state columns a k_dn_chunks block takes from now on (4, 8 or 16; -1:
 * the default, 16); returns the previous setting */
extern "C" int infer_cuda_dn_cols_force(int cols) {
    return infer_cuda_knob(&infer_cuda_dnc_cols, cols == 4 || cols == 8 ? cols : INFER_CUDA_DNC_COLS);
}
/* the row count of the context's last int8 tiles (0: its last fast int8 matmul ran on the
 * matvec, -1: on the BF16 library GEMM) and their splits of K */
extern "C" void infer_cuda_tiles_last(void *ctx, int *bm, int *splits) {
    *bm = ((infer_cuda_ctx *)ctx)->qt_rows;
    *splits = ((infer_cuda_ctx *)ctx)->qt_splits;
}
