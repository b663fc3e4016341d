import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import type { Clock } from '../../clock.js';
import { invalidParameter, NadirError } from '../../errors.js';
import { extentOf, layerExtents } from '../../gis/layer-extent.js';
import {
  CONFORMANCE_CLASSES,
  collectionsList,
  type ItemPage,
  itemCollection,
  landingPage,
  QUERYABLES_PATH,
  queryablesDocument,
  STAC_ROOT,
  surveyItem,
  surveysCollection,
} from '../../gis/stac.js';
import type { AoiDownload } from '../../gis/stac-aoi-assets.js';
import { SURVEYS_COLLECTION } from '../../gis/stac-order.js';
import { type StacSearch, searchSurveys } from '../../gis/stac-search.js';
import {
  parseStacSearch,
  parseStacSearchBody,
  REPEATED_PARAMETERS,
  refuseUndeclared,
  type StacSearchQueryString,
} from '../../gis/stac-search-parameters.js';
import type { TileResponder } from '../../tiles/tile-responder.js';
import { type TokenCodec, tokenArea } from '../../tokens/index.js';
import type { ApiKeyVerifier } from '../http/auth.js';
import { answerToFailure, sendFailure } from '../http/error-handling.js';
import { loggablePath } from '../http/log-safety.js';
import { OPENAPI_PATH } from '../http/openapi.js';
import { timedStep } from '../http/request-lifecycle.js';
import { tileAdmission } from '../tiles/tile-route.js';
import { cacheFor, gisLinksFor } from './gis-request.js';
import { STAC_SEARCH_PARAMETERS, type StacSearchQuerySchema, stacSchemas } from './stac-schema.js';

export interface StacRouteParts {
  keys: ApiKeyVerifier;
  /** The tile rate limit (tile-responder.ts), which these documents count against. */
  tiles: Pick<TileResponder, 'admit'>;
  catalogue: Pick<SurveyCatalogue, 'walk' | 'count' | 'get' | 'extents'>;
  /** A search's transaction token is read for its area (gis/stac-aoi-assets.ts). */
  tokens: Pick<TokenCodec, 'decode'>;
  clock: Clock;
  publicUrl: string | undefined;
}

const GEOJSON = 'application/geo+json';
/** A POST search's body: a long `intersects` polygon fits (the server's limit for other requests is 1 KB). */
const SEARCH_BODY_LIMIT = 256 * 1024;

/**
 * STAC API errors are `{code, description}` and nadir's `{error, code}` (decisions.md): both at
 * once, the same sentence twice, still made by the error table.
 */
function sendStacFailure(reply: FastifyReply, request: FastifyRequest, error: unknown): FastifyReply {
  const answer = answerToFailure(error, request.id, request.log);
  return sendFailure(reply, { ...answer, body: { ...answer.body, description: answer.body.error } });
}

/**
 * An error answered inside the STAC API without `description` (the server-wide 405 for a method
 * no route takes is answered before any STAC handler): added, the same sentence as `error`.
 */
function describeError(reply: FastifyReply, payload: unknown): unknown {
  if (reply.statusCode < 400 || typeof payload !== 'string' || !payload.startsWith('{')) return payload;
  try {
    const body = JSON.parse(payload) as Record<string, unknown>;
    if (typeof body.error !== 'string' || body.description !== undefined) return payload;
    return JSON.stringify({ ...body, description: body.error });
  } catch {
    return payload;
  }
}

function requireSurveysCollection(collectionId: string): void {
  if (collectionId !== SURVEYS_COLLECTION) {
    throw new NadirError(
      'NOT_FOUND',
      `No collection ${JSON.stringify(collectionId.slice(0, 80))}: the one collection is surveys`,
    );
  }
}

/**
 * The STAC API at /stac/v1/: core, collections, features and item search (GET) with the sort,
 * fields and filter extensions, and the queryables. One collection,
 * `surveys`, with an item per survey (docs/gis.md says why one). Any valid key may read it, as for
 * tiles: it shows what tiles show, and rasters still need the coverage call's token.
 */
export async function registerStacRoutes(
  app: FastifyInstance,
  { keys, tiles, catalogue, tokens, clock, publicUrl }: StacRouteParts,
): Promise<void> {
  /** The token's area downloads, when the request carries one (a text, from the query or a POST body). */
  const downloadOf = (token: unknown): AoiDownload | undefined => {
    if (token === undefined) return undefined;
    if (typeof token !== 'string') throw invalidParameter('transactionToken', 'transactionToken is a text');
    return { token, aoi: tokenArea(tokens, token, clock()) };
  };
  await app.register(
    async (stac) => {
      stac.setErrorHandler((error, request, reply) => sendStacFailure(reply, request, error));
      stac.addHook('onSend', async (_request, reply, payload) => describeError(reply, payload));
      stac.setNotFoundHandler((request, reply) =>
        sendStacFailure(
          reply,
          request,
          new NadirError(
            'NOT_FOUND',
            `No STAC endpoint ${loggablePath(request.url.split('?', 1)[0] ?? '').slice(0, 200)}`,
          ),
        ),
      );
      // Counted against the key's tile rate like a tile: STAC clients page as fast as maps fetch tiles.
      stac.addHook('onRequest', tileAdmission(keys, tiles));

      const links = (request: FastifyRequest, reply: FastifyReply) => {
        const found = gisLinksFor(request, publicUrl);
        cacheFor(reply, found);
        return found;
      };
      const collection = async (request: FastifyRequest, reply: FastifyReply) => {
        const rows = await timedStep(request, 'catalogue', () => layerExtents(catalogue, {}, true));
        const tags = rows.map((row) => row.tag).filter((tag) => tag !== '');
        const extent = extentOf(
          rows.filter((row) => row.tag === ''),
          false,
        );
        return surveysCollection(links(request, reply), extent, tags);
      };

      const landing = async (request: FastifyRequest, reply: FastifyReply) =>
        landingPage(links(request, reply), OPENAPI_PATH);
      // Under the prefix, '/' is both /stac/v1 and /stac/v1/ (fastify's prefixTrailingSlash).
      stac.get('/', { schema: stacSchemas.landing }, landing);
      stac.get('/conformance', { schema: stacSchemas.conformance }, async () => ({ conformsTo: CONFORMANCE_CLASSES }));
      stac.get('/collections', { schema: stacSchemas.collections }, async (request, reply) =>
        collectionsList(links(request, reply), await collection(request, reply)),
      );
      stac.get('/collections/:collectionId', { schema: stacSchemas.collection }, async (request, reply) => {
        requireSurveysCollection((request.params as { collectionId: string }).collectionId);
        return collection(request, reply);
      });
      stac.get('/collections/:collectionId/items/:itemId', { schema: stacSchemas.item }, async (request, reply) => {
        const { collectionId, itemId } = request.params as { collectionId: string; itemId: string };
        requireSurveysCollection(collectionId);
        const survey = await timedStep(request, 'catalogue', () => catalogue.get(itemId));
        if (!survey) throw new NadirError('NOT_FOUND', `No item ${JSON.stringify(itemId.slice(0, 80))} in surveys`);
        const download = downloadOf((request.query as { transactionToken?: string }).transactionToken);
        reply.type(GEOJSON);
        return surveyItem(links(request, reply), survey, download);
      });

      /** A search made and answered as a page of items; `page` says how its links repeat it. */
      const answer = async (
        request: FastifyRequest,
        reply: FastifyReply,
        parsed: StacSearch,
        page: Pick<ItemPage, 'path' | 'query' | 'self' | 'body' | 'download'>,
      ) => {
        const found = await timedStep(request, 'catalogue', () => searchSurveys(catalogue, parsed));
        reply.type(GEOJSON);
        return itemCollection(links(request, reply), { ...found, limit: parsed.limit, fields: parsed.fields, ...page });
      };
      const search = async (request: FastifyRequest, reply: FastifyReply, path: string, collections?: string) => {
        // OGC API Features core: a parameter the search does not declare is refused, not ignored.
        refuseUndeclared(request.query as Record<string, unknown>, STAC_SEARCH_PARAMETERS);
        // The schema's own type: a parameter it declares with another type than the core reads fails to compile.
        const query: StacSearchQueryString = request.query as Static<typeof StacSearchQuerySchema>;
        const parsed = parseStacSearch(collections ? { ...query, collections } : query);
        // The next page asks the same: the search's own parameters (not the key).
        const repeated = Object.fromEntries(REPEATED_PARAMETERS.map((name) => [name, query[name]]));
        return answer(request, reply, parsed, {
          path,
          query: repeated,
          self: { offset: query.offset, token: query.token },
          download: downloadOf(query.transactionToken),
        });
      };
      stac.get('/search', { schema: stacSchemas.search }, (request, reply) =>
        search(request, reply, `${STAC_ROOT}/search`),
      );
      // The same search with its parameters in a JSON body (STAC API item search, POST). The key
      // stays in the query or the Authorization header; the body may hold a long intersects.
      stac.post('/search', { schema: stacSchemas.searchPost, bodyLimit: SEARCH_BODY_LIMIT }, async (request, reply) => {
        refuseUndeclared(request.query as Record<string, unknown>, ['apikey']);
        const body = request.body as Record<string, unknown>;
        const parsed = parseStacSearchBody(body);
        const download = downloadOf(body.transactionToken);
        return answer(request, reply, parsed, { path: `${STAC_ROOT}/search`, query: {}, self: {}, body, download });
      });
      stac.get('/collections/:collectionId/items', { schema: stacSchemas.items }, (request, reply) => {
        const { collectionId } = request.params as { collectionId: string };
        requireSurveysCollection(collectionId);
        return search(request, reply, `${STAC_ROOT}/collections/${SURVEYS_COLLECTION}/items`, SURVEYS_COLLECTION);
      });
    },
    { prefix: STAC_ROOT },
  );
  // The queryables describe the API, as /openapi.json does: no key, no rate, the same for everyone.
  app.get(QUERYABLES_PATH, { schema: stacSchemas.queryables }, async (request, reply) => {
    const { base } = gisLinksFor(request, publicUrl);
    reply.header('cache-control', 'public, max-age=3600').type('application/schema+json');
    return queryablesDocument(base);
  });
}
