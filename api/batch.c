/*
 * batch.c - a POST body that is a JSON array: each item answered on its own, in order, by the
 * route's own answer function; a bad item is its problem object in place (carrying its own
 * status) and the batch as a whole is 200 (docs/conventions.md, "Batches").
 */
#include <stdio.h>

#include "api_internal.h"

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
