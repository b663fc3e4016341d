import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import type { Survey } from '../../catalogue/survey.js';
import { pairById } from '../../change/change-pair.js';
import { changeSummary } from '../../change/change-summary.js';
import type { Clock } from '../../clock.js';
import { NadirError } from '../../errors.js';
import { aoiLonLatBounds } from '../../geo/aoi.js';
import { parseSize } from '../../geo/aoi-grid.js';
import { parsePoint } from '../../geo/point-text.js';
import { aoiPixels, type RasterEngine } from '../../raster/index.js';
import {
  billImageRetrieval,
  checkAllowance,
  type ImageryAccounts,
  type TokenCodec,
  verifyImageryRequest,
} from '../../tokens/index.js';
import { abandonedSignal, addServerTiming, timedStep } from '../http/request-lifecycle.js';
import {
  type ChangeParamsSchema,
  type ChangeQuerySchema,
  changeRouteSchema,
  DEFAULT_CHANGE_THRESHOLD,
} from './change-schema.js';

export const CHANGE_PATH = '/staticmap/v2/surveys/:surveyId/DsmChange.:format';

export interface ChangeRouteParts {
  tokens: Pick<TokenCodec, 'decode'>;
  accounts: ImageryAccounts;
  catalogue: Pick<SurveyCatalogue, 'get' | 'search'>;
  raster: Pick<RasterEngine, 'renderChange'>;
  clock: Clock;
}

function disjoint(after: Survey, baseline: Survey): NadirError {
  return new NadirError(
    'SURVEYS_DISJOINT',
    `Surveys ${after.id} and ${baseline.id} have no heights in common in this area (point and radius); nothing was billed`,
  );
}

/**
 * GET /staticmap/v2/surveys/{after}/DsmChange.{format}?baseline={before}&... (docs/api.md,
 * "DsmChange"). The imagery route's order, with the baseline after the survey: parameters (400),
 * token (403), surveys and their DetailDsm (404, or 400 for a baseline that is not earlier),
 * heights of both in the AOI (404), allowance (403), render, billing once per token.
 */
export function registerChangeRoute(app: FastifyInstance, parts: ChangeRouteParts): void {
  const { tokens, accounts, catalogue, raster, clock } = parts;
  app.get(CHANGE_PATH, { schema: changeRouteSchema }, async (request, reply) => {
    const { surveyId, format } = request.params as Static<typeof ChangeParamsSchema>;
    const query = request.query as Static<typeof ChangeQuerySchema>;
    const size = parseSize(query.size);
    const aoi = { ...parsePoint(query.point), radius: query.radius };
    const threshold = query.threshold ?? DEFAULT_CHANGE_THRESHOLD;

    const access = await timedStep(request, 'token', () =>
      verifyImageryRequest(tokens, accounts, { token: query.transactionToken, ...aoi }, clock()),
    );
    const { after, baseline } = await timedStep(request, 'catalogue', async () => {
      return pairById(catalogue, surveyId, query.baseline, aoiLonLatBounds(aoi), 'surveyId');
    });
    if (aoiPixels(aoi, after, after.assets.DetailDsm) === 'none') {
      throw new NadirError('NO_IMAGERY', `Survey ${after.id} has no DetailDsm in this area; nothing was billed`);
    }
    if (aoiPixels(aoi, baseline, baseline.assets.DetailDsm) === 'none') throw disjoint(after, baseline);
    await checkAllowance(accounts, access, clock());

    const result = await raster.renderChange({
      after: after.assets.DetailDsm,
      before: baseline.assets.DetailDsm,
      aoi,
      size,
      format,
      threshold,
      signal: abandonedSignal(reply),
    });
    addServerTiming(request, 'queue', result.timings.queueMs);
    addServerTiming(request, 'render', result.timings.renderMs);
    if (result.empty) throw disjoint(after, baseline);
    await timedStep(request, 'billing', () => billImageRetrieval(accounts, access, clock()));

    reply
      .header('x-survey-ids', `${after.id},${baseline.id}`)
      .header('content-disposition', `inline; filename="${after.id}_DsmChange.${format}"`)
      .header('cache-control', 'private, max-age=3600');
    if (result.figures) {
      return reply.type('application/json').send(changeSummary(after, baseline, aoi, result.grid, result.figures));
    }
    return reply.header('content-type', result.file?.contentType).send(result.file?.body);
  });
}
