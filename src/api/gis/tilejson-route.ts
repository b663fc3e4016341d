import type { FastifyInstance } from 'fastify';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import type { TileType } from '../../catalogue/survey.js';
import type { Clock } from '../../clock.js';
import { NadirError } from '../../errors.js';
import { utcDate } from '../../geo/dates.js';
import { extentOf, layerExtents, surveyExtent } from '../../gis/layer-extent.js';
import { type LayerFilterQuery, parseLayerFilter } from '../../gis/layer-filter.js';
import { layerContentType, type MapLayer } from '../../gis/map-layers.js';
import { tileJson } from '../../gis/tilejson.js';
import type { HeightStyle } from '../../height-tiles/height-styles.js';
import type { TileResponder } from '../../tiles/tile-responder.js';
import type { ApiKeyVerifier } from '../http/auth.js';
import { timedStep } from '../http/request-lifecycle.js';
import { tileAdmission } from '../tiles/tile-route.js';
import { cacheFor, gisLinksFor } from './gis-request.js';
import {
  heightTileJsonRouteSchema,
  surveyHeightTileJsonRouteSchema,
  surveyTileJsonRouteSchema,
  tileJsonRouteSchema,
} from './gis-schema.js';

/** Under /tiles/v3/ beside the tiles it describes; the tile lane leaves it to fastify (no tile file). */
export const TILEJSON_PATH = '/tiles/v3/:contentType/tilejson.json';
export const SURVEY_TILEJSON_PATH = '/tiles/v3/surveys/:surveyId/:contentType/tilejson.json';
/** The DetailDsm layers' (gis/map-layers.ts), beside their tiles. */
export const HEIGHT_TILEJSON_PATH = '/tiles/v3/DetailDsm/:style/tilejson.json';
export const SURVEY_HEIGHT_TILEJSON_PATH = '/tiles/v3/surveys/:surveyId/DetailDsm/:style/tilejson.json';

export interface TileJsonRouteParts {
  keys: ApiKeyVerifier;
  /** The tile rate limit (tile-responder.ts), which these documents count against. */
  tiles: Pick<TileResponder, 'admit'>;
  catalogue: Pick<SurveyCatalogue, 'extents' | 'get'>;
  clock: Clock;
  publicUrl: string | undefined;
}

/**
 * GET /tiles/v3/{contentType}/tilejson.json: the key (401), then the filters (400). And
 * /tiles/v3/surveys/{surveyId}/{contentType}/tilejson.json for one survey's tiles (STAC items
 * point at it): 404 SURVEY_NOT_FOUND, CONTENT_NOT_FOUND as for its tiles. The same for the
 * DetailDsm layers, /tiles/v3/DetailDsm/{style}/tilejson.json.
 */
export function registerTileJsonRoute(
  app: FastifyInstance,
  { keys, tiles, catalogue, clock, publicUrl }: TileJsonRouteParts,
): void {
  // Counted against the key's tile rate like a tile: a map asks for it with every page it opens.
  const onRequest = tileAdmission(keys, tiles);
  const layerOf = (params: { contentType?: TileType; style?: HeightStyle }): MapLayer =>
    params.style === undefined ? { type: params.contentType as TileType } : { type: 'DetailDsm', style: params.style };
  for (const [path, schema] of [
    [TILEJSON_PATH, tileJsonRouteSchema],
    [HEIGHT_TILEJSON_PATH, heightTileJsonRouteSchema],
  ] as const) {
    app.get(path, { schema, onRequest }, async (request, reply) => {
      const layer = layerOf(request.params as { contentType?: TileType; style?: HeightStyle });
      const filter = parseLayerFilter(request.query as LayerFilterQuery, () => utcDate(clock()));
      const type = layerContentType(layer);
      const rows = await timedStep(request, 'catalogue', () => layerExtents(catalogue, { type, ...filter }));
      const links = gisLinksFor(request, publicUrl);
      cacheFor(reply, links);
      return tileJson(links, layer, filter.written, extentOf(rows, true));
    });
  }
  for (const [path, schema] of [
    [SURVEY_TILEJSON_PATH, surveyTileJsonRouteSchema],
    [SURVEY_HEIGHT_TILEJSON_PATH, surveyHeightTileJsonRouteSchema],
  ] as const) {
    app.get(path, { schema, onRequest }, async (request, reply) => {
      const params = request.params as { surveyId: string; contentType?: TileType; style?: HeightStyle };
      const layer = layerOf(params);
      const type = layerContentType(layer);
      const survey = await timedStep(request, 'catalogue', () => catalogue.get(params.surveyId));
      if (!survey)
        throw new NadirError('SURVEY_NOT_FOUND', `No survey ${JSON.stringify(params.surveyId.slice(0, 80))}`);
      if (!survey.assets[type]) throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no ${type} tiles`);
      const links = gisLinksFor(request, publicUrl);
      cacheFor(reply, links);
      return tileJson(links, layer, {}, surveyExtent(survey, type), survey.id);
    });
  }
}
