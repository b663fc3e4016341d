import { Type } from '@sinclair/typebox';
import { MAX_FILTER_LENGTH } from '../../gis/cql2.js';
import { SORTABLE } from '../../gis/stac-order.js';
import { MAX_OFFSET } from '../../gis/stac-paging.js';
import { DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT } from '../../gis/stac-search.js';
import { FILTER_CRS } from '../../gis/stac-search-parameters.js';
import { ErrorBodySchema, StringEnum } from '../http/schemas.js';
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
  body: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: "A POST link's body: a POST search's next page." }),
  ),
  merge: Type.Optional(
    Type.Boolean({ description: 'Whether the body merges with the request before (always false).' }),
  ),
  'wmts:layer': Type.Optional(Type.String({ description: 'web-map-links: the WMTS layer of a `wmts` link.' })),
  'wmts:dimensions': Type.Optional(
    Type.Record(Type.String(), Type.String(), { description: 'web-map-links: the WMTS dimensions (`Time`).' }),
  ),
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
  transactionToken: Type.Optional(
    Type.String({
      maxLength: 1024,
      description:
        "A transaction token from /staticmap/v2/coverage.json: the items' data assets become that area's GeoTIFFs, " +
        'complete URLs GDAL (STACIT, /vsicurl/) opens as they are, one transaction for all of them (docs/gis.md).',
    }),
  ),
  token: Type.Optional(
    Type.String({
      maxLength: 2000,
      description:
        'Where a page begins: the `next` and `prev` links set it (keyset paging, any page as fast as the first).',
    }),
  ),
  sortby: Type.Optional(
    Type.String({
      maxLength: 500,
      description:
        `Sort extension: comma list of ${Object.keys(SORTABLE).join(', ')}, each - (descending) or + (ascending) first. ` +
        'The catalogue order (-nadir:capture_date, -end_datetime, +id, or its reverse) pages any number; another ' +
        'sort is made over every match, for searches of at most 2000 candidates.',
      examples: ['-datetime'],
    }),
  ),
  fields: Type.Optional(
    Type.String({
      maxLength: 5000,
      description: 'Fields extension: comma list of dotted paths to include, - first to exclude (`id,-geometry`).',
      examples: ['id,properties.nadir:tags,-assets'],
    }),
  ),
  filter: Type.Optional(
    Type.String({
      maxLength: MAX_FILTER_LENGTH,
      description:
        'Filter extension: CQL2 (text by default, or JSON with filter-lang=cql2-json) over the queryables ' +
        '(/stac/v1/queryables).',
      examples: [
        "A_CONTAINS(\"nadir:tags\", ('disaster:hurricane')) AND datetime >= TIMESTAMP('2025-01-01T00:00:00Z')",
      ],
    }),
  ),
  'filter-lang': Type.Optional(
    StringEnum(['cql2-text', 'cql2-json'], { description: 'The encoding of filter (cql2-text by default).' }),
  ),
  'filter-crs': Type.Optional(
    StringEnum([FILTER_CRS], { description: "The CRS of filter's geometries: WGS84 longitude, latitude only." }),
  ),
});

/** The names a search takes; any other is a 400 (OGC API Features core). */
export const STAC_SEARCH_PARAMETERS: readonly string[] = Object.keys(StacSearchQuerySchema.properties);

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
    querystring: Type.Object({ apikey, transactionToken: StacSearchQuerySchema.properties.transactionToken }),
    params: Type.Object({ collectionId: Type.String({ maxLength: 128 }), itemId: Type.String({ maxLength: 128 }) }),
  }),
  search: stacRoute('STAC item search (GET)', linked('An ItemCollection', 'application/geo+json'), {
    querystring: StacSearchQuerySchema,
  }),
  searchPost: stacRoute('STAC item search (POST)', linked('An ItemCollection', 'application/geo+json'), {
    querystring: ApikeyOnlySchema,
    body: Type.Unknown({
      description:
        'The search as a JSON object: bbox (numbers), intersects (GeoJSON geometry), datetime, ids and collections (lists), limit, offset, token (or next), sortby, fields, filter (cql2-json, or cql2-text with filter-lang), as the GET parameters mean. Any other member is a 400. The next and prev links are POSTs of the same body with their page.',
    }),
  }),
  queryables: {
    summary: 'STAC queryables: what a filter may name (a JSON Schema; no key needed)',
    tags: ['gis'],
    response: {
      200: {
        description: 'A JSON Schema of the item properties a CQL2 filter may name.',
        content: { 'application/schema+json': { schema: { type: 'object', additionalProperties: true } } },
      },
    },
  },
};
