/*
 * test_apiunit.c - Check suite for the api layer (api/): routing, decoding, encoding, errors,
 * caching. Requests are built by hand (no server) and replies are parsed back with jansson.
 *
 * Expected figures are derived by hand from docs/model.md and docs/conventions.md, with the
 * derivation next to each assert.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_internal.h"
#include "check_main.h"
#include "inputs.h"
#include "number.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

#define MAX_PARAMS 256

/* Splits "a=1&b&c=" into pairs in place (no percent-decoding: the server does that). */
static size_t split_query(char *q, struct api_param *out)
{
    size_t n = 0;
    char *p = q;
    if (q == NULL || *q == '\0')
        return 0;
    while (p != NULL && n < MAX_PARAMS) {
        char *amp = strchr(p, '&');
        char *eq;
        if (amp)
            *amp = '\0';
        eq = strchr(p, '=');
        out[n].key = p;
        if (eq) {
            *eq = '\0';
            out[n].value = eq + 1;
            out[n].value_len = strlen(eq + 1);
        } else {
            out[n].value = NULL;
            out[n].value_len = 0;
        }
        out[n].key_len = strlen(p);
        n++;
        p = amp ? amp + 1 : NULL;
    }
    return n;
}

static void request(const char *method, const char *path, const char *query, const char *ctype,
                    const char *body, const char *inm, struct api_response *resp)
{
    struct api_param params[MAX_PARAMS];
    char qbuf[4096] = "";
    struct api_request req;

    if (query)
        snprintf(qbuf, sizeof qbuf, "%s", query);
    memset(&req, 0, sizeof req);
    req.method = method;
    req.path = path;
    req.query = params;
    req.query_count = split_query(qbuf, params);
    req.body = body;
    req.body_len = body ? strlen(body) : 0;
    req.content_type = ctype;
    req.if_none_match = inm;
    ck_assert_msg(api_dispatch(&req, resp), "%s %s not routed", method, path);
}

static void get(const char *path, const char *query, struct api_response *resp)
{
    request("GET", path, query, NULL, NULL, NULL, resp);
}

static void post(const char *path, const char *body, struct api_response *resp)
{
    request("POST", path, NULL, "application/json", body, NULL, resp);
}

static json_t *parse(const struct api_response *resp)
{
    json_error_t err;
    json_t *j = json_loadb(resp->body, resp->body_len, 0, &err);
    ck_assert_msg(j != NULL, "reply is not JSON: %s", err.text);
    return j;
}

/* Follows a dotted path of object keys ("fit.capacity.bytes"). */
static json_t *path_get(json_t *j, const char *path)
{
    const char *p = path;
    while (j != NULL && *p != '\0') {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        j = json_object_getn(j, p, n);
        p += n + (dot ? 1 : 0);
    }
    ck_assert_msg(j != NULL, "missing %s", path);
    return j;
}

/* Does the body contain this text? */
static bool body_has(const struct api_response *r, const char *text)
{
    size_t n = strlen(text), i;
    for (i = 0; i + n <= r->body_len; i++)
        if (memcmp(r->body + i, text, n) == 0)
            return true;
    return false;
}

static long long int_at(json_t *j, const char *path)
{
    json_t *v = path_get(j, path);
    ck_assert_msg(json_is_integer(v), "%s not an integer", path);
    return (long long)json_integer_value(v);
}

static double num_at(json_t *j, const char *path)
{
    json_t *v = path_get(j, path);
    ck_assert_msg(json_is_number(v), "%s not a number", path);
    return json_number_value(v);
}

static const char *str_at(json_t *j, const char *path)
{
    json_t *v = path_get(j, path);
    ck_assert_msg(json_is_string(v), "%s not a string", path);
    return json_string_value(v);
}

/* Asserts a problem reply with this status, and that errors[] names each given field (NULL-
 * terminated). Returns the parsed body (caller decrefs). */
static json_t *expect_problem(struct api_response *resp, unsigned status, const char *slug,
                              const char *const *fields)
{
    char type[128];
    json_t *j, *errors;
    size_t k;

    ck_assert_uint_eq(resp->status, status);
    ck_assert_str_eq(resp->content_type, "application/problem+json");
    j = parse(resp);
    snprintf(type, sizeof type, "https://memwall.dev/problems/%s", slug);
    ck_assert_str_eq(str_at(j, "type"), type);
    ck_assert_int_eq(int_at(j, "status"), status);
    ck_assert(strlen(str_at(j, "title")) > 0);
    ck_assert(strlen(str_at(j, "detail")) > 0);
    errors = path_get(j, "errors");
    ck_assert(json_is_array(errors));
    for (k = 0; fields && fields[k]; k++) {
        size_t i;
        json_t *e;
        bool found = false;
        json_array_foreach (errors, i, e) {
            if (strcmp(json_string_value(json_object_get(e, "field")), fields[k]) == 0)
                found = json_is_string(json_object_get(e, "message"));
        }
        ck_assert_msg(found, "errors[] does not name %s", fields[k]);
    }
    return j;
}

/* The message of the (first) error naming field. */
static const char *error_message(json_t *problem, const char *field)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get(problem, "errors"), i, e) {
        if (strcmp(json_string_value(json_object_get(e, "field")), field) == 0)
            return json_string_value(json_object_get(e, "message"));
    }
    ck_abort_msg("no error for %s", field);
    return NULL;
}

static void expect_same_body(const struct api_response *a, const struct api_response *b)
{
    ck_assert_uint_eq(a->status, 200);
    ck_assert_uint_eq(b->status, 200);
    ck_assert_uint_eq(a->body_len, b->body_len);
    ck_assert_msg(memcmp(a->body, b->body, a->body_len) == 0, "bodies differ:\n%.*s\n%.*s",
                  (int)a->body_len, a->body, (int)b->body_len, b->body);
}

/* A GET query that must be rejected with 400 naming field; returns the message. */
static void expect_bad_query(const char *path, const char *query, const char *field,
                             const char *message_part)
{
    struct api_response r;
    const char *fields[] = {field, NULL};
    json_t *j;
    get(path, query, &r);
    j = expect_problem(&r, 400, "invalid-input", fields);
    if (message_part)
        ck_assert_msg(strstr(error_message(j, field), message_part) != NULL,
                      "%s: message '%s' lacks '%s'", query, error_message(j, field), message_part);
    json_decref(j);
    api_response_free(&r);
}

static void expect_bad_body(const char *body, const char *field, const char *message_part)
{
    struct api_response r;
    const char *fields[] = {field, NULL};
    json_t *j;
    post("/fit", body, &r);
    j = expect_problem(&r, 400, "invalid-input", fields);
    if (message_part)
        ck_assert_msg(strstr(error_message(j, field), message_part) != NULL,
                      "%s: message '%s' lacks '%s'", body, error_message(j, field), message_part);
    json_decref(j);
    api_response_free(&r);
}

static const char *const compute_routes[] = {"/flops", "/memory", "/fit", "/runtime"};

/* ---------------------------------------------------------------------------------------------
 * GET and POST agree, byte for byte
 * ------------------------------------------------------------------------------------------- */

struct pair {
    const char *query;
    const char *json;
};

static const struct pair pairs[] = {
    {"", "{}"},
    {"params=7B&batch=4&checkpointing=full&gpu=a100-sxm-80gb",
     "{\"params\":\"7B\",\"batch\":4,\"checkpointing\":\"full\",\"gpu\":\"a100-sxm-80gb\"}"},
    {"model=llama2-13b&gpus=8&tp=2&usd_per_gpu_hour=2.5&flash_attention=yes",
     "{\"model\":\"llama2-13b\",\"gpus\":8,\"tp\":2,\"usd_per_gpu_hour\":2.5,"
     "\"flash_attention\":true}"},
    {"layers=32&hidden=4096&seq_len=2048&precision=fp32&optimizer=sgd_momentum&zero_stage=1",
     "{\"layers\":32,\"hidden\":4096,\"seq_len\":2048,\"precision\":\"fp32\","
     "\"optimizer\":\"sgd_momentum\",\"zero_stage\":1}"},
    {"params=1.3b&tokens=1.4T&mfu=0.4&count=hardware&checkpointing=true&reserve_gb=0.3",
     "{\"params\":1.3e9,\"tokens\":\"1.4T\",\"mfu\":0.4,\"count\":\"hardware\","
     "\"checkpointing\":true,\"reserve_gb\":0.3}"},
    {"gpus=8&tokens_per_second=1e5&attention_flops=causal&master_weights=no",
     "{\"gpus\":8,\"tokens_per_second\":100000,\"attention_flops\":\"causal\","
     "\"master_weights\":false}"},
};

START_TEST(get_post_identical)
{
    size_t p, k;
    for (p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (k = 0; k < 4; k++) {
            struct api_response g, q;
            get(compute_routes[k], pairs[p].query, &g);
            post(compute_routes[k], pairs[p].json, &q);
            ck_assert_msg(g.status == 200, "GET %s?%s -> %u %.*s", compute_routes[k],
                          pairs[p].query, g.status, (int)g.body_len, g.body);
            ck_assert_str_eq(g.content_type, "application/json");
            expect_same_body(&g, &q);
            api_response_free(&g);
            api_response_free(&q);
        }
}
END_TEST

/* An empty POST body is {} (all defaults), whatever its Content-Type. */
START_TEST(empty_post_is_defaults)
{
    struct api_response g, q;
    get("/fit", NULL, &g);
    request("POST", "/fit", NULL, NULL, NULL, NULL, &q);
    expect_same_body(&g, &q);
    api_response_free(&g);
    api_response_free(&q);
}
END_TEST

/* JSON strings decode like query strings; null means "not given" where the echo is null. */
START_TEST(json_strings_and_null)
{
    struct api_response a, b, c, d;
    get("/runtime", "batch=4&flash_attention=1", &a);
    post("/runtime", "{\"batch\":\"4\",\"flash_attention\":\"1\"}", &b);
    expect_same_body(&a, &b);
    get("/runtime", NULL, &c);
    post("/runtime", "{\"usd_per_gpu_hour\":null,\"tokens_per_second\":null,\"model\":null}", &d);
    expect_same_body(&c, &d);
    api_response_free(&a);
    api_response_free(&b);
    api_response_free(&c);
    api_response_free(&d);
}
END_TEST

/* checkpointing takes a boolean: true is full, false is none (echoed by name). */
START_TEST(checkpointing_booleans)
{
    struct api_response a, b, c, d;
    get("/memory", "checkpointing=true", &a);
    get("/memory", "checkpointing=full", &b);
    expect_same_body(&a, &b);
    post("/memory", "{\"checkpointing\":false}", &c);
    get("/memory", "checkpointing=none", &d);
    expect_same_body(&c, &d);
    api_response_free(&a);
    api_response_free(&b);
    api_response_free(&c);
    api_response_free(&d);
}
END_TEST

/* A hostile query is bounded: errors[] stops at API_ERRORS_MAX entries. */
START_TEST(errors_capped)
{
    char query[2048] = "";
    size_t used = 0;
    int i;
    struct api_response r;
    json_t *j;

    for (i = 0; i < 80; i++)
        used += (size_t)snprintf(query + used, sizeof query - used, "%sx%d=1&x%d=2", i ? "&" : "",
                                 i, i);
    get("/fit", query, &r);
    j = expect_problem(&r, 400, "invalid-input", NULL);
    /* 80 distinct unknown names, each repeated once (repeats are not listed again): capped */
    ck_assert_uint_eq(json_array_size(path_get(j, "errors")), API_ERRORS_MAX);
    json_decref(j);
    api_response_free(&r);
}
END_TEST

/* "7B" == 7e9 == "7e9" == 7000000000 == "7b" (SI suffix as a decimal exponent). */
START_TEST(params_spellings)
{
    const char *queries[] = {"params=7e9", "params=7000000000", "params=7b", "params=7.0B"};
    const char *bodies[] = {"{\"params\":7e9}", "{\"params\":\"7B\"}", "{\"params\":7000000000}"};
    struct api_response ref, r;
    json_t *j;
    size_t i;

    get("/fit", "params=7B", &ref);
    j = parse(&ref);
    ck_assert_int_eq(int_at(j, "inputs.params"), 7000000000LL);
    json_decref(j);
    for (i = 0; i < 4; i++) {
        get("/fit", queries[i], &r);
        expect_same_body(&ref, &r);
        api_response_free(&r);
    }
    for (i = 0; i < 3; i++) {
        post("/fit", bodies[i], &r);
        expect_same_body(&ref, &r);
        api_response_free(&r);
    }
    api_response_free(&ref);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Figures (derived by hand)
 * ------------------------------------------------------------------------------------------- */

/*
 * Default /fit: 7e9 params, bf16 AdamW = 16 B/param -> state 16 * 7e9 = 112e9 bytes
 * (params 2*7e9 = 14e9, grads 14e9, optimizer (4+8)*7e9 = 84e9) on one 80e9-byte H100.
 * Shape: nearest preset mistral-7b, L 32, d 4096, a 32, V 32000; s 512, b 1, no checkpointing,
 * t 1: per layer 34*s*b*d + 5*a*s^2*b = 71,303,168 + 41,943,040 = 113,246,208; x 32 layers =
 * 3,623,878,656; logits 4*s*b*V = 65,536,000. Total = 112e9 + 3,689,414,656 = 115,689,414,656.
 * State > capacity -> fits false, bottleneck "state". Two GPUs: 56e9 + 3,689,414,656 <= 80e9
 * -> min_gpus 2.
 */
START_TEST(default_fit)
{
    struct api_response r;
    json_t *j;

    get("/fit", NULL, &r);
    ck_assert_uint_eq(r.status, 200);
    j = parse(&r);
    ck_assert(json_is_false(path_get(j, "fit.fits")));
    ck_assert_str_eq(str_at(j, "fit.bottleneck"), "state");
    ck_assert_int_eq(int_at(j, "fit.min_gpus"), 2);
    ck_assert_int_eq(int_at(j, "fit.min_gpus_state_only"), 2);
    ck_assert_int_eq(int_at(j, "memory.per_gpu.total.bytes"), 112000000000LL + 3689414656LL);
    ck_assert_int_eq(int_at(j, "memory.per_gpu.params.bytes"), 14000000000LL);
    ck_assert_int_eq(int_at(j, "memory.per_gpu.grads.bytes"), 14000000000LL);
    ck_assert_int_eq(int_at(j, "memory.per_gpu.optimizer.bytes"), 84000000000LL);
    ck_assert_int_eq(int_at(j, "memory.per_gpu.activations.bytes"), 3689414656LL);
    ck_assert_int_eq(int_at(j, "memory.per_gpu.reserve.bytes"), 0);
    /* 14e9 bytes = 14.0 GB = 14e9 / 2^30 = 13.0385160446167 GiB */
    ck_assert_double_eq_tol(num_at(j, "memory.per_gpu.params.gb"), 14.0, 1e-12);
    ck_assert_double_eq_tol(num_at(j, "memory.per_gpu.params.gib"), 14e9 / 1073741824.0, 1e-9);
    ck_assert_int_eq(int_at(j, "memory.bytes_per_param.total"), 16);
    ck_assert_int_eq(int_at(j, "fit.capacity.bytes"), 80000000000LL);
    /* headroom = 80e9 - 115,689,414,656 = -35,689,414,656 */
    ck_assert_int_eq(int_at(j, "fit.headroom.bytes"), -35689414656LL);
    ck_assert(json_is_array(path_get(j, "advice")));
    ck_assert(json_array_size(path_get(j, "advice")) >= 1);
    ck_assert(json_is_array(path_get(j, "warnings")));
    /* the echo: fully resolved inputs */
    ck_assert(json_is_null(path_get(j, "inputs.model")));
    ck_assert_int_eq(int_at(j, "inputs.batch"), 1);
    ck_assert_int_eq(int_at(j, "inputs.seq_len"), 512);
    ck_assert_str_eq(str_at(j, "inputs.precision"), "bf16");
    ck_assert_str_eq(str_at(j, "inputs.gpu"), "h100-sxm");
    ck_assert_int_eq(int_at(j, "inputs.zero_stage"), 3);
    ck_assert(json_is_null(path_get(j, "inputs.usd_per_gpu_hour")));
    ck_assert(json_is_null(path_get(j, "inputs.tokens_per_second")));
    ck_assert_str_eq(str_at(j, "inputs.shape.source"), "nearest_preset");
    ck_assert_str_eq(str_at(j, "inputs.shape.preset"), "mistral-7b");
    ck_assert_int_eq(int_at(j, "inputs.shape.layers"), 32);
    ck_assert_int_eq(int_at(j, "inputs.shape.hidden"), 4096);
    json_decref(j);
    api_response_free(&r);
}
END_TEST

/*
 * The `inputs` echo is written from the input table: every compute row says how it is echoed
 * (a row added without its echo fails here), and the echo's members are exactly the rows that
 * echo a value, in the table's order, then `shape` (which shows the rows marked IN_SHAPE).
 */
START_TEST(inputs_echo_follows_the_table)
{
    struct api_response r;
    json_t *j, *in;
    const char *key;
    json_t *v;
    size_t row = 0;

    for (size_t i = 0; i < core_input_count; i++)
        ck_assert_msg(core_inputs[i].echo != CORE_ECHO_UNSET &&
                          core_inputs[i].echo != CORE_ECHO_NONE,
                      "input row %s says nothing of its echo (core/inputs.c: ECHO or IN_SHAPE)",
                      core_inputs[i].name);
    get("/fit", NULL, &r);
    j = parse(&r);
    in = path_get(j, "inputs");
    json_object_foreach (in, key, v) {
        (void)v;
        while (row < core_input_count && core_inputs[row].echo == CORE_ECHO_SHAPE)
            row++;
        if (row == core_input_count) {
            ck_assert_str_eq(key, "shape");
            continue;
        }
        ck_assert_str_eq(key, core_inputs[row].name);
        row++;
    }
    ck_assert_uint_eq(row, core_input_count);
    json_decref(j);
    api_response_free(&r);
}
END_TEST

/*
 * Every echoed input posts back (qa3 "Found" 6): the `inputs` echo of /fit and of /inference,
 * without `shape` (the resolved architecture, not inputs), re-posted as the request, is accepted
 * and echoes the same inputs. For /inference over the weight formats with a fixed layout: the
 * echo of quant_group_size was 0 for none and fp8 (below its own bound of 1) and 64 / 32 for bnb
 * and GGUF (then "has a fixed block layout"); it is null there now, and the format's own block
 * is accepted too.
 */
START_TEST(echoed_inputs_post_back)
{
    static const struct {
        const char *route, *query;
    } cases[] = {
        {"/fit", NULL},
        {"/fit", "model=llama3-8b&gpus=8&tp=2&finetune=lora&lora_rank=16"},
        {"/inference", NULL},
        {"/inference", "model=llama3.1-8b&quantization=fp8"},
        {"/inference", "model=llama3.1-8b&quantization=awq&quant_group_size=64"},
        {"/inference", "model=llama3.1-8b&quantization=gptq"},
        {"/inference", "model=llama3.1-8b&quantization=bnb_nf4"},
        {"/inference", "model=llama3.1-8b&quantization=gguf_q4_k_m&engine=llama.cpp"},
        {"/inference", "model=gpt-oss-20b&quantization=mxfp4"},
        {"/inference", "model=llama3.1-8b&quantization=int8&kv_cache_memory=8000000000"},
        {"/inference", "model=qwen3-30b-a3b&tp=2&ep=2&usd_per_gpu_hour=2&concurrency=max"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct api_response a, b;
        json_t *ja, *jb, *in;
        char *body;

        get(cases[i].route, cases[i].query, &a);
        ck_assert_msg(a.status == 200, "%s?%s -> %u", cases[i].route, cases[i].query, a.status);
        ja = parse(&a);
        in = json_deep_copy(path_get(ja, "inputs"));
        json_object_del(in, "shape");
        body = json_dumps(in, JSON_COMPACT);
        post(cases[i].route, body, &b);
        ck_assert_msg(b.status == 200, "%s %s -> %u %.*s", cases[i].route, body, b.status,
                      (int)b.body_len, b.body);
        jb = parse(&b);
        ck_assert_msg(json_equal(path_get(ja, "inputs"), path_get(jb, "inputs")),
                      "%s?%s: the echo changed on the way back", cases[i].route, cases[i].query);
        free(body);
        json_decref(in);
        json_decref(ja);
        json_decref(jb);
        api_response_free(&a);
        api_response_free(&b);
    }
}
END_TEST

/*
 * Lesson runtime: 6 * 7e9 * 1.4e12 = 5.88e22 FLOPs; 8 H100 at 989.4e12 * 0.5 = 3.9576e15 FLOP/s
 * -> 5.88e22 / 3.9576e15 = 14,857,489.39 s = 171.96 days. usd 2 -> gpu_hours = s/3600*8,
 * cost = 2 * gpu_hours.
 */
START_TEST(lesson_runtime)
{
    struct api_response r;
    json_t *j;
    double seconds = 5.88e22 / (8 * 989.4e12 * 0.5);

    get("/runtime", "gpus=8&usd_per_gpu_hour=2", &r);
    ck_assert_uint_eq(r.status, 200);
    j = parse(&r);
    ck_assert_double_eq_tol(num_at(j, "runtime.flops"), 5.88e22, 1e8);
    ck_assert_double_eq_tol(num_at(j, "runtime.seconds"), seconds, 1e-3);
    ck_assert_double_eq_tol(num_at(j, "runtime.days"), 171.96, 0.01);
    ck_assert_double_eq_tol(num_at(j, "runtime.cost_usd"), 2 * seconds / 3600 * 8, 1e-3);
    ck_assert(json_is_false(path_get(j, "runtime.mfu_measured")));
    /* the echoed mfu prints without float noise */
    ck_assert(body_has(&r, "\"mfu\":0.5,"));
    json_decref(j);
    api_response_free(&r);

    /* no price, no cost_usd */
    get("/runtime", NULL, &r);
    j = parse(&r);
    ck_assert_ptr_null(json_object_get(json_object_get(j, "runtime"), "cost_usd"));
    json_decref(j);
    api_response_free(&r);
}
END_TEST

/* /flops: 6ND = 6 * 7e9 * 1.4e12 = 5.88e22; per-token forward 2N + 4LTd = 1.4e10 + 4*32*512*4096.
 */
START_TEST(flops_route)
{
    struct api_response r;
    json_t *j;
    get("/flops", NULL, &r);
    j = parse(&r);
    ck_assert_double_eq_tol(num_at(j, "flops.six_nd"), 5.88e22, 1e8);
    ck_assert_double_eq_tol(num_at(j, "flops.per_token.forward"), 1.4e10 + 4.0 * 32 * 512 * 4096,
                            1);
    ck_assert_double_eq_tol(num_at(j, "flops.per_token.attention"), 12.0 * 32 * 512 * 4096, 1);
    json_decref(j);
    api_response_free(&r);
}
END_TEST

/* memwall's own number printing (api/jsonw.c, the documented reply format): a real prints as
 * C's %.15g would, then ".0" is appended when there is neither "." nor "e", and the exponent
 * loses its "+" and leading zeros. Each expected string below applies that rule by hand. */
START_TEST(number_printing)
{
    static const struct {
        double x;
        const char *want;
    } cases[] = {
        /* 0.1 + 0.2 = 0.30000000000000004; 15 significant digits 0.300000000000000, trailing
         * zeros dropped by %g: "0.3". */
        {0.1 + 0.2, "0.3"},
        /* %.15g gives "112", no "." or "e": "112.0". */
        {112.0, "112.0"},
        /* 15 nines fit in 15 digits: "999999999999999" + ".0". */
        {999999999999999.0, "999999999999999.0"},
        /* exponent 15 >= precision 15, so %g switches to e-form "1e+15": "1e15". */
        {1e15, "1e15"},
        /* "5.88e+22" without the "+": "5.88e22". */
        {5.88e22, "5.88e22"},
        /* "1e-05" without the leading zero: "1e-5". */
        {1e-5, "1e-5"},
        /* 1/3 to 15 digits. */
        {1.0 / 3.0, "0.333333333333333"},
        /* 26 / 2^30 = 2.42143869400024|41e-08: 15 digits round down, "e-08" -> "e-8". */
        {26.0 / 1073741824.0, "2.42143869400024e-8"},
    };
    char out[48];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = api_jsonw_format_double(cases[i].x, out);
        ck_assert_msg(n == strlen(cases[i].want) && memcmp(out, cases[i].want, n) == 0,
                      "%.17g printed as %.*s, expected %s", cases[i].x, (int)n, out, cases[i].want);
    }
    /* Not representable in JSON: refused (length 0), never printed. */
    ck_assert_uint_eq(api_jsonw_format_double(NAN, out), 0);
    ck_assert_uint_eq(api_jsonw_format_double(INFINITY, out), 0);
}
END_TEST

/* The same rule inside a reply: GET /memory at the defaults (7e9 params, bf16 weights, 2 bytes
 * each, one GPU) holds 14e9 bytes of weights; gb = 14e9 / 1e9 = 14 -> "14.0"; gib = 14e9 / 2^30
 * = 13.0385160446166|99... -> 15 digits "13.0385160446167". */
START_TEST(number_printing_in_reply)
{
    struct api_response r;

    get("/memory", NULL, &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert(body_has(&r, "\"params\":{\"bytes\":14000000000,\"gb\":14.0,"
                           "\"gib\":13.0385160446167}"));
    api_response_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Catalogs
 * ------------------------------------------------------------------------------------------- */

START_TEST(gpus_route)
{
    struct api_response r;
    json_t *j, *list, *g;
    size_t i;
    bool saw_v100 = false;

    get("/gpus", NULL, &r);
    ck_assert_uint_eq(r.status, 200);
    ck_assert_str_eq(r.cache_control, "public, max-age=3600");
    j = parse(&r);
    list = path_get(j, "gpus");
    ck_assert_uint_eq(json_array_size(list), core_gpu_count);
    ck_assert_str_eq(str_at(json_array_get(list, 0), "id"), "h100-sxm");
    ck_assert_str_eq(str_at(j, "default"), "h100-sxm");
    ck_assert_double_eq_tol(num_at(json_array_get(list, 0), "peak_tflops.bf16"), 989.4, 1e-9);
    ck_assert_double_eq_tol(num_at(json_array_get(list, 0), "memory_gb"), 80, 1e-9);
    json_array_foreach (list, i, g) {
        if (strcmp(json_string_value(json_object_get(g, "id")), "v100-sxm-32gb") == 0) {
            saw_v100 = true;
            /* no bf16 on a V100: null = unsupported */
            ck_assert(json_is_null(path_get(g, "peak_tflops.bf16")));
            ck_assert_double_eq_tol(num_at(g, "peak_tflops.fp16"), 125, 1e-9);
        }
    }
    ck_assert(saw_v100);
    json_decref(j);
    api_response_free(&r);
}
END_TEST

START_TEST(models_route)
{
    struct api_response r;
    json_t *j, *list, *m;
    size_t i;
    bool saw = false;

    get("/models", NULL, &r);
    ck_assert_uint_eq(r.status, 200);
    j = parse(&r);
    list = path_get(j, "models");
    ck_assert_uint_eq(json_array_size(list), core_preset_count);
    json_array_foreach (list, i, m) {
        if (strcmp(json_string_value(json_object_get(m, "id")), "llama2-7b") == 0) {
            /* L32 d4096 a32 k32 f11008 V32000 gated untied: per layer 4*4096^2 (attention)
             * + 3*4096*11008 (MLP) + 2*4096 (norms) = 67,108,864 + 135,266,304 + 8,192 =
             * 202,383,360; x32 = 6,476,267,520; + 4096 final norm + 2*32000*4096 =
             * 262,144,000 -> 6,738,415,616. */
            saw = true;
            ck_assert_int_eq(int_at(m, "params"), 6738415616LL);
            ck_assert_int_eq(int_at(m, "published_params"), 6740000000LL);
            ck_assert_int_eq(int_at(m, "context"), 4096);
            ck_assert_int_eq(int_at(m, "architecture.ffn_hidden"), 11008);
            ck_assert(json_is_true(path_get(m, "architecture.gated_mlp")));
        }
    }
    ck_assert(saw);
    json_decref(j);
    api_response_free(&r);
}
END_TEST

START_TEST(catalog_takes_no_inputs)
{
    expect_bad_query("/gpus", "x=1", "x", "unknown");
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * 400: every bad field at once
 * ------------------------------------------------------------------------------------------- */

START_TEST(two_bad_fields)
{
    struct api_response r;
    const char *fields[] = {"batch", "seq_len", NULL};
    json_t *j;
    get("/fit", "batch=0&seq_len=abc&gpus=2", &r);
    j = expect_problem(&r, 400, "invalid-input", fields);
    ck_assert_uint_eq(json_array_size(path_get(j, "errors")), 2);
    ck_assert_ptr_null(r.allow);
    ck_assert_str_eq(r.etag, "");
    json_decref(j);
    api_response_free(&r);

    post("/fit", "{\"batch\":2.5,\"mfu\":0,\"precision\":\"bf17\"}", &r);
    {
        const char *f3[] = {"batch", "mfu", "precision", NULL};
        j = expect_problem(&r, 400, "invalid-input", f3);
    }
    ck_assert_uint_eq(json_array_size(path_get(j, "errors")), 3);
    json_decref(j);
    api_response_free(&r);
}
END_TEST

START_TEST(unknown_and_repeated)
{
    expect_bad_query("/fit", "bacth=2", "bacth", "did you mean \"batch\"");
    expect_bad_query("/fit", "colour=red", "colour", "unknown input");
    expect_bad_query("/fit", "batch=1&batch=2", "batch", "more than once");
    expect_bad_body("{\"bacth\":2}", "bacth", "unknown");
    /* a hostile key is shown sanitized */
    expect_bad_query("/fit", "a\x01\xff=1", "a??", "unknown");
}
END_TEST

/* An unknown catalog id names the ids it probably meant: "h200" is a prefix of h200-sxm only,
 * "H100" of both H100 rows (case and separators folded), "Llama-3-8B" folds to llama3-8b's
 * "llama38b"; an id like nothing lists the catalog, cut at a whole id. */
START_TEST(unknown_catalog_ids_suggest)
{
    expect_bad_query("/fit", "gpu=h200", "gpu", "did you mean h200-sxm?");
    expect_bad_query("/fit", "gpu=H100", "gpu", "did you mean h100-sxm, h100-pcie?");
    expect_bad_query("/fit", "model=Llama-3-8B", "model", "did you mean llama3-8b?");
    expect_bad_query("/fit", "gpu=zz", "gpu", "one of: h100-sxm, h100-pcie,");
    expect_bad_query("/fit", "gpu=zz", "gpu", ", ...");
}
END_TEST

START_TEST(bad_numbers_query)
{
    expect_bad_query("/fit", "batch=2.5", "batch", "integer");
    expect_bad_query("/fit", "mfu=NaN", "mfu", "not a number");
    expect_bad_query("/fit", "mfu=nan", "mfu", "not a number");
    expect_bad_query("/fit", "mfu=inf", "mfu", "not a number");
    expect_bad_query("/fit", "tokens=Infinity", "tokens", "not a number");
    expect_bad_query("/fit", "tokens=1e309", "tokens", "out of range");
    expect_bad_query("/fit", "params=-1", "params", ">= 1");
    expect_bad_query("/fit", "batch=0x10", "batch", "not a number");
    expect_bad_query("/fit", "params=7B7", "params", "not a number");
    expect_bad_query("/fit", "params=1e3K", "params", "not both");
    expect_bad_query("/fit", "batch=", "batch", "empty");
    expect_bad_query("/fit", "batch", "batch", "missing value");
    expect_bad_query("/fit", "batch= 1", "batch", "not a number");
    expect_bad_query("/fit", "mfu=1.5", "mfu", "<= 1");
    expect_bad_query("/fit", "zero_stage=4", "zero_stage", "<= 3");
    expect_bad_query("/fit", "flash_attention=maybe", "flash_attention", "boolean");
    expect_bad_query("/fit", "checkpointing=partial", "checkpointing", "selective");
    expect_bad_query("/fit", "gpu=h100", "gpu", "h100-sxm");
    expect_bad_query("/fit", "model=llama9", "model", "llama2-7b");
    expect_bad_query("/fit", "precision=BF16", "precision", "bf16");
    expect_bad_query("/fit", "grad_precision=fp8", "grad_precision", "fp32");
}
END_TEST

/* A value with an embedded NUL (the server decodes %00). */
START_TEST(embedded_nul)
{
    struct api_param p = {"batch", 5, "1\0002", 3};
    struct api_request req;
    struct api_response r;
    const char *fields[] = {"batch", NULL};
    json_t *j;

    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.path = "/fit";
    req.query = &p;
    req.query_count = 1;
    ck_assert(api_dispatch(&req, &r));
    j = expect_problem(&r, 400, "invalid-input", fields);
    ck_assert_str_eq(error_message(j, "batch"), "contains a NUL byte");
    json_decref(j);
    api_response_free(&r);
}
END_TEST

START_TEST(bad_json_types)
{
    expect_bad_body("{\"batch\":null}", "batch", "got null");
    expect_bad_body("{\"batch\":[1]}", "batch", "got an array");
    expect_bad_body("{\"batch\":{}}", "batch", "got an object");
    expect_bad_body("{\"batch\":true}", "batch", "got a boolean");
    expect_bad_body("{\"mfu\":\"NaN\"}", "mfu", "not a number");
    expect_bad_body("{\"params\":\"-1\"}", "params", ">= 1");
    expect_bad_body("{\"batch\":\"0x10\"}", "batch", "not a number");
    expect_bad_body("{\"batch\":2.5}", "batch", "integer");
    expect_bad_body("{\"flash_attention\":1}", "flash_attention", "got a number");
    expect_bad_body("{\"precision\":16}", "precision", "got a number");
}
END_TEST

START_TEST(malformed_json)
{
    struct api_response r;
    json_t *j;

    /* the stray comma is on line 2 */
    post("/fit", "{\"batch\": 1,\n  }", &r);
    j = expect_problem(&r, 400, "malformed-json", NULL);
    ck_assert_ptr_nonnull(strstr(str_at(j, "detail"), "line 2, column"));
    json_decref(j);
    api_response_free(&r);

    post("/fit", "{\"batch\":1,\"batch\":2}", &r);
    j = expect_problem(&r, 400, "malformed-json", NULL);
    ck_assert_ptr_nonnull(strstr(str_at(j, "detail"), "line 1, column"));
    ck_assert_ptr_nonnull(strstr(str_at(j, "detail"), "duplicate"));
    json_decref(j);
    api_response_free(&r);

    /* A bare number is neither an object nor a batch (an array: see tests/server). */
    post("/fit", "1", &r);
    j = expect_problem(&r, 400, "malformed-json", NULL);
    ck_assert_ptr_nonnull(strstr(str_at(j, "detail"), "object"));
    json_decref(j);
    api_response_free(&r);

    post("/fit", "{} x", &r);
    json_decref(expect_problem(&r, 400, "malformed-json", NULL));
    api_response_free(&r);

    /* a JSON real beyond double range is a parse error (jansson), still a 400 */
    post("/fit", "{\"tokens\":1e309}", &r);
    json_decref(expect_problem(&r, 400, "malformed-json", NULL));
    api_response_free(&r);

    /* POST does not also take query parameters */
    request("POST", "/fit", "batch=2", "application/json", "{}", NULL, &r);
    {
        const char *fields[] = {"batch", NULL};
        json_decref(expect_problem(&r, 400, "invalid-input", fields));
    }
    api_response_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * 405, OPTIONS, 413, 415, 422, 404, api_problem
 * ------------------------------------------------------------------------------------------- */

START_TEST(methods)
{
    struct api_response r;
    struct api_request req;

    request("DELETE", "/fit", NULL, NULL, NULL, NULL, &r);
    json_decref(expect_problem(&r, 405, "method-not-allowed", NULL));
    ck_assert_str_eq(r.allow, "GET, HEAD, POST, OPTIONS");
    api_response_free(&r);

    request("POST", "/gpus", NULL, "application/json", "{}", NULL, &r);
    json_decref(expect_problem(&r, 405, "method-not-allowed", NULL));
    ck_assert_str_eq(r.allow, "GET, HEAD, OPTIONS");
    api_response_free(&r);

    request("OPTIONS", "/runtime", NULL, NULL, NULL, NULL, &r);
    ck_assert_uint_eq(r.status, 204);
    ck_assert_uint_eq(r.body_len, 0);
    ck_assert_ptr_null(r.body);
    ck_assert_str_eq(r.allow, "GET, HEAD, POST, OPTIONS");
    api_response_free(&r);

    /* HEAD answers like GET (the server drops the body) */
    {
        struct api_response g;
        request("HEAD", "/memory", "batch=2", NULL, NULL, NULL, &r);
        get("/memory", "batch=2", &g);
        expect_same_body(&r, &g);
        ck_assert_str_eq(r.etag, g.etag);
        api_response_free(&g);
        api_response_free(&r);
    }

    /* not ours: the server answers 404 */
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.path = "/healthz";
    ck_assert(!api_dispatch(&req, &r));
    req.path = "/fit/";
    ck_assert(!api_dispatch(&req, &r));
}
END_TEST

START_TEST(content_type_and_size)
{
    struct api_response r, ok;
    char *big;

    request("POST", "/fit", NULL, "text/plain", "{}", NULL, &r);
    json_decref(expect_problem(&r, 415, "unsupported-media-type", NULL));
    api_response_free(&r);
    request("POST", "/fit", NULL, NULL, "{}", NULL, &r);
    json_decref(expect_problem(&r, 415, "unsupported-media-type", NULL));
    api_response_free(&r);
    request("POST", "/fit", NULL, "application/jsonx", "{}", NULL, &r);
    json_decref(expect_problem(&r, 415, "unsupported-media-type", NULL));
    api_response_free(&r);

    get("/fit", NULL, &ok);
    request("POST", "/fit", NULL, "Application/JSON; charset=utf-8", "{}", NULL, &r);
    expect_same_body(&ok, &r);
    api_response_free(&r);
    api_response_free(&ok);

    big = malloc(API_BODY_MAX + 2);
    ck_assert_ptr_nonnull(big);
    memset(big, ' ', API_BODY_MAX + 1);
    big[0] = '{';
    big[API_BODY_MAX] = '}';
    big[API_BODY_MAX + 1] = '\0';
    request("POST", "/fit", NULL, "application/json", big, NULL, &r);
    json_decref(expect_problem(&r, 413, "payload-too-large", NULL));
    api_response_free(&r);
    free(big);
}
END_TEST

START_TEST(impossible_inputs)
{
    struct api_response r;
    const char *fields[] = {"gpus", NULL};
    get("/fit", "gpus=3&tp=2", &r);
    json_decref(expect_problem(&r, 422, "unprocessable", fields));
    api_response_free(&r);
    post("/memory", "{\"gpus\":3,\"tp\":2}", &r);
    json_decref(expect_problem(&r, 422, "unprocessable", fields));
    api_response_free(&r);
}
END_TEST

START_TEST(problem_helper)
{
    struct api_response r;
    json_t *j;
    const char *fields[] = {"path", NULL};

    api_problem(&r, 404, "No such resource.", NULL);
    j = expect_problem(&r, 404, "not-found", NULL);
    ck_assert_str_eq(str_at(j, "detail"), "No such resource.");
    ck_assert_uint_eq(json_array_size(path_get(j, "errors")), 0);
    json_decref(j);
    api_response_free(&r);

    api_problem(&r, 414, "URI too long.", "path");
    json_decref(expect_problem(&r, 414, "uri-too-long", fields));
    api_response_free(&r);

    api_problem(&r, 599, "odd", NULL); /* unknown status: a bug, reported as 500 */
    json_decref(expect_problem(&r, 500, "internal", NULL));
    api_response_free(&r);

    api_response_free(&r); /* twice is harmless */
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Caching
 * ------------------------------------------------------------------------------------------- */

/* The ETag as api/etag.c documents it, written out independently: FNV-1a over
 * little-endian 64-bit words (the tail zero-padded), seeded with the length, then splitmix64's
 * finalizer. Assembled byte by byte, so on a little-endian host (the only kind this project
 * builds on) it must agree with the server's word loads. */
static unsigned long long etag_hash(const char *p, size_t n)
{
    unsigned long long h = 14695981039346656037ULL ^ n; /* FNV-1a 64 offset basis ^ length */

    for (size_t i = 0; i < n; i += 8) {
        unsigned long long w = 0;

        for (size_t k = 0; k < 8 && i + k < n; k++)
            w |= (unsigned long long)(unsigned char)p[i + k] << (8 * k);
        h = (h ^ w) * 1099511628211ULL; /* FNV prime 2^40 + 2^8 + 0xb3 */
    }
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

START_TEST(etag_304)
{
    struct api_response r, c;
    char want[32], list[96];

    get("/fit", "batch=2", &r);
    ck_assert_uint_eq(r.status, 200);
    snprintf(want, sizeof want, "\"%016llx\"", etag_hash(r.body, r.body_len));
    ck_assert_str_eq(r.etag, want);
    ck_assert_str_eq(r.cache_control, "public, max-age=3600");

    request("GET", "/fit", "batch=2", NULL, NULL, want, &c);
    ck_assert_uint_eq(c.status, 304);
    ck_assert_ptr_null(c.body);
    ck_assert_uint_eq(c.body_len, 0);
    ck_assert_str_eq(c.etag, want);
    api_response_free(&c);

    snprintf(list, sizeof list, "\"0000000000000000\", W/%s", want);
    request("GET", "/fit", "batch=2", NULL, NULL, list, &c);
    ck_assert_uint_eq(c.status, 304);
    api_response_free(&c);

    request("GET", "/fit", "batch=2", NULL, NULL, "\"0000000000000000\"", &c);
    ck_assert_uint_eq(c.status, 200);
    expect_same_body(&r, &c);
    api_response_free(&c);

    /* POST replies are not cacheable */
    post("/fit", "{\"batch\":2}", &c);
    ck_assert_str_eq(c.etag, "");
    ck_assert_ptr_null(c.cache_control);
    api_response_free(&c);
    api_response_free(&r);
}
END_TEST

/* Allow is spelled from a row's method bits (api/route.c): every mask, written out by hand in
 * the fixed order GET, HEAD, POST with OPTIONS (always answered) last. */
START_TEST(allow_from_mask)
{
    static const struct {
        unsigned methods;
        const char *allow;
    } cases[] = {
        {0, "OPTIONS"},
        {API_GET, "GET, OPTIONS"},
        {API_HEAD, "HEAD, OPTIONS"},
        {API_GET | API_HEAD, "GET, HEAD, OPTIONS"},
        {API_POST, "POST, OPTIONS"},
        {API_GET | API_POST, "GET, POST, OPTIONS"},
        {API_HEAD | API_POST, "HEAD, POST, OPTIONS"},
        {API_GET | API_HEAD | API_POST, "GET, HEAD, POST, OPTIONS"},
    };
    struct api_response r;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_str_eq(api_route_allow(cases[i].methods), cases[i].allow);

    /* /plan takes POST only: HEAD and GET are 405s naming it, OPTIONS lists it */
    request("HEAD", "/plan", NULL, NULL, NULL, NULL, &r);
    json_decref(expect_problem(&r, 405, "method-not-allowed", NULL));
    ck_assert_str_eq(r.allow, "POST, OPTIONS");
    api_response_free(&r);
    request("OPTIONS", "/plan", NULL, NULL, NULL, NULL, &r);
    ck_assert_uint_eq(r.status, 204);
    ck_assert_str_eq(r.allow, "POST, OPTIONS");
    api_response_free(&r);

    /* every row: OPTIONS carries the row's own Allow, and a method outside its mask is a 405 */
    for (size_t i = 0; i < api_routes.count; i++) {
        const struct api_route *row = &api_routes.rows[i];

        ck_assert_uint_eq(row->methods & API_OPTIONS, 0); /* OPTIONS is implied, never a bit */
        request("OPTIONS", row->path, NULL, NULL, NULL, NULL, &r);
        ck_assert_uint_eq(r.status, 204);
        ck_assert_str_eq(r.allow, api_route_allow(row->methods));
        api_response_free(&r);
        request("PUT", row->path, NULL, NULL, NULL, NULL, &r);
        json_decref(expect_problem(&r, 405, "method-not-allowed", NULL));
        ck_assert_str_eq(r.allow, api_route_allow(row->methods));
        api_response_free(&r);
    }
}
END_TEST

/* api_parse_number's fast path (m * 10^e in one operation when both are exact) must give the
 * double strtod gives, bit for bit (the sign of zero included), for every spelling: integers,
 * points anywhere, exponents, signs, SI suffixes (as strtod of the mantissa with eN appended),
 * mantissas around 2^53 and exponents around +-22 where the fast path stops. 300,000 values
 * from a fixed-seed generator plus the edges by hand. */
static void expect_as_strtod(const char *text, bool si, const char *as_strtod)
{
    double mine = -1.0, ref = strtod(as_strtod, NULL);
    const char *why = api_parse_number(text, strlen(text), si, &mine);

    ck_assert_msg(why == NULL, "%s: %s", text, why);
    ck_assert_msg(memcmp(&mine, &ref, sizeof mine) == 0, "%s: %.17g, strtod %.17g", text, mine,
                  ref);
}

START_TEST(number_fast_path_is_strtod)
{
    static const char *const edges[] = {
        "0",
        "-0",
        "+0",
        "0.0",
        "-0.0e5",
        "13e9",
        "4",
        "2048",
        "0.5",
        "1.5e-3",
        "9007199254740992",
        "9007199254740993",
        "-9007199254740993",
        "9007199254740991e22",
        "9007199254740993e-22",
        "1e22",
        "1e23",
        "1e-22",
        "1e-23",
        "123456789012345678",
        "1234567890123456789",
        "12345678901234567890",
        "00000000000000000000000001",
        "0.1",
        "0.3",
        "2.675",
        "1e0000",
        "1e00001",
        "1.e5",
        ".5",
        "5.",
        "1e+22",
        "4.35",
        "1E-5",
    };
    static const char suffix[] = {'k', 'M', 'b', 'G', 'T'};
    static const int suffix_exp[] = {3, 6, 9, 9, 12};
    unsigned long long seed = 0x9E3779B97F4A7C15ULL;
    char text[64], ref[80];

    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        expect_as_strtod(edges[i], false, edges[i]);
    for (int n = 0; n < 300000; n++) {
        unsigned long long r;
        int digits, point, len = 0, x;
        size_t mlen;

        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        r = seed;
        digits = 1 + (int)((r >> 8) % 20);
        point = (int)((r >> 16) % (unsigned)(digits + 2)) - 1; /* -1: no point */
        if ((r >> 24) & 1)
            text[len++] = (r >> 25) & 1 ? '-' : '+';
        for (int d = 0; d < digits; d++) {
            if (d == point)
                text[len++] = '.';
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            text[len++] = (char)('0' + (seed >> 33) % 10);
        }
        if (point == digits)
            text[len++] = '.';
        text[len] = '\0';
        mlen = (size_t)len;
        x = (int)((r >> 32) % 61) - 30;
        switch ((r >> 40) % 4) {
        case 0: /* plain */
            expect_as_strtod(text, false, text);
            break;
        case 1: /* exponent */
            snprintf(text + mlen, sizeof text - mlen, "%se%d", "", x);
            expect_as_strtod(text, false, text);
            break;
        case 2: { /* SI suffix */
            size_t k = (r >> 48) % 5;
            text[mlen] = suffix[k];
            text[mlen + 1] = '\0';
            memcpy(ref, text, mlen);
            snprintf(ref + mlen, sizeof ref - mlen, "e%d", suffix_exp[k]);
            expect_as_strtod(text, true, ref);
            break;
        }
        default: /* exponent with an explicit sign and leading zeros */
            snprintf(text + mlen, sizeof text - mlen, "E%c0%d", x < 0 ? '-' : '+', abs(x));
            expect_as_strtod(text, false, text);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Suite
 * ------------------------------------------------------------------------------------------- */

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("dispatch");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, get_post_identical);
    tcase_add_test(tc, empty_post_is_defaults);
    tcase_add_test(tc, json_strings_and_null);
    tcase_add_test(tc, params_spellings);
    tcase_add_test(tc, checkpointing_booleans);
    tcase_add_test(tc, errors_capped);
    tcase_add_test(tc, default_fit);
    tcase_add_test(tc, inputs_echo_follows_the_table);
    tcase_add_test(tc, echoed_inputs_post_back);
    tcase_add_test(tc, lesson_runtime);
    tcase_add_test(tc, flops_route);
    tcase_add_test(tc, number_printing);
    tcase_add_test(tc, number_printing_in_reply);
    tcase_add_test(tc, gpus_route);
    tcase_add_test(tc, models_route);
    tcase_add_test(tc, catalog_takes_no_inputs);
    tcase_add_test(tc, two_bad_fields);
    tcase_add_test(tc, unknown_and_repeated);
    tcase_add_test(tc, unknown_catalog_ids_suggest);
    tcase_add_test(tc, bad_numbers_query);
    tcase_add_test(tc, embedded_nul);
    tcase_add_test(tc, bad_json_types);
    tcase_add_test(tc, malformed_json);
    tcase_add_test(tc, methods);
    tcase_add_test(tc, allow_from_mask);
    tcase_add_test(tc, content_type_and_size);
    tcase_add_test(tc, impossible_inputs);
    tcase_add_test(tc, problem_helper);
    tcase_add_test(tc, etag_304);
    tcase_add_test(tc, number_fast_path_is_strtod);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(api_suite());
}
