/* ------------------------------------------------------------------------------------------
 * >>gguf -- the GGUF container.
 *
 *   "GGUF" u32 version  i64 n_tensors  i64 n_kv
 *   n_kv x      { string key; i32 value_type; value }
 *   n_tensors x { string name; u32 n_dims; i64 ne[n_dims]; i32 type; u64 offset }
 *   padding to general.alignment (default 32)
 *   tensor data: each tensor at data_offset + offset
 *
 *   string = u64 length + bytes (no NUL). array value = i32 elem_type, u64 count, elements.
 *
 * The parser works on bytes in memory (mmap is a separate step) and trusts nothing: every
 * count, length, dimension and offset is checked against the bytes that remain and against
 * overflow before it is used. Errors name the key or tensor and the byte offset.
 * ---------------------------------------------------------------------------------------- */
static const uint8_t infer__gguf_vsize[INFER_GGUF_VTYPE_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

static const char *infer__gguf_vtype_name(int t) {
    static const char *n[] = { "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64" };
    return t >= 0 && t < INFER_GGUF_VTYPE_COUNT ? n[t] : "invalid";
}

/* decode one scalar of type t at p into the kv's union */
static void infer__gguf_scalar(infer_gguf_kv *kv, int t, const uint8_t *p) {
    uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32; float f32; double f64;
    switch (t) {
    case INFER_GGUF_U8: case INFER_GGUF_BOOL: memcpy(&u8, p, 1); kv->v.u = u8; kv->v.i = u8; kv->v.f = u8; break;
    case INFER_GGUF_I8: memcpy(&i8, p, 1); kv->v.i = i8; kv->v.f = i8; break;
    case INFER_GGUF_U16: memcpy(&u16, p, 2); kv->v.u = u16; kv->v.f = u16; break;
    case INFER_GGUF_I16: memcpy(&i16, p, 2); kv->v.i = i16; kv->v.f = i16; break;
    case INFER_GGUF_U32: memcpy(&u32, p, 4); kv->v.u = u32; kv->v.f = u32; break;
    case INFER_GGUF_I32: memcpy(&i32, p, 4); kv->v.i = i32; kv->v.f = i32; break;
    case INFER_GGUF_F32: memcpy(&f32, p, 4); kv->v.f = f32; break;
    case INFER_GGUF_U64: memcpy(&kv->v.u, p, 8); kv->v.f = (double)kv->v.u; break;
    case INFER_GGUF_I64: memcpy(&kv->v.i, p, 8); kv->v.f = (double)kv->v.i; break;
    case INFER_GGUF_F64: memcpy(&f64, p, 8); kv->v.f = f64; break;
    default: break;
    }
}

/* The union stores one representation; these read a numeric kv as the wanted kind. */
static int infer__kv_is_int(const infer_gguf_kv *kv) {
    return kv->type <= INFER_GGUF_I32 || kv->type == INFER_GGUF_BOOL || kv->type == INFER_GGUF_U64 || kv->type == INFER_GGUF_I64;
}
static int64_t infer__kv_int(const infer_gguf_kv *kv) {
    switch (kv->type) {
    case INFER_GGUF_I8: case INFER_GGUF_I16: case INFER_GGUF_I32: case INFER_GGUF_I64: return kv->v.i;
    default: return (int64_t)kv->v.u;
    }
}

static infer_status infer__gguf_read_kv(infer__cursor *c, infer_gguf_kv *kv, infer_error *err) {
    size_t at = c->pos;
    int32_t t;
    if (!infer__read_str(c, &kv->key)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: metadata key at byte %zu runs past the end of the file", at);
    if (kv->key.len == 0) return infer__fail(err, INFER_ERR_FORMAT, "gguf: empty metadata key at byte %zu", at);
    const int kl = kv->key.len > 200 ? 200 : (int)kv->key.len;
    if (!infer__read(c, &t, 4)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': value type past the end of the file", kl, kv->key.ptr);
    if (t < 0 || t >= INFER_GGUF_VTYPE_COUNT)
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s' at byte %zu: invalid value type %d", kl, kv->key.ptr, at, t);
    kv->type = (infer_gguf_vtype)t;
    if (t == INFER_GGUF_STRING) {
        if (!infer__read_str(c, &kv->v.s)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': string value runs past the end of the file", kl, kv->key.ptr);
        return INFER_OK;
    }
    if (t != INFER_GGUF_ARRAY) {
        if (!infer__need(c, infer__gguf_vsize[t])) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': value past the end of the file", kl, kv->key.ptr);
        infer__gguf_scalar(kv, t, c->base + c->pos);
        c->pos += infer__gguf_vsize[t];
        return INFER_OK;
    }
    int32_t et;
    uint64_t n;
    if (!infer__read(c, &et, 4) || !infer__read(c, &n, 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': array header past the end of the file", kl, kv->key.ptr);
    if (et < 0 || et >= INFER_GGUF_VTYPE_COUNT || et == INFER_GGUF_ARRAY)
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': invalid array element type %d", kl, kv->key.ptr, et);
    kv->arr_type = (infer_gguf_vtype)et;
    kv->arr_n = n;
    kv->arr_data = c->base + c->pos;
    if (et == INFER_GGUF_STRING) {              /* walk the strings to find the end */
        if (n > (c->size - c->pos) / 8) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': %llu strings cannot fit in the file", kl, kv->key.ptr, (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) {
            infer_str s;
            if (!infer__read_str(c, &s)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': string %llu runs past the end of the file", kl, kv->key.ptr, (unsigned long long)i);
        }
        return INFER_OK;
    }
    uint64_t bytes;
    if (!infer__mul_ok(n, infer__gguf_vsize[et], &bytes) || !infer__need(c, bytes))
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%.*s': array of %llu %s runs past the end of the file", kl, kv->key.ptr, (unsigned long long)n, infer__gguf_vtype_name(et));
    c->pos += bytes;
    return INFER_OK;
}

static size_t infer__tensor_nbytes(infer_type t, const int64_t *ne, int n_dims) {
    uint64_t rows = 1, b;
    for (int d = 1; d < n_dims; d++) if (!infer__mul_ok(rows, (uint64_t)ne[d], &rows)) return SIZE_MAX;
    if (t == INFER_TYPE_I2_S) {  /* n/4 packed bytes + one f32 scale padded to 32 bytes */
        uint64_t n;
        if (!infer__mul_ok(rows, (uint64_t)ne[0], &n)) return SIZE_MAX;
        return (size_t)(n / 4 + 32);
    }
    if (!infer__mul_ok(rows, infer_type_row_size(t, ne[0]), &b) || b > SIZE_MAX / 2) return SIZE_MAX;
    return (size_t)b;
}

static infer_status infer__gguf_read_tensor(infer__cursor *c, infer_gguf *g, int64_t idx, infer_str *name, infer_error *err) {
    infer_tensor *t = &g->tensors[idx];
    size_t at = c->pos;
    uint32_t nd;
    int32_t type;
    uint64_t off;
    if (!infer__read_str(c, name)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor %lld name at byte %zu runs past the end of the file", (long long)idx, at);
    const int nl = name->len > 200 ? 200 : (int)name->len;
    if (name->len == 0 || name->len >= 64) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor %lld at byte %zu: name length %llu (must be 1..63)", (long long)idx, at, (unsigned long long)name->len);
    if (!infer__read(c, &nd, 4)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': header past the end of the file", nl, name->ptr);
    if (nd < 1 || nd > INFER_MAX_DIMS) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': %u dimensions (must be 1..4)", nl, name->ptr, nd);
    t->n_dims = (int32_t)nd;
    uint64_t total = 1;
    for (int d = 0; d < INFER_MAX_DIMS; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < nd; d++) {
        if (!infer__read(c, &t->ne[d], 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': dims past the end of the file", nl, name->ptr);
        if (t->ne[d] < 0 || !infer__mul_ok(total, (uint64_t)t->ne[d], &total) || total > ((uint64_t)1 << 50))
            return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': dimension %u = %lld is invalid", nl, name->ptr, d, (long long)t->ne[d]);
    }
    if (!infer__read(c, &type, 4) || !infer__read(c, &off, 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': header past the end of the file", nl, name->ptr);
    if (type == 36) type = INFER_TYPE_I2_S;   /* BitNet's fork; upstream removed id 36 */
    if (infer_type_block((infer_type)type) == 0)
        return infer__fail(err, INFER_ERR_UNSUPPORTED, "gguf: tensor '%.*s': unknown or unsupported type id %d", nl, name->ptr, type);
    t->type = (infer_type)type;
    if (t->ne[0] % infer_type_block(t->type) != 0)
        return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': row length %lld is not a multiple of %s's block of %d", nl, name->ptr, (long long)t->ne[0], infer_type_name(t->type), infer_type_block(t->type));
    t->nbytes = infer__tensor_nbytes(t->type, t->ne, t->n_dims);
    if (t->nbytes == SIZE_MAX) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%.*s': size overflows", nl, name->ptr);
    t->data = (const void *)(uintptr_t)off;   /* relative for now; made absolute once data_offset is known */
    t->scale = 1.0f;
    return INFER_OK;
}

infer_status infer_gguf_parse(infer_gguf *g, const void *data, size_t size, infer_error *err) {
    memset(g, 0, sizeof *g);
    infer__cursor c = { (const uint8_t *)data, size, 0 };
    infer_status st = INFER_OK;
    char magic[4];
    uint32_t version;
    struct { char *key; int value; } *map = NULL;
    if (!infer__read(&c, magic, 4) || memcmp(magic, "GGUF", 4) != 0) return infer__fail(err, INFER_ERR_FORMAT, "not a GGUF file (bad magic)");
    if (!infer__read(&c, &version, 4)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: truncated header");
    if ((version & 0xffff) == 0) return infer__fail(err, INFER_ERR_UNSUPPORTED, "gguf: big-endian files are not supported");
    if (version < 2 || version > 3) return infer__fail(err, INFER_ERR_UNSUPPORTED, "gguf: version %u (supported: 2, 3)", version);
    g->version = version;
    if (!infer__read(&c, &g->n_tensors, 8) || !infer__read(&c, &g->n_kv, 8)) return infer__fail(err, INFER_ERR_FORMAT, "gguf: truncated header");
    /* smallest kv is 8+1+4+1 bytes, smallest tensor info 8+1+4+8+4+8: counts beyond that cannot fit */
    if (g->n_kv < 0 || (uint64_t)g->n_kv > size / 14) return infer__fail(err, INFER_ERR_FORMAT, "gguf: metadata count %lld cannot fit in a %zu-byte file", (long long)g->n_kv, size);
    if (g->n_tensors < 0 || (uint64_t)g->n_tensors > size / 33) return infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor count %lld cannot fit in a %zu-byte file", (long long)g->n_tensors, size);
    g->base = (const uint8_t *)data;
    g->size = size;
    g->alignment = 32;
    g->kv = (infer_gguf_kv *)infer__calloc((size_t)g->n_kv, sizeof(infer_gguf_kv));
    g->tensors = (infer_tensor *)infer__calloc((size_t)g->n_tensors, sizeof(infer_tensor));
    g->names = (char *)infer__calloc((size_t)g->n_tensors, 64);
    if (!g->kv || !g->tensors || !g->names) { st = infer__fail(err, INFER_ERR_NOMEM, "gguf: out of memory"); goto fail; }

    for (int64_t i = 0; i < g->n_kv; i++) {
        if ((st = infer__gguf_read_kv(&c, &g->kv[i], err)) != INFER_OK) goto fail;
        for (int64_t j = 0; j < i; j++)
            if (g->kv[j].key.len == g->kv[i].key.len && memcmp(g->kv[j].key.ptr, g->kv[i].key.ptr, g->kv[i].key.len) == 0) {
                st = infer__fail(err, INFER_ERR_FORMAT, "gguf: duplicate key '%.*s'", (int)(g->kv[i].key.len > 200 ? 200 : g->kv[i].key.len), g->kv[i].key.ptr);
                goto fail;
            }
    }
    const infer_gguf_kv *al = infer_gguf_find(g, "general.alignment");
    if (al) {
        if (al->type != INFER_GGUF_U32 || al->v.u == 0 || (al->v.u & (al->v.u - 1)) != 0) {
            st = infer__fail(err, INFER_ERR_FORMAT, "gguf: general.alignment must be a power-of-two u32 (got %s %llu)", infer__gguf_vtype_name(al->type), (unsigned long long)al->v.u);
            goto fail;
        }
        g->alignment = al->v.u;
    }
    for (int64_t i = 0; i < g->n_tensors; i++) {
        infer_str name;
        if ((st = infer__gguf_read_tensor(&c, g, i, &name, err)) != INFER_OK) goto fail;
        char *nm = g->names + 64 * i;
        memcpy(nm, name.ptr, name.len);
        nm[name.len] = 0;
        g->tensors[i].name = nm;
        if (shgeti(map, nm) >= 0) { st = infer__fail(err, INFER_ERR_FORMAT, "gguf: duplicate tensor name '%s'", nm); goto fail; }
        shput(map, nm, (int)i);
    }
    shfree(map);
    map = NULL;
    g->data_offset = (c.pos + g->alignment - 1) / g->alignment * g->alignment;
    for (int64_t i = 0; i < g->n_tensors; i++) {
        infer_tensor *t = &g->tensors[i];
        uint64_t off = (uint64_t)(uintptr_t)t->data, start, end;
        if (off % g->alignment != 0) { st = infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%s': offset %llu is not a multiple of the alignment %llu", t->name, (unsigned long long)off, (unsigned long long)g->alignment); goto fail; }
        if (!infer__add_ok(g->data_offset, off, &start) || !infer__add_ok(start, t->nbytes, &end) || end > size) {
            st = infer__fail(err, INFER_ERR_FORMAT, "gguf: tensor '%s': data [%llu, +%zu) lies outside the %zu-byte file", t->name, (unsigned long long)off, t->nbytes, size);
            goto fail;
        }
        t->data = g->base + start;
        if (t->type == INFER_TYPE_I2_S) {   /* the per-tensor scale follows the packed 2-bit codes */
            uint64_t n = t->nbytes - 32;
            memcpy(&t->scale, g->base + start + n, 4);
        }
    }
    return INFER_OK;
fail:
    shfree(map);
    infer_gguf_free(g);
    return st;
}

void infer_gguf_free(infer_gguf *g) {
    if (g->owner_free) g->owner_free(g->owner);
    INFER_FREE(g->kv);
    INFER_FREE(g->tensors);
    INFER_FREE(g->names);
    memset(g, 0, sizeof *g);
}

const infer_gguf_kv *infer_gguf_find(const infer_gguf *g, const char *key) {
    for (int64_t i = 0; i < g->n_kv; i++) if (infer__str_eq(g->kv[i].key, key)) return &g->kv[i];
    return NULL;
}

const infer_tensor *infer_gguf_tensor(const infer_gguf *g, const char *name) {
    for (int64_t i = 0; i < g->n_tensors; i++) if (strcmp(g->tensors[i].name, name) == 0) return &g->tensors[i];
    return NULL;
}

/* Typed metadata getters. They return 1 when the key exists with a fitting type, 0 when it is
 * absent, -1 (with a message) when it exists with the wrong type. */
static int infer__get_int(const infer_gguf *g, const char *key, int64_t *out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type == INFER_GGUF_ARRAY || !infer__kv_is_int(kv)) { infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s, expected an integer", key, infer__gguf_vtype_name(kv->type)); return -1; }
    *out = infer__kv_int(kv);
    return 1;
}
static int infer__get_float(const infer_gguf *g, const char *key, double *out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type == INFER_GGUF_ARRAY || kv->type == INFER_GGUF_STRING || kv->type == INFER_GGUF_BOOL) { infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s, expected a number", key, infer__gguf_vtype_name(kv->type)); return -1; }
    *out = kv->v.f;
    return 1;
}
static int infer__get_str(const infer_gguf *g, const char *key, infer_str *out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != INFER_GGUF_STRING) { infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s, expected a string", key, infer__gguf_vtype_name(kv->type)); return -1; }
    *out = kv->v.s;
    return 1;
}
static int infer__get_arr(const infer_gguf *g, const char *key, infer_gguf_vtype et, const infer_gguf_kv **out, infer_error *err) {
    const infer_gguf_kv *kv = infer_gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != INFER_GGUF_ARRAY || kv->arr_type != et) {
        infer__fail(err, INFER_ERR_FORMAT, "gguf: key '%s' has type %s%s%s, expected array of %s", key, infer__gguf_vtype_name(kv->type),
                    kv->type == INFER_GGUF_ARRAY ? " of " : "", kv->type == INFER_GGUF_ARRAY ? infer__gguf_vtype_name(kv->arr_type) : "", infer__gguf_vtype_name(et));
        return -1;
    }
    *out = kv;
    return 1;
}
