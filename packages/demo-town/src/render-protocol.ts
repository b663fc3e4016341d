/** Messages between the main thread and render workers (render-pool.ts, render-worker.ts). */
import type { CoarseFieldData, TerrainFields } from './coarse-field.js';
import type { GroundLayer } from './ground.js';
import type { SunVector } from './lighting.js';
import type { AssetName } from './manifest.js';
import type { PixelGrid } from './raster-output.js';
import type { Decal, SceneGrid, SceneObject, Sun } from './scene-types.js';
import type { ShadowHorizon } from './shadows.js';
import type { DemoSurvey, Point } from './surveys.js';
import type { ColumnMajorGrid } from './transpose.js';

export type FieldsData = Record<keyof TerrainFields, CoarseFieldData>;

/** A Scene as posted: typed arrays over shared memory arrive as views of the same memory. */
export interface SceneData {
  grid: SceneGrid;
  columns: ColumnMajorGrid;
  objects: SceneObject[];
  fields: FieldsData;
  sun: SunVector;
  seed: number;
}

export type WorkerRequest =
  | {
      type: 'ground';
      id: number;
      ground: GroundLayer;
      fields: FieldsData;
      seed: number;
      rowStart: number;
      rowEnd: number;
    }
  | {
      type: 'rasterize';
      id: number;
      grid: SceneGrid;
      ground: GroundLayer;
      objects: SceneObject[];
      decals: Decal[];
      dtm: CoarseFieldData;
      seed: number;
      rowStart: number;
      rowEnd: number;
    }
  | { type: 'light'; id: number; grid: SceneGrid; sun: Sun; shadows: ShadowHorizon; rowStart: number; rowEnd: number }
  | { type: 'transpose'; id: number; grid: SceneGrid; columns: ColumnMajorGrid; rowStart: number; rowEnd: number }
  | {
      type: 'render';
      id: number;
      asset: AssetName;
      scene: SceneData;
      survey: DemoSurvey;
      footprint: Point[];
      out: PixelGrid;
    };

export type WorkerResponse =
  | { type: 'ready'; id: number }
  | { type: 'done'; id: number }
  | { type: 'error'; id: number; message: string }
  | {
      type: 'strip';
      id: number;
      x: number;
      y: number;
      width: number;
      height: number;
      data: (Uint8Array | Float32Array)[];
    };
