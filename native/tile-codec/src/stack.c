/*
 * The composite of a tile's layers, on the encoder's thread: what layer-stack.ts once did on the
 * event loop, where it was a quarter of a composite tile's main-thread time. Layers are painted
 * bottom-up, each over the pixels its mask marks valid, so the top one wins with no per-pixel test
 * of what is already drawn. Masks come 8 pixels a byte, and whole bytes (all valid or none) are
 * the common case inside and outside a footprint: those move as one 32-byte copy or not at all.
 */
#include "stack.h"

#include <string.h>

static void paint_masked(uint8_t *out, const uint8_t *pixels, const uint8_t *mask, size_t mask_bytes) {
  for (size_t i = 0; i < mask_bytes; i++) {
    uint8_t bits = mask[i];
    if (bits == 0) continue;
    size_t first = i * 8 * 4;
    if (bits == 0xff) {
      memcpy(out + first, pixels + first, 8 * 4);
      continue;
    }
    for (int k = 0; k < 8; k++)
      if (bits & (0x80 >> k)) memcpy(out + first + (size_t)k * 4, pixels + first + (size_t)k * 4, 4);
  }
}

void paint_layer(uint8_t *out, const uint8_t *pixels, const uint8_t *mask, int size) {
  if (mask) paint_masked(out, pixels, mask, (size_t)size * size / 8);
  else memcpy(out, pixels, (size_t)size * size * 4);
}

void stack_layers(const uint8_t *const *pixels, const uint8_t *const *masks, int count, int size, uint8_t *out) {
  /* A full bottom layer writes every pixel; otherwise undrawn pixels must read transparent black. */
  if (count == 0 || masks[count - 1]) memset(out, 0, (size_t)size * size * 4);
  for (int layer = count - 1; layer >= 0; layer--) paint_layer(out, pixels[layer], masks[layer], size);
}
