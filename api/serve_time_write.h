/*
 * serve_time_write.h - the `time` reply member of /inference and /inference/plan
 * (serve_time_write.c).
 */
#ifndef MEMWALL_API_SERVE_TIME_WRITE_H
#define MEMWALL_API_SERVE_TIME_WRITE_H

#include "jsonw.h"
#include "serve_time.h"

void api_write_serve_time(struct api_jsonw *w, const struct core_serve_time_input *in,
                          const struct core_serve_time *t, double expected_error);

#endif
