/** The SQLite account store's own promises: its file, its handle, and what it keeps of a key. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqliteAccountStore } from '../../src/accounts/index.js';
import { openSqlite } from '../../src/db/sqlite.js';
import { testClock } from '../support/clock.js';
import { makeTempDir } from './helpers.js';

describe('SqliteAccountStore persistence', () => {
  it('keeps accounts across reopen and shares a database it does not own', async () => {
    const temp = makeTempDir();
    try {
      const path = join(temp.dir, 'nadir.db');
      const first = SqliteAccountStore.open(path, { now: testClock().now });
      const account = await first.createAccount({ name: 'Acme', monthlyAllowance: 7 });
      await first.close();

      const shared = openSqlite(path);
      const second = new SqliteAccountStore(shared, { now: testClock().now });
      assert.deepEqual(await second.getAccount(account.id), account);
      await second.close();
      // close() of a store built on a shared handle leaves the handle open for its owner.
      assert.equal(shared.open, true);
      shared.close();
    } finally {
      temp.cleanup();
    }
  });
});

describe('API key storage', () => {
  it('stores only a hash: the key and its secret part appear nowhere in the database files', async () => {
    const temp = makeTempDir();
    try {
      const path = join(temp.dir, 'accounts.db');
      const store = SqliteAccountStore.open(path, { now: testClock().now });
      const account = await store.createAccount({ name: 'Acme' });
      const keys = [await store.issueApiKey(account.id), await store.issueApiKey(account.id)];
      await store.revokeApiKey(keys[0]?.id ?? '');

      // Inspect while open too, so WAL contents are covered before the close checkpoint.
      const filesWhileOpen = readDatabaseFiles(path);
      await store.close();
      const filesAfterClose = readDatabaseFiles(path);

      let sawHash = false;
      for (const { key, prefix } of keys) {
        const secret = key.slice(prefix.length + 1);
        const hash = createHash('sha256').update(key).digest();
        for (const bytes of [filesWhileOpen, filesAfterClose]) {
          assert.equal(bytes.indexOf(key), -1, 'full key found in database files');
          assert.equal(bytes.indexOf(secret), -1, 'key secret found in database files');
          assert.equal(bytes.indexOf(Buffer.from(secret, 'base64url')), -1, 'decoded secret found');
        }
        sawHash ||= filesAfterClose.indexOf(hash) !== -1;
      }
      assert.ok(sawHash, 'the SHA-256 of the key is what is stored');

      const reopened = SqliteAccountStore.open(path, { now: testClock().now });
      assert.equal((await reopened.lookupApiKey(keys[1]?.key ?? ''))?.account.id, account.id);
      assert.equal(await reopened.lookupApiKey(keys[0]?.key ?? ''), undefined);
      await reopened.close();
    } finally {
      temp.cleanup();
    }
  });
});

function readDatabaseFiles(path: string): Buffer {
  const files = [path, `${path}-wal`, `${path}-shm`].filter((file) => existsSync(file));
  return Buffer.concat(files.map((file) => readFileSync(file)));
}
