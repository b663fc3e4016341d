/**
 * Which two surveys a height change compares (DsmChange downloads and tiles): the later one
 * (after) and the earlier one (baseline), both with DetailDsm. One set of rules and refusals for
 * every entrance.
 */

import { compareNewestFirst, type SurveyCatalogue } from '../catalogue/catalogue.js';
import type { Asset, Survey } from '../catalogue/survey.js';
import { NadirError } from '../errors.js';
import type { Bounds } from '../geo/web-mercator.js';

/** A survey known to have a DetailDsm. */
export type DsmSurvey = Survey & { assets: { DetailDsm: Asset } };

export interface ChangePair {
  after: DsmSurvey;
  baseline: DsmSurvey;
}

/** How many surveys over an area are looked through for a default baseline or a filtered pair. */
export const MAX_PAIR_CANDIDATES = 1000;

type PairCatalogue = Pick<SurveyCatalogue, 'get' | 'search'>;

/** `parameter`: which request parameter named the id (for the error's `parameter`). */
export function requireDsm(survey: Survey | undefined, id: string, parameter: string): DsmSurvey {
  if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey with id "${id.slice(0, 64)}"`, { parameter });
  if (!survey.assets.DetailDsm) {
    throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no DetailDsm to compare`, { parameter });
  }
  return survey as DsmSurvey;
}

/**
 * `after` by id, and the baseline: the one asked for, which must be another survey captured
 * before it (the catalogue's order: captureDate, then lastPhotoTime), or else the newest such
 * survey with DetailDsm whose footprint meets `area` (WGS84).
 */
export async function pairById(
  catalogue: PairCatalogue,
  afterId: string,
  baselineId: string | undefined,
  area: Bounds,
  afterParameter: string,
): Promise<ChangePair> {
  const after = requireDsm(await catalogue.get(afterId), afterId, afterParameter);
  if (baselineId !== undefined) {
    if (baselineId === after.id) {
      throw new NadirError('SAME_SURVEY', 'baseline is the survey itself: a change needs two surveys', {
        parameter: 'baseline',
      });
    }
    const baseline = requireDsm(await catalogue.get(baselineId), baselineId, 'baseline');
    if (compareNewestFirst(after, baseline) >= 0) {
      throw new NadirError(
        'BASELINE_NOT_EARLIER',
        `baseline ${baseline.id} (${baseline.captureDate}) was not captured before ${after.id} (${after.captureDate}): ` +
          'the later survey comes first',
        { parameter: 'baseline' },
      );
    }
    return { after, baseline };
  }
  const { surveys } = await catalogue.search({
    area,
    types: ['DetailDsm'],
    until: after.captureDate,
    order: 'newest',
    limit: MAX_PAIR_CANDIDATES,
    offset: 0,
  });
  const baseline = surveys.find((survey) => compareNewestFirst(after, survey) < 0);
  if (!baseline) {
    throw new NadirError(
      'NO_BASELINE',
      `No survey with DetailDsm captured before ${after.captureDate} covers this area: nothing to compare ${after.id} with`,
    );
  }
  return { after, baseline: baseline as DsmSurvey };
}
