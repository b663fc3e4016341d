/*
 * Node-API face of decode.c: decodeJpeg(jpeg, scale, size, mask?, into?) decodes on the libuv pool
 * and settles a Promise, like the encoders (binding.c). Without `into` the answer is a new Buffer
 * of size x size RGBA (the malloc'd pixels themselves, no copy); with it the pixels are painted
 * into `into` (through `mask` when given) and the answer is undefined. The inputs are pinned by
 * references until then; the pool thread sees only their bytes.
 */
#include <node_api.h>
#include <stdlib.h>

#include "decode.h"
#include "decode_binding.h"

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref inputs[3];
  int input_count;
  const uint8_t *jpeg, *mask;
  size_t length;
  uint8_t *into, *owned;
  int scale, size;
  const char *error;
} decode_job;

/* A Uint8Array's bytes and length, pinned; NULL after throwing a TypeError. */
static const uint8_t *pinned_bytes(napi_env env, napi_value value, const char *what, size_t *length, decode_job *j) {
  bool is_typed_array = false;
  napi_typedarray_type type;
  void *data;
  napi_ref reference;
  napi_is_typedarray(env, value, &is_typed_array);
  if (!is_typed_array || napi_get_typedarray_info(env, value, &type, length, &data, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, what);
    return NULL;
  }
  if (napi_create_reference(env, value, 1, &reference) != napi_ok) return NULL;
  j->inputs[j->input_count++] = reference;
  /* A zero-length array may have no data pointer; the decoder refuses it by its length. */
  return data ? data : (const uint8_t *)"";
}

static void release(napi_env env, decode_job *j) {
  for (int i = 0; i < j->input_count; i++) napi_delete_reference(env, j->inputs[i]);
  if (j->work) napi_delete_async_work(env, j->work);
  free(j->owned);
  free(j);
}

static void execute(napi_env env, void *data) {
  (void)env;
  decode_job *j = data;
  uint8_t *out = j->into;
  if (!out) {
    out = j->owned = malloc((size_t)j->size * j->size * 4);
    if (!out) {
      j->error = "out of memory";
      return;
    }
  }
  j->error = decode_jpeg(j->jpeg, j->length, j->scale, j->size, j->mask, out);
}

static void free_pixels(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  free(data);
}

static void complete(napi_env env, napi_status status, void *data) {
  decode_job *j = data;
  napi_value result = NULL;
  size_t bytes = (size_t)j->size * j->size * 4;
  if (status == napi_ok && !j->error && !j->owned && napi_get_undefined(env, &result) == napi_ok) {
    napi_resolve_deferred(env, j->deferred, result);
  } else if (status == napi_ok && !j->error &&
             napi_create_external_buffer(env, bytes, j->owned, free_pixels, NULL, &result) == napi_ok) {
    j->owned = NULL;
    napi_resolve_deferred(env, j->deferred, result);
  } else {
    napi_value message;
    napi_create_string_utf8(env, j->error ? j->error : "decode failed", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &result);
    napi_reject_deferred(env, j->deferred, result);
  }
  release(env, j);
}

napi_value decode_jpeg_js(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], name, promise;
  napi_valuetype mask_type, into_type;
  double scale, size;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  decode_job *j = calloc(1, sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  if (!(j->jpeg = pinned_bytes(env, argv[0], "jpeg must be a Uint8Array", &j->length, j))) goto fail;
  if (napi_get_value_double(env, argv[1], &scale) != napi_ok ||
      !(scale == 1 || scale == 2 || scale == 4 || scale == 8)) {
    napi_throw_range_error(env, NULL, "scale must be 1, 2, 4 or 8");
    goto fail;
  }
  if (napi_get_value_double(env, argv[2], &size) != napi_ok || !(size >= 1 && size <= 4096) || size != (int)size) {
    napi_throw_range_error(env, NULL, "size must be an integer from 1 to 4096");
    goto fail;
  }
  j->scale = (int)scale, j->size = (int)size;
  napi_typeof(env, argv[3], &mask_type);
  napi_typeof(env, argv[4], &into_type);
  if (mask_type != napi_undefined) {
    size_t length;
    if (!(j->mask = pinned_bytes(env, argv[3], "mask must be a Uint8Array", &length, j))) goto fail;
    if (j->size % 8 != 0 || j->size > 256 || length != (size_t)j->size * j->size / 8) {
      napi_throw_range_error(env, NULL, "a mask has size * size / 8 bytes, size a multiple of 8 up to 256");
      goto fail;
    }
    if (into_type == napi_undefined) {
      napi_throw_type_error(env, NULL, "a masked decode paints into `into`");
      goto fail;
    }
  }
  if (into_type != napi_undefined) {
    size_t length;
    if (!(j->into = (uint8_t *)pinned_bytes(env, argv[4], "into must be a Uint8Array", &length, j))) goto fail;
    if (length != (size_t)j->size * j->size * 4) {
      napi_throw_range_error(env, NULL, "into must hold size * size RGBA pixels");
      goto fail;
    }
  }
  if (napi_create_string_utf8(env, "tile-codec-decode", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute, complete, j, &j->work) != napi_ok ||
      napi_create_promise(env, &j->deferred, &promise) != napi_ok || napi_queue_async_work(env, j->work) != napi_ok)
    goto fail;
  return promise;
fail:
  release(env, j);
  return NULL;
}
