/* Unicode tables (generated; in >>tables at the end of the file) */
#define INFER__UC_VERSION "14.0.0"
static const uint32_t infer__uc_cat[2213];
static const uint32_t infer__uc_space[25];
static const int32_t infer__uc_lower[182][4];
static const uint32_t infer__uc_nfd[1827][3];

/* =========================================================================================
 * IMPLEMENTATION PART
 * ========================================================================================= */

/* -----------------------------------------------------------------------------------------
 * >>tokenizer -- text <-> token ids, the way llama.cpp does it for GGUF vocabularies.
 *
 * Tokenizing runs in three stages:
 *   1. Special-token partitioning. The text is cut at every occurrence of a control,
 *      user-defined or unknown token's text (longest tokens first); those pieces become
 *      their ids directly. Without `parse_special` only user-defined tokens are cut out
 *      (HF does the same: added tokens that are not "special" are always matched).
 *   2. Each remaining raw fragment goes through the model's own algorithm:
 *        SPM  ' ' -> U+2581 "▁" (plus one leading ' ' on the first fragment and after a
 *             special token), then merge adjacent symbols, highest token score first.
 *        BPE  split into pre-tokens with the regexes of the `pre` type, map every byte to
 *             a printable code point (bytes_to_unicode), then merge adjacent symbols,
 *             lowest merge rank first, inside each pre-token.
 *        WPM  lower-case, strip accents, split at spaces and punctuation, then greedy
 *             longest match per word ("▁" marks a word start; continuations have none).
 *   3. BOS/EOS (WPM: CLS/SEP) around the result when `add_special` asks for them.
 *
 * Decoding maps each id back to the bytes it stands for (the "piece"): "▁" -> ' ',
 * "<0xXX>" -> the byte, byte-level BPE code points -> their bytes. Pieces are computed
 * once at load. A piece can end inside a UTF-8 sequence (byte fallback splits characters),
 * so the streaming detokenizer holds such bytes back until the sequence is complete.
 *
 * Both merge loops share one shape: a doubly linked list of symbols (byte ranges of one
 * buffer, so two neighbours are always one contiguous range) and a max-heap of candidate
 * pairs. A popped pair is stale when either symbol changed since it was pushed; the sum
 * of the two lengths detects that, because a symbol only ever grows by absorbing its
 * right neighbour.
 * --------------------------------------------------------------------------------------- */

#include <limits.h> /* INT_MAX */

/* The description of a vocabulary that infer__tok_init() reads; nothing in it is kept,
 * everything needed is copied, so the source (an mmapped GGUF, a parsed JSON) may go away.
 *
 * From GGUF metadata (absent key -> NULL / 0 / -1 as noted):
 *   model            tokenizer.ggml.model, NUL-terminated copy  NULL if absent -> no vocabulary
 *   pre              tokenizer.ggml.pre, NUL-terminated copy    NULL if absent -> "default"
 *   n_vocab, tokens, token_lens   tokenizer.ggml.tokens (string array: pointers to the bytes
 *                    of each string inside the file, and their u64 lengths)
 *   scores           tokenizer.ggml.scores (f32 array data, as is), NULL if absent
 *                    (llama.cpp also accepts an i32 array: convert that to float first)
 *   types            tokenizer.ggml.token_type (i32 array data, as is), NULL if absent
 *   n_merges, merges, merge_lens  tokenizer.ggml.merges (string array), 0/NULL if absent
 *   bos eos eot eom unk pad sep cls mask   tokenizer.ggml.{bos,eos,eot,eom,unknown,padding,
 *                    seperator (sic),cls,mask}_token_id (u32), -1 if absent
 *   add_bos add_eos add_space_prefix       tokenizer.ggml.{add_bos_token,add_eos_token,
 *                    add_space_prefix} (bool -> 0/1), -1 if absent
 * Array lengths must agree with n_vocab (scores/types) and n_merges; the caller checks
 * that against the GGUF array counts. */
typedef struct infer__tok_src {
    const char *model;          /* tokenizer.ggml.model: "llama", "gpt2", "bert", "none" or NULL */
    const char *pre;            /* tokenizer.ggml.pre, or NULL */
    int32_t n_vocab;
    const char *const *tokens;  /* [n_vocab] texts, NOT NUL-terminated */
    const uint64_t *token_lens; /* [n_vocab] */
    const float *scores;        /* [n_vocab] or NULL; need not be aligned (GGUF arrays are not) */
    const int32_t *types;       /* [n_vocab] or NULL, need not be aligned: 1 normal 2 unknown
                                   3 control 4 user-defined 5 unused 6 byte (others: undefined) */
    int32_t n_merges;
    const char *const *merges;  /* "left right" pairs, rank = index */
    const uint64_t *merge_lens;
    int32_t bos, eos, eot, eom, unk, pad, sep, cls, mask; /* -1 = key absent */
    int add_bos, add_eos, add_space_prefix;               /* -1 = key absent (use the model's default) */
} infer__tok_src;

#define INFER__TOK_MAX_LEN (1u << 20) /* longest token or merge text accepted, bytes */

/* token attributes (llama.cpp's llama_token_attr, as far as used here) */
enum {
    INFER__TOK_NORMAL = 1, INFER__TOK_UNKNOWN = 2, INFER__TOK_CONTROL = 4,
    INFER__TOK_USER = 8, INFER__TOK_UNUSED = 16, INFER__TOK_BYTE = 32,
    INFER__TOK_EOG = 64 /* ends generation */
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int infer__tok_fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- Unicode: categories, white space, lower case, NFD base, UTF-8 ---- */

/* Major general categories, the values stored in infer__uc_cat (see tools/gen_unicode.py). */
enum { INFER__UC_C, INFER__UC_L, INFER__UC_M, INFER__UC_N, INFER__UC_P, INFER__UC_S, INFER__UC_Z };

static int infer__uc_category(uint32_t cp) {
    /* last entry whose first code point (value >> 3) is <= cp */
    size_t lo = 0, hi = sizeof infer__uc_cat / sizeof infer__uc_cat[0];
    if (cp > 0x10FFFF) return INFER__UC_C;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((infer__uc_cat[mid] >> 3) <= cp) lo = mid; else hi = mid;
    }
    return (int)(infer__uc_cat[lo] & 7);
}

static int infer__uc_is_space(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
    for (size_t i = 0; i < sizeof infer__uc_space / sizeof infer__uc_space[0]; i++)
        if (infer__uc_space[i] == cp) return 1;
    return 0;
}

static uint32_t infer__uc_tolower(uint32_t cp) {
    size_t lo = 0, hi = sizeof infer__uc_lower / sizeof infer__uc_lower[0];
    while (lo < hi) { /* first run with last >= cp */
        size_t mid = (lo + hi) / 2;
        if ((uint32_t)infer__uc_lower[mid][1] < cp) lo = mid + 1; else hi = mid;
    }
    if (lo < sizeof infer__uc_lower / sizeof infer__uc_lower[0]) {
        const int32_t *r = infer__uc_lower[lo];
        if (cp >= (uint32_t)r[0] && (cp - (uint32_t)r[0]) % (uint32_t)r[3] == 0)
            return (uint32_t)((int32_t)cp + r[2]);
    }
    return cp;
}

static uint32_t infer__uc_nfd_base(uint32_t cp) {
    size_t lo = 0, hi = sizeof infer__uc_nfd / sizeof infer__uc_nfd[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (infer__uc_nfd[mid][1] < cp) lo = mid + 1; else hi = mid;
    }
    if (lo < sizeof infer__uc_nfd / sizeof infer__uc_nfd[0] && cp >= infer__uc_nfd[lo][0])
        return infer__uc_nfd[lo][2];
    return cp;
}

/* Length of the UTF-8 sequence a lead byte announces; continuation bytes count as 1. */
static int infer__utf8_len(unsigned char c) {
    static const unsigned char len[16] = { 1,1,1,1,1,1,1,1, 1,1,1,1, 2,2, 3, 4 };
    return len[c >> 4];
}

/* Decodes one code point from s[0..n), n >= 1. A malformed sequence decodes as U+FFFD and
 * consumes one byte (what llama.cpp does). Returns the bytes consumed. */
static int infer__utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    int len = infer__utf8_len(s[0]);
    uint32_t c;
    if (s[0] < 0x80) { *cp = s[0]; return 1; }
    if (s[0] < 0xC0 || s[0] >= 0xF8 || (size_t)len > n) goto bad;
    c = s[0] & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) goto bad;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c > 0x10FFFF) goto bad;
    *cp = c;
    return len;
bad:
    *cp = 0xFFFD;
    return 1;
}

static int infer__utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- GPT-2 bytes_to_unicode ----
 * Every byte becomes a printable code point so that BPE works on visible text:
 * 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to themselves; the other 68 bytes (0x00-0x20,
 * 0x7F-0xA0, 0xAD) map to U+0100.. in increasing byte order (' ' -> U+0120 'Ġ'). */
static int infer__byte_is_printable(unsigned b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
}

static uint32_t infer__byte_to_cp(unsigned b) {
    if (infer__byte_is_printable(b)) return b;
    if (b <= 0x20) return 0x100 + b;             /* 0x00-0x20 -> 0..32 */
    if (b <= 0xA0) return 0x100 + 33 + (b - 0x7F); /* 0x7F-0xA0 -> 33..66 */
    return 0x100 + 67;                           /* 0xAD */
}

/* inverse of infer__byte_to_cp; -1 for code points that are no byte */
static int infer__cp_to_byte(uint32_t cp) {
    if (cp < 0x100) return infer__byte_is_printable(cp) ? (int)cp : -1;
    if (cp <= 0x100 + 32) return (int)(cp - 0x100);
    if (cp <= 0x100 + 66) return (int)(cp - 0x100 - 33 + 0x7F);
    if (cp == 0x100 + 67) return 0xAD;
    return -1;
}

/* ---- the byte-string hash table ---- */

static uint32_t infer__tok_hash(const char *s, size_t n, int32_t aux) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 16777619u; }
    h ^= (uint32_t)aux * 0x9E3779B1u;
    return h ^ (h >> 15);
}

static int infer__map_alloc(infer__tok_map *m, size_t n) {
    uint32_t cap = 16;
    while (cap < 2 * n) {
        if (cap >= 0x40000000u) return -1;
        cap *= 2;
    }
    m->slots = (infer__tok_slot *)INFER_MALLOC(cap * sizeof *m->slots);
    if (!m->slots) return -1;
    for (uint32_t i = 0; i < cap; i++) m->slots[i].value = -1;
    m->mask = cap - 1;
    m->count = 0;
    return 0;
}

static int32_t infer__map_get(const infer__tok_map *m, const char *arena, const char *s, size_t n, int32_t aux) {
    if (!m->slots) return -1;
    uint32_t h = infer__tok_hash(s, n, aux);
    for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
        const infer__tok_slot *e = &m->slots[i];
        if (e->value < 0) return -1;
        if (e->hash == h && e->len == n && e->aux == aux && memcmp(arena + e->off, s, n) == 0)
            return e->value;
    }
}

/* Inserts arena[off, off+len) -> value unless the key is there; returns the value stored. */
static int32_t infer__map_put(infer__tok_map *m, const char *arena, uint32_t off, uint32_t len, int32_t aux, int32_t value) {
    uint32_t h = infer__tok_hash(arena + off, len, aux);
    for (uint32_t i = h & m->mask;; i = (i + 1) & m->mask) {
        infer__tok_slot *e = &m->slots[i];
        if (e->value < 0) {
            e->hash = h; e->off = off; e->len = len; e->aux = aux; e->value = value;
            m->count++;
            return value;
        }
        if (e->hash == h && e->len == len && e->aux == aux && memcmp(arena + e->off, arena + off, len) == 0)
            return e->value;
    }
}

static int32_t infer__tok_find(const infer_tokenizer *t, const char *s, size_t n) {
    return infer__map_get(&t->vocab, t->arena, s, n, 0);
}

static const char *infer__tok_text(const infer_tokenizer *t, int32_t id, uint32_t *len) {
    *len = t->text_off[id + 1] - t->text_off[id];
    return t->arena + t->text_off[id];
}

/* -----------------------------------------------------------------------------------------
 * A small backtracking regex matcher for the pre-tokenizer patterns.
 *
 * Supported: literals, `.`, classes `[...]`/`[^...]` with ranges, `\s \S \d \r \n \t`,
 * `\p{L} \p{M} \p{N} \p{P} \p{S} \p{Z} \p{C}` (major Unicode categories), groups `(...)`
 * and `(?:...)`, lookahead `(?=...)` `(?!...)`, `|`, greedy `? * + {n} {n,} {n,m}`, `$`.
 * Semantics are ECMAScript's (what std::regex gives llama.cpp): alternatives are tried
 * left to right and the first match wins, quantifiers are greedy and backtrack.
 *
 * The pattern compiles to a program for a backtracking VM (Pike, Cox "Regular Expression
 * Matching: the Virtual Machine Approach"): CLASS consumes one code point, SPLIT x,y tries
 * x first and remembers y, JMP, EOS asserts the end, LOOK runs a sub-program at the
 * current position. Backtracking uses an explicit stack, never the C stack, so long inputs
 * cannot overflow it. The patterns used here are linear in practice except `\s+$` on long
 * space runs, which is quadratic in the run length.
 * --------------------------------------------------------------------------------------- */

enum { INFER__RX_CLASS, INFER__RX_SPLIT, INFER__RX_JMP, INFER__RX_EOS, INFER__RX_NLOOK, INFER__RX_PLOOK, INFER__RX_MATCH };
#define INFER__RX_SPACE 0x80u /* class bit for \s; bits 0..6 are the categories */

typedef struct infer__rx_inst { uint8_t op; int32_t x, y; } infer__rx_inst;
typedef struct infer__rx_class { uint8_t neg, cats; int32_t first, count; } infer__rx_class;
typedef struct infer__regex {
    infer__rx_inst *prog;   /* stb_ds array */
    infer__rx_class *cls;   /* stb_ds array */
    uint32_t *ranges;       /* stb_ds array of lo,hi pairs, indexed by the classes */
} infer__regex;

/* parse tree, only alive while compiling */
enum { INFER__RXN_CLASS, INFER__RXN_SEQ, INFER__RXN_ALT, INFER__RXN_REP, INFER__RXN_EOS,
       INFER__RXN_NLOOK, INFER__RXN_PLOOK, INFER__RXN_EMPTY };
typedef struct infer__rx_node { uint8_t type; int32_t a, b, min, max; } infer__rx_node;
typedef struct infer__rx_parser {
    const unsigned char *p, *end;
    infer__regex *re;
    infer__rx_node *nodes;  /* stb_ds array */
    const char *err;
    int depth;
} infer__rx_parser;

static void infer__regex_free(infer__regex *re) {
    if (!re) return;
    arrfree(re->prog);
    arrfree(re->cls);
    arrfree(re->ranges);
    INFER_FREE(re);
}

static int32_t infer__rx_node_new(infer__rx_parser *P, int type, int32_t a, int32_t b) {
    infer__rx_node n;
    n.type = (uint8_t)type; n.a = a; n.b = b; n.min = n.max = 0;
    arrput(P->nodes, n);
    return (int32_t)arrlen(P->nodes) - 1;
}

static int32_t infer__rx_class_new(infer__rx_parser *P, int neg) {
    infer__rx_class c;
    c.neg = (uint8_t)neg; c.cats = 0; c.first = (int32_t)(arrlen(P->re->ranges) / 2); c.count = 0;
    arrput(P->re->cls, c);
    return (int32_t)arrlen(P->re->cls) - 1;
}

static void infer__rx_class_range(infer__rx_parser *P, int32_t cls, uint32_t lo, uint32_t hi) {
    arrput(P->re->ranges, lo);
    arrput(P->re->ranges, hi);
    P->re->cls[cls].count++;
}

static uint32_t infer__rx_next_cp(infer__rx_parser *P) {
    uint32_t cp;
    P->p += infer__utf8_decode(P->p, (size_t)(P->end - P->p), &cp);
    return cp;
}

/* One escape after '\'. Either a set (*cats != 0, *neg for \S), a range (\d: '0'..'9' in
 * *lo, *hi) or a literal (*lo == *hi). Returns -1 on an unsupported escape. */
static int infer__rx_escape(infer__rx_parser *P, uint8_t *cats, int *neg, uint32_t *lo, uint32_t *hi) {
    static const char cat_names[] = "CLMNPSZ"; /* order of INFER__UC_* */
    uint32_t c;
    *cats = 0; *neg = 0;
    if (P->p >= P->end) { P->err = "pattern ends after '\\'"; return -1; }
    c = infer__rx_next_cp(P);
    switch (c) {
    case 's': *cats = INFER__RX_SPACE; return 0;
    case 'S': *cats = INFER__RX_SPACE; *neg = 1; return 0;
    case 'd': *lo = '0'; *hi = '9'; return 0;
    case 'r': *lo = *hi = '\r'; return 0;
    case 'n': *lo = *hi = '\n'; return 0;
    case 't': *lo = *hi = '\t'; return 0;
    case 'f': *lo = *hi = '\f'; return 0;
    case 'v': *lo = *hi = '\v'; return 0;
    case 'p':
        if (P->end - P->p >= 3 && P->p[0] == '{' && P->p[2] == '}' && P->p[1] && strchr(cat_names, P->p[1])) {
            *cats = (uint8_t)(1u << (strchr(cat_names, P->p[1]) - cat_names));
            P->p += 3;
            return 0;
        }
        P->err = "unsupported \\p{...} (only L M N P S Z C)";
        return -1;
    default:
        if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            *lo = *hi = c; /* escaped punctuation */
            return 0;
        }
        P->err = "unsupported escape";
        return -1;
    }
}

/* '[' already consumed */
static int32_t infer__rx_parse_class(infer__rx_parser *P) {
    int neg = P->p < P->end && *P->p == '^';
    if (neg) P->p++;
    int32_t cls = infer__rx_class_new(P, neg);
    int first = 1;
    while (P->p < P->end && (*P->p != ']' || first)) {
        uint32_t lo, hi;
        first = 0;
        if (*P->p == '\\') {
            uint8_t cats; int eneg;
            P->p++;
            if (infer__rx_escape(P, &cats, &eneg, &lo, &hi) < 0) return -1;
            if (cats) {
                if (eneg) { P->err = "\\S inside [...] is not supported"; return -1; }
                P->re->cls[cls].cats |= cats;
                continue;
            }
        } else {
            lo = hi = infer__rx_next_cp(P);
        }
        if (lo == hi && P->end - P->p >= 2 && P->p[0] == '-' && P->p[1] != ']') {
            P->p++;
            if (*P->p == '\\') {
                uint8_t cats; int eneg;
                P->p++;
                if (infer__rx_escape(P, &cats, &eneg, &hi, &hi) < 0) return -1;
                if (cats) { P->err = "class range ends in a set"; return -1; }
            } else {
                hi = infer__rx_next_cp(P);
            }
            if (hi < lo) { P->err = "class range out of order"; return -1; }
        }
        infer__rx_class_range(P, cls, lo, hi);
    }
    if (P->p >= P->end) { P->err = "missing ']'"; return -1; }
    P->p++;
    return infer__rx_node_new(P, INFER__RXN_CLASS, cls, 0);
}

static int32_t infer__rx_parse_alt(infer__rx_parser *P);

static int32_t infer__rx_parse_atom(infer__rx_parser *P) {
    unsigned char c = *P->p;
    if (c == '(') {
        int type = INFER__RXN_SEQ; /* a plain group: no captures are needed */
        P->p++;
        if (P->end - P->p >= 2 && P->p[0] == '?') {
            if (P->p[1] == ':') type = INFER__RXN_SEQ;
            else if (P->p[1] == '!') type = INFER__RXN_NLOOK;
            else if (P->p[1] == '=') type = INFER__RXN_PLOOK;
            else { P->err = "unsupported group"; return -1; }
            P->p += 2;
        }
        if (++P->depth > 32) { P->err = "groups nested too deeply"; return -1; }
        int32_t a = infer__rx_parse_alt(P);
        P->depth--;
        if (a < 0) return -1;
        if (P->p >= P->end || *P->p != ')') { P->err = "missing ')'"; return -1; }
        P->p++;
        return type == INFER__RXN_SEQ ? a : infer__rx_node_new(P, type, a, 0);
    }
    if (c == '[') { P->p++; return infer__rx_parse_class(P); }
    if (c == '$') { P->p++; return infer__rx_node_new(P, INFER__RXN_EOS, 0, 0); }
    if (c == '.') { /* any code point but a line end */
        P->p++;
        int32_t cls = infer__rx_class_new(P, 1);
        infer__rx_class_range(P, cls, '\n', '\n');
        infer__rx_class_range(P, cls, '\r', '\r');
        return infer__rx_node_new(P, INFER__RXN_CLASS, cls, 0);
    }
    if (c == '^' || c == '*' || c == '+' || c == '?' || c == '{' || c == ')' || c == '|') {
        P->err = "unexpected metacharacter";
        return -1;
    }
    uint32_t lo, hi;
    uint8_t cats = 0;
    int neg = 0;
    if (c == '\\') {
        P->p++;
        if (infer__rx_escape(P, &cats, &neg, &lo, &hi) < 0) return -1;
    } else {
        lo = hi = infer__rx_next_cp(P);
    }
    int32_t cls = infer__rx_class_new(P, neg);
    if (cats) P->re->cls[cls].cats = cats;
    else infer__rx_class_range(P, cls, lo, hi);
    return infer__rx_node_new(P, INFER__RXN_CLASS, cls, 0);
}

static int infer__rx_parse_int(infer__rx_parser *P, int32_t *v) {
    if (P->p >= P->end || *P->p < '0' || *P->p > '9') return -1;
    *v = 0;
    while (P->p < P->end && *P->p >= '0' && *P->p <= '9') {
        *v = *v * 10 + (*P->p++ - '0');
        if (*v > 1000) return -1;
    }
    return 0;
}

static int32_t infer__rx_parse_quant(infer__rx_parser *P) {
    int32_t a = infer__rx_parse_atom(P), min, max;
    if (a < 0 || P->p >= P->end) return a;
    switch (*P->p) {
    case '?': min = 0; max = 1; break;
    case '*': min = 0; max = -1; break;
    case '+': min = 1; max = -1; break;
    case '{':
        P->p++;
        if (infer__rx_parse_int(P, &min) < 0) { P->err = "bad {n,m}"; return -1; }
        max = min;
        if (P->p < P->end && *P->p == ',') {
            P->p++;
            max = -1;
            if (P->p < P->end && *P->p != '}' && (infer__rx_parse_int(P, &max) < 0 || max < min)) {
                P->err = "bad {n,m}";
                return -1;
            }
        }
        if (P->p >= P->end || *P->p != '}') { P->err = "bad {n,m}"; return -1; }
        break;
    default: return a;
    }
    P->p++;
    if (P->p < P->end && (*P->p == '?' || *P->p == '+' || *P->p == '*' || *P->p == '{')) {
        P->err = "lazy, possessive or repeated quantifiers are not supported";
        return -1;
    }
    int32_t n = infer__rx_node_new(P, INFER__RXN_REP, a, 0);
    P->nodes[n].min = min;
    P->nodes[n].max = max;
    return n;
}

static int32_t infer__rx_parse_seq(infer__rx_parser *P) {
    int32_t n = -1;
    while (P->p < P->end && *P->p != '|' && *P->p != ')') {
        int32_t a = infer__rx_parse_quant(P);
        if (a < 0) return -1;
        n = n < 0 ? a : infer__rx_node_new(P, INFER__RXN_SEQ, n, a);
    }
    return n < 0 ? infer__rx_node_new(P, INFER__RXN_EMPTY, 0, 0) : n;
}

static int32_t infer__rx_parse_alt(infer__rx_parser *P) {
    int32_t n = infer__rx_parse_seq(P);
    while (n >= 0 && P->p < P->end && *P->p == '|') {
        P->p++;
        int32_t b = infer__rx_parse_seq(P);
        n = b < 0 ? -1 : infer__rx_node_new(P, INFER__RXN_ALT, n, b);
    }
    return n;
}

/* can the node match the empty string? (a `*` over such a node would loop forever) */
static int infer__rx_nullable(const infer__rx_node *nodes, int32_t i) {
    const infer__rx_node *n = &nodes[i];
    switch (n->type) {
    case INFER__RXN_CLASS: return 0;
    case INFER__RXN_SEQ: return infer__rx_nullable(nodes, n->a) && infer__rx_nullable(nodes, n->b);
    case INFER__RXN_ALT: return infer__rx_nullable(nodes, n->a) || infer__rx_nullable(nodes, n->b);
    case INFER__RXN_REP: return n->min == 0 || infer__rx_nullable(nodes, n->a);
    default: return 1;
    }
}

static int32_t infer__rx_emit_inst(infer__regex *re, int op, int32_t x, int32_t y) {
    infer__rx_inst in;
    in.op = (uint8_t)op; in.x = x; in.y = y;
    arrput(re->prog, in);
    return (int32_t)arrlen(re->prog) - 1;
}

static int infer__rx_emit(infer__regex *re, const infer__rx_node *nodes, int32_t i) {
    const infer__rx_node *n = &nodes[i];
    int32_t pc, here;
    if (arrlen(re->prog) > 20000) return -1;
    switch (n->type) {
    case INFER__RXN_CLASS: infer__rx_emit_inst(re, INFER__RX_CLASS, n->a, 0); return 0;
    case INFER__RXN_EOS: infer__rx_emit_inst(re, INFER__RX_EOS, 0, 0); return 0;
    case INFER__RXN_EMPTY: return 0;
    case INFER__RXN_SEQ:
        return infer__rx_emit(re, nodes, n->a) < 0 ? -1 : infer__rx_emit(re, nodes, n->b);
    case INFER__RXN_ALT: {
        /*     SPLIT L1, L2 / L1: a / JMP end / L2: b / end: */
        int32_t split = infer__rx_emit_inst(re, INFER__RX_SPLIT, 0, 0), jmp;
        re->prog[split].x = split + 1;
        if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        jmp = infer__rx_emit_inst(re, INFER__RX_JMP, 0, 0);
        re->prog[split].y = (int32_t)arrlen(re->prog);
        if (infer__rx_emit(re, nodes, n->b) < 0) return -1;
        re->prog[jmp].x = (int32_t)arrlen(re->prog);
        return 0;
    }
    case INFER__RXN_NLOOK: case INFER__RXN_PLOOK:
        /*     LOOK sub, end / sub: a / MATCH / end: */
        pc = infer__rx_emit_inst(re, n->type == INFER__RXN_NLOOK ? INFER__RX_NLOOK : INFER__RX_PLOOK, 0, 0);
        re->prog[pc].x = pc + 1;
        if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        infer__rx_emit_inst(re, INFER__RX_MATCH, 0, 0);
        re->prog[pc].y = (int32_t)arrlen(re->prog);
        return 0;
    case INFER__RXN_REP:
        for (int32_t k = 0; k < n->min; k++)
            if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        if (n->max < 0) {
            /*     L: SPLIT body, end / body: a / JMP L / end: */
            pc = infer__rx_emit_inst(re, INFER__RX_SPLIT, 0, 0);
            re->prog[pc].x = pc + 1;
            if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
            infer__rx_emit_inst(re, INFER__RX_JMP, pc, 0);
            re->prog[pc].y = (int32_t)arrlen(re->prog);
            return 0;
        }
        /* max-min optional copies, each SPLIT skipping to the common end: (a(a)?)? */
        here = (int32_t)arrlen(re->prog);
        for (int32_t k = n->min; k < n->max; k++) {
            pc = infer__rx_emit_inst(re, INFER__RX_SPLIT, 0, -1);
            re->prog[pc].x = pc + 1;
            if (infer__rx_emit(re, nodes, n->a) < 0) return -1;
        }
        for (pc = here; pc < (int32_t)arrlen(re->prog); pc++)
            if (re->prog[pc].op == INFER__RX_SPLIT && re->prog[pc].y == -1) re->prog[pc].y = (int32_t)arrlen(re->prog);
        return 0;
    }
    return -1;
}

static infer__regex *infer__regex_compile(const char *pattern, const char **err) {
    infer__rx_parser P;
    memset(&P, 0, sizeof P);
    P.p = (const unsigned char *)pattern;
    P.end = P.p + strlen(pattern);
    P.re = (infer__regex *)INFER_MALLOC(sizeof *P.re);
    if (!P.re) { *err = "out of memory"; return NULL; }
    memset(P.re, 0, sizeof *P.re);
    int32_t root = infer__rx_parse_alt(&P);
    if (root >= 0 && P.p < P.end) { P.err = "unbalanced ')'"; root = -1; }
    for (int32_t i = 0; root >= 0 && i < (int32_t)arrlen(P.nodes); i++)
        if (P.nodes[i].type == INFER__RXN_REP && P.nodes[i].max < 0 && infer__rx_nullable(P.nodes, P.nodes[i].a)) {
            P.err = "a repeated group can match the empty string";
            root = -1;
        }
    if (root >= 0 && infer__rx_emit(P.re, P.nodes, root) < 0) { P.err = "pattern too large"; root = -1; }
    if (root >= 0) infer__rx_emit_inst(P.re, INFER__RX_MATCH, 0, 0);
    arrfree(P.nodes);
    if (root < 0) {
        *err = P.err ? P.err : "bad pattern";
        infer__regex_free(P.re);
        return NULL;
    }
    return P.re;
}

/* per code point: bit (1 << category) | INFER__RX_SPACE if white space */
static uint8_t infer__rx_flags(uint32_t cp) {
    return (uint8_t)((1u << infer__uc_category(cp)) | (infer__uc_is_space(cp) ? INFER__RX_SPACE : 0));
}

static int infer__rx_class_match(const infer__regex *re, const infer__rx_class *c, uint32_t cp, uint8_t flags) {
    int hit = (c->cats & flags) != 0;
    for (int32_t k = 0; !hit && k < c->count; k++) {
        const uint32_t *r = &re->ranges[2 * (c->first + k)];
        hit = cp >= r[0] && cp <= r[1];
    }
    return hit != c->neg;
}

/* Runs the program from `pc` at code point `pos` of cp[0..end). Returns the end of the
 * first match in priority order, or -1. `stack` holds (pc, pos) pairs still to try. */
static int64_t infer__rx_run(const infer__regex *re, int32_t pc, const uint32_t *cp, const uint8_t *fl,
                             int64_t end, int64_t pos, int64_t **stack) {
    size_t base = arrlen(*stack);
    arrput(*stack, pc);
    arrput(*stack, pos);
    while (arrlenu(*stack) > base) {
        pos = arrpop(*stack);
        pc = (int32_t)arrpop(*stack);
        for (;;) {
            const infer__rx_inst *in = &re->prog[pc];
            if (in->op == INFER__RX_CLASS) {
                if (pos >= end || !infer__rx_class_match(re, &re->cls[in->x], cp[pos], fl[pos])) break;
                pos++; pc++;
            } else if (in->op == INFER__RX_SPLIT) {
                arrput(*stack, in->y);
                arrput(*stack, pos);
                pc = in->x;
            } else if (in->op == INFER__RX_JMP) {
                pc = in->x;
            } else if (in->op == INFER__RX_EOS) {
                if (pos != end) break;
                pc++;
            } else if (in->op == INFER__RX_MATCH) {
                arrsetlen(*stack, base);
                return pos;
            } else { /* lookahead: the sub-program must (PLOOK) or must not (NLOOK) match here */
                int hit = infer__rx_run(re, in->x, cp, fl, end, pos, stack) >= 0;
                if (hit != (in->op == INFER__RX_PLOOK)) break;
                pc = in->y;
            }
        }
    }
    return -1;
}

/* Splits every piece [a, b) of `in` (pairs of code point indices) with `re`, the way
 * llama.cpp's regex iterator does: each match is a piece and so is the text between two
 * matches. Each piece is matched on its own (its end is the end of the input). */
static void infer__rx_split(const infer__regex *re, const uint32_t *cp, const uint8_t *fl,
                            const int64_t *in, int64_t **out, int64_t **stack) {
    for (size_t k = 0; k < arrlenu(in); k += 2) {
        int64_t a = in[k], b = in[k + 1], last = a;
        for (int64_t s = a; s < b; s++) {
            int64_t e = infer__rx_run(re, 0, cp, fl, b, s, stack);
            if (e <= s) continue; /* no match here (an empty match is no piece) */
            if (s > last) { arrput(*out, last); arrput(*out, s); }
            arrput(*out, s);
            arrput(*out, e);
            last = e;
            s = e - 1;
        }
        if (last < b) { arrput(*out, last); arrput(*out, b); }
    }
}

/* -----------------------------------------------------------------------------------------
 * Pre-tokenizers by GGUF `tokenizer.ggml.pre` (llama.cpp llama-vocab.cpp). The regexes are
 * applied in order, each to the pieces the previous one produced. `flags`:
 *   IGNORE_MERGES  a pre-token that is itself a vocab entry is emitted without merging
 *   ADD_BOS        BOS is added by default (the GGUF key add_bos_token still overrides)
 *   KEEP_SPACES    detokenize does not "clean up" spaces before punctuation
 * --------------------------------------------------------------------------------------- */
enum { INFER__PRE_IGNORE_MERGES = 1, INFER__PRE_ADD_BOS = 2, INFER__PRE_KEEP_SPACES = 4 };

/* the GPT-2 pattern, shared by several families */
#define INFER__RX_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
/* llama3: the HF pattern with (?i:'s|...) spelled out case by case */
#define INFER__RX_LLAMA3 "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+" \
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* qwen2: llama3 with single digits */
#define INFER__RX_QWEN2 "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+" \
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* qwen35: qwen2 where combining marks count as letters */
#define INFER__RX_QWEN35 "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+" \
    "|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__RX_BLOOM " ?[^(\\s|.,!?…。，、।۔،)]+"

typedef struct infer__pre_def {
    const char *names;     /* '|'-separated GGUF names */
    int flags;
    const char *regex[8];  /* NULL-terminated */
} infer__pre_def;

static const infer__pre_def infer__pre_defs[] = {
    { "default", 0,
      { "[\\p{P}\\$\\+<=>\\^~\\|]+", INFER__RX_GPT2, "\\p{N}+", "[0-9][0-9][0-9]", NULL } },
    { "llama3|llama-v3|llama-bpe|falcon3|falcon-h1|pixtral|midm-2.0|lfm2",
      INFER__PRE_IGNORE_MERGES | INFER__PRE_ADD_BOS, { INFER__RX_LLAMA3, NULL } },
    { "dbrx|smaug-bpe", 0, { INFER__RX_LLAMA3, NULL } },
    { "qwen2|deepseek-r1-qwen|kormo|f2llmv2|hunyuan|solar-open", INFER__PRE_KEEP_SPACES, { INFER__RX_QWEN2, NULL } },
    { "megrez|stablelm2", 0, { INFER__RX_QWEN2, NULL } },
    { "qwen35", INFER__PRE_KEEP_SPACES, { INFER__RX_QWEN35, NULL } },
    { "gpt-2|mpt|olmo|jais|phi-2|jina-es|jina-de|gigachat|jina-v2-es|jina-v2-de|a.x-4.0|mellum|modern-bert|exaone4",
      0, { INFER__RX_GPT2, NULL } },
    { "trillion|granite-docling", INFER__PRE_KEEP_SPACES, { INFER__RX_GPT2, NULL } },
    { "starcoder|refact|codeshell|exaone|minerva-7b|mellum2", 0, { "\\p{N}", INFER__RX_GPT2, NULL } },
    { "command-r|smollm", INFER__PRE_KEEP_SPACES, { "\\p{N}", INFER__RX_GPT2, NULL } },
    { "falcon", 0, { "[\\p{P}\\$\\+<=>\\^~\\|`]+", INFER__RX_GPT2, "[0-9][0-9][0-9]", NULL } },
    /* deepseek-llm's second class is the cased letters (Lu Ll Lt). Six of its code points
     * have canonical singleton decompositions (U+1F7D U+1FBE U+1FD3 U+1FDB U+2126 U+212A);
     * they are written as escapes so that no Unicode normalization of this file changes them. */
    { "deepseek-llm", INFER__PRE_KEEP_SPACES,
      { "[\\r\\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-" "\xE1\xBD\xBD" "ᾀ-ᾴᾶ-ᾼ" "\xE1\xBE\xBE" "ῂ-ῄῆ-ῌῐ-" "\xE1\xBF\x93" "ῖ-" "\xE1\xBF\x9B" "ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ" "\xE2\x84\xA6" "ℨ" "\xE2\x84\xAA" "-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        "[一-龥ࠀ-一가-퟿]+",
        "\\p{N}+", NULL } },
    { "deepseek-coder", INFER__PRE_KEEP_SPACES,
      { "[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}", NULL } },
    { "deepseek-v3|hunyuan-dense|joyai-llm", INFER__PRE_KEEP_SPACES,
      { "\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
        "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL } },
    { "bloom|gpt3-finnish", 0, { INFER__RX_BLOOM, NULL } },
    { "poro-chat", INFER__PRE_KEEP_SPACES, { INFER__RX_BLOOM, NULL } },
    { "viking", INFER__PRE_KEEP_SPACES, { INFER__RX_BLOOM, "\\p{N}", NULL } },
};

static const infer__pre_def *infer__pre_find(const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof infer__pre_defs / sizeof infer__pre_defs[0]; i++) {
        const char *s = infer__pre_defs[i].names;
        while (*s) {
            const char *e = strchr(s, '|');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            if (len == n && memcmp(s, name, n) == 0) return &infer__pre_defs[i];
            s += len + (e != NULL);
        }
    }
    return NULL;
}

/* -----------------------------------------------------------------------------------------
 * Loading
 * --------------------------------------------------------------------------------------- */

void infer_tokenizer_free(infer_tokenizer *t) {
    if (!t) return;
    INFER_FREE(t->arena);
    INFER_FREE(t->text_off);
    INFER_FREE(t->piece_off);
    INFER_FREE(t->attr);
    INFER_FREE(t->score);
    INFER_FREE(t->vocab.slots);
    INFER_FREE(t->merges.slots);
    INFER_FREE(t->specials);
    for (int32_t i = 0; i < t->n_regex; i++) infer__regex_free(t->regex[i]);
    INFER_FREE(t->regex);
    memset(t, 0, sizeof *t);
}

static int infer__tok_attr_from_type(int32_t type) {
    switch (type) {
    case 1: return INFER__TOK_NORMAL;
    case 2: return INFER__TOK_UNKNOWN;
    case 3: return INFER__TOK_CONTROL;
    case 4: return INFER__TOK_USER;
    case 5: return INFER__TOK_UNUSED;
    case 6: return INFER__TOK_BYTE;
    default: return 0; /* undefined */
    }
}

/* "<0xAB>" -> 0xAB, else -1 */
static int infer__tok_parse_byte(const char *s, uint32_t n) {
    static const char hex[] = "0123456789ABCDEF";
    const char *h, *l;
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>' || !s[3] || !s[4]) return -1;
    h = strchr(hex, s[3]);
    l = strchr(hex, s[4]);
    if (!h || !l) return -1;
    return (int)((h - hex) * 16 + (l - hex));
}

/* Appends the bytes token `id` stands for (as infer_token_to_piece with special = 1). */
static size_t infer__tok_make_piece(const infer_tokenizer *t, int32_t id, char *out) {
    uint32_t n, k = 0;
    const char *s = infer__tok_text(t, id, &n);
    int a = t->attr[id];
    if (a & (INFER__TOK_UNKNOWN | INFER__TOK_CONTROL | INFER__TOK_USER)) {
        memcpy(out, s, n);
        return n;
    }
    if (a & INFER__TOK_BYTE) {
        int b = infer__tok_parse_byte(s, n);
        if (b < 0) { memcpy(out, s, n); return n; }
        out[0] = (char)b;
        return 1;
    }
    if (!(a & INFER__TOK_NORMAL)) return 0;
    if (t->kind == INFER_TOK_BPE) { /* undo bytes_to_unicode */
        for (uint32_t i = 0; i < n;) {
            uint32_t cp;
            int len = infer__utf8_decode((const unsigned char *)s + i, n - i, &cp);
            int b = infer__cp_to_byte(cp);
            if (b >= 0) out[k++] = (char)b;
            else { memcpy(out + k, s + i, (size_t)len); k += (uint32_t)len; }
            i += (uint32_t)len;
        }
        return k;
    }
    for (uint32_t i = 0; i < n;) { /* SPM, WPM: "▁" (E2 96 81) is a space */
        if (i + 3 <= n && memcmp(s + i, "\xE2\x96\x81", 3) == 0) { out[k++] = ' '; i += 3; }
        else out[k++] = s[i++];
    }
    return k;
}

static const char *const infer__eog_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", /* <｜end▁of▁sentence｜> */
    "[e~[", NULL
};
static const char *const infer__eot_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>", NULL
};

/* the first of `texts` (in list order) that is a token; -1 if none is */
static int32_t infer__tok_find_any(const infer_tokenizer *t, const char *const *texts) {
    for (int i = 0; texts[i]; i++) {
        int32_t id = infer__tok_find(t, texts[i], strlen(texts[i]));
        if (id >= 0) return id;
    }
    return -1;
}

/* Special ids: model default, replaced by the GGUF key when that is in range. */
static int32_t infer__tok_pick_id(int32_t key, int32_t dflt, int32_t n_vocab) {
    if (key >= 0 && key < n_vocab) return key;
    return dflt >= 0 && dflt < n_vocab ? dflt : -1;
}

/* model kind, default special ids and default flags (llama.cpp llama_vocab::impl::load) */
static int infer__tok_set_kind(infer_tokenizer *t, const infer__tok_src *src, char *err, size_t errlen) {
    const char *m = src->model;
    int32_t bos = -1, eos = -1, unk = -1, sep = -1, pad = -1, mask = -1, n = src->n_vocab;
    t->add_bos = t->add_eos = t->add_space_prefix = 0;
    if (!m || !strcmp(m, "none") || !strcmp(m, "no_vocab")) {
        t->kind = INFER_TOK_NONE;
        t->bos = t->eos = t->eot = t->eom = t->unk = t->pad = t->sep = t->mask = -1;
        return 0;
    } else if (!strcmp(m, "llama")) {
        t->kind = INFER_TOK_SPM;
        bos = 1; eos = 2; unk = 0;
        t->add_bos = 1; t->add_space_prefix = 1;
    } else if (!strcmp(m, "gpt2")) {
        const char *pre = src->pre && src->pre[0] ? src->pre : "default";
        const infer__pre_def *def = infer__pre_find(pre);
        if (!def) return infer__tok_fail(err, errlen, "unknown pre-tokenizer \"%s\"", pre);
        t->kind = INFER_TOK_BPE;
        t->pre_def = (int32_t)(def - infer__pre_defs);
        snprintf(t->pre, sizeof t->pre, "%s", pre);
        bos = eos = 11;
        t->ignore_merges = (def->flags & INFER__PRE_IGNORE_MERGES) != 0;
        t->add_bos = (def->flags & INFER__PRE_ADD_BOS) != 0;
        t->clean_spaces = !(def->flags & INFER__PRE_KEEP_SPACES);
    } else if (!strcmp(m, "bert")) {
        t->kind = INFER_TOK_WPM;
        bos = src->cls >= 0 ? src->cls : 101; unk = 100; sep = 102; pad = 0; mask = 103;
        t->add_bos = 1;
        t->clean_spaces = 1;
    } else {
        return infer__tok_fail(err, errlen, "unsupported tokenizer model \"%s\"", m);
    }
    if (n <= 0) return infer__tok_fail(err, errlen, "tokenizer \"%s\" has an empty vocabulary", m);
    t->bos = infer__tok_pick_id(src->bos, bos, n);
    t->eos = infer__tok_pick_id(src->eos, eos, n);
    t->eot = infer__tok_pick_id(src->eot, -1, n);
    t->eom = infer__tok_pick_id(src->eom, -1, n);
    t->unk = infer__tok_pick_id(src->unk, unk, n);
    t->sep = infer__tok_pick_id(src->sep, sep, n);
    t->pad = infer__tok_pick_id(src->pad, pad, n);
    t->mask = infer__tok_pick_id(src->mask, mask, n);
    if (src->add_bos >= 0) t->add_bos = src->add_bos != 0;
    if (src->add_eos >= 0) t->add_eos = src->add_eos != 0;
    if (src->add_space_prefix >= 0) t->add_space_prefix = src->add_space_prefix != 0;
    if (t->add_bos && t->bos < 0) return infer__tok_fail(err, errlen, "add_bos_token is set but there is no BOS token");
    if (t->add_eos && t->eos < 0) return infer__tok_fail(err, errlen, "add_eos_token is set but there is no EOS token");
    return 0;
}

/* Copies token texts into the arena, builds text -> id and the attributes. */
static int infer__tok_load_vocab(infer_tokenizer *t, const infer__tok_src *src, size_t *used, char *err, size_t errlen) {
    int32_t n = t->n_vocab;
    size_t off = 0;
    if (infer__map_alloc(&t->vocab, (size_t)n) < 0) return infer__tok_fail(err, errlen, "out of memory");
    for (int32_t i = 0; i < n; i++) {
        size_t len = (size_t)src->token_lens[i];
        if (len && !src->tokens[i]) return infer__tok_fail(err, errlen, "token %d has no text", i);
        t->text_off[i] = (uint32_t)off;
        if (len) memcpy(t->arena + off, src->tokens[i], len);
        /* GGUF metadata arrays are not aligned: read the elements bytewise */
        if (src->types) {
            int32_t type;
            memcpy(&type, (const char *)src->types + 4 * (size_t)i, 4);
            t->attr[i] = (uint8_t)infer__tok_attr_from_type(type);
        } else {
            t->attr[i] = INFER__TOK_NORMAL;
        }
        if (t->score) memcpy(&t->score[i], (const char *)src->scores + 4 * (size_t)i, 4);
        if (len > (size_t)t->max_token_len) t->max_token_len = (int32_t)len;
        if (len) { /* an empty text can never match; llama.cpp renames it "[EMPTY_i]" */
            int32_t prev = infer__map_put(&t->vocab, t->arena, (uint32_t)off, (uint32_t)len, 0, i);
            if (prev != i)
                return infer__tok_fail(err, errlen, "duplicate token in vocabulary: ids %d and %d have the same text", prev, i);
        }
        off += len;
    }
    t->text_off[n] = (uint32_t)off;
    *used = off;
    return 0;
}

/* BPE merges "left right" -> rank; the key is left||right with aux = strlen(left) */
static int infer__tok_load_merges(infer_tokenizer *t, const infer__tok_src *src, size_t *used, char *err, size_t errlen) {
    size_t off = *used;
    if (src->n_merges > 0 && (!src->merges || !src->merge_lens))
        return infer__tok_fail(err, errlen, "merges are missing");
    if (infer__map_alloc(&t->merges, (size_t)(src->n_merges > 0 ? src->n_merges : 0)) < 0)
        return infer__tok_fail(err, errlen, "out of memory");
    for (int32_t i = 0; i < src->n_merges; i++) {
        const char *s = src->merges[i];
        size_t len = (size_t)src->merge_lens[i], sp;
        if (!s && len) return infer__tok_fail(err, errlen, "bad merge at index %d (no text)", i);
        /* the separator is the first space after the first byte (a left part may be " ") */
        for (sp = 1; sp < len && s[sp] != ' '; sp++) {}
        if (len < 3 || sp >= len - 1)
            return infer__tok_fail(err, errlen, "bad merge at index %d (expected \"left right\")", i);
        memcpy(t->arena + off, s, sp);
        memcpy(t->arena + off + sp, s + sp + 1, len - sp - 1);
        infer__map_put(&t->merges, t->arena, (uint32_t)off, (uint32_t)(len - 1), (int32_t)sp, i);
        off += len - 1;
    }
    *used = off;
    return 0;
}

static int infer__cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* EOG set, EOT/EOM auto-detection, special-token list, byte tokens, pieces. */
static int infer__tok_finish(infer_tokenizer *t, size_t *used, char *err, size_t errlen) {
    int32_t n = t->n_vocab;
    size_t off = *used;
    if (t->eot < 0) t->eot = infer__tok_find_any(t, infer__eot_texts);
    if (t->eom < 0) t->eom = infer__tok_find(t, "<|eom_id|>", 10);
    for (int i = 0; infer__eog_texts[i]; i++) {
        int32_t id = infer__tok_find(t, infer__eog_texts[i], strlen(infer__eog_texts[i]));
        if (id >= 0) t->attr[id] |= INFER__TOK_EOG | INFER__TOK_CONTROL;
    }
    if (t->eot >= 0) t->attr[t->eot] |= INFER__TOK_CONTROL;
    if (t->eom >= 0) t->attr[t->eom] |= INFER__TOK_CONTROL;
    if (t->eos >= 0) t->attr[t->eos] |= INFER__TOK_EOG;
    if (t->eot >= 0) t->attr[t->eot] |= INFER__TOK_EOG;
    if (t->eom >= 0) t->attr[t->eom] |= INFER__TOK_EOG;

    for (int b = 0; b < 256; b++) {
        char buf[8];
        snprintf(buf, sizeof buf, "<0x%02X>", b);
        t->byte_token[b] = infer__tok_find(t, buf, 6);
        if (t->byte_token[b] < 0) { buf[0] = (char)b; t->byte_token[b] = infer__tok_find(t, buf, 1); }
    }

    t->specials = (int32_t *)INFER_MALLOC((size_t)n * sizeof(int32_t));
    if (!t->specials) return infer__tok_fail(err, errlen, "out of memory");
    for (int32_t i = 0; i < n; i++)
        if ((t->attr[i] & (INFER__TOK_CONTROL | INFER__TOK_USER | INFER__TOK_UNKNOWN)) && t->text_off[i + 1] > t->text_off[i])
            t->specials[t->n_specials++] = i;
    /* longest text first (ties: lower id), as llama.cpp's cache_special_tokens */
    {
        uint64_t *keys = (uint64_t *)INFER_MALLOC((size_t)(t->n_specials ? t->n_specials : 1) * sizeof(uint64_t));
        if (!keys) return infer__tok_fail(err, errlen, "out of memory");
        for (int32_t i = 0; i < t->n_specials; i++) {
            uint32_t len = t->text_off[t->specials[i] + 1] - t->text_off[t->specials[i]];
            keys[i] = ((uint64_t)(UINT32_MAX - len) << 32) | (uint32_t)t->specials[i];
        }
        qsort(keys, (size_t)t->n_specials, sizeof *keys, infer__cmp_u64);
        for (int32_t i = 0; i < t->n_specials; i++) t->specials[i] = (int32_t)(keys[i] & 0xFFFFFFFFu);
        INFER_FREE(keys);
    }

    for (int32_t i = 0; i < n; i++) {
        t->piece_off[i] = (uint32_t)off;
        size_t k = infer__tok_make_piece(t, i, t->arena + off);
        if (k > (size_t)t->max_piece_len) t->max_piece_len = (int32_t)k;
        off += k;
    }
    t->piece_off[n] = (uint32_t)off;
    *used = off;
    return 0;
}

static int infer__tok_compile_pre(infer_tokenizer *t, char *err, size_t errlen) {
    const infer__pre_def *def = &infer__pre_defs[t->pre_def];
    int32_t k = 0;
    while (def->regex[k]) k++;
    t->regex = (infer__regex **)INFER_MALLOC((size_t)k * sizeof *t->regex);
    if (!t->regex) return infer__tok_fail(err, errlen, "out of memory");
    for (t->n_regex = 0; t->n_regex < k; t->n_regex++) {
        const char *why = NULL;
        t->regex[t->n_regex] = infer__regex_compile(def->regex[t->n_regex], &why);
        if (!t->regex[t->n_regex])
            return infer__tok_fail(err, errlen, "pre-tokenizer \"%s\": regex %d: %s", t->pre, t->n_regex, why);
    }
    return 0;
}

/* Builds a tokenizer from `src`. Returns 0, or -1 with a message in err. On error `t` is
 * left empty (nothing to free). */
static int infer__tok_init(infer_tokenizer *t, const infer__tok_src *src, char *err, size_t errlen) {
    size_t text_bytes = 0, merge_bytes = 0, used = 0;
    memset(t, 0, sizeof *t);
    if (!src) return infer__tok_fail(err, errlen, "no tokenizer description");
    if (infer__tok_set_kind(t, src, err, errlen) < 0) goto fail;
    if (t->kind == INFER_TOK_NONE) return 0;
    if (!src->tokens || !src->token_lens) { infer__tok_fail(err, errlen, "tokenizer has no token list"); goto fail; }
    for (int32_t i = 0; i < src->n_vocab; i++) {
        if (src->token_lens[i] > INFER__TOK_MAX_LEN) { infer__tok_fail(err, errlen, "token %d is too long", i); goto fail; }
        text_bytes += (size_t)src->token_lens[i];
    }
    for (int32_t i = 0; t->kind == INFER_TOK_BPE && src->merge_lens && i < src->n_merges; i++) {
        if (src->merge_lens[i] > INFER__TOK_MAX_LEN) { infer__tok_fail(err, errlen, "merge %d is too long", i); goto fail; }
        merge_bytes += (size_t)src->merge_lens[i];
    }
    /* the arena holds texts, merge keys and pieces (never longer than their texts) */
    if (text_bytes * 2 + merge_bytes >= 0xFFFFFFFFu) { infer__tok_fail(err, errlen, "token texts too large"); goto fail; }
    t->n_vocab = src->n_vocab;
    t->arena = (char *)INFER_MALLOC(text_bytes * 2 + merge_bytes + 1);
    t->text_off = (uint32_t *)INFER_MALLOC(((size_t)t->n_vocab + 1) * sizeof(uint32_t));
    t->piece_off = (uint32_t *)INFER_MALLOC(((size_t)t->n_vocab + 1) * sizeof(uint32_t));
    t->attr = (uint8_t *)INFER_MALLOC((size_t)t->n_vocab);
    t->score = src->scores ? (float *)INFER_MALLOC((size_t)t->n_vocab * sizeof(float)) : NULL;
    if (!t->arena || !t->text_off || !t->piece_off || !t->attr || (src->scores && !t->score)) {
        infer__tok_fail(err, errlen, "out of memory");
        goto fail;
    }
    if (infer__tok_load_vocab(t, src, &used, err, errlen) < 0) goto fail;
    if (t->kind == INFER_TOK_BPE) {
        if (infer__tok_load_merges(t, src, &used, err, errlen) < 0) goto fail;
        if (infer__tok_compile_pre(t, err, errlen) < 0) goto fail;
    }
    if (infer__tok_finish(t, &used, err, errlen) < 0) goto fail;
    return 0;
fail:
    infer_tokenizer_free(t);
    return -1;
}

/* -----------------------------------------------------------------------------------------
 * Merging: symbols in a linked list over one buffer, candidate pairs in a max-heap
 * --------------------------------------------------------------------------------------- */

typedef struct infer__tok_sym { int32_t prev, next; uint32_t off, n; } infer__tok_sym;
/* prio: SPM token score, BPE -rank; ties go to the leftmost pair */
typedef struct infer__tok_pair { double prio; int32_t left, right; uint32_t size; } infer__tok_pair;

static int infer__pair_before(const infer__tok_pair *a, const infer__tok_pair *b) {
    return a->prio > b->prio || (a->prio == b->prio && a->left < b->left);
}

static void infer__heap_push(infer__tok_pair **h, infer__tok_pair p) {
    arrput(*h, p);
    for (size_t i = arrlenu(*h) - 1; i > 0;) {
        size_t up = (i - 1) / 2;
        if (!infer__pair_before(&(*h)[i], &(*h)[up])) break;
        infer__tok_pair tmp = (*h)[i]; (*h)[i] = (*h)[up]; (*h)[up] = tmp;
        i = up;
    }
}

static infer__tok_pair infer__heap_pop(infer__tok_pair *h) {
    infer__tok_pair top = h[0];
    size_t n = arrlenu(h) - 1, i = 0;
    h[0] = h[n];
    arrsetlen(h, n);
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < n && infer__pair_before(&h[l], &h[best])) best = l;
        if (r < n && infer__pair_before(&h[r], &h[best])) best = r;
        if (best == i) break;
        infer__tok_pair tmp = h[i]; h[i] = h[best]; h[best] = tmp;
        i = best;
    }
    return top;
}

/* One symbol per UTF-8 character of buf[0..n) (a stray byte is a character of its own). */
static void infer__syms_from_text(infer__tok_sym **syms, const char *buf, size_t n) {
    arrsetlen(*syms, 0);
    for (size_t off = 0; off < n;) {
        size_t len = (size_t)infer__utf8_len((unsigned char)buf[off]);
        infer__tok_sym s;
        if (len > n - off) len = n - off;
        s.prev = (int32_t)arrlen(*syms) - 1;
        s.off = (uint32_t)off;
        s.n = (uint32_t)len;
        off += len;
        s.next = off == n ? -1 : (int32_t)arrlen(*syms) + 1;
        arrput(*syms, s);
    }
}

/* the candidate pair (left, right); 0 when the two do not merge */
static int infer__tok_pair_make(const infer_tokenizer *t, const char *buf, const infer__tok_sym *syms,
                                int32_t left, int32_t right, infer__tok_pair *p) {
    const infer__tok_sym *l = &syms[left], *r = &syms[right];
    if (t->kind == INFER_TOK_SPM) {
        int32_t id = infer__tok_find(t, buf + l->off, l->n + r->n);
        if (id < 0) return 0;
        p->prio = t->score ? t->score[id] : 0.0;
    } else {
        int32_t rank = infer__map_get(&t->merges, t->arena, buf + l->off, l->n + r->n, (int32_t)l->n);
        if (rank < 0) return 0;
        p->prio = -(double)rank;
    }
    p->left = left;
    p->right = right;
    p->size = l->n + r->n;
    return 1;
}

static void infer__tok_try_pair(const infer_tokenizer *t, const char *buf, const infer__tok_sym *syms,
                                int32_t left, int32_t right, infer__tok_pair **heap) {
    infer__tok_pair p;
    if (left >= 0 && right >= 0 && infer__tok_pair_make(t, buf, syms, left, right, &p)) infer__heap_push(heap, p);
}

/* Merges the symbols of buf until no candidate pair is left (both SPM and BPE). */
static void infer__tok_merge(const infer_tokenizer *t, const char *buf, infer__tok_sym *syms, infer__tok_pair **heap) {
    arrsetlen(*heap, 0);
    for (int32_t i = 1; i < (int32_t)arrlen(syms); i++) infer__tok_try_pair(t, buf, syms, i - 1, i, heap);
    while (arrlen(*heap) > 0) {
        infer__tok_pair p = infer__heap_pop(*heap);
        infer__tok_sym *l = &syms[p.left], *r = &syms[p.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != p.size) continue; /* stale */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) syms[r->next].prev = p.left;
        infer__tok_try_pair(t, buf, syms, l->prev, p.left, heap);
        infer__tok_try_pair(t, buf, syms, p.left, l->next, heap);
    }
}

/* scratch buffers of one infer_tokenize() call (stb_ds arrays) */
typedef struct infer__tok_work {
    int32_t *out;
    char *buf;
    infer__tok_sym *syms;
    infer__tok_pair *heap;
    uint32_t *cps;
    uint8_t *flags;
    int64_t *pieces, *pieces2, *stack;
} infer__tok_work;

static void infer__tok_work_free(infer__tok_work *w) {
    arrfree(w->out); arrfree(w->buf); arrfree(w->syms); arrfree(w->heap); arrfree(w->cps);
    arrfree(w->flags); arrfree(w->pieces); arrfree(w->pieces2); arrfree(w->stack);
}

/* ---- SPM ---- */

static void infer__spm_fragment(const infer_tokenizer *t, infer__tok_work *w, const char *text, size_t len, int prefix) {
    arrsetlen(w->buf, 0);
    if (prefix) { arrput(w->buf, '\xE2'); arrput(w->buf, '\x96'); arrput(w->buf, '\x81'); }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') { arrput(w->buf, '\xE2'); arrput(w->buf, '\x96'); arrput(w->buf, '\x81'); }
        else arrput(w->buf, text[i]);
    }
    infer__syms_from_text(&w->syms, w->buf, arrlenu(w->buf));
    infer__tok_merge(t, w->buf, w->syms, &w->heap);
    for (int32_t i = 0; arrlen(w->syms) > 0 && i >= 0; i = w->syms[i].next) {
        const infer__tok_sym *s = &w->syms[i];
        int32_t id = infer__tok_find(t, w->buf + s->off, s->n);
        if (id >= 0) { arrput(w->out, id); continue; }
        /* Not a token: a single character (merges only ever form tokens). Byte fallback.
         * llama.cpp also keeps a "rev_merge" map for this case, but it can only be reached
         * by symbols that are tokens, so it is not needed. */
        for (uint32_t k = 0; k < s->n; k++) {
            int32_t b = t->byte_token[(unsigned char)w->buf[s->off + k]];
            if (b < 0) b = t->unk;
            if (b >= 0) arrput(w->out, b);
        }
    }
}

/* ---- BPE ---- */

/* Merges one pre-token (already mapped through bytes_to_unicode) and appends its ids. */
static void infer__bpe_word(const infer_tokenizer *t, infer__tok_work *w, const char *word, size_t n) {
    int32_t id;
    if (t->ignore_merges && (id = infer__tok_find(t, word, n)) >= 0) {
        arrput(w->out, id);
        return;
    }
    infer__syms_from_text(&w->syms, word, n);
    infer__tok_merge(t, word, w->syms, &w->heap);
    for (int32_t i = 0; arrlen(w->syms) > 0 && i >= 0; i = w->syms[i].next) {
        const infer__tok_sym *s = &w->syms[i];
        id = infer__tok_find(t, word + s->off, s->n);
        if (id >= 0) { arrput(w->out, id); continue; }
        for (uint32_t k = 0; k < s->n; k++) { /* llama.cpp: each byte as a one-byte token, if any */
            id = infer__tok_find(t, word + s->off + k, 1);
            if (id >= 0) arrput(w->out, id);
        }
    }
}

static void infer__bpe_fragment(const infer_tokenizer *t, infer__tok_work *w, const char *text, size_t len) {
    arrsetlen(w->cps, 0);
    arrsetlen(w->flags, 0);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += (size_t)infer__utf8_decode((const unsigned char *)text + i, len - i, &cp);
        arrput(w->cps, cp);
        arrput(w->flags, infer__rx_flags(cp));
    }
    arrsetlen(w->pieces, 0);
    arrput(w->pieces, 0);
    arrput(w->pieces, (int64_t)arrlen(w->cps));
    for (int32_t r = 0; r < t->n_regex; r++) {
        int64_t *tmp;
        arrsetlen(w->pieces2, 0);
        infer__rx_split(t->regex[r], w->cps, w->flags, w->pieces, &w->pieces2, &w->stack);
        tmp = w->pieces; w->pieces = w->pieces2; w->pieces2 = tmp;
    }
    for (size_t k = 0; k < arrlenu(w->pieces); k += 2) {
        arrsetlen(w->buf, 0);
        for (int64_t i = w->pieces[k]; i < w->pieces[k + 1]; i++) {
            char u[4], c[4];
            int n = infer__utf8_encode(w->cps[i], u);
            for (int j = 0; j < n; j++) {
                int m = infer__utf8_encode(infer__byte_to_cp((unsigned char)u[j]), c);
                for (int q = 0; q < m; q++) arrput(w->buf, c[q]);
            }
        }
        if (arrlen(w->buf) > 0) infer__bpe_word(t, w, w->buf, arrlenu(w->buf));
    }
}

/* ---- WPM (BERT WordPiece, llama.cpp llm_tokenizer_wpm_session) ---- */

static int infer__is_cjk(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* Greedy longest match of "▁" + word; a word with an unmatchable rest becomes [UNK]. */
static void infer__wpm_word(const infer_tokenizer *t, infer__tok_work *w, const char *word, size_t n) {
    size_t start = arrlenu(w->out);
    for (size_t i = 0; i < n;) {
        size_t j = i + (size_t)t->max_token_len < n ? i + (size_t)t->max_token_len : n;
        int32_t id = -1;
        for (; j > i; j--)
            if ((id = infer__tok_find(t, word + i, j - i)) >= 0) break;
        if (id < 0) { arrsetlen(w->out, start); break; }
        arrput(w->out, id);
        i = j;
    }
    if (arrlenu(w->out) == start && t->unk >= 0) arrput(w->out, t->unk);
}

static void infer__wpm_flush(const infer_tokenizer *t, infer__tok_work *w) {
    if (arrlen(w->buf) > 3) infer__wpm_word(t, w, w->buf, arrlenu(w->buf));
    arrsetlen(w->buf, 3); /* keep the "▁" prefix */
}

/* lower-case, NFD + drop accents, split at white space; punctuation, ASCII symbols and CJK
 * characters are words of their own; control characters are dropped. */
static void infer__wpm_fragment(const infer_tokenizer *t, infer__tok_work *w, const char *text, size_t len) {
    arrsetlen(w->buf, 0);
    arrput(w->buf, '\xE2'); arrput(w->buf, '\x96'); arrput(w->buf, '\x81');
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        char u[4];
        i += (size_t)infer__utf8_decode((const unsigned char *)text + i, len - i, &cp);
        cp = infer__uc_nfd_base(cp);
        int cat = infer__uc_category(cp);
        if (infer__uc_is_space(cp)) { infer__wpm_flush(t, w); continue; }
        if (cp == 0 || cp == 0xFFFD || cat == INFER__UC_C || cat == INFER__UC_M) continue;
        int n = infer__utf8_encode(infer__uc_tolower(cp), u);
        int alone = cat == INFER__UC_P || (cp < 0x7F && cat == INFER__UC_S) || infer__is_cjk(cp);
        if (alone) infer__wpm_flush(t, w);
        for (int k = 0; k < n; k++) arrput(w->buf, u[k]);
        if (alone) infer__wpm_flush(t, w);
    }
    infer__wpm_flush(t, w);
}

/* ---- special-token partitioning and the whole tokenize ---- */

/* fragment: id >= 0 is a special token, id < 0 raw text [off, off+len) */
typedef struct infer__tok_frag { int32_t id; size_t off, len; } infer__tok_frag;

static const char *infer__memfind(const char *h, size_t hn, const char *n, size_t nn) {
    if (nn == 0 || hn < nn) return NULL;
    for (const char *p = h, *end = h + hn - nn; p <= end; p++) {
        p = (const char *)memchr(p, n[0], (size_t)(end - p) + 1);
        if (!p) return NULL;
        if (memcmp(p, n, nn) == 0) return p;
    }
    return NULL;
}

static infer__tok_frag *infer__tok_partition(const infer_tokenizer *t, const char *text, size_t len, int parse_special) {
    infer__tok_frag *frags = NULL, *next = NULL, f;
    if (len == 0) return NULL;
    f.id = -1; f.off = 0; f.len = len;
    arrput(frags, f);
    for (int32_t s = 0; s < t->n_specials; s++) {
        int32_t id = t->specials[s];
        uint32_t sn;
        const char *st = infer__tok_text(t, id, &sn);
        if (!parse_special && (t->attr[id] & (INFER__TOK_CONTROL | INFER__TOK_UNKNOWN))) continue;
        arrsetlen(next, 0);
        for (size_t k = 0; k < arrlenu(frags); k++) {
            size_t pos = frags[k].off, end = frags[k].off + frags[k].len;
            const char *hit;
            if (frags[k].id >= 0) { arrput(next, frags[k]); continue; }
            while ((hit = infer__memfind(text + pos, end - pos, st, sn)) != NULL) {
                size_t at = (size_t)(hit - text);
                if (at > pos) { f.id = -1; f.off = pos; f.len = at - pos; arrput(next, f); }
                f.id = id; f.off = at; f.len = sn;
                arrput(next, f);
                pos = at + sn;
            }
            if (pos < end) { f.id = -1; f.off = pos; f.len = end - pos; arrput(next, f); }
        }
        { infer__tok_frag *tmp = frags; frags = next; next = tmp; }
    }
    arrfree(next);
    return frags;
}

/* Tokenizes text[0..len). Returns the number of tokens (the first max_out are written to
 * out, so a result > max_out means: call again with a bigger array), or -1 when the model
 * has no vocabulary or the arguments are bad. */
int infer_tokenize(const infer_tokenizer *t, const char *text, size_t len, int add_special,
                   int parse_special, int32_t *out, int max_out) {
    infer__tok_work w;
    infer__tok_frag *frags;
    int prev_special = 1; /* SPM: the first fragment gets the leading space */
    int64_t n;
    if (!t || t->kind == INFER_TOK_NONE || (!text && len) || max_out < 0 || (!out && max_out > 0)) return -1;
    memset(&w, 0, sizeof w);
    frags = infer__tok_partition(t, text, len, parse_special);
    if (add_special && (t->add_bos || t->kind == INFER_TOK_WPM) && t->bos >= 0) arrput(w.out, t->bos);
    for (size_t k = 0; k < arrlenu(frags); k++) {
        const infer__tok_frag *f = &frags[k];
        if (f->id >= 0) { arrput(w.out, f->id); prev_special = 1; continue; }
        if (t->kind == INFER_TOK_SPM) infer__spm_fragment(t, &w, text + f->off, f->len, t->add_space_prefix && prev_special);
        else if (t->kind == INFER_TOK_BPE) infer__bpe_fragment(t, &w, text + f->off, f->len);
        else infer__wpm_fragment(t, &w, text + f->off, f->len);
        prev_special = 0;
    }
    if (add_special && t->kind == INFER_TOK_WPM && t->sep >= 0) arrput(w.out, t->sep);
    else if (add_special && t->add_eos && t->eos >= 0) arrput(w.out, t->eos);
    n = (int64_t)arrlen(w.out);
    if (n > 0 && max_out > 0) memcpy(out, w.out, (size_t)(n < max_out ? n : max_out) * sizeof(int32_t));
    arrfree(frags);
    infer__tok_work_free(&w);
    return n > INT_MAX ? -1 : (int)n;
}

/* -----------------------------------------------------------------------------------------
 * Decoding
 * --------------------------------------------------------------------------------------- */

int infer_token_is_eog(const infer_tokenizer *t, int32_t id) {
    return t && id >= 0 && id < t->n_vocab && t->kind != INFER_TOK_NONE && (t->attr[id] & INFER__TOK_EOG) != 0;
}

int infer_token_is_control(const infer_tokenizer *t, int32_t id) {
    return t && id >= 0 && id < t->n_vocab && t->kind != INFER_TOK_NONE && (t->attr[id] & INFER__TOK_CONTROL) != 0;
}

/* the decoded bytes of id; control and unknown tokens are empty unless `special` */
static const char *infer__tok_piece(const infer_tokenizer *t, int32_t id, int special, int *len) {
    if (!special && (t->attr[id] & (INFER__TOK_CONTROL | INFER__TOK_UNKNOWN))) { *len = 0; return ""; }
    *len = (int)(t->piece_off[id + 1] - t->piece_off[id]);
    return t->arena + t->piece_off[id];
}

/* Writes the bytes token `id` stands for into buf. Returns their count; when that exceeds
 * `size` nothing is written. Returns -1 for an id out of range or a model without vocabulary.
 * buf is not NUL-terminated. A buffer of t->max_piece_len bytes always suffices. */
int infer_token_to_piece(const infer_tokenizer *t, int32_t id, int special, char *buf, int size) {
    int n;
    const char *p;
    if (!t || t->kind == INFER_TOK_NONE || id < 0 || id >= t->n_vocab) return -1;
    p = infer__tok_piece(t, id, special, &n);
    if (n <= size && n > 0) memcpy(buf, p, (size_t)n);
    return n;
}

/* llama.cpp's clean_up_tokenization_spaces: " ?" " !" " ." " ," lose the space, " ' " loses
 * both, " 's" " 'm" " 're" " 've" lose it. In place; returns the new length. */
static size_t infer__clean_spaces(char *s, size_t n) {
    size_t k = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) k--;
        s[k++] = x;
    }
    n = k; k = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') { k--; s[++i] = '\0'; }
        s[k++] = x;
    }
    n = k; k = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (s[i - 1] == ' ' && x == '\'' && i + 1 < n) {
            char x1 = s[i + 1], x2 = i + 2 < n ? s[i + 2] : 0;
            if (x1 == 's' || x1 == 'm' || (i + 2 < n && ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')))) k--;
        }
        s[k++] = x;
    }
    return k;
}

/* Whole-sequence detokenizer (llama.cpp llama_detokenize): remove_special drops a leading
 * BOS and trailing EOS the model adds; unparse_special renders control tokens' texts; the
 * first piece loses one leading space when the model prefixes one (add_space_prefix);
 * BPE/WPM models that ask for it get clean_spaces. Returns the byte count; when it exceeds
 * `size` nothing is written. -1 on bad arguments or an id out of range. */
int infer_detokenize(const infer_tokenizer *t, const int32_t *ids, int n, int remove_special,
                     int unparse_special, char *out, int size) {
    char *buf = NULL;
    int strip = 0;
    size_t total;
    if (!t || t->kind == INFER_TOK_NONE || n < 0 || (!ids && n)) return -1;
    strip = t->add_space_prefix;
    if (remove_special && t->add_bos && n > 0 && ids[0] == t->bos) { strip = 0; ids++; n--; }
    if (remove_special && t->add_eos && n > 0 && ids[n - 1] == t->eos) n--;
    for (int i = 0; i < n; i++) {
        int len;
        const char *p;
        if (ids[i] < 0 || ids[i] >= t->n_vocab) { arrfree(buf); return -1; }
        p = infer__tok_piece(t, ids[i], unparse_special, &len);
        if (strip && len > 0 && p[0] == ' ') { p++; len--; }
        strip = 0;
        if (len > 0) memcpy(arraddnptr(buf, len), p, (size_t)len); /* never memcpy to NULL */
    }
    total = arrlenu(buf);
    if (t->clean_spaces) total = infer__clean_spaces(buf, total);
    if (total <= (size_t)(size > 0 ? size : 0) && total) memcpy(out, buf, total);
    arrfree(buf);
    return total > INT_MAX ? -1 : (int)total;
}

/* ---- streaming ---- */

void infer_detok_init(infer_detok *d, const infer_tokenizer *t) {
    memset(d, 0, sizeof *d);
    d->tok = t;
    d->at_start = 1;
}

/* how many bytes at the end of s[0..n) start a UTF-8 sequence that is not complete yet */
static int infer__utf8_incomplete_tail(const unsigned char *s, int n) {
    for (int back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = s[n - back];
        if ((c & 0xC0) == 0x80) continue;           /* continuation: look further back */
        if (c >= 0xC0 && c < 0xF8 && infer__utf8_len(c) > back) return back;
        return 0;                                   /* complete, ASCII, or invalid lead */
    }
    return 0;
}

/* Pushes one generated id; writes the bytes that are now complete UTF-8 into out and
 * returns their count. A piece that ends inside a multi-byte character is held back until
 * the rest arrives. Control tokens produce nothing unless d->special. For SPM-style models (add_space_prefix)
 * the first piece loses its leading space; to stream a continuation of text shown already,
 * push the prompt first (ignoring the output) or clear d->at_start.
 * `size` must be at least n_pending + the piece (t->max_piece_len + 3 always is); when it
 * is not, nothing changes and -(bytes needed) is returned. -1 for an id out of range. */
int infer_detok_push(infer_detok *d, int32_t id, char *out, int size) {
    const infer_tokenizer *t = d->tok;
    int len, total, hold;
    const char *p;
    if (!t || t->kind == INFER_TOK_NONE || id < 0 || id >= t->n_vocab) return -1;
    p = infer__tok_piece(t, id, d->special, &len);
    if (len == 0) return 0;
    if (d->at_start && t->add_space_prefix && p[0] == ' ') { p++; len--; }
    if (d->n_pending + len > size) return -(d->n_pending + len);
    d->at_start = 0;
    memcpy(out, d->pending, (size_t)d->n_pending);
    memcpy(out + d->n_pending, p, (size_t)len);
    total = d->n_pending + len;
    hold = infer__utf8_incomplete_tail((const unsigned char *)out, total);
    memcpy(d->pending, out + total - hold, (size_t)hold);
    d->n_pending = hold;
    return total - hold;
}

/* Writes the bytes still held (an incomplete UTF-8 sequence at the end of the stream). */
int infer_detok_flush(infer_detok *d, char *out, int size) {
    int n = d->n_pending;
    if (n > size) return -n;
    if (n > 0) memcpy(out, d->pending, (size_t)n);
    d->n_pending = 0;
    return n;
}

/* -----------------------------------------------------------------------------------------
 * HF tokenizer.json -> infer__tok_src
 *
 * Supports byte-level BPE tokenizers (model.type "BPE" without byte_fallback: GPT-2,
 * Llama 3, Qwen 2/3, ...). What comes from where:
 *   tokens        model.vocab {text: id} plus added_tokens [{id, content, special}];
 *                 ids missing from both are empty UNUSED tokens
 *   types         vocab entries NORMAL; added tokens CONTROL when "special" or when they
 *                 look special ("<|...|>", "<｜...｜>", "<pad>", "<mask>", "<unused...>"),
 *                 else USER_DEFINED (what convert_hf_to_gguf.py writes)
 *   merges        model.merges, as "a b" strings or ["a", "b"] pairs
 *   pre           the Split regex of pre_tokenizer compared verbatim with the patterns of
 *                 Llama 3 ("llama-bpe"), Qwen 2 ("qwen2") and Qwen 3.5 ("qwen35"); a lone
 *                 ByteLevel pre-tokenizer with use_regex is GPT-2 ("gpt-2"); anything else
 *                 is an error rather than a guess
 *   config        tokenizer_config.json (optional): add_bos_token, add_eos_token and the
 *                 bos/eos/unk/pad token texts (a string or {"content": ...})
 * Ignored: the normalizer (Qwen's NFC; llama.cpp ignores it too), added tokens'
 * lstrip/rstrip/single_word, post_processor templates.
 * --------------------------------------------------------------------------------------- */

typedef struct infer__tok_hf {
    infer__tok_src src;
    infer__json_doc doc, cfg;     /* the token texts point into these */
    const char **tokens, **merges;
    uint64_t *token_lens, *merge_lens;
    int32_t *types;
    char *merge_text;             /* "a b" strings built from ["a", "b"] pairs */
    char pre[16];
} infer__tok_hf;

static void infer__tok_hf_free(infer__tok_hf *h) {
    infer__json_free(&h->doc);
    infer__json_free(&h->cfg);
    INFER_FREE(h->tokens);
    INFER_FREE(h->merges);
    INFER_FREE(h->token_lens);
    INFER_FREE(h->merge_lens);
    INFER_FREE(h->types);
    INFER_FREE(h->merge_text);
    memset(h, 0, sizeof *h);
}

#define INFER__HF_RX_LLAMA3 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}" \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__HF_RX_QWEN2 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}" \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define INFER__HF_RX_QWEN35 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}" \
    "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* the GGUF pre name for a tokenizer.json pre_tokenizer, or NULL */
static const char *infer__hf_pre_name(const infer__json *pre) {
    const char *type = infer__json_str(infer__json_get(pre, "type"));
    const infer__json *list = infer__json_get(pre, "pretokenizers");
    int use_regex = 0;
    if (type && !strcmp(type, "Split")) list = NULL;
    for (uint32_t i = 0; i < (list ? list->len : 1); i++) {
        const infer__json *p = list ? &list->items[i] : pre;
        const char *t = infer__json_str(infer__json_get(p, "type"));
        const char *rx = infer__json_str(infer__json_get(infer__json_get(p, "pattern"), "Regex"));
        if (t && !strcmp(t, "Split") && rx) {
            if (!strcmp(rx, INFER__HF_RX_LLAMA3)) return "llama-bpe";
            if (!strcmp(rx, INFER__HF_RX_QWEN2)) return "qwen2";
            if (!strcmp(rx, INFER__HF_RX_QWEN35)) return "qwen35";
            return NULL;
        }
        if (t && !strcmp(t, "ByteLevel")) infer__json_bool(infer__json_get(p, "use_regex"), &use_regex);
    }
    return use_regex ? "gpt-2" : NULL;
}

static int infer__hf_looks_special(const char *s) {
    size_t n = strlen(s);
    if (!strcmp(s, "<pad>") || !strcmp(s, "<mask>") || !strcmp(s, "<2mass>") || !strcmp(s, "[@BOS@]")) return 1;
    if (n >= 4 && !memcmp(s, "<|", 2) && !memcmp(s + n - 2, "|>", 2)) return 1;
    if (n >= 8 && !memcmp(s, "<\xEF\xBD\x9C", 4) && !memcmp(s + n - 4, "\xEF\xBD\x9C>", 4)) return 1; /* <｜...｜> */
    return n >= 8 && !memcmp(s, "<unused", 7) && s[n - 1] == '>';
}

/* id of the token whose text is a config entry: "text" or {"content": "text"}; -1 if none */
static int32_t infer__hf_token_id(const infer__tok_hf *h, const infer__json *v) {
    const char *text = infer__json_str(v);
    if (!text) text = infer__json_str(infer__json_get(v, "content"));
    if (!text) return -1;
    size_t n = strlen(text);
    for (int32_t i = h->src.n_vocab - 1; i >= 0; i--)
        if (h->token_lens[i] == n && !memcmp(h->tokens[i], text, n)) return i;
    return -1;
}

static int infer__hf_vocab(infer__tok_hf *h, const infer__json *model, const infer__json *added, char *err, size_t errlen) {
    const infer__json *vocab = infer__json_get(model, "vocab");
    int64_t n = 0, id;
    if (!vocab || vocab->type != INFER__JSON_OBJECT) return infer__tok_fail(err, errlen, "tokenizer.json: model.vocab is missing");
    for (uint32_t i = 0; i < vocab->len; i++) {
        if (infer__json_int(&vocab->items[i], &id) < 0 || id < 0 || id >= (1 << 24))
            return infer__tok_fail(err, errlen, "tokenizer.json: bad id for vocab entry %u", i);
        if (id + 1 > n) n = id + 1;
    }
    for (uint32_t i = 0; added && i < added->len; i++) {
        if (infer__json_int(infer__json_get(&added->items[i], "id"), &id) < 0 || id < 0 || id >= (1 << 24) ||
            !infer__json_str(infer__json_get(&added->items[i], "content")))
            return infer__tok_fail(err, errlen, "tokenizer.json: bad added_tokens entry %u", i);
        if (id + 1 > n) n = id + 1;
    }
    h->tokens = (const char **)INFER_MALLOC((size_t)(n ? n : 1) * sizeof *h->tokens);
    h->token_lens = (uint64_t *)INFER_MALLOC((size_t)(n ? n : 1) * sizeof *h->token_lens);
    h->types = (int32_t *)INFER_MALLOC((size_t)(n ? n : 1) * sizeof *h->types);
    if (!h->tokens || !h->token_lens || !h->types) return infer__tok_fail(err, errlen, "out of memory");
    for (int64_t i = 0; i < n; i++) { h->tokens[i] = ""; h->token_lens[i] = 0; h->types[i] = 5; /* unused */ }
    for (uint32_t i = 0; i < vocab->len; i++) {
        id = vocab->items[i].i;
        if (h->types[id] != 5) return infer__tok_fail(err, errlen, "tokenizer.json: id %lld is used twice", (long long)id);
        h->tokens[id] = vocab->items[i].key;
        h->token_lens[id] = vocab->items[i].key_len;
        h->types[id] = 1;
    }
    for (uint32_t i = 0; added && i < added->len; i++) {
        const infer__json *a = &added->items[i];
        int special = 0;
        if (infer__json_int(infer__json_get(a, "id"), &id) < 0) return -1; /* checked above */
        infer__json_bool(infer__json_get(a, "special"), &special);
        h->tokens[id] = infer__json_get(a, "content")->str;
        h->token_lens[id] = infer__json_get(a, "content")->len;
        h->types[id] = special || infer__hf_looks_special(h->tokens[id]) ? 3 : 4;
    }
    h->src.n_vocab = (int32_t)n;
    h->src.tokens = h->tokens;
    h->src.token_lens = h->token_lens;
    h->src.types = h->types;
    return 0;
}

static int infer__hf_merges(infer__tok_hf *h, const infer__json *model, char *err, size_t errlen) {
    const infer__json *m = infer__json_get(model, "merges");
    size_t text = 0, off = 0;
    if (!m || m->type != INFER__JSON_ARRAY) return infer__tok_fail(err, errlen, "tokenizer.json: model.merges is missing");
    for (uint32_t i = 0; i < m->len; i++) { /* room for the pairs spelled as "a b" */
        const infer__json *e = &m->items[i];
        if (e->type == INFER__JSON_STRING) continue;
        if (e->type != INFER__JSON_ARRAY || e->len != 2 || e->items[0].type != INFER__JSON_STRING ||
            e->items[1].type != INFER__JSON_STRING)
            return infer__tok_fail(err, errlen, "tokenizer.json: bad merge at index %u", i);
        text += (size_t)e->items[0].len + e->items[1].len + 1;
    }
    h->merges = (const char **)INFER_MALLOC((size_t)(m->len ? m->len : 1) * sizeof *h->merges);
    h->merge_lens = (uint64_t *)INFER_MALLOC((size_t)(m->len ? m->len : 1) * sizeof *h->merge_lens);
    h->merge_text = (char *)INFER_MALLOC(text ? text : 1);
    if (!h->merges || !h->merge_lens || !h->merge_text) return infer__tok_fail(err, errlen, "out of memory");
    for (uint32_t i = 0; i < m->len; i++) {
        const infer__json *e = &m->items[i];
        if (e->type == INFER__JSON_STRING) { h->merges[i] = e->str; h->merge_lens[i] = e->len; continue; }
        h->merges[i] = h->merge_text + off;
        h->merge_lens[i] = (uint64_t)e->items[0].len + e->items[1].len + 1;
        memcpy(h->merge_text + off, e->items[0].str, e->items[0].len);
        h->merge_text[off + e->items[0].len] = ' ';
        memcpy(h->merge_text + off + e->items[0].len + 1, e->items[1].str, e->items[1].len);
        off += (size_t)h->merge_lens[i];
    }
    h->src.n_merges = (int32_t)m->len;
    h->src.merges = h->merges;
    h->src.merge_lens = h->merge_lens;
    return 0;
}

static void infer__hf_config(infer__tok_hf *h) {
    const infer__json *c = h->cfg.root;
    infer__json_bool(infer__json_get(c, "add_bos_token"), &h->src.add_bos);
    infer__json_bool(infer__json_get(c, "add_eos_token"), &h->src.add_eos);
    h->src.bos = infer__hf_token_id(h, infer__json_get(c, "bos_token"));
    h->src.eos = infer__hf_token_id(h, infer__json_get(c, "eos_token"));
    h->src.unk = infer__hf_token_id(h, infer__json_get(c, "unk_token"));
    h->src.pad = infer__hf_token_id(h, infer__json_get(c, "pad_token"));
}

/* Builds h->src from tokenizer.json text (and tokenizer_config.json text, or NULL).
 * Returns 0, or -1 with a message; h must be freed with infer__tok_hf_free() either way. */
static int infer__tok_src_from_hf_json(infer__tok_hf *h, const char *json, size_t len, const char *cfg_json,
                                       size_t cfg_len, char *err, size_t errlen) {
    const infer__json *model, *pre;
    const char *type, *pre_name;
    int byte_fallback = 0;
    memset(h, 0, sizeof *h);
    h->src.bos = h->src.eos = h->src.eot = h->src.eom = h->src.unk = h->src.pad = -1;
    h->src.sep = h->src.cls = h->src.mask = -1;
    h->src.add_bos = h->src.add_eos = h->src.add_space_prefix = -1;
    if (infer__json_parse(&h->doc, json, len, err, errlen) < 0) return -1;
    if (cfg_json && infer__json_parse(&h->cfg, cfg_json, cfg_len, err, errlen) < 0) return -1;
    model = infer__json_get(h->doc.root, "model");
    type = infer__json_str(infer__json_get(model, "type"));
    if (!type || strcmp(type, "BPE"))
        return infer__tok_fail(err, errlen, "tokenizer.json: model type \"%s\" is not supported (only BPE)", type ? type : "?");
    infer__json_bool(infer__json_get(model, "byte_fallback"), &byte_fallback);
    if (byte_fallback)
        return infer__tok_fail(err, errlen, "tokenizer.json: SentencePiece-style BPE (byte_fallback) is not supported");
    pre = infer__json_get(h->doc.root, "pre_tokenizer");
    pre_name = infer__hf_pre_name(pre);
    if (!pre_name) return infer__tok_fail(err, errlen, "tokenizer.json: unrecognized pre_tokenizer");
    snprintf(h->pre, sizeof h->pre, "%s", pre_name);
    if (infer__hf_vocab(h, model, infer__json_get(h->doc.root, "added_tokens"), err, errlen) < 0) return -1;
    if (infer__hf_merges(h, model, err, errlen) < 0) return -1;
    if (h->cfg.root) infer__hf_config(h);
    h->src.model = "gpt2";
    h->src.pre = h->pre;
    return 0;
}


static int infer__tok_n_vocab(const infer_tokenizer *t) { return t->n_vocab; }
