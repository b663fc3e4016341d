/**
 * Paints the bare ground into a scene grid: sea with surf, beach, lawns, streets with
 * sidewalks and road markings, and the pond. Colours here are unlit; lighting.ts shades them.
 */
import { LatticeCursor, type TerrainFields } from './coarse-field.js';
import { STREET_COS, STREET_SIN } from './geo.js';
import { POND_COLOR } from './landmarks.js';
import {
  BEACH_WIDTH,
  crossStreetOffset,
  MAIN_ROAD_HALF_WIDTH,
  MAIN_ROAD_T,
  parallelStreetOffset,
  SIDEWALK_WIDTH,
  STREET_HALF_WIDTH,
} from './layout.js';
import { cellGrain, deriveSeed, valueNoise } from './random.js';
import { packRgb, type SceneGrid } from './scene-types.js';
import { sharedFloat32, sharedUint32 } from './shared-arrays.js';

/** Bare ground over a window: the part of a SceneGrid the ground painter fills. */
export type GroundLayer = Pick<SceneGrid, 'cell' | 'x0' | 'y0' | 'width' | 'height' | 'heights' | 'colors'>;

export function allocateGround(
  window: { minX: number; minY: number; maxX: number; maxY: number },
  cell: number,
): GroundLayer {
  const width = Math.round((window.maxX - window.minX) / cell);
  const height = Math.round((window.maxY - window.minY) / cell);
  return {
    cell,
    x0: window.minX,
    y0: window.maxY,
    width,
    height,
    heights: sharedFloat32(width * height),
    colors: sharedUint32(width * height),
  };
}

/** Paint rows [rowStart, rowEnd) of the layer (workers paint disjoint row ranges). */
export function paintGround(
  grid: GroundLayer,
  fields: TerrainFields,
  seed: number,
  rowStart = 0,
  rowEnd = grid.height,
): void {
  const grainSeed = deriveSeed(seed, 41);
  const waveSeed = deriveSeed(seed, 42);
  const { cell, width } = grid;
  // Global cell indices make the grain independent of where this window starts.
  const gi0 = Math.round(grid.x0 / cell);
  const gj0 = Math.round(-grid.y0 / cell);
  const cursor = new LatticeCursor(fields.dtm);
  for (let j = rowStart; j < rowEnd; j++) {
    const y = grid.y0 - (j + 0.5) * cell;
    for (let i = 0; i < width; i++) {
      const x = grid.x0 + (i + 0.5) * cell;
      const index = j * width + i;
      const grain = cellGrain(grainSeed, gi0 + i, gj0 + j);
      cursor.moveTo(x, y);
      const inland = cursor.read(fields.inland);
      let z = cursor.read(fields.dtm);
      let color: number;
      if (inland < 0) {
        z = 0;
        color = seaColor(-inland, x, y, grain, waveSeed);
      } else if (inland < BEACH_WIDTH) {
        color = beachColor(inland, x, y, grain, waveSeed);
      } else {
        const pond = cursor.read(fields.pondDepth);
        if (pond > 0) {
          const shallow = pond < 1.5 ? 1 - pond / 1.5 : 0;
          color = packRgb(
            POND_COLOR[0] + 40 * shallow + 6 * grain,
            POND_COLOR[1] + 30 * shallow + 6 * grain,
            POND_COLOR[2] + 10 * shallow + 6 * grain,
          );
        } else if (pond > -1.8) {
          color = packRgb(104 + 30 * grain, 110 + 24 * grain, 66 + 10 * grain); // reeds and mud
        } else {
          const s = x * STREET_COS + y * STREET_SIN;
          const t = -x * STREET_SIN + y * STREET_COS;
          const street = streetColor(s, t, grain);
          if (street >= 0) {
            color = street;
          } else {
            const tone = cursor.read(fields.grassTone);
            const sandy = inland < BEACH_WIDTH + 40 ? 1 - (inland - BEACH_WIDTH) / 40 : 0;
            color = grassColor(tone, sandy, grain);
          }
        }
      }
      grid.heights[index] = z;
      grid.colors[index] = color;
    }
  }
}

function seaColor(offshore: number, x: number, y: number, grain: number, waveSeed: number): number {
  const depth = Math.min(1, offshore / 45);
  const wobble = valueNoise(waveSeed, x / 9, y / 9);
  const swell = 1 + 0.07 * Math.sin(((offshore + 4 * wobble) * 2 * Math.PI) / 7.5);
  const foamEdge = 2.2 + 2.5 * wobble;
  if (offshore < foamEdge) {
    const foam = 0.55 + 0.45 * (1 - offshore / foamEdge);
    return packRgb(96 + 130 * foam + 10 * grain, 170 + 62 * foam + 8 * grain, 166 + 62 * foam + 8 * grain);
  }
  const r = (92 - 58 * depth) * swell + 4 * grain;
  const g = (172 - 80 * depth) * swell + 4 * grain;
  const b = (168 - 44 * depth) * swell + 4 * grain;
  return packRgb(r, g, b);
}

function beachColor(inland: number, x: number, y: number, grain: number, seed: number): number {
  const wet = inland < 4 ? 1 - inland / 4 : 0;
  const ripple = 0.96 + 0.08 * valueNoise(seed + 7, x / 2.5, y / 2.5);
  const shade = (ripple - 0.18 * wet) * (0.96 + 0.08 * grain);
  let r = 224 * shade;
  let g = 210 * shade;
  let b = 172 * shade;
  // Dune grass on the landward side of the beach.
  if (inland > BEACH_WIDTH - 12 && valueNoise(seed + 9, x / 3, y / 3) > 0.58) {
    r = 148 + 30 * grain;
    g = 150 + 24 * grain;
    b = 98 + 10 * grain;
  }
  return packRgb(r, g, b);
}

/** Colour of a street or sidewalk at town (s, t), or -1 if (s, t) is not on one. */
function streetColor(s: number, t: number, grain: number): number {
  const fromMain = t - MAIN_ROAD_T;
  if (Math.abs(fromMain) < MAIN_ROAD_HALF_WIDTH) {
    const across = Math.abs(fromMain);
    // Dashed yellow centre line and white edge lines on the coast road.
    if (across < 0.12 && ((s % 9) + 9) % 9 < 4.5) return packRgb(214, 184, 70);
    if (across > MAIN_ROAD_HALF_WIDTH - 0.6 && across < MAIN_ROAD_HALF_WIDTH - 0.42) return packRgb(228, 228, 222);
    return asphalt(grain);
  }
  if (Math.abs(fromMain) < MAIN_ROAD_HALF_WIDTH + SIDEWALK_WIDTH) return sidewalk(s, grain);
  if (fromMain < 0) return -1;
  const along = Math.abs(parallelStreetOffset(t));
  const cross = Math.abs(crossStreetOffset(s));
  if (along < STREET_HALF_WIDTH || cross < STREET_HALF_WIDTH) return asphalt(grain);
  if (along < STREET_HALF_WIDTH + SIDEWALK_WIDTH) return sidewalk(s, grain);
  if (cross < STREET_HALF_WIDTH + SIDEWALK_WIDTH) return sidewalk(t, grain);
  return -1;
}

function asphalt(grain: number): number {
  return packRgb(80 + 16 * grain, 82 + 16 * grain, 86 + 16 * grain);
}

function sidewalk(along: number, grain: number): number {
  const joint = ((along % 1.5) + 1.5) % 1.5 < 0.1 ? 0.85 : 1;
  const v = joint * (0.95 + 0.08 * grain);
  return packRgb(192 * v, 190 * v, 182 * v);
}

function grassColor(tone: number, sandy: number, grain: number): number {
  const dry = Math.max(0, Math.min(1, (tone - 0.35) * 2.2));
  let r = 84 + (150 - 84) * dry;
  let g = 120 + (144 - 120) * dry;
  let b = 54 + (90 - 54) * dry;
  r += (196 - r) * sandy * 0.7;
  g += (184 - g) * sandy * 0.7;
  b += (146 - b) * sandy * 0.7;
  const v = 0.88 + 0.24 * grain;
  return packRgb(r * v, g * v, b * v);
}
