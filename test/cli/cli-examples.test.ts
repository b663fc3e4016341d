/**
 * Counterexamples the CLI properties (properties.test.ts) found, shrunk and kept as
 * example-based tests: each failed before the fix named beside it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../src/cli/main.js';
import type { Services } from '../../src/composition.js';
import { servicesFor, tempDir } from '../support/fixtures.js';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

describe('CLI counterexamples found by the properties', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;

  before(async () => {
    dir = await tempDir('cli-examples');
  });
  after(() => dir.remove());

  /** `nadir ...argv` in process; services are never opened (a call that gets that far exits 1). */
  function nadir(...argv: string[]): Promise<Result> {
    return nadirWith(argv, () => Promise.reject(new Error('services not opened in this test')));
  }

  async function nadirWith(argv: string[], openServices: () => Promise<Services>): Promise<Result> {
    let stdout = '';
    let stderr = '';
    const stream = (write: (text: string) => void) =>
      ({
        isTTY: false,
        write: (chunk: string) => {
          write(String(chunk));
          return true;
        },
      }) as unknown as NodeJS.WriteStream;
    const code = await main(
      argv,
      { NADIR_DATA_DIR: join(dir.path, 'data') },
      {
        stdout: stream((text) => {
          stdout += text;
        }),
        stderr: stream((text) => {
          stderr += text;
        }),
        openServices,
      },
    );
    return { code, stdout, stderr };
  }

  /** `nadir ...argv` in process over the services of the test's data folder. */
  async function nadirWithServices(...argv: string[]): Promise<Result> {
    const services = await servicesFor(join(dir.path, 'data'));
    try {
      // main closes what it opened: not these.
      return await nadirWith(argv, () => Promise.resolve({ ...services, close: async () => {} }));
    } finally {
      await services.close();
    }
  }

  /** One line ending in a newline, and nothing else. */
  function oneLine(r: Result): string {
    assert.match(r.stderr, /^[^\n]*\n$/, JSON.stringify(r.stderr));
    return r.stderr.trimEnd();
  }

  it('an error is one line whatever the argument holds (a line break, a terminal escape)', async () => {
    const unknown = await nadir('frob\nnicate\u001b[2J');
    assert.equal(unknown.code, 2);
    assert.equal(oneLine(unknown), 'nadir: unknown command "frob\\nnicate\\u001b[2J" (try nadir --help)');
    const option = await nadir('migrate', '--colour\nred');
    assert.equal(option.code, 2);
    assert.match(oneLine(option), /^nadir migrate: Unknown option '--colour\\nred'.* \(see nadir migrate --help\)$/);
  });

  it("node's parseArgs messages over three lines are printed as one sentence line", async () => {
    const r = await nadir('serve', '--host', '-x');
    assert.equal(r.code, 2);
    assert.equal(
      oneLine(r),
      "nadir serve: Option '--host' argument is ambiguous. Did you forget to specify the option argument for '--host'? To specify an option argument starting with a dash use '--host=-XYZ'. (see nadir serve --help)",
    );
  });

  it('an 8 KB argument is not echoed whole', async () => {
    const r = await nadir('A'.repeat(8192));
    assert.equal(r.code, 2);
    const line = oneLine(r);
    assert.ok(line.length < 1100, `${line.length} characters`);
    assert.match(line, /^nadir: unknown command "A+ \.\.\.\(\d+ characters\)\.\.\. A+" \(try nadir --help\)$/);
  });

  it('a whole-number option takes plain digits only: a usage error (2) for anything Number() would stretch', async () => {
    for (const [command, option, value] of [
      ['serve', '--port', ''],
      ['serve', '--port', ' 80'],
      ['serve', '--port', '0x50'],
      ['serve', '--port', '1e3'],
      ['serve', '--port', '+80'],
      ['demo', '--seed', ''],
      ['demo', '--seed', '1.5'],
      ['demo', '--seed', '0x10'],
      ['storage', '--grace', '99999999999999999999'],
    ] as const) {
      const args = command === 'storage' ? ['storage', 'gc', `${option}=${value}`] : [command, `${option}=${value}`];
      const r = await nadir(...args);
      assert.equal(r.code, 2, `nadir ${args.join(' ')}: ${r.stderr}`);
      assert.match(oneLine(r), new RegExp(`^nadir ${command}: ${option}.* must be a whole number .*--help\\)$`));
    }
  });

  it('surveys refuses extra arguments (2) before opening the catalogue; they were ignored', async () => {
    for (const args of [
      ['list', 'acme'],
      ['show', 'a', 'b'],
      ['delete', 'a', 'b', 'c'],
      ['show'],
      ['frob', 'x'],
      ['show', ''],
    ]) {
      const r = await nadir('surveys', ...args);
      assert.equal(r.code, 2, `nadir surveys ${args.join(' ')}: ${r.stderr}`);
      assert.equal(oneLine(r), 'nadir surveys: expected list, show <id> or delete <id> (see nadir surveys --help)');
    }
  });

  it('accounts rate-limit checks --interval before looking the account up (a usage error, 2, not "No account", 1)', async () => {
    for (const interval of ['', '0', '1.5']) {
      const r = await nadirWithServices('accounts', 'rate-limit', 'nobody', '100', `--interval=${interval}`);
      assert.equal(r.code, 2, `--interval=${interval}: ${r.stderr}`);
      assert.match(
        oneLine(r),
        /^nadir accounts: --interval must be an integer >= 1, got .* \(see nadir accounts --help\)$/,
      );
    }
  });
});
