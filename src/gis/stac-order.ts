/** The one collection: every survey is an item of it. */
export const SURVEYS_COLLECTION = 'surveys';

/**
 * What STAC items are sorted and filtered by: the sortable fields and the catalogue's own order
 * among them, the queryables a CQL2 filter may name and a survey's values of them. Pure.
 */
import { compareInOrder } from '../catalogue/catalogue.js';
import type { Survey } from '../catalogue/survey.js';
import type { Cql2Item, Queryable } from './cql2.js';

/** The fields a result sorts by: the items' properties (and `id`), and how to read each from a survey. */
export const SORTABLE: Readonly<Record<string, (survey: Survey) => string | number | undefined>> = {
  id: (survey) => survey.id,
  datetime: (survey) => survey.firstPhotoTime,
  start_datetime: (survey) => survey.firstPhotoTime,
  end_datetime: (survey) => survey.lastPhotoTime,
  gsd: (survey) => finestGsd(survey),
  'nadir:capture_date': (survey) => survey.captureDate,
};

export interface SortKey {
  field: string;
  direction: 'asc' | 'desc';
}

/** The catalogue's order (decisions.md): newest capture date first, then last photo, then id. */
const NEWEST_ORDER: readonly SortKey[] = [
  { field: 'nadir:capture_date', direction: 'desc' },
  { field: 'end_datetime', direction: 'desc' },
  { field: 'id', direction: 'asc' },
];

/**
 * The catalogue order a sort is (its keys a start of the newest-first order, or of its exact
 * reverse), or undefined when it is none: then the sort is made here.
 */
export function catalogueOrder(sortby: readonly SortKey[] | undefined): 'newest' | 'oldest' | undefined {
  if (!sortby) return 'newest';
  const startOf = (order: readonly SortKey[]) =>
    sortby.length <= order.length &&
    sortby.every((key, i) => key.field === order[i]?.field && key.direction === order[i]?.direction);
  if (startOf(NEWEST_ORDER)) return 'newest';
  const flipped = NEWEST_ORDER.map(
    ({ field, direction }): SortKey => ({
      field,
      direction: direction === 'asc' ? 'desc' : 'asc',
    }),
  );
  return startOf(flipped) ? 'oldest' : undefined;
}

/** Surveys in a sort's order; ties (and missing values, last) in the catalogue's order. */
export function sortComparator(sortby: readonly SortKey[]): (a: Survey, b: Survey) => number {
  return (a, b) => {
    for (const { field, direction } of sortby) {
      const read = SORTABLE[field] as (survey: Survey) => string | number | undefined;
      const [x, y] = [read(a), read(b)];
      if (x === y) continue;
      if (x === undefined) return 1;
      if (y === undefined) return -1;
      const order = x < y ? -1 : 1;
      return direction === 'asc' ? order : -order;
    }
    return compareInOrder(a, b, 'newest');
  };
}

/** The finest GSD of a survey's products, as its item says. */
export function finestGsd(survey: Survey): number | undefined {
  const gsds = Object.values(survey.assets).map((asset) => asset.gsd);
  return gsds.length ? Math.round(Math.min(...gsds) * 1e6) / 1e6 : undefined;
}

/** The properties a filter may name (the queryables document says the same). */
export const QUERYABLES: Readonly<Record<string, Queryable>> = {
  id: { kind: 'string', description: 'The survey id' },
  collection: { kind: 'string', description: 'The collection: surveys' },
  geometry: { kind: 'geometry', description: 'The footprint (S_INTERSECTS)' },
  datetime: {
    kind: 'instant',
    spans: true,
    description: 'The first photo; T_INTERSECTS meets the whole photo span (start_datetime to end_datetime)',
  },
  start_datetime: { kind: 'instant', description: 'The first photo' },
  end_datetime: { kind: 'instant', description: 'The last photo' },
  gsd: { kind: 'number', description: 'The finest ground sample distance of its products, metres' },
  'nadir:capture_date': { kind: 'date', description: 'The local date of the capture' },
  'nadir:tags': { kind: 'strings', description: 'Tags, each type or type:name (A_CONTAINS, A_OVERLAPS, ...)' },
  'nadir:content_types': {
    kind: 'strings',
    description: 'Its products: Vert, North, South, East, West, TrueOrtho, DetailDsm',
  },
  'nadir:version': { kind: 'number', description: 'The version of its files' },
  'nadir:timezone': { kind: 'string', description: 'The time zone of the capture, when known' },
};

/** A survey as a filter sees it (its item's values). */
export function cql2ItemOf(survey: Survey): Cql2Item {
  const first = Date.parse(survey.firstPhotoTime);
  const last = Date.parse(survey.lastPhotoTime);
  return {
    values: {
      id: survey.id,
      collection: SURVEYS_COLLECTION,
      datetime: first,
      start_datetime: first,
      end_datetime: last,
      gsd: finestGsd(survey),
      'nadir:capture_date': survey.captureDate,
      'nadir:tags': survey.tags,
      'nadir:content_types': Object.keys(survey.assets),
      'nadir:version': survey.version,
      'nadir:timezone': survey.timezone,
    },
    geometry: survey.footprint,
    span: [first, last],
  };
}
