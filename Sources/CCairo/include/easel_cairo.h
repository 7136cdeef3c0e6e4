#ifndef EASEL_CAIRO_H
#define EASEL_CAIRO_H

#include <stddef.h>
#include <stdint.h>

#include "easel_lazy.h"

/* The parts of GLib's and cairo's public C API that the librsvg and poppler shims (CSVG, CPDF)
 * use, declared here rather than included: their headers sit under pkg-config's include paths,
 * which SwiftPM gives a C target only through a pkg-config system module, whose flags
 * (-pthread) it refuses with a warning; and unsafe include flags would keep the package from
 * being used as a dependency. These are the libraries' stable ABI (GLib 2.x, cairo 1.x) as
 * their headers give it. */
typedef int gboolean;
typedef struct {
    uint32_t domain;
    int code;
    char *message;
} GError;
typedef struct _cairo_surface cairo_surface_t;
typedef struct _cairo cairo_t;
enum { CAIRO_FORMAT_ARGB32 = 0, CAIRO_STATUS_SUCCESS = 0 };

extern void g_object_unref(void *object);
extern void g_error_free(GError *error);
extern cairo_surface_t *cairo_image_surface_create_for_data(unsigned char *data, int format, int width, int height, int stride);
extern int cairo_surface_status(cairo_surface_t *surface);
extern void cairo_surface_flush(cairo_surface_t *surface);
extern void cairo_surface_destroy(cairo_surface_t *surface);
extern cairo_t *cairo_create(cairo_surface_t *target);
extern int cairo_status(cairo_t *cr);
extern void cairo_destroy(cairo_t *cr);
extern void cairo_scale(cairo_t *cr, double sx, double sy);
extern void cairo_set_source_rgb(cairo_t *cr, double red, double green, double blue);
extern void cairo_paint(cairo_t *cr);
extern const char *cairo_status_to_string(int status);

/* Turns a cairo ARGB32 image (premultiplied, native-endian words) drawn in `pixels` (height rows
 * of row_bytes) into RGBA with straight alpha, in place. */
void easel_cairo_to_rgba(uint8_t *pixels, size_t row_bytes, int width, int height);

/* Where GLib's structured log messages (GLib, GObject, Pango, librsvg, poppler's glib layer) go
 * instead of standard error: `sink` gets the level (GLib's bits: 1<<2 error, 1<<3 critical,
 * 1<<4 warning, 1<<5 message, 1<<6 info, 1<<7 debug), the domain (may be NULL) and the message.
 * Messages GLib's default writer would drop (debug and info unless G_MESSAGES_DEBUG asks) are
 * dropped. Set once per process; later calls change only the sink. An error still aborts after
 * its message, as GLib makes it. GLib is not loaded for this: the routing starts when a library
 * that brings GLib is first loaded (easel_lazy_after_load). */
typedef void (*easel_glib_log_sink)(int level, const char *domain, const char *message);
void easel_glib_route_logs(easel_glib_log_sink sink);

/* The cairo, GLib and GObject functions the SVG, PDF and text shims share, for their tables of
 * lazily loaded functions (easel_lazy.h), and the libraries they come from. */
#define EASEL_CAIRO_FUNCTIONS(X, T)                                                                                  \
    X(T, g_object_unref) X(T, g_error_free) X(T, cairo_image_surface_create_for_data) X(T, cairo_surface_status)     \
    X(T, cairo_surface_flush) X(T, cairo_surface_destroy) X(T, cairo_create) X(T, cairo_status) X(T, cairo_destroy)  \
    X(T, cairo_status_to_string)
#define EASEL_CAIRO_SONAMES "libcairo.so.2", "libgobject-2.0.so.0", "libglib-2.0.so.0"

#endif
