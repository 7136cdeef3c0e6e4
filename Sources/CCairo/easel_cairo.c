#include "easel_cairo.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the conversion below writes little-endian words"
#endif

void easel_cairo_to_rgba(uint8_t *pixels, size_t row_bytes, int width, int height) {
    /* A word is A<<24 | R<<16 | G<<8 | B (bytes B, G, R, A here). Opaque words only exchange R
     * and B; clear ones are already 0; the rest are made straight. */
    for (int y = 0; y < height; y++) {
        uint32_t *row = (uint32_t *)(pixels + (size_t)y * row_bytes);
        for (int x = 0; x < width; x++) {
            uint32_t word = row[x], a = word >> 24;
            if (a == 255) {
                row[x] = (word & 0xFF00FF00u) | ((word >> 16) & 0xFFu) | ((word & 0xFFu) << 16);
            } else if (a != 0) {
                uint32_t r = (word >> 16) & 0xFF, g = (word >> 8) & 0xFF, b = word & 0xFF;
                r = (r * 255 + a / 2) / a;
                g = (g * 255 + a / 2) / a;
                b = (b * 255 + a / 2) / a;
                if (r > 255) r = 255;
                if (g > 255) g = 255;
                if (b > 255) b = 255;
                row[x] = a << 24 | b << 16 | g << 8 | r;
            }
        }
    }
}

/* GLib's log writer (gmessages.h, declared here as the rest of GLib is). */
typedef struct { const char *key; const void *value; long length; } easel_glog_field;
typedef int (*easel_glog_writer)(int level, const easel_glog_field *fields, unsigned long count, void *data);
extern void g_log_set_writer_func(easel_glog_writer writer, void *data, void (*destroy)(void *));
extern int g_log_writer_default_would_drop(int level, const char *domain);

static _Atomic(easel_glib_log_sink) glib_sink;
static pthread_once_t glib_once = PTHREAD_ONCE_INIT;

#define GLIB_FUNCTIONS(X) X(g_log_set_writer_func) X(g_log_writer_default_would_drop)
#define GLIB_ENTRY(function) EASEL_LAZY_ENTRY(__typeof__(glib_functions), function)
static struct { GLIB_FUNCTIONS(EASEL_LAZY_MEMBER) } glib_functions;
static const easel_lazy_symbol glib_symbols[] = {GLIB_FUNCTIONS(GLIB_ENTRY)};
static const char *const glib_sonames[] = {"libglib-2.0.so.0"};
static easel_lazy_library glib = {glib_sonames, 1, glib_symbols, sizeof glib_symbols / sizeof glib_symbols[0], &glib_functions, 0, ""};

static int glib_writer(int level, const easel_glog_field *fields, unsigned long count, void *data) {
    (void)data;
    const char *domain = NULL, *message = NULL;
    for (unsigned long i = 0; i < count; i++) {
        if (!fields[i].key || fields[i].length >= 0) continue; /* (only text fields) */
        if (strcmp(fields[i].key, "GLIB_DOMAIN") == 0) domain = fields[i].value;
        else if (strcmp(fields[i].key, "MESSAGE") == 0) message = fields[i].value;
    }
    easel_glib_log_sink sink = glib_sink;
    if (sink && message && !glib_functions.g_log_writer_default_would_drop(level, domain)) sink(level & 0xFC, domain, message);
    return 1; /* G_LOG_WRITER_HANDLED */
}

static void install_glib_writer(void) {
    if (easel_lazy_load(&glib)) glib_functions.g_log_set_writer_func(glib_writer, NULL, NULL);
}

/* GLib is loaded with the first library that needs it (easel_glib_loaded), not at start: the
 * writer is installed then, or now if GLib is already in the process. */
void easel_glib_route_logs(easel_glib_log_sink sink) {
    glib_sink = sink;
    void *loaded = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (loaded) {
        dlclose(loaded); /* (only the reference RTLD_NOLOAD took) */
        pthread_once(&glib_once, install_glib_writer);
    }
}

void easel_glib_loaded(void) {
    if (glib_sink) pthread_once(&glib_once, install_glib_writer);
}
