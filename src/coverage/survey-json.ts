import type { SurveyListing } from '../catalogue/catalogue.js';
import { CONTENT_TYPES, type ContentType, RASTER_TYPES, type RasterType } from '../catalogue/survey.js';
import type { SurveyField } from './coverage-request.js';

/** A survey as the coverage response shows it (spec "Survey", plus `tags` and `maxZoom`). */
export interface SurveyJson {
  id: string;
  captureDate?: string;
  firstPhotoTime?: string;
  lastPhotoTime?: string;
  /** GSD in ground metres per pixel, for each requested raster type the survey has. */
  pixelSizes?: Partial<Record<RasterType, number>>;
  tags?: string[];
  /** Native (deepest) tile zoom of every content type the survey has, tile layers included. */
  maxZoom?: Partial<Record<ContentType, number>>;
}

/** Micrometres are far below any GSD; rounding hides float noise such as 0.20000000298. */
function roundGsd(gsd: number): number {
  return Math.round(gsd * 1e6) / 1e6;
}

/**
 * The survey in the response's field order, objects keyed in the schema's order (RASTER_TYPES,
 * CONTENT_TYPES) whatever order the query named the types in: JSON.stringify of it is then the
 * very text fastify's schema serialiser wrote when it serialised these answers.
 */
export function surveyJson(
  survey: SurveyListing,
  types: readonly RasterType[],
  fields: ReadonlySet<SurveyField>,
): SurveyJson {
  const json: SurveyJson = { id: survey.id };
  if (fields.has('captureDate')) json.captureDate = survey.captureDate;
  if (fields.has('firstPhotoTime')) json.firstPhotoTime = survey.firstPhotoTime;
  if (fields.has('lastPhotoTime')) json.lastPhotoTime = survey.lastPhotoTime;
  if (fields.has('pixelSizes')) {
    const pixelSizes: SurveyJson['pixelSizes'] = {};
    for (const type of RASTER_TYPES) {
      const asset = types.includes(type) ? survey.assets[type] : undefined;
      if (asset) pixelSizes[type] = roundGsd(asset.gsd);
    }
    json.pixelSizes = pixelSizes;
  }
  if (fields.has('tags')) json.tags = [...survey.tags];
  if (fields.has('maxZoom')) {
    const maxZoom: SurveyJson['maxZoom'] = {};
    for (const type of CONTENT_TYPES) {
      const asset = survey.assets[type];
      // The schema says integer: the serialiser truncated anything else.
      if (asset) maxZoom[type] = Math.trunc(asset.maxZoom);
    }
    json.maxZoom = maxZoom;
  }
  return json;
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
