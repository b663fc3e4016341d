/**
 * A render worker: paints ground rows, lights scene rows and renders whole products, reading
 * the shared height model. It never touches GDAL (gdal-async does not support worker
 * threads): finished strips are posted back and the main thread writes them.
 */
import { parentPort } from 'node:worker_threads';
import { CoarseField, reviveTerrainFields } from './coarse-field.js';
import { paintGround } from './ground.js';
import { applyLighting } from './lighting.js';
import { renderAsset } from './products.js';
import type { WorkerRequest, WorkerResponse } from './render-protocol.js';
import { rasterizeRows } from './scene.js';
import { transposeColumns } from './transpose.js';

const port = parentPort;
if (!port) throw new Error('render-worker.ts must run in a worker thread');

function reply(message: WorkerResponse, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

async function handle(request: WorkerRequest): Promise<void> {
  switch (request.type) {
    case 'ground':
      paintGround(request.ground, reviveTerrainFields(request.fields), request.seed, request.rowStart, request.rowEnd);
      return;
    case 'rasterize':
      rasterizeRows(
        request.grid,
        request.ground,
        request.objects,
        request.decals,
        new CoarseField(request.dtm),
        request.seed,
        request.rowStart,
        request.rowEnd,
      );
      return;
    case 'light':
      applyLighting(request.grid, request.sun, request.shadows, request.rowStart, request.rowEnd);
      return;
    case 'transpose':
      transposeColumns(request.grid, request.columns, request.rowStart, request.rowEnd);
      return;
    case 'render': {
      const { scene } = request;
      const revived = { ...scene, fields: reviveTerrainFields(scene.fields) };
      const sink = {
        // Copies, because the renderer reuses its buffers; the copies move to the main thread.
        write: async (x: number, y: number, width: number, height: number, data: (Uint8Array | Float32Array)[]) => {
          const copies = data.map((band) => band.slice());
          reply(
            { type: 'strip', id: request.id, x, y, width, height, data: copies },
            copies.map((band) => band.buffer as ArrayBuffer),
          );
        },
      };
      await renderAsset(request.asset, revived, request.survey, request.footprint, request.out, sink);
      return;
    }
  }
}

port.on('message', (request: WorkerRequest) => {
  handle(request).then(
    () => reply({ type: 'done', id: request.id }),
    (error: unknown) =>
      reply({
        type: 'error',
        id: request.id,
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  );
});
reply({ type: 'ready', id: -1 });
