import type { SurveyListing } from '../catalogue/catalogue.js';
import { CONTENT_TYPES, RASTER_TYPES, type RasterType } from '../catalogue/survey.js';
import type { SurveyField } from './coverage-request.js';

/** Micrometres are far below any GSD; rounding hides float noise such as 0.20000000298. */
function roundGsd(gsd: number): number {
  return Math.round(gsd * 1e6) / 1e6;
}

/**
 * A survey's JSON text as the coverage response shows it (spec "Survey", plus `tags` and
 * `maxZoom`; `pixelSizes` of the requested raster types only): fields in the schema's order,
 * objects keyed in the schema's order (RASTER_TYPES, CONTENT_TYPES) whatever order the query named
 * the types in, so the text is the very one fastify's schema serialiser wrote for these answers
 * (the test holds it to that). Written out directly rather than built as an object for
 * JSON.stringify to walk: an uncached answer does this for every survey of its page (up to 1,000).
 */
export function surveyJsonText(
  survey: SurveyListing,
  types: readonly RasterType[],
  fields: ReadonlySet<SurveyField>,
): string {
  let text = `{"id":${JSON.stringify(survey.id)}`;
  if (fields.has('captureDate')) text += `,"captureDate":${JSON.stringify(survey.captureDate)}`;
  if (fields.has('firstPhotoTime')) text += `,"firstPhotoTime":${JSON.stringify(survey.firstPhotoTime)}`;
  if (fields.has('lastPhotoTime')) text += `,"lastPhotoTime":${JSON.stringify(survey.lastPhotoTime)}`;
  if (fields.has('pixelSizes')) {
    let sizes = '';
    for (const type of RASTER_TYPES) {
      const asset = types.includes(type) ? survey.assets[type] : undefined;
      // A finite number's JSON is its String().
      if (asset) sizes += `${sizes ? ',' : ''}"${type}":${roundGsd(asset.gsd)}`;
    }
    text += `,"pixelSizes":{${sizes}}`;
  }
  if (fields.has('tags')) text += `,"tags":${JSON.stringify(survey.tags)}`;
  if (fields.has('maxZoom')) {
    let zooms = '';
    for (const type of CONTENT_TYPES) {
      const asset = survey.assets[type];
      // The schema says integer: the serialiser truncated anything else.
      if (asset) zooms += `${zooms ? ',' : ''}"${type}":${Math.trunc(asset.maxZoom)}`;
    }
    text += `,"maxZoom":{${zooms}}`;
  }
  return `${text}}`;
}

/**
 * The response body up to the token's value: every byte of it is decided by the page and the
 * request, so it is remembered with the page (coverage-answers.ts), and a request only adds its
 * token and the two closing characters (coverageBodyTail). UTF-8 bytes in their own memory, not a
 * slice of Buffer's shared pool (which a remembered page would keep whole): each answer writes
 * them as they are, where a string body was copied twice more per request (measured, to count
 * its bytes, and to put the header before it).
 */
export function coverageBodyHead(surveysJson: string, page: { limit: number; offset: number; total: number }): Buffer {
  const text = `{"surveys":${surveysJson},"limit":${page.limit},"offset":${page.offset},"total":${page.total},"transactionToken":"`;
  const head = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  head.write(text);
  return head;
}

/** The rest of the body after coverageBodyHead: the token is base64url and dots, nothing JSON escapes. */
export function coverageBodyTail(token: string): string {
  return `${token}"}`;
}

/** The whole body as one buffer, for the fastify route and the tests. */
export function coverageBody(head: Buffer, token: string): Buffer {
  return Buffer.concat([head, Buffer.from(coverageBodyTail(token))]);
}
