/**
 * The catalogue's maintained aggregates (catalogue.ts SurveyGroup), the parts both engines share:
 * which content types get groups, a new survey's groups, and a group row read back. Each engine
 * keeps its groups exact inside the transaction of every put and delete: a new survey is merged
 * into its groups (counts add, boxes and times widen), while a replacement or a delete, which can
 * shrink a group, recomputes the groups of the capture dates it touched from their surveys. The
 * migration builds the groups of surveys already there, and bulk loaders that bypass `put` run
 * the same rebuild.
 */
import type { Bounds } from '../geo/web-mercator.js';
import type { SurveyGroup, SurveySpan, TagExtent } from './catalogue.js';
import { CONTENT_TYPES, type ContentType, type Survey } from './survey.js';
import { typeMask } from './survey-rows.js';

/** `(name, bit)` of every content type and of `''` (any type, bit 0), as SQL VALUES rows. */
export function groupTypeValues(): string {
  const rows = [`('', 0)`, ...CONTENT_TYPES.map((type) => `('${type}', ${typeMask([type])})`)];
  return rows.join(', ');
}

/** The columns of a SurveySpan, as both engines select them (a group's, or a tag's merged). */
interface SpanRow {
  surveys: number | string;
  min_x: number;
  min_y: number;
  max_x: number;
  max_y: number;
  first_photo_time: string;
  last_photo_time: string;
  min_zoom: number;
  max_zoom: number;
}

function spanOf(row: SpanRow): SurveySpan {
  return {
    surveys: Number(row.surveys),
    bounds: { minX: row.min_x, minY: row.min_y, maxX: row.max_x, maxY: row.max_y },
    firstPhotoTime: row.first_photo_time,
    lastPhotoTime: row.last_photo_time,
    minZoom: row.min_zoom,
    maxZoom: row.max_zoom,
  };
}

/** A group as both engines select it. */
export interface GroupRow extends SpanRow {
  content_type: string;
  tag: string;
  capture_date: string;
}

export const GROUP_COLUMNS =
  'content_type, tag, capture_date, surveys, min_x, min_y, max_x, max_y, first_photo_time, last_photo_time, min_zoom, max_zoom';

export function toGroup(row: GroupRow): SurveyGroup {
  return { type: row.content_type as ContentType | '', tag: row.tag, captureDate: row.capture_date, ...spanOf(row) };
}

/** A tag's groups merged (both engines select these columns, `dates` comma-joined). */
export interface TagExtentRow extends SpanRow {
  tag: string;
  dates: string;
}

export const TAG_EXTENT_COLUMNS = `tag, sum(surveys) AS surveys, min(min_x) AS min_x, min(min_y) AS min_y,
  max(max_x) AS max_x, max(max_y) AS max_y, min(first_photo_time) AS first_photo_time,
  max(last_photo_time) AS last_photo_time, min(min_zoom) AS min_zoom, max(max_zoom) AS max_zoom`;

export function toTagExtent(row: TagExtentRow): TagExtent {
  return { tag: row.tag, captureDates: row.dates.split(','), ...spanOf(row) };
}

/** Tag patterns with and without a type part: `disaster` also matches `disaster:*` tags. */
export function splitPatterns(patterns: readonly string[]): { exact: string[]; typed: string[] } {
  return { exact: [...patterns], typed: patterns.filter((pattern) => !pattern.includes(':')) };
}

/** The groups one survey belongs to, each as if it were its only survey. */
export function groupsOfSurvey(survey: Survey, box: Bounds): SurveyGroup[] {
  const types: (ContentType | '')[] = ['', ...CONTENT_TYPES.filter((type) => survey.assets[type])];
  const tags = ['', ...new Set(survey.tags)];
  return types.flatMap((type) => {
    const asset = type === '' ? undefined : survey.assets[type];
    return tags.map((tag) => ({
      type,
      tag,
      captureDate: survey.captureDate,
      surveys: 1,
      bounds: box,
      firstPhotoTime: survey.firstPhotoTime,
      lastPhotoTime: survey.lastPhotoTime,
      minZoom: asset?.minZoom ?? 0,
      maxZoom: asset?.maxZoom ?? 0,
    }));
  });
}
