/* tools/cuda_emu.h -- run infer_cuda.cu's kernels on the CPU, for testing without a GPU.
 *
 *   make cuda-emu  ->  ./tests-cuda-emu   (g++ compiles infer_cuda.cu with -DINFER_CUDA_EMU,
 *                                          which includes this file instead of the CUDA headers)
 *
 * A functional emulator, not a performance one: it checks the kernels' *logic* -- indexing,
 * the block and warp reductions, the online softmax and its split merge, the routing
 * argmax, the in-place state updates, which lane holds which element of an int8 MMA's
 * fragments -- against the CPU reference with the same diff harness the GPU uses
 * (./tests-cuda-emu gpu_). It cannot find what only hardware shows:
 * races the emulated schedule happens to order, launch limits, register or shared-memory
 * overflow, real memory faults.
 *
 * How: every CUDA thread of a block is a fiber with its own small stack; a block's
 * fibers run round-robin on one OS thread, blocks one after another. A fiber runs until it
 * reaches __syncthreads (a barrier over the block's live fibers) or a warp shuffle, ballot
 * or int8 MMA (a value exchange with a barrier over its warp), or returns. threadIdx is set by the scheduler on
 * every switch. Fibers switch with a few instructions of assembly on x86-64 (swapcontext,
 * the portable fallback, makes a system call per switch, which a warp shuffle per position
 * of an attention row multiplies into minutes). `__shared__` variables become `static`: one copy, which is right because
 * only one block runs at a time. Device memory is host memory; streams are ignored (every
 * call completes before it returns). The one cuBLAS call the backend makes (cublasGemmEx, its
 * F16/BF16/F32 prompt matmuls) is a plain loop here, with the library's column-major contract.
 */
#ifndef INFER_CUDA_EMU_H
#define INFER_CUDA_EMU_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <ucontext.h>

/* ---- the CUDA C++ keywords ---- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __constant__
#define __launch_bounds__(...)
#define INFER_CUDA_DYN_SHARED(type, name) type *name = (type *)emu_dyn_shared

struct uint3 { unsigned x, y, z; };
struct float4 { float x, y, z, w; };
/* the vector types the kernels load and store whole (their alignment as on the device) */
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static void *emu_dyn_shared;

/* ---- the runtime API this project uses ---- */
typedef int cudaError_t;
typedef void *cudaStream_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorNotSupported = 801 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
enum { cudaStreamNonBlocking = 1 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75 };

static const char *cudaGetErrorString(cudaError_t e) {
    return e == cudaSuccess ? "no error" : e == cudaErrorMemoryAllocation ? "out of memory" : e == cudaErrorInvalidValue ? "invalid argument" : "emulated error";
}
static const char *cudaGetErrorName(cudaError_t e) {
    return e == cudaSuccess ? "cudaSuccess" : e == cudaErrorInvalidValue ? "cudaErrorInvalidValue" : "cudaErrorEmulated";
}
/* a launch the hardware would refuse (see emu_launcher) leaves its error here, as the
 * runtime does, until cudaGetLastError reads and clears it */
static cudaError_t emu_last_error = cudaSuccess;
static cudaError_t cudaGetLastError(void) { const cudaError_t e = emu_last_error; emu_last_error = cudaSuccess; return e; }
static cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
/* an emulated device of 16 GiB with half of it free */
static cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) { *free_bytes = (size_t)8 << 30; *total = (size_t)16 << 30; return cudaSuccess; }
static cudaError_t cudaSetDevice(int) { return cudaSuccess; }
/* 16 SMs: few enough that the attention's split-K path is taken with a handful of splits
 * (an H100's 132 would make 32 mostly empty splits, each a block of fibers to run); compute
 * capability 9 (Hopper), which has everything the kernels use, the int8 MMA included */
static cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int) { *v = a == cudaDevAttrComputeCapabilityMajor ? 9 : 16; return cudaSuccess; }
static cudaError_t cudaMalloc(void **p, size_t n) {
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    if (*p) memset(*p, 0xFF, n);                /* NaNs: a read of memory never written shows */
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
static cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t) { memcpy(d, s, n); return cudaSuccess; }
static cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t) { memset(d, v, n); return cudaSuccess; }
static cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind, cudaStream_t) {
    for (size_t r = 0; r < h; r++) memcpy((char *)d + r * dp, (const char *)s + r * sp, w);
    return cudaSuccess;
}
static cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { *s = NULL; return cudaSuccess; }
static cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
static cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }

/* ---- half precision and the intrinsics ---- */
struct __half { uint16_t x; };
static inline float emu_bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t emu_float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline __half __ushort_as_half(unsigned short v) { __half h = { v }; return h; }
static inline float __half2float(__half h) {
    const uint32_t sign = (uint32_t)(h.x & 0x8000) << 16, e = (h.x >> 10) & 0x1f, m = h.x & 0x3ff;
    if (e == 0x1f) return emu_bits_float(sign | 0x7f800000u | (m << 13));
    if (e == 0) { const float f = (float)m * (1.0f / 16777216.0f); return sign ? -f : f; }
    return emu_bits_float(sign | ((e + 112) << 23) | (m << 13));
}
static inline __half __float2half_rn(float f) {   /* round to nearest even, overflow to inf */
    const uint32_t x = emu_float_bits(f), sign = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;
    __half h;
    if (ax > 0x7f800000u) { h.x = (uint16_t)(sign | 0x7e00); return h; }
    if (ax >= 0x477ff000u) { h.x = (uint16_t)(sign | 0x7c00); return h; }
    if (ax < 0x38800000u) {
        const float v = emu_bits_float(ax) * 16777216.0f, r = (v + 8388608.0f) - 8388608.0f;
        h.x = (uint16_t)(sign | (uint32_t)r);
        return h;
    }
    uint32_t b = (((ax >> 23) - 112) << 10) | ((ax & 0x7fffff) >> 13), rest = ax & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (b & 1))) b++;
    h.x = (uint16_t)(sign | b);
    return h;
}
/* a pair of halves in one 32-bit word (x the low 16 bits), as float2 */
struct __half2 { __half x, y; };
static inline float2 __half22float2(__half2 h) { float2 f = { __half2float(h.x), __half2float(h.y) }; return f; }
/* dp4a: the 4 signed bytes of a times those of b, summed, plus c */
static inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; i++) c += (int)(int8_t)(a >> (8 * i)) * (int)(int8_t)(b >> (8 * i));
    return c;
}
static inline int __float2int_rn(float f) { return (int)rintf(f); }      /* to nearest, ties to even */
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
/* bfloat16: the top 16 bits of an f32, rounded to nearest even (a NaN stays a NaN) */
struct __nv_bfloat16 { uint16_t x; };
static inline float __bfloat162float(__nv_bfloat16 h) { return emu_bits_float((uint32_t)h.x << 16); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    const uint32_t u = emu_float_bits(f);
    __nv_bfloat16 h;
    h.x = (u & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((u >> 16) | 64) : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
    return h;
}
static inline int atomicAdd(int *p, int v) { const int old = *p; *p += v; return old; }   /* fibers never interleave inside it */
static inline float __uint_as_float(uint32_t u) { return emu_bits_float(u); }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }

/* ---- cross-block hand-offs (the last block of a group finishing its work): the memory
 * fence orders a thread's stores before its later ones as other blocks see them; here blocks
 * run one after another, so every store is already seen and the fence does nothing.
 * __ldcg, a load through L2 (bypassing the SM's L1), is a plain load. ---- */
static inline void __threadfence(void) {}
template <class T> static inline T __ldcg(const T *p) { return *p; }

/* ---- tensor-core fragments (nvcuda::wmma), the shapes this project uses: TF32 m16n16k8 and
 * F16 / BF16 m16n16k16, f32 accumulators. The real fragments spread a tile over the warp's
 * lanes in an unspecified layout; here every thread holds the whole tile (as floats: the
 * inputs convert exactly) and does the whole product, which is the same observable
 * behaviour (load, mma, store are warp-collective with identical results). ---- */
#define __align__(n) __attribute__((aligned(n)))
namespace nvcuda {
namespace wmma {
struct matrix_a {}; struct matrix_b {}; struct accumulator {};
struct row_major {}; struct col_major {};
namespace precision { struct tf32 {}; }
enum layout_t { mem_row_major, mem_col_major };
template <int R, int C> struct emu_tile { enum { rows = R, cols = C, num_elements = R * C }; float x[R * C]; };
template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment;
template <int M, int N, int K> struct fragment<matrix_a, M, N, K, precision::tf32, row_major> : emu_tile<M, K> {};
template <int M, int N, int K> struct fragment<matrix_b, M, N, K, precision::tf32, col_major> : emu_tile<K, N> {};
template <int M, int N, int K> struct fragment<accumulator, M, N, K, float, void> : emu_tile<M, N> {};
template <int M, int N, int K> struct fragment<matrix_a, M, N, K, __half, row_major> : emu_tile<M, K> {};
template <int M, int N, int K> struct fragment<matrix_b, M, N, K, __half, col_major> : emu_tile<K, N> {};
template <int M, int N, int K> struct fragment<matrix_a, M, N, K, __nv_bfloat16, row_major> : emu_tile<M, K> {};
template <int M, int N, int K> struct fragment<matrix_b, M, N, K, __nv_bfloat16, col_major> : emu_tile<K, N> {};
static inline float emu_value(__half h) { return __half2float(h); }
static inline float emu_value(__nv_bfloat16 h) { return __bfloat162float(h); }
/* the 16-bit operands: A row-major, B column-major, as for TF32 below */
template <int M, int N, int K, class H> static void load_matrix_sync(fragment<matrix_a, M, N, K, H, row_major> &f, const H *p, unsigned ldm) {
    for (int m = 0; m < M; m++) for (int k = 0; k < K; k++) f.x[m * K + k] = emu_value(p[(size_t)m * ldm + k]);
}
template <int M, int N, int K, class H> static void load_matrix_sync(fragment<matrix_b, M, N, K, H, col_major> &f, const H *p, unsigned ldm) {
    for (int k = 0; k < K; k++) for (int n = 0; n < N; n++) f.x[k * N + n] = emu_value(p[(size_t)n * ldm + k]);
}
template <int M, int N, int K, class H> static void mma_sync(fragment<accumulator, M, N, K, float, void> &d, const fragment<matrix_a, M, N, K, H, row_major> &a,
                                                             const fragment<matrix_b, M, N, K, H, col_major> &b, const fragment<accumulator, M, N, K, float, void> &c) {
    float r[M * N];
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float s = c.x[m * N + n];
            for (int k = 0; k < K; k++) s += a.x[m * K + k] * b.x[k * N + n];
            r[m * N + n] = s;
        }
    memcpy(d.x, r, sizeof r);
}
/* A (M x K) row-major: element (m, k) at p[m ldm + k] */
template <int M, int N, int K> static void load_matrix_sync(fragment<matrix_a, M, N, K, precision::tf32, row_major> &f, const float *p, unsigned ldm) {
    for (int m = 0; m < M; m++) for (int k = 0; k < K; k++) f.x[m * K + k] = p[(size_t)m * ldm + k];
}
/* B (K x N) column-major: element (k, n) at p[n ldm + k] */
template <int M, int N, int K> static void load_matrix_sync(fragment<matrix_b, M, N, K, precision::tf32, col_major> &f, const float *p, unsigned ldm) {
    for (int k = 0; k < K; k++) for (int n = 0; n < N; n++) f.x[k * N + n] = p[(size_t)n * ldm + k];
}
template <int M, int N, int K> static void fill_fragment(fragment<accumulator, M, N, K, float, void> &f, float v) {
    for (int i = 0; i < M * N; i++) f.x[i] = v;
}
template <int M, int N, int K> static void store_matrix_sync(float *p, const fragment<accumulator, M, N, K, float, void> &f, unsigned ldm, layout_t) {
    for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) p[(size_t)m * ldm + n] = f.x[m * N + n];
}
/* f32 -> TF32: round the mantissa to 10 bits, to nearest with ties away from zero (cvt.rna) */
static inline float __float_to_tf32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}
}
}

/* ---- fibers ---- */
#define EMU_MAX_THREADS 1024
#define EMU_STACK (64 * 1024)
static char *emu_stacks;
static int emu_n, emu_cur, emu_alive, emu_warp_alive[EMU_MAX_THREADS / 32], emu_done[EMU_MAX_THREADS];
static int emu_bar_count, emu_bar_gen;                          /* __syncthreads */
static int emu_wbar_count[EMU_MAX_THREADS / 32], emu_wbar_gen[EMU_MAX_THREADS / 32];
static uint64_t emu_xchg[EMU_MAX_THREADS];                       /* shuffle values, one per lane */
static void (*emu_body)(void *);
static void *emu_body_arg;
static void emu_fiber_main(void);

#if defined(__x86_64__)
/* emu_switch(&from, to): push the callee-saved registers, save the stack pointer in *from,
 * load `to`, pop its registers and return into that fiber (System V x86-64 ABI) */
extern "C" void emu_switch(void **from, void *to);
__asm__(".text\n.globl emu_switch\n.type emu_switch,@function\nemu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
        ".size emu_switch, .-emu_switch\n");
static void *emu_sp[EMU_MAX_THREADS], *emu_sched_sp;
static void emu_fiber_entry(void) {
    emu_fiber_main();
    for (;;) emu_switch(&emu_sp[emu_cur], emu_sched_sp);     /* finished: never resumed */
}
static void emu_yield(void) { emu_switch(&emu_sp[emu_cur], emu_sched_sp); }
static void emu_fiber_init(int t) {
    /* a stack as emu_switch leaves it: 6 zeroed registers, then the return into the entry
     * function, with the stack 16-byte aligned at its call as the ABI wants */
    void **top = (void **)(emu_stacks + (size_t)(t + 1) * EMU_STACK);
    top[-1] = NULL;
    top[-2] = (void *)emu_fiber_entry;
    for (int i = 3; i <= 8; i++) top[-i] = NULL;
    emu_sp[t] = (void *)&top[-8];
}
static void emu_resume(int t) { emu_switch(&emu_sched_sp, emu_sp[t]); }
#else
static ucontext_t emu_ctx[EMU_MAX_THREADS], emu_sched;
static void emu_yield(void) { swapcontext(&emu_ctx[emu_cur], &emu_sched); }
static void emu_fiber_init(int t) {
    getcontext(&emu_ctx[t]);
    emu_ctx[t].uc_stack.ss_sp = emu_stacks + (size_t)t * EMU_STACK;
    emu_ctx[t].uc_stack.ss_size = EMU_STACK;
    emu_ctx[t].uc_link = &emu_sched;
    makecontext(&emu_ctx[t], emu_fiber_main, 0);
}
static void emu_resume(int t) { swapcontext(&emu_sched, &emu_ctx[t]); }
#endif

static void __syncthreads(void) {
    const int gen = emu_bar_gen;
    if (++emu_bar_count == emu_alive) { emu_bar_count = 0; emu_bar_gen++; return; }
    while (emu_bar_gen == gen) emu_yield();
}
static void emu_warp_barrier(int w) {
    const int gen = emu_wbar_gen[w];
    if (++emu_wbar_count[w] == emu_warp_alive[w]) { emu_wbar_count[w] = 0; emu_wbar_gen[w]++; return; }
    while (emu_wbar_gen[w] == gen) emu_yield();
}
template <typename V> static V __shfl_xor_sync(unsigned, V v, int o) {
    const int t = emu_cur, w = t / 32, lane = t % 32;
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    emu_xchg[t] = b;
    emu_warp_barrier(w);
    V r;
    memcpy(&r, &emu_xchg[w * 32 + (lane ^ o)], sizeof r);
    emu_warp_barrier(w);
    return r;
}
/* lane l gets src's v (src taken mod 32, as the hardware's full-width shuffle does) */
template <typename V> static V __shfl_sync(unsigned, V v, int src) {
    const int t = emu_cur, w = t / 32;
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    emu_xchg[t] = b;
    emu_warp_barrier(w);
    V r;
    memcpy(&r, &emu_xchg[w * 32 + (src & 31)], sizeof r);
    emu_warp_barrier(w);
    return r;
}

/* a bit per lane: which lanes of the warp pass a true predicate (lanes that have returned
 * count as false) */
/* ---- int8 tensor-core MMA: mma.sync.aligned.m16n8k{32,16}.row.col.s32.s8.s8.s32, D = A B + C
 * with A 16 x K, B K x 8, C and D 16 x 8 (int32). infer_cuda.cu issues it as inline PTX
 * behind mma_s8_k32 / mma_s8_k16 and calls emu_mma_s8<K> instead under the emulator. Unlike
 * wmma's, these fragments have a documented layout (PTX ISA, "Matrix Fragments for
 * mma.m16n8k32" and "mma.m16n8k16", integer types), and the emulation keeps it: each lane
 * deposits its registers, A, B and C are assembled from all 32 lanes by the formulas below,
 * and each lane gets back the four elements of D it owns. A kernel that loads its fragments
 * in any other arrangement gets wrong sums here, as it would on the GPU. With g = lane / 4,
 * t = lane % 4, a register holding four int8 elements e = 4r .. 4r + 3 in bytes 0..3:
 *   A  a_i (i < K / 2): row g + 8 ((i / 4) % 2), column 4t + i % 4 + 16 (i / 8)
 *   B  b_i (i < K / 4): row 4t + i % 4 + 16 (i / 4), column g
 *   C  c_i (i < 4, int32 each): row g + 8 (i / 2), column 2t + i % 2
 * (for K = 16, i / 8 and i / 4 of B are 0: the m16n8k16 layout is the first half of this.)
 * The integer sums wrap modulo 2^32, as the hardware's do. */
static uint32_t emu_mma_a[EMU_MAX_THREADS][4], emu_mma_b[EMU_MAX_THREADS][2];
static int32_t emu_mma_c[EMU_MAX_THREADS][4];
template <int K> static void emu_mma_s8(int32_t *d, const uint32_t *a, const uint32_t *b, const int32_t *c) {
    static_assert(K == 16 || K == 32, "m16n8k16 or m16n8k32");
    const int me = emu_cur, w = me / 32;
    for (int r = 0; r < K / 8; r++) emu_mma_a[me][r] = a[r];
    for (int r = 0; r < K / 16; r++) emu_mma_b[me][r] = b[r];
    for (int i = 0; i < 4; i++) emu_mma_c[me][i] = c[i];
    emu_warp_barrier(w);
    int8_t A[16][K], B[K][8];
    int32_t C[16][8];
    for (int l = 0; l < 32; l++) {
        const int src = w * 32 + l, g = l / 4, t = l % 4;
        for (int i = 0; i < K / 2; i++) A[g + 8 * ((i / 4) % 2)][4 * t + i % 4 + 16 * (i / 8)] = (int8_t)(emu_mma_a[src][i / 4] >> (8 * (i % 4)));
        for (int i = 0; i < K / 4; i++) B[4 * t + i % 4 + 16 * (i / 4)][g] = (int8_t)(emu_mma_b[src][i / 4] >> (8 * (i % 4)));
        for (int i = 0; i < 4; i++) C[g + 8 * (i / 2)][2 * t + i % 2] = emu_mma_c[src][i];
    }
    const int g = (me % 32) / 4, t = me % 4;
    for (int i = 0; i < 4; i++) {
        const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
        uint32_t s = (uint32_t)C[row][col];
        for (int k = 0; k < K; k++) s += (uint32_t)((int32_t)A[row][k] * (int32_t)B[k][col]);
        d[i] = (int32_t)s;
    }
    emu_warp_barrier(w);                 /* nobody deposits the next MMA's registers before all have read */
}

/* ---- attention: the F16 tensor-core MMA of the flash-attention tiles (the split merge's
 * __threadfence and __ldcg are with the cross-block hand-offs above) ----
 * mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, D = A B + C with A 16 x 16 and B 16 x 8
 * in F16, C and D 16 x 8 in f32. infer_cuda.cu issues it as inline PTX behind mma_f16 and
 * calls emu_mma_f16 under the emulator. The fragments' layout is the PTX ISA's ("Matrix
 * Fragments for mma.m16n8k16", floating-point types), kept as the int8 MMA's above: each lane
 * deposits its registers and gets back its four elements of D. With g = lane / 4, t = lane % 4,
 * a register holding two halves (the lower-numbered element in its low 16 bits):
 *   A  a_i (i < 4): row g + 8 (i % 2), columns 2t, 2t + 1, plus 8 when i >= 2
 *   B  b_i (i < 2): rows 2t, 2t + 1, plus 8 when i = 1; column g
 *   C  c_i (i < 4, f32): row g + 8 (i / 2), column 2t + i % 2
 * The products of halves are exact in f32; the emulation adds them to C in k order in f32
 * (the hardware's order and intermediate width are its own: sums may differ in the last bits). */
static uint32_t emu_mmaf_a[EMU_MAX_THREADS][4], emu_mmaf_b[EMU_MAX_THREADS][2];
static float emu_mmaf_c[EMU_MAX_THREADS][4];
static inline unsigned short __half_as_ushort(__half h) { return h.x; }
static void emu_mma_f16(float *d, const uint32_t *a, const uint32_t *b, const float *c) {
    const int me = emu_cur, w = me / 32;
    for (int r = 0; r < 4; r++) { emu_mmaf_a[me][r] = a[r]; emu_mmaf_c[me][r] = c[r]; }
    for (int r = 0; r < 2; r++) emu_mmaf_b[me][r] = b[r];
    emu_warp_barrier(w);
    float A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < 32; l++) {
        const int src = w * 32 + l, g = l / 4, t = l % 4;
        for (int i = 0; i < 4; i++)
            for (int h = 0; h < 2; h++) A[g + 8 * (i % 2)][2 * t + h + 8 * (i / 2)] = __half2float(__ushort_as_half((unsigned short)(emu_mmaf_a[src][i] >> (16 * h))));
        for (int i = 0; i < 2; i++)
            for (int h = 0; h < 2; h++) B[2 * t + h + 8 * i][g] = __half2float(__ushort_as_half((unsigned short)(emu_mmaf_b[src][i] >> (16 * h))));
        for (int i = 0; i < 4; i++) C[g + 8 * (i / 2)][2 * t + i % 2] = emu_mmaf_c[src][i];
    }
    const int g = (me % 32) / 4, t = me % 4;
    for (int i = 0; i < 4; i++) {
        const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
        float s = C[row][col];
        for (int k = 0; k < 16; k++) s += A[row][k] * B[k][col];
        d[i] = s;
    }
    emu_warp_barrier(w);                 /* nobody deposits the next MMA's registers before all have read */
}

static unsigned __ballot_sync(unsigned, int pred) {
    const int t = emu_cur, w = t / 32;
    emu_xchg[t] = pred != 0;
    emu_warp_barrier(w);
    unsigned b = 0;
    for (int l = 0; l < 32 && w * 32 + l < emu_n; l++)
        if (!emu_done[w * 32 + l] && emu_xchg[w * 32 + l]) b |= 1u << l;
    emu_warp_barrier(w);
    return b;
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }

/* ---- asynchronous copies (sm_80+) and the split-K fix-up's fences.
 * cp.async.{ca,cg}.shared.global [dst], [src], size, src_size copies `size` bytes (4, 8 or
 * 16) to shared memory: the first src_size from src, zeros after (src_size 0: all zeros).
 * The copy is asynchronous: cp.async.commit_group closes the thread's copies issued so far
 * into a group, and cp.async.wait_group N returns once all but the N most recent committed
 * groups of *this thread* are complete (PTX ISA, "Data Movement and Conversion
 * Instructions: cp.async"). Emulated to the letter where a kernel could get it wrong: the
 * source bytes are read at issue (device memory does not change under a running kernel
 * here), but they reach shared memory only at the wait that completes their group (or at
 * the thread's end), so a kernel that reads a stage before waiting for it, or waits for
 * the wrong group, reads stale bytes, as it may on hardware. A barrier completes nothing.
 * (__threadfence and __ldcg: with the cross-block hand-offs above.) ---- */
#define EMU_CP_MAX 64
struct emu_cp_op { void *dst; unsigned char b[16]; int n, group; };
static emu_cp_op emu_cp_q[EMU_MAX_THREADS][EMU_CP_MAX];
static int emu_cp_n[EMU_MAX_THREADS], emu_cp_committed[EMU_MAX_THREADS];
/* complete the pending copies of thread t whose group is below `upto` (oldest first) */
static void emu_cp_complete(int t, int upto) {
    int keep = 0;
    for (int i = 0; i < emu_cp_n[t]; i++) {
        emu_cp_op &o = emu_cp_q[t][i];
        if (o.group < upto) memcpy(o.dst, o.b, (size_t)o.n);
        else emu_cp_q[t][keep++] = o;
    }
    emu_cp_n[t] = keep;
}
static void emu_cp_async(void *dst, const void *src, int size, int src_size) {
    const int t = emu_cur;
    if (emu_cp_n[t] == EMU_CP_MAX) {         /* more in flight than the emulator keeps: the oldest lands early */
        memcpy(emu_cp_q[t][0].dst, emu_cp_q[t][0].b, (size_t)emu_cp_q[t][0].n);
        memmove(&emu_cp_q[t][0], &emu_cp_q[t][1], sizeof(emu_cp_op) * (EMU_CP_MAX - 1));
        emu_cp_n[t]--;
    }
    emu_cp_op &o = emu_cp_q[t][emu_cp_n[t]++];
    o.dst = dst;
    o.n = size;
    o.group = emu_cp_committed[t];
    memset(o.b, 0, sizeof o.b);
    if (src_size > 0) memcpy(o.b, src, (size_t)(src_size < size ? src_size : size));
}
static void emu_cp_commit(void) { emu_cp_committed[emu_cur]++; }
static void emu_cp_wait(int n) { emu_cp_complete(emu_cur, emu_cp_committed[emu_cur] - n); }
static void emu_cp_reset(int t) { emu_cp_n[t] = 0; emu_cp_committed[t] = 0; }
/* Dynamic shared memory past 48 KiB needs the kernel's consent first
 * (cudaFuncAttributeMaxDynamicSharedMemorySize), up to 227 KiB on sm_90; a launch asking
 * for more than the kernel was allowed fails with an invalid argument, on the hardware and
 * here. The allowances, per kernel, for the process's life. */
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
#define EMU_SHM_DEFAULT (48u << 10)
#define EMU_SHM_MAX (227u << 10)
static struct { const void *k; size_t bytes; } emu_shm_allow[128];
static int emu_n_shm_allow;
static int emu_shm_slot(const void *k) {         /* kernel k's allowance, or -1 */
    for (int i = 0; i < emu_n_shm_allow; i++)
        if (emu_shm_allow[i].k == k) return i;
    return -1;
}
static size_t emu_shm_allowed(const void *k) {
    const int i = emu_shm_slot(k);
    return i < 0 ? EMU_SHM_DEFAULT : emu_shm_allow[i].bytes;
}
template <class F> static cudaError_t cudaFuncSetAttribute(F f, cudaFuncAttribute, int v) {
    const void *k = (const void *)f;
    int i = emu_shm_slot(k);
    if (v < 0 || (size_t)v > EMU_SHM_MAX || (i < 0 && emu_n_shm_allow == 128)) return cudaErrorInvalidValue;
    if (i < 0) { i = emu_n_shm_allow++; emu_shm_allow[i].k = k; }
    emu_shm_allow[i].bytes = (size_t)v;
    return cudaSuccess;
}

static void emu_fiber_main(void) {
    emu_body(emu_body_arg);
    const int t = emu_cur, w = t / 32;
    emu_cp_complete(t, 1 << 30);          /* copies still in flight land when the thread ends */
    emu_done[t] = 1;
    emu_alive--;
    emu_warp_alive[w]--;
    /* a barrier the finished thread no longer joins may now be complete */
    if (emu_bar_count > 0 && emu_bar_count == emu_alive) { emu_bar_count = 0; emu_bar_gen++; }
    if (emu_wbar_count[w] > 0 && emu_wbar_count[w] == emu_warp_alive[w]) { emu_wbar_count[w] = 0; emu_wbar_gen[w]++; }
}

static void emu_run_block(void) {
    emu_n = (int)(blockDim.x * blockDim.y * blockDim.z);
    if (!emu_stacks) emu_stacks = (char *)aligned_alloc(64, (size_t)EMU_MAX_THREADS * EMU_STACK);
    emu_alive = emu_n;
    emu_bar_count = 0;
    for (int w = 0; w < (emu_n + 31) / 32; w++) {
        emu_warp_alive[w] = emu_n - 32 * w < 32 ? emu_n - 32 * w : 32;
        emu_wbar_count[w] = 0;
    }
    for (int t = 0; t < emu_n; t++) { emu_done[t] = 0; emu_cp_reset(t); emu_fiber_init(t); }
    while (emu_alive > 0)
        for (int t = 0; t < emu_n; t++) {
            if (emu_done[t]) continue;
            emu_cur = t;
            threadIdx.x = (unsigned)t % blockDim.x;
            threadIdx.y = (unsigned)t / blockDim.x % blockDim.y;
            threadIdx.z = (unsigned)t / (blockDim.x * blockDim.y);
            emu_resume(t);
        }
}

/* kernel<<<grid, block, shared, stream>>>(args) becomes emu_launch(grid, block, shared,
 * kernel)(args): every block in turn, each with all its threads (infer_cuda.cu's recorder
 * calls it where a GPU build launches) */
template <typename... P> struct emu_launcher {
    dim3 g, b;
    size_t shm;
    void (*k)(P...);
    template <typename... A> void operator()(A... a) {
        if (shm > emu_shm_allowed((const void *)k)) { emu_last_error = cudaErrorInvalidValue; return; }   /* (the kernel never runs) */
        auto bound = [&]() { k(((P)a)...); };
        typedef decltype(bound) B;
        emu_body = [](void *p) { (*(B *)p)(); };
        emu_body_arg = &bound;
        static char *dyn;
        static size_t dyn_size;
        if (shm > dyn_size) { free(dyn); dyn = (char *)malloc(shm); dyn_size = shm; }
        emu_dyn_shared = dyn;
        gridDim = g;
        blockDim = b;
        for (unsigned z = 0; z < g.z; z++)
            for (unsigned y = 0; y < g.y; y++)
                for (unsigned x = 0; x < g.x; x++) {
                    blockIdx.x = x; blockIdx.y = y; blockIdx.z = z;
                    emu_run_block();
                }
        emu_body_arg = NULL;             /* `bound` dies here */
    }
};
template <typename... P> emu_launcher<P...> emu_launch(dim3 g, dim3 b, size_t shm, void (*k)(P...)) {
    emu_launcher<P...> l;
    l.g = g; l.b = b; l.shm = shm; l.k = k;
    return l;
}

/* ---- the cuBLAS subset this project uses: one GEMM (cublasGemmEx) of 16-bit or f32
 * matrices with f32 accumulation, column-major as cuBLAS is: C (m x n, ldc) = alpha op(A)
 * op(B) + beta C, op(A) m x k (CUBLAS_OP_T: A stored k x m), op(B) k x n. The products of
 * the 16-bit values are exact in f32; the sum runs over k in order, in f32. A handle holds
 * nothing; its workspace and stream are accepted and unused. ---- */
typedef struct emu_cublas { int unused; } *cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_ALLOC_FAILED = 3, CUBLAS_STATUS_INVALID_VALUE = 7 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 } cudaDataType;
typedef enum { CUBLAS_COMPUTE_32F = 68 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;
static const char *cublasGetStatusString(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_EMULATED_ERROR"; }
static cublasStatus_t cublasCreate(cublasHandle_t *h) {
    *h = (cublasHandle_t)calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}
static cublasStatus_t cublasDestroy(cublasHandle_t h) { free(h); return CUBLAS_STATUS_SUCCESS; }
static cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t) { return CUBLAS_STATUS_SUCCESS; }
static cublasStatus_t cublasSetWorkspace(cublasHandle_t, void *, size_t) { return CUBLAS_STATUS_SUCCESS; }
static inline float emu_blas_at(const void *p, cudaDataType t, size_t i) {
    if (t == CUDA_R_16F) return __half2float(((const __half *)p)[i]);
    if (t == CUDA_R_16BF) return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    return ((const float *)p)[i];
}
static cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t opa, cublasOperation_t opb, int m, int n, int k, const void *alpha, const void *A,
                                   cudaDataType ta, int lda, const void *B, cudaDataType tb, int ldb, const void *beta, void *C, cudaDataType tc, int ldc,
                                   cublasComputeType_t ct, cublasGemmAlgo_t) {
    if (!h || tc != CUDA_R_32F || ct != CUBLAS_COMPUTE_32F || m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
    const int rows_a = opa == CUBLAS_OP_T ? k : m, rows_b = opb == CUBLAS_OP_T ? n : k;     /* the leading dimensions' least, as cuBLAS checks */
    if (lda < (rows_a > 1 ? rows_a : 1) || ldb < (rows_b > 1 ? rows_b : 1) || ldc < (m > 1 ? m : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    const float al = *(const float *)alpha, be = *(const float *)beta;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float s = 0.0f;
            for (int l = 0; l < k; l++) {
                const float a = emu_blas_at(A, ta, opa == CUBLAS_OP_T ? (size_t)i * lda + l : (size_t)l * lda + i);
                const float b = emu_blas_at(B, tb, opb == CUBLAS_OP_T ? (size_t)l * ldb + j : (size_t)j * ldb + l);
                s += a * b;
            }
            float *c = (float *)C + (size_t)j * ldc + i;
            *c = be == 0.0f ? al * s : al * s + be * *c;     /* beta 0: C is not read (it may hold NaNs) */
        }
    return CUBLAS_STATUS_SUCCESS;
}

#endif
