import type { Survey } from '../catalogue/survey.js';
import type { Aoi } from '../geo/aoi.js';
import type { AoiGrid } from '../geo/aoi-grid.js';
import type { ChangeFigures } from '../raster/index.js';

/** Square and cubic metres to the centimetre: finer would only print resampling noise. */
function round(value: number, decimals = 2): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}

function surveyOf(survey: Survey): { id: string; captureDate: string } {
  return { id: survey.id, captureDate: survey.captureDate };
}

/** The JSON of `DsmChange.json` (docs/api.md). */
export function changeSummary(after: Survey, baseline: Survey, aoi: Aoi, grid: AoiGrid, figures: ChangeFigures) {
  return {
    after: surveyOf(after),
    baseline: surveyOf(baseline),
    point: [aoi.lon, aoi.lat],
    radius: aoi.radius,
    size: grid.size,
    groundResolution: grid.groundResolution,
    threshold: figures.threshold,
    aoiArea: round(figures.aoiArea),
    comparedArea: round(figures.comparedArea),
    comparedShare: round(figures.comparedShare, 4),
    loss: { area: round(figures.loss.area), volume: round(figures.loss.volume) },
    gain: { area: round(figures.gain.area), volume: round(figures.gain.volume) },
  };
}
