/**
 * AES-256-GCM with a 12-byte IV and a 16-byte tag, from the token-seal addon
 * (native/token-seal/src/seal.c: OpenSSL, as node:crypto uses it). Bytes go in and out through
 * buffers the caller keeps, so sealing a token allocates nothing.
 */
import { nativeAddon } from '../native/native-addon.js';

export interface AesGcm {
  /** Writes iv | ciphertext | tag into `out` and returns how many bytes that is. */
  seal(key: Uint8Array, iv: Uint8Array, aad: Uint8Array, plaintext: Uint8Array, out: Uint8Array): number;
  /**
   * Writes the plaintext of `sealed` (iv | ciphertext | tag) into `out` and returns its length,
   * or -1 when the tag does not authenticate it under `key` and `aad` (out then holds nothing).
   */
  open(key: Uint8Array, aad: Uint8Array, sealed: Uint8Array, out: Uint8Array): number;
}

export function nativeAesGcm(): AesGcm {
  return nativeAddon<AesGcm>('token-seal');
}
