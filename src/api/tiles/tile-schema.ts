import { Type } from '@sinclair/typebox';
import { EXTENSION_TILE_TYPES, TILE_TYPES } from '../../catalogue/survey.js';
import { QUARTER_TURNS } from '../../tiles/panorama.js';
import { TILE_FORMATS } from '../../tiles/tile-renderer.js';
import { DEMO_SURVEY_ID } from '../http/demo-examples.js';
import { ErrorBodySchema, StringEnum } from '../http/schemas.js';

/** Requests and answers of the two tile endpoints: validation and OpenAPI in one. */

const tileParams = {
  contentType: StringEnum(TILE_TYPES, {
    description:
      'Vert (vertical) or a panorama direction; panorama tiles are rotated so that direction is up. ' +
      "`TrueOrtho` is a nadir extension beyond the spec (the operation's x-nadir-extensions): the survey's true orthophoto.",
  }),
  z: Type.String({ description: 'Zoom, 0 to 24.', examples: ['19'] }),
  x: Type.String({ description: 'Tile column, 0 to 2^z - 1 (Google/OSM tile scheme).' }),
  file: Type.String({
    maxLength: 32,
    description: `{y}.{format}: y the tile row (0 at the top), format ${TILE_FORMATS.join(' | ')} (img: JPEG when the tile is full, PNG when partial).`,
    examples: ['212130.jpg'],
  }),
};

export const LocationTileParamsSchema = Type.Object(tileParams);

/**
 * The tile address as the specification writes it, `{y}.{format}`, for the OpenAPI document only
 * (http/openapi.ts documentedPath): the router reads both from one segment, `{file}` above. The
 * examples are a tile of the demo town (`nadir demo`), so "Try it out" draws at first try.
 */
const documentedAddress = {
  contentType: tileParams.contentType,
  z: Type.String({ description: 'Zoom, 0 to 24.', examples: ['19'] }),
  x: Type.String({ description: 'Tile column, 0 to 2^z - 1 (Google/OSM tile scheme).', examples: ['137744'] }),
  y: Type.String({ description: 'Tile row, 0 to 2^z - 1, 0 at the top.', examples: ['216399'] }),
  format: StringEnum(TILE_FORMATS, {
    description: 'jpg, png, or img (JPEG when the tile is full, PNG when partial).',
    examples: ['png'],
  }),
};
export const LocationTileDocumentedParamsSchema = Type.Object(documentedAddress);
const surveyId = Type.String({
  maxLength: 128,
  description: 'A survey id from the coverage response.',
  examples: [DEMO_SURVEY_ID],
});
export const SurveyTileParamsSchema = Type.Object({ surveyId, ...tileParams });
export const SurveyTileDocumentedParamsSchema = Type.Object({ surveyId, ...documentedAddress });

const dateFilters = {
  since: Type.Optional(
    Type.String({
      description: 'Only imagery captured on or after this date: `YYYY-MM-DD` or an age such as `12M`, `2Y`, `30D`.',
    }),
  ),
  until: Type.Optional(
    Type.String({ description: 'Only imagery captured on or before this date: `YYYY-MM-DD` or an age.' }),
  ),
  include: Type.Optional(
    Type.String({
      description: 'Only surveys with this tag: `type` (every name of it) or `type:name`; comma list allowed.',
    }),
  ),
  exclude: Type.Optional(
    Type.String({ description: 'Leave out surveys with this tag (`type` or `type:name`); combines with include.' }),
  ),
};

const apikey = Type.Optional(
  Type.String({ description: 'API key (required). May instead be sent as the header `Authorization: Apikey <key>`.' }),
);

export const LocationTileQuerySchema = Type.Object({
  apikey,
  ...dateFilters,
  mosaic: Type.Optional(
    StringEnum(['latest', 'earliest'] as const, {
      description: 'Draw order of overlapping surveys: `latest` (default, the newest on top) or `earliest`.',
    }),
  ),
});

export const SurveyTileQuerySchema = Type.Object({ apikey, ...dateFilters });

const imageResponse = {
  description: 'The tile: image/jpeg or image/png. Headers: ETag, Cache-Control, X-Survey-Ids, X-RateLimit-*.',
  content: {
    'image/jpeg': { schema: { type: 'string', format: 'binary' } },
    'image/png': { schema: { type: 'string', format: 'binary' } },
  },
};

/** The answers of a tile a core draws as PNG (DsmChange, DetailDsm); `ids`: what X-Survey-Ids lists. */
export function pngTileResponses(ids: string) {
  return {
    200: {
      description: `The tile, image/png. Headers: ETag, Cache-Control, X-Survey-Ids (${ids}), X-RateLimit-*.`,
      content: { 'image/png': { schema: { type: 'string', format: 'binary' } } },
    },
    304: { description: 'Not modified (If-None-Match matched the ETag).' },
    400: ErrorBodySchema,
    401: ErrorBodySchema,
    404: ErrorBodySchema,
    429: ErrorBodySchema,
  };
}

const responses = {
  200: imageResponse,
  304: { description: 'Not modified (If-None-Match matched the ETag).' },
  400: ErrorBodySchema,
  401: ErrorBodySchema,
  404: ErrorBodySchema,
  429: ErrorBodySchema,
};

/**
 * Facts of the tile routes for programs, as OpenAPI extensions of the operations (ajv refuses
 * unknown keywords in the parameters' own schemas): the values beyond the spec's, the formats `{file}` ends in, and the quarter
 * turns clockwise each `contentType`'s tiles are rotated by (tiles/panorama.ts). The client's
 * generated facts are read from here (scripts/client-types.ts).
 */
const tileFacts = {
  'x-nadir-extensions': { contentType: [...EXTENSION_TILE_TYPES] },
  'x-nadir-tile-formats': [...TILE_FORMATS],
  'x-nadir-quarter-turns': { ...QUARTER_TURNS },
};

const security = [{ apikeyQuery: [] as string[] }, { apikeyHeader: [] as string[] }] as Record<string, string[]>[];

export const locationTileRouteSchema = {
  summary: 'A map tile of the newest imagery at a place (a composite of overlapping surveys)',
  tags: ['tiles'],
  security,
  params: LocationTileParamsSchema,
  querystring: LocationTileQuerySchema,
  response: responses,
  ...tileFacts,
};

export const surveyTileRouteSchema = {
  summary: 'A map tile of one survey',
  tags: ['tiles'],
  security,
  params: SurveyTileParamsSchema,
  querystring: SurveyTileQuerySchema,
  response: responses,
  ...tileFacts,
};
