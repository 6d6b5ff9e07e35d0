/*
 * live.h - the fixture the in-process live suites share (api_live, plan_live, api_hostile):
 * one memwall daemon on 127.0.0.1 at an ephemeral port, URLs to it, and dotted-path lookups
 * in parsed replies. One copy, so the suites cannot drift apart in how they start the server.
 */
#ifndef MEMWALL_TEST_LIVE_H
#define MEMWALL_TEST_LIVE_H

#include <jansson.h>

#include "server.h"

extern struct server *live_srv; /* the running daemon, NULL between tests */
extern int live_port;           /* its port */

/* Check fixtures: start the daemon (2 threads, defaults otherwise) / stop it. */
void live_start(void);
void live_stop(void);

/* Stop the daemon and start it again with cfg; bind and port are forced to 127.0.0.1:0 and
 * threads defaults to 2. */
void live_restart(struct server_config cfg);

/* "http://127.0.0.1:<port><target>" in a static buffer that the next call overwrites. */
const char *live_url(const char *target);

/* Follow a dotted path ("fit.min_gpus", "plans.0.days") through objects by key and arrays by
 * index; NULL when a step is missing. Borrowed reference. */
json_t *live_at(json_t *doc, const char *path);

/* The integer / number at path; a failed check when it is missing or of another type. */
long long live_int_at(json_t *doc, const char *path);
double live_num_at(json_t *doc, const char *path);

#endif
