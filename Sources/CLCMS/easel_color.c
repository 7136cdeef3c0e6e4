#include "easel_color.h"

#include <lcms2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A transform: Little CMS's, or the table-driven matrix/TRC path (see matrix_shaper_tables). */
typedef struct easel_transform easel_transform;
struct easel_transform {
    cmsHTRANSFORM lcms;      /* NULL for the matrix/TRC path */
    float linear[3][256];
    float matrix[9];
    uint8_t encode[4097];
};
static int matrix_shaper_tables(cmsHPROFILE source, easel_transform *t);

static void set_message(char *message, const char *text) {
    if (message) snprintf(message, EASEL_COLOR_MESSAGE_SIZE, "%s", text);
}

static cmsUInt32Number lcms_format(int layout) {
    switch (layout) {
    case EASEL_PIXELS_RGBA8: return TYPE_RGBA_8;
    case EASEL_PIXELS_GRAY8: return TYPE_GRAY_8;
    case EASEL_PIXELS_GRAYX8: return COLORSPACE_SH(PT_GRAY) | EXTRA_SH(3) | CHANNELS_SH(1) | BYTES_SH(1);
    case EASEL_PIXELS_CMYK8: return TYPE_CMYK_8;
    case EASEL_PIXELS_CMYK8_INVERTED: return TYPE_CMYK_8_REV;
    default: return 0;
    }
}

static int layout_space(int layout) {
    switch (layout) {
    case EASEL_PIXELS_RGBA8: return EASEL_ICC_RGB;
    case EASEL_PIXELS_GRAY8: case EASEL_PIXELS_GRAYX8: return EASEL_ICC_GRAY;
    case EASEL_PIXELS_CMYK8: case EASEL_PIXELS_CMYK8_INVERTED: return EASEL_ICC_CMYK;
    default: return EASEL_ICC_OTHER;
    }
}

static int space_of(cmsHPROFILE profile) {
    switch (cmsGetColorSpace(profile)) {
    case cmsSigGrayData: return EASEL_ICC_GRAY;
    case cmsSigRgbData: return EASEL_ICC_RGB;
    case cmsSigCmykData: return EASEL_ICC_CMYK;
    default: return EASEL_ICC_OTHER;
    }
}

/* The sRGB tone curve as a parametric curve (type 4). */
static cmsToneCurve *srgb_curve(void) {
    const cmsFloat64Number parameters[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
    return cmsBuildParametricToneCurve(NULL, 4, parameters);
}

/* sRGB, or for gray layouts a gray profile with sRGB's white and tone curve. */
static cmsHPROFILE default_profile(int layout) {
    if (layout_space(layout) != EASEL_ICC_GRAY) return cmsCreate_sRGBProfile();
    cmsCIExyY white;
    cmsWhitePointFromTemp(&white, 6504);
    cmsToneCurve *curve = srgb_curve();
    if (!curve) return NULL;
    cmsHPROFILE profile = cmsCreateGrayProfile(&white, curve);
    cmsFreeToneCurve(curve);
    return profile;
}

int easel_icc_read(const uint8_t *icc, size_t size, easel_icc_info *info, char *description,
                   size_t description_size, char *message) {
    if (description && description_size > 0) description[0] = 0;
    if (!icc || size < 132 || size > 0xFFFFFFFFu) {
        set_message(message, "profile shorter than its 128-byte header");
        return 0;
    }
    cmsHPROFILE profile = cmsOpenProfileFromMem(icc, (cmsUInt32Number)size);
    if (!profile) {
        set_message(message, "Little CMS could not parse the profile");
        return 0;
    }
    info->color_space = space_of(profile);
    info->version = cmsGetEncodedICCversion(profile);
    char text[256] = {0};
    cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", text, sizeof text);
    text[sizeof text - 1] = 0;
    /* sRGB in all but name: a matrix/TRC profile whose conversion to sRGB is the identity
     * (the matrix within 1e-3 of it, every level back to itself). Names are not trusted:
     * "sRGB-elle-V4-g10" is linear. */
    info->is_srgb_like = 0;
    if (info->color_space == EASEL_ICC_RGB) {
        easel_transform *tables = calloc(1, sizeof *tables);
        if (tables && matrix_shaper_tables(profile, tables)) {
            /* (matrix_shaper_tables refuses NaN and infinity, so the lookups below stay in range.) */
            int identity = 1;
            for (int i = 0; i < 9 && identity; i++) identity = fabsf(tables->matrix[i] - (i % 4 == 0 ? 1.0f : 0.0f)) < 1e-3f;
            for (int c = 0; c < 3 && identity; c++) {
                for (int i = 0; i < 256 && identity; i++) {
                    float linear = tables->linear[c][i];
                    float v = linear < 0 ? 0 : linear > 1 ? 1 : linear;
                    identity = abs((int)tables->encode[(int)(v * 4096.0f + 0.5f)] - i) <= 0;
                }
            }
            info->is_srgb_like = identity;
        }
        free(tables);
    }
    if (description && description_size > 0) snprintf(description, description_size, "%s", text);
    cmsCloseProfile(profile);
    return 1;
}

static cmsHTRANSFORM lcms_transform(const uint8_t *input, size_t input_size, int input_layout,
                                    const uint8_t *output, size_t output_size, int output_layout, char *message);

/* A transform: Little CMS's, or for the common case of an RGB matrix/TRC profile (Display P3,
 * Adobe RGB, ProPhoto…) to sRGB in RGBA, the same conversion evaluated from tables Little CMS
 * fills: each channel's tone curve at the 256 input levels, the 3x3 matrix from the two
 * profiles' D50 colorants, and sRGB's inverse curve at 4096 linear steps. Three lookups, a
 * matrix and three lookups a pixel instead of Little CMS's general 8-bit path (which cost
 * 8-10 % of a 256 px thumbnail, this 3-4 %: Benchmarks/peers/color-and-formats.sh); within one
 * level of Little CMS's own result (a test checks it). */


/* The RGB -> XYZ (D50) matrix of a matrix/TRC profile, rows X, Y, Z. */
static int colorant_matrix(cmsHPROFILE profile, double m[9]) {
    cmsCIEXYZ *r = cmsReadTag(profile, cmsSigRedColorantTag), *g = cmsReadTag(profile, cmsSigGreenColorantTag),
              *b = cmsReadTag(profile, cmsSigBlueColorantTag);
    if (!r || !g || !b) return 0;
    double values[9] = {r->X, g->X, b->X, r->Y, g->Y, b->Y, r->Z, g->Z, b->Z};
    memcpy(m, values, sizeof values);
    return 1;
}

static int invert3(const double m[9], double out[9]) {
    double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
    if (fabs(det) < 1e-12) return 0;
    out[0] = (m[4] * m[8] - m[5] * m[7]) / det;
    out[1] = (m[2] * m[7] - m[1] * m[8]) / det;
    out[2] = (m[1] * m[5] - m[2] * m[4]) / det;
    out[3] = (m[5] * m[6] - m[3] * m[8]) / det;
    out[4] = (m[0] * m[8] - m[2] * m[6]) / det;
    out[5] = (m[2] * m[3] - m[0] * m[5]) / det;
    out[6] = (m[3] * m[7] - m[4] * m[6]) / det;
    out[7] = (m[1] * m[6] - m[0] * m[7]) / det;
    out[8] = (m[0] * m[4] - m[1] * m[3]) / det;
    return 1;
}

/* The matrix/TRC tables for `source` to sRGB, or 0 when the profile is not a plain one (a
 * lookup-table profile, curves that do not start at black, a singular matrix). */
static int matrix_shaper_tables(cmsHPROFILE source, easel_transform *t) {
    if (cmsGetColorSpace(source) != cmsSigRgbData || !cmsIsMatrixShaper(source) ||
        cmsIsCLUT(source, INTENT_RELATIVE_COLORIMETRIC, LCMS_USED_AS_INPUT)) return 0;
    cmsToneCurve *curves[3] = {cmsReadTag(source, cmsSigRedTRCTag), cmsReadTag(source, cmsSigGreenTRCTag),
                               cmsReadTag(source, cmsSigBlueTRCTag)};
    if (!curves[0] || !curves[1] || !curves[2]) return 0;
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    double from[9], to[9], inverse[9];
    int ok = srgb && colorant_matrix(source, from) && colorant_matrix(srgb, to) && invert3(to, inverse);
    cmsToneCurve *srgb_curve_in = srgb ? cmsReadTag(srgb, cmsSigRedTRCTag) : NULL;
    cmsToneCurve *reverse = ok && srgb_curve_in ? cmsReverseToneCurve(srgb_curve_in) : NULL;
    if (ok && reverse) {
        for (int c = 0; c < 3; c++) {
            for (int i = 0; i < 256; i++) t->linear[c][i] = cmsEvalToneCurveFloat(curves[c], (float)i / 255.0f);
            /* Black must stay black (else black point compensation would matter), and every value
             * must be a number (a hostile curve can make NaN or infinity): Little CMS then. */
            if (fabsf(t->linear[c][0]) > 1e-4f) ok = 0;
            for (int i = 0; i < 256; i++) if (!isfinite(t->linear[c][i])) ok = 0;
        }
        for (int row = 0; row < 3; row++) {
            for (int column = 0; column < 3; column++) {
                double sum = 0;
                for (int k = 0; k < 3; k++) sum += inverse[row * 3 + k] * from[k * 3 + column];
                t->matrix[row * 3 + column] = (float)sum;
                if (!isfinite(t->matrix[row * 3 + column])) ok = 0;
            }
        }
        for (int i = 0; i <= 4096; i++) {
            float v = cmsEvalToneCurveFloat(reverse, (float)i / 4096.0f) * 255.0f + 0.5f;
            t->encode[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    } else {
        ok = 0;
    }
    if (reverse) cmsFreeToneCurve(reverse);
    if (srgb) cmsCloseProfile(srgb);
    return ok;
}

static void apply_matrix_shaper(const easel_transform *t, const uint8_t *source, uint8_t *target, int width, int height,
                                size_t source_row_bytes, size_t target_row_bytes) {
    const float *m = t->matrix;
    for (int y = 0; y < height; y++) {
        const uint8_t *in = source + (size_t)y * source_row_bytes;
        uint8_t *out = target + (size_t)y * target_row_bytes;
        for (int x = 0; x < width; x++) {
            float r = t->linear[0][in[4 * x]], g = t->linear[1][in[4 * x + 1]], b = t->linear[2][in[4 * x + 2]];
            float v[3] = {m[0] * r + m[1] * g + m[2] * b, m[3] * r + m[4] * g + m[5] * b, m[6] * r + m[7] * g + m[8] * b};
            uint8_t alpha = in[4 * x + 3];
            for (int c = 0; c < 3; c++) {
                /* `!(x >= 0)` also catches NaN, which no table index may come from. */
                float clamped = !(v[c] >= 0) ? 0 : v[c] > 1 ? 1 : v[c];
                out[4 * x + c] = t->encode[(int)(clamped * 4096.0f + 0.5f)];
            }
            out[4 * x + 3] = alpha;
        }
    }
}

void *easel_color_transform_create(const uint8_t *input, size_t input_size, int input_layout,
                                   const uint8_t *output, size_t output_size, int output_layout, char *message) {
    easel_transform *result = calloc(1, sizeof *result);
    if (!result) {
        set_message(message, "out of memory");
        return NULL;
    }
    if (input && !output && input_layout == EASEL_PIXELS_RGBA8 && output_layout == EASEL_PIXELS_RGBA8 &&
        input_size <= 0xFFFFFFFFu) {
        cmsHPROFILE source = cmsOpenProfileFromMem(input, (cmsUInt32Number)input_size);
        int fast = source && matrix_shaper_tables(source, result);
        if (source) cmsCloseProfile(source);
        if (fast) return result;
    }
    result->lcms = lcms_transform(input, input_size, input_layout, output, output_size, output_layout, message);
    if (!result->lcms) {
        free(result);
        return NULL;
    }
    return result;
}

/* Forces Little CMS's own transform (for tests comparing the two paths). */
void *easel_color_transform_create_general(const uint8_t *input, size_t input_size, int input_layout,
                                           const uint8_t *output, size_t output_size, int output_layout, char *message) {
    easel_transform *result = calloc(1, sizeof *result);
    if (!result) return NULL;
    result->lcms = lcms_transform(input, input_size, input_layout, output, output_size, output_layout, message);
    if (!result->lcms) {
        free(result);
        return NULL;
    }
    return result;
}

static cmsHTRANSFORM lcms_transform(const uint8_t *input, size_t input_size, int input_layout,
                                    const uint8_t *output, size_t output_size, int output_layout, char *message) {
    cmsUInt32Number input_format = lcms_format(input_layout), output_format = lcms_format(output_layout);
    if (!input_format || !output_format || input_size > 0xFFFFFFFFu || output_size > 0xFFFFFFFFu) {
        set_message(message, "unknown pixel layout or oversized profile");
        return NULL;
    }
    cmsHPROFILE source = input ? cmsOpenProfileFromMem(input, (cmsUInt32Number)input_size) : default_profile(input_layout);
    cmsHPROFILE target = output ? cmsOpenProfileFromMem(output, (cmsUInt32Number)output_size) : default_profile(output_layout);
    cmsHTRANSFORM transform = NULL;
    if (!source || !target) {
        set_message(message, "Little CMS could not parse the profile");
    } else if (space_of(source) != layout_space(input_layout) || space_of(target) != layout_space(output_layout)) {
        set_message(message, "the profile's colour space does not match the pixels");
    } else {
        transform = cmsCreateTransform(source, input_format, target, output_format, INTENT_RELATIVE_COLORIMETRIC,
                                       cmsFLAGS_NOCACHE | cmsFLAGS_BLACKPOINTCOMPENSATION);
        if (!transform) set_message(message, "Little CMS could not make a transform from the profile");
    }
    if (source) cmsCloseProfile(source);
    if (target) cmsCloseProfile(target);
    return (cmsHTRANSFORM)transform;
}

void easel_color_transform_apply(void *transform, const uint8_t *source, uint8_t *target, int width, int height,
                                 size_t source_row_bytes, size_t target_row_bytes, int set_opaque) {
    if (!transform || width <= 0 || height <= 0) return;
    const easel_transform *t = (const easel_transform *)transform;
    if (!t->lcms) {
        apply_matrix_shaper(t, source, target, width, height, source_row_bytes, target_row_bytes);
        return;
    }
    cmsDoTransformLineStride(t->lcms, source, target, (cmsUInt32Number)width, (cmsUInt32Number)height,
                             (cmsUInt32Number)source_row_bytes, (cmsUInt32Number)target_row_bytes, 0, 0);
    if (set_opaque) {
        for (int y = 0; y < height; y++) {
            uint8_t *row = target + (size_t)y * target_row_bytes;
            for (int x = 0; x < width; x++) row[4 * x + 3] = 255;
        }
    }
}

void easel_color_transform_free(void *transform) {
    easel_transform *t = (easel_transform *)transform;
    if (!t) return;
    if (t->lcms) cmsDeleteTransform(t->lcms);
    free(t);
}

static int save(cmsHPROFILE profile, uint8_t **output, size_t *output_size) {
    cmsUInt32Number needed = 0;
    int ok = 0;
    if (cmsSaveProfileToMem(profile, NULL, &needed) && needed > 0) {
        uint8_t *buffer = malloc(needed);
        if (buffer && cmsSaveProfileToMem(profile, buffer, &needed)) {
            *output = buffer;
            *output_size = needed;
            ok = 1;
        } else {
            free(buffer);
        }
    }
    cmsCloseProfile(profile);
    return ok;
}

static void set_description(cmsHPROFILE profile, const char *text) {
    cmsMLU *mlu = cmsMLUalloc(NULL, 1);
    if (!mlu) return;
    cmsMLUsetASCII(mlu, "en", "US", text);
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, mlu);
    cmsMLUfree(mlu);
}

int easel_icc_make_rgb(double white_x, double white_y, const double primaries[6], double gamma, const char *description,
                       uint8_t **output, size_t *output_size) {
    cmsCIExyY white = {white_x, white_y, 1.0};
    cmsCIExyYTRIPLE triple = {{primaries[0], primaries[1], 1.0}, {primaries[2], primaries[3], 1.0},
                              {primaries[4], primaries[5], 1.0}};
    cmsToneCurve *curve = gamma > 0 ? cmsBuildGamma(NULL, gamma) : srgb_curve();
    if (!curve) return 0;
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &triple, curves);
    cmsFreeToneCurve(curve);
    if (!profile) return 0;
    set_description(profile, description);
    return save(profile, output, output_size);
}

typedef struct {
    double gamma;
    cmsHTRANSFORM to_lab;
} cmyk_cargo;

static cmsInt32Number sample_cmyk(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo) {
    const cmyk_cargo *c = (const cmyk_cargo *)cargo;
    double k = 1.0 - in[3] / 65535.0;
    double rgb[3];
    for (int i = 0; i < 3; i++) rgb[i] = pow((1.0 - in[i] / 65535.0) * k, c->gamma);
    cmsCIELab lab;
    cmsDoTransform(c->to_lab, rgb, &lab, 1);
    cmsFloat2LabEncoded(out, &lab);
    return 1;
}

int easel_icc_make_test_cmyk(double gamma, int grid_points, uint8_t **output, size_t *output_size) {
    cmsHPROFILE srgb = cmsCreate_sRGBProfile(), lab = cmsCreateLab4Profile(NULL);
    cmyk_cargo cargo = {gamma, NULL};
    if (srgb && lab) {
        cargo.to_lab = cmsCreateTransform(srgb, TYPE_RGB_DBL, lab, TYPE_Lab_DBL, INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
    }
    if (srgb) cmsCloseProfile(srgb);
    if (lab) cmsCloseProfile(lab);
    if (!cargo.to_lab) return 0;
    int ok = 0;
    cmsHPROFILE profile = cmsCreateProfilePlaceholder(NULL);
    cmsPipeline *pipeline = cmsPipelineAlloc(NULL, 4, 3);
    cmsStage *table = cmsStageAllocCLut16bit(NULL, (cmsUInt32Number)(grid_points < 2 ? 2 : grid_points), 4, 3, NULL);
    /* lutAtoBType needs A curves, CLUT, B curves around the table: identity curves here. */
    cmsStage *a_curves = cmsStageAllocToneCurves(NULL, 4, NULL), *b_curves = cmsStageAllocToneCurves(NULL, 3, NULL);
    if (profile && pipeline && table && a_curves && b_curves && cmsStageSampleCLut16bit(table, sample_cmyk, &cargo, 0)) {
        cmsPipelineInsertStage(pipeline, cmsAT_END, a_curves);
        cmsPipelineInsertStage(pipeline, cmsAT_END, table);
        cmsPipelineInsertStage(pipeline, cmsAT_END, b_curves);
        table = a_curves = b_curves = NULL;
        cmsSetProfileVersion(profile, 4.3);
        cmsSetDeviceClass(profile, cmsSigInputClass);
        cmsSetColorSpace(profile, cmsSigCmykData);
        cmsSetPCS(profile, cmsSigLabData);
        cmsWriteTag(profile, cmsSigAToB0Tag, pipeline);
        cmsWriteTag(profile, cmsSigMediaWhitePointTag, (void *)cmsD50_XYZ());
        set_description(profile, "Easel test CMYK");
        ok = save(profile, output, output_size);
        profile = NULL;
    }
    if (table) cmsStageFree(table);
    if (a_curves) cmsStageFree(a_curves);
    if (b_curves) cmsStageFree(b_curves);
    if (pipeline) cmsPipelineFree(pipeline);
    if (profile) cmsCloseProfile(profile);
    cmsDeleteTransform(cargo.to_lab);
    return ok;
}

void easel_color_free(void *buffer) {
    free(buffer);
}
