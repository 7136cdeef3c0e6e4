#include "easel_pdf.h"

#include <stdio.h>
#include <string.h>

/* The parts of poppler-glib's, GLib's and cairo's public C API this shim uses, declared here
 * rather than included, for the reason easel_svg.c gives (their headers need pkg-config's
 * include paths, which SwiftPM gives only with a flag it warns about). Stable ABI: poppler-glib
 * 0.x/2x.x, GLib 2.x, cairo 1.x. */
typedef int gboolean;
typedef struct {
    uint32_t domain;
    int code;
    char *message;
} GError;
typedef struct _GBytes GBytes;
typedef struct _PopplerDocument PopplerDocument;
typedef struct _PopplerPage PopplerPage;
typedef struct _cairo_surface cairo_surface_t;
typedef struct _cairo cairo_t;
enum { CAIRO_FORMAT_ARGB32 = 0, CAIRO_STATUS_SUCCESS = 0 };
enum { POPPLER_ERROR_ENCRYPTED = 1 };

extern GBytes *g_bytes_new_static(const void *data, size_t size);
extern void g_bytes_unref(GBytes *bytes);
extern void g_object_unref(void *object);
extern void g_error_free(GError *error);
extern uint32_t poppler_error_quark(void);
extern PopplerDocument *poppler_document_new_from_bytes(GBytes *bytes, const char *password, GError **error);
extern int poppler_document_get_n_pages(PopplerDocument *document);
extern PopplerPage *poppler_document_get_page(PopplerDocument *document, int index);
extern void poppler_page_get_size(PopplerPage *page, double *width, double *height);
extern void poppler_page_render(PopplerPage *page, cairo_t *cairo);
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

static void set_message(char *message, const char *text) {
    snprintf(message, EASEL_PDF_MESSAGE_SIZE, "%s", text && text[0] ? text : "poppler could not read the document");
}

/* The document (its bytes are the caller's and must outlive it: the GBytes does not copy). */
static PopplerDocument *open_document(const uint8_t *data, size_t size, GBytes **bytes, int *encrypted, char *message) {
    *encrypted = 0;
    *bytes = g_bytes_new_static(data, size);
    GError *error = NULL;
    PopplerDocument *document = poppler_document_new_from_bytes(*bytes, NULL, &error);
    if (!document) {
        if (error && error->domain == poppler_error_quark() && error->code == POPPLER_ERROR_ENCRYPTED) *encrypted = 1;
        set_message(message, error ? error->message : NULL);
        if (error) g_error_free(error);
        g_bytes_unref(*bytes);
        *bytes = NULL;
    }
    return document;
}

int easel_pdf_info(const uint8_t *data, size_t size, int page, int *pages, double *width, double *height, char *message) {
    GBytes *bytes;
    int encrypted;
    PopplerDocument *document = open_document(data, size, &bytes, &encrypted, message);
    if (!document) return encrypted ? -1 : 0;
    *pages = poppler_document_get_n_pages(document);
    int result = 1;
    PopplerPage *p = page >= 0 && page < *pages ? poppler_document_get_page(document, page) : NULL;
    if (!p) {
        snprintf(message, EASEL_PDF_MESSAGE_SIZE, "no page %d (the document has %d)", page + 1, *pages);
        result = -2;
    } else {
        poppler_page_get_size(p, width, height);
        g_object_unref(p);
    }
    g_object_unref(document);
    g_bytes_unref(bytes);
    return result;
}

int easel_pdf_render(const uint8_t *data, size_t size, int page, uint8_t *pixels, size_t row_bytes, int width, int height,
                     char *message) {
    GBytes *bytes;
    int encrypted;
    PopplerDocument *document = open_document(data, size, &bytes, &encrypted, message);
    if (!document) return 0;
    PopplerPage *p = poppler_document_get_page(document, page);
    if (!p) {
        g_object_unref(document);
        g_bytes_unref(bytes);
        set_message(message, "no such page");
        return 0;
    }
    double page_width = 0, page_height = 0;
    poppler_page_get_size(p, &page_width, &page_height);
    cairo_surface_t *surface = cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, width, height, (int)row_bytes);
    int result = 1;
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS || page_width <= 0 || page_height <= 0) {
        set_message(message, page_width <= 0 || page_height <= 0 ? "the page has no size" : cairo_status_to_string(cairo_surface_status(surface)));
        result = 0;
    } else {
        cairo_t *cr = cairo_create(surface);
        /* White paper, as pdftoppm renders; then the page scaled to the size asked for. */
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_paint(cr);
        cairo_scale(cr, width / page_width, height / page_height);
        poppler_page_render(p, cr);
        int status = cairo_status(cr);
        cairo_destroy(cr);
        cairo_surface_flush(surface);
        if (status != CAIRO_STATUS_SUCCESS) { set_message(message, cairo_status_to_string(status)); result = 0; }
    }
    cairo_surface_destroy(surface);
    g_object_unref(p);
    g_object_unref(document);
    g_bytes_unref(bytes);
    if (!result) return 0;
    /* Opaque on white: cairo's native-endian ARGB words (B, G, R, A bytes here) to RGBA. */
    for (int y = 0; y < height; y++) {
        uint8_t *row = pixels + (size_t)y * row_bytes;
        for (int x = 0; x < width; x++) {
            uint8_t *q = row + (size_t)x * 4;
            uint32_t word;
            memcpy(&word, q, 4);
            q[0] = (uint8_t)(word >> 16); q[1] = (uint8_t)(word >> 8); q[2] = (uint8_t)word; q[3] = 255;
        }
    }
    return 1;
}
