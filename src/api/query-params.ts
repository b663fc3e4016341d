import type { FastifyRequest } from 'fastify';
import { invalidParameter } from '../errors.js';
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

const DECIMAL = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

interface QuerySchema {
  properties?: Record<string, { type?: string }>;
}

export function parseDecimal(text: string): number | undefined {
  return DECIMAL.test(text) ? Number(text) : undefined;
}

export function normaliseQuery(request: FastifyRequest): void {
  const schema = request.routeOptions.schema?.querystring as QuerySchema | undefined;
  const declared = schema?.properties;
  if (!declared) return;
  const query = request.query as Record<string, unknown>;
  for (const [name, property] of Object.entries(declared)) {
    if (!Object.hasOwn(query, name)) continue;
    const value = query[name];
    if (Array.isArray(value)) {
      const shown = SECRET_PARAMETERS.has(name.toLowerCase()) ? '' : ` (${value.length} values)`;
      throw invalidParameter(name, `${name} must be given once, but was given more than once${shown}`);
    }
    if ((property.type === 'number' || property.type === 'integer') && typeof value === 'string') {
      const number = parseDecimal(value);
      if (number !== undefined) query[name] = number;
    }
  }
}
