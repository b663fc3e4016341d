/**
 * Generated DsmChange requests for the API's property-based tests (properties.test.ts): the
 * download (`/staticmap/v2/surveys/{after}/DsmChange.{format}`) and the tile
 * (`/tiles/v3/DsmChange/{z}/{x}/{y}.png`), with valid, refused and hostile values, and the status
 * docs/api.md gives each where its parts decide it. Written out from the docs, not imported.
 */
import fc from 'fast-check';
import { hostileText } from '../support/hostile-input.js';
import type { ApiCase, Expectation, Pair, World } from './property-cases.js';

const FORMATS = ['tif', 'jpg', 'png', 'jgw', 'pgw', 'tfw', 'json'];
const BAD_FORMATS = ['gif', 'TIF', 'img', '', 'tif.json'];
const TYPE_OF: Record<string, string> = {
  tif: 'image/tiff',
  jpg: 'image/jpeg',
  png: 'image/png',
  jgw: 'text/plain',
  pgw: 'text/plain',
  tfw: 'text/plain',
  json: 'application/json',
};
const BAD_THRESHOLDS = ['-1', '101', 'x', '', '1e3', 'NaN'];

type Value = { text: string | undefined; ok: boolean };
const absent: Value = { text: undefined, ok: true };

const pair = (name: string, value: string): Pair => ({ name, value, encoding: 'component', encodedName: false });

/** The world's surveys in capture order, newest first: which is after, which its baseline. */
function roles(world: World) {
  const dsm = world.surveys.filter((s) => s.raster.includes('DetailDsm')).map((s) => s.id);
  const [newest, older] = dsm as [string, string | undefined];
  const plain = world.surveys.find((s) => !s.raster.includes('DetailDsm'))?.id;
  return { newest, older, plain };
}

const threshold = fc.oneof(
  { weight: 4, arbitrary: fc.constant(absent) },
  { weight: 3, arbitrary: fc.constantFrom('0', '2', '0.5', '100').map((text) => ({ text, ok: true })) },
  { weight: 2, arbitrary: fc.constantFrom(...BAD_THRESHOLDS).map((text) => ({ text, ok: false })) },
);

export function changeCase(world: World): fc.Arbitrary<ApiCase> {
  const { newest, older, plain } = roles(world);
  const surveyIds = [newest, older, plain, world.unknownSurvey].filter((id): id is string => id !== undefined);
  return fc
    .record({
      after: fc.constantFrom(...surveyIds),
      baseline: fc.oneof(
        { weight: 2, arbitrary: fc.constant<string | undefined>(undefined) },
        { weight: 3, arbitrary: fc.constantFrom(...surveyIds) },
        { weight: 1, arbitrary: hostileText() },
      ),
      format: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...FORMATS).map((text) => ({ text, ok: true })) },
        { weight: 1, arbitrary: fc.constantFrom(...BAD_FORMATS).map((text) => ({ text, ok: false })) },
      ),
      tokenOk: fc.boolean(),
      side: fc.oneof(fc.integer({ min: 1, max: 6 }).map(String), fc.constantFrom('0', '5001', '2x3')),
      threshold,
      order: fc.nat(),
      http: fc.boolean(),
    })
    .map((g): ApiCase => {
      const sideOk = /^[1-6]$/.test(g.side);
      const pairs = [
        pair('transactionToken', g.tokenOk ? world.token : world.expiredToken),
        pair('point', `${world.centre.lon},${world.centre.lat}`),
        pair('radius', String(world.tokenRadius)),
        pair('size', `${g.side}x${g.side}`),
      ];
      if (g.baseline !== undefined) pairs.push(pair('baseline', g.baseline));
      if (g.threshold.text !== undefined) pairs.push(pair('threshold', g.threshold.text));
      const baselineOk = g.baseline === undefined || (g.baseline.length > 0 && g.baseline.length <= 128);
      let expect: Expectation | undefined;
      // docs/api.md "DsmChange": parameters, token, the survey, the baseline.
      if (!g.format.ok || !sideOk || !g.threshold.ok) expect = { statuses: [400], code: 'INVALID_PARAMETER' };
      else if (!baselineOk) expect = undefined;
      else if (!g.tokenOk) expect = { statuses: [403], code: 'TRANSACTION_TOKEN_INVALID' };
      else if (g.after === world.unknownSurvey) expect = { statuses: [404], code: 'SURVEY_NOT_FOUND' };
      else if (g.after === plain) expect = { statuses: [404], code: 'CONTENT_NOT_FOUND' };
      else if (g.baseline === g.after) expect = { statuses: [400], code: 'SAME_SURVEY' };
      else if (g.baseline === world.unknownSurvey) expect = { statuses: [404], code: 'SURVEY_NOT_FOUND' };
      else if (g.baseline === plain) expect = { statuses: [404], code: 'CONTENT_NOT_FOUND' };
      else if (g.baseline === newest) expect = { statuses: [400], code: 'BASELINE_NOT_EARLIER' };
      else if (g.baseline === undefined && g.after === older) expect = { statuses: [404], code: 'NO_BASELINE' };
      else if (g.baseline === older || g.baseline === undefined) expect = { statuses: [200, 404] };
      return {
        endpoint: 'imagery',
        method: 'GET',
        path: `/staticmap/v2/surveys/${g.after}/DsmChange.${encodeURIComponent(g.format.text)}`,
        pairs,
        order: g.order,
        headers: {},
        http: g.http,
        valid: false,
        types: [TYPE_OF[g.format.text] ?? 'none'],
        expect,
      };
    });
}

export function changeTileCase(world: World): fc.Arbitrary<ApiCase> {
  const { newest, older, plain } = roles(world);
  const surveyIds = [newest, older, plain, world.unknownSurvey].filter((id): id is string => id !== undefined);
  const served = world.tileRanges.filter((range) => range.served);
  return fc
    .record({
      range: fc.constantFrom(...served),
      dx: fc.integer({ min: 0, max: 3 }),
      dy: fc.integer({ min: 0, max: 3 }),
      format: fc.oneof(
        { weight: 5, arbitrary: fc.constant({ text: 'png', ok: true }) },
        { weight: 1, arbitrary: fc.constantFrom('jpg', 'img', 'gif').map((text) => ({ text, ok: false })) },
      ),
      after: fc.oneof(fc.constant<string | undefined>(undefined), fc.constantFrom(...surveyIds)),
      baseline: fc.oneof(fc.constant<string | undefined>(undefined), fc.constantFrom(...surveyIds)),
      since: fc.constantFrom(undefined, '2000-01-01', '2020-01-01', '12M', 'nonsense'),
      threshold,
      order: fc.nat(),
      http: fc.boolean(),
    })
    .map((g): ApiCase => {
      const x = Math.min(g.range.x0 + g.dx, g.range.x1);
      const y = Math.min(g.range.y0 + g.dy, g.range.y1);
      const pairs = [pair('apikey', world.key)];
      if (g.after !== undefined) pairs.push(pair('after', g.after));
      if (g.baseline !== undefined) pairs.push(pair('baseline', g.baseline));
      if (g.since !== undefined) pairs.push(pair('since', g.since));
      if (g.threshold.text !== undefined) pairs.push(pair('threshold', g.threshold.text));
      let expect: Expectation | undefined;
      const parametersOk =
        g.format.ok && g.threshold.ok && g.since !== 'nonsense' && !(g.baseline !== undefined && g.after === undefined);
      if (!parametersOk) expect = { statuses: [400], code: 'INVALID_PARAMETER' };
      else if (g.after === world.unknownSurvey) expect = { statuses: [404], code: 'SURVEY_NOT_FOUND' };
      else if (g.after === plain) expect = { statuses: [404], code: 'CONTENT_NOT_FOUND' };
      else if (g.after !== undefined && g.baseline === g.after) expect = { statuses: [400], code: 'SAME_SURVEY' };
      return {
        endpoint: 'other',
        method: 'GET',
        path: `/tiles/v3/DsmChange/${g.range.z}/${x}/${y}.${g.format.text}`,
        pairs,
        order: g.order,
        headers: {},
        http: g.http,
        valid: false,
        types: ['image/png'],
        expect,
      };
    });
}
