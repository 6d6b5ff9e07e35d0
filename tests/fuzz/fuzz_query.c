/*
 * fuzz_query.c - libFuzzer target: GET query pairs through api_dispatch().
 *
 * The server hands the api already-decoded pairs (libmicrohttpd unescapes %XX), so any byte,
 * NUL included, can reach a key or a value. Input layout: byte 0 picks the route; the rest is
 * split on '&' into pairs and each pair on its first '=' (no '=' means a key without a value,
 * value NULL). Every reply must pass fuzz_check_reply().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

#define PAIRS_MAX 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct api_param pairs[PAIRS_MAX];
    struct api_request req;
    struct api_response resp;
    const char *text;
    size_t count = 0, at = 0, len;

    if (size < 1)
        return 0;
    text = (const char *)data + 1;
    len = size - 1;
    while (at <= len && count < PAIRS_MAX) {
        const char *amp = memchr(text + at, '&', len - at);
        size_t end = amp != NULL ? (size_t)(amp - text) : len;
        const char *eq = memchr(text + at, '=', end - at);
        struct api_param *p = &pairs[count++];

        p->key = text + at;
        p->key_len = eq != NULL ? (size_t)(eq - p->key) : end - at;
        p->value = eq != NULL ? eq + 1 : NULL;
        p->value_len = eq != NULL ? end - (size_t)(eq + 1 - text) : 0;
        at = end + 1;
    }

    memset(&req, 0, sizeof req);
    req.method = (data[0] & 0x80) ? "OPTIONS" : "GET";
    req.path = fuzz_paths[(data[0] & 0x7f) % FUZZ_PATH_COUNT];
    req.query = pairs;
    req.query_count = count;
    memset(&resp, 0, sizeof resp);
    if (api_dispatch(&req, &resp))
        fuzz_check_reply(&resp);
    api_response_free(&resp);
    return 0;
}
