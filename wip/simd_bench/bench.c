/* Throwaway benchmark (not part of the build): GB/s of weight bytes for a 2048 x 8192
 * matvec per type, one thread: scalar dot vs every SIMD tier of this build.
 *   gcc -O2 -march=native -std=c11 -D_GNU_SOURCE -ffp-contract=off -I. wip/simd_bench/bench.c -lm -lpthread */
#define INFER_IMPLEMENTATION
#include "infer.h"
#include <stdio.h>
#include <stdlib.h>
#define CHECK(c) (void)0
#define CHECK_MSG(c, ...) (void)0
#include "wip/simd_tests.inc"

enum { ROWS = 2048, K = 8192 };

/* seconds for one matvec (or, hot, one row 2048 times) */
static double once(infer__dot_fn f, const uint8_t *w, size_t rb, const void *xq, float *out, int hot) {
    double t0 = infer_time_seconds();
    for (int r = 0; r < ROWS; r++) out[r] = f(K, w + (hot ? 0 : (size_t)r * rb), xq);
    return infer_time_seconds() - t0;
}

int main(int argc, char **argv) {
    static const infer_type types[] = { INFER_TYPE_Q8_0, INFER_TYPE_Q4_0, INFER_TYPE_F16, INFER_TYPE_F32, INFER_TYPE_BF16,
        INFER_TYPE_Q4_K, INFER_TYPE_Q6_K, INFER_TYPE_Q5_K, INFER_TYPE_Q4_1, INFER_TYPE_Q5_0, INFER_TYPE_Q5_1,
        INFER_TYPE_Q2_K, INFER_TYPE_Q3_K, INFER_TYPE_IQ4_NL, INFER_TYPE_IQ4_XS, INFER_TYPE_TQ2_0, INFER_TYPE_TQ1_0,
        INFER_TYPE_MXFP4, INFER_TYPE_NVFP4 };
    const int hot = argc > 1 && argv[1][0] == 'h';
    infer__rng rng; infer__rng_seed(&rng, 1);
    float *tmp = malloc((size_t)K * 4), *x = malloc((size_t)K * 4), *out = malloc(ROWS * 4);
    uint8_t *xq = malloc((size_t)K * 4);
    printf("%s, GB/s of weight bytes (%d x %d, 1 thread)\n%-8s %8s", hot ? "one row, cache-hot" : "matvec", ROWS, K, "type", "scalar");
    for (const infer__simd_tier *k = infer__simd_tiers; k->name; k++) printf(" %8s", k->name);
    printf("   speedup\n");
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const infer_type t = types[ti];
        const infer__type_traits *tt = infer__type(t);
        const size_t rb = infer_type_row_size(t, K);
        uint8_t *w = malloc(rb * ROWS);
        for (int r = 0; r < ROWS; r++) simd_make_weights(&rng, t, tt->blck == 1 ? 0 : 1, K, tmp, w + (size_t)r * rb);
        simd_make_acts(&rng, 0, K, x);
        float *xd = malloc((size_t)K * 4);
        const void *xin = simd_prepare_acts(tt->dot_type, x, K, xq, xd);
        /* implementations: scalar, then each tier; rounds alternate between them and the
         * fastest round counts, so a busy machine slows all of them alike */
        infer__dot_fn fns[8] = { tt->dot };
        int nf = 1;
        for (const infer__simd_tier *k = infer__simd_tiers; k->name; k++) fns[nf++] = k->lookup(t);
        double best[8];
        for (int f = 0; f < nf; f++) best[f] = 1e30;
        for (int round = 0; round < 9; round++)
            for (int f = 0; f < nf; f++) {
                if (!fns[f] || (f == 0 && round >= 3)) continue;       /* the scalar dots are slow */
                double dt = once(fns[f], w, rb, xin, out, hot);
                if (dt < best[f]) best[f] = dt;
            }
        double sc = (double)ROWS * rb / best[0] / 1e9, bestv = sc;
        printf("%-8s %8.2f", tt->name, sc);
        for (int f = 1; f < nf; f++) {
            if (!fns[f]) { printf(" %8s", "-"); continue; }
            double v = (double)ROWS * rb / best[f] / 1e9;
            if (v > bestv) bestv = v;
            printf(" %8.2f", v);
        }
        printf("   %6.1fx\n", bestv / sc);
        fflush(stdout);
        free(w); free(xd);
    }
    return 0;
}
