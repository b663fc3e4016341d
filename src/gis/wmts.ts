/**
 * WMTS 1.0.0 GetCapabilities (OGC 07-057r7) for the vertical imagery (and the product layers:
 * TrueOrtho, DetailDsm relief and hillshade) on the GoogleMapsCompatible tile matrix set, as QGIS, OWSLib, ArcGIS and GDAL read it. Filters are layers and a dimension: a
 * layer for all matching surveys (`Vert`) and one per tag among them (`Vert:disaster`,
 * `Vert:disaster:hurricane`), and capture date as the `Time` dimension (the imagery as it was on
 * that date: surveys captured up to it, newest on top; `current`, the Default, is every one).
 *
 * Both bindings (issue 34): KVP (`REQUEST=GetTile` at the capabilities' own URL, named first in
 * OperationsMetadata: QGIS and OWSLib take KVP when it is offered, adding TIME only when a value
 * was chosen, so the Default answers) and RESTful ResourceURLs. Every layer has two ResourceURLs
 * per format: first one with the time segment fixed to `current`, for clients that ignore
 * dimensions and take the first template (GDAL takes the first of the format), then one with
 * `{Time}` for those that fill it in (a client without KVP that keeps the last template of a
 * format, as QGIS's parser does; the server reads an unfilled `{Time}` as the Default, as an
 * omitted KVP TIME). Their URLs carry `SERVICE=WMTS`: the mark of an OGC request, answered as
 * 07-057r7 says (ExceptionReports, listed Time values only, an empty tile where there is no
 * imagery; see api/gis/wmts-route.ts). Pure, but for the pauses its caller lends it.
 */
import { MAX_ZOOM, ORIGIN_SHIFT, resolutionAtZoom } from '../geo/web-mercator.js';
import { type GisLinks, linkTo } from './gis-links.js';
import type { SurveysExtent } from './layer-extent.js';
import type { LayerFilterQuery } from './layer-filter.js';
import type { MapLayer } from './map-layers.js';
import { ATTRIBUTION } from './tilejson.js';

export const WMTS_ROOT = '/wmts/1.0.0';
export const CAPABILITIES_PATH = `${WMTS_ROOT}/WMTSCapabilities.xml`;
export const TILE_MATRIX_SET = 'GoogleMapsCompatible';
export const STYLE = 'default';
export const CURRENT = 'current';
/** What an unfilled `{Time}` reads as: a RESTful path still holding the placeholder. */
export const TIME_PLACEHOLDER = '{Time}';
/**
 * The query parameter that marks a request as an OGC one (every KVP request carries it, and the
 * ResourceURLs do): such a request is answered as WMTS says, not as nadir's JSON tile API.
 */
export const OGC_SERVICE = { SERVICE: 'WMTS' } as const;
/** The layers' base: vertical imagery (panoramas are rotated tiles, not a map layer). */
export const WMTS_TYPE = 'Vert';
/** The standardized rendering pixel size, 0.28 mm (WMTS 1.0.0, 6.1). */
const PIXEL_SIZE_M = 0.00028;
const FORMATS = [
  ['image/png', 'png'],
  ['image/jpeg', 'jpg'],
] as const;

export interface WmtsLayer {
  /** `Vert`, `Vert:<tag>` for the surveys with that tag, or a product layer's (PRODUCT_LAYERS). */
  identifier: string;
  title: string;
  extent: SurveysExtent;
  /** Heights are drawn as PNG only; imagery as PNG or JPEG. */
  pngOnly?: boolean;
}

/**
 * The layers beside Vert and its tags (nadir extensions, issue 34): a drone survey's products. One
 * each, not one per tag, so the document stays bounded however many tags the catalogue holds
 * (issue 32); the `include`/`exclude` of the capabilities URL filter them as every layer.
 * Terrain-RGB is data for 3D maps, not a picture: it is in TileJSON and STAC, not here.
 */
export const PRODUCT_LAYERS: readonly { identifier: string; title: string; layer: MapLayer }[] = [
  { identifier: 'TrueOrtho', title: 'True orthophotos', layer: { type: 'TrueOrtho' } },
  {
    identifier: 'DetailDsm-relief',
    title: 'Surface heights, colour relief',
    layer: { type: 'DetailDsm', style: 'relief' },
  },
  {
    identifier: 'DetailDsm-hillshade',
    title: 'Surface heights, hillshade',
    layer: { type: 'DetailDsm', style: 'hillshade' },
  },
];

/** What a layer identifier draws, and its tag (Vert's tag layers); null when it is no layer of ours. */
export function wmtsLayerOf(identifier: string): { layer: MapLayer; tag: string | undefined } | null {
  const product = PRODUCT_LAYERS.find((candidate) => candidate.identifier === identifier);
  if (product) return { layer: product.layer, tag: undefined };
  const tag = layerTag(identifier);
  return tag === null ? null : { layer: { type: WMTS_TYPE }, tag };
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The layer of a tag: `Vert:disaster`. */
export function tagLayer(tag: string): string {
  return `${WMTS_TYPE}:${tag}`;
}

/** The tag a layer identifier stands for (undefined for `Vert`), or null when it is no layer of ours. */
export function layerTag(identifier: string): string | undefined | null {
  if (identifier === WMTS_TYPE) return undefined;
  return identifier.startsWith(`${WMTS_TYPE}:`) ? identifier.slice(WMTS_TYPE.length + 1) : null;
}

function tileMatrix(z: number): string {
  const span = 2 ** z;
  return `<TileMatrix><ows:Identifier>${z}</ows:Identifier><ScaleDenominator>${resolutionAtZoom(z) / PIXEL_SIZE_M}</ScaleDenominator><TopLeftCorner>${-ORIGIN_SHIFT} ${ORIGIN_SHIFT}</TopLeftCorner><TileWidth>256</TileWidth><TileHeight>256</TileHeight><MatrixWidth>${span}</MatrixWidth><MatrixHeight>${span}</MatrixHeight></TileMatrix>`;
}

function layerXml(links: GisLinks, layer: WmtsLayer, filter: LayerFilterQuery): string {
  const { bounds, captureDates } = layer.extent;
  const box = bounds ?? { minX: -180, minY: -85.0511287798066, maxX: 180, maxY: 85.0511287798066 };
  const dates = captureDates.map((date) => `<Value>${date}</Value>`).join('');
  // `current` first (clients that take the first template and ignore dimensions), `{Time}` last
  // (a parser that keeps the last template of a format): the module's comment says why both.
  const formats = layer.pngOnly ? FORMATS.filter(([, extension]) => extension === 'png') : FORMATS;
  const urls = [CURRENT, TIME_PLACEHOLDER]
    .flatMap((time) =>
      formats.map(([format, extension]) => {
        const path = `${WMTS_ROOT}/${encodeURIComponent(layer.identifier)}/${STYLE}/${time}/${TILE_MATRIX_SET}/{TileMatrix}/{TileRow}/{TileCol}.${extension}`;
        const template = linkTo(links, path, { ...filter, ...OGC_SERVICE });
        return `<ResourceURL format="${format}" resourceType="tile" template="${escapeXml(template)}"/>`;
      }),
    )
    .join('');
  return [
    `<Layer><ows:Title>${escapeXml(layer.title)}</ows:Title>`,
    `<ows:WGS84BoundingBox><ows:LowerCorner>${box.minX} ${box.minY}</ows:LowerCorner><ows:UpperCorner>${box.maxX} ${box.maxY}</ows:UpperCorner></ows:WGS84BoundingBox>`,
    `<ows:Identifier>${escapeXml(layer.identifier)}</ows:Identifier>`,
    `<Style isDefault="true"><ows:Identifier>${STYLE}</ows:Identifier></Style>`,
    formats.map(([format]) => `<Format>${format}</Format>`).join(''),
    `<Dimension><ows:Title>Capture date</ows:Title><ows:Abstract>The imagery as it was on this date: surveys captured up to it, newest on top.</ows:Abstract><ows:Identifier>Time</ows:Identifier><Default>${CURRENT}</Default><Current>true</Current><Value>${CURRENT}</Value>${dates}</Dimension>`,
    `<TileMatrixSetLink><TileMatrixSet>${TILE_MATRIX_SET}</TileMatrixSet></TileMatrixSetLink>`,
    urls,
    '</Layer>',
  ].join('');
}

/** One DCP/HTTP/Get of an operation, with the encoding it takes (07-057r7 7.1.1.2). */
function get(href: string, encoding: 'KVP' | 'RESTful'): string {
  return `<ows:Get xlink:href="${escapeXml(href)}"><ows:Constraint name="GetEncoding"><ows:AllowedValues><ows:Value>${encoding}</ows:Value></ows:AllowedValues></ows:Constraint></ows:Get>`;
}

/**
 * GetCapabilities and GetTile, each in both encodings, KVP first (QGIS takes the first Get of
 * GetTile when KVP is among the encodings). KVP at the capabilities' own URL with the filter and
 * the key (a KVP prefix ends in `?` or `&`, 07-057r7 8.1.1): the request parameters are appended
 * to it. RESTful: the capabilities document, and the root of the ResourceURLs.
 */
function operationsMetadata(links: GisLinks, filter: LayerFilterQuery): string {
  const document = linkTo(links, CAPABILITIES_PATH, { ...filter });
  const kvp = `${document}${document.includes('?') ? '&' : '?'}`;
  const operation = (name: string, restful: string) =>
    `<ows:Operation name="${name}"><ows:DCP><ows:HTTP>${get(kvp, 'KVP')}${get(restful, 'RESTful')}</ows:HTTP></ows:DCP></ows:Operation>`;
  return `<ows:OperationsMetadata>${operation('GetCapabilities', document)}${operation('GetTile', `${links.base}${WMTS_ROOT}/`)}</ows:OperationsMetadata>`;
}

/** Who runs the service (OWS 1.1 requires ServiceProvider with a ServiceContact): this server. */
function serviceProvider(links: GisLinks): string {
  const site = escapeXml(`${links.base}/`);
  const docs = escapeXml(`${links.base}/docs/`);
  return `<ows:ServiceProvider><ows:ProviderName>nadir</ows:ProviderName><ows:ProviderSite xlink:href="${site}"/><ows:ServiceContact><ows:ContactInfo><ows:OnlineResource xlink:href="${docs}"/></ows:ContactInfo></ows:ServiceContact></ows:ServiceProvider>`;
}

/** Layers written between two pauses: a slice costs a few milliseconds at most. */
const LAYERS_PER_SLICE = 100;

/**
 * The capabilities document. The tile matrix set runs from zoom 0 to the deepest zoom of the
 * layers (GDAL reads a layer at the deepest matrix), `filter` repeats in every tile URL. Written a
 * slice of layers at a time with `pause()` between slices (the caller yields to the event loop),
 * so a catalogue of a thousand tags never holds the server for the whole document; `layers` may
 * work out each layer's extent as it is asked for it.
 */
export async function wmtsCapabilities(
  links: GisLinks,
  layers: Iterable<WmtsLayer>,
  filter: LayerFilterQuery,
  pause: () => Promise<unknown>,
): Promise<string> {
  const parts: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<Capabilities xmlns="http://www.opengis.net/wmts/1.0" xmlns:ows="http://www.opengis.net/ows/1.1" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.opengis.net/wmts/1.0 http://schemas.opengis.net/wmts/1.0/wmtsGetCapabilities_response.xsd" version="1.0.0">',
    `<ows:ServiceIdentification><ows:Title>nadir aerial imagery</ows:Title><ows:Abstract>${escapeXml(ATTRIBUTION)}</ows:Abstract><ows:ServiceType>OGC WMTS</ows:ServiceType><ows:ServiceTypeVersion>1.0.0</ows:ServiceTypeVersion><ows:Fees>none</ows:Fees><ows:AccessConstraints>an API key (apikey)</ows:AccessConstraints></ows:ServiceIdentification>`,
    serviceProvider(links),
    operationsMetadata(links, filter),
    '<Contents>',
  ];
  let deepest = 0;
  let written = 0;
  for (const layer of layers) {
    if (written > 0 && written % LAYERS_PER_SLICE === 0) await pause();
    deepest = Math.max(deepest, layer.extent.maxZoom ?? 0);
    parts.push(layerXml(links, layer, filter));
    written++;
  }
  const matrices = Array.from({ length: Math.min(MAX_ZOOM, deepest) + 1 }, (_, z) => tileMatrix(z)).join('');
  const self = escapeXml(linkTo(links, CAPABILITIES_PATH, { ...filter }));
  parts.push(
    `<TileMatrixSet><ows:Identifier>${TILE_MATRIX_SET}</ows:Identifier><ows:SupportedCRS>urn:ogc:def:crs:EPSG::3857</ows:SupportedCRS><WellKnownScaleSet>urn:ogc:def:wkss:OGC:1.0:GoogleMapsCompatible</WellKnownScaleSet>${matrices}</TileMatrixSet>`,
    '</Contents>',
    `<ServiceMetadataURL xlink:href="${self}"/>`,
    '</Capabilities>',
    '',
  );
  return parts.join('\n');
}
