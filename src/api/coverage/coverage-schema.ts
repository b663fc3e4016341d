import { Type } from '@sinclair/typebox';
import { CONTENT_TYPES, RASTER_TYPES } from '../../catalogue/survey.js';
import { DEFAULT_LIMIT, MAX_LIMIT, SURVEY_FIELDS } from '../../coverage/coverage-request.js';
import { MAX_RADIUS } from '../../geo/aoi.js';
import { DEMO_POINT, DEMO_SINCE, DEMO_UNTIL } from '../http/demo-examples.js';
import { ErrorBodySchema, StringEnum } from '../http/schemas.js';

/** Request and response of GET /staticmap/v2/coverage.json: validation and OpenAPI in one. */

export const CoverageQuerySchema = Type.Object({
  apikey: Type.Optional(
    Type.String({ description: 'API key. May instead be sent as the header `Authorization: Apikey <key>`.' }),
  ),
  point: Type.String({
    description:
      'Centre of the AOI: `longitude,latitude` in WGS84 decimal degrees (latitude within the Web Mercator limit, +-85.0511).',
    examples: [DEMO_POINT],
  }),
  radius: Type.Number({
    minimum: 1,
    maximum: MAX_RADIUS,
    description: 'Half the side of the AOI square, in ground metres (1 to 100): the AOI is 2 x radius metres across.',
    examples: [50],
  }),
  resources: Type.String({
    description: `Comma-separated content types whose availability is checked: ${RASTER_TYPES.join(', ')} (case-sensitive).`,
    examples: ['TrueOrtho,DetailDsm'],
  }),
  since: Type.Optional(
    Type.String({
      description:
        'Only surveys captured on or after this date: `YYYY-MM-DD`, or an age such as `24M`, `2Y`, `30D` (months, years, days before today, UTC).',
      examples: [DEMO_SINCE, '36M'],
    }),
  ),
  until: Type.Optional(
    Type.String({
      description: 'Only surveys captured on or before this date: `YYYY-MM-DD` or an age as for `since`.',
      examples: [DEMO_UNTIL],
    }),
  ),
  filter: Type.Optional(
    StringEnum(['allTypes', 'anyTypes'] as const, {
      default: 'allTypes',
      description: 'allTypes: a survey must have every requested type; anyTypes: at least one of them.',
    }),
  ),
  overlap: Type.Optional(
    StringEnum(['full', 'partial'] as const, {
      description:
        'Absent or `partial`: surveys whose footprint intersects the AOI. `full`: only surveys that cover the whole AOI.',
    }),
  ),
  fields: Type.Optional(
    Type.String({
      description: `Comma-separated survey fields to return (\`id\` is always returned): ${SURVEY_FIELDS.join(', ')}. Default: all.`,
      examples: ['captureDate,pixelSizes'],
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size (1 to 1000).' }),
  ),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 0,
      description: 'Surveys to skip, for paging.',
    }),
  ),
});

function typeKeyedNumbers(types: readonly string[], description: string, integer = false) {
  const value = integer ? Type.Integer() : Type.Number();
  return Type.Object(Object.fromEntries(types.map((type) => [type, Type.Optional(value)])), {
    additionalProperties: false,
    description,
  });
}

export const SurveySchema = Type.Object({
  id: Type.String({ description: 'Survey id: pass as surveyId to the imagery and tile-by-survey endpoints.' }),
  captureDate: Type.Optional(
    Type.String({ description: 'Survey date in the local timezone of the capture, YYYY-MM-DD.' }),
  ),
  firstPhotoTime: Type.Optional(Type.String({ description: 'Time of the first photo, ISO 8601 UTC.' })),
  lastPhotoTime: Type.Optional(Type.String({ description: 'Time of the last photo, ISO 8601 UTC.' })),
  pixelSizes: Type.Optional(
    typeKeyedNumbers(RASTER_TYPES, 'Ground sample distance (metres per pixel) of each requested type the survey has.'),
  ),
  tags: Type.Optional(Type.Array(Type.String(), { description: 'Tags such as `disaster:hurricane`.' })),
  maxZoom: Type.Optional(
    typeKeyedNumbers(
      CONTENT_TYPES,
      'Deepest tile zoom of every content type the survey has (including the panorama tile layers).',
      true,
    ),
  ),
});

export const CoverageResponseSchema = Type.Object({
  surveys: Type.Array(SurveySchema, { description: 'Most recent first (captureDate, then lastPhotoTime, then id).' }),
  limit: Type.Integer({ description: 'Page size of this response.' }),
  offset: Type.Integer({ description: 'Offset of this response.' }),
  total: Type.Integer({ description: 'Number of matching surveys across all pages.' }),
  transactionToken: Type.String({
    description: 'Authorises image retrieval for this AOI for 30 days. Opaque; keep it safe.',
  }),
});

/**
 * The names the comma-list parameters take, for programs (ajv refuses unknown keywords in the
 * parameters' own schemas, so they are extensions of the operation): `resources` in the order of
 * the content types, which `x-nadir-content-types` lists as the `maxZoom` keys do. The client's
 * generated facts are read from here (scripts/client-types.ts).
 */
const coverageFacts = {
  'x-nadir-content-types': [...CONTENT_TYPES],
  'x-nadir-comma-lists': {
    resources: CONTENT_TYPES.filter((type) => (RASTER_TYPES as readonly string[]).includes(type)),
    fields: [...SURVEY_FIELDS],
  },
};

export const coverageRouteSchema = {
  ...coverageFacts,
  summary: 'Surveys covering an area, and a transaction token for imagery',
  tags: ['raster'],
  security: [{ apikeyQuery: [] as string[] }, { apikeyHeader: [] as string[] }] as Record<string, string[]>[],
  querystring: CoverageQuerySchema,
  response: {
    200: CoverageResponseSchema,
    400: ErrorBodySchema,
    401: ErrorBodySchema,
    403: ErrorBodySchema,
  },
};
