/*
 * live.c - the shared in-process daemon fixture and reply lookups (see live.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "live.h"

struct server *live_srv;
int live_port;

void live_restart(struct server_config cfg)
{
    char err[256] = "";

    if (live_srv != NULL)
        server_stop(live_srv);
    cfg.bind = "127.0.0.1";
    cfg.port = 0;
    if (cfg.threads == 0)
        cfg.threads = 2;
    live_port = server_start(&cfg, &live_srv, err, sizeof err);
    ck_assert_msg(live_port > 0, "server_start: %s", err);
}

void live_start(void)
{
    live_srv = NULL;
    live_restart((struct server_config){.threads = 2});
}

void live_stop(void)
{
    server_stop(live_srv);
    live_srv = NULL;
}

const char *live_url(const char *target)
{
    static char buf[80000]; /* the hostile suite's longest targets */

    snprintf(buf, sizeof buf, "http://127.0.0.1:%d%s", live_port, target);
    return buf;
}

json_t *live_at(json_t *doc, const char *path)
{
    char key[64];

    while (doc != NULL && *path != '\0') {
        size_t n = strcspn(path, ".");

        snprintf(key, sizeof key, "%.*s", (int)n, path);
        doc = json_is_array(doc) ? json_array_get(doc, strtoul(key, NULL, 10))
                                 : json_object_get(doc, key);
        path += n + (path[n] == '.');
    }
    return doc;
}

long long live_int_at(json_t *doc, const char *path)
{
    json_t *v = live_at(doc, path);

    ck_assert_msg(json_is_integer(v), "%s is not an integer", path);
    return json_integer_value(v);
}

double live_num_at(json_t *doc, const char *path)
{
    json_t *v = live_at(doc, path);

    ck_assert_msg(json_is_number(v), "%s is not a number", path);
    return json_number_value(v);
}
