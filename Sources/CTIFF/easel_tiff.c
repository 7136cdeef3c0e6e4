#include "easel_tiff.h"
#include "easel_input.h"
#include "easel_shrink.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "easel_lazy.h"

/* libtiff allocates per strip, tile and directory: no single allocation past this (the
 * pixel limits are checked by the caller before any decode; this bounds what a lying
 * strip or tag count could ask for). */
#define EASEL_TIFF_MAX_ALLOCATION ((tmsize_t)256 << 20)

typedef struct {
    const uint8_t *data;
    toff_t size, position;
    char *message;
    int failed;
} source;

/* libtiff is loaded on first use (easel_lazy.h), not linked: it brings libLerc, libjbig,
 * libzstd, liblzma and libdeflate, which every process would load, relocate and initialise at
 * start (half a megabyte of resident memory) whether or not it reads a TIFF. The TIFFOpenOptions
 * functions came with libtiff 4.5, whose soname is libtiff.so.6. */
#define TIFF_FUNCTIONS(X, T)                                                                                        \
    X(T, TIFFClientOpenExt) X(T, TIFFClose) X(T, TIFFGetField) X(T, TIFFGetFieldDefaulted) X(T, TIFFIsTiled)        \
    X(T, TIFFNumberOfStrips) X(T, TIFFNumberOfTiles) X(T, TIFFOpenOptionsAlloc) X(T, TIFFOpenOptionsFree)           \
    X(T, TIFFOpenOptionsSetErrorHandlerExtR) X(T, TIFFOpenOptionsSetMaxSingleMemAlloc)                              \
    X(T, TIFFOpenOptionsSetWarningHandlerExtR) X(T, TIFFRGBAImageBegin) X(T, TIFFRGBAImageEnd)                      \
    X(T, TIFFRGBAImageGet) X(T, TIFFRGBAImageOK) X(T, TIFFStripSize64) X(T, TIFFTileSize64) X(T, TIFFReadDirectory) \
    X(T, TIFFReadScanline) X(T, TIFFScanlineSize) X(T, TIFFScanlineSize64) X(T, TIFFSetDirectory)
EASEL_LAZY_LIBRARY(libtiff, tiff, TIFF_FUNCTIONS, NULL, "libtiff.so.6");

static tmsize_t source_read(thandle_t handle, void *buffer, tmsize_t count) {
    source *s = (source *)handle;
    if (count <= 0 || s->position >= s->size) return 0;
    toff_t left = s->size - s->position;
    tmsize_t n = (toff_t)count < left ? count : (tmsize_t)left;
    memcpy(buffer, s->data + s->position, (size_t)n);
    s->position += (toff_t)n;
    /* (Of a mapped input, what lies before is handed back: strips and tiles are read once, mostly
     * in file order, and a read further back reads the file again.) */
    easel_input_release(s->data + s->position);
    return n;
}

static tmsize_t source_write(thandle_t handle, void *buffer, tmsize_t count) {
    (void)handle; (void)buffer; (void)count;
    return 0;  /* read-only */
}

static toff_t source_seek(thandle_t handle, toff_t offset, int whence) {
    source *s = (source *)handle;
    int64_t base;
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)s->position; break;
    case SEEK_END: base = (int64_t)s->size; break;
    default: return (toff_t)-1;
    }
    /* Relative seeks back arrive as two's complement; an absolute one past 2^63 is refused. */
    int64_t delta = (int64_t)offset, target;
    if (whence == SEEK_SET && delta < 0) return (toff_t)-1;
    if (__builtin_add_overflow(base, delta, &target) || target < 0) return (toff_t)-1;
    s->position = (toff_t)target;  /* past the end is allowed, as lseek allows it: reads there return nothing */
    return (toff_t)target;
}

static int source_close(thandle_t handle) { (void)handle; return 0; }
static toff_t source_size(thandle_t handle) { return ((source *)handle)->size; }
static int source_map(thandle_t handle, void **base, toff_t *size) { (void)handle; (void)base; (void)size; return 0; }
static void source_unmap(thandle_t handle, void *base, toff_t size) { (void)handle; (void)base; (void)size; }

/* The first error is kept as the message; warnings are dropped. */
static int on_error(TIFF *tif, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tif; (void)module;
    source *s = (source *)user_data;
    if (!s->failed) {
        vsnprintf(s->message, EASEL_TIFF_MESSAGE_SIZE, format, arguments);
        s->failed = 1;
    }
    return 1;
}

static int on_warning(TIFF *tif, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tif; (void)user_data; (void)module; (void)format; (void)arguments;
    return 1;
}

static TIFF *open_source(source *s, const uint8_t *data, size_t size, char *message) {
    s->data = data;
    s->size = size;
    s->position = 0;
    s->message = message;
    s->failed = 0;
    message[0] = 0;
    TIFFOpenOptions *options = tiff.TIFFOpenOptionsAlloc();
    if (!options) { snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "out of memory"); return NULL; }
    tiff.TIFFOpenOptionsSetMaxSingleMemAlloc(options, EASEL_TIFF_MAX_ALLOCATION);
    tiff.TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, s);
    tiff.TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, s);
    /* "m": never map (the bytes belong to the caller and are read-only). */
    TIFF *tif = tiff.TIFFClientOpenExt("memory", "rm", (thandle_t)s, source_read, source_write, source_seek, source_close,
                                  source_size, source_map, source_unmap, options);
    tiff.TIFFOpenOptionsFree(options);
    if (!tif && !message[0]) snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "not a readable TIFF");
    return tif;
}

/* The page's alpha as libtiff reads it: its first extra sample, when that is declared associated
 * or unassociated alpha (EXTRASAMPLE_ASSOCALPHA or _UNASSALPHA), else 0 (libtiff also takes an
 * unmarked or "unspecified" first extra sample as alpha; those are not alpha here, as Pillow and
 * browsers read them). */
static int alpha_kind(TIFF *tif) {
    uint16_t count = 0;
    uint16_t *kinds = NULL;
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &count, &kinds);
    if (count == 0 || !kinds) return 0;
    return kinds[0] == EXTRASAMPLE_ASSOCALPHA || kinds[0] == EXTRASAMPLE_UNASSALPHA ? kinds[0] : 0;
}

static int fail(TIFF *tif, char *message, const char *fallback) {
    if (!message[0]) snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "%s", fallback);
    if (tif) tiff.TIFFClose(tif);
    return 0;
}

static uint64_t shrunk_working_bytes(TIFF *tif, uint32_t width, uint32_t height);

/* What a pyramid's level must share with the first page: its samples, their layout and
 * meaning, and its orientation (what the decode of the first page takes from the first page). */
typedef struct {
    uint16_t bits, samples, photometric, orientation, extra_count, first_extra;
} page_kind;

static page_kind kind_of(TIFF *tif) {
    page_kind kind = {1, 1, 0, ORIENTATION_TOPLEFT, 0, 0};
    uint16_t *extra = NULL;
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &kind.bits);
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &kind.samples);
    if (!tiff.TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &kind.photometric)) kind.photometric = kind.samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &kind.orientation);
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &kind.extra_count, &extra);
    kind.first_extra = kind.extra_count > 0 && extra ? extra[0] : 0;
    return kind;
}

/* The directory `index` (the current one) as one of the first page's pyramid levels: marked
 * reduced-resolution, of the same kind as the first page, exactly 2, 4 or 8 times smaller. */
static void note_reduced_page(TIFF *tif, int index, uint32_t width, uint32_t height, page_kind first, easel_tiff_info *info) {
    uint32_t kind = 0, level_width = 0, level_height = 0;
    if (!tiff.TIFFGetField(tif, TIFFTAG_SUBFILETYPE, &kind) || !(kind & FILETYPE_REDUCEDIMAGE)) return;
    page_kind level = kind_of(tif);
    if (memcmp(&level, &first, sizeof(level)) != 0) return;
    if (!tiff.TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &level_width) || !tiff.TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &level_height)) return;
    for (int level = 0; level < 3; level++) {
        uint32_t factor = 2u << level;
        if (info->reduced_pages[level] || level_width != (width + factor - 1) / factor || level_height != (height + factor - 1) / factor) continue;
        char why[1024] = {0};
        if (tiff.TIFFRGBAImageOK(tif, why)) info->reduced_pages[level] = index;
    }
}

int easel_tiff_read_info(const uint8_t *data, size_t size, int page, int max_pages, easel_tiff_info *info,
                         uint8_t *icc, size_t icc_capacity, char *message) {
    if (!easel_lazy_require(&libtiff, message, EASEL_TIFF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    source s;
    TIFF *tif = open_source(&s, data, size, message);
    if (!tif) return 0;
    memset(info, 0, sizeof(*info));
    uint32_t first_width = 0, first_height = 0;
    tiff.TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &first_width);
    tiff.TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &first_height);
    page_kind first = kind_of(tif);
    int pages = 1;
    while (pages <= max_pages && tiff.TIFFReadDirectory(tif)) {
        if (page == 0) note_reduced_page(tif, pages, first_width, first_height, first, info);
        pages++;
    }
    /* A damaged later directory ends the count; it does not make the file unreadable. */
    s.failed = 0;
    message[0] = 0;
    info->pages = pages;
    if (page < 0 || page >= pages) {
        snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "no page %d (the file has %d)", page, pages);
        tiff.TIFFClose(tif);
        return 3;
    }
    if (!tiff.TIFFSetDirectory(tif, (tdir_t)page)) return fail(tif, message, "the page's directory is damaged");
    uint32_t width = 0, height = 0;
    uint16_t bits = 1, samples = 1, photometric = 0, orientation = ORIENTATION_TOPLEFT, extra_count = 0;
    uint16_t *extra = NULL;
    if (!tiff.TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) || !tiff.TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height))
        return fail(tif, message, "no image size");
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
    if (!tiff.TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) photometric = samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    info->width = width;
    info->height = height;
    info->bits_per_sample = bits;
    info->samples_per_pixel = samples;
    info->photometric = photometric;
    info->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    info->is_tiled = tiff.TIFFIsTiled(tif);
    info->has_alpha = alpha_kind(tif) != 0;
    info->is_gray = (photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE) && samples - extra_count == 1;
    uint32_t icc_size = 0;
    void *icc_data = NULL;
    if (tiff.TIFFGetField(tif, TIFFTAG_ICCPROFILE, &icc_size, &icc_data) && icc_data && icc_size > 0) {
        info->icc_size = icc_size;
        if (icc && icc_size <= icc_capacity) memcpy(icc, icc_data, icc_size);
    }
    char why[1024] = {0};
    if (!tiff.TIFFRGBAImageOK(tif, why)) {
        snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "%s", why[0] ? why : "a layout libtiff cannot convert");
        tiff.TIFFClose(tif);
        return 2;
    }
    info->shrunk_working_bytes = shrunk_working_bytes(tif, width, height);
    s.failed = 0;
    message[0] = 0;
    tiff.TIFFClose(tif);
    return 1;
}

/* Raw 8-bit CMYK samples, strip by strip through scanlines. 0 when the page is not that. */
static int read_raw_cmyk(TIFF *tif, uint8_t *pixels, size_t row_bytes, int width, int height) {
    uint16_t bits = 0, samples = 0, photometric = 0, planar = PLANARCONFIG_CONTIG, inkset = INKSET_CMYK;
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_INKSET, &inkset);
    if (!tiff.TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) return 0;
    if (photometric != PHOTOMETRIC_SEPARATED || inkset != INKSET_CMYK || bits != 8 || samples < 4 ||
        planar != PLANARCONFIG_CONTIG || tiff.TIFFIsTiled(tif))
        return 0;
    tmsize_t line = tiff.TIFFScanlineSize(tif);
    if (line < (tmsize_t)width * samples) return -1;
    uint8_t *buffer = (uint8_t *)malloc(line);
    if (!buffer) return -1;
    for (int y = 0; y < height; y++) {
        if (tiff.TIFFReadScanline(tif, buffer, (uint32_t)y, 0) < 0) { free(buffer); return -1; }
        uint8_t *out = pixels + (size_t)y * row_bytes;
        for (int x = 0; x < width; x++) memcpy(out + (size_t)x * 4, buffer + (size_t)x * samples, 4);
    }
    free(buffer);
    return 1;
}

/* One pixel of libtiff's RGBA raster as straight RGBA: alpha only where the page has it, colour
 * made straight where the raster holds it premultiplied. */
static void straight_pixel(uint32_t p, int alpha, int premultiplied, uint8_t *out) {
    uint8_t r = (uint8_t)TIFFGetR(p), g = (uint8_t)TIFFGetG(p), b = (uint8_t)TIFFGetB(p), a = alpha ? (uint8_t)TIFFGetA(p) : 255;
    if (premultiplied && a != 255) {
        if (a == 0) { r = g = b = 0; }
        else {
            unsigned ur = (r * 255u + a / 2) / a, ug = (g * 255u + a / 2) / a, ub = (b * 255u + a / 2) / a;
            r = (uint8_t)(ur > 255 ? 255 : ur); g = (uint8_t)(ug > 255 ? 255 : ug); b = (uint8_t)(ub > 255 ? 255 : ub);
        }
    }
    out[0] = r; out[1] = g; out[2] = b; out[3] = a;
}

/* Whether libtiff's raster of this page holds premultiplied colour (after TIFFRGBAImageBegin):
 * libtiff premultiplies colour with unassociated alpha, but hands gray over as stored, so gray
 * is premultiplied only when the file's alpha is associated. */
static int raster_premultiplied(TIFF *tif, const TIFFRGBAImage *image) {
    int kind = alpha_kind(tif);
    uint16_t photometric = 0;
    tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_PHOTOMETRIC, &photometric);
    int gray = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE;
    return kind != 0 && image->alpha != 0 && (!gray || kind == EXTRASAMPLE_ASSOCALPHA);
}

int easel_tiff_decode(const uint8_t *data, size_t size, int page, uint8_t *pixels, size_t row_bytes, int width, int height,
                      int raw_cmyk, char *message) {
    if (!easel_lazy_require(&libtiff, message, EASEL_TIFF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    source s;
    TIFF *tif = open_source(&s, data, size, message);
    if (!tif) return 0;
    if (page > 0 && !tiff.TIFFSetDirectory(tif, (tdir_t)page)) return fail(tif, message, "the page's directory is damaged");
    uint32_t w = 0, h = 0;
    tiff.TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    tiff.TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    if ((int64_t)w != width || (int64_t)h != height) return fail(tif, message, "the page changed size");
    if (raw_cmyk) {
        int raw = read_raw_cmyk(tif, pixels, row_bytes, width, height);
        if (raw == 1) { tiff.TIFFClose(tif); return 3; }
        if (raw < 0) return fail(tif, message, "damaged CMYK data");
    }
    TIFFRGBAImage image;
    char why[1024] = {0};
    if (!tiff.TIFFRGBAImageBegin(&image, tif, 0, why)) {
        if (!message[0]) snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "%s", why[0] ? why : "cannot convert the page");
        tiff.TIFFClose(tif);
        return 0;
    }
    /* The stored order: the caller applies the orientation (as it does EXIF's). */
    image.orientation = ORIENTATION_TOPLEFT;
    image.req_orientation = ORIENTATION_TOPLEFT;
    uint32_t *raster = (uint32_t *)malloc((size_t)width * height * 4);
    if (!raster) {
        tiff.TIFFRGBAImageEnd(&image);
        return fail(tif, message, "out of memory");
    }
    int ok = tiff.TIFFRGBAImageGet(&image, raster, (uint32_t)width, (uint32_t)height);
    /* The raster made straight where it is premultiplied. Extra samples that are not declared
     * alpha are no alpha: opaque, colours as stored (libtiff passes them through as if
     * associated). */
    int alpha = alpha_kind(tif) != 0, premultiplied = raster_premultiplied(tif, &image);
    tiff.TIFFRGBAImageEnd(&image);
    if (!ok || s.failed) {
        free(raster);
        return fail(tif, message, "damaged image data");
    }
    for (int y = 0; y < height; y++) {
        const uint32_t *in = raster + (size_t)y * width;
        uint8_t *out = pixels + (size_t)y * row_bytes;
        for (int x = 0; x < width; x++) straight_pixel(in[x], alpha, premultiplied, out + (size_t)x * 4);
    }
    free(raster);
    tiff.TIFFClose(tif);
    return 1;
}

/* The rows a strip (or a row of tiles) holds: the page's height when it is one strip. */
static uint32_t unit_rows(TIFF *tif, uint32_t height) {
    uint32_t unit = 0;
    if (tiff.TIFFIsTiled(tif)) tiff.TIFFGetField(tif, TIFFTAG_TILELENGTH, &unit);
    else tiff.TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &unit);
    return unit == 0 || unit > height ? height : unit;
}

/* Whether the shrunk decode reads this page a scanline at a time (libtiff decodes a strip
 * incrementally that way) instead of in bands of whole strips: strips taller than a band
 * (above all a page stored as one strip, as scanners write them), with samples interleaved
 * and no subsampled YCbCr (after TIFFRGBAImageBegin, which makes JPEG's YCbCr RGB). */
static int reads_scanlines(TIFF *tif, const TIFFRGBAImage *image, uint32_t height) {
    return !tiff.TIFFIsTiled(tif) && unit_rows(tif, height) > EASEL_TIFF_MAX_BAND && image->isContig &&
           image->photometric != PHOTOMETRIC_YCBCR;
}

/* The rows each read of the shrunk decode covers: a whole number of blocks, and of strips or
 * tile rows where that stays small (each then decoded once), else the strip rounded up to
 * whole blocks; 64 rows when it reads scanlines. */
static uint32_t band_rows(uint32_t unit, int scanlines, uint32_t height, uint32_t factor) {
    if (scanlines) unit = 64;
    if (unit >= height) return height;
    uint32_t a = unit, b = factor;
    while (b) { uint32_t t = a % b; a = b; b = t; }
    uint64_t common = (uint64_t)unit / a * factor;
    uint64_t band = common <= EASEL_TIFF_MAX_BAND ? common : ((uint64_t)unit + factor - 1) / factor * factor;
    while (band < 64 && band * 2 <= EASEL_TIFF_MAX_BAND) band *= 2;  /* not a read per block row */
    return band >= height ? height : (uint32_t)band;
}

/* What a shrunk decode of the page holds besides its result, at most (factors 2, 4 and 8): the
 * band's RGBA raster, and libtiff's decoded strip or tile and its copy of the compressed one
 * (the largest of the page's), or for scanlines one decoded scanline and libtiff's read-ahead. */
static uint64_t shrunk_working_bytes(TIFF *tif, uint32_t width, uint32_t height) {
    TIFFRGBAImage image;
    char why[1024] = {0};
    if (!tiff.TIFFRGBAImageBegin(&image, tif, 0, why)) return 0;
    int scanlines = reads_scanlines(tif, &image, height);
    tiff.TIFFRGBAImageEnd(&image);
    uint32_t unit = unit_rows(tif, height), band = 0;
    for (uint32_t factor = 2; factor <= 8; factor *= 2) {
        uint32_t rows = band_rows(unit, scanlines, height, factor);
        if (rows > band) band = rows;
    }
    uint64_t bytes = (uint64_t)width * band * 4;
    if (scanlines) return bytes + (uint64_t)tiff.TIFFScanlineSize64(tif) + (1u << 20);
    bytes += tiff.TIFFIsTiled(tif) ? (uint64_t)tiff.TIFFTileSize64(tif) : (uint64_t)tiff.TIFFStripSize64(tif);
    uint64_t *counts = NULL, largest = 0;
    if (tiff.TIFFGetField(tif, tiff.TIFFIsTiled(tif) ? TIFFTAG_TILEBYTECOUNTS : TIFFTAG_STRIPBYTECOUNTS, &counts) && counts) {
        uint32_t n = tiff.TIFFIsTiled(tif) ? tiff.TIFFNumberOfTiles(tif) : tiff.TIFFNumberOfStrips(tif);
        for (uint32_t i = 0; i < n; i++) if (counts[i] > largest) largest = counts[i];
    }
    return bytes + largest;
}

int easel_tiff_decode_shrunk(const uint8_t *data, size_t size, int page, uint8_t *pixels, size_t row_bytes, int width,
                             int height, int factor, char *message) {
    if (factor < 2 || factor > 8 || width < 1 || height < 1) {
        snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "the shrink factor is 2 to 8");
        return 0;
    }
    if (!easel_lazy_require(&libtiff, message, EASEL_TIFF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    source s;
    TIFF *tif = open_source(&s, data, size, message);
    if (!tif) return 0;
    if (page > 0 && !tiff.TIFFSetDirectory(tif, (tdir_t)page)) return fail(tif, message, "the page's directory is damaged");
    uint32_t w = 0, h = 0;
    tiff.TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    tiff.TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    if ((int64_t)w != width || (int64_t)h != height) return fail(tif, message, "the page changed size");
    TIFFRGBAImage image;
    char why[1024] = {0};
    if (!tiff.TIFFRGBAImageBegin(&image, tif, 0, why)) {
        if (!message[0]) snprintf(message, EASEL_TIFF_MESSAGE_SIZE, "%s", why[0] ? why : "cannot convert the page");
        tiff.TIFFClose(tif);
        return 0;
    }
    image.orientation = ORIENTATION_TOPLEFT;
    image.req_orientation = ORIENTATION_TOPLEFT;
    int alpha = alpha_kind(tif) != 0, premultiplied = raster_premultiplied(tif, &image);
    int scanlines = reads_scanlines(tif, &image, h);
    uint32_t f = (uint32_t)factor, out_width = (w + f - 1) / f, band = band_rows(unit_rows(tif, h), scanlines, h, f);
    uint32_t *raster = (uint32_t *)malloc((size_t)w * band * 4);
    uint32_t *sums = (uint32_t *)calloc((size_t)out_width * 4, sizeof(uint32_t));
    tmsize_t scanline_size = scanlines ? tiff.TIFFScanlineSize(tif) : 0;
    uint8_t *scanline = scanline_size > 0 ? (uint8_t *)malloc((size_t)scanline_size) : NULL;
    int ok = raster && sums && (!scanlines || scanline), out_of_memory = !ok;
    uint32_t in_block = 0;
    for (uint32_t top = 0; ok && top < h; top += band) {
        uint32_t rows = h - top < band ? h - top : band;
        if (scanlines) {
            /* Each row as stored, converted by the routine TIFFRGBAImageGet would use (one row:
             * no skew between rows to apply). */
            for (uint32_t r = 0; ok && r < rows; r++) {
                ok = tiff.TIFFReadScanline(tif, scanline, top + r, 0) == 1 && !s.failed;
                if (ok) image.put.contig(&image, raster + (size_t)r * w, 0, top + r, w, 1, 0, 0, scanline);
            }
            if (!ok) break;
        } else {
            image.row_offset = (int)top;
            image.col_offset = 0;
            if (!tiff.TIFFRGBAImageGet(&image, raster, w, rows) || s.failed) { ok = 0; break; }
        }
        for (uint32_t r = 0; r < rows; r++) {
            const uint32_t *in = raster + (size_t)r * w;
            if (alpha) {
                for (uint32_t x = 0; x < w; x++) {
                    uint8_t p[4];
                    straight_pixel(in[x], alpha, premultiplied, p);
                    easel_shrink_add(sums + 4 * (size_t)(x / f), p);
                }
            } else {
                /* Opaque: the samples summed as they are, a block's columns at a time. */
                uint32_t *sum = sums;
                for (uint32_t x = 0; x < w; sum += 3) {
                    uint32_t end = w - x < f ? w : x + f, red = 0, green = 0, blue = 0;
                    for (; x < end; x++) {
                        red += TIFFGetR(in[x]);
                        green += TIFFGetG(in[x]);
                        blue += TIFFGetB(in[x]);
                    }
                    sum[0] += red;
                    sum[1] += green;
                    sum[2] += blue;
                }
            }
            uint32_t y = top + r + 1;
            if (++in_block == f || y == h) {
                uint8_t *target = pixels + (size_t)((y - 1) / f) * row_bytes;
                if (alpha) {
                    easel_shrink_emit_row(sums, target, w, out_width, f, in_block);
                } else {
                    easel_shrink_emit_opaque_row(sums, target, w, out_width, f, in_block);
                }
                in_block = 0;
            }
        }
    }
    tiff.TIFFRGBAImageEnd(&image);
    if (raster) free(raster);
    if (scanline) free(scanline);
    free(sums);
    if (!ok) return fail(tif, message, out_of_memory ? "out of memory" : "damaged image data");
    tiff.TIFFClose(tif);
    return 1;
}
