/*
 * Node-API face of codec.c. Arguments are checked on the calling thread (a bad one throws there);
 * the encode runs on the libuv pool and settles a Promise. The input is pinned by a reference
 * until then; the pool thread sees only the raw bytes, never a JavaScript value.
 */
#include <node_api.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "decode.h"
#include "decode_binding.h"
#include "gdal_cache_binding.h"
#include "inflate_binding.h"
#include "malloc_binding.h"
#include "page_read.h"
#include "stack.h"

#define MAX_SIZE 4096
/* Measured on aerial tiles (bench/tiles/encoders.ts): see the choice in src/tiles/encode.ts. */
#define DEFAULT_PNG_FILTER PNG_FILTER_UP

#define CHECK(call) do { if ((call) != napi_ok) return NULL; } while (0)

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  /* The picture: one RGBA buffer, or `layers` of them (top first) composited through `masks`; a
   * layer given as JPEG bytes is decoded here, into its `pixels` buffer when the caller wants the
   * decoded tile kept (a cache), else straight onto the composite through its mask. */
  napi_ref inputs[3 * MAX_LAYERS + 1]; /* every layer, mask and JPEG, and `into` */
  int input_count, layers;
  const uint8_t *rgba;
  const uint8_t *pixels[MAX_LAYERS], *masks[MAX_LAYERS], *jpegs[MAX_LAYERS];
  size_t jpeg_lengths[MAX_LAYERS];
  /* Where the caller wants the bytes (optional): copied there when they fit, the length then the answer. */
  uint8_t *into;
  size_t into_length;
  int fitted;
  int png, size, quality, with_alpha, level, rotation;
  enum png_filter filter;
  encoded out;
  const char *error;
} job;

static int throw_range(napi_env env, const char *message) {
  napi_throw_range_error(env, NULL, message);
  return 0;
}

/* An integer from min to max; throws and returns 0 otherwise. */
static int int_arg(napi_env env, napi_value value, const char *message, int min, int max, int *out) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok) {
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  if (!(number >= min && number <= max) || number != (double)(int)number) return throw_range(env, message);
  *out = (int)number;
  return 1;
}

static int rotation_arg(napi_env env, napi_value value, int *out) {
  const char *message = "rotation must be 0, 90, 180 or 270";
  if (!int_arg(env, value, message, 0, 270, out)) return 0;
  return *out % 90 == 0 ? 1 : throw_range(env, message);
}

/* The bytes of a Uint8Array (or Buffer) of exactly `length` bytes; throws and returns NULL otherwise. */
static const uint8_t *bytes_arg(napi_env env, napi_value value, size_t length, const char *what, const char *size_message) {
  bool is_typed_array = false;
  napi_typedarray_type type;
  size_t found;
  void *data;
  napi_is_typedarray(env, value, &is_typed_array);
  if (!is_typed_array || napi_get_typedarray_info(env, value, &type, &found, &data, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, what);
    return NULL;
  }
  if (found != length) {
    throw_range(env, size_message);
    return NULL;
  }
  return data;
}

/* Keeps `value` alive until the encode is done. */
static int pin(napi_env env, napi_value value, job *j) {
  napi_ref reference;
  if (napi_create_reference(env, value, 1, &reference) != napi_ok) return 0;
  j->inputs[j->input_count++] = reference;
  return 1;
}

/* The JPEG of layer `i` when `jpegs` (an array, or undefined) has one there; 0 after throwing. */
static int jpeg_layer_arg(napi_env env, napi_value jpegs, uint32_t i, job *j) {
  bool is_array = false;
  napi_value jpeg;
  napi_valuetype type;
  size_t length;
  void *data;
  napi_is_array(env, jpegs, &is_array);
  if (!is_array) return 1;
  if (napi_get_element(env, jpegs, i, &jpeg) != napi_ok) return 0;
  napi_typeof(env, jpeg, &type);
  if (type == napi_undefined) return 1;
  bool is_typed_array = false;
  napi_typedarray_type element;
  napi_is_typedarray(env, jpeg, &is_typed_array);
  if (!is_typed_array || napi_get_typedarray_info(env, jpeg, &element, &length, &data, NULL, NULL) != napi_ok ||
      element != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "a layer's JPEG must be a Uint8Array");
    return 0;
  }
  j->jpegs[i] = data;
  j->jpeg_lengths[i] = length;
  return pin(env, jpeg, j);
}

/* Size x size RGBA pixels: a Uint8Array, or an array of 1 to MAX_LAYERS of them (top first) with
 * `masks`, an array as long whose items are a mask (size * size / 8 bytes) or undefined for a
 * whole layer. With `jpegs` (an array as long, or undefined), a layer with JPEG bytes there is
 * decoded: its pixels are then undefined, or a buffer to decode into. */
static int pixels_arg(napi_env env, napi_value value, napi_value masks, napi_value jpegs, int size, job *j) {
  const char *what = "rgba must be a Uint8Array or an array of them";
  const char *size_message = "rgba must hold size * size RGBA pixels";
  size_t bytes = (size_t)size * size * 4;
  bool is_array = false;
  napi_is_array(env, value, &is_array);
  if (!is_array) {
    j->rgba = bytes_arg(env, value, bytes, what, size_message);
    return j->rgba && pin(env, value, j);
  }
  uint32_t count = 0, mask_count = 0;
  bool masks_are_array = false;
  napi_get_array_length(env, value, &count);
  napi_is_array(env, masks, &masks_are_array);
  if (masks_are_array) napi_get_array_length(env, masks, &mask_count);
  if (count < 1 || count > MAX_LAYERS) return throw_range(env, "a stack has 1 to 16 layers");
  if (!masks_are_array || mask_count != count) return throw_range(env, "masks must be an array, one per layer");
  for (uint32_t i = 0; i < count; i++) {
    napi_value layer, mask;
    napi_valuetype mask_type;
    napi_valuetype layer_type;
    if (napi_get_element(env, value, i, &layer) != napi_ok || napi_get_element(env, masks, i, &mask) != napi_ok)
      return 0;
    if (!jpeg_layer_arg(env, jpegs, i, j)) return 0;
    napi_typeof(env, layer, &layer_type);
    if (j->jpegs[i] && size > 256) return throw_range(env, "JPEG layers are at most 256 pixels wide");
    if (!j->jpegs[i] || layer_type != napi_undefined) {
      j->pixels[i] = bytes_arg(env, layer, bytes, what, size_message);
      if (!j->pixels[i] || !pin(env, layer, j)) return 0;
    }
    napi_typeof(env, mask, &mask_type);
    if (mask_type == napi_undefined) continue;
    j->masks[i] = bytes_arg(env, mask, bytes / 32, "a mask must be a Uint8Array", "a mask has size * size / 8 bytes");
    if (!j->masks[i] || !pin(env, mask, j)) return 0;
  }
  if (size % 8 != 0) return throw_range(env, "a stack's size must be a multiple of 8");
  j->layers = (int)count;
  return 1;
}

/* An optional Uint8Array to write the encoded bytes into. */
static int into_arg(napi_env env, napi_value value, job *j) {
  napi_valuetype type;
  bool is_typed_array = false;
  napi_typedarray_type element;
  void *data;
  napi_typeof(env, value, &type);
  if (type == napi_undefined) return 1;
  napi_is_typedarray(env, value, &is_typed_array);
  if (!is_typed_array || napi_get_typedarray_info(env, value, &element, &j->into_length, &data, NULL, NULL) != napi_ok ||
      element != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "into must be a Uint8Array");
    return 0;
  }
  j->into = data;
  return pin(env, value, j);
}

static void unpin(napi_env env, job *j) {
  for (int i = 0; i < j->input_count; i++) napi_delete_reference(env, j->inputs[i]);
}

/* Paints the layers bottom-up as stack_layers does, decoding the JPEG ones first. */
static const char *composite_layers(job *j, uint8_t *out) {
  int size = j->size;
  /* A full bottom layer writes every pixel; otherwise undrawn pixels must read transparent black. */
  if (j->masks[j->layers - 1]) memset(out, 0, (size_t)size * size * 4);
  for (int layer = j->layers - 1; layer >= 0; layer--) {
    uint8_t *keep = (uint8_t *)j->pixels[layer];
    const char *error = NULL;
    if (j->jpegs[layer] && !keep)
      error = decode_jpeg(j->jpegs[layer], j->jpeg_lengths[layer], 1, size, j->masks[layer], out);
    else if (j->jpegs[layer])
      error = decode_jpeg(j->jpegs[layer], j->jpeg_lengths[layer], 1, size, NULL, keep);
    if (error) return error;
    if (!j->jpegs[layer] || keep) paint_layer(out, j->pixels[layer], j->masks[layer], size);
  }
  return NULL;
}

static void execute(napi_env env, void *data) {
  (void)env;
  job *j = data;
  uint8_t *composite = NULL;
  if (j->layers > 0) {
    composite = malloc((size_t)j->size * j->size * 4);
    if (!composite) {
      j->error = "out of memory";
      return;
    }
    j->error = composite_layers(j, composite);
    if (j->error) {
      free(composite);
      return;
    }
  }
  const uint8_t *rgba = composite ? composite : j->rgba;
  j->error = j->png ? encode_png(rgba, j->size, j->with_alpha, j->level, j->rotation, j->filter, &j->out)
                    : encode_jpeg(rgba, j->size, j->quality, j->rotation, &j->out);
  free(composite);
  if (!j->error && j->into && j->out.length <= j->into_length) {
    memcpy(j->into, j->out.data, j->out.length);
    j->fitted = 1;
  }
}

static void free_encoded(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  free(data);
}

static void complete(napi_env env, napi_status status, void *data) {
  job *j = data;
  napi_value result = NULL;
  if (status == napi_ok && !j->error && j->fitted && napi_create_uint32(env, (uint32_t)j->out.length, &result) == napi_ok) {
    napi_resolve_deferred(env, j->deferred, result);
    /* Otherwise the encoded bytes become the Buffer as they are (a PNG tile is 100 KB: no copy on
     * the event loop); free_encoded releases them when the Buffer is collected. */
  } else if (status == napi_ok && !j->error &&
             napi_create_external_buffer(env, j->out.length, j->out.data, free_encoded, NULL, &result) == napi_ok) {
    j->out.data = NULL;
    napi_resolve_deferred(env, j->deferred, result);
  } else {
    napi_value message;
    napi_create_string_utf8(env, j->error ? j->error : "encode failed", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &result);
    napi_reject_deferred(env, j->deferred, result);
  }
  free(j->out.data);
  unpin(env, j);
  napi_delete_async_work(env, j->work);
  free(j);
}

/* Takes over `j` (freed here on failure, in complete() otherwise). */
static napi_value start(napi_env env, job *j, napi_value pixels, napi_value masks, napi_value into, napi_value jpegs) {
  napi_value name, promise;
  if (!pixels_arg(env, pixels, masks, jpegs, j->size, j) || !into_arg(env, into, j)) {
    unpin(env, j);
    free(j);
    return NULL;
  }
  if (napi_create_string_utf8(env, "tile-codec", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, execute, complete, j, &j->work) != napi_ok ||
      napi_create_promise(env, &j->deferred, &promise) != napi_ok || napi_queue_async_work(env, j->work) != napi_ok) {
    unpin(env, j);
    if (j->work) napi_delete_async_work(env, j->work);
    free(j);
    return NULL;
  }
  return promise;
}

/* encodeJpeg(rgba, size, quality, rotation, masks?, into?, jpegs?): Promise<Buffer | number>: the
 * bytes' length when they were written into `into`, else a Buffer of them. */
static napi_value encode_jpeg_js(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  job *j = calloc(1, sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  if (!int_arg(env, argv[1], "size must be an integer from 1 to 4096", 1, MAX_SIZE, &j->size) ||
      !int_arg(env, argv[2], "quality must be an integer from 1 to 100", 1, 100, &j->quality) ||
      !rotation_arg(env, argv[3], &j->rotation)) {
    free(j);
    return NULL;
  }
  return start(env, j, argv[0], argv[4], argv[5], argv[6]);
}

/* encodePng(rgba, size, withAlpha, level, rotation, filter?, masks?, into?, jpegs?): as encodeJpeg;
 * filter is PNG's type byte, level -1 run_deflate.c's encoder. */
static napi_value encode_png_js(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  napi_valuetype filter_type;
  bool with_alpha;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  job *j = calloc(1, sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  j->png = 1;
  j->filter = DEFAULT_PNG_FILTER;
  int filter = j->filter;
  if (!int_arg(env, argv[1], "size must be an integer from 1 to 4096", 1, MAX_SIZE, &j->size)) goto fail;
  if (napi_get_value_bool(env, argv[2], &with_alpha) != napi_ok) {
    napi_throw_type_error(env, NULL, "withAlpha must be a boolean");
    goto fail;
  }
  j->with_alpha = with_alpha;
  if (!int_arg(env, argv[3], "level must be -1 (run_deflate) or an integer from 0 to 12", PNG_LEVEL_RUNS, 12, &j->level) ||
      !rotation_arg(env, argv[4], &j->rotation))
    goto fail;
  napi_typeof(env, argv[5], &filter_type);
  const char *filter_message = "filter must be 0 (none), 1 (sub), 2 (up) or 4 (paeth)";
  if (filter_type != napi_undefined && !int_arg(env, argv[5], filter_message, 0, 4, &filter)) goto fail;
  if (filter == 3) {
    throw_range(env, filter_message);
    goto fail;
  }
  j->filter = (enum png_filter)filter;
  return start(env, j, argv[0], argv[6], argv[7], argv[8]);
fail:
  free(j);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value jpeg, png, decode, inflate, read_cached, malloc_tune, malloc_trim, gdal_clear;
  CHECK(napi_create_function(env, "encodeJpeg", NAPI_AUTO_LENGTH, encode_jpeg_js, NULL, &jpeg));
  CHECK(napi_create_function(env, "decodeJpeg", NAPI_AUTO_LENGTH, decode_jpeg_js, NULL, &decode));
  CHECK(napi_set_named_property(env, exports, "decodeJpeg", decode));
  CHECK(napi_create_function(env, "inflateZlib", NAPI_AUTO_LENGTH, inflate_zlib_js, NULL, &inflate));
  CHECK(napi_set_named_property(env, exports, "inflateZlib", inflate));
  CHECK(napi_create_function(env, "readCached", NAPI_AUTO_LENGTH, read_cached_js, NULL, &read_cached));
  CHECK(napi_set_named_property(env, exports, "readCached", read_cached));
  CHECK(napi_create_function(env, "mallocTune", NAPI_AUTO_LENGTH, malloc_tune_js, NULL, &malloc_tune));
  CHECK(napi_set_named_property(env, exports, "mallocTune", malloc_tune));
  CHECK(napi_create_function(env, "mallocTrim", NAPI_AUTO_LENGTH, malloc_trim_js, NULL, &malloc_trim));
  CHECK(napi_set_named_property(env, exports, "mallocTrim", malloc_trim));
  CHECK(napi_create_function(env, "gdalCurlClearCache", NAPI_AUTO_LENGTH, gdal_curl_clear_cache_js, NULL, &gdal_clear));
  CHECK(napi_set_named_property(env, exports, "gdalCurlClearCache", gdal_clear));
  CHECK(napi_create_function(env, "encodePng", NAPI_AUTO_LENGTH, encode_png_js, NULL, &png));
  CHECK(napi_set_named_property(env, exports, "encodeJpeg", jpeg));
  CHECK(napi_set_named_property(env, exports, "encodePng", png));
  return exports;
}
