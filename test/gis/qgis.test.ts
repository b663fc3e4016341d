/**
 * QGIS itself (Debian's 3.22, headless: PyQGIS with Qt's offscreen platform) drawing the demo town
 * from nadir as a user adds it: an XYZ layer from the TileJSON's template, and a WMTS layer from
 * the capabilities URL with nothing typed by hand (issue 34). Each is rendered over a 2 x 2 block
 * of tiles at the layer's deepest zoom and must show the served tiles' pixels.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { lonLatToMercator, ORIGIN_SHIFT, tileForMercator } from '../../src/geo/web-mercator.js';
import { tempDir } from '../support/fixtures.js';
import { type GisServer, startGisServer } from './demo-server.js';
import { BLOCK_OF_FOUR, rgba } from './tile-pixels.js';

const exec = promisify(execFile);
/** Debian's Python, where python3-qgis is installed (a python3 earlier on PATH may be another). */
const PYTHON = '/usr/bin/python3';
const RENDER = join(import.meta.dirname, 'qgis/render_layer.py');

interface Rendered {
  valid: boolean;
  error: string;
  renderErrors?: string[];
  saved?: boolean;
}

describe('QGIS draws nadir layers as they come', () => {
  let gis: GisServer;
  let scratch: { path: string; remove: () => Promise<void> };
  let z: number;
  let block: { x: number; y: number };

  before(async () => {
    gis = await startGisServer();
    scratch = await tempDir('gis-qgis');
    const vert = (await (await gis.get('/tiles/v3/Vert/tilejson.json')).json()) as {
      maxzoom: number;
      center: number[];
    };
    z = vert.maxzoom;
    const [lon, lat] = vert.center as [number, number];
    block = tileForMercator(...lonLatToMercator(lon, lat), z);
  });
  after(async () => {
    await gis?.server.stop();
    await scratch?.remove();
  });

  /** The layer rendered over the 2 x 2 tiles from `block` at zoom z, as a 512 px PNG. */
  async function render(source: string, name: string): Promise<string> {
    const span = (2 * ORIGIN_SHIFT) / 2 ** z;
    const xmin = -ORIGIN_SHIFT + block.x * span;
    const ymax = ORIGIN_SHIFT - block.y * span;
    const out = join(scratch.path, `${name}.png`);
    const { stdout } = await exec(
      PYTHON,
      [RENDER, source, `${xmin}`, `${ymax - 2 * span}`, `${xmin + 2 * span}`, `${ymax}`, '512', out],
      {
        env: {
          ...process.env,
          QT_QPA_PLATFORM: 'offscreen',
          XDG_RUNTIME_DIR: scratch.path,
          QGIS_CUSTOM_CONFIG_PATH: scratch.path,
        },
        maxBuffer: 16 << 20,
      },
    );
    const report = JSON.parse(stdout.trim().split('\n').pop() as string) as Rendered;
    assert.ok(report.valid, `QGIS refused the layer: ${report.error}`);
    assert.deepEqual(report.renderErrors, [], 'QGIS reported errors while drawing');
    assert.ok(report.saved);
    return out;
  }

  /** Pixels of the rendering that differ from the served tiles by more than JPEG's rounding. */
  async function differences(rendered: string, format: 'png' | 'img'): Promise<{ compared: number; off: number }> {
    const read = await rgba(rendered);
    assert.deepEqual([read.width, read.height], [512, 512]);
    let compared = 0;
    let off = 0;
    for (const [dx, dy] of BLOCK_OF_FOUR) {
      const response = await gis.get(`/tiles/v3/Vert/${z}/${block.x + dx}/${block.y + dy}.${format}`);
      assert.equal(response.status, 200);
      const tile = await rgba(Buffer.from(await response.arrayBuffer()));
      for (let row = 0; row < 256; row++) {
        for (let column = 0; column < 256; column++) {
          const t = (row * 256 + column) * 4;
          const r = ((dy * 256 + row) * 512 + dx * 256 + column) * 4;
          if ((tile.data[t + 3] as number) < 255) continue;
          compared++;
          for (let band = 0; band < 3; band++) {
            if (Math.abs((tile.data[t + band] as number) - (read.data[r + band] as number)) > 2) {
              off++;
              break;
            }
          }
        }
      }
    }
    return { compared, off };
  }

  test("an XYZ layer from the TileJSON's template shows the served tiles", async () => {
    const { tiles } = (await (await gis.get('/tiles/v3/Vert/tilejson.json')).json()) as { tiles: string[] };
    const template = tiles[0] as string;
    assert.match(template, /\{z\}\/\{x\}\/\{y\}\.img\?apikey=/);
    const out = await render(`type=xyz&url=${encodeURIComponent(template)}&zmax=${z}&zmin=0`, 'xyz');
    const { compared, off } = await differences(out, 'img');
    assert.ok(compared > 100_000, `${compared} opaque pixels compared`);
    assert.equal(off, 0, `${off} of ${compared} pixels differ`);
  });

  test('a WMTS layer from the capabilities URL alone (no dimension typed in) shows the served tiles', async () => {
    const capabilities = `${gis.base}/wmts/1.0.0/WMTSCapabilities.xml?apikey=${gis.key}`;
    const source = [
      'contextualWMSLegend=0',
      'crs=EPSG:3857',
      'dpiMode=7',
      'featureCount=10',
      'format=image/png',
      'layers=Vert',
      'styles=default',
      'tileMatrixSet=GoogleMapsCompatible',
      `url=${encodeURIComponent(capabilities)}`,
    ].join('&');
    const out = await render(source, 'wmts');
    const { compared, off } = await differences(out, 'png');
    assert.ok(compared > 100_000, `${compared} opaque pixels compared`);
    assert.equal(off, 0, `${off} of ${compared} pixels differ`);
  });
});
