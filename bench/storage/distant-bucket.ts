/**
 * An HTTP proxy in front of the S3 server that makes it a bucket farther away than loopback, for
 * measuring by hand (NADIR_BENCH_BUCKET_DELAY_MS, NADIR_BENCH_BUCKET_MBPS: bench/storage/run.ts).
 * Headers go through unchanged, Host included, so S3 request signatures made for the proxy's
 * address still verify at the server behind it. What nadir fetched is counted by the S3 server's
 * own process (test/support/s3rver-process.mjs), not here.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DistantBucket {
  url: string;
  stop(): Promise<void>;
}

/** How far: each answer starts `delayMs` late and its body comes at `bytesPerMs` at most (0: as fast as it can). */
export interface BucketDistance {
  delayMs: number;
  bytesPerMs: number;
}

/** Answers paced as `distance` says: the head after the delay, then each chunk when its bytes are due. */
function paced(answer: IncomingMessage, outgoing: ServerResponse, distance: BucketDistance) {
  const began = performance.now() + distance.delayMs;
  let due = 0;
  let queue = new Promise<void>((resolve) =>
    setTimeout(() => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      resolve();
    }, distance.delayMs),
  );
  const at = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms - performance.now())));
  answer.on('data', (chunk: Buffer) => {
    due += chunk.length;
    const when = began + (distance.bytesPerMs > 0 ? due / distance.bytesPerMs : 0);
    queue = queue.then(() => at(when)).then(() => void outgoing.write(chunk));
  });
  answer.on('end', () => {
    queue = queue.then(() => void outgoing.end());
  });
}

export async function startDistantBucket(target: string, distance: BucketDistance): Promise<DistantBucket> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((incoming, outgoing) => {
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
        agent,
      },
      (answer) => paced(answer, outgoing, distance),
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
