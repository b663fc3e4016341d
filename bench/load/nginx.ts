/**
 * A private nginx: its own config, pid file, logs and temp paths in a scratch directory, listening
 * on loopback only, in the foreground (`daemon off`) so it is our child and stops with us. Nothing
 * under /etc/nginx or /run is read or written, so a system nginx is never touched.
 *
 * `startTileNginx` serves pre-cut tiles: the floor a dynamic tile server is compared with (no
 * rendering at all, just files from the page cache through sendfile).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, removeScratch, type Service, scratchDir, startGroup, stopGroup, waitForHttp } from './processes.js';

export interface NginxOptions {
  /** The `server { }` body after `listen`: locations, root, etc. */
  server: string;
  /** Extra `http { }` directives (upstreams, ...). */
  http?: string;
  port?: number;
  /** nginx worker processes (default 2: one per core on the bench machine). */
  workers?: number;
  /** Scratch directory for config, pid and logs (default: a new temp dir, removed on stop). */
  dir?: string;
}

export interface Nginx extends Service {
  url: string;
  dir: string;
}

export async function startNginx(options: NginxOptions): Promise<Nginx> {
  const dir = options.dir ?? (await scratchDir('nginx'));
  const port = options.port ?? (await freePort());
  const conf = join(dir, 'nginx.conf');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `${k}_temp_path ${dir}/${k};`);
  // As root, nginx would run its workers as nobody, who cannot read a private temp dir or socket: they
  // run as the benchmark's user instead (a non-root nginx ignores `user`).
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  await writeFile(
    conf,
    `daemon off;
${user}
worker_processes ${options.workers ?? 2};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  types { image/jpeg jpg jpeg; image/png png; image/webp webp; application/json json; }
  default_type application/octet-stream;
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 75s;
  # Default 1000: wrk would then reconnect every 1000 requests, which nadir's server never asks for.
  keepalive_requests 1000000;
  ${temp.join('\n  ')}
  ${options.http ?? ''}
  server {
    listen 127.0.0.1:${port};
    ${options.server}
  }
}
`,
  );
  // -e: the error log before the config is read (otherwise the compiled-in /var/log/nginx path).
  const started = startGroup('nginx', ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], join(dir, 'stdout.log'));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/`, started, 10_000);
  } catch (error) {
    await stopGroup(started.child);
    throw new Error(`${error}\n${await readFile(join(dir, 'error.log'), 'utf8').catch(() => '')}`);
  }
  let stopped = false;
  return {
    url,
    dir,
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopGroup(started.child);
      if (!options.dir) await removeScratch(dir);
    },
  };
}

/** Serves `<root>/{z}/{x}/{y}.jpg` (or .png) at `<url>/{z}/{x}/{y}.jpg`. */
export async function startTileNginx(options: {
  root: string;
  port?: number;
  workers?: number;
}): Promise<Nginx & { tileUrl(z: number, x: number, y: number, ext?: string): string }> {
  const nginx = await startNginx({
    ...options,
    // open_file_cache: what a tuned static tile server uses; it spares an open() per request.
    server: `root ${options.root};
    open_file_cache max=100000 inactive=60s;
    open_file_cache_valid 60s;
    location / { try_files $uri =404; }`,
  });
  return { ...nginx, tileUrl: (z, x, y, ext = 'jpg') => `${nginx.url}/${z}/${x}/${y}.${ext}` };
}
