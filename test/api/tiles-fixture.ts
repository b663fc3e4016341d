import { join } from 'node:path';
import type { Survey } from '../../src/catalogue/survey.js';
import type { Services } from '../../src/composition.js';
import { REALDATA, writeManifest } from '../support/fixtures.js';

export interface RealdataSurveySpec {
  id: string;
  captureDate: string;
  tags?: string[];
}

/** Ingests one realdata raster as the Vert layer of a survey, through the real pipeline. */
export async function ingestRealdataSurvey(
  services: Services,
  dir: string,
  file: string,
  spec: RealdataSurveySpec,
): Promise<Survey> {
  const manifest = await writeManifest(dir, spec.id, {
    id: spec.id,
    captureDate: spec.captureDate,
    firstPhotoTime: `${spec.captureDate}T15:00:00Z`,
    lastPhotoTime: `${spec.captureDate}T16:00:00Z`,
    tags: spec.tags ?? [],
    assets: { Vert: join(REALDATA, file) },
  });
  return services.ingestor.ingestManifestFile(manifest);
}

/** The map tile column and row of EPSG:3857 coordinates at zoom `z`. */
export function tileGrid(z: number): { column: (x: number) => number; row: (y: number) => number } {
  const half = 20037508.342789244;
  const size = (2 * half) / 2 ** z;
  return { column: (x) => Math.floor((x + half) / size), row: (y) => Math.floor((half - y) / size) };
}
