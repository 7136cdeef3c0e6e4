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

static _Atomic(__typeof__(&g_log_writer_default_would_drop)) would_drop;

static int glib_writer(int level, const easel_glog_field *fields, unsigned long count, void *data) {
    (void)data;
    const char *domain = NULL, *message = NULL;
    for (unsigned long i = 0; i < count; i++) {
        if (!fields[i].key || fields[i].length >= 0) continue; /* (only text fields) */
        if (strcmp(fields[i].key, "GLIB_DOMAIN") == 0) domain = fields[i].value;
        else if (strcmp(fields[i].key, "MESSAGE") == 0) message = fields[i].value;
    }
    easel_glib_log_sink sink = glib_sink;
    if (sink && message && !would_drop(level, domain)) sink(level & 0xFC, domain, message);
    return 1; /* G_LOG_WRITER_HANDLED */
}

/* (GLib is in the process: install_if_glib_loaded checked. Its reference is kept, so it stays
 * while its writer is this one.) */
static void install_glib_writer(void) {
    void *glib = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!glib) return;
    __typeof__(&g_log_set_writer_func) set_writer = (__typeof__(&g_log_set_writer_func))dlsym(glib, "g_log_set_writer_func");
    would_drop = (__typeof__(&g_log_writer_default_would_drop))dlsym(glib, "g_log_writer_default_would_drop");
    if (set_writer && would_drop) set_writer(glib_writer, NULL, NULL);
}

/* Installs the writer once GLib is in the process (loaded with librsvg, poppler, Pango or
 * FFmpeg, whichever comes first): checked now and after every library set CLazy or CVideo loads. */
static void install_if_glib_loaded(void) {
    if (!glib_sink) return;
    void *loaded = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!loaded) return;
    dlclose(loaded); /* (only the reference RTLD_NOLOAD took) */
    pthread_once(&glib_once, install_glib_writer);
}

void easel_glib_route_logs(easel_glib_log_sink sink) {
    glib_sink = sink;
    easel_lazy_after_load(install_if_glib_loaded);
    install_if_glib_loaded();
}
