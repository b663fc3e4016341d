/** Same seed, same pixels (with or without worker threads); another seed, another town. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { generateDemoTown } from '../src/index.js';
import { readAll } from './raster-probe.js';

const ASSETS = ['TrueOrtho', 'DetailDsm', 'Vert', 'North', 'South', 'East', 'West'];
/** A 50 m square around the church, after the storm (the survey with the most going on). */
const SMALL = { clip: { minX: -40, minY: -25, maxX: 10, maxY: 25 }, surveys: ['2025-10-20'] };

let root = '';
const dirs: Record<'first' | 'again' | 'other', string> = { first: '', again: '', other: '' };

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'nadir-demo-determinism-'));
  for (const key of Object.keys(dirs) as (keyof typeof dirs)[]) dirs[key] = join(root, key);
  await generateDemoTown({ outDir: dirs.first, seed: 7, workers: 0, ...SMALL });
  await generateDemoTown({ outDir: dirs.again, seed: 7, workers: 1, ...SMALL });
  await generateDemoTown({ outDir: dirs.other, seed: 8, workers: 1, ...SMALL });
});

after(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

it('gives identical pixels and files for the same seed, whatever the thread count', async () => {
  for (const asset of ASSETS) {
    const path = (dir: string) => join(dir, '2025-10-20', `${asset}.tif`);
    assert.deepEqual(readAll(path(dirs.again)), readAll(path(dirs.first)), asset);
    assert.ok((await readFile(path(dirs.again))).equals(await readFile(path(dirs.first))), `${asset} bytes`);
  }
  const manifest = (dir: string) => readFile(join(dir, '2025-10-20', 'manifest.json'), 'utf8');
  assert.equal(await manifest(dirs.again), await manifest(dirs.first));
});

it('gives a different town for a different seed, on the same grid', () => {
  const path = (dir: string) => join(dir, '2025-10-20', 'TrueOrtho.tif');
  const first = readAll(path(dirs.first));
  const other = readAll(path(dirs.other));
  assert.deepEqual(other.geoTransform, first.geoTransform);
  const differing = first.bands[0]!.filter((value, k) => value !== other.bands[0]![k]).length;
  assert.ok(differing > first.bands[0]!.length / 10, `${differing} of ${first.bands[0]!.length} pixels differ`);
});
