import { type Logger, pino } from 'pino';
import type { Config } from '../config/config.js';
import { SECRET_PARAMETERS } from './error-table.js';

/**
 * Keeps credentials out of the logs. API keys and transaction tokens travel in query strings
 * (the spec's choice), so every URL is rewritten before it is logged: secret parameters by name
 * (however their name is percent-encoded), and anything shaped like a key or a token wherever
 * it appears (a client that puts a key in the path, or under another parameter name).
 */

const REDACTED = '[REDACTED]';
/** The key id part stays: it is public and is what support needs to find the key. */
const API_KEY_SHAPE = /nadir_([0-9a-f]{12})_[A-Za-z0-9_-]{43}/g;
const TOKEN_SHAPE = /\bt1\.([A-Za-z0-9_-]{1,16})\.[A-Za-z0-9_-]{16,}/g;

function decodeQueryName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

export function redactSecrets(text: string): string {
  return text.replace(API_KEY_SHAPE, `nadir_$1_${REDACTED}`).replace(TOKEN_SHAPE, `t1.$1.${REDACTED}`);
}

/** `/x?apikey=abc&point=1,2` -> `/x?apikey=[REDACTED]&point=1,2`. */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return redactSecrets(url);
  const pairs = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return SECRET_PARAMETERS.has(decodeQueryName(name).toLowerCase()) ? `${name}=${REDACTED}` : pair;
    });
  return redactSecrets(`${url.slice(0, queryStart)}?${pairs.join('&')}`);
}

export interface LogDestination {
  write(line: string): void;
}

/**
 * The process's JSON logger (made once, by the composition root; fastify logs through it too).
 * Every line names the server that wrote it (`server`), for a log gathered from several.
 * Requests are logged by our own one-line access log (hooks), so the request serializer only
 * matters for fastify's internal lines: it too never sees headers or a raw URL. `redact` is the
 * second belt for any header object that reaches a log line.
 */
export function createLogger(level: Config['logLevel'], server: string, stream?: LogDestination): Logger {
  const options = {
    level,
    base: { pid: process.pid, server },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'request.headers.authorization'],
      censor: REDACTED,
    },
    serializers: {
      req: (request: { method?: string; url?: string }) => ({
        method: request.method,
        url: request.url === undefined ? undefined : redactUrl(request.url),
      }),
      err: (error: Error & { code?: unknown }) => ({
        type: error.name,
        message: redactSecrets(String(error.message)),
        code: error.code,
        stack: redactSecrets(error.stack ?? ''),
      }),
    },
  };
  return stream ? pino(options, stream) : pino(options);
}
