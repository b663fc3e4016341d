/** bench/ingest's raw figures as a markdown section (a table per run, and how it was measured). */
import type { IngestCase, IngestRaw } from './raw.js';

const MIB = 2 ** 20;

function megapixelsPerSecond(c: IngestCase, seconds: number): number {
  return c.pixels / 1e6 / seconds;
}

function row(c: IngestCase): string {
  const nadirRate = megapixelsPerSecond(c, c.nadir.seconds);
  const refRate = megapixelsPerSecond(c, c.reference.seconds);
  return `| ${c.name} ${c.width.toLocaleString('en')} x ${c.height.toLocaleString('en')} | ${c.nadir.seconds.toFixed(1)} s | ${nadirRate.toFixed(2)} | ${(c.nadir.peakRssBytes / MIB).toFixed(0)} MiB | ${c.reference.seconds.toFixed(1)} s | ${refRate.toFixed(2)} | ${(c.reference.peakRssBytes / MIB).toFixed(0)} MiB | ${(nadirRate / refRate).toFixed(2)}x |`;
}

export function ingestSection(raw: IngestRaw): string {
  const lines = [
    `## Ingest${raw.quick ? ' (quick)' : ''}`,
    '',
    '`nadir ingest` (compiled CLI) against `gdalwarp -t_srs EPSG:3857` + `gdal_translate -of COG` on the same',
    'generated source. MP/s: source megapixels per second of wall time. Peak RSS: `/usr/bin/time -v`',
    '(the larger of the two GDAL steps).',
    '',
    '| source | nadir | nadir MP/s | nadir peak RSS | GDAL CLI | GDAL MP/s | GDAL peak RSS | nadir / GDAL |',
    '|---|---|---|---|---|---|---|---|',
    ...raw.cases.map(row),
    '',
    ...raw.cases.map(
      (c) =>
        `- ${c.name}: ${c.description}; source ${(c.sourceBytes / MIB).toFixed(0)} MiB; COG nadir ` +
        `${(c.nadir.outputBytes / MIB).toFixed(0)} MiB, GDAL ${(c.reference.outputBytes / MIB).toFixed(0)} MiB; ` +
        `GDAL steps ${c.reference.steps.map((s) => `${s.command.split(' ')[0]} ${s.seconds.toFixed(1)} s`).join(', ')}.`,
    ),
    `- Settings on both sides: ${raw.threads}. Machine: ${raw.machine.cpus} cores, ` +
      `${(raw.machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, ${raw.machine.gdal}, load average at the start ` +
      `${raw.machine.loadAverage.map((l) => l.toFixed(1)).join(' ')}; started ${raw.startedAt}.`,
    '',
  ];
  return `${lines.join('\n')}\n`;
}
