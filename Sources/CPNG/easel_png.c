#include "easel_png.h"

#include <png.h>
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

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
} easel_png_source;

static void read_from_memory(png_structp png, png_bytep out, png_size_t length) {
    easel_png_source *source = (easel_png_source *)png_get_io_ptr(png);
    if (length > source->size - source->offset) {
        png_error(png, "the file ends before the image does");
    }
    memcpy(out, source->data + source->offset, length);
    source->offset += length;
}

static void error_to_message(png_structp png, png_const_charp text);
static void ignore_warning(png_structp png, png_const_charp text);

int easel_png_decode(const uint8_t *data, size_t size, int gray_output, uint8_t *pixels, size_t row_bytes,
                     int expected_width, int expected_height, char *message) {
    easel_png_source source = {data, size, 0};
    png_bytep *volatile rows = NULL;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, message, error_to_message, ignore_warning);
    if (!png) {
        set_message(message, "out of memory");
        return 0;
    }
    png_infop info = png_create_info_struct(png);
    if (!info || setjmp(png_jmpbuf(png))) {
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return 0;
    }
    /* Limits: the caller checked width x height against its pixel limit from the header;
     * these bound what libpng itself may allocate for ancillary chunks. */
    png_set_user_limits(png, (png_uint_32)expected_width, (png_uint_32)expected_height);
    png_set_chunk_cache_max(png, 256);
    png_set_chunk_malloc_max(png, 8 << 20);
    png_set_read_fn(png, &source, read_from_memory);
    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    if ((int)width != expected_width || (int)height != expected_height) {
        png_error(png, "PNG dimensions differ from its header");
    }
    int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    /* Everything becomes 8 bits per channel. 16-bit samples are scaled (v * 255 / 65535),
     * not treated as linear light. */
    if (bit_depth == 16) png_set_scale_16(png);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    int is_gray = color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA;
    if (gray_output) {
        if (color_type & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
        if (!is_gray) png_set_rgb_to_gray_fixed(png, 1, -1, -1);
    } else {
        if (has_trns) png_set_tRNS_to_alpha(png);
        if (is_gray) png_set_gray_to_rgb(png);
        if (!(color_type & PNG_COLOR_MASK_ALPHA) && !has_trns) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t needed = (size_t)width * (gray_output ? 1 : 4);
    if (png_get_rowbytes(png, info) != needed) {
        png_error(png, "unexpected row layout after conversion");
    }
    rows = malloc(sizeof(png_bytep) * height);
    if (!rows) png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + (size_t)y * row_bytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return 1;
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
                     int compression_level, uint8_t **output, size_t *output_size, char *message) {
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

void easel_png_free(void *buffer) {
    free(buffer);
}
