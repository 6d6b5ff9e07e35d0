/*
 * serve_plan_inputs.c - POST /inference/plan's own input rows (offsets into struct
 * core_serve_plan_input, serve_plan.h). The rest of its inputs are /inference's rows, which
 * point into the struct core_serve_input that starts it; these shadow the ones of the same name
 * (gpu, usd_per_gpu_hour, quantization and kv_cache_dtype take lists here, concurrency is the
 * whole load rather than one replica's).
 */
#include <stddef.h>
#include <string.h>

#include "inputs.h"
#include "serve_plan.h"

_Static_assert(offsetof(struct core_serve_plan_input, base) == 0, "serve rows share offsets");
/* The list stores (inputs.h): an int count, then the int indexes. */
_Static_assert(offsetof(struct core_serve_plan_input, gpus) ==
                   offsetof(struct core_serve_plan_input, gpu_count) + sizeof(int),
               "gpu list layout");
_Static_assert(offsetof(struct core_plan_input, gpus) ==
                   offsetof(struct core_plan_input, gpu_count) + sizeof(int),
               "gpu list layout");
_Static_assert(offsetof(struct core_serve_plan_input, quantizations) ==
                   offsetof(struct core_serve_plan_input, quant_count) + sizeof(int),
               "choice list layout");
_Static_assert(offsetof(struct core_serve_plan_input, kv_cache_dtypes) ==
                   offsetof(struct core_serve_plan_input, kv_count) + sizeof(int),
               "choice list layout");
_Static_assert(sizeof(enum core_quant) == sizeof(int) && sizeof(enum core_kv_dtype) == sizeof(int),
               "enum size");

#define SPAT(member) offsetof(struct core_serve_plan_input, member)

/* clang-format off */
const struct core_input_spec core_serve_plan_inputs[] = {
    {"gpu", CORE_KIND_GPUS, CORE_STORE_GPUS, SPAT(gpu_count), 0, 0, false, 0, true, false, false,
     false, NULL, 0, "", "every catalog GPU but the TPUs", "GPU catalog id, or a list of them, to search", CORE_ECHO_NONE, 0},
    {"usd_per_gpu_hour", CORE_KIND_PRICES, CORE_STORE_PRICES, SPAT(usd_per_gpu_hour), 0,
     CORE_USD_MAX, false, -1, true, true, false, false, NULL, 0, "USD per GPU-hour",
     "none (rank by GPUs)", "price for every GPU, or prices by GPU id; ranks by cost per hour", CORE_ECHO_NONE, 0},
    {"quantization", CORE_KIND_CHOICES, CORE_STORE_CHOICES, SPAT(quant_count), 0, 0, false, 0,
     true, false, false, false, core_quant_names, CORE_QUANT_COUNT, "", "none, fp8, awq",
     "weight formats to search (one name or a list)", CORE_ECHO_NONE, 0},
    {"kv_cache_dtype", CORE_KIND_CHOICES, CORE_STORE_CHOICES, SPAT(kv_count), 0, 0, false, 0,
     true, false, false, false, core_kv_dtype_names, CORE_KV_DTYPE_COUNT, "", "auto, fp8",
     "KV cache dtypes to search (one name or a list)", CORE_ECHO_NONE, 0},
    {"requests_per_second", CORE_KIND_REAL, CORE_STORE_DOUBLE, SPAT(requests_per_second), 0,
     CORE_SPLAN_RPS_MAX, true, 0, true, true, false, false, NULL, 0, "requests/s",
     "none (the load is concurrency)", "load: requests arriving per second over all replicas", CORE_ECHO_NONE, 0},
    {"concurrency", CORE_KIND_INT, CORE_STORE_I64, SPAT(concurrency), 1, CORE_SERVE_SEQS_MAX,
     false, 0, true, true, false, false, NULL, 0, "sequences",
     "1 when requests_per_second is not given",
     "load: sequences in flight over all replicas (instead of requests_per_second)", CORE_ECHO_NONE,
     0},
    {"ttft_slo_seconds", CORE_KIND_REAL, CORE_STORE_DOUBLE, SPAT(ttft_slo_seconds), 0,
     CORE_SPLAN_SLO_MAX, true, 0, true, true, false, false, NULL, 0, "seconds", "none",
     "largest acceptable time to first token", CORE_ECHO_NONE, 0},
    {"tpot_slo_seconds", CORE_KIND_REAL, CORE_STORE_DOUBLE, SPAT(tpot_slo_seconds), 0,
     CORE_SPLAN_SLO_MAX, true, 0, true, true, false, false, NULL, 0, "seconds", "none",
     "largest acceptable time per output token", CORE_ECHO_NONE, 0},
    {"tp_max", CORE_KIND_INT, CORE_STORE_I64, SPAT(tp_max), 1, CORE_SPLAN_TP_MAX, false,
     CORE_SPLAN_TP_MAX, false, false, false, false, NULL, 0, "GPUs", NULL,
     "largest tensor parallelism searched (powers of two)", CORE_ECHO_NONE, 0},
    {"replicas_max", CORE_KIND_INT, CORE_STORE_I64, SPAT(replicas_max), 1,
     CORE_SPLAN_REPLICAS_MAX, false, CORE_SPLAN_REPLICAS_MAX, false, false, false, false, NULL, 0,
     "replicas", NULL, "most replicas a plan may use", CORE_ECHO_NONE, 0},
};
/* clang-format on */

const size_t core_serve_plan_input_count =
    sizeof core_serve_plan_inputs / sizeof core_serve_plan_inputs[0];

static bool name_is(const char *name, size_t len, const char *want)
{
    return len > 0 && strlen(want) == len && memcmp(name, want, len) == 0;
}

const struct core_input_spec *core_serve_plan_input_find(const char *name, size_t len)
{
    for (size_t i = 0; i < core_serve_plan_input_count; i++)
        if (name_is(name, len, core_serve_plan_inputs[i].name))
            return &core_serve_plan_inputs[i];
    return core_serve_input_find(name, len);
}
