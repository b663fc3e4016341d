/**
 * The route template of a request (never its URL), for the metrics' `route` label and the trace's
 * `http.route`: marked on the response when the request comes in (a guess for what the lanes
 * before fastify take) and replaced by fastify's onRequest hook with the route it matched.
 */
import type { ServerResponse } from 'node:http';
import { COVERAGE_PATH } from '../api/coverage/coverage-route.js';
import { LOCATION_TILE_PATH, SURVEY_TILE_PATH } from '../api/tiles/tile-route.js';

const ROUTE = Symbol('nadir.route');

interface Routed extends ServerResponse {
  [ROUTE]?: string;
}

/** The label of requests no route matched (404s, node's own 400s): one series, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The lanes (tile-lane.ts, coverage-lane.ts) take only what these routes match; when fastify
 * answers instead, its hook names the route (setRoute).
 */
export function markLaneRoute(response: ServerResponse, url: string): void {
  let route: string | undefined;
  if (url.startsWith('/tiles/v3/'))
    route = url.startsWith('/tiles/v3/surveys/') ? SURVEY_TILE_PATH : LOCATION_TILE_PATH;
  else if (url.startsWith(COVERAGE_PATH)) route = COVERAGE_PATH;
  (response as Routed)[ROUTE] = route;
}

/** For fastify's routes: the matched route template (its onRequest hook calls this). */
export function setRoute(response: ServerResponse, route: string | undefined): void {
  (response as Routed)[ROUTE] = route ?? UNMATCHED_ROUTE;
}

export function routeOf(response: ServerResponse): string {
  return (response as Routed)[ROUTE] ?? UNMATCHED_ROUTE;
}
