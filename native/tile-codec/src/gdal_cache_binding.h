/* gdalCurlClearCache for JavaScript: see gdal_cache_binding.c. */
#ifndef GDAL_CACHE_BINDING_H
#define GDAL_CACHE_BINDING_H

#include <node_api.h>

napi_value gdal_curl_clear_cache_js(napi_env env, napi_callback_info info);

#endif
