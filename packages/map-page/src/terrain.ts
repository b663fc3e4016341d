// The 3D view (issue 35): the surface heights (DetailDsm) as MapLibre's terrain, draped with the
// vertical imagery, both from this server's TileJSON (docs/gis.md: `/tiles/v3/DetailDsm/terrain-rgb/`
// tiles in Mapbox's Terrain-RGB). Opened from the map page at its view (`#zoom/lat/lon`); the key
// is the one the map page remembered, or the demo key. MapLibre is served by nadir itself
// (/map/maplibre/), so the page works offline like the map.
import type * as MapLibre from 'maplibre-gl';

const MAPLIBRE = '/map/maplibre/maplibre-gl.mjs';
const STORED_KEY = 'nadir.apikey';

function keyOf(): string {
  let stored = '';
  try {
    stored = localStorage.getItem(STORED_KEY) ?? '';
  } catch {
    // Storage disabled: the demo key, if any.
  }
  return stored || (document.querySelector<HTMLMetaElement>('meta[name="nadir-demo-key"]')?.content ?? '');
}

/** `#zoom/lat/lon[/...]` as the map page writes it; the demo town otherwise. */
function viewOf(): { zoom: number; lat: number; lon: number } {
  const [zoom, lat, lon] = location.hash.slice(1).split('/').map(Number);
  return zoom !== undefined && Number.isFinite(zoom) && Number.isFinite(lat) && Number.isFinite(lon)
    ? { zoom, lat: lat!, lon: lon! }
    : { zoom: 17, lat: 29.946, lon: -85.418 };
}

async function main(): Promise<void> {
  const note = document.getElementById('terrain-note')!;
  const key = keyOf();
  if (!key) {
    note.textContent = 'No API key: open the map page and enter one first.';
    return;
  }
  const { Map: MapLibreMap, NavigationControl } = (await import(MAPLIBRE)) as typeof MapLibre;
  const tileJson = (path: string) => `${location.origin}${path}?apikey=${encodeURIComponent(key)}`;
  const view = viewOf();
  const back = document.getElementById('terrain-back') as HTMLAnchorElement;
  back.href = `/${location.hash}`;
  const map = new MapLibreMap({
    container: 'terrain-map',
    style: {
      version: 8,
      sources: {
        imagery: { type: 'raster', url: tileJson('/tiles/v3/Vert/tilejson.json'), tileSize: 256 },
        heights: {
          type: 'raster-dem',
          url: tileJson('/tiles/v3/DetailDsm/terrain-rgb/tilejson.json'),
          tileSize: 256,
          encoding: 'mapbox',
        },
      },
      layers: [
        { id: 'background', type: 'background', paint: { 'background-color': '#ddd' } },
        { id: 'imagery', type: 'raster', source: 'imagery' },
      ],
      terrain: { source: 'heights', exaggeration: 1 },
    },
    center: [view.lon, view.lat],
    zoom: view.zoom,
    pitch: 60,
    bearing: -20,
    maxPitch: 80,
    fadeDuration: 0,
  });
  map.addControl(new NavigationControl({ visualizePitch: true }));
  map.on('error', (event) => {
    // A tile with nothing to draw is the map's business (it draws none), not the reader's.
    if ('tile' in event) return;
    note.textContent = `The 3D view could not load: ${event.error?.message ?? 'an error'}`;
  });
  // For scripts and tests: when everything in view is drawn, and the height under the centre.
  map.on('idle', () => {
    const height = map.queryTerrainElevation(map.getCenter());
    document.body.dataset.centreHeight = height === null ? '' : String(height);
    document.body.dataset.idle = 'yes';
  });
  map.on('movestart', () => {
    document.body.dataset.idle = 'no';
  });
}

main().catch((error: unknown) => {
  document.getElementById('terrain-note')!.textContent = `The 3D view could not start: ${String(error)}`;
});
