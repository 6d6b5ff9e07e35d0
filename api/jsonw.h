/*
 * jsonw.h - a streaming JSON writer for the hot replies (the compute routes and their batches).
 *
 * Why not jansson here: building a tree of ~150 heap objects per reply and then dumping it cost
 * ~500k of the ~650k instructions of a GET /fit (docs/performance.md). This writer appends
 * members straight into one growable buffer, which becomes the response body without a copy.
 * Its bytes are exactly jansson's with API_DUMP_FLAGS (compact, "%.15g" reals with jansson's
 * ".0" and exponent rules, jansson's string escapes); tests/api proves it reply by reply
 * against the jansson encoders and number by number against json_dumps.
 *
 * Errors are sticky: out of memory, a non-finite double (jansson refuses those too) or a string
 * that is not valid UTF-8 sets failed, later calls do nothing, and the caller answers 500.
 */
#ifndef MEMWALL_JSONW_H
#define MEMWALL_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct api_jsonw {
    char *buf; /* owned; handed over with api_jsonw_take() */
    size_t len, cap;
    bool comma;    /* the next member or element needs a ',' first */
    bool failed;   /* sticky */
    bool borrowed; /* buf is the caller's storage (api_jsonw_init_buffer), not to be freed */
};

/* An empty writer; allocates on first use. */
void api_jsonw_init(struct api_jsonw *w);
/* An empty writer over the caller's storage (e.g. a stack array): no allocation while the text
 * fits in size bytes; past it the text moves to the heap. Never hand such a buffer over. */
void api_jsonw_init_buffer(struct api_jsonw *w, char *buf, size_t size);
/* Releases the buffer; the writer is empty (and not failed) again. */
void api_jsonw_free(struct api_jsonw *w);

void api_jsonw_open_object(struct api_jsonw *w);
static inline void api_jsonw_close_object(struct api_jsonw *w);
void api_jsonw_open_array(struct api_jsonw *w);
void api_jsonw_close_array(struct api_jsonw *w);
/* An object member's key (borrowed, NUL-terminated); the value call follows. */
void api_jsonw_key(struct api_jsonw *w, const char *key);

/* A key fixed at compile time that needs no escaping, passed already encoded: KEY("name")
 * expands to the two arguments "\"name\":" and its length, written with one copy. */
#define API_JSONW_KEY(lit) ("\"" lit "\":"), (sizeof(lit) + 2)

/* ---- The inline fast path --------------------------------------------------------------------
 * A reply is ~250 members; a call per key and per value into jsonw.c cost more than the bytes
 * themselves. These let a caller write a whole member (or a fixed run of them) in place: one
 * room check, the bytes, one store of the new length. */

/* The slow half of api_jsonw_room(): grow the buffer to hold n more bytes; false (and failed)
 * when out of memory. */
bool api_jsonw_grow(struct api_jsonw *w, size_t n);

/* Where at most n bytes of one key or value (or a run of members) go, after the separator from
 * the previous sibling (room for both in one check); NULL when failed. The caller writes its
 * bytes there and calls api_jsonw_done(). */
static inline char *api_jsonw_room(struct api_jsonw *w, size_t n)
{
    char *p;

    if (w->failed || (w->cap - w->len < n + 1 && !api_jsonw_grow(w, n + 1)))
        return NULL;
    p = w->buf + w->len;
    if (w->comma)
        *p++ = ',';
    return p;
}

/* The bytes up to end are written; comma: whether the next sibling needs a separator (false
 * after a key or an opening bracket). */
static inline void api_jsonw_done(struct api_jsonw *w, char *end, bool comma)
{
    w->len = (size_t)(end - w->buf);
    w->comma = comma;
}

/* v in decimal at p (at most 20 bytes); returns the end. */
char *api_jsonw_put_int(char *p, int64_t v);
/* (double)b / 1e9 as api_jsonw_put_double writes it, from b's digits (at most 38 bytes). */
char *api_jsonw_put_gb(char *p, int64_t b);
/* v as api_jsonw_double writes it at p (at most 38 bytes); returns the end, or NULL when v is
 * NaN or infinite (the caller then marks the writer failed). */
char *api_jsonw_put_double(char *p, double v);

/* Inline: ~45 objects close in a /fit reply. */
static inline void api_jsonw_close_object(struct api_jsonw *w)
{
    if (!w->failed && (w->cap - w->len >= 1 || api_jsonw_grow(w, 1)))
        w->buf[w->len++] = '}';
    w->comma = true;
}

/* A pre-encoded key (API_JSONW_KEY): inline, so the copy of a compile-time length is a few
 * moves. */
static inline void api_jsonw_key_encoded(struct api_jsonw *w, const char *encoded, size_t len)
{
    char *p = api_jsonw_room(w, len);

    if (p != NULL) {
        memcpy(p, encoded, len);
        api_jsonw_done(w, p + len, false);
    }
}

/* Values. string: NUL-terminated, NULL writes null. */
void api_jsonw_string(struct api_jsonw *w, const char *s);
void api_jsonw_int(struct api_jsonw *w, int64_t v);
void api_jsonw_bool(struct api_jsonw *w, bool v);
void api_jsonw_null(struct api_jsonw *w);
void api_jsonw_double(struct api_jsonw *w, double v);
/* A complete JSON value already encoded (borrowed bytes), e.g. a problem body from jansson. */
void api_jsonw_raw(struct api_jsonw *w, const char *json, size_t len);

/* Appends bytes as they are, no separator: for a dump callback after api_jsonw_raw(w, "", 0)
 * has placed the separator. */
void api_jsonw_append(struct api_jsonw *w, const char *bytes, size_t len);

/* x as jansson dumps a real with JSON_REAL_PRECISION(15) into out (at least 32 bytes, not
 * NUL-terminated); returns the length, or 0 when x is NaN or infinite. */
size_t api_jsonw_format_double(double x, char *out);

#endif
