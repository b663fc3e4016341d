import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiKeyLookup, usageMonthOf } from '../../accounts/index.js';
import type { TileType } from '../../catalogue/survey.js';
import type { Services } from '../../composition.js';
import { NadirError } from '../../errors.js';
import { utcDate } from '../../geo/dates.js';
import type { TileCoord } from '../../geo/web-mercator.js';
import { rotationFor } from '../../tiles/panorama.js';
import { freshPlan } from '../../tiles/plan-memo.js';
import { candidateOf } from '../../tiles/tile-candidates.js';
import type { AssetCandidate, TileFormat } from '../../tiles/tile-renderer.js';
import { authenticate } from '../auth.js';
import { addServerTiming, timedStep } from '../request-lifecycle.js';
import {
  cacheControlOf,
  etagOf,
  LOCATION_MAX_AGE,
  matchesIfNoneMatch,
  noImagery,
  rateLimited,
  rateLimitHeaders,
  SURVEY_MAX_AGE,
  surveyMatches,
} from './tile-http.js';
import { parseTileAddress, parseTileFilter } from './tile-request.js';
import {
  type LocationTileParamsSchema,
  type LocationTileQuerySchema,
  locationTileRouteSchema,
  type SurveyTileParamsSchema,
  type SurveyTileQuerySchema,
  surveyTileRouteSchema,
} from './tile-schema.js';

export const LOCATION_TILE_PATH = '/tiles/v3/:contentType/:z/:x/:file';
export const SURVEY_TILE_PATH = '/tiles/v3/surveys/:surveyId/:contentType/:z/:x/:file';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of a tile route (set by its onRequest hook). */
    tileCaller: ApiKeyLookup | null;
  }
}

/**
 * The tile endpoints as fastify routes: every case, every error, and the OpenAPI document. The
 * common requests never get here: the fast lane (tile-lane.ts) answers them first, the same way.
 */
export function registerTileRoutes(app: FastifyInstance, services: Services, now: () => Date): void {
  const { accounts, catalogue, tiles, rateLimiter, tileUsage } = services;
  app.decorateRequest('tileCaller', null);

  /**
   * Before anything else (even parameter validation): who is asking, and is it within its rate
   * limit. So every tile answer but a 401 carries the X-RateLimit-* headers, bad requests count.
   */
  async function admit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = await authenticate(accounts, request);
    const { account, keyId } = caller;
    const decision = await rateLimiter.take(keyId, account.tileRateLimit, account.tileRateInterval, now());
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) throw rateLimited(decision, account.tileRateInterval);
    request.tileCaller = caller;
  }

  async function send(
    request: FastifyRequest,
    reply: FastifyReply,
    tile: TileCoord,
    format: TileFormat,
    type: TileType,
    candidates: AssetCandidate[],
    maxAge: number,
    /** Only a cached candidate list (location tiles) can key remembered plans. */
    remember: boolean,
  ): Promise<FastifyReply> {
    // Set only on answers that may be cached: an empty tile stays empty until the catalogue changes.
    const cacheable = cacheControlOf(typeof (request.query as { apikey?: unknown }).apikey === 'string', maxAge);
    const memo = remember ? tiles.plans.plan(tile, candidates) : freshPlan(tile, candidates);
    if (memo.plan.layers.length === 0) {
      reply.header('cache-control', cacheable);
      throw noImagery(tile);
    }
    const etag = etagOf(memo, type, format);
    reply.header('etag', etag).header('cache-control', cacheable);
    if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send();

    // Map clients cancel tiles while panning (closing the connection): such a tile is not drawn.
    const socket = request.raw.socket;
    let rendered: Awaited<ReturnType<typeof tiles.renderer.render>>;
    try {
      rendered = await timedStep(request, 'render', () =>
        tiles.renderer.render(memo.plan, format, rotationFor(type), () => socket.destroyed),
      );
    } catch (error) {
      // Nobody is listening: nothing to answer, and not a server fault worth an error line.
      if (socket.destroyed) return reply.hijack();
      reply.removeHeader('cache-control').removeHeader('etag');
      throw error;
    }
    if (!rendered) {
      reply.header('cache-control', cacheable);
      throw noImagery(tile);
    }
    // Which path answered, for people (and benchmarks) reading Server-Timing.
    addServerTiming(request, rendered.passThrough ? 'passthrough' : 'composite', 0);
    const caller = request.tileCaller as ApiKeyLookup;
    tileUsage.count(caller.account.id, usageMonthOf(now()));
    // The body's buffer may be reused once the answer is sent: 'finish', never earlier.
    if (rendered.release) reply.raw.once('finish', rendered.release);
    return reply
      .header('content-type', rendered.contentType)
      .header('x-survey-ids', rendered.surveyIds.join(','))
      .send(rendered.body);
  }

  app.get(LOCATION_TILE_PATH, { schema: locationTileRouteSchema, onRequest: admit }, async (request, reply) => {
    const params = request.params as Static<typeof LocationTileParamsSchema>;
    const query = request.query as Static<typeof LocationTileQuerySchema>;
    const { tile, format } = parseTileAddress(params.z, params.x, params.file);
    const filter = parseTileFilter(params.contentType, query, () => utcDate(now()));
    const candidates = await timedStep(request, 'catalogue', () => tiles.candidates.find(tile, filter));
    return send(request, reply, tile, format, params.contentType, candidates, LOCATION_MAX_AGE, true);
  });

  app.get(SURVEY_TILE_PATH, { schema: surveyTileRouteSchema, onRequest: admit }, async (request, reply) => {
    const params = request.params as Static<typeof SurveyTileParamsSchema>;
    const query = request.query as Static<typeof SurveyTileQuerySchema>;
    const { tile, format } = parseTileAddress(params.z, params.x, params.file);
    const filter = parseTileFilter(params.contentType, query, () => utcDate(now()));
    const survey = await timedStep(request, 'catalogue', () => catalogue.get(params.surveyId));
    if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey with id "${params.surveyId.slice(0, 64)}"`);
    const candidate = candidateOf(survey, params.contentType);
    if (!candidate) {
      throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no ${params.contentType} imagery`);
    }
    const candidates = surveyMatches(survey, filter) ? [candidate] : [];
    return send(request, reply, tile, format, params.contentType, candidates, SURVEY_MAX_AGE, false);
  });
}
