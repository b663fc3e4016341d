/* glibc malloc controls for JavaScript: see malloc_binding.c. */
#ifndef MALLOC_BINDING_H
#define MALLOC_BINDING_H

#include <node_api.h>

napi_value malloc_tune_js(napi_env env, napi_callback_info info);
napi_value malloc_trim_js(napi_env env, napi_callback_info info);

#endif
