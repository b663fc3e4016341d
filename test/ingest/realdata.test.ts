/**
 * Ingest of every raster in ../shared/realdata, checked with GDAL's own command-line tools and
 * against a reference that `gdalwarp` makes from the same source onto the same grid.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Asset, Survey } from '../../src/catalogue/survey.js';
import type { Services } from '../../src/composition.js';
import { aoiLonLatBounds } from '../../src/geo/aoi.js';
import { DEFAULT_JPEG_QUALITY } from '../../src/geo/asset-layout.js';
import type { MultiPolygon } from '../../src/geo/polygon.js';
import { lonLatToMercator, ORIGIN_SHIFT, resolutionAtZoom } from '../../src/geo/web-mercator.js';
import {
  assetPath,
  gdalinfo,
  REALDATA,
  SKIP_REALDATA,
  servicesFor,
  tempDir,
  writeManifest,
} from '../support/fixtures.js';
import { readRaster } from '../support/pixels.js';
import { comparePixels, gdalwarpReference } from '../support/reference.js';

interface Case {
  name: string;
  captureDate: string;
  assets: Record<string, string>;
  /** Ground pixel size of each source, from the realdata README. */
  sourceGsd: Record<string, number>;
}

const CASES: Case[] = [
  {
    name: 'wisconsin-ortho-dsm',
    captureDate: '2021-07-02',
    assets: { TrueOrtho: 'fieldimager-ws5/odm_orthophoto.tif', DetailDsm: 'fieldimager-ws5/dsm.tif' },
    sourceGsd: { TrueOrtho: 0.2, DetailDsm: 0.27 },
  },
  {
    name: 'colorado-hro-external-overviews',
    captureDate: '2014-04-15',
    assets: { Vert: 'rio-tiler/201404_13SED190110_201404_0x1500m_CL_1.tif' },
    sourceGsd: { Vert: 0.15 },
  },
  {
    name: 'colorado-jpeg-cog',
    captureDate: '2014-04-16',
    assets: { Vert: 'rio-tiler/cog_rgb.tif' },
    sourceGsd: { Vert: 0.15 },
  },
  {
    name: 'bali-pix4d-alpha-invalid-nodata',
    captureDate: '2019-08-01',
    assets: { TrueOrtho: 'rio-tiler/pix4d_alpha_nodata.tif' },
    sourceGsd: { TrueOrtho: 0.3527 },
  },
  {
    name: 'duluth-webodm-octagon',
    captureDate: '2020-06-01',
    assets: { TrueOrtho: 'webodm/orthophoto.tif' },
    sourceGsd: { TrueOrtho: 0.5 },
  },
];

/** Ground area of a lon/lat footprint, m², via Mercator and its local scale factor. */
function groundArea(footprint: MultiPolygon): number {
  let total = 0;
  for (const polygon of footprint) {
    polygon.forEach((ring, index) => {
      let twice = 0;
      const lat = ring[0]?.[1] ?? 0;
      const pts = ring.map(([lon, la]) => lonLatToMercator(lon, la));
      for (let i = 0; i < pts.length; i++) {
        const [x1, y1] = pts[i] as [number, number];
        const [x2, y2] = pts[(i + 1) % pts.length] as [number, number];
        twice += x1 * y2 - x2 * y1;
      }
      const area = (Math.abs(twice) / 2) * Math.cos((lat * Math.PI) / 180) ** 2;
      total += index === 0 ? area : -area;
    });
  }
  return total;
}

describe('ingest of ../shared/realdata', { skip: SKIP_REALDATA }, () => {
  let dir: { path: string; remove: () => Promise<void> };
  let services: Services;
  const surveys = new Map<string, Survey>();

  before(async () => {
    dir = await tempDir('realdata');
    services = await servicesFor(join(dir.path, 'data'));
    for (const c of CASES) {
      const assets = Object.fromEntries(Object.entries(c.assets).map(([t, p]) => [t, join(REALDATA, p)]));
      const manifest = await writeManifest(dir.path, c.name, { captureDate: c.captureDate, assets });
      surveys.set(c.name, await services.ingestor.ingestManifestFile(manifest));
    }
  });
  after(async () => {
    await services.close();
    await dir.remove();
  });

  for (const c of CASES) {
    for (const type of Object.keys(c.assets)) {
      describe(`${c.name} ${type}`, () => {
        const asset = () => surveys.get(c.name)?.assets[type as Asset['type']] as Asset;

        test('is a COG in EPSG:3857 on the GoogleMapsCompatible grid, aligned at every level', async () => {
          const a = asset();
          const info = await gdalinfo(assetPath(services, a));
          assert.match(info.coordinateSystem?.wkt ?? '', /ID\["EPSG",3857\]\]$/);
          assert.equal(info.metadata.IMAGE_STRUCTURE?.LAYOUT, 'COG');
          const [originX, resX, rotX, originY, rotY, resY] = info.geoTransform;
          const res = resolutionAtZoom(a.maxZoom);
          assert.ok(Math.abs(resX - res) / res < 1e-9, `x resolution ${resX} is zoom ${a.maxZoom}'s ${res}`);
          assert.ok(Math.abs(-resY - res) / res < 1e-9);
          assert.equal(rotX, 0);
          assert.equal(rotY, 0);
          const levels = a.maxZoom - a.minZoom;
          const coarsestTile = 256 * res * 2 ** levels;
          const tilesX = (originX + ORIGIN_SHIFT) / coarsestTile;
          const tilesY = (ORIGIN_SHIFT - originY) / coarsestTile;
          assert.ok(Math.abs(tilesX - Math.round(tilesX)) < 1e-6, `origin x on the z${a.minZoom} grid (${tilesX})`);
          assert.ok(Math.abs(tilesY - Math.round(tilesY)) < 1e-6, `origin y on the z${a.minZoom} grid (${tilesY})`);
          assert.equal(info.size[0] % (256 * 2 ** levels), 0);
          assert.equal(info.size[1] % (256 * 2 ** levels), 0);
          for (const band of info.bands) {
            assert.deepEqual(band.block, [256, 256]);
            assert.equal(band.overviews?.length ?? 0, levels, 'one overview per zoom down to minZoom');
          }
        });

        test('stores imagery as JPEG with an internal mask, heights as Float32 with nodata', async () => {
          const a = asset();
          const info = await gdalinfo(assetPath(services, a));
          if (a.kind === 'rgb') {
            assert.equal(info.bands.length, 3);
            assert.ok(info.bands.every((b) => b.type === 'Byte'));
            assert.equal(info.metadata.IMAGE_STRUCTURE?.COMPRESSION, 'YCbCr JPEG');
            assert.equal(info.metadata.IMAGE_STRUCTURE?.JPEG_QUALITY, String(DEFAULT_JPEG_QUALITY));
            assert.deepEqual(info.bands[0]?.mask?.flags, ['PER_DATASET']);
          } else {
            assert.equal(info.bands.length, 1);
            assert.equal(info.bands[0]?.type, 'Float32');
            assert.equal(info.bands[0]?.noDataValue, -9999);
            assert.equal(info.metadata.IMAGE_STRUCTURE?.COMPRESSION, 'DEFLATE');
            assert.equal(info.metadata.IMAGE_STRUCTURE?.PREDICTOR, '3');
          }
        });

        test('records the source ground GSD', () => {
          const gsd = c.sourceGsd[type] as number;
          assert.ok(Math.abs(asset().gsd - gsd) / gsd < 0.01, `gsd ${asset().gsd} vs source ${gsd}`);
        });

        test('pixels and mask match a gdalwarp reference of the same grid', async () => {
          const a = asset();
          const ref = join(dir.path, `${c.name}-${type}-ref.tif`);
          await gdalwarpReference(join(REALDATA, c.assets[type] as string), a, ref);
          const ours = await readRaster(assetPath(services, a));
          const theirs = await readRaster(ref, a.kind === 'rgb' ? [1, 2, 3] : [1]);
          comparePixels(ours, theirs, a.kind);
        });
      });
    }

    test(`${c.name}: footprint is the valid-pixel outline and coverage finds it`, async () => {
      const survey = surveys.get(c.name) as Survey;
      const areas: number[] = [];
      for (const a of Object.values(survey.assets) as Asset[]) {
        const raster = await readRaster(assetPath(services, a), [1]);
        const valid = raster.mask.reduce((n, v) => n + (v ? 1 : 0), 0);
        const [, lat] = survey.footprint[0]?.[0]?.[0] ?? [0, 0];
        const pixelGround = (resolutionAtZoom(a.maxZoom) * Math.cos((lat * Math.PI) / 180)) ** 2;
        areas.push(valid * pixelGround);
      }
      const area = groundArea(survey.footprint);
      const largest = Math.max(...areas);
      assert.ok(
        area > largest * 0.97,
        `footprint ${area.toFixed(0)} m² covers the largest asset ${largest.toFixed(0)} m²`,
      );
      assert.ok(
        area < areas.reduce((s, x) => s + x, 0) * 1.03,
        `footprint ${area.toFixed(0)} m² vs assets ${areas.map((x) => x.toFixed(0))}`,
      );

      const ring = survey.footprint[0]?.[0] ?? [];
      const lon = ring.reduce((s, p) => s + p[0], 0) / ring.length;
      const lat = ring.reduce((s, p) => s + p[1], 0) / ring.length;
      const found = await services.catalogue.search({
        area: aoiLonLatBounds({ lon, lat, radius: 10 }),
        limit: 10,
        offset: 0,
      });
      // Both Colorado rasters are the same cul-de-sac: the later capture comes first.
      const sameSite = CASES.filter((other) => other.name.split('-')[0] === c.name.split('-')[0])
        .sort((x, y) => y.captureDate.localeCompare(x.captureDate))
        .map((other) => surveys.get(other.name)?.id);
      assert.deepEqual(
        found.surveys.map((s) => s.id),
        sameSite,
      );
    });
  }
});
