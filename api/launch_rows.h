/*
 * launch_rows.h - the row builders of the launch formats' tables (launch_megatron.c,
 * launch_titan.c, launch_deepspeed.c, launch_vllm.c), so each row reads as the flag or key, its
 * value kind, the input it sets (or why it is ignored, or what it changes unmodelled), the
 * framework file that defines it and a note. Included only by those four files.
 */
#ifndef MEMWALL_API_LAUNCH_ROWS_H
#define MEMWALL_API_LAUNCH_ROWS_H

#define SET(key, v, input, file, note)                                                             \
    {                                                                                              \
        key, v, API_LAUNCH_SET, input, file, note                                                  \
    }
#define DERIVED(key, v, input, file, note)                                                         \
    {                                                                                              \
        key, v, API_LAUNCH_DERIVED, input, file, note                                              \
    }
#define IGNORED(key, v, file, why)                                                                 \
    {                                                                                              \
        key, v, API_LAUNCH_IGNORED, NULL, file, why                                                \
    }
#define WARN(key, v, file, what)                                                                   \
    {                                                                                              \
        key, v, API_LAUNCH_WARN, NULL, file, what                                                  \
    }

#endif
