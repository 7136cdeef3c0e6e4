#include "easel_pdf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The parse-time budget of a PDF (easel_pdf.h), without poppler: the file's objects found by their
 * `N G obj` headers, each stream inflated (FlateDecode, or none) within a byte limit and its
 * content tokenised: operators counted, `q` nesting measured, and `/Name Do` calls resolved
 * through the object's (or its page's) /Resources /XObject to the forms they draw. The drawing
 * cost of a form is its own operators plus each call times the cost of what it calls, so a form
 * that draws the next one 8 times, 12 deep, costs 8^12 and is refused before any render. Objects
 * hidden in object streams are not parsed: their streams, which cannot be hidden, still are. */

typedef struct {
    long number;
    const char *dict, *dict_end;   /* the object's dictionary (or body) text */
    const uint8_t *stream;         /* its stream's bytes, or NULL */
    size_t stream_size;
    int is_form, is_page;
    /* After tokenising: */
    int scanned, visiting;
    double operators, cost;
    long calls_count;
    struct call { char name[64]; long count; } *calls;
} pdf_object;

typedef struct {
    const easel_pdf_budget *budget;
    const uint8_t *data;
    size_t size;
    pdf_object *objects;
    long count, capacity;
    size_t inflated_total;
    char *message;
} pdf_state;

static int refuse(pdf_state *state, const char *text) {
    snprintf(state->message, EASEL_PDF_MESSAGE_SIZE, "%s", text);
    return 0;
}

static int is_space(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0; }
static int is_delimiter(uint8_t c) { return c == '(' || c == ')' || c == '<' || c == '>' || c == '[' || c == ']' || c == '{' || c == '}' || c == '/' || c == '%'; }
static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* Finds `needle` in [from, end). */
static const char *find(const char *from, const char *end, const char *needle) {
    size_t length = strlen(needle);
    for (const char *p = from; p + length <= end; p++) {
        if (memcmp(p, needle, length) == 0) return p;
    }
    return NULL;
}

static pdf_object *object_numbered(pdf_state *state, long number) {
    for (long i = state->count - 1; i >= 0; i--) {
        if (state->objects[i].number == number) return &state->objects[i];
    }
    return NULL;
}

/* Every `N G obj` of the file, with its dictionary and stream. */
static int find_objects(pdf_state *state) {
    const char *text = (const char *)state->data, *end = text + state->size;
    for (const char *p = text; p + 5 < end; p++) {
        if (memcmp(p, " obj", 4) != 0 || !(is_space((uint8_t)p[4]) || p[4] == '<')) continue;
        /* Back over "N G": digits, a space, digits. */
        const char *q = p;
        while (q > text && is_digit((uint8_t)q[-1])) q--;
        if (q == p || q == text || q[-1] != ' ') continue;
        const char *r = q - 1;
        while (r > text && is_digit((uint8_t)r[-1])) r--;
        if (r == q - 1) continue;
        if (state->count == state->capacity) {
            long capacity = state->capacity ? state->capacity * 2 : 64;
            if (capacity > state->budget->max_objects * 2) {
                snprintf(state->message, EASEL_PDF_MESSAGE_SIZE, "more than %ld objects (the limit)", state->budget->max_objects);
                return 0;
            }
            pdf_object *grown = realloc(state->objects, (size_t)capacity * sizeof(pdf_object));
            if (!grown) return refuse(state, "out of memory");
            state->objects = grown;
            state->capacity = capacity;
        }
        pdf_object *object = &state->objects[state->count++];
        memset(object, 0, sizeof *object);
        object->number = strtol(r, NULL, 10);
        object->dict = p + 4;
        const char *stop = find(object->dict, end, "endobj");
        const char *stream = find(object->dict, stop ? stop : end, "stream");
        object->dict_end = stream ? stream : (stop ? stop : end);
        if (stream) {
            const char *bytes = stream + 6;
            if (bytes < end && *bytes == '\r') bytes++;
            if (bytes < end && *bytes == '\n') bytes++;
            const char *finish = find(bytes, end, "endstream");
            if (!finish) finish = end;
            object->stream = (const uint8_t *)bytes;
            object->stream_size = (size_t)(finish - bytes);
        }
        object->is_form = find(object->dict, object->dict_end, "/Form") != NULL;
        object->is_page = find(object->dict, object->dict_end, "/Type /Page") != NULL && find(object->dict, object->dict_end, "/Type /Pages") == NULL;
        p = object->dict_end - 1;
    }
    return 1;
}

/* The stream's content, inflated when it is FlateDecode (alone); NULL when it uses another filter
 * (images: not content) or cannot be read. Sets *size. */
static uint8_t *content_of(pdf_state *state, pdf_object *object, size_t *size, int *over) {
    *over = 0;
    const char *filter = find(object->dict, object->dict_end, "/Filter");
    if (!filter) {
        uint8_t *copy = malloc(object->stream_size + 1);
        if (!copy) return NULL;
        memcpy(copy, object->stream, object->stream_size);
        *size = object->stream_size;
        return copy;
    }
    const char *flate = find(filter, object->dict_end, "/FlateDecode");
    if (!flate || flate - filter > 12) return NULL;
    size_t limit = (size_t)state->budget->max_stream_bytes;
    uint8_t *out = malloc(limit + 1);
    if (!out) return NULL;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) { free(out); return NULL; }
    z.next_in = (Bytef *)object->stream;
    z.avail_in = (uInt)(object->stream_size > 0x7fffffff ? 0x7fffffff : object->stream_size);
    z.next_out = out;
    z.avail_out = (uInt)(limit + 1);
    int result = inflate(&z, Z_FINISH);
    size_t produced = z.total_out;
    inflateEnd(&z);
    if (produced > limit) { free(out); *over = 1; return NULL; }
    if (result != Z_STREAM_END && result != Z_BUF_ERROR && result != Z_OK) { free(out); return NULL; }
    state->inflated_total += produced;
    *size = produced;
    return out;
}

static void add_call(pdf_object *object, const uint8_t *name, size_t length) {
    if (length == 0 || length >= 64) return;
    for (long i = 0; i < object->calls_count; i++) {
        if (strlen(object->calls[i].name) == length && memcmp(object->calls[i].name, name, length) == 0) { object->calls[i].count++; return; }
    }
    struct call *grown = realloc(object->calls, (size_t)(object->calls_count + 1) * sizeof(struct call));
    if (!grown) return;
    object->calls = grown;
    memcpy(object->calls[object->calls_count].name, name, length);
    object->calls[object->calls_count].name[length] = 0;
    object->calls[object->calls_count].count = 1;
    object->calls_count++;
}

/* Counts the operators of a content stream, its deepest `q`, and its `/Name Do` calls. */
static int tokenise(pdf_state *state, pdf_object *object, const uint8_t *p, size_t size) {
    const uint8_t *end = p + size, *last_name = NULL;
    size_t last_name_length = 0;
    long depth = 0;
    while (p < end) {
        uint8_t c = *p;
        if (is_space(c)) { p++; continue; }
        if (c == '%') { while (p < end && *p != '\n' && *p != '\r') p++; continue; }
        if (c == '(') { /* a string: nested parentheses, backslash escapes */
            int nesting = 0;
            for (; p < end; p++) {
                if (*p == '\\') { p++; continue; }
                if (*p == '(') nesting++;
                else if (*p == ')' && --nesting == 0) { p++; break; }
            }
            continue;
        }
        if (c == '<' && p + 1 < end && p[1] == '<') { p += 2; continue; }
        if (c == '<') { while (p < end && *p != '>') p++; p++; continue; }
        if (c == '/') {
            const uint8_t *start = ++p;
            while (p < end && !is_space(*p) && !is_delimiter(*p)) p++;
            last_name = start;
            last_name_length = (size_t)(p - start);
            continue;
        }
        if (is_delimiter(c)) { p++; continue; }
        const uint8_t *start = p;
        while (p < end && !is_space(*p) && !is_delimiter(*p)) p++;
        size_t length = (size_t)(p - start);
        if (is_digit(c) || c == '-' || c == '+' || c == '.') continue; /* a number */
        if (length == 4 && memcmp(start, "true", 4) == 0) continue;
        if (length == 5 && memcmp(start, "false", 5) == 0) continue;
        if (length == 4 && memcmp(start, "null", 4) == 0) continue;
        object->operators += 1;
        if (length == 1 && c == 'q') {
            if (++depth > state->budget->max_save_depth) {
                snprintf(state->message, EASEL_PDF_MESSAGE_SIZE, "graphics states saved (q) more than %ld deep (the limit)", state->budget->max_save_depth);
                return 0;
            }
        } else if (length == 1 && c == 'Q') {
            if (depth > 0) depth--;
        } else if (length == 2 && memcmp(start, "Do", 2) == 0 && last_name) {
            add_call(object, last_name, last_name_length);
        } else if (length == 2 && memcmp(start, "ID", 2) == 0) {
            /* Inline image data: binary up to "EI" after white space. */
            while (p + 2 < end && !(is_space(p[0]) && p[1] == 'E' && p[2] == 'I')) p++;
        }
    }
    return 1;
}

/* The object that /XObject of `object`'s resources (or `resources`, an object's dictionary
 * text) names `name` as. */
static pdf_object *resolve(pdf_state *state, const char *dict, const char *dict_end, const char *name, int depth) {
    if (depth > 4) return NULL;
    const char *xobject = find(dict, dict_end, "/XObject");
    if (!xobject) {
        /* Resources given as a reference: `/Resources N G R`. */
        const char *resources = find(dict, dict_end, "/Resources");
        if (!resources) return NULL;
        const char *p = resources + 10;
        while (p < dict_end && is_space((uint8_t)*p)) p++;
        if (p >= dict_end || !is_digit((uint8_t)*p)) return NULL;
        pdf_object *target = object_numbered(state, strtol(p, NULL, 10));
        return target ? resolve(state, target->dict, target->dict_end, name, depth + 1) : NULL;
    }
    const char *p = xobject + 8;
    while (p < dict_end && is_space((uint8_t)*p)) p++;
    if (p < dict_end && is_digit((uint8_t)*p)) {
        pdf_object *target = object_numbered(state, strtol(p, NULL, 10));
        if (!target) return NULL;
        /* The XObject dictionary itself, by reference: look for the name in it. */
        char key[70];
        snprintf(key, sizeof key, "/%s", name);
        const char *found = find(target->dict, target->dict_end, key);
        if (!found) return NULL;
        return object_numbered(state, strtol(found + strlen(key), NULL, 10));
    }
    const char *close = find(p, dict_end, ">>");
    char key[70];
    snprintf(key, sizeof key, "/%s", name);
    for (const char *at = find(p, close ? close : dict_end, key); at; at = find(at + 1, close ? close : dict_end, key)) {
        const char *after = at + strlen(key);
        if (after < dict_end && !is_space((uint8_t)*after)) continue;
        return object_numbered(state, strtol(after, NULL, 10));
    }
    return NULL;
}

/* The drawing cost of a form: its operators plus each call times its target's cost (saturating). */
static double cost_of(pdf_state *state, pdf_object *object, int depth) {
    if (!object->scanned) return 0;
    if (object->cost > 0) return object->cost;
    if (object->visiting || depth > 64) return 1e18; /* a cycle, or nesting past all sense */
    object->visiting = 1;
    double cost = object->operators;
    for (long i = 0; i < object->calls_count && cost < 1e18; i++) {
        pdf_object *target = resolve(state, object->dict, object->dict_end, object->calls[i].name, 0);
        if (target && target != object) cost += (double)object->calls[i].count * cost_of(state, target, depth + 1);
        else if (target == object) cost = 1e18;
    }
    object->visiting = 0;
    object->cost = cost < 1 ? 1 : cost;
    return object->cost;
}

int easel_pdf_check_budget(const uint8_t *data, size_t size, const easel_pdf_budget *budget, char *message) {
    message[0] = 0;
    pdf_state state = {.budget = budget, .data = data, .size = size, .message = message};
    int ok = find_objects(&state);
    for (long i = 0; ok && i < state.count; i++) {
        pdf_object *object = &state.objects[i];
        if (!object->stream || find(object->dict, object->dict_end, "/ObjStm") || find(object->dict, object->dict_end, "/Image")) continue;
        size_t length = 0;
        int over = 0;
        uint8_t *content = content_of(&state, object, &length, &over);
        if (over) {
            snprintf(message, EASEL_PDF_MESSAGE_SIZE, "a stream inflates past %ld bytes (the limit)", budget->max_stream_bytes);
            ok = 0;
            break;
        }
        if (!content) continue;
        if (state.inflated_total > (size_t)budget->max_total_bytes) {
            free(content);
            snprintf(message, EASEL_PDF_MESSAGE_SIZE, "the streams inflate past %ld bytes in all (the limit)", budget->max_total_bytes);
            ok = 0;
            break;
        }
        ok = tokenise(&state, object, content, length);
        object->scanned = 1;
        free(content);
    }
    double total = 0;
    for (long i = 0; ok && i < state.count; i++) {
        pdf_object *object = &state.objects[i];
        if (!object->scanned) continue;
        /* A page's content stream calls through its page's resources: those streams are not forms,
         * and their calls are resolved through the page objects below. */
        if (object->is_form || find(object->dict, object->dict_end, "/Resources")) total += cost_of(&state, object, 0);
        else total += object->operators;
    }
    /* Pages: each content stream's calls through the page's resources. */
    for (long i = 0; ok && i < state.count; i++) {
        pdf_object *page = &state.objects[i];
        if (!page->is_page) continue;
        const char *contents = find(page->dict, page->dict_end, "/Contents");
        if (!contents) continue;
        const char *p = contents + 9;
        int in_array = 0;
        for (; p < page->dict_end; p++) {
            if (*p == '[') { in_array = 1; continue; }
            if (*p == ']' || *p == '/' || *p == '>') break;
            if (!is_digit((uint8_t)*p)) continue;
            char *after = NULL;
            long number = strtol(p, &after, 10);
            pdf_object *stream = object_numbered(&state, number);
            if (stream && stream->scanned && !stream->is_form) {
                for (long c = 0; c < stream->calls_count; c++) {
                    pdf_object *target = resolve(&state, page->dict, page->dict_end, stream->calls[c].name, 0);
                    if (target) total += (double)stream->calls[c].count * cost_of(&state, target, 0);
                }
            }
            /* Skip "G R". */
            p = after;
            while (p < page->dict_end && *p != 'R') p++;
            if (!in_array) break;
        }
    }
    if (ok && total > (double)budget->max_operators) {
        snprintf(message, EASEL_PDF_MESSAGE_SIZE, "drawing it takes %.3g operators, nested forms included (the limit is %ld)", total,
                 budget->max_operators);
        ok = 0;
    }
    for (long i = 0; i < state.count; i++) free(state.objects[i].calls);
    free(state.objects);
    return ok;
}
