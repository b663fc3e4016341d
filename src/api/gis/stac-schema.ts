import { Type } from '@sinclair/typebox';
import { MAX_OFFSET } from '../../gis/stac-paging.js';
import { DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT } from '../../gis/stac-search.js';
import { ErrorBodySchema } from '../http/schemas.js';
import { ApikeyOnlySchema, apikey, json, security } from './gis-schema.js';

/** Requests and answers of the STAC API endpoints: validation and OpenAPI in one. */

/** STAC's error shape `{code, description}` and nadir's `{error, code}` at once. */
export const StacErrorSchema = Type.Object(
  {
    ...ErrorBodySchema.properties,
    description: Type.String({ description: 'The same sentence as `error` (STAC API).' }),
  },
  { additionalProperties: true },
);

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
