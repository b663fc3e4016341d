/**
 * Keyset walks and the maintained groups, against the brute force of brute-force.ts over its
 * 2,000 surveys: a walk followed page by page yields exactly the brute-force order, on small
 * areas (read at once) and on the whole catalogue (the order's index); every group equals the
 * one computed from the surveys themselves.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  GroupQuery,
  SurveyCatalogue,
  SurveySearch,
  SurveySpan,
  SurveyWalk,
} from '../../../src/catalogue/catalogue.js';
import type { ContentType, Survey } from '../../../src/catalogue/survey.js';
import type { Bounds } from '../../../src/geo/web-mercator.js';
import { box, rectFootprint, survey } from '../helpers.js';
import type { CatalogueSubject } from './subject.js';

export interface Surveyed<Shape> {
  s: Survey;
  shape: Shape;
}

/** What brute-force.ts lends: its catalogue and surveys, its brute force and its random source. */
export interface BruteForce<Shape> {
  context(): { catalogue: SurveyCatalogue; all: Surveyed<Shape>[] };
  bruteSearch(all: Surveyed<Shape>[], query: Omit<SurveySearch, 'limit' | 'offset'>): string[];
  randomQuery(): SurveySearch;
  boundsOf(shape: Shape): Bounds;
  rand(): number;
  /** The whole grid the surveys lie on, and more. */
  everywhere: Bounds;
  dates: readonly string[];
  patterns: readonly string[];
}

type Aggregate = SurveySpan;

const tagMatch = (tag: string, pattern: string) =>
  tag === pattern || (!pattern.includes(':') && tag.split(':')[0] === pattern);

/** The groups a query selects, computed from the surveys, by `tag|date`. */
export function bruteGroups<Shape>(
  all: Surveyed<Shape>[],
  query: GroupQuery,
  boundsOf: (shape: Shape) => Bounds,
): Map<string, Aggregate> {
  const groups = new Map<string, Aggregate>();
  for (const { s, shape } of all) {
    if ((query.since && s.captureDate < query.since) || (query.until && s.captureDate > query.until)) continue;
    const asset = query.type ? s.assets[query.type] : undefined;
    if (query.type && !asset) continue;
    const own = [...new Set(s.tags)];
    const tags =
      query.tags === 'none'
        ? ['']
        : query.tags === 'all'
          ? ['', ...own]
          : own.filter((tag) => (query.tags as string[]).some((p) => tagMatch(tag, p)));
    const b = boundsOf(shape);
    for (const tag of tags) {
      const key = `${tag}|${s.captureDate}`;
      const g = groups.get(key);
      const minZoom = asset?.minZoom ?? 0;
      const maxZoom = asset?.maxZoom ?? 0;
      if (!g) {
        groups.set(key, {
          surveys: 1,
          bounds: { ...b },
          firstPhotoTime: s.firstPhotoTime,
          lastPhotoTime: s.lastPhotoTime,
          minZoom,
          maxZoom,
        });
        continue;
      }
      g.surveys++;
      g.bounds = {
        minX: Math.min(g.bounds.minX, b.minX),
        minY: Math.min(g.bounds.minY, b.minY),
        maxX: Math.max(g.bounds.maxX, b.maxX),
        maxY: Math.max(g.bounds.maxY, b.maxY),
      };
      if (s.firstPhotoTime < g.firstPhotoTime) g.firstPhotoTime = s.firstPhotoTime;
      if (s.lastPhotoTime > g.lastPhotoTime) g.lastPhotoTime = s.lastPhotoTime;
      g.minZoom = Math.min(g.minZoom, minZoom);
      g.maxZoom = Math.max(g.maxZoom, maxZoom);
    }
  }
  return groups;
}

/** The catalogue's groups equal the brute force's (boxes to 1e-9 degree). */
export async function assertGroups<Shape>(
  catalogue: SurveyCatalogue,
  all: Surveyed<Shape>[],
  query: GroupQuery,
  boundsOf: (shape: Shape) => Bounds,
): Promise<number> {
  const expected = bruteGroups(all, query, boundsOf);
  const found = await catalogue.groups(query);
  const label = JSON.stringify(query);
  assert.deepEqual(found.map((g) => `${g.tag}|${g.captureDate}`).sort(), [...expected.keys()].sort(), label);
  for (const g of found) {
    const e = expected.get(`${g.tag}|${g.captureDate}`) as Aggregate;
    assert.equal(g.type, query.type ?? '', label);
    assert.equal(g.surveys, e.surveys, label);
    assert.equal(g.firstPhotoTime, e.firstPhotoTime, label);
    assert.equal(g.lastPhotoTime, e.lastPhotoTime, label);
    assert.deepEqual([g.minZoom, g.maxZoom], [e.minZoom, e.maxZoom], label);
    for (const side of ['minX', 'minY', 'maxX', 'maxY'] as const) {
      assert.ok(
        Math.abs(g.bounds[side] - e.bounds[side]) < 1e-9,
        `${label} ${side}: ${g.bounds[side]} vs ${e.bounds[side]}`,
      );
    }
  }
  const dates = found.map((g) => g.captureDate);
  assert.deepEqual(dates, [...dates].sort().reverse(), 'newest date first');
  // Merged a row a tag, in the engine: the same figures, every date once, newest first.
  const merged = new Map<string, Aggregate & { dates: string[] }>();
  for (const [key, e] of [...expected].sort(([a], [b]) => (a < b ? 1 : -1))) {
    const [tag, date] = key.split('|') as [string, string];
    const m = merged.get(tag);
    if (!m) {
      merged.set(tag, { ...e, bounds: { ...e.bounds }, dates: [date] });
      continue;
    }
    m.surveys += e.surveys;
    m.bounds = {
      minX: Math.min(m.bounds.minX, e.bounds.minX),
      minY: Math.min(m.bounds.minY, e.bounds.minY),
      maxX: Math.max(m.bounds.maxX, e.bounds.maxX),
      maxY: Math.max(m.bounds.maxY, e.bounds.maxY),
    };
    if (e.firstPhotoTime < m.firstPhotoTime) m.firstPhotoTime = e.firstPhotoTime;
    if (e.lastPhotoTime > m.lastPhotoTime) m.lastPhotoTime = e.lastPhotoTime;
    m.minZoom = Math.min(m.minZoom, e.minZoom);
    m.maxZoom = Math.max(m.maxZoom, e.maxZoom);
    m.dates.push(date);
  }
  const extents = await catalogue.extents(query);
  assert.deepEqual(
    extents.map((x) => x.tag),
    [...merged.keys()].sort(),
    `${label}: a row a tag, in tag order`,
  );
  for (const x of extents) {
    const m = merged.get(x.tag) as Aggregate & { dates: string[] };
    assert.deepEqual(
      [x.surveys, x.firstPhotoTime, x.lastPhotoTime, x.minZoom, x.maxZoom, x.captureDates],
      [m.surveys, m.firstPhotoTime, m.lastPhotoTime, m.minZoom, m.maxZoom, m.dates],
      `${label} extent of ${x.tag}`,
    );
    for (const side of ['minX', 'minY', 'maxX', 'maxY'] as const) {
      assert.ok(Math.abs(x.bounds[side] - m.bounds[side]) < 1e-9, `${label} extent ${side}`);
    }
  }
  return found.length;
}

export function walkAndGroupCases<Shape>(b: BruteForce<Shape>): void {
  const int = (n: number) => Math.floor(b.rand() * n);

  it('a walk followed page by page yields exactly the brute-force order, small areas and the whole catalogue', async () => {
    const { catalogue, all } = b.context();
    let wide = 0;
    for (let i = 0; i < 60; i++) {
      const { overlap: _, limit: __, offset: ___, ...query } = b.randomQuery();
      const isWide = b.rand() < 0.4;
      if (isWide) {
        query.area = b.everywhere;
        wide++;
      }
      const order = b.rand() < 0.5 ? 'newest' : 'oldest';
      const keep = b.rand() < 0.3 ? (s: Survey) => s.id.charCodeAt(s.id.length - 1) % 3 !== 0 : undefined;
      const byId = new Map(all.map(({ s }) => [s.id, s]));
      let expected = b.bruteSearch(all, query);
      if (order === 'oldest') expected = expected.reverse();
      if (keep) expected = expected.filter((id) => keep(byId.get(id) as Survey));
      const walk: SurveyWalk = {
        ...query,
        order,
        limit: isWide ? 50 + int(200) : 1 + int(20),
        keep,
        maxExamined: b.rand() < 0.3 ? 100 + int(400) : undefined,
      };
      const seen: string[] = [];
      let pages = 0;
      for (let after = walk.after; ; pages++) {
        assert.ok(pages < 1000, 'the walk ends');
        const page = await catalogue.walk({ ...walk, after });
        assert.ok(page.surveys.length <= walk.limit);
        if (walk.maxExamined === undefined && page.resume)
          assert.equal(page.surveys.length, walk.limit, 'only a full page resumes');
        seen.push(...page.surveys.map((s) => s.id));
        if (!page.resume) break;
        after = page.resume;
      }
      assert.deepEqual(seen, expected, `walk ${i}: ${JSON.stringify({ ...walk, keep: Boolean(keep) })}`);
    }
    assert.ok(wide > 10);
  });

  it('every group equals the one computed from the surveys', async () => {
    const { catalogue, all } = b.context();
    const types: (ContentType | undefined)[] = [undefined, 'Vert', 'DetailDsm', 'West'];
    let groups = 0;
    for (let i = 0; i < 40; i++) {
      const roll = b.rand();
      const tags: GroupQuery['tags'] =
        roll < 0.3 ? 'none' : roll < 0.6 ? 'all' : b.patterns.filter(() => b.rand() < 0.3).slice(0, 3);
      const dates = [...b.dates].sort();
      const since = b.rand() < 0.3 ? dates[int(dates.length)] : undefined;
      const until = b.rand() < 0.3 ? dates[int(dates.length)] : undefined;
      groups += await assertGroups(catalogue, all, { type: types[i % types.length], tags, since, until }, b.boundsOf);
    }
    assert.ok(groups > 500, `${groups} groups compared`);
  });
}

/** Groups stay exact through replacements, deletes and two servers writing the same date at once. */
export function groupMaintenanceCases(subject: CatalogueSubject): void {
  describe('maintained groups', () => {
    const boundsOf = (b: Bounds) => b;
    const put = async (catalogue: SurveyCatalogue, all: Surveyed<Bounds>[], s: Survey, b: Bounds) => {
      await catalogue.put(s);
      const at = all.findIndex((x) => x.s.id === s.id);
      if (at >= 0) all.splice(at, 1);
      all.push({ s, shape: b });
    };
    const zoomed = (s: Survey, minZoom: number, maxZoom: number): Survey => {
      for (const a of Object.values(s.assets)) Object.assign(a as object, { minZoom, maxZoom });
      return s;
    };
    const check = async (catalogue: SurveyCatalogue, all: Surveyed<Bounds>[]) => {
      for (const tags of ['none', 'all', ['disaster']] as const) {
        for (const type of [undefined, 'Vert', 'DetailDsm'] as const) {
          await assertGroups(catalogue, all, { type, tags }, boundsOf);
        }
      }
    };

    it('follow puts, replacements that move a survey to another date, and deletes', async () => {
      const catalogue = await subject.fresh();
      const all: Surveyed<Bounds>[] = [];
      const b1 = box(10, 44, 10.01, 44.01);
      const b2 = box(11, 45, 11.02, 45.03);
      await put(
        catalogue,
        all,
        zoomed(
          survey('a', { captureDate: '2024-05-01', tags: ['disaster:fire'], footprint: rectFootprint(b1) }),
          14,
          20,
        ),
        b1,
      );
      await put(
        catalogue,
        all,
        zoomed(survey('b', { captureDate: '2024-05-01', types: ['Vert'], footprint: rectFootprint(b2) }), 12, 22),
        b2,
      );
      await check(catalogue, all);
      // The widest and deepest survey moves to another date: the old date's group shrinks back.
      await put(
        catalogue,
        all,
        zoomed(
          survey('b', {
            captureDate: '2024-06-02',
            version: 2,
            types: ['Vert', 'DetailDsm'],
            tags: ['disaster'],
            footprint: rectFootprint(b2),
          }),
          13,
          19,
        ),
        b2,
      );
      await check(catalogue, all);
      const [may] = await catalogue.groups({ type: 'Vert', tags: 'none', until: '2024-05-31' });
      assert.deepEqual([may?.surveys, may?.maxZoom], [1, 20]);
      assert.ok(
        Math.abs((may?.bounds.maxX ?? 0) - 10.01) < 1e-9,
        'the box shrank back to the survey left on that date',
      );
      assert.equal(await catalogue.delete('a'), true);
      all.splice(0, 1);
      await check(catalogue, all);
      assert.deepEqual(
        (await catalogue.groups({ tags: 'all', until: '2024-05-31' })).length,
        0,
        'no group of an emptied date',
      );
      assert.equal(await catalogue.delete('b'), true);
      assert.deepEqual(await catalogue.groups({ tags: 'all' }), []);
    });

    it('stay exact when two servers put surveys of one date at the same time', async () => {
      const first = await subject.fresh();
      const second = await subject.another(first);
      const all: Surveyed<Bounds>[] = [];
      const writes = Array.from({ length: 24 }, (_, i) => {
        const b = box(10 + i / 10, 44, 10.05 + i / 10, 44 + i / 100 + 0.01);
        const s = survey(`p${i}`, {
          captureDate: '2024-07-07',
          tags: i % 3 ? [] : ['event:fair'],
          footprint: rectFootprint(b),
        });
        all.push({ s, shape: b });
        return (i % 2 ? first : second).put(s);
      });
      await Promise.all(writes);
      await check(first, all);
      const [group] = await second.groups({ tags: 'none' });
      assert.equal(group?.surveys, 24);
    });
  });
}
