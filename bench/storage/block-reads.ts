/**
 * nadir's own CPU per MiB read from object storage through its block cache, in one process with
 * no server around it: a 64 MiB object on s3rver (its own process, not counted) read front to
 * back as a sweep over a COG reads it (four 30 kB tiles in each 64 KiB), through RangeReader,
 * BlockCache and S3RangeGet as S3Storage builds them. Blocks arrive whole (one buffer for each
 * GET, cut and copied into blocks) or in parts (written into their blocks as they arrive), in
 * turns, so the two share the VM's moods.
 *   node --import tsx bench/storage/block-reads.ts [rounds]
 */
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlockCache } from '../../src/storage/block-cache.js';
import { RangeReader, type RangeStatistics } from '../../src/storage/range-reader.js';
import { S3RangeGet } from '../../src/storage/s3-range-get.js';
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
    agent: new Agent({ keepAlive: true }),
    now: () => new Date(),
  });
  const sweep = async (inParts: boolean) => {
    const statistics: RangeStatistics = { requests: 0, bytes: 0 };
    const reader = new RangeReader(
      new URL('s3://bench/f'),
      (offset, length) => get.get('bench', 'f', offset, length),
      statistics,
      new BlockCache(64 * 1024 * 1024),
      inParts ? (offset, length, partBytes) => get.getParts('bench', 'f', offset, length, partBytes) : undefined,
    );
    const into = Buffer.alloc(TILE);
    const before = process.cpuUsage();
    for (let offset = 0; offset + 4 * 16 * 1024 + TILE < SIZE; offset += 64 * 1024) {
      await Promise.all([0, 1, 2, 3].map((i) => reader.fetchInto(offset + i * 16 * 1024, into)));
    }
    const spent = process.cpuUsage(before);
    return { ms: (spent.user + spent.system) / 1000, mib: statistics.bytes / 2 ** 20, requests: statistics.requests };
  };
  const figures: Record<string, number[]> = { whole: [], parts: [] };
  await sweep(false); // warm-up: code compiled, connections open
  for (let round = 0; round < rounds; round++) {
    for (const inParts of round % 2 ? [true, false] : [false, true]) {
      const { ms, mib, requests } = await sweep(inParts);
      const name = inParts ? 'parts' : 'whole';
      figures[name]?.push(ms / mib);
      process.stdout.write(
        `round ${round + 1} ${name}: ${requests} requests, ${mib.toFixed(0)} MiB, ${(ms / mib).toFixed(2)} CPU ms a MiB\n`,
      );
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  const [whole, parts] = [median(figures.whole ?? []), median(figures.parts ?? [])];
  process.stdout.write(
    `median CPU ms a MiB: whole ${whole.toFixed(2)}, parts ${parts.toFixed(2)} (${(parts / whole).toFixed(2)}x)\n`,
  );
} finally {
  client.destroy();
  await s3.stop();
}
