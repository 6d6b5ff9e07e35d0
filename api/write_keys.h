/*
 * write_keys.h - the streaming writers' one-member helpers (key, then value, written in place),
 * shared by write.c (the compute routes) and write_serve.c (/inference).
 */
#ifndef MEMWALL_API_WRITE_KEYS_H
#define MEMWALL_API_WRITE_KEYS_H

#include <string.h>

#include "api_internal.h"

#define KEY API_JSONW_KEY

/* One object member each: key, then value, written in place with one room check (jsonw.h's
 * inline fast path; the key's length is a compile-time constant once these are inlined). */
static inline void k_int(struct api_jsonw *w, const char *key, size_t klen, int64_t v)
{
    char *p = api_jsonw_room(w, klen + 20);

    if (p != NULL) {
        memcpy(p, key, klen);
        api_jsonw_done(w, api_jsonw_put_int(p + klen, v), true);
    }
}

static inline void k_real(struct api_jsonw *w, const char *key, size_t klen, double v)
{
    char *p = api_jsonw_room(w, klen + 38);

    if (p != NULL) {
        memcpy(p, key, klen);
        p = api_jsonw_put_double(p + klen, v);
        if (p == NULL)
            w->failed = true;
        else
            api_jsonw_done(w, p, true);
    }
}

/* (double)b / 1e9, written from b's digits (api_jsonw_put_gb). */
static inline void k_gb(struct api_jsonw *w, const char *key, size_t klen, int64_t b)
{
    char *p = api_jsonw_room(w, klen + 38);

    if (p != NULL) {
        memcpy(p, key, klen);
        api_jsonw_done(w, api_jsonw_put_gb(p + klen, b), true);
    }
}

static inline void k_str(struct api_jsonw *w, const char *key, size_t klen, const char *s)
{
    api_jsonw_key_encoded(w, key, klen);
    api_jsonw_string(w, s);
}

static inline void k_bool(struct api_jsonw *w, const char *key, size_t klen, bool v)
{
    char *p = api_jsonw_room(w, klen + 5);

    if (p != NULL) {
        memcpy(p, key, klen);
        p += klen;
        if (v) {
            memcpy(p, "true", 4);
            p += 4;
        } else {
            memcpy(p, "false", 5);
            p += 5;
        }
        api_jsonw_done(w, p, true);
    }
}

/* A key and the '{' of its object value. */
static inline void k_open(struct api_jsonw *w, const char *key, size_t klen)
{
    char *p = api_jsonw_room(w, klen + 1);

    if (p != NULL) {
        memcpy(p, key, klen);
        p[klen] = '{';
        api_jsonw_done(w, p + klen + 1, false);
    }
}

/* An expected error (core/validation.c): null where no unseen measured run backs it (< 0). */
static inline void k_error(struct api_jsonw *w, const char *key, size_t klen, double v)
{
    api_jsonw_key_encoded(w, key, klen);
    if (v >= 0)
        api_jsonw_double(w, v);
    else
        api_jsonw_null(w);
}

/* {"bytes":b,"gb":b/1e9,"gib":b/2^30} after its key: the reply's most frequent shape (20 in a
 * /fit reply), written in place with one room check. */
static inline void k_bytes(struct api_jsonw *w, const char *key, size_t klen, int64_t b)
{
    static const char bytes_key[] = "{\"bytes\":", gb_key[] = ",\"gb\":", gib_key[] = ",\"gib\":";
    char *p = api_jsonw_room(w, klen + sizeof bytes_key + 20 + sizeof gb_key + 38 + sizeof gib_key +
                                    38 + 1);

    if (p == NULL)
        return;
    memcpy(p, key, klen);
    p += klen;
    memcpy(p, bytes_key, sizeof bytes_key - 1);
    p = api_jsonw_put_int(p + sizeof bytes_key - 1, b);
    memcpy(p, gb_key, sizeof gb_key - 1);
    p = api_jsonw_put_gb(p + sizeof gb_key - 1, b);
    memcpy(p, gib_key, sizeof gib_key - 1);
    p = api_jsonw_put_double(p + sizeof gib_key - 1, (double)b / 1073741824.0);
    *p++ = '}'; /* both doubles are finite: b is an integer */
    api_jsonw_done(w, p, true);
}

/* A real when present, else null. */
static inline void k_real_if(struct api_jsonw *w, const char *key, size_t klen, bool present,
                             double v)
{
    api_jsonw_key_encoded(w, key, klen);
    if (present)
        api_jsonw_double(w, v);
    else
        api_jsonw_null(w);
}

#endif
