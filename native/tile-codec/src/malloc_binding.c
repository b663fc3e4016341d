/*
 * glibc malloc controls for the server process (src/raster/malloc.ts):
 *
 * - mallocTune(arenaMax, mmapThreshold): mallopt(M_ARENA_MAX) and mallopt(M_MMAP_THRESHOLD), on the
 *   calling thread. A thread takes its arena at its first malloc, so this runs before GDAL's work
 *   starts threads. A fixed mmap threshold also turns off glibc's dynamic one, which after the
 *   first large free keeps every later allocation up to 32 MB in the arenas. Returns whether glibc
 *   accepted both (false elsewhere: another C library, or an allocator preloaded in its place
 *   answers for itself).
 * - mallocTrim(): a Promise of whether malloc_trim(0) gave memory back to the system. It walks every
 *   arena and returns each free page (MADV_DONTNEED), which for heaps of hundreds of MB takes
 *   milliseconds, so it runs on the libuv pool.
 */
#include <node_api.h>
#include <stdbool.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "malloc_binding.h"

napi_value malloc_tune_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  int64_t arena_max, mmap_threshold;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 2 || napi_get_value_int64(env, argv[0], &arena_max) != napi_ok ||
      napi_get_value_int64(env, argv[1], &mmap_threshold) != napi_ok || arena_max < 0 || mmap_threshold < 0 ||
      arena_max > 1024 || mmap_threshold > (int64_t)32 * 1024 * 1024) {
    napi_throw_range_error(env, NULL, "mallocTune(arenaMax 0..1024, mmapThreshold 0..32 MiB); 0 leaves one as it is");
    return NULL;
  }
  bool done = false;
#if defined(__GLIBC__)
  done = true;
  if (arena_max > 0) done = mallopt(M_ARENA_MAX, (int)arena_max) == 1 && done;
  if (mmap_threshold > 0) done = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) == 1 && done;
#endif
  if (napi_get_boolean(env, done, &result) != napi_ok) return NULL;
  return result;
}

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int released;
} trim_job;

static void trim_execute(napi_env env, void *data) {
  (void)env;
  trim_job *j = data;
#if defined(__GLIBC__)
  j->released = malloc_trim(0);
#else
  j->released = 0;
#endif
}

static void trim_complete(napi_env env, napi_status status, void *data) {
  trim_job *j = data;
  napi_value result;
  if (status == napi_ok && napi_get_boolean(env, j->released != 0, &result) == napi_ok) {
    napi_resolve_deferred(env, j->deferred, result);
  } else {
    napi_value message, error;
    napi_create_string_utf8(env, "malloc_trim did not run", NAPI_AUTO_LENGTH, &message);
    napi_create_error(env, NULL, message, &error);
    napi_reject_deferred(env, j->deferred, error);
  }
  napi_delete_async_work(env, j->work);
  free(j);
}

napi_value malloc_trim_js(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value promise, name;
  trim_job *j = calloc(1, sizeof *j);
  if (!j) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  if (napi_create_promise(env, &j->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "nadir:mallocTrim", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, trim_execute, trim_complete, j, &j->work) != napi_ok ||
      napi_queue_async_work(env, j->work) != napi_ok) {
    free(j);
    return NULL;
  }
  return promise;
}
