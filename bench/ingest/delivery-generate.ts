/**
 * A generated aerial delivery, as survey operators hand them over: an RGB orthophoto and a DSM, each
 * cut into GeoTIFF tiles on a grid, across a UTM zone boundary, so one delivery is in two CRSs.
 *
 * - Place: Tallahassee, Florida, where the boundary between UTM 16N (EPSG:32616) and 17N
 *   (EPSG:32617) runs along longitude -84. The block west of it is cut on a 16N grid, the block
 *   east of it on a 17N grid, four columns of RGB tiles each, eight rows. The grids of two zones
 *   are turned about 3 degrees from each other there, so each block is extended to the meridian
 *   along its whole height and the two overlap in a thin wedge along the seam (as real deliveries
 *   across a zone boundary do): no gap on the ground.
 * - RGB (`Vert`): 64 tiles of 5,600 x 5,600 px at 0.1 m (2.0 gigapixels; `--quick`: 1,400 x 1,400 px,
 *   125 megapixels, the least that still spans more than one 8,192 px shard at the native zoom, z20,
 *   so a quick run exercises shards and workers: with 700 px tiles the asset is a single COG),
 *   3 x Byte, tiled YCbCr JPEG quality 90, with an internal mask (GDAL_TIFF_INTERNAL_MASK) marking
 *   the data: the tiles on the outer edge of the survey hold data only up to a staircase edge (a
 *   flight's end), black under the mask beyond it. So nadir's black-collar pass does not run.
 * - DSM (`DetailDsm`): 16 tiles of 5,600 x 5,600 px at 0.2 m (`--quick`: 1,400 x 1,400 px, one COG)
 *   over the same area, 1 x Float32, DEFLATE with the floating-point predictor (3), nodata -9999
 *   outside the same staircase edge.
 * - Texture: the real aerial photo and DSM of ../shared/realdata (never copied into the repository),
 *   resampled to the delivery's resolution, mirrored 2 x 2 so the picture wraps without a seam, and
 *   repeated over each zone's pixel grid (continuous from one tile to the next). The DSM is the
 *   fully valid middle of the real one, its heights moved 255 m down to Florida's.
 */

import { execFile } from 'node:child_process';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import gdal from 'gdal-async';
import { DSM_NODATA } from '../../src/geo/asset-layout.js';
import type { DeliveryProduct, DeliveryProductName, DeliveryRaw, DeliveryTile } from './delivery-raw.js';

const execFileAsync = promisify(execFile);

export interface DeliveryOptions {
  quick: boolean;
  /** GDAL_CACHEMAX for the generating commands, MB. */
  cacheMb: number;
  photo: string;
  dsm: string;
  log: (line: string) => void;
}

export interface GeneratedDelivery {
  /** The delivery's folder: rgb/, dsm/ and the two manifests. */
  dir: string;
  manifests: Record<DeliveryProductName, string>;
  products: DeliveryProduct[];
  area: DeliveryRaw['area'];
}

const SEAM_LONGITUDE = -84;
const CENTRE_LATITUDE = 30.45;
/** Columns of RGB tiles on each side of the seam, and rows. */
const COLUMNS_PER_ZONE = 4;
const ROWS = 8;
const RGB_RESOLUTION = 0.1;
const DSM_RESOLUTION = 0.2;
/** A DSM tile covers 2 x 2 RGB tiles' ground. */
const DSM_CELLS = 2;
const DSM_HEIGHT_SHIFT = -255;

const ZONES = [32616, 32617] as const;

interface Rect {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export interface Zone {
  epsg: number;
  label: string;
  /** The block in this zone's metres. */
  block: Rect;
  /** Columns 0..3 (west to east) are global columns `firstColumn`..`firstColumn + 3` of 0..7. */
  firstColumn: number;
  /** Texture offset in pixels so the two zones do not start the picture at the same place. */
  textureShift: number;
}

interface Texture {
  path: string;
  width: number;
  height: number;
  bands: number;
}

async function run(tool: string, args: string[], cacheMb: number): Promise<void> {
  await execFileAsync(tool, ['-q', '--config', 'GDAL_CACHEMAX', String(cacheMb), ...args], {
    maxBuffer: 16 * 2 ** 20,
  });
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A small fixed pseudo-random 0..1 for a column or row, so the staircase edge is irregular. */
function jitter(n: number, salt: number): number {
  return (((n + 3) * 7919 + salt * 104729) % 97) / 97;
}

/** EPSG:32616 / 32617 coordinates of the meridian -84 at a northing (the same in both zones). */
function seamPoints(northings: number[]): Map<number, { x: number; y: number }[]> {
  const lonLat = gdal.SpatialReference.fromProj4('+proj=longlat +datum=WGS84 +no_defs');
  const result = new Map<number, { x: number; y: number }[]>();
  for (const epsg of ZONES) {
    const toZone = new gdal.CoordinateTransformation(lonLat, gdal.SpatialReference.fromEPSG(epsg));
    const points = northings.map((northing) => {
      // The meridian's northing grows with latitude by about 110.9 km a degree: a few Newton steps.
      let lat = CENTRE_LATITUDE;
      let point = toZone.transformPoint(SEAM_LONGITUDE, lat);
      for (let i = 0; i < 6; i++) {
        lat += (northing - point.y) / 110_900;
        point = toZone.transformPoint(SEAM_LONGITUDE, lat);
      }
      return { x: point.x, y: point.y };
    });
    result.set(epsg, points);
  }
  return result;
}

/** The two blocks: same rows, each reaching the meridian along its whole height. */
export function layout(tileMetres: number): Zone[] {
  const height = ROWS * tileMetres;
  // The seam's northing at the centre latitude, to the nearest 10 m.
  const lonLat = gdal.SpatialReference.fromProj4('+proj=longlat +datum=WGS84 +no_defs');
  const toZone16 = new gdal.CoordinateTransformation(lonLat, gdal.SpatialReference.fromEPSG(32616));
  const centreY = toZone16.transformPoint(SEAM_LONGITUDE, CENTRE_LATITUDE).y;
  const minY = Math.round((centreY - height / 2) / 10) * 10;
  const maxY = minY + height;
  const seam = seamPoints([minY, (minY + maxY) / 2, maxY]);
  const west = seam.get(32616)?.map((p) => p.x) ?? [];
  const east = seam.get(32617)?.map((p) => p.x) ?? [];
  const westEdge = Math.ceil(Math.max(...west) / 10) * 10;
  const eastEdge = Math.floor(Math.min(...east) / 10) * 10;
  const width = COLUMNS_PER_ZONE * tileMetres;
  return [
    {
      epsg: 32616,
      label: '16N',
      block: { minX: westEdge - width, maxX: westEdge, minY, maxY },
      firstColumn: 0,
      textureShift: 0,
    },
    {
      epsg: 32617,
      label: '17N',
      block: { minX: eastEdge, maxX: eastEdge + width, minY, maxY },
      firstColumn: COLUMNS_PER_ZONE,
      textureShift: 333,
    },
  ];
}

/**
 * The valid part of one RGB tile's ground (column 0..7 west to east, row 0..7 north to south): the
 * whole cell, except on the survey's outer edge, where the data stops 15-40% of a tile in (by whole
 * metres), differently for each column or row: the staircase a flight's end leaves.
 */
function validCell(zone: Zone, column: number, row: number, tileMetres: number): Rect {
  const local = column - zone.firstColumn;
  const minX = zone.block.minX + local * tileMetres;
  const maxY = zone.block.maxY - row * tileMetres;
  const inset = (n: number, salt: number) => Math.round(tileMetres * (0.15 + 0.25 * jitter(n, salt)));
  const lastColumn = 2 * COLUMNS_PER_ZONE - 1;
  return {
    minX: minX + (column === 0 ? inset(row, 1) : 0),
    maxX: minX + tileMetres - (column === lastColumn ? inset(row, 2) : 0),
    maxY: maxY - (row === 0 ? inset(column, 3) : 0),
    minY: maxY - tileMetres + (row === ROWS - 1 ? inset(column, 4) : 0),
  };
}

function intersect(a: Rect, b: Rect): Rect | undefined {
  const r = {
    minX: Math.max(a.minX, b.minX),
    minY: Math.max(a.minY, b.minY),
    maxX: Math.min(a.maxX, b.maxX),
    maxY: Math.min(a.maxY, b.maxY),
  };
  return r.minX < r.maxX && r.minY < r.maxY ? r : undefined;
}

/** Reads a small raster whole, resampled to `width` x `height` by GDAL (cubic). */
async function resampled(dir: string, source: string, name: string, args: string[], cacheMb: number) {
  const out = join(dir, name);
  await run('gdal_translate', ['-r', 'cubic', ...args, source, out], cacheMb);
  return out;
}

/**
 * Mirrors a raster 2 x 2 (as is, flipped left-right, flipped up-down, both) into a GeoTIFF twice its
 * size, which repeats without a seam: the texture the tiles are cut from.
 */
async function mirrored(source: string, out: string, shift = 0): Promise<Texture> {
  const src = await gdal.openAsync(source);
  const w = src.rasterSize.x;
  const h = src.rasterSize.y;
  const bandCount = src.bands.count();
  const first = src.bands.get(1);
  const dataType = first.dataType ?? 'Byte';
  const driver = gdal.drivers.get('GTiff');
  const dst = await driver.createAsync(out, 2 * w, 2 * h, bandCount, dataType, ['TILED=YES']);
  for (let b = 1; b <= bandCount; b++) {
    const pixels = await src.bands.get(b).pixels.readAsync(0, 0, w, h);
    const ArrayType = pixels.constructor as new (n: number) => typeof pixels;
    const big = new ArrayType(4 * w * h);
    for (let y = 0; y < 2 * h; y++) {
      const sy = y < h ? y : 2 * h - 1 - y;
      for (let x = 0; x < 2 * w; x++) {
        const sx = x < w ? x : 2 * w - 1 - x;
        big[y * 2 * w + x] = (pixels[sy * w + sx] as number) + shift;
      }
    }
    await dst.bands.get(b).pixels.writeAsync(0, 0, 2 * w, 2 * h, big);
    const interp = src.bands.get(b).colorInterpretation;
    if (interp) dst.bands.get(b).colorInterpretation = interp;
  }
  dst.flush();
  dst.close();
  src.close();
  return { path: out, width: 2 * w, height: 2 * h, bands: bandCount };
}

/**
 * The VRT of one tile: `valid` rectangles (tile pixels) filled from the texture, repeated over the
 * zone's pixel grid from `origin` (the tile's top-left pixel in the zone block's grid); the rest 0
 * (RGB, and masked) or nodata (DSM). RGB gets a per-dataset mask band: 255 on the rectangles.
 */
function tileVrt(options: {
  texture: Texture;
  ones?: string;
  size: number;
  origin: { x: number; y: number };
  valid: Rect[];
  epsg: number;
  geoTransform: number[];
  dataType: 'Byte' | 'Float32';
  nodata?: number;
}): string {
  const { texture, size, origin, valid } = options;
  const pieces: string[][] = Array.from({ length: texture.bands }, () => []);
  for (const r of valid) {
    for (let y = r.minY; y < r.maxY; ) {
      const ty = (origin.y + y) % texture.height;
      const h = Math.min(r.maxY - y, texture.height - ty);
      for (let x = r.minX; x < r.maxX; ) {
        const tx = (origin.x + x) % texture.width;
        const w = Math.min(r.maxX - x, texture.width - tx);
        for (let b = 1; b <= texture.bands; b++) {
          pieces[b - 1]?.push(
            `<SimpleSource><SourceFilename relativeToVRT="0">${escapeXml(texture.path)}</SourceFilename>` +
              `<SourceBand>${b}</SourceBand><SrcRect xOff="${tx}" yOff="${ty}" xSize="${w}" ySize="${h}"/>` +
              `<DstRect xOff="${x}" yOff="${y}" xSize="${w}" ySize="${h}"/></SimpleSource>`,
          );
        }
        x += w;
      }
      y += h;
    }
  }
  const colours = ['Red', 'Green', 'Blue'];
  const bands = pieces.map((sources, i) => {
    const interp = options.dataType === 'Byte' ? `<ColorInterp>${colours[i]}</ColorInterp>` : '';
    const nodata = options.nodata === undefined ? '' : `<NoDataValue>${options.nodata}</NoDataValue>`;
    return `<VRTRasterBand dataType="${options.dataType}" band="${i + 1}">${interp}${nodata}\n${sources.join('\n')}\n</VRTRasterBand>`;
  });
  let mask = '';
  if (options.ones) {
    const ones = escapeXml(options.ones);
    const sources = valid.map(
      (r) =>
        `<SimpleSource><SourceFilename relativeToVRT="0">${ones}</SourceFilename><SourceBand>1</SourceBand>` +
        `<SrcRect xOff="0" yOff="0" xSize="1" ySize="1"/>` +
        `<DstRect xOff="${r.minX}" yOff="${r.minY}" xSize="${r.maxX - r.minX}" ySize="${r.maxY - r.minY}"/></SimpleSource>`,
    );
    mask = `<MaskBand><VRTRasterBand dataType="Byte">\n${sources.join('\n')}\n</VRTRasterBand></MaskBand>`;
  }
  return `<VRTDataset rasterXSize="${size}" rasterYSize="${size}">
<SRS>EPSG:${options.epsg}</SRS>
<GeoTransform>${options.geoTransform.join(', ')}</GeoTransform>
${bands.join('\n')}
${mask}
</VRTDataset>
`;
}

/** What GDAL reads back from a written tile; throws if it is not what was meant. */
async function checkTile(
  path: string,
  expect: { epsg: number; size: number; bands: number; dataType: string; mask: boolean; nodata?: number },
): Promise<string> {
  const ds = await gdal.openAsync(path);
  try {
    const epsg = Number(ds.srs?.getAuthorityCode());
    const structure = ds.getMetadata('IMAGE_STRUCTURE') as Record<string, string>;
    const band = ds.bands.get(1);
    const problems: string[] = [];
    if (epsg !== expect.epsg) problems.push(`EPSG:${epsg}`);
    if (ds.rasterSize.x !== expect.size || ds.rasterSize.y !== expect.size)
      problems.push(`${ds.rasterSize.x} x ${ds.rasterSize.y}`);
    if (ds.bands.count() !== expect.bands) problems.push(`${ds.bands.count()} bands`);
    if (band.dataType !== expect.dataType) problems.push(String(band.dataType));
    if (expect.mask && band.getMaskFlags() !== 0x02) problems.push(`mask flags ${band.getMaskFlags()}`);
    if (expect.nodata !== undefined && band.noDataValue !== expect.nodata) problems.push(`nodata ${band.noDataValue}`);
    if (problems.length > 0) throw new Error(`${path}: not as generated: ${problems.join(', ')}`);
    const extra = [
      structure.JPEG_QUALITY && `quality ${structure.JPEG_QUALITY}`,
      structure.PREDICTOR && `predictor ${structure.PREDICTOR}`,
    ].filter(Boolean);
    return `${structure.COMPRESSION}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
  } finally {
    ds.close();
  }
}

export async function generateDelivery(root: string, options: DeliveryOptions): Promise<GeneratedDelivery> {
  const { quick, cacheMb, log } = options;
  // Quick: 8 x 140 m = 1,120 m across, more than a z20 shard (8,192 x 0.149 m Mercator = 1,055 m
  // of ground at 30.45 N), so the RGB asset is sharded; 700 px tiles would make one COG.
  const rgbTilePx = quick ? 1400 : 5600;
  const tileMetres = rgbTilePx * RGB_RESOLUTION;
  const dsmTilePx = Math.round((DSM_CELLS * tileMetres) / DSM_RESOLUTION);
  const zones = layout(tileMetres);
  const dir = join(root, 'delivery');
  const scratch = join(root, 'generate');
  await mkdir(join(dir, 'rgb'), { recursive: true });
  await mkdir(join(dir, 'dsm'), { recursive: true });
  await mkdir(scratch, { recursive: true });

  // Textures: the photo at 0.15 m -> 0.1 m (383 x 232 -> 574 x 348); the DSM's fully valid middle
  // (275 x 287 of its 395 x 407 px at 0.27 m) -> 0.2 m (372 x 388).
  const photo = await resampled(scratch, options.photo, 'photo-0.1m.tif', ['-outsize', '574', '348'], cacheMb);
  const rgbTexture = await mirrored(photo, join(scratch, 'texture-rgb.tif'));
  const dsmCrop = await resampled(
    scratch,
    options.dsm,
    'dsm-0.2m.tif',
    ['-srcwin', '60', '60', '275', '287', '-outsize', '372', '388', '-a_nodata', 'none'],
    cacheMb,
  );
  const dsmTexture = await mirrored(dsmCrop, join(scratch, 'texture-dsm.tif'), DSM_HEIGHT_SHIFT);
  const ones = join(scratch, 'ones.tif');
  {
    const ds = await gdal.drivers.get('GTiff').createAsync(ones, 1, 1, 1, 'Byte');
    await ds.bands.get(1).pixels.writeAsync(0, 0, 1, 1, new Uint8Array([255]));
    ds.close();
  }

  const products: DeliveryProduct[] = [];
  for (const name of ['rgb', 'dsm'] as const) {
    const rgb = name === 'rgb';
    const size = rgb ? rgbTilePx : dsmTilePx;
    const resolution = rgb ? RGB_RESOLUTION : DSM_RESOLUTION;
    const cells = rgb ? 1 : DSM_CELLS;
    const texture = rgb ? rgbTexture : dsmTexture;
    const tiles: DeliveryTile[] = [];
    const marks = new Set<string>();
    const started = performance.now();
    for (const zone of zones) {
      for (let row = 0; row < ROWS; row += cells) {
        for (let local = 0; local < COLUMNS_PER_ZONE; local += cells) {
          const minX = zone.block.minX + local * tileMetres;
          const maxY = zone.block.maxY - row * tileMetres;
          const ground: Rect = { minX, maxX: minX + cells * tileMetres, maxY, minY: maxY - cells * tileMetres };
          const valid: Rect[] = [];
          for (let dy = 0; dy < cells; dy++) {
            for (let dx = 0; dx < cells; dx++) {
              const cell = intersect(validCell(zone, zone.firstColumn + local + dx, row + dy, tileMetres), ground);
              if (!cell) continue;
              // Ground metres -> tile pixels (whole metres on a 0.1 or 0.2 m grid: whole pixels).
              valid.push({
                minX: Math.round((cell.minX - ground.minX) / resolution),
                maxX: Math.round((cell.maxX - ground.minX) / resolution),
                minY: Math.round((ground.maxY - cell.maxY) / resolution),
                maxY: Math.round((ground.maxY - cell.minY) / resolution),
              });
            }
          }
          const file = `${name}/${zone.label}_${Math.round(ground.minX)}_${Math.round(ground.minY)}.tif`;
          const vrt = join(scratch, `${name}-${zone.label}-${row}-${local}.vrt`);
          await writeFile(
            vrt,
            tileVrt({
              texture,
              ...(rgb ? { ones } : { nodata: DSM_NODATA }),
              size,
              origin: {
                x: Math.round((ground.minX - zone.block.minX) / resolution) + zone.textureShift,
                y: Math.round((zone.block.maxY - ground.maxY) / resolution) + zone.textureShift,
              },
              valid,
              epsg: zone.epsg,
              geoTransform: [ground.minX, resolution, 0, ground.maxY, 0, -resolution],
              dataType: rgb ? 'Byte' : 'Float32',
            }),
          );
          const out = join(dir, file);
          const creation = rgb
            ? ['-co', 'COMPRESS=JPEG', '-co', 'PHOTOMETRIC=YCBCR', '-co', 'JPEG_QUALITY=90']
            : ['-co', 'COMPRESS=DEFLATE', '-co', 'PREDICTOR=3'];
          await run(
            'gdal_translate',
            [
              ...['-co', 'TILED=YES', '-co', 'NUM_THREADS=ALL_CPUS', ...creation],
              ...['--config', 'GDAL_TIFF_INTERNAL_MASK', 'YES'],
              vrt,
              out,
            ],
            cacheMb,
          );
          marks.add(
            await checkTile(out, {
              epsg: zone.epsg,
              size,
              bands: rgb ? 3 : 1,
              dataType: rgb ? 'Byte' : 'Float32',
              mask: rgb,
              ...(rgb ? {} : { nodata: DSM_NODATA }),
            }),
          );
          tiles.push({
            file,
            epsg: zone.epsg,
            width: size,
            height: size,
            resolution,
            originX: ground.minX,
            originY: ground.minY,
            validPixels: valid.reduce((s, r) => s + (r.maxX - r.minX) * (r.maxY - r.minY), 0),
            bytes: (await stat(out)).size,
          });
        }
      }
    }
    tiles.sort((a, b) => a.file.localeCompare(b.file));
    const manifest = {
      captureDate: '2026-10-20',
      timezone: 'America/New_York',
      tags: ['bench:delivery'],
      assets: { [rgb ? 'Vert' : 'DetailDsm']: `${name}/*.tif` },
    };
    const manifestPath = join(dir, `${name}.json`);
    await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    const pixels = tiles.reduce((s, t) => s + t.width * t.height, 0);
    const tilesByCrs: Record<string, number> = {};
    for (const t of tiles) tilesByCrs[`EPSG:${t.epsg}`] = (tilesByCrs[`EPSG:${t.epsg}`] ?? 0) + 1;
    products.push({
      name,
      contentType: rgb ? 'Vert' : 'DetailDsm',
      description: rgb
        ? `RGB Byte at ${RGB_RESOLUTION} m, ${size} x ${size} px tiles, tiled YCbCr JPEG q90, internal mask`
        : `Float32 DSM at ${DSM_RESOLUTION} m, ${size} x ${size} px tiles, tiled DEFLATE predictor 3, nodata ${DSM_NODATA}`,
      dataMarking: rgb
        ? 'internal mask (GDAL_TIFF_INTERNAL_MASK=YES; per-dataset mask flags 0x02), no alpha band, no nodata'
        : `nodata ${DSM_NODATA}`,
      compression: [...marks].join(', '),
      manifest,
      tileCount: tiles.length,
      tilesByCrs,
      tileWidth: size,
      tileHeight: size,
      pixels,
      validPixels: tiles.reduce((s, t) => s + t.validPixels, 0),
      bytes: tiles.reduce((s, t) => s + t.bytes, 0),
      tiles,
    });
    log(
      `  ${name}: ${tiles.length} tiles of ${size} x ${size} px (${(pixels / 1e6).toFixed(0)} MP, ` +
        `${Object.entries(tilesByCrs)
          .map(([crs, n]) => `${n} in ${crs}`)
          .join(', ')}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  return {
    dir,
    manifests: { rgb: join(dir, 'rgb.json'), dsm: join(dir, 'dsm.json') },
    products,
    area: {
      description:
        `Tallahassee, Florida, across the UTM 16N / 17N boundary (longitude ${SEAM_LONGITUDE}): ` +
        `${COLUMNS_PER_ZONE} x ${ROWS} RGB tiles of ${tileMetres} m on each side, overlapping in a wedge along the seam`,
      zones: zones.map((z) => ({ epsg: z.epsg, ...z.block })),
    },
  };
}

/** The delivery folder's files of one product for one CRS (for gdalbuildvrt), relative names sorted. */
export function filesOfCrs(delivery: GeneratedDelivery, product: DeliveryProductName, epsg: number): string[] {
  const p = delivery.products.find((x) => x.name === product);
  return (p?.tiles ?? []).filter((t) => t.epsg === epsg).map((t) => join(delivery.dir, t.file));
}

export function relativeTo(dir: string, path: string): string {
  return path.startsWith(dir) ? relative(dir, path) : path;
}
