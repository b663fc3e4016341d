import { Type } from '@sinclair/typebox';
import { RASTER_TYPES } from '../../catalogue/survey.js';
import { MAX_RADIUS } from '../../geo/aoi.js';
import { RASTER_FORMATS } from '../../raster/index.js';
import { DEMO_POINT, DEMO_SURVEY_ID } from '../http/demo-examples.js';
import { ErrorBodySchema, StringEnum } from '../http/schemas.js';

const SurveyIdSchema = Type.String({
  maxLength: 128,
  description: 'A survey id from the coverage response.',
  examples: [DEMO_SURVEY_ID],
});

export const ImageryParamsSchema = Type.Object({
  surveyId: SurveyIdSchema,
  file: Type.String({
    maxLength: 64,
    description: `{type}.{format}: type ${RASTER_TYPES.join(' | ')}, format ${RASTER_FORMATS.join(' | ')}.`,
    examples: ['TrueOrtho.tif', 'DetailDsm.png', 'Vert.jgw'],
  }),
});

/**
 * The same parameters as the OpenAPI document shows them, `{type}.{format}` as the specification
 * writes the path (http/openapi.ts documentedPath): the router reads them from `{file}` above.
 */
export const ImageryDocumentedParamsSchema = Type.Object({
  surveyId: SurveyIdSchema,
  type: StringEnum(RASTER_TYPES, { description: 'The content type.', examples: ['TrueOrtho'] }),
  format: StringEnum(RASTER_FORMATS, {
    description: 'tif (GeoTIFF, EPSG:3857), jpg, png, or the world file of either (jgw, pgw, tfw).',
    examples: ['tif'],
  }),
});

export const ImageryQuerySchema = Type.Object({
  transactionToken: Type.String({ minLength: 1, description: 'The token from the coverage call for this AOI.' }),
  point: Type.String({
    description: '`longitude,latitude`: must equal the point of the coverage call (within 1e-7 degrees).',
    examples: [DEMO_POINT],
  }),
  radius: Type.Number({
    minimum: 1,
    maximum: MAX_RADIUS,
    description: "Ground metres, at most the coverage call's radius. The image covers 2 x radius metres.",
    examples: [50],
  }),
  size: Type.String({
    description: '`{width}x{height}`, square, 1..5000. Ground GSD = 2 x radius / width.',
    examples: ['1000x1000'],
  }),
});

/**
 * The formats `{file}` ends in, for programs, as an OpenAPI extension of the operation (ajv refuses
 * unknown keywords in the parameters' own schemas): the client's generated facts are read from
 * here (scripts/client-types.ts).
 */
const imageryFacts = { 'x-nadir-raster-formats': [...RASTER_FORMATS] };

export const imageryRouteSchema = {
  ...imageryFacts,
  summary: 'An image of the AOI from one survey: GeoTIFF, JPEG, PNG, or a world file',
  description:
    'EPSG:3857, covering the AOI square. The first successful image with a token counts one transaction ' +
    'against the monthly allowance; later images with the same token are free. An AOI with no pixel of the ' +
    'survey is 404 NO_IMAGERY and counts nothing. Range (one range of bytes) is honoured, over the same ' +
    'rendered file for a while, so GDAL reads the file in pieces (/vsicurl/, STACIT) as one transaction.',
  tags: ['raster'],
  params: ImageryParamsSchema,
  querystring: ImageryQuerySchema,
  response: {
    206: { description: 'The bytes of the Range asked for, with Content-Range.' },
    400: ErrorBodySchema,
    403: ErrorBodySchema,
    404: ErrorBodySchema,
    416: ErrorBodySchema,
    503: ErrorBodySchema,
  },
};
