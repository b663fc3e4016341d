/**
 * What every account store does the same whatever its engine: how a new account is checked and
 * filled in, how a key is issued, which key opens which account, and how verified keys are
 * remembered between requests. The stores only read and write their rows (account-rows.ts).
 */
import { randomUUID } from 'node:crypto';
import { LruCache } from '../cache/lru.js';
import type { Clock } from '../clock.js';
import { NadirError } from '../errors.js';
import { type AccountRow, type ApiKeyRow, accountFromRow } from './account-rows.js';
import { apiKeyDigest, apiKeyMatchesHash, type GeneratedApiKey, generateApiKey, keyIdOfApiKey } from './api-key.js';
import type { Account, ApiKeyLookup, IssuedApiKey, NewAccount } from './types.js';
import {
  DEFAULT_MONTHLY_ALLOWANCE,
  DEFAULT_TILE_RATE_INTERVAL_SECONDS,
  DEFAULT_TILE_RATE_LIMIT,
  validAccountName,
  validAllowance,
  validFlag,
  validRateLimit,
} from './validation.js';

/** Verified keys remembered between requests (tile clients send thousands a minute). */
const KEY_CACHE_ENTRIES = 10_000;

/** A 48-bit key id collides with odds ~n²/2⁴⁹; retrying a couple of times makes it moot. */
const KEY_ID_ATTEMPTS = 3;

/** The account `input` asks for, checked, with the defaults filled in: what a store inserts. */
export function newAccount(input: NewAccount, now: Clock): Account {
  const name = validAccountName(input.name);
  const monthlyAllowance = validAllowance(input.monthlyAllowance ?? DEFAULT_MONTHLY_ALLOWANCE);
  const [tileRateLimit, tileRateInterval] = validRateLimit(
    input.tileRateLimit ?? DEFAULT_TILE_RATE_LIMIT,
    input.tileRateInterval ?? DEFAULT_TILE_RATE_INTERVAL_SECONDS,
  );
  return {
    id: randomUUID(),
    name,
    rasterSubscription: validFlag('rasterSubscription', input.rasterSubscription ?? false),
    monthlyAllowance,
    tileRateLimit,
    tileRateInterval,
    createdAt: now().toISOString(),
    disabled: false,
  };
}

/**
 * A new key for `accountId`: `insert` stores the generated key's hash under its id and answers
 * whether it did (false when the id is taken, and another key is drawn).
 */
export async function issueKey(
  accountId: string,
  createdAt: string,
  insert: (generated: GeneratedApiKey) => boolean | Promise<boolean>,
): Promise<IssuedApiKey> {
  for (let attempt = 0; attempt < KEY_ID_ATTEMPTS; attempt++) {
    const generated = generateApiKey();
    if (await insert(generated)) {
      const { keyId: id, prefix, key } = generated;
      return { id, accountId, prefix, createdAt, revokedAt: null, revoked: false, key };
    }
  }
  throw new NadirError('INTERNAL', 'Could not allocate a unique API key id');
}

/**
 * Whether `row` (found by the presented key's id) holds `presentedKey` and is not revoked. The
 * hash is compared even for revoked keys so the answer's timing says nothing about them.
 */
export function isLiveKey<Row extends ApiKeyRow>(presentedKey: string, row: Row | undefined): row is Row {
  return row !== undefined && apiKeyMatchesHash(presentedKey, row.key_hash) && !row.revoked_at;
}

/** What a live key `keyId` of the account in `row` opens: nothing if the account is gone or disabled. */
export function keyLookup(keyId: string, row: AccountRow | null | undefined): ApiKeyLookup | undefined {
  const account = row ? accountFromRow(row) : undefined;
  if (!account || account.disabled) return undefined;
  return { account, keyId };
}

/**
 * Successful key lookups, each valid while the marker it was made under stands: a store's count
 * of changes to accounts and keys, so a revocation or a disabled account takes effect on the very
 * next request. Keyed by the key's digest, not the key (api-key.ts says why).
 */
export class VerifiedKeyCache {
  readonly #entries = new LruCache<{ lookup: ApiKeyLookup; marker: string }>({ maxEntries: KEY_CACHE_ENTRIES });

  /**
   * `presentedKey`'s lookup: the remembered one if it was made under `marker` (read before the
   * store's rows), else `find`'s for the key's id, remembered if it found an account.
   */
  async lookup(
    presentedKey: string,
    marker: string,
    find: (keyId: string) => ApiKeyLookup | undefined | Promise<ApiKeyLookup | undefined>,
  ): Promise<ApiKeyLookup | undefined> {
    const digest = apiKeyDigest(presentedKey);
    const cached = this.#known(digest, marker);
    if (cached) return cached;
    const keyId = keyIdOfApiKey(presentedKey);
    if (keyId === undefined) return undefined;
    const found = await find(keyId);
    if (found) this.#entries.set(digest, { lookup: found, marker });
    return found;
  }

  /** `presentedKey`'s remembered lookup if it was made under `marker`; undefined: ask `lookup`. */
  known(presentedKey: string, marker: string): ApiKeyLookup | undefined {
    return this.#known(apiKeyDigest(presentedKey), marker);
  }

  #known(digest: string, marker: string): ApiKeyLookup | undefined {
    const cached = this.#entries.get(digest);
    return cached?.marker === marker ? cached.lookup : undefined;
  }
}
