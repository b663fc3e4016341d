import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import { RASTER_TYPES, type RasterType } from '../../catalogue/survey.js';
import type { Clock } from '../../clock.js';
import { invalidParameter, NadirError } from '../../errors.js';
import { parseSize } from '../../geo/aoi-grid.js';
import { parsePoint } from '../../geo/point-text.js';
import { aoiPixels, isRasterFormat, RASTER_FORMATS, type RasterEngine, type RasterFormat } from '../../raster/index.js';
import {
  billImageRetrieval,
  checkAllowance,
  type ImageryAccounts,
  type TokenCodec,
  verifyImageryRequest,
} from '../../tokens/index.js';
import { byteRange } from '../http/byte-range.js';
import { sendFailure } from '../http/error-handling.js';
import { failure } from '../http/error-table.js';
import { documentedPath } from '../http/openapi.js';
import { abandonedSignal, addServerTiming, timedStep } from '../http/request-lifecycle.js';
import {
  ImageryDocumentedParamsSchema,
  type ImageryParamsSchema,
  type ImageryQuerySchema,
  imageryRouteSchema,
} from './imagery-schema.js';
import { RenderedFiles } from './rendered-files.js';

export const IMAGERY_PATH = '/staticmap/v2/surveys/:surveyId/:file';

/** `TrueOrtho.tif` -> type and format, each refused with the allowed values when unknown. */
export function parseImageryFile(file: string): { type: RasterType; format: RasterFormat } {
  const dot = file.lastIndexOf('.');
  const type = dot < 0 ? file : file.slice(0, dot);
  const format = dot < 0 ? '' : file.slice(dot + 1);
  if (!(RASTER_TYPES as readonly string[]).includes(type)) {
    throw invalidParameter('type', `type must be one of ${RASTER_TYPES.join(', ')}, got "${type.slice(0, 40)}"`);
  }
  if (!isRasterFormat(format)) {
    throw invalidParameter(
      'format',
      `format must be one of ${RASTER_FORMATS.join(', ')}, got "${format.slice(0, 40)}"`,
    );
  }
  return { type: type as RasterType, format };
}

/**
 * GET /staticmap/v2/surveys/{surveyId}/{type}.{format} (spec endpoint 2, decisions.md "Imagery").
 * Order: the request's own parameters (400), the token for this AOI (403), the survey and its
 * type (404), pixels of it in the AOI (404 NO_IMAGERY: from the catalogue's footprint, or from the
 * rendered image near the footprint's edge), the allowance (403), then the render; only a
 * rendered image with pixels of the survey is billed, once per token (the ledger makes concurrent
 * first retrievals count once).
 */
export interface ImageryRouteParts {
  tokens: Pick<TokenCodec, 'decode'>;
  accounts: ImageryAccounts;
  catalogue: Pick<SurveyCatalogue, 'get'>;
  raster: Pick<RasterEngine, 'renderAoi'>;
  clock: Clock;
}

/** decisions.md's 404 for "no imagery" (its row names tiles; an image of nothing is the same). */
function noImagery(surveyId: string, type: RasterType): NadirError {
  return new NadirError(
    'NO_IMAGERY',
    `Survey ${surveyId} has no ${type} imagery in this area (point and radius); nothing was billed`,
  );
}

export function registerImageryRoute(app: FastifyInstance, parts: ImageryRouteParts): void {
  const { tokens, accounts, catalogue, raster, clock } = parts;
  const files = new RenderedFiles(clock);
  const config = documentedPath('/staticmap/v2/surveys/:surveyId/{type}.{format}', ImageryDocumentedParamsSchema);
  app.get(IMAGERY_PATH, { schema: imageryRouteSchema, config }, async (request, reply) => {
    const params = request.params as Static<typeof ImageryParamsSchema>;
    const query = request.query as Static<typeof ImageryQuerySchema>;
    const { type, format } = parseImageryFile(params.file);
    const size = parseSize(query.size);
    const point = parsePoint(query.point);
    const aoi = { ...point, radius: query.radius };

    const access = await timedStep(request, 'token', () =>
      verifyImageryRequest(tokens, accounts, { token: query.transactionToken, ...aoi }, clock()),
    );
    const survey = await timedStep(request, 'catalogue', () => catalogue.get(params.surveyId));
    if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey with id "${params.surveyId.slice(0, 64)}"`);
    const asset = survey.assets[type];
    if (!asset) {
      const has = Object.keys(survey.assets).filter((t) => (RASTER_TYPES as readonly string[]).includes(t));
      throw new NadirError(
        'CONTENT_NOT_FOUND',
        `Survey ${survey.id} has no ${type} (it has: ${has.join(', ') || 'none'})`,
      );
    }
    const pixels = aoiPixels(aoi, survey, asset);
    if (pixels === 'none') throw noImagery(survey.id, type);
    await checkAllowance(accounts, access, clock());

    const checkEmpty = pixels === 'maybe';
    // A client reading the file in pieces (GDAL's /vsicurl/, STACIT) meets one render (rendered-files.ts).
    const key = RenderedFiles.keyOf([
      query.transactionToken,
      survey.id,
      survey.version,
      type,
      format,
      query.point,
      query.radius,
      size,
    ]);
    const result = await files.get(key, () =>
      raster.renderAoi({ asset, aoi, size, format, signal: abandonedSignal(reply), checkEmpty }),
    );
    addServerTiming(request, 'queue', result.timings.queueMs);
    addServerTiming(request, 'render', result.timings.renderMs);
    if (result.empty) throw noImagery(survey.id, type);
    await timedStep(request, 'billing', () => billImageRetrieval(accounts, access, clock()));

    reply
      .header('content-type', result.contentType)
      .header('content-disposition', `inline; filename="${survey.id}_${type}.${format}"`)
      // The URL carries a credential and the survey may be re-ingested: the caller's cache only.
      .header('cache-control', 'private, max-age=3600')
      .header('accept-ranges', 'bytes');
    const { body } = result;
    const range = byteRange(request.headers.range, body.length);
    if (range === 'unsatisfiable') {
      reply.header('content-range', `bytes */${body.length}`);
      return sendFailure(
        reply,
        failure('RANGE_NOT_SATISFIABLE', `The file is ${body.length} bytes: no byte of the range is in it`),
      );
    }
    if (range === undefined) return reply.send(body);
    reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${body.length}`);
    return reply.send(body.subarray(range.start, range.end + 1));
  });
}
