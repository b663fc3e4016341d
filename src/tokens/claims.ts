import { NadirError } from '../errors.js';
import type { Aoi } from '../geo/aoi.js';

/** What a transaction token binds (decisions.md "Transaction token"). */
export interface TransactionClaims {
  /** 32 lowercase hex characters (128 random bits); the billing ledger's key. */
  tokenId: string;
  accountId: string;
  /** The API key's public id, never the key. */
  keyId: string;
  aoi: Aoi;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * Binary layout of the plaintext, version 1 (all numbers big-endian):
 *   u8 version | 16 bytes token id | f64 issuedAt ms | f64 expiresAt ms
 *   | f64 lon | f64 lat | f64 radius | u8 n + n bytes accountId | u8 m + m bytes keyId
 * Binary rather than JSON keeps tokens short in URLs; float64 keeps the point exact, which the
 * 1e-7 degree match needs.
 */
const CLAIMS_VERSION = 1;
const TOKEN_ID_BYTES = 16;
const FIXED_BYTES = 1 + TOKEN_ID_BYTES + 5 * 8;
const MAX_STRING_BYTES = 255;
const TOKEN_ID_PATTERN = /^[0-9a-f]{32}$/;

/** Throws INTERNAL for claims our own code should never produce (they could not be decoded). */
export function encodeClaims(claims: TransactionClaims): Buffer {
  if (!TOKEN_ID_PATTERN.test(claims.tokenId)) throw claimsBug('tokenId must be 32 hex characters');
  const numbers = [
    claims.issuedAt.getTime(),
    claims.expiresAt.getTime(),
    claims.aoi.lon,
    claims.aoi.lat,
    claims.aoi.radius,
  ];
  if (!numbers.every(Number.isFinite)) throw claimsBug('times and AOI must be finite numbers');
  const accountId = shortString(claims.accountId, 'accountId');
  const keyId = shortString(claims.keyId, 'keyId');
  const buffer = Buffer.alloc(FIXED_BYTES + 1 + accountId.length + 1 + keyId.length);
  let offset = buffer.writeUInt8(CLAIMS_VERSION, 0);
  offset += Buffer.from(claims.tokenId, 'hex').copy(buffer, offset);
  for (const value of numbers) offset = buffer.writeDoubleBE(value, offset);
  offset = buffer.writeUInt8(accountId.length, offset);
  offset += accountId.copy(buffer, offset);
  offset = buffer.writeUInt8(keyId.length, offset);
  keyId.copy(buffer, offset);
  return buffer;
}

/**
 * Parses an authenticated plaintext. Returns undefined rather than throwing on any
 * inconsistency: the bytes passed GCM, so this only trips on our own bugs or a future version,
 * and either way the caller must answer "invalid token", never crash.
 */
export function decodeClaims(plaintext: Buffer): TransactionClaims | undefined {
  if (plaintext.length < FIXED_BYTES + 2 || plaintext.readUInt8(0) !== CLAIMS_VERSION) return undefined;
  const tokenId = plaintext.subarray(1, 1 + TOKEN_ID_BYTES).toString('hex');
  const numbers: number[] = [];
  for (let offset = 1 + TOKEN_ID_BYTES; offset < FIXED_BYTES; offset += 8) {
    numbers.push(plaintext.readDoubleBE(offset));
  }
  const [issuedMs, expiresMs, lon, lat, radius] = numbers;
  if (
    issuedMs === undefined ||
    expiresMs === undefined ||
    lon === undefined ||
    lat === undefined ||
    radius === undefined ||
    !numbers.every(Number.isFinite)
  ) {
    return undefined;
  }
  const accountId = readShortString(plaintext, FIXED_BYTES);
  if (!accountId) return undefined;
  const keyId = readShortString(plaintext, accountId.end);
  if (!keyId || keyId.end !== plaintext.length) return undefined;
  return {
    tokenId,
    accountId: accountId.value,
    keyId: keyId.value,
    aoi: { lon, lat, radius },
    issuedAt: new Date(issuedMs),
    expiresAt: new Date(expiresMs),
  };
}

function shortString(value: string, field: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length === 0 || bytes.length > MAX_STRING_BYTES) {
    throw claimsBug(`${field} must be 1-${MAX_STRING_BYTES} bytes of UTF-8`);
  }
  return bytes;
}

function claimsBug(problem: string): NadirError {
  return new NadirError('INTERNAL', `Cannot issue transaction token: ${problem}`);
}

function readShortString(buffer: Buffer, offset: number): { value: string; end: number } | undefined {
  if (offset >= buffer.length) return undefined;
  const length = buffer.readUInt8(offset);
  const end = offset + 1 + length;
  if (length === 0 || end > buffer.length) return undefined;
  const bytes = buffer.subarray(offset + 1, end);
  const value = bytes.toString('utf8');
  // toString replaces invalid UTF-8 with U+FFFD; a lossless round trip proves it was valid.
  return Buffer.from(value, 'utf8').equals(bytes) ? { value, end } : undefined;
}
