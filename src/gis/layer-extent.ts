/**
 * What a layer or a collection spans: the lon/lat box, the photo times, the zooms of one content
 * type and the capture dates, read from the catalogue's maintained groups (catalogue.ts
 * SurveyGroup), never from the surveys: at 100,000 surveys a layer is described from a few
 * thousand groups. `layerGroups` reads through the catalogue it is given; the rest is pure.
 */
import type { SurveyCatalogue, SurveyGroup, TagFilter } from '../catalogue/catalogue.js';
import type { ContentType, Survey } from '../catalogue/survey.js';
import { multiPolygonBounds } from '../geo/polygon.js';
import type { Bounds } from '../geo/web-mercator.js';

export interface LayerFilter {
  type?: ContentType;
  since?: string;
  until?: string;
  tags?: TagFilter;
}

export interface SurveysExtent {
  /** WGS84 box of the footprints; undefined when there are none. */
  bounds: Bounds | undefined;
  /** Earliest first photo and latest last photo. */
  start: string | undefined;
  end: string | undefined;
  /** Coarsest and deepest tile zoom of the type asked about (undefined without a type). */
  minZoom: number | undefined;
  maxZoom: number | undefined;
  /** Capture dates, newest first, without repeats. */
  captureDates: string[];
}

/**
 * The groups of the surveys a layer filter matches: with `include`, the groups of the tags it
 * names; else those of every survey, and with `everyTag` each tag's groups beside them. An
 * `exclude` is not applied: groups cannot subtract one tag's surveys from another's, so the
 * extent is then that of the layer before exclusion (a box and dates a little wide, never short).
 */
export function layerGroups(
  catalogue: Pick<SurveyCatalogue, 'groups'>,
  filter: LayerFilter,
  everyTag = false,
): Promise<SurveyGroup[]> {
  const include = filter.tags?.include;
  return catalogue.groups({
    type: filter.type,
    since: filter.since,
    until: filter.until,
    tags: include?.length ? include : everyTag ? 'all' : 'none',
  });
}

function union(a: Bounds | undefined, b: Bounds): Bounds {
  if (!a) return { ...b };
  return {
    minX: Math.min(a.minX, b.minX),
    minY: Math.min(a.minY, b.minY),
    maxX: Math.max(a.maxX, b.maxX),
    maxY: Math.max(a.maxY, b.maxY),
  };
}

/** The extent of the surveys in some groups (a survey in several of them counts once alike). */
export function extentOfGroups(groups: readonly SurveyGroup[]): SurveysExtent {
  let bounds: Bounds | undefined;
  let start: string | undefined;
  let end: string | undefined;
  let minZoom: number | undefined;
  let maxZoom: number | undefined;
  const dates = new Set<string>();
  for (const group of groups) {
    bounds = union(bounds, group.bounds);
    if (start === undefined || group.firstPhotoTime < start) start = group.firstPhotoTime;
    if (end === undefined || group.lastPhotoTime > end) end = group.lastPhotoTime;
    if (group.type !== '') {
      minZoom = Math.min(minZoom ?? group.minZoom, group.minZoom);
      maxZoom = Math.max(maxZoom ?? group.maxZoom, group.maxZoom);
    }
    dates.add(group.captureDate);
  }
  return { bounds, start, end, minZoom, maxZoom, captureDates: [...dates].sort().reverse() };
}

/** One survey's extent (its own TileJSON). */
export function surveyExtent(survey: Survey, type?: ContentType): SurveysExtent {
  const asset = type ? survey.assets[type] : undefined;
  return {
    bounds: multiPolygonBounds(survey.footprint),
    start: survey.firstPhotoTime,
    end: survey.lastPhotoTime,
    minZoom: asset?.minZoom,
    maxZoom: asset?.maxZoom,
    captureDates: [survey.captureDate],
  };
}

/** Groups by the layers they belong to: each tag's own, and its type's (`disaster` for `disaster:fire`). */
export function groupsByTag(groups: readonly SurveyGroup[]): Map<string, SurveyGroup[]> {
  const byTag = new Map<string, SurveyGroup[]>();
  const add = (tag: string, group: SurveyGroup) => {
    const list = byTag.get(tag);
    if (list) list.push(group);
    else byTag.set(tag, [group]);
  };
  for (const group of groups) {
    if (group.tag === '') continue;
    add(group.tag, group);
    const colon = group.tag.indexOf(':');
    if (colon > 0) add(group.tag.slice(0, colon), group);
  }
  return byTag;
}
