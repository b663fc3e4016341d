import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteAccountStore } from '../../src/accounts/index.js';
import { testClock } from '../support/clock.js';
import { makeTempDir } from './helpers.js';

const WORKER = fileURLToPath(new URL('./fixtures/billing-worker.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKERS = 4;
const MONTH = '2025-06';

interface WorkerTotals {
  billed: number;
  exceeded: number;
}

/**
 * Starts every worker, waits until all have opened the database, then releases them together
 * so their transactions genuinely interleave on the shared file.
 */
async function runWorkers(argsPerWorker: string[][]): Promise<WorkerTotals[]> {
  const workers = argsPerWorker.map((args) =>
    spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { cwd: REPO_ROOT }),
  );
  const outputs = workers.map(collectOutput);
  await Promise.all(workers.map((worker, index) => waitForReady(worker, outputs[index] as Output)));
  for (const worker of workers) worker.stdin.write('go\n');
  return Promise.all(
    workers.map(async (worker, index) => {
      const [code] = await once(worker, 'exit');
      const output = outputs[index] as Output;
      assert.equal(code, 0, `worker ${index} failed: ${output.stderr}`);
      const lastLine = output.stdout.trim().split('\n').at(-1) ?? '';
      return JSON.parse(lastLine) as WorkerTotals;
    }),
  );
}

interface Output {
  stdout: string;
  stderr: string;
}

function collectOutput(worker: ChildProcessWithoutNullStreams): Output {
  const output: Output = { stdout: '', stderr: '' };
  worker.stdout.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  worker.stderr.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  return output;
}

async function waitForReady(worker: ChildProcessWithoutNullStreams, output: Output): Promise<void> {
  while (!output.stdout.includes('ready\n')) {
    if (worker.exitCode !== null) assert.fail(`worker exited early: ${output.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('billing across processes sharing one database file', { timeout: 120_000 }, () => {
  it('counts one token exactly once when 4 processes race on it', async () => {
    const temp = makeTempDir();
    try {
      const path = join(temp.dir, 'shared.db');
      const store = SqliteAccountStore.open(path, { now: testClock().now });
      const account = await store.createAccount({ name: 'Acme', monthlyAllowance: 100 });
      const args = [path, account.id, MONTH, '100', 'the-token', '25'];
      const totals = await runWorkers(Array.from({ length: WORKERS }, () => args));

      assert.equal(
        totals.reduce((sum, total) => sum + total.billed, 0),
        1,
      );
      assert.equal((await store.monthUsage(account.id, MONTH)).transactions, 1);
      assert.equal(await store.isTokenBilled('the-token'), true);
      await store.close();
    } finally {
      temp.cleanup();
    }
  });

  it('never bills past the allowance when 4 processes race over 40 tokens', async () => {
    const temp = makeTempDir();
    try {
      const path = join(temp.dir, 'shared.db');
      const store = SqliteAccountStore.open(path, { now: testClock().now });
      const allowance = 25;
      const account = await store.createAccount({ name: 'Acme', monthlyAllowance: allowance });
      const tokens = Array.from({ length: 40 }, (_, index) => `token-${index}`);
      // Each worker walks the same tokens from a different starting point.
      const argsPerWorker = Array.from({ length: WORKERS }, (_, worker) => {
        const rotated = [...tokens.slice(worker * 10), ...tokens.slice(0, worker * 10)];
        return [path, account.id, MONTH, String(allowance), rotated.join(','), '2'];
      });
      const totals = await runWorkers(argsPerWorker);

      assert.equal(
        totals.reduce((sum, total) => sum + total.billed, 0),
        allowance,
      );
      assert.equal((await store.monthUsage(account.id, MONTH)).transactions, allowance);
      const billedFlags = await Promise.all(tokens.map((token) => store.isTokenBilled(token)));
      assert.equal(billedFlags.filter(Boolean).length, allowance);
      assert.ok(
        totals.every((total) => total.exceeded > 0),
        'every worker hit the limit',
      );
      await store.close();
    } finally {
      temp.cleanup();
    }
  });
});
