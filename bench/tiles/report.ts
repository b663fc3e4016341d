/** The tile benchmark's figures as a report Section: goals, tables, charts, what they say, conditions. */
import { formatNumber } from '../report/markdown.js';
import { writeSectionPage } from '../report/page.js';
import { type Goal, goal, type Section } from '../report/section.js';
import type { TilesRaw } from './raw.js';
import { tileCharts } from './report-charts.js';
import { encoderTable, figureTables, listsTable, profileTables } from './report-tables.js';
import { type View, viewOf } from './view.js';

export function tilesSection(raw: TilesRaw): Section {
  const view = viewOf(raw);
  const failures = raw.points
    .filter((p) => p.error)
    .map((p) => `${view.name(p.target)} at ${p.connections} connections, round ${p.round + 1}: ${p.error}`);
  const findings = readings(view);
  if (failures.length > 0) {
    findings.push(`**${failures.length} run(s) failed their status check** and are left out: ${failures.join('; ')}.`);
  }
  return {
    id: 'tiles',
    title: 'Map tiles',
    conditions: conditions(view),
    goals: goals(view),
    tables: [...figureTables(view), listsTable(raw), ...encoderTable(raw), ...profileTables(raw)],
    charts: tileCharts(view),
    findings,
    failures,
    raw,
  };
}

/** docs/benchmarks-tiles.md and the section's charts in docs/benchmarks/ (or, with `print`, the page on stdout). */
export function writeTilesPage(section: Section, command: string, quick: boolean, print = false): Promise<void> {
  return writeSectionPage(section, { heading: 'Map tile benchmark', command, quick, print });
}

/** Issues #5 and #6's tile goals, read at 64 connections. */
function goals(view: View): Goal[] {
  const c = view.goalConnections;
  const p99 = (id: string) => view.at(id, c)?.p99?.median ?? null;
  const share = (id: string) => {
    const ratio = view.ratio(id, 'nginx', c);
    return ratio ? ratio.median * 100 : null;
  };
  const workers = view.raw.nadirClusterProcesses - 1;
  /** One goal for one process and for `--workers auto` (the `-cluster` targets). */
  const both = (label: string, value: (id: string) => number | null, id: string, target: number, unit: string) => [
    goal(`${label}, ${c} connections, 1 process`, value(id), target, unit, unit === 'ms' ? 'max' : 'min'),
    goal(
      `${label}, ${c} connections, ${workers} workers`,
      value(`${id}-cluster`),
      target,
      unit,
      unit === 'ms' ? 'max' : 'min',
    ),
  ];
  return [
    ...both("pass-through tiles/s as a share of nginx's", share, 'nadir-pass', 50, '%'),
    ...both('composite jpg tiles/s', view.rps, 'nadir-jpg', 1000, 'tiles/s'),
    ...both('composite png tiles/s', view.rps, 'nadir-png', 500, 'tiles/s'),
    ...both('composite jpg p99', p99, 'nadir-jpg', 50, 'ms'),
    ...both('composite png p99', p99, 'nadir-png', 50, 'ms'),
    // A closed loop of 64 connections cannot have a p99 under 50 ms below 1,280 tiles/s (Little's
    // law); the latency at a load where the png goal's rate is still served says what a client sees.
    goal(
      `composite png p99, 8 connections (${formatNumber(view.at('nadir-png', 8)?.rps?.median ?? 0)} tiles/s)`,
      view.at('nadir-png', 8)?.p99?.median ?? null,
      50,
      'ms',
      'max',
    ),
    // Issue #6: a two-survey composite against the peers rendering ONE COG.
    goal(
      `composite jpg (2 surveys) / rasterio tiler (one COG), ${c} connections`,
      view.ratio('nadir-jpg', 'rasterio', c)?.median ?? null,
      5,
      'x',
      'min',
    ),
    goal(
      `composite jpg (2 surveys) / MapServer (one COG), ${c} connections`,
      view.ratio('nadir-jpg', 'mapserver', c)?.median ?? null,
      1.5,
      'x',
      'min',
    ),
  ];
}

function conditions({ raw, connections, name }: View): string[] {
  const { settings, machine, versions } = raw;
  const loads = (l: number[]) => l.map((x) => x.toFixed(1)).join(' / ');
  const differences = Object.entries(raw.pixelDifference)
    .filter((e): e is [string, number] => e[1] !== undefined && !e[0].startsWith('nadir'))
    .map(([id, d]) => `${name(id)} ${d.toFixed(1)}`);
  const gunicorn = (versions.gunicorn ?? '').replace(/.*version /, '').replace(')', '');
  return [
    `Machine: ${machine.cpus} cores (${machine.model}); load average ${loads(machine.loadStart)} at the start, ` +
      `${loads(machine.loadEnd)} at the end. wrk runs on the same machine with ${settings.threads} threads, ` +
      'so it shares the cores with the server it drives.',
    `Software: Node ${versions.node}, ${versions.wrk}, ${versions.nginx}, ${versions.gdal}, ${versions.mapserver}, ` +
      `gunicorn ${gunicorn}, ${versions.rasterio} (Debian packages).`,
    `Data: a catalogue of ${raw.data.surveys} surveys (the demo town's, plus two synthetic ones measured here) written by ` +
      '`nadir demo` and `nadir ingest`. The older synthetic survey is 8192 x 8192 px at 7.5 cm (the demo town picture ' +
      'repeated: aerial texture, so JPEG sizes are those of imagery), fully valid; the newer one covers the same square ' +
      'from a post-storm picture with an alpha band leaving an irregular footprint, diagonal stripes and round holes, ' +
      'so it is drawn over the older one in many tiles.',
    `Load: wrk 4.1, closed loop, keep-alive, ${connections.join(', ')} connections, each thread starting at its own ` +
      `place in the tile list and walking it round robin. ${settings.rounds} round(s); in each, every server in turn ` +
      `(the order rotates between rounds), ${settings.warmupSeconds} s of warm-up thrown away, the server left to ` +
      `finish what the warm-up left queued, then ${settings.seconds} s measured. Medians over rounds, spread min-max.`,
    'Warm caches: before measuring, every URL of every server was requested once. nadir: `bin/nadir serve` ' +
      `(compiled, UV_THREADPOOL_SIZE=16), ${raw.nadirProcesses} process(es), NADIR_TILE_CACHE_MB=${settings.cacheMb} ` +
      `(decoded tiles) per process, NADIR_LOG_LEVEL=warn; and \`bin/nadir serve --workers auto\` (a primary and ` +
      `${raw.nadirClusterProcesses - 1} workers, each with its own caches, warmed by 4 s of load before measuring). ` +
      `Its tile encoder links libjpeg-turbo and libdeflate (${raw.versions.codec ?? '?'}). ` +
      `GDAL contenders: GDAL_CACHEMAX=${settings.cacheMb} MB per process.`,
    "nginx: 2 workers, sendfile, open_file_cache, serving the pass-through tiles' exact bytes from disk (the page " +
      `cache): the ceiling for those tiles. Bare Node: node:http in one process answering a fixed ` +
      `${formatNumber(settings.bareBodyBytes / 1000)} KB body to the same paths: the ceiling of one event loop here.`,
    "rasterio: bench/contenders/rasterio_tiler.py (rio-tiler's path: a windowed, masked read per COG, bilinear; " +
      "composites as rio-tiler's mosaic_reader, newest first, each filling what the ones above left masked; encoded " +
      'by GDAL) under gunicorn, 2 sync workers, which close the connection after each answer, so each request also ' +
      "pays a loopback connect. MapServer: WMS 1.3.0 GetMap for the tile's bounds (composites: one layer group, the " +
      'newer COG over the older, drawn through its mask), 2 mapserv FastCGI processes behind nginx (1 worker). ' +
      "Both encode JPEG at quality 85, like nadir's composites (nadir's pass-through tiles are the COG's own " +
      "quality-90 JPEGs), and PNG at zlib level 1 (nadir: its own encoder, in the encoder table). Mean |pixel difference| from the reference tile (nadir's, or the " +
      `pre-cut file), of 255, worst of three tiles: ${differences.join(', ') || 'not checked'}.`,
    'Every answer of every run was checked: 200 (304 for revalidation, where each URL carries its own ETag in ' +
      `If-None-Match). Whole run: ${formatNumber(raw.seconds / 60)} min.`,
  ];
}

/** Plain statements of what the figures say, with the numbers in them. */
function readings(view: View): string[] {
  const { raw, rps } = view;
  const c = view.goalConnections;
  const f = (v: number | null) => (v === null ? '?' : formatNumber(v));
  const pct = (a: number | null, b: number | null) => (a !== null && b ? `${((a / b) * 100).toFixed(0)}%` : '?');
  const times = (a: number | null, b: number | null) => (a !== null && b ? (a / b).toFixed(1) : '?');
  const tail = (id: string) => {
    const s = view.at(id, c);
    return s?.p50 && s.p99 ? `${times(s.p99.median, s.p50.median)} x` : '?';
  };
  const cpuAt = (id: string) => view.at(id, c)?.cpu?.median ?? null;
  const lines = [
    `At ${c} connections nadir's pass-through answers ${f(rps('nadir-pass'))} tiles/s, ` +
      `${pct(rps('nadir-pass'), rps('nginx'))} of nginx's ${f(rps('nginx'))} for the same bytes; the bare node:http ` +
      `server, one event loop with nothing to do but answer, reaches ${f(rps('bare-node'))}. nadir answers these ` +
      `through node:http as well (its tile lane, docs/tiles.md), at ${pct(rps('nadir-pass'), rps('bare-node'))} of ` +
      `that node:http ceiling, at ${times(cpuAt('nadir-pass'), cpuAt('bare-node'))} x its CPU an answer; nginx (2 workers, sendfile, no JavaScript) is ` +
      `${times(rps('nginx'), rps('bare-node'))} x it.`,
    `Tails at ${c} connections, p99 / p50: nadir pass-through ${tail('nadir-pass')}, composite jpg ${tail('nadir-jpg')}, ` +
      `composite png ${tail('nadir-png')}; nginx ${tail('nginx')}, bare Node ${tail('bare-node')}, ` +
      `MapServer composite jpg ${tail('mapserver-jpg')}.`,
    `With \`--workers auto\` (${raw.nadirClusterProcesses - 1} workers) the pass-through answers ` +
      `${f(rps('nadir-pass-cluster'))} tiles/s, composite jpg ${f(rps('nadir-jpg-cluster'))} and png ` +
      `${f(rps('nadir-png-cluster'))}, against ${f(rps('nadir-pass'))}, ${f(rps('nadir-jpg'))} and ` +
      `${f(rps('nadir-png'))} from one process, on ${raw.machine.cpus} cores that wrk shares.`,
    `In a closed loop every connection waits for its answer, so the mean latency is ${c} / throughput: png at ` +
      `${f(rps('nadir-png'))} tiles/s means ${f(rps('nadir-png') ? (c / (rps('nadir-png') as number)) * 1000 : null)} ms ` +
      `on average, and a p99 within 50 ms at ${c} connections needs at least ${f((c / 50) * 1000)} tiles/s whatever ` +
      `the server. At 8 connections png runs at ${f(view.at('nadir-png', 8)?.rps?.median ?? null)} tiles/s with a ` +
      `p99 of ${f(view.at('nadir-png', 8)?.p99?.median ?? null)} ms.`,
    `Revalidation (304) runs at ${f(rps('nadir-304'))} requests/s: the key verified and counted, the catalogue's ` +
      'change marker checked against the remembered answer, and no pixel at all.',
    `Composites: nadir draws ${f(rps('nadir-jpg'))} jpg and ${f(rps('nadir-png'))} png tiles/s from the two surveys; ` +
      `from the same COGs rasterio draws ${f(rps('rasterio-jpg'))} and ${f(rps('rasterio-png'))}, MapServer ` +
      `${f(rps('mapserver-jpg'))} and ${f(rps('mapserver-png'))}, each in one process per core. From one COG (the ` +
      `pass-through tiles) rasterio renders ${f(rps('rasterio'))} and MapServer ${f(rps('mapserver'))} tiles/s, ` +
      'where nadir sends the stored tile.',
  ];
  for (const [id, p] of Object.entries(raw.profiles)) {
    const share = (x: { share: number }) => `${(x.share * 100).toFixed(0)}%`;
    const origins = p.origins.slice(0, 4).map((o) => `${o.name} ${share(o)}`);
    const top = p.functions.slice(0, 3).map((fn) => `${[fn.name, fn.where].join(' ').trim()} (${share(fn)})`);
    lines.push(
      `Profile, ${id}: the main thread was busy ${pct(p.busyMs, p.wallMs)} of the measured run; by origin ` +
        `${origins.join(', ')}; top functions ${top.join(', ')}.`,
    );
  }
  return lines;
}
