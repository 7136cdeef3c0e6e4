#ifndef EASEL_PDF_H
#define EASEL_PDF_H

#include <stddef.h>
#include <stdint.h>

#define EASEL_PDF_MESSAGE_SIZE 200

/* The number of pages and the size of page `page` (0 is the first) in points (1/72 inch; at
 * 72 dpi, pixels). Returns 1; 0 with a message for a damaged document; -1 for an encrypted
 * one (a password would be needed); -2 when there is no such page. */
int easel_pdf_info(const uint8_t *data, size_t size, int page, int *pages, double *width, double *height, char *message);

/* Renders page `page` scaled to width x height on white paper, as opaque RGBA, into `pixels`
 * (height rows of row_bytes, a multiple of 4). Returns 1, or 0 with a message. */
int easel_pdf_render(const uint8_t *data, size_t size, int page, uint8_t *pixels, size_t row_bytes, int width, int height,
                     char *message);

/* What a document may ask of poppler, checked before poppler reads it (easel_pdf_budget.c). */
typedef struct {
    long max_objects;      /* objects in the file */
    long max_stream_bytes; /* bytes one stream inflates to */
    long max_total_bytes;  /* bytes all streams inflate to */
    long max_save_depth;   /* graphics states saved (q) without being restored */
    long max_operators;    /* operators drawn, each form counted as often as it is drawn */
} easel_pdf_budget;

/* Checks the document against `budget`. Returns 1, or 0 with a message naming the limit. */
int easel_pdf_check_budget(const uint8_t *data, size_t size, const easel_pdf_budget *budget, char *message);

#endif
