#define _GNU_SOURCE
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
    int is_form, is_page, is_image;
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
    long *sorted;
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
    /* `sorted` orders the objects by number, and by position among equals: the last one written
     * wins, as a PDF's incremental updates want. */
    long low = 0, high = state->count - 1, found = -1;
    while (low <= high) {
        long middle = low + (high - low) / 2;
        pdf_object *object = &state->objects[state->sorted[middle]];
        if (object->number <= number) {
            if (object->number == number) found = state->sorted[middle];
            low = middle + 1;
        } else {
            high = middle - 1;
        }
    }
    return found < 0 ? NULL : &state->objects[found];
}

static int by_number(const void *a, const void *b, void *context) {
    const pdf_state *state = context;
    long x = *(const long *)a, y = *(const long *)b;
    long nx = state->objects[x].number, ny = state->objects[y].number;
    if (nx != ny) return nx < ny ? -1 : 1;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Sorts the objects' indices by number, then position. */
static int index_objects(pdf_state *state) {
    state->sorted = malloc((size_t)(state->count > 0 ? state->count : 1) * sizeof(long));
    if (!state->sorted) return refuse(state, "out of memory");
    for (long i = 0; i < state->count; i++) state->sorted[i] = i;
    qsort_r(state->sorted, (size_t)state->count, sizeof(long), by_number, state);
    return 1;
}

/* A whole number written at `p` (after blanks), read no further than `end`; -1 when there is
 * none. *next is where it stopped. (PDF bytes end with no NUL: strtol could read past them.) */
static long parse_long(const char *p, const char *end, const char **next) {
    while (p < end && is_space((uint8_t)*p)) p++;
    long value = -1;
    while (p < end && is_digit((uint8_t)*p) && value < 100000000000L) {
        value = (value < 0 ? 0 : value * 10) + (*p - '0');
        p++;
    }
    if (next) *next = p;
    return value;
}

/* Whether `key` (a name, `/Type`) is followed, after blanks, by the name `value` (`/Page`),
 * which must end there (so `/Page` is not `/Pages`). Somewhere in [from, end). */
static int has_entry(const char *from, const char *end, const char *key, const char *value) {
    size_t key_length = strlen(key), value_length = strlen(value);
    for (const char *at = find(from, end, key); at; at = find(at + 1, end, key)) {
        const char *p = at + key_length;
        while (p < end && is_space((uint8_t)*p)) p++;
        if ((size_t)(end - p) < value_length || memcmp(p, value, value_length) != 0) continue;
        p += value_length;
        if (p >= end || is_space((uint8_t)*p) || is_delimiter((uint8_t)*p)) return 1;
    }
    return 0;
}

/* Every `N G obj` of the file, with its dictionary and stream, in one forward pass: an object's
 * region runs to the next object's header (or the end), and its `stream` and `endstream` are
 * looked for in that region only. */
static int find_objects(pdf_state *state) {
    const char *text = (const char *)state->data, *end = text + state->size;
    const char *hit = find(text, end, " obj");
    while (hit) {
        const char *after = hit + 4;
        const char *next = after < end ? find(after, end, " obj") : NULL;
        const char *region_end = next ? next : end;
        /* Back over "N G": digits, a space, digits. */
        const char *q = hit;
        while (q > text && is_digit((uint8_t)q[-1])) q--;
        const char *r = q > text ? q - 1 : q;
        while (r > text && is_digit((uint8_t)r[-1])) r--;
        int header = after < end && (is_space((uint8_t)*after) || *after == '<') && q != hit && q > text && q[-1] == ' ' && r != q - 1;
        if (header) {
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
            object->number = parse_long(r, hit, NULL);
            object->dict = after;
            const char *stop = find(after, region_end, "endobj");
            const char *stream = find(after, stop ? stop : region_end, "stream");
            object->dict_end = stream ? stream : (stop ? stop : region_end);
            if (stream) {
                const char *bytes = stream + 6;
                if (bytes < region_end && *bytes == '\r') bytes++;
                if (bytes < region_end && *bytes == '\n') bytes++;
                const char *finish = find(bytes, region_end, "endstream");
                if (!finish) finish = region_end;
                object->stream = (const uint8_t *)bytes;
                object->stream_size = (size_t)(finish - bytes);
            }
            object->is_form = has_entry(object->dict, object->dict_end, "/Subtype", "/Form");
            object->is_image = has_entry(object->dict, object->dict_end, "/Subtype", "/Image");
            object->is_page = has_entry(object->dict, object->dict_end, "/Type", "/Page");
        }
        hit = next;
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

/* Notes a call of the XObject `name`; 0 past the limit of distinct names a stream may call. */
static int add_call(pdf_object *object, const uint8_t *name, size_t length) {
    if (length == 0 || length >= 64) return 1;
    for (long i = 0; i < object->calls_count; i++) {
        if (strlen(object->calls[i].name) == length && memcmp(object->calls[i].name, name, length) == 0) { object->calls[i].count++; return 1; }
    }
    if (object->calls_count >= 4096) return 0;
    if ((object->calls_count & (object->calls_count - 1)) == 0) {  /* 0, 1, 2, 4…: doubling */
        struct call *grown = realloc(object->calls, (size_t)(object->calls_count ? object->calls_count * 2 : 1) * sizeof(struct call));
        if (!grown) return 0;
        object->calls = grown;
    }
    memcpy(object->calls[object->calls_count].name, name, length);
    object->calls[object->calls_count].name[length] = 0;
    object->calls[object->calls_count].count = 1;
    object->calls_count++;
    return 1;
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
                if (*p == '\\') { if (p + 1 < end) p++; continue; }
                if (*p == '(') nesting++;
                else if (*p == ')' && --nesting == 0) { p++; break; }
            }
            continue;
        }
        if (c == '<' && p + 1 < end && p[1] == '<') { p += 2; continue; }
        if (c == '<') { while (p < end && *p != '>') p++; if (p < end) p++; continue; }
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
            if (!add_call(object, last_name, last_name_length)) return refuse(state, "a stream draws more than 4096 different XObjects (the limit)");
        } else if (length == 2 && memcmp(start, "ID", 2) == 0) {
            /* Inline image data: binary up to "EI" after white space. */
            while (p + 2 < end && !(is_space(p[0]) && p[1] == 'E' && p[2] == 'I')) p++;
        }
    }
    return 1;
}

/* The object a name (`/N` followed by blanks and a reference) stands for in [from, end): the
 * name must end where the reference starts (`/F1` is not `/F10`). */
static pdf_object *named_reference(pdf_state *state, const char *from, const char *end, const char *name) {
    char key[70];
    snprintf(key, sizeof key, "/%s", name);
    size_t length = strlen(key);
    for (const char *at = find(from, end, key); at; at = find(at + 1, end, key)) {
        const char *after = at + length;
        if (after >= end || !is_space((uint8_t)*after)) continue;
        long number = parse_long(after, end, NULL);
        if (number >= 0) return object_numbered(state, number);
    }
    return NULL;
}

/* The object that the /XObject entry of a dictionary's resources (direct, or by reference:
 * `/Resources N G R`, `/XObject N G R`) names `name`. */
static pdf_object *resolve(pdf_state *state, const char *dict, const char *dict_end, const char *name, int depth) {
    if (depth > 4) return NULL;
    /* The resources' /XObject entry: followed by a dictionary or a reference (not `/Type /XObject`). */
    for (const char *xobject = find(dict, dict_end, "/XObject"); xobject; xobject = find(xobject + 1, dict_end, "/XObject")) {
        const char *p = xobject + 8;
        while (p < dict_end && is_space((uint8_t)*p)) p++;
        if (p + 1 < dict_end && p[0] == '<' && p[1] == '<') {
            const char *close = find(p, dict_end, ">>");
            return named_reference(state, p, close ? close : dict_end, name);
        }
        if (p < dict_end && is_digit((uint8_t)*p)) {
            pdf_object *target = object_numbered(state, parse_long(p, dict_end, NULL));
            return target ? named_reference(state, target->dict, target->dict_end, name) : NULL;
        }
    }
    /* Resources given as a reference: `/Resources N G R`. */
    const char *resources = find(dict, dict_end, "/Resources");
    if (!resources) return NULL;
    const char *p = resources + 10;
    while (p < dict_end && is_space((uint8_t)*p)) p++;
    if (p >= dict_end || !is_digit((uint8_t)*p)) return NULL;
    pdf_object *target = object_numbered(state, parse_long(p, dict_end, NULL));
    return target ? resolve(state, target->dict, target->dict_end, name, depth + 1) : NULL;
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
    int ok = find_objects(&state) && index_objects(&state);
    for (long i = 0; ok && i < state.count; i++) {
        pdf_object *object = &state.objects[i];
        if (!object->stream || object->is_image || has_entry(object->dict, object->dict_end, "/Type", "/ObjStm")) continue;
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
            const char *after = NULL;
            long number = parse_long(p, page->dict_end, &after);
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
    free(state.sorted);
    return ok;
}
