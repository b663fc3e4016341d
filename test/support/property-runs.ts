/**
 * How the property-based tests (fast-check) run: one fixed seed per run so CI is reproducible,
 * `FC_SEED=<n>` to replay another (a failure prints the line to paste), `FC_PATH` with it to
 * replay only the shrunk counterexample, and `FC_RUNS_SCALE` to run more (or fewer) cases
 * locally than the CI budget sizes them for.
 */
import fc from 'fast-check';

function envNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new Error(`${name} must be a number, got ${JSON.stringify(text)}`);
  return value;
}

/** The seed every property of a run uses (issue 18 is where these tests come from). */
export const FC_SEED = Math.trunc(envNumber('FC_SEED', 20_181_118));
export const FC_RUNS_SCALE = envNumber('FC_RUNS_SCALE', 1);
const FC_PATH = process.env.FC_PATH || undefined;

/** `runs` scaled by FC_RUNS_SCALE, at least one. */
export function scaledRuns(runs: number): number {
  return Math.max(1, Math.round(runs * FC_RUNS_SCALE));
}

/**
 * Checks a property over `runs` generated cases (scaled) and fails with the shrunk
 * counterexample and the command line that replays it.
 */
export async function checkProperty<Ts>(
  name: string,
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  runs: number,
): Promise<void> {
  const details = await fc.check(property, {
    seed: FC_SEED,
    numRuns: scaledRuns(runs),
    ...(FC_PATH ? { path: FC_PATH } : {}),
    // A shrink against a live server costs requests: bound it rather than hang the suite.
    interruptAfterTimeLimit: 120_000,
    markInterruptAsFailure: false,
  });
  if (!details.failed) return;
  const replay = `FC_SEED=${details.seed} FC_PATH=${details.counterexamplePath ?? ''}`;
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const example = fc.stringify(details.counterexample);
  const shown = example.length > 3000 ? `${example.slice(0, 3000)}... (${example.length} characters)` : example;
  process.stderr.write(`\n${name}: property failed; replay with ${replay}\n`);
  throw new Error(
    `${name}: property failed after ${details.numRuns} runs, shrunk ${details.numShrinks} times (replay with ${replay})\n${cause}\ncounterexample: ${shown}`,
  );
}
