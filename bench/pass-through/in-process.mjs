// What a remembered pass-through answer costs nadir's own code, without the kernel, the loopback or
// wrk: nadir's node:http request handler (the tile lane and all before it, from the build in dist/)
// called in one process for the benchmark's 200 stored tiles, each request with a fresh URL string
// as node's parser hands over and a new response (an event emitter, 'finish' emitted once it is
// ended), writeHead's and end's own work left out. Over HTTP this VM moves CPU per answer
// by 10-20% between runs; this figure moves by about 3%, so a change of a tenth of a microsecond
// shows. Runs on the tile benchmark's data (bench/work/tiles, made by `npm run bench`); reads it,
// and counts the tiles it answers as the server would (usage written at the end).
// Usage: npm run build && node bench/pass-through/in-process.mjs [requests a round]
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildServer } from '../../dist/api/server.js';
import { createServices } from '../../dist/composition.js';
import { parseConfig } from '../../dist/config/config.js';

const WORK = join(import.meta.dirname, '../work/tiles');
const ROUNDS = 7;
const state = join(WORK, 'state.json');
const precut = join(WORK, 'pass-through-precut');
if (!existsSync(state) || !existsSync(precut)) {
  throw new Error(`no tile benchmark data in ${WORK}: run \`node --import tsx bench/run.ts --only pass-through\` once`);
}
const { dataDir, apiKey } = JSON.parse(readFileSync(state, 'utf8'));
const env = { NADIR_DATA_DIR: dataDir, NADIR_LOG_LEVEL: 'warn', NADIR_TILE_CACHE_MB: '256' };
const services = await createServices(parseConfig(env, dataDir), () => new Date());
const app = await buildServer(services);
try {
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const urls = [];
  for (const z of readdirSync(precut))
    for (const x of readdirSync(join(precut, z)))
      for (const file of readdirSync(join(precut, z, x)))
        urls.push(`/tiles/v3/Vert/${z}/${x}/${file}?apikey=${apiKey}`);
  // Over HTTP first, three times each: the third answer must be a remembered pass-through.
  for (const url of urls) {
    for (let i = 0; i < 3; i++) {
      const answer = await fetch(base + url);
      await answer.arrayBuffer();
      if (i === 2 && !/\bpassthrough;dur=0\b/.test(answer.headers.get('server-timing') ?? ''))
        throw new Error(`${url} is not a pass-through tile`);
    }
  }
  const handler = app.server.listeners('request')[0];
  const socket = {
    destroyed: false,
    bytesRead: 0,
    remoteAddress: '127.0.0.1',
    on() {},
    once() {},
    removeListener() {},
  };
  const statuses = new Map();
  const request = { method: 'GET', url: '', httpVersion: '1.1', rawHeaders: ['Host', '127.0.0.1'], socket, on() {} };
  /** A response as the handler meets it: a new event emitter a request, 'finish' emitted once ended. */
  class Response extends EventEmitter {
    socket = socket;
    req = request;
    headersSent = false;
    statusCode = 200;
    writeHead(status) {
      this.statusCode = status;
      this.headersSent = true;
      return this;
    }
    end() {
      statuses.set(this.statusCode, (statuses.get(this.statusCode) ?? 0) + 1);
      this.emit('finish');
    }
    destroy() {}
  }
  const bytes = urls.map((url) => Buffer.from(url));
  const perRequest = Number(process.argv[2] ?? 200_000);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < perRequest; i++) {
      request.url = bytes[i % bytes.length].latin1Slice();
      handler(request, new Response());
    }
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / perRequest);
    // A turn of the event loop between rounds, as between a server's reads.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (statuses.size !== 1 || !statuses.has(200)) throw new Error(`statuses ${JSON.stringify([...statuses])}`);
  rounds.sort((a, b) => a - b);
  const median = rounds[Math.floor(ROUNDS / 2)];
  console.log(
    `${urls.length} stored tiles, ${ROUNDS} rounds of ${perRequest} requests: ${median.toFixed(3)} CPU us a request (median; ${rounds[0].toFixed(3)}-${rounds[ROUNDS - 1].toFixed(3)})`,
  );
} finally {
  await app.close();
  await services.close();
}
