/*
 * errors.c - the error registry, RFC 9457 problem bodies and the reply functions.
 *
 * Why one registry: the problem code decides the HTTP status, slug and title, so a handler can
 * never send a 422 titled "Not found". Why one reply function: every body is dumped with the
 * same flags (byte-identical GET/POST replies) into memory the response owns, and out-of-memory
 * degrades to a bodiless 500 instead of a half-written reply. api_reply_json takes a jansson
 * value, api_reply_writer a streamed body (jsonw.h) with the same bytes and the same 500 rule;
 * api_write_json dumps a jansson value into a writer. Problem bodies never carry
 * library messages or pointers: details are our own sentences.
 *
 * The api_answer_* helpers write one answer (a problem body) into a writer and return its
 * status: a single request replies with the writer's bytes (api_reply_answer), a batch writes
 * each item's answer as one element of its reply array.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"

#define PROBLEM_TYPE_BASE "https://memwall.dev/problems/"

struct error_entry {
    unsigned status;
    const char *slug;
    const char *title;
};

static const struct error_entry registry[API_ERROR_COUNT] = {
#define API_ERROR(code, status, slug, title) [code] = {status, slug, title},
#include "errors.def"
#undef API_ERROR
};

unsigned api_error_status(enum api_error code)
{
    return registry[code].status;
}

/* Client-supplied names may hold any byte (the server decodes %xx): keep printable ASCII only
 * so the JSON string is valid UTF-8 and log/terminal safe, and cap the length. */
#define FIELD_SHOWN_MAX 64

bool api_errors_add(json_t *errors, const char *field, size_t field_len, const char *message)
{
    char shown[FIELD_SHOWN_MAX + 4];
    size_t n = field_len < FIELD_SHOWN_MAX ? field_len : FIELD_SHOWN_MAX;
    size_t i;
    json_t *entry;

    if (json_array_size(errors) >= API_ERRORS_MAX)
        return false;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)field[i];
        shown[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (field_len > FIELD_SHOWN_MAX) {
        memcpy(shown + n, "...", 3);
        n += 3;
    }
    entry = json_pack("{s:s%,s:s}", "field", shown, n, "message", message);
    if (entry == NULL) /* a message quoting client bytes that are not UTF-8: never lose the error */
        entry = json_pack("{s:s%,s:s}", "field", shown, n, "message", "invalid value");
    return entry != NULL && json_array_append_new(errors, entry) == 0;
}

void api_reply_json(struct api_response *resp, unsigned status, const char *content_type,
                    json_t *body)
{
    size_t len = body ? json_dumpb(body, NULL, 0, API_DUMP_FLAGS) : 0;
    char *buf = len ? malloc(len) : NULL;

    resp->status = status;
    resp->content_type = content_type;
    resp->body = NULL;
    resp->body_len = 0;
    if (buf == NULL || json_dumpb(body, buf, len, API_DUMP_FLAGS) != len) {
        /* Out of memory (or a value jansson cannot dump): nothing sensible left to say. */
        free(buf);
        resp->status = 500;
        resp->content_type = API_CT_PROBLEM;
    } else {
        resp->body = buf;
        resp->body_len = len;
    }
    json_decref(body);
}

void api_reply_writer(struct api_response *resp, unsigned status, const char *content_type,
                      struct api_jsonw *w)
{
    resp->status = status;
    resp->content_type = content_type;
    resp->body = NULL;
    resp->body_len = 0;
    if (w->failed || w->len == 0) {
        resp->status = 500; /* as in api_reply_json: nothing sensible left to say */
        resp->content_type = API_CT_PROBLEM;
        api_jsonw_free(w);
        return;
    }
    resp->body = w->buf;
    resp->body_len = w->len;
    api_jsonw_init(w);
}

static int append_dump(const char *buffer, size_t size, void *data)
{
    api_jsonw_append(data, buffer, size);
    return ((struct api_jsonw *)data)->failed ? -1 : 0;
}

void api_write_json(struct api_jsonw *w, json_t *body)
{
    api_jsonw_raw(w, "", 0); /* the separator, if any */
    if (body == NULL || json_dump_callback(body, append_dump, w, API_DUMP_FLAGS) != 0)
        w->failed = true;
    json_decref(body);
}

json_t *api_problem_body(enum api_error code, const char *detail, json_t *errors)
{
    const struct error_entry *e = &registry[code];
    char type[128];

    snprintf(type, sizeof type, "%s%s", PROBLEM_TYPE_BASE, e->slug);
    if (errors == NULL)
        errors = json_array();
    /* "o" steals errors even when packing fails (jansson >= 2.11). */
    return json_pack("{s:s,s:s,s:I,s:s,s:o}", "type", type, "title", e->title, "status",
                     (json_int_t)e->status, "detail", detail, "errors", errors);
}

void api_reply_problem(struct api_response *resp, enum api_error code, const char *detail,
                       json_t *errors)
{
    api_reply_json(resp, registry[code].status, API_CT_PROBLEM,
                   api_problem_body(code, detail, errors));
}

unsigned api_answer_problem(struct api_jsonw *w, enum api_error code, const char *detail,
                            json_t *errors)
{
    api_write_json(w, api_problem_body(code, detail, errors));
    return registry[code].status;
}

unsigned api_answer_invalid(struct api_jsonw *w, json_t *errors)
{
    char detail[160];
    size_t n = json_array_size(errors);

    snprintf(detail, sizeof detail, "%zu input%s invalid; see errors.", n,
             n == 1 ? " is" : "s are");
    return api_answer_problem(w, API_E_INVALID_INPUT, detail, errors);
}

unsigned api_answer_core_problems(struct api_jsonw *w, enum core_status status,
                                  const struct core_problems *problems)
{
    json_t *errors = json_array();

    for (int i = 0; errors != NULL && i < problems->count; i++) {
        const struct core_problem *p = &problems->items[i];
        const char *field = p->field ? p->field : "";

        api_errors_add(errors, field, strlen(field), p->message);
    }
    if (status == CORE_ERANGE)
        return api_answer_problem(
            w, API_E_OUT_OF_RANGE,
            "A result would not fit in 64-bit bytes; reduce the inputs named.", errors);
    return api_answer_problem(w, API_E_IMPOSSIBLE_INPUTS,
                              "The inputs are valid one by one but impossible together.", errors);
}

void api_reply_answer(struct api_response *resp, unsigned status, struct api_jsonw *w)
{
    api_reply_writer(resp, status, status == 200 ? API_CT_JSON : API_CT_PROBLEM, w);
}

void api_problem(struct api_response *resp, unsigned status, const char *detail, const char *field)
{
    enum api_error code = API_E_INTERNAL; /* a status the registry lacks is a bug: say 500 */
    json_t *errors = json_array();
    int i;

    memset(resp, 0, sizeof *resp);
    for (i = API_ERROR_COUNT - 1; i >= 0; i--)
        if (registry[i].status == status)
            code = (enum api_error)i; /* backwards, so the first row for a status wins */
    if (detail == NULL)
        detail = registry[code].title;
    if (field != NULL && errors != NULL)
        api_errors_add(errors, field, strlen(field), detail);
    api_reply_problem(resp, code, detail, errors);
}

void api_response_free(struct api_response *resp)
{
    if (resp == NULL)
        return;
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
}
