import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { Account, AccountStore } from '../../../src/accounts/index.js';
import { testClock } from '../../support/clock.js';
import { eventually } from '../../support/eventually.js';
import { rejectsNadirError } from '../helpers.js';
import type { AccountSubject } from './subject.js';

/** API keys: issue, list, look up, revoke; lookups remembered but never past a change. */
export function apiKeyCases(subject: AccountSubject): void {
  describe('API keys', () => {
    let store: AccountStore;
    let account: Account;
    let clock: Date;

    beforeEach(async () => {
      clock = new Date('2025-01-01T00:00:00.000Z');
      store = await subject.fresh(() => clock);
      account = await store.createAccount({ name: 'Acme' });
    });

    it('issues URL-safe keys with a public prefix and high-entropy secret', async () => {
      const issued = await store.issueApiKey(account.id);
      assert.match(issued.key, /^nadir_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
      assert.equal(issued.prefix, `nadir_${issued.id}`);
      assert.ok(issued.key.startsWith(`${issued.prefix}_`));
      assert.equal(encodeURIComponent(issued.key), issued.key);
      assert.equal(issued.revoked, false);
      const other = await store.issueApiKey(account.id);
      assert.notEqual(other.key, issued.key);
      assert.notEqual(other.id, issued.id);
    });

    it('lists keys with their prefix only, never the key', async () => {
      const first = await store.issueApiKey(account.id);
      clock = new Date('2025-01-02T00:00:00.000Z');
      const second = await store.issueApiKey(account.id);
      const listed = await store.listApiKeys(account.id);
      assert.deepEqual(
        listed.map((key) => key.id),
        [first.id, second.id],
      );
      for (const key of listed) {
        assert.deepEqual(Object.keys(key).sort(), ['accountId', 'createdAt', 'id', 'prefix', 'revoked', 'revokedAt']);
        assert.ok(!JSON.stringify(key).includes(first.key.slice(first.prefix.length + 1)));
        assert.ok(!JSON.stringify(key).includes(second.key.slice(second.prefix.length + 1)));
      }
      assert.equal(listed[1]?.createdAt, '2025-01-02T00:00:00.000Z');
    });

    it('looks up the account by the presented key', async () => {
      const issued = await store.issueApiKey(account.id);
      const found = await store.lookupApiKey(issued.key);
      assert.deepEqual(found, { account, keyId: issued.id });
    });

    it('returns undefined for unknown, altered or malformed keys', async () => {
      const issued = await store.issueApiKey(account.id);
      const lastChar = issued.key.at(-1) === 'A' ? 'B' : 'A';
      const presented = [
        `${issued.key.slice(0, -1)}${lastChar}`, // right key id, wrong secret
        `nadir_000000000000_${issued.key.slice(-43)}`, // unknown key id, right secret
        issued.prefix,
        `${issued.key}x`,
        ` ${issued.key}`,
        issued.key.toUpperCase(),
        '',
        'nadir_',
        'garbage',
      ];
      for (const key of presented) {
        assert.equal(await store.lookupApiKey(key), undefined, key);
      }
      // Again with the right key verified (and cached, by its digest) first.
      assert.ok(await store.lookupApiKey(issued.key));
      for (const key of presented) {
        assert.equal(await store.lookupApiKey(key), undefined, key);
      }
    });

    it('revokes keys: lookup fails, the listing shows when, other keys keep working', async () => {
      const revoked = await store.issueApiKey(account.id);
      const kept = await store.issueApiKey(account.id);
      clock = new Date('2025-02-01T00:00:00.000Z');
      const info = await store.revokeApiKey(revoked.prefix);
      assert.equal(info.revoked, true);
      assert.equal(info.revokedAt, '2025-02-01T00:00:00.000Z');
      assert.equal(await store.lookupApiKey(revoked.key), undefined);
      assert.equal((await store.lookupApiKey(kept.key))?.keyId, kept.id);

      clock = new Date('2025-03-01T00:00:00.000Z');
      const again = await store.revokeApiKey(revoked.id);
      assert.equal(again.revokedAt, '2025-02-01T00:00:00.000Z', 'first revocation time is kept');
      const listed = await store.listApiKeys(account.id);
      assert.deepEqual(
        listed.map((key) => [key.id, key.revoked]),
        [
          [revoked.id, true],
          [kept.id, false],
        ],
      );
      assert.equal((await store.getApiKey(revoked.id))?.revoked, true);
    });

    it('reports NOT_FOUND when revoking an unknown key', async () => {
      await rejectsNadirError(store.revokeApiKey('nadir_000000000000'), 'NOT_FOUND');
      await rejectsNadirError(store.revokeApiKey('not a key id'), 'NOT_FOUND');
    });

    it("stops accepting a disabled account's keys until it is enabled again", async () => {
      const issued = await store.issueApiKey(account.id);
      await store.setDisabled(account.id, true);
      assert.equal(await store.lookupApiKey(issued.key), undefined);
      await store.setDisabled(account.id, false);
      assert.equal((await store.lookupApiKey(issued.key))?.keyId, issued.id);
    });
  });

  describe('API key lookups are remembered, but never past a change', () => {
    it('a revocation, a disabled account or a new rate limit applies to the very next lookup', async () => {
      const store = await subject.fresh(testClock().now);
      const account = await store.createAccount({ name: 'Acme' });
      const issued = await store.issueApiKey(account.id);
      assert.equal((await store.lookupApiKey(issued.key))?.account.tileRateLimit, 3000);
      await store.setTileRateLimit(account.id, 5, 60);
      assert.equal((await store.lookupApiKey(issued.key))?.account.tileRateLimit, 5);
      await store.setDisabled(account.id, true);
      assert.equal(await store.lookupApiKey(issued.key), undefined);
      await store.setDisabled(account.id, false);
      assert.ok(await store.lookupApiKey(issued.key));
      await store.revokeApiKey(issued.id);
      assert.equal(await store.lookupApiKey(issued.key), undefined);
    });

    it('lookupApiKey remembers a verified key until its account or key changes', async () => {
      const store = await subject.fresh(testClock().now);
      const account = await store.createAccount({ name: 'Acme' });
      const issued = await store.issueApiKey(account.id);
      const found = await store.lookupApiKey(issued.key);
      assert.equal(found?.account.id, account.id);
      assert.equal(await store.lookupApiKey(issued.key), found, 'the remembered answer');
      assert.equal(await store.lookupApiKey(`${issued.key.slice(0, -1)}x`), undefined, 'a wrong secret');
      await store.setTileRateLimit(account.id, 7, 60);
      assert.equal((await store.lookupApiKey(issued.key))?.account.tileRateLimit, 7, 'a change is seen at once');
      await store.revokeApiKey(issued.id);
      assert.equal(await store.lookupApiKey(issued.key), undefined, 'a revoked key');
    });

    it('knownApiKey answers at once only what lookupApiKey verified, and nothing past a change', async () => {
      const store = await subject.fresh(testClock().now);
      const account = await store.createAccount({ name: 'Acme' });
      const issued = await store.issueApiKey(account.id);
      assert.equal(store.knownApiKey(issued.key), undefined, 'never looked up: not at hand');
      const found = await store.lookupApiKey(issued.key);
      assert.equal(store.knownApiKey(issued.key), found, 'verified: at hand');
      assert.equal(store.knownApiKey(`${issued.key.slice(0, -1)}x`), undefined, 'a wrong secret');
      await store.setTileRateLimit(account.id, 7, 60);
      assert.equal(store.knownApiKey(issued.key), undefined, 'the account changed: to be looked up again');
      assert.equal((await store.lookupApiKey(issued.key))?.account.tileRateLimit, 7);
      assert.equal(store.knownApiKey(issued.key)?.account.tileRateLimit, 7);
      await store.revokeApiKey(issued.id);
      assert.equal(store.knownApiKey(issued.key), undefined, 'revoked');
    });

    it('a revocation through another server (or the CLI) is seen within 2 s', async () => {
      const server = await subject.fresh(testClock().now);
      const account = await server.createAccount({ name: 'Acme' });
      const issued = await server.issueApiKey(account.id);
      assert.ok(await server.lookupApiKey(issued.key));
      const cli = await subject.another(server, testClock().now);
      await cli.revokeApiKey(issued.id);
      await eventually('the revocation', async () => (await server.lookupApiKey(issued.key)) === undefined);
      assert.equal(server.knownApiKey(issued.key), undefined, 'nor is it at hand');
    });
  });
}
