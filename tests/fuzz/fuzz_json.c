/*
 * fuzz_json.c - libFuzzer target: POST bodies through api_dispatch().
 *
 * Byte 0 picks the route and the Content-Type (plain, with parameters, or wrong); the rest is
 * the body, capped at API_BODY_MAX as the server caps it. Every reply must pass
 * fuzz_check_reply(): malformed JSON, wrong types, duplicate keys and deep nesting all end in
 * a clean 4xx, valid inputs in a 200 with finite numbers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static const char *const content_types[] = {"application/json", "application/json; charset=utf-8",
                                            "text/plain"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_request req;
    struct api_response resp;

    if (size < 1 || size - 1 > API_BODY_MAX)
        return 0;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = fuzz_paths[(data[0] & 0x0f) % FUZZ_PATH_COUNT];
    req.content_type = content_types[((unsigned)data[0] >> 4) % 3];
    req.body = size > 1 ? (const char *)data + 1 : NULL;
    req.body_len = size - 1;
    memset(&resp, 0, sizeof resp);
    if (api_dispatch(&req, &resp))
        fuzz_check_reply(&resp);
    api_response_free(&resp);
    return 0;
}
