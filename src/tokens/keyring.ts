import { randomBytes } from 'node:crypto';
import { NadirError } from '../errors.js';

/** AES-256 key length. */
export const TOKEN_SECRET_BYTES = 32;

/**
 * Secret ids appear in every token (`t1.<secretId>.<...>`) so they must be URL-safe and must
 * not contain the `.` separator, nor the `:`/`,` of the config syntax.
 */
const SECRET_ID_PATTERN = /^[A-Za-z0-9_-]{1,16}$/;
const BASE64_PATTERN = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The server secrets for transaction tokens. New tokens use `current`; tokens made with any
 * secret listed in `secrets` are accepted. Rotation: add a new current secret, keep the old one
 * listed for 30 days (token lifetime), then remove it, which invalidates its remaining tokens.
 */
export interface TokenKeyring {
  current: string;
  secrets: Readonly<Record<string, Uint8Array>>;
}

export function isValidSecretId(secretId: string): boolean {
  return SECRET_ID_PATTERN.test(secretId);
}

/**
 * Parses `k1:<base64 32 bytes>,k0:<base64 32 bytes>`; the first entry is current. Accepts
 * standard or URL-safe base64. Error messages name the entry, never its secret.
 */
export function parseTokenKeyring(config: string): TokenKeyring {
  const entries = config
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (entries.length === 0) throw keyringError('no secrets given');
  const secrets: Record<string, Uint8Array> = Object.create(null);
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(':');
    const secretId = separator === -1 ? '' : entry.slice(0, separator);
    const encoded = entry.slice(separator + 1);
    if (!isValidSecretId(secretId)) {
      throw keyringError(`entry ${index + 1} must be <id>:<base64 secret> with an id of 1-16 of A-Z a-z 0-9 _ -`);
    }
    if (Object.hasOwn(secrets, secretId)) throw keyringError(`secret id ${secretId} is listed twice`);
    const secret = BASE64_PATTERN.test(encoded) ? Buffer.from(encoded, 'base64') : undefined;
    if (secret?.length !== TOKEN_SECRET_BYTES) {
      throw keyringError(`secret ${secretId} must be ${TOKEN_SECRET_BYTES} bytes encoded in base64`);
    }
    secrets[secretId] = secret;
  }
  const current = entries[0]?.slice(0, entries[0].indexOf(':')) ?? '';
  return { current, secrets };
}

/** A fresh `<secretId>:<base64>` entry, e.g. for the demo to persist on first start. */
export function generateTokenSecret(secretId = 'k1'): string {
  if (!isValidSecretId(secretId)) throw keyringError(`invalid secret id ${JSON.stringify(secretId)}`);
  return `${secretId}:${randomBytes(TOKEN_SECRET_BYTES).toString('base64')}`;
}

/** Prepends a freshly generated current secret to a keyring config string. */
export function rotateTokenKeyringConfig(config: string, newSecretId: string): string {
  const keyring = parseTokenKeyring(config);
  if (Object.hasOwn(keyring.secrets, newSecretId)) {
    throw keyringError(`secret id ${newSecretId} is already in use`);
  }
  return `${generateTokenSecret(newSecretId)},${config.trim()}`;
}

function keyringError(problem: string): NadirError {
  return new NadirError('INVALID_CONFIG', `Transaction token keyring: ${problem}`);
}
