import { createServer } from 'node:http';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Services } from '../composition.js';
import { registerCoverageRoute } from './coverage/coverage-route.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './error-handling.js';
import { registerImageryRoute } from './imagery/imagery-route.js';
import { type LogDestination, loggerOptions } from './log-safety.js';
import { readDemoApiKey, registerMapPage } from './map-page/map-page-route.js';
import { registerOpenApiGenerator, registerOpenApiRoutes } from './openapi.js';
import { normaliseQuery } from './query-params.js';
import { installRequestLifecycle, requestIdFor } from './request-lifecycle.js';
import { registerSystemRoutes, type ServerState } from './system-routes.js';
import { SocketLane } from './tiles/socket-lane.js';
import { TileLane } from './tiles/tile-lane.js';
import { registerTileRoutes } from './tiles/tile-route.js';

export interface BuildServerOptions {
  /** Where log lines go (default stdout); tests pass a collector to inspect them. */
  logStream?: LogDestination;
}

/**
 * The HTTP server, built from Services only (no module state), so tests can run several
 * side by side. Routes stay thin: they parse, call a service, and shape the answer.
 */
export async function buildServer(services: Services, options: BuildServerOptions = {}): Promise<FastifyInstance> {
  const state: ServerState = { draining: false };
  const now = services.clock;
  const lane = new TileLane(services, now, state);
  let socketLane: SocketLane | undefined;
  const app = Fastify({
    // Tile requests meet the fast lanes before fastify (tile-lane.ts and socket-lane.ts say why);
    // the server is otherwise the one fastify would make itself.
    serverFactory: (handler, settings) => {
      const server = createServer(lane.handler(handler));
      server.keepAliveTimeout = settings.keepAliveTimeout as number;
      server.requestTimeout = settings.requestTimeout as number;
      server.setTimeout(settings.connectionTimeout as number);
      socketLane = SocketLane.install(server, (head) => lane.answerFromSocket(head));
      return server;
    },
    logger: loggerOptions(services.config.logLevel, options.logStream),
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
    clientErrorHandler: answerClientError,
    // Every endpoint is GET without a body.
    bodyLimit: 1024,
  });
  lane.log = app.log;
  app.addHook('preClose', async () => {
    state.draining = true;
    // node:http closes its idle connections itself; those still with the socket lane are closed here.
    socketLane?.closeIdle();
  });
  // A request in flight when shutdown begins must not leave its keep-alive connection open
  // after it is answered: close() would then wait for the client's idle timeout.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (state.draining) reply.header('connection', 'close');
    return payload;
  });

  installRequestLifecycle(app);
  installErrorHandling(app);
  // Every route's query string: duplicates refused, numbers parsed strictly (query-params.ts).
  app.addHook('preValidation', async (request) => normaliseQuery(request));
  await registerOpenApiGenerator(app, services.config.publicUrl);
  registerSystemRoutes(app, services, state);
  registerCoverageRoute(app, services, now);
  registerImageryRoute(app, services, now);
  registerTileRoutes(app, services, now);
  await registerMapPage(app, { demoApiKey: await readDemoApiKey(services.config.dataDir) });
  await registerOpenApiRoutes(app);
  return app;
}
