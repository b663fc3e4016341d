/*
 * readCached(fd, buffer, position): reads into `buffer` from `position` only what the kernel's page
 * cache holds, on the calling thread: preadv2 with RWF_NOWAIT, which never waits for a disk.
 * Returns the bytes read (fewer than asked, even 0, when the rest is not cached: the caller reads
 * that part the usual way, on the libuv pool), or -1 when the file system cannot say (no
 * RWF_NOWAIT: the caller then stops asking for that file).
 *
 * Why: a COG tile of a survey in use is nearly always cached, and a read handed to the libuv pool
 * costs the event loop far more than the copy itself: queueing the request, waking a pool thread
 * (which on 2 cores often takes the event loop's core), and the completion coming back through the
 * loop. Measured under cold-tile load, each pool read held the event loop about 100 us of wall
 * time against a few microseconds for the copy (docs/tiles.md). libuv's own io_uring path does
 * the same "read it now if cached" but spends a polling thread on it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <sys/uio.h>

#include "page_read.h"

napi_value read_cached_js(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], result;
  int32_t fd;
  double position;
  bool is_typed_array = false;
  napi_typedarray_type type;
  size_t length;
  void *data;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "fd must be a file descriptor");
    return NULL;
  }
  napi_is_typedarray(env, argv[1], &is_typed_array);
  if (!is_typed_array || napi_get_typedarray_info(env, argv[1], &type, &length, &data, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "buffer must be a Uint8Array");
    return NULL;
  }
  if (napi_get_value_double(env, argv[2], &position) != napi_ok || !(position >= 0) ||
      position != (double)(off_t)position) {
    napi_throw_range_error(env, NULL, "position must be a whole number of bytes");
    return NULL;
  }
  size_t done = 0;
  while (done < length) {
    struct iovec part = {(char *)data + done, length - done};
    ssize_t got = preadv2(fd, &part, 1, (off_t)position + (off_t)done, RWF_NOWAIT);
    if (got > 0) {
      done += (size_t)got;
      continue;
    }
    if (got == 0 || errno == EAGAIN) break; /* end of file, or the rest is not cached */
    if (errno == EINTR) continue;
    if (errno == EOPNOTSUPP || errno == ENOSYS) {
      if (done == 0) return napi_create_int32(env, -1, &result) == napi_ok ? result : NULL;
      break;
    }
    napi_throw_error(env, NULL, "preadv2 failed"); /* EBADF and the like: the caller's bug */
    return NULL;
  }
  return napi_create_double(env, (double)done, &result) == napi_ok ? result : NULL;
}
