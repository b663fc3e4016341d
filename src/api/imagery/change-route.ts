import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { compareNewestFirst, type SurveyCatalogue } from '../../catalogue/catalogue.js';
import type { Asset, Survey } from '../../catalogue/survey.js';
import type { Clock } from '../../clock.js';
import { NadirError } from '../../errors.js';
import { type Aoi, aoiLonLatBounds } from '../../geo/aoi.js';
import { parseSize } from '../../geo/aoi-grid.js';
import { aoiPixels, type RasterEngine } from '../../raster/index.js';
import {
  billImageRetrieval,
  checkAllowance,
  type ImageryAccounts,
  type TokenCodec,
  verifyImageryRequest,
} from '../../tokens/index.js';
import { parsePoint } from '../query-params.js';
import { addServerTiming, timedStep } from '../request-lifecycle.js';
import {
  type ChangeParamsSchema,
  type ChangeQuerySchema,
  changeRouteSchema,
  DEFAULT_CHANGE_THRESHOLD,
} from './change-schema.js';
import { changeSummary } from './change-summary.js';

export const CHANGE_PATH = '/staticmap/v2/surveys/:surveyId/DsmChange.:format';

export interface ChangeRouteParts {
  tokens: Pick<TokenCodec, 'decode'>;
  accounts: ImageryAccounts;
  catalogue: Pick<SurveyCatalogue, 'get' | 'search'>;
  raster: Pick<RasterEngine, 'renderChange'>;
  clock: Clock;
}

type DsmSurvey = Survey & { assets: { DetailDsm: Asset } };

function requireDsm(survey: Survey | undefined, id: string, parameter: string): DsmSurvey {
  if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey with id "${id.slice(0, 64)}"`, { parameter });
  if (!survey.assets.DetailDsm) {
    throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no DetailDsm to compare`, { parameter });
  }
  return survey as DsmSurvey;
}

/**
 * The baseline: the one asked for, which must be another survey captured before `after` (the
 * catalogue's order: captureDate, then lastPhotoTime), or else the newest such survey with
 * DetailDsm whose footprint meets the AOI.
 */
async function findBaseline(
  catalogue: ChangeRouteParts['catalogue'],
  after: DsmSurvey,
  aoi: Aoi,
  requested: string | undefined,
): Promise<DsmSurvey> {
  if (requested !== undefined) {
    if (requested === after.id) {
      throw new NadirError('SAME_SURVEY', 'baseline is the survey itself: a change needs two surveys', {
        parameter: 'baseline',
      });
    }
    const baseline = requireDsm(await catalogue.get(requested), requested, 'baseline');
    if (compareNewestFirst(after, baseline) >= 0) {
      throw new NadirError(
        'BASELINE_NOT_EARLIER',
        `baseline ${baseline.id} (${baseline.captureDate}) was not captured before ${after.id} (${after.captureDate}): ` +
          'put the later survey in the path',
        { parameter: 'baseline' },
      );
    }
    return baseline;
  }
  const { surveys } = await catalogue.search({
    area: aoiLonLatBounds(aoi),
    types: ['DetailDsm'],
    until: after.captureDate,
    order: 'newest',
    limit: 100,
    offset: 0,
  });
  const earlier = surveys.find((survey) => compareNewestFirst(after, survey) < 0);
  if (!earlier) {
    throw new NadirError(
      'NO_BASELINE',
      `No survey with DetailDsm captured before ${after.captureDate} covers this area: nothing to compare ${after.id} with`,
    );
  }
  return earlier as DsmSurvey;
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
      const after = requireDsm(await catalogue.get(surveyId), surveyId, 'surveyId');
      return { after, baseline: await findBaseline(catalogue, after, aoi, query.baseline) };
    });
    if (aoiPixels(aoi, after, after.assets.DetailDsm) === 'none') {
      throw new NadirError('NO_IMAGERY', `Survey ${after.id} has no DetailDsm in this area; nothing was billed`);
    }
    if (aoiPixels(aoi, baseline, baseline.assets.DetailDsm) === 'none') throw disjoint(after, baseline);
    await checkAllowance(accounts, access, clock());

    const abandoned = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abandoned.abort();
    });
    const result = await raster.renderChange({
      after: after.assets.DetailDsm,
      before: baseline.assets.DetailDsm,
      aoi,
      size,
      format,
      threshold,
      signal: abandoned.signal,
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
