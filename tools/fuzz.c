/* tools/fuzz.c -- a mutation fuzzer over everything infer reads from outside.
 *
 * TARGETS: one function each, fed arbitrary bytes. An error return is the right answer to a
 * bad input; a crash, a hang, a read out of bounds, a leak or undefined behaviour (the
 * fuzzer runs under ASan + UBSan) is a bug.
 *   gguf         a GGUF file: parsed; loaded as a model and as a vocabulary; a 3-token prompt
 *                and a decode step in the fast and the exact path; text tokenized and
 *                detokenized; every tensor's first row dequantized and re-quantized
 *   safetensors  a safetensors file: parsed, each tensor's first and last byte touched
 *   hf           a Hugging Face folder packed as an archive (below): loaded as a model (the
 *                GGUF infer_hf_load makes of it) and run; its tokenizer.json as a vocabulary
 *   tokenizer    a tokenizer.json: converted by infer_hf_vocab, written as a GGUF and that
 *                loaded; text tokenized and detokenized
 *   text         a prompt: tokenized and detokenized by each seed vocabulary (SentencePiece,
 *                GPT-2 and Llama-3 byte-level BPE, WordPiece)
 *   server       an HTTP request body (tools/server_req.c): parsed for each endpoint of
 *                `infer --server` -- completions, chat (its template rendered), tokenize,
 *                detokenize -- against a vocabulary and a context; and the same bytes as a
 *                model's reply, searched for tool calls
 * Archive of the hf target: records { u8 file, u32 length (little-endian), bytes }, file
 * indexing fuzz_hf_files[] (modulo its size); a record that runs past the end is cut.
 *
 * DRIVERS (make fuzz builds one and runs every target; see the Makefile). Both take
 *     FUZZ_TARGET=gguf ./tools/fuzz [-max_total_time=N] [-seed=S] [-runs=N] DIR...
 *   libFuzzer   clang -fsanitize=fuzzer,address,undefined -DFUZZ_LIBFUZZER: coverage-guided;
 *               new inputs go to the first DIR, a failing one to -artifact_prefix.
 *   built-in    any C compiler (with -fsanitize=address,undefined): replays every file of
 *               the DIRs, then mutates them for N seconds (or N runs): bit flips, bytes and
 *               integers overwritten with edge values (0, -1, 2^31, ...), small additions,
 *               block copies, inserts and deletes, JSON punctuation, splices of two inputs;
 *               deterministic for a seed. Other -options are libFuzzer's and ignored. On a
 *               crash the input is left in PREFIXcrash (-artifact_prefix=PREFIX; default
 *               fuzz-crash-TARGET), by a death callback or a signal handler.
 *                 ./tools/fuzz seeds DIR     writes the seed corpus to DIR/TARGET/ (data/fuzz)
 *                 ./tools/fuzz replay DIR    runs every file of DIR/TARGET/ for every target
 * tests.c includes this file (FUZZ_NO_MAIN) and replays data/fuzz in its fuzz_regress test:
 * the seeds, and every input that ever crashed, kept there as regression cases.
 */
#define INFER_IMPLEMENTATION
#include "../infer.h"
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"   /* each build uses a part: tests.c the targets, libFuzzer not the seeds */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/stat.h>

#include "server_req.c"               /* the server target: request bodies, tool calls */

/* ---- small helpers ---- */
typedef struct { uint8_t *p; size_t n, cap; } fuzz_buf;
static void fuzz_put(fuzz_buf *b, const void *d, size_t n) {
    if (b->n + n > b->cap || !b->p) {
        b->cap = (b->n + n) * 2 + 256;
        b->p = (uint8_t *)realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "fuzz: out of memory\n"); exit(1); }
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void fuzz_puts(fuzz_buf *b, const char *s) { fuzz_put(b, s, strlen(s)); }
static void fuzz_printf(fuzz_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fuzz_printf(fuzz_buf *b, const char *fmt, ...) {
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    fuzz_put(b, tmp, (size_t)(n < (int)sizeof tmp ? n : (int)sizeof tmp - 1));
}
/* s as a JSON string literal */
static void fuzz_json_str(fuzz_buf *b, const char *s) {
    fuzz_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') { char e[2] = { '\\', *s }; fuzz_put(b, e, 2); }
        else if ((unsigned char)*s < 0x20) fuzz_printf(b, "\\u%04x", (unsigned char)*s);
        else fuzz_put(b, s, 1);
    }
    fuzz_puts(b, "\"");
}
static int fuzz_write(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    const int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}
static uint8_t *fuzz_read(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fuzz_buf b = { 0 };
    uint8_t tmp[65536];
    size_t got;
    while ((got = fread(tmp, 1, sizeof tmp, f)) > 0) fuzz_put(&b, tmp, got);
    fclose(f);
    if (!b.p) fuzz_put(&b, "", 0);
    *n = b.n;
    return b.p;
}

/* A private scratch folder for the targets that need files (the hf archive, tokenizer.json,
 * the vocabulary GGUF), in /dev/shm where there is one; emptied and removed at exit. */
static char fuzz_dir_path[64];
static const char *const fuzz_hf_files[8] = {
    "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json",
    "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "vocab.gguf",
};
static void fuzz_dir_clear(void) {
    char p[128];
    for (int i = 0; i < 8 && fuzz_dir_path[0]; i++) { snprintf(p, sizeof p, "%s/%s", fuzz_dir_path, fuzz_hf_files[i]); unlink(p); }
}
static void fuzz_dir_remove(void) {
    fuzz_dir_clear();
    if (fuzz_dir_path[0]) rmdir(fuzz_dir_path);
    fuzz_dir_path[0] = 0;
}
static const char *fuzz_dir(void) {
    static int registered;
    if (!fuzz_dir_path[0]) {
        struct stat st;
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/infer-fuzz-XXXXXX", stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(fuzz_dir_path)) { fprintf(stderr, "fuzz: cannot make a scratch folder: %s\n", strerror(errno)); exit(1); }
        if (!registered++) atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}
static const char *fuzz_path(const char *name) {
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", fuzz_dir(), name);
    return p;
}

/* ---- what the targets do with what loaded ----
 * FUZZ_VERBOSE=1 in the environment says how far each input got (to check the seeds). */
static int fuzz_verbose = -1;
static void fuzz_say(const char *what, const char *msg) {
    if (fuzz_verbose < 0) fuzz_verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (fuzz_verbose) fprintf(stderr, "  %s%s%s\n", what, msg ? ": " : "", msg ? msg : "");
}

static const char *const fuzz_texts[] = {
    "Hello world", " leading space and trailing  ", "multi\n\nline\ttabs\r\n", "\xc3\xbc" "n\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82",
    "<s></s><unk><|endoftext|>[CLS][SEP]<pad>", "\xff\xfe bad utf-8 \xc3\x28 \xe2\x82 \xf0\x9f", "12345 3.14 it's don't WE'LL", "",
};

/* tokenize text in every mode, detokenize the ids in one go and streamed */
static void fuzz_tokenize(const infer_tokenizer *t, const char *text, size_t len) {
    int32_t small[256], *ids = small;
    char out[2048];
    for (int mode = 0; mode < 4; mode++) {
        int n = infer_tokenize(t, text, len, mode & 1, mode >> 1, ids, 256);
        if (n > 256) {
            ids = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
            if (!ids) return;
            n = infer_tokenize(t, text, len, mode & 1, mode >> 1, ids, n);
        }
        if (n > 0) {
            for (int special = 0; special < 2; special++) infer_detokenize(t, ids, n, !special, special, out, sizeof out);
            infer_detok d;
            infer_detok_init(&d, t);
            for (int i = 0; i < n; i++) infer_detok_push(&d, ids[i], out, sizeof out);
            infer_detok_flush(&d, out, sizeof out);
        }
        if (ids != small) { free(ids); ids = small; }
    }
}

static void fuzz_use_tokenizer(const infer_tokenizer *t) {
    if (!t) return;
    for (size_t i = 0; i < sizeof fuzz_texts / sizeof fuzz_texts[0]; i++) fuzz_tokenize(t, fuzz_texts[i], strlen(fuzz_texts[i]));
    char buf[256];
    const int32_t nv = t->n_vocab;
    const int32_t probe[4] = { -1, nv, nv + 1, INT32_MAX };
    for (int i = 0; i < 4; i++) infer_token_to_piece(t, probe[i], 1, buf, sizeof buf);
    for (int32_t id = 0; id < nv && id < 512; id++) {
        infer_token_to_piece(t, id, id & 1, buf, sizeof buf);
        infer_token_is_eog(t, id);
        infer_token_is_control(t, id);
    }
}

/* a 3-token prompt in chunks of 2 and a decode step, fast (2 threads) and exact (1 thread) */
static void fuzz_run_model(infer_model *m) {
    const infer_config *c = infer_model_config(m);
    if (!c || c->n_vocab <= 0) return;
    const int32_t ids[3] = { 0, c->n_vocab - 1, c->n_vocab / 2 };
    for (int precise = 0; precise < 2; precise++) {
        infer_session_params sp = infer_session_default_params();
        sp.n_ctx = 16;
        sp.n_ubatch = 2;
        sp.n_threads = precise ? 1 : 2;
        sp.precise = precise;
        infer_session *s;
        infer_error err;
        if (infer_session_create(&s, m, &sp, &err) != INFER_OK) continue;
        float *logits = (float *)malloc(sizeof(float) * (size_t)c->n_vocab * 3);
        if (logits && infer_eval(s, ids, 3, logits, 1, &err) == INFER_OK && infer_eval(s, ids + 1, 1, logits, 0, &err) == INFER_OK)
            fuzz_say(precise ? "ran (exact)" : "ran (fast)", NULL);
        else fuzz_say("eval", err.msg);
        free(logits);
        infer_session_free(s);
    }
}

/* every tensor's first row dequantized, then quantized as a few types (convert's path) */
static void fuzz_tensors(const infer_gguf *g) {
    enum { KMAX = 4096 };
    static float row[KMAX];
    static uint8_t q[KMAX * 2];
    const infer_type to[4] = { INFER_TYPE_Q8_0, INFER_TYPE_Q4_K, INFER_TYPE_IQ4_XS, INFER_TYPE_TQ1_0 };
    for (int64_t i = 0; i < g->n_tensors && i < 64; i++) {
        const infer_tensor *t = &g->tensors[i];
        const int64_t K = t->ne[0];
        if (K <= 0 || K > KMAX || !t->data || t->nbytes < infer_type_row_size(t->type, K) + (t->type == INFER_TYPE_I2_S ? 32 : 0)) continue;
        infer__dequant_row(t, 0, row);
        infer_error err;
        for (int k = 0; k < 4; k++)
            if (K % infer_type_block(to[k]) == 0) infer_quantize(to[k], row, q, K, &err);
    }
}

/* ---- the targets ---- */

static void fuzz_gguf(const uint8_t *d, size_t n) {
    uint8_t *p = (uint8_t *)malloc(n ? n : 1);     /* a private, aligned copy: the model points into it */
    if (!p) return;
    memcpy(p, d, n);
    infer_gguf g;
    infer_error err;
    if (infer_gguf_parse(&g, p, n, &err) == INFER_OK) { fuzz_say("parsed", NULL); fuzz_tensors(&g); infer_gguf_free(&g); }
    else fuzz_say("parse", err.msg);
    for (int vocab_only = 0; vocab_only < 2; vocab_only++) {
        infer_model_params mp;
        memset(&mp, 0, sizeof mp);
        mp.vocab_only = vocab_only;
        infer_model *m;
        if (infer_model_load_memory(&m, p, n, &mp, &err) != INFER_OK) { fuzz_say(vocab_only ? "vocabulary load" : "load", err.msg); continue; }
        fuzz_say(vocab_only ? "vocabulary loaded" : "loaded", infer_model_tokenizer(m) ? "with a vocabulary" : NULL);
        fuzz_use_tokenizer(infer_model_tokenizer(m));
        if (!vocab_only) fuzz_run_model(m);
        infer_model_free(m);
        if (!vocab_only) break;                        /* the vocabulary was just used */
    }
    free(p);
}

static void fuzz_safetensors(const uint8_t *d, size_t n) {
    uint8_t *p = (uint8_t *)malloc(n ? n : 1);
    if (!p) return;
    memcpy(p, d, n);
    infer_safetensors st;
    infer_error err;
    if (infer_safetensors_parse(&st, p, n, &err) == INFER_OK) {
        volatile uint8_t sink = 0;
        for (int64_t i = 0; i < st.n_tensors; i++) {
            const infer_st_tensor *t = &st.tensors[i];
            if (t->nbytes) sink ^= ((const uint8_t *)t->data)[0] ^ ((const uint8_t *)t->data)[t->nbytes - 1];
            infer_safetensors_tensor(&st, t->name);
        }
        (void)sink;
        infer_safetensors_free(&st);
    }
    free(p);
}

static void fuzz_hf(const uint8_t *d, size_t n) {
    fuzz_dir_clear();
    for (size_t pos = 0; pos + 5 <= n;) {
        const int file = d[pos] % 7;                   /* vocab.gguf is the tokenizer target's */
        uint32_t len;
        memcpy(&len, d + pos + 1, 4);
        pos += 5;
        if (len > n - pos) len = (uint32_t)(n - pos);
        fuzz_write(fuzz_path(fuzz_hf_files[file]), d + pos, len);
        pos += len;
    }
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, fuzz_dir(), NULL, &err) == INFER_OK) {
        fuzz_say("loaded", NULL);
        fuzz_tensors(infer_model_gguf(m));
        fuzz_use_tokenizer(infer_model_tokenizer(m));
        fuzz_run_model(m);
        infer_model_free(m);
    }
    infer_gguf g;
    if (infer_hf_vocab(&g, fuzz_path("tokenizer.json"), &err) == INFER_OK) infer_gguf_free(&g);
    fuzz_dir_clear();
}

static void fuzz_tokenizer(const uint8_t *d, size_t n) {
    fuzz_dir_clear();
    infer_gguf g;
    infer_error err;
    if (fuzz_write(fuzz_path("tokenizer.json"), d, n) && infer_hf_vocab(&g, fuzz_path("tokenizer.json"), &err) == INFER_OK) {
        if (infer_gguf_write(fuzz_path("vocab.gguf"), g.kv, g.n_kv, NULL, 0, 32, &err) == INFER_OK) {
            infer_model_params mp = { .vocab_only = 1 };
            infer_model *m;
            if (infer_model_load(&m, fuzz_path("vocab.gguf"), &mp, &err) == INFER_OK) {
                fuzz_say("vocabulary GGUF loaded", NULL);
                fuzz_use_tokenizer(infer_model_tokenizer(m));
                infer_model_free(m);
            }
        }
        infer_gguf_free(&g);
    }
    fuzz_dir_clear();
}

/* ---- seed vocabularies and models ----
 * Small, but each a real instance of its format: the seeds load, run and tokenize, so
 * mutations start from inputs that reach deep into the code. */

/* GPT-2's byte -> printable character map (bytes that are printable map to themselves,
 * the others to U+0100 onwards), as UTF-8 */
static void fuzz_gpt2_byte(int byte, char *out) {
    int cp = byte, extra = 0;
    if (!((byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174)) {
        for (int b = 0; b < byte; b++) extra += !((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174);
        cp = 256 + extra;
    }
    if (cp < 0x80) { out[0] = (char)cp; out[1] = 0; }
    else { out[0] = (char)(0xc0 | cp >> 6); out[1] = (char)(0x80 | (cp & 63)); out[2] = 0; }
}

/* tokenizer.json of a byte-level BPE: the 256 byte characters, merges of a few English
 * pieces, <|endoftext|>; pre-tokenizer GPT-2 (llama3 = 0) or Llama 3's Split regex */
static const char *const fuzz_merges[][2] = {
    { "\xc4\xa0", "t" }, { "h", "e" }, { "\xc4\xa0t", "he" }, { "i", "n" }, { "\xc4\xa0", "a" }, { "e", "r" }, { "o", "n" },
    { "\xc4\xa0", "w" }, { "o", "r" }, { "\xc4\xa0w", "or" }, { "l", "d" }, { "\xc4\xa0wor", "ld" }, { "\xc4\xa0", "s" }, { "a", "n" },
};
#define FUZZ_N_MERGES ((int)(sizeof fuzz_merges / sizeof fuzz_merges[0]))
static void fuzz_bpe_json(fuzz_buf *b, int llama3) {
    fuzz_puts(b, "{\"version\":\"1.0\",\"added_tokens\":[{\"id\":");
    fuzz_printf(b, "%d", 256 + FUZZ_N_MERGES);
    fuzz_puts(b, ",\"content\":\"<|endoftext|>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true}],\n");
    if (llama3) {
        fuzz_puts(b, "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":");
        fuzz_json_str(b, INFER__HF_RX_LLAMA3);
        fuzz_puts(b, "},\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":false}]},\n");
    } else {
        fuzz_puts(b, "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true},\n");
    }
    fuzz_puts(b, "\"decoder\":{\"type\":\"ByteLevel\"},\n\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,\"byte_fallback\":false,\"vocab\":{");
    for (int i = 0; i < 256; i++) {
        char c[4];
        fuzz_gpt2_byte(i, c);
        if (i) fuzz_puts(b, ",");
        fuzz_json_str(b, c);
        fuzz_printf(b, ":%d", i);
    }
    for (int i = 0; i < FUZZ_N_MERGES; i++) {
        char t[32];
        snprintf(t, sizeof t, "%s%s", fuzz_merges[i][0], fuzz_merges[i][1]);
        fuzz_puts(b, ",");
        fuzz_json_str(b, t);
        fuzz_printf(b, ":%d", 256 + i);
    }
    fuzz_puts(b, "},\"merges\":[");
    for (int i = 0; i < FUZZ_N_MERGES; i++) {
        char t[32];
        snprintf(t, sizeof t, "%s %s", fuzz_merges[i][0], fuzz_merges[i][1]);
        if (i) fuzz_puts(b, ",");
        fuzz_json_str(b, t);
    }
    fuzz_puts(b, "]}}\n");
}

/* GGUF string-array encoding of n token texts */
static void fuzz_gguf_strings(fuzz_buf *b, char (*tok)[16], int n) {
    for (int i = 0; i < n; i++) {
        const uint64_t len = strlen(tok[i]);
        fuzz_put(b, &len, 8);
        fuzz_put(b, tok[i], len);
    }
}

/* the tokenizer.ggml.* keys of a SentencePiece vocabulary of V >= 300 ids (<unk> <s> </s>,
 * the byte tokens, then "▁x" / "x" pieces), or of a WordPiece one (bert: [PAD] [UNK] [CLS]
 * [SEP] [MASK], letters, "##x", words) */
typedef struct {
    char tok[300][16];
    float score[300];
    int32_t type[300];
    fuzz_buf enc;
    infer_gguf_kv kv[10];
    int n_kv;
} fuzz_vocab;
static void fuzz_vocab_make(fuzz_vocab *v, int bert) {
    static const char *const words[] = { "the", "hello", "world", "fox", "dog", "un", "##able", "##ing" };
    memset(v, 0, sizeof *v);
    for (int i = 0; i < 300; i++) {
        char *t = v->tok[i];
        if (bert) {
            static const char *const sp[5] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]" };
            if (i < 5) snprintf(t, 16, "%s", sp[i]);
            else if (i < 5 + 94) snprintf(t, 16, "%c", 33 + (i - 5));                       /* printable ASCII */
            else if (i < 5 + 94 + 26) snprintf(t, 16, "##%c", 'a' + (i - 99));
            else if (i < 125 + 8) snprintf(t, 16, "%s", words[i - 125]);
            else snprintf(t, 16, "%c%c", 'a' + (i - 133) / 26, 'a' + (i - 133) % 26);
            v->type[i] = i < 5 ? 3 : 1;
        } else {
            if (i < 3) snprintf(t, 16, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
            else if (i < 259) snprintf(t, 16, "<0x%02X>", i - 3);
            else if (i < 285) snprintf(t, 16, "\xe2\x96\x81%c", 'a' + (i - 259));
            else snprintf(t, 16, "%c", 'a' + (i - 285));
            v->type[i] = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1;
        }
        v->score[i] = -(float)i;
    }
    fuzz_gguf_strings(&v->enc, v->tok, 300);
    infer_gguf_kv *kv = v->kv;
    int n = 0;
    kv[n++] = infer_gguf_kv_str("tokenizer.ggml.model", bert ? "bert" : "llama");
    kv[n++] = infer_gguf_kv_array("tokenizer.ggml.tokens", INFER_GGUF_STRING, 300, v->enc.p);
    kv[n++] = infer_gguf_kv_array("tokenizer.ggml.scores", INFER_GGUF_F32, 300, v->score);
    kv[n++] = infer_gguf_kv_array("tokenizer.ggml.token_type", INFER_GGUF_I32, 300, v->type);
    kv[n++] = infer_gguf_kv_u32("tokenizer.ggml.unknown_token_id", bert ? 1 : 0);
    kv[n++] = infer_gguf_kv_u32("tokenizer.ggml.bos_token_id", bert ? 2 : 1);
    kv[n++] = infer_gguf_kv_u32("tokenizer.ggml.eos_token_id", bert ? 3 : 2);
    if (bert) { kv[n++] = infer_gguf_kv_u32("tokenizer.ggml.seperator_token_id", 3); kv[n++] = infer_gguf_kv_u32("tokenizer.ggml.padding_token_id", 0); }
    v->n_kv = n;
}

/* A model in the family's GGUF layout, every dimension tiny. Tensors get deterministic
 * pseudo-random values (small, so activations stay finite) in the listed types. */
typedef struct { infer_tensor t[128]; char names[128][48]; void *data[128]; int n; uint64_t rng; } fuzz_model;
static void fuzz_tensor(fuzz_model *M, const char *name, infer_type type, int64_t ne0, int64_t ne1, int64_t ne2, float fill) {
    infer_tensor *t = &M->t[M->n];
    memset(t, 0, sizeof *t);
    snprintf(M->names[M->n], sizeof M->names[M->n], "%s", name);
    t->name = M->names[M->n];
    if (ne1 == 0) type = INFER_TYPE_F32;
    t->type = type;
    t->n_dims = ne2 > 1 ? 3 : ne1 ? 2 : 1;
    t->ne[0] = ne0; t->ne[1] = ne1 ? ne1 : 1; t->ne[2] = ne2 > 1 ? ne2 : 1; t->ne[3] = 1;
    t->scale = 1.0f;
    const int64_t rows = t->ne[1] * t->ne[2], cnt = ne0 * rows;
    float *x = (float *)malloc(sizeof(float) * (size_t)cnt);
    for (int64_t i = 0; i < cnt; i++) {
        M->rng = M->rng * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = fill != 0 ? fill : ((float)(M->rng >> 40) / (float)(1 << 24) - 0.5f) * 0.4f;
    }
    if (type == INFER_TYPE_F32) { t->data = x; t->nbytes = (size_t)cnt * 4; M->data[M->n++] = x; return; }
    if (type == INFER_TYPE_I2_S) {
        t->nbytes = (size_t)cnt / 4 + 32;
        uint8_t *q = (uint8_t *)calloc(1, t->nbytes);
        infer__quant_i2_s(x, q, cnt);
        t->scale = infer__i2_s_scale(q, cnt);
        t->data = q;
        M->data[M->n++] = q;
        free(x);
        return;
    }
    const size_t rb = infer_type_row_size(type, ne0);
    uint8_t *q = (uint8_t *)calloc(1, rb * (size_t)rows);
    infer_error err;
    for (int64_t r = 0; r < rows; r++) infer_quantize(type, x + r * ne0, q + (size_t)r * rb, ne0, &err);
    t->data = q;
    t->nbytes = rb * (size_t)rows;
    M->data[M->n++] = q;
    free(x);
}

/* family 0 llama (with a SentencePiece vocabulary; 32-block types), 1 bitnet (I2_S), 2 qwen35
 * (gated DeltaNet + gated attention), 3 qwen35moe (experts + shared expert), 4 qwen3moe,
 * 5 llama in k-quants and 256-block types (rows of 256: the Q8_K activation paths) */
#define FUZZ_N_FAMILIES 6
static const char *const fuzz_family[FUZZ_N_FAMILIES] = { "llama", "bitnet", "qwen35", "qwen35moe", "qwen3moe", "llama-kquants" };
static int fuzz_model_seed(const char *path, int family) {
    static const char *const arch[FUZZ_N_FAMILIES] = { "llama", "bitnet", "qwen35", "qwen35moe", "qwen3moe", "llama" };
    fuzz_model M;
    memset(&M, 0, sizeof M);
    M.rng = 12345 + (uint64_t)family;
    const int hybrid = family == 2 || family == 3, moe = family == 3 || family == 4, bitnet = family == 1, kq = family == 5;
    const int64_t E = bitnet ? 128 : kq ? 256 : 32, H = 2, HKV = 1, hd = bitnet ? 64 : 16 * (1 + kq), FF = bitnet ? 128 : kq ? 32 : 64;
    const int64_t V = family == 0 ? 300 : 64;
    const int64_t NX = 4, NU = 2, FX = 32, FS = 32;                   /* experts, used, their size, the shared one's */
    const int64_t KH = 1, VH = 2, DS = 16, KD = KH * DS, VD = VH * DS, CD = 2 * KD + VD, CONV = 4;
    const int n_layer = hybrid ? 2 : 1;
    const infer_type wt = bitnet ? INFER_TYPE_I2_S : family == 0 ? INFER_TYPE_Q4_0 : INFER_TYPE_Q8_0;
    /* the types of: token_embd, output, attn q k v output, ffn gate up down */
    static const infer_type types[2][9] = {
        { INFER_TYPE_Q8_0, INFER_TYPE_Q5_1, INFER_TYPE_Q4_1, INFER_TYPE_Q5_0, INFER_TYPE_IQ4_NL, INFER_TYPE_Q8_0, INFER_TYPE_MXFP4, INFER_TYPE_BF16, INFER_TYPE_F16 },
        { INFER_TYPE_Q4_K, INFER_TYPE_TQ2_0, INFER_TYPE_Q4_K, INFER_TYPE_Q6_K, INFER_TYPE_Q5_K, INFER_TYPE_Q4_0, INFER_TYPE_Q2_K, INFER_TYPE_IQ4_XS, INFER_TYPE_Q8_0 },
    };
    const int own = family == 0 || kq;                                /* the types above, else wt */
    const infer_type *ty = types[kq];
#define TY(i) (own ? ty[i] : wt)
    char nm[64];
    fuzz_tensor(&M, "token_embd.weight", own ? ty[0] : INFER_TYPE_Q8_0, E, V, 1, 0);
    fuzz_tensor(&M, "output_norm.weight", INFER_TYPE_F32, E, 0, 1, 1.0f);
    if (own) fuzz_tensor(&M, "output.weight", ty[1], E, V, 1, 0);
    for (int l = 0; l < n_layer; l++) {
#define T(suffix, type, ne0, ne1, ne2, fill) (snprintf(nm, sizeof nm, "blk.%d." suffix, l), fuzz_tensor(&M, nm, type, ne0, ne1, ne2, fill))
        T("attn_norm.weight", INFER_TYPE_F32, E, 0, 1, 1.0f);
        if (hybrid) T("post_attention_norm.weight", INFER_TYPE_F32, E, 0, 1, 1.0f);
        else T("ffn_norm.weight", INFER_TYPE_F32, E, 0, 1, 1.0f);
        if (hybrid && l == 0) {                                       /* a gated DeltaNet layer */
            T("attn_qkv.weight", wt, E, CD, 1, 0);
            T("attn_gate.weight", wt, E, VD, 1, 0);
            T("ssm_alpha.weight", INFER_TYPE_F32, E, VH, 1, 0);
            T("ssm_beta.weight", INFER_TYPE_F32, E, VH, 1, 0);
            T("ssm_conv1d.weight", INFER_TYPE_F32, CONV, CD, 1, 0);
            T("ssm_dt.bias", INFER_TYPE_F32, VH, 0, 1, 0.5f);
            T("ssm_a", INFER_TYPE_F32, VH, 0, 1, -1.0f);
            T("ssm_norm.weight", INFER_TYPE_F32, DS, 0, 1, 1.0f);
            T("ssm_out.weight", wt, VD, E, 1, 0);
        } else {
            T("attn_q.weight", TY(2), E, (hybrid ? 2 : 1) * H * hd, 1, 0);
            T("attn_k.weight", TY(3), E, HKV * hd, 1, 0);
            T("attn_v.weight", TY(4), E, HKV * hd, 1, 0);
            T("attn_output.weight", TY(5), H * hd, E, 1, 0);
            if (hybrid || family == 4) { T("attn_q_norm.weight", INFER_TYPE_F32, hd, 0, 1, 1.0f); T("attn_k_norm.weight", INFER_TYPE_F32, hd, 0, 1, 1.0f); }
            if (bitnet) T("attn_sub_norm.weight", INFER_TYPE_F32, H * hd, 0, 1, 1.0f);
        }
        if (moe) {
            T("ffn_gate_inp.weight", INFER_TYPE_F32, E, NX, 1, 0);
            T("ffn_gate_exps.weight", INFER_TYPE_Q4_0, E, FX, NX, 0);
            T("ffn_up_exps.weight", INFER_TYPE_Q4_0, E, FX, NX, 0);
            T("ffn_down_exps.weight", INFER_TYPE_Q4_0, FX, E, NX, 0);
            if (family == 3) {
                T("ffn_gate_inp_shexp.weight", INFER_TYPE_F32, E, 1, 1, 0);
                T("ffn_gate_shexp.weight", wt, E, FS, 1, 0);
                T("ffn_up_shexp.weight", wt, E, FS, 1, 0);
                T("ffn_down_shexp.weight", wt, FS, E, 1, 0);
            }
        } else {
            T("ffn_gate.weight", TY(6), E, FF, 1, 0);
            T("ffn_up.weight", TY(7), E, FF, 1, 0);
            T("ffn_down.weight", TY(8), FF, E, 1, 0);
            if (bitnet) T("ffn_sub_norm.weight", INFER_TYPE_F32, FF, 0, 1, 1.0f);
        }
#undef T
    }
#undef TY
    char keys[32][64];
    infer_gguf_kv kv[48];
    int nkv = 0;
    const char *A = arch[family];
#define KEY(suffix) (snprintf(keys[nkv], sizeof keys[nkv], "%s." suffix, A), keys[nkv])
    kv[nkv] = infer_gguf_kv_str("general.architecture", A); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("context_length"), 64); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("embedding_length"), (uint32_t)E); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("block_count"), (uint32_t)n_layer); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("feed_forward_length"), (uint32_t)FF); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count"), (uint32_t)H); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count_kv"), (uint32_t)HKV); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.key_length"), (uint32_t)hd); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.value_length"), (uint32_t)hd); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("attention.layer_norm_rms_epsilon"), 1e-5f); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("rope.freq_base"), 10000.0f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("vocab_size"), (uint32_t)V); nkv++;
    const int32_t sections[4] = { 2, 2, 0, 0 };
    if (hybrid) {
        kv[nkv] = infer_gguf_kv_u32(KEY("rope.dimension_count"), 8); nkv++;
        kv[nkv] = infer_gguf_kv_array(KEY("rope.dimension_sections"), INFER_GGUF_I32, 4, sections); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("ssm.conv_kernel"), (uint32_t)CONV); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("ssm.state_size"), (uint32_t)DS); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("ssm.group_count"), (uint32_t)KH); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("ssm.time_step_rank"), (uint32_t)VH); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("ssm.inner_size"), (uint32_t)VD); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("full_attention_interval"), 2); nkv++;
    }
    if (moe) {
        kv[nkv] = infer_gguf_kv_u32(KEY("expert_count"), (uint32_t)NX); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("expert_used_count"), (uint32_t)NU); nkv++;
        kv[nkv] = infer_gguf_kv_u32(KEY("expert_feed_forward_length"), (uint32_t)FX); nkv++;
        if (family == 3) { kv[nkv] = infer_gguf_kv_u32(KEY("expert_shared_feed_forward_length"), (uint32_t)FS); nkv++; }
    }
    if (bitnet) { kv[nkv] = infer_gguf_kv_str(KEY("hidden_activation"), "relu2"); nkv++; }
#undef KEY
    fuzz_vocab *voc = NULL;
    if (family == 0) {
        voc = (fuzz_vocab *)malloc(sizeof *voc);
        fuzz_vocab_make(voc, 0);
        for (int i = 0; i < voc->n_kv; i++) kv[nkv++] = voc->kv[i];
    }
    infer_error err;
    const int ok = infer_gguf_write(path, kv, nkv, M.t, M.n, 32, &err) == INFER_OK;
    if (!ok) fprintf(stderr, "fuzz: %s: %s\n", path, err.msg);
    for (int i = 0; i < M.n; i++) free(M.data[i]);
    if (voc) { free(voc->enc.p); free(voc); }
    return ok;
}

/* deepseek4, tiny: a window-only, a CSA (ratio 4, the indexer) and an HCA layer (ratio 8 here,
 * so a short run closes entries of both kinds), hyper-connections, MXFP4 experts, a hash-routed
 * first layer (its i32 table) */
static int fuzz_dsv4_seed(const char *path) {
    fuzz_model M;
    memset(&M, 0, sizeof M);
    M.rng = 777;
    const int64_t E = 32, H = 2, d = 16, QL = 16, G = 2, R = 8, V = 64, NX = 4, NU = 2, FX = 32, HC = 4, NM = HC * (2 + HC), NI = 2, DI = 16;
    const uint32_t ratios[3] = { 0, 4, 8 };
    const float clamps[3] = { 10.0f, 10.0f, 10.0f };
    char nm[64];
    fuzz_tensor(&M, "token_embd.weight", INFER_TYPE_Q8_0, E, V, 1, 0);
    fuzz_tensor(&M, "output.weight", INFER_TYPE_Q8_0, E, V, 1, 0);
    fuzz_tensor(&M, "output_norm.weight", INFER_TYPE_F32, E, 0, 1, 1.0f);
    fuzz_tensor(&M, "output_hc_fn.weight", INFER_TYPE_F32, HC * E, HC, 1, 0);
    fuzz_tensor(&M, "output_hc_base.weight", INFER_TYPE_F32, HC, 0, 1, 0.1f);
    fuzz_tensor(&M, "output_hc_scale.weight", INFER_TYPE_F32, 1, 0, 1, 0.5f);
    int32_t tid2eid[64 * 2];
    for (int i = 0; i < V * NU; i++) tid2eid[i] = (i * 3 + i / (int)NU) % (int)NX;
    for (int l = 0; l < 3; l++) {
#define T(suffix, type, ne0, ne1, ne2, fill) (snprintf(nm, sizeof nm, "blk.%d." suffix, l), fuzz_tensor(&M, nm, type, ne0, ne1, ne2, fill))
        const int64_t m = ratios[l], coff = m == 4 ? 2 : 1;
        T("attn_norm.weight", INFER_TYPE_F32, E, 0, 1, 1.0f);
        T("attn_sinks.weight", INFER_TYPE_F32, H, 0, 1, 0.5f);
        T("attn_q_a.weight", INFER_TYPE_Q8_0, E, QL, 1, 0);
        T("attn_q_a_norm.weight", INFER_TYPE_F32, QL, 0, 1, 1.0f);
        T("attn_q_b.weight", INFER_TYPE_F32, QL, H * d, 1, 0);
        T("attn_kv.weight", INFER_TYPE_Q8_0, E, d, 1, 0);
        T("attn_kv_a_norm.weight", INFER_TYPE_F32, d, 0, 1, 1.0f);
        T("attn_output_a.weight", INFER_TYPE_F32, H * d / G, G * R, 1, 0);
        T("attn_output_b.weight", INFER_TYPE_F32, G * R, E, 1, 0);
        T("hc_attn_fn.weight", INFER_TYPE_F32, HC * E, NM, 1, 0);
        T("hc_attn_base.weight", INFER_TYPE_F32, NM, 0, 1, 0.1f);
        T("hc_attn_scale.weight", INFER_TYPE_F32, 3, 0, 1, 0.5f);
        T("hc_ffn_fn.weight", INFER_TYPE_F32, HC * E, NM, 1, 0);
        T("hc_ffn_base.weight", INFER_TYPE_F32, NM, 0, 1, 0.1f);
        T("hc_ffn_scale.weight", INFER_TYPE_F32, 3, 0, 1, 0.5f);
        if (m) {
            T("attn_compressor_kv.weight", INFER_TYPE_F32, E, coff * d, 1, 0);
            T("attn_compressor_gate.weight", INFER_TYPE_F32, E, coff * d, 1, 0);
            T("attn_compressor_ape.weight", INFER_TYPE_F32, coff * d, m, 1, 0);
            T("attn_compressor_norm.weight", INFER_TYPE_F32, d, 0, 1, 1.0f);
        }
        if (m == 4) {
            T("indexer.proj.weight", INFER_TYPE_F32, E, NI, 1, 0);
            T("indexer.attn_q_b.weight", INFER_TYPE_F32, QL, NI * DI, 1, 0);
            T("indexer_compressor_kv.weight", INFER_TYPE_F32, E, 2 * DI, 1, 0);
            T("indexer_compressor_gate.weight", INFER_TYPE_F32, E, 2 * DI, 1, 0);
            T("indexer_compressor_ape.weight", INFER_TYPE_F32, 2 * DI, 4, 1, 0);
            T("indexer_compressor_norm.weight", INFER_TYPE_F32, DI, 0, 1, 1.0f);
        }
        T("ffn_norm.weight", INFER_TYPE_F32, E, 0, 1, 1.0f);
        T("ffn_gate_inp.weight", INFER_TYPE_F32, E, NX, 1, 0);
        T("ffn_gate_exps.weight", INFER_TYPE_MXFP4, E, FX, NX, 0);
        T("ffn_up_exps.weight", INFER_TYPE_MXFP4, E, FX, NX, 0);
        T("ffn_down_exps.weight", INFER_TYPE_MXFP4, FX, E, NX, 0);
        T("ffn_gate_shexp.weight", INFER_TYPE_Q8_0, E, FX, 1, 0);
        T("ffn_up_shexp.weight", INFER_TYPE_Q8_0, E, FX, 1, 0);
        T("ffn_down_shexp.weight", INFER_TYPE_Q8_0, FX, E, 1, 0);
        if (l > 0) T("exp_probs_b.bias", INFER_TYPE_F32, NX, 0, 1, 0.05f);
#undef T
    }
    infer_tensor *t = &M.t[M.n++];               /* the hash table of layer 0 (not a float tensor) */
    memset(t, 0, sizeof *t);
    t->name = "blk.0.ffn_gate_tid2eid.weight";
    t->type = INFER_TYPE_I32;
    t->n_dims = 2;
    t->ne[0] = NU; t->ne[1] = V; t->ne[2] = t->ne[3] = 1;
    t->data = tid2eid;
    t->nbytes = sizeof tid2eid;
    t->scale = 1.0f;
    char keys[40][64];
    infer_gguf_kv kv[48];
    int nkv = 0;
#define KEY(suffix) (snprintf(keys[nkv], sizeof keys[nkv], "deepseek4." suffix), keys[nkv])
    kv[nkv] = infer_gguf_kv_str("general.architecture", "deepseek4"); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("context_length"), 64); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("embedding_length"), (uint32_t)E); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("block_count"), 3); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("feed_forward_length"), (uint32_t)FX); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count"), (uint32_t)H); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.head_count_kv"), 1); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.key_length"), (uint32_t)d); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.value_length"), (uint32_t)d); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("rope.dimension_count"), 8); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("attention.layer_norm_rms_epsilon"), 1e-6f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_count"), (uint32_t)NX); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_used_count"), (uint32_t)NU); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_gating_func"), 4); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("expert_feed_forward_length"), (uint32_t)FX); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("expert_weights_scale"), 1.5f); nkv++;
    kv[nkv] = infer_gguf_kv_bool(KEY("expert_weights_norm"), 1); nkv++;
    kv[nkv] = infer_gguf_kv_array(KEY("swiglu_clamp_exp"), INFER_GGUF_F32, 3, clamps); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.q_lora_rank"), (uint32_t)QL); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.sliding_window"), 4); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.indexer.head_count"), (uint32_t)NI); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.indexer.key_length"), (uint32_t)DI); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.indexer.top_k"), 2); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.output_group_count"), (uint32_t)G); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("attention.output_lora_rank"), (uint32_t)R); nkv++;
    kv[nkv] = infer_gguf_kv_array(KEY("attention.compress_ratios"), INFER_GGUF_U32, 3, ratios); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("attention.compress_rope_freq_base"), 160000.0f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("hyper_connection.count"), (uint32_t)HC); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("hyper_connection.sinkhorn_iterations"), 20); nkv++;
    kv[nkv] = infer_gguf_kv_f32(KEY("hyper_connection.epsilon"), 1e-6f); nkv++;
    kv[nkv] = infer_gguf_kv_u32(KEY("hash_layer_count"), 1); nkv++;
#undef KEY
    infer_error err;
    const int ok = infer_gguf_write(path, kv, nkv, M.t, M.n, 32, &err) == INFER_OK;
    if (!ok) fprintf(stderr, "fuzz: %s: %s\n", path, err.msg);
    for (int i = 0; i < M.n; i++) free(M.data[i]);
    return ok;
}

/* one row of every weight type that has a quantizer, in one GGUF with no model around it */
static int fuzz_types_seed(const char *path) {
    fuzz_model M;
    memset(&M, 0, sizeof M);
    M.rng = 777;
    for (int t = 0; t < INFER_TYPE_COUNT && M.n < 64; t++) {
        const infer__type_traits *tt = infer__type((infer_type)t);
        if (!tt || !tt->quant || !tt->dequant || t == INFER_TYPE_F32) continue;
        fuzz_tensor(&M, infer_type_name((infer_type)t), (infer_type)t, 256, 1, 1, 0);
    }
    fuzz_tensor(&M, "i2_s", INFER_TYPE_I2_S, 256, 1, 1, 0);
    infer_gguf_kv kv[1] = { infer_gguf_kv_str("general.name", "every type") };
    infer_error err;
    const int ok = infer_gguf_write(path, kv, 1, M.t, M.n, 32, &err) == INFER_OK;
    for (int i = 0; i < M.n; i++) free(M.data[i]);
    return ok;
}

/* a vocabulary-only GGUF (WordPiece) */
static int fuzz_bert_seed(const char *path) {
    fuzz_vocab *v = (fuzz_vocab *)malloc(sizeof *v);
    fuzz_vocab_make(v, 1);
    infer_gguf_kv kv[12];
    kv[0] = infer_gguf_kv_str("general.architecture", "bert");
    memcpy(kv + 1, v->kv, sizeof v->kv[0] * (size_t)v->n_kv);
    infer_error err;
    const int ok = infer_gguf_write(path, kv, v->n_kv + 1, NULL, 0, 32, &err) == INFER_OK;
    free(v->enc.p);
    free(v);
    return ok;
}

/* safetensors bytes: an 8-byte header length, the JSON header, the data */
static void fuzz_st_bytes(fuzz_buf *out, const char *const *names, const char *const *dtypes, const int64_t (*shapes)[2], const void *const *data,
                          const size_t *nbytes, int n) {
    fuzz_buf h = { 0 };
    fuzz_puts(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        fuzz_puts(&h, ",");
        fuzz_json_str(&h, names[i]);
        fuzz_printf(&h, ":{\"dtype\":\"%s\",\"shape\":[%lld", dtypes[i], (long long)shapes[i][0]);
        if (shapes[i][1]) fuzz_printf(&h, ",%lld", (long long)shapes[i][1]);
        fuzz_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + nbytes[i]);
        off += nbytes[i];
    }
    fuzz_puts(&h, "}");
    while (h.n % 8) fuzz_puts(&h, " ");
    const uint64_t hl = h.n;
    fuzz_put(out, &hl, 8);
    fuzz_put(out, h.p, h.n);
    for (int i = 0; i < n; i++) fuzz_put(out, data[i], nbytes[i]);
    free(h.p);
}

/* a Hugging Face Llama folder, tiny: config.json, model.safetensors (BF16 and F32), the GPT-2
 * style tokenizer.json and a tokenizer_config.json -- as the hf archive, and its
 * model.safetensors alone */
static void fuzz_hf_seed(fuzz_buf *archive, fuzz_buf *st) {
    const int64_t E = 32, F = 64, V = 256 + FUZZ_N_MERGES + 1;
    enum { NT = 11 };
    static const char *const suffix[NT] = { "model.embed_tokens.weight", "model.layers.0.input_layernorm.weight", "model.layers.0.self_attn.q_proj.weight",
                                            "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight", "model.layers.0.self_attn.o_proj.weight",
                                            "model.layers.0.post_attention_layernorm.weight", "model.layers.0.mlp.gate_proj.weight",
                                            "model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight", "model.norm.weight" };
    const int64_t shapes[NT][2] = { { V, E }, { E, 0 }, { E, E }, { 16, E }, { 16, E }, { E, E }, { E, 0 }, { F, E }, { F, E }, { E, F }, { E, 0 } };
    const char *dtypes[NT];
    const void *data[NT];
    size_t nbytes[NT];
    uint64_t rng = 99;
    for (int i = 0; i < NT; i++) {
        const int norm = shapes[i][1] == 0, bf16 = !norm && i % 2 == 0;
        const int64_t cnt = shapes[i][0] * (norm ? 1 : shapes[i][1]);
        dtypes[i] = bf16 ? "BF16" : "F32";
        nbytes[i] = (size_t)cnt * (bf16 ? 2 : 4);
        uint8_t *p = (uint8_t *)malloc(nbytes[i]);
        for (int64_t k = 0; k < cnt; k++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            const float v = norm ? 1.0f : ((float)(rng >> 40) / (float)(1 << 24) - 0.5f) * 0.4f;
            if (bf16) { const infer_bf16 h = infer__fp32_to_bf16(v); memcpy(p + 2 * k, &h, 2); }
            else memcpy(p + 4 * k, &v, 4);
        }
        data[i] = p;
    }
    fuzz_st_bytes(st, suffix, dtypes, shapes, data, nbytes, NT);
    for (int i = 0; i < NT; i++) free((void *)data[i]);
    fuzz_buf cfg = { 0 }, tok = { 0 }, tcfg = { 0 };
    fuzz_printf(&cfg, "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":%lld,\"intermediate_size\":%lld,"
                      "\"num_attention_heads\":2,\"num_key_value_heads\":1,\"num_hidden_layers\":1,\"head_dim\":16,\"rms_norm_eps\":1e-05,"
                      "\"vocab_size\":%lld,\"max_position_embeddings\":64,\"rope_theta\":10000.0,\"tie_word_embeddings\":true,"
                      "\"bos_token_id\":%lld,\"eos_token_id\":%lld,\"hidden_act\":\"silu\",\"torch_dtype\":\"bfloat16\"}\n",
                (long long)E, (long long)F, (long long)V, (long long)V - 1, (long long)V - 1);
    fuzz_bpe_json(&tok, 0);
    fuzz_puts(&tcfg, "{\"add_bos_token\":false,\"add_eos_token\":false,\"bos_token\":\"<|endoftext|>\",\"eos_token\":{\"content\":\"<|endoftext|>\"}}\n");
    const fuzz_buf *files[4] = { &cfg, st, &tok, &tcfg };
    for (uint8_t f = 0; f < 4; f++) {
        const uint32_t len = (uint32_t)files[f]->n;
        fuzz_put(archive, &f, 1);
        fuzz_put(archive, &len, 4);
        fuzz_put(archive, files[f]->p, len);
    }
    free(cfg.p); free(tok.p); free(tcfg.p);
}

/* ---- the text target: the seed vocabularies, built once ---- */
static infer_model *fuzz_vocab_models[4];
static void fuzz_text_init(void) {
    if (fuzz_vocab_models[0]) return;
    infer_model_params mp = { .vocab_only = 1 };
    infer_error err;
    for (int k = 0; k < 4; k++) {
        infer_gguf g;
        int made = 0;
        if (k < 2) {                                  /* SentencePiece, WordPiece */
            fuzz_vocab *v = (fuzz_vocab *)malloc(sizeof *v);
            fuzz_vocab_make(v, k);
            made = infer_gguf_write(fuzz_path("vocab.gguf"), v->kv, v->n_kv, NULL, 0, 32, &err) == INFER_OK;
            free(v->enc.p);
            free(v);
        } else {                                      /* GPT-2, Llama 3 */
            fuzz_buf js = { 0 };
            fuzz_bpe_json(&js, k == 3);
            if (fuzz_write(fuzz_path("tokenizer.json"), js.p, js.n) && infer_hf_vocab(&g, fuzz_path("tokenizer.json"), &err) == INFER_OK) {
                made = infer_gguf_write(fuzz_path("vocab.gguf"), g.kv, g.n_kv, NULL, 0, 32, &err) == INFER_OK;
                infer_gguf_free(&g);
            }
            free(js.p);
        }
        if (!made || infer_model_load(&fuzz_vocab_models[k], fuzz_path("vocab.gguf"), &mp, &err) != INFER_OK) {
            fprintf(stderr, "fuzz: seed vocabulary %d: %s\n", k, err.msg);
            exit(1);
        }
    }
    fuzz_dir_clear();
}
static void fuzz_text(const uint8_t *d, size_t n) {
    fuzz_text_init();
    char *text = (char *)malloc(n ? n : 1);
    if (!text) return;
    memcpy(text, d, n);
    for (int k = 0; k < 4; k++) fuzz_tokenize(infer_model_tokenizer(fuzz_vocab_models[k]), text, n);
    free(text);
}

/* ---- the server target: request bodies and replies (tools/server_req.c) ----
 * Each input is a request body for the endpoints whose main key it names -- completion
 * ("prompt"; also a body naming none), chat ("messages", rendered with the template below
 * over the GPT-2 seed vocabulary), tokenize ("content"), detokenize ("tokens") -- and a
 * model's reply searched for tool calls. What must hold, else the target aborts (a failure):
 *   a request parses to ids inside the vocabulary and, for the generating endpoints, a
 *   prompt of 1 to n_ctx - 1 tokens, at most 16 stop strings, a grammar it owns; or it is
 *   refused with 400 and an OpenAI code, or 500 "out of memory", a message, nothing held;
 *   a reply's calls have a name and JSON arguments; the calls found in the part of the reply
 *   a stream holds back (from srv_tool_prefix on) are the calls of the whole reply; the
 *   answer written with them is JSON. */
static const char fuzz_chat_template[] =
    "{% if tools %}<|im_start|>system\nYou may call these functions:{% for t in tools %}{{ '\\n' }}{{ t | tojson }}{% endfor %}{{ '\\n' }}"
    "Call one as <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call><|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>{\"name\": {{ c.function.name | tojson }}, \"arguments\": {{ c.function.arguments | tojson }}}</tool_call>{% endfor %}"
    "{% elif m.role == 'tool' %}<tool_response id={{ m.tool_call_id | tojson }}>{{ m.content }}</tool_response>"
    "{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

static void fuzz_fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz server: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* text written by srv_json_str / srv_json_write must read back as JSON */
static void fuzz_json_ok(const srv_buf *b, const char *what) {
    infer__json_doc d;
    infer_error err;
    if (b->oom) return;
    if (infer__json_parse(&d, b->p ? b->p : "", b->n, &err) != INFER_OK) fuzz_fail(what, err.msg);
    infer__json_free(&d);
}

static void fuzz_server_request(const srv_limits *L, int kind, const uint8_t *d, size_t n) {
    static const char *const codes[] = { "invalid_json", "invalid_type", "invalid_value", "missing_field", "unsupported_value", "context_length_exceeded" };
    srv_request q;
    srv_perr e;
    const int ok = srv_parse_request(L, kind, (const char *)d, n, &q, &e);
    if (!ok) {
        int known = 0;
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) known |= e.code && !strcmp(e.code, codes[i]);
        if (!e.msg[0]) fuzz_fail("an error without a message", NULL);
        if (e.status == 400 && !known) fuzz_fail("a 400 without a known code", e.msg);
        if (e.status != 400 && !(e.status == 500 && !e.code && strstr(e.msg, "out of memory"))) fuzz_fail("an error that is not the client's", e.msg);
        if (q.prompt || q.grammar || q.n_stop) fuzz_fail("a refused request holds memory", e.msg);
        srv_buf b = { 0 };                                /* the error object as the server writes it */
        srv_puts(&b, "{\"error\":{\"message\":");
        srv_json_str(&b, e.msg, strlen(e.msg));
        srv_puts(&b, "}}");
        fuzz_json_ok(&b, "the error object");
        free(b.p);
        fuzz_say("refused", e.msg);
        return;
    }
    for (int i = 0; i < q.n_prompt; i++) if (q.prompt[i] < 0 || q.prompt[i] >= L->n_vocab) fuzz_fail("a token id outside the vocabulary", NULL);
    if (kind == SRV_COMPLETION || kind == SRV_CHAT) {
        if (q.n_prompt < 1 || q.n_prompt + 1 > L->n_ctx) fuzz_fail("a prompt that does not fit", NULL);
        if (q.n_stop > SRV_MAX_STOP || q.max_tokens < -1 || q.sp.grammar != (q.grammar ? q.grammar : q.sp.grammar)) fuzz_fail("bad parameters", NULL);
        for (int i = 0; i < q.n_stop; i++) if (!q.stop[i][0] || strlen(q.stop[i]) > SRV_MAX_STOP_LEN) fuzz_fail("a bad stop string", q.stop[i]);
        if (q.tools && kind != SRV_CHAT) fuzz_fail("tools on a completion", NULL);
    }
    if (kind == SRV_DETOKENIZE) {                         /* what /detokenize does with the ids */
        char out[1024];
        infer_detokenize(L->tok, q.prompt, q.n_prompt, 1, 0, out, sizeof out);
    }
    fuzz_say(kind == SRV_CHAT ? "chat" : kind == SRV_COMPLETION ? "completion" : kind == SRV_TOKENIZE ? "tokenize" : "detokenize", "parsed");
    srv_request_free(&q);
}

static int fuzz_same_calls(const srv_tools_out *a, const srv_tools_out *b) {
    if (a->n_calls != b->n_calls) return 0;
    for (int k = 0; k < a->n_calls; k++)
        if (strcmp(a->calls[k].name, b->calls[k].name) || strcmp(a->calls[k].args, b->calls[k].args)) return 0;
    return 1;
}

static void fuzz_server_reply(const uint8_t *d, size_t n) {
    const char *t = (const char *)d;
    srv_tools_out whole, held;
    const int nc = srv_tool_parse(t, n, &whole);
    if (nc < 0) { srv_tools_out_free(&whole); return; }
    srv_buf b = { 0 };                                    /* the message as the server writes it */
    srv_puts(&b, "{\"content\":");
    if (whole.content.n) srv_json_str(&b, whole.content.p, whole.content.n);
    else srv_puts(&b, "null");
    srv_puts(&b, ",\"tool_calls\":[");
    for (int k = 0; k < nc; k++) {
        const srv_tool_call *c = &whole.calls[k];
        if (!c->name || !c->name[0] || !c->args) fuzz_fail("a tool call without a name or arguments", NULL);
        srv_puts(&b, k ? ",{\"name\":" : "{\"name\":");
        srv_json_str(&b, c->name, strlen(c->name));
        srv_puts(&b, ",\"arguments\":");
        srv_json_str(&b, c->args, strlen(c->args));
        srv_puts(&b, "}");
    }
    srv_puts(&b, "]}");
    fuzz_json_ok(&b, "the tool calls' message");
    free(b.p);
    /* streamed: the held-back part has the same calls; the surely-content part only grows */
    const size_t p = srv_tool_prefix(t, n, 0), half = srv_tool_prefix(t, n / 2, 0);
    if (p > n || half > p) fuzz_fail("srv_tool_prefix is not a growing prefix", NULL);
    if (srv_tool_prefix(t, n, half) != p) fuzz_fail("srv_tool_prefix from a shorter reply's prefix differs from a whole search", NULL);
    if (srv_tool_parse(t + p, n - p, &held) >= 0 && !fuzz_same_calls(&whole, &held)) fuzz_fail("the streamed reply's tool calls differ from the whole reply's", NULL);
    srv_tools_out_free(&held);
    srv_tools_out_free(&whole);
    if (nc) fuzz_say("tool calls", NULL);
}

/* the model the server target parses for: the GPT-2 seed vocabulary (byte-level BPE: any
 * text tokenizes), 2 sequences of 2048 positions, the template above */
static void fuzz_server_limits(srv_limits *L) {
    fuzz_text_init();
    memset(L, 0, sizeof *L);
    L->m = fuzz_vocab_models[2];
    L->tok = infer_model_tokenizer(L->m);
    L->n_vocab = L->tok->n_vocab;
    L->n_ctx = 2048;
    L->n_seq = 2;
    L->chat_template = fuzz_chat_template;
    L->chat_template_len = sizeof fuzz_chat_template - 1;
    L->sp = infer_sampler_default_params();
    L->n_predict = -1;
}

static void fuzz_server(const uint8_t *d, size_t n) {
    if (!d) d = (const uint8_t *)"";
    srv_limits L;
    fuzz_server_limits(&L);
    /* the endpoints whose key the body names (each parse costs the JSON parser's first 1 MiB
     * chunk, slow under ASan); a body that names none is a completion */
    static const char *const keys[4] = { "\"prompt\"", "\"messages\"", "\"content\"", "\"tokens\"" };
    int any = 0;
    for (int kind = SRV_COMPLETION; kind <= SRV_DETOKENIZE; kind++)
        if (n && memmem(d, n, keys[kind], strlen(keys[kind]))) { fuzz_server_request(&L, kind, d, n); any = 1; }
    if (!any) fuzz_server_request(&L, SRV_COMPLETION, d, n);
    fuzz_server_reply(d, n);
}

/* the server target's seeds: requests of every endpoint (valid and broken) and model replies */
static const char *const fuzz_server_seeds[][2] = {
    { "completion", "{\"prompt\":\"Once upon a time\",\"max_tokens\":16,\"temperature\":0.7,\"top_p\":0.9,\"top_k\":40,\"min_p\":0.05,\"seed\":42,"
                    "\"stop\":[\"\\n\",\"The end\"],\"stream\":true,\"stream_options\":{\"include_usage\":true}}" },
    { "completion-ids", "{\"prompt\":[1,2,3,260],\"max_tokens\":-1,\"n\":1,\"presence_penalty\":0.5,\"frequency_penalty\":-0.5,\"repeat_penalty\":1.1,"
                        "\"repeat_last_n\":64,\"logprobs\":false,\"echo\":false,\"best_of\":1,\"suffix\":\"\",\"model\":\"any\"}" },
    { "completion-schema", "{\"prompt\":\"Colours as JSON\",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"c\",\"strict\":true,\"schema\":"
                           "{\"type\":\"object\",\"properties\":{\"colours\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"red\",\"green\"]},"
                           "\"minItems\":1,\"maxItems\":3},\"n\":{\"type\":\"integer\"}},\"required\":[\"colours\"]}}}}" },
    { "completion-grammar", "{\"prompt\":\"2+2=\",\"grammar\":\"root ::= [0-9]+ (\\\" \\\" [a-z]{1,3})?\\n\",\"n_predict\":8}" },
    { "completion-json-schema", "{\"prompt\":[\"hello\"],\"json_schema\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"maxItems\":2},\"max_completion_tokens\":4}" },
    { "chat", "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi \\u00e9\\ud83d\\ude00\"}],"
              "\"max_completion_tokens\":32,\"stop\":\"<|im_end|>\"}" },
    { "chat-parts", "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Part one. \"},{\"type\":\"text\",\"text\":\"Part two.\"}]}],"
                    "\"response_format\":{\"type\":\"json_object\"},\"chat_template_kwargs\":{\"enable_thinking\":false}}" },
    { "chat-tools", "{\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                    "\"description\":\"Weather of a city\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}],"
                    "\"tool_choice\":\"auto\",\"parallel_tool_calls\":true,\"stream\":true}" },
    { "chat-tool-history", "{\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":"
                           "[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]},"
                           "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"{\\\"temp\\\": 21}\"}],\"tools\":[{\"type\":\"function\",\"function\":"
                           "{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}}" },
    { "chat-tool-choice-none", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"none\"}" },
    { "chat-tool-required", "{\"messages\":[{\"role\":\"user\",\"content\":\"Time?\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_time\","
                            "\"parameters\":{\"type\":\"object\",\"properties\":{\"zone\":{\"enum\":[\"UTC\",\"CET\"]},\"n\":{\"type\":\"integer\"},"
                            "\"tag\":{\"type\":\"string\",\"maxLength\":4}},\"required\":[\"zone\"]}}}],\"tool_choice\":\"required\",\"parallel_tool_calls\":false}" },
    { "bad-tool-choice", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],"
                         "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}}" },
    { "tokenize", "{\"content\":\"Hello world <|endoftext|>\",\"add_special\":true,\"parse_special\":false}" },
    { "detokenize", "{\"tokens\":[1,2,3,100,255,270]}" },
    { "bad-n", "{\"prompt\":\"hi\",\"n\":2}" },
    { "bad-numbers", "{\"prompt\":\"hi\",\"max_tokens\":-5,\"temperature\":1e999,\"seed\":99999999999999999999}" },
    { "bad-types", "{\"messages\":[{\"role\":\"user\",\"content\":7}],\"tools\":{\"type\":\"function\"},\"stop\":[1],\"stream\":\"yes\"}" },
    { "bad-utf8", "{\"prompt\":\"h\xff\xfei\",\"content\":\"\xc3\x28\"}" },
    { "chat-tool-args-not-json", "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{not json\"}}]},{\"role\":\"user\",\"content\":\"x\"}]}" },
    { "bad-grammar", "{\"prompt\":\"x\",\"grammar\":\"root ::= \\\"a\\\" | b\",\"response_format\":{\"type\":\"xml\"}}" },
    { "reply-hermes", "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>\n"
                      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": \"{}\"}\n</tool_call>" },
    { "reply-qwen35", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>" },
    { "reply-mistral", "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"f\", \"arguments\": {}}]" },
    { "reply-llama", "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}" },
    { "reply-malformed", "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call> and {\"name\": 5}" },
};

/* ---- dispatch ---- */
typedef struct { const char *name; void (*fn)(const uint8_t *, size_t); } fuzz_target;
static const fuzz_target fuzz_targets[] = {
    { "gguf", fuzz_gguf }, { "safetensors", fuzz_safetensors }, { "hf", fuzz_hf }, { "tokenizer", fuzz_tokenizer }, { "text", fuzz_text },
    { "server", fuzz_server },
};
#define FUZZ_N_TARGETS ((int)(sizeof fuzz_targets / sizeof fuzz_targets[0]))
static const fuzz_target *fuzz_find(const char *name) {
    for (int i = 0; name && i < FUZZ_N_TARGETS; i++) if (!strcmp(fuzz_targets[i].name, name)) return &fuzz_targets[i];
    return NULL;
}

/* a seed model must load and run (a seed that fails early teaches the fuzzer little) */
static int fuzz_seed_runs(const char *what, infer_model *m) {
    infer_session_params sp = infer_session_default_params();
    sp.n_ctx = 16;
    sp.n_threads = 1;
    infer_session *s;
    infer_error err;
    const int32_t ids[3] = { 1, 2, 3 };
    float *logits = (float *)malloc(sizeof(float) * (size_t)infer_model_config(m)->n_vocab);
    int ok = infer_session_create(&s, m, &sp, &err) == INFER_OK;
    if (ok) { ok = infer_eval(s, ids, 3, logits, 0, &err) == INFER_OK; infer_session_free(s); }
    if (!ok) fprintf(stderr, "fuzz: seed %s does not run: %s\n", what, err.msg);
    infer_model_free(m);
    free(logits);
    return ok;
}

/* DIR/TARGET/ <- the seeds; 0 when one cannot be written or does not load as it should */
static int fuzz_write_seeds(const char *dir) {
    char p[512];
    int ok = 1;
    for (int i = 0; i < FUZZ_N_TARGETS; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, fuzz_targets[i].name);
        mkdir(dir, 0755);
        mkdir(p, 0755);
    }
    for (int f = 0; f < FUZZ_N_FAMILIES; f++) {
        snprintf(p, sizeof p, "%s/gguf/seed-%s.gguf", dir, fuzz_family[f]);
        ok &= fuzz_model_seed(p, f);
        infer_model *m;
        infer_error err;
        if (infer_model_load(&m, p, NULL, &err) != INFER_OK) { fprintf(stderr, "fuzz: %s does not load: %s\n", p, err.msg); ok = 0; }
        else ok &= fuzz_seed_runs(p, m);
    }
    snprintf(p, sizeof p, "%s/gguf/seed-deepseek4.gguf", dir);
    ok &= fuzz_dsv4_seed(p);
    {
        infer_model *m;
        infer_error err;
        if (infer_model_load(&m, p, NULL, &err) != INFER_OK) { fprintf(stderr, "fuzz: %s does not load: %s\n", p, err.msg); ok = 0; }
        else ok &= fuzz_seed_runs(p, m);
    }
    snprintf(p, sizeof p, "%s/gguf/seed-types.gguf", dir);
    ok &= fuzz_types_seed(p);
    snprintf(p, sizeof p, "%s/gguf/seed-bert-vocab.gguf", dir);
    ok &= fuzz_bert_seed(p);
    fuzz_buf ar = { 0 }, st = { 0 }, js = { 0 };
    fuzz_hf_seed(&ar, &st);
    snprintf(p, sizeof p, "%s/hf/seed-llama.hf", dir);
    ok &= fuzz_write(p, ar.p, ar.n);
    snprintf(p, sizeof p, "%s/safetensors/seed-llama.safetensors", dir);
    ok &= fuzz_write(p, st.p, st.n);
    for (int k = 0; k < 2; k++) {
        js.n = 0;
        fuzz_bpe_json(&js, k);
        snprintf(p, sizeof p, "%s/tokenizer/seed-%s.json", dir, k ? "llama3" : "gpt2");
        ok &= fuzz_write(p, js.p, js.n);
    }
    for (size_t i = 0; i < sizeof fuzz_texts / sizeof fuzz_texts[0]; i++) {
        snprintf(p, sizeof p, "%s/text/seed-%zu.txt", dir, i);
        ok &= fuzz_write(p, fuzz_texts[i], strlen(fuzz_texts[i]));
    }
    for (size_t i = 0; i < sizeof fuzz_server_seeds / sizeof fuzz_server_seeds[0]; i++) {
        snprintf(p, sizeof p, "%s/server/seed-%s.json", dir, fuzz_server_seeds[i][0]);
        ok &= fuzz_write(p, fuzz_server_seeds[i][1], strlen(fuzz_server_seeds[i][1]));
    }
    {                                                 /* nesting deeper than the JSON parser takes */
        char deep[256];
        memcpy(deep, "{\"prompt\":", 10);
        for (int k = 0; k < 100; k++) { deep[10 + k] = '['; deep[110 + k] = ']'; }
        deep[210] = '}';
        snprintf(p, sizeof p, "%s/server/seed-bad-nesting.json", dir);
        ok &= fuzz_write(p, deep, 211);
    }
    /* the hf seed must load as a model (it is only useful if it gets that far) */
    fuzz_dir_clear();
    for (size_t pos = 0; pos + 5 <= ar.n;) {
        uint32_t len;
        memcpy(&len, ar.p + pos + 1, 4);
        fuzz_write(fuzz_path(fuzz_hf_files[ar.p[pos]]), ar.p + pos + 5, len);
        pos += 5 + len;
    }
    infer_model *m;
    infer_error err;
    if (infer_model_load(&m, fuzz_dir(), NULL, &err) != INFER_OK) { fprintf(stderr, "fuzz: the hf seed does not load: %s\n", err.msg); ok = 0; }
    else ok &= fuzz_seed_runs("hf", m);
    fuzz_dir_clear();
    free(ar.p); free(st.p); free(js.p);
    return ok;
}

/* the corpus file being replayed (the crash handlers name it) */
static const char *volatile fuzz_cur_file;

/* run one file through target t */
static int fuzz_replay_file(const fuzz_target *t, const char *p, void (*each)(const char *path)) {
    size_t len;
    uint8_t *d = fuzz_read(p, &len);
    if (!d) return 0;
    if (each) each(p);
    fuzz_say(p, NULL);
    fuzz_cur_file = p;
    t->fn(d, len);
    fuzz_cur_file = NULL;
    free(d);
    return 1;
}

/* run every file of DIR (not recursing; or DIR itself, a file) through target t; returns the
 * count */
static int fuzz_replay_dir(const fuzz_target *t, const char *dir, void (*each)(const char *path)) {
    DIR *dp = opendir(dir);
    if (!dp) return fuzz_replay_file(t, dir, each);
    char **names = NULL;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.') continue;
        names = (char **)realloc(names, sizeof(char *) * (size_t)(n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(dp);
    for (int i = 0; i < n; i++) {                     /* sorted: a stable order */
        for (int j = i + 1; j < n; j++) if (strcmp(names[j], names[i]) < 0) { char *s = names[i]; names[i] = names[j]; names[j] = s; }
    }
    int ran = 0;
    for (int i = 0; i < n; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        ran += fuzz_replay_file(t, p, each);
        free(names[i]);
    }
    free(names);
    return ran;
}

#ifdef FUZZ_LIBFUZZER
/* ---- libFuzzer entry points ---- */
static const fuzz_target *fuzz_lf_target;
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    fuzz_lf_target = fuzz_find(getenv("FUZZ_TARGET"));
    if (!fuzz_lf_target) {
        fprintf(stderr, "fuzz: set FUZZ_TARGET to one of gguf safetensors hf tokenizer text server\n");
        exit(1);
    }
    return 0;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_lf_target->fn(data, size);
    return 0;
}
#elif !defined(FUZZ_NO_MAIN)
/* ---- the built-in driver ---- */
static uint64_t fuzz_rng_state;
static uint64_t fuzz_rand(void) {                     /* splitmix64 */
    uint64_t z = (fuzz_rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static size_t fuzz_below(size_t n) { return n ? (size_t)(fuzz_rand() % n) : 0; }

/* the input being run, written out by the crash handlers */
static const uint8_t *fuzz_cur;
static size_t fuzz_cur_n;
static char fuzz_crash_path[512];
static void fuzz_save_current(void) {
    static const char msg[] = "fuzz: the input that failed is ";
    if (fuzz_cur_file) {                                  /* a corpus file: name it */
        (void)!write(2, msg, sizeof msg - 1);
        (void)!write(2, fuzz_cur_file, strlen(fuzz_cur_file));
        (void)!write(2, "\n", 1);
        return;
    }
    if (!fuzz_cur) return;
    int fd = open(fuzz_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    for (size_t off = 0; off < fuzz_cur_n;) {
        const ssize_t w = write(fd, fuzz_cur + off, fuzz_cur_n - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(fd);
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, fuzz_crash_path, strlen(fuzz_crash_path));
    (void)!write(2, "\n", 1);
}
static void fuzz_on_signal(int sig) {
    fuzz_save_current();
    signal(sig, SIG_DFL);
    raise(sig);
}
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
/* UBSan stops at the first report and aborts (so the handler above saves the input) */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "halt_on_error=1:abort_on_error=1:print_stacktrace=1"; }

/* 1..4 stacked mutations of d[0..n) (capacity cap), another corpus input to splice from */
static size_t fuzz_mutate(uint8_t *d, size_t n, size_t cap, const uint8_t *other, size_t on) {
    static const int64_t edge[] = { 0, 1, -1, 2, 7, 8, 16, 31, 32, 63, 64, 127, 128, 255, 256, 1023, 1024, 4096, 32767, 32768, 65535, 65536,
                                    0x7fffffff, (int64_t)0x80000000u, 0xffffffffll, 0x100000000ll, INT64_MAX, INT64_MIN, 1ll << 40, 1ll << 50 };
    static const char *const tokens[] = { "\"", "{", "}", "[", "]", ":", ",", "null", "true", "false", "-1", "0", "1e999", "-0.0", "1e-999",
                                          "\\u0000", "\\ud800", "\\uDFFF", "\\\"", "99999999999999999999", "\"\":", "[[[[[[[[", "{\"a\":" };
    const int ops = 1 + (int)fuzz_below(4);
    for (int k = 0; k < ops; k++) {
        switch (fuzz_below(9)) {
        case 0: if (n) d[fuzz_below(n)] ^= (uint8_t)(1u << fuzz_below(8)); break;
        case 1: if (n) d[fuzz_below(n)] = (uint8_t)fuzz_rand(); break;
        case 2: {                                      /* an edge value as a 1/2/4/8-byte integer */
            const size_t w = (size_t)1 << fuzz_below(4);
            if (n >= w) { const int64_t v = edge[fuzz_below(sizeof edge / sizeof edge[0])]; memcpy(d + fuzz_below(n - w + 1), &v, w); }
            break;
        }
        case 3: {                                      /* a small addition to an integer */
            const size_t w = (size_t)1 << fuzz_below(4);
            if (n >= w) {
                uint64_t v = 0;
                const size_t at = fuzz_below(n - w + 1);
                memcpy(&v, d + at, w);
                v += (uint64_t)(int64_t)((int)fuzz_below(33) - 16);
                memcpy(d + at, &v, w);
            }
            break;
        }
        case 4: if (n > 1) {                           /* copy a block within */
                const size_t len = 1 + fuzz_below(n / 2), from = fuzz_below(n - len + 1), to = fuzz_below(n - len + 1);
                memmove(d + to, d + from, len);
            }
            break;
        case 5: {                                      /* insert random bytes or a JSON token */
            const char *tk = tokens[fuzz_below(sizeof tokens / sizeof tokens[0])];
            const int use_tk = fuzz_below(2);
            const size_t len = use_tk ? strlen(tk) : 1 + fuzz_below(16), at = fuzz_below(n + 1);
            if (n + len > cap) break;
            memmove(d + at + len, d + at, n - at);
            for (size_t i = 0; i < len; i++) d[at + i] = use_tk ? (uint8_t)tk[i] : (uint8_t)fuzz_rand();
            n += len;
            break;
        }
        case 6: if (n > 1) {                           /* delete a block */
                const size_t len = 1 + fuzz_below(n < 64 ? n / 2 + 1 : 64), at = fuzz_below(n - len + 1);
                memmove(d + at, d + at + len, n - at - len);
                n -= len;
            }
            break;
        case 7: if (other && on) {                     /* splice: our head, the other's tail */
                const size_t at = fuzz_below(n + 1), from = fuzz_below(on);
                size_t len = on - from;
                if (at + len > cap) len = cap - at;
                memcpy(d + at, other + from, len);
                n = at + len;
            }
            break;
        default: if (n) { const size_t at = fuzz_below(n); d[at] = (uint8_t)(d[at] + (int)fuzz_below(5) - 2); } break;
        }
    }
    return n;
}

typedef struct { uint8_t **d; size_t *n; int count; } fuzz_corpus;
static fuzz_corpus fuzz_loaded;
static void fuzz_collect(const char *path) {
    size_t n;
    uint8_t *d = fuzz_read(path, &n);
    if (!d) return;
    fuzz_loaded.d = (uint8_t **)realloc(fuzz_loaded.d, sizeof(uint8_t *) * (size_t)(fuzz_loaded.count + 1));
    fuzz_loaded.n = (size_t *)realloc(fuzz_loaded.n, sizeof(size_t) * (size_t)(fuzz_loaded.count + 1));
    fuzz_loaded.d[fuzz_loaded.count] = d;
    fuzz_loaded.n[fuzz_loaded.count++] = n;
}

static int fuzz_usage(void) {
    fputs("usage: FUZZ_TARGET=T fuzz [-max_total_time=N] [-seed=S] [-runs=N] DIR...   (T: gguf safetensors hf tokenizer text server)\n"
          "       fuzz seeds DIR\n"
          "       fuzz replay DIR\n", stderr);
    return 2;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "seeds")) return fuzz_write_seeds(argv[2]) ? 0 : 1;
    if (argc == 3 && !strcmp(argv[1], "replay")) {
        int total = 0;
        for (int i = 0; i < FUZZ_N_TARGETS; i++) {
            char p[512];
            snprintf(p, sizeof p, "%s/%s", argv[2], fuzz_targets[i].name);
            const int c = fuzz_replay_dir(&fuzz_targets[i], p, NULL);
            printf("fuzz replay: %s: %d inputs\n", fuzz_targets[i].name, c);
            total += c;
        }
        return total ? 0 : 1;
    }
    const fuzz_target *t = fuzz_find(getenv("FUZZ_TARGET"));
    if (!t) return fuzz_usage();
    double seconds = 0;
    long max_runs = -1;
    uint64_t seed = 1;
    snprintf(fuzz_crash_path, sizeof fuzz_crash_path, "fuzz-crash-%s", t->name);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(fuzz_save_current);
    const int sigs[6] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM };
    for (int i = 0; i < 6; i++) signal(sigs[i], fuzz_on_signal);
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "-max_total_time=", 16)) seconds = atof(argv[i] + 16);
        else if (!strncmp(argv[i], "-seed=", 6)) seed = strtoull(argv[i] + 6, NULL, 10);
        else if (!strncmp(argv[i], "-runs=", 6)) max_runs = atol(argv[i] + 6);
        else if (!strncmp(argv[i], "-artifact_prefix=", 17)) snprintf(fuzz_crash_path, sizeof fuzz_crash_path, "%scrash", argv[i] + 17);
        else if (argv[i][0] == '-') continue;                   /* a libFuzzer option */
        else fuzz_replay_dir(t, argv[i], fuzz_collect);         /* replays as it loads */
    }
    if (max_runs >= 0 && seconds == 0) seconds = 1e9;
    printf("fuzz %s: replayed %d inputs\n", t->name, fuzz_loaded.count);
    fflush(stdout);
    if (!fuzz_loaded.count) {                                   /* no corpus: start from one empty input */
        fuzz_loaded.d = (uint8_t **)malloc(sizeof(uint8_t *));
        fuzz_loaded.n = (size_t *)malloc(sizeof(size_t));
        fuzz_loaded.d[0] = (uint8_t *)malloc(1);
        fuzz_loaded.n[0] = 0;
        fuzz_loaded.count = 1;
    }
    fuzz_rng_state = seed;
    const double t0 = infer_time_seconds();
    long runs = 0;
    size_t cap = 0;
    uint8_t *buf = NULL;
    while (infer_time_seconds() - t0 < seconds && (max_runs < 0 || runs < max_runs)) {
        const int a = (int)fuzz_below((size_t)fuzz_loaded.count), b = (int)fuzz_below((size_t)fuzz_loaded.count);
        const size_t need = fuzz_loaded.n[a] + 4096;
        if (need > cap) { cap = need; buf = (uint8_t *)realloc(buf, cap); }
        memcpy(buf, fuzz_loaded.d[a], fuzz_loaded.n[a]);
        const size_t n = fuzz_mutate(buf, fuzz_loaded.n[a], cap, fuzz_loaded.d[b], fuzz_loaded.n[b]);
        uint8_t *exact = (uint8_t *)malloc(n ? n : 1);          /* exactly n bytes: an over-read is caught */
        memcpy(exact, buf, n);
        fuzz_cur = exact; fuzz_cur_n = n;
        alarm(20);                                              /* a hang is a failure too */
        t->fn(exact, n);
        alarm(0);
        fuzz_cur = NULL;
        free(exact);
        runs++;
    }
    printf("fuzz %s: %ld mutated inputs in %.0f s, no failure\n", t->name, runs, infer_time_seconds() - t0);
    for (int i = 0; i < fuzz_loaded.count; i++) free(fuzz_loaded.d[i]);
    free(fuzz_loaded.d); free(fuzz_loaded.n); free(buf);
    for (int k = 0; k < 4; k++) infer_model_free(fuzz_vocab_models[k]);
    return 0;
}
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
