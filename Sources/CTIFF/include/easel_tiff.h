#ifndef EASEL_TIFF_H
#define EASEL_TIFF_H

#include <stddef.h>
#include <stdint.h>

#define EASEL_TIFF_MESSAGE_SIZE 200
/* The most rows a shrunk decode reads at once where strips allow (taller strips are read a
 * scanline at a time; a taller tile is read whole). */
#define EASEL_TIFF_MAX_BAND 1024

/* What a page's directory says. */
typedef struct {
    uint32_t width, height;
    int bits_per_sample, samples_per_pixel, photometric, orientation;
    int has_alpha, is_gray, is_tiled;
    /* Directories (pages) counted from the first, stopping one past max_pages. */
    int pages;
    /* The ICC profile's size (0: none); its bytes are copied when icc_capacity holds them. */
    uint32_t icc_size;
    /* What easel_tiff_decode_shrunk holds besides its result, at most: its band of RGBA rows and
     * libtiff's buffers (see there). */
    uint64_t shrunk_working_bytes;
    /* Of page 0, a pyramidal file's levels: the directory of a reduced-resolution copy (its
     * NewSubfileType says so) exactly 2, 4 and 8 times smaller (each side the page's divided,
     * rounded up) that libtiff can read; 0 where there is none. */
    int reduced_pages[3];
} easel_tiff_info;

/* libtiff is loaded on the first call of any function here (not linked): when it cannot be,
 * each returns EASEL_LAZY_UNAVAILABLE (easel_lazy.h, -9) with the reason in its message. */

/* Reads the page's directory (0 is the first) from memory, with libtiff's own allocations
 * capped. Returns 1, 0 with a message when the file is damaged, or 2 with a message when
 * libtiff reads it but cannot turn it into RGBA (an unsupported layout or sample format), or 3
 * when the file has no such page (`info->pages` then says how many it has). */
int easel_tiff_read_info(const uint8_t *data, size_t size, int page, int max_pages, easel_tiff_info *info,
                         uint8_t *icc, size_t icc_capacity, char *message);

/* Decodes the page as RGBA (straight alpha) in its stored orientation into `pixels` (height
 * rows of row_bytes); width and height must be the directory's. With raw_cmyk, an 8-bit CMYK
 * page in strips is read as its raw C, M, Y, K samples (for its ICC profile to convert) and
 * 3 is returned; otherwise 1 (CMYK then converted by libtiff's naive formula), 0 with a
 * message on failure. */
int easel_tiff_decode(const uint8_t *data, size_t size, int page, uint8_t *pixels, size_t row_bytes, int width, int height,
                      int raw_cmyk, char *message);

/* Decodes the page shrunk on load: each factor x factor block (factor 2 to 8; the last ones
 * partial) becomes its mean (colour weighed by alpha, straight alpha), written into `pixels`
 * ((height + factor - 1) / factor rows of row_bytes, (width + factor - 1) / factor pixels each),
 * in the stored orientation. The page is read in bands of whole strips or tile rows (a whole
 * number of blocks tall), or a scanline at a time when its strips are taller than
 * EASEL_TIFF_MAX_BAND rows (a page stored as one strip), so the full-size raster never exists
 * (but for a page of tiles taller than that, read a row of tiles at a time). CMYK comes through libtiff's
 * naive formula (a page with a CMYK profile is decoded whole, `easel_tiff_decode`). Returns 1,
 * or 0 with a message. */
int easel_tiff_decode_shrunk(const uint8_t *data, size_t size, int page, uint8_t *pixels, size_t row_bytes, int width,
                             int height, int factor, char *message);

#endif
