import { Type } from '@sinclair/typebox';
import { ErrorBodySchema } from '../http/schemas.js';
import { LayerFilterQuerySchema, security } from './gis-schema.js';

/** Requests and answers of the WMTS endpoints: validation and OpenAPI in one. */

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
