/*
 * test_api.c - the live HTTP suite: the memwall daemon started in-process on 127.0.0.1 port 0
 * (never a fixed port) and driven with libcurl, one fresh daemon per test (Check forks each
 * test). Every assertion is on the status, headers and the parsed body; expected figures are
 * derived by hand from the formulas in docs/model.md, the derivation next to each.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "http.h"
#include "live.h"
#include "check_main.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------- */

static void get(const char *path, struct http_reply *r)
{
    ck_assert_msg(http_get(live_url(path), r), "GET %s failed", path);
}

static void post_json(const char *path, const char *json, struct http_reply *r)
{
    static const char *const headers[] = {"Content-Type: application/json", NULL};
    struct http_request req = {
        .method = "POST", .body = json, .body_len = strlen(json), .headers = headers};

    ck_assert_msg(http_do(live_url(path), &req, r), "POST %s failed", path);
}

static json_t *parse(const struct http_reply *r)
{
    json_error_t err;
    json_t *doc = json_loadb(r->body, r->body_len, 0, &err);

    ck_assert_msg(doc != NULL, "body is not JSON (%s): %.200s", err.text, r->body);
    return doc;
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
    ck_assert(json_is_string(live_at(doc, "type")));
    ck_assert_msg(
        strncmp(json_string_value(live_at(doc, "type")), "https://memwall.dev/problems/", 29) == 0,
        "type %s", json_string_value(live_at(doc, "type")));
    ck_assert(json_is_string(live_at(doc, "title")));
    ck_assert_uint_gt(strlen(json_string_value(live_at(doc, "title"))), 0);
    ck_assert_int_eq(live_int_at(doc, "status"), status);
    ck_assert(json_is_string(live_at(doc, "detail")));
    ck_assert(json_is_array(live_at(doc, "errors")));
    assert_header(r, "X-Content-Type-Options", "nosniff");
    return doc;
}

static bool problem_names(json_t *doc, const char *field)
{
    json_t *e;
    size_t i;

    json_array_foreach (live_at(doc, "errors"), i, e) {
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
    ck_assert(json_is_false(live_at(doc, "fit.fits")));
    ck_assert_str_eq(json_string_value(live_at(doc, "fit.bottleneck")), "state");
    ck_assert_int_eq(live_int_at(doc, "fit.min_gpus"), 2);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.params.bytes"), 14000000000LL);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.grads.bytes"), 14000000000LL);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.optimizer.bytes"), 84000000000LL);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.params.bytes") +
                         live_int_at(doc, "memory.per_gpu.grads.bytes") +
                         live_int_at(doc, "memory.per_gpu.optimizer.bytes"),
                     112000000000LL);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.activations.bytes"), 3689414656LL);
    ck_assert_int_eq(live_int_at(doc, "memory.bytes_per_param.total"), 16);
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
    days = live_num_at(doc, "runtime.days");
    ck_assert_msg(days >= 171.9 && days <= 172.0, "days %.6f", days);
    ck_assert_double_eq_tol(live_num_at(doc, "runtime.seconds"), 5.88e22 / 3.9576e15, 1.0);
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
    ck_assert_str_eq(json_string_value(live_at(doc, "status")), "ok");
    ck_assert_str_eq(json_string_value(live_at(doc, "version")), MEMWALL_VERSION);
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
    ck_assert(http_do(live_url("/openapi.yaml"), &req, &again));
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

    ck_assert(http_do(live_url("/fit"), &del, &r));
    doc = assert_problem(&r, 405);
    assert_header_has(&r, "Allow", "GET");
    assert_header_has(&r, "Allow", "POST");
    json_decref(doc);
    http_reply_free(&r);

    ck_assert(http_do(live_url("/healthz"), &put, &r));
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

    ck_assert(http_do(live_url("/fit"), &req, &r));
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
    long n = raw_exchange(live_port, req, sizeof req - 1, false, 5000, buf, sizeof buf);

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

    ck_assert(http_do(live_url("/fit"), &req, &r));
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

    ck_assert(http_do(live_url("/fit"), &req, &r));
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

    ck_assert(http_do(live_url("/fit"), &req, &r));
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
    ck_assert(http_do(live_url("/fit?gpus=8"), &req, &again));
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
        n = raw_exchange(live_port, req, strlen(req), false, 5000, buf, sizeof buf);
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

    ck_assert(http_do(live_url("/fit"), &req, &r));
    assert_header(&r, "X-Request-Id", "trace-42/abc");
    assert_header(&r, "X-Content-Type-Options", "nosniff");
    http_reply_free(&r);

    /* 129 bytes is one too many: a fresh id replaces it */
    memset(long_id, 'x', 129);
    snprintf(long_hdr, sizeof long_hdr, "X-Request-Id: %s", long_id);
    req.headers = too_long;
    ck_assert(http_do(live_url("/healthz"), &req, &r));
    ck_assert_ptr_nonnull(http_header(&r, "X-Request-Id", id, sizeof id));
    ck_assert_str_ne(id, long_id);
    ck_assert_uint_gt(strlen(id), 0);
    ck_assert_uint_le(strlen(id), 128);
    http_reply_free(&r);

    req.headers = not_ascii;
    ck_assert(http_do(live_url("/healthz"), &req, &r));
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

/* ---------------------------------------------------------------------------------------------
 * Operations: configuration, /readyz, /metrics, the access log
 * ------------------------------------------------------------------------------------------- */

static size_t body_write(char *data, size_t size, size_t nmemb, void *user)
{
    (void)data;
    (void)user;
    return size * nmemb;
}

/* GET path on an existing easy handle (so the connection is reused); returns the status. */
static long get_on(CURL *curl, const char *path, CURLcode *rc)
{
    long status = 0;

    curl_easy_setopt(curl, CURLOPT_URL, live_url(path));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, body_write);
    *rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

START_TEST(test_readyz_and_drain)
{
    struct http_reply r;
    json_t *doc;
    CURL *keep = curl_easy_init();
    CURLcode rc;
    long reused = -1;

    get("/readyz", &r);
    ck_assert_int_eq(r.status, 200);
    assert_header_has(&r, "Content-Type", "application/json");
    assert_header(&r, "Cache-Control", "no-store");
    doc = parse(&r);
    ck_assert_str_eq(json_string_value(live_at(doc, "status")), "ok");
    ck_assert_str_eq(json_string_value(live_at(doc, "version")), MEMWALL_VERSION);
    json_decref(doc);
    http_reply_free(&r);

    /* A connection opened before the drain keeps being served, and hears 503 from /readyz;
     * liveness stays 200 (draining is not dying). */
    ck_assert_ptr_nonnull(keep);
    ck_assert_int_eq(get_on(keep, "/readyz", &rc), 200);
    server_drain(live_srv);
    ck_assert_int_eq(get_on(keep, "/readyz", &rc), 503);
    ck_assert_int_eq(rc, CURLE_OK);
    curl_easy_getinfo(keep, CURLINFO_NUM_CONNECTS, &reused);
    ck_assert_int_eq(reused, 0); /* the same connection, not a new one */
    curl_easy_cleanup(keep);

    /* A new connection is refused outright. */
    ck_assert(!http_get(live_url("/healthz"), &r));
    ck_assert_int_eq(r.status, 0);
    http_reply_free(&r);
    /* Nothing in flight, nothing open: idle at once; draining twice is harmless. */
    server_drain(live_srv);
    /* Once MHD has seen the closed connections (a few ms), nothing is open: idle long before
     * the 60 s quiet period would say so. */
    for (int i = 0; i < 500 && !server_idle(live_srv, 60000); i++)
        nanosleep(&(struct timespec){.tv_nsec = 10000000L}, NULL);
    ck_assert(server_idle(live_srv, 60000));
    ck_assert_uint_eq(server_in_flight(live_srv), 0);
}
END_TEST

/* ---- a strict reader of the Prometheus text format (0.0.4) ---- */

struct sample {
    char name[128];
    char labels[256]; /* as written between the braces, "" when none */
    double value;
};

struct exposition {
    struct sample *s;
    size_t n;
};

static bool metric_name_ok(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';

        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return false;
    }
    return len > 0;
}

/* labels: name="value"(,name="value")* with \\ \" \n escapes only. */
static bool labels_ok(const char *p, size_t len)
{
    size_t i = 0;

    while (i < len) {
        size_t start = i;

        while (i < len && p[i] != '=')
            i++;
        if (i == len || !metric_name_ok(p + start, i - start) || i + 1 >= len || p[i + 1] != '"')
            return false;
        for (i += 2; i < len && p[i] != '"'; i++) {
            if (p[i] == '\\' && (i + 1 == len || strchr("\\\"n", p[++i]) == NULL))
                return false;
        }
        if (i == len)
            return false;
        i++;
        if (i < len && p[i++] != ',')
            return false;
    }
    return true;
}

/* Parse text strictly: every line is blank, "# HELP name text", "# TYPE name type" (before the
 * family's samples), or "name{labels} value". Aborts the test on anything else. */
static struct exposition parse_exposition(const char *text)
{
    struct exposition e = {calloc(4096, sizeof(struct sample)), 0};
    char typed[64][128];
    size_t ntyped = 0;

    ck_assert_ptr_nonnull(e.s);
    for (const char *line = text; *line != '\0';) {
        const char *eol = strchr(line, '\n');
        size_t len;

        ck_assert_msg(eol != NULL, "last line lacks its newline");
        len = (size_t)(eol - line);
        if (len == 0) {
            /* blank */
        } else if (strncmp(line, "# HELP ", 7) == 0) {
            ck_assert(metric_name_ok(line + 7, strcspn(line + 7, " \n")));
        } else if (strncmp(line, "# TYPE ", 7) == 0) {
            char name[128], type[32];

            ck_assert_int_eq(sscanf(line, "# TYPE %127s %31s", name, type), 2);
            ck_assert_msg(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 ||
                              strcmp(type, "histogram") == 0,
                          "type %s", type);
            ck_assert_uint_lt(ntyped, 64);
            snprintf(typed[ntyped++], sizeof typed[0], "%s", name);
        } else {
            struct sample *s = &e.s[e.n++];
            size_t nlen = strcspn(line, "{ ");
            const char *rest = line + nlen;
            char *end;
            bool known = false;

            ck_assert_uint_lt(e.n, 4096);
            ck_assert_msg(line[0] != '#', "stray comment: %.*s", (int)len, line);
            ck_assert_msg(metric_name_ok(line, nlen), "bad name: %.*s", (int)len, line);
            snprintf(s->name, sizeof s->name, "%.*s", (int)nlen, line);
            if (*rest == '{') {
                const char *close = strchr(rest, '}');

                ck_assert_msg(close != NULL && close < eol, "unclosed labels: %.*s", (int)len,
                              line);
                ck_assert_msg(labels_ok(rest + 1, (size_t)(close - rest - 1)), "bad labels: %.*s",
                              (int)len, line);
                snprintf(s->labels, sizeof s->labels, "%.*s", (int)(close - rest - 1), rest + 1);
                rest = close + 1;
            }
            ck_assert_msg(*rest == ' ', "no space before the value: %.*s", (int)len, line);
            rest++;
            if (strncmp(rest, "+Inf", 4) == 0) {
                s->value = 1e308;
                end = (char *)rest + 4;
            } else {
                s->value = strtod(rest, &end);
            }
            ck_assert_msg(end == eol && end != rest, "bad value: %.*s", (int)len, line);
            /* the family (name less a histogram suffix) must have been typed */
            for (size_t t = 0; t < ntyped && !known; t++) {
                size_t tl = strlen(typed[t]);

                known = strcmp(s->name, typed[t]) == 0 || (strncmp(s->name, typed[t], tl) == 0 &&
                                                           (strcmp(s->name + tl, "_bucket") == 0 ||
                                                            strcmp(s->name + tl, "_sum") == 0 ||
                                                            strcmp(s->name + tl, "_count") == 0));
            }
            ck_assert_msg(known, "sample before its TYPE: %.*s", (int)len, line);
        }
        line = eol + 1;
    }
    return e;
}

/* The value of name{labels}, 0 when absent (a counter not yet incremented). */
static double value_of(const struct exposition *e, const char *name, const char *labels)
{
    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->s[i].name, name) == 0 && strcmp(e->s[i].labels, labels) == 0)
            return e->s[i].value;
    }
    return 0;
}

static bool has_sample(const struct exposition *e, const char *name, const char *labels)
{
    for (size_t i = 0; i < e->n; i++) {
        if (strcmp(e->s[i].name, name) == 0 && strcmp(e->s[i].labels, labels) == 0)
            return true;
    }
    return false;
}

/* Scrape until the only request in flight is the scrape itself, so every request made before
 * has been recorded (the completion callback records after the last byte is sent). */
static struct exposition scrape(void)
{
    for (int tries = 0; tries < 100; tries++) {
        struct http_reply r;
        struct exposition e;

        get("/metrics", &r);
        ck_assert_int_eq(r.status, 200);
        e = parse_exposition(r.body);
        http_reply_free(&r);
        if (value_of(&e, "memwall_http_requests_in_flight", "") == 1)
            return e;
        free(e.s);
        nanosleep(&(struct timespec){.tv_nsec = 10000000L}, NULL);
    }
    ck_abort_msg("requests stayed in flight");
    return (struct exposition){NULL, 0};
}

START_TEST(test_metrics)
{
    static const char *const plain[] = {NULL};
    struct http_request put = {.method = "PUT", .body = "", .headers = plain};
    struct http_request brew = {.method = "BREW"};
    struct http_reply r;
    struct exposition before, after;
    char ct[128];
    /* Expected increments, one per request made below (route, method, code). */
    static const struct {
        const char *labels;
        double n;
    } want[] = {
        {"route=\"/fit\",method=\"GET\",code=\"200\"", 3},
        {"route=\"/flops\",method=\"POST\",code=\"200\"", 2},
        {"route=\"unmatched\",method=\"GET\",code=\"404\"", 2},
        {"route=\"/fit\",method=\"PUT\",code=\"405\"", 1},
        {"route=\"/fit\",method=\"other\",code=\"405\"", 1},
        {"route=\"/healthz\",method=\"HEAD\",code=\"200\"", 1},
        {"route=\"/memory\",method=\"GET\",code=\"400\"", 1},
    };
    /* Per-route totals of the above: /fit 3+1+1 = 5, /flops 2, unmatched 2, /healthz 1,
     * /memory 1. */
    static const struct {
        const char *route;
        double n;
    } per_route[] = {{"/fit", 5}, {"/flops", 2}, {"unmatched", 2}, {"/healthz", 1}, {"/memory", 1}};

    get("/metrics", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(http_header(&r, "Content-Type", ct, sizeof ct));
    ck_assert_str_eq(ct, "text/plain; version=0.0.4; charset=utf-8");
    http_reply_free(&r);

    before = scrape();
    for (int i = 0; i < 3; i++) {
        get("/fit", &r);
        http_reply_free(&r);
    }
    for (int i = 0; i < 2; i++) {
        post_json("/flops", "{}", &r);
        http_reply_free(&r);
    }
    get("/nope", &r);
    http_reply_free(&r);
    get("/no/such/thing?x=1", &r);
    http_reply_free(&r);
    ck_assert(http_do(live_url("/fit"), &put, &r));
    ck_assert_int_eq(r.status, 405);
    http_reply_free(&r);
    ck_assert(http_do(live_url("/fit"), &brew, &r));
    ck_assert_int_eq(r.status, 405);
    http_reply_free(&r);
    ck_assert(http_do(live_url("/healthz"), &(struct http_request){.method = "HEAD"}, &r));
    http_reply_free(&r);
    get("/memory?batch=0", &r);
    ck_assert_int_eq(r.status, 400);
    http_reply_free(&r);
    after = scrape();

    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double d = value_of(&after, "memwall_http_requests_total", want[i].labels) -
                   value_of(&before, "memwall_http_requests_total", want[i].labels);

        ck_assert_msg(d == want[i].n, "%s grew by %g, not %g", want[i].labels, d, want[i].n);
    }
    /* Nothing else moved, except /metrics itself: the total over all other series equals the
     * 11 requests made (3 + 2 + 2 + 1 + 1 + 1 + 1). */
    {
        double total = 0;

        for (size_t i = 0; i < after.n; i++) {
            if (strcmp(after.s[i].name, "memwall_http_requests_total") == 0 &&
                strstr(after.s[i].labels, "route=\"/metrics\"") == NULL)
                total += after.s[i].value - value_of(&before, after.s[i].name, after.s[i].labels);
        }
        ck_assert_msg(total == 11, "requests_total grew by %g, not 11", total);
    }
    for (size_t i = 0; i < sizeof per_route / sizeof per_route[0]; i++) {
        char labels[128], inf[160];
        double count, prev = -1;

        snprintf(labels, sizeof labels, "route=\"%s\"", per_route[i].route);
        snprintf(inf, sizeof inf, "route=\"%s\",le=\"+Inf\"", per_route[i].route);
        count = value_of(&after, "memwall_http_request_duration_seconds_count", labels) -
                value_of(&before, "memwall_http_request_duration_seconds_count", labels);
        ck_assert_msg(count == per_route[i].n, "%s count grew by %g", labels, count);
        ck_assert(value_of(&after, "memwall_http_request_duration_seconds_bucket", inf) ==
                  value_of(&after, "memwall_http_request_duration_seconds_count", labels));
        ck_assert(value_of(&after, "memwall_http_request_duration_seconds_sum", labels) >
                  value_of(&before, "memwall_http_request_duration_seconds_sum", labels));
        /* buckets are cumulative: never decreasing with le */
        for (size_t k = 0; k < after.n; k++) {
            if (strcmp(after.s[k].name, "memwall_http_request_duration_seconds_bucket") == 0 &&
                strncmp(after.s[k].labels, labels, strlen(labels)) == 0 &&
                after.s[k].labels[strlen(labels)] == ',') {
                ck_assert(after.s[k].value >= prev);
                prev = after.s[k].value;
            }
        }
    }
    /* The gauges and process families are there, with plausible values. */
    ck_assert(value_of(&after, "memwall_build_info", "version=\"" MEMWALL_VERSION "\"") == 1);
    ck_assert(value_of(&after, "process_resident_memory_bytes", "") > 1e5);
    ck_assert(value_of(&after, "process_open_fds", "") >= 3);
    ck_assert(value_of(&after, "process_start_time_seconds", "") > 1.6e9);
    ck_assert(value_of(&after, "process_start_time_seconds", "") <= (double)time(NULL) + 1);
    ck_assert(has_sample(&after, "memwall_http_connections_open", ""));
    ck_assert(value_of(&after, "memwall_http_requests_aborted_total", "") == 0);
    free(before.s);
    free(after.s);
}
END_TEST

/* max_body_bytes and max_uri_bytes from the configuration, with the limit in the detail. */
START_TEST(test_configured_limits)
{
    struct server_config cfg = {.max_body_bytes = 100, .max_uri_bytes = 64};
    static char body[102];
    static char path[80];
    struct http_reply r;
    json_t *doc;

    live_restart(cfg);
    /* 101 bytes: one over */
    memset(body, ' ', 101);
    body[0] = '{';
    body[100] = '}';
    post_json("/fit", body, &r);
    doc = assert_problem(&r, 413);
    ck_assert_msg(strstr(json_string_value(live_at(doc, "detail")), "100 bytes") != NULL, "%s",
                  r.body);
    json_decref(doc);
    http_reply_free(&r);
    /* 100 bytes ("{" + 98 spaces + "}") is within the limit: the defaults, 200 */
    body[99] = '}';
    body[100] = '\0';
    post_json("/fit", body, &r);
    ck_assert_int_eq(r.status, 200);
    http_reply_free(&r);

    /* "/fit?x=" is 7 bytes; 58 more make 65, one over 64 */
    snprintf(path, sizeof path, "/fit?x=%058d", 0);
    ck_assert_uint_eq(strlen(path), 65);
    get(path, &r);
    json_decref(assert_problem(&r, 414));
    http_reply_free(&r);
    path[64] = '\0'; /* 64 bytes: reaches the api, which names the unknown input */
    get(path, &r);
    json_decref(assert_problem(&r, 400));
    http_reply_free(&r);
}
END_TEST

START_TEST(test_cors_list)
{
    struct server_config cfg = {.cors_origins = "https://a.example,http://b.example:8080"};
    static const char *const from_b[] = {"Origin: http://b.example:8080", NULL};
    static const char *const from_c[] = {"Origin: https://c.example", NULL};
    static const char *const prefix[] = {"Origin: https://a.exampl", NULL};
    struct http_request req = {.headers = from_b};
    struct http_reply r;
    char buf[128];

    live_restart(cfg);
    ck_assert(http_do(live_url("/gpus"), &req, &r));
    assert_header(&r, "Access-Control-Allow-Origin", "http://b.example:8080");
    assert_header(&r, "Vary", "Origin");
    http_reply_free(&r);
    req.headers = from_c;
    ck_assert(http_do(live_url("/gpus"), &req, &r));
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_null(http_header(&r, "Access-Control-Allow-Origin", buf, sizeof buf));
    assert_header(&r, "Vary", "Origin");
    http_reply_free(&r);
    req.headers = prefix; /* whole entries only */
    ck_assert(http_do(live_url("/gpus"), &req, &r));
    ck_assert_ptr_null(http_header(&r, "Access-Control-Allow-Origin", buf, sizeof buf));
    http_reply_free(&r);
}
END_TEST

/* A second connection from the same address is refused when max_per_ip is 1. */
START_TEST(test_per_ip_limit)
{
    struct server_config cfg = {.max_per_ip = 1};
    char buf[256];
    struct http_reply r;
    int fd;
    struct sockaddr_in addr = {.sin_family = AF_INET};

    live_restart(cfg);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    addr.sin_port = htons((uint16_t)live_port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    /* let MHD accept it before the second one arrives */
    nanosleep(&(struct timespec){.tv_nsec = 100000000L}, NULL);
    ck_assert(!http_get(live_url("/healthz"), &r));
    http_reply_free(&r);
    close(fd);
    nanosleep(&(struct timespec){.tv_nsec = 100000000L}, NULL);
    ck_assert(http_get(live_url("/healthz"), &r));
    ck_assert_int_eq(r.status, 200);
    http_reply_free(&r);
    (void)buf;
}
END_TEST

/* Read whatever log lines are in fd (non-blocking) into buf. */
static size_t drain_fd(int fd, char *buf, size_t size)
{
    size_t got = 0;

    for (int idle = 0; idle < 20 && got + 1 < size;) {
        ssize_t n = read(fd, buf + got, size - 1 - got);

        if (n > 0) {
            got += (size_t)n;
            idle = 0;
        } else {
            idle++;
            nanosleep(&(struct timespec){.tv_nsec = 10000000L}, NULL);
        }
    }
    buf[got] = '\0';
    return got;
}

START_TEST(test_access_log_json)
{
    int pipefd[2];
    struct server_config cfg = {.access_log = true};
    static const char *const id[] = {"X-Request-Id: trace-7", NULL};
    struct http_request req = {.headers = id};
    struct http_reply r;
    static char buf[65536];
    char *line, *save = NULL;
    int lines = 0;

    ck_assert_int_eq(pipe(pipefd), 0);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    cfg.log_fd = pipefd[1];
    live_restart(cfg);
    ck_assert(http_do(live_url("/fit?gpus=2"), &req, &r));
    ck_assert_int_eq(r.status, 200);
    http_reply_free(&r);
    get("/nope/%0a%22x", &r); /* a newline and a quote in the path must not break the line */
    http_reply_free(&r);
    live_stop(); /* every request completed and logged */
    drain_fd(pipefd[0], buf, sizeof buf);
    close(pipefd[0]);
    close(pipefd[1]);

    for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        json_error_t err;
        json_t *doc = json_loads(line, 0, &err);
        const char *when;

        ck_assert_msg(doc != NULL, "not a JSON line: %s", line);
        ck_assert_str_eq(json_string_value(live_at(doc, "event")), "request");
        ck_assert_str_eq(json_string_value(live_at(doc, "level")), "info");
        when = json_string_value(live_at(doc, "time"));
        /* RFC 3339 with milliseconds, UTC: 2026-01-02T03:04:05.678Z is 24 bytes */
        ck_assert_msg(when != NULL && strlen(when) == 24 && when[10] == 'T' && when[19] == '.' &&
                          when[23] == 'Z',
                      "time %s", when ? when : "(none)");
        ck_assert_str_eq(json_string_value(live_at(doc, "method")), "GET");
        ck_assert(json_is_number(live_at(doc, "duration_ms")));
        ck_assert(live_num_at(doc, "duration_ms") >= 0);
        ck_assert(json_is_integer(live_at(doc, "bytes")));
        ck_assert_msg(strncmp(json_string_value(live_at(doc, "remote")), "127.0.0.1:", 10) == 0,
                      "remote %s", json_string_value(live_at(doc, "remote")));
        /* two workers: the lines may come in either order */
        if (strcmp(json_string_value(live_at(doc, "path")), "/fit") == 0) {
            ck_assert_str_eq(json_string_value(live_at(doc, "route")), "/fit");
            ck_assert_str_eq(json_string_value(live_at(doc, "path")), "/fit");
            ck_assert_int_eq(live_int_at(doc, "status"), 200);
            ck_assert_int_gt(live_int_at(doc, "bytes"), 100);
            ck_assert_str_eq(json_string_value(live_at(doc, "request_id")), "trace-7");
        } else {
            ck_assert_str_eq(json_string_value(live_at(doc, "route")), "unmatched");
            ck_assert_str_eq(json_string_value(live_at(doc, "path")), "/nope/%0A\"x");
            ck_assert_int_eq(live_int_at(doc, "status"), 404);
            ck_assert_uint_gt(strlen(json_string_value(live_at(doc, "request_id"))), 0);
        }
        json_decref(doc);
        lines++;
    }
    ck_assert_int_eq(lines, 2);
}
END_TEST

START_TEST(test_access_log_text_and_off)
{
    int pipefd[2];
    struct server_config cfg = {.access_log = true, .log_format = SERVER_LOG_TEXT};
    struct http_reply r;
    static char buf[8192];

    ck_assert_int_eq(pipe(pipefd), 0);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    cfg.log_fd = pipefd[1];
    live_restart(cfg);
    get("/healthz", &r);
    http_reply_free(&r);
    live_stop();
    drain_fd(pipefd[0], buf, sizeof buf);
    /* "TIME info request method=GET route=/healthz path=/healthz status=200 ..." */
    ck_assert_msg(
        strstr(buf, "Z info request method=GET route=/healthz path=/healthz status=200 ") != NULL,
        "%s", buf);
    ck_assert_ptr_nonnull(strstr(buf, " remote=127.0.0.1:"));
    /* exactly one line, whole */
    ck_assert_ptr_eq(strchr(buf, '\n'), buf + strlen(buf) - 1);

    /* access log off: the same request writes nothing; level warn hides info lines too */
    cfg.access_log = false;
    live_restart(cfg);
    get("/healthz", &r);
    http_reply_free(&r);
    live_stop();
    ck_assert_uint_eq(drain_fd(pipefd[0], buf, sizeof buf), 0);
    cfg.access_log = true;
    cfg.log_level = SERVER_LOG_WARN;
    live_restart(cfg);
    get("/healthz", &r);
    http_reply_free(&r);
    live_stop();
    ck_assert_uint_eq(drain_fd(pipefd[0], buf, sizeof buf), 0);
    close(pipefd[0]);
    close(pipefd[1]);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * A model the user brings (issue 13): Mixtral's config.json on 8 GPUs with ep 8
 * ------------------------------------------------------------------------------------------- */

#define MIXTRAL_CONFIG                                                                             \
    "{\"model_type\":\"mixtral\",\"hidden_size\":4096,\"intermediate_size\":14336,"                \
    "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":8,"               \
    "\"vocab_size\":32000,\"tie_word_embeddings\":false,\"max_position_embeddings\":32768,"        \
    "\"hidden_act\":\"silu\",\"num_local_experts\":8,\"num_experts_per_tok\":2,"                   \
    "\"rope_theta\":1000000.0,\"router_aux_loss_coef\":0.02,\"sliding_window\":null}"

/*
 * Non-experts 1,605,636,096 and experts 45,097,156,608 (test_core_moe.c derives both). ZeRO 3 on
 * 8 GPUs with ep 8: the non-expert state is sharded over all 8 ranks, each expert's over its
 * expert data-parallel group of 8 / 8 = 1 rank, so per GPU:
 *   weights 2 x 1,605,636,096 / 8 = 401,409,024 + 2 x 45,097,156,608 / 8 = 11,274,289,152
 *     -> 11,675,698,176 (and the same for the bf16 grads);
 *   optimizer 12 x 1,605,636,096 / 8 = 2,408,454,144 + 12 x 5,637,144,576 = 67,645,734,912
 *     -> 70,054,189,056;
 *   state 93,405,585,408 > 80e9: it does not fit and the state is the bottleneck.
 * FLOPs 6 x 12,879,925,248 x 1.4e12.
 */
START_TEST(test_fit_mixtral_config)
{
    struct http_reply r;
    json_t *doc;

    post_json("/fit", "{\"config\":" MIXTRAL_CONFIG ",\"gpus\":8,\"ep\":8}", &r);
    ck_assert_int_eq(r.status, 200);
    doc = parse(&r);
    ck_assert_str_eq(json_string_value(live_at(doc, "inputs.shape.source")), "config");
    ck_assert_int_eq(live_int_at(doc, "inputs.params"), 46702792704LL);
    ck_assert_int_eq(live_int_at(doc, "inputs.active_params"), 12879925248LL);
    ck_assert_int_eq(live_int_at(doc, "inputs.shape.expert_params"), 45097156608LL);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.params.bytes"), 11675698176LL);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.grads.bytes"), 11675698176LL);
    ck_assert_int_eq(live_int_at(doc, "memory.per_gpu.optimizer.bytes"), 70054189056LL);
    ck_assert_int_eq(live_int_at(doc, "memory.experts.optimizer.bytes"), 67645734912LL);
    ck_assert(json_is_false(live_at(doc, "fit.fits")));
    ck_assert_str_eq(json_string_value(live_at(doc, "fit.bottleneck")), "state");
    json_decref(doc);
    http_reply_free(&r);

    post_json("/flops", "{\"config\":" MIXTRAL_CONFIG "}", &r);
    ck_assert_int_eq(r.status, 200);
    doc = parse(&r);
    ck_assert(fabs(json_real_value(live_at(doc, "flops.six_nd")) / (6.0 * 12879925248.0 * 1.4e12) -
                   1.0) < 1e-12);
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

/* Bad configs are a 400 naming config.<key>; ep that divides neither the experts nor the ranks
 * is a 422 naming ep (inputs valid one by one, impossible together); config in a query string
 * is a 400 naming config. */
START_TEST(test_bad_configs)
{
    static const struct {
        const char *body, *field;
        unsigned status;
    } cases[] = {
        /* unknown model_type without the generic keys */
        {"{\"config\":{\"model_type\":\"nope\",\"hidden_size\":64}}", "config.model_type", 400},
        /* a head count that does not divide the hidden size */
        {"{\"config\":{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_attention_heads\":30,"
         "\"num_hidden_layers\":2}}",
         "config.num_attention_heads", 400},
        /* experts_per_token > experts */
        {"{\"config\":{\"model_type\":\"mixtral\",\"hidden_size\":64,\"intermediate_size\":128,"
         "\"num_hidden_layers\":2,\"num_attention_heads\":1,\"num_local_experts\":4,"
         "\"num_experts_per_tok\":5}}",
         "config.num_experts_per_tok", 400},
        {"{\"config\":[1]}", "config", 400},
        {"{\"config\":" MIXTRAL_CONFIG ",\"gpus\":8,\"ep\":3}", "ep", 422},
        {"{\"config\":" MIXTRAL_CONFIG ",\"gpus\":12,\"ep\":8}", "ep", 422},
        {"{\"config\":" MIXTRAL_CONFIG ",\"model\":\"llama2-7b\"}", "config", 422},
    };
    struct http_reply r;
    json_t *doc;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        post_json("/fit", cases[i].body, &r);
        doc = assert_problem(&r, cases[i].status);
        ck_assert_msg(problem_names(doc, cases[i].field), "case %zu: %s not named: %s", i,
                      cases[i].field, r.body);
        json_decref(doc);
        http_reply_free(&r);
    }
    get("/fit?config=x", &r);
    doc = assert_problem(&r, 400);
    ck_assert(problem_names(doc, "config"));
    json_decref(doc);
    http_reply_free(&r);
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("api_live");
    TCase *routes = tcase_create("routes");
    TCase *errors = tcase_create("errors");
    TCase *headers = tcase_create("headers");
    TCase *ops = tcase_create("operations");
    TCase *all[] = {routes, errors, headers, ops};

    for (size_t i = 0; i < 4; i++) {
        tcase_add_checked_fixture(all[i], live_start, live_stop);
        tcase_set_timeout(all[i], 60);
        suite_add_tcase(s, all[i]);
    }
    tcase_add_test(routes, test_get_post_identical);
    tcase_add_test(routes, test_fit_default);
    tcase_add_test(routes, test_fit_mixtral_config);
    tcase_add_test(errors, test_bad_configs);
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
    tcase_add_test(ops, test_readyz_and_drain);
    tcase_add_test(ops, test_metrics);
    tcase_add_test(ops, test_configured_limits);
    tcase_add_test(ops, test_cors_list);
    tcase_add_test(ops, test_per_ip_limit);
    tcase_add_test(ops, test_access_log_json);
    tcase_add_test(ops, test_access_log_text_and_off);
    return s;
}

int main(void)
{
    int rc;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = check_main_run(api_suite());
    curl_global_cleanup();
    return rc;
}
