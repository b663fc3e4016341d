/**
 * How a survey is split over the catalogue's columns and put back together: the document (the
 * survey without its footprint) as JSON, the footprint packed, and the listing (what a listing of
 * surveys shows, ~150 bytes) as its own small JSON, so a search that only lists surveys never
 * parses a document.
 */
import { NadirError } from '../errors.js';
import { assetFiles } from '../geo/asset-layout.js';
import type { SurveyListing } from './catalogue.js';
import { unpackFootprint } from './packed-footprint.js';
import { CONTENT_TYPES, type ContentType, type Survey } from './survey.js';

export interface DocumentRow {
  body: string;
  outline: Buffer;
}

/** The listing's columns: the fields of SurveyListing the table does not hold on its own. */
export interface ListingRow {
  id: string;
  captureDate: string;
  lastPhotoTime: string;
  /** A JSON array (SQLite), or the array itself (PostgreSQL's text[]). */
  tags: string | readonly string[];
  version: number;
  listing: string;
}

type StoredListing = Pick<SurveyListing, 'firstPhotoTime' | 'assets'>;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether every engine can hold `text` as it is: PostgreSQL refuses NUL in text, and a lone
 * UTF-16 surrogate is no character (encoded, it turns into U+FFFD, another string). An id that
 * is not storable names no survey on either engine; the API refuses such input at its edge.
 */
export function storable(text: string): boolean {
  return !text.includes('\0') && !LONE_SURROGATE.test(text);
}

/** Refuses to store a survey id no engine can hold (ingest makes UUIDs; this is the last guard). */
export function mustStore(id: string): void {
  if (!storable(id)) throw new NadirError('INVALID_PARAMETER', 'a survey id may hold no NUL and no lone surrogate');
}

/** Where each of a survey's files is (the catalogue's asset locations). */
export function assetLocations(survey: Pick<Survey, 'assets'>): string[] {
  return Object.values(survey.assets).flatMap((asset) => (asset ? assetFiles(asset) : []));
}

/** One bit per content type, so "has all/any of these types" is an integer test inside SQL. */
export function typeMask(types: readonly ContentType[]): number {
  return types.reduce((mask, type) => mask | (1 << CONTENT_TYPES.indexOf(type)), 0);
}

export function documentJson(survey: Survey): string {
  return JSON.stringify({ ...survey, footprint: undefined });
}

export function listingJson(survey: Pick<Survey, 'firstPhotoTime' | 'assets'>): string {
  const listing: StoredListing = { firstPhotoTime: survey.firstPhotoTime, assets: {} };
  for (const type of CONTENT_TYPES) {
    const asset = survey.assets[type];
    if (asset) listing.assets[type] = { gsd: asset.gsd, maxZoom: asset.maxZoom };
  }
  return JSON.stringify(listing);
}

export function toSurvey(row: DocumentRow): Survey {
  const survey = JSON.parse(row.body) as Survey;
  survey.footprint = unpackFootprint(row.outline);
  return survey;
}

export function toListing(row: ListingRow): SurveyListing {
  const { firstPhotoTime, assets } = JSON.parse(row.listing) as StoredListing;
  const { id, captureDate, lastPhotoTime, version } = row;
  // Most surveys have no tags: no parse for those.
  const tags =
    typeof row.tags !== 'string' ? [...row.tags] : row.tags === '[]' ? [] : (JSON.parse(row.tags) as string[]);
  return { id, captureDate, firstPhotoTime, lastPhotoTime, tags, version, assets };
}
