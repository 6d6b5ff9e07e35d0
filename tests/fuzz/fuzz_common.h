/*
 * fuzz_common.h - checks shared by the api fuzz targets: what every reply of api_dispatch()
 * must satisfy whatever the input. A violation aborts, which libFuzzer reports as a crash with
 * the input saved.
 *
 * Header-only (static functions) so each target is one translation unit plus the libraries.
 */
#ifndef MEMWALL_FUZZ_COMMON_H
#define MEMWALL_FUZZ_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api.h"

static void fuzz_fail(const char *what, const struct api_response *resp)
{
    fprintf(stderr, "invariant broken: %s (status %u): %.300s\n", what, resp->status,
            resp->body != NULL ? resp->body : "");
    abort();
}

static void fuzz_walk_finite(json_t *v, const struct api_response *resp)
{
    const char *key;
    json_t *item;
    size_t i;

    if (json_is_object(v)) {
        json_object_foreach (v, key, item)
            fuzz_walk_finite(item, resp);
    } else if (json_is_array(v)) {
        json_array_foreach (v, i, item)
            fuzz_walk_finite(item, resp);
    } else if (json_is_real(v) && !isfinite(json_real_value(v))) {
        fuzz_fail("a non-finite number", resp);
    }
}

/* One reply object: a result (it echoes inputs, or is a catalog) or a problem+json whose status
 * member is a 4xx. */
static void fuzz_check_object(json_t *obj, const struct api_response *resp)
{
    json_t *status = json_object_get(obj, "status");

    if (!json_is_object(obj))
        fuzz_fail("a reply element that is not an object", resp);
    if (json_object_get(obj, "inputs") != NULL || json_object_get(obj, "gpus") != NULL ||
        json_object_get(obj, "models") != NULL)
        return;
    if (!json_is_integer(status) || json_integer_value(status) < 400 ||
        json_integer_value(status) >= 500 || !json_is_string(json_object_get(obj, "type")))
        fuzz_fail("neither a result nor a 4xx problem", resp);
}

/* Never a 5xx; every body is JSON; a 200 is a result, or for a batch an array of results and
 * 4xx problems; an error is problem+json whose status member matches. */
static void fuzz_check_reply(const struct api_response *resp)
{
    json_error_t err;
    json_t *doc, *item;
    size_t i;

    if (resp->status >= 500 || resp->status < 200)
        fuzz_fail("status outside 2xx-4xx", resp);
    if (resp->body_len == 0)
        return; /* 204 / 304 */
    doc = json_loadb(resp->body, resp->body_len, 0, &err);
    if (doc == NULL)
        fuzz_fail("body is not JSON", resp);
    if (resp->status == 200 && json_is_array(doc)) {
        json_array_foreach (doc, i, item)
            fuzz_check_object(item, resp);
    } else if (resp->status == 200) {
        if (json_object_get(doc, "inputs") == NULL && json_object_get(doc, "gpus") == NULL &&
            json_object_get(doc, "models") == NULL)
            fuzz_fail("a 200 without inputs", resp);
    } else if (resp->status >= 400) {
        if (resp->content_type == NULL || strcmp(resp->content_type, "application/problem+json"))
            fuzz_fail("an error that is not problem+json", resp);
        if (json_integer_value(json_object_get(doc, "status")) != (json_int_t)resp->status)
            fuzz_fail("problem status differs from the HTTP status", resp);
    }
    fuzz_walk_finite(doc, resp);
    json_decref(doc);
}

/* The routes the fuzzers aim at, picked by the first input byte. */
static const char *const fuzz_paths[] = {"/fit",       "/memory",        "/flops",  "/runtime",
                                         "/plan",      "/gpus",          "/models", "/nope",
                                         "/inference", "/inference/plan"};
#define FUZZ_PATH_COUNT (sizeof fuzz_paths / sizeof fuzz_paths[0])

#endif
