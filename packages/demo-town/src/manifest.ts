/** The per-survey manifest.json that nadir's ingest reads (asset paths relative to it). */
import { rename, writeFile } from 'node:fs/promises';
import { DEMO_LOCATION } from './geo.js';
import type { DemoSurvey } from './surveys.js';

export const ASSET_NAMES = ['TrueOrtho', 'DetailDsm', 'Vert', 'North', 'South', 'East', 'West'] as const;
export type AssetName = (typeof ASSET_NAMES)[number];

export interface SurveyManifest {
  id: string;
  captureDate: string;
  firstPhotoTime: string;
  lastPhotoTime: string;
  timezone: string;
  tags: string[];
  assets: Record<AssetName, string>;
}

export function manifestFor(survey: DemoSurvey): SurveyManifest {
  const assets = Object.fromEntries(ASSET_NAMES.map((name) => [name, `${name}.tif`])) as Record<AssetName, string>;
  return {
    id: survey.id,
    captureDate: survey.captureDate,
    firstPhotoTime: survey.firstPhotoTime,
    lastPhotoTime: survey.lastPhotoTime,
    timezone: DEMO_LOCATION.timezone,
    tags: [...survey.tags],
    assets,
  };
}

/** Written last and atomically: a manifest only exists once all its assets do. */
export async function writeManifest(path: string, manifest: SurveyManifest): Promise<void> {
  const temp = `${path}.partial`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temp, path);
}
