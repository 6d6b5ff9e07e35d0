/*
 * test_accesslog.c - the buffered access log (server/accesslog.c) on a pipe, as a container
 * runtime reads it: every line arrives whole and once, each thread's lines in the order it
 * wrote them, even with other writers on the same pipe; the flusher delivers a lone line
 * without a stop; a thread beyond the buffers writes directly; stop leaves nothing behind. Also
 * the hand-made timestamp of every log line (log.c) against glibc's gmtime_r and strftime.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "accesslog.h"
#include "log.h"
#include "check_main.h"

#define WRITERS 5 /* one more than the buffers the log is started with */
#define LINES   4000

struct reader {
    int fd;
    char *buf;
    size_t len, cap;
};

/* Reads the pipe until EOF (the pipe is small; the writers would block without a reader). */
static void *read_all(void *arg)
{
    struct reader *r = arg;

    for (;;) {
        ssize_t n;

        if (r->len == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 1 << 20;
            r->buf = realloc(r->buf, r->cap);
            ck_assert_ptr_nonnull(r->buf);
        }
        n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n <= 0)
            break;
        r->len += (size_t)n;
    }
    return NULL;
}

struct writer {
    struct server_accesslog *log;
    int id;
};

/* Lines "w<id> s<seq> <padding>\n" of 40 to ~700 bytes, so buffers fill at odd offsets and
 * PIPE_BUF cuts fall mid-line unless the writer cuts at line ends. */
static void *write_lines(void *arg)
{
    struct writer *w = arg;
    char line[1024];

    for (int seq = 0; seq < LINES; seq++) {
        int pad = 30 + (seq * 37 + w->id * 101) % 650;
        int n = snprintf(line, sizeof line, "w%d s%d ", w->id, seq);

        memset(line + n, 'a' + w->id, (size_t)pad);
        line[n + pad] = '\n';
        server_accesslog_write(w->log, line, (size_t)(n + pad + 1));
    }
    return NULL;
}

/* An unbuffered writer on the same pipe, as the other log events are: 200-byte lines. */
static void *write_events(void *arg)
{
    int fd = *(int *)arg;
    char line[200];

    for (int seq = 0; seq < LINES; seq++) {
        int n = snprintf(line, sizeof line, "e s%d ", seq);

        memset(line + n, 'e', sizeof line - 1 - (size_t)n);
        line[sizeof line - 1] = '\n';
        ck_assert_int_eq(write(fd, line, sizeof line), (ssize_t)sizeof line);
    }
    return NULL;
}

START_TEST(lines_whole_once_in_order)
{
    int p[2];
    struct server_accesslog log;
    struct reader r = {0};
    struct writer w[WRITERS];
    pthread_t reader, writers[WRITERS], events;
    int next[WRITERS] = {0}, next_event = 0;
    char *save = NULL;

    ck_assert_int_eq(pipe(p), 0);
    r.fd = p[0];
    ck_assert(server_accesslog_start(&log, p[1], WRITERS - 1, 100));
    pthread_create(&reader, NULL, read_all, &r);
    pthread_create(&events, NULL, write_events, &p[1]);
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (struct writer){&log, i};
        pthread_create(&writers[i], NULL, write_lines, &w[i]);
    }
    for (int i = 0; i < WRITERS; i++)
        pthread_join(writers[i], NULL);
    pthread_join(events, NULL);
    server_accesslog_stop(&log);
    close(p[1]);
    pthread_join(reader, NULL);
    close(p[0]);

    ck_assert_uint_gt(r.len, 0);
    ck_assert_int_eq(r.buf[r.len - 1], '\n');
    r.buf[r.len - 1] = '\0';
    for (char *l = strtok_r(r.buf, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
        int id, seq, at = 0;

        if (l[0] == 'e') {
            ck_assert_int_eq(sscanf(l, "e s%d %n", &seq, &at), 1);
            ck_assert_int_eq(seq, next_event++);
            ck_assert_uint_eq(strlen(l), 199);
            ck_assert(strspn(l + at, "e") == strlen(l + at));
            continue;
        }
        ck_assert_msg(sscanf(l, "w%d s%d %n", &id, &seq, &at) == 2 && at > 0, "cut line: %.80s", l);
        ck_assert(id >= 0 && id < WRITERS);
        ck_assert_msg(seq == next[id], "writer %d: line %d after %d", id, seq, next[id] - 1);
        next[id]++;
        {
            char want = (char)('a' + id);
            size_t pad = 30 + (size_t)((seq * 37 + id * 101) % 650);

            size_t same = 0;

            /* one assertion per line: each ck_assert reports to Check's parent process */
            while (l[at + (int)same] == want)
                same++;
            ck_assert_msg(same == pad && l[at + (int)same] == '\0',
                          "writer %d line %d is mixed or cut", id, seq);
        }
    }
    for (int i = 0; i < WRITERS; i++)
        ck_assert_int_eq(next[i], LINES);
    ck_assert_int_eq(next_event, LINES);
    free(r.buf);
}
END_TEST

/* A lone line reaches the pipe by the flusher within a second (it runs every
 * 100 ms here), though the buffer is far from full and nothing stops the log. */
START_TEST(flusher_delivers_without_stop)
{
    int p[2];
    struct server_accesslog log;
    struct pollfd pfd;
    char buf[64];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert(server_accesslog_start(&log, p[1], 2, 100));
    server_accesslog_write(&log, "one\n", 4);
    pfd = (struct pollfd){.fd = p[0], .events = POLLIN};
    ck_assert_int_eq(poll(&pfd, 1, 1000), 1);
    ck_assert_int_eq(read(p[0], buf, sizeof buf), 4);
    ck_assert_int_eq(memcmp(buf, "one\n", 4), 0);
    server_accesslog_stop(&log);
    /* stopped twice, or a log that never started: nothing happens */
    server_accesslog_stop(&log);
    close(p[1]);
    ck_assert_int_eq(read(p[0], buf, sizeof buf), 0);
    close(p[0]);
}
END_TEST

/* A log that could not start (no buffers) or was asked for no batching writes each line at
 * once. */
START_TEST(unstarted_log_writes_directly)
{
    int p[2];
    struct server_accesslog log;
    char buf[64];

    ck_assert_int_eq(pipe(p), 0);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    ck_assert(!server_accesslog_start(&log, p[1], 0, 100));
    server_accesslog_write(&log, "one\n", 4);
    ck_assert_int_eq(read(p[0], buf, sizeof buf), 4);
    server_accesslog_stop(&log);
    /* a flush interval of 0 (--access-log-flush-ms 0): the same */
    ck_assert(!server_accesslog_start(&log, p[1], 4, 0));
    server_accesslog_write(&log, "two\n", 4);
    ck_assert_int_eq(read(p[0], buf, sizeof buf), 4);
    server_accesslog_stop(&log);
    close(p[0]);
    close(p[1]);
}
END_TEST

/* Every day from 1970 to 2399 (leap days, century rules, 2000 and 2100 included) at a second of
 * the day that moves through the whole day, and a millisecond that must be truncated, not
 * rounded: the same text as gmtime_r + strftime. */
START_TEST(log_time_matches_gmtime)
{
    const long last_day = 157053; /* 2399-12-31 */
    char got[32], want[48];
    int bad = 0;

    for (long d = 0; d <= last_day; d++) {
        struct timespec ts = {.tv_sec = (time_t)(d * 86400 + (d * 7919) % 86400),
                              .tv_nsec = 999999999L - (d % 1000) * 1000000L};
        struct tm tm;

        server_log_time(&ts, got, sizeof got);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(want + 19, sizeof want - 19, ".%03dZ", (int)(ts.tv_nsec / 1000000L));
        if (strcmp(got, want) != 0 && bad++ < 5)
            fprintf(stderr, "day %ld: %s, want %s\n", d, got, want);
    }
    ck_assert_int_eq(bad, 0);
    /* the ends of the two leap days around the turn of 2000 and 2100 (not a leap year) */
    server_log_time(&(struct timespec){.tv_sec = 951868799}, got, sizeof got);
    ck_assert_str_eq(got, "2000-02-29T23:59:59.000Z");
    server_log_time(&(struct timespec){.tv_sec = 4107542399}, got, sizeof got);
    ck_assert_str_eq(got, "2100-02-28T23:59:59.000Z");
    server_log_time(&(struct timespec){.tv_sec = 4107542400}, got, sizeof got);
    ck_assert_str_eq(got, "2100-03-01T00:00:00.000Z");
}
END_TEST

static Suite *accesslog_suite(void)
{
    Suite *s = suite_create("accesslog");
    TCase *tc = tcase_create("pipe");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lines_whole_once_in_order);
    tcase_add_test(tc, flusher_delivers_without_stop);
    tcase_add_test(tc, unstarted_log_writes_directly);
    tcase_add_test(tc, log_time_matches_gmtime);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_main_run(accesslog_suite());
}
