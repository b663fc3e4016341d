import type { Survey } from '../catalogue/survey.js';

/** A survey as `nadir ingest` and `nadir surveys` print it: its id, date, version, tags and each asset's GSD and zooms. */
export function surveySummary(survey: Survey) {
  return {
    id: survey.id,
    captureDate: survey.captureDate,
    version: survey.version,
    tags: survey.tags,
    assets: Object.fromEntries(
      Object.values(survey.assets).map((a) => [
        a?.type,
        { gsd: Number(a?.gsd.toFixed(4)), minZoom: a?.minZoom, maxZoom: a?.maxZoom },
      ]),
    ),
  };
}
