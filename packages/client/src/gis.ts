/**
 * TileJSON and WMTS (docs/gis.md): the descriptions GIS software and map libraries configure
 * themselves from. URLs meant for those programs carry the key in the query, since they cannot
 * send a header; the server then repeats it in every URL of the answer.
 */
import { NadirUsageError } from './errors.js';
import { checkTile, type TileXYZ } from './panorama.js';
import {
  type DateFilters,
  dateFilterParameters,
  oneOf,
  type TagFilters,
  tagFilterParameters,
  tileType,
} from './query.js';
import { type CallOptions, checkSurveyId, type Transport } from './requests.js';
import type { TileType } from './types.js';

export interface TileJsonRequest extends DateFilters, TagFilters {
  type: TileType;
  /** One survey's layer; the filters then do not apply (the server takes none). */
  surveyId?: string;
}

/** TileJSON 3.0.0 as nadir writes it (docs/gis.md "TileJSON"). */
export interface TileJson {
  tilejson: string;
  /** `.../{z}/{x}/{y}.img?...`: the filters as written, and the key when it was sent in the query. */
  tiles: string[];
  scheme?: 'xyz' | 'tms';
  name?: string;
  description?: string;
  attribution?: string;
  /** [west, south, east, north]; absent when no survey matches. */
  bounds?: [number, number, number, number];
  /** [lon, lat, zoom] */
  center?: [number, number, number];
  minzoom?: number;
  maxzoom?: number;
  [extra: string]: unknown;
}

export function tileJsonPath(request: TileJsonRequest): { path: string; params: URLSearchParams } {
  const type = tileType(request.type);
  const params = new URLSearchParams();
  dateFilterParameters(request, params);
  tagFilterParameters(request, params);
  if (request.surveyId === undefined) return { path: `/tiles/v3/${type}/tilejson.json`, params };
  if (params.size > 0)
    throw new NadirUsageError("since, until, include and exclude do not apply to one survey's TileJSON");
  return {
    path: `/tiles/v3/surveys/${encodeURIComponent(checkSurveyId(request.surveyId))}/${type}/tilejson.json`,
    params,
  };
}

export async function tileJson(
  transport: Transport,
  request: TileJsonRequest,
  options: CallOptions,
): Promise<TileJson> {
  const { path, params } = tileJsonPath(request);
  return (await (await transport.get(path, params, true, options.signal)).json()) as TileJson;
}

export type WmtsFilters = DateFilters & TagFilters;

function wmtsParameters(filters: WmtsFilters): URLSearchParams {
  const params = new URLSearchParams();
  dateFilterParameters(filters, params);
  tagFilterParameters(filters, params);
  return params;
}

/** The capabilities URL for QGIS, ArcGIS or GDAL (`WMTS:<url>,layer=Vert`). */
export function wmtsCapabilitiesUrl(transport: Transport, filters: WmtsFilters = {}): string {
  const params = wmtsParameters(filters);
  params.set('apikey', transport.apiKey);
  return `${transport.baseUrl}/wmts/1.0.0/WMTSCapabilities.xml?${params}`;
}

/** The capabilities document, as XML text (the client does not parse XML: browsers and Node differ). */
export async function wmtsCapabilities(
  transport: Transport,
  filters: WmtsFilters,
  options: CallOptions,
): Promise<string> {
  const response = await transport.get(
    '/wmts/1.0.0/WMTSCapabilities.xml',
    wmtsParameters(filters),
    true,
    options.signal,
  );
  return response.text();
}

export interface WmtsTileRequest extends WmtsFilters {
  /** `Vert`, or a tag layer such as `Vert:disaster:hurricane`. */
  layer: string;
  /** `current` or a capture date from the capabilities' Time values. */
  time?: string;
  tile: TileXYZ;
  format: 'png' | 'jpg' | 'img';
}

/** The RESTful ResourceURL of one tile (TileMatrix/TileRow/TileCol, so y before x). */
export function wmtsTilePath(request: WmtsTileRequest): { path: string; params: URLSearchParams } {
  if (typeof request.layer !== 'string' || !/^Vert(:[^/\s]+)*$/.test(request.layer))
    throw new NadirUsageError(
      `layer must be Vert or a tag layer such as Vert:disaster, got ${JSON.stringify(request.layer)}`,
    );
  const time = request.time ?? 'current';
  if (time !== 'current' && !/^\d{4}-\d{2}-\d{2}$/.test(time))
    throw new NadirUsageError(`time must be current or YYYY-MM-DD, got ${JSON.stringify(time)}`);
  const { z, x, y } = checkTile(request.tile);
  const format = oneOf('format', request.format, ['png', 'jpg', 'img']);
  // Colons kept as written: they are valid in a path segment, and the capabilities' ResourceURLs show them so.
  const layer = encodeURIComponent(request.layer).replaceAll('%3A', ':');
  return {
    path: `/wmts/1.0.0/${layer}/default/${time}/GoogleMapsCompatible/${z}/${y}/${x}.${format}`,
    params: wmtsParameters(request),
  };
}
