/**
 * Spreads the CPU work over the machine's cores: the main thread plus render workers paint
 * ground rows, light scene rows and render whole products. Workers read the height model
 * from shared memory and post finished strips back; only the main thread talks to GDAL.
 * With zero workers everything runs on the main thread, with identical results.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { TerrainFields } from './coarse-field.js';
import { type GroundLayer, paintGround } from './ground.js';
import { applyLighting } from './lighting.js';
import type { AssetName } from './manifest.js';
import { renderAsset } from './products.js';
import type { PixelGrid, StripSink } from './raster-output.js';
import type { FieldsData, WorkerRequest, WorkerResponse } from './render-protocol.js';
import { rasterizeRows, type Scene } from './scene.js';
import type { Decal, SceneGrid, Sun } from './scene-types.js';
import type { ShadowHorizon } from './shadows.js';
import type { DemoSurvey, Point } from './surveys.js';
import { transposeColumns } from './transpose.js';

/**
 * Compiled, the worker is plain JavaScript. Run from TypeScript sources (tests, development
 * under tsx), a worker does not inherit tsx's loader, so it registers tsx itself first.
 */
function spawnWorker(): Worker | undefined {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./render-worker.js', import.meta.url));
  try {
    const tsx = import.meta.resolve('tsx/esm/api');
    const source = new URL('./render-worker.ts', import.meta.url).href;
    return new Worker(
      `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}); });`,
      { eval: true },
    );
  } catch {
    return undefined;
  }
}

/** A product to render and where its strips go. */
export interface RenderJob {
  asset: AssetName;
  out: PixelGrid;
  /** Opens the output; called when an executor picks the job up. */
  open: () => Promise<StripSink>;
  /** Called after the last strip was handed to the sink. */
  rendered: (sink: StripSink) => void;
}

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
  sink?: StripSink;
}

class WorkerHandle {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(readonly worker: Worker) {
    worker.on('message', (message: WorkerResponse) => this.receive(message));
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', (code) => this.failAll(new Error(`render worker exited (code ${code})`)));
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  request(make: (id: number) => WorkerRequest, sink?: StripSink): Promise<void> {
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, sink ? { resolve, reject, sink } : { resolve, reject });
      this.worker.postMessage(make(id));
    });
  }

  private receive(message: WorkerResponse): void {
    const pending = this.pending.get(message.id);
    if (!pending) return;
    if (message.type === 'strip') {
      pending.sink
        ?.write(message.x, message.y, message.width, message.height, message.data)
        .catch((error: Error) => pending.reject(error));
      return;
    }
    this.pending.delete(message.id);
    if (message.type === 'error') pending.reject(new Error(`render worker: ${message.message}`));
    else pending.resolve();
  }
}

export class RenderPool {
  private constructor(private readonly workers: WorkerHandle[]) {}

  /** Start `count` workers (default: one per core beyond the main thread's). */
  static async start(count = Math.min(4, availableParallelism() - 1)): Promise<RenderPool> {
    const workers: WorkerHandle[] = [];
    for (let k = 0; k < count; k++) {
      const worker = spawnWorker();
      if (!worker) break;
      // A worker that cannot start (e.g. no TypeScript loader in this process) is simply not used.
      const started = await new Promise<boolean>((resolve) => {
        worker.once('message', () => resolve(true));
        worker.once('error', () => resolve(false));
      });
      if (!started) {
        await worker.terminate();
        break;
      }
      workers.push(new WorkerHandle(worker));
    }
    return new RenderPool(workers);
  }

  get workerCount(): number {
    return this.workers.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }

  paintGround(ground: GroundLayer, fields: TerrainFields, seed: number): Promise<void> {
    const data = fields as unknown as FieldsData;
    return this.splitRows(
      ground.height,
      (rowStart, rowEnd) => paintGround(ground, fields, seed, rowStart, rowEnd),
      (id, rowStart, rowEnd) => ({
        type: 'ground',
        id,
        ground,
        fields: data,
        seed,
        rowStart,
        rowEnd,
      }),
    );
  }

  /** Fill the scene's grid (ground, decals, objects) in row bands. */
  rasterize(scene: Scene, ground: GroundLayer, decals: Decal[]): Promise<void> {
    const { grid, objects, seed } = scene;
    const dtm = scene.fields.dtm;
    return this.splitRows(
      grid.height,
      (rowStart, rowEnd) => rasterizeRows(grid, ground, objects, decals, dtm, seed, rowStart, rowEnd),
      (id, rowStart, rowEnd) => ({ type: 'rasterize', id, grid, ground, objects, decals, dtm, seed, rowStart, rowEnd }),
    );
  }

  light(grid: SceneGrid, sun: Sun, shadows: ShadowHorizon): Promise<void> {
    return this.splitRows(
      grid.height,
      (rowStart, rowEnd) => applyLighting(grid, sun, shadows, rowStart, rowEnd),
      (id, rowStart, rowEnd) => ({
        type: 'light',
        id,
        grid,
        sun,
        shadows,
        rowStart,
        rowEnd,
      }),
    );
  }

  /** Fill the scene's column-major copy (after lighting), split by columns. */
  transpose(scene: Scene): Promise<void> {
    const { grid, columns } = scene;
    return this.splitRows(
      grid.width,
      (from, to) => transposeColumns(grid, columns, from, to),
      (id, rowStart, rowEnd) => ({
        type: 'transpose',
        id,
        grid,
        columns,
        rowStart,
        rowEnd,
      }),
    );
  }

  /** Run the jobs, each on whichever thread is free next (the main thread included). */
  async render(jobs: RenderJob[], scene: Scene, survey: DemoSurvey, footprint: Point[]): Promise<void> {
    const queue = [...jobs];
    const sceneData = { ...scene, fields: scene.fields as unknown as FieldsData };
    const runOn = async (worker: WorkerHandle | undefined) => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const sink = await job.open();
        if (worker) {
          const { asset, out } = job;
          await worker.request((id) => ({ type: 'render', id, asset, scene: sceneData, survey, footprint, out }), sink);
        } else {
          await renderAsset(job.asset, scene, survey, footprint, job.out, sink);
        }
        job.rendered(sink);
      }
    };
    await Promise.all([runOn(undefined), ...this.workers.map((w) => runOn(w))]);
  }

  /** Rows (or columns) split evenly between the workers and the main thread, which does its share last. */
  private async splitRows(
    rows: number,
    local: (rowStart: number, rowEnd: number) => void,
    remote: (id: number, rowStart: number, rowEnd: number) => WorkerRequest,
  ): Promise<void> {
    const parts = this.workers.length + 1;
    const bounds = Array.from({ length: parts + 1 }, (_, k) => Math.round((rows * k) / parts));
    const done = this.workers.map((worker, k) => worker.request((id) => remote(id, bounds[k + 1]!, bounds[k + 2]!)));
    local(bounds[0]!, bounds[1]!);
    await Promise.all(done);
  }
}
