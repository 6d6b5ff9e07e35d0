/*
 * fuzz_toml.c - libFuzzer target: the TOML subset (api/toml.c) and torchtitan_config.
 *
 * The input is a TOML text. Invariants: the parser never reads out of bounds (ASan), returns an
 * object or a line number within the text (1 .. lines + 1); sent as torchtitan_config to /fit
 * with 8 GPUs, the reply passes fuzz_check_reply().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[160];
    int line = 0, lines = 1;
    json_t *doc = api_toml_parse((const char *)data, size, &line, why, sizeof why), *s, *body;
    struct api_request req;
    struct api_response resp;
    char *dumped;

    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (doc != NULL) {
        if (!json_is_object(doc))
            abort();
        json_decref(doc);
    } else if (line < 1 || line > lines || strlen(why) == 0) {
        abort();
    }
    s = json_stringn((const char *)data, size);
    if (s == NULL)
        return 0;
    body = json_pack("{s:i,s:o}", "gpus", 8, "torchtitan_config", s);
    dumped = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (dumped == NULL)
        return 0;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "/fit";
    req.body = dumped;
    req.body_len = strlen(dumped);
    req.content_type = "application/json";
    memset(&resp, 0, sizeof resp);
    if (api_dispatch(&req, &resp))
        fuzz_check_reply(&resp);
    api_response_free(&resp);
    free(dumped);
    return 0;
}
