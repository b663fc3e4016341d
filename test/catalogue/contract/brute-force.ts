/**
 * A 2,000-survey catalogue searched with random queries; the R*Tree prefilter + exact polygon test
 * must return exactly what a brute-force scan finds. The brute force is independent of src/geo:
 * footprints are rectangles, L-shapes (a rectangle minus its top-right quarter) and pairs of
 * separate rectangles, whose box tests are simple interval arithmetic. Coordinates sit on a
 * 1/256 degree grid (exact in float32 and float64), so boxes often touch footprints exactly and
 * the edge rules are exercised: sharing only an edge is no intersection; touching from inside
 * still covers.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { SurveyCatalogue, SurveyListing, SurveySearch } from '../../../src/catalogue/catalogue.js';
import { CONTENT_TYPES, type ContentType, type Survey } from '../../../src/catalogue/survey.js';
import type { MultiPolygon } from '../../../src/geo/polygon.js';
import type { Bounds } from '../../../src/geo/web-mercator.js';
import { mulberry32 } from '../../geo/helpers.js';
import { box, lFootprint, rectFootprint, survey } from '../helpers.js';
import type { CatalogueSubject } from './subject.js';
import { walkAndGroupCases } from './walk-groups.js';

const STEP = 1 / 256;
const rand = mulberry32(20240601);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;

/** A shape in grid units turned into degrees; `kind` says how the brute force treats it. */
type Shape = { kind: 'rect' | 'ell'; b: Bounds } | { kind: 'pair'; parts: [Bounds, Bounds] };

const deg = (gx: number, gy: number, w: number, h: number): Bounds =>
  box(10 + gx * STEP, 44 + gy * STEP, 10 + (gx + w) * STEP, 44 + (gy + h) * STEP);

function randomShape(): Shape {
  const roll = rand();
  const gx = int(480);
  const gy = int(480);
  if (roll < 0.4) return { kind: 'rect', b: deg(gx, gy, 1 + int(24), 1 + int(24)) };
  if (roll < 0.8) return { kind: 'ell', b: deg(gx, gy, 2 * (1 + int(12)), 2 * (1 + int(12))) };
  const w = 1 + int(8);
  return {
    kind: 'pair',
    parts: [deg(gx, gy, w, 1 + int(8)), deg(gx + w + 1 + int(6), gy + int(6), 1 + int(8), 1 + int(8))],
  };
}

function shapeBounds(shape: Shape): Bounds {
  if (shape.kind !== 'pair') return shape.b;
  const [a, b] = shape.parts;
  return box(Math.min(a.minX, b.minX), Math.min(a.minY, b.minY), Math.max(a.maxX, b.maxX), Math.max(a.maxY, b.maxY));
}

function footprintOf(shape: Shape): MultiPolygon {
  if (shape.kind === 'pair') return [...rectFootprint(shape.parts[0]), ...rectFootprint(shape.parts[1])];
  return shape.kind === 'rect' ? rectFootprint(shape.b) : lFootprint(shape.b);
}

// ---- the brute force (closed shapes; "intersects" means sharing positive area) ----
const overlapArea = (a: Bounds, b: Bounds) =>
  Math.max(a.minX, b.minX) < Math.min(a.maxX, b.maxX) && Math.max(a.minY, b.minY) < Math.min(a.maxY, b.maxY);
const contains = (outer: Bounds, inner: Bounds) =>
  outer.minX <= inner.minX && inner.maxX <= outer.maxX && outer.minY <= inner.minY && inner.maxY <= outer.maxY;
const notchOf = (b: Bounds) => box((b.minX + b.maxX) / 2, (b.minY + b.maxY) / 2, b.maxX, b.maxY);

function bruteIntersects(shape: Shape, area: Bounds): boolean {
  if (shape.kind === 'rect') return overlapArea(shape.b, area);
  if (shape.kind === 'pair') return shape.parts.some((p) => overlapArea(p, area));
  if (!overlapArea(shape.b, area)) return false;
  const clipped = box(
    Math.max(shape.b.minX, area.minX),
    Math.max(shape.b.minY, area.minY),
    Math.min(shape.b.maxX, area.maxX),
    Math.min(shape.b.maxY, area.maxY),
  );
  return !contains(notchOf(shape.b), clipped); // something of it lies outside the notch
}

function bruteCovers(shape: Shape, area: Bounds): boolean {
  if (shape.kind === 'rect') return contains(shape.b, area);
  if (shape.kind === 'pair') return shape.parts.some((p) => contains(p, area));
  return contains(shape.b, area) && !overlapArea(notchOf(shape.b), area);
}

const tagMatch = (tag: string, pattern: string) =>
  tag === pattern || (!pattern.includes(':') && tag.split(':')[0] === pattern);

function bruteSearch(all: { s: Survey; shape: Shape }[], q: Omit<SurveySearch, 'limit' | 'offset'>): string[] {
  return all
    .filter(({ s, shape }) => {
      if (!(q.overlap === 'full' ? bruteCovers(shape, q.area) : bruteIntersects(shape, q.area))) return false;
      if (q.since && s.captureDate < q.since) return false;
      if (q.until && s.captureDate > q.until) return false;
      if (q.types?.length) {
        const has = q.types.map((t) => t in s.assets);
        if (q.typeMatch === 'any' ? !has.includes(true) : has.includes(false)) return false;
      }
      const { include = [], exclude = [] } = q.tags ?? {};
      if (include.length && !include.some((p) => s.tags.some((t) => tagMatch(t, p)))) return false;
      return !exclude.some((p) => s.tags.some((t) => tagMatch(t, p)));
    })
    .map(({ s }) => s)
    .sort((a, b) =>
      a.captureDate !== b.captureDate
        ? b.captureDate.localeCompare(a.captureDate)
        : a.lastPhotoTime !== b.lastPhotoTime
          ? b.lastPhotoTime.localeCompare(a.lastPhotoTime)
          : a.id.localeCompare(b.id),
    )
    .map((s) => s.id);
}

/** A survey as a listing shows it, written out independently of src/catalogue/survey-rows.ts. */
function listingOf(s: Survey): SurveyListing {
  const assets: SurveyListing['assets'] = {};
  for (const [type, asset] of Object.entries(s.assets)) {
    if (asset) assets[type as ContentType] = { gsd: asset.gsd, maxZoom: asset.maxZoom };
  }
  const { id, captureDate, firstPhotoTime, lastPhotoTime, tags, version } = s;
  return { id, captureDate, firstPhotoTime, lastPhotoTime, tags, version, assets };
}

// ---- data ----
const DATES = Array.from(
  { length: 40 },
  (_, i) => `20${String(15 + (i % 10)).padStart(2, '0')}-0${1 + (i % 9)}-1${i % 10}`,
);
const TAGS = [
  'disaster:hurricane',
  'disaster:fire',
  'disaster:flood',
  'disaster',
  'disasters:fire',
  'event:marathon',
  'priority',
];
const PATTERNS = ['disaster', 'disaster:fire', 'disaster:hurricane', 'event', 'priority', 'unknown'];

function randomQuery(): SurveySearch {
  const w = 1 + int(rand() < 0.8 ? 16 : 96);
  const h = 1 + int(rand() < 0.8 ? 16 : 96);
  let area = deg(int(500) - 10, int(500) - 10, w, h);
  if (rand() < 0.25) {
    const dx = rand() * STEP;
    const dy = rand() * STEP;
    area = box(area.minX + dx, area.minY + dy, area.maxX + dx * rand(), area.maxY + dy * rand());
  }
  const q: SurveySearch = { area, limit: 10_000, offset: 0 };
  if (rand() < 0.5) q.overlap = 'full';
  if (rand() < 0.3) q.since = pick(DATES);
  if (rand() < 0.3) q.until = pick(DATES);
  if (rand() < 0.3) {
    q.types = [pick(CONTENT_TYPES), pick(CONTENT_TYPES)];
    q.typeMatch = rand() < 0.5 ? 'all' : 'any';
  }
  if (rand() < 0.3)
    q.tags = { include: rand() < 0.6 ? [pick(PATTERNS)] : [], exclude: rand() < 0.5 ? [pick(PATTERNS)] : [] };
  return q;
}

/** Search against a brute-force scan of random surveys and queries. */
export function bruteForceCases(subject: CatalogueSubject): void {
  describe('search agrees with a brute-force scan on 2,000 surveys', () => {
    const all: { s: Survey; shape: Shape }[] = [];
    let catalogue: SurveyCatalogue;

    before(async () => {
      catalogue = await subject.lasting();
      for (let i = 0; i < 2000; i++) {
        const shape = randomShape();
        const captureDate = pick(DATES);
        const s = survey(`s${String(int(1e6)).padStart(6, '0')}-${i}`, {
          captureDate,
          lastPhotoTime: `${captureDate}T${String(10 + int(3)).padStart(2, '0')}:00:00Z`,
          footprint: footprintOf(shape),
          types: CONTENT_TYPES.filter(() => rand() < 0.5) as ContentType[],
          tags: TAGS.filter(() => rand() < 0.2),
        });
        all.push({ s, shape });
        await catalogue.put(s);
      }
    });

    it('has them all', async () => {
      assert.equal(await catalogue.count(), 2000);
    });

    it('the brute force is not trivially empty or full', () => {
      const sample = Array.from({ length: 200 }, randomQuery).map((q) => bruteSearch(all, q).length);
      assert.ok(sample.filter((n) => n > 0).length > 50, 'many queries match something');
      assert.ok(sample.filter((n) => n === 0).length > 10, 'some match nothing');
    });

    it('returns exactly the brute-force ids, in order, for 600 random queries', async () => {
      let touched = 0;
      for (let i = 0; i < 600; i++) {
        const q = randomQuery();
        const expected = bruteSearch(all, q);
        const page = await catalogue.search(q);
        assert.deepEqual(
          page.surveys.map((s) => s.id),
          expected,
          `query ${i}: ${JSON.stringify(q)}`,
        );
        assert.equal(page.total, expected.length);
        // Listings: the same surveys in the same order, each what its document projects to.
        const listed = await catalogue.search({ ...q, view: 'listing' });
        assert.deepEqual(listed.surveys, page.surveys.map(listingOf));
        assert.equal(listed.total, expected.length);
        if (expected.length) touched++;
      }
      assert.ok(touched > 150, `${touched} queries found something`);
    });

    it('coverage listings asked all at once are each exactly the brute-force list (PostgreSQL sends them batched)', async () => {
      // What coverage asks: a listing with no date and no tag filter, from many requests at once.
      const queries = Array.from({ length: 300 }, () => {
        const { since: _since, until: _until, tags: _tags, ...q } = randomQuery();
        return q;
      });
      const pages = await Promise.all(queries.map((q) => catalogue.search({ ...q, view: 'listing' })));
      let touched = 0;
      for (const [i, q] of queries.entries()) {
        const expected = bruteSearch(all, q);
        const page = pages[i] as (typeof pages)[number];
        assert.deepEqual(
          page.surveys.map((s) => s.id),
          expected,
          `query ${i}: ${JSON.stringify(q)}`,
        );
        assert.equal(page.total, expected.length);
        if (expected.length) touched++;
      }
      assert.ok(touched > 75, `${touched} queries found something`);
    });

    walkAndGroupCases({
      context: () => ({ catalogue, all }),
      bruteSearch,
      randomQuery,
      boundsOf: shapeBounds,
      rand,
      everywhere: deg(-20, -20, 560, 560),
      dates: DATES,
      patterns: PATTERNS,
    });

    it('random pages are slices of the brute-force order', async () => {
      for (let i = 0; i < 100; i++) {
        const q = { ...randomQuery(), area: deg(int(400), int(400), 40 + int(80), 40 + int(80)) };
        const expected = bruteSearch(all, q);
        const limit = 1 + int(20);
        const offset = int(expected.length + 5);
        const order = rand() < 0.5 ? 'newest' : 'oldest';
        const page = await catalogue.search({ ...q, limit, offset, order });
        const ordered = order === 'newest' ? expected : [...expected].reverse();
        assert.deepEqual(
          page.surveys.map((s) => s.id),
          ordered.slice(offset, offset + limit),
        );
        const listed = await catalogue.search({ ...q, limit, offset, order, view: 'listing' });
        assert.deepEqual(
          listed.surveys.map((s) => s.id),
          ordered.slice(offset, offset + limit),
        );
        assert.equal(page.total, expected.length);
      }
    });
  });
}
