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

#if defined(INFER_MALLOC) && defined(INFER_REALLOC) && defined(INFER_FREE)
#elif !defined(INFER_MALLOC) && !defined(INFER_REALLOC) && !defined(INFER_FREE)
#define INFER_MALLOC(n) malloc(n)
#define INFER_REALLOC(p, n) realloc(p, n)
#define INFER_FREE(p) free(p)
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
__attribute__((format(printf, 3, 4)))
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

/* ---- a small thread pool: run fn(arg, i, n) for i in 0..n-1 on the pool's threads ---- */
typedef void (*infer__task_fn)(void *arg, int ith, int nth);
typedef struct infer__pool {
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    infer__task_fn fn; void *arg;
    uint64_t generation;   /* bumped for each job */
    int pending, quit;
} infer__pool;

typedef struct { infer__pool *p; int ith; } infer__worker_arg;

static void *infer__worker(void *varg) {
    infer__worker_arg *wa = (infer__worker_arg *)varg;
    infer__pool *p = wa->p;
    int ith = wa->ith;
    INFER_FREE(wa);
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->quit && p->generation == seen) pthread_cond_wait(&p->cv_work, &p->mu);
        if (p->quit) { pthread_mutex_unlock(&p->mu); return NULL; }
        seen = p->generation;
        infer__task_fn fn = p->fn; void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(arg, ith, p->n_threads);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->cv_done);
        pthread_mutex_unlock(&p->mu);
    }
}

static infer__pool *infer__pool_create(int n_threads) {
    infer__pool *p = (infer__pool *)infer__calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n_threads = n_threads < 1 ? 1 : n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_work, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    p->threads = (pthread_t *)infer__calloc((size_t)p->n_threads, sizeof(pthread_t));
    for (int i = 1; i < p->n_threads; i++) {       /* thread 0 is the caller */
        infer__worker_arg *wa = (infer__worker_arg *)INFER_MALLOC(sizeof *wa);
        wa->p = p; wa->ith = i;
        pthread_create(&p->threads[i], NULL, infer__worker, wa);
    }
    return p;
}

static void infer__pool_run(infer__pool *p, infer__task_fn fn, void *arg) {
    if (!p || p->n_threads == 1) { fn(arg, 0, 1); return; }
    pthread_mutex_lock(&p->mu);
    p->fn = fn; p->arg = arg; p->pending = p->n_threads - 1; p->generation++;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, p->n_threads);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->cv_done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

static void infer__pool_free(infer__pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_work);
    pthread_cond_destroy(&p->cv_done);
    INFER_FREE(p->threads);
    INFER_FREE(p);
}

static int infer__n_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

#include "wip/quant.h"
#include "wip/gguf.h"
#include "wip/gguf_write.h"
#include "wip/cpu.h"
#include "wip/json.h"
#include "wip/safetensors.h"
#include "wip/tokenizer.h"
#include "wip/model.h"
#include "wip/tokglue.h"

/* ------------------------------------------------------------------------------------------
 * >>tables -- big lookup tables, kept out of the way of the reading.
 * ---------------------------------------------------------------------------------------- */
#include "wip/quant_c_tables.h"
#include "wip/unicode_tables.h"
