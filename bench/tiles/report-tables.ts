/** The tile section's tables. */
import { formatNumber } from '../report/markdown.js';
import type { Table } from '../report/section.js';
import type { TilesRaw } from './raw.js';
import { spreadText, type View } from './view.js';

export function figureTables(view: View): Table[] {
  const { connections, targets, at } = view;
  const columns = (first: string) => [first, ...connections.map((c) => `${c} conn.`)];
  /** A row per server, a cell per connection count. */
  const byServer = (caption: string, cell: (summary: ReturnType<typeof at>) => string, notes?: string[]): Table => ({
    caption,
    columns: columns('server'),
    rows: targets.map((t) => [t.name, ...connections.map((c) => cell(at(t.id, c)))]),
    ...(notes ? { notes } : {}),
  });
  const throughput = byServer('Tiles per second: median over rounds (min-max)', (s) => spreadText(s?.rps ?? null));
  const latency = byServer('Latency, ms: p50 / p99, medians over rounds (p99 min-max)', (s) => {
    if (!s?.p50 || !s.p99) return 'failed';
    const range = s.p99.n > 1 ? ` (${formatNumber(s.p99.min)}-${formatNumber(s.p99.max)})` : '';
    return `${formatNumber(s.p50.median)} / ${formatNumber(s.p99.median)}${range}`;
  });
  const cpu = byServer(
    "CPU ms an answer (all of the server's processes, user + system): median over rounds (min-max)",
    (s) => (s?.cpu ? spreadText(s.cpu, (v) => v.toFixed(3)) : '-'),
    [
      'From /proc over each measured run, divided by the answers it gave; it barely depends on how busy the machine is, ' +
        'unlike the rates. wrk is not counted. MapServer counts its nginx and FastCGI processes, rasterio its gunicorn ones.',
    ],
  );
  const ratios: Table = {
    caption: 'nadir / peer, tiles per second, from runs of the same round: median (min-max)',
    columns: columns('pair'),
    rows: view.pairs.map(([a, b]) => [
      `${view.name(a)} / ${view.name(b)}`,
      ...connections.map((c) => spreadText(view.ratio(a, b, c), (v) => v.toFixed(2))),
    ]),
    notes: [
      'Above 1: nadir answers more tiles per second. For the pass-through tiles rasterio and MapServer render from ' +
        "the older survey's COG what nadir sends as stored: the same request, answered each server's way. For the composites " +
        'all three draw the same two COGs, newer over older, into the same pixels.',
    ],
  };
  return [throughput, latency, cpu, ratios];
}

function zoomsOf(tiles: { z: number }[]): string {
  const counts = new Map<number, number>();
  for (const t of tiles) counts.set(t.z, (counts.get(t.z) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[0] - a[0])
    .map(([z, n]) => `z${z}: ${n}`)
    .join(', ');
}

export function listsTable({ lists }: TilesRaw): Table {
  const { passThrough, composite, medianBytes, scan } = lists;
  return {
    caption: 'Tile lists',
    columns: ['list', 'tiles', 'zooms', 'median bytes', 'chosen from'],
    rows: [
      [
        'pass-through (older survey alone)',
        passThrough.length,
        zoomsOf(passThrough),
        medianBytes.passThrough,
        scan.passThrough,
      ],
      ['composite jpg (both surveys)', composite.length, zoomsOf(composite), medianBytes.compositeJpg, scan.composite],
      [
        'composite png (the same tiles)',
        composite.length,
        zoomsOf(composite),
        medianBytes.compositePng,
        scan.composite,
      ],
    ],
    notes: [
      `Chosen evenly from a scan of ${scan.requested.toLocaleString('en')} tiles at zooms ${scan.zooms.join(', ')} ` +
        `(${scan.answered.toLocaleString('en')} with imagery), classified by nadir's own Server-Timing and X-Survey-Ids headers.`,
    ],
  };
}

export function encoderTable(raw: TilesRaw): Table[] {
  if (!raw.encoders?.length) return [];
  const vs = (a: number, b: number) => `${a >= b ? '+' : ''}${((a / b - 1) * 100).toFixed(0)}%`;
  return [
    {
      caption:
        "nadir's tile encoder against sharp (its encoder before) and the settings it does not use: one composite tile at a time, in-process",
      columns: ['format', 'encoder', 'setting', 'ms per tile', 'bytes per tile', 'time vs nadir', 'bytes vs nadir'],
      rows: raw.encoders.map((e) => {
        const ours = raw.encoders.find((o) => o.format === e.format && o.nadir) ?? e;
        return [
          e.format,
          e.encoder ?? 'sharp',
          e.nadir ? `**${e.setting} (nadir)**` : e.setting,
          e.msPerTile,
          Math.round(e.bytesPerTile),
          e.nadir ? '-' : vs(e.msPerTile, ours.msPerTile),
          e.nadir ? '-' : vs(e.bytesPerTile, ours.bytesPerTile),
        ];
      }),
      notes: [
        `${Math.ceil(raw.lists.composite.length / 4)} of the composite tiles (full, so without alpha), each variant over all of them, ` +
          "medians of the rounds. tile-codec is nadir's addon calling libjpeg-turbo and libdeflate on one libuv thread per encode; " +
          "sharp's figures include its pipeline set-up on the calling thread and libvips' own thread.",
      ],
    },
  ];
}

export function profileTables(raw: TilesRaw): Table[] {
  const pct = (share: number, digits: number) => `${(share * 100).toFixed(digits)}%`;
  return Object.entries(raw.profiles).map(([id, p]) => ({
    caption:
      `CPU profile of nadir, ${id} at 64 connections: self time ` +
      `(${formatNumber(p.busyMs / 1000)} s busy of ${formatNumber(p.wallMs / 1000)} s, ${p.files} process(es))`,
    columns: ['function', 'where', 'share of busy time'],
    rows: p.functions.slice(0, 12).map((f) => [f.name, f.where || '-', pct(f.share, 1)]),
    notes: [
      "Self time of a JavaScript function includes native code it calls synchronously (sharp's pipeline set-up, for one). " +
        `By origin: ${p.origins
          .slice(0, 8)
          .map((o) => `${o.name} ${pct(o.share, 0)}`)
          .join(', ')}.`,
    ],
  }));
}
