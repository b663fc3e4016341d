import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { type Account, type IssuedApiKey, SqliteAccountStore } from '../../src/accounts/index.js';
import {
  billImageRetrieval,
  checkAllowance,
  TokenCodec,
  type VerifiedImageryAccess,
  verifyImageryRequest,
} from '../../src/tokens/index.js';
import { rejectsNadirError } from '../accounts/helpers.js';
import { testClock } from '../support/clock.js';

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const ISSUED_AT = new Date('2025-05-20T08:00:00.000Z');
const AOI = { lon: 151.2092955, lat: -33.8688197, radius: 80 };

describe('verifyImageryRequest', () => {
  let store: SqliteAccountStore;
  let codec: TokenCodec;
  let account: Account;
  let apiKey: IssuedApiKey;
  let token: string;

  beforeEach(async () => {
    store = SqliteAccountStore.open(':memory:', { now: testClock().now });
    codec = new TokenCodec({ current: 'k1', secrets: { k1: randomBytes(32) } }, { now: () => ISSUED_AT });
    account = await store.createAccount({ name: 'Acme', rasterSubscription: true, monthlyAllowance: 1 });
    apiKey = await store.issueApiKey(account.id);
    token = codec.issue({ accountId: account.id, keyId: apiKey.id, aoi: AOI }).token;
  });
  afterEach(async () => {
    await store.close();
  });

  function verify(
    request: Partial<{ token: string; lon: number; lat: number; radius: number }> = {},
    now = new Date(ISSUED_AT.getTime() + HOUR),
  ): Promise<VerifiedImageryAccess> {
    return verifyImageryRequest(codec, store, { token, ...AOI, ...request }, now);
  }

  async function refused(promise: Promise<unknown>, reason: string, message: RegExp): Promise<void> {
    const error = await rejectsNadirError(promise, 'TRANSACTION_TOKEN_INVALID');
    assert.equal(error.details.reason, reason);
    assert.match(error.message, message);
  }

  it('returns the account, key, token id and AOI of a valid request', async () => {
    const verified = await verify();
    assert.equal(verified.accountId, account.id);
    assert.equal(verified.keyId, apiKey.id);
    assert.match(verified.tokenId, /^[0-9a-f]{32}$/);
    assert.deepEqual(verified.aoi, AOI);
  });

  it('expires 30 days after issue', async () => {
    await verify({}, new Date(ISSUED_AT.getTime() + 29 * DAY + 23 * HOUR));
    await verify({}, new Date(ISSUED_AT.getTime() + 30 * DAY - 1));
    await refused(verify({}, new Date(ISSUED_AT.getTime() + 30 * DAY)), 'expired', /expired/);
    await refused(verify({}, new Date(ISSUED_AT.getTime() + 30 * DAY + 1000)), 'expired', /expired/);
  });

  it('requires the same point within 1e-7 degrees', async () => {
    await verify({ lon: AOI.lon + 5e-8 });
    await verify({ lat: AOI.lat - 5e-8 });
    await verify({ lon: AOI.lon - 5e-8, lat: AOI.lat + 5e-8 });
    for (const moved of [
      { lon: AOI.lon + 2e-7 },
      { lon: AOI.lon - 2e-7 },
      { lat: AOI.lat + 2e-7 },
      { lat: AOI.lat - 2e-7 },
      { lon: AOI.lat, lat: AOI.lon },
      { lon: Number.NaN },
    ]) {
      await refused(verify(moved), 'aoi_mismatch', /issued for another area/);
    }
  });

  it('accepts a radius up to the token radius, not beyond', async () => {
    await verify({ radius: AOI.radius });
    await verify({ radius: 1 });
    await refused(verify({ radius: AOI.radius + 0.001 }), 'aoi_mismatch', /issued for another area/);
    await refused(verify({ radius: 100 }), 'aoi_mismatch', /another area/);
  });

  it('refuses tokens whose API key was revoked', async () => {
    await store.revokeApiKey(apiKey.id);
    await refused(verify(), 'key_revoked', /revoked/);
  });

  it('refuses a token whose key belongs to another account', async () => {
    const other = await store.createAccount({ name: 'Other', rasterSubscription: true });
    const otherKey = await store.issueApiKey(other.id);
    token = codec.issue({ accountId: account.id, keyId: otherKey.id, aoi: AOI }).token;
    await refused(verify(), 'key_revoked', /API key/);
  });

  it('refuses tokens once the raster subscription is cancelled', async () => {
    await store.setRasterSubscription(account.id, false);
    await refused(verify(), 'subscription_cancelled', /subscription was cancelled/);
  });

  it('refuses tokens of a disabled account', async () => {
    await store.setDisabled(account.id, true);
    await refused(verify(), 'account_disabled', /disabled/);
  });

  it('refuses malformed and tampered tokens with TRANSACTION_TOKEN_INVALID', async () => {
    await refused(verify({ token: '' }), 'malformed', /malformed/);
    const middle = Math.floor(token.length * 0.75);
    const changed = token[middle] === 'A' ? 'B' : 'A';
    const tampered = token.slice(0, middle) + changed + token.slice(middle + 1);
    await refused(verify({ token: tampered }), 'tampered', /altered/);
  });
});

describe('allowance check and billing', () => {
  const NOW = new Date('2025-06-30T23:59:00.000Z');
  let store: SqliteAccountStore;
  let account: Account;

  beforeEach(async () => {
    store = SqliteAccountStore.open(':memory:', { now: testClock().now });
    account = await store.createAccount({ name: 'Acme', rasterSubscription: true, monthlyAllowance: 1 });
  });
  afterEach(async () => {
    await store.close();
  });

  function access(tokenId: string): VerifiedImageryAccess {
    return { accountId: account.id, keyId: '000000000000', tokenId, aoi: AOI, allowance: account.monthlyAllowance };
  }

  it('bills the first retrieval in the month of that retrieval, later ones free', async () => {
    await checkAllowance(store, access('a'.repeat(32)), NOW);
    assert.deepEqual(await billImageRetrieval(store, access('a'.repeat(32)), NOW), {
      billed: true,
      exceeded: false,
    });
    assert.deepEqual((await store.usage(account.id)).months, [{ month: '2025-06', transactions: 1, tiles: 0 }]);
    const later = new Date('2025-07-02T00:00:00.000Z');
    await checkAllowance(store, access('a'.repeat(32)), later);
    assert.deepEqual(await billImageRetrieval(store, access('a'.repeat(32)), later), {
      billed: false,
      exceeded: false,
    });
  });

  it('refuses a new token before rendering and at billing once the month is used up', async () => {
    await billImageRetrieval(store, access('a'.repeat(32)), NOW);
    const error = await rejectsNadirError(checkAllowance(store, access('b'.repeat(32)), NOW), 'ALLOWANCE_EXCEEDED');
    assert.match(error.message, /2025-06/);
    await rejectsNadirError(billImageRetrieval(store, access('b'.repeat(32)), NOW), 'ALLOWANCE_EXCEEDED');
    assert.equal(await store.isTokenBilled('b'.repeat(32)), false);
    assert.equal((await store.monthUsage(account.id, '2025-06')).transactions, 1);

    // The next month has room again.
    const nextMonth = new Date('2025-07-01T00:00:00.000Z');
    await checkAllowance(store, access('b'.repeat(32)), nextMonth);
    assert.equal((await billImageRetrieval(store, access('b'.repeat(32)), nextMonth)).billed, true);
  });

  it('bills concurrent first retrievals with one token once', async () => {
    await store.setMonthlyAllowance(account.id, 5);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => billImageRetrieval(store, access('c'.repeat(32)), NOW)),
    );
    assert.equal(results.filter((result) => result.billed).length, 1);
    assert.equal((await store.monthUsage(account.id, '2025-06')).transactions, 1);
  });
});
