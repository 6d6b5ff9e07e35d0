/*
 * problems.c - the records every part of the core writes: problems (why an input is refused)
 * and notes (warnings and advice, with the input changes advice proposes). Fixed-size records
 * with a stable code and a formatted sentence, so the api layer can print them without knowing
 * the model. A leaf: it uses nothing else of the core.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

void core_problem_add(struct core_problems *p, const char *field, const char *fmt, ...)
{
    va_list ap;

    if (p->count >= CORE_MAX_PROBLEMS)
        return;
    struct core_problem *item = &p->items[p->count++];
    item->field = field;
    va_start(ap, fmt);
    vsnprintf(item->message, sizeof item->message, fmt, ap);
    va_end(ap);
}

struct core_note *core_note_add(struct core_note *list, int *n, const char *code, const char *fmt,
                                ...)
{
    va_list ap;

    if (*n >= CORE_MAX_NOTES)
        return NULL;
    struct core_note *note = &list[(*n)++];
    note->code = code;
    note->change_count = 0;
    va_start(ap, fmt);
    vsnprintf(note->message, sizeof note->message, fmt, ap);
    va_end(ap);
    return note;
}

static struct core_change *next_change(struct core_note *note, const char *input)
{
    if (note == NULL || note->change_count >= CORE_MAX_CHANGES)
        return NULL;
    struct core_change *c = &note->changes[note->change_count++];
    c->input = input;
    c->int_value = 0;
    c->string_value = NULL;
    c->bool_value = false;
    return c;
}

void core_note_change_int(struct core_note *note, const char *input, int64_t value)
{
    struct core_change *c = next_change(note, input);

    if (c != NULL) {
        c->kind = CORE_VALUE_INT;
        c->int_value = value;
    }
}

void core_note_change_bool(struct core_note *note, const char *input, bool value)
{
    struct core_change *c = next_change(note, input);

    if (c != NULL) {
        c->kind = CORE_VALUE_BOOL;
        c->bool_value = value;
    }
}

void core_note_change_real(struct core_note *note, const char *input, double value)
{
    struct core_change *c = next_change(note, input);

    if (c != NULL) {
        c->kind = CORE_VALUE_REAL;
        c->real_value = value;
    }
}

void core_note_change_string(struct core_note *note, const char *input, const char *value)
{
    struct core_change *c = next_change(note, input);

    if (c != NULL) {
        c->kind = CORE_VALUE_STRING;
        c->string_value = value;
    }
}
