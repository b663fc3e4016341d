/**
 * Removing survey files nothing needs any more, whatever the storage: files of versions that a
 * re-ingest replaced or a delete removed (after a grace period: other servers may still be
 * reading them until their caches move on), and files no catalogue row ever named (an ingest
 * killed between upload and commit), sparing the newest version of a survey whose ingest began
 * recently (it may still be uploading).
 */
import type { SurveyCatalogue } from '../catalogue/catalogue.js';
import type { SurveyStorage } from './storage.js';

/** How long a replaced or deleted version's files stay readable. */
export const RETIRED_GRACE_MS = 10 * 60 * 1000;
/** How long the newest reserved version of a survey counts as an ingest under way. */
export const INGEST_GRACE_MS = 24 * 60 * 60 * 1000;

const SURVEY_FILE = /^surveys\/([^/]+)\/v(\d+)\/.+$/;

export interface GarbageOptions {
  now: Date;
  retiredGraceMs?: number;
  ingestGraceMs?: number;
  /** Say what would go, delete nothing. */
  dryRun?: boolean;
}

export interface GarbageReport {
  /** Keys deleted (or, in a dry run, that would be). */
  deleted: string[];
  /** Keys kept for now: retired within the grace period, or of an ingest that may be running. */
  waiting: string[];
}

function olderThan(instant: string | undefined, now: Date, graceMs: number): boolean {
  return instant === undefined || now.getTime() - Date.parse(instant) >= graceMs;
}

/** Retired files past the grace period, deleted and forgotten (what every ingest does after it commits). */
export async function removeRetired(
  storage: SurveyStorage,
  catalogue: SurveyCatalogue,
  options: GarbageOptions,
): Promise<GarbageReport> {
  const graceMs = options.retiredGraceMs ?? RETIRED_GRACE_MS;
  const report: GarbageReport = { deleted: [], waiting: [] };
  const due: string[] = [];
  for (const { location, retiredAt } of await catalogue.retiredFiles()) {
    const key = storage.keyOf(location);
    if (!olderThan(retiredAt, options.now, graceMs)) report.waiting.push(key ?? location);
    else {
      due.push(location);
      if (key !== undefined) report.deleted.push(key);
    }
  }
  if (!options.dryRun && due.length > 0) {
    await storage.delete(report.deleted);
    await catalogue.forgetRetired(due);
  }
  return report;
}

/** `nadir storage gc`: retired files past the grace period, and files no catalogue row names. */
export async function collectGarbage(
  storage: SurveyStorage,
  catalogue: SurveyCatalogue,
  options: GarbageOptions,
): Promise<GarbageReport> {
  const report = await removeRetired(storage, catalogue, options);
  const ingestGraceMs = options.ingestGraceMs ?? INGEST_GRACE_MS;
  const referenced = new Set<string>();
  for (const location of await catalogue.referencedFiles()) {
    const key = storage.keyOf(location);
    if (key !== undefined) referenced.add(key);
  }
  const accounted = new Set([...report.deleted, ...report.waiting]);
  const reservations = await catalogue.reservations();
  const orphans: string[] = [];
  for await (const { key } of storage.list('surveys/')) {
    const match = SURVEY_FILE.exec(key);
    if (!match || referenced.has(key) || accounted.has(key)) continue;
    const reservation = reservations.get(match[1] as string);
    const underWay =
      reservation?.version === Number(match[2]) && !olderThan(reservation.reservedAt, options.now, ingestGraceMs);
    if (underWay) report.waiting.push(key);
    else orphans.push(key);
  }
  if (!options.dryRun && orphans.length > 0) await storage.delete(orphans);
  report.deleted.push(...orphans);
  return report;
}
