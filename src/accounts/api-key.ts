import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API key format: `nadir_<keyId>_<secret>`
 * - keyId: 12 lowercase hex characters (48 random bits). Public: it names the key in listings,
 *   in logs and inside transaction tokens, and lets lookup find the row without scanning.
 * - secret: 32 random bytes as base64url (43 characters, 256 bits of entropy).
 * Both parts are URL-safe, so the key can travel in a query string unescaped.
 *
 * Only SHA-256(key) is stored. A slow password hash (scrypt, argon2) buys nothing for a
 * 256-bit random secret, which cannot be brute-forced, and would cost time on every request.
 */
const KEY_PREFIX = 'nadir_';
const KEY_ID_BYTES = 6;
const SECRET_BYTES = 32;
const API_KEY_PATTERN = /^nadir_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const KEY_ID_PATTERN = /^[0-9a-f]{12}$/;

export interface GeneratedApiKey {
  keyId: string;
  /** `nadir_<keyId>`: safe to display. */
  prefix: string;
  /** The full key, to hand to the customer once. */
  key: string;
  /** What the store keeps. */
  hash: Buffer;
}

export function generateApiKey(): GeneratedApiKey {
  const keyId = randomBytes(KEY_ID_BYTES).toString('hex');
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  const key = `${displayPrefix(keyId)}_${secret}`;
  return { keyId, prefix: displayPrefix(keyId), key, hash: hashApiKey(key) };
}

export function displayPrefix(keyId: string): string {
  return `${KEY_PREFIX}${keyId}`;
}

/** The key id of a well-formed key, or undefined for anything else (never throws). */
export function keyIdOfApiKey(presented: unknown): string | undefined {
  if (typeof presented !== 'string') return undefined;
  return API_KEY_PATTERN.exec(presented)?.[1];
}

/** Accepts `3f9c0a1b2c4d` or `nadir_3f9c0a1b2c4d`, as an operator might paste either. */
export function normaliseKeyId(keyIdOrPrefix: string): string | undefined {
  const bare = keyIdOrPrefix.startsWith(KEY_PREFIX) ? keyIdOrPrefix.slice(KEY_PREFIX.length) : keyIdOrPrefix;
  return KEY_ID_PATTERN.test(bare) ? bare : undefined;
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/**
 * What the stores' caches of verified keys are keyed by: SHA-256 of the presented key (base64url),
 * never the key. A Map lookup compares its key with the cached ones character by character when
 * their hashes collide, so keyed by the key itself its timing could in principle tell how much of
 * a guess matches a cached key; keyed by the digest it can tell only how much of the guess's
 * SHA-256 matches, which says nothing about the key. It also keeps plain keys out of memory.
 * crypto.hash (Node 20.12+) is a third of createHash's cost on this per-request path.
 */
export const apiKeyDigest: (presented: string) => string =
  typeof crypto.hash === 'function'
    ? (presented) => crypto.hash('sha256', presented, 'base64url')
    : (presented) => createHash('sha256').update(presented, 'utf8').digest('base64url');

/**
 * Constant-time comparison of a presented key with a stored hash: both are SHA-256 digests of the
 * same length, compared with timingSafeEqual. The row was found by the key id, which is public.
 */
export function apiKeyMatchesHash(presented: string, storedHash: Uint8Array): boolean {
  const presentedHash = hashApiKey(presented);
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}
