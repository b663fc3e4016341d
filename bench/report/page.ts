/** One benchmark part on its own page, docs/benchmarks-<part>.md, beside the full report. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeCharts } from './charts.js';
import { renderSection } from './markdown.js';
import type { Section } from './section.js';

const ROOT = join(import.meta.dirname, '../..');

export interface PageOptions {
  /** The page's heading, in place of the section's title. */
  heading: string;
  /** What wrote it: the command, for the footer. */
  command: string;
  quick?: boolean;
  /** On standard output instead of docs/ (no charts written). */
  print?: boolean;
}

export function sectionPage(section: Section, { heading, command, quick }: PageOptions): string {
  const rendered = renderSection(section, 'benchmarks', 1).replace(/^# .*/, `# ${heading}`);
  return `${rendered}

Written by \`${command}\` on ${new Date().toISOString().slice(0, 10)}${quick ? ' (a quick development run: short, one round)' : ''}.
\`npm run bench\` writes this page and puts the same section in [benchmarks.md](benchmarks.md) with the other parts.
`;
}

/** docs/benchmarks-<section id>.md and the section's charts in docs/benchmarks/, or the page on stdout. */
export async function writeSectionPage(section: Section, options: PageOptions): Promise<void> {
  const page = sectionPage(section, options);
  if (options.print) {
    process.stdout.write(page);
    return;
  }
  const charts = join(ROOT, 'docs/benchmarks');
  await mkdir(charts, { recursive: true });
  await writeCharts(section.charts, charts);
  const file = `docs/benchmarks-${section.id}.md`;
  await writeFile(join(ROOT, file), page);
  process.stderr.write(`${section.id}: wrote ${file} and its charts in docs/benchmarks/\n`);
}
