/* main.c -- the infer command line. The only place that prints usage and exits. */
#define INFER_IMPLEMENTATION
#include "infer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>

static const char *usage_text =
    "usage: infer [-m MODEL] [options]\n"
    "  MODEL: a GGUF file, or a Hugging Face folder (config.json, *.safetensors, tokenizer.json);\n"
    "         without -m, data/tales.gguf (a small model that writes children's stories)\n"
    "\n"
    "input (one of):\n"
    "  -p, --prompt TEXT       prompt text\n"
    "  -f, --file FILE         read the prompt from FILE (- = standard input)\n"
    "  --prompt-ids 1,2,3      prompt as token ids (no tokenizer, no BOS added)\n"
    "\n"
    "chat:\n"
    "  -cnv, --chat            chat: every line of standard input is a user message (a '> ' prompt\n"
    "                          when it is a terminal); replies stream; /reset starts over. The\n"
    "                          conversation stays in the context: each turn evaluates only its new\n"
    "                          tokens; when the context is full the oldest turns are dropped\n"
    "  --system TEXT           the system message of the chat (-p/-f text also serves as one)\n"
    "  --chat-template FILE    a Jinja chat template instead of the model's own\n"
    "  --chat-render CONV.json print the chat template's text for a conversation\n"
    "                          ({\"messages\": [...], \"add_generation_prompt\": true, \"tools\": [...]})\n"
    "                          and exit; the model may be vocab-only\n"
    "\n"
    "generation:\n"
    "  -n, --n-predict N       tokens to generate (default 128; 0 = only evaluate the prompt;\n"
    "                          -1 = until the end of generation or of the context)\n"
    "  --temp T                temperature (default 0.8; 0 = greedy)\n"
    "  --top-k K               (default 40; 0 = off)\n"
    "  --top-p P               (default 0.95; 1 = off)\n"
    "  --min-p P               (default 0.05; 0 = off)\n"
    "  --repeat-penalty R      (default 1.0 = off)\n"
    "  --repeat-last-n N       tokens the penalties look back over (default 64)\n"
    "  --presence-penalty F    subtract F from each token seen there (default 0 = off)\n"
    "  --frequency-penalty F   subtract F per time a token was seen there (default 0 = off)\n"
    "  --logit-bias ID(+|-)B   add B to token ID's logit (e.g. 15043+1, 2-inf); repeatable\n"
    "  --ignore-eos            end-of-generation tokens do not stop it\n"
    "  -r, --reverse-prompt S  stop once the output holds S (up to 16; a reply in --chat too)\n"
    "  --seed S                RNG seed (default, or -1: a random one; the stats line shows it)\n"
    "  --no-bos                do not add the BOS token\n"
    "  --no-special            treat special-token text in the prompt as plain text\n"
    "\n"
    "constrained output (one of; every sampled token keeps the output inside the grammar):\n"
    "  --grammar TEXT          a GBNF grammar (llama.cpp's notation; the output starts at 'root')\n"
    "  --grammar-file FILE     the grammar from FILE\n"
    "  --json-schema TEXT|@FILE  JSON that validates against this JSON Schema\n"
    "  --json                  any JSON object\n"
    "\n"
    "runtime:\n"
    "  -c, --ctx-size N        context length (default: min(training context, 4096))\n"
    "  -t, --threads N         threads (default and most: the cores this process may use)\n"
    "  --kv-type f32|f16       KV cache element type (default f16)\n"
    "  --ubatch N              process the prompt in chunks of N tokens (default 512)\n"
    "  --precise               exact maths: f32 activations and KV cache, no int8 dot products\n"
    "  --gpu                   run on the GPU (a build made with `make cuda`: ./infer-cuda)\n"
    "  --no-hugepages          map the model file as it is (default: in 2 MiB pages where the\n"
    "                          system allows, re-reading a file cached in small pages once)\n"
    "  --no-repack             read the weights from the file's mapping (default on AVX-512\n"
    "                          CPUs: quantized weights copied at load in the order the matmul\n"
    "                          tiles read, F16/BF16 copied as they are)\n"
    "\n"
    "modes:\n"
    "  --logits-out FILE       write float32 logits, one n_vocab row per evaluated token\n"
    "  --tokenize              print the prompt's token ids and exit (works on vocab-only files)\n"
    "  --ppl FILE              perplexity of FILE's text\n"
    "  --info                  print metadata and the tensor table (works on vocab-only files)\n"
    "  --bench                 speed: a --bench-pp token prompt (default 128) and, apart, --bench-tg\n"
    "                          generated tokens (default 64), each from an empty context (as the\n"
    "                          reference's pp and tg tests), best of --bench-reps runs (3); prints\n"
    "                          'bench pp=.. tg=.. pp_tok_s=.. tg_tok_s=.. rss_mb=..', then\n"
    "                          'weights_mb=.. decode_mb=.. threads=.. launches=.. graph=..' (the last\n"
    "                          decode step's backend launches, and 1 if it ran as one CUDA graph)\n"
    "  --bench-depth N         with --bench: both tests after N tokens already in the context\n"
    "                          (not timed; ' depth=N' ends the bench line)\n"
    "  --bench-batch 1,4,16    with --bench: B sequences at once for each B, one 'bench ... batch=B'\n"
    "                          line each (tok/s summed over the B sequences)\n"
    "  --parallel N, -np N     every line of -f FILE is a prompt; run up to N at once (one KV pool,\n"
    "                          shared prefixes reused), print each completion as '[line] text'\n"
    "  --membw                 measure memory read bandwidth (GB/s) with -t threads and exit\n"
    "  --diff                  check the GPU against the CPU: every kernel on random inputs, then\n"
    "                          (with -m) the model layer by layer; exit 1 beyond tolerance\n"
    "  --server                serve the model over HTTP, OpenAI-compatible (a build with\n"
    "                          libmicrohttpd): POST /v1/chat/completions, /v1/completions, /tokenize,\n"
    "                          /detokenize; GET /v1/models, /health, /metrics, / (a chat page).\n"
    "                          -np N sequences decode at once (default 4), more requests queue;\n"
    "                          -c is the context of all of them together (default N x min(training\n"
    "                          context, 4096)); -n the default max_tokens; the sampling options\n"
    "                          the defaults of what a request leaves out\n"
    "  --host ADDR             --server: the address to listen on (default 127.0.0.1)\n"
    "  --port N                --server: the port (default 8080; 0 = any free one, printed)\n"
    "  --api-key KEY           --server: requests need 'Authorization: Bearer KEY' (not /health, /)\n"
    "  --timeout S             --server: close a connection silent for S seconds (default 600)\n"
    "  --version               print the version and exit\n"
    "  -h, --help              this text\n";

static void progress_clear(void);
static void die(const char *fmt, const char *arg) {
    progress_clear();
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

/* The model a run without -m uses: data/tales.gguf, a small story-writing model this
 * project trains itself (data/README.md, tools/train.c), looked for in the directory the
 * program is in (where `make` builds it), then in the working directory. */
#define DEFAULT_MODEL "tales.gguf"
static const char *default_model(void) {
    static char path[4096];
    char exe[3900];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = 0;
        snprintf(path, sizeof path, "%s/data/" DEFAULT_MODEL, exe);
        if (access(path, R_OK) == 0) return path;
    }
    return access("data/" DEFAULT_MODEL, R_OK) == 0 ? "data/" DEFAULT_MODEL : NULL;
}

/* A one-line progress indication for what takes a while (a large model's load, the
 * benchmarks): on a terminal only, once the work has gone on for INFER_PROGRESS_AFTER
 * seconds (default 0.5: a quick load shows nothing), redrawn at most ten times a second (at
 * every step when 0), and cleared before anything else is printed. progress_start() marks
 * where the work begins. */
static struct { int tty; double t0, last, after; int shown; } progress = { -1, 0, 0, 0.5, 0 };
static void progress_start(void) {
    if (progress.tty < 0) {
        progress.tty = isatty(2);
        const char *a = getenv("INFER_PROGRESS_AFTER");
        if (a && *a) progress.after = atof(a);
    }
    progress.t0 = infer_time_seconds();
    progress.last = 0;
}
static void progress_show(const char *fmt, ...) {
    if (progress.tty <= 0) return;
    const double t = infer_time_seconds();
    if (t - progress.t0 < progress.after || t - progress.last < (progress.after < 0.1 ? progress.after : 0.1)) return;
    progress.last = t;
    va_list ap;
    va_start(ap, fmt);
    fputc('\r', stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\033[K", stderr);
    va_end(ap);
    progress.shown = 1;
}
static void progress_clear(void) {
    if (progress.shown) fputs("\r\033[K", stderr);
    progress.shown = 0;
}
static void load_progress(void *user, const char *stage, double done) {
    progress_show("loading %s: %s %.0f%%", (const char *)user, stage, 100 * done);
}

typedef struct {
    const char *model, *prompt, *file, *prompt_ids, *logits_out, *ppl, *chat_template, *chat_render, *system;
    int n_predict, n_ctx, n_threads, n_ubatch, precise, tokenize, info, no_bos, no_special, seed_set, chat;
    int bench, bench_pp, bench_tg, bench_reps, bench_depth, membw, gpu, diff, no_hugepages, no_repack, ignore_eos;
    int parallel;                /* --parallel N: each line of -f a prompt, N at once */
    int server, port, timeout, n_predict_set;   /* --server */
    const char *host, *api_key;
    int bench_batch[16], n_bench_batch;
    infer_type kv_type;
    infer_sampler_params sp;
    const char *grammar, *grammar_file, *json_schema;   /* constrained output: sp.grammar, made from one of these */
    int json, n_grammar_opts;
    infer_logit_bias *bias;      /* --logit-bias pairs (sp.logit_bias points here) */
    const char *stop[16];        /* -r: the output stops once it holds one of these */
    int n_stop;
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

/* a fresh seed from the kernel (the clock and pid if that fails), in [0, 2^63) so that
 * --seed can take it back */
static uint64_t random_seed(void) {
    uint64_t v = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&v, sizeof v, 1, f) != 1) v = (uint64_t)time(NULL) * 6364136223846793005ull ^ (uint64_t)getpid();
    if (f) fclose(f);
    return v & 0x7fffffffffffffffull;
}

static void parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = 128;
    o->kv_type = INFER_TYPE_F16;
    o->sp = infer_sampler_default_params();
    o->bench_pp = 128;
    o->bench_tg = 64;
    o->bench_reps = 3;
    o->host = "127.0.0.1";
    o->port = 8080;
    o->timeout = 600;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die("option %s needs a value", a), ""))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(usage_text, stdout); exit(0); }
        else if (!strcmp(a, "--version")) { printf("infer %s\n", INFER_VERSION); exit(0); }
        else if (!strcmp(a, "-m") || !strcmp(a, "--model")) o->model = NEXT();
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) o->prompt = NEXT();
        else if (!strcmp(a, "-f") || !strcmp(a, "--file")) o->file = NEXT();
        else if (!strcmp(a, "--prompt-ids")) o->prompt_ids = NEXT();
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) { o->n_predict = (int)parse_int(a, NEXT(), -1, 1 << 30); o->n_predict_set = 1; }
        else if (!strcmp(a, "--temp")) o->sp.temp = parse_float(a, NEXT(), 0, 1e6);
        else if (!strcmp(a, "--top-k")) o->sp.top_k = (int)parse_int(a, NEXT(), 0, 1 << 30);
        else if (!strcmp(a, "--top-p")) o->sp.top_p = parse_float(a, NEXT(), 0, 1);
        else if (!strcmp(a, "--min-p")) o->sp.min_p = parse_float(a, NEXT(), 0, 1);
        else if (!strcmp(a, "--repeat-penalty")) o->sp.repeat_penalty = parse_float(a, NEXT(), 1e-6, 1e6);
        else if (!strcmp(a, "--repeat-last-n")) o->sp.repeat_last_n = (int)parse_int(a, NEXT(), 0, 1 << 20);
        else if (!strcmp(a, "--presence-penalty")) o->sp.presence_penalty = parse_float(a, NEXT(), -1e6, 1e6);
        else if (!strcmp(a, "--frequency-penalty")) o->sp.frequency_penalty = parse_float(a, NEXT(), -1e6, 1e6);
        else if (!strcmp(a, "--ignore-eos")) o->ignore_eos = 1;
        else if (!strcmp(a, "-r") || !strcmp(a, "--reverse-prompt")) {
            const char *v = NEXT();
            if (!*v || strlen(v) > 256) die("%s", "-r: a stop string has 1 to 256 bytes");
            if (o->n_stop == 16) die("%s", "-r: at most 16 stop strings");
            o->stop[o->n_stop++] = v;
        }
        else if (!strcmp(a, "--logit-bias")) {               /* ID+B or ID-B, B a number or inf */
            const char *v = NEXT();
            char *end;
            errno = 0;
            const long id = strtol(v, &end, 10);
            if (end == v || errno || id < 0 || id > INT32_MAX || (*end != '+' && *end != '-')) die("bad value '%s' for --logit-bias (expected TOKEN_ID+BIAS or TOKEN_ID-BIAS, e.g. 15043+1)", v);
            const char *b = end;
            const double bias = !strcmp(b + 1, "inf") ? (b[0] == '-' ? -INFINITY : INFINITY) : strtod(b, &end);
            if (strcmp(b + 1, "inf") && (end == b || *end || bias != bias)) die("bad value '%s' for --logit-bias (expected TOKEN_ID+BIAS or TOKEN_ID-BIAS, e.g. 15043+1)", v);
            o->bias = xrealloc(o->bias, sizeof *o->bias * (size_t)(o->sp.n_logit_bias + 1), "--logit-bias");
            o->bias[o->sp.n_logit_bias].token = (int32_t)id;
            o->bias[o->sp.n_logit_bias++].bias = (float)bias;
            o->sp.logit_bias = o->bias;
        }
        else if (!strcmp(a, "--seed")) { long v = parse_int(a, NEXT(), -1, 0x7fffffffffffffffL); o->sp.seed = (uint64_t)v; o->seed_set = v >= 0; }
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
        else if (!strcmp(a, "--chat-template")) o->chat_template = NEXT();
        else if (!strcmp(a, "-cnv") || !strcmp(a, "--chat")) o->chat = 1;
        else if (!strcmp(a, "--system")) o->system = NEXT();
        else if (!strcmp(a, "--chat-render")) o->chat_render = NEXT();
        else if (!strcmp(a, "--bench")) o->bench = 1;
        else if (!strcmp(a, "--bench-pp")) o->bench_pp = (int)parse_int(a, NEXT(), 1, 1 << 20);
        else if (!strcmp(a, "--bench-tg")) o->bench_tg = (int)parse_int(a, NEXT(), 0, 1 << 20);
        else if (!strcmp(a, "--bench-reps")) o->bench_reps = (int)parse_int(a, NEXT(), 1, 1000);
        else if (!strcmp(a, "--bench-depth")) o->bench_depth = (int)parse_int(a, NEXT(), 0, 1 << 20);
        else if (!strcmp(a, "--membw")) o->membw = 1;
        else if (!strcmp(a, "--no-hugepages")) o->no_hugepages = 1;
        else if (!strcmp(a, "--no-repack")) o->no_repack = 1;
        else if (!strcmp(a, "--parallel") || !strcmp(a, "-np")) o->parallel = (int)parse_int(a, NEXT(), 1, 4096);
        else if (!strcmp(a, "--bench-batch")) {
            const char *v = NEXT(), *p = v;
            while (*p) {
                char *end;
                errno = 0;
                long b = strtol(p, &end, 10);
                if (end == p || errno || b < 1 || b > 4096 || o->n_bench_batch == 16) die("bad value '%s' for --bench-batch (expected up to 16 batch sizes in 1..4096, e.g. 1,4,16,64)", v);
                o->bench_batch[o->n_bench_batch++] = (int)b;
                p = end;
                if (*p == ',') p++;
                else if (*p) die("bad value '%s' for --bench-batch (expected up to 16 batch sizes in 1..4096, e.g. 1,4,16,64)", v);
            }
        }
        else if (!strcmp(a, "--server")) o->server = 1;
        else if (!strcmp(a, "--host")) o->host = NEXT();
        else if (!strcmp(a, "--port")) o->port = (int)parse_int(a, NEXT(), 0, 65535);
        else if (!strcmp(a, "--api-key")) o->api_key = NEXT();
        else if (!strcmp(a, "--timeout")) o->timeout = (int)parse_int(a, NEXT(), 1, 86400);
        else if (!strcmp(a, "--gpu")) o->gpu = 1;
        else if (!strcmp(a, "--diff")) o->diff = 1;
        else if (!strcmp(a, "--no-bos")) o->no_bos = 1;
        else if (!strcmp(a, "--no-special")) o->no_special = 1;
        else if (!strcmp(a, "--grammar")) { o->grammar = NEXT(); o->n_grammar_opts++; }
        else if (!strcmp(a, "--grammar-file")) { o->grammar_file = NEXT(); o->n_grammar_opts++; }
        else if (!strcmp(a, "--json-schema")) { o->json_schema = NEXT(); o->n_grammar_opts++; }
        else if (!strcmp(a, "--json")) { o->json = 1; o->n_grammar_opts++; }
        else die("unknown option '%s' (see --help)", a);
#undef NEXT
    }
#ifndef INFER_SERVER
    if (o->server) die("%s", "this infer was built without the HTTP server: install libmicrohttpd (apt-get install libmicrohttpd-dev) and run make again");
#endif
    if (!o->model && o->server) die("%s", "no model given: a server serves the model -m names (see --help)");
    if (!o->model && !o->membw && !o->diff) {
        if (!(o->model = default_model())) die("%s", "no model given (use -m MODEL; see --help), and the default model, data/" DEFAULT_MODEL ", is neither beside the program nor in the working directory");
        fprintf(stderr, "infer: no -m given: the default model, %s\n", o->model);
    }
    int inputs = !!o->prompt + !!o->file + !!o->prompt_ids;
    if (inputs > 1) die("%s", "give only one of -p, -f and --prompt-ids");
    if (o->server && (inputs || o->chat || o->bench || o->tokenize || o->info || o->ppl || o->logits_out || o->chat_render))
        die("%s", "--server takes its prompts from HTTP: not with -p, -f, --prompt-ids, --chat, --bench, --tokenize, --info, --ppl, --logits-out or --chat-render");
    if (!o->server && (strcmp(o->host, "127.0.0.1") || o->port != 8080 || o->api_key || o->timeout != 600)) die("%s", "--host, --port, --api-key and --timeout go with --server");
    if (o->server && o->api_key && !*o->api_key) die("%s", "--api-key needs a non-empty key");
    if (o->parallel && !o->file && !o->server) die("%s", "--parallel N takes its prompts from -f FILE, one per line");
    if (o->parallel && o->chat) die("%s", "--parallel and --chat do not go together");
    if (o->n_bench_batch && !o->bench) die("%s", "--bench-batch goes with --bench");
    if (o->bench_depth && !o->bench) die("%s", "--bench-depth goes with --bench");
    if (o->bench_depth && o->n_bench_batch) die("%s", "--bench-depth does not go with --bench-batch (its decode follows its prompts)");
    if (o->chat && (o->prompt_ids || o->logits_out || o->tokenize)) die("%s", "--chat takes text: not --prompt-ids, --logits-out or --tokenize");
    if (o->chat && o->system && (o->prompt || o->file)) die("%s", "give the chat's system message once: --system, -p or -f");
    /* options that would be ignored in the company they are in */
    if (o->system && !o->chat) die("%s", "--system goes with --chat");
    if (o->ppl && (o->logits_out || o->bench || o->tokenize || o->chat || inputs)) die("%s", "--ppl takes its text from its own file: not with -p, -f, --prompt-ids, --logits-out, --bench, --tokenize or --chat");
    if (o->bench && (inputs || o->logits_out || o->tokenize || o->chat)) die("%s", "--bench makes its own prompts: not with -p, -f, --prompt-ids, --logits-out, --tokenize or --chat");
    if (o->tokenize && o->info) die("%s", "give one of --tokenize and --info");
    if (o->n_grammar_opts > 1) die("%s", "give one of --grammar, --grammar-file, --json-schema and --json");
    if (o->n_grammar_opts && (o->bench || o->ppl || o->tokenize || o->info || o->logits_out || o->chat_render || o->diff || o->membw))
        die("%s", "--grammar, --grammar-file, --json-schema and --json constrain generated text: not with --bench, --ppl, --tokenize, --info, --logits-out, --chat-render, --diff or --membw");
    if (!o->seed_set) o->sp.seed = random_seed();
    if (!o->n_threads) o->n_threads = infer_default_threads();
    else if (o->n_threads > infer_default_threads()) {   /* as the library does: more threads only take turns */
        fprintf(stderr, "note: -t %d is more than the %d cores this process may use; running %d threads\n", o->n_threads, infer_default_threads(), infer_default_threads());
        o->n_threads = infer_default_threads();
    }
}

/* the whole of a file, NUL-terminated; "-" is standard input */
static char *read_file(const char *path, size_t *len) {
    struct stat sb;
    const int is_stdin = !strcmp(path, "-");
    if (!is_stdin && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) { fprintf(stderr, "infer: '%s' is a directory, not a file\n", path); exit(1); }
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) { fprintf(stderr, "infer: cannot open '%s': %s\n", path, strerror(errno)); exit(1); }
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap + 1, path);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) { cap *= 2; buf = xrealloc(buf, cap + 1, path); }
    }
    if (ferror(f)) { fprintf(stderr, "infer: cannot read '%s': %s\n", path, strerror(errno)); exit(1); }
    if (!is_stdin) fclose(f);
    if (!buf) { fprintf(stderr, "infer: out of memory reading '%s'\n", path); exit(1); }
    if (n > (size_t)INT32_MAX - 16) die("'%s' is too large (2 GB at most)", path);   /* token counts are ints */
    buf[n] = 0;
    *len = n;
    return buf;
}

/* --json's schema: any JSON object (the server's response_format json_object too) */
static const char json_object_schema[] = "{\"type\": \"object\"}";

/* --grammar, --grammar-file, --json-schema, --json -> o->sp.grammar (a bad grammar or schema
 * is a message naming where it goes wrong) */
static void load_grammar(options *o) {
    if (!o->n_grammar_opts) return;
    char *text = NULL, *gbnf = NULL;
    size_t len = 0;
    infer_error err;
    const char *what = o->grammar ? "--grammar" : o->grammar_file ? o->grammar_file : "--json-schema";
    if (o->grammar) { text = strdup(o->grammar); len = strlen(text); }
    else if (o->grammar_file) text = read_file(o->grammar_file, &len);
    else if (o->json) { text = strdup(json_object_schema); len = strlen(text); what = "--json"; }
    else if (o->json_schema[0] == '@') text = read_file(o->json_schema + 1, &len), what = o->json_schema + 1;
    else { text = strdup(o->json_schema); len = strlen(text); }
    if (!text) die("%s", "out of memory");
    if (o->json_schema || o->json) {
        if (infer_json_schema_to_grammar(text, len, &gbnf, &err) != INFER_OK) { fprintf(stderr, "infer: %s: %s\n", what, err.msg); exit(1); }
        free(text);
        text = gbnf;
        len = strlen(gbnf);
    }
    infer_grammar *g;
    if (infer_grammar_parse(&g, text, len, &err) != INFER_OK) { fprintf(stderr, "infer: %s: %s\n", what, err.msg); exit(1); }
    if (gbnf) infer_free(gbnf);   /* the library's allocation */
    else free(text);
    o->sp.grammar = g;
}
/* a fresh sampler follows the grammar from here on (after the prompt) */
static void constrain(infer_sampler *smp, const options *o, const infer_tokenizer *tok) {
    infer_error err;
    if (o->sp.grammar && infer_sampler_set_grammar(smp, o->sp.grammar, tok, &err) != INFER_OK) die("%s", err.msg);
}

/* token ids for the prompt: from --prompt-ids, or by tokenizing -p / -f text */
static int32_t *prompt_tokens(const options *o, const infer_model *m, const char *text, size_t len, int *n_out) {
    if (o->prompt_ids) {
        int cap = 16, n = 0;
        int32_t *ids = xmalloc(sizeof(int32_t) * cap, "--prompt-ids");
        /* ids separated by one comma or by spaces: no empty entry anywhere */
        const char *p = o->prompt_ids;
        while (*p == ' ') p++;
        if (!*p) die("%s", "--prompt-ids: no token ids given");
        for (;;) {
            char *end;
            errno = 0;
            long v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : (end = (char *)p, 0);
            if (end == p || errno || v < 0 || v > INT32_MAX) die("bad token id list '%s' for --prompt-ids (expected ids like 1,403,407)", o->prompt_ids);
            if (n == cap) { cap *= 2; ids = xrealloc(ids, sizeof(int32_t) * (size_t)cap, "--prompt-ids"); }
            ids[n++] = (int32_t)v;
            p = end;
            while (*p == ' ') p++;
            if (!*p) break;
            if (*p == ',') {
                p++;
                while (*p == ' ') p++;
                if (!*p) die("bad token id list '%s' for --prompt-ids (it ends with a comma)", o->prompt_ids);
            }
        }
        *n_out = n;
        return ids;
    }
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    if (!tok) {
        struct stat sb;
        if (o->model && stat(o->model, &sb) == 0 && S_ISDIR(sb.st_mode)) die("the model has no vocabulary: the folder '%s' has no tokenizer.json; give the prompt with --prompt-ids", o->model);
        die("%s", "the model has no vocabulary; give the prompt with --prompt-ids");
    }
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

static void print_line(void *user, const char *line);

/* --chat-template FILE, or NULL for the model's own */
static char *chat_template_text(const options *o, size_t *len) {
    return o->chat_template ? read_file(o->chat_template, len) : NULL;
}

/* --chat-render CONV.json: the template's text for the conversation, exactly, on stdout */
static int run_chat_render(const options *o, const infer_model *m) {
    size_t clen, tlen = 0, olen;
    char *conv = read_file(o->chat_render, &clen), *tmpl = chat_template_text(o, &tlen), *out;
    infer_error err;
    if (infer_model_chat_render(m, tmpl, tlen, conv, clen, &out, &olen, &err) != INFER_OK) {
        fprintf(stderr, "infer: %s: %s\n", o->chat_render, err.msg);
        free(conv); free(tmpl);
        return 1;
    }
    if (out) fwrite(out, 1, olen, stdout);
    infer_free(out); free(conv); free(tmpl);
    return 0;
}

/* ---- --chat ----
 * The conversation is a list of messages; every turn renders all of it with the chat
 * template (and the generation prompt), tokenizes the text, and hands the ids to
 * infer_eval_prefix, which keeps what the session already holds -- the previous turns and
 * the reply just generated -- and evaluates only the rest. When the context cannot hold the
 * conversation plus room for a reply, the oldest turns (after the system message) are
 * dropped, with a notice. */
typedef struct { char *p; size_t n, cap; } strbuf;
static void sb_put(strbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        if (!(b->p = realloc(b->p, b->cap))) die("%s", "out of memory");
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}
static void sb_puts(strbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
/* a JSON string literal; bytes that are not UTF-8 (a reply cut inside a character, a model's
 * stray bytes) become U+FFFD, so the template always gets valid text */
static void sb_json(strbuf *b, const char *s, size_t n) {
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        const size_t len = (size_t)infer_utf8_char_len(s + i, n - i);
        if (len == 0) { sb_puts(b, "\\ufffd"); i++; continue; }
        if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = (char)c; sb_put(b, esc, 2); }
        else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); sb_puts(b, esc); }
        else sb_put(b, s + i, len);
        i += len;
    }
    sb_put(b, "\"", 1);
}

typedef struct { const char *role; strbuf text; } chat_msg;

/* the conversation as the template's variables */
static void chat_vars(strbuf *out, const chat_msg *msgs, int n) {
    out->n = 0;
    sb_puts(out, "{\"messages\": [");
    for (int i = 0; i < n; i++) {
        sb_puts(out, i ? ", {\"role\": " : "{\"role\": ");
        sb_json(out, msgs[i].role, strlen(msgs[i].role));
        sb_puts(out, ", \"content\": ");
        sb_json(out, msgs[i].text.p ? msgs[i].text.p : "", msgs[i].text.n);
        sb_puts(out, "}");
    }
    sb_puts(out, "], \"add_generation_prompt\": true}");
}

/* the conversation's prompt tokens; BOS in front when the model wants one and the
 * template did not write it */
static int32_t *chat_tokens(const infer_model *m, const char *tmpl, size_t tlen, const chat_msg *msgs, int n, int *n_out) {
    strbuf vars = { 0 };
    char *text;
    size_t len;
    infer_error err;
    chat_vars(&vars, msgs, n);
    if (infer_model_chat_render(m, tmpl, tlen, vars.p, vars.n, &text, &len, &err) != INFER_OK) die("%s", err.msg);
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    int cap = (int)len + 8;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)cap);
    if (!ids) die("%s", "out of memory");
    int k = infer_tokenize(tok, text, len, 0, 1, ids + 1, cap - 1);
    if (k < 0 || k > cap - 1) die("%s", "tokenizing the conversation failed");
    int bos = tok->add_bos && tok->bos >= 0 && (k == 0 || ids[1] != tok->bos);
    if (bos) ids[0] = tok->bos;
    else memmove(ids, ids + 1, sizeof(int32_t) * (size_t)k);
    *n_out = k + bos;
    infer_free(text);
    free(vars.p);
    return ids;
}

/* The bytes of token t that are complete UTF-8 now (infer_detok_push), in *buf, which grows
 * to fit the piece: a token's text can be longer than any fixed buffer (vocabularies hold
 * pieces of hundreds of bytes). Returns the count, 0 for an id the vocabulary lacks. */
static int detok_piece(infer_detok *dt, int32_t t, char **buf, int *cap) {
    for (;;) {
        const int nb = *buf ? infer_detok_push(dt, t, *buf, *cap) : -64;
        if (nb >= 0) return nb;
        if (nb == -1) return 0;
        *cap = -nb + 64;
        *buf = xrealloc(*buf, (size_t)*cap, "a token's text");
    }
}

/* -r: the last bytes written, and whether they now hold a stop string (the first time they
 * do: the caller stops there) */
typedef struct { char buf[512]; int n; } stop_tail;
static int stop_seen(const options *o, stop_tail *t, const char *s, int n) {
    if (!o->n_stop || n <= 0) return 0;
    if (n >= (int)sizeof t->buf) { s += n - (int)(sizeof t->buf - 1); n = (int)sizeof t->buf - 1; }
    if (t->n + n >= (int)sizeof t->buf) {                    /* keep the newest bytes */
        const int drop = t->n + n - (int)(sizeof t->buf - 1);
        memmove(t->buf, t->buf + drop, (size_t)(t->n - drop));
        t->n -= drop;
    }
    memcpy(t->buf + t->n, s, (size_t)n);
    t->n += n;
    for (int i = 0; i < o->n_stop; i++) {
        const size_t k = strlen(o->stop[i]);
        for (int at = 0; at + (int)k <= t->n; at++) if (!memcmp(t->buf + at, o->stop[i], k)) return 1;
    }
    return 0;
}

/* the generation's output: each token's text as it comes (ids where the model has no
 * vocabulary), kept too where `keep` is set (a chat's reply), and with --logits-out every
 * row of logits */
typedef struct {
    const infer_tokenizer *tok;
    infer_detok dt;
    char *piece;
    int piece_cap, n_out, V;
    FILE *lf;
    const char *lf_path;
    const options *o;
    stop_tail tail;
    strbuf *keep;
} gen_out;
static int gen_token(void *user, int32_t t, const float *logits) {
    gen_out *g = user;
    (void)logits;
    if (g->tok) {
        const int nb = detok_piece(&g->dt, t, &g->piece, &g->piece_cap);
        fwrite(g->piece, 1, (size_t)nb, stdout);
        fflush(stdout);
        if (g->keep) sb_put(g->keep, g->piece, (size_t)nb);
        g->n_out++;
        return stop_seen(g->o, &g->tail, g->piece, nb);
    }
    printf("%s%d", g->n_out ? " " : "", t);
    g->n_out++;
    return 0;
}
static int run_chat(const options *o, infer_model *m, infer_session *s, const char *system) {
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    if (!tok) die("%s", "--chat needs a model with a vocabulary");
    size_t tlen = 0;
    char *tmpl = chat_template_text(o, &tlen);
    if (!tmpl && !infer_model_chat_template(m, NULL, NULL)) die("%s", "the model has no chat template: give one with --chat-template FILE");
    const int n_ctx = infer_session_n_ctx(s), tty = isatty(0);
    /* the room a reply needs: -n tokens (at most half the context; a quarter for -n -1) */
    const int room = o->n_predict < 0 ? n_ctx / 4 : o->n_predict < n_ctx / 2 ? (o->n_predict > 0 ? o->n_predict : 1) : n_ctx / 2;
    chat_msg *msgs = calloc(2, sizeof *msgs);
    gen_out g;                             /* a reply's tokens, shown and kept */
    memset(&g, 0, sizeof g);
    g.tok = tok;
    g.o = o;
    int n_msgs = 0, cap_msgs = 2, n_sys = 0, turn = 0;
    if (!msgs) die("%s", "out of memory");
    if (system) { msgs[0].role = "system"; sb_puts(&msgs[0].text, system); n_msgs = n_sys = 1; }
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t got;
    infer_error err;
    for (;;) {
        if (tty) { fputs("> ", stdout); fflush(stdout); }
        if ((got = getline(&line, &line_cap, stdin)) < 0) break;
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r')) line[--got] = 0;
        if (got == 0) continue;
        if (!strcmp(line, "/reset")) {
            for (int i = n_sys; i < n_msgs; i++) free(msgs[i].text.p);
            n_msgs = n_sys;
            infer_session_reset(s);
            fprintf(stderr, "(the conversation starts over)\n");
            continue;
        }
        if (n_msgs + 2 > cap_msgs) { cap_msgs *= 2; if (!(msgs = realloc(msgs, sizeof *msgs * (size_t)cap_msgs))) die("%s", "out of memory"); }
        msgs[n_msgs].role = "user";
        memset(&msgs[n_msgs].text, 0, sizeof(strbuf));
        sb_put(&msgs[n_msgs].text, line, (size_t)got);
        n_msgs++;
        turn++;
        int n = 0, dropped = 0;
        int32_t *ids = chat_tokens(m, tmpl, tlen, msgs, n_msgs, &n);
        /* too long: drop the oldest exchange (up to the next user message) and render again */
        while (n + room > n_ctx && n_msgs - n_sys > 1) {
            int end = n_sys + 1;
            while (end < n_msgs - 1 && strcmp(msgs[end].role, "user")) end++;
            for (int i = n_sys; i < end; i++) free(msgs[i].text.p);
            memmove(msgs + n_sys, msgs + end, sizeof *msgs * (size_t)(n_msgs - end));
            n_msgs -= end - n_sys;
            dropped += end - n_sys;
            free(ids);
            ids = chat_tokens(m, tmpl, tlen, msgs, n_msgs, &n);
        }
        if (dropped) fprintf(stderr, "infer: the context is full: the oldest %d message%s left the conversation\n", dropped, dropped > 1 ? "s" : "");
        if (n + room > n_ctx) {
            fprintf(stderr, "infer: this message does not fit in the context (%d tokens with the conversation, context %d): skipped\n", n, n_ctx);
            free(msgs[--n_msgs].text.p);
            free(ids);
            continue;
        }
        chat_msg *reply = &msgs[n_msgs++];
        reply->role = "assistant";
        memset(&reply->text, 0, sizeof(strbuf));
        sb_put(&reply->text, "", 0);
        infer_detok_init(&g.dt, tok);
        g.tail.n = 0;
        g.keep = &reply->text;
        infer_gen_params gp = { o->n_predict, 0, gen_token, NULL, &g, 1 };
        infer_gen_stats st;
        if (infer_generate_ex(s, ids, n, &gp, &o->sp, &st, &err) != INFER_OK) die("%s", err.msg);
        if (st.stop == INFER_STOP_CONTEXT) fprintf(stderr, "\ninfer: the context is full: the reply stops here\n");
        char buf[64];
        int nb = infer_detok_flush(&g.dt, buf, sizeof buf);
        fwrite(buf, 1, (size_t)nb, stdout);
        sb_put(&reply->text, buf, (size_t)nb);
        fputc('\n', stdout);
        fflush(stdout);
        char rate[32] = "-";
        if (st.n_eval) snprintf(rate, sizeof rate, "%.2f", st.n_eval / (st.gen_seconds > 0 ? st.gen_seconds : 1e-9));
        fprintf(stderr, "turn %d: prompt %d tokens: %d held, %d evaluated in %.3f s; reply %d tokens (%s tok/s)\n",
                turn, n, n - st.n_prompt_eval, st.n_prompt_eval, st.prompt_seconds, st.n_gen, rate);
        free(ids);
    }
    for (int i = 0; i < n_msgs; i++) free(msgs[i].text.p);
    free(msgs); free(line); free(tmpl); free(g.piece);
    return 0;
}

/* The stats line. The first generated token comes from the prompt's pass; each later one
 * from a forward pass of its own, so the generation speed is those passes over the time of
 * the loop that ran them (with -n 1 there are none, and no speed to show). */
static void print_stats(const options *o, int n_prompt, double t_prompt, int n_gen, int n_pass, double t_gen) {
    char gen_rate[32] = "-";
    if (n_pass > 0) snprintf(gen_rate, sizeof gen_rate, "%.2f", n_pass / (t_gen > 0 ? t_gen : 1e-9));
    fprintf(stderr, "prompt: %d tokens in %.3f s (%.2f tok/s); generation: %d tokens, %d forward passes in %.3f s (%s tok/s); seed %llu\n",
            n_prompt, t_prompt, n_prompt / (t_prompt > 0 ? t_prompt : 1e-9), n_gen, n_pass, t_gen, gen_rate, (unsigned long long)o->sp.seed);
}

static void write_rows(FILE *f, const float *rows, size_t n, const char *path) {
    if (fwrite(rows, sizeof(float), n, f) != n) die("cannot write '%s'", path);
}

/* --ppl FILE: perplexity as llama-perplexity computes it, so the two figures compare. The
 * text's tokens (BOS first where the model adds one) are cut into chunks of the context
 * size; each chunk is evaluated from an empty cache with its first token replaced by BOS
 * (where the model adds one), and only the second half of each chunk is scored, every token
 * there seeing at least half a context: position j predicts token j + 1 for j in
 * [ctx/2, ctx - 1). A text shorter than two contexts is cut into two chunks of half its
 * length instead (said on stderr). The last line is `perplexity: X +/- E`, E the estimate's
 * standard error. */
static int run_ppl(const options *o, infer_model *m, infer_session *s) {
    size_t len;
    char *text = read_file(o->ppl, &len);
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    if (!tok) die("%s", "--ppl needs a model with a vocabulary");
    int32_t *ids = xmalloc(sizeof(int32_t) * (len + 16), "the text's tokens");
    const int n = infer_tokenize(tok, text, len, !o->no_bos, 0, ids, (int)len + 16);
    if (n < 4) die("'%s' has fewer than four tokens", o->ppl);
    const int V = infer_model_config(m)->n_vocab;
    int ctx = infer_session_n_ctx(s);
    if (n < 2 * ctx) {
        ctx = n / 2;
        fprintf(stderr, "infer: the text has %d tokens, fewer than two contexts: chunks of %d tokens\n", n, ctx);
    }
    const int n_chunk = n / ctx, first = ctx / 2, bos = !o->no_bos && tok->add_bos && tok->bos >= 0;
    /* a chunk is evaluated a ubatch at a time (the pieces infer_eval would cut it into
     * anyway, so the logits are the same): logits for [ubatch, V], not [ctx, V] */
    const int piece = o->n_ubatch ? o->n_ubatch : 512;
    float *logits = xmalloc(sizeof(float) * (size_t)V * (size_t)piece, "the logits");
    int32_t *chunk = xmalloc(sizeof(int32_t) * (size_t)ctx, "a chunk");
    double nll = 0, nll2 = 0;
    long count = 0;
    infer_error err;
    for (int c = 0; c < n_chunk; c++) {
        memcpy(chunk, ids + (size_t)c * ctx, sizeof(int32_t) * (size_t)ctx);
        if (bos) chunk[0] = tok->bos;
        infer_session_reset(s);
        for (int p0 = 0; p0 < ctx - 1; p0 += piece) {          /* the last position predicts nothing */
            const int pl = ctx - p0 < piece ? ctx - p0 : piece;
            if (infer_eval(s, chunk + p0, pl, logits, 1, &err) != INFER_OK) die("%s", err.msg);
            for (int j = p0 > first ? p0 : first; j < p0 + pl && j < ctx - 1; j++) {
                const float *l = logits + (size_t)(j - p0) * V;
                double mx = l[0], sum = 0;
                for (int v = 1; v < V; v++) if (l[v] > mx) mx = l[v];
                for (int v = 0; v < V; v++) sum += exp(l[v] - mx);
                const double x = -(l[ids[(size_t)c * ctx + j + 1]] - mx - log(sum));
                nll += x;
                nll2 += x * x;
                count++;
            }
        }
        fprintf(stderr, "[%d]%.4f%s", c + 1, exp(nll / count), c + 1 == n_chunk ? "\n" : ",");
    }
    const double mean = nll / count, var = nll2 / count - mean * mean;
    const double se = count > 1 && var > 0 ? sqrt(var / (count - 1)) * exp(mean) : 0;
    printf("tokens: %d, chunks: %d of %d tokens, scored: %ld, nll: %.6f\n", n, n_chunk, ctx, count, nll);
    printf("perplexity: %.6f +/- %.5f\n", exp(mean), se);
    free(chunk); free(logits); free(ids); free(text);
    return 0;
}


/* --bench, --bench-batch, --membw (tools/bench.c, compiled here: it uses the helpers above) */
#include "tools/bench.c"

/* --parallel N: every line of the -f file is a prompt (an empty line is skipped, the
 * numbering counts it). Up to N run at once over one KV pool; the next starts as soon as one
 * finishes (or as soon as the pool has room for its prompt and -n tokens); a prompt that
 * starts with a prefix another sequence left in the cache evaluates only the rest. Each
 * completion is printed when it ends, as "[line] text". Prompt and generation speed are the
 * step times shared out by the tokens of each kind in the step. */
typedef struct {
    int line, n_prompt, reused, n_gen, done_prompt;
    int32_t *prompt, seq, last;
    infer_sampler *smp;
    infer_detok dt;
    char *text;
    size_t text_len, text_cap;
    float *logits;
} par_slot;

static void par_text(par_slot *q, const char *p, int n) {
    if (q->text_len + (size_t)n + 1 > q->text_cap) {
        q->text_cap = (q->text_len + (size_t)n + 1) * 2;
        q->text = xrealloc(q->text, q->text_cap, "a completion");
    }
    memcpy(q->text + q->text_len, p, (size_t)n);
    q->text_len += (size_t)n;
    q->text[q->text_len] = 0;
}

static int run_parallel(const options *o, infer_model *m, const infer_session_params *base, const char *text, size_t len) {
    const infer_config *c = infer_model_config(m);
    const infer_tokenizer *tok = infer_model_tokenizer(m);
    const int V = c->n_vocab, N = o->parallel, K = o->n_predict;
    if (!tok) die("%s", "--parallel needs a model with a vocabulary");
    /* the prompts, one per line */
    int n_lines = 0, cap = 64, longest = 0;
    par_slot *all = xmalloc(sizeof(par_slot) * (size_t)cap, "the prompts");
    char *piece = NULL;                    /* a token's text (detok_piece) */
    int piece_cap = 0;
    for (size_t at = 0; at < len;) {
        size_t e = at;
        while (e < len && text[e] != '\n') e++;
        if (n_lines == cap) { cap *= 2; all = xrealloc(all, sizeof(par_slot) * (size_t)cap, "the prompts"); }
        par_slot *q = &all[n_lines];
        memset(q, 0, sizeof *q);
        q->line = n_lines + 1;
        size_t l = e - at;
        if (l && text[at + l - 1] == '\r') l--;
        if (l > 0) {
            q->prompt = xmalloc(sizeof(int32_t) * (l + 16), "a prompt");
            q->n_prompt = infer_tokenize(tok, text + at, l, !o->no_bos, !o->no_special, q->prompt, (int)l + 16);
            if (q->n_prompt > (int)l + 16) {
                q->prompt = xrealloc(q->prompt, sizeof(int32_t) * (size_t)q->n_prompt, "a prompt");
                q->n_prompt = infer_tokenize(tok, text + at, l, !o->no_bos, !o->no_special, q->prompt, q->n_prompt);
            }
            if (q->n_prompt > longest) longest = q->n_prompt;
        }
        n_lines++;
        at = e + 1;
    }
    infer_session_params sp = *base;
    sp.n_seq_max = N;
    if (!sp.n_ctx) {                         /* room for N of the longest prompts with their -n tokens */
        const int train = c->n_ctx_train, need = longest + K + 1;
        sp.n_ctx = N * (need < train ? need : train);
    }
    infer_session *s;
    infer_error err;
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) die("%s", err.msg);
    infer_seq_remove(s, 0);
    par_slot **live = xmalloc(sizeof(par_slot *) * (size_t)N, "the sequences");
    infer_batch_item *items = xmalloc(sizeof(infer_batch_item) * (size_t)N, "the batch");
    int next = 0, n_live = 0, served = 0, n_prompt_tok = 0, n_gen_tok = 0, n_out_tok = 0, failed = 0;
    double t_prompt = 0, t_gen = 0;
    while (next < n_lines || n_live > 0) {
        /* admit: while there is a slot and the pool has room for the next prompt and its -n tokens */
        while (next < n_lines && n_live < N) {
            par_slot *q = &all[next];
            if (q->n_prompt == 0) { next++; continue; }
            if (q->n_prompt + K > infer_session_n_ctx(s)) {
                fprintf(stderr, "[%d] error: the prompt has %d tokens; with -n %d it does not fit the context of %d\n", q->line, q->n_prompt, K, infer_session_n_ctx(s));
                failed++; next++; continue;
            }
            if (n_live > 0 && infer_session_free_tokens(s) < q->n_prompt + K + 16) break;
            if (infer_seq_add(s, &q->seq, &err) != INFER_OK) die("%s", err.msg);
            q->reused = infer_seq_reuse(s, q->seq, q->prompt, q->n_prompt);
            served += q->reused;
            infer_sampler_params smp = o->sp;
            smp.seed += (uint64_t)q->line;
            q->smp = infer_sampler_create(&smp, V);
            for (int i = 0; i < q->n_prompt; i++) infer_sampler_accept(q->smp, q->prompt[i]);
            constrain(q->smp, o, tok);
            infer_detok_init(&q->dt, tok);
            q->logits = xmalloc(sizeof(float) * (size_t)V, "the logits");
            live[n_live++] = q;
            next++;
        }
        if (n_live == 0) continue;
        int np = 0, ng = 0;
        for (int i = 0; i < n_live; i++) {
            par_slot *q = live[i];
            if (!q->done_prompt) { items[i] = (infer_batch_item){ q->seq, q->prompt + q->reused, q->n_prompt - q->reused, q->logits, 0, NULL }; np += q->n_prompt - q->reused; }
            else { items[i] = (infer_batch_item){ q->seq, &q->last, 1, q->logits, 0, NULL }; ng++; }
        }
        const double t0 = infer_time_seconds();
        if (infer_eval_batch(s, items, n_live, &err) != INFER_OK) {
            if (err.status != INFER_ERR_CONTEXT || n_live == 1) die("%s", err.msg);
            par_slot *q = live[--n_live];    /* the pool is full: the newest waits and starts again */
            infer_seq_remove(s, q->seq);
            infer_sampler_free(q->smp);
            free(q->logits); free(q->text);
            q->text = NULL; q->text_len = q->text_cap = 0; q->n_gen = q->done_prompt = 0;
            served -= q->reused;
            for (int j = 0; j < n_lines; j++) if (&all[j] == q) { next = j; break; }
            continue;
        }
        const double dt = infer_time_seconds() - t0;
        t_prompt += dt * np / (np + ng);
        t_gen += dt * ng / (np + ng);
        n_prompt_tok += np;
        n_gen_tok += ng;
        for (int i = 0; i < n_live; i++) {
            par_slot *q = live[i];
            q->done_prompt = 1;
            int eog = 0;
            if (K != 0) {                    /* -n 0: the prompt only */
                const int32_t t = infer_sampler_sample(q->smp, q->logits);
                infer_sampler_accept(q->smp, t);
                eog = !o->ignore_eos && infer_token_is_eog(tok, t);
                if (!eog) {
                    const int nb = detok_piece(&q->dt, t, &piece, &piece_cap);
                    par_text(q, piece, nb);
                    q->n_gen++;
                    n_out_tok++;
                }
                q->last = t;
            }
            const int full = infer_seq_n_past(s, q->seq) + 1 >= infer_session_n_ctx(s);
            if (K != 0 && !eog && (K < 0 || q->n_gen < K) && !full) continue;   /* -n -1: to the end of generation or context */
            char buf[64];
            const int nb = infer_detok_flush(&q->dt, buf, sizeof buf);
            par_text(q, buf, nb);
            printf("[%d] %s\n", q->line, q->text ? q->text : "");
            fflush(stdout);
            infer_seq_remove(s, q->seq);
            infer_sampler_free(q->smp);
            free(q->logits); free(q->text); free(q->prompt);
            q->prompt = NULL;
            live[i--] = live[--n_live];
        }
    }
    /* generated tokens, and the decode rows they took after the prompts' steps (the first
     * token of each comes from its prompt's step), with the decode rate */
    fprintf(stderr, "prompt: %d tokens in %.3f s (%.2f tok/s); generation: %d tokens, %d decoded in %.3f s (%.2f tok/s); prefix cache: %d prompt tokens served\n",
            n_prompt_tok, t_prompt, n_prompt_tok / (t_prompt > 0 ? t_prompt : 1e-9), n_out_tok, n_gen_tok, t_gen, n_gen_tok / (t_gen > 0 ? t_gen : 1e-9), served);
    for (int i = 0; i < n_lines; i++) free(all[i].prompt);
    free(all); free(live); free(items); free(piece);
    infer_session_free(s);
    return failed ? 1 : 0;
}

static void print_line(void *user, const char *line) { (void)user; printf("%s\n", line); fflush(stdout); }

/* --diff: the GPU against the CPU, op by op, then the model (when given) layer by layer */
static int run_diff(infer_model *m, const infer_kernels *k) {
    infer_error err;
    const int rc = infer_backend_diff(k, m, 16, INFER_DIFF_OPS | INFER_DIFF_MODEL, print_line, NULL, &err);
    if (rc < 0) { fprintf(stderr, "infer: --diff: %s\n", err.msg); return 1; }
    return rc ? 1 : 0;
}

/* plain generation: the prompt (or BOS), then up to -n tokens streamed to stdout; with
 * --logits-out every evaluated token's logits go to the file */
static int gen_logits(void *user, const float *rows, int n) {
    gen_out *g = user;
    write_rows(g->lf, rows, (size_t)g->V * (size_t)n, g->lf_path);
    return 0;
}

static int run_generate(const options *o, infer_model *m, infer_session *s, const char *text, size_t text_len) {
    infer_error err;
    int32_t *prompt = NULL;
    int rc = 1, n_prompt = 0;
    gen_out g;
    memset(&g, 0, sizeof g);
    if (text || o->prompt_ids) prompt = prompt_tokens(o, m, text, text_len, &n_prompt);
    else {   /* no prompt: start from BOS */
        const infer_tokenizer *tok = infer_model_tokenizer(m);
        if (!tok) die("%s", "no prompt given and the model has no vocabulary");
        prompt = xmalloc(sizeof(int32_t) * 4, "the prompt");
        n_prompt = infer_tokenize(tok, "", 0, 1, 0, prompt, 4);
    }
    if (n_prompt <= 0) { fprintf(stderr, "infer: the prompt is empty (no tokens)\n"); goto done; }
    if (n_prompt > infer_session_n_ctx(s)) {
        fprintf(stderr, "infer: the prompt has %d tokens, more than the context size %d\n", n_prompt, infer_session_n_ctx(s));
        goto done;
    }
    g.V = infer_model_config(m)->n_vocab;
    g.lf_path = o->logits_out;
    g.o = o;
    if (o->logits_out && !(g.lf = fopen(o->logits_out, "wb"))) { fprintf(stderr, "infer: cannot open '%s' for writing: %s\n", o->logits_out, strerror(errno)); goto done; }
    if ((g.tok = infer_model_tokenizer(m)) != NULL) {
        infer_detok_init(&g.dt, g.tok);
        if (text && o->prompt && text_len) { fwrite(text, 1, text_len, stdout); g.dt.at_start = 0; }   /* a continuation keeps its leading space */
        fflush(stdout);
    }
    /* with --logits-out every generated token is evaluated and end-of-generation tokens do not
     * stop it, so the file has n_prompt + n rows */
    infer_gen_params gp = { o->n_predict, g.lf != NULL || o->ignore_eos, gen_token, g.lf ? gen_logits : NULL, &g, 0 };
    infer_gen_stats st;
    const infer_status gs = infer_generate_ex(s, prompt, n_prompt, &gp, &o->sp, &st, &err);
    if (gs != INFER_OK) { fprintf(stderr, "%sinfer: %s\n", st.n_gen ? "\n" : "", err.msg); goto done; }
    if (st.stop == INFER_STOP_CONTEXT) fprintf(stderr, "\ninfer: context full\n");
    if (g.tok) { char buf[64]; int nb = infer_detok_flush(&g.dt, buf, sizeof buf); fwrite(buf, 1, (size_t)nb, stdout); }
    printf("\n");
    print_stats(o, n_prompt, st.prompt_seconds, st.n_gen, st.n_eval, st.gen_seconds);
    rc = 0;
done:
    if (g.lf && fclose(g.lf) != 0 && rc == 0) { fprintf(stderr, "infer: cannot write '%s': %s\n", o->logits_out, strerror(errno)); rc = 1; }
    free(prompt); free(g.piece);
    return rc;
}

/* --tokenize: the prompt's ids on one line */
static int run_tokenize(const options *o, const infer_model *m, const char *text, size_t text_len) {
    if (!text && !o->prompt_ids) { fprintf(stderr, "infer: --tokenize needs -p or -f\n"); return 1; }
    int n;
    int32_t *ids = prompt_tokens(o, m, text, text_len, &n);
    for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
    free(ids);
    return 0;
}

#ifdef INFER_SERVER
/* --server (tools/server.c, compiled here: it uses the header's private parts and the
 * helpers above) */
#include "tools/server.c"

static int run_server(const options *o, infer_model *m, const infer_session_params *sp) {
    srv_cfg c;
    memset(&c, 0, sizeof c);
    size_t tlen = 0;
    char *tmpl = chat_template_text(o, &tlen);
    c.host = o->host; c.port = o->port; c.api_key = o->api_key; c.timeout_s = o->timeout;
    c.model_path = o->model;
    c.chat_template = tmpl; c.chat_template_len = tlen;
    c.n_seq = o->parallel ? o->parallel : 4;
    c.n_ctx = o->n_ctx;
    c.n_predict = o->n_predict_set ? o->n_predict : -1;
    c.sp = o->sp;
    c.seed_set = o->seed_set;
    const int rc = srv_run(&c, m, sp);
    free(tmpl);
    return rc;
}
#endif

/* The command line: one mode per run. main loads the model (and makes a session where the
 * mode wants one) and releases what it holds on every way out; each mode is a function. */
/* a load error, with the model's path in front unless the message names it already */
static void model_error(const char *path, const char *msg) {
    if (strstr(msg, path)) fprintf(stderr, "infer: %s\n", msg);
    else fprintf(stderr, "infer: %s: %s\n", path, msg);
}

int main(int argc, char **argv) {
    options o;
    parse_args(argc, argv, &o);
    load_grammar(&o);
    if (o.membw) { measure_bw(o.n_threads ? o.n_threads : infer_default_threads()); return 0; }
    infer_error err;
    const infer_kernels *gpu = NULL;
    if ((o.gpu || o.diff) && infer_gpu_kernels(&gpu, &err) != INFER_OK) { fprintf(stderr, "infer: %s: %s\n", o.diff ? "--diff" : "--gpu", err.msg); free(o.bias); return 1; }
    infer_model *m = NULL;
    infer_session *s = NULL;
    char *text = NULL;
    size_t text_len = 0;
    int rc = 1;
    infer_model_params mp;
    memset(&mp, 0, sizeof mp);
    mp.vocab_only = (o.tokenize || o.chat_render) && !o.info;
    mp.no_hugepages = o.no_hugepages || o.info;   /* --info reads no weights: no reason to fault them in */
    mp.no_repack = o.no_repack || o.info || o.gpu || o.precise;   /* the repacked copy serves fast CPU sessions only */
    mp.progress = load_progress;
    mp.progress_user = (void *)o.model;
    progress_start();
    if (o.model && infer_model_load(&m, o.model, &mp, &err) != INFER_OK) {
        /* --info shows what it can: a vocab-only file, or a family we cannot run */
        mp.vocab_only = 1;
        if (!o.info || infer_model_load(&m, o.model, &mp, &err) != INFER_OK) { progress_clear(); model_error(o.model, err.msg); free(o.bias); return 1; }
    }
    progress_clear();
    if (o.diff) { rc = run_diff(m, gpu); goto done; }
    if (o.info) { infer_gguf_describe(infer_model_gguf(m), print_line, NULL); rc = 0; goto done; }
    if (o.chat_render) { rc = run_chat_render(&o, m); goto done; }
    if (gpu && !o.tokenize && infer_model_upload(m, gpu, &err) != INFER_OK) { model_error(o.model, err.msg); goto done; }
    if (o.file) text = read_file(o.file, &text_len);
    else if (o.prompt) { text_len = strlen(o.prompt); text = memcpy(xmalloc(text_len + 1, "the prompt"), o.prompt, text_len + 1); }
    if (o.tokenize) { rc = run_tokenize(&o, m, text, text_len); goto done; }

    infer_session_params sp = infer_session_default_params();
    sp.n_ctx = o.n_ctx;
    sp.n_threads = o.n_threads;
    sp.n_ubatch = o.n_ubatch;
    sp.kv_type = o.kv_type;
    sp.precise = o.precise;
    sp.backend = gpu;
#ifdef INFER_SERVER
    if (o.server) { rc = run_server(&o, m, &sp); goto done; }
#endif
    if (o.parallel) { rc = run_parallel(&o, m, &sp, text, text_len); goto done; }
    if (o.bench && o.n_bench_batch) { rc = run_bench_batch(&o, m, &sp); goto done; }
    if (infer_session_create(&s, m, &sp, &err) != INFER_OK) { fprintf(stderr, "infer: %s\n", err.msg); goto done; }
    if (o.ppl) rc = run_ppl(&o, m, s);
    else if (o.chat) rc = run_chat(&o, m, s, o.system ? o.system : text);
    else if (o.bench) rc = run_bench(&o, m, s);
    else rc = run_generate(&o, m, s, text, text_len);
done:
    free(text);
    infer_session_free(s);
    infer_model_free(m);
    infer_grammar_free((infer_grammar *)o.sp.grammar);
    free(o.bias);
    return rc;
}
