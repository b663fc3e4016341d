/* global L */
// The map page (issue #5). Plain browser script with no build step; Leaflet is the global L.
(() => {
  const DEMO_VIEW = { zoom: 17, lat: 29.946, lng: -85.418 };
  const MAX_ZOOM = 22;
  const TILE = 256;
  // decisions.md "Tiles": panorama tiles are 256x256 but clients display them at 256x192.
  const SQUASH = 192 / TILE;
  const FILTERS = ['since', 'until', 'include', 'exclude'];
  const STORED_KEY = 'nadir.apikey';
  const TRANSPARENT = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
  const LABELS = {
    Vert: 'Vert: straight down, north up',
    North: 'North: looking north',
    South: 'South: looking south',
    East: 'East: looking east',
    West: 'West: looking west',
  };

  /**
   * Each layer's grid against the ordinary (Vert) one, in zoom-0 world pixels where the world is
   * W = 256 wide: `toServer` takes a point (a, b) of the client's rotated world to the server
   * world, `toClient` is its inverse. East is (a, b) -> (W - b, a), the pixel form of decisions.md's
   * (x, y) = (2^z - 1 - y', x').
   */
  const W = TILE;
  const ROTATIONS = {
    Vert: { toServer: (a, b) => [a, b], toClient: (u, v) => [u, v] },
    North: { toServer: (a, b) => [a, b], toClient: (u, v) => [u, v] },
    East: { toServer: (a, b) => [W - b, a], toClient: (u, v) => [v, W - u] },
    West: { toServer: (a, b) => [b, W - a], toClient: (u, v) => [W - v, u] },
    South: { toServer: (a, b) => [W - a, W - b], toClient: (u, v) => [W - u, W - v] },
  };

  /** decisions.md's formulas: the server tile for the client's tile (x', y'). */
  function serverTile(type, z, x, y) {
    const last = 2 ** z - 1;
    if (type === 'East') return [last - y, x];
    if (type === 'West') return [y, last - x];
    if (type === 'South') return [last - x, last - y];
    return [x, y];
  }

  // A panorama map's "latlng" is a point of the rotated world: lng = a, lat = b (b grows downwards),
  // both 0..256 at zoom 0. The transformation squashes y so that its tiles are 256x192.
  const PANORAMA_CRS = L.extend({}, L.CRS.Simple, { transformation: new L.Transformation(1, 0, SQUASH, 0) });
  const PANORAMA_WORLD = L.latLngBounds([0, 0], [W, W]);
  const MERCATOR = L.CRS.EPSG3857;

  const form = document.getElementById('controls');
  const keyInput = document.getElementById('apikey');
  const layerSelect = document.getElementById('layer');
  const label = document.getElementById('direction');
  const mapElement = document.getElementById('map');
  const demoKey = document.querySelector('meta[name="nadir-demo-key"]')?.content ?? '';

  function storedKey() {
    try {
      return localStorage.getItem(STORED_KEY) ?? '';
    } catch {
      return '';
    }
  }

  function rememberKey(key) {
    try {
      if (key && key !== demoKey) localStorage.setItem(STORED_KEY, key);
      else localStorage.removeItem(STORED_KEY);
    } catch {
      // Storage disabled: the key is simply not remembered.
    }
  }

  function tileUrl(type, z, x, y) {
    const query = new URLSearchParams({ apikey: keyInput.value.trim() });
    for (const name of FILTERS) {
      const value = document.getElementById(name).value.trim();
      if (value) query.set(name, value);
    }
    return `/tiles/v3/${type}/${z}/${x}/${y}.img?${query}`;
  }

  const NadirLayer = L.TileLayer.extend({
    getTileUrl(coords) {
      const [x, y] = serverTile(this.options.type, coords.z, coords.x, coords.y);
      return tileUrl(this.options.type, coords.z, x, y);
    },
  });

  function makeLayer(type) {
    const panorama = type !== 'Vert';
    const layer = new NadirLayer('', {
      type,
      tileSize: panorama ? L.point(TILE, TILE * SQUASH) : TILE,
      maxZoom: MAX_ZOOM,
      noWrap: true,
      // Empty tiles are 404 JSON: show nothing there.
      errorTileUrl: TRANSPARENT,
      ...(panorama ? { bounds: PANORAMA_WORLD } : {}),
    });
    layer.on('loading', () => {
      mapElement.dataset.tiles = 'loading';
    });
    layer.on('load', () => {
      mapElement.dataset.tiles = 'loaded';
    });
    return layer;
  }

  /** The map centre as a zoom-0 point of the server (Vert) world, whatever grid is shown. */
  function centreInServerWorld() {
    const point = map.options.crs.latLngToPoint(map.getCenter(), 0);
    // The panorama CRS squashed y: unsquash before rotating back.
    const [a, b] = currentType === 'Vert' ? [point.x, point.y] : [point.x, point.y / SQUASH];
    return ROTATIONS[currentType].toServer(a, b);
  }

  function show(type, [u, v], zoom) {
    const [a, b] = ROTATIONS[type].toClient(u, v);
    if (tiles) map.removeLayer(tiles);
    currentType = type;
    map.options.crs = type === 'Vert' ? MERCATOR : PANORAMA_CRS;
    const centre = type === 'Vert' ? MERCATOR.pointToLatLng(L.point(a, b), 0) : L.latLng(b, a);
    // reset: the pixel origin must be recomputed in the new CRS, not panned to.
    map.setView(centre, zoom, { reset: true });
    layerSelect.value = type;
    label.textContent = LABELS[type];
    mapElement.dataset.layer = type;
    tiles = makeLayer(type);
    if (keyInput.value.trim()) tiles.addTo(map);
  }

  function reloadTiles() {
    if (!tiles) return;
    if (!keyInput.value.trim()) map.removeLayer(tiles);
    else if (map.hasLayer(tiles)) tiles.redraw();
    else tiles.addTo(map);
  }

  /** `#zoom/lat/lng/Layer`, always in real coordinates so a link shows the same place in any layer. */
  function writeHash() {
    const [u, v] = centreInServerWorld();
    const { lat, lng } = MERCATOR.pointToLatLng(L.point(u, v), 0);
    history.replaceState(null, '', `#${map.getZoom()}/${lat.toFixed(6)}/${lng.toFixed(6)}/${currentType}`);
  }

  function readHash() {
    const [zoom, lat, lng, type] = location.hash.slice(1).split('/');
    const view = { zoom: Number(zoom), lat: Number(lat), lng: Number(lng) };
    const valid = Boolean(zoom && lat && lng) && Number.isInteger(view.zoom) && Number.isFinite(view.lat + view.lng);
    return { view: valid ? view : DEMO_VIEW, type: Object.hasOwn(ROTATIONS, type ?? '') ? type : 'Vert' };
  }

  keyInput.value = storedKey() || demoKey;
  let currentType = 'Vert';
  let tiles = null;
  const map = L.map(mapElement, { crs: MERCATOR, maxZoom: MAX_ZOOM, attributionControl: false });
  L.control.attribution({ prefix: 'Leaflet | nadir' }).addTo(map);
  // For overlays in scripts of their own (change-layer.js).
  mapElement.nadirMap = map;

  const initial = readHash();
  const start = MERCATOR.latLngToPoint(L.latLng(initial.view.lat, initial.view.lng), 0);
  show(initial.type, [start.x, start.y], initial.view.zoom);
  map.on('moveend', writeHash);
  writeHash();

  form.addEventListener('submit', (event) => event.preventDefault());
  layerSelect.addEventListener('change', () => {
    show(layerSelect.value, centreInServerWorld(), map.getZoom());
    writeHash();
  });
  keyInput.addEventListener('change', () => {
    rememberKey(keyInput.value.trim());
    reloadTiles();
  });
  for (const name of FILTERS) document.getElementById(name).addEventListener('change', reloadTiles);
})();
