#ifndef EASEL_TEXT_H
#define EASEL_TEXT_H

#include <stddef.h>
#include <stdint.h>

#define EASEL_TEXT_MESSAGE_SIZE 200
/* Defences (the Swift side also limits): the most text, in UTF-8 bytes, and the largest size. */
#define EASEL_TEXT_MAX_BYTES 65536
#define EASEL_TEXT_MAX_SIZE 4096.0
/* And the most bytes times size, and times the tallest run's logical height in pixels (markup can
 * make text larger): Pango measures in ints of 1/1024 pixel, which overflow (and wrap widths stop
 * working) once a line's width nears 2^21 pixels; this bound keeps any line under that for glyphs
 * up to 4 ems a byte. (DejaVu's runs are 1.164 em tall: at 48 px, 9362 bytes; at 4096 px, 109.) */
#define EASEL_TEXT_MAX_BYTES_TIMES_SIZE 524287.0
/* Text whose tallest run (a line of its largest font, about 1.2 em) is taller than this many
 * pixels is drawn as filled outlines, in the style's colour only (see easel_text_render). 128
 * rather than cairo 1.17's own 256: cairo 1.16 keeps every glyph it draws as an image in caches
 * bounded by count, not bytes, so many distinct sizes could hold hundreds of megabytes at 256
 * (about a quarter of that at 128). */
#define EASEL_TEXT_OUTLINE_HEIGHT 128
/* The largest width or height measure gives (cairo's limit on an image surface's side). */
#define EASEL_TEXT_MAX_SIDE 32767

typedef struct {
    const char *text;          /* UTF-8 */
    int markup;                /* 1: Pango markup (checked first: a parse error is returned with its message) */
    const char *font;          /* a Pango font description, e.g. "DejaVu Sans Bold"; NULL or "" is "sans". A size
                                * in it is ignored (`size` is used); a family not installed falls back to
                                * fontconfig's choice. */
    double size;               /* the size in pixels (absolute, the em), > 0 and at most EASEL_TEXT_MAX_SIZE */
    int max_width;             /* the width to wrap at in pixels (at words, then characters); 0: no wrapping (lines
                                * break only at newlines) */
    int alignment;             /* of the lines: 0 left, 1 centre, 2 right */
    uint8_t red, green, blue;  /* the colour (markup may give spans their own) */
} easel_text_style;

/* The size in pixels of the rendered text: its ink extents (what is drawn) together with its
 * logical extents (the lines' advance and height), so nothing drawn is cut off, descenders and
 * italic overhangs included. Wrapped text can be a little wider than max_width where a glyph's
 * ink overhangs its advance, or where a word is wider than max_width and cannot be broken. Returns
 * 1; or 0 with a message (markup that does not parse, no text, text that is not UTF-8, a size
 * or style out of range, a result over EASEL_TEXT_MAX_SIDE).
 *
 * The box is the extents' union, the ink's grown by a pixel all round (cairo draws each glyph at a
 * whole pixel, which can move it half a pixel past its extents). Not covered: the wavy error
 * underline of markup's underline='error', whose ends Pango's ink extents leave out (a few pixels
 * at large sizes: they may be cut off). */
int easel_text_measure(const easel_text_style *style, int *width, int *height, char *message);

/* Draws the text into `pixels` (height rows of row_bytes; 4-byte aligned; row_bytes a multiple of 4
 * and at least 4 * width, as cairo requires of ARGB32) as RGBA with straight alpha, transparent
 * where there is no text (the rows' first 4 * width bytes are cleared first: they need not start
 * zeroed), at the placement measure gives: width and height should be what it returned. Returns 1,
 * or 0 with a message.
 *
 * Text with a run taller than EASEL_TEXT_OUTLINE_HEIGHT (over about 110 px for DejaVu) is filled
 * as outlines, all in the style's colour: markup's colours are not drawn there. (cairo 1.16 keeps
 * each glyph it draws as an image, in caches bounded only in number of glyphs: megabytes each at
 * such sizes, without bound in all.)
 *
 * Both may be called from several threads at once: each thread lays out with its own Pango font map
 * (PangoCairo's default is per thread), built on the thread's first call, which is the slow one. */
int easel_text_render(const easel_text_style *style, uint8_t *pixels, size_t row_bytes, int width, int height,
                      char *message);

#endif
