/* tests.c -- infer's tests.  ./tests [substring ...] runs the tests whose name contains any
 * of the substrings (all tests when none is given); the last line is "N passed, N failed,
 * N skipped". Tests that need ../shared print a SKIP line when it is absent and count as
 * skipped, not passed (a test that failed a check before it skipped counts as failed).
 *
 * The sections follow infer.h's (its table of contents; each names the sections it tests),
 * then the programs built on it: the command line, tools/convert, tools/train (and the model
 * it made, data/tales.gguf), the fuzz corpus, the GPU builds. The robust_ tests (README,
 * "Bad input") stand with what they feed. */

#define INFER_IMPLEMENTATION
#include "infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* tools/train.c, its main left out: the train_ tests call the trainer's own functions */
#define TRAIN_NO_MAIN
#include "tools/train.c"

/* ---- the harness ---- */
static int t_failed;         /* checks failed in the current test */
static int t_skipped;

#define CHECK(cond) do { if (!(cond)) { printf("    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); t_failed++; } } while (0)
#define CHECK_MSG(cond, ...) do { if (!(cond)) { printf("    %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); t_failed++; } } while (0)
#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); if (!(fabs(a_ - b_) <= (tol))) { printf("    %s:%d: %s = %.9g, expected %.9g +- %g\n", __FILE__, __LINE__, #a, a_, b_, (double)(tol)); t_failed++; } } while (0)
#define SKIP_WITH(ret, ...) do { printf("  SKIP: "); printf(__VA_ARGS__); printf("\n"); t_skipped = 1; return ret; } while (0)
#define SKIP(...) SKIP_WITH(, __VA_ARGS__)

#define SHARED "../shared"

static int file_exists(const char *p) { FILE *f = fopen(p, "rb"); if (f) fclose(f); return f != NULL; }

static void *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); fclose(f); return NULL; }
    buf[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}
static int write_file(const char *path, const void *d, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    const int ok = fwrite(d, 1, n, f) == n;
    return (fclose(f) == 0) & ok;
}

/* Temporary files: one folder per run, made by mkdtemp (so two runs at once never share a
 * file) and removed at the end. C code names a file there with tmp_path("name"), shell
 * commands with $INFER_TMP/name (the variable is set for every command the tests run). */
static char t_tmpdir[256];
static const char *tmp_path(const char *name) {
    static char ring[16][384];
    static unsigned k;
    char *p = ring[k++ % 16];
    snprintf(p, sizeof ring[0], "%s/%s", t_tmpdir, name);
    return p;
}
static int tmp_remove(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

/* ---- helpers the sections share: hand-made files, ../shared's goldens, the programs ---- */

/* a tiny GGUF builder for hand-made test files */
typedef struct { uint8_t *p; size_t n, cap; } buf_t;
static void b_put(buf_t *b, const void *d, size_t n) {
    if (b->n + n > b->cap) { b->cap = (b->n + n) * 2 + 64; b->p = realloc(b->p, b->cap); }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void b_u32(buf_t *b, uint32_t v) { b_put(b, &v, 4); }
static void b_u64(buf_t *b, uint64_t v) { b_put(b, &v, 8); }
static void b_str(buf_t *b, const char *s) { b_u64(b, strlen(s)); b_put(b, s, strlen(s)); }
static void b_kv_u32(buf_t *b, const char *k, uint32_t v) { b_str(b, k); b_u32(b, INFER_GGUF_U32); b_u32(b, v); }
static void b_kv_str(buf_t *b, const char *k, const char *v) { b_str(b, k); b_u32(b, INFER_GGUF_STRING); b_str(b, v); }
static void b_pad(buf_t *b, size_t a) { static const uint8_t z[64]; while (b->n % a) b_put(b, z, 1); }

/* small writers: text, printf, a JSON string literal, a first replacement, a file */
static void hb_str(buf_t *b, const char *s) { if (*s) b_put(b, s, strlen(s)); }
static void hb_fmt(buf_t *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    b_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}
/* a JSON string literal of n bytes (UTF-8 passes through) */
static void hb_json(buf_t *b, const char *s, size_t n) {
    b_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { b_put(b, "\\", 1); b_put(b, &s[i], 1); }
        else if (c < 0x20) hb_fmt(b, "\\u%04x", c);
        else b_put(b, &s[i], 1);
    }
    b_put(b, "\"", 1);
}
/* text with the first `from` replaced by `to` */
static void hb_replace(buf_t *out, const char *text, const char *from, const char *to) {
    const char *at = strstr(text, from);
    out->n = 0;
    if (!at) { hb_str(out, text); return; }
    if (at > text) b_put(out, text, (size_t)(at - text));
    hb_str(out, to);
    hb_str(out, at + strlen(from));
    b_put(out, "", 1);
    out->n--;
}

static int hb_save(const buf_t *b, const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(b->p, 1, b->n, f) == b->n;
    return fclose(f) == 0 && ok;
}

/* one tensor of a safetensors file being written */
typedef struct { char name[160]; const char *dtype; int nd; int64_t shape[4]; uint8_t *data; size_t nbytes; } hft_t;

/* a safetensors file: header (padded with spaces to 8 bytes), then the data in list order */
static void hft_st_bytes(buf_t *out, const hft_t *ts, int n) {
    buf_t h = { 0 };
    uint64_t off = 0;
    hb_str(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < n; i++) {
        hb_str(&h, ",");
        hb_json(&h, ts[i].name, strlen(ts[i].name));
        hb_fmt(&h, ":{\"dtype\":\"%s\",\"shape\":[", ts[i].dtype);
        for (int d = 0; d < ts[i].nd; d++) hb_fmt(&h, "%s%lld", d ? "," : "", (long long)ts[i].shape[d]);
        hb_fmt(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)(off + ts[i].nbytes));
        off += ts[i].nbytes;
    }
    hb_str(&h, "}");
    while (h.n % 8) hb_str(&h, " ");
    b_u64(out, h.n);
    b_put(out, h.p, h.n);
    for (int i = 0; i < n; i++) b_put(out, ts[i].data, ts[i].nbytes);
    free(h.p);
}
static int hft_write_st(const char *dir, const char *file, hft_t *ts, int n) {
    buf_t out = { 0 };
    hft_st_bytes(&out, ts, n);
    int ok = hb_save(&out, dir, file);
    free(out.p);
    return ok;
}

static float *read_floats(const char *path, size_t *n) {
    size_t bytes;
    float *p = slurp(path, &bytes);
    if (p) *n = bytes / 4;
    return p;
}

/* the prompt ids from prompts.json: {"short": [...], "long": [...]} */
static int read_prompt(const char *dir, const char *which, int32_t *ids, int max) {
    char path[256];
    snprintf(path, sizeof path, "%s/prompts.json", dir);
    char *s = slurp(path, NULL);
    if (!s) return 0;
    char key[32];
    snprintf(key, sizeof key, "\"%s\"", which);
    char *p = strstr(s, key);
    int n = 0;
    if (p && (p = strchr(p, '['))) {
        p++;
        while (*p && *p != ']' && n < max) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) { p++; continue; }
            ids[n++] = (int32_t)v;
            p = end;
        }
    }
    free(s);
    return n;
}

/* the ids after `label` on its line in GOLDEN_stories260K.md (stories260K: a real trained model) */
static int golden_ids(const char *text, const char *label, int32_t *ids, int max) {
    const char *p = strstr(text, label);
    if (!p) return 0;
    p = strchr(p, ':');
    int n = 0;
    while (p && *p && *p != '\n' && n < max) {
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1) { p++; continue; }
        ids[n++] = (int32_t)v;
        p = end - 1;
        if (*end == '\n' || !*end) break;
        p = end;
    }
    return n;
}

/* a tokenizer against ../shared/vocab's golden vectors */
static void check_vocab_vectors(const char *name, const infer_tokenizer *tok) {
    char path[256];
    snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf.inp", name);
    char *inp = slurp(path, NULL);
    snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf.out", name);
    char *out = slurp(path, NULL);
    if (!inp || !out) { free(inp); free(out); printf("  SKIP: vectors for %s not found\n", name); t_skipped = 1; return; }
    const char *sep = "\n__ggml_vocab_test__\n";
    char *text = inp, *line = out;
    int cases = 0, bad = 0;
    while (text && *line) {
        char *next = strstr(text, sep);
        size_t len = next ? (size_t)(next - text) : strlen(text);
        if (!next && len == 0) break;
        char *eol = strchr(line, '\n');
        if (eol) *eol = 0;
        int32_t want[4096], got[4096];
        int nw = 0;
        for (char *p = line; *p && nw < 4096;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p) break;
            want[nw++] = (int32_t)v;
            p = end;
        }
        int ng = infer_tokenize(tok, text, len, 0, 0, got, 4096);
        if (ng != nw || memcmp(got, want, sizeof(int32_t) * (size_t)nw) != 0) {
            if (bad < 3) printf("    %s case %d: '%.*s' -> %d tokens, expected %d\n", name, cases, (int)(len > 60 ? 60 : len), text, ng, nw);
            bad++;
        }
        cases++;
        text = next ? next + strlen(sep) : NULL;
        line = eol ? eol + 1 : line + strlen(line);
    }
    CHECK_MSG(bad == 0 && cases > 0, "%s: %d of %d cases differ", name, bad, cases);
    free(inp); free(out);
}

/* a shell command: its stdout in out, its exit status returned */
static int run_cmd(const char *cmd, char *out, size_t outsz) {
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* the value after `key` in text (a number), -1 if absent */
static long num_after(const char *text, const char *key) {
    const char *p = text ? strstr(text, key) : NULL;
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* max |a - b| (a NaN anywhere makes it NaN, and a check on it fail) */
static double max_abs_diff(const float *a, const float *b, size_t n) {
    double mx = 0;
    for (size_t i = 0; i < n; i++) { const double e = fabs((double)a[i] - b[i]); if (!(e <= mx)) mx = e; }
    return mx;
}

/* the model in a file (or only its vocabulary), loaded; NULL after a failed check naming the error */
static infer_model *load_model(const char *path, int vocab_only) {
    infer_model *m;
    infer_error err;
    infer_model_params mp = { .vocab_only = vocab_only };
    if (infer_model_load(&m, path, &mp, &err) == INFER_OK) return m;
    CHECK_MSG(0, "%s: %s", path, err.msg);
    return NULL;
}

/* `tools/convert synth ARCH tiny` with TYPE weights, written to the per-run folder as FILE and
 * loaded; NULL after a SKIP (no ./tools/convert) or a failed check */
static infer_model *synth_tiny(const char *arch, const char *type, const char *file) {
    if (!file_exists("./tools/convert")) SKIP_WITH(NULL, "./tools/convert not built");
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "./tools/convert synth %s tiny $INFER_TMP/%s --type %s 2>&1", arch, file, type);
    const int rc = run_cmd(cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "%s: %s", cmd, out);
    return rc == 0 ? load_model(tmp_path(file), 0) : NULL;
}

/* how a model is run: exact maths or the fast path, a prompt in chunks of ubatch tokens on
 * `threads` threads, a context of n_ctx tokens (0: the defaults), on a backend (NULL: the CPU) */
typedef struct { int precise, ubatch, threads, n_ctx; const infer_kernels *backend; } run_opts;

/* the logits of ids[0..n), every row, from a fresh session: ids[0..n_batched) in one call, the
 * rest one at a time as decoding feeds them; NULL after printing the error */
static float *eval_logits(infer_model *m, const int32_t *ids, int n, int n_batched, run_opts o) {
    const size_t V = (size_t)infer_model_config(m)->n_vocab;
    infer_session_params sp = infer_session_default_params();
    sp.precise = o.precise;
    sp.n_ubatch = o.ubatch;
    sp.n_threads = o.threads;
    sp.n_ctx = o.n_ctx;
    sp.backend = o.backend;
    infer_session *s;
    infer_error err;
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { printf("    %s\n", err.msg); return NULL; }
    float *out = malloc(sizeof(float) * V * (size_t)n);
    infer_status st = infer_eval(s, ids, n_batched, out, 1, &err);
    for (int i = n_batched; i < n && st == INFER_OK; i++) st = infer_eval(s, ids + i, 1, out + (size_t)i * V, 1, &err);
    infer_session_free(s);
    if (st != INFER_OK) { printf("    eval: %s\n", err.msg); free(out); return NULL; }
    return out;
}

/* the same for the model in a file, all of ids at once (*n_vocab: its vocabulary size) */
static float *file_logits(const char *path, const int32_t *ids, int n, run_opts o, int *n_vocab) {
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, path, NULL, &err) != INFER_OK) { printf("    %s: %s\n", path, err.msg); return NULL; }
    if (n_vocab) *n_vocab = infer_model_config(m)->n_vocab;
    float *out = eval_logits(m, ids, n, n, o);
    infer_model_free(m);
    return out;
}

/* ---- infer.h's table of contents ----
 * The TOC at the top of infer.h lists every section ("/" "* ----" then " * >>name -- ...") in
 * file order with its length in lines. toc_matches_anchors holds it to the file; `make toc`
 * (./tests --write-toc) rewrites it: the counts, and the list when sections came or went
 * (a new section's summary is the text of its anchor line until someone writes a better one). */
typedef struct { char name[32]; int line; } toc_anchor;      /* line: 0-based, the section's first */
typedef struct { char name[32]; int count; char summary[96]; } toc_entry;

/* the lines of text (in place: newlines become NULs) */
static int toc_lines(char *text, char ***lines) {
    int n = 0, cap = 1024;
    *lines = malloc(sizeof(char *) * (size_t)cap);
    for (char *p = text; *p;) {
        if (n == cap) *lines = realloc(*lines, sizeof(char *) * (size_t)(cap *= 2));
        (*lines)[n++] = p;
        char *e = strchr(p, '\n');
        if (!e) break;
        *e = 0;
        p = e + 1;
    }
    return n;
}
static int toc_name(const char *p, char *name) {   /* ">>name" at p: its length, name copied; 0 if none */
    if (strncmp(p, ">>", 2)) return 0;
    int k = 0;
    while (k < 31 && ((p[2 + k] >= 'a' && p[2 + k] <= 'z') || (p[2 + k] >= '0' && p[2 + k] <= '9') || p[2 + k] == '-')) { name[k] = p[2 + k]; k++; }
    name[k] = 0;
    return k ? k + 2 : 0;
}
/* sections: an anchor line " * >>name -- ..." right after a "/" "* ----" bar line */
static int toc_find_anchors(char **L, int n, toc_anchor *a, int max) {
    int k = 0;
    for (int i = 1; i < n && k < max; i++) {
        char name[32];
        const int len = strncmp(L[i], " * >>", 5) ? 0 : toc_name(L[i] + 3, name);
        if (len && !strncmp(L[i] + 3 + len, " --", 3) && !strncmp(L[i - 1], "/* ----", 7)) {
            snprintf(a[k].name, sizeof a[k].name, "%s", name);
            a[k++].line = i - 1;
        }
    }
    return k;
}
/* the TOC's entries, between the lines " *   <<toc" and " *   toc>>"; *first, *last: those lines */
static int toc_read(char **L, int n, toc_entry *e, int max, int *first, int *last) {
    int k = 0;
    *first = *last = -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(L[i], " *   <<toc")) { *first = i; continue; }
        if (!strcmp(L[i], " *   toc>>")) { *last = i; break; }
        if (*first < 0 || k == max) continue;
        char name[32];
        const int len = strncmp(L[i], " *   >>", 7) ? 0 : toc_name(L[i] + 5, name);
        if (!len) continue;
        const char *p = L[i] + 5 + len;
        char *end;
        e[k].count = (int)strtol(p, &end, 10);
        while (*end == ' ') end++;
        snprintf(e[k].name, sizeof e[k].name, "%s", name);
        snprintf(e[k].summary, sizeof e[k].summary, "%s", end);
        k++;
    }
    return k;
}

static void test_toc_matches_anchors(void) {
    char *text = slurp("infer.h", NULL), **L;
    if (!text) { CHECK_MSG(0, "infer.h not found"); return; }
    const int n = toc_lines(text, &L);
    toc_anchor a[128];
    toc_entry e[128];
    int first, last;
    const int na = toc_find_anchors(L, n, a, 128), ne = toc_read(L, n, e, 128, &first, &last);
    CHECK_MSG(first >= 0 && last > first, "infer.h has no TOC block (<<toc ... toc>>)");
    CHECK_MSG(na >= 30, "only %d sections found", na);
    CHECK_MSG(ne == na, "the TOC lists %d sections, the file has %d (make toc)", ne, na);
    for (int i = 0; i < na && i < ne; i++) {
        const int count = (i + 1 < na ? a[i + 1].line : n) - a[i].line;
        CHECK_MSG(!strcmp(e[i].name, a[i].name), "TOC entry %d is >>%s, the file's section %d is >>%s (make toc)", i + 1, e[i].name, i + 1, a[i].name);
        CHECK_MSG(e[i].count == count, ">>%s: the TOC says %d lines, the section has %d (make toc)", a[i].name, e[i].count, count);
        CHECK_MSG(strlen(e[i].summary) > 3, ">>%s has no summary in the TOC", a[i].name);
        for (int j = 0; j < i; j++) CHECK_MSG(strcmp(a[i].name, a[j].name), ">>%s is the name of two sections", a[i].name);
    }
    /* README's "Reading infer.h" lists the same sections, in the same order, one table row each */
    char *readme = slurp("README.md", NULL), **R;
    if (!readme) { CHECK_MSG(0, "README.md not found"); free(L); free(text); return; }
    const int nr = toc_lines(readme, &R);
    int in = 0, k = 0;
    for (int i = 0; i < nr; i++) {
        if (!strncmp(R[i], "## ", 3)) in = !strcmp(R[i], "## Reading infer.h");
        char name[32];
        if (!in || strncmp(R[i], "| `", 3) || !toc_name(R[i] + 3, name)) continue;
        CHECK_MSG(k < na && !strcmp(name, a[k].name), "README's section list, row %d: >>%s, the file's section %d is >>%s", k + 1, name, k + 1, k < na ? a[k].name : "(none)");
        k++;
    }
    CHECK_MSG(k == na, "README's \"Reading infer.h\" lists %d sections, infer.h has %d", k, na);
    free(R); free(readme);
    free(L); free(text);
}

/* ./tests --write-toc: infer.h's TOC made true to the file */
/* ---- infer.h reads top to bottom: no section calls into a later one ----
 * Except through the kernel table (a pointer, not a name) or into an appendix through a
 * function declared before the implementation's first section: the public API, and the
 * appendices' entry points declared at the top of the implementation. The check: comments and string literals blanked, every
 * function definition (a line at column 0 naming infer...( whose statement opens a body)
 * gives its name a section; a name used in an earlier section than its definition's is a
 * forward call, unless the definition is in an appendix (after >>backends) and a prototype
 * for it stands before >>util. */
static void hdr_blank(char *s) {         /* comments and literals to spaces, newlines kept */
    for (char *p = s; *p;) {
        if (p[0] == '/' && p[1] == '*') {
            char *e = strstr(p + 2, "*/");
            e = e ? e + 2 : p + strlen(p);
            for (; p < e; p++) if (*p != '\n') *p = ' ';
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++) *p = ' ';
        } else if (*p == '"' || *p == '\'') {
            const char q = *p++;
            for (; *p && *p != q && *p != '\n'; p++) { if (*p == '\\' && p[1]) *p++ = ' '; *p = ' '; }
            if (*p == q) p++;
        } else p++;
    }
}
static int hdr_ident(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
/* the forward calls in the header text `text` (modified); each one reported when `say` */
static int hdr_forward_calls(char *text, int say) {
    char *orig = strdup(text), **L, **B;
    hdr_blank(text);
    const int n = toc_lines(orig, &L), nb = toc_lines(text, &B);
    toc_anchor a[128];
    const int na = toc_find_anchors(L, n, a, 128);
    int *sec = malloc(sizeof(int) * (size_t)(nb + 1)), first_impl = -1;
    for (int i = 0, k = -1; i < nb; i++) {
        while (k + 1 < na && a[k + 1].line <= i) k++;
        sec[i] = k;
        if (first_impl < 0 && k >= 0 && !strcmp(a[k].name, "util")) first_impl = i;
    }
    struct { char *key; int value; } *def = NULL, *proto = NULL;   /* name -> section; declared early */
    sh_new_strdup(def);                                           /* the maps keep their own copies of the names */
    sh_new_strdup(proto);
    for (int i = 0; i < nb; i++) {
        const char *l = B[i];
        if (!((l[0] >= 'a' && l[0] <= 'z') || (l[0] >= 'A' && l[0] <= 'Z'))) continue;
        const char *f = l, *q = NULL;                                 /* the first infer...( */
        int len = 0;
        while ((f = strstr(f, "infer")) != NULL) {
            for (len = 0; hdr_ident(f[len]); len++) {}
            for (q = f + len; *q == ' '; q++) {}
            if (*q == '(' && (f == l || !hdr_ident(f[-1]))) break;
            f += len ? len : 1;
        }
        if (!f || memchr(l, '=', (size_t)(f - l))) continue;
        char c = 0;                                                   /* the statement: ';' or '{' first */
        for (int j = i; j < nb && j < i + 12 && !c; j++)
            for (const char *p = j == i ? q : B[j]; *p && !c; p++) if (*p == ';' || *p == '{') c = *p;
        char name[96];
        snprintf(name, sizeof name, "%.*s", len < 95 ? len : 95, f);
        if (c == '{' && shgeti(def, name) < 0) shput(def, name, sec[i]);
        if (c == ';' && i < first_impl) shput(proto, name, 1);
    }
    int bad = 0, engine_end = na;                  /* the engine ends with >>backends, the appendices follow */
    for (int k = 0; k < na; k++) if (!strcmp(a[k].name, "backends")) engine_end = k;
    for (int i = first_impl; i >= 0 && i < nb; i++)
        for (const char *p = B[i]; *p; p++) {
            if (strncmp(p, "infer", 5) || (p > B[i] && hdr_ident(p[-1]))) continue;
            int len = 0;
            while (hdr_ident(p[len])) len++;
            char name[96];
            snprintf(name, sizeof name, "%.*s", len < 95 ? len : 95, p);
            p += len - 1;
            const ptrdiff_t d = shgeti(def, name);
            if (d < 0 || def[d].value <= sec[i] || (def[d].value > engine_end && shgeti(proto, name) >= 0)) continue;
            if (say) printf("    line %d, in >>%s: %s is defined later, in >>%s\n", i + 1, a[sec[i]].name, name, a[def[d].value].name);
            bad++;
        }
    shfree(def);
    shfree(proto);
    free(sec); free(L); free(B); free(orig);
    return bad;
}
static void test_header_order(void) {
    /* the check itself: a made-up file whose second section calls into its third */
    char fake[] = "int infer_c(void);\n/* ----\n * >>util -- tools\n */\nint infer_a(void) { return infer_c(); }\n"
                  "/* ----\n * >>two -- more\n */\nint infer_b(void) { return infer_c() + infer_a(); } /* infer_c() */\n"
                  "/* ----\n * >>three -- last\n */\nint infer_c(void) { return \"infer_b()\"[0]; }\n";
    CHECK_MSG(hdr_forward_calls(fake, 0) == 2, "the forward-call check misses the calls of a made-up file");
    char *text = slurp("infer.h", NULL);
    if (!text) { CHECK_MSG(0, "infer.h not found"); return; }
    const int bad = hdr_forward_calls(text, 1);
    CHECK_MSG(bad == 0, "%d call%s in infer.h reach forward into a later section", bad, bad == 1 ? "" : "s");
    free(text);
}

static int write_toc(const char *path) {
    size_t size;
    char *text = slurp(path, &size), **L;
    if (!text) { fprintf(stderr, "%s: cannot read\n", path); return 1; }
    char *copy = malloc(size + 1);
    memcpy(copy, text, size + 1);
    const int n = toc_lines(copy, &L);
    toc_anchor a[128];
    toc_entry e[128];
    int first, last;
    const int na = toc_find_anchors(L, n, a, 128), ne = toc_read(L, n, e, 128, &first, &last);
    if (first < 0 || last < first) { fprintf(stderr, "%s: no <<toc ... toc>> block\n", path); return 1; }
    FILE *f = fopen(path, "wb");
    if (!f) { fprintf(stderr, "%s: cannot write\n", path); return 1; }
    for (int i = 0; i <= first; i++) fprintf(f, "%s\n", L[i]);
    for (int i = 0; i < na; i++) {
        const char *summary = NULL;
        for (int j = 0; j < ne && !summary; j++) if (!strcmp(e[j].name, a[i].name)) summary = e[j].summary;
        char own[96];
        if (!summary) {             /* a new section: its anchor line's words */
            const char *p = strstr(L[a[i].line + 1], " -- ");
            snprintf(own, sizeof own, "%s", p ? p + 4 : "");
            summary = own;
        }
        const int count = (i + 1 < na ? a[i + 1].line : n) - a[i].line;
        fprintf(f, " *   >>%-15s %5d  %s\n", a[i].name, count, summary);
    }
    for (int i = last; i < n; i++) fprintf(f, "%s\n", L[i]);
    const int ok = fclose(f) == 0;
    free(L); free(copy); free(text);
    printf("%s: the TOC lists %d sections\n", path, na);
    return ok ? 0 : 1;
}

/* ---- >>util: the default thread count follows the affinity mask ---- */
static void test_util_default_threads(void) {
#if defined(__linux__) && defined(CPU_COUNT)
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0) SKIP("sched_getaffinity failed");
    CHECK_MSG(infer_default_threads() == CPU_COUNT(&all), "default %d threads, %d cores allowed", infer_default_threads(), CPU_COUNT(&all));
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &all)) first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    CHECK_MSG(infer_default_threads() == 1, "one allowed core, default %d threads", infer_default_threads());
    CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
#else
    SKIP("no affinity mask here");
#endif
}

/* ---- >>util: the pool's parts go to whoever runs ----
 * A worker that is not running (here: held in its after-job hook, as a worker descheduled
 * by a busy machine would be) must not hold a job up: the caller takes its part. Job 1's
 * two parts wait for each other, so both threads run one and the worker then sits in the
 * hook; job 2 must then finish with both parts run on the caller's thread. (A pool that
 * assigns part i to thread i would wait for the hook's 5 s and run part 1 on the worker.)
 * Then many small jobs: every part runs exactly once. */
typedef struct { atomic_int started, release, runs[64]; int by[2]; } pool_probe;
static void pool_probe_meet(void *arg, int part, int n) {
    pool_probe *pp = (pool_probe *)arg;
    atomic_fetch_add(&pp->started, 1);
    const double t0 = infer_time_seconds();
    while (atomic_load(&pp->started) < n && infer_time_seconds() - t0 < 5) sched_yield();
    (void)part;
}
static void pool_probe_who(void *arg, int part, int n) {
    pool_probe *pp = (pool_probe *)arg;
    if (part < 2) pp->by[part] = infer__pool_self;
    (void)n;
}
static void pool_probe_count(void *arg, int part, int n) {
    pool_probe *pp = (pool_probe *)arg;
    if (part < 64) atomic_fetch_add(&pp->runs[part], 1);
    (void)n;
}
static void pool_probe_hold(void *user, int ith) {
    pool_probe *pp = (pool_probe *)user;
    const double t0 = infer_time_seconds();
    while (!atomic_load(&pp->release) && infer_time_seconds() - t0 < 5) usleep(1000);
    (void)ith;
}
static void test_util_pool_parts(void) {
    pool_probe *pp = (pool_probe *)calloc(1, sizeof *pp);
    infer__pool *p = infer__pool_create(2);
    CHECK(pp && p && p->n_threads == 2);
    if (!pp || !p || p->n_threads != 2) { free(pp); infer__pool_free(p); return; }
    p->after = pool_probe_hold; p->after_user = pp;
    infer__pool_run(p, pool_probe_meet, pp);
    CHECK_MSG(atomic_load(&pp->started) == 2, "job 1: %d parts ran", atomic_load(&pp->started));
    pp->by[0] = pp->by[1] = -1;
    infer__pool_run(p, pool_probe_who, pp);           /* the worker is in the hook */
    CHECK_MSG(pp->by[0] == 0 && pp->by[1] == 0, "job 2's parts ran on threads %d and %d, not both on the caller's", pp->by[0], pp->by[1]);
    atomic_store(&pp->release, 1);
    p->after = NULL;
    for (int i = 0; i < 2000; i++) infer__pool_run(p, pool_probe_count, pp);
    CHECK_MSG(atomic_load(&pp->runs[0]) == 2000 && atomic_load(&pp->runs[1]) == 2000, "parts ran %d and %d times in 2000 jobs",
              atomic_load(&pp->runs[0]), atomic_load(&pp->runs[1]));
    infer__pool_free(p);
    free(pp);
}

/* ---- >>util: fp16 / bf16 conversions ---- */
static void test_util_fp16_bf16(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;   /* nan payloads */
        if (infer__fp32_to_fp16(infer__fp16_to_fp32((infer_half)h)) != h) bad++;
    }
    CHECK(bad == 0);
    CHECK(infer__fp32_to_fp16(65520.0f) == 0x7c00);
    CHECK(infer__fp32_to_fp16(1.0f + 1.0f / 2048) == 0x3c00);            /* tie to even */
    CHECK(infer__fp32_to_fp16(1.0f + 3.0f / 2048) == 0x3c02);
    CHECK(infer__fp32_to_bf16(1.0f) == 0x3f80 && infer__bf16_to_fp32(0x3f80) == 1.0f);
}

/* ---- >>util: dealing a job's pieces ----
 * Every piece is taken exactly once, however many threads take and however the pieces
 * divide among them; a thread's pieces from its own run come front to back and consecutive;
 * one thread alone takes its run in halves, then every other run from its back. */
typedef struct { infer__deal *d; int ith; int64_t *got; int n; } deal_taker;
static void *deal_take_all(void *arg) {
    deal_taker *t = (deal_taker *)arg;
    for (int from = t->ith % t->d->n;;) {
        int64_t count;
        const int64_t p = infer__deal_take(t->d, t->ith, &from, t->ith % 2 ? 1 : INT64_MAX, &count);
        if (p < 0) break;
        for (int64_t i = 0; i < count; i++) t->got[t->n++] = p + i;
    }
    return NULL;
}
static void test_util_deal(void) {
    static const int64_t pieces[] = { 0, 1, 3, 7, 64, 1000, 20000 };
    for (int threads = 1; threads <= 4; threads++)
        for (size_t pi = 0; pi < sizeof pieces / sizeof *pieces; pi++) {
            const int64_t P = pieces[pi];
            infer__deal d;
            infer__deal_init(&d, P, threads);
            pthread_t th[4];
            deal_taker tk[4];
            int64_t *got = calloc((size_t)(threads * P + 1), sizeof *got);
            int *seen = calloc((size_t)P + 1, sizeof *seen);
            for (int t = 0; t < threads; t++) {
                tk[t] = (deal_taker){ &d, t, got + (size_t)t * P, 0 };
                pthread_create(&th[t], NULL, deal_take_all, &tk[t]);
            }
            for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
            int bad_range = 0, bad_order = 0;
            for (int t = 0; t < threads; t++)
                for (int i = 0; i < tk[t].n; i++) {
                    const int64_t p = tk[t].got[i];
                    if (p < 0 || p >= P) { bad_range++; continue; }
                    seen[p]++;
                    /* a piece of its own run that follows another of its own: the next one */
                    const int64_t lo = P * t / threads, hi = P * (t + 1) / threads;
                    if (i > 0 && p >= lo && p < hi && tk[t].got[i - 1] >= lo && tk[t].got[i - 1] < hi && p != tk[t].got[i - 1] + 1) bad_order++;
                }
            int bad_count = 0;
            for (int64_t p = 0; p < P; p++) bad_count += seen[p] != 1;
            CHECK_MSG(bad_range == 0 && bad_count == 0 && bad_order == 0, "%d threads, %lld pieces: %d out of range, %d not taken once, %d out of order",
                      threads, (long long)P, bad_range, bad_count, bad_order);
            free(got); free(seen);
        }
    /* one taker, three runs of 5 pieces: its own run front to back, half of what is left at
     * a time (3, 1, 1), then run 1 and run 2 from the back, a piece at a time */
    infer__deal d;
    infer__deal_init(&d, 15, 3);
    int64_t first[16], counts[16], n = 0, count;
    for (int from = 0, p; n < 16 && (p = (int)infer__deal_take(&d, 0, &from, INT64_MAX, &count)) >= 0; n++) { first[n] = p; counts[n] = count; }
    static const int64_t want_first[13] = { 0, 3, 4, 9, 8, 7, 6, 5, 14, 13, 12, 11, 10 }, want_count[13] = { 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    CHECK(n == 13 && memcmp(first, want_first, sizeof want_first) == 0 && memcmp(counts, want_count, sizeof want_count) == 0);
    infer__deal_init(&d, 15, 3);                  /* at most one at a time: 0 1 2 3 4, then as before */
    n = 0;
    for (int from = 0, p; n < 16 && (p = (int)infer__deal_take(&d, 0, &from, 1, &count)) >= 0; n++) { first[n] = p; counts[n] = count; }
    static const int64_t want_one[15] = { 0, 1, 2, 3, 4, 9, 8, 7, 6, 5, 14, 13, 12, 11, 10 };
    int ones = 1;
    for (int i = 0; i < n; i++) ones &= counts[i] == 1;
    CHECK(n == 15 && ones && memcmp(first, want_one, sizeof want_one) == 0);
}

/* ---- >>util: a weight file in 2 MiB pages ----
 * A file just written in 4 KiB pieces (not yet written back) sits in the page cache in small
 * folios; mapped as weights it must come back with at least INFER__HUGE_ENOUGH of it mapped
 * in 2 MiB pages (the cache written back, dropped and re-read in huge folios), with its
 * bytes intact. Skips where the system maps no file in 2 MiB pages at all (checked by
 * doing the same steps by hand). */
static void test_util_map_huge(void) {
#ifndef INFER__HUGE_WEIGHTS
    SKIP("no huge-page mapping of files on this system");
#else
    char path[] = "/tmp/infer_huge_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) SKIP("cannot create a file in /tmp");
    const size_t size = INFER__HUGE_MIN + ((size_t)4 << 20);
    uint32_t page[1024];
    int ok = 1;
    for (size_t off = 0; off < size && ok; off += sizeof page) {
        for (int i = 0; i < 1024; i++) page[i] = (uint32_t)(off / 4 + (size_t)i) * 2654435761u;
        ok = write(fd, page, sizeof page) == (ssize_t)sizeof page;
    }
    close(fd);                   /* left dirty: the loader writes them back before it drops them */
    if (!ok) { unlink(path); SKIP("cannot write %zu bytes to /tmp", size); }
    infer__mapping m;
    infer_error err;
    const infer_model_params mp = { 0 };
    CHECK(infer__map_file(&m, path, &mp, &err) == INFER_OK);
    if (!m.addr) { unlink(path); return; }
    CHECK(m.size == size);
    const uint32_t *w = (const uint32_t *)m.addr;
    size_t bad = 0;
    for (size_t i = 0; i < size / 4; i += 4099) bad += w[i] != (uint32_t)i * 2654435761u;
    CHECK_MSG(bad == 0, "%zu sampled words differ from the file's", bad);
    const double share = infer__huge_share(m.addr, m.size);
    infer__unmap(&m);
    if (share < 0) { unlink(path); SKIP("the kernel reports no FilePmdMapped"); }
    if (share < INFER__HUGE_ENOUGH) {   /* can this system do it at all? the steps by hand */
        const int fd2 = open(path, O_RDONLY);
        fdatasync(fd2);
        posix_fadvise(fd2, 0, 0, POSIX_FADV_DONTNEED);
        void *p = infer__map_aligned(fd2, size);
        close(fd2);
        const double by_hand = p != MAP_FAILED && madvise(p, size, MADV_POPULATE_READ) == 0 ? infer__huge_share(p, size) : -1;
        if (p != MAP_FAILED) munmap(p, size);
        if (by_hand < INFER__HUGE_ENOUGH) { unlink(path); SKIP("this system maps no file in 2 MiB pages (%.2f by hand)", by_hand); }
    }
    CHECK_MSG(share >= INFER__HUGE_ENOUGH, "%.2f of the weight file mapped in 2 MiB pages", share);
    printf("  %.2f of a %zu MiB file written in 4 KiB pieces mapped in 2 MiB pages\n", share, size >> 20);
    unlink(path);
#endif
}

/* ---- >>quant, >>quant-iq, >>traits: every type against ../shared/golden/quants; its dot ---- */
typedef struct { uint32_t type, nrows, ncols; uint64_t qbytes; float *input, *dequant; uint8_t *q; void *mem; } qg_t;

static int load_qg(const char *name, qg_t *g) {
    char path[256];
    snprintf(path, sizeof path, SHARED "/golden/quants/%s.qg", name);
    size_t n;
    uint8_t *p = slurp(path, &n);
    if (!p) return 0;
    uint32_t magic;
    memcpy(&magic, p, 4); memcpy(&g->type, p + 4, 4); memcpy(&g->nrows, p + 8, 4); memcpy(&g->ncols, p + 12, 4); memcpy(&g->qbytes, p + 16, 8);
    size_t nv = (size_t)g->nrows * g->ncols;
    if (magic != 0x31475149 || n != 24 + nv * 8 + g->qbytes) { free(p); return 0; }
    g->input = malloc(nv * 4); g->dequant = malloc(nv * 4);
    memcpy(g->input, p + 24, nv * 4);
    g->q = p + 24 + nv * 4;
    memcpy(g->dequant, p + 24 + nv * 4 + g->qbytes, nv * 4);
    g->mem = p;
    return 1;
}
static void free_qg(qg_t *g) { free(g->input); free(g->dequant); free(g->mem); }

static const char *qg_names[] = { "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K",
                                  "iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_nl", "iq4_xs",
                                  "tq1_0", "tq2_0", "mxfp4", "nvfp4", "q1_0", "q2_0" };
static const char *closed_form[] = { "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "iq4_nl", "tq1_0", "tq2_0", "mxfp4", "nvfp4", "q1_0", "q2_0" };

static double rel_rms(const float *a, const float *ref, size_t n) {
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++) { e += (double)(a[i] - ref[i]) * (a[i] - ref[i]); s += (double)ref[i] * ref[i]; }
    return sqrt(e / (s > 0 ? s : 1));
}

static void test_quant_golden(void) {
    if (!file_exists(SHARED "/golden/quants/q4_0.qg")) SKIP("../shared/golden/quants not found");
    for (size_t i = 0; i < sizeof qg_names / sizeof qg_names[0]; i++) {
        qg_t g;
        const char *name = qg_names[i];
        if (!load_qg(name, &g)) { CHECK_MSG(0, "cannot read %s.qg", name); continue; }
        int t = infer_type_from_name(name);
        CHECK_MSG(t == (int)g.type, "%s: type id %d, file says %u", name, t, g.type);
        if (t != (int)g.type) { free_qg(&g); continue; }
        size_t nv = (size_t)g.nrows * g.ncols;
        CHECK_MSG(infer_type_row_size((infer_type)t, g.ncols) * g.nrows == g.qbytes, "%s: size mismatch", name);
        float *deq = malloc(nv * 4);
        infer_error err;
        infer_status st = infer_dequantize((infer_type)t, g.q, deq, (int64_t)nv, &err);
        CHECK_MSG(st == INFER_OK && memcmp(deq, g.dequant, nv * 4) == 0, "%s: dequantization is not bit-exact", name);
        int closed = 0;
        for (size_t k = 0; k < sizeof closed_form / sizeof closed_form[0]; k++) closed |= !strcmp(closed_form[k], name);
        uint8_t *q = malloc(g.qbytes);
        st = infer_quantize((infer_type)t, g.input, q, (int64_t)nv, &err);
        if (closed) {
            CHECK_MSG(st == INFER_OK && memcmp(q, g.q, g.qbytes) == 0, "%s: quantization is not byte-exact", name);
        } else if (st == INFER_OK) {
            infer_dequantize((infer_type)t, q, deq, (int64_t)nv, &err);
            double ours = rel_rms(deq, g.input, nv), ref = rel_rms(g.dequant, g.input, nv);
            CHECK_MSG(ours <= 1.01 * ref, "%s: relative RMS error %.6f > 1.01 x golden %.6f", name, ours, ref);
        } else {
            /* only the grid i-quants have no quantizer */
            CHECK_MSG(strncmp(name, "iq1", 3) == 0 || strncmp(name, "iq2", 3) == 0 || strncmp(name, "iq3", 3) == 0, "%s: no quantizer", name);
        }
        free(q); free(deq); free_qg(&g);
    }
}

/* dot(weights, quantized activations) against dequantize-then-f32-dot, every type with a dot */
static void test_quant_dot_vs_dequant(void) {
    infer__rng rng;
    infer__rng_seed(&rng, 11);
    const int64_t K = 1024;
    float *w = malloc(K * 4), *x = malloc(K * 4), *wd = malloc(K * 4), *xd = malloc(K * 4);
    uint8_t *wq = malloc(K * 4 + 1024), *xq = malloc(K * 4 + 1024);
    int tested = 0;
    for (int t = 0; t < INFER_TYPE_COUNT; t++) {
        const infer__type_traits *tt = infer__type((infer_type)t);
        if (!tt || !tt->dot || !tt->dequant) continue;
        for (int trial = 0; trial < 3; trial++) {
            for (int64_t i = 0; i < K; i++) {
                w[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1) * (trial == 2 ? 50.0f : 1.0f);
            }
            /* weights: quantize when we can, else random bytes decoded by the golden-tested dequantizer */
            if (tt->quant) tt->quant(w, wq, K);
            else for (size_t i = 0; i < infer_type_row_size((infer_type)t, K); i++) wq[i] = (uint8_t)infer__rng_next(&rng);
            if (t == INFER_TYPE_F16 || t == INFER_TYPE_BF16 || t == INFER_TYPE_F32 || !tt->quant) {
                /* random bytes may hold inf/nan halves: rebuild through quant when possible */
                if (!tt->quant) {
                    /* keep the scale bytes sane: dequantize and check finiteness; skip non-finite draws */
                }
            }
            tt->dequant(wq, wd, K);
            int finite = 1;
            for (int64_t i = 0; i < K; i++) finite &= isfinite(wd[i]) && fabsf(wd[i]) < 1e6f;
            if (!finite) continue;
            const void *xin = x;
            if (tt->dot_type != INFER_TYPE_F32) {
                const infer__type_traits *qt = infer__type(tt->dot_type);
                qt->quant(x, xq, K);
                if (tt->dot_type == INFER_TYPE_Q8_K) {
                    const infer_block_q8_k *b = (const infer_block_q8_k *)xq;
                    for (int64_t i = 0; i < K; i++) xd[i] = b[i / 256].d * b[i / 256].qs[i % 256];
                } else if (tt->dot_type == INFER_TYPE_Q8_1) {
                    const infer_block_q8_1 *b = (const infer_block_q8_1 *)xq;
                    for (int64_t i = 0; i < K; i++) xd[i] = infer__fp16_to_fp32(b[i / 32].d) * b[i / 32].qs[i % 32];
                } else {
                    const infer_block_q8_0 *b = (const infer_block_q8_0 *)xq;
                    for (int64_t i = 0; i < K; i++) xd[i] = infer__fp16_to_fp32(b[i / 32].d) * b[i / 32].qs[i % 32];
                }
                xin = xq;
            } else memcpy(xd, x, K * 4);
            double ref = 0, mag = 0;
            for (int64_t i = 0; i < K; i++) { ref += (double)wd[i] * xd[i]; mag += fabs((double)wd[i] * xd[i]); }
            float got = tt->dot(K, wq, xin);
            /* both sides see identical values; only f32 summation order differs */
            CHECK_MSG(fabs(got - ref) <= 1e-5 * mag + 1e-6, "%s: dot %.8g vs dequantized %.8g (sum|wx| %.4g)", tt->name, got, ref, mag);
            tested++;
        }
    }
    CHECK(tested > 20);
    free(w); free(x); free(wd); free(xd); free(wq); free(xq);
}

/* I2_S (BitNet's fork): ternary codes packed 4 per byte in 128-element chunks + one f32 scale */
static void test_quant_i2_s(void) {
    infer__rng rng;
    infer__rng_seed(&rng, 5);
    const int64_t n = 512;
    float w[512], back[512], x[512];
    uint8_t q[512 / 4 + 32];
    for (int64_t i = 0; i < n; i++) {   /* already ternary: {-s, 0, +s} round-trips exactly */
        int t = (int)(infer__rng_next(&rng) % 3) - 1;
        w[i] = 0.37f * t;
        x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
    }
    infer__quant_i2_s(w, q, n);
    float scale;
    memcpy(&scale, q + n / 4, 4);
    CHECK_NEAR(scale, 0.37f, 1e-7);
    infer__dequant_i2_s(q, scale, back, n);
    CHECK(memcmp(w, back, sizeof w) == 0);
    /* element k of a 128-chunk sits in byte k%32 at shift 6-2*(k/32): check one by hand */
    CHECK(((q[5] >> 6) & 3) == (uint8_t)(w[5] / 0.37f + 1.5f) && ((q[5] >> 4) & 3) == (uint8_t)(w[37] / 0.37f + 1.5f));
    /* the dot the matmul runs (against Q8_K activations, unscaled), scalar and this CPU's
     * tier, equals dequantize-then-dot */
    infer_block_q8_k xq[512 / INFER_QK_K];
    infer__quant_q8_k(x, xq, n);
    double ref = 0;
    for (int64_t i = 0; i < n; i++) ref += (double)back[i] / scale * xq[i / INFER_QK_K].d * xq[i / INFER_QK_K].qs[i % INFER_QK_K];
    CHECK_NEAR(infer__dot_i2_s_q8_k(n, q, xq), ref, 1e-4);
    CHECK_NEAR(infer__matmul_dot(INFER_TYPE_I2_S)(n, q, xq), ref, 1e-4);
    /* non-ternary input: absmean codes, scale = mean |w| over the non-zero codes */
    for (int64_t i = 0; i < n; i++) w[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
    infer__quant_i2_s(w, q, n);
    memcpy(&scale, q + n / 4, 4);
    infer__dequant_i2_s(q, scale, back, n);
    CHECK(rel_rms(back, w, n) < 0.6 && scale > 0.3f && scale < 1.0f);
}

/* ---- >>ternary: the ternary kernels, every tier against the scalar references ----
 * Weights are random bytes (every 2-bit code including the unused 3, every TQ1_0 byte) with
 * block scales of both signs, zero and tiny; activations uniform, all +-127, or zero in
 * some blocks. Rows of 1..27 blocks (TQ) and 1..55 chunks of 128 (I2_S: odd counts end in
 * half a Q8_K block). x86 tiers: |fast - ref| <= 1e-6 * M, M = sum_k |w_k x_k| (the float
 * scaling of exact integer partial sums differs); NEON: bit-identical. */
static void bn_fill_q8_k(infer__rng *r, int mode, int64_t n, float *x, infer_block_q8_k *xq) {
    const int64_t np = (n + INFER_QK_K - 1) / INFER_QK_K * INFER_QK_K;
    for (int64_t i = 0; i < np; i++) {
        x[i] = i >= n ? 0.0f : (float)(infer__rng_uniform(r) * 2 - 1);
        if (mode == 1) x[i] = i >= n ? 0.0f : (infer__rng_next(r) & 1) ? 1.0f : -1.0f;        /* every code +-127 */
        if (mode == 2 && (i / INFER_QK_K) % 2 == 1) x[i] = 0;                                 /* zero blocks */
    }
    infer__quant_q8_k(x, xq, np);
}

static double bn_term_mag(const float *wd, const infer_block_q8_k *xq, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m += fabs((double)wd[i] * xq[i / INFER_QK_K].d * xq[i / INFER_QK_K].qs[i % INFER_QK_K]);
    return m;
}

/* the CPU kernel table's row of a type (NULL: none), and the dot the dispatch should pick:
 * the first tier with a cell, else the scalar reference */
static const infer__cpu_row *cpu_row(infer_type t) {
    for (int i = 0; i < INFER__N_CPU_ROWS; i++) if (infer__cpu_rows[i].type == t) return &infer__cpu_rows[i];
    return NULL;
}
static infer__dot_fn cpu_best_dot(infer_type t) {
    const infer__cpu_row *r = cpu_row(t);
    for (int tier = 0; r && tier < INFER__N_TIERS; tier++) if (r->dot[tier]) return r->dot[tier];
    return infer__type(t) ? infer__type(t)->dot : NULL;
}

static void test_ternary_tiers_vs_scalar(void) {
    infer__rng r;
    infer__rng_seed(&r, 2024);
    const int64_t maxn = 55 * 128 + 256;
    float *x = malloc(sizeof(float) * maxn), *wd = malloc(sizeof(float) * maxn);
    uint8_t *w = malloc((size_t)maxn);
    infer_block_q8_k *xq = malloc(sizeof(infer_block_q8_k) * (maxn / 256 + 1));
    static const int tq_blocks[] = { 1, 2, 3, 5, 7, 10, 11, 27 }, i2_chunks[] = { 1, 2, 3, 5, 7, 20, 21, 54, 55 };
    static const infer_type tern[3] = { INFER_TYPE_TQ1_0, INFER_TYPE_TQ2_0, INFER_TYPE_I2_S };
    int ntiers = 0;
    for (int ti = 0; ti < INFER__N_TIERS; ti++) {
        const char *tier = infer__tier_names[ti];
        const int exact = !strcmp(tier, "neon");
        double worst = 0;
        int checks = 0;
        for (int type = 0; type < 3; type++) {
            infer__dot_fn f = cpu_row(tern[type]) ? cpu_row(tern[type])->dot[ti] : NULL, fr = infer__type(tern[type])->dot;
            if (!f) continue;
            const int ns = type < 2 ? 8 : 9;
            for (int si = 0; si < ns; si++) {
                const int64_t n = type < 2 ? 256 * tq_blocks[si] : 128 * i2_chunks[si];
                for (int mode = 0; mode < 3; mode++) {
                    const size_t bytes = type == 0 ? infer_type_row_size(INFER_TYPE_TQ1_0, n) : type == 1 ? infer_type_row_size(INFER_TYPE_TQ2_0, n) : (size_t)n / 4;
                    for (size_t i = 0; i < bytes; i++) w[i] = (uint8_t)infer__rng_next(&r);
                    if (type < 2) {                                  /* block scales: +-(1e-3..1), 0, tiny */
                        const size_t bb = type == 0 ? sizeof(infer_block_tq1_0) : sizeof(infer_block_tq2_0);
                        for (int64_t b = 0; b < n / 256; b++) {
                            const uint64_t u = infer__rng_next(&r);
                            float d = (float)(0.001 + infer__rng_uniform(&r));
                            if (u & 1) d = -d;
                            if (u % 13 == 0) d = 0;
                            if (u % 17 == 0) d = 6e-8f;
                            const infer_half h = infer__fp32_to_fp16(d);
                            memcpy(w + (size_t)b * bb + bb - 2, &h, 2);
                        }
                        infer__type(type == 0 ? INFER_TYPE_TQ1_0 : INFER_TYPE_TQ2_0)->dequant(w, wd, n);
                    } else {
                        infer__dequant_i2_s(w, 1.0f, wd, n);
                    }
                    bn_fill_q8_k(&r, mode, n, x, xq);
                    const float got = f(n, w, xq), want = fr(n, w, xq);
                    const double mag = bn_term_mag(wd, xq, n), e = fabs((double)got - want);
                    if (mag > 0 && e / mag > worst) worst = e / mag;
                    checks++;
                    if (exact) CHECK_MSG(got == want, "%s type %d n=%lld mode %d: %.9g != %.9g", tier, type, (long long)n, mode, got, want);
                    else CHECK_MSG(e <= 1e-6 * mag + 1e-30, "%s type %d n=%lld mode %d: %.9g vs %.9g (M %.4g)", tier, type, (long long)n, mode, got, want, mag);
                }
            }
        }
        if (!checks) continue;
        ntiers++;
        printf("    %s: %d rows, largest |fast - ref| / M = %.2g\n", tier, checks, worst);
        CHECK_MSG(checks == (8 + 8 + 9) * 3, "%s: %d rows checked, not the 3 ternary types' 75", tier, checks);
    }
    if (ntiers == 0) printf("    no SIMD tier in this build: the scalar references only\n");
    /* the scalar I2_S reference against dequantize-then-dot (Q8_K values), with an odd chunk count */
    for (int c = 1; c <= 5; c += 2) {
        const int64_t n = 128 * c;
        for (size_t i = 0; i < (size_t)n / 4; i++) w[i] = (uint8_t)infer__rng_next(&r);
        infer__dequant_i2_s(w, 1.0f, wd, n);
        bn_fill_q8_k(&r, 0, n, x, xq);
        double want = 0;
        for (int64_t i = 0; i < n; i++) want += (double)wd[i] * xq[i / 256].d * xq[i / 256].qs[i % 256];
        CHECK_NEAR(infer__dot_i2_s_q8_k(n, w, xq), want, 1e-5 * bn_term_mag(wd, xq, n) + 1e-7);
    }
    /* the dispatch: the best tier for the ternary types */
    for (int type = 0; type < 3; type++) {
        CHECK(infer__matmul_dot(tern[type]) == cpu_best_dot(tern[type]) && infer__matmul_dot(tern[type]) != NULL);
        CHECK(infer__matmul_dot_type(tern[type]) == (tern[type] == INFER_TYPE_I2_S ? INFER_TYPE_Q8_K : infer__type(tern[type])->dot_type));
    }
    free(x); free(wd); free(w); free(xq);
}

/* ---- >>simd, >>tiles: the vectorized dots, tiles and activation quantizers ----
 * The SIMD dot products (>>simd) against the scalar reference dots of the traits table.
 *
 * For every tier compiled into this build (avx512, avx2, neon) and every type it covers:
 * rows of one block, a few odd block counts and 4096 + one block, with weights that are
 *   - quantized random floats with outliers (the real thing),
 *   - random bytes with sane scale fields (every code pattern, full-range sub-scales),
 *   - bytes drawn from {0x00, 0xFF, 0x80, 0x7F, 0x88, 0x77} (extreme codes),
 * against activations that are uniform, large with outliers, all +-max (every int8 code
 * at +-127, the worst case for int16 pair sums) or zero in some blocks.
 * Tolerance: |simd - ref| <= tol * M, M = sum_k |w_k x_k| over the dequantized values,
 * tol = 1e-5 for F32/F16/BF16 (f32 accumulation where the reference uses double) and
 * 2e-6 for the integer dots over 32-element blocks (exact integer sums; only the float
 * scaling and summing order of the block sums differs);
 * for the affine types (Q4_1, Q5_1: w = d*q + m) the dots add the d*q*x and m*x parts
 * separately, and these can cancel, so M = sum_k (|w_k - m| + |m|) |x_k| there. The
 * kernels over 256-element super-blocks (Q2_K..Q6_K, IQ4_XS, TQ1_0, TQ2_0) must agree
 * exactly. */

#if !defined(INFER_NO_SIMD)
/* Types whose SIMD kernels return bit-identical results (see >>simd, "Exactness"). */
static int simd_exact_type(infer_type t) {
    return t == INFER_TYPE_Q2_K || t == INFER_TYPE_Q3_K || t == INFER_TYPE_Q4_K || t == INFER_TYPE_Q5_K ||
           t == INFER_TYPE_Q6_K || t == INFER_TYPE_IQ4_XS || t == INFER_TYPE_TQ1_0 || t == INFER_TYPE_TQ2_0;
}

/* M of the tolerance above: the magnitude of the terms the dot adds up. */
static double simd_term_mag(infer_type t, const uint8_t *wq, const float *wd, const float *xd, int64_t n) {
    double mag = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = 0;
        if (t == INFER_TYPE_Q4_1) m = infer__fp16_to_fp32(((const infer_block_q4_1 *)wq)[i / 32].m);
        if (t == INFER_TYPE_Q5_1) m = infer__fp16_to_fp32(((const infer_block_q5_1 *)wq)[i / 32].m);
        if (t == INFER_TYPE_Q2_K) {                      /* w = d sc q - dmin m: the terms are d sc q and dmin m */
            const infer_block_q2_k *b = (const infer_block_q2_k *)wq + i / 256;
            m = -infer__fp16_to_fp32(b->dmin) * (b->scales[i % 256 / 16] >> 4);
        }
        if (t == INFER_TYPE_Q4_K || t == INFER_TYPE_Q5_K) {
            const uint8_t *b = wq + (size_t)(i / 256) * (t == INFER_TYPE_Q4_K ? sizeof(infer_block_q4_k) : sizeof(infer_block_q5_k));
            int sc, mn;
            infer__k4_scale_min(b + 4, (int)(i % 256 / 32), &sc, &mn);
            infer_half dmin;
            memcpy(&dmin, b + 2, 2);
            m = -infer__fp16_to_fp32(dmin) * mn;
        }
        mag += (fabs(wd[i] - m) + fabs(m)) * fabs((double)xd[i]);
    }
    return mag;
}

static void simd_put_half(infer__rng *r, uint8_t *p) {
    const double u = infer__rng_uniform(r);
    float v = (float)(0.001 + u * u);                     /* 1e-3 .. 1, denser near 0 */
    if (infer__rng_next(r) & 1) v = -v;
    if ((infer__rng_next(r) & 63) == 0) v = 0.0f;
    const infer_half h = infer__fp32_to_fp16(v);
    memcpy(p, &h, 2);
}

/* Overwrites the float scale fields of block `b` of type t with sane values. */
static void simd_fix_scales(infer__rng *r, infer_type t, uint8_t *b) {
    switch (t) {
    case INFER_TYPE_Q4_0: case INFER_TYPE_Q5_0: case INFER_TYPE_Q8_0: case INFER_TYPE_IQ4_NL:
    case INFER_TYPE_IQ4_XS:
        simd_put_half(r, b); break;                                    /* d first */
    case INFER_TYPE_Q4_1: case INFER_TYPE_Q5_1: case INFER_TYPE_Q4_K: case INFER_TYPE_Q5_K:
        simd_put_half(r, b); simd_put_half(r, b + 2); break;           /* d, m / dmin */
    case INFER_TYPE_Q2_K:
        simd_put_half(r, b + offsetof(infer_block_q2_k, d)); simd_put_half(r, b + offsetof(infer_block_q2_k, dmin)); break;
    case INFER_TYPE_Q3_K: simd_put_half(r, b + offsetof(infer_block_q3_k, d)); break;
    case INFER_TYPE_Q6_K: simd_put_half(r, b + offsetof(infer_block_q6_k, d)); break;
    case INFER_TYPE_TQ1_0: simd_put_half(r, b + offsetof(infer_block_tq1_0, d)); break;
    case INFER_TYPE_TQ2_0: simd_put_half(r, b + offsetof(infer_block_tq2_0, d)); break;
    case INFER_TYPE_MXFP4: b[0] = (uint8_t)(100 + infer__rng_next(r) % 40); break;  /* 2^-28 .. 2^11 */
    default: break;                                       /* NVFP4: every UE4M3 byte is finite */
    }
}

/* n weights of type t into `row` (mode 0: quantized floats, 1: random bytes, 2: extreme bytes). */
static void simd_make_weights(infer__rng *r, infer_type t, int mode, int64_t n, float *tmp, uint8_t *row) {
    const infer__type_traits *tt = infer__type(t);
    const int float_type = tt->blck == 1;
    if (mode == 0 || float_type) {
        for (int64_t i = 0; i < n; i++) {
            tmp[i] = (float)(infer__rng_uniform(r) * 2 - 1);
            if (infer__rng_next(r) % 97 == 0) tmp[i] *= 100.0f;                  /* outliers */
            if (float_type && mode == 2) tmp[i] = (infer__rng_next(r) & 1) ? 60000.0f : -1e-30f;
        }
        tt->quant(tmp, row, n);
        return;
    }
    static const uint8_t extreme[6] = { 0x00, 0xFF, 0x80, 0x7F, 0x88, 0x77 };
    const size_t bytes = infer_type_row_size(t, n);
    for (size_t i = 0; i < bytes; i++) row[i] = mode == 1 ? (uint8_t)infer__rng_next(r) : extreme[infer__rng_next(r) % 6];
    for (int64_t b = 0; b < n / tt->blck; b++) simd_fix_scales(r, t, row + (size_t)b * (size_t)tt->bytes);
}

/* n activations (mode 0: uniform, 1: x50 with outliers, 2: all +-1, 3: zero blocks) */
static void simd_make_acts(infer__rng *r, int mode, int64_t n, float *x) {
    for (int64_t i = 0; i < n; i++) {
        const float u = (float)(infer__rng_uniform(r) * 2 - 1);
        x[i] = mode == 0 ? u : mode == 1 ? 50.0f * u : mode == 2 ? (u < 0 ? -1.0f : 1.0f) : u;
        if (mode == 1 && infer__rng_next(r) % 61 == 0) x[i] *= 1000.0f;
        if (mode == 3 && (i / 32) % 3 == 1) x[i] = 0.0f;
    }
}

/* The activation row as the dot sees it: in dot_type blocks (quantized into xq) and as the
 * floats those blocks stand for (xd). Returns the pointer to pass to the dot. */
static const void *simd_prepare_acts(infer_type dt, const float *x, int64_t n, uint8_t *xq, float *xd) {
    if (dt == INFER_TYPE_F32) { memcpy(xd, x, (size_t)n * 4); return x; }
    infer__type(dt)->quant(x, xq, n);
    for (int64_t i = 0; i < n; i++) {
        if (dt == INFER_TYPE_Q8_K) { const infer_block_q8_k *b = (const infer_block_q8_k *)xq + i / 256; xd[i] = b->d * b->qs[i % 256]; }
        else if (dt == INFER_TYPE_Q8_1) { const infer_block_q8_1 *b = (const infer_block_q8_1 *)xq + i / 32; xd[i] = infer__fp16_to_fp32(b->d) * b->qs[i % 32]; }
        else { const infer_block_q8_0 *b = (const infer_block_q8_0 *)xq + i / 32; xd[i] = infer__fp16_to_fp32(b->d) * b->qs[i % 32]; }
    }
    return xq;
}

static void test_simd_dot_vs_scalar(void) {
    enum { NMAX = 4096 + 256 };
    infer__rng rng;
    infer__rng_seed(&rng, 2024);
    float *tmp = malloc(NMAX * 4), *x = malloc(NMAX * 4), *wd = malloc(NMAX * 4), *xd = malloc(NMAX * 4);
    uint8_t *wq = malloc(NMAX * 4), *xq = malloc(NMAX * 4);
    int ntiers = 0;
    for (int ti = 0; ti < INFER__N_TIERS; ti++) {
        const char *tier = infer__tier_names[ti];
        int ntypes = 0, nchecks = 0;
        double worst = 0;
        for (int t = 0; t < INFER_TYPE_COUNT; t++) {
            const infer__cpu_row *row = cpu_row((infer_type)t);
            const infer__dot_fn f = row ? row->dot[ti] : NULL;
            /* the ternary types' kernels are checked by ternary_tiers_vs_scalar */
            if (!f || t == INFER_TYPE_TQ1_0 || t == INFER_TYPE_TQ2_0 || t == INFER_TYPE_I2_S) continue;
            const infer__type_traits *tt = infer__type((infer_type)t);
            CHECK_MSG(tt && tt->dot && tt->dequant && tt->quant, "%s: SIMD dot for type %d without a full traits row", tier, t);
            if (!tt || !tt->dot || !tt->dequant || !tt->quant) continue;
            ntypes++;
            const int64_t B = tt->blck > 1 ? tt->blck : 1;
            const int64_t lens[] = { B, 3 * B, 7 * B, 4096 + B, B == 1 ? 37 : 5 * B, B == 1 ? 4099 : 2 * B };
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                const int64_t n = lens[li];
                for (int wm = 0; wm < 3; wm++) {
                    simd_make_weights(&rng, (infer_type)t, wm, n, tmp, wq);
                    tt->dequant(wq, wd, n);
                    for (int am = 0; am < 4; am++) {
                        simd_make_acts(&rng, am, n, x);
                        const void *xin = simd_prepare_acts(tt->dot_type, x, n, xq, xd);
                        const double mag = simd_term_mag((infer_type)t, wq, wd, xd, n);
                        const float ref = tt->dot(n, wq, xin), got = f(n, wq, xin);
                        const double err = fabs((double)got - ref);
                        if (mag > 0 && err / mag > worst) worst = err / mag;
                        nchecks++;
                        if (simd_exact_type((infer_type)t))
                            CHECK_MSG(got == ref, "%s %s n=%lld w%d x%d: %.9g != reference %.9g", tier, tt->name, (long long)n, wm, am, got, ref);
                        else
                            CHECK_MSG(err <= (tt->blck == 1 ? 1e-5 : 2e-6) * mag, "%s %s n=%lld w%d x%d: %.9g vs reference %.9g (M %.4g)",
                                      tier, tt->name, (long long)n, wm, am, got, ref, mag);
                    }
                }
            }
        }
        if (!ntypes) continue;
        ntiers++;
        printf("    %s: %d types, %d rows, largest |simd - ref| / M = %.2g\n", tier, ntypes, nchecks, worst);
    }
    if (ntiers == 0) printf("    no SIMD tier in this build (scalar dots only)\n");
    /* the dispatch picks the first tier that has the type, else the scalar dot; one row a type */
    for (int t = 0; t < INFER__TYPE_END; t++) {
        if (!infer__type((infer_type)t)) continue;
        CHECK_MSG(infer__matmul_dot((infer_type)t) == cpu_best_dot((infer_type)t), "type %d: dispatch picked the wrong dot", t);
        int rows = 0;
        for (int i = 0; i < INFER__N_CPU_ROWS; i++) rows += (int)infer__cpu_rows[i].type == t;
        CHECK_MSG(rows <= 1, "type %d has %d rows in the CPU kernel table", t, rows);
    }
    free(tmp); free(x); free(wd); free(xd); free(wq); free(xq);
}

/* The fast activation quantizers (>>tiles) give the scalar ones' bytes: random rows with
 * outliers and zero blocks, and rows built so that x / d lands exactly on .5 (roundf
 * rounds those away from zero, Q8_K's nearest_int to even) with the largest magnitude
 * present with both signs (Q8_K keeps the sign of the first). */
static void test_tiles_act_quant_vs_scalar(void) {
    enum { N = 4096 };
    infer__rng rng;
    infer__rng_seed(&rng, 5);
    float *x = malloc(N * 4);
    uint8_t *a = malloc(N * 2), *b = malloc(N * 2);
    const infer_type types[2] = { INFER_TYPE_Q8_0, INFER_TYPE_Q8_K };
    int checked = 0;
    for (int mode = 0; mode < 4; mode++) {
        for (int i = 0; i < N; i++) {
            if (mode < 3) simd_make_acts(&rng, mode == 2 ? 3 : mode, 1, x + i);
            else x[i] = (float)((int)(infer__rng_next(&rng) % 254) - 127) + ((infer__rng_next(&rng) & 1) ? 0.5f : 0.0f);
            if (mode == 3 && i % 32 == 0) x[i] = (i / 32) % 2 ? 127.0f : -127.0f;   /* d = 1 exactly */
            if (mode == 3 && i % 32 == 1) x[i] = -x[i - 1];
        }
        for (int t = 0; t < 2; t++) {
            const size_t bytes = infer_type_row_size(types[t], N);
            memset(a, 0x55, bytes); memset(b, 0xAA, bytes);
            infer__type(types[t])->quant(x, a, N);
            infer__act_quant(types[t])(x, b, N);
            CHECK_MSG(memcmp(a, b, bytes) == 0, "%s mode %d: fast quantizer differs from the scalar one", infer_type_name(types[t]), mode);
            checked++;
        }
    }
    printf("    Q8_0 and Q8_K activation quantizers: %d rows of %d values bit-identical\n", checked, N);
    free(x); free(a); free(b);
}

/* A fast tile's own consistency, given `full`, its outputs for the whole NR x NC tile at w
 * and x (leading dimension NR): every smaller shape, anchored anywhere, gives the same bits,
 * and the decode row kernel over nmv rows gives each row the 1 x 1 tile's bits */
static void tile_shapes_and_mv(const char *name, const infer__tile *t, int64_t K, const uint8_t *w, size_t wrow, const uint8_t *x, size_t xrow,
                               const float *full, int nmv) {
    const int NR = t->rows, NC = t->cols;
    float one[64], single[64];
    CHECK(NR * NC <= 64 && nmv <= 64);
    for (int nr = 1; nr <= NR; nr++)
        for (int nc = 1; nc <= NC; nc++) {
            const int r0 = NR - nr, c0 = (nr + nc) % (NC - nc + 1);
            t->fn(K, w + r0 * wrow, wrow, nr, x + c0 * xrow, xrow, nc, one, (size_t)NR);
            for (int c = 0; c < nc; c++)
                for (int r = 0; r < nr; r++)
                    CHECK_MSG(one[c * NR + r] == full[(c0 + c) * NR + r0 + r], "%s tile K=%lld %dx%d at (%d,%d): %.9g != %.9g", name,
                              (long long)K, nr, nc, r0 + r, c0 + c, one[c * NR + r], full[(c0 + c) * NR + r0 + r]);
        }
    if (t->mv)
        for (int c = 0; c < NC; c++) {
            t->mv(K, w, wrow, nmv, x + c * xrow, one);
            for (int r = 0; r < nmv; r++) {
                t->fn(K, w + r * wrow, wrow, 1, x + c * xrow, xrow, 1, single + r, 1);
                CHECK_MSG(one[r] == single[r], "%s decode kernel K=%lld row %d token %d: %.9g != tile %.9g", name, (long long)K, r, c, one[r], single[r]);
            }
        }
}

/* The matmul tiles (>>tiles): every output of a fast tile against the type's scalar dot of
 * the same weight row and the activations in the dot's format (same tolerance as above);
 * every tile shape (1..6 rows x 1..4 tokens) must give bit-identical outputs, which is what
 * makes results independent of thread count and batch size; row lengths cover partial
 * X4 groups (1, 2, 3 blocks left over) and float tails that are not a multiple of 16. */
static void test_tiles_vs_dot(void) {
    enum { KMAX = 2048 + 96, RMAX = 10, CMAX = 4 };   /* RMAX: tiles of every height, and a decode run of several rows */
    infer__rng rng;
    infer__rng_seed(&rng, 77);
    float *tmp = malloc(KMAX * 4), *x = malloc(CMAX * KMAX * 4), *xd = malloc(CMAX * KMAX * 4), *wd = malloc(RMAX * KMAX * 4);
    uint8_t *wq = malloc(RMAX * KMAX * 4), *xq = malloc(CMAX * KMAX * 4), *x4 = malloc(CMAX * (KMAX / 128 + 1) * INFER__X4_GROUP);
    int nfast = 0;
    for (int t = 0; t < INFER_TYPE_COUNT; t++) {
        const infer__tile tile = infer__tile_for((infer_type)t);
        if (!tile.fn) continue;
        const infer__type_traits *tt = infer__type((infer_type)t);
        const int NR = tile.rows, NC = tile.cols;
        CHECK(NR >= 1 && NR <= RMAX && NC >= 1 && NC <= CMAX);
        nfast++;
        const int64_t lens[] = { 32, 64, 96, 128, 160, 224, 2048, 2048 + 96, 48, 1000, 256, 768 };
        double worst = 0;
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            const int64_t K = lens[li];
            if (K % (tt->blck > 1 ? tt->blck : 1)) continue;
            const size_t wrow = infer_type_row_size((infer_type)t, K);
            for (int mode = 0; mode < 3; mode++) {
                for (int r = 0; r < RMAX; r++) {                  /* NR for the tiles, RMAX for the decode kernel */
                    simd_make_weights(&rng, (infer_type)t, mode, K, tmp, wq + r * wrow);
                    tt->dequant(wq + r * wrow, wd + r * K, K);
                }
                size_t xrow = K * 4, xdrow = infer_type_row_size(tt->dot_type, K);
                for (int c = 0; c < NC; c++) {
                    simd_make_acts(&rng, (mode + c) % 4, K, x + c * K);
                    simd_prepare_acts(tt->dot_type, x + c * K, K, xq + c * xdrow, xd + c * K);
                    if (tile.xlay == INFER__XLAY_X4) infer__x4_quant_row(x + c * K, K, x4 + c * infer__x4_row_bytes(K));
                    if (tile.xlay == INFER__XLAY_XK || tile.xlay == INFER__XLAY_XE) infer__xk_quant_blocks(x + c * K, x4 + c * infer__xk_row_bytes(K), 0, K / 256, tile.xlay);
                }
                const uint8_t *xin = tile.xlay != INFER__XLAY_DOT ? x4 : (const uint8_t *)x;
                if (tile.xlay != INFER__XLAY_DOT) xrow = tile.xlay == INFER__XLAY_X4 ? infer__x4_row_bytes(K) : infer__xk_row_bytes(K);
                float full[CMAX * RMAX];
                tile.fn(K, wq, wrow, NR, xin, xrow, NC, full, NR);
                for (int c = 0; c < NC; c++)
                    for (int r = 0; r < NR; r++) {
                        const float ref = tt->dot(K, wq + r * wrow, tt->dot_type == INFER_TYPE_F32 ? (const void *)(x + c * K) : (const void *)(xq + c * xdrow));
                        const double mag = simd_term_mag((infer_type)t, wq + r * wrow, wd + r * K, xd + c * K, K);
                        const double err = fabs((double)full[c * NR + r] - ref);
                        if (mag > 0 && err / mag > worst) worst = err / mag;
                        CHECK_MSG(err <= (tt->blck == 1 ? 1e-5 : 2e-6) * mag, "%s tile K=%lld mode %d (%d,%d): %.9g vs reference %.9g (M %.4g)",
                                  tt->name, (long long)K, mode, r, c, full[c * NR + r], ref, mag);
                    }
                tile_shapes_and_mv(tt->name, &tile, K, wq, wrow, xin, xrow, full, RMAX);   /* the decode kernel over RMAX rows */
            }
        }
        printf("    %s tile %dx%d (%s): largest |tile - ref| / M = %.2g\n", tt->name, NR, NC, tile.xlay == INFER__XLAY_X4 ? "X4 int8" : tile.xlay == INFER__XLAY_XK ? "XK int8" : tile.xlay == INFER__XLAY_XE ? "XE int8" : "f32", worst);
    }
    printf("    %d weight types with fast tiles in this build\n", nfast);
    free(tmp); free(x); free(xd); free(wd); free(wq); free(xq); free(x4);
}
#else
/* Built with -DINFER_NO_SIMD (or on a CPU with no SIMD tier): every type must use its scalar dot. */
static void test_simd_dot_vs_scalar(void) {
    for (int t = 0; t < INFER_TYPE_COUNT; t++) {
        if (!infer__type((infer_type)t)) continue;
        const infer__cpu_row *row = cpu_row((infer_type)t);
        for (int ti = 0; row && ti < INFER__N_TIERS; ti++) CHECK_MSG(row->dot[ti] == NULL, "type %d: SIMD dot in a build without SIMD", t);
        CHECK_MSG(infer__matmul_dot((infer_type)t) == infer__traits[t].dot, "type %d: not the scalar dot", t);
    }
    printf("    SIMD disabled in this build: scalar dots only\n");
}
static void test_tiles_act_quant_vs_scalar(void) {
    float x[512];
    uint8_t a[1024], b[1024];
    for (int i = 0; i < 512; i++) x[i] = sinf(i * 0.7f) * 50.0f;
    infer__quant_q8_0(x, a, 512);
    infer__act_quant(INFER_TYPE_Q8_0)(x, b, 512);
    CHECK(memcmp(a, b, infer_type_row_size(INFER_TYPE_Q8_0, 512)) == 0);
    printf("    SIMD disabled in this build: the activation quantizers are the scalar ones\n");
}
static void test_tiles_vs_dot(void) {
    for (int t = 0; t < INFER_TYPE_COUNT; t++) CHECK_MSG(infer__tile_for((infer_type)t).fn == NULL, "type %d: a fast tile in a build without SIMD", t);
    printf("    SIMD disabled in this build: matmuls use the reference tile\n");
}
#endif

/* Activations that overflowed (NaN, Inf) through every activation quantizer: the fast ones
 * give the scalar ones' bytes, a NaN block gets scale NaN and an Inf block a non-finite
 * scale (so its dots are NaN, as in the exact maths), and nothing reads past a block (the
 * NaN sits in a row's last block and last element, where a search for the largest value
 * ran off the end; ASan builds check the bounds). */
static void test_robust_act_quant_nonfinite(void) {
    enum { N = 1024 };
    const float bad[3] = { NAN, INFINITY, -INFINITY };
    float *x = malloc(N * 4);
    uint8_t *a = malloc(N * 2), *b = malloc(N * 2), *x4 = malloc((N / 128) * INFER__X4_GROUP), *xk = malloc((N / 256) * INFER__XK_GROUP);
    const infer_type types[2] = { INFER_TYPE_Q8_0, INFER_TYPE_Q8_K };
    infer__rng rng;
    infer__rng_seed(&rng, 11);
    int rows = 0;
    for (int v = 0; v < 3; v++) {
        for (int where = 0; where < 4; where++) {     /* last element, first, middle, a whole block */
            for (int i = 0; i < N; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            if (where == 0) x[N - 1] = bad[v];
            if (where == 1) x[N - 256] = bad[v];
            if (where == 2) x[N - 100] = bad[v], x[N - 99] = 1e30f;
            if (where == 3) for (int i = N - 256; i < N; i++) x[i] = bad[v];
            for (int t = 0; t < 2; t++) {
                const size_t bytes = infer_type_row_size(types[t], N);
                memset(a, 0x55, bytes); memset(b, 0xAA, bytes);
                infer__type(types[t])->quant(x, a, N);
                infer__act_quant(types[t])(x, b, N);
                CHECK_MSG(memcmp(a, b, bytes) == 0, "%s, %g at %d: fast quantizer differs from the scalar one", infer_type_name(types[t]), bad[v], where);
                float d;    /* the last block's scale: non-finite, NaN for a NaN */
                if (t == 0) d = infer__fp16_to_fp32(((const infer_block_q8_0 *)b)[N / 32 - 1 - (where == 1 ? 7 : where == 2 ? 3 : 0)].d);
                else d = ((const infer_block_q8_k *)b)[N / 256 - 1].d;
                CHECK_MSG(!isfinite(d) && (v > 0 || d != d), "%s, %g at %d: block scale %g", infer_type_name(types[t]), bad[v], where, d);
                rows++;
            }
            infer_block_q8_1 q1[N / 32];
            infer__quant_q8_1(x, q1, N);
            CHECK(!isfinite(infer__fp16_to_fp32(q1[N / 32 - 1 - (where == 1 ? 7 : where == 2 ? 3 : 0)].d)));
            infer__x4_quant_row(x, N, x4);
            infer__xk_quant_blocks(x, xk, 0, N / 256, INFER__XLAY_XK);
            float dk;
            memcpy(&dk, xk + (N / 256 - 1) * INFER__XK_GROUP + 288, 4);
            CHECK(!isfinite(dk));
        }
    }
    printf("    %d rows with NaN / Inf: fast and scalar quantizers agree, scales non-finite\n", rows);
    free(x); free(a); free(b); free(x4); free(xk);
}

/* ---- >>gguf: valid files, truncation, corruption, alignment, type ids ---- */
/* a small valid file: 3 kvs (one a string array), 2 f32 tensors */
static buf_t make_gguf(void) {
    buf_t b = { 0 };
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, 2); b_u64(&b, 3);
    b_kv_str(&b, "general.architecture", "llama");
    b_kv_u32(&b, "general.alignment", 32);
    b_str(&b, "tokenizer.ggml.tokens"); b_u32(&b, INFER_GGUF_ARRAY); b_u32(&b, INFER_GGUF_STRING); b_u64(&b, 2); b_str(&b, "a"); b_str(&b, "bc");
    b_str(&b, "t0"); b_u32(&b, 2); b_u64(&b, 4); b_u64(&b, 2); b_u32(&b, INFER_TYPE_F32); b_u64(&b, 0);
    b_str(&b, "t1"); b_u32(&b, 1); b_u64(&b, 8); b_u32(&b, INFER_TYPE_F32); b_u64(&b, 32);
    b_pad(&b, 32);
    float data[16];
    for (int i = 0; i < 16; i++) data[i] = (float)i;
    b_put(&b, data, 32);      /* t0: 8 floats */
    b_put(&b, data, 32);      /* t1: 8 floats */
    return b;
}

static void test_gguf_parse_valid(void) {
    buf_t b = make_gguf();
    infer_gguf g;
    infer_error err;
    CHECK(infer_gguf_parse(&g, b.p, b.n, &err) == INFER_OK);
    CHECK(g.n_kv == 3 && g.n_tensors == 2);
    const infer_tensor *t1 = infer_gguf_tensor(&g, "t1");
    CHECK(t1 && t1->ne[0] == 8 && t1->nbytes == 32 && ((const float *)t1->data)[3] == 3.0f);
    const infer_gguf_kv *kv = infer_gguf_find(&g, "tokenizer.ggml.tokens");
    CHECK(kv && kv->type == INFER_GGUF_ARRAY && kv->arr_n == 2);
    infer_gguf_free(&g);
    free(b.p);
}

static void test_gguf_truncated(void) {
    buf_t b = make_gguf();
    infer_error err;
    int bad = 0;
    for (size_t cut = 0; cut < b.n; cut++) {     /* every prefix shorter than the file fails */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, b.p, cut);
        infer_gguf g;
        if (infer_gguf_parse(&g, p, cut, &err) == INFER_OK) { bad++; infer_gguf_free(&g); }
        free(p);
    }
    CHECK_MSG(bad == 0, "%d truncated files parsed as valid", bad);
    free(b.p);
    /* the real model file cut at many points */
    size_t n;
    uint8_t *f = slurp(SHARED "/models/stories260K.gguf", &n);
    if (!f) SKIP("../shared/models/stories260K.gguf not found");
    bad = 0;
    for (size_t cut = 0; cut < n; cut += 1 + cut / 7) {
        infer_model *m;
        if (infer_model_load_memory(&m, f, cut, NULL, &err) == INFER_OK) { bad++; infer_model_free(m); }
    }
    CHECK_MSG(bad == 0, "%d truncated models loaded", bad);
    free(f);
}

static int parse_patched(const buf_t *b, size_t off, const void *patch, size_t n, infer_error *err) {
    uint8_t *p = malloc(b->n);
    memcpy(p, b->p, b->n);
    memcpy(p + off, patch, n);
    infer_gguf g;
    int st = infer_gguf_parse(&g, p, b->n, err);
    if (st == INFER_OK) infer_gguf_free(&g);
    free(p);
    return st;
}

static void test_gguf_corrupt(void) {
    buf_t b = make_gguf();
    infer_error err;
    uint64_t huge = 0x7fffffffffffffffull;
    uint32_t v1 = 1, badtype = 99;
    CHECK(parse_patched(&b, 0, "GGUX", 4, &err) != INFER_OK);              /* magic */
    CHECK(parse_patched(&b, 4, &v1, 4, &err) != INFER_OK);                 /* version 1 */
    CHECK(parse_patched(&b, 8, &huge, 8, &err) != INFER_OK);               /* n_tensors */
    CHECK(parse_patched(&b, 16, &huge, 8, &err) != INFER_OK);              /* n_kv */
    CHECK(strstr(err.msg, "metadata count") != NULL);
    CHECK(parse_patched(&b, 24, &huge, 8, &err) != INFER_OK);              /* first key length */
    const size_t vt = 24 + 8 + strlen("general.architecture");
    CHECK(parse_patched(&b, vt, &badtype, 4, &err) != INFER_OK);           /* value type */
    CHECK(strstr(err.msg, "general.architecture") != NULL);
    CHECK(parse_patched(&b, vt + 4, &huge, 8, &err) != INFER_OK);          /* string length */
    /* find fields by searching for the tensor names */
    size_t t0 = 0;
    for (size_t i = 0; i + 2 < b.n; i++) if (!memcmp(b.p + i, "t0", 2) && b.p[i - 8] == 2) { t0 = i; break; }
    CHECK(t0 > 0);
    uint32_t nd = 9;
    CHECK(parse_patched(&b, t0 + 2, &nd, 4, &err) != INFER_OK);            /* n_dims */
    int64_t neg = -5, big = (int64_t)1 << 40;
    CHECK(parse_patched(&b, t0 + 6, &neg, 8, &err) != INFER_OK);           /* negative dim */
    CHECK(parse_patched(&b, t0 + 6, &big, 8, &err) != INFER_OK);           /* data past the end */
    CHECK(strstr(err.msg, "t0") != NULL);
    CHECK(parse_patched(&b, t0 + 22, &badtype, 4, &err) != INFER_OK);      /* tensor type */
    CHECK(err.status == INFER_ERR_UNSUPPORTED);
    uint64_t off = 8;
    CHECK(parse_patched(&b, t0 + 26, &off, 8, &err) != INFER_OK);          /* misaligned offset */
    CHECK(parse_patched(&b, t0 + 26, &huge, 8, &err) != INFER_OK);         /* offset overflow */
    CHECK(parse_patched(&b, t0 + 34 + 8, "t0", 2, &err) != INFER_OK);      /* duplicate tensor name */
    CHECK(strstr(err.msg, "duplicate") != NULL);
    /* duplicate key: rename general.alignment's key to general.architecture (same length? no: build) */
    buf_t d = { 0 };
    b_put(&d, "GGUF", 4); b_u32(&d, 3); b_u64(&d, 0); b_u64(&d, 2);
    b_kv_u32(&d, "a.b", 1); b_kv_u32(&d, "a.b", 2);
    infer_gguf g;
    CHECK(infer_gguf_parse(&g, d.p, d.n, &err) != INFER_OK && strstr(err.msg, "duplicate key"));
    /* alignment that is not a power of two */
    d.n = 0;
    b_put(&d, "GGUF", 4); b_u32(&d, 3); b_u64(&d, 0); b_u64(&d, 1);
    b_kv_u32(&d, "general.alignment", 24);
    CHECK(infer_gguf_parse(&g, d.p, d.n, &err) != INFER_OK && strstr(err.msg, "alignment"));
    /* random byte flips never crash (and anything that parses is self-consistent) */
    infer__rng rng;
    infer__rng_seed(&rng, 7);
    for (int it = 0; it < 3000; it++) {
        uint8_t *p = malloc(b.n);
        memcpy(p, b.p, b.n);
        for (int k = 0; k < 3; k++) p[infer__rng_next(&rng) % b.n] ^= (uint8_t)(1 + infer__rng_next(&rng) % 255);
        if (infer_gguf_parse(&g, p, b.n, &err) == INFER_OK) {
            for (int64_t i = 0; i < g.n_tensors; i++) {
                const uint8_t *s = g.tensors[i].data;
                CHECK(s >= p && s + g.tensors[i].nbytes <= p + b.n);
            }
            infer_gguf_free(&g);
        }
        free(p);
    }
    free(d.p);
    free(b.p);
}

/* a GGUF whose general.alignment is A, hand-built: one F32 tensor t [8] at offset 0 */
static buf_t aligned_gguf(uint32_t A) {
    buf_t b = { 0 };
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, 1); b_u64(&b, 1);
    b_kv_u32(&b, "general.alignment", A);
    b_str(&b, "t"); b_u32(&b, 1); b_u64(&b, 8); b_u32(&b, INFER_TYPE_F32); b_u64(&b, 0);
    b_pad(&b, A);
    float data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    b_put(&b, data, 32);
    return b;
}

/* general.alignment: a power of two of at least 8, else a clear error (1, 2 and 4 would put
 * f32 data at unaligned addresses); bytes that start at an unaligned address are refused */
static void test_robust_gguf_alignment(void) {
    const uint32_t al[8] = { 1, 2, 4, 12, 8, 16, 32, 64 };
    for (int i = 0; i < 8; i++) {
        buf_t b = aligned_gguf(al[i]);
        infer_gguf g;
        infer_error err;
        const infer_status st = infer_gguf_parse(&g, b.p, b.n, &err);
        if (i < 4) CHECK_MSG(st == INFER_ERR_FORMAT && strstr(err.msg, "general.alignment"), "alignment %u: %s", al[i], st ? err.msg : "accepted");
        else {
            CHECK_MSG(st == INFER_OK, "alignment %u: %s", al[i], err.msg);
            if (st == INFER_OK) { CHECK((uintptr_t)g.tensors[0].data % 8 == 0 && ((const float *)g.tensors[0].data)[7] == 8); infer_gguf_free(&g); }
        }
        if (al[i] == 2 && file_exists("./infer")) {             /* the command line says so too */
            FILE *f = fopen(tmp_path("infer_rb_al.gguf"), "wb");
            CHECK(f && fwrite(b.p, 1, b.n, f) == b.n);
            if (f) fclose(f);
            char out[4096];
            CHECK(run_cmd("./infer -m $INFER_TMP/infer_rb_al.gguf -p hi 2>&1", out, sizeof out) == 1 && strstr(out, "alignment"));
            remove(tmp_path("infer_rb_al.gguf"));
        }
        if (i == 6) {                                            /* the same bytes one address further */
            uint8_t *q = malloc(b.n + 8);
            memcpy(q + 1, b.p, b.n);
            CHECK(infer_gguf_parse(&g, q + 1, b.n, &err) == INFER_ERR_ARG && strstr(err.msg, "aligned"));
            free(q);
        }
        free(b.p);
    }
    infer_error err;
    CHECK(infer_gguf_write(tmp_path("infer_rb_al.gguf"), NULL, 0, NULL, 0, 4, &err) == INFER_ERR_ARG);
}

/* tensor type ids: ggml's ids with a block format, and BitNet's 36 (read as I2_S); anything
 * else -- ids ggml removed, ids past the table, and 100, this engine's private I2_S number --
 * is refused with the id in the message */
static void test_robust_gguf_type_ids(void) {
    buf_t b = make_gguf();
    size_t t1 = 0;
    for (size_t i = 8; i + 2 < b.n; i++) if (!memcmp(b.p + i, "t1", 2) && b.p[i - 8] == 2) { t1 = i; break; }
    CHECK(t1 > 0);
    const int32_t bad[9] = { 100, 4, 5, 31, 37, 38, 43, -1, 1000 };
    infer_error err;
    for (int i = 0; i < 9; i++) {
        char want[32];
        snprintf(want, sizeof want, "type id %d", bad[i]);
        CHECK_MSG(parse_patched(&b, t1 + 14, &bad[i], 4, &err) == INFER_ERR_UNSUPPORTED && strstr(err.msg, want), "id %d: %s", bad[i], err.msg);
    }
    const int32_t good = INFER_TYPE_F32;
    CHECK(parse_patched(&b, t1 + 14, &good, 4, &err) == INFER_OK);
    free(b.p);
}

/* ---- >>cpu: the CPU kernels against their formulas ---- */
static float qw_uniform(infer__rng *r, float lo, float hi) { return lo + (hi - lo) * (float)infer__rng_uniform(r); }
static void qw_fill(infer__rng *r, float *x, size_t n, float lo, float hi) { for (size_t i = 0; i < n; i++) x[i] = qw_uniform(r, lo, hi); }

/* the F16 cache's row store (vector path where there is one) against the scalar conversion
 * of the saturated value: every binary16 value, the midpoints between neighbours (ties to
 * even) and one f32 step either side, f32 subnormals, zeros, values beyond 65504, Inf;
 * and a NaN, which must come out as the scalar's canonical NaN with the rest unchanged */
static void test_cpu_f16_store(void) {
    float *x = malloc(sizeof(float) * 65536 * 4);
    infer_half *got = malloc(sizeof(infer_half) * 65536 * 4);
    size_t n = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00) continue;
        const float a = infer__fp16_to_fp32((infer_half)h), b = infer__fp16_to_fp32((infer_half)(h + 1));
        x[n++] = a;
        if ((h & 0x7fff) == 0x7bff) { x[n++] = a * 1.0001f; x[n++] = a * 1e3f; x[n++] = a * INFINITY; continue; }
        const float mid = (a + b) / 2;                   /* exact: a and b are binary16 neighbours */
        x[n++] = mid; x[n++] = nextafterf(mid, -INFINITY); x[n++] = nextafterf(mid, INFINITY);
    }
    x[n++] = 1e-40f; x[n++] = -1e-42f; x[n++] = -0.0f; x[n++] = 3e-8f; x[n++] = 2.98e-8f;
    n = n / 16 * 16;
    infer__f16_store(got, x, (int64_t)n);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (got[i] != infer__fp32_to_fp16(infer__f16_saturate(x[i]))) { bad++; if (first == n) first = i; }
    CHECK_MSG(bad == 0, "%zu of %zu values differ from the scalar conversion (first: %.9g -> 0x%04x, scalar 0x%04x)", bad, n,
              first < n ? x[first] : 0.0, first < n ? got[first] : 0, first < n ? infer__fp32_to_fp16(infer__f16_saturate(x[first])) : 0);
    x[37] = NAN; x[38] = -NAN;
    infer__f16_store(got, x, 64);
    bad = 0;
    for (size_t i = 0; i < 64; i++) bad += got[i] != infer__fp32_to_fp16(infer__f16_saturate(x[i]));
    CHECK_MSG(bad == 0 && (got[37] & 0x7fff) == 0x7e00, "with a NaN: %zu differ, NaN -> 0x%04x", bad, got[37]);
    free(x); free(got);
}

/* random DeltaNet inputs shaped like the model's: unit q and k, decays exp(g) in (exp(g_min), 1),
 * beta in (0, 1), a random starting state */
typedef struct { int T, n_k, n_v, d_k, d_v; float *q, *k, *v, *g, *beta, *s0; } qw_dn_case;
static qw_dn_case qw_dn_make(int T, int n_k, int n_v, int d_k, int d_v, float g_min, uint64_t seed) {
    qw_dn_case c = { T, n_k, n_v, d_k, d_v, NULL, NULL, NULL, NULL, NULL, NULL };
    infer__rng r;
    infer__rng_seed(&r, seed);
    c.q = malloc(sizeof(float) * T * n_k * d_k); c.k = malloc(sizeof(float) * T * n_k * d_k);
    c.v = malloc(sizeof(float) * T * n_v * d_v); c.g = malloc(sizeof(float) * T * n_v); c.beta = malloc(sizeof(float) * T * n_v);
    c.s0 = malloc(sizeof(float) * n_v * d_v * d_k);
    qw_fill(&r, c.q, (size_t)T * n_k * d_k, -1, 1); qw_fill(&r, c.k, (size_t)T * n_k * d_k, -1, 1);
    infer__cpu_l2norm(NULL, c.q, T * n_k, d_k, 1e-6f); infer__cpu_l2norm(NULL, c.k, T * n_k, d_k, 1e-6f);
    qw_fill(&r, c.v, (size_t)T * n_v * d_v, -2, 2); qw_fill(&r, c.g, (size_t)T * n_v, g_min, 0);
    qw_fill(&r, c.beta, (size_t)T * n_v, 0, 1); qw_fill(&r, c.s0, (size_t)n_v * d_v * d_k, -0.5f, 0.5f);
    return c;
}
static void qw_dn_free(qw_dn_case *c) { free(c->q); free(c->k); free(c->v); free(c->g); free(c->beta); free(c->s0); }

/* run tokens [0, T) through `fn` in pieces of `piece` tokens, the state carried between them */
typedef void (*qw_dn_fn)(void *, float *, const float *, const float *, const float *, const float *, const float *, float *, int, int, int, int, int, float);
static void qw_dn_run(void *ctx, qw_dn_fn fn, const qw_dn_case *c, int piece, float *out, float *state) {
    memcpy(state, c->s0, sizeof(float) * c->n_v * c->d_v * c->d_k);
    for (int t0 = 0; t0 < c->T; t0 += piece) {
        const int n = c->T - t0 < piece ? c->T - t0 : piece;
        fn(ctx, out + (size_t)t0 * c->n_v * c->d_v, c->q + (size_t)t0 * c->n_k * c->d_k, c->k + (size_t)t0 * c->n_k * c->d_k,
           c->v + (size_t)t0 * c->n_v * c->d_v, c->g + (size_t)t0 * c->n_v, c->beta + (size_t)t0 * c->n_v, state,
           n, c->n_k, c->n_v, c->d_k, c->d_v, 1.0f / sqrtf((float)c->d_k));
    }
}

/* Attention over the paged cache (infer__cpu_attention) against a double-precision softmax
 * for GQA shapes whose head size is a multiple of 64 (scores and sums vectorized), of 16
 * (scores only) or neither (the plain loops),
 * groups of 1..6 query heads per cache head, F16 and F32 caches, a shuffled block table;
 * and a query row gives the same bits alone (decode), inside a 5-row batch (a prompt), and
 * with 1 or 2 threads. */
static void test_cpu_attention(void) {
    const int shapes[][3] = { { 8, 2, 64 }, { 6, 2, 128 }, { 4, 4, 80 }, { 12, 2, 64 }, { 6, 6, 64 }, { 4, 2, 40 } };
    const int bs = 4, n_pos = 37, nblk = (n_pos + bs - 1) / bs, R = 5;
    int32_t table[16];
    for (int b = 0; b < nblk; b++) table[b] = (b * 7 + 3) % nblk;        /* a permutation: 7 and 10 coprime */
    infer__cpu_ctx *c1 = infer__cpu_ctx_create(1, 0), *c2 = infer__cpu_ctx_create(2, 0);
    infer__rng rng;
    infer__rng_seed(&rng, 91);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int f16 = 0; f16 < 2; f16++) {
            const int nh = shapes[si][0], nkv = shapes[si][1], hd = shapes[si][2], kvd = nkv * hd;
            const size_t cells = (size_t)nblk * bs * kvd, es = f16 ? 2 : 4, nq = (size_t)R * nh * hd;
            uint8_t *K = calloc(cells, es), *V = calloc(cells, es);
            float *kf = malloc(cells * 4), *vf = malloc(cells * 4), *q = malloc(nq * 4);
            float *o_batch = malloc(nq * 4), *o_one = malloc(nq * 4), *o_t2 = malloc(nq * 4);
            for (size_t i = 0; i < cells; i++) {
                kf[i] = (float)infer__rng_uniform(&rng) * 2 - 1; vf[i] = (float)infer__rng_uniform(&rng) * 2 - 1;
                if (f16) {                                   /* the reference reads what the cache holds */
                    ((infer_half *)K)[i] = infer__fp32_to_fp16(kf[i]); kf[i] = infer__fp16_to_fp32(((infer_half *)K)[i]);
                    ((infer_half *)V)[i] = infer__fp32_to_fp16(vf[i]); vf[i] = infer__fp16_to_fp32(((infer_half *)V)[i]);
                } else { ((float *)K)[i] = kf[i]; ((float *)V)[i] = vf[i]; }
            }
            for (size_t i = 0; i < nq; i++) q[i] = ((float)infer__rng_uniform(&rng) * 2 - 1) * 3;
            const int32_t pos[5] = { 32, 33, 34, 35, 36 };
            const float scale = 1.0f / sqrtf((float)hd);
            infer_kv_view kv = { K, V, f16 ? INFER_TYPE_F16 : INFER_TYPE_F32, bs, table, kvd, NULL };
            infer__cpu_attention(c2, o_batch, q, &kv, pos, R, nh, nkv, hd, scale);
            infer__cpu_attention(c1, o_t2, q, &kv, pos, R, nh, nkv, hd, scale);
            double worst = 0;
            for (int r = 0; r < R; r++) {
                infer__cpu_attention(c2, o_one + (size_t)r * nh * hd, q + (size_t)r * nh * hd, &kv, pos + r, 1, nh, nkv, hd, scale);
                for (int h = 0; h < nh; h++) {
                    const int g = h / (nh / nkv);
                    double sc[64], mx = -1e300, sum = 0;
                    for (int p = 0; p <= pos[r]; p++) {
                        const size_t row = (size_t)table[p / bs] * bs + p % bs;
                        double d = 0;
                        for (int i = 0; i < hd; i++) d += (double)q[((size_t)r * nh + h) * hd + i] * kf[row * kvd + (size_t)g * hd + i];
                        sc[p] = d * scale; mx = sc[p] > mx ? sc[p] : mx;
                    }
                    for (int p = 0; p <= pos[r]; p++) { sc[p] = exp(sc[p] - mx); sum += sc[p]; }
                    for (int i = 0; i < hd; i++) {
                        double o = 0;
                        for (int p = 0; p <= pos[r]; p++) o += sc[p] / sum * vf[((size_t)table[p / bs] * bs + p % bs) * kvd + (size_t)g * hd + i];
                        const double e = fabs(o - o_batch[((size_t)r * nh + h) * hd + i]);
                        worst = e > worst ? e : worst;
                    }
                }
            }
            CHECK_MSG(worst < 1e-5, "attention %d/%d heads, hd %d, %s cache: max |out - reference| %.3g", nh, nkv, hd, f16 ? "f16" : "f32", worst);
            CHECK_MSG(memcmp(o_batch, o_one, nq * 4) == 0, "attention %d/%d heads, hd %d: a row alone differs from the row in a batch", nh, nkv, hd);
            CHECK_MSG(memcmp(o_batch, o_t2, nq * 4) == 0, "attention %d/%d heads, hd %d: 1 thread differs from 2", nh, nkv, hd);
            free(K); free(V); free(kf); free(vf); free(q); free(o_batch); free(o_one); free(o_t2);
        }
    infer__cpu_ctx_free(c1);
    infer__cpu_ctx_free(c2);
}

/* matmul_n (several weights reading the same activations in one job) gives the bits of
 * one matmul per weight: fast and precise, 1 and 2 threads, decode and prompt rows, a set
 * of one type (one job) and a set that mixes types (one job each) */
static infer_tensor mmn_tensor(infer__rng *r, infer_type t, int64_t K, int64_t N) {
    const size_t bytes = infer_type_row_size(t, K) * (size_t)N;
    float *f = malloc(sizeof(float) * (size_t)(K * N));
    void *d = malloc(bytes);
    infer_error err;
    qw_fill(r, f, (size_t)(K * N), -1, 1);
    CHECK(infer_quantize(t, f, d, K * N, &err) == INFER_OK);
    free(f);
    infer_tensor w = { "w", t, 2, { K, N, 1, 1 }, d, bytes, 1.0f };
    return w;
}
/* the decode matmuls' order, learnt: after one pass over a sequence of jobs, each job
 * foresees the one that followed it (also past the table's size, where some are forgotten
 * but none is mistaken); the cut of a job covers every row once */
static void test_cpu_matmul_foresee(void) {
    infer__cpu_ctx *c = infer__cpu_ctx_create(2, 0);
    enum { N = 3000 };
    infer_tensor *t = calloc(N, sizeof *t);
    for (int i = 0; i < N; i++) { t[i].type = INFER_TYPE_Q4_0; t[i].ne[0] = 64; t[i].ne[1] = 16 + i % 200; }
    static const int lens[] = { 3, 300, N };
    for (int li = 0; li < 3; li++) {
        const int len = lens[li];
        int first_round = 0, right = 0, wrong = 0;
        for (int round = 0; round < 2; round++)
            for (int i = 0; i < len; i++) {
                const infer_tensor *ws[2] = { &t[i], &t[(i + 1) % N] }, *next[INFER__MM_MAX];
                const int nw = infer__mm_foresee(c, ws, 1 + i % 2, next);
                if (round == 0) { first_round += nw > 0 && i > 0; continue; }
                const int j = (i + 1) % len;
                if (nw == 0) continue;
                if (nw == 1 + j % 2 && next[0] == &t[j] && (nw == 1 || next[1] == &t[(j + 1) % N])) right++; else wrong++;
            }
        CHECK_MSG(first_round == 0 && wrong == 0 && right >= (len < INFER__NEXT_SLOTS / 2 ? len : INFER__NEXT_SLOTS / 2),
                  "%d jobs: %d foreseen in the first pass, then %d right, %d wrong", len, first_round, right, wrong);
        c->prev_n = 0;
        memset(c->next, 0, sizeof *c->next * INFER__NEXT_SLOTS);
    }
    for (int threads = 1; threads <= 5; threads++)            /* the cut: every row of every weight once */
        for (int rows = 1; rows <= 2; rows++) {                /* decode's finer cut, and a prompt's */
            infer_tensor big = t[199];                          /* an output matrix's many rows */
            big.ne[1] = 100003;
            struct infer__mm_plan p = { 3, { &t[7], &t[150], &big }, { 0 }, { 0 } };
            infer__mm_cut(&p, threads, rows);
            const int64_t *chunk = p.chunk, *first = p.first;
            int ok = first[0] == 0;
            for (int m = 0; m < 3; m++) ok &= chunk[m] % infer__tile_for(p.w[m]->type).rows == 0 && chunk[m] >= 16 && (first[m + 1] - first[m] - 1) * chunk[m] < p.w[m]->ne[1] && (first[m + 1] - first[m]) * chunk[m] >= p.w[m]->ne[1];
            CHECK_MSG(ok, "%d threads, %d rows: the cut misses or repeats rows", threads, rows);
        }
    free(t);
    infer__cpu_ctx_free(c);
}

/* backend memory: a big buffer is a mapping of its own (2 MiB-aligned, zero, writable, given
 * back by free, in any order), a small one comes from calloc; a session's KV cache is one
 * such buffer holding every layer's K and V pools, 4 KiB-aligned, none overlapping */
static void test_cpu_big_alloc(void) {
    infer__cpu_ctx *c = infer__cpu_ctx_create(1, 0);
    const size_t sizes[3] = { (size_t)3 << 20, INFER__BIG_BYTES, ((size_t)5 << 20) + 12345 };
    uint8_t *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = (uint8_t *)infer__cpu_alloc(c, sizes[i]);
        CHECK(p[i] != NULL);
        if (!p[i]) { infer__cpu_ctx_free(c); return; }
        int zero = 1;
        for (size_t o = 0; o < sizes[i]; o += 4093) zero &= p[i][o] == 0;
        CHECK_MSG(zero && p[i][sizes[i] - 1] == 0, "buffer %d is not zero", i);
        memset(p[i], 0xA5, sizes[i]);
#if defined(INFER__HUGE_WEIGHTS)
        CHECK_MSG((uintptr_t)p[i] % INFER__HUGE_PAGE == 0, "buffer %d of %zu bytes is not 2 MiB-aligned", i, sizes[i]);
        CHECK(c->n_big == i + 1);
#endif
    }
    uint8_t *small = (uint8_t *)infer__cpu_alloc(c, 1000);
    CHECK(small != NULL && small[999] == 0);
#if defined(INFER__HUGE_WEIGHTS)
    CHECK(c->n_big == 3);
#endif
    infer__cpu_free(c, p[1]);
    infer__cpu_free(c, small);
#if defined(INFER__HUGE_WEIGHTS)
    CHECK(c->n_big == 2 && (c->big[0].p == p[0] || c->big[1].p == p[0]) && (c->big[0].p == p[2] || c->big[1].p == p[2]));
#endif
    CHECK(p[0][0] == 0xA5 && p[2][sizes[2] - 1] == 0xA5);
    infer__cpu_free(c, p[0]);
    infer__cpu_free(c, p[2]);
#if defined(INFER__HUGE_WEIGHTS)
    CHECK(c->n_big == 0);
#endif
    p[0] = (uint8_t *)infer__cpu_alloc(c, (size_t)3 << 20);      /* left for ctx_free to give back */
    CHECK(p[0] != NULL);
    infer__cpu_ctx_free(c);
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    infer_model *m = load_model(SHARED "/models/stories260K.gguf", 0);
    if (!m) return;
    infer_error err;
    infer_session_params sp = infer_session_default_params();
    sp.n_ctx = 4096;
    sp.n_threads = 1;
    infer_session *s;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    const infer__cache *ch = &s->cache[0];
    const int n = infer_model_config(m)->n_layer;
    const size_t esz = ch->type == INFER_TYPE_F16 ? 2 : 4, pool = (size_t)ch->n_blocks * ch->block_size * (size_t)ch->k_dim * esz;
    int ok = ch->mem != NULL && ch->v_dim == ch->k_dim;
    for (int l = 0; ok && l < n; l++) {
        const uint8_t *k = (const uint8_t *)ch->k[l], *v = (const uint8_t *)ch->v[l], *base = (const uint8_t *)ch->mem;
        ok &= k >= base && (uintptr_t)k % 4096 == 0 && (uintptr_t)v % 4096 == 0 && v >= k + pool;
        if (l + 1 < n) ok &= (const uint8_t *)ch->k[l + 1] >= v + pool;
    }
    CHECK_MSG(ok, "the KV pools are not carved from one buffer, aligned and apart");
#if defined(INFER__HUGE_WEIGHTS)
    const infer__cpu_ctx *kc = (const infer__cpu_ctx *)s->kctx;
    int found = 0;
    for (int i = 0; i < kc->n_big; i++) found |= kc->big[i].p == ch->mem;
    CHECK_MSG(pool * 2 * (size_t)n < INFER__BIG_BYTES || found, "a KV cache of %zu bytes is not a mapping of its own", pool * 2 * (size_t)n);
#endif
    int32_t ids[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    float *logits = malloc(sizeof(float) * (size_t)infer_model_config(m)->n_vocab);
    CHECK(infer_eval(s, ids, 8, logits, 0, &err) == INFER_OK);
    free(logits);
    infer_session_free(s);
    infer_model_free(m);
}

/* decode rotations through the backend (which keeps the last position's angles) give the
 * bits of the plain rotation, as positions and parameters change between calls */
static void test_cpu_rope_decode(void) {
    infer__cpu_ctx *c = infer__cpu_ctx_create(1, 0);
    const float factors[32] = { 1, 1, 2, 4, 8, 1, 1, 2, 3, 1, 1, 1, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    infer_rope rp[3] = { { 64, 0, 10000.0f, 1.0f, NULL, 0, 1, 32, 1, 4096, 0, 0 },
                         { 64, 1, 500000.0f, 0.25f, factors, 1.0f, 1, 32, 1, 8192, 0, 0 },
                         { 32, 1, 10000.0f, 1.0f, NULL, 0, 1, 32, 1, 4096, 32, 1 } };
    infer__rng r;
    infer__rng_seed(&r, 3);
    float a[4 * 64], b[4 * 64];
    int bad = 0;
    for (int step = 0; step < 60; step++) {
        const int32_t pos = step / 3 * 7 + (step % 5 == 4);             /* repeats, and changes */
        const infer_rope *p = &rp[(step * 7 / 3) % 3];
        for (int i = 0; i < 4 * 64; i++) a[i] = b[i] = (float)infer__rng_uniform(&r) - 0.5f;
        infer__cpu_rope(c, a, 1, 4, 64, &pos, p);
        infer__rope_apply(b, 1, 4, 64, &pos, NULL, p);
        bad += memcmp(a, b, sizeof a) != 0;
    }
    CHECK_MSG(bad == 0, "%d of 60 rotations differ from the plain one", bad);
    infer__cpu_ctx_free(c);
}

/* ---- the CPU's repacked copies: Q2_K..Q6_K, IQ4_XS, Q4_0, Q8_0, MXFP4, Q4_1, Q5_1, and F16/BF16 as they are (>>quant "repacked", >>load "repack") ---- */
#define RP_KQ(T, TYPE) \
    static void rp_pack_##T(const uint8_t *s, uint8_t *d) { infer__kq_repack_block(TYPE, s, d, 1); } \
    static void rp_unpack_##T(const uint8_t *s, uint8_t *d) { infer__kq_repack_block(TYPE, s, d, 0); }
RP_KQ(q2_k, INFER_TYPE_Q2_K) RP_KQ(q3_k, INFER_TYPE_Q3_K) RP_KQ(q4_k, INFER_TYPE_Q4_K)
RP_KQ(q5_k, INFER_TYPE_Q5_K) RP_KQ(q6_k, INFER_TYPE_Q6_K) RP_KQ(iq4_xs, INFER_TYPE_IQ4_XS)
static void rp_pack_q4_0(const uint8_t *s, uint8_t *d) { infer__pack_q4_0_group((const infer_block_q4_0 *)s, (infer_block_q4_0_x4 *)d); }
static void rp_unpack_q4_0(const uint8_t *s, uint8_t *d) { infer__unpack_q4_0_group((const infer_block_q4_0_x4 *)s, (infer_block_q4_0 *)d); }
static void rp_pack_mxfp4(const uint8_t *s, uint8_t *d) { infer__pack_mxfp4_group((const infer_block_mxfp4 *)s, (infer_block_mxfp4_x4 *)d); }
static void rp_unpack_mxfp4(const uint8_t *s, uint8_t *d) { infer__unpack_mxfp4_group((const infer_block_mxfp4_x4 *)s, (infer_block_mxfp4 *)d); }
static void rp_pack_q8_0(const uint8_t *s, uint8_t *d) { infer__pack_q8_0_group((const infer_block_q8_0 *)s, (infer_block_q8_0_x4 *)d); }
static void rp_unpack_q8_0(const uint8_t *s, uint8_t *d) { infer__unpack_q8_0_group((const infer_block_q8_0_x4 *)s, (infer_block_q8_0 *)d); }
static void rp_pack_q4_1(const uint8_t *s, uint8_t *d) { infer__pack_q4_1_group((const infer_block_q4_1 *)s, (infer_block_q4_1_x4 *)d); }
static void rp_unpack_q4_1(const uint8_t *s, uint8_t *d) { infer__unpack_q4_1_group((const infer_block_q4_1_x4 *)s, (infer_block_q4_1 *)d); }
static void rp_pack_q5_1(const uint8_t *s, uint8_t *d) { infer__pack_q5_1_group((const infer_block_q5_1 *)s, (infer_block_q5_1_x4 *)d); }
static void rp_unpack_q5_1(const uint8_t *s, uint8_t *d) { infer__unpack_q5_1_group((const infer_block_q5_1_x4 *)s, (infer_block_q5_1 *)d); }
static void rp_pack_q5_0(const uint8_t *s, uint8_t *d) { infer__pack_q5_0_group((const infer_block_q5_0 *)s, (infer_block_q5_0_x4 *)d); }
static void rp_unpack_q5_0(const uint8_t *s, uint8_t *d) { infer__unpack_q5_0_group((const infer_block_q5_0_x4 *)s, (infer_block_q5_0 *)d); }
static void rp_pack_iq4_nl(const uint8_t *s, uint8_t *d) { infer__pack_iq4_nl_group((const infer_block_iq4_nl *)s, (infer_block_iq4_nl_x4 *)d); }
static void rp_unpack_iq4_nl(const uint8_t *s, uint8_t *d) { infer__unpack_iq4_nl_group((const infer_block_iq4_nl_x4 *)s, (infer_block_iq4_nl *)d); }
static void rp_pack_q4_0_x8(const uint8_t *s, uint8_t *d) { infer__pack_q4_0_x8_group((const infer_block_q4_0 *)s, (infer_block_q4_0_x8 *)d); }
static void rp_unpack_q4_0_x8(const uint8_t *s, uint8_t *d) { infer__unpack_q4_0_x8_group((const infer_block_q4_0_x8 *)s, (infer_block_q4_0 *)d); }
typedef struct { infer_type base, copy; void (*pack)(const uint8_t *, uint8_t *), (*unpack)(const uint8_t *, uint8_t *); } rp_case;
enum { RP_CASES = 14 };
static const rp_case rp_cases[RP_CASES] = {
    { INFER_TYPE_Q2_K, INFER__TYPE_Q2_K_XK, rp_pack_q2_k, rp_unpack_q2_k }, { INFER_TYPE_Q3_K, INFER__TYPE_Q3_K_XK, rp_pack_q3_k, rp_unpack_q3_k },
    { INFER_TYPE_Q4_K, INFER__TYPE_Q4_K_XK, rp_pack_q4_k, rp_unpack_q4_k }, { INFER_TYPE_Q5_K, INFER__TYPE_Q5_K_XK, rp_pack_q5_k, rp_unpack_q5_k },
    { INFER_TYPE_Q6_K, INFER__TYPE_Q6_K_XK, rp_pack_q6_k, rp_unpack_q6_k }, { INFER_TYPE_IQ4_XS, INFER__TYPE_IQ4_XS_XK, rp_pack_iq4_xs, rp_unpack_iq4_xs },
    { INFER_TYPE_Q4_0, INFER__TYPE_Q4_0_X4, rp_pack_q4_0, rp_unpack_q4_0 }, { INFER_TYPE_Q8_0, INFER__TYPE_Q8_0_X4, rp_pack_q8_0, rp_unpack_q8_0 },
    { INFER_TYPE_MXFP4, INFER__TYPE_MXFP4_X4, rp_pack_mxfp4, rp_unpack_mxfp4 },
    { INFER_TYPE_Q4_1, INFER__TYPE_Q4_1_X4, rp_pack_q4_1, rp_unpack_q4_1 }, { INFER_TYPE_Q5_1, INFER__TYPE_Q5_1_X4, rp_pack_q5_1, rp_unpack_q5_1 },
    { INFER_TYPE_Q5_0, INFER__TYPE_Q5_0_X4, rp_pack_q5_0, rp_unpack_q5_0 }, { INFER_TYPE_IQ4_NL, INFER__TYPE_IQ4_NL_X4, rp_pack_iq4_nl, rp_unpack_iq4_nl },
    { INFER_TYPE_Q4_0, INFER__TYPE_Q4_0_X8, rp_pack_q4_0_x8, rp_unpack_q4_0_x8 } };
/* n elements of type t as random bytes -- every code pattern -- with sane scales */
static void rp_random(infer__rng *r, infer_type t, uint8_t *dst, int64_t n) {
    const int blk = infer_type_block(t);
    const size_t bb = infer_type_row_size(t, blk);
    for (size_t i = 0; i < (size_t)(n / blk) * bb; i++) dst[i] = (uint8_t)infer__rng_next(r);
    for (int64_t b = 0; b < n / blk; b++) {
        uint8_t *p = dst + (size_t)b * bb;
        const infer_half d = infer__fp32_to_fp16(0.01f + 0.001f * (float)(b % 13)), dm = infer__fp32_to_fp16(0.003f);
        if (t == INFER_TYPE_Q6_K) memcpy(p + offsetof(infer_block_q6_k, d), &d, 2);
        else if (t == INFER_TYPE_Q3_K) memcpy(p + offsetof(infer_block_q3_k, d), &d, 2);
        else if (t == INFER_TYPE_Q2_K) { memcpy(p + offsetof(infer_block_q2_k, d), &d, 2); memcpy(p + offsetof(infer_block_q2_k, dmin), &dm, 2); }
        else if (t == INFER_TYPE_MXFP4) { p[0] = (uint8_t)(118 + b % 16); continue; }   /* exponent byte: 2^-10 .. 2^5 */
        else memcpy(p, &d, 2);                                           /* d first */
        if (t == INFER_TYPE_Q4_K || t == INFER_TYPE_Q5_K || t == INFER_TYPE_Q4_1 || t == INFER_TYPE_Q5_1) memcpy(p + 2, &dm, 2);   /* then dmin / m */
    }
}
/* the layouts round-trip, put each code where the layout says, and the copies' scalar
 * dequantize and dot are the originals', bit for bit; the vector packer makes the same bytes */
static void test_quant_repack(void) {
    enum { N = 12 * 256 };
    infer__rng rng;
    infer__rng_seed(&rng, 101);
    static uint8_t w[N * 2], p[N * 2], u[N * 2], q8[N * 2];
#if defined(INFER__REPACK)
    static uint8_t f[N * 2];                 /* the vector packer's bytes */
#endif
    static float x[N], a[N], b[N];
    for (int i = 0; i < N; i++) x[i] = sinf(0.37f * (float)i) * (1.0f + (float)(i % 7));
    for (const infer__repack_rule *r = infer__repack_rules; r->pack; r++) {   /* the repack copies block for block */
        const int64_t n = infer_type_block(r->to);
        CHECK_MSG(n % infer_type_block(r->from) == 0 && infer_type_row_size(r->from, n) == infer_type_row_size(r->to, n), "%s -> %s: blocks of another size",
                  infer_type_name(r->from), infer_type_name(r->to));
    }
    for (int ci = 0; ci < RP_CASES; ci++) {
        const rp_case *c = &rp_cases[ci];
        const int unit = infer_type_block(c->copy);                      /* elements per block of the copy */
        const size_t ub = infer_type_row_size(c->copy, unit), bytes = infer_type_row_size(c->base, N);
        const char *name = infer_type_name(c->copy);
        CHECK_MSG(ub == infer_type_row_size(c->base, unit) && infer__cpu_supports_type(c->copy) && strstr(name, "_x"), "%s", name);
        rp_random(&rng, c->base, w, N);
        for (int k = 0; k < N / unit; k++) { c->pack(w + k * ub, p + k * ub); c->unpack(p + k * ub, u + k * ub); }
        CHECK_MSG(memcmp(p, w, bytes) != 0, "%s: packing changed nothing", name);
        CHECK_MSG(memcmp(u, w, bytes) == 0, "%s: unpack(pack(block)) is not the block", name);
        /* where the codes went: byte j of XK vector v holds element 16 (j/4) + 4v + j%4 (K
         * types); byte j of an X4 vector holds code 4 (j/16) + j%4 of block (j/4) % 4 */
        int bad = 0;
        for (int k = 0; k < N / unit; k++)
            for (int v = 0; v < 4; v++)
                for (int j = 0; j < 64; j++) {
                    int want, got;
                    if (c->copy == INFER__TYPE_Q4_0_X8) {   /* v = 0, 1: code vector v (lane i = 8h + b: code byte 8v + 4h + j%4 of block b); 2, 3: d */
                        const int i = j / 4, b = i % 8, m = 8 * (v & 1) + 4 * (i / 8) + j % 4;
                        const infer_block_q4_0 *o = (const infer_block_q4_0 *)(w + k * ub) + (v < 2 ? b : j % 8);
                        const infer_block_q4_0_x8 *g = (const infer_block_q4_0_x8 *)(p + k * ub);
                        want = v < 2 ? o->qs[m] : o->d;
                        got = v < 2 ? g->qs[64 * v + j] : g->d[j % 8];
                    } else if (unit == 256) {
                        want = infer__kq_code(c->base, w + k * ub, 16 * (j / 4) + 4 * v + j % 4);
                        got = infer__xk_code(c->base, p + k * ub, v, j);
                    } else {
                        const int blk = (j / 4) % 4, i = 4 * (j / 16) + j % 4;
                        if (c->base == INFER_TYPE_MXFP4) {     /* as Q4_0, the exponent bytes for the scales */
                            const infer_block_mxfp4 *o = (const infer_block_mxfp4 *)(w + k * ub) + blk;
                            const infer_block_mxfp4_x4 *g = (const infer_block_mxfp4_x4 *)(p + k * ub);
                            want = v < 2 ? o->qs[i] : o->e;
                            got = v < 2 ? g->qs[j] : g->e[blk];
                        } else if (c->base == INFER_TYPE_Q4_1 || c->base == INFER_TYPE_Q5_1 || c->base == INFER_TYPE_Q5_0) {
                            /* v = 0, 1: a code byte; 2: d; 3: m (Q4_1), qh (Q5_0: its byte j % 4), m and qh (Q5_1) */
                            const int q51 = c->base == INFER_TYPE_Q5_1, q50 = c->base == INFER_TYPE_Q5_0;
                            const int bb = q51 ? 24 : q50 ? 22 : 20, hb = q51 ? 32 : q50 ? 24 : 16, qh = q51 ? 16 : 8;
                            const uint8_t *o = w + k * ub + (size_t)bb * (size_t)blk, *g = p + k * ub;
                            uint16_t ow, gw;
                            if (v < 2) { want = o[bb - 16 + i]; got = g[hb + j]; }
                            else if (v == 2 || (v == 3 && !q50)) {
                                memcpy(&ow, o + 2 * (v - 2), 2); memcpy(&gw, g + 8 * (v - 2) + 2 * blk, 2);
                                want = ow; got = gw;
                            }
                            else { want = -1; got = -1; }
                            if ((q51 || q50) && v == 3) { bad += o[bb - 20 + j % 4] != g[qh + 4 * blk + j % 4]; }
                        } else if (c->base == INFER_TYPE_Q4_0 || c->base == INFER_TYPE_IQ4_NL) {   /* v = 0, 1: the byte holding codes i, i + 16; v = 2, 3: the scales */
                            const infer_block_q4_0 *o = (const infer_block_q4_0 *)(w + k * ub) + blk;
                            const infer_block_q4_0_x4 *g = (const infer_block_q4_0_x4 *)(p + k * ub);
                            want = v < 2 ? o->qs[i] : o->d;
                            got = v < 2 ? g->qs[j] : g->d[blk];
                        } else {
                            const infer_block_q8_0 *o = (const infer_block_q8_0 *)(w + k * ub) + blk;
                            want = (uint8_t)(o->qs[i + 16 * (v & 1)] + 128);
                            got = ((const infer_block_q8_0_x4 *)(p + k * ub))->qs[64 * (v & 1) + j];
                        }
                    }
                    bad += want != got;
                }
        CHECK_MSG(bad == 0, "%s: %d codes not where the layout says", name, bad);
#if defined(INFER__REPACK)
        /* rows of whole 256s take the X8 copy where there is one, others the X4 */
        const int64_t len = unit == 128 && c->base == INFER_TYPE_Q4_0 ? N - 128 : N;
        const infer_tensor ht = { "t", c->base, 2, { len, 1, 1, 1 }, w, infer_type_row_size(c->base, len), 1.0f };
        const infer__repack_rule *rule = infer__repack_rule_for(&ht);
        const int tiled = infer__tile_for(c->copy).fn != NULL;           /* a copy is made only for a tile of this build */
        CHECK_MSG(tiled ? rule && rule->to == c->copy : rule == NULL, "%s: %s repack rule", name, tiled ? "no" : "a");
        if (rule) {
            for (int k = 0; k < N / unit; k++) rule->pack(w + k * ub, f + k * ub);
            CHECK_MSG(memcmp(f, p, bytes) == 0, "%s: the vector packer differs from the scalar one", name);
        }
        const infer_tensor odd = { "t", c->base, 2, { unit + infer_type_block(c->base), 1, 1, 1 }, w, bytes, 1.0f };
        CHECK_MSG(unit == infer_type_block(c->base) || infer__repack_rule_for(&odd) == NULL, "%s: rows of part of a group repacked", name);
#endif
        const infer_type dt = infer__type(c->base)->dot_type;
        CHECK(infer__type(c->copy)->dot_type == dt);
        infer__type(dt)->quant(x, q8, N);
        infer__type(c->copy)->dequant(p, a, N);
        infer__type(c->base)->dequant(w, b, N);
        CHECK_MSG(memcmp(a, b, sizeof(float) * N) == 0, "%s: dequantized values differ from %s's", name, infer_type_name(c->base));
        for (int n = 256; n <= N; n += 5 * 256) {
            const float d1 = infer__type(c->copy)->dot(n, p, q8), d2 = infer__type(c->base)->dot(n, w, q8);
            CHECK_MSG(memcmp(&d1, &d2, 4) == 0, "%s dot over %d values: %.9g vs %.9g", name, n, d1, d2);
        }
    }
}

#if defined(INFER__REPACK)
/* the tiles and the decode row kernel on the copies: the originals' bits, every shape */
static void test_tiles_repacked(void) {
    enum { R = 11, KMAX = 2304 };
    infer__rng rng;
    infer__rng_seed(&rng, 202);
    uint8_t *w = malloc(R * KMAX * 2), *p = malloc(R * KMAX * 2), *xq = malloc(4 * infer__xk_row_bytes(KMAX) + 4 * infer__x4_row_bytes(KMAX));
    float *x = malloc(sizeof(float) * 4 * KMAX), o1[4 * R], o2[4 * R];
    const int64_t Ks[] = { 256, 512, 2048, 2304 };
    for (int ci = 0; ci < RP_CASES; ci++) {
        const rp_case *c = &rp_cases[ci];
        const infer__tile t0 = infer__tile_for(c->base), t1 = infer__tile_for(c->copy);
        if (!t0.fn) continue;                                            /* Q4_0, Q8_0 without VBMI */
        if (t1.xlay == INFER__XLAY_X8) { CHECK(t1.fn && t1.mv); continue; }   /* sums in another order: test_tiles_x8 */
        CHECK(t1.fn && t1.mv && t1.xlay == t0.xlay && t1.rows == t0.rows && t1.cols == t0.cols);
        if (!t1.fn) continue;
        const int unit = infer_type_block(c->copy);
        const size_t ub = infer_type_row_size(c->copy, unit);
        int bad = 0, runs = 0;
        for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
            const int64_t K = Ks[ki];
            const size_t ws = infer_type_row_size(c->base, K), xs = t0.xlay == INFER__XLAY_X4 ? infer__x4_row_bytes(K) : infer__xk_row_bytes(K);
            rp_random(&rng, c->base, w, R * K);
            for (int64_t k = 0; k < R * K / unit; k++) c->pack(w + k * ub, p + k * ub);
            for (int64_t i = 0; i < 4 * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            for (int cc = 0; cc < 4; cc++) {
                if (t0.xlay == INFER__XLAY_X4) infer__x4_quant_row(x + cc * K, K, xq + cc * xs);
                else infer__xk_quant_blocks(x + cc * K, xq + cc * xs, 0, K / 256, t0.xlay);
            }
            for (int nr = 1; nr <= t0.rows; nr++)
                for (int nc = 1; nc <= t0.cols; nc++) {
                    t0.fn(K, w, ws, nr, xq, xs, nc, o1, (size_t)nr);
                    t1.fn(K, p, ws, nr, xq, xs, nc, o2, (size_t)nr);
                    bad += memcmp(o1, o2, sizeof(float) * (size_t)(nr * nc)) != 0;
                    runs++;
                }
            for (int cc = 0; cc < 4; cc++) {
                t0.mv(K, w, ws, R, xq + cc * xs, o1);
                t1.mv(K, p, ws, R, xq + cc * xs, o2);
                bad += memcmp(o1, o2, sizeof(float) * R) != 0;
                runs++;
            }
        }
        CHECK_MSG(bad == 0, "%s: %d of %d tile and row-kernel runs differ from %s's", infer_type_name(c->copy), bad, runs, infer_type_name(c->base));
    }
    free(w); free(p); free(xq); free(x);
}

/* The activation groups' vector quantizers (X4, X8, XK) against their references, byte for
 * byte over whole rows (every byte written: the two outputs start from different junk):
 * blocks of scales from 1e-3 to 1e3, ties (values k + 0.5 in code units), all zeros, f32
 * subnormals, scales past f16's range, and rows with a NaN or an Inf; partial last groups */
static void test_act_groups_fast(void) {
    enum { KMAX = 8192 };
    infer__rng rng;
    infer__rng_seed(&rng, 404);
    float *x = malloc(sizeof(float) * KMAX);
    uint8_t *a = malloc(infer__x8_row_bytes(KMAX) + infer__x4_row_bytes(KMAX)), *b = malloc(infer__x8_row_bytes(KMAX) + infer__x4_row_bytes(KMAX));
    const int64_t Ks[] = { 128, 160, 256, 384, 2048, 8192 };
    int bad = 0, rows = 0;
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
        for (int mode = 0; mode < 6; mode++) {
            const int64_t K = Ks[ki];
            for (int64_t blk = 0; blk < K / 32; blk++) {           /* each block its own scale and kind */
                const int kind = (int)(infer__rng_next(&rng) % 8);
                const float sc = powf(10.0f, qw_uniform(&rng, -3, 3));
                for (int i = 0; i < 32; i++) {
                    float v = qw_uniform(&rng, -sc, sc);
                    if (kind == 1) v = 0;
                    if (kind == 2) v = (i == 0 ? 127.0f : (float)((int)(infer__rng_next(&rng) % 254) - 127) + 0.5f);   /* amax 127+: ties */
                    if (kind == 3) v = qw_uniform(&rng, -1, 1) * 1e-40f;
                    if (kind == 4) v = qw_uniform(&rng, -1, 1) * 1e30f;
                    x[blk * 32 + i] = v;
                }
            }
            if (mode == 4) x[infer__rng_next(&rng) % K] = NAN;
            if (mode == 5) x[infer__rng_next(&rng) % K] = -INFINITY;
            for (int lay = 0; lay < 3; lay++) {
                if (lay == 2 && K % 256) continue;
                const size_t n = lay == 0 ? infer__x4_row_bytes(K) : lay == 1 ? infer__x8_row_bytes(K) : infer__xk_row_bytes(K);
                memset(a, 0xAA, n);
                memset(b, 0x55, n);
                if (lay == 0) { infer__x4_quant_groups(x, K, a, 0, (K + 127) / 128); infer__x4_quant_groups_ref(x, K, b, 0, (K + 127) / 128); }
                if (lay == 1) { infer__x8_quant_groups(x, K, a, 0, (K + 255) / 256); infer__x8_quant_groups_ref(x, K, b, 0, (K + 255) / 256); }
                if (lay == 2) { infer__xk_quant_blocks(x, a, 0, K / 256, INFER__XLAY_XK); infer__xk_quant_blocks_x(x, b, 0, K / 256, INFER__XLAY_XK, 0); }
                rows++;
                if (memcmp(a, b, n)) {
                    size_t at = 0;
                    while (a[at] == b[at]) at++;
                    if (bad++ < 4) fprintf(stderr, "    layout %d, K %lld, mode %d: byte %zu of %zu differs (%02x vs %02x)\n", lay, (long long)K, mode, at, n, a[at], b[at]);
                }
            }
        }
    CHECK_MSG(bad == 0, "%d of %d rows differ from the reference", bad, rows);
    free(x); free(a); free(b);
}

/* The X8 copy (Q4_0_X8) sums 8 blocks per float step, so its bits are its own: every output
 * of its tiles against the scalar dot of the original rows (the tolerance of
 * test_tiles_vs_dot), every tile shape the same bits, and the decode row kernel the 1 x 1
 * tile's; the X8 activations hold the Q8_0 blocks' codes where the layout says */
static void test_tiles_x8(void) {
    enum { R = 7, KMAX = 2304 };
    const infer__tile t = infer__tile_for(INFER__TYPE_Q4_0_X8);
    if (!t.fn) SKIP("this build has no X8 tiles (AVX-512 VBMI and VNNI)");
    CHECK(t.xlay == INFER__XLAY_X8 && t.mv && t.rows >= 1 && t.rows <= 4 && t.cols >= 1 && t.cols <= 4);
    infer__rng rng;
    infer__rng_seed(&rng, 303);
    uint8_t *w = malloc(R * KMAX), *p = malloc(R * KMAX), *xq = malloc(4 * infer__x8_row_bytes(KMAX)), *q8 = malloc(4 * 2 * KMAX);
    float *tmp = malloc(sizeof(float) * KMAX), *x = malloc(sizeof(float) * 4 * KMAX), *wd = malloc(sizeof(float) * R * KMAX), *xd = malloc(sizeof(float) * 4 * KMAX);
    float full[4 * R];
    const int64_t Ks[] = { 256, 512, 2048, 2304 };
    double worst = 0;
    int bad_layout = 0;
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
        for (int mode = 0; mode < 3; mode++) {
            const int64_t K = Ks[ki];
            const size_t ws = infer_type_row_size(INFER_TYPE_Q4_0, K), xs = infer__x8_row_bytes(K), qs = infer_type_row_size(INFER_TYPE_Q8_0, K);
            for (int r = 0; r < R; r++) {
                simd_make_weights(&rng, INFER_TYPE_Q4_0, mode, K, tmp, w + r * ws);
                infer__dequant_q4_0(w + r * ws, wd + r * K, K);
            }
            for (int64_t g = 0; g < R * K / 256; g++) infer__pack_q4_0_x8_group((const infer_block_q4_0 *)(w + g * 144), (infer_block_q4_0_x8 *)(p + g * 144));
            for (int c = 0; c < 4; c++) {
                simd_make_acts(&rng, (mode + c) % 4, K, x + c * K);
                simd_prepare_acts(INFER_TYPE_Q8_0, x + c * K, K, q8 + c * qs, xd + c * K);
                infer__x8_quant_row(x + c * K, K, xq + c * xs);
                for (int64_t b = 0; b < K / 32; b++) {   /* the layout: block b's code m, its scale */
                    const infer_block_q8_0 *o = (const infer_block_q8_0 *)(q8 + c * qs) + b;
                    const uint8_t *gp = xq + c * xs + (size_t)(b / 8) * INFER__X8_GROUP;
                    float d;
                    memcpy(&d, gp + 288 + 4 * (b % 8), 4);
                    bad_layout += d != infer__fp16_to_fp32(o->d);
                    for (int m = 0; m < 32; m++) {
                        const int u = m / 16, k = (m % 16) / 8, h = (m % 8) / 4, lane = 8 * h + (int)(b % 8);
                        bad_layout += (int8_t)gp[64 * (2 * k + u) + 4 * lane + m % 4] != o->qs[m];
                    }
                }
            }
            t.fn(K, p, ws, t.rows, xq, xs, t.cols, full, (size_t)t.rows);
            for (int c = 0; c < t.cols; c++)
                for (int r = 0; r < t.rows; r++) {
                    const float ref = infer__dot_q4_0(K, w + r * ws, q8 + c * qs);
                    const double mag = simd_term_mag(INFER_TYPE_Q4_0, w + r * ws, wd + r * K, xd + c * K, K);
                    const double err = fabs((double)full[c * t.rows + r] - ref);
                    if (mag > 0 && err / mag > worst) worst = err / mag;
                    CHECK_MSG(err <= 2e-6 * mag, "q4_0_x8 tile K=%lld mode %d (%d,%d): %.9g vs reference %.9g (M %.4g)", (long long)K, mode, r, c,
                              full[c * t.rows + r], ref, mag);
                }
            tile_shapes_and_mv("q4_0_x8", &t, K, p, ws, xq, xs, full, R);
        }
    CHECK_MSG(bad_layout == 0, "%d X8 activation codes or scales not where the layout says", bad_layout);
    printf("    q4_0_x8 tile %dx%d (X8 int8): largest |tile - ref| / M = %.2g\n", t.rows, t.cols, worst);
    free(w); free(p); free(xq); free(q8); free(tmp); free(x); free(wd); free(xd);
}
#endif

/* infer_model_params.progress: each stage's calls come from the loading thread, in [0, 1],
 * never going back, and end at 1. The file: the golden Q4_0 model with 40 MiB of padding
 * after its tensors, so that it is large enough to be read in (>>util, huge pages) before
 * its Q4_0 matrices are repacked. */
typedef struct { pthread_t self; int calls[3], other_thread, bad; double last[3]; } load_watch;
static void load_watch_fn(void *user, const char *stage, double done) {
    load_watch *w = (load_watch *)user;
    const int st = !strcmp(stage, "reading") ? 0 : !strcmp(stage, "repacking") ? 1 : !strcmp(stage, "reading again in 2 MiB pages") ? 2 : -1;
    if (st < 0) { w->bad++; return; }
    w->other_thread += !pthread_equal(pthread_self(), w->self);
    w->bad += done < 0 || done > 1 || done < w->last[st];
    w->last[st] = done;
    w->calls[st]++;
}
static void test_model_load_progress(void) {
    const char *src = SHARED "/golden/llama/model-Q4_0.gguf";
    if (!file_exists(src)) SKIP("../shared/golden/llama not found");
    size_t n;
    char *bytes = (char *)slurp(src, &n);
    FILE *f = bytes ? fopen(tmp_path("infer_progress.gguf"), "wb") : NULL;
    CHECK(f != NULL);
    if (!f) { free(bytes); return; }
    char *zero = (char *)calloc(1, (size_t)1 << 20);
    int ok = zero && fwrite(bytes, 1, n, f) == n;
    for (int i = 0; ok && i < 40; i++) ok = fwrite(zero, 1, (size_t)1 << 20, f) == (size_t)1 << 20;
    ok &= fclose(f) == 0;
    free(zero); free(bytes);
    CHECK(ok);
    load_watch w;
    memset(&w, 0, sizeof w);
    w.self = pthread_self();
    infer_model_params mp;
    memset(&mp, 0, sizeof mp);
    mp.progress = load_watch_fn;
    mp.progress_user = &w;
    infer_model *m;
    infer_error err;
    CHECK_MSG(infer_model_load(&m, tmp_path("infer_progress.gguf"), &mp, &err) == INFER_OK, "%s", err.msg);
    if (m) infer_model_free(m);
    CHECK_MSG(w.bad == 0 && w.other_thread == 0, "%d calls out of order or range, %d from another thread", w.bad, w.other_thread);
#if defined(INFER__REPACK)
    CHECK_MSG(w.calls[1] > 0 && w.last[1] == 1.0, "repacking: %d calls, the last at %g", w.calls[1], w.last[1]);
#endif
#if defined(INFER__HUGE_WEIGHTS)
    if (w.calls[0] == 0) printf("    the file was not read in (too little memory available?)\n");
    else CHECK_MSG(w.calls[0] >= 2 && w.last[0] == 1.0, "reading: %d calls, the last at %g", w.calls[0], w.last[0]);
#endif
    if (w.calls[2]) CHECK_MSG(w.last[2] == 1.0, "reading again: the last call at %g", w.last[2]);
    printf("    %d reading, %d reading again and %d repacking calls\n", w.calls[0], w.calls[2], w.calls[1]);
    remove(tmp_path("infer_progress.gguf"));
}

/* A model's Q4_K and Q6_K weights are read by the CPU from a repacked copy: the same logits,
 * bit for bit, as the file's layout, batched and token by token; --precise reads the file's */
static void test_model_repack(void) {
    const char *path = SHARED "/golden/llama/model-Q4_K_M.gguf";
    if (!file_exists(path)) SKIP("../shared/golden/llama not found");
    infer_model *m1, *m2;
    infer_error err;
    infer_model_params mp = { .no_repack = 1 };
    if (infer_model_load(&m1, path, NULL, &err) != INFER_OK || infer_model_load(&m2, path, &mp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    CHECK(m2->repacked.layers == NULL);
#if defined(INFER__REPACK)
    int packed = 0, kept = 0;
    for (int64_t i = 0; m1->repacked.tensors && i < m1->gguf.n_tensors; i++) {
        const infer_tensor *t = &m1->repacked.tensors[i], *h = &m1->gguf.tensors[i];
        if (!t->data) continue;
        const infer__repack_rule *rule = infer__repack_rule_for(h);
        if (rule) packed += t->type == rule->to && t->data != h->data;
        else kept += t->type == h->type && t->data == h->data;
    }
    CHECK_MSG(packed > 0 && kept > 0, "%d tensors repacked, %d kept", packed, kept);
    infer_session *s;
    infer_session_params sp = infer_session_default_params();
    sp.n_ctx = 32;
    CHECK(infer_session_create(&s, m1, &sp, &err) == INFER_OK);
    CHECK(s->w.layers[0].ffn_gate->type == INFER__TYPE_Q4_K_XK && s->w.output->type == INFER__TYPE_Q6_K_XK);
    infer_session_free(s);
    sp.precise = 1;
    CHECK(infer_session_create(&s, m1, &sp, &err) == INFER_OK);
    CHECK(s->w.layers[0].ffn_gate->type == INFER_TYPE_Q4_K);
    infer_session_free(s);
#else
    printf("    this build has no XK tiles: nothing is repacked\n");
    CHECK(m1->repacked.layers == NULL);
#endif
    const int32_t ids[10] = { 1, 15, 4, 99, 23, 7, 250, 3, 42, 8 };
    const size_t V = (size_t)infer_model_config(m1)->n_vocab;
    for (int threads = 1; threads <= 2; threads++) {
        run_opts o = { 0, 0, threads, 0, NULL };
        float *a = eval_logits(m1, ids, 10, 6, o), *b = eval_logits(m2, ids, 10, 6, o);
        CHECK_MSG(a && b && memcmp(a, b, sizeof(float) * V * 10) == 0, "%d threads: the repacked weights give other logits", threads);
        free(a); free(b);
    }
    infer_model_free(m1);
    infer_model_free(m2);
    /* every other repacked type, by a file quantized from the golden F32 model: the same logits
     * repacked and not */
    static const char *types[] = { "Q2_K", "Q3_K_M", "Q5_K_M", "IQ4_XS", "Q4_0", "Q8_0", "mxfp4", "F16", "BF16", "Q5_0", "IQ4_NL", "Q4_1", "Q5_1" };
    char cmd[512], out[4096];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        snprintf(cmd, sizeof cmd, "./tools/convert quantize " SHARED "/golden/llama/model-F32.gguf $INFER_TMP/infer_test_rp.gguf --type %s 2>&1", types[ti]);
        if (run_cmd(cmd, out, sizeof out) != 0) { CHECK_MSG(0, "convert %s: %s", types[ti], out); continue; }
        if (infer_model_load(&m1, tmp_path("infer_test_rp.gguf"), NULL, &err) != INFER_OK ||
            infer_model_load(&m2, tmp_path("infer_test_rp.gguf"), &mp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); continue; }
#if defined(INFER__TILE_X4)
        if (types[ti][0] == 'F' || types[ti][0] == 'B')   /* F16, BF16: a copy in the same layout */
            CHECK_MSG(m1->repacked.layers && m1->repacked.w.layers[0].ffn_up->type == m2->layers[0].ffn_up->type &&
                      m1->repacked.w.layers[0].ffn_up->data != m2->layers[0].ffn_up->data &&
                      memcmp(m1->repacked.w.layers[0].ffn_up->data, m2->layers[0].ffn_up->data, m2->layers[0].ffn_up->nbytes) == 0, "%s: ffn_up not copied", types[ti]);
        else if (infer__repack_rule_for(m2->layers[0].ffn_up))         /* Q5_0, Q5_1: where this build has their tiles */
            CHECK_MSG(m1->repacked.layers && m1->repacked.w.layers[0].ffn_up->type != m2->layers[0].ffn_up->type, "%s: ffn_up not repacked", types[ti]);
        else CHECK_MSG(!strncmp(types[ti], "Q5_", 3) && infer__tile_for(m2->layers[0].ffn_up->type).fn == NULL, "%s: no repack rule", types[ti]);
        if (types[ti][0] == 'F') {   /* bytes in no mapped file (a model from memory) are not copied again */
            size_t n = 0;
            uint8_t *f = slurp(tmp_path("infer_test_rp.gguf"), &n);
            infer_model *m3 = NULL;
            CHECK(f && infer_model_load_memory(&m3, f, n, NULL, &err) == INFER_OK);
            if (m3) {
                const infer_tensor *u = infer_gguf_tensor(&m3->gguf, "blk.0.ffn_up.weight");
                CHECK(u && infer__repack_rule_for(u) && !infer__repack_rule_of(m3, u) && infer__repack_rule_of(m1, infer_gguf_tensor(&m1->gguf, "blk.0.ffn_up.weight")));
                CHECK(m3->repacked.layers == NULL || m3->repacked.w.layers[0].ffn_up->data == u->data);
                infer_model_free(m3);
            }
            free(f);
        }
#endif
        run_opts o = { 0, 0, 2, 0, NULL };
        float *a = eval_logits(m1, ids, 10, 6, o), *b = eval_logits(m2, ids, 10, 6, o);
        const infer_tensor *up = m1->repacked.layers ? m1->repacked.w.layers[0].ffn_up : NULL;
        if (!up || up->type != INFER__TYPE_Q4_0_X8)
            CHECK_MSG(a && b && memcmp(a, b, sizeof(float) * V * 10) == 0, "%s: the repacked weights give other logits", types[ti]);
        else if (a && b) {
            /* Q4_0 rows of whole 256s become Q4_0_X8 groups: the same weights, bit for bit,
             * summed 8 blocks per float step, so logits as close to the exact ones as the
             * file's own fast path gets (a last-bit change can move an activation's int8
             * rounding) */
            const infer_tensor *h = m2->layers[0].ffn_up;
            const int64_t n = h->ne[0] * h->ne[1];
            float *da = malloc(sizeof(float) * (size_t)n), *db = malloc(sizeof(float) * (size_t)n);
            infer__type(h->type)->dequant(h->data, da, n);
            infer__type(up->type)->dequant(up->data, db, n);
            CHECK_MSG(memcmp(da, db, sizeof(float) * (size_t)n) == 0, "%s: ffn_up is not the same weights in X8 groups", types[ti]);
            free(da); free(db);
            run_opts po = { 1, 0, 2, 0, NULL };
            float *e = eval_logits(m2, ids, 10, 6, po);
            double ea = 0, eb = 0;
            for (size_t i = 0; e && i < V * 10; i++) {
                ea = fmax(ea, fabs((double)a[i] - e[i]));
                eb = fmax(eb, fabs((double)b[i] - e[i]));
            }
            CHECK_MSG(e && ea <= 1.25 * eb + 1e-3, "%s: X8 max |logit - exact| %.4g, the file's fast path %.4g", types[ti], ea, eb);
            CHECK_MSG(memcmp(a, b, sizeof(float) * V * 10) != 0, "%s: X8 logits equal to the file's, bit for bit (not the X8 path?)", types[ti]);
            free(e);
        }
        free(a); free(b);
        infer_model_free(m1);
        infer_model_free(m2);
    }
    remove(tmp_path("infer_test_rp.gguf"));
    /* the command line: --no-repack writes the same logits, and bad use of it is refused */
    uint8_t *la = NULL, *lb = NULL;
    size_t na = 0, nb = 0;
    snprintf(cmd, sizeof cmd, "./infer -m %s --prompt-ids 1,15,4,99 -n 3 --temp 0 --logits-out $INFER_TMP/infer_test_rp_a.bin 2>/dev/null", path);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    snprintf(cmd, sizeof cmd, "./infer -m %s --prompt-ids 1,15,4,99 -n 3 --temp 0 --no-repack --logits-out $INFER_TMP/infer_test_rp_b.bin 2>/dev/null", path);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    la = slurp(tmp_path("infer_test_rp_a.bin"), &na);
    lb = slurp(tmp_path("infer_test_rp_b.bin"), &nb);
    CHECK_MSG(la && lb && na == nb && na == (size_t)(4 + 3) * V * 4 && memcmp(la, lb, na) == 0, "--no-repack logits differ (%zu, %zu bytes)", na, nb);
    free(la); free(lb);
    remove(tmp_path("infer_test_rp_a.bin"));
    remove(tmp_path("infer_test_rp_b.bin"));
    snprintf(cmd, sizeof cmd, "./infer -m %s --no-repack=1 -p hi 2>&1", path);
    CHECK(run_cmd(cmd, out, sizeof out) != 0 && strstr(out, "--no-repack=1"));
}

static void test_cpu_matmul_n(void) {
    infer__rng rng;
    infer__rng_seed(&rng, 5);
    /* one type; types that share a job (X4: Q8_0 and Q4_0; XK: Q4_K and Q6_K, as Q4_K_M's
     * q, k, v); types that cannot (F32 among them: each its own job) */
    const int64_t K = 512, Ns[4] = { 96, 32, 32, 50 };
    const infer_type sets[4][4] = { { INFER_TYPE_Q4_0, INFER_TYPE_Q4_0, INFER_TYPE_Q4_0, INFER_TYPE_Q4_0 },
                                    { INFER_TYPE_Q8_0, INFER_TYPE_Q4_0, INFER_TYPE_Q4_0, INFER_TYPE_Q8_0 },
                                    { INFER_TYPE_Q4_K, INFER_TYPE_Q4_K, INFER_TYPE_Q6_K, INFER_TYPE_Q4_K },
                                    { INFER_TYPE_Q8_0, INFER_TYPE_Q4_0, INFER_TYPE_F32, INFER_TYPE_Q8_0 } };
    float *x = malloc(sizeof(float) * 5 * K);
    for (int i = 0; i < 5 * K; i++) x[i] = sinf(i * 0.37f);
    for (int set = 0; set < 4; set++) {
        infer_tensor w[4];
        const infer_tensor *wp[4];
        float *a[4], *b[4];
        for (int m = 0; m < 4; m++) {
            w[m] = mmn_tensor(&rng, sets[set][m], K, Ns[m]);
            wp[m] = &w[m];
            a[m] = malloc(sizeof(float) * 5 * (size_t)Ns[m]);
            b[m] = malloc(sizeof(float) * 5 * (size_t)Ns[m]);
        }
        for (int cfg = 0; cfg < 4; cfg++) {
            infer__cpu_ctx *c = infer__cpu_ctx_create(1 + cfg % 2, cfg / 2);
            for (int rows = 1; rows <= 5; rows += 4) {
                infer__cpu_matmul_n(c, 4, a, wp, x, rows);
                for (int m = 0; m < 4; m++) infer__cpu_matmul(c, b[m], wp[m], x, rows);
                for (int m = 0; m < 4; m++)
                    CHECK_MSG(memcmp(a[m], b[m], sizeof(float) * (size_t)rows * (size_t)Ns[m]) == 0,
                              "set %d, %d threads, %s, %d rows: weight %d (%s) differs from its own matmul", set, 1 + cfg % 2,
                              cfg / 2 ? "precise" : "fast", rows, m, infer_type_name(w[m].type));
                double d = 0;                /* and the products are the products */
                float wr[512];
                infer__dequant_row(&w[1], 7, wr);
                for (int64_t k = 0; k < K; k++) d += (double)wr[k] * x[(size_t)(rows - 1) * K + k];
                CHECK_MSG(fabs(a[1][(size_t)(rows - 1) * Ns[1] + 7] - d) < 0.05 * (1 + fabs(d)), "set %d: W x = %g, expected about %g", set,
                          a[1][(size_t)(rows - 1) * Ns[1] + 7], d);
            }
            infer__cpu_ctx_free(c);
        }
        for (int m = 0; m < 4; m++) { free((void *)w[m].data); free(a[m]); free(b[m]); }
    }
    free(x);
}

/* the softmax of attention: its vector exp within 2 ulp of expf over the whole range it
 * meets (x <= 0, down to where e^x is 0), NaN kept; the weights sum to 1 */
static void test_cpu_softmax(void) {
#if defined(INFER__SIMD_AVX512)
    int worst = 0;
    for (int i = 0; i <= 1100000; i++) {
        const float x = -110.0f * (float)i / 1100000.0f;
        float e;
        _mm512_mask_storeu_ps(&e, 1, infer__exp512(_mm512_set1_ps(x)));
        const float r = expf(x);
        int32_t a, b;
        memcpy(&a, &e, 4); memcpy(&b, &r, 4);
        const int ulp = abs(a - b);
        worst = ulp > worst ? ulp : worst;
        if (ulp > 2) { CHECK_MSG(0, "exp(%.9g) = %.9g, expf %.9g (%d ulp)", x, e, r, ulp); break; }
    }
    float e;
    _mm512_mask_storeu_ps(&e, 1, infer__exp512(_mm512_set1_ps(NAN)));
    CHECK_MSG(isnan(e), "exp(NaN) = %g", e);
    _mm512_mask_storeu_ps(&e, 1, infer__exp512(_mm512_set1_ps(-INFINITY)));
    CHECK_MSG(e == 0, "exp(-inf) = %g", e);
    printf("    vector exp: largest difference from expf %d ulp\n", worst);
#endif
    for (int n = 1; n < 70; n += 7) {
        float x[70];
        double ref[70], sum = 0, mx = -1e300;
        for (int i = 0; i < n; i++) { x[i] = sinf(i * 1.7f) * 9; mx = x[i] > mx ? x[i] : mx; }
        for (int i = 0; i < n; i++) { ref[i] = exp(x[i] - mx); sum += ref[i]; }
        infer__softmax_inplace(x, n);
        double tot = 0;
        for (int i = 0; i < n; i++) { tot += x[i]; CHECK_MSG(fabs(x[i] - ref[i] / sum) < 1e-6, "softmax n %d [%d]: %.9g vs %.9g", n, i, x[i], ref[i] / sum); }
        CHECK_MSG(fabs(tot - 1) < 1e-5, "softmax n %d sums to %.9g", n, tot);
    }
}

/* the chunked delta rule equals the token-by-token recurrence: outputs and final state, for
 * lengths around the 64-token chunk, and for prompts cut into ubatches that split chunks */
static void test_cpu_deltanet_chunked_vs_step(void) {
    const int lengths[] = { 1, 63, 64, 65, 130 };
    infer__cpu_ctx *ctx = infer__cpu_ctx_create(2, 1);
    for (int shape = 0; shape < 2; shape++) {
        /* grouped heads with d_k = d_v and slow decay (a long memory), then n_k = n_v with
         * d_k != d_v and fast decay */
        const int n_k = shape ? 3 : 2, n_v = shape ? 3 : 4, d_k = shape ? 24 : 32, d_v = shape ? 16 : 32;
        for (int li = 0; li < 5; li++) {
            const int T = lengths[li];
            qw_dn_case c = qw_dn_make(T, n_k, n_v, d_k, d_v, shape ? -3.0f : -0.1f, 100 + li + 10 * shape);
            const size_t no = (size_t)T * n_v * d_v, ns = (size_t)n_v * d_v * d_k;
            float *o_ref = malloc(sizeof(float) * no), *s_ref = malloc(sizeof(float) * ns);
            float *o = malloc(sizeof(float) * no), *s = malloc(sizeof(float) * ns);
            qw_dn_run(ctx, infer__cpu_deltanet_step, &c, 1, o_ref, s_ref);
            const int pieces[] = { T, 7, 50 };           /* whole, and ubatches that split chunks */
            for (int p = 0; p < 3; p++) {
                qw_dn_run(ctx, infer__cpu_deltanet_chunked, &c, pieces[p], o, s);
                const double eo = max_abs_diff(o, o_ref, no), es = max_abs_diff(s, s_ref, ns);
                CHECK_MSG(eo < 1e-5 && es < 1e-5, "n_k %d n_v %d d_k %d d_v %d, T %d in pieces of %d: max diff out %.3g, state %.3g",
                          n_k, n_v, d_k, d_v, T, pieces[p], eo, es);
            }
            /* a step call over many tokens is the same recurrence */
            qw_dn_run(ctx, infer__cpu_deltanet_step, &c, T, o, s);
            CHECK(max_abs_diff(o, o_ref, no) == 0 && max_abs_diff(s, s_ref, ns) == 0);
            free(o_ref); free(s_ref); free(o); free(s);
            qw_dn_free(&c);
        }
    }
    infer__cpu_ctx_free(ctx);
}

/* the step's 16-column AVX-512 form (d_k, d_v multiples of 16: qwen35's 128 x 128 heads)
 * against the plain reference loops: outputs and state within 1e-5 (relative to 1) over
 * 200 tokens of slow decay, the state carried; the same bits on 1 and 2 threads */
static void test_cpu_deltanet_step_wide(void) {
    const int shapes[][4] = { { 2, 4, 128, 128 }, { 3, 3, 16, 48 }, { 1, 2, 64, 32 } };   /* n_k n_v d_k d_v */
    infer__cpu_ctx *c1 = infer__cpu_ctx_create(1, 0), *c2 = infer__cpu_ctx_create(2, 0);
    for (int si = 0; si < 3; si++) {
        const int n_k = shapes[si][0], n_v = shapes[si][1], d_k = shapes[si][2], d_v = shapes[si][3], T = 200;
        qw_dn_case c = qw_dn_make(T, n_k, n_v, d_k, d_v, -0.05f, 300 + si);
        const size_t no = (size_t)T * n_v * d_v, ns = (size_t)n_v * d_v * d_k;
        float *o_ref = malloc(sizeof(float) * no), *s_ref = malloc(sizeof(float) * ns);
        float *o1 = malloc(sizeof(float) * no), *s1 = malloc(sizeof(float) * ns), *o2 = malloc(sizeof(float) * no), *s2 = malloc(sizeof(float) * ns);
        qw_dn_run(c1, infer__cpu_deltanet_step_plain, &c, 1, o_ref, s_ref);
        qw_dn_run(c1, infer__cpu_deltanet_step, &c, 1, o1, s1);
        qw_dn_run(c2, infer__cpu_deltanet_step, &c, 3, o2, s2);
        double eo = 0, es = 0, mo = 0;
        for (size_t i = 0; i < no; i++) { eo = fmax(eo, fabs(o1[i] - o_ref[i]) / (1 + fabs(o_ref[i]))); mo = fmax(mo, fabs(o_ref[i])); }
        for (size_t i = 0; i < ns; i++) es = fmax(es, fabs(s1[i] - s_ref[i]) / (1 + fabs(s_ref[i])));
        CHECK_MSG(eo < 1e-5 && es < 1e-5, "n_k %d n_v %d d_k %d d_v %d: wide vs plain, out %.3g, state %.3g", n_k, n_v, d_k, d_v, eo, es);
        CHECK_MSG(mo > 0.1, "outputs too small to compare (largest %g)", mo);
        CHECK(memcmp(o1, o2, sizeof(float) * no) == 0 && memcmp(s1, s2, sizeof(float) * ns) == 0);
        printf("    n_k %d n_v %d d_k %3d d_v %3d: wide vs plain after %d tokens, out %.2g, state %.2g\n", n_k, n_v, d_k, d_v, T, eo, es);
        free(o_ref); free(s_ref); free(o1); free(s1); free(o2); free(s2);
        qw_dn_free(&c);
    }
    infer__cpu_ctx_free(c1); infer__cpu_ctx_free(c2);
}

/* the recurrence itself, for one head, against the equations written out with the full
 * matrix S (decay, recall, delta update, readout) */
static void test_cpu_deltanet_step_equations(void) {
    const int T = 5, d_k = 3, d_v = 2;
    qw_dn_case c = qw_dn_make(T, 1, 1, d_k, d_v, -1.0f, 7);
    float S[3][2], out[5 * 2], state[2 * 3];
    for (int i = 0; i < d_k; i++) for (int j = 0; j < d_v; j++) S[i][j] = c.s0[j * d_k + i];   /* state is by column */
    infer__cpu_ctx *ctx = infer__cpu_ctx_create(1, 1);
    qw_dn_run(ctx, infer__cpu_deltanet_step, &c, T, out, state);
    infer__cpu_ctx_free(ctx);
    const float scale = 1.0f / sqrtf((float)d_k);
    for (int t = 0; t < T; t++) {
        const float *q = c.q + t * d_k, *k = c.k + t * d_k, *v = c.v + t * d_v, a = expf(c.g[t]), b = c.beta[t];
        for (int j = 0; j < d_v; j++) {
            double u = 0;
            for (int i = 0; i < d_k; i++) { S[i][j] *= a; u += S[i][j] * k[i]; }
            for (int i = 0; i < d_k; i++) S[i][j] += k[i] * b * (v[j] - (float)u);
            double o = 0;
            for (int i = 0; i < d_k; i++) o += S[i][j] * q[i];
            CHECK_NEAR(out[t * d_v + j], scale * o, 1e-5);
        }
    }
    for (int i = 0; i < d_k; i++) for (int j = 0; j < d_v; j++) CHECK_NEAR(state[j * d_k + i], S[i][j], 1e-5);
    qw_dn_free(&c);
}

/* the causal conv with its carried state: one call over T tokens = the direct formula over
 * the zero-padded history = the same tokens fed in pieces */
static void test_cpu_conv1d_state(void) {
    enum { T = 11, C = 5, K = 4 };
    infer__rng r;
    infer__rng_seed(&r, 3);
    float x[T * C], w[C * K], out[T * C], out2[T * C], st[(K - 1) * C], st2[(K - 1) * C];
    qw_fill(&r, x, T * C, -2, 2);
    qw_fill(&r, w, C * K, -1, 1);
    memset(st, 0, sizeof st);
    infer__cpu_conv1d_silu(NULL, out, x, st, w, T, C, K);
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double y = 0;
            for (int j = 0; j < K; j++) { int ts = t - (K - 1) + j; if (ts >= 0) y += w[c * K + j] * x[ts * C + c]; }
            CHECK_NEAR(out[t * C + c], y / (1 + exp(-y)), 1e-5);
        }
    for (int j = 0; j < K - 1; j++) for (int c = 0; c < C; c++) CHECK(st[j * C + c] == x[(T - (K - 1) + j) * C + c]);
    memset(st2, 0, sizeof st2);
    const int cuts[] = { 0, 1, 3, 4, 9, T };
    for (int i = 0; i + 1 < 6; i++) infer__cpu_conv1d_silu(NULL, out2 + cuts[i] * C, x + cuts[i] * C, st2, w, cuts[i + 1] - cuts[i], C, K);
    CHECK(max_abs_diff(out, out2, T * C) == 0 && max_abs_diff(st, st2, (K - 1) * C) == 0);
}

/* multi-axis rope: with every pair on the t/h/w streams and equal positions it is NeoX rope;
 * pairs on the e stream (position 0) stay as they were */
static void test_cpu_rope_multi(void) {
    enum { T = 3, H = 2, D = 16 };
    infer__rng r;
    infer__rng_seed(&r, 5);
    float a[T * H * D], b[T * H * D], x0[T * H * D];
    qw_fill(&r, x0, T * H * D, -1, 1);
    infer_rope rp;
    memset(&rp, 0, sizeof rp);
    rp.n_rot = 12; rp.neox = 1; rp.freq_base = 10000; rp.freq_scale = 1; rp.attn_factor = 1;
    int32_t pos[4 * T];
    for (int i = 0; i < T; i++) { pos[i] = pos[T + i] = pos[2 * T + i] = 5 + 7 * i; pos[3 * T + i] = 0; }
    const int32_t full[4] = { 2, 2, 2, 0 }, partial[4] = { 1, 1, 1, 0 };   /* 6 pairs, sum 6 / sum 3 */
    memcpy(a, x0, sizeof a); memcpy(b, x0, sizeof b);
    infer__cpu_rope(NULL, a, T, H, D, pos, &rp);
    infer__cpu_rope_multi(NULL, b, T, H, D, pos, &rp, full);
    CHECK(max_abs_diff(a, b, T * H * D) == 0);
    CHECK(infer__imrope_stream(3, full) == 0 && infer__imrope_stream(4, full) == 1 && infer__imrope_stream(5, full) == 2);
    /* sections [1,1,1,0] summing to 3 over 6 pairs: sector = i mod 3 covers t, h, w, nothing on e */
    memcpy(b, x0, sizeof b);
    infer__cpu_rope_multi(NULL, b, T, H, D, pos, &rp, partial);
    CHECK(max_abs_diff(a, b, T * H * D) == 0);
    const int32_t with_e[4] = { 1, 0, 0, 2 };      /* sector 0 -> t; sectors 1, 2 -> e */
    memcpy(b, x0, sizeof b);
    infer__cpu_rope_multi(NULL, b, T, H, D, pos, &rp, with_e);
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < 6; i++) {
                const size_t o = ((size_t)t * H + h) * D;
                const int rotated = i % 3 == 0;
                CHECK(b[o + i] == (rotated ? a[o + i] : x0[o + i]) && b[o + i + 6] == (rotated ? a[o + i + 6] : x0[o + i + 6]));
            }
}

/* router: softmax, top-k (ties to the lower id), optional renormalisation and scale */
static void test_cpu_moe_route(void) {
    const float logits[2 * 5] = { 0.5f, 2.0f, -1.0f, 2.0f, 1.0f,   3.0f, 0.0f, 0.0f, 0.0f, 1.0f };
    int32_t ids[2 * 3];
    float w[2 * 3], wn[2 * 3];
    infer__cpu_moe_route(NULL, ids, w, logits, 2, 5, 3, 1, 0, 1.0f, NULL, 0);
    CHECK(ids[0] == 1 && ids[1] == 3 && ids[2] == 4 && ids[3] == 0 && ids[4] == 4 && ids[5] == 1);
    double z = 0;
    for (int e = 0; e < 5; e++) z += exp(logits[e] - 2.0);
    CHECK_NEAR(w[0], 1.0 / z, 1e-6);
    CHECK_NEAR(w[2], exp(-1.0) / z, 1e-6);
    infer__cpu_moe_route(NULL, ids, wn, logits, 2, 5, 3, 1, 1, 2.0f, NULL, 0);
    CHECK_NEAR(wn[0] + wn[1] + wn[2], 2.0, 1e-5);
    CHECK_NEAR(wn[0] / wn[2], w[0] / w[2], 1e-5);
    infer__cpu_moe_route(NULL, ids, w, logits, 2, 5, 2, 2, 0, 1.0f, NULL, 0);      /* sigmoid gating */
    CHECK(ids[0] == 1 && ids[1] == 3);
    CHECK_NEAR(w[0], 1.0 / (1.0 + exp(-2.0)), 1e-6);
}

/* matmul_id = for each token and slot, a plain matmul with that expert's matrix; in the
 * precise and fast paths, for float and quantized experts */
static void test_cpu_matmul_id(void) {
    enum { K = 256, N = 24, NE = 5, R = 6, U = 2 };
    infer__rng r;
    infer__rng_seed(&r, 9);
    float *wf = malloc(sizeof(float) * K * N * NE), *x = malloc(sizeof(float) * R * U * K);
    float *out = malloc(sizeof(float) * R * U * N), *ref = malloc(sizeof(float) * R * U * N);
    qw_fill(&r, wf, (size_t)K * N * NE, -1, 1);
    qw_fill(&r, x, (size_t)R * U * K, -1, 1);
    const int32_t ids[R * U] = { 0, 4, 4, 0, 2, 3, 2, 4, 1, 0, 3, 3 };
    const infer_type types[] = { INFER_TYPE_F32, INFER_TYPE_Q8_0, INFER_TYPE_Q4_K };
    infer_error err;
    for (int ti = 0; ti < 3; ti++) {
        const size_t row = infer_type_row_size(types[ti], K);
        void *wq = malloc(row * N * NE);
        CHECK(infer_quantize(types[ti], wf, wq, (int64_t)K * N * NE, &err) == INFER_OK);
        infer_tensor w = { "w", types[ti], 3, { K, N, NE, 1 }, wq, row * N * NE, 1.0f };
        for (int precise = 0; precise < 2; precise++) {
            infer__cpu_ctx *ctx = infer__cpu_ctx_create(2, precise);
            for (int per_slot = 0; per_slot < 2; per_slot++) {
                infer__cpu_matmul_id(ctx, out, &w, x, ids, R, U, per_slot);
                /* each expert as a 2-D tensor over all the activation rows (several rows, so
                 * the same tiles as matmul_id's), then row i takes its token of its expert */
                const int nx = per_slot ? R * U : R;
                float *full = malloc(sizeof(float) * nx * N);
                for (int i = 0; i < R * U; i++) {
                    infer_tensor we = w;
                    we.n_dims = 2; we.ne[2] = 1;
                    we.data = (const uint8_t *)wq + (size_t)ids[i] * N * row;
                    infer__cpu_matmul(ctx, full, &we, x, nx);
                    memcpy(ref + (size_t)i * N, full + (size_t)(per_slot ? i : i / U) * N, sizeof(float) * N);
                }
                free(full);
                CHECK_MSG(max_abs_diff(out, ref, (size_t)R * U * N) == 0, "%s precise %d per_slot %d: max diff %g", infer_type_name(types[ti]),
                          precise, per_slot, max_abs_diff(out, ref, (size_t)R * U * N));
            }
            infer__cpu_ctx_free(ctx);
        }
        free(wq);
    }
    free(wf); free(x); free(out); free(ref);
}

/* The I2_S matmul (activations padded to whole Q8_K blocks when a row has an odd number of
 * 128-chunks) against the exact f32 matmul of the same weights, and the GLU kernels. */
static void test_cpu_i2_s_matmul_glu(void) {
    infer__rng r;
    infer__rng_seed(&r, 77);
    const int rows = 3;
    for (int c = 1; c <= 7; c += 3) {
        const int64_t K = 128 * c, N = 37;
        float *wf = malloc(sizeof(float) * K * N), *x = malloc(sizeof(float) * K * rows), *fast = malloc(sizeof(float) * N * rows), *exact = malloc(sizeof(float) * N * rows);
        uint8_t *q = calloc(1, (size_t)(K * N) / 4 + 32);
        for (int64_t i = 0; i < K * N; i++) wf[i] = 0.3f * (float)((int)(infer__rng_next(&r) % 3) - 1);
        for (int64_t i = 0; i < K * rows; i++) x[i] = (float)(infer__rng_uniform(&r) * 2 - 1);
        infer__quant_i2_s(wf, q, K * N);
        infer_tensor t;
        memset(&t, 0, sizeof t);
        t.type = INFER_TYPE_I2_S; t.n_dims = 2; t.ne[0] = K; t.ne[1] = N; t.ne[2] = t.ne[3] = 1;
        t.data = q; t.nbytes = (size_t)(K * N) / 4 + 32;
        memcpy(&t.scale, q + K * N / 4, 4);
        infer__cpu_ctx *cf = infer__cpu_ctx_create(2, 0), *cp = infer__cpu_ctx_create(2, 1);
        infer__cpu_matmul(cf, fast, &t, x, rows);
        infer__cpu_matmul(cp, exact, &t, x, rows);
        double worst = 0, mag = 0;
        for (int i = 0; i < N * rows; i++) worst = fmax(worst, fabs(fast[i] - exact[i]));
        for (int64_t i = 0; i < K; i++) mag += 0.3 * fabs(x[i]);
        /* int8 activations: each |x| error <= max|x_block| / 254, times 0.3 per weight */
        CHECK_MSG(worst <= 0.3 * K / 254.0 + 1e-5, "i2_s K=%lld: fast vs exact max |diff| %.3g", (long long)K, worst);
        CHECK_MSG(worst > 0 || K == 0, "i2_s K=%lld: fast and exact identical (the fast path did not run?)", (long long)K);
        infer__cpu_ctx_free(cf); infer__cpu_ctx_free(cp);
        free(wf); free(x); free(fast); free(exact); free(q);
    }
    const float g[6] = { -2.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f }, u[6] = { 1, 2, 3, 4, 5, -1 };
    float o[6];
    infer__cpu_glu(NULL, o, g, u, 6, INFER__ACT_RELU2, 0.0f);
    const float want[6] = { 0, 0, 0, 1.0f, 5.0f, -9.0f };
    CHECK(memcmp(o, want, sizeof o) == 0);
    infer__cpu_glu(NULL, o, g, u, 6, INFER__ACT_SILU, 0.0f);
    for (int i = 0; i < 6; i++) CHECK_NEAR(o[i], g[i] / (1 + exp(-g[i])) * u[i], 1e-6);
}

/* ---- >>arch, >>load: what is refused, with a message naming the key or the tensor ---- */
/* a model file whose known key has the wrong type fails with the key's name */
static void test_load_errors_keys(void) {
    buf_t b = { 0 };
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, 0); b_u64(&b, 2);
    b_kv_str(&b, "general.architecture", "llama");
    b_kv_str(&b, "llama.block_count", "three");
    infer_model *m;
    infer_error err;
    size_t n = b.n;
    /* no token_embd: config is read first, so the wrong type is reported */
    CHECK(infer_model_load_memory(&m, b.p, n, NULL, &err) != INFER_OK);
    CHECK_MSG(strstr(err.msg, "llama.") != NULL, "message: %s", err.msg);
    b.n = 0;
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, 0); b_u64(&b, 1);
    b_kv_str(&b, "general.architecture", "nonesuch");
    CHECK(infer_model_load_memory(&m, b.p, b.n, NULL, &err) == INFER_ERR_UNSUPPORTED && strstr(err.msg, "nonesuch"));
    free(b.p);
}

static uint8_t *qw_patched(const uint8_t *f, size_t n, const char *find, const char *repl) {
    uint8_t *p = malloc(n);
    memcpy(p, f, n);
    const size_t len = strlen(find);
    for (size_t i = 0; i + len <= n; i++)
        if (!memcmp(p + i, find, len)) { memcpy(p + i, repl, len); break; }
    return p;
}
/* a model file whose bytes at `find` (a key or tensor name) read `repl` instead fails to
 * load with a message containing `want` */
typedef struct { const char *find, *repl, *want; } rename_case;
static void expect_renames_fail(const uint8_t *f, size_t n, const rename_case *cases, size_t n_cases) {
    for (size_t i = 0; i < n_cases; i++) {
        uint8_t *p = qw_patched(f, n, cases[i].find, cases[i].repl);
        infer_model *m;
        infer_error err;
        int ok = infer_model_load_memory(&m, p, n, NULL, &err) == INFER_OK;
        if (ok) infer_model_free(m);
        CHECK_MSG(!ok && strstr(err.msg, cases[i].want), "%s -> %s", cases[i].repl, ok ? "loaded" : err.msg);
        free(p);
    }
}
static void test_load_errors_qwen35(void) {
    size_t n;
    uint8_t *f = slurp(SHARED "/golden/qwen35/model-F32.gguf", &n);
    if (!f) SKIP("../shared/golden/qwen35 not found");
    const rename_case cases[] = {
        { "qwen35.ssm.conv_kernel", "qwen35.ssm.conv_kernex", "missing metadata key 'qwen35.ssm.conv_kernel'" },
        { "qwen35.ssm.inner_size", "qwen35.ssm.inner_sizf", "missing metadata key 'qwen35.ssm.inner_size'" },
        { "blk.1.ssm_conv1d.weight", "blk.1.ssm_conv1d.weighx", "missing tensor 'blk.1.ssm_conv1d.weight'" },
        { "blk.3.attn_q_norm.weight", "blk.3.attn_q_norm.weighx", "missing tensor 'blk.3.attn_q_norm.weight'" },
        { "blk.4.nextn.eh_proj.weight", "blk.4.nextn.eh_proj.weighx", "missing tensor 'blk.4.nextn.eh_proj.weight'" },
    };
    expect_renames_fail(f, n, cases, sizeof cases / sizeof cases[0]);
    /* a shape that disagrees with the metadata: ssm_a with 3 heads instead of 4 */
    uint8_t *p = malloc(n);
    memcpy(p, f, n);
    for (size_t i = 0; i + 16 < n; i++)
        if (!memcmp(p + i, "blk.2.ssm_a", 11) && p[i - 8] == 11) {   /* the name's length prefix */
            uint64_t three = 3;
            memcpy(p + i + 11 + 4, &three, 8);                          /* after n_dims: ne[0] */
            break;
        }
    infer_model *m;
    infer_error err;
    int ok = infer_model_load_memory(&m, p, n, NULL, &err) == INFER_OK;
    if (ok) infer_model_free(m);
    CHECK_MSG(!ok && strstr(err.msg, "'blk.2.ssm_a' has shape [3,"), "%s", ok ? "loaded" : err.msg);
    free(p);
    free(f);
}

/* writing variants of a model: another arch name, an activation key, projections
 * re-encoded as I2_S, `.scale` tensors */
static const char *bn_proj[7] = { "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down" };
static const float bn_scale_val[7] = { 0.5f, 2.0f, 0.75f, 1.5f, 0.5f, 1.25f, 2.0f };

static int bn_is_proj(const char *name) {
    for (int i = 0; i < 7; i++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, ".%s.weight", bn_proj[i]);
        if (strlen(name) > strlen(suffix) && !strcmp(name + strlen(name) - strlen(suffix), suffix)) return 1;
    }
    return 0;
}

/* the whole tensor as floats (an I2_S tensor with its scale; other types dequantized) */
static float *bn_tensor_f32(const infer_tensor *t) {
    const int64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    float *out = malloc(sizeof(float) * (size_t)n);
    infer_error err;
    if (t->type == INFER_TYPE_I2_S) infer__dequant_i2_s(t->data, t->scale, out, n);
    else if (infer_dequantize(t->type, t->data, out, n, &err) != INFER_OK) { free(out); return NULL; }
    return out;
}

typedef struct {
    const char *arch;      /* new general.architecture (keys renamed), or NULL */
    const char *act;       /* <arch>.hidden_activation, or NULL: none (an existing one is dropped) */
    int to_i2_s;           /* projections re-encoded as I2_S */
    int scales;            /* add blk.N.<proj>.scale = bn_scale_val */
} bn_variant;

static int bn_write(const char *src, const char *dst, const bn_variant *v) {
    size_t n;
    uint8_t *p = slurp(src, &n);
    infer_gguf g;
    infer_error err;
    if (!p || infer_gguf_parse(&g, p, n, &err) != INFER_OK) { free(p); return 0; }
    const infer_gguf_kv *ak = infer_gguf_find(&g, "general.architecture");
    char old[32], key[256][96], act_key[96];
    snprintf(old, sizeof old, "%.*s", (int)ak->v.s.len, ak->v.s.ptr);
    const char *arch = v->arch ? v->arch : old;
    infer_gguf_kv *kv = calloc((size_t)g.n_kv + 2, sizeof *kv);
    int nkv = 0;
    for (int64_t i = 0; i < g.n_kv && i < 256; i++) {
        infer_gguf_kv e = g.kv[i];
        const size_t ol = strlen(old);
        if (infer__str_eq(e.key, "general.architecture")) e = infer_gguf_kv_str("general.architecture", arch);
        else if (e.key.len > ol + 1 && !memcmp(e.key.ptr, old, ol) && e.key.ptr[ol] == '.') {
            snprintf(key[i], sizeof key[i], "%s.%.*s", arch, (int)(e.key.len - ol - 1), e.key.ptr + ol + 1);
            if (strstr(key[i], ".hidden_activation")) continue;
            e.key.ptr = key[i];
            e.key.len = strlen(key[i]);
        }
        kv[nkv++] = e;
    }
    snprintf(act_key, sizeof act_key, "%s.hidden_activation", arch);
    if (v->act) kv[nkv++] = infer_gguf_kv_str(act_key, v->act);
    infer_tensor *t = calloc((size_t)g.n_tensors * 2, sizeof *t);
    void **own = calloc((size_t)g.n_tensors * 2, sizeof(void *));
    char (*names)[64] = calloc((size_t)g.n_tensors, 64);
    int nt = 0;
    for (int64_t i = 0; i < g.n_tensors; i++) {
        t[nt] = g.tensors[i];
        if (bn_is_proj(t[nt].name) && v->to_i2_s && t[nt].type != INFER_TYPE_I2_S) {
            const int64_t cnt = t[nt].ne[0] * t[nt].ne[1];
            float *f = bn_tensor_f32(&g.tensors[i]);
            uint8_t *q = calloc(1, (size_t)cnt / 4 + 32);
            infer__quant_i2_s(f, q, cnt);
            t[nt].type = INFER_TYPE_I2_S;
            t[nt].data = own[nt] = q;
            t[nt].nbytes = (size_t)cnt / 4 + 32;
            free(f);
        }
        nt++;
        if (v->scales && bn_is_proj(g.tensors[i].name)) {
            for (int k = 0; k < 7; k++) {
                char suffix[32];
                snprintf(suffix, sizeof suffix, ".%s.weight", bn_proj[k]);
                const char *nm = g.tensors[i].name;
                if (strcmp(nm + strlen(nm) - strlen(suffix), suffix)) continue;
                snprintf(names[i], 64, "%.*s.scale", (int)(strlen(nm) - strlen(".weight")), nm);
                float *s = malloc(sizeof(float));
                *s = bn_scale_val[k];
                memset(&t[nt], 0, sizeof t[nt]);
                t[nt].name = names[i];
                t[nt].type = INFER_TYPE_F32;
                t[nt].n_dims = 1;
                t[nt].ne[0] = t[nt].ne[1] = t[nt].ne[2] = t[nt].ne[3] = 1;
                t[nt].data = own[nt] = s;
                t[nt].nbytes = 4;
                t[nt].scale = 1;
                nt++;
            }
        }
    }
    const int ok = infer_gguf_write(dst, kv, nkv, t, nt, (uint32_t)g.alignment, &err) == INFER_OK;
    for (int i = 0; i < nt; i++) free(own[i]);
    free(own); free(t); free(names); free(kv);
    infer_gguf_free(&g);
    free(p);
    return ok;
}

static void test_load_errors_bitnet(void) {
    const char *f32 = SHARED "/golden/bitnet/model-F32.gguf";
    if (!file_exists(f32)) SKIP("%s not found", f32);
    const char *tmp = tmp_path("infer_bitnet_bad.gguf");
    infer_model *m;
    infer_error err;
    bn_variant v = { NULL, "gelu_new", 0, 0 };
    CHECK(bn_write(f32, tmp, &v));
    CHECK(infer_model_load(&m, tmp, NULL, &err) == INFER_ERR_UNSUPPORTED && strstr(err.msg, "bitnet.hidden_activation") && strstr(err.msg, "gelu_new"));
    /* a missing sub-norm names the tensor */
    size_t n;
    uint8_t *p = slurp(f32, &n);
    infer_gguf g;
    CHECK(p && infer_gguf_parse(&g, p, n, &err) == INFER_OK);
    if (!p) return;
    infer_tensor *t = malloc(sizeof *t * (size_t)g.n_tensors);
    int nt = 0;
    for (int64_t i = 0; i < g.n_tensors; i++) if (strcmp(g.tensors[i].name, "blk.1.ffn_sub_norm.weight")) t[nt++] = g.tensors[i];
    CHECK(infer_gguf_write(tmp, g.kv, g.n_kv, t, nt, (uint32_t)g.alignment, &err) == INFER_OK);
    CHECK(infer_model_load(&m, tmp, NULL, &err) == INFER_ERR_FORMAT && strstr(err.msg, "blk.1.ffn_sub_norm.weight"));
    /* a zero `.scale` is refused */
    float zero = 0;
    infer_tensor *t2 = malloc(sizeof *t2 * ((size_t)g.n_tensors + 1));
    memcpy(t2, g.tensors, sizeof *t2 * (size_t)g.n_tensors);
    memset(&t2[g.n_tensors], 0, sizeof *t2);
    t2[g.n_tensors].name = "blk.0.ffn_up.scale";
    t2[g.n_tensors].type = INFER_TYPE_F32;
    t2[g.n_tensors].n_dims = 1;
    t2[g.n_tensors].ne[0] = t2[g.n_tensors].ne[1] = t2[g.n_tensors].ne[2] = t2[g.n_tensors].ne[3] = 1;
    t2[g.n_tensors].data = &zero;
    t2[g.n_tensors].nbytes = 4;
    CHECK(infer_gguf_write(tmp, g.kv, g.n_kv, t2, g.n_tensors + 1, (uint32_t)g.alignment, &err) == INFER_OK);
    CHECK(infer_model_load(&m, tmp, NULL, &err) == INFER_ERR_FORMAT && strstr(err.msg, "blk.0.ffn_up.scale"));
    free(t); free(t2);
    infer_gguf_free(&g);
    free(p);
    remove(tmp);
}

/* ---- >>kv, >>session: one sequence gives the same logits however it is fed ---- */
/* the same logits whatever the chunking, the thread count, and after a reset (paged KV reuse) */
static void test_session_chunks_threads_reset(void) {
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    int32_t ids[70];
    for (int i = 0; i < 70; i++) ids[i] = (i * 37 + 1) % 512;
    float *a = malloc(sizeof(float) * 512 * 70), *b = malloc(sizeof(float) * 512 * 70);
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1;
    sp.n_threads = 1;
    infer_session *s;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 70, a, 1, &err) == INFER_OK);
    infer_session_reset(s);
    CHECK(infer_eval(s, ids, 33, b, 1, &err) == INFER_OK);      /* reuses freed blocks */
    CHECK(infer_eval(s, ids + 33, 37, b + 33 * 512, 1, &err) == INFER_OK);
    double mx = 0;
    for (int i = 0; i < 512 * 70; i++) mx = fmax(mx, fabs(a[i] - b[i]));
    CHECK_MSG(mx == 0, "chunked vs whole: max diff %g", mx);
    infer_session_free(s);
    sp.n_threads = 2;
    sp.n_ubatch = 5;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 70, b, 1, &err) == INFER_OK);
    mx = 0;
    for (int i = 0; i < 512 * 70; i++) mx = fmax(mx, fabs(a[i] - b[i]));
    CHECK_MSG(mx == 0, "2 threads, ubatch 5 vs 1 thread: max diff %g", mx);
    /* context overflow is an error, not a crash */
    infer_session_free(s);
    sp.n_ctx = 32;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 40, NULL, 0, &err) == INFER_ERR_CONTEXT);
    int32_t bad = 9999;
    CHECK(infer_eval(s, &bad, 1, NULL, 0, &err) == INFER_ERR_ARG);
    /* f16 KV stays close to f32 */
    infer_session_free(s);
    sp.n_ctx = 0; sp.precise = 0; sp.kv_type = INFER_TYPE_F16;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_eval(s, ids, 70, b, 1, &err) == INFER_OK);
    mx = 0;
    for (int i = 0; i < 512 * 70; i++) mx = fmax(mx, fabs(a[i] - b[i]));
    CHECK_MSG(mx < 0.05, "f16 KV vs f32: max diff %g", mx);
    infer_session_free(s);
    free(a); free(b);
    infer_model_free(m);
}

/* ---- >>forward: whole models against the golden logits ---- */
static const infer_kernels *golden_backend;   /* NULL: the CPU; the GPU tests set it */
typedef struct { double max_abs, mean_abs; } diff_t;

/* prompt ++ the 16 greedy tokens of the reference file through the model at `path`, the prompt
 * in one call (chunks of o.ubatch) and every generated token alone; |logit - reference| over
 * all rows (-1 when it cannot run), and with fast_file the reference engine's own mean |diff| */
static diff_t run_golden(const char *dir, const char *path, const char *prompt, const char *ref_file, run_opts o, const char *fast_file, double *ref_fast_mean) {
    diff_t d = { -1, -1 };
    char file[512];
    int32_t ids[600];
    int np = read_prompt(dir, prompt, ids, 512);
    snprintf(file, sizeof file, "%s/logits/%s", dir, ref_file);
    size_t nref;
    float *ref = read_floats(file, &nref);
    infer_model *m;
    infer_error err;
    if (!np || !ref || infer_model_load(&m, path, NULL, &err) != INFER_OK) { printf("    cannot load %s: %s\n", path, ref ? err.msg : "no reference"); free(ref); return d; }
    const int V = infer_model_config(m)->n_vocab;
    const int rows = (int)(nref / V);
    for (int g = np; g < rows; g++) {      /* greedy token g-np = argmax of row g-1 of the reference */
        const float *r = ref + (size_t)(g - 1) * V;
        int best = 0;
        for (int v = 1; v < V; v++) if (r[v] > r[best]) best = v;
        ids[g] = best;
    }
    float *out = eval_logits(m, ids, rows, np, o);
    if (out) {
        double mx = 0, sum = 0;
        for (size_t i = 0; i < (size_t)V * rows; i++) {
            double e = fabs((double)out[i] - ref[i]);
            if (!(e <= mx)) mx = e;       /* nan propagates as a failure */
            sum += e;
        }
        d.max_abs = mx;
        d.mean_abs = sum / ((double)V * rows);
        if (fast_file && ref_fast_mean) {
            snprintf(file, sizeof file, "%s/logits/%s", dir, fast_file);
            size_t nf;
            float *fast = read_floats(file, &nf);
            *ref_fast_mean = -1;
            if (fast && nf == nref) {
                double s2 = 0;
                for (size_t i = 0; i < nf; i++) s2 += fabs((double)fast[i] - ref[i]);
                *ref_fast_mean = s2 / nf;
            }
            free(fast);
        }
    }
    free(out);
    infer_model_free(m);
    free(ref);
    return d;
}

/* One run of a golden check: exact maths or the fast path, the prompt in chunks of ubatch on
 * `threads` threads, on the short prompt, the long one or both (prompts 1, 2, 3). An exact run
 * must be within 2e-3 of the reference on every row; a fast one within 1.5 x the reference
 * engine's own mean |diff| + 0.01 on average. */
typedef struct { int precise, ubatch, threads, prompts; } golden_run;
#define N_RUNS(runs) (int)(sizeof runs / sizeof runs[0])
/* exact: the prompt batched, token by token (1 thread) and in chunks of 7 (the long prompt) */
static const golden_run golden_precise_runs[] = { { 1, 512, 2, 3 }, { 1, 1, 1, 3 }, { 1, 7, 2, 2 } };
/* fast: the prompt batched, and token by token (the decode path) */
static const golden_run golden_fast_runs[] = { { 0, 512, 2, 3 }, { 0, 1, 2, 3 } };

/* the golden model of `family` (model: its model-<variant>.gguf, or another file that holds the
 * same values) against the reference logits of `variant` */
static const char *golden_label = "";     /* said after the variant in golden_check's lines (how a run differs) */
static void golden_check(const char *family, const char *variant, const char *model, const golden_run *runs, int n_runs, int verbose) {
    char dir[256], path[512], ref[64], fast[64];
    snprintf(dir, sizeof dir, SHARED "/golden/%s", family);
    if (!file_exists(dir)) SKIP("%s not found", dir);
    if (model) snprintf(path, sizeof path, "%s", model);
    else snprintf(path, sizeof path, "%s/model-%s.gguf", dir, variant);
    verbose |= getenv("INFER_TEST_VERBOSE") != NULL;
    static const char *const prompts[2] = { "short", "long" };
    for (int p = 0; p < 2; p++) {
        if (!strcmp(variant, "F32")) snprintf(ref, sizeof ref, "F32.%s.hp.bin", prompts[p]);
        else snprintf(ref, sizeof ref, "%s.%s.deq.hp.bin", variant, prompts[p]);
        snprintf(fast, sizeof fast, "%s.%s.bin", variant, prompts[p]);
        for (const golden_run *g = runs; g < runs + n_runs; g++) {
            if (!(g->prompts >> p & 1)) continue;
            double theirs = -1;
            const run_opts o = { g->precise, g->ubatch, g->threads, 512, golden_backend };
            const diff_t d = run_golden(dir, path, prompts[p], ref, o, g->precise ? NULL : fast, &theirs);
            const char *what = g->precise ? "precise" : "fast";
            if (verbose) printf("    %s %s%s %-5s %s ubatch %3d: max |diff| %.3g, mean %.4g (reference engine %.4f)\n", family, variant, golden_label, prompts[p], what,
                                g->ubatch, d.max_abs, d.mean_abs, theirs);
            if (g->precise) CHECK_MSG(d.max_abs >= 0 && d.max_abs <= 2e-3, "%s %s%s %s %s, ubatch %d: max abs diff %.3g (mean %.3g)", family, variant, golden_label,
                                      prompts[p], what, g->ubatch, d.max_abs, d.mean_abs);
            else CHECK_MSG(d.mean_abs >= 0 && theirs >= 0 && d.mean_abs <= 1.5 * theirs + 0.01, "%s %s%s %s %s, ubatch %d: mean abs diff %.4g, reference engine's %.4g",
                           family, variant, golden_label, prompts[p], what, g->ubatch, d.mean_abs, theirs);
        }
    }
}
static void golden_precise(const char *family, const char *variant) { golden_check(family, variant, NULL, golden_precise_runs, N_RUNS(golden_precise_runs), 0); }
static void golden_fast(const char *family, const char *variant) { golden_check(family, variant, NULL, golden_fast_runs, N_RUNS(golden_fast_runs), 0); }
static void golden_both(const char *family, const char *variant) { golden_precise(family, variant); golden_fast(family, variant); }

static void test_golden_llama_f32(void) { golden_precise("llama", "F32"); }
static void test_golden_llama_q8_0(void) { golden_precise("llama", "Q8_0"); }
static void test_golden_llama_q4_0(void) { golden_precise("llama", "Q4_0"); }
static void test_golden_llama_quants(void) {
    const char *v[] = { "Q4_K", "Q4_K_M", "Q6_K", "MXFP4", "NVFP4" };
    for (int i = 0; i < 5; i++) golden_precise("llama", v[i]);
}
static void test_golden_llama_fast(void) {
    const char *v[] = { "F32", "Q8_0", "Q4_0", "Q4_K", "Q4_K_M", "Q6_K", "MXFP4", "NVFP4" };
    for (int i = 0; i < 8; i++) golden_fast("llama", v[i]);
}
static void test_golden_llama3_ropescale(void) { golden_both("llama3_ropescale", "F32"); }
static void test_golden_qwen3(void) { golden_both("qwen3", "F32"); }
static void test_golden_qwen3moe(void) { golden_both("qwen3moe", "F32"); }
static void test_golden_qwen3moe_mxfp4(void) { golden_both("qwen3moe", "MXFP4_MOE"); }
static void test_golden_qwen35(void) { golden_both("qwen35", "F32"); }
static void test_golden_qwen35moe(void) { golden_both("qwen35moe", "F32"); }
static void test_golden_qwen35moe_mxfp4(void) { golden_both("qwen35moe", "MXFP4_MOE"); }

/* The quantized qwen3.5 variants: every one against its dequantized exact maths and the fast
 * rule on the short prompt (batched and one token at a time); Q4_K_M on the long prompt too,
 * with ubatch 7 splitting the 64-token DeltaNet chunks. */
static void test_golden_qwen35_quants(void) {
    static const golden_run short_runs[] = { { 1, 512, 2, 1 }, { 1, 1, 1, 1 }, { 0, 512, 2, 1 } };
    const char *v[] = { "Q8_0", "Q4_0", "Q4_K", "Q6_K", "MXFP4", "NVFP4" };
    for (int i = 0; i < 6; i++) golden_check("qwen35", v[i], NULL, short_runs, N_RUNS(short_runs), 0);
    golden_both("qwen35", "Q4_K_M");
}

/* bitnet: precise max |diff| on every row (prefill in one batch, one token at a time, and
 * chunks of 7, on both prompts), and the fast path's mean |diff| against the reference
 * engine's */
static const golden_run bitnet_runs[] = { { 1, 512, 2, 3 }, { 1, 1, 1, 3 }, { 1, 7, 2, 3 }, { 0, 512, 2, 3 } };
static void test_golden_bitnet_f32(void) { golden_check("bitnet", "F32", NULL, bitnet_runs, N_RUNS(bitnet_runs), 1); }
static void test_golden_bitnet_tq2_0(void) { golden_check("bitnet", "TQ2_0", NULL, bitnet_runs, N_RUNS(bitnet_runs), 1); }
static void test_golden_bitnet_tq1_0(void) { golden_check("bitnet", "TQ1_0", NULL, bitnet_runs, N_RUNS(bitnet_runs), 1); }

static void test_golden_stories_greedy(void) {
    char *md = slurp(SHARED "/models/GOLDEN_stories260K.md", NULL);
    if (!md || !file_exists(SHARED "/models/stories260K.gguf")) { free(md); SKIP("../shared/models not found"); }
    int32_t want[300];
    int n = golden_ids(md, "greedy from BOS", want, 300);
    CHECK(n == 256);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    for (int precise = 0; precise < 2; precise++) {
        infer_session_params sp = infer_session_default_params();
        sp.precise = precise;
        infer_session *s;
        CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
        float logits[512];
        int32_t tok = 1;   /* BOS */
        int same = 0;
        for (int i = 0; i < n; i++) {
            if (infer_eval(s, &tok, 1, logits, 0, &err) != INFER_OK) break;
            int best = 0;
            for (int v = 1; v < 512; v++) if (logits[v] > logits[best]) best = v;
            if (best != want[i]) break;
            same++;
            tok = best;
        }
        CHECK_MSG(same == n, "precise=%d: greedy tokens agree for %d of %d", precise, same, n);
        infer_session_free(s);
    }
    infer_model_free(m);
    free(md);
}

static void test_golden_stories_nll(void) {
    char *md = slurp(SHARED "/models/GOLDEN_stories260K.md", NULL);
    if (!md || !file_exists(SHARED "/models/stories260K.gguf")) { free(md); SKIP("../shared/models not found"); }
    int32_t ids[64];
    int n = golden_ids(md, "tokens(35)", ids, 64);
    CHECK(n == 35);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1;
    infer_session *s;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    float *logits = malloc(sizeof(float) * 512 * n);
    CHECK(infer_eval(s, ids, n, logits, 1, &err) == INFER_OK);
    double nll = 0;
    for (int i = 0; i + 1 < n; i++) {
        const float *l = logits + (size_t)i * 512;
        double mx = l[0], sum = 0;
        for (int v = 1; v < 512; v++) if (l[v] > mx) mx = l[v];
        for (int v = 0; v < 512; v++) sum += exp(l[v] - mx);
        nll -= l[ids[i + 1]] - mx - log(sum);
    }
    CHECK_NEAR(nll, 54.4041, 0.001);
    CHECK_NEAR(exp(nll / (n - 1)), 4.9536, 0.0005);
    /* the tokenizer gives the same ids for the golden sentence */
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    int32_t got[64] = { 0 };
    const char *sentence = "One day, a clever fox found a shiny key under the old oak tree.";
    int k = tok ? infer_tokenize(tok, sentence, strlen(sentence), 1, 1, got, 64) : -1;
    CHECK(k == n && memcmp(got, ids, sizeof(int32_t) * n) == 0);
    free(logits);
    infer_session_free(s);
    infer_model_free(m);
    free(md);
}

/* the I2_S flavour: the golden TQ2_0 model with every projection re-encoded as I2_S.
 * A TQ2_0 block stores its own scale d; I2_S one scale per tensor. The golden's ternary
 * values carry one absmean scale per tensor, so every block of a tensor has the same d
 * (checked here), and the I2_S form holds exactly the same values: precise logits must be
 * bit-identical. */
static void test_golden_bitnet_i2_s(void) {
    const char *dir = SHARED "/golden/bitnet";
    if (!file_exists(dir)) SKIP("%s not found", dir);
    size_t n;
    uint8_t *p = slurp(SHARED "/golden/bitnet/model-TQ2_0.gguf", &n);
    infer_gguf g;
    infer_error err;
    CHECK(p && infer_gguf_parse(&g, p, n, &err) == INFER_OK);
    if (!p) return;
    int tensors = 0, uniform = 0;
    for (int64_t i = 0; i < g.n_tensors; i++) {
        const infer_tensor *t = &g.tensors[i];
        if (t->type != INFER_TYPE_TQ2_0) continue;
        const infer_block_tq2_0 *b = (const infer_block_tq2_0 *)t->data;
        const int64_t nb = t->ne[0] * t->ne[1] / INFER_QK_K;
        int same = 1;
        for (int64_t k = 1; k < nb; k++) same &= b[k].d == b[0].d;
        tensors++;
        uniform += same;
    }
    infer_gguf_free(&g);
    free(p);
    CHECK_MSG(tensors == 21 && uniform == tensors, "%d of %d TQ2_0 tensors have one d in every block", uniform, tensors);
    bn_variant v = { NULL, NULL, 1, 0 };
    const char *i2s = tmp_path("infer_bitnet_i2s.gguf");
    CHECK(bn_write(SHARED "/golden/bitnet/model-TQ2_0.gguf", i2s, &v));
    int32_t ids[600];
    const int np = read_prompt(dir, "long", ids, 512);
    int V = 0;
    const run_opts exact = { .precise = 1, .threads = 2, .n_ctx = 256 }, fast = { .threads = 2, .n_ctx = 256 };
    float *a = file_logits(SHARED "/golden/bitnet/model-TQ2_0.gguf", ids, np, exact, &V);
    float *b = file_logits(i2s, ids, np, exact, &V);
    CHECK(a && b);
    if (a && b) {
        const double d = max_abs_diff(a, b, (size_t)np * V);
        printf("    precise, long prompt: I2_S vs TQ2_0 max |diff| %.3g\n", d);
        CHECK_MSG(memcmp(a, b, sizeof(float) * (size_t)np * V) == 0, "I2_S and TQ2_0 precise logits differ (max %.3g)", d);
    }
    free(a); free(b);
    /* The fast path: both dot the same codes against the same Q8_K activations, but I2_S
     * multiplies by its tensor scale after the sum and TQ2_0 by d inside every block: the
     * matmuls agree to ~1e-7 relative. Where such a difference moves a value across an int8
     * rounding boundary of the next quantization, one code differs, and a code of the last
     * layer's input shifts a whole row of logits by about one int8 step; so the two agree to
     * within the int8 noise (the fast path's own distance from the exact maths), not bit
     * for bit. */
    float *ex = file_logits(SHARED "/golden/bitnet/model-TQ2_0.gguf", ids, np, exact, &V);
    a = file_logits(SHARED "/golden/bitnet/model-TQ2_0.gguf", ids, np, fast, &V);
    b = file_logits(i2s, ids, np, fast, &V);
    if (a && b && ex) {
        double mean = 0, noise = 0;
        for (size_t i = 0; i < (size_t)np * V; i++) { mean += fabs((double)a[i] - b[i]); noise += fabs((double)a[i] - ex[i]); }
        mean /= (double)np * V;
        noise /= (double)np * V;
        printf("    fast, long prompt: I2_S vs TQ2_0 mean |diff| %.3g (TQ2_0 fast vs exact %.3g)\n", mean, noise);
        CHECK_MSG(mean <= noise, "I2_S and TQ2_0 fast logits differ by %.3g on average, more than the int8 noise %.3g", mean, noise);
    }
    free(a); free(b); free(ex);
    /* and the I2_S model against the golden exact maths, precise and with the fast-path rule */
    static const golden_run runs[] = { { 1, 512, 2, 3 }, { 0, 512, 2, 3 } };
    golden_check("bitnet", "TQ2_0", i2s, runs, N_RUNS(runs), 1);
    remove(i2s);
}

/* ---- >>forward: the same logits however a model is run, whatever its shape and weight type ---- */
/* The fast path gives the same bits whatever the thread count and however the tokens are
 * batched (whole prompt, ubatch 5, or one at a time as in decode), F16 KV included: on
 * models whose matmuls take each kind of tile (f32, X4 int8) and the reference tile, and
 * on MoE experts. A hybrid's DeltaNet layers run a prompt as the chunked algorithm, whose
 * sums fall in another order when the chunks are cut elsewhere: there only the thread
 * count is bit-exact, and batching is held to 1e-3. */
static void test_forward_fast_invariance(void) {
    const char *files[] = { SHARED "/models/stories260K.gguf", SHARED "/golden/llama/model-Q4_0.gguf", SHARED "/golden/llama/model-Q8_0.gguf",
                            SHARED "/golden/llama/model-Q4_K.gguf", SHARED "/golden/qwen3moe/model-F32.gguf", SHARED "/golden/qwen35moe/model-F32.gguf" };
    int ran = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        infer_model *m;
        infer_error err;
        if (!file_exists(files[f])) continue;
        if (infer_model_load(&m, files[f], NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", files[f], err.msg); continue; }
        ran++;
        const int V = infer_model_config(m)->n_vocab, T = 40;
        int32_t ids[40];
        for (int i = 0; i < T; i++) ids[i] = (i * 37 + 1) % V;
        float *a = malloc(sizeof(float) * V * T), *b = malloc(sizeof(float) * V * T);
        infer_session_params sp = infer_session_default_params();
        sp.n_ctx = 64;
        const int hybrid = strstr(files[f], "qwen35") != NULL;
        static const char *what[4] = { "", "2 threads", "2 threads, ubatch 5", "2 threads, token by token" };
        for (int run = 0; run < 4; run++) {
            infer_session *s;
            sp.n_threads = run == 0 ? 1 : 2;
            sp.n_ubatch = run == 2 ? 5 : 0;
            CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
            if (run < 3) CHECK(infer_eval(s, ids, T, run == 0 ? a : b, 1, &err) == INFER_OK);
            else for (int i = 0; i < T; i++) CHECK(infer_eval(s, ids + i, 1, b + (size_t)i * V, 1, &err) == INFER_OK);
            infer_session_free(s);
            if (run == 0) continue;
            double mx = 0, mean = 0;
            for (int i = 0; i < V * T; i++) { mx = fmax(mx, fabs(a[i] - b[i])); mean += fabs(a[i] - b[i]) / (V * T); }
            CHECK_MSG(hybrid && run >= 2 ? mx < 1e-3 : mx == 0, "%s fast path, %s vs 1 thread whole prompt: max diff %g (mean %g)", files[f], what[run], mx, mean);
        }
        free(a); free(b);
        infer_model_free(m);
    }
    if (!ran) SKIP("../shared not found");
}

/* whole-model consistency of the recurrent state */
static float *qw_eval_all(infer_model *m, const int32_t *ids, int n, int n_batched, int ubatch, int threads, int precise) {
    const int V = infer_model_config(m)->n_vocab;
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise; sp.n_ubatch = ubatch; sp.n_threads = threads; sp.n_ctx = 256;
    infer_session *s;
    infer_error err;
    float *out = malloc(sizeof(float) * V * n);
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); free(out); return NULL; }
    infer_status st = infer_eval(s, ids, n_batched, out, 1, &err);
    for (int i = n_batched; i < n && st == INFER_OK; i++) st = infer_eval(s, ids + i, 1, out + (size_t)i * V, 1, &err);
    CHECK_MSG(st == INFER_OK, "%s", err.msg);
    /* a reset gives a fresh sequence: zero recurrent state, empty cache */
    infer_session_reset(s);
    float *again = malloc(sizeof(float) * V * n_batched);
    CHECK(infer_eval(s, ids, n_batched, again, 1, &err) == INFER_OK);
    CHECK_MSG(max_abs_diff(again, out, (size_t)V * n_batched) == 0, "after reset: max diff %g", max_abs_diff(again, out, (size_t)V * n_batched));
    free(again);
    infer_session_free(s);
    return out;
}

/* decode after a chunked prefill = the all-recurrent run, token by token; prompts cut by
 * ubatches that split the DeltaNet chunks agree too */
static void test_forward_qwen35_prefill_vs_recurrent(void) {
    const char *path = SHARED "/golden/qwen35/model-F32.gguf";
    if (!file_exists(path)) SKIP("%s not found", path);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, path, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    const int V = infer_model_config(m)->n_vocab, n = 140, n_prompt = 130;
    int32_t ids[140];
    for (int i = 0; i < n; i++) ids[i] = (i * 97 + 13) % V;
    float *rec = qw_eval_all(m, ids, n, 1, 1, 1, 1);                    /* every token alone */
    float *chunked = qw_eval_all(m, ids, n, n_prompt, 512, 2, 1);       /* 64 + 64 + 2, then decode */
    float *split = qw_eval_all(m, ids, n, n_prompt, 50, 2, 1);          /* ubatches of 50 */
    if (rec && chunked && split) {
        double d1 = max_abs_diff(chunked, rec, (size_t)V * n), d2 = max_abs_diff(split, rec, (size_t)V * n);
        CHECK_MSG(d1 < 2e-4, "chunked prefill + decode vs recurrent: max diff %.3g", d1);
        CHECK_MSG(d2 < 2e-4, "ubatch 50 vs recurrent: max diff %.3g", d2);
    }
    free(rec); free(chunked); free(split);
    infer_model_free(m);
}

/* models of other shapes, built here:
 * Random-weight GGUFs with shapes the goldens do not have: d_k != d_v, one key head for three
 * value heads, a conv kernel of 3, an explicit recurrent_layers array, a rope section on the
 * e stream, head_dim != n_embd / n_head, a multi-token-prediction block, MoE with a gated
 * shared expert and no renormalisation. No reference logits: they must load, run, and agree
 * across chunkings, thread counts and paths. */
typedef struct { char name[64]; int n_dims; int64_t ne[3]; float lo, hi; } qw_tensor;
typedef struct { const char *arch; buf_t kv; uint64_t n_kv; qw_tensor t[160]; int n_t; } qw_gguf;

static void qw_key(qw_gguf *g, const char *suffix, uint32_t type) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", g->arch, suffix);
    b_str(&g->kv, key); b_u32(&g->kv, type);
    g->n_kv++;
}
static void qw_kv_u32(qw_gguf *g, const char *suffix, uint32_t v) { qw_key(g, suffix, INFER_GGUF_U32); b_u32(&g->kv, v); }
static void qw_kv_f32(qw_gguf *g, const char *suffix, float v) { qw_key(g, suffix, INFER_GGUF_F32); b_put(&g->kv, &v, 4); }
static void qw_kv_arr(qw_gguf *g, const char *suffix, uint32_t et, const int32_t *v, int n) {
    qw_key(g, suffix, INFER_GGUF_ARRAY); b_u32(&g->kv, et); b_u64(&g->kv, (uint64_t)n);
    for (int i = 0; i < n; i++) { if (et == INFER_GGUF_BOOL) { uint8_t u = (uint8_t)v[i]; b_put(&g->kv, &u, 1); } else b_u32(&g->kv, (uint32_t)v[i]); }
}
/* a tensor of uniform(lo, hi) values; ne1 = ne2 = 0 for fewer dims */
static void qw_t(qw_gguf *g, float lo, float hi, int64_t ne0, int64_t ne1, int64_t ne2, const char *fmt, int l) {
    qw_tensor *t = &g->t[g->n_t++];
    snprintf(t->name, sizeof t->name, fmt, l);
    t->n_dims = ne2 ? 3 : ne1 ? 2 : 1;
    t->ne[0] = ne0; t->ne[1] = ne1 ? ne1 : 1; t->ne[2] = ne2 ? ne2 : 1;
    t->lo = lo; t->hi = hi;
}
static void qw_w(qw_gguf *g, int64_t in, int64_t out, const char *fmt, int l) {     /* a matrix W[out, in] */
    const float a = 1.5f / sqrtf((float)in);
    qw_t(g, -a, a, in, out, 0, fmt, l);
}
static uint8_t *qw_gguf_bytes(qw_gguf *g, size_t *size, uint64_t seed) {
    buf_t b = { 0 };
    b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u64(&b, (uint64_t)g->n_t); b_u64(&b, g->n_kv + 1);
    b_kv_str(&b, "general.architecture", g->arch);
    b_put(&b, g->kv.p, g->kv.n);
    uint64_t off = 0;
    for (int i = 0; i < g->n_t; i++) {
        const qw_tensor *t = &g->t[i];
        b_str(&b, t->name); b_u32(&b, (uint32_t)t->n_dims);
        for (int d = 0; d < t->n_dims; d++) b_u64(&b, (uint64_t)t->ne[d]);
        b_u32(&b, INFER_TYPE_F32); b_u64(&b, off);
        off += ((uint64_t)t->ne[0] * t->ne[1] * t->ne[2] * 4 + 31) / 32 * 32;
    }
    b_pad(&b, 32);
    infer__rng r;
    infer__rng_seed(&r, seed);
    for (int i = 0; i < g->n_t; i++) {
        const qw_tensor *t = &g->t[i];
        for (int64_t j = 0; j < t->ne[0] * t->ne[1] * t->ne[2]; j++) { float v = qw_uniform(&r, t->lo, t->hi); b_put(&b, &v, 4); }
        b_pad(&b, 32);
    }
    free(g->kv.p);
    *size = b.n;
    return b.p;
}

typedef struct { int E, n_head, n_head_kv, hd, n_rot, K, d_k, n_k, n_v, d_v, n_ff, n_exp, n_used, ff_exp, ff_sh; } qw_shape;

static void qw_attention_tensors(qw_gguf *g, const qw_shape *s, int l) {
    qw_w(g, s->E, 2 * s->n_head * s->hd, "blk.%d.attn_q.weight", l);
    qw_w(g, s->E, s->n_head_kv * s->hd, "blk.%d.attn_k.weight", l);
    qw_w(g, s->E, s->n_head_kv * s->hd, "blk.%d.attn_v.weight", l);
    qw_w(g, s->n_head * s->hd, s->E, "blk.%d.attn_output.weight", l);
    qw_t(g, 0.8f, 1.2f, s->hd, 0, 0, "blk.%d.attn_q_norm.weight", l);
    qw_t(g, 0.8f, 1.2f, s->hd, 0, 0, "blk.%d.attn_k_norm.weight", l);
}
static void qw_deltanet_tensors(qw_gguf *g, const qw_shape *s, int l) {
    const int CD = 2 * s->n_k * s->d_k + s->n_v * s->d_v;
    qw_w(g, s->E, CD, "blk.%d.attn_qkv.weight", l);
    qw_w(g, s->E, s->n_v * s->d_v, "blk.%d.attn_gate.weight", l);
    qw_w(g, s->E, s->n_v, "blk.%d.ssm_beta.weight", l);
    qw_w(g, s->E, s->n_v, "blk.%d.ssm_alpha.weight", l);
    qw_t(g, -0.6f, 0.6f, s->K, CD, 0, "blk.%d.ssm_conv1d.weight", l);
    qw_t(g, -1.0f, 1.0f, s->n_v, 0, 0, "blk.%d.ssm_dt.bias", l);
    qw_t(g, -1.5f, -0.05f, s->n_v, 0, 0, "blk.%d.ssm_a", l);
    qw_t(g, 0.8f, 1.2f, s->d_v, 0, 0, "blk.%d.ssm_norm.weight", l);
    qw_w(g, s->n_v * s->d_v, s->E, "blk.%d.ssm_out.weight", l);
}
static void qw_ffn_tensors(qw_gguf *g, const qw_shape *s, int l) {
    qw_t(g, 0.8f, 1.2f, s->E, 0, 0, "blk.%d.post_attention_norm.weight", l);
    if (!s->n_exp) {
        qw_w(g, s->E, s->n_ff, "blk.%d.ffn_gate.weight", l);
        qw_w(g, s->E, s->n_ff, "blk.%d.ffn_up.weight", l);
        qw_w(g, s->n_ff, s->E, "blk.%d.ffn_down.weight", l);
        return;
    }
    const float a = 1.5f / sqrtf((float)s->E), b = 1.5f / sqrtf((float)s->ff_exp);
    qw_t(g, -2 * a, 2 * a, s->E, s->n_exp, 0, "blk.%d.ffn_gate_inp.weight", l);
    qw_t(g, -a, a, s->E, s->ff_exp, s->n_exp, "blk.%d.ffn_gate_exps.weight", l);
    qw_t(g, -a, a, s->E, s->ff_exp, s->n_exp, "blk.%d.ffn_up_exps.weight", l);
    qw_t(g, -b, b, s->ff_exp, s->E, s->n_exp, "blk.%d.ffn_down_exps.weight", l);
    qw_w(g, s->E, s->ff_sh, "blk.%d.ffn_gate_shexp.weight", l);
    qw_w(g, s->E, s->ff_sh, "blk.%d.ffn_up_shexp.weight", l);
    qw_w(g, s->ff_sh, s->E, "blk.%d.ffn_down_shexp.weight", l);
    qw_w(g, s->E, 1, "blk.%d.ffn_gate_inp_shexp.weight", l);
}

/* the common keys and the global tensors of a qwen35 / qwen35moe file */
static void qw_common(qw_gguf *g, const qw_shape *s, int block_count, int n_vocab, int tied) {
    qw_kv_u32(g, "block_count", (uint32_t)block_count);
    qw_kv_u32(g, "context_length", 4096);
    qw_kv_u32(g, "embedding_length", (uint32_t)s->E);
    qw_kv_u32(g, "attention.head_count", (uint32_t)s->n_head);
    qw_kv_u32(g, "attention.head_count_kv", (uint32_t)s->n_head_kv);
    qw_kv_u32(g, "attention.key_length", (uint32_t)s->hd);
    qw_kv_u32(g, "attention.value_length", (uint32_t)s->hd);
    qw_kv_f32(g, "attention.layer_norm_rms_epsilon", 1e-6f);
    qw_kv_f32(g, "rope.freq_base", 1e6f);
    qw_kv_u32(g, "rope.dimension_count", (uint32_t)s->n_rot);
    qw_kv_u32(g, "ssm.conv_kernel", (uint32_t)s->K);
    qw_kv_u32(g, "ssm.state_size", (uint32_t)s->d_k);
    qw_kv_u32(g, "ssm.group_count", (uint32_t)s->n_k);
    qw_kv_u32(g, "ssm.time_step_rank", (uint32_t)s->n_v);
    qw_kv_u32(g, "ssm.inner_size", (uint32_t)(s->n_v * s->d_v));
    qw_t(g, -1, 1, s->E, n_vocab, 0, "token_embd.weight", 0);
    qw_t(g, 0.8f, 1.2f, s->E, 0, 0, "output_norm.weight", 0);
    if (!tied) qw_w(g, s->E, n_vocab, "output.weight", 0);
}

/* qwen35moe: layers 0, 2, 3 DeltaNet, 1 and 4 attention (by the explicit array) */
static uint8_t *qw_make_moe(size_t *size) {
    static const qw_shape s = { 48, 3, 1, 20, 8, 3, 12, 1, 3, 10, 0, 5, 3, 8, 12 };
    qw_gguf g;
    memset(&g, 0, sizeof g);
    g.arch = "qwen35moe";
    qw_common(&g, &s, 5, 64, 0);
    const int32_t sections[4] = { 2, 1, 0, 1 }, recurrent[5] = { 1, 0, 1, 1, 0 };
    qw_kv_arr(&g, "rope.dimension_sections", INFER_GGUF_I32, sections, 4);
    qw_kv_arr(&g, "attention.recurrent_layers", INFER_GGUF_BOOL, recurrent, 5);
    qw_kv_u32(&g, "expert_count", (uint32_t)s.n_exp);
    qw_kv_u32(&g, "expert_used_count", (uint32_t)s.n_used);
    qw_kv_u32(&g, "expert_feed_forward_length", (uint32_t)s.ff_exp);
    qw_kv_u32(&g, "expert_shared_feed_forward_length", (uint32_t)s.ff_sh);
    qw_key(&g, "expert_weights_norm", INFER_GGUF_BOOL); b_put(&g.kv, "\0", 1);
    for (int l = 0; l < 5; l++) {
        qw_t(&g, 0.8f, 1.2f, s.E, 0, 0, "blk.%d.attn_norm.weight", l);
        if (recurrent[l]) qw_deltanet_tensors(&g, &s, l); else qw_attention_tensors(&g, &s, l);
        qw_ffn_tensors(&g, &s, l);
    }
    return qw_gguf_bytes(&g, size, 11);
}

/* qwen35: 3 main layers (interval 3: 0, 1 DeltaNet, 2 attention) + 1 MTP block, tied output,
 * n_k = n_v, no rope sections */
static uint8_t *qw_make_dense(size_t *size) {
    static const qw_shape s = { 32, 2, 2, 16, 16, 4, 16, 2, 2, 16, 40, 0, 0, 0, 0 };
    qw_gguf g;
    memset(&g, 0, sizeof g);
    g.arch = "qwen35";
    qw_common(&g, &s, 4, 50, 1);
    qw_kv_u32(&g, "feed_forward_length", (uint32_t)s.n_ff);
    qw_kv_u32(&g, "full_attention_interval", 3);
    qw_kv_u32(&g, "nextn_predict_layers", 1);
    for (int l = 0; l < 4; l++) {
        qw_t(&g, 0.8f, 1.2f, s.E, 0, 0, "blk.%d.attn_norm.weight", l);
        if (l < 2) qw_deltanet_tensors(&g, &s, l); else qw_attention_tensors(&g, &s, l);
        qw_ffn_tensors(&g, &s, l);
    }
    qw_w(&g, 2 * s.E, s.E, "blk.%d.nextn.eh_proj.weight", 3);
    qw_t(&g, 0.8f, 1.2f, s.E, 0, 0, "blk.%d.nextn.enorm.weight", 3);
    qw_t(&g, 0.8f, 1.2f, s.E, 0, 0, "blk.%d.nextn.hnorm.weight", 3);
    return qw_gguf_bytes(&g, size, 12);
}

static void qw_check_model(const char *what, uint8_t *bytes, size_t size, int n_layer, int n_recurrent) {
    infer_model *m;
    infer_error err;
    if (infer_model_load_memory(&m, bytes, size, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", what, err.msg); return; }
    const infer_config *c = infer_model_config(m);
    int rec = 0;
    for (int l = 0; l < c->n_layer; l++) rec += m->layers[l].recurrent;
    CHECK_MSG(c->n_layer == n_layer && rec == n_recurrent, "%s: %d layers, %d recurrent", what, c->n_layer, rec);
    const int V = c->n_vocab, n = 75;
    int32_t ids[75];
    for (int i = 0; i < n; i++) ids[i] = (i * 7 + 3) % V;
    float *rec1 = qw_eval_all(m, ids, n, 1, 1, 1, 1);          /* all recurrent, 1 thread */
    float *chunk1 = qw_eval_all(m, ids, n, 70, 512, 1, 1);     /* chunked prefill + decode */
    float *chunk2 = qw_eval_all(m, ids, n, 70, 512, 2, 1);     /* 2 threads */
    float *split = qw_eval_all(m, ids, n, 70, 7, 2, 1);        /* ubatches of 7 */
    float *fast = qw_eval_all(m, ids, n, 70, 512, 2, 0);       /* fast path */
    if (rec1 && chunk1 && chunk2 && split && fast) {
        const size_t N = (size_t)V * n;
        double sum = 0, l2 = 0;
        for (size_t i = 0; i < N; i++) { sum += fabs((double)fast[i] - rec1[i]); l2 += rec1[i] * (double)rec1[i]; }
        CHECK_MSG(l2 / N > 0.01, "%s: logits are nearly zero (rms %g)", what, sqrt(l2 / N));
        CHECK_MSG(max_abs_diff(chunk1, rec1, N) < 1e-4, "%s: chunked vs recurrent %.3g", what, max_abs_diff(chunk1, rec1, N));
        CHECK_MSG(max_abs_diff(chunk2, chunk1, N) == 0, "%s: 2 threads vs 1 %.3g", what, max_abs_diff(chunk2, chunk1, N));
        CHECK_MSG(max_abs_diff(split, rec1, N) < 1e-4, "%s: ubatch 7 vs recurrent %.3g", what, max_abs_diff(split, rec1, N));
        CHECK_MSG(sum / N < 0.02, "%s: fast vs precise mean diff %.3g", what, sum / N);
    }
    free(rec1); free(chunk1); free(chunk2); free(split); free(fast);
    infer_model_free(m);
}

static void test_forward_qwen35_other_shapes(void) {
    size_t n;
    uint8_t *f = qw_make_moe(&n);
    qw_check_model("qwen35moe d_k 12 d_v 10, 1 key head for 3 value heads", f, n, 5, 3);
    free(f);
    f = qw_make_dense(&n);
    qw_check_model("qwen35 with an MTP block", f, n, 3, 2);
    /* a metadata inconsistency names its key */
    infer_model *m;
    infer_error err;
    uint8_t *p = malloc(n);
    memcpy(p, f, n);
    for (size_t i = 0; i + 32 < n; i++)
        if (!memcmp(p + i, "qwen35.ssm.group_count", 22)) { p[i + 22 + 4] = 3; break; }   /* key, u32 type, value */
    CHECK(infer_model_load_memory(&m, p, n, NULL, &err) != INFER_OK);
    CHECK_MSG(strstr(err.msg, "ssm.group_count") != NULL, "%s", err.msg);
    free(p);
    free(f);
}

/* every weight type runs a whole model:
 * The golden llama's matrices re-encoded as TYPE (by our quantizer, or random blocks with a
 * small scale for the grid i-quants, which have none) must give, in precise mode, the same
 * logits as an F32 model holding the dequantized values: the matmul of each type is exactly
 * "dequantize, then f32 maths". The fast path must stay finite and close. */
static int is_matrix(const infer_tensor *t) { return t->n_dims == 2 && !strstr(t->name, "norm"); }

static void write_variant(const infer_gguf *g, infer_type to, const char *qpath, const char *dpath, infer__rng *rng) {
    infer_tensor *q = calloc((size_t)g->n_tensors, sizeof *q), *d = calloc((size_t)g->n_tensors, sizeof *d);
    void **own = calloc((size_t)g->n_tensors * 2, sizeof(void *));
    infer_error err;
    const infer__type_traits *tt = infer__type(to);
    for (int64_t i = 0; i < g->n_tensors; i++) {
        const infer_tensor *t = &g->tensors[i];
        q[i] = d[i] = *t;
        if (!is_matrix(t) || t->type != INFER_TYPE_F32 || t->ne[0] % tt->blck) continue;
        const int64_t n = t->ne[0] * t->ne[1];
        const size_t qb = infer_type_row_size(to, t->ne[0]) * (size_t)t->ne[1];
        uint8_t *qd = malloc(qb);
        float *dd = malloc((size_t)n * 4);
        if (tt->quant) tt->quant((const float *)t->data, qd, n);
        else {
            for (size_t b = 0; b < qb; b++) qd[b] = (uint8_t)infer__rng_next(rng);
            /* the block's f16 scale: first in every grid type except iq1_m, which spreads it
             * over the top nibbles of its four trailing u16 scale words */
            const infer_half h = infer__fp32_to_fp16(0.0005f);
            for (size_t b = 0; b < qb; b += (size_t)tt->bytes) {
                if (to != INFER_TYPE_IQ1_M) { memcpy(qd + b, &h, 2); continue; }
                uint16_t sc[4];
                memcpy(sc, qd + b + tt->bytes - 8, 8);
                for (int k = 0; k < 4; k++) sc[k] = (uint16_t)((sc[k] & 0x0fff) | (((h >> (4 * k)) & 0xf) << 12));
                memcpy(qd + b + tt->bytes - 8, sc, 8);
            }
        }
        tt->dequant(qd, dd, n);
        q[i].type = to; q[i].data = qd; q[i].nbytes = qb;
        d[i].data = dd;
        own[2 * i] = qd; own[2 * i + 1] = dd;
    }
    CHECK(infer_gguf_write(qpath, g->kv, g->n_kv, q, g->n_tensors, 32, &err) == INFER_OK);
    CHECK(infer_gguf_write(dpath, g->kv, g->n_kv, d, g->n_tensors, 32, &err) == INFER_OK);
    for (int64_t i = 0; i < 2 * g->n_tensors; i++) free(own[i]);
    free(own); free(q); free(d);
}

static void test_forward_every_weight_type(void) {
    size_t n;
    uint8_t *f = slurp(SHARED "/golden/llama/model-F32.gguf", &n);
    if (!f) SKIP("../shared/golden/llama not found");
    infer_gguf g;
    infer_error err;
    CHECK(infer_gguf_parse(&g, f, n, &err) == INFER_OK);
    const char *types[] = { "q4_1", "q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs", "tq1_0", "tq2_0",
                            "mxfp4", "nvfp4", "q1_0", "q2_0", "bf16", "f16", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m" };
    int32_t ids[20];
    for (int i = 0; i < 20; i++) ids[i] = (i * 53 + 7) % 320;
    infer__rng rng;
    infer__rng_seed(&rng, 3);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        infer_type t = (infer_type)infer_type_from_name(types[i]);
        write_variant(&g, t, tmp_path("infer_test_q.gguf"), tmp_path("infer_test_d.gguf"), &rng);
        const run_opts exact = { .precise = 1, .n_ctx = 64 }, fast = { .n_ctx = 64 };
        float *a = file_logits(tmp_path("infer_test_q.gguf"), ids, 20, exact, NULL), *b = file_logits(tmp_path("infer_test_d.gguf"), ids, 20, exact, NULL);
        float *c = file_logits(tmp_path("infer_test_q.gguf"), ids, 20, fast, NULL);
        CHECK_MSG(a && b && c, "%s: a model failed to run", types[i]);
        if (a && b && c) {
            double mx = 0, fast = 0, mag = 0;
            for (int k = 0; k < 20 * 320; k++) {
                mx = fmax(mx, fabs(a[k] - b[k]));
                fast += fabs(c[k] - b[k]);
                mag += fabs(b[k]);
                if (!isfinite(c[k])) fast = INFINITY;
            }
            CHECK_MSG(mx <= 1e-3, "%s: precise logits differ from the dequantized model by %g", types[i], mx);
            CHECK_MSG(fast <= 0.05 * mag + 1e-3, "%s: fast path mean diff %g vs mean |logit| %g", types[i], fast / 6400, mag / 6400);
        }
        free(a); free(b); free(c);
    }
    remove(tmp_path("infer_test_q.gguf"));
    remove(tmp_path("infer_test_d.gguf"));
    infer_gguf_free(&g);
    free(f);
}

/* a plain forward in double precision, for a few tokens from position 0:
 * Straight from the equations (see >>forward), reading the tensors through their own
 * dequantizers and applying `.scale` tensors explicitly, so it checks the sub-norms, the
 * activation, the scales and the I2_S flavour independently of the engine's code paths. */
typedef struct { const infer_gguf *g; const infer_config *c; } bn_ref;

static float *bn_get(const bn_ref *r, const char *fmt, int l, float *scale) {
    char name[96];
    snprintf(name, sizeof name, fmt, l);
    const infer_tensor *t = infer_gguf_tensor(r->g, name);
    if (!t) return NULL;
    if (scale) {
        char sn[96];
        snprintf(sn, sizeof sn, "%.*s.scale", (int)(strlen(name) - strlen(".weight")), name);
        const infer_tensor *st = infer_gguf_tensor(r->g, sn);
        *scale = st ? *(const float *)st->data : 1.0f;
    }
    return bn_tensor_f32(t);
}

static void bn_rms(double *y, const double *x, const float *w, int n, double eps) {
    if (!w) { if (y != x) memcpy(y, x, sizeof(double) * n); return; }   /* no such norm in this family */
    double ss = 0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    const double s = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) y[i] = x[i] * s * w[i];
}
static void bn_mv(double *y, const float *W, const double *x, int out, int in, double scale) {
    for (int o = 0; o < out; o++) {
        double s = 0;
        for (int i = 0; i < in; i++) s += (double)W[(size_t)o * in + i] * x[i];
        y[o] = s * scale;
    }
}

static double *bn_reference(const infer_gguf *g, const infer_config *c, const int32_t *ids, int T, int act) {
    bn_ref r = { g, c };
    const int E = c->n_embd, H = c->n_head, HK = c->n_head_kv, hd = c->head_dim, F = c->n_ff, V = c->n_vocab;
    const double eps = c->rms_eps;
    float *emb = bn_get(&r, "token_embd.weight", 0, NULL);
    double *x = calloc((size_t)T * E, sizeof(double)), *h = calloc(F > E ? F : E, sizeof(double));
    double *q = calloc((size_t)T * H * hd, sizeof(double)), *k = calloc((size_t)T * HK * hd, sizeof(double)), *v = calloc((size_t)T * HK * hd, sizeof(double));
    double *att = calloc((size_t)H * hd, sizeof(double)), *o = calloc(E, sizeof(double)), *ga = calloc(F, sizeof(double)), *up = calloc(F, sizeof(double));
    for (int t = 0; t < T; t++) for (int i = 0; i < E; i++) x[(size_t)t * E + i] = emb[(size_t)ids[t] * E + i];
    for (int l = 0; l < c->n_layer; l++) {
        float sq, sk, sv, so, sg, su, sd;
        float *an = bn_get(&r, "blk.%d.attn_norm.weight", l, NULL), *asn = bn_get(&r, "blk.%d.attn_sub_norm.weight", l, NULL);
        float *fn = bn_get(&r, "blk.%d.ffn_norm.weight", l, NULL), *fsn = bn_get(&r, "blk.%d.ffn_sub_norm.weight", l, NULL);
        float *wq = bn_get(&r, "blk.%d.attn_q.weight", l, &sq), *wk = bn_get(&r, "blk.%d.attn_k.weight", l, &sk);
        float *wv = bn_get(&r, "blk.%d.attn_v.weight", l, &sv), *wo = bn_get(&r, "blk.%d.attn_output.weight", l, &so);
        float *wg = bn_get(&r, "blk.%d.ffn_gate.weight", l, &sg), *wu = bn_get(&r, "blk.%d.ffn_up.weight", l, &su);
        float *wd = bn_get(&r, "blk.%d.ffn_down.weight", l, &sd);
        float *bq = bn_get(&r, "blk.%d.attn_q.bias", l, NULL), *bk = bn_get(&r, "blk.%d.attn_k.bias", l, NULL);
        float *bv = bn_get(&r, "blk.%d.attn_v.bias", l, NULL);      /* qwen2's biases, when present */
        for (int t = 0; t < T; t++) {                      /* q, k, v with NeoX rope at position t */
            bn_rms(h, x + (size_t)t * E, an, E, eps);
            bn_mv(q + (size_t)t * H * hd, wq, h, H * hd, E, sq);
            bn_mv(k + (size_t)t * HK * hd, wk, h, HK * hd, E, sk);
            bn_mv(v + (size_t)t * HK * hd, wv, h, HK * hd, E, sv);
            for (int i = 0; bq && i < H * hd; i++) q[(size_t)t * H * hd + i] += bq[i];
            for (int i = 0; bk && i < HK * hd; i++) k[(size_t)t * HK * hd + i] += bk[i];
            for (int i = 0; bv && i < HK * hd; i++) v[(size_t)t * HK * hd + i] += bv[i];
            for (int hh = 0; hh < H + HK; hh++) {
                double *z = hh < H ? q + ((size_t)t * H + hh) * hd : k + ((size_t)t * HK + hh - H) * hd;
                for (int i = 0; i < c->n_rot / 2; i++) {
                    const double th = t * pow(c->rope_base, -2.0 * i / c->n_rot), a = z[i], b = z[i + c->n_rot / 2];
                    z[i] = a * cos(th) - b * sin(th);
                    z[i + c->n_rot / 2] = a * sin(th) + b * cos(th);
                }
            }
        }
        for (int t = 0; t < T; t++) {
            for (int hh = 0; hh < H; hh++) {                 /* causal softmax attention, GQA */
                const int kh = hh / (H / HK);
                double w[64], mx = -1e300, sum = 0;
                for (int p = 0; p <= t; p++) {
                    double d = 0;
                    for (int i = 0; i < hd; i++) d += q[((size_t)t * H + hh) * hd + i] * k[((size_t)p * HK + kh) * hd + i];
                    w[p] = d / sqrt((double)hd);
                    if (w[p] > mx) mx = w[p];
                }
                for (int p = 0; p <= t; p++) { w[p] = exp(w[p] - mx); sum += w[p]; }
                for (int i = 0; i < hd; i++) {
                    double s = 0;
                    for (int p = 0; p <= t; p++) s += w[p] / sum * v[((size_t)p * HK + kh) * hd + i];
                    att[(size_t)hh * hd + i] = s;
                }
            }
            bn_rms(att, att, asn, H * hd, eps);             /* sub-norm before Wo */
            bn_mv(o, wo, att, E, H * hd, so);
            double *xt = x + (size_t)t * E;
            for (int i = 0; i < E; i++) xt[i] += o[i];
            bn_rms(h, xt, fn, E, eps);
            bn_mv(ga, wg, h, F, E, sg);
            bn_mv(up, wu, h, F, E, su);
            for (int i = 0; i < F; i++) {
                const double z = ga[i], a = act == 1 ? (z > 0 ? z * z : 0) : z / (1 + exp(-z));
                ga[i] = a * up[i];
            }
            bn_rms(ga, ga, fsn, F, eps);                     /* sub-norm before W_down */
            bn_mv(o, wd, ga, E, F, sd);
            for (int i = 0; i < E; i++) xt[i] += o[i];
        }
        free(an); free(asn); free(fn); free(fsn); free(wq); free(wk); free(wv); free(wo); free(wg); free(wu); free(wd);
        free(bq); free(bk); free(bv);
    }
    float *on = bn_get(&r, "output_norm.weight", 0, NULL), *out_w = bn_get(&r, "output.weight", 0, NULL);
    if (out_w && !strcmp(c->arch, "bitnet")) { free(out_w); out_w = NULL; }   /* bitnet: logits from token_embd */
    double *logits = calloc((size_t)T * V, sizeof(double));
    for (int t = 0; t < T; t++) {
        bn_rms(h, x + (size_t)t * E, on, E, eps);
        for (int tok = 0; tok < V; tok++) {
            double s = 0;
            for (int i = 0; i < E; i++) s += (double)(out_w ? out_w : emb)[(size_t)tok * E + i] * h[i];
            logits[(size_t)t * V + tok] = s;
        }
    }
    free(on); free(emb); free(out_w); free(x); free(h); free(q); free(k); free(v); free(att); free(o); free(ga); free(up);
    return logits;
}

/* max |engine - reference| over the T rows of ids, exact maths or the fast path; -1 when the
 * engine does not run */
static double engine_vs_reference(infer_model *m, const int32_t *ids, int T, const double *ref, run_opts o) {
    float *out = eval_logits(m, ids, T, T, o);
    double mx = out ? 0 : -1;
    for (size_t i = 0; out && i < (size_t)T * infer_model_config(m)->n_vocab; i++) mx = fmax(mx, fabs(out[i] - ref[i]));
    free(out);
    return mx;
}

/* engine (precise) vs the reference forward on a model file; returns max |diff| */
static double bn_vs_reference(const char *path, int want_act, const char *label) {
    size_t n;
    uint8_t *p = slurp(path, &n);
    infer_model *m;
    infer_error err;
    if (!p || infer_model_load_memory(&m, p, n, NULL, &err) != INFER_OK) { printf("    %s: %s\n", label, p ? err.msg : "unreadable"); free(p); return -1; }
    const infer_config *c = infer_model_config(m);
    CHECK_MSG(c->ffn_act == want_act, "%s: activation %d, expected %d", label, c->ffn_act, want_act);
    const int32_t ids[5] = { 17, 254, 3, 99, 310 };
    const int T = 5;
    infer_gguf g;
    CHECK(infer_gguf_parse(&g, p, n, &err) == INFER_OK);   /* unscaled tensors, as stored */
    double *ref = bn_reference(&g, c, ids, T, want_act);
    const double mx = engine_vs_reference(m, ids, T, ref, (run_opts){ .precise = 1, .n_ctx = 64 });
    printf("    %-44s engine vs double-precision forward: max |diff| %.3g\n", label, mx);
    free(ref);
    infer_gguf_free(&g);
    infer_model_free(m);
    free(p);
    return mx;
}

/* qwen2 (q/k/v biases, NeoX rope, untied output) and qwen2moe have no golden logits: a
 * random qwen2 model written here runs against the double-precision forward above, which
 * adds the biases after the projections; with the biases zeroed, the logits must move (so
 * the biases are really applied). */
static void q2_put(infer_tensor *t, int *n, const char *name, int64_t ne0, int64_t ne1, float sigma, infer__rng *r) {
    infer_tensor *x = &t[(*n)++];
    memset(x, 0, sizeof *x);
    x->name = strdup(name);
    x->type = INFER_TYPE_F32;
    x->n_dims = ne1 > 1 ? 2 : 1;
    x->ne[0] = ne0; x->ne[1] = ne1; x->ne[2] = x->ne[3] = 1;
    x->nbytes = (size_t)(ne0 * ne1) * 4;
    float *d = malloc(x->nbytes);
    for (int64_t i = 0; i < ne0 * ne1; i++) d[i] = sigma == 0 ? 1.0f + 0.1f * (float)(infer__rng_uniform(r) - 0.5) : sigma * (float)(infer__rng_uniform(r) * 2 - 1);
    x->data = d;
    x->scale = 1.0f;
}
static int q2_write(const char *path, int zero_bias) {
    enum { E = 64, L = 2, H = 4, HK = 2, HD = 16, F = 96, V = 300 };
    infer__rng r;
    infer__rng_seed(&r, 31);
    infer_tensor t[64];
    int n = 0;
    char name[64];
    q2_put(t, &n, "token_embd.weight", E, V, 1.0f, &r);
    q2_put(t, &n, "output_norm.weight", E, 1, 0, &r);
    q2_put(t, &n, "output.weight", E, V, 0.3f, &r);
    for (int l = 0; l < L; l++) {
#define Q2(suffix, ne0, ne1, sigma) (snprintf(name, sizeof name, "blk.%d." suffix, l), q2_put(t, &n, name, ne0, ne1, sigma, &r))
        Q2("attn_norm.weight", E, 1, 0);
        Q2("attn_q.weight", E, H * HD, 0.2f); Q2("attn_q.bias", H * HD, 1, zero_bias ? 0.0f : 0.5f);
        Q2("attn_k.weight", E, HK * HD, 0.2f); Q2("attn_k.bias", HK * HD, 1, zero_bias ? 0.0f : 0.5f);
        Q2("attn_v.weight", E, HK * HD, 0.2f); Q2("attn_v.bias", HK * HD, 1, zero_bias ? 0.0f : 0.5f);
        Q2("attn_output.weight", H * HD, E, 0.2f);
        Q2("ffn_norm.weight", E, 1, 0);
        Q2("ffn_gate.weight", E, F, 0.2f); Q2("ffn_up.weight", E, F, 0.2f); Q2("ffn_down.weight", F, E, 0.2f);
#undef Q2
    }
    for (int i = 0; zero_bias && i < n; i++)                  /* sigma 0 gave norms near 1: biases exactly 0 */
        if (strstr(t[i].name, ".bias")) memset((void *)t[i].data, 0, t[i].nbytes);
    infer_gguf_kv kv[16];
    int nkv = 0;
    kv[nkv++] = infer_gguf_kv_str("general.architecture", "qwen2");
    kv[nkv++] = infer_gguf_kv_u32("qwen2.context_length", 4096);
    kv[nkv++] = infer_gguf_kv_u32("qwen2.embedding_length", E);
    kv[nkv++] = infer_gguf_kv_u32("qwen2.block_count", L);
    kv[nkv++] = infer_gguf_kv_u32("qwen2.feed_forward_length", F);
    kv[nkv++] = infer_gguf_kv_u32("qwen2.attention.head_count", H);
    kv[nkv++] = infer_gguf_kv_u32("qwen2.attention.head_count_kv", HK);
    kv[nkv++] = infer_gguf_kv_f32("qwen2.rope.freq_base", 1000000.0f);
    kv[nkv++] = infer_gguf_kv_f32("qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
    infer_error err;
    const int ok = infer_gguf_write(path, kv, nkv, t, n, 32, &err) == INFER_OK;
    for (int i = 0; i < n; i++) { free((void *)t[i].name); free((void *)t[i].data); }
    return ok;
}
static void test_forward_qwen2_vs_reference(void) {
    const char *path = tmp_path("infer_qwen2.gguf");
    double *logits[2] = { NULL, NULL };
    for (int zb = 0; zb < 2; zb++) {
        CHECK(q2_write(path, zb));
        size_t n;
        uint8_t *p = slurp(path, &n);
        infer_model *m;
        infer_error err;
        CHECK_MSG(p && infer_model_load_memory(&m, p, n, NULL, &err) == INFER_OK, "%s", p ? err.msg : "unreadable");
        if (!p) return;
        const infer_config *c = infer_model_config(m);
        CHECK(!strcmp(c->arch, "qwen2") && c->head_dim == 16 && c->n_rot == 16);
        const int32_t ids[6] = { 17, 254, 3, 99, 210, 7 };
        const int T = 6;
        infer_gguf g;
        CHECK(infer_gguf_parse(&g, p, n, &err) == INFER_OK);
        logits[zb] = bn_reference(&g, c, ids, T, 0);
        for (int precise = 1; precise >= 0; precise--) {
            const double mx = engine_vs_reference(m, ids, T, logits[zb], (run_opts){ .precise = precise, .n_ctx = 32 });
            printf("    qwen2 %s, %s: engine vs double-precision forward: max |diff| %.3g\n", zb ? "zero biases" : "biases", precise ? "precise" : "fast", mx);
            CHECK_MSG(mx >= 0 && mx <= (precise ? 2e-4 : 0.05), "qwen2 %s: max diff %.3g", precise ? "precise" : "fast", mx);
        }
        infer_gguf_free(&g);
        infer_model_free(m);
        free(p);
    }
    double moved = 0;
    for (int i = 0; logits[0] && logits[1] && i < 6 * 300; i++) moved = fmax(moved, fabs(logits[0][i] - logits[1][i]));
    CHECK_MSG(moved > 0.1, "the biases change the logits by only %.3g", moved);
    free(logits[0]); free(logits[1]);
    remove(path);
}

static void test_forward_bitnet_vs_reference(void) {
    const char *f32 = SHARED "/golden/bitnet/model-F32.gguf";
    if (!file_exists(f32)) SKIP("%s not found", f32);
    const double tol = 2e-4;
    /* the golden itself: upstream bitnet, SiLU */
    double d = bn_vs_reference(f32, 0, "bitnet F32 (SiLU)");
    CHECK_MSG(d >= 0 && d <= tol, "golden bitnet F32 vs reference: %.3g", d);
    /* ReLU^2 from the metadata key, and `.scale` tensors on every projection */
    const char *tmp = tmp_path("infer_bitnet_variant.gguf");
    bn_variant v1 = { NULL, "relu2", 0, 1 };
    CHECK(bn_write(f32, tmp, &v1));
    d = bn_vs_reference(tmp, 1, "bitnet F32 + relu2 key + .scale tensors");
    CHECK_MSG(d >= 0 && d <= tol, "relu2 + scales vs reference: %.3g", d);
    /* BitNet's own flavour: "bitnet-b1.58", I2_S projections, ReLU^2 by default */
    bn_variant v2 = { "bitnet-b1.58", NULL, 1, 0 };
    CHECK(bn_write(f32, tmp, &v2));
    d = bn_vs_reference(tmp, 1, "bitnet-b1.58, I2_S (ReLU^2 by default)");
    CHECK_MSG(d >= 0 && d <= tol, "bitnet-b1.58 I2_S vs reference: %.3g", d);
    /* ... and with an explicit "silu" key it runs SiLU; I2_S plus `.scale` tensors */
    bn_variant v3 = { "bitnet-b1.58", "silu", 1, 1 };
    CHECK(bn_write(f32, tmp, &v3));
    d = bn_vs_reference(tmp, 0, "bitnet-b1.58, I2_S, silu key, .scale tensors");
    CHECK_MSG(d >= 0 && d <= tol, "bitnet-b1.58 silu + scales vs reference: %.3g", d);
    remove(tmp);
}

/* ---- >>deepseek4 (DeepSeek-V4; its kernels in >>cpu, its loader in >>load) ----
 * The golden logits come from an independent float64 implementation (golden/deepseek4/README.md
 * states every convention); the exact-maths path must match them to 2e-3 on every row. */
#define DS4_DIR SHARED "/golden/deepseek4"

/* prompt ++ the reference's 16 greedy tokens, and its logits; returns the row count */
static int ds4_case(const char *which, int32_t *ids, float **ref, const char *suffix) {
    char path[256];
    const int np = read_prompt(DS4_DIR, which, ids, 200);
    snprintf(path, sizeof path, DS4_DIR "/logits/F32.%s.%s", which, suffix);
    size_t nref;
    *ref = read_floats(path, &nref);
    if (!np || !*ref) return 0;
    const int rows = (int)(nref / 320);
    for (int g = np; g < rows; g++) {                /* greedy token g-np = argmax of row g-1 */
        const float *r = *ref + (size_t)(g - 1) * 320;
        int best = 0;
        for (int v = 1; v < 320; v++) if (r[v] > r[best]) best = v;
        ids[g] = best;
    }
    return rows;
}

/* the golden DeepSeek-V4 model, loaded; NULL after a SKIP (no ../shared) or a failed check */
static infer_model *ds4_golden_model(void) {
    if (!file_exists(DS4_DIR "/model-F32.gguf")) SKIP_WITH(NULL, "../shared/golden/deepseek4 not found");
    return load_model(DS4_DIR "/model-F32.gguf", 0);
}

/* exact maths: every row within 2e-3, as one batch, one token at a time and in chunks of 7,
 * on 1 and 2 threads -- and all of these give the same bits */
static void test_golden_deepseek4(void) {
    infer_model *m = ds4_golden_model();
    if (!m) return;
    const char *prompts[2] = { "short", "long" };
    for (int p = 0; p < 2; p++) {
        int32_t ids[256];
        float *ref, *step;
        const int rows = ds4_case(prompts[p], ids, &ref, "ref.bin");
        int32_t ids2[256];
        const int rows2 = ds4_case(prompts[p], ids2, &step, "ref.step.bin");
        CHECK(rows > 16 && rows == rows2);
        const int modes[4][2] = { { 512, 2 }, { 1, 2 }, { 7, 2 }, { 512, 1 } };
        float *first = NULL;
        for (int i = 0; i < 4 && rows > 16; i++) {
            float *out = eval_logits(m, ids, rows, rows, (run_opts){ 1, modes[i][0], modes[i][1], 256, NULL });
            if (!out) { CHECK(0); continue; }
            const double d = max_abs_diff(out, ref, (size_t)rows * 320), ds = max_abs_diff(out, step, (size_t)rows * 320);
            CHECK_MSG(d <= 2e-3 && ds <= 2e-3, "%s ubatch %d threads %d: max abs diff %.3g (step file %.3g)", prompts[p], modes[i][0], modes[i][1], d, ds);
            if (!first) first = out;
            else {
                CHECK_MSG(!memcmp(out, first, sizeof(float) * (size_t)rows * 320), "%s ubatch %d threads %d: not the same bits as one batch", prompts[p], modes[i][0], modes[i][1]);
                free(out);
            }
        }
        free(first); free(ref); free(step);
    }
    infer_model_free(m);
}

/* The default fast path (int8 activations against the MXFP4 experts, F16 caches): the
 * argmax agrees with the reference on at least 90% of the 16 generated rows. */
static void test_golden_deepseek4_fast(void) {
    infer_model *m = ds4_golden_model();
    if (!m) return;
    const char *prompts[2] = { "short", "long" };
    for (int p = 0; p < 2; p++) {
        int32_t ids[256];
        float *ref;
        const int rows = ds4_case(prompts[p], ids, &ref, "ref.bin"), np = rows - 16;
        for (int ub = 512; ub >= 1 && rows > 16; ub = ub == 512 ? 1 : 0) {
            float *out = eval_logits(m, ids, rows, rows, (run_opts){ 0, ub, 2, 256, NULL });
            if (!out) { CHECK(0); continue; }
            int agree = 0;
            double mean = 0;
            for (int r = np; r < rows; r++) {
                int a = 0, b = 0;
                for (int v = 1; v < 320; v++) { if (out[r * 320 + v] > out[r * 320 + a]) a = v; if (ref[r * 320 + v] > ref[r * 320 + b]) b = v; }
                agree += a == b;
            }
            for (size_t i = 0; i < (size_t)rows * 320; i++) mean += fabs((double)out[i] - ref[i]);
            const double mx = max_abs_diff(out, ref, (size_t)rows * 320);
            printf("    fast path, %s, ubatch %d: argmax agrees on %d of 16 generated rows; max abs diff %.3g, mean %.3g\n", prompts[p], ub, agree, mx,
                   mean / ((double)rows * 320));
            CHECK_MSG(agree * 10 >= 16 * 9, "%s ubatch %d: argmax agrees on %d of 16 rows", prompts[p], ub, agree);
            free(out);
        }
        free(ref);
    }
    infer_model_free(m);
}

/* The cache a layer holds: a window-only layer keeps W tokens whatever the length; a CSA
 * layer grows by one entry (and one indexer key) per 4 tokens; the prompt's chunking does
 * not matter. */
static void test_deepseek4_cache_bytes(void) {
    infer_model *m = ds4_golden_model();
    if (!m) return;
    infer_error err;
    const infer_config *c = infer_model_config(m);
    int32_t *ids = malloc(2000 * sizeof(int32_t));
    for (int i = 0; i < 2000; i++) ids[i] = (i * 37 + 11) % 320;
    for (int ub = 512; ub >= 37; ub = ub == 512 ? 37 : 0) {
        infer_session_params sp = infer_session_default_params();
        sp.n_ctx = 2048;
        sp.n_ubatch = ub;
        infer_session *s;
        if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); break; }
        size_t at[2][4];
        for (int half = 0; half < 2; half++) {
            CHECK_MSG(infer_eval(s, ids + half * 1000, 1000, NULL, 0, &err) == INFER_OK, "%s", err.msg);
            for (int l = 0; l < 4; l++) at[half][l] = infer_session_cache_bytes(s, l);
        }
        /* the W = 16 positions a next query reads lie in one or two blocks of 16 F16 rows; a
         * cache of every token would hold 63 blocks at 1000 tokens and 125 at 2000 */
        const size_t block = 16 * (size_t)c->head_dim * 2;
        CHECK_MSG(at[0][0] >= block && at[0][0] <= 2 * block && at[1][0] >= block && at[1][0] <= 2 * block,
                  "window-only layer: %zu bytes at 1000 tokens, %zu at 2000 (a block is %zu)", at[0][0], at[1][0], block);
        /* CSA: entries (head_dim) + indexer keys (64) per 4 tokens, whole blocks of 16 */
        const size_t csa_row = (size_t)(c->head_dim + c->idx_head_dim) * 2;
        CHECK_MSG(at[0][1] == at[0][0] + (size_t)(250 + 15) / 16 * 16 * csa_row + 6 * (size_t)(c->head_dim + c->idx_head_dim) * 4 &&
                  at[1][1] == at[1][0] + (size_t)(500 + 15) / 16 * 16 * csa_row + 6 * (size_t)(c->head_dim + c->idx_head_dim) * 4,
                  "CSA layer: %zu bytes at 1000 tokens, %zu at 2000 (window %zu)", at[0][1], at[1][1], at[0][0]);
        CHECK_MSG(at[1][2] > at[1][0] && at[1][2] < at[1][1], "HCA layer: %zu bytes", at[1][2]);
        CHECK(infer_session_cache_bytes(s, -1) == at[1][0] + at[1][1] + at[1][2] + at[1][3]);
        infer_session_free(s);
    }
    free(ids);
    infer_model_free(m);
}

/* gguf bytes with tensor `name`'s i32 entry `i` set to v */
static void ds4_set_i32(uint8_t *f, size_t n, const char *name, int64_t i, int32_t v) {
    infer_gguf g;
    infer_error err;
    if (infer_gguf_parse(&g, f, n, &err) != INFER_OK) return;
    const infer_tensor *t = infer_gguf_tensor(&g, name);
    if (t) memcpy((uint8_t *)t->data + 4 * i, &v, 4);
    infer_gguf_free(&g);
}

static void test_deepseek4_load_errors(void) {
    size_t n;
    uint8_t *f = slurp(DS4_DIR "/model-F32.gguf", &n);
    if (!f) SKIP("../shared/golden/deepseek4 not found");
    const rename_case cases[] = {
        { "blk.3.indexer.proj.weight", "blk.3.indexer.proj.weighx", "missing tensor 'blk.3.indexer.proj.weight'" },
        { "blk.2.attn_compressor_ape.weight", "blk.2.attn_compressor_ape.weighx", "missing tensor 'blk.2.attn_compressor_ape.weight'" },
        { "output_hc_fn.weight", "output_hc_fn.weighx", "missing tensor 'output_hc_fn.weight'" },
        { "blk.0.ffn_gate_tid2eid.weight", "blk.0.ffn_gate_tid2eid.weighx", "missing tensor 'blk.0.ffn_gate_tid2eid.weight'" },
        { "deepseek4.hyper_connection.count", "deepseek4.hyper_connection.counx", "missing metadata key 'deepseek4.hyper_connection.count'" },
        { "deepseek4.attention.compress_ratios", "deepseek4.attention.compress_ratiox", "missing metadata key 'deepseek4.attention.compress_ratios'" },
    };
    expect_renames_fail(f, n, cases, sizeof cases / sizeof cases[0]);
    /* compress_ratios with 3 or 5 entries, and one of 3 (no such compression) */
    infer_gguf g;
    infer_model *m;
    infer_error err;
    int ok;
    if (infer_gguf_parse(&g, f, n, &err) == INFER_OK) {
        const uint32_t ratios[3][5] = { { 0, 4, 128 }, { 0, 4, 128, 4, 0 }, { 0, 4, 1, 4 } };
        const int lens[3] = { 3, 5, 4 };
        const char *want[3] = { "compress_ratios has 3 entries, expected 4", "compress_ratios has 5 entries, expected 4", "compress_ratios[2] = 1" };
        infer_gguf_kv *kv = malloc(sizeof(infer_gguf_kv) * (size_t)g.n_kv);
        for (int c = 0; c < 3; c++) {
            for (int64_t i = 0; i < g.n_kv; i++)
                kv[i] = infer__str_eq(g.kv[i].key, "deepseek4.attention.compress_ratios")
                            ? infer_gguf_kv_array("deepseek4.attention.compress_ratios", INFER_GGUF_U32, (uint64_t)lens[c], ratios[c]) : g.kv[i];
            CHECK(infer_gguf_write(tmp_path("infer_ds4_bad.gguf"), kv, g.n_kv, g.tensors, g.n_tensors, 32, &err) == INFER_OK);
            ok = infer_model_load(&m, tmp_path("infer_ds4_bad.gguf"), NULL, &err) == INFER_OK;
            if (ok) infer_model_free(m);
            CHECK_MSG(!ok && strstr(err.msg, want[c]), "%s", ok ? "loaded" : err.msg);
        }
        free(kv);
        infer_gguf_free(&g);
        remove(tmp_path("infer_ds4_bad.gguf"));
    }
    uint8_t *p;
    /* a hash table naming expert 8 of 8, and one naming -1 */
    const int32_t bad[2] = { 8, -1 };
    for (int b = 0; b < 2; b++) {
        p = malloc(n);
        memcpy(p, f, n);
        ds4_set_i32(p, n, "blk.0.ffn_gate_tid2eid.weight", 2 * 117 + 1, bad[b]);
        ok = infer_model_load_memory(&m, p, n, NULL, &err) == INFER_OK;
        if (ok) infer_model_free(m);
        char want[96];
        snprintf(want, sizeof want, "'blk.0.ffn_gate_tid2eid.weight': token 117, slot 1 names expert %d", bad[b]);
        CHECK_MSG(!ok && strstr(err.msg, want), "%s", ok ? "loaded" : err.msg);
        free(p);
    }
    free(f);
}

/* The ops against the formulas written out in double precision. */
static void test_deepseek4_ops(void) {
    infer__rng rng;
    infer__rng_seed(&rng, 77);
#define U(lo, hi) ((float)((lo) + ((hi) - (lo)) * infer__rng_uniform(&rng)))
    void *ctx;
    infer_error err;
    const infer_kernels *k = infer_cpu_kernels();
    if (k->ctx_create(&ctx, 2, 1, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    /* the compressor: entry w of channel c = softmax-weighted sum over its slots, tokens fed
     * in three chunks (the state carries the open windows) */
    for (int overlap = 0; overlap < 2; overlap++) {
        const int dim = 24, ratio = overlap ? 4 : 8, W = overlap ? 2 * dim : dim, rows = 29;
        float kv[29 * 48], g[29 * 48], ape[8 * 48], st[6 * 24] = { 0 }, ent[8 * 24];
        int32_t pos[29];
        for (int i = 0; i < rows * W; i++) { kv[i] = U(-2, 2); g[i] = U(-4, 4); }
        for (int i = 0; i < ratio * W; i++) ape[i] = U(-1, 1);
        for (int r = 0; r < rows; r++) pos[r] = r;
        int n = 0;
        const int cuts[4] = { 0, 3, 17, 29 };
        for (int c = 0; c < 3; c++) {
            k->compress(ctx, ent + n * dim, st, kv + cuts[c] * W, g + cuts[c] * W, ape, pos + cuts[c], cuts[c + 1] - cuts[c], dim, ratio, overlap);
            for (int r = cuts[c]; r < cuts[c + 1]; r++) n += r % ratio == ratio - 1;
        }
        CHECK(n == rows / ratio);
        double worst = 0;
        for (int w = 0; w < n; w++)
            for (int c = 0; c < dim; c++) {
                double sc[16], v[16], mx = -1e300, sum = 0, acc = 0;
                int ns = 0;
                for (int t = (w - overlap) * ratio; t < (w + 1) * ratio; t++) {
                    if (t < 0) continue;
                    const int own = t >= w * ratio, r = t % ratio, ch = overlap && own ? dim + c : c;
                    sc[ns] = (double)g[t * W + ch] + ape[r * W + ch];
                    v[ns++] = kv[t * W + ch];
                }
                for (int i = 0; i < ns; i++) mx = fmax(mx, sc[i]);
                for (int i = 0; i < ns; i++) { sum += exp(sc[i] - mx); acc += exp(sc[i] - mx) * v[i]; }
                worst = fmax(worst, fabs(acc / sum - ent[w * dim + c]));
            }
        CHECK_MSG(worst < 1e-5, "compress (ratio %d): max error %g", ratio, worst);
    }
    /* the indexer: exact-zero ties at the cut go to the lower index; fewer visible than
     * top_k: all of them; the choice comes out in ascending order */
    {
        const int nI = 2, dI = 16, top_k = 3;
        float keys[12 * 16], q[2 * 2 * 16], w[2 * 2];
        int32_t table[1] = { 0 }, pos[2] = { 47, 9 }, sel[2 * 3], nsel[2];
        for (int s = 0; s < 12; s++)                    /* key s: +e_s (s even, s < 8) or -e_(s mod 16) */
            for (int i = 0; i < dI; i++) keys[s * dI + i] = i == s ? (s % 2 == 0 && s < 8 ? 1.0f : -1.0f) : 0.0f;
        memset(q, 0, sizeof q);
        for (int i = 0; i < dI; i++) q[i] = i == 6 ? 2.0f : i == 2 ? 1.0f : 0.5f;   /* head 0 of row 0 */
        for (int i = 0; i < dI; i++) q[dI + i] = 1.0f;                             /* head 1: a constant */
        w[0] = 1.0f; w[1] = -0.25f; w[2] = w[3] = 1.0f;
        /* row 0 sees 12 entries: scores 0.5-0.25 (s=0,4), 1-0.25 (s=2), 2-0.25 (s=6), and
         * relu(-x) = 0 with 0 * ... = 0 for the rest: the top 3 are 6, 2, then 0 and 4 tie
         * at 0.25 -> 0; row 1 (position 9) sees 2 entries, fewer than top_k */
        infer_kv_view kv = { keys, keys, INFER_TYPE_F32, 16, table, dI, NULL };
        k->indexer_topk(ctx, sel, nsel, q, w, &kv, pos, 2, nI, dI, 4, top_k, 1.0f);
        CHECK_MSG(nsel[0] == 3 && sel[0] == 0 && sel[1] == 2 && sel[2] == 6, "row 0: %d entries: %d %d %d", nsel[0], sel[0], sel[1], sel[2]);
        CHECK_MSG(nsel[1] == 2 && sel[3] == 0 && sel[4] == 1, "row 1: %d entries: %d %d", nsel[1], sel[3], sel[4]);
        /* all scores tied (w = 0): the first top_k indices */
        w[0] = w[1] = 0.0f;
        k->indexer_topk(ctx, sel, nsel, q, w, &kv, pos, 1, nI, dI, 4, top_k, 1.0f);
        CHECK(nsel[0] == 3 && sel[0] == 0 && sel[1] == 1 && sel[2] == 2);
    }
    /* sparse attention against its formula, F32 and F16 caches */
    for (int f16 = 0; f16 < 2; f16++) {
        const int H = 3, hd = 32, n_tok = 40, n_ent = 10, window = 6, top_k = 4, rows = 3;
        const int32_t pos[3] = { 3, 22, 39 }, sel[3 * 4] = { 0, 0, 0, 0, 1, 3, 4, 0, 0, 2, 5, 8 }, nsel[3] = { 0, 3, 4 };
        int32_t table[4] = { 2, 0, 3, 1 }, all[40];
        float raw[40 * 32], ent[10 * 32], q[3 * 3 * 32], sinks[3] = { 0.5f, -1.0f, 2.0f }, out[3 * 3 * 32];
        for (int i = 0; i < 40 * 32; i++) raw[i] = U(-1, 1);
        for (int i = 0; i < 10 * 32; i++) ent[i] = U(-1, 1);
        for (int i = 0; i < 3 * 3 * 32; i++) q[i] = U(-1, 1);
        for (int p = 0; p < 40; p++) all[p] = p;
        const infer_type t = f16 ? INFER_TYPE_F16 : INFER_TYPE_F32;
        const size_t es = f16 ? 2 : 4;
        void *rp = calloc(64, 32 * es), *ep = calloc(64, 32 * es);
        infer_kv_view rv = { rp, rp, t, 16, table, hd, NULL }, ev = { ep, ep, t, 16, table, hd, NULL };
        k->kv_store(ctx, &rv, raw, NULL, all, n_tok);
        k->kv_store(ctx, &ev, ent, NULL, all, n_ent);
        for (int mode = 0; mode < 2; mode++) {         /* the chosen entries, then every visible one (ratio 4) */
            k->attention_sparse(ctx, out, q, &rv, pos, rows, H, hd, 0.2f, window, sinks, &ev, 4, mode ? NULL : sel, nsel, top_k);
            double worst = 0;
            for (int r = 0; r < rows; r++)
                for (int h = 0; h < H; h++) {
                    double s[64], acc[32] = { 0 }, mx = sinks[h], sum = 0;
                    const float *keys[64];
                    int n = 0;
                    for (int j = pos[r] - window + 1; j <= pos[r]; j++) if (j >= 0) keys[n++] = raw + j * hd;
                    const int nc = mode ? (pos[r] + 1) / 4 : nsel[r];
                    for (int i = 0; i < nc; i++) keys[n++] = ent + (mode ? i : sel[r * top_k + i]) * hd;
                    for (int i = 0; i < n; i++) {
                        double d = 0;
                        for (int c = 0; c < hd; c++) {
                            const double kc = f16 ? infer__fp16_to_fp32(infer__fp32_to_fp16(keys[i][c])) : keys[i][c];
                            d += (double)q[(r * H + h) * hd + c] * kc;
                        }
                        s[i] = 0.2 * d;
                        mx = fmax(mx, s[i]);
                    }
                    for (int i = 0; i < n; i++) sum += exp(s[i] - mx);
                    sum += exp(sinks[h] - mx);
                    for (int i = 0; i < n; i++)
                        for (int c = 0; c < hd; c++)
                            acc[c] += exp(s[i] - mx) / sum * (f16 ? infer__fp16_to_fp32(infer__fp32_to_fp16(keys[i][c])) : keys[i][c]);
                    for (int c = 0; c < hd; c++) worst = fmax(worst, fabs(acc[c] - out[(r * H + h) * hd + c]));
                }
            CHECK_MSG(worst < 2e-6, "attention_sparse (%s cache, %s): max error %g", f16 ? "f16" : "f32", mode ? "all entries" : "chosen entries", worst);
        }
        free(rp); free(ep);
    }
    /* hyper-connections: pre/post/C against the formulas, C doubly stochastic after Sinkhorn,
     * and the update x_d = post_d h + sum_s C[s, d] x_s */
    {
        const int rows = 2, dim = 8, hc = 4, n_mix = 24;
        float x[2 * 4 * 8], x0[2 * 4 * 8], mix[2 * 24], base[24], scale[3] = { 0.7f, 1.3f, 0.9f }, u[2 * 8], pc[2 * 20], h[2 * 8];
        for (int i = 0; i < rows * hc * dim; i++) x0[i] = x[i] = U(-2, 2);
        for (int i = 0; i < rows * n_mix; i++) mix[i] = U(-2, 2);
        for (int i = 0; i < n_mix; i++) base[i] = U(-1, 1);
        for (int i = 0; i < rows * dim; i++) h[i] = U(-1, 1);
        k->hc_pre(ctx, u, pc, mix, x, base, scale, rows, dim, hc, 20, 1e-6f);
        double worst = 0, stoch = 0;
        for (int r = 0; r < rows; r++) {
            const float *m = mix + r * n_mix;
            double pre[4], C[4][4];
            for (int i = 0; i < hc; i++) {
                pre[i] = 1 / (1 + exp(-(m[i] * (double)scale[0] + base[i]))) + 1e-6;
                worst = fmax(worst, fabs(2 / (1 + exp(-(m[4 + i] * (double)scale[1] + base[4 + i]))) - pc[r * 20 + i]));
            }
            for (int s = 0; s < hc; s++) {
                double mx = -1e300, sum = 0;
                for (int d = 0; d < hc; d++) mx = fmax(mx, C[s][d] = m[8 + s * 4 + d] * (double)scale[2] + base[8 + s * 4 + d]);
                for (int d = 0; d < hc; d++) sum += (C[s][d] = exp(C[s][d] - mx));
                for (int d = 0; d < hc; d++) C[s][d] = C[s][d] / sum + 1e-6;
            }
            for (int it = 0; it < 20; it++) {
                for (int pass = it ? 0 : 1; pass < 2; pass++)
                    for (int a = 0; a < hc; a++) {
                        double sum = 0;
                        for (int b = 0; b < hc; b++) sum += pass ? C[b][a] : C[a][b];
                        for (int b = 0; b < hc; b++) { if (pass) C[b][a] /= sum + 1e-6; else C[a][b] /= sum + 1e-6; }
                    }
            }
            for (int s = 0; s < hc; s++) {
                double rs = 0, cs = 0;
                for (int d = 0; d < hc; d++) {
                    worst = fmax(worst, fabs(C[s][d] - pc[r * 20 + 4 + s * 4 + d]));
                    rs += pc[r * 20 + 4 + s * 4 + d];
                    cs += pc[r * 20 + 4 + d * 4 + s];
                }
                stoch = fmax(stoch, fmax(fabs(rs - 1), fabs(cs - 1)));
            }
            for (int e = 0; e < dim; e++) {
                double ue = 0;
                for (int i = 0; i < hc; i++) ue += pre[i] * x0[(r * hc + i) * dim + e];
                worst = fmax(worst, fabs(ue - u[r * dim + e]));
            }
        }
        CHECK_MSG(worst < 1e-5 && stoch < 1e-3, "hc_pre: max error %g, row/column sums off by %g", worst, stoch);
        k->hc_post(ctx, x, h, pc, rows, dim, hc);
        worst = 0;
        for (int r = 0; r < rows; r++)
            for (int d = 0; d < hc; d++)
                for (int e = 0; e < dim; e++) {
                    double v = (double)pc[r * 20 + d] * h[r * dim + e];
                    for (int s = 0; s < hc; s++) v += (double)pc[r * 20 + 4 + s * 4 + d] * x0[(r * hc + s) * dim + e];
                    worst = fmax(worst, fabs(v - x[(r * hc + d) * dim + e]));
                }
        CHECK_MSG(worst < 1e-5, "hc_post: max error %g", worst);
    }
    /* the routing of sqrt-softplus scores: bias only steers the choice; given ids keep */
    {
        const float lg[5] = { 1.0f, -2.0f, 0.5f, 3.0f, 0.0f }, bias[5] = { 0, 5, 0, -4, 0 };
        int32_t ids[2];
        float wt[2];
        k->moe_route(ctx, ids, wt, lg, 1, 5, 2, 4, 1, 1.5f, bias, 0);
        const double p1 = sqrt(log1p(exp(-2.0))), p0 = sqrt(log1p(exp(1.0)));   /* 1 by its bias, then 0 */
        CHECK_MSG(ids[0] == 1 && ids[1] == 0, "ids %d %d", ids[0], ids[1]);
        CHECK_NEAR(wt[0], 1.5 * p1 / (p1 + p0), 1e-6);
        ids[0] = 3; ids[1] = 4;
        k->moe_route(ctx, ids, wt, lg, 1, 5, 2, 4, 1, 1.5f, NULL, 1);
        const double p3 = sqrt(log1p(exp(3.0))), p4 = sqrt(log1p(1.0));
        CHECK(ids[0] == 3 && ids[1] == 4);
        CHECK_NEAR(wt[1], 1.5 * p4 / (p3 + p4), 1e-6);
    }
    k->ctx_free(ctx);
#undef U
}

/* deepseek4's ropes: window-only layers turn with rope.freq_base, unscaled; compressed
 * layers with compress_rope_freq_base and the file's YaRN, its magnitude factor cancelled
 * (a rotation keeps every pair's length); always the last n_rot dims of a head */
static void test_deepseek4_rope(void) {
    infer_model *m = ds4_golden_model();
    if (!m) return;
    infer_error err;
    infer_session *s;
    if (infer_session_create(&s, m, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); infer_model_free(m); return; }
    s->rope.freq_scale = 1.0f / 16;                  /* as a YaRN file (factor 16) sets it */
    s->rope.ext_factor = 1.0f;
    const infer_rope w = infer__dsv4_rope(s, 0, 64), c = infer__dsv4_rope(s, 1, 64), ci = infer__dsv4_rope(s, 1, 32);
    CHECK(w.freq_base == 10000.0f && w.freq_scale == 1.0f && w.ext_factor == 0.0f && w.rot_first == 48);
    CHECK(c.freq_base == 160000.0f && c.ext_factor == 1.0f && c.rot_first == 48 && ci.rot_first == 16);
    CHECK_NEAR(c.attn_factor * (1.0 + 0.1 * log(16.0)), 1.0, 1e-6);
    float x[2 * 64], y[2 * 64];
    const int32_t pos[2] = { 7, 3000 };
    for (int i = 0; i < 128; i++) x[i] = y[i] = sinf((float)i);
    infer_cpu_kernels()->rope(NULL, y, 2, 1, 64, pos, &c);
    double worst = 0;
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 64; i += 2) {
            const double a = hypot(x[r * 64 + i], x[r * 64 + i + 1]), b = hypot(y[r * 64 + i], y[r * 64 + i + 1]);
            worst = fmax(worst, fabs(a - b));
            if (i < 48) CHECK(x[r * 64 + i] == y[r * 64 + i]);    /* the first 48 dims pass through */
        }
    CHECK_MSG(worst < 1e-5, "YaRN rope changed a pair's length by %g", worst);
    infer_session_free(s);
    infer_model_free(m);
}

/* ---- >>eval: a session's sequences: a prefix kept, many at once, a prefix cache, rewinding ---- */
/* infer_eval_prefix keeps what the session holds and evaluates only the rest; the logits
 * are those of evaluating the whole sequence at once (exactly, in precise mode) */
static void prefix_case(const char *path, int recurrent) {
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, path, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", path, err.msg); return; }
    const int V = infer_model_config(m)->n_vocab;
    int32_t a[40], b[40];
    for (int i = 0; i < 40; i++) a[i] = b[i] = (i * 37 + 1) % V;
    for (int i = 25; i < 40; i++) b[i] = (i * 11 + 5) % V;        /* b = a's first 25, then another way */
    float *want = malloc(sizeof(float) * (size_t)V), *got = malloc(sizeof(float) * (size_t)V);
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1;
    sp.n_ctx = 64;
    infer_session *s, *ref;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK && infer_session_create(&ref, m, &sp, &err) == INFER_OK);
    int n_eval = -1;
    /* a fresh session: everything is new */
    CHECK(infer_eval_prefix(s, a, 30, got, &n_eval, &err) == INFER_OK && n_eval == 30);
    CHECK(infer_session_n_past(s) == 30 && !memcmp(infer_session_tokens(s), a, 30 * sizeof(int32_t)));
    /* the next turn: only the 10 new tokens */
    CHECK(infer_eval_prefix(s, a, 40, got, &n_eval, &err) == INFER_OK);
    CHECK_MSG(n_eval == 10, "extension evaluated %d tokens, not 10", n_eval);
    CHECK(infer_eval(ref, a, 40, want, 0, &err) == INFER_OK);
    /* a recurrent model's chunked prefill may round differently for another split */
    const double tol = recurrent ? 1e-4 : 0;
    CHECK_MSG(max_abs_diff(got, want, V) <= tol, "%s: extension: max diff %g", path, max_abs_diff(got, want, V));
    /* diverging after 25 tokens: cut back to them (a recurrent state starts over) */
    CHECK(infer_eval_prefix(s, b, 40, got, &n_eval, &err) == INFER_OK);
    CHECK_MSG(n_eval == (recurrent ? 40 : 15), "divergence evaluated %d tokens", n_eval);
    infer_session_reset(ref);
    CHECK(infer_eval(ref, b, 40, want, 0, &err) == INFER_OK);
    CHECK_MSG(max_abs_diff(got, want, V) <= tol, "%s: divergence: max diff %g", path, max_abs_diff(got, want, V));
    CHECK(!memcmp(infer_session_tokens(s), b, 40 * sizeof(int32_t)));
    /* the same tokens again: the last one is evaluated again for its logits */
    CHECK(infer_eval_prefix(s, b, 40, got, &n_eval, &err) == INFER_OK && n_eval == (recurrent ? 40 : 1));
    CHECK_MSG(max_abs_diff(got, want, V) <= tol, "%s: again: max diff %g", path, max_abs_diff(got, want, V));
    /* rewinding */
    CHECK(infer_session_rewind(s, 41, &err) == INFER_ERR_ARG);
    CHECK(infer_session_rewind(s, 20, &err) == (recurrent ? INFER_ERR_UNSUPPORTED : INFER_OK));
    CHECK(infer_session_n_past(s) == (recurrent ? 40 : 20));
    CHECK(infer_session_rewind(s, 0, &err) == INFER_OK && infer_session_n_past(s) == 0);
    CHECK(infer_eval_prefix(s, a, 0, got, &n_eval, &err) == INFER_ERR_ARG);
    infer_session_free(s); infer_session_free(ref);
    free(want); free(got);
    infer_model_free(m);
}
static void test_eval_prefix_rewind(void) {
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    prefix_case(SHARED "/models/stories260K.gguf", 0);
    if (file_exists(SHARED "/golden/qwen35/model-F32.gguf")) prefix_case(SHARED "/golden/qwen35/model-F32.gguf", 1);
}

/* A sequence of the schedule: its tokens fed in chunks (the prompt, then one at a time),
 * and the logits of every token. */
typedef struct { int32_t ids[64]; int n, chunk[16], n_chunks, next_chunk, fed, id, from; float *logits; } seq_run;

static void seq_runs_make(seq_run *r, int n_runs, int V, infer__rng *rng) {
    for (int i = 0; i < n_runs; i++) {
        seq_run *q = &r[i];
        memset(q, 0, sizeof *q);
        const int prompt = 3 + (int)(infer__rng_next(rng) % 26), gen = 2 + (int)(infer__rng_next(rng) % 6);
        q->n = prompt + gen;
        for (int t = 0; t < q->n; t++) q->ids[t] = (int32_t)(infer__rng_next(rng) % (uint64_t)V);
        q->chunk[q->n_chunks++] = prompt;
        for (int g = 0; g < gen; g++) q->chunk[q->n_chunks++] = 1;
        q->logits = malloc(sizeof(float) * (size_t)V * q->n);
        q->id = -1;
    }
}

/* each run alone in a fresh session: the reference logits */
static int seq_runs_alone(infer_model *m, const seq_run *r, int n_runs, float **ref, int precise, int ubatch, const infer_kernels *backend) {
    const int V = infer_model_config(m)->n_vocab;
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise;
    sp.backend = backend;
    sp.n_ctx = 128;
    sp.n_ubatch = ubatch;
    infer_error err;
    for (int i = 0; i < n_runs; i++) {
        infer_session *s;
        ref[i] = malloc(sizeof(float) * (size_t)V * r[i].n);
        if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { printf("    %s\n", err.msg); return 0; }
        for (int c = 0, at = 0; c < r[i].n_chunks; at += r[i].chunk[c++])
            if (infer_eval(s, r[i].ids + at, r[i].chunk[c], ref[i] + (size_t)at * V, 1, &err) != INFER_OK) { printf("    %s\n", err.msg); infer_session_free(s); return 0; }
        infer_session_free(s);
    }
    return 1;
}

/* The same runs in one session of `slots` sequences: they join at random, each call feeds
 * a random subset of the live ones their next chunk, and they leave when done (their slots
 * taken by later runs). Returns 0 on an error. */
static int seq_runs_batched(infer_model *m, seq_run *r, int n_runs, int slots, int precise, int ubatch, infer__rng *rng, const infer_kernels *backend) {
    const int V = infer_model_config(m)->n_vocab;
    if (slots > 32) { printf("    seq_runs_batched: at most 32 slots\n"); return 0; }
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise;
    sp.backend = backend;
    sp.n_ctx = 128 * slots;
    sp.n_ubatch = ubatch;
    sp.n_seq_max = slots;
    infer_session *s;
    infer_error err;
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { printf("    %s\n", err.msg); return 0; }
    infer_seq_remove(s, 0);                      /* every run gets its id from infer_seq_add */
    int started = 0, finished = 0, ok = 1;
    while (finished < n_runs && ok) {
        int live = 0;
        for (int i = 0; i < started; i++) live += r[i].id >= 0;
        if (started < n_runs && live < slots && (live == 0 || infer__rng_next(rng) % 2)) {
            ok = infer_seq_add(s, &r[started].id, &err) == INFER_OK;
            if (!ok) printf("    %s\n", err.msg);
            started++;
            continue;
        }
        infer_batch_item items[32];                  /* slots <= 32 */
        int n_items = 0;
        for (int i = 0; i < started; i++) {
            seq_run *q = &r[i];
            if (q->id < 0 || (infer__rng_next(rng) % 3 == 0 && n_items > 0)) continue;
            const int c = q->chunk[q->next_chunk];
            items[n_items++] = (infer_batch_item){ q->id, q->ids + q->fed, c, q->logits + (size_t)q->fed * V, 1, NULL };
        }
        if (n_items == 0) continue;
        if (infer_eval_batch(s, items, n_items, &err) != INFER_OK) { printf("    %s\n", err.msg); ok = 0; break; }
        for (int i = 0; i < started; i++) {
            seq_run *q = &r[i];
            int fed_now = 0;
            for (int j = 0; j < n_items; j++) fed_now |= items[j].seq == q->id && q->id >= 0;
            if (!fed_now) continue;
            q->fed += q->chunk[q->next_chunk++];
            if (q->next_chunk == q->n_chunks) { infer_seq_remove(s, q->id); q->id = -1; finished++; }
        }
    }
    infer_session_free(s);
    return ok;
}

/* Each sequence batched with others gives the bits it gives alone, every family, exact and
 * fast paths, whatever the order in which sequences join, share steps and leave. */
static void test_seq_batched_vs_alone(void) {
    const char *files[] = { SHARED "/models/stories260K.gguf", SHARED "/golden/llama/model-Q8_0.gguf", SHARED "/golden/llama/model-Q4_0.gguf",
                            SHARED "/golden/llama/model-Q4_K_M.gguf", SHARED "/golden/qwen3moe/model-F32.gguf", SHARED "/golden/qwen35/model-F32.gguf",
                            SHARED "/golden/qwen35moe/model-F32.gguf", SHARED "/golden/bitnet/model-TQ2_0.gguf", DS4_DIR "/model-F32.gguf" };
    int ran = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        if (!file_exists(files[f])) continue;
        infer_model *m;
        infer_error err;
        if (infer_model_load(&m, files[f], NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", files[f], err.msg); continue; }
        ran++;
        const int V = infer_model_config(m)->n_vocab, R = 6;
        const int hybrid = strstr(files[f], "qwen35") != NULL;
        for (int precise = 0; precise < 2; precise++)
            for (int small = 0; small < (hybrid ? 1 : 2); small++) {   /* ubatch 7: a prompt cut across steps */
                infer__rng rng;
                infer__rng_seed(&rng, 100 + f * 4 + precise * 2 + small);
                seq_run r[6];
                float *ref[6] = { 0 };
                seq_runs_make(r, R, V, &rng);
                const int ub = small ? 7 : 64;
                if (seq_runs_alone(m, r, R, ref, precise, ub, NULL) && seq_runs_batched(m, r, R, 3, precise, ub, &rng, NULL)) {
                    for (int i = 0; i < R; i++)
                        CHECK_MSG(!memcmp(ref[i], r[i].logits, sizeof(float) * (size_t)V * r[i].n), "%s %s ubatch %d: run %d differs from its run alone",
                                  files[f], precise ? "precise" : "fast", ub, i);
                } else {
                    CHECK_MSG(0, "%s: a run failed", files[f]);
                }
                for (int i = 0; i < R; i++) { free(ref[i]); free(r[i].logits); }
            }
        infer_model_free(m);
    }
    if (!ran) SKIP("../shared not found");
}

/* Two prompts sharing 1,000 tokens: the second reuses the first's blocks (62 whole ones and
 * the first 8 rows of a copied one), evaluates only its own suffix, and gets the logits it
 * gets without the cache -- while the first is live, and after it has gone (its blocks
 * only cached). */
static void test_seq_prefix_cache(void) {
    infer_model *m = synth_tiny("llama", "q8_0", "infer_pc.gguf");
    if (!m) return;
    infer_error err;
    const int V = infer_model_config(m)->n_vocab;
    int32_t a[1030], b[1040];
    for (int i = 0; i < 1000; i++) a[i] = b[i] = (i * 31 + 7) % V;
    for (int i = 1000; i < 1030; i++) a[i] = (i * 13 + 5) % V;
    for (int i = 1000; i < 1040; i++) b[i] = (i * 17 + 3) % V;
    for (int precise = 0; precise < 2; precise++) {
        float *want = eval_logits(m, b, 1040, 1040, (run_opts){ .precise = precise, .n_ctx = 2048 });
        for (int keep_a = 1; keep_a >= 0 && want; keep_a--) {
            infer_session_params sp = infer_session_default_params();
            sp.precise = precise;
            sp.n_ctx = 4096;
            sp.n_seq_max = 2;
            infer_session *s;
            if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); break; }
            CHECK(infer_eval(s, a, 1030, NULL, 0, &err) == INFER_OK);
            if (!keep_a) infer_seq_remove(s, 0);
            int32_t sb;
            CHECK(infer_seq_add(s, &sb, &err) == INFER_OK);
            const int32_t reused = infer_seq_reuse(s, sb, b, 1040);
            CHECK_MSG(reused == 1000, "%s, first sequence %s: %d tokens reused", precise ? "precise" : "fast", keep_a ? "live" : "gone", reused);
            float *got = malloc(sizeof(float) * (size_t)V * (1040 - reused));
            const infer_batch_item it = { sb, b + reused, 1040 - reused, got, 1, NULL };
            CHECK_MSG(infer_eval_batch(s, &it, 1, &err) == INFER_OK, "%s", err.msg);
            CHECK_MSG(!memcmp(got, want + (size_t)reused * V, sizeof(float) * (size_t)V * (1040 - reused)),
                      "%s, first sequence %s: the suffix's logits differ from a run without the cache", precise ? "precise" : "fast", keep_a ? "live" : "gone");
            /* a third sequence with the whole of b cached: all but its last token reused */
            int32_t sc;
            if (keep_a) infer_seq_remove(s, 0);
            CHECK(infer_seq_add(s, &sc, &err) == INFER_OK);
            CHECK(infer_seq_reuse(s, sc, b, 1040) == 1039);
            free(got);
            infer_session_free(s);
        }
        free(want);
    }
    infer_model_free(m);
    remove(tmp_path("infer_pc.gguf"));
}

/* A pool too small for every sequence at once: sequences join and leave at random, prompts
 * share prefixes, a call that does not fit fails with a clear message and changes nothing,
 * and then the newest sequence gives its place back and waits to start again; cached blocks
 * are evicted as the pool needs them -- and every sequence, once complete, has the logits it
 * has alone. */
static void test_seq_pool_stress(void) {
    infer_model *m = synth_tiny("llama", "f32", "infer_ps.gguf");
    if (!m) return;
    infer_error err;
    const int V = infer_model_config(m)->n_vocab, R = 24, P = 5;
    infer__rng rng;
    infer__rng_seed(&rng, 9);
    int32_t base[64];
    for (int i = 0; i < 64; i++) base[i] = (int32_t)(infer__rng_next(&rng) % (uint64_t)V);
    seq_run r[24];
    int order[24], started = 0, finished = 0, refused = 0, steps = 0, reused_total = 0;
    seq_runs_make(r, R, V, &rng);
    for (int i = 0; i < R; i++) {                /* prompts of 40..59 tokens, many starting alike, then 4 decode steps */
        r[i].n = 44 + (int)(infer__rng_next(&rng) % 20);
        const int shared = (int)(infer__rng_next(&rng) % 3) * 16 + (int)(infer__rng_next(&rng) % 5);
        for (int t = 0; t < r[i].n; t++) r[i].ids[t] = t < shared ? base[t] : (int32_t)(infer__rng_next(&rng) % (uint64_t)V);
        r[i].n_chunks = 0;
        r[i].chunk[r[i].n_chunks++] = r[i].n - 4;
        for (int g = 0; g < 4; g++) r[i].chunk[r[i].n_chunks++] = 1;
        free(r[i].logits);
        r[i].logits = malloc(sizeof(float) * (size_t)V * r[i].n);
        order[i] = i;
    }
    infer_session_params sp = infer_session_default_params();
    sp.n_ctx = 160;                              /* 10 blocks of 16: two or three sequences at a time */
    sp.n_seq_max = P;
    infer_session *s;
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); infer_model_free(m); return; }
    infer_seq_remove(s, 0);
    while (finished < R && steps++ < 5000) {
        int live[5], n_live = 0;                 /* order[finished..started): the live runs, oldest first */
        for (int i = finished; i < started; i++) live[n_live++] = order[i];
        if (started < R && n_live < P && (n_live == 0 || infer__rng_next(&rng) % 3 == 0)) {
            seq_run *q = &r[order[started++]];
            CHECK(infer_seq_add(s, &q->id, &err) == INFER_OK);
            q->next_chunk = 0;
            q->fed = q->from = infer_seq_reuse(s, q->id, q->ids, q->n - 4);
            reused_total += q->from;
            continue;
        }
        infer_batch_item items[5];
        int n_items = 0;
        for (int j = 0; j < n_live; j++) {
            seq_run *q = &r[live[j]];
            if (n_items > 0 && infer__rng_next(&rng) % 2) continue;
            const int c = q->next_chunk == 0 ? q->chunk[0] - q->from : 1;
            items[n_items++] = (infer_batch_item){ q->id, q->ids + q->fed, c, q->logits + (size_t)q->fed * V, 1, NULL };
        }
        int32_t before[5];
        for (int j = 0; j < n_items; j++) before[j] = infer_seq_n_past(s, items[j].seq);
        if (infer_eval_batch(s, items, n_items, &err) != INFER_OK) {
            CHECK_MSG(err.status == INFER_ERR_CONTEXT && strstr(err.msg, "KV cache pool exhausted"), "%s", err.msg);
            for (int j = 0; j < n_items; j++) CHECK(infer_seq_n_past(s, items[j].seq) == before[j]);
            refused++;
            if (n_live > 1) {                    /* the newest waits: back to the queue's front */
                seq_run *q = &r[order[started - 1]];
                infer_seq_remove(s, q->id);
                q->id = -1;
                started--;
            }
            continue;
        }
        for (int j = 0; j < n_live; j++) {
            seq_run *q = &r[live[j]];
            int fed_now = 0;
            for (int t = 0; t < n_items; t++) fed_now |= items[t].seq == q->id;
            if (!fed_now) continue;
            q->fed += q->next_chunk == 0 ? q->chunk[0] - q->from : 1;
            q->next_chunk++;
            if (q->next_chunk < q->n_chunks) continue;
            infer_seq_remove(s, q->id);          /* done: leaves, the runs behind it move up */
            q->id = -2;
            for (int i = finished; i < started; i++)
                if (order[i] == live[j]) { memmove(&order[finished + 1], &order[finished], sizeof(int) * (size_t)(i - finished)); order[finished] = live[j]; break; }
            finished++;
        }
    }
    CHECK_MSG(finished == R, "%d of %d sequences finished in %d steps", finished, R, steps);
    CHECK_MSG(refused > 0 && reused_total > 0, "the pool refused %d calls, %d prompt tokens came from the cache", refused, reused_total);
    for (int i = 0; i < R && finished == R; i++) {
        float *want = eval_logits(m, r[i].ids, r[i].n, r[i].n, (run_opts){ .precise = 0, .n_ctx = 2048 });
        const size_t from = (size_t)r[i].from * V;
        CHECK_MSG(want && !memcmp(want + from, r[i].logits + from, sizeof(float) * ((size_t)V * r[i].n - from)),
                  "sequence %d: logits differ from its run alone (from token %d)", i, r[i].from);
        free(want);
    }
    for (int i = 0; i < R; i++) free(r[i].logits);
    infer_session_free(s);
    infer_model_free(m);
    remove(tmp_path("infer_ps.gguf"));
}

/* Winding sequence 0 back into a block it shares with another sequence copies that block
 * first: the other sequence's cache is untouched (its next logits are those of its run
 * alone), and sequence 0 continues as if it had been fed its new tokens from the start. */
static void test_seq_rewind_shared(void) {
    infer_model *m = synth_tiny("llama", "f32", "infer_rw.gguf");
    if (!m) return;
    infer_error err;
    const int V = infer_model_config(m)->n_vocab;
    int32_t a[45], b[50], c[40];
    for (int i = 0; i < 45; i++) a[i] = (i * 29 + 5) % V;
    for (int i = 0; i < 50; i++) b[i] = i < 36 ? a[i] : (i * 7 + 1) % V;
    for (int i = 0; i < 40; i++) c[i] = i < 20 ? a[i] : (i * 13 + 2) % V;
    float *want_a = eval_logits(m, a, 45, 45, (run_opts){ .precise = 1, .n_ctx = 2048 }), *want_c = eval_logits(m, c, 40, 40, (run_opts){ .precise = 1, .n_ctx = 2048 });
    float *got = malloc(sizeof(float) * (size_t)V * 20);
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1; sp.n_seq_max = 2; sp.n_ctx = 256;
    infer_session *s;
    int32_t sa;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    CHECK(infer_seq_add(s, &sa, &err) == INFER_OK);
    infer_batch_item it = { sa, a, 40, NULL, 0, NULL };
    CHECK(infer_eval_batch(s, &it, 1, &err) == INFER_OK);
    CHECK(infer_seq_reuse(s, 0, b, 50) == 36);                /* two blocks shared, 4 rows copied */
    CHECK(infer_eval(s, b + 36, 14, NULL, 0, &err) == INFER_OK);
    CHECK(infer_session_rewind(s, 20, &err) == INFER_OK);    /* into the second shared block */
    CHECK_MSG(infer_eval(s, c + 20, 20, got, 1, &err) == INFER_OK, "%s", err.msg);
    CHECK_MSG(want_c && !memcmp(got, want_c + (size_t)20 * V, sizeof(float) * (size_t)V * 20), "sequence 0 after the rewind differs from its run alone");
    it = (infer_batch_item){ sa, a + 40, 5, got, 1, NULL };
    CHECK(infer_eval_batch(s, &it, 1, &err) == INFER_OK);
    CHECK_MSG(want_a && !memcmp(got, want_a + (size_t)40 * V, sizeof(float) * (size_t)V * 5), "the other sequence's cache changed");
    const int32_t *held = infer_session_tokens(s);
    CHECK(infer_session_n_past(s) == 40 && !memcmp(held, c, sizeof c));
    infer_session_free(s);
    free(want_a); free(want_c); free(got);
    infer_model_free(m);
    remove(tmp_path("infer_rw.gguf"));
}

/* ---- >>sampler ---- */
/* the greedy pick's fast path against the scalar loop: every length up to 100 and a
 * vocabulary's, with ties, -Inf, signed zeros and NaNs (one at 0 too); and which sampler
 * parameters make a plain greedy pick (infer_sampler_params_greedy) */
static void test_sampler_argmax(void) {
    infer__rng r;
    infer__rng_seed(&r, 7);
    float *x = malloc(sizeof(float) * 152064);
    int bad = 0, cases = 0;
    for (int trial = 0; trial < 2000; trial++) {
        const int32_t n = trial < 1900 ? 1 + trial % 100 : 152064 - trial % 50;
        const int kind = trial % 7;
        for (int32_t i = 0; i < n; i++) {
            const double u = infer__rng_uniform(&r);
            x[i] = kind == 0 ? (float)u : kind == 1 ? (float)(int)(u * 4) : kind == 2 ? (u < 0.5 ? 0.0f : -0.0f) : (float)(u * 20 - 10);
            if (kind == 3 && u < 0.2) x[i] = NAN;
            if (kind == 4 && u < 0.3) x[i] = -INFINITY;
            if (kind == 5 && u < 0.01) x[i] = INFINITY;
        }
        if (kind == 6) x[0] = NAN;
        if (kind == 3 && trial % 2) x[n - 1] = NAN;
        cases++;
        const int32_t want = infer__argmax_ref(x, n), got = infer__argmax(x, n);
        if (got != want && bad++ < 3) printf("    n %d kind %d: %d, the scalar loop %d\n", n, kind, got, want);
    }
    CHECK_MSG(bad == 0, "%d of %d cases differ", bad, cases);
    free(x);
    /* which parameters make the pick a plain argmax (the one a backend can make) */
    infer_sampler_params p = infer_sampler_default_params();
    CHECK(!infer_sampler_params_greedy(&p));
    p.temp = 0;
    CHECK(infer_sampler_params_greedy(&p));
    infer_sampler_params q = p;
    q.repeat_penalty = 1.1f;
    CHECK(!infer_sampler_params_greedy(&q));
    q = p; q.presence_penalty = 0.5f;
    CHECK(!infer_sampler_params_greedy(&q));
    q = p; q.frequency_penalty = 0.5f;
    CHECK(!infer_sampler_params_greedy(&q));
    const infer_logit_bias lb = { 3, 1.0f };
    q = p; q.logit_bias = &lb; q.n_logit_bias = 1;
    CHECK(!infer_sampler_params_greedy(&q));
    q = p; q.grammar = (const infer_grammar *)&lb;      /* any grammar: only its presence counts */
    CHECK(!infer_sampler_params_greedy(&q));
}
/* the sampler as it was, a full sort of the vocabulary per token: the reference the
 * selection-based one must match choice for choice */
static int32_t sample_full_sort(infer_sampler *s, const float *logits) {
    const int32_t V = s->n_vocab;
    infer__cand *c = s->cand;
    for (int32_t i = 0; i < V; i++) { c[i].id = i; c[i].logit = logits[i]; }
    qsort(c, (size_t)V, sizeof *c, infer__cand_cmp);
    int32_t n = V;
    if (s->p.top_k > 0 && s->p.top_k < n) n = s->p.top_k;
    double sum = 0;
    for (int32_t i = 0; i < n; i++) sum += exp((double)c[i].logit - c[0].logit);
    if (s->p.top_p < 1.0f) {
        double cum = 0;
        for (int32_t i = 0; i < n; i++) {
            cum += exp((double)c[i].logit - c[0].logit) / sum;
            if (cum >= s->p.top_p) { n = i + 1; break; }
        }
    }
    if (s->p.min_p > 0) {
        const double floor_l = c[0].logit + log(s->p.min_p);
        int32_t keep = 1;
        while (keep < n && c[keep].logit >= floor_l) keep++;
        n = keep;
    }
    double total = 0;
    for (int32_t i = 0; i < n; i++) total += exp(((double)c[i].logit - c[0].logit) / s->p.temp);
    double u = infer__rng_uniform(&s->rng) * total, acc = 0;
    for (int32_t i = 0; i < n; i++) {
        acc += exp(((double)c[i].logit - c[0].logit) / s->p.temp);
        if (u < acc) return c[i].id;
    }
    return c[n - 1].id;
}

/* The sampler selects instead of sorting the vocabulary: it picks the token the full sort
 * picked, on random rows of a 50,000-token vocabulary (logits rounded to make many ties, a
 * few rows flat, some with -inf), for top-k 40 / 1 / 0 (top-k off: the growing sorted
 * prefix), with and without top-p and min-p, two seeds apart in lockstep */
static void test_sampler_selection(void) {
    enum { V = 50000, ROWS = 60 };
    float *l = malloc(sizeof(float) * V);
    infer__rng rng;
    infer__rng_seed(&rng, 7);
    const struct { int k; float p, m, t; } cfg[] = {
        { 40, 0.95f, 0.05f, 0.8f }, { 1, 0.95f, 0.05f, 0.8f }, { 40, 1.0f, 0.0f, 1.5f }, { 0, 0.95f, 0.05f, 0.8f },
        { 0, 0.9f, 0.0f, 1.0f }, { 0, 1.0f, 0.1f, 0.7f }, { 0, 1.0f, 0.0f, 1.0f }, { 5000, 0.99f, 0.0f, 2.0f },
    };
    int same = 0, total = 0;
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        infer_sampler_params p = infer_sampler_default_params();
        p.top_k = cfg[ci].k; p.top_p = cfg[ci].p; p.min_p = cfg[ci].m; p.temp = cfg[ci].t; p.seed = 100 + ci;
        infer_sampler *a = infer_sampler_create(&p, V), *b = infer_sampler_create(&p, V);
        for (int r = 0; r < ROWS && a && b; r++) {
            const double spread = r % 10 == 9 ? 0.0 : 1.0 + r % 7;      /* every tenth row flat: ties everywhere */
            for (int i = 0; i < V; i++) {
                double z = spread * (2 * infer__rng_uniform(&rng) - 1) * (infer__rng_uniform(&rng) < 0.01 ? 4 : 1);
                l[i] = (float)(round(z * 4) / 4);                        /* quarter steps: many equal logits */
            }
            if (r % 5 == 3) for (int i = 0; i < V; i += 97) l[i] = -INFINITY;
            const int32_t x = infer_sampler_sample(a, l), y = sample_full_sort(b, l);
            same += x == y;
            total++;
            if (x != y) printf("    top_k %d top_p %.2f min_p %.2f temp %.1f, row %d: %d, the full sort %d\n", p.top_k, p.top_p, p.min_p, p.temp, r, x, y);
        }
        infer_sampler_free(a);
        infer_sampler_free(b);
    }
    CHECK_MSG(same == total && total == ROWS * 8, "%d of %d choices as the full sort's", same, total);
    free(l);
}

static void test_sampler_chain(void) {
    float logits[8] = { 0.1f, 2.0f, -1.0f, 1.9f, 0.0f, 0.5f, -3.0f, 1.0f };
    infer_sampler_params p = infer_sampler_default_params();
    p.temp = 0;
    infer_sampler *s = infer_sampler_create(&p, 8);
    CHECK(infer_sampler_sample(s, logits) == 1);
    infer_sampler_free(s);
    p.temp = 1.0f; p.top_k = 1; p.top_p = 1; p.min_p = 0;
    s = infer_sampler_create(&p, 8);
    for (int i = 0; i < 20; i++) CHECK(infer_sampler_sample(s, logits) == 1);   /* top-k 1 is greedy */
    infer_sampler_free(s);
    /* top-k 2: only ids 1 and 3 ever come out, both do */
    p.top_k = 2;
    s = infer_sampler_create(&p, 8);
    int seen[8] = { 0 };
    for (int i = 0; i < 400; i++) seen[infer_sampler_sample(s, logits)]++;
    CHECK(seen[1] > 0 && seen[3] > 0 && seen[1] + seen[3] == 400);
    infer_sampler_free(s);
    /* min-p 0.5 keeps tokens within ln(2) of the best: ids 1 and 3 */
    p.top_k = 0; p.min_p = 0.5f;
    s = infer_sampler_create(&p, 8);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 400; i++) seen[infer_sampler_sample(s, logits)]++;
    CHECK(seen[1] + seen[3] == 400);
    infer_sampler_free(s);
    /* top-p 0.5: the top token alone has p = 0.37 < 0.5, so ids 1 and 3 */
    p.min_p = 0; p.top_p = 0.5f;
    s = infer_sampler_create(&p, 8);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 400; i++) seen[infer_sampler_sample(s, logits)]++;
    CHECK(seen[1] > 0 && seen[3] > 0 && seen[1] + seen[3] == 400);
    infer_sampler_free(s);
    /* the same seed draws the same sequence; a different seed a different one */
    p.top_p = 1; p.seed = 42;
    int32_t r1[64], r2[64], r3[64];
    s = infer_sampler_create(&p, 8); for (int i = 0; i < 64; i++) r1[i] = infer_sampler_sample(s, logits); infer_sampler_free(s);
    s = infer_sampler_create(&p, 8); for (int i = 0; i < 64; i++) r2[i] = infer_sampler_sample(s, logits); infer_sampler_free(s);
    p.seed = 43;
    s = infer_sampler_create(&p, 8); for (int i = 0; i < 64; i++) r3[i] = infer_sampler_sample(s, logits); infer_sampler_free(s);
    CHECK(memcmp(r1, r2, sizeof r1) == 0 && memcmp(r1, r3, sizeof r1) != 0);
    /* repetition penalty 100 on token 1 makes token 3 the greedy choice under top-k 1 */
    p.top_k = 1; p.repeat_penalty = 100; p.repeat_last_n = 4; p.temp = 1;
    s = infer_sampler_create(&p, 8);
    infer_sampler_accept(s, 1);
    CHECK(infer_sampler_sample(s, logits) == 3);
    infer_sampler_free(s);
    /* ... and greedy (temp 0) applies it as well: 2.0 / 1.2 < 1.9 */
    p.top_k = 40; p.temp = 0; p.repeat_penalty = 1.2f;
    s = infer_sampler_create(&p, 8);
    CHECK(infer_sampler_sample(s, logits) == 1);
    infer_sampler_accept(s, 1);
    CHECK(infer_sampler_sample(s, logits) == 3);
    infer_sampler_accept(s, 3);
    CHECK(infer_sampler_sample(s, logits) == 1);   /* both penalized: 2.0 / 1.2 = 1.67 > 1.9 / 1.2 = 1.58 */
    infer_sampler_free(s);
}

/* ---- >>generate ---- */
/* infer_generate: the streaming callback sees the greedy tokens; returning non-zero stops */
typedef struct { int32_t got[64]; int n, stop_at; } gen_rec;
static int on_tok(void *user, int32_t tok, const float *logits) {
    gen_rec *r = user;
    (void)logits;
    r->got[r->n++] = tok;
    return r->n == r->stop_at;
}
static void test_generate_streaming(void) {
    char *md = slurp(SHARED "/models/GOLDEN_stories260K.md", NULL);
    if (!md) SKIP("../shared/models not found");
    int32_t want[300];
    golden_ids(md, "greedy from BOS", want, 300);
    free(md);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    infer_session *s;
    CHECK(infer_session_create(&s, m, NULL, &err) == INFER_OK);
    infer_sampler_params sp = infer_sampler_default_params();
    sp.temp = 0;
    int32_t bos = 1;
    gen_rec r = { { 0 }, 0, 0 };
    infer_gen_stats st;
    CHECK(infer_generate(s, &bos, 1, 40, &sp, on_tok, &r, &st, &err) == INFER_OK);
    CHECK(r.n == 40 && st.n_gen == 40 && st.n_prompt == 1 && memcmp(r.got, want, sizeof(int32_t) * 40) == 0);
    CHECK(st.gen_seconds > 0);
    infer_session_reset(s);
    gen_rec r2 = { { 0 }, 0, 5 };
    CHECK(infer_generate(s, &bos, 1, 40, &sp, on_tok, &r2, &st, &err) == INFER_OK);
    CHECK(r2.n == 5 && infer_session_n_past(s) == 5);
    /* sampling with a seed is reproducible */
    sp = infer_sampler_default_params();
    sp.seed = 99;
    gen_rec a = { { 0 }, 0, 0 }, b = { { 0 }, 0, 0 };
    infer_session_reset(s);
    CHECK(infer_generate(s, &bos, 1, 30, &sp, on_tok, &a, &st, &err) == INFER_OK);
    infer_session_reset(s);
    CHECK(infer_generate(s, &bos, 1, 30, &sp, on_tok, &b, &st, &err) == INFER_OK);
    CHECK(a.n == b.n && memcmp(a.got, b.got, sizeof(int32_t) * (size_t)a.n) == 0);
    infer_session_free(s);
    infer_model_free(m);
}

/* infer_generate_ex: every row of logits, end-of-generation ignored, why it stopped, a held prefix */
/* logit biases, presence and frequency penalties (OpenAI's and llama.cpp's: over the last
 * repeat_last_n tokens, minus presence once and frequency per occurrence); --logit-bias and
 * --ignore-eos on the command line */
static int32_t draw_with(const float *l, int n, const int32_t *seen, int n_seen, float presence, float frequency, const infer_logit_bias *b, int nb) {
    infer_sampler_params p = infer_sampler_default_params();
    p.temp = 0;
    p.presence_penalty = presence;
    p.frequency_penalty = frequency;
    p.logit_bias = b;
    p.n_logit_bias = nb;
    infer_sampler *s = infer_sampler_create(&p, n);
    for (int i = 0; i < n_seen; i++) infer_sampler_accept(s, seen[i]);
    const int32_t t = infer_sampler_sample(s, l);
    infer_sampler_free(s);
    return t;
}
static void test_sampler_bias_penalties(void) {
    const float l[8] = { 0, 0, 0, 0, 0, 2.0f, 1.5f, 0 };
    const int32_t seen[3] = { 5, 6, 5 };
    CHECK(draw_with(l, 8, seen, 3, 0, 0, NULL, 0) == 5);
    CHECK(draw_with(l, 8, seen, 3, 0, 0.3f, NULL, 0) == 5);       /* 2 - 0.6 = 1.4 against 1.5 - 0.3 = 1.2 */
    CHECK(draw_with(l, 8, seen, 3, 0, 0.5f, NULL, 0) == 5);       /* 1.0 and 1.0: the lower id */
    CHECK(draw_with(l, 8, seen, 3, 0, 0.6f, NULL, 0) == 6);       /* 0.8 against 0.9 */
    CHECK(draw_with(l, 8, seen, 3, 0.6f, 0, NULL, 0) == 5);       /* once each: 1.4 against 0.9 */
    CHECK(draw_with(l, 8, seen, 3, 2.5f, 0, NULL, 0) == 0);       /* both below the unseen zeros */
    const infer_logit_bias b[2] = { { 3, 2.5f }, { 99, 100.0f } }; /* an id outside the vocabulary is ignored */
    CHECK(draw_with(l, 8, seen, 0, 0, 0, b, 2) == 3);
    const infer_logit_bias ban = { 5, -INFINITY };
    CHECK(draw_with(l, 8, seen, 0, 0, 0, &ban, 1) == 6);
    if (!file_exists("./infer") || !file_exists(SHARED "/models/stories260K.gguf")) SKIP("./infer or ../shared/models not found");
    char out[4096];
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -p Once -n 5 --temp 0 --logit-bias 2+inf 2>&1", out, sizeof out) == 0 && strstr(out, "generation: 0 tokens"));
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -p Once -n 5 --temp 0 --logit-bias 2+inf --ignore-eos 2>&1", out, sizeof out) == 0 && strstr(out, "generation: 5 tokens"));
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -p Once -n 3 --temp 0 --logit-bias 300+100 2>&1", out, sizeof out) == 0 && strstr(out, "Once ha ha ha"));
    static const char *bad[] = { "3x", "3+", "-1+2", "3+nan", "+2", "99999999999+1" };
    for (int i = 0; i < 6; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "./infer -m " SHARED "/models/stories260K.gguf --logit-bias '%s' 2>&1", bad[i]);
        CHECK_MSG(run_cmd(cmd, out, sizeof out) == 1 && strstr(out, "--logit-bias"), "%s: %s", bad[i], out);
    }
}

/* -r: the output stops once it holds a stop string (which is printed); none seen: the full
 * length; bad stop strings are refused */
static void test_cli_stop_strings(void) {
    if (!file_exists("./infer") || !file_exists(SHARED "/models/stories260K.gguf")) SKIP("./infer or ../shared/models not found");
    char out[8192];
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -n 60 --temp 0 -r zzz -r Lily 2>/dev/null", out, sizeof out) == 0);
    CHECK_MSG(!strcmp(out, "Once upon a time, there was a little girl named Lily\n"), "%s", out);
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -n 60 --temp 0 -r ' girl' 2>&1 >/dev/null", out, sizeof out) == 0 && strstr(out, "generation: 12 tokens"));
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -n 20 --temp 0 -r zzz 2>&1 >/dev/null", out, sizeof out) == 0 && strstr(out, "generation: 20 tokens"));
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -r '' 2>&1", out, sizeof out) == 1 && strstr(out, "-r:"));
    char cmd[1024] = "./infer -m " SHARED "/models/stories260K.gguf";
    for (int i = 0; i < 17; i++) strcat(cmd, " -r x");
    strcat(cmd, " 2>&1");
    CHECK(run_cmd(cmd, out, sizeof out) == 1 && strstr(out, "at most 16"));
}

typedef struct { int rows; float first; int32_t toks[64]; int n; } gen_rows;
static int on_rows(void *user, const float *rows, int n) {
    gen_rows *g = user;
    if (!g->rows) g->first = rows[0];
    g->rows += n;
    return 0;
}
static int on_tok_rows(void *user, int32_t tok, const float *logits) {
    gen_rows *g = user;
    (void)logits;
    if (g->n < 64) g->toks[g->n++] = tok;
    return 0;
}
static void test_generate_options(void) {
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) SKIP("../shared/models not found");
    infer_session_params p = infer_session_default_params();
    p.n_ctx = 48;
    infer_session *s;
    CHECK(infer_session_create(&s, m, &p, &err) == INFER_OK);
    infer_sampler_params sp = infer_sampler_default_params();
    sp.temp = 0;
    const int32_t prompt[4] = { 1, 403, 407, 261 };
    float *want = malloc(sizeof(float) * 4 * 512);
    CHECK(infer_eval(s, prompt, 4, want, 1, &err) == INFER_OK);    /* the prompt's rows, evaluated alone */
    infer_session_reset(s);
    gen_rows g = { 0, 0, { 0 }, 0 };
    infer_gen_params gp = { 6, 1, on_tok_rows, on_rows, &g, 0, 0 };
    infer_gen_stats st;
    CHECK(infer_generate_ex(s, prompt, 4, &gp, &sp, &st, &err) == INFER_OK);
    CHECK_MSG(g.rows == 4 + 6 && st.n_gen == 6 && st.n_eval == 6 && st.stop == INFER_STOP_LENGTH, "%d rows, %d tokens, %d passes, stop %d", g.rows, st.n_gen, st.n_eval, (int)st.stop);
    CHECK(g.first == want[0] && infer_session_n_past(s) == 10);
    /* unlimited: runs to the full context */
    infer_session_reset(s);
    gen_rows h = { 0, 0, { 0 }, 0 };
    infer_gen_params gu = { -1, 1, on_tok_rows, NULL, &h, 0, 0 };
    CHECK(infer_generate_ex(s, prompt, 4, &gu, &sp, &st, &err) == INFER_OK);
    CHECK_MSG(st.stop == INFER_STOP_CONTEXT && infer_session_n_past(s) == 48 && st.n_gen == 45, "stop %d at %d, %d tokens", (int)st.stop, infer_session_n_past(s), st.n_gen);
    CHECK(memcmp(h.toks, g.toks, sizeof(int32_t) * 6) == 0);
    /* a held prefix: the same prompt again evaluates only its last token */
    infer_session_reset(s);
    infer_gen_params gq = { 3, 0, NULL, NULL, NULL, 1, 0 };
    CHECK(infer_generate_ex(s, prompt, 4, &gq, &sp, &st, &err) == INFER_OK && st.n_prompt_eval == 4);
    CHECK(infer_generate_ex(s, prompt, 4, &gq, &sp, &st, &err) == INFER_OK);
    CHECK_MSG(st.n_prompt_eval < 4 && st.n_prompt == 4, "%d of the prompt evaluated again", st.n_prompt_eval);
    /* a held prefix and every row exclude each other; an empty prompt is an error */
    gq.on_logits = on_rows; gq.user = &g;
    CHECK(infer_generate_ex(s, prompt, 4, &gq, &sp, &st, &err) == INFER_ERR_ARG);
    CHECK(infer_generate_ex(s, prompt, 0, &gp, &sp, &st, &err) == INFER_ERR_ARG && strstr(err.msg, "empty"));
    free(want);
    infer_session_free(s);
    infer_model_free(m);
}

/* ---- >>backends: a disguised CPU "device", a picky one, the backend diff ---- */
/* The CPU table dressed as a device: host_memory = 0, so a session uploads the weights and
 * every op must be handed backend memory. Allocations are remembered, and the wrapped ops
 * check that their pointers lie inside one: a host pointer (an mmapped weight, the host
 * copy of the positions or the block table) slipping through to a device is caught here,
 * on a machine without a GPU. */
static infer_kernels fake_k;
static struct { const char **p; size_t *n; int count, cap; } fake_mem;
static int fake_bad;

static void *fake_alloc(void *ctx, size_t bytes) {
    void *p = infer_cpu_kernels()->alloc(ctx, bytes);
    if (p && fake_mem.count == fake_mem.cap) {
        fake_mem.cap = fake_mem.cap ? 2 * fake_mem.cap : 256;
        fake_mem.p = realloc(fake_mem.p, sizeof(char *) * (size_t)fake_mem.cap);
        fake_mem.n = realloc(fake_mem.n, sizeof(size_t) * (size_t)fake_mem.cap);
    }
    if (p) { fake_mem.p[fake_mem.count] = p; fake_mem.n[fake_mem.count++] = bytes; }
    return p;
}
static void fake_free(void *ctx, void *p) {
    for (int i = 0; i < fake_mem.count; i++)
        if (fake_mem.p[i] == p) { fake_mem.p[i] = fake_mem.p[--fake_mem.count]; fake_mem.n[i] = fake_mem.n[fake_mem.count]; break; }
    infer_cpu_kernels()->free(ctx, p);
}
static void fake_owned(const void *p, const char *what) {
    if (!p) return;
    for (int i = 0; i < fake_mem.count; i++)
        if ((const char *)p >= fake_mem.p[i] && (const char *)p < fake_mem.p[i] + fake_mem.n[i]) return;
    if (fake_bad++ < 5) printf("    %s: a pointer that is not backend memory\n", what);
}
#define CPU (infer_cpu_kernels())
static void fake_embed(void *c, float *out, const infer_tensor *t, const int32_t *tok, int rows) {
    fake_owned(out, "embed out"); fake_owned(t->data, "embed table"); fake_owned(tok, "embed tokens");
    CPU->embed(c, out, t, tok, rows);
}
static void fake_rmsnorm(void *c, float *out, const float *x, const float *w, int rows, int dim, float eps) {
    fake_owned(out, "rmsnorm out"); fake_owned(x, "rmsnorm x"); fake_owned(w, "rmsnorm weight");
    CPU->rmsnorm(c, out, x, w, rows, dim, eps);
}
static void fake_matmul(void *c, float *out, const infer_tensor *w, const float *x, int rows) {
    fake_owned(out, "matmul out"); fake_owned(w->data, w->name); fake_owned(x, "matmul x");
    CPU->matmul(c, out, w, x, rows);
}
static void fake_add_rows(void *c, float *y, const float *b, int rows, int dim) {
    fake_owned(y, "add_rows y"); fake_owned(b, "add_rows bias");
    CPU->add_rows(c, y, b, rows, dim);
}
static void fake_rope(void *c, float *x, int rows, int nh, int hd, const int32_t *pos, const infer_rope *r) {
    fake_owned(x, "rope x"); fake_owned(pos, "rope pos"); fake_owned(r->freq_factors, "rope freq_factors");
    CPU->rope(c, x, rows, nh, hd, pos, r);
}
static void fake_rope_multi(void *c, float *x, int rows, int nh, int hd, const int32_t *pos, const infer_rope *r, const int32_t *sec) {
    fake_owned(x, "rope_multi x"); fake_owned(pos, "rope_multi pos"); fake_owned(r->freq_factors, "rope_multi freq_factors");
    CPU->rope_multi(c, x, rows, nh, hd, pos, r, sec);
}
static void fake_kv_store(void *c, const infer_kv_view *kv, const float *k, const float *v, const int32_t *pos, int rows) {
    fake_owned(kv->k, "kv_store pool"); fake_owned(kv->block_table, "kv_store block table"); fake_owned(pos, "kv_store pos");
    CPU->kv_store(c, kv, k, v, pos, rows);
}
static void fake_attention(void *c, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos, int rows, int nh, int nkv, int hd, float scale) {
    fake_owned(out, "attention out"); fake_owned(q, "attention q"); fake_owned(kv->v, "attention pool");
    fake_owned(kv->block_table, "attention block table"); fake_owned(pos, "attention pos");
    CPU->attention(c, out, q, kv, pos, rows, nh, nkv, hd, scale);
}
static void fake_conv1d(void *c, float *out, const float *x, float *st, const float *w, int rows, int ch, int kern) {
    fake_owned(st, "conv1d state"); fake_owned(w, "conv1d weight");
    CPU->conv1d_silu(c, out, x, st, w, rows, ch, kern);
}
static void fake_gates(void *c, float *g, float *beta, const float *dt, const float *a, int rows, int n_v) {
    fake_owned(dt, "deltanet dt_bias"); fake_owned(a, "deltanet a");
    CPU->deltanet_gates(c, g, beta, dt, a, rows, n_v);
}
static void fake_route(void *c, int32_t *ids, float *w, const float *lg, int rows, int ne, int nu, int gating, int norm, float scale,
                       const float *bias, int given) {
    fake_owned(ids, "moe_route ids"); fake_owned(lg, "moe_route logits"); fake_owned(bias, "moe_route bias");
    CPU->moe_route(c, ids, w, lg, rows, ne, nu, gating, norm, scale, bias, given);
}
static void fake_matmul_id(void *c, float *out, const infer_tensor *w, const float *x, const int32_t *ids, int rows, int nu, int ps) {
    fake_owned(w->data, w->name); fake_owned(ids, "matmul_id ids");
    CPU->matmul_id(c, out, w, x, ids, rows, nu, ps);
}
static void fake_glu(void *c, float *out, const float *g, const float *u, int64_t n, int act, float limit) {
    fake_owned(out, "glu out"); fake_owned(g, "glu gate"); fake_owned(u, "glu up");
    CPU->glu(c, out, g, u, n, act, limit);
}
static void fake_hc_pre(void *c, float *u, float *pc, const float *mix, const float *x, const float *base, const float *scale, int rows, int dim,
                        int n_hc, int iters, float eps) {
    fake_owned(u, "hc_pre u"); fake_owned(pc, "hc_pre post/comb"); fake_owned(mix, "hc_pre mix"); fake_owned(x, "hc_pre x");
    fake_owned(base, "hc_pre base"); fake_owned(scale, "hc_pre scale");
    CPU->hc_pre(c, u, pc, mix, x, base, scale, rows, dim, n_hc, iters, eps);
}
static void fake_hc_post(void *c, float *x, const float *h, const float *pc, int rows, int dim, int n_hc) {
    fake_owned(x, "hc_post x"); fake_owned(h, "hc_post h"); fake_owned(pc, "hc_post post/comb");
    CPU->hc_post(c, x, h, pc, rows, dim, n_hc);
}
static void fake_compress(void *c, float *e, float *st, const float *kv, const float *g, const float *ape, const int32_t *pos, int rows, int dim,
                          int ratio, int overlap) {
    fake_owned(e, "compress entries"); fake_owned(st, "compress state"); fake_owned(kv, "compress kv"); fake_owned(g, "compress gate");
    fake_owned(ape, "compress ape"); fake_owned(pos, "compress pos");
    CPU->compress(c, e, st, kv, g, ape, pos, rows, dim, ratio, overlap);
}
static void fake_indexer(void *c, int32_t *sel, int32_t *n_sel, const float *q, const float *w, const infer_kv_view *keys, const int32_t *pos,
                         int rows, int nh, int hd, int ratio, int top_k, float scale) {
    fake_owned(sel, "indexer sel"); fake_owned(n_sel, "indexer n_sel"); fake_owned(q, "indexer q"); fake_owned(w, "indexer w");
    fake_owned(keys->k, "indexer keys"); fake_owned(keys->block_table, "indexer block table"); fake_owned(pos, "indexer pos");
    CPU->indexer_topk(c, sel, n_sel, q, w, keys, pos, rows, nh, hd, ratio, top_k, scale);
}
static void fake_sparse(void *c, float *out, const float *q, const infer_kv_view *kv, const int32_t *pos, int rows, int nh, int hd, float scale,
                        int window, const float *sinks, const infer_kv_view *comp, int ratio, const int32_t *sel, const int32_t *n_sel, int top_k) {
    fake_owned(out, "attention_sparse out"); fake_owned(q, "attention_sparse q"); fake_owned(kv->k, "attention_sparse pool");
    fake_owned(kv->v, "attention_sparse pool"); fake_owned(kv->block_table, "attention_sparse block table"); fake_owned(pos, "attention_sparse pos");
    fake_owned(sinks, "attention_sparse sinks"); fake_owned(sel, "attention_sparse sel"); fake_owned(n_sel, "attention_sparse n_sel");
    if (comp) { fake_owned(comp->k, "attention_sparse entries"); fake_owned(comp->block_table, "attention_sparse entries' block table"); }
    CPU->attention_sparse(c, out, q, kv, pos, rows, nh, hd, scale, window, sinks, comp, ratio, sel, n_sel, top_k);
}
static const infer_kernels *fake_device(void) {
    fake_k = *infer_cpu_kernels();
    fake_k.name = "fake-device";
    fake_k.host_memory = 0;
    fake_k.alloc = fake_alloc; fake_k.free = fake_free;
    fake_k.embed = fake_embed; fake_k.rmsnorm = fake_rmsnorm; fake_k.matmul = fake_matmul; fake_k.add_rows = fake_add_rows;
    fake_k.rope = fake_rope; fake_k.rope_multi = fake_rope_multi; fake_k.kv_store = fake_kv_store; fake_k.attention = fake_attention;
    fake_k.conv1d_silu = fake_conv1d; fake_k.deltanet_gates = fake_gates; fake_k.moe_route = fake_route; fake_k.matmul_id = fake_matmul_id;
    fake_k.glu = fake_glu; fake_k.hc_pre = fake_hc_pre; fake_k.hc_post = fake_hc_post; fake_k.compress = fake_compress;
    fake_k.indexer_topk = fake_indexer; fake_k.attention_sparse = fake_sparse;
    fake_bad = 0;
    return &fake_k;
}
#undef CPU

/* models that between them reach every op: llama (rope, GQA), llama-3.1 rope_freqs,
 * qwen3moe (q/k norm, experts), qwen35moe (gated DeltaNet, multi-axis rope, gated attention,
 * shared expert), bitnet (sub-norms, ternary weights), deepseek4 (hyper-connections, the
 * compressors, the indexer, sparse attention with sinks, hash and biased routing, MXFP4
 * experts). n_tokens: how many tokens the GPU diff feeds; deepseek4's 140 go past t = 35,
 * where its indexer starts to choose (more than top_k = 8 entries visible), and t = 127,
 * where its first 128-token entry closes. */
static const struct { const char *path; int n_tokens; } backend_models[] = {
    { SHARED "/models/stories260K.gguf", 12 }, { SHARED "/golden/llama3_ropescale/model-F32.gguf", 12 },
    { SHARED "/golden/qwen3moe/model-F32.gguf", 12 }, { SHARED "/golden/qwen35moe/model-F32.gguf", 12 },
    { SHARED "/golden/qwen35/model-Q4_K.gguf", 12 }, { SHARED "/golden/bitnet/model-TQ2_0.gguf", 12 },
    { SHARED "/golden/deepseek4/model-F32.gguf", 140 },
};
#define N_BACKEND_MODELS (int)(sizeof backend_models / sizeof backend_models[0])

/* backend model i, loaded: NULL when its file is absent, or (a failed check) when it does
 * not load; *found counts the files present */
static infer_model *backend_model(int i, int *found) {
    if (!file_exists(backend_models[i].path)) return NULL;
    ++*found;
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, backend_models[i].path, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", backend_models[i].path, err.msg); return NULL; }
    return m;
}

/* logits of 20 prompt tokens and 3 decode steps on a backend (precise = 2: precise, with the
 * prompt in chunks of 7 tokens, so the block table grows between chunks) */
static float *backend_logits(infer_model *m, const infer_kernels *k, int precise, infer_error *err) {
    const int V = infer_model_config(m)->n_vocab;
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise > 0;
    sp.n_ubatch = precise == 2 ? 7 : 0;
    sp.n_ctx = 64;
    sp.n_threads = 2;
    sp.backend = k;
    infer_session *s;
    if (infer_session_create(&s, m, &sp, err) != INFER_OK) return NULL;
    float *out = malloc(sizeof(float) * (size_t)V * 23);
    int32_t ids[23];
    for (int i = 0; i < 23; i++) ids[i] = (i * 37 + 5) % V;
    int ok = infer_eval(s, ids, 20, out, 1, err) == INFER_OK;
    for (int i = 20; ok && i < 23; i++) ok = infer_eval(s, ids + i, 1, out + (size_t)i * V, 0, err) == INFER_OK;
    infer_session_free(s);
    if (!ok) { free(out); return NULL; }
    return out;
}

/* the disguised device gives bit-identical logits, and no op sees a host pointer */
static void test_backend_fake_device(void) {
    int found = 0;
    for (int i = 0; i < N_BACKEND_MODELS; i++) {
        infer_model *m = backend_model(i, &found);
        if (!m) continue;
        infer_error err;
        const infer_kernels *k = fake_device();
        const int V = infer_model_config(m)->n_vocab;
        for (int precise = 0; precise < 3; precise++) {
            float *a = backend_logits(m, NULL, precise, &err), *b = backend_logits(m, k, precise, &err);
            CHECK_MSG(a && b, "%s: %s", backend_models[i].path, err.msg);
            if (a && b) CHECK_MSG(memcmp(a, b, sizeof(float) * (size_t)V * 23) == 0, "%s precise=%d: fake device logits differ", backend_models[i].path, precise);
            free(a); free(b);
        }
        CHECK_MSG(fake_bad == 0, "%s: %d host pointers reached the ops", backend_models[i].path, fake_bad);
        infer_model_free(m);
        CHECK_MSG(fake_mem.count == 0, "%d backend allocations leaked", fake_mem.count);
    }
    if (!found) SKIP("../shared models not found");
}

/* a device that lacks a weight type, or a shape, refuses the model when it is loaded onto it,
 * naming the tensor or the limit; the model stays usable on the CPU */
static int no_q4_k(infer_type t) { return t != INFER_TYPE_Q4_K && infer_type_block(t) != 0; }
static int tiny_heads(const struct infer_config *c, char *why, size_t n) {
    snprintf(why, n, "head size %d is above this backend's 8", c->head_dim);
    return c->head_dim <= 8;
}
static void test_backend_refuses(void) {
    if (!file_exists(SHARED "/golden/qwen35/model-Q4_K.gguf")) SKIP("../shared/golden/qwen35 not found");
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/golden/qwen35/model-Q4_K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    infer_kernels k = *fake_device();
    k.name = "picky";
    k.supports_type = no_q4_k;
    infer_session_params sp = infer_session_default_params();
    sp.backend = &k;
    sp.n_ctx = 32;
    infer_session *s = NULL;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.msg, "q4_K") && strstr(err.msg, "picky") && strstr(err.msg, ".weight"), "%s", err.msg);
    CHECK(infer_model_upload(m, &k, &err) == INFER_ERR_UNSUPPORTED);
    k.supports_type = infer_cpu_kernels()->supports_type;
    k.supports_config = tiny_heads;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.msg, "cannot run this model: head size"), "%s", err.msg);
    CHECK(fake_mem.count == 0);                    /* the failed upload gave its memory back */
    k.supports_config = infer_cpu_kernels()->supports_config;
    k.glu = NULL;                                  /* an op the backend lacks */
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.msg, "picky backend has no 'glu' op"), "%s", err.msg);
    sp.backend = NULL;                             /* and the CPU still runs the model */
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK);
    int32_t t = 1;
    float *lg = malloc(sizeof(float) * (size_t)infer_model_config(m)->n_vocab);
    CHECK(infer_eval(s, &t, 1, lg, 0, &err) == INFER_OK);
    free(lg);
    infer_session_free(s);
    infer_model_free(m);
}

/* the diff harness itself, on the disguised device: every op and whole models agree exactly */
static void diff_print_failures(void *user, const char *line) {
    (*(int *)user)++;
    if (strncmp(line, "FAIL", 4) == 0) printf("    %s\n", line);
}
static void diff_print_all(void *user, const char *line) { (*(int *)user)++; printf("    %s\n", line); }

static void test_backend_diff_cpu(void) {
    infer_error err;
    int lines = 0;
    CHECK_MSG(infer_backend_diff(fake_device(), NULL, 8, INFER_DIFF_OPS, diff_print_failures, &lines, &err) == 0, "%s", err.msg);
    CHECK_MSG(lines > 100, "%d result lines", lines);
    CHECK(fake_bad == 0 && fake_mem.count == 0);
    if (!file_exists(SHARED "/golden/qwen35moe/model-F32.gguf")) SKIP("../shared/golden/qwen35moe not found");
    infer_model *m;
    if (infer_model_load(&m, SHARED "/golden/qwen35moe/model-F32.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    lines = 0;
    CHECK_MSG(infer_backend_diff(fake_device(), m, 8, INFER_DIFF_MODEL, diff_print_failures, &lines, &err) == 0, "%s", err.msg);
    CHECK(fake_bad == 0);
    infer_model_free(m);
    CHECK(fake_mem.count == 0);
}

/* ---- >>safetensors: the parser ---- */

/* a file from a header text and `data` zero bytes */
static buf_t st_raw(const char *header, size_t data) {
    buf_t b = { 0 };
    b_u64(&b, strlen(header));
    b_put(&b, header, strlen(header));
    for (size_t i = 0; i < data; i++) b_put(&b, "", 1);
    return b;
}
/* parse must fail with `want` in the message */
static void st_bad(const char *header, size_t data, const char *want) {
    buf_t b = st_raw(header, data);
    infer_safetensors st;
    infer_error err;
    err.msg[0] = 0;
    const infer_status rc = infer_safetensors_parse(&st, b.p, b.n, &err);
    if (rc == INFER_OK) infer_safetensors_free(&st);
    CHECK_MSG(rc != INFER_OK && strstr(err.msg, want), "header %.60s: status %d, message '%s', expected '%s'", header, rc, err.msg, want);
    free(b.p);
}

/* three tensors of three dtypes, metadata, an empty tensor */
static buf_t st_valid(void) {
    float a[6] = { 1, 2, 3, 4, 5, 6 };
    uint16_t bf[4] = { 0x3f80, 0x4000, 0xbf80, 0x0000 };   /* 1, 2, -1, 0 */
    uint16_t hf[4] = { 0x3c00, 0x4000, 0xbc00, 0x3800 };   /* 1, 2, -1, 0.5 */
    hft_t t[4];
    memset(t, 0, sizeof t);
    snprintf(t[0].name, sizeof t[0].name, "a.weight"); t[0].dtype = "F32"; t[0].nd = 2; t[0].shape[0] = 2; t[0].shape[1] = 3; t[0].data = (uint8_t *)a; t[0].nbytes = 24;
    snprintf(t[1].name, sizeof t[1].name, "b"); t[1].dtype = "BF16"; t[1].nd = 1; t[1].shape[0] = 4; t[1].data = (uint8_t *)bf; t[1].nbytes = 8;
    snprintf(t[2].name, sizeof t[2].name, "empty"); t[2].dtype = "I32"; t[2].nd = 2; t[2].shape[0] = 0; t[2].shape[1] = 5; t[2].data = (uint8_t *)a; t[2].nbytes = 0;
    snprintf(t[3].name, sizeof t[3].name, "c \"quoted\""); t[3].dtype = "F16"; t[3].nd = 2; t[3].shape[0] = 2; t[3].shape[1] = 2; t[3].data = (uint8_t *)hf; t[3].nbytes = 8;
    buf_t b = { 0 };
    hft_st_bytes(&b, t, 4);
    return b;
}

static void test_safetensors_parse(void) {
    buf_t b = st_valid();
    infer_safetensors st;
    infer_error err;
    CHECK(infer_safetensors_parse(&st, b.p, b.n, &err) == INFER_OK);
    CHECK(st.n_tensors == 4 && st.n_meta == 1 && !strcmp(st.meta[0], "format") && !strcmp(st.meta[1], "pt"));
    const infer_st_tensor *a = infer_safetensors_tensor(&st, "a.weight"), *bt = infer_safetensors_tensor(&st, "b");
    const infer_st_tensor *c = infer_safetensors_tensor(&st, "c \"quoted\""), *e = infer_safetensors_tensor(&st, "empty");
    CHECK(a && a->n_dims == 2 && a->shape[0] == 2 && a->shape[1] == 3 && a->nbytes == 24 && ((const float *)a->data)[5] == 6.0f);
    CHECK(bt && !strcmp(bt->dtype, "BF16") && bt->dtype_size == 2 && bt->offset == 24);
    CHECK(c && !strcmp(c->dtype, "F16") && c->offset == 32 && (const uint8_t *)c->data == b.p + st.data_offset + 32);
    CHECK(e && e->nbytes == 0 && !strcmp(e->dtype, "I32"));
    CHECK(st.data_offset % 8 == 0 && st.tensors[0].offset == 0);   /* header padded; tensors in data order */
    infer_safetensors_free(&st);
    /* FP8 E4M3 values: sign | exponent (bias 7) | 3-bit mantissa */
    CHECK(infer__e4m3_to_f32(0x38) == 1.0f && infer__e4m3_to_f32(0xB8) == -1.0f && infer__e4m3_to_f32(0x7E) == 448.0f);
    CHECK(infer__e4m3_to_f32(0x01) == ldexpf(1, -9) && infer__e4m3_to_f32(0x07) == 7 * ldexpf(1, -9));   /* subnormals: m/8 * 2^-6 */
    CHECK(infer__e4m3_to_f32(0x08) == ldexpf(1, -6) && infer__e4m3_to_f32(0x0F) == 15 * ldexpf(1, -9) && isnan(infer__e4m3_to_f32(0x7F)));
    /* the converter's absmean ternarization */
    float w[8] = { 0.9f, -0.1f, 0.4f, -1.2f, 0.0f, 0.6f, -0.5f, 0.3f }, s = 0;
    for (int i = 0; i < 8; i++) s += fabsf(w[i]) / 8;
    infer__hf_ternarize(w, 8, "F32");
    for (int i = 0; i < 8; i++) CHECK(w[i] == 0 || fabsf(fabsf(w[i]) - s) < 1e-6f);
    CHECK(w[0] > 0 && w[1] == 0 && w[3] < 0 && w[4] == 0);
    free(b.p);
}

static void test_safetensors_corrupt(void) {
    buf_t b = st_valid();
    infer_safetensors st;
    infer_error err;
    int bad = 0;
    for (size_t cut = 0; cut < b.n; cut++) {     /* every prefix fails: the tensors must end at the end */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, b.p, cut);
        if (infer_safetensors_parse(&st, p, cut, &err) == INFER_OK) { bad++; infer_safetensors_free(&st); }
        free(p);
    }
    CHECK_MSG(bad == 0, "%d truncated files parsed", bad);
    /* the header length */
    uint64_t huge = (uint64_t)1 << 63, big = ((uint64_t)100 << 20) + 1, over = b.n;
    uint8_t *p = malloc(b.n);
    const uint64_t lens[3] = { huge, big, over };
    const char *msgs[3] = { "100 MB", "100 MB", "runs past" };
    for (int i = 0; i < 3; i++) {
        memcpy(p, b.p, b.n);
        memcpy(p, &lens[i], 8);
        CHECK(infer_safetensors_parse(&st, p, b.n, &err) != INFER_OK && strstr(err.msg, msgs[i]));
    }
    free(p);
    CHECK(infer_safetensors_parse(&st, b.p, 5, &err) != INFER_OK && strstr(err.msg, "too short"));
    /* headers that lie */
    const char *T = "\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":";
    char h[512];
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]},\"b\":{%s[4,12]}}", T, T); st_bad(h, 12, "overlap");
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]},\"b\":{%s[12,20]}}", T, T); st_bad(h, 20, "belong to no tensor");
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]}}", T); st_bad(h, 4, "runs past");
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]}}", T); st_bad(h, 16, "end at byte 8");
    snprintf(h, sizeof h, "{\"a\":{%s[8,0]}}", T); st_bad(h, 8, "data_offsets");
    snprintf(h, sizeof h, "{\"a\":{%s[\"0\",8]}}", T); st_bad(h, 8, "data_offsets");
    snprintf(h, sizeof h, "{\"a\":{%s[0]}}", T); st_bad(h, 8, "data_offsets");
    snprintf(h, sizeof h, "{\"a\":{%s[0,8]},\"a\":{%s[8,16]}}", T, T); st_bad(h, 16, "twice");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "needs 12 bytes");
    st_bad("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", 16, "needs 8 bytes");
    st_bad("{\"a\":{\"dtype\":\"F12\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype");
    st_bad("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "dimension 0");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8, "dimension 0");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "at most 8");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,4]}}", 4, "overflows");
    st_bad("{\"a\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}", 4, "overflows");
    st_bad("{\"a\":[1,2]}", 0, "not an object");
    st_bad("{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "NUL");
    st_bad("{\"__metadata__\":{\"k\":1}}", 0, "not a string");
    st_bad("[1,2]", 0, "JSON object");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},}", 8, "json");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]", 8, "json");
    st_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", 8, "json");
    /* random byte flips never crash, and whatever parses lies inside the file */
    infer__rng rng;
    infer__rng_seed(&rng, 11);
    for (int it = 0; it < 3000; it++) {
        uint8_t *q = malloc(b.n);
        memcpy(q, b.p, b.n);
        for (int k = 0; k < 3; k++) q[infer__rng_next(&rng) % b.n] ^= (uint8_t)(1 + infer__rng_next(&rng) % 255);
        if (infer_safetensors_parse(&st, q, b.n, &err) == INFER_OK) {
            for (int64_t i = 0; i < st.n_tensors; i++) {
                const uint8_t *d = st.tensors[i].data;
                CHECK(d >= q + st.data_offset && d + st.tensors[i].nbytes <= q + b.n);
            }
            infer_safetensors_free(&st);
        }
        free(q);
    }
    free(b.p);
}

/* ---- >>hf-tensors, >>hf-folder: GGUF -> the Hugging Face checkpoint it came from, and back ----
 * The round trip: each golden GGUF is written out as the Hugging Face folder it was
 * converted from -- config.json, safetensors, tokenizer.json, tokenizer_config.json -- by
 * undoing the converter's transforms here, with this file's own name table and formulas
 * (ARCH_FACTS section 2 and the family sections), not the loader's. infer_hf_load must then
 * give back every tensor bit for bit and the same metadata, and the GGUF it writes must
 * give the same logits as the original. Two transforms cannot always be inverted exactly in
 * floats -- -exp(A_log) and BitNet's 1/weight_scale skip some outputs -- so those values may
 * come back 1 ulp off (the test counts them), and BitNet's ternary codes cannot say -0. */

typedef struct {
    const infer_gguf *g;
    const char *arch;          /* general.architecture */
    int llama, hybrid, bitnet, fused_experts;
    const char *prefix;        /* "model." or "model.language_model." */
    int64_t n_head, n_head_kv, n_main, nk, nv, dk, dv;
    hft_t *t; int n, cap;
    int n_inexact;             /* values no float input reproduces exactly: -exp(A_log), 1/weight_scale */
} hft_ctx;

static int64_t hft_int(const infer_gguf *g, const char *arch, const char *suffix, int64_t dflt) {
    char k[128];
    int64_t v;
    snprintf(k, sizeof k, "%s.%s", arch, suffix);
    return infer__get_int(g, k, &v, NULL) == 1 ? v : dflt;
}
static double hft_float(const infer_gguf *g, const char *arch, const char *suffix, double dflt) {
    char k[128];
    double v;
    snprintf(k, sizeof k, "%s.%s", arch, suffix);
    return infer__get_float(g, k, &v, NULL) == 1 ? v : dflt;
}

static hft_t *hft_add(hft_ctx *c, const char *name, const char *dtype, int nd, const int64_t *shape, size_t nbytes) {
    if (c->n == c->cap) { c->cap = c->cap * 2 + 16; c->t = realloc(c->t, sizeof(hft_t) * (size_t)c->cap); }
    hft_t *t = &c->t[c->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = dtype;
    t->nd = nd;
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)nd);
    t->nbytes = nbytes;
    t->data = calloc(1, nbytes ? nbytes : 1);
    return t;
}

/* the float x closest to guess with f(x) == want, searching 64 ulps each way; else guess */
static float hft_preimage(float want, float guess, float (*f)(float), int *exact) {
    float lo = guess, hi = guess;
    *exact = 1;
    for (int k = 0; k < 64; k++) {
        if (f(lo) == want) return lo;
        if (f(hi) == want) return hi;
        lo = nextafterf(lo, -INFINITY);
        hi = nextafterf(hi, INFINITY);
    }
    *exact = 0;
    return guess;
}
static float hft_plus1(float x) { return x + 1.0f; }
static float hft_negexp(float x) { return -expf(x); }
static float hft_recip(float x) { return 1.0f / x; }   /* bitnet: (code - 1) / ws with code - 1 = 1 */

/* GGUF's tiled value heads back to HF's grouped order: HF head k*r + i is GGUF head i*nk + k
 * (a view [nk, r, d] with its first two axes swapped). dst/src hold nv blocks of d floats. */
static void hft_unreorder(const hft_ctx *c, float *dst, const float *src, int64_t d) {
    const int64_t r = c->nv / c->nk;
    for (int64_t k = 0; k < c->nk; k++)
        for (int64_t i = 0; i < r; i++) memcpy(dst + (k * r + i) * d, src + (i * c->nk + k) * d, sizeof(float) * (size_t)d);
}

/* GGUF llama's adjacent-pair rows back to HF's rotate-half rows: the converter's
 * reshape(n_head, 2, hd/2, cols).swapaxes(1, 2) puts HF row j*hd/2 + i of a head at 2i + j */
static void hft_unpermute(float *dst, const float *src, int64_t rows, int64_t cols, int64_t n_head) {
    const int64_t hd = rows / n_head;
    for (int64_t h = 0; h < n_head; h++)
        for (int64_t i = 0; i < hd / 2; i++)
            for (int64_t j = 0; j < 2; j++)
                memcpy(dst + (h * hd + j * hd / 2 + i) * cols, src + (h * hd + 2 * i + j) * cols, sizeof(float) * (size_t)cols);
}

/* the 7 BitNet projections as Microsoft's packed U8 + inverted scale */
static void hft_pack_bitnet(hft_ctx *c, const char *hf, const float *w, int64_t rows, int64_t cols) {
    float s = 0;
    for (int64_t i = 0; i < rows * cols; i++) s = fmaxf(s, fabsf(w[i]));
    const int64_t sh[2] = { rows / 4, cols }, one = 1;
    hft_t *p = hft_add(c, hf, "U8", 2, sh, (size_t)(rows / 4 * cols));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++) {
            const int code = w[r * cols + k] > 0 ? 2 : w[r * cols + k] < 0 ? 0 : 1;
            p->data[(r % (rows / 4)) * cols + k] |= (uint8_t)(code << (2 * (r / (rows / 4))));
        }
    char nm[220];
    int exact;
    snprintf(nm, sizeof nm, "%.200s_scale", hf);
    hft_t *sc = hft_add(c, nm, "F32", 1, &one, 4);
    const float ws = hft_preimage(s, 1.0f / s, hft_recip, &exact);
    memcpy(sc->data, &ws, 4);
    c->n_inexact += !exact;
}

/* "blk.N.<rest>" -> HF name; NULL for tensors HF does not store */
static const char *hft_name(const hft_ctx *c, const char *gg, char *out, size_t size) {
    static const char *const map[][2] = {
        { "attn_norm", "input_layernorm" }, { "ffn_norm", "post_attention_layernorm" }, { "post_attention_norm", "post_attention_layernorm" },
        { "attn_q", "self_attn.q_proj" }, { "attn_k", "self_attn.k_proj" }, { "attn_v", "self_attn.v_proj" }, { "attn_output", "self_attn.o_proj" },
        { "attn_q_norm", "self_attn.q_norm" }, { "attn_k_norm", "self_attn.k_norm" }, { "attn_sub_norm", "self_attn.attn_sub_norm" },
        { "ffn_gate", "mlp.gate_proj" }, { "ffn_up", "mlp.up_proj" }, { "ffn_down", "mlp.down_proj" }, { "ffn_sub_norm", "mlp.ffn_sub_norm" },
        { "ffn_gate_inp", "mlp.gate" }, { "ffn_gate_shexp", "mlp.shared_expert.gate_proj" }, { "ffn_up_shexp", "mlp.shared_expert.up_proj" },
        { "ffn_down_shexp", "mlp.shared_expert.down_proj" }, { "ffn_gate_inp_shexp", "mlp.shared_expert_gate" },
        { "attn_qkv", "linear_attn.in_proj_qkv" }, { "attn_gate", "linear_attn.in_proj_z" }, { "ssm_beta", "linear_attn.in_proj_b" },
        { "ssm_alpha", "linear_attn.in_proj_a" }, { "ssm_conv1d", "linear_attn.conv1d" }, { "ssm_norm", "linear_attn.norm" },
        { "ssm_out", "linear_attn.out_proj" },
    };
    static const char *const mtp[][2] = { { "nextn.eh_proj", "fc" }, { "nextn.enorm", "pre_fc_norm_embedding" }, { "nextn.hnorm", "pre_fc_norm_hidden" },
                                          { "nextn.shared_head_norm", "norm" } };
    if (!strcmp(gg, "token_embd.weight")) { snprintf(out, size, "%sembed_tokens.weight", c->prefix); return out; }
    if (!strcmp(gg, "output_norm.weight")) { snprintf(out, size, "%snorm.weight", c->prefix); return out; }
    if (!strcmp(gg, "output.weight")) return "lm_head.weight";
    if (strncmp(gg, "blk.", 4)) return NULL;
    char *end;
    const long blk = strtol(gg + 4, &end, 10);
    const char *rest = end + 1;
    char lay[64];
    if (blk >= c->n_main) snprintf(lay, sizeof lay, "mtp.layers.%ld.", blk - c->n_main);
    else snprintf(lay, sizeof lay, "%slayers.%ld.", c->prefix, blk);
    if (!strcmp(rest, "ssm_a")) { snprintf(out, size, "%slinear_attn.A_log", lay); return out; }
    if (!strcmp(rest, "ssm_dt.bias")) { snprintf(out, size, "%slinear_attn.dt_bias", lay); return out; }
    const char *dot = strrchr(rest, '.');
    const size_t bl = (size_t)(dot - rest);
    for (size_t i = 0; i < sizeof mtp / sizeof mtp[0]; i++)
        if (strlen(mtp[i][0]) == bl && !strncmp(rest, mtp[i][0], bl)) { snprintf(out, size, "mtp.%s%s", mtp[i][1], dot); return out; }
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i][0]) == bl && !strncmp(rest, map[i][0], bl)) { snprintf(out, size, "%s%s%s", lay, map[i][1], dot); return out; }
    return NULL;
}

/* ffn_{gate,up,down}_exps [E, out, in]: one HF tensor per expert, or fused gate_up / down */
static void hft_experts(hft_ctx *c, const infer_tensor *t, const char *gg) {
    const int64_t E = t->ne[2], out = t->ne[1], in = t->ne[0];
    const char *proj = strstr(gg, "gate_exps") ? "gate_proj" : strstr(gg, "up_exps") ? "up_proj" : "down_proj";
    const long blk = strtol(gg + 4, NULL, 10);
    const float *w = (const float *)t->data;
    char nm[200];
    if (c->fused_experts) {
        if (!strcmp(proj, "down_proj")) {
            const int64_t sh[3] = { E, out, in };
            snprintf(nm, sizeof nm, "%slayers.%ld.mlp.experts.down_proj", c->prefix, blk);
            memcpy(hft_add(c, nm, "F32", 3, sh, t->nbytes)->data, w, t->nbytes);
            return;
        }
        snprintf(nm, sizeof nm, "%slayers.%ld.mlp.experts.gate_up_proj", c->prefix, blk);
        hft_t *f = NULL;
        for (int i = 0; i < c->n; i++) if (!strcmp(c->t[i].name, nm)) f = &c->t[i];
        if (!f) { const int64_t sh[3] = { E, 2 * out, in }; f = hft_add(c, nm, "F32", 3, sh, t->nbytes * 2); }
        const size_t slab = (size_t)(out * in) * 4;
        for (int64_t e = 0; e < E; e++) memcpy(f->data + (2 * e + (proj[0] == 'u')) * slab, (const uint8_t *)w + e * slab, slab);
        return;
    }
    for (int64_t e = 0; e < E; e++) {
        const int64_t sh[2] = { out, in };
        snprintf(nm, sizeof nm, "%slayers.%ld.mlp.experts.%lld.%s.weight", c->prefix, blk, (long long)e, proj);
        memcpy(hft_add(c, nm, "F32", 2, sh, (size_t)(out * in) * 4)->data, w + e * out * in, (size_t)(out * in) * 4);
    }
}

static void hft_tensor(hft_ctx *c, const infer_tensor *t) {
    char nm[200];
    const char *gg = t->name, *hf = hft_name(c, gg, nm, sizeof nm);
    if (strstr(gg, "_exps.weight")) { hft_experts(c, t, gg); return; }
    if (!hf) return;   /* rope_freqs: config.json's rope_scaling regenerates it */
    int64_t sh[4];
    int nd = t->n_dims;
    for (int d = 0; d < nd; d++) sh[d] = t->ne[nd - 1 - d];
    const int64_t n = t->nbytes / 4, rows = sh[0], cols = n / (rows ? rows : 1);
    const float *w = (const float *)t->data;
    const char *rest = strncmp(gg, "blk.", 4) ? gg : strchr(gg + 4, '.') + 1;
    if (c->bitnet && t->n_dims == 2 && !strstr(gg, "token_embd") && strncmp(gg, "output", 6)) { hft_pack_bitnet(c, hf, w, rows, cols); return; }
    if (strstr(gg, "ssm_conv1d")) { sh[2] = sh[1]; sh[1] = 1; nd = 3; }
    hft_t *o = hft_add(c, hf, "F32", nd, sh, t->nbytes);
    float *x = (float *)o->data;
    memcpy(x, w, t->nbytes);
    if (c->llama && (!strncmp(rest, "attn_q.", 7) || !strncmp(rest, "attn_k.", 7)))
        hft_unpermute(x, w, rows, cols, rest[5] == 'q' ? c->n_head : c->n_head_kv);
    if (c->hybrid && strstr(gg, "norm.weight") && !strstr(gg, "ssm_norm"))
        for (int64_t i = 0; i < n; i++) { int ex; x[i] = hft_preimage(w[i], w[i] - 1.0f, hft_plus1, &ex); CHECK(ex); }
    if (c->hybrid && !strcmp(rest, "ssm_a"))
        for (int64_t i = 0; i < n; i++) { int ex; x[i] = hft_preimage(w[i], logf(-w[i]), hft_negexp, &ex); c->n_inexact += !ex; }
    if (c->hybrid && c->nk != c->nv) {
        float *tmp = malloc(t->nbytes);
        memcpy(tmp, x, t->nbytes);
        const int64_t vfirst = 2 * c->nk * c->dk;
        if (!strcmp(rest, "attn_qkv.weight") || !strcmp(rest, "ssm_conv1d.weight")) hft_unreorder(c, x + vfirst * cols, tmp + vfirst * cols, c->dv * cols);
        if (!strcmp(rest, "attn_gate.weight") || !strcmp(rest, "ssm_beta.weight") || !strcmp(rest, "ssm_alpha.weight") || !strcmp(rest, "ssm_a") || !strcmp(rest, "ssm_dt.bias"))
            hft_unreorder(c, x, tmp, n / c->nv);
        if (!strcmp(rest, "ssm_out.weight"))
            for (int64_t r = 0; r < rows; r++) hft_unreorder(c, x + r * cols, tmp + r * cols, c->dv);
        free(tmp);
    }
}

/* config.json from the GGUF's metadata (and rope_scaling from the golden's manifest) */
static void hft_config(buf_t *b, const hft_ctx *c, const char *hf_arch, const char *manifest, int text_config) {
    const infer_gguf *g = c->g;
    const char *a = c->arch;
    const infer_tensor *te = infer_gguf_tensor(g, "token_embd.weight");
    const int64_t nextn = hft_int(g, a, "nextn_predict_layers", 0), head_dim = hft_int(g, a, "attention.key_length", 0);
    hb_fmt(b, "{\"architectures\": [\"%s\"], \"model_type\": \"x\",%s\n", hf_arch, text_config ? " \"text_config\": {" : "");
    hb_fmt(b, "\"hidden_size\": %lld, \"num_hidden_layers\": %lld, ", (long long)hft_int(g, a, "embedding_length", 0), (long long)(hft_int(g, a, "block_count", 0) - nextn));
    hb_fmt(b, "\"num_attention_heads\": %lld, \"num_key_value_heads\": %lld, ", (long long)c->n_head, (long long)c->n_head_kv);
    hb_fmt(b, "\"max_position_embeddings\": %lld, \"rms_norm_eps\": %.9g, ", (long long)hft_int(g, a, "context_length", 0), hft_float(g, a, "attention.layer_norm_rms_epsilon", 0));
    hb_fmt(b, "\"vocab_size\": %lld, \"tie_word_embeddings\": %s", (long long)te->ne[1], infer_gguf_tensor(g, "output.weight") ? "false" : "true");
    if (hft_int(g, a, "feed_forward_length", 0)) hb_fmt(b, ", \"intermediate_size\": %lld", (long long)hft_int(g, a, "feed_forward_length", 0));
    if (head_dim) hb_fmt(b, ", \"head_dim\": %lld", (long long)head_dim);
    if (!c->hybrid) hb_fmt(b, ", \"rope_theta\": %.9g", hft_float(g, a, "rope.freq_base", 10000));
    if (hft_int(g, a, "expert_count", 0)) {
        hb_fmt(b, ", \"num_experts\": %lld, \"num_experts_per_tok\": %lld", (long long)hft_int(g, a, "expert_count", 0), (long long)hft_int(g, a, "expert_used_count", 0));
        hb_fmt(b, ", \"moe_intermediate_size\": %lld", (long long)hft_int(g, a, "expert_feed_forward_length", 0));
        if (hft_int(g, a, "expert_shared_feed_forward_length", 0)) hb_fmt(b, ", \"shared_expert_intermediate_size\": %lld", (long long)hft_int(g, a, "expert_shared_feed_forward_length", 0));
    }
    if (c->hybrid) {
        const infer_gguf_kv *sec = infer_gguf_find(g, "qwen35.rope.dimension_sections");
        if (!sec) sec = infer_gguf_find(g, "qwen35moe.rope.dimension_sections");
        int32_t s[4] = { 0 };
        if (sec) memcpy(s, sec->arr_data, 12);
        hb_fmt(b, ", \"linear_conv_kernel_dim\": %lld, \"linear_key_head_dim\": %lld, \"linear_num_key_heads\": %lld", (long long)hft_int(g, a, "ssm.conv_kernel", 0), (long long)c->dk, (long long)c->nk);
        hb_fmt(b, ", \"linear_num_value_heads\": %lld, \"linear_value_head_dim\": %lld", (long long)c->nv, (long long)c->dv);
        hb_fmt(b, ", \"full_attention_interval\": %lld, \"mtp_num_hidden_layers\": %lld", (long long)hft_int(g, a, "full_attention_interval", 4), (long long)nextn);
        hb_fmt(b, ", \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": %.9g, \"partial_rotary_factor\": %.9g, \"mrope_section\": [%d, %d, %d], \"mrope_interleaved\": true}",
               hft_float(g, a, "rope.freq_base", 0), (double)hft_int(g, a, "rope.dimension_count", 0) / (double)head_dim, s[0], s[1], s[2]);
    }
    if (c->bitnet) hb_str(b, ", \"hidden_act\": \"silu\", \"quantization_config\": {\"quant_method\": \"bitnet\", \"linear_class\": \"bitlinear\"}");
    /* the special ids, as config.json also lists them */
    static const char *const sp[][2] = { { "bos", "bos" }, { "eos", "eos" }, { "padding", "pad" } };
    for (int i = 0; i < 3; i++) {
        char k[64];
        int64_t v;
        snprintf(k, sizeof k, "tokenizer.ggml.%s_token_id", sp[i][0]);
        if (infer__get_int(g, k, &v, NULL) == 1) hb_fmt(b, ", \"%s_token_id\": %lld", sp[i][1], (long long)v);
    }
    char *m = manifest ? slurp(manifest, NULL) : NULL;
    infer__json_doc d;
    if (m && infer__json_parse(&d, m, strlen(m), NULL) == INFER_OK) {
        const infer__json *rs = infer__json_get(infer__json_get(d.root, "synth_config"), "rope_scaling");
        if (rs && rs->type == INFER__JSON_OBJECT) {
            hb_str(b, ", \"rope_scaling\": {");
            for (uint32_t i = 0; i < rs->len; i++) {
                if (rs->items[i].type == INFER__JSON_STRING) hb_fmt(b, "%s\"%s\": \"%s\"", i ? ", " : "", rs->items[i].key, rs->items[i].str);
                else hb_fmt(b, "%s\"%s\": %.17g", i ? ", " : "", rs->items[i].key, rs->items[i].num);
            }
            hb_str(b, "}");
        }
        infer__json_free(&d);
    }
    free(m);
    hb_str(b, text_config ? "}}\n" : "}\n");
}

/* the Split regexes of real tokenizer.json files, as JSON text */
static const char *hft_pre_json(const char *pre) {
    if (!strcmp(pre, "llama-bpe"))
        return "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}";
    if (!strcmp(pre, "qwen2"))
        return "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}";
    return "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{L}\\\\p{M}]+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{M}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}";
}

/* tokenizer.json and tokenizer_config.json from the GGUF vocabulary */
static void hft_tokenizer(const infer_gguf *g, const char *dir) {
    const infer_gguf_kv *toks = infer_gguf_find(g, "tokenizer.ggml.tokens"), *types = infer_gguf_find(g, "tokenizer.ggml.token_type");
    const infer_gguf_kv *merges = infer_gguf_find(g, "tokenizer.ggml.merges");
    infer_str model = { 0 }, pre = { 0 };
    infer__get_str(g, "tokenizer.ggml.model", &model, NULL);
    infer__get_str(g, "tokenizer.ggml.pre", &pre, NULL);
    const int spm = infer__str_eq(model, "llama");
    char pre_z[32];
    snprintf(pre_z, sizeof pre_z, "%.*s", (int)pre.len, pre.ptr);
    const char **txt;
    uint64_t *len;
    infer_error err;
    infer__str_array(toks, &txt, &len, &err);
    int32_t *ty = malloc(sizeof(int32_t) * (size_t)types->arr_n);   /* GGUF arrays need not be aligned */
    memcpy(ty, types->arr_data, sizeof(int32_t) * (size_t)types->arr_n);
    buf_t b = { 0 }, c = { 0 };
    hb_fmt(&b, "{\"version\": \"1.0\", \"added_tokens\": [");
    int first = 1;
    for (uint64_t i = 0; i < toks->arr_n; i++) {
        if (ty[i] != 3 && ty[i] != 4 && !(spm && ty[i] == 2)) continue;
        hb_fmt(&b, "%s{\"id\": %llu, \"content\": ", first ? "" : ", ", (unsigned long long)i);
        hb_json(&b, txt[i], len[i]);
        hb_fmt(&b, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": %s}", ty[i] == 4 ? "false" : "true");
        first = 0;
    }
    if (spm) hb_str(&b, "], \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\xe2\x96\x81\"}, "
                        "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\xe2\x96\x81\"}]}, \"pre_tokenizer\": null");
    else hb_fmt(&b, "], \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [%s, "
                    "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]}", hft_pre_json(pre_z));
    hb_fmt(&b, ", \"post_processor\": null, \"decoder\": null, \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": %s, "
               "\"byte_fallback\": %s, \"ignore_merges\": %s, \"vocab\": {", spm ? "\"<unk>\"" : "null", spm ? "true" : "false", !strcmp(pre_z, "llama-bpe") ? "true" : "false");
    first = 1;
    for (uint64_t i = 0; i < toks->arr_n; i++) {
        if (!spm && ty[i] != 1) continue;
        hb_str(&b, first ? "" : ", ");
        hb_json(&b, txt[i], len[i]);
        hb_fmt(&b, ": %llu", (unsigned long long)i);
        first = 0;
    }
    hb_str(&b, "}, \"merges\": [");
    const char **mt = NULL;
    uint64_t *ml = NULL;
    if (merges) infer__str_array(merges, &mt, &ml, &err);
    for (uint64_t i = 0; merges && i < merges->arr_n; i++) {
        hb_str(&b, i ? ", " : "");
        hb_json(&b, mt[i], ml[i]);
    }
    hb_str(&b, "]}}\n");
    CHECK(hb_save(&b, dir, "tokenizer.json"));
    /* tokenizer_config.json: the special tokens by text, and the add_* flags */
    hb_str(&c, "{\"tokenizer_class\": \"x\"");
    static const char *const sp[][2] = { { "bos", "bos" }, { "eos", "eos" }, { "unknown", "unk" }, { "padding", "pad" } };
    for (int i = 0; i < 4; i++) {
        char k[64];
        int64_t v;
        snprintf(k, sizeof k, "tokenizer.ggml.%s_token_id", sp[i][0]);
        if (infer__get_int(g, k, &v, NULL) != 1) continue;
        hb_fmt(&c, ", \"%s_token\": ", sp[i][1]);
        hb_json(&c, txt[v], len[v]);
    }
    const infer_gguf_kv *ab = infer_gguf_find(g, "tokenizer.ggml.add_bos_token"), *ae = infer_gguf_find(g, "tokenizer.ggml.add_eos_token");
    if (ab) hb_fmt(&c, ", \"add_bos_token\": %s", ab->v.u ? "true" : "false");
    if (ae) hb_fmt(&c, ", \"add_eos_token\": %s", ae->v.u ? "true" : "false");
    hb_str(&c, "}\n");
    CHECK(hb_save(&c, dir, "tokenizer_config.json"));
    free(txt); free(len); free(mt); free(ml); free(b.p); free(c.p); free(ty);
}

static void hft_rmdir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("    could not remove %s\n", dir);
}

/* writes the folder; shards > 1 splits the tensors over model-0000i-of-0000n.safetensors */
static int hft_write_folder(hft_ctx *c, const char *dir, const char *hf_arch, const char *manifest, int shards, int text_config) {
    char cmd[600];
    hft_rmdir(dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0) return 0;
    for (int64_t i = 0; i < c->g->n_tensors; i++) hft_tensor(c, &c->g->tensors[i]);
    if (text_config) {   /* a multimodal wrapper also carries a vision tower the loader must skip */
        const int64_t sh[2] = { 4, 8 };
        hft_add(c, "model.visual.patch_embed.proj.weight", "F32", 2, sh, 128);
    }
    buf_t b = { 0 };
    hft_config(&b, c, hf_arch, manifest, text_config);
    int ok = hb_save(&b, dir, "config.json");
    free(b.p);
    if (shards <= 1) ok &= hft_write_st(dir, "model.safetensors", c->t, c->n);
    else {
        buf_t ix = { 0 };
        hb_str(&ix, "{\"metadata\": {\"total_size\": 0}, \"weight_map\": {");
        for (int s = 0, at = 0; s < shards; s++) {
            char f[64];
            const int end = (int)((int64_t)c->n * (s + 1) / shards);
            snprintf(f, sizeof f, "model-%05d-of-%05d.safetensors", s + 1, shards);
            ok &= hft_write_st(dir, f, c->t + at, end - at);
            for (int i = at; i < end; i++) hb_fmt(&ix, "%s\"%s\": \"%s\"", i ? ", " : "", c->t[i].name, f);
            at = end;
        }
        hb_str(&ix, "}}\n");
        ok &= hb_save(&ix, dir, "model.safetensors.index.json");
        free(ix.p);
    }
    hft_tokenizer(c->g, dir);
    return ok;
}

/* every metadata entry of a against b, except the free-text general.* ones */
static int hft_same_kv(const infer_gguf *a, const infer_gguf *b, int verbose) {
    int bad = 0;
    for (int64_t i = 0; i < a->n_kv; i++) {
        const infer_gguf_kv *x = &a->kv[i];
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)x->key.len, x->key.ptr);
        if (!strcmp(key, "general.name") || !strcmp(key, "general.size_label")) continue;
        const infer_gguf_kv *y = infer_gguf_find(b, key);
        int same = y && y->type == x->type;
        if (same && x->type == INFER_GGUF_STRING) same = x->v.s.len == y->v.s.len && !memcmp(x->v.s.ptr, y->v.s.ptr, x->v.s.len);
        else if (same && x->type == INFER_GGUF_ARRAY) same = x->arr_type == y->arr_type && x->arr_n == y->arr_n && infer__gguf_arr_bytes(x) == infer__gguf_arr_bytes(y) &&
                                                             !memcmp(x->arr_data, y->arr_data, infer__gguf_arr_bytes(x));
        else if (same && infer__kv_is_int(x)) same = infer__kv_int(x) == infer__kv_int(y);
        else if (same) same = (float)x->v.f == (float)y->v.f || (isnan(x->v.f) && isnan(y->v.f));
        if (!same && verbose && bad < 5) printf("    metadata '%s' differs or is missing\n", key);
        bad += !same;
    }
    return bad;
}

/* a golden GGUF and the Hugging Face folder written from it */
typedef struct { uint8_t *file; size_t size; infer_gguf g; hft_ctx c; char arch[32]; char dir[256]; } hft_golden;

static void hft_close(hft_golden *x) {
    for (int i = 0; i < x->c.n; i++) free(x->c.t[i].data);
    free(x->c.t);
    infer_gguf_free(&x->g);
    free(x->file);
    hft_rmdir(x->dir);
}

static int hft_open(hft_golden *x, const char *family, const char *hf_arch, int shards, int text_config, int fused_experts) {
    char gpath[256], man[256];
    infer_error err;
    memset(x, 0, sizeof *x);
    snprintf(gpath, sizeof gpath, SHARED "/golden/%s/model-F32.gguf", family);
    snprintf(man, sizeof man, SHARED "/golden/%s/manifest.json", family);
    snprintf(x->dir, sizeof x->dir, "%s", tmp_path(family));
    if (!(x->file = slurp(gpath, &x->size))) return 0;
    if (infer_gguf_parse(&x->g, x->file, x->size, &err) != INFER_OK) { free(x->file); x->file = NULL; return 0; }
    hft_ctx *c = &x->c;
    const infer_gguf *g = &x->g;
    infer_str arch;
    infer__get_str(g, "general.architecture", &arch, NULL);
    snprintf(x->arch, sizeof x->arch, "%.*s", (int)arch.len, arch.ptr);
    c->g = g;
    c->arch = x->arch;
    c->llama = !strcmp(x->arch, "llama");
    c->hybrid = !strncmp(x->arch, "qwen35", 6);
    c->bitnet = !strcmp(x->arch, "bitnet");
    c->fused_experts = fused_experts;
    c->prefix = text_config ? "model.language_model." : "model.";
    c->n_head = hft_int(g, x->arch, "attention.head_count", 0);
    c->n_head_kv = hft_int(g, x->arch, "attention.head_count_kv", c->n_head);
    c->n_main = hft_int(g, x->arch, "block_count", 0) - hft_int(g, x->arch, "nextn_predict_layers", 0);
    c->nk = hft_int(g, x->arch, "ssm.group_count", 1);
    c->nv = hft_int(g, x->arch, "ssm.time_step_rank", 1);
    c->dk = hft_int(g, x->arch, "ssm.state_size", 0);
    c->dv = hft_int(g, x->arch, "ssm.inner_size", 0) / c->nv;
    return hft_write_folder(c, x->dir, hf_arch, man, shards, text_config);
}

/* the tensors of h against the golden's: names, types, shapes, bytes (-0 and values with
 * no exact preimage aside, see above); returns how many only match to 1 ulp, or -1 */
static int hft_compare_tensors(const hft_golden *x, const infer_gguf *h, const char *what) {
    int same = 0, close = 0;
    for (int64_t i = 0; i < x->g.n_tensors; i++) {
        const infer_tensor *a = &x->g.tensors[i], *b = infer_gguf_tensor(h, a->name);
        if (!b) { printf("    %s: tensor %s missing\n", what, a->name); continue; }
        const int shape = a->type == b->type && a->n_dims == b->n_dims && !memcmp(a->ne, b->ne, sizeof a->ne) && a->nbytes == b->nbytes;
        if (shape && !memcmp(a->data, b->data, a->nbytes)) { same++; continue; }
        const float *fa = (const float *)a->data, *fb = (const float *)b->data;
        int eq = shape && a->type == INFER_TYPE_F32, ulp = eq;
        for (size_t k = 0; eq && k < a->nbytes / 4; k++) eq &= fa[k] == fb[k];     /* -0 == +0 */
        for (size_t k = 0; ulp && k < a->nbytes / 4; k++) ulp &= fabsf(fa[k] - fb[k]) <= fabsf(fa[k]) * 2e-7f;
        if (eq && x->c.bitnet) { same++; continue; }                             /* a ternary code has no -0 */
        if (ulp && (x->c.bitnet || strstr(a->name, "ssm_a"))) { close++; continue; }
        printf("    %s: tensor %s differs (type %s/%s, ne[0] %lld/%lld)\n", what, a->name, infer_type_name(a->type), infer_type_name(b->type), (long long)a->ne[0], (long long)b->ne[0]);
    }
    CHECK_MSG(same + close == x->g.n_tensors && h->n_tensors == x->g.n_tensors, "%s: %d + %d (within 1 ulp) of %lld tensors match; got %lld", what, same, close,
              (long long)x->g.n_tensors, (long long)h->n_tensors);
    /* 1-ulp tensors only where -exp(A_log) or 1/weight_scale cannot hit the value exactly */
    CHECK_MSG(close <= x->c.n_inexact, "%s: %d inexact tensors but %d values without an exact preimage", what, close, x->c.n_inexact);
    return same + close == x->g.n_tensors ? close : -1;
}

/* the whole round trip for one golden family */
static void hf_roundtrip(const char *family, const char *hf_arch, int shards, int text_config, int fused_experts) {
    hft_golden x;
    infer_gguf h;
    infer_error err;
    char out[300], gd[256];
    if (!hft_open(&x, family, hf_arch, shards, text_config, fused_experts)) {
        if (!x.file) SKIP(SHARED "/golden/%s not found", family);
        CHECK_MSG(0, "%s: could not write the folder", family);
        hft_close(&x);
        return;
    }
    snprintf(out, sizeof out, "%s.gguf", x.dir);
    snprintf(gd, sizeof gd, SHARED "/golden/%s", family);
    if (infer_hf_load(&h, x.dir, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", family, err.msg); hft_close(&x); return; }
    const int close = hft_compare_tensors(&x, &h, family);
    CHECK_MSG(hft_same_kv(&x.g, &h, 1) == 0 && hft_same_kv(&h, &x.g, 1) == 0, "%s: metadata differs", family);
    /* through a GGUF file: the same logits as the original */
    CHECK(infer_gguf_write(out, h.kv, h.n_kv, h.tensors, h.n_tensors, 32, &err) == INFER_OK);
    infer_gguf_free(&h);
    infer_model *m;
    if (infer_model_load_memory(&m, x.file, x.size, NULL, &err) != INFER_OK) printf("  (%s: logits not compared: %s)\n", family, err.msg);
    else {
        infer_model_free(m);
        int va = 0, vb = 0;
        char gpath[300];
        snprintf(gpath, sizeof gpath, "%s/model-F32.gguf", gd);
        int32_t ids[12];                       /* the first 12 ids of the short prompt, exact maths */
        const int n = read_prompt(gd, "short", ids, 12);
        const run_opts o = { .precise = 1, .threads = 2, .n_ctx = 64 };
        float *la = n ? file_logits(gpath, ids, n, o, &va) : NULL, *lb = n ? file_logits(out, ids, n, o, &vb) : NULL;
        double mx = la && lb && va == vb ? 0 : INFINITY;
        for (size_t k = 0; la && lb && va == vb && k < (size_t)va * 12; k++) mx = fmax(mx, fabs((double)la[k] - lb[k]));
        /* bit-identical tensors give bit-identical logits; a 1-ulp ssm_a a tiny difference */
        CHECK_MSG(close == 0 ? mx == 0 : mx <= 1e-4, "%s: logits from the folder differ by %g", family, mx);
        free(la); free(lb);
    }
    hft_close(&x);
    remove(out);
}

static void test_hf_roundtrip_llama(void) { hf_roundtrip("llama", "LlamaForCausalLM", 1, 0, 0); }
static void test_hf_roundtrip_llama3_ropescale(void) { hf_roundtrip("llama3_ropescale", "LlamaForCausalLM", 1, 0, 0); }
static void test_hf_roundtrip_qwen3(void) { hf_roundtrip("qwen3", "Qwen3ForCausalLM", 2, 0, 0); }
static void test_hf_roundtrip_qwen3moe(void) { hf_roundtrip("qwen3moe", "Qwen3MoeForCausalLM", 1, 0, 0); }
static void test_hf_roundtrip_qwen35(void) { hf_roundtrip("qwen35", "Qwen3_5ForCausalLM", 3, 0, 0); }
static void test_hf_roundtrip_qwen35moe(void) { hf_roundtrip("qwen35moe", "Qwen3_5MoeForConditionalGeneration", 1, 1, 1); }
static void test_hf_roundtrip_bitnet(void) {
    hf_roundtrip("bitnet", "BitNetForCausalLM", 1, 0, 0);
    /* with ReLU^2 it is BitNet's own GGUF architecture, "bitnet-b1.58" */
    hft_golden x;
    infer_gguf g;
    infer_error err;
    char path[300];
    if (!hft_open(&x, "bitnet", "BitNetForCausalLM", 1, 0, 0)) { hft_close(&x); return; }
    snprintf(path, sizeof path, "%s/config.json", x.dir);
    char *cfg = slurp(path, NULL);
    buf_t b = { 0 };
    hb_replace(&b, cfg, "\"silu\"", "\"relu2\"");
    CHECK(hb_save(&b, x.dir, "config.json"));
    infer_str a;
    if (infer_hf_load(&g, x.dir, &err) != INFER_OK) CHECK_MSG(0, "%s", err.msg);
    else {
        CHECK(infer__get_str(&g, "general.architecture", &a, NULL) == 1 && infer__str_eq(a, "bitnet-b1.58"));
        CHECK(infer_gguf_find(&g, "bitnet-b1.58.block_count") && !infer_gguf_find(&g, "bitnet.block_count"));
        infer_gguf_free(&g);
    }
    free(b.p); free(cfg);
    hft_close(&x);
}

/* dtypes and transforms on a hand-made llama folder:
 * BF16 and F16 weights stay as they are (mapped, not copied) except the norms, which become
 * F32; q is permuted in its own dtype; FP8 with block scales becomes BF16. */
static float st_bf16(uint16_t u) { return infer__bf16_to_fp32(u); }

static void test_hf_dtypes(void) {
    const char *dir = tmp_path("infer_hf_dtypes");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", dir, dir);
    CHECK(system(cmd) == 0);
    enum { E = 64, H = 4, KV = 2, HD = 16, F = 128, V = 64 };
    hft_ctx c;
    memset(&c, 0, sizeof c);
    infer__rng rng;
    infer__rng_seed(&rng, 5);
    const int64_t s_emb[2] = { V, E }, s_norm[1] = { E }, s_q[2] = { H * HD, E }, s_k[2] = { KV * HD, E }, s_o[2] = { E, H * HD };
    const int64_t s_up[2] = { F, E }, s_down[2] = { E, F }, s_sc[2] = { 1, 1 };
    hft_t *t[12];
    t[0] = hft_add(&c, "model.embed_tokens.weight", "BF16", 2, s_emb, V * E * 2);
    t[1] = hft_add(&c, "model.layers.0.input_layernorm.weight", "BF16", 1, s_norm, E * 2);
    t[2] = hft_add(&c, "model.layers.0.self_attn.q_proj.weight", "F16", 2, s_q, H * HD * E * 2);
    t[3] = hft_add(&c, "model.layers.0.self_attn.k_proj.weight", "BF16", 2, s_k, KV * HD * E * 2);
    t[4] = hft_add(&c, "model.layers.0.self_attn.v_proj.weight", "F8_E4M3", 2, s_k, KV * HD * E);
    t[5] = hft_add(&c, "model.layers.0.self_attn.v_proj.weight_scale_inv", "F32", 2, s_sc, 4);
    const int64_t one = 1;   /* a skipped 2-byte tensor: the F32 o_proj after it is misaligned in the file */
    hft_add(&c, "model.layers.0.self_attn.rotary_emb.inv_freq", "BF16", 1, &one, 2);
    t[6] = hft_add(&c, "model.layers.0.self_attn.o_proj.weight", "F32", 2, s_o, E * H * HD * 4);
    t[7] = hft_add(&c, "model.layers.0.post_attention_layernorm.weight", "F32", 1, s_norm, E * 4);
    t[8] = hft_add(&c, "model.layers.0.mlp.gate_proj.weight", "BF16", 2, s_up, F * E * 2);
    t[9] = hft_add(&c, "model.layers.0.mlp.up_proj.weight", "BF16", 2, s_up, F * E * 2);
    t[10] = hft_add(&c, "model.layers.0.mlp.down_proj.weight", "BF16", 2, s_down, E * F * 2);
    t[11] = hft_add(&c, "model.norm.weight", "F16", 1, s_norm, E * 2);
    for (int i = 0; i < 12; i++) {
        const int n = (int)(t[i]->nbytes / (size_t)(i == 4 ? 1 : !strcmp(t[i]->dtype, "F32") ? 4 : 2));
        for (int k = 0; k < n; k++) {
            const float v = (float)(infer__rng_uniform(&rng) - 0.5) * (strstr(t[i]->name, "norm") ? 0.2f : 0.5f) + (strstr(t[i]->name, "norm") ? 1.0f : 0.0f);
            if (i == 4) t[i]->data[k] = (uint8_t)(infer__rng_next(&rng) & 0x77);   /* finite E4M3 codes */
            else if (!strcmp(t[i]->dtype, "F32")) memcpy(t[i]->data + 4 * k, &v, 4);
            else { uint16_t u = !strcmp(t[i]->dtype, "BF16") ? infer__fp32_to_bf16(v) : infer__fp32_to_fp16(v); memcpy(t[i]->data + 2 * k, &u, 2); }
        }
    }
    const float vscale = 0.25f;
    memcpy(t[5]->data, &vscale, 4);
    CHECK(hft_write_st(dir, "model.safetensors", c.t, c.n));
    buf_t cfg = { 0 };
    hb_fmt(&cfg, "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": %d, \"num_hidden_layers\": 1, \"num_attention_heads\": %d, "
                 "\"num_key_value_heads\": %d, \"intermediate_size\": %d, \"vocab_size\": %d, \"max_position_embeddings\": 256, \"rms_norm_eps\": 1e-5, "
                 "\"rope_theta\": 10000.0, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}, "
                 "\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]}}", E, H, KV, F, V);
    CHECK(hb_save(&cfg, dir, "config.json"));
    free(cfg.p);
    infer_gguf g;
    infer_error err;
    if (infer_hf_load(&g, dir, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); goto done; }
    const infer__hf_owner *own = (const infer__hf_owner *)g.owner;
    const uint8_t *map = own->maps[0].addr, *map_end = map + own->maps[0].size;
    const infer_tensor *emb = infer_gguf_tensor(&g, "token_embd.weight"), *an = infer_gguf_tensor(&g, "blk.0.attn_norm.weight");
    const infer_tensor *q = infer_gguf_tensor(&g, "blk.0.attn_q.weight"), *v = infer_gguf_tensor(&g, "blk.0.attn_v.weight");
    const infer_tensor *on = infer_gguf_tensor(&g, "output_norm.weight"), *up = infer_gguf_tensor(&g, "blk.0.ffn_up.weight");
    CHECK(emb && emb->type == INFER_TYPE_BF16 && (const uint8_t *)emb->data >= map && (const uint8_t *)emb->data < map_end);   /* mapped, not copied */
    CHECK(up && up->type == INFER_TYPE_BF16 && (const uint8_t *)up->data >= map && (const uint8_t *)up->data < map_end);
    CHECK(an && an->type == INFER_TYPE_F32 && ((const float *)an->data)[3] == st_bf16(((const uint16_t *)(const void *)t[1]->data)[3]));
    CHECK(on && on->type == INFER_TYPE_F32 && ((const float *)on->data)[7] == infer__fp16_to_fp32(((const uint16_t *)(const void *)t[11]->data)[7]));
    /* q: F16 kept, rows of head 1 moved: GGUF row 2i + j <- HF row j*HD/2 + i */
    int perm_ok = q && q->type == INFER_TYPE_F16 && q->ne[0] == E && q->ne[1] == H * HD;
    for (int i = 0; perm_ok && i < HD / 2; i++)
        for (int j = 0; j < 2; j++)
            perm_ok &= !memcmp((const uint8_t *)q->data + (size_t)(HD + 2 * i + j) * E * 2, t[2]->data + (size_t)(HD + j * HD / 2 + i) * E * 2, E * 2);
    CHECK(perm_ok);
    /* v: FP8 x block scale -> BF16 */
    int v_ok = v && v->type == INFER_TYPE_BF16;
    for (int k = 0; v_ok && k < KV * HD * E; k++)
        v_ok &= ((const uint16_t *)v->data)[k] == infer__fp32_to_bf16(infer__e4m3_to_f32(t[4]->data[k]) * vscale);
    CHECK(v_ok);
    const infer_tensor *o = infer_gguf_tensor(&g, "blk.0.attn_output.weight");   /* copied to an aligned place */
    CHECK(o && o->type == INFER_TYPE_F32 && (uintptr_t)o->data % 4 == 0 && !memcmp(o->data, t[6]->data, t[6]->nbytes));
    int64_t ft = -1;
    CHECK(infer__get_int(&g, "general.file_type", &ft, NULL) == 1 && ft == 32);
    infer_str rs;
    CHECK(infer__get_str(&g, "llama.rope.scaling.type", &rs, NULL) == 1 && infer__str_eq(rs, "linear"));
    CHECK(!infer_gguf_find(&g, "tokenizer.ggml.tokens"));   /* no tokenizer.json: no vocabulary */
    /* the GGUF it writes runs */
    CHECK(infer_gguf_write(tmp_path("infer_hf_dtypes.gguf"), g.kv, g.n_kv, g.tensors, g.n_tensors, 32, &err) == INFER_OK);
    infer_gguf_free(&g);
    infer_model *m;
    infer_session *s;
    float logits[3 * V];
    int32_t ids[3] = { 1, 7, 42 };
    if (infer_model_load(&m, tmp_path("infer_hf_dtypes.gguf"), NULL, &err) != INFER_OK) CHECK_MSG(0, "%s", err.msg);
    else {
        CHECK(infer_session_create(&s, m, NULL, &err) == INFER_OK && infer_eval(s, ids, 3, logits, 1, &err) == INFER_OK);
        int finite = 1;
        for (int k = 0; k < 3 * V; k++) finite &= isfinite(logits[k]);
        CHECK(finite);
        infer_session_free(s);
        infer_model_free(m);
    }
    remove(tmp_path("infer_hf_dtypes.gguf"));
    if (file_exists("./infer")) {              /* the folder has no tokenizer.json: a prompt needs one, and the error says so */
        char out[1024];
        snprintf(cmd, sizeof cmd, "./infer -m %s -p hi -n 1 2>&1", dir);
        CHECK_MSG(run_cmd(cmd, out, sizeof out) == 1 && strstr(out, "tokenizer.json"), "%s", out);
    }
done:
    for (int i = 0; i < c.n; i++) free(c.t[i].data);
    free(c.t);
    hft_rmdir(dir);
}

/* ---- >>hf-tokenizer: tokenizer.json files as vocabularies ---- */
/* tokenizer.json folders (Hugging Face) loaded the way users load them -- infer_model_load
 * on the folder, vocabulary only, through >>hf-tokenizer's converter -- against the llama-bpe,
 * qwen2 and qwen35 golden vectors, with the pre-tokenizer the converter recognised checked by
 * name. Qwen 3.5's tokenizer.json differs from Qwen 3's only in its Split regex (letters and
 * marks together): the test writes that file from Qwen 3's, so recognising it is tested too. */
static void hf_vectors(const char *dir, const char *expect_pre, const char *vectors) {
    infer_model *m;
    infer_error err;
    infer_model_params mp = { .vocab_only = 1 };
    if (infer_model_load(&m, dir, &mp, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", dir, err.msg); return; }
    const infer_gguf_kv *pre = infer_gguf_find(infer_model_gguf(m), "tokenizer.ggml.pre");
    const int is_str = pre && pre->type == INFER_GGUF_STRING;
    CHECK_MSG(is_str && pre->v.s.len == strlen(expect_pre) && !memcmp(pre->v.s.ptr, expect_pre, pre->v.s.len), "%s: pre-tokenizer recognised as %.*s, expected %s",
              dir, is_str ? (int)pre->v.s.len : 6, is_str ? pre->v.s.ptr : "(none)", expect_pre);
    if (infer_model_tokenizer(m)) check_vocab_vectors(vectors, infer_model_tokenizer(m));
    else CHECK_MSG(0, "%s: no tokenizer", dir);
    infer_model_free(m);
}
/* s with every `from` replaced by `to` (one at least), or NULL */
static char *replace_all(const char *s, size_t n, const char *from, const char *to, size_t *out_n) {
    const size_t fl = strlen(from), tl = strlen(to);
    size_t k = 0;
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), from, fl)); p += fl) k++;
    if (!k) return NULL;
    char *o = malloc(n + k * tl + 1), *w = o;
    for (const char *p = s, *q; p < s + n; p = q + fl) {
        q = memmem(p, n - (size_t)(p - s), from, fl);
        if (!q) { memcpy(w, p, n - (size_t)(p - s)); w += n - (size_t)(p - s); break; }
        memcpy(w, p, (size_t)(q - p)); w += q - p;
        memcpy(w, to, tl); w += tl;
    }
    *out_n = (size_t)(w - o);
    return o;
}
static void test_hf_tokenizer_vectors(void) {
    if (!file_exists(SHARED "/tokenizers/qwen3/tokenizer.json")) SKIP("../shared/tokenizers not found");
    hf_vectors(SHARED "/tokenizers/llama3", "llama-bpe", "llama-bpe");
    hf_vectors(SHARED "/tokenizers/qwen3", "qwen2", "qwen2");
    /* Qwen 3.5: \p{L}+ -> [\p{L}\p{M}]+ and [^\s\p{L}\p{N}]+ -> [^\s\p{L}\p{M}\p{N}]+ (JSON-escaped) */
    size_t n, n1, n2;
    char *js = slurp(SHARED "/tokenizers/qwen3/tokenizer.json", &n);
    char *j1 = js ? replace_all(js, n, "]?\\\\p{L}+|", "]?[\\\\p{L}\\\\p{M}]+|", &n1) : NULL;
    char *j2 = j1 ? replace_all(j1, n1, "[^\\\\s\\\\p{L}\\\\p{N}]+", "[^\\\\s\\\\p{L}\\\\p{M}\\\\p{N}]+", &n2) : NULL;
    CHECK_MSG(j2 != NULL, "Qwen 3's tokenizer.json has not the expected Split regex");
    if (j2) {
        char path[512];
        size_t cn;
        char *cfg = slurp(SHARED "/tokenizers/qwen3/tokenizer_config.json", &cn);
        CHECK(cfg != NULL);
        snprintf(path, sizeof path, "%s/tokenizer.json", tmp_path("qwen35-tok"));
        mkdir(tmp_path("qwen35-tok"), 0755);
        write_file(path, j2, n2);
        snprintf(path, sizeof path, "%s/tokenizer_config.json", tmp_path("qwen35-tok"));
        if (cfg) write_file(path, cfg, cn);
        hf_vectors(tmp_path("qwen35-tok"), "qwen35", "qwen35");
        free(cfg);
    }
    free(js); free(j1); free(j2);
}

/* vocabularies from real tokenizer.json files */

/* tokenizer.json -> vocab-only GGUF file -> loaded tokenizer; NULL (and a message) on failure */
static infer_model *hf_vocab_model(const char *json, const char *gguf_path, infer_gguf *g) {
    infer_error err;
    infer_model *m = NULL;
    if (infer_hf_vocab(g, json, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", json, err.msg); return NULL; }
    CHECK(infer_gguf_write(gguf_path, g->kv, g->n_kv, NULL, 0, 32, &err) == INFER_OK);
    infer_model_params mp = { .vocab_only = 1 };
    if (infer_model_load(&m, gguf_path, &mp, &err) != INFER_OK) CHECK_MSG(0, "%s: %s", gguf_path, err.msg);
    return m;
}

static int64_t hf_key_int(const infer_gguf *g, const char *key) {
    int64_t v = -1;
    infer__get_int(g, key, &v, NULL);
    return v;
}

static void test_hf_tokenizer_vocab(void) {
    if (!file_exists(SHARED "/tokenizers/llama3/tokenizer.json")) SKIP(SHARED "/tokenizers not found");
    infer_gguf g;
    infer_str s;
    /* Llama 3: byte-level BPE, llama-bpe pre-tokenizer */
    infer_model *m = hf_vocab_model(SHARED "/tokenizers/llama3/tokenizer.json", tmp_path("infer_vocab_llama3.gguf"), &g);
    if (m) {
        CHECK(infer__get_str(&g, "tokenizer.ggml.pre", &s, NULL) == 1 && infer__str_eq(s, "llama-bpe"));
        CHECK(infer_gguf_find(&g, "tokenizer.ggml.tokens")->arr_n == 128256 && infer_gguf_find(&g, "tokenizer.ggml.merges")->arr_n == 280147);
        CHECK(hf_key_int(&g, "tokenizer.ggml.bos_token_id") == 128000 && hf_key_int(&g, "tokenizer.ggml.eos_token_id") == 128001);
        check_vocab_vectors("llama-bpe", infer_model_tokenizer(m));
        infer_model_free(m);
        infer_gguf_free(&g);
    }
    /* Qwen 3: qwen2 pre-tokenizer, merges as ["a", "b"] pairs */
    m = hf_vocab_model(SHARED "/tokenizers/qwen3/tokenizer.json", tmp_path("infer_vocab_qwen3.gguf"), &g);
    if (m) {
        CHECK(infer__get_str(&g, "tokenizer.ggml.pre", &s, NULL) == 1 && infer__str_eq(s, "qwen2"));
        CHECK(hf_key_int(&g, "tokenizer.ggml.eos_token_id") == 151645 && hf_key_int(&g, "tokenizer.ggml.padding_token_id") == 151643);
        CHECK(hf_key_int(&g, "tokenizer.ggml.bos_token_id") == -1);
        const infer_gguf_kv *ab = infer_gguf_find(&g, "tokenizer.ggml.add_bos_token");
        CHECK(ab && ab->type == INFER_GGUF_BOOL && ab->v.u == 0);
        CHECK(infer_gguf_find(&g, "tokenizer.chat_template") != NULL);
        const int32_t *ty = (const int32_t *)infer_gguf_find(&g, "tokenizer.ggml.token_type")->arr_data;
        CHECK(ty[151643] == 3 && ty[151665] == 4 && ty[100] == 1);   /* <|endoftext|> control, <tool_response> user-defined */
        check_vocab_vectors("qwen2", infer_model_tokenizer(m));
        infer_model_free(m);
        infer_gguf_free(&g);
    }
    /* SentencePiece-style (byte_fallback): types, scores in merge order, round trip of text */
    m = hf_vocab_model(SHARED "/tokenizers/llama2/tokenizer.json", tmp_path("infer_vocab_llama2.gguf"), &g);
    if (m) {
        CHECK(infer__get_str(&g, "tokenizer.ggml.model", &s, NULL) == 1 && infer__str_eq(s, "llama"));
        const int32_t *ty = (const int32_t *)infer_gguf_find(&g, "tokenizer.ggml.token_type")->arr_data;
        const float *sc = (const float *)infer_gguf_find(&g, "tokenizer.ggml.scores")->arr_data;
        CHECK(ty[0] == 2 && ty[1] == 3 && ty[2] == 3 && ty[3] == 6 && ty[258] == 6 && ty[300] == 1);
        CHECK(sc[0] == 0 && sc[3] == 0 && sc[261] == 0.0f && sc[262] == -1.0f && sc[259] < -50000);   /* "▁t" is merge 0, "▁▁" among the last */
        CHECK(hf_key_int(&g, "tokenizer.ggml.bos_token_id") == 1 && hf_key_int(&g, "tokenizer.ggml.unknown_token_id") == 0);
        const infer_tokenizer *t = infer_model_tokenizer(m);
        const char *texts[] = { "Hello world", "The quick brown fox jumps over the lazy dog.", "  spaces\tand\nnewlines", "naïve café 東京 🙂" };
        for (int i = 0; i < 4; i++) {
            int32_t ids[128];
            char back[256];
            const int n = infer_tokenize(t, texts[i], strlen(texts[i]), 0, 0, ids, 128);
            const int k = n > 0 ? infer_detokenize(t, ids, n, 0, 0, back, sizeof back - 1) : -1;
            CHECK_MSG(n > 0 && k == (int)strlen(texts[i]) && !memcmp(back, texts[i], (size_t)k), "'%s': %d tokens, back '%.*s'", texts[i], n, k > 0 ? k : 0, back);
        }
        infer_model_free(m);
        infer_gguf_free(&g);
    }
    remove(tmp_path("infer_vocab_llama3.gguf"));
    remove(tmp_path("infer_vocab_qwen3.gguf"));
    remove(tmp_path("infer_vocab_llama2.gguf"));
}

/* ---- >>hf-folder: broken folders fail with a message ---- */

/* infer_hf_load must fail with `want` in the message */
static void hf_bad(const char *dir, const char *want, const char *what) {
    infer_gguf g;
    infer_error err;
    err.msg[0] = 0;
    const infer_status rc = infer_hf_load(&g, dir, &err);
    if (rc == INFER_OK) infer_gguf_free(&g);
    CHECK_MSG(rc != INFER_OK && strstr(err.msg, want), "%s: status %d, message '%s', expected '%s'", what, rc, err.msg, want);
}

/* write `name` in dir as `text` with one replacement, then expect failure */
static void hf_bad_text(const char *dir, const char *name, const char *text, const char *from, const char *to, const char *want) {
    buf_t b = { 0 };
    hb_replace(&b, text, from, to);
    CHECK(hb_save(&b, dir, name));
    char what[160];
    snprintf(what, sizeof what, "%s: '%s' -> '%s'", name, from, to);
    hf_bad(dir, want, what);
    free(b.p);
}

/* rewrite model.safetensors with tensor i renamed (or dtype changed), expect failure */
static void hf_bad_tensor(hft_golden *x, int i, const char *name, const char *dtype, const char *want) {
    hft_t keep = x->c.t[i];
    if (name) snprintf(x->c.t[i].name, sizeof x->c.t[i].name, "%s", name);
    if (dtype) {   /* same bytes, a 1-byte dtype: shape [nbytes] */
        x->c.t[i].dtype = dtype;
        x->c.t[i].nd = 2;
        x->c.t[i].shape[0] = 4;
        x->c.t[i].shape[1] = (int64_t)keep.nbytes / 4;
    }
    CHECK(hft_write_st(x->dir, "model.safetensors", x->c.t, x->c.n));
    hf_bad(x->dir, want, name ? name : dtype);
    x->c.t[i] = keep;
}

static void test_hf_folder_errors(void) {
    hft_golden x;
    char path[512];
    if (!hft_open(&x, "llama", "LlamaForCausalLM", 1, 0, 0)) {
        if (!x.file) SKIP(SHARED "/golden/llama not found");
        CHECK(0);
        hft_close(&x);
        return;
    }
    /* config.json */
    char *cfg = NULL, *tok = NULL;
    snprintf(path, sizeof path, "%s/config.json", x.dir);
    cfg = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/tokenizer.json", x.dir);
    tok = slurp(path, NULL);
    CHECK(cfg && tok);
    if (!cfg || !tok) goto done;
    hf_bad_text(x.dir, "config.json", cfg, "{", "{[", "config.json: json");
    hf_bad_text(x.dir, "config.json", cfg, "LlamaForCausalLM", "FooForCausalLM", "not supported");
    hf_bad_text(x.dir, "config.json", cfg, "\"hidden_size\"", "\"hidden_sizes\"", "missing 'hidden_size'");
    hf_bad_text(x.dir, "config.json", cfg, "\"hidden_size\": 256", "\"hidden_size\": \"256\"", "must be an integer");
    hf_bad_text(x.dir, "config.json", cfg, "\"num_attention_heads\": 8", "\"num_attention_heads\": 7", "heads of even size");
    hf_bad_text(x.dir, "config.json", cfg, "\"num_hidden_layers\": 3", "\"num_hidden_layers\": 2", "bad layer index");
    hf_bad_text(x.dir, "config.json", cfg, "\"num_hidden_layers\": 3", "\"num_hidden_layers\": -3", "must be an integer");
    buf_t b = { 0 };
    hb_str(&b, cfg);
    CHECK(hb_save(&b, x.dir, "config.json"));
    free(b.p);
    /* tokenizer.json */
    hf_bad_text(x.dir, "tokenizer.json", tok, "\"vocab\": {", "\"vocab\": [", "tokenizer.json");
    hf_bad_text(x.dir, "tokenizer.json", tok, "\\\\p{N}{1,3}", "\\\\p{N}{1,4}", "unrecognized pre_tokenizer");
    hf_bad_text(x.dir, "tokenizer.json", tok, "\"type\": \"BPE\"", "\"type\": \"Unigram\"", "not supported");
    hf_bad_text(x.dir, "tokenizer.json", tok, ": 0,", ": -1,", "bad id");
    hf_bad_text(x.dir, "tokenizer.json", tok, "\"merges\": [", "\"merges\": [7, ", "merge 0");
    hf_bad_text(x.dir, "tokenizer.json", tok, "\"version\"", "\"version\" \"", "tokenizer.json: json");
    b.p = NULL; b.n = b.cap = 0;
    hb_str(&b, tok);
    CHECK(hb_save(&b, x.dir, "tokenizer.json"));
    free(b.p);
    /* tensors */
    hf_bad_tensor(&x, 3, "model.layers.0.self_attn.foo.weight", NULL, "has no GGUF name");
    hf_bad_tensor(&x, 3, "model.layers.9.input_layernorm.weight", NULL, "bad layer index");
    hf_bad_tensor(&x, 3, "model.layers.x.input_layernorm.weight", NULL, "bad layer index");
    hf_bad_tensor(&x, 3, "model.layers.0.mlp.up_proj.weight_scale", NULL, "has no use");
    hf_bad_tensor(&x, 3, "model.layers.0.mlp.experts.0.up_proj.weight", NULL, "experts in a llama model");
    hf_bad_tensor(&x, 3, NULL, "U8", "dtype U8 is not supported");
    hf_bad_tensor(&x, 3, NULL, "I8", "dtype I8 is not supported");
    hf_bad_tensor(&x, 3, NULL, "F8_E4M3", "weight_scale_inv");
    CHECK(hft_write_st(x.dir, "model.safetensors", x.c.t, x.c.n));
    snprintf(path, sizeof path, "%s/model.safetensors", x.dir);
    FILE *f = fopen(path, "r+b");
    CHECK(f && ftruncate(fileno(f), 5000) == 0);
    if (f) fclose(f);
    hf_bad(x.dir, "model.safetensors: safetensors", "truncated shard");
    remove(path);
    hf_bad(x.dir, "neither model.safetensors", "no weights");
    /* the shard index */
    CHECK(hft_write_st(x.dir, "model-00001-of-00002.safetensors", x.c.t, 10));
    CHECK(hft_write_st(x.dir, "model-00002-of-00002.safetensors", x.c.t + 10, x.c.n - 10));
    const char *ix = "{\"weight_map\": {\"model.norm.weight\": \"model-00002-of-00002.safetensors\", \"lm_head.weight\": \"model-00001-of-00002.safetensors\"}}";
    hf_bad_text(x.dir, "model.safetensors.index.json", ix, "00002-of", "00003-of", "cannot open");
    hf_bad_text(x.dir, "model.safetensors.index.json", ix, "model-00002-of-00002.safetensors", "../model-00002-of-00002.safetensors", "not a plain file name");
    hf_bad_text(x.dir, "model.safetensors.index.json", ix, "\"model-00002-of-00002", "\"model-00001-of-00002", "is not in");
    hf_bad_text(x.dir, "model.safetensors.index.json", ix, "\"weight_map\"", "\"weights\"", "no weight_map");
    hf_bad_text(x.dir, "model.safetensors.index.json", ix, "\"lm_head.weight\": \"model", "\"lm_head.weight\": 3, \"x\": \"model", "not a file name");
    CHECK(hft_write_st(x.dir, "model-00002-of-00002.safetensors", x.c.t + 9, x.c.n - 9));
    hf_bad_text(x.dir, "model.safetensors.index.json", ix, "", "", "appears in two shards");
    snprintf(path, sizeof path, "%s/config.json", x.dir);
    remove(path);
    hf_bad(x.dir, "config.json", "no config.json");
    hf_bad("/nonexistent/dir", "cannot open", "no folder");
done:
    free(cfg); free(tok);
    hft_close(&x);
    /* a mixture of experts with an expert missing */
    if (!hft_open(&x, "qwen3moe", "Qwen3MoeForCausalLM", 1, 0, 0)) { hft_close(&x); return; }
    for (int i = 0; i < x.c.n; i++)
        if (strstr(x.c.t[i].name, "layers.1.mlp.experts.5.up_proj")) {
            free(x.c.t[i].data);
            x.c.t[i] = x.c.t[--x.c.n];
            break;
        }
    CHECK(hft_write_st(x.dir, "model.safetensors", x.c.t, x.c.n));
    hf_bad(x.dir, "missing expert tensor 'model.layers.1.mlp.experts.5.up_proj.weight'", "missing expert");
    hft_close(&x);
}

/* ---- >>unicode: infer_utf8_char_len, the strict check of one character ---- */
static void test_unicode_char_len(void) {
    static const struct { const char *s; size_t n; int want; } cases[] = {
        { "a", 1, 1 }, { "\xC3\xA9", 2, 2 }, { "\xE2\x82\xAC", 3, 3 }, { "\xF0\x9F\x98\x80", 4, 4 },
        { "\xF4\x8F\xBF\xBF", 4, 4 },      /* U+10FFFF, the last */
        { "\x80", 1, 0 },                  /* a continuation byte alone */
        { "\xC0\x80", 2, 0 }, { "\xC1\xBF", 2, 0 }, { "\xE0\x80\x80", 3, 0 }, { "\xF0\x80\x80\x80", 4, 0 },   /* overlong */
        { "\xED\xA0\x80", 3, 0 }, { "\xED\xBF\xBF", 3, 0 },                                               /* surrogates */
        { "\xF4\x90\x80\x80", 4, 0 }, { "\xF5\x80\x80\x80", 4, 0 }, { "\xFF", 1, 0 },                    /* past U+10FFFF */
        { "\xE2\x82", 2, 0 }, { "\xE2\x82\xAC", 2, 0 },          /* cut short (the bytes, or n) */
        { "\xE2\x28\xA1", 3, 0 },                                /* a bad continuation */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(infer_utf8_char_len(cases[i].s, cases[i].n) == cases[i].want, "case %zu: %d, want %d", i, infer_utf8_char_len(cases[i].s, cases[i].n), cases[i].want);
}

/* ---- >>tokenizer: ../shared/vocab's vocabularies, streaming detokenization, stripping specials ---- */
static void test_tokenizer_vocab_vectors(void) {
    const char *names[] = { "llama-spm", "gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "phi-3", "mpt", "starcoder", "refact", "gpt-neox", "baichuan", "bert-bge" };
    int found = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf", names[i]);
        if (!file_exists(path)) continue;
        snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf.out", names[i]);
        if (!file_exists(path)) { printf("  (%s: no golden vectors)\n", names[i]); continue; }
        snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf", names[i]);
        found++;
        infer_model *m;
        infer_error err;
        infer_model_params mp = { .vocab_only = 1 };
        if (infer_model_load(&m, path, &mp, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", names[i], err.msg); continue; }
        CHECK(infer_model_tokenizer(m) != NULL);
        if (infer_model_tokenizer(m)) check_vocab_vectors(names[i], infer_model_tokenizer(m));
        infer_model_free(m);
    }
    if (!found) SKIP("../shared/vocab not found");
}

/* streaming detokenization: byte tokens that split a UTF-8 character come out whole */
static void test_tokenizer_detok_stream(void) {
    infer_model *m;
    infer_error err;
    infer_model_params mp = { .vocab_only = 1 };
    if (infer_model_load(&m, SHARED "/vocab/ggml-vocab-llama-spm.gguf", &mp, &err) != INFER_OK) SKIP("../shared/vocab not found");
    const infer_tokenizer *t = infer_model_tokenizer(m);
    const char *text = "Hi \xf0\x9f\xa6\x99 there";   /* a 4-byte emoji with no token of its own */
    int32_t ids[64];
    int n = infer_tokenize(t, text, strlen(text), 1, 0, ids, 64);
    CHECK(n > 4 && ids[0] == 1);
    infer_detok d;
    infer_detok_init(&d, t);
    char out[256], piece[64];
    size_t len = 0;
    int partial_seen = 0;
    for (int i = 0; i < n; i++) {
        int k = infer_detok_push(&d, ids[i], piece, sizeof piece);
        CHECK(k >= 0);
        for (int j = 0; j < k; j++) if ((unsigned char)piece[j] == 0xf0 && j + 3 >= k) partial_seen = 1;
        memcpy(out + len, piece, (size_t)k);
        len += (size_t)k;
    }
    len += (size_t)infer_detok_flush(&d, out + len, 16);
    CHECK(!partial_seen);
    CHECK(len == strlen(text) && memcmp(out, text, len) == 0);
    /* special tokens: "<s>" is BOS only when special parsing is on */
    n = infer_tokenize(t, "<s>x", 4, 0, 1, ids, 64);
    CHECK(n >= 2 && ids[0] == 1);
    n = infer_tokenize(t, "<s>x", 4, 0, 0, ids, 64);
    CHECK(n >= 2 && ids[0] != 1);
    infer_model_free(m);
}

/* special tokens that eat blanks: llama.cpp gives Phi-3's special tokens and </s> (not <s>,
 * <unk>, <|endoftext|>) the rstrip attribute, so the ids below are the reference's */
static void test_tokenizer_special_rstrip(void) {
    static const struct { const char *vocab, *text; int parse; int32_t ids[12]; int n; } cases[] = {
        { "phi-3", "<|user|>\nHello<|end|>\n<|assistant|>\n", 1, { 32010, 15043, 32007, 32001 }, 4 },
        { "phi-3", "Hi</s> there<|endoftext|> x<s> y", 1, { 6324, 2, 727, 32000, 29871, 921, 1, 29871, 343 }, 9 },
        { "phi-3", "a<|end|> \t\n b", 1, { 263, 32007, 289 }, 3 },
        /* the same text in a vocabulary whose model does not strip: the blanks stay */
        { "llama-spm", "Hi</s> there", 1, { 6324, 2, 29871, 727 }, 4 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, SHARED "/vocab/ggml-vocab-%s.gguf", cases[i].vocab);
        if (!file_exists(path)) SKIP("%s not found", path);
        infer_model *m;
        infer_error err;
        infer_model_params mp = { .vocab_only = 1 };
        if (infer_model_load(&m, path, &mp, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", path, err.msg); continue; }
        int32_t ids[64];
        int n = infer_tokenize(infer_model_tokenizer(m), cases[i].text, strlen(cases[i].text), 0, cases[i].parse, ids, 64);
        int same = n == cases[i].n;
        for (int k = 0; same && k < n; k++) same = ids[k] == cases[i].ids[k];
        CHECK_MSG(same, "case %zu: %d ids, first %d", i, n, n > 0 ? ids[0] : -1);
        infer_model_free(m);
    }
}

/* ---- >>jinja: chat templates ----
 * Every expected string below is what Python's jinja2, set up as transformers'
 * apply_chat_template sets it up (tools/chat_ref.py), renders for the same template and
 * variables. */

/* render and compare; `what` names the case in a failure */
static void chat_check(const char *tmpl, const char *vars, const char *bos, const char *eos, const char *want, const char *what) {
    char *out = NULL;
    size_t n = 0;
    infer_error err;
    if (infer_chat_render(tmpl, strlen(tmpl), vars, strlen(vars), bos, eos, &out, &n, &err) != INFER_OK) {
        CHECK_MSG(0, "%s: %s", what, err.msg);
        return;
    }
    CHECK_MSG(n == strlen(want) && !memcmp(out, want, n), "%s:\n      got  [%s]\n      want [%s]", what, out, want);
    infer_free(out);
}

static void test_jinja_language(void) {
    static const char *const cases[][3] = {
        { "{% if true %}\n  x\n{% endif %}\n  {{ 'y' }}\n{# c #}\nz\n",
          "{}",
          "  x\n  y\nz" },
        { "a  {%- if true -%}  b  {%- endif -%}  c\n{{- ' d ' -}}\n e",
          "{}",
          "abc d e" },
        { "  {%+ if true %}k{% endif +%}\nm  {# note #}\n  n",
          "{}",
          "  k\nm    n" },
        { "{% raw %}{{ not parsed }}{% endraw %}|{%- raw -%} x {%- endraw -%}|",
          "{}",
          "{{ not parsed }}|x|" },
        { "line\r\nbreaks\rand\n\n",
          "{}",
          "line\nbreaks\nand\n" },
        { "{% for m in messages %}{{ loop.index }}/{{ loop.length }}:{{ m.role }}{% if not loop.last %},{% endif %}{% endfor %}",
          "{\"messages\": [{\"role\": \"user\"}, {\"role\": \"assistant\"}, {\"role\": \"tool\"}]}",
          "1/3:user,2/3:assistant,3/3:tool" },
        { "{% for x in xs if x > 1 %}{{ loop.index0 }}{{ loop.previtem }}{{ loop.nextitem }};{% else %}none{% endfor %}|{% for x in [] %}a{% else %}empty{% endfor %}",
          "{\"xs\": [1, 2, 3]}",
          "03;12;|empty" },
        { "{% set y = 5 %}{% for x in [1,2] %}[{{ y }}]{% set y = x %}[{{ y }}]{% endfor %}{{ y }}",
          "{}",
          "[5][1][5][2]5" },
        { "{% set ns = namespace(total=0, seen=[]) %}{% for i in range(4) %}{% if i == 2 %}{% continue %}{% endif %}{% set ns.total = ns.total + i %}{% endfor %}{{ ns.total }}",
          "{}",
          "4" },
        { "{% for i in range(5) %}{{ i }}{% if i == 2 %}{% break %}{% endif %}{% else %}E{% endfor %}",
          "{}",
          "012" },
        { "{% macro tag(name, body='', attrs=none) %}<{{ name }}{% if attrs %} {{ attrs|tojson }}{% endif %}>{{ body }}</{{ name }}>{% endmacro %}{{ tag('b', 'x') }}{{ tag('i', attrs={'k': 1}) }}",
          "{}",
          "<b>x</b><i {\"k\": 1}></i>" },
        { "{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k='v') }}",
          "{}",
          "(1, 2){'k': 'v'}" },
        { "{% set s %}  body {{ 1 + 1 }}  {% endset %}[{{ s }}][{{ s|trim }}]{% filter upper %}shout{% endfilter %}",
          "{}",
          "[  body 2  ][body 2]SHOUT" },
        { "{{ 1 }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e-05 }} {{ 2.5e-4 }} {{ -0.0 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ none }} {{ true }}",
          "{}",
          "1 1.0 0.30000000000000004 1e+16 1e-05 0.00025 -0.0 3.5 3 -4 2 1024 None True" },
        { "{{ [1, 'a', none, true, 1.5, {'k': [2]}] }} {{ ('x',) }} {{ \"it's\" }} {{ [\"it's\", 'q\"', 'tab\\t'] }}",
          "{}",
          "[1, 'a', None, True, 1.5, {'k': [2]}] ('x',) it's [\"it's\", 'q\"', 'tab\\t']" },
        { "{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ d|tojson(sort_keys=true, separators=(',', ':')) }}|{{ '\303\251\\n\"'|tojson }}|{{ '\303\251'|tojson(ensure_ascii=true) }}",
          "{\"d\": {\"b\": [1, 2.5, null, true], \"a\": \"x\303\251\", \"c\": {}}}",
          "{\"b\": [1, 2.5, null, true], \"a\": \"x\303\251\", \"c\": {}}|{\n  \"b\": [\n    1,\n    2.5,\n    null,\n    true\n  ],\n  \"a\": \"x\303\251\",\n  \"c\": {}\n}|{\"a\":\"x\303\251\",\"b\":[1,2.5,null,true],\"c\":{}}|\"\303\251\\n\\\"\"|\"\\u00e9\"" },
        { "{{ '  Hello World  '|trim|lower }}|{{ 'hello world'|title }}|{{ 'hello'|capitalize }}|{{ 'abc'|upper }}|{{ 'a,b,,c'.split(',') }}|{{ '  a  b '.split() }}|{{ 'x-y-z'.rsplit('-', 1) }}",
          "{}",
          "hello world|Hello World|Hello|ABC|['a', 'b', '', 'c']|['a', 'b']|['x-y', 'z']" },
        { "{{ s.startswith('He') }}{{ s.endswith(('x', 'd')) }}{{ s.strip('Hd') }}{{ s.lstrip('H') }}{{ s.replace('l', 'L', 2) }}{{ s.find('o') }}{{ s[1:4] }}{{ s[::-1] }}{{ s[-1] }}{{ s|length }}",
          "{\"s\": \"Hello World\"}",
          "TrueTrueello Worlello WorldHeLLo World4elldlroW olleHd11" },
        { "{{ 'h\303\251llo w\303\266rld'|upper }}|{{ '\303\200\303\211\303\216'|lower }}|{{ 'h\303\251llo'[1:3] }}|{{ 'h\303\251llo'|length }}|{{ 'h\303\251llo'|reverse }}",
          "{}",
          "H\303\211LLO W\303\226RLD|\303\240\303\251\303\256|\303\251l|5|oll\303\251h" },
        { "{{ xs|length }}{{ xs|first }}{{ xs|last }}{{ xs|sort }}{{ xs|sort(reverse=true) }}{{ xs|unique|list }}{{ xs|sum }}{{ xs|max }}{{ xs|min }}{{ xs|join('-') }}{{ xs|select('odd')|list }}{{ xs|reject('odd')|list }}",
          "{\"xs\": [3, 1, 2, 3]}",
          "433[1, 2, 3, 3][3, 3, 2, 1][3, 1, 2]9313-1-2-3[3, 1, 3][2]" },
        { "{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(' ') }}|{{ ms|rejectattr('role', 'equalto', 'user')|list|length }}|{{ ms|map(attribute='role')|unique|list }}",
          "{\"ms\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"b\"}, {\"role\": \"user\", \"content\": \"c\"}]}",
          "a c|1|['user', 'assistant']" },
        { "{% for k, v in d|dictsort %}{{ k }}={{ v }};{% endfor %}{% for k, v in d.items() %}{{ k }}{% endfor %}{{ d|items|list }}{{ d.get('zz', 'dflt') }}{{ d.keys()|list }}",
          "{\"d\": {\"b\": 2, \"A\": 1, \"c\": 3}}",
          "A=1;b=2;c=3;bAc[('b', 2), ('A', 1), ('c', 3)]dflt['b', 'A', 'c']" },
        { "{{ x is defined }}{{ y is defined }}{{ y is undefined }}{{ none is none }}{{ 'a' is string }}{{ 1 is number }}{{ 1 is integer }}{{ 1.0 is float }}{{ {} is mapping }}{{ [] is iterable }}{{ 'a' is sequence }}{{ 3 is odd }}{{ 4 is even }}{{ 6 is divisibleby(3) }}{{ x is equalto 1 }}{{ true is boolean }}{{ x is not none }}",
          "{\"x\": 1}",
          "TrueFalseTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue" },
        { "{{ y|default('d') }}{{ ''|default('e', true) }}{{ 'ab' ~ 1 ~ none }}{{ 'a' in 'cat' }}{{ 2 in [1,2] }}{{ 'k' in {'k':1} }}{{ 'z' not in 'abc' }}{{ 1 < 2 < 3 }}{{ x if x else 'no' }}{{ 'yes' if y }}|",
          "{\"x\": 0}",
          "deab1NoneTrueTrueTrueTrueTrueno|" },
        { "{{ '12'|int + 1 }} {{ 'x'|int }} {{ 3.7|int }} {{ '2.5'|float }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ -3|abs }} {{ '%s=%d'|format('a', 3) }} {{ '{}-{}'.format(1, 'b') }}",
          "{}",
          "13 0 3 2.5 2.0 4.0 2.67 3 a=3 1-b" },
        { "{{ 'a<b>&'|e }} {{ ('<x>'|safe) + '<y>' }} {{ 'text'|center(10) }}| {{ 'one\\ntwo'|indent(2, true) }} {{ 'a b c'|wordcount }} {{ 'hello world'|truncate(8) }} {{ [1,2,3]|batch(2)|list }}",
          "{}",
          "a&lt;b&gt;&amp; <x>&lt;y&gt;    text   |   one\n  two 3 hello world [[1, 2], [3]]" },
        { "{{ strftime_now('%Y') is string }} {{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ dict(a=1, b=2) }}",
          "{}",
          "True [0, 1, 2] [1, 3, 5] {'a': 1, 'b': 2}" },
        { "{{ tools }} {{ documents }} {{ add_generation_prompt }} {{ bos_token }}{{ eos_token }}",
          "{}",
          "None None False <s></s>" },
        { "{%- set msgs = messages[1:] if messages[0].role == 'system' else messages -%}{%- for m in msgs -%}<{{ m.role }}>{{ m.content }}{{ '\\n' }}{%- endfor -%}{%- if add_generation_prompt %}<assistant>{% endif %}",
          "{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}], \"add_generation_prompt\": true}",
          "<user>U\n<assistant>" },
        { "{% generation %}{{ 'kept' }}{% endgeneration %}{% set x = 1 %}{% with x = 2 %}{{ x }}{% endwith %}{{ x }}",
          "{}",
          "kept21" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "case %zu", i);
        chat_check(cases[i][0], cases[i][1], "<s>", "</s>", cases[i][2], what);
    }
    /* numbers keep their JSON kind: 1 is an int, 1.0 a float */
    chat_check("{{ a }} {{ b }} {{ a is integer }} {{ b is float }} {{ c }}", "{\"a\": 1, \"b\": 1.0, \"c\": 1e2}", NULL, NULL, "1 1.0 True True 100.0", "json numbers");
    /* without bos/eos they are undefined: they print nothing */
    chat_check("[{{ bos_token }}{{ eos_token }}]{{ bos_token is defined }}", "{}", NULL, NULL, "[]False", "no special tokens");
    /* errors: what jinja2 refuses, we refuse, naming the template line */
    static const char *const bad[][3] = {
        { "a\nb\n{% if x %}\n{{ x.y.z }}\n{% endif %}", "{\"x\": {\"q\": 1}}", "line 4: 'dict object' has no attribute 'y'" },
        { "{% for %}", "{}", "line 1: expected an expression" },
        { "\n{{ 1 +* 2 }}", "{}", "line 2: expected an expression, got '*'" },
        { "{% include 'x' %}", "{}", "unsupported tag 'include'" },
        { "x\n{{ x|nosuch }}", "{}", "line 2: no filter named 'nosuch'" },
        { "{% if true %}open", "{}", "missing {% endif %}" },
        { "\n\n{{ raise_exception('bad roles') }}", "{}", "line 3: raise_exception: bad roles" },
        { "{{ 'a' + 1 }}", "{}", "can only concatenate str" },
        { "{{ messages.append(1) }}", "{\"messages\": []}", "unsafe" },
        { "{% break %}", "{}", "'break' outside a loop" },
        { "{{ x|tojson }}", "{}", "not JSON serializable" },
        { "{{ range(1000000)|length }}", "{}", "range too big" },
        { "{% macro f(a) %}{% endmacro %}{{ f(1, 2) }}", "{}", "takes not more than 1" },
        { "{{ '\\N{BULLET}' }}", "{}", "not supported" },
        { "{{ x }}", "[1, 2]", "expected a JSON object" },
        { "{{ x }}", "{\"x\": ", "json:" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = NULL;
        infer_error err;
        infer_status st = infer_chat_render(bad[i][0], strlen(bad[i][0]), bad[i][1], strlen(bad[i][1]), NULL, NULL, &out, NULL, &err);
        CHECK_MSG(st != INFER_OK && out == NULL && strstr(err.msg, bad[i][2]), "bad case %zu: got '%s', want '%s'", i, st == INFER_OK ? "(no error)" : err.msg, bad[i][2]);
        infer_free(out);
    }
    /* a template that would run (nearly) forever stops with an error: its steps or its memory run out */
    const char *forever = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    char *out = NULL;
    infer_error err;
    CHECK(infer_chat_render(forever, strlen(forever), "{}", 2, NULL, NULL, &out, NULL, &err) != INFER_OK && (strstr(err.msg, "too long") || strstr(err.msg, "MiB")));
}

/* the real templates in ../shared: Llama-3's and Qwen3's tokenizer_config.json (through the
 * Hugging Face folder, vocabulary only) and Phi-3's, inside its vocab GGUF */
static void test_jinja_shared_templates(void) {
    static const char *const llama3_cases[][2] = {
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"add_generation_prompt\": true}",
          "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" },
        { "{\"messages\": [{\"role\": \"system\", \"content\": \"You are terse.\"}, {\"role\": \"user\", \"content\": \"  What is 2+2?\\n\"}], \"add_generation_prompt\": true}",
          "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" },
        { "{\"messages\": [{\"role\": \"system\", \"content\": \"Be kind.\"}, {\"role\": \"user\", \"content\": \"Hello\"}, {\"role\": \"assistant\", \"content\": \"Hi! How can I help?\"}, {\"role\": \"user\", \"content\": \"Tell me about \\\"caf\303\251s\\\" & <tags>\"}], \"add_generation_prompt\": true}",
          "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe kind.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi! How can I help?<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nTell me about \"caf\303\251s\" & <tags><|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": \"assistant\", \"content\": \"A\"}], \"add_generation_prompt\": false}",
          "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nQ<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nA<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" },
    };
    static const char *const qwen3_cases[][2] = {
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"add_generation_prompt\": true}",
          "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n" },
        { "{\"messages\": [{\"role\": \"system\", \"content\": \"You are terse.\"}, {\"role\": \"user\", \"content\": \"  What is 2+2?\\n\"}], \"add_generation_prompt\": true}",
          "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\n  What is 2+2?\n<|im_end|>\n<|im_start|>assistant\n" },
        { "{\"messages\": [{\"role\": \"system\", \"content\": \"Be kind.\"}, {\"role\": \"user\", \"content\": \"Hello\"}, {\"role\": \"assistant\", \"content\": \"Hi! How can I help?\"}, {\"role\": \"user\", \"content\": \"Tell me about \\\"caf\303\251s\\\" & <tags>\"}], \"add_generation_prompt\": true}",
          "<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi! How can I help?<|im_end|>\n<|im_start|>user\nTell me about \"caf\303\251s\" & <tags><|im_end|>\n<|im_start|>assistant\n" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": \"assistant\", \"content\": \"A\"}], \"add_generation_prompt\": false}",
          "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nA<|im_end|>\n" },
        { "{\"messages\": [{\"role\": \"system\", \"content\": \"Use tools.\"}, {\"role\": \"user\", \"content\": \"Weather in Paris?\"}, {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}}]}, {\"role\": \"tool\", \"content\": \"{\\\"temp\\\": 21}\"}, {\"role\": \"user\", \"content\": \"Thanks\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather of a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\"}}, \"required\": [\"city\"]}}}], \"add_generation_prompt\": true}",
          "<|im_start|>system\nUse tools.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather of a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\"}}, \"required\": [\"city\"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"1+1?\"}, {\"role\": \"assistant\", \"content\": \"<think>\\nsimple\\n</think>\\n\\n2\"}, {\"role\": \"user\", \"content\": \"Sure?\"}], \"add_generation_prompt\": true, \"enable_thinking\": false}",
          "<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n<|im_start|>user\nSure?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n" },
    };
    static const char *const phi3_cases[][2] = {
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"add_generation_prompt\": true}",
          "<s><|user|>\nHi<|end|>\n<|assistant|>\n" },
        { "{\"messages\": [{\"role\": \"system\", \"content\": \"Be kind.\"}, {\"role\": \"user\", \"content\": \"Hello\"}, {\"role\": \"assistant\", \"content\": \"Hi! How can I help?\"}, {\"role\": \"user\", \"content\": \"Tell me about \\\"caf\303\251s\\\" & <tags>\"}], \"add_generation_prompt\": true}",
          "<s><|user|>\nHello<|end|>\n<|assistant|>\nHi! How can I help?<|end|>\n<|user|>\nTell me about \"caf\303\251s\" & <tags><|end|>\n<|assistant|>\n" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"Q\"}, {\"role\": \"assistant\", \"content\": \"A\"}], \"add_generation_prompt\": false}",
          "<s><|user|>\nQ<|end|>\n<|assistant|>\nA<|end|>\n" },
    };
    static const struct { const char *path, *name; const char *const (*cases)[2]; size_t n; } models[] = {
        { SHARED "/tokenizers/llama3", "llama3", llama3_cases, sizeof llama3_cases / sizeof llama3_cases[0] },
        { SHARED "/tokenizers/qwen3", "qwen3", qwen3_cases, sizeof qwen3_cases / sizeof qwen3_cases[0] },
        { SHARED "/vocab/ggml-vocab-phi-3.gguf", "phi3", phi3_cases, sizeof phi3_cases / sizeof phi3_cases[0] },
    };
    if (!file_exists(SHARED "/tokenizers/qwen3/tokenizer.json")) SKIP("../shared/tokenizers not found");
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        infer_model *m;
        infer_error err;
        infer_model_params mp = { .vocab_only = 1 };
        if (infer_model_load(&m, models[k].path, &mp, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", models[k].path, err.msg); continue; }
        CHECK(infer_model_chat_template(m, NULL, NULL) != NULL);
        for (size_t i = 0; i < models[k].n; i++) {
            char *out = NULL;
            size_t n = 0;
            const char *vars = models[k].cases[i][0], *want = models[k].cases[i][1];
            if (infer_model_chat_render(m, NULL, 0, vars, strlen(vars), &out, &n, &err) != INFER_OK) { CHECK_MSG(0, "%s case %zu: %s", models[k].name, i, err.msg); continue; }
            CHECK_MSG(n == strlen(want) && !memcmp(out, want, n), "%s case %zu:\n      got  [%s]\n      want [%s]", models[k].name, i, out, want);
            infer_free(out);
        }
        infer_model_free(m);
    }
}

/* data/chat: templates of permissively licensed models x conversations, against jinja2's
 * renderings stored beside them (an .out starting "ERROR:" means jinja2 refused it too) */
static void test_jinja_data_chat(void) {
    static const struct { const char *name, *bos, *eos; } t[] = {
        { "qwen3.5", NULL, "<|im_end|>" },
        { "mistral-nemo", "<s>", "</s>" },
        { "deepseek-r1-distill", "<\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>" },
        { "phi-3.5", "<s>", "<|endoftext|>" },
    };
    static const char *const convs[] = { "chat", "tools", "toolstr", "think" };
    int compared = 0, refused = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char path[256];
        size_t tn;
        snprintf(path, sizeof path, "data/chat/%s.jinja", t[i].name);
        char *tmpl = slurp(path, &tn);
        if (!tmpl) { CHECK_MSG(0, "cannot read %s", path); continue; }
        for (size_t c = 0; c < sizeof convs / sizeof convs[0]; c++) {
            size_t vn, wn, n;
            snprintf(path, sizeof path, "data/chat/conv-%s.json", convs[c]);
            char *vars = slurp(path, &vn), *out = NULL;
            snprintf(path, sizeof path, "data/chat/%s.%s.out", t[i].name, convs[c]);
            char *want = slurp(path, &wn);
            infer_error err;
            if (!vars || !want) { CHECK_MSG(0, "cannot read the files of %s", path); free(vars); free(want); continue; }
            infer_status st = infer_chat_render(tmpl, tn, vars, vn, t[i].bos, t[i].eos, &out, &n, &err);
            if (!strncmp(want, "ERROR:", 6)) { CHECK_MSG(st != INFER_OK, "%s: rendered, but jinja2 refuses it", path); refused++; }
            else if (st != INFER_OK) CHECK_MSG(0, "%s: %s", path, err.msg);
            else { CHECK_MSG(n == wn && !memcmp(out, want, n), "%s:\n      got  [%s]\n      want [%s]", path, out, want); compared++; }
            infer_free(out); free(vars); free(want);
        }
        free(tmpl);
    }
    CHECK(compared >= 12 && refused >= 1);
}

/* ---- >>forward, >>backends: bad input: activations that overflow ----
 * What the engine promises (README, "Bad input"): no crash, hang or read out of bounds on
 * any file or option; a clear one-line error instead. */

/* a model from `convert synth llama tiny` re-encoded as `type`, its bytes in memory */
static uint8_t *robust_model(const char *type, size_t *n) {
    char cmd[512], out[4096];
    if (!file_exists(tmp_path("infer_rb_f32.gguf")) &&
        run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_rb_f32.gguf --type f32 2>&1", out, sizeof out) != 0) return NULL;
    snprintf(cmd, sizeof cmd, "./tools/convert quantize $INFER_TMP/infer_rb_f32.gguf $INFER_TMP/infer_rb_q.gguf --type %s 2>&1", type);
    if (run_cmd(cmd, out, sizeof out) != 0) { printf("    %s", out); return NULL; }
    uint8_t *p = slurp(tmp_path("infer_rb_q.gguf"), n);
    remove(tmp_path("infer_rb_q.gguf"));
    return p;
}
/* every element of the F32 tensor `name` in the GGUF bytes p set to v */
static void robust_set(uint8_t *p, size_t n, const char *name, float v) {
    infer_gguf g;
    infer_error err;
    if (infer_gguf_parse(&g, p, n, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    const infer_tensor *t = infer_gguf_tensor(&g, name);
    CHECK(t && t->type == INFER_TYPE_F32);
    for (size_t i = 0; t && i < t->nbytes / 4; i++) memcpy(p + ((const uint8_t *)t->data - p) + 4 * i, &v, 4);
    infer_gguf_free(&g);
}
/* eval `n` tokens on a fresh session; returns the status, the message in err */
static infer_status robust_eval(const uint8_t *p, size_t size, int n, int precise, infer_type kv, const infer_kernels *backend, int *finite, infer_error *err) {
    infer_model *m;
    if (infer_model_load_memory(&m, p, size, NULL, err) != INFER_OK) return err->status;
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise; sp.kv_type = kv; sp.n_ctx = 64; sp.backend = backend;
    infer_session *s;
    infer_status st = infer_session_create(&s, m, &sp, err);
    if (st == INFER_OK) {
        const int V = infer_model_config(m)->n_vocab;
        int32_t ids[8];
        for (int i = 0; i < 8; i++) ids[i] = (i * 37 + 5) % V;
        float *lg = malloc(sizeof(float) * (size_t)V * 8);
        st = infer_eval(s, ids, n, lg, 1, err);
        if (st == INFER_OK && n == 1) st = infer_eval(s, ids + 1, 1, lg, 1, err);   /* and a decode step */
        *finite = st == INFER_OK && infer__first_nonfinite(lg, (int64_t)V * (n == 1 ? 1 : n)) < 0;
        free(lg);
        infer_session_free(s);
    }
    infer_model_free(m);
    return st;
}

/* Models whose activations overflow: NaN or huge norm weights in one layer. In every
 * weight type's fast path (its activation quantizer: Q8_0, X4, Q8_1, Q8_K, XK, I2_S's Q8_K)
 * and in the exact one, a prompt and a decode step either finish with finite logits or
 * stop with INFER_ERR_NUMERIC naming the first layer that overflowed; norm weights of 1e5
 * (keys beyond f16's range) run through the default F16 cache, which saturates. */
static void test_robust_nonfinite_model(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    const char *types[] = { "q4_K", "q4_0", "q8_0", "q4_1", "tq2_0", "i2_s", "f16" };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        size_t n;
        uint8_t *p = robust_model(types[ti], &n);
        if (!p) { CHECK_MSG(0, "%s: no model", types[ti]); continue; }
        infer_error err;
        int finite = 0;
        robust_set(p, n, "blk.0.attn_norm.weight", 1e5f);            /* keys ~1e5: beyond f16 */
        for (int T = 1; T <= 8; T += 7) {
            const infer_status st = robust_eval(p, n, T, 0, INFER_TYPE_F16, NULL, &finite, &err);
            CHECK_MSG(st == INFER_OK && finite, "%s, norm 1e5, %d tokens: %s", types[ti], T, st == INFER_OK ? "non-finite logits" : err.msg);
        }
        robust_set(p, n, "blk.0.attn_norm.weight", 1.0f);
        const float bad[3] = { NAN, INFINITY, 1e30f };
        for (int b = 0; b < 3; b++) {
            robust_set(p, n, "blk.1.ffn_norm.weight", bad[b]);
            for (int mode = 0; mode < 3; mode++) {           /* fast f16, fast f32 cache, precise; 1 or 8 tokens */
                for (int T = 1; T <= 8; T += 7) {
                    const infer_status st = robust_eval(p, n, T, mode == 2, mode == 1 ? INFER_TYPE_F32 : INFER_TYPE_F16, NULL, &finite, &err);
                    CHECK_MSG(st == INFER_ERR_NUMERIC && strstr(err.msg, "layer 1 ") && strstr(err.msg, "position "),
                              "%s, ffn_norm %g, mode %d, %d tokens: status %d: %s", types[ti], bad[b], mode, T, st, st ? err.msg : "finished");
                }
            }
        }
        /* a device backend checks the logits it sends back */
        const infer_status st = robust_eval(p, n, 8, 0, INFER_TYPE_F16, fake_device(), &finite, &err);
        CHECK_MSG(st == INFER_ERR_NUMERIC && strstr(err.msg, "logits"), "%s, device: %s", types[ti], err.msg);
        free(p);
    }
    /* the command line: a clear message and exit status 1, no crash */
    size_t n;
    uint8_t *p = robust_model("q4_K", &n);
    if (p) {
        robust_set(p, n, "blk.1.attn_norm.weight", NAN);
        FILE *f = fopen(tmp_path("infer_rb_nan.gguf"), "wb");
        CHECK(f && fwrite(p, 1, n, f) == n);
        if (f) fclose(f);
        char out[4096];
        CHECK(run_cmd("./infer -m $INFER_TMP/infer_rb_nan.gguf --prompt-ids 1,2,3 -n 4 2>&1", out, sizeof out) == 1);
        CHECK_MSG(strstr(out, "layer 1 (blk.1)") != NULL, "got: %s", out);
        remove(tmp_path("infer_rb_nan.gguf"));
        free(p);
    }
    /* the sampler takes NaN logits without breaking qsort's contract, and returns a real id */
    float lg[64];
    for (int i = 0; i < 64; i++) lg[i] = i % 3 ? NAN : (float)i;
    infer_sampler_params sp = infer_sampler_default_params();
    sp.top_k = 0;
    infer_sampler *smp = infer_sampler_create(&sp, 64);
    for (int i = 0; i < 100; i++) { const int32_t t = infer_sampler_sample(smp, lg); CHECK(t >= 0 && t < 64); }
    infer_sampler_free(smp);
    remove(tmp_path("infer_rb_f32.gguf"));
}

/* ---- the command line (main.c) ---- */
static void test_cli_contracts(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    char out[8192];
    /* no -m: the default model (test cli_default_model), except for a server, which serves
     * only the model it is given */
    CHECK(run_cmd("./infer --server 2>&1", out, sizeof out) != 0 && (strstr(out, "no model") || strstr(out, "without the HTTP server")));
    CHECK(run_cmd("./infer -m /nonexistent.gguf -p hi 2>&1", out, sizeof out) != 0 && strstr(out, "cannot open"));
    CHECK(run_cmd("./infer -m x --bogus 2>&1", out, sizeof out) != 0 && strstr(out, "unknown option"));
    CHECK(run_cmd("./infer -m x -n abc 2>&1", out, sizeof out) != 0 && strstr(out, "bad value"));
    CHECK(run_cmd("./infer -m tests.c -p hi 2>&1", out, sizeof out) != 0 && strstr(out, "GGUF"));
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    const char *M = SHARED "/models/stories260K.gguf";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./infer -m %s -p \"Once upon a time\" -n 40 --temp 0 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, ", there was a little girl named Lily. She loved to play outside in the park.") != NULL, "got: %s", out);
    snprintf(cmd, sizeof cmd, "./infer -m %s -p \"Once upon a time\" --tokenize", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strncmp(out, "1 ", 2) == 0);
    snprintf(cmd, sizeof cmd, "./infer -m %s -p \"Once upon a time\" --tokenize --no-bos", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strncmp(out, "1 ", 2) != 0);
    /* --tokenize on a vocab-only file (no tensors): the same ids as the library */
    if (file_exists(SHARED "/vocab/ggml-vocab-gpt-2.gguf")) {
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-gpt-2.gguf -p \"Hello world<|endoftext|>\" --tokenize --no-bos", out, sizeof out) == 0);
        CHECK_MSG(strcmp(out, "15496 995 50256\n") == 0, "got: %s", out);
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-gpt-2.gguf -p \"Hello world<|endoftext|>\" --tokenize --no-bos --no-special", out, sizeof out) == 0);
        CHECK_MSG(strstr(out, "50256") == NULL, "got: %s", out);
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-gpt-2.gguf -p hi 2>&1", out, sizeof out) != 0);
    }
    /* a prompt longer than the context */
    snprintf(cmd, sizeof cmd, "./infer -m %s -c 16 -p \"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen\" 2>&1", M);
    CHECK(run_cmd(cmd, out, sizeof out) != 0 && strstr(out, "context"));
    /* -c is the limit as given, not rounded up to the cache's blocks: 5 tokens do not fit
     * in 3, fit in 5, and -n 2 after them stops at 6 */
    snprintf(cmd, sizeof cmd, "./infer -m %s -c 3 --prompt-ids 1,403,407,410,412 -n 1 2>&1", M);
    CHECK_MSG(run_cmd(cmd, out, sizeof out) != 0 && strstr(out, "context"), "-c 3: %s", out);
    snprintf(cmd, sizeof cmd, "./infer -m %s -c 6 --prompt-ids 1,403,407,410,412 -n 8 --temp 0 2>&1", M);
    CHECK_MSG(run_cmd(cmd, out, sizeof out) == 0 && strstr(out, "context full"), "-c 6: %s", out);
    /* --logits-out: n_prompt + n rows; -n 0 gives only the prompt rows */
    snprintf(cmd, sizeof cmd, "./infer -m %s --prompt-ids 1,403,407 -n 5 --temp 0 --logits-out $INFER_TMP/infer_test_logits.bin 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    size_t n = 0;
    free(slurp(tmp_path("infer_test_logits.bin"), &n));
    CHECK_MSG(n == (size_t)(3 + 5) * 512 * 4, "logits file has %zu bytes", n);
    snprintf(cmd, sizeof cmd, "./infer -m %s --prompt-ids 1,403,407 -n 0 --logits-out $INFER_TMP/infer_test_logits.bin 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    free(slurp(tmp_path("infer_test_logits.bin"), &n));
    CHECK(n == (size_t)3 * 512 * 4);
    remove(tmp_path("infer_test_logits.bin"));
    /* --ppl prints the perplexity on its last line */
    FILE *f = fopen(tmp_path("infer_test_ppl.txt"), "w");
    fputs("One day, a clever fox found a shiny key under the old oak tree.", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "./infer -m %s --precise --ppl $INFER_TMP/infer_test_ppl.txt -c 8 2>/dev/null", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    char *pl = strstr(out, "perplexity: ");
    CHECK(pl != NULL);
    const double got = pl ? atof(pl + 12) : 0;
    /* llama-perplexity's recipe, recomputed from the generation path's --logits-out: chunks
     * of 8 tokens (BOS in front of each), the second half of each scored */
    snprintf(cmd, sizeof cmd, "./infer -m %s --tokenize -f $INFER_TMP/infer_test_ppl.txt", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    int32_t tid[64];
    int nt = 0;
    for (char *p = out; nt < 64;) {
        char *e;
        const long v = strtol(p, &e, 10);
        if (e == p) break;
        tid[nt++] = (int32_t)v;
        p = e;
    }
    CHECK(nt >= 16);
    double nll = 0;
    int count = 0;
    for (int c = 0; c + 1 <= nt / 8; c++) {
        char ids[256] = "", *w = ids;
        for (int j = 0; j < 8; j++) w += snprintf(w, sizeof ids - (size_t)(w - ids), "%s%d", j ? "," : "", j ? tid[8 * c + j] : 1);
        snprintf(cmd, sizeof cmd, "./infer -m %s --precise --prompt-ids %s -n 1 --temp 0 --logits-out $INFER_TMP/infer_test_ppl.bin 2>/dev/null", M, ids);
        CHECK(run_cmd(cmd, out, sizeof out) == 0);
        size_t nb = 0;
        float *rows = slurp(tmp_path("infer_test_ppl.bin"), &nb);
        CHECK(rows && nb == (size_t)9 * 512 * 4);
        for (int j = 4; rows && j < 7; j++) {
            const float *l = rows + (size_t)j * 512;
            double mx = l[0], sum = 0;
            for (int v = 1; v < 512; v++) if (l[v] > mx) mx = l[v];
            for (int v = 0; v < 512; v++) sum += exp(l[v] - mx);
            nll += -(l[tid[8 * c + j + 1]] - mx - log(sum));
            count++;
        }
        free(rows);
    }
    CHECK_MSG(count > 0 && fabs(got - exp(nll / count)) < 1e-4 * got, "--ppl %.6f, recomputed %.6f over %d tokens", got, count ? exp(nll / count) : 0, count);
    remove(tmp_path("infer_test_ppl.bin"));
    remove(tmp_path("infer_test_ppl.txt"));
    snprintf(cmd, sizeof cmd, "./infer -m %s --info", M);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strstr(out, "token_embd.weight"));
}

/* the command line's habits: -n -1, --seed, -f -, directories, --version, -n 1's speed, --bench's threads and contexts */
/* options that cannot do what they say together are refused, naming them; --prompt-ids
 * takes ids separated by one comma or by spaces and nothing emptier; -p "" prints no
 * leading space */
static void test_cli_conflicts(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    char out[8192];
#define M SHARED "/models/stories260K.gguf"
    const char *bad[][2] = {
        { "--prompt-ids 1,,3", "prompt-ids" }, { "--prompt-ids 1,3,", "prompt-ids" }, { "--prompt-ids ,1,3", "prompt-ids" },
        { "--prompt-ids ''", "prompt-ids" }, { "--prompt-ids 1,x", "prompt-ids" }, { "-p hi --system terse", "--system" },
        { "--ppl README.md --logits-out $INFER_TMP/infer_cc.bin", "--ppl" }, { "-p hi --bench", "--bench" },
        { "--bench --ppl README.md", "--ppl" }, { "-p hi --tokenize --info", "--tokenize" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "./infer -m " M " %s -n 2 2>&1", bad[i][0]);
        const int rc = run_cmd(cmd, out, sizeof out);
        CHECK_MSG(rc == 1 && strstr(out, bad[i][1]) && !strchr(strchr(out, '\n') ? strchr(out, '\n') + 1 : "", '\n'),
                  "%s: rc %d, %s", bad[i][0], rc, out);
    }
    char a[8192];
    CHECK(run_cmd("./infer -m " M " --prompt-ids 1,403,407 -n 4 --temp 0 2>/dev/null", a, sizeof a) == 0);
    CHECK(run_cmd("./infer -m " M " --prompt-ids ' 1 , 403 407' -n 4 --temp 0 2>/dev/null", out, sizeof out) == 0 && !strcmp(a, out));
    CHECK(run_cmd("./infer -m " M " -p '' -n 6 --temp 0 2>/dev/null", out, sizeof out) == 0);
    CHECK_MSG(out[0] && out[0] != ' ', "-p '': [%s]", out);
    /* a load error names the path once; a vocabulary-only file says it is one */
    CHECK(run_cmd("./infer -m /nonexistent/infer.gguf -p hi 2>&1", out, sizeof out) == 1);
    const char *at = strstr(out, "/nonexistent/infer.gguf");
    CHECK_MSG(at && !strstr(at + 1, "/nonexistent/infer.gguf"), "%s", out);
    if (file_exists(SHARED "/vocab/ggml-vocab-llama-spm.gguf"))
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-llama-spm.gguf -p hi 2>&1", out, sizeof out) == 1 && strstr(out, "vocabulary-only"));
#undef M
}

/* A conversation survives text that is not UTF-8: a user line with stray bytes, and replies
 * cut inside a character or made of stray bytes (the qwen3 golden model at temperature 1.5
 * makes some over these seeds): every turn runs, the template sees U+FFFD for such bytes */
static void test_cli_chat_utf8(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    FILE *f = fopen(tmp_path("infer_cu.jinja"), "w");
    if (!f) { CHECK(0); return; }
    fputs("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n", f);
    fclose(f);
    char out[8192];
    CHECK(run_cmd("printf 'Hi \\377\\376 there\\nok\\n' | ./infer -m " SHARED "/models/stories260K.gguf --chat --chat-template $INFER_TMP/infer_cu.jinja -n 4 2>&1 >/dev/null",
                  out, sizeof out) == 0 && strstr(out, "turn 2"));
    if (!file_exists(SHARED "/golden/qwen3/model-F32.gguf")) return;
    for (int seed = 1; seed <= 8; seed++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "printf 'Hi\\nAnd then?\\n' | ./infer -m " SHARED "/golden/qwen3/model-F32.gguf --chat --chat-template $INFER_TMP/infer_cu.jinja "
                                  "-n 8 --temp 1.5 --seed %d 2>&1 >/dev/null", seed);
        const int rc = run_cmd(cmd, out, sizeof out);
        CHECK_MSG(rc == 0 && strstr(out, "turn 2"), "seed %d: rc %d: %s", seed, rc, out);
    }
}

/* the test runner and the converter say what they were asked that they do not know */
static void test_cli_tools_usage(void) {
    if (!file_exists("./tests") || !file_exists("./tools/convert")) SKIP("./tests or ./tools/convert not built");
    char out[16384];
    CHECK(run_cmd("./tests --help", out, sizeof out) == 0 && strstr(out, "usage") && strstr(out, "cli_tools_usage"));
    CHECK(run_cmd("./tests --list", out, sizeof out) == 0 && strstr(out, "\ncli_tools_usage\n"));
    CHECK(run_cmd("./tests no_test_has_this_name 2>&1", out, sizeof out) == 2 && strstr(out, "no test name"));
    CHECK(run_cmd("./tests --bogus 2>&1", out, sizeof out) == 2 && strstr(out, "--bogus"));
    CHECK(run_cmd("./tools/convert bogus 2>&1", out, sizeof out) == 1 && strstr(out, "unknown command 'bogus'"));
    CHECK(run_cmd("./tools/convert synth qwen35 tiny $INFER_TMP/infer_tu.gguf --type Q4_K_M 2>&1", out, sizeof out) == 1 && strstr(out, "file type"));
}

/* tools/setup.sh --deps: nothing to do here (make test has run it); on a machine missing
 * stb_ds.h where this user may not install (shims for cc, id and apt-get first on PATH), it
 * names the package and the command, installs nothing and fails */
static void test_cli_setup(void) {
    if (!file_exists("./tools/setup.sh")) SKIP("tools/setup.sh not found");
    char out[4096], cmd[2048];
    CHECK_MSG(run_cmd("sh tools/setup.sh --deps 2>&1", out, sizeof out) == 0 && !strstr(out, "missing"), "[%s]", out);
    const char *d = tmp_path("infer_setup_bin");
    snprintf(cmd, sizeof cmd,
             "rm -rf %s && mkdir -p %s && cd %s && "
             "printf '#!/bin/sh\\ncase \"$*\" in *-E*) exit 1;; esac\\nexit 0\\n' > cc && "
             "printf '#!/bin/sh\\necho 1000\\n' > id && "
             "printf '#!/bin/sh\\ntouch %s/apt-get-ran\\n' > apt-get && "
             "printf '#!/bin/sh\\nexit 1\\n' > sudo && chmod +x cc id apt-get sudo", d, d, d, d);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    snprintf(cmd, sizeof cmd, "PATH=%s:$PATH sh tools/setup.sh --deps 2>&1", d);
    CHECK_MSG(run_cmd(cmd, out, sizeof out) == 1 && strstr(out, "missing: libstb-dev") && strstr(out, "apt-get install -y libstb-dev"), "[%s]", out);
    snprintf(cmd, sizeof cmd, "%s/apt-get-ran", d);
    CHECK(!file_exists(cmd));
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run_cmd(cmd, out, sizeof out);
}

/* without -m: data/tales.gguf beside the program (from any working directory), the same
 * text as with -m; a program with no such file beside it or in the working directory says
 * what it looked for */
static void test_cli_default_model(void) {
    if (!file_exists("./infer") || !file_exists("data/tales.gguf")) SKIP("./infer or data/tales.gguf not here");
    char out[8192], out2[8192], cmd[4096], cwd[2048];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(run_cmd("./infer -m data/tales.gguf -p 'Once upon a time' -n 24 --temp 0 2>/dev/null", out, sizeof out) == 0);
    snprintf(cmd, sizeof cmd, "cd / && '%s/infer' -p 'Once upon a time' -n 24 --temp 0 2>&1 >/dev/null", cwd);
    CHECK_MSG(run_cmd(cmd, out2, sizeof out2) == 0 && strstr(out2, "no -m given: the default model") && strstr(out2, "/data/tales.gguf"), "[%s]", out2);
    snprintf(cmd, sizeof cmd, "cd / && '%s/infer' -p 'Once upon a time' -n 24 --temp 0 2>/dev/null", cwd);
    CHECK(run_cmd(cmd, out2, sizeof out2) == 0 && !strcmp(out, out2) && !strncmp(out, "Once upon a time", 16));
    const char *d = tmp_path("infer_nodefault");
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp ./infer %s/ && cd %s && ./infer -p hi 2>&1", d, d, d, d);
    CHECK_MSG(run_cmd(cmd, out2, sizeof out2) == 1 && strstr(out2, "no model given") && strstr(out2, "data/tales.gguf"), "[%s]", out2);
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run_cmd(cmd, out2, sizeof out2);
}

static void test_cli_habits(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    char out[8192], out2[8192];
    CHECK(run_cmd("./infer --version", out, sizeof out) == 0 && !strncmp(out, "infer ", 6) && strstr(out, INFER_VERSION));
    CHECK(run_cmd("./infer -m x -n -2 2>&1", out, sizeof out) != 0 && strstr(out, "bad value"));
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
#define M SHARED "/models/stories260K.gguf"
    /* -n -1: until the end of generation or of the context (32 here) */
    CHECK(run_cmd("./infer -m " M " -p 'Once upon a time' -n -1 --temp 0 -c 32 2>&1 >/dev/null", out, sizeof out) == 0);
    long pr = num_after(out, "prompt: "), gen = num_after(out, "generation: ");
    CHECK_MSG(pr > 0 && gen > 0 && pr + gen >= 32, "[%s]", out);
    /* --seed: shown with the stats; -1 (like no seed) picks a random one */
    CHECK(run_cmd("./infer -m " M " -p Once -n 4 --seed 1234 2>&1 >/dev/null", out, sizeof out) == 0 && strstr(out, "seed 1234\n"));
    CHECK(run_cmd("./infer -m " M " -p Once -n 4 --seed -1 2>&1 >/dev/null", out, sizeof out) == 0);
    CHECK(run_cmd("./infer -m " M " -p Once -n 4 --seed -1 2>&1 >/dev/null", out2, sizeof out2) == 0);
    CHECK(strstr(out, "; seed ") && strstr(out2, "; seed ") && strcmp(strstr(out, "; seed "), strstr(out2, "; seed ")) != 0);
    /* the printed seed reproduces the run */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./infer -m " M " -p Once -n 12 --seed %s 2>/dev/null", strstr(out, "; seed ") + 7);
    char *nl = strchr(cmd, '\n');
    if (nl) memmove(nl, nl + 1, strlen(nl));
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && run_cmd(cmd, out2, sizeof out2) == 0 && !strcmp(out, out2));
    /* -f - reads standard input (the same tokens as -p) */
    CHECK(run_cmd("printf 'Once upon a time' | ./infer -m " M " -f - --tokenize", out, sizeof out) == 0);
    CHECK(run_cmd("./infer -m " M " -p 'Once upon a time' --tokenize", out2, sizeof out2) == 0 && !strcmp(out, out2));
    CHECK(run_cmd("./infer -m " M " -f /tmp -n 1 2>&1", out, sizeof out) != 0 && strstr(out, "directory"));
    CHECK(run_cmd("./infer -m " M " --ppl /tmp 2>&1", out, sizeof out) != 0 && strstr(out, "directory"));
    /* -n 1: one token, from the prompt's pass; no decode pass and so no made-up speed */
    CHECK(run_cmd("./infer -m " M " -p Once -n 1 --temp 0 2>&1 >/dev/null", out, sizeof out) == 0 && strstr(out, "1 tokens, 0 forward passes") && strstr(out, "(- tok/s)"));
    CHECK(run_cmd("./infer -m " M " -p Once -n 5 --temp 0 2>&1 >/dev/null", out, sizeof out) == 0 && strstr(out, "5 tokens, 4 forward passes"));
    /* the repetition penalty also steers greedy decoding */
    CHECK(run_cmd("./infer -m " M " -p 'Once upon a time' -n 40 --temp 0 2>/dev/null", out, sizeof out) == 0);
    CHECK(run_cmd("./infer -m " M " -p 'Once upon a time' -n 40 --temp 0 --repeat-penalty 1.5 2>/dev/null", out2, sizeof out2) == 0);
    CHECK(strcmp(out, out2) != 0);
    /* --bench reports the threads it ran with */
    CHECK(run_cmd("./infer -m " M " --bench --bench-pp 4 --bench-tg 2 --bench-reps 1 -t 1 2>/dev/null", out, sizeof out) == 0 && strstr(out, "threads=1 launches="));
    CHECK(run_cmd("./infer -m " M " --bench --bench-pp 4 --bench-tg 2 --bench-reps 1 2>/dev/null", out, sizeof out) == 0 && num_after(out, "threads=") > 0);
    /* a progress line on a terminal only (script(1) gives the run one) */
    CHECK(run_cmd("INFER_PROGRESS_AFTER=0 ./infer -m " M " --bench --bench-pp 4 --bench-tg 8 --bench-reps 2 2>&1", out, sizeof out) == 0 && !strchr(out, '\r'));
    if (run_cmd("command -v script", out2, sizeof out2) == 0) {
        CHECK(run_cmd("INFER_PROGRESS_AFTER=0 script -qec './infer -m " M " --bench --bench-pp 4 --bench-tg 8 --bench-reps 2' /dev/null 2>&1", out, sizeof out) == 0);
        CHECK_MSG(strstr(out, "\rbench rep 2 of 2: tg8, token 8\033[K") && strstr(out, "\r\033[Krep 0: pp"), "[%s]", out);
    }
    /* more threads than cores run as many as there are cores, and say so */
    snprintf(cmd, sizeof cmd, "./infer -m " M " --bench --bench-pp 4 --bench-tg 2 --bench-reps 1 -t %d 2>&1", 4 * infer_default_threads());
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && num_after(out, "threads=") == infer_default_threads() && strstr(out, "cores this process may use"));
    /* each test from an empty context, as the reference's: a 16-token context holds a 16-token
     * prompt and 16 generated tokens; --bench-depth puts tokens before both, so one more does
     * not fit */
    CHECK(run_cmd("./infer -m " M " --bench --bench-pp 16 --bench-tg 16 --bench-reps 1 -c 16 2>&1", out, sizeof out) == 0 && strstr(out, "bench pp=16 tg=16 ") && !strstr(out, "depth="));
    CHECK(run_cmd("./infer -m " M " --bench --bench-pp 8 --bench-tg 8 --bench-depth 8 --bench-reps 1 -c 16 2>/dev/null", out, sizeof out) == 0 && strstr(out, " depth=8\n"));
    CHECK(run_cmd("./infer -m " M " --bench --bench-pp 16 --bench-tg 4 --bench-depth 1 --bench-reps 1 -c 16 2>&1", out, sizeof out) != 0 && strstr(out, "needs a context of 17 tokens; it is 16"));
    CHECK(run_cmd("./infer -m " M " --bench-depth 4 2>&1", out, sizeof out) != 0 && strstr(out, "--bench-depth goes with --bench"));
    CHECK(run_cmd("./infer -m " M " --bench --bench-depth 4 --bench-batch 1 2>&1", out, sizeof out) != 0 && strstr(out, "--bench-batch"));
    /* --info on a vocab-only file, and on one whose family we cannot run */
    if (file_exists(SHARED "/vocab/ggml-vocab-phi-3.gguf")) {
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-phi-3.gguf --info", out, sizeof out) == 0 && strstr(out, "phi3.block_count"));
        CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-gpt-2.gguf --info", out, sizeof out) == 0 && strstr(out, "tokenizer.ggml.model"));
    }
#undef M
}

/* the --chat-render contract: the rendered text exactly on stdout, exit 0; the template
 * from the model (GGUF or Hugging Face folder) or --chat-template FILE, bos/eos from the model */
static void test_cli_chat_render(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    if (!file_exists(SHARED "/vocab/ggml-vocab-phi-3.gguf")) SKIP("../shared/vocab not found");
    char out[8192], cmd[512];
    size_t n;
    char *conv = slurp("data/chat/conv-chat.json", &n), *tmpl = slurp("data/chat/mistral-nemo.jinja", NULL), *want = NULL;
    infer_error err;
    if (!conv || !tmpl) { CHECK_MSG(0, "data/chat is missing"); free(conv); free(tmpl); return; }
    /* the model's own template (Phi-3's, in its GGUF) */
    CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-phi-3.gguf --chat-render data/chat/conv-chat.json", out, sizeof out) == 0);
    CHECK_MSG(!strcmp(out, "<s><|user|>\nHello!<|end|>\n<|assistant|>\nHi. How can I help?<|end|>\n<|user|>\n"
                           "Name a caf\xC3\xA9 drink, \"quoted\" & <b>bold</b>.<|end|>\n<|assistant|>\n"), "got [%s]", out);
    /* --chat-template replaces it; bos_token / eos_token still come from the model */
    CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-phi-3.gguf --chat-template data/chat/mistral-nemo.jinja --chat-render data/chat/conv-chat.json", out, sizeof out) == 0);
    CHECK(infer_chat_render(tmpl, strlen(tmpl), conv, n, "<s>", "<|endoftext|>", &want, NULL, &err) == INFER_OK);
    CHECK_MSG(want && !strcmp(out, want), "got [%s] want [%s]", out, want ? want : "");
    infer_free(want);
    /* a Hugging Face folder with only its tokenizer files */
    if (file_exists(SHARED "/tokenizers/qwen3/tokenizer.json")) {
        CHECK(run_cmd("./infer -m " SHARED "/tokenizers/qwen3 --chat-render data/chat/conv-think.json", out, sizeof out) == 0);
        CHECK_MSG(!strcmp(out, "<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n<|im_start|>user\nSure?<|im_end|>\n"
                               "<|im_start|>assistant\n<think>\n\n</think>\n\n"), "got [%s]", out);
    }
    /* the template refuses the conversation: an error naming its line, exit 1 */
    FILE *f = fopen(tmp_path("infer_test_conv.json"), "w");
    fputs("{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"user\", \"content\": \"b\"}]}", f);
    fclose(f);
    CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-phi-3.gguf --chat-template data/chat/mistral-nemo.jinja --chat-render $INFER_TMP/infer_test_conv.json 2>&1", out, sizeof out) == 1);
    CHECK_MSG(strstr(out, "chat template line 18") && strstr(out, "must alternate"), "got [%s]", out);
    snprintf(cmd, sizeof cmd, "./infer -m %s --chat-render $INFER_TMP/infer_test_conv.json 2>&1", SHARED "/vocab/ggml-vocab-gpt-2.gguf");
    CHECK(run_cmd(cmd, out, sizeof out) == 1 && strstr(out, "no chat template"));
    CHECK(run_cmd("./infer -m " SHARED "/vocab/ggml-vocab-phi-3.gguf --chat-render /nonexistent.json 2>&1", out, sizeof out) == 1 && strstr(out, "cannot open"));
    remove(tmp_path("infer_test_conv.json"));
    free(conv); free(tmpl);
}

/* --chat: two lines in, two replies out, exit 0; the second turn evaluates only its new
 * tokens (it holds at least all of the first turn's prompt) */
static void test_cli_chat(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    char out[16384];
    const char *base = "./infer -m " SHARED "/models/stories260K.gguf --chat-template data/chat/phi-3.5.jinja -n 16 --temp 0";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "printf 'Hi\\nAnd then?\\n' | %s --chat 2>$INFER_TMP/infer_test_chat.err", base);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    int lines = 0;
    for (const char *p = out; *p; p++) lines += *p == '\n';
    CHECK_MSG(lines == 2 && out[0] != '\n' && !strstr(out, "\n\n"), "stdout: [%s]", out);
    char *err = slurp(tmp_path("infer_test_chat.err"), NULL);
    const char *t2 = err ? strstr(err, "turn 2:") : NULL;
    const long p1 = num_after(err, "turn 1: prompt "), p2 = num_after(t2, "turn 2: prompt "), h2 = num_after(t2, "tokens: "), e2 = num_after(t2, "held, ");
    CHECK_MSG(t2 && p1 > 0 && p2 > p1 && h2 >= p1 && e2 == p2 - h2 && e2 < p2 - p1, "stderr: [%s]", err ? err : "");
    free(err);
    /* the same through -cnv, and /reset starts over: the third turn holds nothing */
    snprintf(cmd, sizeof cmd, "printf 'Hi\\nMore\\n/reset\\nHi\\n' | %s -cnv 2>&1 >/dev/null", base);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "starts over") && num_after(strstr(out, "turn 3:"), "tokens: ") == 0 &&
              num_after(strstr(out, "turn 3:"), "turn 3: prompt ") == num_after(out, "turn 1: prompt "), "[%s]", out);
    /* --system is rendered into the first turn's prompt */
    snprintf(cmd, sizeof cmd, "printf 'Hi\\n' | %s --chat --system 'Tell a short story.' 2>&1 >/dev/null", base);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && num_after(out, "turn 1: prompt ") > p1);
    /* a small context: the oldest turns leave, with a notice, and the chat goes on */
    snprintf(cmd, sizeof cmd, "printf 'Hi\\nOne\\nTwo\\nThree\\n' | %s --chat -c 96 2>&1 >/dev/null", base);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "oldest") && strstr(out, "turn 4:"), "[%s]", out);
    /* no chat template */
    CHECK(run_cmd("printf 'Hi\\n' | ./infer -m " SHARED "/models/stories260K.gguf --chat 2>&1", out, sizeof out) == 1 && strstr(out, "no chat template"));
    remove(tmp_path("infer_test_chat.err"));
}

/* --parallel N over a file of prompts: every non-empty line's completion, "[line] text", the
 * text the same as the prompt's run alone (greedy), a shared start served from the prefix
 * cache; --bench --bench-batch: a bench line per batch size */
static void test_cli_parallel(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    const char *lines[6] = { "Once upon a time", "The little dog", "", "Once upon a time there was a big", "Lily wanted to", "The sun was" };
    FILE *f = fopen(tmp_path("infer_par.txt"), "w");
    for (int i = 0; i < 6; i++) fprintf(f, "%s\n", lines[i]);
    fclose(f);
    char out[8192], one[2048], cmd[512];
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -f $INFER_TMP/infer_par.txt --parallel 2 -n 12 --temp 0 2>$INFER_TMP/infer_par.err", out, sizeof out) == 0);
    for (int i = 0; i < 6; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "[%d] ", i + 1);
        const char *at = strstr(out, tag);
        if (!lines[i][0]) { CHECK_MSG(!at, "line %d is empty but has a completion", i + 1); continue; }
        CHECK_MSG(at, "no completion for line %d in:\n%s", i + 1, out);
        if (!at) continue;
        snprintf(cmd, sizeof cmd, "./infer -m " SHARED "/models/stories260K.gguf -p '%s' -n 12 --temp 0 2>/dev/null", lines[i]);
        CHECK(run_cmd(cmd, one, sizeof one) == 0);
        const char *text = at + strlen(tag), *end = strchr(text, '\n');
        const size_t n = end ? (size_t)(end - text) : strlen(text);
        /* alone, the continuation follows the echoed prompt (a leading space kept there) */
        const char *cont = one + strlen(lines[i]);
        while (*cont == ' ' && (n == 0 || text[0] != ' ')) cont++;
        CHECK_MSG(strlen(cont) >= n && !strncmp(cont, text, n), "line %d: parallel '%.*s', alone '%s'", i + 1, (int)n, text, cont);
    }
    char *err = slurp(tmp_path("infer_par.err"), NULL);
    int served = -1;
    const char *pc = err ? strstr(err, "prefix cache: ") : NULL;
    if (pc) served = atoi(pc + strlen("prefix cache: "));
    CHECK_MSG(served > 0, "stderr: %s", err ? err : "(none)");
    /* the stats count tokens generated (5 prompts x 12, none ended early on this model) */
    CHECK_MSG(err && num_after(err, "generation: ") == 60, "stderr: %s", err ? err : "(none)");
    free(err);
    /* -n 0: the prompts only, every line an empty completion; -n -1: to the end of the context */
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -f $INFER_TMP/infer_par.txt --parallel 2 -n 0 --temp 0 2>&1", out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "[1] \n") && strstr(out, "[6] \n") && num_after(out, "generation: ") == 0, "%s", out);
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -f $INFER_TMP/infer_par.txt --parallel 2 -n -1 -c 48 --temp 0 2>&1", out, sizeof out) == 0);
    CHECK_MSG(num_after(out, "generation: ") > 5 * 12, "%s", out);
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf -p hi --parallel 2 2>&1", out, sizeof out) != 0 && strstr(out, "-f FILE"));
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf --bench --bench-batch 1,x 2>&1", out, sizeof out) != 0 && strstr(out, "--bench-batch"));
    /* 16 + 4 tokens: each sequence reaches into a second cache block */
    CHECK(run_cmd("./infer -m " SHARED "/models/stories260K.gguf --bench --bench-batch 1,3 --bench-pp 16 --bench-tg 4 --bench-reps 1 2>&1", out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "batch=1 launches=") && strstr(out, "batch=3 launches=") && strstr(out, "tg_tok_s="), "%s", out);
    remove(tmp_path("infer_par.txt"));
    remove(tmp_path("infer_par.err"));
}

/* `./infer --gpu` and `--diff` in a build without CUDA fail with a clear message, and the
 * plain build never runs nvcc */
static void test_cli_without_gpu(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    char out[8192];
    CHECK(run_cmd("./infer --gpu -m tests.c -p hi 2>&1", out, sizeof out) != 0);
    CHECK_MSG(strstr(out, "no GPU backend") && strstr(out, "make cuda"), "got: %s", out);
    CHECK(run_cmd("./infer --diff 2>&1", out, sizeof out) != 0);
    CHECK_MSG(strstr(out, "no GPU backend"), "got: %s", out);
    CHECK(run_cmd("make -n -B infer tests tools/convert 2>&1", out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "main.c") && !strstr(out, "nvcc") && !strstr(out, ".cu"), "the plain build mentions nvcc: %s", out);
}

/* a model with a vocabulary: synth llama tiny plus an SPM vocabulary of its 1024 ids
 * (<unk> <s> </s>, the 256 byte tokens, then "▁x", "x", "▁xy" and "xy" pieces) */
static int write_vocab_model(const char *path) {
    char out[4096];
    if (run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_rb_v0.gguf --type q8_0 2>&1", out, sizeof out) != 0) return 0;
    size_t n;
    uint8_t *p = slurp(tmp_path("infer_rb_v0.gguf"), &n);
    remove(tmp_path("infer_rb_v0.gguf"));
    infer_gguf g;
    infer_error err;
    if (!p || infer_gguf_parse(&g, p, n, &err) != INFER_OK) { free(p); return 0; }
    enum { V = 1024 };
    buf_t enc = { 0 };
    float scores[V];
    int32_t types[V];
    for (int i = 0; i < V; i++) {
        char piece[16];
        if (i < 3) snprintf(piece, sizeof piece, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (i < 259) snprintf(piece, sizeof piece, "<0x%02X>", i - 3);
        else if (i < 285) snprintf(piece, sizeof piece, "\xe2\x96\x81%c", 'a' + (i - 259));
        else if (i < 311) snprintf(piece, sizeof piece, "%c", 'a' + (i - 285));
        else if (i < 987) snprintf(piece, sizeof piece, "\xe2\x96\x81%c%c", 'a' + (i - 311) / 26, 'a' + (i - 311) % 26);
        else snprintf(piece, sizeof piece, "%c%c", 'a' + (i - 987) / 26, 'a' + (i - 987) % 26);
        b_str(&enc, piece);
        scores[i] = -(float)i;
        types[i] = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1;
    }
    infer_gguf_kv *kv = calloc((size_t)g.n_kv + 8, sizeof *kv);
    int64_t nkv = 0;
    for (int64_t i = 0; i < g.n_kv; i++)            /* the synth model's own tokenizer gives way to this one */
        if (g.kv[i].key.len < 10 || memcmp(g.kv[i].key.ptr, "tokenizer.", 10)) kv[nkv++] = g.kv[i];
    kv[nkv++] = infer_gguf_kv_str("tokenizer.ggml.model", "llama");
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.tokens", INFER_GGUF_STRING, V, enc.p);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.scores", INFER_GGUF_F32, V, scores);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.token_type", INFER_GGUF_I32, V, types);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.unknown_token_id", 0);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.bos_token_id", 1);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.eos_token_id", 2);
    const int ok = infer_gguf_write(path, kv, nkv, g.tensors, g.n_tensors, 32, &err) == INFER_OK;
    infer_gguf_free(&g);
    free(kv); free(enc.p); free(p);
    return ok;
}

/* ---- the HTTP server (tools/server.c, ./infer --server) ----
 * Each test starts ./infer --server on a free port (--port 0; the port is read from its
 * "listening on port N" line), talks HTTP/1.1 to it over plain sockets, and stops it with
 * SIGTERM (a clean exit: status 0). They SKIP when ./infer was built without the server or
 * ../shared is absent. */
#include <signal.h>
#include <pthread.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>

typedef struct { pid_t pid; int port; char log[64]; } srv_proc;

/* 1 when ./infer has --server (a build without it says so when asked) */
static int server_built(void) {
    char out[4096];
    if (!file_exists("./infer")) return 0;
    run_cmd("./infer --server -m /nonexistent/x.gguf 2>&1", out, sizeof out);
    return strstr(out, "built without the HTTP server") == NULL;
}

/* PROGRAM --server --port 0 ARGS in the background; 0 when it did not start listening */
static int server_start_with(srv_proc *p, const char *program, const char *args) {
    static int k;
    snprintf(p->log, sizeof p->log, "infer_srv_%d.log", k++);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "exec env %s --server --port 0 %s 2>%s >/dev/null", program, args, tmp_path(p->log));
    p->port = 0;
    fflush(stdout);
    if ((p->pid = fork()) == 0) { execl("/bin/sh", "sh", "-c", cmd, (char *)NULL); _exit(127); }
    for (int i = 0; i < 1200 && p->pid > 0; i++) {          /* up to 60 s (an ASan build starts slower) */
        char *log = slurp(tmp_path(p->log), NULL);
        const long port = num_after(log, "listening on port ");
        free(log);
        if (port > 0) { p->port = (int)port; return 1; }
        int st;
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) { p->pid = 0; break; }
        usleep(50 * 1000);
    }
    char *log = slurp(tmp_path(p->log), NULL);
    printf("    the server did not start: %s\n", log ? log : "(no log)");
    free(log);
    return 0;
}
static int server_start(srv_proc *p, const char *args) { return server_start_with(p, "./infer", args); }
/* SIGTERM; its exit status (0: a clean stop), -1 if it had to be killed */
static int server_stop(srv_proc *p) {
    if (p->pid <= 0) return -1;
    kill(p->pid, SIGTERM);
    for (int i = 0; i < 200; i++) {
        int st;
        if (waitpid(p->pid, &st, WNOHANG) == p->pid) { p->pid = 0; return WIFEXITED(st) ? WEXITSTATUS(st) : -1; }
        usleep(25 * 1000);
    }
    kill(p->pid, SIGKILL);
    waitpid(p->pid, NULL, 0);
    p->pid = 0;
    return -1;
}

static int http_connect(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = { 30, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { if (fd >= 0) close(fd); return -1; }
    return fd;
}
static int http_send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) return 0;
        p += k;
        n -= (size_t)k;
    }
    return 1;
}
/* the request line and headers (Connection: close) and the body */
static int http_write(int fd, const char *method, const char *path, const char *headers, const char *body, size_t blen) {
    buf_t r = { 0 };
    hb_fmt(&r, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", method, path);
    if (body) hb_fmt(&r, "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
    if (headers) hb_str(&r, headers);
    hb_str(&r, "\r\n");
    int ok = http_send_all(fd, (const char *)r.p, r.n);
    if (ok && body && blen) ok = http_send_all(fd, body, blen);
    free(r.p);
    return ok;
}
/* One request; the status (-1: no answer) and the body (chunked transfer decoded) in *out,
 * NUL-terminated; the raw headers in *head when asked. */
static int http_req(int port, const char *method, const char *path, const char *headers, const char *body, buf_t *out, buf_t *head) {
    out->n = 0;
    if (head) head->n = 0;
    const int fd = http_connect(port);
    if (fd < 0) return -1;
    buf_t raw = { 0 };
    if (http_write(fd, method, path, headers, body, body ? strlen(body) : 0)) {
        char tmp[65536];
        ssize_t k;
        while ((k = recv(fd, tmp, sizeof tmp, 0)) > 0) b_put(&raw, tmp, (size_t)k);
    }
    close(fd);
    b_put(&raw, "", 1);
    int status = -1;
    const char *hend = raw.p ? strstr((const char *)raw.p, "\r\n\r\n") : NULL;
    if (raw.p && !strncmp((const char *)raw.p, "HTTP/1.", 7) && hend) {
        status = atoi((const char *)raw.p + 9);
        if (head) { b_put(head, raw.p, (size_t)(hend - (const char *)raw.p)); b_put(head, "", 1); head->n--; }
        const char *b = hend + 4;
        if (strcasestr((const char *)raw.p, "transfer-encoding: chunked") && strcasestr((const char *)raw.p, "transfer-encoding: chunked") < hend) {
            for (;;) {
                char *e;
                const long n = strtol(b, &e, 16);
                if (e == b || n <= 0 || !(e = strstr(e, "\r\n"))) break;
                b_put(out, e + 2, (size_t)n);
                b = e + 2 + n + 2;
            }
        } else hb_str(out, b);
    }
    b_put(out, "", 1);
    out->n--;
    free(raw.p);
    return status;
}

/* the parsed body, or NULL (with a failed check) */
static int srv_json(const buf_t *body, infer__json_doc *doc) {
    infer_error err;
    if (infer__json_parse(doc, body->p ? (const char *)body->p : "", body->n, &err) == INFER_OK) return 1;
    CHECK_MSG(0, "not JSON (%s): %.300s", err.msg, body->p ? (const char *)body->p : "");
    return 0;
}
static const infer__json *jpath(const infer__json *v, const char *path) {   /* "choices.0.message.content" */
    char key[64];
    while (v && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        v = v->type == INFER__JSON_ARRAY ? infer__json_at(v, (size_t)atoi(key)) : v->type == INFER__JSON_OBJECT ? infer__json_get(v, key) : NULL;
        path += n + (path[n] == '.');
    }
    return v;
}
static const char *jstr(const infer__json *v, const char *path) { v = jpath(v, path); return v && v->type == INFER__JSON_STRING ? v->str : NULL; }
static long jint(const infer__json *v, const char *path) { v = jpath(v, path); return v && v->type == INFER__JSON_NUMBER ? (long)v->num : -1; }

/* a whole answer: text (choices[0].text or .message.content) into text, finish_reason and usage */
typedef struct { char text[8192]; char finish[16]; long prompt_tokens, completion_tokens; int status, chunks, comments; } srv_answer;
static int srv_answer_of(const buf_t *body, int chat, srv_answer *a) {
    infer__json_doc d;
    if (!srv_json(body, &d)) return 0;
    const char *t = jstr(d.root, chat ? "choices.0.message.content" : "choices.0.text"), *f = jstr(d.root, "choices.0.finish_reason");
    snprintf(a->text, sizeof a->text, "%s", t ? t : "");
    snprintf(a->finish, sizeof a->finish, "%s", f ? f : "");
    a->prompt_tokens = jint(d.root, "usage.prompt_tokens");
    a->completion_tokens = jint(d.root, "usage.completion_tokens");
    const int ok = t && f && !strcmp(jstr(d.root, "object") ? jstr(d.root, "object") : "", chat ? "chat.completion" : "text_completion");
    CHECK_MSG(ok, "answer: %.400s", (const char *)body->p);
    infer__json_free(&d);
    return ok;
}
/* A streamed answer: every event "data: JSON\n\n", the last "data: [DONE]\n\n"; the deltas
 * joined into text, the one finish_reason (the last JSON event's, null before), usage from
 * the usage event when there is one. 0 (with a failed check) when the framing is wrong. */
static int srv_sse_of(const buf_t *body, int chat, srv_answer *a) {
    const char *p = body->p ? (const char *)body->p : "";
    memset(a, 0, sizeof *a);
    a->prompt_tokens = a->completion_tokens = -1;
    int done = 0, finishes = 0;
    size_t tn = 0;
    while (*p) {
        const char *end = strstr(p, "\n\n");
        if (!done && *p == ':' && end) { a->comments++; p = end + 2; continue; }   /* a comment (keep-alive) */
        if (done || strncmp(p, "data: ", 6) || !end) { CHECK_MSG(0, "SSE framing at: %.200s", p); return 0; }
        if (end - p == 12 && !strncmp(p + 6, "[DONE]", 6)) { done = 1; p = end + 2; continue; }
        infer__json_doc d;
        infer_error err;
        if (infer__json_parse(&d, p + 6, (size_t)(end - p - 6), &err) != INFER_OK) { CHECK_MSG(0, "an event is not JSON: %.200s", p); return 0; }
        const char *obj = jstr(d.root, "object"), *t = jstr(d.root, chat ? "choices.0.delta.content" : "choices.0.text");
        const infer__json *fr = jpath(d.root, "choices.0.finish_reason"), *ch = jpath(d.root, "choices");
        CHECK_MSG(obj && !strcmp(obj, chat ? "chat.completion.chunk" : "text_completion") && ch && ch->type == INFER__JSON_ARRAY, "event: %.200s", p);
        if (finishes && ch && ch->len) CHECK_MSG(0, "an event after the finish_reason: %.200s", p);
        if (t) { const size_t n = strlen(t); if (tn + n < sizeof a->text) { memcpy(a->text + tn, t, n); tn += n; } }
        if (fr && fr->type == INFER__JSON_STRING) { finishes++; snprintf(a->finish, sizeof a->finish, "%s", fr->str); }
        if (jpath(d.root, "usage.prompt_tokens")) { a->prompt_tokens = jint(d.root, "usage.prompt_tokens"); a->completion_tokens = jint(d.root, "usage.completion_tokens"); }
        a->chunks++;
        infer__json_free(&d);
        p = end + 2;
    }
    a->text[tn] = 0;
    CHECK_MSG(done && finishes == 1, "SSE: [DONE] %d, %d finish_reasons: %.300s", done, finishes, (const char *)body->p);
    return done && finishes == 1;
}

/* POST a completion (chat or not, streamed or not) and read the answer */
static int srv_complete(int port, int chat, int stream, const char *body_json, srv_answer *a) {
    buf_t out = { 0 }, body = { 0 };
    hb_str(&body, body_json);
    if (stream) { body.n--; hb_str(&body, ",\"stream\":true}"); }
    b_put(&body, "", 1);
    memset(a, 0, sizeof *a);
    a->status = http_req(port, "POST", chat ? "/v1/chat/completions" : "/v1/completions", NULL, (const char *)body.p, &out, NULL);
    int ok = a->status == 200;
    CHECK_MSG(ok, "status %d: %.300s", a->status, out.p ? (const char *)out.p : "");
    if (ok) ok = stream ? srv_sse_of(&out, chat, a) : srv_answer_of(&out, chat, a);
    free(out.p); free(body.p);
    return ok;
}

/* ./infer's greedy continuation of a prompt (what follows the echoed prompt) */
static int cli_greedy(const char *model, const char *prompt, int n, char *out, size_t size) {
    char cmd[1024], raw[8192];
    snprintf(cmd, sizeof cmd, "./infer -m %s -p '%s' -n %d --temp 0 2>/dev/null", model, prompt, n);
    if (run_cmd(cmd, raw, sizeof raw) != 0 || strncmp(raw, prompt, strlen(prompt))) return 0;
    snprintf(out, size, "%s", raw + strlen(prompt));
    size_t l = strlen(out);
    if (l && out[l - 1] == '\n') out[l - 1] = 0;             /* the line's end */
    return 1;
}

/* ./infer --chat's reply: its output less the line end it adds */
static void strip_nl(char *s) { const size_t n = strlen(s); if (n && s[n - 1] == '\n') s[n - 1] = 0; }

/* the value of one /metrics line */
static double srv_metric(int port, const char *name) {
    buf_t out = { 0 };
    double v = -1;
    if (http_req(port, "GET", "/metrics", NULL, NULL, &out, NULL) == 200) {
        char key[128];
        snprintf(key, sizeof key, "\n%s ", name);
        const char *at = strstr((const char *)out.p, key);
        if (at) v = atof(at + strlen(key));
    }
    free(out.p);
    return v;
}

#define SRV_MODEL SHARED "/models/stories260K.gguf"
#define SRV_SKIP() do { \
        if (!server_built()) SKIP("./infer was built without the server (libmicrohttpd-dev)"); \
        if (!file_exists(SRV_MODEL)) SKIP("../shared/models not found"); } while (0)

/* the options: --server refuses what it cannot do; a build without libmicrohttpd says how to get it */
static void test_server_cli(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    char out[4096];
    if (!server_built()) {
        CHECK(run_cmd("./infer --server 2>&1", out, sizeof out) != 0 && strstr(out, "libmicrohttpd"));
        SKIP("./infer was built without the server (libmicrohttpd-dev)");
    }
    CHECK(run_cmd("./infer --server 2>&1", out, sizeof out) == 1 && strstr(out, "no model"));
    CHECK(run_cmd("./infer -m x --server --port 70000 2>&1", out, sizeof out) == 1 && strstr(out, "--port"));
    CHECK(run_cmd("./infer -m x --port 8081 -p hi 2>&1", out, sizeof out) == 1 && strstr(out, "go with --server"));
    CHECK(run_cmd("./infer -m x --server -p hi 2>&1", out, sizeof out) == 1 && strstr(out, "--server takes"));
    CHECK(run_cmd("./infer -m x --server --api-key '' 2>&1", out, sizeof out) == 1 && strstr(out, "--api-key"));
    if (!file_exists(SRV_MODEL)) SKIP("../shared/models not found");
    CHECK(run_cmd("./infer -m " SRV_MODEL " --server --host 203.0.113.7 --port 0 2>&1", out, sizeof out) == 1 && strstr(out, "cannot listen"));
    CHECK(run_cmd("./infer -m " SRV_MODEL " --server -np 8 -c 16 --port 0 2>&1", out, sizeof out) == 1 && strstr(out, "-c"));
}

/* One client at a time on stories260K: every endpoint, greedy text the same as ./infer's,
 * streamed the same as whole, stop strings, lengths and usage, seeds, penalties, the page */
static void test_server_endpoints(void) {
    SRV_SKIP();
    srv_proc p;
    if (!server_start(&p, "-m " SRV_MODEL " -np 2 -t 1 --chat-template data/chat/phi-3.5.jinja")) { CHECK(0); return; }
    buf_t out = { 0 }, head = { 0 };
    infer__json_doc d;
    CHECK(http_req(p.port, "GET", "/health", NULL, NULL, &out, NULL) == 200 && strstr((const char *)out.p, "\"ok\""));
    CHECK(http_req(p.port, "GET", "/v1/models", NULL, NULL, &out, NULL) == 200);
    if (srv_json(&out, &d)) { CHECK(jstr(d.root, "data.0.id") && !strcmp(jstr(d.root, "data.0.id"), "stories260K.gguf")); infer__json_free(&d); }
    /* text completion, greedy: ./infer's continuation, whole and streamed */
    char want[8192], want2[8192];
    srv_answer a, b;
    CHECK(cli_greedy(SRV_MODEL, "Once upon a time", 24, want, sizeof want));
    const char *req = "{\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":0}";
    if (srv_complete(p.port, 0, 0, req, &a)) {
        CHECK_MSG(!strcmp(a.text, want), "server [%s] ./infer [%s]", a.text, want);
        CHECK(!strcmp(a.finish, "length") && a.completion_tokens == 24 && a.prompt_tokens == 5);
    }
    if (srv_complete(p.port, 0, 1, req, &b)) CHECK_MSG(!strcmp(b.text, want) && !strcmp(b.finish, "length") && b.chunks >= 2, "streamed [%s]", b.text);
    /* the prompt as token ids (no BOS added): the same ids ./infer --tokenize gives */
    char ids[1024];
    CHECK(run_cmd("./infer -m " SRV_MODEL " -p 'Once upon a time' --tokenize", ids, sizeof ids) == 0);
    CHECK(http_req(p.port, "POST", "/tokenize", NULL, "{\"content\":\"Once upon a time\",\"add_special\":true}", &out, NULL) == 200);
    for (char *c = ids; *c; c++) if (*c == ' ') *c = ',';
    ids[strcspn(ids, "\n")] = 0;
    char expect[1100];
    snprintf(expect, sizeof expect, "{\"tokens\":[%s]}", ids);
    CHECK_MSG(!strncmp((const char *)out.p, expect, strlen(expect)), "/tokenize: %s, --tokenize %s", (const char *)out.p, ids);
    char body[2048];
    snprintf(body, sizeof body, "{\"prompt\":[%s],\"max_tokens\":24,\"temperature\":0}", ids);
    if (srv_complete(p.port, 0, 0, body, &b)) CHECK_MSG(!strcmp(b.text, want), "ids: [%s]", b.text);
    snprintf(body, sizeof body, "{\"tokens\":[%s]}", ids);
    CHECK(http_req(p.port, "POST", "/detokenize", NULL, body, &out, NULL) == 200 && strstr((const char *)out.p, "Once upon a time\"}"));
    /* stop strings: the text up to the first one, finish_reason stop; a stop that never comes changes nothing */
    const char *at = strstr(want, "Lily");
    if (at && srv_complete(p.port, 0, 1, "{\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":0,\"stop\":[\"zzz\",\"Lily\"]}", &b))
        CHECK_MSG(strlen(b.text) == (size_t)(at - want) && !strncmp(b.text, want, (size_t)(at - want)) && !strcmp(b.finish, "stop"), "stop: [%s] %s", b.text, b.finish);
    if (srv_complete(p.port, 0, 0, "{\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":0,\"stop\":\"qqq\"}", &b)) CHECK(!strcmp(b.text, want));
    /* chat: ./infer --chat's first reply with the same template, whole and streamed, and its usage */
    CHECK(run_cmd("printf 'Hi\\n' | ./infer -m " SRV_MODEL " --chat --chat-template data/chat/phi-3.5.jinja -n 16 --temp 0 2>/dev/null", want2, sizeof want2) == 0);
    strip_nl(want2);
    const char *creq = "{\"model\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":16,\"temperature\":0,\"stream_options\":{\"include_usage\":true}}";
    if (srv_complete(p.port, 1, 0, creq, &a)) CHECK_MSG(!strcmp(a.text, want2) && a.completion_tokens > 0 && a.prompt_tokens > 5, "chat [%s], ./infer [%s]", a.text, want2);
    if (srv_complete(p.port, 1, 1, creq, &b)) CHECK_MSG(!strcmp(b.text, want2) && b.prompt_tokens == a.prompt_tokens && b.completion_tokens == a.completion_tokens, "streamed chat [%s] usage %ld", b.text, b.prompt_tokens);
    /* content as an array of text parts is the same message */
    if (srv_complete(p.port, 1, 0, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"H\"},{\"type\":\"text\",\"text\":\"i\"}]}],\"max_tokens\":16,\"temperature\":0}", &b))
        CHECK(!strcmp(b.text, want2));
    /* seeds reproduce a sampled reply; penalties change the greedy one */
    if (srv_complete(p.port, 0, 0, "{\"prompt\":\"Once\",\"max_tokens\":32,\"temperature\":1,\"seed\":7}", &a) &&
        srv_complete(p.port, 0, 1, "{\"prompt\":\"Once\",\"max_tokens\":32,\"temperature\":1,\"seed\":7}", &b)) CHECK_MSG(!strcmp(a.text, b.text), "[%s] vs [%s]", a.text, b.text);
    CHECK(cli_greedy(SRV_MODEL, "Once upon a time", 60, want, sizeof want));
    const char *pen[] = { "\"frequency_penalty\":1.5", "\"presence_penalty\":1.5", "\"repeat_penalty\":1.5" };
    for (int i = 0; i < 3; i++) {
        snprintf(body, sizeof body, "{\"prompt\":\"Once upon a time\",\"max_tokens\":60,\"temperature\":0,%s}", pen[i]);
        if (srv_complete(p.port, 0, 0, body, &b)) CHECK_MSG(strcmp(b.text, want) != 0, "%s changed nothing", pen[i]);
    }
    snprintf(body, sizeof body, "{\"prompt\":\"Once upon a time\",\"max_tokens\":60,\"temperature\":0,\"frequency_penalty\":0,\"presence_penalty\":0}");
    if (srv_complete(p.port, 0, 0, body, &b)) CHECK(!strcmp(b.text, want));
    /* the page: one HTML file, no external assets, streaming from the chat endpoint */
    CHECK(http_req(p.port, "GET", "/", NULL, NULL, &out, &head) == 200 && strcasestr((const char *)head.p, "text/html"));
    CHECK(strstr((const char *)out.p, "<html") && strstr((const char *)out.p, "/v1/chat/completions") && strstr((const char *)out.p, "stream:true") &&
          !strstr((const char *)out.p, "src=\"http") && !strstr((const char *)out.p, "href=\"http"));
    /* /metrics: Prometheus text with the figures */
    CHECK(http_req(p.port, "GET", "/metrics", NULL, NULL, &out, &head) == 200 && strcasestr((const char *)head.p, "text/plain"));
    CHECK(strstr((const char *)out.p, "# TYPE infer_requests_processing gauge\n") && strstr((const char *)out.p, "\ninfer_kv_blocks_free "));
    CHECK(srv_metric(p.port, "infer_tokens_predicted_total") > 100 && srv_metric(p.port, "infer_requests_total") >= 12 && srv_metric(p.port, "infer_requests_processing") == 0);
    CHECK(server_stop(&p) == 0);
    free(out.p); free(head.p);
}

/* Bad input: each case gets its status and an OpenAI error object, and the next good
 * request is answered */
static void test_server_errors(void) {
    SRV_SKIP();
    srv_proc p;
    if (!server_start(&p, "-m " SRV_MODEL " -np 2 -c 128 -t 1 --api-key sesame")) { CHECK(0); return; }
    const char *auth = "Authorization: Bearer sesame\r\n";
    static const char big_prompt[] = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen "
                                     "nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven";
    char toolong[1024];
    snprintf(toolong, sizeof toolong, "{\"prompt\":\"%s %s\"}", big_prompt, big_prompt);
    const struct { const char *method, *path, *headers, *body; int status; const char *code; } cases[] = {
        { "POST", "/v1/completions", "", "{\"prompt\":\"hi\",\"max_tokens\":2}", 401, "invalid_api_key" },
        { "POST", "/v1/completions", "Authorization: Bearer sesamf\r\n", "{\"prompt\":\"hi\",\"max_tokens\":2}", 401, "invalid_api_key" },
        { "POST", "/v1/completions", "Authorization: Bearer sesame2\r\n", "{\"prompt\":\"hi\",\"max_tokens\":2}", 401, "invalid_api_key" },
        { "GET", "/v1/models", "Authorization: Basic sesame\r\n", NULL, 401, "invalid_api_key" },
        { "GET", "/nowhere", NULL, NULL, 404, "not_found" },
        { "GET", "/v1/completions", NULL, NULL, 405, "method_not_allowed" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\"", 400, "invalid_json" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",}", 400, "invalid_json" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"h\xff\xfei\"}", 400, "invalid_json" },
        { "POST", "/v1/completions", NULL, "", 400, "invalid_json" },
        { "POST", "/v1/completions", NULL, "[1,2]", 400, "invalid_type" },
        { "POST", "/v1/completions", NULL, "{\"max_tokens\":2}", 400, "missing_field" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":7}", 400, "invalid_type" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":[1,99999]}", 400, "invalid_value" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":[1,-3]}", 400, "invalid_value" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":[\"a\",\"b\"]}", 400, "unsupported_value" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"temperature\":\"hot\"}", 400, "invalid_type" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"temperature\":-1}", 400, "invalid_value" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"top_p\":1.5}", 400, "invalid_value" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"max_tokens\":1.5}", 400, "invalid_type" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"max_tokens\":\"5\"}", 400, "invalid_type" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"stream\":1}", 400, "invalid_type" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"n\":2}", 400, "invalid_value" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"stop\":[1]}", 400, "invalid_type" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]}", 400, "invalid_value" },
        { "POST", "/v1/completions", NULL, "{\"prompt\":\"hi\",\"logprobs\":true}", 400, "unsupported_value" },
        { "POST", "/v1/completions", NULL, toolong, 400, "context_length_exceeded" },
        { "POST", "/v1/chat/completions", NULL, "{\"messages\":[]}", 400, "invalid_type" },
        { "POST", "/v1/chat/completions", NULL, "{\"messages\":\"hi\"}", 400, "invalid_type" },
        { "POST", "/v1/chat/completions", NULL, "{\"messages\":[{\"content\":\"hi\"}]}", 400, "invalid_type" },
        { "POST", "/v1/chat/completions", NULL, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}", 400, "unsupported_value" },
        { "POST", "/v1/chat/completions", NULL, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", 400, "invalid_value" },   /* no chat template */
        { "POST", "/tokenize", NULL, "{\"content\":5}", 400, "invalid_type" },
        { "POST", "/detokenize", NULL, "{\"tokens\":[\"a\"]}", 400, "invalid_value" },
        { "POST", "/v1/completions", "Content-Length: 999999999\r\n", NULL, 413, "body_too_large" },
    };
    buf_t out = { 0 };
    srv_answer a;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char headers[256];
        snprintf(headers, sizeof headers, "%s", cases[i].headers ? cases[i].headers : auth);
        const int st = http_req(p.port, cases[i].method, cases[i].path, headers, cases[i].body, &out, NULL);
        infer__json_doc d;
        int ok = st == cases[i].status;
        if (ok && srv_json(&out, &d)) {
            const char *code = jstr(d.root, "error.code"), *msg = jstr(d.root, "error.message"), *type = jstr(d.root, "error.type");
            ok = code && !strcmp(code, cases[i].code) && msg && *msg && type && jpath(d.root, "error.param");
            infer__json_free(&d);
        } else ok = 0;
        CHECK_MSG(ok, "case %zu (%s %s %.60s): status %d, want %d %s: %.300s", i, cases[i].method, cases[i].path, cases[i].body ? cases[i].body : "",
                  st, cases[i].status, cases[i].code, out.p ? (const char *)out.p : "");
        /* and the server still answers */
        const int good = http_req(p.port, "POST", "/v1/completions", auth, "{\"prompt\":\"Once\",\"max_tokens\":3,\"temperature\":0}", &out, NULL);
        CHECK_MSG(good == 200 && srv_answer_of(&out, 0, &a) && a.completion_tokens == 3, "after case %zu: %d %.200s", i, good, out.p ? (const char *)out.p : "");
    }
    /* /health needs no key; a body over the limit actually sent is refused too */
    CHECK(http_req(p.port, "GET", "/health", NULL, NULL, &out, NULL) == 200);
    size_t nb = (8u << 20) + 100;
    char *big = malloc(nb + 1);
    memset(big, ' ', nb);
    big[nb] = 0;
    big[0] = '{'; big[nb - 1] = '}';
    const int st = http_req(p.port, "POST", "/v1/completions", auth, big, &out, NULL);
    CHECK_MSG(st == 413 || st == -1, "an oversized body: %d", st);       /* the server may close before the body is sent */
    free(big);
    CHECK(http_req(p.port, "POST", "/v1/completions", auth, "{\"prompt\":\"Once\",\"max_tokens\":3}", &out, NULL) == 200);
    /* a stalled client (headers never finished) does not hold the others up */
    const int fd = http_connect(p.port);
    CHECK(fd >= 0 && http_send_all(fd, "POST /v1/completions HTTP/1.1\r\nHost: x\r\n", 40));
    CHECK(http_req(p.port, "POST", "/v1/completions", auth, "{\"prompt\":\"Once\",\"max_tokens\":3}", &out, NULL) == 200);
    if (fd >= 0) close(fd);
    CHECK(server_stop(&p) == 0);
    free(out.p);
}

/* Many clients at once: 32 requests (16 prompts, some sharing a long start, each asked
 * whole and streamed) over 8 sequences; every reply equals its prompt's ./infer --temp 0
 * run, none lost or mixed; the shared starts come from the prefix cache; afterwards the
 * pool is idle */
typedef struct { int port, chat, stream; char prompt[256]; srv_answer a; int ok; } srv_client;
static void *srv_client_run(void *arg) {
    srv_client *c = arg;
    char body[1024];
    snprintf(body, sizeof body, "{\"prompt\":\"%s\",\"max_tokens\":20,\"temperature\":0}", c->prompt);
    c->ok = srv_complete(c->port, 0, c->stream, body, &c->a);
    return NULL;
}
static void test_server_concurrent(void) {
    SRV_SKIP();
    static const char *starts[4] = { "Once upon a time", "The little dog", "Lily wanted to", "One day, a big bear walked into the forest and saw a tree with" };
    static const char *ends[4] = { "", " and", " the sun", " a red ball" };
    srv_client cl[32];
    char want[16][8192];
    for (int i = 0; i < 16; i++) {
        snprintf(cl[i].prompt, sizeof cl[i].prompt, "%s%s", starts[i % 4], ends[i / 4]);
        CHECK(cli_greedy(SRV_MODEL, cl[i].prompt, 20, want[i], sizeof want[i]));
    }
    srv_proc p;
    if (!server_start(&p, "-m " SRV_MODEL " -np 8 -t 2")) { CHECK(0); return; }
    pthread_t th[32];
    for (int i = 0; i < 32; i++) {
        if (i >= 16) memcpy(cl[i].prompt, cl[i - 16].prompt, sizeof cl[i].prompt);
        cl[i].port = p.port;
        cl[i].stream = i >= 16;
        pthread_create(&th[i], NULL, srv_client_run, &cl[i]);
    }
    for (int i = 0; i < 32; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 32; i++)
        CHECK_MSG(cl[i].ok && !strcmp(cl[i].a.text, want[i % 16]) && cl[i].a.completion_tokens != 0, "client %d (%s): [%s], alone [%s]", i, cl[i].prompt, cl[i].a.text, want[i % 16]);
    CHECK_MSG(srv_metric(p.port, "infer_prefix_cache_hit_tokens_total") > 16, "prefix cache hits: %g", srv_metric(p.port, "infer_prefix_cache_hit_tokens_total"));
    CHECK(srv_metric(p.port, "infer_requests_total") == 32 && srv_metric(p.port, "infer_requests_processing") == 0 && srv_metric(p.port, "infer_requests_queued") == 0);
    CHECK(srv_metric(p.port, "infer_kv_blocks_used") == 0);
    CHECK(server_stop(&p) == 0);
}

/* Clients that leave: a stream closed after its first events and a whole answer whose
 * client closes at once are cancelled; their sequences end and their blocks come back
 * (/metrics at its idle figures); the server then answers as before */
static void test_server_disconnect(void) {
    SRV_SKIP();
    srv_proc p;
    if (!server_start(&p, "-m " SRV_MODEL " -np 2 -t 1")) { CHECK(0); return; }
    const double idle_free = srv_metric(p.port, "infer_kv_blocks_free");
    const char *req = "{\"prompt\":\"Once upon a time\",\"max_tokens\":1900,\"temperature\":0,\"stream\":true}";
    int fd = http_connect(p.port);
    CHECK(fd >= 0 && http_write(fd, "POST", "/v1/completions", NULL, req, strlen(req)));
    char tmp[4096];
    size_t got = 0;
    while (got < 2000) { const ssize_t k = recv(fd, tmp, sizeof tmp, 0); if (k <= 0) break; got += (size_t)k; }
    CHECK(got >= 2000);
    CHECK(srv_metric(p.port, "infer_requests_processing") == 1 && srv_metric(p.port, "infer_kv_blocks_used") > 0);
    close(fd);
    const char *req2 = "{\"prompt\":\"Once upon a time\",\"max_tokens\":1900,\"temperature\":0}";
    fd = http_connect(p.port);
    CHECK(fd >= 0 && http_write(fd, "POST", "/v1/completions", NULL, req2, strlen(req2)));
    usleep(50 * 1000);
    close(fd);
    double cancelled = 0, busy = 1, used = 1;
    for (int i = 0; i < 100 && (cancelled < 2 || busy || used); i++) {
        usleep(20 * 1000);
        cancelled = srv_metric(p.port, "infer_requests_cancelled_total");
        busy = srv_metric(p.port, "infer_requests_processing") + srv_metric(p.port, "infer_requests_queued");
        used = srv_metric(p.port, "infer_kv_blocks_used");
    }
    CHECK_MSG(cancelled == 2 && busy == 0 && used == 0, "cancelled %g, in flight %g, blocks used %g", cancelled, busy, used);
    CHECK(srv_metric(p.port, "infer_tokens_predicted_total") < 1900);
    CHECK(srv_metric(p.port, "infer_kv_blocks_free") + srv_metric(p.port, "infer_kv_blocks_cached") == idle_free);
    srv_answer a;
    CHECK(srv_complete(p.port, 0, 0, "{\"prompt\":\"Once\",\"max_tokens\":4,\"temperature\":0}", &a) && a.completion_tokens == 4);
    CHECK(server_stop(&p) == 0);
}

/* NODE_PATH for the npm packages the tools/ scripts use (a global install's folder too);
 * 0 when node or the package is missing */
static int node_has(const char *pkg, char *env, size_t size) {
    char out[512], cmd[1024];
    if (run_cmd("command -v node >/dev/null 2>&1 && npm root -g 2>/dev/null", out, sizeof out) != 0) return 0;
    out[strcspn(out, "\n")] = 0;
    snprintf(env, size, "NODE_PATH='%s'", out);
    snprintf(cmd, sizeof cmd, "%s node -e \"require('%s')\" 2>/dev/null", env, pkg);
    return run_cmd(cmd, out, sizeof out) == 0;
}

/* The official OpenAI JavaScript SDK (npm openai) against the server on stories260K and on
 * a synthesized llama (its own chat template): chat and completions, whole and streamed,
 * each the same as ./infer's greedy text; n = 2 comes back as the SDK's APIError 400 */
static void test_server_openai_sdk(void) {
    SRV_SKIP();
    char env[600];
    if (!node_has("openai", env, sizeof env)) SKIP("node or its openai package is missing (npm install -g openai)");
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    char out[16384], cmd[4096], want[8192], want_chat[8192];
    CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_srv_synth.gguf --type q8_0 2>&1", out, sizeof out) == 0);
    const char *models[2][2] = { { SRV_MODEL, "--chat-template data/chat/phi-3.5.jinja" }, { tmp_path("infer_srv_synth.gguf"), "" } };
    for (int mi = 0; mi < 2; mi++) {
        CHECK(cli_greedy(models[mi][0], "Once upon a time", 16, want, sizeof want));
        snprintf(cmd, sizeof cmd, "printf 'Hi\\n' | ./infer -m %s %s --chat -n 16 --temp 0 2>/dev/null", models[mi][0], models[mi][1]);
        CHECK(run_cmd(cmd, want_chat, sizeof want_chat) == 0);
        strip_nl(want_chat);
        srv_proc p;
        snprintf(cmd, sizeof cmd, "-m %s %s -np 2 -t 1", models[mi][0], models[mi][1]);
        if (!server_start(&p, cmd)) { CHECK(0); continue; }
        snprintf(cmd, sizeof cmd, "%s node tools/server_openai.js http://127.0.0.1:%d/v1 none 'Once upon a time' Hi 16 2>&1", env, p.port);
        const int rc = run_cmd(cmd, out, sizeof out);
        infer__json_doc d;
        infer_error err;
        CHECK_MSG(rc == 0, "%s: %s", models[mi][0], out);
        if (rc == 0 && infer__json_parse(&d, out, strlen(out), &err) == INFER_OK) {
            const char *c = jstr(d.root, "completion"), *cs = jstr(d.root, "completion_stream"), *ch = jstr(d.root, "chat"), *chs = jstr(d.root, "chat_stream");
            CHECK_MSG(c && cs && !strcmp(c, want) && !strcmp(cs, want), "%s: completion [%s] streamed [%s], ./infer [%s]", models[mi][0], c, cs, want);
            CHECK_MSG(ch && chs && !strcmp(ch, want_chat) && !strcmp(chs, want_chat), "%s: chat [%s] streamed [%s], ./infer --chat [%s]", models[mi][0], ch, chs, want_chat);
            const char *f[4] = { "completion_finish", "completion_stream_finish", "chat_finish", "chat_stream_finish" };
            for (int i = 0; i < 4; i++) CHECK(jstr(d.root, f[i]) && (!strcmp(jstr(d.root, f[i]), "length") || !strcmp(jstr(d.root, f[i]), "stop")));
            CHECK(jint(d.root, "completion_usage.prompt_tokens") > 0 && jint(d.root, "chat_stream_usage.completion_tokens") == jint(d.root, "chat_usage.completion_tokens"));
            CHECK(jint(d.root, "error_status") == 400 && jstr(d.root, "error_code") && !strcmp(jstr(d.root, "error_code"), "invalid_value"));
            infer__json_free(&d);
        } else CHECK_MSG(0, "not JSON: %s", out);
        CHECK(server_stop(&p) == 0);
    }
    remove(tmp_path("infer_srv_synth.gguf"));
}

/* The chat page in a headless browser (Debian's chromium, driven by tools/server_page.js):
 * it loads, sends ?prompt=, and shows the reply streamed in several events -- the same text
 * ./infer --chat gives */
static void test_server_page_browser(void) {
    SRV_SKIP();
    char env[600], out[8192], want[8192], cmd[1024];
    if (!node_has("child_process", env, sizeof env)) SKIP("node is missing");
    if (run_cmd("command -v chromium >/dev/null 2>&1", out, sizeof out) != 0) SKIP("chromium is missing (apt-get install chromium)");
    CHECK(run_cmd("printf 'Hi\\n' | ./infer -m " SRV_MODEL " --chat-template data/chat/phi-3.5.jinja --chat -n 16 --temp 0 2>/dev/null", want, sizeof want) == 0);
    strip_nl(want);
    srv_proc p;
    if (!server_start(&p, "-m " SRV_MODEL " --chat-template data/chat/phi-3.5.jinja -np 2 -t 1")) { CHECK(0); return; }
    snprintf(cmd, sizeof cmd, "node tools/server_page.js 'http://127.0.0.1:%d/?prompt=Hi&max=16&temp=0' 30000 2>&1", p.port);
    const int rc = run_cmd(cmd, out, sizeof out);
    infer__json_doc d;
    infer_error err;
    if (rc == 0 && infer__json_parse(&d, out, strlen(out), &err) == INFER_OK) {
        const infer__json *done = jpath(d.root, "done");
        const char *reply = jstr(d.root, "reply");
        CHECK_MSG(done && done->type == INFER__JSON_TRUE && reply && !strcmp(reply, want) && jint(d.root, "events") > 1, "page: %s; ./infer --chat [%s]", out, want);
        infer__json_free(&d);
    } else CHECK_MSG(0, "tools/server_page.js: rc %d: %s", rc, out);
    CHECK(server_stop(&p) == 0);
}

/* --timeout: a client that stalls in its headers is dropped after it; a stream queued
 * behind a long answer for longer than that is kept open by SSE comments and answered */
typedef struct { int port; srv_answer a; int ok; } srv_bg;
static void *srv_long_request(void *arg) {
    srv_bg *b = arg;
    b->ok = srv_complete(b->port, 0, 0, "{\"prompt\":\"Once upon a time\",\"max_tokens\":1200,\"temperature\":0}", &b->a);
    return NULL;
}
static void test_server_timeout(void) {
    SRV_SKIP();
    char want[8192];
    CHECK(cli_greedy(SRV_MODEL, "Once upon a time", 6, want, sizeof want));
    srv_proc p;
    if (!server_start(&p, "-m " SRV_MODEL " -np 1 -t 1 --timeout 1")) { CHECK(0); return; }
    const int fd = http_connect(p.port);
    CHECK(fd >= 0 && http_send_all(fd, "POST /v1/completions HTTP/1.1\r\nHost: x\r\n", 40));
    srv_bg bg;
    memset(&bg, 0, sizeof bg);
    bg.port = p.port;
    pthread_t th;
    pthread_create(&th, NULL, srv_long_request, &bg);
    usleep(100 * 1000);
    const double t0 = infer_time_seconds();
    srv_answer a;
    CHECK(srv_complete(p.port, 0, 1, "{\"prompt\":\"Once upon a time\",\"max_tokens\":6,\"temperature\":0}", &a) && !strcmp(a.text, want));
    const double waited = infer_time_seconds() - t0;
    CHECK_MSG(waited < 0.6 || a.comments > 0, "queued %.2f s, %d comments", waited, a.comments);
    pthread_join(th, NULL);
    CHECK(bg.ok && bg.a.completion_tokens == 1200);
    /* the stalled client was closed by now (1 s of silence; its connection thread checks each second) */
    char c;
    struct timeval tv = { 4, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const double t1 = infer_time_seconds();
    CHECK_MSG(fd >= 0 && recv(fd, &c, 1, 0) == 0 && infer_time_seconds() - t1 < 3.5, "the stalled connection was not closed");
    if (fd >= 0) close(fd);
    CHECK(server_stop(&p) == 0);
}

/* Mutated requests: valid bodies with bytes flipped, cut, doubled and swapped for JSON
 * punctuation (a fixed seed), 300 of them at the completion, chat and tokenizer endpoints;
 * each answer is 200 or an error status with an OpenAI error object, and the server keeps
 * answering */
/* n mutated requests to the server at port; 0 (after a failed check) at the first answer
 * that is neither a 200 nor an error object */
static int srv_fuzz(int port, int n) {
    static const struct { const char *path, *body; } seeds[] = {
        { "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0.5,\"top_k\":10,\"stop\":[\"a\",\"b\"],\"seed\":3}" },
        { "/v1/completions", "{\"prompt\":[1,403,407],\"max_tokens\":3,\"stream\":true,\"stream_options\":{\"include_usage\":true},\"presence_penalty\":0.5}" },
        { "/v1/chat/completions", "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}]}],\"max_tokens\":4,\"n\":1}" },
        { "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi \\u00e9\\ud83d\\ude00\"}],\"stream\":true,\"max_completion_tokens\":3,\"top_p\":0.9,\"min_p\":0.1}" },
        { "/tokenize", "{\"content\":\"Once upon a time\",\"add_special\":true}" },
        { "/detokenize", "{\"tokens\":[1,403,407,410]}" },
    };
    static const char punct[] = "{}[]\":,\\0-e.9 tfn\xff\xc3";
    uint64_t st = 0x5eedf00dull;
    buf_t out = { 0 }, body = { 0 };
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        const int s = (int)(i % (sizeof seeds / sizeof seeds[0]));
        body.n = 0;
        hb_str(&body, seeds[s].body);
        for (int m = 0, nm = 1 + (int)((st >> 7) % 4); m < nm && body.n > 0; m++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            const size_t at = (size_t)(st >> 33) % body.n;
            switch ((st >> 20) % 4) {
            case 0: body.p[at] = (uint8_t)punct[(st >> 40) % (sizeof punct - 1)]; break;
            case 1: body.n = at; break;                                          /* cut */
            case 2: { uint8_t c = body.p[at]; b_put(&body, &c, 1); memmove(body.p + at + 1, body.p + at, body.n - at - 1); break; }
            default: body.p[at] ^= (uint8_t)(1u << ((st >> 50) % 8)); break;  /* a bit flipped */
            }
        }
        b_put(&body, "", 1);                  /* the body is sent up to its first NUL */
        const int status = http_req(port, "POST", seeds[s].path, NULL, (const char *)body.p, &out, NULL);
        ok = status == 200;
        if (status >= 400 && status < 500) {
            infer__json_doc d;
            infer_error err;
            ok = infer__json_parse(&d, (const char *)out.p, out.n, &err) == INFER_OK && jstr(d.root, "error.message") && jstr(d.root, "error.type");
            if (ok) infer__json_free(&d);
        }
        CHECK_MSG(ok, "request %d to %s [%s]: status %d: %.300s", i, seeds[s].path, (const char *)body.p, status, out.p ? (const char *)out.p : "");
    }
    free(out.p); free(body.p);
    return ok;
}

static void test_server_fuzz_requests(void) {
    SRV_SKIP();
    srv_proc p;
    if (!server_start(&p, "-m " SRV_MODEL " -np 4 -c 512 -n 8 -t 1 --chat-template data/chat/phi-3.5.jinja")) { CHECK(0); return; }
    srv_fuzz(p.port, 300);
    srv_answer a;
    CHECK(srv_complete(p.port, 0, 0, "{\"prompt\":\"Once\",\"max_tokens\":4,\"temperature\":0}", &a) && a.completion_tokens == 4);
    CHECK(srv_metric(p.port, "infer_requests_processing") == 0 && srv_metric(p.port, "infer_kv_blocks_used") == 0);
    CHECK(server_stop(&p) == 0);
}

/* response_format, and llama-server's grammar and json_schema fields, on a random-weight llama
 * (it would emit anything, so a constraint not applied shows): chat and completions, whole and
 * streamed, greedy and at temperature 1 -- json_object replies are JSON objects, json_schema
 * replies have the required properties with their types, a GBNF grammar's replies are its
 * sentences; a constrained request beside an unconstrained one leaves the other's text as it
 * is alone; a bad schema, an unsupported keyword or a bad grammar is a 400 naming it, and the
 * next request is answered; a constrained stream whose client leaves is cancelled */
typedef struct { int port, chat, stream; char body[1024]; srv_answer a; int ok; } srv_rf_client;
static void *srv_rf_run(void *arg) {
    srv_rf_client *c = arg;
    c->ok = srv_complete(c->port, c->chat, c->stream, c->body, &c->a);
    return NULL;
}
/* A json_object reply: a sentence of the any-object grammar gobj that parses as a JSON
 * object (1, with its parse in *d), or, cut by max_tokens, a prefix of one (0; a random model
 * can open arrays for as long as it is let). A failed check otherwise. */
static int srv_rf_object(const srv_answer *a, const infer_grammar *gobj, const char *what, infer__json_doc *d) {
    infer_error err;
    const int m = gobj ? infer_grammar_match(gobj, a->text, strlen(a->text)) : -1;
    if (!strcmp(a->finish, "length")) { CHECK_MSG(m >= 0, "%s: cut, and not the start of a JSON object: '%s'", what, a->text); return 0; }
    CHECK_MSG(m == 1 && !strcmp(a->finish, "stop"), "%s: finish_reason %s, not a JSON object: '%s'", what, a->finish, a->text);
    if (infer__json_parse(d, a->text, strlen(a->text), &err) != INFER_OK) {
        CHECK_MSG(strstr(err.msg, "nesting deeper"), "%s: not JSON (%s): '%s'", what, err.msg, a->text);   /* deeper than the parser goes */
        return 0;
    }
    if (d->root->type == INFER__JSON_OBJECT) return 1;
    CHECK_MSG(0, "%s: not an object: '%s'", what, a->text);
    infer__json_free(d);
    return 0;
}
static void test_server_response_format(void) {
    if (!server_built()) SKIP("./infer was built without the server (libmicrohttpd-dev)");
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    char out[4096], body[2048], what[256];
    CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_srv_rf.gguf --type q8_0 2>&1", out, sizeof out) == 0);
    srv_proc p;
    snprintf(body, sizeof body, "-m %s -np 4 -t 1", tmp_path("infer_srv_rf.gguf"));
    if (!server_start(&p, body)) { CHECK(0); return; }
    static const char schema[] = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":12},\"age\":{\"type\":\"integer\"},"
                                 "\"ok\":{\"type\":\"boolean\"},\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"b\"]},\"maxItems\":3},"
                                 "\"note\":{\"type\":\"string\",\"maxLength\":4}},\"required\":[\"name\",\"age\",\"ok\",\"tags\"],\"additionalProperties\":false}";
    static const char gbnf[] = "root ::= \"(\" num ((\"+\" | \"*\") num){0,4} \")\"\nnum ::= \"-\"? [0-9]{1,3}\n";
    char gbnf_json[256];                                  /* the grammar as a JSON string */
    { buf_t gj = { 0 }; hb_str(&gj, "\""); for (const char *c = gbnf; *c; c++) { if (*c == '"' || *c == '\\') hb_str(&gj, "\\"); if (*c == '\n') hb_str(&gj, "\\n"); else b_put(&gj, c, 1); }
      hb_str(&gj, "\""); b_put(&gj, "", 1); snprintf(gbnf_json, sizeof gbnf_json, "%s", (const char *)gj.p); free(gj.p); }
    infer_grammar *g = NULL;
    infer_error gerr;
    CHECK_MSG(infer_grammar_parse(&g, gbnf, strlen(gbnf), &gerr) == INFER_OK, "%s", gerr.msg);
    infer_grammar *gobj = NULL;                           /* --json's: any JSON object */
    char *obj_gbnf = NULL;
    CHECK(infer_json_schema_to_grammar("{\"type\": \"object\"}", 18, &obj_gbnf, &gerr) == INFER_OK &&
          infer_grammar_parse(&gobj, obj_gbnf, strlen(obj_gbnf), &gerr) == INFER_OK);
    infer_free(obj_gbnf);
    int n_objects = 0, n_whole = 0;
    const char *forms[4];
    char f_schema[1024], f_js[1024], f_gr[512];
    snprintf(f_schema, sizeof f_schema, "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"person\",\"schema\":%s,\"strict\":true}}", schema);
    snprintf(f_js, sizeof f_js, "\"json_schema\":%s", schema);
    snprintf(f_gr, sizeof f_gr, "\"grammar\":%s", gbnf_json);
    forms[0] = "\"response_format\":{\"type\":\"json_object\"}";
    forms[1] = f_schema;
    forms[2] = f_js;
    forms[3] = f_gr;
    for (int fi = 0; fi < 4; fi++)
        for (int chat = 0; chat < 2; chat++)
            for (int stream = 0; stream < 2; stream++)
                for (int t = 0; t < 2; t++) {
                    srv_answer a;
                    snprintf(body, sizeof body, "{%s,\"max_tokens\":600,\"temperature\":%d,\"seed\":%d,%s}",
                             chat ? "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" : "\"prompt\":\"Once upon a time\"", t, 11 + fi * 8 + chat * 4 + stream * 2 + t, forms[fi]);
                    snprintf(what, sizeof what, "form %d, %s, %s, temperature %d", fi, chat ? "chat" : "completion", stream ? "streamed" : "whole", t);
                    if (!srv_complete(p.port, chat, stream, body, &a)) continue;
                    if (fi == 3) {
                        CHECK_MSG(g && infer_grammar_match(g, a.text, strlen(a.text)) == 1 && !strcmp(a.finish, "stop"), "%s: not a sentence of the grammar: '%s' (%s)", what, a.text, a.finish);
                        continue;
                    }
                    infer__json_doc d;
                    if (fi == 0) {
                        n_objects++;
                        if (srv_rf_object(&a, gobj, what, &d)) { n_whole++; infer__json_free(&d); }
                        continue;
                    }
                    infer_error err;
                    CHECK_MSG(!strcmp(a.finish, "stop"), "%s: finish_reason %s: '%s'", what, a.finish, a.text);
                    if (infer__json_parse(&d, a.text, strlen(a.text), &err) != INFER_OK) { CHECK_MSG(0, "%s: not JSON (%s): '%s'", what, err.msg, a.text); continue; }
                    const infer__json *name = infer__json_get(d.root, "name"), *age = infer__json_get(d.root, "age"), *ok = infer__json_get(d.root, "ok");
                    const infer__json *tags = infer__json_get(d.root, "tags"), *note = infer__json_get(d.root, "note");
                    int good = d.root->type == INFER__JSON_OBJECT && name && name->type == INFER__JSON_STRING && name->len <= 12 && age && age->type == INFER__JSON_NUMBER && age->is_int &&
                               ok && (ok->type == INFER__JSON_TRUE || ok->type == INFER__JSON_FALSE) && tags && tags->type == INFER__JSON_ARRAY && tags->len <= 3 &&
                               (!note || (note->type == INFER__JSON_STRING && note->len <= 4));
                    for (uint32_t k = 0; good && k < tags->len; k++) good = tags->items[k].type == INFER__JSON_STRING && (!strcmp(tags->items[k].str, "a") || !strcmp(tags->items[k].str, "b"));
                    for (uint32_t k = 0; good && k < d.root->len; k++) good = !!strstr(" name age ok tags note ", d.root->items[k].key);
                    CHECK_MSG(good, "%s: does not follow the schema: '%s'", what, a.text);
                    infer__json_free(&d);
                }
    CHECK_MSG(n_whole * 4 >= n_objects * 3, "%d of %d json_object replies were whole objects", n_whole, n_objects);
    /* a constrained request beside unconstrained ones: the grammar is on its sequence only */
    srv_answer alone;
    const char *plain = "{\"prompt\":\"Once upon a time\",\"max_tokens\":40,\"temperature\":0}";
    if (srv_complete(p.port, 0, 0, plain, &alone)) {
        srv_rf_client cl[4];
        pthread_t th[4];
        for (int i = 0; i < 4; i++) {
            memset(&cl[i], 0, sizeof cl[i]);
            cl[i].port = p.port;
            cl[i].stream = i & 1;
            if (i < 2) snprintf(cl[i].body, sizeof cl[i].body, "%s", plain);
            else snprintf(cl[i].body, sizeof cl[i].body, "{\"prompt\":\"Once upon a time\",\"max_tokens\":600,\"temperature\":0,%s}", i == 2 ? forms[0] : f_gr);
            pthread_create(&th[i], NULL, srv_rf_run, &cl[i]);
        }
        for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < 2; i++) CHECK_MSG(cl[i].ok && !strcmp(cl[i].a.text, alone.text), "unconstrained beside constrained: '%s', alone '%s'", cl[i].a.text, alone.text);
        infer__json_doc d;
        if (cl[2].ok && srv_rf_object(&cl[2].a, gobj, "json_object beside others", &d)) infer__json_free(&d);
        CHECK_MSG(cl[3].ok && g && infer_grammar_match(g, cl[3].a.text, strlen(cl[3].a.text)) == 1, "grammar beside others: '%s'", cl[3].a.text);
    }
    /* bad forms: 400 with the problem named; the server goes on */
    const struct { const char *form, *code, *says; } bad[] = {
        { "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":\"object\",\"patternProperties\":{\"a\":{}}}}}", "unsupported_value", "unsupported keyword 'patternProperties'" },
        { "\"json_schema\":{\"type\":\"objet\"}", "unsupported_value", "unknown type 'objet'" },
        { "\"json_schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"^a\"}}}", "unsupported_value", "'pattern'" },
        { "\"grammar\":\"root ::= \\\"a\\\" | b\"", "invalid_value", "line 1, column 16: rule 'b' is used but not defined" },
        { "\"grammar\":\"root ::= \\\"a\"", "invalid_value", "line 1" },
        { "\"grammar\":\"start ::= \\\"a\\\"\"", "invalid_value", "no rule named 'root'" },
        { "\"grammar\":5", "invalid_type", "'grammar'" },
        { "\"response_format\":{\"type\":\"xml\"}", "unsupported_value", "\"xml\"" },
        { "\"response_format\":\"json\"", "invalid_type", "'response_format'" },
        { "\"response_format\":{\"type\":\"json_schema\"}", "missing_field", "'response_format.json_schema'" },
        { "\"response_format\":{\"type\":\"json_object\"},\"grammar\":\"root ::= \\\"a\\\"\"", "invalid_value", "give one of" },
    };
    buf_t o = { 0 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int chat = 0; chat < 2; chat++) {
            snprintf(body, sizeof body, "{%s,\"max_tokens\":8,%s}", chat ? "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" : "\"prompt\":\"Once\"", bad[i].form);
            const int st = http_req(p.port, "POST", chat ? "/v1/chat/completions" : "/v1/completions", NULL, body, &o, NULL);
            infer__json_doc d;
            int ok = st == 400 && srv_json(&o, &d);
            if (ok) {
                const char *code = jstr(d.root, "error.code"), *msg = jstr(d.root, "error.message"), *type = jstr(d.root, "error.type");
                ok = code && !strcmp(code, bad[i].code) && msg && strstr(msg, bad[i].says) && type && !strcmp(type, "invalid_request_error");
                infer__json_free(&d);
            }
            CHECK_MSG(ok, "bad form %zu (%s): status %d, want 400 %s '%s': %.300s", i, bad[i].form, st, bad[i].code, bad[i].says, o.p ? (const char *)o.p : "");
        }
        srv_answer a;
        snprintf(body, sizeof body, "{\"prompt\":\"Once\",\"max_tokens\":600,\"temperature\":1,%s}", i & 1 ? forms[0] : f_gr);
        if (srv_complete(p.port, 0, (int)(i & 1), body, &a)) {
            infer__json_doc d;
            if (i & 1) { if (srv_rf_object(&a, gobj, "after a bad form", &d)) infer__json_free(&d); }
            else CHECK_MSG(g && infer_grammar_match(g, a.text, strlen(a.text)) == 1, "after bad form %zu: '%s'", i, a.text);
        }
    }
    /* "text" is unconstrained: the same text as no response_format */
    srv_answer a;
    if (srv_complete(p.port, 0, 0, "{\"prompt\":\"Once upon a time\",\"max_tokens\":40,\"temperature\":0,\"response_format\":{\"type\":\"text\"},\"grammar\":\"\"}", &a))
        CHECK_MSG(!strcmp(a.text, alone.text), "text: '%s', none: '%s'", a.text, alone.text);
    /* a constrained stream whose client leaves: cancelled, its blocks back */
    const char *req = "{\"prompt\":\"Once\",\"max_tokens\":1500,\"temperature\":1,\"stream\":true,\"grammar\":\"root ::= [a-z]{1400,}\"}";
    const int fd = http_connect(p.port);
    CHECK(fd >= 0 && http_write(fd, "POST", "/v1/completions", NULL, req, strlen(req)));
    size_t got = 0;
    while (got < 3000) { const ssize_t k = recv(fd, out, sizeof out, 0); if (k <= 0) break; got += (size_t)k; }
    CHECK(got >= 3000);
    if (fd >= 0) close(fd);
    double busy = 1, used = 1;
    for (int i = 0; i < 200 && (busy || used); i++) {
        usleep(20 * 1000);
        busy = srv_metric(p.port, "infer_requests_processing") + srv_metric(p.port, "infer_requests_queued");
        used = srv_metric(p.port, "infer_kv_blocks_used");
    }
    CHECK_MSG(busy == 0 && used == 0 && srv_metric(p.port, "infer_requests_cancelled_total") == 1, "in flight %g, blocks used %g", busy, used);
    CHECK(server_stop(&p) == 0);
    infer_grammar_free(g);
    infer_grammar_free(gobj);
    free(o.p);
    remove(tmp_path("infer_srv_rf.gguf"));
}

/* Tool calls end to end, on a random-weight llama served with Qwen3.5's template (a random
 * model never calls a tool by itself, so a GBNF grammar makes it write the call): the
 * reply's calls come back as message.tool_calls with finish_reason "tool_calls", the text
 * before them as the content (null when none); streamed, the calls come as delta.tool_calls
 * and no part of them as content; Hermes JSON, two calls (and a reply cut inside the second:
 * one call, finish_reason "length"), Qwen3.5's XML and a Llama-style JSON reply; tool_choice "none", a request without tools and a malformed call leave the
 * text as content. An assistant turn with tool_calls (arguments as a JSON string) and the
 * tool's reply render through the template as --chat-render renders them with the
 * arguments as an object. */
typedef struct { char content[4096], finish[16], names[4][32], args[4][256], ids[4][64]; int n_calls, has_content_null; } srv_tool_answer;

/* a whole chat answer or an SSE stream of one into *a; 0 (with a failed check) when its form is wrong */
static int srv_tool_answer_of(const buf_t *body, int stream, srv_tool_answer *a) {
    memset(a, 0, sizeof *a);
    const char *p = body->p ? (const char *)body->p : "";
    size_t cn = 0;
    for (;;) {
        const char *ev = p, *end = NULL;
        if (stream) {
            if (!*p) break;
            end = strstr(p, "\n\n");
            if (strncmp(p, "data: ", 6) || !end) { CHECK_MSG(0, "SSE framing at: %.200s", p); return 0; }
            ev = p + 6;
            p = end + 2;
            if (!strncmp(ev, "[DONE]", 6)) continue;
        }
        infer__json_doc d;
        infer_error err;
        if (infer__json_parse(&d, ev, stream ? (size_t)(end - ev) : strlen(ev), &err) != INFER_OK) { CHECK_MSG(0, "not JSON (%s): %.300s", err.msg, ev); return 0; }
        const infer__json *m = jpath(d.root, stream ? "choices.0.delta" : "choices.0.message"), *c = jpath(m, "content"), *tc = jpath(m, "tool_calls");
        const char *f = jstr(d.root, "choices.0.finish_reason");
        if (f) snprintf(a->finish, sizeof a->finish, "%s", f);
        if (c && c->type == INFER__JSON_STRING && cn + c->len < sizeof a->content) { memcpy(a->content + cn, c->str, c->len); a->content[cn += c->len] = 0; }
        if (!stream && c && c->type == INFER__JSON_NULL) a->has_content_null = 1;
        for (uint32_t k = 0; tc && tc->type == INFER__JSON_ARRAY && k < tc->len && a->n_calls < 4; k++) {
            const infer__json *call = &tc->items[k];
            const char *name = jstr(call, "function.name"), *args = jstr(call, "function.arguments"), *id = jstr(call, "id"), *type = jstr(call, "type");
            const long index = stream ? jint(call, "index") : (long)k;
            CHECK_MSG(name && args && id && type && !strcmp(type, "function") && index == a->n_calls, "a tool call: %.300s", ev);
            snprintf(a->names[a->n_calls], 32, "%s", name ? name : "");
            snprintf(a->args[a->n_calls], 256, "%s", args ? args : "");
            snprintf(a->ids[a->n_calls], 64, "%s", id ? id : "");
            a->n_calls++;
        }
        infer__json_free(&d);
        if (!stream) break;
    }
    return 1;
}

/* s as a JSON string literal */
static void hb_json_str(buf_t *b, const char *s) {
    hb_str(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') hb_fmt(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) hb_fmt(b, "\\u%04x", (unsigned)*s);
        else b_put(b, s, 1);
    }
    hb_str(b, "\"");
}

/* POST a chat request (streamed or whole) and read its answer */
static int srv_tool_request(int port, const char *body_json, int stream, srv_tool_answer *a) {
    buf_t out = { 0 }, body = { 0 };
    hb_str(&body, body_json);
    if (stream) { body.n--; hb_str(&body, ",\"stream\":true}"); }
    b_put(&body, "", 1);
    const int st = http_req(port, "POST", "/v1/chat/completions", NULL, (const char *)body.p, &out, NULL);
    int ok = st == 200;
    CHECK_MSG(ok, "status %d: %.300s", st, out.p ? (const char *)out.p : "");
    if (ok) ok = srv_tool_answer_of(&out, stream, a);
    free(out.p); free(body.p);
    return ok;
}

static void test_server_tool_calls(void) {
    if (!server_built()) SKIP("./infer was built without the server (libmicrohttpd-dev)");
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    char out[8192], body[4096];
    CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_srv_tools.gguf --type q8_0 2>&1", out, sizeof out) == 0);
    srv_proc p;
    snprintf(body, sizeof body, "-m %s -np 2 -t 1 --chat-template data/chat/qwen3.5.jinja", tmp_path("infer_srv_tools.gguf"));
    if (!server_start(&p, body)) { CHECK(0); return; }
    static const char tools[] = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Weather of a city\","
                                "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}]";
    /* the grammars (as JSON strings) that make the model write a call */
    static const char hermes[] = "\"root ::= \\\"Checking. <tool_call>\\\\n{\\\\\\\"name\\\\\\\": \\\\\\\"get_weather\\\\\\\", \\\\\\\"arguments\\\\\\\": {\\\\\\\"city\\\\\\\": \\\\\\\"\\\" "
                                 "[A-Z] [a-z]{1,8} \\\"\\\\\\\"}}\\\\n</tool_call>\\\"\"";
    static const char two[] = "\"root ::= call \\\"\\\\n\\\" call\\ncall ::= \\\"<tool_call>\\\\n{\\\\\\\"name\\\\\\\": \\\\\\\"get_weather\\\\\\\", \\\\\\\"arguments\\\\\\\": "
                              "{\\\\\\\"city\\\\\\\": \\\\\\\"\\\" [a-z]{1,6} \\\"\\\\\\\"}}\\\\n</tool_call>\\\"\"";
    static const char xml[] = "\"root ::= \\\"<tool_call>\\\\n<function=get_weather>\\\\n<parameter=city>\\\\n\\\" [A-Z] [a-z]{1,8} \\\"\\\\n</parameter>\\\\n</function>\\\\n</tool_call>\\\"\"";
    static const char llama[] = "\"root ::= \\\"{\\\\\\\"name\\\\\\\": \\\\\\\"get_weather\\\\\\\", \\\\\\\"parameters\\\\\\\": {\\\\\\\"city\\\\\\\": \\\\\\\"Oslo\\\\\\\"}}\\\"\"";
    static const char bad[] = "\"root ::= \\\"<tool_call>{\\\\\\\"name\\\\\\\": \\\" [0-9] \\\"}</tool_call>\\\"\"";
    const char *user = "\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}],\"max_tokens\":400,\"temperature\":1";
    srv_tool_answer a;
    for (int stream = 0; stream < 2; stream++) {
        /* one Hermes call after some text */
        snprintf(body, sizeof body, "{%s,%s,\"seed\":%d,\"grammar\":%s}", user, tools, 3 + stream, hermes);
        if (srv_tool_request(p.port, body, stream, &a)) {
            infer__json_doc d;
            infer_error err;
            const int args_ok = a.n_calls == 1 && infer__json_parse(&d, a.args[0], strlen(a.args[0]), &err) == INFER_OK;
            const char *city = args_ok ? jstr(d.root, "city") : NULL;
            CHECK_MSG(a.n_calls == 1 && !strcmp(a.names[0], "get_weather") && city && city[0] >= 'A' && city[0] <= 'Z' && !strncmp(a.ids[0], "call_", 5) &&
                      !strcmp(a.finish, "tool_calls") && !strcmp(a.content, stream ? "Checking. " : "Checking."),
                      "hermes, stream %d: %d calls %s(%s) id %s, content [%s], finish %s", stream, a.n_calls, a.names[0], a.args[0], a.ids[0], a.content, a.finish);
            if (args_ok) infer__json_free(&d);
        }
        /* two calls */
        snprintf(body, sizeof body, "{%s,%s,\"seed\":%d,\"grammar\":%s}", user, tools, 5 + stream, two);
        if (srv_tool_request(p.port, body, stream, &a))
            CHECK_MSG(a.n_calls == 2 && !strcmp(a.names[1], "get_weather") && strstr(a.args[1], "\"city\":\"") && strcmp(a.ids[0], a.ids[1]) &&
                      !a.content[0] && (stream || a.has_content_null) && !strcmp(a.finish, "tool_calls"),
                      "two calls, stream %d: %d calls, content [%s], finish %s", stream, a.n_calls, a.content, a.finish);
        /* cut by max_tokens inside the second: the first is a call, the rest content, finish_reason length */
        snprintf(body, sizeof body, "{%s,%s,\"seed\":%d,\"grammar\":%s,\"max_completion_tokens\":100}", user, tools, 5 + stream, two);
        if (srv_tool_request(p.port, body, stream, &a))
            CHECK_MSG(a.n_calls == 1 && !strncmp(a.content, "<tool_call>\n{\"name\"", 19) && !strcmp(a.finish, "length"),
                      "cut, stream %d: %d calls, content [%s], finish %s", stream, a.n_calls, a.content, a.finish);
        /* Qwen3.5's XML form */
        snprintf(body, sizeof body, "{%s,%s,\"seed\":%d,\"grammar\":%s}", user, tools, 7 + stream, xml);
        if (srv_tool_request(p.port, body, stream, &a))
            CHECK_MSG(a.n_calls == 1 && !strncmp(a.args[0], "{\"city\":\"", 9) && !a.content[0] && !strcmp(a.finish, "tool_calls"),
                      "xml, stream %d: %d calls (%s), content [%s], finish %s", stream, a.n_calls, a.args[0], a.content, a.finish);
        /* a Llama-style JSON reply: no content streamed at all */
        snprintf(body, sizeof body, "{%s,%s,\"grammar\":%s}", user, tools, llama);
        if (srv_tool_request(p.port, body, stream, &a))
            CHECK_MSG(a.n_calls == 1 && !strcmp(a.args[0], "{\"city\":\"Oslo\"}") && !a.content[0] && !strcmp(a.finish, "tool_calls"),
                      "llama, stream %d: %d calls (%s), content [%s], finish %s", stream, a.n_calls, a.args[0], a.content, a.finish);
        /* tool_choice names a function, no grammar given: the call is forced in the template's (XML) form */
        snprintf(body, sizeof body, "{%s,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\","
                 "\"properties\":{\"zone\":{\"enum\":[\"UTC\",\"CET\"]}},\"required\":[\"zone\"]}}},%s,\"seed\":%d,\"parallel_tool_calls\":false,"
                 "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_time\"}}}", user, tools + 9, 11 + stream);
        if (srv_tool_request(p.port, body, stream, &a))
            CHECK_MSG(a.n_calls == 1 && !strcmp(a.names[0], "get_time") && (!strcmp(a.args[0], "{\"zone\":\"UTC\"}") ||
                      !strcmp(a.args[0], "{\"zone\":\"CET\"}")) && !a.content[0] && !strcmp(a.finish, "tool_calls"),
                      "forced, stream %d: %d calls %s(%s), content [%s], finish %s", stream, a.n_calls, a.n_calls ? a.names[0] : "", a.n_calls ? a.args[0] : "",
                      a.content, a.finish);
        /* tool_choice none, no tools, a malformed call: the text as it was, finish_reason stop */
        for (int k = 0; k < 3; k++) {
            snprintf(body, sizeof body, "{%s%s%s,\"seed\":9,\"grammar\":%s}", user, k == 1 ? "" : ",", k == 1 ? "" : tools, k == 2 ? bad : hermes);
            if (k == 0) { body[strlen(body) - 1] = 0; strcat(body, ",\"tool_choice\":\"none\"}"); }
            if (srv_tool_request(p.port, body, stream, &a))
                CHECK_MSG(a.n_calls == 0 && !strcmp(a.finish, "stop") && strstr(a.content, "<tool_call>") && strstr(a.content, "</tool_call>") &&
                          (k == 2 || !strncmp(a.content, "Checking. <tool_call>", 21)), "plain %d, stream %d: %d calls, content [%s], finish %s", k, stream, a.n_calls, a.content, a.finish);
        }
    }
    /* the history: data/chat/conv-tools.json as a client sends it (arguments as a JSON
     * string) is the prompt --chat-render makes of it (arguments as the object) */
    char render[8192];
    snprintf(out, sizeof out, "./infer -m %s --chat-template data/chat/qwen3.5.jinja --chat-render data/chat/conv-tools.json", tmp_path("infer_srv_tools.gguf"));
    CHECK(run_cmd(out, render, sizeof render) == 0 && strstr(render, "<parameter=city>\nParis\n</parameter>"));
    buf_t tb = { 0 }, o = { 0 };
    hb_str(&tb, "{\"add_special\":true,\"content\":");
    hb_json_str(&tb, render);
    hb_str(&tb, "}");
    b_put(&tb, "", 1);
    long want = -1;
    if (http_req(p.port, "POST", "/tokenize", NULL, (const char *)tb.p, &o, NULL) == 200) { want = 1; for (const char *c = (const char *)o.p; *c; c++) want += *c == ','; }
    snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call00001\","
             "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\", \\\"days\\\": 2}\"}}]},"
             "{\"role\":\"tool\",\"tool_call_id\":\"call00001\",\"name\":\"get_weather\",\"content\":\"{\\\"temp\\\": 21}\"},"
             "{\"role\":\"assistant\",\"content\":\"It is 21 \\u00b0C.\"},{\"role\":\"user\",\"content\":\"Thanks\"}],"
             "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Weather of a city\",\"parameters\":{\"type\":\"object\","
             "\"properties\":{\"city\":{\"type\":\"string\",\"description\":\"e.g. \\\"Paris\\\"\"},\"days\":{\"type\":\"integer\"}},\"required\":[\"city\"]}}}],\"max_tokens\":1}");
    srv_answer sa;
    if (srv_complete(p.port, 1, 0, body, &sa)) CHECK_MSG(want > 100 && sa.prompt_tokens == want, "the history: %ld prompt tokens, --chat-render's text has %ld", sa.prompt_tokens, want);
    free(tb.p); free(o.p);
    CHECK(server_stop(&p) == 0);
    remove(tmp_path("infer_srv_tools.gguf"));
}

/* ./infer-asan is left by the last `make test-asan`: older than a source it is built from, it
 * would test an old command line (make test-asan rebuilds it before its run) */
static int asan_binary_stale(void) {
    struct stat b, s;
    if (stat("./infer-asan", &b) != 0) return 1;
    static const char *src[] = { "main.c", "infer.h", "tools/server.c", "tools/server_req.c", "tools/bench.c" };
    for (int i = 0; i < 5; i++) if (stat(src[i], &s) == 0 && s.st_mtime > b.st_mtime) return 1;
    return 0;
}

/* The server under AddressSanitizer + UBSan + LeakSanitizer (./infer-asan, which make
 * test-asan builds): whole and streamed answers, bad input, clients that leave mid-answer,
 * a queue beyond the sequences, tool calls, then SIGTERM: a clean exit, no sanitizer report */
static void test_server_asan(void) {
    if (!file_exists("./infer-asan")) SKIP("./infer-asan not built (make test-asan builds it)");
    if (asan_binary_stale()) SKIP("./infer-asan is older than its sources (make test-asan rebuilds it)");
    char out[4096];
    run_cmd("./infer-asan --server -m /nonexistent/x.gguf 2>&1", out, sizeof out);
    if (strstr(out, "built without the HTTP server")) SKIP("./infer-asan was built without the server");
    if (!file_exists(SRV_MODEL)) SKIP("../shared/models not found");
    srv_proc p;
    if (!server_start_with(&p, "ASAN_OPTIONS=detect_leaks=1 ./infer-asan", "-m " SRV_MODEL " -np 2 -n 8 -t 1 --chat-template data/chat/phi-3.5.jinja")) { CHECK(0); return; }
    srv_answer a;
    buf_t o = { 0 };
    CHECK(srv_complete(p.port, 0, 0, "{\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":0,\"stop\":\"girl\"}", &a));
    CHECK(srv_complete(p.port, 1, 1, "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":8,\"frequency_penalty\":1,\"stream_options\":{\"include_usage\":true}}", &a));
    CHECK(http_req(p.port, "POST", "/v1/completions", NULL, "{\"prompt\":[1,99999]}", &o, NULL) == 400);
    CHECK(http_req(p.port, "POST", "/v1/chat/completions", NULL, "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", &o, NULL) == 400);
    CHECK(http_req(p.port, "POST", "/tokenize", NULL, "{\"content\":\"Once\"}", &o, NULL) == 200);
    CHECK(http_req(p.port, "POST", "/detokenize", NULL, "{\"tokens\":[1,403]}", &o, NULL) == 200);
    CHECK(http_req(p.port, "GET", "/metrics", NULL, NULL, &o, NULL) == 200);
    srv_fuzz(p.port, 100);
    /* constrained output: a schema's grammar made and freed, a bad grammar refused */
    CHECK(srv_complete(p.port, 0, 1, "{\"prompt\":\"Once\",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}}}}", &a));
    CHECK(http_req(p.port, "POST", "/v1/completions", NULL, "{\"prompt\":\"Once\",\"grammar\":\"root ::= x\"}", &o, NULL) == 400);
    /* tool calls: one a grammar makes, whole and streamed (held back, then delta.tool_calls);
     * a history with a call and its result; bad tools refused */
    const char *tc = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"max_tokens\":60,"
                     "\"grammar\":\"root ::= \\\"Ok. <tool_call>{\\\\\\\"name\\\\\\\": \\\\\\\"f\\\\\\\", \\\\\\\"arguments\\\\\\\": {}}</tool_call>\\\"\"}";
    srv_tool_answer ta;
    for (int stream = 0; stream < 2; stream++)
        CHECK(srv_tool_request(p.port, tc, stream, &ta) && ta.n_calls == 1 && !strcmp(ta.names[0], "f") && !strcmp(ta.finish, "tool_calls"));
    CHECK(srv_complete(p.port, 1, 1, "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
                                     "\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": 1}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\","
                                     "\"content\":\"done\"}],\"max_tokens\":4}", &a));
    CHECK(http_req(p.port, "POST", "/v1/chat/completions", NULL, "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"tools\":[{}]}", &o, NULL) == 400);
    /* three clients that leave (two decoding, one under a grammar, one queued behind them) */
    const char *req = "{\"prompt\":\"Once upon a time\",\"max_tokens\":1500,\"temperature\":0,\"stream\":true}";
    const char *req_g = "{\"prompt\":\"Once upon a time\",\"max_tokens\":1500,\"temperature\":0,\"stream\":true,\"grammar\":\"root ::= [a-z ]{1400,}\"}";
    int fds[3];
    for (int i = 0; i < 3; i++) { fds[i] = http_connect(p.port); CHECK(fds[i] >= 0 && http_write(fds[i], "POST", "/v1/completions", NULL, i ? req : req_g, strlen(i ? req : req_g))); }
    usleep(200 * 1000);
    for (int i = 0; i < 3; i++) if (fds[i] >= 0) close(fds[i]);
    double busy = 1;
    for (int i = 0; i < 200 && busy; i++) {
        usleep(25 * 1000);
        busy = srv_metric(p.port, "infer_requests_processing") + srv_metric(p.port, "infer_requests_queued");
    }
    CHECK(busy == 0 && srv_metric(p.port, "infer_kv_blocks_used") == 0);
    /* one still running (under a grammar) when the server stops: answered with an error, then a clean exit */
    const int fd = http_connect(p.port);
    CHECK(fd >= 0 && http_write(fd, "POST", "/v1/completions", NULL, req_g, strlen(req_g)));
    usleep(100 * 1000);
    const int rc = server_stop(&p);
    if (fd >= 0) close(fd);
    char *log = slurp(tmp_path(p.log), NULL);
    CHECK_MSG(rc == 0 && log && !strstr(log, "Sanitizer") && !strstr(log, "runtime error"), "exit %d: %s", rc, log ? log : "(no log)");
    free(log);
    free(o.p);
}

/* --ppl with a context far beyond memory (-c 2^24): the logits are kept a ubatch at a
 * time, so it runs; the perplexity is the same whatever the ubatch and the context (the
 * text fits one window), in exact maths */
static void test_robust_huge_context(void) {
    if (!file_exists("./tools/convert") || !file_exists("./infer")) SKIP("./tools/convert or ./infer not built");
    CHECK(write_vocab_model(tmp_path("infer_rb_vocab.gguf")));
    FILE *f = fopen(tmp_path("infer_rb_ppl.txt"), "w");
    for (int i = 0; f && i < 12; i++) fputs("the quick brown fox jumps over a lazy dog ", f);
    if (f) fclose(f);
    const char *opts[3] = { "", "-c 16777216", "-c 16777216 --ubatch 7" };
    double ppl[3] = { 0, 0, 0 };
    for (int i = 0; i < 3; i++) {
        char cmd[256], out[8192];
        snprintf(cmd, sizeof cmd, "./infer -m $INFER_TMP/infer_rb_vocab.gguf --precise --ppl $INFER_TMP/infer_rb_ppl.txt %s 2>&1", opts[i]);
        const int rc = run_cmd(cmd, out, sizeof out);
        const char *pl = strstr(out, "perplexity: ");
        CHECK_MSG(rc == 0 && pl, "%s: rc %d: %s", opts[i], rc, out);
        if (pl) ppl[i] = atof(pl + 12);
    }
    CHECK_MSG(ppl[0] > 1 && ppl[0] == ppl[1] && ppl[1] == ppl[2], "perplexities %.6f %.6f %.6f", ppl[0], ppl[1], ppl[2]);
    remove(tmp_path("infer_rb_ppl.txt"));
    remove(tmp_path("infer_rb_vocab.gguf"));
}

/* -t: every thread count the command line takes (1..1024) runs, with the same tokens */
static void test_robust_threads(void) {
    if (!file_exists("./tools/convert") || !file_exists("./infer")) SKIP("./tools/convert or ./infer not built");
    char out[8192], want[8192], cmd[256];
    CHECK(run_cmd("./infer --membw -t 1024 2>&1", out, sizeof out) == 0 && strstr(out, "membw_gbs="));
    {   /* the paced loop (VNNI builds) names its best distance and pace, among those it tries */
        const char *k = strstr(out, "pages_4k_paced_kib="), *c = strstr(out, "pages_4k_paced_cycles=");
        CHECK_MSG(!strstr(out, "pages_4k_paced=") || (k && (atof(k + 19) == 3.0 || atof(k + 19) == 4.5 || atof(k + 19) == 6.5)), "--membw: %s", out);
        CHECK_MSG(!strstr(out, "pages_4k_paced=") || (c && (atoi(c + 22) == 8 || atoi(c + 22) == 10)), "--membw: %s", out);
    }
    CHECK(run_cmd("./infer --membw -t 1025 2>&1", out, sizeof out) == 1 && strstr(out, "bad value"));
    CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_rb_t.gguf --type q4_0 2>&1", out, sizeof out) == 0);
    CHECK(run_cmd("./infer -m $INFER_TMP/infer_rb_t.gguf --prompt-ids 1,2,3,4,5 -n 8 --temp 0 -t 1 2>/dev/null", want, sizeof want) == 0);
    const int threads[3] = { 3, 64, 1024 };
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "./infer -m $INFER_TMP/infer_rb_t.gguf --prompt-ids 1,2,3,4,5 -n 8 --temp 0 -t %d 2>/dev/null", threads[i]);
        CHECK_MSG(run_cmd(cmd, out, sizeof out) == 0 && !strcmp(out, want), "-t %d: %s (-t 1: %s)", threads[i], out, want);
    }
    /* the library refuses a thread count no machine runs, rather than try to start it */
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, tmp_path("infer_rb_t.gguf"), NULL, &err) == INFER_OK) {
        infer_session_params sp = infer_session_default_params();
        sp.n_threads = 1000000;
        infer_session *s;
        CHECK(infer_session_create(&s, m, &sp, &err) == INFER_ERR_ARG && strstr(err.msg, "threads"));
        infer_model_free(m);
    } else CHECK_MSG(0, "%s", err.msg);
    remove(tmp_path("infer_rb_t.gguf"));
}

/* The command line releases what it holds on its error paths (the eval error, a prompt longer
 * than the context, a failed session): checked by LeakSanitizer in the ASan build of the
 * command line that `make test-asan` makes (./infer-asan), skipped without it */
static void test_robust_cli_leaks(void) {
    if (!file_exists("./infer-asan") || !file_exists("./tools/convert")) SKIP("./infer-asan not built (make test-asan builds it)");
    if (asan_binary_stale()) SKIP("./infer-asan is older than its sources (make test-asan rebuilds it)");
    size_t n;
    uint8_t *p = robust_model("q4_K", &n);
    if (!p) { CHECK(0); return; }
    robust_set(p, n, "blk.1.attn_norm.weight", NAN);
    FILE *f = fopen(tmp_path("infer_rb_leak.gguf"), "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f) fclose(f);
    free(p);
    const char *runs[4] = { "--prompt-ids 1,2,3 -n 4", "--prompt-ids 1,2,3 -n 4 --precise", "-c 2 --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18 -n 2",
                            "--prompt-ids 1,2,3 --ppl /nonexistent.txt" };
    for (int i = 0; i < 4; i++) {
        char cmd[512], out[16384];
        snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=detect_leaks=1 ./infer-asan -m $INFER_TMP/infer_rb_leak.gguf %s 2>&1", runs[i]);
        const int rc = run_cmd(cmd, out, sizeof out);
        CHECK_MSG(rc == 1 && strstr(out, "infer: ") && !strstr(out, "Sanitizer"), "%s: rc %d: %s", runs[i], rc, out);
    }
    remove(tmp_path("infer_rb_leak.gguf"));
    remove(tmp_path("infer_rb_f32.gguf"));
}

/* ---- tools/convert ---- */
static void test_convert_cli(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    char out[4096];
    CHECK(run_cmd("./tools/convert 2>&1", out, sizeof out) != 0 && strstr(out, "usage"));
    CHECK(run_cmd("./tools/convert --help 2>/dev/null", out, sizeof out) == 0 && strstr(out, "usage") && strstr(out, "Q4_K_M"));
    CHECK(run_cmd("./tools/convert -h 2>/dev/null", out, sizeof out) == 0 && strstr(out, "usage"));
    CHECK(run_cmd("./tools/convert dequant q9_9 a b 2>&1", out, sizeof out) != 0 && strstr(out, "unknown type"));
    /* every synth preset is named when one is unknown, whichever family is asked for */
    CHECK(run_cmd("./tools/convert synth llama huge $INFER_TMP/x.gguf 2>&1", out, sizeof out) != 0);
    CHECK_MSG(strstr(out, "llama llama-1b") && strstr(out, "bitnet tiny") && strstr(out, "qwen35 qwen35-0.8b") && strstr(out, "qwen35moe qwen35moe-small"), "%s", out);
    CHECK(run_cmd("./tools/convert synth qwen35 huge $INFER_TMP/x.gguf 2>&1", out, sizeof out) != 0 && strstr(out, "llama llama-1b") && strstr(out, "qwen35moe tiny"));
    /* one format for convert info and infer --info; u64 values print unsigned */
    {
        infer_gguf_kv kv[3];
        infer_error err;
        kv[0] = infer_gguf_kv_str("general.architecture", "nosuch");
        kv[1] = infer_gguf_kv_u32("nosuch.big", 0);
        kv[1].type = INFER_GGUF_U64;
        kv[1].v.u = UINT64_MAX;
        kv[2] = infer_gguf_kv_str("general.name", "line one\nline two");
        CHECK(infer_gguf_write(tmp_path("infer_test_info.gguf"), kv, 3, NULL, 0, 32, &err) == INFER_OK);
        char out2[4096];
        CHECK(run_cmd("./tools/convert info $INFER_TMP/infer_test_info.gguf", out, sizeof out) == 0);
        CHECK(run_cmd("./infer -m $INFER_TMP/infer_test_info.gguf --info", out2, sizeof out2) == 0);
        CHECK_MSG(!strcmp(out, out2), "convert info:\n%s\ninfer --info:\n%s", out, out2);
        CHECK_MSG(strstr(out, "18446744073709551615") && strstr(out, "\"line one line two\""), "%s", out);
        remove(tmp_path("infer_test_info.gguf"));
    }
    /* round trip through files: f32 -> q8_0 -> f32 */
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = sinf((float)i);
    FILE *f = fopen(tmp_path("infer_cv_in.f32"), "wb");
    fwrite(x, 4, 64, f);
    fclose(f);
    CHECK(run_cmd("./tools/convert quant q8_0 $INFER_TMP/infer_cv_in.f32 $INFER_TMP/infer_cv.q $INFER_TMP/x --cols 32 2>&1", out, sizeof out) != 0);
    CHECK(run_cmd("./tools/convert quant q8_0 $INFER_TMP/infer_cv_in.f32 $INFER_TMP/infer_cv.q --cols 32", out, sizeof out) == 0);
    CHECK(run_cmd("./tools/convert quant q4_K $INFER_TMP/infer_cv_in.f32 $INFER_TMP/infer_cv.q2 --cols 64 2>&1", out, sizeof out) != 0 && strstr(out, "multiple"));
    CHECK(run_cmd("./tools/convert quant q8_0 $INFER_TMP/infer_cv_in.f32 $INFER_TMP/infer_cv.q2 --cols 48 2>&1", out, sizeof out) != 0);
    CHECK(run_cmd("./tools/convert dequant q8_0 $INFER_TMP/infer_cv.q $INFER_TMP/infer_cv_out.f32", out, sizeof out) == 0);
    size_t n;
    float *y = slurp(tmp_path("infer_cv_out.f32"), &n);
    CHECK(y && n == 256);
    double mx = 0;
    for (int i = 0; y && i < 64; i++) mx = fmax(mx, fabs(y[i] - x[i]));
    CHECK(mx < 0.01);
    free(y);
    /* a truncated block file */
    f = fopen(tmp_path("infer_cv.q"), "r+b");
    CHECK(f && ftruncate(fileno(f), 33) == 0);
    fclose(f);
    CHECK(run_cmd("./tools/convert dequant q8_0 $INFER_TMP/infer_cv.q $INFER_TMP/infer_cv_out.f32 2>&1", out, sizeof out) != 0 && strstr(out, "whole number"));
    remove(tmp_path("infer_cv_in.f32")); remove(tmp_path("infer_cv.q")); remove(tmp_path("infer_cv_out.f32"));
}

/* the tensor types (and shapes) of two GGUF files agree, tensor by tensor, by name */
static int same_tensor_types(const char *a_path, const char *b_path) {
    size_t na, nb;
    uint8_t *a = slurp(a_path, &na), *b = slurp(b_path, &nb);
    infer_gguf ga, gb;
    infer_error err;
    int same = a && b && infer_gguf_parse(&ga, a, na, &err) == INFER_OK;
    if (same && infer_gguf_parse(&gb, b, nb, &err) != INFER_OK) { infer_gguf_free(&ga); same = 0; }
    if (same) {
        same = ga.n_tensors == gb.n_tensors;
        for (int64_t i = 0; same && i < ga.n_tensors; i++) {
            const infer_tensor *x = &ga.tensors[i], *y = infer_gguf_tensor(&gb, x->name);
            same = y && x->type == y->type && x->n_dims == y->n_dims && !memcmp(x->ne, y->ne, sizeof x->ne);
            if (!same) printf("    %s: %s %s vs %s\n", b_path, x->name, infer_type_name(x->type), y ? infer_type_name(y->type) : "(missing)");
        }
        infer_gguf_free(&ga); infer_gguf_free(&gb);
    }
    free(a); free(b);
    return same;
}

/* convert quantize --type FILE_TYPE: the reference quantizer's per-tensor choices. The golden
 * files were made by llama.cpp: model-Q4_K_M with its Q4_K_M mixture, model-<Q> with --pure
 * (TQ*: the TQ file types), *_MOE with MXFP4_MOE */
static void test_convert_quantize(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    if (!file_exists(SHARED "/golden/llama/model-F32.gguf")) SKIP("../shared/golden not found");
    static const char *const cases[][3] = {   /* family, --type ..., the golden file */
        { "llama", "Q4_K_M", "Q4_K_M" }, { "llama", "q4_k_m", "Q4_K_M" }, { "qwen35", "Q4_K_M", "Q4_K_M" },
        { "qwen35moe", "MXFP4_MOE", "MXFP4_MOE" }, { "qwen3moe", "mxfp4_moe", "MXFP4_MOE" },
        { "bitnet", "TQ2_0", "TQ2_0" }, { "bitnet", "TQ1_0", "TQ1_0" },
        { "llama", "Q6_K --pure", "Q6_K" }, { "llama", "q8_0 --pure", "Q8_0" }, { "llama", "Q4_0 --pure", "Q4_0" },
        { "qwen35", "Q4_K --pure", "Q4_K" }, { "llama", "mxfp4", "MXFP4" }, { "qwen35", "NVFP4", "NVFP4" },
    };
    char cmd[512], out[8192], golden[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(golden, sizeof golden, SHARED "/golden/%s/model-%s.gguf", cases[i][0], cases[i][2]);
        if (!file_exists(golden)) continue;
        snprintf(cmd, sizeof cmd, "./tools/convert quantize " SHARED "/golden/%s/model-F32.gguf $INFER_TMP/infer_test_q.gguf --type %s 2>&1", cases[i][0], cases[i][1]);
        CHECK_MSG(run_cmd(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
        CHECK_MSG(same_tensor_types(golden, tmp_path("infer_test_q.gguf")), "%s --type %s: types differ from %s", cases[i][0], cases[i][1], golden);
    }
    /* the file type is recorded as the reference records it (Q4_K_M = 15); a plain type drops it */
    CHECK(run_cmd("./tools/convert quantize " SHARED "/golden/llama/model-F32.gguf $INFER_TMP/infer_test_q.gguf --type Q4_K_M 2>/dev/null && ./tools/convert info $INFER_TMP/infer_test_q.gguf", out, sizeof out) == 0);
    CHECK(strstr(out, "general.file_type") && num_after(strstr(out, "general.file_type"), "general.file_type") == 15);
    /* the Q4_K_M model runs, and computes what the reference's Q4_K_M file computes */
    int32_t ids[8] = { 1, 5, 9, 77, 120, 3, 250, 31 };
    const run_opts exact = { .precise = 1, .n_ctx = 64 };
    float *a = file_logits(tmp_path("infer_test_q.gguf"), ids, 8, exact, NULL), *b = file_logits(SHARED "/golden/llama/model-Q4_K_M.gguf", ids, 8, exact, NULL);
    CHECK(a && b);
    double d = 0;
    for (int k = 0; a && b && k < 8 * 320; k++) d = fmax(d, fabs(a[k] - b[k]));
    CHECK_MSG(a && b && d <= 1e-3, "our Q4_K_M logits differ from the reference file's by %g", d);
    free(a); free(b);
    /* rows that are not whole blocks: the reference's fallbacks, with warnings. token_embd
     * (tied, 96 columns) goes to Q8_0; attn_q's Q4_K to Q5_0; ffn_down (40 columns, Q6_K in
     * the last layer) to Q8_0, then F16 */
    infer_gguf_kv kv[6];
    kv[0] = infer_gguf_kv_str("general.architecture", "llama");
    kv[1] = infer_gguf_kv_u32("llama.block_count", 1);
    kv[2] = infer_gguf_kv_u32("llama.attention.head_count", 4);
    kv[3] = infer_gguf_kv_u32("llama.attention.head_count_kv", 4);
    static float w[96 * 96];
    for (int k = 0; k < 96 * 96; k++) w[k] = sinf((float)k);
    infer_tensor t[4] = {
        { "token_embd.weight", INFER_TYPE_F32, 2, { 96, 8, 1, 1 }, w, 96 * 8 * 4, 1.0f },
        { "blk.0.attn_q.weight", INFER_TYPE_F32, 2, { 96, 96, 1, 1 }, w, 96 * 96 * 4, 1.0f },
        { "blk.0.ffn_down.weight", INFER_TYPE_F32, 2, { 40, 96, 1, 1 }, w, 40 * 96 * 4, 1.0f },
        { "blk.0.attn_norm.weight", INFER_TYPE_F32, 1, { 96, 1, 1, 1 }, w, 96 * 4, 1.0f },
    };
    infer_error err;
    CHECK(infer_gguf_write(tmp_path("infer_test_odd.gguf"), kv, 4, t, 4, 32, &err) == INFER_OK);
    CHECK(run_cmd("./tools/convert quantize $INFER_TMP/infer_test_odd.gguf $INFER_TMP/infer_test_q.gguf --type Q4_K_M 2>&1", out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "warning: blk.0.attn_q.weight: 96 columns") && strstr(out, "q5_0 instead") && strstr(out, "blk.0.ffn_down.weight: 40 columns"), "%s", out);
    size_t n;
    uint8_t *f = slurp(tmp_path("infer_test_q.gguf"), &n);
    infer_gguf g;
    if (f && infer_gguf_parse(&g, f, n, &err) == INFER_OK) {
        CHECK(infer_gguf_tensor(&g, "token_embd.weight")->type == INFER_TYPE_Q8_0);
        CHECK(infer_gguf_tensor(&g, "blk.0.attn_q.weight")->type == INFER_TYPE_Q5_0);
        CHECK(infer_gguf_tensor(&g, "blk.0.ffn_down.weight")->type == INFER_TYPE_F16);
        CHECK(infer_gguf_tensor(&g, "blk.0.attn_norm.weight")->type == INFER_TYPE_F32);
        infer_gguf_free(&g);
    } else CHECK_MSG(0, "no output file");
    free(f);
    /* unknown and impossible types */
    CHECK(run_cmd("./tools/convert quantize $INFER_TMP/infer_test_odd.gguf $INFER_TMP/infer_test_q.gguf --type Q9_K 2>&1", out, sizeof out) != 0);
    CHECK_MSG(strstr(out, "unknown type") && strstr(out, "Q4_K_M") && strstr(out, "Q5_K_S") && strstr(out, "IQ4_XS") && strstr(out, "q8_0"), "%s", out);
    CHECK(run_cmd("./tools/convert quantize " SHARED "/golden/llama/model-F32.gguf $INFER_TMP/infer_test_q.gguf --type IQ2_XXS 2>&1", out, sizeof out) != 0 && strstr(out, "iq2_xxs"));
    remove(tmp_path("infer_test_q.gguf")); remove(tmp_path("infer_test_odd.gguf"));
}

/* llama2.c's stories260K.bin + tok512.bin -> GGUF: same tensors, same tokens, same logits as
 * the published stories260K.gguf */
static void test_convert_llama2c(void) {
    if (!file_exists(SHARED "/models/stories260K.bin") || !file_exists("./tools/convert")) SKIP("../shared/models or ./tools/convert missing");
    char out[4096];
    CHECK(run_cmd("./tools/convert llama2c " SHARED "/models/stories260K.bin " SHARED "/models/tok512.bin $INFER_TMP/infer_l2c.gguf 2>&1", out, sizeof out) == 0);
    infer_model *a, *b;
    infer_error err;
    if (infer_model_load(&a, tmp_path("infer_l2c.gguf"), NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    CHECK(infer_model_load(&b, SHARED "/models/stories260K.gguf", NULL, &err) == INFER_OK);
    const infer_gguf *ga = infer_model_gguf(a), *gb = infer_model_gguf(b);
    int same = 0;
    for (int64_t i = 0; i < ga->n_tensors; i++) {
        const infer_tensor *ta = &ga->tensors[i], *tb = infer_gguf_tensor(gb, ta->name);
        same += tb && tb->nbytes == ta->nbytes && memcmp(tb->data, ta->data, ta->nbytes) == 0;
    }
    CHECK_MSG(same == ga->n_tensors, "%d of %lld tensors are bit-identical", same, (long long)ga->n_tensors);
    const infer_gguf_kv *ka = infer_gguf_find(ga, "tokenizer.ggml.tokens"), *kb = infer_gguf_find(gb, "tokenizer.ggml.tokens");
    CHECK(ka && kb && ka->arr_n == kb->arr_n && memcmp(ka->arr_data, kb->arr_data, infer__gguf_arr_bytes(kb)) == 0);
    int32_t ids[12] = { 1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315 };
    infer_session_params sp = infer_session_default_params();
    sp.precise = 1;
    infer_session *sa, *sb;
    float la[12 * 512], lb[12 * 512];
    CHECK(infer_session_create(&sa, a, &sp, &err) == INFER_OK && infer_session_create(&sb, b, &sp, &err) == INFER_OK);
    CHECK(infer_eval(sa, ids, 12, la, 1, &err) == INFER_OK && infer_eval(sb, ids, 12, lb, 1, &err) == INFER_OK);
    CHECK(memcmp(la, lb, sizeof la) == 0);
    infer_session_free(sa); infer_session_free(sb);
    infer_model_free(a); infer_model_free(b);
    remove(tmp_path("infer_l2c.gguf"));
    /* a truncated checkpoint is refused with a message */
    CHECK(run_cmd("head -c 5000 " SHARED "/models/stories260K.bin > $INFER_TMP/infer_l2c_cut.bin && ./tools/convert llama2c $INFER_TMP/infer_l2c_cut.bin " SHARED "/models/tok512.bin $INFER_TMP/infer_l2c.gguf 2>&1", out, sizeof out) != 0 && strstr(out, "truncated"));
    /* a header whose vocab_size is INT32_MIN (its negation is undefined): the clean error, nothing else */
    {
        FILE *f = fopen(tmp_path("infer_l2c_min.bin"), "wb");
        const int32_t hdr[7] = { 64, 128, 1, 4, 4, INT32_MIN, 32 };
        if (f) { fwrite(hdr, sizeof hdr, 1, f); fclose(f); }
        CHECK(run_cmd("./tools/convert llama2c $INFER_TMP/infer_l2c_min.bin " SHARED "/models/tok512.bin $INFER_TMP/infer_l2c.gguf 2>&1", out, sizeof out) == 1 &&
              strstr(out, "implausible") && !strstr(out, "runtime error"));
    }
    remove(tmp_path("infer_l2c_cut.bin"));
}

/* convert synth writes a tokenizer: prompts work, chat works, and with --vocab it is the real one */
static void test_convert_synth_vocab(void) {
    if (!file_exists("./tools/convert") || !file_exists("./infer")) SKIP("./tools/convert or ./infer not built");
    char out[8192], out2[8192];
    CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_test_sv.gguf --type q8_0 2>&1", out, sizeof out) == 0);
    CHECK(run_cmd("./infer -m $INFER_TMP/infer_test_sv.gguf --info", out, sizeof out) == 0);
    CHECK(strstr(out, "tokenizer.ggml.model") && strstr(out, "\"gpt2\"") && strstr(out, "\"llama-bpe\"") && strstr(out, "tokenizer.ggml.merges") && strstr(out, "tokenizer.chat_template"));
    CHECK(run_cmd("./infer -m $INFER_TMP/infer_test_sv.gguf -p 'Hello world, the quick brown fox' -n 4 --temp 0 2>/dev/null", out, sizeof out) == 0 && !strncmp(out, "Hello world, the quick brown fox", 32));
    CHECK(run_cmd("./infer -m $INFER_TMP/infer_test_sv.gguf -p 'Hello world' --tokenize", out, sizeof out) == 0 && strtol(out, NULL, 10) == 1013);   /* BOS first */
    CHECK(run_cmd("printf 'Hi\\n' | ./infer -m $INFER_TMP/infer_test_sv.gguf --chat -n 4 --temp 0 2>&1 >/dev/null", out, sizeof out) == 0 && strstr(out, "turn 1"));
    /* the same every time */
    CHECK(run_cmd("./tools/convert synth qwen35 tiny $INFER_TMP/infer_test_sv.gguf 2>/dev/null && ./infer -m $INFER_TMP/infer_test_sv.gguf -p 'the sun' --tokenize", out, sizeof out) == 0);
    CHECK(run_cmd("./tools/convert synth qwen35 tiny $INFER_TMP/infer_test_sv.gguf 2>/dev/null && ./infer -m $INFER_TMP/infer_test_sv.gguf -p 'the sun' --tokenize", out2, sizeof out2) == 0 && !strcmp(out, out2));
    CHECK(run_cmd("./infer -m $INFER_TMP/infer_test_sv.gguf --info", out, sizeof out) == 0 && strstr(out, "\"qwen35\"") && strstr(out, "<|im_start|>"));
    if (file_exists(SHARED "/tokenizers/llama3/tokenizer.json")) {
        CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_test_sv.gguf --type q4_0 --vocab " SHARED "/tokenizers/llama3/tokenizer.json 2>&1", out, sizeof out) == 0);
        CHECK(run_cmd("./infer -m $INFER_TMP/infer_test_sv.gguf -p 'Hello world' --tokenize", out, sizeof out) == 0);
        CHECK(run_cmd("./infer -m " SHARED "/tokenizers/llama3 -p 'Hello world' --tokenize", out2, sizeof out2) == 0 && !strcmp(out, out2));
    }
    remove(tmp_path("infer_test_sv.gguf"));
}

/* convert synth qwen35: the hybrid layout loads, runs, and its logits are of ordinary size */
static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* synth qwen35 / qwen35moe tiny: the files load as their family (the MoE one with its
 * experts, shared expert and router), logits are of ordinary size, and the fast path stays
 * near the precise one */
static void test_convert_synth_qwen35(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    const char *arch[2] = { "qwen35", "qwen35moe" };
    for (int a_i = 0; a_i < 2; a_i++) {
        char out[4096], cmd[256];
        snprintf(cmd, sizeof cmd, "./tools/convert synth %s tiny $INFER_TMP/infer_q35.gguf --type q8_0 2>&1", arch[a_i]);
        CHECK(run_cmd(cmd, out, sizeof out) == 0);
        infer_model *m = NULL;
        infer_error err;
        CHECK_MSG(infer_model_load(&m, tmp_path("infer_q35.gguf"), NULL, &err) == INFER_OK, "%s", err.msg);
        if (m) {
            const infer_config *c = infer_model_config(m);
            CHECK(!strcmp(c->arch, arch[a_i]));
            CHECK(c->n_layer == 4 && (a_i == 0 ? c->n_expert == 0 : c->n_expert == 8 && c->n_expert_used == 2 && c->n_ff_shexp == 256));
            infer_model_free(m);
        }
        int32_t ids[40];
        for (int i = 0; i < 40; i++) ids[i] = (i * 29 + 3) % 1024;
        float *a = file_logits(tmp_path("infer_q35.gguf"), ids, 40, (run_opts){ .precise = 1, .n_ctx = 64 }, NULL);
        float *b = file_logits(tmp_path("infer_q35.gguf"), ids, 40, (run_opts){ .n_ctx = 64 }, NULL);
        CHECK(a && b);
        /* dense: the whole fast run stays near the precise one. MoE: a token whose top-k
         * experts are nearly tied may pick another expert on the fast path, which moves its
         * logits a lot, so only the typical (median) row is held to the limit. */
        double mx = 0, mean = 0, rowdiff[40];
        for (int r = 0; a && b && r < 40; r++) {
            rowdiff[r] = 0;
            for (int i = r * 1024; i < (r + 1) * 1024; i++) {
                mx = fmax(mx, fabs(a[i]));
                mean += fabs(a[i] - b[i]);
                rowdiff[r] = fmax(rowdiff[r], fabs(a[i] - b[i]));
            }
        }
        qsort(rowdiff, 40, sizeof(double), cmp_double);
        CHECK_MSG(mx > 1 && mx < 100, "%s: max |logit| %g", arch[a_i], mx);
        if (a_i == 0) CHECK_MSG(mean / (40 * 1024) < 0.1, "%s: fast vs precise mean diff %g", arch[a_i], mean / (40 * 1024));
        else CHECK_MSG(rowdiff[20] < 1.0, "%s: fast vs precise median row max diff %g", arch[a_i], rowdiff[20]);
        free(a); free(b);
        remove(tmp_path("infer_q35.gguf"));
    }
    char out[4096];
    CHECK(run_cmd("./tools/convert synth qwen35moe nosuch $INFER_TMP/infer_q35.gguf 2>&1", out, sizeof out) != 0 && strstr(out, "unknown preset"));
}

/* a GGUF file parsed from its bytes (*buf: free it after infer_gguf_free) */
static int gguf_of_file(const char *path, infer_gguf *g, void **buf) {
    size_t n = 0;
    infer_error err;
    *buf = slurp(path, &n);
    if (*buf && infer_gguf_parse(g, *buf, n, &err) == INFER_OK) return 1;
    printf("    %s: %s\n", path, *buf ? err.msg : "cannot read");
    free(*buf);
    *buf = NULL;
    return 0;
}

/* A vocabulary whose pieces are longer than any fixed buffer (every normal token of a tiny
 * llama replaced by 300 bytes of letters and digits): generation and --parallel print
 * whole pieces and nothing else (--chat prints through the same helper; its prompt would
 * need the vocabulary's byte tokens, which this one has lost) */
static void test_cli_long_pieces(void) {
    if (!file_exists("./tools/convert") || !file_exists("./infer")) SKIP("./tools/convert or ./infer not built");
    static char out[16384];
    CHECK_MSG(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_lp_src.gguf --type f32 2>&1", out, sizeof out) == 0, "%s", out);
    infer_gguf g;
    void *buf;
    if (!gguf_of_file(tmp_path("infer_lp_src.gguf"), &g, &buf)) { CHECK(0); return; }
    const infer_gguf_kv *toks = infer_gguf_find(&g, "tokenizer.ggml.tokens"), *types = infer_gguf_find(&g, "tokenizer.ggml.token_type");
    CHECK(toks && types && toks->arr_n == types->arr_n && toks->arr_n < 100000);
    if (!toks || !types || toks->arr_n != types->arr_n || toks->arr_n >= 100000) { infer_gguf_free(&g); free(buf); return; }
    const uint64_t n = toks->arr_n;
    uint8_t *enc = malloc((size_t)n * (8 + 300)), *w = enc;
    const uint8_t *r = toks->arr_data;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len;
        memcpy(&len, r, 8);
        int32_t type;
        memcpy(&type, types->arr_data + 4 * i, 4);
        if (type == 3) { memcpy(w, r, 8 + (size_t)len); w += 8 + len; }        /* control tokens keep their text */
        else {
            const uint64_t L = 300;
            memcpy(w, &L, 8);
            memset(w + 8, 'a' + (int)(i % 26), 294);
            char id[8];
            snprintf(id, sizeof id, "%06d", (int)i);
            memcpy(w + 8 + 294, id, 6);
            w += 8 + L;
        }
        r += 8 + len;
    }
    infer_gguf_kv *kv = malloc(sizeof *kv * (size_t)g.n_kv);
    for (int64_t i = 0; i < g.n_kv; i++) kv[i] = &g.kv[i] == toks ? infer_gguf_kv_array("tokenizer.ggml.tokens", INFER_GGUF_STRING, n, enc) : g.kv[i];
    infer_error err;
    CHECK_MSG(infer_gguf_write(tmp_path("infer_lp.gguf"), kv, g.n_kv, g.tensors, g.n_tensors, (uint32_t)g.alignment, &err) == INFER_OK, "%s", err.msg);
    free(kv); free(enc);
    infer_gguf_free(&g);
    free(buf);
    const char *cmds[2] = { "./infer -m $INFER_TMP/infer_lp.gguf --prompt-ids 5,6,7 -n 8 --temp 0 -t 1 2>/dev/null",
                            "printf '1,2\\n3,4\\n' > $INFER_TMP/infer_lp.txt; "
                            "./infer -m $INFER_TMP/infer_lp.gguf -f $INFER_TMP/infer_lp.txt --parallel 2 -n 4 --temp 0 -t 1 2>/dev/null" };
    for (int c = 0; c < 2; c++) {
        const int rc = run_cmd(cmds[c], out, sizeof out);
        size_t len = strlen(out), run = 0, pieces = 0;
        int clean = 1;
        for (size_t i = 0; i < len; i++) {                  /* runs of piece bytes, each a whole number of pieces */
            const char ch = out[i];
            if (ch == '[' && run == 0) {                        /* --parallel's "[line] " */
                while (i < len && out[i] != ']') i++;
                continue;
            }
            if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) { run++; continue; }
            if (run % 300) clean = 0;
            pieces += run / 300;
            run = 0;
            if (!(ch == '\n' || ch == ' ')) clean = 0;
        }
        if (run % 300) clean = 0;
        pieces += run / 300;
        CHECK_MSG(rc == 0 && clean && pieces > 0, "%s: rc %d, %zu bytes, %zu pieces, only pieces printed: %d", cmds[c], rc, len, pieces, clean);
    }
}

/* `convert synth llama tiny --type FTYPE` holds, tensor for tensor, the types `convert
 * quantize --type FTYPE` gives the same shape (the reference quantizer's choices: the tied
 * embedding at Q6_K for Q4_0, some attn_v / ffn_down at Q6_K for Q4_K_M, ...); --pure and a
 * plain type put every matrix in one type */
static void test_convert_synth_ftype(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    char cmd[512], out[4096];
    CHECK_MSG(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_sf_f32.gguf --type f32 2>&1", out, sizeof out) == 0, "%s", out);
    const char *ftypes[6] = { "Q4_0", "q8_0", "Q4_K_M", "Q6_K", "Q5_K_M", "Q3_K_M" };
    for (int i = 0; i < 6; i++) {
        snprintf(cmd, sizeof cmd, "./tools/convert synth llama tiny $INFER_TMP/infer_sf_a.gguf --type %s 2>&1 && "
                                  "./tools/convert quantize $INFER_TMP/infer_sf_f32.gguf $INFER_TMP/infer_sf_b.gguf --type %s 2>&1", ftypes[i], ftypes[i]);
        CHECK_MSG(run_cmd(cmd, out, sizeof out) == 0, "%s: %s", ftypes[i], out);
        infer_gguf ga, gb;
        void *ba, *bb;
        if (!gguf_of_file(tmp_path("infer_sf_a.gguf"), &ga, &ba)) { CHECK(0); continue; }
        if (!gguf_of_file(tmp_path("infer_sf_b.gguf"), &gb, &bb)) { CHECK(0); infer_gguf_free(&ga); free(ba); continue; }
        int same = ga.n_tensors == gb.n_tensors, mixed = 0;
        for (int64_t t = 0; same && t < ga.n_tensors; t++) {
            const infer_tensor *b = infer_gguf_tensor(&gb, ga.tensors[t].name);
            same = b && b->type == ga.tensors[t].type;
            if (!same) printf("    %s %s: synth %s, quantize %s\n", ftypes[i], ga.tensors[t].name, infer_type_name(ga.tensors[t].type), b ? infer_type_name(b->type) : "-");
            mixed |= ga.tensors[t].type != ga.tensors[0].type && ga.tensors[t].n_dims > 1 && ga.tensors[0].n_dims > 1;
        }
        CHECK_MSG(same, "%s: synth's tensor types differ from quantize's", ftypes[i]);
        if (i != 1 && i != 3) CHECK_MSG(mixed, "%s: every matrix has one type (the output should differ)", ftypes[i]);   /* Q8_0, Q6_K: one type */
        if (i == 0) {
            const infer_tensor *e = infer_gguf_tensor(&ga, "token_embd.weight"), *q = infer_gguf_tensor(&ga, "blk.0.attn_q.weight");
            CHECK(e && q && e->type == INFER_TYPE_Q6_K && q->type == INFER_TYPE_Q4_0);
        }
        infer_gguf_free(&ga); infer_gguf_free(&gb);
        free(ba); free(bb);
    }
    /* --pure: every matrix Q4_0 */
    CHECK_MSG(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_sf_a.gguf --type Q4_0 --pure 2>&1", out, sizeof out) == 0, "%s", out);
    infer_gguf g;
    void *buf;
    CHECK(gguf_of_file(tmp_path("infer_sf_a.gguf"), &g, &buf));
    if (buf) {
        for (int64_t t = 0; t < g.n_tensors; t++)
            if (g.tensors[t].n_dims > 1) CHECK_MSG(g.tensors[t].type == INFER_TYPE_Q4_0, "--pure: %s is %s", g.tensors[t].name, infer_type_name(g.tensors[t].type));
        infer_gguf_free(&g);
        free(buf);
    }
    /* -t: the same bytes from one thread as from three, synth and quantize alike */
    CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_sf_a.gguf --type Q4_K_M -t 1 2>&1 && "
                  "./tools/convert -t 3 synth llama tiny $INFER_TMP/infer_sf_b.gguf --type Q4_K_M 2>&1 && "
                  "cmp $INFER_TMP/infer_sf_a.gguf $INFER_TMP/infer_sf_b.gguf 2>&1 && "
                  "./tools/convert quantize $INFER_TMP/infer_sf_f32.gguf $INFER_TMP/infer_sf_a.gguf --type Q5_K_M -t 1 2>&1 && "
                  "./tools/convert quantize $INFER_TMP/infer_sf_f32.gguf $INFER_TMP/infer_sf_b.gguf --type Q5_K_M -t 3 2>&1 && "
                  "cmp $INFER_TMP/infer_sf_a.gguf $INFER_TMP/infer_sf_b.gguf 2>&1", out, sizeof out) == 0);
    CHECK(run_cmd("./tools/convert quantize $INFER_TMP/infer_sf_f32.gguf $INFER_TMP/infer_sf_a.gguf --type Q4_0 -t 0 2>&1", out, sizeof out) == 1 && strstr(out, "-t 0"));
    remove(tmp_path("infer_sf_a.gguf")); remove(tmp_path("infer_sf_b.gguf")); remove(tmp_path("infer_sf_f32.gguf"));
}

/* `convert synth bitnet tiny` in the three ternary types: the files load and run */
static void test_convert_synth_bitnet(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    const char *types[3] = { "tq2_0", "tq1_0", "i2_s" };
    char cmd[256], out[4096];
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "./tools/convert synth bitnet tiny $INFER_TMP/infer_bn_synth.gguf --type %s 2>&1", types[i]);
        CHECK_MSG(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
        infer_model *m;
        infer_error err;
        if (infer_model_load(&m, tmp_path("infer_bn_synth.gguf"), NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", types[i], err.msg); continue; }
        const infer_config *c = infer_model_config(m);
        CHECK(!strcmp(c->arch, "bitnet") && c->ffn_act == 1 && c->tied_output && m->layers[0].attn_sub_norm && m->layers[1].ffn_sub_norm);
        CHECK(m->layers[0].wq->type == (infer_type)infer_type_from_name(types[i]) && m->tok_embd->type == INFER_TYPE_Q6_K);
        infer_model_free(m);
        int32_t ids[4] = { 1, 2, 3, 4 };
        int V = 0;
        float *a = file_logits(tmp_path("infer_bn_synth.gguf"), ids, 4, (run_opts){ .threads = 2, .n_ctx = 256 }, &V);
        float *b = file_logits(tmp_path("infer_bn_synth.gguf"), ids, 4, (run_opts){ .precise = 1, .threads = 1, .n_ctx = 256 }, &V);
        CHECK(a && b);
        if (a && b) {   /* the fast path stays near the exact maths on a random-weight model */
            double e = 0, s = 0;
            for (int k = 0; k < 4 * V; k++) { e += fabs(a[k] - b[k]); s += fabs(b[k]); }
            CHECK_MSG(s > 0 && e / s < 0.05, "%s: fast vs precise mean relative diff %.3g", types[i], e / s);
        }
        free(a); free(b);
    }
    remove(tmp_path("infer_bn_synth.gguf"));
}

/* tools/convert synth deepseek4 tiny runs (the same bits prompt-batched as token by token,
 * in the exact maths), and quantize --type nvfp4 turns its experts, only them, to NVFP4 */
static void test_convert_synth_deepseek4(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    char out[4096];
    CHECK(run_cmd("./tools/convert synth deepseek4 tiny $INFER_TMP/infer_ds4.gguf --type f32 2>&1", out, sizeof out) == 0);
    CHECK(run_cmd("./tools/convert quantize $INFER_TMP/infer_ds4.gguf $INFER_TMP/infer_ds4_nv.gguf --type nvfp4 2>&1", out, sizeof out) == 0);
    const char *files[2] = { tmp_path("infer_ds4.gguf"), tmp_path("infer_ds4_nv.gguf") };
    int32_t ids[150];
    for (int i = 0; i < 150; i++) ids[i] = (i * 29 + 3) % 320;
    for (int f = 0; f < 2; f++) {
        infer_model *m;
        infer_error err;
        if (infer_model_load(&m, files[f], NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", files[f], err.msg); continue; }
        const infer_gguf *g = infer_model_gguf(m);
        int nv = 0, other_nv = 0;
        for (int64_t i = 0; i < g->n_tensors; i++) {
            const int is_exp = strstr(g->tensors[i].name, "_exps.") != NULL;
            nv += is_exp && g->tensors[i].type == (f ? INFER_TYPE_NVFP4 : INFER_TYPE_MXFP4);
            other_nv += !is_exp && g->tensors[i].type == INFER_TYPE_NVFP4;
        }
        CHECK_MSG(nv == 12 && other_nv == 0, "%s: %d expert tensors of the FP4 type, %d others in NVFP4", files[f], nv, other_nv);
        float *a = eval_logits(m, ids, 150, 150, (run_opts){ 1, 512, 2, 256, NULL }), *b = eval_logits(m, ids, 150, 150, (run_opts){ 1, 1, 2, 256, NULL });
        float *c = eval_logits(m, ids, 150, 150, (run_opts){ 0, 512, 2, 256, NULL });
        CHECK(a && b && c);
        if (a && b && c) {
            double mx = 0, mean = 0;
            for (int i = 0; i < 150 * 320; i++) { mx = fmax(mx, fabs(a[i])); mean += fabs(a[i] - c[i]); }
            CHECK_MSG(!memcmp(a, b, sizeof(float) * 150 * 320), "%s: batched and token-by-token logits differ", files[f]);
            CHECK_MSG(mx > 0.5 && mx < 100, "%s: max |logit| %g", files[f], mx);
            CHECK_MSG(mean / (150 * 320) < 0.2, "%s: fast vs exact mean diff %g", files[f], mean / (150 * 320));
        }
        free(a); free(b); free(c);
        infer_model_free(m);
    }
    remove(tmp_path("infer_ds4.gguf"));
    remove(tmp_path("infer_ds4_nv.gguf"));
    CHECK(run_cmd("./tools/convert synth deepseek4 nosuch $INFER_TMP/infer_ds4.gguf 2>&1", out, sizeof out) != 0 && strstr(out, "unknown preset"));
}

/* tools/convert on folders and safetensors */
static void test_convert_hf_folder(void) {
    if (!file_exists("./tools/convert")) SKIP("./tools/convert not built");
    hft_golden x;
    char cmd[1024], out[8192];
    infer_error err;
    if (!hft_open(&x, "qwen3", "Qwen3ForCausalLM", 2, 0, 0)) {
        if (!x.file) SKIP(SHARED "/golden/qwen3 not found");
        CHECK(0);
        hft_close(&x);
        return;
    }
    /* the folder as GGUF: the golden file's tensors and metadata */
    snprintf(cmd, sizeof cmd, "./tools/convert %s $INFER_TMP/infer_hfcv.gguf 2>&1", x.dir);
    CHECK_MSG(run_cmd(cmd, out, sizeof out) == 0 && strstr(out, "wrote"), "%s", out);
    size_t n;
    uint8_t *f = slurp(tmp_path("infer_hfcv.gguf"), &n);
    infer_gguf g;
    if (f && infer_gguf_parse(&g, f, n, &err) == INFER_OK) {
        hft_compare_tensors(&x, &g, "convert");
        CHECK(hft_same_kv(&x.g, &g, 1) == 0 && hft_same_kv(&g, &x.g, 1) == 0);
        infer_gguf_free(&g);
    } else CHECK_MSG(0, "convert wrote no GGUF");
    free(f);
    /* --type q8_0: matrices re-encoded, norms F32, still a model */
    snprintf(cmd, sizeof cmd, "./tools/convert %s $INFER_TMP/infer_hfcv.gguf --type q8_0 2>&1", x.dir);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    f = slurp(tmp_path("infer_hfcv.gguf"), &n);
    if (f && infer_gguf_parse(&g, f, n, &err) == INFER_OK) {
        const infer_tensor *q = infer_gguf_tensor(&g, "blk.1.attn_q.weight"), *nm = infer_gguf_tensor(&g, "blk.1.attn_q_norm.weight");
        /* Q8_0 is also a file type: general.file_type says so, as the reference writes it */
        const infer_gguf_kv *ft = infer_gguf_find(&g, "general.file_type");
        CHECK(q && q->type == INFER_TYPE_Q8_0 && nm && nm->type == INFER_TYPE_F32 && ft && ft->v.u == 7);
        infer_gguf_free(&g);
        infer_model *m;
        const infer_status rc = infer_model_load_memory(&m, f, n, NULL, &err);
        CHECK_MSG(rc == INFER_OK, "%s", err.msg);
        if (rc == INFER_OK) infer_model_free(m);
    } else CHECK_MSG(0, "convert --type q8_0 wrote no GGUF");
    free(f);
    /* info on a folder, on a shard */
    snprintf(cmd, sizeof cmd, "./tools/convert info %s", x.dir);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strstr(out, "qwen3.embedding_length") && strstr(out, "blk.0.attn_q.weight"));
    snprintf(cmd, sizeof cmd, "./tools/convert info %s/model-00002-of-00002.safetensors", x.dir);
    CHECK_MSG(run_cmd(cmd, out, sizeof out) == 0 && strstr(out, "safetensors: ") && strstr(out, "F32") && strstr(out, "format"), "%s", out);
    /* errors */
    snprintf(cmd, sizeof cmd, "./tools/convert info %s/config.json 2>&1", x.dir);
    CHECK(run_cmd(cmd, out, sizeof out) != 0 && strstr(out, "safetensors"));
    snprintf(cmd, sizeof cmd, "./tools/convert %s $INFER_TMP/infer_hfcv.gguf --type q9_9 2>&1", x.dir);
    CHECK(run_cmd(cmd, out, sizeof out) != 0 && strstr(out, "unknown type"));
    CHECK(run_cmd("mkdir -p $INFER_TMP/infer_hf_empty && ./tools/convert $INFER_TMP/infer_hf_empty $INFER_TMP/infer_hfcv.gguf 2>&1", out, sizeof out) != 0 && strstr(out, "config.json"));
    /* a vocabulary on its own */
    if (file_exists(SHARED "/tokenizers/qwen3/tokenizer.json")) {
        CHECK(run_cmd("./tools/convert vocab " SHARED "/tokenizers/qwen3/tokenizer.json $INFER_TMP/infer_hfcv.gguf 2>&1", out, sizeof out) == 0 && strstr(out, "151669 tokens"));
        infer_model *m;
        infer_model_params mp = { .vocab_only = 1 };
        const infer_status rc = infer_model_load(&m, tmp_path("infer_hfcv.gguf"), &mp, &err);
        CHECK(rc == INFER_OK && infer_model_tokenizer(m));
        if (rc == INFER_OK) infer_model_free(m);
    }
    remove(tmp_path("infer_hfcv.gguf"));
    hft_rmdir(tmp_path("infer_hf_empty"));
    hft_close(&x);
}

/* `convert quantize` on tensors with no elements (a zero in any dimension) and on NaN
 * weights: a clear error naming the tensor, never a division by zero or a crash; `infer -m`
 * refuses the same files */
static void test_robust_convert_zero_dim(void) {
    if (!file_exists("./tools/convert") || !file_exists("./infer")) SKIP("./tools/convert or ./infer not built");
    const int64_t shapes[4][3] = { { 256, 0, 1 }, { 0, 64, 1 }, { 256, 4, 0 }, { 256, 4, 1 } };
    float data[1024], embd[256];
    for (int i = 0; i < 1024; i++) data[i] = (float)i / 1024;
    for (int i = 0; i < 256; i++) embd[i] = (float)i / 256;
    for (int sh = 0; sh < 4; sh++) {
        if (sh == 3) data[777] = NAN;                             /* the last one: a NaN weight */
        infer_tensor t[2];
        memset(t, 0, sizeof t);
        t[0].name = "token_embd.weight"; t[0].type = INFER_TYPE_F32; t[0].n_dims = 2;
        t[0].ne[0] = 64; t[0].ne[1] = 4; t[0].ne[2] = t[0].ne[3] = 1; t[0].data = embd; t[0].nbytes = 1024; t[0].scale = 1;
        t[1].name = "blk.0.attn_q.weight"; t[1].type = INFER_TYPE_F32; t[1].n_dims = shapes[sh][2] == 1 ? 2 : 3;
        t[1].ne[0] = shapes[sh][0]; t[1].ne[1] = shapes[sh][1]; t[1].ne[2] = shapes[sh][2]; t[1].ne[3] = 1;
        t[1].data = data; t[1].nbytes = (size_t)(shapes[sh][0] * shapes[sh][1] * shapes[sh][2]) * 4; t[1].scale = 1;
        infer_gguf_kv kv[1] = { infer_gguf_kv_str("general.architecture", "llama") };
        infer_error err;
        CHECK(infer_gguf_write(tmp_path("infer_rb_zero.gguf"), kv, 1, t, 2, 32, &err) == INFER_OK);
        const char *types[3] = { "q8_0", "q4_K", "i2_s" };
        for (int ti = 0; ti < 3; ti++) {
            char cmd[256], out[4096];
            snprintf(cmd, sizeof cmd, "./tools/convert quantize $INFER_TMP/infer_rb_zero.gguf $INFER_TMP/infer_rb_zero_q.gguf --type %s 2>&1", types[ti]);
            const int rc = run_cmd(cmd, out, sizeof out);
            CHECK_MSG(rc == 1 && strstr(out, "blk.0.attn_q.weight") && strstr(out, sh == 3 ? "finite" : "no elements"),
                      "shape %d, %s: rc %d: %s", sh, types[ti], rc, out);
        }
        char out[4096];
        CHECK(run_cmd("./infer -m $INFER_TMP/infer_rb_zero.gguf -p hi 2>&1", out, sizeof out) == 1);
    }
    remove(tmp_path("infer_rb_zero.gguf")); remove(tmp_path("infer_rb_zero_q.gguf"));
}

/* ---- tools/train: the trainer of data/tales.gguf, and the model it made ----
 * The trainer's backward pass against finite differences, its forward pass against infer.h
 * on the file it writes, its tokenizer against infer.h's on the vocabulary it writes, a short
 * run (the loss falls, the thread count changes nothing), and the committed model writing
 * the corpus's language. */

/* a small corpus and the vocabulary learned from it (60 stories, 400 pieces) */
static int train_small_vocab(train_buf *text, train_vocab *v) {
    memset(text, 0, sizeof *text);
    if (train_corpus(text, 3, 60) < 0) return -1;
    return train_vocab_learn(v, text->p, text->n, 400);
}

static void test_train_grad(void) {
    const train_config c = train_tiny_config();
    train_model m;
    CHECK(train_model_create(&m, &c) == 0);
    train_gradcheck *res = calloc((size_t)m.n_tensors, sizeof *res);
    CHECK(res && train_grad_check(&c, 1, res) == 0);
    /* every tensor: along its gradient and along a random direction; float rounding gives
     * ~1e-3 at worst, a wrong term in the backward pass is off by far more */
    for (int i = 0; res && i < m.n_tensors; i++)
        for (int d = 0; d < 2; d++) {
            const double e = train_grad_err(res[i].fd[d], res[i].an[d]);
            CHECK_MSG(e < 1e-2, "%s (%s direction): finite difference %.6g, backward %.6g, relative error %.2g", m.t[i].name,
                      d ? "random" : "gradient", res[i].fd[d], res[i].an[d], e);
        }
    /* the gradient along itself is its norm: a tensor with no gradient at all would pass the
     * comparison trivially */
    for (int i = 0; res && i < m.n_tensors; i++) CHECK_MSG(res[i].an[0] > 1e-3, "%s has no gradient", m.t[i].name);
    /* and a wrong gradient is caught: the checker's own sensitivity */
    CHECK(train_grad_err(1.0, 1.05) > 1e-2);
    free(res);
    train_model_free(&m);
}

/* the exported vocabulary tokenizes as the trainer does: the corpus it was learned on, stories
 * it never saw, and text outside it (byte fallback, runs of spaces, control-token texts) */
static void test_train_tokenizer(void) {
    train_buf text, other = { 0 };
    train_vocab v;
    if (train_small_vocab(&text, &v) != 0) { CHECK(0); return; }
    CHECK(v.n == 400);
    CHECK(train_corpus(&other, 4, 20) == 0);
    train_config c = train_tiny_config();
    c.vocab = v.n;
    train_model m;
    CHECK(train_model_create(&m, &c) == 0);
    infer_error err;
    CHECK_MSG(train_export(&m, &v, tmp_path("train_tok.gguf"), INFER_TYPE_F32, &err) == INFER_OK, "%s", err.msg);
    infer_model *im = load_model(tmp_path("train_tok.gguf"), 1);
    const infer_tokenizer *tk = im ? infer_model_tokenizer(im) : NULL;
    CHECK(tk != NULL);
    static const char *const odd[] = { "Hello  world\tagain\nand again", "caf\xc3\xa9 na\xc3\xafve \xf0\x9f\x99\x82 ok", "<s> not a token </s>",
                                       "  two leading spaces", "trailing space ", "Lily's \"big\" day... 42!", "" };
    int lines = 0, bad = 0, byte_tokens = 0;
    int32_t *a = malloc(sizeof(int32_t) * 4096), *b = malloc(sizeof(int32_t) * 4096);
    for (int src = 0; tk && src < 3; src++) {
        const char *p = src == 0 ? text.p : src == 1 ? other.p : NULL;
        for (int k = 0;; k++) {
            const char *line;
            size_t len;
            if (src < 2) {
                if (!*p) break;
                const char *nl = strchr(p, '\n');
                line = p;
                len = nl ? (size_t)(nl - p) : strlen(p);
                p += len + (nl != NULL);
            } else {
                if (k >= (int)(sizeof odd / sizeof odd[0])) break;
                line = odd[k];
                len = strlen(line);
            }
            const int na = train_encode(&v, line, len, a, 4096), nb = infer_tokenize(tk, line, len, 0, 0, b, 4096);
            lines++;
            if (na != nb || (na > 0 && memcmp(a, b, sizeof(int32_t) * (size_t)na) != 0)) {
                if (bad++ < 3) printf("    differs (%d vs %d tokens): %.60s\n", na, nb, line);
            }
            for (int i = 0; src == 2 && i < na && i < 4096; i++) byte_tokens += a[i] >= TRAIN_TOK_BYTE0 && a[i] < TRAIN_TOK_BYTE0 + 256;
        }
    }
    CHECK_MSG(bad == 0 && lines == 60 + 20 + 7, "%d of %d texts tokenize differently", bad, lines);
    CHECK(byte_tokens > 10); /* the odd texts went through byte fallback */
    /* merges did happen: a story takes far fewer tokens than bytes */
    const int n0 = train_encode(&v, text.p, strcspn(text.p, "\n"), a, 4096);
    CHECK_MSG(n0 > 0 && (double)strcspn(text.p, "\n") / n0 > 1.5, "%d tokens for %zu bytes", n0, strcspn(text.p, "\n"));
    /* the ids decode back to the text */
    char back[8192];
    const int nd = tk ? infer_detokenize(tk, a, n0, 1, 0, back, sizeof back) : -1;
    CHECK(nd == (int)strcspn(text.p, "\n") && !memcmp(back, text.p, (size_t)nd));
    free(a); free(b);
    if (im) infer_model_free(im);
    train_model_free(&m);
    train_vocab_free(&v);
    free(text.p); free(other.p);
}

/* the trainer's logits equal infer.h's on the file it wrote: tensor layout, rope pairs,
 * norms, the vocabulary's ids (F32 to float rounding; F16 to its rounding) */
static void test_train_export(void) {
    train_buf text;
    train_vocab v;
    if (train_small_vocab(&text, &v) != 0) { CHECK(0); return; }
    train_config c = train_tiny_config();
    c.dim = 32; c.ffn = 48; c.n_heads = 4; c.ctx = 64; c.vocab = v.n;
    train_model m;
    train_acts a;
    CHECK(train_model_create(&m, &c) == 0 && train_acts_init(&a, &c, 48) == 0);
    train_model_init(&m, 5, 0.2f);
    for (int i = 0; i < m.n_tensors; i++) /* norm gains that differ from 1, so a norm read wrongly shows */
        if (m.t[i].rows == 1)
            for (int k = 0; k < m.t[i].cols; k++) m.w[m.t[i].off + k] = 0.75f + 0.5f * (float)((k * 7 + i) % 11) / 11.0f;
    int32_t ids[1024];
    const size_t len = strcspn(text.p, "\n");
    ids[0] = TRAIN_TOK_BOS;
    const int n = 1 + train_encode(&v, text.p, len, ids + 1, 1023), T = 48;
    CHECK(n > T && n <= 1024);
    float *wt = malloc(sizeof(float) * m.n_params), *lg = malloc(sizeof(float) * (size_t)T * c.vocab);
    train_transpose_all(&m, wt);
    train_forward(&m, wt, &a, ids, NULL, T);
    for (int ty = 0; ty < 2; ty++) {
        const char *path = tmp_path(ty ? "train_f16.gguf" : "train_f32.gguf");
        infer_error err;
        CHECK_MSG(train_export(&m, &v, path, ty ? INFER_TYPE_F16 : INFER_TYPE_F32, &err) == INFER_OK, "%s", err.msg);
        infer_model *im = load_model(path, 0);
        if (!im) continue;
        const infer_config *ic = infer_model_config(im);
        CHECK(!strcmp(ic->arch, "llama") && ic->n_embd == c.dim && ic->n_layer == c.n_layers && ic->n_head == c.n_heads && ic->n_vocab == c.vocab);
        /* the engine tokenizes the story (with its BOS) to the same ids */
        int32_t eid[1024];
        const int en = infer_tokenize(infer_model_tokenizer(im), text.p, len, 1, 0, eid, 1024);
        CHECK(en == n && !memcmp(eid, ids, sizeof(int32_t) * (size_t)n));
        infer_session_params sp = infer_session_default_params();
        sp.precise = 1;
        sp.n_threads = 1;
        infer_session *s = NULL;
        CHECK_MSG(infer_session_create(&s, im, &sp, &err) == INFER_OK, "%s", err.msg);
        if (s) {
            CHECK_MSG(infer_eval(s, ids, T, lg, 1, &err) == INFER_OK, "%s", err.msg);
            double mx = 0;
            for (size_t i = 0; i < (size_t)T * c.vocab; i++) mx = fmax(mx, fabs(a.logits[i]));
            const double d = max_abs_diff(lg, a.logits, (size_t)T * c.vocab);
            CHECK_MSG(mx > 0.5 && d < (ty ? 2e-2 : 1e-4) * mx, "%s: logits differ by %.3g (largest %.3g)", ty ? "F16" : "F32", d, mx);
            infer_session_free(s);
        }
        infer_model_free(im);
    }
    free(wt); free(lg);
    train_acts_free(&a);
    train_model_free(&m);
    train_vocab_free(&v);
    free(text.p);
}

/* a short run of the whole pipeline on a tiny model: the loss falls, and one thread or two
 * write the same file byte for byte (sequences' gradients are summed in a fixed order) */
static void test_train_run(void) {
    train_opts o = train_default_opts();
    o.c.dim = 32; o.c.n_layers = 2; o.c.n_heads = 2; o.c.ffn = 64; o.c.ctx = 32; o.c.vocab = 320;
    o.stories = 60; o.batch = 4; o.steps = 40; o.warmup = 5; o.lr = 1e-2f; o.quiet = 1;
    train_result r1, r2;
    o.threads = 1;
    CHECK(train_tales(&o, tmp_path("train_run1.gguf"), &r1) == 0);
    o.threads = 2;
    CHECK(train_tales(&o, tmp_path("train_run2.gguf"), &r2) == 0);
    CHECK_MSG(r1.train_loss < r1.first_loss - 1.5 && r1.val_loss < r1.first_loss - 1.5, "loss %.3f -> train %.3f, validation %.3f",
              r1.first_loss, r1.train_loss, r1.val_loss);
    CHECK(r1.n_vocab == 320 && r1.n_tokens > 60 * 50);
    size_t n1 = 0, n2 = 0;
    char *f1 = slurp(tmp_path("train_run1.gguf"), &n1), *f2 = slurp(tmp_path("train_run2.gguf"), &n2);
    CHECK_MSG(f1 && f2 && n1 == n2 && !memcmp(f1, f2, n1), "1 and 2 threads trained different weights");
    free(f1); free(f2);
}

/* The committed model writes the corpus's language: at --temp 0 from "Once upon a time",
 * complete sentences (ending in . ! or ?) whose every word is one the generator can write. */
static void test_tales_writes(void) {
    if (!file_exists("./infer")) SKIP("./infer not built");
    CHECK_MSG(file_exists("data/tales.gguf"), "data/tales.gguf is missing (make tales)");
    char out[8192];
    CHECK(run_cmd("./infer -m data/tales.gguf -p \"Once upon a time\" -n 60 --temp 0 2>/dev/null", out, sizeof out) == 0);
    CHECK_MSG(!strncmp(out, "Once upon a time", 16), "%s", out);
    int good = 0, sentences = 0;
    for (const char *p = out; *p;) {
        const char *e = p + strcspn(p, ".!?");
        if (!*e) break; /* an unfinished sentence at the end */
        while (e[1] == '"') e++;
        int words = 0, known = 1;
        for (const char *q = p; q <= e;) {
            if (!isalpha((unsigned char)*q)) { q++; continue; }
            const char *w = q;
            while (q <= e && isalpha((unsigned char)*q)) q++;
            words++;
            if (!train_story_word(w, (size_t)(q - w))) { known = 0; printf("    unknown word '%.*s'\n", (int)(q - w), w); }
        }
        sentences++;
        good += known && words >= 4;
        p = e + 1;
    }
    CHECK_MSG(good >= 1, "no complete sentence of the generator's words in: %s", out);
    /* and the word check itself rejects what is not the corpus's */
    CHECK(train_story_word("Lily", 4) && train_story_word("once", 4) && train_story_word("An", 2) && !train_story_word("zebra", 5));
    printf("    %d of %d sentences made of the generator's words\n", good, sentences);
}

/* ---- the fuzz corpus ----
 * tools/fuzz.c's targets, replayed over data/fuzz: the seeds and every input that ever made
 * one fail (make fuzz finds new ones; ASan builds check each for bad reads and leaks). */
#define FUZZ_NO_MAIN
#include "tools/fuzz.c"

/* Every tensor of every family's seed model (data/fuzz/gguf: llama, k-quants, bitnet,
 * qwen35, qwen35moe, qwen3moe, deepseek4) made non-finite in turn -- NaN, -Inf or 1e30 for F32 tensors,
 * all bytes 0xFF (NaN scales) for quantized ones: a prompt and a decode step, fast and exact,
 * finish with finite logits or stop with INFER_ERR_NUMERIC naming a layer or the logits; no
 * read out of bounds whatever path the NaNs take (routers, DeltaNet gates and state, conv,
 * norms, attention, hyper-connections, compressors, the indexer; a hash table of 0xFF bytes
 * is out of range and refused at load) -- which the ASan build checks */
static void test_robust_nonfinite_families(void) {
    int runs = 0, stopped = 0;
    for (int f = 0; f <= FUZZ_N_FAMILIES; f++) {
        const char *family = f < FUZZ_N_FAMILIES ? fuzz_family[f] : "deepseek4";
        char path[256];
        snprintf(path, sizeof path, "data/fuzz/gguf/seed-%s.gguf", family);
        size_t n;
        uint8_t *orig = slurp(path, &n);
        if (!orig) { CHECK_MSG(0, "%s not found", path); continue; }
        infer_gguf g;
        infer_error err;
        if (infer_gguf_parse(&g, orig, n, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", path, err.msg); free(orig); continue; }
        uint8_t *p = malloc(n);
        for (int64_t ti = 0; ti < g.n_tensors; ti++) {
            const infer_tensor *t = &g.tensors[ti];
            const size_t off = (size_t)((const uint8_t *)t->data - orig);
            const int f32 = t->type == INFER_TYPE_F32;
            for (int v = 0; v < (f32 ? 3 : 1); v++) {
                const float val = v == 0 ? NAN : v == 1 ? -INFINITY : 1e30f;
                memcpy(p, orig, n);
                if (f32) for (size_t i = 0; i < t->nbytes / 4; i++) memcpy(p + off + 4 * i, &val, 4);
                else memset(p + off, 0xFF, t->nbytes);
                for (int precise = 0; precise < 2; precise++) {
                    int finite = 0;
                    const infer_status st = robust_eval(p, n, 3, precise, INFER_TYPE_F16, NULL, &finite, &err);
                    runs++;
                    stopped += st == INFER_ERR_NUMERIC;
                    CHECK_MSG((st == INFER_OK && finite) || (st == INFER_ERR_NUMERIC && (strstr(err.msg, "layer ") || strstr(err.msg, "logits"))) ||
                              st == INFER_ERR_FORMAT || st == INFER_ERR_UNSUPPORTED,
                              "%s, %s = %g, precise %d: status %d: %s", family, t->name, f32 ? val : NAN, precise, st, st == INFER_OK ? "non-finite logits" : err.msg);
                }
            }
        }
        infer_gguf_free(&g);
        free(p); free(orig);
    }
    printf("    %d runs with a non-finite tensor: %d stopped with a named layer, the rest finished finite\n", runs, stopped);
}

static void test_fuzz_regress(void) {
    int total = 0;
    for (int i = 0; i < FUZZ_N_TARGETS; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, "data/fuzz/%s", fuzz_targets[i].name);
        const int n = fuzz_replay_dir(&fuzz_targets[i], dir, NULL);
        CHECK_MSG(n > 0, "%s: no inputs", dir);
        total += n;
    }
    /* the model seeds still load and run: a seed that fails early teaches the fuzzer little
     * (make fuzz-seeds writes them again after a format change) */
    for (int i = 0; i < FUZZ_N_FAMILIES; i++) {
        char path[256];
        snprintf(path, sizeof path, "data/fuzz/gguf/seed-%s.gguf", fuzz_family[i]);
        infer_model *m;
        infer_error err;
        if (infer_model_load(&m, path, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s: %s", path, err.msg); continue; }
        CHECK(fuzz_seed_runs(path, m));
    }
    fuzz_dir_remove();
    printf("    %d corpus inputs replayed through the fuzz targets\n", total);
}

/* ---- the server's request parser and tool-call reader (tools/server_req.c, through
 * tools/fuzz.c), without a socket: the fuzz target's vocabulary (GPT-2 byte-level BPE, 271
 * ids), 2048 positions a sequence and its chat template ---- */

/* parse body for endpoint kind; 1 when it parsed. A refusal must carry status, code and a
 * message containing `says` (when given), and leave nothing held. */
static int srv_parse_expect(const srv_limits *L, int kind, const char *body, size_t len, int status, const char *code, const char *says, srv_request *q) {
    srv_perr e;
    const int ok = srv_parse_request(L, kind, body, len, q, &e);
    if (status == 200) {
        CHECK_MSG(ok, "[%.200s]: refused %d %s: %s", body, e.status, e.code ? e.code : "null", e.msg);
        return ok;
    }
    CHECK_MSG(!ok && e.status == status && ((!code && !e.code) || (code && e.code && !strcmp(e.code, code))) && e.msg[0] && (!says || strstr(e.msg, says)),
              "[%.200s]: want %d %s '%s', got %s %d %s '%s'", body, status, code ? code : "null", says ? says : "", ok ? "parsed" : "refused", e.status,
              e.code ? e.code : "null", e.msg);
    CHECK(!q->prompt && !q->grammar && q->n_stop == 0);
    if (ok) srv_request_free(q);
    return 0;
}

/* the text of a parsed prompt (the chat template's output, tokenized): its tokens' pieces */
static void srv_prompt_text(const srv_limits *L, const srv_request *q, char *out, size_t size) {
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < q->n_prompt; i++) {
        char piece[64];
        const int n = infer_token_to_piece(L->tok, q->prompt[i], 1, piece, sizeof piece);
        if (n < 0 || at + (size_t)n + 1 > size) break;
        memcpy(out + at, piece, (size_t)n);
        out[at += (size_t)n] = 0;
    }
}

static void test_server_parse(void) {
    srv_limits L;
    fuzz_server_limits(&L);
    srv_request q;
    /* the seeds of data/fuzz/server: each parses as its name says, for its own endpoint;
     * seed-bad-* is refused by every endpoint, a seed-reply-* (not JSON) too */
    DIR *dp = opendir("data/fuzz/server");
    CHECK(dp != NULL);
    int n_seeds = 0;
    struct dirent *de;
    while (dp && (de = readdir(dp))) {
        const char *nm = de->d_name;
        if (strncmp(nm, "seed-", 5)) continue;
        char path[512];
        snprintf(path, sizeof path, "data/fuzz/server/%s", nm);
        size_t len;
        char *body = slurp(path, &len);
        if (!body) { CHECK_MSG(0, "%s", path); continue; }
        n_seeds++;
        const int kind = !strncmp(nm + 5, "chat", 4) ? SRV_CHAT : !strncmp(nm + 5, "completion", 10) ? SRV_COMPLETION
                       : !strncmp(nm + 5, "tokenize", 8) ? SRV_TOKENIZE : !strncmp(nm + 5, "detokenize", 10) ? SRV_DETOKENIZE : -1;
        for (int k = SRV_COMPLETION; k <= SRV_DETOKENIZE; k++) {
            srv_perr e;
            const int ok = srv_parse_request(&L, k, body, len, &q, &e);
            CHECK_MSG(ok == (k == kind), "%s as endpoint %d: %s %s", nm, k, ok ? "parsed" : "refused:", ok ? "" : e.msg);
            if (!ok) CHECK_MSG(e.status == 400 && e.code && e.msg[0], "%s: %d %s", nm, e.status, e.msg);
            if (!strncmp(nm + 5, "reply-", 6)) CHECK(!ok && e.code && !strcmp(e.code, "invalid_json"));
            if (ok) srv_request_free(&q);
        }
        free(body);
    }
    if (dp) closedir(dp);
    CHECK_MSG(n_seeds >= 20, "%d seeds", n_seeds);
    /* what valid requests hold */
    const char *c1 = "{\"prompt\":\"Once upon a time\",\"max_tokens\":16,\"temperature\":0.5,\"top_k\":7,\"seed\":42,\"stop\":[\"\\n\",\"The end\",\"\"],"
                     "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
    if (srv_parse_expect(&L, SRV_COMPLETION, c1, strlen(c1), 200, NULL, NULL, &q)) {
        CHECK(q.stream && q.include_usage && q.max_tokens == 16 && q.sp.temp == 0.5f && q.sp.top_k == 7 && q.seed_given && q.sp.seed == 42);
        CHECK(q.n_stop == 2 && !strcmp(q.stop[0], "\n") && !strcmp(q.stop[1], "The end") && !q.tools && !q.grammar);
        int32_t ids[64];
        CHECK(q.n_prompt == infer_tokenize(L.tok, "Once upon a time", 16, 1, 1, ids, 64));
        srv_request_free(&q);
    }
    const char *c2 = "{\"prompt\":[5,6,270],\"seed\":-1,\"n\":1.0,\"max_tokens\":-1,\"json_schema\":{\"type\":\"integer\"}}";
    if (srv_parse_expect(&L, SRV_COMPLETION, c2, strlen(c2), 200, NULL, NULL, &q)) {
        CHECK(q.n_prompt == 3 && q.prompt[2] == 270 && !q.seed_given && q.max_tokens == -1 && q.grammar && q.sp.grammar == q.grammar);
        CHECK(infer_grammar_match(q.grammar, "42", 2) == 1 && infer_grammar_match(q.grammar, "x", 1) == -1);
        srv_request_free(&q);
    }
    /* the tool history renders through the template: arguments sent as a JSON string reach
     * it as the object, null content as "", the tool's reply with its tool_call_id */
    const char *h = "{\"messages\":[{\"role\":\"user\",\"content\":\"Weather?\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
                    "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"sunny\"}],"
                    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}]}";
    char text[8192];
    if (srv_parse_expect(&L, SRV_CHAT, h, strlen(h), 200, NULL, NULL, &q)) {
        srv_prompt_text(&L, &q, text, sizeof text);
        CHECK_MSG(q.tools && strstr(text, "<|im_start|>assistant\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call><|im_end|>\n") &&
                  strstr(text, "<|im_start|>tool\n<tool_response id=\"call_1\">sunny</tool_response>") &&
                  strstr(text, "functions:\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}\n") &&
                  strlen(text) > 22 && !strcmp(text + strlen(text) - 22, "<|im_start|>assistant\n"), "rendered: %s", text);
        srv_request_free(&q);
    }
    /* a template that wants the arguments as the string (it concatenates them): the string */
    srv_limits Ls = L;
    static const char str_tmpl[] = "{%- for m in messages %}{%- for c in m.tool_calls %}{{ '[' + c.function.arguments + ']' }}{%- endfor %}{%- endfor %}";
    Ls.chat_template = str_tmpl;
    Ls.chat_template_len = sizeof str_tmpl - 1;
    if (srv_parse_expect(&Ls, SRV_CHAT, h, strlen(h), 200, NULL, NULL, &q)) {
        srv_prompt_text(&Ls, &q, text, sizeof text);
        CHECK_MSG(!strcmp(text, "[{\"city\": \"Paris\"}]"), "rendered: %s", text);
        srv_request_free(&q);
    }
    const char *none = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"none\"}";
    if (srv_parse_expect(&L, SRV_CHAT, none, strlen(none), 200, NULL, NULL, &q)) { CHECK(!q.tools); srv_request_free(&q); }
    /* bad bodies: status, code, message */
    char deep[256], many[8192], longstop[1200];
    memcpy(deep, "{\"prompt\":", 10);
    for (int k = 0; k < 100; k++) { deep[10 + k] = '['; deep[110 + k] = ']'; }
    memcpy(deep + 210, "}", 2);
    int at = snprintf(many, sizeof many, "{\"prompt\":[");
    for (int k = 0; k < 2048; k++) at += snprintf(many + at, sizeof many - (size_t)at, k ? ",1" : "1");
    snprintf(many + at, sizeof many - (size_t)at, "]}");
    at = snprintf(longstop, sizeof longstop, "{\"prompt\":\"hi\",\"stop\":\"");
    for (int k = 0; k < 600; k++) longstop[at++] = 'a';
    snprintf(longstop + at, sizeof longstop - (size_t)at, "\"}");
    const struct { int kind; const char *body; const char *code, *says; } bad[] = {
        { SRV_COMPLETION, "", "invalid_json", "not valid JSON" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",}", "invalid_json", "expected a member name at byte 15" },
        { SRV_COMPLETION, "{\"prompt\":\"h\xff\xfei\"}", "invalid_json", "invalid UTF-8" },
        { SRV_COMPLETION, "{\"prompt\":\"\xc0\xaf\"}", "invalid_json", "invalid UTF-8" },                 /* an overlong '/' */
        { SRV_COMPLETION, "{\"prompt\":\"\\ud800\"}", "invalid_json", NULL },                              /* a lone surrogate */
        { SRV_COMPLETION, deep, "invalid_json", "nesting deeper than 64" },
        { SRV_COMPLETION, "[1,2]", "invalid_type", "must be a JSON object" },
        { SRV_COMPLETION, "{\"max_tokens\":2}", "missing_field", "'prompt' is required" },
        { SRV_COMPLETION, "{\"prompt\":7}", "invalid_type", "'prompt' must be" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"temperature\":\"hot\"}", "invalid_type", "'temperature' must be a number" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"temperature\":1e999}", "invalid_value", "(got inf)" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"top_p\":-0.5}", "invalid_value", "'top_p' must be in [0, 1]" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"max_tokens\":1.5}", "invalid_type", "'max_tokens' must be an integer" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"max_tokens\":-2}", "invalid_value", "'max_tokens' must be in [-1, 2147483647] (got -2)" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"max_completion_tokens\":99999999999999999999}", "invalid_value", "'max_completion_tokens' must be in [-1, 2147483647] (got 1e+20)" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"top_k\":1e300}", "invalid_value", "'top_k' must be in" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"seed\":1e19}", "invalid_value", "'seed' must be in" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"n\":2}", "invalid_value", "'n' must be 1" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"n\":0}", "invalid_value", "(got 0)" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"n\":\"1\"}", "invalid_type", "'n' must be an integer" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"stream\":1}", "invalid_type", "'stream' must be true or false" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"stream_options\":[]}", "invalid_type", "'stream_options' must be an object" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"logprobs\":true}", "unsupported_value", "'logprobs'" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"logprobs\":5}", "unsupported_value", "'logprobs'" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"echo\":true}", "unsupported_value", "'echo'" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"stop\":[1]}", "invalid_type", "'stop'" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]}", "invalid_value", "has 17 strings" },
        { SRV_COMPLETION, longstop, "invalid_value", "1 to 512 bytes" },
        { SRV_COMPLETION, "{\"prompt\":[0,271]}", "invalid_value", "'prompt'[1] must be a token id in [0, 270]" },
        { SRV_COMPLETION, "{\"prompt\":[1,-3]}", "invalid_value", "'prompt'[1]" },
        { SRV_COMPLETION, "{\"prompt\":[1,2.5]}", "invalid_value", "'prompt'[1]" },
        { SRV_COMPLETION, "{\"prompt\":[]}", "invalid_value", "the prompt is empty" },
        { SRV_COMPLETION, "{\"prompt\":[\"a\",\"b\"]}", "unsupported_value", "one prompt per request" },
        { SRV_COMPLETION, many, "context_length_exceeded", "the prompt has 2048 tokens; a sequence's context is 2048" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"response_format\":{\"type\":\"xml\"}}", "unsupported_value", "\"xml\"" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"grammar\":\"root ::= x\"}", "invalid_value", "'grammar'" },
        { SRV_COMPLETION, "{\"prompt\":\"hi\",\"json_schema\":{\"type\":\"objet\"}}", "unsupported_value", "unknown type 'objet'" },
        { SRV_CHAT, "{\"messages\":[]}", "invalid_type", "'messages' must be a non-empty array" },
        { SRV_CHAT, "{\"messages\":[{\"content\":\"hi\"}]}", "invalid_type", "messages[0] must be an object with a string 'role'" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":5}]}", "invalid_type", "messages[0].content must be" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}", "unsupported_value", "messages[0].content[0]: only text" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":{}}", "invalid_type", "'tools' must be an array" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{\"type\":\"function\"}]}", "invalid_type", "tools[0] must be" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tool_choice\":\"sometimes\"}", "invalid_value", "'tool_choice'" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tool_choice\":{\"type\":\"function\"}}", "invalid_type", "'tool_choice'" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"parallel_tool_calls\":\"yes\"}", "invalid_type", "'parallel_tool_calls'" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":{}}]}", "invalid_type", "messages[0].tool_calls must be an array" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"arguments\":\"{}\"}}]}]}", "invalid_type", "messages[0].tool_calls[0] must be" },
        { SRV_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"chat_template_kwargs\":1}", "invalid_type", "'chat_template_kwargs'" },
        { SRV_TOKENIZE, "{\"content\":5}", "invalid_type", "string 'content'" },
        { SRV_TOKENIZE, "{}", "missing_field", "string 'content'" },
        { SRV_TOKENIZE, "{\"content\":\"a\",\"add_special\":\"no\"}", "invalid_type", "'add_special'" },
        { SRV_DETOKENIZE, "{\"tokens\":\"a\"}", "invalid_type", "array 'tokens'" },
        { SRV_DETOKENIZE, "{\"tokens\":[-1]}", "invalid_value", "'tokens'[0]" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) srv_parse_expect(&L, bad[i].kind, bad[i].body, strlen(bad[i].body), 400, bad[i].code, bad[i].says, &q);
    /* a body with a NUL inside is not JSON */
    srv_parse_expect(&L, SRV_COMPLETION, "{\"prompt\":\"a\"}\0x", 16, 400, "invalid_json", "trailing", &q);
    /* without a vocabulary, prompts as ids only; without a model, no chat */
    srv_limits Ln = L;
    Ln.tok = NULL;
    Ln.m = NULL;
    srv_parse_expect(&Ln, SRV_COMPLETION, "{\"prompt\":\"hi\"}", 15, 400, "unsupported_value", "token ids", &q);
    const char *hi = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    srv_parse_expect(&Ln, SRV_CHAT, hi, strlen(hi), 400, "unsupported_value", "no chat template", &q);
    if (srv_parse_expect(&Ln, SRV_COMPLETION, "{\"prompt\":[1,2]}", 16, 200, NULL, NULL, &q)) srv_request_free(&q);
    /* the template's own refusal is the client's 400 */
    Ls.chat_template = "{{ raise_exception('no system messages') }}";
    Ls.chat_template_len = strlen(Ls.chat_template);
    srv_parse_expect(&Ls, SRV_CHAT, hi, strlen(hi), 400, "invalid_value", "no system messages", &q);
}

/* The tool calls of model-like replies: Hermes/Qwen blocks (JSON or Qwen3.5's XML), Mistral's
 * [TOOL_CALLS], Llama 3.1's JSON reply (after <|python_tag|> or alone); the text around them
 * as the content; a malformed call left in the content. A stream holds back exactly the part
 * where calls may be, and that part has the same calls. */
/* tool_choice "required" / a named function: the request's grammar admits exactly the calls
 * of the template's form, and srv_tool_parse reads each of them back as the call it is */
static int forced_case(const srv_limits *L, const char *tools_and_choice, const char *reply, int want) {
    char body[4096];
    snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],%s}", tools_and_choice);
    srv_request q;
    if (!srv_parse_expect(L, SRV_CHAT, body, strlen(body), 200, NULL, NULL, &q)) return 0;
    const int m = q.grammar && q.sp.grammar == q.grammar && q.tools ? infer_grammar_match(q.grammar, reply, strlen(reply)) : -2;
    CHECK_MSG(m == want, "[%s] on [%s]: match %d, want %d", tools_and_choice, reply, m, want);
    if (want == 1) {                                    /* what the server then makes of such a reply */
        srv_tools_out to;
        CHECK_MSG(srv_tool_parse(reply, strlen(reply), &to) >= 1 && to.content.n == 0, "[%s] does not parse back as calls", reply);
        srv_tools_out_free(&to);
    }
    srv_request_free(&q);
    return m == want;
}
static void test_server_tool_choice(void) {
    srv_limits L;
    fuzz_server_limits(&L);
#define TC_TOOLS "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"," \
                 "\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":12},\"days\":{\"type\":\"integer\"}},\"required\":[\"city\"]}}}," \
                 "{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\",\"properties\":{\"zone\":{\"enum\":[\"UTC\",\"CET\"]}}," \
                 "\"required\":[\"zone\"]}}}]"
    const char *req = TC_TOOLS ",\"tool_choice\":\"required\"", *named = TC_TOOLS ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_time\"}}";
    const char *single = TC_TOOLS ",\"tool_choice\":\"required\",\"parallel_tool_calls\":false";
    /* Hermes (the fuzz template says <tool_call>) */
    const char *w = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>";
    const char *t = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}\n</tool_call>";
    char two[512];
    snprintf(two, sizeof two, "%s\n%s", w, t);
    forced_case(&L, req, w, 1);
    forced_case(&L, req, t, 1);
    forced_case(&L, req, two, 1);
    forced_case(&L, single, two, -1);
    forced_case(&L, named, t, 1);
    forced_case(&L, named, w, -1);
    forced_case(&L, req, "Sure! <tool_call>", -1);                                                        /* no text first */
    forced_case(&L, req, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"PST\"}}\n</tool_call>", -1);   /* the schema's enum */
    forced_case(&L, req, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 2}}\n</tool_call>", -1);    /* required city */
    forced_case(&L, req, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Llanfairpwllgwyngyll\"}}\n</tool_call>", -1);  /* maxLength */
    forced_case(&L, req, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ro", 0);
    forced_case(&L, TC_TOOLS ",\"tool_choice\":\"auto\"", w, -2);                                         /* no grammar: auto, none */
    forced_case(&L, TC_TOOLS ",\"tool_choice\":\"none\"", w, -2);
    /* a schema the converter does not know ("pattern"): that tool's arguments are any object */
    forced_case(&L, "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
                    "\"pattern\":\"^x\"}}}}}],\"tool_choice\":\"required\"", "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"b\": [1, 2]}}\n</tool_call>", 1);
    /* the other forms, by what the template says */
    static const char xml[] = "{% for m in messages %}{{ m.content }}{% endfor %}{# <tool_call> <function=NAME> #}";
    static const char mistral[] = "{% for m in messages %}[INST]{{ m.content }}[/INST]{% endfor %}{# [TOOL_CALLS] #}";
    static const char llama[] = "{% for m in messages %}{{ m.content }}{% endfor %}{# {\"name\": function name, \"parameters\": dictionary} #}";
    srv_limits X = L, M = L, J = L;
    X.chat_template = xml; X.chat_template_len = sizeof xml - 1;
    M.chat_template = mistral; M.chat_template_len = sizeof mistral - 1;
    J.chat_template = llama; J.chat_template_len = sizeof llama - 1;
    const char *xw = "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Jose\n</parameter>\n<parameter=days>\n-3\n</parameter>\n</function>\n</tool_call>";
    forced_case(&X, req, xw, 1);
    forced_case(&X, named, "<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n</function>\n</tool_call>", 1);
    forced_case(&X, named, "<tool_call>\n<function=get_time>\n<parameter=zone>\nEST\n</parameter>\n</function>\n</tool_call>", -1);
    forced_case(&X, req, "<tool_call>\n<function=get_weather>\n<parameter=days>\ntwo\n</parameter>\n</function>\n</tool_call>", -1);   /* an integer */
    forced_case(&X, req, "<tool_call>\n<function=get_weather>\n<parameter=town>\nX\n</parameter>\n</function>\n</tool_call>", -1);   /* no such parameter */
    forced_case(&X, req, w, -1);
    forced_case(&X, req, "<tool_call>\n<function=get_weather>\n</function>\n</tool_call>", -1);                              /* city is required */
    forced_case(&X, req, "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>", 1);
    forced_case(&M, req, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}]", 1);
    forced_case(&M, single, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, {\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}]", -1);
    forced_case(&J, req, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", 1);
    forced_case(&J, req, "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}", -1);
    /* what cannot be forced */
    srv_request q;
    const char *msg = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],";
    char body[4096];
    snprintf(body, sizeof body, "%s\"tool_choice\":\"required\"}", msg);
    srv_parse_expect(&L, SRV_CHAT, body, strlen(body), 400, "invalid_value", "'tools' is empty or absent", &q);
    snprintf(body, sizeof body, "%s" TC_TOOLS ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_tide\"}}}", msg);
    srv_parse_expect(&L, SRV_CHAT, body, strlen(body), 400, "invalid_value", "\"get_tide\", which is not in 'tools'", &q);
    snprintf(body, sizeof body, "%s%s,\"response_format\":{\"type\":\"json_object\"}}", msg, req);
    srv_parse_expect(&L, SRV_CHAT, body, strlen(body), 400, "invalid_value", "not both", &q);
#undef TC_TOOLS
}

static void test_server_tool_parse(void) {
    static const struct { const char *text; int n; const char *calls[3][2]; const char *content; } cases[] = {
        { "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>", 1,
          { { "get_weather", "{\"city\":\"Paris\",\"days\":2}" } }, "Let me check." },
        { "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": \"{\\\"x\\\": 1}\"}\n</tool_call>\n"
          "<tool_call>{\"name\":\"c\"}</tool_call>", 3, { { "a", "{}" }, { "b", "{\"x\": 1}" }, { "c", "{}" } }, NULL },
        { "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>\n<parameter=opts>\n{\"a\": [1]}\n</parameter>\n</function>\n</tool_call>", 1,
          { { "get_weather", "{\"city\":\"Paris\",\"days\":2,\"opts\":{\"a\":[1]}}" } }, NULL },
        { "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"q\": \"x\"}}, {\"name\": \"g\", \"arguments\": {}}]", 2, { { "f", "{\"q\":\"x\"}" }, { "g", "{}" } }, NULL },
        { "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", 1, { { "get_weather", "{\"city\":\"Paris\"}" } }, NULL },
        { "  {\"name\": \"f\", \"parameters\": {\"n\": -1.5e3}}\n", 1, { { "f", "{\"n\":-1500}" } }, NULL },
        { "[{\"name\": \"f\", \"parameters\": {}}, {\"name\": \"g\", \"arguments\": {}}]", 2, { { "f", "{}" }, { "g", "{}" } }, NULL },
        { "<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":1}}", 1, { { "f", "{\"a\":1}" } }, NULL },                    /* cut at the end, but whole */
        { "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>", 0, { { 0 } },
          "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>" },
        { "A <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call> B <tool_call>{\"name\": 5}</tool_call> C", 1, { { "f", "{}" } },
          "A  B <tool_call>{\"name\": 5}</tool_call> C" },
        { "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>", 0, { { 0 } }, "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>" },
        { "<tool_call>\n<function=f>\nstray\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>", 0, { { 0 } }, NULL },
        { "<tool_call><function=f></function> more</tool_call>", 0, { { 0 } }, "<tool_call><function=f></function> more</tool_call>" },
        { "[TOOL_CALLS] not json", 0, { { 0 } }, "[TOOL_CALLS] not json" },
        { "{\"a\": 1}", 0, { { 0 } }, "{\"a\": 1}" },
        { "[1, 2]", 0, { { 0 } }, "[1, 2]" },
        { "Just text, no calls.", 0, { { 0 } }, "Just text, no calls." },
        { "", 0, { { 0 } }, "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *t = cases[i].text;
        srv_tools_out o, held;
        const int n = srv_tool_parse(t, strlen(t), &o);
        CHECK_MSG(n == cases[i].n, "case %zu: %d calls, want %d: %s", i, n, cases[i].n, t);
        for (int k = 0; k < n && n == cases[i].n; k++)
            CHECK_MSG(!strcmp(o.calls[k].name, cases[i].calls[k][0]) && !strcmp(o.calls[k].args, cases[i].calls[k][1]), "case %zu call %d: %s(%s), want %s(%s)",
                      i, k, o.calls[k].name, o.calls[k].args, cases[i].calls[k][0], cases[i].calls[k][1]);
        const char *want = cases[i].content ? cases[i].content : "";
        if (cases[i].n == 0 && !cases[i].content) want = NULL;    /* a malformed XML block: the text as it was (trimmed) */
        if (want) CHECK_MSG(o.content.n == strlen(want) && (!o.content.n || !memcmp(o.content.p, want, o.content.n)), "case %zu content [%.*s], want [%s]", i,
                            (int)o.content.n, o.content.p ? o.content.p : "", want);
        else if (n == 0) CHECK(o.content.n > 0);
        const size_t p = srv_tool_prefix(t, strlen(t), 0);
        CHECK_MSG(srv_tool_parse(t + p, strlen(t) - p, &held) == n && fuzz_same_calls(&o, &held), "case %zu: the streamed part from %zu has other calls", i, p);
        if (n > 0) CHECK_MSG(p <= (size_t)(strstr(t, o.calls[0].name) - t), "case %zu: %zu bytes of a call streamed as content", i, p);
        srv_tools_out_free(&held);
        srv_tools_out_free(&o);
    }
    /* how much a stream may send as content */
    static const struct { const char *text; size_t safe; } pre[] = {
        { "Hello", 5 }, { "Hello <tool", 6 }, { "Hello <tool_call>{\"name\"", 6 }, { "  {\"name\"", 2 }, { "[TOOL_CALLS]", 0 }, { "[", 0 },
        { "abc [", 4 }, { "abc [TOOL", 4 }, { "abc [x", 6 }, { "   ", 0 }, { "", 0 }, { "Hi <|py", 3 }, { "Hi <", 3 }, { "a < b", 5 },
    };
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        const size_t got = srv_tool_prefix(pre[i].text, strlen(pre[i].text), 0);
        CHECK_MSG(got == pre[i].safe, "prefix of [%s]: %zu, want %zu", pre[i].text, got, pre[i].safe);
    }
    /* it only grows as a reply comes token by token, and searching from the last answer (as a
     * stream does) gives what a whole search gives */
    const char *replies[2] = { "I will look. <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call> done", "a <|pyt <tool_ca [TOOL_CALLS] x" };
    const size_t stops[2] = { 13, 17 };
    for (int j = 0; j < 2; j++) {
        size_t last = 0;
        for (size_t k = 0; k <= strlen(replies[j]); k++) {
            const size_t got = srv_tool_prefix(replies[j], k, 0), from = srv_tool_prefix(replies[j], k, last);
            CHECK_MSG(got >= last && got <= k && got <= stops[j] && from == got, "reply %d, prefix of %zu bytes: %zu, from %zu: %zu", j, k, got, last, from);
            last = got;
        }
        CHECK(last == stops[j]);
    }
}

/* ---- the GPU builds: the CUDA build's weight decoders, which also compile for the host ---- */
#ifdef INFER_CUDA
int infer_cuda_dequant_host(infer_type t, const void *row, int K, float scale, float *dst);
int infer_cuda_qgemm_force(int rows, int cols);
int infer_cuda_mvq_rows_force(int rows);
int infer_cuda_mvq_u_force(int u);
int infer_cuda_mmv_force(int on, int nt);
int infer_cuda_qkv_store_force(int on);
int infer_cuda_qkv_store_last(void *ctx);
int infer_cuda_mmv_min_force(int rows);
int infer_cuda_mmv_xf_host(infer_type t);
long infer_cuda_mmv_count(void);
int infer_cuda_norm_mv_force(int on);
size_t infer_cuda_bf16_cache_force(size_t bytes);
size_t infer_cuda_bf16_cache_bytes(void *ctx);
int infer_cuda_norm_mv_last(void *ctx);
int infer_cuda_dn_chunks_force(int rows);
int infer_cuda_dn_chunks_last(void *ctx);
int infer_cuda_dn_cols_force(int cols);
int infer_cuda_quant_x_host(infer_type t, const float *x, int rows, int K, int8_t *codes, float *d, int32_t *sums);
int infer_cuda_fused_act_host(void *ctx, int which, int rows, int K, int8_t *codes, float *d, int32_t *sums);
int infer_cuda_att_force_splits(int splits);
int infer_cuda_pdl_force(int on);
int infer_cuda_l2pf_force(int on);
#endif

/* every type the GPU decodes gives the CPU's dequantized values bit for bit (run on the
 * host, so this needs a CUDA build but no device) */
static void test_cuda_decoders(void) {
#ifndef INFER_CUDA
    SKIP("not a CUDA build (make cuda; then ./tests-cuda cuda_)");
#else
    infer__rng rng;
    infer__rng_seed(&rng, 99);
    int checked = 0;
    for (int ti = 0; ti <= INFER_TYPE_COUNT; ti++) {
        const infer_type t = ti == INFER_TYPE_COUNT ? INFER_TYPE_I2_S : (infer_type)ti;
        const infer__type_traits *tt = infer__type(t);
        if (!infer_type_block(t) || (t != INFER_TYPE_I2_S && (!tt || !tt->quant))) continue;
        const int is_float = t == INFER_TYPE_F32 || t == INFER_TYPE_F16 || t == INFER_TYPE_BF16;
        for (int K = 512; K > 0; K = is_float && K == 512 ? 72 : 0) {
            const int N = 3;
            float *f = malloc(sizeof(float) * (size_t)K * N), *ref = malloc(sizeof(float) * (size_t)K), *got = malloc(sizeof(float) * (size_t)K);
            for (int i = 0; i < K * N; i++) f[i] = (float)(infer__rng_uniform(&rng) * 4 - 2);
            const size_t bytes = infer_type_row_size(t, K) * N + 32;
            uint8_t *q = calloc(1, bytes);
            infer_tensor w = { "w", t, 2, { K, N, 1, 1 }, q, bytes, 1.0f };
            if (t == INFER_TYPE_I2_S) { infer__quant_i2_s(f, q, (int64_t)K * N); w.scale = infer__i2_s_scale(q, (int64_t)K * N); }
            else tt->quant(f, q, (int64_t)K * N);
            if (t == INFER_TYPE_Q4_K) w.scale = 0.75f;                /* a BitNet-style tensor scale */
            for (int r = 0; r < N; r++) {
                infer__dequant_row(&w, r, ref);
                if (!infer_cuda_dequant_host(t, q + (size_t)r * infer_type_row_size(t, K), K, w.scale, got)) {
                    printf("    %s: no CUDA decoder (models of this type are refused on the GPU)\n", infer_type_name(t));
                    break;
                }
                int bad = 0;
                for (int i = 0; i < K; i++) bad += memcmp(&ref[i], &got[i], 4) != 0;
                CHECK_MSG(bad == 0, "%s K=%d row %d: %d of %d values differ (first: %g vs %g)", infer_type_name(t), K, r, bad, K, ref[0], got[0]);
                checked++;
            }
            free(f); free(ref); free(got); free(q);
        }
    }
    CHECK(checked >= 3 * 21);
#endif
}

/* the GPU (tests-cuda on a machine with a device; SKIP elsewhere) */
static const infer_kernels *gpu_or_skip(void) {
    const infer_kernels *k;
    infer_error err;
    if (infer_gpu_kernels(&k, &err) != INFER_OK) { printf("  SKIP: %s\n", err.msg); t_skipped = 1; return NULL; }
    return k;
}

/* every op, every weight type the GPU has, against the CPU */
static void test_gpu_diff_ops(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    infer_error err;
    int lines = 0;
    const int rc = infer_backend_diff(k, NULL, 8, INFER_DIFF_OPS, diff_print_all, &lines, &err);
    CHECK_MSG(rc == 0, "%d results beyond tolerance%s%s", rc, rc < 0 ? ": " : "", rc < 0 ? err.msg : "");
}

/* whole models, layer by layer */
static void test_gpu_diff_models(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    int found = 0;
    for (int i = 0; i < N_BACKEND_MODELS; i++) {
        infer_model *m = backend_model(i, &found);
        if (!m) continue;
        infer_error err;
        printf("    %s\n", backend_models[i].path);
        int lines = 0;
        const int rc = infer_backend_diff(k, m, backend_models[i].n_tokens, INFER_DIFF_MODEL, diff_print_all, &lines, &err);
        CHECK_MSG(rc == 0, "%s: %d results beyond tolerance%s%s", backend_models[i].path, rc, rc < 0 ? ": " : "", rc < 0 ? err.msg : "");
        infer_model_free(m);
    }
    if (!found) SKIP("../shared models not found");
}

/* ---- the fast mode's decode matvec: int8 activations (infer_cuda.cu, k_quant_x and k_mvq) ---- */

/* The GPU quantizes a matvec's activations as the CPU's fast path does, byte for byte: Q8_0
 * blocks (for the 32-block weight types) and Q8_K blocks (the k-quants), each 32-block's
 * scale and code sum. Row 0 has halves where the two rules round differently (2.5: Q8_0's
 * roundf at scale 1 makes 3, Q8_K's rint at scale -1 makes -2), row 1 a zero super-block,
 * one with a NaN and one with an Inf, row 2 its largest magnitude twice with opposite signs
 * (the first sets Q8_K's sign). */
static void test_gpu_act_quant(void) {
#ifndef INFER_CUDA
    SKIP("not a CUDA build (make cuda or make cuda-emu)");
#else
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    enum { ROWS = 3, K = 1024, NB = ROWS * K / 32 };
    infer__rng rng;
    infer__rng_seed(&rng, 17);
    float *x = malloc(sizeof(float) * ROWS * K), d[NB];
    int8_t *codes = malloc(ROWS * K);
    int32_t sums[NB];
    for (int i = 0; i < ROWS * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 6 - 3);
    const float ties[4] = { 127.0f, 2.5f, -3.5f, 0.5f };
    memcpy(x + 32, ties, sizeof ties);
    for (int i = 0; i < 256; i++) x[K + i] = 0.0f;
    x[K + 300] = NAN;
    x[K + 600] = INFINITY;
    x[2 * K + 10] = -4.0f;
    x[2 * K + 200] = 4.0f;
    const infer_type types[2] = { INFER_TYPE_Q4_0, INFER_TYPE_Q4_K };
    for (int ti = 0; ti < 2; ti++) {
        if (!infer_cuda_quant_x_host(types[ti], x, ROWS, K, codes, d, sums)) { CHECK_MSG(0, "%s: no quantized activations", infer_type_name(types[ti])); continue; }
        int bad_codes = 0, bad_d = 0, bad_sums = 0;
        for (int r = 0; r < ROWS; r++) {
            if (ti == 0) {
                infer_block_q8_0 q[K / 32];
                infer__quant_q8_0(x + (size_t)r * K, q, K);
                for (int b = 0; b < K / 32; b++) {
                    const int at = r * (K / 32) + b;
                    const float dr = infer__fp16_to_fp32(q[b].d);
                    int sum = 0;
                    for (int i = 0; i < 32; i++) { sum += q[b].qs[i]; bad_codes += q[b].qs[i] != codes[(size_t)r * K + 32 * b + i]; }
                    bad_d += isnan(dr) ? !isnan(d[at]) : memcmp(&dr, &d[at], 4) != 0;
                    bad_sums += sum != sums[at];
                }
            } else {
                infer_block_q8_k q[K / 256];
                infer__quant_q8_k(x + (size_t)r * K, q, K);
                for (int b = 0; b < K / 32; b++) {
                    const int at = r * (K / 32) + b;
                    const infer_block_q8_k *qb = &q[b / 8];
                    for (int i = 0; i < 32; i++) bad_codes += qb->qs[32 * (b % 8) + i] != codes[(size_t)r * K + 32 * b + i];
                    bad_d += isnan(qb->d) ? !isnan(d[at]) : memcmp(&qb->d, &d[at], 4) != 0;
                    bad_sums += qb->bsums[2 * (b % 8)] + qb->bsums[2 * (b % 8) + 1] != sums[at];
                }
            }
        }
        CHECK_MSG(bad_codes == 0 && bad_d == 0 && bad_sums == 0, "%s activations: %d codes, %d scales, %d sums differ from the CPU's",
                  ti ? "Q8_K" : "Q8_0", bad_codes, bad_d, bad_sums);
        /* the special values did what the comparison was meant to cover */
        if (ti == 0) CHECK(codes[33] == 3 && codes[34] == -4 && codes[35] == 1);   /* roundf: ties away from zero */
        else CHECK(codes[33] == -2 && codes[34] == 4 && codes[35] == 0);           /* scale -1, rint: ties to even */
        CHECK(d[K / 32] == 0.0f && isnan(d[K / 32 + 300 / 32]) && isinf(d[K / 32 + 600 / 32]));
        CHECK(ti == 0 || d[2 * (K / 32)] > 0);           /* Q8_K: the first of -4 and 4 sets d = -(-4) / 127 */
    }
    free(x); free(codes);
#endif
}

/* The fused ops write the same int8 activations k_quant_x writes: rmsnorm_ffn in the fast
 * mode, 3 rows, 512 wide, a hidden size of 256, with Q4_0 weights (Q8_0 activations) and Q4_K
 * (Q8_K); the norm's bytes (k_rmsnorm_q) against k_quant_x of the h it wrote, the GLU's
 * (k_mvq's last block of each group) against k_quant_x of the hidden vector it wrote:
 * codes, scales and sums, byte for byte. Twice, on other values, so the second launch
 * finds the GLU's counters back at 0 (else it would leave the first one's bytes). */
static void test_gpu_fused_act(void) {
#ifndef INFER_CUDA
    SKIP("not a CUDA build (make cuda or make cuda-emu)");
#else
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    enum { ROWS = 3, E = 512, F = 256 };
    const infer_type types[2] = { INFER_TYPE_Q4_0, INFER_TYPE_Q4_K };
    infer__rng rng;
    infer__rng_seed(&rng, 99);
    for (int ti = 0; ti < 2; ti++) {
        const infer_type t = types[ti];
        void *ctx = NULL;
        infer_error err;
        CHECK_MSG(k->ctx_create(&ctx, 1, 0, &err) == INFER_OK, "%s", err.msg);
        if (!ctx) return;
        /* weights: gate, up [E -> F], down [F -> E], random values quantized to t */
        infer_tensor w[3];
        void *wdev[3];
        for (int i = 0; i < 3; i++) {
            const int64_t K = i < 2 ? E : F, N = i < 2 ? F : E;
            const size_t bytes = infer_type_row_size(t, K) * (size_t)N;
            float *f = malloc(sizeof(float) * (size_t)(K * N));
            void *q = malloc(bytes);
            for (int64_t j = 0; j < K * N; j++) f[j] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            infer__type(t)->quant(f, q, K * N);
            wdev[i] = k->alloc(ctx, bytes);
            CHECK(wdev[i] && k->upload(ctx, wdev[i], q, bytes) == INFER_OK);
            const infer_tensor t0 = { "w", t, 2, { K, N, 1, 1 }, wdev[i], bytes, 1.0f };
            w[i] = t0;
            free(f); free(q);
        }
        float *x = malloc(sizeof(float) * ROWS * E), *nw = malloc(sizeof(float) * E), *h = malloc(sizeof(float) * ROWS * E);
        float *hid = malloc(sizeof(float) * ROWS * F), d1[ROWS * E / 32], d2[ROWS * E / 32];
        int8_t *c1 = malloc(ROWS * E), *c2 = malloc(ROWS * E);
        int32_t s1[ROWS * E / 32], s2[ROWS * E / 32];
        for (int i = 0; i < E; i++) nw[i] = (float)(infer__rng_uniform(&rng) + 0.5);
        float *xd = k->alloc(ctx, sizeof(float) * ROWS * E), *hd = k->alloc(ctx, sizeof(float) * ROWS * E), *nd = k->alloc(ctx, sizeof(float) * E);
        float *fd = k->alloc(ctx, sizeof(float) * ROWS * F);
        CHECK(xd && hd && nd && fd && k->upload(ctx, nd, nw, sizeof(float) * E) == INFER_OK);
        for (int pass = 0; pass < 2 && xd && hd && nd && fd; pass++) {
            for (int i = 0; i < ROWS * E; i++) x[i] = (float)(infer__rng_uniform(&rng) * 6 - 3);
            CHECK(k->upload(ctx, xd, x, sizeof(float) * ROWS * E) == INFER_OK);
            k->rmsnorm_ffn(ctx, xd, hd, fd, nd, 1e-5f, &w[0], &w[1], &w[2], ROWS, INFER_ACT_SILU, 0.0f);
            CHECK_MSG(k->download(ctx, h, hd, sizeof(float) * ROWS * E) == INFER_OK && k->download(ctx, hid, fd, sizeof(float) * ROWS * F) == INFER_OK,
                      "%s", k->last_error(ctx));
            for (int which = 0; which < 2; which++) {
                const int K = which ? F : E, nb = ROWS * K / 32;
                const int ok = infer_cuda_fused_act_host(ctx, which, ROWS, K, c1, d1, s1) && infer_cuda_quant_x_host(t, which ? hid : h, ROWS, K, c2, d2, s2);
                CHECK_MSG(ok, "%s: no int8 activations from the fused %s", infer_type_name(t), which ? "GLU" : "norm");
                if (!ok) continue;
                CHECK_MSG(memcmp(c1, c2, (size_t)ROWS * K) == 0 && memcmp(d1, d2, sizeof(float) * nb) == 0 && memcmp(s1, s2, sizeof(int32_t) * nb) == 0,
                          "%s, pass %d: the fused %s's int8 activations are not k_quant_x's", infer_type_name(t), pass, which ? "GLU" : "norm");
            }
        }
        k->free(ctx, xd); k->free(ctx, hd); k->free(ctx, nd); k->free(ctx, fd);
        for (int i = 0; i < 3; i++) k->free(ctx, wdev[i]);
        k->ctx_free(ctx);
        free(x); free(nw); free(h); free(hid); free(c1); free(c2);
    }
#endif
}

/* The decode attention writes the output projection's int8 activations (attention_matmul_add
 * in the fast mode): its bytes equal k_quant_x's of the att it wrote, for a Wo of Q4_0 (Q8_0
 * blocks of 32) and Q4_K (Q8_K blocks of 256), 1 and 3 rows, the positions in one block or split
 * over 3 (merged by the last), on head groups that hold whole quantization blocks and on ones
 * that share them with their neighbours: heads of 64 four to a block (F16 cache, 256 columns
 * a block), of 64 two to a block (128: a Q8_K block over two), of 128 two to a block, and of
 * 80 one to a block (an F32 cache: Q8_0 blocks across the heads' edges too). Each call is a
 * step (begin, end: graphs where the backend makes them), the calls one after another in one
 * context, so a counter left set shows in the next; y equals attention then matmul_add of the
 * same backend, to the byte, and the step is 2 launches (the ops one by one take 3: att
 * quantized by k_quant_x -- whose bytes the comparison would also find). */
static void test_gpu_fused_attention(void) {
#ifndef INFER_CUDA
    SKIP("not a CUDA build (make cuda or make cuda-emu)");
#else
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    enum { BS = 16, NB = 6, CTX = 70, N = 64, MAXR = 3 };
    static const int shapes[][4] = { { 64, 8, 2, 1 }, { 64, 12, 6, 1 }, { 128, 8, 4, 1 }, { 80, 16, 16, 0 } };   /* head size, heads, KV heads, F16 */
    const infer_type types[2] = { INFER_TYPE_Q4_0, INFER_TYPE_Q4_K };
    infer__rng rng;
    infer__rng_seed(&rng, 515);
    int32_t table[NB], all[CTX];
    for (int b = 0; b < NB; b++) table[b] = (b * 5 + 2) % NB;
    for (int p = 0; p < CTX; p++) all[p] = p;
    const int32_t qpos[MAXR] = { CTX - 1, 20, CTX - 5 };
    const int old_splits = infer_cuda_att_force_splits(-1);
    int checked = 0;
    for (int sh = 0; sh < 4; sh++) {
        const int HD = shapes[sh][0], NH = shapes[sh][1], NKV = shapes[sh][2], f16 = shapes[sh][3], KVD = NKV * HD, QD = NH * HD;
        for (int ti = 0; ti < 2; ti++) {
            const infer_type t = types[ti];
            void *ctx = NULL;
            infer_error err;
            CHECK_MSG(k->ctx_create(&ctx, 1, 0, &err) == INFER_OK, "%s", err.msg);
            if (!ctx) break;
            const size_t wbytes = infer_type_row_size(t, QD) * N, pool = (size_t)NB * BS * KVD * (f16 ? 2 : 4);
            float *wf = malloc(sizeof(float) * QD * N), *kvh = malloc(sizeof(float) * 2 * CTX * KVD), *qh = malloc(sizeof(float) * MAXR * QD);
            float *y0 = malloc(sizeof(float) * MAXR * N), *att = malloc(sizeof(float) * MAXR * QD), *y1 = malloc(sizeof(float) * MAXR * N);
            float *y2 = malloc(sizeof(float) * MAXR * N), d1[MAXR * 1280 / 32], d2[MAXR * 1280 / 32];
            int8_t *c1 = malloc(MAXR * QD), *c2 = malloc(MAXR * QD);
            int32_t s1[MAXR * 1280 / 32], s2[MAXR * 1280 / 32];
            void *wq = malloc(wbytes);
            for (int i = 0; i < QD * N; i++) wf[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            for (int i = 0; i < 2 * CTX * KVD; i++) kvh[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            for (int i = 0; i < MAXR * N; i++) y0[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            infer__type(t)->quant(wf, wq, (int64_t)QD * N);
            void *dw = k->alloc(ctx, wbytes), *dk = k->alloc(ctx, pool), *dv = k->alloc(ctx, pool);
            float *dkv = k->alloc(ctx, sizeof(float) * 2 * CTX * KVD), *dq = k->alloc(ctx, sizeof(float) * MAXR * QD);
            float *da = k->alloc(ctx, sizeof(float) * MAXR * QD), *db = k->alloc(ctx, sizeof(float) * MAXR * QD);
            float *dy = k->alloc(ctx, sizeof(float) * MAXR * N), *dy2 = k->alloc(ctx, sizeof(float) * MAXR * N);
            int32_t *dt = k->alloc(ctx, sizeof table), *dall = k->alloc(ctx, sizeof all), *dp = k->alloc(ctx, sizeof qpos);
            const int ok = dw && dk && dv && dkv && dq && da && db && dy && dy2 && dt && dall && dp && k->upload(ctx, dw, wq, wbytes) == INFER_OK &&
                           k->upload(ctx, dkv, kvh, sizeof(float) * 2 * CTX * KVD) == INFER_OK && k->upload(ctx, dt, table, sizeof table) == INFER_OK &&
                           k->upload(ctx, dall, all, sizeof all) == INFER_OK && k->upload(ctx, dp, qpos, sizeof qpos) == INFER_OK;
            CHECK_MSG(ok, "out of memory or a failed copy: %s", k->last_error(ctx));
            const infer_tensor wo = { "wo", t, 2, { QD, N, 1, 1 }, dw, wbytes, 1.0f };
            const infer_kv_view kv = { dk, dv, f16 ? INFER_TYPE_F16 : INFER_TYPE_F32, BS, dt, KVD, NULL };
            if (ok) k->kv_store(ctx, &kv, dkv, dkv + (size_t)CTX * KVD, dall, CTX);
            for (int run = 0; ok && run < 4; run++) {
                const int rows = run & 1 ? MAXR : 1, splits = run & 2 ? 3 : 1;
                char what[96];
                snprintf(what, sizeof what, "%s, head %d, %d heads / %d, %d row(s), %d split(s)", infer_type_name(t), HD, NH, NKV, rows, splits);
                for (int i = 0; i < rows * QD; i++) qh[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                CHECK(k->upload(ctx, dq, qh, sizeof(float) * rows * QD) == INFER_OK && k->upload(ctx, dy, y0, sizeof(float) * rows * N) == INFER_OK &&
                      k->upload(ctx, dy2, y0, sizeof(float) * rows * N) == INFER_OK);
                infer_cuda_att_force_splits(splits);
                if (k->step_begin) k->step_begin(ctx);
                k->attention_matmul_add(ctx, dy, &wo, da, dq, &kv, dp, rows, NH, NKV, HD, 1.0f / sqrtf((float)HD));
                if (k->step_end) CHECK_MSG(k->step_end(ctx) == INFER_OK, "%s: %s", what, k->last_error(ctx));
                int launches = 2, graph = 0;
                if (k->step_info) k->step_info(ctx, &launches, &graph);
                CHECK_MSG(launches == 2, "%s: %d launches (the attention and Wo's matvec: 2)", what, launches);
                /* the int8 activations, before the ops one by one overwrite them */
                const int got = infer_cuda_fused_act_host(ctx, 0, rows, QD, c1, d1, s1);
                k->attention(ctx, db, dq, &kv, dp, rows, NH, NKV, HD, 1.0f / sqrtf((float)HD));
                k->matmul_add(ctx, dy2, &wo, db, rows);
                infer_cuda_att_force_splits(-1);
                const int nb = rows * QD / 32;
                const int ok2 = got && k->download(ctx, att, da, sizeof(float) * rows * QD) == INFER_OK &&
                                k->download(ctx, y1, dy, sizeof(float) * rows * N) == INFER_OK && k->download(ctx, y2, dy2, sizeof(float) * rows * N) == INFER_OK &&
                                infer_cuda_quant_x_host(t, att, rows, QD, c2, d2, s2);
                CHECK_MSG(ok2, "%s: no result (%s)", what, k->last_error(ctx));
                if (!ok2) continue;
                int bad_c = 0, bad_d = 0, bad_s = 0;
                for (int i = 0; i < rows * QD; i++) bad_c += c1[i] != c2[i];
                for (int i = 0; i < nb; i++) { bad_d += memcmp(&d1[i], &d2[i], 4) != 0; bad_s += s1[i] != s2[i]; }
                CHECK_MSG(bad_c == 0 && bad_d == 0 && bad_s == 0, "%s: the attention's int8 activations differ from k_quant_x's in %d codes, %d scales, %d sums",
                          what, bad_c, bad_d, bad_s);
                CHECK_MSG(memcmp(y1, y2, sizeof(float) * rows * N) == 0, "%s: y += Wo att differs from attention, then matmul_add", what);
                checked++;
            }
            void *bufs[] = { dw, dk, dv, dkv, dq, da, db, dy, dy2, dt, dall, dp };
            for (int i = 0; i < 12; i++) if (bufs[i]) k->free(ctx, bufs[i]);
            k->ctx_free(ctx);
            free(wf); free(kvh); free(qh); free(y0); free(att); free(y1); free(y2); free(c1); free(c2); free(wq);
        }
    }
    infer_cuda_att_force_splits(old_splits);
    CHECK(checked == 4 * 2 * 4);
#endif
}

/* the worst max_rel of each comparison of test_gpu_matvec_fast, and its FAIL lines */
typedef struct { int lines; double worst_cpu, worst_exact; } mvq_log;
static void mvq_print(void *user, const char *line) {
    mvq_log *l = (mvq_log *)user;
    l->lines++;
    if (strncmp(line, "FAIL", 4) == 0) printf("    %s\n", line);
    const char *m = strstr(line, "max_rel");
    const double v = m ? atof(m + 7) : 0;
    double *w = strstr(line, "=cpu-fast") ? &l->worst_cpu : &l->worst_exact;
    if (v > *w) *w = v;
}
#define MVQ_TOL_CPU 2e-5        /* the CPU fast path's own codes: only the order of f32 sums differs */

/* The fast mode's decode matvec (rows <= 8) against the CPU's fast path, which has the same
 * int8 codes, at a tolerance for f32 summation order, and against the exact reference within
 * the fast modes' bound (INFER__TOL_FAST; the float types, which keep f32 activations,
 * within INFER__TOL_SUM): every type with a k_mvq slice, 1..8 rows, 37 columns (the last
 * block of two columns has one), K the smallest multiple of the block, a middle one and one
 * long enough that every thread takes several slices (and a float K not a multiple of 8,
 * which k_matvec serves); then the fused ops on the same path: matmul_n of three weights,
 * matmul_glu (k_mvq's GLU mode) and matmul_add with 1, 3 and 8 rows, and matmul_id's decode. */
static void test_gpu_matvec_fast(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    static const infer_type types[] = { INFER_TYPE_Q4_0, INFER_TYPE_Q8_0, INFER_TYPE_Q6_K, INFER_TYPE_F16, INFER_TYPE_Q4_K, INFER_TYPE_Q5_K,
                                        INFER_TYPE_Q5_0, INFER_TYPE_Q4_1, INFER_TYPE_Q5_1, INFER_TYPE_BF16, INFER_TYPE_F32, INFER_TYPE_IQ4_NL,
                                        INFER_TYPE_MXFP4, INFER_TYPE_IQ4_XS, INFER_TYPE_Q2_K, INFER_TYPE_Q3_K, INFER_TYPE_TQ2_0, INFER_TYPE_NVFP4 };
    enum { N_TYPES = sizeof types / sizeof types[0] };
    infer__diff d;
    memset(&d, 0, sizeof d);
    mvq_log log = { 0, 0, 0 };
    d.ka = infer_cpu_kernels();
    d.kb = k;
    d.print = mvq_print;
    d.user = &log;
    infer__rng_seed(&d.rng, 4321);
    infer_error err;
    void *cpu_exact = NULL;
    if (d.ka->ctx_create(&d.ca, 2, 0, &err) != INFER_OK || d.ka->ctx_create(&cpu_exact, 2, 1, &err) != INFER_OK ||
        k->ctx_create(&d.cb, 2, 0, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    char what[96];
    int cases = 0;
    for (int ti = 0; ti < N_TYPES && !d.broken; ti++) {
        const infer_type t = types[ti];
        const char *tn = infer_type_name(t);
        const int blk = infer_type_block(t), is_float = blk == 1;
        const double exact_tol = is_float ? INFER__TOL_SUM : INFER__TOL_FAST;
        const int64_t Ks[4] = { is_float ? 8 : blk, is_float ? 1000 : 5 * blk + (blk == 32 ? 40 * 32 : 0), 5120, 100 };
        for (int ki = 0; ki < (is_float ? 4 : 3) && !d.broken; ki++) {
            const int64_t K = Ks[ki], N = 37;
            infer__diff_w w = infer__diff_weights(&d, t, K, N, 1, t == INFER_TYPE_Q8_0 ? 0.5f : 1.0f);
            for (int rows = 1; rows <= 8 && !d.broken; rows++) {
                infer__pair x = infer__diff_rand_pair(&d, (size_t)rows * K, -1, 1), o = infer__pair_new(&d, NULL, (size_t)rows * N * sizeof(float));
                if (!d.broken) {
                    snprintf(what, sizeof what, "%s K=%lld rows=%d", tn, (long long)K, rows);
                    d.ka->matmul(d.ca, (float *)o.a, &w.ta, (const float *)x.a, rows);
                    k->matmul(d.cb, (float *)o.b, &w.tb, (const float *)x.b, rows);
                    infer__diff_cmp(&d, "mvq =cpu-fast", what, &o, MVQ_TOL_CPU);
                    d.ka->matmul(cpu_exact, (float *)o.a, &w.ta, (const float *)x.a, rows);
                    infer__diff_cmp(&d, "mvq ~exact", what, &o, exact_tol);
                    cases++;
                }
                infer__pair_free(&d, &x); infer__pair_free(&d, &o);
            }
            infer__pair_free(&d, &w.p);
        }
        /* the fused ops: matmul_n of three weights (37, 8 and 21 columns); glu of the first
         * (gate) and a fourth of its shape (up); add */
        const int64_t K = Ks[1];
        infer__diff_w w3[4] = { infer__diff_weights(&d, t, K, 37, 1, 1.0f), infer__diff_weights(&d, t, K, 8, 1, 0.5f), infer__diff_weights(&d, t, K, 21, 1, 1.0f),
                                infer__diff_weights(&d, t, K, 37, 1, 0.5f) };
        const int rows_list[3] = { 1, 3, 8 };
        for (int ri = 0; ri < 3 && !d.broken; ri++) {
            const int rows = rows_list[ri];
            infer__pair x = infer__diff_rand_pair(&d, (size_t)rows * K, -1, 1), y = infer__diff_rand_pair(&d, (size_t)rows * 37, -1, 1), o[3];
            for (int i = 0; i < 3; i++) o[i] = infer__pair_new(&d, NULL, (size_t)rows * (size_t)w3[i].ta.ne[1] * sizeof(float));
            infer__pair u = infer__pair_new(&d, NULL, (size_t)rows * 37 * sizeof(float));
            if (!d.broken) {
                float *oa[3] = { (float *)o[0].a, (float *)o[1].a, (float *)o[2].a }, *ob[3] = { (float *)o[0].b, (float *)o[1].b, (float *)o[2].b };
                const infer_tensor *wa[3] = { &w3[0].ta, &w3[1].ta, &w3[2].ta }, *wb[3] = { &w3[0].tb, &w3[1].tb, &w3[2].tb };
                d.ka->matmul_n(d.ca, 3, oa, wa, (const float *)x.a, rows);
                k->matmul_n(d.cb, 3, ob, wb, (const float *)x.b, rows);
                for (int i = 0; i < 3; i++) {
                    snprintf(what, sizeof what, "%s K=%lld rows=%d matmul_n %d", tn, (long long)K, rows, i);
                    infer__diff_cmp(&d, "mvq =cpu-fast", what, &o[i], MVQ_TOL_CPU);
                }
                for (int act = 0; act < 2; act++) {            /* SiLU, then ReLU^2 clamped at 2 */
                    const int a = act ? INFER_ACT_RELU2 : INFER_ACT_SILU;
                    const float limit = act ? 2.0f : 0.0f;
                    d.ka->matmul(d.ca, (float *)o[0].a, &w3[0].ta, (const float *)x.a, rows);
                    d.ka->matmul(d.ca, (float *)u.a, &w3[3].ta, (const float *)x.a, rows);
                    d.ka->glu(d.ca, (float *)o[0].a, (const float *)o[0].a, (const float *)u.a, (int64_t)rows * 37, a, limit);
                    k->matmul_glu(d.cb, (float *)o[0].b, &w3[0].tb, &w3[3].tb, (const float *)x.b, rows, a, limit);
                    snprintf(what, sizeof what, "%s K=%lld rows=%d matmul_glu %s", tn, (long long)K, rows, act ? "relu2" : "silu");
                    infer__diff_cmp(&d, "mvq =cpu-fast", what, &o[0], MVQ_TOL_CPU);
                }
                d.ka->matmul(d.ca, (float *)u.a, &w3[0].ta, (const float *)x.a, rows);
                d.ka->add(d.ca, (float *)y.a, (const float *)u.a, (int64_t)rows * 37);
                k->matmul_add(d.cb, (float *)y.b, &w3[0].tb, (const float *)x.b, rows);
                snprintf(what, sizeof what, "%s K=%lld rows=%d matmul_add", tn, (long long)K, rows);
                infer__diff_cmp(&d, "mvq =cpu-fast", what, &y, MVQ_TOL_CPU);
                cases += 6;
            }
            infer__pair_free(&d, &x); infer__pair_free(&d, &y); infer__pair_free(&d, &u);
            for (int i = 0; i < 3; i++) infer__pair_free(&d, &o[i]);
        }
        for (int i = 0; i < 4; i++) infer__pair_free(&d, &w3[i].p);
        /* matmul_id: 4 experts of [K, 37]; 1 and 3 tokens choosing 2, x shared or per slot */
        infer__diff_w we = infer__diff_weights(&d, t, K, 37, 4, 1.0f);
        for (int c = 0; c < 4 && !d.broken; c++) {
            const int rows = c < 2 ? 1 : 3, n_used = 2, per_slot = c % 2;
            int32_t ids_h[6] = { 3, 1, 0, 2, 1, 1 };
            infer__pair ids = infer__pair_new(&d, ids_h, (size_t)rows * n_used * sizeof(int32_t));
            infer__pair x = infer__diff_rand_pair(&d, (size_t)rows * (per_slot ? n_used : 1) * K, -1, 1);
            infer__pair o = infer__pair_new(&d, NULL, (size_t)rows * n_used * 37 * sizeof(float));
            if (!d.broken) {
                d.ka->matmul_id(d.ca, (float *)o.a, &we.ta, (const float *)x.a, (const int32_t *)ids.a, rows, n_used, per_slot);
                k->matmul_id(d.cb, (float *)o.b, &we.tb, (const float *)x.b, (const int32_t *)ids.b, rows, n_used, per_slot);
                snprintf(what, sizeof what, "%s K=%lld rows=%d x_per_slot=%d matmul_id", tn, (long long)K, rows, per_slot);
                infer__diff_cmp(&d, "mvq =cpu-fast", what, &o, MVQ_TOL_CPU);
                cases++;
            }
            infer__pair_free(&d, &ids); infer__pair_free(&d, &x); infer__pair_free(&d, &o);
        }
        infer__pair_free(&d, &we.p);
    }
    printf("    %d products, %d beyond tolerance; worst max_rel against the CPU's fast path %.2e (tol %.0e), against the exact path %.2e\n",
           cases, d.n_bad, log.worst_cpu, MVQ_TOL_CPU, log.worst_exact);
    CHECK_MSG(!d.broken, "the diff stopped: %s", k->last_error(d.cb));
    CHECK(d.n_bad == 0 && cases >= N_TYPES * 3 * 8);
done:
    if (d.cb) k->ctx_free(d.cb);
    if (cpu_exact) d.ka->ctx_free(cpu_exact);
    if (d.ca) d.ka->ctx_free(d.ca);
}

/* deepseek4's indexer on the GPU chooses the CPU's entries, index for index, where that is
 * hardest: 5000 visible entries (more than the CUDA kernel's 4096-entry buffer, so it cuts
 * its list to the top_k once while scoring and again at the end), top_k 2048, and scores
 * made to tie: with head weights of opposite signs, every entry whose two dots are both
 * <= 0 scores exactly 0, about a quarter of them, and the cut falls among those zeros,
 * where only the tie rule (the lower index wins) decides. A head size of 40 (not whole
 * 16-lane groups), a shuffled block table, F32 and F16 keys. */
static float idx_score(const float *q, const float *w, const float *key, int nh, int hd) {
    float acc = 0;
    for (int h = 0; h < nh; h++) acc += w[h] * fmaxf(infer__dot_f32_16(q + (size_t)h * hd, key, hd), 0.0f);
    return acc;
}
static void test_gpu_indexer_ties(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *kc = infer_cpu_kernels();
    enum { N_ENT = 5000, NH = 2, HD = 40, TOP_K = 2048, BS = 64, ROWS = 3, N_BLOCKS = N_ENT / BS + 1 };
    const int32_t pos[ROWS] = { 4 * N_ENT - 1, 4 * 4000 + 2, 4 * 100 };   /* 5000, 4000 and 100 entries visible */
    infer__rng rng;
    infer__rng_seed(&rng, 77);
    int32_t table[N_BLOCKS], *all = malloc(sizeof(int32_t) * N_ENT), *sel[2], nsel[2][ROWS];
    float *keys = malloc(sizeof(float) * N_ENT * HD), *keys16 = malloc(sizeof(float) * N_ENT * HD), q[ROWS * NH * HD], w[ROWS * NH];
    for (int b = 0; b < N_BLOCKS; b++) table[b] = (b * 37) % N_BLOCKS;
    for (int i = 0; i < N_ENT; i++) all[i] = i;
    for (int i = 0; i < N_ENT * HD; i++) { keys[i] = (float)(infer__rng_uniform(&rng) * 2 - 1); keys16[i] = infer__fp16_to_fp32(infer__fp32_to_fp16(keys[i])); }
    for (int i = 0; i < ROWS * NH * HD; i++) q[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
    for (int r = 0; r < ROWS; r++) { w[r * NH] = 0.75f; w[r * NH + 1] = -1.25f; }
    sel[0] = malloc(sizeof(int32_t) * ROWS * TOP_K);
    sel[1] = malloc(sizeof(int32_t) * ROWS * TOP_K);
    infer_error err;
    void *ctx[2] = { NULL, NULL };
    CHECK_MSG(kc->ctx_create(&ctx[0], 2, 1, &err) == INFER_OK && k->ctx_create(&ctx[1], 1, 1, &err) == INFER_OK, "%s", err.msg);
    for (int f16 = 0; f16 < 2 && ctx[0] && ctx[1]; f16++) {
        const size_t esz = f16 ? 2 : 4;
        for (int b = 0; b < 2; b++) {             /* the same op on the CPU (0) and the GPU (1) */
            const infer_kernels *kb = b ? k : kc;
            void *c = ctx[b];
            void *d_pool = kb->alloc(c, (size_t)N_BLOCKS * BS * HD * esz), *d_table = kb->alloc(c, sizeof table), *d_all = kb->alloc(c, sizeof(int32_t) * N_ENT);
            void *d_keys = kb->alloc(c, sizeof(float) * N_ENT * HD), *d_q = kb->alloc(c, sizeof q), *d_w = kb->alloc(c, sizeof w), *d_pos = kb->alloc(c, sizeof pos);
            void *d_sel = kb->alloc(c, sizeof(int32_t) * ROWS * TOP_K), *d_n = kb->alloc(c, sizeof(int32_t) * ROWS);
            CHECK(d_pool && d_table && d_all && d_keys && d_q && d_w && d_pos && d_sel && d_n);
            if (d_pool && d_table && d_all && d_keys && d_q && d_w && d_pos && d_sel && d_n) {
                kb->upload(c, d_table, table, sizeof table);
                kb->upload(c, d_all, all, sizeof(int32_t) * N_ENT);
                kb->upload(c, d_keys, keys, sizeof(float) * N_ENT * HD);
                kb->upload(c, d_q, q, sizeof q);
                kb->upload(c, d_w, w, sizeof w);
                kb->upload(c, d_pos, pos, sizeof pos);
                const infer_kv_view kv = { d_pool, d_pool, f16 ? INFER_TYPE_F16 : INFER_TYPE_F32, BS, (const int32_t *)d_table, HD, NULL };
                kb->kv_store(c, &kv, (const float *)d_keys, NULL, (const int32_t *)d_all, N_ENT);
                kb->indexer_topk(c, (int32_t *)d_sel, (int32_t *)d_n, (const float *)d_q, (const float *)d_w, &kv, (const int32_t *)d_pos, ROWS, NH, HD, 4, TOP_K,
                                 1.0f / sqrtf((float)(NH * HD)));
                CHECK_MSG(kb->download(c, sel[b], d_sel, sizeof(int32_t) * ROWS * TOP_K) == INFER_OK &&
                          kb->download(c, nsel[b], d_n, sizeof(int32_t) * ROWS) == INFER_OK, "%s backend: %s", kb->name, kb->last_error(c));
            }
            void *bufs[] = { d_pool, d_table, d_all, d_keys, d_q, d_w, d_pos, d_sel, d_n };
            for (int i = 0; i < 9; i++) if (bufs[i]) kb->free(c, bufs[i]);
        }
        const float *kf = f16 ? keys16 : keys;
        for (int r = 0; r < ROWS; r++) {
            const int vis = (pos[r] + 1) / 4;
            CHECK_MSG(nsel[0][r] == (vis < TOP_K ? vis : TOP_K) && nsel[1][r] == nsel[0][r], "f16=%d row %d: %d and %d chosen of %d", f16, r, nsel[0][r], nsel[1][r], vis);
            int differ = 0;
            for (int i = 0; i < nsel[0][r] && nsel[1][r] == nsel[0][r]; i++) differ += sel[0][r * TOP_K + i] != sel[1][r * TOP_K + i];
            CHECK_MSG(differ == 0, "f16=%d row %d: %d of %d chosen entries differ", f16, r, differ, nsel[0][r]);
            if (vis <= TOP_K) continue;
            /* the data does what it is for: the cut falls among exact zeros (the lowest kept
             * score and the highest dropped one are both 0) */
            char *kept = calloc((size_t)vis, 1);
            for (int i = 0; i < TOP_K; i++) kept[sel[0][r * TOP_K + i]] = 1;
            float lo = INFINITY, hi = -INFINITY;
            for (int s = 0; s < vis; s++) {
                const float sc = idx_score(q + (size_t)r * NH * HD, w + (size_t)r * NH, kf + (size_t)s * HD, NH, HD);
                if (kept[s]) lo = fminf(lo, sc); else hi = fmaxf(hi, sc);
            }
            CHECK_MSG(lo == 0.0f && hi == 0.0f, "f16=%d row %d: lowest kept score %g, highest dropped %g (no tie at the cut)", f16, r, lo, hi);
            free(kept);
        }
    }
    if (ctx[0]) kc->ctx_free(ctx[0]);
    if (ctx[1]) k->ctx_free(ctx[1]);
    free(all); free(keys); free(keys16); free(sel[0]); free(sel[1]);
}

/* attention_sparse on the GPU against the CPU where its kernel's cases meet: windows that end
 * inside a warp's group of 4 positions (window rows and entries in one step), an F16 token
 * cache whose values are apart from its keys next to F32 entries that are their own values,
 * head sizes that leave lanes idle (40) and fill 16 dims a lane (512), sinks, and both the
 * chosen and every visible entry. */
static void test_gpu_attention_sparse(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *kc = infer_cpu_kernels();
    enum { ROWS = 4, NH = 3, BS = 16, NB = 4, N_TOK = 62, N_ENT = 16, TOP_K = 5, WINDOW = 7 };
    /* ints: block table, positions 0.., query positions, chosen entries, their counts */
    enum { I_TABLE = 0, I_ALL = NB, I_POS = I_ALL + N_TOK, I_SEL = I_POS + ROWS, I_NSEL = I_SEL + ROWS * TOP_K, N_INTS = I_NSEL + ROWS };
    int32_t ints[N_INTS] = { 2, 0, 3, 1 };
    const int32_t pos[ROWS] = { 0, 5, 30, 61 }, sel[ROWS * TOP_K] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 1, 4, 0, 2, 14, 3, 9, 11, 7 };
    const int32_t nsel[ROWS] = { 0, 1, 5, 5 };
    for (int i = 0; i < N_TOK; i++) ints[I_ALL + i] = i;
    memcpy(ints + I_POS, pos, sizeof pos); memcpy(ints + I_SEL, sel, sizeof sel); memcpy(ints + I_NSEL, nsel, sizeof nsel);
    infer__rng rng;
    infer__rng_seed(&rng, 91);
    for (int big = 0; big < 2; big++) {
        const int hd = big ? 512 : 40;
        const size_t nk = (size_t)N_TOK * hd, ne = (size_t)N_ENT * hd, nq = (size_t)ROWS * NH * hd, n_in = 2 * nk + ne + nq + NH;
        float *in = malloc(sizeof(float) * n_in), *out[2] = { calloc(nq, sizeof(float)), calloc(nq, sizeof(float)) };
        for (size_t i = 0; i < n_in; i++) in[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
        for (int mode = 0; mode < 2; mode++) {           /* the chosen entries, then every visible one */
            for (int b = 0; b < 2; b++) {                 /* the CPU (0), the GPU (1) */
                const infer_kernels *kb = b ? k : kc;
                void *c = NULL;
                infer_error err;
                if (kb->ctx_create(&c, 2, 1, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); continue; }
                const size_t pool16 = (size_t)NB * BS * hd * 2, pool32 = (size_t)NB * BS * hd * 4;
                float *d_in = kb->alloc(c, sizeof(float) * n_in), *d_out = kb->alloc(c, sizeof(float) * nq);
                void *d_k = kb->alloc(c, pool16), *d_v = kb->alloc(c, pool16), *d_e = kb->alloc(c, pool32);
                int32_t *d_i = kb->alloc(c, sizeof ints);
                CHECK(d_in && d_out && d_k && d_v && d_e && d_i);
                if (d_in && d_out && d_k && d_v && d_e && d_i) {
                    kb->upload(c, d_in, in, sizeof(float) * n_in);
                    kb->upload(c, d_i, ints, sizeof ints);
                    const float *keys = d_in, *vals = keys + nk, *ents = vals + nk, *q = ents + ne, *sinks = q + nq;
                    const infer_kv_view raw = { d_k, d_v, INFER_TYPE_F16, BS, d_i + I_TABLE, hd, NULL }, comp = { d_e, d_e, INFER_TYPE_F32, BS, d_i + I_TABLE, hd, NULL };
                    kb->kv_store(c, &raw, keys, vals, d_i + I_ALL, N_TOK);
                    kb->kv_store(c, &comp, ents, NULL, d_i + I_ALL, N_ENT);
                    kb->attention_sparse(c, d_out, q, &raw, d_i + I_POS, ROWS, NH, hd, 1.0f / sqrtf((float)hd), WINDOW, sinks, &comp, 4,
                                         mode ? NULL : d_i + I_SEL, d_i + I_NSEL, TOP_K);
                    CHECK_MSG(kb->download(c, out[b], d_out, sizeof(float) * nq) == INFER_OK, "%s backend: %s", kb->name, kb->last_error(c));
                }
                void *bufs[] = { d_in, d_out, d_k, d_v, d_e, d_i };
                for (int i = 0; i < 6; i++) if (bufs[i]) kb->free(c, bufs[i]);
                kb->ctx_free(c);
            }
            double worst = 0;
            for (size_t i = 0; i < nq; i++) {
                const double d = fabs((double)out[0][i] - out[1][i]);
                worst = isnan(d) ? INFINITY : fmax(worst, d);     /* fmax alone would drop a NaN */
            }
            printf("    head %3d, %s entries: max |gpu - cpu| %.3g\n", hd, mode ? "all" : "chosen", worst);
            CHECK_MSG(worst < 1e-5, "head %d, %s entries: max |gpu - cpu| %g", hd, mode ? "all" : "chosen", worst);
        }
        free(in); free(out[0]); free(out[1]);
    }
}

/* conv1d_silu and hc_post hold their per-thread arrays in registers up to a bound fixed at
 * compile time (4, else 16): both sides of each bound, the GPU against the CPU, outputs and
 * the state or streams they update in place */
static void test_gpu_bounded_ops(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *kc = infer_cpu_kernels();
    infer__rng rng;
    infer__rng_seed(&rng, 5);
    static const int sizes[2][5] = { { 2, 3, 4, 5, 16 }, { 2, 3, 4, 6, 16 } };   /* conv kernels, streams */
    for (int t = 0; t < 10; t++) {
        const int conv = t < 5, p = sizes[!conv][t % 5], rows = 3, ch = 70;
        /* conv: x [rows, ch] | state [p-1, ch] | w [ch, p] | out [rows, ch];  hc: x [rows, p, ch] | h [rows, ch] | pc [rows, p + p^2] */
        const size_t n0 = (size_t)rows * ch * (conv ? 1 : p), n1 = (size_t)(conv ? p - 1 : rows) * ch, n2 = conv ? (size_t)ch * p : (size_t)rows * (p + p * p);
        const size_t n = n0 + n1 + n2 + (conv ? (size_t)rows * ch : 0);
        float *in = malloc(sizeof(float) * n), *res[2] = { calloc(n, sizeof(float)), calloc(n, sizeof(float)) };
        for (size_t i = 0; i < n; i++) in[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
        for (int b = 0; b < 2; b++) {                     /* the CPU (0), the GPU (1) */
            const infer_kernels *kb = b ? k : kc;
            void *c = NULL;
            infer_error err;
            if (kb->ctx_create(&c, 2, 1, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); continue; }
            float *d = kb->alloc(c, sizeof(float) * n);
            CHECK(d != NULL);
            if (d) {
                kb->upload(c, d, in, sizeof(float) * n);
                if (conv) kb->conv1d_silu(c, d + n0 + n1 + n2, d, d + n0, d + n0 + n1, rows, ch, p);
                else kb->hc_post(c, d, d + n0, d + n0 + n1, rows, ch, p);
                CHECK_MSG(kb->download(c, res[b], d, sizeof(float) * n) == INFER_OK, "%s backend: %s", kb->name, kb->last_error(c));
                kb->free(c, d);
            }
            kb->ctx_free(c);
        }
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            const double e = fabs((double)res[0][i] - res[1][i]);
            worst = isnan(e) ? INFINITY : fmax(worst, e);
        }
        CHECK_MSG(worst < 1e-5, "%s %d: max |gpu - cpu| %g", conv ? "conv1d_silu kernel" : "hc_post streams", p, worst);
        free(in); free(res[0]); free(res[1]);
    }
}

/* the first largest of x[0..n) (greedy's tie rule: the lowest id) */
static int argmax_f(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return best;
}

/* deepseek4 on the GPU against the exact golden logits: prompt ++ the 16 greedy tokens (the
 * argmax of the reference's rows) fed in chunks of `ubatch` (the emulator makes one-token
 * steps slow; the model diff checks a decode step against the CPU); max |logit - reference|
 * over all rows, or -1 when it cannot run. With `argmax_ok`, how many of the 16 generated
 * rows have the reference's argmax. */
static double gpu_dsv4_golden(const infer_kernels *k, const char *prompt, int precise, int ubatch, int *argmax_ok) {
    const char *dir = SHARED "/golden/deepseek4";
    char path[256];
    int32_t ids[300];
    const int np = read_prompt(dir, prompt, ids, 256);
    size_t nref = 0;
    snprintf(path, sizeof path, "%s/logits/F32.%s.ref.bin", dir, prompt);
    float *ref = read_floats(path, &nref), *out = NULL;
    infer_model *m = NULL;
    infer_session *s = NULL;
    infer_error err;
    double mx = -1;
    snprintf(path, sizeof path, "%s/model-F32.gguf", dir);
    if (!np || !ref || infer_model_load(&m, path, NULL, &err) != INFER_OK) { printf("    cannot load %s\n", path); goto done; }
    const int V = infer_model_config(m)->n_vocab, rows = (int)(nref / (size_t)V);
    if (rows > 300) goto done;
    for (int g = np; g < rows; g++) ids[g] = argmax_f(ref + (size_t)(g - 1) * V, V);
    infer_session_params sp = infer_session_default_params();
    sp.precise = precise;
    sp.n_ubatch = ubatch;
    sp.n_ctx = 512;
    sp.backend = k;
    out = malloc(sizeof(float) * (size_t)V * rows);
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { printf("    %s\n", err.msg); goto done; }
    if (infer_eval(s, ids, rows, out, 1, &err) != INFER_OK) { printf("    eval: %s\n", err.msg); goto done; }
    mx = 0;
    for (size_t i = 0; i < (size_t)V * rows; i++) { const double e = fabs((double)out[i] - ref[i]); if (!(e <= mx)) mx = e; }
    if (argmax_ok) {
        *argmax_ok = 0;
        for (int g = np - 1; g < rows - 1; g++) *argmax_ok += argmax_f(out + (size_t)g * V, V) == ids[g + 1];
    }
done:
    infer_session_free(s);
    infer_model_free(m);
    free(ref);
    free(out);
    return mx;
}
/* precise: every row within 2e-3 (the family's exact-maths tolerance) -- the long prompt in
 * one batch (its indexer choices include exact ties at the cut, and its HCA entry closes at
 * t = 127), the short one in chunks of 14 (windows of 4 straddle the chunks, so the
 * compressors' state carries them); fast (F16 caches, int8 activations against the MXFP4
 * experts as on the CPU, split-TF32 for the F32 weights): the CPU fast path's rule
 * (golden_deepseek4_fast), the argmax of at least 15 of the 16 generated rows the
 * reference's */
static void test_gpu_deepseek4_golden(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    if (!file_exists(SHARED "/golden/deepseek4/model-F32.gguf")) SKIP("../shared/golden/deepseek4 not found");
    const double lx = gpu_dsv4_golden(k, "long", 1, 512, NULL), sx = gpu_dsv4_golden(k, "short", 1, 14, NULL);
    CHECK_MSG(lx >= 0 && lx <= 2e-3, "precise, long prompt: max abs diff %.3g", lx);
    CHECK_MSG(sx >= 0 && sx <= 2e-3, "precise, short prompt in chunks of 14: max abs diff %.3g", sx);
    int ok = 0;
    const double fx = gpu_dsv4_golden(k, "short", 0, 512, &ok);
    CHECK_MSG(fx >= 0 && ok * 10 >= 16 * 9, "fast, short prompt: %d of 16 generated rows with the reference's argmax (max abs diff %.3g)", ok, fx);
    printf("    precise: max abs %.3g (long), %.3g (short, chunks of 14); fast: max abs %.3g, argmax %d of 16\n", lx, sx, fx, ok);
}

/* Prompt attention over a paged pool that two sequences share: sequence s has FA_CTX[s]
 * positions in its cache already and FA_ROWS[s] new query rows after them (prompts that
 * continue a context; the second too short for the flash tiles), its FA_BLOCKS blocks of FA_BS positions scattered through the pool
 * by its table. keys, vals: each sequence's [FA_CTX + FA_ROWS, n_kv hd] in turn; q, out: the
 * rows' [n_head hd] in turn. The backend `kb` in its precise or fast mode, the cache `type`. */
enum { FA_BS = 16, FA_SEQS = 2, FA_BLOCKS = 8 };
static const int32_t FA_TABLE[FA_SEQS][FA_BLOCKS] = { { 5, 2, 7, 0, 9, 14, 11, 3 }, { 1, 6, 4, 8, 10, 12, 13, 15 } };
static const int FA_CTX[FA_SEQS] = { 70, 5 }, FA_ROWS[FA_SEQS] = { 37, 9 };     /* the first: 2 key tiles of 64, masked in the second only */
static int fa_run(const infer_kernels *kb, int precise, infer_type type, int hd, int nh, int nkv, const float *keys, const float *vals,
                  const float *q, float *out, float *out_rt) {
    void *c = NULL;
    infer_error err;
    if (kb->ctx_create(&c, 2, precise, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return 0; }
    const int kvd = nkv * hd, npos = FA_CTX[1] + FA_ROWS[1], rows = FA_ROWS[0] + FA_ROWS[1];
    const size_t n_kv = (size_t)(FA_CTX[0] + FA_ROWS[0] + npos) * kvd, n_q = (size_t)rows * nh * hd;
    const size_t pool = (size_t)FA_SEQS * FA_BLOCKS * FA_BS * kvd * (type == INFER_TYPE_F16 ? 2 : 4);
    int32_t ints[FA_SEQS * FA_BLOCKS + FA_SEQS * FA_BLOCKS * FA_BS];
    memcpy(ints, FA_TABLE, sizeof FA_TABLE);
    for (int i = 0; i < FA_SEQS * FA_BLOCKS * FA_BS; i++) ints[FA_SEQS * FA_BLOCKS + i] = i;
    float *d_kv = kb->alloc(c, sizeof(float) * 2 * n_kv), *d_q = kb->alloc(c, sizeof(float) * n_q), *d_out = kb->alloc(c, sizeof(float) * n_q);
    void *d_k = kb->alloc(c, pool), *d_v = kb->alloc(c, pool);
    int32_t *d_i = kb->alloc(c, sizeof ints), *d_rpos = kb->alloc(c, sizeof(int32_t) * 64);
    const int32_t **d_tabs = kb->alloc(c, sizeof(int32_t *) * 64);
    int ok = d_kv && d_q && d_out && d_k && d_v && d_i && d_rpos && d_tabs && rows <= 64;
    if (ok) {
        kb->upload(c, d_kv, keys, sizeof(float) * n_kv);
        kb->upload(c, d_kv + n_kv, vals, sizeof(float) * n_kv);
        kb->upload(c, d_q, q, sizeof(float) * n_q);
        kb->upload(c, d_i, ints, sizeof ints);
        const int32_t *all = d_i + FA_SEQS * FA_BLOCKS;          /* positions 0, 1, 2, ... */
        size_t at_kv = 0, at_q = 0;
        for (int s = 0; s < FA_SEQS; s++) {
            const infer_kv_view kv = { d_k, d_v, type, FA_BS, d_i + s * FA_BLOCKS, kvd, NULL };
            const int n = FA_CTX[s] + FA_ROWS[s];
            kb->kv_store(c, &kv, d_kv + at_kv, d_kv + n_kv + at_kv, all, n);
            kb->attention(c, d_out + at_q, d_q + at_q, &kv, all + FA_CTX[s], FA_ROWS[s], nh, nkv, hd, 1.0f / sqrtf((float)hd));
            at_kv += (size_t)n * kvd;
            at_q += (size_t)FA_ROWS[s] * nh * hd;
        }
        ok = kb->download(c, out, d_out, sizeof(float) * n_q) == INFER_OK;
        if (ok && out_rt) {                   /* all the rows in one call, each through its sequence's table (row_tables) */
            const int32_t *tabs[64];
            int32_t rpos[64];
            for (int s = 0, r = 0; s < FA_SEQS; s++)
                for (int i = 0; i < FA_ROWS[s]; i++, r++) { tabs[r] = d_i + s * FA_BLOCKS; rpos[r] = FA_CTX[s] + i; }
            kb->upload(c, d_tabs, tabs, sizeof(int32_t *) * rows);
            kb->upload(c, d_rpos, rpos, sizeof(int32_t) * rows);
            const infer_kv_view kv = { d_k, d_v, type, FA_BS, d_i, kvd, d_tabs };
            kb->attention(c, d_out, d_q, &kv, d_rpos, rows, nh, nkv, hd, 1.0f / sqrtf((float)hd));
            ok = kb->download(c, out_rt, d_out, sizeof(float) * n_q) == INFER_OK;
        }
        CHECK_MSG(ok, "%s backend: %s", kb->name, kb->last_error(c));
    } else CHECK_MSG(0, "%s backend: out of memory", kb->name);
    void *bufs[] = { d_kv, d_q, d_out, d_k, d_v, d_i, d_rpos, (void *)d_tabs };
    for (int i = 0; i < 8; i++) if (bufs[i]) kb->free(c, bufs[i]);
    kb->ctx_free(c);
    return ok;
}

/* The GPU's prompt attention against the CPU's: head sizes the flash-attention tiles take
 * (64, 128, 256) and one they do not (96: the f32 kernel in both modes), GQA groups 1, 4, 8,
 * F16 and F32 caches, two sequences' paged caches, rows that fill no whole tile, prompts
 * continuing a context (the second, of 9 rows, runs the decode kernel in both modes), and
 * the two prompts in one call with a block table a row (row_tables: the decode kernel,
 * 1e-5). The precise mode (the f32 kernel) is held to 1e-5. The fast mode's
 * tiles round the queries (and an F32 cache's keys and values) to F16 and the softmax
 * weights P to F16 before P V, each a relative error of at most 2^-11 = 4.9e-4; with values
 * in [-1, 1] the weights' rounding moves an output by at most 2^-11 (the denominator sums
 * the unrounded weights), the values' by as much again, and the scores' (q.k / sqrt(hd),
 * its hd rounding errors of random sign) by a few 1e-4 more: 2e-3 holds all three with room,
 * and a wrong index, mask or rescale shows as errors of order 0.1. */
static void test_gpu_flash_attention(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *kc = infer_cpu_kernels();
    const int emulated = !strcmp(k->name, "cuda-emu");
    infer__rng rng;
    infer__rng_seed(&rng, 4242);
    const int hds[] = { 64, 128, 256, 96 }, groups[] = { 1, 4, 8 };
    for (int hi = 0; hi < 4; hi++)
        for (int gi = 0; gi < 3; gi++)
            for (int f16 = 1; f16 >= 0; f16--) {
                const int hd = hds[hi], nkv = 2, nh = nkv * groups[gi], tiles = hd != 96;
                const infer_type type = f16 ? INFER_TYPE_F16 : INFER_TYPE_F32;
                const size_t n_kv = (size_t)(FA_CTX[0] + FA_ROWS[0] + FA_CTX[1] + FA_ROWS[1]) * nkv * hd;
                const size_t n_q = (size_t)(FA_ROWS[0] + FA_ROWS[1]) * nh * hd;
                float *in = malloc(sizeof(float) * (2 * n_kv + n_q)), *out[4];
                for (int b = 0; b < 4; b++) out[b] = malloc(sizeof(float) * n_q);
                for (size_t i = 0; i < 2 * n_kv + n_q; i++) in[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                /* the CPU; the GPU fast, per sequence (out[1]) and with row_tables (out[3]); the GPU
                 * precise (with the F32 cache the precise mode uses; it runs the same f32 kernel on
                 * either, and the emulator is slow) */
                const int precise = !f16;
                const float *kin = in, *vin = in + n_kv, *qin = in + 2 * n_kv;
                if (fa_run(kc, 1, type, hd, nh, nkv, kin, vin, qin, out[0], NULL) && fa_run(k, 0, type, hd, nh, nkv, kin, vin, qin, out[1], out[3]) &&
                    (!precise || fa_run(k, 1, type, hd, nh, nkv, kin, vin, qin, out[2], NULL))) {
                    double worst[3] = { 0, 0, 0 };
                    for (int b = 0; b < 3; b++)
                        for (size_t i = 0; i < n_q && (b != 1 || precise); i++) {
                            const double d = fabs((double)out[1 + b][i] - out[0][i]);
                            worst[b] = isnan(d) ? INFINITY : fmax(worst[b], d);
                        }
                    const double tol = tiles ? 2e-3 : 1e-5;
                    printf("    head %3d, group %d, %s cache: max |gpu - cpu| fast %.3g, one call with row tables %.3g", hd, groups[gi],
                           f16 ? "F16" : "F32", worst[0], worst[2]);
                    if (precise) printf(", precise %.3g", worst[1]);
                    printf("\n");
                    CHECK_MSG(worst[0] <= tol, "head %d group %d %s: fast mode differs by %g", hd, groups[gi], f16 ? "F16" : "F32", worst[0]);
                    CHECK_MSG(worst[1] <= 1e-5, "head %d group %d %s: precise mode differs by %g", hd, groups[gi], f16 ? "F16" : "F32", worst[1]);
                    CHECK_MSG(worst[2] <= 1e-5, "head %d group %d %s: row tables differ by %g", hd, groups[gi], f16 ? "F16" : "F32", worst[2]);
                    /* the emulated device has tensor cores: the tiles ran (their rounding shows) */
                    if (emulated && tiles) CHECK_MSG(worst[0] > 1e-6, "head %d: the fast mode did not take the tiles", hd);
                }
                free(in);
                for (int b = 0; b < 4; b++) free(out[b]);
            }
}

/* Decode steps whose attention is split over many blocks (one row, a long context: the splits
 * merged by the last block of each head group, which sets its counter back to 0): four steps
 * as the forward pass brackets them, their inputs uploaded to the same buffers before each
 * (the first grows the scratch and runs unrecorded, the third is captured as a graph, the
 * fourth replays it), each against the CPU; head sizes 64, 128, 256 and GQA groups that give
 * a block 4, 2 or 1 query heads, in both modes (the fast one reads the F16 cache 16 bytes a
 * lane). A counter left set would keep the next step's merge from running (its output, NaN
 * beforehand, would stay NaN). */
static void test_gpu_attention_splits(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *kc = infer_cpu_kernels();
    enum { BS = 16, NB = 20, CTX = 300, STEPS = 4 };
    static const int shapes[][3] = { { 64, 8, 2 }, { 128, 16, 2 }, { 128, 4, 2 }, { 256, 6, 2 } };   /* head size, heads, KV heads */
    infer__rng rng;
    infer__rng_seed(&rng, 77);
    int32_t ints[NB + CTX + STEPS];
    for (int i = 0; i < NB; i++) ints[i] = (i * 7) % NB;                 /* the blocks out of order */
    for (int i = 0; i < CTX + STEPS; i++) ints[NB + i] = i;
    for (int sh = 0; sh < 4; sh++) {
        const int HD = shapes[sh][0], NH = shapes[sh][1], NKV = shapes[sh][2], KVD = NKV * HD, QD = NH * HD;
        const size_t n_kv = (size_t)(CTX + STEPS) * KVD, n_in = 2 * n_kv + (size_t)STEPS * QD;
        float *in = malloc(sizeof(float) * n_in), *out[2] = { malloc(sizeof(float) * STEPS * QD), malloc(sizeof(float) * STEPS * QD) };
        float *nan_row = malloc(sizeof(float) * QD);
        for (int i = 0; i < QD; i++) nan_row[i] = NAN;
        for (size_t i = 0; i < n_in; i++) in[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
        for (int precise = 1; precise >= 0; precise--) {
            int graphs = 0;
            for (int b = 0; b < 2; b++) {
                const infer_kernels *kb = b ? k : kc;
                void *c = NULL;
                infer_error err;
                if (kb->ctx_create(&c, 2, precise, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); continue; }
                const size_t pool = (size_t)NB * BS * KVD * (precise ? 4 : 2);
                float *d_in = kb->alloc(c, sizeof(float) * n_in), *d_out = kb->alloc(c, sizeof(float) * QD);
                float *d_row = kb->alloc(c, sizeof(float) * (2 * KVD + QD));      /* the step's key, value, query */
                void *d_k = kb->alloc(c, pool), *d_v = kb->alloc(c, pool);
                int32_t *d_i = kb->alloc(c, sizeof ints), *d_pos = kb->alloc(c, sizeof(int32_t));
                if (d_in && d_out && d_row && d_k && d_v && d_i && d_pos) {
                    kb->upload(c, d_in, in, sizeof(float) * n_in);
                    kb->upload(c, d_i, ints, sizeof ints);
                    const infer_kv_view kv = { d_k, d_v, precise ? INFER_TYPE_F32 : INFER_TYPE_F16, BS, d_i, KVD, NULL };
                    kb->kv_store(c, &kv, d_in, d_in + n_kv, d_i + NB, CTX);
                    for (int st = 0; st < STEPS; st++) {
                        const int32_t p = CTX + st;
                        kb->upload(c, d_pos, &p, sizeof p);              /* what changes per step is in device memory */
                        kb->upload(c, d_out, nan_row, sizeof(float) * QD);
                        kb->upload(c, d_row, in + (size_t)p * KVD, sizeof(float) * KVD);
                        kb->upload(c, d_row + KVD, in + n_kv + (size_t)p * KVD, sizeof(float) * KVD);
                        kb->upload(c, d_row + 2 * KVD, in + 2 * n_kv + (size_t)st * QD, sizeof(float) * QD);
                        if (kb->step_begin) kb->step_begin(c);
                        kb->kv_store(c, &kv, d_row, d_row + KVD, d_pos, 1);
                        kb->attention(c, d_out, d_row + 2 * KVD, &kv, d_pos, 1, NH, NKV, HD, 1.0f / sqrtf((float)HD));
                        if (kb->step_end) CHECK(kb->step_end(c) == INFER_OK);
                        int launches = 0, graph = 0;
                        if (kb->step_info) kb->step_info(c, &launches, &graph);
                        graphs += b && graph;
                        CHECK_MSG(kb->download(c, out[b] + (size_t)st * QD, d_out, sizeof(float) * QD) == INFER_OK, "%s backend: %s", kb->name,
                                  kb->last_error(c));
                    }
                } else CHECK_MSG(0, "%s backend: out of memory", kb->name);
                void *bufs[] = { d_in, d_out, d_row, d_k, d_v, d_i, d_pos };
                for (int i = 0; i < 7; i++) if (bufs[i]) kb->free(c, bufs[i]);
                kb->ctx_free(c);
            }
            double worst = 0;
            for (size_t i = 0; i < (size_t)STEPS * QD; i++) {
                const double d = fabs((double)out[1][i] - out[0][i]);
                worst = isnan(d) ? INFINITY : fmax(worst, d);
            }
            printf("    head %3d, %2d heads / %d: %s, %d steps (%d as graphs): max |gpu - cpu| %.3g\n", HD, NH, NKV, precise ? "precise" : "fast", STEPS,
                   graphs, worst);
            CHECK_MSG(worst <= 1e-5, "head %d, %s decode steps differ from the CPU by %g", HD, precise ? "precise" : "fast", worst);
            CHECK_MSG(graphs >= 2, "%d of the %d steps ran as graphs", graphs, STEPS);
        }
        free(in); free(out[0]); free(out[1]); free(nan_row);
    }
}


/* Several sequences batched on the GPU (their block tables on the device), random joins and
 * leaves: each one's logits within the model tolerance of the same sequence alone on the CPU */
static void test_gpu_seq_batch(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const char *files[2] = { SHARED "/models/stories260K.gguf", SHARED "/golden/qwen35/model-F32.gguf" };
    for (int f = 0; f < 2; f++) {
        if (!file_exists(files[f])) {
            if (f == 0) SKIP("../shared not found");
            printf("    %s not found: passed over\n", files[f]);   /* (a GPU run's data may leave the 14 MB model behind) */
            continue;
        }
        infer_model *m;
        infer_error err;
        if (infer_model_load(&m, files[f], NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); continue; }
        const int V = infer_model_config(m)->n_vocab, R = 4;
        infer__rng rng;
        infer__rng_seed(&rng, 31 + f);
        seq_run r[4];
        float *ref[4] = { 0 };
        seq_runs_make(r, R, V, &rng);
        if (seq_runs_alone(m, r, R, ref, 1, 64, NULL) && seq_runs_batched(m, r, R, 3, 1, 64, &rng, k)) {
            for (int i = 0; i < R; i++) {
                double mx = 0, scale = 0;
                for (size_t j = 0; j < (size_t)V * r[i].n; j++) { mx = fmax(mx, fabs((double)ref[i][j] - r[i].logits[j])); scale = fmax(scale, fabs(ref[i][j])); }
                CHECK_MSG(mx <= 2e-3 * fmax(scale, 1.0), "%s: sequence %d on the GPU, batched, differs by %g from the CPU alone", files[f], i, mx);
            }
        } else {
            CHECK_MSG(0, "%s: a run failed", files[f]);
        }
        for (int i = 0; i < R; i++) { free(ref[i]); free(r[i].logits); }
        if (f == 0) {                      /* a prefix from the cache: 16 rows shared, 4 copied on the device */
            int32_t a[40], b[30];
            for (int i = 0; i < 40; i++) a[i] = (i * 7 + 3) % V;
            for (int i = 0; i < 30; i++) b[i] = i < 20 ? a[i] : (i * 11 + 1) % V;
            float *want = eval_logits(m, b, 30, 30, (run_opts){ .precise = 1, .n_ctx = 2048 }), *got = malloc(sizeof(float) * (size_t)V * 10);
            infer_session_params sp = infer_session_default_params();
            sp.precise = 1; sp.n_seq_max = 2; sp.backend = k;
            infer_session *s;
            int32_t sb;
            CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK && infer_eval(s, a, 40, NULL, 0, &err) == INFER_OK);
            CHECK(infer_seq_add(s, &sb, &err) == INFER_OK && infer_seq_reuse(s, sb, b, 30) == 20);
            const infer_batch_item it = { sb, b + 20, 10, got, 1, NULL };
            CHECK_MSG(infer_eval_batch(s, &it, 1, &err) == INFER_OK, "%s", err.msg);
            double mx = 0;
            for (size_t j = 0; want && j < (size_t)V * 10; j++) mx = fmax(mx, fabs((double)want[(size_t)20 * V + j] - got[j]));
            CHECK_MSG(want && mx <= 2e-3, "a prefix reused on the GPU: logits differ by %g from the CPU alone", mx);
            infer_session_free(s);
            free(want); free(got);
        }
        infer_model_free(m);
    }
    /* the fast mode with 20 sequences at once, so that steps cross Q4_0's switches: up to 8
     * rows on the matvec, more on the int8 tiles, 64 and more (prompt steps) on the BF16
     * GEMM: each sequence against the CPU's fast path alone, whose activations the int8
     * paths quantize the same way (the GEMM rounds them to BF16 instead, nearer exact maths;
     * a batch mixed up, or a row read from another sequence, is off by the logits' whole
     * size) */
    const char *q4 = SHARED "/golden/llama/model-Q4_0.gguf";
    if (!file_exists(q4)) SKIP("../shared/golden/llama not found");
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, q4, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    const int V = infer_model_config(m)->n_vocab, R = 20;
    /* pass 1: the same with the matvec set to take up to 64 rows (INFER_CUDA_MVQ_ROWS=64), so
     * every decode step of up to 20 rows runs the fused decode ops in up to 3 row blocks;
     * pass 2: steps of 9-64 rows on k_mmv (INFER_CUDA_MMV=64: above 16, blocks of 16 rows side by side) */
    static const char *const pass_name[3] = { "", " (matvec up to 64 rows)", " (9-64 rows on k_mmv)" };
    for (int pass = 0; pass < 3; pass++) {
#ifdef INFER_CUDA
    const int old_mvq = infer_cuda_mvq_rows_force(pass == 1 ? 64 : -1), old_mmv = infer_cuda_mmv_force(pass == 2 ? 64 : 0, 0);
    const long mmv0 = infer_cuda_mmv_count();
#else
    if (pass) break;
#endif
    infer__rng rng;
    infer__rng_seed(&rng, 77);
    seq_run r[20];
    float *ref[20] = { 0 };
    seq_runs_make(r, R, V, &rng);
    if (seq_runs_alone(m, r, R, ref, 0, 64, NULL) && seq_runs_batched(m, r, R, 20, 0, 64, &rng, k)) {
        double worst = 0;
        for (int i = 0; i < R; i++) {
            double mx = 0, scale = 0;
            for (size_t j = 0; j < (size_t)V * r[i].n; j++) { mx = fmax(mx, fabs((double)ref[i][j] - r[i].logits[j])); scale = fmax(scale, fabs(ref[i][j])); }
            worst = fmax(worst, mx / fmax(scale, 1.0));
            /* four times the fast bound (each fast path is within 1e-2 of exact maths): one
             * activation that rounds to the other int8 code after a slightly different sum
             * upstream moves a logit by up to ~1% of the largest, and 20 sequences give many
             * chances (1.4e-2 under the emulator); a row mixed up with another's is off by
             * the logits' whole size */
            CHECK_MSG(mx <= 4e-2 * fmax(scale, 1.0), "Q4_0, fast%s: sequence %d on the GPU, 20 at once, differs by %g from the CPU's fast path alone",
                      pass_name[pass], i, mx);
        }
        printf("    Q4_0, fast%s, 20 sequences at once: largest |GPU batched - CPU alone| / max|logit| = %.2g\n", pass_name[pass], worst);
    } else {
        CHECK_MSG(0, "%s: a run failed", q4);
    }
    for (int i = 0; i < R; i++) { free(ref[i]); free(r[i].logits); }
#ifdef INFER_CUDA
    CHECK_MSG((pass == 2) == (infer_cuda_mmv_count() > mmv0), "pass %d: %ld k_mmv launches", pass, infer_cuda_mmv_count() - mmv0);
    infer_cuda_mvq_rows_force(old_mvq);
    infer_cuda_mmv_force(old_mmv, 0);
#endif
    }
    infer_model_free(m);
}

/* A decode step on the GPU is one graph replay, and its launches stay within the budget:
 * a prompt, then tokens one at a time, in the precise mode on stories260K (llama, 5 layers,
 * F32 weights), in the fast mode on it and on the golden Q4_0 llama (its matvecs read int8
 * activations, so the fused ops that write them are what keeps the count down). The first
 * decode steps run as plain launches (the first one also grows attention's scratch buffer,
 * which ends its recording), the next is captured, every later one replays the graph (from
 * the third on); the launch count is the same each step and at most the mode's budget per
 * layer + 4 (the embedding, and the output's gather, norm and matmul). A layer, precise:
 * rmsnorm, q/k/v, rope_kv_store (q and k turned, the cache rows written), attention (its
 * splits merged by the last block), o (+ residual), rmsnorm, gate/up with the GLU, down
 * (+ residual). Fast: the
 * norms write the int8 activations of q/k/v and gate/up, the GLU those of down, the
 * attention those of o (attention_matmul_add): no quantization launch of their own; rope
 * and the cache stores run inside the q/k/v matvec (rmsnorm_qkv_store): 7 a layer. Fast on
 * stories260K's F32 weights: the two norms run inside the matvecs after them too (k_mvq's
 * NM), 5 a layer. The logits of
 * the replayed steps equal the CPU's (the precise mode within the model tolerance, the fast
 * mode the CPU's fast path within twice the fast bound), so a replay that read stale
 * positions or tokens would fail here. */
#define INFER_TEST_LAUNCHES_PER_LAYER 8
#define INFER_TEST_LAUNCHES_PER_LAYER_FAST 7            /* rope and the cache stores inside the q/k/v matvec */
#define INFER_TEST_LAUNCHES_PER_LAYER_FLOAT_FAST 5      /* float weights, one row: the two norms inside their matvecs too */
static void decode_graph_run(const infer_kernels *k, const char *path, int precise, int budget, int step_budget) {
    infer_model *m = load_model(path, 0);
    if (!m) return;
    const int V = infer_model_config(m)->n_vocab, L = infer_model_config(m)->n_layer, NP = 6, NG = 8;
    int32_t ids[NP + NG];
    for (int i = 0; i < NP + NG; i++) ids[i] = (i * 37 + 5) % V;
    float *ref = eval_logits(m, ids, NP + NG, NP, (run_opts){ precise, 512, 1, 64, NULL });
    infer_session_params sp = infer_session_default_params();
    sp.backend = k;
    sp.n_ctx = 64;
    sp.precise = precise;
    infer_session *s;
    infer_error err;
    float *got = malloc(sizeof(float) * (size_t)V);
    CHECK(ref && got && infer_session_create(&s, m, &sp, &err) == INFER_OK);
    int launches = -1, graph = -1, first = -1, n_graph = 0;
    infer_session_step_info(s, &launches, &graph);
    CHECK_MSG(launches == 0 && graph == 0, "before any step: %d launches, graph %d", launches, graph);
    CHECK(infer_eval(s, ids, NP, NULL, 0, &err) == INFER_OK);
    double mx = 0, scale = 0;
    for (int g = 0; g < NG; g++) {
        CHECK_MSG(infer_eval(s, ids + NP + g, 1, got, 0, &err) == INFER_OK, "%s", err.msg);
        infer_session_step_info(s, &launches, &graph);
        if (g == 0) first = launches;
        n_graph += graph;
        if (g >= 2) CHECK_MSG(graph == 1, "decode step %d ran without a graph", g);
        CHECK_MSG(launches == first && launches > 0 && launches <= (step_budget ? step_budget : budget * L + 4),
                  "%s decode step %d: %d launches (first step %d; budget %d per layer + 4, %d layers, or %d a step)", precise ? "precise" : "fast", g,
                  launches, first, budget, L, step_budget);
        for (int v = 0; v < V; v++) {
            const double r = ref[(size_t)(NP + g) * V + v];
            mx = fmax(mx, fabs((double)got[v] - r));
            scale = fmax(scale, fabs(r));
        }
    }
    printf("    %s: %d launches a decode step (%d layers), %d of %d steps as a graph, max |logit - cpu| %.3g (max |logit| %.3g)\n",
           precise ? "precise" : "fast", launches, L, n_graph, NG, mx, scale);
    if (precise) CHECK_MSG(mx <= 2e-3, "replayed decode steps differ from the CPU by %g", mx);
    else CHECK_MSG(mx <= 2e-2 * fmax(scale, 1.0), "replayed fast decode steps differ from the CPU's fast path by %g", mx);
    infer_session_free(s);
    free(ref); free(got);
    infer_model_free(m);
}
static void test_gpu_decode_graph(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    decode_graph_run(k, SHARED "/models/stories260K.gguf", 1, INFER_TEST_LAUNCHES_PER_LAYER, 0);
    decode_graph_run(k, SHARED "/models/stories260K.gguf", 0, INFER_TEST_LAUNCHES_PER_LAYER_FLOAT_FAST, 0);
    if (file_exists(SHARED "/golden/llama/model-Q4_0.gguf")) decode_graph_run(k, SHARED "/golden/llama/model-Q4_0.gguf", 0, INFER_TEST_LAUNCHES_PER_LAYER_FAST, 0);
    else printf("  SKIP: ../shared/golden/llama not found (the fast mode's budget)\n");
    /* the CPU runs no graphs and counts no launches */
    infer_model *m = load_model(SHARED "/models/stories260K.gguf", 0);
    if (!m) return;
    infer_session_params sp = infer_session_default_params();
    infer_session *s;
    infer_error err;
    int32_t ids[2] = { 5, 42 };
    int launches = -1, graph = -1;
    CHECK(infer_session_create(&s, m, &sp, &err) == INFER_OK && infer_eval(s, ids, 2, NULL, 0, &err) == INFER_OK);
    infer_session_step_info(s, &launches, &graph);
    CHECK(launches == 0 && graph == 0);
    infer_session_free(s);
    infer_model_free(m);
}

/* Greedy picks on the backend (infer_batch_item.greedy): three sequences decode 8 steps in
 * two sessions fed the same tokens -- one asks for logits only, the other for greedy ids only
 * (on a GPU the argmax op, one id back per sequence) -- and every id is the host's argmax of
 * the other session's logits; an item asking for both gets both, the same. On a device
 * backend the greedy steps still run as graphs. Then generation with --temp 0: the same 24
 * tokens with the logits (the host samples) and without (infer_gen_params.no_logits: the
 * backend picks, on_token sees NULL). */
typedef struct { int32_t ids[32]; int n, null_logits; } greedy_toks;
static int greedy_tok(void *user, int32_t t, const float *logits) {
    greedy_toks *g = user;
    if (g->n < 32) g->ids[g->n++] = t;
    g->null_logits += logits == NULL;
    return 0;
}
static void greedy_generate(infer_model *m, const infer_kernels *k) {
    infer_session_params sp = infer_session_default_params();
    sp.backend = k;
    infer_sampler_params smp = infer_sampler_default_params();
    smp.temp = 0;
    greedy_toks got[2];
    memset(got, 0, sizeof got);
    const int32_t prompt[3] = { 1, 40, 41 };
    for (int no_logits = 0; no_logits < 2; no_logits++) {
        infer_session *s;
        infer_error err;
        if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
        infer_gen_params gp = { 24, 1, greedy_tok, NULL, &got[no_logits], 0, no_logits };
        CHECK_MSG(infer_generate_ex(s, prompt, 3, &gp, &smp, NULL, &err) == INFER_OK, "%s", err.msg);
        infer_session_free(s);
    }
    CHECK_MSG(got[0].n == 24 && got[1].n == 24 && !memcmp(got[0].ids, got[1].ids, sizeof got[0].ids), "greedy generation: %d and %d tokens, %s", got[0].n,
              got[1].n, memcmp(got[0].ids, got[1].ids, sizeof got[0].ids) ? "they differ" : "the same");
    CHECK_MSG(got[0].null_logits == 0 && got[1].null_logits == 24, "on_token saw NULL logits %d and %d times (expected 0 and 24)", got[0].null_logits,
              got[1].null_logits);
}
static void greedy_run(const infer_kernels *k) {
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    infer_model *m = load_model(SHARED "/models/stories260K.gguf", 0);
    if (!m) return;
    enum { S = 3, NP = 4, NG = 8 };
    const int V = infer_model_config(m)->n_vocab;
    infer_session_params sp = infer_session_default_params();
    sp.backend = k; sp.n_seq_max = S; sp.n_ctx = S * 32;
    infer_session *sl = NULL, *sg = NULL;
    infer_error err;
    float *logits = malloc(sizeof(float) * (size_t)V * S), *both = malloc(sizeof(float) * (size_t)V);
    int32_t seq[S], tok[S][NP], next[S], pick_both = -7;
    int mismatches = 0, graph = 0, launches = 0;
    if (!logits || !both || infer_session_create(&sl, m, &sp, &err) != INFER_OK || infer_session_create(&sg, m, &sp, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    seq[0] = 0;
    for (int i = 1; i < S; i++) {
        int32_t a, b;
        CHECK(infer_seq_add(sl, &a, &err) == INFER_OK && infer_seq_add(sg, &b, &err) == INFER_OK && a == b);
        seq[i] = a;
    }
    for (int i = 0; i < S; i++) for (int t = 0; t < NP; t++) tok[i][t] = (t * 37 + i * 11 + 5) % V;
    for (int g = 0; g <= NG; g++) {
        infer_batch_item il[S], ig[S];
        for (int i = 0; i < S; i++) {
            const int32_t *in = tok[i];
            il[i] = (infer_batch_item){ seq[i], in, g == 0 ? NP : 1, logits + (size_t)i * V, 0, NULL };
            ig[i] = (infer_batch_item){ seq[i], in, g == 0 ? NP : 1, NULL, 0, &next[i] };
        }
        if (g == NG) {                        /* the last step: sequence 1 asks for both */
            ig[1].logits = both;
            ig[1].greedy = &pick_both;
        }
        CHECK_MSG(infer_eval_batch(sl, il, S, &err) == INFER_OK, "%s", err.msg);
        for (int i = 0; i < S; i++) next[i] = -1;
        CHECK_MSG(infer_eval_batch(sg, ig, S, &err) == INFER_OK, "%s", err.msg);
        if (g == NG) next[1] = pick_both;
        for (int i = 0; i < S; i++) {
            const int32_t want = infer__argmax(logits + (size_t)i * V, V);
            mismatches += next[i] != want;
            CHECK_MSG(next[i] == want, "step %d, sequence %d: greedy id %d, the logits' argmax %d", g, i, next[i], want);
            tok[i][0] = next[i];              /* both sessions are fed the pick */
        }
        if (g == NG - 1) infer_session_step_info(sg, &launches, &graph);
    }
    CHECK_MSG(pick_both >= 0 && memcmp(both, logits + (size_t)V, sizeof(float) * (size_t)V) == 0, "an item asking for logits and id: id %d, logits %s",
              pick_both, memcmp(both, logits + (size_t)V, sizeof(float) * (size_t)V) ? "differ" : "the same");
    if (!k->host_memory) CHECK_MSG(graph == 1, "greedy decode steps did not run as a graph (%d launches)", launches);
    printf("    %s: %d steps x %d sequences, %d greedy ids off the logits' argmax; graph %d\n", k->name, NG + 1, S, mismatches, graph);
    greedy_generate(m, k);
done:
    if (sl) infer_session_free(sl);
    if (sg) infer_session_free(sg);
    free(logits); free(both);
    infer_model_free(m);
}
static void test_eval_greedy(void) { greedy_run(infer_cpu_kernels()); }
static void test_gpu_greedy(void) {
    const infer_kernels *k = gpu_or_skip();
    if (k) greedy_run(k);
}

/* Programmatic dependent launch (a kernel starts while the one before it ends, and waits for
 * it at its first line): the same steps -- a prompt, then decode steps replayed as graphs --
 * with and without it give the same logits (a kernel that read its input before the
 * previous kernel had written it would not), and the steps stay graphs. The fast mode, the
 * F16 cache; stories260K's small kernels overlap the most. A third run without the small
 * kernels' L2 prefetch of the next matvec's weights (a hint: the same logits). */
static void test_gpu_pdl(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    const int old = infer_cuda_pdl_force(1);
    if (old == -2) SKIP("no programmatic dependent launch on this device (compute capability below 9.0)");
    infer_model *m = load_model(SHARED "/models/stories260K.gguf", 0);
    if (!m) { infer_cuda_pdl_force(old); return; }
    enum { NP = 9, NG = 24 };
    const int V = infer_model_config(m)->n_vocab;
    int32_t ids[NP + NG];
    for (int i = 0; i < NP + NG; i++) ids[i] = (i * 41 + 11) % V;
    float *out[3] = { NULL, NULL, NULL };
    int graphs[3] = { 0, 0, 0 };
    const int old_pf = infer_cuda_l2pf_force(1);
    for (int pdl = 0; pdl < 3; pdl++) {                   /* 0: without PDL, 1: with, 2: with, no prefetch */
        infer_cuda_pdl_force(pdl != 0);
        infer_cuda_l2pf_force(pdl != 2);
        infer_session_params sp = infer_session_default_params();
        sp.backend = k; sp.n_ctx = 64;
        infer_session *s;
        infer_error err;
        out[pdl] = malloc(sizeof(float) * (size_t)V * (NG + 1));
        if (!out[pdl] || infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK(0); continue; }
        infer_status st = infer_eval(s, ids, NP, out[pdl], 0, &err);
        for (int i = 0; i < NG && st == INFER_OK; i++) {
            st = infer_eval(s, ids + NP + i, 1, out[pdl] + (size_t)(i + 1) * V, 0, &err);
            int launches, graph;
            infer_session_step_info(s, &launches, &graph);
            graphs[pdl] += graph;
        }
        CHECK_MSG(st == INFER_OK, "%s", err.msg);
        infer_session_free(s);
    }
    infer_cuda_pdl_force(old);
    infer_cuda_l2pf_force(old_pf);
    double mx = 0, mp = 0;
    for (size_t i = 0; out[0] && out[1] && i < (size_t)V * (NG + 1); i++) mx = fmax(mx, fabs((double)out[0][i] - out[1][i]));
    for (size_t i = 0; out[1] && out[2] && i < (size_t)V * (NG + 1); i++) mp = fmax(mp, fabs((double)out[2][i] - out[1][i]));
    printf("    %d decode steps: max |logit with - without| %.3g (PDL), %.3g (L2 prefetch); graphs %d, %d and %d\n", NG, mx, mp, graphs[1], graphs[0], graphs[2]);
    CHECK_MSG(out[0] && out[1] && mx <= 1e-5, "with programmatic dependent launch the logits move by %g", mx);
    CHECK_MSG(out[1] && out[2] && mp == 0, "without the L2 prefetch the logits move by %g", mp);
    CHECK_MSG(graphs[1] >= NG - 2 && graphs[0] >= NG - 2 && graphs[2] >= NG - 2, "graphs: %d with, %d without, %d without prefetch, of %d steps", graphs[1],
              graphs[0], graphs[2], NG);
    free(out[0]); free(out[1]); free(out[2]);
    infer_model_free(m);
#endif
}

/* A qwen35 decode step on the GPU: the golden Q8_0 (three gated DeltaNet layers, then one
 * attention layer). First decode_graph_run in the fast and the precise mode: the step a
 * graph, within its launch budget, its logits the CPU's. A DeltaNet layer, fast: the input
 * norm writing the int8 activations (1), the four input matmuls (1), deltanet_decode -- the
 * conv, the gates, the L2 norms, the delta rule, the output norm and silu(z), and the output
 * projection's int8 activations (1) -- the output projection's matmul (+ residual, 1), the
 * feed-forward block (3): 7 (17 op by op); precise 7 (the norm a launch of its own, the
 * output projection's matmul reading floats). The
 * attention layer: 16 fast, 15 precise; + 4 a step. Then three sequences batched (precise):
 * decode steps of all three, of one, of all three in another row order, and a step with a
 * prompt among the decode rows (which runs the ops one by one for every row) -- every
 * sequence's logits those of the same sequence alone on the CPU (a row given another row's
 * state, or a state not carried across the two paths, is off by the logits' size); a step
 * of three decode rows takes the launches of one (+ at most one a layer: the precise GLU). */
#define INFER_TEST_QWEN35_LAUNCHES_FAST (4 + 16 + 3 * 7)
#define INFER_TEST_QWEN35_LAUNCHES_PRECISE (4 + 15 + 3 * 7)
static void test_gpu_deltanet_decode(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const char *q8 = SHARED "/golden/qwen35/model-Q8_0.gguf";
    if (!file_exists(q8)) SKIP("../shared/golden/qwen35 not found");
    decode_graph_run(k, q8, 0, 0, INFER_TEST_QWEN35_LAUNCHES_FAST);
    decode_graph_run(k, q8, 1, 0, INFER_TEST_QWEN35_LAUNCHES_PRECISE);
    infer_model *m = load_model(q8, 0);
    if (!m) return;
    enum { S = 3, N = 24, STEPS = 6 };
    const int V = infer_model_config(m)->n_vocab, L = infer_model_config(m)->n_layer;
    const int np[S] = { 5, 7, 4 };
    /* step g: the sequences in row order (-1 ends), and how many tokens each takes */
    static const int order[STEPS][S + 1] = { { 0, 1, 2, -1 }, { 1, -1 }, { 0, 2, 1, -1 }, { 0, 1, 2, -1 }, { 0, 1, 2, -1 }, { 2, 1, 0, -1 } };
    static const int ntok[STEPS][S] = { { 1, 1, 1 }, { 1 }, { 1, 3, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 } };
    int32_t ids[S][N];
    float *ref[S];
    for (int i = 0; i < S; i++) {
        for (int t = 0; t < N; t++) ids[i][t] = (t * 29 + i * 13 + 7) % V;
        ref[i] = eval_logits(m, ids[i], N, N, (run_opts){ .precise = 1, .n_ctx = 64 });
        CHECK(ref[i] != NULL);
    }
    infer_session_params sp = infer_session_default_params();
    sp.backend = k; sp.precise = 1; sp.n_seq_max = S; sp.n_ctx = S * 64;
    infer_session *s = NULL;
    infer_error err;
    float *got = malloc(sizeof(float) * (size_t)V * S);
    int32_t seq[S] = { 0 };
    int past[S], launches[STEPS] = { 0 }, graph;
    double mx = 0;
    CHECK(got && ref[0] && ref[1] && ref[2] && infer_session_create(&s, m, &sp, &err) == INFER_OK);
    for (int i = 1; s && i < S; i++) CHECK(infer_seq_add(s, &seq[i], &err) == INFER_OK);
    for (int i = 0; s && i < S; i++) {
        const infer_batch_item it = { seq[i], ids[i], np[i], NULL, 0, NULL };
        CHECK_MSG(infer_eval_batch(s, &it, 1, &err) == INFER_OK, "%s", err.msg);
        past[i] = np[i];
    }
    for (int g = 0; s && got && ref[0] && ref[1] && ref[2] && g < STEPS; g++) {
        infer_batch_item it[S];
        int n = 0;
        for (; order[g][n] >= 0 && n < S; n++) {
            const int i = order[g][n];
            it[n] = (infer_batch_item){ seq[i], &ids[i][past[i]], ntok[g][n], got + (size_t)n * V, 0, NULL };
            past[i] += ntok[g][n];
        }
        CHECK_MSG(infer_eval_batch(s, it, n, &err) == INFER_OK, "%s", err.msg);
        infer_session_step_info(s, &launches[g], &graph);
        for (int r = 0; r < n; r++) {
            const int i = order[g][r];
            for (int v = 0; v < V; v++) mx = fmax(mx, fabs((double)ref[i][(size_t)(past[i] - 1) * V + v] - got[(size_t)r * V + v]));
        }
    }
    printf("    3 sequences, precise: launches of the steps %d %d %d %d %d %d; max |logit - cpu alone| %.3g\n", launches[0], launches[1],
           launches[2], launches[3], launches[4], launches[5], mx);
    CHECK_MSG(mx <= 2e-3, "batched qwen35 decode differs from each sequence alone by %g", mx);
    CHECK_MSG(launches[1] > 0 && launches[0] >= launches[1] && launches[0] <= launches[1] + L && launches[3] == launches[0] &&
              launches[4] == launches[0] && launches[5] == launches[0] && launches[2] > launches[0],
              "launches: %d (3 rows), %d (1), %d (a prompt among them), %d, %d, %d (3)", launches[0], launches[1], launches[2], launches[3],
              launches[4], launches[5]);
    infer_session_free(s);
    for (int i = 0; i < S; i++) free(ref[i]);
    free(got);
    infer_model_free(m);
}

/* Decode steps of several sequences at once cost the launches of one: the cache store and
 * the attention of a layer are one launch each for every row (the per-row block tables),
 * whether 3 or 6 sequences decode (a launch per sequence would add 2-3 a layer for each);
 * and each sequence's logits are what it gets alone on the CPU (a row read through another
 * row's table is off by the logits' size) */
static void test_gpu_batch_launches(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    if (!file_exists(SHARED "/models/stories260K.gguf")) SKIP("../shared/models not found");
    infer_model *m = load_model(SHARED "/models/stories260K.gguf", 0);
    if (!m) return;
    enum { S = 6, NP = 5, NG = 3 };
    const int V = infer_model_config(m)->n_vocab;
    int32_t ids[S][NP + NG];
    for (int i = 0; i < S; i++)
        for (int t = 0; t < NP + NG; t++) ids[i][t] = (t * 31 + i * 17 + 3) % V;
    infer_session_params sp = infer_session_default_params();
    sp.backend = k; sp.precise = 1; sp.n_seq_max = S; sp.n_ctx = S * 64;
    infer_session *s;
    infer_error err;
    float *got = malloc(sizeof(float) * (size_t)V * S);
    int32_t seq[S];
    CHECK(got && infer_session_create(&s, m, &sp, &err) == INFER_OK);
    seq[0] = 0;
    for (int i = 1; i < S; i++) CHECK(infer_seq_add(s, &seq[i], &err) == INFER_OK);
    for (int i = 0; i < S; i++) {
        const infer_batch_item it = { seq[i], ids[i], NP, NULL, 0, NULL };
        CHECK_MSG(infer_eval_batch(s, &it, 1, &err) == INFER_OK, "%s", err.msg);
    }
    /* step g decodes sequences 0..n-1, n = 1, 3, 6 in turn; sequence i's token g */
    int launches[NG] = { 0 }, graph;
    const int n_of[NG] = { 1, 3, S };
    int past[S];
    for (int i = 0; i < S; i++) past[i] = NP;
    double mx = 0;
    for (int g = 0; g < NG; g++) {
        infer_batch_item it[S];
        for (int i = 0; i < n_of[g]; i++) {
            it[i] = (infer_batch_item){ seq[i], &ids[i][past[i]], 1, got + (size_t)i * V, 0, NULL };
            past[i]++;
        }
        CHECK_MSG(infer_eval_batch(s, it, n_of[g], &err) == INFER_OK, "%s", err.msg);
        infer_session_step_info(s, &launches[g], &graph);
        for (int i = 0; i < n_of[g]; i++) {
            float *want = eval_logits(m, ids[i], past[i], past[i], (run_opts){ .precise = 1, .n_ctx = 64 });
            for (int v = 0; want && v < V; v++) mx = fmax(mx, fabs((double)want[(size_t)(past[i] - 1) * V + v] - got[(size_t)i * V + v]));
            CHECK(want != NULL);
            free(want);
        }
    }
    printf("    decode launches with 1, 3, 6 sequences: %d, %d, %d; max |logit - cpu alone| %.3g\n", launches[0], launches[1], launches[2], mx);
    /* 3 and 6 sequences: the same launches; one sequence may have one fewer a layer (the
     * precise mode fuses gate, up and the GLU for a single row only) */
    const int L = infer_model_config(m)->n_layer;
    CHECK_MSG(launches[0] > 0 && launches[2] == launches[1] && launches[1] >= launches[0] && launches[1] <= launches[0] + L,
              "launches: %d, %d, %d (%d layers)", launches[0], launches[1], launches[2], L);
    CHECK_MSG(mx <= 2e-3, "batched decode differs from each sequence alone by %g", mx);
    infer_session_free(s);
    free(got);
    infer_model_free(m);
}

/* A decode step of 9-16 sequences on k_mmv (INFER_CUDA_MMV=1) takes the fused decode path of
 * a step of 1-8 -- the norm writing q, k and v's int8 codes, q, k and v in one launch, the
 * attention quantizing for the output projection, the GLU quantizing for the down projection
 * -- and doing rope_kv_store's work in its stores: so 12 sequences cost the launches of 6
 * (on the int8 tiles, more); and each sequence's
 * logits are its own alone on the CPU's fast path (the golden llama Q4_0: its output matrix
 * Q6_K or Q4_0, both k_mmv's) */
static void test_gpu_mmv_launches(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    const char *path = SHARED "/golden/llama/model-Q4_0.gguf";
    if (!file_exists(path)) SKIP("../shared/golden/llama not found");
    infer_model *m = load_model(path, 0);
    if (!m) return;
    enum { S = 12, NP = 4, NG = 3 };
    const int V = infer_model_config(m)->n_vocab, L = infer_model_config(m)->n_layer;
    int32_t ids[S][NP + NG];
    for (int i = 0; i < S; i++)
        for (int t = 0; t < NP + NG; t++) ids[i][t] = (t * 37 + i * 13 + 5) % V;
    infer_session_params sp = infer_session_default_params();
    sp.backend = k; sp.precise = 0; sp.n_seq_max = S; sp.n_ctx = S * 32;
    infer_session *s = NULL;
    infer_error err;
    float *got = malloc(sizeof(float) * (size_t)V * S);
    int32_t seq[S];
    const int old_mmv = infer_cuda_mmv_force(0, 0);
    if (!got || infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); goto done; }
    seq[0] = 0;
    for (int i = 1; i < S; i++) CHECK(infer_seq_add(s, &seq[i], &err) == INFER_OK);
    for (int i = 0; i < S; i++) {
        const infer_batch_item it = { seq[i], ids[i], NP, NULL, 0, NULL };
        CHECK_MSG(infer_eval_batch(s, &it, 1, &err) == INFER_OK, "%s", err.msg);
    }
    /* step 0: 6 sequences (the int8 matvec); 1: all 12 on k_mmv; 2: all 12 on the tiles */
    int launches[NG] = { 0 }, graph, past[S];
    const int n_of[NG] = { 6, S, S }, mmv_of[NG] = { 0, 1, 0 };
    for (int i = 0; i < S; i++) past[i] = NP;
    double worst = 0;
    for (int g = 0; g < NG; g++) {
        infer_batch_item it[S];
        for (int i = 0; i < n_of[g]; i++) {
            it[i] = (infer_batch_item){ seq[i], &ids[i][past[i]], 1, got + (size_t)i * V, 0, NULL };
            past[i]++;
        }
        infer_cuda_mmv_force(mmv_of[g], 0);
        const long before = infer_cuda_mmv_count();
        CHECK_MSG(infer_eval_batch(s, it, n_of[g], &err) == INFER_OK, "%s", err.msg);
        infer_session_step_info(s, &launches[g], &graph);
        CHECK_MSG((infer_cuda_mmv_count() > before) == mmv_of[g], "step %d: %ld k_mmv launches", g, infer_cuda_mmv_count() - before);
        for (int i = 0; g == 1 && i < n_of[g]; i++) {
            float *want = eval_logits(m, ids[i], past[i], past[i], (run_opts){ .precise = 0, .n_ctx = 32 });
            double mx = 0, big = 0;
            for (int v = 0; want && v < V; v++) {
                mx = fmax(mx, fabs((double)want[(size_t)(past[i] - 1) * V + v] - got[(size_t)i * V + v]));
                big = fmax(big, fabs(want[(size_t)(past[i] - 1) * V + v]));
            }
            CHECK(want != NULL);
            /* the bound of gpu_seq_batch's fast passes: an activation rounding to the next
             * int8 code after a sum in another order moves a logit by ~1% of the largest */
            CHECK_MSG(mx <= 4e-2 * fmax(big, 1.0), "sequence %d of 12 on k_mmv differs by %g from the CPU's fast path alone", i, mx);
            worst = fmax(worst, mx / fmax(big, 1.0));
            free(want);
        }
    }
    printf("    decode launches: 6 sequences %d, 12 on k_mmv %d, 12 on the int8 tiles %d (%d layers); k_mmv's logits within %.2g of the CPU alone\n",
           launches[0], launches[1], launches[2], L, worst);
    CHECK_MSG(launches[0] > 0 && launches[1] == launches[0] && launches[2] > launches[1], "launches: %d, %d, %d (%d layers)", launches[0], launches[1],
              launches[2], L);
done:
    infer_cuda_mmv_force(old_mmv, 0);
    if (s) infer_session_free(s);
    free(got);
    infer_model_free(m);
#endif
}

/* the golden llama models on the GPU, every weight type the file set has, exact and fast,
 * the prompt batched and token by token (decode steps as graphs): the CPU's tolerances. The
 * quantized types' batched prompt once more with the BF16 GEMM's switch lowered to 17 rows,
 * so the 24-token prompt takes the path long prompts take (infer_cuda_gemm_q). */
static void test_gpu_golden_llama(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    golden_backend = k;
    const char *v[] = { "Q4_0", "Q6_K", "MXFP4", "F32", "Q8_0", "Q4_K", "Q4_K_M", "NVFP4" };
    static const golden_run exact[] = { { 1, 512, 1, 1 } }, fast[] = { { 0, 512, 1, 1 }, { 0, 1, 1, 1 } };
    const int emulated = !strcmp(k->name, "cuda-emu");     /* the emulator is slow: three of the types */
    for (int i = 0; i < (emulated ? 3 : 8); i++) {
        golden_check("llama", v[i], NULL, exact, N_RUNS(exact), 0);
        golden_check("llama", v[i], NULL, fast, N_RUNS(fast), 0);
#ifdef INFER_CUDA
        if (strcmp(v[i], "F32")) {
            const int old = infer_cuda_qgemm_force(17, 0);
            if (old != -2) {
                golden_label = " (BF16 GEMM)";
                golden_check("llama", v[i], NULL, fast, 1, 0);
                golden_label = "";
                infer_cuda_qgemm_force(old, 0);
            }
        }
#endif
    }
    golden_backend = NULL;
}

/* The fast mode on the GPU against the golden references of every other family (llama has
 * the test above, deepseek4 gpu_deepseek4_golden): the short prompt batched and token by
 * token (the decode kernels), under the CPU fast path's rule -- a mean |diff| within 1.5x the
 * reference engine's own + 0.01. Under the emulator the batched run only. The batched prompt
 * once more with the DeltaNet layers in chunks (qwen35, qwen35moe; the 24 tokens are below
 * the chunks' switch) and with the BF16 GEMM (Q8_0, TQ2_0). A model or reference not on
 * this machine is passed over; none at all skips. */
static void test_gpu_golden_families(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    static const struct { const char *family, *variant; } cases[] = {
        { "llama3_ropescale", "F32" }, { "qwen3", "F32" }, { "qwen3moe", "F32" }, { "qwen3moe", "MXFP4_MOE" }, { "qwen35", "Q8_0" },
        { "qwen35", "Q4_K" }, { "qwen35moe", "F32" }, { "qwen35moe", "MXFP4_MOE" }, { "bitnet", "TQ2_0" }, { "bitnet", "TQ1_0" } };
    static const golden_run fast[] = { { 0, 512, 1, 1 }, { 0, 1, 1, 1 } };
    const int emulated = !strcmp(k->name, "cuda-emu");
    int ran = 0;
    golden_backend = k;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *f = cases[i].family, *v = cases[i].variant;
        char model[512], ref[512], theirs[512];
        snprintf(model, sizeof model, SHARED "/golden/%s/model-%s.gguf", f, v);
        snprintf(ref, sizeof ref, SHARED "/golden/%s/logits/%s.short.%s", f, v, strcmp(v, "F32") ? "deq.hp.bin" : "hp.bin");
        snprintf(theirs, sizeof theirs, SHARED "/golden/%s/logits/%s.short.bin", f, v);
        if (!file_exists(model) || !file_exists(ref) || !file_exists(theirs)) continue;
        golden_check(f, v, NULL, fast, emulated ? 1 : N_RUNS(fast), 1);
#ifdef INFER_CUDA
        if (!strncmp(f, "qwen35", 6)) {                       /* the 24-token prompt's DeltaNet layers in chunks, as longer prompts run */
            const int old = infer_cuda_dn_chunks_force(2);
            golden_label = " (DeltaNet chunks)";
            golden_check(f, v, NULL, fast, 1, 1);
            golden_label = "";
            infer_cuda_dn_chunks_force(old);
        }
        if (!strcmp(v, "Q8_0") || !strcmp(v, "TQ2_0")) {       /* the batched prompt on the BF16 GEMM, as long prompts run */
            const int old = infer_cuda_qgemm_force(17, 0);
            if (old != -2) {
                golden_label = " (BF16 GEMM)";
                golden_check(f, v, NULL, fast, 1, 1);
                golden_label = "";
                infer_cuda_qgemm_force(old, 0);
            }
        }
#endif
        ran++;
    }
    golden_backend = NULL;
    if (!ran) SKIP("../shared/golden not found");
}

/* the golden greedy story on the GPU (F16 KV cache, as the default CLI runs it) */
static void test_gpu_stories_greedy(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    char *md = slurp(SHARED "/models/GOLDEN_stories260K.md", NULL);
    if (!md || !file_exists(SHARED "/models/stories260K.gguf")) { free(md); SKIP("../shared/models not found"); }
    int32_t want[300];
    const int n = golden_ids(md, "greedy from BOS", want, 300);
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, SHARED "/models/stories260K.gguf", NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); free(md); return; }
    infer_session_params sp = infer_session_default_params();
    sp.backend = k;
    infer_session *s;
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); infer_model_free(m); free(md); return; }
    float logits[512];
    int32_t tok = 1;
    int same = 0;
    for (int i = 0; i < n; i++) {
        if (infer_eval(s, &tok, 1, logits, 0, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); break; }
        int best = 0;
        for (int v = 1; v < 512; v++) if (logits[v] > logits[best]) best = v;
        if (best != want[i]) break;
        same++;
        tok = best;
    }
    CHECK_MSG(same == n, "greedy tokens agree for %d of %d", same, n);
    infer_session_free(s);
    infer_model_free(m);
    free(md);
}

/* The server on the GPU: ./infer-cuda --server --gpu (./infer-cuda-emu under the emulator,
 * the kernels then run on the CPU) answers a greedy completion, whole and streamed, with the
 * CPU command line's text; /metrics answers too. */
static void test_gpu_server(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const char *program = !strcmp(k->name, "cuda-emu") ? "./infer-cuda-emu" : "./infer-cuda";
    if (!file_exists(program)) SKIP("%s not built (make cuda / make cuda-emu)", program);
    if (!file_exists(SRV_MODEL) || !file_exists("./infer")) SKIP("../shared/models or ./infer not found");
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "%s --server -m /nonexistent/x.gguf 2>&1", program);
    run_cmd(cmd, out, sizeof out);
    if (strstr(out, "built without the HTTP server")) SKIP("%s was built without the server (libmicrohttpd-dev)", program);
    char want[1024];
    CHECK(cli_greedy(SRV_MODEL, "Once upon a time", 8, want, sizeof want));
    srv_proc p;
    if (!server_start_with(&p, program, "-m " SRV_MODEL " --gpu -np 2 -t 1")) { CHECK(0); return; }
    for (int stream = 0; stream < 2; stream++) {
        srv_answer a;
        if (srv_complete(p.port, 0, stream, "{\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":0}", &a))
            CHECK_MSG(!strcmp(a.text, want) && (stream || a.completion_tokens == 8), "stream %d: [%s] (%ld tokens), the CPU: [%s]", stream, a.text, a.completion_tokens, want);
    }
    CHECK(srv_metric(p.port, "infer_requests_total") >= 2);
    CHECK(server_stop(&p) == 0);
}

/* ---- the int8 tiles: the fast mode's prompt matmuls for the quantized types ---- */
#ifdef INFER_CUDA
int infer_cuda_int8_host(infer_type t, const void *row, int K, float *dst);
int infer_cuda_quant_act(void *ctx, infer_type t, const float *x, int rows, int K, int8_t *q, float *d, int32_t *s);
int infer_cuda_tiles_force_splits(int splits);
void infer_cuda_tiles_last(void *ctx, int *bm, int *splits);
int infer_cuda_half_gemm_force(int mode);
int infer_cuda_half_gemm_last(void *ctx);
static int int8_float_same(float a, float b) { return (a != a && b != b) || memcmp(&a, &b, 4) == 0; }   /* NaNs alike */
#endif

/* the weight types with int8 tiles, the priority ones first */
static const infer_type int8_types[] = {
    INFER_TYPE_Q8_0, INFER_TYPE_Q4_0, INFER_TYPE_Q6_K, INFER_TYPE_Q4_K, INFER_TYPE_Q5_K, INFER_TYPE_Q5_0, INFER_TYPE_Q4_1, INFER_TYPE_Q5_1,
    INFER_TYPE_Q2_K, INFER_TYPE_Q3_K, INFER_TYPE_IQ4_NL, INFER_TYPE_IQ4_XS, INFER_TYPE_MXFP4, INFER_TYPE_NVFP4, INFER_TYPE_TQ1_0,
    INFER_TYPE_TQ2_0, INFER_TYPE_Q1_0, INFER_TYPE_Q2_0, INFER_TYPE_I2_S,
};
#define N_INT8_TYPES ((int)(sizeof int8_types / sizeof int8_types[0]))

/* random weights in [-1, 1], [E][N][K] quantized to t (I2_S: *scale is its tensor scale) */
static uint8_t *int8_weights(infer__rng *rng, infer_type t, int K, int N, int E, size_t *bytes, float *scale) {
    const int64_t n = (int64_t)K * N * E;
    *bytes = infer_type_row_size(t, K) * (size_t)N * (size_t)E + (t == INFER_TYPE_I2_S ? 32 : 0);
    float *f = malloc(sizeof(float) * (size_t)n);
    uint8_t *q = calloc(1, *bytes);
    for (int64_t i = 0; i < n; i++) f[i] = (float)(infer__rng_uniform(rng) * 2 - 1);
    *scale = t == INFER_TYPE_Q8_0 ? 0.5f : 1.0f;         /* a tensor scale, applied in the tiles' stores */
    if (t == INFER_TYPE_I2_S) { infer__quant_i2_s(f, q, n); *scale = infer__i2_s_scale(q, n); }
    else infer__type(t)->quant(f, q, n);
    free(f);
    return q;
}

#ifdef INFER_CUDA
/* int8_weights' random [K -> N] weight of type t on backend k: the tensor (its data NULL when
 * the device memory could not be had or filled), *host the bytes it was made from (to free) */
static infer_tensor gpu_weights(const infer_kernels *k, void *g, infer__rng *rng, infer_type t, int K, int N, uint8_t **host) {
    size_t bytes;
    float scale;
    *host = int8_weights(rng, t, K, N, 1, &bytes, &scale);
    void *d = k->alloc(g, bytes);
    if (d && k->upload(g, d, *host, bytes) != INFER_OK) { k->free(g, d); d = NULL; }
    return (infer_tensor){ "w", t, 2, { K, N, 1, 1 }, d, bytes, scale };
}
#endif

/* the unpackers of the int8 tiles (d q + m per weight) give the CPU's dequantized values bit
 * for bit, for every type that has them (on the host: a CUDA build, no device) */
static void test_cuda_int8_decoders(void) {
#ifndef INFER_CUDA
    SKIP("not a CUDA build (make cuda; then ./tests-cuda cuda_)");
#else
    infer__rng rng;
    infer__rng_seed(&rng, 7);
    const int K = 512, N = 3;
    float ref[512], got[512];
    for (int i = 0; i < N_INT8_TYPES; i++) {
        const infer_type t = int8_types[i];
        size_t bytes;
        float scale;
        uint8_t *q = int8_weights(&rng, t, K, N, 1, &bytes, &scale);
        infer_tensor w = { "w", t, 2, { K, N, 1, 1 }, q, bytes, 1.0f };
        for (int r = 0; r < N; r++) {
            infer__dequant_row(&w, r, ref);
            if (!infer_cuda_int8_host(t, q + (size_t)r * infer_type_row_size(t, K), K, got)) { CHECK_MSG(0, "%s: no int8 unpacker", infer_type_name(t)); break; }
            int bad = 0;
            for (int k = 0; k < K; k++) bad += memcmp(&ref[k], &got[k], 4) != 0;
            CHECK_MSG(bad == 0, "%s row %d: %d of %d values differ", infer_type_name(t), r, bad, K);
        }
        free(q);
    }
    CHECK(!infer_cuda_int8_host(INFER_TYPE_F16, ref, K, got));     /* the float types keep the TF32 tiles */
    printf("    %d types unpacked to int8 codes and scales, every value the CPU's\n", N_INT8_TYPES);
#endif
}

/* The activation quantizer of the int8 tiles gives the CPU's quantizers' bytes: Q8_0 (for
 * 32-block types: K = 96, one partial warp's span) and Q8_K (256-blocks: Q4_K; I2_S with
 * K = 640, whose last block has 128 values and is padded with zeros on the CPU). Rows: random;
 * exact ties (x / d = k + 1/2: roundf goes away from zero, Q8_K's rounding to even); a zero
 * block, an Inf (block 2; Q8_K: the first 256) and a NaN (block 1; Q8_K: the second 256); all
 * zeros; values whose f16 scale is subnormal; a large range where the largest magnitude comes
 * twice with both signs (Q8_K takes the first one's sign). */
static void test_gpu_int8_quant(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    void *ctx = NULL;
    infer_error err;
    if (k->ctx_create(&ctx, 1, 0, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); return; }
    static const struct { infer_type t; int K, q8k; } cases[3] = { { INFER_TYPE_Q8_0, 96, 0 }, { INFER_TYPE_Q4_K, 512, 1 }, { INFER_TYPE_I2_S, 640, 1 } };
    infer__rng rng;
    infer__rng_seed(&rng, 21);
    for (int ci = 0; ci < 3; ci++) {
        const int K = cases[ci].K, R = 6, nb = K / 32, Kp = cases[ci].q8k ? (K + 255) / 256 * 256 : K;
        float *x = calloc((size_t)R * Kp, sizeof(float)), *gd = malloc(sizeof(float) * (size_t)R * nb);
        int8_t *gq = malloc((size_t)R * K);
        int32_t *gs = malloc(sizeof(int32_t) * (size_t)R * nb);
        for (int r = 0; r < R; r++)
            for (int j = 0; j < K; j++) {
                float *v = &x[(size_t)r * Kp + j];
                const double u = infer__rng_uniform(&rng) * 2 - 1;
                if (r == 0) *v = (float)u;
                else if (r == 1) *v = j % 32 == 0 ? (cases[ci].q8k ? (j % 256 == 0 ? -127.0f : 127.0f) : 127.0f) : (j % 2 ? -1 : 1) * (float)(j % 16 + 0.5);
                else if (r == 2) *v = j == (cases[ci].q8k ? 300 : 37) ? NAN : j == 73 ? -INFINITY : j < 32 ? 0.0f : (float)u;
                else if (r == 3) *v = 0.0f;
                else if (r == 4) *v = (float)(u * 1e-5);
                else *v = j == 3 ? -900.0f : j == 10 ? 900.0f : (float)(u * 899);
            }
        const size_t xb = sizeof(float) * (size_t)R * K;
        float *xk = malloc(xb);
        for (int r = 0; r < R; r++) memcpy(xk + (size_t)r * K, x + (size_t)r * Kp, sizeof(float) * (size_t)K);
        void *dx = k->alloc(ctx, xb), *dq = k->alloc(ctx, (size_t)R * K), *dd = k->alloc(ctx, sizeof(float) * (size_t)R * nb), *ds = k->alloc(ctx, sizeof(int32_t) * (size_t)R * nb);
        CHECK(dx && dq && dd && ds && k->upload(ctx, dx, xk, xb) == INFER_OK);
        CHECK(infer_cuda_quant_act(ctx, cases[ci].t, (const float *)dx, R, K, (int8_t *)dq, (float *)dd, (int32_t *)ds));
        CHECK(k->download(ctx, gq, dq, (size_t)R * K) == INFER_OK && k->download(ctx, gd, dd, sizeof(float) * (size_t)R * nb) == INFER_OK &&
              k->download(ctx, gs, ds, sizeof(int32_t) * (size_t)R * nb) == INFER_OK);
        int bad_q = 0, bad_d = 0, bad_s = 0;
        for (int r = 0; r < R; r++) {
            infer_block_q8_0 b0[32];
            infer_block_q8_k bk[4];
            if (cases[ci].q8k) infer__quant_q8_k(x + (size_t)r * Kp, bk, Kp);
            else infer__quant_q8_0(x + (size_t)r * Kp, b0, K);
            for (int b = 0; b < nb; b++) {
                const int8_t *rq = cases[ci].q8k ? bk[b / 8].qs + 32 * (b % 8) : b0[b].qs;
                const float rd = cases[ci].q8k ? bk[b / 8].d : infer__fp16_to_fp32(b0[b].d);
                int lo = 0, hi = 0;
                for (int e = 0; e < 16; e++) { lo += rq[e]; hi += rq[16 + e]; }
                for (int e = 0; e < 32; e++) bad_q += gq[(size_t)r * K + 32 * b + 4 * (2 * (e / 4 % 4) + e / 16) + e % 4] != rq[e];   /* word e / 4 in slot 2 (i % 4) + i / 4 */
                bad_d += !int8_float_same(gd[r * nb + b], rd);
                const int32_t s = gs[r * nb + b];
                bad_s += (int16_t)(s & 0xFFFF) != lo || (s >> 16) != hi;
            }
        }
        CHECK_MSG(bad_q == 0 && bad_d == 0 && bad_s == 0, "%s activations, K=%d: %d codes, %d scales, %d sums differ from the CPU's", infer_type_name(cases[ci].t), K, bad_q,
                  bad_d, bad_s);
        printf("    %s activations (%s), K=%d, %d rows: %d codes, %d scales, %d half-block sums differ from the CPU's\n", infer_type_name(cases[ci].t),
               cases[ci].q8k ? "q8_K" : "q8_0", K, R, bad_q, bad_d, bad_s);
        k->free(ctx, dx); k->free(ctx, dq); k->free(ctx, dd); k->free(ctx, ds);
        free(x); free(xk); free(gd); free(gq); free(gs);
    }
    CHECK(!infer_cuda_quant_act(ctx, INFER_TYPE_F32, NULL, 1, 32, NULL, NULL, NULL));
    k->ctx_free(ctx);
#endif
}

/* max |a - b| / max |a| (the diff harness's max_rel); a NaN on one side only is infinitely far */
static double int8_rel(const float *a, const float *b, size_t n) {
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) != isnan(b[i])) return INFINITY;
        if (!isnan(a[i])) { e = fmax(e, fabs((double)a[i] - b[i])); m = fmax(m, fabs(a[i])); }
    }
    return m > 0 ? e / m : e;
}

/* The fast mode's prompt matmuls on the GPU, every type with int8 tiles: against the CPU's
 * fast path (the same int8 codes and scales, sums in another order) within INT8_TIGHT, and
 * against exact maths (the CPU's precise path) within the fast bound, INFER__TOL_FAST. Rows
 * on both sides of the decode/tile switch (9, 16, 17) and past one tile (64, 100); 72
 * columns (a tile and a piece); K of 5 blocks for the 32-block types (a step of 4 blocks and
 * a partial one), 512 for the 256-block ones, 384 for I2_S (a half Q8_K block at the end);
 * out = W x and out += W x. INT8_TIGHT: f32 sums of these lengths in another order differ
 * by a few 1e-7 of the output's scale, while one activation code off by one (a rounding
 * rule or a scale not the CPU's) moves a result by a few 1e-4 of it. */
#define INT8_TIGHT 1e-5
static void test_gpu_int8_matmul(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    const int old_qg = infer_cuda_qgemm_force(INT_MAX, 0); /* 64 and 100 rows on the int8 tiles, not the BF16 GEMM (gpu_qgemm has that) */
#endif
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cf = NULL, *cp = NULL, *g = NULL;
    infer_error err;
    if (cpu->ctx_create(&cf, 2, 0, &err) != INFER_OK || cpu->ctx_create(&cp, 2, 1, &err) != INFER_OK || k->ctx_create(&g, 1, 0, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    infer__rng rng;
    infer__rng_seed(&rng, 5);
    const int rows_list[5] = { 9, 16, 17, 64, 100 }, N = 72, RMAX = 100;
    for (int ti = 0; ti < N_INT8_TYPES; ti++) {
        const infer_type t = int8_types[ti];
        const int blck = (int)infer_type_block(t);
        const int K = t == INFER_TYPE_I2_S ? 384 : blck == 256 ? 512 : blck <= 32 ? 160 : 3 * blck;
        size_t bytes;
        float scale;
        uint8_t *q = int8_weights(&rng, t, K, N, 1, &bytes, &scale);
        infer_tensor tc = { "w", t, 2, { K, N, 1, 1 }, q, bytes, scale }, tg = tc;
        const size_t xn = (size_t)RMAX * K, on = (size_t)RMAX * N;
        float *x = malloc(sizeof(float) * xn), *of = malloc(sizeof(float) * on), *op = malloc(sizeof(float) * on), *og = malloc(sizeof(float) * on);
        float *y = malloc(sizeof(float) * on);
        void *gw = k->alloc(g, bytes), *gx = k->alloc(g, sizeof(float) * xn), *go = k->alloc(g, sizeof(float) * on);
        tg.data = gw;
        if (!gw || !gx || !go || k->upload(g, gw, q, bytes) != INFER_OK) { CHECK_MSG(0, "%s: device memory", infer_type_name(t)); goto next; }
        double worst_fast = 0, worst_exact = 0, worst_add = 0;
        for (int ri = 0; ri < 5; ri++) {
            const int rows = rows_list[ri];
            const size_t n = (size_t)rows * N;
            for (size_t i = 0; i < (size_t)rows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            for (size_t i = 0; i < n; i++) y[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            cpu->matmul(cf, of, &tc, x, rows);
            cpu->matmul(cp, op, &tc, x, rows);
            CHECK(k->upload(g, gx, x, sizeof(float) * (size_t)rows * K) == INFER_OK);
            k->matmul(g, (float *)go, &tg, (const float *)gx, rows);
            CHECK_MSG(k->download(g, og, go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
            const double ef = int8_rel(of, og, n), ex = int8_rel(op, og, n);
            CHECK_MSG(ef <= INT8_TIGHT, "%s rows=%d K=%d: max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, K, ef, INT8_TIGHT);
            CHECK_MSG(ex <= INFER__TOL_FAST, "%s rows=%d K=%d: max_rel %.3g against exact maths (tol %g)", infer_type_name(t), rows, K, ex, INFER__TOL_FAST);
            /* y += W x */
            CHECK(k->upload(g, go, y, sizeof(float) * n) == INFER_OK);
            k->matmul_add(g, (float *)go, &tg, (const float *)gx, rows);
            CHECK(k->download(g, og, go, sizeof(float) * n) == INFER_OK);
            for (size_t i = 0; i < n; i++) of[i] += y[i];
            const double ea = int8_rel(of, og, n);
            CHECK_MSG(ea <= INT8_TIGHT, "%s rows=%d K=%d: matmul_add, max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, K, ea, INT8_TIGHT);
            worst_fast = fmax(worst_fast, ef); worst_exact = fmax(worst_exact, ex); worst_add = fmax(worst_add, ea);
        }
        printf("    %-7s K=%-4d max_rel against the CPU's fast path %.2e (matmul_add %.2e), against exact maths %.2e\n", infer_type_name(t), K, worst_fast, worst_add,
               worst_exact);
    next:
        if (gw) k->free(g, gw);
        if (gx) k->free(g, gx);
        if (go) k->free(g, go);
        free(q); free(x); free(of); free(op); free(og); free(y);
    }
done:
#ifdef INFER_CUDA
    if (old_qg != -2) infer_cuda_qgemm_force(old_qg, 0);
#endif
    if (cf) cpu->ctx_free(cf);
    if (cp) cpu->ctx_free(cp);
    if (g) k->ctx_free(g);
}

/* 9-64 rows (a batch of decoding sequences) of quantized weights on k_mmv, the tensor-core
 * matvec (INFER_CUDA_MMV=64): every type with int8 tiles, a short K (the warps' shares of K
 * partly empty) and a long one (several groups a warp, the last one partial), 9, 13 and 16
 * rows (one block of 16); with the short K only, 1 and 5 (INFER_CUDA_MMV_MIN=1, for the
 * types with a fast matvec) and 33 and 64 (blocks of 16 side by side); N = 72 (the last block's columns partly past N), one and two n-tiles a warp: out =
 * W x and out += W x against the CPU's fast path within INT8_TIGHT and exact maths within
 * the fast bound, the two n-tile forms the same bits (each column's sums do not depend on
 * its neighbours), a repeat the same bits, and the GLU (gate and up in one launch) against
 * the CPU's GLU. Each run reports that it ran on k_mmv. */
static void test_gpu_mmv(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cf = NULL, *cp = NULL, *g = NULL;
    infer_error err;
    const int old_on = infer_cuda_mmv_force(64, 0), old_min = infer_cuda_mmv_min_force(1);
    const int old_qg = infer_cuda_qgemm_force(INT_MAX, 0);
    const size_t old_bc = infer_cuda_bf16_cache_force(0);
    if (cpu->ctx_create(&cf, 2, 0, &err) != INFER_OK || cpu->ctx_create(&cp, 2, 1, &err) != INFER_OK || k->ctx_create(&g, 1, 0, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    infer__rng rng;
    infer__rng_seed(&rng, 31);
    static const int rows_list[7] = { 9, 13, 16, 1, 5, 33, 64 };   /* 1, 5: INFER_CUDA_MMV_MIN=1; 33, 64: blocks of 16 rows side by side (the short K) */
    const int N = 72, RMAX = 64;
    int cases = 0;
    double worst_fast = 0, worst_exact = 0, worst_glu = 0;
    for (int ti = 0; ti < N_INT8_TYPES; ti++) {
        const infer_type t = int8_types[ti];
        const int blck = (int)infer_type_block(t);
        for (int ki = 0; ki < 2; ki++) {
            const int K = ki ? 2304 : t == INFER_TYPE_I2_S ? 384 : blck == 256 ? 512 : blck <= 32 ? 160 : 3 * blck;
            size_t bytes;
            float sc[2];
            uint8_t *wq[2] = { int8_weights(&rng, t, K, N, 1, &bytes, &sc[0]), NULL };
            wq[1] = int8_weights(&rng, t, K, N, 1, &bytes, &sc[1]);
            infer_tensor tc[2] = { { "wg", t, 2, { K, N, 1, 1 }, wq[0], bytes, sc[0] }, { "wu", t, 2, { K, N, 1, 1 }, wq[1], bytes, sc[1] } }, tg[2] = { tc[0], tc[1] };
            const size_t xn = (size_t)RMAX * K, on = (size_t)RMAX * N;
            float *x = malloc(sizeof(float) * xn), *y = malloc(sizeof(float) * on), *of = malloc(sizeof(float) * on), *op = malloc(sizeof(float) * on);
            float *og[2] = { malloc(sizeof(float) * on), malloc(sizeof(float) * on) }, *o2 = malloc(sizeof(float) * on);
            void *gw[2] = { k->alloc(g, bytes), k->alloc(g, bytes) }, *gx = k->alloc(g, sizeof(float) * xn), *go = k->alloc(g, sizeof(float) * on);
            if (!gw[0] || !gw[1] || !gx || !go || k->upload(g, gw[0], wq[0], bytes) != INFER_OK || k->upload(g, gw[1], wq[1], bytes) != INFER_OK) {
                CHECK_MSG(0, "%s: device memory", infer_type_name(t));
                goto next;
            }
            tg[0].data = gw[0]; tg[1].data = gw[1];
            for (int ri = 0; ri < 7; ri++) {
                const int rows = rows_list[ri];
                const size_t n = (size_t)rows * N;
                if (ki && ri >= 3) break;                  /* (the long K: 9, 13 and 16 rows) */
                if (rows <= 8 && infer_cuda_mmv_xf_host(t) != 1) continue;   /* (fewer than 9 rows only where the type has a fast matvec) */
                for (size_t i = 0; i < (size_t)rows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                for (size_t i = 0; i < n; i++) y[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                CHECK(k->upload(g, gx, x, sizeof(float) * (size_t)rows * K) == INFER_OK);
                cpu->matmul(cf, of, &tc[0], x, rows);
                cpu->matmul(cp, op, &tc[0], x, rows);
                for (int nt = 1; nt <= 2; nt++) {
                    infer_cuda_mmv_force(64, nt);
                    int bm = 0, splits = 0;
                    k->matmul(g, (float *)go, &tg[0], (const float *)gx, rows);
                    CHECK_MSG(k->download(g, og[nt - 1], go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
                    infer_cuda_tiles_last(g, &bm, &splits);
                    CHECK_MSG(bm == -2 && splits == nt, "%s rows=%d: ran as bm=%d splits=%d, not on k_mmv with %d n-tiles", infer_type_name(t), rows, bm, splits, nt);
                }
                CHECK_MSG(!memcmp(og[0], og[1], sizeof(float) * n), "%s K=%d rows=%d: one and two n-tiles a warp differ", infer_type_name(t), K, rows);
                k->matmul(g, (float *)go, &tg[0], (const float *)gx, rows);
                CHECK(k->download(g, o2, go, sizeof(float) * n) == INFER_OK);
                CHECK_MSG(!memcmp(og[1], o2, sizeof(float) * n), "%s K=%d rows=%d: two runs differ", infer_type_name(t), K, rows);
                const double ef = int8_rel(of, og[1], n), ex = int8_rel(op, og[1], n);
                CHECK_MSG(ef <= INT8_TIGHT, "%s rows=%d K=%d: max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, K, ef, INT8_TIGHT);
                CHECK_MSG(ex <= INFER__TOL_FAST, "%s rows=%d K=%d: max_rel %.3g against exact maths (tol %g)", infer_type_name(t), rows, K, ex, INFER__TOL_FAST);
                /* y += W x */
                CHECK(k->upload(g, go, y, sizeof(float) * n) == INFER_OK);
                k->matmul_add(g, (float *)go, &tg[0], (const float *)gx, rows);
                CHECK(k->download(g, o2, go, sizeof(float) * n) == INFER_OK);
                for (size_t i = 0; i < n; i++) of[i] += y[i];
                const double ea = int8_rel(of, o2, n);
                CHECK_MSG(ea <= INT8_TIGHT, "%s rows=%d K=%d: matmul_add, max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, K, ea, INT8_TIGHT);
                /* act(Wg x) * (Wu x) */
                infer_cuda_mmv_force(64, 0);
                cpu->matmul(cf, of, &tc[0], x, rows);
                cpu->matmul(cf, op, &tc[1], x, rows);
                cpu->glu(cf, of, of, op, (int64_t)n, INFER_ACT_SILU, 0.0f);
                k->matmul_glu(g, (float *)go, &tg[0], &tg[1], (const float *)gx, rows, INFER_ACT_SILU, 0.0f);
                CHECK_MSG(k->download(g, o2, go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
                int bm = 0, splits = 0;
                infer_cuda_tiles_last(g, &bm, &splits);
                CHECK_MSG(bm == -2 && splits == 2, "%s rows=%d: the GLU ran as bm=%d splits=%d, not on k_mmv's GLU", infer_type_name(t), rows, bm, splits);
                const double eg = int8_rel(of, o2, n);
                CHECK_MSG(eg <= 4 * INT8_TIGHT, "%s rows=%d K=%d: GLU, max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, K, eg, 4 * INT8_TIGHT);
                worst_fast = fmax(worst_fast, fmax(ef, ea)); worst_exact = fmax(worst_exact, ex); worst_glu = fmax(worst_glu, eg);
                cases++;
            }
        next:
            for (int i = 0; i < 2; i++) { if (gw[i]) k->free(g, gw[i]); free(wq[i]); free(og[i]); }
            if (gx) k->free(g, gx);
            if (go) k->free(g, go);
            free(x); free(y); free(of); free(op); free(o2);
        }
    }
    printf("    %d (type, K, rows) cases: max_rel against the CPU's fast path %.2e (GLU %.2e), against exact maths %.2e\n", cases, worst_fast, worst_glu, worst_exact);
done:
    infer_cuda_mmv_force(old_on, 0);
    infer_cuda_mmv_min_force(old_min);
    if (old_qg != -2) infer_cuda_qgemm_force(old_qg, 0);
    infer_cuda_bf16_cache_force(old_bc);
    if (cf) cpu->ctx_free(cf);
    if (cp) cpu->ctx_free(cp);
    if (g) k->ctx_free(g);
#endif
}

/* The one-row decode matvec loads a thread's next two slices at once (mvq_block's U = 2, the
 * default) or one at a time (INFER_CUDA_MVQ_U=1). Both dot the same slices in the same
 * order, so the results are the same bits: for every type with a fast matvec (the int8
 * types, F16, BF16, F32), a short K (a block of fewer than 128 threads) and a long one (an
 * odd count of slices for most threads: the last pair half empty), plain, adding into y,
 * and the GLU; the first two also against the CPU's fast path (TQ1_0, Q1_0, Q2_0 and I2_S
 * have no int8 matvec: one row of them runs k_matvec in f32). */
static void test_gpu_mvq_pairs(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cf = NULL, *g = NULL;
    infer_error err;
    const int old_u = infer_cuda_mvq_u_force(2);
    if (cpu->ctx_create(&cf, 2, 0, &err) != INFER_OK || k->ctx_create(&g, 1, 0, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    infer__rng rng;
    infer__rng_seed(&rng, 23);
    static const infer_type floats[3] = { INFER_TYPE_F16, INFER_TYPE_BF16, INFER_TYPE_F32 };
    const int N = 6;
    int checked = 0;
    for (int ti = 0; ti < N_INT8_TYPES + 3; ti++) {
        const infer_type t = ti < N_INT8_TYPES ? int8_types[ti] : floats[ti - N_INT8_TYPES];
        if (t == INFER_TYPE_TQ1_0 || t == INFER_TYPE_Q1_0 || t == INFER_TYPE_Q2_0 || t == INFER_TYPE_I2_S) continue;   /* no k_mvq: k_matvec's f32 */
        const int blck = (int)infer_type_block(t), unit = t == INFER_TYPE_I2_S ? 384 : blck >= 32 ? blck : 8;
        for (int ki = 0; ki < 2; ki++) {
            const int K = unit * (ki ? (t == INFER_TYPE_I2_S ? 7 : unit >= 256 ? 13 : 301) : (t == INFER_TYPE_I2_S ? 1 : 5));
            size_t bytes;
            float scale;
            uint8_t *wq[2] = { int8_weights(&rng, t, K, N, 1, &bytes, &scale), NULL };
            float sc2;
            wq[1] = int8_weights(&rng, t, K, N, 1, &bytes, &sc2);
            float *x = malloc(sizeof(float) * K), *y = malloc(sizeof(float) * N), *ref = malloc(sizeof(float) * N), *ref2 = malloc(sizeof(float) * N);
            float got[2][3][6];
            void *gw[2] = { k->alloc(g, bytes), k->alloc(g, bytes) }, *gx = k->alloc(g, sizeof(float) * K), *go = k->alloc(g, sizeof(float) * N);
            for (int i = 0; i < K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            for (int i = 0; i < N; i++) y[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            infer_tensor tc[2] = { { "wg", t, 2, { K, N, 1, 1 }, wq[0], bytes, scale }, { "wu", t, 2, { K, N, 1, 1 }, wq[1], bytes, sc2 } }, tg[2] = { tc[0], tc[1] };
            if (!gw[0] || !gw[1] || !gx || !go || k->upload(g, gw[0], wq[0], bytes) != INFER_OK || k->upload(g, gw[1], wq[1], bytes) != INFER_OK ||
                k->upload(g, gx, x, sizeof(float) * K) != INFER_OK) {
                CHECK_MSG(0, "%s: device memory", infer_type_name(t));
                goto next;
            }
            tg[0].data = gw[0]; tg[1].data = gw[1];
            for (int u = 0; u < 2; u++) {
                infer_cuda_mvq_u_force(u ? 1 : 2);
                k->matmul(g, (float *)go, &tg[0], (const float *)gx, 1);
                CHECK(k->download(g, got[u][0], go, sizeof(float) * N) == INFER_OK);
                int bm = -1, splits = -1;
                infer_cuda_tiles_last(g, &bm, &splits);
                CHECK_MSG(bm == 0, "%s K=%d: one row ran on tiles of %d rows, not the matvec", infer_type_name(t), K, bm);
                CHECK(k->upload(g, go, y, sizeof(float) * N) == INFER_OK);
                k->matmul_add(g, (float *)go, &tg[0], (const float *)gx, 1);
                CHECK(k->download(g, got[u][1], go, sizeof(float) * N) == INFER_OK);
                k->matmul_glu(g, (float *)go, &tg[0], &tg[1], (const float *)gx, 1, INFER_ACT_SILU, 0.0f);
                CHECK_MSG(k->download(g, got[u][2], go, sizeof(float) * N) == INFER_OK, "%s", k->last_error(g));
            }
            CHECK_MSG(!memcmp(got[0], got[1], sizeof got[0]), "%s K=%d: two slices at once differ from one at a time", infer_type_name(t), K);
            cpu->matmul(cf, ref, &tc[0], x, 1);
            cpu->matmul(cf, ref2, &tc[1], x, 1);
            double worst = 0, big = 0;
            for (int i = 0; i < N; i++) {
                big = fmax(big, fabs(ref[i]));
                worst = fmax(worst, fabs((double)ref[i] - got[0][0][i]));
                worst = fmax(worst, fabs((double)ref[i] + y[i] - got[0][1][i]));
            }
            CHECK_MSG(worst <= INT8_TIGHT * big, "%s K=%d: %.3g from the CPU's fast path (largest |out| %.3g)", infer_type_name(t), K, worst, big);
            checked++;
        next:
            for (int i = 0; i < 2; i++) if (gw[i]) k->free(g, gw[i]);
            if (gx) k->free(g, gx);
            if (go) k->free(g, go);
            free(wq[0]); free(wq[1]); free(x); free(y); free(ref); free(ref2);
        }
    }
    printf("    %d (type, K) cases: two slices at once the same bits as one\n", checked);
done:
    infer_cuda_mvq_u_force(old_u);
    if (cf) cpu->ctx_free(cf);
    if (g) k->ctx_free(g);
#endif
}

/* rmsnorm_qkv_store with rope and the cache stores inside the q/k/v matvec (MvRopeStore) and
 * with rope_kv_store's own launch after it (INFER_CUDA_QKV_STORE=0): q, k, v, h and the
 * cache's pools the same bits either way -- the matvec's floats go through the same rope_cs
 * and rope_turn. F16 (the norm inside the matvec too), F32, Q4_0, Q8_0 and Q6_K weights
 * (int8 activations from the norm), 1, 3 and 8 rows (and 12 on k_mmv, INFER_CUDA_MMV=16,
 * for the int8 types) at scattered positions of a shuffled
 * block table, F32 and F16 caches, rope over a whole head and over its first 32 dims (YaRN
 * on), with the norm and without (x already normalised); and a NEOX rope, which the matvec
 * cannot pair, runs the two launches and says so. */
static void test_gpu_qkv_store(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    void *g = NULL;
    infer_error err;
    const int old = infer_cuda_qkv_store_force(1);
    if (k->ctx_create(&g, 1, 0, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); goto done; }
    if (!k->rmsnorm_qkv_store) { CHECK_MSG(0, "the CUDA table has no rmsnorm_qkv_store"); goto done; }
    infer__rng rng;
    infer__rng_seed(&rng, 41);
    enum { E = 256, NH = 4, NKV = 2, HD = 64, QD = NH * HD, KVD = NKV * HD, BS = 16, NB = 24, RMAX = 12 };
    static const infer_type types[5] = { INFER_TYPE_F16, INFER_TYPE_F32, INFER_TYPE_Q4_0, INFER_TYPE_Q8_0, INFER_TYPE_Q6_K };
    static const int rows_list[4] = { 1, 3, 8, 12 };
    int32_t table[NB], pos[RMAX] = { 0, 17, 100, 101, 350, 5, 64, 200, 201, 33, 300, 2 };
    for (int b = 0; b < NB; b++) table[b] = (b * 7 + 3) % NB;
    const size_t cache = (size_t)NB * BS * KVD;
    void *dt = k->alloc(g, sizeof table), *dp = k->alloc(g, sizeof pos), *dx = k->alloc(g, sizeof(float) * RMAX * E), *dn = k->alloc(g, sizeof(float) * E);
    void *dh = k->alloc(g, sizeof(float) * RMAX * E), *dq = k->alloc(g, sizeof(float) * RMAX * QD), *dk = k->alloc(g, sizeof(float) * RMAX * KVD);
    void *dv = k->alloc(g, sizeof(float) * RMAX * KVD), *kp = k->alloc(g, cache * 4), *vp = k->alloc(g, cache * 4);
    float *x = malloc(sizeof(float) * RMAX * E), *nw = malloc(sizeof(float) * E);
    for (int i = 0; i < RMAX * E; i++) x[i] = (float)(infer__rng_uniform(&rng) * 4 - 2);
    for (int i = 0; i < E; i++) nw[i] = (float)(0.5 + infer__rng_uniform(&rng));
    int cases = 0;
    if (!dt || !dp || !dx || !dn || !dh || !dq || !dk || !dv || !kp || !vp || k->upload(g, dt, table, sizeof table) != INFER_OK ||
        k->upload(g, dp, pos, sizeof pos) != INFER_OK || k->upload(g, dn, nw, sizeof(float) * E) != INFER_OK) {
        CHECK_MSG(0, "device memory");
        goto free_all;
    }
    for (int ti = 0; ti < 5; ti++) {
        const infer_type t = types[ti];
        uint8_t *wq[3];
        infer_tensor tw[3];
        const int ns[3] = { QD, KVD, KVD };
        int ok = 1;
        for (int i = 0; i < 3; i++) {
            tw[i] = gpu_weights(k, g, &rng, t, E, ns[i], &wq[i]);
            ok &= tw[i].data != NULL;
        }
        for (int c = 0; ok && c < 4 * 2 * 2 * 2 + 1; c++) {
            const int neox = c == 32, rows = neox ? 3 : rows_list[c % 4], f16 = neox ? 0 : c / 4 % 2, partial = neox ? 0 : c / 8 % 2, norm = neox ? 1 : c / 16;
            if (rows > 8 && (t == INFER_TYPE_F16 || t == INFER_TYPE_F32)) continue;   /* (k_mmv: the int8 types) */
            infer_cuda_mmv_force(rows > 8 ? 16 : 0, 0);
            const long mmv0 = infer_cuda_mmv_count();
            const infer_kv_view kv = { kp, vp, f16 ? INFER_TYPE_F16 : INFER_TYPE_F32, BS, (const int32_t *)dt, KVD, NULL };
            infer_rope r;
            memset(&r, 0, sizeof r);
            r.n_rot = partial ? 32 : HD; r.neox = neox; r.freq_base = 10000.0f; r.freq_scale = partial ? 0.25f : 1.0f; r.attn_factor = 1.0f;
            r.ext_factor = partial ? 1.0f : 0.0f; r.beta_fast = 32.0f; r.beta_slow = 1.0f; r.n_ctx_orig = 2048;
            float *got[2][6];
            const size_t sz[6] = { (size_t)rows * QD, (size_t)rows * KVD, (size_t)rows * KVD, (size_t)rows * E, cache * (f16 ? 2 : 4) / 4, cache * (f16 ? 2 : 4) / 4 };
            void *src[6] = { dq, dk, dv, dh, kp, vp };
            int ran[2] = { -1, -1 };
            for (int way = 0; way < 2; way++) {
                infer_cuda_qkv_store_force(!way);
                CHECK(k->upload(g, dx, x, sizeof(float) * rows * E) == INFER_OK);
                CHECK(k->upload(g, dh, x, sizeof(float) * rows * E) == INFER_OK);      /* (norm off: the input, in h) */
                k->zero(g, kp, cache * 4);
                k->zero(g, vp, cache * 4);
                float *outs[3] = { (float *)dq, (float *)dk, (float *)dv };
                const infer_tensor *ws[3] = { &tw[0], &tw[1], &tw[2] };
                k->rmsnorm_qkv_store(g, (float *)dh, norm ? (const float *)dx : (const float *)dh, norm ? (const float *)dn : NULL, rows, E, 1e-5f, outs, ws, &kv,
                                     (const int32_t *)dp, NH, NKV, HD, &r);
                ran[way] = infer_cuda_qkv_store_last(g);
                for (int i = 0; i < 6; i++) {
                    got[way][i] = malloc(sizeof(float) * sz[i]);
                    CHECK_MSG(k->download(g, got[way][i], src[i], sizeof(float) * sz[i]) == INFER_OK, "%s", k->last_error(g));
                }
            }
            CHECK_MSG((rows > 8) == (infer_cuda_mmv_count() > mmv0), "%s rows=%d: %ld k_mmv launches", infer_type_name(t), rows, infer_cuda_mmv_count() - mmv0);
            static const char *names[6] = { "q", "k", "v", "h", "the keys' cache", "the values' cache" };
            CHECK_MSG(ran[0] == !neox && ran[1] == 0, "%s case %d: ran in the matvec %d, then %d", infer_type_name(t), c, ran[0], ran[1]);
            for (int i = 0; i < 6; i++) {
                CHECK_MSG(!memcmp(got[0][i], got[1][i], sizeof(float) * sz[i]), "%s rows=%d %s cache, %s rope%s: %s differs with rope in the matvec",
                          infer_type_name(t), rows, f16 ? "F16" : "F32", partial ? "partial" : "full", norm ? ", norm" : "", names[i]);
                free(got[0][i]);
                free(got[1][i]);
            }
            cases++;
        }
        for (int i = 0; i < 3; i++) { if (tw[i].data) k->free(g, (void *)tw[i].data); free(wq[i]); }
    }
    printf("    %d cases: q, k, v, h and the cache the same bits with rope and the stores in the matvec\n", cases);
free_all:
    {
        void *bufs[10] = { dt, dp, dx, dn, dh, dq, dk, dv, kp, vp };
        for (int i = 0; i < 10; i++) if (bufs[i]) k->free(g, bufs[i]);
    }
    free(x); free(nw);
done:
    infer_cuda_qkv_store_force(old);
    infer_cuda_mmv_force(-1, 0);
    if (g) k->ctx_free(g);
#endif
}

/* The fast mode's one-row decode of float weights normalises x inside the matvec (k_mvq's
 * NM: no norm launch): rmsnorm_matmul_n (three weights, as q, k and v) and rmsnorm_ffn give
 * the same bits with it and without (INFER_CUDA_NORM_MV=0: k_rmsnorm, then the matvec) --
 * h, the outputs, the GLU's hidden row and x after the residual add -- for F16, BF16 and
 * F32 at widths 2048 (k_rmsnorm's 256 threads stood in for by the matvec's 128) and 520
 * (its 128 by 96); and each entry reports which way it ran. */
static void test_gpu_norm_mv(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    void *g = NULL;
    infer_error err;
    const int old = infer_cuda_norm_mv_force(1);
    if (k->ctx_create(&g, 1, 0, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); goto done; }
    infer__rng rng;
    infer__rng_seed(&rng, 29);
    static const infer_type types[3] = { INFER_TYPE_F16, INFER_TYPE_BF16, INFER_TYPE_F32 };
    static const int widths[2] = { 2048, 520 };
    for (int ti = 0; ti < 3; ti++)
        for (int wi = 0; wi < 2; wi++) {
            const infer_type t = types[ti];
            const int E = widths[wi], N[3] = { E, E / 4 + 8, 3 * E / 2 }, F = 3 * E / 2;   /* q, k, v; the FFN's hidden width */
            /* weights: q, k, v [E -> N_i]; gate, up [E -> F]; down [F -> E] */
            const int ks[6] = { E, E, E, E, E, F }, ns[6] = { N[0], N[1], N[2], F, F, E };
            uint8_t *wq[6];
            infer_tensor tw[6];
            int ok = 1;
            for (int i = 0; i < 6; i++) {
                tw[i] = gpu_weights(k, g, &rng, t, ks[i], ns[i], &wq[i]);
                ok &= tw[i].data != NULL;
            }
            float *x = malloc(sizeof(float) * E), *nw = malloc(sizeof(float) * E);
            for (int i = 0; i < E; i++) { x[i] = (float)(infer__rng_uniform(&rng) * 4 - 2); nw[i] = (float)(0.5 + infer__rng_uniform(&rng)); }
            const size_t bufs[7] = { E, E, E, (size_t)N[0], (size_t)N[1], (size_t)N[2], (size_t)F };   /* x, nw, h, q, k, v, hid */
            void *d[7];
            for (int i = 0; i < 7; i++) ok &= (d[i] = k->alloc(g, sizeof(float) * bufs[i])) != NULL;
            ok = ok && k->upload(g, d[1], nw, sizeof(float) * E) == INFER_OK;
            float *got[2][7];
            int ran[2][2] = { { -1, -1 }, { -1, -1 } };
            for (int way = 0; ok && way < 2; way++) {
                infer_cuda_norm_mv_force(!way);
                CHECK(k->upload(g, d[0], x, sizeof(float) * E) == INFER_OK);
                float *outs[3] = { (float *)d[3], (float *)d[4], (float *)d[5] };
                const infer_tensor *ws[3] = { &tw[0], &tw[1], &tw[2] };
                k->rmsnorm_matmul_n(g, (float *)d[2], (const float *)d[0], (const float *)d[1], 1, E, 1e-5f, 3, outs, ws);
                ran[way][0] = infer_cuda_norm_mv_last(g);
                for (int i = 2; i < 6; i++) {
                    got[way][i] = malloc(sizeof(float) * bufs[i]);
                    CHECK_MSG(k->download(g, got[way][i], d[i], sizeof(float) * bufs[i]) == INFER_OK, "%s", k->last_error(g));
                }
                /* the FFN, x changed in place: x += Wd (silu(Wg h) (Wu h)) */
                k->rmsnorm_ffn(g, (float *)d[0], (float *)d[2], (float *)d[6], (const float *)d[1], 1e-5f, &tw[3], &tw[4], &tw[5], 1, INFER_ACT_SILU, 0.0f);
                ran[way][1] = infer_cuda_norm_mv_last(g);
                got[way][0] = malloc(sizeof(float) * E);
                got[way][1] = malloc(sizeof(float) * E);
                got[way][6] = malloc(sizeof(float) * F);
                CHECK(k->download(g, got[way][0], d[0], sizeof(float) * E) == INFER_OK);
                CHECK(k->download(g, got[way][1], d[2], sizeof(float) * E) == INFER_OK);      /* the FFN's h */
                CHECK_MSG(k->download(g, got[way][6], d[6], sizeof(float) * F) == INFER_OK, "%s", k->last_error(g));
            }
            if (ok) {
                static const char *names[7] = { "x after the FFN", "the FFN's h", "h", "q", "k", "v", "hid" };
                CHECK_MSG(ran[0][0] == 1 && ran[0][1] == 1 && ran[1][0] == 0 && ran[1][1] == 0, "%s E=%d: ran fused %d %d, then %d %d", infer_type_name(t), E,
                          ran[0][0], ran[0][1], ran[1][0], ran[1][1]);
                int same = 1;
                for (int i = 0; i < 7; i++) {
                    const int eq = !memcmp(got[0][i], got[1][i], sizeof(float) * bufs[i == 1 ? 2 : i]);
                    CHECK_MSG(eq, "%s E=%d: %s differs with the norm inside the matvec", infer_type_name(t), E, names[i]);
                    same &= eq;
                }
                if (same) printf("    %-4s E=%-4d h, q, k, v, hid and x the same bits either way\n", infer_type_name(t), E);
                for (int w2 = 0; w2 < 2; w2++) for (int i = 0; i < 7; i++) free(got[w2][i]);
            } else CHECK_MSG(0, "%s E=%d: device memory", infer_type_name(t), E);
            for (int i = 0; i < 6; i++) { if (tw[i].data) k->free(g, (void *)tw[i].data); free(wq[i]); }
            for (int i = 0; i < 7; i++) if (d[i]) k->free(g, d[i]);
            free(x); free(nw);
        }
done:
    infer_cuda_norm_mv_force(old);
    if (g) k->ctx_free(g);
#endif
}

/* matmul_id's prompt path (rows grouped by expert, then int8 tiles per expert), tokens x 2
 * slots over 3 experts, x shared by the slots and one per slot, against the CPU's fast path
 * and exact maths as above: 100 tokens (about 67 rows an expert: more than one tile of 64)
 * for four types at K = 256; 9 and 40 tokens (6 and 27 rows an expert: tiles of 16 and 32
 * rows, from the experts' average share) at K = 608 / 768 (a partial step) */
static void test_gpu_int8_moe(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cf = NULL, *cp = NULL, *g = NULL;
    infer_error err;
    if (cpu->ctx_create(&cf, 2, 0, &err) != INFER_OK || cpu->ctx_create(&cp, 2, 1, &err) != INFER_OK || k->ctx_create(&g, 1, 0, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    infer__rng rng;
    infer__rng_seed(&rng, 6);
    static const struct { infer_type t; int K, rows, bm; } cases[] = {
        { INFER_TYPE_Q8_0, 256, 100, 64 }, { INFER_TYPE_Q4_1, 256, 100, 64 }, { INFER_TYPE_Q4_K, 256, 100, 64 }, { INFER_TYPE_Q6_K, 256, 100, 64 },
        { INFER_TYPE_Q4_1, 608, 9, 16 },   { INFER_TYPE_Q4_1, 608, 40, 32 },  { INFER_TYPE_Q6_K, 768, 9, 16 },   { INFER_TYPE_Q6_K, 768, 40, 32 },
    };
    const int N = 72, E = 3, n_used = 2;
    int32_t ids[200];
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const infer_type t = cases[ci].t;
        const int K = cases[ci].K, rows = cases[ci].rows;
        for (int r = 0; r < rows; r++) for (int s = 0; s < n_used; s++) ids[r * n_used + s] = (r + (1 + (rows < 100)) * s) % E;
        size_t bytes;
        float scale;
        uint8_t *q = int8_weights(&rng, t, K, N, E, &bytes, &scale);
        infer_tensor tc = { "w", t, 3, { K, N, E, 1 }, q, bytes, scale }, tg = tc;
        const size_t xn = (size_t)rows * n_used * K, on = (size_t)rows * n_used * N;
        float *x = malloc(sizeof(float) * xn), *of = malloc(sizeof(float) * on), *op = malloc(sizeof(float) * on), *og = malloc(sizeof(float) * on);
        void *gw = k->alloc(g, bytes), *gx = k->alloc(g, sizeof(float) * xn), *go = k->alloc(g, sizeof(float) * on), *gi = k->alloc(g, sizeof ids);
        tg.data = gw;
        for (size_t i = 0; i < xn; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
        if (!gw || !gx || !go || !gi || k->upload(g, gw, q, bytes) != INFER_OK || k->upload(g, gx, x, sizeof(float) * xn) != INFER_OK ||
            k->upload(g, gi, ids, sizeof ids) != INFER_OK) {
            CHECK_MSG(0, "%s: device memory", infer_type_name(t));
            goto next;
        }
        for (int per_slot = 0; per_slot < 2; per_slot++) {
            int bm = 0;
            cpu->matmul_id(cf, of, &tc, x, ids, rows, n_used, per_slot);
            cpu->matmul_id(cp, op, &tc, x, ids, rows, n_used, per_slot);
            k->matmul_id(g, (float *)go, &tg, (const float *)gx, (const int32_t *)gi, rows, n_used, per_slot);
            CHECK_MSG(k->download(g, og, go, sizeof(float) * on) == INFER_OK, "%s", k->last_error(g));
#ifdef INFER_CUDA
            int splits = 0;
            infer_cuda_tiles_last(g, &bm, &splits);
            CHECK_MSG(bm == cases[ci].bm, "%s %d tokens: tiles of %d rows, expected %d", infer_type_name(t), rows, bm, cases[ci].bm);
#endif
            const double ef = int8_rel(of, og, on), ex = int8_rel(op, og, on);
            CHECK_MSG(ef <= INT8_TIGHT, "%s %d tokens x_per_slot=%d: max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, per_slot, ef, INT8_TIGHT);
            CHECK_MSG(ex <= INFER__TOL_FAST, "%s %d tokens x_per_slot=%d: max_rel %.3g against exact maths (tol %g)", infer_type_name(t), rows, per_slot, ex, INFER__TOL_FAST);
            printf("    %-5s K=%d, %d tokens x %d slots over %d experts (tiles of %d rows), x_per_slot=%d: max_rel against the CPU's fast path %.2e, "
                   "against exact maths %.2e\n", infer_type_name(t), K, rows, n_used, E, bm, per_slot, ef, ex);
        }
    next:
        if (gw) k->free(g, gw);
        if (gx) k->free(g, gx);
        if (go) k->free(g, go);
        if (gi) k->free(g, gi);
        free(q); free(x); free(of); free(op); free(og);
    }
done:
    if (cf) cpu->ctx_free(cf);
    if (cp) cpu->ctx_free(cp);
    if (g) k->ctx_free(g);
}

/* The int8 tiles' shapes: tile rows chosen from the row count (9, 16 -> 16; 17 -> 32; 33,
 * 64 -> 64; 65, 200 -> 64 with a partial tile), K split over several blocks per tile for
 * grids that leave SMs idle, and two shared-memory stages. K = 608 for the 32-block types
 * (19 blocks: two steps of 8 and a partial one), 768 for the 256-block types (3 steps); N =
 * 72 (a tile and a piece). Each shape runs with K not split (forced 1), split in 2 (forced)
 * and as the backend chooses (3 splits for these small grids), each against the CPU's fast
 * path within INT8_TIGHT and exact maths within the fast bound; a split run twice, the two
 * results the same bits (the partial sums are added in a fixed order, never by float
 * atomics). The tile
 * rows and the split count the backend reports are checked, so each path is known to run.
 * (9-16 rows go to the tiles here by infer_cuda_mvq_rows_force(8); by default they run on the
 * int8 matvec, checked the same way after the tiles.) */
static void test_gpu_int8_tiles(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cf = NULL, *cp = NULL, *g = NULL;
    infer_error err;
    const int old = infer_cuda_tiles_force_splits(-1);
    const int old_mvq = infer_cuda_mvq_rows_force(8);     /* 9-16 rows on the tiles here (their 16-row shape); the matvec's turn is below */
    const int old_qg = infer_cuda_qgemm_force(INT_MAX, 0); /* and 64 rows on the tiles, not the BF16 GEMM (gpu_qgemm has that) */
    if (cpu->ctx_create(&cf, 2, 0, &err) != INFER_OK || cpu->ctx_create(&cp, 2, 1, &err) != INFER_OK || k->ctx_create(&g, 1, 0, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    infer__rng rng;
    infer__rng_seed(&rng, 9);
    static const infer_type types[4] = { INFER_TYPE_Q4_0, INFER_TYPE_Q4_1, INFER_TYPE_Q6_K, INFER_TYPE_Q4_K };
    static const int rows_list[7] = { 9, 16, 17, 33, 64, 65, 200 }, bm_want[7] = { 16, 16, 32, 64, 64, 64, 64 }, forced[3] = { 1, 2, -1 };
    const int N = 72, RMAX = 200;
    for (int ti = 0; ti < 4; ti++) {
        const infer_type t = types[ti];
        const int K = infer_type_block(t) == 256 ? 768 : 608;                 /* 3 steps of K either way */
        size_t bytes;
        float scale;
        uint8_t *q = int8_weights(&rng, t, K, N, 1, &bytes, &scale);
        infer_tensor tc = { "w", t, 2, { K, N, 1, 1 }, q, bytes, scale }, tg = tc;
        const size_t xn = (size_t)RMAX * K, on = (size_t)RMAX * N;
        float *x = malloc(sizeof(float) * xn), *of = malloc(sizeof(float) * on), *op = malloc(sizeof(float) * on), *og = malloc(sizeof(float) * on);
        float *o2 = malloc(sizeof(float) * on);
        void *gw = k->alloc(g, bytes), *gx = k->alloc(g, sizeof(float) * xn), *go = k->alloc(g, sizeof(float) * on);
        tg.data = gw;
        double worst_fast = 0, worst_exact = 0;
        int runs = 0, split_runs = 0, differ = 0;
        if (!gw || !gx || !go || k->upload(g, gw, q, bytes) != INFER_OK) { CHECK_MSG(0, "%s: device memory", infer_type_name(t)); goto next; }
        for (int ri = 0; ri < 7; ri++) {
            const int rows = rows_list[ri];
            const size_t n = (size_t)rows * N;
            for (size_t i = 0; i < (size_t)rows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            cpu->matmul(cf, of, &tc, x, rows);
            cpu->matmul(cp, op, &tc, x, rows);
            CHECK(k->upload(g, gx, x, sizeof(float) * (size_t)rows * K) == INFER_OK);
            for (int fi = 0; fi < 3; fi++) {
                infer_cuda_tiles_force_splits(forced[fi]);
                int bm = 0, splits = 0;
                k->matmul(g, (float *)go, &tg, (const float *)gx, rows);
                CHECK_MSG(k->download(g, og, go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
                infer_cuda_tiles_last(g, &bm, &splits);
                if (splits > 1) {                     /* split K: once more, for the same bits */
                    k->matmul(g, (float *)go, &tg, (const float *)gx, rows);
                    CHECK_MSG(k->download(g, o2, go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
                } else memcpy(o2, og, sizeof(float) * n);
                const int want = forced[fi];          /* 2 splits: steps 2 + 1 */
                CHECK_MSG(bm == bm_want[ri], "%s rows=%d: tiles of %d rows, expected %d", infer_type_name(t), rows, bm, bm_want[ri]);
                CHECK_MSG(want < 0 || splits == want, "%s rows=%d: %d splits of K, expected %d", infer_type_name(t), rows, splits, want);
                const double ef = int8_rel(of, og, n), ex = int8_rel(op, og, n);
                const int same = memcmp(og, o2, sizeof(float) * n) == 0;
                CHECK_MSG(ef <= INT8_TIGHT, "%s rows=%d K=%d splits=%d: max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, K, splits, ef, INT8_TIGHT);
                CHECK_MSG(ex <= INFER__TOL_FAST, "%s rows=%d K=%d splits=%d: max_rel %.3g against exact maths (tol %g)", infer_type_name(t), rows, K, splits, ex,
                          INFER__TOL_FAST);
                CHECK_MSG(same, "%s rows=%d splits=%d: two runs differ", infer_type_name(t), rows, splits);
                worst_fast = fmax(worst_fast, ef);
                worst_exact = fmax(worst_exact, ex);
                runs++;
                split_runs += splits > 1;
                differ += !same;
            }
        }
        CHECK_MSG(split_runs > 0, "%s: K was never split", infer_type_name(t));
        printf("    %-5s K=%-4d %d shapes (%d with K split): max_rel against the CPU's fast path %.2e, against exact maths %.2e; %d of %d repeats differ\n",
               infer_type_name(t), K, runs, split_runs, worst_fast, worst_exact, differ, split_runs);
        /* by default 9-16 rows (a batch of decoding sequences) run on the int8 matvec, in
         * row blocks of 8: the same tolerances; and 33 and 64 where the matvec is set to take
         * up to 64 (INFER_CUDA_MVQ_ROWS=64) */
        static const int mv_rows[4] = { 9, 16, 33, 64 };
        for (int mi = 0; mi < 4; mi++) {
            const int rows = mv_rows[mi];
            const size_t n = (size_t)rows * N;
            infer_cuda_mvq_rows_force(rows > 16 ? 64 : 16);
            for (size_t i = 0; i < (size_t)rows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            cpu->matmul(cf, of, &tc, x, rows);
            cpu->matmul(cp, op, &tc, x, rows);
            int bm = -1, splits = -1;
            CHECK(k->upload(g, gx, x, sizeof(float) * (size_t)rows * K) == INFER_OK);
            k->matmul(g, (float *)go, &tg, (const float *)gx, rows);
            CHECK_MSG(k->download(g, og, go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
            infer_cuda_tiles_last(g, &bm, &splits);
            const double ef = int8_rel(of, og, n), ex = int8_rel(op, og, n);
            CHECK_MSG(bm == 0, "%s rows=%d: ran on tiles of %d rows, not on the matvec", infer_type_name(t), rows, bm);
            CHECK_MSG(ef <= INT8_TIGHT, "%s rows=%d (matvec): max_rel %.3g against the CPU's fast path (tol %g)", infer_type_name(t), rows, ef, INT8_TIGHT);
            CHECK_MSG(ex <= INFER__TOL_FAST, "%s rows=%d (matvec): max_rel %.3g against exact maths (tol %g)", infer_type_name(t), rows, ex, INFER__TOL_FAST);
        }
        infer_cuda_mvq_rows_force(8);
    next:
        if (gw) k->free(g, gw);
        if (gx) k->free(g, gx);
        if (go) k->free(g, go);
        free(q); free(x); free(of); free(op); free(og); free(o2);
    }
done:
    infer_cuda_tiles_force_splits(old);
    infer_cuda_mvq_rows_force(old_mvq);
    if (old_qg != -2) infer_cuda_qgemm_force(old_qg, 0);
    if (cf) cpu->ctx_free(cf);
    if (cp) cpu->ctx_free(cp);
    if (g) k->ctx_free(g);
#endif
}

/* The fast mode's prompt matmuls of F16 and BF16 weights, on 16-bit tensor cores: what they
 * compute is exact maths on activations rounded to the weight's format (the products of two
 * 16-bit values are exact in f32, the sums f32), so against the CPU's precise path fed the
 * same rounded activations they agree within INT8_TIGHT, and against exact maths within the
 * fast bound (the rounding: a relative error of at most 2^-11 a value for F16, 2^-8 for BF16).
 * K = 72 (a partial step) and 512 (the two-stage tiles: rows of 16-byte multiples), 76 (rows
 * of 152 bytes: the one-stage tiles), rows 9..100, out = W x and out += W x, and matmul_id's
 * grouped tiles (100 tokens x 2 slots over 3 experts). The plain matmuls run twice: on the
 * tiles, and on the library GEMM (cuBLAS; the emulator's on the CPU) where the build has
 * one, each run checked to have taken its path. */
static void half_round(infer_type t, const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = t == INFER_TYPE_F16 ? infer__fp16_to_fp32(infer__fp32_to_fp16(x[i])) : infer__bf16_to_fp32(infer__fp32_to_bf16(x[i]));
}
static void test_gpu_half_matmul(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cp = NULL, *g = NULL;
    infer_error err;
    if (cpu->ctx_create(&cp, 2, 1, &err) != INFER_OK || k->ctx_create(&g, 1, 0, &err) != INFER_OK) {
        CHECK_MSG(0, "%s", err.msg);
        goto done;
    }
    infer__rng rng;
    infer__rng_seed(&rng, 8);
    static const infer_type types[2] = { INFER_TYPE_F16, INFER_TYPE_BF16 };
    const int rows_list[4] = { 9, 17, 64, 100 }, N = 72, E = 3, n_used = 2;
    for (int ti = 0; ti < 2; ti++)
        for (int ki = 0; ki < 3; ki++) {
            const infer_type t = types[ti];
            const int K = ki == 2 ? 76 : ki ? 512 : 72, RMAX = 200;
            size_t bytes;
            float scale;
            uint8_t *q = int8_weights(&rng, t, K, N, E, &bytes, &scale);
            infer_tensor tc = { "w", t, 2, { K, N, 1, 1 }, q, bytes, scale }, tg = tc, tce = tc, tge;
            tce.n_dims = 3;
            tce.ne[2] = E;
            tge = tce;
            const size_t xn = (size_t)RMAX * K, on = (size_t)RMAX * N;
            float *x = malloc(sizeof(float) * xn), *xr = malloc(sizeof(float) * xn), *oe = malloc(sizeof(float) * on), *orr = malloc(sizeof(float) * on);
            float *og = malloc(sizeof(float) * on), *y = malloc(sizeof(float) * on);
            int32_t ids[200];
            for (int r = 0; r < 100; r++) for (int s = 0; s < n_used; s++) ids[r * n_used + s] = (r + s) % E;
            void *gw = k->alloc(g, bytes), *gx = k->alloc(g, sizeof(float) * xn), *go = k->alloc(g, sizeof(float) * on), *gi = k->alloc(g, sizeof ids);
            tg.data = gw;
            tge.data = gw;
            double worst_r, worst_e;
            int paths = 1;
            if (!gw || !gx || !go || !gi || k->upload(g, gw, q, bytes) != INFER_OK || k->upload(g, gi, ids, sizeof ids) != INFER_OK) {
                CHECK_MSG(0, "%s: device memory", infer_type_name(t));
                goto next;
            }
#ifdef INFER_CUDA
            paths = infer_cuda_half_gemm_force(-1) == -2 ? 1 : 2;
#endif
            for (int path = 0; path < paths; path++) {
                worst_r = 0, worst_e = 0;
#ifdef INFER_CUDA
                if (paths == 2) infer_cuda_half_gemm_force(path);
#endif
                for (int ri = 0; ri <= 4; ri++) {
                    const int moe = ri == 4, rows = moe ? 100 : rows_list[ri], xrows = moe ? rows * n_used : rows, orows = moe ? rows * n_used : rows;
                    if (moe && path) continue;          /* matmul_id: the tiles only */
                    const size_t n = (size_t)orows * N;
                    for (size_t i = 0; i < (size_t)xrows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                    for (size_t i = 0; i < n; i++) y[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                    half_round(t, x, xr, (size_t)xrows * K);
                    CHECK(k->upload(g, gx, x, sizeof(float) * (size_t)xrows * K) == INFER_OK);
                    if (moe) {
                        cpu->matmul_id(cp, oe, &tce, x, ids, rows, n_used, 1);
                        cpu->matmul_id(cp, orr, &tce, xr, ids, rows, n_used, 1);
                        k->matmul_id(g, (float *)go, &tge, (const float *)gx, (const int32_t *)gi, rows, n_used, 1);
                    } else {
                        cpu->matmul(cp, oe, &tc, x, rows);
                        cpu->matmul(cp, orr, &tc, xr, rows);
                        CHECK(k->upload(g, go, y, sizeof(float) * n) == INFER_OK);
                        k->matmul_add(g, (float *)go, &tg, (const float *)gx, rows);
                        for (size_t i = 0; i < n; i++) { oe[i] += y[i]; orr[i] += y[i]; }
#ifdef INFER_CUDA
                        CHECK_MSG(paths == 1 || infer_cuda_half_gemm_last(g) == path, "%s K=%d rows=%d: ran on the %s, not the %s", infer_type_name(t), K, rows,
                                  infer_cuda_half_gemm_last(g) ? "library GEMM" : "tiles", path ? "library GEMM" : "tiles");
#endif
                    }
                    CHECK_MSG(k->download(g, og, go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
                    const double er = int8_rel(orr, og, n), ee = int8_rel(oe, og, n);
                    CHECK_MSG(er <= INT8_TIGHT, "%s K=%d rows=%d%s: max_rel %.3g against exact maths on rounded activations (tol %g)", infer_type_name(t), K, rows,
                              moe ? " (matmul_id)" : "", er, INT8_TIGHT);
                    CHECK_MSG(ee <= INFER__TOL_FAST, "%s K=%d rows=%d%s: max_rel %.3g against exact maths (tol %g)", infer_type_name(t), K, rows, moe ? " (matmul_id)" : "", ee,
                              INFER__TOL_FAST);
                    worst_r = fmax(worst_r, er);
                    worst_e = fmax(worst_e, ee);
                }
                /* out = W x as well (the stores without the add) */
                k->matmul(g, (float *)go, &tg, (const float *)gx, 17);
                cpu->matmul(cp, orr, &tc, xr, 17);
                CHECK(k->download(g, og, go, sizeof(float) * 17 * N) == INFER_OK);
                worst_r = fmax(worst_r, int8_rel(orr, og, (size_t)17 * N));
                CHECK_MSG(worst_r <= INT8_TIGHT, "%s K=%d: out = W x, max_rel %.3g against exact maths on rounded activations", infer_type_name(t), K, worst_r);
                printf("    %-4s K=%-3d %-12s max_rel against exact maths on activations rounded to %s %.2e, against exact maths %.2e\n", infer_type_name(t), K,
                       path ? "library GEMM" : paths == 2 ? "tiles" : "", infer_type_name(t), worst_r, worst_e);
            }
#ifdef INFER_CUDA
            if (paths == 2) infer_cuda_half_gemm_force(-1);
#endif
        next:
            if (gw) k->free(g, gw);
            if (gx) k->free(g, gx);
            if (go) k->free(g, go);
            if (gi) k->free(g, gi);
            free(q); free(x); free(xr); free(oe); free(orr); free(og); free(y);
        }
done:
    if (cp) cpu->ctx_free(cp);
    if (g) k->ctx_free(g);
}

/* a CPU context (threads 2, precise or not) and a GPU one (1 thread) for the op tests below;
 * 0 (the failure checked, nothing left to free) when either cannot be made */
static int gpu_cpu_pair(const infer_kernels *k, void **cp, int cpu_precise, void **g, int gpu_precise) {
    infer_error err;
    *cp = *g = NULL;
    if (infer_cpu_kernels()->ctx_create(cp, 2, cpu_precise, &err) == INFER_OK && k->ctx_create(g, 1, gpu_precise, &err) == INFER_OK) return 1;
    CHECK_MSG(0, "%s", err.msg);
    if (*cp) infer_cpu_kernels()->ctx_free(*cp);
    *cp = NULL;
    return 0;
}
static void gpu_cpu_pair_free(const infer_kernels *k, void *cp, void *g) {
    if (cp) infer_cpu_kernels()->ctx_free(cp);
    if (g) k->ctx_free(g);
}

/* deltanet_chunked on the GPU's chunked kernels (k_dn_prep, k_dn_chunks) against the CPU's
 * chunked form: the outputs and the carried state within INFER__TOL_SUM of the largest
 * value, for shapes that cross every edge -- one chunk and a piece of one (2, 33 rows: the
 * switch lowered to 2), exactly one chunk (64), several with a partial last one (130, 200),
 * more rows than one pair of launches takes (1100: 1024, then 76),
 * S columns in whole blocks of 16 and not (d_v 20), key heads shared (n_k < n_v), d_k from 32
 * to the largest the kernels take (256) -- each run checked to have taken the chunks; then
 * d_k 260 and 36 (past the largest, not a multiple of 8) on the recurrence, still right. The
 * chunked shapes again with k_dn_chunks' blocks of 8 and of 4 state columns. */
static void test_gpu_deltanet_chunks(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cp, *g;
    if (!gpu_cpu_pair(k, &cp, 1, &g, 1)) return;
    const int old = infer_cuda_dn_chunks_force(2);
    static const int shapes[][5] = { { 2, 1, 2, 32, 16 }, { 33, 2, 4, 64, 20 }, { 64, 1, 2, 128, 128 }, { 130, 2, 2, 256, 32 }, { 200, 1, 3, 128, 128 },
                                      { 1100, 1, 1, 32, 16 }, { 40, 1, 1, 260, 16 }, { 40, 1, 2, 36, 16 } };
    infer__rng rng;
    infer__rng_seed(&rng, 14);
    const size_t n_shapes = sizeof shapes / sizeof shapes[0];
    for (size_t sj = 0; sj < 3 * n_shapes; sj++) {
        const size_t si = sj % n_shapes;
        const int cols = sj < n_shapes ? 16 : sj < 2 * n_shapes ? 8 : 4;
        const int rows = shapes[si][0], n_k = shapes[si][1], n_v = shapes[si][2], d_k = shapes[si][3], d_v = shapes[si][4];
        if (cols != 16 && !(d_k <= 256 && d_k % 8 == 0)) continue;     /* (the recurrence's shapes once) */
        infer_cuda_dn_cols_force(cols);
        const size_t nq = (size_t)rows * n_k * d_k, nv = (size_t)rows * n_v * d_v, ng = (size_t)rows * n_v, ns = (size_t)n_v * d_v * d_k;
        float *q = malloc(sizeof(float) * nq), *kk = malloc(sizeof(float) * nq), *v = malloc(sizeof(float) * nv), *gg = malloc(sizeof(float) * ng);
        float *b = malloc(sizeof(float) * ng), *st = malloc(sizeof(float) * ns), *oc = malloc(sizeof(float) * nv), *og = malloc(sizeof(float) * nv);
        float *sc = malloc(sizeof(float) * ns), *sg = malloc(sizeof(float) * ns);
        for (size_t i = 0; i < nq; i++) { q[i] = (float)(infer__rng_uniform(&rng) * 2 - 1); kk[i] = (float)(infer__rng_uniform(&rng) * 2 - 1); }
        for (size_t h = 0; h < nq / d_k; h++) {            /* unit-norm q and k, as the layer gives them */
            double a = 0, c2 = 0;
            for (int i = 0; i < d_k; i++) { a += (double)q[h * d_k + i] * q[h * d_k + i]; c2 += (double)kk[h * d_k + i] * kk[h * d_k + i]; }
            for (int i = 0; i < d_k; i++) { q[h * d_k + i] /= (float)sqrt(a); kk[h * d_k + i] /= (float)sqrt(c2); }
        }
        for (size_t i = 0; i < nv; i++) v[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
        for (size_t i = 0; i < ng; i++) { gg[i] = (float)(-0.01 - 0.69 * infer__rng_uniform(&rng)); b[i] = (float)(0.05 + 0.9 * infer__rng_uniform(&rng)); }
        for (size_t i = 0; i < ns; i++) st[i] = (float)(infer__rng_uniform(&rng) * 0.6 - 0.3);
        memcpy(sc, st, sizeof(float) * ns);
        const float scale = 1.0f / sqrtf((float)d_k);
        cpu->deltanet_chunked(cp, oc, q, kk, v, gg, b, sc, rows, n_k, n_v, d_k, d_v, scale);
        void *dq = k->alloc(g, sizeof(float) * nq), *dk = k->alloc(g, sizeof(float) * nq), *dv = k->alloc(g, sizeof(float) * nv), *dg = k->alloc(g, sizeof(float) * ng);
        void *db = k->alloc(g, sizeof(float) * ng), *ds = k->alloc(g, sizeof(float) * ns), *dout = k->alloc(g, sizeof(float) * nv);
        if (dq && dk && dv && dg && db && ds && dout && k->upload(g, dq, q, sizeof(float) * nq) == INFER_OK && k->upload(g, dk, kk, sizeof(float) * nq) == INFER_OK &&
            k->upload(g, dv, v, sizeof(float) * nv) == INFER_OK && k->upload(g, dg, gg, sizeof(float) * ng) == INFER_OK &&
            k->upload(g, db, b, sizeof(float) * ng) == INFER_OK && k->upload(g, ds, st, sizeof(float) * ns) == INFER_OK) {
            k->deltanet_chunked(g, (float *)dout, (const float *)dq, (const float *)dk, (const float *)dv, (const float *)dg, (const float *)db, (float *)ds, rows, n_k,
                                n_v, d_k, d_v, scale);
            CHECK_MSG(k->download(g, og, dout, sizeof(float) * nv) == INFER_OK && k->download(g, sg, ds, sizeof(float) * ns) == INFER_OK, "%s", k->last_error(g));
            const int chunks = infer_cuda_dn_chunks_last(g), want = d_k <= 256 && d_k % 8 == 0;
            const double eo = int8_rel(oc, og, nv), es = int8_rel(sc, sg, ns);
            CHECK_MSG(chunks == want, "rows=%d d_k=%d: ran on the %s", rows, d_k, chunks ? "chunked kernels" : "recurrence");
            CHECK_MSG(eo <= INFER__TOL_SUM && es <= INFER__TOL_SUM, "rows=%d n_k=%d n_v=%d d_k=%d d_v=%d, %d columns a block: max_rel %.3g (out), %.3g (state) against the CPU's chunks",
                      rows, n_k, n_v, d_k, d_v, cols, eo, es);
            printf("    rows=%-3d n_k=%d n_v=%d d_k=%-3d d_v=%-3d %-10s max_rel against the CPU's chunks: out %.2e, state %.2e\n", rows, n_k, n_v, d_k, d_v,
                   chunks ? (cols == 16 ? "chunks/16" : cols == 8 ? "chunks/8" : "chunks/4") : "recurrence", eo, es);
        } else CHECK_MSG(0, "device memory");
        void *bufs[7] = { dq, dk, dv, dg, db, ds, dout };
        for (int i = 0; i < 7; i++) if (bufs[i]) k->free(g, bufs[i]);
        free(q); free(kk); free(v); free(gg); free(b); free(st); free(oc); free(og); free(sc); free(sg);
    }
    infer_cuda_dn_chunks_force(old);
    infer_cuda_dn_cols_force(-1);
    gpu_cpu_pair_free(k, cp, g);
#endif
}

/* The argmax op on a vocabulary-sized row, dealt over blocks of 1024 values and reduced by
 * the last (k_argmax, 126 partials over its 256 threads): rows of 128257 values (odd: every other row's 16-byte loads fall back
 * to single ones) -- the largest value the row's last, a tie 99995 indices apart (the first
 * wins), a -inf deep in the row (-1), a row of equal values (0) -- the CPU's ids exactly,
 * twice (the tickets left at 0). */
static void test_gpu_argmax_rows(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
    const infer_kernels *cpu = infer_cpu_kernels();
    enum { R = 4, N = 128257 };
    void *cc, *g;
    if (!gpu_cpu_pair(k, &cc, 0, &g, 0)) return;
    float *x = malloc(sizeof(float) * (size_t)R * N);
    infer__rng rng;
    infer__rng_seed(&rng, 15);
    for (size_t i = 0; i < (size_t)R * N; i++) x[i] = (float)(infer__rng_uniform(&rng) * 16 - 8);
    x[0 * N + N - 1] = 9.0f;
    x[1 * N + 100000] = x[1 * N + 5] = 9.5f;
    x[2 * N + 70000] = -INFINITY;
    for (int i = 0; i < N; i++) x[3 * N + i] = 0.25f;
    int32_t want[R], got[R];
    cpu->argmax(cc, want, x, R, N);
    CHECK(want[0] == N - 1 && want[1] == 5 && want[2] == -1 && want[3] == 0);
    void *gx = k->alloc(g, sizeof(float) * (size_t)R * N), *gi = k->alloc(g, sizeof got);
    if (gx && gi && k->upload(g, gx, x, sizeof(float) * (size_t)R * N) == INFER_OK) {
        for (int rep = 0; rep < 2; rep++) {
            memset(got, 0x55, sizeof got);
            k->argmax(g, (int32_t *)gi, (const float *)gx, R, N);
            CHECK_MSG(k->download(g, got, gi, sizeof got) == INFER_OK, "%s", k->last_error(g));
            for (int r = 0; r < R; r++) CHECK_MSG(got[r] == want[r], "run %d row %d: %d, the CPU %d", rep, r, got[r], want[r]);
        }
    } else CHECK_MSG(0, "device memory");
    if (gx) k->free(g, gx);
    if (gi) k->free(g, gi);
    free(x);
    gpu_cpu_pair_free(k, cc, g);
}

/* INFER_CUDA_BF16_CACHE: a context keeps a quantized weight's BF16 copy after its first long
 * matmul and multiplies the later ones straight from it -- the same values as the pieces'
 * dequantization, so the same bits: three types (a 32-block one, a 256-block one, a table
 * one), 70 rows (the switch lowered to 20), plain and adding, with the copy off, being made
 * (the budget auto) and reused (a fixed budget); a budget smaller than the weight keeps
 * nothing and changes nothing. With the copies on, 16 rows go to the GEMM too (the tiles
 * with them off). */
static void test_gpu_qgemm_cache(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    void *g = NULL;
    infer_error err;
    const int old = infer_cuda_qgemm_force(20, 0);
    if (old == -2) { printf("  SKIP: this build has no library GEMM\n"); t_skipped = 1; return; }
    const size_t old_cache = infer_cuda_bf16_cache_force(0);
    if (k->ctx_create(&g, 1, 0, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); goto done; }
    infer__rng rng;
    infer__rng_seed(&rng, 31);
    static const infer_type types[3] = { INFER_TYPE_Q4_0, INFER_TYPE_Q6_K, INFER_TYPE_IQ4_NL };
    const int K = 512, N = 72, rows = 70;
    void *keep[3] = { NULL, NULL, NULL };     /* the weights live as long as the context, as a session's model does */
    for (int ti = 0; ti < 3; ti++) {
        const infer_type t = types[ti];
        size_t bytes;
        float scale;
        uint8_t *q = int8_weights(&rng, t, K, N, 1, &bytes, &scale);
        float *x = malloc(sizeof(float) * rows * K), *y = malloc(sizeof(float) * rows * N), *got[4][2];
        for (int i = 0; i < rows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
        for (int i = 0; i < rows * N; i++) y[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
        void *gw = k->alloc(g, bytes), *gx = k->alloc(g, sizeof(float) * rows * K), *go = k->alloc(g, sizeof(float) * rows * N);
        infer_tensor tg = { "w", t, 2, { K, N, 1, 1 }, gw, bytes, scale };
        size_t kept[4];
        const int ok = gw && gx && go && k->upload(g, gw, q, bytes) == INFER_OK && k->upload(g, gx, x, sizeof(float) * rows * K) == INFER_OK;
        CHECK_MSG(ok, "%s: device memory", infer_type_name(t));
        /* 0: no copies; 1: a budget under the weight's 72 KiB; 2: the copy made (auto: while
         * a quarter of the device's memory stays free); 3: reused (a fixed budget) */
        static const size_t budgets[4] = { 0, 32 << 10, (size_t)-1, 1 << 20 };
        for (int way = 0; ok && way < 4; way++) {
            infer_cuda_bf16_cache_force(budgets[way]);
            got[way][0] = malloc(sizeof(float) * rows * N);
            got[way][1] = malloc(sizeof(float) * rows * N);
            k->matmul(g, (float *)go, &tg, (const float *)gx, rows);
            CHECK(k->download(g, got[way][0], go, sizeof(float) * rows * N) == INFER_OK);
            CHECK(k->upload(g, go, y, sizeof(float) * rows * N) == INFER_OK);
            k->matmul_add(g, (float *)go, &tg, (const float *)gx, rows);
            CHECK_MSG(k->download(g, got[way][1], go, sizeof(float) * rows * N) == INFER_OK, "%s", k->last_error(g));
            kept[way] = infer_cuda_bf16_cache_bytes(g);
        }
        if (ok) {
            const size_t want = (size_t)ti * K * N * 2;       /* the earlier types' copies */
            CHECK_MSG(kept[0] == want && kept[1] == want && kept[2] == want + (size_t)K * N * 2 && kept[3] == kept[2],
                      "%s: kept %zu, %zu, %zu, %zu bytes (before: %zu)", infer_type_name(t), kept[0], kept[1], kept[2], kept[3], want);
            for (int way = 1; way < 4; way++)
                CHECK_MSG(!memcmp(got[0][0], got[way][0], sizeof(float) * rows * N) && !memcmp(got[0][1], got[way][1], sizeof(float) * rows * N),
                          "%s: the results differ with the BF16 copies (case %d)", infer_type_name(t), way);
            for (int way = 0; way < 4; way++) { free(got[way][0]); free(got[way][1]); }
            /* a 16-row matmul (a batch of 16 sequences) at the default switch: the kept copy
             * with the copies on, the int8 tiles with them off */
            for (int on = 1; on >= 0; on--) {
                int bm = 0, splits = 0;
                infer_cuda_bf16_cache_force(on ? 1 << 20 : 0);
                infer_cuda_qgemm_force(-1, 0);
                k->matmul(g, (float *)go, &tg, (const float *)gx, 16);
                infer_cuda_tiles_last(g, &bm, &splits);
                CHECK_MSG(on ? bm == -1 : bm > 0, "%s, 16 rows, copies %s: ran on %d-row tiles (-1: the GEMM)", infer_type_name(t), on ? "on" : "off", bm);
                infer_cuda_qgemm_force(20, 0);
            }
        }
        keep[ti] = gw;
        if (gx) k->free(g, gx);
        if (go) k->free(g, go);
        free(q); free(x); free(y);
    }
    printf("    Q4_0, Q6_K, IQ4_NL: the same bits from the kept BF16 copies; %zu bytes kept\n", infer_cuda_bf16_cache_bytes(g));
    for (int ti = 0; ti < 3; ti++) if (keep[ti]) k->free(g, keep[ti]);
done:
    infer_cuda_bf16_cache_force(old_cache);
    infer_cuda_qgemm_force(old, 0);
    if (g) k->ctx_free(g);
#endif
}

/* The fast mode's long prompts of quantized weights run on the BF16 library GEMM
 * (infer_cuda_gemm_q): the weights dequantized and rounded to BF16, the activations rounded
 * to BF16, f32 sums. So against a double-precision sum over those same rounded values
 * (the weights through the device's own decoders, infer_cuda_dequant_host) they agree within
 * INT8_TIGHT, and against exact maths (the CPU's precise path) within the fast bound. Every
 * type with int8 tiles, K = 512, 72 columns; the switch lowered to 20 rows and the columns
 * dequantized 32 at a time (three pieces, the last one partial) to keep it small; rows 20
 * and 33, out = W x and out += W x, each run checked to have taken the path. Then the
 * default switch: 200 rows on the tiles, 256 on the GEMM. */
static void test_gpu_qgemm(void) {
    const infer_kernels *k = gpu_or_skip();
    if (!k) return;
#ifdef INFER_CUDA
    const infer_kernels *cpu = infer_cpu_kernels();
    void *cp, *g;
    const int old = infer_cuda_qgemm_force(20, 32);
    if (old == -2) { printf("  SKIP: this build has no library GEMM\n"); t_skipped = 1; return; }
    if (!gpu_cpu_pair(k, &cp, 1, &g, 0)) { infer_cuda_qgemm_force(old, 0); return; }
    infer__rng rng;
    infer__rng_seed(&rng, 12);
    const int K = 512, N = 72, RMAX = 256;
    float *x = malloc(sizeof(float) * (size_t)RMAX * K), *xr = malloc(sizeof(float) * (size_t)RMAX * K), *wf = malloc(sizeof(float) * (size_t)N * K);
    float *ref = malloc(sizeof(float) * (size_t)RMAX * N), *ex = malloc(sizeof(float) * (size_t)RMAX * N), *og = malloc(sizeof(float) * (size_t)RMAX * N);
    float *y = malloc(sizeof(float) * (size_t)RMAX * N);
    void *gx = k->alloc(g, sizeof(float) * (size_t)RMAX * K), *go = k->alloc(g, sizeof(float) * (size_t)RMAX * N);
    if (!gx || !go) { CHECK_MSG(0, "device memory"); goto free_all; }
    for (int ti = 0; ti < N_INT8_TYPES; ti++) {
        const infer_type t = int8_types[ti];
        size_t bytes;
        float scale;
        uint8_t *q = int8_weights(&rng, t, K, N, 1, &bytes, &scale);
        const size_t rb = infer_type_row_size(t, K);
        infer_tensor tc = { "w", t, 2, { K, N, 1, 1 }, q, bytes, scale }, tg = tc;
        void *gw = k->alloc(g, bytes);
        double worst_r = 0, worst_e = 0;
        int ok = gw && k->upload(g, gw, q, bytes) == INFER_OK;
        CHECK_MSG(ok, "%s: device memory", infer_type_name(t));
        for (int n = 0; ok && n < N; n++) {
            ok = infer_cuda_dequant_host(t, q + (size_t)n * rb, K, 1.0f, wf + (size_t)n * K);
            CHECK_MSG(ok, "%s: no device decoder", infer_type_name(t));
        }
        half_round(INFER_TYPE_BF16, wf, wf, (size_t)N * K);
        tg.data = gw;
        for (int ri = 0; ok && ri < 2; ri++) {
            const int rows = ri ? 33 : 20;
            const size_t n = (size_t)rows * N;
            for (size_t i = 0; i < (size_t)rows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            for (size_t i = 0; i < n; i++) y[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
            half_round(INFER_TYPE_BF16, x, xr, (size_t)rows * K);
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < N; c++) {
                    double sum = 0;
                    for (int i = 0; i < K; i++) sum += (double)wf[(size_t)c * K + i] * xr[(size_t)r * K + i];
                    ref[(size_t)r * N + c] = (float)(sum * scale);
                }
            cpu->matmul(cp, ex, &tc, x, rows);
            CHECK(k->upload(g, gx, x, sizeof(float) * (size_t)rows * K) == INFER_OK);
            for (int add = 0; add < 2; add++) {
                int bm = 0, splits = 0;
                if (add) {
                    CHECK(k->upload(g, go, y, sizeof(float) * n) == INFER_OK);
                    k->matmul_add(g, (float *)go, &tg, (const float *)gx, rows);
                    for (size_t i = 0; i < n; i++) { ref[i] += y[i]; ex[i] += y[i]; }
                } else k->matmul(g, (float *)go, &tg, (const float *)gx, rows);
                CHECK_MSG(k->download(g, og, go, sizeof(float) * n) == INFER_OK, "%s", k->last_error(g));
                infer_cuda_tiles_last(g, &bm, &splits);
                const double er = int8_rel(ref, og, n), ee = int8_rel(ex, og, n);
                CHECK_MSG(bm == -1, "%s rows=%d: ran on tiles of %d rows, not on the library GEMM", infer_type_name(t), rows, bm);
                CHECK_MSG(er <= INT8_TIGHT, "%s rows=%d add=%d: max_rel %.3g against exact maths on BF16 weights and activations (tol %g)", infer_type_name(t), rows,
                          add, er, INT8_TIGHT);
                CHECK_MSG(ee <= INFER__TOL_FAST, "%s rows=%d add=%d: max_rel %.3g against exact maths (tol %g)", infer_type_name(t), rows, add, ee, INFER__TOL_FAST);
                worst_r = fmax(worst_r, er);
                worst_e = fmax(worst_e, ee);
            }
        }
        if (ok) printf("    %-6s max_rel against exact maths on BF16 values %.2e, against exact maths %.2e\n", infer_type_name(t), worst_r, worst_e);
        /* the default switch, on one type */
        if (ok && t == INFER_TYPE_Q4_0) {
            infer_cuda_qgemm_force(-1, 0);
            for (int ri = 0; ri < 2; ri++) {
                const int rows = ri ? 64 : 63;
                int bm = 0, splits = 0;
                for (size_t i = 0; i < (size_t)rows * K; i++) x[i] = (float)(infer__rng_uniform(&rng) * 2 - 1);
                cpu->matmul(cp, ex, &tc, x, rows);
                CHECK(k->upload(g, gx, x, sizeof(float) * (size_t)rows * K) == INFER_OK);
                k->matmul(g, (float *)go, &tg, (const float *)gx, rows);
                CHECK_MSG(k->download(g, og, go, sizeof(float) * (size_t)rows * N) == INFER_OK, "%s", k->last_error(g));
                infer_cuda_tiles_last(g, &bm, &splits);
                CHECK_MSG(ri ? bm == -1 : bm > 0, "Q4_0 rows=%d by default: bm %d (the tiles below 64 rows, -1 the library GEMM from 64)", rows, bm);
                CHECK_MSG(int8_rel(ex, og, (size_t)rows * N) <= INFER__TOL_FAST, "Q4_0 rows=%d by default: max_rel %.3g against exact maths", rows,
                          int8_rel(ex, og, (size_t)rows * N));
            }
            infer_cuda_qgemm_force(20, 32);
        }
        if (gw) k->free(g, gw);
        free(q);
    }
free_all:
    if (gx) k->free(g, gx);
    if (go) k->free(g, go);
    free(x); free(xr); free(wf); free(ref); free(ex); free(og); free(y);
    infer_cuda_qgemm_force(old, 0);
    gpu_cpu_pair_free(k, cp, g);
#endif
}

/* ---- the table of tests ---- */
typedef struct { const char *name; void (*fn)(void); } test_case;

/* ---- grammars (>>grammar) ---- */

/* the grammar from GBNF text; NULL after a failed check naming the error */
static infer_grammar *grammar_of(const char *gbnf) {
    infer_grammar *g;
    infer_error err;
    if (infer_grammar_parse(&g, gbnf, strlen(gbnf), &err) == INFER_OK) return g;
    CHECK_MSG(0, "%s: %s", gbnf, err.msg);
    return NULL;
}

/* each string in yes[] is a sentence of the grammar and each of its prefixes a prefix; no
 * string in no[] is a sentence */
static void grammar_verdicts(const char *gbnf, const char *const *yes, const char *const *no) {
    infer_grammar *g = grammar_of(gbnf);
    if (!g) return;
    for (int i = 0; yes[i]; i++) {
        CHECK_MSG(infer_grammar_match(g, yes[i], strlen(yes[i])) == 1, "%s: '%s' refused", gbnf, yes[i]);
        for (size_t k = 0; k < strlen(yes[i]); k++)
            if (infer_grammar_match(g, yes[i], k) < 0) { CHECK_MSG(0, "%s: prefix %zu of '%s' refused", gbnf, k, yes[i]); break; }
    }
    for (int i = 0; no[i]; i++) CHECK_MSG(infer_grammar_match(g, no[i], strlen(no[i])) != 1, "%s: '%s' accepted", gbnf, no[i]);
    infer_grammar_free(g);
}

static const char grammar_arith[] =
    "# arithmetic, with precedence by rule\n"
    "root   ::= expr\n"
    "expr   ::= term ((\"+\" | \"-\") term)*\n"
    "term   ::= factor ((\"*\" | \"/\") factor)*\n"
    "factor ::= [0-9]+ | \"(\" expr \")\" | \"-\" factor\n";
static const char grammar_json[] =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::=\n"
    "  \"{\" ws (\n"
    "            string \":\" ws value\n"
    "    (\",\" ws string \":\" ws value)*\n"
    "  )? \"}\" ws\n"
    "array  ::=\n"
    "  \"[\" ws (\n"
    "            value\n"
    "    (\",\" ws value)*\n"
    "  )? \"]\" ws\n"
    "string ::=\n"
    "  \"\\\"\" (\n"
    "    [^\"\\\\\\x7F\\x00-\\x1F] |\n"
    "    \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4}) # escapes\n"
    "  )* \"\\\"\" ws\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)? ws\n"
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

static void test_grammar_suite(void) {
    { const char *yes[] = { "1", "12+3", "(1+2)*3", "-4/(2-7)", "((((0))))", "1*2*3-4-5", "--3", NULL };
      const char *no[] = { "", "+", "1+", "(1", "1)", "1 + 2", "a", "()", "1**2", "(1+2)(3)", NULL };
      grammar_verdicts(grammar_arith, yes, no); }
    { const char *yes[] = { "{}", "{\"a\":1}", "{\"a\": [1, 2.5, -3e10, true, null, \"x\\u00e9\\n\"], \"b\": {\"c\": {}}}",
                            "{\n  \"k\": \"v\"\n}", "{\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\":false} ", NULL };
      const char *no[] = { "[]", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{a:1}", "{\"a\":01}", "{\"a\":\"\x01\"}", "{\"a\":\"\\x\"}",
                           "{\"a\":tru}", "{\"a\":[1 2]}", "{\"a\":\"\xc3\"}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xe0\x80\xaf\"}", NULL };
      grammar_verdicts(grammar_json, yes, no); }
    { const char *yes[] = { "apple", "apple, pear,fig", "a,b,c,d,e,f", NULL };
      const char *no[] = { "", ",", "apple,", "apple pear", "Apple", "a,,b", NULL };
      grammar_verdicts("root ::= item (\",\" \" \"? item)*\nitem ::= [a-z]+\n", yes, no); }
    { const char *yes[] = { "", "()", "[]", "([])", "[()()[[]]]", "(((([]))))[]", NULL };
      const char *no[] = { "(", ")", "(]", "([)]", "[[]", "()]", "x", NULL };
      grammar_verdicts("root ::= b*\nb ::= \"(\" b* \")\" | \"[\" b* \"]\"\n", yes, no); }
    { const char *yes[] = { "\xce\xb1\xce\xb2 \xe2\x82\xac\xe2\x82\xac", "\xcf\x89 \xd0\xaf" "1\xe2\x82\xac", "\xce\xb1 AB", NULL };   /* αβ €€, ω Я1€, α AB */
      const char *no[] = { "a \xe2\x82\xac\xe2\x82\xac", "\xce\xb1 ab", "\xce\xb1 A", "\xce\xb1\xce\xb2 \xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", "\xce\xb1 \xe2\x82", NULL };
      grammar_verdicts("root ::= [\xce\xb1-\xcf\x89]+ \" \" [^a-z\\n]{2} \"\\u20ac\"?\n", yes, no); }
    { const char *yes[] = { "aabbbc", "aaaabbbccc", "aaabbbc", NULL };
      const char *no[] = { "abbbc", "aaaaabbbc", "aabbc", "aabbbbc", "aabbb", NULL };
      grammar_verdicts("root ::= \"a\"{2,4} \"b\"{3} \"c\"{1,}\n", yes, no); }
    { const char *yes[] = { "x", "xyz", "xyzyz", NULL };
      const char *no[] = { "", "y", "xyzyzyz", "xy", NULL };
      grammar_verdicts("root ::= \"x\" (\"y\" \"z\"){0,2}\n", yes, no); }
    { const char *yes[] = { "A\t\xc3\xa9-", "A\n\xc3\xa9]", "<a>b>", NULL };
      const char *no[] = { "A \xc3\xa9-", "a\t\xc3\xa9-", "A\t\xc3\xa9-]", "<a", NULL };
      grammar_verdicts("root ::= \"\\x41\" [\\t\\n] \"\\u00e9\" [\\-\\]] | \"<\" .* \">\"   # escapes, a comment\n", yes, no); }
}

/* a bad grammar's message names the line, the column and the rule */
static void test_grammar_errors(void) {
    static const struct { const char *gbnf, *want[3]; } bad[] = {
        { "root ::= \"a\"\nitem \"b\"\n", { "line 2, column 6", "'::='" } },
        { "root ::= list\nlist ::= \"[\" itm \"]\"\n", { "line 2, column 14", "'itm'", "not defined" } },
        { "root ::= \"abc\n", { "line 1, column 10", "rule 'root'", "unterminated literal" } },
        { "root ::= x\nx ::= [a-z\n", { "line 2, column 7", "rule 'x'", "character class" } },
        { "root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]\n", { "line 2, column 1", "'expr' is left-recursive", "expr -> expr" } },
        { "root ::= a\na ::= b \"x\"\nb ::= \"y\"? a\n", { "left-recursive", "a -> b -> a" } },
        { "item ::= \"a\"\n", { "no rule named 'root'" } },
        { "root ::= \"a\"\nroot ::= \"b\"\n", { "line 2, column 1", "defined twice" } },
        { "root ::= \"a\"{3,1}\n", { "line 1, column 13", "m <= n" } },
        { "root ::= \"\\q\"\n", { "line 1, column 11", "unknown escape" } },
        { "root ::= (\"a\" | \"b\"\n", { "line 1, column 10", "')'" } },
        { "root ::= \"a\" )\n", { "line 1, column 14", "without its '('" } },
        { "root ::= [z-a]\n", { "runs backwards" } },
        { "root ::= \"x\" (\"a\"?)*\n", { "line 1, column 20", "'root_3' is left-recursive", "can be empty" } },   /* a repeated nullable */
    };
    /* every prefix of a grammar parses or fails with a message, and a parsed one matches */
    for (size_t n = 0; n <= strlen(grammar_json); n++) {
        infer_grammar *g = NULL;
        infer_error err;
        err.msg[0] = 0;
        if (infer_grammar_parse(&g, grammar_json, n, &err) == INFER_OK)    /* root ::= (nothing) until "object" */
            CHECK_MSG(infer_grammar_match(g, "{\"a\":[1]}", 9) == 1 || (n < 18 && infer_grammar_match(g, "", 0) == 1), "prefix %zu", n);
        else CHECK_MSG(!strncmp(err.msg, "grammar: ", 9), "prefix %zu: '%s'", n, err.msg);
        infer_grammar_free(g);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        infer_grammar *g = NULL;
        infer_error err;
        CHECK_MSG(infer_grammar_parse(&g, bad[i].gbnf, strlen(bad[i].gbnf), &err) == INFER_ERR_ARG && !g, "%s: parsed", bad[i].gbnf);
        for (int k = 0; k < 3 && bad[i].want[k]; k++) CHECK_MSG(strstr(err.msg, bad[i].want[k]), "%s: '%s' lacks '%s'", bad[i].gbnf, err.msg, bad[i].want[k]);
        infer_grammar_free(g);
    }
}

#if !defined(INFER_NO_JINJA) || !defined(INFER_NO_HF)
/* A small validator for the keywords the tests' schemas use: 1 when v satisfies s. */
static size_t utf8_chars(const char *s, size_t n) { size_t k = 0; for (size_t i = 0; i < n; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80; return k; }
static int schema_valid(const infer__json *root, const infer__json *s, const infer__json *v) {
    const infer__json *k;
    if ((k = infer__json_get(s, "$ref"))) return schema_valid(root, infer__json_get(infer__json_get(root, "$defs"), k->str + 8), v);
    if ((k = infer__json_get(s, "anyOf"))) { for (uint32_t i = 0; i < k->len; i++) if (schema_valid(root, &k->items[i], v)) return 1; return 0; }
    if ((k = infer__json_get(s, "enum")) || (k = infer__json_get(s, "const"))) {
        const int is_enum = k->type == INFER__JSON_ARRAY && infer__json_get(s, "enum");
        for (uint32_t i = 0; i < (is_enum ? k->len : 1); i++) {
            const infer__json *e = is_enum ? &k->items[i] : k;
            if (e->type == v->type && (e->type != INFER__JSON_STRING || !strcmp(e->str, v->str)) && (e->type != INFER__JSON_NUMBER || e->num == v->num)) return 1;
        }
        return 0;
    }
    const char *type = infer__json_str(infer__json_get(s, "type"));
    int64_t n;
    if (!type) return 1;
    if (!strcmp(type, "null")) return v->type == INFER__JSON_NULL;
    if (!strcmp(type, "boolean")) return v->type == INFER__JSON_TRUE || v->type == INFER__JSON_FALSE;
    if (!strcmp(type, "integer")) return v->type == INFER__JSON_NUMBER && !v->is_float;
    if (!strcmp(type, "number")) return v->type == INFER__JSON_NUMBER;
    if (!strcmp(type, "string")) {
        if (v->type != INFER__JSON_STRING) return 0;
        if (infer__json_int(infer__json_get(s, "maxLength"), &n) == 0 && utf8_chars(v->str, v->len) > (size_t)n) return 0;
        if (infer__json_int(infer__json_get(s, "minLength"), &n) == 0 && utf8_chars(v->str, v->len) < (size_t)n) return 0;
        const char *f = infer__json_str(infer__json_get(s, "format"));
        if (f && !strcmp(f, "date")) {
            int y, mo, d, end = 0;
            if (v->len != 10 || sscanf(v->str, "%4d-%2d-%2d%n", &y, &mo, &d, &end) != 3 || end != 10 || mo < 1 || mo > 12 || d < 1 || d > 31) return 0;
        }
        if (f && !strcmp(f, "uuid")) {
            if (v->len != 36) return 0;
            for (int i = 0; i < 36; i++) if ((i == 8 || i == 13 || i == 18 || i == 23) ? v->str[i] != '-' : !isxdigit((unsigned char)v->str[i])) return 0;
        }
        return 1;
    }
    if (!strcmp(type, "array")) {
        if (v->type != INFER__JSON_ARRAY) return 0;
        if (infer__json_int(infer__json_get(s, "maxItems"), &n) == 0 && v->len > n) return 0;
        if (infer__json_int(infer__json_get(s, "minItems"), &n) == 0 && v->len < n) return 0;
        for (uint32_t i = 0; (k = infer__json_get(s, "items")) && i < v->len; i++) if (!schema_valid(root, k, &v->items[i])) return 0;
        return 1;
    }
    if (!strcmp(type, "object")) {
        const infer__json *props = infer__json_get(s, "properties"), *req = infer__json_get(s, "required");
        if (v->type != INFER__JSON_OBJECT) return 0;
        for (uint32_t i = 0; req && i < req->len; i++) if (!infer__json_get(v, req->items[i].str)) return 0;
        for (uint32_t i = 0; i < v->len; i++) {
            const infer__json *ps = infer__json_get(props, v->items[i].key);
            for (uint32_t j = 0; j < i; j++) if (!strcmp(v->items[j].key, v->items[i].key)) return 0;   /* a key twice */
            if (!ps) { if (infer__json_get(s, "additionalProperties") && infer__json_get(s, "additionalProperties")->type == INFER__JSON_FALSE) return 0; continue; }
            if (!schema_valid(root, ps, &v->items[i])) return 0;
        }
        return 1;
    }
    return 0;
}

static const char test_schema[] =
    "{\"type\": \"object\", \"additionalProperties\": false,\n"
    " \"properties\": {\n"
    "   \"name\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 6},\n"
    "   \"age\": {\"type\": \"integer\"},\n"
    "   \"tags\": {\"type\": \"array\", \"items\": {\"enum\": [\"red\", \"green\", 7, null]}, \"minItems\": 1, \"maxItems\": 3},\n"
    "   \"born\": {\"type\": \"string\", \"format\": \"date\"},\n"
    "   \"id\": {\"type\": \"string\", \"format\": \"uuid\"},\n"
    "   \"pet\": {\"$ref\": \"#/$defs/pet\"},\n"
    "   \"score\": {\"anyOf\": [{\"type\": \"null\"}, {\"type\": \"number\"}, {\"type\": \"boolean\"}]}\n"
    " },\n"
    " \"required\": [\"name\", \"tags\", \"pet\"],\n"
    " \"$defs\": {\"pet\": {\"type\": \"object\", \"properties\": {\"kind\": {\"const\": \"cat\"}, \"lives\": {\"type\": \"integer\"}},\n"
    "                    \"required\": [\"kind\"], \"additionalProperties\": false}}}";

static char *schema_gbnf(const char *schema) {
    char *gbnf = NULL;
    infer_error err;
    CHECK_MSG(infer_json_schema_to_grammar(schema, strlen(schema), &gbnf, &err) == INFER_OK, "%s: %s", schema, err.msg);
    return gbnf;
}

/* JSON Schema -> GBNF: what the grammar takes validates, what it refuses does not; keywords
 * it cannot honour are named */
static void test_grammar_json_schema(void) {
    char *gbnf = schema_gbnf(test_schema);
    infer_grammar *g = gbnf ? grammar_of(gbnf) : NULL;
    if (g) {
        const char *yes[] = {
            "{\"name\": \"ab\", \"tags\": [\"red\"], \"pet\": {\"kind\": \"cat\"}}",
            "{\"name\":\"\xc3\xa9t\xc3\xa9\",\"tags\":[7,null,\"green\"],\"pet\":{\"kind\":\"cat\",\"lives\":9},\"age\":-3,\"born\":\"2024-02-29\","
            "\"id\":\"123e4567-e89b-12d3-a456-426614174000\",\"score\":1.5e3}",
            "{\n  \"name\": \"x\",\n  \"tags\": [\n    null\n  ],\n  \"pet\": {\"kind\": \"cat\"},\n  \"score\": false\n}",
            NULL };
        const char *no[] = {
            "{\"name\": \"\", \"tags\": [\"red\"], \"pet\": {\"kind\": \"cat\"}}",                      /* minLength */
            "{\"name\": \"abcdefg\", \"tags\": [\"red\"], \"pet\": {\"kind\": \"cat\"}}",               /* maxLength */
            "{\"name\": \"a\", \"tags\": [], \"pet\": {\"kind\": \"cat\"}}",                            /* minItems */
            "{\"name\": \"a\", \"tags\": [7, 7, 7, 7], \"pet\": {\"kind\": \"cat\"}}",                  /* maxItems */
            "{\"name\": \"a\", \"tags\": [\"blue\"], \"pet\": {\"kind\": \"cat\"}}",                    /* enum */
            "{\"name\": \"a\", \"tags\": [7], \"pet\": {\"kind\": \"dog\"}}",                           /* const */
            "{\"name\": \"a\", \"tags\": [7]}",                                                         /* required */
            "{\"name\": \"a\", \"tags\": [7], \"pet\": {\"kind\": \"cat\"}, \"x\": 1}",                 /* additionalProperties */
            "{\"name\": \"a\", \"tags\": [7], \"pet\": {\"kind\": \"cat\"}, \"age\": 1.5}",             /* integer */
            "{\"name\": \"a\", \"tags\": [7], \"pet\": {\"kind\": \"cat\"}, \"born\": \"2024-13-01\"}", /* date */
            "{\"name\": \"a\", \"tags\": [7], \"pet\": {\"kind\": \"cat\"}, \"id\": \"123\"}",          /* uuid */
            "{\"name\": \"a\", \"tags\": [7], \"pet\": {\"kind\": \"cat\"}, \"score\": \"1\"}",         /* anyOf */
            NULL };
        grammar_verdicts(gbnf, yes, no);
        /* the validator agrees with the grammar on all of them */
        for (int set = 0; set < 2; set++)
            for (const char *const *t = set ? no : yes; *t; t++) {
                infer__json_doc sd, vd;
                infer_error err;
                if (infer__json_parse(&sd, test_schema, strlen(test_schema), &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); continue; }
                if (infer__json_parse(&vd, *t, strlen(*t), &err) == INFER_OK) {
                    CHECK_MSG(schema_valid(sd.root, sd.root, vd.root) == !set, "validator on %s", *t);
                    infer__json_free(&vd);
                }
                infer__json_free(&sd);
            }
    }
    infer_grammar_free(g);
    free(gbnf);
    /* any object: --json */
    gbnf = schema_gbnf("{\"type\": \"object\"}");
    g = gbnf ? grammar_of(gbnf) : NULL;
    if (g) {
        const char *yes[] = { "{}", "{\"a\": {\"b\": [1, \"x\", null]}}", NULL };
        const char *no[] = { "[]", "1", "\"s\"", "{\"a\"}", NULL };
        grammar_verdicts(gbnf, yes, no);
    }
    infer_grammar_free(g);
    free(gbnf);
    static const struct { const char *schema, *want; } bad[] = {
        { "{\"type\": \"string\", \"pattern\": \"^a+$\"}", "'pattern'" },
        { "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\", \"minimum\": 0}}}", "'minimum' at #/properties/n" },
        { "{\"$ref\": \"https://example.com/s.json\"}", "https://example.com/s.json" },
        { "{\"type\": \"string\", \"format\": \"email\"}", "'email'" },
        { "{\"type\": \"tuple\"}", "'tuple'" },
        { "{\"type\": \"array\", \"prefixItems\": []}", "'prefixItems'" },
        { "{\"type\": \"object\", \"properties\": {\"a\": {}}, \"required\": [\"a\", \"b\"]}", "'b'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        infer_error err;
        char *out = NULL;
        CHECK_MSG(infer_json_schema_to_grammar(bad[i].schema, strlen(bad[i].schema), &out, &err) == INFER_ERR_UNSUPPORTED && !out, "%s converted", bad[i].schema);
        CHECK_MSG(strstr(err.msg, bad[i].want), "%s: '%s' lacks '%s'", bad[i].schema, err.msg, bad[i].want);
        free(out);
    }
}
/* the command line: a bad grammar or schema is a message naming where, options that do not go
 * together are refused, and --json-schema @FILE's output is JSON that validates */
static void test_grammar_cli(void) {
    if (!file_exists("./infer") || !file_exists("./tools/convert")) SKIP("./infer or ./tools/convert not built");
    char out[8192];
    CHECK(run_cmd("./tools/convert synth llama tiny $INFER_TMP/infer_gc.gguf --type q8_0 2>&1", out, sizeof out) == 0);
#define GM "./infer -m $INFER_TMP/infer_gc.gguf -p hi -n 200 "
    static const char *bad[][2] = {
        { "--grammar 'root ::= \"a\" | b' 2>&1", "line 1, column 16: rule 'b' is used but not defined" },
        { "--grammar 'root ::= x\nx ::= x \"a\"' 2>&1", "'x' is left-recursive" },
        { "--json --grammar 'root ::= \"a\"' 2>&1", "give one of --grammar" },
        { "--json-schema '{\"type\": \"string\", \"pattern\": \"a\"}' 2>&1", "unsupported keyword 'pattern'" },
        { "--json-schema @$INFER_TMP/no_such.json 2>&1", "no_such.json" },
        { "--json --tokenize 2>&1", "constrain generated text" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, GM "%s", bad[i][0]);
        const int rc = run_cmd(cmd, out, sizeof out);
        CHECK_MSG(rc != 0 && strstr(out, bad[i][1]), "%s: rc %d, '%s'", cmd, rc, out);
    }
    CHECK(run_cmd("printf '{\"type\": \"array\", \"items\": {\"type\": \"boolean\"}, \"maxItems\": 3}' > $INFER_TMP/infer_gc.json", out, sizeof out) == 0);
    for (int seed = 1; seed <= 3; seed++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, GM "--seed %d --json-schema @$INFER_TMP/infer_gc.json 2>/dev/null", seed);
        CHECK(run_cmd(cmd, out, sizeof out) == 0 && !strncmp(out, "hi", 2));
        infer__json_doc d;
        infer_error err;
        const int ok = infer__json_parse(&d, out + 2, strlen(out + 2), &err) == INFER_OK;
        CHECK_MSG(ok && d.root->type == INFER__JSON_ARRAY && d.root->len <= 3, "seed %d: '%s'", seed, out + 2);
        for (uint32_t k = 0; ok && k < d.root->len; k++) CHECK(d.root->items[k].type == INFER__JSON_TRUE || d.root->items[k].type == INFER__JSON_FALSE);
        if (ok) infer__json_free(&d);
    }
#undef GM
}
#endif

/* infer_generate's tokens as text */
typedef struct { char text[512]; int len; infer_model *m; } gen_text;
static int collect_piece(void *user, int32_t t, const float *logits) {
    gen_text *g = (gen_text *)user;
    (void)logits;
    const int k = infer_token_to_piece(infer_model_tokenizer(g->m), t, 0, g->text + g->len, (int)sizeof g->text - 1 - g->len);
    if (k > 0 && g->len + k < (int)sizeof g->text) g->len += k;
    g->text[g->len] = 0;
    return 0;
}

/* the tokens the grammar allows in the matcher's state, found the slow way: every token's
 * piece run through the matcher on its own; compared with the trie walk's list */
static int grammar_allowed_agree(struct infer__gmatch *m) {
    const infer_tokenizer *tok = m->tok;
    const int32_t *fast = infer__gmatch_allowed(m);
    uint8_t *in = (uint8_t *)calloc((size_t)tok->n_vocab, 1);
    int ok = 1, n_slow = 0;
    for (ptrdiff_t k = 0; k < arrlen(fast); k++) in[fast[k]]++;
    for (int32_t t = 0; t < tok->n_vocab; t++) {
        int len, yes = 0;
        const char *p = infer__tok_piece(tok, t, 0, &len);
        if (infer_token_is_eog(tok, t)) yes = infer__gs_can_end(m->cur, 0);
        else if (len > 0) {
            int32_t *a = NULL, *tmp = NULL, st = 0;
            for (ptrdiff_t i = 0; i < arrlen(m->cur); i++) arrput(a, m->cur[i]);
            yes = 1;
            for (int i = 0; i < len && yes; i++) yes = (st = infer__gs_step(m->g, &a, &tmp, st, (uint8_t)p[i])) >= 0;
            arrfree(a); arrfree(tmp);
        }
        n_slow += yes;
        if (in[t] != yes) ok = 0;
    }
    free(in);
    return ok && n_slow == arrlen(fast);
}

/* Generate from m under g until an end-of-generation token: the text into out (NUL-ended).
 * temp 0 is greedy. Returns the tokens drawn, -1 when max_tokens ran out first. With
 * check, every step's allowed set is checked against the slow scan. */
static int grammar_generate(infer_model *m, infer_session *s, const infer_grammar *g, float temp, uint64_t seed, int max_tokens,
                            char *out, int cap, int check) {
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    const int V = infer_model_config(m)->n_vocab;
    infer_sampler_params sp = infer_sampler_default_params();
    sp.temp = temp;
    sp.seed = seed;
    infer_sampler *smp = infer_sampler_create(&sp, V);
    float *logits = (float *)malloc(sizeof(float) * (size_t)V);
    infer_error err;
    int32_t ids[8];
    const int n_prompt = infer_tokenize(tok, "Output:", 7, 1, 0, ids, 8);
    int n = 0, len = 0, rc = -1;
    infer_session_reset(s);
    if (!smp || !logits || n_prompt <= 0 || infer_eval(s, ids, n_prompt, logits, 0, &err) != INFER_OK ||
        infer_sampler_set_grammar(smp, g, tok, &err) != INFER_OK) { CHECK_MSG(0, "setting up: %s", err.msg); goto done; }
    for (n = 0; n < max_tokens; n++) {
        if (check && !grammar_allowed_agree(smp->gm)) { CHECK_MSG(0, "the trie walk and the slow scan differ after '%.*s'", len, out); check = 0; }
        const int32_t t = infer_sampler_sample(smp, logits);
        if (infer_token_is_eog(tok, t)) { rc = n; break; }
        const int k = infer_token_to_piece(tok, t, 0, out + len, cap - 1 - len);
        if (k < 0 || len + k >= cap - 1) break;
        len += k;
        if (infer_eval(s, &t, 1, logits, 0, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); break; }
    }
done:
    out[len] = 0;
    infer_sampler_free(smp);
    free(logits);
    return rc;
}

/* Random-weight models (the hardest case: they would emit anything) generate under grammars
 * whose languages are finite, greedy and sampled: every sample ends with an end-of-generation
 * token, is a sentence of the grammar, and for the schema parses as JSON that validates. */
static void test_grammar_generate(void) {
    static const char *grammars[] = {
        "root ::= \"(\" num ((\"+\" | \"*\") num){0,4} \")\"\nnum ::= \"-\"? [0-9]{1,3}\n",
        "root ::= b{1,3}\nb ::= \"(\" c{0,2} \")\" | \"[\" c{0,2} \"]\"\nc ::= \"<\" [a-z]{0,3} \">\" | b2\nb2 ::= \"{\" [0-9]? \"}\"\n",
        "root ::= [\xce\xb1-\xcf\x89\xd0\x90-\xd1\x8f]{1,5} (\" \" [\xe4\xb8\x80-\xe4\xb8\x8f]{1,2})? \"!\"\n",   /* Greek, Cyrillic, then CJK: tokens end mid-character */
        NULL,   /* test_schema */
    };
    static const char *arch[] = { "llama", "qwen35", "qwen3" };   /* qwen3: the golden set's random-weight model */
    for (int a = 0; a < 3; a++) {
        char file[64];
        snprintf(file, sizeof file, "infer_gr_%s.gguf", arch[a]);
        infer_model *m = NULL;
        if (a < 2) m = synth_tiny(arch[a], "q8_0", file);
        else {
            infer_error lerr;
            if (!file_exists(SHARED "/golden/qwen3/model-F32.gguf")) { printf("    qwen3: ../shared/golden not found, skipped\n"); continue; }
            if (infer_model_load(&m, SHARED "/golden/qwen3/model-F32.gguf", NULL, &lerr) != INFER_OK) { CHECK_MSG(0, "%s", lerr.msg); return; }
        }
        if (!m) return;
        infer_session *s;
        infer_error err;
        if (infer_session_create(&s, m, NULL, &err) != INFER_OK) { CHECK_MSG(0, "%s", err.msg); infer_model_free(m); return; }
        for (int gi = 0; gi < 4; gi++) {
#if defined(INFER_NO_JINJA) && defined(INFER_NO_HF)
            if (!grammars[gi]) continue;
#endif
            char *gbnf = grammars[gi] ? NULL : schema_gbnf(test_schema);
            infer_grammar *g = grammar_of(grammars[gi] ? grammars[gi] : gbnf);
            if (!g) { free(gbnf); continue; }
            /* 10 sampled runs by default; INFER_GRAMMAR_SAMPLES=100 for the long check */
            const int n_samples = getenv("INFER_GRAMMAR_SAMPLES") ? atoi(getenv("INFER_GRAMMAR_SAMPLES")) : 10;
            for (int k = 0; k <= n_samples; k++) {
                char out[4096];
                const int n = grammar_generate(m, s, g, k == 0 ? 0.0f : 1.5f, 1000 + (uint64_t)k, 1500, out, sizeof out, k < 2);
                CHECK_MSG(n >= 0, "%s, grammar %d, sample %d: no end within 1500 tokens: '%s'", arch[a], gi, k, out);
                CHECK_MSG(infer_grammar_match(g, out, strlen(out)) == 1, "%s, grammar %d, sample %d not a sentence: '%s'", arch[a], gi, k, out);
#if !defined(INFER_NO_JINJA) || !defined(INFER_NO_HF)
                if (!grammars[gi]) {
                    infer__json_doc sd, vd;
                    CHECK(infer__json_parse(&sd, test_schema, strlen(test_schema), &err) == INFER_OK);
                    if (infer__json_parse(&vd, out, strlen(out), &err) != INFER_OK) CHECK_MSG(0, "%s sample %d is not JSON (%s): '%s'", arch[a], k, err.msg, out);
                    else { CHECK_MSG(schema_valid(sd.root, sd.root, vd.root), "%s sample %d does not validate: '%s'", arch[a], k, out); infer__json_free(&vd); }
                    infer__json_free(&sd);
                }
#endif
            }
            infer_grammar_free(g);
            free(gbnf);
        }
        /* infer_generate takes the grammar from the sampler's parameters */
        infer_grammar *g = grammar_of("root ::= \"yes\" | \"no\" | \"maybe\"\n");
        if (g) {
            infer_sampler_params sp = infer_sampler_default_params();
            sp.grammar = g;
            int32_t ids[8];
            const int n_prompt = infer_tokenize(infer_model_tokenizer(m), "Answer:", 7, 1, 0, ids, 8);
            gen_text got;
            memset(&got, 0, sizeof got);
            infer_session_reset(s);
            got.m = m;
            CHECK(infer_generate(s, ids, n_prompt, 50, &sp, collect_piece, &got, NULL, &err) == INFER_OK);
            CHECK_MSG(!strcmp(got.text, "yes") || !strcmp(got.text, "no") || !strcmp(got.text, "maybe"), "infer_generate: '%s'", got.text);
            infer_grammar_free(g);
        }
        infer_session_free(s);
        infer_model_free(m);
    }
}

static const test_case tests[] = {
    { "toc_matches_anchors", test_toc_matches_anchors },
    { "header_order", test_header_order },
    { "util_default_threads", test_util_default_threads },
    { "util_pool_parts", test_util_pool_parts },
    { "util_fp16_bf16", test_util_fp16_bf16 },
    { "util_deal", test_util_deal },
    { "util_map_huge", test_util_map_huge },
    { "quant_golden", test_quant_golden },
    { "quant_dot_vs_dequant", test_quant_dot_vs_dequant },
    { "quant_i2_s", test_quant_i2_s },
    { "ternary_tiers_vs_scalar", test_ternary_tiers_vs_scalar },
    { "simd_dot_vs_scalar", test_simd_dot_vs_scalar },
    { "tiles_act_quant_vs_scalar", test_tiles_act_quant_vs_scalar },
    { "tiles_vs_dot", test_tiles_vs_dot },
    { "quant_repack", test_quant_repack },
#if defined(INFER__REPACK)
    { "tiles_repacked", test_tiles_repacked },
    { "tiles_x8", test_tiles_x8 },
    { "act_groups_fast", test_act_groups_fast },
#endif
    { "model_load_progress", test_model_load_progress },
    { "model_repack", test_model_repack },
    { "robust_act_quant_nonfinite", test_robust_act_quant_nonfinite },
    { "gguf_parse_valid", test_gguf_parse_valid },
    { "gguf_truncated", test_gguf_truncated },
    { "gguf_corrupt", test_gguf_corrupt },
    { "robust_gguf_alignment", test_robust_gguf_alignment },
    { "robust_gguf_type_ids", test_robust_gguf_type_ids },
    { "cpu_f16_store", test_cpu_f16_store },
    { "cpu_attention", test_cpu_attention },
    { "cpu_rope_decode", test_cpu_rope_decode },
    { "cpu_matmul_n", test_cpu_matmul_n },
    { "cpu_matmul_foresee", test_cpu_matmul_foresee },
    { "cpu_big_alloc", test_cpu_big_alloc },
    { "cpu_softmax", test_cpu_softmax },
    { "cpu_deltanet_chunked_vs_step", test_cpu_deltanet_chunked_vs_step },
    { "cpu_deltanet_step_equations", test_cpu_deltanet_step_equations },
    { "cpu_deltanet_step_wide", test_cpu_deltanet_step_wide },
    { "cpu_conv1d_state", test_cpu_conv1d_state },
    { "cpu_rope_multi", test_cpu_rope_multi },
    { "cpu_moe_route", test_cpu_moe_route },
    { "cpu_matmul_id", test_cpu_matmul_id },
    { "cpu_i2_s_matmul_glu", test_cpu_i2_s_matmul_glu },
    { "load_errors_keys", test_load_errors_keys },
    { "load_errors_qwen35", test_load_errors_qwen35 },
    { "load_errors_bitnet", test_load_errors_bitnet },
    { "session_chunks_threads_reset", test_session_chunks_threads_reset },
    { "golden_llama_f32", test_golden_llama_f32 },
    { "golden_llama_q8_0", test_golden_llama_q8_0 },
    { "golden_llama_q4_0", test_golden_llama_q4_0 },
    { "golden_llama_quants", test_golden_llama_quants },
    { "golden_llama_fast", test_golden_llama_fast },
    { "golden_llama3_ropescale", test_golden_llama3_ropescale },
    { "golden_qwen3", test_golden_qwen3 },
    { "golden_qwen3moe", test_golden_qwen3moe },
    { "golden_qwen3moe_mxfp4", test_golden_qwen3moe_mxfp4 },
    { "golden_qwen35", test_golden_qwen35 },
    { "golden_qwen35moe", test_golden_qwen35moe },
    { "golden_qwen35moe_mxfp4", test_golden_qwen35moe_mxfp4 },
    { "golden_qwen35_quants", test_golden_qwen35_quants },
    { "golden_bitnet_f32", test_golden_bitnet_f32 },
    { "golden_bitnet_tq2_0", test_golden_bitnet_tq2_0 },
    { "golden_bitnet_tq1_0", test_golden_bitnet_tq1_0 },
    { "golden_stories_greedy", test_golden_stories_greedy },
    { "golden_stories_nll", test_golden_stories_nll },
    { "golden_bitnet_i2_s", test_golden_bitnet_i2_s },
    { "forward_fast_invariance", test_forward_fast_invariance },
    { "forward_qwen35_prefill_vs_recurrent", test_forward_qwen35_prefill_vs_recurrent },
    { "forward_qwen35_other_shapes", test_forward_qwen35_other_shapes },
    { "forward_every_weight_type", test_forward_every_weight_type },
    { "forward_qwen2_vs_reference", test_forward_qwen2_vs_reference },
    { "forward_bitnet_vs_reference", test_forward_bitnet_vs_reference },
    { "golden_deepseek4", test_golden_deepseek4 },
    { "golden_deepseek4_fast", test_golden_deepseek4_fast },
    { "deepseek4_cache_bytes", test_deepseek4_cache_bytes },
    { "deepseek4_load_errors", test_deepseek4_load_errors },
    { "deepseek4_ops", test_deepseek4_ops },
    { "deepseek4_rope", test_deepseek4_rope },
    { "eval_prefix_rewind", test_eval_prefix_rewind },
    { "seq_batched_vs_alone", test_seq_batched_vs_alone },
    { "eval_greedy", test_eval_greedy },
    { "seq_prefix_cache", test_seq_prefix_cache },
    { "seq_pool_stress", test_seq_pool_stress },
    { "seq_rewind_shared", test_seq_rewind_shared },
    { "sampler_argmax", test_sampler_argmax },
    { "sampler_chain", test_sampler_chain },
    { "sampler_selection", test_sampler_selection },
    { "generate_streaming", test_generate_streaming },
    { "generate_options", test_generate_options },
    { "sampler_bias_penalties", test_sampler_bias_penalties },
    { "cli_stop_strings", test_cli_stop_strings },
    { "backend_fake_device", test_backend_fake_device },
    { "backend_refuses", test_backend_refuses },
    { "backend_diff_cpu", test_backend_diff_cpu },
    { "safetensors_parse", test_safetensors_parse },
    { "safetensors_corrupt", test_safetensors_corrupt },
    { "hf_roundtrip_llama", test_hf_roundtrip_llama },
    { "hf_roundtrip_llama3_ropescale", test_hf_roundtrip_llama3_ropescale },
    { "hf_roundtrip_qwen3", test_hf_roundtrip_qwen3 },
    { "hf_roundtrip_qwen3moe", test_hf_roundtrip_qwen3moe },
    { "hf_roundtrip_qwen35", test_hf_roundtrip_qwen35 },
    { "hf_roundtrip_qwen35moe", test_hf_roundtrip_qwen35moe },
    { "hf_roundtrip_bitnet", test_hf_roundtrip_bitnet },
    { "hf_dtypes", test_hf_dtypes },
    { "hf_tokenizer_vectors", test_hf_tokenizer_vectors },
    { "hf_tokenizer_vocab", test_hf_tokenizer_vocab },
    { "hf_folder_errors", test_hf_folder_errors },
    { "unicode_char_len", test_unicode_char_len },
    { "tokenizer_vocab_vectors", test_tokenizer_vocab_vectors },
    { "tokenizer_detok_stream", test_tokenizer_detok_stream },
    { "tokenizer_special_rstrip", test_tokenizer_special_rstrip },
    { "jinja_language", test_jinja_language },
    { "jinja_shared_templates", test_jinja_shared_templates },
    { "jinja_data_chat", test_jinja_data_chat },
    { "robust_nonfinite_model", test_robust_nonfinite_model },
    { "cli_contracts", test_cli_contracts },
    { "cli_setup", test_cli_setup },
    { "cli_default_model", test_cli_default_model },
    { "cli_habits", test_cli_habits },
    { "cli_conflicts", test_cli_conflicts },
    { "cli_tools_usage", test_cli_tools_usage },
    { "cli_chat_utf8", test_cli_chat_utf8 },
    { "cli_chat_render", test_cli_chat_render },
    { "cli_chat", test_cli_chat },
    { "cli_parallel", test_cli_parallel },
    { "cli_long_pieces", test_cli_long_pieces },
    { "cli_without_gpu", test_cli_without_gpu },
    { "server_cli", test_server_cli },
    { "server_endpoints", test_server_endpoints },
    { "server_errors", test_server_errors },
    { "server_concurrent", test_server_concurrent },
    { "server_disconnect", test_server_disconnect },
    { "server_openai_sdk", test_server_openai_sdk },
    { "server_page_browser", test_server_page_browser },
    { "server_timeout", test_server_timeout },
    { "server_fuzz_requests", test_server_fuzz_requests },
    { "server_response_format", test_server_response_format },
    { "server_asan", test_server_asan },
    { "server_parse", test_server_parse },
    { "server_tool_parse", test_server_tool_parse },
    { "server_tool_choice", test_server_tool_choice },
    { "server_tool_calls", test_server_tool_calls },
    { "robust_huge_context", test_robust_huge_context },
    { "robust_threads", test_robust_threads },
    { "robust_cli_leaks", test_robust_cli_leaks },
    { "convert_cli", test_convert_cli },
    { "convert_quantize", test_convert_quantize },
    { "convert_llama2c", test_convert_llama2c },
    { "convert_synth_vocab", test_convert_synth_vocab },
    { "convert_synth_qwen35", test_convert_synth_qwen35 },
    { "convert_synth_ftype", test_convert_synth_ftype },
    { "convert_synth_bitnet", test_convert_synth_bitnet },
    { "convert_synth_deepseek4", test_convert_synth_deepseek4 },
    { "convert_hf_folder", test_convert_hf_folder },
    { "train_grad", test_train_grad },
    { "train_tokenizer", test_train_tokenizer },
    { "train_export", test_train_export },
    { "train_run", test_train_run },
    { "tales_writes", test_tales_writes },
    { "robust_convert_zero_dim", test_robust_convert_zero_dim },
    { "robust_nonfinite_families", test_robust_nonfinite_families },
    { "fuzz_regress", test_fuzz_regress },
    { "cuda_decoders", test_cuda_decoders },
    { "gpu_diff_ops", test_gpu_diff_ops },
    { "gpu_diff_models", test_gpu_diff_models },
    { "gpu_act_quant", test_gpu_act_quant },
    { "gpu_fused_act", test_gpu_fused_act },
    { "gpu_fused_attention", test_gpu_fused_attention },
    { "gpu_matvec_fast", test_gpu_matvec_fast },
    { "gpu_indexer_ties", test_gpu_indexer_ties },
    { "gpu_attention_sparse", test_gpu_attention_sparse },
    { "gpu_flash_attention", test_gpu_flash_attention },
    { "gpu_attention_splits", test_gpu_attention_splits },
    { "gpu_bounded_ops", test_gpu_bounded_ops },
    { "gpu_deepseek4_golden", test_gpu_deepseek4_golden },
    { "gpu_seq_batch", test_gpu_seq_batch },
    { "gpu_batch_launches", test_gpu_batch_launches },
    { "gpu_mmv_launches", test_gpu_mmv_launches },
    { "gpu_greedy", test_gpu_greedy },
    { "gpu_pdl", test_gpu_pdl },
    { "gpu_golden_families", test_gpu_golden_families },
    { "gpu_stories_greedy", test_gpu_stories_greedy },
    { "gpu_server", test_gpu_server },
    { "gpu_decode_graph", test_gpu_decode_graph },
    { "gpu_deltanet_decode", test_gpu_deltanet_decode },
    { "gpu_golden_llama", test_gpu_golden_llama },
    { "cuda_int8_decoders", test_cuda_int8_decoders },
    { "gpu_int8_quant", test_gpu_int8_quant },
    { "gpu_int8_matmul", test_gpu_int8_matmul },
    { "gpu_mvq_pairs", test_gpu_mvq_pairs },
    { "gpu_mmv", test_gpu_mmv },
    { "gpu_norm_mv", test_gpu_norm_mv },
    { "gpu_qkv_store", test_gpu_qkv_store },
    { "gpu_int8_moe", test_gpu_int8_moe },
    { "gpu_int8_tiles", test_gpu_int8_tiles },
    { "gpu_half_matmul", test_gpu_half_matmul },
    { "gpu_qgemm", test_gpu_qgemm },
    { "gpu_qgemm_cache", test_gpu_qgemm_cache },
    { "gpu_argmax_rows", test_gpu_argmax_rows },
    { "gpu_deltanet_chunks", test_gpu_deltanet_chunks },
    { "grammar_suite", test_grammar_suite },
    { "grammar_errors", test_grammar_errors },
#if !defined(INFER_NO_JINJA) || !defined(INFER_NO_HF)
    { "grammar_json_schema", test_grammar_json_schema },
    { "grammar_cli", test_grammar_cli },
#endif
    { "grammar_generate", test_grammar_generate },
};

int main(int argc, char **argv) {
    int passed = 0, failed = 0, skipped = 0;
    if (argc == 2 && !strcmp(argv[1], "--write-toc")) return write_toc("infer.h");
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--list"))) {
        if (strcmp(argv[1], "--list"))
            printf("usage: ./tests [PART ...]   run the tests whose names contain one of the parts (all without any)\n"
                   "       ./tests --list       the test names\n"
                   "       ./tests --write-toc  rewrite infer.h's table of contents to match its sections\n"
                   "the last line is 'N passed, N failed, N skipped'; tests that need ../shared print SKIP lines without it\n\ntests:\n");
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) printf("%s%s\n", strcmp(argv[1], "--list") ? "  " : "", tests[i].name);
        return 0;
    }
    for (int a = 1; a < argc; a++)
        if (argv[a][0] == '-') { fprintf(stderr, "tests: unknown option '%s' (see --help)\n", argv[a]); return 2; }
    const char *tmp = getenv("TMPDIR");
    snprintf(t_tmpdir, sizeof t_tmpdir, "%s/infer-tests-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(t_tmpdir) || setenv("INFER_TMP", t_tmpdir, 1) != 0) { perror("tests: a temporary folder"); return 2; }
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        int selected = argc < 2;
        for (int a = 1; a < argc; a++) selected |= strstr(tests[i].name, argv[a]) != NULL;
        if (!selected) continue;
        t_failed = 0;
        t_skipped = 0;
        double t0 = infer_time_seconds();
        printf("%s\n", tests[i].name);
        fflush(stdout);
        tests[i].fn();
        double dt = infer_time_seconds() - t0;
        if (t_failed) { failed++; printf("  FAIL %s (%.2fs)\n", tests[i].name, dt); }
        else if (t_skipped) { skipped++; printf("  skipped %s (%.2fs)\n", tests[i].name, dt); }
        else { passed++; printf("  ok %s (%.2fs)\n", tests[i].name, dt); }
        fflush(stdout);
    }
    nftw(t_tmpdir, tmp_remove, 16, FTW_DEPTH | FTW_PHYS);
    if (argc > 1 && passed + failed + skipped == 0) { fprintf(stderr, "tests: no test name contains any of the parts given (./tests --list)\n"); return 2; }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
