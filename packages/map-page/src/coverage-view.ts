// What the page knows of the imagery around the view, all through @nadir/client: the surveys at
// the view centre (coverage: their dates and each layer's native zoom) and where there is imagery
// at all (a coverage mask), so that the map asks for no tile that would be an empty 404.
import {
  type CoverageOptions,
  type DateFilters,
  NadirApiError,
  type NadirClient,
  NadirUsageError,
  type Survey,
  type TagFilters,
  TILE_SIZE,
  type TileType,
} from '@nadir/client';
import { serverWorldOf } from './grids.js';

/** The form's filters, as the client's tile and coverage calls take them. */
export interface Filters extends DateFilters, TagFilters {}
/** Each layer's native (deepest) zoom at the view centre. */
export type Zooms = Partial<Record<TileType, number>>;
/** A box of the server (Vert) world in zoom-0 pixels: west, north, east, south. */
export type WorldBox = [number, number, number, number];

/** Coverage's largest AOI: the 200 m square around the view centre. */
const CENTRE_RADIUS = 100;
/**
 * The mask is the alpha of PNG tiles this many zooms above the layer's native one: one mask tile
 * spans 64 native tiles. Tiles render down to 4 zooms below an asset's coarsest level, and a
 * 16k px asset has 6 levels, so the mask zoom still renders wherever there is imagery.
 */
const MASK_LEVELS = 6;

/** A filter set's identity, for caches and to know when layers must be rebuilt. */
export const filterKey = (filters: Filters): string => JSON.stringify(filters);

/** The message for a refusal: what a user can act on, with the API's code. */
export function describeError(error: unknown): string {
  if (error instanceof NadirUsageError) return `Invalid filter: ${error.message}`;
  if (error instanceof NadirApiError) {
    if (error.status === 401) return `The API key was refused (${error.code}): ${error.message}`;
    if (error.status === 403) return `This key may not see imagery (${error.code}): ${error.message}`;
    if (error.code === 'INVALID_PARAMETER' || error.status === 400) {
      const name = error.parameter ? ` ${error.parameter}` : '';
      return `Invalid filter${name} (${error.code}): ${error.message}`;
    }
    return `The server answered ${error.status} ${error.code}: ${error.message}`;
  }
  // Whatever was thrown (a fetch TypeError, or anything else): its message, or itself.
  return `Could not reach the server: ${(error as { message?: unknown } | null | undefined)?.message ?? error}`;
}

/** The surveys at the view centre, newest first (one coverage call; coverage is never billed). */
export async function surveysAt(
  client: NadirClient,
  { lat, lon }: { lat: number; lon: number },
  filters: Filters,
  type: GroundType = 'Vert',
): Promise<Survey[]> {
  const options: CoverageOptions = {
    aoi: { point: { lon, lat }, radius: CENTRE_RADIUS },
    resources: [type],
    fields: ['id', 'captureDate', 'tags', 'maxZoom'],
    limit: 100,
  };
  if (filters.since) options.since = filters.since;
  if (filters.until) options.until = filters.until;
  const page = await client.coverage(options);
  // Coverage takes no tag filters: the tiles' include/exclude are applied here, as the server does.
  const matches = (tags: string[], filter: string) =>
    tags.some((tag) => tag === filter || tag.startsWith(`${filter}:`));
  return page.surveys.filter(
    ({ tags = [] }) =>
      !(filters.exclude ?? []).some((filter) => matches(tags, filter)) &&
      (filters.include === undefined || filters.include.some((filter) => matches(tags, filter))),
  );
}

/**
 * Each layer's native (deepest) zoom among the surveys at the centre, beyond which Leaflet scales
 * tiles up instead of asking for tiles no survey has; a layer no survey there has keeps its last.
 */
export function nativeZooms(surveys: Survey[], previous: Zooms): Zooms {
  const zooms: Record<string, number> = {};
  for (const survey of surveys) {
    for (const [type, zoom] of Object.entries(survey.maxZoom ?? {})) zooms[type] = Math.max(zooms[type] ?? 0, zoom);
  }
  return { ...previous, ...zooms };
}

/**
 * The straight-down layer a view stands on: Vert for Vert and the panoramas (a panorama's tile
 * covers the same ground as Vert's), TrueOrtho for TrueOrtho (a drone survey may have no Vert).
 */
export type GroundType = 'Vert' | 'TrueOrtho';

/** Where a filter set has imagery, from the alpha of coarse PNG tiles of its ground layer. */
export class CoverageMask {
  /** Alpha per mask tile ("x/y"); null: none there; a promise while it is on its way. */
  #tiles = new Map<string, Uint8Array | null | Promise<unknown>>();
  readonly client: NadirClient;
  readonly filters: Filters;
  readonly zoom: number;
  readonly type: GroundType;

  constructor(client: NadirClient, filters: Filters, nativeZoom: number, type: GroundType = 'Vert') {
    this.client = client;
    this.filters = filters;
    this.type = type;
    this.zoom = Math.max(0, nativeZoom - MASK_LEVELS);
  }

  /**
   * The box of the layer's surveys under the filters (its TileJSON's bounds, from the catalogue's
   * groups), as a server-world box; null when none. Mask tiles outside it are known empty without
   * asking: zoomed out, asking them all was a flood of 404s (issue 35).
   */
  #extent: Promise<WorldBox | null> | undefined;
  /** The extent once known (undefined before): no tile outside it holds imagery. */
  #box: WorldBox | null | undefined;
  /**
   * The coarsest zoom the surveys have (TileJSON's minzoom), once known: a layer draws coarser
   * zooms from it, scaled, where the server would have nothing (or, far out, refuse) to draw.
   */
  minZoom: number | undefined;

  #extentOf(): Promise<WorldBox | null> {
    this.#extent ??= this.client.tileJson({ type: this.type, ...this.filters }).then(
      ({ bounds, minzoom }) => {
        this.minZoom = minzoom;
        if (!bounds) {
          this.#box = null;
          return null;
        }
        const [west, south, east, north] = bounds;
        const [x0, y0] = serverWorldOf(north, west);
        const [x1, y1] = serverWorldOf(south, east);
        this.#box = [x0, y0, x1, y1];
        return this.#box;
      },
      (error: unknown) => {
        this.#extent = undefined;
        throw error;
      },
    );
    return this.#extent;
  }

  /** Loads the mask tiles under a server-world box (zoom-0 pixels); resolves once all are known. */
  async load(west: number, north: number, east: number, south: number): Promise<void> {
    const extent = await this.#extentOf();
    if (!extent) return;
    [west, north] = [Math.max(west, extent[0]), Math.max(north, extent[1])];
    [east, south] = [Math.min(east, extent[2]), Math.min(south, extent[3])];
    if (!(west <= east && north <= south)) return;
    const scale = 2 ** this.zoom;
    const last = scale - 1;
    const clamp = (n: number) => Math.min(last, Math.max(0, Math.floor(n)));
    const jobs: Promise<unknown>[] = [];
    for (let x = clamp((west * scale) / TILE_SIZE); x <= clamp((east * scale) / TILE_SIZE); x++) {
      for (let y = clamp((north * scale) / TILE_SIZE); y <= clamp((south * scale) / TILE_SIZE); y++) {
        const key = `${x}/${y}`;
        const known = this.#tiles.get(key);
        if (known instanceof Promise) jobs.push(known);
        else if (known === undefined) {
          const job = this.#fetch(x, y).then((alpha) => this.#tiles.set(key, alpha));
          this.#tiles.set(key, job);
          jobs.push(job);
        }
      }
    }
    await Promise.all(jobs);
  }

  async #fetch(x: number, y: number): Promise<Uint8Array | null> {
    let answer: Awaited<ReturnType<NadirClient['tile']>>;
    try {
      answer = await this.client.tile({
        type: this.type,
        tile: { z: this.zoom, x, y },
        format: 'png',
        ...this.filters,
      });
    } catch (error) {
      this.#tiles.delete(`${x}/${y}`);
      throw error;
    }
    if (!answer) return null;
    // The bytes are a whole ArrayBuffer of their own (the answer's body), which Blob takes.
    const bytes = answer.bytes as Uint8Array<ArrayBuffer>;
    const bitmap = await createImageBitmap(new Blob([bytes], { type: answer.contentType }));
    const canvas = new OffscreenCanvas(TILE_SIZE, TILE_SIZE);
    const context = canvas.getContext('2d')!;
    context.drawImage(bitmap, 0, 0);
    const rgba = context.getImageData(0, 0, TILE_SIZE, TILE_SIZE).data;
    const alpha = new Uint8Array(TILE_SIZE * TILE_SIZE);
    for (let i = 0; i < alpha.length; i++) alpha[i] = rgba[i * 4 + 3]!;
    return alpha;
  }

  /**
   * Whether server tile z/x/y may hold imagery: true when a mask pixel under it is not transparent;
   * false where the mask says none, and while its mask tile is not known yet (it is asked for
   * once known).
   */
  covers(z: number, x: number, y: number): boolean {
    if (this.#box === null) return false;
    if (this.#box) {
      const [west, north, east, south] = this.#box;
      const side = TILE_SIZE / 2 ** z;
      if (x * side > east || (x + 1) * side < west || y * side > south || (y + 1) * side < north) return false;
    }
    const shift = z - this.zoom;
    // The tile's box in mask-zoom pixels; at least one pixel wide.
    const size = shift >= 0 ? TILE_SIZE / 2 ** shift : TILE_SIZE * 2 ** -shift;
    const x0 = Math.floor(x * size);
    const y0 = Math.floor(y * size);
    const x1 = Math.max(x0 + 1, Math.ceil((x + 1) * size));
    const y1 = Math.max(y0 + 1, Math.ceil((y + 1) * size));
    if ((x1 - x0) * (y1 - y0) > 16 * TILE_SIZE * TILE_SIZE) return true;
    for (let ty = Math.floor(y0 / TILE_SIZE); ty <= Math.floor((y1 - 1) / TILE_SIZE); ty++) {
      for (let tx = Math.floor(x0 / TILE_SIZE); tx <= Math.floor((x1 - 1) / TILE_SIZE); tx++) {
        const alpha = this.#tiles.get(`${tx}/${ty}`);
        if (!(alpha instanceof Uint8Array)) continue;
        const left = Math.max(x0, tx * TILE_SIZE) - tx * TILE_SIZE;
        const right = Math.min(x1, (tx + 1) * TILE_SIZE) - tx * TILE_SIZE;
        const top = Math.max(y0, ty * TILE_SIZE) - ty * TILE_SIZE;
        const bottom = Math.min(y1, (ty + 1) * TILE_SIZE) - ty * TILE_SIZE;
        for (let py = top; py < bottom; py++) {
          for (let px = left; px < right; px++) if (alpha[py * TILE_SIZE + px]! > 0) return true;
        }
      }
    }
    return false;
  }
}
