/**
 * Crashes (issue 18, item 4), on the compiled CLI:
 *
 * - ingest: a first ingest of a generated source (timed), then re-ingests of the same survey id,
 *   each SIGKILLed at a random moment between its start and 1.2 x the measured time, until
 *   `kills` of them were killed (a re-ingest that finished before its moment counts as a clean
 *   re-run, not a kill; at most 3 x `kills` attempts);
 *   after every kill the visible survey must be a whole committed version (its COG opens in GDAL
 *   as a COG) and at most one staging folder may exist (the dead attempt's, removed by the next
 *   ingest); a last re-run must succeed and leave no staging folder behind.
 * - serve: `kills` rounds of a server answering tiles and first downloads (distinct transaction
 *   tokens) while it is SIGKILLed at a random moment; a last clean round downloads every token
 *   still unbilled and stops with SIGTERM (which flushes tile usage). Every token must be billed
 *   exactly once, and the tiles counted may fall short of those served by no more than the tiles
 *   served in the flush interval before each kill, and never exceed them.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { systemClock } from '../../src/cli/system-clock.js';
import { createServices } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { tileForMercator } from '../../src/geo/web-mercator.js';
import { assetDataset } from '../asset-dataset.js';
import { generateRgb } from '../ingest/run.js';
import { issueBenchKey, startNadirServe } from '../load/nadir-serve.js';
import { tileData } from '../tiles/data.js';
import { nadirTileUrl } from '../tiles/tile-lists.js';
import { coverageUrl, demoPoints, RADIUS } from './demo-urls.js';
import type { IngestCrashRaw, ServeCrashRaw } from './raw.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/nadir');
const SURVEY = '5e4f1a10-0000-4000-8000-00000000c0de';
/** TILE_USAGE_FLUSH_MS in src/composition.ts: what a crash may lose of the tile counts. */
const FLUSH_SECONDS = 5;

async function visibleVersion(dataDir: string): Promise<{ version: number; cog: string } | undefined> {
  const services = await createServices(parseConfig({ NADIR_DATA_DIR: dataDir }, dataDir), systemClock);
  try {
    const survey = await services.catalogue.get(SURVEY);
    const asset = survey?.assets.TrueOrtho;
    if (!survey || !asset) return undefined;
    return {
      version: survey.version,
      cog: await assetDataset(services.storage, asset, join(dataDir, 'TrueOrtho.vrt')),
    };
  } finally {
    await services.close();
  }
}

async function assertWholeCog(path: string): Promise<void> {
  const { stdout } = await run('gdalinfo', ['-json', path], { maxBuffer: 64 << 20 });
  const info = JSON.parse(stdout) as { metadata?: { IMAGE_STRUCTURE?: { LAYOUT?: string } } };
  if (info.metadata?.IMAGE_STRUCTURE?.LAYOUT !== 'COG') throw new Error(`${path} is not a whole COG`);
}

async function ingest(manifest: string, dataDir: string, killAfterMs?: number): Promise<'finished' | 'killed'> {
  const child = spawn(process.execPath, [BIN, 'ingest', manifest], {
    cwd: ROOT,
    env: { ...process.env, NADIR_DATA_DIR: dataDir, NADIR_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const code = await exited;
  clearTimeout(timer);
  if (child.signalCode === 'SIGKILL') return 'killed';
  if (code !== 0) throw new Error(`nadir ingest exited ${code}`);
  return 'finished';
}

export async function measureIngestCrashes(options: {
  kills: number;
  size: number;
  log: (line: string) => void;
}): Promise<IngestCrashRaw> {
  const dir = await mkdtemp(join(tmpdir(), 'nadir-soak-crash-'));
  try {
    const dataDir = join(dir, 'data');
    const source = await generateRgb(dir, options.size);
    const manifest = join(dir, 'survey.json');
    await writeFile(manifest, JSON.stringify({ id: SURVEY, captureDate: '2026-06-01', assets: { TrueOrtho: source } }));
    const started = performance.now();
    await ingest(manifest, dataDir);
    const fullMs = performance.now() - started;
    let visible = await visibleVersion(dataDir);
    if (!visible) throw new Error('the first ingest left no survey');
    const attempts: IngestCrashRaw['attempts'] = [];
    const killed = () => attempts.filter((a) => a.outcome === 'killed').length;
    for (let i = 0; killed() < options.kills; i++) {
      if (i >= 3 * options.kills) throw new Error(`only ${killed()} of ${i} re-ingests were killed before finishing`);
      const killAfterMs = Math.round(Math.random() * 1.2 * fullMs);
      const outcome = await ingest(manifest, dataDir, killAfterMs);
      const now = await visibleVersion(dataDir);
      if (!now) throw new Error(`after a kill at ${killAfterMs} ms no survey is visible`);
      if (outcome === 'killed' && now.version !== visible.version) {
        throw new Error(`a killed ingest changed the visible version (${visible.version} -> ${now.version})`);
      }
      await assertWholeCog(now.cog);
      const staging = (await readdir(join(dataDir, 'staging')).catch(() => [])).length;
      if (staging > 1) throw new Error(`${staging} staging folders after attempt ${i + 1}: a dead one was not removed`);
      attempts.push({ killAfterMs, outcome, visibleVersion: now.version, stagingFolders: staging });
      visible = now;
    }
    await ingest(manifest, dataDir);
    const final = await visibleVersion(dataDir);
    const stagingLeft = (await readdir(join(dataDir, 'staging')).catch(() => [])).length;
    if (!final || final.version <= visible.version || stagingLeft !== 0) {
      throw new Error(
        `the last re-run: version ${final?.version} after ${visible.version}, ${stagingLeft} staging folders`,
      );
    }
    options.log(
      `ingest crashes: ${killed()} killed of ${attempts.length}, ` +
        `full ingest ${(fullMs / 1000).toFixed(1)} s; always a whole version visible; re-run v${final.version}`,
    );
    return { size: options.size, fullIngestSeconds: fullMs / 1000, attempts, finalVersion: final.version, stagingLeft };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function usage(dataDir: string, accountId: string): Promise<{ transactions: number; tiles: number }> {
  const services = await createServices(parseConfig({ NADIR_DATA_DIR: dataDir }, dataDir), systemClock);
  try {
    const months = (await services.accounts.usage(accountId)).months;
    return {
      transactions: months.reduce((s, m) => s + m.transactions, 0),
      tiles: months.reduce((s, m) => s + m.tiles, 0),
    };
  } finally {
    await services.close();
  }
}

async function accountOf(dataDir: string, apiKey: string): Promise<string> {
  const services = await createServices(parseConfig({ NADIR_DATA_DIR: dataDir }, dataDir), systemClock);
  try {
    const found = await services.accounts.lookupApiKey(apiKey);
    if (!found) throw new Error('the soak key is unknown');
    return found.account.id;
  } finally {
    await services.close();
  }
}

export async function measureServeCrashes(options: {
  kills: number;
  fresh: boolean;
  log: (line: string) => void;
}): Promise<ServeCrashRaw> {
  const data = await tileData({ fresh: options.fresh, log: options.log });
  const env = { NADIR_DATA_DIR: data.dataDir };
  // One key for tiles and downloads, so one account's usage holds both.
  const apiKey = await issueBenchKey(env, 'crash', 1000, 1_000_000_000);
  const accountId = await accountOf(data.dataDir, apiKey);
  const before = await usage(data.dataDir, accountId);
  const points = demoPoints(30, 0.001);
  const billed = new Set<number>();
  let tokens: { url: string }[] = [];
  let tilesServed = 0;
  let tilesAtRisk = 0;
  // 64 tiles of the older bench survey, an 8 x 8 block from its north-west corner two zooms down.
  const z = data.older.maxZoom - 2;
  const corner = tileForMercator(data.older.bounds.minX + 1, data.older.bounds.maxY - 1, z);
  const tileCoords = Array.from({ length: 64 }, (_, i) => ({
    z,
    x: corner.x + (i % 8),
    y: corner.y + Math.floor(i / 8),
  }));
  const rounds: ServeCrashRaw['rounds'] = [];
  for (let round = 0; round <= options.kills; round++) {
    const last = round === options.kills;
    const server = await startNadirServe({ env, label: 'crash' });
    if (tokens.length === 0) {
      tokens = [];
      for (const p of points) {
        const answer = (await (await fetch(coverageUrl(server.url, apiKey, p, 'TrueOrtho'))).json()) as {
          transactionToken?: string;
          surveys?: { id: string }[];
        };
        const survey = answer.surveys?.[0]?.id;
        if (!answer.transactionToken || !survey) throw new Error(`no coverage at ${p.lon},${p.lat}`);
        tokens.push({
          url: `/staticmap/v2/surveys/${survey}/TrueOrtho.jpg?transactionToken=${answer.transactionToken}&point=${p.lon.toFixed(6)},${p.lat.toFixed(6)}&radius=${RADIUS}&size=500x500`,
        });
      }
    }
    const served: number[] = []; // when each tile 200 arrived, ms
    let stopped = false;
    const tileLoop = async (worker: number) => {
      for (let i = worker; !stopped; i += 4) {
        const t = tileCoords[i % tileCoords.length] as (typeof tileCoords)[number];
        try {
          const response = await fetch(nadirTileUrl(server.url, apiKey, t, 'jpg'));
          await response.arrayBuffer();
          if (response.status === 200) served.push(performance.now());
        } catch {
          return; // the server is gone
        }
      }
    };
    const downloadLoop = async () => {
      for (const [index, token] of tokens.entries()) {
        if (billed.has(index) || stopped) continue;
        try {
          const response = await fetch(`${server.url}${token.url}`);
          await response.arrayBuffer();
          if (response.status === 200) billed.add(index);
          else if (response.status !== 404) throw new Error(`download ${index}: ${response.status}`);
        } catch (error) {
          if (stopped) return;
          throw error;
        }
      }
    };
    const loops = [...[0, 1, 2, 3].map(tileLoop), downloadLoop()];
    let killedAt: number | undefined;
    if (last) {
      await loops.at(-1);
      await sleep(1000);
      stopped = true;
      await Promise.all(loops);
      await server.stop(); // SIGTERM: flushes the tile counts
    } else {
      await sleep(1000 + Math.random() * 3000);
      killedAt = performance.now();
      process.kill(server.child.pid as number, 'SIGKILL');
      stopped = true;
      await Promise.allSettled(loops);
      await server.stop();
      tilesAtRisk += served.filter((t) => t > (killedAt as number) - FLUSH_SECONDS * 1000).length;
    }
    tilesServed += served.length;
    rounds.push({ killed: !last, tilesServed: served.length, downloadsBilledSoFar: billed.size });
  }
  const after = await usage(data.dataDir, accountId);
  const transactions = after.transactions - before.transactions;
  const tilesCounted = after.tiles - before.tiles;
  const raw: ServeCrashRaw = {
    kills: options.kills,
    tokens: tokens.length,
    downloadedTokens: billed.size,
    transactions,
    tilesServed,
    tilesCounted,
    tilesAtRisk,
    flushSeconds: FLUSH_SECONDS,
    rounds,
  };
  options.log(
    `serve crashes: ${options.kills} kills; ${tokens.length} tokens, ${transactions} transactions; ` +
      `tiles served ${tilesServed}, counted ${tilesCounted}, at risk ${tilesAtRisk}`,
  );
  return raw;
}
