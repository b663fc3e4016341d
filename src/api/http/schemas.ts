import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox';

/**
 * Schema pieces shared by routes. They validate requests and are the OpenAPI document, so
 * descriptions here are what users read on /docs.
 */

/** A plain `{"type":"string","enum":[...]}`: clearer in OpenAPI and in ajv's errors than anyOf of literals. */
export function StringEnum<T extends string>(values: readonly T[], options: Record<string, unknown> = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, as a sentence for people.' }),
    code: Type.String({
      description: 'Stable machine-readable code, e.g. INVALID_PARAMETER, API_KEY_INVALID, SUBSCRIPTION_REQUIRED.',
    }),
    parameter: Type.Optional(Type.String({ description: 'The offending parameter, for INVALID_PARAMETER.' })),
  },
  { additionalProperties: true, description: 'Every error: JSON, never HTML, never a stack trace.' },
);

/** Error responses for a route's OpenAPI `responses`, by status. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, ErrorBodySchema]));
}

/**
 * The router's limit on one path segment (fastify's maxParamLength): beyond every path
 * parameter's own (surveyId 128 characters, the file names 32 and 64), so a segment over those is
 * refused by the route's schema, naming the parameter, rather than by the router.
 */
export const MAX_PATH_SEGMENT = 512;
