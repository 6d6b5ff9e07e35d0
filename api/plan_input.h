/*
 * plan_input.h - /plan's own value grammars: a GPU list ("h100-sxm,b200" or a JSON array) and
 * prices ("2.5", "h100-sxm=2,b200=5", a JSON number or an object of prices by GPU id).
 * Each returns false with msg (API_MSG_MAX) filled when the value is invalid.
 */
#ifndef MEMWALL_API_PLAN_INPUT_H
#define MEMWALL_API_PLAN_INPUT_H

#include <jansson.h>

#include "value.h"

bool api_gpu_list_text(const char *s, size_t len, struct api_value *v, char *msg, size_t size);
bool api_gpu_list_json(const json_t *j, struct api_value *v, char *msg, size_t size);
bool api_prices_text(const char *s, size_t len, struct api_value *v, char *msg, size_t size);
bool api_prices_json(const json_t *j, struct api_value *v, char *msg, size_t size);

#endif
