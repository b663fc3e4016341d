// The map's grids (issue #5): Vert on Web Mercator, the panoramas on rotated, squashed grids whose
// tiles the client's panorama math (serverTileFor) maps back to the server's. Leaflet is the
// global `L` of its own <script> tag (index.html), typed by @types/leaflet.
import { PANORAMA_DISPLAY_SIZE, serverTileFor, TILE_SIZE, type TileType } from '@nadir/client';

/** A point of the zoom-0 world, in pixels (the world is 256 wide). */
export type WorldPoint = [number, number];

export const TYPES: readonly TileType[] = ['Vert', 'TrueOrtho', 'North', 'South', 'East', 'West'];
export const LABELS: Readonly<Record<TileType, string>> = {
  Vert: 'Vert: straight down, north up',
  TrueOrtho: 'TrueOrtho: true orthophoto, north up',
  North: 'North: looking north',
  South: 'South: looking south',
  East: 'East: looking east',
  West: 'West: looking west',
};
const W = TILE_SIZE;
// decisions.md "Tiles": panorama tiles are 256x256 but clients display them at 256x192.
export const SQUASH = PANORAMA_DISPLAY_SIZE.height / TILE_SIZE;

interface Rotation {
  toServer(a: number, b: number): WorldPoint;
  toClient(u: number, v: number): WorldPoint;
}

/**
 * Each layer's grid against the server (Vert) one, in zoom-0 world pixels where the world is
 * W = 256 wide: `toServer` takes a point (a, b) of the client's rotated world to the server world,
 * `toClient` is its inverse. East is (a, b) -> (W - b, a), the pixel form of serverTileFor's
 * (x, y) = (2^z - 1 - y', x').
 */
const ROTATIONS: Readonly<Record<TileType, Rotation>> = {
  Vert: { toServer: (a, b) => [a, b], toClient: (u, v) => [u, v] },
  TrueOrtho: { toServer: (a, b) => [a, b], toClient: (u, v) => [u, v] },
  North: { toServer: (a, b) => [a, b], toClient: (u, v) => [u, v] },
  East: { toServer: (a, b) => [W - b, a], toClient: (u, v) => [v, W - u] },
  West: { toServer: (a, b) => [b, W - a], toClient: (u, v) => [W - v, u] },
  South: { toServer: (a, b) => [W - a, W - b], toClient: (u, v) => [W - u, W - v] },
};

export const MERCATOR: L.CRS = L.CRS.EPSG3857;
// A panorama map's "latlng" is a point of the rotated world: lng = a, lat = b (b grows downwards),
// both 0..256 at zoom 0. The transformation squashes y so that its tiles are 256x192.
export const PANORAMA_CRS: L.CRS = L.extend({}, L.CRS.Simple, {
  transformation: new L.Transformation(1, 0, SQUASH, 0),
});
export const PANORAMA_WORLD = L.latLngBounds([0, 0], [W, W]);

/** Vert and TrueOrtho look straight down: Web Mercator, north up. The rest are panoramas. */
export const isStraightDown = (type: TileType): boolean => type === 'Vert' || type === 'TrueOrtho';

export const crsOf = (type: TileType): L.CRS => (isStraightDown(type) ? MERCATOR : PANORAMA_CRS);

const isTileType = (name: string | undefined): name is TileType => (TYPES as readonly string[]).includes(name ?? '');

/** The server tile for the client's tile (x', y') of a layer. */
export function serverTile(type: TileType, z: number, x: number, y: number): [number, number] {
  const tile = serverTileFor(type, { z, x, y });
  return [tile.x, tile.y];
}

/** A map latlng of a layer as a zoom-0 point [u, v] of the server (Vert) world. */
export function toServerWorld(type: TileType, latLng: L.LatLngExpression): WorldPoint {
  const point = crsOf(type).latLngToPoint(latLng, 0);
  // The panorama CRS squashed y: unsquash before rotating back.
  const [a, b] = isStraightDown(type) ? [point.x, point.y] : [point.x, point.y / SQUASH];
  return ROTATIONS[type].toServer(a, b);
}

/** A zoom-0 server-world point as a latlng of the layer's map. */
export function fromServerWorld(type: TileType, [u, v]: WorldPoint): L.LatLng {
  const [a, b] = ROTATIONS[type].toClient(u, v);
  return isStraightDown(type) ? MERCATOR.pointToLatLng(L.point(a, b), 0) : L.latLng(b, a);
}

/** Real coordinates of a server-world point. */
export function lonLatOf([u, v]: WorldPoint): { lat: number; lon: number } {
  const { lat, lng } = MERCATOR.pointToLatLng(L.point(u, v), 0);
  // 1e-7 degrees (1 cm): the projection's float noise (-85.41800000000002) stays out of queries.
  return { lat: Math.round(lat * 1e7) / 1e7, lon: Math.round(lng * 1e7) / 1e7 };
}

export function serverWorldOf(lat: number, lon: number): WorldPoint {
  const point = MERCATOR.latLngToPoint(L.latLng(lat, lon), 0);
  return [point.x, point.y];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What the URL hash holds: the layer, its dates ('' for "latest" and "no swipe") and the view. */
export interface HashState {
  type: TileType;
  date: string;
  compare: string;
  zoom: number;
  centre: WorldPoint;
}

/**
 * `#zoom/lat/lng/Layer[/date[/compare]]`, always in real coordinates so a link shows the same
 * place in any layer; the dates are left out while they are "latest" and "no swipe".
 */
export function writeHash(state: HashState): void {
  const { lat, lon } = lonLatOf(state.centre);
  const dates = [state.date, state.compare].map((d) => d || '');
  while (dates.length > 0 && dates.at(-1) === '') dates.pop();
  const tail = dates.length > 0 ? `/${dates.map((d) => d || 'latest').join('/')}` : '';
  history.replaceState(null, '', `#${state.zoom}/${lat.toFixed(6)}/${lon.toFixed(6)}/${state.type}${tail}`);
}

export function readHash(fallback: { zoom: number; lat: number; lon: number }): HashState {
  const [zoom, lat, lon, type, date, compare] = location.hash.slice(1).split('/');
  const view = { zoom: Number(zoom), lat: Number(lat), lon: Number(lon) };
  const valid = Boolean(zoom && lat && lon) && Number.isInteger(view.zoom) && Number.isFinite(view.lat + view.lon);
  const start = valid ? view : fallback;
  return {
    zoom: start.zoom,
    centre: serverWorldOf(start.lat, start.lon),
    type: isTileType(type) ? type : 'Vert',
    date: date && DATE.test(date) ? date : '',
    compare: compare && DATE.test(compare) ? compare : '',
  };
}
