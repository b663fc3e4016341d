/* JPEG tiles decoded into RGBA: see decode.c. */
#ifndef DECODE_H
#define DECODE_H

#include <stddef.h>
#include <stdint.h>

/* Decodes `jpeg` at 1/`scale` (1, 2, 4 or 8), which must come out `size` x `size`, into `out`
 * (size x size RGBA, alpha 255): every pixel, or with `mask` (1 bit a pixel, most significant
 * first, size / 8 bytes a row; size at most 256) only those whose bit is set, the others left as
 * they were. Returns NULL on success, else a static message (a warning counts as a failure); `out`
 * may then be partly written. */
const char *decode_jpeg(const uint8_t *jpeg, size_t length, int scale, int size, const uint8_t *mask, uint8_t *out);

#endif
