import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';
import type { Clock } from '../clock.js';
import { NadirError } from '../errors.js';
import type { Aoi } from '../geo/aoi.js';
import { decodeClaims, encodeClaims, type TransactionClaims } from './claims.js';
import { isValidSecretId, TOKEN_SECRET_BYTES, type TokenKeyring } from './keyring.js';

/**
 * Token format: `t1.<secretId>.<base64url(iv | ciphertext | tag)>`
 * - `t1`: format version; a future format gets a new prefix, so old and new tokens can be told apart.
 * - secretId: which keyring secret encrypted it, so secrets can rotate.
 * - AES-256-GCM with a random 96-bit IV and a 128-bit tag. The header `t1.<secretId>` is the
 *   additional authenticated data, so moving a body under another version or secret id fails.
 * Random IVs are safe for about 2^32 tokens per secret (NIST SP 800-38D); rotate long before.
 * Encryption, not just a signature: the token carries the account and key ids, which a
 * readable JWT would disclose to anyone who sees the URL.
 */
export const TOKEN_FORMAT_PREFIX = 't1';
export const TOKEN_VALIDITY_MS = 30 * 24 * 60 * 60 * 1000;

const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Far above any token we issue (~200 chars); checked before any decoding work is done. */
const MAX_TOKEN_LENGTH = 1024;
const BASE64URL_PATTERN = /^[A-Za-z0-9_-]+$/;

export interface TokenCodecOptions {
  /** Clock for issuedAt and expiresAt. */
  now: Clock;
  validityMs?: number;
}

export interface TokenSubject {
  accountId: string;
  keyId: string;
  aoi: Aoi;
}

export interface IssuedToken {
  token: string;
  claims: TransactionClaims;
}

/** Why a token was refused; also the `reason` detail of the error body. */
export type TokenRejection =
  | 'malformed'
  | 'unknown_secret'
  | 'tampered'
  | 'expired'
  | 'aoi_mismatch'
  | 'key_revoked'
  | 'account_disabled'
  | 'subscription_cancelled';

/**
 * Random bytes from the CSPRNG, drawn 4 KiB at a time: two small randomBytes calls per token cost
 * about as much as its encryption. Every byte is handed out once. The slice is only valid until
 * the next call refills the pool, so callers use it at once (hex, the cipher, a concat).
 */
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;

function pooledRandom(bytes: number): Buffer {
  if (randomOffset + bytes > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  randomOffset += bytes;
  return randomPool.subarray(randomOffset - bytes, randomOffset);
}

export function invalidToken(reason: TokenRejection, message: string): NadirError {
  return new NadirError('TRANSACTION_TOKEN_INVALID', message, { reason });
}

export class TokenCodec {
  readonly #currentSecretId: string;
  readonly #currentSecret: Uint8Array;
  /** `t1.<current secret id>` as bytes: the additional authenticated data of every new token. */
  readonly #currentHeader: Buffer;
  readonly #secrets: ReadonlyMap<string, Uint8Array>;
  readonly #now: Clock;
  readonly #validityMs: number;

  constructor(keyring: TokenKeyring, options: TokenCodecOptions) {
    // A Map, not the record: a token naming `__proto__` or `constructor` must find nothing.
    // Copies, so a caller reusing its buffers cannot change our keys.
    this.#secrets = new Map(
      Object.entries(keyring.secrets).map(([secretId, secret]) => [secretId, Buffer.from(secret)]),
    );
    for (const [secretId, secret] of this.#secrets) {
      if (!isValidSecretId(secretId) || secret.length !== TOKEN_SECRET_BYTES) {
        throw new NadirError(
          'INVALID_CONFIG',
          `Token secret ${JSON.stringify(secretId)} is not a valid 32-byte secret`,
        );
      }
    }
    const currentSecret = this.#secrets.get(keyring.current);
    if (!currentSecret) {
      throw new NadirError(
        'INVALID_CONFIG',
        `Current token secret ${JSON.stringify(keyring.current)} is not in the keyring`,
      );
    }
    this.#currentSecretId = keyring.current;
    this.#currentSecret = currentSecret;
    this.#currentHeader = Buffer.from(`${TOKEN_FORMAT_PREFIX}.${keyring.current}`, 'utf8');
    this.#now = options.now;
    this.#validityMs = options.validityMs ?? TOKEN_VALIDITY_MS;
  }

  issue(subject: TokenSubject): IssuedToken {
    const issuedAt = this.#now();
    const claims: TransactionClaims = {
      tokenId: pooledRandom(16).toString('hex'),
      accountId: subject.accountId,
      keyId: subject.keyId,
      aoi: { lon: subject.aoi.lon, lat: subject.aoi.lat, radius: subject.aoi.radius },
      issuedAt,
      expiresAt: new Date(issuedAt.getTime() + this.#validityMs),
    };
    const header = `${TOKEN_FORMAT_PREFIX}.${this.#currentSecretId}`;
    const iv = pooledRandom(IV_BYTES);
    const cipher = createCipheriv(CIPHER, this.#currentSecret, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(this.#currentHeader);
    const ciphertext = cipher.update(encodeClaims(claims));
    const final = cipher.final();
    const body = Buffer.concat([iv, ciphertext, final, cipher.getAuthTag()]).toString('base64url');
    return { token: `${header}.${body}`, claims };
  }

  /**
   * Authenticates and parses a token. Does not check expiry or the AOI (verifyImageryRequest
   * does). Any input that is not a token we issued with a listed secret gives
   * TRANSACTION_TOKEN_INVALID; nothing else is ever thrown.
   */
  decode(token: unknown): TransactionClaims {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
      throw invalidToken('malformed', 'Transaction token is malformed');
    }
    const parts = token.split('.');
    const [prefix, secretId, body] = parts;
    if (parts.length !== 3 || prefix !== TOKEN_FORMAT_PREFIX || !secretId || !body) {
      throw invalidToken('malformed', 'Transaction token is malformed');
    }
    const secret = this.#secrets.get(secretId);
    if (!secret) {
      throw invalidToken('unknown_secret', 'Transaction token was not issued by this server or its key was retired');
    }
    const sealed = decodeCanonicalBase64url(body);
    if (!sealed || sealed.length <= IV_BYTES + TAG_BYTES) {
      throw invalidToken('malformed', 'Transaction token is malformed');
    }
    const plaintext = openSealed(secret, `${prefix}.${secretId}`, sealed);
    const claims = plaintext && decodeClaims(plaintext);
    if (!claims) throw invalidToken('tampered', 'Transaction token is invalid or has been altered');
    return claims;
  }
}

/**
 * Node's base64url decoder skips characters it does not know and ignores unused trailing bits,
 * so two different strings can decode to the same bytes. Requiring the canonical encoding makes
 * every changed character of a token a different (and therefore rejected) token.
 */
function decodeCanonicalBase64url(text: string): Buffer | undefined {
  if (!BASE64URL_PATTERN.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** The plaintext, or undefined when GCM authentication fails. */
function openSealed(secret: Uint8Array, header: string, sealed: Buffer): Buffer | undefined {
  const iv = sealed.subarray(0, IV_BYTES);
  const ciphertext = sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv(CIPHER, secret, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(header, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    return undefined;
  }
}
