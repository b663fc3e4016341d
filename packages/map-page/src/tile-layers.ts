// Leaflet tile layers over @nadir/client's tile URLs: each layer's own grid (grids.ts), scaled up
// beyond its native zoom, and asking only for tiles the coverage mask says hold imagery.
import type { NadirClient, TileType } from '@nadir/client';
import type { CoverageMask, Filters } from './coverage-view.js';
import { isStraightDown, PANORAMA_WORLD, SQUASH, serverTile } from './grids.js';
import type { InternalTileLayer } from './leaflet-internals.js';

export const MAX_ZOOM = 22;
const TILE = 256;
// A tile the server answered with an error (the mask is coarse at footprint edges) shows nothing.
const TRANSPARENT = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

interface NadirLayerOptions extends L.TileLayerOptions {
  client: NadirClient;
  type: TileType;
  filters: Filters;
  mask: CoverageMask;
}
type NadirLayer = L.TileLayer & { options: NadirLayerOptions };

const NadirLayer = L.TileLayer.extend({
  getTileUrl(this: NadirLayer, coords: L.Coords): string {
    const { client, type, filters } = this.options;
    const [x, y] = serverTile(type, coords.z, coords.x, coords.y);
    return client.tileUrl({ type, tile: { z: coords.z, x, y }, format: 'img', ...filters });
  },

  // Leaflet's own check (the world's edge, `bounds`), then the coverage mask: a tile with no
  // imagery under it is not asked for (it would be a 404 in the console).
  _isValidTile(this: NadirLayer, coords: L.Coords): boolean {
    if (!(L.TileLayer.prototype as InternalTileLayer)._isValidTile.call(this, coords)) return false;
    const [x, y] = serverTile(this.options.type, coords.z, coords.x, coords.y);
    return this.options.mask.covers(coords.z, x, y);
  },
}) as new (
  url: string,
  options: NadirLayerOptions,
) => NadirLayer;

export interface LayerSpec {
  client: NadirClient;
  type: TileType;
  filters: Filters;
  nativeZoom: number;
  /** The coarsest zoom the surveys have: coarser zooms draw its tiles, scaled down. */
  minNativeZoom?: number;
  mask: CoverageMask;
  pane: string;
}

/**
 * A layer of one type and filter set. `nativeZoom` is the deepest zoom the surveys have for the
 * type; Leaflet scales those tiles up to MAX_ZOOM instead of asking for deeper ones (404s).
 */
export function makeLayer({ client, type, filters, nativeZoom, minNativeZoom, mask, pane }: LayerSpec): L.TileLayer {
  const panorama = !isStraightDown(type);
  return new NadirLayer('', {
    client,
    type,
    filters,
    mask,
    pane,
    tileSize: panorama ? L.point(TILE, TILE * SQUASH) : TILE,
    maxZoom: MAX_ZOOM,
    maxNativeZoom: Math.min(nativeZoom, MAX_ZOOM),
    ...(minNativeZoom === undefined ? {} : { minNativeZoom: Math.min(minNativeZoom, nativeZoom, MAX_ZOOM) }),
    noWrap: true,
    errorTileUrl: TRANSPARENT,
    ...(panorama ? { bounds: PANORAMA_WORLD } : {}),
  });
}

/** Asks for the tiles that became valid since the mask learned more, keeping those shown. */
export function refreshLayer(layer: L.TileLayer): void {
  const internal = layer as InternalTileLayer;
  // GridLayer#_update is what Leaflet runs after a move: it adds the missing valid tiles only.
  if (internal._map) internal._update();
}

/** A layer's tiles on their way, from trackTiles. */
export interface TileTracker {
  readonly waiting: number;
  stop(): void;
}

/**
 * Follows which of a layer's tiles are still on their way, from its tile events, and calls
 * `onChange(waiting)` after each. Leaflet's own `isLoading()` and 'load' miss a tile removed
 * before it arrived (pruned after a move, aborted by a zoom): the layer then says "loading" until
 * some later tile loads, which in a still view is never. Call `stop()` before removing the layer,
 * so its last unloads do not count as the map having loaded.
 */
export function trackTiles(layer: L.TileLayer, onChange: (waiting: number) => void): TileTracker {
  const waiting = new Set<string>();
  const keyOf = ({ coords }: L.TileEvent) => `${coords.z}/${coords.x}/${coords.y}`;
  const handlers: Record<string, (event: L.TileEvent) => void> = {
    tileloadstart(event) {
      waiting.add(keyOf(event));
      onChange(waiting.size);
    },
  };
  for (const name of ['tileload', 'tileerror', 'tileabort', 'tileunload']) {
    handlers[name] = (event) => {
      waiting.delete(keyOf(event));
      onChange(waiting.size);
    };
  }
  layer.on(handlers as L.LeafletEventHandlerFnMap);
  return {
    get waiting() {
      return waiting.size;
    },
    stop() {
      layer.off(handlers as L.LeafletEventHandlerFnMap);
    },
  };
}
