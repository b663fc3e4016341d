import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import type { CoverageAnswers } from '../../coverage/coverage-answers.js';
import { parseCoverageQuery } from '../../coverage/coverage-request.js';
import { coverageBody } from '../../coverage/survey-json.js';
import { utcDate } from '../../geo/dates.js';
import type { TokenCodec } from '../../tokens/index.js';
import { type ApiKeyVerifier, authenticate, callerOf, requireRasterSubscription } from '../http/auth.js';
import { JSON_TYPE } from '../http/error-handling.js';
import { timedStep } from '../http/request-lifecycle.js';
import { type CoverageQuerySchema, coverageRouteSchema } from './coverage-schema.js';

export const COVERAGE_PATH = '/staticmap/v2/coverage.json';

export interface CoverageRouteParts {
  keys: ApiKeyVerifier;
  answers: Pick<CoverageAnswers, 'page'>;
  tokens: Pick<TokenCodec, 'issue'>;
  clock: Clock;
}

/**
 * GET /staticmap/v2/coverage.json (spec endpoint 1 + decisions.md "Coverage").
 * Order of checks: duplicated parameters (server-wide hook), then the API key (401) and the
 * subscription (403), then the parameters (400): an unauthenticated caller learns nothing
 * about what a well-formed request looks like.
 */
export function registerCoverageRoute(
  app: FastifyInstance,
  { keys, answers, tokens, clock }: CoverageRouteParts,
): void {
  app.get(
    COVERAGE_PATH,
    {
      schema: coverageRouteSchema,
      preValidation: async (request) => {
        requireRasterSubscription(await timedStep(request, 'auth', () => authenticate(keys, request)));
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const query = parseCoverageQuery(request.query as Static<typeof CoverageQuerySchema>, () => utcDate(clock()));
      const page = await timedStep(request, 'catalogue', () => answers.page(query));
      // Issued even when nothing matches (decisions.md): it costs nothing until an image is fetched.
      const { token } = tokens.issue({ accountId: caller.account.id, keyId: caller.keyId, aoi: query.aoi });
      // The body holds a credential: no shared cache may keep it.
      reply.header('cache-control', 'no-store');
      // Already JSON (the page comes serialised, coverage-answers.ts): fastify sends a buffer as is.
      reply.header('content-type', JSON_TYPE);
      return coverageBody(page.bodyHead, token);
    },
  );
}
