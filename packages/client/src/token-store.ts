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
  return `${baseUrl} key:${await keyFingerprint(apiKey)} point:${aoi.point.lon},${aoi.point.lat}`;
}

/**
 * 16 hex digits of SHA-256 of the key. Browsers offer SubtleCrypto only in secure contexts (https,
 * localhost); a page on plain http elsewhere gets FNV-1a instead, which is enough to tell keys
 * apart in a store that lives in that page's memory.
 */
async function keyFingerprint(apiKey: string): Promise<string> {
  const bytes = new TextEncoder().encode(apiKey);
  const subtle = globalThis.crypto?.subtle;
  if (subtle) return hex(await subtle.digest('SHA-256', bytes)).slice(0, 16);
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash.toString(16).padStart(16, '0');
}

/** Whether a stored token serves this AOI at this time. */
export function tokenServes(stored: StoredToken | undefined, radius: number, now: number): stored is StoredToken {
  return stored !== undefined && stored.radius >= radius && now < stored.expiresAt - TOKEN_EXPIRY_MARGIN_MS;
}

/**
 * Tokens held back from the stores behind until `commit()`: nadir-client commits once it is about
 * to fetch imagery, so a coverage call that found nothing leaves no token file behind. A token is
 * looked up in the held ones, then in each store in order; once committed, every new token is
 * written through at once (a token about to be billed must outlive a killed process).
 */
export class HeldTokenStore implements TokenStore {
  readonly #held = new Map<string, StoredToken>();
  #committed = false;

  constructor(private readonly stores: readonly TokenStore[]) {}

  async get(scope: string): Promise<StoredToken | undefined> {
    const held = this.#held.get(scope);
    if (held) return held;
    for (const store of this.stores) {
      const found = await store.get(scope);
      if (found) return found;
    }
    return undefined;
  }

  async set(scope: string, token: StoredToken): Promise<void> {
    if (!this.#committed) this.#held.set(scope, token);
    else for (const store of this.stores) await store.set(scope, token);
  }

  async delete(scope: string): Promise<void> {
    this.#held.delete(scope);
    for (const store of this.stores) await store.delete(scope);
  }

  /** Writes the held tokens to every store, and every later one as it comes. */
  async commit(): Promise<void> {
    this.#committed = true;
    for (const [scope, token] of this.#held) for (const store of this.stores) await store.set(scope, token);
    this.#held.clear();
  }
}
