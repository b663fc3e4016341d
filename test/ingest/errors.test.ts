/** Bad manifests and bad sources: a clear error, and nothing written or visible. */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import gdal from 'gdal-async';
import type { Services } from '../../src/composition.js';
import { isNadirError } from '../../src/errors.js';
import { REALDATA, SKIP_REALDATA, servicesFor, tempDir, writeManifest } from '../support/fixtures.js';

const ORTHO = join(REALDATA, 'fieldimager-ws5/odm_orthophoto.tif');
const DSM = join(REALDATA, 'fieldimager-ws5/dsm.tif');

async function listAll(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  // The database and the token keyring belong to the service, not to any ingest.
  const service = ['nadir.sqlite', 'locks', 'token-secrets'];
  return entries.filter((e) => !service.some((name) => e.startsWith(name)));
}

describe('ingest rejects bad input and writes nothing', { skip: SKIP_REALDATA }, () => {
  let dir: { path: string; remove: () => Promise<void> };
  let services: Services;
  let dataDir: string;
  let noCrs: string;
  let twoBandDsm: string;

  before(async () => {
    dir = await tempDir('ingest-errors');
    dataDir = join(dir.path, 'data');
    services = await servicesFor(dataDir);
    noCrs = join(dir.path, 'no-crs.tif');
    const plain = await gdal.openAsync(noCrs, 'w', 'GTiff', 64, 64, 3, 'Byte');
    plain.geoTransform = [500000, 0.1, 0, 4000000, 0, -0.1];
    plain.close();
    twoBandDsm = join(dir.path, 'two-band-dsm.tif');
    const two = await gdal.openAsync(twoBandDsm, 'w', 'GTiff', 64, 64, 2, 'Float32');
    two.srs = gdal.SpatialReference.fromEPSG(32616);
    two.geoTransform = [500000, 0.1, 0, 4000000, 0, -0.1];
    two.close();
    await writeFile(join(dir.path, 'notes.tif'), 'this is not a raster\n');
    // A download cut short: the header and the first strips are there, so GDAL opens it and the
    // source check passes; the warp meets the missing strips on one of GDAL's threads.
    await writeFile(join(dir.path, 'truncated-dsm.tif'), (await readFile(DSM)).subarray(0, 200_000));
  });
  after(async () => {
    await services.close();
    await dir.remove();
  });

  const cases: [string, () => Record<string, unknown>, string, RegExp][] = [
    [
      'a missing file',
      () => ({ captureDate: '2024-01-01', assets: { TrueOrtho: 'nope.tif' } }),
      'INVALID_SOURCE',
      /not found/,
    ],
    [
      'a file that is not a raster',
      () => ({ captureDate: '2024-01-01', assets: { Vert: 'notes.tif' } }),
      'INVALID_SOURCE',
      /not a raster/,
    ],
    [
      'a raster without a CRS',
      () => ({ captureDate: '2024-01-01', assets: { Vert: noCrs } }),
      'INVALID_SOURCE',
      /coordinate reference system/,
    ],
    [
      'a DSM with two bands',
      () => ({ captureDate: '2024-01-01', assets: { DetailDsm: twoBandDsm } }),
      'INVALID_SOURCE',
      /exactly one band/,
    ],
    [
      'an RGB DSM',
      () => ({ captureDate: '2024-01-01', assets: { DetailDsm: ORTHO } }),
      'INVALID_SOURCE',
      /exactly one band/,
    ],
    [
      'imagery with one band',
      () => ({ captureDate: '2024-01-01', assets: { TrueOrtho: DSM } }),
      'INVALID_SOURCE',
      /at least 3 colour bands/,
    ],
    [
      'an unknown content type',
      () => ({ captureDate: '2024-01-01', assets: { Oblique: ORTHO } }),
      'INVALID_MANIFEST',
      /unknown content type "Oblique"/,
    ],
    ['no assets', () => ({ captureDate: '2024-01-01', assets: {} }), 'INVALID_MANIFEST', /at least one asset/],
    [
      'an impossible date',
      () => ({ captureDate: '2024-02-30', assets: { TrueOrtho: ORTHO } }),
      'INVALID_MANIFEST',
      /captureDate/,
    ],
    ['a missing date', () => ({ assets: { TrueOrtho: ORTHO } }), 'INVALID_MANIFEST', /captureDate/],
    [
      'a photo time without a zone',
      () => ({ captureDate: '2024-01-01', firstPhotoTime: '2024-01-01T10:00:00', assets: { TrueOrtho: ORTHO } }),
      'INVALID_MANIFEST',
      /firstPhotoTime/,
    ],
    [
      'photo times in the wrong order',
      () => ({
        captureDate: '2024-01-01',
        firstPhotoTime: '2024-01-01T12:00:00Z',
        lastPhotoTime: '2024-01-01T10:00:00Z',
        assets: { TrueOrtho: ORTHO },
      }),
      'INVALID_MANIFEST',
      /after/,
    ],
    [
      'an unknown timezone',
      () => ({ captureDate: '2024-01-01', timezone: 'Mars/Olympus', assets: { TrueOrtho: ORTHO } }),
      'INVALID_MANIFEST',
      /timezone/,
    ],
    [
      'a bad tag',
      () => ({ captureDate: '2024-01-01', tags: ['disaster: fire'], assets: { TrueOrtho: ORTHO } }),
      'INVALID_MANIFEST',
      /tags/,
    ],
    [
      'a bad id',
      () => ({ id: 'survey-1', captureDate: '2024-01-01', assets: { TrueOrtho: ORTHO } }),
      'INVALID_MANIFEST',
      /UUID/,
    ],
    [
      'an unknown field',
      () => ({ captureDate: '2024-01-01', date: 'x', assets: { TrueOrtho: ORTHO } }),
      'INVALID_MANIFEST',
      /unknown manifest field "date"/,
    ],
    [
      'one good and one bad asset',
      () => ({ captureDate: '2024-01-01', assets: { TrueOrtho: ORTHO, DetailDsm: 'missing-dsm.tif' } }),
      'INVALID_SOURCE',
      /missing-dsm.tif: file not found/,
    ],
  ];

  for (const [name, manifest, code, message] of cases) {
    test(`${name}: ${code}`, async () => {
      const path = await writeManifest(dir.path, name.replace(/\W+/g, '-'), manifest());
      await assert.rejects(services.ingestor.ingestManifestFile(path), (error: unknown) => {
        assert.ok(isNadirError(error), `a NadirError, got ${error}`);
        assert.equal(error.code, code);
        assert.match(error.message, message);
        return true;
      });
      assert.equal(await services.catalogue.count(), 0, 'no survey visible');
      assert.deepEqual(await listAll(dataDir), [], 'no files left behind');
    });
  }

  // It fails in the COG step, after the check: the survey stays invisible, and its staging is
  // kept for a resumed run (as any ingest that fails midway), so no "nothing written" here.
  test("a truncated GeoTIFF: the file and GDAL's own message", async () => {
    const path = await writeManifest(dir.path, 'truncated', {
      captureDate: '2024-01-01',
      assets: { DetailDsm: 'truncated-dsm.tif' },
    });
    await assert.rejects(services.ingestor.ingestManifestFile(path), (error: unknown) => {
      assert.ok(isNadirError(error), `a NadirError, got ${error}`);
      assert.equal(error.code, 'INVALID_SOURCE');
      // The issue saw `nadir ingest: ` and nothing else; GDAL said TIFFReadEncodedStrip failed.
      assert.match(
        error.message,
        /truncated-dsm\.tif, band 1, block at pixel \(\d+, \d+\): TIFFReadEncodedStrip\(\) failed/,
      );
      return true;
    });
    assert.equal(await services.catalogue.count(), 0, 'no survey visible');
  });

  test('a manifest that is not JSON', async () => {
    const path = join(dir.path, 'broken.json');
    await writeFile(path, '{"captureDate": ');
    await assert.rejects(services.ingestor.ingestManifestFile(path), /not valid JSON/);
  });
});
