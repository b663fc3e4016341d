/**
 * An HTTP proxy in front of the S3 server that counts what nadir fetches from storage: requests and
 * response body bytes. Headers go through unchanged, Host included, so S3 request signatures made
 * for the proxy's address still verify at the server behind it.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StorageCounts {
  requests: number;
  bytes: number;
}

export interface CountingProxy {
  url: string;
  /** Totals since the proxy started; subtract two readings for one measurement. */
  counts(): StorageCounts;
  stop(): Promise<void>;
}

/**
 * A bucket farther away than loopback, for measuring by hand: each answer starts `delayMs` late
 * and its body comes at `bytesPerMs` at most (0: as fast as it can).
 */
export interface BucketDistance {
  delayMs: number;
  bytesPerMs: number;
}

/** Answers paced as `distance` says: the head after the delay, then each chunk when its bytes are due. */
function paced(
  answer: IncomingMessage,
  outgoing: ServerResponse,
  distance: BucketDistance,
  count: (n: number) => void,
) {
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
    count(chunk.length);
    due += chunk.length;
    const when = began + (distance.bytesPerMs > 0 ? due / distance.bytesPerMs : 0);
    queue = queue.then(() => at(when)).then(() => void outgoing.write(chunk));
  });
  answer.on('end', () => {
    queue = queue.then(() => void outgoing.end());
  });
}

export async function startCountingProxy(
  target: string,
  distance: BucketDistance = { delayMs: 0, bytesPerMs: 0 },
): Promise<CountingProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const totals: StorageCounts = { requests: 0, bytes: 0 };
  const server = createServer((incoming, outgoing) => {
    totals.requests += 1;
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
        agent,
      },
      (answer) => {
        if (distance.delayMs > 0 || distance.bytesPerMs > 0) {
          paced(answer, outgoing, distance, (n) => {
            totals.bytes += n;
          });
          return;
        }
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (chunk: Buffer) => {
          totals.bytes += chunk.length;
        });
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...totals }),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
