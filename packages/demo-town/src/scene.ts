/**
 * Builds the height model one survey is rendered from: bare ground, then flat decals, then
 * buildings, then trees, in row bands that threads fill in parallel (render-pool.ts). Sun
 * lighting (lighting.ts) is applied afterwards. One model feeds every product of the survey, so the DSM, the true ortho, the
 * vertical mosaic and the panoramas agree with each other.
 */
import type { CoarseField, TerrainFields } from './coarse-field.js';
import type { Box } from './footprint.js';
import type { GroundLayer } from './ground.js';
import { type SunVector, sunVector } from './lighting.js';
import type { TownPlan } from './plan-builder.js';
import { rasterizeBuilding } from './rasterize-buildings.js';
import { rasterizeDecal } from './rasterize-decals.js';
import { rasterizeTree } from './rasterize-trees.js';
import { contentForSurvey } from './scene-objects.js';
import type { Decal, GridStorage, SceneGrid, SceneObject } from './scene-types.js';
import type { DemoSurvey } from './surveys.js';
import type { ColumnMajorGrid } from './transpose.js';

export interface Scene {
  grid: SceneGrid;
  /** objects[id - 1] is the object with grid id `id`. */
  objects: SceneObject[];
  fields: TerrainFields;
  sun: SunVector;
  seed: number;
  /** Column-major copy of the lit grid for North/South panoramas (filled after lighting). */
  columns: ColumnMajorGrid;
}

export interface SceneInputs {
  plan: TownPlan;
  fields: TerrainFields;
  survey: DemoSurvey;
  seed: number;
  /** Area to model, local metres, edges on multiples of `cell`. */
  window: Box;
  cell: number;
  storage: GridStorage;
}

/** A scene whose grid is allocated but not yet filled, and the flat things to paint into it. */
export interface SceneToBuild {
  scene: Scene;
  decals: Decal[];
}

/** Cells across and down of the scene grid over `window`. */
export function sceneGridSize(window: Box, cell: number): { width: number; height: number } {
  return {
    width: Math.round((window.maxX - window.minX) / cell),
    height: Math.round((window.maxY - window.minY) / cell),
  };
}

/** Decide what this survey saw and allocate its grid; rasterizeRows() then fills it. */
export function prepareScene({ plan, fields, survey, seed, window, cell, storage }: SceneInputs): SceneToBuild {
  const { width, height } = sceneGridSize(window, cell);
  const grid = storage.allocate(window.minX, window.maxY, cell, width, height);
  const content = contentForSurvey(plan, survey, seed);
  // Buildings before trees: a crown over a roof must know there is a roof beneath it.
  const objects = [
    ...content.objects.filter((o) => o.kind === 'building'),
    ...content.objects.filter((o) => o.kind === 'tree'),
  ];
  if (objects.length >= 65535) throw new Error('too many scene objects for 16-bit ids');
  const columns = storage.columnMajor(width * height);
  return { scene: { grid, objects, fields, sun: sunVector(survey.sun), seed, columns }, decals: content.decals };
}

/**
 * Fill rows [rowStart, rowEnd) of the grid: bare ground, decals, buildings, trees. Every
 * object is drawn in the same order whatever the band, so bands can be done in parallel.
 */
export function rasterizeRows(
  grid: SceneGrid,
  ground: GroundLayer,
  objects: SceneObject[],
  decals: Decal[],
  dtm: CoarseField,
  seed: number,
  rowStart: number,
  rowEnd: number,
): void {
  copyGround(ground, grid, rowStart, rowEnd);
  const band: SceneGrid = { ...grid, bandStart: rowStart, bandEnd: rowEnd };
  for (const decal of decals) rasterizeDecal(band, decal, dtm, seed);
  objects.forEach((object, index) => {
    if (object.kind === 'building') rasterizeBuilding(band, object, index + 1, seed);
    else rasterizeTree(band, object, index + 1, seed);
  });
}

/** Copy the bare ground under the scene's window, row by row. */
function copyGround(ground: GroundLayer, grid: SceneGrid, rowStart: number, rowEnd: number): void {
  const di = Math.round((grid.x0 - ground.x0) / grid.cell);
  const dj = Math.round((ground.y0 - grid.y0) / grid.cell);
  if (
    ground.cell !== grid.cell ||
    di < 0 ||
    dj < 0 ||
    di + grid.width > ground.width ||
    dj + grid.height > ground.height
  ) {
    throw new Error('ground layer does not cover the scene window');
  }
  for (let j = rowStart; j < rowEnd; j++) {
    const from = (dj + j) * ground.width + di;
    grid.heights.set(ground.heights.subarray(from, from + grid.width), j * grid.width);
    grid.colors.set(ground.colors.subarray(from, from + grid.width), j * grid.width);
  }
}
