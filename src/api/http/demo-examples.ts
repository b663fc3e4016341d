/**
 * The values the OpenAPI document offers as examples, taken from the demo town (`nadir demo`,
 * packages/demo-town), so Swagger UI's "Try it out" finds something on a demo server at the first
 * try: a point inside every demo survey, dates around their capture dates, a survey id of theirs.
 * Plain constants: the server does not load the generator. test/api/docs-examples.test.ts checks
 * them against a demo server.
 */

/** A house in the middle of the demo town (docs/client.md's example): all three surveys cover it. */
export const DEMO_POINT = '-85.4181766,29.94582896';

/** The demo's 2025-04-02 survey (packages/demo-town/src/surveys.ts). */
export const DEMO_SURVEY_ID = '0b8e4d27-91c3-4f6a-b2e5-7c9d1a3e5f02';

/** Captures of the demo town fall in 2024 and 2025. */
export const DEMO_SINCE = '2024-01-01';
export const DEMO_UNTIL = '2025-12-31';
