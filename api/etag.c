/*
 * etag.c - HTTP caching of the api's GET replies: a strong ETag and If-None-Match (304).
 *
 * The tag is a 64-bit hash of the reply body (FNV-1a over 8-byte words, then a final mix),
 * set with Cache-Control on 200 GET/HEAD replies of the cacheable routes (route.h).
 * If-None-Match (a list, "*", or weak tags compared weakly as RFC 9110 asks) turns a match into
 * a bodiless 304.
 */
#include <string.h>

#include "api_internal.h"

#define CACHE_CONTROL "public, max-age=3600"

/* The ETag hash: FNV-1a taken a 64-bit word at a time (eight times fewer multiplications than
 * byte-wise FNV-1a, which cost 9k instructions of a 1.5 KB /fit reply), the tail bytes and the
 * length folded in, then splitmix64's finalizer so every input bit reaches every output bit.
 * Each step (h ^ w) * odd is a bijection of h, so two bodies of the same length that differ in
 * one word always get different tags. Words are read in host byte order: a tag is only ever
 * compared with tags from the same server binary. */
static unsigned long long body_hash(const char *data, size_t len)
{
    const unsigned long long prime = 0x100000001b3ULL;
    unsigned long long h = 0xcbf29ce484222325ULL ^ (unsigned long long)len;
    unsigned long long w;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        memcpy(&w, data + i, 8);
        h = (h ^ w) * prime;
    }
    if (i < len) {
        w = 0;
        memcpy(&w, data + i, len - i);
        h = (h ^ w) * prime;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

/* "\"<16 lowercase hex digits>\"" into out (at least 19 bytes). */
static void format_etag(unsigned long long h, char *out)
{
    static const char hex[] = "0123456789abcdef";

    out[0] = '"';
    for (int i = 0; i < 16; i++)
        out[1 + i] = hex[(h >> (60 - 4 * i)) & 15];
    out[17] = '"';
    out[18] = '\0';
}

/* Does If-None-Match (e.g. `"a", W/"b"` or `*`) match our tag? Weak comparison. */
static bool none_match(const char *header, const char *etag)
{
    size_t n = strlen(etag);
    const char *p = header;

    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '*')
            return true;
        if (strncmp(p, "W/", 2) == 0)
            p += 2;
        if (strncmp(p, etag, n) == 0 &&
            (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == '\t'))
            return true;
        while (*p != '\0' && *p != ',')
            p++;
    }
    return false;
}

void api_etag(const struct api_request *req, struct api_response *resp)
{
    resp->cache_control = CACHE_CONTROL;
    format_etag(body_hash(resp->body, resp->body_len), resp->etag);
    if (req->if_none_match != NULL && none_match(req->if_none_match, resp->etag)) {
        api_response_free(resp);
        resp->status = 304;
        resp->content_type = NULL;
    }
}
