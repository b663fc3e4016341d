import { Type } from '@sinclair/typebox';
import { DEFAULT_TILE_THRESHOLD, MAX_THRESHOLD } from '../../change/change-tile-query.js';
import { ErrorBodySchema } from '../http/schemas.js';
import { LocationTileQuerySchema } from '../tiles/tile-schema.js';

/** `/tiles/v3/DsmChange/{z}/{x}/{y}.png`: validation and OpenAPI in one. */
export const ChangeTileParamsSchema = Type.Object({
  z: Type.String({ description: 'Zoom, 0 to 24.', examples: ['18'] }),
  x: Type.String({ description: 'Tile column, 0 to 2^z - 1 (Google/OSM tile scheme).' }),
  file: Type.String({
    maxLength: 32,
    description: '{y}.png: y the tile row (0 at the top).',
    examples: ['107331.png'],
  }),
});

const { mosaic: _, ...filters } = LocationTileQuerySchema.properties;

export const ChangeTileQuerySchema = Type.Object({
  ...filters,
  after: Type.Optional(
    Type.String({ maxLength: 128, description: 'The later survey. Without it: the newest survey the filters select.' }),
  ),
  baseline: Type.Optional(
    Type.String({
      maxLength: 128,
      description: 'The earlier survey (needs after). Default: the newest survey over the tile captured before after.',
    }),
  ),
  threshold: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: MAX_THRESHOLD,
      description: `Metres: changes within +-threshold are transparent (default ${DEFAULT_TILE_THRESHOLD}).`,
    }),
  ),
});

export const changeTileRouteSchema = {
  summary: 'A map tile of the height change between two surveys (DsmChange), transparent where unchanged',
  tags: ['tiles'],
  security: [{ apikeyQuery: [] as string[] }, { apikeyHeader: [] as string[] }] as Record<string, string[]>[],
  params: ChangeTileParamsSchema,
  querystring: ChangeTileQuerySchema,
  response: {
    200: {
      description: 'The tile, image/png. Headers: ETag, Cache-Control, X-Survey-Ids (after,baseline), X-RateLimit-*.',
      content: { 'image/png': { schema: { type: 'string', format: 'binary' } } },
    },
    304: { description: 'Not modified (If-None-Match matched the ETag).' },
    400: ErrorBodySchema,
    401: ErrorBodySchema,
    404: ErrorBodySchema,
    429: ErrorBodySchema,
  },
};
