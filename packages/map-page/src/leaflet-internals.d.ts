// Leaflet 1.9's GridLayer internals the page builds on, which @types/leaflet leaves out: its own
// tile check (extended by the page's layers to skip tiles without imagery) and its update after
// a move (re-run when the coverage mask learned more). Unchanged through Leaflet 1.x. Types only:
// a declaration file, so the build makes no module (and the server no URL) of it.

export interface GridLayerInternals {
  /** Whether a tile is inside the world and the layer's `bounds`. */
  _isValidTile(coords: L.Coords): boolean;
  /** Adds the missing tiles of the view (what Leaflet runs after a move). */
  _update(): void;
  /** The map while the layer is on one. */
  _map?: L.Map;
}

/** A tile layer as Leaflet builds it, internals included. */
export type InternalTileLayer = L.TileLayer & GridLayerInternals;
