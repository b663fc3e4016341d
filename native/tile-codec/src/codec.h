/* The encoders, free of Node: plain buffers in, a malloc'd buffer out (the caller frees it). */
#ifndef TILE_CODEC_H
#define TILE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* PNG's filter type byte, one filter for every row. */
enum png_filter { PNG_FILTER_NONE = 0, PNG_FILTER_SUB = 1, PNG_FILTER_UP = 2, PNG_FILTER_PAETH = 4 };

/* encode_png's `level` for run_deflate.c's encoder instead of libdeflate's levels 0..12. */
#define PNG_LEVEL_RUNS (-1)

typedef struct {
  uint8_t *data;
  size_t length;
} encoded;

/* `rgba` is size x size RGBA; `rotation` (0, 90, 180 or 270) turns the picture clockwise.
 * Return NULL on success, else a static message. */
const char *encode_jpeg(const uint8_t *rgba, int size, int quality, int rotation, encoded *out);
const char *encode_png(const uint8_t *rgba, int size, int with_alpha, int level, int rotation,
                       enum png_filter filter, encoded *out);

#endif
