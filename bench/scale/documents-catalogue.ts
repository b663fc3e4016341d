/**
 * The catalogue the documents benchmark asks about: the coverage benchmark's surveys
 * (bench/coverage/catalogue.ts: flight blocks over cities, 16 years) with 1,000 distinct tags, as
 * a provider's archive has them: campaigns. Each tag (`<kind>:<name>`, 50 kinds of 20 names) is
 * one campaign of 1-7 days; a third of the surveys belong to one, captured on one of its days,
 * and a tenth of those to a second one of the same days. So tags and dates pair up as they do in
 * practice (a campaign is flown over days, not years), and the WMTS document, whose tag layers
 * list their dates, is as large as such a catalogue makes it.
 *
 * The SQLite file is built through SqliteSurveyCatalogue.put (which keeps the groups), cached
 * under bench/work/scale-documents; PostgreSQL is loaded in bulk (postgres-catalogue.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { mulberry32 as seededRandom } from '@nadir/demo-town/random';
import type { Survey } from '../../src/catalogue/survey.js';
import { buildSqliteCatalogue, GENERATOR_VERSION, generate, layoutFor } from '../coverage/catalogue.js';

const ROOT = join(import.meta.dirname, '../..');
export const DOCUMENTS_WORK = join(ROOT, 'bench/work/scale-documents');
/** Bump whenever the surveys below change (with the coverage generator's version beside it). */
const CAMPAIGN_VERSION = 1;
const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(2010, 0, 1);
const DAYS = 16 * 365;

export interface Campaign {
  tag: string;
  /** Its days, as YYYY-MM-DD. */
  dates: string[];
}

export function campaigns(count: number): Campaign[] {
  const random = seededRandom(1000 + count);
  const kinds = ['disaster', 'project', 'event', 'client', 'insurance'];
  return Array.from({ length: count }, (_, i) => {
    const kind = `${kinds[i % kinds.length]}${Math.floor(i / 20) % 10}`;
    const start = FIRST_DAY + Math.floor(random() * DAYS) * DAY_MS;
    const days = 1 + Math.floor(random() * 7);
    const dates = Array.from({ length: days }, (_, d) => new Date(start + d * DAY_MS).toISOString().slice(0, 10));
    return { tag: `${kind}:c${String(i).padStart(4, '0')}`, dates };
  });
}

/** The coverage generator's surveys with campaign tags and dates. */
export function* taggedSurveys(count: number, tags: number): Generator<Survey> {
  const random = seededRandom(77);
  const all = campaigns(tags);
  for (const survey of generate(layoutFor(count))) {
    if (random() < 1 / 3) {
      const campaign = all[Math.floor(random() * all.length)] as Campaign;
      const date = campaign.dates[Math.floor(random() * campaign.dates.length)] as string;
      const time = survey.firstPhotoTime.slice(10);
      survey.tags = [campaign.tag];
      if (random() < 0.1) {
        const other = all.find((c) => c !== campaign && c.dates.includes(date));
        if (other) survey.tags.push(other.tag);
      }
      survey.captureDate = date;
      survey.firstPhotoTime = `${date}${time}`;
      survey.lastPhotoTime = `${date}${survey.lastPhotoTime.slice(10)}`;
    } else {
      survey.tags = [];
    }
    yield survey;
  }
}

/** The SQLite catalogue of these surveys, built once through `put` and kept. */
export async function cachedDocumentsCatalogue(
  count: number,
  tags: number,
  fresh: boolean,
): Promise<{ path: string; buildSeconds?: number }> {
  const path = join(DOCUMENTS_WORK, `catalogue-v${GENERATOR_VERSION}.${CAMPAIGN_VERSION}-${count}-${tags}.sqlite`);
  if (existsSync(path) && !fresh) return { path };
  const started = performance.now();
  await buildSqliteCatalogue(path, taggedSurveys(count, tags));
  return { path, buildSeconds: (performance.now() - started) / 1000 };
}
