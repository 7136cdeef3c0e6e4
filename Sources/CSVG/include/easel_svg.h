#ifndef EASEL_SVG_H
#define EASEL_SVG_H

#include <stddef.h>
#include <stdint.h>

#define EASEL_SVG_MESSAGE_SIZE 200

/* The document's intrinsic size in CSS pixels at 96 dpi: its width and height when they are
 * absolute, else its viewBox's size; *from_view_box says which. Returns 1, or 0 with a message
 * when librsvg cannot load it, or -1 when it has neither a usable size nor a viewBox.
 *
 * Documents are loaded from memory with no base URL, so librsvg resolves no external reference
 * (files, http, xi:include); data: URLs inside the document still work. libxml2's safety limits
 * stay on. */
int easel_svg_size(const uint8_t *data, size_t size, double *width, double *height, int *from_view_box, char *message);

/* Renders the whole document scaled to width x height (its aspect ratio is the caller's
 * business) as RGBA with straight alpha into `pixels` (height rows of row_bytes, a multiple
 * of 4), which must start zeroed (transparent: a new Bitmap is). Returns 1, or 0 with a
 * message. */
int easel_svg_render(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes, int width, int height, char *message);

/* easel_svg_sanitize and easel_svg_check_budget load libxml2 on their first call (not
 * linked): when it cannot be, they return EASEL_LAZY_UNAVAILABLE (easel_lazy.h, -9) with the
 * reason in their message. */
/* The document cleaned for serving as SVG (easel_svg_sanitize.c says what stays): parsed by
 * libxml2 with no external entity, DTD or network access, rebuilt and written as UTF-8 into a
 * buffer the caller frees with easel_svg_free. Returns 1, or 0 with a message (not well-formed,
 * not an SVG, more than max_elements elements, a result over max_output bytes). */
int easel_svg_sanitize(const uint8_t *data, size_t size, int max_elements, size_t max_output, uint8_t **output, size_t *output_size,
                       char *message);

/* What a document may hold before librsvg is asked to read it: the attacks that crash, loop or
 * bloat librsvg (a convolution kernel it panics on, selectors nested until its stack overflows,
 * a font size Pango cannot make, octaves of turbulence by the billion, text by the megabyte). */
typedef struct {
    long max_depth;             /* elements nested */
    long max_filter_primitives; /* fe* elements in all */
    long max_octaves;           /* feTurbulence's numOctaves */
    long max_kernel_order;      /* feConvolveMatrix's order, each side */
    long max_uses;              /* <use> elements */
    long max_masks;             /* <mask> elements */
    long max_text_characters;   /* bytes of text inside <text> */
    long max_style_bytes;       /* bytes of CSS in <style> */
    long max_css_nesting;       /* (, [ and { nested in CSS */
    double max_font_size;       /* any font-size, attribute or CSS, in its own units */
} easel_svg_budget;

/* Checks the document against `budget` in one streaming pass (no network, no entity expansion).
 * Returns 1, or 0 with a message naming the limit. A document that is not well-formed passes
 * here: librsvg refuses it with its own message. */
int easel_svg_check_budget(const uint8_t *data, size_t size, const easel_svg_budget *budget, char *message);

/* Frees what easel_svg_sanitize wrote. */
void easel_svg_free(uint8_t *bytes);

#endif
