import { Type } from '@sinclair/typebox';
import { DEFAULT_TILE_THRESHOLD, MAX_THRESHOLD } from '../../change/change-tile-query.js';
import { LocationTileQuerySchema, pngTileResponses } from '../tiles/tile-schema.js';

/** `/tiles/v3/DsmChange/{z}/{x}/{y}.png`: validation and OpenAPI in one. */
// The demo town's middle at z19 (http/demo-examples.ts's point): its tile has change in it.
const zoom = Type.String({ description: 'Zoom, 0 to 24.', examples: ['19'] });
const column = Type.String({
  description: 'Tile column, 0 to 2^z - 1 (Google/OSM tile scheme).',
  examples: ['137744'],
});

export const ChangeTileParamsSchema = Type.Object({
  z: zoom,
  x: column,
  file: Type.String({
    maxLength: 32,
    description: '{y}.png: y the tile row (0 at the top).',
    examples: ['216399.png'],
  }),
});

/** The same as the OpenAPI document shows them, `{y}.png` as the path reads (http/openapi.ts documentedPath). */
export const ChangeTileDocumentedParamsSchema = Type.Object({
  z: zoom,
  x: column,
  y: Type.String({ description: 'Tile row, 0 to 2^z - 1, 0 at the top.', examples: ['216399'] }),
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
  response: pngTileResponses('after,baseline'),
};
