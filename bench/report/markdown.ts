/**
 * docs/benchmarks.md from the sections: every goal first (what was promised, what was measured, by
 * how much it is met or missed), then each section's conditions, tables, charts and findings.
 */
import type { Cell, Goal, Section, Table } from './section.js';

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '-';
  const abs = Math.abs(value);
  if (abs >= 100 || Number.isInteger(value)) return Math.round(value).toLocaleString('en');
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

const cell = (value: Cell) => (value === null ? '-' : typeof value === 'number' ? formatNumber(value) : value);

export function renderTable(table: Table): string {
  const numeric = table.columns.map((_, i) =>
    table.rows.every((row) => typeof row[i] !== 'string' || /^[\d,.\s()%x/+-]+$/.test(row[i] as string)),
  );
  const header = `| ${table.columns.join(' | ')} |`;
  const rule = `| ${numeric.map((n, i) => (n && i > 0 ? '---:' : '---')).join(' | ')} |`;
  const rows = table.rows.map((row) => `| ${row.map((v) => cell(v).replaceAll('|', '\\|')).join(' | ')} |`);
  const notes = table.notes?.length ? `\n\n${table.notes.join('\n')}` : '';
  return `**${table.caption}**\n\n${[header, rule, ...rows].join('\n')}${notes}`;
}

/** "+23%" above a minimum / below a maximum when met, "-12%" short of it when missed. */
export function margin(goal: Goal): string {
  if (goal.measured === null || goal.target === 0) return '-';
  const better = goal.direction === 'min' ? goal.measured / goal.target - 1 : 1 - goal.measured / goal.target;
  const pct = `${Math.abs(better * 100).toFixed(0)}%`;
  if (goal.met) return `met, ${pct} ${goal.direction === 'min' ? 'above' : 'below'} target`;
  return `**missed**, ${pct} ${goal.direction === 'min' ? 'short' : 'over'}`;
}

export function goalRows(goals: Goal[]): string {
  const rows = goals.map((g) => {
    const op = g.direction === 'min' ? '>=' : '<=';
    const unit = g.unit === '%' ? '%' : ` ${g.unit}`;
    const measured = g.measured === null ? 'not measured' : `${formatNumber(g.measured)}${unit}`;
    return `| ${g.text} | ${measured} | ${op} ${formatNumber(g.target)}${unit} | ${margin(g)} |`;
  });
  return ['| goal | measured | target | result |', '| --- | ---: | ---: | --- |', ...rows].join('\n');
}

/** One section as Markdown, its title at heading `level`; charts are linked as `<chartPath>/<file>`. */
export function renderSection(section: Section, chartPath: string, level = 2, withGoals = true): string {
  const h = '#'.repeat(level);
  const parts = [`${h} ${section.title}`];
  if (withGoals && section.goals.length > 0) parts.push(`${h}# Goals\n\n${goalRows(section.goals)}`);
  for (const chart of section.charts) parts.push(`![${chart.title}](${chartPath}/${chart.file})`);
  for (const table of section.tables) parts.push(renderTable(table));
  if (section.findings?.length) parts.push(`${h}# Reading the figures\n\n${section.findings.join('\n\n')}`);
  if (section.history?.length) parts.push(`${h}# How it got here\n\n${section.history.join('\n\n')}`);
  parts.push(`${h}# Conditions\n\n${section.conditions.map((c) => `- ${c}`).join('\n')}`);
  return parts.join('\n\n');
}

export interface ReportMeta {
  date: string;
  command: string;
  seconds: number;
  resultsFile: string;
  quick: boolean;
}

export function renderReport(sections: { date: string; section: Section }[], meta: ReportMeta): string {
  const goals = sections.flatMap(({ section }) =>
    section.goals.map((g) => ({ ...g, text: `${section.title}: ${g.text}` })),
  );
  const met = goals.filter((g) => g.met).length;
  const quick = meta.quick
    ? '\n**Quick development run** (short runs, one round): the figures show that things work, not how fast they are.\n'
    : '';
  const body = sections.map(({ date, section }) => {
    // Its goals are in the table at the top.
    const text = renderSection(section, 'benchmarks', 2, false);
    // A section carried over from an earlier run says so under its title.
    return date === meta.date
      ? text
      : text.replace(/\n/, `\n\nMeasured on ${date} (carried over: not re-run this time).\n`);
  });
  return `# Benchmarks

Written by \`${meta.command}\` on ${meta.date} (${(meta.seconds / 60).toFixed(0)} min); every figure in it, and more, is in
[${meta.resultsFile}](../${meta.resultsFile}). Sections this command did not measure are carried over from the newest earlier results (those of an earlier day say so under their title; today's other runs are named in bench/results' commit history): re-run a part to refresh it.
${quick}
## Goals

${goals.length ? `${met} of ${goals.length} met.\n\n${goalRows(goals)}` : 'No goals measured in this run.'}

${body.join('\n\n')}
`;
}
