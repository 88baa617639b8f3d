/* wip/json.h -- >>json: a small validating JSON parser (RFC 8259) for tokenizer.json,
 * tokenizer_config.json, config.json and safetensors headers. Implementation part. */


/* -----------------------------------------------------------------------------------------
 * >>json -- parse (ptr, len) into a read-only tree.
 *
 * The whole input is validated: strict grammar (no comments, trailing commas or leading
 * zeros), strings must be valid UTF-8 without raw control characters, escapes include
 * \uXXXX with surrogate pairs, nesting is bounded by INFER__JSON_MAX_DEPTH, and nothing
 * may follow the top-level value. Errors name the byte offset. No input can crash it:
 * every read is bounds-checked and recursion depth is capped.
 *
 * Tree: every value is an infer__json node. Arrays and objects hold their children in
 * one contiguous block (`items[0..len)`), so indexing is O(1); object members carry their
 * name in `key`. Strings are unescaped copies, NUL-terminated for convenience (they may
 * also contain "\u0000", so use `len`). Numbers keep the double and, when the value is an
 * integer in int64 range, the exact integer (a literal like 9007199254740993 keeps all
 * its digits in `i`). All nodes and strings live in chunks owned by the infer__json_doc.
 *
 *   infer__json_doc doc;
 *   if (infer__json_parse(&doc, text, len, err, sizeof err) == 0) {
 *       const infer__json *v = infer__json_get(doc.root, "model");
 *       ...
 *       infer__json_free(&doc);
 *   }
 * --------------------------------------------------------------------------------------- */

#include <locale.h> /* localeconv: the decimal point strtod expects */

#ifndef INFER__JSON_MAX_DEPTH
#define INFER__JSON_MAX_DEPTH 64
#endif

enum { INFER__JSON_NULL, INFER__JSON_FALSE, INFER__JSON_TRUE, INFER__JSON_NUMBER,
       INFER__JSON_STRING, INFER__JSON_ARRAY, INFER__JSON_OBJECT };

typedef struct infer__json {
    uint8_t type;     /* INFER__JSON_* */
    uint8_t is_int;   /* NUMBER: `i` holds the exact integer value */
    uint32_t len;     /* STRING: bytes (without the NUL); ARRAY/OBJECT: number of items */
    uint32_t key_len; /* object member: length of its key */
    const char *key;  /* object member: its name (NUL-terminated), else NULL */
    const char *str;  /* STRING */
    struct infer__json *items; /* ARRAY/OBJECT children */
    double num;       /* NUMBER */
    int64_t i;        /* NUMBER when is_int */
} infer__json;

typedef struct infer__json_chunk { struct infer__json_chunk *next; size_t used, cap; } infer__json_chunk;
typedef struct infer__json_doc {
    infer__json *root;
    infer__json_chunk *chunks; /* storage of all nodes and strings */
} infer__json_doc;

typedef struct infer__json_parser {
    const unsigned char *s, *p, *end;
    infer__json_doc *doc;
    infer__json *stack;  /* stb_ds: children of the arrays/objects being parsed */
    char *sbuf;          /* stb_ds: the string being unescaped */
    char *err;
    size_t errlen;
    int failed;
} infer__json_parser;

static void infer__json_free(infer__json_doc *doc) {
    infer__json_chunk *c = doc->chunks;
    while (c) {
        infer__json_chunk *next = c->next;
        INFER_FREE(c);
        c = next;
    }
    doc->chunks = NULL;
    doc->root = NULL;
}

/* 16-byte aligned storage from the document's chunks (NULL when out of memory) */
static void *infer__json_alloc(infer__json_doc *doc, size_t n) {
    infer__json_chunk *c = doc->chunks;
    const size_t head = (sizeof(infer__json_chunk) + 15) & ~(size_t)15;
    n = (n + 15) & ~(size_t)15;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ((size_t)1 << 20) ? n : ((size_t)1 << 20);
        c = (infer__json_chunk *)INFER_MALLOC(head + cap);
        if (!c) return NULL;
        c->next = doc->chunks;
        c->used = 0;
        c->cap = cap;
        doc->chunks = c;
    }
    c->used += n;
    return (char *)c + head + c->used - n;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int infer__json_fail(infer__json_parser *P, const char *fmt, ...) {
    if (!P->failed && P->err && P->errlen) {
        char msg[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(P->err, P->errlen, "json: %s at byte %zu", msg, (size_t)(P->p - P->s));
    }
    P->failed = 1;
    return -1;
}

static void infer__json_ws(infer__json_parser *P) {
    while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r')) P->p++;
}

static int infer__json_hex4(infer__json_parser *P, uint32_t *v) {
    *v = 0;
    if (P->end - P->p < 4) return infer__json_fail(P, "truncated \\u escape");
    for (int k = 0; k < 4; k++) {
        unsigned char c = *P->p++;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) { P->p--; return infer__json_fail(P, "bad hex digit in \\u escape"); }
        *v = *v * 16 + (uint32_t)d;
    }
    return 0;
}

static void infer__json_put_utf8(infer__json_parser *P, uint32_t cp) {
    if (cp < 0x80) { arrput(P->sbuf, (char)cp); return; }
    if (cp < 0x800) { arrput(P->sbuf, (char)(0xC0 | (cp >> 6))); }
    else {
        if (cp < 0x10000) arrput(P->sbuf, (char)(0xE0 | (cp >> 12)));
        else { arrput(P->sbuf, (char)(0xF0 | (cp >> 18))); arrput(P->sbuf, (char)(0x80 | ((cp >> 12) & 0x3F))); }
        arrput(P->sbuf, (char)(0x80 | ((cp >> 6) & 0x3F)));
    }
    arrput(P->sbuf, (char)(0x80 | (cp & 0x3F)));
}

/* one escape after '\'; the decoded bytes go to sbuf */
static int infer__json_escape(infer__json_parser *P) {
    uint32_t cp, lo;
    if (P->p >= P->end) return infer__json_fail(P, "truncated escape");
    switch (*P->p++) {
    case '"': arrput(P->sbuf, '"'); return 0;
    case '\\': arrput(P->sbuf, '\\'); return 0;
    case '/': arrput(P->sbuf, '/'); return 0;
    case 'b': arrput(P->sbuf, '\b'); return 0;
    case 'f': arrput(P->sbuf, '\f'); return 0;
    case 'n': arrput(P->sbuf, '\n'); return 0;
    case 'r': arrput(P->sbuf, '\r'); return 0;
    case 't': arrput(P->sbuf, '\t'); return 0;
    case 'u':
        if (infer__json_hex4(P, &cp) < 0) return -1;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return infer__json_fail(P, "unpaired low surrogate");
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* UTF-16 pair: \uD83D\uDE00 -> U+1F600 */
            if (P->end - P->p < 2 || P->p[0] != '\\' || P->p[1] != 'u') return infer__json_fail(P, "unpaired high surrogate");
            P->p += 2;
            if (infer__json_hex4(P, &lo) < 0) return -1;
            if (lo < 0xDC00 || lo > 0xDFFF) return infer__json_fail(P, "bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        infer__json_put_utf8(P, cp);
        return 0;
    default:
        P->p--;
        return infer__json_fail(P, "bad escape");
    }
}

/* strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF */
static int infer__json_utf8(infer__json_parser *P) {
    const unsigned char *s = P->p;
    size_t n = (size_t)(P->end - s), len;
    uint32_t cp, min;
    if (s[0] < 0xC2 || s[0] > 0xF4) return infer__json_fail(P, "invalid UTF-8");
    len = s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4;
    min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (n < len) return infer__json_fail(P, "truncated UTF-8");
    cp = s[0] & (0x7F >> len);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return infer__json_fail(P, "invalid UTF-8");
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return infer__json_fail(P, "invalid UTF-8");
    for (size_t k = 0; k < len; k++) arrput(P->sbuf, (char)s[k]);
    P->p += len;
    return 0;
}

/* a string starting at '"'; on success *out is a NUL-terminated copy in the document */
static int infer__json_string(infer__json_parser *P, const char **out, uint32_t *len) {
    char *copy;
    arrsetlen(P->sbuf, 0);
    P->p++; /* '"' */
    for (;;) {
        if (P->p >= P->end) return infer__json_fail(P, "unterminated string");
        unsigned char c = *P->p;
        if (c == '"') { P->p++; break; }
        if (c < 0x20) return infer__json_fail(P, "control character in string");
        if (c == '\\') { P->p++; if (infer__json_escape(P) < 0) return -1; }
        else if (c >= 0x80) { if (infer__json_utf8(P) < 0) return -1; }
        else { arrput(P->sbuf, (char)c); P->p++; }
    }
    if (arrlenu(P->sbuf) >= 0xFFFFFFFFu) return infer__json_fail(P, "string too long");
    copy = (char *)infer__json_alloc(P->doc, arrlenu(P->sbuf) + 1);
    if (!copy) return infer__json_fail(P, "out of memory");
    if (arrlen(P->sbuf)) memcpy(copy, P->sbuf, arrlenu(P->sbuf));
    copy[arrlen(P->sbuf)] = '\0';
    *out = copy;
    *len = (uint32_t)arrlenu(P->sbuf);
    return 0;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int infer__json_number(infer__json_parser *P, infer__json *v) {
    const unsigned char *start = P->p;
    int neg = 0, integral = 1, overflow = 0;
    uint64_t mag = 0;
    char small[64], *buf = small, *dot;
    size_t n;
    if (P->p < P->end && *P->p == '-') { neg = 1; P->p++; }
    if (P->p >= P->end || *P->p < '0' || *P->p > '9') return infer__json_fail(P, "bad number");
    if (*P->p == '0' && P->end - P->p > 1 && P->p[1] >= '0' && P->p[1] <= '9') return infer__json_fail(P, "leading zero");
    while (P->p < P->end && *P->p >= '0' && *P->p <= '9') {
        unsigned d = (unsigned)(*P->p++ - '0');
        if (mag > (UINT64_MAX - d) / 10) overflow = 1; else mag = mag * 10 + d;
    }
    if (P->p < P->end && *P->p == '.') {
        integral = 0;
        P->p++;
        if (P->p >= P->end || *P->p < '0' || *P->p > '9') return infer__json_fail(P, "bad fraction");
        while (P->p < P->end && *P->p >= '0' && *P->p <= '9') P->p++;
    }
    if (P->p < P->end && (*P->p == 'e' || *P->p == 'E')) {
        integral = 0;
        P->p++;
        if (P->p < P->end && (*P->p == '+' || *P->p == '-')) P->p++;
        if (P->p >= P->end || *P->p < '0' || *P->p > '9') return infer__json_fail(P, "bad exponent");
        while (P->p < P->end && *P->p >= '0' && *P->p <= '9') P->p++;
    }
    /* strtod wants a NUL-terminated string and reads the locale's decimal point */
    n = (size_t)(P->p - start);
    if (n >= sizeof small && !(buf = (char *)INFER_MALLOC(n + 1))) return infer__json_fail(P, "out of memory");
    memcpy(buf, start, n);
    buf[n] = '\0';
    if ((dot = strchr(buf, '.')) != NULL) *dot = localeconv()->decimal_point[0];
    v->type = INFER__JSON_NUMBER;
    v->num = strtod(buf, NULL);
    if (buf != small) INFER_FREE(buf);
    if (integral && !overflow && mag <= (uint64_t)INT64_MAX + (uint64_t)neg) {
        v->is_int = 1;
        v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    } else if (v->num == floor(v->num) && fabs(v->num) < 9.2e18) {
        v->is_int = 1;
        v->i = (int64_t)v->num;
    }
    return 0;
}

static int infer__json_value(infer__json_parser *P, infer__json *v, int depth);

/* array or object; P->p is at '[' or '{' */
static int infer__json_container(infer__json_parser *P, infer__json *v, int depth) {
    int is_obj = *P->p == '{';
    unsigned char close = is_obj ? '}' : ']';
    size_t base = arrlenu(P->stack), n;
    if (depth >= INFER__JSON_MAX_DEPTH) return infer__json_fail(P, "nesting deeper than %d", INFER__JSON_MAX_DEPTH);
    P->p++;
    infer__json_ws(P);
    if (P->p < P->end && *P->p == close) P->p++;
    else for (;;) {
        infer__json item;
        memset(&item, 0, sizeof item);
        infer__json_ws(P);
        if (is_obj) {
            if (P->p >= P->end || *P->p != '"') return infer__json_fail(P, "expected a member name");
            if (infer__json_string(P, &item.key, &item.key_len) < 0) return -1;
            infer__json_ws(P);
            if (P->p >= P->end || *P->p != ':') return infer__json_fail(P, "expected ':'");
            P->p++;
        }
        if (infer__json_value(P, &item, depth + 1) < 0) return -1;
        arrput(P->stack, item);
        infer__json_ws(P);
        if (P->p < P->end && *P->p == ',') { P->p++; continue; }
        if (P->p < P->end && *P->p == close) { P->p++; break; }
        return infer__json_fail(P, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    n = arrlenu(P->stack) - base;
    if (n >= 0xFFFFFFFFu) return infer__json_fail(P, "too many items");
    v->type = (uint8_t)(is_obj ? INFER__JSON_OBJECT : INFER__JSON_ARRAY);
    v->len = (uint32_t)n;
    v->items = NULL;
    if (n) {
        v->items = (infer__json *)infer__json_alloc(P->doc, n * sizeof(infer__json));
        if (!v->items) return infer__json_fail(P, "out of memory");
        memcpy(v->items, P->stack + base, n * sizeof(infer__json));
    }
    arrsetlen(P->stack, base);
    return 0;
}

static int infer__json_literal(infer__json_parser *P, const char *word, int type, infer__json *v) {
    size_t n = strlen(word);
    if ((size_t)(P->end - P->p) < n || memcmp(P->p, word, n) != 0) return infer__json_fail(P, "unexpected character");
    P->p += n;
    v->type = (uint8_t)type;
    return 0;
}

/* fills v's value fields (its key, if any, is set by the caller) */
static int infer__json_value(infer__json_parser *P, infer__json *v, int depth) {
    infer__json_ws(P);
    if (P->p >= P->end) return infer__json_fail(P, "unexpected end of input");
    switch (*P->p) {
    case '{': case '[': return infer__json_container(P, v, depth);
    case '"': v->type = INFER__JSON_STRING; return infer__json_string(P, &v->str, &v->len);
    case 't': return infer__json_literal(P, "true", INFER__JSON_TRUE, v);
    case 'f': return infer__json_literal(P, "false", INFER__JSON_FALSE, v);
    case 'n': return infer__json_literal(P, "null", INFER__JSON_NULL, v);
    default:
        if (*P->p != '-' && (*P->p < '0' || *P->p > '9')) return infer__json_fail(P, "unexpected character");
        return infer__json_number(P, v);
    }
}

/* Parses text[0..len). Returns 0 and fills doc, or -1 with "json: <what> at byte <n>" in
 * err (doc is then empty). Free with infer__json_free(). */
static int infer__json_parse(infer__json_doc *doc, const char *text, size_t len, char *err, size_t errlen) {
    infer__json_parser P;
    infer__json *root;
    memset(doc, 0, sizeof *doc);
    memset(&P, 0, sizeof P);
    P.s = P.p = (const unsigned char *)(text ? text : "");
    P.end = P.s + (text ? len : 0);
    P.doc = doc;
    P.err = err;
    P.errlen = errlen;
    root = (infer__json *)infer__json_alloc(doc, sizeof *root);
    if (!root) return infer__json_fail(&P, "out of memory");
    memset(root, 0, sizeof *root);
    if (infer__json_value(&P, root, 0) == 0) {
        infer__json_ws(&P);
        if (P.p != P.end) infer__json_fail(&P, "trailing characters after the value");
    }
    arrfree(P.stack);
    arrfree(P.sbuf);
    if (P.failed) { infer__json_free(doc); return -1; }
    doc->root = root;
    return 0;
}

/* ---- lookups: all accept NULL and wrong types and then answer NULL / -1 ---- */

/* first member of object `obj` named `key` */
static const infer__json *infer__json_get(const infer__json *obj, const char *key) {
    size_t n = strlen(key);
    if (!obj || obj->type != INFER__JSON_OBJECT) return NULL;
    for (uint32_t i = 0; i < obj->len; i++)
        if (obj->items[i].key_len == n && memcmp(obj->items[i].key, key, n) == 0) return &obj->items[i];
    return NULL;
}

static const infer__json *infer__json_at(const infer__json *arr, size_t i) {
    if (!arr || arr->type != INFER__JSON_ARRAY || i >= arr->len) return NULL;
    return &arr->items[i];
}

static const char *infer__json_str(const infer__json *v) {
    return v && v->type == INFER__JSON_STRING ? v->str : NULL;
}

static int infer__json_int(const infer__json *v, int64_t *out) {
    if (!v || v->type != INFER__JSON_NUMBER || !v->is_int) return -1;
    *out = v->i;
    return 0;
}

static int infer__json_num(const infer__json *v, double *out) {
    if (!v || v->type != INFER__JSON_NUMBER) return -1;
    *out = v->num;
    return 0;
}

static int infer__json_bool(const infer__json *v, int *out) {
    if (!v || (v->type != INFER__JSON_TRUE && v->type != INFER__JSON_FALSE)) return -1;
    *out = v->type == INFER__JSON_TRUE;
    return 0;
}

