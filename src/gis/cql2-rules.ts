/** What CQL2's two halves share (cql2-text.ts reads the text encoding, cql2.ts checks and compiles): limits, the queryables' shapes, the error. */
import { invalidParameter, type NadirError } from '../errors.js';
import type { MultiPolygon } from '../geo/polygon.js';

/** Characters of a filter, in either encoding, and how deep its expressions nest. */
export const MAX_FILTER_LENGTH = 20_000;
export const MAX_DEPTH = 40;

export type Cql2Language = 'cql2-text' | 'cql2-json';

/** What a queryable holds: the kinds compared, and an item's values of them. */
export type QueryableKind = 'string' | 'number' | 'instant' | 'date' | 'strings' | 'geometry';

export interface Queryable {
  kind: QueryableKind;
  /** An instant that stands for the item's span in T_INTERSECTS (STAC's `datetime` with start and end). */
  spans?: boolean;
  description: string;
}

/** An item as a filter sees it: its queryables' values (instants as ms since the epoch). */
export interface Cql2Item {
  values: Record<string, string | number | string[] | null | undefined>;
  geometry: MultiPolygon;
  /** The photo span, for T_INTERSECTS on `datetime`. */
  span: [number, number];
}

/** A compiled filter: whether an item passes. */
export type Cql2Test = (item: Cql2Item) => boolean;

/** A filter refused: a 400 naming `filter`. */
export function bad(message: string): NadirError {
  return invalidParameter('filter', `filter: ${message}`);
}
