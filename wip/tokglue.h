/* glue: GGUF tokenizer.ggml.* keys -> infer__tok_src -> infer_tokenizer */

/* string array -> pointer/length arrays (pointing into the file) */
static infer_status infer__str_array(const infer_gguf_kv *kv, const char ***ptrs, uint64_t **lens, infer_error *err) {
    *ptrs = (const char **)infer__calloc((size_t)kv->arr_n, sizeof(char *));
    *lens = (uint64_t *)infer__calloc((size_t)kv->arr_n, sizeof(uint64_t));
    if (!*ptrs || !*lens) return infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    infer__cursor c = { kv->arr_data, (size_t)-1, 0 };   /* already validated by the parser */
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        infer_str s = { NULL, 0 };
        infer__read_str(&c, &s);
        (*ptrs)[i] = s.ptr;
        (*lens)[i] = s.len;
    }
    return INFER_OK;
}

static infer_status infer__load_tokenizer(infer_model *m, infer_error *err) {
    const infer_gguf *g = &m->gguf;
    infer__tok_src src;
    memset(&src, 0, sizeof src);
    const infer_gguf_kv *tokens = NULL, *scores = NULL, *types = NULL, *merges = NULL;
    infer_str model = { NULL, 0 }, pre = { NULL, 0 };
    char model_z[32] = "", pre_z[64] = "";
    if (infer__get_str(g, "tokenizer.ggml.model", &model, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_str(g, "tokenizer.ggml.pre", &pre, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.tokens", INFER_GGUF_STRING, &tokens, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.scores", INFER_GGUF_F32, &scores, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.token_type", INFER_GGUF_I32, &types, err) < 0) return INFER_ERR_FORMAT;
    if (infer__get_arr(g, "tokenizer.ggml.merges", INFER_GGUF_STRING, &merges, err) < 0) return INFER_ERR_FORMAT;
    if (!tokens || !model.ptr || infer__str_eq(model, "none")) return INFER_OK;      /* ids only */
    if (tokens->arr_n == 0 || tokens->arr_n > INT32_MAX) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.ggml.tokens has %llu entries", (unsigned long long)tokens->arr_n);
    if (scores && scores->arr_n != tokens->arr_n) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.ggml.scores has %llu entries for %llu tokens", (unsigned long long)scores->arr_n, (unsigned long long)tokens->arr_n);
    if (types && types->arr_n != tokens->arr_n) return infer__fail(err, INFER_ERR_FORMAT, "tokenizer.ggml.token_type has %llu entries for %llu tokens", (unsigned long long)types->arr_n, (unsigned long long)tokens->arr_n);
    snprintf(model_z, sizeof model_z, "%.*s", (int)(model.len < 31 ? model.len : 31), model.ptr);
    if (pre.ptr) snprintf(pre_z, sizeof pre_z, "%.*s", (int)(pre.len < 63 ? pre.len : 63), pre.ptr);
    src.model = model_z;
    src.pre = pre.ptr ? pre_z : NULL;
    src.n_vocab = (int32_t)tokens->arr_n;
    const char **tp = NULL, **mp = NULL;
    uint64_t *tl = NULL, *ml = NULL;
    float *sc = NULL;
    int32_t *ty = NULL;
    infer_status st = infer__str_array(tokens, &tp, &tl, err);
    if (st == INFER_OK && merges) {
        if (merges->arr_n > INT32_MAX) st = infer__fail(err, INFER_ERR_FORMAT, "too many merges");
        else st = infer__str_array(merges, &mp, &ml, err);
    }
    if (st == INFER_OK && scores) {   /* copied: array data in the file need not be aligned */
        sc = (float *)infer__calloc((size_t)scores->arr_n, sizeof(float));
        if (sc) memcpy(sc, scores->arr_data, (size_t)scores->arr_n * 4);
    }
    if (st == INFER_OK && types) {
        ty = (int32_t *)infer__calloc((size_t)types->arr_n, sizeof(int32_t));
        if (ty) memcpy(ty, types->arr_data, (size_t)types->arr_n * 4);
    }
    src.tokens = tp; src.token_lens = tl; src.scores = sc; src.types = ty;
    src.n_merges = merges ? (int32_t)merges->arr_n : 0;
    src.merges = mp; src.merge_lens = ml;
    static const char *id_keys[] = { "bos", "eos", "eot", "eom", "unknown", "padding", "seperator", "cls", "mask" };
    int32_t *ids[] = { &src.bos, &src.eos, &src.eot, &src.eom, &src.unk, &src.pad, &src.sep, &src.cls, &src.mask };
    for (int i = 0; i < 9 && st == INFER_OK; i++) {
        char key[64];
        int64_t v;
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", id_keys[i]);
        *ids[i] = -1;
        int r = infer__get_int(g, key, &v, err);
        if (r < 0) st = INFER_ERR_FORMAT;
        else if (r == 1) {
            /* converters write -1 (as u32 0xffffffff) for "none"; any id outside the
             * vocabulary cannot name a token, so it counts as absent */
            if (v >= 0 && v < src.n_vocab) *ids[i] = (int32_t)v;
        }
    }
    static const char *flag_keys[] = { "add_bos_token", "add_eos_token", "add_space_prefix" };
    int *flags[] = { &src.add_bos, &src.add_eos, &src.add_space_prefix };
    for (int i = 0; i < 3 && st == INFER_OK; i++) {
        char key[64];
        snprintf(key, sizeof key, "tokenizer.ggml.%s", flag_keys[i]);
        const infer_gguf_kv *kv = infer_gguf_find(g, key);
        *flags[i] = -1;
        if (kv && kv->type != INFER_GGUF_BOOL) st = infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' must be a bool", key);
        else if (kv) *flags[i] = kv->v.u != 0;
    }
    if (st == INFER_OK && (!tp || (scores && !sc) || (types && !ty))) st = infer__fail(err, INFER_ERR_NOMEM, "out of memory");
    if (st == INFER_OK) {
        m->tok = (infer_tokenizer *)infer__calloc(1, sizeof(infer_tokenizer));
        if (!m->tok) st = infer__fail(err, INFER_ERR_NOMEM, "out of memory");
        else if (infer__tok_init(m->tok, &src, err->msg, sizeof err->msg) != 0) {
            INFER_FREE(m->tok);
            m->tok = NULL;
            err->status = INFER_ERR_FORMAT;
            st = INFER_ERR_FORMAT;
        }
    }
    INFER_FREE(tp); INFER_FREE(tl); INFER_FREE(mp); INFER_FREE(ml); INFER_FREE(sc); INFER_FREE(ty);
    return st;
}
