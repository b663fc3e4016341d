/** The `nadir` command as a user runs it: help, exit codes, one-line errors, --json output. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { cliArgs, PROJECT_ROOT, REALDATA, SKIP_REALDATA, tempDir, writeManifest } from '../support/fixtures.js';
import { freePort } from '../support/servers.js';

const exec = promisify(execFile);

/** Every folder under `dir` with nothing in it, relative to `dir`. */
async function emptyFolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => join(entry.parentPath, entry.name));
  const empty = [];
  for (const folder of folders) if ((await readdir(folder)).length === 0) empty.push(relative(dir, folder));
  return empty.sort();
}

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function nadir(env: Record<string, string>, ...args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await exec(process.execPath, cliArgs(...args), {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('nadir CLI', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    dir = await tempDir('cli');
    env = { NADIR_DATA_DIR: join(dir.path, 'data') };
  });
  after(() => dir.remove());

  test('without a command it prints the overview and exits 2', async () => {
    const r = await nadir(env);
    assert.equal(r.code, 2);
    for (const name of ['serve', 'ingest', 'demo', 'surveys']) assert.match(r.stdout, new RegExp(`\\n  ${name} `));
  });

  for (const name of ['serve', 'ingest', 'demo', 'surveys']) {
    test(`nadir ${name} --help prints its usage and exits 0`, async () => {
      const r = await nadir(env, name, '--help');
      assert.equal(r.code, 0);
      assert.match(r.stdout, new RegExp(`Usage: nadir ${name}`));
    });
  }

  test('an accounts or surveys command opens the database only: Redis and a bucket it cannot reach stop serve, not them', async () => {
    const unreachable = {
      ...env,
      NADIR_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      NADIR_REDIS_TIMEOUT_MS: '500',
      NADIR_STORAGE: 's3://nadir-nowhere/surveys',
      NADIR_S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
      NADIR_STORAGE_TIMEOUT_MS: '500',
      AWS_ACCESS_KEY_ID: 'nadir',
      AWS_SECRET_ACCESS_KEY: 'nadir-secret',
    };
    const created = await nadir(unreachable, 'accounts', 'create', '--name', 'parts-only', '--json');
    assert.equal(created.code, 0, created.stderr);
    const listed = await nadir(unreachable, 'accounts', 'list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(
      (JSON.parse(listed.stdout) as { accounts: { name: string }[] }).accounts.some(
        (account) => account.name === 'parts-only',
      ),
    );
    const surveys = await nadir(unreachable, 'surveys', 'list', '--json');
    assert.equal(surveys.code, 0, surveys.stderr);
    // What does use the survey files still fails loudly at start, naming them.
    const gc = await nadir(unreachable, 'storage', 'gc', '--dry-run');
    assert.equal(gc.code, 1);
    assert.match(gc.stderr, /nadir-nowhere|storage|S3/i);
  });

  test('an unknown command exits 2 with one line', async () => {
    const r = await nadir(env, 'frobnicate');
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, /unknown command "frobnicate"/);
  });

  test('an unknown option exits 2 naming it', async () => {
    const r = await nadir(env, 'ingest', '--colour', 'x.json');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--colour/);
  });

  test('a bad configuration names the variable and exits 1', async () => {
    const r = await nadir({ ...env, NADIR_PORT: 'eighty' }, 'surveys', 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /NADIR_PORT/);
  });

  test('a failed ingest exits 1 with a one-line message', async () => {
    const manifest = await writeManifest(dir.path, 'missing', {
      captureDate: '2024-01-01',
      assets: { Vert: 'gone.tif' },
    });
    const r = await nadir(env, 'ingest', manifest);
    assert.equal(r.code, 1);
    // Progress lines may come first; the error itself is the last line and only one line.
    const lines = r.stderr.trim().split('\n');
    assert.match(lines.at(-1) ?? '', /^nadir ingest: .*gone\.tif: file not found$/);
    assert.equal(lines.filter((line) => line.startsWith('nadir ')).length, 1);
  });

  test('ingest --workers: a glob on worker processes; a count that is not one exits 2', {
    skip: SKIP_REALDATA,
  }, async () => {
    // A data folder of its own: the deleted survey's files wait out their grace period there.
    const own = { ...env, NADIR_DATA_DIR: join(dir.path, 'workers-data') };
    const bad = await nadir(own, 'ingest', 'x.json', '--workers', 'lots');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--workers must be a whole number/);
    const manifest = await writeManifest(dir.path, 'glob', {
      id: '6b1c0000-0000-4000-8000-000000000001',
      captureDate: '2020-06-01',
      assets: { TrueOrtho: join(REALDATA, 'webodm/ortho*.tif') },
    });
    const none = await writeManifest(dir.path, 'glob-none', {
      captureDate: '2020-06-01',
      assets: { TrueOrtho: join(REALDATA, 'webodm/nothing-*.tif') },
    });
    const missing = await nadir(own, 'ingest', none, '--workers', '2');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr.trim().split('\n').at(-1) ?? '', /nothing-\*\.tif" matches no file$/);
    const r = await nadir(own, 'ingest', manifest, '--workers', '2', '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { version: number }).version, 1);
  });

  test('ingest --json and surveys list/show/delete', { skip: SKIP_REALDATA }, async () => {
    const manifest = await writeManifest(dir.path, 'duluth', {
      captureDate: '2020-06-01',
      tags: ['disaster:flood'],
      assets: { TrueOrtho: join(REALDATA, 'webodm/orthophoto.tif') },
    });
    const ingested = await nadir(env, 'ingest', manifest, '--json');
    assert.equal(ingested.code, 0, ingested.stderr);
    const survey = JSON.parse(ingested.stdout) as {
      id: string;
      version: number;
      assets: Record<string, { gsd: number }>;
    };
    assert.equal(survey.version, 1);
    assert.ok(Math.abs((survey.assets.TrueOrtho?.gsd ?? 0) - 0.5) < 0.01);

    const list = JSON.parse((await nadir(env, 'surveys', 'list', '--json')).stdout) as {
      total: number;
      surveys: { id: string }[];
    };
    assert.equal(list.total, 1);
    assert.equal(list.surveys[0]?.id, survey.id);

    const shown = JSON.parse((await nadir(env, 'surveys', 'show', survey.id, '--json')).stdout) as { tags: string[] };
    assert.deepEqual(shown.tags, ['disaster:flood']);
    // Without --json, text for people: the issue saw JSON either way.
    const text = (await nadir(env, 'surveys', 'show', survey.id)).stdout;
    assert.throws(() => JSON.parse(text));
    assert.match(text, new RegExp(`^survey +${survey.id} +version 1\n`));
    assert.match(text, /^tags +disaster:flood$/m);
    assert.match(text, /^ +TrueOrtho +0\.5\d\d m\/px +zoom \d+-\d+ +\d+ x \d+ px$/m);

    // What an ingest killed between making its version folder and moving a file in leaves.
    await mkdir(join(env.NADIR_DATA_DIR as string, 'surveys', survey.id, 'v7'));
    assert.equal((await nadir(env, 'surveys', 'delete', survey.id)).code, 0);
    const missing = await nadir(env, 'surveys', 'show', survey.id);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no survey/);

    // The deleted survey's file waits out the grace period, then goes with its folders.
    type Collected = { deleted: string[]; waiting: string[] };
    const file = `surveys/${survey.id}/v1/TrueOrtho.tif`;
    const kept = JSON.parse((await nadir(env, 'storage', 'gc', '--json')).stdout) as Collected;
    assert.deepEqual([kept.deleted, kept.waiting], [[], [file]]);
    const dry = JSON.parse(
      (await nadir(env, 'storage', 'gc', '--grace', '0', '--dry-run', '--json')).stdout,
    ) as Collected;
    assert.deepEqual(dry.deleted, [file]);
    assert.ok(existsSync(join(env.NADIR_DATA_DIR as string, file)), 'a dry run deletes nothing');
    const collected = JSON.parse((await nadir(env, 'storage', 'gc', '--grace', '0', '--json')).stdout) as Collected;
    assert.deepEqual(collected.deleted, [file]);
    assert.deepEqual(await readdir(join(env.NADIR_DATA_DIR as string, 'surveys')), [], 'no empty folder left');
    // Nothing else either: only the folders of survey files and of ingest's staging stay.
    assert.deepEqual(await emptyFolders(env.NADIR_DATA_DIR as string), ['staging', 'surveys']);
    assert.equal((await nadir(env, 'storage', 'gc', '--grace', 'soon')).code, 2);
  });
});
