/* Compositing layers of one tile through their masks: see stack.c. */
#ifndef STACK_H
#define STACK_H

#include <stddef.h>
#include <stdint.h>

#define MAX_LAYERS 16

/* `count` layers of size x size RGBA, top (drawn first) to bottom, each with a mask of 1 bit a pixel
 * (most significant bit first, size / 8 bytes a row) or NULL where the whole layer is valid.
 * Writes their composite to `out`: the top layer wins wherever it is valid, transparent black
 * where none is. `size` is a multiple of 8. */
void stack_layers(const uint8_t *const *pixels, const uint8_t *const *masks, int count, int size, uint8_t *out);

/* One layer of a stack painted over `out`: its valid pixels (all of them without a mask). */
void paint_layer(uint8_t *out, const uint8_t *pixels, const uint8_t *mask, int size);

#endif
