/**
 * A scripted fetch for the client's unit tests: each request is recorded and answered by the
 * handler, so a test states exactly what the server says, and a sleep that records waits
 * instead of waiting (a test never waits for real).
 */
export interface Recorded {
  url: URL;
  headers: Record<string, string>;
}

export type Handler = (url: URL, call: number) => Response | Promise<Response>;

export function fakeFetch(handler: Handler): { fetch: typeof fetch; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    calls.push({ url, headers: { ...(init?.headers as Record<string, string>) } });
    if (init?.signal?.aborted) throw init.signal.reason;
    return handler(url, calls.length);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function apiError(
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return json(status, { error: `${code} happened`, code, ...extra }, headers);
}

/** A sleep that records each wait and advances a fake clock by it, without waiting. */
export function fakeTime(start = Date.UTC(2026, 10, 26, 12)) {
  let now = start;
  const waits: number[] = [];
  return {
    waits,
    clock: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    sleep: async (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) throw signal.reason;
      waits.push(ms);
      now += ms;
    },
  };
}

export interface SurveyStub {
  id: string;
  captureDate: string;
  pixelSizes: Record<string, number>;
}

/** A coverage body: `surveys` paged by the request's limit and offset. */
export function coveragePage(url: URL, surveys: SurveyStub[], token = 't1.k1.token'): Response {
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const offset = Number(url.searchParams.get('offset') ?? 0);
  return json(200, {
    surveys: surveys.slice(offset, offset + limit),
    limit,
    offset,
    total: surveys.length,
    transactionToken: token,
  });
}
