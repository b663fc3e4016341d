// The process side of nadir-client: the one place that reads the environment, the wall clock and
// real timers, and turns SIGINT into an abort of whatever is waiting or downloading.
import { timerSleep } from '../../waiting.js';
import { main } from './main.js';

const abort = new AbortController();
process.once('SIGINT', () => abort.abort(new Error('interrupted')));
process.exitCode = await main(process.argv.slice(2), {
  env: { ...process.env },
  stdout: process.stdout,
  stderr: process.stderr,
  clock: Date.now,
  sleep: timerSleep,
  fetch: globalThis.fetch.bind(globalThis),
  signal: abort.signal,
});
