import type { FastifyInstance } from 'fastify';
import {
  type ChangeTilePath,
  type ChangeTileQueryString,
  parseChangeTileQuery,
} from '../../change/change-tile-query.js';
import type { ChangeTiles } from '../../change/change-tiles.js';
import type { Clock } from '../../clock.js';
import { utcDate } from '../../geo/dates.js';
import type { TileResponder } from '../../tiles/tile-responder.js';
import { type ApiKeyVerifier, callerOf } from '../http/auth.js';
import { documentedPath } from '../http/openapi.js';
import { sendDrawnTile, tileAdmission, tileConditions } from '../tiles/tile-route.js';
import { ChangeTileDocumentedParamsSchema, changeTileRouteSchema } from './change-tile-schema.js';

/** A static path: fastify's router prefers it to `/tiles/v3/:contentType/...`, and the tile lane leaves it alone. */
export const CHANGE_TILE_PATH = '/tiles/v3/DsmChange/:z/:x/:file';

export interface ChangeTileRouteParts {
  keys: ApiKeyVerifier;
  /** Admission (key, rate limit) is every tile's. */
  tiles: Pick<TileResponder, 'admit'>;
  changeTiles: Pick<ChangeTiles, 'answer'>;
  clock: Clock;
}

/** GET /tiles/v3/DsmChange/{z}/{x}/{y}.png: a thin adapter over the change tile core (src/change/change-tiles.ts). */
export function registerChangeTileRoute(app: FastifyInstance, parts: ChangeTileRouteParts): void {
  const { keys, tiles, changeTiles, clock } = parts;
  app.get(
    CHANGE_TILE_PATH,
    {
      schema: changeTileRouteSchema,
      config: documentedPath('/tiles/v3/DsmChange/:z/:x/{y}.png', ChangeTileDocumentedParamsSchema),
      onRequest: tileAdmission(keys, tiles),
    },
    async (request, reply) => {
      const query = request.query as ChangeTileQueryString;
      const parsed = parseChangeTileQuery(request.params as ChangeTilePath, query, () => utcDate(clock()));
      return sendDrawnTile(reply, await changeTiles.answer(callerOf(request), parsed, tileConditions(request)));
    },
  );
}
