#include "easel_png.h"

#include <png.h>
#include <zlib.h>
#include <spng.h>
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

int easel_png_decode(const uint8_t *data, size_t size, int gray_output, uint8_t *pixels, size_t row_bytes,
                     int expected_width, int expected_height, char *message) {
    /* Decoding uses libspng (what libvips uses too): measurably faster than libpng here, and
     * it reports errors as return codes. */
    spng_ctx *ctx = spng_ctx_new(0);
    if (!ctx) {
        set_message(message, "out of memory");
        return 0;
    }
    uint8_t *buffer = NULL;
    int result = 0, error;
    struct spng_ihdr ihdr;
    /* The caller checked width x height against its pixel limit; these bound ancillary chunks. */
    spng_set_image_limits(ctx, (uint32_t)expected_width, (uint32_t)expected_height);
    spng_set_chunk_limits(ctx, 8 << 20, 32 << 20);
    if ((error = spng_set_png_buffer(ctx, data, size)) || (error = spng_get_ihdr(ctx, &ihdr))) goto fail;
    if ((int)ihdr.width != expected_width || (int)ihdr.height != expected_height) {
        set_message(message, "PNG dimensions differ from its header");
        goto done;
    }
    struct spng_trns trns;
    int has_trns = spng_get_trns(ctx, &trns) == 0;
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
        result = 1;
        goto done;
    }
    buffer = malloc(decoded_size);
    if (!buffer) {
        set_message(message, "out of memory");
        goto done;
    }
    if ((error = spng_decode_image(ctx, buffer, decoded_size, format, flags))) goto fail;
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
