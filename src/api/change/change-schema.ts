import { Type } from '@sinclair/typebox';
import { RASTER_FORMATS } from '../../raster/index.js';
import { ErrorBodySchema, StringEnum } from '../http/schemas.js';
import { ImageryQuerySchema } from '../imagery/imagery-schema.js';

/** `{format}` of DsmChange: every raster format, and `json` for the figures. */
export const CHANGE_FORMATS = [...RASTER_FORMATS, 'json'] as const;
export type ChangeFormat = (typeof CHANGE_FORMATS)[number];

/** Default of `threshold`: a storey-sized loss or gain, well above the noise of two DSMs. */
export const DEFAULT_CHANGE_THRESHOLD = 2;

export const ChangeParamsSchema = Type.Object({
  surveyId: Type.String({ maxLength: 128, description: 'The later survey (after), an id from the coverage response.' }),
  format: StringEnum(CHANGE_FORMATS, {
    description: 'tif (Float32 metres, after - before), png / jpg (diverging ramp), a world file, or json (figures).',
  }),
});

export const ChangeQuerySchema = Type.Object({
  ...ImageryQuerySchema.properties,
  baseline: Type.Optional(
    Type.String({
      maxLength: 128,
      description:
        'The earlier survey (before). Default: the newest survey with DetailDsm over the AOI captured before the after survey.',
    }),
  ),
  threshold: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 100,
      description: `json: metres of loss or gain from which a pixel counts as lost or gained (default ${DEFAULT_CHANGE_THRESHOLD}).`,
    }),
  ),
});

export const changeRouteSchema = {
  summary: 'Height change of the AOI between two surveys (DsmChange): GeoTIFF, picture, world file or figures',
  description:
    "Both surveys' DetailDsm warped onto the DetailDsm grid of this AOI and size, then after - before. The first " +
    'successful answer with a token counts one transaction, as for every image.',
  tags: ['raster'],
  params: ChangeParamsSchema,
  querystring: ChangeQuerySchema,
  response: {
    400: ErrorBodySchema,
    403: ErrorBodySchema,
    404: ErrorBodySchema,
    503: ErrorBodySchema,
  },
};
