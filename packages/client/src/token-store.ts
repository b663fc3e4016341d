/**
 * Where transaction tokens are kept between calls. A token authorises imagery for one AOI for 30
 * days and the first image with it is billed once (docs/api.md "The transaction token"); reusing
 * it instead of calling coverage again is what keeps a resumed or repeated download from being
 * billed again. The store is pluggable: memory here (and the browser), a file for the CLI
 * (node/file-token-store.ts), anything else behind the same three methods.
 */
import type { Aoi } from './area.js';

export interface StoredToken {
  token: string;
  /** The AOI the token was issued for: it serves this point with any radius up to this one. */
  radius: number;
  /** Unix ms after which the client stops using it. */
  expiresAt: number;
}

export interface TokenStore {
  get(scope: string): Promise<StoredToken | undefined>;
  set(scope: string, token: StoredToken): Promise<void>;
  delete(scope: string): Promise<void>;
}

/** Tokens live 30 days from the coverage call. */
export const TOKEN_LIFETIME_MS = 30 * 24 * 3600 * 1000;
/** Stop using a token this long before it expires, so a download started now does not fail midway. */
export const TOKEN_EXPIRY_MARGIN_MS = 3600 * 1000;

export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, StoredToken>();
  async get(scope: string) {
    return this.#tokens.get(scope);
  }
  async set(scope: string, token: StoredToken) {
    this.#tokens.set(scope, token);
  }
  async delete(scope: string) {
    this.#tokens.delete(scope);
  }
}

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The store key of a token: server, key and AOI centre. The key enters as a SHA-256 prefix so a
 * token file never holds it; the radius is not in it because a token serves any smaller radius.
 */
export async function tokenScope(baseUrl: string, apiKey: string, aoi: Aoi): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(apiKey));
  return `${baseUrl} key:${hex(digest).slice(0, 16)} point:${aoi.point.lon},${aoi.point.lat}`;
}

/** Whether a stored token serves this AOI at this time. */
export function tokenServes(stored: StoredToken | undefined, radius: number, now: number): stored is StoredToken {
  return stored !== undefined && stored.radius >= radius && now < stored.expiresAt - TOKEN_EXPIRY_MARGIN_MS;
}
