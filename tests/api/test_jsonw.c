/*
 * test_jsonw.c - proof that the streaming JSON writer (api/jsonw.c, used by api/write.c) prints
 * exactly what jansson prints, so a reply streamed by it reads back and dumps again unchanged.
 *
 * The reference is jansson itself, never a copied output: numbers against json_dumps of a
 * json_real with the reply flags; strings against json_dumps of a json_string; whole replies to
 * random requests must survive a jansson round trip unchanged (parse, dump with the same flags),
 * and a batch must be its items' single replies. The bytes of the replies themselves are held by
 * the golden files (tests/golden, suite golden). Inputs come from a fixed-seed generator, so a
 * failure reproduces.
 */
#include <check.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_internal.h"
#include "check_main.h"

/* xorshift64*: deterministic, good enough to spread inputs. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static double rnd_unit(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0; /* [0, 1) */
}

/* ---------------------------------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------------------------------- */

static unsigned long checked_numbers;

static void expect_number(double x)
{
    char mine[48];
    size_t n = api_jsonw_format_double(x, mine);
    json_t *real = json_real(x);
    char *want;

    checked_numbers++;
    if (real == NULL) { /* NaN and infinities: jansson refuses them, so must we */
        ck_assert_msg(n == 0, "non-finite %g was formatted", x);
        return;
    }
    want = json_dumps(real, API_DUMP_FLAGS | JSON_ENCODE_ANY);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(n == strlen(want) && memcmp(mine, want, n) == 0, "%.17g: jansson %s, jsonw %.*s",
                  x, want, (int)n, mine);
    free(want);
    json_decref(real);
}

/* api_jsonw_put_gb(b) must write exactly what jansson dumps for (double)b / 1e9. */
static void expect_gb(int64_t b)
{
    char mine[48];
    char *end = api_jsonw_put_gb(mine, b);
    json_t *real = json_real((double)b / 1e9);
    char *want = json_dumps(real, API_DUMP_FLAGS | JSON_ENCODE_ANY);

    checked_numbers++;
    ck_assert_ptr_nonnull(want);
    ck_assert_msg((size_t)(end - mine) == strlen(want) && memcmp(mine, want, strlen(want)) == 0,
                  "gb of %lld: jansson %s, jsonw %.*s", (long long)b, want, (int)(end - mine),
                  mine);
    free(want);
    json_decref(real);
}

static double from_bits(uint64_t bits)
{
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

START_TEST(numbers_like_jansson)
{
    static const double edges[] = {
        0.0, -0.0, 1.0, -1.0, 0.1, 0.3, 1e-4, 9.99999999999999e-5, 9.999999999999999e-5,
        0.000123456789012345678, 1e-5, 1e14, 1e15, -1e15, 999999999999999.0, 999999999999999.4,
        999999999999999.5, 999999999999999.9,
        /* not integers, but 15 digits leave an integer whose
         * trailing zeros must still be printed */
        14956223057340.004, 100000000000000.4, -12000000000000.03, 120000.00000000001,
        123456789012345.5, /* an exact tie: to even, up */
        123456789012344.5, /* an exact tie: to even, down */
        1000000000000005.0, 1000000000000015.0, 1000000000000025.0, 9007199254740993.0, 5.88e22,
        1e37, 9.99999999999999e37, 1e38, 1.7e38, 1e300, DBL_MAX, DBL_MIN, DBL_TRUE_MIN, 5e-324,
        1.0 / 3.0, 2.0 / 3.0, 0.1 + 0.2, 12.5, 26.0 / 1073741824.0, NAN, INFINITY, -INFINITY};
    unsigned long i;
    int k;

    checked_numbers = 0;
    for (i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        expect_number(edges[i]);
        expect_number(-edges[i]);
    }
    /* b / 1e9 from b's digits: zero, both sides of every power of ten (10^15 leaves the digits
     * path), trailing zeros of every count, the extremes. */
    {
        static const int64_t gb_edges[] = {0,           1,           5,
                                           12345,       100000,      123456,
                                           999999999,   1000000000,  1000000001,
                                           26000000000, 26843545600, 1234567890123,
                                           INT64_MAX,   INT64_MIN,   INT64_MIN + 1};
        int64_t p = 1;

        for (i = 0; i < sizeof gb_edges / sizeof gb_edges[0]; i++) {
            expect_gb(gb_edges[i]);
            if (gb_edges[i] != INT64_MIN)
                expect_gb(-gb_edges[i]);
        }
        for (k = 0; k <= 18; k++) {
            if (k > 0) /* 10^k, up to 10^18 and no further */
                p *= 10;
            for (int64_t d = -1; d <= 1; d++) {
                expect_gb(p + d);
                expect_gb(-(p + d));
                expect_gb(p * 7 + d);
            }
        }
        for (i = 1; i < 1000000000000000ULL; i *= 10) /* 1, 10, ... 10^14 times 987 */
            expect_gb((int64_t)(987 * i));
    }
    /* Around every power of ten in and beyond the fast range, and the doubles next to them. */
    for (k = -8; k <= 40; k++) {
        double p = pow(10.0, k);
        double d = p;
        for (i = 0; i < 4; i++)
            d = nextafter(d, 0);
        for (i = 0; i < 9; i++, d = nextafter(d, INFINITY))
            expect_number(d);
        expect_number(p * 0.5);
        expect_number(p * 9.5);
    }
    rng_state = 0x9E3779B97F4A7C15ULL;
    for (i = 0; i < 250000; i++) {
        /* Any bit pattern: every path, NaNs and subnormals included. */
        expect_number(from_bits(rnd()));
        /* Log-uniform over 1e-6 .. 1e40, the fast paths' range and its borders. */
        expect_number(pow(10.0, -6.0 + 46.0 * rnd_unit()) * (rnd() & 1 ? 1 : -1));
        /* The reply's own shapes: bytes / 1e9 and / 2^30, ratios, integers of any size. */
        int64_t b = (int64_t)(rnd() >> (rnd() % 64));
        expect_number((double)b / 1e9);
        expect_gb(b);
        expect_gb(b == INT64_MIN ? b : -b);
        expect_gb((int64_t)(rnd() % 1000000000000000ULL)); /* the digits path's whole range */
        expect_number((double)b / 1073741824.0);
        expect_number((double)b);
        /* Exact halves at 15 digits: n + 0.5 with 15 integer digits, n * 10 + 5 with 16. */
        uint64_t n = 100000000000000ULL + rnd() % 900000000000000ULL;
        expect_number((double)n + 0.5);
        expect_number((double)(n * 10 + 5));
    }
    ck_assert_uint_ge(checked_numbers, 1000000);
}
END_TEST

/* Integers write their digits in place from a digit count: every count from 1 to 19, both
 * sides of each power of ten, the extremes and random values, as elements of one array so the
 * separators are checked too, against jansson's dump of the same array. */
START_TEST(integers_like_jansson)
{
    struct api_jsonw w;
    json_t *arr = json_array();
    char *want;

    rng_state = 0xD1B54A32D192ED03ULL;
    api_jsonw_init(&w);
    api_jsonw_open_array(&w);
    for (int i = 0; i < 2000; i++) {
        int64_t v;
        unsigned long long p = 1;

        if (i < 19 * 6) {
            for (int k = 0; k < i / 6; k++)
                p *= 10;
            v = (int64_t)p + (i % 3) - 1; /* 10^k - 1, 10^k, 10^k + 1 */
            v = (i % 6) < 3 ? v : -v;
        } else if (i < 19 * 6 + 4) {
            static const int64_t extremes[] = {0, INT64_MAX, INT64_MIN, INT64_MIN + 1};
            v = extremes[i - 19 * 6];
        } else {
            v = (int64_t)(rnd() >> (rnd() % 64));
        }
        api_jsonw_int(&w, v);
        json_array_append_new(arr, json_integer(v));
    }
    api_jsonw_close_array(&w);
    want = json_dumps(arr, API_DUMP_FLAGS);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(!w.failed && w.len == strlen(want) && memcmp(w.buf, want, w.len) == 0,
                  "jansson %.200s, jsonw %.200s", want, w.buf);
    free(want);
    json_decref(arr);
    api_jsonw_free(&w);
}
END_TEST

/* Digits come in 8-digit chunks by fixed-point multiplication (jsonw.c, chunk()): every value
 * below 10^6, a stride through each chunk's range, and the chunk seams of 64-bit values, against
 * the C library's own decimal conversion. */
static void expect_int(int64_t v)
{
    char mine[24], want[24];
    char *end = api_jsonw_put_int(mine, v);
    int n = snprintf(want, sizeof want, "%lld", (long long)v);

    ck_assert_msg(end - mine == n && memcmp(mine, want, (size_t)n) == 0, "%s: jsonw %.*s", want,
                  (int)(end - mine), mine);
}

START_TEST(integers_in_chunks)
{
    static const int64_t seams[] = {99999999,         100000000,         100000001,
                                    9999999999999999, 10000000000000000, 10000000000000001,
                                    1234567800000000, 1000000099999999,  9999999900000000};
    int64_t v;

    for (v = 0; v < 1000000; v++)
        expect_int(v);
    for (v = 1000000; v < 100000000; v += 997)
        expect_int(v);
    for (v = 99999999; v > 0; v -= 1009) /* the top of the range, 8 digits each */
        expect_int(v);
    for (size_t i = 0; i < sizeof seams / sizeof seams[0]; i++) {
        for (int64_t k = 1; k <= 922; k *= 3) {
            expect_int(seams[i]);
            expect_int(seams[i] * k);
            expect_int(-seams[i] * k);
        }
    }
    rng_state = 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < 200000; i++)
        expect_int((int64_t)rnd());
}
END_TEST

/* Keys written as given (escaped where needed) and pre-encoded, with string, integer, real and
 * nested values: an object against jansson's dump of the same object (which keeps the order). */
START_TEST(members_like_jansson)
{
    static const char *const keys[] = {"a", "plain_key", "quote\"d", "tab\tkey", "caf\xc3\xa9", ""};
    struct api_jsonw w;
    json_t *obj = json_object();
    char *want;

    api_jsonw_init(&w);
    api_jsonw_open_object(&w);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        api_jsonw_key(&w, keys[i]);
        api_jsonw_string(&w, keys[i]);
        json_object_set_new(obj, keys[i], json_string(keys[i]));
    }
    api_jsonw_key_encoded(&w, API_JSONW_KEY("encoded"));
    api_jsonw_double(&w, 0.1);
    json_object_set_new(obj, "encoded", json_real(0.1));
    api_jsonw_key(&w, "nested");
    api_jsonw_open_object(&w);
    api_jsonw_key_encoded(&w, API_JSONW_KEY("n"));
    api_jsonw_int(&w, -7);
    api_jsonw_close_object(&w);
    json_object_set_new(obj, "nested", json_pack("{s:i}", "n", -7));
    api_jsonw_close_object(&w);
    want = json_dumps(obj, API_DUMP_FLAGS | JSON_PRESERVE_ORDER);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(!w.failed && w.len == strlen(want) && memcmp(w.buf, want, w.len) == 0,
                  "jansson %s, jsonw %.*s", want, (int)w.len, w.buf);
    free(want);
    json_decref(obj);
    api_jsonw_free(&w);
}
END_TEST

/* A writer over caller storage (api_jsonw_init_buffer, the access log's stack line) writes the
 * heap writer's bytes whatever the storage size: kept in place while the text fits, moved to the
 * heap (text carried over) the first time it does not, then grown as usual. */
static void write_sample(struct api_jsonw *w)
{
    api_jsonw_open_object(w);
    api_jsonw_key_encoded(w, API_JSONW_KEY("time"));
    api_jsonw_string(w, "2026-12-01T01:02:03.456Z");
    for (int i = 0; i < 40; i++) {
        api_jsonw_key(w, "k");
        api_jsonw_double(w, 1.0 / (i + 3));
    }
    api_jsonw_close_object(w);
    api_jsonw_append(w, "\n", 1);
}

START_TEST(caller_storage_like_heap)
{
    static const size_t sizes[] = {1, 2, 8, 40, 100, 4096};
    struct api_jsonw heap;

    api_jsonw_init(&heap);
    write_sample(&heap);
    ck_assert(!heap.failed);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char storage[4096];
        struct api_jsonw w;
        bool fits = heap.len <= sizes[i];

        memset(storage, '#', sizeof storage);
        api_jsonw_init_buffer(&w, storage, sizes[i]);
        write_sample(&w);
        ck_assert(!w.failed);
        ck_assert_msg(w.len == heap.len && memcmp(w.buf, heap.buf, w.len) == 0, "storage %zu: %.*s",
                      sizes[i], (int)w.len, w.buf);
        ck_assert_msg((w.buf == storage) == fits, "storage %zu: in place %d", sizes[i],
                      w.buf == storage);
        if (sizes[i] < sizeof storage) /* nothing written past the storage given */
            ck_assert_int_eq(storage[sizes[i]], '#');
        api_jsonw_free(&w); /* frees only a heap buffer (ASan would see a bad free) */
    }
    api_jsonw_free(&heap);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Strings
 * ------------------------------------------------------------------------------------------- */

static void expect_string(const char *s)
{
    struct api_jsonw w;
    json_t *str = json_string(s);
    char *want;

    api_jsonw_init(&w);
    api_jsonw_string(&w, s);
    if (str == NULL) { /* invalid UTF-8: jansson refuses it, so must we */
        ck_assert_msg(w.failed, "invalid UTF-8 accepted: %s", s);
        api_jsonw_free(&w);
        return;
    }
    want = json_dumps(str, API_DUMP_FLAGS | JSON_ENCODE_ANY);
    ck_assert_msg(!w.failed && w.len == strlen(want) && memcmp(w.buf, want, w.len) == 0,
                  "jansson %s, jsonw %.*s", want, (int)w.len, w.buf);
    free(want);
    json_decref(str);
    api_jsonw_free(&w);
}

START_TEST(strings_like_jansson)
{
    static const char *const cases[] = {
        "",
        "plain",
        "quote \" and backslash \\",
        "\b\f\n\r\t",
        "\x01\x02\x1f\x7f",
        "slash /",
        "caf\xc3\xa9",
        "\xe2\x82\xac and \xf0\x9f\x98\x80", /* 2-, 3- and 4-byte UTF-8 */
        "\xc3",                              /* truncated */
        "\xc0\xaf",                          /* overlong */
        "\xed\xa0\x80",                      /* a surrogate */
        "\xf4\x90\x80\x80",                  /* above U+10FFFF */
        "\xff",
        "\x80",
        "ok then \xe2\x82"};
    char all[128];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_string(cases[i]);
    for (i = 1; i < 128; i++) /* every ASCII byte */
        all[i - 1] = (char)i;
    all[127] = '\0';
    expect_string(all);
    /* Plain bytes are checked 8 at a time, the tail as the last 8 (overlapping) or byte by
     * byte: every length to 40 with a byte of each kind at every position, in a heap block of
     * exactly the string's size (ASan sees a read past it). */
    {
        static const char special[] = {'"', '\\', '\n',       0x1f,      0x7f,
                                       ' ', '~',  (char)0x80, (char)0xc3};
        for (size_t len = 0; len <= 40; len++) {
            char *str = malloc(len + 1);
            ck_assert_ptr_nonnull(str);
            memset(str, 'a', len);
            str[len] = '\0';
            expect_string(str);
            for (size_t at = 0; at < len; at++) {
                for (i = 0; i < sizeof special; i++) {
                    str[at] = special[i];
                    if (special[i] == (char)0xc3 && at + 1 < len)
                        str[at + 1] = (char)0xa9; /* a valid 2-byte sequence */
                    expect_string(str);
                    memset(str, 'a', len);
                }
            }
            free(str);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Whole replies
 * ------------------------------------------------------------------------------------------- */

/* Parse and dump again with the reply flags: the same bytes. */
static void expect_round_trip(const char *body, size_t len)
{
    json_error_t err;
    json_t *j = json_loadb(body, len, 0, &err);
    char *again;

    ck_assert_msg(j != NULL, "reply is not JSON: %s: %.*s", err.text, (int)len, body);
    again = json_dumps(j, API_DUMP_FLAGS);
    ck_assert_msg(strlen(again) == len && memcmp(again, body, len) == 0,
                  "round trip differs:\n%.*s\n%s", (int)len, body, again);
    free(again);
    json_decref(j);
}

#define FIELDS_MAX 40

struct query {
    struct api_param params[FIELDS_MAX];
    char text[FIELDS_MAX][64];
    size_t count;
};

static void add(struct query *q, const char *key, const char *value)
{
    snprintf(q->text[q->count], sizeof q->text[0], "%s", value);
    q->params[q->count].key = key;
    q->params[q->count].key_len = strlen(key);
    q->params[q->count].value = q->text[q->count];
    q->params[q->count].value_len = strlen(q->text[q->count]);
    q->count++;
}

static const char *pick(const char *const *names, size_t n)
{
    return names[rnd() % n];
}

#define PICK(a) pick(a, sizeof a / sizeof a[0])

/* Each field with a third's chance; values ranging from ordinary to odd (many digits, huge,
 * tiny) so the replies carry warnings, advice and every number shape. */
static void random_query(struct query *q)
{
    static const char *const sizes[] = {"7B",   "13e9", "1.3b", "70B",    "175B", "1T",
                                        "125M", "3e8",  "405B", "2.7e12", "1e6"};
    static const char *const small[] = {"1", "2", "3", "4", "8", "16", "64", "512", "4096"};
    static const char *const seqs[] = {"128", "512", "2048", "4096", "8192", "32768", "131072"};
    static const char *const ckpt[] = {"none", "selective", "full", "true", "false"};
    static const char *const bools[] = {"true", "false"};
    static const char *const tp[] = {"1", "2", "4", "8", "16"};
    char v[64];

    q->count = 0;
    if (rnd() % 3 == 0)
        add(q, "model", core_presets[rnd() % core_preset_count].id);
    else if (rnd() % 2 == 0)
        add(q, "params", PICK(sizes));
    else {
        snprintf(v, sizeof v, "%.17g", pow(10.0, 6.0 + 6.5 * rnd_unit()));
        add(q, "params", v);
    }
    if (rnd() % 3 == 0)
        add(q, "gpus", PICK(small));
    if (rnd() % 3 == 0)
        add(q, "batch", PICK(small));
    if (rnd() % 3 == 0)
        add(q, "seq_len", PICK(seqs));
    if (rnd() % 3 == 0)
        add(q, "checkpointing", PICK(ckpt));
    if (rnd() % 3 == 0)
        add(q, "precision", PICK(core_precision_names));
    if (rnd() % 4 == 0)
        add(q, "grad_precision", PICK(core_precision_names));
    if (rnd() % 3 == 0)
        add(q, "optimizer", PICK(core_optimizer_names));
    if (rnd() % 3 == 0)
        add(q, "gpu", core_gpus[rnd() % core_gpu_count].id);
    if (rnd() % 3 == 0) {
        snprintf(v, sizeof v, "%d", (int)(rnd() % 4));
        add(q, "zero_stage", v);
    }
    if (rnd() % 4 == 0)
        add(q, "tp", PICK(tp));
    if (rnd() % 4 == 0)
        add(q, "pp", PICK(tp));
    if (rnd() % 4 == 0)
        add(q, "sequence_parallel", PICK(bools));
    if (rnd() % 4 == 0)
        add(q, "flash_attention", PICK(bools));
    if (rnd() % 4 == 0)
        add(q, "attention_flops", PICK(core_attention_flops_names));
    if (rnd() % 4 == 0)
        add(q, "count", PICK(core_count_names));
    if (rnd() % 3 == 0) {
        snprintf(v, sizeof v, "%.17g", pow(10.0, 8.0 + 6.0 * rnd_unit()));
        add(q, "tokens", v);
    }
    if (rnd() % 3 == 0) {
        snprintf(v, sizeof v, "%.17g", 0.05 + 0.9 * rnd_unit());
        add(q, "mfu", v);
    }
    if (rnd() % 4 == 0) {
        snprintf(v, sizeof v, "%.17g", 8.0 + 200.0 * rnd_unit());
        add(q, "memory_gb", v);
    }
    if (rnd() % 4 == 0) {
        snprintf(v, sizeof v, "%.6g", 4.0 * rnd_unit());
        add(q, "reserve_gb", v);
    }
    if (rnd() % 3 == 0) {
        snprintf(v, sizeof v, "%.17g", 10.0 * rnd_unit());
        add(q, "usd_per_gpu_hour", v);
    }
    if (rnd() % 5 == 0) {
        snprintf(v, sizeof v, "%.17g", pow(10.0, 3.0 + 5.0 * rnd_unit()));
        add(q, "tokens_per_second", v);
    }
    if (rnd() % 5 == 0) {
        snprintf(v, sizeof v, "%.17g", 50.0 + 2000.0 * rnd_unit());
        add(q, "peak_tflops", v);
    }
    if (rnd() % 5 == 0) {
        snprintf(v, sizeof v, "%.17g", pow(10.0, 4.0 + 4.0 * rnd_unit()));
        add(q, "global_batch_tokens", v);
    }
}

static const char *const compute_routes[] = {"/flops", "/memory", "/fit", "/runtime"};

/* The query as a JSON object, every value a string (POST decodes those like the query). */
static char *as_json_object(const struct query *q)
{
    json_t *o = json_object();
    char *s;

    for (size_t i = 0; i < q->count; i++)
        json_object_set_new(o, q->params[i].key, json_string(q->text[i]));
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

START_TEST(replies_survive_round_trip)
{
    unsigned ok = 0, with_advice = 0, with_warnings = 0, with_cost = 0, problems = 0;

    rng_state = 0x2545F4914F6CDD1DULL;
    for (size_t r = 0; r < sizeof compute_routes / sizeof compute_routes[0]; r++) {
        const char *route = compute_routes[r];
        for (int i = 0; i < 400; i++) {
            struct query q;
            struct api_request req = {"GET", route, NULL, 0, NULL, 0, NULL, NULL};
            struct api_response resp;
            struct core_input in;
            struct core_result result;
            struct core_problems probs;
            json_t *errors = json_array();
            bool valid;

            random_query(&q);
            req.query = q.params;
            req.query_count = q.count;
            ck_assert(api_dispatch(&req, &resp));
            expect_round_trip(resp.body, resp.body_len);

            core_input_init(&in);
            memset(&probs, 0, sizeof probs);
            valid = api_decode_query(q.params, q.count, &in, errors) &&
                    core_evaluate(&in, &result, &probs) == CORE_OK;
            json_decref(errors);
            if (valid) {
                ck_assert_uint_eq(resp.status, 200);
                ok++;
                with_advice += result.advice_count > 0 && strcmp(route, "/fit") == 0;
                with_warnings += result.warning_count > 0;
                with_cost += result.runtime.cost_usd >= 0 && strcmp(route, "/runtime") == 0;
            } else {
                ck_assert_uint_ne(resp.status, 200);
                problems++;
            }
            api_response_free(&resp);
        }
    }
    /* The generator must reach every shape, or the round trip proves less than it claims. */
    ck_assert_uint_ge(ok, 800);
    ck_assert_uint_ge(with_advice, 50);
    ck_assert_uint_ge(with_warnings, 100);
    ck_assert_uint_ge(with_cost, 30);
    ck_assert_uint_ge(problems, 20);
}
END_TEST

/* A batch is "[" + each item's single POST reply, comma-separated + "]" (the single replies
 * being proven above), problem items included. */
START_TEST(batches_like_single_replies)
{
    rng_state = 0x5851F42D4C957F2DULL;
    for (size_t r = 0; r < sizeof compute_routes / sizeof compute_routes[0]; r++) {
        for (int b = 0; b < 10; b++) {
            char *items[12];
            size_t n = 1 + rnd() % 12, total = 2, len = 0, i;
            char *batch_body, *want;
            struct api_response resp;
            struct api_request req = {"POST", compute_routes[r],  NULL, 0, NULL,
                                      0,      "application/json", NULL};

            for (i = 0; i < n; i++) {
                struct query q;
                random_query(&q);
                if (i == 3) { /* an item that is not an object: a problem in place */
                    json_t *odd = json_integer(1);
                    items[i] = json_dumps(odd, JSON_ENCODE_ANY);
                    json_decref(odd);
                } else {
                    items[i] = as_json_object(&q);
                }
                total += strlen(items[i]) + 1;
            }
            batch_body = malloc(total + 1);
            want = malloc(64 * 1024 * n + 2);
            ck_assert(batch_body != NULL && want != NULL);
            batch_body[0] = '[';
            want[len++] = '[';
            total = 1;
            for (i = 0; i < n; i++) {
                struct api_request one = req;
                struct api_response single;
                one.body = items[i];
                one.body_len = strlen(items[i]);
                ck_assert(api_dispatch(&one, &single));
                if (i > 0) {
                    batch_body[total++] = ',';
                    want[len++] = ',';
                }
                memcpy(batch_body + total, items[i], one.body_len);
                total += one.body_len;
                memcpy(want + len, single.body, single.body_len);
                len += single.body_len;
                api_response_free(&single);
                free(items[i]);
            }
            batch_body[total++] = ']';
            want[len++] = ']';
            req.body = batch_body;
            req.body_len = total;
            ck_assert(api_dispatch(&req, &resp));
            ck_assert_uint_eq(resp.status, 200);
            ck_assert_msg(resp.body_len == len && memcmp(resp.body, want, len) == 0,
                          "batch differs from its single replies");
            expect_round_trip(resp.body, resp.body_len);
            api_response_free(&resp);
            free(batch_body);
            free(want);
        }
    }
}
END_TEST

static Suite *jsonw_suite(void)
{
    Suite *s = suite_create("jsonw");
    TCase *tc = tcase_create("sameness");

    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, numbers_like_jansson);
    tcase_add_test(tc, integers_like_jansson);
    tcase_add_test(tc, integers_in_chunks);
    tcase_add_test(tc, members_like_jansson);
    tcase_add_test(tc, caller_storage_like_heap);
    tcase_add_test(tc, strings_like_jansson);
    tcase_add_test(tc, replies_survive_round_trip);
    tcase_add_test(tc, batches_like_single_replies);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(jsonw_suite());
}
