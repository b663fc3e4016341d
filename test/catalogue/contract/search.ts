import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SurveyCatalogue, SurveySearch } from '../../../src/catalogue/catalogue.js';
import type { ContentType, Survey } from '../../../src/catalogue/survey.js';
import { box, everything, lFootprint, rectFootprint, survey } from '../helpers.js';
import type { CatalogueSubject } from './subject.js';

async function searchIds(catalogue: SurveyCatalogue, query: Partial<SurveySearch>): Promise<string[]> {
  const page = await catalogue.search({ ...everything, ...query });
  assert.equal(page.total, page.surveys.length, 'unpaged: total is the page length');
  return page.surveys.map((s) => s.id);
}

const sorted = (xs: string[]) => [...xs].sort();

async function catalogueOf(subject: CatalogueSubject, surveys: Survey[]): Promise<SurveyCatalogue> {
  const catalogue = await subject.fresh();
  for (const s of surveys) await catalogue.put(s);
  return catalogue;
}

/** Search: geometry, filters, ordering and paging. */
export function searchCases(subject: CatalogueSubject): void {
  describe('search: geometry', () => {
    // The L spans [10, 10.02] x [44, 44.02]; its notch is (10.01, 10.02] x (44.01, 44.02].
    const lShape = lFootprint(box(10, 44, 10.02, 44.02));

    it('a box in the notch matches neither overlap mode; one overlapping an arm matches intersects only', async () => {
      const catalogue = await catalogueOf(subject, [survey('ell', { footprint: lShape })]);
      const notch = box(10.012, 44.012, 10.018, 44.018);
      assert.deepEqual(await searchIds(catalogue, { area: notch }), []);
      assert.deepEqual(await searchIds(catalogue, { area: notch, overlap: 'full' }), []);
      const overArm = box(10.008, 44.012, 10.014, 44.018);
      assert.deepEqual(await searchIds(catalogue, { area: overArm }), ['ell']);
      assert.deepEqual(await searchIds(catalogue, { area: overArm, overlap: 'full' }), []);
      const inArm = box(10.002, 44.012, 10.008, 44.018);
      assert.deepEqual(await searchIds(catalogue, { area: inArm }), ['ell']);
      assert.deepEqual(await searchIds(catalogue, { area: inArm, overlap: 'full' }), ['ell']);
      assert.deepEqual(await searchIds(catalogue, { area: inArm, overlap: 'intersects' }), ['ell']);
    });

    it('an area crossing no footprint gives an empty page with total 0', async () => {
      const catalogue = await catalogueOf(subject, [
        survey('a', { footprint: rectFootprint(box(10, 44, 10.01, 44.01)) }),
        survey('b', { footprint: rectFootprint(box(11, 45, 11.01, 45.01)) }),
      ]);
      for (const overlap of ['intersects', 'full'] as const) {
        const page = await catalogue.search({ area: box(10.5, 44.5, 10.6, 44.6), overlap, limit: 20, offset: 0 });
        assert.deepEqual(page, { surveys: [], total: 0 });
      }
      // Sharing only an edge with a footprint is not an intersection.
      assert.deepEqual(await searchIds(catalogue, { area: box(10.01, 44, 10.02, 44.01) }), []);
      // An area covering both finds both, but neither covers it.
      assert.deepEqual(sorted(await searchIds(catalogue, { area: box(9, 43, 12, 46) })), ['a', 'b']);
      assert.deepEqual(await searchIds(catalogue, { area: box(9, 43, 12, 46), overlap: 'full' }), []);
    });

    it('an area exactly equal to a footprint is fully covered by it', async () => {
      const footprint = box(10, 44, 10.01, 44.01);
      const catalogue = await catalogueOf(subject, [survey('a', { footprint: rectFootprint(footprint) })]);
      assert.deepEqual(await searchIds(catalogue, { area: footprint, overlap: 'full' }), ['a']);
    });
  });

  describe('search: filters', () => {
    it('since/until are inclusive on captureDate', async () => {
      const catalogue = await catalogueOf(
        subject,
        ['2023-12-31', '2024-01-01', '2024-06-15', '2024-12-31', '2025-01-01'].map((d) =>
          survey(d, { captureDate: d }),
        ),
      );
      assert.deepEqual(await searchIds(catalogue, { since: '2024-01-01', until: '2024-12-31' }), [
        '2024-12-31',
        '2024-06-15',
        '2024-01-01',
      ]);
      assert.deepEqual(await searchIds(catalogue, { since: '2024-06-15', until: '2024-06-15' }), ['2024-06-15']);
      assert.deepEqual(await searchIds(catalogue, { since: '2025-01-01' }), ['2025-01-01']);
      assert.deepEqual(await searchIds(catalogue, { until: '2023-12-31' }), ['2023-12-31']);
      assert.deepEqual(await searchIds(catalogue, { since: '2024-06-16', until: '2024-06-14' }), []);
    });

    it('types: all (default) needs every type, any needs one', async () => {
      const catalogue = await catalogueOf(subject, [
        survey('vert', { types: ['Vert'] }),
        survey('ortho-dsm', { types: ['TrueOrtho', 'DetailDsm'] }),
        survey('all3', { types: ['Vert', 'TrueOrtho', 'DetailDsm'] }),
        survey('pano', { types: ['North', 'South', 'East', 'West'] }),
      ]);
      const q = async (types: ContentType[], any = false) =>
        sorted(await searchIds(catalogue, { types, ...(any ? { typeMatch: 'any' as const } : {}) }));
      assert.deepEqual(await q(['Vert']), ['all3', 'vert']);
      assert.deepEqual(await q(['Vert', 'DetailDsm']), ['all3']);
      assert.deepEqual(await q(['Vert', 'DetailDsm'], true), ['all3', 'ortho-dsm', 'vert']);
      assert.deepEqual(await q(['TrueOrtho', 'DetailDsm']), ['all3', 'ortho-dsm']);
      assert.deepEqual(await q(['West']), ['pano']);
      assert.deepEqual(await q(['West', 'Vert']), []);
      assert.deepEqual(await q(['West', 'Vert'], true), ['all3', 'pano', 'vert']);
      assert.deepEqual(await q([]), ['all3', 'ortho-dsm', 'pano', 'vert']);
      assert.deepEqual(
        sorted(await searchIds(catalogue, { types: ['Vert'], typeMatch: 'all' })),
        await q(['Vert']),
        'explicit all = default',
      );
    });

    it('tags: include a type, exclude a name, or both', async () => {
      const catalogue = await catalogueOf(subject, [
        survey('plain'),
        survey('hurricane', { tags: ['disaster:hurricane'] }),
        survey('fire', { tags: ['disaster:fire'] }),
        survey('fire+flood', { tags: ['disaster:fire', 'disaster:flood'] }),
        survey('bare-type', { tags: ['disaster'] }),
        survey('lookalike', { tags: ['disasterous', 'disasters:fire'] }),
        survey('event', { tags: ['event:marathon'] }),
      ]);
      const q = async (include?: string[], exclude?: string[]) =>
        sorted(await searchIds(catalogue, { tags: { ...(include && { include }), ...(exclude && { exclude }) } }));
      assert.deepEqual(await q(['disaster']), ['bare-type', 'fire', 'fire+flood', 'hurricane']);
      assert.deepEqual(await q(['disaster:fire']), ['fire', 'fire+flood']);
      assert.deepEqual(await q(undefined, ['disaster:fire']), [
        'bare-type',
        'event',
        'hurricane',
        'lookalike',
        'plain',
      ]);
      assert.deepEqual(await q(['disaster'], ['disaster:fire']), ['bare-type', 'hurricane']);
      assert.deepEqual(await q(undefined, ['disaster']), ['event', 'lookalike', 'plain']);
      assert.deepEqual(await q(['disaster:hurricane', 'event']), ['event', 'hurricane']);
      assert.deepEqual(await q(['Disaster']), [], 'case-sensitive');
      assert.deepEqual(await q([], []), await q());
      assert.equal((await q()).length, 7);
    });

    it('all filters combine', async () => {
      const catalogue = await catalogueOf(subject, [
        survey('hit', { captureDate: '2024-05-01', types: ['Vert'], tags: ['disaster:tornado'] }),
        survey('old', { captureDate: '2020-05-01', types: ['Vert'], tags: ['disaster:tornado'] }),
        survey('dsm-only', { captureDate: '2024-05-01', types: ['DetailDsm'], tags: ['disaster:tornado'] }),
        survey('untagged', { captureDate: '2024-05-01', types: ['Vert'] }),
        survey('elsewhere', {
          captureDate: '2024-05-01',
          types: ['Vert'],
          tags: ['disaster:tornado'],
          footprint: rectFootprint(box(0, 0, 1, 1)),
        }),
      ]);
      const ids = await searchIds(catalogue, {
        area: box(10.004, 44.004, 10.006, 44.006),
        since: '2024-01-01',
        types: ['Vert'],
        tags: { include: ['disaster'] },
        overlap: 'full',
      });
      assert.deepEqual(ids, ['hit']);
    });
  });

  describe('search: ordering and paging', () => {
    // Built with ties on captureDate and on (captureDate, lastPhotoTime), ids inserted out of order.
    const surveys = [
      survey('c', { captureDate: '2024-05-01', lastPhotoTime: '2024-05-01T10:00:00Z' }),
      survey('a', { captureDate: '2024-05-01', lastPhotoTime: '2024-05-01T10:00:00Z' }),
      survey('z', { captureDate: '2024-05-01', lastPhotoTime: '2024-05-01T15:00:00Z' }),
      survey('b', { captureDate: '2024-05-01', lastPhotoTime: '2024-05-01T10:00:00Z' }),
      survey('old', { captureDate: '2019-01-01' }),
      // Captured late on the 2nd local time but with an earlier UTC photo time than 'z': captureDate wins.
      survey('new', { captureDate: '2024-05-02', lastPhotoTime: '2024-05-01T09:00:00Z' }),
      survey('mid', { captureDate: '2022-07-07' }),
    ];
    const newest = ['new', 'z', 'a', 'b', 'c', 'mid', 'old'];

    it('newest first: captureDate desc, then lastPhotoTime desc, then id asc', async () => {
      const catalogue = await catalogueOf(subject, surveys);
      assert.deepEqual(await searchIds(catalogue, {}), newest);
      assert.deepEqual(await searchIds(catalogue, { order: 'newest' }), newest);
    });

    it("order 'oldest' is the exact reverse", async () => {
      const catalogue = await catalogueOf(subject, surveys);
      assert.deepEqual(await searchIds(catalogue, { order: 'oldest' }), [...newest].reverse());
    });

    it('pages concatenate to the full list and report the full total', async () => {
      const catalogue = await catalogueOf(subject, surveys);
      for (const order of ['newest', 'oldest'] as const) {
        const full = await searchIds(catalogue, { order });
        for (const limit of [1, 2, 3, 7, 100]) {
          const collected: string[] = [];
          for (let offset = 0; offset < full.length; offset += limit) {
            const page = await catalogue.search({ ...everything, order, limit, offset });
            assert.equal(page.total, 7);
            assert.equal(page.surveys.length, Math.min(limit, 7 - offset));
            collected.push(...page.surveys.map((s) => s.id));
          }
          assert.deepEqual(collected, full, `${order} limit ${limit}`);
        }
      }
      const beyond = await catalogue.search({ ...everything, limit: 5, offset: 50 });
      assert.deepEqual(beyond, { surveys: [], total: 7 });
      const none = await catalogue.search({ ...everything, limit: 0, offset: 0 });
      assert.deepEqual(none, { surveys: [], total: 7 });
    });

    it('total counts matches after filters, not the page or the catalogue', async () => {
      const catalogue = await catalogueOf(subject, surveys);
      const page = await catalogue.search({ ...everything, since: '2024-01-01', limit: 2, offset: 1 });
      assert.equal(page.total, 5);
      assert.deepEqual(
        page.surveys.map((s) => s.id),
        ['z', 'a'],
      );
    });
  });
}
