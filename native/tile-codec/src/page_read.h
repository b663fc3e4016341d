/* Reads from the page cache without waiting for a disk: see page_read.c. */
#ifndef PAGE_READ_H
#define PAGE_READ_H

#include <node_api.h>

napi_value read_cached_js(napi_env env, napi_callback_info info);

#endif
