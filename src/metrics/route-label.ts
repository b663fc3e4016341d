/**
 * The route template of a request (never its URL), for the metrics' `route` label and the trace's
 * `http.route`: a guess from the URL for what the lanes before fastify take, kept by the caller,
 * unless fastify's onRequest hook named the route it matched on the response. The guess is not
 * written onto the response: a property added to a ServerResponse before node writes it made
 * node's own work on every lane answer slower (about 2 us an answer, docs/operations.md).
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
export function laneRouteOf(url: string): string | undefined {
  if (url.startsWith('/tiles/v3/')) return url.startsWith('/tiles/v3/surveys/') ? SURVEY_TILE_PATH : LOCATION_TILE_PATH;
  if (url.startsWith(COVERAGE_PATH)) return COVERAGE_PATH;
  return undefined;
}

/** For fastify's routes: the matched route template (its onRequest hook calls this). */
export function setRoute(response: ServerResponse, route: string | undefined): void {
  (response as Routed)[ROUTE] = route ?? UNMATCHED_ROUTE;
}

/** fastify's route if it matched one, else the lanes' guess (`laneRouteOf` of the request's URL). */
export function routeOf(response: ServerResponse, laneRoute: string | undefined): string {
  return (response as Routed)[ROUTE] ?? laneRoute ?? UNMATCHED_ROUTE;
}
