import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LruCache } from '../../cache/lru.js';
import { type SurveyCatalogue, tagMatches } from '../../catalogue/catalogue.js';
import type { ContentType } from '../../catalogue/survey.js';
import type { Clock } from '../../clock.js';
import { invalidParameter, isNadirError } from '../../errors.js';
import { isIsoDate, utcDate } from '../../geo/dates.js';
import { TILE_SIZE } from '../../geo/web-mercator.js';
import { extentOf, extentsByLayer, layerExtents } from '../../gis/layer-extent.js';
import { type LayerFilterQuery, type ParsedLayerFilter, parseLayerFilter } from '../../gis/layer-filter.js';
import { EXCEPTION_REPORT_TYPE, exceptionReport, owsError, owsExceptionOf } from '../../gis/ows-exception.js';
import {
  CAPABILITIES_PATH,
  CURRENT,
  PRODUCT_LAYERS,
  STYLE,
  TILE_MATRIX_SET,
  tagLayer,
  WMTS_ROOT,
  WMTS_TYPE,
  type WmtsLayer,
  wmtsCapabilities,
  wmtsLayerOf,
} from '../../gis/wmts.js';
import type { HeightTiles } from '../../height-tiles/height-tiles.js';
import { encodeTile } from '../../tiles/encode.js';
import type { TileFormat } from '../../tiles/tile-renderer.js';
import type { TileResponder } from '../../tiles/tile-responder.js';
import { type ApiKeyVerifier, callerOf } from '../http/auth.js';
import { answerToFailure, sendFailure } from '../http/error-handling.js';
import { timedStep } from '../http/request-lifecycle.js';
import { sendDrawnTile, tileAnswerers, tileConditions } from '../tiles/tile-route.js';
import { cacheFor, gisLinksFor } from './gis-request.js';
import {
  checkService,
  isOgcRequest,
  type OgcTileRequest,
  ogcParameters,
  ogcTileQuery,
  parseKvp,
  type WmtsTileTarget,
  wmtsTileTarget,
} from './wmts-kvp.js';
import { wmtsCapabilitiesRouteSchema, wmtsTileRouteSchema } from './wmts-schema.js';

/** The ResourceURL template's path (wmts.ts), as a route. */
export const WMTS_TILE_PATH = `${WMTS_ROOT}/:layer/${STYLE}/:time/${TILE_MATRIX_SET}/:z/:row/:file`;

export interface WmtsRouteParts {
  keys: ApiKeyVerifier;
  catalogue: Pick<SurveyCatalogue, 'extents' | 'changeMarker'>;
  tiles: TileResponder;
  /** The DetailDsm layers' tiles. */
  heightTiles: Pick<HeightTiles, 'answer'>;
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
 * A RESTful WMTS path without `SERVICE=WMTS` (the URLs issue 21 documented) read as the location
 * tile it is: the path's TileMatrix/TileRow/TileCol as z/y/x, the layer's tag as `include`, Time as
 * the last capture date (any date). Then the tile core answers it exactly as it answers
 * /tiles/v3/Vert/{z}/{x}/{y}, errors and 404 included (no tile logic here). OGC requests are
 * read by wmts-kvp.ts `ogcTileQuery`.
 */
export function wmtsTileQuery(params: WmtsTileParams, query: LayerFilterQuery, today: () => string): WmtsTileTarget {
  const found = wmtsLayerOf(params.layer);
  if (found === null)
    throw invalidParameter(
      'layer',
      `layer must be ${WMTS_TYPE}, ${WMTS_TYPE}:<tag> or a product layer, got ${JSON.stringify(params.layer.slice(0, 40))}`,
    );
  const { layer, tag } = found;
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
  const address = { z: params.z, x: col, file: `${params.row}${extension}` };
  return wmtsTileTarget(layer, address, { ...query, include: tag ?? query.include }, params.time, today);
}

/** What the capabilities list of one layer under one filter (wmts.ts): whether it is there, and its dates. */
interface Listing {
  marker: string;
  listed: boolean;
  dates: ReadonlySet<string>;
}

/**
 * The layers and Time values the capabilities list, worked out as the capabilities route does
 * (the same catalogue reads, the same tag rules), kept until the catalogue changes: an OGC tile
 * request of a tag layer or a date asks for them, a map of them for every tile.
 */
class WmtsListings {
  readonly #catalogue: Pick<SurveyCatalogue, 'extents' | 'changeMarker'>;
  readonly #cache = new LruCache<Listing>({ maxEntries: 4096 });

  constructor(catalogue: Pick<SurveyCatalogue, 'extents' | 'changeMarker'>) {
    this.#catalogue = catalogue;
  }

  /** `type`: what the layer draws; `tag`: the layer's (undefined for all); `filter`: the request's own, resolved. */
  async of(type: ContentType, tag: string | undefined, filter: ParsedLayerFilter): Promise<Listing> {
    const marker = this.#catalogue.changeMarker();
    const { since, until, tags } = filter;
    const key = JSON.stringify([type, tag ?? '', since, until, tags?.include, tags?.exclude]);
    const known = this.#cache.get(key);
    if (known?.marker === marker) return known;
    const rows = await layerExtents(this.#catalogue, {
      type,
      since,
      until,
      tags: tag === undefined ? tags : { include: [tag] },
    });
    // A tag layer is listed when surveys of the filter have its tag and exclude does not empty it.
    const excluded = tags?.exclude ?? [];
    const listed = tag === undefined || (rows.length > 0 && !excluded.some((pattern) => tagMatches(tag, pattern)));
    const listing = { marker, listed, dates: new Set(extentOf(rows, true).captureDates) };
    this.#cache.set(key, listing);
    return listing;
  }
}

/**
 * The answer to an OGC request for a tile with no imagery (decided in issue 34): a picture of
 * nothing, 200, rather than the tile API's 404. GDAL's WMS driver reads a 404 (or 204) as an empty
 * block but prints `ERROR 1: GDALWMS: Unable to open downloaded block.` for it all the same (it
 * looks in its cache first, frmts/wms/gdalwmsrasterband.cpp), whatever the headers. PNG (and
 * `img`): fully transparent. JPEG cannot say "nothing": black, as the tile
 * core's JPEG shows every pixel it has no imagery for. Encoded once, by the tile encoder.
 */
const emptyTiles = new Map<'png' | 'jpeg', Promise<Buffer>>();
function emptyTile(format: TileFormat): { type: string; body: Promise<Buffer> } {
  const encoded = format === 'jpg' ? 'jpeg' : 'png';
  let body = emptyTiles.get(encoded);
  if (body === undefined) {
    body = encodeTile(new Uint8Array(TILE_SIZE * TILE_SIZE * 4), false, encoded, 0).then((bytes) => Buffer.from(bytes));
    emptyTiles.set(encoded, body);
  }
  return { type: encoded === 'jpeg' ? 'image/jpeg' : 'image/png', body };
}

/** The survey filter of a request (its declared parameters). */
function filterOf(query: unknown): LayerFilterQuery {
  const { since, until, include, exclude } = query as LayerFilterQuery;
  return { since, until, include, exclude };
}

/**
 * The WMTS routes' error handler: an OGC request (it names SERVICE or REQUEST, as KVP requests
 * and the ResourceURLs do) gets an OWS ExceptionReport, with the standard's status for its code
 * and the API's for the rest (401 for a bad key, 429...), and the headers the error table gives
 * (Retry-After); any other request, the API's JSON error (decisions.md), as before issue 34.
 */
function answerWmtsFailure(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answer = answerToFailure(error, request.id, request.log);
  if (!isOgcRequest(request.query)) return sendFailure(reply, answer);
  const exception = owsExceptionOf(answer.status, answer.body);
  return reply
    .code(exception.status)
    .headers(answer.headers)
    .type(EXCEPTION_REPORT_TYPE)
    .send(exceptionReport(exception));
}

/** GET /wmts/1.0.0/WMTSCapabilities.xml (KVP too) and the tiles its ResourceURLs name. */
export function registerWmtsRoutes(
  app: FastifyInstance,
  { keys, catalogue, tiles, heightTiles, clock, publicUrl }: WmtsRouteParts,
): void {
  const today = () => utcDate(clock());
  const { admit, answer } = tileAnswerers({ keys, tiles });
  const listings = new WmtsListings(catalogue);

  /**
   * An OGC tile request (KVP GetTile, or a ResourceURL): refused unless its layer and Time are
   * ones the capabilities list; then the tile core's answer, exactly as for the tile endpoint
   * (rate limit, usage count, ETag), but for a tile with no imagery (emptyTile).
   */
  async function answerOgcTile(request: FastifyRequest, reply: FastifyReply, tile: OgcTileRequest) {
    const filter = filterOf(request.query);
    const { target, type, tag, date } = ogcTileQuery(tile, filter, today);
    if (tag !== undefined || date !== undefined) {
      const listing = await timedStep(request, 'listing', () =>
        listings.of(type, tag, parseLayerFilter(filter, today)),
      );
      if (!listing.listed) {
        throw owsError('InvalidParameterValue', 'LAYER', `No layer ${JSON.stringify(tile.layer)} with these filters`);
      }
      if (date !== undefined && !listing.dates.has(date)) {
        throw owsError(
          'InvalidParameterValue',
          'TIME',
          `TIME ${date} is not a capture date of layer ${tile.layer}: the capabilities list its values`,
        );
      }
    }
    try {
      return await answerTarget(request, reply, target);
    } catch (error) {
      if (!isNadirError(error) || error.code !== 'NO_IMAGERY') throw error;
      // The tile core set the empty tile's Cache-Control (and the rate limit's headers) already.
      const empty = emptyTile(target.kind === 'imagery' ? target.query.format : 'png');
      return reply
        .code(200)
        .type(empty.type)
        .send(await empty.body);
    }
  }

  /** The answer of the core that draws the layer. */
  async function answerTarget(request: FastifyRequest, reply: FastifyReply, target: WmtsTileTarget) {
    if (target.kind === 'imagery') return answer(request, reply, target.query);
    return sendDrawnTile(reply, await heightTiles.answer(callerOf(request), target.query, tileConditions(request)));
  }

  app.get(
    CAPABILITIES_PATH,
    // Counted against the key's tile rate like a tile: a client asks for it as often.
    { schema: wmtsCapabilitiesRouteSchema, onRequest: admit, errorHandler: answerWmtsFailure },
    async (request: FastifyRequest, reply: FastifyReply) => {
      // KVP (07-057r7 7.1.1.2, 7.2.2.1) at the document's own URL; without REQUEST, the document.
      if (isOgcRequest(request.query)) {
        const kvp = parseKvp(ogcParameters(request.query as Record<string, unknown>));
        if (kvp?.request === 'GetTile') return answerOgcTile(request, reply, kvp.tile);
      }
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
      // The product layers that have surveys under the filter: one catalogue read each, of the groups.
      const products = await timedStep(request, 'catalogue', () =>
        Promise.all(
          PRODUCT_LAYERS.map(async (product) => {
            const extent = extentOf(await layerExtents(catalogue, { type: product.layer.type, ...filter }), true);
            return {
              identifier: product.identifier,
              title: product.title,
              extent,
              pngOnly: product.layer.style !== undefined,
            };
          }),
        ),
      );
      // Each layer's extent is worked out as the document reaches it, between its pauses.
      function* layers(): Generator<WmtsLayer> {
        yield { identifier: WMTS_TYPE, title: 'Vertical imagery', extent: extentOf(base, true) };
        for (const product of products) if (product.extent.bounds !== undefined) yield product;
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

  app.get(
    WMTS_TILE_PATH,
    { schema: wmtsTileRouteSchema, onRequest: admit, errorHandler: answerWmtsFailure },
    (request, reply) => {
      const params = request.params as WmtsTileParams;
      // Without SERVICE=WMTS: the RESTful URLs of issue 21, answered as the tile API answers.
      if (!isOgcRequest(request.query)) {
        return answerTarget(request, reply, wmtsTileQuery(params, request.query as LayerFilterQuery, today));
      }
      checkService(ogcParameters(request.query as Record<string, unknown>));
      const dot = params.file.lastIndexOf('.');
      const extension = dot < 0 ? '' : params.file.slice(dot + 1);
      if (extension !== 'png' && extension !== 'jpg' && extension !== 'img') {
        throw owsError(
          'InvalidParameterValue',
          'FORMAT',
          `The file must be {TileCol}.png, .jpg or .img, got ${JSON.stringify(params.file)}`,
        );
      }
      return answerOgcTile(request, reply, {
        layer: params.layer,
        time: params.time,
        tileMatrix: params.z,
        row: params.row,
        col: params.file.slice(0, dot),
        format: extension,
      });
    },
  );
}
