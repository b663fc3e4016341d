/**
 * The map layers the GIS documents list (TileJSON, WMTS, STAC), one name for both kinds of tile:
 * the imagery layers of the tile core (Vert, the panoramas, TrueOrtho) and the DetailDsm layers of
 * the height tile core, one per style (issue 34, item 4). Pure.
 */
import type { ContentType, TileType } from '../catalogue/survey.js';
import { HEIGHT_STYLES, type HeightStyle } from '../height-tiles/height-styles.js';

export type MapLayer = { type: TileType; style?: undefined } | { type: 'DetailDsm'; style: HeightStyle };

/** The DetailDsm layers, as TileJSON, WMTS and STAC list them. */
export const HEIGHT_LAYERS: readonly MapLayer[] = HEIGHT_STYLES.map((style) => ({ type: 'DetailDsm', style }));

/** The layer's path under /tiles/v3/ (and /tiles/v3/surveys/{id}/): `Vert`, `DetailDsm/relief`. */
export function layerPath(layer: MapLayer): string {
  return layer.style === undefined ? layer.type : `${layer.type}/${layer.style}`;
}

/** The asset the layer draws. */
export function layerContentType(layer: MapLayer): ContentType {
  return layer.type;
}

/**
 * The tiles' file extension: `img` for imagery (JPEG where the tile is full, PNG with
 * transparency at the edges of the surveys), `png` for heights.
 */
export function layerExtension(layer: MapLayer): 'img' | 'png' {
  return layer.style === undefined ? 'img' : 'png';
}

/** `Vert`, `DetailDsm relief`. */
export function layerName(layer: MapLayer): string {
  return layer.style === undefined ? layer.type : `${layer.type} ${layer.style}`;
}

const HEIGHT_DESCRIPTIONS: Record<HeightStyle, string> = {
  relief:
    "Surface heights (DetailDsm) as a colour ramp (viridis) over the survey's own height range; transparent where there is none.",
  hillshade:
    'Surface heights (DetailDsm) as a grey hillshade, light from the north-west; transparent where there is none.',
  'terrain-rgb':
    'Surface heights (DetailDsm) as Mapbox Terrain-RGB (height = -10000 + (R x 65536 + G x 256 + B) x 0.1 m), for a MapLibre raster-dem source with encoding "mapbox".',
};

export function layerDescription(layer: MapLayer, surveyId: string | undefined): string {
  if (layer.style !== undefined) return `${HEIGHT_DESCRIPTIONS[layer.style]} A nadir extension.`;
  const { type } = layer;
  if (type === 'TrueOrtho') {
    return surveyId === undefined
      ? 'True orthophotos (no building lean), the newest matching survey on top. A nadir extension.'
      : 'The true orthophoto of one survey. A nadir extension.';
  }
  if (type !== 'Vert') {
    return `${type} panorama tiles: the ${type.toLowerCase()}-looking oblique mosaic, rotated so that ${type.toLowerCase()} is up (docs/tiles.md); a plain XYZ map shows them turned.`;
  }
  return surveyId === undefined
    ? 'Vertical imagery, the newest matching survey on top.'
    : 'Vertical imagery of one survey.';
}
