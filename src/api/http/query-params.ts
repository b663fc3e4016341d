import type { FastifyRequest } from 'fastify';
import { storable } from '../../catalogue/survey-rows.js';
import { invalidParameter } from '../../errors.js';
import { parseDecimal } from '../../geo/point-text.js';
import { SECRET_PARAMETERS } from './error-table.js';

/**
 * Query-string rules shared by every route, applied before schema validation (a preValidation
 * hook), so that the schema sees exactly one string or number per declared parameter:
 *
 * - A declared parameter given twice is a 400 naming it: `radius=10&radius=90` has no right
 *   answer, and silently taking either one hides a client bug.
 * - Parameters the route does not declare are ignored, even when repeated: clients send extras
 *   (cache busters, parameters of other endpoints) and must keep working against us.
 * - Numbers are converted here, strictly, instead of by ajv's coercion, which would accept
 *   `0x10`, `Infinity` or `1,5`-ish surprises. Decimal and exponent forms (`1e-05`, as Python's
 *   str() prints small floats) are numbers; anything else stays a string and fails the schema.
 */

export interface QuerySchema {
  properties?: Record<string, { type?: string }>;
}

/**
 * Refuses a value among `values`' entries (those named in `only`, when given) that no store can hold as
 * it is (catalogue/survey-rows.ts `storable`): no parameter of any endpoint can mean anything with a
 * NUL or a lone surrogate, so they are a 400 at the edge, whichever engine is behind (issue 32).
 */
function refuseUnholdable(values: unknown, where: 'query' | 'path', only?: Record<string, unknown>): void {
  if (!values || typeof values !== 'object') return;
  for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
    if (only && !Object.hasOwn(only, name)) continue;
    // Credentials are checked by their digest or signature, never stored as text: a key with a
    // NUL is just a wrong key (401), as the docs say.
    if (SECRET_PARAMETERS.has(name.toLowerCase())) continue;
    const texts = Array.isArray(value) ? value : [value];
    if (texts.some((text) => typeof text === 'string' && !storable(text))) {
      const shown = /^[A-Za-z][A-Za-z0-9_-]{0,40}$/.test(name) ? name : 'a parameter';
      throw invalidParameter(
        shown,
        `${where === 'path' ? 'The path' : shown} holds a NUL byte or a lone UTF-16 surrogate, which no ${where === 'path' ? 'path' : 'parameter'} may`,
      );
    }
  }
}

/**
 * A preHandler: after the key is checked (a wrong key is a 401 whatever else is wrong) and the
 * schema has passed, before a handler hands any value to a store.
 */
export function refuseUnstorable(request: FastifyRequest): void {
  refuseUnholdable(request.params, 'path');
  const declared = (request.routeOptions.schema?.querystring as QuerySchema | undefined)?.properties;
  // Parameters a route does not declare are ignored whatever they hold (normaliseQuery).
  if (declared) refuseUnholdable(request.query, 'query', declared);
}

export function normaliseQuery(request: FastifyRequest): void {
  const schema = request.routeOptions.schema?.querystring as QuerySchema | undefined;
  const declared = schema?.properties;
  if (!declared) return;
  const query = request.query as Record<string, unknown>;
  for (const name of Object.keys(declared)) {
    if (!Object.hasOwn(query, name)) continue;
    const value = query[name];
    if (Array.isArray(value)) {
      const shown = SECRET_PARAMETERS.has(name.toLowerCase()) ? '' : ` (${value.length} values)`;
      throw invalidParameter(name, `${name} must be given once, but was given more than once${shown}`);
    }
  }
  convertNumbers(query, declared);
}

/**
 * Declared number and integer parameters given as decimal text become numbers; anything else
 * stays a string, which the schema then refuses. In place, as ajv's own coercion would be.
 */
export function convertNumbers(query: Record<string, unknown>, declared: QuerySchema['properties']): void {
  for (const [name, property] of Object.entries(declared ?? {})) {
    const value = query[name];
    if ((property.type === 'number' || property.type === 'integer') && typeof value === 'string') {
      const number = parseDecimal(value);
      if (number !== undefined) query[name] = number;
    }
  }
}

/**
 * The declared parameters of a raw query string as sent, by the rules above, for answers made
 * without fastify: undefined when a declared one is repeated (fastify then refuses it), or when
 * anything needs decoding (`%`, `+`), which stays fastify's to do.
 */
export function plainQuery(search: string, declared: ReadonlySet<string>): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  if (search === '') return query;
  if (search.includes('%') || search.includes('+')) return undefined;
  // Pair by pair with indexOf, not split('&'): this runs for every tile request.
  for (let start = 0; start <= search.length; ) {
    const ampersand = search.indexOf('&', start);
    const end = ampersand === -1 ? search.length : ampersand;
    const equals = search.indexOf('=', start);
    const split = equals !== -1 && equals < end;
    const name = search.slice(start, split ? equals : end);
    start = end + 1;
    if (!declared.has(name)) continue;
    if (Object.hasOwn(query, name)) return undefined;
    query[name] = split ? search.slice(equals + 1, end) : '';
  }
  return query;
}
