import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import { utcDate } from '../../geo/dates.js';
import {
  type HeightTilePath,
  type HeightTileQueryString,
  parseHeightTileQuery,
} from '../../height-tiles/height-tile-query.js';
import type { HeightTiles } from '../../height-tiles/height-tiles.js';
import type { TileResponder } from '../../tiles/tile-responder.js';
import { type ApiKeyVerifier, callerOf } from '../http/auth.js';
import { documentedPath } from '../http/openapi.js';
import {
  HeightTileDocumentedParamsSchema,
  heightTileRouteSchema,
  SurveyHeightTileDocumentedParamsSchema,
  surveyHeightTileRouteSchema,
} from './height-tile-schema.js';
import { sendDrawnTile, tileAdmission, tileConditions } from './tile-route.js';

/**
 * Static `DetailDsm` segments: fastify's router prefers them to the `:contentType` routes, and the
 * tile lane (which takes routes with a contentType) leaves them alone.
 */
export const HEIGHT_TILE_PATH = '/tiles/v3/DetailDsm/:style/:z/:x/:file';
export const SURVEY_HEIGHT_TILE_PATH = '/tiles/v3/surveys/:surveyId/DetailDsm/:style/:z/:x/:file';

export interface HeightTileRouteParts {
  keys: ApiKeyVerifier;
  /** Admission (key, rate limit) is every tile's. */
  tiles: Pick<TileResponder, 'admit'>;
  heightTiles: Pick<HeightTiles, 'answer'>;
  clock: Clock;
}

/** GET the DetailDsm tiles: thin adapters over the height tile core (src/height-tiles/). */
export function registerHeightTileRoutes(app: FastifyInstance, parts: HeightTileRouteParts): void {
  const { keys, tiles, heightTiles, clock } = parts;
  for (const [path, schema, documented] of [
    [HEIGHT_TILE_PATH, heightTileRouteSchema, HeightTileDocumentedParamsSchema],
    [SURVEY_HEIGHT_TILE_PATH, surveyHeightTileRouteSchema, SurveyHeightTileDocumentedParamsSchema],
  ] as const) {
    const config = documentedPath(path.replace(':file', '{y}.png'), documented);
    app.get(path, { schema, config, onRequest: tileAdmission(keys, tiles) }, async (request, reply) => {
      const query = request.query as HeightTileQueryString;
      const parsed = parseHeightTileQuery(request.params as HeightTilePath, query, () => utcDate(clock()));
      return sendDrawnTile(reply, await heightTiles.answer(callerOf(request), parsed, tileConditions(request)));
    });
  }
}
