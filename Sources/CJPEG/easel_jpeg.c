#include "easel_jpeg.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char *message;
    int premature_end;
} easel_error_mgr;

typedef struct {
    struct jpeg_progress_mgr base;
    int max_scans;
    easel_error_mgr *errors;
} easel_progress_mgr;

static void easel_error_exit(j_common_ptr cinfo) {
    easel_error_mgr *errors = (easel_error_mgr *)cinfo->err;
    if (errors->message) {
        (*cinfo->err->format_message)(cinfo, errors->message);
    }
    longjmp(errors->jump, 1);
}

static void easel_emit_message(j_common_ptr cinfo, int level) {
    easel_error_mgr *errors = (easel_error_mgr *)cinfo->err;
    /* A file that stops early is padded with gray by libjpeg: we refuse it instead. */
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
        errors->premature_end = 1;
    }
}

static void easel_progress(j_common_ptr cinfo) {
    easel_progress_mgr *progress = (easel_progress_mgr *)cinfo->progress;
    if (cinfo->is_decompressor) {
        j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
        if (progress->max_scans > 0 && dinfo->input_scan_number > progress->max_scans) {
            if (progress->errors->message) {
                snprintf(progress->errors->message, EASEL_JPEG_MESSAGE_SIZE,
                         "more than %d progressive scans", progress->max_scans);
            }
            longjmp(progress->errors->jump, 2);
        }
    }
}

static void set_message(char *message, const char *text) {
    if (message) {
        snprintf(message, EASEL_JPEG_MESSAGE_SIZE, "%s", text);
    }
}

static void init_errors(easel_error_mgr *errors, char *message) {
    jpeg_std_error(&errors->base);
    errors->base.error_exit = easel_error_exit;
    errors->base.emit_message = easel_emit_message;
    errors->message = message;
    errors->premature_end = 0;
    if (message) message[0] = 0;
}

int easel_jpeg_read_header(const uint8_t *data, size_t size, easel_jpeg_header *header, char *message) {
    struct jpeg_decompress_struct cinfo;
    easel_error_mgr errors;
    memset(&cinfo, 0, sizeof cinfo); /* a failing jpeg_create_* leaves nothing to destroy */
    init_errors(&errors, message);
    cinfo.err = &errors.base;
    if (setjmp(errors.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return 0;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    header->width = (int)cinfo.image_width;
    header->height = (int)cinfo.image_height;
    header->components = cinfo.num_components;
    header->is_cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    header->progressive = cinfo.progressive_mode ? 1 : 0;
    jpeg_destroy_decompress(&cinfo);
    return 1;
}

int easel_jpeg_decode_checked(const uint8_t *data, size_t size, int scale_denom, int gray_output,
                              int width, int height, int output_width, int output_height,
                              uint8_t *pixels, size_t row_bytes, int max_scans, int raw_cmyk, int *cmyk_layout,
                              char *message) {
    struct jpeg_decompress_struct cinfo;
    easel_error_mgr errors;
    easel_progress_mgr progress;
    uint8_t *volatile cmyk_row = NULL;
    init_errors(&errors, message);
    cinfo.err = &errors.base;
    int jumped = setjmp(errors.jump);
    if (jumped) {
        free(cmyk_row);
        jpeg_destroy_decompress(&cinfo);
        return jumped == 2 ? -1 : 0; /* 2: the progressive scan limit */
    }
    jpeg_create_decompress(&cinfo);
    progress.base.progress_monitor = easel_progress;
    progress.max_scans = max_scans;
    progress.errors = &errors;
    cinfo.progress = &progress.base;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    /* Adobe writes CMYK inverted; so do nearly all files with an Adobe marker. */
    int inverted = cmyk && cinfo.saw_Adobe_marker;
    /* Raw CMYK only into 4-byte pixels: the caller converts them with the file's profile. */
    int keep_cmyk = cmyk && raw_cmyk && !gray_output;
    if (cmyk_layout) *cmyk_layout = keep_cmyk ? (inverted ? 2 : 1) : 0;
    if (((int)cinfo.image_width != width || (int)cinfo.image_height != height)) {
        set_message(message, "JPEG size differs from the size it was opened with");
        jpeg_destroy_decompress(&cinfo);
        return 0;
    }
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)scale_denom;
    cinfo.dct_method = JDCT_ISLOW;
    if (cmyk) {
        cinfo.out_color_space = JCS_CMYK;
    } else if (gray_output) {
        cinfo.out_color_space = JCS_GRAYSCALE;
    } else {
        cinfo.out_color_space = JCS_EXT_RGBA;
    }
    jpeg_calc_output_dimensions(&cinfo);
    if (((int)cinfo.output_width != output_width || (int)cinfo.output_height != output_height)) {
        set_message(message, "JPEG output size differs from the buffer's");
        jpeg_destroy_decompress(&cinfo);
        return 0;
    }
    jpeg_start_decompress(&cinfo);
    if (cmyk && !keep_cmyk) {
        cmyk_row = malloc((size_t)cinfo.output_width * 4);
        if (!cmyk_row) {
            set_message(message, "out of memory");
            jpeg_destroy_decompress(&cinfo);
            return 0;
        }
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        uint8_t *row = pixels + (size_t)cinfo.output_scanline * row_bytes;
        JSAMPROW target = cmyk_row ? cmyk_row : row;
        if (jpeg_read_scanlines(&cinfo, &target, 1) != 1) break;
        if (cmyk_row) {
            for (JDIMENSION x = 0; x < cinfo.output_width; x++) {
                int c = cmyk_row[4 * x], m = cmyk_row[4 * x + 1], y = cmyk_row[4 * x + 2], k = cmyk_row[4 * x + 3];
                if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
                int r = c * k / 255, g = m * k / 255, b = y * k / 255;
                if (gray_output) {
                    row[x] = (uint8_t)((r * 77 + g * 150 + b * 29) >> 8);
                } else {
                    row[4 * x] = (uint8_t)r;
                    row[4 * x + 1] = (uint8_t)g;
                    row[4 * x + 2] = (uint8_t)b;
                    row[4 * x + 3] = 255;
                }
            }
        }
        if (errors.premature_end) break;
    }
    if (errors.premature_end || cinfo.output_scanline < cinfo.output_height) {
        set_message(message, "the file ends before the image does");
        free(cmyk_row);
        jpeg_destroy_decompress(&cinfo);
        return 0;
    }
    jpeg_finish_decompress(&cinfo);
    free(cmyk_row);
    jpeg_destroy_decompress(&cinfo);
    if (errors.premature_end) {
        set_message(message, "the file ends before the image does");
        return 0;
    }
    return 1;
}

/* Encodes rows of `components` bytes per pixel given in `in_space`, stored as `jpeg_space`. */
static int encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int components,
                  J_COLOR_SPACE in_space, J_COLOR_SPACE jpeg_space, int quality, int progressive, int full_chroma,
                  const uint8_t *icc, size_t icc_size, uint8_t **output, unsigned long *output_size, char *message) {
    struct jpeg_compress_struct cinfo;
    easel_error_mgr errors;
    memset(&cinfo, 0, sizeof cinfo);
    unsigned char *buffer = NULL;
    unsigned long buffer_size = 0;
    init_errors(&errors, message);
    cinfo.err = &errors.base;
    if (setjmp(errors.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return 0;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &buffer_size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = components;
    cinfo.in_color_space = in_space;
    jpeg_set_defaults(&cinfo);
    if (jpeg_space != in_space) jpeg_set_colorspace(&cinfo, jpeg_space);
    jpeg_set_quality(&cinfo, quality, TRUE);
    if (full_chroma && cinfo.num_components >= 3) {
        for (int i = 0; i < cinfo.num_components; i++) {
            cinfo.comp_info[i].h_samp_factor = 1;
            cinfo.comp_info[i].v_samp_factor = 1;
        }
    }
    if (progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    if (icc && icc_size > 0 && icc_size <= 0xFFFFFFFFu) jpeg_write_icc_profile(&cinfo, icc, (unsigned int)icc_size);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * row_bytes);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *output = buffer;
    *output_size = buffer_size;
    return 1;
}

int easel_jpeg_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int components,
                      int quality, int progressive, int full_chroma, const uint8_t *icc, size_t icc_size,
                      uint8_t **output, unsigned long *output_size, char *message) {
    J_COLOR_SPACE in_space = components == 1 ? JCS_GRAYSCALE : JCS_EXT_RGBA;
    J_COLOR_SPACE jpeg_space = components == 1 ? JCS_GRAYSCALE : JCS_YCbCr;
    return encode(pixels, width, height, row_bytes, components, in_space, jpeg_space, quality, progressive, full_chroma,
                  icc, icc_size, output, output_size, message);
}

int easel_jpeg_encode_cmyk(const uint8_t *pixels, int width, int height, size_t row_bytes, int quality,
                           const uint8_t *icc, size_t icc_size, uint8_t **output, unsigned long *output_size, char *message) {
    /* YCCK with an Adobe marker, as Photoshop writes CMYK. */
    return encode(pixels, width, height, row_bytes, 4, JCS_CMYK, JCS_YCCK, quality, 0, 0, icc, icc_size,
                  output, output_size, message);
}

void easel_jpeg_free(void *buffer) {
    free(buffer);
}
