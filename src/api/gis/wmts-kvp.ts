/**
 * The OGC side of nadir's WMTS (issue 34): the KVP binding's requests (07-057r7 7.1.1.2 and
 * 7.2.2.1: GetCapabilities and GetTile, parameter names case-insensitive) and the reading of a
 * tile request as an OGC client makes it (KVP, or a ResourceURL, which carries `SERVICE=WMTS`),
 * with the standard's exception codes. Pure, but for `today`.
 */

import type { ContentType } from '../../catalogue/survey.js';
import { parseTagFilter } from '../../catalogue/survey-filters.js';
import { storable } from '../../catalogue/survey-rows.js';
import { isIsoDate } from '../../geo/dates.js';
import { MAX_ZOOM } from '../../geo/web-mercator.js';
import type { LayerFilterQuery } from '../../gis/layer-filter.js';
import type { MapLayer } from '../../gis/map-layers.js';
import { owsError } from '../../gis/ows-exception.js';
import {
  CURRENT,
  PRODUCT_LAYERS,
  STYLE,
  TILE_MATRIX_SET,
  TIME_PLACEHOLDER,
  WMTS_TYPE,
  wmtsLayerOf,
} from '../../gis/wmts.js';
import { type HeightTileQuery, parseHeightTileQuery } from '../../height-tiles/height-tile-query.js';
import { parseTileQuery, type TileQuery } from '../../tiles/tile-query.js';
import type { TileFormat } from '../../tiles/tile-renderer.js';

/** The KVP parameters of WMTS (and TIME, the dimension), upper-cased. */
const OGC_NAMES = new Set([
  'SERVICE',
  'REQUEST',
  'VERSION',
  'ACCEPTVERSIONS',
  'LAYER',
  'STYLE',
  'FORMAT',
  'TILEMATRIXSET',
  'TILEMATRIX',
  'TILEROW',
  'TILECOL',
  'TIME',
]);

const FORMATS: Readonly<Record<string, TileFormat>> = { 'image/png': 'png', 'image/jpeg': 'jpg' };

/** Whether a request is an OGC one (it names SERVICE or REQUEST, in any case): answered as WMTS says. */
export function isOgcRequest(query: unknown): boolean {
  if (!query || typeof query !== 'object') return false;
  return Object.keys(query).some((name) => {
    const upper = name.toUpperCase();
    return upper === 'SERVICE' || upper === 'REQUEST';
  });
}

function clip(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

/**
 * The OGC parameters of a query string by their upper-cased names. One value each: a name given
 * twice (`LAYER` and `layer` alike) has no right answer. Values no parameter can mean anything
 * with (a NUL, a lone surrogate) are refused here, as the API's own parameters are.
 */
export function ogcParameters(query: Record<string, unknown>): Map<string, string> {
  const found = new Map<string, string>();
  for (const [name, value] of Object.entries(query)) {
    const upper = name.toUpperCase();
    if (!OGC_NAMES.has(upper)) continue;
    if (Array.isArray(value) || found.has(upper)) {
      throw owsError('InvalidParameterValue', upper, `${upper} must be given once, but was given more than once`);
    }
    const text = String(value ?? '');
    if (!storable(text)) {
      throw owsError('InvalidParameterValue', upper, `${upper} holds a NUL byte or a lone UTF-16 surrogate`);
    }
    found.set(upper, text);
  }
  return found;
}

/** A GetTile request as OGC clients send it: the parts still as text, checked by ogcTileQuery. */
export interface OgcTileRequest {
  layer: string;
  /** undefined: not given (the Default). */
  time: string | undefined;
  tileMatrix: string;
  row: string;
  col: string;
  format: TileFormat;
}

export type KvpRequest = { request: 'GetCapabilities' } | { request: 'GetTile'; tile: OgcTileRequest };

function required(parameters: Map<string, string>, name: string): string {
  const value = parameters.get(name);
  if (value === undefined) throw owsError('MissingParameterValue', name, `Missing required parameter ${name}`);
  return value;
}

/** SERVICE, when given, must be WMTS (in any case, as OWSLib and GDAL send it): returns it. */
export function checkService(parameters: Map<string, string>): string | undefined {
  const service = parameters.get('SERVICE');
  if (service !== undefined && service.toUpperCase() !== 'WMTS') {
    throw owsError('InvalidParameterValue', 'SERVICE', `SERVICE must be WMTS, got ${clip(service)}`);
  }
  return service;
}

/**
 * The KVP request at the capabilities' URL, or undefined when it names no REQUEST (then it is the
 * RESTful GetCapabilities it always was). SERVICE must be WMTS; VERSION, when given, 1.0.0 (it
 * is not required: clients that leave it out still mean 1.0.0, the only version).
 */
export function parseKvp(parameters: Map<string, string>): KvpRequest | undefined {
  const service = checkService(parameters);
  const request = parameters.get('REQUEST');
  if (request === undefined) return undefined;
  if (service === undefined) throw owsError('MissingParameterValue', 'SERVICE', 'Missing required parameter SERVICE');
  // Operation names as written in the standard, but in any case as MapServer and GeoServer take them.
  const operation = request.toLowerCase();
  if (operation === 'getcapabilities') return { request: 'GetCapabilities' };
  if (operation !== 'gettile') {
    throw owsError(
      'OperationNotSupported',
      'REQUEST',
      `REQUEST ${clip(request)} is not supported: this WMTS answers GetCapabilities and GetTile`,
    );
  }
  const version = parameters.get('VERSION');
  if (version !== undefined && version !== '1.0.0') {
    throw owsError('InvalidParameterValue', 'VERSION', `VERSION must be 1.0.0, got ${clip(version)}`);
  }
  const layer = required(parameters, 'LAYER');
  const style = required(parameters, 'STYLE');
  // An empty STYLE is the default style, as most servers read it (OWSLib sends the layer's first).
  if (style !== '' && style !== STYLE) {
    throw owsError('InvalidParameterValue', 'STYLE', `STYLE must be ${STYLE}, got ${clip(style)}`);
  }
  const formatText = required(parameters, 'FORMAT');
  const format = Object.hasOwn(FORMATS, formatText) ? FORMATS[formatText] : undefined;
  if (format === undefined) {
    throw owsError(
      'InvalidParameterValue',
      'FORMAT',
      `FORMAT must be one of ${Object.keys(FORMATS).join(', ')}, got ${clip(formatText)}`,
    );
  }
  const matrixSet = required(parameters, 'TILEMATRIXSET');
  if (matrixSet !== TILE_MATRIX_SET) {
    throw owsError(
      'InvalidParameterValue',
      'TILEMATRIXSET',
      `TILEMATRIXSET must be ${TILE_MATRIX_SET}, got ${clip(matrixSet)}`,
    );
  }
  return {
    request: 'GetTile',
    tile: {
      layer,
      time: parameters.get('TIME'),
      tileMatrix: required(parameters, 'TILEMATRIX'),
      row: required(parameters, 'TILEROW'),
      col: required(parameters, 'TILECOL'),
      format,
    },
  };
}

const DIGITS = /^\d{1,10}$/;

/** An OGC tile request, read: the tile core's query, and what the capabilities must list for it. */
export type WmtsTileTarget = { kind: 'imagery'; query: TileQuery } | { kind: 'heights'; query: HeightTileQuery };

export interface OgcTileQuery {
  /** The query of the core that draws the layer: the tile core, or the height tile core. */
  target: WmtsTileTarget;
  /** What the layer draws: its capture dates are listed by this type. */
  type: ContentType;
  /** The layer's tag (undefined for Vert): a tag layer must be one the capabilities list. */
  tag: string | undefined;
  /** The capture date asked for (undefined: the Default, `current`): it must be a listed one. */
  date: string | undefined;
}

/**
 * A WMTS tile request read as the location tile it is: TileMatrix/TileRow/TileCol as z/y/x, the
 * layer's tag as `include`, Time as the last capture date; the Default (`current`) when TIME is
 * not given, empty, or a RESTful path's unfilled `{Time}`. Refusals carry the codes of 07-057r7:
 * a row or column outside the matrix is TileOutOfRange, anything else malformed
 * InvalidParameterValue. Whether the layer and the date are listed is the caller's to check.
 */
export function ogcTileQuery(tile: OgcTileRequest, filter: LayerFilterQuery, today: () => string): OgcTileQuery {
  const found = wmtsLayerOf(tile.layer);
  if (found === null) {
    const names = [WMTS_TYPE, `${WMTS_TYPE}:<tag>`, ...PRODUCT_LAYERS.map((product) => product.identifier)];
    throw owsError(
      'InvalidParameterValue',
      'LAYER',
      `LAYER must be one of ${names.join(', ')}; got ${clip(tile.layer)}`,
    );
  }
  const { layer, tag } = found;
  if (tag !== undefined) {
    let single = false;
    try {
      single = parseTagFilter(tag, undefined)?.include?.length === 1;
    } catch {
      single = false;
    }
    if (!single) throw owsError('InvalidParameterValue', 'LAYER', `No layer ${clip(tile.layer)} in this WMTS`);
    if (filter.include !== undefined) {
      throw owsError(
        'InvalidParameterValue',
        'include',
        'a tag layer already includes its tag: give include with the Vert layer instead',
      );
    }
  }
  const time = tile.time === undefined || tile.time === '' || tile.time === TIME_PLACEHOLDER ? CURRENT : tile.time;
  if (time !== CURRENT && !isIsoDate(time)) {
    throw owsError(
      'InvalidParameterValue',
      'TIME',
      `TIME must be ${CURRENT} or a listed capture date, got ${clip(time)}`,
    );
  }
  const z = DIGITS.test(tile.tileMatrix) ? Number(tile.tileMatrix) : Number.NaN;
  if (!(z <= MAX_ZOOM)) {
    throw owsError(
      'InvalidParameterValue',
      'TILEMATRIX',
      `TILEMATRIX must be a tile matrix of ${TILE_MATRIX_SET} (0 to ${MAX_ZOOM}), got ${clip(tile.tileMatrix)}`,
    );
  }
  const last = 2 ** z - 1;
  for (const [name, text] of [
    ['TILEROW', tile.row],
    ['TILECOL', tile.col],
  ] as const) {
    if (!DIGITS.test(text)) {
      throw owsError('InvalidParameterValue', name, `${name} must be a whole number, got ${clip(text)}`);
    }
    if (Number(text) > last) {
      throw owsError('TileOutOfRange', name, `${name} ${text} is outside tile matrix ${z} (0 to ${last})`);
    }
  }
  const address = { z: String(z), x: tile.col, file: `${tile.row}.${tile.format}` };
  const target = wmtsTileTarget(layer, address, { ...filter, include: tag ?? filter.include }, time, today);
  return { target, type: layer.type, tag, date: time === CURRENT ? undefined : time };
}

/**
 * The tile core's query for a WMTS layer's tile, imagery or heights, with Time (`current` or a
 * capture date) as the last capture date the filter allows: the mosaic as it was that day.
 */
export function wmtsTileTarget(
  layer: MapLayer,
  address: { z: string; x: string; file: string },
  filter: LayerFilterQuery,
  time: string,
  today: () => string,
): WmtsTileTarget {
  const lastDate = (until: string | undefined) =>
    time === CURRENT || (until !== undefined && until < time) ? until : time;
  if (layer.style === undefined) {
    const query = parseTileQuery({ contentType: layer.type, ...address }, filter, today);
    query.filter.until = lastDate(query.filter.until);
    return { kind: 'imagery', query };
  }
  const query = parseHeightTileQuery({ style: layer.style, ...address }, filter, today);
  query.until = lastDate(query.until);
  return { kind: 'heights', query };
}
