/*
 * AES-256-GCM for transaction tokens, with OpenSSL's EVP interface as Node itself carries it (the
 * headers come with Node's, the symbols from the node binary: nothing to link). node:crypto's
 * Cipheriv does the same work, but each token made a Cipheriv: a JavaScript object, a native one
 * behind it that the garbage collector must visit in every young-generation collection, and three
 * Buffers with memory of their own. At thousands of coverage answers a second per process that was
 * a fifth of each answer's CPU time and a third of each collection's pause (docs/architecture.md).
 * Here the caller's buffers, kept for the codec's life, take every byte in and out.
 *
 *   seal(key, iv, aad, plaintext, out) -> bytes written to out: iv | ciphertext | 16-byte tag
 *   open(key, aad, sealed, out)        -> plaintext bytes written to out, or -1 when the tag does
 *                                         not authenticate (nothing of the plaintext is usable then)
 */
#include <node_api.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KEY_BYTES 32
#define IV_BYTES 12
#define TAG_BYTES 16

/* A Uint8Array's bytes (a Buffer is one), or a TypeError naming the argument. */
static bool bytes_of(napi_env env, napi_value value, const char *name, unsigned char **data, size_t *length) {
  bool is_typed_array = false;
  napi_typedarray_type type;
  void *bytes = NULL;
  napi_is_typedarray(env, value, &is_typed_array);
  if (!is_typed_array || napi_get_typedarray_info(env, value, &type, length, &bytes, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    char message[64];
    snprintf(message, sizeof message, "%s must be a Uint8Array", name);
    napi_throw_type_error(env, NULL, message);
    return false;
  }
  /* An empty array may have no memory at all; OpenSSL wants a pointer even for no bytes. */
  static unsigned char none[1];
  *data = bytes ? bytes : none;
  return true;
}

/*
 * One context and one fetched cipher per JavaScript thread, kept: EVP_aes_256_gcm() looks the
 * implementation up in OpenSSL's providers at every init, which was half of a token's sealing.
 */
static __thread EVP_CIPHER_CTX *ctx;
static __thread EVP_CIPHER *aes_256_gcm;

static bool ready(napi_env env) {
  if (!ctx) ctx = EVP_CIPHER_CTX_new();
  if (!aes_256_gcm) aes_256_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
  if (!ctx || !aes_256_gcm) napi_throw_error(env, NULL, "AES-256-GCM is not available");
  return ctx && aes_256_gcm;
}

static napi_value number(napi_env env, double value) {
  napi_value result;
  return napi_create_double(env, value, &result) == napi_ok ? result : NULL;
}

static napi_value seal_js(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  unsigned char *key, *iv, *aad, *plain, *out;
  size_t key_length, iv_length, aad_length, plain_length, out_length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (!bytes_of(env, argv[0], "key", &key, &key_length) || !bytes_of(env, argv[1], "iv", &iv, &iv_length) ||
      !bytes_of(env, argv[2], "aad", &aad, &aad_length) || !bytes_of(env, argv[3], "plaintext", &plain, &plain_length) ||
      !bytes_of(env, argv[4], "out", &out, &out_length)) {
    return NULL;
  }
  if (key_length != KEY_BYTES || iv_length != IV_BYTES) {
    napi_throw_range_error(env, NULL, "the key must be 32 bytes and the iv 12");
    return NULL;
  }
  if (plain_length > (size_t)INT32_MAX || aad_length > (size_t)INT32_MAX ||
      out_length < IV_BYTES + plain_length + TAG_BYTES) {
    napi_throw_range_error(env, NULL, "out is too small for the sealed bytes");
    return NULL;
  }
  if (!ready(env)) return NULL;
  int written = 0, final = 0;
  /* The plaintext may be out's own bytes further on: the iv goes in only after encryption. */
  unsigned char iv_copy[IV_BYTES];
  memcpy(iv_copy, iv, IV_BYTES);
  if (EVP_EncryptInit_ex(ctx, aes_256_gcm, NULL, key, iv_copy) != 1 ||
      EVP_EncryptUpdate(ctx, NULL, &written, aad, (int)aad_length) != 1 ||
      EVP_EncryptUpdate(ctx, out + IV_BYTES, &written, plain, (int)plain_length) != 1 ||
      EVP_EncryptFinal_ex(ctx, out + IV_BYTES + written, &final) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, out + IV_BYTES + written + final) != 1) {
    napi_throw_error(env, NULL, "AES-256-GCM encryption failed");
    return NULL;
  }
  memcpy(out, iv_copy, IV_BYTES);
  return number(env, IV_BYTES + written + final + TAG_BYTES);
}

static napi_value open_js(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  unsigned char *key, *aad, *sealed, *out;
  size_t key_length, aad_length, sealed_length, out_length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (!bytes_of(env, argv[0], "key", &key, &key_length) || !bytes_of(env, argv[1], "aad", &aad, &aad_length) ||
      !bytes_of(env, argv[2], "sealed", &sealed, &sealed_length) || !bytes_of(env, argv[3], "out", &out, &out_length)) {
    return NULL;
  }
  if (key_length != KEY_BYTES) {
    napi_throw_range_error(env, NULL, "the key must be 32 bytes");
    return NULL;
  }
  /* Too short to hold an iv and a tag: not something we sealed. */
  if (sealed_length < IV_BYTES + TAG_BYTES || sealed_length > (size_t)INT32_MAX || aad_length > (size_t)INT32_MAX) {
    return number(env, -1);
  }
  size_t cipher_length = sealed_length - IV_BYTES - TAG_BYTES;
  if (out_length < cipher_length) {
    napi_throw_range_error(env, NULL, "out is too small for the plaintext");
    return NULL;
  }
  if (!ready(env)) return NULL;
  unsigned char tag[TAG_BYTES];
  memcpy(tag, sealed + sealed_length - TAG_BYTES, TAG_BYTES);
  int written = 0, final = 0;
  if (EVP_DecryptInit_ex(ctx, aes_256_gcm, NULL, key, sealed) != 1 ||
      EVP_DecryptUpdate(ctx, NULL, &written, aad, (int)aad_length) != 1 ||
      EVP_DecryptUpdate(ctx, out, &written, sealed + IV_BYTES, (int)cipher_length) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, tag) != 1) {
    napi_throw_error(env, NULL, "AES-256-GCM decryption failed");
    return NULL;
  }
  /* The tag is checked here, in constant time; on a mismatch `out` holds unauthenticated bytes. */
  if (EVP_DecryptFinal_ex(ctx, out + written, &final) != 1) {
    memset(out, 0, cipher_length);
    return number(env, -1);
  }
  return number(env, written + final);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
      {"seal", NULL, seal_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"open", NULL, open_js, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties) != napi_ok) return NULL;
  return exports;
}
