#include "easel_svg.h"

#include <stdio.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the pixel conversion below writes little-endian words"
#endif

/* The parts of librsvg 2.54's, GLib's and cairo's public C API this shim uses, declared here
 * rather than included: their headers sit under pkg-config's include paths (glib, cairo,
 * gdk-pixbuf), which SwiftPM gives a C target only through a pkg-config system module, whose
 * flags (-pthread) it refuses with a warning; and unsafe include flags would keep the package
 * from being used as a dependency. These declarations are the libraries' stable ABI (librsvg
 * 2.52+, GLib 2.x, cairo 1.x) as their headers give it. */
typedef int gboolean;
typedef struct {
    uint32_t domain;
    int code;
    char *message;
} GError;
typedef struct _GInputStream GInputStream;
typedef struct _GCancellable GCancellable;
typedef struct _RsvgHandle RsvgHandle;
typedef struct {
    double x, y, width, height;
} RsvgRectangle;
typedef struct {
    double length;
    int unit; /* RsvgUnit */
} RsvgLength;
typedef struct _cairo_surface cairo_surface_t;
typedef struct _cairo cairo_t;
enum { RSVG_HANDLE_FLAGS_NONE = 0 };
enum { CAIRO_FORMAT_ARGB32 = 0 };
enum { CAIRO_STATUS_SUCCESS = 0 };

extern RsvgHandle *rsvg_handle_new_with_flags(int flags);
extern void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
extern gboolean rsvg_handle_read_stream_sync(RsvgHandle *handle, GInputStream *stream, GCancellable *cancellable, GError **error);
extern gboolean rsvg_handle_get_intrinsic_size_in_pixels(RsvgHandle *handle, double *width, double *height);
extern void rsvg_handle_get_intrinsic_dimensions(RsvgHandle *handle, gboolean *has_width, RsvgLength *width, gboolean *has_height,
                                                 RsvgLength *height, gboolean *has_viewbox, RsvgRectangle *viewbox);
extern gboolean rsvg_handle_render_document(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport, GError **error);
extern GInputStream *g_memory_input_stream_new_from_data(const void *data, long length, void (*destroy)(void *));
extern void g_object_unref(void *object);
extern void g_error_free(GError *error);
extern cairo_surface_t *cairo_image_surface_create_for_data(unsigned char *data, int format, int width, int height, int stride);
extern int cairo_surface_status(cairo_surface_t *surface);
extern void cairo_surface_flush(cairo_surface_t *surface);
extern void cairo_surface_destroy(cairo_surface_t *surface);
extern cairo_t *cairo_create(cairo_surface_t *target);
extern int cairo_status(cairo_t *cr);
extern void cairo_destroy(cairo_t *cr);
extern const char *cairo_status_to_string(int status);

static void set_message(char *message, const char *text) {
    snprintf(message, EASEL_SVG_MESSAGE_SIZE, "%s", text && text[0] ? text : "librsvg could not read the document");
}

/* A handle for the bytes, loaded; NULL with a message. */
static RsvgHandle *load(const uint8_t *data, size_t size, char *message) {
    RsvgHandle *handle = rsvg_handle_new_with_flags(RSVG_HANDLE_FLAGS_NONE);
    if (!handle) { set_message(message, "out of memory"); return NULL; }
    rsvg_handle_set_dpi(handle, 96);
    /* The stream does not copy or free the bytes: the caller's stay alive across this call. */
    GInputStream *stream = g_memory_input_stream_new_from_data(data, (long)size, NULL);
    GError *error = NULL;
    gboolean ok = rsvg_handle_read_stream_sync(handle, stream, NULL, &error);
    g_object_unref(stream);
    if (!ok) {
        set_message(message, error ? error->message : NULL);
        if (error) g_error_free(error);
        g_object_unref(handle);
        return NULL;
    }
    return handle;
}

int easel_svg_size(const uint8_t *data, size_t size, double *width, double *height, int *from_view_box, char *message) {
    RsvgHandle *handle = load(data, size, message);
    if (!handle) return 0;
    double w = 0, h = 0;
    *from_view_box = 0;
    if (rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) && w > 0 && h > 0) {
        *width = w;
        *height = h;
        g_object_unref(handle);
        return 1;
    }
    gboolean has_width = 0, has_height = 0, has_view_box = 0;
    RsvgLength lw, lh;
    RsvgRectangle view_box;
    rsvg_handle_get_intrinsic_dimensions(handle, &has_width, &lw, &has_height, &lh, &has_view_box, &view_box);
    g_object_unref(handle);
    if (has_view_box && view_box.width > 0 && view_box.height > 0) {
        *width = view_box.width;
        *height = view_box.height;
        *from_view_box = 1;
        return 1;
    }
    set_message(message, "the document has neither a size nor a viewBox");
    return -1;
}

int easel_svg_render(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes, int width, int height, char *message) {
    RsvgHandle *handle = load(data, size, message);
    if (!handle) return 0;
    cairo_surface_t *surface = cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, width, height, (int)row_bytes);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        set_message(message, cairo_status_to_string(cairo_surface_status(surface)));
        cairo_surface_destroy(surface);
        g_object_unref(handle);
        return 0;
    }
    cairo_t *cr = cairo_create(surface);
    RsvgRectangle viewport = {0, 0, width, height};
    GError *error = NULL;
    gboolean ok = rsvg_handle_render_document(handle, cr, &viewport, &error);
    int status = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    cairo_surface_destroy(surface);
    g_object_unref(handle);
    if (!ok || status != CAIRO_STATUS_SUCCESS) {
        set_message(message, error ? error->message : cairo_status_to_string(status));
        if (error) g_error_free(error);
        return 0;
    }
    /* Cairo's ARGB32 is premultiplied, in native-endian words (A<<24 | R<<16 | G<<8 | B: bytes
     * B, G, R, A here). Opaque words only exchange R and B; clear ones are already 0; the rest
     * are made straight. */
    for (int y = 0; y < height; y++) {
        uint32_t *row = (uint32_t *)(pixels + (size_t)y * row_bytes);
        for (int x = 0; x < width; x++) {
            uint32_t word = row[x], a = word >> 24;
            if (a == 255) {
                row[x] = (word & 0xFF00FF00u) | ((word >> 16) & 0xFFu) | ((word & 0xFFu) << 16);
            } else if (a != 0) {
                uint32_t r = (word >> 16) & 0xFF, g = (word >> 8) & 0xFF, b = word & 0xFF;
                r = (r * 255 + a / 2) / a; g = (g * 255 + a / 2) / a; b = (b * 255 + a / 2) / a;
                if (r > 255) r = 255;
                if (g > 255) g = 255;
                if (b > 255) b = 255;
                row[x] = a << 24 | b << 16 | g << 8 | r;
            }
        }
    }
    return 1;
}
