import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServices } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { testClock } from '../support/clock.js';
import { watchLogLine } from '../support/secret-watch.js';
import { createKey, makeSurvey } from './helpers.js';

/** Graceful shutdown of a real `nadir serve` process: SIGTERM lets requests in flight finish. */

const ROOT = join(import.meta.dirname, '..', '..');
const SEARCH_DELAY_MS = 1500;
const started: ChildProcess[] = [];

interface Server {
  child: ChildProcess;
  baseUrl: string;
  stdout: string[];
  exited: Promise<number | null>;
  /** Resolves when the server has started a (slow) catalogue search: a request is in flight. */
  searching: Promise<void>;
}

function startServer(dataDir: string): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './test/api/fixtures/slow-catalogue.ts', 'src/cli/bin.ts', 'serve'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NADIR_DATA_DIR: dataDir,
        NADIR_PORT: '0',
        NADIR_HOST: '127.0.0.1',
        NADIR_LOG_LEVEL: 'info',
        NADIR_TEST_SEARCH_DELAY_MS: String(SEARCH_DELAY_MS),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  started.push(child);
  const stdout: string[] = [];
  child.stdout?.on('data', (chunk) => stdout.push(String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let stderr = '';
  let searchStarted = () => {};
  const searching = new Promise<void>((resolve) => {
    searchStarted = resolve;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 30_000);
    child.stderr?.on('data', (chunk) => {
      stderr += String(chunk);
      if (stderr.includes('nadir-test: search started')) searchStarted();
      const match = /nadir listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, baseUrl: match[1], stdout, exited, searching });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
}

describe('graceful shutdown of nadir serve', () => {
  let dataDir: string;
  let key: string;
  let server: Server | undefined;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'nadir-shutdown-'));
    const services = await createServices(parseConfig({ NADIR_DATA_DIR: dataDir }, dataDir), testClock().now);
    key = (await createKey(services, 'acme')).key;
    await services.catalogue.put(makeSurvey({ id: 's1', captureDate: '2024-01-01', box: [9.9, 49.9, 10.1, 50.1] }));
    await services.close();
  });
  after(() => {
    // Every server a test started, also one a failed test left running.
    for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
    for (const line of (server?.stdout.join('') ?? '').split('\n')) if (line) watchLogLine(line, 'nadir serve');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes the request in flight, refuses new connections, then exits 0', async () => {
    server = await startServer(dataDir);
    const started = Date.now();
    const inFlight = fetch(
      `${server.baseUrl}/staticmap/v2/coverage.json?apikey=${key}&point=10,50&radius=50&resources=Vert`,
    );
    await server.searching;
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await assert.rejects(fetch(`${server.baseUrl}/health`), 'no new connections once shutdown began');

    const response = await inFlight;
    assert.equal(response.status, 200);
    const body = (await response.json()) as { total: number; transactionToken: string };
    assert.equal(body.total, 1);
    assert.ok(body.transactionToken);
    assert.ok(Date.now() - started >= SEARCH_DELAY_MS, 'the answer came after the slow search, not a cut-off');

    const code = await Promise.race([
      server.exited,
      new Promise((resolve) => setTimeout(() => resolve('timeout'), 10_000)),
    ]);
    assert.equal(code, 0);
    const logs = server.stdout.join('');
    assert.ok(logs.includes('"statusCode":200'), 'the request was logged');
    assert.ok(!logs.includes(key), 'no key in the logs');
  });

  it('exits 0 promptly with a connection open that never sent a request (a spare, a TCP check)', async () => {
    server = await startServer(dataDir);
    const { port } = new URL(server.baseUrl);
    const silent = connect(Number(port), '127.0.0.1');
    await once(silent, 'connect');
    // Not events.once: it rejects on 'error', and the server may reset the idle connection (ECONNRESET).
    const closed = new Promise((resolve) => silent.once('close', resolve));
    silent.on('error', () => undefined);
    const stopped = Date.now();
    server.child.kill('SIGTERM');
    // node's headers timeout (60 s) is what held it before.
    const code = await Promise.race([
      server.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running after 10 s'), 10_000)),
    ]);
    assert.equal(code, 0);
    assert.ok(Date.now() - stopped < 5000, `took ${Date.now() - stopped} ms`);
    await closed;
  });

  it('exits 0 promptly when idle', async () => {
    server = await startServer(dataDir);
    assert.equal((await fetch(`${server.baseUrl}/ready`)).status, 200);
    const stopped = Date.now();
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.ok(Date.now() - stopped < 5000, `took ${Date.now() - stopped} ms`);
  });
});
