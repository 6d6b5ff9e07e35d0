/*
 * launch_vllm.c - vllm_args for /inference: a serving engine's command line into memwall's
 * serving inputs (core_serve_inputs) and the model's.
 *
 * The command may start with its launcher: `vllm serve MODEL ...`, `python -m
 * vllm.entrypoints.openai.api_server --model MODEL ...` (engine vllm; `VLLM_USE_V1=0` before it:
 * vllm_v0), `python -m sglang.launch_server --model-path MODEL ...` (sglang) or `trtllm-serve
 * MODEL ...` (trtllm). One row table holds the three engines' spellings (they do not collide);
 * '_' reads as '-' (TensorRT-LLM's --tp_size is --tp-size), vLLM's short -tp, -pp, -dp, -q are
 * their long flags. Files: vLLM's vllm/engine/arg_utils.py (EngineArgs.add_cli_args, whose
 * fields live in vllm/config/{model,cache,parallel,scheduler}.py), SGLang's
 * python/sglang/srt/server_args.py, TensorRT-LLM's tensorrt_llm/commands/serve.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argsplit.h"
#include "inputs.h"
#include "launch_internal.h"
#include "launch_rows.h"
#include "serve.h"

#define ARGU "vllm/engine/arg_utils.py"
#define MC   "vllm/config/model.py"
#define CC   "vllm/config/cache.py"
#define PC   "vllm/config/parallel.py"
#define SC   "vllm/config/scheduler.py"
#define SGL  "python/sglang/srt/server_args.py"
#define TRT  "tensorrt_llm/commands/serve.py"

#define NO_MEM "no effect on start-up memory or time"
#define HUMAN  "an integer, or vLLM's human_readable_int (25.6k = 25600, 16K = 16384)"

/* clang-format off */
static const struct api_launch_row rows[] = {
    DERIVED("serve MODEL", API_LAUNCH_STRING, "model", ARGU,
            "the positional model of vllm serve / trtllm-serve: a known Hugging Face id is its "
            "preset; another id needs the body's config"),
    DERIVED("--model", API_LAUNCH_STRING, "model", MC, "as the positional model"),
    DERIVED("--model-path", API_LAUNCH_STRING, "model", SGL, "SGLang's --model"),
    DERIVED("--tokenizer", API_LAUNCH_STRING, "model", MC, "read only when the model id is not known"),
    IGNORED("--tokenizer-path", API_LAUNCH_STRING, SGL, NO_MEM),
    SET("--tensor-parallel-size", API_LAUNCH_INT, "tp", PC, "t"),
    SET("--tp-size", API_LAUNCH_INT, "tp", SGL " / " TRT, "t (SGLang, TensorRT-LLM --tp_size)"),
    SET("--tp", API_LAUNCH_INT, "tp", SGL, "SGLang's short --tp-size"),
    SET("--pipeline-parallel-size", API_LAUNCH_INT, "pp", PC, "p"),
    SET("--pp-size", API_LAUNCH_INT, "pp", SGL " / " TRT, "p"),
    DERIVED("--data-parallel-size", API_LAUNCH_INT, "ep", PC,
            "replicas of the model: each is sized alone; with --enable-expert-parallel, ep = tp x dp"),
    WARN("--dp-size", API_LAUNCH_INT, SGL, "data-parallel replicas: each is sized alone"),
    DERIVED("--enable-expert-parallel", API_LAUNCH_SWITCH, "ep", PC, "ep = tp x data-parallel size"),
    SET("--ep-size", API_LAUNCH_INT, "ep", SGL " / " TRT, "ep"),
    DERIVED("--max-model-len", API_LAUNCH_STRING, "max_model_len", MC, HUMAN),
    SET("--context-length", API_LAUNCH_INT, "max_model_len", SGL, "SGLang's max_model_len"),
    SET("--max-seq-len", API_LAUNCH_INT, "max_model_len", TRT, "TensorRT-LLM's max_model_len"),
    SET("--gpu-memory-utilization", API_LAUNCH_REAL, "gpu_memory_utilization", CC, "as is"),
    SET("--mem-fraction-static", API_LAUNCH_REAL, "mem_fraction_static", SGL, "as is"),
    SET("--kv-cache-free-gpu-memory-fraction", API_LAUNCH_REAL, "kv_cache_free_gpu_mem_fraction", TRT,
        "as is"),
    DERIVED("--kv-cache-memory-bytes", API_LAUNCH_STRING, "kv_cache_memory", CC, HUMAN),
    DERIVED("--kv-cache-memory", API_LAUNCH_STRING, "kv_cache_memory", CC, "an older spelling; " HUMAN),
    DERIVED("--kv-cache-dtype", API_LAUNCH_STRING, "kv_cache_dtype", CC,
            "auto, bfloat16 (= auto for a bf16 model), fp8, fp8_e4m3, fp8_e5m2; others 400"),
    DERIVED("--quantization", API_LAUNCH_STRING, "quantization", MC,
            "fp8, modelopt: fp8; awq, awq_marlin: awq; gptq, gptq_marlin: gptq; bitsandbytes: "
            "bnb_nf4; w8a8_int8: int8; others warn"),
    SET("--max-num-seqs", API_LAUNCH_INT, "max_num_seqs", SC, "as is"),
    SET("--max-running-requests", API_LAUNCH_INT, "max_num_seqs", SGL, "SGLang's max_num_seqs"),
    SET("--max-batch-size", API_LAUNCH_INT, "max_num_seqs", TRT, "TensorRT-LLM's max_num_seqs"),
    DERIVED("--max-num-batched-tokens", API_LAUNCH_STRING, "max_num_batched_tokens", SC, HUMAN),
    SET("--chunked-prefill-size", API_LAUNCH_INT, "max_num_batched_tokens", SGL, "SGLang's"),
    SET("--max-num-tokens", API_LAUNCH_INT, "max_num_batched_tokens", TRT, "TensorRT-LLM's"),
    SET("--block-size", API_LAUNCH_INT, "block_size", CC, "tokens per KV block"),
    SET("--page-size", API_LAUNCH_INT, "block_size", SGL, "SGLang's page"),
    SET("--enforce-eager", API_LAUNCH_SWITCH, "enforce_eager", MC, "true"),
    DERIVED("--disable-cuda-graph", API_LAUNCH_SWITCH, "enforce_eager", SGL, "enforce_eager = true"),
    DERIVED("--dtype", API_LAUNCH_STRING, "precision", MC,
            "auto: the model's; half, float16: fp16; bfloat16: bf16; float, float32: fp32"),
    WARN("--cpu-offload-gb", API_LAUNCH_REAL, ARGU, "weights offloaded to host memory are not modelled"),
    IGNORED("--swap-space", API_LAUNCH_REAL, CC, "host memory for preempted sequences only"),
    WARN("--num-gpu-blocks-override", API_LAUNCH_INT, CC, "a forced block count is not modelled"),
    WARN("--speculative-config", API_LAUNCH_STRING, ARGU, "the draft model and its KV cache are not modelled"),
    WARN("--enable-lora", API_LAUNCH_SWITCH, ARGU, "LoRA adapter slots are not modelled"),
    IGNORED("--max-loras", API_LAUNCH_INT, ARGU, "with --enable-lora"),
    IGNORED("--max-lora-rank", API_LAUNCH_INT, ARGU, "with --enable-lora"),
    WARN("--compilation-config", API_LAUNCH_STRING, ARGU, "CUDA graph sizes are priced at the engine's defaults"),
    WARN("--cuda-graph-max-bs", API_LAUNCH_INT, SGL, "CUDA graph sizes are priced at the engine's defaults"),
    WARN("--max-seq-len-to-capture", API_LAUNCH_INT, MC, "CUDA graph sizes are priced at the engine's defaults"),
    WARN("--limit-mm-per-prompt", API_LAUNCH_STRING, MC, "multimodal encoders and their budget are not modelled"),
    WARN("--kv-transfer-config", API_LAUNCH_STRING, ARGU, "disaggregated KV transfer is not modelled"),
    IGNORED("--enable-prefix-caching", API_LAUNCH_SWITCH, CC, "reuses blocks of the same pool: " NO_MEM),
    IGNORED("--enable-chunked-prefill", API_LAUNCH_SWITCH, SC, "the budget is --max-num-batched-tokens"),
    IGNORED("--calculate-kv-scales", API_LAUNCH_SWITCH, CC, NO_MEM),
    IGNORED("--host", API_LAUNCH_STRING, ARGU, NO_MEM), IGNORED("--port", API_LAUNCH_INT, ARGU, NO_MEM),
    IGNORED("--api-key", API_LAUNCH_STRING, ARGU, NO_MEM),
    IGNORED("--served-model-name", API_LAUNCH_LIST, MC, NO_MEM),
    IGNORED("--chat-template", API_LAUNCH_STRING, ARGU, NO_MEM),
    IGNORED("--trust-remote-code", API_LAUNCH_SWITCH, MC, NO_MEM),
    IGNORED("--download-dir", API_LAUNCH_STRING, ARGU, NO_MEM),
    IGNORED("--load-format", API_LAUNCH_STRING, ARGU, NO_MEM),
    IGNORED("--revision", API_LAUNCH_STRING, MC, NO_MEM),
    IGNORED("--tokenizer-mode", API_LAUNCH_STRING, MC, NO_MEM),
    IGNORED("--seed", API_LAUNCH_INT, MC, NO_MEM),
    IGNORED("--generation-config", API_LAUNCH_STRING, MC, NO_MEM),
    IGNORED("--disable-log-requests", API_LAUNCH_SWITCH, ARGU, NO_MEM),
    IGNORED("--enable-log-requests", API_LAUNCH_SWITCH, ARGU, NO_MEM),
    IGNORED("--disable-log-stats", API_LAUNCH_SWITCH, ARGU, NO_MEM),
    IGNORED("--uvicorn-log-level", API_LAUNCH_STRING, ARGU, NO_MEM),
    IGNORED("--log-level", API_LAUNCH_STRING, SGL, NO_MEM),
    IGNORED("--tool-call-parser", API_LAUNCH_STRING, ARGU, NO_MEM),
    IGNORED("--enable-auto-tool-choice", API_LAUNCH_SWITCH, ARGU, NO_MEM),
    IGNORED("--reasoning-parser", API_LAUNCH_STRING, ARGU, NO_MEM),
    IGNORED("--distributed-executor-backend", API_LAUNCH_STRING, PC, NO_MEM),
    IGNORED("--disable-custom-all-reduce", API_LAUNCH_SWITCH, PC, "a few MiB of buffers"),
    IGNORED("--max-logprobs", API_LAUNCH_INT, MC, NO_MEM),
    IGNORED("--attention-backend", API_LAUNCH_STRING, SGL, "the kernel, not the bytes"),
    IGNORED("--backend", API_LAUNCH_STRING, TRT, "the runtime (pytorch), not the bytes"),
    IGNORED("--nnodes", API_LAUNCH_INT, SGL, "where the ranks run, not their size"),
    IGNORED("--node-rank", API_LAUNCH_INT, SGL, NO_MEM),
    IGNORED("--dist-init-addr", API_LAUNCH_STRING, SGL, NO_MEM),
};
/* clang-format on */

static const struct core_input_spec *serve_find(const char *name, size_t len)
{
    return core_serve_input_find(name, len);
}

const struct api_launch_format api_launch_vllm = {"vllm_args", "vllm", rows,
                                                  sizeof rows / sizeof rows[0], serve_find};

/* ---------------------------------------------------------------------------------------------
 * Reading the command: the launcher's words, then the flags
 * ------------------------------------------------------------------------------------------- */

static const char *long_alias(const char *w)
{
    static const char *const alias[][2] = {{"-tp", "--tensor-parallel-size"},
                                           {"-pp", "--pipeline-parallel-size"},
                                           {"-dp", "--data-parallel-size"},
                                           {"-q", "--quantization"},
                                           {"-O", "--compilation-config"}};

    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(w, alias[i][0]) == 0)
            return alias[i][1];
    return w;
}

/* The launcher's words [0, first): the engine and the positional model. */
static void launcher(struct api_launch_ctx *c, char **words, size_t first)
{
    const char *engine = "vllm", *model = NULL;

    for (size_t i = 0; i < first; i++) {
        const char *w = words[i];

        if (strcmp(w, "VLLM_USE_V1=0") == 0)
            engine = "vllm_v0";
        else if (strstr(w, "sglang") != NULL)
            engine = "sglang";
        else if (strstr(w, "trtllm-serve") != NULL) {
            engine = "trtllm";
            if (i + 1 < first && strcmp(words[i + 1], "serve") != 0)
                model = words[i + 1];
        } else if (strcmp(w, "serve") == 0 && i + 1 < first)
            model = words[i + 1];
    }
    if (strcmp(engine, "vllm") != 0 || first > 0)
        api_launch_set_str(c, "engine", engine, "the launcher");
    if (model != NULL)
        api_launch_take(c, "serve MODEL", json_string(model));
}

void api_launch_read_vllm(struct api_launch_ctx *c, const char *text, size_t len)
{
    struct api_words w;
    size_t at, first;
    const char *why;

    if (!api_split_args(text, len, &w, &at, &why)) {
        api_launch_error(c, NULL, "at byte %zu: %s", at, why);
        return;
    }
    for (size_t i = 0; i < w.count; i++)
        w.word[i] = (char *)long_alias(w.word[i]);
    for (first = 0; first < w.count && !api_launch_is_flag(w.word[first]); first++)
        ;
    launcher(c, w.word, first);
    api_launch_read_flags(c, w.word, first, w.count, "");
    api_words_free(&w);
}

/* ---------------------------------------------------------------------------------------------
 * What the engines derive
 * ------------------------------------------------------------------------------------------- */

/* vllm/engine/arg_utils.py, human_readable_int: "25.6k" (decimal k m g t, decimals allowed),
 * "16K" (binary K M G T, integers only) or a plain integer. -1 when malformed. */
static int64_t human_int(const char *s)
{
    static const char dec[] = "kmgt", bin[] = "KMGT";
    size_t n = strlen(s), digits = 0, dots = 0;
    const char *d = n > 0 ? strchr(dec, s[n - 1]) : NULL, *b = n > 0 ? strchr(bin, s[n - 1]) : NULL;
    double x, m = 1;

    if (d != NULL || b != NULL)
        n--; /* the suffix */
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.' && i > 0 && i + 1 < n)
            dots++;
        else
            return -1;
    }
    if (digits == 0 || digits > 15 || dots > 1 || (dots == 1 && d == NULL))
        return -1; /* decimals only with a decimal suffix */
    x = strtod(s, NULL);
    for (const char *p = dec; d != NULL && p <= d; p++)
        m *= 1e3;
    for (const char *p = bin; b != NULL && p <= b; p++)
        m *= 1024;
    x *= m;
    return x < 9e18 ? (int64_t)x : -1;
}

static void human(struct api_launch_ctx *c, const char *flag, const char *input)
{
    const char *v = api_launch_str(c, flag);
    int64_t n;

    if (v == NULL)
        return;
    n = human_int(v);
    if (n < 0)
        api_launch_error(c, flag, "expected an integer such as 8192, 32k or 16K, got '%.40s'", v);
    else
        api_launch_set_int(c, input, n, flag);
}

static void model(struct api_launch_ctx *c)
{
    static const char *const keys[] = {"serve MODEL", "--model", "--model-path"};
    const char *id = NULL, *key = NULL, *preset, *tok = api_launch_str(c, "--tokenizer");

    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && id == NULL; i++)
        if ((id = api_launch_str(c, keys[i])) != NULL)
            key = keys[i];
    preset = id != NULL ? api_launch_preset_of_hf_id(id) : NULL;
    if (preset == NULL && tok != NULL && (preset = api_launch_preset_of_hf_id(tok)) != NULL) {
        key = "--tokenizer";
        api_launch_warn(c, "launch_assumed",
                        "the model is not a known id; its --tokenizer %.60s is", tok);
    }
    if (preset != NULL) {
        api_launch_set_str(c, "model", preset, key);
        return;
    }
    if (json_object_get(c->body, "config") != NULL || json_object_get(c->body, "model") != NULL ||
        json_object_get(c->body, "layers") != NULL)
        return;
    if (id == NULL)
        api_launch_error(c, NULL, "no model: vllm serve MODEL, --model or --model-path");
    else
        api_launch_error(c, key,
                         "'%.60s' is not a Hugging Face id memwall knows: give config (its "
                         "config.json) or model in the body",
                         id);
}

static void kv_and_weights(struct api_launch_ctx *c)
{
    static const char *const quant[][2] = {{"fp8", "fp8"},
                                           {"modelopt", "fp8"},
                                           {"awq", "awq"},
                                           {"awq_marlin", "awq"},
                                           {"gptq", "gptq"},
                                           {"gptq_marlin", "gptq"},
                                           {"bitsandbytes", "bnb_nf4"},
                                           {"w8a8_int8", "int8"}};
    const char *kv = api_launch_str(c, "--kv-cache-dtype"),
               *q = api_launch_str(c, "--quantization");
    const char *dtype = api_launch_str(c, "--dtype");
    size_t i;

    if (kv != NULL) {
        if (strcmp(kv, "bfloat16") == 0)
            kv = "auto";
        if (strcmp(kv, "auto") != 0 && strcmp(kv, "fp8") != 0 && strcmp(kv, "fp8_e4m3") != 0 &&
            strcmp(kv, "fp8_e5m2") != 0)
            api_launch_error(c, "--kv-cache-dtype",
                             "expected auto, bfloat16, fp8, fp8_e4m3 or "
                             "fp8_e5m2, got '%.40s'",
                             kv);
        else
            api_launch_set_str(c, "kv_cache_dtype", kv, "--kv-cache-dtype");
    }
    for (i = 0; q != NULL && i < sizeof quant / sizeof quant[0]; i++)
        if (strcmp(q, quant[i][0]) == 0) {
            api_launch_set_str(c, "quantization", quant[i][1], "--quantization");
            break;
        }
    if (q != NULL && i == sizeof quant / sizeof quant[0])
        api_launch_warn(c, "launch_not_modelled",
                        "--quantization %.40s is not modelled: weights "
                        "priced at their stored precision",
                        q);
    if (dtype == NULL || strcmp(dtype, "auto") == 0)
        return;
    if (strcmp(dtype, "half") == 0 || strcmp(dtype, "float16") == 0)
        api_launch_set_str(c, "precision", "fp16", "--dtype");
    else if (strcmp(dtype, "bfloat16") == 0)
        api_launch_set_str(c, "precision", "bf16", "--dtype");
    else if (strcmp(dtype, "float") == 0 || strcmp(dtype, "float32") == 0)
        api_launch_set_str(c, "precision", "fp32", "--dtype");
    else
        api_launch_error(c, "--dtype",
                         "expected auto, half, float16, bfloat16, float or float32, got "
                         "'%.40s'",
                         dtype);
}

void api_launch_vllm_derive(struct api_launch_ctx *c)
{
    int64_t tp = api_launch_body_int(
        c, "tp",
        api_launch_int(c, "--tensor-parallel-size",
                       api_launch_int(c, "--tp-size", api_launch_int(c, "--tp", 1))));

    model(c);
    human(c, "--max-model-len", "max_model_len");
    human(c, "--max-num-batched-tokens", "max_num_batched_tokens");
    human(c, "--kv-cache-memory-bytes", "kv_cache_memory");
    human(c, "--kv-cache-memory", "kv_cache_memory");
    kv_and_weights(c);
    if (api_launch_on(c, "--disable-cuda-graph"))
        api_launch_set_bool(c, "enforce_eager", true, "--disable-cuda-graph");
    if (api_launch_on(c, "--enable-expert-parallel")) /* vllm/config/parallel.py: ep = tp x dp */
    {
        int64_t ep;

        if (api_launch_mul(tp, api_launch_int(c, "--data-parallel-size", 1), &ep))
            api_launch_set_int(c, "ep", ep, "--enable-expert-parallel");
    } else if (api_launch_int(c, "--data-parallel-size", 1) > 1)
        api_launch_warn(c, "launch_not_modelled",
                        "--data-parallel-size %lld: replicas of the model; "
                        "each is sized alone",
                        (long long)api_launch_int(c, "--data-parallel-size", 1));
}
