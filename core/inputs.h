/*
 * inputs.h - the input table: one row per API input, the only place its bounds, default, unit and
 * meaning are declared.
 *
 * core_input_init() stores every row's default, core_evaluate() checks every row's bounds, the
 * api layer decodes query strings and JSON bodies by walking the same rows (it adds only syntax:
 * SI suffixes, JSON types, the query grammar), GET /inputs publishes them for the page, and the
 * contract tests hold openapi.yaml and docs/model.md to them; api/write.c echoes the resolved
 * inputs from the rows' echo column. Adding an input is one row here (its echo included),
 * one member in struct core_input, its formula, its test and its doc line.
 *
 * A row whose default is a "not given" sentinel (unset) is resolved later by core_evaluate()
 * (the preset's value, an inferred shape, the catalog's figure); default_doc says how.
 */
#ifndef MEMWALL_CORE_INPUTS_H
#define MEMWALL_CORE_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

/* Input bounds; the rows below use them and a few model functions search up to them. */
#define CORE_PARAMS_MAX        1e15
#define CORE_TOKENS_MAX        1e18
#define CORE_GPUS_MAX          10000000
#define CORE_SEQ_LEN_MAX       100000000
#define CORE_BATCH_MAX         1000000
#define CORE_LAYERS_MAX        100000
#define CORE_HIDDEN_MAX        1000000
#define CORE_FFN_HIDDEN_MAX    4000000
#define CORE_HEADS_MAX         100000
#define CORE_VOCAB_MAX         100000000
#define CORE_PARALLEL_MAX      1000000 /* tp, pp */
#define CORE_MEMORY_GB_MIN     1e-9    /* one byte */
#define CORE_MEMORY_GB_MAX     1e6
#define CORE_PEAK_TFLOPS_MIN   1e-3
#define CORE_PEAK_TFLOPS_MAX   1e9
#define CORE_MFU_MIN           1e-4
#define CORE_USD_MAX           1e6
#define CORE_TPS_MAX           1e18
#define CORE_GBS_MAX           1e6 /* link bandwidth, GB/s */
#define CORE_NODE_GPUS_MAX     1000000
#define CORE_GLOBAL_BATCH_MAX  1e12   /* sequences */
#define CORE_MFU_PREDICTED     0.0    /* the stored mfu of the word "predicted" */
#define CORE_MOE_EXPERTS_MAX   100000 /* = CORE_EXPERTS_MAX (core.h) */
#define CORE_MOE_IMBALANCE_MAX 1024   /* moe_load_imbalance; the model caps it at ep */
#define CORE_LORA_RANK_MAX     65536  /* adapter rank r */
#define CORE_LORA_ALPHA_MAX    1e6
#define CORE_TEXT_MAX          256 /* a text input's bytes, its NUL included */

/* What a value is, which decides its syntax in the api layer and its check here. */
enum core_input_kind {
    CORE_KIND_INT,     /* integral number */
    CORE_KIND_SIZE,    /* number; the api also takes an SI suffix ("7B", "1.4T") */
    CORE_KIND_REAL,    /* number */
    CORE_KIND_BOOL,    /* boolean */
    CORE_KIND_FLAG,    /* boolean whose default is derived (stored as enum core_flag) */
    CORE_KIND_CHOICE,  /* one of choices[] (stored as its index) */
    CORE_KIND_GPU,     /* a GPU catalog id (stored as its index) */
    CORE_KIND_PRESET,  /* a model preset id (stored as its index) */
    CORE_KIND_GPUS,    /* /plan: one catalog id or a list of them */
    CORE_KIND_PRICES,  /* /plan: one price, or prices by GPU id */
    CORE_KIND_OBJECT,  /* a JSON object the api decodes itself (`config`); stored as "given" */
    CORE_KIND_CHOICES, /* /inference/plan: one of choices[], or a list of them */
    CORE_KIND_MODULES, /* a list of module names (lora_targets), stored as a mask (adapters.h) */
    CORE_KIND_TEXT,    /* a short string (CORE_TEXT_MAX bytes with its NUL) in core's own syntax */
    CORE_KIND_COUNT
};

/* How the value is stored at `offset`. */
enum core_input_store {
    CORE_STORE_I64,     /* int64_t, the number rounded to the nearest integer */
    CORE_STORE_INT,     /* int (also every enum core_* type) */
    CORE_STORE_DOUBLE,  /* double */
    CORE_STORE_BOOL,    /* bool */
    CORE_STORE_GPUS,    /* an int count, then CORE_PLAN_GPU_MAX int catalog indexes (gpu_count
                           and gpus[] of struct core_plan_input and core_serve_plan_input) */
    CORE_STORE_PRICES,  /* usd_per_gpu_hour[] of struct core_plan_input */
    CORE_STORE_CHOICES, /* an int count, then that many int indexes into choices[] */
    CORE_STORE_TEXT,    /* char[CORE_TEXT_MAX], NUL-terminated; "" = not given */
};

/* How the reply's `inputs` member echoes a row (api/write.c walks the rows in table order). */
enum core_input_echo {
    CORE_ECHO_UNSET,     /* the row says nothing: the apiunit suite fails on it */
    CORE_ECHO_RESOLVED,  /* the resolved value at .resolved in struct core_resolved */
    CORE_ECHO_PREDICTED, /* mfu: "predicted" when resolved.mfu_predicted, else the value */
    CORE_ECHO_SHAPE,     /* shown inside inputs.shape (the architecture as resolved) */
    CORE_ECHO_NONE,      /* not echoed (a /plan row: the plan reply has its own) */
};

struct core_input_spec {
    const char *name; /* as the API spells it */
    enum core_input_kind kind;
    enum core_input_store store;
    size_t offset;      /* into struct core_input (or struct core_plan_input for /plan) */
    double min, max;    /* numbers: inclusive bounds, unless min_exclusive */
    bool min_exclusive; /* min < x rather than min <= x */
    double dflt;        /* what core_input_init() stores (a number, an index, a flag) */
    bool unset;         /* dflt is a "not given" sentinel that core_evaluate() resolves */
    bool nullable;      /* JSON null means "not given" (puts dflt back) */
    bool bool_alias;    /* a choice that also takes a boolean: true = last, false = first */
    bool planned;       /* /plan chooses this itself: giving it there is an error */
    /* CORE_KIND_CHOICE: the names, index = stored value. A number row (CORE_KIND_REAL) may
     * also take words: word i is stored as -i (so the first is 0, outside the bounds). */
    const char *const *choices;
    int choice_count;
    const char *unit;        /* "parameters", "tokens", "GB", ... or "" for pure names */
    const char *default_doc; /* the default in words ("the preset's, else inferred") */
    const char *doc;         /* one line: what it is */
    /* The echo: how, and for CORE_ECHO_RESOLVED / PREDICTED where the value is after
     * core_evaluate() (stored as .store says, except that a CORE_KIND_FLAG row resolves to a
     * bool). A nullable row echoes null while its resolved value is still dflt; a preset row
     * echoes the id only when the shape is the preset's (not the nearest one's). */
    enum core_input_echo echo;
    size_t resolved;
};

/* The syntax check of pipeline_model_parallel_layout (core/layout.c). */
const char *core_layout_text_check(const char *s, size_t len);
/* The syntax check of recompute_modules (core/recompute.c). */
const char *core_recompute_text_check(const char *s, size_t len);
/* The syntax check of cuda_graph_modules (core/cuda_graph.c). */
const char *core_cuda_graph_text_check(const char *s, size_t len);
/* A text row's value s[0..len): NULL when well formed, else why not (a static string). */
const char *core_input_text_check(const struct core_input_spec *spec, const char *s, size_t len);

/* The compute routes' inputs (struct core_input), in the order the API documents them. */
extern const struct core_input_spec core_inputs[];
extern const size_t core_input_count;

/* /plan's own inputs (offsets into struct core_plan_input). Rows here shadow a core_inputs row
 * of the same name (gpu, usd_per_gpu_hour take a list and per-GPU prices there). */
extern const struct core_input_spec core_plan_inputs[];
extern const size_t core_plan_input_count;

/* /inference's own inputs (offsets into struct core_serve_input, core/serve.h); the compute
 * rows of core_inputs apply there too (its base). */
extern const struct core_input_spec core_serve_inputs[];
extern const size_t core_serve_input_count;

/* The row named name[0..len) among /inference's rows, then core_inputs; or NULL. */
const struct core_input_spec *core_serve_input_find(const char *name, size_t len);

/* POST /inference/plan's own inputs (offsets into struct core_serve_plan_input, serve_plan.h;
 * serve_plan_inputs.c); they shadow the /inference rows of the same name. */
extern const struct core_input_spec core_serve_plan_inputs[];
extern const size_t core_serve_plan_input_count;
/* The row named name[0..len) for /inference/plan: its own rows first, then /inference's. */
const struct core_input_spec *core_serve_plan_input_find(const char *name, size_t len);

/* The row named name[0..len), or NULL; plan = also /plan's own rows (they win). */
const struct core_input_spec *core_input_find(const char *name, size_t len, bool plan);

/* Store spec's default at base + spec->offset. */
void core_input_store_default(const struct core_input_spec *spec, void *base);

/* Is the stored value at base + spec->offset valid for the row? A sentinel default counts as
 * valid; NaN, inf and out-of-range values do not. Catalog indexes are checked against the
 * catalogs' sizes. /plan's list rows are checked by the planner. */
bool core_input_valid(const struct core_input_spec *spec, const void *base);
/* The index of the first of rows[from, count) whose value at base is not valid, or count. */
size_t core_input_next_invalid(const struct core_input_spec *rows, size_t count, const void *base,
                               size_t from);

#endif
