/*
 * hfconfig.h - a Hugging Face config.json object to a core architecture.
 *
 * The `config` input names a model the way its checkpoint does. The decoder reads only the keys
 * that change the parameter count (sizes, head layout, biases, norms, experts, multi-latent
 * attention), applies the transformers class defaults for absent keys, and ignores the rest
 * (rope settings, dropout, token ids, dtype). The rules per model_type are in
 * docs/architectures.md.
 */
#ifndef MEMWALL_API_HFCONFIG_H
#define MEMWALL_API_HFCONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/*
 * Decode config (a JSON object) into *arch (fully overwritten) and *max_positions (the
 * config's context limit: max_position_embeddings, n_positions or max_seq_len, else the class
 * default). Each problem is appended to errors (borrowed array) as {field: "config.<key>",
 * message}; returns true when there were none. On false, *arch is unspecified.
 */
bool api_hfconfig_decode(const json_t *config, struct core_arch *arch, int64_t *max_positions,
                         json_t *errors);

#endif
