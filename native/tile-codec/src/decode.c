/*
 * JPEG decoding with libjpeg-turbo straight into RGBA (alpha 255), the form the compositor and the
 * encoders read: libjpeg-turbo converts YCbCr (or grey) to RGBA in its own SIMD colour conversion,
 * so no second pass over the pixels is made. A coarser zoom reading a finer COG level asks for a
 * scaled decode (1/2, 1/4, 1/8), which libjpeg-turbo does in the inverse DCT, at a fraction of the
 * work of a full decode followed by a shrink.
 *
 * A warning is a failure here (truncated data, a corrupt Huffman code, garbage between markers):
 * libjpeg would otherwise paint the missing part grey and carry on, and a grey stripe in a map tile
 * is worse than an error. sharp, which decoded tiles before, fails on warnings by default too.
 */
#include "decode.h"

#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <string.h>

#include <jpeglib.h>

struct decode_failure {
  struct jpeg_error_mgr manager;
  jmp_buf jump;
};

static void decode_fail(j_common_ptr cinfo) { longjmp(((struct decode_failure *)cinfo->err)->jump, 1); }

/* Level -1 is a warning (libjpeg counts them in num_warnings); the others are trace messages. */
static void decode_message(j_common_ptr cinfo, int level) {
  if (level < 0) cinfo->err->num_warnings++;
}

/* Copies the pixels of one RGBA row whose bits are set in `mask` (MSB first), 8 at a time. */
static void copy_masked_row(uint8_t *out, const uint8_t *row, const uint8_t *mask, int width) {
  for (int byte = 0; byte < width / 8; byte++) {
    uint8_t bits = mask[byte];
    if (bits == 0) continue;
    size_t first = (size_t)byte * 8 * 4;
    if (bits == 0xff) {
      memcpy(out + first, row + first, 8 * 4);
      continue;
    }
    for (int k = 0; k < 8; k++)
      if (bits & (0x80 >> k)) memcpy(out + first + (size_t)k * 4, row + first + (size_t)k * 4, 4);
  }
}

const char *decode_jpeg(const uint8_t *jpeg, size_t length, int scale, int size, const uint8_t *mask,
                        uint8_t *out) {
  struct jpeg_decompress_struct cinfo;
  struct decode_failure failure;
  /* Rows decoded at once: libjpeg-turbo's 4:2:0 path makes two per call, its merged upsampler more. */
  enum { ROWS = 16 };
  uint8_t scratch[ROWS][256 * 4];
  const char *volatile error = NULL;

  if (length == 0) return "empty JPEG";
  cinfo.err = jpeg_std_error(&failure.manager);
  failure.manager.error_exit = decode_fail;
  failure.manager.emit_message = decode_message;
  if (setjmp(failure.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return error ? error : "corrupt JPEG";
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, jpeg, (unsigned long)length);
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.num_components != 1 && cinfo.num_components != 3) {
    error = "a JPEG tile has 1 or 3 components";
    longjmp(failure.jump, 1);
  }
  cinfo.out_color_space = JCS_EXT_RGBA;
  cinfo.scale_num = 1;
  cinfo.scale_denom = (unsigned)scale;
  jpeg_start_decompress(&cinfo);
  if ((int)cinfo.output_width != size || (int)cinfo.output_height != size) {
    error = "the JPEG is not the size of a tile";
    longjmp(failure.jump, 1);
  }
  /* The masked copy reads whole rows of scratch, which holds up to 256 pixels a row. */
  if (mask && size > 256) {
    error = "a masked decode is at most 256 pixels wide";
    longjmp(failure.jump, 1);
  }
  size_t stride = (size_t)size * 4;
  while (cinfo.output_scanline < cinfo.output_height) {
    JDIMENSION y = cinfo.output_scanline;
    JDIMENSION want = cinfo.output_height - y < ROWS ? cinfo.output_height - y : ROWS;
    JSAMPROW rows[ROWS];
    for (JDIMENSION i = 0; i < want; i++) rows[i] = mask ? scratch[i] : out + (size_t)(y + i) * stride;
    JDIMENSION got = jpeg_read_scanlines(&cinfo, rows, want);
    if (mask)
      for (JDIMENSION i = 0; i < got; i++)
        copy_masked_row(out + (size_t)(y + i) * stride, scratch[i], mask + (size_t)(y + i) * ((size_t)size / 8), size);
  }
  jpeg_finish_decompress(&cinfo);
  int warned = cinfo.err->num_warnings > 0;
  jpeg_destroy_decompress(&cinfo);
  return warned ? "corrupt JPEG" : NULL;
}
