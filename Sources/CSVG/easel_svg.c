#include "easel_svg.h"

#include <stdio.h>
#include <string.h>

#include "easel_cairo.h"

/* The parts of librsvg 2.54's public C API this shim uses, declared here rather than included
 * (see easel_cairo.h for why): its stable ABI (librsvg 2.52+, GLib 2.x). */
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
enum { RSVG_HANDLE_FLAGS_NONE = 0 };

extern RsvgHandle *rsvg_handle_new_with_flags(int flags);
extern void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
extern gboolean rsvg_handle_read_stream_sync(RsvgHandle *handle, GInputStream *stream, GCancellable *cancellable, GError **error);
extern gboolean rsvg_handle_get_intrinsic_size_in_pixels(RsvgHandle *handle, double *width, double *height);
extern void rsvg_handle_get_intrinsic_dimensions(RsvgHandle *handle, gboolean *has_width, RsvgLength *width, gboolean *has_height,
                                                 RsvgLength *height, gboolean *has_viewbox, RsvgRectangle *viewbox);
extern gboolean rsvg_handle_render_document(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport, GError **error);
extern GInputStream *g_memory_input_stream_new_from_data(const void *data, long length, void (*destroy)(void *));

/* librsvg, GIO, cairo and GLib are loaded on first use (easel_lazy.h), not linked. */
#define SVG_FUNCTIONS(X, T)                                                                                          \
    EASEL_CAIRO_FUNCTIONS(X, T)                                                                                      \
    X(T, rsvg_handle_new_with_flags) X(T, rsvg_handle_set_dpi) X(T, rsvg_handle_read_stream_sync)                    \
    X(T, rsvg_handle_get_intrinsic_size_in_pixels) X(T, rsvg_handle_get_intrinsic_dimensions) X(T, rsvg_handle_render_document) \
    X(T, g_memory_input_stream_new_from_data)
EASEL_LAZY_LIBRARY(librsvg, svg, SVG_FUNCTIONS, NULL, "librsvg-2.so.2", "libgio-2.0.so.0", EASEL_CAIRO_SONAMES);

static void set_message(char *message, const char *text) {
    snprintf(message, EASEL_SVG_MESSAGE_SIZE, "%s", text && text[0] ? text : "librsvg could not read the document");
}

/* A handle for the bytes, loaded; NULL with a message. */
static RsvgHandle *load(const uint8_t *data, size_t size, char *message) {
    RsvgHandle *handle = svg.rsvg_handle_new_with_flags(RSVG_HANDLE_FLAGS_NONE);
    if (!handle) { set_message(message, "out of memory"); return NULL; }
    svg.rsvg_handle_set_dpi(handle, 96);
    /* The stream does not copy or free the bytes: the caller's stay alive across this call. */
    GInputStream *stream = svg.g_memory_input_stream_new_from_data(data, (long)size, NULL);
    GError *error = NULL;
    gboolean ok = svg.rsvg_handle_read_stream_sync(handle, stream, NULL, &error);
    svg.g_object_unref(stream);
    if (!ok) {
        set_message(message, error ? error->message : NULL);
        if (error) svg.g_error_free(error);
        svg.g_object_unref(handle);
        return NULL;
    }
    return handle;
}

int easel_svg_size(const uint8_t *data, size_t size, double *width, double *height, int *from_view_box, char *message) {
    if (!easel_lazy_require(&librsvg, message, EASEL_SVG_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    RsvgHandle *handle = load(data, size, message);
    if (!handle) return 0;
    double w = 0, h = 0;
    *from_view_box = 0;
    if (svg.rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) && w > 0 && h > 0) {
        *width = w;
        *height = h;
        svg.g_object_unref(handle);
        return 1;
    }
    gboolean has_width = 0, has_height = 0, has_view_box = 0;
    RsvgLength lw, lh;
    RsvgRectangle view_box;
    svg.rsvg_handle_get_intrinsic_dimensions(handle, &has_width, &lw, &has_height, &lh, &has_view_box, &view_box);
    svg.g_object_unref(handle);
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
    if (!easel_lazy_require(&librsvg, message, EASEL_SVG_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    RsvgHandle *handle = load(data, size, message);
    if (!handle) return 0;
    cairo_surface_t *surface = svg.cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, width, height, (int)row_bytes);
    if (svg.cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        set_message(message, svg.cairo_status_to_string(svg.cairo_surface_status(surface)));
        svg.cairo_surface_destroy(surface);
        svg.g_object_unref(handle);
        return 0;
    }
    cairo_t *cr = svg.cairo_create(surface);
    RsvgRectangle viewport = {0, 0, width, height};
    GError *error = NULL;
    gboolean ok = svg.rsvg_handle_render_document(handle, cr, &viewport, &error);
    int status = svg.cairo_status(cr);
    svg.cairo_destroy(cr);
    svg.cairo_surface_flush(surface);
    svg.cairo_surface_destroy(surface);
    svg.g_object_unref(handle);
    if (!ok || status != CAIRO_STATUS_SUCCESS) {
        set_message(message, error ? error->message : svg.cairo_status_to_string(status));
        if (error) svg.g_error_free(error);
        return 0;
    }
    easel_cairo_to_rgba(pixels, row_bytes, width, height);
    return 1;
}
