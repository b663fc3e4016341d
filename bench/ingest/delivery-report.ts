/** bench/ingest/delivery.ts's raw figures as a markdown section: one table, then how it was measured. */
import type { Contender, DeliveryRaw, DeliveryRun, DeliverySummary, FleetRun } from './delivery-raw.js';

const MIB = 2 ** 20;

const LABELS: Record<Contender, string> = {
  gdal: 'GDAL: gdalbuildvrt x 2 + gdalwarp -of COG',
  'nadir-1': 'nadir ingest --workers 1',
  'nadir-2': 'nadir ingest --workers 2',
};

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(0)} MiB`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Median seconds (and the MP/s of it), maxima of memory, over the rounds that finished. */
export function summarise(raw: Pick<DeliveryRaw, 'products' | 'runs'>): {
  summary: DeliverySummary[];
  scaling: DeliveryRaw['scaling'];
} {
  const summary: DeliverySummary[] = [];
  const scaling: DeliveryRaw['scaling'] = {};
  for (const product of raw.products) {
    const rates: Partial<Record<Contender, number>> = {};
    for (const contender of ['gdal', 'nadir-1', 'nadir-2'] as const) {
      const runs = raw.runs.filter((r) => r.product === product.name && r.contender === contender && r.ok);
      if (runs.length === 0) continue;
      const seconds = median(runs.map((r) => r.seconds));
      const rate = product.pixels / 1e6 / seconds;
      rates[contender] = rate;
      summary.push({
        product: product.name,
        contender,
        rounds: runs.length,
        seconds,
        megapixelsPerSecond: rate,
        peakRssBytes: Math.max(...runs.map((r) => r.peakRssBytes)),
        workerPeakRssBytes: Math.max(...runs.map((r) => r.workerPeakRssBytes)),
        peakTotalRssBytes: Math.max(...runs.map((r) => r.peakTotalRssBytes)),
      });
    }
    for (const s of summary) {
      if (s.product === product.name && s.contender !== 'gdal' && rates.gdal) {
        s.ratioToGdal = s.megapixelsPerSecond / rates.gdal;
      }
    }
    if (rates['nadir-1'] && rates['nadir-2']) scaling[product.name] = rates['nadir-2'] / rates['nadir-1'];
  }
  return { summary, scaling };
}

function failure(run: DeliveryRun | undefined): string {
  const line = (run?.error ?? 'not run').split('\n').find((l) => l.trim()) ?? 'failed';
  return `failed: ${line.replace(/\|/g, '\\|').slice(0, 100)}`;
}

export function deliverySection(raw: DeliveryRaw): string {
  const rows: string[] = [];
  for (const product of raw.products) {
    for (const contender of ['gdal', 'nadir-1', 'nadir-2'] as const) {
      const s = raw.summary.find((x) => x.product === product.name && x.contender === contender);
      const name = `${product.name} | ${LABELS[contender]}`;
      if (!s) {
        const run = raw.runs.find((r) => r.product === product.name && r.contender === contender);
        rows.push(`| ${name} | ${failure(run)} | | | | | |`);
        continue;
      }
      const worker = contender === 'gdal' ? '-' : mib(s.workerPeakRssBytes);
      const ratio = s.ratioToGdal === undefined ? '-' : `${s.ratioToGdal.toFixed(2)}x`;
      const partial = s.rounds < raw.rounds ? ` (${s.rounds} of ${raw.rounds} rounds finished)` : '';
      rows.push(
        `| ${name} | ${s.seconds.toFixed(1)} s${partial} | ${s.megapixelsPerSecond.toFixed(2)} | ${mib(s.peakRssBytes)} | ` +
          `${worker} | ${mib(s.peakTotalRssBytes)} | ${ratio} |`,
      );
    }
  }
  const c = raw.conditions;
  const lines = [
    `## Ingest: a delivery of tiles in two CRSs${raw.quick ? ' (quick)' : ''}`,
    '',
    `${raw.area.description}.`,
    '',
    "MP/s: source megapixels (every file's width x height) per second of wall time. Peak RSS: the largest",
    'single process (`/usr/bin/time -v`); per worker: the largest `VmHWM` of a process below `nadir ingest`',
    "(sampled every 200 ms through /proc); total: the largest sum of the tree's RSS at one sample.",
    `${raw.rounds} round(s), interleaved (GDAL, nadir-1, nadir-2 per product per round); seconds are the median.`,
    '',
    '| product | run | seconds | MP/s | peak RSS (largest process) | peak RSS per worker | peak total | nadir / GDAL (MP/s) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...raw.products.map((p) => {
      const scale = raw.scaling[p.name];
      return (
        `- ${p.name} (\`${p.contentType}\`): ${p.tileCount} files (${Object.entries(p.tilesByCrs)
          .map(([crs, n]) => `${n} in ${crs}`)
          .join(
            ', ',
          )}), ${(p.pixels / 1e6).toFixed(0)} MP (${((100 * p.validPixels) / p.pixels).toFixed(1)}% valid), ` +
        `${mib(p.bytes)}; ${p.description}; data marked by ${p.dataMarking}; GDAL reads back ${p.compression}. ` +
        `nadir 1 -> 2 workers: ${scale === undefined ? 'n/a' : `${scale.toFixed(2)}x`}.`
      );
    }),
    `- Conditions: ${c.nproc} cores, ${(c.memoryBytes / 2 ** 30).toFixed(0)} GiB, ${c.gdal}, Node ${c.node}; load average ` +
      `at the start ${c.loadAverageAtStart.map((l) => l.toFixed(2)).join(' ')}; GDAL_CACHEMAX=${c.gdalCacheMaxMb} MB ` +
      `and warp memory ${c.warpMemoryMb} MB on both sides; ${c.threads}. Started ${raw.startedAt}.`,
    ...fleetLines(raw),
    '- Commands (paths relative to the temporary folder):',
    ...[...new Set(raw.runs.filter((r) => r.round === 1).flatMap((r) => r.commands))].map((cmd) => `  - \`${cmd}\``),
    '',
  ];
  return `${lines.join('\n')}\n`;
}

function fleetRun(run: FleetRun): string {
  const name = `${run.product} | ${run.mode === 'killed' ? 'one worker SIGKILLed' : 'uninterrupted'}`;
  if (!run.ok) return `| ${name} | ${failure(run as unknown as DeliveryRun)} | | | | | | |`;
  const jobs = Object.entries(run.jobsDone)
    .map(([w, n]) => `${w}: ${n}`)
    .join(', ');
  const peak = Math.max(...Object.values(run.workerPeakRssBytes));
  const killed = run.killed
    ? `${run.killed.worker} (coordinating) at ${run.killed.afterSeconds.toFixed(0)} s after ${run.killed.jobsDoneBefore} jobs`
    : '-';
  return (
    `| ${name} | ${run.seconds.toFixed(1)} s | ${run.megapixelsPerSecond.toFixed(2)} | ${jobs} | ${killed} | ` +
    `${run.retried.jobs} jobs, ${run.retried.steps} steps (${run.coordinatingSteps} steps in all) | ${mib(peak)} | ` +
    `${run.visibleBeforeDone || run.missingAtVisibility.length > 0 ? 'NO' : 'yes'} |`
  );
}

/** The fleet part: two workers over PostgreSQL and S3, uninterrupted and with one killed. */
function fleetLines(raw: DeliveryRaw): string[] {
  if (!raw.fleet) return [];
  return [
    '',
    `Two \`nadir worker\` processes (one job slot each, data folders of their own) over one PostgreSQL and one S3 server (s3rver), the survey sent with \`nadir ingest --queue --detach\`; seconds from the send to the survey's visibility; NADIR_INGEST_JOB_TIMEOUT_S=${raw.fleet.jobTimeoutSeconds} (a lost job or step waits it out):`,
    '',
    '| product | run | seconds | MP/s | jobs done by worker | killed | retried | peak RSS per worker (with its job process) | nothing visible early, all files there |',
    '|---|---|---|---|---|---|---|---|---|',
    ...raw.fleet.products.flatMap((p) => p.runs.map(fleetRun)),
    '',
    ...raw.fleet.products.map(
      (p) =>
        `- ${p.product}: the killed run's stored files against the uninterrupted run's, byte for byte: ${p.identicalFiles} of ${p.comparedFiles} identical` +
        (p.differing.length ? ` (differ: ${p.differing.slice(0, 5).join(', ')})` : ''),
    ),
    '',
  ];
}
