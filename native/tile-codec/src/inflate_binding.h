/* inflateZlib for JavaScript: see inflate_binding.c. */
#ifndef INFLATE_BINDING_H
#define INFLATE_BINDING_H

#include <node_api.h>

napi_value inflate_zlib_js(napi_env env, napi_callback_info info);

#endif
