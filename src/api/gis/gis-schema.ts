import { Type } from '@sinclair/typebox';
import { TILE_TYPES } from '../../catalogue/survey.js';
import { MAX_OFFSET } from '../../gis/stac-paging.js';
import { DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT } from '../../gis/stac-search.js';
import { ErrorBodySchema, StringEnum } from '../http/schemas.js';

/** Requests and answers of the STAC, TileJSON and WMTS endpoints: validation and OpenAPI in one. */

export const security = [{ apikeyQuery: [] as string[] }, { apikeyHeader: [] as string[] }] as Record<
  string,
  string[]
>[];

const apikey = Type.Optional(
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

/** STAC's error shape `{code, description}` and nadir's `{error, code}` at once. */
export const StacErrorSchema = Type.Object(
  {
    ...ErrorBodySchema.properties,
    description: Type.String({ description: 'The same sentence as `error` (STAC API).' }),
  },
  { additionalProperties: true },
);

const json = (description: string, type = 'application/json') => ({
  description,
  content: { [type]: { schema: { type: 'object', additionalProperties: true } } },
});

/** A link of the STAC documents, as gis/stac.ts writes them. */
export const StacLinkSchema = Type.Object({
  rel: Type.String({ description: 'The relation: self, root, parent, collection, items, next, prev, ...' }),
  href: Type.String({ description: 'The URL.' }),
  type: Type.Optional(Type.String({ description: 'Media type of the target.' })),
  title: Type.Optional(Type.String()),
  method: Type.Optional(Type.String({ description: 'HTTP method of the request the link stands for.' })),
});

/**
 * A STAC answer with links: still any JSON object (its schema is STAC's, and fastify serialises
 * it as it is), carrying the link's shape in `$defs` for programs; the client's StacLink type is
 * generated from it (scripts/client-types.ts).
 */
const linked = (description: string, type = 'application/json') => ({
  description,
  content: {
    [type]: { schema: { type: 'object', additionalProperties: true, $defs: { StacLink: StacLinkSchema } } },
  },
});

export const stacErrors = { 400: StacErrorSchema, 401: StacErrorSchema, 404: StacErrorSchema };

export const StacSearchQuerySchema = Type.Object({
  apikey,
  bbox: Type.Optional(
    Type.String({
      description: 'minLongitude,minLatitude,maxLongitude,maxLatitude (WGS84).',
      examples: ['-85.43,29.93,-85.40,29.96'],
    }),
  ),
  intersects: Type.Optional(
    Type.String({
      description: 'A GeoJSON geometry as JSON (Point, LineString, Polygon and their Multi forms); not with bbox.',
    }),
  ),
  datetime: Type.Optional(
    Type.String({
      description: 'RFC 3339 instant or interval `start/end` (`..` open): surveys whose photo times meet it.',
      examples: ['2025-01-01T00:00:00Z/..'],
    }),
  ),
  ids: Type.Optional(Type.String({ description: 'Comma list of survey ids.' })),
  collections: Type.Optional(Type.String({ description: 'Comma list of collection ids (`surveys` is the one).' })),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      default: DEFAULT_ITEM_LIMIT,
      description: `Items per page; above ${MAX_ITEM_LIMIT} gets ${MAX_ITEM_LIMIT}.`,
    }),
  ),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_OFFSET,
      description: `Items to skip, at most ${MAX_OFFSET} (deeper: follow the next link); not with token.`,
    }),
  ),
  token: Type.Optional(
    Type.String({
      maxLength: 2000,
      description:
        'Where a page begins: the `next` and `prev` links set it (keyset paging, any page as fast as the first).',
    }),
  ),
});

export const ApikeyOnlySchema = Type.Object({ apikey });

function stacRoute(
  summary: string,
  answer: ReturnType<typeof json | typeof linked>,
  extra: Record<string, unknown> = {},
) {
  return { summary, tags: ['gis'], security, ...extra, response: { 200: answer, ...stacErrors } };
}

export const stacSchemas = {
  landing: stacRoute('STAC API landing page', linked('A STAC Catalog with conformsTo and links.'), {
    querystring: ApikeyOnlySchema,
  }),
  conformance: stacRoute('STAC API conformance classes', json('conformsTo'), { querystring: ApikeyOnlySchema }),
  collections: stacRoute('STAC collections (one: surveys)', linked('collections and links'), {
    querystring: ApikeyOnlySchema,
  }),
  collection: stacRoute('A STAC collection', linked('A STAC Collection'), {
    querystring: ApikeyOnlySchema,
    params: Type.Object({ collectionId: Type.String({ maxLength: 128 }) }),
  }),
  items: stacRoute('Items of a collection, paged', linked('An ItemCollection', 'application/geo+json'), {
    querystring: StacSearchQuerySchema,
    params: Type.Object({ collectionId: Type.String({ maxLength: 128 }) }),
  }),
  item: stacRoute('One survey as a STAC item', linked('A STAC Item', 'application/geo+json'), {
    querystring: ApikeyOnlySchema,
    params: Type.Object({ collectionId: Type.String({ maxLength: 128 }), itemId: Type.String({ maxLength: 128 }) }),
  }),
  search: stacRoute('STAC item search (GET)', linked('An ItemCollection', 'application/geo+json'), {
    querystring: StacSearchQuerySchema,
  }),
};

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

const xml = { description: 'WMTS 1.0.0 capabilities', content: { 'application/xml': { schema: { type: 'string' } } } };

export const wmtsCapabilitiesRouteSchema = {
  summary: 'WMTS 1.0.0 capabilities (RESTful): Vert on GoogleMapsCompatible, tag layers, capture date as Time',
  tags: ['gis'],
  security,
  querystring: LayerFilterQuerySchema,
  response: { 200: xml, 400: ErrorBodySchema, 401: ErrorBodySchema },
};

export const wmtsTileRouteSchema = {
  summary: 'A WMTS tile (RESTful ResourceURL): the location tile of the layer as of Time',
  tags: ['gis'],
  security,
  params: Type.Object({
    layer: Type.String({ maxLength: 128, description: '`Vert` or `Vert:<tag>`.' }),
    time: Type.String({ maxLength: 32, description: '`current` or a capture date `YYYY-MM-DD`.' }),
    z: Type.String({ description: 'TileMatrix (zoom).' }),
    row: Type.String({ description: 'TileRow (y).' }),
    file: Type.String({ maxLength: 32, description: '{TileCol}.{png|jpg|img}' }),
  }),
  querystring: LayerFilterQuerySchema,
  response: {
    200: {
      description: 'The tile.',
      content: {
        'image/jpeg': { schema: { type: 'string', format: 'binary' } },
        'image/png': { schema: { type: 'string', format: 'binary' } },
      },
    },
    304: { description: 'Not modified.' },
    400: ErrorBodySchema,
    401: ErrorBodySchema,
    404: ErrorBodySchema,
    429: ErrorBodySchema,
  },
};
