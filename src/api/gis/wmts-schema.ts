import { Type } from '@sinclair/typebox';
import { ErrorBodySchema } from '../http/schemas.js';
import { LayerFilterQuerySchema, security } from './gis-schema.js';

/** Requests and answers of the WMTS endpoints: validation and OpenAPI in one. */

const binary = { schema: { type: 'string', format: 'binary' } };
const capabilitiesOrTile = {
  description: 'The WMTS 1.0.0 capabilities; with `REQUEST=GetTile`, the tile.',
  content: { 'application/xml': { schema: { type: 'string' } }, 'image/png': binary, 'image/jpeg': binary },
};

/** OGC requests (they name SERVICE or REQUEST) are refused with an OWS ExceptionReport instead. */
const OGC_ERRORS =
  'Requests that name `SERVICE` or `REQUEST` (KVP, and the ResourceURLs, which carry `SERVICE=WMTS`) are OGC requests: ' +
  'they are refused with an OWS 1.1 ExceptionReport (`application/xml`; MissingParameterValue, InvalidParameterValue, ' +
  'TileOutOfRange: 400; OperationNotSupported: 400 (where the table says 501: no bad input gets a 5xx); NoApplicableCode with the status below otherwise), take only the ' +
  'Time values the capabilities list, and a tile with no imagery is an empty tile (transparent PNG, black JPEG), not a 404. ' +
  'Other requests are answered as the tile API answers (JSON errors).';

export const wmtsCapabilitiesRouteSchema = {
  summary:
    'WMTS 1.0.0 capabilities (RESTful and KVP): Vert on GoogleMapsCompatible, tag layers, capture date as Time; KVP GetTile',
  description:
    'Without `REQUEST`: the capabilities document. KVP (parameter names in any case, 07-057r7): ' +
    '`SERVICE=WMTS&REQUEST=GetCapabilities`, or `SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=Vert&STYLE=default&' +
    'TILEMATRIXSET=GoogleMapsCompatible&TILEMATRIX={z}&TILEROW={y}&TILECOL={x}&FORMAT=image/png[&TIME=current|YYYY-MM-DD]`. ' +
    OGC_ERRORS,
  tags: ['gis'],
  security,
  querystring: LayerFilterQuerySchema,
  response: { 200: capabilitiesOrTile, 400: ErrorBodySchema, 401: ErrorBodySchema, 429: ErrorBodySchema },
};

export const wmtsTileRouteSchema = {
  summary: 'A WMTS tile (RESTful ResourceURL): the location tile of the layer as of Time',
  description: `Time: \`current\` or a capture date; with \`SERVICE=WMTS\` also the template's unfilled \`{Time}\` (the Default). ${OGC_ERRORS}`,
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
        'image/jpeg': binary,
        'image/png': binary,
      },
    },
    304: { description: 'Not modified.' },
    400: ErrorBodySchema,
    401: ErrorBodySchema,
    404: ErrorBodySchema,
    429: ErrorBodySchema,
  },
};
