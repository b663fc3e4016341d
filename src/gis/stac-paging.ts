/**
 * STAC paging by keyset, as pgSTAC does it: a `next` or `prev` link carries `token`, the place in
 * the catalogue's order (captureDate, lastPhotoTime, id) after or before which the page begins, so
 * a page deep in 100,000 surveys costs what the first one does and paging to the end is linear in
 * the pages. `offset` stays for clients that count, up to MAX_OFFSET. Pure.
 */
import type { SurveyOrderKey } from '../catalogue/catalogue.js';
import { storable } from '../catalogue/survey-rows.js';
import { invalidParameter } from '../errors.js';
import { isIsoDate } from '../geo/dates.js';

/** Deepest `offset` accepted: past it, a page would cost its depth; the links page by token. */
export const MAX_OFFSET = 10_000;

export interface PageToken {
  /** `next`: the surveys after `place`; `prev`: those before it (the page ends there). */
  direction: 'next' | 'prev';
  place: SurveyOrderKey;
}

export function pageToken(direction: PageToken['direction'], place: SurveyOrderKey): string {
  const json = JSON.stringify([place.captureDate, place.lastPhotoTime, place.id]);
  return `${direction}:${Buffer.from(json, 'utf8').toString('base64url')}`;
}

export function parsePageToken(text: string): PageToken {
  const bad = () =>
    invalidParameter('token', 'token must be one a next or prev link of this API gave (next:... or prev:...)');
  const colon = text.indexOf(':');
  const direction = text.slice(0, colon);
  if (direction !== 'next' && direction !== 'prev') throw bad();
  let place: unknown;
  try {
    place = JSON.parse(Buffer.from(text.slice(colon + 1), 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(place) || place.length !== 3 || !place.every((part) => typeof part === 'string')) throw bad();
  const [captureDate, lastPhotoTime, id] = place as [string, string, string];
  // Decoded bytes reach the engines: none they cannot hold (survey-rows.ts).
  if (!isIsoDate(captureDate) || !storable(lastPhotoTime) || !storable(id)) throw bad();
  return { direction, place: { captureDate, lastPhotoTime, id } };
}
