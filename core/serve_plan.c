/*
 * serve_plan.c - the serving planner (serve_plan.h; docs/serving.md, "Planner").
 *
 * For each GPU type x tp (powers of two up to tp_max and the GPU's scale-up domain) x weight
 * quantization x KV dtype, one replica is sized by core_serve() - the configurations the engine
 * refuses (a quantization the GPU or engine cannot run, tp not dividing the heads) or that do not
 * start are skipped and counted - and then timed in the continuous-batching steady state:
 *
 *  1. c_slo: the largest concurrency per replica (<= what its KV pool holds) whose TTFT and TPOT
 *     meet the SLOs, by bisection (both grow with the concurrency, serve_time.h);
 *  2. replicas: concurrency load N: ceil(N / c_slo); request-rate load L: ceil(L / rate(c_slo)),
 *     rate(c) = c / (tpot(c) output_len) the replica's requests per second at c;
 *  3. the concurrency each replica then runs at: ceil(N / replicas), or the smallest c whose rate
 *     carries L / replicas (bisection again).
 *
 * The plan is that replica count at that concurrency; the cheapest per configuration is the one
 * with the fewest replicas. Ranking and the Pareto front as the training planner (plan_rank.c):
 * cost per hour, ties by TPOT.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "serve_internal.h"
#include "serve_plan.h"

static const int64_t tp_choices[] = {1, 2, 4, 8};

void core_serve_plan_input_init(struct core_serve_plan_input *in)
{
    memset(in, 0, sizeof *in);
    core_serve_input_init(&in->base);
    for (size_t i = 0; i < core_serve_plan_input_count; i++)
        core_input_store_default(&core_serve_plan_inputs[i], in);
}

/* The search's running state. */
struct search {
    const struct core_serve_plan_input *in;
    struct core_serve_plan *plans, *pareto;
    int plans_max, pareto_max;
    struct core_serve_plan_summary *out;
    bool priced;
    /* For the reasons: the best figures any fitting configuration reached at concurrency 1. */
    double best_tpot, best_ttft, best_rate;
    int64_t refused;             /* configurations core_serve() refused (422) */
    struct core_problem refusal; /* the first refusal's problem */
    /* Configurations whose weights and pool hold a request but whose CUDA graphs do not fit the
     * 1 - gpu_memory_utilization headroom (vLLM captures them after the pool), and the highest
     * utilization /inference advises for one of them (0: none), and whether eager serves one. */
    int64_t headroom_only;
    double headroom_u;
    bool headroom_eager;
};

static void reason(struct core_serve_plan_summary *out, const char *field, const char *fmt, ...)
    CORE_PRINTF(3, 4);

static void reason(struct core_serve_plan_summary *out, const char *field, const char *fmt, ...)
{
    struct core_serve_plan_reason *r;
    va_list ap;

    if (out->reason_count >= CORE_SPLAN_REASONS)
        return;
    r = &out->reasons[out->reason_count++];
    r->field = field;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/* One configuration's replica and its timing at concurrency c. */
struct config {
    struct core_serve_input serve;
    struct core_serve_result res;
    int64_t cmax;
};

/* The replica's time at concurrency conc: what core_serve() would resolve with concurrency
 * conc (its sizing does not depend on the concurrency), timed as /inference times it. */
static void time_at(struct search *s, struct config *c, int64_t conc, struct core_serve_time *t)
{
    c->res.resolved.concurrency = conc;
    core_serve_timing(&c->res, t);
    s->out->timed++;
}

static bool meets_slo(const struct core_serve_plan_input *in, const struct core_serve_time *t)
{
    return (in->ttft_slo_seconds <= 0 || t->ttft_seconds <= in->ttft_slo_seconds) &&
           (in->tpot_slo_seconds <= 0 || t->tpot_seconds <= in->tpot_slo_seconds);
}

/* The largest c in [1, cmax] meeting the SLOs, or 0 (monotone: TTFT and TPOT grow with c). */
static int64_t largest_meeting_slo(struct search *s, struct config *c)
{
    struct core_serve_time t;
    int64_t lo = 1, hi = c->cmax;

    time_at(s, c, 1, &t);
    if (t.tpot_seconds < s->best_tpot)
        s->best_tpot = t.tpot_seconds;
    if (t.ttft_seconds < s->best_ttft)
        s->best_ttft = t.ttft_seconds;
    if (!meets_slo(s->in, &t))
        return 0;
    time_at(s, c, hi, &t);
    if (meets_slo(s->in, &t))
        return hi;
    while (hi - lo > 1) { /* lo meets, hi does not */
        int64_t mid = lo + (hi - lo) / 2;
        time_at(s, c, mid, &t);
        if (meets_slo(s->in, &t))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static double rate_of(const struct core_serve_time *t)
{
    return t->requests_per_second;
}

/* The smallest c in [1, hi] whose rate carries `need` requests per second (rate(hi) does). */
static int64_t smallest_carrying(struct search *s, struct config *c, int64_t hi, double need)
{
    struct core_serve_time t;
    int64_t lo = 0; /* lo does not carry (0 carries nothing), hi does */

    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        time_at(s, c, mid, &t);
        if (rate_of(&t) >= need)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Replicas and per-replica concurrency that carry the load under the SLOs; false if none do
 * within replicas_max. */
static bool size_load(struct search *s, struct config *c, int64_t *replicas, int64_t *conc)
{
    const struct core_serve_plan_input *in = s->in;
    int64_t cslo = largest_meeting_slo(s, c), r;
    struct core_serve_time t;

    if (cslo == 0)
        return false;
    if (in->concurrency > 0) {
        r = (in->concurrency + cslo - 1) / cslo;
        *conc = (in->concurrency + r - 1) / r;
    } else {
        time_at(s, c, cslo, &t);
        if (rate_of(&t) > s->best_rate)
            s->best_rate = rate_of(&t);
        double need = ceil(in->requests_per_second / rate_of(&t) - 1e-9);
        if (!(need <= (double)in->replicas_max))
            return false;
        r = need < 1 ? 1 : (int64_t)need;
        *conc = smallest_carrying(s, c, cslo, in->requests_per_second / (double)r);
    }
    *replicas = r;
    return r <= in->replicas_max;
}

/* a is better than b: cheaper (or fewer GPUs without prices), then faster per token. */
static bool better(const struct search *s, const struct core_serve_plan *a,
                   const struct core_serve_plan *b)
{
    double ca = s->priced ? a->usd_per_hour : (double)a->gpus;
    double cb = s->priced ? b->usd_per_hour : (double)b->gpus;

    if (ca != cb)
        return ca < cb;
    return a->time.tpot_seconds < b->time.tpot_seconds;
}

static void rank(struct search *s, const struct core_serve_plan *p)
{
    int n = s->out->plan_count, i;

    if (n == s->plans_max && (n == 0 || !better(s, p, &s->plans[n - 1])))
        return;
    i = n < s->plans_max ? n : n - 1;
    while (i > 0 && better(s, p, &s->plans[i - 1])) {
        s->plans[i] = s->plans[i - 1];
        i--;
    }
    s->plans[i] = *p;
    if (n < s->plans_max)
        s->out->plan_count++;
}

static bool dominates(const struct search *s, const struct core_serve_plan *a,
                      const struct core_serve_plan *b)
{
    double ca = s->priced ? a->usd_per_hour : (double)a->gpus;
    double cb = s->priced ? b->usd_per_hour : (double)b->gpus;

    return ca <= cb && a->time.tpot_seconds <= b->time.tpot_seconds &&
           (ca < cb || a->time.tpot_seconds < b->time.tpot_seconds);
}

/* Keep the front of (cost, TPOT) sorted by cost. */
static void front(struct search *s, const struct core_serve_plan *p)
{
    int n = s->out->pareto_count, k = 0, at;

    for (int i = 0; i < n; i++)
        if (dominates(s, &s->pareto[i], p) ||
            (!better(s, p, &s->pareto[i]) && !better(s, &s->pareto[i], p)))
            return;
    for (int i = 0; i < n; i++)
        if (!dominates(s, p, &s->pareto[i]))
            s->pareto[k++] = s->pareto[i];
    n = k;
    if (n == s->pareto_max)
        return; /* full of points no worse than this one: keep them */
    at = n;
    while (at > 0 && better(s, p, &s->pareto[at - 1])) {
        s->pareto[at] = s->pareto[at - 1];
        at--;
    }
    s->pareto[at] = *p;
    s->out->pareto_count = n + 1;
}

static double price_of(const struct core_serve_plan_input *in, int gpu)
{
    return gpu >= 0 && gpu < CORE_PLAN_GPU_MAX ? in->usd_per_gpu_hour[gpu] : -1.0;
}

/* The first refusal, in the request's own terms: the planner sets max_model_len to
 * input_len + output_len when it is not given, so a length beyond the model's positions is the
 * workload's input_len (docs/serving.md, "Planner"). */
static void note_refusal(struct search *s, const struct core_problem *p)
{
    s->refusal = *p;
    if (s->in->base.max_model_len == 0 && p->field != NULL &&
        strcmp(p->field, "max_model_len") == 0) {
        s->refusal.field = "input_len";
        snprintf(s->refusal.message, sizeof s->refusal.message,
                 "input_len + output_len = %lld is longer than the model allows (%.100s)",
                 (long long)(s->in->base.input_len + s->in->base.output_len), p->message);
    }
}

/* A replica that holds the weights and a request and fails only on vLLM's CUDA-graph headroom
 * (serve_advice.c's cuda_graphs_exceed_headroom): count it, with /inference's own advice. */
static void note_headroom(struct search *s, const struct core_serve_result *r)
{
    const struct core_serve_resolved *w = &r->resolved;

    if ((w->engine != CORE_ENGINE_VLLM && w->engine != CORE_ENGINE_VLLM_V0) ||
        w->kv_cache_memory > 0 || /* a given pool can overflow by itself */
        r->per_gpu.cuda_graphs <= 0 || !r->kv.max_model_len_fits || r->kv.available <= 0 ||
        core_serve_max_concurrency(r, s->in->base.input_len, s->in->base.output_len) < 1)
        return;
    s->headroom_only++;
    for (int i = 0; i < r->advice_count; i++) {
        const struct core_note *n = &r->advice[i];

        if (strcmp(n->code, "lower_gpu_memory_utilization") == 0 &&
            n->changes[0].real_value > s->headroom_u)
            s->headroom_u = n->changes[0].real_value;
        if (strcmp(n->code, "enforce_eager") == 0)
            s->headroom_eager = true;
    }
}

/* Size, time and rank one configuration. */
static void try_config(struct search *s, int gpu, int64_t tp, enum core_quant q,
                       enum core_kv_dtype kv)
{
    struct config c; /* ~10 KB: the result carries its notes */
    struct core_problems problems = {0};
    struct core_serve_plan p;

    memset(&p, 0, sizeof p);
    p.gpu = gpu;
    p.tp = tp;
    p.quantization = q;
    p.kv_cache_dtype = kv;
    p.usd_per_gpu_hour = price_of(s->in, gpu);
    if (s->priced && p.usd_per_gpu_hour < 0)
        return;
    core_serve_plan_request(s->in, &p, &c.serve);
    s->out->evaluated++;
    if (core_serve(&c.serve, &c.res, &problems) != CORE_OK) {
        if (s->refused++ == 0 && problems.count > 0)
            note_refusal(s, &problems.items[0]);
        return;
    }
    if (c.res.fits &&
        s->in->base.input_len + s->in->base.output_len > c.res.resolved.max_model_len) {
        if (s->refused++ == 0) { /* the engine refuses every request of this workload */
            s->refusal.field = "input_len";
            snprintf(s->refusal.message, sizeof s->refusal.message,
                     "input_len + output_len = %lld exceeds max_model_len %lld",
                     (long long)(s->in->base.input_len + s->in->base.output_len),
                     (long long)c.res.resolved.max_model_len);
        }
        return;
    }
    if (!c.res.fits) {
        note_headroom(s, &c.res);
        return;
    }
    c.cmax = core_serve_max_concurrency(&c.res, s->in->base.input_len, s->in->base.output_len);
    if (c.cmax < 1)
        return;
    s->out->fitting++;
    if (!size_load(s, &c, &p.replicas, &p.concurrency))
        return;
    s->out->feasible++;
    p.gpus = tp * p.replicas;
    p.max_concurrency = c.cmax;
    time_at(s, &c, p.concurrency, &p.time);
    p.usd_per_hour = p.usd_per_gpu_hour >= 0 ? p.usd_per_gpu_hour * (double)p.gpus : -1.0;
    p.requests_per_second = p.time.requests_per_second * (double)p.replicas;
    rank(s, &p);
    front(s, &p);
}

/* Why nothing qualified: the first constraint that binds, in search order. */
static void explain(struct search *s)
{
    const struct core_serve_plan_input *in = s->in;
    struct core_serve_plan_summary *out = s->out;

    if (out->gpus_searched == 0) {
        reason(out, "gpu", "no GPU to search: give usd_per_gpu_hour for the GPUs in gpu");
        return;
    }
    if (out->fitting == 0 && s->refused == out->evaluated && s->refusal.field != NULL) {
        reason(out, s->refusal.field, "every configuration is refused: %s", s->refusal.message);
        return;
    }
    if (out->fitting == 0 && s->headroom_only > 0) {
        char fix[96] = "";

        if (s->headroom_u > 0)
            snprintf(fix, sizeof fix, "gpu_memory_utilization %.2f%s", s->headroom_u,
                     s->headroom_eager ? " or enforce_eager" : "");
        else if (s->headroom_eager)
            snprintf(fix, sizeof fix, "enforce_eager");
        reason(out, "gpu_memory_utilization",
               "%lld of %lld configurations hold the weights and a request, not the CUDA graphs "
               "vLLM captures after the KV pool in the %.2f headroom%s%s",
               (long long)s->headroom_only, (long long)out->evaluated,
               1 - in->base.gpu_memory_utilization, fix[0] ? ": serves with " : "", fix);
        return;
    }
    if (out->fitting == 0) {
        reason(out, "memory",
               "none of the %lld GPU x tp x quantization x KV dtype configurations searched holds "
               "the weights and one request of %lld tokens",
               (long long)out->evaluated, (long long)(in->base.input_len + in->base.output_len));
        return;
    }
    if (in->tpot_slo_seconds > 0 && s->best_tpot > in->tpot_slo_seconds)
        reason(out, "tpot_slo_seconds",
               "the fastest decode of any configuration that fits is %.4g s per token (one "
               "sequence); the SLO asks %g",
               s->best_tpot, in->tpot_slo_seconds);
    if (in->ttft_slo_seconds > 0 && s->best_ttft > in->ttft_slo_seconds)
        reason(out, "ttft_slo_seconds",
               "the fastest first token of any configuration that fits is %.4g s (one sequence); "
               "the SLO asks %g",
               s->best_ttft, in->ttft_slo_seconds);
    if (out->reason_count > 0)
        return;
    if (in->concurrency > 0)
        reason(out, "concurrency",
               "%lld sequences in flight need more than replicas_max = %lld replicas under the "
               "SLOs",
               (long long)in->concurrency, (long long)in->replicas_max);
    else
        reason(out, "requests_per_second",
               "one replica carries at most %.4g requests/s under the SLOs; %g needs more than "
               "replicas_max = %lld",
               s->best_rate, in->requests_per_second, (long long)in->replicas_max);
}

static bool check_inputs(const struct core_serve_plan_input *in, struct core_problems *p)
{
    if (in->requests_per_second > 0 && in->concurrency > 0)
        core_problem_add(p, "requests_per_second",
                         "give one load: requests_per_second or concurrency, not both");
    if (in->base.input_len < 1 || in->base.output_len < 1)
        core_problem_add(p, in->base.input_len < 1 ? "input_len" : "output_len",
                         "must be at least one token");
    if (in->tp_max < 1 || in->tp_max > CORE_SPLAN_TP_MAX)
        core_problem_add(p, "tp_max", "must be 1 to %d", CORE_SPLAN_TP_MAX);
    if (in->replicas_max < 1 || in->replicas_max > CORE_SPLAN_REPLICAS_MAX)
        core_problem_add(p, "replicas_max", "must be 1 to %d", CORE_SPLAN_REPLICAS_MAX);
    if (!(in->requests_per_second >= 0 && in->requests_per_second <= CORE_SPLAN_RPS_MAX))
        core_problem_add(p, "requests_per_second", "must be 0 to %g", CORE_SPLAN_RPS_MAX);
    if (!(in->ttft_slo_seconds >= 0 && in->ttft_slo_seconds <= CORE_SPLAN_SLO_MAX))
        core_problem_add(p, "ttft_slo_seconds", "must be 0 to %g", CORE_SPLAN_SLO_MAX);
    if (!(in->tpot_slo_seconds >= 0 && in->tpot_slo_seconds <= CORE_SPLAN_SLO_MAX))
        core_problem_add(p, "tpot_slo_seconds", "must be 0 to %g", CORE_SPLAN_SLO_MAX);
    /* The same for every candidate: a 422 here, as /inference answers, rather than a search
     * whose every configuration core_serve() refuses. */
    core_serve_check_engine_version(&in->base, p);
    return p->count == 0;
}

/* No candidate of the search can start when every gpu x quantization x KV dtype it would try
 * fails the refusals that hold at any tp (core_serve_check_candidate: vLLM's block sizes, a
 * format the engine or the GPU cannot run, the dtype, the scheduler rule): then the first
 * one's problem, naming its field, is the reply - a 422 before the search, as /inference
 * answers - instead of a search whose every configuration is refused. false: p has it. */
static bool check_candidates(const struct core_serve_plan_input *in, const int *gpus, int n,
                             bool priced, const struct core_serve_plan_summary *lists,
                             struct core_problems *p)
{
    struct core_problems first = {0};
    bool tried = false;

    for (int g = 0; g < n; g++) {
        if (priced && price_of(in, gpus[g]) < 0)
            continue;
        for (int q = 0; q < lists->quant_count; q++)
            for (int k = 0; k < lists->kv_count; k++) {
                struct core_serve_plan c = {.gpu = gpus[g],
                                            .tp = 1,
                                            .quantization = lists->quantizations[q],
                                            .kv_cache_dtype = lists->kv_cache_dtypes[k],
                                            .usd_per_gpu_hour = price_of(in, gpus[g])};
                struct core_serve_input serve;
                struct core_problems mine = {0};

                core_serve_plan_request(in, &c, &serve);
                core_serve_check_candidate(&serve, &mine);
                if (mine.count == 0)
                    return true;
                if (!tried)
                    first = mine;
                tried = true;
            }
    }
    if (!tried) /* nothing to search: explain() names the gpu */
        return true;
    core_problem_add(p, first.items[0].field, "%s", first.items[0].message);
    return false;
}

/* The lists to search: the request's, or the defaults. */
static int gpu_list(const struct core_serve_plan_input *in, int *gpus)
{
    int n = 0;

    if (in->gpu_count > 0) {
        for (int i = 0; i < in->gpu_count && i < CORE_PLAN_GPU_MAX; i++)
            if (in->gpus[i] >= 0 && (size_t)in->gpus[i] < core_gpu_count)
                gpus[n++] = in->gpus[i];
        return n;
    }
    for (size_t i = 0; i < core_gpu_count && n < CORE_PLAN_GPU_MAX; i++)
        if (core_serve_engine_models(in->base.engine, (int)i)) /* /inference's rule: no TPU */
            gpus[n++] = (int)i;
    return n;
}

static bool any_price(const struct core_serve_plan_input *in, const int *gpus, int n)
{
    for (int i = 0; i < n; i++)
        if (price_of(in, gpus[i]) >= 0)
            return true;
    return false;
}

/* The quantizations and KV dtypes to search: the request's, or none, fp8, awq and auto, fp8. */
static void lists(const struct core_serve_plan_input *in, struct core_serve_plan_summary *out)
{
    static const enum core_quant quants[] = {CORE_QUANT_NONE, CORE_QUANT_FP8, CORE_QUANT_AWQ};
    static const enum core_kv_dtype kvs[] = {CORE_KV_AUTO, CORE_KV_FP8};

    out->quant_count = in->quant_count > 0 ? in->quant_count : 3;
    out->kv_count = in->kv_count > 0 ? in->kv_count : 2;
    if (out->quant_count > CORE_QUANT_COUNT)
        out->quant_count = CORE_QUANT_COUNT;
    if (out->kv_count > CORE_KV_DTYPE_COUNT)
        out->kv_count = CORE_KV_DTYPE_COUNT;
    for (int i = 0; i < out->quant_count; i++)
        out->quantizations[i] = in->quant_count > 0 ? in->quantizations[i] : quants[i];
    for (int i = 0; i < out->kv_count; i++)
        out->kv_cache_dtypes[i] = in->kv_count > 0 ? in->kv_cache_dtypes[i] : kvs[i];
}

static void search_all(struct search *s, const int *gpus, int n)
{
    const struct core_serve_plan_summary *o = s->out;

    for (int g = 0; g < n; g++) {
        if (s->priced && price_of(s->in, gpus[g]) < 0)
            continue;
        s->out->searched[s->out->gpus_searched++] = gpus[g];
        for (size_t t = 0; t < sizeof tp_choices / sizeof tp_choices[0]; t++) {
            int64_t tp = tp_choices[t];
            if (tp > s->in->tp_max || tp > core_gpus[gpus[g]].gpus_per_node)
                continue;
            for (int q = 0; q < o->quant_count; q++)
                for (int k = 0; k < o->kv_count; k++)
                    try_config(s, gpus[g], tp, o->quantizations[q], o->kv_cache_dtypes[k]);
        }
    }
}

enum core_status core_serve_plan_search(const struct core_serve_plan_input *in,
                                        struct core_serve_plan *plans, int plans_max,
                                        struct core_serve_plan *pareto, int pareto_max,
                                        struct core_serve_plan_summary *out,
                                        struct core_problems *problems)
{
    struct search s = {.in = in,
                       .plans = plans,
                       .pareto = pareto,
                       .plans_max = plans_max > 0 ? plans_max : 0,
                       .pareto_max = pareto_max > 0 ? pareto_max : 0,
                       .out = out,
                       .best_tpot = INFINITY,
                       .best_ttft = INFINITY};
    int gpus[CORE_PLAN_GPU_MAX], n;

    memset(out, 0, sizeof *out);
    if (!check_inputs(in, problems))
        return CORE_EINVAL;
    n = gpu_list(in, gpus);
    s.priced = any_price(in, gpus, n);
    out->ranked_by_cost = s.priced;
    lists(in, out);
    if (!check_candidates(in, gpus, n, s.priced, out, problems))
        return CORE_EINVAL;
    search_all(&s, gpus, n);
    if (out->plan_count == 0)
        explain(&s);
    return CORE_OK;
}

void core_serve_plan_request(const struct core_serve_plan_input *in,
                             const struct core_serve_plan *p, struct core_serve_input *serve)
{
    *serve = in->base;
    serve->base.gpu = p->gpu;
    serve->base.tp = p->tp;
    serve->base.pp = 1;
    serve->base.gpus = p->tp;
    serve->base.usd_per_gpu_hour = p->usd_per_gpu_hour;
    serve->quantization = p->quantization;
    serve->kv_cache_dtype = p->kv_cache_dtype;
    if (serve->max_model_len == 0) /* not given: the workload's length, as one would deploy */
        serve->max_model_len = in->base.input_len + in->base.output_len;
    serve->concurrency = p->concurrency > 0 ? p->concurrency : 1;
    serve->batching = CORE_BATCHING_CONTINUOUS;
}
