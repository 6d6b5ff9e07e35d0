/*
 * launch_megatron.c - megatron_args: Megatron-LM's pretrain_gpt.py arguments (Megatron-Core and
 * NeMo share the names) into memwall's inputs.
 *
 * The argument string may start with its launcher: every word before the first one ending in
 * ".py" is the launcher's (torchrun / python -m torch.distributed.run), whose --nproc-per-node
 * times --nnodes is the GPU count. Flags take `--flag value` or `--flag=value`; '_' in a flag
 * name reads as '-'. Files: arguments.py is megatron/training/arguments.py, whose parser builds
 * most flags from the dataclasses in megatron/core/transformer/transformer_config.py (TC) and
 * megatron/core/model_parallel_config.py (MPC) through ArgumentGroupFactory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argsplit.h"
#include "core.h"
#include "value.h"
#include "launch_internal.h"

#define ARGS "megatron/training/arguments.py"
#define TC   "megatron/core/transformer/transformer_config.py"
#define MPC  "megatron/core/model_parallel_config.py"
#define DDPC "megatron/core/distributed/distributed_data_parallel_config.py"
#define TOK  "megatron/core/tokenizers/utils/build_tokenizer.py"

#define SET(flag, v, input, file, note)                                                            \
    {                                                                                              \
        flag, v, LAUNCH_SET, input, file, note                                                     \
    }
#define DERIVED(flag, v, input, file, note)                                                        \
    {                                                                                              \
        flag, v, LAUNCH_DERIVED, input, file, note                                                 \
    }
#define IGNORED(flag, v, file, why)                                                                \
    {                                                                                              \
        flag, v, LAUNCH_IGNORED, NULL, file, why                                                   \
    }
#define WARN(flag, v, file, what)                                                                  \
    {                                                                                              \
        flag, v, LAUNCH_WARN, NULL, file, what                                                     \
    }

#define NO_TIME "no effect on memory or time"

/* clang-format off */
static const struct launch_row rows[] = {
    /* ---- the launcher ---- */
    DERIVED("torchrun --nproc-per-node", LAUNCH_STRING, "gpus", "torch/distributed/run.py",
            "gpus = --nproc-per-node x --nnodes"),
    DERIVED("torchrun --nnodes", LAUNCH_STRING, "gpus", "torch/distributed/run.py",
            "N, or MIN:MAX (elastic: MAX is used, with a warning)"),
    /* ---- the network ---- */
    SET("--num-layers", LAUNCH_INT, "layers", TC, "L"),
    SET("--hidden-size", LAUNCH_INT, "hidden", TC, "d"),
    SET("--num-attention-heads", LAUNCH_INT, "heads", TC, "a"),
    DERIVED("--group-query-attention", LAUNCH_SWITCH, "kv_heads", ARGS,
            "kv_heads = --num-query-groups (default 1); without it kv_heads = heads"),
    DERIVED("--num-query-groups", LAUNCH_INT, "kv_heads", TC, "read only with --group-query-attention"),
    SET("--kv-channels", LAUNCH_INT, "head_dim", TC, "default hidden/heads, as memwall's"),
    DERIVED("--ffn-hidden-size", LAUNCH_INT, "ffn_hidden", TC,
            "f; default 4*hidden, or int((4*hidden*2/3)/64)*64 with --swiglu (arguments.py)"),
    DERIVED("--swiglu", LAUNCH_SWITCH, "gated_mlp, ffn_hidden", ARGS, "gated_mlp = true"),
    DERIVED("--untie-embeddings-and-output-weights", LAUNCH_SWITCH, "tied_embeddings", ARGS,
            "tied_embeddings = false (Megatron ties them by default)"),
    DERIVED("--vocab-size", LAUNCH_INT, "vocab", TOK,
            "padded up to a multiple of --make-vocab-size-divisible-by x tp"),
    DERIVED("--make-vocab-size-divisible-by", LAUNCH_INT, "vocab", ARGS, "default 128"),
    DERIVED("--tokenizer-type", LAUNCH_STRING, "vocab", TOK,
            "GPT2BPETokenizer: 50257 tokens before padding"),
    DERIVED("--tokenizer-model", LAUNCH_STRING, "vocab", TOK,
            "a known Hugging Face id: its preset's vocabulary (and the preset when no shape is given)"),
    DERIVED("--vocab-file", LAUNCH_STRING, "vocab", TOK,
            "with --merge-file and no --tokenizer-type: GPT-2 BPE (50257), with a warning"),
    IGNORED("--merge-file", LAUNCH_STRING, TOK, "read with --vocab-file"),
    DERIVED("--position-embedding-type", LAUNCH_STRING, "(warning)", TC,
            "learned_absolute (the default) adds max-position-embeddings x hidden weights, "
            "which memwall does not count: a warning; rope and none add none"),
    IGNORED("--max-position-embeddings", LAUNCH_INT, ARGS, "used only in the learned_absolute warning"),
    IGNORED("--normalization", LAUNCH_STRING, TC,
            "norm weights (d or 2d per layer, under 0.01 % of N) are not among memwall's inputs"),
    IGNORED("--disable-bias-linear", LAUNCH_SWITCH, TC,
            "linear biases (about 9d per layer) are not among memwall's inputs"),
    IGNORED("--use-mcore-models", LAUNCH_SWITCH, ARGS, "the model classes, not their size"),
    IGNORED("--rotary-base", LAUNCH_REAL, TC, NO_TIME), IGNORED("--rotary-percent", LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--use-rotary-position-embeddings", LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--rotary-seq-len-interpolation-factor", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--attention-dropout", LAUNCH_REAL, TC, "dropout masks are fused into the kernels memwall prices"),
    IGNORED("--hidden-dropout", LAUNCH_REAL, TC, "dropout masks are fused into the kernels memwall prices"),
    IGNORED("--init-method-std", LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--apply-layernorm-1p", LAUNCH_SWITCH, TC, NO_TIME),
    IGNORED("--norm-epsilon", LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--no-masked-softmax-fusion", LAUNCH_SWITCH, TC, NO_TIME),
    IGNORED("--attention-softmax-in-fp32", LAUNCH_SWITCH, TC, NO_TIME),
    SET("--seq-length", LAUNCH_INT, "seq_len", ARGS, "T"),
    /* ---- batch and length of training ---- */
    SET("--micro-batch-size", LAUNCH_INT, "batch", ARGS, "b"),
    SET("--global-batch-size", LAUNCH_INT, "global_batch", ARGS, "default micro x dp (memwall's too)"),
    DERIVED("--train-iters", LAUNCH_INT, "tokens", ARGS, "tokens = train-iters x global-batch x seq-length"),
    DERIVED("--train-samples", LAUNCH_INT, "tokens", ARGS, "tokens = train-samples x seq-length"),
    WARN("--step-batch-size-schedule", LAUNCH_LIST, ARGS,
         "the batch schedule is not modelled (priced at --global-batch-size throughout)"),
    WARN("--rampup-batch-size", LAUNCH_LIST, ARGS,
         "the ramp-up's smaller batches are not modelled (tokens assume the full global batch)"),
    /* ---- parallelism ---- */
    SET("--tensor-model-parallel-size", LAUNCH_INT, "tp", MPC, "t"),
    SET("--pipeline-model-parallel-size", LAUNCH_INT, "pp", MPC, "p"),
    SET("--context-parallel-size", LAUNCH_INT, "cp", MPC, "cp"),
    SET("--expert-model-parallel-size", LAUNCH_INT, "ep", MPC, "ep"),
    SET("--expert-tensor-parallel-size", LAUNCH_INT, "etp", MPC, "expert tensor parallel"),
    DERIVED("--num-layers-per-virtual-pipeline-stage", LAUNCH_INT, "virtual_stages", ARGS,
            "virtual_stages = (layers / pp) / N; both divisions exact (arguments.py asserts)"),
    SET("--num-virtual-stages-per-pipeline-rank", LAUNCH_INT, "virtual_stages", ARGS, "as is"),
    SET("--decoder-first-pipeline-num-layers", LAUNCH_INT, "pp_first_layers", TC,
        "layers on the first pipeline stage"),
    SET("--decoder-last-pipeline-num-layers", LAUNCH_INT, "pp_last_layers", TC,
        "layers on the last pipeline stage"),
    WARN("--pipeline-model-parallel-layout", LAUNCH_STRING, TC,
         "a custom layer layout is not modelled (layers are split evenly)"),
    WARN("--account-for-embedding-in-pipeline-split", LAUNCH_SWITCH, TC,
         "the embedding counted as a layer of the split is not modelled"),
    WARN("--account-for-loss-in-pipeline-split", LAUNCH_SWITCH, TC,
         "the loss counted as a layer of the split is not modelled"),
    DERIVED("--sequence-parallel", LAUNCH_SWITCH, "sequence_parallel", MPC,
            "true when tp > 1 (arguments.py turns it off at tp 1); absent = false"),
    DERIVED("--tp-comm-overlap", LAUNCH_SWITCH, "tp_comm_overlap", MPC, "absent = false"),
    DERIVED("--overlap-grad-reduce", LAUNCH_SWITCH, "dp_comm_overlap", DDPC,
            "dp_comm_overlap = --overlap-grad-reduce or --overlap-param-gather; absent = false"),
    DERIVED("--overlap-param-gather", LAUNCH_SWITCH, "dp_comm_overlap", DDPC, "as above"),
    DERIVED("--use-distributed-optimizer", LAUNCH_SWITCH, "zero_stage", ARGS,
            "zero_stage 1 (optimizer state sharded over dp); absent = 0"),
    DERIVED("--use-torch-fsdp2", LAUNCH_SWITCH, "zero_stage", ARGS, "zero_stage 3"),
    DERIVED("--use-megatron-fsdp", LAUNCH_SWITCH, "zero_stage", ARGS,
            "zero_stage from --data-parallel-sharding-strategy (optim 1, optim_grads 2, "
            "optim_grads_params 3, the default)"),
    DERIVED("--data-parallel-sharding-strategy", LAUNCH_STRING, "zero_stage", DDPC, "with --use-megatron-fsdp"),
    /* ---- recomputation ---- */
    DERIVED("--recompute-granularity", LAUNCH_STRING, "checkpointing", TC,
            "selective or full; absent = none"),
    DERIVED("--recompute-method", LAUNCH_STRING, "checkpointing", TC,
            "uniform: every layer; block: the first --recompute-num-layers of each stage "
            "(fewer than a stage holds: modelled as none, the memory upper bound, with a warning)"),
    DERIVED("--recompute-num-layers", LAUNCH_INT, "checkpointing", TC, "with --recompute-method"),
    DERIVED("--recompute-activations", LAUNCH_SWITCH, "checkpointing", ARGS, "selective (arguments.py)"),
    SET("--recompute-modules", LAUNCH_LIST, "recompute_modules", TC, "the modules selective recompute covers"),
    WARN("--distribute-saved-activations", LAUNCH_SWITCH, TC,
         "saved activations split over tp ranks are not modelled"),
    /* ---- precision and optimizer ---- */
    DERIVED("--bf16", LAUNCH_SWITCH, "precision, grad_precision", ARGS,
            "bf16 weights; gradients accumulated in fp32 unless --grad-reduce-in-bf16 (arguments.py)"),
    DERIVED("--fp16", LAUNCH_SWITCH, "precision, grad_precision", ARGS,
            "fp16 weights and gradients (fp32 with --accumulate-allreduce-grads-in-fp32)"),
    DERIVED("--fp8-format", LAUNCH_STRING, "precision", TC, "e4m3 or hybrid: precision fp8"),
    DERIVED("--grad-reduce-in-bf16", LAUNCH_SWITCH, "grad_precision", ARGS, "bf16 gradients"),
    DERIVED("--accumulate-allreduce-grads-in-fp32", LAUNCH_SWITCH, "grad_precision", ARGS, "fp32 gradients"),
    IGNORED("--fp8-amax-history-len", LAUNCH_INT, TC, "scaling bookkeeping (a few values per tensor)"),
    IGNORED("--fp8-amax-compute-algo", LAUNCH_STRING, TC, "scaling bookkeeping"),
    IGNORED("--fp8-recipe", LAUNCH_STRING, TC, "the scaling recipe, not the bytes"),
    WARN("--fp8-param-gather", LAUNCH_SWITCH, ARGS,
         "fp8 compute weights kept instead of bf16 ones are not modelled"),
    DERIVED("--optimizer", LAUNCH_STRING, "optimizer", ARGS,
            "adam (the default; decoupled weight decay) = adamw; sgd = sgd_momentum (sgd with "
            "--sgd-momentum 0)"),
    DERIVED("--sgd-momentum", LAUNCH_REAL, "optimizer", ARGS, "0 makes sgd plain"),
    WARN("--exp-avg-dtype", LAUNCH_STRING, ARGS, "moments kept in another precision are not modelled"),
    WARN("--exp-avg-sq-dtype", LAUNCH_STRING, ARGS, "moments kept in another precision are not modelled"),
    WARN("--main-params-dtype", LAUNCH_STRING, ARGS, "master weights in another precision are not modelled"),
    WARN("--optimizer-cpu-offload", LAUNCH_SWITCH, ARGS,
         "Megatron's hybrid optimizer offload is not modelled (use offload_optimizer)"),
    /* ---- attention and fusions ---- */
    DERIVED("--use-flash-attn", LAUNCH_SWITCH, "flash_attention", ARGS, "flash_attention = true"),
    DERIVED("--attention-backend", LAUNCH_STRING, "flash_attention", TC,
            "auto (the default), flash, fused: true; unfused, local: false"),
    IGNORED("--cross-entropy-loss-fusion", LAUNCH_SWITCH, TC,
            "the megatron profile already prices the vocabulary-parallel fused loss"),
    IGNORED("--cross-entropy-fusion-impl", LAUNCH_STRING, TC, "as above"),
    /* ---- mixture of experts ---- */
    SET("--num-experts", LAUNCH_INT, "experts", TC, "E"),
    DERIVED("--moe-router-topk", LAUNCH_INT, "experts_per_token", TC, "default 2 when --num-experts"),
    SET("--moe-ffn-hidden-size", LAUNCH_INT, "moe_ffn_hidden", TC, "default ffn_hidden, as memwall's"),
    DERIVED("--moe-shared-expert-intermediate-size", LAUNCH_INT, "shared_experts", TC,
            "shared_experts = size / moe_ffn_hidden (exact, else a warning)"),
    DERIVED("--moe-layer-freq", LAUNCH_STRING, "dense_layers", ARGS,
            "1 (the default): every layer MoE; ([0]*K+[1]*M): dense_layers K; other patterns warn"),
    SET("--mtp-num-layers", LAUNCH_INT, "mtp_layers", TC, "multi-token prediction layers"),
    IGNORED("--moe-router-load-balancing-type", LAUNCH_STRING, TC, NO_TIME),
    IGNORED("--moe-aux-loss-coeff", LAUNCH_REAL, TC, NO_TIME),
    IGNORED("--moe-grouped-gemm", LAUNCH_SWITCH, TC, "the kernel, not the bytes"),
    IGNORED("--moe-token-dispatcher-type", LAUNCH_STRING, TC, "the dispatcher's buffers are not separated"),
    WARN("--moe-router-dtype", LAUNCH_STRING, TC, "router logits in fp32 are not modelled"),
    WARN("--moe-expert-capacity-factor", LAUNCH_REAL, TC, "token dropping is not modelled"),
    /* ---- regularization, learning rate, data, checkpoints, logging: no effect ---- */
    IGNORED("--lr", LAUNCH_REAL, ARGS, NO_TIME), IGNORED("--min-lr", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--lr-decay-style", LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--lr-decay-iters", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--lr-decay-samples", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--lr-warmup-fraction", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--lr-warmup-iters", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--lr-warmup-samples", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--decoupled-lr", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--decoupled-min-lr", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--weight-decay", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--clip-grad", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--adam-beta1", LAUNCH_REAL, ARGS, NO_TIME), IGNORED("--adam-beta2", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--adam-eps", LAUNCH_REAL, ARGS, NO_TIME), IGNORED("--seed", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--loss-scale", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--initial-loss-scale", LAUNCH_REAL, ARGS, NO_TIME),
    IGNORED("--data-path", LAUNCH_ANY, ARGS, NO_TIME), IGNORED("--split", LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--mock-data", LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--data-cache-path", LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--num-workers", LAUNCH_INT, ARGS, "data-loader processes on the host"),
    IGNORED("--tiktoken-pattern", LAUNCH_STRING, TOK, NO_TIME),
    IGNORED("--no-create-attention-mask-in-dataloader", LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--no-mmap-bin-files", LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--save", LAUNCH_ANY, ARGS, NO_TIME), IGNORED("--load", LAUNCH_ANY, ARGS, NO_TIME),
    IGNORED("--save-interval", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--ckpt-format", LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--eval-iters", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--eval-interval", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--log-interval", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--log-throughput", LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--tensorboard-dir", LAUNCH_ANY, ARGS, NO_TIME),
    IGNORED("--wandb-project", LAUNCH_STRING, ARGS, NO_TIME),
    IGNORED("--profile", LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--profile-step-start", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--profile-step-end", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--distributed-timeout-minutes", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--exit-duration-in-mins", LAUNCH_INT, ARGS, NO_TIME),
    IGNORED("--calculate-per-token-loss", LAUNCH_SWITCH, ARGS, NO_TIME),
    IGNORED("--manual-gc", LAUNCH_SWITCH, ARGS, "host garbage collection"),
    WARN("--empty-unused-memory-level", LAUNCH_INT, ARGS,
         "torch.cuda.empty_cache() between steps changes the reserved peak, not modelled"),
};
/* clang-format on */

const struct launch_format api_launch_megatron = {"megatron_args", "megatron", rows,
                                                  sizeof rows / sizeof rows[0], NULL};

/* ---------------------------------------------------------------------------------------------
 * Reading the words
 * ------------------------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);

    return n >= t && strcmp(s + n - t, tail) == 0;
}

void launch_read_args(struct launch_ctx *c, const char *text, size_t len)
{
    struct api_words w;
    size_t at, script = 0;
    const char *why;

    if (!api_split_args(text, len, &w, &at, &why)) {
        launch_error(c, NULL, "at byte %zu: %s", at, why);
        return;
    }
    for (size_t i = 0; i < w.count; i++)
        if (ends_with(w.word[i], ".py")) {
            script = i + 1;
            break;
        }
    if (script > 0)
        launch_read_flags(c, w.word, 0, script - 1, "torchrun ");
    launch_read_flags(c, w.word, script, w.count, "");
    api_words_free(&w);
}

/* ---------------------------------------------------------------------------------------------
 * What Megatron derives
 * ------------------------------------------------------------------------------------------- */

static bool text_int(const char *s, int64_t *v)
{
    char *end;
    long long x;

    if (s == NULL || *s < '0' || *s > '9')
        return false;
    x = strtoll(s, &end, 10);
    *v = x;
    return *end == '\0' && x > 0 && x < 1000000000;
}

/* torchrun's --nproc-per-node x --nnodes (run.py: nnodes "N" or "MIN:MAX"). */
static void gpus_from_launcher(struct launch_ctx *c)
{
    const char *nproc = launch_str(c, "torchrun --nproc-per-node");
    const char *nnodes = launch_str(c, "torchrun --nnodes");
    const char *colon = nnodes != NULL ? strchr(nnodes, ':') : NULL;
    int64_t per = 1, nodes = 1;

    if (nproc == NULL && nnodes == NULL)
        return;
    if (nproc != NULL && !text_int(nproc, &per)) {
        launch_warn(c, "launch_assumed",
                    "torchrun --nproc-per-node %.20s is not a number of processes; give gpus",
                    nproc);
        return;
    }
    if (nnodes != NULL && !text_int(colon != NULL ? colon + 1 : nnodes, &nodes)) {
        launch_error(c, "torchrun --nnodes", "expected N or MIN:MAX, got '%.40s'", nnodes);
        return;
    }
    if (colon != NULL)
        launch_warn(c, "launch_assumed", "torchrun --nnodes %.40s is elastic: priced at %lld nodes",
                    nnodes, (long long)nodes);
    launch_set_int(c, "gpus", per * nodes, "torchrun --nproc-per-node x --nnodes");
}

/* tp and pp as the job runs: the body's own value when it overrides the flag. */
static int64_t degree(const struct launch_ctx *c, const char *input, const char *flag)
{
    return launch_body_int(c, input, launch_int(c, flag, 1));
}

/* The vocabulary before padding: --vocab-size, the tokenizer's, or 0 when unknown. */
static int64_t base_vocab(struct launch_ctx *c)
{
    const char *type = launch_str(c, "--tokenizer-type");
    const char *model = launch_str(c, "--tokenizer-model");

    if (launch_has(c, "--vocab-size"))
        return launch_int(c, "--vocab-size", 0);
    if (type != NULL && strcmp(type, "GPT2BPETokenizer") == 0)
        return 50257; /* GPT-2's BPE: 50,257 entries in gpt2-vocab.json */
    if (type == NULL && launch_has(c, "--vocab-file") && launch_has(c, "--merge-file")) {
        launch_warn(c, "launch_assumed",
                    "no --tokenizer-type: --vocab-file with --merge-file read as "
                    "GPT2BPETokenizer (50257 tokens)");
        return 50257;
    }
    if (model != NULL && launch_preset_of_hf_id(model) != NULL) {
        int idx = api_find_catalog(false, launch_preset_of_hf_id(model),
                                   strlen(launch_preset_of_hf_id(model)));
        return idx >= 0 ? core_presets[idx].arch.vocab : 0;
    }
    return 0;
}

/* megatron/core/tokenizers/utils/build_tokenizer.py, vocab_size_with_padding(). */
static void vocab(struct launch_ctx *c)
{
    int64_t v = base_vocab(c), tp = degree(c, "tp", "--tensor-model-parallel-size");
    int64_t multiple = launch_int(c, "--make-vocab-size-divisible-by", 128) * tp;

    if (v <= 0) {
        if (!json_object_get(c->body, "vocab") && !json_object_get(c->out, "model"))
            launch_warn(c, "launch_assumed",
                        "the vocabulary is not in the arguments (--vocab-size, or "
                        "--tokenizer-type GPT2BPETokenizer, or a known --tokenizer-model): "
                        "give vocab");
        return;
    }
    if (multiple <= 0) {
        launch_error(c, "--make-vocab-size-divisible-by", "must be positive");
        return;
    }
    launch_set_int(c, "vocab", (v + multiple - 1) / multiple * multiple,
                   "--vocab-size padded to --make-vocab-size-divisible-by x tp");
}

static void shape(struct launch_ctx *c)
{
    int64_t hidden = launch_int(c, "--hidden-size", 0);
    const char *model = launch_str(c, "--tokenizer-model");
    const char *pos = launch_str(c, "--position-embedding-type");

    if (!launch_has(c, "--num-layers") && !launch_has(c, "--hidden-size")) {
        const char *preset = model != NULL ? launch_preset_of_hf_id(model) : NULL;

        if (preset != NULL)
            launch_set_str(c, "model", preset, "--tokenizer-model");
        else if (!json_object_get(c->body, "config") && !json_object_get(c->body, "model") &&
                 !json_object_get(c->body, "layers"))
            launch_error(c, NULL,
                         "no model shape: give --num-layers and --hidden-size, a known "
                         "--tokenizer-model, or the body's config (a Hugging Face config.json)");
        vocab(c);
        return;
    }
    if (launch_on(c, "--group-query-attention"))
        launch_set_int(c, "kv_heads", launch_int(c, "--num-query-groups", 1),
                       "--group-query-attention --num-query-groups");
    launch_set_bool(c, "gated_mlp", launch_on(c, "--swiglu"), "--swiglu");
    if (launch_has(c, "--ffn-hidden-size"))
        launch_set_int(c, "ffn_hidden", launch_int(c, "--ffn-hidden-size", 0), "--ffn-hidden-size");
    else if (hidden > 0) /* arguments.py: int((4 * h * 2 / 3) / 64) * 64 with --swiglu */
        launch_set_int(c, "ffn_hidden",
                       launch_on(c, "--swiglu")
                           ? (int64_t)floor(4.0 * (double)hidden * 2.0 / 3.0 / 64.0) * 64
                           : 4 * hidden,
                       "--hidden-size (Megatron's default --ffn-hidden-size)");
    launch_set_bool(c, "tied_embeddings", !launch_on(c, "--untie-embeddings-and-output-weights"),
                    "--untie-embeddings-and-output-weights");
    if (pos == NULL || strcmp(pos, "learned_absolute") == 0)
        launch_warn(
            c, "launch_not_modelled",
            "--position-embedding-type learned_absolute (Megatron's default): the "
            "learned position table (%lld x %lld weights) is not counted",
            (long long)launch_int(c, "--max-position-embeddings", launch_int(c, "--seq-length", 0)),
            (long long)hidden);
    vocab(c);
}

/* TC's recompute rules: full needs a method and a layer count; block with fewer layers than a
 * stage holds recomputes only part of it. */
static void recompute(struct launch_ctx *c)
{
    const char *g = launch_str(c, "--recompute-granularity");
    const char *method = launch_str(c, "--recompute-method");
    int64_t n = launch_int(c, "--recompute-num-layers", 0);
    int64_t pp = degree(c, "pp", "--pipeline-model-parallel-size");
    int64_t per_stage = pp > 0 ? launch_int(c, "--num-layers", 0) / pp : 0;

    if (g == NULL && launch_on(c, "--recompute-activations"))
        g = "selective";
    if (g == NULL) {
        launch_set_str(c, "checkpointing", "none", "--recompute-granularity (absent)");
        return;
    }
    if (strcmp(g, "selective") == 0) {
        launch_set_str(c, "checkpointing", "selective", "--recompute-granularity");
        return;
    }
    if (strcmp(g, "full") != 0) {
        launch_error(c, "--recompute-granularity", "expected full or selective, got '%.40s'", g);
        return;
    }
    if (method == NULL || (strcmp(method, "uniform") != 0 && strcmp(method, "block") != 0)) {
        launch_error(c, "--recompute-method",
                     "--recompute-granularity full needs --recompute-method uniform or block");
        return;
    }
    if (n < 1) {
        launch_error(c, "--recompute-num-layers",
                     "--recompute-granularity full needs --recompute-num-layers >= 1");
        return;
    }
    if (strcmp(method, "block") == 0 && per_stage > 0 && n < per_stage) {
        launch_warn(c, "launch_not_modelled",
                    "--recompute-method block recomputes %lld of the %lld layers per stage: "
                    "priced as no recomputation (the memory upper bound)",
                    (long long)n, (long long)per_stage);
        launch_set_str(c, "checkpointing", "none", "--recompute-method block");
        return;
    }
    launch_set_str(c, "checkpointing", "full", "--recompute-granularity full");
}

static void precision(struct launch_ctx *c)
{
    const char *fp8 = launch_str(c, "--fp8-format");
    bool bf16 = launch_on(c, "--bf16"), fp16 = launch_on(c, "--fp16");
    const char *grads;

    if (bf16 && fp16) {
        launch_conflict(c, "--fp16", "--bf16 and --fp16 together (arguments.py asserts)");
        return;
    }
    if (fp8 != NULL && strcmp(fp8, "e4m3") != 0 && strcmp(fp8, "hybrid") != 0) {
        launch_error(c, "--fp8-format", "expected e4m3 or hybrid, got '%.40s'", fp8);
        return;
    }
    launch_set_str(c, "precision",
                   fp8 != NULL ? "fp8"
                   : bf16      ? "bf16"
                   : fp16      ? "fp16"
                               : "fp32",
                   fp8 != NULL ? "--fp8-format"
                   : bf16      ? "--bf16"
                   : fp16      ? "--fp16"
                               : "no --bf16/--fp16");
    /* arguments.py: bf16 accumulates and all-reduces gradients in fp32 unless
     * --grad-reduce-in-bf16; fp16 keeps them fp16 unless asked for fp32. */
    if (bf16)
        grads = launch_on(c, "--grad-reduce-in-bf16") ? "bf16" : "fp32";
    else if (fp16)
        grads = launch_on(c, "--accumulate-allreduce-grads-in-fp32") ? "fp32" : "fp16";
    else
        grads = "fp32";
    launch_set_str(c, "grad_precision", grads, bf16 ? "--bf16" : fp16 ? "--fp16" : "fp32 training");
}

static void optimizer(struct launch_ctx *c)
{
    const char *o = launch_str(c, "--optimizer");

    if (o == NULL || strcmp(o, "adam") == 0)
        launch_set_str(c, "optimizer", "adamw", "--optimizer adam");
    else if (strcmp(o, "sgd") == 0) {
        const json_t *m = json_object_get(c->seen, "--sgd-momentum");

        launch_set_str(c, "optimizer",
                       m != NULL && json_number_value(m) == 0 ? "sgd" : "sgd_momentum",
                       "--optimizer sgd");
    } else
        launch_warn(c, "launch_not_modelled",
                    "--optimizer %.40s is not modelled; optimizer "
                    "left at memwall's default",
                    o);
}

static void parallel(struct launch_ctx *c)
{
    int64_t tp = degree(c, "tp", "--tensor-model-parallel-size");
    int64_t pp = degree(c, "pp", "--pipeline-model-parallel-size");
    int64_t layers = launch_int(c, "--num-layers", 0);
    int64_t per_vstage = launch_int(c, "--num-layers-per-virtual-pipeline-stage", 0);
    const char *strategy = launch_str(c, "--data-parallel-sharding-strategy");
    int zero = launch_on(c, "--use-distributed-optimizer") ? 1 : 0;

    launch_set_bool(c, "sequence_parallel", tp > 1 && launch_on(c, "--sequence-parallel"),
                    "--sequence-parallel");
    launch_set_bool(c, "tp_comm_overlap", launch_on(c, "--tp-comm-overlap"), "--tp-comm-overlap");
    launch_set_bool(c, "dp_comm_overlap",
                    launch_on(c, "--overlap-grad-reduce") || launch_on(c, "--overlap-param-gather"),
                    "--overlap-grad-reduce");
    if (launch_on(c, "--use-torch-fsdp2"))
        zero = 3;
    if (launch_on(c, "--use-megatron-fsdp"))
        zero = strategy == NULL || strcmp(strategy, "optim_grads_params") == 0 ? 3
               : strcmp(strategy, "optim_grads") == 0                          ? 2
               : strcmp(strategy, "optim") == 0                                ? 1
                                                                               : 0;
    launch_set_int(c, "zero_stage", zero, "--use-distributed-optimizer");
    if (per_vstage > 0 && layers > 0 && pp > 0) {
        if (layers % pp != 0 || (layers / pp) % per_vstage != 0) {
            launch_conflict(c, "--num-layers-per-virtual-pipeline-stage",
                            "%lld layers over %lld stages do not split into stages of %lld "
                            "(arguments.py asserts both divisions)",
                            (long long)layers, (long long)pp, (long long)per_vstage);
            return;
        }
        launch_set_int(c, "virtual_stages", layers / pp / per_vstage,
                       "--num-layers-per-virtual-pipeline-stage");
    }
    if (json_object_get(c->body, "gpus") == NULL && json_object_get(c->out, "gpus") == NULL) {
        int64_t g = tp * pp * launch_int(c, "--context-parallel-size", 1);

        launch_warn(c, "launch_assumed",
                    "the GPU count is not in the arguments: priced at tp x pp x cp = %lld (one "
                    "data-parallel rank); give gpus or the torchrun launcher",
                    (long long)g);
        launch_set_int(c, "gpus", g, "tp x pp x cp (assumed)");
    }
}

static void attention(struct launch_ctx *c)
{
    const char *backend = launch_str(c, "--attention-backend");
    bool fused = backend == NULL || strcmp(backend, "auto") == 0 || strcmp(backend, "flash") == 0 ||
                 strcmp(backend, "fused") == 0;

    if (backend != NULL && !fused && strcmp(backend, "unfused") != 0 &&
        strcmp(backend, "local") != 0) {
        launch_error(c, "--attention-backend",
                     "expected auto, flash, fused, unfused or local, got '%.40s'", backend);
        return;
    }
    launch_set_bool(c, "flash_attention", fused || launch_on(c, "--use-flash-attn"),
                    backend != NULL ? "--attention-backend" : "--attention-backend (auto)");
}

/* "([0]*K+[1]*M)": K leading dense layers; 0 when the pattern is not that shape. */
static bool dense_prefix(const char *s, int64_t *k)
{
    long long dense, moe;
    char tail;

    if (sscanf(s, "([0]*%lld+[1]*%lld%c", &dense, &moe, &tail) == 3 && tail == ')') {
        *k = dense;
        return true;
    }
    return false;
}

static void experts(struct launch_ctx *c)
{
    const char *freq = launch_str(c, "--moe-layer-freq");
    int64_t moe_ffn = launch_int(c, "--moe-ffn-hidden-size", launch_out_int(c, "ffn_hidden", 0));
    int64_t shared = launch_int(c, "--moe-shared-expert-intermediate-size", 0), k;

    if (!launch_has(c, "--num-experts"))
        return;
    launch_set_int(c, "experts_per_token", launch_int(c, "--moe-router-topk", 2),
                   "--moe-router-topk");
    if (shared > 0) {
        if (moe_ffn > 0 && shared % moe_ffn == 0)
            launch_set_int(c, "shared_experts", shared / moe_ffn,
                           "--moe-shared-expert-intermediate-size / --moe-ffn-hidden-size");
        else
            launch_warn(c, "launch_not_modelled",
                        "--moe-shared-expert-intermediate-size %lld is not a multiple of the "
                        "expert size %lld: the shared expert is not counted",
                        (long long)shared, (long long)moe_ffn);
    }
    if (freq == NULL || strcmp(freq, "1") == 0)
        return;
    if (dense_prefix(freq, &k))
        launch_set_int(c, "dense_layers", k, "--moe-layer-freq");
    else
        launch_warn(c, "launch_not_modelled",
                    "--moe-layer-freq %.40s: only 1 and ([0]*K+[1]*M) are modelled; every "
                    "layer priced as MoE",
                    freq);
}

static void tokens(struct launch_ctx *c)
{
    int64_t seq = launch_int(c, "--seq-length", 0);
    int64_t global = launch_int(c, "--global-batch-size", 0);

    if (seq <= 0)
        return;
    if (launch_has(c, "--train-samples"))
        launch_set(c, "tokens",
                   json_real((double)launch_int(c, "--train-samples", 0) * (double)seq),
                   "--train-samples x --seq-length");
    else if (launch_has(c, "--train-iters") && global > 0)
        launch_set(
            c, "tokens",
            json_real((double)launch_int(c, "--train-iters", 0) * (double)global * (double)seq),
            "--train-iters x --global-batch-size x --seq-length");
}

void launch_megatron_derive(struct launch_ctx *c)
{
    gpus_from_launcher(c);
    shape(c);
    experts(c);
    recompute(c);
    precision(c);
    optimizer(c);
    attention(c);
    tokens(c);
    parallel(c);
}
