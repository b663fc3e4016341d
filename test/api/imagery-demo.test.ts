/** Downloads over the demo town: every type and format, and landmarks where the geometry says. */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_LANDMARKS } from '@nadir/demo-town';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/api/server.js';
import { createServices, type Services } from '../../src/composition.js';
import { parseConfig } from '../../src/config/config.js';
import { assetFiles } from '../../src/geo/asset-layout.js';
import { testClock } from '../support/clock.js';
import { type DemoTown, demoTown } from '../support/demo-town.js';
import { assetPath, gdalinfo, run, tempDir } from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';

const STORE = DEMO_LANDMARKS.find((l) => l.id === 'red-roof-store') as (typeof DEMO_LANDMARKS)[number];
const STEEPLE = DEMO_LANDMARKS.find((l) => l.id === 'church-steeple') as (typeof DEMO_LANDMARKS)[number];
// 100 m: the steeple stands 77 m north of the store, so both are in one AOI.
const RADIUS = 100;
const SIZE = 400;

describe('imagery over the demo town', () => {
  let town: DemoTown;
  let services: Services;
  let app: FastifyInstance;
  let base: string;
  let scratch: { path: string; remove: () => Promise<void> };
  let token: string;
  const byDate = new Map<string, string>();

  before(async () => {
    town = await demoTown();
    scratch = await tempDir('imagery-demo');
    services = await createServices(
      parseConfig({ NADIR_DATA_DIR: town.dataDir, NADIR_LOG_LEVEL: 'silent' }, town.dataDir),
      testClock().now,
    );
    app = await buildServer(services);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const cov = await fetch(
      `${base}/staticmap/v2/coverage.json?apikey=${town.apiKey}&point=${STORE.lon},${STORE.lat}&radius=${RADIUS}&resources=TrueOrtho`,
    );
    const body = (await cov.json()) as { surveys: { id: string; captureDate: string }[]; transactionToken: string };
    token = body.transactionToken;
    for (const s of body.surveys) byDate.set(s.captureDate, s.id);
  });
  after(async () => {
    await app.close();
    await services.close();
    await scratch.remove();
  });

  async function download(date: string, file: string): Promise<string> {
    const query = new URLSearchParams({
      transactionToken: token,
      point: `${STORE.lon},${STORE.lat}`,
      radius: String(RADIUS),
      size: `${SIZE}x${SIZE}`,
    });
    const r = await fetch(`${base}/staticmap/v2/surveys/${byDate.get(date)}/${file}?${query}`);
    assert.equal(r.status, 200, `${date} ${file}: ${r.status}`);
    const path = join(scratch.path, `${date}-${file}`);
    await writeFile(path, Buffer.from(await r.arrayBuffer()));
    return path;
  }

  /** Pixel (column, row) of a lon/lat in the download: the AOI is centred on the store. */
  function pixelOf(lon: number, lat: number): [number, number] {
    const R = 6378137;
    const mx = (l: number) => (l * Math.PI * R) / 180;
    const my = (l: number) => R * Math.log(Math.tan(Math.PI / 4 + (l * Math.PI) / 360));
    const half = RADIUS / Math.cos((STORE.lat * Math.PI) / 180);
    const pixel = (2 * half) / SIZE;
    return [
      Math.floor((mx(lon) - (mx(STORE.lon) - half)) / pixel),
      Math.floor((my(STORE.lat) + half - my(lat)) / pixel),
    ];
  }

  test('every type in every format opens with GDAL at the requested size', async () => {
    for (const type of ['TrueOrtho', 'Vert', 'DetailDsm']) {
      for (const format of ['tif', 'jpg', 'png']) {
        const info = await gdalinfo(await download('2025-10-20', `${type}.${format}`));
        assert.deepEqual(info.size, [SIZE, SIZE], `${type}.${format}`);
      }
    }
  });

  test('the new store is red in the 2025 TrueOrtho and not there in 2024', async () => {
    const [col, row] = pixelOf(STORE.lon, STORE.lat);
    const at = async (date: string) => {
      const raster = await readRaster(await download(date, 'TrueOrtho.tif'), [1, 2, 3]);
      const i = row * raster.width + col;
      return raster.bands.map((b) => b[i] as number) as [number, number, number];
    };
    const [r, g, b] = await at('2025-04-02');
    assert.ok(r > 150 && g < 90 && b < 90, `red roof in 2025: ${[r, g, b]}`);
    const [r0, g0, b0] = await at('2024-03-14');
    assert.ok(!(r0 > 150 && g0 < 90 && b0 < 90), `no red roof in 2024: ${[r0, g0, b0]}`);
  });

  test('the steeple stands about 32 m above the ground in the DetailDsm download', async () => {
    const raster = await readRaster(await download('2025-04-02', 'DetailDsm.tif'));
    const [col, row] = pixelOf(STEEPLE.lon, STEEPLE.lat);
    let top = Number.NEGATIVE_INFINITY;
    for (let dy = -3; dy <= 3; dy++) {
      for (let dx = -3; dx <= 3; dx++)
        top = Math.max(top, raster.bands[0]?.[(row + dy) * raster.width + col + dx] ?? top);
    }
    const ground = raster.bands[0]?.[(row + 60) * raster.width + col] as number;
    assert.ok(top - ground > 20, `steeple ${top.toFixed(1)} m vs ground ${ground.toFixed(1)} m`);
  });

  test('the TrueOrtho tif equals gdalwarp of the same COG onto the same grid', async () => {
    const ours = await readRaster(await download('2025-04-02', 'TrueOrtho.tif'));
    const info = await gdalinfo(join(scratch.path, '2025-04-02-TrueOrtho.tif'));
    const [x0, px, , y0, , py] = info.geoTransform;
    const survey = await services.catalogue.get(byDate.get('2025-04-02') as string);
    const asset = survey?.assets.TrueOrtho;
    // A sharded asset (docs/ingest.md) is read as GDAL's mosaic of its shards.
    let cog = assetPath(services, asset);
    if (asset?.shards) {
      cog = join(scratch.path, 'shards.vrt');
      const shards = assetFiles(asset).slice(1);
      await run('gdalbuildvrt', ['-q', cog, ...shards.map((uri) => assetPath(services, { uri }))]);
    }
    const reference = join(scratch.path, 'reference.tif');
    const te = [x0, y0 + SIZE * py, x0 + SIZE * px, y0].map(String);
    await run('gdalwarp', [
      '-q',
      '-te',
      ...te,
      '-ts',
      `${SIZE}`,
      `${SIZE}`,
      '-r',
      'bilinear',
      '-dstalpha',
      cog,
      reference,
    ]);
    const theirs = await readRaster(reference);
    let worst = 0;
    for (let band = 0; band < 4; band++) {
      const a = ours.bands[band] as Float64Array;
      const b = theirs.bands[band] as Float64Array;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
    }
    assert.equal(worst, 0, 'same warp, same pixels');
  });
});
