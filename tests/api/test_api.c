/*
 * test_api.c - the live HTTP suite: the memwall daemon started in-process on 127.0.0.1 port 0
 * (never a fixed port) and driven with libcurl, one fresh daemon per test (Check forks each
 * test). Every assertion is on the status, headers and the parsed body; expected figures are
 * derived by hand from the formulas in docs/model.md, the derivation next to each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "http.h"
#include "server.h"

static struct server *srv;
static int port;

static void start(void)
{
    struct server_config cfg = {.bind = "127.0.0.1", .port = 0, .threads = 2};
    char err[256] = "";

    port = server_start(&cfg, &srv, err, sizeof err);
    ck_assert_msg(port > 0, "server_start: %s", err);
}

static void stop(void)
{
    server_stop(srv);
    srv = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

static const char *url(const char *path)
{
    static char buf[16384];

    snprintf(buf, sizeof buf, "http://127.0.0.1:%d%s", port, path);
    return buf;
}

static void get(const char *path, struct http_reply *r)
{
    ck_assert_msg(http_get(url(path), r), "GET %s failed", path);
}

static void post_json(const char *path, const char *json, struct http_reply *r)
{
    static const char *const headers[] = {"Content-Type: application/json", NULL};
    struct http_request req = {
        .method = "POST", .body = json, .body_len = strlen(json), .headers = headers};

    ck_assert_msg(http_do(url(path), &req, r), "POST %s failed", path);
}

static json_t *parse(const struct http_reply *r)
{
    json_error_t err;
    json_t *doc = json_loadb(r->body, r->body_len, 0, &err);

    ck_assert_msg(doc != NULL, "body is not JSON (%s): %.200s", err.text, r->body);
    return doc;
}

/* Follow a dotted path ("fit.min_gpus") through objects; NULL when a step is missing. */
static json_t *at(json_t *doc, const char *path)
{
    char key[64];

    while (doc != NULL && *path != '\0') {
        size_t n = strcspn(path, ".");

        snprintf(key, sizeof key, "%.*s", (int)n, path);
        doc = json_object_get(doc, key);
        path += n + (path[n] == '.');
    }
    return doc;
}

static long long int_at(json_t *doc, const char *path)
{
    json_t *v = at(doc, path);

    ck_assert_msg(json_is_integer(v), "%s is not an integer", path);
    return json_integer_value(v);
}

static double num_at(json_t *doc, const char *path)
{
    json_t *v = at(doc, path);

    ck_assert_msg(json_is_number(v), "%s is not a number", path);
    return json_number_value(v);
}

static bool contains_string(json_t *doc, const char *s)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_string(doc))
        return strcmp(json_string_value(doc), s) == 0;
    if (json_is_array(doc)) {
        json_array_foreach (doc, i, v) {
            if (contains_string(v, s))
                return true;
        }
    }
    if (json_is_object(doc)) {
        json_object_foreach (doc, key, v) {
            if (strcmp(key, s) == 0 || contains_string(v, s))
                return true;
        }
    }
    return false;
}

static void assert_header(const struct http_reply *r, const char *name, const char *want)
{
    char buf[512];
    const char *got = http_header(r, name, buf, sizeof buf);

    ck_assert_msg(got != NULL, "no %s header", name);
    ck_assert_str_eq(got, want);
}

static void assert_header_has(const struct http_reply *r, const char *name, const char *part)
{
    char buf[512];
    const char *got = http_header(r, name, buf, sizeof buf);

    ck_assert_msg(got != NULL, "no %s header", name);
    ck_assert_msg(strstr(got, part) != NULL, "%s: '%s' lacks '%s'", name, got, part);
}

/* An RFC 9457 problem with memwall's fields; returns the parsed body (caller decrefs). */
static json_t *assert_problem(const struct http_reply *r, long status)
{
    char ct[128];
    json_t *doc;

    ck_assert_int_eq(r->status, status);
    ck_assert_ptr_nonnull(http_header(r, "Content-Type", ct, sizeof ct));
    ck_assert_msg(strncmp(ct, "application/problem+json", 24) == 0, "Content-Type %s", ct);
    doc = parse(r);
    ck_assert(json_is_string(at(doc, "type")));
    ck_assert_msg(
        strncmp(json_string_value(at(doc, "type")), "https://memwall.dev/problems/", 29) == 0,
        "type %s", json_string_value(at(doc, "type")));
    ck_assert(json_is_string(at(doc, "title")));
    ck_assert_uint_gt(strlen(json_string_value(at(doc, "title"))), 0);
    ck_assert_int_eq(int_at(doc, "status"), status);
    ck_assert(json_is_string(at(doc, "detail")));
    ck_assert(json_is_array(at(doc, "errors")));
    assert_header(r, "X-Content-Type-Options", "nosniff");
    return doc;
}

static bool problem_names(json_t *doc, const char *field)
{
    json_t *e;
    size_t i;

    json_array_foreach (at(doc, "errors"), i, e) {
        json_t *f = json_object_get(e, "field");

        if (json_is_string(f) && strcmp(json_string_value(f), field) == 0) {
            ck_assert(json_is_string(json_object_get(e, "message")));
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------------------------------------
 * Routes
 * ------------------------------------------------------------------------------------------- */

/* The same inputs by GET query and POST JSON give byte-identical bodies, on every compute
 * route, with defaults only and with a few inputs. */
START_TEST(test_get_post_identical)
{
    static const struct {
        const char *path, *query, *json;
    } cases[] = {
        {"/flops", "", "{}"},
        {"/flops", "?params=7e9&tokens=1.4T&seq_len=2048",
         "{\"params\":7e9,\"tokens\":\"1.4T\",\"seq_len\":2048}"},
        {"/memory", "", "{}"},
        {"/memory", "?batch=4&zero_stage=2&gpus=4&checkpointing=full",
         "{\"batch\":4,\"zero_stage\":2,\"gpus\":4,\"checkpointing\":\"full\"}"},
        {"/fit", "", "{}"},
        {"/fit", "?model=llama2-7b&gpus=2&flash_attention=true",
         "{\"model\":\"llama2-7b\",\"gpus\":2,\"flash_attention\":true}"},
        {"/runtime", "", "{}"},
        {"/runtime", "?params=7e9&gpus=8&usd_per_gpu_hour=2.5",
         "{\"params\":7e9,\"gpus\":8,\"usd_per_gpu_hour\":2.5}"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct http_reply g, p;
        char path[256];

        snprintf(path, sizeof path, "%s%s", cases[i].path, cases[i].query);
        get(path, &g);
        post_json(cases[i].path, cases[i].json, &p);
        ck_assert_msg(g.status == 200, "GET %s: %ld %s", path, g.status, g.body);
        ck_assert_msg(p.status == 200, "POST %s %s: %ld %s", cases[i].path, cases[i].json, p.status,
                      p.body);
        ck_assert_msg(g.body_len == p.body_len && memcmp(g.body, p.body, g.body_len) == 0,
                      "GET %s and POST %s differ:\n%s\n%s", path, cases[i].json, g.body, p.body);
        http_reply_free(&g);
        http_reply_free(&p);
    }
}
END_TEST

/* The lesson's default: 7e9 parameters, one 80 GB H100, bf16 AdamW, T 512, B 1.
 * Ledger 2 (bf16 weights) + 4 (fp32 master) + 8 (two fp32 moments) + 2 (bf16 grads) = 16 B/param:
 *   params 2*7e9 = 14e9, grads 2*7e9 = 14e9, optimizer (4+8)*7e9 = 84e9; state 112e9 bytes, which
 *   one GPU (ZeRO-3 over dp = 1 shards nothing) cannot hold in 80e9: bottleneck "state".
 * Activations (7e9 alone -> nearest preset mistral-7b: L 32, d 4096, a 32, V 32000), t = 1:
 *   per layer 34*s*b*d + 5*a*s^2*b = 34*512*4096 + 5*32*512^2 = 71303168 + 41943040 = 113246208,
 *   x 32 layers = 3623878656; logits 4*s*b*V = 4*512*32000 = 65536000; total 3689414656.
 * min_gpus: G = 1 needs 112e9 + 3.69e9 > 80e9; G = 2 shards the state to 56e9, + 3.69e9 =
 *   59.69e9 <= 80e9, so 2. */
START_TEST(test_fit_default)
{
    struct http_reply r;
    json_t *doc;

    get("/fit", &r);
    ck_assert_int_eq(r.status, 200);
    assert_header_has(&r, "Content-Type", "application/json");
    doc = parse(&r);
    ck_assert(json_is_false(at(doc, "fit.fits")));
    ck_assert_str_eq(json_string_value(at(doc, "fit.bottleneck")), "state");
    ck_assert_int_eq(int_at(doc, "fit.min_gpus"), 2);
    ck_assert_int_eq(int_at(doc, "memory.per_gpu.params.bytes"), 14000000000LL);
    ck_assert_int_eq(int_at(doc, "memory.per_gpu.grads.bytes"), 14000000000LL);
    ck_assert_int_eq(int_at(doc, "memory.per_gpu.optimizer.bytes"), 84000000000LL);
    ck_assert_int_eq(int_at(doc, "memory.per_gpu.params.bytes") +
                         int_at(doc, "memory.per_gpu.grads.bytes") +
                         int_at(doc, "memory.per_gpu.optimizer.bytes"),
                     112000000000LL);
    ck_assert_int_eq(int_at(doc, "memory.per_gpu.activations.bytes"), 3689414656LL);
    ck_assert_int_eq(int_at(doc, "memory.bytes_per_param.total"), 16);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* seconds = 6 N D / (G * peak * mfu) = 6*7e9*1.4e12 / (8*989.4e12*0.5) = 5.88e22 / 3.9576e15
 * = 1.48575e7 s; / 86400 = 171.96 days (the lesson's "about 172 days"). */
START_TEST(test_runtime_lesson)
{
    struct http_reply r;
    json_t *doc;
    double days;

    get("/runtime?params=7e9&gpus=8", &r);
    ck_assert_int_eq(r.status, 200);
    doc = parse(&r);
    days = num_at(doc, "runtime.days");
    ck_assert_msg(days >= 171.9 && days <= 172.0, "days %.6f", days);
    ck_assert_double_eq_tol(num_at(doc, "runtime.seconds"), 5.88e22 / 3.9576e15, 1.0);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

START_TEST(test_catalogs)
{
    struct http_reply r;
    json_t *doc;

    get("/gpus", &r);
    ck_assert_int_eq(r.status, 200);
    doc = parse(&r);
    ck_assert_msg(contains_string(doc, "h100-sxm"), "no h100-sxm in /gpus");
    json_decref(doc);
    http_reply_free(&r);

    get("/models", &r);
    ck_assert_int_eq(r.status, 200);
    doc = parse(&r);
    ck_assert_msg(contains_string(doc, "llama2-7b"), "no llama2-7b in /models");
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

START_TEST(test_healthz)
{
    struct http_reply r;
    json_t *doc;

    get("/healthz", &r);
    ck_assert_int_eq(r.status, 200);
    assert_header_has(&r, "Content-Type", "application/json");
    doc = parse(&r);
    ck_assert_str_eq(json_string_value(at(doc, "status")), "ok");
    ck_assert_str_eq(json_string_value(at(doc, "version")), MEMWALL_VERSION);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* The embedded contract: YAML, OpenAPI 3.1 (the first line that is not a comment says so),
 * with an ETag that revalidates. */
START_TEST(test_openapi)
{
    static char inm[160];
    const char *const headers[] = {inm, NULL};
    struct http_request req = {.headers = headers};
    struct http_reply r, again;
    char etag[128];
    const char *line;

    get("/openapi.yaml", &r);
    ck_assert_int_eq(r.status, 200);
    assert_header_has(&r, "Content-Type", "application/yaml");
    line = r.body;
    while (*line == '#' || *line == '\n') {
        line = strchr(line, '\n');
        ck_assert_ptr_nonnull(line);
        line++;
    }
    ck_assert_msg(strncmp(line, "openapi: 3.1", 12) == 0, "starts %.40s", line);
    ck_assert_ptr_nonnull(http_header(&r, "ETag", etag, sizeof etag));

    snprintf(inm, sizeof inm, "If-None-Match: %s", etag);
    ck_assert(http_do(url("/openapi.yaml"), &req, &again));
    ck_assert_int_eq(again.status, 304);
    ck_assert_uint_eq(again.body_len, 0);
    http_reply_free(&r);
    http_reply_free(&again);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

START_TEST(test_400_lists_every_field)
{
    struct http_reply r;
    json_t *doc;

    get("/fit?batch=abc&gpus=0", &r);
    doc = assert_problem(&r, 400);
    ck_assert_msg(problem_names(doc, "batch"), "batch not listed: %s", r.body);
    ck_assert_msg(problem_names(doc, "gpus"), "gpus not listed: %s", r.body);
    json_decref(doc);
    http_reply_free(&r);

    post_json("/fit", "{\"batch\":\"abc\",\"gpus\":0}", &r);
    doc = assert_problem(&r, 400);
    ck_assert(problem_names(doc, "batch") && problem_names(doc, "gpus"));
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* Repeated keys reach the api in order (it rejects them), and values keep their length:
 * "llama2-7b%00x" must not be read as "llama2-7b". */
START_TEST(test_query_pairs_verbatim)
{
    struct http_reply r;
    json_t *doc;

    get("/fit?gpus=2&gpus=4", &r);
    doc = assert_problem(&r, 400);
    ck_assert(problem_names(doc, "gpus"));
    json_decref(doc);
    http_reply_free(&r);

    get("/fit?model=llama2-7b%00x", &r);
    ck_assert_msg(r.status == 400 || r.status == 422, "NUL in a value accepted: %ld", r.status);
    http_reply_free(&r);
}
END_TEST

START_TEST(test_404)
{
    struct http_reply r;
    json_t *doc;

    get("/no/such/thing", &r);
    doc = assert_problem(&r, 404);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

START_TEST(test_405_with_allow)
{
    struct http_request del = {.method = "DELETE"};
    struct http_request put = {.method = "PUT", .body = "{}", .body_len = 2};
    struct http_reply r;
    json_t *doc;

    ck_assert(http_do(url("/fit"), &del, &r));
    doc = assert_problem(&r, 405);
    assert_header_has(&r, "Allow", "GET");
    assert_header_has(&r, "Allow", "POST");
    json_decref(doc);
    http_reply_free(&r);

    ck_assert(http_do(url("/healthz"), &put, &r));
    doc = assert_problem(&r, 405);
    assert_header(&r, "Allow", "GET, HEAD, OPTIONS");
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* Content-Length 100000 > API_BODY_MAX: refused from the headers alone. With
 * "Expect: 100-continue" the client sends none of the body. */
START_TEST(test_413_content_length)
{
    static const char *const headers[] = {"Content-Type: application/json", "Expect: 100-continue",
                                          NULL};
    struct http_request req = {
        .method = "POST", .headers = headers, .body_len = 100000, .declared_len = 100000};
    struct http_reply r;
    json_t *doc;

    ck_assert(http_do(url("/fit"), &req, &r));
    doc = assert_problem(&r, 413);
    ck_assert_msg(r.uploaded < 100000, "client had to send %zu bytes", r.uploaded);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* The same without Expect, on a bare socket: only the headers are sent and the 413 arrives
 * anyway - the server does not wait for a body it will never read. */
START_TEST(test_413_before_body)
{
    static const char req[] = "POST /fit HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                              "Content-Length: 100000\r\n\r\n{\"params\":";
    char buf[4096];
    long n = raw_exchange(port, req, sizeof req - 1, false, 5000, buf, sizeof buf);

    ck_assert_int_gt(n, 0);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 413", 12) == 0, "got: %.60s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "application/problem+json"));
}
END_TEST

/* A chunked body has no Content-Length; it is refused once it grows past the cap. */
START_TEST(test_413_chunked)
{
    static const char *const headers[] = {"Content-Type: application/json", NULL};
    struct http_request req = {
        .method = "POST", .headers = headers, .body_len = 100000, .chunked = true};
    struct http_reply r;
    json_t *doc;

    ck_assert(http_do(url("/fit"), &req, &r));
    doc = assert_problem(&r, 413);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

START_TEST(test_414)
{
    static char path[9200];
    struct http_reply r;
    json_t *doc;

    /* "/fit?params=" + 9000 digits: a request target over 8 KiB */
    snprintf(path, sizeof path, "/fit?params=");
    memset(path + strlen(path), '7', 9000);
    get(path, &r);
    doc = assert_problem(&r, 414);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

START_TEST(test_415)
{
    static const char *const headers[] = {"Content-Type: text/plain", NULL};
    struct http_request req = {.method = "POST", .body = "{}", .body_len = 2, .headers = headers};
    struct http_reply r;
    json_t *doc;

    ck_assert(http_do(url("/fit"), &req, &r));
    doc = assert_problem(&r, 415);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* gpus 3 with tp 2: each valid alone, but G must be a multiple of tp*pp = 2. */
START_TEST(test_422)
{
    struct http_reply r;
    json_t *doc;

    get("/fit?gpus=3&tp=2", &r);
    doc = assert_problem(&r, 422);
    ck_assert_msg(problem_names(doc, "gpus"), "gpus not named: %s", r.body);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Headers
 * ------------------------------------------------------------------------------------------- */

START_TEST(test_cors)
{
    static const char *const headers[] = {"Origin: https://dash.example",
                                          "Access-Control-Request-Method: POST",
                                          "Access-Control-Request-Headers: Content-Type", NULL};
    struct http_request req = {.method = "OPTIONS", .headers = headers};
    struct http_reply r;

    ck_assert(http_do(url("/fit"), &req, &r));
    ck_assert_int_eq(r.status, 204);
    ck_assert_uint_eq(r.body_len, 0);
    assert_header(&r, "Access-Control-Allow-Origin", "*");
    assert_header_has(&r, "Access-Control-Allow-Methods", "POST");
    assert_header_has(&r, "Access-Control-Allow-Methods", "GET");
    assert_header_has(&r, "Access-Control-Allow-Headers", "Content-Type");
    ck_assert_ptr_nonnull(http_header(&r, "Access-Control-Max-Age", (char[16]){0}, 16));
    http_reply_free(&r);

    get("/fit", &r);
    assert_header(&r, "Access-Control-Allow-Origin", "*");
    http_reply_free(&r);
}
END_TEST

START_TEST(test_etag_304)
{
    static char inm[160];
    const char *const headers[] = {inm, NULL};
    struct http_request req = {.headers = headers};
    struct http_reply r, again;
    char etag[128], etag2[128];

    get("/fit?gpus=8", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(http_header(&r, "ETag", etag, sizeof etag));
    ck_assert_ptr_nonnull(http_header(&r, "Cache-Control", etag2, sizeof etag2));

    snprintf(inm, sizeof inm, "If-None-Match: %s", etag);
    ck_assert(http_do(url("/fit?gpus=8"), &req, &again));
    ck_assert_int_eq(again.status, 304);
    ck_assert_uint_eq(again.body_len, 0);
    ck_assert_ptr_nonnull(http_header(&again, "ETag", etag2, sizeof etag2));
    ck_assert_str_eq(etag, etag2);
    http_reply_free(&r);
    http_reply_free(&again);
}
END_TEST

/* HEAD: the GET status and Content-Length, no body on the wire (checked on a bare socket,
 * since a client told it is HEAD would not read one anyway). */
START_TEST(test_head_no_body)
{
    static const char *paths[] = {"/fit", "/healthz"};

    for (size_t i = 0; i < 2; i++) {
        struct http_reply g;
        char req[256], buf[8192], want[64];
        const char *end;
        long n;

        get(paths[i], &g);
        ck_assert_int_eq(g.status, 200);
        snprintf(req, sizeof req, "HEAD %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                 paths[i]);
        n = raw_exchange(port, req, strlen(req), false, 5000, buf, sizeof buf);
        ck_assert_int_gt(n, 0);
        ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0, "got %.60s", buf);
        end = strstr(buf, "\r\n\r\n");
        ck_assert_ptr_nonnull(end);
        ck_assert_msg(end[4] == '\0', "HEAD %s sent a body: %.60s", paths[i], end + 4);
        snprintf(want, sizeof want, "Content-Length: %zu\r\n", g.body_len);
        ck_assert_msg(strstr(buf, want) != NULL, "HEAD %s lacks %s", paths[i], want);
        http_reply_free(&g);
    }
}
END_TEST

START_TEST(test_request_id)
{
    static char long_id[200];
    static char long_hdr[220];
    const char *const sane[] = {"X-Request-Id: trace-42/abc", NULL};
    const char *const too_long[] = {long_hdr, NULL};
    const char *const not_ascii[] = {"X-Request-Id: caf\xc3\xa9", NULL};
    struct http_request req = {.headers = sane};
    struct http_reply r, r2;
    char id[256], id2[256];

    ck_assert(http_do(url("/fit"), &req, &r));
    assert_header(&r, "X-Request-Id", "trace-42/abc");
    assert_header(&r, "X-Content-Type-Options", "nosniff");
    http_reply_free(&r);

    /* 129 bytes is one too many: a fresh id replaces it */
    memset(long_id, 'x', 129);
    snprintf(long_hdr, sizeof long_hdr, "X-Request-Id: %s", long_id);
    req.headers = too_long;
    ck_assert(http_do(url("/healthz"), &req, &r));
    ck_assert_ptr_nonnull(http_header(&r, "X-Request-Id", id, sizeof id));
    ck_assert_str_ne(id, long_id);
    ck_assert_uint_gt(strlen(id), 0);
    ck_assert_uint_le(strlen(id), 128);
    http_reply_free(&r);

    req.headers = not_ascii;
    ck_assert(http_do(url("/healthz"), &req, &r));
    ck_assert_ptr_nonnull(http_header(&r, "X-Request-Id", id, sizeof id));
    ck_assert_str_ne(id, "caf\xc3\xa9");
    http_reply_free(&r);

    /* none given: generated, and different per request */
    get("/nope", &r);
    get("/nope", &r2);
    ck_assert_ptr_nonnull(http_header(&r, "X-Request-Id", id, sizeof id));
    ck_assert_ptr_nonnull(http_header(&r2, "X-Request-Id", id2, sizeof id2));
    ck_assert_str_ne(id, id2);
    http_reply_free(&r);
    http_reply_free(&r2);
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("api_live");
    TCase *routes = tcase_create("routes");
    TCase *errors = tcase_create("errors");
    TCase *headers = tcase_create("headers");
    TCase *all[] = {routes, errors, headers};

    for (size_t i = 0; i < 3; i++) {
        tcase_add_checked_fixture(all[i], start, stop);
        tcase_set_timeout(all[i], 60);
        suite_add_tcase(s, all[i]);
    }
    tcase_add_test(routes, test_get_post_identical);
    tcase_add_test(routes, test_fit_default);
    tcase_add_test(routes, test_runtime_lesson);
    tcase_add_test(routes, test_catalogs);
    tcase_add_test(routes, test_healthz);
    tcase_add_test(routes, test_openapi);
    tcase_add_test(errors, test_400_lists_every_field);
    tcase_add_test(errors, test_query_pairs_verbatim);
    tcase_add_test(errors, test_404);
    tcase_add_test(errors, test_405_with_allow);
    tcase_add_test(errors, test_413_content_length);
    tcase_add_test(errors, test_413_before_body);
    tcase_add_test(errors, test_413_chunked);
    tcase_add_test(errors, test_414);
    tcase_add_test(errors, test_415);
    tcase_add_test(errors, test_422);
    tcase_add_test(headers, test_cors);
    tcase_add_test(headers, test_etag_304);
    tcase_add_test(headers, test_head_no_body);
    tcase_add_test(headers, test_request_id);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    sr = srunner_create(api_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
