/**
 * Imagery downloads to files: each response streamed to `<name>.part` and renamed to `<name>`
 * only once complete, so a file under its final name is always whole. A later run skips whole
 * files and redoes `.part` ones; with the token kept in a FileTokenStore it is not billed again.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Aoi } from '../area.js';
import type { NadirClient } from '../client.js';
import type { PlannedImage } from '../plan.js';

export interface ByteProgress {
  received: number;
  /** From Content-Length; undefined when the server did not say. */
  total: number | undefined;
}

/** Streams a response's body to `path` (through `path.part`); returns the bytes written. */
export async function saveResponse(
  response: Response,
  path: string,
  options: { signal?: AbortSignal; onProgress?: (progress: ByteProgress) => void } = {},
): Promise<number> {
  if (!response.body) throw new Error(`the answer for ${path} has no body`);
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : undefined;
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      options.onProgress?.({ received, total });
      done(null, chunk);
    },
  });
  const partial = `${path}.part`;
  const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  await pipeline(body, counter, createWriteStream(partial), options.signal ? { signal: options.signal } : {});
  if (total !== undefined && received !== total) throw new Error(`${path}: got ${received} of ${total} bytes`);
  await rename(partial, path);
  return received;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (found) => found.isFile(),
    () => false,
  );
}

export type ImageOutcome = 'downloaded' | 'skipped';

export interface DownloadEvents {
  /** An image starts (not called for skipped ones). */
  onStart?: (image: PlannedImage) => void;
  onProgress?: (image: PlannedImage, progress: ByteProgress) => void;
  onDone?: (image: PlannedImage, outcome: ImageOutcome, bytes: number) => void;
}

/**
 * Fetches the planned images of one AOI into `dir`, `concurrency` at a time (the server renders
 * each with GDAL, so a few at once is plenty). Whole files already there are skipped.
 */
export async function downloadImages(
  client: NadirClient,
  aoi: Aoi,
  images: PlannedImage[],
  dir: string,
  options: DownloadEvents & { signal?: AbortSignal; concurrency?: number } = {},
): Promise<Map<string, ImageOutcome>> {
  const concurrency = options.concurrency ?? 2;
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 16)) {
    throw new RangeError(`concurrency must be 1..16, got ${concurrency}`);
  }
  await mkdir(dir, { recursive: true });
  const outcomes = new Map<string, ImageOutcome>();
  const queue = [...images];
  const worker = async () => {
    for (let image = queue.shift(); image; image = queue.shift()) {
      const path = join(dir, image.fileName);
      if (await isFile(path)) {
        outcomes.set(image.fileName, 'skipped');
        options.onDone?.(image, 'skipped', (await stat(path)).size);
        continue;
      }
      options.onStart?.(image);
      const current = image;
      const response = await client.imagery(
        {
          surveyId: image.surveyId,
          type: image.type,
          format: image.format,
          aoi,
          size: image.size,
          ...(image.baseline ? { baseline: image.baseline.id } : {}),
        },
        options.signal ? { signal: options.signal } : {},
      );
      const bytes = await saveResponse(response, path, {
        ...(options.signal ? { signal: options.signal } : {}),
        onProgress: (progress) => options.onProgress?.(current, progress),
      });
      outcomes.set(image.fileName, 'downloaded');
      options.onDone?.(image, 'downloaded', bytes);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, images.length) }, worker));
  return outcomes;
}
