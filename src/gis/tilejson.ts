/**
 * TileJSON 3.0.0 (https://github.com/mapbox/tilejson-spec/tree/master/3.0.0) of a tile layer
 * (imagery or heights, gis/map-layers.ts) and filter: what MapLibre, Leaflet plugins and QGIS need to add the layer from one URL. Bounds
 * and zooms are those of the surveys the filter matches. Pure.
 */
import { type GisLinks, linkTo } from './gis-links.js';
import type { SurveysExtent } from './layer-extent.js';
import type { LayerFilterQuery } from './layer-filter.js';
import { layerDescription, layerExtension, layerName, layerPath, type MapLayer } from './map-layers.js';

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
  encoding?: 'mapbox';
}

/** The XYZ template of a layer: every matching survey, or one survey's own tiles. */
export function xyzTemplate(links: GisLinks, layer: MapLayer, filter: LayerFilterQuery, surveyId?: string): string {
  const path = surveyId === undefined ? layerPath(layer) : `surveys/${surveyId}/${layerPath(layer)}`;
  return linkTo(links, `/tiles/v3/${path}/{z}/{x}/{y}.${layerExtension(layer)}`, { ...filter });
}

/** The TileJSON of a layer: every matching survey, or one survey's own tiles. */
export function tileJsonUrl(links: GisLinks, layer: MapLayer, surveyId?: string): string {
  const path = surveyId === undefined ? layerPath(layer) : `surveys/${surveyId}/${layerPath(layer)}`;
  return linkTo(links, `/tiles/v3/${path}/tilejson.json`);
}

export function tileJson(
  links: GisLinks,
  layer: MapLayer,
  filter: LayerFilterQuery,
  extent: SurveysExtent,
  surveyId?: string,
): TileJson {
  const name = layerName(layer);
  const json: TileJson = {
    tilejson: TILEJSON_VERSION,
    name: surveyId === undefined ? `nadir ${name}` : `nadir ${name} of survey ${surveyId}`,
    description: layerDescription(layer, surveyId),
    attribution: ATTRIBUTION,
    scheme: 'xyz',
    tiles: [xyzTemplate(links, layer, filter, surveyId)],
  };
  // MapLibre's raster-dem source reads it from the style; TileJSON readers that know it take it here.
  if (layer.style === 'terrain-rgb') json.encoding = 'mapbox';
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
