/**
 * deploy/nginx/nadir.conf as shipped, with the ports of this machine's nginx and servers in place
 * of the file's: what the two-server test and the scale benchmark (bench/scale/) run.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from './fixtures.js';

export async function deploySite(listen: number, servers: number[]): Promise<string> {
  const site = await readFile(join(PROJECT_ROOT, 'deploy/nginx/nadir.conf'), 'utf8');
  const upstreams = servers.map((port) => `    server 127.0.0.1:${port} max_fails=1 fail_timeout=5s;`).join('\n');
  const rendered = site
    .replace(/^ {4}server 127\.0\.0\.1:\d+ .*\n(?: {4}server 127\.0\.0\.1:\d+ .*\n)*/m, `${upstreams}\n`)
    .replace(/listen \d+;/, `listen 127.0.0.1:${listen};`);
  // A changed deploy file would otherwise be run with its own ports, untested.
  if (rendered === site) throw new Error('deploy/nginx/nadir.conf lacks the upstream and listen lines replaced here');
  return rendered;
}
