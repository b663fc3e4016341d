/**
 * The engine-independent half of `SurveyCatalogue.walk`: batches of candidates in order, the
 * caller's further test, the page and where the next one begins. Each engine reads its batches
 * (an index walk in order, or every candidate of a small area at once); the rest is here, so both
 * engines page alike.
 */
import { compareInOrder, type SurveyOrderKey, type SurveyWalk, type SurveyWalkPage } from './catalogue.js';
import type { Survey } from './survey.js';

/** The surveys of one batch that passed the engine's own tests, in order. */
export interface WalkBatch {
  surveys: Survey[];
  /** The last place the engine read, passed or not (the next batch starts after it). */
  last: SurveyOrderKey | undefined;
  /** Rows read, passed or not. */
  rows: number;
  /** Nothing is left after `last`. */
  exhausted: boolean;
}

/** Reads up to `rows` candidates after `after`. */
export type WalkBatchReader = (after: SurveyOrderKey | undefined, rows: number) => Promise<WalkBatch>;

const MIN_BATCH = 32;
const MAX_BATCH = 1000;

export function orderKeyOf({ captureDate, lastPhotoTime, id }: SurveyOrderKey): SurveyOrderKey {
  return { captureDate, lastPhotoTime, id };
}

/** Whether `key` comes after `after` in `order` (every key does when `after` is absent). */
export function isAfter(key: SurveyOrderKey, after: SurveyOrderKey | undefined, order: SurveyWalk['order']): boolean {
  return after === undefined || compareInOrder(after, key, order) < 0;
}

/**
 * One page of a walk. It reads one survey past the page when it can, so a full page says whether
 * anything follows; a walk stopped by `maxExamined` resumes after the last row it read.
 */
export async function walkSurveys(query: SurveyWalk, read: WalkBatchReader): Promise<SurveyWalkPage> {
  if (!(query.limit >= 1)) return { surveys: [], resume: query.after };
  const kept: Survey[] = [];
  const maxExamined = query.maxExamined ?? Number.POSITIVE_INFINITY;
  let after = query.after;
  let examined = 0;
  for (;;) {
    const wanted = 2 * (query.limit + 1 - kept.length);
    const rows = Math.max(1, Math.min(MAX_BATCH, Math.max(MIN_BATCH, wanted), maxExamined - examined));
    const batch = await read(after, rows);
    examined += batch.rows;
    for (const survey of batch.surveys) {
      if (query.keep && !query.keep(survey)) continue;
      if (kept.length === query.limit) return { surveys: kept, resume: orderKeyOf(kept.at(-1) as Survey) };
      kept.push(survey);
    }
    if (batch.exhausted || batch.last === undefined) return { surveys: kept };
    if (examined >= maxExamined) return { surveys: kept, resume: batch.last };
    after = batch.last;
  }
}
