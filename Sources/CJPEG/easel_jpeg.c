#include "easel_jpeg.h"
#include "easel_input.h"

#include <pthread.h>
#include <setjmp.h>
#include <strings.h>
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
        /* A file read in several scans is consumed whole before the first row comes out: of a
         * mapped input, what has been read is handed back as it goes. */
        if (dinfo->src) easel_input_release(dinfo->src->next_input_byte);
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
    /* (libjpeg's own test for a whole-image coefficient buffer; jpeg_read_header has sized the
     * components in blocks.) */
    header->coefficient_bytes = 0;
    if (cinfo.progressive_mode || cinfo.comps_in_scan < cinfo.num_components) {
        for (int c = 0; c < cinfo.num_components; c++) {
            const jpeg_component_info *component = &cinfo.comp_info[c];
            /* (jdcoefct.c's whole-image arrays: each side rounded up to the sampling factor.) */
            uint64_t h = (uint64_t)component->h_samp_factor, v = (uint64_t)component->v_samp_factor;
            uint64_t columns = ((uint64_t)component->width_in_blocks + h - 1) / h * h;
            uint64_t rows = ((uint64_t)component->height_in_blocks + v - 1) / v * v;
            header->coefficient_bytes += columns * rows * sizeof(JBLOCK);
        }
    }
    jpeg_destroy_decompress(&cinfo);
    return 1;
}

/* ---- DC-only decoding of progressive JPEGs at scale 1/8 ----
 *
 * Rule (libjpeg-turbo jdmaster.c, jpeg_calc_output_dimensions; IJG libjpeg 9 differs): at
 * scale 1/8 a component gets DCT_scaled_size = ssize, where ssize starts at 1 and doubles while
 * ssize < 8 && max_h % (h*ssize*2) == 0 && max_v % (v*ssize*2) == 0. So a component uses
 * jpeg_idct_1x1 (coefficient 0 only) iff !(max_h % (2h) == 0 && max_v % (2v) == 0).
 * The stripped stream must be decoded with do_block_smoothing = FALSE: libjpeg smooths (and
 * rewrites DC) while coefficients 1..9 of a component are unknown. The original is only
 * stripped when every component is fully refined in coefficients 1..9, so libjpeg does not
 * smooth the original either; both then give identical pixels (checked on 310 files from
 * Pillow, cjpeg, jpegtran and custom scan scripts, and by a differential fuzzer). */
#define EASEL_STRIP_OK 0
#define EASEL_STRIP_NOT_APPLICABLE 1
#define EASEL_STRIP_ERROR (-1)

int easel_jpeg_strip_dc_only(const unsigned char *in, size_t len,
                             unsigned char *out, size_t *out_len, int max_scans)
{
  enum { MAXC = 10, NSAVED = 10 };
  int have_sof = 0, nc = 0, nscans = 0, stripped = 0;
  int comp_id[MAXC], dc_only[MAXC], latched[MAXC];
  int coef_bits[MAXC][NSAVED];          /* mirrors cinfo->coef_bits[ci][0..9] */
  int ac_tbl[4] = { 0, 0, 0, 0 };       /* 0 undefined, 1 valid, 2 invalid */
  size_t p, o;
  int ci, k;

  if (out_len) *out_len = 0;
  if (!in || !out || !out_len) return EASEL_STRIP_ERROR;
  if (len < 4 || in[0] != 0xFF || in[1] != 0xD8) return EASEL_STRIP_ERROR;
  out[0] = 0xFF; out[1] = 0xD8;
  o = 2; p = 2;
  for (ci = 0; ci < MAXC; ci++) {
    comp_id[ci] = -1; dc_only[ci] = 0; latched[ci] = 0;
    for (k = 0; k < NSAVED; k++) coef_bits[ci][k] = -1;
  }

  for (;;) {
    unsigned m;
    size_t seglen, slen;
    const unsigned char *seg;

    if (p >= len) return EASEL_STRIP_ERROR;             /* no EOI */
    if (in[p] != 0xFF) return EASEL_STRIP_NOT_APPLICABLE; /* junk bytes */
    while (p < len && in[p] == 0xFF) p++;               /* fill bytes */
    if (p >= len) return EASEL_STRIP_ERROR;
    m = in[p++];
    if (m == 0x00) return EASEL_STRIP_NOT_APPLICABLE;   /* junk FF00 */

    if (m == 0xD9) {                                    /* EOI */
      if (o + 2 > len) return EASEL_STRIP_ERROR;
      out[o++] = 0xFF; out[o++] = 0xD9;
      break;
    }
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {        /* TEM, stray RSTn */
      if (o + 2 > len) return EASEL_STRIP_ERROR;
      out[o++] = 0xFF; out[o++] = (unsigned char)m;
      continue;
    }
    if (m == 0xD8) return EASEL_STRIP_NOT_APPLICABLE;   /* 2nd SOI: lib error */

    /* Marker segment with a length field. */
    if (len - p < 2) return EASEL_STRIP_ERROR;
    seglen = ((size_t)in[p] << 8) | in[p + 1];
    if (seglen < 2) return EASEL_STRIP_NOT_APPLICABLE;
    if (seglen > len - p) return EASEL_STRIP_ERROR;     /* truncated */
    seg = in + p + 2;
    slen = seglen - 2;

    if (m == 0xC2) {                                    /* SOF2 */
      int maxh = 1, maxv = 1, hs[MAXC], vs[MAXC], j;
      if (have_sof) return EASEL_STRIP_NOT_APPLICABLE;
      if (slen < 6) return EASEL_STRIP_NOT_APPLICABLE;
      if (seg[0] != 8) return EASEL_STRIP_NOT_APPLICABLE;   /* precision */
      if ((seg[1] | seg[2]) == 0 || (seg[3] | seg[4]) == 0)
        return EASEL_STRIP_NOT_APPLICABLE;                   /* DNL/empty */
      nc = seg[5];
      if (nc < 1 || nc > MAXC || slen != 6 + 3 * (size_t)nc)
        return EASEL_STRIP_NOT_APPLICABLE;
      for (ci = 0; ci < nc; ci++) {
        comp_id[ci] = seg[6 + 3 * ci];
        hs[ci] = seg[7 + 3 * ci] >> 4;
        vs[ci] = seg[7 + 3 * ci] & 15;
        if (hs[ci] < 1 || hs[ci] > 4 || vs[ci] < 1 || vs[ci] > 4)
          return EASEL_STRIP_NOT_APPLICABLE;
        for (j = 0; j < ci; j++)
          if (comp_id[j] == comp_id[ci]) return EASEL_STRIP_NOT_APPLICABLE;
        if (hs[ci] > maxh) maxh = hs[ci];
        if (vs[ci] > maxv) maxv = vs[ci];
      }
      for (ci = 0; ci < nc; ci++)
        dc_only[ci] = !(maxh % (2 * hs[ci]) == 0 && maxv % (2 * vs[ci]) == 0);
      have_sof = 1;
    } else if ((m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xCC)) {
      return EASEL_STRIP_NOT_APPLICABLE;   /* other SOFn / JPG */
    } else if (m == 0xC4) {                /* DHT: track AC table validity */
      size_t q = 0, rem = slen;
      while (rem > 16) {
        unsigned idx = seg[q], count = 0, l, n;
        unsigned long code = 0;
        int bad = 0;
        for (l = 1; l <= 16; l++) count += seg[q + l];
        rem -= 17;
        if (count > 256 || count > rem) return EASEL_STRIP_NOT_APPLICABLE;
        /* Kraft check exactly as jpeg_make_d_derived_tbl */
        for (l = 1; l <= 16; l++) {
          n = seg[q + l];
          code += n;
          if (code >= (1UL << l)) bad = 1;
          code <<= 1;
        }
        if (idx & 0x10) {
          idx -= 0x10;
          if (idx >= 4) return EASEL_STRIP_NOT_APPLICABLE;
          ac_tbl[idx] = bad ? 2 : 1;
        } else if (idx >= 4) {
          return EASEL_STRIP_NOT_APPLICABLE;
        }
        q += 17 + count;
        rem -= count;
      }
      if (rem != 0) return EASEL_STRIP_NOT_APPLICABLE;
    } else if (m == 0xDD) {                /* DRI */
      if (slen != 2) return EASEL_STRIP_NOT_APPLICABLE;
      if (seg[0] | seg[1]) return EASEL_STRIP_NOT_APPLICABLE;
    } else if (m == 0xDA) {                /* SOS */
      int n, Ss, Se, Ah, Al, scomp[4], i, j, strip;
      size_t e;
      if (!have_sof || slen < 1) return EASEL_STRIP_NOT_APPLICABLE;
      n = seg[0];
      if (n < 1 || n > 4 || slen != (size_t)(4 + 2 * n))
        return EASEL_STRIP_NOT_APPLICABLE;
      for (i = 0; i < n; i++) {
        int id = seg[1 + 2 * i];
        /* libjpeg only matches the first MAX_COMPS_IN_SCAN (4) components */
        for (ci = 0; ci < nc && ci < 4; ci++)
          if (comp_id[ci] == id) break;
        if (ci == nc || ci == 4) return EASEL_STRIP_NOT_APPLICABLE;
        for (j = 0; j < i; j++)
          if (scomp[j] == ci) return EASEL_STRIP_NOT_APPLICABLE;
        scomp[i] = ci;
      }
      Ss = seg[1 + 2 * n];
      Se = seg[2 + 2 * n];
      Ah = seg[3 + 2 * n] >> 4;
      Al = seg[3 + 2 * n] & 15;
      /* jdphuff.c start_pass_phuff_decoder validation (fatal there) */
      if (Ss == 0) {
        if (Se != 0) return EASEL_STRIP_NOT_APPLICABLE;
      } else if (Ss > Se || Se > 63 || n != 1) {
        return EASEL_STRIP_NOT_APPLICABLE;
      }
      if ((Ah != 0 && Al != Ah - 1) || Al > 13)
        return EASEL_STRIP_NOT_APPLICABLE;
      for (i = 0; i < n; i++)
        for (k = Ss; k <= Se && k < NSAVED; k++) coef_bits[scomp[i]][k] = Al;

      strip = 0;
      if (Ss > 0) {
        ci = scomp[0];
        /* only strip once the component's quant table is latched by a
         * kept scan, and only if libjpeg would accept the AC table */
        if (dc_only[ci] && latched[ci]) {
          int ta = seg[2 + 2 * 0] & 15;
          if (ta >= 4 || ac_tbl[ta] != 1) return EASEL_STRIP_NOT_APPLICABLE;
          strip = 1;
        }
      }
      if (!strip)
        for (i = 0; i < n; i++) latched[scomp[i]] = 1;
      nscans++;

      /* Find the end of the entropy-coded data: the first 0xFF of the
       * 0xFF run that is followed by a byte other than 0x00 / RSTn. */
      e = p + seglen;
      for (;;) {
        size_t f;
        const unsigned char *ff;
        if (e >= len) return EASEL_STRIP_ERROR;
        ff = (const unsigned char *)memchr(in + e, 0xFF, len - e);
        if (!ff) return EASEL_STRIP_ERROR;
        e = (size_t)(ff - in);
        f = e + 1;
        while (f < len && in[f] == 0xFF) f++;
        if (f >= len) return EASEL_STRIP_ERROR;
        if (in[f] == 0x00 || (in[f] >= 0xD0 && in[f] <= 0xD7)) {
          e = f + 1;
          continue;
        }
        break;          /* e is at a marker (possibly preceded by fills) */
      }
      if (strip) {
        stripped++;
      } else {
        size_t nbytes = e - (p - 2);     /* FF DA + segment + data */
        if (nbytes > len - o) return EASEL_STRIP_ERROR;
        out[o++] = 0xFF; out[o++] = 0xDA;
        memcpy(out + o, in + p, e - p);
        o += e - p;
      }
      p = e;
      continue;
    } else if (m == 0xCC || m == 0xDB || m == 0xDC || m == 0xFE ||
               (m >= 0xE0 && m <= 0xEF)) {
      /* DAC, DQT, DNL, COM, APPn: copied verbatim */
    } else {
      return EASEL_STRIP_NOT_APPLICABLE;   /* libjpeg: unknown marker */
    }

    /* copy the segment */
    if (seglen + 2 > len - o) return EASEL_STRIP_ERROR;
    out[o++] = 0xFF; out[o++] = (unsigned char)m;
    memcpy(out + o, in + p, seglen);
    o += seglen;
    p += seglen;
  }

  if (!have_sof || nscans == 0 || stripped == 0)
    return EASEL_STRIP_NOT_APPLICABLE;
  /* A file over the scan limit is refused as a whole, whatever the scale: decode the original. */
  if (max_scans > 0 && nscans > max_scans)
    return EASEL_STRIP_NOT_APPLICABLE;
  /* The original must not be block-smoothed: every component fully
   * refined in coefficients 1..9 (smoothing_ok() would return FALSE). */
  for (ci = 0; ci < nc; ci++)
    for (k = 1; k < NSAVED; k++)
      if (coef_bits[ci][k] != 0) return EASEL_STRIP_NOT_APPLICABLE;
  *out_len = o;
  return EASEL_STRIP_OK;
}

static int easel_jpeg_decode_checked_stream(const uint8_t *data, size_t size, int scale_denom, int dc_only, int gray_output,
                                            int width, int height, int output_width, int output_height,
                                            uint8_t *pixels, size_t row_bytes, int max_scans, int raw_cmyk,
                                            int *cmyk_layout, char *message);

static pthread_once_t dc_only_once = PTHREAD_ONCE_INIT;
static int dc_only_enabled = 1;

static void read_dc_only_setting(void) {
    const char *setting = getenv("EASEL_JPEG_DC_ONLY");
    if (setting && (strcmp(setting, "0") == 0 || strcasecmp(setting, "false") == 0 || strcasecmp(setting, "off") == 0)) {
        dc_only_enabled = 0;
    }
}

int easel_jpeg_decode_checked(const uint8_t *data, size_t size, int scale_denom, int gray_output,
                              int width, int height, int output_width, int output_height,
                              uint8_t *pixels, size_t row_bytes, int max_scans, int raw_cmyk, int *cmyk_layout,
                              int dc_only_scans, char *message) {
    /* At 1/8, a progressive file's unused AC scans are dropped before libjpeg sees it. */
    unsigned char *stripped = NULL;
    /* The IDCT-size rule is libjpeg-turbo's (IJG libjpeg 9 scales each axis on its own). */
#ifndef LIBJPEG_TURBO_VERSION
    dc_only_scans = 0;
#endif
    /* EASEL_JPEG_DC_ONLY=0 (or false, off) turns it off: side-by-side benchmarks. */
    pthread_once(&dc_only_once, read_dc_only_setting);
    if (!dc_only_enabled) dc_only_scans = 0;
    if (dc_only_scans && scale_denom == 8 && size > 4) {
        stripped = malloc(size);
        size_t stripped_size = 0;
        if (stripped && easel_jpeg_strip_dc_only(data, size, stripped, &stripped_size, max_scans) == EASEL_STRIP_OK) {
            /* (The copy is what is decoded: a mapped input's pages, all read, are handed back.) */
            easel_input_release(data + size);
            int result = easel_jpeg_decode_checked_stream(stripped, stripped_size, 8, 1, gray_output, width, height, output_width,
                                                          output_height, pixels, row_bytes, max_scans, raw_cmyk, cmyk_layout, message);
            free(stripped);
            return result;
        }
        free(stripped);
    }
    return easel_jpeg_decode_checked_stream(data, size, scale_denom, 0, gray_output, width, height, output_width, output_height,
                                            pixels, row_bytes, max_scans, raw_cmyk, cmyk_layout, message);
}

/* One decode; `dc_only` marks a stream from easel_jpeg_strip_dc_only (scale 1/8, no smoothing). */
static int easel_jpeg_decode_checked_stream(const uint8_t *data, size_t size, int scale_denom, int dc_only, int gray_output,
                                            int width, int height, int output_width, int output_height,
                                            uint8_t *pixels, size_t row_bytes, int max_scans, int raw_cmyk,
                                            int *cmyk_layout, char *message) {
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
    /* A stripped stream lacks AC scans on purpose: smoothing would estimate them (and move DC). */
    if (dc_only) cinfo.do_block_smoothing = FALSE;
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
        /* (Of a mapped input, what libjpeg has read past is handed back.) */
        easel_input_release(cinfo.src->next_input_byte);
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
