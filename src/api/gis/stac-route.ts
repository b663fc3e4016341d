import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import { NadirError } from '../../errors.js';
import { extentOf, layerExtents } from '../../gis/layer-extent.js';
import {
  CONFORMANCE_CLASSES,
  collectionsList,
  itemCollection,
  landingPage,
  STAC_ROOT,
  surveyItem,
  surveysCollection,
} from '../../gis/stac.js';
import {
  parseStacSearch,
  type StacSearchQueryString,
  SURVEYS_COLLECTION,
  searchSurveys,
} from '../../gis/stac-search.js';
import type { TileResponder } from '../../tiles/tile-responder.js';
import type { ApiKeyVerifier } from '../http/auth.js';
import { answerToFailure, sendFailure } from '../http/error-handling.js';
import { loggablePath } from '../http/log-safety.js';
import { OPENAPI_PATH } from '../http/openapi.js';
import { timedStep } from '../http/request-lifecycle.js';
import { tileAdmission } from '../tiles/tile-route.js';
import { cacheFor, gisLinksFor } from './gis-request.js';
import { type StacSearchQuerySchema, stacSchemas } from './stac-schema.js';

export interface StacRouteParts {
  keys: ApiKeyVerifier;
  /** The tile rate limit (tile-responder.ts), which these documents count against. */
  tiles: Pick<TileResponder, 'admit'>;
  catalogue: Pick<SurveyCatalogue, 'walk' | 'count' | 'get' | 'extents'>;
  publicUrl: string | undefined;
}

const GEOJSON = 'application/geo+json';
const REPEATED = ['bbox', 'intersects', 'datetime', 'ids', 'collections'] as const;

/**
 * STAC API errors are `{code, description}` and nadir's `{error, code}` (decisions.md): both at
 * once, the same sentence twice, still made by the error table.
 */
function sendStacFailure(reply: FastifyReply, request: FastifyRequest, error: unknown): FastifyReply {
  const answer = answerToFailure(error, request.id, request.log);
  return sendFailure(reply, { ...answer, body: { ...answer.body, description: answer.body.error } });
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
 * The STAC API at /stac/v1/: core, collections, features and item search (GET). One collection,
 * `surveys`, with an item per survey (docs/gis.md says why one). Any valid key may read it, as for
 * tiles: it shows what tiles show, and rasters still need the coverage call's token.
 */
export async function registerStacRoutes(
  app: FastifyInstance,
  { keys, tiles, catalogue, publicUrl }: StacRouteParts,
): Promise<void> {
  await app.register(
    async (stac) => {
      stac.setErrorHandler((error, request, reply) => sendStacFailure(reply, request, error));
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
        reply.type(GEOJSON);
        return surveyItem(links(request, reply), survey);
      });

      const search = async (request: FastifyRequest, reply: FastifyReply, path: string, collections?: string) => {
        // The schema's own type: a parameter it declares with another type than the core reads fails to compile.
        const query: StacSearchQueryString = request.query as Static<typeof StacSearchQuerySchema>;
        const parsed = parseStacSearch(collections ? { ...query, collections } : query);
        const found = await timedStep(request, 'catalogue', () => searchSurveys(catalogue, parsed));
        // The next page asks the same: the search's own parameters (not the key, nor extras sent along).
        const repeated = Object.fromEntries(REPEATED.map((name) => [name, query[name]]));
        reply.type(GEOJSON);
        return itemCollection(links(request, reply), {
          surveys: found.surveys,
          matched: found.matched,
          limit: parsed.limit,
          next: found.next,
          prev: found.prev,
          path,
          query: repeated,
          self: { offset: query.offset, token: query.token },
        });
      };
      stac.get('/search', { schema: stacSchemas.search }, (request, reply) =>
        search(request, reply, `${STAC_ROOT}/search`),
      );
      stac.get('/collections/:collectionId/items', { schema: stacSchemas.items }, (request, reply) => {
        const { collectionId } = request.params as { collectionId: string };
        requireSurveysCollection(collectionId);
        return search(request, reply, `${STAC_ROOT}/collections/${SURVEYS_COLLECTION}/items`, SURVEYS_COLLECTION);
      });
    },
    { prefix: STAC_ROOT },
  );
}
