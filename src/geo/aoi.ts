import { type Bounds, groundScale, lonLatToMercator, mercatorToLonLat } from './web-mercator.js';

/** An area of interest: a centre point and a radius in ground metres (decisions.md: a square). */
export interface Aoi {
  lon: number;
  lat: number;
  radius: number;
}

export const MAX_RADIUS = 100;

/**
 * The AOI square in EPSG:3857: side 2 x radius ground metres, which is 2 x radius / cos(lat)
 * Mercator metres, centred on the point's Mercator position.
 */
export function aoiMercatorBounds(aoi: Aoi): Bounds {
  const [cx, cy] = lonLatToMercator(aoi.lon, aoi.lat);
  const half = aoi.radius / groundScale(aoi.lat);
  return { minX: cx - half, minY: cy - half, maxX: cx + half, maxY: cy + half };
}

/** The same square as a WGS84 lon/lat rectangle (exact: Mercator maps axis-aligned boxes to boxes). */
export function aoiLonLatBounds(aoi: Aoi): Bounds {
  return mercatorBoundsToLonLat(aoiMercatorBounds(aoi));
}

export function mercatorBoundsToLonLat(b: Bounds): Bounds {
  const [minX, minY] = mercatorToLonLat(b.minX, b.minY);
  const [maxX, maxY] = mercatorToLonLat(b.maxX, b.maxY);
  return { minX, minY, maxX, maxY };
}
