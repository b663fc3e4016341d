import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { AccountStore } from '../accounts/index.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { ChangeTiles } from '../change/change-tiles.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { CoverageAnswers } from '../coverage/coverage-answers.js';
import type { HeightTiles } from '../height-tiles/height-tiles.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { HttpMetrics } from '../metrics/http-metrics.js';
import type { NadirMetrics } from '../metrics/nadir-metrics.js';
import { setRoute } from '../metrics/route-label.js';
import type { RasterEngine } from '../raster/index.js';
import type { SurveyStorage } from '../storage/storage.js';
import type { TileResponder } from '../tiles/tile-responder.js';
import type { TokenCodec } from '../tokens/index.js';
import type { Tracing } from '../tracing/tracing.js';
import { registerChangeRoute } from './change/change-route.js';
import { registerChangeTileRoute } from './change/change-tile-route.js';
import { CoverageLane } from './coverage/coverage-lane.js';
import { COVERAGE_PATH, registerCoverageRoute } from './coverage/coverage-route.js';
import { CoverageQuerySchema } from './coverage/coverage-schema.js';
import { registerStacRoutes } from './gis/stac-route.js';
import { registerTileJsonRoute } from './gis/tilejson-route.js';
import { registerWmtsRoutes } from './gis/wmts-route.js';
import { installAuthentication } from './http/auth.js';
import { answerFrameworkError, installErrorHandling } from './http/error-handling.js';
import { createHttpServer } from './http/http-server.js';
import { registerOpenApiGenerator, registerOpenApiRoutes } from './http/openapi.js';
import { normaliseQuery, refuseUnstorable } from './http/query-params.js';
import { installRequestLifecycle, requestIdFor } from './http/request-lifecycle.js';
import { MAX_PATH_SEGMENT } from './http/schemas.js';
import type { ServerState } from './http/server-state.js';
import { registerImageryRoute } from './imagery/imagery-route.js';
import { readDemoApiKey, registerMapPage } from './map-page/map-page-route.js';
import { registerSystemRoutes } from './system/system-routes.js';
import { registerHeightTileRoutes } from './tiles/height-tile-route.js';
import { TileLane } from './tiles/tile-lane.js';
import { registerTileRoutes, tileRouter } from './tiles/tile-route.js';

/** What the HTTP layer is built from: the composition root's services, of which it uses these. */
export interface ServerParts {
  config: Pick<Config, 'publicUrl' | 'dataDir' | 'http' | 'mapBasemap'>;
  clock: Clock;
  /** The process's logger (composition.ts); the server logs through it. */
  log: FastifyBaseLogger;
  accounts: AccountStore;
  catalogue: SurveyCatalogue;
  tokens: TokenCodec;
  /** The coverage core: coverage requests' pages (src/coverage/). */
  coverage: CoverageAnswers;
  raster: RasterEngine;
  tiles: TileResponder;
  changeTiles: ChangeTiles;
  heightTiles: HeightTiles;
  rateLimiter: Pick<RateLimiter, 'ping'>;
  /** For /ready: whether the survey files answer. */
  storage: Pick<SurveyStorage, 'ping'>;
  /** When given, every answer (the lanes' too) is counted and timed by route and status. */
  metrics?: Pick<NadirMetrics, 'httpRequests' | 'httpDuration'>;
  /** When given, a span per request (its log lines then carry the trace id). */
  tracing?: Pick<Tracing, 'handler'>;
}

/**
 * The HTTP server (no module state, so tests can run several side by side). Each route is given
 * the few parts it uses, here and nowhere else; routes stay thin: they parse, call a core, and
 * shape the answer.
 */
export async function buildServer(parts: ServerParts): Promise<FastifyInstance> {
  const {
    config,
    clock,
    accounts,
    catalogue,
    tokens,
    coverage,
    raster,
    tiles,
    changeTiles,
    heightTiles,
    rateLimiter,
    storage,
  } = parts;
  const state: ServerState = { draining: false };
  const lane = new TileLane({ keys: accounts, tiles, clock, state });
  const coverageLane = new CoverageLane({ keys: accounts, answers: coverage, tokens, clock, state });
  const httpMetrics = parts.metrics && new HttpMetrics(parts.metrics);
  const app = Fastify({
    // Tile and coverage requests meet their lanes before fastify (tile-lane.ts, coverage-lane.ts
    // say why), on a node:http server with nadir's timeouts that ends connections where node
    // would (http-server.ts).
    serverFactory: (handler) => {
      let entrance = lane.handler(coverageLane.handler(handler));
      if (httpMetrics) entrance = httpMetrics.handler(entrance);
      if (parts.tracing) entrance = parts.tracing.handler(entrance);
      return createHttpServer(config.http, entrance);
    },
    loggerInstance: parts.log,
    // One redacted access-log line per request comes from our onResponse hook instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    requestIdHeader: false,
    genReqId: requestIdFor,
    // During shutdown, requests that still arrive on open keep-alive connections are served
    // (with `Connection: close`) rather than answered with fastify's own 503 body.
    return503OnClosing: false,
    // Numbers are converted strictly by query-params.ts; ajv's coercion is looser than the API.
    ajv: { customOptions: { coerceTypes: false, verbose: true } },
    frameworkErrors: answerFrameworkError,
    // Requests node's parser rejects and heads that time out are answered by the server's own
    // clientError listener (http-server.ts), after the answers before them.
    clientErrorHandler: () => undefined,
    // Every endpoint is GET without a body.
    bodyLimit: 1024,
    routerOptions: { maxParamLength: MAX_PATH_SEGMENT },
  });
  lane.log = app.log;
  coverageLane.log = app.log;
  lane.router = tileRouter(app);
  // fastify's validator compiler exists once it is ready: the lane then checks coverage queries
  // with the route's own compiled schema.
  app.addHook('onReady', async () => {
    coverageLane.checkQuery = app.validatorCompiler?.({
      schema: CoverageQuerySchema,
      method: 'GET',
      url: COVERAGE_PATH,
      httpPart: 'querystring',
    }) as (query: unknown) => boolean;
  });
  app.addHook('preClose', async () => {
    state.draining = true;
  });
  // A request in flight when shutdown begins must not leave its keep-alive connection open
  // after it is answered: close() would then wait for the client's idle timeout.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (state.draining) reply.header('connection', 'close');
    return payload;
  });

  installRequestLifecycle(app);
  // The route template fastify matched, for the metrics' route label and the span (never the URL).
  if (httpMetrics || parts.tracing) {
    app.addHook('onRequest', (request, reply, done) => {
      setRoute(reply.raw, request.routeOptions.url);
      done();
    });
  }
  installErrorHandling(app);
  installAuthentication(app);
  // Every route's query string: duplicates refused, numbers parsed strictly (query-params.ts).
  app.addHook('preValidation', async (request) => normaliseQuery(request));
  // Text no store can hold (a NUL, a lone surrogate) is a 400 before any handler runs.
  app.addHook('preHandler', async (request) => refuseUnstorable(request));
  await registerOpenApiGenerator(app, config.publicUrl);
  registerSystemRoutes(app, { catalogue, accounts, rateLimiter, storage, dataDir: config.dataDir, state });
  registerCoverageRoute(app, { keys: accounts, answers: coverage, tokens, clock });
  registerImageryRoute(app, { tokens, accounts, catalogue, raster, clock });
  registerChangeRoute(app, { tokens, accounts, catalogue, raster, clock });
  registerTileRoutes(app, { keys: accounts, tiles, clock });
  registerChangeTileRoute(app, { keys: accounts, tiles, changeTiles, clock });
  registerHeightTileRoutes(app, { keys: accounts, tiles, heightTiles, clock });
  const { publicUrl } = config;
  await registerStacRoutes(app, { keys: accounts, tiles, catalogue, tokens, clock, publicUrl });
  registerTileJsonRoute(app, { keys: accounts, tiles, catalogue, clock, publicUrl });
  registerWmtsRoutes(app, { keys: accounts, catalogue, tiles, heightTiles, clock, publicUrl });
  await registerMapPage(app, { demoApiKey: await readDemoApiKey(config.dataDir), basemap: config.mapBasemap });
  await registerOpenApiRoutes(app);
  return app;
}
