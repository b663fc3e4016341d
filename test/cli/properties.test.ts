/**
 * Property-based tests of the `nadir` command line and of ingest manifests (issue 18 item 2):
 * generated bad input gets a clear one-line error and the documented exit code (README: 1 for an
 * error, 2 for a mistake in how the command was called), never a stack trace or a crash.
 *
 * - The command line: `main` run in process on generated argv (cli-cases.ts says what each
 *   case must get), over the services of a temporary data folder; `serve` and `demo` get a stand-in
 *   that refuses to open services, so a well-formed call of them stops there. Then a handful of
 *   the same cases through a real `nadir` process.
 * - Manifests: `parseManifest` on generated objects (valid ones, each with one mistake, anything),
 *   `readManifest` on generated file contents, and ingest of sources that are not what they
 *   claim: a value that satisfies every documented invariant, or INVALID_MANIFEST /
 *   INVALID_SOURCE with a one-line message and nothing written.
 *
 * Seeded (FC_SEED to replay, FC_RUNS_SCALE for more runs): test/support/property-runs.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import fc from 'fast-check';
import gdal from 'gdal-async';
import { main } from '../../src/cli/main.js';
import type { Services } from '../../src/composition.js';
import { isNadirError } from '../../src/errors.js';
import { parseManifest, readManifest } from '../../src/ingest/manifest.js';
import { cliArgs, PROJECT_ROOT, servicesFor, tempDir } from '../support/fixtures.js';
import { EDGE_DATES, hostileText, NOT_DATES, realDate } from '../support/hostile-input.js';
import { checkProperty, FC_SEED, scaledRuns } from '../support/property-runs.js';
import { type CliCase, COMMANDS, cliCase, MANIFEST_NAMES } from './cli-cases.js';

const run = promisify(execFile);

/** What `serve` and `demo` get instead of services: a well-formed call of them ends here. */
class ServicesRefused extends Error {
  constructor() {
    super('services not opened in this test');
  }
}

/** A stream that keeps what is written to it. */
function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = {
    isTTY: false,
    columns: 100,
    write(chunk: string | Uint8Array) {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    },
  };
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const STACK = /\n\s+at .+[(:]\d+|\bat [\w.<>]+ \(/;

/** The one-line rule, and the documented exit code for the case. */
function checkResult(c: CliCase, r: Result): void {
  const where = `nadir ${c.argv.map((a) => JSON.stringify(a)).join(' ')} (${c.what})`;
  assert.ok([0, 1, 2].includes(r.code), `exit ${r.code} for ${where}: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, STACK, `a stack trace for ${where}: ${r.stderr}`);
  assert.doesNotMatch(r.stdout, STACK, `a stack trace for ${where}: ${r.stdout}`);
  const lines = r.stderr.split('\n');
  assert.equal(lines.pop(), '', `stderr does not end a line for ${where}: ${JSON.stringify(r.stderr)}`);
  if (r.code !== 0) {
    const errors = lines.filter((line) => line.startsWith('nadir'));
    assert.equal(errors.length, 1, `not one error line for ${where}: ${JSON.stringify(r.stderr)}`);
    assert.equal(lines.at(-1), errors[0], `the error is not the last line for ${where}: ${JSON.stringify(r.stderr)}`);
    assert.ok((errors[0] as string).length < 2000, `an error line of ${(errors[0] as string).length} characters`);
  }
  const last = lines.at(-1) ?? '';
  const usage = /\((see nadir \S+ --help|try nadir --help)\)$/.test(last);
  switch (c.outcome) {
    case 'help':
      assert.equal(r.code, 0, `exit ${r.code} for ${where}: ${r.stderr}`);
      assert.match(r.stdout, /Usage: nadir /);
      break;
    case 'usage':
      assert.equal(r.code, 2, `exit ${r.code}, not 2, for ${where}: ${r.stderr || r.stdout.slice(0, 200)}`);
      assert.ok(usage, `the usage error does not point at --help for ${where}: ${last}`);
      break;
    case 'accepted':
      assert.ok(r.code === 0 || r.code === 1, `exit ${r.code} for ${where}: ${r.stderr}`);
      assert.ok(!usage, `a well-formed call refused as a usage error: ${where}: ${last}`);
      break;
    case 'any':
      break;
  }
}

describe('CLI and manifest properties (fast-check)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;
  let services: Services;
  let shared: Services;
  /** Bad source rasters, by what is wrong with them. */
  const sources: Record<string, string> = {};
  let runs = 0;
  const outcomes = new Map<string, number>();

  before(async () => {
    dir = await tempDir('cli-props');
    env = { NADIR_DATA_DIR: join(dir.path, 'data'), NADIR_LOG_LEVEL: 'warn' };
    services = await servicesFor(env.NADIR_DATA_DIR as string);
    // main closes what it opened; these stay open for every run.
    shared = new Proxy(services, {
      get: (target, property) => (property === 'close' ? async () => {} : Reflect.get(target, property)),
    });
    const at = (name: string) => join(dir.path, name);
    await writeFile(at('not-json.json'), '{"captureDate": ');
    await writeFile(at('bad-date.json'), JSON.stringify({ captureDate: '2024-02-30', assets: { Vert: 'x.tif' } }));
    await writeFile(
      at('missing-source.json'),
      JSON.stringify({ captureDate: '2024-01-01', assets: { Vert: 'gone.tif' } }),
    );
    await mkdir(at('dir'));

    sources.missing = at('missing.tif');
    sources.folder = at('dir');
    sources.text = at('notes.tif');
    await writeFile(sources.text, 'this is not a raster\n');
    sources.empty = at('empty.tif');
    await writeFile(sources.empty, '');
    sources['newline in name'] = at('new\nline.tif');
    sources.noCrs = at('no-crs.tif');
    const plain = await gdal.openAsync(sources.noCrs, 'w', 'GTiff', 16, 16, 3, 'Byte');
    plain.geoTransform = [500000, 0.1, 0, 4000000, 0, -0.1];
    plain.close();
    sources.twoBands = at('two-bands.tif');
    const two = await gdal.openAsync(sources.twoBands, 'w', 'GTiff', 16, 16, 2, 'Float32');
    two.srs = gdal.SpatialReference.fromEPSG(32616);
    two.geoTransform = [500000, 0.1, 0, 4000000, 0, -0.1];
    two.close();
    sources.notGeoreferenced = at('not-georeferenced.tif');
    const bare = await gdal.openAsync(sources.notGeoreferenced, 'w', 'GTiff', 16, 16, 3, 'Byte');
    bare.srs = gdal.SpatialReference.fromEPSG(3857);
    bare.close();
  });

  after(async () => {
    await services?.close();
    await dir?.remove();
  });

  /** One in-process run of the CLI. */
  async function nadir(argv: string[]): Promise<Result> {
    runs++;
    const out = capture();
    const err = capture();
    const refuse = argv[0] === 'serve' || argv[0] === 'demo';
    const openServices = () => (refuse ? Promise.reject(new ServicesRefused()) : Promise.resolve(shared));
    const code = await main(argv, env, { stdout: out.stream, stderr: err.stream, openServices });
    return { code, stdout: out.text(), stderr: err.text() };
  }

  /** `@name` tokens stand for the test's manifest files. */
  function withPaths(argv: string[]): string[] {
    return argv.map((arg) =>
      arg.startsWith('@') && MANIFEST_NAMES.includes(arg.slice(1)) ? join(dir.path, arg.slice(1)) : arg,
    );
  }

  /** More than one serve worker starts processes: such a call is never run. */
  function startsWorkers(argv: string[]): boolean {
    return (
      argv[0] === 'serve' &&
      argv.some(
        (arg, i) =>
          /^--workers(=|$)/.test(arg) && !/^(--workers=)?1$/.test(arg === '--workers' ? (argv[i + 1] ?? '') : arg),
      )
    );
  }

  test('nadir <generated arguments>: the documented exit code and one line, in process', async () => {
    const property = fc.asyncProperty(cliCase(), async (c) => {
      fc.pre(!startsWorkers(c.argv));
      const result = await nadir(withPaths(c.argv));
      const command = Object.hasOwn(COMMANDS, c.argv[0] ?? '') ? c.argv[0] : '(unknown)';
      const key = `${command} ${c.outcome} ${result.code}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      checkResult(c, result);
    });
    await checkProperty('cli arguments', property, 1500);
  });

  test('the same through a real nadir process, a handful of times', async () => {
    // Processes start slowly (tsx compiles the CLI): a few cases that never open services.
    const cases = fc
      .sample(
        cliCase().filter(
          (c) => c.outcome === 'usage' || (c.outcome === 'any' && c.argv[0] !== 'serve' && c.argv[0] !== 'demo'),
        ),
        { numRuns: 4, seed: FC_SEED },
      )
      .filter((c) => !startsWorkers(c.argv));
    for (const c of cases) {
      const argv = withPaths(c.argv);
      const result = await run(process.execPath, cliArgs(...argv), {
        cwd: PROJECT_ROOT,
        env: { ...process.env, ...env },
        timeout: 60_000,
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => ({
          code: error.code,
          stdout: error.stdout,
          stderr: error.stderr,
        }),
      );
      checkResult(c, result);
    }
  });

  // -------------------------------------------------------------------------------------------
  // Manifests.

  const ZONES = [
    'UTC',
    'America/Chicago',
    'Pacific/Kiritimati',
    'Pacific/Pago_Pago',
    'Asia/Kathmandu',
    'Europe/London',
    'Etc/GMT+12',
    'Australia/Lord_Howe',
  ];
  const CONTENT_TYPES = ['Vert', 'TrueOrtho', 'DetailDsm', 'North', 'South', 'East', 'West'];
  const TAG = fc.constantFrom('disaster', 'disaster:hurricane', 'a_b-c:D-9', 'flood');
  const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

  /** A manifest every documented rule allows. */
  const goodManifest = fc
    .record(
      {
        id: fc.uuid().map((id) => id.toUpperCase()),
        captureDate: fc.oneof(realDate(), fc.constantFrom(...EDGE_DATES)),
        timezone: fc.constantFrom(...ZONES),
        tags: fc.array(TAG, { maxLength: 4 }),
        assets: fc
          .subarray(CONTENT_TYPES, { minLength: 1 })
          .chain((types) =>
            fc.tuple(
              ...types.map((t) =>
                fc.constantFrom('a.tif', 'sub/b.tif', '/abs/c.tif', 'Ω é.tif', '../up.tif').map((p) => [t, p] as const),
              ),
            ),
          )
          .map((entries) => Object.fromEntries(entries)),
        times: fc.tuple(
          fc.integer({ min: 0, max: 86_399 }),
          fc.integer({ min: 0, max: 86_399 }),
          fc.constantFrom('Z', '+00:00', '-05:00', '+14:00', '+0530'),
        ),
      },
      { requiredKeys: ['captureDate', 'assets'] },
    )
    .map(({ times, ...manifest }) => {
      // The last day, behind UTC, ends in year 10000: nadir refuses it (outside what it stores).
      const m =
        manifest.captureDate === '9999-12-31' && manifest.timezone ? { ...manifest, timezone: 'UTC' } : manifest;
      if (!times || m.captureDate === undefined) return m;
      // Photo times on the capture date, in order, with a zone.
      const [a, b, offset] = times;
      const zone = m.captureDate === '9999-12-31' ? 'Z' : offset;
      const at = (s: number) =>
        `${m.captureDate}T${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}${zone}`;
      return { ...m, firstPhotoTime: at(Math.min(a, b)), lastPhotoTime: at(Math.max(a, b)) };
    });

  /** One mistake the docs (README "Ingest manifests", nadir ingest --help) refuse. */
  type Manifest = Record<string, unknown>;
  type Mistake = [string, (m: Manifest) => Manifest];
  const mistake = (what: string, apply: (m: Manifest) => Manifest): Mistake => [what, apply];
  const FIELDS = ['id', 'captureDate', 'firstPhotoTime', 'lastPhotoTime', 'timezone', 'tags', 'assets'];
  const BAD_TIMES = [
    '2024-01-01T10:00:00',
    '2024-01-01',
    '2024-02-30T00:00:00Z',
    '2023-02-29T12:00Z',
    '2024-13-01T00:00Z',
    '2024-01-01T25:00Z',
    '9999-12-31T23:00-05:00',
    'yesterday',
    '',
    17,
  ];
  const mistakes: fc.Arbitrary<Mistake> = fc.oneof(
    hostileText()
      .filter((k) => !FIELDS.includes(k))
      .map((k) => mistake(`unknown field ${JSON.stringify(k)}`, (m) => ({ ...m, [k]: 1 }))),
    fc
      .oneof(hostileText(), fc.constantFrom('survey-1', '1234', 'g0000000-0000-4000-8000-000000000000', 42, true, []))
      .map((id) => mistake(`id ${JSON.stringify(id)}`, (m) => ({ ...m, id }))),
    fc
      .oneof(
        fc.constantFrom<unknown>(...NOT_DATES, '', ' 2024-01-01', null, 20240101, ['2024-01-01']),
        hostileText().filter((t) => !/^\d{4}-\d\d-\d\d$/.test(t)),
      )
      .map((d) => mistake(`captureDate ${JSON.stringify(d)}`, (m) => ({ ...m, captureDate: d }))),
    fc.constant(mistake('no captureDate', ({ captureDate: _, ...m }) => m)),
    fc
      .constantFrom<unknown>('Mars/Olympus', '', 'America/Nowhere', 'Europe/London ', 42)
      .map((z) => mistake(`timezone ${JSON.stringify(z)}`, (m) => ({ ...m, timezone: z }))),
    fc
      .tuple(fc.constantFrom('firstPhotoTime', 'lastPhotoTime'), fc.constantFrom<unknown>(...BAD_TIMES))
      .map(([field, value]) => mistake(`${field} ${JSON.stringify(value)}`, (m) => ({ ...m, [field]: value }))),
    fc.constant(
      mistake('photo times out of order', (m) => ({
        ...m,
        firstPhotoTime: '2024-01-01T12:00:00Z',
        lastPhotoTime: '2024-01-01T10:00:00Z',
      })),
    ),
    fc
      .constantFrom<unknown>('disaster: fire', '', 'a:b:c', ':x', 'é', 7)
      .map((t) => mistake(`tag ${JSON.stringify(t)}`, (m) => ({ ...m, tags: [t] }))),
    fc
      .constantFrom<unknown>('disaster', {}, 1)
      .map((t) => mistake(`tags ${JSON.stringify(t)}`, (m) => ({ ...m, tags: t }))),
    fc
      .constantFrom<unknown>(null, [], 'a.tif', 1, {})
      .map((a) => mistake(`assets ${JSON.stringify(a)}`, (m) => ({ ...m, assets: a }))),
    fc.constant(mistake('no assets', ({ assets: _, ...m }) => m)),
    fc
      .oneof(
        fc.constantFrom('Oblique', 'vert', 'DSM', '', '__proto__', 'constructor'),
        hostileText().filter((t) => !CONTENT_TYPES.includes(t)),
      )
      .map((t) =>
        mistake(`asset type ${JSON.stringify(t)}`, (m) => {
          // Built through JSON, as a parsed file would be: `__proto__` is then an own key.
          const assets = JSON.parse(`{${JSON.stringify(t)}: "x.tif"}`) as Record<string, unknown>;
          return { ...m, assets: Object.assign(assets, m.assets as object) };
        }),
      ),
    fc
      .constantFrom<unknown>('', 1, null, [], {})
      .map((p) => mistake(`asset path ${JSON.stringify(p)}`, (m) => ({ ...m, assets: { Vert: p } }))),
  );

  /** The documented shape of what parseManifest returns. */
  function checkManifest(raw: Record<string, unknown>, m: ReturnType<typeof parseManifest>): void {
    const where = JSON.stringify(raw).slice(0, 400);
    assert.match(m.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, where);
    if (typeof raw.id === 'string') assert.equal(m.id, raw.id.toLowerCase(), where);
    assert.equal(m.captureDate, raw.captureDate, where);
    assert.match(m.firstPhotoTime, INSTANT, `firstPhotoTime ${m.firstPhotoTime}: ${where}`);
    assert.match(m.lastPhotoTime, INSTANT, `lastPhotoTime ${m.lastPhotoTime}: ${where}`);
    assert.ok(m.firstPhotoTime <= m.lastPhotoTime, `${m.firstPhotoTime} after ${m.lastPhotoTime}: ${where}`);
    // A photo time is the instant written: the same calendar day and time once its zone is applied.
    for (const field of ['firstPhotoTime', 'lastPhotoTime'] as const) {
      const given = raw[field];
      if (typeof given === 'string') assert.equal(Date.parse(m[field]), Date.parse(given), `${field}: ${where}`);
      else {
        // Defaults: the start and end of the capture date where the survey was (within a day of it in UTC).
        const day = Date.parse(`${m.captureDate}T00:00:00Z`);
        const t = Date.parse(m[field]);
        assert.ok(Math.abs(t - day) <= 2 * 86_400_000, `${field} ${m[field]} far from ${m.captureDate}: ${where}`);
      }
    }
    assert.deepEqual(m.tags, [...new Set((raw.tags as string[] | undefined) ?? [])], where);
    const assets = raw.assets as Record<string, string>;
    assert.deepEqual(Object.keys(m.assets).sort(), Object.keys(assets).sort(), where);
    for (const [type, paths] of Object.entries(m.assets)) {
      // A path given alone is a list of one: an asset may be several files (globs expand later).
      assert.ok(Array.isArray(paths) && paths.every((path) => isAbsolute(path)), where);
      assert.deepEqual(paths, [resolve('/base', assets[type] as string)], where);
    }
  }

  function checkRefusal(error: unknown, codes: string[], where: string): void {
    assert.ok(
      isNadirError(error),
      `not a NadirError for ${where}: ${error instanceof Error ? error.stack : String(error)}`,
    );
    assert.ok(codes.includes(error.code), `${error.code} for ${where}: ${error.message}`);
    assert.doesNotMatch(
      error.message,
      /[\n\r]/,
      `a message over several lines for ${where}: ${JSON.stringify(error.message)}`,
    );
    assert.ok(error.message.length > 0 && error.message.length < 2000, `message of ${error.message.length} characters`);
  }

  test('parseManifest: a valid manifest keeps every documented invariant; one mistake is INVALID_MANIFEST in one line', async () => {
    const property = fc.property(
      fc.oneof(
        { weight: 2, arbitrary: goodManifest.map((m) => ({ m, mistake: undefined as string | undefined })) },
        {
          weight: 3,
          arbitrary: fc.tuple(goodManifest, mistakes).map(([m, [what, apply]]) => ({ m: apply(m), mistake: what })),
        },
        {
          weight: 1,
          arbitrary: fc
            .oneof(fc.jsonValue(), fc.object(), fc.dictionary(hostileText(), fc.jsonValue()))
            .map((m) => ({ m: m as Record<string, unknown>, mistake: 'anything' })),
        },
      ),
      ({ m, mistake }) => {
        const where = `${mistake ?? 'valid'}: ${JSON.stringify(m)?.slice(0, 400)}`;
        let parsed: ReturnType<typeof parseManifest> | undefined;
        try {
          parsed = parseManifest(m, '/base');
        } catch (error) {
          assert.notEqual(mistake, undefined, `a valid manifest was refused: ${where}: ${error}`);
          checkRefusal(error, ['INVALID_MANIFEST'], where);
          return;
        }
        assert.ok(mistake === undefined || mistake === 'anything', `accepted with ${where}`);
        checkManifest(m as Record<string, unknown>, parsed);
      },
    );
    await checkProperty('manifest objects', property, 3000);
  });

  test('readManifest: any file content is a manifest or INVALID_MANIFEST in one line', async () => {
    let n = 0;
    const property = fc.asyncProperty(
      fc.oneof(
        goodManifest.map((m) => JSON.stringify(m)),
        goodManifest.map((m) => `\ufeff${JSON.stringify(m)}`),
        fc.tuple(goodManifest, fc.nat()).map(([m, cut]) => {
          const text = JSON.stringify(m, null, 2);
          return text.slice(0, cut % text.length);
        }),
        hostileText(),
        fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
        fc.constantFrom(
          '',
          '\n',
          'null',
          '[]',
          '"x"',
          '{',
          '{"a":',
          '\u0000',
          `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
          `{"captureDate":"2024-01-01","assets":{"Vert":"a\\u0000b"}}`,
        ),
      ),
      async (text) => {
        const path = join(dir.path, `manifest-${n++}.json`);
        await writeFile(path, text, text.startsWith('\ufeff') ? 'utf8' : 'latin1');
        try {
          await readManifest(path);
        } catch (error) {
          checkRefusal(error, ['INVALID_MANIFEST'], JSON.stringify(text.slice(0, 200)));
        }
      },
    );
    await checkProperty('manifest files', property, 300);
  });

  test('ingest of sources that are not what the manifest says: INVALID_SOURCE in one line, nothing written', async () => {
    const names = Object.keys(sources);
    const property = fc.asyncProperty(
      fc.record({
        bad: fc.constantFrom(...names),
        type: fc.constantFrom(...CONTENT_TYPES),
        good: goodManifest,
      }),
      async ({ bad, type, good }) => {
        const manifest = parseManifest({ ...good, assets: { [type]: sources[bad] } }, dir.path);
        try {
          await services.ingestor.ingest(manifest);
          assert.fail(`ingested ${bad} as ${type}`);
        } catch (error) {
          checkRefusal(error, ['INVALID_SOURCE'], `${bad} as ${type}`);
        }
        assert.equal(await services.catalogue.count(), 0, 'a survey became visible');
        const stored = await readdir(join(env.NADIR_DATA_DIR as string, 'surveys')).catch(() => []);
        assert.deepEqual(stored, [], 'files were left behind');
      },
    );
    await checkProperty('ingest sources', property, 25);
  });

  test('runs', () => {
    const seen = [...outcomes.entries()].sort().map(([k, n]) => `${k}: ${n}`);
    process.stdout.write(`# CLI properties: seed ${FC_SEED}, ${runs} in-process runs of nadir\n# ${seen.join(', ')}\n`);
    assert.ok(runs >= scaledRuns(1000), `${runs} runs`);
  });
});
