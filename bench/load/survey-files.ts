import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The local file of a survey asset: catalogue rows name storage keys (`surveys/<id>/v<N>/Vert.tif`)
 * under the data folder, the embedded default storage; rows written before object storage hold
 * `file://` URLs. The benchmark's peers (GDAL, rasterio, MapServer) read that file directly.
 */
export function surveyFile(dataDir: string, uri: string): string {
  return uri.startsWith('file:') ? fileURLToPath(uri) : join(dataDir, uri);
}
