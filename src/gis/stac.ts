/**
 * STAC 1.0 documents of nadir's catalogue, for STAC API 1.0 clients (pystac-client, QGIS's STAC
 * browser, stac-browser): the landing page, conformance, the queryables, the one `surveys`
 * collection, its items (one per survey) and item collections with paging links. Links and asset
 * hrefs point at nadir's own endpoints with the caller's key as it came (gis-links.ts). Pure.
 */
import type { SurveyOrderKey } from '../catalogue/catalogue.js';
import { type Asset, RASTER_TYPES, type RasterType, type Survey, TILE_TYPES } from '../catalogue/survey.js';
import { multiPolygonBounds } from '../geo/polygon.js';
import type { QueryableKind } from './cql2.js';
import { type GisLinks, linkTo } from './gis-links.js';
import type { SurveysExtent } from './layer-extent.js';
import { HEIGHT_LAYERS, layerContentType, layerDescription, layerName, type MapLayer } from './map-layers.js';
import { type AoiDownload, aoiDataAssets } from './stac-aoi-assets.js';
import { applyFields, type FieldsChoice } from './stac-fields.js';
import { finestGsd, QUERYABLES, SURVEYS_COLLECTION } from './stac-order.js';
import { pageToken } from './stac-paging.js';
import { tileJsonUrl, xyzTemplate } from './tilejson.js';

export const STAC_VERSION = '1.0.0';
export const STAC_ROOT = '/stac/v1';
const GEOJSON = 'application/geo+json';
const JSON_TYPE = 'application/json';

/**
 * What the API honours, and nothing more. The filter classes are the CQL2 ones whose every
 * operator filters (cql2.ts): T_INTERSECTS works but is one of the temporal functions, whose
 * class asks for all of them, so it is not claimed. `ogcapi-features-3 features-filter` is not
 * claimed either: it asks for a queryables document per collection, and there is the API's one.
 */
export const CONFORMANCE_CLASSES = [
  'https://api.stacspec.org/v1.0.0/core',
  'https://api.stacspec.org/v1.0.0/collections',
  'https://api.stacspec.org/v1.0.0/ogcapi-features',
  'https://api.stacspec.org/v1.0.0/item-search',
  'https://api.stacspec.org/v1.0.0/item-search#sort',
  'https://api.stacspec.org/v1.0.0/ogcapi-features#sort',
  'https://api.stacspec.org/v1.0.0/item-search#fields',
  'https://api.stacspec.org/v1.0.0/ogcapi-features#fields',
  'https://api.stacspec.org/v1.0.0/item-search#filter',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2',
  'http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions-plus',
  'http://www.opengis.net/spec/cql2/1.0/conf/array-functions',
];

/** Projection extension v2 (`proj:code`) and web-map-links (`xyz`, `tilejson`, `wmts` links). */
export const PROJECTION_EXTENSION = 'https://stac-extensions.github.io/projection/v2.0.0/schema.json';
export const WEB_MAP_LINKS_EXTENSION = 'https://stac-extensions.github.io/web-map-links/v1.2.0/schema.json';
/** Every tile and raster of nadir is on the Web Mercator grid (decisions.md). */
const PROJ_CODE = 'EPSG:3857';
export const QUERYABLES_PATH = '/stac/v1/queryables';
const QUERYABLES_REL = 'http://www.opengis.net/def/rel/ogc/1.0/queryables';

export interface StacLink {
  rel: string;
  href: string;
  type?: string;
  title?: string;
  method?: string;
  /** A POST link's body (STAC API's paging of a POST search), used as it is (`merge: false`). */
  body?: Record<string, unknown>;
  merge?: boolean;
  /** web-map-links: the WMTS layer and its dimensions (`Time`). */
  'wmts:layer'?: string;
  'wmts:dimensions'?: Record<string, string>;
}

type Json = Record<string, unknown>;

const collectionPath = `${STAC_ROOT}/collections/${SURVEYS_COLLECTION}`;
const itemsPath = `${collectionPath}/items`;

const MEDIA_BY_RASTER: Record<RasterType, string> = {
  TrueOrtho: 'image/tiff; application=geotiff',
  DetailDsm: 'image/tiff; application=geotiff',
  Vert: 'image/tiff; application=geotiff',
};

function roundGsd(gsd: number): number {
  return Math.round(gsd * 1e6) / 1e6;
}

export function landingPage(links: GisLinks, openapiPath: string): Json {
  return {
    type: 'Catalog',
    stac_version: STAC_VERSION,
    id: 'nadir',
    title: 'nadir aerial surveys',
    description: 'Aerial surveys served by nadir: one item per survey, with its tiles and rasters as assets.',
    conformsTo: CONFORMANCE_CLASSES,
    links: [
      { rel: 'self', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) },
      { rel: 'root', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) },
      { rel: 'conformance', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/conformance`) },
      { rel: 'data', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/collections`) },
      { rel: 'child', type: JSON_TYPE, href: linkTo(links, collectionPath), title: 'Surveys' },
      { rel: 'search', type: GEOJSON, method: 'GET', href: linkTo(links, `${STAC_ROOT}/search`) },
      { rel: 'search', type: GEOJSON, method: 'POST', href: linkTo(links, `${STAC_ROOT}/search`) },
      // Public like /openapi.json (the key, when it came in the query, travels as in every link).
      { rel: QUERYABLES_REL, type: 'application/schema+json', href: linkTo(links, QUERYABLES_PATH) },
      { rel: 'service-desc', type: 'application/vnd.oai.openapi+json;version=3.1', href: linkTo(links, openapiPath) },
    ],
  };
}

const JSON_SCHEMA_TYPES: Record<QueryableKind, Json> = {
  string: { type: 'string' },
  number: { type: 'number' },
  instant: { type: 'string', format: 'date-time' },
  date: { type: 'string', format: 'date' },
  strings: { type: 'array', items: { type: 'string' } },
  geometry: { $ref: 'https://geojson.org/schema/Geometry.json' },
};

/** The queryables (the filter extension): what a CQL2 filter may name, as a JSON Schema. */
export function queryablesDocument(base: string): Json {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${base}${QUERYABLES_PATH}`,
    type: 'object',
    title: 'Queryables of the surveys',
    properties: Object.fromEntries(
      Object.entries(QUERYABLES).map(([name, queryable]) => [
        name,
        { description: queryable.description, ...JSON_SCHEMA_TYPES[queryable.kind] },
      ]),
    ),
    additionalProperties: false,
  };
}

/**
 * Links to the tile layers of every survey at once, with the web-map-links relation types:
 * TileJSON (whose `tiles` is the XYZ template), WMTS, and `xyz`, whose href is the template
 * itself: the extension defines it so, braces and all (the one kind of href that holds them).
 */
function layerLinks(links: GisLinks): StacLink[] {
  const layers: MapLayer[] = [...TILE_TYPES.map((type) => ({ type })), ...HEIGHT_LAYERS];
  return [
    // No type: `.img` tiles are JPEG where full and PNG at the edges of the surveys.
    { rel: 'xyz', title: 'Vert tiles (XYZ)', href: xyzTemplate(links, { type: 'Vert' }, {}) },
    ...layers.map((layer) => ({
      rel: 'tilejson',
      type: JSON_TYPE,
      title: `${layerName(layer)} tiles (TileJSON)`,
      href: tileJsonUrl(links, layer),
    })),
    {
      rel: 'wmts',
      type: 'application/xml',
      title: 'Vert, TrueOrtho and DetailDsm (WMTS)',
      href: linkTo(links, '/wmts/1.0.0/WMTSCapabilities.xml'),
    },
  ];
}

export function surveysCollection(links: GisLinks, extent: SurveysExtent, tags: string[]): Json {
  const bounds = extent.bounds ?? { minX: -180, minY: -90, maxX: 180, maxY: 90 };
  return {
    type: 'Collection',
    stac_version: STAC_VERSION,
    stac_extensions: [WEB_MAP_LINKS_EXTENSION],
    id: SURVEYS_COLLECTION,
    title: 'Surveys',
    description:
      'Every aerial survey: its footprint, photo times, tags and, as assets, its tile layers (XYZ) and rasters ' +
      '(GeoTIFF of an area up to 200 m across, through the coverage endpoint and its transaction token).',
    keywords: ['aerial', 'orthophoto', 'imagery'],
    // The operator's imagery: its terms are the operator's, not an open licence.
    license: 'proprietary',
    extent: {
      spatial: { bbox: [[bounds.minX, bounds.minY, bounds.maxX, bounds.maxY]] },
      temporal: { interval: [[extent.start ?? null, extent.end ?? null]] },
    },
    summaries: { 'nadir:tags': tags },
    links: [
      { rel: 'self', type: JSON_TYPE, href: linkTo(links, collectionPath) },
      { rel: 'root', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) },
      { rel: 'parent', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) },
      { rel: 'items', type: GEOJSON, href: linkTo(links, itemsPath) },
      ...layerLinks(links),
    ],
  };
}

export function collectionsList(links: GisLinks, collection: Json): Json {
  return {
    collections: [collection],
    links: [
      { rel: 'self', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/collections`) },
      { rel: 'root', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) },
    ],
  };
}

/**
 * An asset's native grid (projection extension v2): EPSG:3857 box, rows and columns, and the
 * affine transform of its full-resolution pixels, as the catalogue holds them (the COG's).
 */
function projection(asset: Asset): Json {
  const { minX, minY, maxX, maxY } = asset.bounds;
  return {
    'proj:code': PROJ_CODE,
    'proj:bbox': [minX, minY, maxX, maxY],
    'proj:shape': [asset.height, asset.width],
    'proj:transform': [(maxX - minX) / asset.width, 0, minX, 0, -(maxY - minY) / asset.height, maxY],
  };
}

function surveyAssets(links: GisLinks, survey: Survey, download?: AoiDownload): Json {
  const assets: Json = {};
  const layers: MapLayer[] = [...TILE_TYPES.map((type) => ({ type })), ...HEIGHT_LAYERS];
  for (const layer of layers) {
    const asset = survey.assets[layerContentType(layer)];
    if (!asset) continue;
    assets[`${layerName(layer).replace(' ', '_')}_tiles`] = {
      title: `${layerName(layer)} tiles of this survey`,
      description:
        `${layerDescription(layer, survey.id)} Web Mercator 256 px tiles. href is their TileJSON; nadir:xyz the XYZ ` +
        'template (replace {z}, {x}, {y})' +
        (layer.style === undefined
          ? ': `.img` is JPEG where the tile is full and PNG (transparent outside the survey) where it is not.'
          : '.'),
      href: tileJsonUrl(links, layer, survey.id),
      type: JSON_TYPE,
      roles: ['tiles'],
      'nadir:xyz': xyzTemplate(links, layer, {}, survey.id),
      gsd: roundGsd(asset.gsd),
      'nadir:min_zoom': asset.minZoom,
      'nadir:max_zoom': asset.maxZoom,
      ...projection(asset),
    };
  }
  if (download) return { ...assets, ...aoiDataAssets(links.base, survey, download) };
  for (const type of RASTER_TYPES) {
    const asset = survey.assets[type];
    if (!asset) continue;
    assets[type] = {
      title: `${type} raster of an area of this survey`,
      description:
        'An area up to 200 m across, not the whole survey: call /staticmap/v2/coverage.json with point, radius ' +
        `and resources=${type} for a transactionToken, then add transactionToken, point, radius and ` +
        'size (2 x radius / gsd for the native resolution) to this URL.',
      href: `${links.base}/staticmap/v2/surveys/${survey.id}/${type}.tif`,
      type: MEDIA_BY_RASTER[type],
      roles: ['data'],
      gsd: roundGsd(asset.gsd),
      ...projection(asset),
    };
  }
  return assets;
}

/**
 * The survey's imagery tiles for web maps (web-map-links): Vert, or TrueOrtho for a survey without
 * (a drone survey's usual products): the XYZ template, its TileJSON, and the WMTS layer at the
 * survey's capture date (the imagery as it was that day, this survey on top: the WMTS layers are
 * mosaics, not one survey's).
 */
function mapLinks(links: GisLinks, survey: Survey): StacLink[] {
  const type = survey.assets.Vert ? 'Vert' : survey.assets.TrueOrtho ? 'TrueOrtho' : undefined;
  if (type === undefined) return [];
  return [
    {
      rel: 'xyz',
      title: `${type} tiles of this survey (XYZ)`,
      href: xyzTemplate(links, { type }, {}, survey.id),
    },
    {
      rel: 'tilejson',
      type: JSON_TYPE,
      title: `${type} tiles of this survey (TileJSON)`,
      href: tileJsonUrl(links, { type }, survey.id),
    },
    {
      rel: 'wmts',
      type: 'application/xml',
      title: `${type} as on the capture date (WMTS)`,
      href: linkTo(links, '/wmts/1.0.0/WMTSCapabilities.xml'),
      'wmts:layer': type,
      'wmts:dimensions': { Time: survey.captureDate },
    },
  ];
}

export function surveyItem(links: GisLinks, survey: Survey, download?: AoiDownload): Json {
  const box = multiPolygonBounds(survey.footprint);
  return {
    type: 'Feature',
    stac_version: STAC_VERSION,
    stac_extensions: [PROJECTION_EXTENSION, WEB_MAP_LINKS_EXTENSION],
    id: survey.id,
    collection: SURVEYS_COLLECTION,
    geometry: { type: 'MultiPolygon', coordinates: survey.footprint },
    bbox: [box.minX, box.minY, box.maxX, box.maxY],
    properties: {
      // The survey is a span of photos: datetime is its first, the range all of them.
      datetime: survey.firstPhotoTime,
      start_datetime: survey.firstPhotoTime,
      end_datetime: survey.lastPhotoTime,
      // The finest of its products; each asset has its own.
      gsd: finestGsd(survey),
      // Each asset has its own grid (proj:bbox, proj:shape, proj:transform); all are Web Mercator.
      'proj:code': PROJ_CODE,
      'nadir:capture_date': survey.captureDate,
      'nadir:content_types': Object.keys(survey.assets),
      'nadir:tags': survey.tags,
      'nadir:version': survey.version,
      ...(survey.timezone ? { 'nadir:timezone': survey.timezone } : {}),
    },
    links: [
      { rel: 'self', type: GEOJSON, href: linkTo(links, `${itemsPath}/${survey.id}`) },
      { rel: 'collection', type: JSON_TYPE, href: linkTo(links, collectionPath) },
      { rel: 'parent', type: JSON_TYPE, href: linkTo(links, collectionPath) },
      { rel: 'root', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) },
      ...mapLinks(links, survey),
    ],
    assets: surveyAssets(links, survey, download),
  };
}

export interface ItemPage {
  surveys: Survey[];
  /** Matches across all pages, when known. */
  matched?: number;
  limit: number;
  /** Where the next and previous pages begin, when there are such pages. */
  next?: SurveyOrderKey;
  prev?: SurveyOrderKey;
  /** A sort made by the search (not the catalogue's order) pages by offset. */
  nextOffset?: number;
  prevOffset?: number;
  /** The fields extension's choice, applied to every item. */
  fields?: FieldsChoice;
  /** A transaction token's area: the items' data assets are its downloads (stac-aoi-assets.ts). */
  download?: AoiDownload;
  /** The page's own path and the query it was asked with (less apikey, offset and token). */
  path: string;
  query: Record<string, string | number | undefined>;
  /** The page's own paging parameters, for its `self` link. */
  self: { offset?: number; token?: string };
  /**
   * A POST search's body: its `next` and `prev` links are POSTs of it with their page's token or
   * offset (STAC API item search, "Pagination"), to the path alone.
   */
  body?: Record<string, unknown>;
}

/** A page of items, with `next`/`prev` links that repeat the query with the token of their place. */
export function itemCollection(links: GisLinks, page: ItemPage): Json {
  const at = (paging: { offset?: number; token?: string }) =>
    linkTo(links, page.path, { ...page.query, limit: page.limit, ...paging });
  const to = (rel: 'next' | 'prev', paging: { offset?: number; token?: string }): StacLink => {
    if (!page.body) return { rel, type: GEOJSON, method: 'GET', href: at(paging) };
    const { token: _token, next: _next, offset: _offset, ...search } = page.body;
    const body = { ...search, limit: page.limit, ...paging };
    return { rel, type: GEOJSON, method: 'POST', href: linkTo(links, page.path), body, merge: false };
  };
  const paging: StacLink[] = [{ rel: 'self', type: GEOJSON, href: at(page.self) }];
  if (page.next) paging.push(to('next', { token: pageToken('next', page.next) }));
  if (page.prev) paging.push(to('prev', { token: pageToken('prev', page.prev) }));
  if (page.nextOffset !== undefined) paging.push(to('next', { offset: page.nextOffset }));
  if (page.prevOffset !== undefined) paging.push(to('prev', { offset: page.prevOffset }));
  paging.push({ rel: 'root', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) });
  return {
    type: 'FeatureCollection',
    features: page.surveys.map((survey) => applyFields(surveyItem(links, survey, page.download), page.fields)),
    ...(page.matched === undefined ? {} : { numberMatched: page.matched }),
    numberReturned: page.surveys.length,
    links: paging,
  };
}
