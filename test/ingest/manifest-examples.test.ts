/**
 * Counterexamples the manifest properties (test/cli/properties.test.ts) found, shrunk and kept as
 * example-based tests: each failed before the fix named beside it.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isNadirError } from '../../src/errors.js';
import { parseManifest, readManifest } from '../../src/ingest/manifest.js';
import { inspectSource } from '../../src/ingest/source.js';
import { tempDir } from '../support/fixtures.js';

const ASSETS = { Vert: 'vert.tif' };

describe('manifest counterexamples found by the properties', () => {
  it('a capture date in years 1-99 keeps its year in the default photo times (Date.UTC read it as 19xx)', () => {
    const utc = parseManifest({ captureDate: '0050-06-01', assets: ASSETS }, '/data');
    assert.equal(utc.firstPhotoTime, '0050-06-01T00:00:00Z');
    assert.equal(utc.lastPhotoTime, '0050-06-01T23:59:59Z');
    const zoned = parseManifest({ captureDate: '0001-01-01', timezone: 'Asia/Tokyo', assets: ASSETS }, '/data');
    assert.match(zoned.firstPhotoTime, /^0000-12-31T1\d:\d\d:00Z$/);
    assert.match(zoned.lastPhotoTime, /^0001-01-01T1\d:\d\d:59Z$/);
  });

  /** INVALID_MANIFEST (or `code`) in one line of at most a few hundred characters. */
  function refusedInOneLine(code = 'INVALID_MANIFEST', pattern?: RegExp) {
    return (error: unknown) => {
      assert.ok(isNadirError(error), String(error));
      assert.equal(error.code, code);
      assert.doesNotMatch(error.message, /[\n\r]/, JSON.stringify(error.message));
      assert.ok(error.message.length < 400, `${error.message.length} characters`);
      if (pattern) assert.match(error.message, pattern);
      return true;
    };
  }

  it('a photo time on a day that does not exist is refused (Date.parse read 2024-02-30 as 1 March)', () => {
    for (const time of ['2024-02-30T00:00:00Z', '2023-02-29T12:00Z', '2024-04-31T10:00+02:00']) {
      assert.throws(
        () => parseManifest({ captureDate: '2024-01-01', firstPhotoTime: time, assets: ASSETS }, '/data'),
        refusedInOneLine('INVALID_MANIFEST', /"firstPhotoTime" must be an ISO 8601 timestamp/),
      );
    }
  });

  it('an instant past 9999-12-31T23:59:59Z is refused (it was stored as "+010000-01-01T04:00")', () => {
    assert.throws(
      () => parseManifest({ captureDate: '2024-01-01', lastPhotoTime: '9999-12-31T23:00-05:00', assets: ASSETS }, '/d'),
      refusedInOneLine(
        'INVALID_MANIFEST',
        /"lastPhotoTime" "9999-12-31T23:00-05:00" is outside the years 0000 to 9999/,
      ),
    );
    assert.throws(
      () => parseManifest({ captureDate: '9999-12-31', timezone: 'Etc/GMT+12', assets: ASSETS }, '/d'),
      refusedInOneLine('INVALID_MANIFEST', /"captureDate" 9999-12-31 in Etc\/GMT\+12 runs outside the years/),
    );
    const last = parseManifest({ captureDate: '9999-12-31', assets: ASSETS }, '/d');
    assert.equal(last.lastPhotoTime, '9999-12-31T23:59:59Z');
  });

  it('a field name or value is quoted in one line and cut short, whatever it holds', () => {
    for (const key of ['date\nline', 'A'.repeat(8192), '\u001b[2J']) {
      assert.throws(
        () => parseManifest({ captureDate: '2024-01-01', assets: ASSETS, [key]: 1 }, '/d'),
        refusedInOneLine('INVALID_MANIFEST', /^unknown manifest field "/),
      );
      assert.throws(
        () => parseManifest({ captureDate: '2024-01-01', assets: { [key]: 'x.tif' } }, '/d'),
        refusedInOneLine('INVALID_MANIFEST', /^unknown content type "/),
      );
    }
    assert.throws(
      () => parseManifest({ id: 'x'.repeat(5000), captureDate: '2024-01-01', assets: ASSETS }, '/d'),
      refusedInOneLine(),
    );
  });

  it('a file that is not JSON is refused in one line (V8 quotes the text around the mistake, line breaks and all)', async () => {
    const dir = await tempDir('manifest-examples');
    try {
      const path = join(dir.path, 'broken.json');
      await writeFile(path, '{"a":1,\n"b":\n}');
      await assert.rejects(readManifest(path), refusedInOneLine('INVALID_MANIFEST', /is not valid JSON/));
    } finally {
      await dir.remove();
    }
  });

  it('a source path with a line break is named in one line', async () => {
    await assert.rejects(
      inspectSource('Vert', '/nowhere/new\nline.tif'),
      refusedInOneLine('INVALID_SOURCE', /new\\nline\.tif: file not found$/),
    );
  });
});
