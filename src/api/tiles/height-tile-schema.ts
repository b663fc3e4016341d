import { Type } from '@sinclair/typebox';
import { HEIGHT_STYLES } from '../../height-tiles/height-styles.js';
import { MAX_HEIGHT, MIN_HEIGHT } from '../../height-tiles/height-tile-query.js';
import { StringEnum } from '../http/schemas.js';
import { LocationTileQuerySchema, pngTileResponses } from './tile-schema.js';

/** DetailDsm map tiles (nadir extensions beyond the spec): validation and OpenAPI in one. */

const address = {
  style: StringEnum(HEIGHT_STYLES, {
    description:
      '`relief`: a colour ramp over the heights (transparent where none); `hillshade`: grey shade, light from the north-west; ' +
      '`terrain-rgb`: Mapbox Terrain-RGB (height = -10000 + (R x 65536 + G x 256 + B) x 0.1 m) for MapLibre `raster-dem` sources.',
  }),
  z: Type.String({ description: 'Zoom, 0 to 24.', examples: ['19'] }),
  x: Type.String({ description: 'Tile column, 0 to 2^z - 1 (Google/OSM tile scheme).' }),
  file: Type.String({
    maxLength: 32,
    description: '{y}.png: y the tile row (0 at the top).',
    examples: ['212130.png'],
  }),
};

export const HeightTileParamsSchema = Type.Object(address);

/** `{y}.png` as the document shows it (http/openapi.ts documentedPath); the router reads `{file}`. */
const { file: _file, ...documentedAddress } = address;
const y = Type.String({ description: 'Tile row, 0 to 2^z - 1, 0 at the top.', examples: ['216399'] });
export const HeightTileDocumentedParamsSchema = Type.Object({ ...documentedAddress, y });
const surveyId = Type.String({ maxLength: 128, description: 'A survey id from the coverage response.' });
export const SurveyHeightTileParamsSchema = Type.Object({ surveyId, ...address });
export const SurveyHeightTileDocumentedParamsSchema = Type.Object({ surveyId, ...documentedAddress, y });

const { mosaic: _, ...filters } = LocationTileQuerySchema.properties;
const ramp = (bound: string) =>
  Type.Optional(
    Type.Number({
      minimum: MIN_HEIGHT,
      maximum: MAX_HEIGHT,
      description: `relief only: the height (metres) the ramp's ${bound} colour stands for; min and max go together. Default: the newest survey's own range.`,
    }),
  );
export const HeightTileQuerySchema = Type.Object({ ...filters, min: ramp('first'), max: ramp('last') });

const common = {
  tags: ['tiles'],
  security: [{ apikeyQuery: [] as string[] }, { apikeyHeader: [] as string[] }] as Record<string, string[]>[],
  querystring: HeightTileQuerySchema,
  response: pngTileResponses('the surveys drawn'),
  /** Beyond the spec's tile layers (Vert and panoramas): say so to programs reading the document. */
  'x-nadir-extension': true,
};

export const heightTileRouteSchema = {
  summary: 'A map tile of the surface heights (DetailDsm) at a place: nadir extension',
  description:
    'The newest DetailDsm the filters select over the tile, older surveys filling where it has no height. Not in the spec.',
  params: HeightTileParamsSchema,
  ...common,
};

export const surveyHeightTileRouteSchema = {
  summary: "A map tile of one survey's surface heights (DetailDsm): nadir extension",
  description: 'Not in the spec.',
  params: SurveyHeightTileParamsSchema,
  ...common,
};
