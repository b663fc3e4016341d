/**
 * A city-size tile export against a real `nadir serve` over the demo town, for docs/client.md's
 * figures: the client's exportTiles (the code `nadir-client tiles export` runs) with N tiles that
 * all have imagery. The demo town is a few hundred metres across (about 250 tiles at z20), so the
 * export's z20 box of N tiles is mapped onto the town's block of tiles, each asked for again
 * (a real HTTP request, a real PNG, stored under its own tile number): the export's bookkeeping,
 * pacing, MBTiles and PMTiles writing see N distinct tiles with real imagery.
 *
 *   node --import tsx bench/client-export/main.ts --url URL --key KEY --out FILE.pmtiles [--tiles 50000]
 *
 * Prints the wall time, the tiles per second, the file's size and the process's peak RSS
 * (sampled every 100 ms) as JSON.
 */
import { parseArgs } from 'node:util';
import { NadirClient, timerSleep } from '@nadir/client';
import { exportTiles } from '@nadir/client/node';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    key: { type: 'string' },
    out: { type: 'string' },
    tiles: { type: 'string', default: '50000' },
    concurrency: { type: 'string', default: '4' },
  },
});
if (!values.url || !values.key || !values.out) throw new Error('--url, --key and --out are required');

/** The demo town's middle at z20 (docs/client.md's point) and the block of its tiles asked for again. */
const TOWN = { x: 275489, y: 432798 };
const BLOCK = 12;
const side = Math.ceil(Math.sqrt(Number(values.tiles)));
const z = 20;
const n = 2 ** z;
// A box of side x side tiles at z20, far from the town: its own tiles have no imagery at all.
const origin = { x: 100_000, y: 100_000 };
const lon = (x: number) => (x / n) * 360 - 180;
const lat = (y: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / n))) * 180) / Math.PI;
const inset = 0.25; // a quarter tile inside the edges, so the box touches exactly side x side tiles
const bbox = {
  west: lon(origin.x + inset),
  east: lon(origin.x + side - inset),
  north: lat(origin.y + inset),
  south: lat(origin.y + side - inset),
};

/** The fetch the client sends through: a tile of the box becomes the town's tile at the same place in the block. */
const townFetch: typeof fetch = (input, init) => {
  const url = new URL(String(input));
  const match = /^\/tiles\/v3\/(\w+)\/(\d+)\/(\d+)\/(\d+)\.(\w+)$/.exec(url.pathname);
  if (match) {
    const x = TOWN.x - BLOCK / 2 + ((Number(match[3]) - origin.x) % BLOCK);
    const y = TOWN.y - BLOCK / 2 + ((Number(match[4]) - origin.y) % BLOCK);
    url.pathname = `/tiles/v3/${match[1]}/${match[2]}/${x}/${y}.${match[5]}`;
  }
  return fetch(url, init);
};

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 100);
const client = new NadirClient({ baseUrl: values.url, apiKey: values.key, fetch: townFetch, sleep: timerSleep });
const started = Date.now();
const result = await exportTiles(client, {
  bbox,
  minZoom: z,
  maxZoom: z,
  type: 'Vert',
  format: 'png',
  out: values.out,
  concurrency: Number(values.concurrency),
});
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
const seconds = (Date.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({ ...result, tilesPerSecond: Number((result.fetched / seconds).toFixed(1)), peakRssMB: Math.round(peakRss / 2 ** 20) }, null, 2)}\n`,
);
