/* infer's benchmarks, part of the command line (main.c includes this file; it uses main.c's
 * options and helpers): --bench and --bench-batch time prompts and generation as the
 * reference engine's llama-bench does, --membw measures the memory read bandwidth they are
 * held against. Speed is measured here and with `make bench`, never inside the tests. */

/* the kB figure after `key` in one of the kernel's /proc/self files (0 where there is none) */
static double proc_kb(const char *file, const char *key) {
    FILE *f = fopen(file, "r");
    char line[256];
    double kb = 0;
    const size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f)) if (!strncmp(line, key, n)) kb = atof(line + n);
    if (f) fclose(f);
    return kb;
}

/* peak resident set size in MB, from the kernel's high-water mark */
static double peak_rss_mb(void) { return proc_kb("/proc/self/status", "VmHWM:") / 1024.0; }

/* Memory read bandwidth: the roofline a decode step (which streams every weight once) is
 * held against. Threads read disjoint parts of a 1 GiB buffer (larger than the caches: what
 * even a large L3 still holds of it is worth about 1%) with full-width vector loads; each
 * trial times 3 passes, and the best of 4 trials of each variant counts. Variants: the
 * buffer in 4 KiB pages, and in 2 MiB pages where the kernel
 * grants them (transparent huge pages: fewer TLB misses), each read these ways: plain loads
 * into four accumulators; the same with a software prefetch 2 KiB ahead into L2 (four
 * lines' prefetches, then their four loads); line by line, each line's prefetch just before
 * its load, one accumulator; and (AVX-512 VNNI builds) "paced": line by line again, each
 * line fed into one accumulator through a dependent chain that holds the loop to a steady
 * pace -- two dot-product instructions (about 10 cycles a line) or one and three
 * single-cycle ops (about 8) -- with the prefetch 3, 4.5 and 6.5 KiB ahead (the best of the
 * six counts; 6.5 KiB is the row kernels' distance, INFER__MV_AHEAD). How loads and
 * prefetches are spaced, how far ahead they ask, and how far the core runs ahead of the work
 * they feed matter to the memory system as much as their number, so the paced loop usually
 * reads fastest. The pace must be slow enough to hold the loop steady and fast enough not to
 * be the limit: 5 cycles a line is too fast to hold it, and on one thread the 10-cycle loop
 * is itself the limit, hence both paces. (Pacing by a multiply or shift-add per line read no
 * faster than line by line.) The figures are in data/NOTES.md. Prints the best and each
 * variant's figure (paced: the best distance's and pace's, and which they were). */
#include <sys/mman.h>
typedef uint64_t bw_vec __attribute__((vector_size(64)));   /* one cache line: one AVX-512 load */
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
#include <immintrin.h>
#define BW_VARIANTS 9      /* 3..8: paced, 3, 4.5 and 6.5 KiB ahead at 10 cycles a line, then at 8 */
static const int bw_paced_ahead[3] = { 48, 72, 104 };   /* lines */
static const int bw_paced_cycles[2] = { 10, 8 };
#else
#define BW_VARIANTS 3
#endif
typedef struct { const bw_vec *p; size_t n; int passes, prefetch; uint64_t sum; } bw_part;
__attribute__((optimize("O3"))) static void *bw_worker(void *arg) {
    bw_part *b = arg;
    bw_vec s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
    for (int pass = 0; pass < b->passes; pass++) {
        const bw_vec *p = b->p;
#if BW_VARIANTS == 9
        if (b->prefetch >= 3) {
            __m512i acc = _mm512_setzero_si512();
            const __m512i one = _mm512_set1_epi8(1);
            const size_t ahead = (size_t)bw_paced_ahead[(b->prefetch - 3) % 3];
            const int slow = bw_paced_cycles[(b->prefetch - 3) / 3] == 10;
            for (size_t i = 0; i < b->n; i++) {
                __builtin_prefetch(p + i + ahead, 0, 2);                           /* this line's, 3-6.5 KiB ahead */
                const __m512i v = _mm512_load_si512((const void *)(p + i));
                /* 5 cycles, then 5 more or 3 x 1: an add, an xor and an add, which the compiler
                   cannot regroup to shorten the chain (three adds it would: v + v + v off it) */
                acc = _mm512_dpbusd_epi32(acc, v, one);
                acc = slow ? _mm512_dpbusd_epi32(acc, v, one) : _mm512_add_epi32(_mm512_xor_si512(_mm512_add_epi32(acc, v), v), v);
            }
            s0[0] ^= (uint64_t)_mm512_reduce_add_epi32(acc);
        } else
#endif
        if (b->prefetch == 2)
            for (size_t i = 0; i < b->n; i++) {
                __builtin_prefetch(p + i + 32, 0, 2);                              /* this line's, 2 KiB ahead */
                s0 += p[i];
            }
        else if (b->prefetch)
            for (size_t i = 0; i + 4 <= b->n; i += 4) {
                for (int k = 0; k < 4; k++) __builtin_prefetch(p + i + 32 + k, 0, 2);   /* 2 KiB ahead, into L2 */
                s0 ^= p[i]; s1 ^= p[i + 1]; s2 ^= p[i + 2]; s3 ^= p[i + 3];
            }
        else
            for (size_t i = 0; i + 4 <= b->n; i += 4) { s0 ^= p[i]; s1 ^= p[i + 1]; s2 ^= p[i + 2]; s3 ^= p[i + 3]; }
    }
    const bw_vec s = s0 ^ s1 ^ s2 ^ s3;
    b->sum = s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4] ^ s[5] ^ s[6] ^ s[7];
    return NULL;
}
/* GB/s of one variant: best of 4 trials of `passes` passes */
static double bw_run(const bw_vec *buf, size_t n, int threads, int prefetch) {
    const int passes = 3;
    double best = 0;
    for (int trial = 0; trial < 4; trial++) {
        pthread_t th[256];
        bw_part part[256];
        const double t0 = infer_time_seconds();
        for (int t = 0; t < threads; t++) {
            part[t] = (bw_part){ buf + n / threads * t, n / threads, passes, prefetch, 0 };
            pthread_create(&th[t], NULL, bw_worker, &part[t]);
        }
        for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
        const double gbs = (double)(n / threads * threads) * sizeof(bw_vec) * passes / (infer_time_seconds() - t0) / 1e9;
        if (gbs > best) best = gbs;
    }
    return best;
}
/* kB of anonymous huge pages this process holds (smaps_rollup; 0 where there is none) */
static long anon_huge_kb(void) { return (long)proc_kb("/proc/self/smaps_rollup", "AnonHugePages:"); }
/* the paced loop's best figure, distance and pace (VNNI builds; nothing otherwise) */
static void bw_print_paced(const char *pages, const double *gbs, int at) {
#if BW_VARIANTS == 9
    printf(" pages_%s_paced=%.2f pages_%s_paced_kib=%.1f pages_%s_paced_cycles=%d", pages, gbs[at], pages,
           bw_paced_ahead[(at - 3) % 3] * 64 / 1024.0, pages, bw_paced_cycles[(at - 3) / 3]);
#else
    (void)pages; (void)gbs; (void)at;
#endif
}
static void measure_bw(int threads) {
    if (threads > 256) threads = 256;
    const size_t bytes = (size_t)1 << 30, align = (size_t)2 << 20, n = bytes / sizeof(bw_vec);
    progress_start();
    double gbs[2][9] = { { 0 }, { 0 } };   /* [huge pages][none, prefetch, line by line, paced 3 / 4.5 / 6.5 KiB at 10 and at 8 cycles] */
    int paced_at[2] = { 3, 3 };            /* the paced variant that read fastest */
    int huge_ok = 0;
    for (int huge = 0; huge < 2; huge++) {
        uint8_t *raw = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) die("%s", "--membw: cannot map 1 GiB");
        bw_vec *buf = (bw_vec *)(raw + (-(uintptr_t)raw & (align - 1)));
        const long before = anon_huge_kb();
#ifdef MADV_HUGEPAGE
        madvise(buf, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
        memset(buf, 1, bytes);
        if (huge) huge_ok = anon_huge_kb() - before >= (long)(bytes / 2048);   /* at least half of it */
        if (!huge || huge_ok)
            for (int pf = 0; pf < BW_VARIANTS; pf++) {
                progress_show("--membw: %s pages, loop %d of %d", huge ? "2 MiB" : "4 KiB", pf + 1, BW_VARIANTS);
                gbs[huge][pf] = bw_run(buf, n, threads, pf);
            }
        munmap(raw, bytes + align);
    }
    progress_clear();
    double best = 0;
    for (int h = 0; h < 2; h++) for (int p = 0; p < BW_VARIANTS; p++) if (gbs[h][p] > best) best = gbs[h][p];
    printf("membw_gbs=%.2f threads=%d pages_4k=%.2f pages_4k_prefetch=%.2f pages_4k_linewise=%.2f", best, threads, gbs[0][0], gbs[0][1], gbs[0][2]);
#if BW_VARIANTS == 9
    for (int h = 0; h < 2; h++)          /* the paced loop's best distance and pace */
        for (int p = 4; p < BW_VARIANTS; p++) if (gbs[h][p] > gbs[h][paced_at[h]]) paced_at[h] = p;
#endif
    bw_print_paced("4k", gbs[0], paced_at[0]);
    if (huge_ok) {
        printf(" pages_2m=%.2f pages_2m_prefetch=%.2f pages_2m_linewise=%.2f", gbs[1][0], gbs[1][1], gbs[1][2]);
        bw_print_paced("2m", gbs[1], paced_at[1]);
        printf("\n");
    } else printf(" pages_2m=none\n");
}

/* The tokens a benchmark generates are picked greedily, as generation with --temp 0 picks
 * them, by the backend that holds the logits (infer_batch_item.greedy: a GPU sends back the
 * id, not the n_vocab logits). bench_greedy: tokens[0..n) into sequence seq, *next = the
 * greedy pick after them. */
static void bench_greedy(infer_session *s, int32_t seq, const int32_t *tokens, int n, int32_t *next) {
    infer_error err;
    const infer_batch_item it = { seq, tokens, n, NULL, 0, next };
    if (infer_eval_batch(s, &it, 1, &err) != INFER_OK) die("%s", err.msg);
}

/* --bench: the reference's two tests, each from a fresh context: a prompt of bench_pp tokens in
 * one call (pp), and bench_tg tokens generated one at a time (tg: the first token a fixed
 * one, then each the greedy pick after the one before). With --bench-depth N both start after
 * an untimed prompt of N tokens, as the reference's -d N. Best of --bench-reps runs. */
static int run_bench(const options *o, infer_model *m, infer_session *s) {
    const infer_config *c = infer_model_config(m);
    const int pp = o->bench_pp, tg = o->bench_tg, depth = o->bench_depth;
    const int need = depth + (pp > tg ? pp : tg), n_ctx = infer_session_n_ctx(s);
    if (need > n_ctx) {
        char msg[64];
        snprintf(msg, sizeof msg, "%d tokens; it is %d", need, n_ctx);
        die("--bench needs a context of %s (--bench-depth + the larger of --bench-pp and --bench-tg; use -c)", msg);
    }
    const int n_ids = depth + pp;
    int32_t *ids = xmalloc(sizeof(int32_t) * (size_t)n_ids, "the bench prompt");   /* the depth prompt, then the pp one */
    for (int i = 0; i < n_ids; i++) ids[i] = (int32_t)((i * 7919 + 13) % c->n_vocab);
    float *logits = xmalloc(sizeof(float) * (size_t)c->n_vocab, "the logits");
    double best_pp = 0, best_tg = 0;
    int launches = 0, graph = 0;
    infer_error err;
    progress_start();
    for (int rep = 0; rep < o->bench_reps; rep++) {
        infer_session_reset(s);
        progress_show("bench rep %d of %d: pp%d", rep + 1, o->bench_reps, pp);
        if (depth && infer_eval(s, ids, depth, logits, 0, &err) != INFER_OK) die("%s", err.msg);
        double t0 = infer_time_seconds();
        if (infer_eval(s, ids + depth, pp, logits, 0, &err) != INFER_OK) die("%s", err.msg);
        const double t_pp = infer_time_seconds() - t0;
        infer_session_reset(s);
        int32_t next = ids[0];
        if (depth) bench_greedy(s, 0, ids, depth, &next);
        t0 = infer_time_seconds();
        for (int g = 0; g < tg; g++) {
            const int32_t t = next;
            bench_greedy(s, 0, &t, 1, &next);
            progress_show("bench rep %d of %d: tg%d, token %d", rep + 1, o->bench_reps, tg, g + 1);
        }
        const double t_tg = infer_time_seconds() - t0;
        if (tg) infer_session_step_info(s, &launches, &graph);     /* of the last token's step */
        if (pp / t_pp > best_pp) best_pp = pp / t_pp;
        if (tg && tg / t_tg > best_tg) best_tg = tg / t_tg;
        progress_clear();
        fprintf(stderr, "rep %d: pp %.2f tok/s, tg %.2f tok/s\n", rep, pp / t_pp, tg ? tg / t_tg : 0.0);
    }
    /* weight bytes a decoded token reads: every tensor of the n_layer blocks run, the routed
     * experts' share n_used / n_expert of theirs, the output matrix, and token_embd only when
     * it is that matrix (tied, or BitNet's logits from the embedding) -- not the MTP blocks */
    uint64_t wbytes = 0;
    double dbytes = 0;
    const infer_gguf *g = infer_model_gguf(m);
    const int tied = !infer_gguf_tensor(g, "output.weight") || !strcmp(c->arch, "bitnet");
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const infer_tensor *t = &g->tensors[i];
        wbytes += t->nbytes;
        int blk = -1;
        if (sscanf(t->name, "blk.%d.", &blk) == 1 && blk >= c->n_layer) continue;
        if ((!strcmp(t->name, "token_embd.weight") && !tied) || t->type == INFER_TYPE_I32) continue;   /* a table reads one row */
        dbytes += strstr(t->name, "_exps.") && c->n_expert > 0 ? (double)t->nbytes * c->n_expert_used / c->n_expert : (double)t->nbytes;
    }
    printf("bench pp=%d tg=%d pp_tok_s=%.2f tg_tok_s=%.2f rss_mb=%.0f", pp, tg, best_pp, best_tg, peak_rss_mb());
    if (depth) printf(" depth=%d", depth);
    printf("\n");
    printf("weights_mb=%.0f decode_mb=%.1f threads=%d launches=%d graph=%d\n", wbytes / 1048576.0, dbytes / 1e6, o->n_threads, launches, graph);
    free(ids); free(logits);
    return 0;
}

/* --bench --bench-batch: for each B, B sequences at once: their prompts (bench_pp tokens
 * each) in one call, then bench_tg steps of one token for every sequence; tok/s summed over
 * the B sequences, best of --bench-reps runs */
static int run_bench_batch(const options *o, infer_model *m, const infer_session_params *base) {
    const infer_config *c = infer_model_config(m);
    const int pp = o->bench_pp, tg = o->bench_tg, V = c->n_vocab;
    infer_error err;
    for (int bi = 0; bi < o->n_bench_batch; bi++) {
        const int B = o->bench_batch[bi];
        infer_session_params sp = *base;
        sp.n_seq_max = B;
        sp.n_ctx = B * (pp + tg + 64);      /* + 64 a sequence: the cache hands out whole blocks, each sequence's last one partly used */
        sp.prefix_cache = 0;                 /* the prompts differ anyway; keep the measure plain */
        infer_session *s;
        if (infer_session_create(&s, m, &sp, &err) != INFER_OK) die("%s", err.msg);
        int32_t *ids = xmalloc(sizeof(int32_t) * (size_t)B * pp, "the prompts"), *seq = xmalloc(sizeof(int32_t) * (size_t)B, "the sequences");
        int32_t *next = xmalloc(sizeof(int32_t) * (size_t)B, "the sequences"), *cur = xmalloc(sizeof(int32_t) * (size_t)B, "the sequences");
        infer_batch_item *items = xmalloc(sizeof(infer_batch_item) * (size_t)B, "the batch");
        for (int i = 0; i < B * pp; i++) ids[i] = (int32_t)(((int64_t)i * 7919 + 13) % V);
        double best_pp = 0, best_tg = 0;
        int launches = 0, graph = 0;
        progress_start();
        for (int rep = 0; rep < o->bench_reps; rep++) {
            progress_show("bench batch %d, rep %d of %d: pp%d", B, rep + 1, o->bench_reps, pp);
            infer_session_reset(s);
            for (int b = 0; b < B; b++) {
                if (rep == 0 && b > 0 && infer_seq_add(s, &seq[b], &err) != INFER_OK) die("%s", err.msg);
                if (rep == 0 && b == 0) seq[0] = 0;
                items[b] = (infer_batch_item){ seq[b], ids + (size_t)b * pp, pp, NULL, 0, &next[b] };
            }
            double t0 = infer_time_seconds();
            if (infer_eval_batch(s, items, B, &err) != INFER_OK) die("%s", err.msg);
            const double t_pp = infer_time_seconds() - t0;
            t0 = infer_time_seconds();
            for (int g = 0; g < tg; g++) {
                for (int b = 0; b < B; b++) {
                    cur[b] = next[b];
                    items[b] = (infer_batch_item){ seq[b], &cur[b], 1, NULL, 0, &next[b] };
                }
                if (infer_eval_batch(s, items, B, &err) != INFER_OK) die("%s", err.msg);
                progress_show("bench batch %d, rep %d of %d: tg%d, step %d", B, rep + 1, o->bench_reps, tg, g + 1);
            }
            const double t_tg = infer_time_seconds() - t0;
            if (tg) infer_session_step_info(s, &launches, &graph);     /* of the last step */
            if (B * pp / t_pp > best_pp) best_pp = B * pp / t_pp;
            if (tg && B * tg / t_tg > best_tg) best_tg = B * tg / t_tg;
            progress_clear();
            fprintf(stderr, "batch %d rep %d: pp %.2f tok/s, tg %.2f tok/s\n", B, rep, B * pp / t_pp, tg ? B * tg / t_tg : 0.0);
        }
        printf("bench pp=%d tg=%d pp_tok_s=%.2f tg_tok_s=%.2f rss_mb=%.0f batch=%d launches=%d graph=%d\n", pp, tg, best_pp, best_tg, peak_rss_mb(), B,
               launches, graph);
        fflush(stdout);
        free(ids); free(seq); free(next); free(cur); free(items);
        infer_session_free(s);
    }
    return 0;
}
