/*
 * gdalCurlClearCache([prefix]): forgets what GDAL's /vsicurl/ and /vsis3/ remember of remote files
 * (their size, whether they exist, cached ranges): VSICurlPartialClearCache(prefix), or
 * VSICurlClearCache() without one. Returns false when no GDAL is loaded in the process.
 *
 * Why: a file GDAL first opened while the store did not answer is remembered as not existing, and
 * stays so after the store is back (measured: "does not exist in the file system" for a file the
 * store serves again), so downloads of it would fail until a restart. gdal-async does not expose
 * these functions, so they are found in the GDAL the process has already loaded (gdal-async's
 * libgdal.so, or its own copy linked in): no link-time dependency, the same GDAL and caches.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <node_api.h>
#include <stdbool.h>
#include <stddef.h>

#include "gdal_cache_binding.h"

typedef void (*clear_prefix_fn)(const char *);
typedef void (*clear_all_fn)(void);

typedef struct {
  const char *symbol;
  void *found;
} lookup;

static int find_symbol(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  lookup *wanted = data;
  const char *name = info->dlpi_name;
  if (!name || !name[0]) return 0; /* the executable itself: node has no GDAL */
  void *handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return 0;
  void *symbol = dlsym(handle, wanted->symbol);
  dlclose(handle); /* RTLD_NOLOAD took a reference: give it back; the object stays loaded */
  if (!symbol) return 0;
  wanted->found = symbol;
  return 1;
}

/* The function `name` of the GDAL loaded in this process, or NULL. */
static void *gdal_function(const char *name) {
  lookup wanted = {name, NULL};
  dl_iterate_phdr(find_symbol, &wanted);
  return wanted.found;
}

napi_value gdal_curl_clear_cache_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  char prefix[4096];
  size_t length = 0;
  bool with_prefix = false, done = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc >= 1) {
    napi_valuetype type;
    if (napi_typeof(env, argv[0], &type) != napi_ok) return NULL;
    if (type == napi_string) {
      if (napi_get_value_string_utf8(env, argv[0], prefix, sizeof prefix, &length) != napi_ok) return NULL;
      if (length >= sizeof prefix - 1) {
        napi_throw_range_error(env, NULL, "prefix must be shorter than 4095 bytes");
        return NULL;
      }
      with_prefix = true;
    } else if (type != napi_undefined) {
      napi_throw_type_error(env, NULL, "prefix must be a string");
      return NULL;
    }
  }
  /* Looked up once each: GDAL is not unloaded while the process runs. */
  static clear_prefix_fn clear_prefix;
  static clear_all_fn clear_all;
  if (with_prefix) {
    if (!clear_prefix) clear_prefix = (clear_prefix_fn)gdal_function("VSICurlPartialClearCache");
    if (clear_prefix) {
      clear_prefix(prefix);
      done = true;
    }
  } else {
    if (!clear_all) clear_all = (clear_all_fn)gdal_function("VSICurlClearCache");
    if (clear_all) {
      clear_all();
      done = true;
    }
  }
  if (napi_get_boolean(env, done, &result) != napi_ok) return NULL;
  return result;
}
