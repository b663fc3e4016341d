/** The documents part's figures as a report Section: issue 32's goals, a table per engine, the walk. */
import { type Goal, goal, type Section, type Table } from '../report/section.js';
import type { DocumentsRaw, DocumentTiming, EngineDocuments } from './documents-raw.js';

const GOAL_WMTS_MS = 200;
const GOAL_PAGE_MS = 20;
const GOAL_BLOCK_MS = 50;
const NAMES = { sqlite: 'SQLite', postgres: 'PostgreSQL' } as const;

const worst = (timings: DocumentTiming[], pick: (t: DocumentTiming) => number) =>
  timings.length ? Math.max(...timings.map(pick)) : null;

function goals(raw: DocumentsRaw): Goal[] {
  return raw.engines.flatMap((e: EngineDocuments) => {
    const wmts = e.timings.filter((t) => t.name.startsWith('WMTS'));
    const pages = e.timings.filter((t) => t.name.startsWith('STAC search') || t.name.startsWith('STAC items'));
    const blocks = [...e.timings.map((t) => t.blockMs), e.walk.blockMs];
    const name = NAMES[e.engine];
    const slowestPages = Math.max(worst(pages, (t) => t.warmMs) ?? 0, e.walk.slowestTenthMs ?? e.walk.maxPageMs);
    return [
      goal(
        `${name}: WMTS capabilities, slowest of cold and warm`,
        worst(wmts, (t) => Math.max(t.coldMs, t.maxMs)),
        GOAL_WMTS_MS,
        'ms',
        'max',
      ),
      goal(
        `${name}: STAC pages, the slowest median (each search warm; each tenth of the walk to the end)`,
        slowestPages,
        GOAL_PAGE_MS,
        'ms',
        'max',
      ),
      goal(`${name}: longest event-loop block, any request`, Math.max(...blocks), GOAL_BLOCK_MS, 'ms', 'max'),
    ];
  });
}

function engineTable(raw: DocumentsRaw, e: EngineDocuments): Table {
  return {
    caption: `${NAMES[e.engine]}: documents over ${raw.settings.surveys.toLocaleString('en')} surveys, ${raw.settings.tags.toLocaleString('en')} tags (${e.groups.toLocaleString('en')} groups)`,
    columns: [
      'document',
      'cold ms',
      'warm ms (median)',
      'warm ms (slowest)',
      'KiB',
      'CPU ms per answer',
      'longest block ms',
    ],
    rows: [...e.timings, ...e.references].map((t) => [
      t.name,
      t.coldMs,
      t.warmMs,
      t.maxMs,
      t.bytes / 1024,
      t.cpuMs,
      t.blockMs,
    ]),
    notes: [
      `Load: ${e.loadSeconds === undefined ? 'reused' : `${e.loadSeconds.toFixed(0)} s`} (${e.engine === 'sqlite' ? 'built through put, which keeps the groups' : 'bulk INSERT, then the groups rebuilt, then ANALYZE'}). Cold: the first answer of this document from a fresh server (its caches empty, the operating system's page cache not; a /health first takes the process's own first-request cost, about 80 ms of fastify's lazy start). Warm: ${raw.settings.rounds} more. CPU: this process, server and client together. The "before" rows are the old ways on the same catalogue, measured in this run: offset paging reads what it skips; describing a layer read the newest 10,000 surveys.`,
    ],
  };
}

function walkTable(raw: DocumentsRaw): Table {
  return {
    caption: `Paging to the end by next links (${raw.settings.pageLimit} items a page)`,
    columns: [
      'engine',
      'pages',
      'items',
      's',
      'median page ms',
      'p99 page ms',
      'slowest page ms',
      'first tenth ms',
      'last tenth ms',
      'slowest tenth ms',
      'longest block ms',
    ],
    rows: raw.engines.map((e) => [
      NAMES[e.engine],
      e.walk.pages,
      e.walk.items,
      e.walk.seconds,
      e.walk.medianPageMs,
      e.walk.p99PageMs ?? null,
      e.walk.maxPageMs,
      e.walk.firstTenthMs,
      e.walk.lastTenthMs,
      e.walk.slowestTenthMs ?? null,
      e.walk.blockMs,
    ]),
    notes: [
      "Keyset paging: the last tenth of the pages costs what the first tenth does, so the walk is linear in the pages. A tenth's figure is the median of its pages; the slowest single pages are the machine's moments (a collection, another process), found at no particular place in the catalogue.",
    ],
  };
}

export function documentsSection(raw: DocumentsRaw): Section {
  return {
    id: 'scale-documents',
    title: 'Scale: documents at 100,000 surveys',
    conditions: [
      `${raw.machine.cpus} cores (${raw.machine.model}); load ${raw.machine.loadStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${raw.machine.loadEnd.map((l) => l.toFixed(1)).join(' ')} at the end.`,
      'The server runs in the benchmark process (createServices + buildServer, as nadir serve builds it) on each engine in turn, one request at a time; PostgreSQL is a throwaway server on loopback (test/support/servers.ts).',
      'Surveys: bench/scale/documents-catalogue.ts (the coverage generator, 1,000 campaign tags of 1-7 days on a third of the surveys).',
      `Measured in ${(raw.seconds / 60).toFixed(1)} min.`,
    ],
    goals: goals(raw),
    tables: [...raw.engines.map((e) => engineTable(raw, e)), walkTable(raw)],
    charts: [],
    raw,
  };
}
