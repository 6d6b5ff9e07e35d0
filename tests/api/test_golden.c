/*
 * test_golden.c - the reply-bytes regression net: every request in the table below is sent
 * in-process through api_dispatch() (no sockets) and its reply compared byte for byte with the
 * file tests/golden/<name>.reply recorded from the program when the case was added.
 *
 * What this proves is sameness, not correctness: the golden files are copies of the program's
 * output, so they catch any change to a reply (a member renamed, reordered or retyped, a number
 * printed differently, a problem reworded) and leave the judging of the values to the suites
 * that derive them by hand (tests/core, tests/api/test_apiunit.c). Every reply is also
 * parsed back with jansson under JSON_REJECT_DUPLICATES, so a golden file can never hold a
 * reply that is not valid JSON.
 *
 * A .reply file is the status and headers api_dispatch() set, one "name: value" per line, a
 * blank line, then the body laid out one member (or array element) per line, indented by two
 * spaces a level, so that a change to a reply touches only the lines of the members it moves.
 * The ETag is left out (it hashes the body in host byte order, so it is not portable) but its
 * presence is recorded. POST /plan's elapsed_seconds, the one member that differs from run to
 * run, is replaced by 0.0 after its reply has been checked as JSON, and the file says so
 * ("masked: elapsed_seconds").
 *
 * The layout still proves every byte. The reply memwall sends has no whitespace outside its
 * strings (asserted below), and the layout only adds whitespace outside strings, copying every
 * token - numbers as printed, strings with their escapes - unchanged. So removing the
 * whitespace outside strings from a stored body gives back the reply byte for byte, and the
 * test checks exactly that (compact(file body) == reply body), then that the file is the
 * canonical layout of that reply (file == layout(reply)), so a hand-edited indent fails too.
 * No JSON parser touches the numbers: 14.0 stays 14.0, 13.0385160446167 stays as printed.
 *
 * Regenerating: MEMWALL_GOLDEN_UPDATE=1 ctest --test-dir build -R golden (or run test_golden
 * with that variable set and the golden directory as its argument) rewrites every file; see
 * tests/golden/README.md for when that is allowed.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "check_main.h"

static const char *golden_dir; /* argv[1] */

/* One request. query is "a=1&b=2" (already decoded, as the server hands it over); body and
 * content_type only for POST. */
struct golden_case {
    const char *name;
    const char *method;
    const char *path;
    const char *query;
    const char *body;
};

#define CT_JSON "application/json"

/* Every route, every reply member, each optional member both present and absent (null), every
 * warning and advice code, batches and the problem statuses a client can cause. */
static const struct golden_case cases[] = {
    /* Defaults: 7B, 1 H100, bf16 + AdamW, seq 512, batch 1 (does not fit: shard_state advice). */
    {"flops_defaults", "GET", "/flops", NULL, NULL},
    {"memory_defaults", "GET", "/memory", NULL, NULL},
    {"fit_defaults", "GET", "/fit", NULL, NULL},
    {"runtime_defaults", "GET", "/runtime", NULL, NULL},
    /* Framework profiles: torchtitan's Llama 3 8B FSDP run (reserved), Megatron judged by its
     * device peak. */
    {"fit_torchtitan_llama3_8b", "GET", "/fit",
     "model=llama3-8b&gpus=8&seq_len=8192&batch=2&flash_attention=true&checkpointing=selective&"
     "framework=torchtitan&memory_metric=reserved&memory_gb=96",
     NULL},
    {"fit_megatron_device_peak", "GET", "/fit",
     "model=llama3-8b&gpus=8&seq_len=8192&flash_attention=true&checkpointing=selective&"
     "framework=megatron&memory_metric=device",
     NULL},
    /* Every member at once, and the runtime from the step-time model. */
    {"evaluate_defaults", "GET", "/evaluate", NULL, NULL},
    {"runtime_predicted_layout", "GET", "/runtime",
     "model=llama3-70b&gpus=1024&tp=8&pp=4&cp=2&virtual_stages=5&zero_stage=1&seq_len=8192&"
     "global_batch=512&tokens=15T&checkpointing=selective&flash_attention=true&mfu=predicted",
     NULL},
    /* A preset, and the same preset past its trained context (seq_len_exceeds_context). */
    {"fit_llama2_7b", "GET", "/fit", "model=llama2-7b&gpus=8", NULL},
    {"fit_llama2_7b_long_context", "GET", "/fit", "model=llama2-7b&gpus=8&seq_len=8192", NULL},
    /* An architecture given layer by layer (no preset: shape.source "architecture"). */
    {"fit_architecture", "GET", "/fit",
     "layers=24&hidden=2048&heads=16&kv_heads=4&ffn_hidden=5632&vocab=50000&gated_mlp=true&"
     "tied_embeddings=true&gpus=2",
     NULL},
    /* params far from the architecture's count (params_mismatch). */
    {"fit_params_mismatch", "GET", "/fit", "model=llama2-7b&params=13B&gpus=8", NULL},
    /* MoE: FLOPs from active_params, memory from params. */
    {"flops_moe_active_params", "GET", "/flops", "params=47B&active_params=13B", NULL},
    {"fit_moe_active_params", "GET", "/fit", "params=47B&active_params=13B&gpus=16", NULL},
/* A model the user brings: Mixtral's config.json on 8 GPUs with ep 8 (shape.source
 * config, the expert split in memory.experts); a preset with expert parallelism priced by
 * the time model (ep_comm); offloaded optimizer and weights (memory.host, offload_host). */
#define MIXTRAL_CONFIG                                                                             \
    "{\"model_type\":\"mixtral\",\"hidden_size\":4096,\"intermediate_size\":14336,"                \
    "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":8,"               \
    "\"vocab_size\":32000,\"tie_word_embeddings\":false,\"max_position_embeddings\":32768,"        \
    "\"num_local_experts\":8,\"num_experts_per_tok\":2,\"rope_theta\":1000000.0}"
    {"fit_mixtral_config_ep8", "POST", "/fit", NULL,
     "{\"config\":" MIXTRAL_CONFIG ",\"gpus\":8,\"ep\":8}"},
    {"runtime_mixtral_ep8", "GET", "/runtime", "model=mixtral-8x7b&gpus=64&ep=8&mfu=predicted",
     NULL},
    {"fit_offload", "GET", "/fit", "gpus=8&offload_optimizer=cpu&offload_params=cpu&zero_stage=3",
     NULL},
    /* Fine-tuning with adapters: QLoRA of Llama 3 8B on a 24 GB card under torchtune (the
     * adapters' ledger and memory.adapters), LoRA on all linears under PEFT's rules. */
    {"fit_qlora_torchtune_24gb", "GET", "/fit",
     "model=llama3-8b&finetune=qlora&framework=torchtune&memory_gb=24&seq_len=2048&batch=2&"
     "checkpointing=full&compile=true&lora_targets=q_proj,k_proj,v_proj,output_proj,mlp",
     NULL},
    {"fit_lora_70b_use_qlora", "GET", "/fit",
     "model=llama3-70b&finetune=lora&framework=torchtune&seq_len=2048&checkpointing=full", NULL},
    {"fit_lora_all_linear_hf", "GET", "/fit",
     "model=mistral-7b&finetune=lora&framework=hf_trainer&lora_targets=all-linear&lora_rank=16&"
     "seq_len=4096&batch=4&checkpointing=full&flash_attention=true&mfu=predicted",
     NULL},
    {"problem_400_bad_config", "POST", "/fit", NULL,
     "{\"config\":{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_attention_heads\":"
     "30,\"num_hidden_layers\":2}}"},
    {"problem_422_ep", "GET", "/fit", "model=mixtral-8x7b&gpus=8&ep=3", NULL},
    {"problem_400_lora_targets", "GET", "/fit", "finetune=lora&lora_targets=q_proj,qkv&lora_rank=0",
     NULL},
    {"problem_422_qlora_unquantized", "GET", "/fit", "finetune=qlora&base_quant=none", NULL},
    /* Parallelism: tp, pp, sequence parallelism, each ZeRO stage (0 replicates:
     * zero0_replicated). */
    {"fit_tp_pp_sp", "GET", "/fit",
     "model=llama2-70b&gpus=64&tp=8&pp=2&sequence_parallel=true&zero_stage=1&batch=2", NULL},
    {"memory_zero0", "GET", "/memory", "gpus=8&zero_stage=0", NULL},
    {"memory_zero1", "GET", "/memory", "gpus=8&zero_stage=1", NULL},
    {"memory_zero2", "GET", "/memory", "gpus=8&zero_stage=2", NULL},
    {"memory_zero3", "GET", "/memory", "gpus=8&zero_stage=3", NULL},
    /* Checkpointing modes (and the advice each leaves). */
    {"fit_ckpt_none", "GET", "/fit", "gpus=8&batch=16&seq_len=4096&checkpointing=none", NULL},
    {"fit_ckpt_selective", "GET", "/fit",
     "gpus=8&batch=16&seq_len=4096&checkpointing=selective&flash_attention=false", NULL},
    {"fit_ckpt_full", "GET", "/fit", "gpus=8&batch=16&seq_len=4096&checkpointing=full", NULL},
    /* Precisions: fp8 (fp8_ledger), fp32 with bf16 gradients, an optimizer of its own row. */
    {"memory_fp8", "GET", "/memory", "precision=fp8&gpus=8", NULL},
    {"memory_fp32_bf16_grads", "GET", "/memory", "precision=fp32&grad_precision=bf16&gpus=8", NULL},
    {"fit_adafactor", "GET", "/fit", "optimizer=adafactor&gpus=8", NULL},
    /* Runtime: priced (cost_usd present), measured throughput (mfu_measured, mfu_low), an
     * optimistic mfu, count=model, hardware overrides and a global batch. */
    {"runtime_priced", "GET", "/runtime", "gpus=8&usd_per_gpu_hour=2.5", NULL},
    {"runtime_tokens_per_second", "GET", "/runtime", "gpus=8&tokens_per_second=5000", NULL},
    {"runtime_mfu_optimistic", "GET", "/runtime", "gpus=8&mfu=0.8&count=model", NULL},
    {"runtime_overrides", "GET", "/runtime",
     "params=1.3B&gpus=4&gpu=a100-sxm-80gb&peak_tflops=250&memory_gb=64&reserve_gb=2&"
     "global_batch_tokens=1e6&tokens=26e9&attention_flops=causal&count=hardware",
     NULL},
    /* Figures no unseen measured run backs (core/validation.c): the time model on a B200
     * (constants copied from Hopper), memory.peak under deepspeed (no measured peak). */
    {"runtime_b200_unvalidated", "GET", "/runtime", "gpus=8&gpu=b200", NULL},
    {"fit_deepspeed_unvalidated", "GET", "/fit", "gpus=8&framework=deepspeed", NULL},
    /* A long sequence on a small model: the attention term matters. */
    {"flops_attention_material", "GET", "/flops", "params=125M&seq_len=32768", NULL},
    /* Advice: the batch must shrink, the sequence must shrink, the state never fits, headroom. */
    {"fit_reduce_batch", "GET", "/fit", "gpus=8&batch=64&checkpointing=full", NULL},
    {"fit_reduce_seq_len", "GET", "/fit", "gpus=8&seq_len=131072&checkpointing=full", NULL},
    {"fit_state_never_fits", "GET", "/fit", "params=1000T&memory_gb=0.1", NULL},
    {"fit_batch_headroom", "GET", "/fit", "gpus=8&zero_stage=3", NULL},
    /* /inference (docs/serving.md): vLLM V1 defaults, FP8 weights over tp 4, a replica that does
     * not serve (every advice code it can give), K26's measured pool, the other engines, a
     * batch, and the 400 and 422 it answers. */
    {"inference_llama3_8b", "GET", "/inference", "model=llama3-8b", NULL},
    {"inference_llama3_70b_fp8_tp4", "GET", "/inference",
     "model=llama3-70b&quantization=fp8&tp=4&kv_cache_dtype=fp8", NULL},
    {"inference_does_not_serve", "GET", "/inference", "model=llama3-70b&gpu=l40s", NULL},
    {"inference_max_model_len_advice", "GET", "/inference",
     "model=llama3-8b&kv_cache_memory=1073741823&max_num_seqs=64", NULL},
    {"inference_k26_kv_cache_memory", "POST", "/inference", NULL,
     "{\"layers\":32,\"hidden\":4096,\"heads\":32,\"kv_heads\":8,\"ffn_hidden\":14336,"
     "\"vocab\":32000,\"gated_mlp\":true,\"precision\":\"fp16\",\"quantization\":\"gptq\","
     "\"max_model_len\":32768,\"kv_cache_memory\":110122961469,\"gpu\":\"h200-sxm\"}"},
    {"inference_sglang", "GET", "/inference", "model=llama3-8b&engine=sglang", NULL},
    {"inference_trtllm_awq", "GET", "/inference",
     "model=llama2-13b&engine=trtllm&quantization=awq&gpu=a10&precision=fp16", NULL},
    {"inference_llamacpp_q4_k_m", "GET", "/inference",
     "model=llama2-7b&engine=llama.cpp&quantization=gguf_q4_k_m&gpu=rtx-4090", NULL},
    {"inference_vllm_v0_mla", "GET", "/inference",
     "model=deepseek-v3&engine=vllm_v0&quantization=fp8&tp=8&gpu=h200-sxm&max_model_len=32768",
     NULL},
    {"inference_gpt_oss_hybrid", "GET", "/inference",
     "model=gpt-oss-20b&quantization=mxfp4&max_num_seqs=64", NULL},
    {"inference_qwen3_next_linear", "GET", "/inference",
     "model=qwen3-next-80b-a3b&tp=4&max_model_len=65536", NULL},
    {"post_inference_batch", "POST", "/inference", NULL,
     "[{\"model\":\"llama3-8b\"},{\"model\":\"llama3-8b\",\"max_model_len\":9000},"
     "{\"engine\":\"vllm_v2\"}]"},
    {"problem_400_inference_fields", "GET", "/inference",
     "gpu_memory_utilization=0&kv_cache_dtype=fp4&block_size=0&enginee=vllm", NULL},
    {"problem_422_inference_quantization", "GET", "/inference",
     "model=llama3-8b&quantization=awq&precision=fp32", NULL},
    /* POST: an object, the empty body (all defaults), a batch with problem items in place. */
    {"post_memory_object", "POST", "/memory", NULL, "{\"params\":\"13B\",\"gpus\":2}"},
    {"post_fit_empty_body", "POST", "/fit", NULL, ""},
    {"post_fit_batch", "POST", "/fit", NULL,
     "[{},{\"model\":\"llama2-7b\",\"gpus\":8},1,{\"gpus\":0},{\"gpus\":3,\"tp\":2}]"},
    {"post_runtime_batch", "POST", "/runtime", NULL,
     "[{\"gpus\":8,\"usd_per_gpu_hour\":2},{\"gpus\":16}]"},
    /* Launch configurations (docs/launch.md): inputs.source, every launch_* warning code, and a
     * 400 naming the flag. */
    {"post_fit_megatron_args", "POST", "/fit", NULL,
     "{\"megatron_args\":\"torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 "
     "--hidden-size 4096 --num-attention-heads 32 --swiglu --seq-length 4096 --micro-batch-size 1 "
     "--tensor-model-parallel-size 2 --sequence-parallel --bf16 --vocab-size 32000 "
     "--empty-unused-memory-level 1 --acme-flag 3\",\"tp\":4}"},
    {"inference_vllm_args", "POST", "/inference", NULL,
     "{\"vllm_args\":\"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16K "
     "--kv-cache-dtype fp8 --speculative-config '{}' --acme 1\",\"max_num_seqs\":64}"},
    {"problem_400_launch_flag", "POST", "/fit", NULL,
     "{\"megatron_args\":\"--num-layers 2 --tensor-model-parallel-size two\"}"},
    /* /plan: unpriced, priced by GPU, and nothing feasible (reasons). */
    /* The time member (docs/serving.md, "Time"): max load under continuous batching, a priced
     * static batch over tp 2, a mixture of experts; the serving planner. */
    {"inference_time_max_continuous", "GET", "/inference",
     "model=llama3-8b&gpu=h100-sxm&quantization=fp8&kv_cache_dtype=fp8&max_model_len=4096&"
     "input_len=1024&output_len=1024&concurrency=max",
     NULL},
    {"inference_time_priced_tp2", "GET", "/inference",
     "model=llama3-70b&gpu=h200-sxm&gpus=2&tp=2&concurrency=32&usd_per_gpu_hour=3.5", NULL},
    {"inference_time_mixtral", "GET", "/inference",
     "model=mixtral-8x7b&gpu=h200-sxm&max_model_len=8192&concurrency=8&batching=continuous", NULL},
    {"inference_plan_slo", "POST", "/inference/plan", NULL,
     "{\"model\":\"llama3-8b\",\"input_len\":1024,\"output_len\":256,\"requests_per_second\":10,"
     "\"tpot_slo_seconds\":0.03,\"ttft_slo_seconds\":1,\"gpu\":[\"h100-sxm\",\"l40s\"],"
     "\"usd_per_gpu_hour\":{\"h100-sxm\":2.5,\"l40s\":1},\"quantization\":[\"none\",\"fp8\"]}"},
    {"inference_plan_impossible", "POST", "/inference/plan", NULL,
     "{\"model\":\"llama3-8b\",\"concurrency\":4,\"tpot_slo_seconds\":0.0001,"
     "\"gpu\":\"h100-sxm\"}"},
    {"problem_400_inference_plan_fields", "POST", "/inference/plan", NULL,
     "{\"model\":\"llama3-8b\",\"tp\":2,\"quantization\":[\"fp9\"],\"concurrency\":0}"},
    {"plan_h100", "POST", "/plan", NULL, "{\"gpu\":\"h100-sxm\",\"gpus_max\":8}"},
    {"plan_priced_by_gpu", "POST", "/plan", NULL,
     "{\"params\":\"7B\",\"gpus_max\":16,\"usd_per_gpu_hour\":{\"h100-sxm\":2,\"b200\":5}}"},
    {"plan_infeasible", "POST", "/plan", NULL,
     "{\"params\":\"70B\",\"gpu\":\"h100-sxm\",\"gpus_max\":8,\"deadline_days\":1}"},
    /* The catalogs. */
    {"gpus", "GET", "/gpus", NULL, NULL},
    {"models", "GET", "/models", NULL, NULL},
    /* Problems: 400 (field errors, unknown and repeated names, malformed JSON, not an object,
     * query with POST, inputs to a catalog), 405, 415, 422, and OPTIONS (204). */
    {"problem_400_bad_numbers", "GET", "/fit", "gpus=abc&batch=-1", NULL},
    {"problem_400_unknown_repeated", "GET", "/fit", "gpsu=8&gpus=2&gpus=4", NULL},
    {"problem_400_malformed_json", "POST", "/fit", NULL, "{\"gpus\":8,}"},
    {"problem_400_not_object", "POST", "/plan", NULL, "[1]"},
    {"problem_400_post_with_query", "POST", "/memory", "gpus=8", "{}"},
    {"problem_400_catalog_inputs", "GET", "/gpus", "vendor=nvidia", NULL},
    {"problem_400_plan_fields", "POST", "/plan", NULL,
     "{\"batch\":4,\"gpu\":[\"nope\"],\"deadline_days\":0}"},
    {"problem_405", "POST", "/gpus", NULL, "{}"},
    {"problem_415", "POST", "/fit", NULL, "gpus=8"},
    {"problem_422_impossible", "GET", "/fit", "gpus=3&tp=2", NULL},
    {"problem_422_out_of_range", "GET", "/memory", "params=1000T&batch=1000000&seq_len=1000000",
     NULL},
    {"problem_422_plan_budget", "POST", "/plan", NULL, "{\"budget_usd\":100}"},
    /* Layouts Megatron-LM refuses (core/rules.c): interleaving with one micro-batch over two
     * stages, tp 3 over 64 heads. */
    {"problem_422_layout_rules", "GET", "/runtime",
     "model=llama3-70b&gpus=48&tp=3&pp=2&virtual_stages=2", NULL},
    {"options_fit", "OPTIONS", "/fit", NULL, NULL},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

/* ---------------------------------------------------------------------------------------------
 * Building a request, rendering a reply
 * ------------------------------------------------------------------------------------------- */

#define MAX_PARAMS 32

/* Splits "a=1&b&c=" into pairs in place. */
static size_t split_query(char *q, struct api_param *out)
{
    size_t n = 0;

    while (q != NULL && *q != '\0' && n < MAX_PARAMS) {
        char *amp = strchr(q, '&'), *eq;

        if (amp != NULL)
            *amp = '\0';
        eq = strchr(q, '=');
        if (eq != NULL)
            *eq = '\0';
        out[n].key = q;
        out[n].key_len = strlen(q);
        out[n].value = eq != NULL ? eq + 1 : NULL;
        out[n].value_len = eq != NULL ? strlen(eq + 1) : 0;
        n++;
        q = amp != NULL ? amp + 1 : NULL;
    }
    return n;
}

static void dispatch(const struct golden_case *c, struct api_response *resp)
{
    struct api_param params[MAX_PARAMS];
    char qbuf[1024] = "";
    struct api_request req;

    snprintf(qbuf, sizeof qbuf, "%s", c->query != NULL ? c->query : "");
    memset(&req, 0, sizeof req);
    req.method = c->method;
    req.path = c->path;
    req.query = params;
    req.query_count = split_query(qbuf, params);
    req.body = c->body;
    req.body_len = c->body != NULL ? strlen(c->body) : 0;
    /* problem_415 is the one POST sent as a form, to be refused. */
    req.content_type =
        strcmp(c->name, "problem_415") == 0 ? "application/x-www-form-urlencoded" : CT_JSON;
    ck_assert_msg(api_dispatch(&req, resp), "%s: %s %s not routed", c->name, c->method, c->path);
}

/* A growable byte buffer. */
struct buf {
    char *data;
    size_t len, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
    if (n == 0) /* an empty body: p may be NULL, which memcpy must never see */
        return;
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->data = realloc(b->data, b->cap);
        ck_assert_ptr_nonnull(b->data);
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void buf_str(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void header(struct buf *b, const char *name, const char *value)
{
    if (value == NULL)
        return;
    buf_str(b, name);
    buf_str(b, ": ");
    buf_str(b, value);
    buf_str(b, "\n");
}

/* The body must be JSON with no duplicate keys (what a strict client would accept). */
static void expect_valid_json(const struct golden_case *c, const struct api_response *r)
{
    json_error_t err;
    json_t *j;

    if (r->body_len == 0) {
        ck_assert_msg(r->status == 204, "%s: an empty body with status %u", c->name, r->status);
        return;
    }
    j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &err);
    ck_assert_msg(j != NULL, "%s: not valid JSON at line %d column %d: %s", c->name, err.line,
                  err.column, err.text);
    json_decref(j);
}

/* The member "elapsed_seconds":<number> with its number replaced by 0.0; false when absent. */
static bool mask_elapsed(struct buf *out, const char *body, size_t len)
{
    static const char key[] = "\"elapsed_seconds\":";
    const size_t klen = sizeof key - 1;

    for (size_t i = 0; i + klen <= len; i++) {
        if (memcmp(body + i, key, klen) != 0)
            continue;
        size_t end = i + klen;
        while (end < len && body[end] != ',' && body[end] != '}')
            end++;
        buf_add(out, body, i + klen);
        buf_str(out, "0.0");
        buf_add(out, body + end, len - end);
        return true;
    }
    return false;
}

/* a[0..alen) and b[0..blen) hold the same bytes (either may be NULL when empty). */
static bool same(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* The bytes of json[0..len) less every whitespace byte outside strings. */
static struct buf compact(const char *json, size_t len)
{
    struct buf out = {NULL, 0, 0};
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = json[i];

        if (in_string) {
            buf_add(&out, &c, 1);
            if (c == '\\' && i + 1 < len)
                buf_add(&out, &json[++i], 1); /* the escaped byte, even a quote */
            else if (c == '"')
                in_string = false;
        } else if (!is_space(c)) {
            buf_add(&out, &c, 1);
            in_string = c == '"';
        }
    }
    return out;
}

static void newline_indent(struct buf *b, int depth)
{
    buf_str(b, "\n");
    for (int d = 0; d < depth; d++)
        buf_str(b, "  ");
}

/* The layout of a compact body: a line per member and per array element, two spaces a level,
 * ": " after a key, empty {} and [] kept whole; every other byte copied as it is. */
static void layout(struct buf *out, const char *json, size_t len)
{
    bool in_string = false;
    int depth = 0;

    for (size_t i = 0; i < len; i++) {
        char c = json[i];

        if (in_string) {
            buf_add(out, &c, 1);
            if (c == '\\' && i + 1 < len)
                buf_add(out, &json[++i], 1);
            else if (c == '"')
                in_string = false;
            continue;
        }
        switch (c) {
        case '{':
        case '[':
            buf_add(out, &c, 1);
            if (i + 1 < len && (json[i + 1] == '}' || json[i + 1] == ']')) {
                buf_add(out, &json[++i], 1);
                break;
            }
            newline_indent(out, ++depth);
            break;
        case '}':
        case ']':
            newline_indent(out, --depth);
            buf_add(out, &c, 1);
            break;
        case ',':
            buf_add(out, &c, 1);
            newline_indent(out, depth);
            break;
        case ':':
            buf_str(out, ": ");
            break;
        default:
            buf_add(out, &c, 1);
            in_string = c == '"';
        }
    }
    buf_str(out, "\n");
}

/* One case's reply: the status and headers as the file holds them, and the body as sent
 * (elapsed_seconds masked). */
struct rendered {
    struct buf head, body;
};

static struct rendered render(const struct golden_case *c)
{
    struct api_response r;
    struct rendered out = {{NULL, 0, 0}, {NULL, 0, 0}};
    struct buf *b = &out.head;
    char status[16];

    dispatch(c, &r);
    expect_valid_json(c, &r);
    snprintf(status, sizeof status, "%u", r.status);
    header(b, "status", status);
    header(b, "content-type", r.content_type);
    header(b, "allow", r.allow);
    header(b, "cache-control", r.cache_control);
    header(b, "etag", r.etag[0] != '\0' ? "(present, not recorded)" : NULL);
    if ((strcmp(c->path, "/plan") == 0 || strcmp(c->path, "/inference/plan") == 0) &&
        r.status == 200) {
        header(b, "masked", "elapsed_seconds");
        ck_assert_msg(mask_elapsed(&out.body, r.body, r.body_len), "%s: no elapsed_seconds",
                      c->name);
    } else if (r.body_len > 0) {
        buf_add(&out.body, r.body, r.body_len);
    }
    buf_str(b, "\n");
    api_response_free(&r);
    return out;
}

/* The .reply file of a rendered case: the head, then the body's layout. */
static struct buf reply_file(const struct rendered *r)
{
    struct buf f = {NULL, 0, 0};

    buf_add(&f, r->head.data, r->head.len);
    if (r->body.len > 0)
        layout(&f, r->body.data, r->body.len);
    return f;
}

/* ---------------------------------------------------------------------------------------------
 * Files
 * ------------------------------------------------------------------------------------------- */

static void file_path(char *out, size_t size, const char *name)
{
    int n = snprintf(out, size, "%s/%s.reply", golden_dir, name);
    ck_assert_msg(n > 0 && (size_t)n < size, "path too long for %s", name);
}

static bool read_file(const char *path, struct buf *b)
{
    FILE *f = fopen(path, "rb");
    char chunk[4096];
    size_t n;

    if (f == NULL)
        return false;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_add(b, chunk, n);
    ck_assert_msg(!ferror(f), "reading %s failed", path);
    fclose(f);
    return true;
}

static void write_file(const char *path, const struct buf *b)
{
    FILE *f = fopen(path, "wb");

    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(b->data, 1, b->len, f), b->len);
    ck_assert_int_eq(fclose(f), 0);
}

static bool updating(void)
{
    const char *v = getenv("MEMWALL_GOLDEN_UPDATE");
    return v != NULL && strcmp(v, "1") == 0;
}

/* The first line where two texts differ, for a readable failure. */
static int first_difference(const struct buf *a, const struct buf *b)
{
    int line = 1;

    for (size_t i = 0; i < a->len && i < b->len && a->data[i] == b->data[i]; i++)
        line += a->data[i] == '\n';
    return line;
}

/* ---------------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------------- */

START_TEST(reply_matches_golden)
{
    const struct golden_case *c = &cases[_i];
    char path[4096];
    struct rendered got = render(c);
    struct buf sent_compact = compact(got.body.data, got.body.len);
    struct buf file = reply_file(&got), want = {NULL, 0, 0};

    /* The layout is reversible only for a body with no whitespace between tokens. */
    ck_assert_msg(same(sent_compact.data, sent_compact.len, got.body.data, got.body.len),
                  "%s: the reply has whitespace outside strings", c->name);
    file_path(path, sizeof path, c->name);
    if (updating()) {
        write_file(path, &file);
    } else {
        ck_assert_msg(read_file(path, &want),
                      "%s is missing; MEMWALL_GOLDEN_UPDATE=1 records it (tests/golden/README.md)",
                      path);
        /* The bytes: the stored head, and the stored body less its layout, are the reply. */
        ck_assert_msg(want.len >= got.head.len &&
                          same(want.data, got.head.len, got.head.data, got.head.len),
                      "%s: the status or headers differ from %s:\n%.*s", c->name, path,
                      (int)got.head.len, got.head.data);
        struct buf stored = compact(want.data + got.head.len, want.len - got.head.len);
        ck_assert_msg(same(stored.data, stored.len, got.body.data, got.body.len),
                      "%s: the reply differs from %s (first at line %d)", c->name, path,
                      first_difference(&file, &want));
        /* The layout: the file is the canonical one of that reply. */
        ck_assert_msg(same(file.data, file.len, want.data, want.len),
                      "%s: %s holds the reply but not laid out as the test writes it (first at "
                      "line %d); MEMWALL_GOLDEN_UPDATE=1 rewrites it",
                      c->name, path, first_difference(&file, &want));
        free(stored.data);
    }
    free(got.head.data);
    free(got.body.data);
    free(sent_compact.data);
    free(file.data);
    free(want.data);
}
END_TEST

/* Every .reply file belongs to a case: a renamed or dropped case must take its file along. */
START_TEST(no_stray_golden_files)
{
    DIR *d = opendir(golden_dir);
    struct dirent *e;
    size_t files = 0;

    ck_assert_msg(d != NULL, "cannot open %s", golden_dir);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        bool known = false;

        if (n < 6 || strcmp(e->d_name + n - 6, ".reply") != 0)
            continue;
        files++;
        for (size_t i = 0; i < CASE_COUNT && !known; i++)
            known = strlen(cases[i].name) == n - 6 && memcmp(cases[i].name, e->d_name, n - 6) == 0;
        ck_assert_msg(known, "%s/%s belongs to no case", golden_dir, e->d_name);
    }
    closedir(d);
    ck_assert_uint_eq(files, CASE_COUNT);
}
END_TEST

/* The set must keep covering what it claims: each route, each status and every warning and
 * advice code appear in some golden reply (the codes are core/notes.c's). */
START_TEST(cases_cover_every_code)
{
    static const char *const wanted[] = {
        /* warnings */
        "\"mfu_optimistic\"", "\"mfu_low\"", "\"params_mismatch\"", "\"fp8_ledger\"",
        "\"adafactor_factored\"", "\"zero0_replicated\"", "\"attention_term_material\"",
        "\"seq_len_exceeds_context\"", "\"unvalidated_hardware\"", "\"unvalidated_profile\"",
        "\"expected_error\":null",
        /* advice */
        "\"enable_checkpointing\"", "\"enable_flash_attention\"", "\"enable_context_parallel\"",
        "\"offload_host\"", "\"source\":\"config\"", "\"reduce_batch\"", "\"reduce_seq_len\"",
        "\"shard_state\"", "\"state_never_fits\"", "\"batch_headroom\"",
        /* optional members both ways */
        "\"cost_usd\":", "\"usd_per_gpu_hour\":null", "\"tokens_per_second\":null",
        "\"mfu_measured\":true", "\"min_gpus\":null", "\"ranked_by\":\"cost_usd\"",
        "\"ranked_by\":\"gpu_hours\"", "\"source\":\"architecture\"", "\"source\":\"preset\"",
        /* statuses */
        "status: 200", "status: 204", "status: 400", "status: 405", "status: 415", "status: 422"};

    struct buf all = {NULL, 0, 0};

    for (size_t i = 0; i < CASE_COUNT; i++) {
        struct rendered r = render(&cases[i]);
        buf_add(&all, r.head.data, r.head.len);
        buf_add(&all, r.body.data, r.body.len);
        free(r.head.data);
        free(r.body.data);
    }
    for (size_t w = 0; w < sizeof wanted / sizeof wanted[0]; w++) {
        size_t n = strlen(wanted[w]);
        bool seen = false;

        for (size_t k = 0; k + n <= all.len && !seen; k++)
            seen = memcmp(all.data + k, wanted[w], n) == 0;
        ck_assert_msg(seen, "no golden case has %s", wanted[w]);
    }
    free(all.data);
}
END_TEST

static Suite *golden_suite(void)
{
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("replies");

    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, reply_matches_golden, 0, (int)CASE_COUNT);
    if (!updating())
        tcase_add_test(tc, no_stray_golden_files);
    tcase_add_test(tc, cases_cover_every_code);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s GOLDEN-DIRECTORY (tests/golden)\n", argv[0]);
        return EXIT_FAILURE;
    }
    golden_dir = argv[1];
    return check_main_run(golden_suite());
}
