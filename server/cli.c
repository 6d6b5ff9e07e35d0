/*
 * cli.c - `memwall flops|memory|fit|runtime|plan [--name value ...] [--json] [FILE|-]`.
 *
 * A pipeline preflights a job without a server: the inputs are the API's names as flags
 * (`--seq_len 4096`, `--seq-len=4096`), a JSON job file, or stdin (`-`); flags override the
 * file's members. The request is answered by api_dispatch() in-process exactly as POST /<cmd>
 * would be, so flags are sent as JSON strings (the field table decodes a JSON string like a
 * query value) and `--json` prints the reply body byte for byte, followed by a newline. Without
 * --json a short table is printed instead. A job file holding an array is a batch.
 *
 * Exit status: 0 ok (for fit: it fits; for plan: plans were found), 1 it does not fit or no
 * plan qualifies, 2 bad input (the problem+json on stderr) or a usage error. For a batch, the
 * worst item decides.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api.h"
#include "cli.h"

#define EXIT_NO  1
#define EXIT_BAD 2

static const char *const commands[] = {"flops", "memory", "fit", "runtime", "plan"};

bool server_cli_is_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i]) == 0)
            return true;
    return false;
}

static void usage(FILE *to, const char *cmd)
{
    fprintf(to,
            "usage: memwall %s [--name value ...] [--json] [FILE|-]\n\n"
            "Answer POST /%s without a server. Inputs are the API's names as flags\n"
            "(--params 7B --seq_len 4096), a JSON job file, or '-' for stdin; flags override\n"
            "the file. --json prints exactly the HTTP reply body. Exit status: 0 ok (fits,\n"
            "plans found), 1 does not fit / no plan, 2 bad input (problem on stderr).\n",
            cmd, cmd);
}

/* ---------------------------------------------------------------------------------------------
 * Input
 * ------------------------------------------------------------------------------------------- */

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

struct job {
    const char *cmd;
    bool json;
    const char *file; /* NULL, a path, or "-" */
    json_t *flags;    /* {name: "value"} */
};

/* Parse argv into job; returns -1 to go on, else an exit status (already reported). */
const char *server_cli_option_value(int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');

    if (eq != NULL)
        return eq + 1;
    if (*i + 1 < argc)
        return argv[++*i];
    fprintf(stderr, "memwall: option '%s' needs a value\n", argv[*i]);
    return NULL;
}

static int parse_args(int argc, char **argv, struct job *job)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq, *value;
        char name[64];
        size_t n;

        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout, job->cmd);
            return 0;
        }
        if (strcmp(arg, "--json") == 0) {
            job->json = true;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (job->file != NULL) {
                fprintf(stderr, "memwall: one job file at most ('%s' and '%s')\n", job->file, arg);
                return EXIT_BAD;
            }
            job->file = arg;
            continue;
        }
        eq = strchr(arg, '=');
        n = eq != NULL ? (size_t)(eq - arg) - 2 : strlen(arg) - 2;
        if (n == 0 || n >= sizeof name) {
            fprintf(stderr, "memwall: bad option '%s'\n", arg);
            return EXIT_BAD;
        }
        memcpy(name, arg + 2, n);
        name[n] = '\0';
        for (size_t k = 0; k < n; k++) /* --seq-len is --seq_len */
            name[k] = name[k] == '-' ? '_' : name[k];
        value = server_cli_option_value(argc, argv, &i);
        if (value == NULL)
            return EXIT_BAD;
        if (json_object_set_new(job->flags, name, json_string(value)) != 0) {
            fprintf(stderr, "memwall: option '%s': the value must be UTF-8\n", arg);
            return EXIT_BAD;
        }
    }
    return -1;
}

/* The request body: the file's bytes untouched when no flag is given, else the file's object
 * with the flags merged over it. NULL after reporting a problem. */
static char *request_body(const struct job *job, size_t *len)
{
    char *text = NULL;
    json_t *doc;
    json_error_t err;

    *len = 0;
    if (job->file != NULL) {
        FILE *f = strcmp(job->file, "-") == 0 ? stdin : fopen(job->file, "rb");
        if (f == NULL) {
            fprintf(stderr, "memwall: cannot open '%s': %s\n", job->file, strerror(errno));
            return NULL;
        }
        text = slurp(f, len);
        if (f != stdin)
            fclose(f);
        if (text == NULL) {
            fprintf(stderr, "memwall: cannot read '%s'\n", job->file);
            return NULL;
        }
        if (json_object_size(job->flags) == 0)
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

/* ---------------------------------------------------------------------------------------------
 * Output: a short readable table per route
 * ------------------------------------------------------------------------------------------- */

static double num(json_t *doc, const char *a, const char *b, const char *c)
{
    json_t *v = json_object_get(doc, a);

    if (b != NULL)
        v = json_object_get(v, b);
    if (c != NULL)
        v = json_object_get(v, c);
    return json_number_value(v);
}

static void print_memory(json_t *doc)
{
    static const char *const segments[] = {"params",      "grads",   "optimizer",
                                           "activations", "reserve", "total"};
    json_t *pg = json_object_get(json_object_get(doc, "memory"), "per_gpu");

    printf("per-GPU memory (GB)\n");
    for (size_t i = 0; i < sizeof segments / sizeof segments[0]; i++)
        printf("  %-12s %12.3f\n", segments[i],
               json_number_value(json_object_get(json_object_get(pg, segments[i]), "gb")));
}

static void print_notes(json_t *doc, const char *key, const char *label)
{
    size_t i;
    json_t *n;

    json_array_foreach (json_object_get(doc, key), i, n)
        printf("%s: %s\n", label, json_string_value(json_object_get(n, "message")));
}

static void print_plan_row(json_t *p, size_t i)
{
    json_t *cost = json_object_get(p, "cost_usd");
    char money[32] = "-";

    if (json_is_number(cost))
        snprintf(money, sizeof money, "%.0f", json_number_value(cost));
    printf("%3zu  %-14s %6lld %3lld %3lld %5lld %4lld %-9s %6lld %9.2f %12.0f %13s %6.3f %8.2f\n",
           i + 1, json_string_value(json_object_get(p, "gpu")),
           (long long)json_integer_value(json_object_get(p, "gpus")),
           (long long)json_integer_value(json_object_get(p, "tp")),
           (long long)json_integer_value(json_object_get(p, "pp")),
           (long long)json_integer_value(json_object_get(p, "dp")),
           (long long)json_integer_value(json_object_get(p, "zero_stage")),
           json_string_value(json_object_get(p, "checkpointing")),
           (long long)json_integer_value(json_object_get(p, "batch")), num(p, "days", NULL, NULL),
           num(p, "gpu_hours", NULL, NULL), money, num(p, "mfu", NULL, NULL),
           num(p, "memory_per_gpu", "total", "gb"));
}

static void print_plan(json_t *doc)
{
    size_t i;
    json_t *p;

    printf("  #  %-14s %6s %3s %3s %5s %4s %-9s %6s %9s %12s %13s %6s %8s\n", "gpu", "gpus", "tp",
           "pp", "dp", "zero", "ckpt", "batch", "days", "gpu_hours", "cost_usd", "mfu", "mem_gb");
    json_array_foreach (json_object_get(doc, "plans"), i, p)
        print_plan_row(p, i);
    printf("ranked by %s; %lld configurations evaluated, %lld feasible, %.3f s\n",
           json_string_value(json_object_get(doc, "ranked_by")),
           (long long)json_integer_value(json_object_get(doc, "evaluated")),
           (long long)json_integer_value(json_object_get(doc, "feasible")),
           num(doc, "elapsed_seconds", NULL, NULL));
    json_array_foreach (json_object_get(doc, "reasons"), i, p)
        printf("no plan: %s: %s\n", json_string_value(json_object_get(p, "field")),
               json_string_value(json_object_get(p, "message")));
}

static void print_table(const char *cmd, json_t *doc)
{
    if (strcmp(cmd, "plan") == 0) {
        print_plan(doc);
        return;
    }
    if (strcmp(cmd, "flops") == 0) {
        printf("six_nd     %.6g FLOPs\nmodel      %.6g FLOPs\nhardware   %.6g FLOPs\n"
               "attention  %.3f of the model FLOPs\n",
               num(doc, "flops", "six_nd", NULL), num(doc, "flops", "model", NULL),
               num(doc, "flops", "hardware", NULL), num(doc, "flops", "attention_fraction", NULL));
    } else if (strcmp(cmd, "runtime") == 0) {
        json_t *cost = json_object_get(json_object_get(doc, "runtime"), "cost_usd");
        printf("days       %.2f\ngpu_hours  %.0f\ntokens/s   %.0f\nmfu        %.3f\n",
               num(doc, "runtime", "days", NULL), num(doc, "runtime", "gpu_hours", NULL),
               num(doc, "runtime", "tokens_per_second", NULL), num(doc, "runtime", "mfu", NULL));
        if (json_is_number(cost))
            printf("cost_usd   %.0f\n", json_number_value(cost));
    } else {
        print_memory(doc);
        if (strcmp(cmd, "fit") == 0) {
            json_t *fit = json_object_get(doc, "fit");
            printf("fits: %s (%.3f GB capacity, %.3f GB headroom, bottleneck %s)\n",
                   json_is_true(json_object_get(fit, "fits")) ? "yes" : "no",
                   num(fit, "capacity", "gb", NULL), num(fit, "headroom", "gb", NULL),
                   json_string_value(json_object_get(fit, "bottleneck")));
            print_notes(doc, "advice", "advice");
        }
    }
    print_notes(doc, "warnings", "warning");
}

static void print_problem(json_t *doc)
{
    size_t i;
    json_t *e;

    fprintf(stderr, "memwall: %lld %s: %s\n",
            (long long)json_integer_value(json_object_get(doc, "status")),
            json_string_value(json_object_get(doc, "title")),
            json_string_value(json_object_get(doc, "detail")));
    json_array_foreach (json_object_get(doc, "errors"), i, e)
        fprintf(stderr, "  %s: %s\n", json_string_value(json_object_get(e, "field")),
                json_string_value(json_object_get(e, "message")));
}

/* Exit status of one answer (a reply object or a problem). */
static int verdict(const char *cmd, json_t *doc)
{
    if (json_object_get(doc, "type") != NULL && json_object_get(doc, "status") != NULL)
        return EXIT_BAD;
    if (strcmp(cmd, "fit") == 0)
        return json_is_true(json_object_get(json_object_get(doc, "fit"), "fits")) ? 0 : EXIT_NO;
    if (strcmp(cmd, "plan") == 0)
        return json_array_size(json_object_get(doc, "plans")) > 0 ? 0 : EXIT_NO;
    return 0;
}

/* One answer in table form; problems go to stderr. Returns its exit status. */
static int show(const char *cmd, json_t *doc)
{
    int code = verdict(cmd, doc);

    if (code == EXIT_BAD)
        print_problem(doc);
    else
        print_table(cmd, doc);
    return code;
}

static int report(const struct job *job, const struct api_response *resp)
{
    json_t *doc = json_loadb(resp->body, resp->body_len, 0, NULL), *item;
    int code = 0;
    size_t i;

    if (doc == NULL) {
        fprintf(stderr, "memwall: no reply (status %u)\n", resp->status);
        return EXIT_BAD;
    }
    if (json_is_array(doc)) {
        json_array_foreach (doc, i, item) {
            int c = verdict(job->cmd, item);
            if (!job->json) {
                printf("--- item %zu\n", i + 1);
                c = show(job->cmd, item);
            } else if (c == EXIT_BAD) {
                print_problem(item);
            }
            code = c > code ? c : code;
        }
    } else if (job->json) {
        code = verdict(job->cmd, doc);
        if (code == EXIT_BAD)
            print_problem(doc);
    } else {
        code = show(job->cmd, doc);
    }
    json_decref(doc);
    return code;
}

int server_cli(int argc, char **argv)
{
    struct job job = {argv[0], false, NULL, json_object()};
    struct api_request req;
    struct api_response resp;
    char path[16];
    char *body;
    size_t len = 0;
    int code;

    if (job.flags == NULL)
        return EXIT_BAD;
    code = parse_args(argc, argv, &job);
    body = code < 0 ? request_body(&job, &len) : NULL;
    json_decref(job.flags);
    if (code >= 0)
        return code;
    if (body == NULL)
        return EXIT_BAD;
    snprintf(path, sizeof path, "/%s", job.cmd);
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = path;
    req.body = body;
    req.body_len = len;
    req.content_type = "application/json";
    memset(&resp, 0, sizeof resp);
    if (!api_dispatch(&req, &resp)) {
        free(body);
        return EXIT_BAD;
    }
    if (resp.status != 200) {
        /* The whole request failed (400, 413, 422): the problem goes to stderr. */
        if (job.json) {
            fwrite(resp.body, 1, resp.body_len, stderr);
            fputc('\n', stderr);
        } else {
            report(&job, &resp);
        }
        code = EXIT_BAD;
    } else {
        if (job.json) {
            fwrite(resp.body, 1, resp.body_len, stdout);
            fputc('\n', stdout);
        }
        code = report(&job, &resp);
    }
    api_response_free(&resp);
    free(body);
    return code;
}
