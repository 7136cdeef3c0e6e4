#ifndef EASEL_PNG_H
#define EASEL_PNG_H

#include <stddef.h>
#include <stdint.h>

/* PNG through libspng (decoding) and libpng (encoding, for its compression level). libpng
 * reports errors by longjmp, which Swift cannot survive: it is caught here, and every function
 * returns 0 with a message instead. Decoding turns every colour type, bit depth, palette, tRNS
 * chunk and interlacing into 8-bit RGBA or gray; 16-bit samples are scaled, not treated as
 * linear light. */

#define EASEL_PNG_MESSAGE_SIZE 200

typedef struct {
    int width;
    int height;
    int has_alpha;   /* an alpha channel or a tRNS chunk */
    int is_gray;
    int interlaced;
    int bit_depth;
    int color_type;
} easel_png_header;

/* Parses the signature and IHDR only (no allocation). Returns 1 on success. */
int easel_png_read_header(const uint8_t *data, size_t size, easel_png_header *header, char *message);

/* Decodes to RGBA (straight alpha) when gray_output is 0, else 8-bit gray (alpha dropped).
 * `pixels` holds height rows of row_bytes; the caller checks the size against its limits
 * (from easel_png_read_header) before allocating them. With `fast_path`, 8-bit gray, RGB and
 * RGBA files that are not interlaced and have no tRNS are inflated a row at a time with
 * ISA-L's igzip and unfiltered here (the same pixels); every other file, and any file that path finds anything
 * wrong with, is decoded by libspng. */
/* The fast path alone: 1 when it decoded the file, -1 when it stepped aside (nothing written
 * that counts, no message). */
int easel_png_decode_fast(const uint8_t *data, size_t size, int gray_output, uint8_t *pixels, size_t row_bytes,
                          int width, int height);

/* One row of Paeth unfiltering in place with a chosen form, for tests: 0 plain C, 1 SSE2,
 * 2 SSSE3/SSE4.1 (what the decoder picks at run time). Returns 0 when that form is not
 * available here (another architecture, a CPU without SSE4.1, bpp other than 3 or 4). */
int easel_png_unfilter_paeth_variant(uint8_t *row, const uint8_t *previous, size_t length, int bpp, int variant);

int easel_png_decode(const uint8_t *data, size_t size, int gray_output, uint8_t *pixels, size_t row_bytes,
                     int expected_width, int expected_height, int fast_path, char *message);

/* A non-interlaced PNG shrunk on load by `factor` (2, 4 or 8): decoded a row at a time (with
 * `fast_path`, the rows of the files easel_png_decode's fast path takes come from ISA-L's
 * inflate, the rest from libspng) and each factor x factor block becomes one RGBA pixel (the mean of its premultiplied
 * colours, blocks at the right and bottom edges smaller), so the full-size image never exists:
 * what is held is the output and one row. `pixels` holds ceil(height / factor) rows of
 * row_bytes, each ceil(width / factor) RGBA pixels. Returns 1, or 0 with a message. */
int easel_png_decode_shrunk(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                            int expected_width, int expected_height, int factor, int fast_path, char *message);

/* The shrink on load's fast path alone (png_rows): 1 when it decoded the file, -1 when it
 * stepped aside (easel_png_decode_shrunk then has libspng decode it again from the start and
 * write every output row). */
int easel_png_decode_shrunk_fast(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes, int width, int height,
                                 int factor);

/* Encodes RGBA (components 4) or gray (components 1); compression level 0-9; an iCCP chunk
 * when icc is not NULL. */
int easel_png_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int components,
                     int compression_level, const uint8_t *icc, size_t icc_size,
                     uint8_t **output, size_t *output_size, char *message);

/* The inflated iCCP profile: 1 and *profile (free with easel_png_free), 2 when there is none,
 * -1 when it is larger than max_size (nothing kept), 0 with a message when it is damaged. */
int easel_png_read_iccp(const uint8_t *data, size_t size, size_t max_size, uint8_t **profile, size_t *profile_size,
                        char *message);

void easel_png_free(void *buffer);

#endif
