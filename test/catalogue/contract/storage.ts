import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testClock } from '../../support/clock.js';
import { box, everything, lFootprint, rectFootprint, survey } from '../helpers.js';
import type { CatalogueSubject } from './subject.js';

const ids = (page: { surveys: { id: string }[] }) => page.surveys.map((s) => s.id);

/** Storage: put, get, replace, delete, versions, referenced files. */
export function storageCases(subject: CatalogueSubject): void {
  describe('storage', () => {
    it('put then get returns the same survey, deeply', async () => {
      const catalogue = await subject.fresh();
      const s = survey('s1', {
        tags: ['disaster:hurricane', 'priority'],
        footprint: lFootprint(box(10, 44, 10.02, 44.02)),
        types: ['Vert', 'North', 'DetailDsm'],
      });
      s.timezone = 'Europe/Rome';
      await catalogue.put(s);
      assert.deepEqual(await catalogue.get('s1'), s);
      assert.equal(await catalogue.get('nope'), undefined);
      assert.equal(await catalogue.count(), 1);
      await catalogue.ping();
      await catalogue.close();
    });

    it('put with the same id replaces: one row, new body, footprint index moved', async () => {
      const catalogue = await subject.fresh();
      const oldArea = box(10, 44, 10.01, 44.01);
      const newArea = box(20, 50, 20.01, 50.01);
      await catalogue.put(survey('s1', { footprint: rectFootprint(oldArea), tags: ['a'] }));
      await catalogue.put(survey('other', { footprint: rectFootprint(oldArea) }));
      await catalogue.put(survey('s1', { footprint: rectFootprint(newArea), tags: ['b'], version: 2 }));
      assert.equal(await catalogue.count(), 2);
      assert.deepEqual((await catalogue.get('s1'))?.tags, ['b']);
      assert.equal((await catalogue.get('s1'))?.version, 2);
      const inOld = await catalogue.search({ ...everything, area: box(10.004, 44.004, 10.006, 44.006) });
      assert.deepEqual(ids(inOld), ['other']);
      const inNew = await catalogue.search({ ...everything, area: box(20.004, 50.004, 20.006, 50.006) });
      assert.deepEqual(ids(inNew), ['s1']);
      assert.equal((await catalogue.search(everything)).total, 2);
    });

    it('an id no engine can hold (NUL, a lone surrogate) names no survey, on every engine alike', async () => {
      const catalogue = await subject.fresh();
      await catalogue.put(survey('s1'));
      for (const id of ['s1\0', 'a\u0000b', '\uD800', 's1\uDC00', `${'x'.repeat(300)}\0`]) {
        assert.equal(await catalogue.get(id), undefined, JSON.stringify(id));
        assert.equal(await catalogue.delete(id), false);
        await assert.rejects(catalogue.put(survey(id)), { code: 'INVALID_PARAMETER' });
        await assert.rejects(catalogue.reserveVersion(id), { code: 'INVALID_PARAMETER' });
      }
      // A well-formed pair is a character like any other.
      await catalogue.put(survey('s\uD83D\uDE00'));
      assert.equal((await catalogue.get('s\uD83D\uDE00'))?.id, 's\uD83D\uDE00');
      assert.equal(await catalogue.count(), 2);
    });

    it('rejects a footprint with a non-finite coordinate (it could not be stored exactly)', async () => {
      const catalogue = await subject.fresh();
      const footprint = rectFootprint(box(10, 44, 10.01, 44.01));
      (footprint[0]?.[0]?.[2] as [number, number])[1] = Number.NaN;
      await assert.rejects(catalogue.put(survey('s1', { footprint })), /finite/);
      assert.equal(await catalogue.count(), 0);
    });

    it('rejects a survey with an empty footprint and leaves the catalogue unchanged', async () => {
      const catalogue = await subject.fresh();
      await catalogue.put(survey('s1'));
      await assert.rejects(catalogue.put(survey('s1', { footprint: [] })), /empty footprint/);
      assert.deepEqual((await catalogue.get('s1'))?.footprint, survey('s1').footprint);
      assert.equal(await catalogue.count(), 1);
    });

    it('delete removes the survey and its index entry, and reports whether it existed', async () => {
      const catalogue = await subject.fresh();
      await catalogue.put(survey('s1'));
      await catalogue.put(survey('s2'));
      assert.equal(await catalogue.delete('s1'), true);
      assert.equal(await catalogue.delete('s1'), false);
      assert.equal(await catalogue.delete('never'), false);
      assert.equal(await catalogue.get('s1'), undefined);
      assert.equal(await catalogue.count(), 1);
      assert.deepEqual(ids(await catalogue.search(everything)), ['s2']);
      // Re-adding after a delete works.
      await catalogue.put(survey('s1'));
      assert.deepEqual(ids(await catalogue.search(everything)), ['s1', 's2']);
    });

    it('reserveVersion counts 1, 2, 3 per id and never repeats, even after delete', async () => {
      const catalogue = await subject.fresh();
      assert.deepEqual(
        [await catalogue.reserveVersion('a'), await catalogue.reserveVersion('a'), await catalogue.reserveVersion('a')],
        [1, 2, 3],
      );
      assert.equal(await catalogue.reserveVersion('b'), 1);
      await catalogue.put(survey('a', { version: 3 }));
      assert.equal(await catalogue.delete('a'), true);
      assert.equal(await catalogue.reserveVersion('a'), 4);
    });

    it('a put with a higher version moves the reservation counter past it', async () => {
      const catalogue = await subject.fresh();
      await catalogue.put(survey('imported', { version: 7 }));
      assert.equal(await catalogue.reserveVersion('imported'), 8);
      // A lower version does not move it back.
      await catalogue.put(survey('imported', { version: 2 }));
      assert.equal(await catalogue.reserveVersion('imported'), 9);
    });

    it('referencedFiles lists every asset of every survey, once', async () => {
      const catalogue = await subject.fresh();
      assert.deepEqual(await catalogue.referencedFiles(), new Set());
      await catalogue.put(survey('s1', { types: ['Vert', 'DetailDsm'], version: 2 }));
      await catalogue.put(survey('s2', { types: ['North'] }));
      assert.deepEqual(
        await catalogue.referencedFiles(),
        new Set([
          'file:///data/surveys/s1/v2/Vert.tif',
          'file:///data/surveys/s1/v2/DetailDsm.tif',
          'file:///data/surveys/s2/v1/North.tif',
        ]),
      );
      // Replacing s1 with version 3 drops the version 2 files from the set.
      await catalogue.put(survey('s1', { types: ['Vert'], version: 3 }));
      assert.deepEqual(
        await catalogue.referencedFiles(),
        new Set(['file:///data/surveys/s1/v3/Vert.tif', 'file:///data/surveys/s2/v1/North.tif']),
      );
    });

    it('put and delete retire the files they drop, noting when; forgetRetired forgets them', async () => {
      const clock = testClock('2026-11-22T12:00:00.000Z');
      const catalogue = await subject.fresh(clock.now);
      const file = (version: number, type: string) => `file:///data/surveys/s1/v${version}/${type}.tif`;
      await catalogue.put(survey('s1', { types: ['Vert', 'DetailDsm'], version: 1 }));
      assert.deepEqual(await catalogue.retiredFiles(), []);
      clock.advance(60_000);
      await catalogue.put(survey('s1', { types: ['Vert'], version: 2 }));
      clock.advance(60_000);
      await catalogue.delete('s1');
      assert.deepEqual(await catalogue.retiredFiles(), [
        { location: file(1, 'DetailDsm'), retiredAt: '2026-11-22T12:01:00.000Z' },
        { location: file(1, 'Vert'), retiredAt: '2026-11-22T12:01:00.000Z' },
        { location: file(2, 'Vert'), retiredAt: '2026-11-22T12:02:00.000Z' },
      ]);
      await catalogue.forgetRetired([file(1, 'DetailDsm'), file(1, 'Vert')]);
      assert.deepEqual(
        (await catalogue.retiredFiles()).map((r) => r.location),
        [file(2, 'Vert')],
      );
    });

    it('reserveVersion notes when; reservations give the newest version of each survey', async () => {
      const clock = testClock('2026-11-22T12:00:00.000Z');
      const catalogue = await subject.fresh(clock.now);
      await catalogue.reserveVersion('a');
      clock.advance(5_000);
      await catalogue.reserveVersion('a');
      await catalogue.reserveVersion('b');
      assert.deepEqual(
        await catalogue.reservations(),
        new Map([
          ['a', { version: 2, reservedAt: '2026-11-22T12:00:05.000Z' }],
          ['b', { version: 1, reservedAt: '2026-11-22T12:00:05.000Z' }],
        ]),
      );
    });
  });
}
