/**
 * The black collar, found strip by strip in bounded memory, must be exactly the pixels a flood
 * fill over the whole raster finds: shapes that cross strip boundaries, wind back up, and dark
 * pockets that do not touch the border. The mask is read back through GDAL from the VRT ingest
 * warps.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import gdal from 'gdal-async';
import { maskBlackCollar, STRIP_ROWS } from '../../src/ingest/collar.js';
import { inspectSource } from '../../src/ingest/source.js';
import { tempDir } from '../support/fixtures.js';

const WIDTH = 300;
const HEIGHT = 3 * STRIP_ROWS + 40; // four strips, the last one short

/** A bright image with dark shapes drawn as rectangles [x0, y0, x1, y1) (half-open). */
function picture(dark: [number, number, number, number][]): Uint8Array {
  const pixels = new Uint8Array(WIDTH * HEIGHT).fill(120);
  for (const [x0, y0, x1, y1] of dark) {
    for (let y = y0; y < y1; y++) pixels.fill(3, y * WIDTH + x0, y * WIDTH + x1);
  }
  return pixels;
}

async function writeSource(path: string, pixels: Uint8Array): Promise<void> {
  const ds = await gdal.openAsync(path, 'w', 'GTiff', WIDTH, HEIGHT, 3, 'Byte', ['TILED=YES']);
  ds.srs = gdal.SpatialReference.fromEPSG(32615);
  ds.geoTransform = [500000, 0.5, 0, 5000000, 0, -0.5];
  for (let b = 1; b <= 3; b++) await ds.bands.get(b).pixels.writeAsync(0, 0, WIDTH, HEIGHT, pixels);
  ds.close();
}

/** The reference: 4-connected flood fill of dark pixels from the border, over the whole raster. */
function wholeRasterCollar(pixels: Uint8Array): Uint8Array {
  const collar = new Uint8Array(pixels.length);
  const stack: number[] = [];
  const push = (i: number) => {
    if ((pixels[i] as number) <= 8 && !collar[i]) {
      collar[i] = 1;
      stack.push(i);
    }
  };
  for (let x = 0; x < WIDTH; x++) {
    push(x);
    push((HEIGHT - 1) * WIDTH + x);
  }
  for (let y = 0; y < HEIGHT; y++) {
    push(y * WIDTH);
    push(y * WIDTH + WIDTH - 1);
  }
  for (let i = stack.pop(); i !== undefined; i = stack.pop()) {
    const x = i % WIDTH;
    if (x > 0) push(i - 1);
    if (x < WIDTH - 1) push(i + 1);
    if (i >= WIDTH) push(i - WIDTH);
    if (i < (HEIGHT - 1) * WIDTH) push(i + WIDTH);
  }
  return collar;
}

async function alphaOf(vrt: string): Promise<Uint8Array> {
  const ds = await gdal.openAsync(vrt);
  try {
    return await ds.bands.get(4).pixels.readAsync(0, 0, WIDTH, HEIGHT, new Uint8Array(WIDTH * HEIGHT));
  } finally {
    ds.close();
  }
}

describe('black collar in strips', () => {
  let dir: { path: string; remove: () => Promise<void> };
  before(async () => {
    dir = await tempDir('nadir-collar-');
  });
  after(() => dir.remove());

  async function collarAlpha(name: string, pixels: Uint8Array): Promise<Uint8Array | undefined> {
    const path = join(dir.path, `${name}.tif`);
    await writeSource(path, pixels);
    const vrt = await maskBlackCollar(await inspectSource('TrueOrtho', path), join(dir.path, name));
    return vrt ? alphaOf(vrt) : undefined;
  }

  function assertMatchesWholeRaster(alpha: Uint8Array, pixels: Uint8Array): number {
    const reference = wholeRasterCollar(pixels);
    let collar = 0;
    let differences = 0;
    for (let i = 0; i < alpha.length; i++) {
      if (reference[i]) collar++;
      if ((alpha[i] === 0) !== (reference[i] === 1)) differences++;
    }
    assert.equal(differences, 0, 'pixels classified unlike the whole-raster flood fill');
    return collar;
  }

  test('a serpentine collar crossing strip boundaries up and down is found whole', async () => {
    const pixels = picture([
      // Enters from the bottom edge, climbs through every strip into the first one...
      [20, 60, 30, HEIGHT],
      // ...turns right in strip 0...
      [20, 60, 120, 70],
      // ...and goes down again into strip 2 (a dead end: only reachable over the top).
      [110, 60, 120, 2 * STRIP_ROWS + 100],
      // ...where it turns and climbs once more into strip 1.
      [110, 2 * STRIP_ROWS + 90, 200, 2 * STRIP_ROWS + 100],
      [190, STRIP_ROWS + 10, 200, 2 * STRIP_ROWS + 100],
      // A dark roof inside the image, touching nothing: stays data.
      [240, 300, 260, 320],
      // A collar along the left edge, as ODM writes them.
      [0, 0, 10, HEIGHT],
    ]);
    const alpha = await collarAlpha('serpentine', pixels);
    assert.ok(alpha, 'a collar was found');
    const collar = assertMatchesWholeRaster(alpha, pixels);
    // The far end of the serpentine (in strip 1, reached last) and the roof.
    assert.equal(alpha[(STRIP_ROWS + 20) * WIDTH + 195], 0);
    assert.equal(alpha[310 * WIDTH + 250], 255);
    assert.ok(collar > 10 * HEIGHT);
  });

  test('dark shapes that touch no edge are no collar at all', async () => {
    const pixels = picture([[50, STRIP_ROWS - 30, 80, STRIP_ROWS + 30]]);
    assert.equal(await collarAlpha('pocket', pixels), undefined);
  });
});
