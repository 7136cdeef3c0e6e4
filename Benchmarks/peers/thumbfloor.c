/*
 * thumbfloor: a lower bound for JPEG thumbnailing, libjpeg-turbo used directly.
 *
 *   cc -O2 -o thumbfloor thumbfloor.c -ljpeg
 *   thumbfloor [-s WxH] [-q QUALITY] OUTDIR INPUT.jpg...
 *
 * For each input: read the file into memory, read the header, compute the
 * "contain" fit size inside the box (never upscaling, rounded as easel's
 * Resize.scaledSize does), decode with DCT scaling 1/denom, where denom is the
 * largest of 8/4/2/1 whose output still covers that fit size (easel's
 * JPEGCodec.scaleDenominator), using JDCT_ISLOW as easel does, into RGB.
 * Then box-average (integer source ranges) down to the fit size and encode
 * with jpeg_set_defaults + jpeg_set_quality(q) (baseline, 4:2:0, as easel does)
 * to OUTDIR/tn_<name>.jpg.
 * There is no colour management, no EXIF orientation and no error recovery
 * beyond skipping a bad file. Prints "<n> ok, <m> failed" at the end and exits
 * 1 if any file failed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
} error_mgr;

static void on_error(j_common_ptr cinfo) {
    error_mgr *errors = (error_mgr *)cinfo->err;
    (*cinfo->err->output_message)(cinfo);
    longjmp(errors->jump, 1);
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *data = length > 0 ? malloc((size_t)length) : NULL;
    if (data && fread(data, 1, (size_t)length, file) != (size_t)length) {
        free(data);
        data = NULL;
    }
    fclose(file);
    *size = (size_t)length;
    return data;
}

/* Box-average src (sw x sh, RGB) down (or copy) to dst (dw x dh, RGB). */
static void box_shrink(const unsigned char *src, int sw, int sh, unsigned char *dst, int dw, int dh) {
    int *x0 = malloc(sizeof(int) * (size_t)(dw + 1));
    for (int x = 0; x <= dw; x++) x0[x] = (int)((long long)x * sw / dw);
    uint32_t *acc = malloc(sizeof(uint32_t) * 3 * (size_t)dw);
    for (int y = 0; y < dh; y++) {
        int ya = (int)((long long)y * sh / dh), yb = (int)((long long)(y + 1) * sh / dh);
        if (yb <= ya) yb = ya + 1;
        memset(acc, 0, sizeof(uint32_t) * 3 * (size_t)dw);
        for (int sy = ya; sy < yb; sy++) {
            const unsigned char *row = src + (size_t)sy * (size_t)sw * 3;
            for (int x = 0; x < dw; x++) {
                int xa = x0[x], xb = x0[x + 1] > xa ? x0[x + 1] : xa + 1;
                uint32_t r = 0, g = 0, b = 0;
                for (int sx = xa; sx < xb; sx++) {
                    r += row[3 * sx];
                    g += row[3 * sx + 1];
                    b += row[3 * sx + 2];
                }
                acc[3 * x] += r;
                acc[3 * x + 1] += g;
                acc[3 * x + 2] += b;
            }
        }
        unsigned char *out = dst + (size_t)y * (size_t)dw * 3;
        for (int x = 0; x < dw; x++) {
            int xa = x0[x], xb = x0[x + 1] > xa ? x0[x + 1] : xa + 1;
            uint32_t n = (uint32_t)((xb - xa) * (yb - ya));
            for (int c = 0; c < 3; c++) out[3 * x + c] = (unsigned char)((acc[3 * x + c] + n / 2) / n);
        }
    }
    free(acc);
    free(x0);
}

static int thumbnail(const char *input, const char *outdir, int box_w, int box_h, int quality) {
    size_t size = 0;
    unsigned char *data = read_file(input, &size);
    if (!data) {
        fprintf(stderr, "%s: cannot read\n", input);
        return 0;
    }
    struct jpeg_decompress_struct dinfo;
    struct jpeg_compress_struct cinfo;
    error_mgr errors;
    unsigned char *volatile pixels = NULL, *volatile small = NULL;
    FILE *volatile out = NULL;
    dinfo.err = jpeg_std_error(&errors.base);
    cinfo.err = dinfo.err;
    errors.base.error_exit = on_error;
    jpeg_create_decompress(&dinfo);
    jpeg_create_compress(&cinfo);
    if (setjmp(errors.jump)) {
        fprintf(stderr, "%s: libjpeg error\n", input);
        jpeg_destroy_decompress(&dinfo);
        jpeg_destroy_compress(&cinfo);
        if (out) fclose(out);
        free(pixels);
        free(small);
        free(data);
        return 0;
    }
    jpeg_mem_src(&dinfo, data, (unsigned long)size);
    jpeg_read_header(&dinfo, TRUE);
    int w = (int)dinfo.image_width, h = (int)dinfo.image_height;

    /* Fit inside the box, no upscaling, rounded half away from zero (Swift's .rounded()). */
    double scale = fmin((double)box_w / w, (double)box_h / h);
    int fw = w, fh = h;
    if (scale < 1) {
        fw = (int)lround(w * scale);
        fh = (int)lround(h * scale);
        if (fw < 1) fw = 1;
        if (fh < 1) fh = 1;
    }
    int denom = 1;
    static const int denoms[] = {8, 4, 2};
    for (int i = 0; i < 3; i++) {
        int d = denoms[i];
        if ((w + d - 1) / d >= fw && (h + d - 1) / d >= fh) {
            denom = d;
            break;
        }
    }
    dinfo.scale_num = 1;
    dinfo.scale_denom = (unsigned)denom;
    dinfo.dct_method = JDCT_ISLOW;
    dinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&dinfo);
    int sw = (int)dinfo.output_width, sh = (int)dinfo.output_height;
    pixels = malloc((size_t)sw * (size_t)sh * 3);
    while (dinfo.output_scanline < dinfo.output_height) {
        JSAMPROW row = pixels + (size_t)dinfo.output_scanline * (size_t)sw * 3;
        jpeg_read_scanlines(&dinfo, &row, 1);
    }
    jpeg_finish_decompress(&dinfo);

    small = malloc((size_t)fw * (size_t)fh * 3);
    box_shrink(pixels, sw, sh, small, fw, fh);

    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    char name[4096];
    const char *dot = strrchr(base, '.');
    int stem = dot ? (int)(dot - base) : (int)strlen(base);
    snprintf(name, sizeof name, "%s/tn_%.*s.jpg", outdir, stem, base);
    out = fopen(name, "wb");
    if (!out) {
        fprintf(stderr, "%s: cannot write %s\n", input, name);
        jpeg_destroy_decompress(&dinfo);
        jpeg_destroy_compress(&cinfo);
        free(pixels);
        free(small);
        free(data);
        return 0;
    }
    jpeg_stdio_dest(&cinfo, out);
    cinfo.image_width = (JDIMENSION)fw;
    cinfo.image_height = (JDIMENSION)fh;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = small + (size_t)cinfo.next_scanline * (size_t)fw * 3;
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    fclose(out);
    jpeg_destroy_decompress(&dinfo);
    jpeg_destroy_compress(&cinfo);
    free(pixels);
    free(small);
    free(data);
    return 1;
}

int main(int argc, char **argv) {
    int box_w = 256, box_h = 256, quality = 80, i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc) break;
        if (strcmp(argv[i], "-s") == 0) {
            if (sscanf(argv[i + 1], "%dx%d", &box_w, &box_h) != 2 || box_w < 1 || box_h < 1) {
                fprintf(stderr, "bad size %s\n", argv[i + 1]);
                return 2;
            }
        } else if (strcmp(argv[i], "-q") == 0) {
            quality = atoi(argv[i + 1]);
        } else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: %s [-s WxH] [-q QUALITY] OUTDIR INPUT.jpg...\n", argv[0]);
        return 2;
    }
    const char *outdir = argv[i++];
    int ok = 0, failed = 0;
    for (; i < argc; i++) {
        if (thumbnail(argv[i], outdir, box_w, box_h, quality)) ok++;
        else failed++;
    }
    printf("%d ok, %d failed\n", ok, failed);
    return failed ? 1 : 0;
}
