/* tools/server_req.c -- the server's request bodies and its replies' tool calls, with no
 * HTTP in them: bytes in, a checked request (or an OpenAI error) out.
 *
 * tools/server.c includes this file for `infer --server`; tools/fuzz.c includes it for its
 * `server` target (and tests.c through it), so the parser a client reaches over a socket is
 * the parser the fuzzer and the unit tests run, without libmicrohttpd and without weights.
 * The includer has infer.h's implementation before it (the JSON parser infer__json_*, the
 * tokenizer, the chat-template renderer, the grammar and JSON-schema converter) and is
 * built with _GNU_SOURCE (memmem); nothing here needs threads or sockets.
 *
 * THE SHAPE
 *     body bytes --infer__json_parse--> tree --srv_parse_request(limits, endpoint)-->
 *         srv_request { prompt ids, sampling, stop strings, grammar, tools } | srv_perr { status, code, message }
 *   srv_limits is what parsing must know of the model and the command line: the vocabulary
 *   size and tokenizer (prompts as text or ids), the context of one sequence (a prompt must
 *   leave room for one token), the chat template, the defaults a request leaves out.
 *
 *     reply text --srv_tool_parse--> content (text around the calls, or none) + calls
 *   Chat requests that offer `tools` have their reply searched for the calls the common
 *   templates ask for (below, >>tool calls); srv_tool_prefix says how much of a reply being
 *   streamed is surely plain text.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>

#define SRV_MAX_STOP 16              /* stop strings per request */
#define SRV_MAX_STOP_LEN 512         /* bytes per stop string */
#define SRV_JSON_OBJECT_SCHEMA "{\"type\": \"object\"}"   /* response_format json_object: any object */

/* ---- growable byte buffer; an allocation failure sets `oom` and drops writes ---- */
typedef struct { char *p; size_t n, cap; int oom; } srv_buf;
static void srv_put(srv_buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = (char *)realloc(b->p, cap);
        if (!p) { b->oom = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}
static void srv_puts(srv_buf *b, const char *s) { srv_put(b, s, strlen(s)); }
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void srv_printf(srv_buf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) srv_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}
/* drop the first n bytes */
static void srv_consume(srv_buf *b, size_t n) {
    if (n >= b->n) { b->n = 0; if (b->p) b->p[0] = 0; return; }
    memmove(b->p, b->p + n, b->n - n + 1);
    b->n -= n;
}

/* a JSON string literal; bytes that are not UTF-8 (a model's stray bytes) become U+FFFD */
static void srv_json_str(srv_buf *b, const char *s, size_t n) {
    srv_put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        const unsigned char c = (unsigned char)s[i];
        const size_t len = (size_t)infer_utf8_char_len(s + i, n - i);
        if (len == 0) { srv_puts(b, "\\ufffd"); i++; continue; }
        if (c == '"') srv_puts(b, "\\\"");
        else if (c == '\\') srv_puts(b, "\\\\");
        else if (c == '\n') srv_puts(b, "\\n");
        else if (c == '\r') srv_puts(b, "\\r");
        else if (c == '\t') srv_puts(b, "\\t");
        else if (c < 0x20) srv_printf(b, "\\u%04x", c);
        else srv_put(b, s + i, len);
        i += len;
    }
    srv_put(b, "\"", 1);
}
/* a parsed JSON value written back as JSON (numbers: the integer exactly, else 17 digits,
 * which read back as the same double) */
static void srv_json_write(srv_buf *b, const infer__json *v) {
    switch (v->type) {
    case INFER__JSON_NULL: srv_puts(b, "null"); break;
    case INFER__JSON_FALSE: srv_puts(b, "false"); break;
    case INFER__JSON_TRUE: srv_puts(b, "true"); break;
    case INFER__JSON_NUMBER:
        if (v->is_int && !v->is_float) srv_printf(b, "%lld", (long long)v->i);
        else if (isfinite(v->num)) srv_printf(b, "%.17g", v->num);
        else srv_puts(b, v->num < 0 ? "-1e999" : "1e999");   /* 1e999 was read as +inf: JSON has no infinity literal */
        break;
    case INFER__JSON_STRING: srv_json_str(b, v->str, v->len); break;
    case INFER__JSON_ARRAY:
    case INFER__JSON_OBJECT:
        srv_puts(b, v->type == INFER__JSON_ARRAY ? "[" : "{");
        for (uint32_t i = 0; i < v->len; i++) {
            if (i) srv_puts(b, ",");
            if (v->type == INFER__JSON_OBJECT) { srv_json_str(b, v->items[i].key, v->items[i].key_len); srv_puts(b, ":"); }
            srv_json_write(b, &v->items[i]);
        }
        srv_puts(b, v->type == INFER__JSON_ARRAY ? "]" : "}");
        break;
    }
}

/* ------------------------------------------------------------------------------------------
 * >>requests -- what a body may say, checked field by field
 * --------------------------------------------------------------------------------------- */

enum { SRV_COMPLETION, SRV_CHAT, SRV_TOKENIZE, SRV_DETOKENIZE };

/* What parsing needs to know of the model and the server; read-only, shared by the
 * connection threads. */
typedef struct srv_limits {
    const infer_model *m;                    /* the chat template's bos/eos tokens (and its template when chat_template is NULL); NULL: no chat */
    const infer_tokenizer *tok;              /* text prompts; NULL: prompts as token ids only */
    int32_t n_vocab;                         /* a token id is in [0, n_vocab) */
    int32_t n_ctx;                           /* positions of one sequence: a prompt leaves room for one token */
    int n_seq;                               /* sequences (for the context message) */
    const char *chat_template;               /* the template text (--chat-template), or NULL: the model's */
    size_t chat_template_len;
    infer_sampler_params sp;                 /* defaults for what a request leaves out (sp.grammar: --grammar's, or NULL) */
    int n_predict;                           /* default max_tokens, -1 none */
} srv_limits;

/* A parsed request. prompt: the tokens to evaluate (completions and chat), the ids of the
 * content (/tokenize) or the ids to turn into text (/detokenize). */
typedef struct srv_request {
    int kind, stream, include_usage;
    int32_t *prompt;
    int n_prompt, max_tokens;                /* max_tokens -1: to the end of the sequence's context */
    infer_sampler_params sp;                 /* sp.grammar: the output's grammar, or NULL */
    infer_grammar *grammar;                  /* the request's own grammar (freed with it), or NULL */
    int seed_given;                          /* "seed" >= 0 was given (else the caller draws one) */
    float presence, frequency;
    char *stop[SRV_MAX_STOP];
    int n_stop;
    int tools;                               /* chat: tools offered and tool_choice is not "none": the reply's tool calls are parsed */
    int force_calls, parallel_calls;         /* tool_choice "required" or a function named; parallel_tool_calls (default 1) */
    int add_special, parse_special;          /* /tokenize */
} srv_request;

static void srv_request_free(srv_request *q) {
    free(q->prompt);
    for (int i = 0; i < q->n_stop; i++) free(q->stop[i]);
    infer_grammar_free(q->grammar);
    memset(q, 0, sizeof *q);
}

/* error reporting while parsing a request: status, code and message */
typedef struct { int status; const char *code; char msg[512]; } srv_perr;
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int srv_bad(srv_perr *e, int status, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = status;
    e->code = code;
    return 0;
}
static const infer__json *srv_member(const infer__json *o, const char *key) {
    const infer__json *v = infer__json_get(o, key);
    return v && v->type != INFER__JSON_NULL ? v : NULL;
}
/* optional number member within [lo, hi] */
static int srv_num(const infer__json *o, const char *key, double lo, double hi, double *out, srv_perr *e) {
    const infer__json *v = srv_member(o, key);
    if (!v) return 1;
    if (v->type != INFER__JSON_NUMBER) return srv_bad(e, 400, "invalid_type", "'%s' must be a number", key);
    if (!(v->num >= lo && v->num <= hi)) return srv_bad(e, 400, "invalid_value", "'%s' must be in [%g, %g] (got %g)", key, lo, hi, v->num);
    *out = v->num;
    return 1;
}
/* optional integer member within [lo, hi]; an integer too large for 64 bits is out of range,
 * not of the wrong type */
static int srv_int(const infer__json *o, const char *key, long long lo, long long hi, long long *out, srv_perr *e) {
    const infer__json *v = srv_member(o, key);
    if (!v) return 1;
    const int whole = v->type == INFER__JSON_NUMBER && (v->is_int || (isfinite(v->num) && v->num == floor(v->num)));
    if (!whole && !(v->type == INFER__JSON_NUMBER && isinf(v->num))) return srv_bad(e, 400, "invalid_type", "'%s' must be an integer", key);
    if (!v->is_int || v->i < lo || v->i > hi) {
        if (v->is_int) return srv_bad(e, 400, "invalid_value", "'%s' must be in [%lld, %lld] (got %lld)", key, lo, hi, (long long)v->i);
        return srv_bad(e, 400, "invalid_value", "'%s' must be in [%lld, %lld] (got %g)", key, lo, hi, v->num);
    }
    *out = v->i;
    return 1;
}
static int srv_bool(const infer__json *o, const char *key, int *out, srv_perr *e) {
    const infer__json *v = srv_member(o, key);
    if (!v) return 1;
    if (v->type != INFER__JSON_TRUE && v->type != INFER__JSON_FALSE) return srv_bad(e, 400, "invalid_type", "'%s' must be true or false", key);
    *out = v->type == INFER__JSON_TRUE;
    return 1;
}

/* the parameters both generating endpoints share: sampling, lengths, stop strings, stream, n */
static int srv_parse_params(const srv_limits *L, const infer__json *o, srv_request *q, srv_perr *e) {
    double d;
    long long i;
    const infer__json *v;
    if ((v = srv_member(o, "model")) && v->type != INFER__JSON_STRING) return srv_bad(e, 400, "invalid_type", "'model' must be a string");
    i = 1;
    if (!srv_int(o, "n", LLONG_MIN, LLONG_MAX, &i, e)) return 0;
    if (i != 1) return srv_bad(e, 400, "invalid_value", "'n' must be 1: this server makes one choice per request (got %lld)", i);
    int lp = 0;
    if (!srv_bool(o, "stream", &q->stream, e)) return 0;
    if ((v = srv_member(o, "logprobs")) && v->type != INFER__JSON_NUMBER && !srv_bool(o, "logprobs", &lp, e)) return 0;
    if (lp || srv_member(o, "top_logprobs") || (v && v->type == INFER__JSON_NUMBER))
        return srv_bad(e, 400, "unsupported_value", "'logprobs' is not supported");
    if ((v = srv_member(o, "stream_options"))) {
        if (v->type != INFER__JSON_OBJECT) return srv_bad(e, 400, "invalid_type", "'stream_options' must be an object");
        if (!srv_bool(v, "include_usage", &q->include_usage, e)) return 0;
    }
    q->sp = L->sp;
    q->max_tokens = L->n_predict;
    if (!srv_num(o, "temperature", 0, 1e4, &d, e)) return 0;
    if (srv_member(o, "temperature")) q->sp.temp = (float)d;
    if (!srv_num(o, "top_p", 0, 1, &d, e)) return 0;
    if (srv_member(o, "top_p")) q->sp.top_p = (float)d;
    if (!srv_num(o, "min_p", 0, 1, &d, e)) return 0;
    if (srv_member(o, "min_p")) q->sp.min_p = (float)d;
    if (!srv_int(o, "top_k", 0, INT32_MAX, &i, e)) return 0;
    if (srv_member(o, "top_k")) q->sp.top_k = (int32_t)i;
    if (!srv_num(o, "repeat_penalty", 1e-6, 1e6, &d, e)) return 0;
    if (srv_member(o, "repeat_penalty")) q->sp.repeat_penalty = (float)d;
    if (!srv_int(o, "repeat_last_n", 0, 1 << 20, &i, e)) return 0;
    if (srv_member(o, "repeat_last_n")) q->sp.repeat_last_n = (int32_t)i;
    d = 0;
    if (!srv_num(o, "presence_penalty", -2, 2, &d, e)) return 0;
    q->presence = (float)d;
    d = 0;
    if (!srv_num(o, "frequency_penalty", -2, 2, &d, e)) return 0;
    q->frequency = (float)d;
    if (!srv_int(o, "seed", LLONG_MIN, LLONG_MAX, &i, e)) return 0;
    if (srv_member(o, "seed") && i >= 0) { q->sp.seed = (uint64_t)i; q->seed_given = 1; }
    const char *len_keys[3] = { "max_tokens", "max_completion_tokens", "n_predict" };
    for (int k = 0; k < 3; k++) {
        if (!srv_int(o, len_keys[k], -1, INT32_MAX, &i, e)) return 0;
        if (srv_member(o, len_keys[k])) q->max_tokens = (int)i;
    }
    if ((v = srv_member(o, "stop"))) {
        const infer__json *one = v->type == INFER__JSON_STRING ? v : NULL;
        if (!one && v->type != INFER__JSON_ARRAY) return srv_bad(e, 400, "invalid_type", "'stop' must be a string or an array of strings");
        const uint32_t n = one ? 1 : v->len;
        if (n > SRV_MAX_STOP) return srv_bad(e, 400, "invalid_value", "'stop' has %u strings; at most %d", n, SRV_MAX_STOP);
        for (uint32_t k = 0; k < n; k++) {
            const infer__json *s = one ? one : &v->items[k];
            if (s->type != INFER__JSON_STRING) return srv_bad(e, 400, "invalid_type", "'stop' must be a string or an array of strings");
            if (s->len == 0) continue;                  /* an empty stop string stops nothing */
            if (s->len > SRV_MAX_STOP_LEN || memchr(s->str, 0, s->len)) return srv_bad(e, 400, "invalid_value", "a stop string must be 1 to %d bytes without NUL", SRV_MAX_STOP_LEN);
            if (!(q->stop[q->n_stop] = strdup(s->str))) return srv_bad(e, 500, NULL, "out of memory");
            q->n_stop++;
        }
    }
    return 1;
}

/* The output's form: OpenAI's response_format ({"type": "text"}, {"type": "json_object"},
 * {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}) or llama-server's
 * "grammar" (GBNF text) and "json_schema" (a schema). The schema is written back as JSON for
 * the converter, its GBNF parsed here, once, into q->grammar (freed with the request) and
 * q->sp.grammar, which admitting the request puts on its sequence's sampler. A request that
 * names none keeps the server's own (--grammar, --json, ... on its command line); "text"
 * drops it. */
static int srv_parse_format(const infer__json *o, srv_request *q, srv_perr *e) {
    const infer__json *rf = srv_member(o, "response_format"), *gr = srv_member(o, "grammar"), *js = srv_member(o, "json_schema");
    const infer__json *schema = NULL;
    const char *what = NULL;                         /* where the schema or grammar came from, for messages */
    int n_forms = 0, json_object = 0;
    if (rf) {
        if (rf->type != INFER__JSON_OBJECT) return srv_bad(e, 400, "invalid_type", "'response_format' must be an object");
        const infer__json *t = srv_member(rf, "type");
        if (!t || t->type != INFER__JSON_STRING) return srv_bad(e, 400, "invalid_type", "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\"");
        if (!strcmp(t->str, "text")) q->sp.grammar = NULL;
        else if (!strcmp(t->str, "json_object")) {  /* llama-server's: a "schema" beside the type */
            n_forms++;
            if ((schema = srv_member(rf, "schema"))) what = "response_format.schema";
            else json_object = 1;
        } else if (!strcmp(t->str, "json_schema")) {
            n_forms++;
            const infer__json *w = srv_member(rf, "json_schema");
            if (!w || w->type != INFER__JSON_OBJECT)
                return srv_bad(e, 400, w ? "invalid_type" : "missing_field", "'response_format.json_schema' must be an object with the schema in 'schema'");
            if (!(schema = srv_member(w, "schema"))) return srv_bad(e, 400, "missing_field", "'response_format.json_schema.schema' is required");
            what = "response_format.json_schema.schema";
        } else return srv_bad(e, 400, "unsupported_value", "'response_format.type' \"%.64s\" is not supported: give \"text\", \"json_object\" or \"json_schema\"", t->str);
    }
    if (gr) {
        if (gr->type != INFER__JSON_STRING) return srv_bad(e, 400, "invalid_type", "'grammar' must be a string (GBNF)");
        if (gr->len == 0) gr = NULL;                 /* llama-server's clients send "" for none */
        else n_forms++;
    }
    if (js) {
        n_forms++;
        schema = js;
        what = "json_schema";
    }
    if (n_forms > 1) return srv_bad(e, 400, "invalid_value", "give one of 'response_format' (json_object or json_schema), 'json_schema' and 'grammar'");
    if (n_forms == 0) return 1;
    infer_error err;
    char *gbnf = NULL;
    infer_status st;
    if (schema || json_object) {
        srv_buf text = { 0 };
        if (json_object) srv_puts(&text, SRV_JSON_OBJECT_SCHEMA);
        else srv_json_write(&text, schema);
        if (text.oom) { free(text.p); return srv_bad(e, 500, NULL, "out of memory"); }
        st = infer_json_schema_to_grammar(text.p, text.n, &gbnf, &err);
        free(text.p);
        if (st != INFER_OK)
            return srv_bad(e, st == INFER_ERR_NOMEM ? 500 : 400, st == INFER_ERR_NOMEM ? NULL : st == INFER_ERR_UNSUPPORTED ? "unsupported_value" : "invalid_value",
                           "'%s': %s", json_object ? "response_format" : what, err.msg);
        st = infer_grammar_parse(&q->grammar, gbnf, strlen(gbnf), &err);
        infer_free(gbnf);
        if (st != INFER_OK) return srv_bad(e, 500, NULL, "the grammar made from '%s': %s", json_object ? "response_format" : what, err.msg);
    } else {
        st = infer_grammar_parse(&q->grammar, gr->str, gr->len, &err);
        if (st != INFER_OK) return srv_bad(e, st == INFER_ERR_NOMEM ? 500 : 400, st == INFER_ERR_NOMEM ? NULL : "invalid_value", "'grammar': %s", err.msg);
    }
    q->sp.grammar = q->grammar;
    return 1;
}

/* text -> ids */
static int srv_tokenize(const srv_limits *L, const char *text, size_t len, int add_special, int parse_special, int32_t **out, int *n_out, srv_perr *e) {
    if (!L->tok) return srv_bad(e, 400, "unsupported_value", "the model has no vocabulary: give the prompt as token ids");
    if (len > (size_t)INT32_MAX / 2 - 16) return srv_bad(e, 400, "context_length_exceeded", "the prompt is too long");
    int cap = (int)len + 16;
    int32_t *ids = (int32_t *)malloc(sizeof(int32_t) * (size_t)cap);
    if (!ids) return srv_bad(e, 500, NULL, "out of memory");
    int n = infer_tokenize(L->tok, text, len, add_special, parse_special, ids, cap);
    if (n > cap) {
        int32_t *more = (int32_t *)realloc(ids, sizeof(int32_t) * (size_t)n);
        if (!more) { free(ids); return srv_bad(e, 500, NULL, "out of memory"); }
        ids = more;
        n = infer_tokenize(L->tok, text, len, add_special, parse_special, ids, n);
    }
    if (n < 0) { free(ids); return srv_bad(e, 400, "invalid_value", "the text could not be tokenized"); }
    *out = ids;
    *n_out = n;
    return 1;
}

/* token ids from a JSON array, each in the vocabulary */
static int srv_ids(const srv_limits *L, const infer__json *a, const char *what, int32_t **out, int *n_out, srv_perr *e) {
    if (a->len > (uint32_t)INT32_MAX / 2) return srv_bad(e, 400, "context_length_exceeded", "'%s' has too many token ids", what);
    int32_t *ids = (int32_t *)malloc(sizeof(int32_t) * (a->len ? a->len : 1));
    if (!ids) return srv_bad(e, 500, NULL, "out of memory");
    for (uint32_t k = 0; k < a->len; k++) {
        const infer__json *t = &a->items[k];
        if (t->type != INFER__JSON_NUMBER || !t->is_int || t->i < 0 || t->i >= L->n_vocab) {
            free(ids);
            return srv_bad(e, 400, "invalid_value", "'%s'[%u] must be a token id in [0, %d]", what, k, L->n_vocab - 1);
        }
        ids[k] = (int32_t)t->i;
    }
    *out = ids;
    *n_out = (int)a->len;
    return 1;
}

/* /v1/completions: "prompt" is a string or an array of token ids */
static int srv_parse_completion(const srv_limits *L, const infer__json *o, srv_request *q, srv_perr *e) {
    const infer__json *p = srv_member(o, "prompt"), *v;
    int echo = 0;
    if (!srv_bool(o, "echo", &echo, e)) return 0;
    if (echo) return srv_bad(e, 400, "unsupported_value", "'echo' is not supported");
    if ((v = srv_member(o, "suffix")) && (v->type != INFER__JSON_STRING || v->len)) return srv_bad(e, 400, "unsupported_value", "'suffix' is not supported");
    if ((v = srv_member(o, "best_of")) && !(v->type == INFER__JSON_NUMBER && v->is_int && v->i == 1)) return srv_bad(e, 400, "unsupported_value", "'best_of' must be 1");
    if (!p) return srv_bad(e, 400, "missing_field", "'prompt' is required");
    if (p->type == INFER__JSON_ARRAY && p->len == 1 && (p->items[0].type == INFER__JSON_STRING || p->items[0].type == INFER__JSON_ARRAY)) p = &p->items[0];
    if (p->type == INFER__JSON_STRING) return srv_tokenize(L, p->str, p->len, 1, 1, &q->prompt, &q->n_prompt, e);
    if (p->type != INFER__JSON_ARRAY) return srv_bad(e, 400, "invalid_type", "'prompt' must be a string or an array of token ids");
    for (uint32_t k = 0; k < p->len; k++)
        if (p->items[k].type == INFER__JSON_STRING || p->items[k].type == INFER__JSON_ARRAY)
            return srv_bad(e, 400, "unsupported_value", "one prompt per request: 'prompt' must be a string or an array of token ids");
    return srv_ids(L, p, "prompt", &q->prompt, &q->n_prompt, e);
}

/* a message's content: a string, or an array of text parts joined */
static int srv_content(const infer__json *c, uint32_t k, srv_buf *out, srv_perr *e) {
    if (c->type == INFER__JSON_STRING) { srv_json_str(out, c->str, c->len); return 1; }
    if (c->type != INFER__JSON_ARRAY) return srv_bad(e, 400, "invalid_type", "messages[%u].content must be a string or an array of parts", k);
    srv_buf t = { 0 };
    for (uint32_t j = 0; j < c->len; j++) {
        const infer__json *part = &c->items[j], *ty = srv_member(part, "type"), *tx = srv_member(part, "text");
        if (!ty || ty->type != INFER__JSON_STRING || strcmp(ty->str, "text")) { free(t.p); return srv_bad(e, 400, "unsupported_value", "messages[%u].content[%u]: only text content parts are supported", k, j); }
        if (!tx || tx->type != INFER__JSON_STRING) { free(t.p); return srv_bad(e, 400, "invalid_type", "messages[%u].content[%u]: a text part needs a string 'text'", k, j); }
        srv_put(&t, tx->str, tx->len);
    }
    srv_json_str(out, t.p ? t.p : "", t.n);
    const int oom = t.oom;
    free(t.p);
    return oom ? srv_bad(e, 500, NULL, "out of memory") : 1;
}

/* An assistant message's tool_calls, for the template: OpenAI's clients send each call's
 * arguments as a JSON text ("{\"city\": \"Paris\"}"), while most templates (Qwen, Hermes,
 * Llama 3.1, Mistral) write them with `| tojson` or iterate them `| items`, which wants the
 * object. With as_objects, an arguments string that parses as a JSON object is passed as
 * that object; the caller renders again with the strings as sent when the template refuses
 * objects (DeepSeek's concatenates the string). */
static int srv_tool_calls_var(const infer__json *tc, uint32_t k, int as_objects, int *converted, srv_buf *out, srv_perr *e) {
    if (tc->type != INFER__JSON_ARRAY) return srv_bad(e, 400, "invalid_type", "messages[%u].tool_calls must be an array", k);
    srv_puts(out, "[");
    for (uint32_t j = 0; j < tc->len; j++) {
        const infer__json *c = &tc->items[j], *fn = srv_member(c, "function");
        const infer__json *name = fn ? srv_member(fn, "name") : NULL;
        if (c->type != INFER__JSON_OBJECT || !fn || fn->type != INFER__JSON_OBJECT || !name || name->type != INFER__JSON_STRING)
            return srv_bad(e, 400, "invalid_type", "messages[%u].tool_calls[%u] must be {\"type\": \"function\", \"function\": {\"name\": ..., \"arguments\": ...}}", k, j);
        if (j) srv_puts(out, ",");
        srv_puts(out, "{");
        for (uint32_t f = 0; f < c->len; f++) {
            const infer__json *m = &c->items[f];
            if (f) srv_puts(out, ",");
            srv_json_str(out, m->key, m->key_len);
            srv_puts(out, ":");
            if (m != fn) { srv_json_write(out, m); continue; }
            srv_puts(out, "{");
            for (uint32_t g = 0; g < fn->len; g++) {
                const infer__json *a = &fn->items[g];
                if (g) srv_puts(out, ",");
                srv_json_str(out, a->key, a->key_len);
                srv_puts(out, ":");
                infer__json_doc args;
                infer_error err;
                if (as_objects && a->type == INFER__JSON_STRING && !strcmp(a->key, "arguments") &&
                    infer__json_parse(&args, a->str, a->len, &err) == INFER_OK) {
                    srv_json_write(out, args.root->type == INFER__JSON_OBJECT ? args.root : a);
                    *converted |= args.root->type == INFER__JSON_OBJECT;
                    infer__json_free(&args);
                } else srv_json_write(out, a);
            }
            srv_puts(out, "}");
        }
        srv_puts(out, "}");
    }
    srv_puts(out, "]");
    return 1;
}

/* The chat template's variables: the messages (content null or absent becomes "", text
 * parts joined; tool_calls and a tool message's tool_call_id passed on), add_generation_prompt,
 * tools, chat_template_kwargs. */
static int srv_chat_vars(const infer__json *o, int as_objects, int *converted, srv_buf *vars, srv_perr *e) {
    const infer__json *msgs = srv_member(o, "messages"), *v;
    vars->n = 0;
    srv_puts(vars, "{\"messages\":[");
    for (uint32_t k = 0; k < msgs->len; k++) {
        const infer__json *m = &msgs->items[k], *role = srv_member(m, "role");
        if (!role || role->type != INFER__JSON_STRING) return srv_bad(e, 400, "invalid_type", "messages[%u] must be an object with a string 'role'", k);
        srv_puts(vars, k ? ",{" : "{");
        int first = 1;
        for (uint32_t j = 0; j < m->len; j++) {
            const infer__json *f = &m->items[j];
            if (!strcmp(f->key, "content")) continue;
            if (!first) srv_puts(vars, ",");
            first = 0;
            srv_json_str(vars, f->key, f->key_len);
            srv_puts(vars, ":");
            if (!strcmp(f->key, "tool_calls") && f->type != INFER__JSON_NULL) { if (!srv_tool_calls_var(f, k, as_objects, converted, vars, e)) return 0; }
            else srv_json_write(vars, f);
        }
        srv_puts(vars, ",\"content\":");
        const infer__json *c = srv_member(m, "content");
        if (!c) srv_puts(vars, "\"\"");
        else if (!srv_content(c, k, vars, e)) return 0;
        srv_puts(vars, "}");
    }
    srv_puts(vars, "],\"add_generation_prompt\":true");
    if ((v = srv_member(o, "tools"))) {
        srv_puts(vars, ",\"tools\":");
        srv_json_write(vars, v);
    }
    if ((v = srv_member(o, "chat_template_kwargs"))) {     /* llama-server's: more template variables */
        if (v->type != INFER__JSON_OBJECT) return srv_bad(e, 400, "invalid_type", "'chat_template_kwargs' must be an object");
        for (uint32_t j = 0; j < v->len; j++) {
            srv_puts(vars, ",");
            srv_json_str(vars, v->items[j].key, v->items[j].key_len);
            srv_puts(vars, ":");
            srv_json_write(vars, &v->items[j]);
        }
    }
    srv_puts(vars, "}");
    return vars->oom ? srv_bad(e, 500, NULL, "out of memory") : 1;
}

/* "tools": [{"type": "function", "function": {"name", "description", "parameters"}}, ...]
 * and "tool_choice": "none" | "auto" | "required" | {"type": "function", "function": {"name"}}.
 * Returns 1 and sets q->tools when the reply is to be searched for calls. */
static int srv_parse_tools(const infer__json *o, srv_request *q, srv_perr *e) {
    const infer__json *tools = srv_member(o, "tools"), *tc = srv_member(o, "tool_choice");
    int none = 0;
    if (tools) {
        if (tools->type != INFER__JSON_ARRAY) return srv_bad(e, 400, "invalid_type", "'tools' must be an array");
        for (uint32_t k = 0; k < tools->len; k++) {
            const infer__json *t = &tools->items[k], *fn = srv_member(t, "function"), *name = srv_member(fn, "name");
            if (!fn || fn->type != INFER__JSON_OBJECT || !name || name->type != INFER__JSON_STRING || !name->len)
                return srv_bad(e, 400, "invalid_type", "tools[%u] must be {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": ...}}", k);
        }
    }
    if (tc) {
        if (tc->type == INFER__JSON_STRING) {
            none = !strcmp(tc->str, "none");
            if (!none && strcmp(tc->str, "auto") && strcmp(tc->str, "required"))
                return srv_bad(e, 400, "invalid_value", "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}");
        } else {
            const infer__json *fn = srv_member(tc, "function"), *name = srv_member(fn, "name");
            if (tc->type != INFER__JSON_OBJECT || !name || name->type != INFER__JSON_STRING)
                return srv_bad(e, 400, "invalid_type", "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
    }
    q->parallel_calls = 1;
    if (!srv_bool(o, "parallel_tool_calls", &q->parallel_calls, e)) return 0;
    q->tools = tools && tools->len > 0 && !none;
    q->force_calls = tc && (tc->type == INFER__JSON_OBJECT || !strcmp(tc->str, "required"));
    return 1;
}

/* /v1/chat/completions: the messages (and tools) rendered with the chat template */
static int srv_parse_chat(const srv_limits *L, const infer__json *o, srv_request *q, srv_perr *e) {
    const infer__json *msgs = srv_member(o, "messages");
    if (!msgs) return srv_bad(e, 400, "missing_field", "'messages' is required");
    if (msgs->type != INFER__JSON_ARRAY || msgs->len == 0) return srv_bad(e, 400, "invalid_type", "'messages' must be a non-empty array");
    if (!srv_parse_tools(o, q, e)) return 0;
    if (!L->m) return srv_bad(e, 400, "unsupported_value", "this server has no chat template");
    srv_buf vars = { 0 };
    char *text = NULL;
    size_t len = 0;
    infer_error err;
    infer_status st = INFER_ERR_FORMAT;
    /* tool-call arguments as objects first, then as the strings sent (see srv_tool_calls_var) */
    for (int as_objects = 1, converted = 0; as_objects >= 0 && st != INFER_OK; as_objects--) {
        if (!srv_chat_vars(o, as_objects, &converted, &vars, e)) { free(vars.p); return 0; }
        st = infer_model_chat_render(L->m, L->chat_template, L->chat_template_len, vars.p, vars.n, &text, &len, &err);
        if (!converted) break;                          /* the same variables again would fail the same way */
    }
    free(vars.p);
    if (st != INFER_OK) return srv_bad(e, st == INFER_ERR_NOMEM ? 500 : 400, st == INFER_ERR_NOMEM ? NULL : "invalid_value", "the chat template: %s", err.msg);
    int32_t *ids;
    int n;
    const int ok = srv_tokenize(L, text, len, 0, 1, &ids, &n, e);
    infer_free(text);
    if (!ok) return 0;
    /* BOS in front when the model wants one and the template did not write it */
    const int bos = L->tok->add_bos && L->tok->bos >= 0 && (n == 0 || ids[0] != L->tok->bos);
    q->prompt = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!q->prompt) { free(ids); return srv_bad(e, 500, NULL, "out of memory"); }
    if (bos) q->prompt[0] = L->tok->bos;
    if (n) memcpy(q->prompt + bos, ids, sizeof(int32_t) * (size_t)n);
    q->n_prompt = n + bos;
    free(ids);
    return 1;
}

/* POST /tokenize {"content": text, "add_special": bool, "parse_special": bool} */
static int srv_parse_tokenize(const srv_limits *L, const infer__json *o, srv_request *q, srv_perr *e) {
    const infer__json *t = srv_member(o, "content");
    q->add_special = 0;
    q->parse_special = 1;
    if (!t || t->type != INFER__JSON_STRING) return srv_bad(e, 400, t ? "invalid_type" : "missing_field", "the body must be an object with a string 'content'");
    if (!srv_bool(o, "add_special", &q->add_special, e) || !srv_bool(o, "parse_special", &q->parse_special, e)) return 0;
    return srv_tokenize(L, t->str, t->len, q->add_special, q->parse_special, &q->prompt, &q->n_prompt, e);
}

/* POST /detokenize {"tokens": [...]} */
static int srv_parse_detokenize(const srv_limits *L, const infer__json *o, srv_request *q, srv_perr *e) {
    const infer__json *t = srv_member(o, "tokens");
    if (!t || t->type != INFER__JSON_ARRAY) return srv_bad(e, 400, t ? "invalid_type" : "missing_field", "the body must be an object with an array 'tokens'");
    return srv_ids(L, t, "tokens", &q->prompt, &q->n_prompt, e);
}

/* text helpers for the tool-call forms below */
static const char *srv_find(const char *h, size_t n, const char *needle) {
    return n ? (const char *)memmem(h, n, needle, strlen(needle)) : NULL;
}
static int srv_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static void srv_trim(const char **s, size_t *n) {
    while (*n && srv_space(**s)) { (*s)++; (*n)--; }
    while (*n && srv_space((*s)[*n - 1])) (*n)--;
}

/* ------------------------------------------------------------------------------------------
 * >>forced calls -- tool_choice "required" or {"type": "function", "function": {"name": f}}
 *
 * The reply is held to tool calls by a grammar on the sampler, written for the form the chat
 * template teaches its model (the forms srv_tool_parse reads, >>tool calls):
 *   the template has "<function=":  <tool_call>\n<function=f>\n<parameter=p>\nvalue\n</parameter>\n...</function>\n</tool_call>
 *   it has "<tool_call>":           <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
 *   it has "[TOOL_CALLS]":          [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]
 *   any other:                      {"name": "f", "arguments" | "parameters": {...}}  (the
 *                                   key the template names; Llama 3.1's says "parameters")
 * In the JSON forms a call is a JSON Schema turned into GBNF by infer_json_schema_to_grammar:
 *   {"anyOf": [{"type": "object", "properties": {"name": {"const": f}, "arguments": f's
 *   parameters}, "required": ["name", "arguments"]}, ...]}
 * so the arguments follow each tool's own schema (a schema the converter does not know,
 * e.g. one with "pattern", leaves that tool's arguments any JSON object). The XML form
 * writes each required parameter (in the schema's order, then any others) and a value as
 * text: an enum is one of its strings, an integer, number or boolean is
 * one, a string with maxLength is at most that many bytes, anything else is text up to the
 * next '<'. parallel_tool_calls (default true) allows several calls, else exactly one.
 * --------------------------------------------------------------------------------------- */
enum { SRV_FORM_XML, SRV_FORM_HERMES, SRV_FORM_MISTRAL, SRV_FORM_JSON };

/* a GBNF string literal of s[0..n) */
static void srv_gbnf_lit(srv_buf *b, const char *s, size_t n) {
    srv_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { srv_put(b, "\\", 1); srv_put(b, s + i, 1); }
        else if (c == '\n') srv_puts(b, "\\n");
        else if (c == '\r') srv_puts(b, "\\r");
        else if (c == '\t') srv_puts(b, "\\t");
        else if (c < 0x20) srv_printf(b, "\\x%02X", c);
        else srv_put(b, s + i, 1);
    }
    srv_puts(b, "\"");
}

/* the grammar of one XML parameter value for schema s (see above) */
static void srv_xml_value(srv_buf *b, const infer__json *s) {
    const infer__json *en = srv_member(s, "enum"), *ty = srv_member(s, "type"), *ml = srv_member(s, "maxLength");
    const char *t = ty && ty->type == INFER__JSON_STRING ? ty->str : "";
    int n_enum = 0;
    if (en && en->type == INFER__JSON_ARRAY)
        for (uint32_t k = 0; k < en->len; k++)
            if (en->items[k].type == INFER__JSON_STRING && en->items[k].len && !memchr(en->items[k].str, '<', en->items[k].len)) {
                srv_puts(b, n_enum++ ? " | " : "(");
                srv_gbnf_lit(b, en->items[k].str, en->items[k].len);
            }
    if (n_enum) srv_puts(b, ")");
    else if (!strcmp(t, "integer")) srv_puts(b, "\"-\"? [0-9]{1,19}");
    else if (!strcmp(t, "number")) srv_puts(b, "\"-\"? [0-9]{1,16} (\".\" [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?");
    else if (!strcmp(t, "boolean")) srv_puts(b, "(\"true\" | \"false\")");
    else if (!strcmp(t, "string") && ml && ml->type == INFER__JSON_NUMBER && ml->num >= 0 && ml->num <= 4096) srv_printf(b, "[^<]{0,%d}", (int)ml->num);
    else srv_puts(b, "[^<]*");
}

/* is key one of the strings of array a? */
static int srv_listed(const infer__json *a, const char *key) {
    for (uint32_t i = 0; a && a->type == INFER__JSON_ARRAY && i < a->len; i++)
        if (a->items[i].type == INFER__JSON_STRING && !strcmp(a->items[i].str, key)) return 1;
    return 0;
}

/* The calls' grammar in the XML form, one rule per tool (srv-fn-K): its required parameters
 * in the schema's order, then any of the others */
static void srv_xml_grammar(srv_buf *g, const infer__json *const *fns, int n_fns, int parallel) {
    srv_printf(g, "root ::= srv-one%s\nsrv-one ::= \"<tool_call>\\n<function=\" (", parallel ? " (\"\\n\" srv-one)*" : "");
    for (int k = 0; k < n_fns; k++) srv_printf(g, "%ssrv-fn-%d", k ? " | " : "", k);
    srv_puts(g, ") \"</function>\\n</tool_call>\"\n");
    for (int k = 0; k < n_fns; k++) {
        const infer__json *name = srv_member(fns[k], "name"), *par = srv_member(fns[k], "parameters");
        const infer__json *props = par ? srv_member(par, "properties") : NULL;
        srv_printf(g, "srv-fn-%d ::= ", k);
        srv_gbnf_lit(g, name->str, name->len);
        srv_puts(g, " \">\\n\"");
        const infer__json *req = par ? srv_member(par, "required") : NULL;
        int n_req = 0, n_opt = 0;                    /* the properties a name can be written for */
        for (uint32_t i = 0; props && props->type == INFER__JSON_OBJECT && i < props->len; i++)
            if (props->items[i].key[0] && !strchr(props->items[i].key, '>')) *(srv_listed(req, props->items[i].key) ? &n_req : &n_opt) += 1;
        if (!n_req && !n_opt) {                      /* no properties known: any names, any text */
            srv_puts(g, " (\"<parameter=\" [a-zA-Z0-9_.-]+ \">\\n\" [^<]* \"\\n</parameter>\\n\")*\n");
            continue;
        }
        /* the required ones in the schema's order, then any of the others */
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1 && n_opt) srv_puts(g, " (");
            for (uint32_t i = 0, w = 0; i < props->len; i++) {
                if (!props->items[i].key[0] || strchr(props->items[i].key, '>') || srv_listed(req, props->items[i].key) != (pass == 0)) continue;
                if (pass == 1 && w++) srv_puts(g, " |");
                srv_puts(g, " \"<parameter=\" ");
                srv_gbnf_lit(g, props->items[i].key, strlen(props->items[i].key));
                srv_puts(g, " \">\\n\" ");
                srv_xml_value(g, &props->items[i]);
                srv_puts(g, " \"\\n</parameter>\\n\"");
            }
            if (pass == 1 && n_opt) srv_puts(g, ")*");
        }
        srv_puts(g, "\n");
    }
}

/* The JSON call schema (see above); any_args: every tool's arguments any object */
static void srv_call_schema(srv_buf *b, const infer__json *const *fns, int n_fns, const char *args_key, int any_args) {
    srv_puts(b, "{\"anyOf\":[");
    for (int k = 0; k < n_fns; k++) {
        const infer__json *name = srv_member(fns[k], "name"), *par = srv_member(fns[k], "parameters");
        srv_puts(b, k ? ",{\"type\":\"object\",\"properties\":{\"name\":{\"const\":" : "{\"type\":\"object\",\"properties\":{\"name\":{\"const\":");
        srv_json_str(b, name->str, name->len);
        srv_printf(b, "},\"%s\":", args_key);
        if (!any_args && par && par->type == INFER__JSON_OBJECT) srv_json_write(b, par);
        else srv_puts(b, "{\"type\":\"object\"}");
        srv_printf(b, "},\"required\":[\"name\",\"%s\"]}", args_key);
    }
    srv_puts(b, "]}");
}

/* q->grammar for a forced tool_choice (none when tool_choice is "auto", "none" or absent) */
static int srv_force_tools(const srv_limits *L, const infer__json *o, srv_request *q, srv_perr *e) {
    const infer__json *tools = srv_member(o, "tools"), *tc = srv_member(o, "tool_choice");
    if (!q->force_calls) return 1;
    const infer__json *want = tc->type == INFER__JSON_OBJECT ? srv_member(srv_member(tc, "function"), "name") : NULL;   /* the function named */
    if (!tools || tools->len == 0) return srv_bad(e, 400, "invalid_value", "'tool_choice' asks for a tool call but 'tools' is empty or absent");
    if (q->grammar) return srv_bad(e, 400, "invalid_value", "give either a forced 'tool_choice' or a 'response_format' / 'json_schema' / 'grammar', not both");
    const infer__json **fns = (const infer__json **)malloc(sizeof *fns * tools->len);
    if (!fns) return srv_bad(e, 500, NULL, "out of memory");
    int n_fns = 0;
    for (uint32_t k = 0; k < tools->len; k++) {       /* srv_parse_tools checked each has a name */
        const infer__json *fn = srv_member(&tools->items[k], "function"), *name = srv_member(fn, "name");
        if (!want || (name->len == want->len && !memcmp(name->str, want->str, name->len))) fns[n_fns++] = fn;
    }
    if (!n_fns) { free(fns); return srv_bad(e, 400, "invalid_value", "'tool_choice' names the function \"%.64s\", which is not in 'tools'", want->str); }
    const int parallel = q->parallel_calls;
    size_t tl = 0;
    const char *tmpl = L->chat_template;
    if (tmpl) tl = L->chat_template_len;
    else if (L->m && !(tmpl = infer_model_chat_template(L->m, "tool_use", &tl))) tmpl = infer_model_chat_template(L->m, NULL, &tl);
    const int form = tmpl && srv_find(tmpl, tl, "<function=") ? SRV_FORM_XML : tmpl && srv_find(tmpl, tl, "<tool_call>") ? SRV_FORM_HERMES
                   : tmpl && srv_find(tmpl, tl, "[TOOL_CALLS]") ? SRV_FORM_MISTRAL : SRV_FORM_JSON;
    srv_buf g = { 0 };
    infer_error err;
    infer_status st = INFER_OK;
    if (form == SRV_FORM_XML) srv_xml_grammar(&g, fns, n_fns, parallel);
    else {
        const char *args_key = form == SRV_FORM_JSON && tmpl && srv_find(tmpl, tl, "\"parameters\"") ? "parameters" : "arguments";
        char *gbnf = NULL;
        for (int any_args = 0; any_args < 2 && !gbnf; any_args++) {   /* the tools' own schemas, else any objects */
            srv_buf schema = { 0 };
            srv_call_schema(&schema, fns, n_fns, args_key, any_args);
            st = schema.oom ? INFER_ERR_NOMEM : infer_json_schema_to_grammar(schema.p, schema.n, &gbnf, &err);
            free(schema.p);
            if (st == INFER_ERR_NOMEM) break;
        }
        if (gbnf) {
            /* the converter's root is one call: it becomes srv-call, inside the form's root */
            const char *r = strncmp(gbnf, "root ::= ", 9) ? strstr(gbnf, "\nroot ::= ") : gbnf - 1;
            if (r) {
                srv_put(&g, gbnf, (size_t)(r + 1 - gbnf));
                srv_puts(&g, "srv-call");
                srv_puts(&g, r + 5);
            }
            infer_free(gbnf);
            if (!r) st = INFER_ERR_FORMAT;
            else if (form == SRV_FORM_HERMES)
                srv_printf(&g, "\nroot ::= srv-one%s\nsrv-one ::= \"<tool_call>\\n\" srv-call \"\\n</tool_call>\"\n", parallel ? " (\"\\n\" srv-one)*" : "");
            else if (form == SRV_FORM_MISTRAL) srv_printf(&g, "\nroot ::= \"[TOOL_CALLS][\" srv-call%s \"]\"\n", parallel ? " (\",\" space srv-call)*" : "");
            else srv_puts(&g, "\nroot ::= srv-call\n");
        }
    }
    free(fns);
    if (st == INFER_OK && !g.oom) st = infer_grammar_parse(&q->grammar, g.p, g.n, &err);
    free(g.p);
    if (st != INFER_OK || g.oom) return srv_bad(e, 500, NULL, "the grammar of a forced tool call: %s", g.oom || st == INFER_ERR_NOMEM ? "out of memory" : err.msg);
    q->sp.grammar = q->grammar;
    return 1;
}

/* The body of a request to endpoint `kind` (SRV_COMPLETION, SRV_CHAT, SRV_TOKENIZE,
 * SRV_DETOKENIZE) into *q. 1 on success (free q with srv_request_free); 0 with the
 * status (400: the client's fault, 500: out of memory), OpenAI error code (NULL for 500)
 * and message in *e, and q empty. A generating request's prompt is 1 to n_ctx - 1 tokens;
 * its seed is left to the caller when q->seed_given is 0. */
static int srv_parse_request(const srv_limits *L, int kind, const char *body, size_t len, srv_request *q, srv_perr *e) {
    memset(q, 0, sizeof *q);
    memset(e, 0, sizeof *e);
    q->kind = kind;
    infer__json_doc doc;
    infer_error jerr;
    if (infer__json_parse(&doc, body, len, &jerr) != INFER_OK)
        return srv_bad(e, jerr.status == INFER_ERR_NOMEM ? 500 : 400, jerr.status == INFER_ERR_NOMEM ? NULL : "invalid_json", "the body is not valid JSON: %s", jerr.msg);
    const infer__json *o = doc.root;
    int ok = o->type == INFER__JSON_OBJECT ? 1 : srv_bad(e, 400, "invalid_type", "the body must be a JSON object");
    if (ok && kind == SRV_TOKENIZE) ok = srv_parse_tokenize(L, o, q, e);
    else if (ok && kind == SRV_DETOKENIZE) ok = srv_parse_detokenize(L, o, q, e);
    else if (ok) {
        ok = srv_parse_params(L, o, q, e);
        ok = ok && (kind == SRV_CHAT ? srv_parse_chat(L, o, q, e) : srv_parse_completion(L, o, q, e));
        ok = ok && srv_parse_format(o, q, e);
        ok = ok && (kind != SRV_CHAT || srv_force_tools(L, o, q, e));
        if (ok && q->n_prompt == 0) ok = srv_bad(e, 400, "invalid_value", "the prompt is empty (no tokens)");
        if (ok && q->n_prompt + 1 > L->n_ctx)
            ok = srv_bad(e, 400, "context_length_exceeded", "the prompt has %d tokens; a sequence's context is %d (-c %lld over -np %d), which must hold the prompt and one token more",
                         q->n_prompt, L->n_ctx, (long long)L->n_ctx * L->n_seq, L->n_seq);
    }
    infer__json_free(&doc);
    if (!ok) srv_request_free(q);
    return ok;
}

/* ------------------------------------------------------------------------------------------
 * >>tool calls -- a reply's function calls, in the forms chat templates ask for
 *
 *   Hermes, Qwen2.5, Qwen3:   text <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call> ...
 *   Qwen3.5, Qwen3-Coder:     <tool_call>\n<function=f>\n<parameter=p>\nvalue\n</parameter>\n</function>\n</tool_call>
 *   Mistral:                  [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]
 *   Llama 3.1 / 3.2:          the whole reply one JSON object {"name": "f", "parameters": {...}}
 *                             (or an array of them), after an optional <|python_tag|>
 * A call becomes {name, arguments as JSON text}; the text around the calls is the content.
 * A block that does not parse (bad JSON, no name) stays in the content as it was, so a
 * malformed call is never lost and never half-executed.
 * --------------------------------------------------------------------------------------- */

typedef struct { char *name, *args; } srv_tool_call;   /* args: a JSON object's text */
typedef struct {
    srv_tool_call *calls;
    int n_calls;
    srv_buf content;                                    /* the text less the calls, trimmed (n == 0: none) */
    int oom;
} srv_tools_out;

static void srv_tools_out_free(srv_tools_out *t) {
    for (int i = 0; i < t->n_calls; i++) { free(t->calls[i].name); free(t->calls[i].args); }
    free(t->calls);
    free(t->content.p);
    memset(t, 0, sizeof *t);
}

static int srv_tool_add(srv_tools_out *t, const char *name, size_t name_len, srv_buf *args) {
    srv_tool_call *c = (srv_tool_call *)realloc(t->calls, sizeof *c * (size_t)(t->n_calls + 1));
    if (!c) { t->oom = 1; return 0; }
    t->calls = c;
    c = &t->calls[t->n_calls];
    c->name = (char *)malloc(name_len + 1);
    if (!c->name || args->oom) { free(c->name); t->oom = 1; return 0; }
    memcpy(c->name, name, name_len);
    c->name[name_len] = 0;
    c->args = args->p ? args->p : strdup("{}");
    args->p = NULL;
    if (!c->args) { free(c->name); t->oom = 1; return 0; }
    t->n_calls++;
    return 1;
}

/* {"name": "f", "arguments" | "parameters": {...} or a JSON text} -> a call; 0 if it is not one */
static int srv_tool_json_call(srv_tools_out *t, const infer__json *v) {
    const infer__json *name = infer__json_get(v, "name"), *args = srv_member(v, "arguments");
    if (!args) args = srv_member(v, "parameters");
    if (v->type != INFER__JSON_OBJECT || !name || name->type != INFER__JSON_STRING || !name->len || memchr(name->str, 0, name->len)) return 0;
    if (args && args->type != INFER__JSON_OBJECT && args->type != INFER__JSON_STRING) return 0;
    srv_buf a = { 0 };
    if (!args) srv_puts(&a, "{}");
    else if (args->type == INFER__JSON_STRING) srv_put(&a, args->str, args->len);
    else srv_json_write(&a, args);
    if (!a.p) srv_puts(&a, "");
    const int ok = srv_tool_add(t, name->str, name->len, &a);
    free(a.p);
    return ok;
}

/* JSON text s[0..n): one call object, or (arrays allowed) an array of them, all or nothing */
static int srv_tool_json(srv_tools_out *t, const char *s, size_t n, int arrays) {
    infer__json_doc d;
    infer_error err;
    if (infer__json_parse(&d, s, n, &err) != INFER_OK) return 0;
    const infer__json *r = d.root;
    int ok = 0;
    const int before = t->n_calls;
    if (r->type == INFER__JSON_OBJECT) ok = srv_tool_json_call(t, r);
    else if (arrays && r->type == INFER__JSON_ARRAY && r->len > 0) {
        ok = 1;
        for (uint32_t k = 0; ok && k < r->len; k++) ok = srv_tool_json_call(t, &r->items[k]);
    }
    if (!ok)                                            /* all or nothing */
        while (t->n_calls > before) { t->n_calls--; free(t->calls[t->n_calls].name); free(t->calls[t->n_calls].args); }
    infer__json_free(&d);
    return ok;
}

/* <function=NAME>\n<parameter=P>\nVALUE\n</parameter>...</function>: a value that is JSON
 * (a number, true, an object) is kept as such, any other text becomes a JSON string */
static int srv_tool_xml(srv_tools_out *t, const char *s, size_t n) {
    static const char fo[] = "<function=", fc[] = "</function>", po[] = "<parameter=", pc[] = "</parameter>";
    srv_trim(&s, &n);
    if (n < sizeof fo - 1 || memcmp(s, fo, sizeof fo - 1)) return 0;
    const char *name = s + sizeof fo - 1, *gt = (const char *)memchr(name, '>', n - (sizeof fo - 1));
    const char *end = srv_find(s, n, fc);
    if (!gt || !end || gt > end || gt == name) return 0;
    const char *tail = end + sizeof fc - 1;             /* nothing but space after </function> */
    for (; tail < s + n; tail++) if (!srv_space(*tail)) return 0;
    srv_buf a = { 0 };
    srv_puts(&a, "{");
    int np = 0, ok = 1;
    for (const char *p = gt + 1; ok;) {
        size_t left = (size_t)(end - p);
        const char *at = srv_find(p, left, po);
        for (const char *c = p; c < (at ? at : end); c++) if (!srv_space(*c)) ok = 0;   /* stray text between parameters */
        if (!at || !ok) break;
        const char *pn = at + sizeof po - 1, *pgt = (const char *)memchr(pn, '>', (size_t)(end - pn));
        const char *pend = pgt ? srv_find(pgt, (size_t)(end - pgt), pc) : NULL;
        if (!pgt || !pend || pgt == pn) { ok = 0; break; }
        const char *val = pgt + 1;
        size_t vn = (size_t)(pend - val);
        if (vn && *val == '\n') { val++; vn--; }        /* the template's newlines around the value */
        if (vn && val[vn - 1] == '\n') vn--;
        if (np++) srv_puts(&a, ",");
        srv_json_str(&a, pn, (size_t)(pgt - pn));
        srv_puts(&a, ":");
        infer__json_doc d;
        infer_error err;
        if (vn && infer__json_parse(&d, val, vn, &err) == INFER_OK) { srv_json_write(&a, d.root); infer__json_free(&d); }
        else srv_json_str(&a, val, vn);
        p = pend + sizeof pc - 1;
    }
    srv_puts(&a, "}");
    ok = ok && memchr(name, 0, (size_t)(gt - name)) == NULL && srv_tool_add(t, name, (size_t)(gt - name), &a);
    free(a.p);
    return ok;
}

/* The calls in a reply text[0..n) into *out (content: the rest). Returns the number of
 * calls, -1 when memory ran out. */
static int srv_tool_parse(const char *text, size_t n, srv_tools_out *out) {
    static const char open[] = "<tool_call>", close[] = "</tool_call>", mistral[] = "[TOOL_CALLS]", python[] = "<|python_tag|>";
    memset(out, 0, sizeof *out);
    srv_buf rest = { 0 };
    const char *at;
    if ((at = srv_find(text, n, open))) {
        size_t pos = 0;
        while ((at = srv_find(text + pos, n - pos, open))) {
            srv_put(&rest, text + pos, (size_t)(at - text - pos));
            const char *body = at + sizeof open - 1, *cl = srv_find(body, (size_t)(text + n - body), close);
            const char *stop = cl ? cl : text + n;      /* a block the reply ended in may still be whole */
            const char *after = cl ? cl + sizeof close - 1 : text + n;
            const char *b = body;
            size_t bn = (size_t)(stop - body);
            srv_trim(&b, &bn);
            const int ok = (bn && *b == '{' && srv_tool_json(out, b, bn, 0)) || (bn && *b == '<' && srv_tool_xml(out, b, bn));
            if (!ok) srv_put(&rest, at, (size_t)(after - at));
            pos = (size_t)(after - text);
        }
        srv_put(&rest, text + pos, n - pos);
    } else if ((at = srv_find(text, n, mistral)) || (at = srv_find(text, n, python))) {
        const char *j = at + (*at == '[' ? sizeof mistral : sizeof python) - 1;
        size_t jn = (size_t)(text + n - j);
        srv_trim(&j, &jn);
        if (srv_tool_json(out, j, jn, 1)) srv_put(&rest, text, (size_t)(at - text));
        else srv_put(&rest, text, n);
    } else {
        const char *j = text;
        size_t jn = n;
        srv_trim(&j, &jn);
        if (!(jn && (*j == '{' || *j == '[') && srv_tool_json(out, j, jn, 1))) srv_put(&rest, text, n);
    }
    const char *c = rest.p ? rest.p : "";
    size_t cn = rest.n;
    srv_trim(&c, &cn);
    srv_put(&out->content, c, cn);
    if (rest.oom || out->content.oom) out->oom = 1;
    free(rest.p);
    return out->oom ? -1 : out->n_calls;
}

/* Streaming: how much of text[0..n) is surely content, whatever comes after -- the text
 * before the first call marker, or before the start of one at the end (a partial
 * "<tool_c"); none of a reply whose first non-space byte is '{' or '[' (a Llama 3.1 call
 * may be coming), nor of one that is all space so far. It never shrinks as the text grows,
 * and the calls of text[prefix..n) are those srv_tool_parse finds in the whole text.
 * `from`: the prefix of a shorter reply this one continues (0: none); no marker starts before
 * it, so the search starts there and a stream's checks cost the new text, not the whole. */
static size_t srv_tool_prefix(const char *text, size_t n, size_t from) {
    static const char *const marks[3] = { "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>" };
    size_t i = 0;
    while (i < n && srv_space(text[i])) i++;
    if (i == n) return 0;
    if (text[i] == '{' || text[i] == '[') return i;
    size_t safe = n;
    for (int k = 0; k < 3; k++) {
        const size_t lm = strlen(marks[k]);
        const char *at = from < n ? srv_find(text + from, n - from, marks[k]) : NULL;
        if (at && (size_t)(at - text) < safe) safe = (size_t)(at - text);
        for (size_t len = lm - 1 < n ? lm - 1 : n; len > 0; len--)   /* the longest tail that starts the marker */
            if (!memcmp(text + n - len, marks[k], len)) { if (n - len < safe) safe = n - len; break; }
    }
    return safe;
}
