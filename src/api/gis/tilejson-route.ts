import type { FastifyInstance } from 'fastify';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import type { TileType } from '../../catalogue/survey.js';
import type { Clock } from '../../clock.js';
import { utcDate } from '../../geo/dates.js';
import { type LayerFilterQuery, parseLayerFilter } from '../../gis/layer-filter.js';
import { matchingSurveys, surveysExtent } from '../../gis/matching-surveys.js';
import { tileJson } from '../../gis/tilejson.js';
import { type ApiKeyVerifier, authenticate } from '../auth.js';
import { timedStep } from '../request-lifecycle.js';
import { cacheFor, gisLinksFor } from './gis-request.js';
import { tileJsonRouteSchema } from './gis-schema.js';

/** Under /tiles/v3/ beside the tiles it describes; the tile lane leaves it to fastify (no tile file). */
export const TILEJSON_PATH = '/tiles/v3/:contentType/tilejson.json';

export interface TileJsonRouteParts {
  keys: ApiKeyVerifier;
  catalogue: Pick<SurveyCatalogue, 'search'>;
  clock: Clock;
  publicUrl: string | undefined;
}

/** GET /tiles/v3/{contentType}/tilejson.json: the key (401), then the filters (400). */
export function registerTileJsonRoute(
  app: FastifyInstance,
  { keys, catalogue, clock, publicUrl }: TileJsonRouteParts,
): void {
  app.get(
    TILEJSON_PATH,
    {
      schema: tileJsonRouteSchema,
      preValidation: async (request) => {
        await timedStep(request, 'auth', () => authenticate(keys, request));
      },
    },
    async (request, reply) => {
      const type = (request.params as { contentType: TileType }).contentType;
      const filter = parseLayerFilter(request.query as LayerFilterQuery, () => utcDate(clock()));
      const matching = await timedStep(request, 'catalogue', () => matchingSurveys(catalogue, { type, ...filter }));
      const links = gisLinksFor(request, publicUrl);
      cacheFor(reply, links);
      return tileJson(links, type, filter.written, surveysExtent(matching, type));
    },
  );
}
