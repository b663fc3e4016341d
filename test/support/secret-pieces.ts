/**
 * Finding an API key or a transaction token, or a 12-character piece of one, however it was
 * encoded, in a log line or a header. What counts as a leak of a secret S: any 12 consecutive
 * characters of S (so S itself, the key minus its last character, the secret part alone, the
 * token body alone...) found in
 * - the text as it is, or as JSON-unescaped strings (a log line is JSON);
 * - the text percent-decoded, once and twice (`nadir%5F...`, `%256E...`), leniently;
 * - any run of base64 / base64url characters in those texts decoded as base64, at each of its four
 *   alignments (base64 of a key, of a piece of one, from any offset).
 */
export const PIECE = 12;

const KEY_SHAPE = /nadir_[0-9a-f]{12}_[A-Za-z0-9_-]{12,}/;
const TOKEN_SHAPE = /t1\.[A-Za-z0-9_-]{1,16}\.[A-Za-z0-9_-]{24,}/;
const KEY_ANYWHERE = /nadir_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g;
const TOKEN_ANYWHERE = /t1\.[A-Za-z0-9_-]{1,16}\.[A-Za-z0-9_-]{40,}/g;
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;

/** Every 12-character piece of some secrets, for looking up windows of a text. */
export class SecretPieces {
  readonly #pieces = new Map<string, string>();

  add(secret: string, label = 'secret'): void {
    for (let i = 0; i + PIECE <= secret.length; i++) {
      const piece = secret.slice(i, i + PIECE);
      if (!this.#pieces.has(piece)) this.#pieces.set(piece, `${label}[${i}..${i + PIECE})`);
    }
  }

  get size(): number {
    return this.#pieces.size;
  }

  /** What of the secrets `text` holds, in any of the encodings above; empty when nothing. */
  findIn(text: string): string[] {
    const found = new Set<string>();
    for (const form of forms(text)) {
      for (let i = 0; i + PIECE <= form.length; i++) {
        const label = this.#pieces.get(form.slice(i, i + PIECE));
        if (label) found.add(label);
      }
    }
    return [...found];
  }
}

/** The text, its JSON strings, percent-decoded forms, and base64 decodings of runs in all of them. */
function forms(text: string): string[] {
  const plain = [text, ...jsonStrings(text)];
  const decoded: string[] = [];
  for (const form of plain) {
    const once = percentDecode(form);
    decoded.push(once, percentDecode(once));
  }
  const all = [...plain, ...decoded];
  const base64: string[] = [];
  for (const form of all) {
    for (const [run] of form.matchAll(BASE64_RUN)) {
      const bare = run.replace(/=+$/, '');
      for (let offset = 0; offset < 4; offset++) {
        // Node's base64 decoder takes the URL-safe alphabet too.
        base64.push(Buffer.from(bare.slice(offset), 'base64').toString('latin1'));
      }
    }
  }
  return [...all, ...base64];
}

function jsonStrings(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const strings: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') strings.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [name, inner] of Object.entries(value)) {
        strings.push(name);
        walk(inner);
      }
    }
  };
  walk(parsed);
  return strings;
}

/** `%XX` (either case) decoded wherever it is valid, `+` as is; never throws. */
function percentDecode(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** Whole keys and tokens by their shapes (for secrets the process did not see issued). */
export function secretShapesIn(text: string): string[] {
  const found: string[] = [];
  for (const form of forms(text)) {
    if (KEY_SHAPE.test(form)) found.push('something shaped like an API key');
    if (TOKEN_SHAPE.test(form)) found.push('something shaped like a transaction token');
  }
  return [...new Set(found)];
}

/** Every whole key and token written out in some text (a command's output, a response body). */
export function wholeSecretsIn(text: string): string[] {
  return [...text.matchAll(KEY_ANYWHERE), ...text.matchAll(TOKEN_ANYWHERE)].map(([secret]) => secret);
}
