/*
 * fuzz_args.c - libFuzzer target: the argument splitter (api/argsplit.c) and megatron_args.
 *
 * The input is an argument string. Invariants: the split never reads or writes out of bounds
 * (ASan), yields at most API_ARGS_MAX words, and re-splitting the words each single-quoted
 * gives the same words back; sent as megatron_args to /fit and as vllm_args to /inference the
 * replies pass fuzz_check_reply() (a result or a 4xx problem, never a 5xx, NaN or crash).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argsplit.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The words single-quoted ('\'' for a quote) and joined: a string that splits back to them. */
static char *requote(const struct api_words *w, size_t *len)
{
    size_t cap = 1, n = 0;
    char *out;

    for (size_t i = 0; i < w->count; i++)
        cap += 4 * strlen(w->word[i]) + 3;
    out = malloc(cap);
    if (out == NULL)
        abort();
    for (size_t i = 0; i < w->count; i++) {
        out[n++] = '\'';
        for (const char *p = w->word[i]; *p != '\0'; p++) {
            if (*p == '\'') {
                memcpy(out + n, "'\\''", 4);
                n += 4;
            } else
                out[n++] = *p;
        }
        out[n++] = '\'';
        out[n++] = ' ';
    }
    *len = n;
    return out;
}

static void round_trip(const struct api_words *w)
{
    struct api_words again;
    size_t len, at;
    const char *why;
    char *text = requote(w, &len);

    if (!api_split_args(text, len, &again, &at, &why) || again.count != w->count)
        abort();
    for (size_t i = 0; i < w->count; i++)
        if (strcmp(again.word[i], w->word[i]) != 0)
            abort();
    api_words_free(&again);
    free(text);
}

static void dispatch(const char *text, size_t size, const char *member, const char *path)
{
    json_t *s = json_stringn(text, size), *body;
    struct api_request req;
    struct api_response resp;
    char *dumped;

    if (s == NULL)
        return; /* not UTF-8: a JSON body could not carry it */
    body = json_pack("{s:o}", member, s);
    dumped = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (dumped == NULL)
        return;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = path;
    req.body = dumped;
    req.body_len = strlen(dumped);
    req.content_type = "application/json";
    memset(&resp, 0, sizeof resp);
    if (api_dispatch(&req, &resp))
        fuzz_check_reply(&resp);
    api_response_free(&resp);
    free(dumped);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_words w;
    size_t at;
    const char *why;

    if (api_split_args((const char *)data, size, &w, &at, &why)) {
        if (w.count > API_ARGS_MAX)
            abort();
        for (size_t i = 0; i < w.count; i++)
            if (strlen(w.word[i]) > size)
                abort();
        if (memchr(data, '\0', size) == NULL)
            round_trip(&w);
        api_words_free(&w);
    } else if (at > size) {
        abort();
    }
    dispatch((const char *)data, size, "megatron_args", "/fit");
    dispatch((const char *)data, size, "vllm_args", "/inference");
    return 0;
}
