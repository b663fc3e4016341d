/**
 * STAC 1.0 documents of nadir's catalogue, for STAC API 1.0 clients (pystac-client, QGIS's STAC
 * browser, stac-browser): the landing page, conformance, the one `surveys` collection, its items
 * (one per survey) and item collections with paging links. Links and asset hrefs point at nadir's
 * own endpoints with the caller's key as it came (gis-links.ts). Pure.
 */
import type { SurveyOrderKey } from '../catalogue/catalogue.js';
import { RASTER_TYPES, type RasterType, type Survey, TILE_TYPES } from '../catalogue/survey.js';
import { multiPolygonBounds } from '../geo/polygon.js';
import { type GisLinks, linkTo } from './gis-links.js';
import type { SurveysExtent } from './layer-extent.js';
import { pageToken } from './stac-paging.js';
import { SURVEYS_COLLECTION } from './stac-search.js';
import { xyzTemplate } from './tilejson.js';

export const STAC_VERSION = '1.0.0';
export const STAC_ROOT = '/stac/v1';
const GEOJSON = 'application/geo+json';
const JSON_TYPE = 'application/json';

export const CONFORMANCE_CLASSES = [
  'https://api.stacspec.org/v1.0.0/core',
  'https://api.stacspec.org/v1.0.0/collections',
  'https://api.stacspec.org/v1.0.0/ogcapi-features',
  'https://api.stacspec.org/v1.0.0/item-search',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
];

export interface StacLink {
  rel: string;
  href: string;
  type?: string;
  title?: string;
  method?: string;
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
      { rel: 'service-desc', type: 'application/vnd.oai.openapi+json;version=3.1', href: linkTo(links, openapiPath) },
    ],
  };
}

/**
 * Links to the tile layers of every survey at once: TileJSON (whose `tiles` is the XYZ template)
 * and WMTS, with the web-map-links relation types. Not `xyz` links: a template's braces are not
 * allowed in a URI, and STAC's schemas check hrefs as URIs.
 */
function layerLinks(links: GisLinks): StacLink[] {
  return [
    ...TILE_TYPES.map((type) => ({
      rel: 'tilejson',
      type: JSON_TYPE,
      title: `${type} tiles (TileJSON)`,
      href: linkTo(links, `/tiles/v3/${type}/tilejson.json`),
    })),
    {
      rel: 'wmts',
      type: 'application/xml',
      title: 'Vert (WMTS)',
      href: linkTo(links, '/wmts/1.0.0/WMTSCapabilities.xml'),
    },
  ];
}

export function surveysCollection(links: GisLinks, extent: SurveysExtent, tags: string[]): Json {
  const bounds = extent.bounds ?? { minX: -180, minY: -90, maxX: 180, maxY: 90 };
  return {
    type: 'Collection',
    stac_version: STAC_VERSION,
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

function surveyAssets(links: GisLinks, survey: Survey): Json {
  const assets: Json = {};
  for (const type of TILE_TYPES) {
    const asset = survey.assets[type];
    if (!asset) continue;
    assets[`${type}_tiles`] = {
      title: `${type} tiles of this survey`,
      description:
        'Web Mercator 256 px tiles. href is their TileJSON; nadir:xyz the XYZ template (replace {z}, {x}, {y}): ' +
        '`.img` is JPEG where the tile is full and PNG (transparent outside the survey) where it is not.',
      href: linkTo(links, `/tiles/v3/surveys/${survey.id}/${type}/tilejson.json`),
      type: JSON_TYPE,
      roles: ['tiles'],
      'nadir:xyz': xyzTemplate(links, type, {}, survey.id),
      gsd: roundGsd(asset.gsd),
      'nadir:min_zoom': asset.minZoom,
      'nadir:max_zoom': asset.maxZoom,
    };
  }
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
    };
  }
  return assets;
}

export function surveyItem(links: GisLinks, survey: Survey): Json {
  const box = multiPolygonBounds(survey.footprint);
  const gsds = Object.values(survey.assets).map((asset) => asset.gsd);
  return {
    type: 'Feature',
    stac_version: STAC_VERSION,
    stac_extensions: [],
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
      gsd: gsds.length ? roundGsd(Math.min(...gsds)) : undefined,
      'nadir:capture_date': survey.captureDate,
      'nadir:tags': survey.tags,
      'nadir:version': survey.version,
      ...(survey.timezone ? { 'nadir:timezone': survey.timezone } : {}),
    },
    links: [
      { rel: 'self', type: GEOJSON, href: linkTo(links, `${itemsPath}/${survey.id}`) },
      { rel: 'collection', type: JSON_TYPE, href: linkTo(links, collectionPath) },
      { rel: 'parent', type: JSON_TYPE, href: linkTo(links, collectionPath) },
      { rel: 'root', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) },
    ],
    assets: surveyAssets(links, survey),
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
  /** The page's own path and the query it was asked with (less apikey, offset and token). */
  path: string;
  query: Record<string, string | number | undefined>;
  /** The page's own paging parameters, for its `self` link. */
  self: { offset?: number; token?: string };
}

/** A page of items, with `next`/`prev` links that repeat the query with the token of their place. */
export function itemCollection(links: GisLinks, page: ItemPage): Json {
  const at = (paging: { offset?: number; token?: string }) =>
    linkTo(links, page.path, { ...page.query, limit: page.limit, ...paging });
  const paging: StacLink[] = [{ rel: 'self', type: GEOJSON, href: at(page.self) }];
  if (page.next) {
    paging.push({ rel: 'next', type: GEOJSON, method: 'GET', href: at({ token: pageToken('next', page.next) }) });
  }
  if (page.prev) {
    paging.push({ rel: 'prev', type: GEOJSON, method: 'GET', href: at({ token: pageToken('prev', page.prev) }) });
  }
  paging.push({ rel: 'root', type: JSON_TYPE, href: linkTo(links, `${STAC_ROOT}/`) });
  return {
    type: 'FeatureCollection',
    features: page.surveys.map((survey) => surveyItem(links, survey)),
    ...(page.matched === undefined ? {} : { numberMatched: page.matched }),
    numberReturned: page.surveys.length,
    links: paging,
  };
}
