import { randomFillSync } from 'node:crypto';
import type { Clock } from '../clock.js';
import { NadirError } from '../errors.js';
import type { Aoi } from '../geo/aoi.js';
import { type AesGcm, nativeAesGcm } from './aes-gcm.js';
import { decodeClaims, encodeClaimsInto, MAX_CLAIMS_BYTES, type TransactionClaims } from './claims.js';
import { isValidSecretId, TOKEN_SECRET_BYTES, type TokenKeyring } from './keyring.js';

/**
 * Token format: `t1.<secretId>.<base64url(iv | ciphertext | tag)>`
 * - `t1`: format version; a future format gets a new prefix, so old and new tokens can be told apart.
 * - secretId: which keyring secret encrypted it, so secrets can rotate.
 * - AES-256-GCM with a random 96-bit IV and a 128-bit tag. The header `t1.<secretId>` is the
 *   additional authenticated data, so moving a body under another version or secret id fails.
 * Random IVs are safe for about 2^32 tokens per secret (NIST SP 800-38D); rotate long before.
 * Encryption, not just a signature: the token carries the account and key ids, which a
 * readable JWT would disclose to anyone who sees the URL. The cipher is OpenSSL's, through the
 * token-seal addon (aes-gcm.ts): the bytes are node:crypto's, without an object per token.
 */
export const TOKEN_FORMAT_PREFIX = 't1';
export const TOKEN_VALIDITY_MS = 30 * 24 * 60 * 60 * 1000;

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
 * the next call refills the pool, so callers use it at once (hex, the cipher, a copy).
 */
class RandomPool {
  readonly #pool = Buffer.allocUnsafeSlow(4096);
  #offset = this.#pool.length;

  take(bytes: number): Buffer {
    if (this.#offset + bytes > this.#pool.length) {
      randomFillSync(this.#pool);
      this.#offset = 0;
    }
    this.#offset += bytes;
    return this.#pool.subarray(this.#offset - bytes, this.#offset);
  }
}

export function invalidToken(reason: TokenRejection, message: string): NadirError {
  return new NadirError('TRANSACTION_TOKEN_INVALID', message, { reason });
}

export class TokenCodec {
  /** `t1.<current secret id>`: every new token starts with it. */
  readonly #currentHeaderText: string;
  readonly #currentSecret: Uint8Array;
  /** `t1.<current secret id>` as bytes: the additional authenticated data of every new token. */
  readonly #currentHeader: Buffer;
  readonly #secrets: ReadonlyMap<string, Uint8Array>;
  /** `t1.<secret id>` as bytes for every listed secret: the additional data to open its tokens with. */
  readonly #headers: ReadonlyMap<string, Buffer>;
  readonly #now: Clock;
  readonly #validityMs: number;
  readonly #aesGcm: AesGcm;
  readonly #random = new RandomPool();
  /** Kept for the codec's life: a token's plaintext and sealed bytes pass through these, nothing new per token. */
  readonly #plaintext = Buffer.allocUnsafeSlow(MAX_CLAIMS_BYTES);
  readonly #sealed = Buffer.allocUnsafeSlow(IV_BYTES + MAX_CLAIMS_BYTES + TAG_BYTES);

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
    this.#currentHeaderText = `${TOKEN_FORMAT_PREFIX}.${keyring.current}`;
    this.#currentSecret = currentSecret;
    this.#headers = new Map(
      [...this.#secrets.keys()].map((secretId) => [secretId, Buffer.from(`${TOKEN_FORMAT_PREFIX}.${secretId}`)]),
    );
    this.#currentHeader = this.#headers.get(keyring.current) as Buffer;
    this.#now = options.now;
    this.#validityMs = options.validityMs ?? TOKEN_VALIDITY_MS;
    this.#aesGcm = nativeAesGcm();
  }

  issue(subject: TokenSubject): IssuedToken {
    const issuedAt = this.#now();
    const claims: TransactionClaims = {
      tokenId: this.#random.take(16).toString('hex'),
      accountId: subject.accountId,
      keyId: subject.keyId,
      aoi: { lon: subject.aoi.lon, lat: subject.aoi.lat, radius: subject.aoi.radius },
      issuedAt,
      expiresAt: new Date(issuedAt.getTime() + this.#validityMs),
    };
    const plaintext = this.#plaintext.subarray(0, encodeClaimsInto(claims, this.#plaintext));
    const iv = this.#random.take(IV_BYTES);
    const sealed = this.#aesGcm.seal(this.#currentSecret, iv, this.#currentHeader, plaintext, this.#sealed);
    return { token: `${this.#currentHeaderText}.${this.#sealed.toString('base64url', 0, sealed)}`, claims };
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
    // Longer than any plaintext we seal: no key opens it (and it would not fit the buffer).
    if (sealed.length > IV_BYTES + MAX_CLAIMS_BYTES + TAG_BYTES) {
      throw invalidToken('tampered', 'Transaction token is invalid or has been altered');
    }
    const opened = this.#aesGcm.open(secret, this.#headers.get(secretId) as Buffer, sealed, this.#plaintext);
    // decodeClaims copies what it keeps: the plaintext buffer is the next token's.
    const claims = opened >= 0 ? decodeClaims(this.#plaintext.subarray(0, opened)) : undefined;
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
