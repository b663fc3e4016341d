/** The cold part's figures as a report Section: each server side by side, goals, CPU and profile. */
import type { Goal, Section, Table } from '../report/section.js';
import { goal } from '../report/section.js';
import type { ColdFormat, ColdPoint, ColdRaw } from './cold-raw.js';
import { ratioOf, spreadOf } from './measure.js';

const GOALS = { jpgPerSecond: 1200, jpgP99Ms: 100, pngPerSecond: 700 };

function pointsOf(raw: ColdRaw, target: string, format: ColdFormat, connections: number): ColdPoint[] {
  return raw.points.filter(
    (p) => p.target === target && p.format === format && p.connections === connections && !p.error,
  );
}

function medianOf(points: ColdPoint[], value: (p: ColdPoint) => number): number | null {
  return spreadOf(points.map(value))?.median ?? null;
}

const cpuEach = (p: ColdPoint) => (p.requests > 0 ? p.cpu.totalMs / p.requests : Number.NaN);

/** A thread's share of nadir's CPU: the event loop, or the others (Node 20 names none of its threads). */
function threadKind(name: string): 'event loop' | 'other threads' {
  return name === 'main thread' ? 'event loop' : 'other threads';
}

function byKind(p: ColdPoint | { cpu: ColdPoint['cpu']; requests: number }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, ms] of Object.entries(p.cpu.byThread)) {
    const kind = threadKind(name);
    out[kind] = (out[kind] ?? 0) + ms / Math.max(1, p.requests);
  }
  return out;
}

function figureTable(raw: ColdRaw, format: ColdFormat): Table {
  const [few, many] = [Math.min(...raw.settings.connections), Math.max(...raw.settings.connections)];
  return {
    caption: `Cold composite ${format} tiles, each asked for once: tiles/s, latency (ms), server CPU per tile (ms)`,
    columns: [
      'server',
      `c${few} tiles/s`,
      `c${few} p50`,
      `c${few} p99`,
      `c${many} tiles/s`,
      `c${many} p50`,
      `c${many} p99`,
      `CPU ms/tile c${many}`,
      'load (1 min)',
    ],
    rows: raw.targets.map((t) => {
      const a = pointsOf(raw, t.id, format, few);
      const b = pointsOf(raw, t.id, format, many);
      return [
        t.name,
        medianOf(a, (p) => p.requestsPerSecond),
        medianOf(a, (p) => p.p50Ms),
        medianOf(a, (p) => p.p99Ms),
        medianOf(b, (p) => p.requestsPerSecond),
        medianOf(b, (p) => p.p50Ms),
        medianOf(b, (p) => p.p99Ms),
        medianOf(b, cpuEach),
        medianOf([...a, ...b], (p) => p.load),
      ];
    }),
    notes: [
      `Medians of ${raw.settings.rounds} round(s); wrk ${raw.settings.threads} threads, at most ${raw.settings.seconds} s a run. CPU: all the server's processes (from /proc) over the run, divided by the tiles answered; wrk's own is not in it. Load: the machine's 1-minute load average as each run started (2 cores; wrk and the server alone make about 2).`,
    ],
  };
}

function threadTable(raw: ColdRaw): Table {
  const many = Math.max(...raw.settings.connections);
  const kinds = ['event loop', 'other threads'];
  const rows = raw.targets
    .filter((t) => t.id.startsWith('nadir'))
    .flatMap((t) =>
      raw.settings.formats.map((format) => {
        const points = pointsOf(raw, t.id, format, many);
        return [`${t.name}, ${format}`, ...kinds.map((kind) => medianOf(points, (p) => byKind(p)[kind] ?? 0))];
      }),
    );
  return {
    caption: `Where nadir's CPU goes at ${many} connections: ms per tile by thread`,
    columns: ['server', ...kinds],
    rows,
    notes: [
      "The event loop runs HTTP, planning and each request's JavaScript; the other threads are the libuv pool (the tile-codec addon's decodes, composites and encodes; file reads) and V8's garbage collector helpers.",
    ],
  };
}

function idleTable(raw: ColdRaw): Table {
  return {
    caption: 'One tile at a time on an idle server (tile cache 0): Server-Timing medians, ms',
    columns: ['server', 'format', 'tiles', 'render', 'catalogue', 'client wall'],
    rows: raw.idle.map((i) => [
      raw.targets.find((t) => t.id === i.target)?.name ?? i.target,
      i.format,
      i.tiles,
      i.renderMs,
      i.catalogueMs,
      i.wallMs,
    ]),
  };
}

function profileTables(raw: ColdRaw): Table[] {
  return Object.entries(raw.profiles).map(([id, profile]) => profileTable(raw, id, profile));
}

function profileTable(raw: ColdRaw, id: string, profile: ColdRaw['profiles'][string]): Table {
  const each = (ms: number) => ms / Math.max(1, profile.requests);
  const name = raw.targets.find((t) => t.id === id)?.name ?? id;
  return {
    caption: `${name}: the event loop under cold jpg load (64 connections, ${profile.tilesPerSecond.toFixed(0)} tiles/s under the profiler): V8 CPU profile, self time`,
    columns: ['function', 'where', 'share of busy', 'ms per tile'],
    rows: [
      ...profile.summary.origins.slice(0, 6).map((o) => [`all of ${o.name}`, '', o.share * 100, each(o.ms)]),
      ...profile.summary.functions.slice(0, 12).map((f) => [f.name, f.where, f.share * 100, each(f.ms)]),
    ],
    notes: [
      `Busy ${(profile.summary.busyMs / 1000).toFixed(1)} s of ${(profile.summary.wallMs / 1000).toFixed(1)} s on the event loop. Threads over the same run, ms per tile: ${Object.entries(
        byKind(profile),
      )
        .map(([kind, ms]) => `${kind} ${ms.toFixed(3)}`)
        .join(', ')}; all processes ${each(profile.cpu.totalMs).toFixed(3)}.`,
      "The profiler samples the event loop by the clock: on a machine with more runnable threads than cores, the time the event loop waited for a core counts against the call it had just made, most often one that woke a pool thread (encodeJpeg, which queues the decodes, composite and encode; read). So its ms per tile can exceed the event loop's CPU time from /proc.",
    ],
  };
}

function goals(raw: ColdRaw): Goal[] {
  const many = Math.max(...raw.settings.connections);
  const jpg = pointsOf(raw, 'nadir-0', 'jpg', many);
  const png = pointsOf(raw, 'nadir-0', 'png', many);
  return [
    goal(
      `cold composite jpg tiles/s at ${many} connections (tile cache 0)`,
      medianOf(jpg, (p) => p.requestsPerSecond),
      GOALS.jpgPerSecond,
      'tiles/s',
      'min',
    ),
    goal(
      `cold composite jpg p99 at ${many} connections`,
      medianOf(jpg, (p) => p.p99Ms),
      GOALS.jpgP99Ms,
      'ms',
      'max',
    ),
    goal(
      `cold composite png tiles/s at ${many} connections (tile cache 0)`,
      medianOf(png, (p) => p.requestsPerSecond),
      GOALS.pngPerSecond,
      'tiles/s',
      'min',
    ),
  ];
}

/** nadir (tile cache 0) against each other server, per round at the most connections: medians of the per-round ratios. */
function readings(raw: ColdRaw): string[] {
  const many = Math.max(...raw.settings.connections);
  const lines: string[] = [];
  for (const format of raw.settings.formats) {
    const points = raw.points.filter((p) => p.format === format);
    const ratios = raw.targets
      .filter((t) => t.id !== 'nadir-0')
      .map((t) => {
        const ratio = ratioOf(points, 'nadir-0', t.id, many);
        const cpu = [pointsOf(raw, 'nadir-0', format, many), pointsOf(raw, t.id, format, many)].map((p) =>
          medianOf(p, cpuEach),
        );
        const cpuText = cpu[0] && cpu[1] ? `, ${(cpu[1] / cpu[0]).toFixed(1)}x its CPU per tile` : '';
        return ratio
          ? `${ratio.median.toFixed(2)}x ${t.name} (rounds ${ratio.min.toFixed(2)}-${ratio.max.toFixed(2)}${cpuText})`
          : '';
      })
      .filter(Boolean);
    if (ratios.length > 0)
      lines.push(`Cold ${format} at ${many} connections, nadir with tile cache 0 draws ${ratios.join('; ')}.`);
  }
  return lines;
}

export function coldSection(raw: ColdRaw): Section {
  const failures = raw.points
    .filter((p) => p.error)
    .map((p) => `${p.target} ${p.format} at ${p.connections} connections, round ${p.round + 1}: ${p.error}`);
  const zooms = Object.entries(raw.byZoom)
    .map(([z, n]) => `z${z} ${n}`)
    .join(', ');
  const differences = Object.entries(raw.pixelDifference)
    .map(([id, d]) => `${id} ${d.toFixed(2)}`)
    .join(', ');
  return {
    id: 'cold',
    title: 'Cold tiles: composites nothing has drawn before',
    conditions: [
      `${raw.machine.cpus} cores (${raw.machine.model}), shared with wrk and other work; load ${raw.machine.loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${raw.machine.loadEnd.map((l) => l.toFixed(1)).join(' ')} at the end.`,
      `Two surveys over one 16,384 px square at 7.5 cm (bench/tiles/cold-data.ts): the newer one striped with gaps every 36 m, a ragged edge and holes, over a full older one. ${raw.measuredTiles} composite tiles drawn from both (${zooms}), shuffled, each asked for once per run; ${raw.settings.warmupTiles} more set aside for a ${raw.settings.warmupSeconds} s warm-up before each run.`,
      `nadir is started afresh for every run (tile cache ${raw.settings.defaultCacheMb} MB, its default, and 0); MapServer (2 FastCGI processes behind nginx) and the rasterio tiler (2 gunicorn workers) draw the same tiles from the same two COGs with GDAL_CACHEMAX=${raw.settings.gdalCacheMb}. Largest mean |pixel difference| from nadir's tile over 3 tiles: ${differences}.`,
      `Each run lasts ${raw.settings.seconds} s or until the list is walked, whichever comes first (${walkedRuns(raw)}); a walked run's tiles/s is its requests over the time from its first request to its last thread's stop (bench/load/wrk.ts: wrk's own rate divides by the whole ${raw.settings.seconds} s).`,
      `Measured in ${(raw.seconds / 60).toFixed(1)} min.`,
    ],
    goals: goals(raw),
    tables: [
      ...raw.settings.formats.map((format) => figureTable(raw, format)),
      threadTable(raw),
      idleTable(raw),
      ...profileTables(raw),
    ],
    charts: [],
    findings: readings(raw),
    failures,
    raw,
  };
}

function walkedRuns(raw: ColdRaw): string {
  const walked = raw.points.filter((point) => point.walkedSeconds !== undefined).length;
  return `${walked} of ${raw.points.length} runs walked it`;
}
