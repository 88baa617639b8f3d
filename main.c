/* main.c -- the infer command line. The only place that prints usage and exits. */
#define INFER_IMPLEMENTATION
#include "infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

static const char *usage_text =
    "usage: infer -m MODEL [options]\n"
    "\n"
    "input (one of):\n"
    "  -p, --prompt TEXT       prompt text\n"
    "  -f, --file FILE         read the prompt from FILE\n"
    "  --prompt-ids 1,2,3      prompt as token ids (no tokenizer, no BOS added)\n"
    "\n"
    "generation:\n"
    "  -n, --n-predict N       tokens to generate (default 128; 0 = only evaluate the prompt)\n"
    "  --temp T                temperature (default 0.8; 0 = greedy)\n"
    "  --top-k K               (default 40; 0 = off)\n"
    "  --top-p P               (default 0.95; 1 = off)\n"
    "  --min-p P               (default 0.05; 0 = off)\n"
    "  --repeat-penalty R      (default 1.0 = off)\n"
    "  --repeat-last-n N       tokens the penalty looks back over (default 64)\n"
    "  --seed S                RNG seed (default: from the clock)\n"
    "  --no-bos                do not add the BOS token\n"
    "  --no-special            treat special-token text in the prompt as plain text\n"
    "\n"
    "runtime:\n"
    "  -c, --ctx-size N        context length (default: min(training context, 4096))\n"
    "  -t, --threads N         threads (default: all cores)\n"
    "  --kv-type f32|f16       KV cache element type (default f16)\n"
    "  --ubatch N              process the prompt in chunks of N tokens (default 512)\n"
    "  --precise               exact maths: f32 activations and KV cache, no int8 dot products\n"
    "  --gpu                   run on the GPU (a build made with `make cuda`: ./infer-cuda)\n"
    "\n"
    "modes:\n"
    "  --logits-out FILE       write float32 logits, one n_vocab row per evaluated token\n"
    "  --tokenize              print the prompt's token ids and exit (works on vocab-only files)\n"
    "  --ppl FILE              perplexity of FILE's text\n"
    "  --info                  print metadata and the tensor table\n"
    "  --bench                 speed: a --bench-pp token prompt (default 128), then --bench-tg\n"
    "                          generated tokens (default 64), best of --bench-reps runs (3);\n"
    "                          prints 'bench pp=.. tg=.. pp_tok_s=.. tg_tok_s=.. rss_mb=..'\n"
    "  --membw                 measure memory read bandwidth (GB/s) with -t threads and exit\n"
    "  --diff                  check the GPU against the CPU: every kernel on random inputs, then\n"
    "                          (with -m) the model layer by layer; exit 1 beyond tolerance\n"
    "  -h, --help              this text\n";

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "infer: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

/* every allocation is checked: an impossible size (a huge -c, a huge file) is a message */
static void *xmalloc(size_t n, const char *what) {
    void *p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "infer: out of memory for %s (%zu bytes)\n", what, n); exit(1); }
    return p;
}
static void *xrealloc(void *p, size_t n, const char *what) {
    void *q = realloc(p, n ? n : 1);
    if (!q) { free(p); fprintf(stderr, "infer: out of memory for %s (%zu bytes)\n", what, n); exit(1); }
    return q;
}

typedef struct {
    const char *model, *prompt, *file, *prompt_ids, *logits_out, *ppl;
    int n_predict, n_ctx, n_threads, n_ubatch, precise, tokenize, info, no_bos, no_special, seed_set;
    int bench, bench_pp, bench_tg, bench_reps, membw, gpu, diff;
    infer_type kv_type;
    infer_sampler_params sp;
} options;

static long parse_int(const char *opt, const char *v, long lo, long hi) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "infer: bad value '%s' for %s (expected an integer in [%ld, %ld])\n", v, opt, lo, hi);
        exit(1);
    }
    return x;
}
static float parse_float(const char *opt, const char *v, double lo, double hi) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "infer: bad value '%s' for %s (expected a number in [%g, %g])\n", v, opt, lo, hi);
        exit(1);
    }
    return (float)x;
}

static void parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = 128;
    o->kv_type = INFER_TYPE_F16;
    o->sp = infer_sampler_default_params();
    o->bench_pp = 128;
    o->bench_tg = 64;
    o->bench_reps = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die("option %s needs a value", a), ""))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(usage_text, stdout); exit(0); }
        else if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = NEXT();
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) o->prompt = NEXT();
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) o->file = NEXT();
        else if (!strcmp(a, "--prompt-ids")) o->prompt_ids = NEXT();
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) o->n_predict = (int)parse_int(a, NEXT(), 0, 1 << 30);
        else if (!strcmp(a, "--temp")) o->sp.temp = parse_float(a, NEXT(), 0, 1e6);
        else if (!strcmp(a, "--top-k")) o->sp.top_k = (int)parse_int(a, NEXT(), 0, 1 << 30);
        else if (!strcmp(a, "--top-p")) o->sp.top_p = parse_float(a, NEXT(), 0, 1);
        else if (!strcmp(a, "--min-p")) o->sp.min_p = parse_float(a, NEXT(), 0, 1);
        else if (!strcmp(a, "--repeat-penalty")) o->sp.repeat_penalty = parse_float(a, NEXT(), 1e-6, 1e6);
        else if (!strcmp(a, "--repeat-last-n")) o->sp.repeat_last_n = (int)parse_int(a, NEXT(), 0, 1 << 20);
        else if (!strcmp(a, "--seed")) { o->sp.seed = (uint64_t)parse_int(a, NEXT(), 0, 0x7fffffffffffffffL); o->seed_set = 1; }
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) o->n_ctx = (int)parse_int(a, NEXT(), 1, 1 << 24);
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) o->n_threads = (int)parse_int(a, NEXT(), 1, 1024);
        else if (!strcmp(a, "--ubatch")) o->n_ubatch = (int)parse_int(a, NEXT(), 1, 1 << 16);
        else if (!strcmp(a, "--kv-type")) {
            const char *v = NEXT();
            if (!strcmp(v, "f32")) o->kv_type = INFER_TYPE_F32;
            else if (!strcmp(v, "f16")) o->kv_type = INFER_TYPE_F16;
            else die("bad value '%s' for --kv-type (expected f32 or f16)", v);
        }
        else if (!strcmp(a, "--precise")) o->precise = 1;
        else if (!strcmp(a, "--logits-out")) o->logits_out = NEXT();
        else if (!strcmp(a, "--tokenize")) o->tokenize = 1;
        else if (!strcmp(a, "--ppl")) o->ppl = NEXT();
        else if (!strcmp(a, "--info")) o->info = 1;
        else if (!strcmp(a, "--bench")) o->bench = 1;
        else if (!strcmp(a, "--bench-pp")) o->bench_pp = (int)parse_int(a, NEXT(), 1, 1 << 20);
        else if (!strcmp(a, "--bench-tg")) o->bench_tg = (int)parse_int(a, NEXT(), 0, 1 << 20);
        else if (!strcmp(a, "--bench-reps")) o->bench_reps = (int)parse_int(a, NEXT(), 1, 1000);
        else if (!strcmp(a, "--membw")) o->membw = 1;
        else if (!strcmp(a, "--gpu")) o->gpu = 1;
        else if (!strcmp(a, "--diff")) o->diff = 1;
        else if (!strcmp(a, "--no-bos")) o->no_bos = 1;
        else if (!strcmp(a, "--no-special")) o->no_special = 1;
        else die("unknown option '%s' (see --help)", a);
#undef NEXT
    }
    if (!o->model && !o->membw && !o->diff) die("%s", "no model given (use -m MODEL; see --help)");
    int inputs = !!o->prompt + !!o->file + !!o->prompt_ids;
    if (inputs > 1) die("%s", "give only one of -p, -f and --prompt-ids");
    if (!o->seed_set) o->sp.seed = (uint64_t)time(NULL);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "infer: cannot open '%s': %s\n", path, strerror(errno)); exit(1); }
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap + 1, path);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) { cap *= 2; buf = xrealloc(buf, cap + 1, path); }
    }
    fclose(f);
    if (n > (size_t)INT32_MAX - 16) die("'%s' is too large (2 GB at most)", path);   /* token counts are ints */
    buf[n] = 0;
    *len = n;
    return buf;
}

/* token ids for the prompt: from --prompt-ids, or by tokenizing -p / -f text */
static int32_t *prompt_tokens(const options *o, const infer_model *m, const char *text, size_t len, int *n_out) {
    if (o->prompt_ids) {
        int cap = 16, n = 0;
        int32_t *ids = xmalloc(sizeof(int32_t) * cap, "--prompt-ids");
        const char *p = o->prompt_ids;
        while (*p) {
            char *end;
            errno = 0;
            long v = strtol(p, &end, 10);
            if (end == p || errno || v < 0 || v > INT32_MAX) die("bad token id list '%s' for --prompt-ids", o->prompt_ids);
            if (n == cap) { cap *= 2; ids = xrealloc(ids, sizeof(int32_t) * (size_t)cap, "--prompt-ids"); }
            ids[n++] = (int32_t)v;
            p = end;
            while (*p == ',' || *p == ' ') p++;
        }
        *n_out = n;
        return ids;
    }
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    if (!tok) die("%s", "the model has no vocabulary; give the prompt with --prompt-ids");
    if (len > (size_t)INT32_MAX - 16) die("%s", "the prompt is too long");
    int cap = (int)len + 16;
    int32_t *ids = xmalloc(sizeof(int32_t) * (size_t)cap, "the prompt's tokens");
    int n = infer_tokenize(tok, text, len, !o->no_bos, !o->no_special, ids, cap);
    if (n < 0) die("%s", "tokenization failed");
    if (n > cap) { ids = xrealloc(ids, sizeof(int32_t) * (size_t)n, "the prompt's tokens"); n = infer_tokenize(tok, text, len, !o->no_bos, !o->no_special, ids, n); }
    if (o->no_bos && n > 0) { /* add_special also adds EOS when the model asks; --no-bos drops only BOS */ }
    *n_out = n;
    return ids;
}

static void print_info(const infer_model *m) {
    const infer_gguf *g = infer_model_gguf(m);
    printf("gguf version %u, %lld metadata keys, %lld tensors, alignment %llu\n", g->version, (long long)g->n_kv, (long long)g->n_tensors, (unsigned long long)g->alignment);
    for (int64_t i = 0; i < g->n_kv; i++) {
        const infer_gguf_kv *kv = &g->kv[i];
        printf("  %-48.*s ", (int)kv->key.len, kv->key.ptr);
        switch (kv->type) {
        case INFER_GGUF_STRING: printf("%.*s\n", (int)(kv->v.s.len > 120 ? 120 : kv->v.s.len), kv->v.s.ptr); break;
        case INFER_GGUF_ARRAY: printf("[array of %llu]\n", (unsigned long long)kv->arr_n); break;
        case INFER_GGUF_F32: case INFER_GGUF_F64: printf("%g\n", kv->v.f); break;
        case INFER_GGUF_BOOL: printf("%s\n", kv->v.u ? "true" : "false"); break;
        case INFER_GGUF_I8: case INFER_GGUF_I16: case INFER_GGUF_I32: case INFER_GGUF_I64: printf("%lld\n", (long long)kv->v.i); break;
        default: printf("%llu\n", (unsigned long long)kv->v.u); break;
        }
    }
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const infer_tensor *t = &g->tensors[i];
        printf("  tensor %-40s %-8s [", t->name, infer_type_name(t->type));
        for (int d = 0; d < t->n_dims; d++) printf("%s%lld", d ? ", " : "", (long long)t->ne[d]);
        printf("] %zu bytes\n", t->nbytes);
    }
}

static void write_rows(FILE *f, const float *rows, size_t n, const char *path) {
    if (fwrite(rows, sizeof(float), n, f) != n) die("cannot write '%s'", path);
}

static int run_ppl(const options *o, infer_model *m, infer_session *s) {
    size_t len;
    char *text = read_file(o->ppl, &len);
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    if (!tok) die("%s", "--ppl needs a model with a vocabulary");
    int32_t *ids = xmalloc(sizeof(int32_t) * (len + 16), "the text's tokens");
    int n = infer_tokenize(tok, text, len, !o->no_bos, 0, ids, (int)len + 16);
    if (n < 2) die("'%s' has fewer than two tokens", o->ppl);
    const int V = infer_model_config(m)->n_vocab, ctx = infer_session_n_ctx(s);
    /* a window is evaluated a ubatch at a time (the chunks infer_eval would cut it into
     * anyway, so the logits are the same): logits for [ubatch, V], not [ctx, V] */
    const int chunk = o->n_ubatch ? o->n_ubatch : 512;
    float *logits = xmalloc(sizeof(float) * (size_t)V * (size_t)chunk, "the logits");
    double nll = 0;
    long n_pred = 0;
    infer_error err;
    /* windows of the context size; each window predicts its tokens 1..len-1 */
    for (int w0 = 0; w0 < n - 1; w0 += ctx) {
        int wl = n - w0 < ctx ? n - w0 : ctx;
        if (wl < 2) break;
        infer_session_reset(s);
        for (int c0 = 0; c0 < wl; c0 += chunk) {
            const int cl = wl - c0 < chunk ? wl - c0 : chunk;
            if (infer_eval(s, ids + w0 + c0, cl, logits, 1, &err) != INFER_OK) die("%s", err.msg);
            for (int i = c0; i < c0 + cl && i + 1 < wl; i++) {
                const float *l = logits + (size_t)(i - c0) * V;
                double mx = l[0], sum = 0;
                for (int v = 1; v < V; v++) if (l[v] > mx) mx = l[v];
                for (int v = 0; v < V; v++) sum += exp(l[v] - mx);
                nll += -(l[ids[w0 + i + 1]] - mx - log(sum));
                n_pred++;
            }
        }
        fprintf(stderr, "window at token %d: running perplexity %.4f\n", w0, exp(nll / n_pred));
    }
    printf("tokens: %d, predicted: %ld, nll: %.6f\n", n, n_pred, nll);
    printf("perplexity: %.6f\n", exp(nll / n_pred));
    free(logits); free(ids); free(text);
    return 0;
}


/* peak resident set size in MB, from the kernel's high-water mark */
static double peak_rss_mb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    while (f && fgets(line, sizeof line, f)) if (!strncmp(line, "VmHWM:", 6)) kb = atof(line + 6);
    if (f) fclose(f);
    return kb / 1024.0;
}

/* memory read bandwidth: threads sum disjoint parts of a buffer much larger than the caches */
typedef struct { const uint64_t *p; size_t n; uint64_t sum; } bw_part;
__attribute__((optimize("O3"))) static void *bw_worker(void *arg) {
    bw_part *b = arg;
    uint64_t s[8] = { 0 };
    for (size_t i = 0; i + 8 <= b->n; i += 8)
        for (int k = 0; k < 8; k++) s[k] ^= b->p[i + k];      /* vectorizes to full-width loads */
    b->sum = s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4] ^ s[5] ^ s[6] ^ s[7];
    return NULL;
}
static double measure_bw(int threads) {
    const size_t bytes = (size_t)1 << 30, n = bytes / 8;
    uint64_t *buf = malloc(bytes);
    pthread_t *th = malloc(sizeof *th * (size_t)threads);
    bw_part *part = malloc(sizeof *part * (size_t)threads);
    double best = 0;
    for (size_t i = 0; buf && i < n; i++) buf[i] = i;
    for (int rep = 0; buf && th && part && rep < 5; rep++) {
        double t0 = infer_time_seconds();
        int started = 0;
        for (int t = 0; t < threads; t++) {
            part[t].p = buf + n / threads * t;
            part[t].n = n / threads;
            if (pthread_create(&th[t], NULL, bw_worker, &part[t]) != 0) bw_worker(&part[t]);   /* no thread: read it here */
            else th[started++] = th[t];
        }
        for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
        double dt = infer_time_seconds() - t0, gbs = bytes / dt / 1e9;
        if (gbs > best) best = gbs;
    }
    free(buf); free(th); free(part);
    return best;
}

static int run_bench(const options *o, infer_model *m, infer_session *s) {
    const infer_config *c = infer_model_config(m);
    const int pp = o->bench_pp, tg = o->bench_tg;
    if (pp + tg > infer_session_n_ctx(s)) die("--bench-pp + --bench-tg exceed the context size (use -c)", "");
    int32_t *ids = xmalloc(sizeof(int32_t) * (size_t)pp, "the bench prompt");
    for (int i = 0; i < pp; i++) ids[i] = (int32_t)((i * 7919 + 13) % c->n_vocab);
    float *logits = xmalloc(sizeof(float) * (size_t)c->n_vocab, "the logits");
    double best_pp = 0, best_tg = 0;
    infer_error err;
    for (int rep = 0; rep < o->bench_reps; rep++) {
        infer_session_reset(s);
        double t0 = infer_time_seconds();
        if (infer_eval(s, ids, pp, logits, 0, &err) != INFER_OK) die("%s", err.msg);
        double t_pp = infer_time_seconds() - t0;
        t0 = infer_time_seconds();
        for (int g = 0; g < tg; g++) {
            int32_t t = 0;
            for (int v = 1; v < c->n_vocab; v++) if (logits[v] > logits[t]) t = v;
            if (infer_eval(s, &t, 1, logits, 0, &err) != INFER_OK) die("%s", err.msg);
        }
        double t_tg = infer_time_seconds() - t0;
        if (pp / t_pp > best_pp) best_pp = pp / t_pp;
        if (tg && tg / t_tg > best_tg) best_tg = tg / t_tg;
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
        if (!strcmp(t->name, "token_embd.weight") && !tied) continue;
        dbytes += strstr(t->name, "_exps.") && c->n_expert > 0 ? (double)t->nbytes * c->n_expert_used / c->n_expert : (double)t->nbytes;
    }
    printf("bench pp=%d tg=%d pp_tok_s=%.2f tg_tok_s=%.2f rss_mb=%.0f\n", pp, tg, best_pp, best_tg, peak_rss_mb());
    printf("weights_mb=%.0f decode_mb=%.1f threads=%d\n", wbytes / 1048576.0, dbytes / 1e6, o->n_threads);
    free(ids); free(logits);
    return 0;
}

static void print_line(void *user, const char *line) { (void)user; printf("%s\n", line); fflush(stdout); }

/* --diff: the GPU against the CPU, op by op, then the model (when given) layer by layer */
static int run_diff(infer_model *m, const infer_kernels *k) {
    infer_error err;
    const int rc = infer_backend_diff(k, m, 16, INFER_DIFF_OPS | INFER_DIFF_MODEL, print_line, NULL, &err);
    if (rc < 0) { fprintf(stderr, "infer: --diff: %s\n", err.msg); return 1; }
    return rc ? 1 : 0;
}

int main(int argc, char **argv) {
    options o;
    parse_args(argc, argv, &o);
    if (o.membw) { printf("membw_gbs=%.2f threads=%d\n", measure_bw(o.n_threads ? o.n_threads : (int)sysconf(_SC_NPROCESSORS_ONLN)), o.n_threads); return 0; }
    infer_error err;
    const infer_kernels *gpu = NULL;
    if ((o.gpu || o.diff) && infer_gpu_kernels(&gpu, &err) != INFER_OK) { fprintf(stderr, "infer: %s: %s\n", o.diff ? "--diff" : "--gpu", err.msg); return 1; }
    /* what main holds; every exit from here on goes through `done`, which releases it */
    infer_model *m = NULL;
    infer_session *s = NULL;
    infer_sampler *smp = NULL;
    char *text = NULL;
    int32_t *prompt = NULL;
    float *logits = NULL;
    FILE *lf = NULL;
    int rc = 1;
    infer_model_params mp;
    memset(&mp, 0, sizeof mp);
    mp.vocab_only = o.tokenize && !o.info;
    if (o.model && infer_model_load(&m, o.model, &mp, &err) != INFER_OK) { fprintf(stderr, "infer: %s: %s\n", o.model, err.msg); return 1; }
    if (o.diff) { rc = run_diff(m, gpu); goto done; }
    if (o.info) { print_info(m); rc = 0; goto done; }
    if (gpu && !o.tokenize && infer_model_upload(m, gpu, &err) != INFER_OK) { fprintf(stderr, "infer: %s: %s\n", o.model, err.msg); goto done; }

    size_t text_len = 0;
    if (o.file) text = read_file(o.file, &text_len);
    else if (o.prompt) { text_len = strlen(o.prompt); text = memcpy(xmalloc(text_len + 1, "the prompt"), o.prompt, text_len + 1); }

    if (o.tokenize) {
        if (!text && !o.prompt_ids) die("%s", "--tokenize needs -p or -f");
        int n;
        int32_t *ids = prompt_tokens(&o, m, text, text_len, &n);
        for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
        printf("\n");
        free(ids);
        rc = 0;
        goto done;
    }

    infer_session_params sp = infer_session_default_params();
    sp.n_ctx = o.n_ctx;
    sp.n_threads = o.n_threads;
    sp.n_ubatch = o.n_ubatch;
    sp.kv_type = o.kv_type;
    sp.precise = o.precise;
    sp.backend = gpu;
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { fprintf(stderr, "infer: %s\n", err.msg); goto done; }
    if (o.ppl) { rc = run_ppl(&o, m, s); goto done; }
    if (o.bench) { rc = run_bench(&o, m, s); goto done; }

    int n_prompt = 0;
    if (text || o.prompt_ids) prompt = prompt_tokens(&o, m, text, text_len, &n_prompt);
    else {   /* no prompt: start from BOS */
        const infer_tokenizer *tok = infer_model_tokenizer(m);
        if (!tok) die("%s", "no prompt given and the model has no vocabulary");
        prompt = xmalloc(sizeof(int32_t) * 4, "the prompt");
        n_prompt = infer_tokenize(tok, "", 0, 1, 0, prompt, 4);
    }
    if (n_prompt <= 0) die("%s", "the prompt is empty (no tokens)");
    if (n_prompt > infer_session_n_ctx(s)) {
        fprintf(stderr, "infer: the prompt has %d tokens, more than the context size %d\n", n_prompt, infer_session_n_ctx(s));
        goto done;
    }

    const int V = infer_model_config(m)->n_vocab;
    if (o.logits_out && !(lf = fopen(o.logits_out, "wb"))) die("cannot open '%s' for writing", o.logits_out);
    logits = xmalloc(sizeof(float) * (size_t)V * (size_t)(lf ? n_prompt : 1), "the logits");
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    infer_detok dt;
    if (tok) {
        infer_detok_init(&dt, tok);
        if (text && o.prompt) { fwrite(text, 1, text_len, stdout); dt.at_start = 0; }   /* a continuation keeps its leading space */
        fflush(stdout);
    }
    double t0 = infer_time_seconds();
    if (infer_eval(s, prompt, n_prompt, logits, lf != NULL, &err) != INFER_OK) { fprintf(stderr, "infer: %s\n", err.msg); goto done; }
    double t_prompt = infer_time_seconds() - t0;
    if (lf) write_rows(lf, logits, (size_t)V * n_prompt, o.logits_out);
    const float *last = logits + (lf ? (size_t)(n_prompt - 1) * V : 0);
    if (!(smp = infer_sampler_create(&o.sp, V))) die("%s", "out of memory for the sampler");
    for (int i = 0; i < n_prompt; i++) infer_sampler_accept(smp, prompt[i]);
    int n_gen = 0;
    t0 = infer_time_seconds();
    for (int g = 0; g < o.n_predict; g++) {
        int32_t t = infer_sampler_sample(smp, last);
        infer_sampler_accept(smp, t);
        if (tok && infer_token_is_eog(tok, t) && !lf) break;
        if (tok) {
            char buf[256];
            int nb = infer_detok_push(&dt, t, buf, sizeof buf);
            fwrite(buf, 1, (size_t)(nb < (int)sizeof buf ? nb : (int)sizeof buf), stdout);
            fflush(stdout);
        } else {
            printf("%s%d", g ? " " : "", t);
        }
        n_gen++;
        if (infer_session_n_past(s) >= infer_session_n_ctx(s)) { fprintf(stderr, "\ninfer: context full\n"); break; }
        /* every generated token is evaluated when logits are written, so the file has n_prompt + n rows */
        if (g + 1 < o.n_predict || lf) {
            if (infer_eval(s, &t, 1, logits, 0, &err) != INFER_OK) { fprintf(stderr, "infer: %s\n", err.msg); goto done; }
            last = logits;
            if (lf) write_rows(lf, logits, (size_t)V, o.logits_out);
        }
    }
    double t_gen = infer_time_seconds() - t0;
    if (tok) { char buf[64]; int nb = infer_detok_flush(&dt, buf, sizeof buf); fwrite(buf, 1, (size_t)nb, stdout); }
    printf("\n");
    fprintf(stderr, "prompt: %d tokens in %.3f s (%.2f tok/s); generation: %d tokens in %.3f s (%.2f tok/s)\n",
            n_prompt, t_prompt, n_prompt / (t_prompt > 0 ? t_prompt : 1e-9), n_gen, t_gen, n_gen / (t_gen > 0 ? t_gen : 1e-9));
    rc = 0;
done:
    if (lf && fclose(lf) != 0 && rc == 0) { fprintf(stderr, "infer: cannot write '%s': %s\n", o.logits_out, strerror(errno)); rc = 1; }
    infer_sampler_free(smp);
    free(logits); free(prompt); free(text);
    infer_session_free(s);
    infer_model_free(m);
    return rc;
}
