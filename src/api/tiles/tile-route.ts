import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.js';
import { utcDate } from '../../geo/dates.js';
import type { DrawnTileAnswer, TileConditions } from '../../tiles/tile-headers.js';
import { parseTileQuery, type TilePath, type TileQuery, type TileQueryString } from '../../tiles/tile-query.js';
import { type HeaderPairs, TileFailure, type TileResponder, type Timing } from '../../tiles/tile-responder.js';
import { type ApiKeyVerifier, authenticate, callerOf, keyIsInUrl } from '../http/auth.js';
import { documentedPath } from '../http/openapi.js';
import { addServerTiming } from '../http/request-lifecycle.js';
import {
  LocationTileDocumentedParamsSchema,
  locationTileRouteSchema,
  SurveyTileDocumentedParamsSchema,
  surveyTileRouteSchema,
} from './tile-schema.js';

export const LOCATION_TILE_PATH = '/tiles/v3/:contentType/:z/:x/:file';
export const SURVEY_TILE_PATH = '/tiles/v3/surveys/:surveyId/:contentType/:z/:x/:file';

export interface TileRouteParts {
  keys: ApiKeyVerifier;
  tiles: TileResponder;
  clock: Clock;
}

/**
 * The path parameters of the tile route fastify's own router finds for `path`, if any: the one
 * matcher of tile URLs, for the lane (tile-lane.ts) as for the routes.
 */
export function tileRouter(app: FastifyInstance): (path: string) => TilePath | undefined {
  return (path) => {
    const params = app.findRoute({ method: 'GET', url: path })?.params as Partial<TilePath> | undefined;
    // Other routes under /tiles/v3/ (tilejson.json) name a contentType too, but no tile file.
    return params?.contentType === undefined || params.file === undefined ? undefined : (params as TilePath);
  };
}

export function setHeaders(reply: FastifyReply, headers: HeaderPairs): void {
  for (let i = 0; i < headers.length; i += 2) reply.header(headers[i] as string, headers[i + 1]);
}

/** What a tile request says of the caller's copy and its key, for the cores that draw tiles of their own. */
export function tileConditions(request: FastifyRequest): TileConditions {
  return {
    ifNoneMatch: request.headers['if-none-match'],
    keyInUrl: keyIsInUrl((request.query as { apikey?: string }).apikey),
  };
}

/** Sends a tile such a core drew (DsmChange, DetailDsm): its status, headers and PNG. */
export function sendDrawnTile(reply: FastifyReply, answer: DrawnTileAnswer): FastifyReply {
  setHeaders(reply, answer.headers);
  return reply.code(answer.status).send(answer.body);
}

function reportTimings(request: FastifyRequest, timings: Timing[]): void {
  for (const [name, milliseconds] of timings) addServerTiming(request, name, milliseconds);
}

/**
 * Before anything else (even parameter validation): who is asking, and is it within its rate
 * limit. So every tile answer but a 401 carries the X-RateLimit-* headers, and bad requests count.
 * An onRequest hook for every tile route.
 */
export function tileAdmission(
  keys: ApiKeyVerifier,
  tiles: Pick<TileResponder, 'admit'>,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    const caller = await authenticate(keys, request);
    try {
      setHeaders(reply, await tiles.admit(caller));
    } catch (error) {
      if (!(error instanceof TileFailure)) throw error;
      setHeaders(reply, error.headers);
      throw error.cause;
    }
  };
}

/** Admission and answer of one tile request, for every route that serves tiles of the tile core. */
export interface TileAnswerers {
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** The tile core's answer to `query`, asked by the admitted caller of `request`. */
  answer(request: FastifyRequest, reply: FastifyReply, query: TileQuery): Promise<FastifyReply>;
}

export function tileAnswerers({ keys, tiles }: Pick<TileRouteParts, 'keys' | 'tiles'>): TileAnswerers {
  const admit = tileAdmission(keys, tiles);

  async function answer(request: FastifyRequest, reply: FastifyReply, parsed: TileQuery): Promise<FastifyReply> {
    const query = request.query as TileQueryString;
    // Map clients cancel tiles while panning (closing the connection): such a tile is not drawn.
    const socket = request.raw.socket;
    try {
      const answer = await tiles.answer(callerOf(request), parsed, {
        ifNoneMatch: request.headers['if-none-match'],
        keyInUrl: keyIsInUrl(query.apikey),
        abandoned: () => socket.destroyed,
      });
      reportTimings(request, answer.timings);
      setHeaders(reply, answer.headers);
      if (answer.release) reply.raw.once('finish', answer.release);
      return reply.code(answer.status).send(answer.body);
    } catch (error) {
      if (!(error instanceof TileFailure)) throw error;
      reportTimings(request, error.timings);
      // Nobody is listening: nothing to answer, and not a server fault worth an error line.
      if (socket.destroyed) return reply.hijack();
      setHeaders(reply, error.headers);
      throw error.cause;
    }
  }

  return { admit, answer };
}

/**
 * The tile endpoints as fastify routes, adapters over the tile core (src/tiles/tile-responder.ts):
 * every case, every error, and the OpenAPI document. The common requests are answered by the tile
 * lane (tile-lane.ts) before fastify, over the same core.
 */
export function registerTileRoutes(app: FastifyInstance, { keys, tiles, clock }: TileRouteParts): void {
  const { admit, answer } = tileAnswerers({ keys, tiles });
  const handler = (request: FastifyRequest, reply: FastifyReply) =>
    answer(
      request,
      reply,
      parseTileQuery(request.params as TilePath, request.query as TileQueryString, () => utcDate(clock())),
    );
  const documented = (path: string, params: TSchema) => documentedPath(path.replace(':file', '{y}.{format}'), params);
  app.get(
    LOCATION_TILE_PATH,
    {
      schema: locationTileRouteSchema,
      config: documented(LOCATION_TILE_PATH, LocationTileDocumentedParamsSchema),
      onRequest: admit,
    },
    handler,
  );
  app.get(
    SURVEY_TILE_PATH,
    {
      schema: surveyTileRouteSchema,
      config: documented(SURVEY_TILE_PATH, SurveyTileDocumentedParamsSchema),
      onRequest: admit,
    },
    handler,
  );
}
