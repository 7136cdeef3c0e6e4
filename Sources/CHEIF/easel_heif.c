#include "easel_heif.h"

#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easel_lazy.h"

/* libheif is loaded on first use (easel_lazy.h), not linked: it brings its codecs' libraries. */
#define HEIF_FUNCTIONS(X, T)                                                                                         \
    X(T, heif_context_alloc) X(T, heif_context_encode_image) X(T, heif_context_free)                                 \
    X(T, heif_context_get_encoder_for_format) X(T, heif_context_get_number_of_top_level_images)                      \
    X(T, heif_context_get_primary_image_handle) X(T, heif_context_read_from_memory_without_copy)                     \
    X(T, heif_context_set_max_decoding_threads) X(T, heif_context_write) X(T, heif_decode_image)                     \
    X(T, heif_decoding_options_alloc) X(T, heif_decoding_options_free) X(T, heif_encoder_release)                    \
    X(T, heif_encoder_set_lossy_quality) X(T, heif_have_decoder_for_format) X(T, heif_image_add_plane)               \
    X(T, heif_image_create) X(T, heif_image_get_bits_per_pixel_range) X(T, heif_image_get_height) X(T, heif_image_get_plane) \
    X(T, heif_image_get_plane_readonly) X(T, heif_image_get_width) X(T, heif_image_handle_get_height)                \
    X(T, heif_image_handle_get_list_of_thumbnail_IDs) X(T, heif_image_handle_get_luma_bits_per_pixel)                \
    X(T, heif_image_handle_get_nclx_color_profile) X(T, heif_image_handle_get_number_of_thumbnails)                  \
    X(T, heif_image_handle_get_raw_color_profile) X(T, heif_image_handle_get_raw_color_profile_size)                 \
    X(T, heif_image_handle_get_thumbnail) X(T, heif_image_handle_get_width) X(T, heif_image_handle_has_alpha_channel) \
    X(T, heif_image_handle_release) X(T, heif_image_release) X(T, heif_nclx_color_profile_free) X(T, heif_get_version_number_major) X(T, heif_get_version_number_minor)
#if LIBHEIF_NUMERIC_VERSION < 0x01000000 || LIBHEIF_NUMERIC_VERSION >= 0x02000000
#error "libheif 1.x is the one whose soname (libheif.so.1) this loads"
#endif
static int libheif_verify(char *problem, size_t size);
EASEL_LAZY_LIBRARY(libheif, heif, HEIF_FUNCTIONS, libheif_verify, "libheif.so.1");

/* Version 1, and at least the minor version the headers are. */
static int libheif_verify(char *problem, size_t size) {
    int major = heif.heif_get_version_number_major(), minor = heif.heif_get_version_number_minor();
    if (major == 1 && minor >= (LIBHEIF_NUMERIC_VERSION >> 16 & 0xFF)) return 1;
    snprintf(problem, size, "libheif %d.%d is loaded; easel was built for 1.%d", major, minor, LIBHEIF_NUMERIC_VERSION >> 16 & 0xFF);
    return 0;
}

static void set_message(char *message, const char *text) {
    if (message) snprintf(message, EASEL_HEIF_MESSAGE_SIZE, "%s", text);
}

/* The context and primary image handle (its first embedded thumbnail's instead when
 * use_thumbnail and it has one; *is_thumbnail says which), or 0 with a message. */
static int open_primary(const uint8_t *data, size_t size, int use_thumbnail, struct heif_context **context,
                        struct heif_image_handle **handle, int *is_thumbnail, char *message) {
    *is_thumbnail = 0;
    *context = NULL;
    *handle = NULL;
    *context = heif.heif_context_alloc();
    if (!*context) {
        set_message(message, "out of memory");
        return 0;
    }
    heif.heif_context_set_max_decoding_threads(*context, 0);
    struct heif_error error = heif.heif_context_read_from_memory_without_copy(*context, data, size, NULL);
    if (error.code == heif_error_Ok) error = heif.heif_context_get_primary_image_handle(*context, handle);
    if (error.code != heif_error_Ok) {
        set_message(message, error.message ? error.message : "unreadable HEIF");
        heif.heif_context_free(*context);
        *context = NULL;
        *handle = NULL;
        return 0;
    }
    if (use_thumbnail && heif.heif_image_handle_get_number_of_thumbnails(*handle) > 0) {
        heif_item_id id = 0;
        struct heif_image_handle *thumbnail = NULL;
        if (heif.heif_image_handle_get_list_of_thumbnail_IDs(*handle, &id, 1) == 1 &&
            heif.heif_image_handle_get_thumbnail(*handle, id, &thumbnail).code == heif_error_Ok && thumbnail) {
            heif.heif_image_handle_release(*handle);
            *handle = thumbnail;
            *is_thumbnail = 1;
        }
    }
    return 1;
}

int easel_heif_read_header(const uint8_t *data, size_t size, int use_thumbnail, easel_heif_header *header, size_t max_icc,
                           uint8_t **icc, size_t *icc_size, char *message) {
    *icc = NULL;
    *icc_size = 0;
    if (!easel_lazy_require(&libheif, message, EASEL_HEIF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    struct heif_context *context;
    struct heif_image_handle *handle;
    if (!open_primary(data, size, use_thumbnail, &context, &handle, &header->is_thumbnail, message)) return 0;
    header->width = heif.heif_image_handle_get_width(handle);
    header->height = heif.heif_image_handle_get_height(handle);
    header->has_alpha = heif.heif_image_handle_has_alpha_channel(handle);
    header->depth = heif.heif_image_handle_get_luma_bits_per_pixel(handle);
    header->image_count = heif.heif_context_get_number_of_top_level_images(context);
    header->color_primaries = 2;
    header->transfer = 2;
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif.heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx) {
        header->color_primaries = (int)nclx->color_primaries;
        header->transfer = (int)nclx->transfer_characteristics;
        heif.heif_nclx_color_profile_free(nclx);
    }
    size_t length = heif.heif_image_handle_get_raw_color_profile_size(handle);
    if (length > 0) {
        *icc_size = length;
        if (length <= max_icc && (*icc = malloc(length))) {
            struct heif_error error = heif.heif_image_handle_get_raw_color_profile(handle, *icc);
            if (error.code != heif_error_Ok) {
                free(*icc);
                *icc = NULL;
                *icc_size = 0;
            }
        }
    }
    heif.heif_image_handle_release(handle);
    heif.heif_context_free(context);
    return 1;
}

int easel_heif_decode(const uint8_t *data, size_t size, int use_thumbnail, int width, int height, uint8_t *pixels,
                      size_t row_bytes, char *message) {
    if (!easel_lazy_require(&libheif, message, EASEL_HEIF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    struct heif_context *context;
    struct heif_image_handle *handle;
    int is_thumbnail = 0;
    if (!open_primary(data, size, use_thumbnail, &context, &handle, &is_thumbnail, message)) return 0;
    int ok = 0;
    struct heif_image *image = NULL;
    struct heif_decoding_options *options = heif.heif_decoding_options_alloc();
    if (heif.heif_image_handle_get_width(handle) != width || heif.heif_image_handle_get_height(handle) != height) {
        set_message(message, "HEIF size differs from the size it was opened with");
        goto done;
    }
    if (options) options->convert_hdr_to_8bit = 1;
    struct heif_error error = heif.heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, options);
    if (error.code != heif_error_Ok) {
        set_message(message, error.message ? error.message : "undecodable HEIF");
        goto done;
    }
    int stride = 0;
    const uint8_t *plane = heif.heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    if (!plane || heif.heif_image_get_width(image, heif_channel_interleaved) != width ||
        heif.heif_image_get_height(image, heif_channel_interleaved) != height ||
        heif.heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved) != 8) {
        set_message(message, "HEIF decoded to an unexpected layout");
        goto done;
    }
    for (int y = 0; y < height; y++) memcpy(pixels + (size_t)y * row_bytes, plane + (size_t)y * (size_t)stride, (size_t)width * 4);
    ok = 1;
done:
    if (image) heif.heif_image_release(image);
    if (options) heif.heif_decoding_options_free(options);
    heif.heif_image_handle_release(handle);
    heif.heif_context_free(context);
    return ok;
}

int easel_heif_decodes_av1(void) {
    if (!easel_lazy_require(&libheif, NULL, 0)) return 0;
    return heif.heif_have_decoder_for_format(heif_compression_AV1) ? 1 : 0;
}

void easel_heif_free(void *buffer) {
    free(buffer);
}

/* The writer libheif calls with the encoded file: appended to a growing buffer. */
typedef struct {
    uint8_t *bytes;
    size_t size;
    int failed;
} memory_writer;

static struct heif_error write_to_memory(struct heif_context *context, const void *data, size_t size, void *userdata) {
    (void)context;
    memory_writer *writer = userdata;
    struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, ""};
    if (size == 0) return ok;
    uint8_t *grown = realloc(writer->bytes, writer->size + size);
    if (!grown) {
        writer->failed = 1;
        struct heif_error error = {heif_error_Encoding_error, heif_suberror_Unspecified, "out of memory"};
        return error;
    }
    memcpy(grown + writer->size, data, size);
    writer->bytes = grown;
    writer->size += size;
    return ok;
}

int easel_heif_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int has_alpha, int quality,
                      uint8_t **output, size_t *output_size, char *message) {
    *output = NULL;
    *output_size = 0;
    if (!easel_lazy_require(&libheif, message, EASEL_HEIF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    struct heif_context *context = heif.heif_context_alloc();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    memory_writer writer = {NULL, 0, 0};
    int ok = 0;
    if (!context) {
        set_message(message, "out of memory");
        return 0;
    }
    struct heif_error error = heif.heif_context_get_encoder_for_format(context, heif_compression_HEVC, &encoder);
    if (error.code != heif_error_Ok) {
        set_message(message, error.message ? error.message : "no HEVC encoder in libheif");
        goto done;
    }
    heif.heif_encoder_set_lossy_quality(encoder, quality < 1 ? 1 : quality > 100 ? 100 : quality);
    error = heif.heif_image_create(width, height, heif_colorspace_RGB, has_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB,
                              &image);
    if (error.code == heif_error_Ok) error = heif.heif_image_add_plane(image, heif_channel_interleaved, width, height, 8);
    if (error.code != heif_error_Ok) {
        set_message(message, error.message ? error.message : "cannot make the image");
        goto done;
    }
    int stride = 0;
    uint8_t *plane = heif.heif_image_get_plane(image, heif_channel_interleaved, &stride);
    if (!plane || stride < width * (has_alpha ? 4 : 3)) {
        set_message(message, "no image plane");
        goto done;
    }
    int channels = has_alpha ? 4 : 3;
    for (int y = 0; y < height; y++) {
        const uint8_t *source = pixels + (size_t)y * row_bytes;
        uint8_t *destination = plane + (size_t)y * (size_t)stride;
        if (has_alpha) {
            memcpy(destination, source, (size_t)width * 4);
        } else {
            for (int x = 0; x < width; x++) memcpy(destination + x * channels, source + x * 4, 3);
        }
    }
    error = heif.heif_context_encode_image(context, image, encoder, NULL, NULL);
    if (error.code != heif_error_Ok) {
        set_message(message, error.message ? error.message : "encoding failed");
        goto done;
    }
    struct heif_writer callbacks = {1, write_to_memory};
    error = heif.heif_context_write(context, &callbacks, &writer);
    if (error.code != heif_error_Ok || writer.failed || writer.size == 0) {
        set_message(message, error.message && error.message[0] ? error.message : "writing failed");
        free(writer.bytes);
        goto done;
    }
    *output = writer.bytes;
    *output_size = writer.size;
    ok = 1;
done:
    if (image) heif.heif_image_release(image);
    if (encoder) heif.heif_encoder_release(encoder);
    heif.heif_context_free(context);
    return ok;
}
