import type { ServerOptions } from 'node:http';
import type { HttpTimeouts } from '../config/config.js';

/**
 * How nadir's node:http server reads requests (docs/http.md): node's own parser and its own
 * timeouts, set from the parsed config. The one place these options are made, so that the HTTP
 * conformance test (test/api/http-conformance.test.ts) builds its plain node:http reference
 * server from exactly the same ones.
 */
export function httpServerOptions(timeouts: HttpTimeouts): ServerOptions {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = timeouts;
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    // node looks for expired heads every 30 s by default, so a slow head could outlive a 60 s
    // headersTimeout by half a minute: look every second (a quarter of a shorter timeout).
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
  };
}
