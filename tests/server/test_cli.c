/*
 * test_cli.c - the memwall executable itself (its path is argv[1]): --version and --help, bad
 * flags and values exit 2 naming the culprit, and `memwall serve --port 0` prints its one
 * "listening" JSON line, answers HTTP on the port it names and exits 0 on SIGTERM or SIGINT
 * after a "stopped" line. No fixed ports: the daemon picks one and the test reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <curl/curl.h>
#include <jansson.h>

#include "http.h"
#include "check_main.h"

static const char *memwall; /* path of the binary under test */

struct child {
    pid_t pid;
    int out, err; /* read ends of its stdout and stderr */
};

extern char **environ;

/* Drop every MEMWALL_* variable, so the caller's shell cannot change what a test sees. */
static void clear_memwall_env(void)
{
    for (bool again = true; again;) {
        again = false;
        for (char **e = environ; *e != NULL; e++) {
            if (strncmp(*e, "MEMWALL_", 8) == 0) {
                char name[128];

                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
                again = true;
                break;
            }
        }
    }
}

/* Start memwall with args (NULL-terminated) and, if env is not NULL, "NAME=value" settings
 * added to the environment. The rest of the environment is kept but MEMWALL_* is cleared. */
static struct child spawn(const char *const *args, const char *const *env)
{
    struct child c;
    int out[2], err[2];

    ck_assert_int_eq(pipe(out), 0);
    ck_assert_int_eq(pipe(err), 0);
    c.pid = fork();
    ck_assert_int_ge(c.pid, 0);
    if (c.pid == 0) {
        char *argv[16];
        size_t n = 0;

        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(out[0]);
        close(out[1]);
        close(err[0]);
        close(err[1]);
        clear_memwall_env();
        for (const char *const *e = env; e != NULL && *e != NULL; e++) {
            char name[64];
            const char *eq = strchr(*e, '=');

            snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
            setenv(name, eq + 1, 1);
        }
        argv[n++] = (char *)memwall;
        for (const char *const *a = args; *a != NULL && n < 15; a++)
            argv[n++] = (char *)*a;
        argv[n] = NULL;
        execv(memwall, argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    c.out = out[0];
    c.err = err[0];
    return c;
}

/* Read fd into buf until EOF or timeout_ms of silence (or a newline when one_line). */
static size_t slurp(int fd, char *buf, size_t size, int timeout_ms, bool one_line)
{
    size_t got = 0;

    while (got + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        n = read(fd, buf + got, one_line ? 1 : size - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        if (one_line && buf[got - 1] == '\n')
            break;
    }
    buf[got] = '\0';
    return got;
}

/* Read lines until one holds needle (e.g. "\"event\":\"listening\""), skipping others such as a
 * warning the environment causes (a low descriptor limit logs "fd_limit" before listening).
 * Returns false, with the last line read in buf, when no such line comes. */
static bool slurp_until(int fd, char *buf, size_t size, const char *needle)
{
    for (int i = 0; i < 16; i++) {
        if (slurp(fd, buf, size, 10000, true) == 0)
            return false;
        if (strstr(buf, needle) != NULL)
            return true;
    }
    return false;
}

static int wait_exit(pid_t pid)
{
    int status;

    for (int i = 0; i < 200; i++) {
        pid_t r = waitpid(pid, &status, WNOHANG);

        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        nanosleep(&(struct timespec){.tv_nsec = 50000000L}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ck_abort_msg("memwall did not exit within 10 s");
    return -1;
}

/* Run to completion; returns the exit status, stdout and stderr in out/err. */
static int run(const char *const *args, const char *const *env, char *out, size_t out_size,
               char *err, size_t err_size)
{
    struct child c = spawn(args, env);
    int status;

    slurp(c.out, out, out_size, 10000, false);
    slurp(c.err, err, err_size, 10000, false);
    status = wait_exit(c.pid);
    close(c.out);
    close(c.err);
    return status;
}

START_TEST(test_version)
{
    const char *const args[] = {"--version", NULL};
    char out[256], err[256];

    ck_assert_int_eq(run(args, NULL, out, sizeof out, err, sizeof err), 0);
    ck_assert_str_eq(out, "memwall " MEMWALL_VERSION "\n");
}
END_TEST

START_TEST(test_help)
{
    const char *const top[] = {"--help", NULL};
    const char *const serve[] = {"serve", "--help", NULL};
    static const char *const wanted[] = {"--bind",    "MEMWALL_BIND",    "127.0.0.1",
                                         "--port",    "MEMWALL_PORT",    "8080",
                                         "--threads", "MEMWALL_THREADS", "CPUs"};
    char out[4096], err[1024];

    ck_assert_int_eq(run(top, NULL, out, sizeof out, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(out, "memwall serve"));
    ck_assert_int_eq(run(serve, NULL, out, sizeof out, err, sizeof err), 0);
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        ck_assert_msg(strstr(out, wanted[i]) != NULL, "serve --help lacks %s:\n%s", wanted[i], out);
}
END_TEST

/* Every bad flag or value: exit 2, a message on stderr naming it, nothing on stdout. */
START_TEST(test_bad_usage)
{
    static const struct {
        const char *args[4];
        const char *env;
        const char *named;
    } cases[] = {
        {{"serve", "--bogus", NULL}, NULL, "--bogus"},
        {{"serve", "--port", "70000", NULL}, NULL, "70000"},
        {{"serve", "--port=abc", NULL}, NULL, "abc"},
        {{"serve", "--threads", "0", NULL}, NULL, "--threads"},
        {{"serve", "--threads", "257", NULL}, NULL, "--threads"},
        {{"serve", "--bind", "not-an-address", NULL}, NULL, "not-an-address"},
        {{"serve", "--port", NULL}, NULL, "--port"},
        {{"fit", "--params", NULL}, NULL, "--params"}, /* the commands share the option parser */
        {{"inference", "--engine", "vllm2", NULL}, NULL, "engine"}, /* a bad serving input: 2 */
        {{"serve", NULL}, "MEMWALL_PORT=abc", "MEMWALL_PORT"},
        {{"serve", NULL}, "MEMWALL_THREADS=0", "MEMWALL_THREADS"},
        {{"serve", NULL}, "MEMWALL_BIND=999.1.1.1", "MEMWALL_BIND"},
        {{"frobnicate", NULL}, NULL, "frobnicate"},
        {{"--bogus", NULL}, NULL, "--bogus"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const env[] = {cases[i].env, NULL};
        char out[1024], err[1024];
        int status = run(cases[i].args, env, out, sizeof out, err, sizeof err);

        ck_assert_msg(status == 2, "case %zu (%s): exit %d", i, cases[i].named, status);
        ck_assert_msg(strstr(err, cases[i].named) != NULL, "case %zu: stderr lacks %s: %s", i,
                      cases[i].named, err);
        ck_assert_msg(out[0] == '\0', "case %zu: stdout not empty: %s", i, out);
    }
}
END_TEST

/* The tables of the commands (cli/cli_reply.c), each value derived by hand. A value the row
 * table cannot find in the reply prints as "-": none may, so a renamed reply member fails here. */
START_TEST(test_command_tables)
{
    static const struct {
        const char *args[8];
        int status;
        const char *lines[4];
    } cases[] = {
        /* 6 N D = 6 * 1e9 * 1e9 */
        {{"flops", "--params", "1e9", "--tokens", "1e9", NULL}, 0, {"six_nd     6e+18 FLOPs\n"}},
        /* 7B in bf16 with Adam: 2 bytes a parameter of weights and of gradients, 12 of fp32
         * master weights and moments, in GB of 1e9 bytes */
        {{"memory", "--params", "7B", NULL},
         0,
         {"per-GPU memory (GB)\n", "  params             14.000\n", "  grads              14.000\n",
          "  optimizer          84.000\n"}},
        /* 14 + 14 + 84 = 112 GB of state cannot fit in an H100's 80 GB */
        {{"fit", "--params", "7B", "--gpu", "h100-sxm", NULL}, 1, {"fits: no (80.000 GB capacity"}},
        /* no price, no cost row */
        {{"runtime", NULL}, 0, {"days       ", "mfu        "}},
        /* LoRA on q, v of Llama 3 8B (tests/core/test_core_adapters.c): 3,407,872 fp32 adapter
         * parameters = 13,631,488 bytes; the frozen bf16 base 8,030,261,248 x 2 bytes */
        {{"memory", "--model", "llama3-8b", "--finetune", "lora", NULL},
         0,
         {"adapters: 3407872 trainable parameters, 0.014 GB; frozen base 16.061 GB\n"}},
        /* A plan's table gives the whole layout to launch: the interleaved stages and cp, and
         * for a mixture of experts (Qwen3-30B-A3B's 128) the expert parallelism too (it had
         * only tp, pp, dp); a dense model's table has no ep column */
        {{"plan", "--model", "qwen3-30b-a3b", "--usd_per_gpu_hour", "h100-sxm=2", "--gpus_max", "8",
          NULL},
         0,
         {" gpus  tp  pp  v  cp   ep    dp zero "}},
        {{"plan", "--model", "llama3-8b", "--usd_per_gpu_hour", "h100-sxm=2", "--gpus_max", "8",
          NULL},
         0,
         {" gpus  tp  pp  v  cp    dp zero "}},
        /* Llama 3 8B on an H100: KV 32 layers x 2 x 8 heads x 128 x 2 bytes = 131,072 per token;
         * it serves (exit 0) */
        {{"inference", "--model", "llama3-8b", NULL},
         0,
         {"per-GPU memory (GiB)\n", "  bytes/token        131072\n", "serves: yes\n"}},
        /* Llama 3 70B in bf16 (131 GiB of weights) on one 80 GB H100 does not (exit 1), so it
         * is not timed: the time heading says so rather than standing over nothing */
        {{"inference", "--model", "llama3-70b", NULL},
         1,
         {"serves: no\n", "advice: ", "time: none (docs/serving.md, \"Time\"): the replica"}},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[4096], err[1024];
        int status = run(cases[i].args, NULL, out, sizeof out, err, sizeof err);

        ck_assert_msg(status == cases[i].status, "%s: exit %d, stderr %s", cases[i].args[0], status,
                      err);
        for (size_t k = 0; k < 4 && cases[i].lines[k] != NULL; k++)
            ck_assert_msg(strstr(out, cases[i].lines[k]) != NULL, "%s lacks '%s':\n%s",
                          cases[i].args[0], cases[i].lines[k], out);
        ck_assert_msg(strstr(out, " -\n") == NULL && strstr(out, " - ") == NULL &&
                          strstr(err, "format") == NULL,
                      "%s: a value missing from the table:\n%s", cases[i].args[0], out);
        if (strcmp(cases[i].args[0], "runtime") == 0)
            ck_assert_ptr_null(strstr(out, "cost_usd"));
        if (cases[i].status == 1 && strcmp(cases[i].args[0], "inference") == 0)
            ck_assert_msg(strstr(out, "time (docs") == NULL, "an empty time table:\n%s", out);
    }
}
END_TEST

/* --config FILE sends the file's object as the `config` input. Mixtral's config on 8 GPUs with
 * ep 8 at ZeRO 0: each GPU holds the 1,605,636,096 non-expert weights and 1/8 of the
 * 45,097,156,608 expert weights, 2 bytes each: 14,485,561,344 bytes = 14.486 GB. A file that is
 * not a JSON object is bad input (2). */
START_TEST(test_config_flag)
{
    static const char mixtral[] =
        "{\"model_type\":\"mixtral\",\"hidden_size\":4096,\"intermediate_size\":14336,"
        "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":8,"
        "\"vocab_size\":32000,\"num_local_experts\":8,\"num_experts_per_tok\":2}";
    char path[] = "/tmp/memwall-config-XXXXXX", out[4096], err[1024];
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, mixtral, sizeof mixtral - 1) == (ssize_t)(sizeof mixtral - 1));
    close(fd);
    {
        const char *const args[] = {"memory", "--config", path,           "--gpus", "8",
                                    "--ep",   "8",        "--zero_stage", "0",      NULL};
        int status = run(args, NULL, out, sizeof out, err, sizeof err);

        ck_assert_msg(status == 0, "exit %d, stderr %s", status, err);
        ck_assert_msg(strstr(out, "  params             14.486\n") != NULL, "%s", out);
    }
    fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, "[1]", 3) == 3);
    close(fd);
    {
        const char *const args[] = {"fit", "--config", path, NULL};

        ck_assert_int_eq(run(args, NULL, out, sizeof out, err, sizeof err), 2);
        ck_assert_msg(strstr(err, "--config") != NULL, "%s", err);
    }
    unlink(path);
}
END_TEST

/* Serve on an ephemeral port, talk to it, stop it with sig: exit 0 and a "stopped" line.
 * MEMWALL_PORT=1 in the environment shows the flag winning over it. */
static void serve_and_stop(int sig)
{
    const char *const args[] = {"serve", "--port", "0", "--threads", "2", NULL};
    const char *const env[] = {"MEMWALL_PORT=1", NULL};
    struct child c = spawn(args, env);
    char line[1024], rest[8192], target[128], err[1024];
    struct http_reply r;
    json_error_t jerr;
    json_t *doc;
    long long port;
    const char *when;

    slurp_until(c.out, line, sizeof line, "\"event\":\"listening\"");
    doc = json_loads(line, 0, &jerr);
    if (doc == NULL) {
        slurp(c.err, err, sizeof err, 200, false);
        kill(c.pid, SIGKILL);
        ck_abort_msg("no JSON listening line: '%s' (%s); stderr: %s", line, jerr.text, err);
    }
    ck_assert_str_eq(json_string_value(json_object_get(doc, "event")), "listening");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "level")), "info");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "bind")), "127.0.0.1");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "version")), MEMWALL_VERSION);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "threads")), 2);
    when = json_string_value(json_object_get(doc, "time"));
    ck_assert_msg(when != NULL && strlen(when) >= 20 && when[4] == '-' && when[10] == 'T' &&
                      when[strlen(when) - 1] == 'Z',
                  "time %s", when ? when : "(none)");
    port = json_integer_value(json_object_get(doc, "port"));
    ck_assert_msg(port > 0 && port < 65536, "port %lld", port);
    json_decref(doc);

    snprintf(target, sizeof target, "http://127.0.0.1:%lld/healthz", port);
    ck_assert(http_get(target, &r));
    ck_assert_int_eq(r.status, 200);
    http_reply_free(&r);

    ck_assert_int_eq(kill(c.pid, sig), 0);
    ck_assert_int_eq(wait_exit(c.pid), 0);
    slurp(c.out, rest, sizeof rest, 2000, false);
    /* the /healthz request, draining, stopped: each a JSON line with time and level; the
     * request line is written when its reply is done, which may be after "draining" */
    {
        static const char *const events[] = {"request", "draining", "stopped"};
        bool seen[3] = {false, false, false};
        const char *last = "";
        char *save = NULL;

        for (char *l = strtok_r(rest, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
            const char *event;
            size_t i = 0;

            doc = json_loads(l, 0, &jerr);
            ck_assert_msg(doc != NULL, "not JSON: '%s'", l);
            ck_assert(json_is_string(json_object_get(doc, "time")));
            ck_assert(json_is_string(json_object_get(doc, "level")));
            event = json_string_value(json_object_get(doc, "event"));
            while (i < 3 && strcmp(event, events[i]) != 0)
                i++;
            ck_assert_msg(i < 3 && !seen[i], "unexpected line: %s", l);
            seen[i] = true;
            last = events[i];
            if (i == 1)
                ck_assert_str_eq(json_string_value(json_object_get(doc, "signal")),
                                 sig == SIGINT ? "SIGINT" : "SIGTERM");
            if (i == 2) {
                ck_assert(json_is_true(json_object_get(doc, "drained")));
                ck_assert_int_eq(json_integer_value(json_object_get(doc, "in_flight_cut")), 0);
            }
            json_decref(doc);
        }
        ck_assert(seen[0] && seen[1] && seen[2]);
        ck_assert_str_eq(last, "stopped");
    }
    close(c.out);
    close(c.err);
}

START_TEST(test_serve_sigterm)
{
    serve_and_stop(SIGTERM);
}
END_TEST

START_TEST(test_serve_sigint)
{
    serve_and_stop(SIGINT);
}
END_TEST

/* Every setting refuses a bad value, as a flag and as its variable, naming which. */
START_TEST(test_every_setting_bad_value)
{
    static const struct {
        const char *flag, *env, *bad;
    } cases[] = {
        {"--bind", "MEMWALL_BIND", "localhost"},
        {"--port", "MEMWALL_PORT", "-1"},
        {"--threads", "MEMWALL_THREADS", "many"},
        {"--max-body-bytes", "MEMWALL_MAX_BODY_BYTES", "65537"}, /* over API_BODY_MAX */
        {"--max-uri-bytes", "MEMWALL_MAX_URI_BYTES", "32769"},
        {"--connection-timeout", "MEMWALL_CONNECTION_TIMEOUT", "0"},
        {"--max-connections", "MEMWALL_MAX_CONNECTIONS", "0"},
        {"--max-connections-per-ip", "MEMWALL_MAX_CONNECTIONS_PER_IP", "1e3"},
        {"--cors-origins", "MEMWALL_CORS_ORIGINS", "https://a.example/"},
        {"--log-format", "MEMWALL_LOG_FORMAT", "xml"},
        {"--log-level", "MEMWALL_LOG_LEVEL", "loud"},
        {"--access-log", "MEMWALL_ACCESS_LOG", "maybe"},
        {"--shutdown-grace", "MEMWALL_SHUTDOWN_GRACE", "3601"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[1024], err[1024], env_line[160];
        const char *const flag_args[] = {"serve", cases[i].flag, cases[i].bad, NULL};
        const char *const env_args[] = {"serve", NULL};
        const char *const env[] = {env_line, NULL};
        int status;

        status = run(flag_args, NULL, out, sizeof out, err, sizeof err);
        ck_assert_msg(status == 2, "%s %s: exit %d", cases[i].flag, cases[i].bad, status);
        ck_assert_msg(strstr(err, cases[i].flag) != NULL, "stderr lacks %s: %s", cases[i].flag,
                      err);
        ck_assert_msg(out[0] == '\0', "stdout not empty: %s", out);

        snprintf(env_line, sizeof env_line, "%s=%s", cases[i].env, cases[i].bad);
        status = run(env_args, env, out, sizeof out, err, sizeof err);
        ck_assert_msg(status == 2, "%s: exit %d", env_line, status);
        ck_assert_msg(strstr(err, cases[i].env) != NULL, "stderr lacks %s: %s", cases[i].env, err);
    }
}
END_TEST

/* Start, read the listening and config lines, stop with SIGTERM. Returns the config line. */
static json_t *config_of(const char *const *args, const char *const *env)
{
    struct child c = spawn(args, env);
    char line[4096];
    json_t *listening, *config;

    slurp(c.out, line, sizeof line, 10000, true);
    config = json_loads(line, 0, NULL);
    ck_assert_msg(config != NULL, "no config line: %s", line);
    ck_assert_str_eq(json_string_value(json_object_get(config, "event")), "config");
    slurp_until(c.out, line, sizeof line, "\"event\":\"listening\"");
    listening = json_loads(line, 0, NULL);
    ck_assert_msg(listening != NULL, "no listening line: %s", line);
    ck_assert_str_eq(json_string_value(json_object_get(listening, "event")), "listening");
    json_decref(listening);
    kill(c.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(c.pid), 0);
    close(c.out);
    close(c.err);
    return config;
}

/* Defaults, then the environment over the defaults, then a flag over the environment. */
START_TEST(test_precedence_and_config_line)
{
    const char *const plain[] = {"serve", "--port", "0", NULL};
    const char *const flags[] = {"serve", "--port",           "0", "--max-body-bytes",
                                 "200",   "--access-log=off", NULL};
    const char *const env[] = {"MEMWALL_MAX_BODY_BYTES=100",
                               "MEMWALL_ACCESS_LOG=yes",
                               "MEMWALL_CORS_ORIGINS=https://a.example,http://b.example:81",
                               "MEMWALL_SHUTDOWN_GRACE=3",
                               "MEMWALL_ACCESS_LOG_FLUSH_MS=0",
                               NULL};
    json_t *c;

    /* the defaults documented in --help */
    c = config_of(plain, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(c, "bind")), "127.0.0.1");
    ck_assert_int_eq(json_integer_value(json_object_get(c, "max_body_bytes")), 65536);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "max_uri_bytes")), 8192);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "connection_timeout_s")), 30);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "max_connections")), 4096);
    /* The documented default: a quarter of the 4096 total. */
    ck_assert_int_eq(json_integer_value(json_object_get(c, "max_connections_per_ip")), 1024);
    ck_assert_str_eq(json_string_value(json_object_get(c, "cors_origins")), "*");
    ck_assert_str_eq(json_string_value(json_object_get(c, "log_format")), "json");
    ck_assert_str_eq(json_string_value(json_object_get(c, "log_level")), "info");
    ck_assert(json_is_true(json_object_get(c, "access_log")));
    ck_assert_int_eq(json_integer_value(json_object_get(c, "access_log_flush_ms")), 100);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "shutdown_grace_s")), 10);
    ck_assert_int_ge(json_integer_value(json_object_get(c, "threads")), 1);
    json_decref(c);

    c = config_of(plain, env);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "max_body_bytes")), 100);
    ck_assert(json_is_true(json_object_get(c, "access_log")));
    ck_assert_str_eq(json_string_value(json_object_get(c, "cors_origins")),
                     "https://a.example,http://b.example:81");
    ck_assert_int_eq(json_integer_value(json_object_get(c, "shutdown_grace_s")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "access_log_flush_ms")), 0);
    json_decref(c);

    c = config_of(flags, env);
    ck_assert_int_eq(json_integer_value(json_object_get(c, "max_body_bytes")), 200);
    ck_assert(json_is_false(json_object_get(c, "access_log")));
    ck_assert_int_eq(json_integer_value(json_object_get(c, "shutdown_grace_s")), 3);
    json_decref(c);
}
END_TEST

/* --log-format text: "TIME LEVEL EVENT key=value ..." lines, not JSON. */
START_TEST(test_text_logs)
{
    const char *const args[] = {"serve", "--port", "0", "--log-format", "text", NULL};
    struct child c = spawn(args, NULL);
    char line[4096];

    slurp(c.out, line, sizeof line, 10000, true);
    ck_assert_msg(strstr(line, "Z info config bind=127.0.0.1 port=0 ") != NULL, "%s", line);
    ck_assert_msg(strstr(line, " cors_origins=* log_format=text ") != NULL, "%s", line);
    ck_assert_ptr_null(json_loads(line, 0, NULL));
    slurp_until(c.out, line, sizeof line, " listening ");
    ck_assert_msg(strstr(line, "Z info listening bind=127.0.0.1 port=") != NULL, "%s", line);
    kill(c.pid, SIGTERM);
    ck_assert_int_eq(wait_exit(c.pid), 0);
    close(c.out);
    close(c.err);
}
END_TEST

/* ---------------------------------------------------------------------------------------------
 * SIGTERM under load
 * ------------------------------------------------------------------------------------------- */

#define FAST_CLIENTS 6
#define SLOW_CLIENTS 4
#define SLOW_CHUNKS  10
#define SLOW_BODY    2000 /* bytes, sent in SLOW_CHUNKS pieces 50 ms apart: about 0.5 s */

struct load {
    int port;
    atomic_bool stop;
    atomic_int slow_started; /* slow clients that have sent their first chunk */
    atomic_long ok, refused, unanswered, broken;
    char broken_why[256];
};

/* One outcome: a complete 200 with a JSON object body, no response at all (refused, or reset
 * before a single byte came back: never accepted), or broken (anything else: a status other
 * than 200, a reply cut short, a body that does not parse). Returns false when the server is
 * no longer there. */
static bool judge(struct load *ld, CURL *curl, CURLcode rc, const char *body, size_t len)
{
    long status = 0, header_bytes = 0;
    json_t *doc;

    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(curl, CURLINFO_HEADER_SIZE, &header_bytes);
    if (rc == CURLE_COULDNT_CONNECT) {
        atomic_fetch_add(&ld->refused, 1);
        return false;
    }
    if ((rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR) &&
        header_bytes == 0 && len == 0) {
        atomic_fetch_add(&ld->unanswered, 1);
        return false;
    }
    doc = rc == CURLE_OK && status == 200 ? json_loadb(body, len, 0, NULL) : NULL;
    if (doc != NULL && json_is_object(json_object_get(doc, "fit"))) {
        atomic_fetch_add(&ld->ok, 1);
        json_decref(doc);
        return true;
    }
    json_decref(doc);
    if (atomic_fetch_add(&ld->broken, 1) == 0)
        snprintf(ld->broken_why, sizeof ld->broken_why, "curl %d status %ld, %zu body bytes",
                 (int)rc, status, len);
    return true;
}

struct sink {
    char data[65536];
    size_t len;
};

static size_t to_sink(char *data, size_t size, size_t nmemb, void *user)
{
    struct sink *s = user;
    size_t n = size * nmemb;

    if (n >= sizeof s->data - s->len) /* keep a byte for a terminating NUL */
        return 0;
    memcpy(s->data + s->len, data, n);
    s->len += n;
    return n;
}

/* Keep-alive GETs until the server goes away or the test says stop. */
static void *fast_client(void *arg)
{
    struct load *ld = arg;
    CURL *curl = curl_easy_init();
    char target[128];
    static struct sink sinks[FAST_CLIENTS];
    static atomic_int next;
    struct sink *sink = &sinks[atomic_fetch_add(&next, 1) % FAST_CLIENTS];

    snprintf(target, sizeof target, "http://127.0.0.1:%d/fit?gpus=8", ld->port);
    curl_easy_setopt(curl, CURLOPT_URL, target);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, to_sink);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
    while (!atomic_load(&ld->stop)) {
        CURLcode rc;

        sink->len = 0;
        rc = curl_easy_perform(curl);
        if (!judge(ld, curl, rc, sink->data, sink->len))
            break;
    }
    curl_easy_cleanup(curl);
    return NULL;
}

struct slow_upload {
    struct load *ld;
    size_t sent;
    char body[SLOW_BODY];
};

static size_t slow_read(char *dest, size_t size, size_t nmemb, void *user)
{
    struct slow_upload *up = user;
    size_t n = SLOW_BODY / SLOW_CHUNKS;

    if (up->sent == SLOW_BODY)
        return 0;
    if (up->sent > 0)
        nanosleep(&(struct timespec){.tv_nsec = 50000000L}, NULL);
    if (n > size * nmemb)
        n = size * nmemb;
    if (n > SLOW_BODY - up->sent)
        n = SLOW_BODY - up->sent;
    memcpy(dest, up->body + up->sent, n);
    if (up->sent == 0)
        atomic_fetch_add(&up->ld->slow_started, 1);
    up->sent += n;
    return n;
}

/* One POST /fit whose body trickles in over about half a second. */
static void *slow_client(void *arg)
{
    struct load *ld = arg;
    CURL *curl = curl_easy_init();
    struct slow_upload *up = calloc(1, sizeof *up);
    struct sink *sink = calloc(1, sizeof *sink);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    char target[128];
    CURLcode rc;

    up->ld = ld;
    /* {"gpus":8} padded with spaces to SLOW_BODY bytes: still one JSON object */
    memset(up->body, ' ', SLOW_BODY);
    memcpy(up->body, "{\"gpus\":8", 9);
    up->body[SLOW_BODY - 1] = '}';
    snprintf(target, sizeof target, "http://127.0.0.1:%d/fit", ld->port);
    curl_easy_setopt(curl, CURLOPT_URL, target);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)SLOW_BODY);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, slow_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, up);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, to_sink);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
    rc = curl_easy_perform(curl);
    judge(ld, curl, rc, sink->data, sink->len);
    curl_slist_free_all(h);
    curl_easy_cleanup(curl);
    free(up);
    free(sink);
    return NULL;
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* SIGTERM while fast keep-alive clients hammer /fit and slow clients are mid-upload: /readyz
 * turns 503 on a connection opened before, every request that got a reply got a whole 200,
 * every slow request (accepted before the signal) completes, the process reports nothing cut
 * off and exits 0 well within the grace. */
START_TEST(test_sigterm_under_load)
{
    const char *const args[] = {
        "serve", "--port",       "0",   "--threads", "4", "--shutdown-grace",
        "5",     "--access-log", "off", NULL};
    struct child c = spawn(args, NULL);
    static struct load ld;
    static struct sink probe_sink; /* static: libcurl writes into it from several calls */
    pthread_t fast[FAST_CLIENTS], slow[SLOW_CLIENTS];
    char line[4096], target[128];
    static char rest[16384];
    CURL *probe = curl_easy_init();
    CURLcode rc;
    long status = 0;
    json_t *doc, *stopped = NULL;
    double t0, took;
    int exit_status;

    slurp_until(c.out, line, sizeof line, "\"event\":\"listening\"");
    doc = json_loads(line, 0, NULL);
    ck_assert_msg(doc != NULL, "no listening line: %s", line);
    ld.port = (int)json_integer_value(json_object_get(doc, "port"));
    json_decref(doc);

    /* The readiness probe's connection, opened before the signal. */
    snprintf(target, sizeof target, "http://127.0.0.1:%d/readyz", ld.port);
    curl_easy_setopt(probe, CURLOPT_URL, target);
    curl_easy_setopt(probe, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(probe, CURLOPT_WRITEFUNCTION, to_sink);
    curl_easy_setopt(probe, CURLOPT_WRITEDATA, &probe_sink);
    ck_assert_int_eq(curl_easy_perform(probe), CURLE_OK);
    curl_easy_getinfo(probe, CURLINFO_RESPONSE_CODE, &status);
    ck_assert_int_eq(status, 200);

    for (int i = 0; i < FAST_CLIENTS; i++)
        ck_assert_int_eq(pthread_create(&fast[i], NULL, fast_client, &ld), 0);
    nanosleep(&(struct timespec){.tv_nsec = 300000000L}, NULL); /* load is on */
    for (int i = 0; i < SLOW_CLIENTS; i++)
        ck_assert_int_eq(pthread_create(&slow[i], NULL, slow_client, &ld), 0);
    while (atomic_load(&ld.slow_started) < SLOW_CLIENTS)
        nanosleep(&(struct timespec){.tv_nsec = 5000000L}, NULL);
    nanosleep(&(struct timespec){.tv_nsec = 60000000L}, NULL); /* they are mid-body */

    t0 = mono_s();
    ck_assert_int_eq(kill(c.pid, SIGTERM), 0);
    nanosleep(&(struct timespec){.tv_nsec = 50000000L}, NULL);
    {
        long connects = -1;

        probe_sink.len = 0;
        rc = curl_easy_perform(probe);
        curl_easy_getinfo(probe, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(probe, CURLINFO_NUM_CONNECTS, &connects);
        ck_assert_msg(rc == CURLE_OK && status == 503 && connects == 0,
                      "readyz while draining: curl %d status %ld new connections %ld", (int)rc,
                      status, connects);
        probe_sink.data[probe_sink.len] = '\0';
        ck_assert_ptr_nonnull(strstr(probe_sink.data, "\"draining\""));
    }
    curl_easy_cleanup(probe);

    exit_status = wait_exit(c.pid);
    took = mono_s() - t0;
    atomic_store(&ld.stop, true);
    for (int i = 0; i < FAST_CLIENTS; i++)
        pthread_join(fast[i], NULL);
    for (int i = 0; i < SLOW_CLIENTS; i++)
        pthread_join(slow[i], NULL);

    slurp(c.out, rest, sizeof rest, 2000, false);
    for (char *save = NULL, *l = strtok_r(rest, "\n", &save); l != NULL;
         l = strtok_r(NULL, "\n", &save)) {
        doc = json_loads(l, 0, NULL);
        ck_assert_msg(doc != NULL, "not a JSON line: %s", l);
        if (strcmp(json_string_value(json_object_get(doc, "event")), "stopped") == 0)
            stopped = json_incref(doc);
        json_decref(doc);
    }
    fprintf(stderr,
            "sigterm under load: exit %d after %.3f s (server's own shutdown_ms %.1f); "
            "%ld complete, %ld refused, %ld unanswered, %ld broken\n",
            exit_status, took,
            stopped ? json_number_value(json_object_get(stopped, "shutdown_ms")) : -1.0,
            atomic_load(&ld.ok), atomic_load(&ld.refused), atomic_load(&ld.unanswered),
            atomic_load(&ld.broken));
    ck_assert_int_eq(exit_status, 0);
    ck_assert_msg(took < 5.0, "took %.3f s, more than the 5 s grace", took);
    ck_assert_msg(atomic_load(&ld.broken) == 0, "%ld broken replies, first: %s",
                  atomic_load(&ld.broken), ld.broken_why);
    /* every slow client was accepted before the signal, so each got its whole reply */
    ck_assert_int_ge(atomic_load(&ld.ok), SLOW_CLIENTS + 1);
    ck_assert_msg(stopped != NULL, "no stopped line in: %s", rest);
    ck_assert(json_is_true(json_object_get(stopped, "drained")));
    ck_assert_int_eq(json_integer_value(json_object_get(stopped, "in_flight_cut")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(stopped, "aborted")), 0);
    json_decref(stopped);
    close(c.out);
    close(c.err);
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("server_cli");
    TCase *tc = tcase_create("cli");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_help);
    tcase_add_test(tc, test_bad_usage);
    tcase_add_test(tc, test_command_tables);
    tcase_add_test(tc, test_config_flag);
    tcase_add_test(tc, test_serve_sigterm);
    tcase_add_test(tc, test_serve_sigint);
    tcase_add_test(tc, test_every_setting_bad_value);
    tcase_add_test(tc, test_precedence_and_config_line);
    tcase_add_test(tc, test_text_logs);
    tcase_add_test(tc, test_sigterm_under_load);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH-TO-MEMWALL\n", argv[0]);
        return EXIT_FAILURE;
    }
    memwall = argv[1];
    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = check_main_run(cli_suite());
    curl_global_cleanup();
    return rc;
}
