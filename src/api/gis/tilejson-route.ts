import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import type { TileType } from '../../catalogue/survey.js';
import type { Clock } from '../../clock.js';
import { NadirError } from '../../errors.js';
import { utcDate } from '../../geo/dates.js';
import { type LayerFilterQuery, parseLayerFilter } from '../../gis/layer-filter.js';
import { matchingSurveys, surveysExtent } from '../../gis/matching-surveys.js';
import { tileJson } from '../../gis/tilejson.js';
import { type ApiKeyVerifier, authenticate } from '../auth.js';
import { timedStep } from '../request-lifecycle.js';
import { cacheFor, gisLinksFor } from './gis-request.js';
import { surveyTileJsonRouteSchema, tileJsonRouteSchema } from './gis-schema.js';

/** Under /tiles/v3/ beside the tiles it describes; the tile lane leaves it to fastify (no tile file). */
export const TILEJSON_PATH = '/tiles/v3/:contentType/tilejson.json';
export const SURVEY_TILEJSON_PATH = '/tiles/v3/surveys/:surveyId/:contentType/tilejson.json';

export interface TileJsonRouteParts {
  keys: ApiKeyVerifier;
  catalogue: Pick<SurveyCatalogue, 'search' | 'get'>;
  clock: Clock;
  publicUrl: string | undefined;
}

/**
 * GET /tiles/v3/{contentType}/tilejson.json: the key (401), then the filters (400). And
 * /tiles/v3/surveys/{surveyId}/{contentType}/tilejson.json for one survey's tiles (STAC items
 * point at it): 404 SURVEY_NOT_FOUND, CONTENT_NOT_FOUND as for its tiles.
 */
export function registerTileJsonRoute(
  app: FastifyInstance,
  { keys, catalogue, clock, publicUrl }: TileJsonRouteParts,
): void {
  const preValidation = async (request: FastifyRequest) => {
    await timedStep(request, 'auth', () => authenticate(keys, request));
  };
  app.get(TILEJSON_PATH, { schema: tileJsonRouteSchema, preValidation }, async (request, reply) => {
    const type = (request.params as { contentType: TileType }).contentType;
    const filter = parseLayerFilter(request.query as LayerFilterQuery, () => utcDate(clock()));
    const matching = await timedStep(request, 'catalogue', () => matchingSurveys(catalogue, { type, ...filter }));
    const links = gisLinksFor(request, publicUrl);
    cacheFor(reply, links);
    return tileJson(links, type, filter.written, surveysExtent(matching, type));
  });
  app.get(SURVEY_TILEJSON_PATH, { schema: surveyTileJsonRouteSchema, preValidation }, async (request, reply) => {
    const { surveyId, contentType: type } = request.params as { surveyId: string; contentType: TileType };
    const survey = await timedStep(request, 'catalogue', () => catalogue.get(surveyId));
    if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey ${JSON.stringify(surveyId.slice(0, 80))}`);
    if (!survey.assets[type]) throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no ${type} tiles`);
    const links = gisLinksFor(request, publicUrl);
    cacheFor(reply, links);
    return tileJson(links, type, {}, surveysExtent({ surveys: [survey], complete: true }, type), survey.id);
  });
}
