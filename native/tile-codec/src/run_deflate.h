/* A fast deflate encoder for filtered PNG rows: see run_deflate.c. */
#ifndef RUN_DEFLATE_H
#define RUN_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes `out` must have room for when compressing `length` bytes. */
size_t run_deflate_bound(size_t length);

/* Writes a raw deflate stream (RFC 1951) of `in` to `out`, which has run_deflate_bound(length)
 * bytes; returns its length, or 0 when `scratch` cannot be allocated. */
size_t run_deflate(const uint8_t *in, size_t length, uint8_t *out);

#endif
