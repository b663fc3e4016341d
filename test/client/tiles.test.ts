/**
 * Tiles through the client against a real `nadir serve` over the demo town: a 429 waited out,
 * an export killed and resumed then opened with GDAL (pixels equal to the served tiles), a
 * PMTiles export read back, and a panorama layer laid out by the client's grid math.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { displaySize, NadirClient, panoramaGrid, type RetryWait, tileRange, timerSleep } from '@nadir/client';
import { DEMO_LANDMARKS } from '@nadir/demo-town';
import gdal from 'gdal-async';
import { PMTiles, type Source } from 'pmtiles';
import sharp from 'sharp';
import { type DemoServer, NADIR_CLIENT, nadirClient, startDemoServer } from './demo-server.js';

const STORE = DEMO_LANDMARKS.find((l) => l.id === 'red-roof-store') as (typeof DEMO_LANDMARKS)[number];
const MID = '0b8e4d27-91c3-4f6a-b2e5-7c9d1a3e5f02'; // 2025-04-02, the store built
const BBOX = {
  west: STORE.lon - 0.0009,
  south: STORE.lat - 0.0007,
  east: STORE.lon + 0.0009,
  north: STORE.lat + 0.0007,
};
const HALF_WORLD = 20037508.342789244;

async function rgba(bytes: Uint8Array, width = 256, height = 256): Promise<Buffer> {
  return sharp(bytes).resize(width, height, { fit: 'fill' }).ensureAlpha().raw().toBuffer();
}

describe('tiles from a real nadir serve', () => {
  let demo: DemoServer;
  before(async () => {
    demo = await startDemoServer();
  });
  after(() => demo?.close());

  test('a burst over the rate limit gets 429s, which the client waits out: every tile arrives', async () => {
    const { name, apiKey } = await demo.account('client-429');
    // Set as an operator would, on the running server: 3 tiles per second.
    const limited = await demo.command('accounts', 'rate-limit', name, '3', '--interval', '1');
    assert.match(limited, /3/);
    const waits: RetryWait[] = [];
    const client = new NadirClient({ baseUrl: demo.url, apiKey, sleep: timerSleep, onRetryWait: (w) => waits.push(w) });
    const range = tileRange(BBOX, 19);
    const requests = [];
    // Ten at once: the server counts in fixed 1 s windows, and a burst that straddles a window's
    // end gets 3 + 3 through; at least 4 are refused and waited out either way (seen in CI with
    // seven: 3 refused).
    for (let i = 0; i < 10; i++)
      requests.push(client.tile({ type: 'Vert', tile: { z: 19, x: range.minX, y: range.minY }, format: 'png' }));
    const answers = await Promise.all(requests);
    assert.ok(answers.every((a) => a?.contentType === 'image/png'));
    const refused = waits.filter((w) => w.why === 'rate-limited' && w.status === 429);
    assert.ok(refused.length >= 4, `429s waited out: ${JSON.stringify(waits)}`);
    assert.ok(
      refused.every((w) => w.ms <= 1000),
      'each wait is what Retry-After said, at most the 1 s window',
    );
  });

  test('tiles export to MBTiles: paced, killed and resumed, opened by GDAL with the served pixels', async () => {
    const { apiKey } = await demo.account('client-export', { limit: 20, intervalSeconds: 1 });
    const env = { NADIR_URL: demo.url, NADIR_API_KEY: apiKey };
    const out = join(demo.scratch, 'town.mbtiles');
    const bbox = `${BBOX.west},${BBOX.south},${BBOX.east},${BBOX.north}`;
    const args = ['tiles', 'export', '--bbox', bbox, '--zoom', '18-20', '--out', out, '--survey', MID];
    const child = spawn(process.execPath, [NADIR_CLIENT, ...args], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // 20 tiles a second: killed after the first window, well before the end.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    child.kill('SIGKILL');
    await exited;
    assert.ok((await stat(out)).size > 0);
    const resumed = await nadirClient(env, ...args, '--json');
    assert.equal(resumed.code, 0, resumed.stderr);
    const result = JSON.parse(resumed.stdout) as { total: number; written: number; fetched: number };
    assert.ok(result.fetched < result.total, `resumed: ${JSON.stringify(result)}`);
    assert.ok(result.written > 0);

    const client = new NadirClient({ baseUrl: demo.url, apiKey });
    const dataset = await gdal.openAsync(out);
    try {
      assert.equal(dataset.driver.description, 'MBTiles');
      const [originX, pixel, , originY] = dataset.geoTransform as number[];
      assert.ok(Math.abs((pixel as number) - (2 * HALF_WORLD) / 2 ** 20 / 256) < 1e-9, 'full resolution is zoom 20');
      const range = tileRange(BBOX, 20);
      // An inner tile: inside the bounds GDAL reads, and with the store on it.
      const tile = { z: 20, x: range.minX + 1, y: range.minY + 1 };
      const left = Math.round(
        (-HALF_WORLD + tile.x * 256 * (pixel as number) - (originX as number)) / (pixel as number),
      );
      const top = Math.round(
        ((originY as number) - (HALF_WORLD - tile.y * 256 * (pixel as number))) / (pixel as number),
      );
      const bands = [1, 2, 3, 4].map((b) => dataset.bands.get(b).pixels.read(left, top, 256, 256) as Uint8Array);
      const served = await client.tile({ type: 'Vert', tile, format: 'png', surveyId: MID });
      assert.ok(served);
      const expected = await rgba(served.bytes);
      let differing = 0;
      for (let i = 0; i < 256 * 256; i++) {
        for (let b = 0; b < 4; b++) if ((bands[b] as Uint8Array)[i] !== expected[i * 4 + b]) differing++;
      }
      assert.equal(differing, 0, `GDAL's pixels of ${tile.z}/${tile.x}/${tile.y} equal the served tile`);
    } finally {
      dataset.close();
    }
  });

  test('tiles export to PMTiles: each tile the bytes the server sent', async () => {
    const { apiKey } = await demo.account('client-pmtiles');
    const env = { NADIR_URL: demo.url, NADIR_API_KEY: apiKey };
    const out = join(demo.scratch, 'town.pmtiles');
    const bbox = `${BBOX.west},${BBOX.south},${BBOX.east},${BBOX.north}`;
    const made = await nadirClient(
      env,
      'tiles',
      'export',
      '--bbox',
      bbox,
      '--zoom',
      '19',
      '--format',
      'jpg',
      '--out',
      out,
      '--json',
    );
    assert.equal(made.code, 0, made.stderr);
    // Off a terminal too: the plan first, progress, and no listener warnings from the shared signal.
    assert.match(made.stderr, /^.*town\.pmtiles: \d+ of \d+ tiles to fetch, up to [\d.]+ KB, about \d+ s at about /);
    assert.match(made.stderr, /overall \[#{24}\] 100%/);
    assert.doesNotMatch(made.stderr, /MaxListenersExceeded|Warning/);
    const bytes = new Uint8Array(await readFile(out));
    const source: Source = {
      getKey: () => out,
      getBytes: async (offset, length) => ({ data: bytes.slice(offset, offset + length).buffer }),
    };
    const archive = new PMTiles(source);
    const header = await archive.getHeader();
    assert.deepEqual([header.minZoom, header.maxZoom, header.tileType], [19, 19, 3]);
    const client = new NadirClient({ baseUrl: demo.url, apiKey });
    const range = tileRange(BBOX, 19);
    const tile = { z: 19, x: range.minX, y: range.minY };
    const served = await client.tile({ type: 'Vert', tile, format: 'jpg' });
    const stored = await archive.getZxy(tile.z, tile.x, tile.y);
    assert.ok(served && stored);
    assert.deepEqual(new Uint8Array(stored.data), served.bytes);
  });

  test('an East panorama laid out by panoramaGrid at 256x192 puts the red roof where the rotated map has it', async () => {
    const { apiKey } = await demo.account('client-panorama');
    const client = new NadirClient({ baseUrl: demo.url, apiKey });
    const z = 19;
    const n = 2 ** z;
    // The store's position in server tile units, and a 3x3 block of server tiles around it.
    const fx = ((STORE.lon + 180) / 360) * n;
    const sin = Math.sin((STORE.lat * Math.PI) / 180);
    const fy = (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * n;
    const block = {
      minX: Math.floor(fx) - 1,
      minY: Math.floor(fy) - 1,
      maxX: Math.floor(fx) + 1,
      maxY: Math.floor(fy) + 1,
    };
    const grid = panoramaGrid('East', z, block);
    const { width, height } = displaySize('East');
    const mosaic = Buffer.alloc(3 * width * 3 * height * 4);
    for (const [row, tiles] of grid.entries()) {
      for (const [column, tile] of tiles.entries()) {
        const answer = await client.tile({ type: 'East', tile, format: 'png', surveyId: MID });
        if (!answer) continue;
        const pixels = await rgba(answer.bytes, width, height);
        for (let y = 0; y < height; y++) {
          pixels.copy(
            mosaic,
            ((row * height + y) * 3 * width + column * width) * 4,
            y * width * 4,
            (y + 1) * width * 4,
          );
        }
      }
    }
    // North-up position of the store in the block (0..3 tiles), turned 270 degrees clockwise
    // (east up): (u, v) -> (v, 3 - u); then each tile is drawn 256 wide and 192 high.
    const u = fx - block.minX;
    const v = fy - block.minY;
    const expected = { x: v * width, y: (3 - u) * height };
    let sx = 0;
    let sy = 0;
    let count = 0;
    for (let i = 0; i < mosaic.length / 4; i++) {
      const [r, g, b, a] = [mosaic[i * 4], mosaic[i * 4 + 1], mosaic[i * 4 + 2], mosaic[i * 4 + 3]] as number[];
      if (a === 255 && Math.abs((r as number) - 205) < 45 && (g as number) < 80 && (b as number) < 80) {
        sx += i % (3 * width);
        sy += Math.floor(i / (3 * width));
        count++;
      }
    }
    assert.ok(count > 50, `red roof pixels: ${count}`);
    const found = { x: sx / count, y: sy / count };
    const distance = Math.hypot(found.x - expected.x, found.y - expected.y);
    // An 8 m roof seen at 45 degrees leans about 8 m: some 30 pixels at zoom 19.
    assert.ok(
      distance < 48,
      `roof at ${found.x.toFixed(0)},${found.y.toFixed(0)}, expected ${expected.x.toFixed(0)},${expected.y.toFixed(0)}`,
    );
  });
});
