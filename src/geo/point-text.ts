import { invalidParameter } from '../errors.js';
import { MAX_LATITUDE } from './web-mercator.js';

/**
 * Points and numbers as the API's text gives them. Decimal and exponent forms (`1e-05`, as
 * Python's str() prints small floats) are numbers; `0x10`, `Infinity` or `1,5` are not, where
 * `Number()` or ajv's coercion would take some of them.
 */

const DECIMAL = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

export function parseDecimal(text: string): number | undefined {
  return DECIMAL.test(text) ? Number(text) : undefined;
}

/**
 * `lon,lat` in WGS84 degrees. Latitude stops at the Web Mercator limit (+-85.0511): the service
 * has imagery only in EPSG:3857, and the AOI square is not defined nearer the poles.
 */
export function parsePoint(text: string): { lon: number; lat: number } {
  const parts = text.split(',');
  const [lon, lat] = parts.map((part) => parseDecimal(part));
  if (parts.length !== 2 || lon === undefined || lat === undefined) {
    throw invalidParameter(
      'point',
      `point must be longitude,latitude in decimal degrees (e.g. -89.5417,44.1188), got ${JSON.stringify(clipped(text))}`,
    );
  }
  if (!(lon >= -180 && lon <= 180)) {
    throw invalidParameter('point', `point longitude must be from -180 to 180, got ${lon}`);
  }
  if (!(lat >= -MAX_LATITUDE && lat <= MAX_LATITUDE)) {
    throw invalidParameter(
      'point',
      `point latitude must be from -${MAX_LATITUDE} to ${MAX_LATITUDE} (the Web Mercator limit), got ${lat}`,
    );
  }
  return { lon, lat };
}

function clipped(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}
