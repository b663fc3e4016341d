/**
 * nadir's own CPU per MiB read from object storage through its block cache, in one process with
 * no server around it: a 64 MiB object on s3rver (its own process, not counted) read front to
 * back as a sweep over a COG reads it (four 30 kB tiles in each 64 KiB), through RangeReader and
 * BlockCache as S3Storage builds them. Two clients fetch the blocks, in turns, so the two share the
 * VM's moods: nadir's S3RangeGet (socket-get-pool.ts: one reused read buffer) and, as the
 * reference, node:http's client on a keep-alive agent, its chunks written into the same blocks (the
 * cache's slots) as they arrive (how S3RangeGet sent its GETs before).
 *   node --import tsx bench/storage/block-reads.ts [rounds]
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlockCache } from '../../src/storage/block-cache.js';
import { type RangePartsFetch, RangeReader, type RangeStatistics } from '../../src/storage/range-reader.js';
import { objectPath, S3RangeGet, signRangeGet } from '../../src/storage/s3-range-get.js';
import { startS3 } from '../../test/support/servers.js';

const rounds = Number(process.argv[2] ?? 6);
const SIZE = 64 * 1024 * 1024;
const TILE = 30_000;
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const s3 = await startS3('bench');
const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials });
try {
  await client.send(new PutObjectCommand({ Bucket: 'bench', Key: 'f', Body: randomBytes(SIZE) }));
  const get = new S3RangeGet({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    credentials: async () => credentials,
    timeoutMs: 10_000,
    maxConnections: 64,
    now: () => new Date(),
  });
  const origin = new URL(s3.endpoint);
  const agent = new Agent({ keepAlive: true });
  /** The reference: node:http's client, each chunk copied into its block as it arrives. */
  const nodeHttpParts: RangePartsFetch = (offset, length, partBytes, _arrived, allocate = Buffer.allocUnsafeSlow) =>
    new Promise((resolve, reject) => {
      const path = objectPath('bench', 'f');
      const range = `bytes=${offset}-${offset + length - 1}`;
      const { headers } = signRangeGet(
        { host: origin.host, path, range, region: 'us-east-1', now: new Date() },
        credentials,
      );
      const outgoing = request({ hostname: origin.hostname, port: origin.port, path, headers, agent }, (response) => {
        const parts: Buffer[] = [];
        let part: Buffer | undefined;
        let filled = 0;
        response.on('data', (chunk: Buffer) => {
          for (let at = 0; at < chunk.length; ) {
            if (!part || filled === part.length) {
              part = allocate(Math.min(partBytes, length - parts.length * partBytes));
              parts.push(part);
              filled = 0;
            }
            const copied = chunk.copy(part, filled, at);
            filled += copied;
            at += copied;
          }
        });
        response.on('error', reject);
        response.on('end', () =>
          response.statusCode === 206 ? resolve(parts) : reject(new Error(`HTTP ${response.statusCode}`)),
        );
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  const contenders: Record<string, RangePartsFetch> = {
    nadir: (offset, length, partBytes, arrived, allocate) =>
      get.getParts('bench', 'f', offset, length, partBytes, arrived, allocate),
    'node:http': nodeHttpParts,
  };
  const sweep = async (name: string) => {
    const statistics: RangeStatistics = { requests: 0, bytes: 0 };
    const reader = new RangeReader(
      new URL('s3://bench/f'),
      (offset, length) => get.get('bench', 'f', offset, length),
      statistics,
      new BlockCache(64 * 1024 * 1024),
      contenders[name],
    );
    const into = Buffer.alloc(TILE);
    const before = process.cpuUsage();
    for (let offset = 0; offset + 4 * 16 * 1024 + TILE < SIZE; offset += 64 * 1024) {
      await Promise.all([0, 1, 2, 3].map((i) => reader.fetchInto(offset + i * 16 * 1024, into)));
    }
    const spent = process.cpuUsage(before);
    return { ms: (spent.user + spent.system) / 1000, mib: statistics.bytes / 2 ** 20, requests: statistics.requests };
  };
  const figures: Record<string, number[]> = { nadir: [], 'node:http': [] };
  // Warm-up: code compiled, connections open.
  await sweep('nadir');
  await sweep('node:http');
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? ['node:http', 'nadir'] : ['nadir', 'node:http']) {
      const { ms, mib, requests } = await sweep(name);
      figures[name]?.push(ms / mib);
      process.stdout.write(
        `round ${round + 1} ${name}: ${requests} requests, ${mib.toFixed(0)} MiB, ${(ms / mib).toFixed(2)} CPU ms a MiB\n`,
      );
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  const [ours, reference] = [median(figures.nadir ?? []), median(figures['node:http'] ?? [])];
  process.stdout.write(
    `median CPU ms a MiB: nadir ${ours.toFixed(2)}, node:http ${reference.toFixed(2)} (${(ours / reference).toFixed(2)}x)\n`,
  );
  get.close();
  agent.destroy();
} finally {
  client.destroy();
  await s3.stop();
}
