/* decodeJpeg for JavaScript: see decode_binding.c. */
#ifndef DECODE_BINDING_H
#define DECODE_BINDING_H

#include <node_api.h>

napi_value decode_jpeg_js(napi_env env, napi_callback_info info);

#endif
