// The map page (issue #5, issue 20): an imagery viewer over @nadir/client. Every request goes
// through the client: coverage at the view centre (dates, native zooms), a coverage mask (no tile
// asked for where there is none), the tiles, the survey on screen (X-Survey-Ids) and downloads.
import { NadirClient, type Survey, type TileType } from '@nadir/client';
import { setUpAreaDownload } from './area-download.js';
import { setUpChangeLayer } from './change-layer.js';
import {
  CoverageMask,
  describeError,
  type Filters,
  filterKey,
  type GroundType,
  nativeZooms,
  surveysAt,
  type WorldBox,
  type Zooms,
} from './coverage-view.js';
import {
  crsOf,
  fromServerWorld,
  isStraightDown,
  LABELS,
  lonLatOf,
  readHash,
  toServerWorld,
  type WorldPoint,
  writeHash,
} from './grids.js';
import { COMPARE_PANE, setUpSwipe } from './swipe.js';
import { MAX_ZOOM, makeLayer, refreshLayer, type TileTracker, trackTiles } from './tile-layers.js';
import { setUpTimeline } from './timeline.js';

const DEMO_VIEW = { zoom: 17, lat: 29.946, lon: -85.418 };
const STORED_KEY = 'nadir.apikey';
/** An element of index.html, by id (each is there: the page and its HTML are built together). */
const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
const keyInput = $<HTMLInputElement>('apikey');
const layerSelect = $<HTMLSelectElement>('layer');
const dateSelect = $<HTMLSelectElement>('date');
const compareSelect = $<HTMLSelectElement>('compare');
const message = $('message');
const mapElement = $('map');
const onScreen = $('on-screen');
const demoKey = document.querySelector<HTMLMetaElement>('meta[name="nadir-demo-key"]')?.content ?? '';
/** The operator's basemap (NADIR_MAP_BASEMAP), drawn under the straight-down layers; none by default. */
const basemapUrl = document.querySelector<HTMLMetaElement>('meta[name="nadir-basemap"]')?.content ?? '';
const basemapCredit = document.querySelector<HTMLMetaElement>('meta[name="nadir-basemap-attribution"]')?.content ?? '';

function storedKey(): string {
  try {
    return localStorage.getItem(STORED_KEY) ?? '';
  } catch {
    return '';
  }
}

function rememberKey(key: string): void {
  try {
    if (key && key !== demoKey) localStorage.setItem(STORED_KEY, key);
    else localStorage.removeItem(STORED_KEY);
  } catch {
    // Storage disabled: the key is simply not remembered.
  }
}

/**
 * What the view cannot show, said on the map (it does not move it): stays until the cause is gone
 * (the next update that works clears it) or the reader dismisses it.
 */
function showError(text: string): void {
  if (!text && message.dataset.kind === 'notice') return;
  say(text, 'error');
}

/** Something the reader did that cannot be done (a press, a draw): stays until dismissed or replaced. */
function showNotice(text: string): void {
  say(text, 'notice');
}

function say(text: string, kind: 'error' | 'notice'): void {
  $('message-text').textContent = text;
  message.hidden = !text;
  message.dataset.kind = text ? kind : '';
  mapElement.dataset.error = text && kind === 'error' ? 'true' : 'false';
}
$('message-close').addEventListener('click', () => say('', 'error'));

const tags = (id: string) =>
  $<HTMLInputElement>(id)
    .value.split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);

/** The filters of the form, as the client takes them (empty ones left out). */
function baseFilters(): Filters {
  const filters: Filters = {};
  for (const name of ['since', 'until'] as const)
    if ($<HTMLInputElement>(name).value.trim()) filters[name] = $<HTMLInputElement>(name).value.trim();
  const include = tags('include');
  const exclude = tags('exclude');
  if ($<HTMLInputElement>('hide-disasters').checked && !exclude.includes('disaster')) exclude.push('disaster');
  if (include.length > 0) filters.include = include;
  if (exclude.length > 0) filters.exclude = exclude;
  return filters;
}

/** A layer's filters: a chosen date shows that day's surveys only. */
const filtersFor = (date: string): Filters => (date ? { ...baseFilters(), since: date, until: date } : baseFilters());

/** A layer on the map (main or compare), with what it shows and its tiles on their way. */
interface Shown {
  id: string;
  layer: L.TileLayer;
  tiles: TileTracker;
}
type Which = 'main' | 'compare';

keyInput.value = storedKey() || demoKey;
const initial = readHash(DEMO_VIEW);
const state = { type: initial.type, date: initial.date, compare: initial.compare };
let client: NadirClient | null = null;
let clientKey = '';
let zooms: Zooms = {};
const masks = new Map<string, CoverageMask>();
const shown: Record<Which, Shown | null> = { main: null, compare: null };

const map = L.map(mapElement, { crs: crsOf(state.type), maxZoom: MAX_ZOOM, attributionControl: false });
L.control.attribution({ prefix: 'Leaflet | nadir' }).addTo(map);
const divider = document.createElement('div');
divider.id = 'swipe-divider';
divider.hidden = true;
// The labels and the slider sit on the map, so they move with it when the download list or the
// message takes room; the slider's presses must not pan the map.
mapElement.append(divider, $('direction'), onScreen, $('swipe'), $('swipe-labels'), $('timeline'), message);
L.DomEvent.disableClickPropagation($('timeline'));
L.DomEvent.disableClickPropagation($('swipe'));
const swipe = setUpSwipe(map, $<HTMLInputElement>('swipe'), divider);

function centre(): WorldPoint {
  return toServerWorld(state.type, map.getCenter());
}

function syncHash(): void {
  writeHash({ ...state, zoom: map.getZoom(), centre: centre() });
  // The 3D view opens at the same place (its hash: zoom/lat/lon).
  const { lat, lon } = lonLatOf(centre());
  $<HTMLAnchorElement>('view-3d').href = `/map/terrain.html#${map.getZoom()}/${lat}/${lon}`;
}

/** Under the imagery, on Web Mercator only (the panoramas' grids are not the map's). */
const basemap = basemapUrl
  ? L.tileLayer(basemapUrl, { maxZoom: MAX_ZOOM, maxNativeZoom: 19, attribution: basemapCredit, zIndex: 0 })
  : null;

/** Shows a layer type centred on a server-world point, switching CRS when the grid changes. */
function showType(type: TileType, point: WorldPoint, zoom: number): void {
  state.type = type;
  removeLayers();
  if (basemap) {
    if (isStraightDown(type)) basemap.addTo(map);
    else basemap.remove();
  }
  map.options.crs = crsOf(type);
  // reset: the pixel origin must be recomputed in the new CRS, not panned to (an option of
  // Leaflet's setView that @types/leaflet leaves out).
  map.setView(fromServerWorld(type, point), zoom, { reset: true } as L.ZoomPanOptions);
  layerSelect.value = type;
  mapElement.dataset.tiles = 'loading';
  $('direction').textContent = LABELS[type];
  mapElement.dataset.layer = type;
}

function removeLayers(): void {
  for (const which of ['main', 'compare'] as const) {
    dropLayer(which);
  }
}

/** Takes the main or compare layer off the map (its tiles' unloads no longer count). */
function dropLayer(which: Which): void {
  const layer = shown[which];
  if (!layer) return;
  layer.tiles.stop();
  layer.layer.remove();
  shown[which] = null;
}

/** The layer the view's mask and centre surveys come from (coverage-view.ts GroundType). */
function ground(): GroundType {
  return state.type === 'TrueOrtho' ? 'TrueOrtho' : 'Vert';
}

function maskFor(filters: Filters): CoverageMask {
  const type = ground();
  const key = `${type}|${filterKey(filters)}@${zooms[type]}`;
  // Masks are asked for once update() has made the client.
  if (!masks.has(key)) masks.set(key, new CoverageMask(client!, filters, zooms[type] ?? 20, type));
  return masks.get(key)!;
}

/**
 * The server-world box of the view: Leaflet asks for the tiles in view only, and a mask tile of a
 * place with no imagery at all is a 404 of its own, so the mask is not fetched further out.
 */
function viewBox(): WorldBox {
  const size = map.getSize();
  const corners = (
    [
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
    ] as const
  ).map(([fx, fy]) => toServerWorld(state.type, map.containerPointToLatLng([fx * size.x, fy * size.y])));
  const us = corners.map(([u]) => u);
  const vs = corners.map(([, v]) => v);
  return [Math.min(...us), Math.min(...vs), Math.max(...us), Math.max(...vs)];
}

/** Puts the main or compare layer on the map, rebuilt only when what it shows changed. */
async function place(which: Which, date: string, mask: CoverageMask): Promise<void> {
  const filters = filtersFor(date);
  const nativeZoom = zooms[state.type] ?? MAX_ZOOM;
  const id = `${state.type}|${filterKey(filters)}|${nativeZoom}|${zooms[ground()]}`;
  await mask.load(...viewBox());
  const current = shown[which];
  if (current?.id === id) {
    refreshLayer(current.layer);
    return;
  }
  dropLayer(which);
  const pane = which === 'compare' ? COMPARE_PANE : 'tilePane';
  const layer = makeLayer({
    client: client!,
    type: state.type,
    filters,
    nativeZoom,
    minNativeZoom: mask.minZoom,
    mask,
    pane,
  });
  shown[which] = { id, layer, tiles: trackTiles(layer, noteLoaded) };
  layer.addTo(map);
}

/** Fills a date list with the dates at the centre, keeping the chosen one. */
function fillDates(
  select: HTMLSelectElement,
  dates: [string, string][],
  chosen: string,
  first: [string, string],
): void {
  const options = new Map([first, ...dates]);
  if (chosen && !options.has(chosen)) options.set(chosen, chosen);
  select.replaceChildren(
    ...[...options].map(([value, text]) =>
      Object.assign(document.createElement('option'), { value, textContent: text }),
    ),
  );
  select.value = chosen;
}

/** One side of the view for describeCentre: the main layer, or the compare layer of the swipe. */
interface Side {
  name: 'left' | 'right' | '';
  filters: Filters;
  mask: CoverageMask;
}

/**
 * The surveys drawn at the centre, each side of the swipe: X-Survey-Ids of the centre tile, named
 * by date ("On screen: 2025-10-20 (d3a5f7c1)"; with a swipe, "left ...; right ...").
 */
async function describeCentre(surveys: Survey[], sides: Side[]): Promise<void> {
  const z = Math.min(map.getZoom(), zooms[state.type] ?? MAX_ZOOM);
  const [u, v] = centre();
  const tile = { z, x: Math.floor(u * 2 ** (z - 8)), y: Math.floor(v * 2 ** (z - 8)) };
  const said: string[] = [];
  const found: string[][] = [];
  for (const side of sides) {
    // A panorama's server tile z/x/y covers the same ground as the Vert one (decisions.md "Tiles").
    const answer = side.mask.covers(tile.z, tile.x, tile.y)
      ? await client!.tile({ type: state.type, tile, format: 'img', ...side.filters })
      : null;
    const ids = answer?.surveyIds ?? [];
    found.push(ids);
    const named = ids.map((id) => {
      const survey = surveys.find((s) => s.id === id);
      return survey ? `${survey.captureDate} (${id.slice(0, 8)})` : id.slice(0, 8);
    });
    const text = named.length > 0 ? named.join(', ') : 'nothing';
    said.push(side.name ? `${side.name} ${text}` : text);
  }
  const any = found.some((ids) => ids.length > 0);
  onScreen.textContent = any ? `On screen: ${said.join('; ')}` : 'No imagery at the centre';
  onScreen.dataset.surveys = (found[0] ?? []).join(',');
  onScreen.dataset.compareSurveys = (found[1] ?? []).join(',');
}

/** The dates either side of the swipe, on the map beside the slider. */
function labelSwipe(surveys: Survey[]): void {
  const newest = surveys[0]?.captureDate;
  $('swipe-left').textContent = state.date || (newest ? `latest (${newest})` : 'latest');
  $('swipe-right').textContent = state.compare;
  $('swipe-labels').hidden = !state.compare;
}

/** `data-tiles` says when every shown layer has its tiles (tests and scripts wait for it). */
function noteLoaded(): void {
  const waiting = (shown.main?.tiles.waiting ?? 0) + (shown.compare?.tiles.waiting ?? 0);
  mapElement.dataset.tiles = waiting > 0 ? 'loading' : 'loaded';
}

let generation = 0;
/** Brings everything in line with the view and the form; a newer call makes an older one stop. */
async function update(): Promise<void> {
  const mine = ++generation;
  let keyChanged = false;
  syncHash();
  const key = keyInput.value.trim();
  if (!key) {
    rememberKey('');
    removeLayers();
    showError('Enter an API key to see imagery.');
    return;
  }
  if (!client || clientKey !== key) {
    client = new NadirClient({ baseUrl: location.origin, apiKey: key });
    clientKey = key;
    masks.clear();
    keyChanged = true;
  }
  try {
    const { lat, lon } = lonLatOf(centre());
    const filters = filtersFor(state.date);
    let surveys = await surveysAt(client, { lat, lon }, baseFilters(), ground());
    if (mine !== generation) return;
    // The server took the key: worth remembering (a mistyped one never is).
    rememberKey(key);
    // A drone survey has TrueOrtho and DetailDsm but no Vert: show its TrueOrtho rather than nothing.
    if (state.type === 'Vert' && surveys.length === 0) {
      const ortho = await surveysAt(client, { lat, lon }, baseFilters(), 'TrueOrtho');
      if (mine !== generation) return;
      if (ortho.length > 0) {
        showType('TrueOrtho', centre(), map.getZoom());
        surveys = ortho;
      }
    }
    zooms = nativeZooms(surveys, zooms);
    // `captureDate` and `tags` are among the fields surveysAt asks for.
    const dates = surveys.map((s): [string, string] => [
      s.captureDate!,
      `${s.captureDate}${s.tags?.length ? ` ${s.tags.join(' ')}` : ''}`,
    ]);
    fillDates(dateSelect, dates, state.date, ['', 'latest']);
    fillDates(compareSelect, dates, state.compare, ['', '(no swipe)']);
    const mask = maskFor(filters);
    await place('main', state.date, mask);
    if (state.compare) await place('compare', state.compare, maskFor(filtersFor(state.compare)));
    else dropLayer('compare');
    swipe.setActive(Boolean(state.compare));
    labelSwipe(surveys);
    if (mine !== generation) return;
    noteLoaded();
    showError('');
    const sides: Side[] = [{ name: state.compare ? 'left' : '', filters, mask }];
    if (state.compare) {
      const compareFilters = filtersFor(state.compare);
      sides.push({ name: 'right', filters: compareFilters, mask: maskFor(compareFilters) });
    }
    await Promise.all([
      describeCentre(surveys, sides),
      change.update({ keyChanged }),
      timeline.show(client, surveys, state.date, isStraightDown(state.type)),
    ]);
  } catch (error) {
    if (mine !== generation) return;
    removeLayers();
    change.hide();
    onScreen.textContent = '';
    showError(describeError(error));
  }
}

let pending: ReturnType<typeof setTimeout> | undefined;
/** Moves come in bursts (a drag fires many): settle first. */
function scheduleUpdate(): void {
  clearTimeout(pending);
  pending = setTimeout(update, 150);
}

$('controls').addEventListener('submit', (event) => event.preventDefault());
layerSelect.addEventListener('change', () => {
  // The select lists the tile types only.
  showType(layerSelect.value as TileType, centre(), map.getZoom());
  update();
});
dateSelect.addEventListener('change', () => {
  state.date = dateSelect.value;
  update();
});
compareSelect.addEventListener('change', () => {
  state.compare = compareSelect.value;
  update();
});
// The key is remembered once the server took it (update), never a mistyped one.
keyInput.addEventListener('change', update);
for (const id of ['since', 'until', 'include', 'exclude', 'hide-disasters']) $(id).addEventListener('change', update);

const timeline = setUpTimeline({
  map,
  strip: $('timeline'),
  choose(date) {
    state.date = date;
    dateSelect.value = date;
    update();
  },
});

const change = setUpChangeLayer({
  map,
  mapElement,
  controls: $('controls'),
  getClient: () => client,
  getType: () => state.type,
  getDates: () => ({ date: state.date, compare: state.compare }),
  centre: () => lonLatOf(centre()),
  maskFor,
  viewBox,
  showError: showNotice,
});

setUpAreaDownload({
  map,
  button: $<HTMLButtonElement>('draw'),
  panel: $('downloads'),
  summary: $('downloads-summary'),
  list: $('downloads-list'),
  getClient: () => client,
  getFilters: baseFilters,
  canDraw: () => isStraightDown(state.type) && client !== null,
  showError: showNotice,
});

showType(state.type, initial.centre, initial.zoom);
map.on('moveend', () => {
  syncHash();
  scheduleUpdate();
});
update();
