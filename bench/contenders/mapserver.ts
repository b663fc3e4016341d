/**
 * MapServer 8 (Debian's mapserv) answering WMS GetMap for map tiles of a COG, as it is usually
 * deployed for speed: long-lived FastCGI processes behind nginx, never CGI (a process per request).
 *
 * Each mapserv is started by `spawn-fcgi -n` (which binds a Unix socket and then becomes mapserv,
 * so it stays our child) on its own socket; nginx spreads requests over them with `least_conn`, so
 * a request goes to an idle process when there is one, as with one socket shared by N processes.
 * The dataset stays open between requests (CLOSE_CONNECTION=DEFER in the mapfile).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tileBounds } from '../../src/geo/web-mercator.js';
import { type Nginx, startNginx } from '../load/nginx.js';
import { removeScratch, type Service, type Started, scratchDir, startGroup, stopGroup } from '../load/processes.js';

const run = promisify(execFile);

export interface MapServerOptions {
  cogPath: string;
  port?: number;
  /** mapserv FastCGI processes (default 2, one per core). */
  processes?: number;
  /** JPEG quality (default 85, nadir's tiles). */
  quality?: number;
  /** GDAL_CACHEMAX per mapserv process, MB (default: GDAL's own, 5% of RAM). */
  gdalCacheMb?: number;
  /**
   * MapServer's PROCESSING "RESAMPLE": unset by default, so MapServer reads through GDAL RasterIO, which
   * picks the COG's overview and gives the same pixels as the others on grid-aligned tiles.
   * 'BILINEAR' sends every tile through MapServer's own resampler: different pixels below the COG's
   * full-resolution zoom, and measured 3.5 x slower there.
   */
  resample?: 'BILINEAR' | 'AVERAGE' | 'NEAREST';
  /** nginx workers in front (default 1: it only relays, and the cores are for mapserv). */
  nginxWorkers?: number;
  /**
   * COGs for `mosaicUrl`, newest first: layers of one group, drawn oldest first so that each newer
   * one covers the older where its mask says it has data.
   */
  mosaic?: string[];
}

export interface MapServer extends Service {
  url: string;
  /** A WMS 1.3.0 GetMap URL for the tile's EPSG:3857 bounds, 256 x 256 JPEG. */
  tileUrl(z: number, x: number, y: number): string;
  /** The same for the group of `options.mosaic` layers, JPEG or PNG (transparent where none has data). */
  mosaicUrl(z: number, x: number, y: number, format: 'jpg' | 'png'): string;
}

function mosaicLayers(cogs: string[]): string {
  return [...cogs]
    .reverse()
    .map(
      (cog, i) => `  LAYER
    NAME "mosaic-${i}"
    GROUP "mosaic"
    TYPE RASTER
    STATUS ON
    DATA "${cog}"
    PROJECTION
      "init=epsg:3857"
    END
    PROCESSING "CLOSE_CONNECTION=DEFER"
  END`,
    )
    .join('\n');
}

async function cogExtent(cogPath: string): Promise<string> {
  const { stdout } = await run('gdalinfo', ['-json', cogPath]);
  const corners = (JSON.parse(stdout) as { cornerCoordinates: Record<string, [number, number]> }).cornerCoordinates;
  const [minX, minY] = corners.lowerLeft ?? [0, 0];
  const [maxX, maxY] = corners.upperRight ?? [0, 0];
  return `${minX} ${minY} ${maxX} ${maxY}`;
}

async function waitForSocket(path: string, started: Started): Promise<void> {
  for (let i = 0; i < 100 && !existsSync(path); i++) {
    if (started.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!existsSync(path)) throw new Error(`spawn-fcgi did not create ${path}:\n${started.tail()}`);
}

function getMap(url: string, layers: string, z: number, x: number, y: number, format: 'jpg' | 'png'): string {
  const b = tileBounds({ z, x, y });
  const query = `SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=${layers}&STYLES=&CRS=EPSG:3857`;
  const image = format === 'jpg' ? 'FORMAT=image/jpeg' : 'FORMAT=image/png&TRANSPARENT=TRUE';
  return `${url}/wms?${query}&BBOX=${b.minX},${b.minY},${b.maxX},${b.maxY}&WIDTH=256&HEIGHT=256&${image}`;
}

export async function startMapServer(options: MapServerOptions): Promise<MapServer> {
  const dir = await scratchDir('mapserver');
  const mapfile = join(dir, 'tiles.map');
  const template = await readFile(join(import.meta.dirname, 'mapserver.map.tmpl'), 'utf8');
  await writeFile(
    mapfile,
    template
      .replaceAll('{{COG}}', options.cogPath)
      .replaceAll('{{EXTENT}}', await cogExtent(options.cogPath))
      .replaceAll('{{QUALITY}}', `${options.quality ?? 85}`)
      .replaceAll('{{RESAMPLE}}', options.resample ? `    PROCESSING "RESAMPLE=${options.resample}"` : '')
      .replaceAll('{{MOSAIC}}', mosaicLayers(options.mosaic ?? [])),
  );
  // MapServer 8 only serves mapfiles its config names; MS_MAPFILE makes this one the default.
  const config = join(dir, 'mapserver.conf');
  await writeFile(config, `CONFIG\n  ENV\n    MS_MAPFILE "${mapfile}"\n  END\nEND\n`);
  const env: NodeJS.ProcessEnv = { MAPSERVER_CONFIG_FILE: config };
  if (options.gdalCacheMb !== undefined) env.GDAL_CACHEMAX = `${options.gdalCacheMb}`;

  const processes: Started[] = [];
  let nginx: Nginx | undefined;
  const stop = async () => {
    await nginx?.stop();
    // mapserv 8 takes SIGTERM as "exit after the next request"; it has nothing to flush, so no long wait.
    await Promise.all(processes.map((p) => stopGroup(p.child, 300)));
    await removeScratch(dir);
  };
  try {
    const sockets: string[] = [];
    for (let i = 0; i < (options.processes ?? 2); i++) {
      const socket = join(dir, `mapserv-${i}.sock`);
      const args = ['-n', '-s', socket, '-M', '0600', '--', '/usr/bin/mapserv'];
      const started = startGroup('spawn-fcgi', args, join(dir, `mapserv-${i}.log`), env);
      processes.push(started);
      await waitForSocket(socket, started);
      sockets.push(socket);
    }
    nginx = await startNginx({
      port: options.port,
      workers: options.nginxWorkers ?? 1,
      dir,
      http: `upstream mapserv {
    least_conn;
    ${sockets.map((s) => `server unix:${s};`).join('\n    ')}
  }`,
      server: `location /wms {
      fastcgi_pass mapserv;
      fastcgi_param QUERY_STRING $query_string;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_TYPE $content_type;
      fastcgi_param CONTENT_LENGTH $content_length;
      fastcgi_param SCRIPT_NAME $fastcgi_script_name;
      fastcgi_param REQUEST_URI $request_uri;
      fastcgi_param SERVER_PROTOCOL $server_protocol;
      fastcgi_param SERVER_NAME $server_name;
      fastcgi_param SERVER_PORT $server_port;
      fastcgi_param REMOTE_ADDR $remote_addr;
    }`,
    });
    const url = nginx.url;
    const capabilities = await fetch(`${url}/wms?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities`);
    const body = await capabilities.text();
    if (capabilities.status !== 200 || !body.includes('WMS_Capabilities')) {
      throw new Error(`MapServer GetCapabilities answered ${capabilities.status}: ${body.slice(0, 500)}`);
    }
    return {
      url,
      stop,
      tileUrl: (z, x, y) => getMap(url, 'imagery', z, x, y, 'jpg'),
      mosaicUrl: (z, x, y, format) => getMap(url, 'mosaic', z, x, y, format),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
