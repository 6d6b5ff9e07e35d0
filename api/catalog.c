/*
 * catalog.c - GET /gpus, /models and /inputs: the built-in catalogs and the input table (core/),
 * encoded by catalog_reply.c and inputs_doc.c.
 *
 * They take no inputs, and unknown names are errors everywhere, so any query parameter is a
 * 400 naming it. Replies are cacheable (route.c marks the rows; etag.c adds the tag).
 */
#include "api_internal.h"

static void catalog(json_t *(*encode)(void), const struct api_request *req,
                    struct api_response *resp)
{
    json_t *errors;

    if (req->query_count > 0) {
        errors = json_array();
        for (size_t i = 0; errors != NULL && i < req->query_count; i++)
            api_errors_add(errors, req->query[i].key, req->query[i].key_len, "unknown input");
        api_reply_problem(resp, API_E_INVALID_INPUT, "This resource takes no inputs.", errors);
        return;
    }
    api_reply_json(resp, 200, API_CT_JSON, encode());
}

void api_handle_gpus(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    catalog(api_encode_gpus, req, resp);
}

void api_handle_models(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    catalog(api_encode_models, req, resp);
}

void api_handle_inputs(const struct api_request *req, struct api_response *resp, void *ctx)
{
    (void)ctx;
    catalog(api_encode_input_table, req, resp);
}
