// The DsmChange overlay (issue 22): the surveys of the map's dates under its centre (or, with no
// date chosen, the newest disaster-tagged survey, or the newest, against the survey before it),
// drawn over the straight-down layers, with the ramp's legend.
// Its coverage call and tile URLs are @nadir/client's, like the rest of the page.
import type { NadirClient, Survey, TileType } from '@nadir/client';
import { type CoverageMask, describeError, type Filters, type WorldBox } from './coverage-view.js';
import { isStraightDown } from './grids.js';
import type { InternalTileLayer } from './leaflet-internals.js';
import { type TileTracker, trackTiles } from './tile-layers.js';

/** A stop of the DsmChange ramp: src/raster/change-ramp.ts's ChangeStop, as JSON. */
interface RampStop {
  metres: number;
  colour: [number, number, number];
}

// The ramp's stops, written in by the server from src/raster/change-ramp.ts (one source): it
// replaces this name (@nadir/map-page's CHANGE_RAMP_PLACEHOLDER; the build keeps names and drops
// comments, so the placeholder is a name) with the stops' JSON when it serves change-layer.js.
declare const NADIR_CHANGE_RAMP: readonly RampStop[];
const RAMP = NADIR_CHANGE_RAMP;
const TRANSPARENT = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

function rgb([r, g, b]: [number, number, number]): string {
  return `rgb(${r}, ${g}, ${b})`;
}

function makeLegend(after: Survey, baseline: Survey): L.Control {
  const control = new L.Control({ position: 'bottomleft' });
  control.onAdd = () => {
    const box = L.DomUtil.create('div', 'change-legend');
    const title = L.DomUtil.create('div', 'change-legend-title', box);
    title.textContent = `Height change ${baseline.captureDate} → ${after.captureDate}`;
    const first = RAMP[0]!.metres;
    const span = RAMP[RAMP.length - 1]!.metres - first;
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

/** The dates the map shows: its own ('' for the latest) and the swipe's ('' for none). */
export interface ChosenDates {
  date: string;
  compare: string;
}

/**
 * The two surveys with DetailDsm under the map centre (coverage, newest first) whose change the
 * overlay shows, bound to the map's dates: the chosen date against the swipe's date, or against the
 * survey before it; with no date chosen, the newest disaster-tagged survey (or the newest) against
 * the one before it. A string says why there is no pair.
 */
export async function choosePair(
  client: NadirClient,
  { lat, lon }: { lat: number; lon: number },
  dates: ChosenDates,
): Promise<{ after: Survey; baseline: Survey } | string> {
  const page = await client.coverage({
    aoi: { point: { lon, lat }, radius: 100 },
    resources: ['DetailDsm'],
    fields: ['id', 'captureDate', 'tags', 'maxZoom'],
  });
  const { surveys } = page;
  const on = (date: string) => surveys.findIndex((survey) => survey.captureDate === date);
  if (dates.date) {
    const index = on(dates.date);
    if (index < 0) return `No heights (DetailDsm) of ${dates.date} here: no change to show.`;
    if (dates.compare && dates.compare !== dates.date) {
      const other = on(dates.compare);
      if (other < 0) return `No heights (DetailDsm) of ${dates.compare} here: no change to show.`;
      // The later of the two is "after", whichever side of the swipe it is on.
      const [later, earlier] = index < other ? [index, other] : [other, index];
      return { after: surveys[later]!, baseline: surveys[earlier]! };
    }
    const before = surveys[index + 1];
    return before
      ? { after: surveys[index]!, baseline: before }
      : `${dates.date} is the oldest survey with heights here: no change to show.`;
  }
  // `tags` is among the fields asked for: every survey has it.
  const disaster = surveys.findIndex((s) => s.tags!.some((tag) => tag.startsWith('disaster')));
  const index = disaster >= 0 && disaster < surveys.length - 1 ? disaster : 0;
  const [after, baseline] = [surveys[index], surveys[index + 1]];
  return after && baseline ? { after, baseline } : 'Fewer than two surveys with heights here: no change to show.';
}

interface ChangeLayerOptions extends L.TileLayerOptions {
  /** The two surveys' masks: a change needs heights of both. */
  masks: CoverageMask[];
}
type ChangeLayer = L.TileLayer & { options: ChangeLayerOptions };

// Tiles outside either survey's imagery are not asked for (their coverage masks, as for the
// imagery layers): they could only be 404s.
const ChangeLayer = L.TileLayer.extend({
  _isValidTile(this: ChangeLayer, coords: L.Coords): boolean {
    return (
      (L.TileLayer.prototype as InternalTileLayer)._isValidTile.call(this, coords) &&
      this.options.masks.every((mask) => mask.covers(coords.z, coords.x, coords.y))
    );
  },
}) as new (
  urlTemplate: string,
  options: ChangeLayerOptions,
) => ChangeLayer;

export interface ChangeLayerSetUp {
  map: L.Map;
  mapElement: HTMLElement;
  controls: HTMLElement;
  getClient: () => NadirClient | null;
  getType: () => TileType;
  getDates: () => ChosenDates;
  centre: () => { lat: number; lon: number };
  maskFor: (filters: Filters) => CoverageMask;
  viewBox: () => WorldBox;
  showError: (text: string) => void;
}

export interface ChangeControl {
  /** Takes the overlay away while the page shows a refusal (it comes back on the next update). */
  hide(): void;
  /** After a view or form change: off on panoramas, a new key re-chooses, a move extends the mask. */
  update(options?: { keyChanged?: boolean }): Promise<void>;
}

/**
 * The "Change (DSM)" switch in the form. map.ts calls `update()` after each view or form change
 * (the overlay needs the Vert layer: a panorama unticks it) and gives the client, the centre and
 * the coverage masks.
 */
export function setUpChangeLayer({
  map,
  mapElement,
  controls,
  getClient,
  getType,
  getDates,
  centre,
  maskFor,
  viewBox,
  showError,
}: ChangeLayerSetUp): ChangeControl {
  const toggle = document.createElement('input');
  toggle.type = 'checkbox';
  toggle.id = 'change';
  const toggleLabel = document.createElement('label');
  toggleLabel.append(toggle, ' Change (DSM)');
  controls.append(toggleLabel);

  let overlay: ChangeLayer | null = null;
  let overlayTiles: TileTracker | null = null;
  let legend: L.Control | null = null;
  let masks: CoverageMask[] = [];
  /** The dates the overlay was chosen for: a change of them chooses again. */
  let shownFor = '';

  function clear(): void {
    overlayTiles?.stop();
    overlayTiles = null;
    if (overlay) map.removeLayer(overlay);
    if (legend) legend.remove();
    overlay = null;
    legend = null;
    masks = [];
    shownFor = '';
    delete mapElement.dataset.change;
  }

  async function show(): Promise<void> {
    clear();
    const client = getClient();
    if (!toggle.checked || !client || !isStraightDown(getType())) return;
    mapElement.dataset.change = 'choosing';
    const dates = getDates();
    shownFor = `${dates.date}|${dates.compare}`;
    let pair: Awaited<ReturnType<typeof choosePair>>;
    try {
      pair = await choosePair(client, centre(), dates);
    } catch (error) {
      showError(describeError(error));
      mapElement.dataset.change = 'none';
      return;
    }
    if (!toggle.checked) return;
    if (typeof pair === 'string') {
      showError(pair);
      mapElement.dataset.change = 'none';
      return;
    }
    masks = [pair.after, pair.baseline].map(({ captureDate }) => maskFor({ since: captureDate, until: captureDate }));
    await Promise.all(masks.map((mask) => mask.load(...viewBox())));
    const coarsest = Math.max(...masks.map((mask) => mask.minZoom ?? 0));
    overlay = new ChangeLayer(client.dsmChangeTileUrlTemplate({ after: pair.after.id, baseline: pair.baseline.id }), {
      masks,
      // Coarser than the surveys' own zooms the browser shrinks tiles rather than asking for none.
      minNativeZoom: coarsest,
      maxZoom: 22,
      // Deeper than the DSM's own zooms the browser enlarges its tiles.
      maxNativeZoom: pair.after.maxZoom?.DetailDsm ?? 19,
      errorTileUrl: TRANSPARENT,
      opacity: 0.85,
    });
    overlayTiles = trackTiles(overlay, (waiting) => {
      mapElement.dataset.change = waiting > 0 ? 'loading' : 'loaded';
    });
    overlay.addTo(map);
    // A view where the mask leaves no tile to ask for starts no load: nothing to wait for.
    if (overlayTiles.waiting === 0) mapElement.dataset.change = 'loaded';
    legend = makeLegend(pair.after, pair.baseline).addTo(map);
    mapElement.dataset.changePair = `${pair.after.id},${pair.baseline.id}`;
  }

  toggle.addEventListener('change', show);
  return {
    hide: clear,
    async update({ keyChanged = false } = {}) {
      // Heights are drawn on the straight-down layers: the switch waits, ticked or not, on a panorama.
      const straight = isStraightDown(getType());
      toggle.disabled = !straight;
      toggleLabel.title = straight ? '' : 'The height change is drawn on Vert or TrueOrtho';
      if (!toggle.checked || !straight) {
        if (overlay) clear();
        return;
      }
      const { date, compare } = getDates();
      // Ticked on a panorama and back, a new key, or other dates: choose the pair again.
      if (!overlay || keyChanged || shownFor !== `${date}|${compare}`) {
        await show();
        return;
      }
      if (overlay && masks.length > 0) {
        await Promise.all(masks.map((mask) => mask.load(...viewBox())));
        (overlay as L.TileLayer as InternalTileLayer)._update();
      }
    },
  };
}
