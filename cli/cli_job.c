/*
 * cli_job.c - `memwall CMD [--name value ...] [--json] [FILE|-]` into a request body.
 *
 * The inputs are the API's names as flags (`--seq_len 4096`, `--seq-len=4096`), a JSON job
 * file, or stdin (`-`); flags override the file's members. Flags are sent as JSON strings: the
 * api's field table decodes a JSON string exactly like a query value, so `--params 7B` means
 * what `?params=7B` means. A job file holding an array is a batch and is sent untouched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "core.h"
#include "cli.h"
#include "cli_job.h"
#include "cli_launch.h"

/* One input row as a help line: its values, then its default (from the core's input table). */
static void input_line(FILE *to, const struct core_input_spec *f)
{
    fprintf(to, "  --%-22s ", f->name);
    if (f->kind == CORE_KIND_INT || f->kind == CORE_KIND_SIZE || f->kind == CORE_KIND_REAL) {
        fprintf(to, "%s%.6g..%.6g%s%s", f->min_exclusive ? ">" : "", f->min, f->max,
                f->unit[0] != '\0' ? " " : "", f->unit);
        for (int i = 0; i < f->choice_count; i++) /* a number row's words */
            fprintf(to, " or %s", f->choices[i]);
    } else if (f->kind == CORE_KIND_CHOICE || f->kind == CORE_KIND_CHOICES) {
        for (int i = 0; i < f->choice_count; i++)
            fprintf(to, "%s%s", i ? "|" : "", f->choices[i]);
        if (f->kind == CORE_KIND_CHOICES)
            fprintf(to, ", or a comma-separated list");
    } else if (f->kind == CORE_KIND_BOOL || f->kind == CORE_KIND_FLAG)
        fprintf(to, "true|false");
    else
        fprintf(to, "%s",
                f->kind == CORE_KIND_PRESET    ? "a preset id"
                : f->kind == CORE_KIND_PRICES  ? "a price, or id=price pairs (USD per GPU-hour)"
                : f->kind == CORE_KIND_GPUS    ? "a GPU id, or a comma-separated list"
                : f->kind == CORE_KIND_GPU     ? "a GPU id"
                : f->kind == CORE_KIND_MODULES ? "module names, comma-separated"
                                               : "a JSON object (--config FILE)");
    if (f->default_doc != NULL)
        fprintf(to, "; default %s", f->default_doc);
    else if (f->kind == CORE_KIND_CHOICE)
        fprintf(to, "; default %s", f->choices[(int)f->dflt]);
    else if (f->kind == CORE_KIND_GPU)
        fprintf(to, "; default %s", core_gpus[(int)f->dflt].id);
    else if (f->kind == CORE_KIND_BOOL)
        fprintf(to, "; default %s", f->dflt != 0 ? "true" : "false");
    else
        fprintf(to, "; default %.6g", f->dflt);
    fputc('\n', to);
}
static int config_flag(const char *path, struct cli_job *job);

static void usage(FILE *to, const char *cmd)
{
    bool plan = strcmp(cmd, "plan") == 0, serve_plan = strcmp(cmd, "inference/plan") == 0;

    fprintf(to,
            "usage: memwall %s [--name value ...] [--json] [FILE|-]\n\n"
            "Answer POST /%s without a server. Inputs are the API's names as flags\n"
            "(--params 7B --seq_len 4096), a JSON job file, or '-' for stdin; flags override\n"
            "the file. --config FILE sends a Hugging Face config.json as the `config` input;\n"
            "--launch FILE reads a launch script, a torchtitan .toml, a ds_config .json or a\n"
            "Kubernetes manifest as megatron_args / torchtitan_config / deepspeed_config\n"
            "(docs/launch.md).\n"
            "--json prints exactly the HTTP reply body. Exit status: 0 ok (fits,\n"
            "plans found), 1 does not fit / no plan, 2 bad input (problem on stderr).\n\n"
            "Inputs (the core's input table; GET /inputs and docs/model.md say more):\n",
            cmd, cmd);
    for (size_t i = 0; i < core_input_count; i++)
        if (serve_plan &&
            (strcmp(core_inputs[i].name, "gpus") == 0 || strcmp(core_inputs[i].name, "tp") == 0 ||
             strcmp(core_inputs[i].name, "pp") == 0 ||
             core_serve_plan_input_find(core_inputs[i].name, strlen(core_inputs[i].name)) !=
                 &core_inputs[i]))
            continue;
        else if (!(plan && (core_inputs[i].planned ||
                            core_input_find(core_inputs[i].name, strlen(core_inputs[i].name),
                                            true) != &core_inputs[i])))
            input_line(to, &core_inputs[i]);
    if (plan)
        for (size_t i = 0; i < core_plan_input_count; i++)
            input_line(to, &core_plan_inputs[i]);
    if (strcmp(cmd, "inference") == 0)
        for (size_t i = 0; i < core_serve_input_count; i++)
            input_line(to, &core_serve_inputs[i]);
    if (strcmp(cmd, "inference/plan") == 0) { /* memwall plan --inference */
        for (size_t i = 0; i < core_serve_input_count; i++)
            if (core_serve_plan_input_find(core_serve_inputs[i].name,
                                           strlen(core_serve_inputs[i].name)) ==
                    &core_serve_inputs[i] &&
                strcmp(core_serve_inputs[i].name, "batching") != 0)
                input_line(to, &core_serve_inputs[i]);
        for (size_t i = 0; i < core_serve_plan_input_count; i++)
            input_line(to, &core_serve_plan_inputs[i]);
    }
}

const char *cli_option_value(int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');

    if (eq != NULL)
        return eq + 1;
    if (*i + 1 < argc)
        return argv[++*i];
    fprintf(stderr, "memwall: option '%s' needs a value\n", argv[*i]);
    return NULL;
}

int cli_job_parse(int argc, char **argv, struct cli_job *job)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq, *value;
        char name[64];
        size_t n;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout, job->cmd);
            return CLI_EXIT_OK;
        }
        if (strcmp(arg, "--json") == 0) {
            job->json = true;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (job->file != NULL) {
                fprintf(stderr, "memwall: one job file at most ('%s' and '%s')\n", job->file, arg);
                return CLI_EXIT_BAD;
            }
            job->file = arg;
            continue;
        }
        eq = strchr(arg, '=');
        n = eq != NULL ? (size_t)(eq - arg) - 2 : strlen(arg) - 2;
        if (n == 0 || n >= sizeof name) {
            fprintf(stderr, "memwall: bad option '%s'\n", arg);
            return CLI_EXIT_BAD;
        }
        memcpy(name, arg + 2, n);
        name[n] = '\0';
        for (size_t k = 0; k < n; k++) /* --seq-len is --seq_len */
            name[k] = name[k] == '-' ? '_' : name[k];
        value = cli_option_value(argc, argv, &i);
        if (value == NULL)
            return CLI_EXIT_BAD;
        if (strcmp(name, "launch") == 0) { /* a launch configuration (cli_launch.c) */
            if (cli_launch_read(value, job->flags) != 0)
                return CLI_EXIT_BAD;
            continue;
        }
        if (strcmp(name, "config") == 0) { /* a file whose JSON object is the input's value */
            if (config_flag(value, job) != 0)
                return CLI_EXIT_BAD;
            continue;
        }
        if (json_object_set_new(job->flags, name, json_string(value)) != 0) {
            fprintf(stderr, "memwall: option '%s': the value must be UTF-8\n", arg);
            return CLI_EXIT_BAD;
        }
    }
    return -1;
}

/* The whole of f, at most API_BODY_MAX + 1 bytes (more is refused by the api as 413). */
static char *slurp(FILE *f, size_t *len)
{
    size_t cap = API_BODY_MAX + 2, n = 0;
    char *buf = malloc(cap);

    if (buf == NULL)
        return NULL;
    while (n < cap - 1) {
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        if (got == 0)
            break;
        n += got;
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The job file's bytes (NUL-terminated), or NULL after reporting why not. */
static char *read_job_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *text;

    if (f == NULL) {
        fprintf(stderr, "memwall: cannot open '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    text = slurp(f, len);
    if (f != stdin)
        fclose(f);
    if (text == NULL)
        fprintf(stderr, "memwall: cannot read '%s'\n", path);
    return text;
}

/* --config FILE: the file's JSON object becomes the body's `config` member (the api decodes
 * and checks it; a config with a bad key is its 400). */
static int config_flag(const char *path, struct cli_job *job)
{
    size_t len = 0;
    char *text = read_job_file(path, &len);
    json_error_t err;
    json_t *doc;

    if (text == NULL)
        return -1;
    doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    free(text);
    if (doc == NULL || !json_is_object(doc)) {
        fprintf(stderr, "memwall: --config '%s' is not a JSON object (%s)\n", path,
                doc == NULL ? err.text : "another JSON value");
        json_decref(doc);
        return -1;
    }
    return json_object_set_new(job->flags, "config", doc) == 0 ? 0 : -1;
}

char *cli_job_body(const struct cli_job *job, size_t *len)
{
    char *text = NULL;
    json_t *doc;
    json_error_t err;

    *len = 0;
    if (job->file != NULL) {
        text = read_job_file(job->file, len);
        if (text == NULL || json_object_size(job->flags) == 0)
            return text;
    }
    if (text == NULL || *len == 0) {
        doc = json_incref(job->flags);
    } else {
        doc = json_loadb(text, *len, JSON_REJECT_DUPLICATES, &err);
        if (doc == NULL || !json_is_object(doc)) {
            fprintf(stderr, "memwall: flags can only be merged into a JSON object job (%s)\n",
                    doc == NULL ? err.text : "the file is not an object");
            json_decref(doc);
            free(text);
            return NULL;
        }
        json_object_update(doc, job->flags);
    }
    free(text);
    text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    *len = text != NULL ? strlen(text) : 0;
    return text;
}
