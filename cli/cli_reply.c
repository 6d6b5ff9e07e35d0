/*
 * cli_reply.c - the tables `memwall CMD` prints without --json, and its exit status.
 *
 * One row table lays out every view. A row names the views that show it, a label, the path of
 * its value in the reply ("memory.per_gpu.total.gb"; "plans[].gpu" for a column of the table
 * of the plans array), how to read the value and the printf format that prints it. The layout
 * says where the label goes: before the value (pair rows), atop the column (columns), or
 * nowhere, because the row's format carries its own words (inline rows such as the fit
 * sentence). Rows print in table order, so a view reads top to bottom like its output.
 *
 * A value that is absent (or of the wrong type) prints as "-" in the same width, unless its
 * row is optional, in which case the row is left out (cost_usd without a price).
 */
#include <stdarg.h>
#include <string.h>

#include "cli.h"
#include "cli_reply.h"

enum layout {
    PAIR,     /* "%-10s " label, the value, newline */
    INDENTED, /* "  %-12s " label, the value, newline */
    HEADING,  /* the label alone on a line */
    INLINE,   /* the format alone: its text says what the value is */
    COLUMN,   /* one column of the table of an array; the label heads it */
};

enum kind {
    NONE,        /* no value (a heading) */
    NUM,         /* a JSON number, printed with %f, %e or %g */
    INT,         /* a JSON integer, printed with %lld */
    STR,         /* a JSON string, printed with %s */
    YESNO,       /* a JSON boolean, printed as "yes" or "no" with %s */
    NOTES,       /* an array of {message}: the format once per item, with the message */
    FIELD_NOTES, /* an array of {field, message}: the format once per item, with both */
};

/* The conversions a kind's format must hold, in order: f a double (%f, %e, %g), d a long long
 * (%lld), s a string. The formats are not literals the compiler can check, so each is held to
 * its kind before use (format_fits). */
static const char *const conversions[] = {
    [NONE] = "",   [NUM] = "f",   [INT] = "d",          [STR] = "s",
    [YESNO] = "s", [NOTES] = "s", [FIELD_NOTES] = "ss",
};

struct row {
    unsigned views; /* bit (1 << enum cli_view) for each view showing the row */
    enum layout layout;
    const char *label;
    const char *path;
    enum kind kind;
    const char *format;
    unsigned flags;
};

#define OPTIONAL 1u /* an absent value leaves the row out */
#define DECIDES                                                                                    \
    2u /* the exit status is CLI_EXIT_NO unless the value is true (a YESNO row)                    \
        * or its array has items (the first column of a table) */
#define ABSENT                                                                                     \
    4u /* the row prints only when its value is absent or null (why a member is not there) */

#define FLOPS   (1u << CLI_VIEW_FLOPS)
#define MEMORY  (1u << CLI_VIEW_MEMORY)
#define FIT     (1u << CLI_VIEW_FIT)
#define RUNTIME (1u << CLI_VIEW_RUNTIME)
#define PLAN    (1u << CLI_VIEW_PLAN)
#define SERVE   (1u << CLI_VIEW_INFERENCE)
#define SPLAN   (1u << CLI_VIEW_SERVE_PLAN)
#define PROBLEM (1u << CLI_VIEW_PROBLEM)

static const struct row rows[] = {
    {FLOPS, PAIR, "six_nd", "flops.six_nd", NUM, "%.6g FLOPs", 0},
    {FLOPS, PAIR, "model", "flops.model", NUM, "%.6g FLOPs", 0},
    {FLOPS, PAIR, "hardware", "flops.hardware", NUM, "%.6g FLOPs", 0},
    {FLOPS, PAIR, "attention", "flops.attention_fraction", NUM, "%.3f of the model FLOPs", 0},

    {RUNTIME, PAIR, "days", "runtime.days", NUM, "%.2f", 0},
    {RUNTIME, PAIR, "gpu_hours", "runtime.gpu_hours", NUM, "%.0f", 0},
    {RUNTIME, PAIR, "tokens/s", "runtime.tokens_per_second", NUM, "%.0f", 0},
    {RUNTIME, PAIR, "mfu", "runtime.mfu", NUM, "%.3f", 0},
    {RUNTIME, PAIR, "cost_usd", "runtime.cost_usd", NUM, "%.0f", OPTIONAL},
    {RUNTIME, PAIR, "mfu_source", "runtime.mfu_source", STR, "%s", 0},
    {RUNTIME, HEADING, "predicted by the step-time model", NULL, NONE, NULL, 0},
    {RUNTIME, INDENTED, "days", "performance.days", NUM, "%12.2f", 0},
    {RUNTIME, INDENTED, "step", "performance.step_seconds", NUM, "%12.4f s", 0},
    {RUNTIME, INDENTED, "mfu", "performance.mfu", NUM, "%12.3f", 0},
    {RUNTIME, INDENTED, "error", "performance.expected_error", NUM, "%12.2f (typical, relative)",
     0},
    {RUNTIME, INDENTED, "bottleneck", "performance.bottleneck", STR, "%12s", 0},
    {RUNTIME, HEADING, "where the step goes (s)", NULL, NONE, NULL, 0},
    {RUNTIME, INDENTED, "compute", "performance.breakdown.compute", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "memory_bound", "performance.breakdown.memory_bound", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "recompute", "performance.breakdown.recompute", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "tp_comm", "performance.breakdown.tp_comm", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "cp_comm", "performance.breakdown.cp_comm", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "pp_bubble", "performance.breakdown.pp_bubble", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "pp_comm", "performance.breakdown.pp_comm", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "dp_comm", "performance.breakdown.dp_comm", NUM, "%12.4f", 0},
    {RUNTIME, INDENTED, "optimizer", "performance.breakdown.optimizer", NUM, "%12.4f", 0},

    {MEMORY | FIT, HEADING, "per-GPU memory (GB)", NULL, NONE, NULL, 0},
    {MEMORY | FIT, INDENTED, "params", "memory.per_gpu.params.gb", NUM, "%12.3f", 0},
    {MEMORY | FIT, INDENTED, "grads", "memory.per_gpu.grads.gb", NUM, "%12.3f", 0},
    {MEMORY | FIT, INDENTED, "optimizer", "memory.per_gpu.optimizer.gb", NUM, "%12.3f", 0},
    {MEMORY | FIT, INDENTED, "activations", "memory.per_gpu.activations.gb", NUM, "%12.3f", 0},
    {MEMORY | FIT, INDENTED, "reserve", "memory.per_gpu.reserve.gb", NUM, "%12.3f", 0},
    {MEMORY | FIT, INDENTED, "total", "memory.per_gpu.total.gb", NUM, "%12.3f", 0},
    {MEMORY | FIT, INDENTED, "peak", "memory.peak.gb", NUM, "%12.3f", 0},
    {MEMORY | FIT, INLINE, "metric", "memory.peak.metric", STR, "  (%s", 0},
    {MEMORY | FIT, INLINE, "at", "memory.peak.at", STR, " at %s", 0},
    {MEMORY | FIT, INLINE, "stage", "memory.peak.stage", STR, ", %s stage)\n", 0},
    /* Fine-tuning with adapters: memory.adapters is in the reply only then. */
    {MEMORY | FIT, INLINE, "adapters", "memory.adapters.trainable_params", INT,
     "adapters: %lld trainable parameters", OPTIONAL},
    {MEMORY | FIT, INLINE, "adapter_params", "memory.adapters.params.gb", NUM, ", %.3f GB",
     OPTIONAL},
    {MEMORY | FIT, INLINE, "frozen_base", "memory.adapters.frozen_base.gb", NUM,
     "; frozen base %.3f GB\n", OPTIONAL},

    {FIT, INLINE, "fits", "fit.fits", YESNO, "fits: %s", DECIDES},
    {FIT, INLINE, "capacity", "fit.capacity.gb", NUM, " (%.3f GB capacity", 0},
    {FIT, INLINE, "headroom", "fit.headroom.gb", NUM, ", %.3f GB headroom", 0},
    {FIT, INLINE, "bottleneck", "fit.bottleneck", STR, ", bottleneck %s", 0},
    {FIT, INLINE, "judged", "fit.judged", STR, ", judged on the %s)\n", 0},
    {FIT, INLINE, "advice", "advice", NOTES, "advice: %s\n", 0},
    {FLOPS | MEMORY | FIT | RUNTIME, INLINE, "warnings", "warnings", NOTES, "warning: %s\n", 0},

    {PLAN, COLUMN, "gpu", "plans[].gpu", STR, "%-14s", DECIDES},
    {PLAN, COLUMN, "gpus", "plans[].gpus", INT, "%6lld", 0},
    {PLAN, COLUMN, "tp", "plans[].tp", INT, "%3lld", 0},
    {PLAN, COLUMN, "pp", "plans[].pp", INT, "%3lld", 0},
    {PLAN, COLUMN, "v", "plans[].virtual_stages", INT, "%2lld", 0},
    {PLAN, COLUMN, "cp", "plans[].cp", INT, "%3lld", 0},
    {PLAN, COLUMN, "ep", "plans[].ep", INT, "%4lld", OPTIONAL}, /* MoE plans only */
    {PLAN, COLUMN, "dp", "plans[].dp", INT, "%5lld", 0},
    {PLAN, COLUMN, "zero", "plans[].zero_stage", INT, "%4lld", 0},
    {PLAN, COLUMN, "ckpt", "plans[].checkpointing", STR, "%-9s", 0},
    {PLAN, COLUMN, "batch", "plans[].batch", INT, "%6lld", 0},
    {PLAN, COLUMN, "days", "plans[].days", NUM, "%9.2f", 0},
    {PLAN, COLUMN, "gpu_hours", "plans[].gpu_hours", NUM, "%12.0f", 0},
    {PLAN, COLUMN, "cost_usd", "plans[].cost_usd", NUM, "%13.0f", 0},
    {PLAN, COLUMN, "mfu", "plans[].mfu", NUM, "%6.3f", 0},
    {PLAN, COLUMN, "mem_gb", "plans[].memory_per_gpu.total.gb", NUM, "%8.2f", 0},
    {PLAN, INLINE, "ranked_by", "ranked_by", STR, "ranked by %s", 0},
    {PLAN, INLINE, "evaluated", "evaluated", INT, "; %lld configurations evaluated", 0},
    {PLAN, INLINE, "feasible", "feasible", INT, ", %lld feasible", 0},
    {PLAN, INLINE, "elapsed", "elapsed_seconds", NUM, ", %.3f s\n", 0},
    {PLAN, INLINE, "reasons", "reasons", FIELD_NOTES, "no plan: %s: %s\n", 0},

    {SERVE, HEADING, "per-GPU memory (GiB)", NULL, NONE, NULL, 0},
    {SERVE, INDENTED, "weights", "inference.memory.per_gpu.weights.gib", NUM, "%12.3f", 0},
    {SERVE, INDENTED, "activations", "inference.memory.per_gpu.activations.gib", NUM, "%12.3f", 0},
    {SERVE, INDENTED, "non_torch", "inference.memory.per_gpu.non_torch.gib", NUM, "%12.3f", 0},
    {SERVE, INDENTED, "cuda_graphs", "inference.memory.per_gpu.cuda_graphs.gib", NUM, "%12.3f", 0},
    {SERVE, INDENTED, "kv_cache", "inference.memory.per_gpu.kv_cache.gib", NUM, "%12.3f", 0},
    {SERVE, INDENTED, "total", "inference.memory.per_gpu.total.gib", NUM, "%12.3f", 0},
    {SERVE, INDENTED, "capacity", "inference.memory.per_gpu.capacity.gib", NUM, "%12.3f", 0},
    {SERVE, HEADING, "KV cache", NULL, NONE, NULL, 0},
    {SERVE, INDENTED, "bytes/token", "inference.kv_cache.bytes_per_token", INT, "%12lld", 0},
    {SERVE, INDENTED, "blocks", "inference.kv_cache.blocks", INT, "%12lld", 0},
    {SERVE, INDENTED, "tokens", "inference.kv_cache.tokens", INT, "%12lld", 0},
    {SERVE, INDENTED, "concurrency", "inference.kv_cache.max_concurrency", NUM, "%12.2fx", 0},
    {SERVE, INDENTED, "longest", "inference.kv_cache.max_model_len_supported", INT, "%12lld tokens",
     0},
    {SERVE, INDENTED, "error", "inference.kv_cache.expected_error", NUM,
     "%12.3f (pool, typical relative)", 0},
    {SERVE, HEADING, "time (docs/serving.md, \"Time\")", "time", NONE, NULL, OPTIONAL},
    {SERVE, HEADING,
     "time: none (docs/serving.md, \"Time\"): the replica does not serve, input_len + output_len "
     "exceed max_model_len, or its KV pool holds no such request",
     "time", NONE, NULL, ABSENT},
    {SERVE, INDENTED, "concurrency", "time.concurrency", INT, "%12lld", OPTIONAL},
    {SERVE, INDENTED, "batching", "time.batching", STR, "%12s", OPTIONAL},
    {SERVE, INDENTED, "ttft", "time.ttft_seconds", NUM, "%12.4f s", OPTIONAL},
    {SERVE, INDENTED, "tpot", "time.tpot_seconds", NUM, "%12.5f s", OPTIONAL},
    {SERVE, INDENTED, "e2e", "time.e2e_seconds", NUM, "%12.3f s", OPTIONAL},
    {SERVE, INDENTED, "tokens/s", "time.output_tokens_per_second", NUM, "%12.1f", OPTIONAL},
    {SERVE, INDENTED, "requests/s", "time.requests_per_second", NUM, "%12.3f", OPTIONAL},
    {SERVE, INDENTED, "error", "time.expected_error", NUM, "%12.3f (typical, relative)", OPTIONAL},
    {SERVE, INDENTED, "bottleneck", "time.bottleneck", STR, "%12s", OPTIONAL},
    {SERVE, INDENTED, "mbu", "time.mbu", NUM, "%12.3f", OPTIONAL},
    {SERVE, INDENTED, "mfu", "time.mfu", NUM, "%12.4f", OPTIONAL},
    {SERVE, INDENTED, "knee", "time.knee_batch", NUM, "%12.1f sequences", OPTIONAL},
    {SERVE, INDENTED, "$/M tokens", "time.usd_per_million_output_tokens", NUM, "%12.4f", OPTIONAL},
    {SERVE, INLINE, "fits", "inference.fits", YESNO, "serves: %s\n", DECIDES},
    {SERVE, INLINE, "advice", "inference.advice", NOTES, "advice: %s\n", 0},
    {SERVE, INLINE, "warnings", "inference.warnings", NOTES, "warning: %s\n", 0},

    {SPLAN, COLUMN, "gpu", "plans[].gpu", STR, "%-14s", DECIDES},
    {SPLAN, COLUMN, "tp", "plans[].tp", INT, "%3lld", 0},
    {SPLAN, COLUMN, "replicas", "plans[].replicas", INT, "%8lld", 0},
    {SPLAN, COLUMN, "gpus", "plans[].gpus", INT, "%5lld", 0},
    {SPLAN, COLUMN, "quant", "plans[].quantization", STR, "%-11s", 0},
    {SPLAN, COLUMN, "kv", "plans[].kv_cache_dtype", STR, "%-8s", 0},
    {SPLAN, COLUMN, "conc", "plans[].concurrency", INT, "%6lld", 0},
    {SPLAN, COLUMN, "ttft_s", "plans[].ttft_seconds", NUM, "%8.4f", 0},
    {SPLAN, COLUMN, "tpot_s", "plans[].tpot_seconds", NUM, "%8.5f", 0},
    {SPLAN, COLUMN, "req/s", "plans[].requests_per_second", NUM, "%9.2f", 0},
    {SPLAN, COLUMN, "usd/h", "plans[].usd_per_hour", NUM, "%9.2f", 0},
    {SPLAN, INLINE, "ranked_by", "ranked_by", STR, "ranked by %s", 0},
    {SPLAN, INLINE, "evaluated", "evaluated", INT, "; %lld configurations sized", 0},
    {SPLAN, INLINE, "timed", "timed", INT, ", %lld timed", 0},
    {SPLAN, INLINE, "feasible", "feasible", INT, ", %lld feasible", 0},
    {SPLAN, INLINE, "elapsed", "elapsed_seconds", NUM, ", %.4f s\n", 0},
    {SPLAN, INLINE, "reasons", "reasons", FIELD_NOTES, "no plan: %s: %s\n", 0},

    {PROBLEM, INLINE, "status", "status", INT, "memwall: %lld", 0},
    {PROBLEM, INLINE, "title", "title", STR, " %s", 0},
    {PROBLEM, INLINE, "detail", "detail", STR, ": %s\n", 0},
    {PROBLEM, INLINE, "errors", "errors", FIELD_NOTES, "  %s: %s\n", 0},
};

enum { N_ROWS = sizeof rows / sizeof rows[0] };

/* The commands, by view; the route answering each is "/" + its name. */
static const char *const command_names[] = {
    [CLI_VIEW_FLOPS] = "flops", [CLI_VIEW_MEMORY] = "memory",
    [CLI_VIEW_FIT] = "fit",     [CLI_VIEW_RUNTIME] = "runtime",
    [CLI_VIEW_PLAN] = "plan",   [CLI_VIEW_INFERENCE] = "inference",
};

int cli_view_of(const char *name)
{
    for (size_t i = 0; i < sizeof command_names / sizeof command_names[0]; i++)
        if (command_names[i] != NULL && strcmp(name, command_names[i]) == 0)
            return (int)i;
    return -1;
}

/* ---------------------------------------------------------------------------------------------
 * Formats
 * ------------------------------------------------------------------------------------------- */

/* Does format hold exactly the conversions want lists (see conversions[]), each with only
 * flags, a width and a precision? */
static bool format_fits(const char *format, const char *want)
{
    for (const char *p = format; (p = strchr(p, '%')) != NULL;) {
        char got;

        if (*++p == '%') {
            p++;
            continue;
        }
        p += strspn(p, "-+ #0");
        p += strspn(p, "0123456789");
        if (*p == '.')
            p += 1 + strspn(p + 1, "0123456789");
        if (strncmp(p, "lld", 3) == 0) {
            got = 'd';
            p += 3;
        } else if (*p == 'f' || *p == 'e' || *p == 'g' || *p == 's') {
            got = *p == 's' ? 's' : 'f';
            p++;
        } else {
            return false;
        }
        if (*want++ != got)
            return false;
    }
    return *want == '\0';
}

/* format with its first conversion (the formats hold no "%%") turned into %s of the same flags and
 * width: the column's heading, or "-" for an absent value, line up with the values. */
static void as_string_format(const char *format, char *out, size_t size)
{
    size_t pre = strcspn(format, "%") + 1, spec;
    const char *p = format + pre;

    spec = strspn(p, "-+ #0");
    spec += strspn(p + spec, "0123456789");
    p += spec;
    if (*p == '.')
        p += 1 + strspn(p + 1, "0123456789");
    p += strspn(p, "l");
    snprintf(out, size, "%.*ss%s", (int)(pre + spec), format, *p != '\0' ? p + 1 : p);
}

/* Print with a format from the row table: not a literal, so the compiler cannot check it;
 * format_fits() has held it to the row's kind instead. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void put(FILE *to, const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    vfprintf(to, format, ap);
    va_end(ap);
}
#pragma GCC diagnostic pop

/* ---------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------- */

/* The member at a dotted path below doc, the first len bytes of path; NULL when absent. */
static json_t *member_at(json_t *doc, const char *path, size_t len)
{
    while (doc != NULL && len > 0) {
        size_t n = strcspn(path, ".");
        char key[64];

        if (n > len)
            n = len;
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        doc = json_object_get(doc, key);
        path += n;
        len -= n;
        if (len > 0) {
            path++;
            len--;
        }
    }
    return doc;
}

static bool present(enum kind kind, json_t *v)
{
    switch (kind) {
    case NUM:
        return json_is_number(v);
    case INT:
        return json_is_integer(v);
    case STR:
        return json_is_string(v);
    case YESNO:
        return json_is_boolean(v);
    case NOTES:
    case FIELD_NOTES:
        return json_is_array(v);
    case NONE:
        break;
    }
    return true;
}

/* The value v of row r with r's format, or "-" in its place when v is absent. */
static void put_value(FILE *to, const struct row *r, json_t *v)
{
    char dash[64];
    size_t i;
    json_t *item;

    if (!present(r->kind, v)) {
        if (r->kind == NOTES || r->kind == FIELD_NOTES)
            return;
        as_string_format(r->format, dash, sizeof dash);
        put(to, dash, "-");
        return;
    }
    switch (r->kind) {
    case NUM:
        put(to, r->format, json_number_value(v));
        break;
    case INT:
        put(to, r->format, (long long)json_integer_value(v));
        break;
    case STR:
        put(to, r->format, json_string_value(v));
        break;
    case YESNO:
        put(to, r->format, json_is_true(v) ? "yes" : "no");
        break;
    case NOTES:
        json_array_foreach (v, i, item)
            put(to, r->format, json_string_value(json_object_get(item, "message")));
        break;
    case FIELD_NOTES:
        json_array_foreach (v, i, item)
            put(to, r->format, json_string_value(json_object_get(item, "field")),
                json_string_value(json_object_get(item, "message")));
        break;
    case NONE:
        break;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Rows
 * ------------------------------------------------------------------------------------------- */

/* The array a column belongs to: the part of its path before "[]". */
static size_t array_len(const char *path)
{
    const char *brackets = strstr(path, "[]");

    return brackets != NULL ? (size_t)(brackets - path) : strlen(path);
}

/* The value of a column in one item: the part of its path after "[].". */
static json_t *cell(json_t *item, const char *path)
{
    const char *member = path + array_len(path) + 3;

    return member_at(item, member, strlen(member));
}

/* An OPTIONAL column is shown only when the first item has its value (ep: MoE plans only). */
static bool column_shown(const struct row *r, json_t *items)
{
    return !(r->flags & OPTIONAL) || present(r->kind, cell(json_array_get(items, 0), r->path));
}

/* The table of the columns rows[first..end) over the items of their array; returns end. */
static size_t put_columns(FILE *to, size_t first, unsigned view, json_t *answer)
{
    const char *path = rows[first].path;
    json_t *items = member_at(answer, path, array_len(path)), *item;
    size_t end = first, i;
    char heading[64];

    while (end < N_ROWS && rows[end].layout == COLUMN && (rows[end].views & view) &&
           strncmp(rows[end].path, path, array_len(path) + 2) == 0)
        end++;
    fputs("  #  ", to);
    for (size_t c = first; c < end; c++) {
        if (!column_shown(&rows[c], items))
            continue;
        as_string_format(rows[c].format, heading, sizeof heading);
        fputs(c > first ? " " : "", to);
        put(to, heading, rows[c].label);
    }
    fputc('\n', to);
    json_array_foreach (items, i, item) {
        fprintf(to, "%3zu  ", i + 1);
        for (size_t c = first; c < end; c++) {
            if (!column_shown(&rows[c], items))
                continue;
            fputs(c > first ? " " : "", to);
            put_value(to, &rows[c], cell(item, rows[c].path));
        }
        fputc('\n', to);
    }
    return end;
}

static void put_row(FILE *to, const struct row *r, json_t *answer)
{
    json_t *v = r->path != NULL ? member_at(answer, r->path, strlen(r->path)) : NULL;
    /* a heading with a path stands for that member: there when it is not null */
    bool have = r->kind == NONE ? v != NULL && !json_is_null(v) : present(r->kind, v);

    if (((r->flags & OPTIONAL) && !have) || ((r->flags & ABSENT) && have))
        return;
    switch (r->layout) {
    case PAIR:
        fprintf(to, "%-10s ", r->label);
        put_value(to, r, v);
        fputc('\n', to);
        break;
    case INDENTED:
        fprintf(to, "  %-12s ", r->label);
        put_value(to, r, v);
        fputc('\n', to);
        break;
    case HEADING:
        fprintf(to, "%s\n", r->label);
        break;
    case INLINE:
    case COLUMN:
        put_value(to, r, v);
        break;
    }
}

void cli_reply_print(FILE *to, enum cli_view view, json_t *answer)
{
    unsigned bit = 1u << view;

    /* A format that does not fit its kind would hand printf the wrong arguments: refuse the
     * whole view (a defect of the table above, which the command-table tests would show). */
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct row *r = &rows[i];

        if ((r->views & bit) && r->kind != NONE && !format_fits(r->format, conversions[r->kind])) {
            fprintf(stderr, "memwall: row %s: its format does not fit its kind\n", r->label);
            return;
        }
    }
    for (size_t i = 0; i < N_ROWS;) {
        if (!(rows[i].views & bit)) {
            i++;
        } else if (rows[i].layout == COLUMN) {
            i = put_columns(to, i, bit, answer);
        } else {
            put_row(to, &rows[i], answer);
            i++;
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Exit status
 * ------------------------------------------------------------------------------------------- */

bool cli_reply_is_problem(json_t *answer)
{
    return json_object_get(answer, "type") != NULL && json_object_get(answer, "status") != NULL;
}

int cli_reply_verdict(enum cli_view view, json_t *answer)
{
    if (cli_reply_is_problem(answer))
        return CLI_EXIT_BAD;
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct row *r = &rows[i];

        if (!(r->views & (1u << view)) || !(r->flags & DECIDES))
            continue;
        if (r->layout == COLUMN) {
            json_t *items = member_at(answer, r->path, array_len(r->path));

            return json_array_size(items) > 0 ? CLI_EXIT_OK : CLI_EXIT_NO;
        }
        return json_is_true(member_at(answer, r->path, strlen(r->path))) ? CLI_EXIT_OK
                                                                         : CLI_EXIT_NO;
    }
    return CLI_EXIT_OK;
}
