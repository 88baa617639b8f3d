/* tools/server.c -- `infer --server`: an OpenAI-compatible HTTP server on the batched engine.
 *
 * Compiled inside main.c's translation unit (main.c includes it, after infer.h's
 * implementation, when INFER_SERVER is defined; the Makefile defines it when pkg-config
 * finds GNU libmicrohttpd), so it can use the header's private parts -- the JSON parser
 * (infer__json_*) and the KV pool's counters for /metrics. Reading a request body (JSON to
 * a checked srv_request, or an OpenAI error) and finding the tool calls in a reply are in
 * tools/server_req.c, which has no HTTP in it: the fuzzer and the unit tests run the same
 * code without a socket.
 *
 * THE SHAPE
 *   One process, one model, one session whose KV pool holds up to N sequences (-np N).
 *   libmicrohttpd runs a thread per connection. A thread parses its request, tokenizes the
 *   prompt (the chat template rendered first for chat), and puts a srv_req on the queue;
 *   one engine thread owns the session. Between two steps the engine drops the sequences
 *   whose clients went away, admits queued requests into free slots (their prompts' shared
 *   starts taken from the prefix cache), then runs one infer_eval_batch over every live
 *   sequence -- a chunk of each waiting prompt beside one token of each decoding sequence --
 *   samples, and appends the new text to each request. The connection threads wait on their
 *   request's condition variable and write what came: server-sent events for `stream`, one
 *   JSON object otherwise.
 *
 *       connection threads                       engine thread
 *       srv_parse_request -> srv_req --queue-->  admit (slot, prefix reuse)
 *       wait(cv) <- text, done -----------------  step: eval_batch, sample, stop strings
 *       write SSE chunks / one JSON              drop cancelled (client gone)
 *
 *   One mutex (srv.mu) guards the queue, every request's shared fields and the counters;
 *   the engine holds it only between steps. A request is freed by whichever side lets go of
 *   it last (refs).
 *
 * TOOL CALLS: a chat request that offers tools (tool_choice not "none") has its reply
 * searched for calls when it ends (srv_tool_parse: Hermes/Qwen <tool_call> blocks, Qwen3.5's
 * XML form, Mistral's [TOOL_CALLS], a Llama-style JSON reply). A whole answer carries them
 * as message.tool_calls; a stream sends text as content only up to where a call may begin
 * (srv_tool_prefix), holds the rest to the end, then sends its calls as delta.tool_calls.
 * tool_choice "required" or a named function puts a grammar of calls in the template's
 * form on the sampler (srv_force_tools, in server_req.c).
 *
 * LIMITS: bodies up to SRV_MAX_BODY bytes (413 beyond); a prompt must leave room for one
 * token in its slot's context (n_ctx / N; 400 beyond); generation stops at max_tokens or
 * the slot's context (finish_reason "length"). A connection silent for --timeout seconds is
 * closed by libmicrohttpd; a client that closes its socket cancels its request at the next
 * step.
 */
#include <microhttpd.h>
#include <signal.h>
#include <poll.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <limits.h>
#include <strings.h>

#define SRV_MAX_BODY (8u << 20)      /* request bodies: 8 MiB */
#include "server_req.c"

/* ---- the server's state ---- */
typedef struct srv_cfg {
    const char *host, *api_key, *model_path, *chat_template;   /* chat_template: text or NULL */
    size_t chat_template_len;
    int port, n_seq, timeout_s, n_predict;                     /* n_predict: default max_tokens, -1 none */
    int32_t n_ctx;                                             /* all slots together; 0 = N x min(train, 4096) */
    infer_sampler_params sp;                                   /* defaults for what a request leaves out */
    int seed_set;
} srv_cfg;

typedef struct srv_req {
    /* set by the connection thread before it is queued, then read-only */
    srv_request q;                                             /* the parsed body (tools/server_req.c) */
    char id[40];
    uint64_t tag;                                              /* random: the tool calls' ids */
    long long created;
    /* shared, under srv.mu */
    pthread_cond_t cv;
    srv_buf text;                                              /* the completion so far */
    size_t *cuts;                                              /* text's end after each step that added to it: */
    int n_cuts, cap_cuts;                                      /* one event per token when streamed */
    int done, cancelled, refs, n_gen, n_cached, error_status;
    const char *finish;                                        /* "stop" / "length" */
    char error[512];                                           /* error_status != 0: the message */
    struct srv_req *next;                                      /* the queue */
} srv_req;

/* a live sequence: engine thread only */
typedef struct {
    srv_req *r;
    int32_t seq, fed, last, n_gen;
    long order;
    infer_sampler *smp;
    infer_detok dt;
    float *logits;
    int32_t *counts;                                           /* [n_vocab] for presence/frequency; NULL when off */
    int greedy;                                                /* a plain greedy request: the backend picks (pick), no logits come back */
    int32_t pick;
    srv_buf hold, emit;                                        /* text held back (a stop string may start there); text to publish */
    const char *finish;
} srv_slot;

typedef struct srv {
    srv_cfg cfg;
    srv_limits lim;                                            /* what a request is checked against */
    infer_model *m;
    const infer_tokenizer *tok;
    infer_session *s;
    int32_t V, slot_ctx, n_ubatch;
    char model_id[256];
    long long started;
    pthread_mutex_t mu;
    pthread_cond_t engine_cv;
    srv_req *q_head, *q_tail;
    int n_queued, stopping;
    srv_slot *slots;
    int n_live;
    long admitted;
    /* counters for /metrics (under mu) */
    unsigned long long n_requests, n_cancelled, n_errors, prompt_tokens, gen_tokens, cache_hits, cache_hit_tokens, n_http;
    double prompt_seconds, gen_seconds;
    int kv_total, kv_free, kv_cached, kv_block;
    uint64_t seed_state;
} srv;

static srv_req *srv_req_new(void) {
    srv_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    pthread_cond_init(&r->cv, NULL);
    r->refs = 1;
    return r;
}
static void srv_req_free(srv_req *r) {
    if (!r) return;
    pthread_cond_destroy(&r->cv);
    srv_request_free(&r->q);
    free(r->text.p);
    free(r->cuts);
    free(r);
}
/* one holder lets go (srv.mu held) */
static void srv_req_unref(srv_req *r) { if (--r->refs == 0) srv_req_free(r); }

/* ---- the engine ---- */

/* the bytes of token t that are complete UTF-8 now, in *buf, which grows to fit (0 when
 * memory runs out: the text then lacks the piece) */
static int srv_piece(infer_detok *dt, int32_t t, char **buf, int *cap) {
    for (;;) {
        const int nb = *buf ? infer_detok_push(dt, t, *buf, *cap) : -64;
        if (nb >= 0) return nb;
        if (nb == -1) return 0;
        char *p = realloc(*buf, (size_t)(-nb + 64));
        if (!p) return 0;
        *buf = p;
        *cap = -nb + 64;
    }
}

/* the pool's figures for /metrics (srv.mu held; the engine's thread) */
static void srv_note_kv(srv *S) {
    const infer__cache *kc = &S->s->cache[0];
    S->kv_total = kc->n_blocks;
    S->kv_free = kc->n_free;
    S->kv_cached = kc->prefix ? kc->n_evictable : 0;
    S->kv_block = kc->block_size;
}


static void srv_slot_free(srv *S, srv_slot *sl) {
    infer_seq_remove(S->s, sl->seq);
    infer_sampler_free(sl->smp);
    free(sl->logits); free(sl->counts); free(sl->hold.p); free(sl->emit.p);
    memset(sl, 0, sizeof *sl);
}

/* finish a request with an error (srv.mu held) */
static void srv_req_fail(srv_req *r, int status, const char *msg) {
    r->error_status = status;
    snprintf(r->error, sizeof r->error, "%s", msg);
    r->done = 1;
    pthread_cond_broadcast(&r->cv);
}

/* Between steps (srv.mu held): let go of sequences whose clients left, then admit queued
 * requests while a slot is free and the pool can take the prompt. */
static void srv_admit(srv *S) {
    for (int i = 0; i < S->n_live; i++) {
        srv_slot *sl = &S->slots[i];
        if (!sl->r->cancelled) continue;
        S->n_cancelled++;
        srv_req *r = sl->r;
        srv_slot_free(S, sl);                        /* the sampler before the request: it uses the request's grammar */
        srv_req_unref(r);
        S->slots[i--] = S->slots[--S->n_live];
    }
    for (srv_req **pp = &S->q_head; *pp;) {          /* cancelled while queued */
        srv_req *r = *pp;
        if (!r->cancelled) { pp = &r->next; continue; }
        *pp = r->next;
        S->n_queued--;
        S->n_cancelled++;
        srv_req_unref(r);
    }
    S->q_tail = NULL;
    for (srv_req *r = S->q_head; r; r = r->next) S->q_tail = r;
    while (S->q_head && S->n_live < S->cfg.n_seq) {
        srv_req *r = S->q_head;
        if (S->n_live > 0 && infer_session_free_tokens(S->s) < r->q.n_prompt + 32) break;   /* wait for blocks */
        srv_slot *sl = &S->slots[S->n_live];
        infer_error err;
        memset(sl, 0, sizeof *sl);
        sl->logits = malloc(sizeof(float) * (size_t)S->V);
        sl->smp = infer_sampler_create(&r->q.sp, S->V);
        if ((r->q.presence != 0 || r->q.frequency != 0)) sl->counts = calloc((size_t)S->V, sizeof(int32_t));
        S->q_head = r->next;
        if (!S->q_head) S->q_tail = NULL;
        S->n_queued--;
        int bad_grammar = 0;
        if (sl->smp && r->q.sp.grammar && infer_sampler_set_grammar(sl->smp, r->q.sp.grammar, S->tok, &err) != INFER_OK) bad_grammar = 1;
        if (bad_grammar || !sl->logits || !sl->smp || ((r->q.presence != 0 || r->q.frequency != 0) && !sl->counts) || infer_seq_add(S->s, &sl->seq, &err) != INFER_OK) {
            infer_sampler_free(sl->smp); free(sl->logits); free(sl->counts);
            srv_req_fail(r, bad_grammar ? 500 : 503, bad_grammar ? err.msg : "the server is out of memory or sequences");
            S->n_errors++;
            srv_req_unref(r);
            continue;
        }
        sl->r = r;
        sl->order = S->admitted++;
        sl->greedy = infer_sampler_params_greedy(&r->q.sp) && !sl->counts;
        for (int i = 0; i < r->q.n_prompt; i++) infer_sampler_accept(sl->smp, r->q.prompt[i]);
        infer_detok_init(&sl->dt, S->tok);
        if (r->q.kind == SRV_COMPLETION) sl->dt.at_start = 0;      /* a continuation keeps its leading space */
        sl->fed = infer_seq_reuse(S->s, sl->seq, r->q.prompt, r->q.n_prompt);
        r->n_cached = sl->fed;
        if (sl->fed > 0) { S->cache_hits++; S->cache_hit_tokens += (unsigned long long)sl->fed; }
        S->n_live++;
    }
    srv_note_kv(S);
}

/* the longest suffix of h[0..n) that starts the string s (shorter than s) */
static size_t srv_partial_stop(const char *h, size_t n, const char *s) {
    const size_t ls = strlen(s);
    for (size_t k = ls - 1 < n ? ls - 1 : n; k > 0; k--)
        if (!memcmp(h + n - k, s, k)) return k;
    return 0;
}

/* New text for a slot: held back as far as a stop string may begin in it; a stop string
 * found ends the completion before it. Returns 1 when a stop string was found. */
static int srv_slot_text(srv_slot *sl, const char *t, size_t n, int final) {
    srv_req *r = sl->r;
    srv_put(&sl->hold, t, n);
    size_t cut = sl->hold.n, keep = 0;
    int hit = 0;
    for (int i = 0; i < r->q.n_stop; i++) {
        const char *at = sl->hold.n ? memmem(sl->hold.p, sl->hold.n, r->q.stop[i], strlen(r->q.stop[i])) : NULL;
        if (at && (size_t)(at - sl->hold.p) < cut) { cut = (size_t)(at - sl->hold.p); hit = 1; }
    }
    if (!hit && !final)
        for (int i = 0; i < r->q.n_stop; i++) {
            const size_t k = srv_partial_stop(sl->hold.p, sl->hold.n, r->q.stop[i]);
            if (k > keep) keep = k;
        }
    if (!hit) cut = sl->hold.n - keep;
    srv_put(&sl->emit, sl->hold.p, cut);
    if (hit) sl->hold.n = 0;
    else srv_consume(&sl->hold, cut);
    return hit;
}

/* one sampled token for a slot whose logits are ready; sets sl->finish when it is the end */
static void srv_slot_sample(srv *S, srv_slot *sl, char **piece, int *piece_cap) {
    srv_req *r = sl->r;
    if (r->q.max_tokens == 0) { sl->finish = "length"; return; }
    if (sl->counts)                                     /* OpenAI's penalties: mu[j] -= c[j] * freq + (c[j] > 0) * presence */
        for (int32_t v = 0; v < S->V; v++)
            if (sl->counts[v]) sl->logits[v] -= (float)sl->counts[v] * r->q.frequency + r->q.presence;
    const int32_t t = sl->greedy ? sl->pick : infer_sampler_sample(sl->smp, sl->logits);
    infer_sampler_accept(sl->smp, t);
    if (infer_token_is_eog(S->tok, t)) { sl->finish = "stop"; return; }
    if (sl->counts) sl->counts[t]++;
    sl->n_gen++;
    sl->last = t;
    const int nb = srv_piece(&sl->dt, t, piece, piece_cap);
    if (srv_slot_text(sl, *piece, (size_t)nb, 0)) { sl->finish = "stop"; return; }
    if (r->q.max_tokens > 0 && sl->n_gen >= r->q.max_tokens) sl->finish = "length";
    else if (infer_seq_n_past(S->s, sl->seq) + 1 > S->slot_ctx) sl->finish = "length";
}

/* One step over every live sequence: a chunk of each waiting prompt (n_ubatch prompt tokens
 * in all) and one token of each decoding sequence. When the pool cannot hold the step, the
 * newest sequences sit it out (keeping their blocks) until the older ones finish. */
static void srv_step(srv *S, infer_batch_item *items, int *idx, char **piece, int *piece_cap) {
    int n = 0, budget = S->n_ubatch, np = 0, ng = 0;
    for (int pass = 0; pass < 2; pass++)                  /* decoding sequences first, then prompts */
        for (int i = 0; i < S->n_live; i++) {
            srv_slot *sl = &S->slots[i];
            const int left = sl->r->q.n_prompt - sl->fed;
            float *const lg = sl->greedy ? NULL : sl->logits;
            int32_t *const gp = sl->greedy ? &sl->pick : NULL;
            if (pass == 0 && left == 0) { items[n] = (infer_batch_item){ sl->seq, &sl->last, 1, lg, 0, gp }; idx[n++] = i; }
            if (pass == 1 && left > 0 && budget > 0) {
                const int c = left < budget ? left : budget;
                items[n] = (infer_batch_item){ sl->seq, sl->r->q.prompt + sl->fed, c, c == left ? lg : NULL, 0, c == left ? gp : NULL };
                idx[n++] = i;
                budget -= c;
            }
        }
    infer_error err;
    infer_status st = INFER_ERR_CONTEXT;
    const double t0 = infer_time_seconds();
    while (n > 0 && (st = infer_eval_batch(S->s, items, n, &err)) == INFER_ERR_CONTEXT && n > 1) {
        int newest = 0;                                   /* the pool is full: the newest waits */
        for (int k = 1; k < n; k++) if (S->slots[idx[k]].order > S->slots[idx[newest]].order) newest = k;
        items[newest] = items[n - 1];
        idx[newest] = idx[--n];
    }
    const double dt = infer_time_seconds() - t0;
    for (int k = 0; k < n; k++) {
        srv_slot *sl = &S->slots[idx[k]];
        if (st != INFER_OK) { sl->finish = "error"; continue; }
        const int was_prompt = sl->fed < sl->r->q.n_prompt;
        if (was_prompt) { sl->fed += items[k].n; np += items[k].n; }
        else ng++;
        if (!items[k].logits && !items[k].greedy) continue;
        srv_slot_sample(S, sl, piece, piece_cap);
    }
    /* publish */
    pthread_mutex_lock(&S->mu);
    if (np + ng > 0) {
        S->prompt_tokens += (unsigned long long)np;
        S->gen_tokens += (unsigned long long)ng;
        S->prompt_seconds += dt * np / (np + ng);
        S->gen_seconds += dt * ng / (np + ng);
    }
    for (int i = 0; i < S->n_live; i++) {
        srv_slot *sl = &S->slots[i];
        srv_req *r = sl->r;
        if (sl->finish && strcmp(sl->finish, "error")) {  /* what the detokenizer and the stop check still hold */
            char buf[16];
            const int nb = infer_detok_flush(&sl->dt, buf, sizeof buf);
            if (!srv_slot_text(sl, buf, (size_t)(nb > 0 ? nb : 0), 1) && sl->hold.n) srv_put(&sl->emit, sl->hold.p, sl->hold.n);
        }
        if (sl->emit.n) {
            srv_put(&r->text, sl->emit.p, sl->emit.n);
            sl->emit.n = 0;
            if (r->n_cuts == r->cap_cuts) {
                size_t *c = realloc(r->cuts, sizeof(size_t) * (size_t)(r->cap_cuts = r->cap_cuts ? 2 * r->cap_cuts : 64));
                if (c) r->cuts = c;
                else r->text.oom = 1;
            }
            if (!r->text.oom) r->cuts[r->n_cuts++] = r->text.n;
        }
        r->n_gen = sl->n_gen;
        if (sl->emit.oom || sl->hold.oom || r->text.oom) { sl->finish = "error"; snprintf(err.msg, sizeof err.msg, "out of memory"); }
        if (sl->finish) {
            if (!strcmp(sl->finish, "error")) { srv_req_fail(r, 500, err.msg); S->n_errors++; }
            else { r->finish = sl->finish; r->done = 1; pthread_cond_broadcast(&r->cv); }
            srv_slot_free(S, sl);
            srv_req_unref(r);
            S->slots[i--] = S->slots[--S->n_live];
            continue;
        }
        pthread_cond_broadcast(&r->cv);
    }
    srv_note_kv(S);
    pthread_mutex_unlock(&S->mu);
}

static void *srv_engine(void *arg) {
    srv *S = arg;
    infer_batch_item *items = calloc((size_t)S->cfg.n_seq, sizeof *items);
    int *idx = calloc((size_t)S->cfg.n_seq, sizeof *idx);
    char *piece = NULL;
    int piece_cap = 0;
    pthread_mutex_lock(&S->mu);
    for (;;) {
        srv_admit(S);
        if (S->stopping) break;
        if (S->n_live == 0 || !items || !idx) { pthread_cond_wait(&S->engine_cv, &S->mu); continue; }
        pthread_mutex_unlock(&S->mu);
        srv_step(S, items, idx, &piece, &piece_cap);
        pthread_mutex_lock(&S->mu);
    }
    /* shutting down: every request still here ends with an error */
    while (S->n_live > 0) {
        srv_slot *sl = &S->slots[--S->n_live];
        srv_req *r = sl->r;
        srv_req_fail(r, 503, "the server is shutting down");
        srv_slot_free(S, sl);
        srv_req_unref(r);
    }
    while (S->q_head) {
        srv_req *r = S->q_head;
        S->q_head = r->next;
        srv_req_fail(r, 503, "the server is shutting down");
        srv_req_unref(r);
    }
    S->q_tail = NULL;
    S->n_queued = 0;
    pthread_mutex_unlock(&S->mu);
    free(items); free(idx); free(piece);
    return NULL;
}

/* ---- HTTP: errors and plain responses ---- */

/* per connection: the body as it arrives */
typedef struct { srv_buf body; int too_large; } srv_conn;

static enum MHD_Result srv_send(struct MHD_Connection *c, unsigned status, srv_buf *b, const char *type) {
    if (b->oom) { free(b->p); memset(b, 0, sizeof *b); srv_puts(b, "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\",\"param\":null,\"code\":null}}"); status = 500; type = "application/json"; }
    struct MHD_Response *resp = MHD_create_response_from_buffer(b->n, b->p ? b->p : (void *)"", b->p ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) { free(b->p); return MHD_NO; }
    b->p = NULL;
    MHD_add_response_header(resp, "Content-Type", type);
    MHD_add_response_header(resp, "Access-Control-Allow-Origin", "*");
    const enum MHD_Result ok = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* an OpenAI error object */
static enum MHD_Result srv_error(struct MHD_Connection *c, unsigned status, const char *code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *type = status == 401 ? "authentication_error" : status >= 500 ? "server_error" : status == 404 ? "not_found_error" : "invalid_request_error";
    srv_buf b = { 0 };
    srv_puts(&b, "{\"error\":{\"message\":");
    srv_json_str(&b, msg, strlen(msg));
    srv_printf(&b, ",\"type\":\"%s\",\"param\":null,\"code\":", type);
    if (code) srv_json_str(&b, code, strlen(code));
    else srv_puts(&b, "null");
    srv_puts(&b, "}}\n");
    struct MHD_Response *resp = MHD_create_response_from_buffer(b.n, b.p ? b.p : (void *)"", b.p ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) { free(b.p); return MHD_NO; }
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_add_response_header(resp, "Access-Control-Allow-Origin", "*");
    if (status == 401) MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
    const enum MHD_Result ok = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* the bearer token against --api-key, in time that depends on neither's content */
static int srv_authorized(const srv *S, struct MHD_Connection *c) {
    if (!S->cfg.api_key) return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7)) return 0;
    const char *got = h + 7, *want = S->cfg.api_key;
    const size_t ng = strlen(got), nw = strlen(want);
    unsigned diff = (unsigned)(ng ^ nw);
    for (size_t i = 0; i < nw; i++) diff |= (unsigned char)want[i] ^ (unsigned char)(i < ng ? got[i] : 0);
    return diff == 0;
}

static uint64_t srv_random(srv *S) {                  /* splitmix64 over a clock-seeded state (srv.mu held) */
    uint64_t z = (S->seed_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) & 0x7fffffffffffffffull;
}


/* ---- HTTP: answers ---- */

typedef struct {
    srv *S;
    srv_req *r;
    struct MHD_Connection *c;
    int fd;
    size_t sent;         /* bytes of r->text written */
    size_t seen;         /* r->text's length when last looked at: the wait is for more */
    size_t plain;        /* with tools: r->text[0..plain) is surely content (srv_tool_prefix) */
    int cut;             /* the next of r->cuts */
    int phase;           /* streaming: 0 role chunk, 1 content, 2 usage, 3 [DONE], 4 end */
    srv_buf pend;        /* formatted, not yet handed to libmicrohttpd */
} srv_stream;

/* has the client closed its end? */
static int srv_gone(int fd) {
    if (fd < 0) return 0;
    struct pollfd p = { fd, POLLRDHUP, 0 };
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Wait (srv.mu held) until the request has new text or is done: 1; 0 when the client left
 * or the server stops; 2 when `patience` seconds passed first (< 0: no limit) */
static int srv_wait(srv *S, srv_req *r, size_t sent, int fd, double patience) {
    const double t0 = infer_time_seconds();
    while (!r->done && r->text.n <= sent) {
        if (S->stopping && !r->done) return 0;
        if (srv_gone(fd)) return 0;
        if (patience >= 0 && infer_time_seconds() - t0 >= patience) return 2;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&r->cv, &S->mu, &ts);
    }
    return 1;
}

/* the client is gone or the answer written: the engine may let go (srv.mu held) */
static void srv_cancel(srv *S, srv_req *r) {
    if (!r->done) { r->cancelled = 1; pthread_cond_signal(&S->engine_cv); }
    srv_req_unref(r);
}

static void srv_usage(srv_buf *b, const srv_req *r) {
    srv_printf(b, "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d}}",
               r->q.n_prompt, r->n_gen, r->q.n_prompt + r->n_gen, r->n_cached);
}

/* the head every chunk or answer starts with */
static void srv_head(srv *S, srv_buf *b, const srv_req *r, int chunk) {
    srv_puts(b, "{\"id\":");
    srv_json_str(b, r->id, strlen(r->id));
    srv_printf(b, ",\"object\":\"%s\",\"created\":%lld,\"model\":", r->q.kind == SRV_CHAT ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion",
               r->created);
    srv_json_str(b, S->model_id, strlen(S->model_id));
    srv_puts(b, ",\"system_fingerprint\":\"infer-" INFER_VERSION "\",");
}

/* one SSE event with new text (or the final one with finish_reason) */
static void srv_chunk(srv *S, srv_buf *b, const srv_req *r, const char *text, size_t n, int role, const char *finish) {
    srv_puts(b, "data: ");
    srv_head(S, b, r, 1);
    srv_puts(b, "\"choices\":[{\"index\":0,");
    if (r->q.kind == SRV_CHAT) {
        srv_puts(b, "\"delta\":{");
        if (role) srv_puts(b, "\"role\":\"assistant\",\"content\":\"\"");
        else if (!finish) { srv_puts(b, "\"content\":"); srv_json_str(b, text, n); }
        srv_puts(b, "},");
    } else {
        srv_puts(b, "\"text\":");
        srv_json_str(b, text, n);
        srv_puts(b, ",");
    }
    srv_puts(b, "\"logprobs\":null,\"finish_reason\":");
    if (finish) srv_json_str(b, finish, strlen(finish));
    else srv_puts(b, "null");
    srv_puts(b, "}]");
    if (r->q.include_usage) srv_puts(b, ",\"usage\":null");
    srv_puts(b, "}\n\n");
}

/* one tool call as OpenAI writes it (in a stream, with its index: delta.tool_calls[k]); its
 * id unique to the request and call, random across server runs */
static void srv_tool_call_json(srv_buf *b, const srv_req *r, const srv_tool_call *c, int k, int stream) {
    srv_puts(b, "{");
    if (stream) srv_printf(b, "\"index\":%d,", k);
    srv_printf(b, "\"id\":\"call_%012llx_%d\",\"type\":\"function\",\"function\":{\"name\":", (unsigned long long)(r->tag & 0xffffffffffffull), k);
    srv_json_str(b, c->name, strlen(c->name));
    srv_puts(b, ",\"arguments\":");
    srv_json_str(b, c->args, strlen(c->args));
    srv_puts(b, "}}");
}

/* The end of a streamed chat whose reply may hold tool calls (srv.mu held): the text not
 * streamed yet, r->text[sent..), is searched; its content and then each call go out as
 * events. Returns the finish_reason: "tool_calls" when it made some and ended by itself. */
static const char *srv_stream_tools(srv *S, srv_buf *b, const srv_req *r, size_t sent) {
    srv_tools_out to;
    const char *rest = r->text.p ? r->text.p + sent : "";
    const size_t n = r->text.n - sent;
    const int nc = srv_tool_parse(rest, n, &to);
    if (nc <= 0 && n) srv_chunk(S, b, r, rest, n, 0, NULL);        /* no calls (or no memory to look): all of it is content */
    if (nc > 0 && to.content.n) srv_chunk(S, b, r, to.content.p, to.content.n, 0, NULL);
    for (int k = 0; k < nc; k++) {
        srv_puts(b, "data: ");
        srv_head(S, b, r, 1);
        srv_puts(b, "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[");
        srv_tool_call_json(b, r, &to.calls[k], k, 1);
        srv_puts(b, "]},\"logprobs\":null,\"finish_reason\":null}]");
        if (r->q.include_usage) srv_puts(b, ",\"usage\":null");
        srv_puts(b, "}\n\n");
    }
    srv_tools_out_free(&to);
    return nc > 0 && !strcmp(r->finish, "stop") ? "tool_calls" : r->finish;
}

static ssize_t srv_stream_cb(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    srv_stream *st = cls;
    srv *S = st->S;
    srv_req *r = st->r;
    while (st->pend.n == 0) {
        if (st->phase == 4) return MHD_CONTENT_READER_END_OF_STREAM;
        if (st->phase == 0) {                             /* chat: the role comes first */
            st->phase = 1;
            if (r->q.kind == SRV_CHAT) { srv_chunk(S, &st->pend, r, "", 0, 1, NULL); break; }
        }
        pthread_mutex_lock(&S->mu);
        /* a stream waits for its next token; while it waits longer than half of --timeout
         * (queued behind others), an SSE comment keeps the connection from timing out */
        const int w = st->phase == 1 ? srv_wait(S, r, st->seen, st->fd, S->cfg.timeout_s / 2.0) : 1;
        if (w == 0) { pthread_mutex_unlock(&S->mu); return MHD_CONTENT_READER_END_WITH_ERROR; }
        /* with tools, text that may be a tool call is held until the end */
        const size_t avail = st->phase == 1 && r->q.tools && !r->error_status ? (st->plain = srv_tool_prefix(r->text.p, r->text.n, st->plain)) : r->text.n;
        while (st->cut < r->n_cuts && r->cuts[st->cut] <= st->sent) st->cut++;
        if (w == 2) srv_puts(&st->pend, ": waiting\n\n");
        else if (st->phase == 1 && avail > st->sent) {     /* an event per step's text (a token, or text a stop string held) */
            size_t end = st->cut < r->n_cuts ? r->cuts[st->cut] : r->text.n;
            if (end > avail) end = avail;
            srv_chunk(S, &st->pend, r, r->text.p + st->sent, end - st->sent, 0, NULL);
            st->sent = end;
            st->seen = end < avail ? end : r->text.n;    /* more to send now, or wait for new text */
        } else if (st->phase == 1 && r->error_status) {
            srv_puts(&st->pend, "data: {\"error\":{\"message\":");
            srv_json_str(&st->pend, r->error, strlen(r->error));
            srv_puts(&st->pend, ",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n");
            st->phase = 3;
        } else if (st->phase == 1 && r->done) {
            const char *finish = r->q.tools ? srv_stream_tools(S, &st->pend, r, st->sent) : r->finish;
            srv_chunk(S, &st->pend, r, "", 0, 0, finish);
            st->phase = 2;
        } else if (st->phase == 1) {
            st->seen = r->text.n;                          /* all held back: wait for more */
        } else if (st->phase == 2) {
            if (r->q.include_usage) {
                srv_puts(&st->pend, "data: ");
                srv_head(S, &st->pend, r, 1);
                srv_puts(&st->pend, "\"choices\":[],");
                srv_usage(&st->pend, r);
                srv_puts(&st->pend, "}\n\n");
            }
            st->phase = 3;
        } else if (st->phase == 3) {
            srv_puts(&st->pend, "data: [DONE]\n\n");
            st->phase = 4;
        }
        pthread_mutex_unlock(&S->mu);
        if (st->pend.oom) return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    const size_t n = st->pend.n < max ? st->pend.n : max;
    memcpy(buf, st->pend.p, n);
    srv_consume(&st->pend, n);
    return (ssize_t)n;
}

static void srv_stream_free(void *cls) {
    srv_stream *st = cls;
    pthread_mutex_lock(&st->S->mu);
    srv_cancel(st->S, st->r);
    pthread_mutex_unlock(&st->S->mu);
    free(st->pend.p);
    free(st);
}

/* the whole answer's choice: the text, or for chat the message (with its tool calls when
 * the request offered tools and the reply made some), and the finish_reason */
static void srv_choice(srv_buf *b, const srv_req *r) {
    const char *text = r->text.p ? r->text.p : "";
    const char *finish = r->finish;
    srv_puts(b, "\"choices\":[{\"index\":0,");
    if (r->q.kind != SRV_CHAT) {
        srv_puts(b, "\"text\":");
        srv_json_str(b, text, r->text.n);
        srv_puts(b, ",");
    } else {
        srv_tools_out to;
        const int nc = r->q.tools ? srv_tool_parse(text, r->text.n, &to) : 0;
        srv_puts(b, "\"message\":{\"role\":\"assistant\",\"content\":");
        if (nc <= 0) srv_json_str(b, text, r->text.n);
        else if (to.content.n) srv_json_str(b, to.content.p, to.content.n);
        else srv_puts(b, "null");
        if (nc > 0) {
            srv_puts(b, ",\"tool_calls\":[");
            for (int k = 0; k < nc; k++) {
                if (k) srv_puts(b, ",");
                srv_tool_call_json(b, r, &to.calls[k], k, 0);
            }
            srv_puts(b, "]");
            if (!strcmp(finish, "stop")) finish = "tool_calls";   /* a reply cut by max_tokens says so */
        }
        if (r->q.tools) srv_tools_out_free(&to);
        if (nc < 0) b->oom = 1;
        srv_puts(b, "},");
    }
    srv_puts(b, "\"logprobs\":null,\"finish_reason\":");
    srv_json_str(b, finish, strlen(finish));
    srv_puts(b, "}],");
}

/* a completion request: parse, queue, answer (streamed or whole) */
static enum MHD_Result srv_generate(srv *S, struct MHD_Connection *c, const char *body, size_t len, int kind) {
    srv_perr e;
    srv_req *r = srv_req_new();
    if (!r) return srv_error(c, 500, NULL, "out of memory");
    if (!srv_parse_request(&S->lim, kind, body, len, &r->q, &e)) {
        srv_req_free(r);
        return srv_error(c, (unsigned)e.status, e.code, "%s", e.msg);
    }
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const int fd = ci ? ci->connect_fd : -1;
    pthread_mutex_lock(&S->mu);
    if (S->stopping) { pthread_mutex_unlock(&S->mu); srv_req_free(r); return srv_error(c, 503, NULL, "the server is shutting down"); }
    if (!r->q.seed_given && !S->cfg.seed_set) r->q.sp.seed = srv_random(S);
    r->tag = srv_random(S);
    r->created = (long long)time(NULL);
    snprintf(r->id, sizeof r->id, "%s-%llu", kind == SRV_CHAT ? "chatcmpl" : "cmpl", ++S->n_requests);
    r->refs = 2;                                          /* this thread and the engine */
    if (S->q_tail) S->q_tail->next = r;
    else S->q_head = r;
    S->q_tail = r;
    S->n_queued++;
    pthread_cond_signal(&S->engine_cv);
    if (r->q.stream) {
        pthread_mutex_unlock(&S->mu);
        srv_stream *st = calloc(1, sizeof *st);
        struct MHD_Response *resp = st ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, srv_stream_cb, st, srv_stream_free) : NULL;
        if (!resp) {
            free(st);
            pthread_mutex_lock(&S->mu);
            srv_cancel(S, r);
            pthread_mutex_unlock(&S->mu);
            return srv_error(c, 500, NULL, "out of memory");
        }
        st->S = S; st->r = r; st->c = c; st->fd = fd;
        MHD_add_response_header(resp, "Content-Type", "text/event-stream");
        MHD_add_response_header(resp, "Cache-Control", "no-cache");
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", "*");
        const enum MHD_Result res = MHD_queue_response(c, MHD_HTTP_OK, resp);
        MHD_destroy_response(resp);
        return res;
    }
    while (!r->done)
        if (!srv_wait(S, r, (size_t)-1 >> 1, fd, -1)) {       /* the client left (or the server stops) */
            srv_cancel(S, r);
            pthread_mutex_unlock(&S->mu);
            return MHD_NO;
        }
    if (r->error_status) {
        const int status = r->error_status;
        char msg[sizeof r->error];
        snprintf(msg, sizeof msg, "%s", r->error);
        srv_req_unref(r);
        pthread_mutex_unlock(&S->mu);
        return srv_error(c, (unsigned)status, NULL, "%s", msg);
    }
    srv_buf b = { 0 };
    srv_head(S, &b, r, 0);
    srv_choice(&b, r);
    srv_usage(&b, r);
    srv_puts(&b, "}\n");
    srv_req_unref(r);
    pthread_mutex_unlock(&S->mu);
    return srv_send(c, MHD_HTTP_OK, &b, "application/json");
}

/* POST /tokenize {"content": text, "add_special": bool, "parse_special": bool} -> {"tokens": [...]} */
static enum MHD_Result srv_tokenize_ep(srv *S, struct MHD_Connection *c, const char *body, size_t len) {
    srv_request q;
    srv_perr e;
    if (!srv_parse_request(&S->lim, SRV_TOKENIZE, body, len, &q, &e)) return srv_error(c, (unsigned)e.status, e.code, "%s", e.msg);
    srv_buf b = { 0 };
    srv_puts(&b, "{\"tokens\":[");
    for (int i = 0; i < q.n_prompt; i++) srv_printf(&b, i ? ",%d" : "%d", q.prompt[i]);
    srv_puts(&b, "]}\n");
    srv_request_free(&q);
    return srv_send(c, MHD_HTTP_OK, &b, "application/json");
}

/* POST /detokenize {"tokens": [...]} -> {"content": text}: a leading BOS (and trailing EOS)
 * the model adds are dropped, as the tokenizer's add_special puts them there */
static enum MHD_Result srv_detokenize_ep(srv *S, struct MHD_Connection *c, const char *body, size_t len) {
    srv_request q;
    srv_perr e;
    if (!srv_parse_request(&S->lim, SRV_DETOKENIZE, body, len, &q, &e)) return srv_error(c, (unsigned)e.status, e.code, "%s", e.msg);
    const int need = infer_detokenize(S->tok, q.prompt, q.n_prompt, 1, 0, NULL, 0);
    char *text = need > 0 ? malloc((size_t)need) : NULL;
    const int got = text ? infer_detokenize(S->tok, q.prompt, q.n_prompt, 1, 0, text, need) : 0;
    srv_request_free(&q);
    if (need > 0 && (!text || got != need)) { free(text); return srv_error(c, 500, NULL, "detokenizing failed"); }
    srv_buf b = { 0 };
    srv_puts(&b, "{\"content\":");
    srv_json_str(&b, text ? text : "", need > 0 ? (size_t)need : 0);
    srv_puts(&b, "}\n");
    free(text);
    return srv_send(c, MHD_HTTP_OK, &b, "application/json");
}

static enum MHD_Result srv_models(srv *S, struct MHD_Connection *c) {
    const infer_config *cf = infer_model_config(S->m);
    srv_buf b = { 0 };
    srv_puts(&b, "{\"object\":\"list\",\"data\":[{\"id\":");
    srv_json_str(&b, S->model_id, strlen(S->model_id));
    srv_printf(&b, ",\"object\":\"model\",\"created\":%lld,\"owned_by\":\"infer\",\"meta\":{\"arch\":", S->started);
    srv_json_str(&b, cf->arch, strlen(cf->arch));
    srv_printf(&b, ",\"n_vocab\":%d,\"n_ctx_train\":%d,\"n_ctx_seq\":%d,\"n_seq\":%d}}]}\n", cf->n_vocab, cf->n_ctx_train, S->slot_ctx, S->cfg.n_seq);
    return srv_send(c, MHD_HTTP_OK, &b, "application/json");
}

/* Prometheus text format: gauges and counters */
static enum MHD_Result srv_metrics(srv *S, struct MHD_Connection *c) {
    srv_buf b = { 0 };
    pthread_mutex_lock(&S->mu);
    const int used = S->kv_total - S->kv_free - S->kv_cached;
    struct { const char *name, *type, *help; double v; } rows[] = {
        { "requests_processing", "gauge", "requests decoding now (sequences in the batch)", S->n_live },
        { "requests_queued", "gauge", "requests waiting for a sequence slot", S->n_queued },
        { "requests_total", "counter", "completion requests accepted", (double)S->n_requests },
        { "requests_cancelled_total", "counter", "requests whose client left before the end", (double)S->n_cancelled },
        { "requests_failed_total", "counter", "accepted requests that ended in an error", (double)S->n_errors },
        { "http_requests_total", "counter", "HTTP requests answered, any path and status", (double)S->n_http },
        { "prompt_tokens_total", "counter", "prompt tokens evaluated (prefix-cache hits not included)", (double)S->prompt_tokens },
        { "prompt_seconds_total", "counter", "engine time spent on prompt tokens", S->prompt_seconds },
        { "prompt_tokens_seconds", "gauge", "prompt tokens per second, over the server's life", S->prompt_seconds > 0 ? S->prompt_tokens / S->prompt_seconds : 0 },
        { "tokens_predicted_total", "counter", "tokens decoded", (double)S->gen_tokens },
        { "tokens_predicted_seconds_total", "counter", "engine time spent decoding", S->gen_seconds },
        { "predicted_tokens_seconds", "gauge", "decoded tokens per second (all sequences together), over the server's life", S->gen_seconds > 0 ? S->gen_tokens / S->gen_seconds : 0 },
        { "kv_blocks_total", "gauge", "KV cache blocks in the pool", S->kv_total },
        { "kv_block_tokens", "gauge", "positions per KV block", S->kv_block },
        { "kv_blocks_used", "gauge", "KV blocks held by live sequences", used },
        { "kv_blocks_free", "gauge", "KV blocks free", S->kv_free },
        { "kv_blocks_cached", "gauge", "KV blocks no sequence holds that keep a prefix for reuse", S->kv_cached },
        { "prefix_cache_hits_total", "counter", "requests that started from a cached prefix", (double)S->cache_hits },
        { "prefix_cache_hit_tokens_total", "counter", "prompt tokens served from the prefix cache", (double)S->cache_hit_tokens },
        { "n_seq_max", "gauge", "sequences decoded at once (-np)", S->cfg.n_seq },
    };
    pthread_mutex_unlock(&S->mu);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        srv_printf(&b, "# HELP infer_%s %s\n# TYPE infer_%s %s\ninfer_%s %.17g\n", rows[i].name, rows[i].help, rows[i].name, rows[i].type, rows[i].name, rows[i].v);
    return srv_send(c, MHD_HTTP_OK, &b, "text/plain; version=0.0.4");
}

/* GET /: the chat page. One file, no external assets: a conversation, streamed from
 * /v1/chat/completions; an API key field for servers started with --api-key.
 * /?prompt=TEXT sends TEXT on load (the headless-browser test uses it). */
static const char srv_page[] =
"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
"<title>infer</title>\n<style>\n"
"body{font:15px/1.45 system-ui,sans-serif;max-width:46em;margin:0 auto;padding:1em;color:#222;background:#fafafa}\n"
"#log{white-space:pre-wrap}.msg{margin:.6em 0;padding:.5em .8em;border-radius:8px}.user{background:#dde8f5}.assistant{background:#fff;border:1px solid #ddd}\n"
".role{font-size:12px;color:#777;display:block}form{display:flex;gap:.5em;margin-top:1em}textarea{flex:1;font:inherit;height:4em}\n"
"#opts{font-size:13px;color:#555;margin-top:.5em}#opts input{width:6em}#err{color:#b00}\n"
"</style></head><body>\n<h3>infer <small id=\"model\"></small></h3>\n<div id=\"log\"></div><div id=\"err\"></div>\n"
"<form id=\"f\"><textarea id=\"in\" placeholder=\"Say something (Enter sends, Shift+Enter: new line)\"></textarea><button id=\"send\">Send</button></form>\n"
"<div id=\"opts\">system <input id=\"sys\" style=\"width:20em\"> temperature <input id=\"temp\" value=\"0.8\"> max tokens <input id=\"max\" value=\"256\">"
" API key <input id=\"key\" type=\"password\"> <button id=\"reset\" type=\"button\">New chat</button></div>\n"
"<script>\n"
"const $=id=>document.getElementById(id);let msgs=[],busy=false;\n"
"$('key').value=localStorage.getItem('infer_key')||'';\n"
"function hdrs(){const h={'Content-Type':'application/json'};const k=$('key').value;if(k){h.Authorization='Bearer '+k;localStorage.setItem('infer_key',k);}return h;}\n"
"function add(role,text){const d=document.createElement('div');d.className='msg '+role;const r=document.createElement('span');r.className='role';r.textContent=role;"
"const t=document.createElement('span');t.className='text';t.textContent=text;d.append(r,t);$('log').append(d);return t;}\n"
"fetch('/v1/models',{headers:hdrs()}).then(r=>r.json()).then(j=>{$('model').textContent=j.data[0].id}).catch(()=>{});\n"
"async function send(text){if(busy||!text.trim())return;busy=true;$('err').textContent='';msgs.push({role:'user',content:text});add('user',text);\n"
" const out=add('assistant','');let reply='';const all=($('sys').value?[{role:'system',content:$('sys').value}]:[]).concat(msgs);\n"
" try{const r=await fetch('/v1/chat/completions',{method:'POST',headers:hdrs(),body:JSON.stringify({messages:all,stream:true,"
"temperature:parseFloat($('temp').value),max_tokens:parseInt($('max').value)})});\n"
"  if(!r.ok){const j=await r.json().catch(()=>({}));throw new Error((j.error&&j.error.message)||r.statusText);}\n"
"  const rd=r.body.getReader(),dec=new TextDecoder();let buf='';\n"
"  for(;;){const {value,done}=await rd.read();if(done)break;buf+=dec.decode(value,{stream:true});let i;\n"
"   while((i=buf.indexOf('\\n\\n'))>=0){const ev=buf.slice(0,i);buf=buf.slice(i+2);if(!ev.startsWith('data: '))continue;const data=ev.slice(6);if(data==='[DONE]')continue;\n"
"    const j=JSON.parse(data);if(j.error)throw new Error(j.error.message);const c=j.choices[0];if(c&&c.delta&&c.delta.content){reply+=c.delta.content;out.textContent=reply;window.inferEvents=(window.inferEvents||0)+1;}}}\n"
"  msgs.push({role:'assistant',content:reply});out.parentNode.dataset.done='1';\n"
" }catch(e){$('err').textContent='error: '+e.message;msgs.pop();}busy=false;}\n"
"$('f').onsubmit=e=>{e.preventDefault();const t=$('in').value;$('in').value='';send(t);};\n"
"$('in').onkeydown=e=>{if(e.key==='Enter'&&!e.shiftKey){e.preventDefault();$('f').requestSubmit();}};\n"
"$('reset').onclick=()=>{msgs=[];$('log').textContent='';};\n"
"const q=new URLSearchParams(location.search);if(q.get('prompt')){if(q.get('max'))$('max').value=q.get('max');if(q.get('temp'))$('temp').value=q.get('temp');send(q.get('prompt'));}\n"
"</script></body></html>\n";

/* ---- routing ---- */

static enum MHD_Result srv_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
                                   const char *upload, size_t *upload_size, void **con_cls) {
    (void)version;
    srv *S = cls;
    srv_conn *cc = *con_cls;
    if (!cc) {                                            /* the headers: the body comes in the next calls */
        if (!(cc = calloc(1, sizeof *cc))) return MHD_NO;
        *con_cls = cc;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > SRV_MAX_BODY) {
            cc->too_large = 1;
            return srv_error(c, 413, "body_too_large", "the body has %s bytes; the limit is %u", cl, SRV_MAX_BODY);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (cc->body.n + *upload_size > SRV_MAX_BODY) cc->too_large = 1;
        if (!cc->too_large) srv_put(&cc->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&S->mu);
    S->n_http++;
    pthread_mutex_unlock(&S->mu);
    if (cc->too_large) return srv_error(c, 413, "body_too_large", "the body is larger than the limit of %u bytes", SRV_MAX_BODY);
    if (cc->body.oom) return srv_error(c, 500, NULL, "out of memory");
    const int get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
    if (!strcmp(method, "OPTIONS")) {                     /* CORS preflight */
        struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!resp) return MHD_NO;
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", "*");
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Authorization, Content-Type");
        const enum MHD_Result ok = MHD_queue_response(c, 204, resp);
        MHD_destroy_response(resp);
        return ok;
    }
    if (get && (!strcmp(url, "/") || !strcmp(url, "/index.html"))) {
        srv_buf b = { 0 };
        srv_puts(&b, srv_page);
        return srv_send(c, MHD_HTTP_OK, &b, "text/html; charset=utf-8");
    }
    if (get && (!strcmp(url, "/health") || !strcmp(url, "/v1/health"))) {
        srv_buf b = { 0 };
        srv_puts(&b, "{\"status\":\"ok\"}\n");
        return srv_send(c, MHD_HTTP_OK, &b, "application/json");
    }
    static const struct { const char *path; int post; } known[] = {
        { "/v1/chat/completions", 1 }, { "/chat/completions", 1 }, { "/v1/completions", 1 }, { "/completions", 1 },
        { "/tokenize", 1 }, { "/detokenize", 1 }, { "/v1/models", 0 }, { "/models", 0 }, { "/metrics", 0 },
    };
    int route = -1;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) if (!strcmp(url, known[i].path)) route = (int)i;
    if (route < 0) return srv_error(c, 404, "not_found", "no such endpoint: %s %s", method, url);
    if (!srv_authorized(S, c)) return srv_error(c, 401, "invalid_api_key", "missing or wrong API key (Authorization: Bearer KEY)");
    if (known[route].post ? !post : !get) return srv_error(c, 405, "method_not_allowed", "%s takes %s", url, known[route].post ? "POST" : "GET");
    const char *body = cc->body.p ? cc->body.p : "";
    switch (route) {
    case 0: case 1: return srv_generate(S, c, body, cc->body.n, SRV_CHAT);
    case 2: case 3: return srv_generate(S, c, body, cc->body.n, SRV_COMPLETION);
    case 4: return srv_tokenize_ep(S, c, body, cc->body.n);
    case 5: return srv_detokenize_ep(S, c, body, cc->body.n);
    case 6: case 7: return srv_models(S, c);
    default: return srv_metrics(S, c);
    }
}

static void srv_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why) {
    (void)cls; (void)c; (void)why;
    srv_conn *cc = *con_cls;
    if (!cc) return;
    free(cc->body.p);
    free(cc);
    *con_cls = NULL;
}

static void srv_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    fputs("infer: http: ", stderr);
    vfprintf(stderr, fmt, ap);
}

/* Serve until SIGINT or SIGTERM. Returns the exit status. */
static int srv_run(const srv_cfg *cfg, infer_model *m, const infer_session_params *base) {
    srv *S = calloc(1, sizeof *S);
    if (!S) { fprintf(stderr, "infer: out of memory\n"); return 1; }
    S->cfg = *cfg;
    S->m = m;
    S->tok = infer_model_tokenizer(m);
    const infer_config *mc = infer_model_config(m);
    int rc = 1;
    struct MHD_Daemon *d = NULL;
    pthread_t engine;
    int engine_started = 0;
    if (!S->tok) { fprintf(stderr, "infer: --server needs a model with a vocabulary\n"); free(S); return 1; }
    const char *base_name = strrchr(cfg->model_path, '/');
    snprintf(S->model_id, sizeof S->model_id, "%s", base_name && base_name[1] ? base_name + 1 : cfg->model_path);
    S->V = mc->n_vocab;
    const int N = cfg->n_seq;
    /* -c is the context of all sequences together (llama-server's meaning): each gets n_ctx / N */
    const int32_t train = mc->n_ctx_train > 0 ? mc->n_ctx_train : 4096;
    const int64_t total = cfg->n_ctx > 0 ? cfg->n_ctx : (int64_t)N * (train < 4096 ? train : 4096);
    S->slot_ctx = (int32_t)(total / N);
    if (S->slot_ctx < 8) { fprintf(stderr, "infer: -c %lld over -np %d leaves %d positions per sequence; give a larger -c\n", (long long)total, N, S->slot_ctx); free(S); return 1; }
    S->lim.m = m;
    S->lim.tok = S->tok;
    S->lim.n_vocab = S->V;
    S->lim.n_ctx = S->slot_ctx;
    S->lim.n_seq = N;
    S->lim.chat_template = cfg->chat_template;
    S->lim.chat_template_len = cfg->chat_template_len;
    S->lim.sp = cfg->sp;
    S->lim.n_predict = cfg->n_predict;
    infer_session_params sp = *base;
    sp.n_seq_max = N;
    sp.n_ctx = (int32_t)((int64_t)N * (S->slot_ctx + 2 * 16));          /* two blocks of slack a sequence: partial blocks, copy on write */
    S->n_ubatch = sp.n_ubatch > 0 ? sp.n_ubatch : 512;
    infer_error err;
    if (infer_session_create(&S->s, m, &sp, &err) != INFER_OK) { fprintf(stderr, "infer: %s\n", err.msg); free(S); return 1; }
    infer_seq_remove(S->s, 0);
    srv_note_kv(S);
    S->slots = calloc((size_t)N, sizeof *S->slots);
    pthread_mutex_init(&S->mu, NULL);
    pthread_cond_init(&S->engine_cv, NULL);
    S->started = (long long)time(NULL);
    S->seed_state = (uint64_t)S->started * 6364136223846793005ull ^ (uint64_t)getpid() ^ cfg->sp.seed;
    if (!S->slots) { fprintf(stderr, "infer: out of memory\n"); goto done; }
    /* SIGINT/SIGTERM go to sigwait below, never to the other threads */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* the address: --host as a numeric IPv4 or IPv6 address or a name */
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char port[16];
    snprintf(port, sizeof port, "%d", cfg->port);
    const int gai = getaddrinfo(cfg->host, port, &hints, &ai);
    if (gai != 0 || !ai) { fprintf(stderr, "infer: --host %s: %s\n", cfg->host, gai ? gai_strerror(gai) : "no address"); goto done; }
    if (pthread_create(&engine, NULL, srv_engine, S) != 0) { freeaddrinfo(ai); fprintf(stderr, "infer: cannot start the engine thread\n"); goto done; }
    engine_started = 1;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, srv_handler, S,
                         MHD_OPTION_EXTERNAL_LOGGER, srv_log, S,
                         MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->timeout_s,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)256 * 1024,
                         MHD_OPTION_NOTIFY_COMPLETED, srv_completed, S,
                         MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!d) { fprintf(stderr, "infer: cannot listen on %s:%d (in use, or not an address of this machine?)\n", cfg->host, cfg->port); goto done; }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    const int bound = di ? di->port : cfg->port;
    fprintf(stderr, "infer: serving %s (%s, %d sequences of %d positions) on http://%s%s%s:%d/ (Ctrl-C stops)\n", S->model_id, mc->arch, N, S->slot_ctx,
            strchr(cfg->host, ':') ? "[" : "", cfg->host, strchr(cfg->host, ':') ? "]" : "", bound);
    fprintf(stderr, "infer: listening on port %d\n", bound);
    int sig = 0;
    sigwait(&sigs, &sig);
    fprintf(stderr, "infer: signal %d: stopping\n", sig);
    rc = 0;
done:
    pthread_mutex_lock(&S->mu);
    S->stopping = 1;
    pthread_cond_broadcast(&S->engine_cv);
    pthread_mutex_unlock(&S->mu);
    if (engine_started) pthread_join(engine, NULL);
    if (d) MHD_stop_daemon(d);                            /* waits for the connection threads, which see `stopping` */
    infer_session_free(S->s);
    pthread_mutex_destroy(&S->mu);
    pthread_cond_destroy(&S->engine_cv);
    free(S->slots);
    free(S);
    return rc;
}

