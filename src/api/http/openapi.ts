import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
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
 * `/openapi.json`, and the human docs page at `/docs`: Swagger UI served from the package (no CDN,
 * no online validator), reading the same document at `/docs/json`.
 */
export async function registerOpenApiRoutes(app: FastifyInstance): Promise<void> {
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: true,
  });
}
