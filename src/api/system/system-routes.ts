import { access, constants } from 'node:fs/promises';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import gdal from 'gdal-async';
import type { AccountStore } from '../../accounts/index.js';
import type { SurveyCatalogue } from '../../catalogue/catalogue.js';
import type { RateLimiter } from '../../limits/rate-limiter.js';
import type { SurveyStorage } from '../../storage/storage.js';
import { packageVersion } from '../../version.js';
import { sendFailure } from '../http/error-handling.js';
import { failure } from '../http/error-table.js';
import { errorResponses, StringEnum } from '../http/schemas.js';
import type { ServerState } from '../http/server-state.js';

export interface SystemRouteParts {
  catalogue: Pick<SurveyCatalogue, 'ping'>;
  accounts: Pick<AccountStore, 'getAccount'>;
  /** The tile rate limits' counters: Redis when configured. */
  rateLimiter: Pick<RateLimiter, 'ping'>;
  /** Survey files: the folder or the bucket. */
  storage: Pick<SurveyStorage, 'ping'>;
  /** Survey files and staging: must be readable and writable. */
  dataDir: string;
  state: ServerState;
}

/** An id no account has: the query proves the accounts tables answer without reading much. */
const PROBE_ACCOUNT_ID = '00000000-0000-0000-0000-000000000000';

/** `/health` (the process answers), `/ready` (it can serve: stores reachable), `/version`. */
export function registerSystemRoutes(app: FastifyInstance, parts: SystemRouteParts): void {
  const { catalogue, accounts, rateLimiter, storage, dataDir, state } = parts;
  const Engines = Type.Object({
    database: StringEnum(['up', 'down'] as const),
    storage: StringEnum(['up', 'down'] as const),
    rateLimits: StringEnum(['shared', 'degraded'] as const),
  });
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
        summary: 'Readiness: each engine the server needs, and whether it can serve',
        description:
          'Each engine: `database` (the catalogue and accounts), `storage` (survey files and the data folder), `rateLimits` (`shared` through Redis, or `degraded`: each server counts alone, docs/deploy.md). A Redis outage leaves the server ready; a database or storage out of reach is 503 NOT_READY, whose body names the engines too.',
        tags: ['operations'],
        response: {
          200: Type.Composite([Type.Object({ status: Type.Literal('ready') }), Engines]),
          ...errorResponses(503),
        },
      },
    },
    async (request, reply) => {
      if (state.draining) return sendFailure(reply, failure('NOT_READY', 'Not ready: the server is shutting down'));
      // The probes at once: a hung engine costs /ready its own timeout, not the sum of them.
      const probe = (name: string, check: () => Promise<unknown>) =>
        check().then(
          () => true,
          (error: unknown) => {
            // The reason goes to the log, not to whoever probes: it may name files or hosts.
            request.log.warn({ err: error }, `not ready: ${name}`);
            return false;
          },
        );
      const [database, files, shared] = await Promise.all([
        probe('database', async () => {
          await catalogue.ping();
          await accounts.getAccount(PROBE_ACCOUNT_ID);
        }),
        probe('storage', async () => {
          await storage.ping();
          await access(dataDir, constants.R_OK | constants.W_OK);
        }),
        probe('rate limits', () => rateLimiter.ping()),
      ]);
      const engines = {
        database: database ? ('up' as const) : ('down' as const),
        storage: files ? ('up' as const) : ('down' as const),
        rateLimits: shared ? ('shared' as const) : ('degraded' as const),
      };
      if (!database || !files) {
        const down = [database ? '' : 'the database', files ? '' : 'the storage'].filter(Boolean).join(' and ');
        return sendFailure(reply, failure('NOT_READY', `Not ready: ${down} unreachable`, { engines }));
      }
      return { status: 'ready' as const, ...engines };
    },
  );
}
