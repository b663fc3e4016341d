import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { NadirError } from '../../src/errors.js';
import { TokenCodec, verifyImageryRequest } from '../../src/tokens/index.js';
import { rejectsNadirError } from '../accounts/helpers.js';
import { testClock } from '../support/clock.js';
import { type ApiFixture, createKey, startApi } from './helpers.js';

/**
 * The token a coverage call hands out over HTTP, checked the way the imagery endpoint will:
 * decoded by the server's TokenCodec and verified by verifyImageryRequest.
 */

const DAY = 24 * 3600 * 1000;
const AOI = { lon: -89.54170123, lat: 44.11880456, radius: 75 };

describe('transaction token from coverage', () => {
  let api: ApiFixture;
  let key: string;
  let keyId: string;
  let accountId: string;
  const clock = testClock();

  before(async () => {
    api = await startApi({ now: clock.now });
    const created = await createKey(api.services, 'acme');
    ({ key, keyId } = created);
    accountId = created.account.id;
  });
  after(() => api.close());

  async function tokenFor(apiKey = key, aoi = AOI): Promise<string> {
    const response = await api.get(
      `/staticmap/v2/coverage.json?apikey=${apiKey}&point=${aoi.lon},${aoi.lat}&radius=${aoi.radius}&resources=TrueOrtho`,
    );
    assert.equal(response.status, 200);
    return ((await response.json()) as { transactionToken: string }).transactionToken;
  }

  function verify(token: string, request: Partial<typeof AOI> = {}, now = new Date(clock.now().getTime() + 60_000)) {
    return verifyImageryRequest(api.services.tokens, api.services.accounts, { token, ...AOI, ...request }, now);
  }

  async function refused(promise: Promise<unknown>, reason: string): Promise<void> {
    const error = await rejectsNadirError(promise, 'TRANSACTION_TOKEN_INVALID');
    assert.equal(error.details.reason, reason, error.message);
  }

  it('binds the account, the key id and the exact AOI, for 30 days', async () => {
    clock.advance(1234);
    const claims = api.services.tokens.decode(await tokenFor());
    assert.equal(claims.accountId, accountId);
    assert.equal(claims.keyId, keyId);
    assert.deepEqual(claims.aoi, AOI);
    assert.equal(claims.issuedAt.toISOString(), clock.now().toISOString(), "issued on the service's clock");
    assert.equal(claims.expiresAt.getTime() - claims.issuedAt.getTime(), 30 * DAY);
  });

  it('is unique per call, URL-safe, and reveals neither the key nor the account', async () => {
    const [first, second] = [await tokenFor(), await tokenFor()];
    assert.notEqual(first, second);
    assert.notEqual(api.services.tokens.decode(first).tokenId, api.services.tokens.decode(second).tokenId);
    assert.match(first, /^[A-Za-z0-9._-]+$/);
    const body = Buffer.from(first.split('.')[2] ?? '', 'base64url');
    for (const secret of [key, keyId, accountId]) {
      assert.ok(!first.includes(secret));
      assert.equal(body.indexOf(Buffer.from(secret)), -1);
    }
  });

  it('round trips through verifyImageryRequest for the same AOI or a smaller radius', async () => {
    const token = await tokenFor();
    const verified = await verify(token);
    assert.equal(verified.accountId, accountId);
    assert.equal(verified.keyId, keyId);
    await verify(token, { radius: 10 });
    // decisions.md: the point must match within 1e-7 degrees.
    await verify(token, { lon: AOI.lon + 5e-8, lat: AOI.lat - 5e-8 });
  });

  it('refuses another AOI: a moved point or a larger radius', async () => {
    const token = await tokenFor();
    await refused(verify(token, { lon: AOI.lon + 1e-6 }), 'aoi_mismatch');
    await refused(verify(token, { lat: AOI.lat - 0.001 }), 'aoi_mismatch');
    await refused(verify(token, { radius: 75.5 }), 'aoi_mismatch');
    await refused(verify(token, { radius: Number.NaN }), 'aoi_mismatch');
  });

  it('expires 30 days after the coverage call', async () => {
    const token = await tokenFor();
    const issued = api.services.tokens.decode(token).issuedAt.getTime();
    await verify(token, {}, new Date(issued + 30 * DAY - 1000));
    await refused(verify(token, {}, new Date(issued + 30 * DAY)), 'expired');
  });

  it('refuses every single-character change, truncation and extension', async () => {
    const token = await tokenFor();
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    for (let i = 0; i < token.length; i++) {
      const replacement = alphabet[(alphabet.indexOf(token[i] ?? 'A') + 1 + (i % 7)) % alphabet.length];
      const changed = `${token.slice(0, i)}${replacement}${token.slice(i + 1)}`;
      assert.notEqual(changed, token);
      assert.throws(() => api.services.tokens.decode(changed), isInvalidToken, `position ${i}`);
    }
    for (const broken of [token.slice(0, -1), `${token}A`, `${token}.`, token.toUpperCase(), '', 'null']) {
      assert.throws(() => api.services.tokens.decode(broken), isInvalidToken);
    }
  });

  it('refuses a token made with another server secret', async () => {
    const stranger = new TokenCodec({ current: 'k1', secrets: { k1: randomBytes(32) } }, { now: testClock().now });
    const forged = stranger.issue({ accountId, keyId, aoi: AOI }).token;
    await refused(verify(forged), 'tampered');
  });

  it('stops working when its key is revoked or the subscription is cancelled', async () => {
    const other = await createKey(api.services, 'acme-2');
    const revokedToken = await tokenFor(other.key);
    await api.services.accounts.revokeApiKey(other.keyId);
    await refused(verify(revokedToken), 'key_revoked');

    const third = await createKey(api.services, 'acme-3');
    const cancelledToken = await tokenFor(third.key);
    await verify(cancelledToken);
    await api.services.accounts.setRasterSubscription(third.account.id, false);
    await refused(verify(cancelledToken), 'subscription_cancelled');
  });
});

function isInvalidToken(error: unknown): boolean {
  return error instanceof NadirError && error.code === 'TRANSACTION_TOKEN_INVALID';
}
