/**
 * Generated requests for the GIS endpoints (issue 21: STAC API, TileJSON, WMTS) in the API's
 * property-based tests, built with property-cases.ts's parts and mixes, and what docs/gis.md and
 * docs/api.md say each must be answered with. Written from the docs, not imported from src/.
 */
import fc from 'fast-check';
import { MAX_OFFSET } from '../../src/gis/stac-paging.js';
import { hostileText } from '../support/hostile-input.js';
import {
  type ApiCase,
  anyDate,
  authChoice,
  buildQuery,
  type Choice,
  choice,
  EXTRAS,
  type Expectation,
  extrasFor,
  integerIn,
  MIX,
  method,
  methodAnswer,
  type Parameter,
  pick,
  pickAuth,
  queryDraw,
  queryRoles,
  roleOf,
  tags,
  values,
  type World,
} from './property-cases.js';

const TILE_TYPES = ['Vert', 'North', 'South', 'East', 'West', 'TrueOrtho'];
const instant = (date: string) => `${date}T12:00:00Z`;

/** `minLon,minLat,maxLon,maxLat`, ordered; refused: too few or many numbers, out of range, reversed. */
const bbox = values(
  fc
    .tuple(fc.integer({ min: -180_000, max: 180_000 }), fc.integer({ min: -180_000, max: 180_000 }))
    .chain(([a, b]) =>
      fc
        .tuple(fc.integer({ min: -90_000, max: 90_000 }), fc.integer({ min: -90_000, max: 90_000 }))
        .map(([c, d]) =>
          [Math.min(a, b), Math.min(c, d), Math.max(a, b), Math.max(c, d)].map((n) => n / 1000).join(','),
        ),
    ),
  fc.constantFrom('1,2,3', '10,5,11,4', 'a,b,c,d', '', '200,0,201,1', '0,-91,1,0', '1,0,0,1', '0,0,1,1,2', '0x1,0,1,1'),
);

/** A point or polygon as JSON; refused: not JSON, not a geometry, out of range. */
const intersects = values(
  fc.tuple(fc.integer({ min: -180, max: 179 }), fc.integer({ min: -90, max: 89 })).chain(([lon, lat]) =>
    fc.constantFrom(
      JSON.stringify({ type: 'Point', coordinates: [lon, lat] }),
      JSON.stringify({
        type: 'Polygon',
        coordinates: [
          [
            [lon, lat],
            [lon + 1, lat],
            [lon + 1, lat + 1],
            [lon, lat],
          ],
        ],
      }),
    ),
  ),
  fc.constantFrom(
    '{',
    '[]',
    '',
    'null',
    '{"type":"Circle","coordinates":[0,0]}',
    '{"type":"Point","coordinates":[200,0]}',
    '{"type":"Point"}',
    '{"type":"Polygon","coordinates":[[[0,0],[1,1]]]}',
  ),
);

/** An instant, or an interval in order with `..` or nothing for an open end. */
const datetime = values(
  fc.oneof(
    anyDate.map(instant),
    fc.tuple(anyDate, anyDate).map((pair) => pair.sort().map(instant).join('/')),
    anyDate.map((a) => `../${instant(a)}`),
    anyDate.map((a) => `${instant(a)}/..`),
    anyDate.map((a) => `${instant(a)}/`),
  ),
  fc.oneof(
    fc.constantFrom('yesterday', '2025-02-30T00:00:00Z', '../..', '2025-01-01', '', '2025-01-01T25:00:00Z', 'a/b/c'),
    fc
      .tuple(anyDate, anyDate)
      .filter(([a, b]) => a !== b)
      .map((pair) => pair.sort().reverse().map(instant).join('/')),
  ),
);

const limit = integerIn(1, 100_000, ['0', '-1', '1.5', '', 'x']);
// Deeper than MAX_OFFSET is a 400: the links page further by token.
const offset = integerIn(0, MAX_OFFSET, ['-1', '1.5', '', String(MAX_OFFSET + 1), '9007199254740992']);
const STAC_BOX: Record<string, Parameter> = {
  bbox: { values: bbox, presence: 0.5 },
  datetime: { values: datetime, presence: 0.4 },
  limit: { values: limit, presence: 0.4 },
  offset: { values: offset, presence: 0.3 },
};
const STAC_GEOMETRY: Record<string, Parameter> = {
  intersects: { values: intersects, presence: 0.95 },
  datetime: { values: datetime, presence: 0.4 },
  limit: { values: limit, presence: 0.4 },
};
const FILTERS: Record<string, Parameter> = {
  include: { values: tags, presence: 0.3 },
  exclude: { values: tags, presence: 0.3 },
};
/** A tag layer already includes its tag: WMTS tiles take no `include` here. */
const WMTS_TILE_FILTERS: Record<string, Parameter> = { exclude: { values: tags, presence: 0.3 } };

/** A path with its own parts (valid or not), the query it takes, and what its valid answer is. */
interface Target {
  path: string;
  verdict: 'valid' | 'invalid' | 'unknown';
  /** The path's refusal when invalid (the code). */
  refusal?: Expectation;
  query: Record<string, Parameter>;
  dates: boolean;
  /** Statuses of a valid request. */
  ok: number[];
  /**
   * The key is checked before duplicated parameters: the tile routes admit first, and so do the
   * GIS documents, which count against the key's tile rate limit.
   */
  keyFirst: boolean;
  types: string[];
  /**
   * STAC search and items: a parameter not declared is a 400 (OGC API Features core, docs/gis.md
   * "Search"), where every other endpoint ignores it.
   */
  refusesExtras?: boolean;
}

const JSON_TYPES = ['application/json', 'application/geo+json'];
const fixedStac = [
  '/stac/v1/',
  '/stac/v1',
  '/stac/v1/conformance',
  '/stac/v1/collections',
  '/stac/v1/collections/surveys',
];

function targets(world: World): fc.Arbitrary<Target> {
  const target = (path: string, more: Partial<Target> = {}): Target => ({
    path,
    verdict: 'valid',
    query: {},
    dates: false,
    ok: [200],
    keyFirst: true,
    types: JSON_TYPES,
    ...more,
  });
  const survey = fc.constantFrom(...world.surveys);
  const wmtsPart = (allowed: fc.Arbitrary<string>, refused: fc.Arbitrary<string>) =>
    choice(
      allowed,
      refused,
      hostileText().filter((t) => t !== '' && !t.includes('/')),
    );
  const tile = fc
    .constantFrom(...world.tileRanges.filter((range) => range.served))
    .map((r) => ({ z: r.z, x: r.x0, y: r.y0 }));
  const wmtsTile = fc
    .record({
      layer: wmtsPart(
        fc.constantFrom('Vert', 'Vert%3Adisaster', 'Vert:disaster:hurricane'),
        fc.constantFrom('North', 'vert', 'Vert%3A', 'x'),
      ),
      time: wmtsPart(
        fc.oneof(fc.constant('current'), anyDate),
        fc.constantFrom('yesterday', '2025-02-30', 'Current', '2025-1-1'),
      ),
      format: wmtsPart(fc.constantFrom('png', 'jpg', 'img'), fc.constantFrom('gif', 'PNG', 'jpeg')),
      tile,
      row: wmtsPart(fc.constant(''), fc.constantFrom('-1', 'x', '1.5', String(2 ** 24))),
      roll: fc.nat(),
    })
    .map(({ layer, time, format, tile: t, row, roll }) => {
      // One path part refused or hostile now and then; the rest valid.
      const parts = [layer, time, format, row] as Choice[];
      const bad = roll % 3 === 0 ? (roll >> 2) % parts.length : -1;
      // A hostile part is sent percent-encoded, so it stays one path segment.
      const [l, tm, f, r] = parts
        .map((c, i) => pick(c, i === bad ? 'bad' : 'clean'))
        .map((p) => (p.verdict === 'unknown' ? { ...p, text: encodeURIComponent(p.text) } : p));
      const rowText = r?.verdict === 'valid' ? String(t.y) : (r?.text ?? '');
      const path = `/wmts/1.0.0/${l?.text}/default/${tm?.text}/GoogleMapsCompatible/${t.z}/${rowText}/${t.x}.${f?.text}`;
      const verdict = [l, tm, f, r].some((p) => p?.verdict === 'unknown') ? 'unknown' : bad >= 0 ? 'invalid' : 'valid';
      return target(path, {
        verdict,
        refusal: { statuses: [400], code: 'INVALID_PARAMETER' },
        query: WMTS_TILE_FILTERS,
        dates: true,
        // A tile the filters or Time leave empty is a 404 NO_IMAGERY.
        ok: [200, 404],
        keyFirst: true,
        types: ['image/png', 'image/jpeg'],
      });
    });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...fixedStac).map((path) => target(path)) },
    {
      weight: 4,
      arbitrary: fc
        .constantFrom('/stac/v1/search', '/stac/v1/collections/surveys/items')
        .map((path) => target(path, { query: STAC_BOX, refusesExtras: true })),
    },
    {
      weight: 2,
      arbitrary: fc.constant(target('/stac/v1/search', { query: STAC_GEOMETRY, refusesExtras: true })),
    },
    {
      weight: 2,
      arbitrary: fc.oneof(
        survey.map((s) => target(`/stac/v1/collections/surveys/items/${s.id}`, { types: ['application/geo+json'] })),
        fc.constant(target(`/stac/v1/collections/surveys/items/${world.unknownSurvey}`, { ok: [404] })),
        fc.constantFrom('nope', 'Surveys', 'surveys%20').map((c) => target(`/stac/v1/collections/${c}`, { ok: [404] })),
      ),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.constantFrom(...TILE_TYPES, 'TRUEORTHO', 'vert'), fc.nat()).map(([type]) =>
        TILE_TYPES.includes(type)
          ? target(`/tiles/v3/${type}/tilejson.json`, { query: FILTERS, dates: true, types: ['application/json'] })
          : target(`/tiles/v3/${type}/tilejson.json`, {
              verdict: 'invalid',
              refusal: { statuses: [400], code: 'INVALID_PARAMETER' },
              query: FILTERS,
              dates: true,
            }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(survey, fc.constantFrom(...TILE_TYPES)).map(([s, type]) =>
        target(`/tiles/v3/surveys/${s.id}/${type}/tilejson.json`, {
          ok: s.tiles.includes(type) ? [200] : [404],
          types: ['application/json'],
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constant(
        target('/wmts/1.0.0/WMTSCapabilities.xml', { query: FILTERS, dates: true, types: ['application/xml'] }),
      ),
    },
    { weight: 3, arbitrary: wmtsTile },
  );
}

/** The GIS endpoints: any valid key (no raster subscription needed), their parameters and paths. */
export function gisCase(world: World): fc.Arbitrary<ApiCase> {
  return targets(world).chain((t) => {
    const roles = queryRoles(t.query, t.dates) + 1;
    return fc
      .record({
        m: method,
        mix: MIX,
        draw: queryDraw(t.query, t.dates, 0.5),
        auth: authChoice(world),
        ex: EXTRAS,
        order: fc.nat(),
        http: fc.boolean(),
      })
      .map(({ m, mix, draw, auth, ex, order, http }): ApiCase => {
        const e = extrasFor(ex, m);
        const q = buildQuery(t.query, draw, mix, 0, roles);
        const a = pickAuth(auth, roleOf(mix, roles - 1, roles));
        // The raster subscription is not needed here: a key without it is a good key.
        const keyBad = a.kind === 'bad';
        const declared = [...Object.keys(t.query), ...(t.dates ? ['since', 'until'] : [])];
        const extra = t.refusesExtras === true && q.pairs.some((p) => p.name !== '' && !declared.includes(p.name));
        // STAC's search also takes POST (its search in a JSON body): the key first, as for GET, then
        // a search (200) or a refused query or body (400: anything but apikey in the query, a body
        // that is not a search object, or not JSON).
        const postSearch = m === 'POST' && t.path.split('?')[0] === '/stac/v1/search';
        let expect = postSearch
          ? keyBad
            ? { statuses: [401], code: 'API_KEY_INVALID' }
            : { statuses: [200, 400] }
          : methodAnswer(m);
        if (!expect) {
          if (keyBad && (t.keyFirst || !q.duplicated)) expect = { statuses: [401], code: 'API_KEY_INVALID' };
          else if (q.duplicated) expect = { statuses: [400], code: 'INVALID_PARAMETER' };
          else if (t.verdict === 'invalid') expect = t.refusal;
          else if (t.verdict === 'valid' && (q.verdict === 'invalid' || (extra && q.verdict === 'valid')))
            expect = { statuses: [400], code: 'INVALID_PARAMETER' };
          else if (t.verdict === 'valid' && q.verdict === 'valid') expect = { statuses: t.ok };
        }
        return {
          endpoint: 'gis',
          method: m,
          path: t.path,
          pairs: [...a.pairs, ...q.pairs],
          order,
          headers: { ...e.headers, ...a.headers },
          body: e.body,
          http,
          valid:
            m === 'GET' &&
            !keyBad &&
            t.verdict === 'valid' &&
            q.verdict === 'valid' &&
            !q.duplicated &&
            !extra &&
            t.ok.includes(200),
          types: t.types,
          expect,
        };
      });
  });
}
