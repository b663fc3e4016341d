/**
 * STAC API item search over the survey catalogue: the search a request was read into
 * (stac-search-parameters.ts), made. The catalogue answers boxes and capture dates in its order
 * (newest first, or its reverse); `intersects` (any geometry, a GeometryCollection, a box across
 * the antimeridian), `datetime` (UTC instants against the photo times) and `filter` (CQL2,
 * cql2.ts) are exact tests made here on its candidates, at most MAX_EXAMINED a page. A sort the
 * catalogue has no order for (stac-order.ts) is made here over every match, so only when they are
 * at most MAX_EXAMINED candidates. It reads only through the catalogue it is given.
 */
import { compareInOrder, type SurveyCatalogue, type SurveyOrderKey } from '../catalogue/catalogue.js';
import type { Survey } from '../catalogue/survey.js';
import { isAfter, orderKeyOf } from '../catalogue/survey-walk.js';
import { invalidParameter } from '../errors.js';
import type { Bounds } from '../geo/web-mercator.js';
import type { Cql2Test } from './cql2.js';
import type { FieldsChoice } from './stac-fields.js';
import { boxGeometry, type SearchArea, searchAreaBounds, searchAreaMeets } from './stac-geometry.js';
import { catalogueOrder, cql2ItemOf, type SortKey, SURVEYS_COLLECTION, sortComparator } from './stac-order.js';
import type { PageToken } from './stac-paging.js';

export const DEFAULT_ITEM_LIMIT = 10;
export const MAX_ITEM_LIMIT = 1000;
/**
 * Surveys one page may examine with an exact test (`intersects`, `datetime`). A search whose
 * matches are rarer than that among its candidates gets a short page (even an empty one) and a
 * `next` link that resumes where it stopped: every page's cost stays bounded.
 */
export const MAX_EXAMINED = 2000;
/** Survey ids one search may name. */
export const MAX_IDS = MAX_ITEM_LIMIT;

const WORLD: Bounds = { minX: -180, minY: -90, maxX: 180, maxY: 90 };
const DAY_MS = 86_400_000;

/** Inclusive ISO instants; an open end is undefined. */
export interface TimeInterval {
  start?: string;
  end?: string;
}

export interface StacSearch {
  /** A box not across the antimeridian (one across it is in `intersects`, as its two halves). */
  bbox?: Bounds;
  /** Geometries a footprint must meet one of. */
  intersects?: SearchArea;
  datetime?: TimeInterval;
  ids?: string[];
  collections?: string[];
  /** CQL2, compiled. */
  filter?: Cql2Test;
  sortby?: SortKey[];
  fields?: FieldsChoice;
  limit: number;
  offset: number;
  token?: PageToken;
}

export interface StacSearchResult {
  surveys: Survey[];
  /** Matching surveys across all pages, when known without reading them all. */
  matched?: number;
  /** The places the next and previous pages begin from, when there are such pages. */
  next?: SurveyOrderKey;
  prev?: SurveyOrderKey;
  /** A sort made here pages by offset: where the next and previous pages begin. */
  nextOffset?: number;
  prevOffset?: number;
}

/** The UTC day `days` away from an instant, within the catalogue's dates. */
function dayNear(iso: string, days: number): string | undefined {
  const ms = Date.parse(iso) + days * DAY_MS;
  const date = new Date(ms).toISOString().slice(0, 10);
  return /^\d{4}-/.test(date) && date >= '0001-01-01' && date <= '9999-12-31' ? date : undefined;
}

function photosWithin(survey: Survey, interval: TimeInterval): boolean {
  if (interval.start !== undefined && survey.lastPhotoTime < interval.start) return false;
  return !(interval.end !== undefined && survey.firstPhotoTime > interval.end);
}

/** Whether a survey passes every part of the search (the catalogue's own tests included, for `ids`). */
function matches(survey: Survey, search: StacSearch): boolean {
  if (search.intersects && !searchAreaMeets(search.intersects, survey.footprint)) return false;
  if (search.datetime && !photosWithin(survey, search.datetime)) return false;
  if (search.bbox && !searchAreaMeets([boxGeometry(search.bbox)], survey.footprint)) return false;
  return !(search.filter && !search.filter(cql2ItemOf(survey)));
}

/** The page of `sorted` (every match, in `order`) that the search's token or offset asks for. */
function pageOf(sorted: Survey[], search: StacSearch, order: 'newest' | 'oldest'): StacSearchResult {
  let from = search.offset;
  let to = from + search.limit;
  if (search.token?.direction === 'next') {
    const place = search.token.place;
    from = sorted.findIndex((survey) => isAfter(survey, place, order));
    if (from < 0) from = sorted.length;
    to = from + search.limit;
  } else if (search.token?.direction === 'prev') {
    const place = search.token.place;
    to = sorted.findIndex((survey) => !isAfter(place, survey, order));
    if (to < 0) to = sorted.length;
    from = Math.max(0, to - search.limit);
  }
  const surveys = sorted.slice(from, to);
  return {
    surveys,
    matched: sorted.length,
    next: to < sorted.length && surveys.length ? orderKeyOf(surveys.at(-1) as Survey) : undefined,
    prev: from > 0 && surveys.length ? orderKeyOf(surveys[0] as Survey) : undefined,
  };
}

/** The page of a sort made here: by offset, every match known. */
function offsetPage(sorted: Survey[], search: StacSearch): StacSearchResult {
  const from = search.offset;
  const to = from + search.limit;
  return {
    surveys: sorted.slice(from, to),
    matched: sorted.length,
    nextOffset: to < sorted.length ? to : undefined,
    prevOffset: from > 0 ? Math.max(0, Math.min(from, sorted.length) - search.limit) : undefined,
  };
}

function sortText(sortby: readonly SortKey[]): string {
  return sortby.map(({ field, direction }) => `${direction === 'desc' ? '-' : '+'}${field}`).join(',');
}

/**
 * One page of the surveys the search matches, in the catalogue's order (newest first, or its
 * reverse when `sortby` asks for it), walked from the token's place (catalogue.ts `walk`): what
 * follows it, or with a `prev` token what comes before it, walked backwards. How many match in
 * all is said when it costs nothing more: with no filter (the catalogue's count), for `ids`, and
 * when one page held every match. Another sort reads every match (at most MAX_EXAMINED
 * candidates, else a 400), sorts them and pages by offset.
 */
export async function searchSurveys(
  catalogue: Pick<SurveyCatalogue, 'walk' | 'get' | 'count'>,
  search: StacSearch,
): Promise<StacSearchResult> {
  if (search.collections && !search.collections.includes(SURVEYS_COLLECTION)) return { surveys: [], matched: 0 };
  const order = catalogueOrder(search.sortby);
  if (!order && search.token) {
    throw invalidParameter(
      'token',
      'token pages the catalogue order; with this sortby pages go by offset (the next and prev links say which)',
    );
  }
  if (search.ids) {
    const found = await Promise.all(search.ids.map((id) => catalogue.get(id)));
    const surveys = found.filter((survey): survey is Survey => survey !== undefined && matches(survey, search));
    if (!order) return offsetPage(surveys.sort(sortComparator(search.sortby ?? [])), search);
    return pageOf(
      surveys.sort((a, b) => compareInOrder(a, b, order)),
      search,
      order,
    );
  }
  const area = search.intersects ? searchAreaBounds(search.intersects) : (search.bbox ?? WORLD);
  const dates = search.datetime && {
    // captureDate is the local date: within a day of the UTC one either way.
    since: search.datetime.start === undefined ? undefined : dayNear(search.datetime.start, -1),
    until: search.datetime.end === undefined ? undefined : dayNear(search.datetime.end, 1),
  };
  const filtered = Boolean(search.intersects || search.datetime || search.bbox || search.filter);
  const exact = search.intersects || search.datetime || search.filter;
  const keep = filtered ? (survey: Survey) => matches(survey, search) : undefined;
  if (!order) {
    const sortby = search.sortby ?? [];
    const every = await catalogue.walk({
      area,
      ...dates,
      order: 'newest',
      limit: MAX_EXAMINED,
      keep,
      maxExamined: MAX_EXAMINED,
    });
    if (every.resume) {
      throw invalidParameter(
        'sortby',
        `sortby ${sortText(sortby)} is sorted over every match, for searches of at most ${MAX_EXAMINED} candidates, ` +
          'and this one has more: narrow it (bbox, intersects, datetime, ids) or sort by the catalogue order, ' +
          '-nadir:capture_date or +nadir:capture_date (then end_datetime, then id), which pages any number',
      );
    }
    return offsetPage(every.surveys.sort(sortComparator(sortby)), search);
  }
  const backwards = search.token?.direction === 'prev';
  const reverse = order === 'newest' ? 'oldest' : 'newest';
  const walked = await catalogue.walk({
    area,
    ...dates,
    order: backwards ? reverse : order,
    after: search.token?.place,
    // An offset page is the end of a longer walk.
    limit: search.offset + search.limit,
    keep,
    maxExamined: exact ? MAX_EXAMINED + search.offset : undefined,
  });
  const surveys = backwards ? walked.surveys.reverse() : walked.surveys.slice(search.offset);
  const first = surveys[0];
  const last = surveys.at(-1);
  const everything = !search.token && !walked.resume;
  return {
    surveys,
    matched: !filtered ? await catalogue.count() : everything ? walked.surveys.length : undefined,
    next: backwards ? last && orderKeyOf(last) : walked.resume,
    prev: backwards ? walked.resume : first && (search.token || search.offset > 0) ? orderKeyOf(first) : undefined,
  };
}
