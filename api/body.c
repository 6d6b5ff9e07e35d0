/*
 * body.c - a POST body turned into a JSON value, or the problem that says why not.
 *
 * Rules, in the order they are checked: a POST does not also take query parameters (400: one
 * request, one source of inputs); at most API_BODY_MAX bytes (413); an empty body means {}
 * (every input at its default) whatever its Content-Type, so `curl -X POST` works; otherwise
 * Content-Type must be application/json, any case, parameters allowed (415); the body is
 * parsed with JSON_REJECT_DUPLICATES, and a parse error is a 400 naming line and column in our
 * own words (jansson's messages never reach clients). A JSON number beyond double range
 * (1e309) fails in the parser, so it is a malformed-json 400, not a field error; as a string
 * ("1e309") it is a field error like the query. Whether the value must be an object or may be
 * a batch array is the handler's call.
 */
#include <stdio.h>
#include <strings.h>

#include "api_internal.h"

/* "application/json", any case, optionally followed by parameters ("; charset=utf-8"). */
static bool is_json_media_type(const char *ct)
{
    static const char want[] = "application/json";
    size_t n = sizeof want - 1;

    if (ct == NULL)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    if (strncasecmp(ct, want, n) != 0)
        return false;
    ct += n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

/* Our own words for jansson's error codes: library messages never reach clients. */
static const char *json_problem(const json_error_t *err)
{
    switch (json_error_code(err)) {
    case json_error_premature_end_of_input:
        return "unexpected end of input";
    case json_error_end_of_input_expected:
        return "unexpected data after the JSON value";
    case json_error_invalid_utf8:
        return "invalid UTF-8";
    case json_error_null_character:
    case json_error_null_byte_in_key:
        return "NUL character";
    case json_error_duplicate_key:
        return "duplicate object key";
    case json_error_numeric_overflow:
        return "number out of range";
    case json_error_stack_overflow:
        return "nested too deeply";
    default:
        return "invalid JSON syntax";
    }
}

json_t *api_read_body(const struct api_request *req, struct api_jsonw *w, unsigned *status)
{
    json_error_t jerr;
    char detail[160];
    json_t *body, *errors;

    if (req->query_count > 0) {
        errors = json_array();
        for (size_t i = 0; errors != NULL && i < req->query_count; i++)
            api_errors_add(errors, req->query[i].key, req->query[i].key_len,
                           "query parameters are not accepted with POST; put inputs in the "
                           "JSON body");
        *status = api_answer_problem(w, API_E_INVALID_INPUT,
                                     "POST takes its inputs from the JSON body.", errors);
        return NULL;
    }
    if (req->body_len > API_BODY_MAX) {
        snprintf(detail, sizeof detail, "The request body exceeds %d bytes.", API_BODY_MAX);
        *status = api_answer_problem(w, API_E_BODY_TOO_LARGE, detail, NULL);
        return NULL;
    }
    if (req->body_len == 0)
        return json_object(); /* every input at its default, so `curl -X POST` works */
    if (!is_json_media_type(req->content_type)) {
        *status = api_answer_problem(w, API_E_UNSUPPORTED_MEDIA_TYPE,
                                     "POST bodies must be Content-Type: application/json.", NULL);
        return NULL;
    }
    body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (body == NULL) {
        if (json_error_code(&jerr) == json_error_out_of_memory) {
            *status = api_answer_problem(w, API_E_INTERNAL, "Out of memory.", NULL);
            return NULL;
        }
        snprintf(detail, sizeof detail, "Malformed JSON at line %d, column %d: %s.", jerr.line,
                 jerr.column, json_problem(&jerr));
        *status = api_answer_problem(w, API_E_MALFORMED_JSON, detail, NULL);
    }
    return body;
}
