/*
 * api_internal.h - private interfaces between the api layer's files (not for the server).
 *
 * route.c holds the api's route table and answers a request on a row (405, OPTIONS, HEAD);
 * the handlers live by family: compute.c (/flops /memory /fit /runtime, single and batch),
 * plan.c (/plan), catalog.c (/gpus /models). body.c turns a POST body into JSON (media type,
 * size, parse errors); etag.c adds ETag / If-None-Match to cacheable replies.
 * errors.c owns the error registry, the problem helpers and the one function every reply goes
 * through; fields.c owns the input field table (query pairs and JSON objects -> struct
 * core_input); write.c streams the compute routes' replies through jsonw.c (the hot path);
 * plan_reply.c and catalog_reply.c build the /plan, /gpus and /models replies with jansson. Each
 * reply has exactly one encoder; inputs_doc.c encodes GET /inputs.
 */
#ifndef MEMWALL_API_INTERNAL_H
#define MEMWALL_API_INTERNAL_H

#include <jansson.h>

#include "api.h"
#include "core.h"
#include "serve.h"
#include "serve_plan.h"
#include "jsonw.h"
#include "route.h"

/* Every JSON reply is dumped with these flags: compact, 15 significant digits, so 0.1 + 0.2
 * prints 0.3 and integral doubles print as 112.0 (jansson's choice). */
#define API_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

#define API_CT_JSON    "application/json"
#define API_CT_PROBLEM "application/problem+json"

/* At most this many entries in a 400's errors array; beyond it the request is hopeless anyway
 * and the cap bounds the work a hostile query string can cause. */
#define API_ERRORS_MAX 64

/* ---- error registry (errors.c) ---- */

enum api_error {
#define API_ERROR(code, status, slug, title) code,
#include "errors.def"
#undef API_ERROR
    API_ERROR_COUNT
};

unsigned api_error_status(enum api_error code);

/* Append {field, message} to errors (borrowed array). The field is copied through a sanitizer
 * (printable ASCII only, at most 64 bytes) since it may be a client-supplied key. Returns false
 * when the array is already full (API_ERRORS_MAX) or memory ran out. */
bool api_errors_add(json_t *errors, const char *field, size_t field_len, const char *message);

/* Fill resp with a problem+json reply. errors: a JSON array of {field, message}, stolen;
 * NULL means []. detail: a plain sentence without internals. */
void api_reply_problem(struct api_response *resp, enum api_error code, const char *detail,
                       json_t *errors);
/* The problem+json body alone (new reference or NULL), for batch items. errors is stolen. */
json_t *api_problem_body(enum api_error code, const char *detail, json_t *errors);

/* The one function that fills a reply: dumps body (stolen) with API_DUMP_FLAGS into a malloc'd
 * buffer owned by resp. On failure (out of memory) the reply becomes a bodiless 500. */
void api_reply_json(struct api_response *resp, unsigned status, const char *content_type,
                    json_t *body);

/* Fill resp from a writer: its buffer becomes the body (moved; w is left empty). A failed or
 * empty writer makes the reply a bodiless 500, as api_reply_json does. */
struct api_launch; /* launch.h */

/* The front half of answering one body item (batch.c): the item must be an object, and its launch
 * configuration (vllm_args when inference) is resolved into inputs. Returns the inputs with
 * *errors a new empty array and *launch filled (the caller frees all three), or NULL with the
 * problem answered into w and its status in *status (nothing to free). */
json_t *api_item_inputs(const json_t *item, bool inference, struct api_launch *launch,
                        json_t **errors, struct api_jsonw *w, unsigned *status);

/* The item's decoding failed: blame the launch flags that set the bad inputs, free inputs and
 * launch, and answer the 400 (consumes errors, as api_answer_invalid does). */
unsigned api_item_invalid(json_t *inputs, struct api_launch *launch, json_t *errors,
                          struct api_jsonw *w);

/* Answers one item of a batch into w and returns its status (ctx: the route's own state). */
typedef unsigned (*api_batch_answer)(const void *ctx, const json_t *item, struct api_jsonw *w);

/* A batch body: each item of `items` answered in order by `answer` into one 200 array (a 400
 * problem when it holds more than API_BATCH_MAX); items borrowed (batch.c). */
void api_reply_batch(const json_t *items, struct api_response *resp, api_batch_answer answer,
                     const void *ctx);

void api_reply_writer(struct api_response *resp, unsigned status, const char *content_type,
                      struct api_jsonw *w);
/* Dump body (stolen) with API_DUMP_FLAGS into w as one value; NULL or a failed dump fails w. */
void api_write_json(struct api_jsonw *w, json_t *body);

/* One answer is written into a writer as one JSON value (a reply body or a problem body) and
 * its HTTP status returned; out of memory fails the writer. errors: stolen, NULL means []. */
unsigned api_answer_problem(struct api_jsonw *w, enum api_error code, const char *detail,
                            json_t *errors);
/* A 400 invalid-input whose detail counts the entries of errors (stolen). */
unsigned api_answer_invalid(struct api_jsonw *w, json_t *errors);
/* A 422 from core's problems: out-of-range for CORE_ERANGE, else impossible-inputs. */
unsigned api_answer_core_problems(struct api_jsonw *w, enum core_status status,
                                  const struct core_problems *problems);
/* Fill resp from a writer holding one answer: application/json for 200, else problem+json. */
void api_reply_answer(struct api_response *resp, unsigned status, struct api_jsonw *w);

/* ---- request bodies (body.c) ---- */

/* The POST body parsed (new reference), any JSON value; NULL with the problem written into w
 * and its status in *status. An empty body is {}. */
json_t *api_read_body(const struct api_request *req, struct api_jsonw *w, unsigned *status);

/* ---- caching (etag.c) ---- */

/* Give a 200 reply its ETag and Cache-Control; when req's If-None-Match matches, the reply
 * becomes a bodiless 304. */
void api_etag(const struct api_request *req, struct api_response *resp);

/* ---- handlers, one per route (api_handler, route.h) ---- */

api_handler api_handle_flops, api_handle_memory, api_handle_fit, api_handle_runtime;
api_handler api_handle_evaluate;
api_handler api_handle_inference;      /* inference.c: GET|POST /inference (core_serve) */
api_handler api_handle_inference_plan; /* serve_plan.c: POST /inference/plan */
api_handler api_handle_plan;
api_handler api_handle_gpus, api_handle_models, api_handle_inputs;

/* ---- field table (fields.c) ---- */

/* Decode query pairs / a JSON object into *in (already core_input_init'ed). Every problem is
 * appended to errors (borrowed); returns true when there were none. */
bool api_decode_query(const struct api_param *query, size_t count, struct core_input *in,
                      json_t *errors);
bool api_decode_object(const json_t *object, struct core_input *in, json_t *errors);
/* /inference: the serving rows (core_serve_inputs) and the compute rows (into in->base); in must
 * be core_serve_input_init'ed. */
bool api_decode_serve_query(const struct api_param *query, size_t count,
                            struct core_serve_input *in, json_t *errors);
bool api_decode_serve_object(const json_t *object, struct core_serve_input *in, json_t *errors);
/* /plan: the same rows plus its own (deadline_days, budget_usd, gpus_max, gpu lists, prices by
 * GPU); in must be core_plan_input_init'ed. */
bool api_decode_plan_object(const json_t *object, struct core_plan_input *in, json_t *errors);
/* /inference/plan: its own rows (core_serve_plan_inputs), then /inference's; in must be
 * core_serve_plan_input_init'ed. */
bool api_decode_serve_plan_object(const json_t *object, struct core_serve_plan_input *in,
                                  json_t *errors);

/* ---- streaming writers for the compute routes (write.c): each writes one member, key
 * included ("inputs", "flops", ...), into an open object; errors are the writer's (sticky) ---- */

/* source: the launch configuration the inputs came from (inputs.source), NULL for none (the
 * member is then absent); extra: warnings of the launch resolution ([{code, message}]) written
 * after core's, NULL for none. */
void api_write_inputs(struct api_jsonw *w, const struct core_result *r, const char *source);
void api_write_warnings(struct api_jsonw *w, const struct core_result *r, const json_t *extra);
void api_write_flops(struct api_jsonw *w, const struct core_result *r);
void api_write_memory(struct api_jsonw *w, const struct core_result *r);
void api_write_fit(struct api_jsonw *w, const struct core_result *r);
void api_write_advice(struct api_jsonw *w, const struct core_result *r);
void api_write_runtime(struct api_jsonw *w, const struct core_result *r);
void api_write_performance(struct api_jsonw *w, const struct core_result *r);
/* The resolved architecture ("shape"), and a list of notes ("warnings", "advice": with their
 * "change" objects when changes) - shared with write_serve.c. */
void api_write_shape(struct api_jsonw *w, const struct core_shape *s);
void api_write_notes(struct api_jsonw *w, const char *key, size_t klen,
                     const struct core_note *notes, int count, bool changes, const json_t *extra);
/* /inference's members (write_serve.c): "inputs" (the model and the serving inputs, resolved)
 * and "inference". */
void api_write_serve_inputs(struct api_jsonw *w, const struct core_serve_result *r,
                            const char *source);
void api_write_inference(struct api_jsonw *w, const struct core_serve_result *r,
                         const json_t *extra);
/* performance's members for a bare struct core_perf (t NULL: no whole-run figures). */
void api_write_performance_members(struct api_jsonw *w, const struct core_perf *p,
                                   const struct core_runtime *t);

/* ---- jansson encoders of the other replies; each returns a new reference or NULL when out of
 * memory: /plan (plan_reply.c), /gpus and /models (catalog_reply.c) ---- */

json_t *api_encode_plan(const struct core_plan_input *in, const struct core_plan_summary *s,
                        const struct core_plan *plans, const struct core_plan *pareto,
                        double elapsed_seconds);
json_t *api_encode_gpus(void);
/* GET /inputs: the input table (inputs_doc.c). */
json_t *api_encode_input_table(void);
json_t *api_encode_models(void);

#endif
