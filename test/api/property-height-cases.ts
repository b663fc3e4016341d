/**
 * Generated requests for the DetailDsm map layers (issue 34, item 4): the tiles
 * (`/tiles/v3/[surveys/{id}/]DetailDsm/{style}/{z}/{x}/{y}.png`) and their TileJSON, with each
 * style, bad styles and formats, the ramp's min/max and the survey filters. The answers docs/gis.md
 * gives them: 400 for a bad part, 404 for an unknown survey or one without DetailDsm, else a tile,
 * a 304 or NO_IMAGERY. Written out from the docs, not imported.
 */
import fc from 'fast-check';
import type { ApiCase, Expectation, Pair, World } from './property-cases.js';

const STYLES = ['relief', 'hillshade', 'terrain-rgb'];

type Value = { text: string | undefined; ok: boolean };

const pair = (name: string, value: string): Pair => ({ name, value, encoding: 'component', encodedName: false });

/** min/max of the relief ramp: absent, a pair, or a refusal (one alone, reversed, out of range, not relief's). */
const ramp = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constant<[Value, Value]>([
      { text: undefined, ok: true },
      { text: undefined, ok: true },
    ]),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(['0', '100'], ['-5', '5.5'], ['270', '280']).map(([min, max]): [Value, Value] => [
      { text: min, ok: true },
      { text: max, ok: true },
    ]),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom<[string | undefined, string | undefined]>(
        ['5', undefined],
        [undefined, '5'],
        ['10', '5'],
        ['0', '20000'],
        ['x', '1'],
      )
      .map(([min, max]): [Value, Value] => [
        { text: min, ok: false },
        { text: max, ok: false },
      ]),
  },
);

export function heightTileCase(world: World): fc.Arbitrary<ApiCase> {
  const dsm = world.surveys.filter((s) => s.raster.includes('DetailDsm')).map((s) => s.id);
  const plain = world.surveys.find((s) => !s.raster.includes('DetailDsm'))?.id;
  const surveys = [undefined, ...dsm, plain, world.unknownSurvey].filter((id) => id !== '');
  const served = world.tileRanges.filter((range) => range.served);
  return fc
    .record({
      range: fc.constantFrom(...served),
      dx: fc.integer({ min: 0, max: 3 }),
      dy: fc.integer({ min: 0, max: 3 }),
      style: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...STYLES).map((text) => ({ text, ok: true })) },
        {
          weight: 1,
          arbitrary: fc.constantFrom('Relief', 'contours', 'terrain_rgb', 'x').map((text) => ({ text, ok: false })),
        },
      ),
      format: fc.oneof(
        { weight: 5, arbitrary: fc.constant({ text: 'png', ok: true }) },
        { weight: 1, arbitrary: fc.constantFrom('jpg', 'img', 'gif').map((text) => ({ text, ok: false })) },
      ),
      survey: fc.constantFrom(...surveys),
      since: fc.constantFrom(undefined, '2000-01-01', '12M', 'nonsense'),
      ramp,
      tileJson: fc.boolean(),
      order: fc.nat(),
      http: fc.boolean(),
    })
    .map((g): ApiCase => {
      const x = Math.min(g.range.x0 + g.dx, g.range.x1);
      const y = Math.min(g.range.y0 + g.dy, g.range.y1);
      const layer = `${g.survey === undefined ? '' : `surveys/${g.survey}/`}DetailDsm/${g.style.text}`;
      const pairs = [pair('apikey', world.key)];
      // A survey's TileJSON takes the key alone; the tiles take the filters and the ramp.
      const withFilters = !(g.tileJson && g.survey !== undefined);
      const [min, max] = g.ramp;
      if (withFilters) {
        if (g.since !== undefined) pairs.push(pair('since', g.since));
        if (!g.tileJson) {
          if (min.text !== undefined) pairs.push(pair('min', min.text));
          if (max.text !== undefined) pairs.push(pair('max', max.text));
        }
      }
      const rampOk = g.tileJson || (min.ok && max.ok && (min.text === undefined || g.style.text === 'relief'));
      const sinceOk = !withFilters || g.since !== 'nonsense';
      const formatOk = g.tileJson || g.format.ok;
      let expect: Expectation | undefined;
      if (!(g.style.ok && rampOk && sinceOk && formatOk)) expect = { statuses: [400], code: 'INVALID_PARAMETER' };
      else if (g.survey === world.unknownSurvey) expect = { statuses: [404], code: 'SURVEY_NOT_FOUND' };
      else if (g.survey !== undefined && g.survey === plain) expect = { statuses: [404], code: 'CONTENT_NOT_FOUND' };
      else if (g.tileJson) expect = { statuses: [200], code: '' };
      const path = g.tileJson
        ? `/tiles/v3/${layer}/tilejson.json`
        : `/tiles/v3/${layer}/${g.range.z}/${x}/${y}.${g.format.text}`;
      return {
        endpoint: 'other',
        method: 'GET',
        path,
        pairs,
        order: g.order,
        headers: {},
        http: g.http,
        valid: false,
        types: g.tileJson ? ['application/json'] : ['image/png'],
        expect,
      };
    });
}
