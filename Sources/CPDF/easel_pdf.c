#include "easel_pdf.h"

#include <stdio.h>
#include <string.h>

#include "easel_cairo.h"

/* The parts of poppler-glib's public C API this shim uses, declared here rather than included
 * (see easel_cairo.h for why): its stable ABI (poppler-glib 0.x/2x.x, GLib 2.x). */
typedef struct _GBytes GBytes;
typedef struct _PopplerDocument PopplerDocument;
typedef struct _PopplerPage PopplerPage;
enum { POPPLER_ERROR_ENCRYPTED = 1 };

extern GBytes *g_bytes_new_static(const void *data, size_t size);
extern void g_bytes_unref(GBytes *bytes);
extern uint32_t poppler_error_quark(void);
extern PopplerDocument *poppler_document_new_from_bytes(GBytes *bytes, const char *password, GError **error);
extern int poppler_document_get_n_pages(PopplerDocument *document);
extern PopplerPage *poppler_document_get_page(PopplerDocument *document, int index);
extern void poppler_page_get_size(PopplerPage *page, double *width, double *height);
extern void poppler_page_render(PopplerPage *page, cairo_t *cairo);

/* poppler-glib, cairo and GLib are loaded on first use (easel_lazy.h), not linked. */
#define PDF_FUNCTIONS(X, T)                                                                                          \
    EASEL_CAIRO_FUNCTIONS(X, T)                                                                                      \
    X(T, cairo_scale) X(T, cairo_set_source_rgb) X(T, cairo_paint) X(T, g_bytes_new_static) X(T, g_bytes_unref) X(T, poppler_error_quark) \
    X(T, poppler_document_new_from_bytes) X(T, poppler_document_get_n_pages) X(T, poppler_document_get_page)         \
    X(T, poppler_page_get_size) X(T, poppler_page_render)
EASEL_LAZY_LIBRARY(poppler, pdf, PDF_FUNCTIONS, NULL, "libpoppler-glib.so.8", EASEL_CAIRO_SONAMES);

static void set_message(char *message, const char *text) {
    snprintf(message, EASEL_PDF_MESSAGE_SIZE, "%s", text && text[0] ? text : "poppler could not read the document");
}

/* The document (its bytes are the caller's and must outlive it: the GBytes does not copy). */
static PopplerDocument *open_document(const uint8_t *data, size_t size, GBytes **bytes, int *encrypted, char *message) {
    *encrypted = 0;
    *bytes = NULL;
    *bytes = pdf.g_bytes_new_static(data, size);
    GError *error = NULL;
    PopplerDocument *document = pdf.poppler_document_new_from_bytes(*bytes, NULL, &error);
    if (!document) {
        if (error && error->domain == pdf.poppler_error_quark() && error->code == POPPLER_ERROR_ENCRYPTED) *encrypted = 1;
        set_message(message, error ? error->message : NULL);
        if (error) pdf.g_error_free(error);
        pdf.g_bytes_unref(*bytes);
        *bytes = NULL;
    }
    return document;
}

int easel_pdf_info(const uint8_t *data, size_t size, int page, int *pages, double *width, double *height, char *message) {
    if (!easel_lazy_require(&poppler, message, EASEL_PDF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    GBytes *bytes;
    int encrypted;
    PopplerDocument *document = open_document(data, size, &bytes, &encrypted, message);
    if (!document) return encrypted ? -1 : 0;
    *pages = pdf.poppler_document_get_n_pages(document);
    int result = 1;
    PopplerPage *p = page >= 0 && page < *pages ? pdf.poppler_document_get_page(document, page) : NULL;
    if (!p) {
        snprintf(message, EASEL_PDF_MESSAGE_SIZE, "no page %d (the document has %d)", page + 1, *pages);
        result = -2;
    } else {
        pdf.poppler_page_get_size(p, width, height);
        pdf.g_object_unref(p);
    }
    pdf.g_object_unref(document);
    pdf.g_bytes_unref(bytes);
    return result;
}

int easel_pdf_render(const uint8_t *data, size_t size, int page, uint8_t *pixels, size_t row_bytes, int width, int height,
                     char *message) {
    if (!easel_lazy_require(&poppler, message, EASEL_PDF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    GBytes *bytes;
    int encrypted;
    PopplerDocument *document = open_document(data, size, &bytes, &encrypted, message);
    if (!document) return 0;
    PopplerPage *p = pdf.poppler_document_get_page(document, page);
    if (!p) {
        pdf.g_object_unref(document);
        pdf.g_bytes_unref(bytes);
        set_message(message, "no such page");
        return 0;
    }
    double page_width = 0, page_height = 0;
    pdf.poppler_page_get_size(p, &page_width, &page_height);
    cairo_surface_t *surface = pdf.cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, width, height, (int)row_bytes);
    int result = 1;
    if (pdf.cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS || page_width <= 0 || page_height <= 0) {
        set_message(message, page_width <= 0 || page_height <= 0 ? "the page has no size" : pdf.cairo_status_to_string(pdf.cairo_surface_status(surface)));
        result = 0;
    } else {
        cairo_t *cr = pdf.cairo_create(surface);
        /* White paper, as pdftoppm renders; then the page scaled to the size asked for. */
        pdf.cairo_set_source_rgb(cr, 1, 1, 1);
        pdf.cairo_paint(cr);
        pdf.cairo_scale(cr, width / page_width, height / page_height);
        pdf.poppler_page_render(p, cr);
        int status = pdf.cairo_status(cr);
        pdf.cairo_destroy(cr);
        pdf.cairo_surface_flush(surface);
        if (status != CAIRO_STATUS_SUCCESS) { set_message(message, pdf.cairo_status_to_string(status)); result = 0; }
    }
    pdf.cairo_surface_destroy(surface);
    pdf.g_object_unref(p);
    pdf.g_object_unref(document);
    pdf.g_bytes_unref(bytes);
    if (!result) return 0;
    /* Opaque on white: the words' R and B exchanged. */
    easel_cairo_to_rgba(pixels, row_bytes, width, height);
    return 1;
}
