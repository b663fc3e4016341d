import { main } from './main.js';

/** How long a finished command may take to let go of what it still holds before it exits anyway. */
const EXIT_GRACE_MS = 3_000;

process.exitCode = await main(process.argv.slice(2));

// The command has ended and closed what it opened, so the process ends when its event loop
// empties. If something a library left behind (a socket, a timer) keeps it from emptying, a
// stopped server must still stop: say what was left, and exit. Unref'd: it never delays an exit.
setTimeout(() => {
  // Its own stdout and stderr show as TTYWrap or PipeWrap (they never hold it): not named.
  const left = process.getActiveResourcesInfo().filter((resource) => resource !== 'TTYWrap' && resource !== 'PipeWrap');
  process.stderr.write(`nadir: still holding ${left.join(', ')} ${EXIT_GRACE_MS / 1000} s after finishing; exiting\n`);
  process.exit();
}, EXIT_GRACE_MS).unref();
