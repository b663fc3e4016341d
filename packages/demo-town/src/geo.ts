/**
 * Where the demo town is and how its coordinate frames relate.
 *
 * Three frames:
 *  - WGS84 lon/lat (what landmarks are published in),
 *  - UTM zone 16N / EPSG:32616 (what the rasters are stored in),
 *  - "local" metres: UTM minus a town origin snapped to 0.6 m, so every raster grid we use
 *    (0.15, 0.2, 0.3 m) has pixel edges on exact multiples in both local and UTM coordinates.
 * Streets run along a "town" frame (s along the coast, t inland) rotated from local east/north.
 */

export const DEMO_LOCATION: Readonly<{ lon: number; lat: number; timezone: string; epsg: number }> = Object.freeze({
  lon: -85.418,
  lat: 29.9465,
  timezone: 'America/Chicago',
  epsg: 32616,
});

/** The least common multiple of every GSD we write; grid origins snap to it. */
export const GRID_QUANTUM = 0.6;

const UTM_ZONE = 16;
const CENTRAL_MERIDIAN = ((UTM_ZONE * 6 - 183) * Math.PI) / 180;
const K0 = 0.9996;
const FALSE_EASTING = 500000;
const WGS84_A = 6378137;
const WGS84_F = 1 / 298.257223563;

// Krüger series coefficients (3rd order in n: sub-millimetre inside a UTM zone).
const N = WGS84_F / (2 - WGS84_F);
const RECTIFYING_RADIUS = (WGS84_A / (1 + N)) * (1 + (N * N) / 4 + N ** 4 / 64);
const ALPHA = [N / 2 - (2 * N * N) / 3 + (5 * N ** 3) / 16, (13 * N * N) / 48 - (3 * N ** 3) / 5, (61 * N ** 3) / 240];
const BETA = [N / 2 - (2 * N * N) / 3 + (37 * N ** 3) / 96, (N * N) / 48 + N ** 3 / 15, (17 * N ** 3) / 480];
const DELTA = [2 * N - (2 * N * N) / 3 - 2 * N ** 3, (7 * N * N) / 3 - (8 * N ** 3) / 5, (56 * N ** 3) / 15];
const E_TERM = (2 * Math.sqrt(N)) / (1 + N);

function coefficient(list: number[], index: number): number {
  return list[index] ?? 0;
}

/** WGS84 lon/lat (degrees) to UTM 16N easting/northing (metres). */
export function lonLatToUtm(lon: number, lat: number): [number, number] {
  const phi = (lat * Math.PI) / 180;
  const dLambda = (lon * Math.PI) / 180 - CENTRAL_MERIDIAN;
  const sinPhi = Math.sin(phi);
  const t = Math.sinh(Math.atanh(sinPhi) - E_TERM * Math.atanh(E_TERM * sinPhi));
  const xiP = Math.atan2(t, Math.cos(dLambda));
  const etaP = Math.atanh(Math.sin(dLambda) / Math.sqrt(1 + t * t));
  let xi = xiP;
  let eta = etaP;
  for (let j = 1; j <= 3; j++) {
    const a = coefficient(ALPHA, j - 1);
    xi += a * Math.sin(2 * j * xiP) * Math.cosh(2 * j * etaP);
    eta += a * Math.cos(2 * j * xiP) * Math.sinh(2 * j * etaP);
  }
  return [FALSE_EASTING + K0 * RECTIFYING_RADIUS * eta, K0 * RECTIFYING_RADIUS * xi];
}

/** UTM 16N easting/northing (metres) to WGS84 lon/lat (degrees). */
export function utmToLonLat(easting: number, northing: number): [number, number] {
  const xi = northing / (K0 * RECTIFYING_RADIUS);
  const eta = (easting - FALSE_EASTING) / (K0 * RECTIFYING_RADIUS);
  let xiP = xi;
  let etaP = eta;
  for (let j = 1; j <= 3; j++) {
    const b = coefficient(BETA, j - 1);
    xiP -= b * Math.sin(2 * j * xi) * Math.cosh(2 * j * eta);
    etaP -= b * Math.cos(2 * j * xi) * Math.sinh(2 * j * eta);
  }
  const chi = Math.asin(Math.sin(xiP) / Math.cosh(etaP));
  let phi = chi;
  for (let j = 1; j <= 3; j++) phi += coefficient(DELTA, j - 1) * Math.sin(2 * j * chi);
  const lambda = CENTRAL_MERIDIAN + Math.atan2(Math.sinh(etaP), Math.cos(xiP));
  return [(lambda * 180) / Math.PI, (phi * 180) / Math.PI];
}

function snap(value: number, quantum: number): number {
  return Math.round(value / quantum) * quantum;
}

const [centreEasting, centreNorthing] = lonLatToUtm(DEMO_LOCATION.lon, DEMO_LOCATION.lat);

/** UTM position of local (0, 0): the town centre snapped to the grid quantum. */
export const TOWN_ORIGIN_UTM: Readonly<{ easting: number; northing: number }> = Object.freeze({
  easting: Number(snap(centreEasting, GRID_QUANTUM).toFixed(6)),
  northing: Number(snap(centreNorthing, GRID_QUANTUM).toFixed(6)),
});

export function localToLonLat(x: number, y: number): [number, number] {
  return utmToLonLat(TOWN_ORIGIN_UTM.easting + x, TOWN_ORIGIN_UTM.northing + y);
}

export function lonLatToLocal(lon: number, lat: number): [number, number] {
  const [e, n] = lonLatToUtm(lon, lat);
  return [e - TOWN_ORIGIN_UTM.easting, n - TOWN_ORIGIN_UTM.northing];
}

/**
 * The street grid is turned 12 degrees clockwise from east, roughly like the real coast road
 * (US-98) at Mexico Beach, so the Gulf lies to the south-south-west.
 */
const STREET_ANGLE = (-12 * Math.PI) / 180;
export const STREET_COS = Math.cos(STREET_ANGLE);
export const STREET_SIN = Math.sin(STREET_ANGLE);

/** Local (east, north) to town (s along the coast, t inland). */
export function localToTown(x: number, y: number): [number, number] {
  return [x * STREET_COS + y * STREET_SIN, -x * STREET_SIN + y * STREET_COS];
}

export function townToLocal(s: number, t: number): [number, number] {
  return [s * STREET_COS - t * STREET_SIN, s * STREET_SIN + t * STREET_COS];
}
