/**
 * What a multi-type download of an AOI consists of: one image per survey and content type the
 * survey has, each at that type's native size from the coverage GSD (service-spec "Resolution
 * rule": types differ, so one size for all would over- or under-sample one of them).
 */
import { type Aoi, type ImageSize, nativeImageSize } from './area.js';
import type { RasterFormat, RasterType, Survey } from './types.js';

export interface PlannedImage extends ImageSize {
  surveyId: string;
  captureDate: string | undefined;
  type: RasterType;
  format: RasterFormat;
  /** `<captureDate>_<surveyId>_<type>.<format>`: sorts by date and says the survey and the type. */
  fileName: string;
}

export interface DownloadPlan {
  images: PlannedImage[];
  /** Surveys and types asked for that the survey does not have. */
  missing: { surveyId: string; type: RasterType }[];
}

export function imageFileName(
  survey: Pick<Survey, 'id' | 'captureDate'>,
  type: RasterType,
  format: RasterFormat,
): string {
  const date = survey.captureDate ? `${survey.captureDate}_` : '';
  return `${date}${survey.id}_${type}.${format}`;
}

/** The images to fetch for these surveys (as coverage returned them, pixelSizes included). */
export function planDownload(surveys: Survey[], types: RasterType[], format: RasterFormat, aoi: Aoi): DownloadPlan {
  const images: PlannedImage[] = [];
  const missing: DownloadPlan['missing'] = [];
  for (const survey of surveys) {
    for (const type of types) {
      const gsd = survey.pixelSizes?.[type];
      if (gsd === undefined) {
        missing.push({ surveyId: survey.id, type });
        continue;
      }
      images.push({
        surveyId: survey.id,
        captureDate: survey.captureDate,
        type,
        format,
        fileName: imageFileName(survey, type, format),
        ...nativeImageSize(aoi.radius, gsd),
      });
    }
  }
  return { images, missing };
}
