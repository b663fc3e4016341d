import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { testClock } from '../support/clock.js';

/** `nadir accounts ...` end to end: a real CLI process per call, on a temp data dir. */

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const API_KEY = /^nadir_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

describe('nadir accounts', () => {
  let dataDir: string;

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'nadir-cli-accounts-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  async function nadir(...args: string[]): Promise<Result> {
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        ['--import', 'tsx', 'src/cli/bin.ts', 'accounts', ...args],
        {
          cwd: ROOT,
          env: { ...process.env, NADIR_DATA_DIR: dataDir },
        },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  async function json<T>(...args: string[]): Promise<T> {
    const result = await nadir(...args, '--json');
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as T;
  }

  /** The same store the CLI writes, opened from the test to check effects and record usage. */
  async function withServices<T>(work: (services: Services) => Promise<T>): Promise<T> {
    const services = await createServices(parseConfig({ NADIR_DATA_DIR: dataDir }, dataDir), testClock().now);
    try {
      return await work(services);
    } finally {
      await services.close();
    }
  }

  let accountId: string;
  let firstKey: string;

  it('create --json prints exactly the account id and its API key', async () => {
    const created = await json<Record<string, string>>(
      'create',
      '--name',
      'acme',
      '--raster',
      '--allowance',
      '1000',
      '--rate-limit',
      '3000',
    );
    assert.deepEqual(Object.keys(created).sort(), ['accountId', 'apiKey']);
    accountId = created.accountId as string;
    firstKey = created.apiKey as string;
    assert.match(firstKey, API_KEY);
    await withServices(async ({ accounts }) => {
      const found = await accounts.lookupApiKey(firstKey);
      assert.equal(found?.account.id, accountId);
      assert.equal(found?.account.rasterSubscription, true);
      assert.equal(found?.account.monthlyAllowance, 1000);
      assert.equal(found?.account.tileRateLimit, 3000);
    });
  });

  it('refuses a second account of the same name (exit 1) and a create without --name (exit 2)', async () => {
    const duplicate = await nadir('create', '--name', 'ACME');
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.stderr, /already exists/);
    assert.equal((await nadir('create')).code, 2);
  });

  it('list, issue-key and keys, by name or by id; keys show prefixes only', async () => {
    const { accounts } = await json<{ accounts: Array<{ id: string; name: string }> }>('list');
    assert.deepEqual(
      accounts.map((a) => a.name),
      ['acme'],
    );
    const issued = await json<{ accountId: string; apiKey: string; prefix: string }>('issue-key', 'acme');
    assert.equal(issued.accountId, accountId);
    assert.match(issued.apiKey, API_KEY);
    const listed = await json<{ accountId: string; keys: Array<Record<string, unknown>> }>(
      'keys',
      '--account',
      accountId,
    );
    assert.equal(listed.keys.length, 2);
    assert.equal(listed.keys[1]?.prefix, issued.prefix);
    const text = JSON.stringify(listed);
    assert.ok(!text.includes(firstKey) && !text.includes(issued.apiKey), 'no key, only prefixes');
    assert.ok(!/hash/i.test(text));
  });

  it('revoke-key revokes by prefix; the key stops working', async () => {
    const prefix = firstKey.split('_').slice(0, 2).join('_');
    const revoked = await json<{ revoked: boolean; prefix: string }>('revoke-key', prefix);
    assert.equal(revoked.revoked, true);
    assert.equal(revoked.prefix, prefix);
    await withServices(async ({ accounts }) => assert.equal(await accounts.lookupApiKey(firstKey), undefined));
  });

  it('subscription, allowance and rate-limit change the account', async () => {
    assert.equal(
      (await json<{ rasterSubscription: boolean }>('subscription', 'acme', 'off')).rasterSubscription,
      false,
    );
    assert.equal((await json<{ rasterSubscription: boolean }>('subscription', 'acme', 'on')).rasterSubscription, true);
    assert.equal((await json<{ monthlyAllowance: number }>('allowance', accountId, '5')).monthlyAllowance, 5);
    const limited = await json<{ tileRateLimit: number; tileRateInterval: number }>(
      'rate-limit',
      'acme',
      '10',
      '--interval',
      '30',
    );
    assert.deepEqual([limited.tileRateLimit, limited.tileRateInterval], [10, 30]);
  });

  it('usage --account <id> --json prints transactions and tiles per month', async () => {
    await withServices(async ({ accounts }) => {
      await accounts.recordTransaction('a'.repeat(32), accountId, '2026-11', 5);
      await accounts.addTiles(accountId, '2026-11', 1200);
      await accounts.addTiles(accountId, '2026-10', 7);
    });
    const usage = await json<unknown>('usage', '--account', accountId);
    assert.deepEqual(usage, {
      accountId,
      months: [
        { month: '2026-10', transactions: 0, tiles: 7 },
        { month: '2026-11', transactions: 1, tiles: 1200 },
      ],
    });
  });

  it('exit 1 for an unknown account, 2 for usage mistakes, 0 for --help', async () => {
    const unknown = await nadir('usage', 'nobody');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No account/);
    assert.equal((await nadir('allowance', 'acme', 'lots')).code, 2);
    assert.equal((await nadir('subscription', 'acme', 'maybe')).code, 2);
    assert.equal((await nadir('frobnicate')).code, 2);
    assert.equal((await nadir('list', '--raster')).code, 2);
    const help = await nadir('--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /nadir accounts usage/);
  });
});
