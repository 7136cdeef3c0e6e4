#include "easel_gif.h"

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

int easel_gif_decode_first_frame(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                                 int width, int height, long max_frame_pixels, char *message) {
    gif_source source;
    GifFileType *gif = open_gif(data, size, &source, message);
    if (!gif) return 0;
    int transparent = -1;
    GifRecordType record;
    GifByteType *line = NULL;
    int result = 0;
    for (;;) {
        if (DGifGetRecordType(gif, &record) == GIF_ERROR) {
            set_message(message, GifErrorString(gif->Error) ? GifErrorString(gif->Error) : "corrupt GIF");
            break;
        }
        if (record == TERMINATE_RECORD_TYPE) {
            set_message(message, "GIF has no image");
            break;
        }
        if (record == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *extension;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) {
                set_message(message, "corrupt GIF extension");
                break;
            }
            while (extension) {
                if (code == GRAPHICS_EXT_FUNC_CODE && extension[0] >= 4 && (extension[1] & 1)) {
                    transparent = extension[4];
                }
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) {
                    set_message(message, "corrupt GIF extension");
                    DGifCloseFile(gif, NULL);
                    return 0;
                }
            }
            continue;
        }
        if (record != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) {
            set_message(message, "corrupt GIF image descriptor");
            break;
        }
        GifImageDesc *desc = &gif->Image;
        ColorMapObject *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
        if (!map || desc->Width <= 0 || desc->Height <= 0) {
            set_message(message, "GIF frame without colours or size");
            break;
        }
        if ((long)desc->Width * (long)desc->Height > max_frame_pixels) {
            set_message(message, "GIF frame exceeds the pixel limit");
            break;
        }
        line = malloc((size_t)desc->Width);
        if (!line) {
            set_message(message, "out of memory");
            break;
        }
        int ok = 1;
        /* Interlaced GIFs store rows in four passes. */
        static const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
        int passes = desc->Interlace ? 4 : 1;
        for (int pass = 0; pass < passes && ok; pass++) {
            int first = desc->Interlace ? starts[pass] : 0, step = desc->Interlace ? steps[pass] : 1;
            for (int y = first; y < desc->Height; y += step) {
                if (DGifGetLine(gif, line, desc->Width) == GIF_ERROR) {
                    set_message(message, "the file ends before the image does");
                    ok = 0;
                    break;
                }
                int canvas_y = desc->Top + y;
                if (!desc->Interlace && canvas_y >= height) break; /* the rest is off the canvas */
                if (canvas_y < 0 || canvas_y >= height) continue;
                uint8_t *row = pixels + (size_t)canvas_y * row_bytes;
                for (int x = 0; x < desc->Width; x++) {
                    int canvas_x = desc->Left + x;
                    int index = line[x];
                    if (canvas_x < 0 || canvas_x >= width || index == transparent || index >= map->ColorCount) continue;
                    GifColorType color = map->Colors[index];
                    row[4 * canvas_x] = color.Red;
                    row[4 * canvas_x + 1] = color.Green;
                    row[4 * canvas_x + 2] = color.Blue;
                    row[4 * canvas_x + 3] = 255;
                }
            }
        }
        result = ok;
        break;
    }
    free(line);
    DGifCloseFile(gif, NULL);
    return result;
}
