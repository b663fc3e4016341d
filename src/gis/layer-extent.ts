/**
 * What a layer or a collection spans: the lon/lat box, the photo times, the zooms of one content
 * type and the capture dates, read from the catalogue's maintained groups (catalogue.ts
 * SurveyGroup) merged a row a tag, never from the surveys: at 100,000 surveys and 1,000 tags a
 * layer list is made from 1,001 rows. `layerExtents` reads through the catalogue it is given;
 * the rest is pure.
 */
import type { SurveyCatalogue, TagExtent, TagFilter } from '../catalogue/catalogue.js';
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
 * The extents of the surveys a layer filter matches, a row a tag (catalogue.ts `extents`): with
 * `include`, the tags it names; else every survey's (tag `''`), and with `everyTag` each tag's
 * beside it. An `exclude` is not applied: groups cannot subtract one tag's surveys from another's,
 * so the extent is then that of the layer before exclusion (a box and dates a little wide, never
 * short).
 */
export function layerExtents(
  catalogue: Pick<SurveyCatalogue, 'extents'>,
  filter: LayerFilter,
  everyTag = false,
): Promise<TagExtent[]> {
  const include = filter.tags?.include;
  return catalogue.extents({
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

/**
 * The extent of the surveys of some tags' rows (a survey under several of them counts once
 * alike). `typed`: the rows are of one content type, whose zooms they carry.
 */
export function extentOf(rows: readonly TagExtent[], typed: boolean): SurveysExtent {
  let bounds: Bounds | undefined;
  let start: string | undefined;
  let end: string | undefined;
  let minZoom: number | undefined;
  let maxZoom: number | undefined;
  for (const row of rows) {
    bounds = union(bounds, row.bounds);
    if (start === undefined || row.firstPhotoTime < start) start = row.firstPhotoTime;
    if (end === undefined || row.lastPhotoTime > end) end = row.lastPhotoTime;
    if (typed) {
      minZoom = Math.min(minZoom ?? row.minZoom, row.minZoom);
      maxZoom = Math.max(maxZoom ?? row.maxZoom, row.maxZoom);
    }
  }
  // Each row's dates are newest first already: one row needs no merge.
  const captureDates =
    rows.length === 1
      ? [...(rows[0] as TagExtent).captureDates]
      : [...new Set(rows.flatMap((row) => row.captureDates))].sort().reverse();
  return { bounds, start, end, minZoom, maxZoom, captureDates };
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

/** Tags' rows by the layers they belong to: each tag's own, and its type's (`disaster` for `disaster:fire`). */
export function extentsByLayer(rows: readonly TagExtent[]): Map<string, TagExtent[]> {
  const byLayer = new Map<string, TagExtent[]>();
  const add = (layer: string, row: TagExtent) => {
    const list = byLayer.get(layer);
    if (list) list.push(row);
    else byLayer.set(layer, [row]);
  };
  for (const row of rows) {
    if (row.tag === '') continue;
    add(row.tag, row);
    const colon = row.tag.indexOf(':');
    if (colon > 0) add(row.tag.slice(0, colon), row);
  }
  return byLayer;
}
