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

struct api_jsonw {
    char *buf; /* owned; handed over with api_jsonw_take() */
    size_t len, cap;
    bool comma;  /* the next member or element needs a ',' first */
    bool failed; /* sticky */
};

/* An empty writer; allocates on first use. */
void api_jsonw_init(struct api_jsonw *w);
/* Releases the buffer; the writer is empty (and not failed) again. */
void api_jsonw_free(struct api_jsonw *w);

void api_jsonw_open_object(struct api_jsonw *w);
void api_jsonw_close_object(struct api_jsonw *w);
void api_jsonw_open_array(struct api_jsonw *w);
void api_jsonw_close_array(struct api_jsonw *w);
/* An object member's key (borrowed, NUL-terminated); the value call follows. */
void api_jsonw_key(struct api_jsonw *w, const char *key);

/* A key fixed at compile time that needs no escaping, passed already encoded: KEY("name")
 * expands to the two arguments "\"name\":" and its length, written with one copy. */
#define API_JSONW_KEY(lit) ("\"" lit "\":"), (sizeof(lit) + 2)
void api_jsonw_key_encoded(struct api_jsonw *w, const char *encoded, size_t len);

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
