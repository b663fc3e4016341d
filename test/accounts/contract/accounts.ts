import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { AccountStore } from '../../../src/accounts/index.js';
import { rejectsNadirError } from '../helpers.js';
import type { AccountSubject } from './subject.js';

const FIXED_NOW = new Date('2025-03-14T09:26:53.000Z');

/** Accounts: creation, names, settings. */
export function accountCases(subject: AccountSubject): void {
  describe('accounts', () => {
    let store: AccountStore;

    beforeEach(async () => {
      store = await subject.fresh(() => FIXED_NOW);
    });

    it('creates an account with the documented defaults', async () => {
      const account = await store.createAccount({ name: '  Acme Surveys  ' });
      assert.match(account.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.deepEqual(
        { ...account, id: 'x' },
        {
          id: 'x',
          name: 'Acme Surveys',
          rasterSubscription: false,
          monthlyAllowance: 0,
          tileRateLimit: 3000,
          tileRateInterval: 60,
          createdAt: FIXED_NOW.toISOString(),
          disabled: false,
        },
      );
      assert.deepEqual(await store.getAccount(account.id), account);
    });

    it('accepts explicit settings at creation', async () => {
      const account = await store.createAccount({
        name: 'Beta',
        rasterSubscription: true,
        monthlyAllowance: 500,
        tileRateLimit: 10,
        tileRateInterval: 1,
      });
      assert.equal(account.rasterSubscription, true);
      assert.equal(account.monthlyAllowance, 500);
      assert.equal(account.tileRateLimit, 10);
      assert.equal(account.tileRateInterval, 1);
    });

    it('keeps names unique regardless of case', async () => {
      await store.createAccount({ name: 'Acme' });
      const error = await rejectsNadirError(store.createAccount({ name: 'ACME' }), 'INVALID_PARAMETER');
      assert.match(error.message, /already exists/);
      assert.equal((await store.listAccounts()).length, 1);
    });

    it('rejects bad names and settings with INVALID_PARAMETER', async () => {
      await rejectsNadirError(store.createAccount({ name: '   ' }), 'INVALID_PARAMETER');
      await rejectsNadirError(store.createAccount({ name: 'a', monthlyAllowance: -1 }), 'INVALID_PARAMETER');
      await rejectsNadirError(store.createAccount({ name: 'a', monthlyAllowance: 1.5 }), 'INVALID_PARAMETER');
      await rejectsNadirError(store.createAccount({ name: 'a', tileRateLimit: 0 }), 'INVALID_PARAMETER');
      await rejectsNadirError(store.createAccount({ name: 'a', tileRateInterval: Number.NaN }), 'INVALID_PARAMETER');
      assert.deepEqual(await store.listAccounts(), []);
    });

    it('finds accounts by name (case-insensitive) and lists them by name', async () => {
      const zulu = await store.createAccount({ name: 'Zulu' });
      const alpha = await store.createAccount({ name: 'alpha' });
      assert.deepEqual(await store.getAccountByName('ZULU'), zulu);
      assert.equal(await store.getAccountByName('nobody'), undefined);
      assert.equal(await store.getAccount('00000000-0000-4000-8000-000000000000'), undefined);
      assert.deepEqual(
        (await store.listAccounts()).map((account) => account.id),
        [alpha.id, zulu.id],
      );
    });

    it('updates subscription, allowance, rate limit and disabled flag', async () => {
      const { id } = await store.createAccount({ name: 'Acme' });
      assert.equal((await store.setRasterSubscription(id, true)).rasterSubscription, true);
      assert.equal((await store.getAccount(id))?.rasterSubscription, true);
      assert.equal((await store.setRasterSubscription(id, false)).rasterSubscription, false);

      assert.equal((await store.setMonthlyAllowance(id, 1200)).monthlyAllowance, 1200);
      assert.equal((await store.setMonthlyAllowance(id, 0)).monthlyAllowance, 0);
      await rejectsNadirError(store.setMonthlyAllowance(id, -5), 'INVALID_PARAMETER');

      const limited = await store.setTileRateLimit(id, 100, 10);
      assert.equal(limited.tileRateLimit, 100);
      assert.equal(limited.tileRateInterval, 10);
      await rejectsNadirError(store.setTileRateLimit(id, 100, 0), 'INVALID_PARAMETER');
      assert.equal((await store.getAccount(id))?.tileRateInterval, 10);

      assert.equal((await store.setDisabled(id, true)).disabled, true);
      assert.equal((await store.setDisabled(id, false)).disabled, false);
    });

    it('reports ACCOUNT_NOT_FOUND for updates of unknown accounts', async () => {
      const missing = '00000000-0000-4000-8000-000000000000';
      await rejectsNadirError(store.setRasterSubscription(missing, true), 'ACCOUNT_NOT_FOUND');
      await rejectsNadirError(store.setMonthlyAllowance(missing, 1), 'ACCOUNT_NOT_FOUND');
      await rejectsNadirError(store.setTileRateLimit(missing, 1, 1), 'ACCOUNT_NOT_FOUND');
      await rejectsNadirError(store.issueApiKey(missing), 'ACCOUNT_NOT_FOUND');
      await rejectsNadirError(store.listApiKeys(missing), 'ACCOUNT_NOT_FOUND');
      await rejectsNadirError(store.usage(missing), 'ACCOUNT_NOT_FOUND');
    });
  });
}
