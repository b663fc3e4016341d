/**
 * A throwaway Prometheus (Debian's `prometheus` package, which scripts/test.sh installs) running
 * deploy/prometheus/prometheus.yml and alerts.yml as shipped, with this machine's scrape targets
 * in place of the file's and a one-second scrape, in a temporary folder on a free loopback port.
 * Never the package's own service. Queried through its HTTP API, as Grafana would.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClockEnvironment } from './clock.js';
import { PROJECT_ROOT } from './fixtures.js';
import { freePort } from './servers.js';

export const SKIP_PROMETHEUS = existsSync('/usr/bin/prometheus')
  ? false
  : 'prometheus is not installed (scripts/test.sh installs it)';

export const PROMETHEUS_DEPLOY = join(PROJECT_ROOT, 'deploy/prometheus');

/** One series of an instant query's answer. */
export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusServer {
  url: string;
  /** An instant query (PromQL) at the latest samples. */
  query(expression: string): Promise<Sample[]>;
  /** The rule groups Prometheus loaded (its /api/v1/rules answer). */
  rules(): Promise<{ name: string; health: string }[]>;
  stop(): Promise<void>;
}

/**
 * prometheus.yml as shipped, each job's targets replaced by this machine's (`targets` by job name,
 * host:port), scraping and evaluating every second.
 */
export async function deployedPrometheusConfig(targets: Record<string, string[]>): Promise<string> {
  const shipped = await readFile(join(PROMETHEUS_DEPLOY, 'prometheus.yml'), 'utf8');
  const jobs = new Set<string>();
  const rendered = shipped
    .replace(/(- job_name: (\S+)\n(?:.*\n)*? {6}- targets:\n)((?: {10}- \S+:\d+\n)+)/g, (_, head, job) => {
      jobs.add(job);
      return `${head}${(targets[job] ?? []).map((target) => `          - ${target}\n`).join('')}`;
    })
    .replace(/scrape_interval: \S+/, 'scrape_interval: 1s')
    .replace(/evaluation_interval: \S+/, 'evaluation_interval: 1s');
  // A changed deploy file would otherwise be run with its own targets, untested.
  if (Object.keys(targets).some((job) => !jobs.has(job)) || !rendered.includes('scrape_interval: 1s')) {
    throw new Error(`deploy/prometheus/prometheus.yml lacks the jobs or intervals replaced here (has ${[...jobs]})`);
  }
  return rendered;
}

export async function startPrometheus(config: string): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nadir-prometheus-'));
  await writeFile(join(dir, 'prometheus.yml'), config);
  await copyFile(join(PROMETHEUS_DEPLOY, 'alerts.yml'), join(dir, 'alerts.yml'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    '/usr/bin/prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: realClockEnvironment() },
  );
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
    await rm(dir, { recursive: true, force: true });
  };
  process.once('exit', () => child.kill('SIGKILL'));
  const deadline = performance.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${output}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready in 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    async query(expression) {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `/api/v1/query?query=${encodeURIComponent(expression)}`,
      );
      return data.result.map(({ metric, value }) => ({ metric, value: Number(value[1]) }));
    },
    async rules() {
      const data = await api<{ groups: { rules: { name: string; health: string }[] }[] }>('/api/v1/rules');
      return data.groups.flatMap((group) => group.rules);
    },
    stop,
  };
}
