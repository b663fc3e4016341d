import { Type } from '@sinclair/typebox';
import { TILE_TYPES } from '../../catalogue/survey.js';
import { HEIGHT_STYLES } from '../../height-tiles/height-styles.js';
import { ErrorBodySchema, StringEnum } from '../http/schemas.js';

/**
 * What the GIS endpoints' schemas share (the key, the layer filter, a JSON answer), and TileJSON's
 * requests and answers: validation and OpenAPI in one. STAC's are in stac-schema.ts, WMTS's in
 * wmts-schema.ts.
 */

export const security = [{ apikeyQuery: [] as string[] }, { apikeyHeader: [] as string[] }] as Record<
  string,
  string[]
>[];

export const apikey = Type.Optional(
  Type.String({
    description:
      'API key (required). May instead be sent as the header `Authorization: Apikey <key>`; a key sent in the query is repeated in every URL of the answer, one sent in the header is not.',
  }),
);

export const LayerFilterQuerySchema = Type.Object({
  apikey,
  since: Type.Optional(
    Type.String({ description: 'Only surveys captured on or after: `YYYY-MM-DD` or an age (`12M`).' }),
  ),
  until: Type.Optional(Type.String({ description: 'Only surveys captured on or before: `YYYY-MM-DD` or an age.' })),
  include: Type.Optional(
    Type.String({ description: 'Only surveys with this tag (`type` or `type:name`, comma list).' }),
  ),
  exclude: Type.Optional(Type.String({ description: 'Leave out surveys with this tag.' })),
});

export const json = (description: string, type = 'application/json') => ({
  description,
  content: { [type]: { schema: { type: 'object', additionalProperties: true } } },
});

export const ApikeyOnlySchema = Type.Object({ apikey });

export const tileJsonRouteSchema = {
  summary: 'TileJSON 3.0 of a tile layer and filter',
  tags: ['gis'],
  security,
  params: Type.Object({ contentType: StringEnum(TILE_TYPES, { description: 'The tile layer.' }) }),
  querystring: LayerFilterQuerySchema,
  response: { 200: json('TileJSON 3.0.0'), 400: ErrorBodySchema, 401: ErrorBodySchema },
};

export const surveyTileJsonRouteSchema = {
  summary: "TileJSON 3.0 of one survey's tiles",
  tags: ['gis'],
  security,
  params: Type.Object({
    surveyId: Type.String({ maxLength: 128, description: 'A survey id.' }),
    contentType: StringEnum(TILE_TYPES, { description: 'The tile layer.' }),
  }),
  querystring: ApikeyOnlySchema,
  response: { 200: json('TileJSON 3.0.0'), 401: ErrorBodySchema, 404: ErrorBodySchema },
};

const heightStyle = StringEnum(HEIGHT_STYLES, {
  description: 'The DetailDsm layer: relief, hillshade or terrain-rgb.',
});

export const heightTileJsonRouteSchema = {
  summary: 'TileJSON 3.0 of a DetailDsm tile layer and filter: nadir extension',
  tags: ['gis'],
  security,
  params: Type.Object({ style: heightStyle }),
  querystring: LayerFilterQuerySchema,
  response: { 200: json('TileJSON 3.0.0'), 400: ErrorBodySchema, 401: ErrorBodySchema },
  'x-nadir-extension': true,
};

export const surveyHeightTileJsonRouteSchema = {
  summary: "TileJSON 3.0 of one survey's DetailDsm tiles: nadir extension",
  tags: ['gis'],
  security,
  params: Type.Object({
    surveyId: Type.String({ maxLength: 128, description: 'A survey id.' }),
    style: heightStyle,
  }),
  querystring: ApikeyOnlySchema,
  response: { 200: json('TileJSON 3.0.0'), 401: ErrorBodySchema, 404: ErrorBodySchema },
  'x-nadir-extension': true,
};
