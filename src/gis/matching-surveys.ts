/**
 * The surveys a layer or a collection is made of, and what they span together: the lon/lat box,
 * the photo times, the zooms of one content type. TileJSON, WMTS and the STAC collection describe
 * these. `matchingSurveys` reads through the catalogue it is given; the rest is pure.
 */
import type { SurveyCatalogue, TagFilter } from '../catalogue/catalogue.js';
import type { ContentType, Survey } from '../catalogue/survey.js';
import { multiPolygonBounds } from '../geo/polygon.js';
import type { Bounds } from '../geo/web-mercator.js';

/**
 * Surveys read to describe a layer. A catalogue bigger than this is described by its newest
 * surveys, and the extent is then the whole world (`complete: false`): a client told too small a
 * box would never ask for the tiles outside it.
 */
export const MAX_DESCRIBED_SURVEYS = 10_000;
const WORLD: Bounds = { minX: -180, minY: -90, maxX: 180, maxY: 90 };

export interface LayerFilter {
  type?: ContentType;
  since?: string;
  until?: string;
  tags?: TagFilter;
}

export interface MatchingSurveys {
  surveys: Survey[];
  /** Whether `surveys` is every match, not only the newest MAX_DESCRIBED_SURVEYS. */
  complete: boolean;
}

export async function matchingSurveys(
  catalogue: Pick<SurveyCatalogue, 'search'>,
  filter: LayerFilter,
): Promise<MatchingSurveys> {
  const page = await catalogue.search({
    area: WORLD,
    since: filter.since,
    until: filter.until,
    tags: filter.tags,
    types: filter.type ? [filter.type] : undefined,
    limit: MAX_DESCRIBED_SURVEYS,
    offset: 0,
  });
  return { surveys: page.surveys, complete: page.total <= page.surveys.length };
}

export interface SurveysExtent {
  /** WGS84 box of the footprints; the world when the list is incomplete; undefined when empty. */
  bounds: Bounds | undefined;
  /** Earliest first photo and latest last photo. */
  start: string | undefined;
  end: string | undefined;
  /** Coarsest and deepest tile zoom of `type` among the surveys (when a type is asked about). */
  minZoom: number | undefined;
  maxZoom: number | undefined;
  /** Capture dates, newest first, without repeats. */
  captureDates: string[];
}

export function surveysExtent({ surveys, complete }: MatchingSurveys, type?: ContentType): SurveysExtent {
  let bounds: Bounds | undefined;
  let start: string | undefined;
  let end: string | undefined;
  let minZoom: number | undefined;
  let maxZoom: number | undefined;
  for (const survey of surveys) {
    const box = multiPolygonBounds(survey.footprint);
    bounds = bounds
      ? {
          minX: Math.min(bounds.minX, box.minX),
          minY: Math.min(bounds.minY, box.minY),
          maxX: Math.max(bounds.maxX, box.maxX),
          maxY: Math.max(bounds.maxY, box.maxY),
        }
      : box;
    if (start === undefined || survey.firstPhotoTime < start) start = survey.firstPhotoTime;
    if (end === undefined || survey.lastPhotoTime > end) end = survey.lastPhotoTime;
    const asset = type ? survey.assets[type] : undefined;
    if (asset) {
      minZoom = Math.min(minZoom ?? asset.minZoom, asset.minZoom);
      maxZoom = Math.max(maxZoom ?? asset.maxZoom, asset.maxZoom);
    }
  }
  const captureDates = [...new Set(surveys.map((survey) => survey.captureDate))].sort().reverse();
  return { bounds: complete || !bounds ? bounds : WORLD, start, end, minZoom, maxZoom, captureDates };
}
