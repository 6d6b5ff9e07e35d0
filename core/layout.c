/*
 * layout.c - the experts' parallel layout and the pipeline split (docs/model.md, "MoE layout"
 * and "Pipeline split").
 *
 * MoE parallel folding (Megatron-Core, megatron/core/parallel_state.py,
 * initialize_model_parallel): the dense part of every layer runs on a tp x cp x dp x pp grid,
 * the experts on their own etp x ep x edp x pp grid over the same GPUs, so
 * edp = gpus / (etp ep pp) and ep may exceed the dense dp. The experts' gradients and
 * distributed-optimizer state are sharded over the edp ranks.
 *
 * The pipeline split places the L decoder layers on S = pp v (virtual) stages. Virtual stage g
 * sits on pipeline rank g mod pp as its chunk g div pp (Megatron's interleaved order,
 * transformer_block.py). Four rules, each a framework's:
 *   even        every stage L / S;
 *   first/last  decoder_first/last_pipeline_num_layers on the first/last rank, the rest evenly
 *               over the middle ranks (transformer_block.py, get_num_layers_to_build);
 *   accounted   the embedding and/or the loss counted as one layer each in an even split of
 *               L + e + l (account_for_embedding/loss_in_pipeline_split);
 *   balanced    torchtitan's generate_llm_fqn_per_model_part (distributed/pipeline_parallel.py):
 *               L + 2 units (embedding and output one each) over S stages, the remainder one
 *               each on the first stages; used for a non-Megatron framework when L does not
 *               divide evenly.
 * Every function is a closed form per stage; a rank sums its v chunks.
 */
#include <string.h>

#include "internal.h"

/* Routed-MoE layers among layers [0, n) of the architecture (core_arch_moe_layers on a prefix). */
/* ---------------------------------------------------------------------------------------------
 * Resolution
 * ------------------------------------------------------------------------------------------- */

/* The MTP layers' weights (Megatron-Core transformer/multi_token_prediction.py,
 * MultiTokenPredictionLayer): each is one more decoder layer of the model's last kind (the MoE
 * layer for DeepSeek-V3), two RMSNorms of d (enorm, hnorm), the eh_proj linear 2d -> d and a
 * final norm of d; the embedding and output layer are the main model's. Its routed experts are
 * expert-parallel like the others. Active adds the output layer again (each MTP depth runs the
 * shared output layer on every token). */
static void mtp_params(const struct core_resolved *r, int64_t *total, int64_t *active,
                       int64_t *experts)
{
    const struct core_arch *a = &r->shape.arch;
    struct core_arch more = *a;
    struct core_arch_counts c0, c1;
    int64_t d = a->hidden, extra = 2 * d * d + 3 * d;

    *total = *active = *experts = 0;
    more.layers = a->layers + 1;
    if (r->mtp_layers <= 0 || !core_arch_count(a, &c0) || !core_arch_count(&more, &c1))
        return;
    *total = r->mtp_layers * (c1.total - c0.total + extra);
    *active = r->mtp_layers * (c1.active - c0.active + extra + a->vocab * d);
    *experts = r->mtp_layers * (c1.experts - c0.experts);
}

/* The weights kept whole on every tp rank (core_arch_counts.tp_whole), the MTP layers' too;
 * a given N scales them as it scales every share of the architecture's counts (params.c). */
static int64_t tp_whole(const struct core_resolved *r)
{
    struct core_arch more = r->shape.arch;
    struct core_arch_counts c;

    more.layers += r->mtp_params > 0 ? r->mtp_layers : 0;
    if (!core_arch_count(&more, &c) || c.tp_whole <= 0 || c.total <= 0)
        return 0;
    if (c.total == r->params)
        return c.tp_whole;
    return (int64_t)((double)c.tp_whole * ((double)r->params / (double)c.total));
}

void core_layout_resolve(const struct core_input *in, bool shaped, struct core_resolved *r)
{
    int64_t ways, total, active, experts;

    r->etp = in->etp; /* 0 = tp, read through core_etp(): the planner varies tp */
    /* torchtitan's experts have no tensor parallelism of their own (ETP deprecated,
     * pytorch/torchtitan #3167): ep borrows from dp_shard x cp x tp (parallel_dims.py). */
    if (r->etp == 0 && r->framework == CORE_FW_TORCHTITAN && shaped && r->shape.arch.experts > 0)
        r->etp = 1;
    r->etp_used = core_etp(r);
    memcpy(r->layout_text, in->pipeline_layout, CORE_TEXT_MAX);
    r->layout_text[CORE_TEXT_MAX - 1] = '\0';
    ways = core_etp(r) * r->ep * r->pp; /* each <= 1e6, ep <= 1e6: may reach 1e18, no overflow */
    r->edp = r->gpus / ways > 0 ? r->gpus / ways : 1;
    r->first_stage_layers = in->first_stage_layers;
    r->last_stage_layers = in->last_stage_layers;
    r->embedding_in_split = in->embedding_in_split;
    r->loss_in_split = in->loss_in_split;
    r->mtp_layers = in->mtp_layers;
    r->mtp_params = 0;
    r->tp_whole_params = 0;
    if (in->pipeline_layout[0] != '\0' &&
        core_layout_parse(in->pipeline_layout, strnlen(in->pipeline_layout, CORE_TEXT_MAX),
                          &r->layout) == NULL) {
        r->split = CORE_SPLIT_LAYOUT;
        /* The layout sets the virtual stages (arguments.py: stages / pp) and the MTP depth. */
        if (r->layout.stages % r->pp == 0 && in->virtual_stages == 1)
            r->virtual_stages = r->layout.stages / r->pp;
        if (in->mtp_layers == 0)
            r->mtp_layers = r->layout.mtp;
    } else if (in->first_stage_layers > 0 || in->last_stage_layers > 0)
        r->split = CORE_SPLIT_FIRST_LAST;
    else if (in->embedding_in_split || in->loss_in_split)
        r->split = CORE_SPLIT_ACCOUNTED;
    else if (shaped && r->framework != CORE_FW_MEGATRON &&
             r->shape.arch.layers % (r->pp * r->virtual_stages) != 0)
        r->split = CORE_SPLIT_BALANCED;
    else
        r->split = CORE_SPLIT_EVEN;
    if (!shaped)
        return;
    mtp_params(r, &total, &active, &experts);
    if (in->params == 0 && total > 0 && r->params <= INT64_MAX - total) {
        r->mtp_params = total;
        r->params += total;
        r->active_params += active;
        r->expert_params += experts;
    }
    r->tp_whole_params = tp_whole(r);
    r->stage_layers = core_layout_heaviest(r);
}

/* ---------------------------------------------------------------------------------------------
 * Stages
 * ------------------------------------------------------------------------------------------- */

/* Decoder layers on virtual stage g of S = pp v (valid layouts only; 0 otherwise). */
int64_t core_stage_decoders(const struct core_resolved *r, int64_t g)
{
    int64_t L = r->shape.arch.layers, pp = r->pp, v = r->virtual_stages, S = pp * v, rank = g % pp;
    int64_t f = r->first_stage_layers, l = r->last_stage_layers, mid = pp, rest = L;

    switch (r->split) {
    case CORE_SPLIT_FIRST_LAST:
        if (rank == 0 && f > 0)
            return f / v;
        if (rank == pp - 1 && l > 0)
            return l / v;
        mid -= (f > 0) + (l > 0);
        rest -= f + l;
        return mid > 0 ? rest / mid / v : 0;
    case CORE_SPLIT_ACCOUNTED: {
        int64_t units = L + r->embedding_in_split + r->loss_in_split;
        return units / S - (g == 0 && r->embedding_in_split) - (g == S - 1 && r->loss_in_split);
    }
    case CORE_SPLIT_BALANCED: {
        int64_t units = L + 2, n = units / S + (g < units % S);
        return S == 1 ? L : n - (g == 0) - (g == S - 1);
    }
    case CORE_SPLIT_LAYOUT:
        return g < r->layout.stages ? r->layout.layers[g] : 0;
    case CORE_SPLIT_EVEN:
        break;
    }
    return L / S;
}

/* Layers before virtual stage g (the stages run in g order), in closed form per rule. */
static int64_t stage_offset(const struct core_resolved *r, int64_t g)
{
    int64_t L = r->shape.arch.layers, pp = r->pp, S = pp * r->virtual_stages;
    int64_t chunk = g / pp, rank = g % pp, round = 0, before = 0;

    switch (r->split) {
    case CORE_SPLIT_FIRST_LAST: {
        /* One round of chunks: the first rank's, pp - 2 middle ones, the last rank's. */
        int64_t n0 = core_stage_decoders(r, 0), nl = core_stage_decoders(r, pp - 1);
        int64_t nm = pp > 2 ? core_stage_decoders(r, 1) : 0;
        round = n0 + nl + (pp - 2) * nm;
        before = rank == 0 ? 0 : n0 + (rank - 1) * nm;
        return chunk * round + before;
    }
    case CORE_SPLIT_ACCOUNTED: {
        int64_t units = L + r->embedding_in_split + r->loss_in_split;
        return g * (units / S) - (g > 0 && r->embedding_in_split);
    }
    case CORE_SPLIT_BALANCED: {
        int64_t units = L + 2, extra = units % S;
        return S == 1 ? 0 : g * (units / S) + (g < extra ? g : extra) - (g > 0);
    }
    case CORE_SPLIT_LAYOUT:
        for (int64_t k = 0; k < g && k < r->layout.stages; k++)
            before += r->layout.layers[k];
        return before;
    case CORE_SPLIT_EVEN:
        break;
    }
    return g * (L / S);
}

void core_chunk_layers(const struct core_resolved *r, int64_t g, int64_t *layers, int64_t *moe)
{
    int64_t off = stage_offset(r, g);

    *layers = core_stage_decoders(r, g);
    *moe = core_arch_moe_layers_below(&r->shape.arch, off + *layers) -
           core_arch_moe_layers_below(&r->shape.arch, off);
}

void core_rank_layers(const struct core_resolved *r, int64_t rank, int64_t *layers, int64_t *moe)
{
    const struct core_arch *a = &r->shape.arch;

    *layers = *moe = 0;
    for (int64_t c = 0; c < r->virtual_stages; c++) {
        int64_t g = c * r->pp + rank, off = stage_offset(r, g), n = core_stage_decoders(r, g);
        *layers += n;
        *moe += core_arch_moe_layers_below(a, off + n) - core_arch_moe_layers_below(a, off);
    }
}

/* A split worth walking: at most L + 2 stages (every valid split of every rule). */
static bool walkable(const struct core_resolved *r)
{
    if (r->split == CORE_SPLIT_LAYOUT)
        return r->pp > 1 && r->pp * r->virtual_stages == r->layout.stages;
    return r->pp > 1 && r->pp * r->virtual_stages <= r->shape.arch.layers + 2;
}

int64_t core_layout_heaviest(const struct core_resolved *r)
{
    int64_t best = 0, layers, moe;

    if (!walkable(r))
        return r->shape.arch.layers / (r->pp > 0 ? r->pp : 1) + r->mtp_layers;
    for (int64_t i = 0; i < r->pp; i++) {
        core_rank_layers(r, i, &layers, &moe);
        if (i == r->pp - 1)
            layers += r->mtp_layers;
        best = layers > best ? layers : best;
    }
    return best;
}

int64_t core_layout_last(const struct core_resolved *r)
{
    int64_t layers, moe;

    if (!walkable(r))
        return r->shape.arch.layers / (r->pp > 0 ? r->pp : 1) + r->mtp_layers;
    core_rank_layers(r, r->pp - 1, &layers, &moe);
    return layers + r->mtp_layers;
}

/* ---------------------------------------------------------------------------------------------
 * Rules: each combination the framework refuses is a 422 naming the rule's input.
 * ------------------------------------------------------------------------------------------- */

/* Megatron-Core's uneven split (transformer_config.py, __post_init__, "Uneven PP"). */
static void check_first_last(const struct core_resolved *r, struct core_problems *p)
{
    int64_t L = r->shape.arch.layers, v = r->virtual_stages, f = r->first_stage_layers;
    int64_t l = r->last_stage_layers, mid = r->pp - (f > 0) - (l > 0), rest = L - f - l;

    if (r->embedding_in_split || r->loss_in_split)
        core_problem_add(p, "account_for_embedding_in_pipeline_split",
                         "first/last stage layer counts cannot be combined with the embedding or "
                         "loss counted in the split");
    if (f > 0 && f % v != 0)
        core_problem_add(p, "decoder_first_pipeline_num_layers",
                         "%lld first-stage layers are not divisible by virtual_stages = %lld",
                         (long long)f, (long long)v);
    if (l > 0 && l % v != 0)
        core_problem_add(p, "decoder_last_pipeline_num_layers",
                         "%lld last-stage layers are not divisible by virtual_stages = %lld",
                         (long long)l, (long long)v);
    if (rest < 0 || (rest > 0) != (mid > 0))
        core_problem_add(p, "pp", "%lld middle layers remain for %lld middle stages",
                         (long long)rest, (long long)mid);
    else if (mid > 0 && (rest % mid != 0 || (rest / mid) % v != 0))
        core_problem_add(p, "pp",
                         "the %lld middle layers do not split into %lld middle ranks of a "
                         "multiple of virtual_stages = %lld",
                         (long long)rest, (long long)mid, (long long)v);
}

/* Even, or the embedding/loss counted as layers (Megatron: arguments.py and
 * transformer_block.py assert units % pp == 0 and (units / pp) % v == 0). */
static void check_even(const struct core_resolved *r, struct core_problems *p)
{
    int64_t units = r->shape.arch.layers + r->embedding_in_split + r->loss_in_split;
    int64_t pp = r->pp, v = r->virtual_stages;
    const char *what = units == r->shape.arch.layers ? "layers" : "layers (embedding/loss counted)";

    if (units % pp != 0 && !r->embedding_in_split && !r->loss_in_split && (units + 2) % pp == 0 &&
        ((units + 2) / pp) % v == 0)
        core_problem_add(p, "pp",
                         "pp = %lld does not divide the %lld layers (Megatron-LM); counting "
                         "embedding and loss (account_for_embedding_in_pipeline_split, "
                         "account_for_loss_in_pipeline_split) gives %lld, which it does",
                         (long long)pp, (long long)units, (long long)(units + 2));
    else if (units % pp != 0)
        core_problem_add(p, "pp",
                         "pp = %lld does not divide the %lld %s; uneven stages: "
                         "decoder_first_pipeline_num_layers, decoder_last_pipeline_num_layers or "
                         "pipeline_model_parallel_layout",
                         (long long)pp, (long long)units, what);
    else if ((units / pp) % v != 0)
        core_problem_add(p, "virtual_stages",
                         "virtual_stages = %lld does not divide the %lld %s per pipeline rank",
                         (long long)v, (long long)(units / pp), what);
    else if (r->split == CORE_SPLIT_ACCOUNTED && units / (pp * v) < 1 + (pp * v == 1))
        core_problem_add(p, "pp", "the embedding and loss leave a stage without a layer");
}

/* torchtitan's split needs every stage to hold at least one layer and the embedding and output
 * no more than a stage's share (pipeline_parallel.py asserts). */
static void check_balanced(const struct core_resolved *r, struct core_problems *p)
{
    int64_t units = r->shape.arch.layers + 2, S = r->pp * r->virtual_stages;

    if (S > 1 && units / S < 2)
        core_problem_add(p, "virtual_stages",
                         "pp*virtual_stages = %lld stages leave a stage without a layer (%lld "
                         "layers + embedding + output)",
                         (long long)S, (long long)r->shape.arch.layers);
}

/* Megatron-Core's checks of a flexible layout (arguments.py; transformer_config.py;
 * pipeline_parallel_layer_layout.py, validate_layer_layout). */
static void check_layout(const struct core_input *in, const struct core_resolved *r,
                         struct core_problems *p)
{
    const struct core_layout *l = &r->layout;
    const char *f = "pipeline_model_parallel_layout";

    if (in->first_stage_layers > 0 || in->last_stage_layers > 0 || r->embedding_in_split ||
        r->loss_in_split)
        core_problem_add(p, f,
                         "cannot be set with the first/last stage layer counts or the "
                         "embedding/loss counted in the split");
    if (l->stages % r->pp != 0)
        core_problem_add(p, f, "%d stages are not divisible by pp = %lld", l->stages,
                         (long long)r->pp);
    else if (in->virtual_stages > 1 && in->virtual_stages != l->stages / r->pp)
        core_problem_add(p, "virtual_stages",
                         "virtual_stages = %lld conflicts with the layout's %d",
                         (long long)in->virtual_stages, l->stages / (int)r->pp);
    if (l->embeddings != 1 || l->embedding != 0 || l->losses != 1 || l->loss != l->stages - 1)
        core_problem_add(p, f,
                         "the embedding E must open the first stage and the loss L close the "
                         "last, once each");
    if (l->decoders != r->shape.arch.layers)
        core_problem_add(p, f, "%d decoder layers t, the model has %lld", l->decoders,
                         (long long)r->shape.arch.layers);
    if (l->mtp != r->mtp_layers)
        core_problem_add(p, f, "%d MTP layers m, mtp_layers is %lld", l->mtp,
                         (long long)r->mtp_layers);
    if (l->mtp_before_decoder || l->mtp_split ||
        (l->mtp_stage >= 0 && l->stages % r->pp == 0 &&
         l->mtp_stage / r->pp != l->stages / r->pp - 1))
        core_problem_add(p, f,
                         "the MTP layers must follow every decoder layer, together, in the "
                         "last virtual stage of their rank");
}

static void check_pipeline(const struct core_resolved *r, struct core_problems *p)
{
    if (r->virtual_stages > 1 && r->pp == 1) {
        core_problem_add(p, "virtual_stages", "interleaving needs pipeline parallelism (pp > 1)");
        return;
    }
    if (r->split == CORE_SPLIT_LAYOUT)
        return; /* check_layout */
    if (r->split != CORE_SPLIT_EVEN && r->pp == 1)
        core_problem_add(p, "pp", "an uneven pipeline split needs pp > 1");
    else if (r->split == CORE_SPLIT_FIRST_LAST)
        check_first_last(r, p);
    else if (r->split == CORE_SPLIT_BALANCED)
        check_balanced(r, p);
    else if (r->split == CORE_SPLIT_ACCOUNTED || r->framework == CORE_FW_MEGATRON ||
             r->virtual_stages > 1)
        check_even(r, p);
}

/* Megatron-Core's expert layout: experts divisible by ep (arguments.py), the world divisible by
 * etp x ep x pp (parallel_state.py, "world_size is not divisible by
 * expert_tensor_model_pipeline_parallel size"). */
static void check_experts(const struct core_resolved *r, struct core_problems *p)
{
    int64_t experts = r->shape.arch.experts, etp = core_etp(r), ways = etp * r->ep * r->pp;

    if (r->ep > 1 && experts == 0)
        core_problem_add(p, "ep", "ep = %lld needs a mixture-of-experts model (experts > 0)",
                         (long long)r->ep);
    else if (experts > 0 && experts % r->ep != 0)
        core_problem_add(p, "ep", "ep = %lld does not divide the %lld experts", (long long)r->ep,
                         (long long)experts);
    if (r->etp > 0 && experts == 0 && r->etp != r->tp)
        core_problem_add(p, "etp", "etp = %lld needs a mixture-of-experts model",
                         (long long)r->etp);
    if (r->framework == CORE_FW_TORCHTITAN && experts > 0) {
        /* torchtitan/distributed/parallel_dims.py, ParallelDims._validate: "expert_parallel_degree
         * must divide dp_shard * cp * tp"; no expert tensor parallelism. */
        if (etp != 1)
            core_problem_add(p, "etp",
                             "torchtitan has no expert tensor parallelism: etp must be 1");
        if ((r->dp * r->cp * r->tp) % r->ep != 0)
            core_problem_add(p, "ep", "ep = %lld does not divide dp*cp*tp = %lld (torchtitan)",
                             (long long)r->ep, (long long)(r->dp * r->cp * r->tp));
    }
    if (r->ep > 1 && r->etp == 0 && etp > 1 && r->gpus % ways != 0 &&
        r->gpus % (r->ep * r->pp) == 0) /* the default etp = tp is what breaks it */
        core_problem_add(p, "ep",
                         "gpus = %lld is not divisible by etp*ep*pp = %lld (the experts' grid; "
                         "etp defaults to tp = %lld, and etp = 1 divides it)",
                         (long long)r->gpus, (long long)ways, (long long)etp);
    else if ((r->ep > 1 || r->etp > 0) && r->gpus % ways != 0) /* else the dense grid's check */
        core_problem_add(p, r->etp > 0 ? "etp" : "ep",
                         "gpus = %lld is not divisible by etp*ep*pp = %lld (the experts' grid)",
                         (long long)r->gpus, (long long)ways);
}

bool core_layout_experts_ok(const struct core_resolved *r)
{
    struct core_problems p = {0};

    check_experts(r, &p);
    return p.count == 0;
}

void core_layout_check(const struct core_input *in, const struct core_resolved *r, bool shaped,
                       struct core_problems *p)
{
    if (in->pipeline_layout[0] != '\0' && r->split != CORE_SPLIT_LAYOUT)
        core_problem_add(p, "pipeline_model_parallel_layout", "not a valid layout");
    if (shaped && r->split == CORE_SPLIT_LAYOUT)
        check_layout(in, r, p);
    if (!shaped) {
        if (r->virtual_stages > 1 && r->pp == 1)
            core_problem_add(p, "virtual_stages",
                             "interleaving needs pipeline parallelism (pp > 1)");
        return;
    }
    check_pipeline(r, p);
    check_experts(r, p);
}

/* Layers' worth of activations the ledger holds: Korthikanti's 1F1B keeps pp - i micro-batches
 * in flight on rank i, so an even split holds L on every rank; an uneven one the most
 * (pp - i) x layers_i over the ranks; the MTP layers sit on the last rank (one in flight). */
void core_layout_activation_layers(const struct core_resolved *r, int64_t *layers, int64_t *moe)
{
    const struct core_arch *a = &r->shape.arch;
    int64_t n, m, mtp_moe = r->mtp_layers > 0 && core_arch_moe_layers(a) > 0 ? r->mtp_layers : 0;

    *layers = a->layers;
    *moe = core_arch_moe_layers(a);
    if (r->split == CORE_SPLIT_EVEN || !walkable(r)) {
        *layers += r->mtp_layers;
        *moe += mtp_moe;
        return;
    }
    *layers = *moe = 0;
    for (int64_t i = 0; i < r->pp; i++) {
        core_rank_layers(r, i, &n, &m);
        if (i == r->pp - 1)
            n += r->mtp_layers, m += mtp_moe;
        if ((r->pp - i) * n > *layers)
            *layers = (r->pp - i) * n, *moe = (r->pp - i) * m;
    }
}

/* Parameters of pipeline rank `rank`'s decoder layers, the routed experts apart: differences of
 * the architecture's counts over layer prefixes (the embedding, output and final norm cancel).
 * A rank of an unwalkable split (rejected later) gets the even share. */
int64_t core_tp_whole_params(const struct core_resolved *r)
{
    return r->tp > 1 ? r->tp_whole_params : 0;
}

bool core_rank_params(const struct core_resolved *r, int64_t rank, double *dense, double *experts,
                      double *whole)
{
    const struct core_arch *a = &r->shape.arch;
    struct core_arch pre = *a;
    struct core_arch_counts lo, hi, all;
    double unused;

    whole = whole != NULL ? whole : &unused;
    *dense = *experts = *whole = 0;
    if (!core_arch_count(a, &all))
        return false;
    if (!walkable(r)) {
        double pp = r->pp > 0 ? (double)r->pp : 1;
        *dense = (double)(all.non_experts - all.embedding - all.output) / pp;
        *experts = (double)all.experts / pp;
        *whole = (double)all.tp_whole / pp;
        return true;
    }
    for (int64_t c = 0; c < r->virtual_stages; c++) {
        int64_t g = c * r->pp + rank, off = stage_offset(r, g), n = core_stage_decoders(r, g);
        pre.layers = off;
        if (off == 0) { /* no layer below: what remains is the embedding, output and final norm */
            lo.non_experts = all.embedding + all.output + a->hidden * (a->norm_bias ? 2 : 1);
            lo.experts = lo.tp_whole = 0;
        } else if (!core_arch_count(&pre, &lo)) {
            return false;
        }
        if (n == 0)
            continue;
        pre.layers = off + n;
        if (!core_arch_count(&pre, &hi))
            return false;
        *dense += (double)(hi.non_experts - lo.non_experts);
        *experts += (double)(hi.experts - lo.experts);
        *whole += (double)(hi.tp_whole - lo.tp_whole);
    }
    return true;
}

/* ---------------------------------------------------------------------------------------------
 * Megatron-Core's flexible layout (transformer/pipeline_parallel_layer_layout.py,
 * parse_str_to_list): commas are cosmetic, "(...)*n" then "x*n" repeat, "|" ends a stage;
 * E embedding, t decoder layer, m MTP layer, L loss. Expanded here into bounded buffers.
 * ------------------------------------------------------------------------------------------- */

#define LAYOUT_EXPANDED_MAX 16384

/* Append n copies of s[0..len) to out (*at of cap); false when it would not fit. */
static bool repeat(char *out, size_t *at, size_t cap, const char *s, size_t len, long n)
{
    for (long k = 0; k < n; k++) {
        if (*at + len >= cap)
            return false;
        for (size_t j = 0; j < len; j++)
            out[(*at)++] = s[j];
    }
    return true;
}

/* "*digits" at s[*i]: the count (at most 100000), *i past it; -1 when absent or too large. */
static long repeat_count(const char *s, size_t len, size_t *i)
{
    long n = 0;
    size_t j = *i + 1;

    if (*i >= len || s[*i] != '*' || j >= len || s[j] < '0' || s[j] > '9')
        return -1;
    for (; j < len && s[j] >= '0' && s[j] <= '9'; j++) {
        n = n * 10 + (s[j] - '0');
        if (n > 100000)
            return -1;
    }
    *i = j;
    return n;
}

/* Pass 1: drop commas and blanks; unroll "(...)*n" (no nesting, as Megatron's pattern). */
static const char *unroll_groups(const char *s, size_t len, char *out, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] == ',' || s[i] == ' ') {
            i++;
        } else if (s[i] == '(') {
            size_t close = i + 1, start = i + 1;
            char group[CORE_TEXT_MAX];
            size_t g = 0;
            long count;
            while (close < len && s[close] != ')')
                close++;
            if (close >= len || close == start)
                return "a '(' without its ')' or an empty group";
            for (size_t j = start; j < close; j++)
                if (s[j] != ',' && s[j] != ' ')
                    group[g++] = s[j];
            i = close + 1;
            count = repeat_count(s, len, &i);
            if (count < 0)
                return "a group (...) must be followed by *n (n <= 100000)";
            if (!repeat(out, n, LAYOUT_EXPANDED_MAX, group, g, count))
                return "the layout expands to more than 16384 characters";
        } else {
            if (*n + 1 >= LAYOUT_EXPANDED_MAX)
                return "the layout expands to more than 16384 characters";
            out[(*n)++] = s[i++];
        }
    }
    return NULL;
}

/* One character of the expanded layout into the stage being read. */
static const char *layout_char(char c, struct core_layout *out)
{
    int g = out->stages - 1;

    switch (c) {
    case '|':
        if (out->stages >= CORE_LAYOUT_STAGES_MAX)
            return "more than 512 stages";
        out->layers[out->stages++] = 0;
        return NULL;
    case 't':
        if (out->layers[g] == 255)
            return "more than 255 layers in one stage";
        out->layers[g]++;
        out->decoders++;
        out->mtp_before_decoder |= out->mtp > 0;
        return NULL;
    case 'm':
        out->mtp_split |= out->mtp_stage >= 0 && out->mtp_stage != g;
        out->mtp_stage = g;
        out->mtp++;
        return NULL;
    case 'E':
        out->embedding = out->embeddings++ == 0 ? g : out->embedding;
        return NULL;
    case 'L':
        out->loss = out->losses++ == 0 ? g : out->loss;
        return NULL;
    default:
        return "unknown layer character: use E, t, m, L, |, (...)*n and x*n";
    }
}

const char *core_layout_parse(const char *s, size_t len, struct core_layout *out)
{
    char a[LAYOUT_EXPANDED_MAX];
    size_t n = 0;
    const char *why;

    *out = (struct core_layout){.stages = 1, .embedding = -1, .loss = -1, .mtp_stage = -1};
    out->layers[0] = 0;
    if (len >= CORE_TEXT_MAX)
        return "longer than 255 characters";
    why = unroll_groups(s, len, a, &n);
    for (size_t i = 0; why == NULL && i < n; i++) {
        size_t j = i + 1;
        long count = repeat_count(a, n, &j);
        if (count < 0) {
            why = layout_char(a[i], out);
            continue;
        }
        for (long k = 0; why == NULL && k < count; k++)
            why = layout_char(a[i], out);
        i = j - 1;
    }
    return why;
}

const char *core_layout_text_check(const char *s, size_t len)
{
    struct core_layout l;

    return core_layout_parse(s, len, &l);
}
