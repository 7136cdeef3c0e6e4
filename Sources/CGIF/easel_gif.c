#include "easel_gif.h"
#include "easel_input.h"
#include "easel_shrink.h"

#include <gif_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
} gif_source;

static int read_memory(GifFileType *gif, GifByteType *out, int length) {
    gif_source *source = (gif_source *)gif->UserData;
    size_t available = source->size - source->offset;
    size_t count = (size_t)length < available ? (size_t)length : available;
    memcpy(out, source->data + source->offset, count);
    source->offset += count;
    return (int)count;
}

static void set_message(char *message, const char *text) {
    if (message) snprintf(message, EASEL_GIF_MESSAGE_SIZE, "%s", text);
}

static GifFileType *open_gif(const uint8_t *data, size_t size, gif_source *source, char *message) {
    int error = 0;
    source->data = data;
    source->size = size;
    source->offset = 0;
    GifFileType *gif = DGifOpen(source, read_memory, &error);
    if (!gif) set_message(message, GifErrorString(error) ? GifErrorString(error) : "not a GIF");
    return gif;
}

int easel_gif_read_header(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    gif_source source;
    GifFileType *gif = open_gif(data, size, &source, message);
    if (!gif) return 0;
    *width = gif->SWidth;
    *height = gif->SHeight;
    DGifCloseFile(gif, NULL);
    if (*width <= 0 || *height <= 0) {
        set_message(message, "invalid GIF screen size");
        return 0;
    }
    return 1;
}

/* Reads the records before the first image, and its descriptor: the transparent index of the
 * graphic control extension before it (-1 for none) and the colours it is drawn with. 0 with a
 * message for a damaged file, a file without an image, or a frame past `max_frame_pixels`. */
static int read_to_first_frame(GifFileType *gif, long max_frame_pixels, int *transparent, ColorMapObject **map, char *message) {
    *transparent = -1;
    GifRecordType record;
    for (;;) {
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) {
            set_message(message, GifErrorString(gif->Error) ? GifErrorString(gif->Error) : "corrupt GIF");
            return 0;
        }
        if (record == TERMINATE_RECORD_TYPE) {
            set_message(message, "GIF has no image");
            return 0;
        }
        if (record == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *extension;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) {
                set_message(message, "corrupt GIF extension");
                return 0;
            }
            while (extension) {
                if (code == GRAPHICS_EXT_FUNC_CODE && extension[0] >= 4 && (extension[1] & 1)) {
                    *transparent = extension[4];
                }
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) {
                    set_message(message, "corrupt GIF extension");
                    return 0;
                }
            }
            continue;
        }
        if (record != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) {
            set_message(message, "corrupt GIF image descriptor");
            return 0;
        }
        GifImageDesc *desc = &gif->Image;
        *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
        if (!*map || desc->Width <= 0 || desc->Height <= 0) {
            set_message(message, "GIF frame without colours or size");
            return 0;
        }
        if ((long)desc->Width * (long)desc->Height > max_frame_pixels) {
            set_message(message, "GIF frame exceeds the pixel limit");
            return 0;
        }
        return 1;
    }
}

/* Draws a frame's row of palette indexes `line` onto a canvas row (RGBA, `width` pixels) at the
 * frame's left edge: opaque in its colour, except the transparent index and indexes past the
 * colour map, which leave the canvas as it is, and what lies off the canvas. */
static void draw_line(uint8_t *row, int width, const GifByteType *line, const GifImageDesc *desc, const ColorMapObject *map,
                      int transparent) {
    for (int x = 0; x < desc->Width; x++) {
        int canvas_x = desc->Left + x, index = line[x];
        if (canvas_x < 0 || canvas_x >= width || index == transparent || index >= map->ColorCount) continue;
        GifColorType color = map->Colors[index];
        row[4 * canvas_x] = color.Red;
        row[4 * canvas_x + 1] = color.Green;
        row[4 * canvas_x + 2] = color.Blue;
        row[4 * canvas_x + 3] = 255;
    }
}

/* Interlaced GIFs store rows in four passes: pass p holds rows starts[p], + steps[p], ... */
static const int pass_starts[4] = {0, 4, 2, 1}, pass_steps[4] = {8, 8, 4, 2};

int easel_gif_decode_first_frame(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                                 int width, int height, long max_frame_pixels, char *message) {
    gif_source source;
    GifFileType *gif = open_gif(data, size, &source, message);
    if (!gif) return 0;
    int transparent;
    ColorMapObject *map;
    GifByteType *line = NULL;
    int ok = read_to_first_frame(gif, max_frame_pixels, &transparent, &map, message);
    GifImageDesc *desc = &gif->Image;
    if (ok && !(line = malloc((size_t)desc->Width))) {
        set_message(message, "out of memory");
        ok = 0;
    }
    int passes = desc->Interlace ? 4 : 1;
    for (int pass = 0; pass < passes && ok; pass++) {
        int first = desc->Interlace ? pass_starts[pass] : 0, step = desc->Interlace ? pass_steps[pass] : 1;
        for (int y = first; y < desc->Height; y += step) {
            int canvas_y = desc->Top + y;
            /* The rest is off the canvas: not read (as the shrinking decode reads none of it). */
            if (!desc->Interlace && canvas_y >= height) break;
            if (DGifGetLine(gif, line, desc->Width) == GIF_ERROR) {
                set_message(message, "the file ends before the image does");
                ok = 0;
                break;
            }
            if (canvas_y < 0 || canvas_y >= height) continue;
            draw_line(pixels + (size_t)canvas_y * row_bytes, width, line, desc, map, transparent);
        }
    }
    free(line);
    DGifCloseFile(gif, NULL);
    return ok;
}

int easel_gif_decode_first_frame_shrunk(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                                        int width, int height, int factor, long max_frame_pixels, char *message) {
    if (factor != 2 && factor != 4 && factor != 8) {
        set_message(message, "the shrink factor is 2, 4 or 8");
        return 0;
    }
    const int shift = factor == 2 ? 1 : factor == 4 ? 2 : 3;
    gif_source source;
    GifFileType *gif = open_gif(data, size, &source, message);
    if (!gif) return 0;
    int transparent;
    ColorMapObject *map;
    uint8_t *frame = NULL, *line = NULL;
    uint32_t *sums = NULL;
    int ok = read_to_first_frame(gif, max_frame_pixels, &transparent, &map, message);
    GifImageDesc *desc = &gif->Image;
    uint32_t out_width = ((uint32_t)width + (uint32_t)factor - 1) / (uint32_t)factor;
    /* Each palette entry as what it adds to its block's sums: its colour and 1 for an opaque
     * pixel, all zeros for a transparent one (as off the frame). A GIF's alpha is 0 or 255, so
     * the weighed sums are these times 255, made so as each band is written. */
    uint8_t colors[256][4];
    memset(colors, 0, sizeof colors);
    if (ok) {
        for (int index = 0; index < map->ColorCount && index < 256; index++) {
            if (index == transparent) continue;
            colors[index][0] = map->Colors[index].Red;
            colors[index][1] = map->Colors[index].Green;
            colors[index][2] = map->Colors[index].Blue;
            colors[index][3] = 1;
        }
        /* An interlaced frame's rows come in four passes: its indexes are kept (a byte a pixel)
         * and shrunk in order once read; another frame's rows are shrunk as they come. */
        if (desc->Interlace) {
            frame = malloc((size_t)desc->Width * (size_t)desc->Height);
        } else {
            line = malloc((size_t)desc->Width);
        }
        sums = calloc((size_t)out_width * 4, sizeof(uint32_t));
        if (!sums || (desc->Interlace ? !frame : !line)) {
            set_message(message, "out of memory");
            ok = 0;
        }
    }
    for (int pass = 0; ok && desc->Interlace && pass < 4; pass++) {
        for (int y = pass_starts[pass], rows = 1; y < desc->Height; y += pass_steps[pass], rows++) {
            if (DGifGetLine(gif, frame + (size_t)y * (size_t)desc->Width, desc->Width) == GIF_ERROR) {
                set_message(message, "the file ends before the image does");
                ok = 0;
                break;
            }
            if (rows % 64 == 0) easel_input_release(source.data + source.offset);
        }
    }
    uint32_t in_band = 0;
    for (int y = 0; ok && y < height; y++) {
        int frame_y = y - desc->Top;
        if (frame_y >= 0 && frame_y < desc->Height) {
            const uint8_t *indexes = line;
            if (frame) {
                indexes = frame + (size_t)frame_y * (size_t)desc->Width;
            } else if (DGifGetLine(gif, line, desc->Width) == GIF_ERROR) {
                set_message(message, "the file ends before the image does");
                ok = 0;
                break;
            }
            int last = desc->Left + desc->Width < width ? desc->Left + desc->Width : width;
            for (int x = desc->Left; x < last; x++) {
                const uint8_t *p = colors[indexes[x - desc->Left]];
                uint32_t *sum = sums + 4 * (size_t)(x >> shift);
                sum[0] += p[0];
                sum[1] += p[1];
                sum[2] += p[2];
                sum[3] += p[3];
            }
        }
        if (++in_band == (uint32_t)factor || y == height - 1) {
            for (size_t i = 0; i < (size_t)out_width * 4; i++) sums[i] *= 255;
            easel_shrink_emit_row(sums, pixels + (size_t)(y / factor) * row_bytes, (uint32_t)width, out_width, (uint32_t)factor,
                                  in_band);
            in_band = 0;
            if (!frame) easel_input_release(source.data + source.offset);
        }
    }
    free(frame);
    free(line);
    free(sums);
    DGifCloseFile(gif, NULL);
    return ok;
}

struct easel_gif_reader {
    GifFileType *gif;
    gif_source source;
    int width;
    int height;
    /* The previous frame's disposal and rectangle, applied before the next frame is drawn. */
    int previous_disposal;
    int previous_left, previous_top, previous_width, previous_height;
    uint8_t *saved;  /* the canvas before the previous frame, for disposal 3 */
    int loop_count;
    long total_pixels;  /* the areas of the frames read so far */
};

easel_gif_reader *easel_gif_reader_open(const uint8_t *data, size_t size, int width, int height, char *message) {
    easel_gif_reader *reader = calloc(1, sizeof *reader);
    if (!reader) {
        set_message(message, "out of memory");
        return NULL;
    }
    reader->gif = open_gif(data, size, &reader->source, message);
    if (!reader->gif) {
        free(reader);
        return NULL;
    }
    reader->gif->UserData = &reader->source;  /* the source moved with the reader */
    reader->width = width;
    reader->height = height;
    reader->loop_count = -1;
    return reader;
}

void easel_gif_reader_close(easel_gif_reader *reader) {
    if (!reader) return;
    DGifCloseFile(reader->gif, NULL);
    free(reader->saved);
    free(reader);
}

static void clear_rect(uint8_t *canvas, size_t row_bytes, int canvas_width, int canvas_height, int left, int top, int width,
                       int height) {
    for (int y = top < 0 ? 0 : top; y < top + height && y < canvas_height; y++) {
        int from = left < 0 ? 0 : left, to = left + width < canvas_width ? left + width : canvas_width;
        if (to > from) memset(canvas + (size_t)y * row_bytes + (size_t)from * 4, 0, (size_t)(to - from) * 4);
    }
}

int easel_gif_reader_next(easel_gif_reader *reader, uint8_t *canvas, size_t row_bytes, long max_frame_pixels,
                          long max_total_pixels, int *delay_ms, int *loop_count, char *message) {
    GifFileType *gif = reader->gif;
    int transparent = -1, disposal = 0, delay_cs = 0;
    GifRecordType record;
    for (;;) {
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) {
            set_message(message, GifErrorString(gif->Error) ? GifErrorString(gif->Error) : "corrupt GIF");
            return 0;
        }
        if (record == TERMINATE_RECORD_TYPE) return 2;
        if (record == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *extension;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) {
                set_message(message, "corrupt GIF extension");
                return 0;
            }
            int netscape = code == APPLICATION_EXT_FUNC_CODE && extension && extension[0] >= 11 &&
                           (memcmp(extension + 1, "NETSCAPE2.0", 11) == 0 || memcmp(extension + 1, "ANIMEXTS1.0", 11) == 0);
            if (code == GRAPHICS_EXT_FUNC_CODE && extension && extension[0] >= 4) {
                disposal = (extension[1] >> 2) & 7;
                delay_cs = extension[2] | (extension[3] << 8);
                transparent = (extension[1] & 1) ? extension[4] : -1;
            }
            for (;;) {
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) {
                    set_message(message, "corrupt GIF extension");
                    return 0;
                }
                if (!extension) break;
                if (netscape && extension[0] >= 3 && extension[1] == 1) reader->loop_count = extension[2] | (extension[3] << 8);
            }
            continue;
        }
        if (record != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) {
            set_message(message, "corrupt GIF image descriptor");
            return 0;
        }
        GifImageDesc *desc = &gif->Image;
        ColorMapObject *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
        if (!map || desc->Width <= 0 || desc->Height <= 0) {
            set_message(message, "GIF frame without colours or size");
            return 0;
        }
        if ((long)desc->Width * (long)desc->Height > max_frame_pixels) {
            set_message(message, "GIF frame exceeds the pixel limit");
            return 0;
        }
        reader->total_pixels += (long)desc->Width * (long)desc->Height;
        if (reader->total_pixels > max_total_pixels) {
            set_message(message, "GIF frames exceed the animation pixel limit");
            return -1;
        }
        /* What the previous frame asked to be done once it had been shown. */
        if (reader->previous_disposal == 2) {
            clear_rect(canvas, row_bytes, reader->width, reader->height, reader->previous_left, reader->previous_top,
                       reader->previous_width, reader->previous_height);
        } else if (reader->previous_disposal == 3 && reader->saved) {
            for (int y = 0; y < reader->height; y++) {
                memcpy(canvas + (size_t)y * row_bytes, reader->saved + (size_t)y * reader->width * 4, (size_t)reader->width * 4);
            }
        }
        if (disposal == 3) {
            if (!reader->saved) reader->saved = malloc((size_t)reader->width * reader->height * 4);
            if (!reader->saved) {
                set_message(message, "out of memory");
                return 0;
            }
            for (int y = 0; y < reader->height; y++) {
                memcpy(reader->saved + (size_t)y * reader->width * 4, canvas + (size_t)y * row_bytes, (size_t)reader->width * 4);
            }
        }
        GifByteType *line = malloc((size_t)desc->Width);
        if (!line) {
            set_message(message, "out of memory");
            return 0;
        }
        int passes = desc->Interlace ? 4 : 1;
        for (int pass = 0; pass < passes; pass++) {
            int first = desc->Interlace ? pass_starts[pass] : 0, step = desc->Interlace ? pass_steps[pass] : 1;
            for (int y = first; y < desc->Height; y += step) {
                if (DGifGetLine(gif, line, desc->Width) == GIF_ERROR) {
                    set_message(message, "the file ends before the image does");
                    free(line);
                    return 0;
                }
                int canvas_y = desc->Top + y;
                if (canvas_y < 0 || canvas_y >= reader->height) continue;  /* read every line: the next frame follows */
                draw_line(canvas + (size_t)canvas_y * row_bytes, reader->width, line, desc, map, transparent);
            }
        }
        free(line);
        reader->previous_disposal = disposal;
        reader->previous_left = desc->Left;
        reader->previous_top = desc->Top;
        reader->previous_width = desc->Width;
        reader->previous_height = desc->Height;
        *delay_ms = delay_cs * 10;
        *loop_count = reader->loop_count;
        return 1;
    }
}

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
} gif_sink;

static int write_memory(GifFileType *gif, const GifByteType *bytes, int length) {
    gif_sink *sink = (gif_sink *)gif->UserData;
    if (sink->size + (size_t)length > sink->capacity) {
        size_t capacity = sink->capacity ? sink->capacity * 2 : 4096;
        while (capacity < sink->size + (size_t)length) capacity *= 2;
        uint8_t *grown = realloc(sink->data, capacity);
        if (!grown) return 0;
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->size, bytes, (size_t)length);
    sink->size += (size_t)length;
    return length;
}

int easel_gif_encode_frames(int width, int height, int frame_count, const uint8_t *indexes, const size_t *frame_offsets,
                            const int *lefts, const int *tops, const int *widths, const int *heights, const int *disposals,
                            const int *transparent, const uint8_t *colors, int color_count, const int *delays_cs,
                            uint8_t **output, size_t *output_size, char *message) {
    gif_sink sink = {NULL, 0, 0};
    int error = 0, ok = 0;
    GifFileType *gif = EGifOpen(&sink, write_memory, &error);
    ColorMapObject *map = NULL;
    if (!gif) {
        set_message(message, "EGifOpen failed");
        return 0;
    }
    int map_size = 2;
    while (map_size < color_count) map_size *= 2;
    map = GifMakeMapObject(map_size, NULL);
    if (!map) goto done;
    for (int i = 0; i < color_count; i++) {
        map->Colors[i].Red = colors[3 * i];
        map->Colors[i].Green = colors[3 * i + 1];
        map->Colors[i].Blue = colors[3 * i + 2];
    }
    EGifSetGifVersion(gif, true);
    if (EGifPutScreenDesc(gif, width, height, 8, 0, map) == GIF_ERROR) goto done;
    unsigned char loop[3] = {1, 0, 0};
    if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
        EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_ERROR || EGifPutExtensionBlock(gif, 3, loop) == GIF_ERROR ||
        EGifPutExtensionTrailer(gif) == GIF_ERROR) goto done;
    for (int f = 0; f < frame_count; f++) {
        unsigned char packed = (unsigned char)((disposals[f] & 7) << 2) | (transparent[f] >= 0 ? 1 : 0);
        unsigned char control[4] = {packed, (unsigned char)(delays_cs[f] & 255), (unsigned char)(delays_cs[f] >> 8),
                                    (unsigned char)(transparent[f] >= 0 ? transparent[f] : 0)};
        if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, control) == GIF_ERROR) goto done;
        if (EGifPutImageDesc(gif, lefts[f], tops[f], widths[f], heights[f], false, NULL) == GIF_ERROR) goto done;
        for (int y = 0; y < heights[f]; y++) {
            if (EGifPutLine(gif, (GifPixelType *)(indexes + frame_offsets[f] + (size_t)y * widths[f]), widths[f]) == GIF_ERROR) goto done;
        }
    }
    ok = 1;
done:
    if (map) GifFreeMapObject(map);
    if (EGifCloseFile(gif, &error) == GIF_ERROR) ok = 0;
    if (!ok) {
        set_message(message, "could not write the GIF");
        free(sink.data);
        return 0;
    }
    *output = sink.data;
    *output_size = sink.size;
    return 1;
}

int easel_gif_encode_indexed(const uint8_t *indexes, int width, int height, int frame_count, const uint8_t *colors,
                             int color_count, const int *delays_cs, uint8_t **output, size_t *output_size, char *message) {
    size_t *offsets = malloc(sizeof(size_t) * (size_t)frame_count);
    int *numbers = malloc(sizeof(int) * (size_t)frame_count * 6);
    if (!offsets || !numbers) {
        free(offsets);
        free(numbers);
        set_message(message, "out of memory");
        return 0;
    }
    int *zeros = numbers, *widths = numbers + frame_count, *heights = numbers + 2 * frame_count, *none = numbers + 3 * frame_count;
    for (int f = 0; f < frame_count; f++) {
        offsets[f] = (size_t)f * (size_t)width * (size_t)height;
        zeros[f] = 0;
        widths[f] = width;
        heights[f] = height;
        none[f] = -1;
    }
    int ok = easel_gif_encode_frames(width, height, frame_count, indexes, offsets, zeros, zeros, widths, heights, zeros, none,
                                     colors, color_count, delays_cs, output, output_size, message);
    free(offsets);
    free(numbers);
    return ok;
}

int easel_gif_count_frames(const uint8_t *data, size_t size, int stop_at, int *first_interlaced, long *first_pixels,
                           char *message) {
    if (first_interlaced) *first_interlaced = 0;
    if (first_pixels) *first_pixels = 0;
    gif_source source;
    GifFileType *gif = open_gif(data, size, &source, message);
    if (!gif) return -1;
    int count = 0;
    GifRecordType record;
    while (count < stop_at) {
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) {
            /* Damage after the first frame still leaves an image to show. */
            if (count == 0) count = -1;
            set_message(message, "corrupt GIF");
            break;
        }
        if (record == TERMINATE_RECORD_TYPE) break;
        if (record == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *extension;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) break;
            while (extension) {
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) { extension = NULL; break; }
            }
            continue;
        }
        if (record != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) break;
        if (count == 0 && first_interlaced) *first_interlaced = gif->Image.Interlace ? 1 : 0;
        if (count == 0 && first_pixels) *first_pixels = (long)gif->Image.Width * (long)gif->Image.Height;
        int code_size;
        GifByteType *block;
        if (DGifGetCode(gif, &code_size, &block) == GIF_ERROR) break;
        /* (Every byte of the file is read to count its frames: a mapped file's pages are handed
         * back every 4096 blocks, about a megabyte, as they go by.) */
        for (unsigned blocks = 1; block; blocks++) {
            if (DGifGetCodeNext(gif, &block) == GIF_ERROR) { block = NULL; break; }
            if (blocks % 4096 == 0) easel_input_release(source.data + source.offset);
        }
        easel_input_release(source.data + source.offset);
        count++;
    }
    DGifCloseFile(gif, NULL);
    return count;
}

struct easel_gif_writer {
    GifFileType *gif;
    gif_sink sink;
    int width, height;
};

easel_gif_writer *easel_gif_writer_new(int width, int height, int loop_count, int animated, char *message) {
    easel_gif_writer *writer = calloc(1, sizeof(*writer));
    if (!writer) { set_message(message, "out of memory"); return NULL; }
    int error = 0;
    writer->gif = EGifOpen(&writer->sink, write_memory, &error);
    writer->width = width;
    writer->height = height;
    if (!writer->gif) { free(writer); set_message(message, "EGifOpen failed"); return NULL; }
    EGifSetGifVersion(writer->gif, true);
    /* No global palette: each frame brings its own. */
    if (EGifPutScreenDesc(writer->gif, width, height, 8, 0, NULL) == GIF_ERROR) goto failed;
    if (animated) {
        unsigned char loop[3] = {1, (unsigned char)(loop_count & 255), (unsigned char)((loop_count >> 8) & 255)};
        if (EGifPutExtensionLeader(writer->gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
            EGifPutExtensionBlock(writer->gif, 11, "NETSCAPE2.0") == GIF_ERROR || EGifPutExtensionBlock(writer->gif, 3, loop) == GIF_ERROR ||
            EGifPutExtensionTrailer(writer->gif) == GIF_ERROR)
            goto failed;
    }
    return writer;
failed:
    set_message(message, "could not start the GIF");
    easel_gif_writer_free(writer);
    return NULL;
}

int easel_gif_writer_add(easel_gif_writer *writer, uint8_t *indexes, const uint8_t *palette, int palette_size, int transparent,
                         int delay_cs, int disposal, char *message) {
    if (palette_size < 1 || palette_size > 256) { set_message(message, "a palette of 1 to 256 colours"); return 0; }
    int map_size = 2;
    while (map_size < palette_size) map_size *= 2;
    ColorMapObject *map = GifMakeMapObject(map_size, NULL);
    if (!map) { set_message(message, "out of memory"); return 0; }
    for (int i = 0; i < palette_size; i++) {
        map->Colors[i].Red = palette[3 * i];
        map->Colors[i].Green = palette[3 * i + 1];
        map->Colors[i].Blue = palette[3 * i + 2];
    }
    if (delay_cs < 0) delay_cs = 0;
    if (delay_cs > 65535) delay_cs = 65535;
    unsigned char packed = (unsigned char)(((disposal & 7) << 2) | (transparent >= 0 ? 1 : 0));
    unsigned char control[4] = {packed, (unsigned char)(delay_cs & 255), (unsigned char)(delay_cs >> 8),
                                (unsigned char)(transparent >= 0 ? transparent : 0)};
    int ok = EGifPutExtension(writer->gif, GRAPHICS_EXT_FUNC_CODE, 4, control) != GIF_ERROR &&
             EGifPutImageDesc(writer->gif, 0, 0, writer->width, writer->height, false, map) != GIF_ERROR;
    for (int y = 0; ok && y < writer->height; y++) {
        ok = EGifPutLine(writer->gif, indexes + (size_t)y * writer->width, writer->width) != GIF_ERROR;
    }
    GifFreeMapObject(map);
    if (!ok) set_message(message, "could not write the frame");
    return ok;
}

int easel_gif_writer_finish(easel_gif_writer *writer, uint8_t **output, size_t *output_size, char *message) {
    int error = 0;
    int ok = EGifCloseFile(writer->gif, &error) != GIF_ERROR;
    writer->gif = NULL;
    if (!ok) {
        set_message(message, "could not finish the GIF");
        free(writer->sink.data);
        free(writer);
        return 0;
    }
    *output = writer->sink.data;
    *output_size = writer->sink.size;
    free(writer);
    return 1;
}

void easel_gif_writer_free(easel_gif_writer *writer) {
    if (!writer) return;
    int error = 0;
    if (writer->gif) EGifCloseFile(writer->gif, &error);
    free(writer->sink.data);
    free(writer);
}
