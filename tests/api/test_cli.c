/*
 * test_cli.c - the memwall executable itself (its path is argv[1]): --version and --help, bad
 * flags and values exit 2 naming the culprit, and `memwall serve --port 0` prints its one
 * "listening" JSON line, answers HTTP on the port it names and exits 0 on SIGTERM or SIGINT
 * after a "stopped" line. No fixed ports: the daemon picks one and the test reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

static const char *memwall; /* path of the binary under test */

struct child {
    pid_t pid;
    int out, err; /* read ends of its stdout and stderr */
};

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
        unsetenv("MEMWALL_BIND");
        unsetenv("MEMWALL_PORT");
        unsetenv("MEMWALL_THREADS");
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

    slurp(c.out, line, sizeof line, 10000, true);
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
    /* config, the /healthz request, draining, stopped: each a JSON line with time and level */
    {
        static const char *const events[] = {"config", "request", "draining", "stopped"};
        char *save = NULL, *l = strtok_r(rest, "\n", &save);

        for (size_t i = 0; i < 4; i++, l = strtok_r(NULL, "\n", &save)) {
            ck_assert_msg(l != NULL, "line %zu (%s) missing", i, events[i]);
            doc = json_loads(l, 0, &jerr);
            ck_assert_msg(doc != NULL, "not JSON: '%s'", l);
            ck_assert_str_eq(json_string_value(json_object_get(doc, "event")), events[i]);
            ck_assert(json_is_string(json_object_get(doc, "time")));
            ck_assert(json_is_string(json_object_get(doc, "level")));
            if (i == 2)
                ck_assert_str_eq(json_string_value(json_object_get(doc, "signal")),
                                 sig == SIGINT ? "SIGINT" : "SIGTERM");
            if (i == 3) {
                ck_assert(json_is_true(json_object_get(doc, "drained")));
                ck_assert_int_eq(json_integer_value(json_object_get(doc, "in_flight_cut")), 0);
            }
            json_decref(doc);
        }
        ck_assert_ptr_null(l);
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

int main(int argc, char **argv)
{
    Suite *s = suite_create("server_cli");
    TCase *tc = tcase_create("cli");
    SRunner *sr;
    int failed;

    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH-TO-MEMWALL\n", argv[0]);
        return EXIT_FAILURE;
    }
    memwall = argv[1];
    curl_global_init(CURL_GLOBAL_DEFAULT);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_help);
    tcase_add_test(tc, test_bad_usage);
    tcase_add_test(tc, test_serve_sigterm);
    tcase_add_test(tc, test_serve_sigint);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
