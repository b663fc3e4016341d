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

/** The most bytes encodeClaimsInto writes. */
export const MAX_CLAIMS_BYTES = FIXED_BYTES + 2 * (1 + MAX_STRING_BYTES);

/**
 * Writes the claims' plaintext at the start of `target` (MAX_CLAIMS_BYTES at least) and returns
 * its length: the token codec keeps one buffer for every token it issues. Throws INTERNAL for
 * claims our own code should never produce (they could not be decoded).
 */
export function encodeClaimsInto(claims: TransactionClaims, target: Buffer): number {
  if (!TOKEN_ID_PATTERN.test(claims.tokenId)) throw claimsBug('tokenId must be 32 hex characters');
  const numbers = [
    claims.issuedAt.getTime(),
    claims.expiresAt.getTime(),
    claims.aoi.lon,
    claims.aoi.lat,
    claims.aoi.radius,
  ];
  if (!numbers.every(Number.isFinite)) throw claimsBug('times and AOI must be finite numbers');
  if (target.length < MAX_CLAIMS_BYTES) throw claimsBug(`the buffer must hold ${MAX_CLAIMS_BYTES} bytes`);
  let offset = target.writeUInt8(CLAIMS_VERSION, 0);
  offset += target.write(claims.tokenId, offset, 'hex');
  for (const value of numbers) offset = target.writeDoubleBE(value, offset);
  offset = writeShortString(target, offset, claims.accountId, 'accountId');
  return writeShortString(target, offset, claims.keyId, 'keyId');
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

/** A length byte and the UTF-8 bytes of `value`, at `offset`; the offset after them. */
function writeShortString(target: Buffer, offset: number, value: string, field: string): number {
  const length = Buffer.byteLength(value, 'utf8');
  if (length === 0 || length > MAX_STRING_BYTES) {
    throw claimsBug(`${field} must be 1-${MAX_STRING_BYTES} bytes of UTF-8`);
  }
  target.writeUInt8(length, offset);
  return offset + 1 + target.write(value, offset + 1, 'utf8');
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
