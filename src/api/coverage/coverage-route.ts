import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyLookup } from '../../accounts/index.js';
import type { Services } from '../../composition.js';
import { aoiLonLatBounds } from '../../geo/aoi.js';
import { utcDate } from '../../geo/dates.js';
import { authenticate, requireRasterSubscription } from '../auth.js';
import { timedStep } from '../request-lifecycle.js';
import { parseCoverageQuery } from './coverage-request.js';
import { type CoverageQuerySchema, coverageRouteSchema } from './coverage-schema.js';
import { surveyJson } from './survey-json.js';

export const COVERAGE_PATH = '/staticmap/v2/coverage.json';

/** Who is calling; set by the route's authentication hook, read by its handler. */
const callers = new WeakMap<FastifyRequest, ApiKeyLookup>();

/**
 * GET /staticmap/v2/coverage.json (spec endpoint 1 + decisions.md "Coverage").
 * Order of checks: duplicated parameters (server-wide hook), then the API key (401) and the
 * subscription (403), then the parameters (400): an unauthenticated caller learns nothing
 * about what a well-formed request looks like.
 */
export function registerCoverageRoute(app: FastifyInstance, services: Services, now: () => Date): void {
  app.get(
    COVERAGE_PATH,
    {
      schema: coverageRouteSchema,
      preValidation: async (request) => {
        const caller = await timedStep(request, 'auth', () => authenticate(services.accounts, request));
        requireRasterSubscription(caller);
        callers.set(request, caller);
      },
    },
    async (request, reply) => {
      const caller = callers.get(request);
      if (!caller) throw new Error('coverage handler reached without an authenticated caller');
      const query = parseCoverageQuery(request.query as Static<typeof CoverageQuerySchema>, () => utcDate(now()));
      const page = await timedStep(request, 'catalogue', () =>
        services.catalogue.search({
          area: aoiLonLatBounds(query.aoi),
          overlap: query.overlap,
          since: query.since,
          until: query.until,
          types: query.types,
          typeMatch: query.typeMatch,
          limit: query.limit,
          offset: query.offset,
          // The answer shows no footprint and no file: listings spare reading each survey's document.
          view: 'listing',
        }),
      );
      // Issued even when nothing matches (decisions.md): it costs nothing until an image is fetched.
      const { token } = services.tokens.issue({ accountId: caller.account.id, keyId: caller.keyId, aoi: query.aoi });
      // The body holds a credential: no shared cache may keep it.
      reply.header('cache-control', 'no-store');
      return {
        surveys: page.surveys.map((survey) => surveyJson(survey, query.types, query.fields)),
        limit: query.limit,
        offset: query.offset,
        total: page.total,
        transactionToken: token,
      };
    },
  );
}
