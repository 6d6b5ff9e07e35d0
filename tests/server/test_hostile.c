/*
 * test_hostile.c - the hostile input catalogue: a live daemon (in-process, 127.0.0.1 port 0,
 * one per test: Check forks each one) fed malformed numbers, wrong types, pathological JSON,
 * architecture traps, overflowing magnitudes and abusive HTTP.
 *
 * Every case must end in one of two ways, and both are asserted on the parsed body:
 *   - a 4xx problem+json whose `status` matches and whose `errors` name the field at fault, or
 *   - a 200 whose every number is finite,
 * never a 5xx, a hang, a dropped connection or a sanitizer report (the ASan pass of
 * script/test runs this file too). After each case the daemon must still answer /healthz, and no
 * error body may leak internals (paths, pointers, library names).
 *
 * Expected statuses are derived from the rules in api/fields.c (400: a field invalid on its own),
 * core/ (422: inputs impossible together or a result out of range) and server/server.c (413,
 * 414, 415, transport), the reasoning next to each row; they are never copied from output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "api.h"
#include "http.h"
#include "live.h"
#include "check_main.h"

/* ---------------------------------------------------------------------------------------------
 * Assertions shared by every case
 * ------------------------------------------------------------------------------------------- */

/* Every real in doc is finite (jansson can hold no NaN/inf, but an encoder that produced one
 * would have dropped the value; the walk also proves the tree is whole). */
static void assert_finite(json_t *v, const char *where)
{
    const char *key;
    json_t *item;
    size_t i;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        json_object_foreach (v, key, item)
            assert_finite(item, key);
        break;
    case JSON_ARRAY:
        json_array_foreach (v, i, item)
            assert_finite(item, where);
        break;
    case JSON_REAL:
        ck_assert_msg(isfinite(json_real_value(v)), "%s is not finite", where);
        break;
    default:
        break;
    }
}

/* Nothing internal in an error body: no file paths, source locations, pointers or the names
 * of the libraries underneath. */
static void assert_no_leak(const char *body)
{
    static const char *const banned[] = {"/usr/",  "/home/",  "/tmp/",        "/work/", "/proc/",
                                         ".c:",    "jansson", "microhttpd",   "MHD",    "errno",
                                         "(null)", "malloc",  "Segmentation", "assert", NULL};

    for (size_t i = 0; banned[i] != NULL; i++)
        ck_assert_msg(strstr(body, banned[i]) == NULL, "error body leaks \"%s\": %.300s", banned[i],
                      body);
    /* a pointer: 0x and at least 8 hex digits */
    for (const char *p = strstr(body, "0x"); p != NULL; p = strstr(p + 2, "0x")) {
        size_t n = strspn(p + 2, "0123456789abcdefABCDEF");

        ck_assert_msg(n < 8, "error body leaks a pointer: %.300s", body);
    }
}

static bool names_field(json_t *doc, const char *field)
{
    json_t *errors = json_object_get(doc, "errors");
    json_t *e;
    size_t i;

    json_array_foreach (errors, i, e) {
        const char *f = json_string_value(json_object_get(e, "field"));

        if (f != NULL && strcmp(f, field) == 0)
            return true;
    }
    return false;
}

/* The one verdict every case gets. status is the expected one; field (or NULL) must be named in
 * `errors`. Returns the parsed body for extra checks (caller releases). */
static json_t *assert_verdict(const struct http_reply *r, long status, const char *field)
{
    char ct[128];
    json_error_t err;
    json_t *doc;

    ck_assert_msg(r->status == status, "status %ld, expected %ld: %.300s", r->status, status,
                  r->body);
    ck_assert_msg(r->status < 500, "5xx: %.300s", r->body);
    doc = json_loadb(r->body, r->body_len, 0, &err);
    ck_assert_msg(doc != NULL, "body is not JSON (%s): %.200s", err.text, r->body);
    ck_assert_msg(json_is_object(doc), "body is not an object");
    if (status == 200) {
        ck_assert_ptr_nonnull(json_object_get(doc, "inputs"));
        assert_finite(doc, "body");
    } else {
        ck_assert_ptr_nonnull(http_header(r, "Content-Type", ct, sizeof ct));
        ck_assert_str_eq(ct, "application/problem+json");
        ck_assert_int_eq(json_integer_value(json_object_get(doc, "status")), status);
        ck_assert(json_is_string(json_object_get(doc, "type")));
        ck_assert(json_is_string(json_object_get(doc, "detail")));
        ck_assert(json_is_array(json_object_get(doc, "errors")));
        assert_no_leak(r->body);
        if (field != NULL)
            ck_assert_msg(names_field(doc, field), "errors do not name \"%s\": %.300s", field,
                          r->body);
    }
    return doc;
}

static void assert_healthy(void)
{
    struct http_reply r;

    ck_assert_msg(http_get(live_url("/healthz"), &r), "daemon stopped answering");
    ck_assert_int_eq(r.status, 200);
    http_reply_free(&r);
}

static void post(const char *target, const char *body, size_t len, const char *content_type,
                 struct http_reply *r)
{
    char ct[128];
    const char *headers[2] = {NULL, NULL};
    struct http_request req = {.method = "POST", .body = body, .body_len = len};

    if (content_type != NULL) {
        snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
        headers[0] = ct;
    } else {
        headers[0] = "Content-Type:"; /* libcurl: remove its default form type */
    }
    req.headers = headers;
    ck_assert_msg(http_do(live_url(target), &req, r), "POST %s: transport failure", target);
}

/* ---------------------------------------------------------------------------------------------
 * The catalogue: one row per case
 * ------------------------------------------------------------------------------------------- */

struct hostile_case {
    const char *target; /* path and query */
    const char *json;   /* POST body (application/json) or NULL for GET */
    long status;
    const char *field; /* named in errors, or NULL */
};

#define BIG25 "1234567890123456789012345"

static const struct hostile_case cases[] = {
    /* --- numbers: the grammar is [+-]digits[.digits][e[+-]digits] (+ SI suffix for sizes) */
    {"/fit?params=", NULL, 400, "params"},              /* empty */
    {"/fit?params=NaN", NULL, 400, "params"},           /* not in the grammar */
    {"/fit?params=nan", NULL, 400, "params"},           /* strtod would take it: grammar first */
    {"/fit?params=inf", NULL, 400, "params"},           /* idem */
    {"/fit?params=-inf", NULL, 400, "params"},          /* idem */
    {"/fit?params=Infinity", NULL, 400, "params"},      /* idem */
    {"/fit?params=1e309", NULL, 400, "params"},         /* strtod overflows to HUGE_VAL */
    {"/fit?reserve_gb=1e309", NULL, 400, "reserve_gb"}, /* same for a double field */
    {"/fit?batch=-1", NULL, 400, "batch"},              /* batch >= 1 */
    {"/fit?batch=0", NULL, 400, "batch"},               /* batch >= 1 */
    {"/fit?gpus=0", NULL, 400, "gpus"},                 /* gpus >= 1 */
    {"/fit?seq_len=0", NULL, 400, "seq_len"},           /* seq_len >= 1 */
    {"/fit?tp=0", NULL, 400, "tp"},                     /* tp >= 1 */
    {"/fit?mfu=0", NULL, 400, "mfu"},                   /* 0 < mfu: exclusive minimum */
    {"/fit?mfu=1.5", NULL, 400, "mfu"},                 /* mfu <= 1 */
    {"/fit?memory_gb=-5", NULL, 400, "memory_gb"},      /* memory_gb > 0 */
    {"/fit?batch=2.5", NULL, 400, "batch"},             /* integers reject fractions */
    {"/fit?zero_stage=1.5", NULL, 400, "zero_stage"},   /* idem */
    {"/fit?params=0x1A", NULL, 400, "params"},          /* no hex */
    {"/fit?batch=0x10", NULL, 400, "batch"},            /* no hex */
    {"/fit?params=7B7", NULL, 400, "params"},           /* suffix must end the number */
    {"/fit?params=7e9abc", NULL, 400, "params"},        /* trailing garbage */
    {"/fit?batch=1%20", NULL, 400, "batch"},            /* trailing space */
    {"/fit?params=-7B", NULL, 400, "params"},           /* params >= 1 */
    {"/fit?tokens=1.4TT", NULL, 400, "tokens"},         /* one suffix at most */
    {"/fit?batch=" BIG25, NULL, 400, "batch"},          /* 1.2e24 > CORE_BATCH_MAX 1e6 */
    {"/fit?tokens=" BIG25, NULL, 400, "tokens"},        /* 1.2e24 > CORE_TOKENS_MAX 1e18 */
    {"/fit?params=%00", NULL, 400, "params"},           /* a NUL byte is no number */
    {"/fit?batch=1%00", NULL, 400, "batch"},            /* nor is a number followed by one */
    {"/fit?model=%ff%fe", NULL, 400, "model"},          /* invalid UTF-8: no such preset */
    {"/fit?gpu=%c3%28", NULL, 400, "gpu"},              /* truncated UTF-8 sequence */
    {"/fit?precision=%e2%82", NULL, 400, "precision"},  /* idem, in an enum */
    {"/fit?batch=1&batch=2", NULL, 400, "batch"},       /* repeated key */
    /* --- types (JSON): numbers, booleans and enums take only their own JSON types */
    {"/fit", "{\"batch\": [1]}", 400, "batch"},
    {"/fit", "{\"batch\": {}}", 400, "batch"},
    {"/fit", "{\"batch\": true}", 400, "batch"},
    {"/fit", "{\"batch\": null}", 400, "batch"}, /* null only where the reply echoes null */
    {"/fit", "{\"params\": []}", 400, "params"},
    {"/fit", "{\"params\": false}", 400, "params"},
    {"/fit", "{\"mfu\": \"abc\"}", 400, "mfu"},
    {"/fit", "{\"flash_attention\": \"maybe\"}", 400, "flash_attention"},
    {"/fit", "{\"flash_attention\": 1}", 400, "flash_attention"}, /* JSON numbers are no bools */
    {"/fit", "{\"gated_mlp\": null}", 400, "gated_mlp"},
    {"/fit", "{\"model\": 42}", 400, "model"},
    {"/fit", "{\"checkpointing\": []}", 400, "checkpointing"},
    {"/fit", "{\"params\": 1e999}", 400, NULL}, /* jansson: number out of range, malformed */
    {"/fit", "{\"batch\": 123456789012345678901234567890}", 400, NULL}, /* idem, integer */
    {"/fit", "{\"batch\": -0}", 400, "batch"},                          /* -0 < 1 */
    /* --- structure */
    {"/fit", "\"x\"", 400, NULL},                              /* idem */
    {"/fit", "42", 400, NULL},                                 /* idem */
    {"/fit", "null", 400, NULL},                               /* idem */
    {"/fit", "{\"batch\": 1, \"batch\": 2}", 400, NULL},       /* JSON_REJECT_DUPLICATES */
    {"/fit", "{\"model\": \"llama2-7b\\u0000x\"}", 400, NULL}, /* escaped NUL refused */
    {"/fit", "{\"batch\": 1} xyz", 400, NULL},                 /* trailing bytes */
    {"/fit", "{\"batch\": 1}{}", 400, NULL},                   /* a second value */
    {"/fit", "   ", 400, NULL},                                /* whitespace is no object */
    {"/fit", "{\"model\": \"\xff\xfe\"}", 400, NULL},          /* invalid UTF-8 in JSON */
    {"/fit", "{\"batch\": 1", 400, NULL},                      /* truncated */
    {"/fit", "", 200, NULL},                                   /* empty body = {} (defaults) */
    /* --- fine-tuning with adapters: module lists, ranks, layouts */
    {"/fit?finetune=lora&lora_targets=", NULL, 400, "lora_targets"},               /* empty */
    {"/fit?finetune=lora&lora_targets=q_proj,,v_proj", NULL, 400, "lora_targets"}, /* empty word */
    {"/fit?finetune=lora&lora_targets=q_proj%00", NULL, 400, "lora_targets"},      /* NUL */
    {"/fit?finetune=lora&lora_targets=%ff%fe", NULL, 400, "lora_targets"},         /* not UTF-8 */
    {"/fit?finetune=lora&lora_rank=0", NULL, 400, "lora_rank"},
    {"/fit?finetune=lora&lora_rank=" BIG25, NULL, 400, "lora_rank"},
    {"/fit?finetune=lora&lora_alpha=nan", NULL, 400, "lora_alpha"},
    {"/fit?finetune=lorax", NULL, 400, "finetune"},
    {"/fit?base_quant=nf5", NULL, 400, "base_quant"},
    {"/fit?base_quant=nf4", NULL, 422, "base_quant"},                 /* a frozen base only */
    {"/fit?finetune=qlora&base_quant=none", NULL, 422, "base_quant"}, /* qlora is quantized */
    {"/fit?model=gpt3-125m&finetune=lora&lora_targets=gate_proj", NULL, 422, "lora_targets"},
    {"/fit?model=deepseek-v2-lite&finetune=lora", NULL, 422, "finetune"}, /* MLA */
    {"/fit", "{\"finetune\": \"lora\", \"lora_targets\": []}", 400, "lora_targets"},
    {"/fit", "{\"finetune\": \"lora\", \"lora_targets\": [1]}", 400, "lora_targets"},
    {"/fit", "{\"finetune\": \"lora\", \"lora_targets\": {}}", 400, "lora_targets"},
    {"/fit", "{\"finetune\": \"lora\", \"lora_targets\": [\"q_proj\", null]}", 400, "lora_targets"},
    {"/fit",
     "{\"finetune\": \"dora\", \"lora_rank\": 65536, \"lora_targets\": "
     "\"all-linear,lm_head\", \"base_quant\": \"int8\"}",
     200, NULL},                                            /* the largest rank */
    {"/plan", "{\"finetune\": \"lora\"}", 422, "finetune"}, /* /plan: full training only */
    /* --- architecture traps: no division by zero, no overflow */
    {"/fit?heads=0", NULL, 400, "heads"},
    {"/fit?layers=32&hidden=4096&heads=3", NULL, 422, "heads"},                /* 4096 % 3 != 0 */
    {"/fit?layers=32&hidden=4096&heads=32&kv_heads=5", NULL, 422, "kv_heads"}, /* 32 % 5 */
    {"/fit?layers=2&hidden=1024&heads=8&kv_heads=16", NULL, 422, "kv_heads"},  /* 8 % 16 */
    {"/fit?layers=32&hidden=4096&head_dim=0", NULL, 400, "head_dim"},
    {"/fit?vocab=0", NULL, 400, "vocab"},
    {"/fit?gpus=1e7&params=1", NULL, 200, NULL}, /* ceil divisions of 16 bytes over 1e7 ranks */
    {"/fit?layers=1&hidden=1", NULL, 200, NULL}, /* heads = 1 (1 % 128, 1 % 64), head_dim 1 */
    {"/fit?gpus=4&tp=8", NULL, 422, "gpus"},     /* 4 is no multiple of 8 */
    /* tp*pp = 1e12 is computed in int64 and compared, not overflowed */
    {"/fit?gpus=10000000&tp=1000000&pp=1000000", NULL, 422, "gpus"},
    /* --- magnitudes: 34 s b d alone is 34 * 1e8 * 1e5 * d > 9.2e18 for any d of a 1e15 model */
    {"/fit?params=1e15&seq_len=1e8&batch=1e5", NULL, 422, "seq_len"},
    {"/memory", "{\"params\": 1e15, \"seq_len\": 1e8, \"batch\": 1e5}", 422, "seq_len"},
    /* L 1e5 x 12 d^2 with d 1e6 is 1.2e18 per layer set: the arch count overflows int64 */
    {"/flops?layers=100000&hidden=1000000", NULL, 422, "params"},
    /* 6 * 1e15 * 1e18 = 6e33 FLOPs over 1e-3 TFLOP/s at mfu 1e-4: 6e28 s, large but finite */
    {"/runtime?params=1e15&tokens=1e18&mfu=1e-4&peak_tflops=1e-3&usd_per_gpu_hour=1e6", NULL, 200,
     NULL},
    {"/runtime?global_batch_tokens=1&tokens=1e18", NULL, 200, NULL}, /* 1e18 steps, finite */
    /* 1e18 tok/s x 6 x 7e9 FLOP/tok = 4.2e28 FLOP/s >> one H100: mfu > 1 */
    {"/runtime?tokens_per_second=1e18", NULL, 422, "tokens_per_second"},
    {"/fit?params=1e15&gpus=1e7", NULL, 200, NULL}, /* 1.6e16 bytes of state over 1e7 GPUs */
    /* --- /inference: every serving input out of range, of the wrong type, or contradictory */
    {"/inference?gpu_memory_utilization=0", NULL, 400, "gpu_memory_utilization"}, /* (0, 1] */
    {"/inference?gpu_memory_utilization=1.01", NULL, 400, "gpu_memory_utilization"},
    {"/inference?gpu_memory_utilization=NaN", NULL, 400, "gpu_memory_utilization"},
    {"/inference?mem_fraction_static=-0.5", NULL, 400, "mem_fraction_static"},
    {"/inference?kv_cache_free_gpu_mem_fraction=inf", NULL, 400, "kv_cache_free_gpu_mem_fraction"},
    {"/inference?kv_cache_memory=0", NULL, 400, "kv_cache_memory"},
    {"/inference?kv_cache_memory=1e309", NULL, 400, "kv_cache_memory"},
    {"/inference?kv_cache_memory=2000T", NULL, 400, "kv_cache_memory"}, /* 2e15 > 1e15 */
    {"/inference?max_model_len=0", NULL, 400, "max_model_len"},
    {"/inference?max_model_len=1.5", NULL, 400, "max_model_len"},
    {"/inference?max_num_seqs=" BIG25, NULL, 400, "max_num_seqs"},
    {"/inference?max_num_batched_tokens=-1", NULL, 400, "max_num_batched_tokens"},
    {"/inference?block_size=0", NULL, 400, "block_size"},
    {"/inference?block_size=2048", NULL, 400, "block_size"},
    {"/inference?quant_group_size=0", NULL, 400, "quant_group_size"},
    {"/inference?hbm_tbps=0", NULL, 400, "hbm_tbps"},
    {"/inference?hbm_tbps=1e-30", NULL, 400, "hbm_tbps"}, /* below the 0.01 TB/s floor */
    {"/inference?hbm_tbps=0.009", NULL, 400, "hbm_tbps"}, /* just below it */
    {"/inference?block_size=7", NULL, 422, "block_size"}, /* not in vLLM's BlockSize */
    {"/inference?engine=vllm_v2", NULL, 400, "engine"},
    {"/inference?engine_version=vllm_0.9", NULL, 400, "engine_version"},
    {"/inference?engine=vllm&engine_version=vllm_0.2", NULL, 422, "engine_version"},
    {"/inference?engine=sglang&engine_version=vllm_0.4", NULL, 422, "engine_version"},
    {"/inference/plan", "{\"engine_version\": \"vllm_0.9\"}", 400, "engine_version"},
    {"/inference/plan", "{\"engine\": \"sglang\", \"engine_version\": \"vllm_0.4\"}", 422,
     "engine_version"},
    /* what no candidate of the search can take: a 422 before it, as /inference answers */
    {"/inference/plan", "{\"block_size\": 7}", 422, "block_size"},
    {"/inference/plan", "{\"engine\": \"trtllm\", \"gpu\": \"b200\", \"quantization\": \"awq\"}",
     422, "quantization"},
    {"/inference?engine=%ff", NULL, 400, "engine"},
    {"/inference?quantization=int4", NULL, 400, "quantization"},
    {"/inference?kv_cache_dtype=fp4", NULL, 400, "kv_cache_dtype"},
    {"/inference?enforce_eager=2", NULL, 400, "enforce_eager"},
    {"/inference?engine=vllm&engine=sglang", NULL, 400, "engine"},
    {"/inference", "{\"engine\": 1}", 400, "engine"},
    {"/inference", "{\"enforce_eager\": 1}", 400, "enforce_eager"},
    {"/inference", "{\"max_model_len\": \"long\"}", 400, "max_model_len"},
    {"/inference", "{\"max_model_len\": null}", 200, NULL}, /* null = not given */
    {"/inference?model=llama3-8b&max_model_len=8193", NULL, 422, "max_model_len"},
    {"/inference?model=llama3-8b&quantization=awq&precision=fp32", NULL, 422, "quantization"},
    {"/inference?model=llama3-8b&engine=llama.cpp", NULL, 200, NULL}, /* f16 GGUF */
    {"/inference?model=llama3-8b&engine=llama.cpp&quantization=awq", NULL, 422, "quantization"},
    {"/inference?model=llama3-8b&engine=trtllm&quantization=bnb_nf4", NULL, 422, "quantization"},
    /* trtllm-build: "INT8/INT4 quantization is not supported on SM>=100" (B200 sm 100), not on
     * the RTX PRO 6000 (sm 120) */
    {"/inference?model=llama3-8b&engine=trtllm&quantization=awq&gpu=b200", NULL, 422,
     "quantization"},
    {"/inference?model=llama3-8b&engine=trtllm&quantization=awq&gpu=rtx-pro-6000", NULL, 200, NULL},
    {"/inference?model=llama3-8b&quantization=fp8&quant_group_size=64", NULL, 422,
     "quant_group_size"},
    {"/inference?model=llama3-8b&tp=3&gpus=3", NULL, 422, "tp"},
    {"/inference?model=llama3-8b&tp=16&gpus=16", NULL, 200, NULL}, /* 8 KV heads replicated */
    /* vLLM spreads 8 experts over ep 3 = tp 1 x dp 3 as 3, 3, 2 (determine_expert_map); SGLang
     * asserts num_experts % ep_size == 0 */
    {"/inference?model=mixtral-8x7b&ep=3&gpus=3", NULL, 200, NULL},
    {"/inference?model=mixtral-8x7b&ep=3&gpus=3&engine=sglang", NULL, 422, "ep"},
    /* vLLM's EP group is the tp x dp GPUs of one stage: 8 / 4 = 2 here, not 8; on 32 GPUs the
     * stage holds tp 2 x dp 4 = 8 */
    {"/inference?model=mixtral-8x7b&tp=2&pp=4&ep=8", NULL, 422, "ep"},
    {"/inference?model=mixtral-8x7b&tp=2&pp=4&ep=8&gpus=32", NULL, 200, NULL},
    {"/inference?model=mixtral-8x7b&ep=2&gpus=2&engine=llama.cpp", NULL, 422, "ep"},
    {"/inference?model=llama3-8b&precision=fp8", NULL, 422, "precision"},
    /* magnitudes: a page of 1e5 heads x 1e6 head_dim x 1024 tokens overflows int64: 422 */
    {"/inference?layers=100000&hidden=100000&heads=100000&kv_heads=100000&head_dim=1000000&"
     "max_model_len=100000000&block_size=1024",
     NULL, 422, NULL},
    {"/inference?params=1e15&max_model_len=100000000&kv_cache_memory=1e15", NULL, 200, NULL},
    {"/inference?model=llama3-8b&max_num_batched_tokens=100000000&max_num_seqs=1000000", NULL, 200,
     NULL},
    {"/inference?model=llama3-8b&memory_gb=1e-9", NULL, 200, NULL}, /* nothing fits: fits false */
};

static void check_case(const struct hostile_case *c)
{
    struct http_reply r;
    json_t *doc;

    if (c->json != NULL)
        post(c->target, c->json, strlen(c->json), "application/json", &r);
    else
        ck_assert_msg(http_get(live_url(c->target), &r), "GET %s: transport failure", c->target);
    doc = assert_verdict(&r, c->status, c->field);
    json_decref(doc);
    http_reply_free(&r);
    assert_healthy();
}

START_TEST(test_catalogue)
{
    check_case(&cases[_i]);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Generated bodies
 * ------------------------------------------------------------------------------------------- */

static char *repeat(const char *head, size_t head_n, const char *mid, const char *tail,
                    size_t tail_n, size_t *len)
{
    size_t hl = strlen(head), ml = strlen(mid), tl = strlen(tail);
    size_t n = hl * head_n + ml + tl * tail_n, at = 0;
    char *s = malloc(n + 1);

    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < head_n; i++, at += hl)
        memcpy(s + at, head, hl);
    memcpy(s + at, mid, ml);
    at += ml;
    for (size_t i = 0; i < tail_n; i++, at += tl)
        memcpy(s + at, tail, tl);
    s[n] = '\0';
    *len = n;
    return s;
}

static void post_generated(char *body, size_t len, long status)
{
    struct http_reply r;

    post("/fit", body, len, "application/json", &r);
    json_decref(assert_verdict(&r, status, NULL));
    http_reply_free(&r);
    free(body);
    assert_healthy();
}

/* 100 000-deep nesting is 200 000 bytes: over API_BODY_MAX (65 536), refused with 413. */
START_TEST(test_nesting_100000)
{
    size_t len;
    char *body = repeat("[", 100000, "", "]", 100000, &len);

    post_generated(body, len, 413);
}
END_TEST

/* 10 000-deep nesting fits in 60 001 bytes; jansson's parser stops at depth 2048 (400), so the
 * recursion never reaches the stack limit. */
START_TEST(test_nesting_within_limit)
{
    size_t len;
    char *body = repeat("{\"a\":", 10000, "1", "}", 10000, &len);

    ck_assert_uint_le(len, API_BODY_MAX);
    post_generated(body, len, 400);
}
END_TEST

/* A 500 KB string: 500 012 bytes > 65 536, 413 from the Content-Length alone. */
START_TEST(test_string_500k)
{
    size_t len;
    char *body = repeat("", 0, "{\"model\": \"", "a", 500000, &len);

    body = realloc(body, len + 3);
    ck_assert_ptr_nonnull(body);
    memcpy(body + len, "\"}", 3);
    post_generated(body, len + 2, 413);
}
END_TEST

/* 20 000 keys "kNNNNN":1 are at least 20 000 * 9 bytes = 180 000 > 65 536: 413. */
START_TEST(test_keys_20000)
{
    size_t cap = 20000 * 16, at = 1;
    char *body = malloc(cap);

    ck_assert_ptr_nonnull(body);
    body[0] = '{';
    for (int i = 0; i < 20000; i++)
        at += (size_t)snprintf(body + at, cap - at, "%s\"k%05d\":1", i ? "," : "", i);
    body[at++] = '}';
    post_generated(body, at, 413);
}
END_TEST

/* 4 000 unknown keys fit in the limit (about 40 KB): one 400 that lists the first 64 of them
 * (API_ERRORS_MAX in api_internal.h), not 4 000 entries, and no quadratic stall. */
START_TEST(test_keys_within_limit)
{
    size_t cap = 4000 * 16, at = 1;
    char *body = malloc(cap);
    struct http_reply r;
    json_t *doc;

    ck_assert_ptr_nonnull(body);
    body[0] = '{';
    for (int i = 0; i < 4000; i++)
        at += (size_t)snprintf(body + at, cap - at, "%s\"k%04d\":1", i ? "," : "", i);
    body[at++] = '}';
    ck_assert_uint_le(at, API_BODY_MAX);
    post("/fit", body, at, "application/json", &r);
    doc = assert_verdict(&r, 400, "k0000");
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "errors")), 64);
    json_decref(doc);
    http_reply_free(&r);
    free(body);
}
END_TEST

/* A raw NUL byte inside a JSON string (not the \u0000 escape): invalid JSON syntax, 400. */
START_TEST(test_raw_nul_in_string)
{
    static const char body[] = "{\"model\": \"ab\0c\"}";
    struct http_reply r;

    post("/fit", body, sizeof body - 1, "application/json", &r);
    json_decref(assert_verdict(&r, 400, NULL));
    http_reply_free(&r);
}
END_TEST

/* 64 unknown query keys: 400 listing all 64. One more argument, or 8 000 empty ones ('&'), is a
 * problem+json 414 naming the limit (server/server.c cuts such a query before libmicrohttpd
 * parses it: one record per argument in the 16 KiB connection pool would otherwise overflow it,
 * and MHD 0.9.75 then answers an HTML 431, or past ~250 arguments nothing at all until the
 * connection timeout). */
START_TEST(test_query_many_keys)
{
    char target[8192];
    struct http_reply r;
    json_t *doc;

    for (int keys = 64; keys <= 300; keys += 236) {
        size_t at = (size_t)snprintf(target, sizeof target, "/fit?");

        for (int i = 0; i < keys; i++)
            at += (size_t)snprintf(target + at, sizeof target - at, "%sq%d=1", i ? "&" : "", i);
        ck_assert_uint_lt(at, sizeof target - 1);
        ck_assert(http_get(live_url(target), &r));
        if (keys == 64) {
            doc = assert_verdict(&r, 400, "q0");
            ck_assert_uint_eq(json_array_size(json_object_get(doc, "errors")), 64);
            ck_assert(names_field(doc, "q63"));
        } else {
            doc = assert_verdict(&r, 414, NULL);
            ck_assert_str_eq(json_string_value(json_object_get(doc, "detail")),
                             "request target with more than 64 query parameters");
        }
        json_decref(doc);
        http_reply_free(&r);
    }
    memcpy(target, "/fit?", 5);
    memset(target + 5, '&', 8000);
    target[8005] = '\0';
    ck_assert(http_get(live_url(target), &r));
    json_decref(assert_verdict(&r, 414, NULL));
    http_reply_free(&r);
    /* the connection that carried them goes on serving */
    assert_healthy();
}
END_TEST

/* A JSON array is a batch (api/compute.c): 200 overall, one element per item in order, a bad
 * item replaced by its own problem object carrying its own status. Hostile items stay inside
 * their element; the batch itself never turns into a 5xx. */
static json_t *post_batch(const char *body, size_t items)
{
    struct http_reply r;
    json_t *doc;

    post("/fit", body, strlen(body), "application/json", &r);
    ck_assert_msg(r.status == 200, "status %ld: %.300s", r.status, r.body);
    doc = json_loadb(r.body, r.body_len, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert(json_is_array(doc));
    ck_assert_uint_eq(json_array_size(doc), items);
    assert_finite(doc, "batch");
    assert_no_leak(r.body);
    http_reply_free(&r);
    return doc;
}

static void assert_item(json_t *doc, size_t i, long status, const char *field)
{
    json_t *item = json_array_get(doc, i);

    if (status == 200) {
        ck_assert_ptr_nonnull(json_object_get(item, "inputs"));
        return;
    }
    ck_assert_int_eq(json_integer_value(json_object_get(item, "status")), status);
    ck_assert(json_is_string(json_object_get(item, "type")));
    if (field != NULL)
        ck_assert_msg(names_field(item, field), "item %zu does not name %s", i, field);
}

START_TEST(test_batches)
{
    json_t *doc;
    size_t len;
    char *big;

    json_decref(post_batch("[]", 0));
    doc = post_batch("[1, \"x\", null, [], true]", 5); /* none is an object: five 400s */
    for (size_t i = 0; i < 5; i++)
        assert_item(doc, i, 400, NULL);
    json_decref(doc);
    doc = post_batch("[{\"batch\": 0}, {}, {\"params\": 1e15, \"seq_len\": 1e8, \"batch\": 1e5}, "
                     "{\"layers\": 32, \"hidden\": 4096, \"heads\": 3}]",
                     4);
    assert_item(doc, 0, 400, "batch");   /* batch >= 1 */
    assert_item(doc, 1, 200, NULL);      /* {} is the defaults */
    assert_item(doc, 2, 422, "seq_len"); /* out of range, as on its own */
    assert_item(doc, 3, 422, "heads");   /* 4096 % 3 */
    json_decref(doc);
    /* 1 001 items (5 006 bytes) is over API_BATCH_MAX (1 000): one 400 for the whole batch */
    big = repeat("[{}", 1, "", ",{}", 1000, &len);
    big = realloc(big, len + 2);
    ck_assert_ptr_nonnull(big);
    memcpy(big + len, "]", 2);
    {
        struct http_reply r;

        post("/fit", big, len + 1, "application/json", &r);
        json_decref(assert_verdict(&r, 400, NULL));
        http_reply_free(&r);
    }
    free(big);
    assert_healthy();
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * HTTP
 * ------------------------------------------------------------------------------------------- */

START_TEST(test_content_types)
{
    struct http_reply r;

    post("/fit", "{}", 2, "text/plain", &r);
    json_decref(assert_verdict(&r, 415, NULL));
    http_reply_free(&r);
    post("/fit", "{}", 2, NULL, &r); /* no Content-Type at all */
    json_decref(assert_verdict(&r, 415, NULL));
    http_reply_free(&r);
    post("/fit", "{}", 2, "application/jsonx", &r); /* a prefix is not the type */
    json_decref(assert_verdict(&r, 415, NULL));
    http_reply_free(&r);
    post("/fit", "{}", 2, "application/json; charset=utf-8", &r); /* parameters are fine */
    json_decref(assert_verdict(&r, 200, NULL));
    http_reply_free(&r);
}
END_TEST

START_TEST(test_chunked)
{
    static const char *const headers[] = {"Content-Type: application/json", NULL};
    static const char json[] = "{\"batch\": 2}";
    struct http_request req = {.method = "POST",
                               .body = json,
                               .body_len = sizeof json - 1,
                               .headers = headers,
                               .chunked = true};
    struct http_reply r;
    size_t len;
    char *big = repeat("", 0, "", " ", 100000, &len);

    ck_assert(http_do(live_url("/memory"), &req, &r));
    json_decref(assert_verdict(&r, 200, NULL));
    http_reply_free(&r);
    /* 100 000 bytes of whitespace chunked: no Content-Length to refuse early, so the cap
     * applies while reading and the end gets 413. */
    req.body = big;
    req.body_len = len;
    ck_assert(http_do(live_url("/memory"), &req, &r));
    json_decref(assert_verdict(&r, 413, NULL));
    http_reply_free(&r);
    free(big);
    assert_healthy();
}
END_TEST

static int connect_local(void)
{
    struct sockaddr_in addr;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    ck_assert_int_ge(fd, 0);
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)live_port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    return fd;
}

/* Read what arrives within timeout_ms; returns bytes read, sets *eof when the peer closed. */
static size_t read_for(int fd, int timeout_ms, char *buf, size_t size, bool *eof)
{
    size_t got = 0;

    *eof = false;
    while (got + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        n = recv(fd, buf + got, size - 1 - got, 0);
        if (n <= 0) {
            *eof = true;
            break;
        }
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

/* A Content-Length of 10 MB is refused from the headers alone: the 413 arrives while the
 * client has sent no body byte. */
START_TEST(test_over_limit_refused_early)
{
    static const char req[] = "POST /fit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              "Content-Length: 10000000\r\n\r\n";
    char buf[4096];
    bool eof;
    int fd = connect_local();

    ck_assert_int_eq(send(fd, req, sizeof req - 1, MSG_NOSIGNAL), (ssize_t)(sizeof req - 1));
    read_for(fd, 2000, buf, sizeof buf, &eof);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 413 ", 13) == 0, "got: %.200s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "application/problem+json"));
    close(fd);
    assert_healthy();
}
END_TEST

/* head + pad bytes of 'a' + tail into a static buffer (the oversized requests below); returns
 * its length. */
static size_t padded_request(const char *head, size_t pad, const char *tail, const char **out)
{
    static char req[70100 + 256];
    size_t h = strlen(head), t = strlen(tail);

    ck_assert_uint_le(h + pad + t, sizeof req);
    memcpy(req, head, h);
    memset(req + h, 'a', pad);
    memcpy(req + h + pad, tail, t);
    *out = req;
    return h + pad + t;
}

START_TEST(test_uri_limits)
{
    char *target = malloc(70000);
    struct http_reply r;

    ck_assert_ptr_nonnull(target);
    /* 9 000 and 14 000 bytes: over max_uri_bytes (8 192), inside MHD's 16 KiB pool (the limit
     * plus 8 KiB): our problem+json 414 */
    for (size_t len = 9000; len <= 14000; len += 5000) {
        memcpy(target, "/fit?x=", 7);
        memset(target + 7, 'a', len);
        target[7 + len] = '\0';
        ck_assert(http_do(live_url(target), NULL, &r));
        json_decref(assert_verdict(&r, 414, NULL));
        http_reply_free(&r);
    }
    free(target);

    /* 70 000 bytes: over the 16 KiB connection pool, so libmicrohttpd answers 414 itself
     * (its own small HTML page); what matters is a clean 4xx and a live daemon. */
    {
        const char *req;
        char buf[4096];
        bool eof;
        int fd = connect_local();
        size_t n = padded_request("GET /fit?x=", 70000, " HTTP/1.1\r\nHost: x\r\n\r\n", &req);

        send(fd, req, n, MSG_NOSIGNAL);
        read_for(fd, 2000, buf, sizeof buf, &eof);
        ck_assert_msg(strncmp(buf, "HTTP/1.1 414 ", 13) == 0, "got: %.200s", buf);
        close(fd);
    }
    assert_healthy();
}
END_TEST

/* A 64 KB header: four times the 16 KiB per-connection pool, so libmicrohttpd's own 431 and a
 * close; nothing else, and the daemon keeps serving. */
START_TEST(test_header_64k)
{
    const char *req;
    char buf[4096];
    bool eof;
    int fd = connect_local();
    size_t n =
        padded_request("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ", 65536, "\r\n\r\n", &req);

    send(fd, req, n, MSG_NOSIGNAL);
    read_for(fd, 2000, buf, sizeof buf, &eof);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 431 ", 13) == 0, "got: %.200s", buf);
    close(fd);
    assert_healthy();
}
END_TEST

static int count_of(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* 50 requests in one write on one connection: 50 answers, in order, all 200. The last one
 * asks to close so EOF ends the read. */
START_TEST(test_pipelined_50)
{
    static const char one[] = "GET /flops?batch=2 HTTP/1.1\r\nHost: x\r\n\r\n";
    static const char last[] =
        "GET /flops?batch=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    size_t cap = 50 * sizeof last, n = 0;
    char *req = malloc(cap);
    char *buf = malloc(1 << 20);
    bool eof;
    int fd = connect_local();

    ck_assert_ptr_nonnull(req);
    ck_assert_ptr_nonnull(buf);
    for (int i = 0; i < 49; i++, n += sizeof one - 1)
        memcpy(req + n, one, sizeof one - 1);
    memcpy(req + n, last, sizeof last - 1);
    n += sizeof last - 1;
    ck_assert_int_eq(send(fd, req, n, MSG_NOSIGNAL), (ssize_t)n);
    read_for(fd, 5000, buf, 1 << 20, &eof);
    ck_assert_int_eq(count_of(buf, "HTTP/1.1 200 "), 50);
    ck_assert_int_eq(count_of(buf, "HTTP/1.1 "), 50);
    ck_assert(eof);
    close(fd);
    free(req);
    free(buf);
}
END_TEST

static void raw_expect(const char *req, const char *status_line)
{
    char buf[65536];
    long n = raw_exchange(live_port, req, strlen(req), false, 3000, buf, sizeof buf);

    ck_assert_int_gt(n, 0);
    ck_assert_msg(strncmp(buf, status_line, strlen(status_line)) == 0, "%s got: %.200s", req, buf);
}

START_TEST(test_http10_head_methods)
{
    char buf[65536];
    long n;
    const char *body;

    /* HTTP/1.0 without Host: answered, then closed (no keep-alive by default in 1.0) */
    raw_expect("GET /fit HTTP/1.0\r\n\r\n", "HTTP/1.1 200 ");
    /* HEAD: headers only, no body after the blank line */
    {
        static const char head[] = "HEAD /fit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

        n = raw_exchange(live_port, head, sizeof head - 1, false, 3000, buf, sizeof buf);
    }
    ck_assert_int_gt(n, 0);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "got: %.200s", buf);
    body = strstr(buf, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body + 4, "");
    /* unknown and wrong methods: 405 with Allow, problem+json */
    raw_expect("BREW /fit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 405 ");
    raw_expect("DELETE /fit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 405 ");
    raw_expect("POST /gpus HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
               "HTTP/1.1 405 ");
    /* a path that is no route, and one that tries to climb out */
    raw_expect("GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
               "HTTP/1.1 404 ");
    assert_healthy();
}
END_TEST

/* A request line that is not HTTP: libmicrohttpd closes the connection (0.9.75 sends no 400
 * for a line without a method, target and version). Either way no reply may be a 5xx, and the
 * daemon keeps serving. */
START_TEST(test_garbage_request_line)
{
    static const char *const lines[] = {
        "HELLO\r\n\r\n", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\r\n\r\n",
        "GET\r\n\r\n",   "GET / HTTP/9.9\r\nHost: x\r\n\r\n",
        "\r\n\r\n\r\n",  NULL};

    for (size_t i = 0; lines[i] != NULL; i++) {
        char buf[4096];
        long n = raw_exchange(live_port, lines[i], strlen(lines[i]), false, 3000, buf, sizeof buf);

        ck_assert_int_ge(n, 0);
        if (n > 0)
            ck_assert_msg(strncmp(buf, "HTTP/1.1 4", 10) == 0 ||
                              strncmp(buf, "HTTP/1.1 505", 12) == 0,
                          "garbage line %zu got: %.200s", i, buf);
        assert_healthy();
    }
}
END_TEST

static void send_all(int fd, const char *data, size_t len)
{
    ck_assert_int_eq(send(fd, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Two requests that can never be answered normally, held open together:
 *   - Content-Length 100 with 10 bytes sent, then silence: the connection timeout ends it;
 *   - a good request line, then a 20 000-byte header: over the 16 KiB connection pool, so
 *     libmicrohttpd answers 431 itself and closes, after memwall's URI callback made the
 *     request's record but before the access handler ever saw it.
 * Neither may stop anyone else (requests are served while they hang), and the connection
 * timeout must close the first (CONNECTION_TIMEOUT_S in server/server.c, 30 s; we wait up to 65 s
 * so any default from 1 to 60 s passes). What arrives before the close is no 5xx. */
START_TEST(test_stalled_connections)
{
    static const char short_body[] = "POST /fit HTTP/1.1\r\nHost: x\r\n"
                                     "Content-Type: application/json\r\n"
                                     "Content-Length: 100\r\n\r\n{\"batch\":1";
    const char *big_header;
    char buf[2][4096];
    bool eof[2] = {false, false};
    int fd[2];
    size_t n =
        padded_request("GET /fit HTTP/1.1\r\nHost: x\r\nX-A: ", 20000, "\r\n\r\n", &big_header);
    time_t t0 = time(NULL);

    fd[0] = connect_local();
    fd[1] = connect_local();
    send_all(fd[0], short_body, sizeof short_body - 1);
    send_all(fd[1], big_header, n);
    read_for(fd[0], 500, buf[0], sizeof buf[0], &eof[0]);
    ck_assert_str_eq(buf[0], ""); /* nothing to answer yet */
    ck_assert(!eof[0]);
    assert_healthy();
    for (int i = 0; i < 2; i++) {
        size_t got = 0;

        while (!eof[i] && time(NULL) - t0 < 65)
            got += read_for(fd[i], 1000, buf[i] + got, sizeof buf[i] - got, &eof[i]);
        ck_assert_msg(eof[i], "connection %d was still open after 65 s", i);
        ck_assert_msg(strncmp(buf[i], "HTTP/1.1 5", 10) != 0, "5xx: %.200s", buf[i]);
        if (got > 0)
            ck_assert_msg(strncmp(buf[i], "HTTP/1.1 4", 10) == 0, "got: %.200s", buf[i]);
        if (i == 1)
            ck_assert_msg(strncmp(buf[i], "HTTP/1.1 431 ", 13) == 0, "got: %.200s", buf[i]);
        close(fd[i]);
        assert_healthy();
    }
    /* Neither request may stay counted in flight once its connection is gone: a stuck gauge
     * makes every drain wait out its whole grace. (Found with a query of ~1 000 arguments that
     * never reached the access handler and was never completed by libmicrohttpd; such queries
     * are now cut in server.c's on_uri, and the pending-request slot there remains the guard
     * for any other request MHD drops between the two callbacks.) The only request in flight
     * now is this /metrics one. */
    {
        struct http_reply r;

        ck_assert(http_get(live_url("/metrics"), &r));
        ck_assert_int_eq(r.status, 200);
        ck_assert_msg(strstr(r.body, "\nmemwall_http_requests_in_flight 1\n") != NULL,
                      "in-flight gauge: %.200s",
                      strstr(r.body, "memwall_http_requests_in_flight "));
        http_reply_free(&r);
    }
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * Suite
 * ------------------------------------------------------------------------------------------- */

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("api_hostile");
    TCase *catalogue = tcase_create("catalogue");
    TCase *bodies = tcase_create("bodies");
    TCase *http = tcase_create("http");
    TCase *slow = tcase_create("slow");
    TCase *all[] = {catalogue, bodies, http, slow};

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tcase_add_checked_fixture(all[i], live_start, live_stop);
        tcase_set_timeout(all[i], 60);
        suite_add_tcase(s, all[i]);
    }
    tcase_set_timeout(slow, 90);
    tcase_add_loop_test(catalogue, test_catalogue, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(bodies, test_nesting_100000);
    tcase_add_test(bodies, test_nesting_within_limit);
    tcase_add_test(bodies, test_string_500k);
    tcase_add_test(bodies, test_keys_20000);
    tcase_add_test(bodies, test_keys_within_limit);
    tcase_add_test(bodies, test_raw_nul_in_string);
    tcase_add_test(bodies, test_query_many_keys);
    tcase_add_test(bodies, test_batches);
    tcase_add_test(http, test_content_types);
    tcase_add_test(http, test_chunked);
    tcase_add_test(http, test_over_limit_refused_early);
    tcase_add_test(http, test_uri_limits);
    tcase_add_test(http, test_header_64k);
    tcase_add_test(http, test_pipelined_50);
    tcase_add_test(http, test_http10_head_methods);
    tcase_add_test(http, test_garbage_request_line);
    tcase_add_test(slow, test_stalled_connections);
    return s;
}

int main(void)
{
    int rc;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = check_main_run(hostile_suite());
    curl_global_cleanup();
    return rc;
}
