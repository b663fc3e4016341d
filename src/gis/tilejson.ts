/**
 * TileJSON 3.0.0 (https://github.com/mapbox/tilejson-spec/tree/master/3.0.0) of a tile layer
 * and filter: what MapLibre, Leaflet plugins and QGIS need to add the layer from one URL. Bounds
 * and zooms are those of the surveys the filter matches. Pure.
 */
import type { TileType } from '../catalogue/survey.js';
import { type GisLinks, linkTo } from './gis-links.js';
import type { SurveysExtent } from './layer-extent.js';
import type { LayerFilterQuery } from './layer-filter.js';

export const TILEJSON_VERSION = '3.0.0';
export const ATTRIBUTION = 'Aerial imagery served by nadir';

export interface TileJson {
  tilejson: string;
  name: string;
  description: string;
  attribution: string;
  scheme: 'xyz';
  tiles: string[];
  minzoom?: number;
  maxzoom?: number;
  bounds?: [number, number, number, number];
  center?: [number, number, number];
}

/** The XYZ template of a layer: every matching survey, or one survey's own tiles. */
export function xyzTemplate(links: GisLinks, type: TileType, filter: LayerFilterQuery, surveyId?: string): string {
  // `img`: JPEG where the tile is full, PNG (transparent) at the edges of the surveys.
  const layer = surveyId === undefined ? type : `surveys/${surveyId}/${type}`;
  return linkTo(links, `/tiles/v3/${layer}/{z}/{x}/{y}.img`, { ...filter });
}

export function tileJson(
  links: GisLinks,
  type: TileType,
  filter: LayerFilterQuery,
  extent: SurveysExtent,
  surveyId?: string,
): TileJson {
  const panorama = type !== 'Vert';
  const json: TileJson = {
    tilejson: TILEJSON_VERSION,
    name: surveyId === undefined ? `nadir ${type}` : `nadir ${type} of survey ${surveyId}`,
    description: panorama
      ? `${type} panorama tiles: the ${type.toLowerCase()}-looking oblique mosaic, rotated so that ${type.toLowerCase()} is up (docs/tiles.md); a plain XYZ map shows them turned.`
      : surveyId === undefined
        ? 'Vertical imagery, the newest matching survey on top.'
        : 'Vertical imagery of one survey.',
    attribution: ATTRIBUTION,
    scheme: 'xyz',
    tiles: [xyzTemplate(links, type, filter, surveyId)],
  };
  if (extent.minZoom !== undefined && extent.maxZoom !== undefined) {
    json.minzoom = extent.minZoom;
    json.maxzoom = extent.maxZoom;
  }
  if (extent.bounds) {
    const { minX, minY, maxX, maxY } = extent.bounds;
    json.bounds = [minX, minY, maxX, maxY];
    const zoom = Math.max(json.minzoom ?? 0, (json.maxzoom ?? 2) - 2);
    json.center = [(minX + maxX) / 2, (minY + maxY) / 2, zoom];
  }
  return json;
}
