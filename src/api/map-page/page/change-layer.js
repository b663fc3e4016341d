/* global L */
// The DsmChange overlay (issue 22): the newest disaster-tagged survey under the map centre (or the
// newest survey) against the survey before it, drawn over the Vert layer, with the ramp's legend.
// Self-contained: map.js only hands over its Leaflet map as the map element's `nadirMap`.
(() => {
  // The ramp's stops, written in by the server from src/raster/change-ramp.ts (one source).
  const RAMP = /*nadir-change-ramp*/ [];
  const TRANSPARENT = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
  const mapElement = document.getElementById('map');
  const map = mapElement.nadirMap;
  const keyInput = document.getElementById('apikey');
  const layerSelect = document.getElementById('layer');
  if (!map || !keyInput || !layerSelect) return;

  const toggle = document.createElement('input');
  toggle.type = 'checkbox';
  toggle.id = 'change';
  const toggleLabel = document.createElement('label');
  toggleLabel.append(toggle, ' Change (DSM)');
  document.getElementById('controls').append(toggleLabel);

  let overlay = null;
  let legend = null;

  function rgb([r, g, b]) {
    return `rgb(${r}, ${g}, ${b})`;
  }

  function makeLegend(after, baseline) {
    const control = L.control({ position: 'bottomleft' });
    control.onAdd = () => {
      const box = L.DomUtil.create('div', 'change-legend');
      const title = L.DomUtil.create('div', 'change-legend-title', box);
      title.textContent = `Height change ${baseline.captureDate} → ${after.captureDate}`;
      const first = RAMP[0].metres;
      const span = RAMP[RAMP.length - 1].metres - first;
      const bar = L.DomUtil.create('div', 'change-legend-bar', box);
      // The stops are not evenly spaced: each swatch is as wide as its share of the metres.
      for (const [index, stop] of RAMP.entries()) {
        const next = RAMP[index + 1];
        if (!next) break;
        const swatch = L.DomUtil.create('span', 'change-legend-swatch', bar);
        swatch.style.background = `linear-gradient(to right, ${rgb(stop.colour)}, ${rgb(next.colour)})`;
        swatch.style.flexGrow = String((next.metres - stop.metres) / span);
      }
      const ticks = L.DomUtil.create('div', 'change-legend-ticks', box);
      // Evenly spaced labels at evenly spaced metres, so each sits where the bar shows its colour.
      for (const metres of [0, 1, 2, 3, 4].map((k) => first + (k * span) / 4)) {
        const tick = L.DomUtil.create('span', '', ticks);
        tick.textContent = `${metres > 0 ? '+' : ''}${metres} m`;
      }
      const note = L.DomUtil.create('div', 'change-legend-note', box);
      note.textContent = 'red: lower now, blue: higher now; clear: within 0.5 m';
      return box;
    };
    return control;
  }

  function clear() {
    if (overlay) map.removeLayer(overlay);
    if (legend) legend.remove();
    overlay = null;
    legend = null;
    delete mapElement.dataset.change;
  }

  /** The two surveys under the map centre, from the coverage endpoint (newest first). */
  async function choosePair(key) {
    const centre = map.getCenter();
    const query = new URLSearchParams({
      apikey: key,
      point: `${centre.lng.toFixed(7)},${centre.lat.toFixed(7)}`,
      radius: '100',
      resources: 'DetailDsm',
      fields: 'id,captureDate,tags,maxZoom',
    });
    const response = await fetch(`/staticmap/v2/coverage.json?${query}`);
    if (!response.ok) return undefined;
    const { surveys } = await response.json();
    const disaster = surveys.findIndex((s) => s.tags.some((tag) => tag.startsWith('disaster')));
    const index = disaster >= 0 && disaster < surveys.length - 1 ? disaster : 0;
    const [after, baseline] = [surveys[index], surveys[index + 1]];
    return after && baseline ? { after, baseline } : undefined;
  }

  async function show() {
    clear();
    const key = keyInput.value.trim();
    if (!toggle.checked || !key || layerSelect.value !== 'Vert') return;
    mapElement.dataset.change = 'choosing';
    const pair = await choosePair(key);
    if (!toggle.checked) return;
    if (!pair) {
      mapElement.dataset.change = 'none';
      return;
    }
    const query = new URLSearchParams({ apikey: key, after: pair.after.id, baseline: pair.baseline.id });
    overlay = L.tileLayer(`/tiles/v3/DsmChange/{z}/{x}/{y}.png?${query}`, {
      maxZoom: 22,
      // Deeper than the DSM's own zooms the browser enlarges its tiles.
      maxNativeZoom: pair.after.maxZoom?.DetailDsm ?? 19,
      errorTileUrl: TRANSPARENT,
      opacity: 0.85,
    });
    overlay.on('loading', () => {
      mapElement.dataset.change = 'loading';
    });
    overlay.on('load', () => {
      mapElement.dataset.change = 'loaded';
    });
    overlay.addTo(map);
    legend = makeLegend(pair.after, pair.baseline).addTo(map);
    mapElement.dataset.changePair = `${pair.after.id},${pair.baseline.id}`;
  }

  toggle.addEventListener('change', show);
  keyInput.addEventListener('change', show);
  // The overlay is Web Mercator: panorama layers have a grid of their own.
  layerSelect.addEventListener('change', () => {
    if (layerSelect.value !== 'Vert') toggle.checked = false;
    show();
  });
})();
