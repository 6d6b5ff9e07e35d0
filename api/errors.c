/*
 * errors.c - the error registry, RFC 9457 problem bodies and the one reply function.
 *
 * Why one registry: the problem code decides the HTTP status, slug and title, so a handler can
 * never send a 422 titled "Not found". Why one reply function: every body is dumped with the
 * same flags (byte-identical GET/POST replies) into memory the response owns, and out-of-memory
 * degrades to a bodiless 500 instead of a half-written reply. Problem bodies never carry
 * library messages or pointers: details are our own sentences.
 */
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
