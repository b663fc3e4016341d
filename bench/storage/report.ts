/** The storage part's figures as a report Section: local folder against object storage, side by side. */
import { type Goal, goal, type Section, type Table } from '../report/section.js';
import type { Measurement, StorageRaw } from './raw.js';

const WHAT = ['pass-through cold', 'composite cold', 'pass-through warm', 'raster'];
/** Issue 37: cold composites from the bucket at least this share of the local folder's rate. */
const GOAL_S3_SHARE = 0.8;
/** Issue 37: bucket requests per cold tile at most this. */
const GOAL_REQUESTS_PER_TILE = 1.5;

function find(raw: StorageRaw, what: string, storage: Measurement['storage']): Measurement | undefined {
  return raw.measurements.find((m) => m.what === what && m.storage === storage);
}

/** `: local a, b, c, S3 d, e, f tiles/s`: the rates of every round of `what`, when it had several. */
function roundRates(raw: StorageRaw, what: string): string {
  const rounds = (storage: Measurement['storage']) => find(raw, what, storage)?.rounds;
  const [local, s3] = [rounds('local'), rounds('s3')];
  if (!local || !s3) return '';
  const list = (values: number[]) => values.map((v) => v.toFixed(0)).join(', ');
  return `: local ${list(local)}, S3 ${list(s3)} tiles/s`;
}

function coldRounds(raw: StorageRaw): string {
  const count = raw.settings.coldRounds ?? 1;
  if (count < 2) return '';
  return `${count} rounds, local and S3 in turn, each on a fresh server; the median round counts (composites${roundRates(raw, 'composite cold')}). `;
}

function comparisonTable(raw: StorageRaw): Table {
  const rasterName = `raster ${raw.settings.rasterSize} px jpg`;
  return {
    caption: 'Local folder against object storage (S3 API): the same surveys, the same requests',
    columns: [
      'requests',
      'local /s',
      'S3 /s',
      'local ms each',
      'S3 ms each',
      'S3 requests each',
      'S3 kB fetched each',
      'nadir CPU ms each, local',
      'nadir CPU ms each, S3',
      'S3 server CPU ms each',
    ],
    rows: WHAT.map((what) => {
      const local = find(raw, what, 'local');
      const s3 = find(raw, what, 's3');
      const each = (n: number | undefined) => (n === undefined || !s3 ? null : n / s3.count);
      return [
        what === 'raster' ? rasterName : `${what} jpg tiles`,
        local?.perSecond ?? null,
        s3?.perSecond ?? null,
        local?.msEach ?? null,
        s3?.msEach ?? null,
        each(s3?.fetched?.requests),
        each(s3?.fetched?.bytes === undefined ? undefined : s3.fetched.bytes / 1000),
        cpuEach(local, 'nadir'),
        cpuEach(s3, 'nadir'),
        cpuEach(s3, 'store'),
      ];
    }),
    notes: [
      `Cold: a fresh server, each tile once, ${raw.settings.coldConcurrency} requests in flight, pass-through tiles then composites; ms each is the pass's wall time over its tiles. ${coldRounds(raw)}Raster: ${raw.settings.rasterRounds} download(s) in a row after the cold tiles, on the same server. Warm: wrk, ${raw.settings.connections} connections, ${raw.settings.seconds} s, on both servers in turn (${raw.settings.warmRounds ?? 1} rounds each, the median counts${roundRates(raw, 'pass-through warm')}); ms each is the median latency.`,
      raw.countedBy === 'store'
        ? "Requests and bytes are what the server fetched from the bucket (counted by s3rver's process: the requests it answered and the bodies of its GET answers), over what it answered: the cost a real bucket bills and its latency multiplies."
        : 'Requests and bytes are what the server fetched from the bucket (counted by a proxy in front of s3rver), over what it answered: the cost a real bucket bills and its latency multiplies.',
      `CPU ms each: user + system time over the measurement (/proc), over what was answered: nadir serve's process, and the S3 server's (s3rver, a process of its own${raw.countedBy === 'store' ? '' : '; the counting proxy in the benchmark process is not counted'}).`,
    ],
  };
}

/** CPU ms an answer of one side of a measurement, when it was measured. */
function cpuEach(m: Measurement | undefined, side: 'nadir' | 'store'): number | null {
  const ms = m?.cpuMs?.[side];
  return m && ms !== undefined && m.count > 0 ? ms / m.count : null;
}

/**
 * What the cores allow: the cold passes keep both busy, and the S3 server runs on the same two as
 * nadir. If CPU were all, S3's rate could be at most local's CPU per tile over S3's (nadir's and
 * the server's together).
 */
function cpuBound(raw: StorageRaw): string[] {
  const [local, s3] = [find(raw, 'composite cold', 'local'), find(raw, 'composite cold', 's3')];
  const [ours, nadirS3, store] = [cpuEach(local, 'nadir'), cpuEach(s3, 'nadir'), cpuEach(s3, 'store')];
  if (ours === null || nadirS3 === null || store === null) return [];
  const f = (v: number) => v.toFixed(2);
  return [
    `CPU per cold composite: local ${f(ours)} ms (nadir); S3 ${f(nadirS3)} ms in nadir and ${f(store)} ms in s3rver, on the same ${raw.machine.cpus} cores. ` +
      `Were the cores the only limit, S3's rate could reach ${f(ours / (nadirS3 + store))}x local's (${f(ours / nadirS3)}x with the server's share elsewhere, as a real bucket's is).`,
  ];
}

function goals(raw: StorageRaw): Goal[] {
  const [local, s3] = [find(raw, 'composite cold', 'local'), find(raw, 'composite cold', 's3')];
  return [
    goal(
      'cold composite jpg tiles/s from the S3 server ÷ from the local folder (median rounds)',
      local && s3 ? s3.perSecond / local.perSecond : null,
      GOAL_S3_SHARE,
      'x',
      'min',
    ),
    goal(
      'bucket requests per cold composite tile',
      s3?.fetched ? s3.fetched.requests / s3.count : null,
      GOAL_REQUESTS_PER_TILE,
      '',
      'max',
    ),
  ];
}

export function storageSection(raw: StorageRaw): Section {
  return {
    id: 'storage',
    title: 'Survey storage: local folder and object storage',
    conditions: [
      `${raw.machine.cpus} cores (${raw.machine.model}); load ${raw.machine.loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${raw.machine.loadEnd.map((l) => l.toFixed(1)).join(' ')} at the end.`,
      `Object storage: ${raw.store}. NADIR_STORAGE=s3://bench/tiles, NADIR_S3_ENDPOINT at ${raw.countedBy === 'store' && !raw.store.includes('proxy') ? 's3rver' : 'the proxy'}; ${raw.surveys} survey files uploaded under the keys the catalogue holds. Local: the data folder.`,
      'On loopback a bucket answers in well under a millisecond; a real one adds tens of milliseconds per request, so the requests per tile matter more than the rates here.',
      ...(raw.blocks
        ? [
            `nadir keeps the ${raw.blocks.blockBytes / 1024} KiB blocks it fetches from the bucket (NADIR_STORAGE_CACHE_MB=${raw.blocks.cacheMb}): a block fetched for one tile serves the tiles beside it in the file. The composite pass follows the pass-through pass on the same server, over the same area, so blocks of the older survey fetched for pass-through tiles serve composites too, as they would for a viewer panning the map.`,
          ]
        : []),
      ...cpuBound(raw),
      `Measured in ${(raw.seconds / 60).toFixed(1)} min.`,
    ],
    goals: goals(raw),
    tables: [comparisonTable(raw)],
    charts: [
      {
        kind: 'bar',
        file: 'storage-rates.png',
        title: 'Answers per second by storage',
        yLabel: 'per second',
        yLog: true,
        categories: WHAT,
        series: (['local', 's3'] as const).map((storage) => ({
          name: storage === 'local' ? 'local folder' : 'S3 (s3rver)',
          values: WHAT.map((what) => find(raw, what, storage)?.perSecond ?? null),
        })),
      },
    ],
    raw,
  };
}
