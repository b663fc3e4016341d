/*
 * inflateZlib(bytes, length): the zlib stream `bytes` inflated into a new Buffer of exactly
 * `length` bytes, synchronously. For COG mask tiles (8 KiB of bits from a few hundred bytes): two
 * per composite tile, where node:zlib's inflateSync cost about 30 us each, most of it setting up
 * a stream; libdeflate's whole-buffer decompressor takes a few microseconds, less than handing
 * the work to the libuv pool would. The call was 9 us with a decompressor allocated per call and
 * the answer in malloc'd memory behind an external Buffer (a finalizer for the GC to run each);
 * 3.5 us with a kept decompressor and the answer in a Buffer Node allocates.
 */
#include <libdeflate.h>
#include <node_api.h>
#include <stdlib.h>

#include "inflate_binding.h"

/* Masks are 8 KiB; a bound keeps a corrupt length from asking for gigabytes. */
#define MAX_INFLATED (16 * 1024 * 1024)

napi_value inflate_zlib_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  bool is_typed_array = false;
  napi_typedarray_type type;
  size_t length;
  void *data;
  double wanted;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  napi_is_typedarray(env, argv[0], &is_typed_array);
  if (!is_typed_array || napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "bytes must be a Uint8Array");
    return NULL;
  }
  if (napi_get_value_double(env, argv[1], &wanted) != napi_ok || !(wanted >= 1 && wanted <= MAX_INFLATED) ||
      wanted != (double)(size_t)wanted) {
    napi_throw_range_error(env, NULL, "length must be an integer from 1 to 16 MiB");
    return NULL;
  }
  /* One decompressor per JavaScript thread, kept: allocating one per call was a third of the call. */
  static __thread struct libdeflate_decompressor *decompressor;
  if (!decompressor) decompressor = libdeflate_alloc_decompressor();
  void *out;
  if (!decompressor || napi_create_buffer(env, (size_t)wanted, &out, &result) != napi_ok) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  /* Exactly `wanted` bytes, no more and no less: anything else is a broken tile. */
  enum libdeflate_result status = libdeflate_zlib_decompress(decompressor, data ? data : "", length, out, (size_t)wanted, NULL);
  if (status != LIBDEFLATE_SUCCESS) {
    napi_throw_error(env, NULL, status == LIBDEFLATE_SHORT_OUTPUT || status == LIBDEFLATE_INSUFFICIENT_SPACE
                                    ? "the zlib stream does not inflate to the expected length"
                                    : "corrupt zlib stream");
    return NULL;
  }
  return result;
}
