/**
 * Rasters in CRSs and with quirks beyond ../shared/realdata, made from its real pixels with the
 * GDAL command line: national grids, geographic degrees, US survey feet, 12-bit imagery, nodata
 * 0, JPEG with an internal mask, RGBN without alpha, integer and float64 heights.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Asset, ContentType, Survey } from '../../src/catalogue/survey.js';
import type { Services } from '../../src/composition.js';
import { ORIGIN_SHIFT, resolutionAtZoom } from '../../src/geo/web-mercator.js';
import {
  assetPath,
  gdalinfo,
  REALDATA,
  run,
  SKIP_REALDATA,
  servicesFor,
  tempDir,
  writeManifest,
} from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { comparePixels, gdalwarpReference } from '../support/reference.js';

const WEBODM = join(REALDATA, 'webodm/orthophoto.tif');
const PIX4D = join(REALDATA, 'rio-tiler/pix4d_alpha_nodata.tif');
const DSM = join(REALDATA, 'fieldimager-ws5/dsm.tif');

interface Quirk {
  name: string;
  type: ContentType;
  /** gdal_translate arguments that make the source from `from`. */
  translate: string[];
  from: string;
  gsd: number;
  /** The source gdalwarp's reference is made from (the original where the quirk is nadir's to undo). */
  reference: 'self' | 'original';
}

const QUIRKS: Quirk[] = [
  // 212 px of 0.5 m placed in Amsterdam on the Dutch national grid (RD New).
  {
    name: 'rd-new',
    type: 'Vert',
    from: WEBODM,
    gsd: 0.5,
    reference: 'self',
    translate: ['-a_srs', 'EPSG:28992', '-a_ullr', '121000', '487106', '121106', '487000'],
  },
  // Geographic degrees in Paris: 0.5 m is 4.5e-6 degrees of latitude.
  {
    name: 'wgs84-degrees',
    type: 'TrueOrtho',
    from: WEBODM,
    gsd: 0.5,
    reference: 'self',
    translate: [
      '-a_srs',
      'EPSG:4326',
      '-a_ullr',
      '2.35',
      '48.851',
      `${2.35 + (212 * 0.5) / (111320 * Math.cos((48.8505 * Math.PI) / 180))}`,
      `${48.851 - (212 * 0.5) / 111320}`,
    ],
  },
  // New York Long Island state plane in US survey feet: 1 ft pixels.
  {
    name: 'state-plane-feet',
    type: 'Vert',
    from: WEBODM,
    gsd: 0.3048,
    reference: 'self',
    translate: ['-a_srs', 'EPSG:2263', '-a_ullr', '985000', '200212', '985212', '200000'],
  },
  // 12-bit sensor values in UInt16, black where the flight did not reach, no alpha.
  {
    name: 'uint16-12bit',
    type: 'TrueOrtho',
    from: PIX4D,
    gsd: 0.3527,
    reference: 'original',
    translate: [
      '-ot',
      'UInt16',
      '-scale',
      '0',
      '255',
      '0',
      '4095',
      '-b',
      '1',
      '-b',
      '2',
      '-b',
      '3',
      '-a_nodata',
      'none',
    ],
  },
  {
    name: 'byte-nodata-0',
    type: 'TrueOrtho',
    from: PIX4D,
    gsd: 0.3527,
    reference: 'self',
    translate: ['-b', '1', '-b', '2', '-b', '3', '-a_nodata', '0'],
  },
  {
    name: 'jpeg-internal-mask',
    type: 'Vert',
    from: PIX4D,
    gsd: 0.3527,
    reference: 'original',
    translate: [
      '-b',
      '1',
      '-b',
      '2',
      '-b',
      '3',
      '-mask',
      '4',
      '-a_nodata',
      'none',
      '-co',
      'COMPRESS=JPEG',
      '-co',
      'TILED=YES',
      '--config',
      'GDAL_TIFF_INTERNAL_MASK',
      'YES',
    ],
  },
  // Four bands, the fourth near-infrared (not alpha): nadir takes RGB and masks the black collar.
  {
    name: 'rgbn-no-alpha',
    type: 'TrueOrtho',
    from: PIX4D,
    gsd: 0.3527,
    reference: 'original',
    translate: [
      '-b',
      '1',
      '-b',
      '2',
      '-b',
      '3',
      '-b',
      '2',
      '-colorinterp',
      'red,green,blue,undefined',
      '-a_nodata',
      'none',
    ],
  },
  {
    name: 'dsm-int16-nodata',
    type: 'DetailDsm',
    from: DSM,
    gsd: 0.27,
    reference: 'self',
    translate: ['-ot', 'Int16', '-a_nodata', '-32768'],
  },
  {
    name: 'dsm-float64-all-valid',
    type: 'DetailDsm',
    from: DSM,
    gsd: 0.27,
    reference: 'self',
    translate: ['-ot', 'Float64', '-srcwin', '120', '120', '150', '150', '-a_nodata', 'none'],
  },
];

describe('ingest of rasters in other CRSs and with other quirks', { skip: SKIP_REALDATA }, () => {
  let dir: { path: string; remove: () => Promise<void> };
  let services: Services;
  const surveys = new Map<string, Survey>();
  const sources = new Map<string, string>();

  before(async () => {
    dir = await tempDir('quirks');
    services = await servicesFor(join(dir.path, 'data'));
    for (const q of QUIRKS) {
      const source = join(dir.path, `${q.name}.tif`);
      await run('gdal_translate', ['-q', ...q.translate, q.from, source]);
      sources.set(q.name, source);
      const manifest = await writeManifest(dir.path, q.name, {
        captureDate: '2023-05-01',
        assets: { [q.type]: source },
      });
      surveys.set(q.name, await services.ingestor.ingestManifestFile(manifest));
    }
  });
  after(async () => {
    await services.close();
    await dir.remove();
  });

  for (const q of QUIRKS) {
    test(`${q.name}: aligned EPSG:3857 COG, source GSD, pixels as gdalwarp makes them`, async () => {
      const asset = surveys.get(q.name)?.assets[q.type] as Asset;
      const cog = assetPath(services, asset);
      const info = await gdalinfo(cog);
      assert.match(info.coordinateSystem?.wkt ?? '', /ID\["EPSG",3857\]\]$/);
      const [originX, res] = info.geoTransform;
      assert.ok(Math.abs(res - resolutionAtZoom(asset.maxZoom)) < 1e-9);
      const tiles = (originX + ORIGIN_SHIFT) / (256 * res * 2 ** (asset.maxZoom - asset.minZoom));
      assert.ok(Math.abs(tiles - Math.round(tiles)) < 1e-6);
      assert.ok(Math.abs(asset.gsd - q.gsd) / q.gsd < 0.01, `gsd ${asset.gsd} vs ${q.gsd}`);

      const reference = join(dir.path, `${q.name}-ref.tif`);
      await gdalwarpReference(q.reference === 'self' ? (sources.get(q.name) as string) : q.from, asset, reference);
      const ours = await readRaster(cog);
      const theirs = await readRaster(reference, asset.kind === 'rgb' ? [1, 2, 3] : [1]);
      comparePixels(ours, theirs, asset.kind);
    });
  }
});
