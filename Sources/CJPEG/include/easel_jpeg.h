#ifndef EASEL_JPEG_H
#define EASEL_JPEG_H

#include <stddef.h>
#include <stdint.h>

/* A thin layer over libjpeg-turbo. libjpeg reports errors by longjmp, which Swift cannot
 * survive; every function here catches the jump and returns 0 with a message instead. */

#define EASEL_JPEG_MESSAGE_SIZE 200

typedef struct {
    int width;
    int height;
    int components;       /* components in the file: 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK */
    int is_cmyk;
    int progressive;
    /* What libjpeg keeps of a file it reads in several scans (progressive, or components in
     * scans of their own): every 8x8 block's coefficients, 128 bytes each, of every component,
     * until the last scan, whatever the output scale; 0 for a single scan. */
    uint64_t coefficient_bytes;
} easel_jpeg_header;

/* Reads the header only. Returns 1 on success. */
int easel_jpeg_read_header(const uint8_t *data, size_t size, easel_jpeg_header *header, char *message);

/* Decodes at 1/scale_denom (1, 2, 4 or 8) into `pixels` (rows of `row_bytes`): 4 bytes per
 * pixel RGBA (alpha 255) when gray_output is 0, else 1 byte gray. CMYK and YCCK files are
 * converted to RGB. Refuses (returns 0) unless the file's size is exactly width x height and
 * its scaled output exactly output_width x output_height: the pixel buffer was sized from
 * those. A file that ends early is an error; more than max_scans progressive scans returns -1.
 * With raw_cmyk (and 4-byte output), CMYK/YCCK files are left as CMYK bytes for the caller to
 * convert with their profile: *cmyk_layout is then 1 (0 = no ink) or 2 (Adobe's inverted), else 0. */
/* dc_only_scans: at scale 1/8, a progressive file is decoded without the AC scans libjpeg-turbo
 * would not use (see easel_jpeg_strip_dc_only): the same pixels, several times faster. */
int easel_jpeg_decode_checked(const uint8_t *data, size_t size, int scale_denom, int gray_output,
                              int width, int height, int output_width, int output_height,
                              uint8_t *pixels, size_t row_bytes, int max_scans, int raw_cmyk, int *cmyk_layout,
                              int dc_only_scans, char *message);

/* Copies a progressive JPEG into `out` (room for `len` bytes) without the AC scans of the
 * components that libjpeg-turbo decodes with its 1x1 IDCT at scale 1/8 (luma, and every
 * component of gray, 4:4:4, 4:2:2, 4:4:0 and 4:1:1 files). The result, decoded at 1/8 with
 * do_block_smoothing off, has exactly the pixels of the original decoded at 1/8. Returns 0 with
 * *out_len set; 1 when it does not apply (baseline, arithmetic coding, restart intervals,
 * incomplete progressions, nothing to remove, anything unusual); -1 for malformed or truncated
 * input, or more than max_scans scans (when positive). On a nonzero return, decode the original. */
int easel_jpeg_strip_dc_only(const unsigned char *in, size_t len, unsigned char *out, size_t *out_len, int max_scans);

/* Encodes RGBA (components 4, alpha ignored) or gray (components 1) pixels; chroma at full
 * resolution (4:4:4) when full_chroma, else 4:2:0; an ICC profile
 * in APP2 chunks when icc is not NULL; no other metadata. On success *output is a buffer from
 * malloc (free it with easel_jpeg_free) of *output_size bytes. */
int easel_jpeg_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int components,
                      int quality, int progressive, int full_chroma, const uint8_t *icc, size_t icc_size,
                      uint8_t **output, unsigned long *output_size, char *message);

/* Encodes 4-byte CMYK pixels (as Adobe applications store them: inverted) with an Adobe marker.
 * For tests of the CMYK decoding path. */
int easel_jpeg_encode_cmyk(const uint8_t *pixels, int width, int height, size_t row_bytes, int quality,
                           const uint8_t *icc, size_t icc_size, uint8_t **output, unsigned long *output_size, char *message);

void easel_jpeg_free(void *buffer);

#endif
