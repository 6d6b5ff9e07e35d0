/*
 * test_core_layout.c - the step-time inputs in core_evaluate(): context parallelism in the
 * ledger, interleaving and batch checks (the runtime under mfu "predicted" is derived term by
 * term in test_core_worked.c).
 *
 * Expected values are derived by hand in the comments (docs/model.md: "Memory ledger",
 * "Step time"), never copied from output.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "core_test_util.h"
#include "perf.h"
#include "serve.h"

/* Mistral-7B's shape (the nearest preset of 7e9): L 32, d 4096, V 32000. */
static void mistral_shape(struct core_input *in)
{
    core_input_init(in);
    in->preset = core_preset_find("mistral-7b");
    in->flash_attention = CORE_FLAG_YES; /* no score matrix: activations are 34 s b d per layer */
    in->seq_len = 4096;
}

START_TEST(context_parallel_halves_activations_and_widens_zero)
{
    struct core_input in;
    struct core_result one, two;

    mistral_shape(&in);
    in.gpus = 2; /* cp 1: dp 2 */
    EVAL_OK(in, one);
    in.cp = 2; /* cp 2: dp 1, the sequence split in two */
    EVAL_OK(in, two);
    /* cp 1, one GPU's tokens s = 4096: 34 * 4096 * 1 * 4096 * 32 = 18,253,611,008 bytes of
     * layers, and the fp32 logits s * V * 4 = 4096 * 32000 * 4 = 524,288,000. With cp 2 each
     * rank holds 2048 tokens: exactly half of both. */
    ASSERT_I64(one.memory.activation_layers, 18253611008LL);
    ASSERT_I64(one.memory.activation_logits, 524288000LL);
    ASSERT_I64(two.memory.activation_layers, 9126805504LL);
    ASSERT_I64(two.memory.activation_logits, 262144000LL);
    /* ZeRO-3 shards over dp * cp = 2 ranks in both layouts: the state per GPU is the same. */
    ASSERT_I64(two.memory.state, one.memory.state);
    ck_assert_int_eq(two.resolved.dp, 1);
}
END_TEST

START_TEST(context_parallel_scores_span_every_key)
{
    struct core_input in;
    struct core_result one, two;

    mistral_shape(&in);
    in.flash_attention = CORE_FLAG_NO;
    in.seq_len = 1024;
    in.gpus = 2;
    in.cp = 2;
    EVAL_OK(in, two);
    in.cp = 1;
    EVAL_OK(in, one);
    /* Per layer: 34 s_local b d + 5 a s_local s b. cp 1: 34*1024*4096 + 5*32*1024*1024 =
     * 142,606,336 + 167,772,160 = 310,378,496; cp 2 (512 queries against 1024 keys):
     * 71,303,168 + 83,886,080 = 155,189,248. Times 32 layers. */
    ASSERT_I64(one.memory.activation_layers, 310378496LL * 32);
    ASSERT_I64(two.memory.activation_layers, 155189248LL * 32);
}
END_TEST

START_TEST(layout_contradictions_are_422)
{
    struct core_input in;

    mistral_shape(&in);
    in.seq_len = 1000;
    in.cp = 3;
    in.gpus = 3;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "cp")); /* 3 does not divide 1000 */

    mistral_shape(&in);
    in.gpus = 6;
    in.cp = 4;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "gpus")); /* 6 is no multiple of tp*pp*cp = 4 */

    mistral_shape(&in);
    in.virtual_stages = 2; /* pp 1 */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "virtual_stages"));

    mistral_shape(&in);
    in.gpus = 4;
    in.pp = 4;
    in.virtual_stages = 3;           /* 4 * 3 = 12 does not divide 32 layers */
    in.framework = CORE_FW_MEGATRON; /* Megatron-LM: (32 / 4) % 3 != 0 (transformer_block.py) */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "virtual_stages"));
    in.framework = CORE_FW_GENERIC; /* torchtitan's split: priced, not refused */
    in.global_batch = 4;            /* m = 4, a multiple of pp (schedules.py) */
    {
        struct core_result r;
        EVAL_OK(in, r);
        /* 32 + 2 units over 12 stages: 2 each, the first 10 get 3; stage 0 and 11 give one to the
         * embedding and output: 2 3 3 3 | 3 3 3 3 | 3 3 2 1 on ranks g mod 4: rank 1 holds stages
         * 1, 5, 9 = 9 layers, the heaviest (rank 0: 2+3+3, rank 2: 3+3+2, rank 3: 3+3+1). */
        ck_assert_int_eq(r.resolved.stage_layers, 9);
    }
    in.framework = CORE_FW_MEGATRON;
    in.global_batch = 0;
    in.virtual_stages = 2; /* 8 divides 32, but one micro-batch is no multiple of pp = 4 */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "virtual_stages"));
    /* Megatron-LM's interleaved schedule (schedules.py) needs m a multiple of pp: with b 1 and
     * dp 1, m = global_batch; 6 is refused, 4 and 8 run. */
    in.global_batch = 6;
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "virtual_stages"));
    for (int k = 1; k <= 2; k++) {
        struct core_result r;
        in.global_batch = 4.0 * k;
        EVAL_OK(in, r);
        ck_assert_int_eq(r.resolved.virtual_stages, 2);
    }
    /* Plain 1F1B takes any m, fewer than pp included. */
    in.virtual_stages = 1;
    in.global_batch = 1;
    {
        struct core_result r;
        EVAL_OK(in, r);
    }

    mistral_shape(&in);
    in.gpus = 8;
    in.batch = 2;
    in.global_batch = 20; /* batch * dp = 16 does not divide 20 */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "global_batch"));
    in.global_batch = 32;
    in.global_batch_tokens = 32.0 * 4096 + 1; /* disagrees with 32 * 4096 */
    ck_assert(eval_fails_on(&in, CORE_EINVAL, "global_batch_tokens"));
}
END_TEST

/* The message of the first problem naming `field` that contains `needle`, or NULL. */
static const char *problem_with(const struct core_input *in, const char *field, const char *needle)
{
    static struct core_problems probs;
    struct core_result out;

    memset(&probs, 0, sizeof probs);
    if (core_evaluate(in, &out, &probs) == CORE_OK)
        return NULL;
    for (int i = 0; i < probs.count && i < CORE_MAX_PROBLEMS; i++)
        if (probs.items[i].field != NULL && strcmp(probs.items[i].field, field) == 0 &&
            strstr(probs.items[i].message, needle) != NULL)
            return probs.items[i].message;
    return NULL;
}

/* Megatron-Bridge's Qwen3-235B-A22B run (MB-2511-Q235-H100: 256 H100, tp 2, pp 8, v 4, ep 32)
 * as a user first types it: both 422s name the input that makes Megatron accept it. */
START_TEST(layout_422_names_the_input_that_fixes_it)
{
    struct core_input in;

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-235b-a22b");
    in.framework = CORE_FW_MEGATRON;
    in.flash_attention = CORE_FLAG_YES;
    in.seq_len = 4096;
    in.gpus = 256;
    in.tp = 2;
    in.pp = 8;
    in.virtual_stages = 4;
    in.ep = 32;
    /* 94 layers: 94 mod 8 = 6, refused; 94 + 2 (embedding and loss counted) = 96 = 8 x 12 and
     * 12 mod v 4 = 0, so the two account_for_* flags make the split even. */
    ck_assert_ptr_nonnull(problem_with(&in, "pp", "account_for_loss_in_pipeline_split) gives 96"));
    /* etp defaults to tp = 2: the experts' grid 2 x 32 x 8 = 512 does not divide 256 GPUs;
     * etp 1 gives 32 x 8 = 256, which does (the row ran with etp 1). */
    ck_assert_ptr_nonnull(
        problem_with(&in, "ep", "etp defaults to tp = 2, and etp = 1 divides it"));
    /* With both: dp = 256 / (2 x 8) = 16; global batch 2048 of b 1 is m = 2048 / 16 = 128
     * micro-batches, a multiple of pp 8 (the interleaved schedule's rule): accepted. */
    in.etp = 1;
    in.embedding_in_split = true;
    in.loss_in_split = true;
    in.global_batch = 2048;
    {
        struct core_result r;
        EVAL_OK(in, r);
        ck_assert_int_eq(r.resolved.virtual_stages, 4);
    }
    /* DeepSeek-V3's 61 layers over pp 8 (MB-2511-DSV3-GB200): 61 and 61 + 2 = 63 are both odd,
     * so no flag helps; the message points to the uneven-stage inputs. */
    core_input_init(&in);
    in.preset = core_preset_find("deepseek-v3");
    in.framework = CORE_FW_MEGATRON;
    in.gpus = 256;
    in.pp = 8;
    in.ep = 32;
    ck_assert_ptr_nonnull(problem_with(
        &in, "pp", "decoder_last_pipeline_num_layers or pipeline_model_parallel_layout"));
    ck_assert_ptr_null(problem_with(&in, "pp", "gives 63"));
}
END_TEST

START_TEST(global_batch_sets_steps_and_micro_batches)
{
    struct core_input in;
    struct core_result r;

    mistral_shape(&in);
    in.gpus = 8;
    in.batch = 2;
    in.global_batch = 64;
    in.tokens = 1e9;
    EVAL_OK(in, r);
    /* 64 sequences of 4096 tokens = 262,144 tokens per step; ceil(1e9 / 262144) = 3815 steps;
     * m = 64 / (2 * 8) = 4 micro-batches per rank. */
    ck_assert(r.resolved.global_batch_tokens == 262144.0);
    ck_assert(r.runtime.steps == 3815.0);
    ck_assert(r.resolved.micro_batches == 4.0);
}
END_TEST

START_TEST(runtime_warns_when_the_layout_does_not_fit)
{
    struct core_input in;
    struct core_result r;

    core_input_init(&in); /* the lesson's 7B on one 80 GB H100: 112 GB of state */
    EVAL_OK(in, r);
    ck_assert_ptr_nonnull(find_note(r.warnings, r.warning_count, "runtime_does_not_fit"));
    in.gpus = 2; /* 56 GB of state + 3.69 GB of activations fit */
    EVAL_OK(in, r);
    ck_assert_ptr_null(find_note(r.warnings, r.warning_count, "runtime_does_not_fit"));
}
END_TEST

/* /inference resolves its model through core_evaluate, so its tp rule is the training one; the
 * message must not tell a vLLM user that Megatron-LM refused it (it said "Megatron-LM splits
 * heads over tp"). Llama 3.1 8B: 32 heads, 8 key/value heads; 32 mod 3 = 2. */
START_TEST(serving_tp_rule_speaks_of_the_engine_too)
{
    struct core_serve_input in;
    struct core_serve_result out;
    struct core_problems p;

    core_serve_input_init(&in);
    in.base.preset = core_preset_find("llama3.1-8b");
    in.base.tp = 3;
    in.base.gpus = 3;
    memset(&p, 0, sizeof p);
    ck_assert_int_eq(core_serve(&in, &out, &p), CORE_EINVAL);
    ck_assert_int_ge(p.count, 1);
    ck_assert_str_eq(p.items[0].field, "tp");
    ck_assert_ptr_nonnull(strstr(p.items[0].message, "32 attention heads"));
    ck_assert_ptr_nonnull(strstr(p.items[0].message, "vLLM"));
}
END_TEST

/* A micro-batch an advice names must be one /fit then accepts. Llama 3 8B on 8 GPUs (dp 8), T 2048,
 * FlashAttention and selective recompute, a given global batch of 64 sequences: memory holds
 * b = 6 (max_batch), but 64 / (6 x 8) is not whole, so /fit of batch 6 is a 422 on global_batch
 * (it was the advice). b x 8 divides 64 for b in {1, 2, 4, 8}: the advice is 4. With pp 2 and
 * v 2 (dp 4) the micro-batches per step 64 / (4 b) must also be a multiple of pp = 2: 16 / b
 * even, b in {1, 2, 4, 8} again, so 4 below a max_batch of 7. Without a global batch it is the
 * max_batch itself. */
START_TEST(batch_advice_keeps_a_given_global_batch)
{
    struct core_input in;
    struct core_result r, t;
    const struct core_note *n;

    core_input_init(&in);
    in.preset = core_preset_find("llama3-8b");
    in.gpus = 8;
    in.seq_len = 2048;
    in.flash_attention = CORE_FLAG_YES;
    in.checkpointing = CORE_CKPT_SELECTIVE;
    in.global_batch = 64;
    EVAL_OK(in, r);
    ck_assert_int_ge(r.fit.max_batch, 4);
    ck_assert_int_lt(r.fit.max_batch, 8);
    n = find_note(r.advice, r.advice_count, "batch_headroom");
    ck_assert_ptr_nonnull(n);
    ASSERT_I64(n->changes[0].int_value, 4);
    in.batch = n->changes[0].int_value;
    EVAL_OK(in, t); /* taken, it is accepted */

    in.batch = 1;
    in.pp = 2;
    in.virtual_stages = 2;
    EVAL_OK(in, r);
    ck_assert_int_ge(r.fit.max_batch, 4);
    ck_assert_int_lt(r.fit.max_batch, 8);
    n = find_note(r.advice, r.advice_count, "batch_headroom");
    ck_assert_ptr_nonnull(n);
    ASSERT_I64(n->changes[0].int_value, 4);

    in.pp = 1;
    in.virtual_stages = 1;
    in.global_batch = 0;
    EVAL_OK(in, r);
    n = find_note(r.advice, r.advice_count, "batch_headroom");
    ck_assert_ptr_nonnull(n);
    ASSERT_I64(n->changes[0].int_value, r.fit.max_batch);
}
END_TEST

/* The GPU counts /fit reports and advises are ones it then accepts. Llama 3 70B at T 4096 with
 * full recompute under megatron, a given global batch of 64: memory needs between 17 and 32 H100s
 * (20 by the device peak), but 64 / dp must be whole (tp = pp = cp = 1, b 1, so dp = G): the
 * divisors of 64 are the powers of two, and the smallest at or above min_gpus is 32. Generic needs
 * 16, which divides 64. Qwen3-30B-A3B (128 experts) with ep 16 fits a GPU's memory with far fewer
 * ranks, but Megatron-Core needs etp * ep * pp to divide G (parallel_state.py): 1 * 16 * 1 = 16,
 * and at tp 2 (etp defaults to tp) 2 * 16 = 32. */
START_TEST(gpu_counts_respect_the_schedule_and_the_experts_grid)
{
    struct core_input in;
    struct core_result r, t;
    const struct core_note *n;

    core_input_init(&in);
    in.preset = core_preset_find("llama3-70b");
    in.seq_len = 4096;
    in.flash_attention = CORE_FLAG_YES;
    in.checkpointing = CORE_CKPT_FULL;
    in.global_batch = 64;
    in.framework = CORE_FW_MEGATRON;
    EVAL_OK(in, r);
    ck_assert_int_gt(r.fit.min_gpus, 16);
    ck_assert_int_le(r.fit.min_gpus, 32);
    n = find_note(r.advice, r.advice_count, "shard_state");
    ck_assert_ptr_nonnull(n);
    ASSERT_I64(n->changes[0].int_value, 32);
    in.gpus = n->changes[0].int_value;
    EVAL_OK(in, t);
    ck_assert(t.fit.fits);

    in.gpus = 1;
    in.framework = CORE_FW_GENERIC;
    EVAL_OK(in, r);
    n = find_note(r.advice, r.advice_count, "shard_state");
    ck_assert_ptr_nonnull(n);
    ASSERT_I64(n->changes[0].int_value, 16);

    /* At micro-batch 4 and a global batch of 32, no G >= min_gpus (>= 16 for 70B's state)
     * splits it: 4 x 16 = 64 > 32. The advice then lowers the micro-batch too, to a b with b x G
     * dividing 32, and /fit of the advice fits. */
    in.batch = 4;
    in.global_batch = 32;
    EVAL_OK(in, r);
    n = find_note(r.advice, r.advice_count, "shard_state");
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(n->change_count, 2);
    ck_assert_str_eq(n->changes[1].input, "batch");
    ck_assert_int_lt(n->changes[1].int_value, 4);
    ck_assert_int_ge(n->changes[0].int_value, 16);
    ASSERT_I64(32 % (n->changes[1].int_value * n->changes[0].int_value), 0);
    in.gpus = n->changes[0].int_value;
    in.batch = n->changes[1].int_value;
    EVAL_OK(in, t);
    ck_assert(t.fit.fits);

    core_input_init(&in);
    in.preset = core_preset_find("qwen3-30b-a3b");
    in.seq_len = 4096;
    in.flash_attention = CORE_FLAG_YES;
    in.checkpointing = CORE_CKPT_FULL;
    in.framework = CORE_FW_MEGATRON;
    in.zero_stage = 1;
    in.ep = 16;
    in.gpus = 16;
    EVAL_OK(in, r);
    ASSERT_I64(r.fit.min_gpus, 16);
    ASSERT_I64(r.fit.min_gpus_state_only, 16);
    in.tp = 2;
    in.gpus = 32;
    EVAL_OK(in, r);
    ASSERT_I64(r.fit.min_gpus, 32);
}
END_TEST

static Suite *layout_suite(void)
{
    Suite *s = suite_create("core_layout");
    TCase *t = tcase_create("layout");

    tcase_add_test(t, context_parallel_halves_activations_and_widens_zero);
    tcase_add_test(t, context_parallel_scores_span_every_key);
    tcase_add_test(t, layout_contradictions_are_422);
    tcase_add_test(t, layout_422_names_the_input_that_fixes_it);
    tcase_add_test(t, global_batch_sets_steps_and_micro_batches);
    tcase_add_test(t, runtime_warns_when_the_layout_does_not_fit);
    tcase_add_test(t, serving_tp_rule_speaks_of_the_engine_too);
    tcase_add_test(t, batch_advice_keeps_a_given_global_batch);
    tcase_add_test(t, gpu_counts_respect_the_schedule_and_the_experts_grid);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_main_run(layout_suite());
}
