/*
 * batch.c - what every route's body items share: a POST body that is a JSON array answered item
 * by item, in order, by the route's own answer function (a bad item is its problem object in
 * place, carrying its own status, and the batch as a whole is 200: docs/conventions.md,
 * "Batches"); and the two halves around a route's own decoding of one item: the object check
 * and the launch configuration resolved into inputs (launch.h), and the 400 when decoding fails.
 */
#include <stdio.h>

#include "api_internal.h"
#include "launch.h"

json_t *api_item_inputs(const json_t *item, bool inference, struct api_launch *launch,
                        json_t **errors, struct api_jsonw *w, unsigned *status)
{
    json_t *inputs;
    bool contradictory;

    if (!json_is_object(item)) {
        *status = api_answer_problem(
            w, API_E_MALFORMED_JSON,
            "The body must be a JSON object (or, for a batch, an array of them).", NULL);
        return NULL;
    }
    *errors = json_array();
    if (*errors == NULL) {
        *status = api_answer_problem(w, API_E_INTERNAL, "Out of memory.", NULL);
        return NULL;
    }
    inputs = api_launch_resolve(item, inference, launch, *errors, &contradictory);
    if (inputs == NULL)
        *status = contradictory
                      ? api_answer_problem(w, API_E_IMPOSSIBLE_INPUTS,
                                           "The launch configuration contradicts itself.", *errors)
                      : api_answer_invalid(w, *errors);
    return inputs;
}

unsigned api_item_invalid(json_t *inputs, struct api_launch *launch, json_t *errors,
                          struct api_jsonw *w)
{
    api_launch_blame(launch, errors);
    json_decref(inputs);
    api_launch_free(launch);
    return api_answer_invalid(w, errors);
}

void api_reply_batch(const json_t *items, struct api_response *resp, api_batch_answer answer,
                     const void *ctx)
{
    struct api_jsonw w;
    json_t *item;
    size_t i;
    char detail[120];

    if (json_array_size(items) > API_BATCH_MAX) {
        snprintf(detail, sizeof detail, "A batch holds at most %d items; this one has %zu.",
                 API_BATCH_MAX, json_array_size(items));
        api_reply_problem(resp, API_E_INVALID_INPUT, detail, NULL);
        return;
    }
    api_jsonw_init(&w);
    api_jsonw_open_array(&w);
    json_array_foreach (items, i, item) {
        if (w.failed)
            break;
        answer(ctx, item, &w); /* an item's own status is inside its problem body */
    }
    api_jsonw_close_array(&w);
    api_reply_writer(resp, 200, API_CT_JSON, &w);
}
