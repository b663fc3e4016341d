/**
 * The command line's shared options: the server and key (--url/--key or NADIR_URL/NADIR_API_KEY),
 * the area (--point/--radius or --aoi FILE.geojson), parsed with node:util parseArgs. Every
 * mistake is a CliUsageError: one line on stderr, exit code 2.
 */
import { readFile } from 'node:fs/promises';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Aoi, aoiAround, type BBox, checkAoi, MAX_RADIUS, parsePoint } from '../../area.js';
import { type AreaGrid, areaGrid } from '../../area-grid.js';
import { NadirUsageError } from '../../errors.js';
import { dateFilterParameters } from '../../query.js';

export class CliUsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
/** The values parseArgs gives for these options: strings or booleans, each maybe absent. */
type ParsedValues<O extends Options> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string;
};

export const SERVER_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies Options;

/** --since and --until: the capture-date filters of the calls that take them. */
export const DATE_OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
} as const satisfies Options;

/**
 * --since and --until as a call's filters, the ones not given left out. Checked here: a date the
 * API does not take (`--since yesterday`) is a mistake in the command line, exit code 2, before
 * anything is sent (the client's own check would make it a failed run, exit code 1).
 */
export function dateFilters(values: { since?: string; until?: string }): { since?: string; until?: string } {
  asUsage(() => dateFilterParameters(values, new URLSearchParams()));
  return {
    ...(values.since === undefined ? {} : { since: values.since }),
    ...(values.until === undefined ? {} : { until: values.until }),
  };
}

export const AREA_OPTIONS = {
  point: { type: 'string' },
  radius: { type: 'string' },
  aoi: { type: 'string' },
} as const satisfies Options;

/**
 * `--point -85.41,29.94` as `--point=-85.41,29.94`: parseArgs takes a value starting with a dash
 * for an option, and western longitudes and southern latitudes all start with one.
 */
function joinNegativeValues(args: string[], options: Options): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name && options[name]?.type === 'string' && next !== undefined && /^-[\d.]/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

export function parseCommandLine<O extends Options>(args: string[], options: O): { values: ParsedValues<O> } {
  try {
    const values = joinNegativeValues(args, options);
    return parseArgs({ args: values, options, allowPositionals: false, strict: true }) as { values: ParsedValues<O> };
  } catch (error) {
    throw new CliUsageError((error as Error).message.replace(/\s*\n\s*/g, ' '));
  }
}

/** Turns the client's validation errors into usage errors (they come from the command line here). */
export function asUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof NadirUsageError) throw new CliUsageError(error.message);
    throw error;
  }
}

/**
 * A command's options with the server's (--url, --key, --json), and the server and key they or the
 * environment give: every command starts so, a usage error for the first mistake.
 */
export function serverCommandLine<O extends Options>(
  args: string[],
  options: O,
  env: Record<string, string | undefined>,
): { values: ParsedValues<typeof SERVER_OPTIONS & O>; settings: ServerSettings } {
  const { values } = parseCommandLine(args, { ...SERVER_OPTIONS, ...options });
  // A command's own options do not redefine the server's, so url and key are strings.
  return { values, settings: serverSettings(values as { url?: string; key?: string }, env) };
}

/** The arguments after a command's one subcommand (`tiles export`, `stac search`). */
export function subcommandArgs(command: string, subcommand: string, args: string[]): string[] {
  const [sub, ...rest] = args;
  if (sub !== subcommand) {
    throw new CliUsageError(
      `unknown ${command} subcommand ${JSON.stringify(sub ?? '')}: the one there is is ${subcommand}`,
    );
  }
  return rest;
}

export interface ServerSettings {
  baseUrl: string;
  apiKey: string;
}

export function serverSettings(
  values: { url?: string; key?: string },
  env: Record<string, string | undefined>,
): ServerSettings {
  const baseUrl = values.url ?? env.NADIR_URL;
  const apiKey = values.key ?? env.NADIR_API_KEY;
  if (!baseUrl) throw new CliUsageError('no server: give --url or set NADIR_URL');
  if (!apiKey) throw new CliUsageError('no API key: give --key or set NADIR_API_KEY');
  return { baseUrl, apiKey };
}

export function parseRadius(text: string): number {
  const radius = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : Number.NaN;
  if (!(radius >= 1 && radius <= MAX_RADIUS))
    throw new CliUsageError(`--radius must be metres from 1 to ${MAX_RADIUS}, got ${JSON.stringify(text)}`);
  return radius;
}

/** Every [lon, lat] position of a GeoJSON object (geometry, Feature or FeatureCollection). */
function positions(value: unknown, into: [number, number][]): void {
  if (Array.isArray(value)) {
    if (value.length >= 2 && typeof value[0] === 'number' && typeof value[1] === 'number')
      into.push([value[0], value[1]]);
    else for (const item of value) positions(item, into);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const object = value as Record<string, unknown>;
  if (object.type === 'FeatureCollection') positions((object.features as unknown[]) ?? [], into);
  else if (object.type === 'Feature') positions(object.geometry, into);
  else if (object.type === 'GeometryCollection') positions(object.geometries, into);
  else positions(object.coordinates, into);
}

/** The bounding box of a GeoJSON file's coordinates (WGS84 longitude, latitude, as GeoJSON has them). */
export async function geoJsonBBox(path: string): Promise<BBox> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new CliUsageError(`--aoi ${path}: ${(error as Error).message}`);
  }
  const found: [number, number][] = [];
  positions(parsed, found);
  if (found.length === 0) throw new CliUsageError(`--aoi ${path}: no coordinates in it`);
  const lons = found.map(([lon]) => lon);
  const lats = found.map(([, lat]) => lat);
  return { west: Math.min(...lons), south: Math.min(...lats), east: Math.max(...lons), north: Math.max(...lats) };
}

/**
 * The AOI from --point and --radius, or the square around --aoi's GeoJSON. A GeoJSON area wider
 * than the API's 200 m is refused unless the command splits it (`--split`, download only):
 * covering it takes one coverage call, token and billed transaction per cell, which a customer
 * should choose knowingly.
 */
export async function areaOf(values: { point?: string; radius?: string; aoi?: string }): Promise<Aoi> {
  const area = await areaOrGrid(values, false);
  return area.aoi as Aoi;
}

export interface AreaChoice {
  /** One AOI, when the area fits in one. */
  aoi?: Aoi;
  /** Else (with splitting allowed) the grid of AOIs covering it. */
  grid?: AreaGrid;
}

export async function areaOrGrid(
  values: { point?: string; radius?: string; aoi?: string },
  split: boolean,
): Promise<AreaChoice> {
  if (values.aoi !== undefined) {
    if (values.point !== undefined || values.radius !== undefined)
      throw new CliUsageError('give --aoi or --point with --radius, not both');
    const bbox = await geoJsonBBox(values.aoi);
    const aoi = asUsage(() => aoiAround(bbox));
    if (aoi.radius <= MAX_RADIUS) return { aoi };
    const grid = asUsage(() => areaGrid(bbox));
    if (split) return { grid };
    throw new CliUsageError(
      `--aoi ${values.aoi} is ${Math.ceil(aoi.radius * 2)} m across, over the ${2 * MAX_RADIUS} m of one area; ` +
        `download --split fetches it as ${grid.cells.length} areas, each billed as a transaction`,
    );
  }
  if (values.point === undefined || values.radius === undefined)
    throw new CliUsageError('give --point LON,LAT and --radius M (or --aoi FILE.geojson)');
  const point = asUsage(() => parsePoint(values.point as string));
  return { aoi: asUsage(() => checkAoi({ point, radius: parseRadius(values.radius as string) })) };
}
