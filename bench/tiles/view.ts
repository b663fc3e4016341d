/** The tile figures seen per server and connection count: what the report's tables, charts and text read. */
import { formatNumber } from '../report/markdown.js';
import { ratioOf, type Spread, type Summary, summarise } from './measure.js';
import type { TilesRaw } from './raw.js';

/** Display order: nadir first, then the ceilings, then the dynamic peers. */
const ORDER = [
  'nadir-pass',
  'nadir-304',
  'nadir-jpg',
  'nadir-png',
  'nadir-pass-cluster',
  'nadir-jpg-cluster',
  'nadir-png-cluster',
  'nginx',
  'bare-node',
  'rasterio',
  'mapserver',
  'rasterio-jpg',
  'mapserver-jpg',
  'rasterio-png',
  'mapserver-png',
];
/** nadir's paths paired with the peers that answer the same requests. */
const PAIRS: [string, string][] = [
  ['nadir-pass', 'nginx'],
  ['nadir-pass-cluster', 'nginx'],
  ['nadir-pass', 'bare-node'],
  ['nadir-pass', 'rasterio'],
  ['nadir-pass', 'mapserver'],
  ['nadir-jpg', 'rasterio-jpg'],
  ['nadir-jpg-cluster', 'nadir-jpg'],
  ['nadir-png-cluster', 'nadir-png'],
  ['nadir-jpg', 'mapserver-jpg'],
  ['nadir-png', 'rasterio-png'],
  ['nadir-png', 'mapserver-png'],
];
/** Where the goals are read. */
const GOAL_CONNECTIONS = 64;

export interface View {
  raw: TilesRaw;
  connections: number[];
  goalConnections: number;
  targets: TilesRaw['targets'];
  pairs: [string, string][];
  at(id: string, connections: number): Summary | undefined;
  name(id: string): string;
  /** Median tiles/s at the goal's connection count. */
  rps(id: string): number | null;
  ratio(a: string, b: string, connections: number): Spread | null;
}

export function viewOf(raw: TilesRaw): View {
  const connections = raw.settings.connections;
  const targets = ORDER.map((id) => raw.targets.find((t) => t.id === id)).filter((t) => t !== undefined);
  const summaries = summarise(raw.points, targets, connections);
  const at = (id: string, c: number) => summaries.find((s) => s.target === id && s.connections === c);
  const goalConnections = connections.includes(GOAL_CONNECTIONS) ? GOAL_CONNECTIONS : (connections.at(-1) as number);
  const has = (id: string) => targets.some((t) => t.id === id);
  return {
    raw,
    connections,
    goalConnections,
    targets,
    pairs: PAIRS.filter(([a, b]) => has(a) && has(b)),
    at,
    name: (id) => raw.targets.find((t) => t.id === id)?.name ?? id,
    rps: (id) => at(id, goalConnections)?.rps?.median ?? null,
    ratio: (a, b, c) => ratioOf(raw.points, a, b, c),
  };
}

/** "median (min-max)", or the median alone when there is no spread. */
export function spreadText(s: Spread | null, format: (v: number) => string = formatNumber): string {
  if (!s) return 'failed';
  return s.n > 1 && s.max > s.min ? `${format(s.median)} (${format(s.min)}-${format(s.max)})` : format(s.median);
}
