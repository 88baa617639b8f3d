/* =========================================================================================
 * PUBLIC PART
 * ========================================================================================= */

/* Which algorithm turns text into ids (GGUF `tokenizer.ggml.model`). */
typedef enum infer_tok_kind {
    INFER_TOK_NONE = 0, /* "none"/"no_vocab": the model has no vocabulary */
    INFER_TOK_SPM,      /* "llama": SentencePiece BPE, merges ranked by token score */
    INFER_TOK_BPE,      /* "gpt2":  byte-level BPE, merges ranked by merge-list index */
    INFER_TOK_WPM       /* "bert":  WordPiece, greedy longest match */
} infer_tok_kind;

/* Byte-string -> int32 hash table (open addressing, linear probing). Keys live in the
 * tokenizer's arena and may contain any byte, which is why this is not an stb_ds map
 * (stb_ds string keys stop at NUL). `aux` distinguishes keys with equal bytes: merges use
 * it for the length of the left half. A slot with value < 0 is empty. */
typedef struct infer__tok_slot { uint32_t hash, off, len; int32_t aux, value; } infer__tok_slot;
typedef struct infer__tok_map { infer__tok_slot *slots; uint32_t mask, count; } infer__tok_map;

struct infer__regex;

/* A loaded tokenizer. Filled by infer__tok_init(); read-only afterwards, so one tokenizer
 * can serve many threads. The fields above `internals` are the public ones. */
typedef struct infer_tokenizer {
    infer_tok_kind kind;
    int32_t n_vocab;
    int32_t bos, eos, eot, eom, unk, pad, sep, mask;  /* special ids, -1 = none */
    int add_bos, add_eos, add_space_prefix;           /* resolved flags (0/1) */
    int32_t max_token_len;   /* longest token text in bytes */
    int32_t max_piece_len;   /* longest infer_token_to_piece() result in bytes */
    char pre[32];            /* BPE pre-tokenizer in use, e.g. "llama-bpe" ("" otherwise) */
    /* internals */
    int32_t pre_def;         /* index into infer__pre_defs */
    int ignore_merges;       /* BPE: a whole pre-token that is a vocab entry skips merging */
    int clean_spaces;        /* infer_detokenize: drop the space in " ." " ," " 's" ... */
    char *arena;             /* token texts, merge keys, decoded pieces */
    uint32_t *text_off;      /* [n_vocab+1] token i's text is arena[text_off[i], text_off[i+1]) */
    uint32_t *piece_off;     /* [n_vocab+1] likewise for its decoded bytes */
    uint8_t *attr;           /* [n_vocab] INFER__TOK_* attribute bits */
    float *score;            /* [n_vocab] SPM merge priority (NULL: all 0) */
    infer__tok_map vocab;    /* text -> id */
    infer__tok_map merges;   /* left||right (aux = left length) -> rank */
    int32_t *specials;       /* ids of control/user-defined/unknown tokens, longest text first */
    int32_t n_specials;
    int32_t byte_token[256]; /* SPM byte fallback: id of "<0xXX>", -1 if absent */
    struct infer__regex **regex; /* BPE pre-tokenizer, applied in order */
    int32_t n_regex;
} infer_tokenizer;

/* Streaming detokenizer state: see infer_detok_push(). */
typedef struct infer_detok {
    const infer_tokenizer *tok;
    int special;             /* render control tokens' texts (default 0: they print nothing) */
    int at_start;            /* nothing emitted yet (the SPM leading space is still to strip) */
    int n_pending;
    unsigned char pending[4]; /* the start of a UTF-8 sequence whose other bytes are to come */
} infer_detok;

void infer_tokenizer_free(infer_tokenizer *t);
/* text -> ids. add_special: BOS/EOS as the model's flags say (WPM: CLS ... SEP);
 * parse_special: control-token texts in `text` become those tokens. Returns the token
 * count (only the first max_out are written: a larger result asks for a bigger array),
 * -1 if the model has no vocabulary or the arguments are bad. */
int  infer_tokenize(const infer_tokenizer *t, const char *text, size_t len, int add_special,
                    int parse_special, int32_t *out, int max_out);
/* the bytes one token stands for ("" for control tokens unless special); returns the
 * count, writes nothing when it exceeds size; -1 for a bad id. Not NUL-terminated. */
int  infer_token_to_piece(const infer_tokenizer *t, int32_t id, int special, char *buf, int size);
/* ids -> text in one go, as llama_detokenize (clean-up of spaces included); returns the
 * byte count, writes nothing when it exceeds size; -1 for a bad id. */
int  infer_detokenize(const infer_tokenizer *t, const int32_t *ids, int n, int remove_special,
                      int unparse_special, char *out, int size);
/* streaming: push ids as they are generated, get back complete UTF-8 only */
void infer_detok_init(infer_detok *d, const infer_tokenizer *t);
int  infer_detok_push(infer_detok *d, int32_t id, char *out, int size);
int  infer_detok_flush(infer_detok *d, char *out, int size);
/* end of generation: eos, eot, eom and the tokens llama.cpp recognises by text */
int  infer_token_is_eog(const infer_tokenizer *t, int32_t id);
int  infer_token_is_control(const infer_tokenizer *t, int32_t id);

