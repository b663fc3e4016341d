/** The raster benchmark's figures as a report Section: goals, tables, charts, findings. */

import { formatNumber } from '../report/markdown.js';
import { type Chart, type Goal, goal, type Section, type Series, type Table } from '../report/section.js';
import { type Spread, spread } from '../report/spread.js';
import type { Agreement, CaseResult, Contender, Format, RasterRaw } from './raw.js';

const GOAL_RATIO = 1.0;
const GOAL_RATIO_SIZES = [2000, 5000];
const GOAL_PEAK_MB = 500;

const NAMES: Record<Contender, string> = {
  nadir: 'nadir (HTTP)',
  engine: 'nadir engine in-process',
  gdal: 'GDAL CLI',
  gdalTuned: 'GDAL CLI tuned',
  rasterio: 'rasterio',
};

const seconds = (c: CaseResult, who: Contender) => spread(c.samples[who].map((s) => s.ms / 1000));
const peak = (c: CaseResult, who: Contender) => spread(c.samples[who].map((s) => s.peakMb));
/** nadir's time over a peer's, run by run (the same round), then the median and range of those. */
const ratio = (c: CaseResult, peer: Contender) =>
  spread(c.samples.nadir.map((s, i) => s.ms / (c.samples[peer][i]?.ms ?? Number.NaN)));

function withRange(s: Spread, rounds: number): string {
  if (!Number.isFinite(s.median)) return '-';
  return rounds > 1
    ? `${formatNumber(s.median)} (${formatNumber(s.low)}-${formatNumber(s.high)})`
    : formatNumber(s.median);
}

const label = (c: CaseResult) => `${c.size} x ${c.size}`;
const casesOf = (raw: RasterRaw, format: Format) => raw.cases.filter((c) => c.format === format);

function timeTable(raw: RasterRaw, format: Format): Table {
  const n = raw.settings.rounds;
  return {
    caption: `TrueOrtho ${format}: seconds per output (medians of ${n} run(s)${n > 1 ? ', min-max in brackets' : ''}), and nadir's time ÷ each peer's`,
    columns: [
      'output px',
      'nadir (HTTP) s',
      'engine in-process s',
      'GDAL CLI s',
      'nadir ÷ GDAL CLI',
      'GDAL tuned s',
      '÷ GDAL tuned',
      'rasterio s',
      '÷ rasterio',
    ],
    rows: casesOf(raw, format).map((c) => [
      label(c),
      withRange(seconds(c, 'nadir'), n),
      withRange(seconds(c, 'engine'), n),
      withRange(seconds(c, 'gdal'), n),
      withRange(ratio(c, 'gdal'), n),
      withRange(seconds(c, 'gdalTuned'), n),
      withRange(ratio(c, 'gdalTuned'), n),
      withRange(seconds(c, 'rasterio'), n),
      withRange(ratio(c, 'rasterio'), n),
    ]),
    notes: [
      'Ratios are nadir (HTTP) ÷ peer, taken run by run within a round; below 1 nadir is faster. The goal is <= 1.0 against the GDAL CLI at 2000 and 5000 px.',
    ],
  };
}

const agreement = (a: Agreement) => (a.identical ? 'same' : `differs by ${formatNumber(a.meanDifference)}`);

function memoryTable(raw: RasterRaw): Table {
  return {
    caption: 'Peak resident memory per output, MB',
    columns: [
      'output',
      'nadir serve: one request (idle before)',
      'nadir serve, long-running',
      'GDAL CLI',
      'GDAL tuned',
      'rasterio',
      "pixels against nadir's",
    ],
    rows: raw.cases.map((c) => [
      `${c.format} ${label(c)}`,
      `${formatNumber(c.freshServer.peakMb)} (${formatNumber(c.freshServer.idleMb)})`,
      peak(c, 'nadir').high,
      peak(c, 'gdal').high,
      peak(c, 'gdalTuned').high,
      peak(c, 'rasterio').high,
      (['gdal', 'gdalTuned', 'rasterio'] as const)
        .map((peer) => `${NAMES[peer]}: ${agreement(c.sameAsNadir[peer])}`)
        .join(', '),
    ]),
    notes: [
      'nadir serve, one request: a new server process, a 64 px request of the same format first (GDAL loaded, the COG open: the "idle" figure), then the one request; its VmHWM is the whole process, idle memory included. Long-running: the same mark during each timed request of the server that answered all of them, the largest over the runs; it also holds what earlier, larger renders left allocated. Command lines: /usr/bin/time\'s maximum RSS (for jpg, the larger of gdalwarp and gdal_translate); the largest over the runs.',
      '"same": gdalinfo -checksum of every band equal to nadir\'s file; otherwise the mean absolute difference per channel value (0-255). rasterio reads with RasterIO resampling (rio-tiler\'s way), not the warper, so its pixels may differ slightly.',
    ],
  };
}

const cpu = (c: CaseResult, who: Contender) => spread(c.samples[who].map((s) => s.cpuSeconds ?? Number.NaN));

function cpuTable(raw: RasterRaw): Table {
  const cell = (c: CaseResult, who: Contender) => {
    const used = cpu(c, who).median;
    return Number.isFinite(used) ? `${formatNumber(used)} (${formatNumber(used / seconds(c, who).median)})` : '-';
  };
  return {
    caption: 'CPU seconds per output, all threads (cores kept busy on average in brackets), medians',
    columns: ['output', 'nadir serve', 'engine in-process', 'GDAL CLI', 'GDAL tuned', 'rasterio'],
    rows: raw.cases.map((c) => [
      `${c.format} ${label(c)}`,
      ...(['nadir', 'engine', 'gdal', 'gdalTuned', 'rasterio'] as const).map((who) => cell(c, who)),
    ]),
    notes: [
      "nadir serve: the server process's user + system time during the request (/proc); engine: this process's; command lines: /usr/bin/time's user + system. CPU time is the work done, whatever else the machine was doing; the cores figure shows how much of it ran in parallel.",
    ],
  };
}

function concurrencyTable(raw: RasterRaw): Table | undefined {
  if (raw.concurrency.length === 0) return undefined;
  return {
    caption: 'Eight concurrent 5000 x 5000 renders in one process (3 TrueOrtho tif, 3 TrueOrtho jpg, 2 DetailDsm png)',
    columns: ['admission', 'rendered', 'OVERLOADED (503)', 'wall s', 'idle RSS MB', 'peak RSS MB'],
    rows: raw.concurrency.map((c) => [
      c.label,
      `${c.ok} of ${c.requests}`,
      c.overloaded,
      c.ms / 1000,
      c.idleMb,
      c.peakMb,
    ]),
    notes: ['RasterEngine in a fresh process (bench/raster/probe.ts), UV_THREADPOOL_SIZE=8.'],
  };
}

function charts(raw: RasterRaw): Chart[] {
  const out: Chart[] = [];
  for (const format of raw.settings.formats) {
    const cases = casesOf(raw, format);
    const series = (who: Contender, pick: (c: CaseResult, who: Contender) => Spread): Series => ({
      name: NAMES[who],
      points: cases.map((c) => ({
        x: c.size ** 2 / 1e6,
        y: pick(c, who).median,
        low: pick(c, who).low,
        high: pick(c, who).high,
      })),
    });
    out.push({
      kind: 'line',
      file: `raster-time-${format}.png`,
      title: `Raster ${format}: time against output size`,
      xLabel: 'output megapixels',
      yLabel: 'seconds',
      xLog: true,
      yLog: true,
      series: (['nadir', 'engine', 'gdal', 'gdalTuned', 'rasterio'] as const).map((who) => series(who, seconds)),
    });
    out.push({
      kind: 'line',
      file: `raster-memory-${format}.png`,
      title: `Raster ${format}: peak resident memory against output size`,
      xLabel: 'output megapixels',
      yLabel: 'MB',
      xLog: true,
      series: [
        {
          name: 'nadir serve, one request',
          points: cases.map((c) => ({ x: c.size ** 2 / 1e6, y: c.freshServer.peakMb })),
        },
        ...(['gdal', 'gdalTuned', 'rasterio'] as const).map((who) => series(who, peak)),
      ],
      references: [{ value: GOAL_PEAK_MB, label: `goal: nadir <= ${GOAL_PEAK_MB} MB at 5000 px` }],
    });
  }
  return out;
}

function goals(raw: RasterRaw): Goal[] {
  const list: Goal[] = [];
  for (const c of raw.cases.filter((x) => GOAL_RATIO_SIZES.includes(x.size))) {
    list.push(
      goal(`${c.format} ${label(c)}: nadir time ÷ GDAL CLI time`, ratio(c, 'gdal').median, GOAL_RATIO, 'x', 'max'),
    );
  }
  for (const c of raw.cases.filter((x) => x.size === 5000)) {
    list.push(
      goal(
        `${c.format} 5000 x 5000: nadir serve peak RSS for one request`,
        c.freshServer.peakMb,
        GOAL_PEAK_MB,
        'MB',
        'max',
      ),
    );
  }
  return list;
}

const cores = (c: CaseResult, who: Contender) => cpu(c, who).median / seconds(c, who).median;

function findings(raw: RasterRaw): string[] {
  const out: string[] = [];
  for (const format of raw.settings.formats) {
    const cases = casesOf(raw, format);
    const small = cases[0];
    const large = cases.at(-1);
    if (!small || !large || small === large) continue;
    const growth = (who: Contender) => formatNumber(seconds(large, who).median / seconds(small, who).median);
    out.push(
      `${format}: from ${label(small)} to ${label(large)} (x${formatNumber(large.size ** 2 / small.size ** 2)} pixels), nadir's time grows ` +
        `x${growth('nadir')}, the GDAL CLI's x${growth('gdal')} and rasterio's x${growth('rasterio')}. At ${label(small)} a command line ` +
        `is mostly process start-up (loading GDAL's drivers, Python's imports: ${formatNumber(seconds(small, 'gdal').median)} s for GDAL), ` +
        `which a server pays once; at ${label(large)} all of them spend their time warping and encoding, and nadir kept ` +
        `${formatNumber(cores(large, 'nadir'))} cores busy against ${formatNumber(cores(large, 'gdal'))} for the GDAL CLI.`,
    );
    const http = seconds(large, 'nadir').median - seconds(large, 'engine').median;
    const megabytes = (large.samples.nadir[0]?.bytes ?? 0) / 2 ** 20;
    out.push(
      http > 0
        ? `${format} ${label(large)}: HTTP adds ${formatNumber(http)} s to the in-process render (sending ${formatNumber(megabytes)} MB ` +
            'over loopback and reading it, the token check, billing).'
        : `${format} ${label(large)}: HTTP costs nothing measurable over the in-process render (its median was ` +
            `${formatNumber(-http)} s shorter: run-to-run noise exceeds sending ${formatNumber(megabytes)} MB over loopback).`,
    );
  }
  for (const c of raw.cases.filter((x) => GOAL_RATIO_SIZES.includes(x.size))) {
    const r = ratio(c, 'gdal').median;
    if (!(r > GOAL_RATIO)) continue;
    const [ours, theirs] = [cpu(c, 'nadir').median, cpu(c, 'gdal').median];
    const why =
      ours > theirs * 1.1
        ? `nadir's server did more work (${formatNumber(ours)} CPU-s against ${formatNumber(theirs)})`
        : `the work is the same (${formatNumber(ours)} CPU-s against ${formatNumber(theirs)}), and nadir ran it on ${formatNumber(cores(c, 'nadir'))} cores on average where it asks GDAL for all of them: the machine's other work (load average above) left it less`;
    out.push(
      `Missed: ${c.format} ${label(c)} takes nadir ${formatNumber(r)}x the GDAL CLI's time (${formatNumber((r - 1) * 100)}% over): ${why}.`,
    );
  }
  for (const c of raw.cases.filter((x) => x.size === 5000 && x.freshServer.peakMb > GOAL_PEAK_MB)) {
    const { idleMb, peakMb } = c.freshServer;
    const perPixel = ((peakMb - idleMb) * 2 ** 20) / c.size ** 2;
    out.push(
      `Missed: ${c.format} ${label(c)} peaks at ${formatNumber(peakMb)} MB, ${formatNumber(peakMb - GOAL_PEAK_MB)} MB over: the idle server ` +
        `(Node, fastify, GDAL loaded, the COG open) holds ${formatNumber(idleMb)} MB and the render adds ${formatNumber(peakMb - idleMb)} MB, ` +
        `${formatNumber(perPixel)} bytes per output pixel: the warped RGBA image, the encoded file, the warper's chunks and the decoded ` +
        "source tiles in GDAL's block cache (src/raster/engine.ts budgets 12 bytes per pixel for tif, 14 for jpg).",
    );
  }
  return out;
}

function conditions(raw: RasterRaw): string[] {
  const { machine, survey, settings } = raw;
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  return [
    `Machine: ${machine.cpus} cores (${machine.model}), ${machine.memoryGb.toFixed(1)} GiB RAM; load average ${load(machine.loadStart)} at the start and ${load(machine.loadEnd)} at the end (1/5/15 min).`,
    `Software: ${raw.versions.gdal}; Node ${raw.versions.node}; ${raw.versions.rasterio} (Debian's python3-rasterio).`,
    `Data: one survey ingested by \`nadir ingest\` (bench/raster/source.ts): a ${survey.ortho.width} x ${survey.ortho.height} px TrueOrtho COG at zoom ${survey.ortho.maxZoom} (${survey.ortho.gsd.toFixed(3)} m source GSD, aerial texture from the USGS Colorado orthophoto). Every contender reads that same file. AOI: radius 100 m (a 200 m square) at the survey's centre (${survey.centre.lat.toFixed(5)}, ${survey.centre.lon.toFixed(5)}); outputs ${settings.sizes.map((s) => `${s} x ${s}`).join(', ')} px, bilinear, EPSG:3857.`,
    'nadir (HTTP): the real `nadir serve` (compiled, bin/nadir, one process, NADIR_LOG_LEVEL=warn), GET /staticmap/v2/surveys/{id}/TrueOrtho.{format} with one transaction token, timed by the client to the last byte over loopback. Engine: RasterEngine.renderAoi in the benchmark process (the same render without HTTP). Both warmed up by one render of each output first.',
    "GDAL CLI: `gdalwarp -te ... -ts N N -r bilinear` with nadir's creation options (DEFLATE level 3, PREDICTOR=2, alpha) for tif; `gdalwarp -of VRT` then `gdal_translate -of JPEG -co QUALITY=90` for jpg. Tuned: plus `-multi -wo NUM_THREADS=ALL_CPUS -wm 128 -co NUM_THREADS=ALL_CPUS`, what nadir passes GDAL. rasterio: bench/contenders/rasterio_aoi.py, one windowed `dataset.read(out_shape=..., resampling=bilinear, masked=True)` as rio-tiler's `part()` does, then GDAL's GTiff or JPEG driver with the same options. All three from spawn to exit under /usr/bin/time, start-up included, writing to the local disk.",
    `Runs: ${settings.rounds} per output and contender; within a round the contenders take turns and the order rotates every round, so no contender always meets a cold or a hot cache. Files are in the page cache (warm).`,
  ];
}

export function rasterSection(raw: RasterRaw): Section {
  const concurrency = concurrencyTable(raw);
  return {
    id: 'raster',
    title: 'Rasters',
    conditions: conditions(raw),
    goals: goals(raw),
    tables: [
      ...raw.settings.formats.map((f) => timeTable(raw, f)),
      cpuTable(raw),
      memoryTable(raw),
      ...(concurrency ? [concurrency] : []),
    ],
    charts: charts(raw),
    findings: findings(raw),
    raw,
  };
}
