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

/** A survey for people to read (`nadir surveys show`): one fact a line, one line per asset. */
export function surveyText(survey: Survey): string {
  const zone = survey.timezone ? ` (${survey.timezone})` : '';
  const lines = [
    `survey    ${survey.id}  version ${survey.version}`,
    `captured  ${survey.captureDate}${zone}, photos ${survey.firstPhotoTime} to ${survey.lastPhotoTime}`,
    `tags      ${survey.tags.length > 0 ? survey.tags.join(', ') : '(none)'}`,
    `ingested  ${survey.ingestedAt}`,
  ];
  const assets = Object.values(survey.assets).filter((asset) => asset !== undefined);
  const width = Math.max(0, ...assets.map((asset) => asset.type.length));
  for (const asset of assets) {
    lines.push(
      `  ${asset.type.padEnd(width)}  ${asset.gsd.toFixed(3)} m/px  zoom ${asset.minZoom}-${asset.maxZoom}  ${asset.width} x ${asset.height} px`,
    );
  }
  return `${lines.join('\n')}\n`;
}
