/**
 * tiles export at city size against a scripted server that counts requests in fixed windows as
 * nadir does (X-RateLimit-* on every tile, 429 past the limit), on a fake clock: the plan before
 * the start, --yes past the threshold, pacing below the limit, progress and a summary when
 * nothing is a terminal, the wait's note gone once the wait is over, a PMTiles archive.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PMTiles, type Source } from 'pmtiles';
import type { CliContext } from '../src/node/cli/context.js';
import { main } from '../src/node/cli/main.js';
import { apiError, fakeFetch, fakeTime } from './fake-fetch.js';

/** A key's limit, as an operator sets it: `limit` tiles per `windowMs`, counted in fixed windows. */
function rateLimitedTiles(time: ReturnType<typeof fakeTime>, limit: number, windowMs: number) {
  const perWindow = new Map<number, number>();
  let refused = 0;
  const handler = (url: URL) => {
    const window = Math.floor(time.clock() / windowMs);
    const used = (perWindow.get(window) ?? 0) + 1;
    perWindow.set(window, used);
    const headers = {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - used)),
      'x-ratelimit-reset': String(((window + 1) * windowMs) / 1000),
    };
    if (used > limit) {
      refused++;
      return apiError(429, 'RATE_LIMITED', {}, { ...headers, 'retry-after': '1' });
    }
    // Every tile whose x is a multiple of 5 has no imagery.
    const [x] = url.pathname.split('/').slice(-2);
    if (Number(x) % 5 === 0) return apiError(404, 'NO_IMAGERY', {}, headers);
    const body = new TextEncoder().encode(`png ${url.pathname}`.padEnd(1000, '.'));
    return new Response(body, { headers: { ...headers, 'content-type': 'image/png' } });
  };
  return { handler, perWindow, refused: () => refused };
}

async function run(
  argv: string[],
  time: ReturnType<typeof fakeTime>,
  handler: (url: URL) => Response,
  signal = new AbortController().signal,
) {
  const fake = fakeFetch(handler);
  let stdout = '';
  let stderr = '';
  const context: CliContext = {
    env: { NADIR_URL: 'http://nadir.test', NADIR_API_KEY: 'k' },
    stdout: { write: (text: string) => (stdout += text), isTTY: false } as CliContext['stdout'],
    stderr: { write: (text: string) => (stderr += text), isTTY: false },
    clock: time.clock,
    sleep: time.sleep,
    fetch: fake.fetch,
    signal,
  };
  const code = await main(argv, context);
  return { code, stdout, stderr, calls: fake.calls };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nadir-client-export-'));
});
after(() => rm(dir, { recursive: true, force: true }));

// At z20 this box is 21 x 21 tiles; at z18, 6 x 6.
const BBOX = '-85.4199,29.9449,-85.4131,29.9508';
const tileCount = (zoom: string) => ({ '20': 441, '18': 36 })[zoom] as number;

describe('nadir-client tiles export at size', () => {
  test('one shared AbortSignal for thousands of tiles gathers no listeners, and no MaxListenersExceeded warning', async () => {
    const time = fakeTime();
    const server = rateLimitedTiles(time, 100_000, 60_000);
    const kept: AbortSignal[] = [];
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const controller = new AbortController();
    const fake = fakeFetch(server.handler);
    // As Node 20's fetch does (nodejs/undici#3157): a listener on the request's signal, never removed.
    const fetchKeepingListeners = (async (input: string | URL | Request, init?: RequestInit) => {
      init?.signal?.addEventListener('abort', () => {});
      if (init?.signal) kept.push(init.signal);
      return fake.fetch(input, init);
    }) as typeof fetch;
    const context: CliContext = {
      env: { NADIR_URL: 'http://nadir.test', NADIR_API_KEY: 'k' },
      stdout: { write: () => true },
      stderr: { write: () => true, isTTY: false },
      clock: time.clock,
      sleep: time.sleep,
      fetch: fetchKeepingListeners,
      signal: controller.signal,
    };
    const out = join(dir, 'listeners.mbtiles');
    const code = await main(['tiles', 'export', '--bbox', BBOX, '--zoom', '20', '--out', out, '--quiet'], context);
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    assert.equal(code, 0);
    assert.equal(kept.length, tileCount('20'));
    assert.ok(
      kept.every((signal) => signal !== controller.signal),
      'each request has a signal of its own',
    );
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0, 'the shared signal keeps none');
    assert.deepEqual(warnings, []);
  });

  test('the plan before the start; paced below the limit with no 429; progress lines and a summary off a terminal', async () => {
    const time = fakeTime();
    const server = rateLimitedTiles(time, 100, 10_000);
    const out = join(dir, 'paced.mbtiles');
    const result = await run(['tiles', 'export', '--bbox', BBOX, '--zoom', '20', '--out', out], time, server.handler);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stderr.trim().split('\n');
    // The plan: tile count, size from the first tile, time at 80 of the key's 100 per 10 s.
    assert.match(
      lines[0] ?? '',
      /^.*paced\.mbtiles: 441 of 441 tiles to fetch, up to 430\.7 KB, about 55 s at about 8\.0 tiles\/s \(paced to 80% of the key's rate limit of 100 a window\)$/,
    );
    assert.equal(server.refused(), 0, 'no request over the limit');
    const windows = [...server.perWindow.values()];
    // 80% of each window, give or take the requests in flight when a window turns.
    assert.ok(Math.max(...windows) <= 85, `about 80% of the limit in any window: ${windows}`);
    assert.ok(windows.length >= 5, 'spread over the windows it needs');
    // Progress is there although stderr is not a terminal, with the pace; the summary on stdout.
    assert.match(result.stderr, /overall \[#+-*\] +\d+% \d+\/441 tiles, [\d.]+ tiles\/s, about \d+ s left/);
    assert.match(result.stderr, /overall \[#{24}\] 100% 441\/441 tiles/);
    assert.match(
      result.stdout,
      /paced\.mbtiles: \d+ tiles with imagery of 441 \(\d+ without\), [\d.]+ KB; 441 fetched now in \d+ s, [\d.]+ tiles\/s\n$/,
    );
  });

  test('past 10,000 tiles it starts only with --yes: the plan is printed, nothing is written, exit 2', async () => {
    const time = fakeTime();
    const server = rateLimitedTiles(time, 3000, 60_000);
    const out = join(dir, 'city.pmtiles');
    const city = ['tiles', 'export', '--bbox', '-85.45,29.92,-85.39,29.97', '--zoom', '12-21', '--out', out];
    const result = await run(city, time, server.handler);
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      /city\.pmtiles: [\d,]+ of [\d,]+ tiles to fetch, up to [\d.]+ (MB|GB), about [\d.]+ (min|h) at about 40 tiles\/s/,
    );
    assert.match(result.stderr, /over 10,000: add --yes to start the export/);
    assert.equal(result.calls.length, 3, "the plan's three sample tiles, nothing else");
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.startsWith('city')),
      [],
      'no file for an export not started',
    );
  });

  test('a wait for the window is noted while it lasts and not after; the archive reads back', async () => {
    const time = fakeTime();
    // 10 a minute, so 8 paced: a wait of 7.5 s before each tile.
    const server = rateLimitedTiles(time, 10, 60_000);
    const out = join(dir, 'town.pmtiles');
    const result = await run(
      ['tiles', 'export', '--bbox', BBOX, '--zoom', '18', '--out', out, '--concurrency', '1', '--json'],
      time,
      server.handler,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.refused(), 0);
    const report = JSON.parse(result.stdout) as { written: number; total: number; bytes: number };
    assert.equal(report.total, tileCount('18'));
    const progressLines = result.stderr.split('\n').filter((line) => line.startsWith('overall'));
    const noted = progressLines.findIndex((line) => /waiting [\d.]+ s/.test(line));
    assert.ok(noted >= 0, result.stderr);
    // The issue: "waiting 19.0 s (rate-limited)" stayed on every line after the wait ended.
    assert.ok(!/waiting/.test(progressLines.at(-1) ?? ''), progressLines.at(-1));
    const bytes = new Uint8Array(await readFile(out));
    assert.equal(bytes.length, report.bytes);
    const source: Source = {
      getKey: () => out,
      getBytes: async (offset, length) => ({ data: bytes.slice(offset, offset + length).buffer }),
    };
    const header = await new PMTiles(source).getHeader();
    assert.equal(header.numAddressedTiles, report.written);
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.startsWith('town')),
      ['town.pmtiles'],
      'the working MBTiles and the data file are gone',
    );
  });
});
