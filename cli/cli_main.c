/*
 * cli_main.c - `memwall flops|memory|fit|runtime|plan|inference [--name value ...] [--json]
 * [FILE|-]`.
 *
 * A pipeline preflights a job without a server. The request (cli_job.c) is answered by
 * api_dispatch() in-process exactly as POST /<cmd> would be, so `--json` prints the reply
 * body byte for byte, followed by a newline; without --json each answer is printed as its
 * table (cli_reply.c), "--- item N" before each item of a batch.
 *
 * Exit status (cli.h): 0 ok (for fit: it fits; for plan: plans were found), 1 it does not fit
 * or no plan qualifies, 2 bad input (the problem on stderr) or a usage error. For a batch, the
 * worst item decides.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api.h"
#include "cli.h"
#include "cli_job.h"
#include "cli_reply.h"

bool cli_is_command(const char *name)
{
    return cli_view_of(name) >= 0;
}

/* One answer: its exit status; its table on stdout unless quiet, or its problem on stderr. */
static int show(enum cli_view view, json_t *answer, bool quiet)
{
    int code = cli_reply_verdict(view, answer);

    if (code == CLI_EXIT_BAD)
        cli_reply_print(stderr, CLI_VIEW_PROBLEM, answer);
    else if (!quiet)
        cli_reply_print(stdout, view, answer);
    return code;
}

/* Read the reply body: a single answer or, for a batch, an array of them. With --json only the
 * exit status and the problems (on stderr) come from here. */
static int report(const struct cli_job *job, enum cli_view view, const struct api_response *resp)
{
    json_t *doc = json_loadb(resp->body, resp->body_len, 0, NULL), *item;
    int code = CLI_EXIT_OK;
    size_t i;

    if (doc == NULL) {
        fprintf(stderr, "memwall: no reply (status %u)\n", resp->status);
        return CLI_EXIT_BAD;
    }
    if (!json_is_array(doc)) {
        code = show(view, doc, job->json);
    } else {
        json_array_foreach (doc, i, item) {
            int c;

            if (!job->json)
                printf("--- item %zu\n", i + 1);
            c = show(view, item, job->json);
            code = c > code ? c : code;
        }
    }
    json_decref(doc);
    return code;
}

/* Answer body as POST /<cmd> and report; returns the exit status. */
static int answer(const struct cli_job *job, enum cli_view view, const char *body, size_t len)
{
    struct api_request req;
    struct api_response resp;
    char path[32];
    int code;

    snprintf(path, sizeof path, "/%s", job->cmd);
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = path;
    req.body = body;
    req.body_len = len;
    req.content_type = "application/json";
    memset(&resp, 0, sizeof resp);
    if (!api_dispatch(&req, &resp))
        return CLI_EXIT_BAD;
    if (resp.status != 200 && job->json) {
        /* The whole request failed (400, 413, 422): the problem goes to stderr. */
        fwrite(resp.body, 1, resp.body_len, stderr);
        fputc('\n', stderr);
        code = CLI_EXIT_BAD;
    } else {
        if (job->json) {
            fwrite(resp.body, 1, resp.body_len, stdout);
            fputc('\n', stdout);
        }
        code = report(job, view, &resp);
        if (resp.status != 200)
            code = CLI_EXIT_BAD;
    }
    api_response_free(&resp);
    return code;
}

/* `memwall plan --inference`: the serving planner (POST /inference/plan). Drops the flag from
 * argv (argc updated) and returns true when it was there. */
static bool serve_plan_flag(int *argc, char **argv)
{
    bool found = false;
    int k = 1;

    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--inference") == 0)
            found = true;
        else
            argv[k++] = argv[i];
    }
    *argc = k;
    return found;
}

int cli_main(int argc, char **argv)
{
    struct cli_job job = {argv[0], false, NULL, json_object()};
    int view = cli_view_of(argv[0]);
    char *body;
    size_t len = 0;
    int code;

    if (view == CLI_VIEW_PLAN && serve_plan_flag(&argc, argv)) {
        job.cmd = "inference/plan";
        view = CLI_VIEW_SERVE_PLAN;
    }
    if (view < 0 || job.flags == NULL) {
        json_decref(job.flags);
        return CLI_EXIT_BAD;
    }
    code = cli_job_parse(argc, argv, &job);
    body = code < 0 ? cli_job_body(&job, &len) : NULL;
    json_decref(job.flags);
    if (code >= 0)
        return code;
    if (body == NULL)
        return CLI_EXIT_BAD;
    code = answer(&job, (enum cli_view)view, body, len);
    free(body);
    return code;
}
