/**
 * An HTTP proxy in front of the S3 server that counts what nadir fetches from storage: requests and
 * response body bytes. Headers go through unchanged, Host included, so S3 request signatures made
 * for the proxy's address still verify at the server behind it.
 */
import { Agent, createServer, request } from 'node:http';
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

export async function startCountingProxy(target: string): Promise<CountingProxy> {
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
