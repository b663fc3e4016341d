/**
 * The date and tag filters every survey question takes (coverage, tiles), as callers write them:
 * `since`/`until` a date or an age counted back from today, `include`/`exclude` tag lists. Parsed
 * into what SurveySearch takes, with errors naming the parameter; and applied to one survey where
 * no search is made (the survey tile endpoint). Pure.
 */
import { invalidParameter } from '../errors.js';
import { parseDateOrRelative } from '../geo/dates.js';
import { matchesTags, type TagFilter } from './catalogue.js';

/** Same rule as the ingest manifest's tags: `type` or `type:name`. */
const TAG = /^[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)?$/;

export interface DateRange {
  since?: string;
  until?: string;
}

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}...` : text;
}

/** `since`/`until`: a date or a relative age; `today` is asked only for an age. */
export function parseDateParameter(parameter: 'since' | 'until', text: string, today: () => string): string {
  const date = parseDateOrRelative(text.trim(), today());
  if (date === undefined) {
    throw invalidParameter(
      parameter,
      `${parameter} must be a date YYYY-MM-DD or a relative age such as 24M, 2Y or 30D, got ${JSON.stringify(clip(text, 80))}`,
    );
  }
  return date;
}

/**
 * Both ends of a date filter. `today` gives a `YYYY-MM-DD` (UTC) date and is asked at most once,
 * so since and until count from the same day even across midnight.
 */
export function parseDateRange(since: string | undefined, until: string | undefined, today: () => string): DateRange {
  let day: string | undefined;
  const once = () => {
    day ??= today();
    return day;
  };
  const range: DateRange = {
    since: since === undefined ? undefined : parseDateParameter('since', since, once),
    until: until === undefined ? undefined : parseDateParameter('until', until, once),
  };
  if (range.since !== undefined && range.until !== undefined && range.since > range.until) {
    throw invalidParameter('since', `since (${range.since}) is after until (${range.until}): no survey can match`);
  }
  return range;
}

/** A comma list of tags; empty entries and malformed tags are refused rather than ignored. */
function parseTags(name: 'include' | 'exclude', text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const tags = text.split(',').map((tag) => tag.trim());
  const bad = tags.find((tag) => !TAG.test(tag));
  if (bad !== undefined) {
    throw invalidParameter(
      name,
      `${name} must be a tag type or type:name (letters, digits, _ and -), or a comma list of them; got ${JSON.stringify(clip(bad, 40))}`,
    );
  }
  return [...new Set(tags)];
}

export function parseTagFilter(include: string | undefined, exclude: string | undefined): TagFilter | undefined {
  const included = parseTags('include', include);
  const excluded = parseTags('exclude', exclude);
  return included || excluded ? { include: included, exclude: excluded } : undefined;
}

/** The date and tag filters, applied to one survey. */
export function surveyMatches(
  survey: { captureDate: string; tags: readonly string[] },
  filter: DateRange & { tags?: TagFilter },
): boolean {
  if (filter.since !== undefined && survey.captureDate < filter.since) return false;
  if (filter.until !== undefined && survey.captureDate > filter.until) return false;
  return matchesTags(survey.tags, filter.tags);
}
