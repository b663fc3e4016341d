import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { packageVersion } from '../../version.js';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * The OpenAPI 3.1 document is generated from the same route schemas that validate requests, so
 * it cannot drift from what the server accepts. Must be registered before any route.
 */
export async function registerOpenApiGenerator(app: FastifyInstance, publicUrl?: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'nadir',
        version: packageVersion(),
        description:
          'Open-source aerial imagery service: coverage and transaction tokens, raster imagery (v2) and map tiles (v3). ' +
          'Every error is JSON `{"error": "...", "code": "..."}`; see docs/api.md.',
      },
      ...(publicUrl ? { servers: [{ url: publicUrl }] } : {}),
      components: {
        securitySchemes: {
          apikeyQuery: { type: 'apiKey', in: 'query', name: 'apikey' },
          apikeyHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The value `Apikey <key>`.',
          },
        },
      },
      tags: [
        { name: 'raster', description: 'Coverage and imagery (needs the raster subscription).' },
        { name: 'tiles', description: 'Web Mercator map tiles (v3): any XYZ client with an API key.' },
        { name: 'gis', description: 'STAC API, TileJSON and WMTS for GIS clients (docs/gis.md).' },
        { name: 'operations', description: 'Health, readiness and version.' },
      ],
    },
  });
}

/**
 * A route's path as the specification writes it, in the OpenAPI document only (a route's
 * `config`). The router takes `{type}.{format}` as one `:file` parameter, so a name without a dot
 * or with an unknown type is a 400 naming the part; readers, generated clients and Swagger UI's
 * "Try it out" see the two parts, each a list to pick from. `url` is fastify's form
 * (`/surveys/:surveyId/{type}.{format}`); `params` replaces the route's params schema.
 */
export function documentedPath(url: string, params: TSchema) {
  return {
    swaggerTransform: ({ schema }: { schema?: FastifySchema }) => ({ url, schema: { ...schema, params } }),
  };
}

/**
 * Swagger UI's Content-Security-Policy: scripts from this server only, and inline styles, which
 * the UI's React components set on elements (`style-src 'self' https:`, the package's default,
 * fills the console with refused styles). Without the default's `upgrade-insecure-requests`:
 * "Try it out" on a server reached over plain http (the demo, a LAN host) would go to https.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join('; ');

/**
 * `/openapi.json`, and the human docs page at `/docs`: Swagger UI served from the package (no CDN,
 * no online validator), reading the same document at `/docs/json`.
 */
export async function registerOpenApiRoutes(app: FastifyInstance): Promise<void> {
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: DOCS_CSP,
  });
}
