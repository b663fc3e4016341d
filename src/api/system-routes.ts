import { access, constants } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import gdal from 'gdal-async';
import type { AccountStore } from '../accounts/index.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { packageVersion } from '../version.js';
import { sendFailure } from './error-handling.js';
import { failure } from './error-table.js';
import { errorResponses, StringEnum } from './schemas.js';

/** Shared with server.ts: set when shutdown begins, so `/ready` turns away new traffic at once. */
export interface ServerState {
  draining: boolean;
}

export interface SystemRouteParts {
  catalogue: Pick<SurveyCatalogue, 'ping'>;
  accounts: Pick<AccountStore, 'getAccount'>;
  /** The tile rate limits' counters: Redis when configured. */
  rateLimiter: Pick<RateLimiter, 'ping'>;
  /** Survey files and staging: must be readable and writable. */
  dataDir: string;
  state: ServerState;
}

/** An id no account has: the query proves the accounts tables answer without reading much. */
const PROBE_ACCOUNT_ID = '00000000-0000-0000-0000-000000000000';

/** `/health` (the process answers), `/ready` (it can serve: stores reachable), `/version`. */
export function registerSystemRoutes(app: FastifyInstance, parts: SystemRouteParts): void {
  const { catalogue, accounts, rateLimiter, dataDir, state } = parts;
  const version = { name: 'nadir', version: packageVersion(), gdal: gdal.version, node: process.versions.node };

  app.get(
    '/health',
    {
      schema: {
        summary: 'Liveness: the process is up and answering',
        tags: ['operations'],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/version',
    {
      schema: {
        summary: 'Versions of nadir and what it runs on',
        tags: ['operations'],
        response: {
          200: Type.Object({ name: Type.String(), version: Type.String(), gdal: Type.String(), node: Type.String() }),
        },
      },
    },
    async () => version,
  );

  app.get(
    '/ready',
    {
      schema: {
        summary: 'Readiness: the database and the data folder are reachable; says whether the rate-limit store is',
        description:
          'A Redis outage leaves the server ready (tile rate limits are then counted by each server alone, docs/deploy.md), so `rateLimits` says `degraded`; a database or data folder out of reach is 503.',
        tags: ['operations'],
        response: {
          200: Type.Object({ status: Type.Literal('ready'), rateLimits: StringEnum(['shared', 'degraded'] as const) }),
          ...errorResponses(503),
        },
      },
    },
    async (request, reply) => {
      if (state.draining) return sendFailure(reply, failure('NOT_READY', 'Not ready: the server is shutting down'));
      try {
        await catalogue.ping();
        await accounts.getAccount(PROBE_ACCOUNT_ID);
        await access(dataDir, constants.R_OK | constants.W_OK);
      } catch (error) {
        // The reason goes to the log, not to whoever probes: it may name files.
        request.log.warn({ err: error }, 'not ready');
        return sendFailure(reply, failure('NOT_READY', 'Not ready: a store is unreachable'));
      }
      const rateLimits = await rateLimiter.ping().then(
        () => 'shared' as const,
        (error: unknown) => {
          request.log.warn({ err: error }, 'rate-limit store unreachable');
          return 'degraded' as const;
        },
      );
      return { status: 'ready' as const, rateLimits };
    },
  );
}
