/* development stub until the real tokenizer lands */
typedef struct infer__tok_src {
    const char *model; const char *pre; int32_t n_vocab;
    const char *const *tokens; const uint64_t *token_lens; const float *scores; const int32_t *types;
    int32_t n_merges; const char *const *merges; const uint64_t *merge_lens;
    int32_t bos, eos, eot, eom, unk, pad, sep, cls, mask;
    int add_bos, add_eos, add_space_prefix;
} infer__tok_src;
struct infer_tokenizer { int32_t n_vocab, bos, eos; };
static int infer__tok_init(infer_tokenizer *t, const infer__tok_src *s, char *err, size_t n) { (void)err; (void)n; t->n_vocab = s->n_vocab; t->bos = s->bos; t->eos = s->eos; return 0; }
void infer_tokenizer_free(infer_tokenizer *t) { (void)t; }
int infer_token_is_eog(const infer_tokenizer *t, int32_t id) { return id == t->eos; }
static int infer__tok_n_vocab(const infer_tokenizer *t) { return t->n_vocab; }
int infer_tokenize(const infer_tokenizer *t, const char *text, size_t len, int add_special, int parse_special, int32_t *out, int max_out) { (void)t; (void)text; (void)len; (void)add_special; (void)parse_special; (void)out; (void)max_out; return -1; }
typedef struct infer_detok { int x; } infer_detok;
void infer_detok_init(infer_detok *d, const infer_tokenizer *t) { (void)d; (void)t; }
int infer_detok_push(infer_detok *d, int32_t id, char *out, int size) { (void)d; (void)id; (void)out; (void)size; return 0; }
int infer_detok_flush(infer_detok *d, char *out, int size) { (void)d; (void)out; (void)size; return 0; }
