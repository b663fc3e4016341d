// An area drawn on the map -> coverage -> per-type downloads at native size. One coverage call per
// area: its transaction token is kept by the client and every download of the area uses it, so
// the whole area is one transaction (billing is per token, docs/api.md "The transaction token").
import {
  type Aoi,
  aoiAround,
  type CoverageOptions,
  MAX_RADIUS,
  type NadirClient,
  type PlannedImage,
  planDownload,
  type Survey,
} from '@nadir/client';
import { describeError, type Filters } from './coverage-view.js';

type DownloadType = 'TrueOrtho' | 'DetailDsm';
const TYPES: DownloadType[] = ['TrueOrtho', 'DetailDsm'];
const FORMAT = 'tif';

/**
 * The square the server cuts for an AOI: 2 x radius ground metres a side, centred on the point, on
 * Web Mercator (a ground metre is 1 / cos(lat) Mercator metres there), as src/geo/aoi.ts draws it.
 */
export function aoiSquare(aoi: Aoi): L.LatLngBounds {
  const centre = L.CRS.EPSG3857.project(L.latLng(aoi.point.lat, aoi.point.lon));
  const half = aoi.radius / Math.cos((aoi.point.lat * Math.PI) / 180);
  const corner = (dx: number, dy: number) => L.CRS.EPSG3857.unproject(L.point(centre.x + dx, centre.y + dy));
  return L.latLngBounds(corner(-half, -half), corner(half, half));
}

export interface AreaDownloadOptions {
  map: L.Map;
  button: HTMLButtonElement;
  panel: HTMLElement;
  summary: HTMLElement;
  list: HTMLElement;
  getClient: () => NadirClient | null;
  getFilters: () => Filters;
  canDraw: () => boolean;
  showError: (text: string) => void;
}

/**
 * Wires the draw button: in draw mode a press-drag-release on the map draws a rectangle (the map
 * does not pan meanwhile); the area's coverage then lists one download per survey and type.
 */
export function setUpAreaDownload({
  map,
  button,
  panel,
  summary,
  list,
  getClient,
  getFilters,
  canDraw,
  showError,
}: AreaDownloadOptions): void {
  let drawing = false;
  let start: L.LatLng | null = null;
  let rectangle: L.Rectangle | null = null;

  function setDrawing(on: boolean): void {
    drawing = on;
    button.setAttribute('aria-pressed', String(on));
    map.getContainer().classList.toggle('drawing', on);
    if (on) map.dragging.disable();
    else map.dragging.enable();
  }

  button.addEventListener('click', () => {
    if (!canDraw()) {
      showError('Areas are drawn on a straight-down layer: switch to Vert or TrueOrtho first.');
      return;
    }
    setDrawing(!drawing);
  });

  map.on('mousedown', (event: L.LeafletMouseEvent) => {
    if (!drawing) return;
    start = event.latlng;
    if (rectangle) rectangle.remove();
    rectangle = L.rectangle(L.latLngBounds(start, start), { weight: 2, interactive: false }).addTo(map);
  });
  map.on('mousemove', (event: L.LeafletMouseEvent) => {
    if (drawing && start) rectangle!.setBounds(L.latLngBounds(start, event.latlng));
  });
  map.on('mouseup', (event: L.LeafletMouseEvent) => {
    if (!drawing || !start) return;
    const bounds = L.latLngBounds(start, event.latlng);
    start = null;
    setDrawing(false);
    rectangle!.setBounds(bounds);
    listDownloads(bounds).catch((error: unknown) => showError(describeError(error)));
  });

  async function listDownloads(bounds: L.LatLngBounds): Promise<void> {
    const bbox = { west: bounds.getWest(), south: bounds.getSouth(), east: bounds.getEast(), north: bounds.getNorth() };
    list.replaceChildren();
    if (panel.hidden) {
      panel.hidden = false;
      // The list takes its place below the map: Leaflet must learn the map's new height.
      map.invalidateSize();
    }
    if (!(bbox.west < bbox.east && bbox.south < bbox.north)) {
      summary.textContent = 'Drag a rectangle: press, move, release.';
      return;
    }
    const aoi = aoiAround(bbox);
    // What is drawn is what is cut: the AOI's square, as the server draws it, not the dragged box.
    const square = aoiSquare(aoi);
    rectangle?.setBounds(square);
    panel.dataset.square = square.toBBoxString();
    if (aoi.radius > MAX_RADIUS) {
      summary.textContent = `The area is ${Math.round(2 * aoi.radius)} m across; draw one of at most ${2 * MAX_RADIUS} m.`;
      return;
    }
    // The button draws only once there is a client (canDraw).
    const client = getClient()!;
    const { since, until } = getFilters();
    const options: CoverageOptions = {
      aoi,
      resources: TYPES,
      filter: 'anyTypes',
      fields: ['id', 'captureDate', 'pixelSizes'],
    };
    if (since) options.since = since;
    if (until) options.until = until;
    const surveys: Survey[] = [];
    for await (const survey of client.surveys({ ...options, limit: 100 })) surveys.push(survey);
    const plan = planDownload(surveys, TYPES, FORMAT, aoi);
    summary.textContent =
      `${surveys.length} survey(s) cover this ${Math.round(2 * aoi.radius)} m square; ` +
      'every file below is one transaction together, billed once at the first download.';
    for (const image of plan.images) list.append(downloadItem(client, aoi, image));
  }

  function downloadItem(client: NadirClient, aoi: Aoi, image: PlannedImage<DownloadType>): HTMLLIElement {
    const item = document.createElement('li');
    const link = document.createElement('button');
    link.type = 'button';
    link.className = 'download';
    link.dataset.type = image.type;
    link.dataset.survey = image.surveyId;
    link.textContent = `${image.fileName} (${image.size}x${image.size} px, ${image.gsd.toFixed(3)} m/px)`;
    link.addEventListener('click', async () => {
      link.disabled = true;
      try {
        // A plan of these types has no baseline (DsmChange's only): it is undefined here.
        const response = await client.imagery({ ...image, baseline: image.baseline?.id, aoi });
        save(await response.blob(), image.fileName);
        link.dataset.done = 'true';
      } catch (error) {
        showError(describeError(error));
      } finally {
        link.disabled = false;
      }
    });
    item.append(link);
    return item;
  }
}

/** Hands a fetched file to the browser's downloads. */
function save(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = fileName;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  // The download has taken the blob by the next task; the URL only holds memory.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
