import { LruCache } from '../cache/lru.js';
import { OnceATurn } from '../cache/once-a-turn.js';
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import { aoiLonLatBounds } from '../geo/aoi.js';
import type { CoverageRequest } from './coverage-request.js';
import { coverageBodyHead, surveyJsonText } from './survey-json.js';

/**
 * The catalogue's part of a coverage answer: the response body up to the transaction token, as
 * bytes (survey-json.ts), and the total. Remembered by request (everything that decides the page,
 * nothing about the caller: the catalogue answers every account alike) until the catalogue's
 * change marker moves, which it does for every survey put or deleted by this process or another
 * one sharing the store (a SQLite file's other connections, PostgreSQL's change notifications);
 * the marker is asked once per turn of the event loop, as the tile path asks it (once-a-turn.ts).
 * Map clients ask again and again for the same places; each such repeat then costs no search and
 * no serialisation. The transaction token is never part of it: each request gets its own.
 */
export interface CoveragePage {
  /** The body up to the token's value: the surveys, limit, offset and total (coverageBodyHead). */
  bodyHead: Buffer;
  total: number;
}

export interface CoverageAnswersOptions {
  /** Memory for remembered pages, MiB (0 remembers nothing). */
  maxMb: number;
}

/** Entries, whatever they weigh: bounds the Map itself when pages are empty (most of the world). */
const MAX_ENTRIES = 200_000;
/** What an entry costs besides its text: the key, the Map entry, the objects around them. */
const ENTRY_OVERHEAD_BYTES = 200;

export class CoverageAnswers {
  readonly #catalogue: Pick<SurveyCatalogue, 'search' | 'changeMarker'>;
  readonly #cache: LruCache<Promise<CoveragePage>> | undefined;
  readonly #weights = new WeakMap<Promise<CoveragePage>, number>();
  readonly #changeMarker: OnceATurn<string>;
  #marker: string | undefined;

  constructor(catalogue: Pick<SurveyCatalogue, 'search' | 'changeMarker'>, options: CoverageAnswersOptions) {
    this.#catalogue = catalogue;
    this.#changeMarker = new OnceATurn(() => catalogue.changeMarker());
    const maxWeight = options.maxMb * 2 ** 20;
    this.#cache =
      maxWeight > 0
        ? new LruCache({
            maxEntries: MAX_ENTRIES,
            maxWeight,
            // A page in flight weighs its key until it is known (then it is set again, weighed).
            weigh: (page) => this.#weights.get(page) ?? ENTRY_OVERHEAD_BYTES,
          })
        : undefined;
  }

  async page(query: CoverageRequest): Promise<CoveragePage> {
    const cache = this.#cache;
    if (!cache) return this.#search(query);
    // A survey put elsewhere shows from the next turn of the event loop on; one put by this
    // process moves the marker at once, but a turn that already asked keeps what it read.
    const marker = this.#changeMarker.get();
    if (marker !== this.#marker) {
      cache.clear();
      this.#marker = marker;
    }
    const key = keyOf(query);
    let page = cache.get(key);
    if (!page) {
      const searched = this.#search(query);
      page = searched;
      cache.set(key, searched);
      searched.then(
        (answer) => {
          // Weighed once known, if still the one remembered (not cleared or replaced meanwhile).
          if (cache.get(key) !== searched) return;
          this.#weights.set(searched, ENTRY_OVERHEAD_BYTES + key.length + answer.bodyHead.length);
          cache.set(key, searched);
        },
        () => cache.delete(key),
      );
    }
    return page;
  }

  async #search(query: CoverageRequest): Promise<CoveragePage> {
    const page = await this.#catalogue.search({
      area: aoiLonLatBounds(query.aoi),
      overlap: query.overlap,
      since: query.since,
      until: query.until,
      types: query.types,
      typeMatch: query.typeMatch,
      limit: query.limit,
      offset: query.offset,
      // The answer shows no footprint and no file: listings spare reading each survey's document.
      view: 'listing',
    });
    const surveys = page.surveys.map((survey) => surveyJsonText(survey, query.types, query.fields));
    return { bodyHead: coverageBodyHead(`[${surveys.join(',')}]`, { ...query, total: page.total }), total: page.total };
  }
}

/**
 * Everything of the request that decides the page. The types and fields are sets (their order
 * changes nothing in the answer), written in the order the parser kept. ASCII only (numbers,
 * checked dates and names from the schema's lists), so V8 holds it at a byte a character.
 */
function keyOf(query: CoverageRequest): string {
  const { aoi } = query;
  return `${aoi.lon},${aoi.lat},${aoi.radius}|${query.types.join(',')}|${query.typeMatch}|${query.overlap}|${query.since ?? ''}|${query.until ?? ''}|${[...query.fields].join(',')}|${query.limit}|${query.offset}`;
}
