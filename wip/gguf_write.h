/* Writing GGUF: the inverse of the parser, used by tools/convert. Metadata values are
 * infer_gguf_kv entries (as the parser produces them, or built with infer_gguf_kv_*),
 * tensors are infer_tensor views whose bytes are written at aligned offsets. */
static size_t infer__gguf_arr_bytes(const infer_gguf_kv *kv) {
    if (kv->arr_type != INFER_GGUF_STRING) return (size_t)kv->arr_n * infer__gguf_vsize[kv->arr_type];
    infer__cursor c = { kv->arr_data, (size_t)-1, 0 };
    for (uint64_t i = 0; i < kv->arr_n; i++) { infer_str s = { NULL, 0 }; infer__read_str(&c, &s); }
    return c.pos;
}

static int infer__fput(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n; }
static int infer__fput_str(FILE *f, infer_str s) { return infer__fput(f, &s.len, 8) && infer__fput(f, s.ptr, s.len); }

static int infer__gguf_write_kv(FILE *f, const infer_gguf_kv *kv) {
    int32_t t = kv->type;
    if (!infer__fput_str(f, kv->key) || !infer__fput(f, &t, 4)) return 0;
    uint8_t buf[8];
    switch (kv->type) {
    case INFER_GGUF_STRING: return infer__fput_str(f, kv->v.s);
    case INFER_GGUF_ARRAY: {
        int32_t et = kv->arr_type;
        return infer__fput(f, &et, 4) && infer__fput(f, &kv->arr_n, 8) && infer__fput(f, kv->arr_data, infer__gguf_arr_bytes(kv));
    }
    case INFER_GGUF_F32: { float x = (float)kv->v.f; memcpy(buf, &x, 4); break; }
    case INFER_GGUF_F64: memcpy(buf, &kv->v.f, 8); break;
    case INFER_GGUF_I8: case INFER_GGUF_I16: case INFER_GGUF_I32: case INFER_GGUF_I64: memcpy(buf, &kv->v.i, 8); break;
    default: memcpy(buf, &kv->v.u, 8); break;   /* little-endian: the low bytes come first */
    }
    return infer__fput(f, buf, infer__gguf_vsize[kv->type]);
}

infer_status infer_gguf_write(const char *path, const infer_gguf_kv *kv, int64_t n_kv, const infer_tensor *tensors, int64_t n_tensors,
                              uint32_t alignment, infer_error *err) {
    if (!alignment || (alignment & (alignment - 1))) return infer__fail(err, INFER_ERR_ARG, "alignment %u is not a power of two", alignment);
    FILE *f = fopen(path, "wb");
    if (!f) return infer__fail(err, INFER_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
    uint32_t version = 3;
    int ok = infer__fput(f, "GGUF", 4) && infer__fput(f, &version, 4) && infer__fput(f, &n_tensors, 8) && infer__fput(f, &n_kv, 8);
    for (int64_t i = 0; ok && i < n_kv; i++) ok = infer__gguf_write_kv(f, &kv[i]);
    uint64_t off = 0;
    for (int64_t i = 0; ok && i < n_tensors; i++) {
        const infer_tensor *t = &tensors[i];
        infer_str name = { t->name, strlen(t->name) };
        uint32_t nd = (uint32_t)t->n_dims;
        int32_t type = t->type == INFER_TYPE_I2_S ? 36 : (int32_t)t->type;
        ok = infer__fput_str(f, name) && infer__fput(f, &nd, 4) && infer__fput(f, t->ne, 8 * nd) && infer__fput(f, &type, 4) && infer__fput(f, &off, 8);
        off += (t->nbytes + alignment - 1) / alignment * alignment;
    }
    static const uint8_t zeros[256];
    long pos = ftell(f);
    size_t pad = (alignment - (size_t)pos % alignment) % alignment;
    while (ok && pad) { size_t k = pad < sizeof zeros ? pad : sizeof zeros; ok = infer__fput(f, zeros, k); pad -= k; }
    for (int64_t i = 0; ok && i < n_tensors; i++) {
        ok = infer__fput(f, tensors[i].data, tensors[i].nbytes);
        pad = (alignment - tensors[i].nbytes % alignment) % alignment;
        while (ok && pad) { size_t k = pad < sizeof zeros ? pad : sizeof zeros; ok = infer__fput(f, zeros, k); pad -= k; }
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok) return infer__fail(err, INFER_ERR_IO, "error writing '%s': %s", path, strerror(errno));
    return INFER_OK;
}

/* metadata builders for writers (the strings must outlive the write) */
infer_gguf_kv infer_gguf_kv_u32(const char *key, uint32_t v) {
    infer_gguf_kv kv;
    memset(&kv, 0, sizeof kv);
    kv.key.ptr = key; kv.key.len = strlen(key); kv.type = INFER_GGUF_U32; kv.v.u = v;
    return kv;
}
infer_gguf_kv infer_gguf_kv_f32(const char *key, float v) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, 0);
    kv.type = INFER_GGUF_F32; kv.v.f = v;
    return kv;
}
infer_gguf_kv infer_gguf_kv_bool(const char *key, int v) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, v != 0);
    kv.type = INFER_GGUF_BOOL;
    return kv;
}
infer_gguf_kv infer_gguf_kv_str(const char *key, const char *v) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, 0);
    kv.type = INFER_GGUF_STRING; kv.v.s.ptr = v; kv.v.s.len = strlen(v);
    return kv;
}
/* an array whose elements are already encoded as GGUF stores them (strings: u64 len + bytes) */
infer_gguf_kv infer_gguf_kv_array(const char *key, infer_gguf_vtype et, uint64_t n, const void *encoded) {
    infer_gguf_kv kv = infer_gguf_kv_u32(key, 0);
    kv.type = INFER_GGUF_ARRAY; kv.arr_type = et; kv.arr_n = n; kv.arr_data = (const uint8_t *)encoded;
    return kv;
}
