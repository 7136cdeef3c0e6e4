#include "easel_cairo.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the conversion below writes little-endian words"
#endif

void easel_cairo_to_rgba(uint8_t *pixels, size_t row_bytes, int width, int height) {
    /* A word is A<<24 | R<<16 | G<<8 | B (bytes B, G, R, A here). Opaque words only exchange R
     * and B; clear ones are already 0; the rest are made straight. */
    for (int y = 0; y < height; y++) {
        uint32_t *row = (uint32_t *)(pixels + (size_t)y * row_bytes);
        for (int x = 0; x < width; x++) {
            uint32_t word = row[x], a = word >> 24;
            if (a == 255) {
                row[x] = (word & 0xFF00FF00u) | ((word >> 16) & 0xFFu) | ((word & 0xFFu) << 16);
            } else if (a != 0) {
                uint32_t r = (word >> 16) & 0xFF, g = (word >> 8) & 0xFF, b = word & 0xFF;
                r = (r * 255 + a / 2) / a;
                g = (g * 255 + a / 2) / a;
                b = (b * 255 + a / 2) / a;
                if (r > 255) r = 255;
                if (g > 255) g = 255;
                if (b > 255) b = 255;
                row[x] = a << 24 | b << 16 | g << 8 | r;
            }
        }
    }
}
