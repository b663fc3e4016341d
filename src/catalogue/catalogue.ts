import type { Bounds } from '../geo/web-mercator.js';
import type { Asset, ContentType, Survey } from './survey.js';

/**
 * What a listing of surveys shows (the coverage answer): no footprint, and of each asset only its
 * resolution and deepest zoom. A Survey is one; a search asked for listings reads no document,
 * which is most of what a dense search costs.
 */
export interface SurveyListing
  extends Pick<Survey, 'id' | 'captureDate' | 'firstPhotoTime' | 'lastPhotoTime' | 'tags' | 'version'> {
  assets: Partial<Record<ContentType, Pick<Asset, 'gsd' | 'maxZoom'>>>;
}

/** `document` (default): whole surveys; `listing`: SurveyListing only. */
export type SurveyView = 'document' | 'listing';

export interface TagFilter {
  /** A survey matches when it has a tag equal to, or of the type of, any of these. */
  include?: string[];
  /** A survey is dropped when it has a tag equal to, or of the type of, any of these. */
  exclude?: string[];
}

export interface SurveySearch<V extends SurveyView = 'document'> {
  /** WGS84 lon/lat box of the area asked about. */
  area: Bounds;
  /** `intersects` (default) or `full`: the footprint must contain the whole area. */
  overlap?: 'intersects' | 'full';
  /** Inclusive `YYYY-MM-DD` bounds on captureDate. */
  since?: string;
  until?: string;
  /** Content types and whether a survey needs all of them or any one. */
  types?: ContentType[];
  typeMatch?: 'all' | 'any';
  tags?: TagFilter;
  /** `newest` (decisions.md order) or `oldest` (its exact reverse). */
  order?: 'newest' | 'oldest';
  limit: number;
  offset: number;
  view?: V;
}

export interface Reservation {
  version: number;
  /** ISO instant; undefined for reservations made before nadir noted the time. */
  reservedAt: string | undefined;
}

export interface RetiredFile {
  location: string;
  retiredAt: string;
}

/**
 * A walk through the surveys a search matches, in its order, from a place in that order: how
 * STAC pages by keyset, so a page deep in 100,000 surveys costs what the first one does.
 */
export interface SurveyWalk
  extends Pick<SurveySearch, 'area' | 'since' | 'until' | 'types' | 'typeMatch' | 'tags' | 'order'> {
  /** Only surveys after this one in `order` (absent: from the start). */
  after?: SurveyOrderKey;
  /** Surveys to return at most. */
  limit: number;
  /**
   * A further test on each survey (STAC's exact `datetime` and `intersects`), and how many
   * surveys the walk may examine before it stops with a short page and a place to resume: a
   * page's cost stays bounded however rare the surveys passing it are.
   */
  keep?: (survey: Survey) => boolean;
  maxExamined?: number;
}

export interface SurveyWalkPage {
  surveys: Survey[];
  /** Where the next page begins (after the last survey examined); absent when nothing is left. */
  resume?: SurveyOrderKey;
}

/**
 * A maintained aggregate of the catalogue: the surveys of one content type (`''`: any) with one
 * tag (`''`: any tags) captured on one date. Kept exact by every put and delete, so layer and
 * collection extents are read from a few thousand of these, never from the surveys.
 */
export interface SurveyGroup extends SurveySpan {
  type: ContentType | '';
  tag: string;
  captureDate: string;
}

/** What some surveys span together. */
export interface SurveySpan {
  surveys: number;
  /** WGS84 box of the footprints. */
  bounds: Bounds;
  firstPhotoTime: string;
  lastPhotoTime: string;
  /** A content type's coarsest and deepest zoom among the surveys (0 for type `''`). */
  minZoom: number;
  maxZoom: number;
}

export interface GroupQuery {
  type?: ContentType;
  /** Inclusive `YYYY-MM-DD` bounds on captureDate. */
  since?: string;
  until?: string;
  /**
   * `none`: the groups of every survey (tag `''`); `all`: those and every tag's; a list of
   * patterns (as TagFilter.include): the groups of the tags they match.
   */
  tags: 'none' | 'all' | readonly string[];
}

/**
 * The groups of one tag (`''`: every survey) over the dates a GroupQuery selects, merged by the
 * engine: what a layer or a collection spans, with its capture dates (newest first).
 */
export interface TagExtent extends SurveySpan {
  tag: string;
  captureDates: string[];
}

export interface SurveyPage<V extends SurveyView = 'document'> {
  surveys: (V extends 'listing' ? SurveyListing : Survey)[];
  total: number;
}

/**
 * The survey catalogue. Async throughout so a PostgreSQL/PostGIS store can implement it
 * without changing callers.
 */
export interface SurveyCatalogue {
  /** Inserts or atomically replaces a survey (all its assets at once). */
  put(survey: Survey): Promise<void>;
  get(id: string): Promise<Survey | undefined>;
  delete(id: string): Promise<boolean>;
  /**
   * Takes the next version number for `id` (1 for a new survey), noting when. Numbers are never
   * handed out twice, even when an ingest dies before `put`, so files of a dead attempt can't be
   * mistaken.
   */
  reserveVersion(id: string): Promise<number>;
  /** The newest version reserved for each survey id, and when (storage gc spares a running ingest's files). */
  reservations(): Promise<Map<string, Reservation>>;
  /**
   * Files that `put` replaced or `delete` removed, and since when: servers may still be reading
   * them for a while, so storage gc removes them only after a grace period.
   */
  retiredFiles(): Promise<RetiredFile[]>;
  /** Forgets retired files once they are deleted from storage. */
  forgetRetired(locations: readonly string[]): Promise<void>;
  search<V extends SurveyView = 'document'>(query: SurveySearch<V>): Promise<SurveyPage<V>>;
  /** The next surveys after a place in the order (keyset paging); no total is counted. */
  walk(query: SurveyWalk): Promise<SurveyWalkPage>;
  /** The maintained aggregates the query selects, newest date first (see SurveyGroup). */
  groups(query: GroupQuery): Promise<SurveyGroup[]>;
  /** The same groups merged per tag, in the engine: one row a tag, not one a tag and date. */
  extents(query: GroupQuery): Promise<TagExtent[]>;
  /** Every file location the catalogue references, so storage can remove what nothing references. */
  referencedFiles(): Promise<Set<string>>;
  count(): Promise<number>;
  /**
   * Changes whenever any survey was put or deleted, by this process or another one sharing the
   * store (`nadir ingest` runs beside `nadir serve`), so callers can cache search answers until it
   * moves. Cheap enough to ask on every request, and answered at once (a local read, or what a
   * follower of the store's notifications last saw), so a tile answer can be one synchronous step.
   */
  changeMarker(): string;
  /** Cheap reachability check for `/ready`. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The fields that decide a survey's place in every listing. */
export type SurveyOrderKey = Pick<Survey, 'captureDate' | 'lastPhotoTime' | 'id'>;

/** decisions.md: captureDate desc, then lastPhotoTime desc, then id — stable across pages. */
export function compareNewestFirst(a: SurveyOrderKey, b: SurveyOrderKey): number {
  if (a.captureDate !== b.captureDate) return a.captureDate < b.captureDate ? 1 : -1;
  if (a.lastPhotoTime !== b.lastPhotoTime) return a.lastPhotoTime < b.lastPhotoTime ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The first of two places in `order` (newest first unless `oldest`): negative when `a` comes first. */
export function compareInOrder(a: SurveyOrderKey, b: SurveyOrderKey, order: 'newest' | 'oldest' = 'newest'): number {
  return order === 'oldest' ? compareNewestFirst(b, a) : compareNewestFirst(a, b);
}

/** `disaster` matches every `disaster:*` tag; `disaster:fire` matches only itself. */
export function tagMatches(tag: string, pattern: string): boolean {
  if (tag === pattern) return true;
  return !pattern.includes(':') && tag.startsWith(`${pattern}:`);
}

/** Whether a filter names any tag to include or exclude (an empty one filters nothing). */
export function hasTagFilter(filter: TagFilter | undefined): boolean {
  return Boolean(filter?.include?.length || filter?.exclude?.length);
}

export function matchesTags(tags: readonly string[], filter: TagFilter | undefined): boolean {
  if (!filter) return true;
  const has = (pattern: string) => tags.some((tag) => tagMatches(tag, pattern));
  if (filter.include?.length && !filter.include.some(has)) return false;
  if (filter.exclude?.length && filter.exclude.some(has)) return false;
  return true;
}

export function matchesTypes(survey: Survey, types: ContentType[] | undefined, match: 'all' | 'any' = 'all'): boolean {
  if (!types?.length) return true;
  const present = (type: ContentType) => survey.assets[type] !== undefined;
  return match === 'all' ? types.every(present) : types.some(present);
}
