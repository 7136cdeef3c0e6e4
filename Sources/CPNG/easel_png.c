#include "easel_png.h"
#include "easel_input.h"
#include "easel_shrink.h"

#include <png.h>
#include <zlib.h>
#include <spng.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_message(char *message, const char *text) {
    if (message) snprintf(message, EASEL_PNG_MESSAGE_SIZE, "%s", text);
}

static uint32_t read_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

int easel_png_read_header(const uint8_t *data, size_t size, easel_png_header *header, char *message) {
    static const uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    if (size < 33 || memcmp(data, signature, 8) != 0 || memcmp(data + 12, "IHDR", 4) != 0 || read_be32(data + 8) != 13) {
        set_message(message, "not a PNG file (bad signature or IHDR)");
        return 0;
    }
    uint32_t width = read_be32(data + 16), height = read_be32(data + 20);
    if (width == 0 || height == 0 || width > 0x7fffffff || height > 0x7fffffff) {
        set_message(message, "invalid PNG dimensions");
        return 0;
    }
    int bit_depth = data[24], color_type = data[25];
    header->width = (int)width;
    header->height = (int)height;
    header->bit_depth = bit_depth;
    header->color_type = color_type;
    header->interlaced = data[28] == 1;
    header->is_gray = color_type == 0 || color_type == 4;
    header->has_alpha = color_type == 4 || color_type == 6;
    /* A tRNS chunk before IDAT also gives alpha. */
    size_t offset = 33;
    while (!header->has_alpha && offset + 8 <= size) {
        uint32_t length = read_be32(data + offset);
        const uint8_t *type = data + offset + 4;
        if (memcmp(type, "tRNS", 4) == 0) header->has_alpha = 1;
        if (memcmp(type, "IDAT", 4) == 0 || length > size) break;
        offset += 12 + (size_t)length;
    }
    return 1;
}

/* ---- The fast path: 8-bit gray, RGB and RGBA, not interlaced, no tRNS ----
 *
 * Where decoding time went with libspng (1920x1080 RGB photos saved by Pillow, adaptive
 * filters, nearly every row Paeth): about half in its scanline unfiltering and conversion to
 * RGBA, most of the rest in zlib's inflate. Here the IDAT stream is inflated a row at a time by
 * ISA-L's igzip (png_rows below: as fast as libdeflate's whole-buffer inflate on such photos,
 * about twice zlib's speed, and it never holds more than two rows), rows are unfiltered in
 * place with the Paeth predictor in SSE2 (one pixel's channels per vector, as libpng's intel
 * code does), and written out as RGBA or gray, or summed into a shrink on load's blocks.
 * Anything else, and anything unexpected (a bad CRC, a damaged or short stream, extra data),
 * goes to libspng, which decides and words the error: this path only ever succeeds or steps
 * aside, and the caller's output is written again by libspng when it steps aside. The chunks
 * before the image are libspng's to judge first (easel_png_decode reads them with libspng
 * before it takes this path).
 *
 * One known difference, where libspng (zlib) refuses and this path decodes: a deflate block
 * whose Huffman code is incomplete (codes left unused), which RFC 1951 allows only for a
 * single distance code and zlib refuses ("invalid distances set"). ISA-L reads such a block
 * as it stands: the pixels are what its codes say, never bytes from outside the stream. No
 * encoder writes one; a crafted file with correct CRCs can (PNGFastPathTests). */

#if defined(__x86_64__)
#include <immintrin.h>

/* Paeth, one pixel's channels per vector as 16-bit lanes. The chain from one pixel to the next
 * (its left neighbour `a`) is what bounds the speed, so the loads are fixed-size (3 or 4
 * bytes, no memcpy call), and a second form uses SSSE3's pabsw and SSE4.1's pblendvb, which
 * take three operations off that chain; it is chosen at run time. */
#define PAETH_ROW(NAME, BPP, ATTRIBUTES, ABS, SELECT)                                                     \
    ATTRIBUTES static void NAME(uint8_t *row, const uint8_t *previous, size_t length) {                 \
        const __m128i zero = _mm_setzero_si128();                                                      \
        __m128i a = zero, c = zero;                                                                    \
        for (size_t i = 0; i < length; i += BPP) {                                                     \
            int32_t up = 0, here = 0;                                                                  \
            memcpy(&up, previous + i, BPP);                                                            \
            memcpy(&here, row + i, BPP);                                                               \
            __m128i b = _mm_unpacklo_epi8(_mm_cvtsi32_si128(up), zero);                                \
            __m128i x = _mm_unpacklo_epi8(_mm_cvtsi32_si128(here), zero);                              \
            __m128i to_b = _mm_sub_epi16(b, c), to_a = _mm_sub_epi16(a, c);                            \
            __m128i pa = ABS(to_b), pb = ABS(to_a), pc = ABS(_mm_add_epi16(to_a, to_b));               \
            __m128i smallest = _mm_min_epi16(_mm_min_epi16(pa, pb), pc);                               \
            __m128i predicted = SELECT(_mm_cmpeq_epi16(smallest, pa), a,                               \
                                       SELECT(_mm_cmpeq_epi16(smallest, pb), b, c));                   \
            x = _mm_and_si128(_mm_add_epi16(x, predicted), _mm_set1_epi16(0xff));                      \
            int32_t packed = _mm_cvtsi128_si32(_mm_packus_epi16(x, x));                                \
            memcpy(row + i, &packed, BPP);                                                             \
            c = b;                                                                                     \
            a = x;                                                                                     \
        }                                                                                              \
    }

static inline __m128i abs_sse2(__m128i x) { return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x)); }
static inline __m128i select_sse2(__m128i mask, __m128i yes, __m128i no) {
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}
__attribute__((target("ssse3,sse4.1"))) static inline __m128i abs_sse4(__m128i x) { return _mm_abs_epi16(x); }
__attribute__((target("ssse3,sse4.1"))) static inline __m128i select_sse4(__m128i mask, __m128i yes, __m128i no) {
    return _mm_blendv_epi8(no, yes, mask);
}

PAETH_ROW(paeth3_sse2, 3, , abs_sse2, select_sse2)
PAETH_ROW(paeth4_sse2, 4, , abs_sse2, select_sse2)
PAETH_ROW(paeth3_sse4, 3, __attribute__((target("ssse3,sse4.1"))), abs_sse4, select_sse4)
PAETH_ROW(paeth4_sse4, 4, __attribute__((target("ssse3,sse4.1"))), abs_sse4, select_sse4)

static int has_sse4(void) {
    static int known = -1;
    int value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        value = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1");
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
}
#endif

static void unfilter_paeth_plain(uint8_t *row, const uint8_t *previous, size_t length, int bpp) {
    for (size_t i = 0; i < length; i++) {
        int a = i >= (size_t)bpp ? row[i - bpp] : 0, b = previous[i], c = i >= (size_t)bpp ? previous[i - bpp] : 0;
        int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
        row[i] = (uint8_t)(row[i] + (pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)));
    }
}

int easel_png_unfilter_paeth_variant(uint8_t *row, const uint8_t *previous, size_t length, int bpp, int variant) {
    if (bpp <= 0 || length % (size_t)bpp != 0) return 0;
    if (variant == 0) {
        unfilter_paeth_plain(row, previous, length, bpp);
        return 1;
    }
#if defined(__x86_64__)
    if (bpp != 3 && bpp != 4) return 0;
    if (variant == 1) {
        (bpp == 3 ? paeth3_sse2 : paeth4_sse2)(row, previous, length);
        return 1;
    }
    if (variant == 2 && has_sse4()) {
        (bpp == 3 ? paeth3_sse4 : paeth4_sse4)(row, previous, length);
        return 1;
    }
#endif
    return 0;
}

static void unfilter_paeth(uint8_t *row, const uint8_t *previous, size_t length, int bpp) {
#if defined(__x86_64__)
    if (bpp == 3) {
        (has_sse4() ? paeth3_sse4 : paeth3_sse2)(row, previous, length);
        return;
    }
    if (bpp == 4) {
        (has_sse4() ? paeth4_sse4 : paeth4_sse2)(row, previous, length);
        return;
    }
#endif
    unfilter_paeth_plain(row, previous, length, bpp);
}

/* Undoes one row's filter in place; `previous` is the row above, already unfiltered (zeros for
 * the first). Returns 0 for an unknown filter type. */
static int unfilter_row(int filter, uint8_t *row, const uint8_t *previous, size_t length, int bpp) {
    switch (filter) {
    case 0:
        return 1;
    case 1:
        for (size_t i = (size_t)bpp; i < length; i++) row[i] = (uint8_t)(row[i] + row[i - bpp]);
        return 1;
    case 2:
        for (size_t i = 0; i < length; i++) row[i] = (uint8_t)(row[i] + previous[i]);
        return 1;
    case 3:
        for (size_t i = 0; i < (size_t)bpp; i++) row[i] = (uint8_t)(row[i] + (previous[i] >> 1));
        for (size_t i = (size_t)bpp; i < length; i++) row[i] = (uint8_t)(row[i] + ((row[i - bpp] + previous[i]) >> 1));
        return 1;
    case 4:
        unfilter_paeth(row, previous, length, bpp);
        return 1;
    default:
        return 0;
    }
}

/* The rows of an 8-bit gray, RGB or RGBA PNG that is not interlaced and has no tRNS, one at a
 * time: the IDAT chunks' zlib stream inflated as it is read by ISA-L's igzip (a real library,
 * about twice zlib's speed: a 49 MP PNG's thumbnail spent four fifths of its time in zlib's
 * inflate) and each row unfiltered against the one above. Two rows are held, never the image,
 * and a mapped input's pages go back as the stream passes them. Every chunk's CRC-32 is checked,
 * as it is read (so a chunk's bytes are inflated before its check ends: a caller keeps nothing
 * from a reader that steps aside); the zlib stream's Adler-32 is not computed, as libspng is
 * told (open_spng). Anything this reader does not expect makes it step aside, and libspng
 * decides and words the error. */
typedef struct {
    const uint8_t *data;
    size_t size;
    size_t next_chunk;          /* where the chunk after the one being inflated starts */
    uint32_t chunk_crc;         /* the running CRC-32 of that chunk's type and data read so far */
    uint32_t expected_crc;
    const uint8_t *chunk_end;   /* the end of that chunk's data */
    struct inflate_state *state;
    uint8_t *lines;             /* two rows of stride + 1 bytes (the filter byte first) */
    uint8_t *current, *previous;
    size_t stride;
    int bpp, height, rows_read;
    int input_ended;            /* no IDAT chunk follows the one read */
} png_rows;

static void png_rows_close(png_rows *rows) {
    free(rows->state);
    free(rows->lines);
}

/* The chunk at `offset`: 1 when it lies inside the file, with its length and type. */
static int chunk_at(const png_rows *rows, size_t offset, uint32_t *length, const uint8_t **type) {
    if (offset > rows->size || rows->size - offset < 12) return 0;
    *length = read_be32(rows->data + offset);
    if (*length > 0x7fffffffu || (size_t)*length > rows->size - offset - 12) return 0;
    *type = rows->data + offset + 4;
    return 1;
}

/* Adds what the inflater has read of the current chunk since `from` to its CRC, and hands back
 * the mapped pages behind it. */
static void account_input(png_rows *rows, const uint8_t *from) {
    const uint8_t *to = rows->state->next_in;
    if (to > from) rows->chunk_crc = crc32_gzip_refl(rows->chunk_crc, from, (size_t)(to - from));
    easel_input_release(to);
}

/* The IDAT chunk of `length` bytes whose type is at `type` (after the one read): the inflater
 * reads its data next, and its CRC starts with the type. */
static void begin_chunk(png_rows *rows, const uint8_t *type, uint32_t length) {
    rows->chunk_crc = crc32_gzip_refl(0, type, 4);
    rows->expected_crc = read_be32(type + 4 + length);
    rows->state->next_in = (uint8_t *)(uintptr_t)(type + 4);
    rows->state->avail_in = length;
    rows->chunk_end = type + 4 + length;
    rows->next_chunk = (size_t)(type - 4 - rows->data) + 12 + (size_t)length;
}

/* The rest of the current chunk, which the inflater has not read, added to its CRC (the
 * inflater is left at the chunk's end): whether the CRC matches. */
static int end_chunk(png_rows *rows) {
    const uint8_t *rest = rows->state->next_in;
    if (rest < rows->chunk_end) rows->chunk_crc = crc32_gzip_refl(rows->chunk_crc, rest, (size_t)(rows->chunk_end - rest));
    rows->state->next_in = (uint8_t *)(uintptr_t)rows->chunk_end;
    rows->state->avail_in = 0;
    return rows->chunk_crc == rows->expected_crc;
}

/* Ends the current chunk (its CRC must match) and gives the inflater the next IDAT chunk's
 * data: 1, 0 when there is no next IDAT chunk (the inflater may still hold rows it has read),
 * -1 when a CRC is wrong. */
static int next_idat(png_rows *rows) {
    if (!end_chunk(rows)) return -1;
    uint32_t length;
    const uint8_t *type;
    if (rows->input_ended || !chunk_at(rows, rows->next_chunk, &length, &type) || memcmp(type, "IDAT", 4) != 0) {
        rows->input_ended = 1;
        return 0;
    }
    begin_chunk(rows, type, length);
    return 1;
}

/* One call of the inflater into `out`, fed the next IDAT chunk when it has read the last: 1
 * when it moved (read input, wrote output or ended a block), 0 where the reader steps aside
 * (damage, a wrong CRC, or no more input and nothing more to give). */
static int inflate_step(png_rows *rows, uint8_t *out, uint32_t room) {
    struct inflate_state *state = rows->state;
    /* (Empty IDAT chunks are skipped, as libspng skips them.) */
    while (state->avail_in == 0 && !rows->input_ended) {
        if (next_idat(rows) < 0) return 0;
    }
    const uint8_t *from = state->next_in;
    int block_state = state->block_state;
    state->next_out = out;
    state->avail_out = room;
    int result = isal_inflate(state);
    account_input(rows, from);
    if (result < 0 || result == ISAL_NEED_DICT) return 0;
    return state->next_in != from || state->avail_out != room || (int)state->block_state != block_state;
}

/* The stream's next byte, taken before the inflater starts: 1, or 0 when there is none. */
static int stream_byte(png_rows *rows, uint8_t *byte) {
    while (rows->state->avail_in == 0) {
        if (next_idat(rows) != 1) return 0;
    }
    const uint8_t *from = rows->state->next_in;
    *byte = *from;
    rows->state->next_in++;
    rows->state->avail_in--;
    account_input(rows, from);
    return 1;
}

/* Opens the reader: 1, or -1 when the file is not one it reads (nothing to free then). */
static int png_rows_open(png_rows *rows, const uint8_t *data, size_t size, int width, int height) {
    static const uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    memset(rows, 0, sizeof *rows);
    if (size < 33 || memcmp(data, signature, 8) != 0 || read_be32(data + 8) != 13 || memcmp(data + 12, "IHDR", 4) != 0) return -1;
    if (data[24] != 8 || data[26] != 0 || data[27] != 0 || data[28] != 0) return -1;
    int color_type = data[25];
    int bpp = color_type == 0 ? 1 : color_type == 2 ? 3 : color_type == 6 ? 4 : 0;
    if (bpp == 0 || (int)read_be32(data + 16) != width || (int)read_be32(data + 20) != height) return -1;
    rows->data = data;
    rows->size = size;
    rows->bpp = bpp;
    rows->height = height;
    rows->stride = (size_t)width * (size_t)bpp;
    /* A row, with its filter byte, is one call's output (avail_out is 32 bits): libspng's own
     * limit on a scanline. */
    if (rows->stride + 1 > UINT32_MAX) return -1;
    /* The chunks before the image, each checked, up to the first IDAT. */
    size_t offset = 8;
    uint32_t length;
    const uint8_t *type;
    for (;;) {
        if (!chunk_at(rows, offset, &length, &type)) return -1;
        if (memcmp(type, "IDAT", 4) == 0) break;
        if (memcmp(type, "tRNS", 4) == 0 || memcmp(type, "IEND", 4) == 0) return -1;
        /* A critical chunk this reader does not know (bit 5 of the first letter clear): libspng's call. */
        if (!(type[0] & 0x20) && memcmp(type, "IHDR", 4) != 0 && memcmp(type, "PLTE", 4) != 0) return -1;
        if (crc32_gzip_refl(0, type, (size_t)length + 4) != read_be32(type + 4 + length)) return -1;
        offset += 12 + (size_t)length;
    }
    rows->state = malloc(sizeof *rows->state);
    rows->lines = calloc(2, rows->stride + 1);
    if (!rows->state || !rows->lines) {
        png_rows_close(rows);
        return -1;
    }
    isal_inflate_init(rows->state);
    rows->state->crc_flag = ISAL_DEFLATE;
    begin_chunk(rows, type, length);
    /* The zlib header (in whichever chunks hold its two bytes): deflate, no preset dictionary;
     * what follows is inflated as raw deflate. */
    uint8_t header[2];
    if (!stream_byte(rows, &header[0]) || !stream_byte(rows, &header[1]) || (header[0] & 0x0f) != 8 || (header[0] >> 4) > 7 ||
        (header[1] & 0x20) || ((unsigned)header[0] << 8 | header[1]) % 31 != 0) {
        png_rows_close(rows);
        return -1;
    }
    rows->previous = rows->lines;
    rows->current = rows->lines + rows->stride + 1;
    return 1;
}

/* The next row, unfiltered (stride bytes), or NULL where the reader steps aside. */
static const uint8_t *png_rows_next(png_rows *rows) {
    if (rows->rows_read >= rows->height) return NULL;
    uint8_t *swap = rows->previous;
    rows->previous = rows->current;
    rows->current = swap;
    uint8_t *out = rows->current;
    uint32_t room = (uint32_t)(rows->stride + 1);
    while (room > 0) {
        if (rows->state->block_state == ISAL_BLOCK_FINISH || !inflate_step(rows, out, room)) return NULL; /* (a stream that ends before the image, too) */
        out = rows->state->next_out;
        room = rows->state->avail_out;
    }
    /* (The first row's "row above" is the zeros the lines started as.) */
    if (!unfilter_row(rows->current[0], rows->current + 1, rows->previous + 1, rows->stride, rows->bpp)) return NULL;
    rows->rows_read++;
    return rows->current + 1;
}

/* After the last row: the stream must end there, and every chunk from here to IEND must match
 * its CRC (libspng reads them with the image and fails on a damaged one; a file cut after the
 * image, or without IEND, is tolerated as libspng tolerates it). 1, or 0 to step aside. */
static int png_rows_finish(png_rows *rows) {
    uint8_t extra[64];
    while (rows->state->block_state != ISAL_BLOCK_FINISH) {
        /* More rows than the header says, damage, or a stream that never ends: libspng's call. */
        if (!inflate_step(rows, extra, sizeof extra) || rows->state->avail_out != sizeof extra) return 0;
    }
    /* The rest of the chunk the stream ends in (the Adler-32, which is not computed, and
     * anything after it) is under its CRC; the chunks after it are checked below. */
    if (!end_chunk(rows)) return 0;
    size_t offset = rows->next_chunk;
    uint32_t length;
    const uint8_t *type;
    while (chunk_at(rows, offset, &length, &type)) {
        if (crc32_gzip_refl(0, type, (size_t)length + 4) != read_be32(type + 4 + length)) return 0;
        if (memcmp(type, "IEND", 4) == 0) break;
        offset += 12 + (size_t)length;
    }
    return 1;
}

int easel_png_decode_fast(const uint8_t *data, size_t size, int gray_output, uint8_t *pixels, size_t row_bytes,
                          int width, int height) {
    if (gray_output && size > 25 && data[25] != 0) return -1;
    png_rows rows;
    if (png_rows_open(&rows, data, size, width, height) < 0) return -1;
    int result = 1;
    for (int y = 0; y < height; y++) {
        const uint8_t *source = png_rows_next(&rows);
        if (!source) {
            result = -1;
            break;
        }
        uint8_t *target = pixels + (size_t)y * row_bytes;
        if (rows.bpp == 3) {
            for (size_t x = 0; x < (size_t)width; x++) {
                target[4 * x] = source[3 * x];
                target[4 * x + 1] = source[3 * x + 1];
                target[4 * x + 2] = source[3 * x + 2];
                target[4 * x + 3] = 255;
            }
        } else if (rows.bpp == 1 && !gray_output) {
            for (size_t x = 0; x < (size_t)width; x++) {
                uint8_t v = source[x];
                target[4 * x] = v;
                target[4 * x + 1] = v;
                target[4 * x + 2] = v;
                target[4 * x + 3] = 255;
            }
        } else {
            memcpy(target, source, rows.stride);
        }
    }
    if (result == 1 && !png_rows_finish(&rows)) result = -1;
    png_rows_close(&rows);
    return result;
}

/* A mapped input read by libspng as a stream, so that what it has read can be handed back
 * (easel_input_release) as the rows are decoded. */
typedef struct {
    const uint8_t *data;
    size_t size, position;
} mapped_stream;

static int read_mapped(spng_ctx *ctx, void *user, void *destination, size_t length) {
    (void)ctx;
    mapped_stream *stream = user;
    if (length > stream->size - stream->position) return SPNG_IO_EOF;
    memcpy(destination, stream->data + stream->position, length);
    stream->position += length;
    easel_input_release(stream->data + stream->position);
    return 0;
}

/* A libspng context over `data`, its header read into `ihdr` and checked against the size the
 * caller read (and checked against its pixel limit) from it; NULL with a message otherwise. */
static spng_ctx *open_spng(const uint8_t *data, size_t size, int expected_width, int expected_height,
                           struct spng_ihdr *ihdr, mapped_stream *stream, char *message) {
    /* The zlib stream's Adler-32 is not computed: every IDAT chunk's CRC-32 is (libspng's
     * default), and it covers every compressed byte, so damage to the file is still an error;
     * the Adler-32 of the inflated rows would only add a check of the encoder, at a tenth of a
     * large PNG's decode time (as browsers and libvips decode). */
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_IGNORE_ADLER32);
    if (!ctx) {
        set_message(message, "out of memory");
        return NULL;
    }
    int error;
    /* The caller checked width x height against its pixel limit; these bound ancillary chunks. */
    spng_set_image_limits(ctx, (uint32_t)expected_width, (uint32_t)expected_height);
    spng_set_chunk_limits(ctx, 8 << 20, 32 << 20);
    /* A mapped input is read as a stream (its pages handed back as it goes); memory as it is. */
    if (easel_input_is_mapped(data)) {
        *stream = (mapped_stream){data, size, 0};
        error = spng_set_png_stream(ctx, read_mapped, stream);
    } else {
        error = spng_set_png_buffer(ctx, data, size);
    }
    if (error || (error = spng_get_ihdr(ctx, ihdr))) {
        set_message(message, error == SPNG_EOF || error == SPNG_IO_EOF ? "the file ends before the image does" : spng_strerror(error));
    } else if ((int)ihdr->width != expected_width || (int)ihdr->height != expected_height) {
        set_message(message, "PNG dimensions differ from its header");
    } else {
        return ctx;
    }
    spng_ctx_free(ctx);
    return NULL;
}

/* libspng checks a chunk's CRC-32 when it reads the next chunk's header, so the last IDAT
 * chunk's is read only here, with the chunks after the image: with the zlib stream's Adler-32
 * not computed (open_spng), it is the only check of that chunk, and of a file's only IDAT. A
 * missing IEND or bytes after it are tolerated, as they were; a damaged chunk is not. Returns 0,
 * or SPNG_ECHUNK_CRC. */
static int last_chunk_error(spng_ctx *ctx) {
    return spng_decode_chunks(ctx) == SPNG_ECHUNK_CRC ? SPNG_ECHUNK_CRC : 0;
}

/* libspng reads the chunks before the image (and judges them: a damaged palette, a second
 * header, too many chunks): 0 and whether there is a tRNS chunk, or libspng's error. */
static int chunks_before_image(spng_ctx *ctx, struct spng_trns *trns, int *has_trns) {
    int error = spng_get_trns(ctx, trns);
    *has_trns = error == 0;
    return error == SPNG_ECHUNKAVAIL ? 0 : error;
}

int easel_png_decode(const uint8_t *data, size_t size, int gray_output, uint8_t *pixels, size_t row_bytes,
                     int expected_width, int expected_height, int fast_path, char *message) {
    /* Decoding uses libspng (what libvips uses too): measurably faster than libpng here, and
     * it reports errors as return codes. */
    struct spng_ihdr ihdr;
    mapped_stream stream;
    spng_ctx *ctx = open_spng(data, size, expected_width, expected_height, &ihdr, &stream, message);
    if (!ctx) return 0;
    uint8_t *buffer = NULL;
    int result = 0, error;
    struct spng_trns trns;
    int has_trns;
    if ((error = chunks_before_image(ctx, &trns, &has_trns))) goto fail;
    /* The fast path once libspng has read and judged the chunks before the image. */
    if (fast_path && !has_trns && easel_png_decode_fast(data, size, gray_output, pixels, row_bytes, expected_width, expected_height) == 1) {
        result = 1;
        goto done;
    }
    /* 8-bit gray straight to gray; everything else through RGBA8 (16-bit samples are scaled). */
    int direct_gray = gray_output && ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth <= 8 && !has_trns;
    int format = direct_gray ? SPNG_FMT_G8 : SPNG_FMT_RGBA8;
    size_t bytes_per_pixel = direct_gray ? 1 : 4;
    size_t tight = (size_t)ihdr.width * bytes_per_pixel, decoded_size = 0;
    if ((error = spng_decoded_image_size(ctx, format, &decoded_size))) goto fail;
    int flags = direct_gray ? 0 : SPNG_DECODE_TRNS;
    if (!gray_output && row_bytes == tight) {
        /* Rows need no padding: decode in place. */
        if ((error = spng_decode_image(ctx, pixels, decoded_size, format, flags))) goto fail;
        if ((error = last_chunk_error(ctx))) goto fail;
        result = 1;
        goto done;
    }
    buffer = malloc(decoded_size);
    if (!buffer) {
        set_message(message, "out of memory");
        goto done;
    }
    if ((error = spng_decode_image(ctx, buffer, decoded_size, format, flags))) goto fail;
    if ((error = last_chunk_error(ctx))) goto fail;
    for (uint32_t y = 0; y < ihdr.height; y++) {
        const uint8_t *source = buffer + (size_t)y * tight;
        uint8_t *target = pixels + (size_t)y * row_bytes;
        if (gray_output && !direct_gray) {
            for (uint32_t x = 0; x < ihdr.width; x++) {
                const uint8_t *p = source + 4 * x;
                target[x] = (uint8_t)((p[0] * 299 + p[1] * 587 + p[2] * 114 + 500) / 1000);
            }
        } else {
            memcpy(target, source, tight);
        }
    }
    result = 1;
    goto done;
fail:
    set_message(message, error == SPNG_EOF || error == SPNG_IO_EOF ? "the file ends before the image does" : spng_strerror(error));
done:
    free(buffer);
    spng_ctx_free(ctx);
    return result;
}

/* The block sums of a shrink on load, fed one decoded row at a time: `channels` 1 (gray), 3
 * (RGB) or 4 (RGBA, weighed by alpha); the first two are opaque and summed without weights,
 * a block's columns at a time. */
typedef struct {
    uint32_t *sums;
    uint8_t *pixels;
    size_t row_bytes;
    uint32_t width, height, out_width, factor, shift, channels, y, in_band;
} shrink_bands;

static int shrink_bands_open(shrink_bands *bands, uint8_t *pixels, size_t row_bytes, uint32_t width, uint32_t height,
                             int factor, uint32_t channels) {
    bands->pixels = pixels;
    bands->row_bytes = row_bytes;
    bands->width = width;
    bands->height = height;
    bands->factor = (uint32_t)factor;
    bands->shift = factor == 2 ? 1 : factor == 4 ? 2 : 3;
    bands->out_width = (width + (uint32_t)factor - 1) / (uint32_t)factor;
    bands->channels = channels;
    bands->y = bands->in_band = 0;
    bands->sums = calloc((size_t)bands->out_width * (channels == 4 ? 4 : 3), sizeof(uint32_t));
    return bands->sums != NULL;
}

static void shrink_bands_add(shrink_bands *bands, const uint8_t *row) {
    uint32_t width = bands->width, factor = bands->factor, channels = bands->channels;
    if (channels == 4) {
        for (uint32_t x = 0; x < width; x++) easel_shrink_add(bands->sums + 4 * (size_t)(x >> bands->shift), row + 4 * (size_t)x);
    } else {
        const uint8_t *p = row;
        uint32_t *sum = bands->sums;
        for (uint32_t x = 0; x < width; sum += 3) {
            uint32_t end = width - x < factor ? width : x + factor, red = 0, green = 0, blue = 0;
            if (channels == 1) {
                for (; x < end; x++, p++) red += p[0];
                green = blue = red;
            } else {
                for (; x < end; x++, p += 3) {
                    red += p[0];
                    green += p[1];
                    blue += p[2];
                }
            }
            sum[0] += red;
            sum[1] += green;
            sum[2] += blue;
        }
    }
    bands->y++;
    bands->in_band++;
    if (bands->in_band == factor || bands->y == bands->height) {
        uint8_t *target = bands->pixels + (size_t)((bands->y - 1) / factor) * bands->row_bytes;
        if (channels == 4) {
            easel_shrink_emit_row(bands->sums, target, width, bands->out_width, factor, bands->in_band);
        } else {
            easel_shrink_emit_opaque_row(bands->sums, target, width, bands->out_width, factor, bands->in_band);
        }
        bands->in_band = 0;
    }
}

int easel_png_decode_shrunk_fast(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes, int width, int height,
                                 int factor) {
    png_rows rows;
    if (png_rows_open(&rows, data, size, width, height) < 0) return -1;
    shrink_bands bands;
    int result = shrink_bands_open(&bands, pixels, row_bytes, (uint32_t)width, (uint32_t)height, factor, (uint32_t)rows.bpp) ? 1 : -1;
    for (int y = 0; result == 1 && y < height; y++) {
        const uint8_t *row = png_rows_next(&rows);
        if (row) {
            shrink_bands_add(&bands, row);
        } else {
            result = -1;
        }
    }
    if (result == 1 && !png_rows_finish(&rows)) result = -1;
    free(bands.sums);
    png_rows_close(&rows);
    return result;
}

int easel_png_decode_shrunk(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                            int expected_width, int expected_height, int factor, int fast_path, char *message) {
    if (factor != 2 && factor != 4 && factor != 8) {
        set_message(message, "the shrink factor is 2, 4 or 8");
        return 0;
    }
    struct spng_ihdr ihdr;
    mapped_stream stream;
    spng_ctx *ctx = open_spng(data, size, expected_width, expected_height, &ihdr, &stream, message);
    if (!ctx) return 0;
    uint8_t *row = NULL;
    shrink_bands bands = {0};
    int result = 0, error;
    if (ihdr.interlace_method != 0) {
        set_message(message, "an interlaced PNG is not decoded a row at a time");
        goto done;
    }
    struct spng_trns trns;
    int has_trns;
    if ((error = chunks_before_image(ctx, &trns, &has_trns))) goto fail;
    /* The fast path once libspng has read and judged the chunks before the image. */
    if (fast_path && !has_trns &&
        easel_png_decode_shrunk_fast(data, size, pixels, row_bytes, expected_width, expected_height, factor) == 1) {
        result = 1;
        goto done;
    }
    uint32_t width = ihdr.width, height = ihdr.height;
    /* No alpha channel and no transparent colour: rows as RGB, summed without weights. */
    int opaque = ihdr.color_type != SPNG_COLOR_TYPE_TRUECOLOR_ALPHA && ihdr.color_type != SPNG_COLOR_TYPE_GRAYSCALE_ALPHA && !has_trns;
    size_t channels = opaque ? 3 : 4;
    row = malloc((size_t)width * channels);
    if (!row || !shrink_bands_open(&bands, pixels, row_bytes, width, height, factor, (uint32_t)channels)) {
        set_message(message, "out of memory");
        goto done;
    }
    int format = opaque ? SPNG_FMT_RGB8 : SPNG_FMT_RGBA8;
    if ((error = spng_decode_image(ctx, NULL, 0, format, (opaque ? 0 : SPNG_DECODE_TRNS) | SPNG_DECODE_PROGRESSIVE))) goto fail;
    for (;;) {
        error = spng_decode_row(ctx, row, (size_t)width * channels);
        if (error != 0 && error != SPNG_EOI) goto fail;
        if (bands.y >= height) break;
        shrink_bands_add(&bands, row);
        if (error == SPNG_EOI) break;
    }
    if (bands.y != height) {
        set_message(message, "the file ends before the image does");
        goto done;
    }
    if ((error = last_chunk_error(ctx))) goto fail;
    result = 1;
    goto done;
fail:
    set_message(message, error == SPNG_EOF || error == SPNG_IO_EOF ? "the file ends before the image does" : spng_strerror(error));
done:
    free(row);
    free(bands.sums);
    spng_ctx_free(ctx);
    return result;
}

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
    int failed;
} easel_png_buffer;

static void write_to_buffer(png_structp png, png_bytep bytes, png_size_t length) {
    easel_png_buffer *buffer = (easel_png_buffer *)png_get_io_ptr(png);
    if (buffer->size + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity * 2 : 65536;
        while (capacity < buffer->size + length) capacity *= 2;
        uint8_t *grown = realloc(buffer->data, capacity);
        if (!grown) {
            buffer->failed = 1;
            png_error(png, "out of memory");
        }
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->size, bytes, length);
    buffer->size += length;
}

static void flush_buffer(png_structp png) { (void)png; }

static void error_to_message(png_structp png, png_const_charp text) {
    char *message = (char *)png_get_error_ptr(png);
    set_message(message, text);
    png_longjmp(png, 1);
}

static void ignore_warning(png_structp png, png_const_charp text) { (void)png; (void)text; }

int easel_png_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int components,
                     int compression_level, const uint8_t *icc, size_t icc_size,
                     uint8_t **output, size_t *output_size, char *message) {
    easel_png_buffer buffer = {NULL, 0, 0, 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, message, error_to_message, ignore_warning);
    if (!png) {
        set_message(message, "out of memory");
        return 0;
    }
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(buffer.data);
        return 0;
    }
    png_set_write_fn(png, &buffer, write_to_buffer, flush_buffer);
    png_set_compression_level(png, compression_level);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 components == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGBA,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (icc && icc_size > 0 && icc_size <= 0xFFFFFFFFu) {
        png_set_iCCP(png, info, "ICC profile", PNG_COMPRESSION_TYPE_BASE, (png_const_bytep)icc, (png_uint_32)icc_size);
    }
    png_write_info(png, info);
    for (int y = 0; y < height; y++) {
        png_write_row(png, (png_const_bytep)(pixels + (size_t)y * row_bytes));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *output = buffer.data;
    *output_size = buffer.size;
    return 1;
}

int easel_png_read_iccp(const uint8_t *data, size_t size, size_t max_size, uint8_t **profile, size_t *profile_size,
                        char *message) {
    /* The iCCP chunk read here, not through libspng: its chunk limits apply to every chunk
     * before IDAT, so a large text chunk would pass for a large profile. */
    *profile = NULL;
    *profile_size = 0;
    size_t offset = 8;
    while (offset + 12 <= size) {
        uint32_t length = read_be32(data + offset);
        const uint8_t *type = data + offset + 4;
        if (length > size - offset - 12) break;
        if (memcmp(type, "IDAT", 4) == 0 || memcmp(type, "IEND", 4) == 0) break;
        if (memcmp(type, "iCCP", 4) != 0) {
            offset += 12 + (size_t)length;
            continue;
        }
        const uint8_t *body = data + offset + 8;
        /* A name of 1-79 bytes, a NUL, the compression method (0: zlib), the zlib stream. */
        size_t name = 0;
        while (name < length && name < 80 && body[name] != 0) name++;
        if (name == 0 || name >= 80 || name + 2 > length || body[name + 1] != 0) {
            set_message(message, "malformed iCCP chunk");
            return 0;
        }
        z_stream stream;
        memset(&stream, 0, sizeof stream);
        if (inflateInit(&stream) != Z_OK) {
            set_message(message, "out of memory");
            return 0;
        }
        size_t capacity = 4096;
        uint8_t *out = malloc(capacity);
        int status = Z_OK;
        stream.next_in = (Bytef *)(body + name + 2);
        stream.avail_in = (uInt)(length - name - 2);
        while (out && status == Z_OK) {
            if (stream.total_out == capacity) {
                if (capacity > max_size) break;  /* past the limit: stop inflating */
                size_t grown_capacity = capacity * 2 > max_size + 1 ? max_size + 1 : capacity * 2;
                uint8_t *grown = realloc(out, grown_capacity);
                if (!grown) { free(out); out = NULL; break; }
                out = grown;
                capacity = grown_capacity;
            }
            stream.next_out = out + stream.total_out;
            stream.avail_out = (uInt)(capacity - stream.total_out);
            status = inflate(&stream, Z_NO_FLUSH);
        }
        size_t produced = stream.total_out;
        inflateEnd(&stream);
        if (!out) {
            set_message(message, "out of memory");
            return 0;
        }
        if (produced > max_size || (status == Z_OK && stream.total_out == capacity)) {
            free(out);
            *profile_size = produced;
            return -1;
        }
        if (status != Z_STREAM_END) {
            free(out);
            set_message(message, "damaged iCCP data");
            return 0;
        }
        *profile = out;
        *profile_size = produced;
        return 1;
    }
    return 2;
}

void easel_png_free(void *buffer) {
    free(buffer);
}
