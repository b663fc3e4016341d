/**
 * Counterexamples the manifest properties (test/cli/properties.test.ts) found, shrunk and kept as
 * example-based tests: each failed before the fix named beside it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifest } from '../../src/ingest/manifest.js';

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
});
