/*
 * JPEG through libjpeg-turbo and PNG through run_deflate.c (or libdeflate at a zlib level, which
 * the encoder benchmark compares), straight from the RGBA canvas: the alpha
 * byte is skipped while reading (libjpeg-turbo's RGBX input, PNG's row packing) and a turned tile
 * is read in turned order, so no whole-picture copy is made on the way.
 */
#include "codec.h"

#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <libdeflate.h>

#include "run_deflate.h"

/* Output row y of the turned picture is input pixels first, first + step, ... (in pixels). */
static void row_walk(int size, int rotation, int y, ptrdiff_t *first, ptrdiff_t *step) {
  ptrdiff_t s = size;
  switch (rotation) {
  case 90: *first = (s - 1) * s + y, *step = -s; break;
  case 180: *first = (s - 1 - y) * s + (s - 1), *step = -1; break;
  case 270: *first = s - 1 - y, *step = s; break;
  default: *first = (ptrdiff_t)y * s, *step = 1;
  }
}

/* Output row y as `channels` bytes per pixel (3 drops alpha). */
static void read_row(const uint8_t *rgba, int size, int rotation, int y, int channels, uint8_t *row) {
  ptrdiff_t first, step;
  row_walk(size, rotation, y, &first, &step);
  const uint8_t *p = rgba + first * 4;
  if (step == 1 && channels == 4) {
    memcpy(row, p, (size_t)size * 4);
  } else if (channels == 4) {
    for (int x = 0; x < size; x++, p += step * 4, row += 4) memcpy(row, p, 4);
  } else if (step == 1) {
    /* Two pixels a step: 8 bytes in, 6 out (the store's last two bytes are overwritten next). */
    int x = 0;
    for (; x + 2 < size; x += 2, p += 8, row += 6) {
      uint64_t two;
      memcpy(&two, p, 8);
      two = (two & 0xffffffULL) | ((two >> 8) & 0xffffff000000ULL);
      memcpy(row, &two, 8);
    }
    for (; x < size; x++, p += 4, row += 3) memcpy(row, p, 3);
  } else {
    for (int x = 0; x < size; x++, p += step * 4, row += 3) memcpy(row, p, 3);
  }
}

/* ---- JPEG ---- */

struct jpeg_failure {
  struct jpeg_error_mgr manager;
  jmp_buf jump;
};

/* libjpeg's default handler exits the process. */
static void jpeg_fail(j_common_ptr cinfo) { longjmp(((struct jpeg_failure *)cinfo->err)->jump, 1); }
static void jpeg_quiet(j_common_ptr cinfo, int level) { (void)cinfo, (void)level; }

const char *encode_jpeg(const uint8_t *rgba, int size, int quality, int rotation, encoded *out) {
  struct jpeg_compress_struct cinfo;
  struct jpeg_failure failure;
  /* volatile: they change between setjmp and a possible longjmp. */
  unsigned char *volatile data = NULL;
  uint8_t *volatile turned = NULL;
  unsigned long length = 0;

  cinfo.err = jpeg_std_error(&failure.manager);
  failure.manager.error_exit = jpeg_fail;
  failure.manager.emit_message = jpeg_quiet;
  if (setjmp(failure.jump)) {
    jpeg_destroy_compress(&cinfo);
    free(data);
    free(turned);
    return "libjpeg failed";
  }
  jpeg_create_compress(&cinfo);
  /* libjpeg-turbo mallocs and grows the output, keeping `data` pointed at the current buffer. */
  jpeg_mem_dest(&cinfo, (unsigned char **)&data, &length);
  cinfo.image_width = cinfo.image_height = (JDIMENSION)size;
  cinfo.input_components = 4;
  cinfo.in_color_space = JCS_EXT_RGBX;
  /* The defaults are what sharp wrote: baseline, YCbCr 4:2:0, standard Huffman tables, islow DCT. */
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  if (rotation == 0) {
    while (cinfo.next_scanline < cinfo.image_height) {
      JSAMPROW row = (JSAMPROW)(rgba + (size_t)cinfo.next_scanline * size * 4);
      jpeg_write_scanlines(&cinfo, &row, 1);
    }
  } else {
    turned = malloc((size_t)size * 4);
    if (!turned) longjmp(failure.jump, 1);
    while (cinfo.next_scanline < cinfo.image_height) {
      JSAMPROW row = turned;
      read_row(rgba, size, rotation, (int)cinfo.next_scanline, 4, turned);
      jpeg_write_scanlines(&cinfo, &row, 1);
    }
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  free(turned);
  out->data = data;
  out->length = length;
  return NULL;
}

/* ---- PNG ---- */

/* On x86-64 a second copy of a vectorised loop for AVX2 (twice SSE2's width), picked when the
 * process starts by what the CPU has; elsewhere the one the compiler's defaults give. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WITH_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define WITH_AVX2_CLONE
#endif

static uint8_t *put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
  return p + 4;
}

/* Writes a chunk whose `length` data bytes are already at chunk + 8; returns the end. */
static uint8_t *finish_chunk(uint8_t *chunk, const char type[4], size_t length) {
  put32(chunk, (uint32_t)length);
  memcpy(chunk + 4, type, 4);
  return put32(chunk + 8 + length, libdeflate_crc32(0, chunk + 4, length + 4));
}

/* In 16 bits (the sums fit), which the compiler vectorises twice as wide as int. */
static inline uint8_t paeth(int16_t a, int16_t b, int16_t c) {
  int16_t pa = (int16_t)abs(b - c), pb = (int16_t)abs(a - c), pc = (int16_t)abs(a + b - 2 * c);
  return (uint8_t)((pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c));
}

/* One filtered scanline of `row` under `above` (zeros for the first), written without branches
 * inside the loops so that the compiler vectorises them. */
WITH_AVX2_CLONE static void filter_row(const uint8_t *restrict row, const uint8_t *restrict above, size_t stride, int channels,
                       enum png_filter filter, uint8_t *restrict out) {
  size_t first = (size_t)channels;
  switch (filter) {
  case PNG_FILTER_SUB:
    memcpy(out, row, first);
    for (size_t i = first; i < stride; i++) out[i] = (uint8_t)(row[i] - row[i - first]);
    break;
  case PNG_FILTER_UP:
    for (size_t i = 0; i < stride; i++) out[i] = (uint8_t)(row[i] - above[i]);
    break;
  case PNG_FILTER_PAETH:
    /* The left and upper-left neighbours of the first pixel are zero: Paeth picks the one above. */
    for (size_t i = 0; i < first; i++) out[i] = (uint8_t)(row[i] - above[i]);
    for (size_t i = first; i < stride; i++) out[i] = (uint8_t)(row[i] - paeth(row[i - first], above[i], above[i - first]));
    break;
  default:
    memcpy(out, row, stride);
  }
}

/* The zlib stream (RFC 1950) of `raw`: libdeflate's with `zlib`, else run_deflate's; 0 on failure. */
static size_t zlib_stream(const uint8_t *raw, size_t length, struct libdeflate_compressor *zlib, uint8_t *out,
                          size_t room) {
  if (zlib) return libdeflate_zlib_compress(zlib, raw, length, out, room);
  out[0] = 0x78, out[1] = 0x01; /* deflate, 32 KiB window, no dictionary; FCHECK makes it a multiple of 31 */
  size_t deflated = run_deflate(raw, length, out + 2);
  if (deflated == 0) return 0;
  put32(out + 2 + deflated, libdeflate_adler32(1, raw, length));
  return 2 + deflated + 4;
}

const char *encode_png(const uint8_t *rgba, int size, int with_alpha, int level, int rotation,
                       enum png_filter filter, encoded *out) {
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  int channels = with_alpha ? 4 : 3;
  size_t stride = (size_t)size * channels;
  size_t raw_length = (size_t)size * (stride + 1);

  /* A libdeflate compressor per call: allocating one takes about 4 us, deflating a tile 1 ms. */
  int runs = level == PNG_LEVEL_RUNS;
  struct libdeflate_compressor *zlib = runs ? NULL : libdeflate_alloc_compressor(level);
  size_t bound = runs ? 2 + run_deflate_bound(raw_length) + 4 : zlib ? libdeflate_zlib_compress_bound(zlib, raw_length) : 0;
  uint8_t *raw = malloc(raw_length);
  uint8_t *rows = calloc(2, stride); /* the raw row above (zeros above the first) and this one */
  uint8_t *png = bound ? malloc(8 + 25 + 12 + bound + 12) : NULL;
  if (!raw || !rows || !png) {
    libdeflate_free_compressor(zlib);
    free(raw);
    free(rows);
    free(png);
    return "out of memory";
  }
  for (int y = 0; y < size; y++) {
    uint8_t *above = rows + (size_t)(y & 1) * stride, *row = rows + (size_t)((y + 1) & 1) * stride;
    uint8_t *line = raw + (size_t)y * (stride + 1);
    read_row(rgba, size, rotation, y, channels, row);
    line[0] = (uint8_t)filter;
    filter_row(row, above, stride, channels, filter, line + 1);
  }
  free(rows);

  memcpy(png, signature, 8);
  uint8_t *header = put32(put32(png + 16, (uint32_t)size), (uint32_t)size);
  header[0] = 8;                  /* bits per sample */
  header[1] = with_alpha ? 6 : 2; /* colour type: RGBA or RGB */
  header[2] = header[3] = header[4] = 0; /* deflate, adaptive filtering, not interlaced */
  uint8_t *p = finish_chunk(png + 8, "IHDR", 13);
  size_t compressed = zlib_stream(raw, raw_length, zlib, p + 8, bound);
  libdeflate_free_compressor(zlib);
  free(raw);
  if (compressed == 0) {
    free(png);
    return "deflate failed";
  }
  p = finish_chunk(p, "IDAT", compressed);
  p = finish_chunk(p, "IEND", 0);
  out->data = png;
  out->length = (size_t)(p - png);
  return NULL;
}
