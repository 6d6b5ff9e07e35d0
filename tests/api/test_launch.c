/*
 * test_launch.c - launch configurations (api/launch*.c): real configurations copied from the
 * frameworks' own repositories (tests/launch, PROVENANCE.md) give exactly the reply of the same
 * job spelled in memwall's inputs, where the spelling was derived by hand from the framework's
 * argument code (each case says how); malformed values are 400s naming the flag or key; values
 * that contradict each other are 422s; the splitter and the TOML subset on their own.
 *
 * "Exactly the reply": the two /fit bodies are compared as JSON after taking from the launch
 * reply the two things only it has, inputs.source and the launch_* warnings (which are checked
 * on their own).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "argsplit.h"
#include "check_main.h"
#include "launch.h"
#include "launch_internal.h"
#include "toml.h"

static const char *launch_dir; /* argv[1]: tests/launch */

static char *slurp(const char *name)
{
    char path[512];
    FILE *f;
    char *buf;
    long n;

    snprintf(path, sizeof path, "%s/%s", launch_dir, name);
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* POST body (stolen) to path; the reply parsed, its status in *status. */
static json_t *post(const char *path, json_t *body, unsigned *status)
{
    struct api_request req;
    struct api_response resp;
    char *text = json_dumps(body, JSON_COMPACT);
    json_t *reply;

    json_decref(body);
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = path;
    req.body = text;
    req.body_len = strlen(text);
    req.content_type = "application/json";
    memset(&resp, 0, sizeof resp);
    ck_assert(api_dispatch(&req, &resp));
    reply = json_loadb(resp.body, resp.body_len, 0, NULL);
    ck_assert_ptr_nonnull(reply);
    *status = resp.status;
    api_response_free(&resp);
    free(text);
    return reply;
}

/* The launch reply's launch_* warnings removed (returned, in order) and inputs.source checked
 * and removed. */
static json_t *strip_launch(json_t *reply, const char *source)
{
    json_t *inputs = json_object_get(reply, "inputs"), *warnings, *kept, *gone, *w;
    size_t i;

    ck_assert_str_eq(json_string_value(json_object_get(inputs, "source")), source);
    json_object_del(inputs, "source");
    warnings = json_object_get(reply, "warnings");
    kept = json_array();
    gone = json_array();
    json_array_foreach (warnings, i, w) {
        const char *code = json_string_value(json_object_get(w, "code"));

        json_array_append(strncmp(code, "launch_", 7) == 0 ? gone : kept, w);
    }
    json_object_set_new(reply, "warnings", kept);
    return gone;
}

/* The launch body and the hand-spelled body give the same /fit reply; the launch warnings are
 * returned for the caller to check. */
static json_t *same_reply(json_t *launch_body, json_t *spelled, const char *source)
{
    unsigned s1, s2;
    json_t *a = post("/fit", launch_body, &s1), *b = post("/fit", spelled, &s2), *gone;
    char *ta, *tb;

    ck_assert_uint_eq(s2, 200);
    ck_assert_msg(s1 == 200, "launch status %u: %s", s1, json_dumps(a, JSON_COMPACT));
    gone = strip_launch(a, source);
    ta = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
    tb = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_msg(strcmp(ta, tb) == 0, "replies differ:\n%s\n%s", ta, tb);
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
    return gone;
}

/* The codes and a word of each message, in order. */
static void expect_warnings(json_t *gone, const char *const *want, size_t n)
{
    ck_assert_msg(json_array_size(gone) == n, "%zu launch warnings: %s", json_array_size(gone),
                  json_dumps(gone, JSON_COMPACT));
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strstr(json_string_value(json_object_get(json_array_get(gone, i), "message")),
                             want[i]) != NULL,
                      "warning %zu lacks '%s': %s", i, want[i],
                      json_dumps(json_array_get(gone, i), JSON_COMPACT));
    json_decref(gone);
}

/* The expansion of examples/gpt3/train_gpt3_175b_distributed.sh's arrays, paths as given. */
static const char gpt3_175b_args[] =
    "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 "
    "--max-position-embeddings 2048 --attention-backend auto "
    "--micro-batch-size 1 --global-batch-size 1536 "
    "--step-batch-size-schedule \"0:16 2.4B:320 4.8B:624 7.2B:928 9.6B:1232 12B:1536\" "
    "--train-iters 500000 --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 "
    "--init-method-std 0.006 --clip-grad 1.0 --fp16 --lr 6.0e-5 --lr-decay-style cosine "
    "--min-lr 6.0e-6 --lr-warmup-fraction .001 --lr-decay-iters 430000 "
    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 "
    "--data-path data_text_document --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt "
    "--split 949,50,1 --log-interval 100 --save-interval 10000 --eval-interval 1000 "
    "--save ckpt --load ckpt --eval-iters 10 --tensorboard-dir tb";

/* GPT-3 175B as Megatron reads it (megatron/training/arguments.py and the configs it builds):
 * - shape: L 96, d 12288, a 96; no --swiglu so f = 4d = 49152, ungated; no --untie: tied; no
 *   --group-query-attention: k = a (memwall's default);
 * - vocabulary: no --tokenizer-type, GPT-2 BPE files: 50257, padded to a multiple of
 *   128 (--make-vocab-size-divisible-by's default) x tp 8 = 1024: ceil(50257/1024) = 50 ->
 *   51200 (build_tokenizer.py, vocab_size_with_padding);
 * - --fp16 without --accumulate-allreduce-grads-in-fp32: fp16 gradients;
 * - no --use-distributed-optimizer: ZeRO 0; no --sequence-parallel, --tp-comm-overlap,
 *   --overlap-grad-reduce: all false; no --recompute-*: none; --attention-backend auto: fused
 *   attention (flash_attention); --optimizer default adam = AdamW;
 * - tokens = 500000 iterations x 1536 x 2048 = 1,572,864,000,000. */
START_TEST(megatron_gpt3_175b)
{
    static const char *const want[] = {"--step-batch-size-schedule", "learned_absolute", "GPT2BPE"};
    json_t *launch = json_pack("{s:i,s:s}", "gpus", 128, "megatron_args", gpt3_175b_args);
    json_t *spelled = json_pack(
        "{s:i,s:i,s:i,s:i,s:b,s:b,s:i,s:i,s:i,s:i,s:f,s:s,s:s,s:i,s:b,s:b,s:b,s:s,s:b,s:s,"
        "s:i,s:i,s:i,s:s}",
        "layers", 96, "hidden", 12288, "heads", 96, "ffn_hidden", 49152, "gated_mlp", 0,
        "tied_embeddings", 1, "vocab", 51200, "seq_len", 2048, "batch", 1, "global_batch", 1536,
        "tokens", 1572864000000.0, "precision", "fp16", "grad_precision", "fp16", "zero_stage", 0,
        "sequence_parallel", 0, "tp_comm_overlap", 0, "dp_comm_overlap", 0, "checkpointing", "none",
        "flash_attention", 1, "optimizer", "adamw", "tp", 8, "pp", 16, "gpus", 128, "framework",
        "megatron");

    expect_warnings(same_reply(launch, spelled, "megatron_args"), want, 3);
}
END_TEST

/* examples/llama/train_llama3_8b_h100_fp8.sh, its MOCK branch (the script's default), after
 * the shell's expansion, launcher included:
 * - shape: L 32, d 4096, f 14336 given, a 32, --group-query-attention with 8 groups: k 8,
 *   --kv-channels 128, --swiglu: gated, --untie...: untied, rope: no position table;
 * - NullTokenizer --vocab-size 128256 = 1002 x 128 (tp 1): no padding;
 * - --fp8-format hybrid: fp8; --bf16 with --grad-reduce-in-bf16: bf16 gradients;
 * - --use-distributed-optimizer: ZeRO 1; --overlap-grad-reduce: dp overlap; --sequence-parallel
 *   at tp 1 is turned off (arguments.py); --attention-backend fused: flash_attention;
 * - tokens = --train-samples 1953125000 x 8192 = 16,000,000,000,000;
 * - torchrun --nproc_per_node 8 --nnodes 1: 8 GPUs. */
START_TEST(megatron_llama3_8b_fp8)
{
    static const char args[] =
        "torchrun --nproc_per_node 8 --nnodes 1 --node_rank 0 --master_addr localhost "
        "--master_port 29500 pretrain_gpt.py --use-mcore-models --num-layers 32 "
        "--hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
        "--group-query-attention --num-query-groups 8 --kv-channels 128 --seq-length 8192 "
        "--max-position-embeddings 8192 --position-embedding-type rope --rotary-base 1000000 "
        "--rotary-percent 1.0 --attention-dropout 0.0 --hidden-dropout 0.0 --swiglu "
        "--normalization RMSNorm --init-method-std 0.0134 --attention-backend fused "
        "--apply-layernorm-1p --untie-embeddings-and-output-weights --disable-bias-linear "
        "--micro-batch-size 1 --global-batch-size 128 --train-samples 1953125000 "
        "--lr-decay-samples 1949218748 --lr-warmup-samples 3906252 --lr 0.00015 --min-lr 0.00001 "
        "--decoupled-lr 5.0e-4 --decoupled-min-lr 4.5e-5 --lr-decay-style cosine --clip-grad 1.0 "
        "--weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --bf16 --grad-reduce-in-bf16 "
        "--cross-entropy-loss-fusion --calculate-per-token-loss --manual-gc "
        "--empty-unused-memory-level 1 --exit-duration-in-mins 235 --use-distributed-optimizer "
        "--overlap-grad-reduce --overlap-param-gather --fp8-format hybrid "
        "--fp8-amax-history-len 1024 --fp8-amax-compute-algo max --fp8-param-gather "
        "--tensor-model-parallel-size 1 --context-parallel-size 1 --sequence-parallel "
        "--mock-data --tokenizer-type NullTokenizer --vocab-size 128256 "
        "--data-cache-path /tmp/benchmark_cache_llama3_8b_fp8 --tiktoken-pattern v2 "
        "--split '99,1,0' --no-create-attention-mask-in-dataloader --no-mmap-bin-files "
        "--num-workers 1 --log-interval 1 --eval-iters 32 --eval-interval 100 "
        "--save-interval 1000 --log-throughput --profile --profile-step-start 4 "
        "--profile-step-end 6 --ckpt-format torch_dist --distributed-timeout-minutes 60 "
        "--save checkpoints/llama3_8b_fp8 --load checkpoints/llama3_8b_fp8 "
        "--tensorboard-dir tensorboard_logs/llama3_8b_fp8";
    static const char *const want[] = {"--empty-unused-memory-level", "--fp8-param-gather"};
    json_t *launch = json_pack("{s:s}", "megatron_args", args);
    json_t *spelled = json_pack(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:b,s:i,s:i,s:i,s:i,s:f,s:s,s:s,s:i,s:b,s:b,s:b,s:s,s:b,"
        "s:s,s:i,s:i,s:i,s:i,s:s}",
        "layers", 32, "hidden", 4096, "ffn_hidden", 14336, "heads", 32, "kv_heads", 8, "head_dim",
        128, "gated_mlp", 1, "tied_embeddings", 0, "vocab", 128256, "seq_len", 8192, "batch", 1,
        "global_batch", 128, "tokens", 16e12, "precision", "fp8", "grad_precision", "bf16",
        "zero_stage", 1, "sequence_parallel", 0, "tp_comm_overlap", 0, "dp_comm_overlap", 1,
        "checkpointing", "none", "flash_attention", 1, "optimizer", "adamw", "tp", 1, "pp", 1, "cp",
        1, "gpus", 8, "framework", "megatron");

    expect_warnings(same_reply(launch, spelled, "megatron_args"), want, 2);
}
END_TEST

/* torchtitan's llama3_8b.toml (current layout) on 64 GPUs, read through job_config.py and
 * ParallelDims: llama3 8B = the llama3-8b preset; dp_shard -1 = 64 / (1 x 1 x 1 x 1) = 64, so
 * FSDP (ZeRO 3; reshard after forward by default without pp); local_batch_size 1 is the
 * micro-batch, global = 1 x 64; tokens = 1000 steps x 64 x 8192 = 524,288,000; AC selective
 * with option op: selective; compile off; bf16 (mixed_precision_param default); AdamW;
 * attention by SDPA. The 2024 file (degrees under [training]) is the same job. */
static json_t *titan_8b_spelled(void)
{
    return json_pack("{s:s,s:i,s:i,s:i,s:f,s:i,s:i,s:i,s:i,s:b,s:b,s:s,s:s,s:s,s:b,s:b,s:s}",
                     "model", "llama3-8b", "gpus", 64, "batch", 1, "global_batch", 64, "tokens",
                     524288000.0, "seq_len", 8192, "tp", 1, "pp", 1, "cp", 1, "sequence_parallel",
                     0, "tp_comm_overlap", 0, "checkpointing", "selective", "precision", "bf16",
                     "optimizer", "adamw", "compile", 0, "flash_attention", 1, "framework",
                     "torchtitan");
}

START_TEST(torchtitan_llama3_8b)
{
    char *toml = slurp("torchtitan_llama3_8b.toml");
    json_t *launch = json_pack("{s:i,s:s}", "gpus", 64, "torchtitan_config", toml);
    json_t *spelled = titan_8b_spelled();

    json_object_set_new(spelled, "zero_stage", json_integer(3));
    expect_warnings(same_reply(launch, spelled, "torchtitan_config"), NULL, 0);
    free(toml);
}
END_TEST

START_TEST(torchtitan_2024_layout)
{
    char *toml = slurp("torchtitan_2024_llama3_8b.toml");
    json_t *launch = json_pack("{s:i,s:s}", "gpus", 64, "torchtitan_config", toml);
    json_t *spelled = titan_8b_spelled();

    json_object_set_new(spelled, "zero_stage", json_integer(3));
    expect_warnings(same_reply(launch, spelled, "torchtitan_config"), NULL, 0);
    free(toml);
}
END_TEST

/* llama3_70b.toml on 64 GPUs: tp 8 (sequence parallel in torchtitan's plan), dp_shard
 * 64 / 8 = 8 (FSDP, ZeRO 3); local_batch_size 8, global 8 x 8 = 64; AC full; tokens
 * 1000 x 64 x 8192. */
START_TEST(torchtitan_llama3_70b)
{
    char *toml = slurp("torchtitan_llama3_70b.toml");
    json_t *launch = json_pack("{s:i,s:s}", "gpus", 64, "torchtitan_config", toml);
    json_t *spelled = titan_8b_spelled();

    json_object_set_new(spelled, "model", json_string("llama3-70b"));
    json_object_set_new(spelled, "tp", json_integer(8));
    json_object_set_new(spelled, "sequence_parallel", json_true());
    json_object_set_new(spelled, "batch", json_integer(8));
    json_object_set_new(spelled, "checkpointing", json_string("full"));
    json_object_set_new(spelled, "zero_stage", json_integer(3));
    expect_warnings(same_reply(launch, spelled, "torchtitan_config"), NULL, 0);
    free(toml);
}
END_TEST

/* DeepSpeedExamples' ZeRO-3 config with 8 GPUs: micro 8, accumulation 1, so train_batch_size
 * = 8 x 1 x 8 = 64 (config.py); stage 3; fp16; no overlap_comm: false; no optimizer block:
 * memwall's AdamW stands. The four ZeRO-3 knobs warn; the misspelt
 * stage3_param_persitence_threshold (as the file has it) is an unknown key. */
START_TEST(deepspeed_zero3)
{
    static const char *const want[] = {"stage3_max_live_parameters", "stage3_max_reuse_distance",
                                       "stage3_prefetch_bucket_size", "reduce_bucket_size",
                                       "persitence"};
    char *text = slurp("deepspeed_zero_stage_3_config.json");
    json_t *launch = json_pack("{s:s,s:i,s:o}", "model", "gpt3-6.7b", "gpus", 8, "deepspeed_config",
                               json_loads(text, 0, NULL));
    json_t *spelled = json_pack("{s:s,s:i,s:i,s:i,s:i,s:s,s:b,s:s}", "model", "gpt3-6.7b", "gpus",
                                8, "batch", 8, "global_batch", 64, "zero_stage", 3, "precision",
                                "fp16", "dp_comm_overlap", 0, "framework", "deepspeed");

    expect_warnings(same_reply(launch, spelled, "deepspeed_config"), want, 5);
    free(text);
}
END_TEST

/* The ZeRO-Offload 10B config on one GPU: train 30 with 3 accumulation steps gives micro
 * 30 / (3 x 1) = 10; stage 2 with the old cpu_offload switch: the optimizer on the host;
 * "Adam" is DeepSpeed's FusedAdam in adam_w_mode (engine.py): adamw. */
START_TEST(deepspeed_offload)
{
    static const char *const want[] = {"reduce_bucket_size", "partition_activations",
                                       "cpu_checkpointing", "comm_overlap"};
    char *text = slurp("deepspeed_zero-offload_10B_config.json");
    json_t *launch = json_pack("{s:i,s:i,s:i,s:i,s:o}", "layers", 50, "hidden", 4096, "heads", 32,
                               "gpus", 1, "deepspeed_config", json_loads(text, 0, NULL));
    json_t *spelled = json_pack(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:b,s:s}", "layers", 50, "hidden", 4096, "heads",
        32, "gpus", 1, "batch", 10, "global_batch", 30, "zero_stage", 2, "offload_optimizer", "cpu",
        "precision", "fp16", "optimizer", "adamw", "dp_comm_overlap", 0, "framework", "deepspeed");

    expect_warnings(same_reply(launch, spelled, "deepspeed_config"), want, 4);
    free(text);
}
END_TEST

/* ---- explicit inputs win, with a warning ---- */

START_TEST(explicit_input_overrides)
{
    unsigned status;
    json_t *r = post(
        "/fit", json_pack("{s:s,s:i,s:i}", "megatron_args", gpt3_175b_args, "gpus", 64, "tp", 4),
        &status);
    json_t *w = json_object_get(r, "warnings"), *it;
    size_t i;
    bool said = false;

    ck_assert_uint_eq(status, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "inputs"), "tp")), 4);
    json_array_foreach (w, i, it)
        said = said || strstr(json_string_value(json_object_get(it, "message")),
                              "tp = 4 given in the body overrides 8 from "
                              "--tensor-model-parallel-size") != NULL;
    ck_assert(said);
    json_decref(r);
}
END_TEST

/* ---- malformed values: 400 naming the flag or key ---- */

static void expect_problem(json_t *body, unsigned want_status, const char *field, const char *words)
{
    unsigned status;
    json_t *r = post("/fit", body, &status);
    json_t *e = json_array_get(json_object_get(r, "errors"), 0);

    ck_assert_msg(status == want_status, "status %u: %s", status, json_dumps(r, JSON_COMPACT));
    ck_assert_str_eq(json_string_value(json_object_get(e, "field")), field);
    ck_assert_msg(strstr(json_string_value(json_object_get(e, "message")), words) != NULL,
                  "message: %s", json_string_value(json_object_get(e, "message")));
    json_decref(r);
}

START_TEST(malformed_values)
{
    expect_problem(json_pack("{s:s}", "megatron_args",
                             "--num-layers 2 --hidden-size 64 --tensor-model-parallel-size two"),
                   400, "megatron_args.--tensor-model-parallel-size",
                   "expected an integer, got 'two'");
    expect_problem(json_pack("{s:s}", "megatron_args", "--num-layers"), 400,
                   "megatron_args.--num-layers", "needs a value");
    /* A value of the right type outside the input's bounds: the decoder's 400, renamed to the
     * flag that set it. */
    /* fuzz_args found 4 x hidden overflowing for --hidden-size 408888888888888888: now the
     * decoder's bound, named by the flag. */
    expect_problem(json_pack("{s:s}", "megatron_args",
                             "--num-layers 2 --hidden-size 408888888888888888 --swiglu"),
                   400, "megatron_args.--hidden-size", "sets hidden, which must be");
    expect_problem(json_pack("{s:i,s:{s:i,s:i,s:i}}", "gpus", 8, "deepspeed_config",
                             "train_batch_size", 8, "train_micro_batch_size_per_gpu", 4000000000000,
                             "gradient_accumulation_steps", 4000000000000),
                   400, "deepspeed_config.train_micro_batch_size_per_gpu", "out of range");
    expect_problem(json_pack("{s:s}", "megatron_args",
                             "--num-layers 0 --hidden-size 64 --num-attention-heads 2"),
                   400, "megatron_args.--num-layers", "sets layers, which must be >= 1");
    expect_problem(json_pack("{s:s}", "megatron_args", "--num-layers 2 --split '99,1"), 400,
                   "megatron_args", "single quote that is never closed");
    expect_problem(json_pack("{s:s}", "megatron_args", "--num-layers 2 --bf16=yes"), 400,
                   "megatron_args.--bf16", "takes no value");
    expect_problem(json_pack("{s:i,s:s}", "gpus", 8, "torchtitan_config",
                             "[training]\nseq_len = 8192\nsteps = 10x\n"),
                   400, "torchtitan_config", "line 3: unexpected text after the value");
    expect_problem(json_pack("{s:i,s:s}", "gpus", 8, "torchtitan_config",
                             "[parallelism]\ntensor_parallel_degree = \"eight\"\n"),
                   400, "torchtitan_config.parallelism.tensor_parallel_degree",
                   "expected an integer");
    expect_problem(json_pack("{s:s}", "torchtitan_config", "[model]\nname = \"acme\"\n"), 400,
                   "torchtitan_config.model.flavor", "no memwall preset for acme debugmodel");
    expect_problem(json_pack("{s:{s:s}}", "deepspeed_config", "train_batch_size", "many"), 400,
                   "deepspeed_config.train_batch_size", "expected a positive integer");
    expect_problem(json_pack("{s:{s:{s:i}}}", "deepspeed_config", "zero_optimization", "stage", 4),
                   400, "deepspeed_config.zero_optimization.stage", "expected 0, 1, 2 or 3");
    expect_problem(json_pack("{s:i}", "deepspeed_config", 3), 400, "deepspeed_config",
                   "expected the ds_config object");
    expect_problem(json_pack("{s:s,s:{}}", "megatron_args", "--num-layers 2", "deepspeed_config"),
                   400, "deepspeed_config", "one launch configuration per request");
    expect_problem(json_pack("{s:s}", "megatron_args", "--tokenizer-model acme/llm-9b --bf16"), 400,
                   "megatron_args", "Hugging Face config.json");
}
END_TEST

/* A launch configuration in a query string, or on a route that does not take it, is named and
 * sent to the body of the right route, not taken for a misspelt input. */
START_TEST(launch_member_misplaced)
{
    struct api_param q = {"megatron_args", 13, "--num-layers 2", 14};
    struct api_request req;
    struct api_response resp;
    json_t *r, *e;

    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.path = "/fit";
    req.query = &q;
    req.query_count = 1;
    memset(&resp, 0, sizeof resp);
    ck_assert(api_dispatch(&req, &resp));
    ck_assert_uint_eq(resp.status, 400);
    r = json_loadb(resp.body, resp.body_len, 0, NULL);
    e = json_array_get(json_object_get(r, "errors"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "field")), "megatron_args");
    ck_assert(strstr(json_string_value(json_object_get(e, "message")), "POST it in the body") !=
              NULL);
    json_decref(r);
    api_response_free(&resp);
    expect_problem(json_pack("{s:s,s:s}", "gpu", "h100-sxm", "deepspeed_config", "x"), 400,
                   "deepspeed_config", "expected the ds_config object");
}
END_TEST

/* ---- contradictions: 422 naming the key ---- */

START_TEST(contradictions)
{
    /* config.py's _batch_assertion: 30 != 4 x 3 x 2 */
    expect_problem(json_pack("{s:i,s:{s:i,s:i,s:i}}", "gpus", 2, "deepspeed_config",
                             "train_batch_size", 30, "train_micro_batch_size_per_gpu", 4,
                             "gradient_accumulation_steps", 3),
                   422, "deepspeed_config.train_batch_size", "_batch_assertion");
    /* ParallelDims: tp 8 on 12 GPUs leaves dp_shard 12 // 8 = 1, and 1 x 8 != 12 */
    expect_problem(json_pack("{s:i,s:s}", "gpus", 12, "torchtitan_config",
                             "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                             "[parallelism]\ntensor_parallel_degree = 8\n"),
                   422, "torchtitan_config.parallelism", "!= gpus 12");
    /* arguments.py: 30 layers over 4 stages */
    expect_problem(json_pack("{s:s}", "megatron_args",
                             "--num-layers 30 --hidden-size 256 --num-attention-heads 4 "
                             "--pipeline-model-parallel-size 4 "
                             "--num-layers-per-virtual-pipeline-stage 2"),
                   422, "megatron_args.--num-layers-per-virtual-pipeline-stage", "asserts");
}
END_TEST

/* ---- Hugging Face ids ---- */

START_TEST(hf_ids)
{
    unsigned status;
    json_t *r;

    ck_assert_str_eq(api_launch_preset_of_hf_id("meta-llama/Llama-3.1-70B-Instruct"),
                     "llama3.1-70b");
    ck_assert_str_eq(api_launch_preset_of_hf_id("META-LLAMA/llama-2-7b-chat-hf"), "llama2-7b");
    ck_assert_str_eq(api_launch_preset_of_hf_id("mistralai/Mixtral-8x7B-Instruct-v0.1"),
                     "mixtral-8x7b");
    ck_assert_ptr_null(api_launch_preset_of_hf_id("mistralai/Mistral-7B-v0.3"));
    ck_assert_str_eq(api_launch_preset_of_hf_id("Qwen/Qwen2.5-72B-Instruct"), "qwen2.5-72b");
    ck_assert_str_eq(api_launch_preset_of_hf_id("moonshotai/Kimi-K2-Instruct"), "kimi-k2");
    ck_assert_ptr_null(api_launch_preset_of_hf_id("Qwen/Qwen2.5-7B.1"));
    ck_assert_ptr_null(api_launch_preset_of_hf_id("meta-llama/Llama-3.1-70Bx"));
    ck_assert_ptr_null(api_launch_preset_of_hf_id("acme/llm"));
    /* No shape flags: the tokenizer's model is the preset; 128256 is a multiple of 128 x 8. */
    r = post("/fit",
             json_pack("{s:s,s:i}", "megatron_args",
                       "--tokenizer-type HuggingFaceTokenizer --tokenizer-model "
                       "meta-llama/Llama-3.1-70B-Instruct --tensor-model-parallel-size 8 --bf16",
                       "gpus", 8),
             &status);
    ck_assert_uint_eq(status, 200);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "inputs"), "model")),
                     "llama3.1-70b");
    json_decref(r);
}
END_TEST

/* Megatron's defaults where a flag is absent: --swiglu without --ffn-hidden-size is
 * int((4 x 4096 x 2 / 3) / 64) x 64 = int(170.67) x 64 = 10880 (arguments.py), not memwall's
 * 256-multiple rule; --vocab-size 32000 at tp 2 pads to a multiple of 256: 32000 (125 x 256);
 * 50000 at tp 8 pads to 50176 (49 x 1024). */
START_TEST(megatron_defaults)
{
    unsigned status;
    json_t *r =
        post("/fit",
             json_pack("{s:s}", "megatron_args",
                       "--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --swiglu "
                       "--vocab-size 50000 --tensor-model-parallel-size 8 "
                       "--seq-length 1024 --bf16"),
             &status);
    json_t *shape = json_object_get(json_object_get(r, "inputs"), "shape");

    ck_assert_uint_eq(status, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "ffn_hidden")), 10880);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "vocab")), 50176);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "inputs"), "gpus")), 8);
    json_decref(r);
}
END_TEST

/* Megatron's MoE flags (transformer_config.py): --moe-router-topk defaults to 2; the expert
 * MLP defaults to --ffn-hidden-size (4 x 512 = 2048 without --swiglu); one shared expert of
 * 4096 is two experts' worth (memwall counts shared experts of the routed size); the pattern
 * ([0]*1+[1]*26) is one dense layer, then 26 MoE layers. */
START_TEST(megatron_moe)
{
    unsigned status;
    json_t *r = post("/fit",
                     json_pack("{s:s}", "megatron_args",
                               "--num-layers 27 --hidden-size 512 --num-attention-heads 8 "
                               "--num-experts 8 --moe-shared-expert-intermediate-size 4096 "
                               "--moe-layer-freq ([0]*1+[1]*26) --expert-model-parallel-size 1"),
                     &status);
    json_t *shape = json_object_get(json_object_get(r, "inputs"), "shape");

    ck_assert_uint_eq(status, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "experts")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "experts_per_token")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "moe_ffn_hidden")), 2048);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "shared_experts")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "dense_layers")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(shape, "moe_layers")), 26);
    json_decref(r);
}
END_TEST

/* The MoE and pipeline-layout flags (moe-layout's inputs, transformer_config.py and
 * arguments.py): --expert-tensor-parallel-size etp, uneven first/last stages, selective
 * recompute of the modules named (joined by commas), one MTP layer, bf16 moments from the two
 * --exp-avg*-dtype flags; the rest as in megatron_gpt3_175b (no --swiglu: f = 4d = 2048, tied,
 * fp32 gradients under --bf16, ZeRO 0, no overlap, fused attention); flex dispatch through
 * DeepEP and the expert all-to-all overlapped (moe-time's inputs, transformer_config.py).
 * --sequence-parallel: Megatron-Core's MoE layers refuse tp > 1 without it (moe_layer.py). */
START_TEST(megatron_moe_layout)
{
    static const char *const want[] = {"learned_absolute", "the vocabulary is not in"};
    json_t *launch =
        json_pack("{s:i,s:s}", "gpus", 16, "megatron_args",
                  "--num-layers 26 --hidden-size 512 --num-attention-heads 8 --num-experts 8 "
                  "--expert-model-parallel-size 4 --expert-tensor-parallel-size 1 "
                  "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                  "--decoder-first-pipeline-num-layers 12 --decoder-last-pipeline-num-layers 14 "
                  "--recompute-granularity selective --recompute-modules core_attn moe_act "
                  "--mtp-num-layers 1 --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --bf16 "
                  "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep "
                  "--sequence-parallel");
    json_t *spelled = json_pack(
        "{s:i,s:i,s:i,s:i,s:b,s:b,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:i,s:s,s:s,s:s,s:i,"
        "s:b,s:b,s:b,s:b,s:s,s:i,s:s}",
        "layers", 26, "hidden", 512, "heads", 8, "ffn_hidden", 2048, "gated_mlp", 0,
        "tied_embeddings", 1, "experts", 8, "experts_per_token", 2, "ep", 4, "etp", 1, "tp", 2,
        "pp", 2, "decoder_first_pipeline_num_layers", 12, "decoder_last_pipeline_num_layers", 14,
        "checkpointing", "selective", "recompute_modules", "core_attn,moe_act", "mtp_layers", 1,
        "optimizer_state_dtype", "bf16", "precision", "bf16", "grad_precision", "fp32",
        "zero_stage", 0, "sequence_parallel", 1, "tp_comm_overlap", 0, "dp_comm_overlap", 0,
        "flash_attention", 1, "optimizer", "adamw", "gpus", 16, "framework", "megatron");

    json_object_set_new(spelled, "moe_dispatcher", json_string("deepep"));
    expect_warnings(same_reply(launch, spelled, "megatron_args"), want, 2);
}
END_TEST

/* --overlap-moe-expert-parallel-comm becomes moe_comm_overlap; with pp > 1 and no virtual stages
 * Megatron-Core refuses it (transformer_config.py: "virtual_pipeline_model_parallel_size must be
 * specified when pipeline_model_parallel_size > 1"), and so does memwall, naming the input. */
START_TEST(megatron_ep_overlap)
{
    static const char *const want[] = {"learned_absolute", "the vocabulary is not in"};
    static const char *const args =
        "--num-layers 26 --hidden-size 512 --num-attention-heads 8 "
        "--num-experts 8 --expert-model-parallel-size 4 "
        "--expert-tensor-parallel-size 1 --tensor-model-parallel-size 2 "
        "--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --bf16 "
        "--moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm "
        "--sequence-parallel";
    char piped[512];
    unsigned status;
    json_t *launch = json_pack("{s:i,s:s}", "gpus", 16, "megatron_args", args);
    json_t *spelled = json_pack(
        "{s:i,s:i,s:i,s:i,s:b,s:b,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:i,s:b,s:b,s:b,s:b,s:s,s:i,"
        "s:s,s:b}",
        "layers", 26, "hidden", 512, "heads", 8, "ffn_hidden", 2048, "gated_mlp", 0,
        "tied_embeddings", 1, "experts", 8, "experts_per_token", 2, "ep", 4, "etp", 1, "tp", 2,
        "optimizer_state_dtype", "bf16", "precision", "bf16", "grad_precision", "fp32",
        "zero_stage", 0, "sequence_parallel", 1, "tp_comm_overlap", 0, "dp_comm_overlap", 0,
        "flash_attention", 1, "optimizer", "adamw", "gpus", 16, "framework", "megatron",
        "moe_comm_overlap", 1);

    expect_warnings(same_reply(launch, spelled, "megatron_args"), want, 2);
    snprintf(piped, sizeof piped, "%s --pipeline-model-parallel-size 2", args);
    launch = json_pack("{s:i,s:s}", "gpus", 16, "megatron_args", piped);
    json_t *reply = post("/fit", launch, &status);
    ck_assert_uint_eq(status, 422);
    char *text = json_dumps(reply, JSON_COMPACT);
    ck_assert_ptr_nonnull(strstr(text, "moe_comm_overlap"));
    free(text);
    json_decref(reply);
}
END_TEST

/* Megatron-Core's CUDA graph flags (transformer_config.py): with --cuda-graph-impl
 * transformer_engine the --cuda-graph-modules list becomes cuda_graph_modules, in Megatron's
 * order; a module memwall does not price (mlp) is dropped with a warning; without a per-layer impl
 * (none, the default) the modules mean nothing. */
static json_t *graph_reply(const char *graphs)
{
    char args[512];
    unsigned status;

    snprintf(args, sizeof args,
             "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --num-experts 8 "
             "--moe-router-topk 2 --ffn-hidden-size 2048 --expert-model-parallel-size 2 "
             "--seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
             "--global-batch-size 8 --vocab-size 32000 --bf16 %s",
             graphs);
    json_t *r = post("/fit", json_pack("{s:i,s:s}", "gpus", 2, "megatron_args", args), &status);
    ck_assert_msg(status == 200, "status %u: %s", status, json_dumps(r, JSON_COMPACT));
    return r;
}

START_TEST(megatron_cuda_graphs)
{
    json_t *r = graph_reply(
        "--cuda-graph-impl transformer_engine --cuda-graph-modules moe_router attn moe_preprocess");
    json_t *cg = json_object_get(json_object_get(r, "inputs"), "cuda_graph_modules");

    ck_assert_str_eq(json_string_value(cg), "attn,moe_router,moe_preprocess");
    json_decref(r);

    r = graph_reply("--cuda-graph-impl local --cuda-graph-scope attn mlp");
    cg = json_object_get(json_object_get(r, "inputs"), "cuda_graph_modules");
    ck_assert_str_eq(json_string_value(cg), "attn");
    char *text = json_dumps(r, JSON_COMPACT);
    ck_assert_ptr_nonnull(strstr(text, "--cuda-graph-modules mlp is not modelled"));
    free(text);
    json_decref(r);

    r = graph_reply("--cuda-graph-modules attn");
    ck_assert(json_is_null(json_object_get(json_object_get(r, "inputs"), "cuda_graph_modules")));
    json_decref(r);
}
END_TEST

/* ---- vllm_args (/inference) ---- */

/* The launch reply of /inference less inputs.source and its launch_* warnings (in
 * inference.warnings) against the hand-spelled body's reply. */
static void same_inference(json_t *launch_body, json_t *spelled)
{
    unsigned s1, s2;
    json_t *a = post("/inference", launch_body, &s1), *b = post("/inference", spelled, &s2);
    json_t *inf = json_object_get(a, "inference"), *kept = json_array(), *w;
    char *ta, *tb;
    size_t i;

    ck_assert_msg(s1 == 200 && s2 == 200, "status %u / %u: %s", s1, s2,
                  json_dumps(a, JSON_COMPACT));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(a, "inputs"), "source")),
                     "vllm_args");
    json_object_del(json_object_get(a, "inputs"), "source");
    json_array_foreach (json_object_get(inf, "warnings"), i, w)
        if (strncmp(json_string_value(json_object_get(w, "code")), "launch_", 7) != 0)
            json_array_append(kept, w);
    json_object_set_new(inf, "warnings", kept);
    ta = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
    tb = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_msg(strcmp(ta, tb) == 0, "replies differ:\n%s\n%s", ta, tb);
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
}

/* vLLM's docs (docs/serving/openai_compatible_server.md): `vllm serve` is the V1 engine; the
 * NousResearch re-upload of Llama 3 8B Instruct is the llama3-8b preset; --dtype auto keeps
 * the model's bf16 (memwall's default precision); --api-key has no effect. */
START_TEST(vllm_docs_command)
{
    char *text = slurp("vllm_serve_openai_compatible_server.sh");

    same_inference(json_pack("{s:s}", "vllm_args", text),
                   json_pack("{s:s,s:s}", "model", "llama3-8b", "engine", "vllm"));
    free(text);
}
END_TEST

/* Every vLLM knob at once (vllm/engine/arg_utils.py): 32k is human_readable_int's 32 x 1000
 * = 32000 (lower-case k is decimal); fp8 KV cache and fp8 weights; Llama 3.1 70B Instruct is
 * the llama3.1-70b preset. */
START_TEST(vllm_knobs)
{
    same_inference(
        json_pack("{s:s}", "vllm_args",
                  "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 "
                  "--max-model-len 32k --kv-cache-dtype fp8 --quantization fp8 "
                  "--gpu-memory-utilization 0.95 --max-num-seqs 128 --enforce-eager "
                  "--max-num-batched-tokens 16K --block-size 32 --port 8000"),
        json_pack("{s:s,s:s,s:i,s:i,s:s,s:s,s:f,s:i,s:b,s:i,s:i}", "model", "llama3.1-70b",
                  "engine", "vllm", "tp", 4, "max_model_len", 32000, "kv_cache_dtype", "fp8",
                  "quantization", "fp8", "gpu_memory_utilization", 0.95, "max_num_seqs", 128,
                  "enforce_eager", 1, "max_num_batched_tokens", 16384, "block_size", 32));
}
END_TEST

/* SGLang's spellings (python/sglang/srt/server_args.py) and TensorRT-LLM's
 * (tensorrt_llm/commands/serve.py, underscores read as dashes). */
START_TEST(sglang_and_trtllm)
{
    same_inference(
        json_pack(
            "{s:s}", "vllm_args",
            "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-8B-Instruct "
            "--tp 2 --mem-fraction-static 0.8 --context-length 4096 --page-size 16 "
            "--disable-cuda-graph --port 30000"),
        json_pack("{s:s,s:s,s:i,s:f,s:i,s:i,s:b}", "model", "llama3-8b", "engine", "sglang", "tp",
                  2, "mem_fraction_static", 0.8, "max_model_len", 4096, "block_size", 16,
                  "enforce_eager", 1));
    same_inference(
        json_pack("{s:s}", "vllm_args",
                  "trtllm-serve meta-llama/Llama-3.1-8B-Instruct --tp_size 2 --max_batch_size 64 "
                  "--max_num_tokens 4096 --max_seq_len 8192 "
                  "--kv_cache_free_gpu_memory_fraction 0.85 --backend pytorch"),
        json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:f}", "model", "llama3.1-8b", "engine", "trtllm", "tp",
                  2, "max_num_seqs", 64, "max_num_batched_tokens", 4096, "max_model_len", 8192,
                  "kv_cache_free_gpu_mem_fraction", 0.85));
}
END_TEST

static void expect_inference_problem(json_t *body, const char *path, const char *field,
                                     const char *words)
{
    unsigned status;
    json_t *r = post(path, body, &status);
    json_t *e = json_array_get(json_object_get(r, "errors"), 0);

    ck_assert_msg(status == 400, "status %u: %s", status, json_dumps(r, JSON_COMPACT));
    ck_assert_str_eq(json_string_value(json_object_get(e, "field")), field);
    ck_assert_msg(strstr(json_string_value(json_object_get(e, "message")), words) != NULL,
                  "message: %s", json_string_value(json_object_get(e, "message")));
    json_decref(r);
}

START_TEST(vllm_problems)
{
    char *gpt2 = slurp("vllm_serve_distributed.sh");

    /* vLLM's distributed-serving example serves gpt2, which has no preset: ask for config. */
    expect_inference_problem(json_pack("{s:s}", "vllm_args", gpt2), "/inference",
                             "vllm_args.serve MODEL", "give config");
    expect_inference_problem(
        json_pack("{s:s}", "vllm_args", "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32x"),
        "/inference", "vllm_args.--max-model-len", "got '32x'");
    /* human_readable_int: decimals only with decimal suffixes */
    expect_inference_problem(
        json_pack("{s:s}", "vllm_args", "vllm serve meta-llama/Llama-3.1-8B --max-model-len 1.5K"),
        "/inference", "vllm_args.--max-model-len", "got '1.5K'");
    expect_inference_problem(
        json_pack("{s:s}", "vllm_args", "vllm serve meta-llama/Llama-3.1-8B --kv-cache-dtype int4"),
        "/inference", "vllm_args.--kv-cache-dtype", "got 'int4'");
    expect_inference_problem(
        json_pack("{s:s}", "vllm_args", "vllm serve meta-llama/Llama-3.1-8B -tp four"),
        "/inference", "vllm_args.--tensor-parallel-size", "expected an integer, got 'four'");
    expect_inference_problem(json_pack("{s:s}", "vllm_args", "vllm serve meta-llama/Llama-3.1-8B"),
                             "/fit", "vllm_args", "POST it to /inference");
    expect_inference_problem(json_pack("{s:s}", "megatron_args", "--num-layers 2"), "/inference",
                             "megatron_args", "/inference takes vllm_args");
    free(gpt2);
}
END_TEST

/* ---- the splitter ---- */

static void split_is(const char *s, const char *const *want, size_t n)
{
    struct api_words w;
    size_t at;
    const char *why;

    ck_assert_msg(api_split_args(s, strlen(s), &w, &at, &why), "%s: %s", s, why);
    ck_assert_uint_eq(w.count, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(w.word[i], want[i]);
    api_words_free(&w);
}

START_TEST(splitter)
{
    static const char *const a[] = {"torchrun", "--nnodes", "2", "x.py", "--split", "99,1,0"};
    static const char *const b[] = {"a b", "c\"d", "e\\f", "g$h", ""};
    static const char *const c[] = {"ab", "c"};
    struct api_words w;
    size_t at;
    const char *why;

    split_is("torchrun --nnodes 2 \\\n   x.py \\\r\n --split '99,1,0' # a comment\n", a, 6);
    split_is("'a b' \"c\\\"d\" \"e\\f\" g\\$h ''", b, 5);
    split_is("a\\\nb c", c, 2);
    ck_assert(!api_split_args("x \"open", 7, &w, &at, &why));
    ck_assert_uint_eq(at, 2);
    ck_assert(!api_split_args("x \\", 3, &w, &at, &why));
    ck_assert_str_eq(why, "a lone backslash at the end");
}
END_TEST

/* ---- the TOML subset ---- */

static void toml_fails(const char *s, int line, const char *words)
{
    char why[160];
    int got = 0;
    json_t *j = api_toml_parse(s, strlen(s), &got, why, sizeof why);

    ck_assert_msg(j == NULL, "accepted: %s", s);
    ck_assert_int_eq(got, line);
    ck_assert_msg(strstr(why, words) != NULL, "%s: %s", s, why);
}

START_TEST(toml_subset)
{
    static const char doc[] = "# c\n[a]\ns = \"x\\u00e9\\t\" # c\nl = 'C:\\p'\ni = -1_000\n"
                              "f = 3e-4\nt = true\n[a.b]\narr = [ 1, # c\n  2,\n]\nd.e = 'q'\n";
    char why[160];
    int line;
    json_t *j = api_toml_parse(doc, strlen(doc), &line, why, sizeof why);
    json_t *a = json_object_get(j, "a");

    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(a, "s")), "x\xc3\xa9\t");
    ck_assert_str_eq(json_string_value(json_object_get(a, "l")), "C:\\p");
    ck_assert_int_eq(json_integer_value(json_object_get(a, "i")), -1000);
    ck_assert(json_real_value(json_object_get(a, "f")) == 3e-4);
    ck_assert(json_is_true(json_object_get(a, "t")));
    ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(a, "b"), "arr")), 2);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(json_object_get(a, "b"), "d"), "e")),
        "q");
    json_decref(j);
    toml_fails("a = 1\nb = 01\n", 2, "leading zero");
    toml_fails("a = 1\na = 2\n", 2, "defined twice");
    toml_fails("[x]\n[y]\n[x]\n", 3, "table defined twice");
    toml_fails("a = 1979-05-27\n", 1, "dates");
    toml_fails("a = [1, 2\nb = 3\n", 2, "not closed");
    toml_fails("a = \"\"\"x\"\"\"\n", 1, "multi-line");
    toml_fails("a = {b = 1}\n", 1, "inline tables");
    toml_fails("[[x]]\n", 1, "arrays of tables");
    toml_fails("a = 0x10\n", 1, "hexadecimal");
    toml_fails("a = inf\n", 1, "inf");
    toml_fails("a = 99999999999999999999\n", 1, "out of range");
    toml_fails("a\n", 1, "without '='");
    toml_fails("a = 1 2\n", 1, "after the value");
    toml_fails("a = \"x\n", 1, "not closed");
}
END_TEST

/* ---- docs/launch.md names every row ---- */

START_TEST(docs_name_every_row)
{
    const struct api_launch_format *formats[] = {&api_launch_megatron, &api_launch_torchtitan,
                                                 &api_launch_deepspeed, &api_launch_vllm};
    char path[512], *doc;
    FILE *f;
    long n;

    snprintf(path, sizeof path, "%s/../../docs/launch.md", launch_dir);
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    doc = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(doc, 1, (size_t)n, f), (size_t)n);
    doc[n] = '\0';
    fclose(f);
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < formats[k]->row_count; i++) {
            char cell[160];

            snprintf(cell, sizeof cell, "`%s`", formats[k]->rows[i].key);
            ck_assert_msg(strstr(doc, cell) != NULL, "docs/launch.md lacks %s", cell);
        }
    free(doc);
}
END_TEST

static Suite *launch_suite(void)
{
    Suite *s = suite_create("launch");
    TCase *t = tcase_create("launch");

    tcase_add_test(t, megatron_gpt3_175b);
    tcase_add_test(t, megatron_llama3_8b_fp8);
    tcase_add_test(t, torchtitan_llama3_8b);
    tcase_add_test(t, torchtitan_2024_layout);
    tcase_add_test(t, torchtitan_llama3_70b);
    tcase_add_test(t, deepspeed_zero3);
    tcase_add_test(t, deepspeed_offload);
    tcase_add_test(t, explicit_input_overrides);
    tcase_add_test(t, malformed_values);
    tcase_add_test(t, contradictions);
    tcase_add_test(t, launch_member_misplaced);
    tcase_add_test(t, hf_ids);
    tcase_add_test(t, megatron_defaults);
    tcase_add_test(t, megatron_moe);
    tcase_add_test(t, megatron_moe_layout);
    tcase_add_test(t, megatron_ep_overlap);
    tcase_add_test(t, megatron_cuda_graphs);
    tcase_add_test(t, vllm_docs_command);
    tcase_add_test(t, vllm_knobs);
    tcase_add_test(t, sglang_and_trtllm);
    tcase_add_test(t, vllm_problems);
    tcase_add_test(t, splitter);
    tcase_add_test(t, toml_subset);
    tcase_add_test(t, docs_name_every_row);
    suite_add_tcase(s, t);
    return s;
}

int main(int argc, char **argv)
{
    launch_dir = argc > 1 ? argv[1] : "tests/launch";
    return check_main_run(launch_suite());
}
