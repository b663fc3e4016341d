import type { FastifyReply, FastifyRequest } from 'fastify';
import { baseUrl, type GisLinks } from '../../gis/gis-links.js';
import { keyIsInUrl } from '../http/auth.js';

/**
 * Where the URLs of a GIS document point: NADIR_PUBLIC_URL behind a proxy, else the host the
 * caller reached; with the key when the caller put it in the query (gis-links.ts says why).
 */
export function gisLinksFor(request: FastifyRequest, publicUrl: string | undefined): GisLinks {
  const apikey = (request.query as Record<string, unknown>).apikey;
  return {
    base: baseUrl(publicUrl ?? `${request.protocol}://${request.host}`),
    apikey: keyIsInUrl(apikey) ? apikey : undefined,
  };
}

/** A document whose URLs carry the caller's key must not be kept by any cache. */
export function cacheFor(reply: FastifyReply, links: GisLinks): void {
  reply.header('cache-control', links.apikey === undefined ? 'private, max-age=60' : 'no-store');
}
