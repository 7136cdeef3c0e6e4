#include "easel_text.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "easel_cairo.h"

/* The parts of Pango's, PangoCairo's, GLib's and cairo's public C API this shim uses beyond
 * easel_cairo.h's, declared here rather than included (see easel_cairo.h for why): their stable ABI
 * (Pango 1.x, GLib 2.x, cairo 1.x) as their headers give it. */
typedef struct _PangoContext PangoContext;
typedef struct _PangoLayout PangoLayout;
typedef struct _PangoFontDescription PangoFontDescription;
typedef struct _PangoAttrList PangoAttrList;
typedef struct _PangoLayoutIter PangoLayoutIter;
typedef struct _cairo_font_options cairo_font_options_t;
typedef struct {
    int x, y, width, height;
} PangoRectangle;
enum { PANGO_SCALE = 1024 };
enum { PANGO_WRAP_WORD_CHAR = 2 };                                  /* PangoWrapMode */
enum { PANGO_ALIGN_LEFT = 0, PANGO_ALIGN_CENTER = 1, PANGO_ALIGN_RIGHT = 2 }; /* PangoAlignment */
enum { CAIRO_ANTIALIAS_GRAY = 2 };                                  /* cairo_antialias_t */
enum { CAIRO_HINT_STYLE_NONE = 1 };                                 /* cairo_hint_style_t */
enum { CAIRO_HINT_METRICS_OFF = 1 };                                /* cairo_hint_metrics_t */

extern void g_free(void *memory);
extern gboolean g_utf8_validate(const char *str, ptrdiff_t max_len, const char **end);
extern gboolean pango_parse_markup(const char *markup_text, int length, uint32_t accel_marker, PangoAttrList **attr_list,
                                   char **text, uint32_t *accel_char, GError **error);
extern void pango_attr_list_unref(PangoAttrList *list);
extern PangoContext *pango_cairo_create_context(cairo_t *cr);
extern void pango_cairo_font_map_set_default(void *fontmap);
extern void pango_cairo_context_set_font_options(PangoContext *context, const cairo_font_options_t *options);
extern void pango_cairo_context_set_resolution(PangoContext *context, double dpi);
extern PangoLayout *pango_layout_new(PangoContext *context);
extern void pango_layout_set_text(PangoLayout *layout, const char *text, int length);
extern void pango_layout_set_attributes(PangoLayout *layout, PangoAttrList *attrs);
extern void pango_layout_set_font_description(PangoLayout *layout, const PangoFontDescription *desc);
extern void pango_layout_set_width(PangoLayout *layout, int width);
extern void pango_layout_set_wrap(PangoLayout *layout, int wrap);
extern void pango_layout_set_alignment(PangoLayout *layout, int alignment);
extern void pango_layout_get_pixel_extents(PangoLayout *layout, PangoRectangle *ink_rect, PangoRectangle *logical_rect);
extern PangoFontDescription *pango_font_description_from_string(const char *str);
extern void pango_font_description_set_absolute_size(PangoFontDescription *desc, double size);
extern void pango_font_description_free(PangoFontDescription *desc);
extern PangoLayoutIter *pango_layout_get_iter(PangoLayout *layout);
extern gboolean pango_layout_iter_next_run(PangoLayoutIter *iter);
extern void pango_layout_iter_get_run_extents(PangoLayoutIter *iter, PangoRectangle *ink_rect, PangoRectangle *logical_rect);
extern void pango_layout_iter_free(PangoLayoutIter *iter);
extern void pango_cairo_show_layout(cairo_t *cr, PangoLayout *layout);
extern void pango_cairo_layout_path(cairo_t *cr, PangoLayout *layout);
extern cairo_surface_t *cairo_image_surface_create(int format, int width, int height);
extern cairo_font_options_t *cairo_font_options_create(void);
extern void cairo_font_options_destroy(cairo_font_options_t *options);
extern void cairo_font_options_set_antialias(cairo_font_options_t *options, int antialias);
extern void cairo_font_options_set_hint_style(cairo_font_options_t *options, int hint_style);
extern void cairo_font_options_set_hint_metrics(cairo_font_options_t *options, int hint_metrics);
extern void cairo_set_source_rgba(cairo_t *cr, double red, double green, double blue, double alpha);
extern void cairo_move_to(cairo_t *cr, double x, double y);
extern void cairo_fill(cairo_t *cr);

/* Pango's attributes, as pango-attributes.h lays them out (declared by hand, like the rest). */
typedef struct { int type; void *copy; void *destroy; void *equal; } easel_attr_class;
typedef struct { const easel_attr_class *klass; unsigned start_index, end_index; } easel_attribute;
typedef struct { easel_attribute attr; int size; } easel_attr_size;
typedef struct { easel_attribute attr; double value; } easel_attr_float;
typedef struct { easel_attribute attr; PangoFontDescription *desc; } easel_attr_font_desc;
typedef int (*easel_attr_filter)(easel_attribute *attribute, void *data);
extern PangoAttrList *pango_attr_list_filter(PangoAttrList *list, easel_attr_filter func, void *data);
extern int pango_font_description_get_size(const PangoFontDescription *desc);
enum { EASEL_ATTR_SIZE = 7, EASEL_ATTR_FONT_DESC = 8, EASEL_ATTR_SCALE = 15, EASEL_ATTR_ABSOLUTE_SIZE = 20 };

static int fail(char *message, const char *why) {
    snprintf(message, EASEL_TEXT_MESSAGE_SIZE, "%s", why);
    return 0;
}

/* Pango, PangoCairo, cairo and GLib are loaded on first use (easel_lazy.h), not linked. */
#define TEXT_FUNCTIONS(X, T)                                                                                         \
    EASEL_CAIRO_FUNCTIONS(X, T)                                                                                      \
    X(T, g_free) X(T, g_utf8_validate) X(T, pango_parse_markup) X(T, pango_attr_list_unref) X(T, pango_cairo_create_context) \
    X(T, pango_cairo_font_map_set_default) X(T, pango_cairo_context_set_font_options)                                \
    X(T, pango_cairo_context_set_resolution) X(T, pango_layout_new) X(T, pango_layout_set_text)                      \
    X(T, pango_layout_set_attributes) X(T, pango_layout_set_font_description) X(T, pango_layout_set_width)           \
    X(T, pango_layout_set_wrap) X(T, pango_layout_set_alignment) X(T, pango_layout_get_pixel_extents)                \
    X(T, pango_font_description_from_string) X(T, pango_font_description_set_absolute_size)                          \
    X(T, pango_font_description_free) X(T, pango_layout_get_iter) X(T, pango_layout_iter_next_run)                   \
    X(T, pango_layout_iter_get_run_extents) X(T, pango_layout_iter_free) X(T, pango_cairo_show_layout)               \
    X(T, pango_cairo_layout_path) X(T, cairo_image_surface_create) X(T, cairo_font_options_create)                   \
    X(T, cairo_font_options_destroy) X(T, cairo_font_options_set_antialias) X(T, cairo_font_options_set_hint_style)  \
    X(T, cairo_font_options_set_hint_metrics) X(T, cairo_set_source_rgba) X(T, cairo_move_to) X(T, cairo_fill)       \
    X(T, pango_attr_list_filter) X(T, pango_font_description_get_size)
EASEL_LAZY_LIBRARY(pango, text, TEXT_FUNCTIONS, NULL, "libpangocairo-1.0.so.0", "libpango-1.0.so.0", EASEL_CAIRO_SONAMES);

/* The largest font size (pixels) and scale that markup's attributes ask for. */
typedef struct { double size, scale; } easel_markup_sizes;

static int note_size(easel_attribute *attribute, void *data) {
    easel_markup_sizes *sizes = data;
    double size = 0;
    switch (attribute->klass->type) {
    case EASEL_ATTR_SIZE:
    case EASEL_ATTR_ABSOLUTE_SIZE: size = ((easel_attr_size *)attribute)->size / (double)PANGO_SCALE; break;
    case EASEL_ATTR_FONT_DESC: size = text.pango_font_description_get_size(((easel_attr_font_desc *)attribute)->desc) / (double)PANGO_SCALE; break;
    case EASEL_ATTR_SCALE:
        if (!(((easel_attr_float *)attribute)->value <= sizes->scale)) sizes->scale = ((easel_attr_float *)attribute)->value;
        break;
    default: break;
    }
    if (size > sizes->size) sizes->size = size;
    return 0; /* (keeps every attribute: this only looks) */
}

/* Markup's own sizes held to the type limit: `<span font="1000000">` or `<big>` nested a thousand
 * times asks FreeType for a face it cannot make, which leaves the thread's font map broken for
 * every later text. 1 when within the limit; 0 with a message. */
static int check_markup_sizes(PangoAttrList *attributes, double base, char *message) {
    if (!attributes) return 1;
    easel_markup_sizes sizes = {.size = 0, .scale = 1};
    PangoAttrList *removed = text.pango_attr_list_filter(attributes, note_size, &sizes);
    if (removed) text.pango_attr_list_unref(removed);
    double largest = (sizes.size > base ? sizes.size : base) * (sizes.scale > 1 ? sizes.scale : 1);
    if (!(largest <= EASEL_TEXT_MAX_SIZE)) {
        snprintf(message, EASEL_TEXT_MESSAGE_SIZE, "markup asks for a font of %g pixels; at most %g", largest,
                 EASEL_TEXT_MAX_SIZE);
        return 0;
    }
    return 1;
}

/* Text laid out but wrong (no size, or sizes past every bound): the thread's font map may be
 * what broke (a face FreeType could not make stays broken in it), so it is thrown away and the
 * next text on this thread gets a new one (PangoCairo keeps one default font map a thread). */
static void discard_font_map(void) { text.pango_cairo_font_map_set_default(NULL); }

/* The style laid out for `cr` (whose target is an ARGB32 image surface), in `box` the rectangle
 * it covers relative to the layout's origin (its ink and logical extents together), and in
 * `tallest` the logical height in pixels of its tallest run (of its largest font). Returns the
 * layout, or NULL with a message. */
static PangoLayout *lay_out(const easel_text_style *style, cairo_t *cr, PangoRectangle *box, int *tallest, char *message) {
    if (!style || !style->text) { fail(message, "no text"); return NULL; }
    size_t length = strlen(style->text);
    if (length == 0) { fail(message, "no text"); return NULL; }
    if (length > EASEL_TEXT_MAX_BYTES) {
        snprintf(message, EASEL_TEXT_MESSAGE_SIZE, "the text is %zu bytes; at most %d", length, EASEL_TEXT_MAX_BYTES);
        return NULL;
    }
    if (!(style->size > 0 && style->size <= EASEL_TEXT_MAX_SIZE)) {
        snprintf(message, EASEL_TEXT_MESSAGE_SIZE, "the size must be over 0 and at most %g pixels", EASEL_TEXT_MAX_SIZE);
        return NULL;
    }
    /* Pango measures in ints of 1/1024 pixel: a line's width in them overflows past about 2 million
     * pixels (and then it reports about 4 million, wrapped or not). No glyph advances over 4 ems a
     * byte (a character is at least a byte), so the text's bytes times its size bound any line's
     * width; no image that size could be made anyway. */
    if ((double)length * style->size > EASEL_TEXT_MAX_BYTES_TIMES_SIZE) {
        fail(message, "the text is too long for its size");
        return NULL;
    }
    if (style->max_width < 0 || style->max_width > EASEL_TEXT_MAX_SIDE) {
        snprintf(message, EASEL_TEXT_MESSAGE_SIZE, "the wrap width must be 0 to %d pixels", EASEL_TEXT_MAX_SIDE);
        return NULL;
    }
    if (style->alignment < 0 || style->alignment > 2) { fail(message, "the alignment must be 0, 1 or 2"); return NULL; }
    if (!text.g_utf8_validate(style->text, (ptrdiff_t)length, NULL)) { fail(message, "the text is not UTF-8"); return NULL; }

    PangoAttrList *attributes = NULL;
    char *plain = NULL;
    if (style->markup) {
        GError *error = NULL;
        if (!text.pango_parse_markup(style->text, (int)length, 0, &attributes, &plain, NULL, &error)) {
            snprintf(message, EASEL_TEXT_MESSAGE_SIZE, "markup: %s", error && error->message ? error->message : "does not parse");
            if (error) text.g_error_free(error);
            return NULL;
        }
        if (!plain || !plain[0]) {
            text.g_free(plain);
            if (attributes) text.pango_attr_list_unref(attributes);
            fail(message, "no text (the markup has none)");
            return NULL;
        }
        if (!check_markup_sizes(attributes, style->size, message)) {
            text.g_free(plain);
            if (attributes) text.pango_attr_list_unref(attributes);
            return NULL;
        }
    }

    /* The context takes cr's target's font options, then these over them: grey antialiasing and no
     * hinting of outlines or metrics, so that the result does not depend on the fontconfig settings
     * of the machine (beyond its fonts). It uses PangoCairo's default font map, which is the
     * calling thread's own (Pango >= 1.32.6). */
    PangoContext *context = text.pango_cairo_create_context(cr);
    cairo_font_options_t *options = text.cairo_font_options_create();
    text.cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY);
    text.cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
    text.cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
    text.pango_cairo_context_set_font_options(context, options); /* (copies them) */
    text.cairo_font_options_destroy(options);
    /* 72 dpi, as libvips renders imgproxy's text: a point in markup (`font='Sans 40'`) is a pixel. */
    text.pango_cairo_context_set_resolution(context, 72);
    PangoLayout *layout = text.pango_layout_new(context);
    text.g_object_unref(context); /* (the layout holds it) */

    PangoFontDescription *description = text.pango_font_description_from_string(style->font && style->font[0] ? style->font : "sans");
    text.pango_font_description_set_absolute_size(description, style->size * PANGO_SCALE);
    text.pango_layout_set_font_description(layout, description); /* (copies it) */
    text.pango_font_description_free(description);
    if (style->max_width > 0) {
        text.pango_layout_set_width(layout, style->max_width * PANGO_SCALE);
        text.pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR);
    }
    text.pango_layout_set_alignment(layout, style->alignment == 1 ? PANGO_ALIGN_CENTER : style->alignment == 2 ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT);
    if (style->markup) {
        text.pango_layout_set_text(layout, plain, -1);
        text.pango_layout_set_attributes(layout, attributes); /* (refs them) */
        text.pango_attr_list_unref(attributes);
        text.g_free(plain);
    } else {
        text.pango_layout_set_text(layout, style->text, (int)length);
    }

    /* Ink extents are rounded out to whole pixels, logical ones to the nearest. But cairo's image
     * surfaces draw each glyph at its position rounded to a whole pixel (and pango's error underline
     * strays), which can move ink half a pixel past the extents: so a pixel more round the ink.
     * Text that draws nothing (spaces) has empty ink extents: then the logical ones alone. */
    PangoRectangle ink, logical;
    text.pango_layout_get_pixel_extents(layout, &ink, &logical);
    *box = logical;
    if (ink.width > 0 && ink.height > 0) {
        ink.x -= 1;
        ink.y -= 1;
        ink.width += 2;
        ink.height += 2;
        int x1 = ink.x + ink.width > logical.x + logical.width ? ink.x + ink.width : logical.x + logical.width;
        int y1 = ink.y + ink.height > logical.y + logical.height ? ink.y + ink.height : logical.y + logical.height;
        box->x = ink.x < logical.x ? ink.x : logical.x;
        box->y = ink.y < logical.y ? ink.y : logical.y;
        box->width = x1 - box->x;
        box->height = y1 - box->y;
    }
    if (box->width <= 0 || box->height <= 0) {
        text.g_object_unref(layout);
        discard_font_map();
        fail(message, "the text has no size");
        return NULL;
    }
    /* Markup can make some of the text larger than `size`: the bound on its bytes times its size
     * again with the tallest run's height. */
    *tallest = 0;
    PangoLayoutIter *iter = text.pango_layout_get_iter(layout);
    do {
        PangoRectangle run;
        text.pango_layout_iter_get_run_extents(iter, NULL, &run);
        if (run.height > *tallest) *tallest = run.height;
    } while (text.pango_layout_iter_next_run(iter));
    text.pango_layout_iter_free(iter);
    *tallest = (int)(((int64_t)*tallest + PANGO_SCALE - 1) / PANGO_SCALE);
    if ((double)length * *tallest > EASEL_TEXT_MAX_BYTES_TIMES_SIZE) {
        text.g_object_unref(layout);
        discard_font_map();
        fail(message, "the text is too long for its size");
        return NULL;
    }
    if (box->width > EASEL_TEXT_MAX_SIDE || box->height > EASEL_TEXT_MAX_SIDE) {
        snprintf(message, EASEL_TEXT_MESSAGE_SIZE, "the text would be %d x %d pixels; at most %d a side", box->width, box->height,
                 EASEL_TEXT_MAX_SIDE);
        text.g_object_unref(layout);
        discard_font_map();
        return NULL;
    }
    return layout;
}

/* A cairo context drawing on `surface`; NULL (both destroyed, the reason in message) when cairo
 * cannot make one. */
static cairo_t *context_on(cairo_surface_t *surface, char *message) {
    cairo_t *cr = text.cairo_create(surface);
    int status = text.cairo_status(cr);
    if (status == CAIRO_STATUS_SUCCESS) return cr;
    text.cairo_destroy(cr);
    text.cairo_surface_destroy(surface);
    fail(message, text.cairo_status_to_string(status));
    return NULL;
}

int easel_text_measure(const easel_text_style *style, int *width, int *height, char *message) {
    if (!easel_lazy_require(&pango, message, EASEL_TEXT_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    /* Laid out for a 1 x 1 ARGB32 image surface: the same font options as render's surface. */
    cairo_surface_t *surface = text.cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t *cr = context_on(surface, message);
    if (!cr) return 0;
    PangoRectangle box;
    int tallest;
    PangoLayout *layout = lay_out(style, cr, &box, &tallest, message);
    if (layout) {
        *width = box.width;
        *height = box.height;
        text.g_object_unref(layout);
    }
    text.cairo_destroy(cr);
    text.cairo_surface_destroy(surface);
    return layout != NULL;
}

int easel_text_render(const easel_text_style *style, uint8_t *pixels, size_t row_bytes, int width, int height, char *message) {
    if (width <= 0 || height <= 0 || width > EASEL_TEXT_MAX_SIDE || height > EASEL_TEXT_MAX_SIDE)
        return fail(message, "the image has no size or is too large");
    if (!pixels || ((uintptr_t)pixels & 3) || (row_bytes & 3) || row_bytes < (size_t)width * 4 || row_bytes > INT_MAX)
        return fail(message, "the pixels must be 4-byte aligned in rows of a multiple of 4 bytes, at least 4 a pixel");
    if (!easel_lazy_require(&pango, message, EASEL_TEXT_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    for (int y = 0; y < height; y++) memset(pixels + (size_t)y * row_bytes, 0, (size_t)width * 4);
    cairo_surface_t *surface = text.cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, width, height, (int)row_bytes);
    cairo_t *cr = context_on(surface, message);
    if (!cr) return 0;
    PangoRectangle box;
    int tallest;
    PangoLayout *layout = lay_out(style, cr, &box, &tallest, message);
    if (!layout) {
        text.cairo_destroy(cr);
        text.cairo_surface_destroy(surface);
        return 0;
    }
    /* The box's corner at the image's: the layout's origin at minus its offset. Spans of markup with
     * a colour of their own draw in it; the rest in this one. But cairo 1.16 keeps every glyph it
     * draws as an image in caches bounded only in glyphs (16384), megabytes each at large sizes:
     * large text is filled as outlines instead, in this colour alone (as cairo >= 1.17 does above
     * 256 pixels by itself, but there keeping the colours). */
    text.cairo_set_source_rgba(cr, style->red / 255.0, style->green / 255.0, style->blue / 255.0, 1);
    text.cairo_move_to(cr, -box.x, -box.y);
    if (tallest > EASEL_TEXT_OUTLINE_HEIGHT) {
        text.pango_cairo_layout_path(cr, layout);
        text.cairo_fill(cr);
    } else {
        text.pango_cairo_show_layout(cr, layout);
    }
    int status = text.cairo_status(cr);
    text.g_object_unref(layout);
    text.cairo_destroy(cr);
    text.cairo_surface_flush(surface);
    text.cairo_surface_destroy(surface);
    if (status != CAIRO_STATUS_SUCCESS) return fail(message, text.cairo_status_to_string(status));
    easel_cairo_to_rgba(pixels, row_bytes, width, height);
    return 1;
}
