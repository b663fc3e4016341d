import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type SurveyCatalogue, tagMatches } from '../../catalogue/catalogue.js';
import type { Clock } from '../../clock.js';
import { invalidParameter } from '../../errors.js';
import { isIsoDate, utcDate } from '../../geo/dates.js';
import { extentOf, extentsByLayer, layerExtents } from '../../gis/layer-extent.js';
import { type LayerFilterQuery, parseLayerFilter } from '../../gis/layer-filter.js';
import {
  CAPABILITIES_PATH,
  CURRENT,
  layerTag,
  STYLE,
  TILE_MATRIX_SET,
  tagLayer,
  WMTS_ROOT,
  WMTS_TYPE,
  type WmtsLayer,
  wmtsCapabilities,
} from '../../gis/wmts.js';
import { parseTileQuery, type TileQuery } from '../../tiles/tile-query.js';
import type { TileResponder } from '../../tiles/tile-responder.js';
import type { ApiKeyVerifier } from '../http/auth.js';
import { timedStep } from '../http/request-lifecycle.js';
import { tileAnswerers } from '../tiles/tile-route.js';
import { cacheFor, gisLinksFor } from './gis-request.js';
import { wmtsCapabilitiesRouteSchema, wmtsTileRouteSchema } from './wmts-schema.js';

/** The ResourceURL template's path (wmts.ts), as a route. */
export const WMTS_TILE_PATH = `${WMTS_ROOT}/:layer/${STYLE}/:time/${TILE_MATRIX_SET}/:z/:row/:file`;

export interface WmtsRouteParts {
  keys: ApiKeyVerifier;
  catalogue: Pick<SurveyCatalogue, 'extents'>;
  tiles: TileResponder;
  clock: Clock;
  publicUrl: string | undefined;
}

interface WmtsTileParams {
  layer: string;
  time: string;
  z: string;
  row: string;
  file: string;
}

/**
 * A WMTS tile request read as the location tile it is: the path's TileMatrix/TileRow/TileCol as
 * z/y/x, the layer's tag as `include`, Time as the last capture date. Then the tile core answers
 * it exactly as it answers /tiles/v3/Vert/{z}/{x}/{y} (no tile logic here).
 */
export function wmtsTileQuery(params: WmtsTileParams, query: LayerFilterQuery, today: () => string): TileQuery {
  const tag = layerTag(params.layer);
  if (tag === null)
    throw invalidParameter(
      'layer',
      `layer must be ${WMTS_TYPE} or ${WMTS_TYPE}:<tag>, got ${JSON.stringify(params.layer.slice(0, 40))}`,
    );
  if (tag !== undefined && query.include !== undefined) {
    throw invalidParameter('include', 'a tag layer already includes its tag: give include with the Vert layer instead');
  }
  if (params.time !== CURRENT && !isIsoDate(params.time)) {
    throw invalidParameter(
      'Time',
      `Time must be ${CURRENT} or a date YYYY-MM-DD, got ${JSON.stringify(params.time.slice(0, 40))}`,
    );
  }
  const dot = params.file.lastIndexOf('.');
  const col = dot < 0 ? params.file : params.file.slice(0, dot);
  const extension = dot < 0 ? '' : params.file.slice(dot);
  const tileQuery = parseTileQuery(
    { contentType: WMTS_TYPE, z: params.z, x: col, file: `${params.row}${extension}` },
    { ...query, include: tag ?? query.include },
    today,
  );
  if (params.time !== CURRENT) {
    const until = tileQuery.filter.until;
    tileQuery.filter.until = until !== undefined && until < params.time ? until : params.time;
  }
  return tileQuery;
}

/** GET /wmts/1.0.0/WMTSCapabilities.xml and the tiles its ResourceURLs name. */
export function registerWmtsRoutes(
  app: FastifyInstance,
  { keys, catalogue, tiles, clock, publicUrl }: WmtsRouteParts,
): void {
  const today = () => utcDate(clock());
  const { admit, answer } = tileAnswerers({ keys, tiles });
  app.get(
    CAPABILITIES_PATH,
    // Counted against the key's tile rate like a tile: a client asks for it as often.
    { schema: wmtsCapabilitiesRouteSchema, onRequest: admit },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const filter = parseLayerFilter(request.query as LayerFilterQuery, today);
      // One read of the extents: every survey's and, unless the caller chose tags, each tag's.
      const tagged = filter.written.include === undefined;
      const rows = await timedStep(request, 'catalogue', () =>
        layerExtents(catalogue, { type: WMTS_TYPE, ...filter }, tagged),
      );
      const base = tagged ? rows.filter((row) => row.tag === '') : rows;
      // One layer per tag and tag type, but none that the caller's exclude empties.
      const excluded = filter.tags?.exclude ?? [];
      const byLayer = tagged
        ? [...extentsByLayer(rows)]
            .filter(([tag]) => !excluded.some((pattern) => tagMatches(tag, pattern)))
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        : [];
      // Each layer's extent is worked out as the document reaches it, between its pauses.
      function* layers(): Generator<WmtsLayer> {
        yield { identifier: WMTS_TYPE, title: 'Vertical imagery', extent: extentOf(base, true) };
        for (const [tag, ofTag] of byLayer) {
          yield { identifier: tagLayer(tag), title: `Vertical imagery tagged ${tag}`, extent: extentOf(ofTag, true) };
        }
      }
      const links = gisLinksFor(request, publicUrl);
      cacheFor(reply, links);
      const document = await wmtsCapabilities(links, layers(), filter.written, yieldToEventLoop);
      return reply.type('application/xml; charset=utf-8').send(document);
    },
  );

  app.get(WMTS_TILE_PATH, { schema: wmtsTileRouteSchema, onRequest: admit }, (request, reply) =>
    answer(request, reply, wmtsTileQuery(request.params as WmtsTileParams, request.query as LayerFilterQuery, today)),
  );
}
