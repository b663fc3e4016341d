/** The command start-up part's raw figures: what bench/cli/run.ts measures and report.ts reads. */

export const START_CONTENDERS = [
  'bareNode',
  'version',
  'accountsList',
  'surveysList',
  'migrate',
  'allModules',
] as const;
export type StartContender = (typeof START_CONTENDERS)[number];

export interface StartSample {
  /** Wall time from spawn to exit, process start-up included. */
  ms: number;
  /** User + system CPU of the process (/usr/bin/time). */
  cpuMs: number;
}

export interface StartRaw {
  rounds: number;
  /** What each contender runs, as argv. */
  commands: Record<StartContender, string[]>;
  /** The data folder's catalogue and accounts: how many rows the listing commands print. */
  rows: { surveys: number; accounts: number };
  machine: { cpus: number; model: string; loadStart: number[]; loadEnd: number[] };
  /** One list per contender, rounds interleaved (each contender once per round, order rotated). */
  samples: Record<StartContender, StartSample[]>;
  seconds: number;
}
