/** The change benchmark's figures as a report Section. */
import { formatNumber } from '../report/markdown.js';
import { goal, type Section } from '../report/section.js';
import { spread } from '../report/spread.js';
import type { ChangeContender, ChangeRaw } from './raw.js';

const GOAL_RATIO = 0.7;

const NAMES: Record<ChangeContender, string> = {
  engine: 'nadir engine in-process',
  gdal: 'GDAL CLI (gdalwarp x2 + VRT diff)',
  gdalTuned: 'GDAL CLI tuned (-multi, NUM_THREADS=ALL_CPUS)',
};

/** nadir's time over a peer's, round by round (the same round), as median and range. */
function ratio(raw: ChangeRaw, peer: ChangeContender) {
  return spread(raw.samples.engine.map((s, i) => s.ms / (raw.samples[peer][i]?.ms ?? Number.NaN)));
}

export function changeSection(raw: ChangeRaw): Section {
  const byGdal = ratio(raw, 'gdal');
  const byTuned = ratio(raw, 'gdalTuned');
  const load = (values: number[]) => values.map((v) => v.toFixed(2)).join(' / ');
  return {
    id: 'change',
    title: 'DsmChange: height change of two surveys against the GDAL command line',
    conditions: [
      `${raw.size} x ${raw.size} px Float32 GeoTIFF of after - before, radius ${raw.aoi.radius} m (the demo town's hurricane survey ${raw.surveys.after} against ${raw.surveys.before}); ${raw.rounds} round(s), contenders interleaved within each round, after one warm-up of each.`,
      `Machine: ${raw.machine.cpus} CPUs (${raw.machine.model}), shared with other work: load average (1/5/15 min) ${load(raw.machine.loadStart)} at the start, ${load(raw.machine.loadEnd)} at the end. Ratios come from the same rounds.`,
      `The command line: ${raw.subtraction}. Commands: ${raw.commands.map((c) => c.join(' ')).join(' ; ')}`,
      `Versions: ${Object.entries(raw.versions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
    ],
    goals: [
      goal(`DsmChange ${raw.size} px: nadir's time ÷ the GDAL command line's`, byGdal.median, GOAL_RATIO, 'x', 'max'),
    ],
    tables: [
      {
        caption: `Seconds per ${raw.size} px DsmChange GeoTIFF (median, min-max), CPU seconds, and nadir's time ÷ each`,
        columns: ['contender', 's', 'CPU s', 'MB out', 'nadir ÷ this'],
        rows: (['engine', 'gdal', 'gdalTuned'] as const).map((who) => {
          const time = spread(raw.samples[who].map((s) => s.ms / 1000));
          const cpu = spread(raw.samples[who].map((s) => s.cpuSeconds ?? Number.NaN));
          const r = who === 'gdal' ? byGdal : who === 'gdalTuned' ? byTuned : undefined;
          return [
            NAMES[who],
            `${formatNumber(time.median)} (${formatNumber(time.low)}-${formatNumber(time.high)})`,
            formatNumber(cpu.median),
            formatNumber((raw.samples[who][0]?.bytes ?? 0) / 1e6),
            r ? `${formatNumber(r.median)} (${formatNumber(r.low)}-${formatNumber(r.high)})` : '-',
          ];
        }),
        notes: [
          `Same product: largest difference ${raw.agreement.maxDifference.toExponential(2)} m over ${raw.agreement.compared.toLocaleString('en')} pixels holding a value in both; nodata in the same pixels: ${raw.agreement.sameNodata ? 'yes' : 'NO'} (nadir writes -9999, the CLI NaN).`,
        ],
      },
    ],
    charts: [],
    findings: [
      'nadir warps both surveys side by side in one process (no process start-up, no intermediate files), subtracts in memory and writes the GeoTIFF once; the command line starts three processes and writes and reads two intermediate GeoTIFFs.',
    ],
    failures:
      raw.agreement.sameNodata && raw.agreement.maxDifference <= 1e-3 ? [] : ['nadir and the GDAL CLI disagree'],
    raw,
  };
}
